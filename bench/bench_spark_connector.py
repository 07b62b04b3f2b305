"""Our Spark connector against Spark's own Iceberg reader, same table, same run
(issue 17's performance section).

Rows of issue 4's shape (bench_scalar_query.make_data: category with 1,000
values, id unique and shuffled across every file, price, ts, flag) are
written by our Python API in FILES appends (one data file each) into Spark's
Hadoop warehouse, with our scalar indexes on every column. One pyspark 3.5.7
session at local[2] (tests/python/spark_util.start_spark: both jars) reads
the folder two ways:

  hyperstream   spark.read.format("hyperstream").load(path)   (our connector)
  iceberg       hs_spark.db.t                                   (Iceberg 1.12's reader)

Queries: selective filters returning every column (``SELECT * ... WHERE``,
collected to Arrow), and a full scan aggregating every column. Each engine's
row count and sum(id) must agree, otherwise the row says MISMATCH. One
warm-up, then REPS timed runs, interleaved (each rep runs the query on both
engines: a shared machine's load drifts over both alike); the median is
reported, and theirs / ours.

Vector top-k (--vectors N --dim D, 8 files, an HNSW index per file): a filtered
top-10 through the connector (options; ``ORDER BY hs.l2_distance ... LIMIT 10``
through the catalog) against ``Table.search`` in this process, with recall@10
against exact search, and Spark's fixed per-query cost (``SELECT 1`` and a
one-row table through the connector) beside it.

    python3 bench/bench_spark_connector.py                   # 2M rows, 8 files
    python3 bench/bench_spark_connector.py --rows 10000000   # the issue's size
    python3 bench/bench_spark_connector.py --rows 10000000 --vectors 0 --data /tmp/hs-bench-spark
                                         # the table written once, kept for later runs
    python3 bench/bench_spark_connector.py --rows 0 --vectors 1000000 --dim 768
    python3 bench/bench_spark_connector.py --rows 0 --vectors 0 --writes 2000000
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
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))

import bench_scalar_query  # noqa: E402
import spark_util  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--vectors", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--queries", type=int, default=10)
    ap.add_argument("--writes", type=int, default=0, help="rows per distributed write (0: none)")
    ap.add_argument("--data", default=None,
                    help="keep the scalar table in DIR between runs (made once per --rows and "
                         "--files; default: a temporary folder, removed)")
    a = ap.parse_args()

    import hyperstreamdb as hdb

    root = tempfile.mkdtemp(prefix="hs_bench_spark_")
    try:
        wh = os.path.join(root, "wh")
        if a.data:  # a kept warehouse <data>/<rows>x<files>: its db/t is reused, the rest cleared
            wh = os.path.join(os.path.abspath(a.data), f"{max(a.rows, 1000)}x{a.files}")
            os.makedirs(os.path.join(wh, "db"), exist_ok=True)
            for name in os.listdir(os.path.join(wh, "db")):
                if name != "t":
                    shutil.rmtree(os.path.join(wh, "db", name))
        path = os.path.join(wh, "db", "t")
        write_s = index_s = 0.0
        if not (a.data and os.path.isfile(os.path.join(wh, "t.done"))):
            shutil.rmtree(path, ignore_errors=True)
            t = hdb.Table(path)
            t0 = time.perf_counter()
            for part in bench_scalar_query.make_data(max(a.rows, 1000), a.files):
                t.write(part)
            write_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            t.index_all()
            index_s = time.perf_counter() - t0
            open(os.path.join(wh, "t.done"), "w").close()
        spark = spark_util.start_spark(wh, os.path.join(root, "scratch"), c1_only=False)
        if a.writes:
            writes(spark, hdb, wh, a)
        if not a.rows:
            if a.vectors:
                vectors(spark, hdb, wh, a)
            spark.stop()
            return
        spark.read.format("hyperstream").load(path).createOrReplaceTempView("hs")
        engines = [("hyperstream", "hs"), ("iceberg", f"{spark_util.CATALOG}.db.t")]
        k = max(1, a.rows // 100_000)
        cases = [
            ("id range (0.001%)", f"SELECT * FROM {{v}} WHERE id BETWEEN 1000 AND {1000 + k - 1}"),
            ("category = (0.1%)", "SELECT * FROM {v} WHERE category = 'cat0007'"),
            ("cat AND price (0.01%)",
             "SELECT * FROM {v} WHERE category = 'cat0003' AND price < 100.0"),
            ("price < (10%)", "SELECT * FROM {v} WHERE price < 100.0"),
            ("full scan, every column",
             "SELECT count(*) AS rows, sum(id) AS id_sum, max(category), sum(price), max(ts), "
             "sum(cast(flag AS int)) FROM {v}"),
        ]
        print(f"{a.rows:,} rows in {a.files} files; write {write_s:.1f} s, index_all "
              f"{index_s:.1f} s; Spark local[2] started in {spark_util.STARTUP_SECONDS:.1f} s; "
              f"median of {a.reps} runs after one warm-up\n")
        print("| query | hyperstream (s) | iceberg (s) | iceberg / hyperstream | rows |")
        print("|---|---:|---:|---:|---:|")
        for label, sql in cases:
            res = {}
            times = {name: [] for name, _ in engines}
            outs = {name: spark_util.spark_arrow(spark, sql.format(v=view))  # warm-up
                    for name, view in engines}
            for _ in range(a.reps):  # interleaved: a shared machine's load drifts over both
                for name, view in engines:
                    t0 = time.perf_counter()
                    outs[name] = spark_util.spark_arrow(spark, sql.format(v=view))
                    times[name].append(time.perf_counter() - t0)
            for name, _ in engines:
                out = outs[name]
                if "rows" in out.column_names:
                    ans = (out.column("rows")[0].as_py(), out.column("id_sum")[0].as_py())
                else:
                    import pyarrow.compute as pc
                    ans = (out.num_rows, pc.sum(out.column("id")).as_py())
                res[name] = (statistics.median(times[name]), ans)
            ours, theirs = res["hyperstream"], res["iceberg"]
            same = ours[1] == theirs[1]
            print(f"| {label} | {ours[0]:.3f} | {theirs[0]:.3f} | {theirs[0] / ours[0]:.2f}x | "
                  f"{ours[1][0]:,}{'' if same else f' MISMATCH (iceberg {theirs[1]})'} |")
        if a.vectors:
            vectors(spark, hdb, wh, a)
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def med(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def writes(spark, hdb, wh, a):
    """Distributed appends of the same DataFrame (2 partitions: local[2]) through our
    connector (a new table each run) and Iceberg's writer (appends to one table)."""
    df = spark.range(a.writes, numPartitions=2).selectExpr(
        "concat('cat', cast(id % 1000 AS string)) AS category", "id",
        "rand(1) * 1000 AS price", "timestamp_micros(1700000000000000 + id) AS ts",
        "id % 10 = 0 AS flag").cache()
    df.count()
    spark.sql(f"CREATE TABLE {spark_util.CATALOG}.db.w_ice (category string, id bigint, "
              "price double, ts timestamp, flag boolean) USING iceberg")
    ours, theirs = [], []
    for i in range(a.reps + 1):
        t0 = time.perf_counter()
        df.write.format("hyperstream").mode("append").save(os.path.join(wh, "db", f"w_hs{i}"))
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        df.writeTo(f"{spark_util.CATALOG}.db.w_ice").append()
        theirs.append(time.perf_counter() - t0)
    assert len(hdb.Table(os.path.join(wh, "db", "w_hs0"))) == a.writes
    o, t = statistics.median(ours[1:]), statistics.median(theirs[1:])
    print(f"\ndistributed append of {a.writes:,} rows (2 tasks), median of {a.reps} after a "
          f"warm-up: hyperstream {o:.3f} s ({a.writes / o / 1e6:.2f}M rows/s), iceberg "
          f"{t:.3f} s ({a.writes / t / 1e6:.2f}M rows/s): {t / o:.2f}x\n")


