"""Our Spark connector (java/spark-hyperstream, issue 17) inside real Spark.

``spark.read.format("hyperstream")`` runs in the suite's one pyspark 3.5.7
session at local[2] (spark_util.py puts the connector's jar beside Iceberg's
runtime). Tables are written by our Python API (several appends, an identity
partition spec, deletes, tags, scalar and HNSW indexes) in Spark's Hadoop
warehouse, so the same folder is also ``hs_spark.db.<t>`` for Spark's own
Iceberg reader. Three readers must agree as multisets of rows on seeded
random filters: our connector, Spark's Iceberg reader and our Python API.

Pushdown is checked from the connector's own counters (HsMetrics: summed
over this JVM's tasks; local[2] runs every task here) and ``EXPLAIN``'s scan
description: the filter reached the C scan, an index answered, few rows were
scanned. A table of many files is read by one task per file. Vector top-k
through the connector equals ``Table.search`` row for row, ties included, on
the driver and distributed over several tasks; the Spark jobs a search runs
are counted from Spark's own status tracker (spark_util.job_count).
Bad input (a missing table, a wrong vector dimension, a type Spark cannot
hold, a filter that does not parse) is an error naming the problem, and the
session keeps working.
"""

import datetime as dt
import os

import numpy as np
import pyarrow as pa
import pytest

from random_filters import combine, float_filter, float_table
from spark_util import CATALOG, diff_tables, job_count, spark_arrow

DIM = 8
T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


def gen(rng, ids, tag=""):
    n = len(ids)
    return pa.table({
        "id": pa.array(list(ids), pa.int64()),
        "name": pa.array([None if rng.random() < 0.1 else f"n{int(rng.integers(0, 40))}{tag}"
                          for _ in range(n)], pa.string()),
        "score": pa.array([None if rng.random() < 0.1 else float(rng.integers(-800, 800)) / 8
                           for _ in range(n)], pa.float64()),
        "cat": pa.array([str(rng.choice(["a", "b", "c"])) for _ in range(n)], pa.string()),
        "qty": pa.array([int(rng.integers(0, 100)) for _ in range(n)], pa.int32()),
        "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(rng.integers(0, 20)))
                       for _ in range(n)], pa.date32()),
        "ts": pa.array([T0 + dt.timedelta(seconds=int(rng.integers(0, 20 * 86400)))
                        for _ in range(n)], pa.timestamp("us", tz="UTC")),
        "emb": pa.array([None if rng.random() < 0.05
                         else rng.standard_normal(DIM).astype(np.float32).tolist()
                         for _ in range(n)], pa.list_(pa.float32(), DIM)),
    })


def random_filter(rng):
    """A filter valid in Spark SQL and in our filter language."""
    def atom():
        k = int(rng.integers(0, 9))
        if k == 0:
            return f"id {rng.choice(['=', '<', '>=', '<>'])} {int(rng.integers(0, 1200))}"
        if k == 1:
            lo = int(rng.integers(0, 1000))
            return f"id BETWEEN {lo} AND {lo + int(rng.integers(0, 200))}"
        if k == 2:
            return f"cat {rng.choice(['=', '<>'])} '{rng.choice(['a', 'b', 'c'])}'"
        if k == 3:
            return f"qty IN ({', '.join(str(int(x)) for x in rng.integers(0, 100, 4))})"
        if k == 4:
            return f"name LIKE 'n{int(rng.integers(1, 4))}%'"
        if k == 5:
            return f"score {rng.choice(['<', '>'])} {float(rng.integers(-800, 800)) / 8}"
        if k == 6:
            return f"d >= DATE '2024-01-{int(rng.integers(1, 20)):02d}'"
        if k == 7:
            return f"ts < TIMESTAMP '2024-01-{int(rng.integers(2, 20)):02d} 06:00:00'"
        return f"name IS {rng.choice(['', 'NOT '])}NULL"
    return combine(rng, atom)


def make_table(hdb, path, rng):
    """Five appends (the last three under an identity partition spec on
    cat), two deletes, a tag; returns the table and the snapshot ids."""
    t = hdb.Table(path)
    sids = [t.write(gen(rng, range(0, 300), "a")), t.write(gen(rng, range(300, 500), "b"))]
    t.create_tag("two")
    t.set_partition_spec(["cat"])
    sids.append(t.write(gen(rng, range(500, 800), "c")))
    t.delete("qty < 5")
    sids.append(t.current_snapshot_id)
    sids.append(t.write(gen(rng, range(800, 1000), "d")))
    t.delete("cat = 'b' AND id < 200")
    sids.append(t.current_snapshot_id)
    return t, sids


def jvm(spark):
    return spark.sparkContext._jvm


