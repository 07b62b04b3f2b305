"""Scalar-index queries side by side (issue 4's performance section).

Rows of issue 4's shape (category: string with 1,000 values, id: int64
unique and shuffled across all files, price: float64 uniform in [0, 1000),
ts: timestamp[us], flag: bool, 10 % true) are written in several writes
(one data file each) and queried at selectivities from 0.001 % to 50 % by:

  ours-ix     our table with an index on every column (add_index, then
              wait_for_indexes), ``to_arrow(filter=...)``
  ours-scan   a second table of ours with the same rows and no index
  duckdb      ``read_parquet([...])`` over the unindexed table's data files
  lancedb     LanceDB with BITMAP (category, flag) and BTREE (id, price, ts)
              scalar indexes, run in bench/.venv-vector's interpreter
              (bench/vector_env.sh) through ``lance`` ``to_table(filter=)``
  original    the original HyperStreamDB (bench/.venv-original, made by
              bench/original_env.sh) with ``index_all=True`` and
              ``add_index_columns`` on every column, ``to_arrow(filter=)``

Every query returns all five columns; each engine's row count and sum(id)
must equal DuckDB's, otherwise the row says MISMATCH. Latency: one warm-up
run, then REPS timed runs; p50 and p99 (nearest rank, so with 15 runs p99
is the slowest). Engines whose environment is missing are reported as
"not available" rather than skipped silently.

    python3 bench/bench_scalar_query.py                  # 2M rows, 8 files
    python3 bench/bench_scalar_query.py --rows 10000000  # the issue's size
    python3 bench/bench_scalar_query.py --codec uncompressed  # every page raw
    python3 bench/bench_scalar_query.py --page-version 1      # the layout before v2 pages
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ORIGINAL_PY = os.path.join(HERE, ".venv-original", "bin", "python")
LANCE_PY = os.path.join(HERE, ".venv-vector", "bin", "python")
COLUMNS = ["category", "id", "price", "ts", "flag"]
ENGINES = ("ours-ix", "ours-scan", "duckdb", "lancedb", "original")


def queries(rows):
    """(label, nominal selectivity, SQL filter) — the same text for every
    engine (each of them parses this SQL subset)."""
    k = max(1, rows // 100_000)  # 0.001 %
    return [
        ("id range", "0.001%", f"id BETWEEN 1000 AND {1000 + k - 1}"),
        ("cat AND price", "0.01%", "category = 'cat0003' AND price < 100.0"),
        ("category =", "0.1%", "category = 'cat0007'"),
        ("category IN 10", "1%",
         "category IN (" + ", ".join(f"'cat{i:04d}'" for i in range(10, 20)) + ")"),
        ("price <", "10%", "price < 100.0"),
        ("flag AND price", "~45%", "flag = false AND price < 500.0"),
        ("id <", "50%", f"id < {rows // 2}"),
    ]


def make_data(rows, files, seed=11):
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    cats = np.array([f"cat{i:04d}" for i in range(1000)])
    ids = rng.permutation(rows).astype(np.int64)  # every file spans the whole id range
    out = []
    for f in range(files):
        lo, hi = rows * f // files, rows * (f + 1) // files
        n = hi - lo
        out.append(pa.table({
            "category": pa.array(cats[rng.integers(0, 1000, n)]),
            "id": pa.array(ids[lo:hi], pa.int64()),
            "price": pa.array(np.round(rng.uniform(0, 1000, n), 2)),
            "ts": pa.array(1_700_000_000_000_000 + rng.integers(0, 86_400_000_000 * 30, n),
                           pa.timestamp("us")),
            "flag": pa.array(rng.random(n) < 0.1),
        }))
    return out


def pct(xs, q):
    s = sorted(xs)
    i = min(len(s) - 1, max(0, int(-(-q * len(s) // 100)) - 1))  # nearest rank
    return s[i]


def timed(fn, reps):
    """One warm-up, then reps timed calls: (list of seconds, last result)."""
    out = fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return ts, out


def answer(tbl):
    import pyarrow.compute as pc

    return {"rows": tbl.num_rows, "id_sum": int(pc.sum(tbl["id"]).as_py() or 0),
            "columns": tbl.num_columns}


# ------------------------------------------------------------ workers (peer interpreters)


def worker_lance(spec):
    import lance
    import lancedb
    import pyarrow as pa

    parts = [pa.ipc.open_file(p).read_all() for p in spec["parts"]]
    db = lancedb.connect(os.path.join(spec["root"], "lance"))
    t0 = time.perf_counter()
    tbl = db.create_table("t", parts[0])
    for p in parts[1:]:
        tbl.add(p)
    write_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for col, kind in (("category", "BITMAP"), ("flag", "BITMAP"), ("id", "BTREE"),
                      ("price", "BTREE"), ("ts", "BTREE")):
        tbl.create_scalar_index(col, index_type=kind)
    index_s = time.perf_counter() - t0
    ds = lance.dataset(tbl.uri if hasattr(tbl, "uri") else os.path.join(spec["root"], "lance",
                                                                         "t.lance"))
    res = []
    for flt in spec["filters"]:
        ts, out = timed(lambda: ds.to_table(filter=flt, columns=COLUMNS), spec["reps"])
        res.append({"times": ts, **answer(out)})
    return {"write_s": write_s, "index_s": index_s, "queries": res,
            "version": f"lancedb {lancedb.__version__}, lance {lance.__version__}"}


def worker_original(spec):
    import importlib.metadata as md

    import hyperstreamdb as hdb
    import pyarrow as pa

    parts = [pa.ipc.open_file(p).read_all() for p in spec["parts"]]
    uri = os.path.join(spec["root"], "original")
    t0 = time.perf_counter()
    t = hdb.Table(uri, index_all=True)
    t.add_index_columns(COLUMNS)
    for p in parts:
        t.write_arrow(p)
        t.commit()
    write_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    t.wait_for_background_tasks()
    index_s = time.perf_counter() - t0
    t = hdb.Table(uri)
    res = []
    for flt in spec["filters"]:
        ts, out = timed(lambda: t.to_arrow(filter=flt), spec["reps"])
        if not isinstance(out, pa.Table):
            out = pa.Table.from_pandas(out, preserve_index=False)
        res.append({"times": ts, **answer(out)})
    return {"write_s": write_s, "index_s": index_s, "queries": res,
            "version": f"hyperstreamdb {md.version('hyperstreamdb')}"}


def worker(spec_json):
    spec = json.loads(spec_json)
    fn = worker_lance if spec["engine"] == "lancedb" else worker_original
    print("RESULT " + json.dumps(fn(spec)), flush=True)


def run_peer(engine, python, spec, timeout):
    if not os.path.exists(python):
        return {"error": f"not available ({python} missing)"}
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the original has our import name
    cmd = [python, os.path.abspath(__file__), "--worker", json.dumps({**spec, "engine": engine})]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE,
                           env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
    return {"error": f"not available (exit {p.returncode}: {' | '.join(tail)[:300]})"}


# ------------------------------------------------------------ driver


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--page-bytes", type=int, default=0,
                    help="our tables' write.parquet.page-size-bytes (0: our default, 1 MiB)")
    ap.add_argument("--codec", default="",
                    help="our tables' write.parquet.compression-codec (e.g. uncompressed: rows "
                         "are then read in place from the pages); DuckDB reads the same files")
    ap.add_argument("--page-version", default="",
                    help="our tables' hyperstream.parquet.page-version (1: the old layout, v1 "
                         "pages all through the codec; default: v2, raw pages where zstd "
                         "saves < 1/8)")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--timeout", type=int, default=900, help="per peer engine, seconds")
    ap.add_argument("--keep", action="store_true", help="keep the temporary tables")
    ap.add_argument("--lossy", type=int, default=0, metavar="BLOCK_ROWS",
                    help="ours-ix: id, price, ts as lossy btree indexes (min/max + bitmap "
                         "blocks of BLOCK_ROWS rows) instead of the default")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a.worker)
    engines = [e for e in a.engines.split(",") if e]

    import duckdb
    import pyarrow as pa

    import hyperstreamdb as hdb

    qs = queries(a.rows)
    filters = [q[2] for q in qs]
    root = tempfile.mkdtemp(prefix="hs_bench_sq_")
    results, notes = {}, {}
    try:
        parts = make_data(a.rows, a.files)
        paths = []
        for i, p in enumerate(parts):
            paths.append(os.path.join(root, f"part{i}.arrow"))
            with pa.ipc.new_file(paths[-1], p.schema) as w:
                w.write_table(p)
        # ours, unindexed
        props = {}
        if a.page_bytes:
            props["write.parquet.page-size-bytes"] = str(a.page_bytes)
        if a.codec:
            props["write.parquet.compression-codec"] = a.codec
        if a.page_version:
            props["hyperstream.parquet.page-version"] = a.page_version
        props = props or None
        plain = hdb.Table(os.path.join(root, "plain"), properties=props)
        t0 = time.perf_counter()
        for p in parts:
            plain.write(p)
        notes["ours-scan"] = f"write {time.perf_counter() - t0:.2f} s"
        # ours, indexed on every column
        ix = hdb.Table(os.path.join(root, "ix"), properties=props)
        t0 = time.perf_counter()
        for p in parts:
            ix.write(p)
        w_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        for c in COLUMNS:
            if a.lossy and c in ("id", "price", "ts"):  # high-cardinality: lossy SORTED
                ix.add_index(c, "btree", lossy=True, block_rows=a.lossy, progress=False)
            else:
                ix.add_index(c, progress=False)
        ix.wait_for_indexes()
        notes["ours-ix"] = f"write {w_s:.2f} s, index build {time.perf_counter() - t0:.2f} s"
        data_bytes = sum(os.path.getsize(os.path.join(plain.uri, "data", f))
                         for f in os.listdir(os.path.join(plain.uri, "data")))
        notes["ours-scan"] += f", data files {data_bytes / 1e6:.1f} MB"
        data_files = sorted(os.path.join(plain.uri, "data", f)
                            for f in os.listdir(os.path.join(plain.uri, "data"))
                            if f.endswith(".parquet"))
        assert len(data_files) == a.files, data_files
        del parts

        con = duckdb.connect()
        flist = "[" + ", ".join(f"'{p}'" for p in data_files) + "]"
        select = f"SELECT {', '.join(COLUMNS)} FROM read_parquet({flist}) WHERE "

        def run_duck(flt):
            return con.sql(select + flt).to_arrow_table()

        def local(engine):
            out = []
            for flt in filters:
                if engine == "duckdb":
                    fn = lambda: run_duck(flt)  # noqa: E731
                else:
                    t = ix if engine == "ours-ix" else plain
                    fn = lambda: t.to_arrow(filter=flt)  # noqa: E731
                ts, tbl = timed(fn, a.reps)
                if hasattr(tbl, "read_all"):
                    tbl = tbl.read_all()
                out.append({"times": ts, **answer(tbl)})
            return {"queries": out}

        results["duckdb"] = local("duckdb")  # the reference answers
        notes["duckdb"] = f"duckdb {duckdb.__version__}"
        for e in engines:
            if e in ("ours-ix", "ours-scan"):
                results[e] = local(e)
            elif e in ("lancedb", "original"):
                spec = {"parts": paths, "root": root, "filters": filters, "reps": a.reps}
                r = run_peer(e, LANCE_PY if e == "lancedb" else ORIGINAL_PY, spec, a.timeout)
                results[e] = r
                if "error" in r:
                    notes[e] = r["error"]
                else:
                    notes[e] = (f"{r['version']}: write {r['write_s']:.2f} s, "
                                f"index build {r['index_s']:.2f} s")
            print(f"  {e}: done ({notes.get(e, '')})", file=sys.stderr, flush=True)
    finally:
        if a.keep:
            print(f"tables kept in {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    report(a, qs, engines, results, notes)


def report(a, qs, engines, results, notes):
    shown = [e for e in ENGINES if e in engines or e == "duckdb"]
    pages = f", pages of {a.page_bytes} B" if a.page_bytes else ""
    pages += f", codec {a.codec}" if a.codec else ""
    pages += f", page version {a.page_version}" if a.page_version else ""
    print(f"\n{a.rows:,} rows in {a.files} files{pages}, {a.reps} timed runs per query "
          f"(after one warm-up), all 5 columns returned; p50 / p99 in ms\n")
    print("| query | sel. | rows | " + " | ".join(shown) + " |")
    print("|---|---|---:|" + "---:|" * len(shown))
    ref = results["duckdb"]["queries"]
    for i, (label, sel, flt) in enumerate(qs):
        cells = []
        for e in shown:
            r = results.get(e, {})
            if "queries" not in r:
                cells.append("n/a")
                continue
            q = r["queries"][i]
            ok = q["rows"] == ref[i]["rows"] and q["id_sum"] == ref[i]["id_sum"]
            cell = f"{1e3 * pct(q['times'], 50):.1f} / {1e3 * pct(q['times'], 99):.1f}"
            cells.append(cell if ok else f"MISMATCH ({q['rows']} rows) {cell}")
        print(f"| {label} `{flt[:40]}` | {sel} | {ref[i]['rows']:,} | " + " | ".join(cells) + " |")
    print("\nRatios of p50 (how many times faster ours-ix is; > 1 means ours-ix is faster):\n")
    others = [e for e in shown if e != "ours-ix" and "queries" in results.get(e, {})]
    if "queries" in results.get("ours-ix", {}):
        print("| query | sel. | " + " | ".join(f"{e} / ours-ix" for e in others) + " |")
        print("|---|---|" + "---:|" * len(others))
        for i, (label, sel, _) in enumerate(qs):
            mine = pct(results["ours-ix"]["queries"][i]["times"], 50)
            cells = [f"{pct(results[e]['queries'][i]['times'], 50) / mine:.1f}x" for e in others]
            print(f"| {label} | {sel} | " + " | ".join(cells) + " |")
    print()
    for e in shown:
        print(f"- {e}: {notes.get(e, 'not run')}")


if __name__ == "__main__":
    main()
