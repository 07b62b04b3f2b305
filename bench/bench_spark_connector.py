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
warm-up, then REPS timed runs; the median is reported, and ours / theirs.

    python3 bench/bench_spark_connector.py                   # 2M rows, 8 files
    python3 bench/bench_spark_connector.py --rows 10000000   # the issue's size
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
    a = ap.parse_args()

    import hyperstreamdb as hdb

    root = tempfile.mkdtemp(prefix="hs_bench_spark_")
    try:
        wh = os.path.join(root, "wh")
        path = os.path.join(wh, "db", "t")
        t = hdb.Table(path)
        t0 = time.perf_counter()
        for part in bench_scalar_query.make_data(a.rows, a.files):
            t.write(part)
        write_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        t.index_all()
        index_s = time.perf_counter() - t0
        spark = spark_util.start_spark(wh, os.path.join(root, "scratch"))
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
            for name, view in engines:
                q = sql.format(v=view)
                out = spark_util.spark_arrow(spark, q)
                times = []
                for _ in range(a.reps):
                    t0 = time.perf_counter()
                    out = spark_util.spark_arrow(spark, q)
                    times.append(time.perf_counter() - t0)
                if "rows" in out.column_names:
                    ans = (out.column("rows")[0].as_py(), out.column("id_sum")[0].as_py())
                else:
                    import pyarrow.compute as pc
                    ans = (out.num_rows, pc.sum(out.column("id")).as_py())
                res[name] = (statistics.median(times), ans)
            ours, theirs = res["hyperstream"], res["iceberg"]
            same = ours[1] == theirs[1]
            print(f"| {label} | {ours[0]:.3f} | {theirs[0]:.3f} | {theirs[0] / ours[0]:.2f}x | "
                  f"{ours[1][0]:,}{'' if same else f' MISMATCH (iceberg {theirs[1]})'} |")
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