def metrics(spark):
    return {k: int(v) for k, v in dict(jvm(spark).org.hyperstreamdb.spark.HsMetrics.totals()).items()}


def reset_metrics(spark):
    jvm(spark).org.hyperstreamdb.spark.HsMetrics.reset()


def ours(spark, path, where=None, columns="*", tail="", **options):
    """Rows through our connector (as a temp view, so the SQL text is Spark's)."""
    r = spark.read.format("hyperstream")
    for k, v in options.items():
        r = r.option(k, str(v))
    r.load(path).createOrReplaceTempView("hs_conn")
    return spark_arrow(spark, f"SELECT {columns} FROM hs_conn"
                       + (f" WHERE {where}" if where else "") + tail)


@pytest.fixture(scope="module")
def shared_table(spark, spark_warehouse, hdb):
    """The module's table (written once; scalar indexes on every column)."""
    ident = "db.t_spark_connector"
    path = os.path.join(spark_warehouse, "db", "t_spark_connector")
    spark.sql(f"DROP TABLE IF EXISTS {CATALOG}.{ident}")
    t, sids = make_table(hdb, path, np.random.default_rng(17))
    t.index_all()
    return ident, path, sids


def test_rows_equal_python_and_iceberg_on_random_filters(spark, hdb, shared_table):
    ident, path, _ = shared_table
    t = hdb.Table(path)
    rng = np.random.default_rng(5)
    problems = []
    filters = [None] + [random_filter(rng) for _ in range(10)]
    for where in filters:
        mine = ours(spark, path, where)
        theirs = spark_arrow(spark, f"SELECT * FROM {CATALOG}.{ident}"
                             + (f" WHERE {where}" if where else ""))
        py = t.to_arrow(filter=where)
        for what, p in [("vs Iceberg", diff_tables(mine, theirs)),
                        ("vs Python", diff_tables(mine, py.select(mine.column_names)))]:
            if p is not None:
                problems.append(f"WHERE {where} {what}: {p}")
    # Projection, count(*) and a limit.
    mine = ours(spark, path, "qty > 50", columns="name, id")
    theirs = spark_arrow(spark, f"SELECT name, id FROM {CATALOG}.{ident} WHERE qty > 50")
    problems.append(diff_tables(mine, theirs))
    n = ours(spark, path, "cat = 'a'", columns="count(*) AS n").column("n")[0].as_py()
    problems.append(None if n == len(t.to_arrow(filter="cat = 'a'", columns=["id"]))
                    else f"count(*) {n}")
    lim = ours(spark, path, "cat = 'c'", columns="id", tail=" LIMIT 7")
    live = set(t.to_arrow(filter="cat = 'c'", columns=["id"]).column("id").to_pylist())
    ids = lim.column("id").to_pylist()
    problems.append(None if len(ids) == 7 and set(ids) <= live else f"LIMIT 7 gave {ids}")
    problems = [p for p in problems if p]
    assert not problems, "\n".join(problems)


def test_time_travel_options(spark, hdb, shared_table):
    ident, path, sids = shared_table
    t = hdb.Table(path)
    problems = []
    for sid in sids:
        p = diff_tables(ours(spark, path, **{"snapshot-id": sid}), t.to_arrow(snapshot_id=sid))
        if p:
            problems.append(f"snapshot-id {sid}: {p}")
        p = diff_tables(ours(spark, path, "id < 600", **{"snapshot-id": sid}),
                        spark_arrow(spark, f"SELECT * FROM {CATALOG}.{ident} VERSION AS OF {sid}"
                                    " WHERE id < 600"))
        if p:
            problems.append(f"snapshot-id {sid} vs Iceberg: {p}")
    for h in t.history():
        ms = h.made_current_at_ms
        p = diff_tables(ours(spark, path, **{"as-of-timestamp": ms}),
                        t.to_arrow(snapshot_id=h.snapshot_id))
        if p:
            problems.append(f"as-of-timestamp {ms}: {p}")
    p = diff_tables(ours(spark, path, tag="two"), t.to_arrow(ref="two"))
    if p:
        problems.append(f"tag two: {p}")
    assert not problems, "\n".join(problems)


