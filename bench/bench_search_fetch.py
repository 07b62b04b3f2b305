"""Search results returned at the cost of their bytes (issue 13 item 1).

    HS_THREADS=1 python3 bench/bench_search_fetch.py [--n 100000] [--dim 64]
        [--queries 200] [--reps 1] [--dir /tmp/hs_bench_fetch] [--no-lancedb]
        [--lancedb-python PATH]

One data file of n x dim synthetic vectors (bench/vector_data.py synthetic,
cached in bench/data) plus an int64 ``id``, HNSW index (m=16,
ef_construction=100). p50 over the same queries, one thread, of:

- ``VectorIndex.search(q, k=10)``: the raw index, built with the same
  parameters from the same vectors (the peer of the table's own work);
- ``t.search("emb", q, k=10, columns=["id"])``;
- ``t.search("emb", q, k=10)``: all columns, vectors included;
- the k rows' bytes: numpy's gather of the 10 winners' rows from the
  memory-mapped .npy file (``base[ids]``, page cache warm), and one
  ``os.pread`` per row of its dim x 4 bytes from the same file;
- LanceDB ``table.search(q).limit(10).to_arrow()`` with its default index
  (``create_index()``: IVF_PQ), run by bench/.venv-vector's interpreter
  (bash bench/vector_env.sh; or ``--lancedb-python``: any interpreter with
  lancedb, pylance, pyarrow and numpy) in a subprocess of this run on the
  same data, ``LANCE_CPU_THREADS=1 LANCE_IO_THREADS=1``. Its index is built
  first in a subprocess of its own with LanceDB's default threads: with
  those two limits ``create_index()`` stalled (no CPU for minutes, lancedb
  0.40.0), and its build time is not what is measured.

Ratios: all-columns / (VectorIndex.search + k rows' bytes), target <= 1.5;
LanceDB / all-columns, target >= 5.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vector_data  # noqa: E402


REPS = 1  # --reps: passes over the queries per measurement


def p50_us(fn, queries):
    for q in queries[:5]:
        fn(q)
    ts = []
    for _ in range(REPS):
        for q in queries:
            a = time.perf_counter()
            fn(q)
            ts.append(time.perf_counter() - a)
    return statistics.median(ts) * 1e6


def lancedb_part(args):
    import lancedb
    import pyarrow as pa
    base, queries, _, _ = vector_data.load(args.name)
    base = np.ascontiguousarray(base)
    path = os.path.join(args.dir, "lance")
    db = lancedb.connect(path)
    marker = os.path.join(args.dir, ".lance_ready")
    if os.path.exists(marker):
        t = db.open_table("t")
    else:
        emb = pa.FixedSizeListArray.from_arrays(pa.array(base.reshape(-1)), base.shape[1])
        t = db.create_table("t", pa.table({"id": np.arange(len(base), dtype=np.int64),
                                           "emb": emb}), mode="overwrite")
        a = time.perf_counter()
        t.create_index(vector_column_name="emb")
        print(f"lancedb index build {time.perf_counter() - a:.1f} s", file=sys.stderr)
        open(marker, "w").close()
    if args.lancedb_build:
        return
    qs = queries[: args.queries]
    us = p50_us(lambda q: t.search(q, vector_column_name="emb").limit(10).to_arrow(), qs)
    print(json.dumps({"lancedb_us": us}))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dir", default="/tmp/hs_bench_fetch")
    ap.add_argument("--no-lancedb", action="store_true")
    ap.add_argument("--lancedb-python", default=os.path.join(HERE, ".venv-vector", "bin", "python"),
                    help="the interpreter that runs LanceDB's side")
    ap.add_argument("--reps", type=int, default=1, help="passes over the queries per p50")
    ap.add_argument("--lancedb-part", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--lancedb-build", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--name", help=argparse.SUPPRESS)
    args = ap.parse_args()
    global REPS
    REPS = max(1, args.reps)
    if args.lancedb_part:
        return lancedb_part(args)
    import pyarrow as pa
    import hyperstreamdb as hdb
    args.name = vector_data.synthetic_name(args.n, args.dim, 1000, 1)
    if not vector_data.exists(args.name):
        vector_data.make_synthetic(n=args.n, dim=args.dim)
    base, queries, _, _ = vector_data.load(args.name)
    qs = np.ascontiguousarray(queries[: args.queries], dtype=np.float32)
    args.dir = os.path.join(args.dir, args.name)
    path = os.path.join(args.dir, "table")
    marker = os.path.join(args.dir, ".table_ready")
    if not os.path.exists(marker):
        shutil.rmtree(args.dir, ignore_errors=True)
        os.makedirs(args.dir)
        t = hdb.Table(path)
        emb = pa.FixedSizeListArray.from_arrays(pa.array(np.asarray(base).reshape(-1)), args.dim)
        t.write(pa.table({"id": np.arange(len(base), dtype=np.int64), "emb": emb}))
        t.add_index("emb", "hnsw", m=16, ef_construction=100, progress=False)
        t.wait_for_indexes()
        open(marker, "w").close()
    t = hdb.Table(path)
    vi = hdb.VectorIndex.build(np.ascontiguousarray(base), m=16, ef_construction=100,
                               partitions=1)
    res = {}
    res["VectorIndex.search"] = p50_us(lambda q: vi.search(q, k=10), qs)
    res["t.search ids"] = p50_us(lambda q: t.search("emb", q, k=10, columns=["id"]), qs)
    res["t.search all"] = p50_us(lambda q: t.search("emb", q, k=10), qs)
    winners = [t.search("emb", q, k=10, columns=["id"]).column("id").to_numpy() for q in qs]
    it = iter(range(1 << 30))
    res["k rows' bytes (numpy gather)"] = p50_us(
        lambda q: base[winners[next(it) % len(winners)]].copy(), qs)
    npy = vector_data.path(args.name, "base.npy")
    fd = os.open(npy, os.O_RDONLY)
    off0 = os.path.getsize(npy) - base.nbytes
    row = args.dim * 4
    it2 = iter(range(1 << 30))

    def pread_rows(q):
        for i in winners[next(it2) % len(winners)]:
            os.pread(fd, row, off0 + int(i) * row)
    res["k rows' bytes (pread per row)"] = p50_us(pread_rows, qs)
    os.close(fd)
    lance_py = args.lancedb_python
    if not args.no_lancedb and os.path.exists(lance_py):
        part = [lance_py, __file__, "--lancedb-part", "--name", args.name, "--dir", args.dir]
        built = subprocess.run(part + ["--lancedb-build"], capture_output=True, text=True)
        if built.returncode != 0:
            print("LanceDB index build failed:", built.stderr[-2000:], file=sys.stderr)
        env = dict(os.environ, LANCE_CPU_THREADS="1", LANCE_IO_THREADS="1")
        out = subprocess.run([lance_py, __file__, "--lancedb-part", "--name", args.name,
                              "--dir", args.dir, "--queries", str(args.queries)],
                             env=env, capture_output=True, text=True)
        if out.returncode == 0:
            res["LanceDB search().limit(10).to_arrow()"] = json.loads(
                out.stdout.strip().splitlines()[-1])["lancedb_us"]
        else:
            print("LanceDB failed:", out.stderr[-2000:], file=sys.stderr)
    print(f"{args.name}, {len(qs)} queries, HS_THREADS={os.environ.get('HS_THREADS')}")
    for k, v in res.items():
        print(f"  {k:40s} p50 {v:9.1f} us")
    peer = res["VectorIndex.search"] + max(res["k rows' bytes (numpy gather)"],
                                           res["k rows' bytes (pread per row)"])
    print(f"  all / (VectorIndex + k rows' bytes, the larger): {res['t.search all'] / peer:.2f}")
    if "LanceDB search().limit(10).to_arrow()" in res:
        print(f"  LanceDB / all: {res['LanceDB search().limit(10).to_arrow()'] / res['t.search all']:.1f}")


if __name__ == "__main__":
    main()
