"""Ingest with and without scalar indexes (issue 4: "index building adds
<= 20 % to ingest time").

Rows of issue 4's shape (bench_scalar_query.make_data) are appended in
several writes (one data file each) to a fresh table, once unindexed and
once with ``index_all=True`` (every scalar column indexed; each append's
indexes are built in the background from the batches it wrote). Reported
per round: when the last ``write()`` returned, and when
``wait_for_indexes()`` returned (every index registered). Rounds alternate
the two tables; the medians are printed with their ratios.

    python3 bench/bench_ingest.py                      # 10M rows, 8 writes, 3 rounds
    python3 bench/bench_ingest.py --rows 2000000 --rounds 5
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    import hyperstreamdb as hdb
    from bench_scalar_query import make_data

    parts = make_data(a.rows, a.files)
    root = tempfile.mkdtemp(prefix="hs_bench_ingest_")
    res = {"unindexed": [], "index_all": []}
    try:
        for r in range(a.rounds):
            for name in res:
                path = os.path.join(root, f"{name}_{r}")
                t = hdb.Table(path, index_all=name == "index_all")
                t0 = time.perf_counter()
                for p in parts:
                    t.write(p)
                written = time.perf_counter() - t0
                t.wait_for_indexes()
                res[name].append((written, time.perf_counter() - t0))
                print(f"round {r + 1} {name}: writes returned {written:.2f} s, "
                      f"indexes complete {res[name][-1][1]:.2f} s", file=sys.stderr, flush=True)
                shutil.rmtree(path, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(d for _, d in v))
           for k, v in res.items()}
    base = med["unindexed"][0]
    print(f"\n{a.rows:,} rows in {a.files} writes, median of {a.rounds} rounds\n")
    print("| table | writes return (s) | indexes complete (s) | ÷ unindexed ingest |")
    print("|---|---:|---:|---:|")
    for k, (w, d) in med.items():
        print(f"| {k} | {w:.2f} | {d:.2f} | {w / base:.2f}x / {d / base:.2f}x |")


if __name__ == "__main__":
    main()
