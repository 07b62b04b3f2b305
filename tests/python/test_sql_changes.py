"""SQL statements that change tables (src/sql/ddl_change.c): DELETE, ALTER
TABLE ADD / DROP / ALTER TYPE / RENAME COLUMN.

DuckDB is the oracle: the same random DELETE statements run on a DuckDB
copy of the same random rows, and after each one every row of ours (read
by SQL and by a fresh Table) equals DuckDB's. Schema changes are checked
against pyarrow's view of the table and pyiceberg-free reads of the rows.
What has no mapping is refused with a clear error and writes nothing.
"""
import os
import random

import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")


def _rows(seed, n):
    rng = random.Random(seed)

    def maybe(v):
        return None if rng.random() < 0.1 else v

    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "g": pa.array([maybe(rng.choice(["a", "b", "c", "it's"])) for _ in range(n)]),
        "v": pa.array([maybe(rng.randrange(-100, 100)) for _ in range(n)], pa.int32()),
        "f": pa.array([maybe(rng.uniform(-10, 10)) for _ in range(n)], pa.float64()),
    })


def _cond(rng):
    def one():
        k = rng.randrange(6)
        if k == 0:
            return f"v {rng.choice(['<', '<=', '>', '>=', '=', '<>'])} {rng.randrange(-100, 100)}"
        if k == 1:
            return "g = " + rng.choice(["'a'", "'b'", "'c'", "'it''s'"])
        if k == 2:
            return f"{rng.choice(['g', 'v', 'f'])} IS {rng.choice(['', 'NOT '])}NULL"
        if k == 3:
            return "v IN (" + ", ".join(str(rng.randrange(-100, 100)) for _ in range(5)) + ")"
        if k == 4:
            lo = rng.randrange(0, 300)
            return f"id BETWEEN {lo} AND {lo + rng.randrange(30)}"
        return f"f < {rng.uniform(-10, 10):.3f}"

    c = one()
    for _ in range(rng.randrange(3)):
        c = f"({c}) {rng.choice(['AND', 'OR'])} {'NOT ' if rng.random() < 0.2 else ''}({one()})"
    return c


def _sorted(rows):
    return sorted(rows, key=lambda r: tuple((x is None, str(x)) for x in r))


def same_rows(s, con, where, uri=None):
    """Our t (read by SQL and, given `uri`, by a fresh Table) holds DuckDB's
    t's rows; returns them."""
    exp = _sorted(con.execute("SELECT id, g, v, f FROM t").fetchall())
    assert _sorted(s.sql("SELECT id, g, v, f FROM t").fetchall()) == exp, where
    if uri is not None:
        rows = hdb.Table(uri).to_arrow(columns=["id", "g", "v", "f"]).to_pylist()
        assert _sorted([tuple(r.values()) for r in rows]) == exp, where
    return exp