def vectors(spark, hdb, wh, a):
    import numpy as np
    import pyarrow as pa

    path = os.path.join(wh, "db", "v")
    t = hdb.Table(path)
    rng = np.random.default_rng(7)
    per = a.vectors // 8
    t0 = time.perf_counter()
    for f in range(8):
        emb = rng.standard_normal((per, a.dim)).astype(np.float32)
        t.write(pa.table({
            "id": pa.array(np.arange(f * per, (f + 1) * per), pa.int64()),
            "cat": pa.array(rng.choice(["a", "b", "c", "d"], per)),
            "emb": pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()), a.dim)}))
    write_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    t.add_index("emb", "hnsw")
    index_s = time.perf_counter() - t0
    tiny = os.path.join(wh, "db", "tiny")
    hdb.Table(tiny).write(pa.table({"id": pa.array([1], pa.int64())}))
    where = "cat = 'a'"
    qs = rng.standard_normal((a.queries, a.dim)).astype(np.float32)
    py_t, sp_t, sql_t, rec, task_t, dist_t = [], [], [], [], [], []
    jobs = {}
    for q in qs:
        lit = ",".join(repr(float(x)) for x in q)
        d, py = med(lambda: t.search("emb", q, k=10, filter=where, columns=["id"]), 3)
        py_t.append(d)
        exact = t.search("emb", q, k=10, filter=where, columns=["id"], exact=True)
        def opts(**extra):  # a fresh reader each time (option() changes the reader)
            r = (spark.read.format("hyperstream").option("vector_column", "emb")
                 .option("query_vector", lit).option("k", 10).option("filter", where))
            for key, v in extra.items():
                r = r.option(key, v)
            return r.load(path).select("id")

        d, sp = med(lambda: opts().collect(), 3)
        sp_t.append(d)
        d, _ = med(lambda: opts(**{"local-scan": "false"}).collect(), 3)
        task_t.append(d)
        dist = {"vector-driver-rows": "0"}  # the distributed path
        d, dsp = med(lambda: opts(**dist).collect(), 3)
        dist_t.append(d)
        sql = (f"SELECT id FROM hs.db.v WHERE {where} ORDER BY "
               f"hs.l2_distance(emb, array({lit})) LIMIT 10")
        d, sq = med(lambda: spark.sql(sql).collect(), 3)
        sql_t.append(d)
        if not jobs:  # Spark jobs per search, from Spark's status tracker
            jc = spark_util.job_count
            jobs["options"] = jc(spark, lambda: opts().collect())[0]
            jobs["distributed"] = jc(spark, lambda: opts(**dist).collect())[0]
            jobs["sql"] = jc(spark, lambda: spark.sql(sql).collect())[0]
        ids = [r.id for r in sp]
        assert [r.id for r in dsp] == ids, ([r.id for r in dsp], ids)
        assert ids == py.column("id").to_pylist(), (ids, py.column("id").to_pylist())
        assert sorted(r.id for r in sq) == sorted(ids)
        rec.append(len(set(ids) & set(exact.column("id").to_pylist())) / 10)
    fixed1, _ = med(lambda: spark.sql("SELECT 1").collect(), 5)
    fixed2, _ = med(lambda: spark.read.format("hyperstream").load(tiny).collect(), 5)
    # Spark's own cost of the SQL text's query vector (parse, analysis, folding of
    # a D-element array literal), which the SQL path pays before any search.
    fixed3, _ = med(lambda: spark.sql(f"SELECT size(array({lit}))").collect(), 5)
    pm, sm, qm = statistics.median(py_t), statistics.median(sp_t), statistics.median(sql_t)
    print(f"\n{a.vectors:,} x {a.dim}-d vectors in 8 files (write {write_s:.1f} s, HNSW "
          f"{index_s:.1f} s); filtered top-10 ({where}, ~25 %), median over {a.queries} "
          f"queries of medians of 3; recall@10 vs exact {statistics.mean(rec):.3f}\n")
    print("| path | latency (s) |")
    print("|---|---:|")
    print(f"| Python Table.search | {pm:.4f} |")
    print(f"| Spark connector, options | {sm:.4f} |")
    print(f"| Spark connector, options, local-scan false (the k rows through one task) | "
          f"{statistics.median(task_t):.4f} |")
    print(f"| Spark connector, options, distributed (vector-driver-rows 0) | "
          f"{statistics.median(dist_t):.4f} |")
    print(f"| Spark SQL ORDER BY hs.l2_distance LIMIT 10 | {qm:.4f} |")
    print(f"| Spark fixed cost: SELECT 1 | {fixed1:.4f} |")
    print(f"| Spark fixed cost: 1-row table through the connector | {fixed2:.4f} |")
    print(f"| Spark fixed cost: the {a.dim}-element query vector literal alone, "
          f"SELECT size(array(...)) | {fixed3:.4f} |")
    print(f"\nconnector / (2 x Python + fixed cost of a connector scan) = "
          f"{sm / (2 * pm + fixed2):.2f} (target <= 1); distributed: "
          f"{statistics.median(dist_t) / (2 * pm + fixed2):.2f}; SQL / (2 x Python + the "
          f"literal's cost): {qm / (2 * pm + fixed3):.2f}")
    print(f"Spark jobs per search (status tracker): {jobs}")


if __name__ == "__main__":
    main()
