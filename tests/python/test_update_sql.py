"""Table.update(values_sql=...): columns set from SQL expressions over the
old row, checked against DuckDB computing the same UPDATE over a copy of the
table (CASE WHEN filter THEN expr ELSE col END), on random data with NULLs,
merge-on-read and copy-on-write, v2 and v3; bad expressions fail before
anything is written."""
import random

import duckdb
import pyarrow as pa
import pytest

import hyperstreamdb as hdb

# (column, expression): the same text means the same thing in PostgreSQL's
# dialect (ours) and DuckDB's for these.
EXPRS = [
    ("price", "price * 2 + 1"),
    ("price", "coalesce(price, 0) - q"),
    ("price", "CASE WHEN q % 2 = 0 THEN price / 4 ELSE -price END"),
    ("q", "q + 1"),
    ("q", "abs(q - 50)"),
    ("q", "length(name)"),
    ("name", "upper(name)"),
    ("name", "name || '-' || CAST(q AS VARCHAR)"),
    ("name", "substr(name, 2, 3)"),
    ("name", "CASE WHEN name LIKE 'a%' THEN NULL ELSE lower(name) END"),
    ("flag", "NOT flag"),
    ("flag", "q > 10 AND price < 50"),
]
FILTERS = [None, "q < 30", "id > 250 AND flag", "name IS NULL", "q >= 200"]


def _data(rng, n, base=0):
    def maybe(v):
        return None if rng.random() < 0.1 else v

    return pa.table({
        "id": pa.array(range(base, base + n), pa.int64()),
        "q": pa.array([maybe(rng.randrange(-20, 100)) for _ in range(n)], pa.int32()),
        "price": pa.array([maybe(round(rng.uniform(-100, 100), 2)) for _ in range(n)],
                          pa.float64()),
        "name": pa.array([maybe("".join(rng.choice("abcXYZ") for _ in range(rng.randrange(0, 7))))
                          for _ in range(n)], pa.string()),
        "flag": pa.array([maybe(rng.random() < 0.5) for _ in range(n)], pa.bool_()),
    })


def _duck_update(before, sets, filt):
    con = duckdb.connect()
    con.register("t", before)
    cond = "TRUE" if filt is None else f"({filt}) IS TRUE"
    cols = []
    for f in before.schema:
        if f.name in sets:
            cols.append(f"CASE WHEN {cond} THEN CAST(({sets[f.name]}) AS {_duck_type(f.type)}) "
                        f"ELSE {f.name} END AS {f.name}")
        else:
            cols.append(f.name)
    return pa.table(con.sql(f"SELECT {', '.join(cols)} FROM t ORDER BY id"))


def _duck_type(t):
    return {pa.int64(): "BIGINT", pa.int32(): "INTEGER", pa.float64(): "DOUBLE",
            pa.string(): "VARCHAR", pa.bool_(): "BOOLEAN"}[t]


@pytest.mark.parametrize("mode,version", [("merge-on-read", 2), ("copy-on-write", 2),
                                          ("merge-on-read", 3)])
def test_update_sql_matches_duckdb(tmp_path, mode, version):
    rng = random.Random(20261202 + version + len(mode))
    t = hdb.Table(tmp_path / "t", format_version=version,
                  properties={"write.update.mode": mode})
    t.write(_data(rng, 300))
    t.write(_data(rng, 200, base=300))
    for _ in range(8):
        k = rng.randrange(1, 3)
        picks = rng.sample(EXPRS, k)
        sets = {}
        for c, e in picks:
            sets.setdefault(c, e)
        filt = rng.choice(FILTERS)
        before = t.to_arrow().sort_by("id")
        want = _duck_update(before, sets, filt)
        n = t.update(values_sql=sets, filter=filt)
        got = t.to_arrow().sort_by("id")
        con = duckdb.connect()
        con.register("before", before)
        matched = con.execute(f"SELECT count(*) FROM before WHERE {filt or 'TRUE'}").fetchone()[0]
        assert n == matched, (sets, filt)
        assert got.select(want.schema.names).to_pylist() == want.to_pylist(), (sets, filt)


def test_update_sql_mixed_with_values_and_old_row_semantics(tmp_path):
    t = hdb.Table(tmp_path / "t")
    t.write(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "a": pa.array([10, 20, 30], pa.int64()),
                      "b": pa.array([1, 2, 3], pa.int64())}))
    # both expressions see the row as it was (SQL's UPDATE ... SET a = b, b = a)
    assert t.update({"id": 7}, values_sql={"a": "b", "b": "a"}, filter="id = 2") == 1
    rows = t.to_arrow().sort_by("id").to_pylist()
    assert rows == [{"id": 1, "a": 10, "b": 1}, {"id": 3, "a": 30, "b": 3},
                    {"id": 7, "a": 2, "b": 20}]


@pytest.mark.parametrize("sets,err,words", [
    ({"a": "a +"}, hdb.SqlError, ["values_sql['a']", "syntax error"]),
    ({"a": "nosuch * 2"}, hdb.SqlError, ["values_sql['a']", "nosuch"]),
    ({"a": "'text'"}, hdb.SchemaError, ["values_sql['a']", "int64"]),
    ({"zz": "1"}, hdb.SchemaError, ["no column 'zz'"]),
    ({"a": ""}, hdb.InvalidArgumentError, ["values_sql['a']"]),
    ({"a": 5}, hdb.InvalidArgumentError, ["values_sql['a']"]),
])
def test_update_sql_bad_expression_writes_nothing(tmp_path, sets, err, words):
    t = hdb.Table(tmp_path / "t")
    t.write(pa.table({"id": pa.array([1, 2], pa.int64()), "a": pa.array([1, 2], pa.int64())}))
    snap = t.current_snapshot_id
    with pytest.raises(err) as e:
        t.update(values_sql=sets)
    for w in words:
        assert w in str(e.value)
    assert t.current_snapshot_id == snap
    assert t.to_arrow().sort_by("id").column("a").to_pylist() == [1, 2]


def test_update_sql_same_column_twice_refused(tmp_path):
    t = hdb.Table(tmp_path / "t")
    t.write(pa.table({"id": pa.array([1], pa.int64())}))
    with pytest.raises(hdb.InvalidArgumentError, match="both values and values_sql"):
        t.update({"id": 1}, values_sql={"id": "id + 1"})
    with pytest.raises(hdb.InvalidArgumentError, match="non-empty"):
        t.update()
