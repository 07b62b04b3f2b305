"""SQL UPDATE and MERGE against the same changes through the Python API and
DuckDB, side by side in one run (issue 15 item 6).

    python3 bench/bench_sql_dml.py [--rows 1000000] [--files 4] [--src 100] [--reps 5]

The table: `rows` rows (id int64 with a scalar index, v int32, g text) in
`files` data files. Each rep, on fresh random ids:
  * UPDATE ... SET v = v + 1 WHERE id IN (src ids)  vs  t.update(values_sql=..., filter=same)
  * MERGE INTO t USING src ON t.id = src.id WHEN MATCHED THEN UPDATE ...
    WHEN NOT MATCHED THEN INSERT ...  (half the keys new)  vs  t.upsert(src, on="id")
  * INSERT ... SELECT FROM src ON CONFLICT (id) DO UPDATE (the same keys again)
  * DuckDB's UPDATE / MERGE INTO on its own in-memory copy of the rows
    (no durable commit: a reference for the statement's engine cost only).
Wall-clock medians in ms; each of our statements is one durable commit.
"""
import argparse
import os
import statistics
import tempfile
import time

import duckdb
import numpy as np
import pyarrow as pa

import hyperstreamdb as hdb


def timed(fn):
    t0 = time.perf_counter()
    r = fn()
    return (time.perf_counter() - t0) * 1e3, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--src", type=int, default=100)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="hs_bench_dml_")
    t = hdb.Table(os.path.join(root, "t"))
    n = a.rows
    for p in range(a.files):
        ids = np.arange(p * n // a.files, (p + 1) * n // a.files)
        t.write(pa.table({"id": pa.array(ids), "v": pa.array(ids % 977, pa.int32()),
                          "g": pa.array(np.char.add("g", (ids % 50).astype(str)))}))
    t.add_index("id", progress=False)
    s = hdb.connect(root)
    con = duckdb.connect()
    con.register("d0", t.to_arrow())
    con.execute("CREATE TABLE t AS SELECT * FROM d0")
    rng = np.random.default_rng(1)
    res = {k: [] for k in ["sql UPDATE", "t.update", "duckdb UPDATE", "sql MERGE", "t.upsert",
                           "duckdb MERGE", "sql ON CONFLICT"]}
    for rep in range(a.reps):
        ids = rng.choice(n, a.src, replace=False)
        inl = ", ".join(str(int(i)) for i in ids)
        ms, _ = timed(lambda: s.sql(f"UPDATE t SET v = v + 1 WHERE id IN ({inl})").fetchall())
        res["sql UPDATE"].append(ms)
        ms, _ = timed(lambda: t.update(values_sql={"v": "v + 1"}, filter=f"id IN ({inl})"))
        res["t.update"].append(ms)
        ms, _ = timed(lambda: con.execute(f"UPDATE t SET v = v + 1 WHERE id IN ({inl})"))
        res["duckdb UPDATE"].append(ms)
        # half existing keys, half new
        new = np.arange(n + rep * a.src, n + rep * a.src + a.src // 2)
        keys = np.concatenate([ids[: a.src - len(new)], new])
        src = pa.table({"id": pa.array(keys), "v": pa.array(np.arange(len(keys)), pa.int32()),
                        "g": pa.array(["m"] * len(keys))})
        s.register("src", src)
        con.register("src", src)
        merge = ("MERGE INTO t USING src ON t.id = src.id WHEN MATCHED THEN UPDATE SET v = src.v, "
                 "g = src.g WHEN NOT MATCHED THEN INSERT (id, v, g) VALUES (src.id, src.v, src.g)")
        ms, _ = timed(lambda: s.sql(merge).fetchall())
        res["sql MERGE"].append(ms)
        src2 = src.set_column(1, "v", pa.array(np.arange(len(keys)) + 1, pa.int32()))
        ms, _ = timed(lambda: t.upsert(src2, on="id"))
        res["t.upsert"].append(ms)
        ms, _ = timed(lambda: con.execute(merge))
        res["duckdb MERGE"].append(ms)
        ms, _ = timed(lambda: s.sql("INSERT INTO t SELECT id, v, g FROM src ON CONFLICT (id) DO "
                                    "UPDATE SET v = excluded.v + 1, g = excluded.g").fetchall())
        res["sql ON CONFLICT"].append(ms)
    print(f"{a.rows} rows in {a.files} files, {a.src} source rows, {a.reps} reps "
          "(correctness: tests/python/test_sql_update.py, test_sql_merge.py)")
    for k, v in res.items():
        print(f"  {k:14s} median {statistics.median(v):8.1f} ms")
    med = {k: statistics.median(v) for k, v in res.items()}
    print(f"  sql UPDATE / t.update {med['sql UPDATE'] / med['t.update']:.2f}x, "
          f"sql MERGE / t.upsert {med['sql MERGE'] / med['t.upsert']:.2f}x, "
          f"ON CONFLICT / t.upsert {med['sql ON CONFLICT'] / med['t.upsert']:.2f}x")


if __name__ == "__main__":
    main()
