"""SQL's index targets side by side with DuckDB (issue 15's performance section,
the parts other than TPC-H).

Three queries, each through our SQL (``hdb.connect(root).sql``), through our
Python API where the same question has one, and through DuckDB over the same
Parquet data files (``read_parquet``), in one run on the same data:

  filter   ``SELECT * FROM t WHERE category = 'cat0007'`` (0.1 % of rows) on
           issue 4's shape (bench_scalar_query.make_data) with a bitmap index
           on category and one on id; ours also ``t.to_arrow(filter=)``.
           Target: >= 20x DuckDB.
  join     an index nested-loop join: 1,000 rows of a 100,000-row outer
           relation (``o.g < 10``) joined on ``t.id = o.k`` to the whole
           table; DuckDB hash-joins the same relations. Target: >= 10x
           DuckDB. EXPLAIN must show IndexNestedLoopJoin, else MISMATCH.
  knn      ``SELECT id FROM v WHERE category = 'c007' ORDER BY emb <-> $1
           LIMIT 10`` (a 1 % filter) on a vector table with an HNSW index;
           ours also ``v.search(..., filter=, columns=["id"])``; DuckDB
           brute force ``array_distance`` over the Parquet files. Targets:
           SQL within 10 % of the Python API, >= 10x DuckDB, recall@10 >=
           0.95 against numpy's exact answer.

Every answer is compared with DuckDB's (rows and sum of ids; kNN by recall);
a differing answer prints MISMATCH. Latency: one warm-up, then REPS timed
runs, p50 (median) and p90. One thread each: ``HS_THREADS=1`` for ours is set
by this script before import, DuckDB ``SET threads=1``; ``--threads 0`` leaves
both at their defaults.

    python3 bench/bench_sql_targets.py                        # 2M rows, 100K x 128
    python3 bench/bench_sql_targets.py --rows 10000000 --vec-rows 1000000 --dim 768
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def data_files(table_uri):
    d = os.path.join(table_uri, "data")
    out = []
    for base, _, files in os.walk(d):
        out += [os.path.join(base, f) for f in files if f.endswith(".parquet")]
    return sorted(out)


def sig(tbl):
    import pyarrow.compute as pc

    return (tbl.num_rows, int(pc.sum(tbl["id"]).as_py() or 0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--vec-rows", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--queries", type=int, default=20, help="kNN query vectors")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1, help="0: each engine's default")
    ap.add_argument("--parts", default="filter,join,knn")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if a.threads:
        os.environ["HS_THREADS"] = str(a.threads)
    parts = a.parts.split(",")

    import duckdb
    import numpy as np
    import pyarrow as pa

    import hyperstreamdb as hdb
    from bench_scalar_query import make_data, pct, timed  # the same rows, nearest-rank p, timing

    con = duckdb.connect()
    if a.threads:
        con.execute(f"SET threads={a.threads}")
    root = tempfile.mkdtemp(prefix="hs_bench_sqlt_")
    rows_out = []  # (part, engine, p50, p90, note)
    try:
        sess = hdb.connect(root)
        if "filter" in parts or "join" in parts:
            t = hdb.Table(os.path.join(root, "t"))
            for p in make_data(a.rows, a.files):
                t.write(p)
            t.add_index("category", progress=False)
            t.add_index("id", progress=False)
            t.wait_for_indexes()
            flist = "[" + ", ".join(f"'{p}'" for p in data_files(t.uri)) + "]"
            con.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet({flist})")
            sess = hdb.connect(root)
        if "filter" in parts:
            q = "SELECT * FROM t WHERE category = 'cat0007'"
            dts, dres = timed(lambda: con.sql(q).to_arrow_table(), a.reps)
            sts, sres = timed(lambda: sess.sql(q).to_arrow(), a.reps)
            ats, ares = timed(lambda: t.to_arrow(filter="category = 'cat0007'"), a.reps)
            want = sig(dres)
            for eng, ts, res in (("duckdb", dts, dres), ("ours SQL", sts, sres),
                                 ("ours to_arrow", ats, ares)):
                ok = "" if sig(res) == want else " MISMATCH"
                rows_out.append(("filter 0.1 %", eng, pct(ts, 50), pct(ts, 90),
                                 f"{res.num_rows} rows{ok}"))
        if "join" in parts:
            rng = np.random.default_rng(5)
            n_o = 100_000
            o = pa.table({"k": pa.array(rng.integers(0, a.rows, n_o), pa.int64()),
                          "g": pa.array(rng.integers(0, 1000, n_o), pa.int32())})
            sess.register("o", o)
            con.register("o", o)
            q = ("SELECT o.k AS id, t.price, t.category FROM o JOIN t ON t.id = o.k "
                 "WHERE o.g < 10")
            plan = "\n".join(sess.sql("EXPLAIN " + q).to_arrow().column(0).to_pylist())
            inl = "IndexNestedLoopJoin" in plan
            dts, dres = timed(lambda: con.sql(q).to_arrow_table(), a.reps)
            sts, sres = timed(lambda: sess.sql(q).to_arrow(), a.reps)
            want = sig(dres)
            rows_out.append(("join 1,000 x all", "duckdb", pct(dts, 50), pct(dts, 90),
                             f"{dres.num_rows} rows (hash join)"))
            ok = "" if sig(sres) == want and inl else " MISMATCH"
            rows_out.append(("join 1,000 x all", "ours SQL", pct(sts, 50), pct(sts, 90),
                             f"{sres.num_rows} rows, "
                             f"{'IndexNestedLoopJoin' if inl else 'NOT an index join'}{ok}"))
        if "knn" in parts:
            rng = np.random.default_rng(7)
            n, d = a.vec_rows, a.dim
            centers = rng.normal(size=(256, d)).astype(np.float32)
            x = centers[rng.integers(0, 256, n)] + 0.3 * rng.normal(size=(n, d)).astype(np.float32)
            cats = np.array([f"c{i:03d}" for i in range(100)])
            cat = cats[rng.integers(0, 100, n)]
            v = hdb.Table(os.path.join(root, "v"))
            step = max(1, n // 4)
            for lo in range(0, n, step):
                hi = min(n, lo + step)
                emb = pa.FixedSizeListArray.from_arrays(pa.array(x[lo:hi].ravel()), d)
                v.write(pa.table({"id": pa.array(np.arange(lo, hi), pa.int64()),
                                  "category": pa.array(cat[lo:hi]), "emb": emb}))
            v.add_index("category", progress=False)
            v.add_index("emb", "hnsw", progress=False)
            v.wait_for_indexes()
            vfiles = "[" + ", ".join(f"'{p}'" for p in data_files(v.uri)) + "]"
            con.execute(f"CREATE VIEW v AS SELECT id, category, emb::FLOAT[{d}] AS emb "
                        f"FROM read_parquet({vfiles})")
            sess = hdb.connect(root)
            queries = x[rng.integers(0, n, a.queries)] + 0.1 * rng.normal(
                size=(a.queries, d)).astype(np.float32)
            mask = cat == "c007"
            ids_c = np.nonzero(mask)[0]
            sql = ("SELECT id FROM v WHERE category = 'c007' ORDER BY emb <-> $1 LIMIT 10")
            duck = (f"SELECT id FROM v WHERE category = 'c007' ORDER BY "
                    f"array_distance(emb, $q::FLOAT[{d}]) LIMIT 10")
            per = {"ours SQL": [], "ours search": [], "duckdb": []}
            rec = {"ours SQL": [], "ours search": [], "duckdb": []}
            plan = "\n".join(sess.sql("EXPLAIN " + sql, [queries[0]]).to_arrow()
                             .column(0).to_pylist())
            for qv in queries:
                dist = ((x[ids_c] - qv) ** 2).sum(1)
                truth = set(ids_c[np.argsort(dist)[:10]].tolist())
                runs = {
                    "ours SQL": lambda: sess.sql(sql, [qv]).to_arrow(),
                    "ours search": lambda: v.search("emb", qv, k=10, filter="category = 'c007'",
                                                    columns=["id"]),
                    "duckdb": lambda: con.execute(duck, {"q": qv.tolist()}).to_arrow_table(),
                }
                for eng, fn in runs.items():
                    ts, res = timed(fn, max(1, a.reps // 5))
                    if hasattr(res, "read_all"):
                        res = res.read_all()
                    got = set(res.column("id").to_pylist())
                    per[eng] += ts
                    rec[eng].append(len(got & truth) / 10)
            for eng in ("duckdb", "ours search", "ours SQL"):
                r = float(np.mean(rec[eng]))
                note = f"recall@10 {r:.3f}"
                if eng == "ours SQL":
                    note += ", " + ("VectorTopK in EXPLAIN" if "VectorTopK" in plan
                                    else "no VectorTopK in EXPLAIN MISMATCH")
                if r < 0.95:
                    note += " (below 0.95)"
                rows_out.append(("knn 1 % filter", eng, pct(per[eng], 50), pct(per[eng], 90),
                                 note))
    finally:
        if a.keep:
            print(f"tables kept in {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)

    print(f"\nbench_sql_targets: rows {a.rows:,} in {a.files} files, vectors {a.vec_rows:,} x "
          f"{a.dim}, threads {a.threads or 'default'}, reps {a.reps}, duckdb {duckdb.__version__}")
    print("| query | engine | p50 ms | p90 ms | DuckDB p50 / this p50 | note |")
    print("|---|---|---|---|---|---|")
    base = {p: p50 for p, e, p50, _, _ in rows_out if e == "duckdb"}
    for part, eng, p50, p90, note in rows_out:
        ratio = base.get(part, float("nan")) / p50 if p50 > 0 else float("nan")
        print(f"| {part} | {eng} | {p50 * 1e3:.2f} | {p90 * 1e3:.2f} | {ratio:.1f}x | {note} |")
    api = {e: p50 for p, e, p50, _, _ in rows_out if p == "knn 1 % filter"}
    if "ours SQL" in api and "ours search" in api:
        print(f"\nkNN: SQL p50 / Python API p50 = {api['ours SQL'] / api['ours search']:.2f} "
              f"(target <= 1.10)")


if __name__ == "__main__":
    main()
