"""We write, Spark reads (issue 14, "Spark as the oracle", the other way).

Tables we make in Spark's Hadoop-catalog warehouse (``<warehouse>/db/<t>`` is
``hs_spark.db.<t>``): appends in format v2 and v3, partitioned (identity,
day, bucket) with a spec change, sorted, rollbacks, tags and branches, and a
schema that Spark evolved before our next append. At every snapshot Spark's
``VERSION AS OF`` rows must equal ours (``spark_util.
assert_same_at_every_snapshot``: the same snapshot ids, the same current
snapshot, rows, filters through Spark's partition pruning, our exact vector
search against brute force over Spark's rows, pyiceberg's rows, and Spark's
``TIMESTAMP AS OF`` against our ``as_of`` at every snapshot-log entry). Spark's maintenance
procedures ``rewrite_data_files`` and ``expire_snapshots`` must accept our
tables, and we must read what they leave, append to it, and Spark read that.

Adding a case for a new kind of change (our deletes, updates, merges) is one
call: make the change with our API, then
``assert_same_at_every_snapshot(spark, hdb, ident, path, filters, vector)``.
"""

import datetime as dt
import os

import numpy as np
import pyarrow as pa
import pytest

from spark_util import (CATALOG, Checker, assert_same_at_every_snapshot, check_search, diff_tables,
                        spark_arrow)

DIM = 8
T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
FILTERS = [
    "id IN (3, 17, 250, 401, 777) OR (cat = 'b' AND score < 0)",
    "ts >= TIMESTAMP '2024-01-10 00:00:00' AND ts < TIMESTAMP '2024-01-13 12:00:00'",
    "d = DATE '2024-01-07' OR name LIKE 'n2%'",
]
VECTOR = ("emb", DIM)


def gen(rng, ids, tag=""):
    """A pyarrow table of our vector-table shape, with NULLs."""
    n = len(ids)
    names = [None if rng.random() < 0.1 else f"n{int(rng.integers(0, 40))}{tag}" for _ in range(n)]
    score = [None if rng.random() < 0.1 else float(rng.integers(-8000, 8000)) / 64
             for _ in range(n)]
    cat = [str(rng.choice(["a", "b", "c"])) for _ in range(n)]
    d = [dt.date(2024, 1, 1) + dt.timedelta(days=int(rng.integers(0, 20))) for _ in range(n)]
    ts = [T0 + dt.timedelta(seconds=int(rng.integers(0, 20 * 86400)),
                            microseconds=int(rng.integers(0, 10**6))) for _ in range(n)]
    emb = [None if rng.random() < 0.05 else rng.standard_normal(DIM).astype(np.float32).tolist()
           for _ in range(n)]
    return pa.table({
        "id": pa.array(list(ids), pa.int64()),
        "name": pa.array(names, pa.string()),
        "score": pa.array(score, pa.float64()),
        "cat": pa.array(cat, pa.string()),
        "d": pa.array(d, pa.date32()),
        "ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
        "emb": pa.array(emb, pa.list_(pa.float32(), DIM)),
    })


def _same(spark, hdb, ident, path):
    return assert_same_at_every_snapshot(spark, hdb, ident, path, filters=FILTERS, vector=VECTOR)


def _ref_rows(spark, hdb, ident, path, ref):
    """Spark's rows at a tag or branch equal ours at that ref."""
    theirs = spark_arrow(spark, f"SELECT * FROM {CATALOG}.{ident} VERSION AS OF '{ref}'")
    ours = hdb.Table(path).to_arrow(ref=ref)
    p = diff_tables(ours, theirs)
    assert p is None, f"{ident} at ref {ref!r}: {p}"


@pytest.mark.parametrize("fmt", [2, 3])
def test_appends_and_tags(spark, spark_table, hdb, fmt):
    ident, path = spark_table
    rng = np.random.default_rng(fmt)
    t = hdb.Table(path, format_version=fmt)
    start = 0
    for i, n in enumerate([300, 1, 250, 400]):
        t.write(gen(rng, range(start, start + n), str(i)))
        start += n
        if i == 1:
            t.create_tag("after-two")
    assert t.format_version == fmt
    _same(spark, hdb, ident, path)
    _ref_rows(spark, hdb, ident, path, "after-two")


