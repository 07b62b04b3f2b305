"""Deletes and upserts of one package, for A/B runs of two builds in turn.

bench_row_changes.py runs each engine once per call, a few timed calls
each; on a loaded machine one call's spread is larger than a change to the
commit path. This runs many calls of ours only, so two packages can be
interleaved round by round on the same machine state:

    for r in 1 2 3; do
      for pp in /tmp/pyinst-before /tmp/pyinst-after; do
        PYTHONPATH=$pp python3 bench/bench_commit_ab.py --round $r
      done
    done

The table: bench_row_changes.py's shape (1M rows in 10 files, the five
columns indexed, v2 merge-on-read), built fresh in a temporary folder per
run. Then ``--deletes`` deletes of 0.1 % (``id BETWEEN``, disjoint ranges
that depend on ``--round``, every file touched) and ``--upserts`` upserts of
100K rows by ``id`` (90 % matched), one untimed warm-up each. Prints the
medians of wall and process CPU time (all threads) per call.
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_row_changes as brc  # noqa: E402


def timed(fn, n):
    walls, cpus = [], []
    for i in range(n + 1):
        c0, t0 = time.process_time(), time.perf_counter()
        fn(i)
        if i:
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
    return statistics.median(walls) * 1e3, statistics.median(cpus) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--deletes", type=int, default=40)
    ap.add_argument("--upserts", type=int, default=5)
    ap.add_argument("--round", type=int, default=0, help="picks the delete ranges")
    ap.add_argument("--seed", type=int, default=14)
    args = ap.parse_args()

    import hyperstreamdb as hdb

    root = tempfile.mkdtemp(prefix="hs_bench_ab_")
    try:
        t = hdb.Table(os.path.join(root, "t"))
        for p in brc.make_parts(args.rows, args.files, args.seed):
            t.write(p)
        for c in brc.COLUMNS:
            t.add_index(c, progress=False)
        t.wait_for_indexes()
        k = max(1, args.rows // 1000)
        base = args.round * (args.deletes + 1)
        dw, dc = timed(lambda i: t.delete(f"id BETWEEN {(base + i) * k} AND "
                                          f"{(base + i + 1) * k - 1}"), args.deletes)
        _, ups = brc.change_plan(args.rows, args.upserts, min(100_000, args.rows // 10),
                                 args.seed)
        uw, uc = timed(lambda i: t.upsert(ups[i], on=["id"]), args.upserts)
        load = os.getloadavg()[0]
        print(f"{os.path.dirname(hdb.__file__)} round {args.round} load {load:.1f}: "
              f"delete wall {dw:.2f} ms cpu {dc:.2f} ms; upsert wall {uw:.1f} ms cpu {uc:.1f} ms")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