def twin_tables(tmp_path, data, indexed, version=2, parts=3):
    """Our table t of `data` in `parts` data files, indexed on the columns
    `indexed`, a session over tmp_path, and DuckDB's copy of t."""
    t = hdb.Table(str(tmp_path / "t"), format_version=version)
    step = -(-data.num_rows // parts)
    for lo in range(0, data.num_rows, step):
        t.write(data.slice(lo, step))
    for c in indexed:
        t.add_index(c, progress=False)
    con = duckdb.connect()
    con.register("d0", data)
    con.execute("CREATE TABLE t AS SELECT * FROM d0")
    return t, hdb.connect(str(tmp_path)), con


def test_random_deletes_equal_duckdb(tmp_path):
    rng = random.Random(20261203)
    data = _rows(1, 300)
    t, s, con = twin_tables(tmp_path, data, ["g"])
    for step in range(25):
        cond = _cond(rng)
        want = con.execute(f"DELETE FROM t WHERE {cond}").fetchall()
        got = s.sql(f"DELETE FROM t WHERE {cond}").fetchall()
        assert got == want, (step, cond)
        same_rows(s, con, (step, cond), str(tmp_path / "t"))
        if rng.random() < 0.2:  # appends between deletes
            more = _rows(100 + step, 10).set_column(
                0, "id", pa.array(range(1000 + 10 * step, 1010 + 10 * step), pa.int64()))
            t.write(more)
            con.register("more", more)
            con.execute("INSERT INTO t SELECT * FROM more")
    assert s.sql("DELETE FROM t").fetchall() == [(con.execute("SELECT count(*) FROM t").fetchone()[0],)]
    assert len(hdb.Table(str(tmp_path / "t"))) == 0


def test_alter_table_maps_to_schema_evolution(tmp_path):
    t = hdb.Table(str(tmp_path / "t"))
    t.write(pa.table({"a": pa.array([1, 2, 3], pa.int32()), "s": ["x", "y", "z"]}))
    s = hdb.connect(str(tmp_path))
    s.sql("ALTER TABLE t ADD COLUMN b bigint, ADD COLUMN c text")
    s.sql("ALTER TABLE t RENAME COLUMN s TO s2")
    s.sql("ALTER TABLE t DROP COLUMN IF EXISTS nope, DROP COLUMN c")
    s.sql("ALTER TABLE t ADD COLUMN IF NOT EXISTS b bigint")  # exists: nothing to do
    s.sql("ALTER TABLE t ALTER COLUMN a TYPE bigint")
    fresh = hdb.Table(str(tmp_path / "t"))
    assert fresh.schema.names == ["a", "s2", "b"]
    assert fresh.schema.field("a").type == pa.int64()
    assert fresh.to_arrow().to_pydict() == {"a": [1, 2, 3], "s2": ["x", "y", "z"],
                                             "b": [None, None, None]}
    s.sql("INSERT INTO t VALUES (4, 'w', 40)")
    assert s.sql("SELECT a, b FROM t WHERE b IS NOT NULL").fetchall() == [(4, 40)]


def refused_writes_nothing(tmp_path, stmt, err, m=None):
    """`stmt` over a 3-row table t (columns a, s) and in-memory data m fails
    with an error naming `err`, and t keeps its metadata files and rows."""
    t = hdb.Table(str(tmp_path / "t"))
    t.write(pa.table({"a": pa.array([1, 2, 3], pa.int32()), "s": ["x", "y", "z"]}))
    before = os.listdir(tmp_path / "t" / "metadata")
    s = hdb.connect(str(tmp_path))
    s.register("m", m if m is not None else pa.table({"a": [1]}))
    with pytest.raises(hdb.HyperStreamError) as e:
        s.sql(stmt, [1] if "$1" in stmt else None).fetchall()
    assert err in str(e.value), str(e.value)
    assert sorted(os.listdir(tmp_path / "t" / "metadata")) == sorted(before)
    assert hdb.Table(str(tmp_path / "t")).to_arrow().to_pydict() == {"a": [1, 2, 3],
                                                                     "s": ["x", "y", "z"]}


@pytest.mark.parametrize("stmt,err", [
    ("DELETE FROM t WHERE a = $1", "parameters are not supported"),
    ("DELETE FROM t x WHERE x.a = 1", "alias"),
    ("DELETE FROM t WHERE a + 1 = 3", "arithmetic"),
    ("DELETE FROM t USING t u WHERE t.a < u.a", "equalities joining"),
    ("DELETE FROM t WHERE a = 1 RETURNING a", "RETURNING"),
    ("DELETE FROM nope WHERE a = 1", "does not exist"),
    ("DELETE FROM t WHERE nosuch = 1", "nosuch"),
    ("ALTER TABLE t ADD COLUMN q int NOT NULL", "NOTNULL"),
    ("ALTER TABLE t ADD COLUMN q int DEFAULT 3", "DEFAULT"),
    ("ALTER TABLE t DROP COLUMN nope", "nope"),
    ("ALTER TABLE t ALTER COLUMN a SET DEFAULT 3", "not supported"),
    ("ALTER TABLE t ALTER COLUMN s TYPE int", "s"),
    ("ALTER TABLE t RENAME TO u", "RENAME of TABLE"),
    ("ALTER TABLE m ADD COLUMN z int", "in-memory"),
])
def test_bad_change_statements_write_nothing(tmp_path, stmt, err):
    refused_writes_nothing(tmp_path, stmt, err)


def test_create_table_partition_by_and_with(tmp_path):
    """CREATE TABLE ... PARTITION BY (Iceberg transforms) WITH (format,
    properties): the spec, format and properties pyiceberg sees, rows
    written one data file per partition."""
    pyiceberg_table = pytest.importorskip("pyiceberg.table")
    s = hdb.connect(str(tmp_path))
    s.sql("CREATE TABLE t (a int, ts timestamp, id bigint, s text) "
          "PARTITION BY RANGE (day(ts), bucket(16, id), a, truncate(4, s)) "
          "WITH (format_version = 3, \"write.delete.mode\" = 'copy-on-write', x = true)")
    s.sql("INSERT INTO t VALUES (1, '2024-01-02 03:04:05', 7, 'hello'), "
          "(1, '2024-01-03 00:00:00', 7, 'hello'), (2, '2024-01-03 01:00:00', 8, 'hi')")
    t = hdb.Table(str(tmp_path / "t"))
    assert t.format_version == 3
    ice = pyiceberg_table.StaticTable.from_metadata(t.metadata_location)
    fields = [(f.name, str(f.transform)) for f in ice.spec().fields]
    assert fields == [("ts_day", "day"), ("id_bucket_16", "bucket[16]"), ("a", "identity"),
                      ("s_trunc_4", "truncate[4]")]
    props = ice.metadata.properties
    assert props["write.delete.mode"] == "copy-on-write" and props["x"] == "true"
    assert len(list(ice.scan().plan_files())) == 3  # three partitions
    assert sorted(ice.scan().to_arrow().column("a").to_pylist()) == [1, 1, 2]
    assert s.sql("SELECT count(*) FROM t WHERE ts >= '2024-01-03'").fetchall() == [(2,)]


@pytest.mark.parametrize("stmt,err", [
    ("CREATE TABLE u (a int) PARTITION BY HASH (a)", "bucket(N, col)"),
    ("CREATE TABLE u (a int) PARTITION BY LIST (day(a))", "day"),
    ("CREATE TABLE u (a int) PARTITION BY LIST (lower(a))", "a partition is a column"),
    ("CREATE TABLE u (a int) PARTITION BY LIST (nosuch)", "nosuch"),
    ("CREATE TABLE u (a int) WITH (format_version = 4)", "2 or 3"),
])
def test_create_table_bad_partitions_and_options(tmp_path, stmt, err):
    s = hdb.connect(str(tmp_path))
    with pytest.raises(hdb.HyperStreamError) as e:
        s.sql(stmt).fetchall()
    assert err in str(e.value), str(e.value)
    assert not (tmp_path / "u" / "metadata").exists() or not os.listdir(tmp_path / "u" / "metadata")
