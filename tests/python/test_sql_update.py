"""SQL UPDATE (src/sql/ddl_update.c): one row change per statement.

DuckDB is the oracle: the same random UPDATE statements (random SET lists
over every column type the rows hold, random WHEREs from
test_sql_changes' generator, NULLs throughout) run on a DuckDB copy of the
same rows, and after each one every row of ours (read by SQL and by a
fresh Table) equals DuckDB's, as does the count. In a v3 table every row
keeps its `_row_id` across updates and an updated row's
`_last_updated_sequence_number` is the update's. Columns SQL cannot read
(lists, structs) pass through an update untouched; what has no mapping is
refused with a clear error and writes nothing.
"""
import random

import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")

from test_sql_changes import (  # noqa: E402
    _cond, _rows, refused_writes_nothing, same_rows, twin_tables)

# SET expressions by column, each meaning the same in PostgreSQL, DuckDB and here
_SETS = {
    "v": ["v + {k}", "v * 3", "COALESCE(v, {k})", "CASE WHEN g = 'a' THEN {k} ELSE v END",
          "NULL", "-v", "abs(v)", "length(g)", "v % 7", "{k}", "CAST(id AS int)"],
    "g": ["upper(g)", "g || 'x'", "concat(g, 'y')", "NULL", "'lit''s'", "lower(g)",
          "CASE WHEN v > 0 THEN 'pos' ELSE g END", "substr(g, 1, 1)", "CAST(v AS text)"],
    "f": ["f * 2", "f + v", "COALESCE(f, 0)", "NULL", "f - id", "{k}.5", "-f"],
}


def _set_list(rng):
    cols = rng.sample(sorted(_SETS), rng.randrange(1, 4))
    return ", ".join(f"{c} = " + rng.choice(_SETS[c]).format(k=rng.randrange(-50, 50))
                     for c in cols)


@pytest.mark.parametrize("version", [2, 3])
def test_random_updates_equal_duckdb(tmp_path, version):
    rng = random.Random(20261206 + version)
    data = _rows(7, 300)
    t, s, con = twin_tables(tmp_path, data, ["g", "v"], version)
    ids0 = None
    if version == 3:
        ids0 = {r["id"]: r["_row_id"] for r in t.to_arrow(columns=["id", "_row_id"]).to_pylist()}
    for step in range(30):
        sets = _set_list(rng)
        where = "" if rng.random() < 0.1 else " WHERE " + _cond(rng)
        stmt = f"UPDATE t SET {sets}{where}"
        want = con.execute(stmt).fetchall()
        got = s.sql(stmt).fetchall()
        assert got == want, (step, stmt)
        same_rows(s, con, (step, stmt), str(tmp_path / "t") if step % 5 == 4 else None)
        if step % 5 == 4:
            fresh = hdb.Table(str(tmp_path / "t"))
            # the indexes answer on the updated rows as the data does
            k = rng.randrange(-50, 50)
            got_ids = sorted(fresh.to_arrow(filter=f"v = {k}", columns=["id"])["id"].to_pylist())
            want_ids = sorted(r[0] for r in con.execute(f"SELECT id FROM t WHERE v = {k}").fetchall())
            assert got_ids == want_ids, (step, k)
        if rng.random() < 0.15:  # appends between updates
            more = _rows(100 + step, 10).set_column(
                0, "id", pa.array(range(1000 + 10 * step, 1010 + 10 * step), pa.int64()))
            t.write(more)
            con.register("more", more)
            con.execute("INSERT INTO t SELECT * FROM more")
            if ids0 is not None:
                ids0.update({r["id"]: r["_row_id"] for r in hdb.Table(str(tmp_path / "t")).to_arrow(
                    columns=["id", "_row_id"], filter=f"id >= {1000 + 10 * step}").to_pylist()})
    if ids0 is not None:  # v3: each row kept its _row_id through every update
        now = hdb.Table(str(tmp_path / "t")).to_arrow(columns=["id", "_row_id"]).to_pylist()
        assert {r["id"]: r["_row_id"] for r in now} == ids0
        n = s.sql("UPDATE t SET v = 1 WHERE id < 10").fetchall()[0][0]
        fresh = hdb.Table(str(tmp_path / "t"))
        seq = fresh.to_arrow(columns=["id", "_last_updated_sequence_number"]).to_pylist()
        last = max(r["_last_updated_sequence_number"] for r in seq)
        assert sum(r["_last_updated_sequence_number"] == last for r in seq) == n == 10


