"""The Spark connector's vector top-k shapes side by side in one session (issue
17): jobs per search, wall and the driver JVM's CPU time per query.

A table of VECTORS x DIM float32 vectors in 8 files (one append each, an HNSW
index per file, a column `cat` of 4 values) is searched for its top-10 under
`cat = 'a'` (~25 %) through ``spark.read.format("hyperstream")`` shaped four ways
by options, interleaved over queries and reps (a shared machine's load drifts
over all alike), beside ``SELECT 1`` (Spark's fixed cost: one job) and
``Table.search``:

  before     files-per-task 1, local-scan false, vector-driver-rows 0: a task per
             file, then a task handing over the merged rows (the old shape: 2 jobs)
  per-file   files-per-task 1, vector-driver-rows 0: a task per file, one job
  after      vector-driver-rows 0: min(files, default parallelism) tasks, one job
  driver     the default for a table this small: the driver searches, no job

Every shape's ids must equal the first's for each query. The JVM's CPU comes
from /proc/<pid>/stat (local[2] runs the tasks in the driver JVM).

    python3 bench/bench_spark_topk_shapes.py [--vectors 200000 --dim 128 --queries 8]
    python3 bench/bench_spark_topk_shapes.py --data /tmp/hs-topk   # the table kept
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))

import spark_util  # noqa: E402

SHAPES = [
    ("before: a task per file + a task for the rows",
     {"vector-driver-rows": "0", "files-per-task": "1", "local-scan": "false"}),
    ("a task per file, one job", {"vector-driver-rows": "0", "files-per-task": "1"}),
    ("after: default parallelism's tasks, one job", {"vector-driver-rows": "0"}),
    ("driver search (no job)", {}),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vectors", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--queries", type=int, default=8)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--data", default=None, help="keep the table in DIR between runs")
    a = ap.parse_args()

    import numpy as np
    import pyarrow as pa
    import hyperstreamdb as hdb

    root = tempfile.mkdtemp(prefix="hs_bench_topk_")
    try:
        wh = os.path.abspath(a.data) if a.data else os.path.join(root, "wh")
        wh = os.path.join(wh, f"{a.vectors}x{a.dim}")
        path = os.path.join(wh, "db", "v")
        if not os.path.isfile(os.path.join(wh, "done")):
            shutil.rmtree(wh, ignore_errors=True)
            os.makedirs(os.path.join(wh, "db"))
            t = hdb.Table(path)
            rng = np.random.default_rng(7)
            per = a.vectors // 8
            for f in range(8):
                emb = rng.standard_normal((per, a.dim)).astype(np.float32)
                t.write(pa.table({
                    "id": pa.array(np.arange(f * per, (f + 1) * per), pa.int64()),
                    "cat": pa.array(rng.choice(["a", "b", "c", "d"], per)),
                    "emb": pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()), a.dim)}))
            t.add_index("emb", "hnsw")
            open(os.path.join(wh, "done"), "w").close()
        t = hdb.Table(path)
        spark = spark_util.start_spark(wh, os.path.join(root, "scratch"), c1_only=False)
        try:
            run(spark, t, path, a)
        finally:
            spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(spark, t, path, a):
    import numpy as np

    pid = spark._jvm.ProcessHandle.current().pid()
    tick = os.sysconf("SC_CLK_TCK")

    def cpu():
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / tick

    where = "cat = 'a'"
    names = [n for n, _ in SHAPES] + ["Spark fixed cost: SELECT 1 (one job)",
                                      "Python Table.search"]
    wall = {n: [] for n in names}
    cp = {n: [] for n in names}
    jobs = {}
    rng = np.random.default_rng(5)
    for qi in range(a.queries):
        q = rng.standard_normal(a.dim).astype(np.float32)
        lit = ",".join(repr(float(x)) for x in q)

        def df(extra):
            r = (spark.read.format("hyperstream").option("vector_column", "emb")
                 .option("query_vector", lit).option("k", 10).option("filter", where))
            for key, v in extra.items():
                r = r.option(key, v)
            return r.load(path).select("id")

        calls = [(n, (lambda e=e: df(e).collect())) for n, e in SHAPES]
        calls.append((names[-2], lambda: spark.sql("SELECT 1").collect()))
        ref = None
        for rep in range(a.reps + 1):  # the first rep warms up
            for n, fn in calls:
                c0, t0 = cpu(), time.perf_counter()
                out = fn()
                w, c = time.perf_counter() - t0, cpu() - c0
                if n != names[-2]:
                    ids = [r.id for r in out]
                    assert ref is None or ids == ref, (n, ids, ref)
                    ref = ids
                if rep:
                    wall[n].append(w)
                    cp[n].append(c)
                if qi == 0 and rep == 0:
                    jobs[n] = spark_util.job_count(spark, fn)[0]
            t0 = time.perf_counter()
            t.search("emb", q, k=10, filter=where, columns=["id"])
            if rep:
                wall[names[-1]].append(time.perf_counter() - t0)
    print(f"\n{a.vectors:,} x {a.dim}-d in 8 files (HNSW per file), top-10 of {where}; "
          f"medians over {a.queries} queries x {a.reps} reps\n")
    print("| shape | Spark jobs | wall (s) | wall min (s) | driver JVM CPU (s) |")
    print("|---|---:|---:|---:|---:|")
    for n in names:
        c = f"{statistics.median(cp[n]):.3f}" if cp[n] else ""
        print(f"| {n} | {jobs.get(n, '')} | {statistics.median(wall[n]):.4f} | "
              f"{min(wall[n]):.4f} | {c} |")
    budget = 2 * statistics.median(wall[names[-1]]) + statistics.median(wall[names[-2]])
    for n, _ in SHAPES[2:]:
        print(f"\n{n}: {statistics.median(wall[n]) / budget:.2f} of 2 x Python + SELECT 1 "
              f"(target <= 1)", end="")
    print()


if __name__ == "__main__":
    main()
