"""The fixed cost of a small SQL statement against the Python API doing the
same work (issue 15: SQL kNN within 10 % of the Python API).

One table of ROWS x DIM float32 vectors with an HNSW index on ``emb`` and a
scalar index on ``category`` (100 values, so ``category = 'c007'`` keeps 1 %).
Timed, one thread (``HS_THREADS=1`` set before import), CPU time per
statement (``time.process_time``), in ROUNDS rounds of STMTS statements,
the engines interleaved round by round, median of the rounds:

  sql          ``s.sql("SELECT id FROM v WHERE category = 'c007' ORDER BY
               emb <-> $1 LIMIT 10", [q]).to_arrow()``, a new q each time
  sql no-cache the same through a session made with HS_SQL_PLAN_CACHE=0
               (parse tree cached, plan bound and optimized each time)
  search       ``v.search("emb", q, k=10, filter="category = 'c007'",
               columns=["id"])``
  search +emb  the same reading ``columns=["id", "emb"]``: what SQL's
               VectorTopK read before it took the search's own distances
               when the statement reads neither the vector nor the l2
               distance (src/sql/README.md, Optimizer, 6)
  select 1     ``s.sql("SELECT 1").to_arrow()`` (the floor of a statement)

Every SQL answer is checked against search's (same ids), else MISMATCH.

    python3 bench/bench_sql_fixed.py [--rows 20000 --dim 32 --rounds 6 --stmts 500]
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--stmts", type=int, default=500)
    a = ap.parse_args()
    os.environ.setdefault("HS_THREADS", "1")
    import numpy as np
    import pyarrow as pa

    import hyperstreamdb as hdb

    root = tempfile.mkdtemp(prefix="bench_sql_fixed_")
    try:
        rng = np.random.default_rng(7)
        n, d = a.rows, a.dim
        x = rng.normal(size=(n, d)).astype(np.float32)
        cat = np.array([f"c{i:03d}" for i in range(100)])[rng.integers(0, 100, n)]
        v = hdb.Table(os.path.join(root, "v"))
        v.write(pa.table({"id": pa.array(np.arange(n), pa.int64()), "category": pa.array(cat),
                          "emb": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), d)}))
        v.add_index("category", progress=False)
        v.add_index("emb", "hnsw", progress=False)
        v.wait_for_indexes()
        s = hdb.connect(root)
        os.environ["HS_SQL_PLAN_CACHE"] = "0"
        s_nc = hdb.connect(root)
        del os.environ["HS_SQL_PLAN_CACHE"]
        sql = "SELECT id FROM v WHERE category = 'c007' ORDER BY emb <-> $1 LIMIT 10"
        qs = x[rng.integers(0, n, a.stmts)] + 0.1 * rng.normal(size=(a.stmts, d)).astype(
            np.float32)
        runs = {
            "sql": lambda q: s.sql(sql, [q]).to_arrow(),
            "sql no-cache": lambda q: s_nc.sql(sql, [q]).to_arrow(),
            "search": lambda q: v.search("emb", q, k=10, filter="category = 'c007'",
                                         columns=["id"]),
            "search +emb": lambda q: v.search("emb", q, k=10, filter="category = 'c007'",
                                              columns=["id", "emb"]),
            "select 1": lambda q: s.sql("SELECT 1").to_arrow(),
        }
        mismatch = set()
        for q in qs[:20]:  # warm-up, and the answers compared
            want = sorted(runs["search"](q).column("id").to_pylist())
            for eng in ("sql", "sql no-cache"):
                if sorted(runs[eng](q).column("id").to_pylist()) != want:
                    mismatch.add(eng)
        per = {e: [] for e in runs}
        for _ in range(a.rounds):
            for eng, fn in runs.items():
                t0 = time.process_time()
                for q in qs:
                    fn(q)
                per[eng].append((time.process_time() - t0) / len(qs))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    med = {e: statistics.median(v) for e, v in per.items()}
    print(f"\nbench_sql_fixed: {a.rows:,} x {a.dim}, HNSW + scalar index, one thread, "
          f"{a.rounds} rounds x {a.stmts} statements, CPU us per statement (median of rounds)")
    print("| statement | us | / search | note |")
    print("|---|---|---|---|")
    for eng, us in med.items():
        note = "MISMATCH" if eng in mismatch else ""
        print(f"| {eng} | {us * 1e6:.1f} | {us / med['search']:.2f} | {note} |")


if __name__ == "__main__":
    sys.exit(main())