def test_pushdown_is_real(spark, hdb, shared_table):
    ident, path, _ = shared_table
    t = hdb.Table(path)
    df = spark.read.format("hyperstream").load(path).where("id = 417")
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert '("id" = 417)' in plan, plan
    reset_metrics(spark)
    rows = df.select("id", "cat").collect()
    m = metrics(spark)
    want = t.to_arrow(filter="id = 417", columns=["id"]).num_rows
    assert len(rows) == want == 1, rows
    # The index answered: files were narrowed to their candidate rows, and
    # only those were scanned (the filter columns of the rest never decoded).
    assert m["filesIndexed"] >= 1, m
    assert m["rowsScanned"] <= 10, m
    # Manifest bounds and partition values kept few files; within them the
    # index ruled out nearly every row.
    nfiles = spark.read.format("hyperstream").load(path).rdd.getNumPartitions()
    assert nfiles >= 5 and m["filesRead"] < nfiles, (m, nfiles)
    assert m["rowsEliminated"] > 0, m
    assert m["rowsReturned"] == 1, m
    # The plan carries each file's candidate rows: only the file holding 417
    # is a split (one task), and its task reads the planned rows.
    assert df.rdd.getNumPartitions() == 1, df.rdd.getNumPartitions()
    assert "splits=1" in df._jdf.queryExecution().executedPlan().toString()
    # Files the manifest bounds rule out are not even opened: ids >= 800
    # live in the last append's files only.
    reset_metrics(spark)
    got = spark.read.format("hyperstream").load(path).where("id >= 990").count()
    m = metrics(spark)
    assert got == t.to_arrow(filter="id >= 990", columns=["id"]).num_rows
    assert m["filesRead"] < nfiles and m["tasks"] < nfiles, (m, nfiles)
    # Statistics for Spark's planner come from the plan: live rows (deletes applied).
    st = spark.read.format("hyperstream").load(path)._jdf.queryExecution().optimizedPlan().stats()
    assert int(str(st.rowCount().get())) == len(t), st.toString()
    # A filter Spark cannot hand over (a function) stays with Spark; results agree.
    where = "abs(qty - 50) < 3 AND id < 900"
    plan = spark.read.format("hyperstream").load(path).where(where)._jdf.queryExecution() \
        .executedPlan().toString()
    assert '("id" < 900)' in plan and "abs" not in plan.split("HyperStreamScan")[1], plan
    p = diff_tables(ours(spark, path, where),
                    spark_arrow(spark, f"SELECT * FROM {CATALOG}.{ident} WHERE {where}"))
    assert p is None, p


def test_many_files_split_over_tasks(spark, spark_table, hdb):
    ident, path = spark_table
    rng = np.random.default_rng(3)
    t = hdb.Table(path)
    for i in range(9):
        t.write(gen(rng, range(i * 40, i * 40 + 40), str(i)))
    df = spark.read.format("hyperstream").load(path)
    assert df.rdd.getNumPartitions() == 9
    assert spark.read.format("hyperstream").option("files-per-task", "4").load(path) \
        .rdd.getNumPartitions() == 3
    reset_metrics(spark)
    mine = ours(spark, path)
    m = metrics(spark)
    assert m["tasks"] == 9 and m["filesRead"] == 9, m
    p = diff_tables(mine, spark_arrow(spark, f"SELECT * FROM {CATALOG}.{ident}"))
    assert p is None, p