@pytest.mark.parametrize("fmt", [2, 3])
def test_partitioned_and_sorted(spark, spark_table, hdb, fmt):
    ident, path = spark_table
    rng = np.random.default_rng(10 + fmt)
    t = hdb.Table(path, format_version=fmt)
    t.write(gen(rng, range(0, 200)))
    t.set_partition_spec(["cat", ("ts", "day"), ("id", "bucket[4]")])
    t.write(gen(rng, range(200, 500)))
    t.set_sort_order(["score"], ascending=[False])
    t.write(gen(rng, range(500, 800)))
    t.set_partition_spec([("d", "month"), ("name", "truncate[2]")])
    t.write(gen(rng, range(800, 1000)))
    specs = spark.sql(f"SELECT DISTINCT data_file.spec_id FROM {CATALOG}.{ident}.all_entries"
                      ).collect()
    assert len(specs) == 3, f"expected files under three partition specs: {specs}"
    _same(spark, hdb, ident, path)
    # Spark prunes by our partition values and metrics: wrong ones lose rows.
    for where in ["cat = 'b'", "id = 417", "ts < TIMESTAMP '2024-01-03 00:00:00'",
                  "name = 'n17'", "d >= DATE '2024-01-15'"]:
        theirs = spark_arrow(spark, f"SELECT * FROM {CATALOG}.{ident} WHERE {where}")
        p = diff_tables(hdb.Table(path).to_arrow(filter=where), theirs)
        assert p is None, f"{ident} WHERE {where}: {p}"


def test_rollback_tags_and_branches(spark, spark_table, hdb):
    ident, path = spark_table
    rng = np.random.default_rng(20)
    t = hdb.Table(path)
    sids = []
    for i in range(3):
        sids.append(t.write(gen(rng, range(i * 100, i * 100 + 100), str(i))))
    t.create_tag("v1", sids[0])
    t.create_branch("side", sids[1])
    t.rollback_to_snapshot(sids[0])
    t.write(gen(rng, range(1000, 1050), "after"))
    assert t.current_snapshot_id != sids[2]
    _same(spark, hdb, ident, path)
    for ref in ["v1", "side"]:
        _ref_rows(spark, hdb, ident, path, ref)
    refs = {r.name: (r.type, r.snapshot_id) for r in
            spark.sql(f"SELECT name, type, snapshot_id FROM {CATALOG}.{ident}.refs").collect()}
    assert refs == {"main": ("BRANCH", t.current_snapshot_id), "v1": ("TAG", sids[0]),
                    "side": ("BRANCH", sids[1])}, refs


@pytest.mark.parametrize("fmt", [2, 3])
def test_we_append_to_a_schema_spark_evolved(spark, spark_table, hdb, fmt):
    ident, path = spark_table
    rng = np.random.default_rng(30 + fmt)
    name = f"{CATALOG}.{ident}"
    t = hdb.Table(path, format_version=fmt)
    base = gen(rng, range(0, 300)).set_column(0, "id", pa.array(range(0, 300), pa.int32()))
    t.write(base)
    spark.sql(f"ALTER TABLE {name} ADD COLUMN extra string")
    spark.sql(f"ALTER TABLE {name} RENAME COLUMN name TO title")
    spark.sql(f"ALTER TABLE {name} ALTER COLUMN id TYPE bigint")
    spark.sql(f"ALTER TABLE {name} DROP COLUMN cat")
    more = gen(rng, range(300, 600)).drop_columns(["cat"]).rename_columns(
        ["id", "title", "score", "d", "ts", "emb"])
    more = more.append_column("extra", pa.array([f"x{i % 3}" for i in range(more.num_rows)]))
    t = hdb.Table(path)
    t.write(more)
    filters = ["id BETWEEN 100 AND 450", "score > 10 AND d < DATE '2024-01-12'"]
    assert_same_at_every_snapshot(spark, hdb, ident, path, filters=filters, vector=VECTOR)
    spark.sql(f"INSERT INTO {name} (id, title, score, d, ts, emb, extra) "
              "VALUES (9000, 'sp', 1.5, DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05', "
              "array(1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f), 'spark')")
    assert_same_at_every_snapshot(spark, hdb, ident, path, filters=filters, vector=VECTOR)