def test_update_keeps_columns_sql_cannot_read(tmp_path):
    n = 50
    rng = random.Random(5)
    data = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "tags": pa.array([[rng.randrange(9) for _ in range(rng.randrange(3))] for _ in range(n)],
                         pa.list_(pa.int32())),
        "pt": pa.array([{"x": float(i), "y": None if i % 3 else "q"} for i in range(n)]),
        "emb": pa.array([[float(i), 1.0, 2.0, float(-i)] for i in range(n)],
                        pa.list_(pa.float32(), 4)),
        "w": pa.array([i * 1.5 for i in range(n)], pa.float32()),
    })
    t = hdb.Table(str(tmp_path / "t"))
    t.write(data)
    s = hdb.connect(str(tmp_path))
    assert s.sql("UPDATE t SET w = w * 2, emb = '[9,9,9,9]'::vector WHERE id < 20"
                 ).fetchall() == [(20,)]
    got = hdb.Table(str(tmp_path / "t")).to_arrow().sort_by("id")
    assert got.schema == data.schema
    assert got["tags"].to_pylist() == data["tags"].to_pylist()
    assert got["pt"].to_pylist() == data["pt"].to_pylist()
    want_w = [x * 2 if i < 20 else x for i, x in enumerate(data["w"].to_pylist())]
    assert got["w"].to_pylist() == want_w
    want_e = [[9.0] * 4 if i < 20 else e for i, e in enumerate(data["emb"].to_pylist())]
    assert got["emb"].to_pylist() == want_e
    # a wrong dimension is refused with the column named, nothing written
    with pytest.raises(hdb.HyperStreamError):
        s.sql("UPDATE t SET emb = '[1,2,3]'::vector WHERE id = 1").fetchall()
    with pytest.raises(hdb.HyperStreamError, match="tags"):
        s.sql("UPDATE t SET tags = NULL WHERE id = 1").fetchall()


def test_update_subqueries_parameters_and_swaps(tmp_path):
    t = hdb.Table(str(tmp_path / "t"))
    t.write(pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "a": pa.array([10, 20, 30, 40]),
                      "b": pa.array([1, 2, 3, 4])}))
    s = hdb.connect(str(tmp_path))
    # a subquery's FROM t reads the whole table as it was, not only the rows updated
    assert s.sql("UPDATE t SET a = (SELECT max(a) FROM t) WHERE id = 1").fetchall() == [(1,)]
    assert s.sql("UPDATE t SET a = b, b = a WHERE id >= 3").fetchall() == [(2,)]  # old values
    assert s.sql("UPDATE t SET b = $1 WHERE id = 2", [77]).fetchall() == [(1,)]
    assert s.sql("UPDATE t SET (a, b) = (t.b, 0) WHERE id = 2").fetchall() == [(1,)]
    assert s.sql("UPDATE t SET a = 5 WHERE id = 99").fetchall() == [(0,)]
    assert sorted(s.sql("SELECT id, a, b FROM t").fetchall()) == [
        (1, 40, 1), (2, 77, 0), (3, 3, 30), (4, 4, 40)]


@pytest.mark.parametrize("stmt,err", [
    ("UPDATE t SET a = 1 WHERE a = $1", "parameters are not supported"),
    ("UPDATE t x SET a = 1", "alias"),
    ("UPDATE t SET a = 1 FROM m WHERE t.a > m.a", "equalities joining"),
    ("UPDATE t SET a = 1 RETURNING a", "RETURNING"),
    ("UPDATE nope SET a = 1", "does not exist"),
    ("UPDATE t SET nosuch = 1", "nosuch"),
    ("UPDATE t SET a = 1, a = 2", "multiple assignments"),
    ("UPDATE t SET a = DEFAULT", "DEFAULT"),
    ("UPDATE t SET (a, s) = (SELECT 1, 'x')", "one assignment per column"),
    ("UPDATE t SET a = a / 0", "division by zero"),
    ("UPDATE t SET a = 2147483647 + a", "out of range"),
    ("UPDATE t SET a = 'x'", "integer"),
    ("UPDATE t SET a = nosuch + 1", "nosuch"),
    ("UPDATE m SET a = 1", "in-memory"),
    ("UPDATE t SET a = 1 WHERE nosuch = 1", "nosuch"),
])
def test_bad_updates_write_nothing(tmp_path, stmt, err):
    refused_writes_nothing(tmp_path, stmt, err)
