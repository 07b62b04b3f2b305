"""Gzip metadata both ways with Spark (Iceberg Java's Hadoop tables) as the
oracle: Spark switches a table to `write.metadata.compression-codec=gzip`
mid-history (its files become vN.gz.metadata.json), we read its latest
snapshot and every earlier one, then commit after it (gzip too, as the
property asks); Spark reads our commit, commits again after it, and we read
that. And a table we create with the gzip property is read by Spark."""

import glob
import os
import random

import pyarrow as pa
import hyperstreamdb as hdb
import spark_util

C = spark_util.CATALOG


def _names(path):
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(path, "metadata", "v*.json"))
                  + glob.glob(os.path.join(path, "metadata", "v*.json.gz")))


def _spark_rows(spark, ident, sid=None):
    v = f" VERSION AS OF {sid}" if sid is not None else ""
    return sorted(spark_util.canonical_rows(spark_util.spark_arrow(
        spark, f"SELECT id, name, x FROM {C}.{ident}{v}")))


def _our_rows(path, sid=None):
    t = hdb.Table(path)
    return sorted(spark_util.canonical_rows(t.to_arrow(snapshot_id=sid, columns=["id", "name", "x"])))


def _insert(spark, ident, rng, start, n):
    vals = ", ".join(f"({start + i}, 'n{rng.randrange(100)}', {rng.random():.6f}D)"
                     for i in range(n))
    spark.sql(f"INSERT INTO {C}.{ident} VALUES {vals}")


def test_spark_switches_to_gzip_then_we_commit(spark, spark_table):
    ident, path = spark_table
    rng = random.Random(14)
    spark.sql(f"CREATE TABLE {C}.{ident} (id BIGINT, name STRING, x DOUBLE) USING iceberg "
              "TBLPROPERTIES ('format-version'='2')")
    _insert(spark, ident, rng, 0, 5)
    _insert(spark, ident, rng, 5, 7)
    spark.sql(f"ALTER TABLE {C}.{ident} SET TBLPROPERTIES "
              "('write.metadata.compression-codec'='gzip')")
    _insert(spark, ident, rng, 12, 4)
    _insert(spark, ident, rng, 16, 3)
    names = _names(path)
    assert any(n.endswith(".gz.metadata.json") for n in names), names
    assert any(n.endswith(".metadata.json") and ".gz." not in n for n in names), names
    t = hdb.Table(path)
    assert t.metadata_location.endswith(".gz.metadata.json")
    assert _our_rows(path) == _spark_rows(spark, ident)
    assert len(t) == 19
    for s in t.snapshots():
        assert _our_rows(path, s.snapshot_id) == _spark_rows(spark, ident, s.snapshot_id)
    # our commit goes after Spark's latest, in gzip as the property asks
    before = len(names)
    b = pa.table({"id": pa.array([100, 101], pa.int64()), "name": ["ours", None],
                  "x": pa.array([0.5, 1.5], pa.float64())})
    t.write(b)
    names2 = _names(path)
    assert len(names2) == before + 1
    newest = max(names2, key=lambda n: int(n[1:].split(".")[0]))
    assert newest.endswith(".gz.metadata.json")
    assert _spark_rows(spark, ident) == _our_rows(path)
    assert len(_spark_rows(spark, ident)) == 21
    # Spark commits after ours; we read it
    _insert(spark, ident, rng, 200, 2)
    assert _our_rows(path) == _spark_rows(spark, ident)
    assert len(hdb.Table(path)) == 23
    hist = [r["snapshot_id"] for r in
            spark.sql(f"SELECT snapshot_id FROM {C}.{ident}.snapshots").collect()]
    assert [s.snapshot_id for s in hdb.Table(path).snapshots()] == hist


def test_spark_reads_our_gzip_table(spark, spark_warehouse):
    path = os.path.join(spark_warehouse, "db", "t_ours_gzip")
    rng = random.Random(3)
    t = hdb.Table(path, format_version=2,
                  properties={"write.metadata.compression-codec": "gzip"})
    want = []
    for k in range(3):
        n = rng.randrange(1, 20)
        b = pa.table({"id": pa.array(range(k * 100, k * 100 + n), pa.int64()),
                      "name": [f"n{rng.randrange(9)}" for _ in range(n)],
                      "x": pa.array([rng.random() for _ in range(n)], pa.float64())})
        t.write(b)
        want += spark_util.canonical_rows(b)
    assert all(n.endswith(".gz.metadata.json") for n in _names(path))
    assert _spark_rows(spark, "db.t_ours_gzip") == sorted(want)
    for s in t.snapshots():
        assert _spark_rows(spark, "db.t_ours_gzip", s.snapshot_id) == _our_rows(path, s.snapshot_id)