@pytest.mark.parametrize("fmt", [2, 3])
def test_spark_maintenance_accepts_our_tables(spark, spark_table, hdb, fmt):
    ident, path = spark_table
    rng = np.random.default_rng(40 + fmt)
    name = f"{CATALOG}.{ident}"
    t = hdb.Table(path, format_version=fmt)
    t.write(gen(rng, range(0, 100)))
    t.add_index("id")  # our index registry rides along in the metadata
    t.set_partition_spec(["cat"])
    for i in range(1, 5):
        t.write(gen(rng, range(i * 100, i * 100 + 100), str(i)))
    _same(spark, hdb, ident, path)

    res = spark.sql(f"CALL {CATALOG}.system.rewrite_data_files(table => '{ident}', "
                    "options => map('rewrite-all', 'true'))").collect()[0]
    assert res.rewritten_data_files_count > 1 and res.added_data_files_count >= 1, res
    ops = [r.operation for r in spark.sql(
        f"SELECT operation FROM {name}.snapshots ORDER BY committed_at").collect()]
    assert ops[-1] == "replace", ops
    _same(spark, hdb, ident, path)
    t = hdb.Table(path)
    t.build_indexes()  # indexes for Spark's new files
    c = _same(spark, hdb, ident, path)
    assert c.problems == []

    # our append on top of Spark's compaction, then Spark expires all but it
    t.write(gen(rng, range(1000, 1100), "after"))
    live = set(hdb.Table(path).to_arrow(columns=["id"]).column("id").to_pylist())
    cutoff = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=1)).strftime(
        "%Y-%m-%d %H:%M:%S")
    before = _data_files(path)
    spark.sql(f"CALL {CATALOG}.system.expire_snapshots(table => '{ident}', "
              f"older_than => TIMESTAMP '{cutoff}', retain_last => 1)").collect()
    snaps = hdb.Table(path).snapshots()
    assert [s.snapshot_id for s in snaps] == [hdb.Table(path).current_snapshot_id], snaps
    after = _data_files(path)
    assert after < before, "expire_snapshots removed no data file"
    _same(spark, hdb, ident, path)
    assert set(hdb.Table(path).to_arrow(columns=["id"]).column("id").to_pylist()) == live
    # and we append again after Spark's expiry
    hdb.Table(path).write(gen(rng, range(2000, 2010), "last"))
    _same(spark, hdb, ident, path)


def _data_files(path):
    """Paths of the Parquet files under the table's data/ folder."""
    return {os.path.join(root, f) for root, _, files in os.walk(os.path.join(path, "data"))
            for f in files if f.endswith(".parquet")}


