"""Tables we define and evolve, read and written by Spark (Iceberg Java) as
the oracle: a vector column Spark appends to as array<float> reads back as
our fixed-size vectors; a table we create with a partition spec and a sort
order and then evolve (add with a v3 default, rename, widen, drop) reads
the same in Spark at every snapshot."""

import datetime as dt
import os
import random

import numpy as np
import pyarrow as pa

import hyperstreamdb as hdb
import spark_util

C = spark_util.CATALOG


def _rows(tbl):
    return sorted(spark_util.canonical_rows(tbl))


def test_spark_appends_lists_to_our_vector_column(spark, spark_warehouse):
    name = "t_vec_lists"
    path = os.path.join(spark_warehouse, "db", name)
    dim = 4
    t = hdb.Table.create(path, schema=pa.schema([("id", pa.int64()),
                                                 ("emb", pa.list_(pa.float32(), dim))]))
    rng = random.Random(8)
    vecs = [[rng.uniform(-1, 1) for _ in range(dim)] for _ in range(6)]
    t.write(pa.table({"id": pa.array(range(6), pa.int64()),
                      "emb": pa.FixedSizeListArray.from_arrays(
                          pa.array([x for v in vecs for x in v], pa.float32()), dim)}))
    sv = [[rng.uniform(-1, 1) for _ in range(dim)] for _ in range(5)]
    values = ", ".join(f"({10 + i}, array({', '.join(f'CAST({x!r} AS FLOAT)' for x in v)}))"
                       for i, v in enumerate(sv))
    spark.sql(f"INSERT INTO {C}.db.{name} VALUES {values}, (99, NULL)")
    got = hdb.Table(path).to_arrow()
    assert got.schema.field("emb").type == pa.list_(pa.float32(), dim)
    ours = {r["id"]: r["emb"] for r in got.to_pylist()}
    f32 = [[float(np.float32(x)) for x in v] for v in vecs + sv]
    assert ours == {**{i: f32[i] for i in range(6)}, **{10 + i: f32[6 + i] for i in range(5)},
                    99: None}
    theirs = spark_util.spark_arrow(spark, f"SELECT id, emb FROM {C}.db.{name}")
    assert {r["id"]: r["emb"] for r in theirs.to_pylist()} == ours
    q = [0.1, -0.2, 0.3, 0.0]
    res = hdb.Table(path).search("emb", q, k=4, exact=True)
    live = [(k, v) for k, v in ours.items() if v is not None]
    want = sorted(float(np.linalg.norm(np.array(v, np.float32) - np.array(q, np.float32)))
                  for _, v in live)[:4]
    assert np.allclose(sorted(res["distance"].to_pylist()), want, rtol=1e-5)


def test_spark_reads_our_defined_and_evolved_table(spark, spark_warehouse):
    name = "t_defined_evolved"
    path = os.path.join(spark_warehouse, "db", name)
    t = hdb.Table.create(path, schema=pa.schema([("id", pa.int32()), ("day", pa.date32()),
                                                 ("name", pa.string()), ("x", pa.float32())]),
                         partition_spec=[{"source_id": 2, "field_id": 1000, "name": "d",
                                          "transform": "day"}],
                         sort_order=[("id", "desc")], format_version=3)
    rng = random.Random(5)
    nid = 0

    def append():
        nonlocal nid
        sch = t.schema.remove_metadata()
        n = rng.randrange(3, 9)
        cols = {}
        for f in sch:
            if f.name == "id":
                cols[f.name] = pa.array(range(nid, nid + n), f.type)
            elif pa.types.is_date(f.type):
                cols[f.name] = pa.array([dt.date(2024, 5, 1 + rng.randrange(3)) for _ in range(n)],
                                        f.type)
            elif pa.types.is_string(f.type):
                cols[f.name] = pa.array([rng.choice(["a", "b", None]) for _ in range(n)], f.type)
            else:
                cols[f.name] = pa.array([rng.choice([0.5, 1.25, None]) for _ in range(n)], f.type)
        nid += n
        t.write(pa.table(cols, schema=sch))

    def same():
        for s in t.snapshots():  # both read a snapshot with its own schema
            theirs = spark_util.spark_arrow(
                spark, f"SELECT * FROM {C}.db.{name} VERSION AS OF {s.snapshot_id}")
            ours = hdb.Table(path).to_arrow(snapshot_id=s.snapshot_id)
            assert ours.column_names == theirs.column_names, s.snapshot_id
            assert _rows(ours) == _rows(theirs), s.snapshot_id
        theirs = spark_util.spark_arrow(spark, f"SELECT * FROM {C}.db.{name}")
        ours = hdb.Table(path).to_arrow()
        assert ours.column_names == theirs.column_names
        assert _rows(ours) == _rows(theirs)

    append()
    same()
    t.add_column("score", pa.float64(), default=2.5)
    append()
    same()
    with t.update_schema() as u:
        u.rename_column("name", "label")
        u.update_column("id", pa.int64())
        u.update_column("x", pa.float64())
    append()
    same()
    t.add_column("note", pa.string())
    t.drop_column("score")
    append()
    same()
    # Spark appends under our evolved schema; we read it
    spark.sql(f"INSERT INTO {C}.db.{name} (id, day, label, x, note) VALUES "
              "(1000, DATE'2024-05-02', 'spark', 9.5D, 'n')")
    same()
    assert len(hdb.Table(path)) == nid + 1
