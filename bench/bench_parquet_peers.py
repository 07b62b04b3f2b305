"""Other writers' Parquet read on one thread: pyarrow against us (issue 13 item 5).

Files are written by pyarrow (zstd, as the issue asks; its other settings default), by DuckDB (its defaults,
`COPY ... TO 'f.parquet'`) and by Spark when pyspark is installed. Each file is read
whole and one column at a time, by pyarrow (`use_threads=False`, `set_cpu_count(1)`)
and by us (`hdb.parquet.read_table`, `HS_THREADS=1`), each read in a fresh subprocess,
the two readers alternating. Each process first reads a tiny file with the same reader
(pyarrow's first read_table call pays ~150-200 ms of lazy imports and set-up that is
not decoding), then times --reads reads of the file. "fresh" is the first read in the
process, "warm" the median of the later ones (wall clock); "fresh CPU" and "warm CPU" are the
same reads' process CPU time (user + system; a shared box's other load disturbs it less than the
wall clock). pyarrow's allocator keeps the memory of the previous read; ours does too
since the large-block cache (src/common/block_cache.c), so warm reads compare decoders,
not page faults. Printed: the median over
--runs processes, and the ratio pyarrow seconds / our seconds (> 1: we are faster).

Shapes:
  mixed    random-permutation int64 id, 1,000-value string, price (float64 rounded to
           0.01), timestamp[us], bool, random strings, small int32 (default 2M rows)
  scalars  issue 4's shape (bench_parquet.py): int64 ids, float64, 1000-value string,
           sorted timestamp, bool, int32 (10M rows in the issue)

    python3 bench/bench_parquet_peers.py --shape mixed --rows 2000000 --runs 5
    python3 bench/bench_parquet_peers.py --shape scalars --rows 10000000 --runs 3
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

DATA = os.environ.get("HS_BENCH_DATA", "/tmp/hs_bench_peers")


def make_table(shape, n):
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(13)
    cats = np.array([f"category-{i:04d}" for i in range(1000)])
    if shape == "mixed":
        alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)
        lens = rng.integers(4, 24, n)
        offs = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(lens, out=offs[1:])
        chars = alphabet[rng.integers(0, len(alphabet), int(offs[-1]))]
        rand = pa.StringArray.from_buffers(n, pa.py_buffer(offs), pa.py_buffer(chars.tobytes()))
        return pa.table({
            "id": pa.array(rng.permutation(n).astype(np.int64)),
            "category": pa.array(cats[rng.integers(0, 1000, n)]),
            "price": pa.array(np.round(rng.random(n) * 1000.0, 2)),
            "ts": pa.array(1_600_000_000_000_000 + rng.integers(0, 10**13, n),
                           pa.int64()).view(pa.timestamp("us")),
            "flag": pa.array(rng.random(n) < 0.3),
            "note": rand,
            "qty": pa.array(rng.integers(0, 100, n).astype(np.int32)),
        })
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "value": pa.array(rng.standard_normal(n)),
        "category": pa.array(cats[rng.integers(0, 1000, n)]),
        "ts": pa.array(1_600_000_000_000_000 + np.sort(rng.integers(0, 10**13, n)),
                       pa.int64()).view(pa.timestamp("us")),
        "flag": pa.array(rng.random(n) < 0.3),
        "qty": pa.array(rng.integers(-(10**6), 10**6, n).astype(np.int32)),
    })


def write_files(shape, n):
    import pyarrow.parquet as pq

    os.makedirs(DATA, exist_ok=True)
    out = {}
    t = None
    p = os.path.join(DATA, f"{shape}_{n}_pyarrow.parquet")
    if not os.path.exists(p):
        t = make_table(shape, n)
        pq.write_table(t, p + ".tmp", compression="zstd")
        os.replace(p + ".tmp", p)
    out["pyarrow"] = p
    tiny = os.path.join(DATA, "warmup.parquet")
    if not os.path.exists(tiny):
        pq.write_table(pq.read_table(p).slice(0, 1000), tiny, compression="zstd")
    try:
        import duckdb
    except ImportError:
        duckdb = None
    if duckdb is not None:
        p = os.path.join(DATA, f"{shape}_{n}_duckdb.parquet")
        if not os.path.exists(p):
            con = duckdb.connect()
            con.execute("SET threads TO 1")  # one row group order, deterministic
            con.execute(f"CREATE TABLE t AS SELECT * FROM read_parquet('{out['pyarrow']}')")
            con.execute(f"COPY t TO '{p}.tmp.parquet'")
            os.replace(p + ".tmp.parquet", p)
        out["duckdb"] = p
    try:
        import pyspark  # noqa: F401
        have_spark = True
    except ImportError:
        have_spark = False
    if have_spark:
        p = os.path.join(DATA, f"{shape}_{n}_spark")
        if not os.path.exists(p):
            from pyspark.sql import SparkSession

            s = SparkSession.builder.master("local[1]").getOrCreate()
            s.read.parquet(out["pyarrow"]).coalesce(1).write.parquet(p)
            s.stop()
        parts = [f for f in os.listdir(p) if f.endswith(".parquet")]
        out["spark"] = os.path.join(p, parts[0])
    return out


def child(lib, path, column, reads):
    os.environ["HS_THREADS"] = "1"
    import pyarrow as pa
    import pyarrow.parquet as pq

    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    cols = None if column == "*" else [column]
    tiny = os.path.join(DATA, "warmup.parquet")
    if lib == "pyarrow":
        pq.read_table(tiny, use_threads=False)

        def read():
            return pq.read_table(path, columns=cols, use_threads=False)
    else:
        import hyperstreamdb as hdb

        hdb.parquet.read_table(tiny)

        def read():
            return hdb.parquet.read_table(path, columns=cols)
    secs, cpu = [], []
    for _ in range(int(reads)):
        t0, c0 = time.perf_counter(), time.process_time()
        t = read()
        secs.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        del t
    print(json.dumps({"seconds": secs, "cpu": cpu}))


def measure(lib, path, column, reads):
    env = dict(os.environ, HS_THREADS="1")
    r = subprocess.run([sys.executable, __file__, "--child", lib, path, column, str(reads)],
                       capture_output=True, text=True, env=env, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=["mixed", "scalars"], default="mixed")
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=5, help="fresh processes per reader")
    ap.add_argument("--reads", type=int, default=4,
                    help="reads per process: the first is 'fresh', the median of the rest 'warm'")
    ap.add_argument("--writers", default="pyarrow,duckdb,spark")
    ap.add_argument("--columns", default="",
                    help="comma-separated columns to time ('*': the whole file); default all")
    ap.add_argument("--child", nargs=4)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    import pyarrow.parquet as pq

    files = write_files(args.shape, args.rows)
    wanted = args.writers.split(",")
    if "spark" in wanted and "spark" not in files:
        print("spark: pyspark is not installed here; no Spark-written file")
    print(f"shape {args.shape}, {args.rows:,} rows, one thread, {args.runs} processes per reader "
          f"(alternating), {args.reads} reads each; ratio = pyarrow s / our s (> 1: we are faster)")
    for writer, path in files.items():
        if writer not in wanted:
            continue
        names = pq.ParquetFile(path).schema_arrow.names
        print(f"\n{writer}: {path} ({os.path.getsize(path) / 1e6:.1f} MB)")
        print(f"  {'column':<10} {'fresh: pyarrow ms':>17} {'ours ms':>8} {'ratio':>6}"
              f"   {'fresh CPU: pyarrow ms':>21} {'ours ms':>8} {'ratio':>6}"
              f"   {'warm: pyarrow ms':>16} {'ours ms':>8} {'ratio':>6}"
              f"   {'warm CPU: pyarrow ms':>20} {'ours ms':>8} {'ratio':>6}")
        cols = ["*"] + names
        if args.columns:
            cols = [c for c in cols if c in args.columns.split(",")]
        for col in cols:
            got = {"pyarrow": [], "hs": []}
            for r in range(args.runs):
                order = ("pyarrow", "hs") if r % 2 == 0 else ("hs", "pyarrow")
                for lib in order:
                    got[lib].append(measure(lib, path, col, args.reads))
            fa = statistics.median(x["seconds"][0] for x in got["pyarrow"])
            fb = statistics.median(x["seconds"][0] for x in got["hs"])
            label = "(whole)" if col == "*" else col
            line = f"  {label:<10} {fa * 1e3:17.1f} {fb * 1e3:8.1f} {fa / fb:5.2f}x"
            ca = statistics.median(x["cpu"][0] for x in got["pyarrow"])
            cb = statistics.median(x["cpu"][0] for x in got["hs"])
            line += f"   {ca * 1e3:21.1f} {cb * 1e3:8.1f} {ca / cb:5.2f}x"
            if args.reads > 1:
                for key, width in (("seconds", 16), ("cpu", 20)):
                    wa = statistics.median(statistics.median(x[key][1:]) for x in got["pyarrow"])
                    wb = statistics.median(statistics.median(x[key][1:]) for x in got["hs"])
                    line += f"   {wa * 1e3:{width}.1f} {wb * 1e3:8.1f} {wa / wb:5.2f}x"
            print(line, flush=True)


if __name__ == "__main__":
    main()