def test_the_oracle_sees_one_wrong_value(spark, spark_table, hdb):
    """The comparison can fail: one lost row, one extra row, a -0.0 for a
    0.0, a timestamp off by a microsecond, a vector off in one element, a
    deleted row in a search result are each reported."""
    ident, path = spark_table
    rng = np.random.default_rng(50)
    data = gen(rng, range(0, 50))
    scores = data.column("score").to_pylist()
    scores[0] = 0.0
    data = data.set_column(2, "score", pa.array(scores, pa.float64()))
    hdb.Table(path).write(data)
    theirs = spark_arrow(spark, f"SELECT * FROM {CATALOG}.{ident}")
    ours = hdb.Table(path).to_arrow()
    assert diff_tables(ours, theirs) is None
    assert diff_tables(ours.slice(1), theirs) is not None
    assert diff_tables(pa.concat_tables([ours, ours.slice(0, 1)]), theirs) is not None
    i0 = ours.column("id").to_pylist().index(0)
    neg = ours.column("score").to_pylist()
    neg[i0] = -0.0
    assert diff_tables(ours.set_column(2, "score", pa.array(neg, pa.float64())), theirs)
    ts = ours.column("ts").cast(pa.int64()).to_pylist()
    ts[i0] += 1
    ts_arr = pa.array(ts, pa.int64()).cast(pa.timestamp("us", tz="UTC"))
    assert diff_tables(ours.set_column(5, "ts", ts_arr), theirs)
    vecs = ours.column("emb").to_pylist()
    j = next(i for i, v in enumerate(vecs) if v is not None)
    vecs[j] = [vecs[j][0] + 1e-3] + vecs[j][1:]
    emb = pa.array(vecs, ours.schema.field("emb").type)
    assert diff_tables(ours.set_column(6, "emb", emb), theirs)
    # a search that returns a row the oracle says is gone
    c = Checker(spark, hdb, ident, path, vector=VECTOR)
    sid = hdb.Table(path).current_snapshot_id
    c._check_vectors(hdb.Table(path), sid, "full", exact=True)
    assert c.problems == []
    q = np.ones(DIM, np.float32)
    res = hdb.Table(path).search("emb", q, k=5, columns=["id"], exact=True)
    ids, vecs = theirs.column("id").to_pylist(), theirs.column("emb").to_pylist()
    assert check_search(res, ids, vecs, q, 5) is None
    gone = res.column("id")[0].as_py()
    keep = [i for i, x in enumerate(ids) if x != gone]
    assert check_search(res, [ids[i] for i in keep], [vecs[i] for i in keep], q, 5) is not None


@pytest.mark.parametrize("fmt,mode", [(2, "merge-on-read"), (3, "merge-on-read"),
                                      (2, "copy-on-write")])
def test_our_row_changes_read_by_spark(spark, spark_table, hdb, fmt, mode):
    """Our delete, update, upsert and merge (v2 position deletes, v3 deletion
    vectors, copy-on-write rewrites), partitioned and not: Spark reads every
    snapshot as we do; then Spark's rewrite_position_delete_files (MOR) and
    rewrite_data_files accept the table, and our reads agree again."""
    ident, path = spark_table
    rng = np.random.default_rng(70 + fmt + len(mode))
    props = {f"write.{op}.mode": mode for op in ("delete", "update", "merge")}
    t = hdb.Table(path, format_version=fmt, properties=props)
    t.write(gen(rng, range(0, 300)))
    t.write(gen(rng, range(300, 600), "b"))
    t.add_index("cat")
    t.add_index("id")
    t.set_partition_spec(["cat"])
    t.write(gen(rng, range(600, 800), "c"))
    assert t.delete("cat = 'a' AND id < 400") > 0
    assert t.update({"score": 1.5}, filter="id IN (3, 17, 250, 401, 650, 777)") > 0
    up = gen(rng, list(range(590, 610)) + list(range(800, 810)), "u")
    r = t.upsert(up, on="id")
    assert r.rows_inserted == 10 and r.rows_updated > 0
    m = (t.merge(gen(rng, [5, 6, 900], "m"), on=["id"]).when_matched_update_all()
         .when_not_matched_insert_all().when_not_matched_by_source_delete("id > 780").execute())
    assert m.num_inserted_rows + m.num_updated_rows == 3  # 5 and 6 may be deleted already
    assert t.delete("name LIKE 'n1%'") > 0
    if mode == "merge-on-read":
        kinds = spark.sql(f"SELECT DISTINCT file_format FROM {CATALOG}.{ident}.delete_files"
                          ).collect()
        assert [k[0] for k in kinds] == (["PUFFIN"] if fmt == 3 else ["PARQUET"]), kinds
    _same(spark, hdb, ident, path)
    if mode == "merge-on-read" and fmt == 2:
        spark.sql(f"CALL {CATALOG}.system.rewrite_position_delete_files(table => '{ident}', "
                  "options => map('rewrite-all', 'true'))").collect()
    spark.sql(f"CALL {CATALOG}.system.rewrite_data_files(table => '{ident}', "
              "options => map('rewrite-all', 'true'))").collect()
    _same(spark, hdb, ident, path)
    # and our next change on top of Spark's compaction
    assert hdb.Table(path).delete("id < 50") >= 0
    _same(spark, hdb, ident, path)