def test_pushed_equals_unpushed_and_reads_less(spark, spark_table, hdb):
    """Seeded random filters over a table of 8 files with scalar indexes: the
    pushed read (the plan's candidate rows per file, files without any left
    out, tasks packed by work) returns the rows of the unpushed plan (the
    same connector's full read, cached, filtered by Spark), while its
    counters show fewer files, tasks and rows read."""
    ident, path = spark_table
    rng = np.random.default_rng(23)
    t = hdb.Table(path)
    for i in range(8):
        t.write(gen(rng, range(i * 150, i * 150 + 150), str(i % 3)))
    t.delete("qty < 3")
    t.index_all()
    full = spark.read.format("hyperstream").load(path).persist()
    full.createOrReplaceTempView("hs_unpushed")
    reset_metrics(spark)
    assert full.count() == len(t)
    whole = metrics(spark)
    assert whole["tasks"] == 8 and whole["filesRead"] == 8, whole
    stored = 8 * 150  # rows in the data files, deleted ones included
    problems = []
    filters = [random_filter(rng) for _ in range(12)]
    filters += ["id = 417", "id IN (3, 601, 1150)", "name = 'n7' AND id < 300",
                "cat = 'z'", "qty = 50 AND cat = 'a'"]
    narrowed = 0
    for where in filters:
        reset_metrics(spark)
        mine = ours(spark, path, where)
        m = metrics(spark)
        theirs = spark_arrow(spark, f"SELECT * FROM hs_unpushed WHERE {where}")
        p = diff_tables(mine, theirs)
        if p is not None:
            problems.append(f"WHERE {where}: pushed vs unpushed: {p}")
        if m["filesRead"] > 8 or m["tasks"] > 8 or m["rowsScanned"] > stored:
            problems.append(f"WHERE {where}: read more than the full scan: {m}")
        if m["rowsReturned"] != mine.num_rows:
            problems.append(f"WHERE {where}: rowsReturned {m['rowsReturned']} != {mine.num_rows}")
        if m["tasks"] < 8 and m["rowsScanned"] < stored:
            narrowed += 1
    # The point lookups: one file planned, one task, its candidates only.
    for where in ["id = 417", "id IN (3, 601, 1150)", "cat = 'z'"]:
        live = t.to_arrow(filter=where, columns=["id"]).column("id").to_pylist()
        files = len({i // 150 for i in live})  # file i holds ids [150 i, 150 i + 150)
        reset_metrics(spark)
        ours(spark, path, where)
        m = metrics(spark)
        parts = spark.read.format("hyperstream").load(path).where(where).rdd.getNumPartitions()
        if m["filesRead"] != files or m["tasks"] != min(files, 1) or parts != min(files, 1) \
                or m["rowsScanned"] > len(live):
            problems.append(f"WHERE {where}: want {files} files in {min(files, 1)} task(s), "
                            f"{parts} partitions: {m}")
    if narrowed < 5:
        problems.append(f"only {narrowed} of {len(filters)} filters read less than a full scan")
    # files-per-task still forces the old grouping (one file per task here).
    reset_metrics(spark)
    ours(spark, path, "id < 1000", **{"files-per-task": 1})
    m = metrics(spark)
    if m["tasks"] != 7:
        problems.append(f"files-per-task 1 over 7 planned files: {m}")
    full.unpersist()
    assert not problems, "\n".join(problems)


def test_float_filters_are_enforced(spark, spark_table, hdb):
    """Filters on float and double columns are pushed and enforced (no
    Spark Filter above the scan) and keep exactly the rows of the unpushed
    plan (the connector's full read, cached, filtered by Spark) on seeded
    random filters over NaN, -0.0, 0.0, infinities and nulls, in files with
    scalar indexes and min/max statistics."""
    ident, path = spark_table
    rng = np.random.default_rng(29)
    t = hdb.Table(path)
    for i in range(4):  # the last file: plain doubles
        t.write(float_table(rng, range(i * 200, i * 200 + 200), plain=i == 3))
    t.index_all()
    # The unpushed plan: the rows as a local relation Spark filters itself (a
    # cached one returned no row for g = NaN, where Spark and we keep the NaN rows).
    full = spark.read.format("hyperstream").load(path)
    rows = full.collect()
    assert len(rows) == 800
    spark.createDataFrame(rows, full.schema).createOrReplaceTempView("hs_float_unpushed")
    problems, kept = [], 0
    filters = [float_filter(rng, "FLOAT") for _ in range(40)]
    filters += ["f > CAST('1.5' AS FLOAT)", "g >= CAST('-0.0' AS DOUBLE)",
                "g = CAST('NaN' AS DOUBLE)", "f < CAST('NaN' AS FLOAT)", "NOT (g <> 0.0D)"]
    for where in filters:
        reset_metrics(spark)
        r = spark.read.format("hyperstream").load(path)
        r.createOrReplaceTempView("hs_float")
        df = spark.sql(f"SELECT id FROM hs_float WHERE {where}")
        plan = df._jdf.queryExecution().executedPlan().toString()
        mine = sorted(x[0] for x in df.collect())
        m = metrics(spark)
        theirs = sorted(x[0] for x in spark.sql(
            f"SELECT id FROM hs_float_unpushed WHERE {where}").collect())
        kept += len(theirs)
        if mine != theirs:
            problems.append(f"WHERE {where}: {len(mine)} rows, unpushed {len(theirs)}; "
                            f"only pushed {sorted(set(mine) - set(theirs))[:5]}, "
                            f"only unpushed {sorted(set(theirs) - set(mine))[:5]}")
        elif "Filter " in plan.split("HyperStreamScan")[0]:
            problems.append(f"WHERE {where}: Spark still filters after the scan:\n{plan}")
        elif m["rowsReturned"] != len(mine):
            problems.append(f"WHERE {where}: the scan returned {m['rowsReturned']} rows "
                            f"for {len(mine)}")
    assert 0 < kept < 800 * len(filters), kept
    assert not problems, "\n".join(problems)


def _search_ours(spark, path, q, k, where=None, columns="id, distance", tail="", **extra):
    opts = {"vector_column": "emb", "query_vector": ",".join(repr(float(x)) for x in q), "k": k}
    if where:
        opts["filter"] = where
    opts.update(extra)
    return ours(spark, path, columns=columns, tail=tail, **opts)


def test_vector_topk_equals_python(spark, spark_table, hdb):
    ident, path = spark_table
    rng = np.random.default_rng(11)
    t = hdb.Table(path)
    for i in range(5):
        data = gen(rng, range(i * 120, i * 120 + 120), str(i))
        if i >= 2:  # exact duplicates of earlier vectors: ties across files
            emb = data.column("emb").to_pylist()
            first = gen(np.random.default_rng(11), range(0, 120), "0").column("emb").to_pylist()
            emb[:30] = first[:30]
            data = data.set_column(data.schema.get_field_index("emb"), "emb",
                                   pa.array(emb, pa.list_(pa.float32(), DIM)))
        t.write(data)
    t.delete("qty < 10")
    problems = []

    def compare(tag, q, k, where, **extra):
        mine = _search_ours(spark, path, q, k, where, **extra)
        py = t.search("emb", np.asarray(q, np.float32), k=k, filter=where, columns=["id"],
                      exact=bool(extra.get("exact")))
        a = list(zip(mine.column("id").to_pylist(), mine.column("distance").to_pylist()))
        b = list(zip(py.column("id").to_pylist(), py.column("distance").to_pylist()))
        if a != b:
            problems.append(f"{tag} k={k} filter={where}: connector {a[:6]}... ({len(a)}) != "
                            f"Python {b[:6]}... ({len(b)})")

    qs = [rng.standard_normal(DIM).astype(np.float32) for _ in range(3)]
    dup = gen(np.random.default_rng(11), range(0, 120), "0").column("emb").to_pylist()[3]
    qs.append(np.asarray(dup if dup is not None else qs[0], np.float32))
    for j, q in enumerate(qs):
        for k, where in [(10, None), (25, "cat = 'a' AND qty > 40"), (1000, None), (5, "id < 0")]:
            compare(f"exact q{j}", q, k, where)
    t.add_index("emb", "hnsw")
    for j, q in enumerate(qs):
        compare(f"hnsw q{j}", q, 10, None)
        compare(f"hnsw q{j}", q, 15, "cat <> 'b'")
        compare(f"forced exact q{j}", q, 10, None, exact="true")
    # Distributed (one Spark job: tasks search runs of consecutive files, the
    # driver merges them) gives the same rows as the driver's own search, which
    # a small table gets by default: by default min(files, Spark's default
    # parallelism) tasks, or files-per-task 1 (5 tasks) and 2 (3 tasks of
    # 2, 2 and 1 files: ties across runs and within one).
    for j, q in enumerate(qs):
        for fpt in (None, 1, 2):
            extra = {"vector-driver-rows": 0}
            if fpt:
                extra["files-per-task"] = fpt
            compare(f"distributed hnsw q{j} fpt={fpt}", q, 15, "cat <> 'b'", **extra)
            compare(f"distributed exact q{j} fpt={fpt}", q, 25, "cat = 'a' AND qty > 40",
                    exact="true", **extra)
            compare(f"distributed hnsw q{j} fpt={fpt}", q, 1000, None, **extra)
    # Spark jobs per search, from Spark's status tracker (rows collected as
    # Rows: an Arrow collect of a local table scan runs a job of its own): the
    # driver's search runs none (a local table scan), the distributed one
    # exactly one (its tasks); local-scan false adds the task handing over the rows.
    def reader(**extra):
        r = spark.read.format("hyperstream").option("vector_column", "emb").option("k", 10) \
            .option("query_vector", ",".join(repr(float(x)) for x in qs[0]))
        for key, v in extra.items():
            r = r.option(key, str(v))
        return r.load(path).select("id", "distance")
    want = t.search("emb", qs[0], k=10, columns=["id"])
    want = list(zip(want.column("id").to_pylist(), want.column("distance").to_pylist()))
    tasks = min(5, spark.sparkContext.defaultParallelism)
    for extra, want_jobs, want_tasks in [({}, 0, 0), ({"vector-driver-rows": 0}, 1, tasks),
                                         ({"vector-driver-rows": 0, "files-per-task": 2}, 1, 3),
                                         ({"local-scan": "false"}, 1, 0),
                                         ({"local-scan": "false", "vector-driver-rows": 0}, 2,
                                          tasks)]:
        reset_metrics(spark)
        jobs, got = job_count(spark, lambda: reader(**extra).collect())
        m = metrics(spark)
        assert (jobs, m["tasks"]) == (want_jobs, want_tasks), (extra, jobs, m)
        assert [(r.id, r.distance) for r in got] == want, (extra, got, want)
        assert m["vectorFilesIndexed"] == 5, (extra, m)
    # The search's rows are a local table scan either way (local-scan false:
    # our scan, one partition of the merged rows).
    for extra in [{}, {"vector-driver-rows": 0}]:
        local = reader(**extra)._jdf.queryExecution().executedPlan().toString()
        assert "LocalTableScan" in local and "HyperStreamScan" not in local, (extra, local)
        scan = reader(**extra, **{"local-scan": "false"})._jdf.queryExecution() \
            .executedPlan().toString()
        assert "HyperStreamScan" in scan and "vector_column=emb" in scan, (extra, scan)
    # The top-k relation is a table: Spark's WHERE and ORDER BY apply to the k rows.
    rel = _search_ours(spark, path, qs[0], 20, columns="id, cat, distance",
                       tail=" ORDER BY distance DESC")
    assert rel.num_rows == 20 and rel.column("distance").to_pylist() == sorted(
        rel.column("distance").to_pylist(), reverse=True)
    assert not problems, "\n".join(problems)


def test_bad_input_is_a_clear_error(spark, spark_table, hdb, tmp_path):
    ident, path = spark_table
    rng = np.random.default_rng(1)
    hdb.Table(path).write(gen(rng, range(0, 50)))
    missing = str(tmp_path / "no_such_table")
    with pytest.raises(Exception, match="no_such_table"):
        spark.read.format("hyperstream").load(missing).collect()
    with pytest.raises(Exception, match="option 'path'"):
        spark.read.format("hyperstream").load().collect()
    with pytest.raises(Exception, match="dimension 8, the query has dimension 3"):
        _search_ours(spark, path, [0.1, 0.2, 0.3], 5)
    with pytest.raises(Exception, match="no column 'nope'"):
        ours(spark, path, columns="id", vector_column="nope", query_vector="1,2")
    with pytest.raises(Exception, match="position"):
        _search_ours(spark, path, np.zeros(DIM), 5, "id >>> 3")
    with pytest.raises(Exception, match="snapshot"):
        ours(spark, path, **{"snapshot-id": 12345})
    with pytest.raises(Exception, match="no tag or branch named 'nope'"):
        ours(spark, path, tag="nope")
    # A type Spark 3.5 cannot hold: time of day.
    tpath = str(tmp_path / "times")
    hdb.Table(tpath).write(pa.table({"id": pa.array([1], pa.int64()),
                                     "t": pa.array([dt.time(1, 2, 3)], pa.time64("us"))}))
    with pytest.raises(Exception, match="column 't' has Arrow type"):
        spark.read.format("hyperstream").load(tpath).collect()
    # The JVM is fine.
    assert ours(spark, path, columns="count(*) AS n").column("n")[0].as_py() == 50


def test_writes_commit_once_and_read_everywhere(spark, spark_table, spark_warehouse, hdb):
    """Spark appends through our connector: tasks write the data files, the
    driver commits one snapshot; we, Spark's Iceberg reader, pyiceberg and
    our connector then read the same rows."""
    from pyiceberg.table import StaticTable
    from pyspark.sql import functions as F

    ident, path = spark_table
    rng = np.random.default_rng(23)
    t = hdb.Table(path)
    t.write(gen(rng, range(0, 300)))
    before = [s.snapshot_id for s in t.snapshots()]
    src = spark.read.format("hyperstream").load(path).withColumn("id", F.col("id") + 1000)
    src.repartition(3).write.format("hyperstream").mode("append").save(path)
    t = hdb.Table(path)
    after = t.snapshots()
    assert [s.snapshot_id for s in after[:-1]] == before and len(after) == len(before) + 1
    files = {os.path.basename(p) for p in os.listdir(os.path.join(path, "data"))}
    assert len(files) == 1 + 3, files
    ours_rows = t.to_arrow()
    want = pa.concat_tables([t.to_arrow(snapshot_id=before[-1]),
                             t.to_arrow(snapshot_id=before[-1]).set_column(
                                 0, "id", pa.compute.add(t.to_arrow(snapshot_id=before[-1])
                                                         .column("id"), 1000))])
    problems = [diff_tables(ours_rows, want),
                diff_tables(ours_rows, spark_arrow(spark, f"SELECT * FROM {CATALOG}.{ident}")),
                diff_tables(StaticTable.from_metadata(t.metadata_location).scan().to_arrow(),
                            spark_arrow(spark, f"SELECT * FROM {CATALOG}.{ident}")),
                diff_tables(ours(spark, path), want)]
    # Exact vector search sees the written vectors.
    q = rng.standard_normal(DIM).astype(np.float32)
    a = _search_ours(spark, path, q, 12)
    b = t.search("emb", q, k=12, columns=["id"])
    if a.column("id").to_pylist() != b.column("id").to_pylist():
        problems.append(f"search after write: {a.column('id')} != {b.column('id')}")
    assert not [p for p in problems if p], "\n".join(p for p in problems if p)

    # A new folder: the table is created with the DataFrame's schema.
    new = os.path.join(spark_warehouse, "db", ident.split(".")[1] + "_new")
    df = spark.createDataFrame(
        [(i, f"s{i % 5}", None if i % 4 == 0 else i / 3.0, dt.date(2024, 2, 1 + i % 20),
          T0 + dt.timedelta(hours=i), [f"x{i}", None]) for i in range(200)],
        "id long, name string, score double, d date, ts timestamp, tags array<string>")
    df.repartition(2).write.format("hyperstream").mode("append").save(new)
    nt = hdb.Table(new)
    assert len(nt.snapshots()) == 1 and len(nt) == 200
    p = diff_tables(nt.to_arrow(), spark_arrow(
        spark, f"SELECT * FROM {CATALOG}.db.{ident.split('.')[1]}_new"))
    assert p is None, p
    p = diff_tables(ours(spark, new), spark_util_arrow(df))
    assert p is None, p

    # A vector of the wrong dimension fails the job; nothing is committed or left behind.
    bad = spark.createDataFrame([(5000, [1.0, 2.0])], "id long, emb array<float>")
    bad = src.limit(1).drop("emb").join(bad.drop("id"), how="cross")
    with pytest.raises(Exception, match="dimension 8; a row has 2 values"):
        bad.write.format("hyperstream").mode("append").save(path)
    assert len(hdb.Table(path).snapshots()) == len(after)
    assert len(os.listdir(os.path.join(path, "data"))) == 4
    with pytest.raises(Exception, match="Append"):
        df.write.format("hyperstream").save(new)


def spark_util_arrow(df):
    from pyspark.sql.pandas.types import to_arrow_schema

    return pa.Table.from_batches(df._collect_as_arrow()).cast(to_arrow_schema(df.schema))


def test_catalog_sql(spark, spark_table, spark_warehouse, hdb):
    """spark.sql.catalog.hs = HsCatalog over the warehouse: SQL names table
    folders, with pushdown, time travel, CREATE TABLE and INSERT INTO."""
    ident, path = spark_table
    name = ident.split(".")[1]
    rng = np.random.default_rng(31)
    t = hdb.Table(path)
    s1 = t.write(gen(rng, range(0, 300)))
    t.create_tag("first")
    t.write(gen(rng, range(300, 600)))
    t.index_all()
    tables = {r.tableName for r in spark.sql("SHOW TABLES IN hs.db").collect()}
    assert name in tables, tables
    where = "id > 100 AND cat = 'a'"
    df = spark.sql(f"SELECT * FROM hs.db.{name} WHERE {where}")
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "HyperStreamScan" in plan and '("id" > 100)' in plan, plan
    problems = [diff_tables(spark_arrow(spark, f"SELECT * FROM hs.db.{name} WHERE {where}"),
                            spark_arrow(spark, f"SELECT * FROM {CATALOG}.{ident} WHERE {where}")),
                diff_tables(spark_arrow(spark, f"SELECT * FROM hs.db.{name} VERSION AS OF {s1}"),
                            t.to_arrow(snapshot_id=s1)),
                diff_tables(spark_arrow(spark, f"SELECT * FROM hs.db.{name} VERSION AS OF 'first'"),
                            t.to_arrow(snapshot_id=s1))]
    when = [h for h in t.history() if h.snapshot_id == s1][0].made_current_at_ms
    lit = dt.datetime.fromtimestamp(when / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    problems.append(diff_tables(
        spark_arrow(spark, f"SELECT * FROM hs.db.{name} TIMESTAMP AS OF '{lit}'"),
        t.to_arrow(snapshot_id=s1)))
    assert not [p for p in problems if p], "\n".join(p for p in problems if p)
    # CREATE TABLE + INSERT INTO (one commit per statement), read by Python and Iceberg.
    spark.sql(f"CREATE TABLE hs.db.{name}_c (id BIGINT, s STRING, x DOUBLE)")
    spark.sql(f"INSERT INTO hs.db.{name}_c VALUES (1, 'a', 0.5), (2, NULL, -1.0), (3, 'c', NULL)")
    spark.sql(f"INSERT INTO hs.db.{name}_c SELECT id + 10, s, x FROM hs.db.{name}_c")
    c = hdb.Table(os.path.join(spark_warehouse, "db", f"{name}_c"))
    assert len(c.snapshots()) == 2 and sorted(c.to_arrow().column("id").to_pylist()) == \
        [1, 2, 3, 11, 12, 13]
    p = diff_tables(c.to_arrow(), spark_arrow(spark, f"SELECT * FROM {CATALOG}.db.{name}_c"))
    assert p is None, p
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql("SELECT * FROM hs.db.no_such_table").collect()


def test_sql_order_by_distance_limit_is_our_top_k(spark, spark_table, hdb):
    """ORDER BY hs.l2_distance(emb, array(...)) LIMIT k over hs.db.t becomes our
    top-k (the WHERE its pre-filter), pushed whole and, on a table this small,
    answered on the driver as a local scan; the rows equal Table.search."""
    ident, path = spark_table
    name = ident.split(".")[1]
    rng = np.random.default_rng(41)
    t = hdb.Table(path)
    for i in range(3):
        t.write(gen(rng, range(i * 200, i * 200 + 200), str(i)))
    q = rng.standard_normal(DIM).astype(np.float32)
    arr = "array(" + ", ".join(repr(float(x)) for x in q) + ")"
    problems = []
    for fn, order, metric in [("l2_distance", "ASC", "l2"), ("cosine_distance", "ASC", "cosine"),
                              ("inner_product", "DESC", "ip")]:
        for where, k in [(None, 10), ("cat = 'a' AND qty > 20", 7)]:
            sql = (f"SELECT id, hs.{fn}(emb, {arr}) AS dist FROM hs.db.{name}"
                   + (f" WHERE {where}" if where else "")
                   + f" ORDER BY hs.{fn}(emb, {arr}) {order} LIMIT {k}")
            df = spark.sql(sql)
            plan = df._jdf.queryExecution().executedPlan().toString()
            # Pushed whole: Spark neither sorts nor limits again, and the
            # driver's search is a local table scan (no Spark job).
            if "Sort" in plan or "TakeOrdered" in plan or "Limit" in plan \
                    or "LocalTableScan" not in plan:
                problems.append(f"{fn} {where}: top-k not pushed: {plan[:600]}")
                continue
            reset_metrics(spark)
            got = spark_arrow(spark, sql)
            m = metrics(spark)
            want = t.search("emb", q, k=k, filter=where, metric=metric, columns=["id"])
            if got.column("id").to_pylist() != want.column("id").to_pylist():
                problems.append(f"{fn} {where}: {got.column('id').to_pylist()} != "
                                f"{want.column('id').to_pylist()}")
            if m["vectorFilesSearched"] < 1 or m["rowsScanned"] != 0:
                problems.append(f"{fn} {where}: metrics {m}")
    # Distributed through SQL: a catalog table read with task options
    # (spark.read.option(...).table(...), here as a temp view) runs the pushed
    # top-k as one Spark job over 2 or 3 tasks; the rows equal Table.search.
    for extra in [{"vector-driver-rows": "0"}, {"vector-driver-rows": "0", "files-per-task": "1"}]:
        r = spark.read
        for key, v in extra.items():
            r = r.option(key, v)
        r.table(f"hs.db.{name}").createOrReplaceTempView("hs_dist")
        for fn, order, metric in [("l2_distance", "ASC", "l2"), ("inner_product", "DESC", "ip")]:
            where, k = "cat = 'a' AND qty > 20", 7
            # (SELECT id only: a projected hs.l2_distance(...) is Spark's to
            # evaluate over the k rows, one more job.)
            sql = (f"SELECT id FROM hs_dist WHERE {where} "
                   f"ORDER BY hs.{fn}(emb, {arr}) {order} LIMIT {k}")
            plan = spark.sql(sql)._jdf.queryExecution().executedPlan().toString()
            if "Sort" in plan or "TakeOrdered" in plan or "LocalTableScan" not in plan:
                problems.append(f"distributed {extra} {fn}: top-k not pushed: {plan[:600]}")
                continue
            reset_metrics(spark)
            jobs, rows = job_count(spark, lambda: spark.sql(sql).collect())
            m = metrics(spark)
            want = t.search("emb", q, k=k, filter=where, metric=metric, columns=["id"])
            if [x.id for x in rows] != want.column("id").to_pylist():
                problems.append(f"distributed {extra} {fn}: {[x.id for x in rows]} != "
                                f"{want.column('id').to_pylist()}")
            tasks = min(3, spark.sparkContext.defaultParallelism)
            tasks = 3 if "files-per-task" in extra else tasks
            if (jobs, m["tasks"]) != (1, tasks):
                problems.append(f"distributed {extra} {fn}: {jobs} jobs, {m['tasks']} tasks")
    # Not pushable (no LIMIT): Spark evaluates the function itself, same order.
    full = spark_arrow(spark, f"SELECT id FROM hs.db.{name} WHERE emb IS NOT NULL "
                              f"ORDER BY hs.l2_distance(emb, {arr}), id")
    want = t.search("emb", q, k=10_000, columns=["id"])
    if full.column("id").to_pylist() != want.column("id").to_pylist():
        problems.append("unpushed ORDER BY l2_distance differs from search order")
    assert not problems, "\n".join(problems)
