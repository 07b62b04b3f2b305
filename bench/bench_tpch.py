#!/usr/bin/env python3
"""TPC-H side by side: our SQL engine over our tables against DuckDB (and
Apache DataFusion when installed) over the same Parquet files.

    python3 bench/bench_tpch.py --sf 1 --reps 3 [--threads 1] [--queries 1,3,6]

Data comes from tpchgen-cli (generated once into --dir). Each query runs
--reps times per engine after one warm-up; the median wall time is kept.
Prints a table with the ratios DuckDB/ours and DataFusion/ours (above 1:
we are faster) and their geometric means. DataFusion (PyPI `datafusion`)
is a benchmark-only package: install it yourself; without it that column
is skipped. HS_THREADS caps our worker pool like --threads caps DuckDB's.
"""
import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
QDIR = os.path.join(HERE, "..", "tests", "python", "tpch")
TABLES = ["lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region"]


def prepare(sf, d):
    import pyarrow as pa
    import pyarrow.parquet as pq

    import hyperstreamdb as hdb

    src = os.path.join(d, f"sf{sf}", "parquet")
    lake = os.path.join(d, f"sf{sf}", "lake")
    if not os.path.exists(os.path.join(src, "lineitem.parquet")):
        os.makedirs(src, exist_ok=True)
        subprocess.run(["tpchgen-cli", "parquet", "-s", str(sf), f"--output-dir={src}"], check=True)
    if not os.path.exists(os.path.join(lake, "region")):
        shutil.rmtree(lake, ignore_errors=True)
        os.makedirs(lake)
        for t in TABLES:
            a = pq.read_table(os.path.join(src, f"{t}.parquet"))
            a = a.cast(pa.schema([pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type)
                                  for f in a.schema]))
            hdb.Table(os.path.join(lake, t)).write_arrow(a)
    return src, lake


def to_arrow(res):
    """A DuckDB result as a pyarrow Table (the method's name changed across versions)."""
    for m in ("to_arrow_table", "fetch_arrow_table", "arrow"):
        if hasattr(res, m):
            return getattr(res, m)()
    raise RuntimeError("this DuckDB has no Arrow result method")


def timed(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sf", default="1")
    ap.add_argument("--dir", default="/tmp/hs_tpch")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="0: all cores")
    ap.add_argument("--queries", default="")
    a = ap.parse_args()
    if a.threads:
        os.environ["HS_THREADS"] = str(a.threads)
    import duckdb

    import hyperstreamdb as hdb

    src, lake = prepare(a.sf, a.dir)
    s = hdb.connect(lake)
    con = duckdb.connect()
    if a.threads:
        con.execute(f"SET threads = {a.threads}")
    for t in TABLES:
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{os.path.join(src, t + '.parquet')}')")
    try:
        import datafusion

        cfg = datafusion.SessionConfig()
        if a.threads:
            cfg = cfg.with_target_partitions(a.threads)
        df = datafusion.SessionContext(cfg)
        for t in TABLES:
            df.register_parquet(t, os.path.join(src, t + ".parquet"))
    except ImportError:
        df = None
    qs = [f"{int(q):02d}" for q in a.queries.split(",")] if a.queries else [f"{i:02d}" for i in range(1, 23)]
    print(f"TPC-H SF {a.sf}, threads {a.threads or 'all'}, median of {a.reps}")
    print(f"{'q':>3} {'ours s':>9} {'duckdb s':>9} {'duck/ours':>9} {'datafusion s':>13} {'df/ours':>8}")
    r_duck, r_df = [], []
    for q in qs:
        sql = open(os.path.join(QDIR, f"q{q}.sql")).read()
        ours = timed(lambda: s.sql(sql).to_arrow(), a.reps)
        duck = timed(lambda: to_arrow(con.execute(sql)), a.reps)
        r_duck.append(duck / ours)
        line = f"{q:>3} {ours:9.3f} {duck:9.3f} {duck / ours:9.2f}"
        if df is not None:
            try:
                dft = timed(lambda: df.sql(sql).to_arrow_table(), a.reps)
                r_df.append(dft / ours)
                line += f" {dft:13.3f} {dft / ours:8.2f}"
            except Exception as e:  # DataFusion rejects some spellings
                line += f" {'error':>13} ({str(e)[:40]})"
        print(line, flush=True)
    gm = lambda v: math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")
    print(f"geometric mean DuckDB/ours {gm(r_duck):.2f} (min {min(r_duck):.2f})"
          + (f", DataFusion/ours {gm(r_df):.2f}" if r_df else ""))


if __name__ == "__main__":
    sys.exit(main())
