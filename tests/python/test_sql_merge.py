"""SQL MERGE INTO (src/sql/ddl_merge.c): one row change per statement.

DuckDB is the oracle: random MERGE statements (1-4 WHEN clauses of every
kind, random AND conditions over target and source columns, NULLs in keys
and values) run on DuckDB copies of the same random target and source, and
after each one every row of ours (read by SQL and by a fresh Table) equals
DuckDB's, as does the count. The source's keys are unique there: DuckDB
updates a target row once per matching source row, where PostgreSQL (and
we) refuse with "cannot affect row a second time" — checked on its own, as
are the refusals, each writing nothing.
"""
import os
import random

import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")

from test_sql_changes import (  # noqa: E402
    _rows, _sorted, refused_writes_nothing, same_rows, twin_tables)


def _source(rng, n, lo, hi):
    ids = rng.sample(range(lo, hi), n)

    def maybe(v):
        return None if rng.random() < 0.15 else v

    return pa.table({
        "id": pa.array([maybe(i) for i in ids], pa.int64()),
        "g": pa.array([maybe(rng.choice(["a", "b", "z"])) for _ in ids]),
        "v": pa.array([maybe(rng.randrange(-100, 100)) for _ in ids], pa.int32()),
    })


def _cond(rng, matched):
    source = [f"s.v > {rng.randrange(-100, 100)}", "s.g = 'a'", "s.v IS NULL OR s.g = 'b'",
              f"s.id < {rng.randrange(0, 400)}"]
    both = ["t.v IS NULL", f"t.v < s.v + {rng.randrange(-20, 20)}",
            "t.g IS NOT DISTINCT FROM s.g", f"t.f > {rng.uniform(-10, 10):.2f}",
            "s.v IS NULL OR t.g = 'b'"]
    return rng.choice(source + both if matched else source)


def _when(rng):
    clauses, closed = [], set()  # a kind after its unconditional clause is unreachable
    for _ in range(rng.randrange(1, 5)):
        matched = rng.random() < 0.55
        cond = f" AND {_cond(rng, matched)}" if rng.random() < 0.6 else ""
        if matched in closed:
            continue
        if not cond:
            closed.add(matched)
        if matched:
            act = rng.choice([
                "UPDATE SET v = s.v", "UPDATE SET v = t.v + 1, g = s.g",
                "UPDATE SET f = COALESCE(t.f, 0) * 2, g = upper(t.g)", "DELETE", "DO NOTHING"])
            clauses.append(f"WHEN MATCHED{cond} THEN {act}")
        else:
            act = rng.choice([
                "INSERT (id, g, v) VALUES (s.id, s.g, s.v)",
                "INSERT VALUES (s.id, s.g, s.v * 2, 0.5)",
                "INSERT (v, id) VALUES (s.v, s.id)", "DO NOTHING"])
            clauses.append(f"WHEN NOT MATCHED{cond} THEN {act}")
    return " ".join(clauses)


@pytest.mark.parametrize("version", [2, 3])
def test_random_merges_equal_duckdb(tmp_path, version):
    rng = random.Random(20261206 + version)
    data = _rows(11, 300)
    t, s, con = twin_tables(tmp_path, data, ["id"], version)
    next_id = 300
    for step in range(30):
        src = _source(rng, rng.randrange(1, 40), 0, next_id + 50)
        next_id += 50
        s.register("src", src)
        con.register("src", src)
        stmt = f"MERGE INTO t USING src AS s ON t.id = s.id {_when(rng)}"
        lin = ["id", "_row_id"]
        before = {r["id"]: r["_row_id"] for r in s.sql(f"SELECT {', '.join(lin)} FROM t")
                  .to_arrow().to_pylist()} if version == 3 else {}
        want = con.execute(stmt).fetchall()
        got = s.sql(stmt).fetchall()
        assert got == want, (step, stmt)
        if version == 3:  # a row there before and after (kept or updated) keeps its _row_id
            after = {r["id"]: r["_row_id"] for r in hdb.Table(str(tmp_path / "t")).to_arrow(
                columns=lin).to_pylist()}
            assert len(set(after.values())) == len(after), (step, stmt)
            assert {k: v for k, v in after.items() if k in before and k is not None} == \
                {k: before[k] for k in after if k in before and k is not None}, (step, stmt)
        same_rows(s, con, (step, stmt), str(tmp_path / "t") if step % 5 == 4 else None)
        if step % 5 == 4:
            fresh = hdb.Table(str(tmp_path / "t"))
            k = rng.randrange(0, next_id)  # the id index answers on merged rows
            assert sorted(fresh.to_arrow(filter=f"id = {k}", columns=["v"])["v"].to_pylist(),
                          key=str) == sorted([r[0] for r in con.execute(
                              f"SELECT v FROM t WHERE id = {k}").fetchall()], key=str)


def test_merge_from_a_table_and_a_subquery(tmp_path):
    t = hdb.Table(str(tmp_path / "t"))
    t.write(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": pa.array([10, 20, 30])}))
    u = hdb.Table(str(tmp_path / "u"))
    u.write(pa.table({"id": pa.array([2, 3, 4], pa.int64()), "v": pa.array([200, 300, 400])}))
    s = hdb.connect(str(tmp_path))
    assert s.sql("MERGE INTO t USING u ON t.id = u.id WHEN MATCHED AND u.v > 250 THEN DELETE "
                 "WHEN MATCHED THEN UPDATE SET v = t.v + u.v "
                 "WHEN NOT MATCHED THEN INSERT VALUES (u.id, u.v)").fetchall() == [(3,)]
    assert sorted(s.sql("SELECT id, v FROM t").fetchall()) == [(1, 10), (2, 220), (4, 400)]
    # a subquery source, keys computed, a target alias; nothing matched: nothing deleted
    assert s.sql("MERGE INTO t AS x USING (SELECT id + 100 AS k, v FROM u) AS q ON x.id = q.k "
                 "WHEN MATCHED THEN DELETE "
                 "WHEN NOT MATCHED AND q.v < 300 THEN INSERT (id, v) VALUES (q.k, -q.v)"
                 ).fetchall() == [(1,)]
    assert sorted(s.sql("SELECT id, v FROM t").fetchall()) == [
        (1, 10), (2, 220), (4, 400), (102, -200)]


@pytest.mark.parametrize("kind", ["update", "delete"])
def test_join_changes_are_merges(tmp_path, kind):
    """UPDATE t SET ... FROM s WHERE t.k = s.k [AND ...] (key columns may be
    set too) and DELETE FROM t USING s WHERE ...: PostgreSQL's join changes,
    each run as one WHEN MATCHED [AND ...] THEN UPDATE / DELETE, DuckDB as
    the oracle."""
    rng = random.Random(9 if kind == "update" else 12)
    data = _rows(21, 200)
    t, s, con = twin_tables(tmp_path, data, [], parts=2)
    for step in range(12):
        src = _source(rng, rng.randrange(1, 30), 0, 260)
        s.register("src", src)
        con.register("src", src)
        extra = rng.choice(["", " AND src.v > 0", " AND t.g IS NOT NULL", " AND t.v < src.v"])
        sets = rng.choice(["v = src.v", "g = src.g, f = t.f * 2", "v = t.v + src.v",
                           "id = src.id + 1000"])
        stmt = (f"UPDATE t SET {sets} FROM src WHERE t.id = src.id{extra}" if kind == "update"
                else f"DELETE FROM t USING src WHERE t.id = src.id{extra}")
        assert s.sql(stmt).fetchall() == con.execute(stmt).fetchall(), stmt
        same_rows(s, con, stmt)
    head = "UPDATE t SET v = 1 FROM" if kind == "update" else "DELETE FROM t USING"
    with pytest.raises(hdb.HyperStreamError, match="equalities joining"):
        s.sql(f"{head} src WHERE t.id < src.id").fetchall()
    with pytest.raises(hdb.HyperStreamError, match="one table or subquery"):
        s.sql(f"{head} src, src AS b WHERE t.id = src.id").fetchall()


def test_a_target_row_affected_twice_is_refused(tmp_path):
    t = hdb.Table(str(tmp_path / "t"))
    t.write(pa.table({"id": pa.array([1, 2], pa.int64()), "v": pa.array([1, 2])}))
    s = hdb.connect(str(tmp_path))
    s.register("dup", pa.table({"id": pa.array([1, 1, 2], pa.int64()), "v": [5, 6, 7]}))
    before = sorted(os.listdir(tmp_path / "t" / "metadata"))
    with pytest.raises(hdb.HyperStreamError, match="cannot affect row a second time"):
        s.sql("MERGE INTO t USING dup ON t.id = dup.id WHEN MATCHED THEN UPDATE SET v = dup.v"
              ).fetchall()
    # DO NOTHING for the duplicate pairs is fine, as in PostgreSQL
    assert s.sql("MERGE INTO t USING dup ON t.id = dup.id WHEN MATCHED AND t.id = 1 THEN DO "
                 "NOTHING WHEN MATCHED THEN UPDATE SET v = dup.v").fetchall() == [(1,)]
    assert sorted(s.sql("SELECT id, v FROM t").fetchall()) == [(1, 1), (2, 7)]
    assert sorted(os.listdir(tmp_path / "t" / "metadata")) != before
    # target rows sharing a key must change together (the change replaces by key)
    t.write(pa.table({"id": pa.array([2], pa.int64()), "v": pa.array([8])}))
    s.register("one", pa.table({"id": pa.array([2], pa.int64())}))
    with pytest.raises(hdb.HyperStreamError, match="sharing a key"):
        s.sql("MERGE INTO t USING one ON t.id = one.id WHEN MATCHED AND t.v = 7 THEN DELETE"
              ).fetchall()
    assert s.sql("MERGE INTO t USING one ON t.id = one.id WHEN MATCHED THEN UPDATE SET v = 0"
                 ).fetchall() == [(2,)]
    assert sorted(s.sql("SELECT id, v FROM t").fetchall()) == [(1, 1), (2, 0), (2, 0)]


@pytest.mark.parametrize("stmt,err", [
    ("MERGE INTO t USING m ON t.a > m.a WHEN MATCHED THEN DELETE", "equalities"),
    ("MERGE INTO t USING m ON t.a = m.a AND m.a > 0 WHEN MATCHED THEN DELETE", "equalities"),
    ("MERGE INTO t USING m ON t.a = m.a WHEN MATCHED THEN UPDATE SET nosuch = 1", "nosuch"),
    ("MERGE INTO t USING m ON t.a = m.a WHEN MATCHED THEN UPDATE SET s = m.nosuch", "nosuch"),
    ("MERGE INTO t USING m ON t.a = m.a WHEN NOT MATCHED THEN INSERT (a, a) VALUES (1, 2)",
     "more than once"),
    ("MERGE INTO t USING m ON t.a = m.a WHEN NOT MATCHED THEN INSERT (a) VALUES (1, 2)",
     "more expressions"),
    ("MERGE INTO t USING m ON t.a = m.a WHEN NOT MATCHED THEN INSERT VALUES (m.a, 1 / 0)",
     "division by zero"),
    ("MERGE INTO t USING m ON t.a = m.a WHEN NOT MATCHED THEN INSERT DEFAULT VALUES", "DEFAULT"),
    ("MERGE INTO t USING m ON t.a = m.a WHEN MATCHED THEN DELETE WHEN MATCHED AND m.a = 1 THEN "
     "DO NOTHING", "unreachable"),
    ("MERGE INTO t USING m ON t.a = m.a WHEN NOT MATCHED AND t.s = 'x' THEN DO NOTHING",
     "FROM-clause entry"),
    ("MERGE INTO t USING m ON t.a = m.a WHEN NOT MATCHED THEN INSERT VALUES (m.a, t.s)",
     "FROM-clause entry"),
    ("MERGE INTO nope USING m ON nope.a = m.a WHEN MATCHED THEN DELETE", "does not exist"),
    ("MERGE INTO t USING nope ON t.a = nope.a WHEN MATCHED THEN DELETE", "nope"),
    ("MERGE INTO m USING t ON m.a = t.a WHEN MATCHED THEN DELETE", "in-memory"),
])
def test_bad_merges_write_nothing(tmp_path, stmt, err):
    refused_writes_nothing(tmp_path, stmt, err, m=pa.table({"a": pa.array([1, 4], pa.int32())}))


def test_v3_lineage_columns_are_hidden(tmp_path):
    """A v3 table's _row_id / _last_updated_sequence_number: readable by
    name, not in *, and not joined on by NATURAL JOIN."""
    a = hdb.Table(str(tmp_path / "a"), format_version=3)
    a.write(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "x": pa.array([10, 20, 30])}))
    b = hdb.Table(str(tmp_path / "b"), format_version=3)
    b.write(pa.table({"id": pa.array([3, 2], pa.int64()), "y": pa.array([300, 200])}))
    s = hdb.connect(str(tmp_path))
    assert s.sql("SELECT * FROM a").to_arrow().column_names == ["id", "x"]
    assert sorted(s.sql("SELECT id, _row_id FROM a").fetchall()) == [(1, 0), (2, 1), (3, 2)]
    # b's row ids are 0 and 1: joined on them too, id 3 (a's row 2) would vanish
    assert sorted(s.sql("SELECT * FROM a NATURAL JOIN b").fetchall()) == [(2, 20, 200),
                                                                          (3, 30, 300)]
    with pytest.raises(hdb.HyperStreamError, match="ambiguous"):
        s.sql("SELECT _row_id FROM a JOIN b ON a.id = b.id").fetchall()


def test_v3_lineage_in_a_knn_query(tmp_path):
    """A kNN query that reads _row_id sorts exactly (the vector search reads
    table columns only); without it the index answers."""
    import numpy as np

    rng = np.random.default_rng(3)
    x = rng.random((400, 8), dtype=np.float32)
    t = hdb.Table(str(tmp_path / "v"), format_version=3)
    t.write(pa.table({"id": pa.array(np.arange(400)), "c": pa.array(np.arange(400) % 5),
                      "emb": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), 8)}))
    s = hdb.connect(str(tmp_path))
    q = x[7] + 0.01
    want = np.argsort(((x - q) ** 2).sum(1))[:5].tolist()
    got = s.sql("SELECT id, _row_id FROM v ORDER BY emb <-> $1 LIMIT 5", [q]).fetchall()
    assert [r[0] for r in got] == want and all(r[0] == r[1] for r in got)
    plan = "\n".join(r[0] for r in s.sql("EXPLAIN SELECT id FROM v ORDER BY emb <-> $1 LIMIT 5",
                                           [q]).fetchall())
    assert "VectorTopK" in plan, plan


def test_insert_on_conflict_equals_duckdb(tmp_path):
    """INSERT ... ON CONFLICT (id) DO UPDATE SET ... [WHERE] | DO NOTHING,
    run as a MERGE, against DuckDB's own ON CONFLICT on a PRIMARY KEY copy
    (DuckDB needs the key NOT NULL, so the ids are)."""
    rng = random.Random(31)
    t = hdb.Table(str(tmp_path / "t"))
    t.write(pa.table({"id": pa.array(range(0, 60, 2), pa.int64()),
                      "v": pa.array([rng.randrange(100) for _ in range(30)], pa.int32()),
                      "g": pa.array([rng.choice(["a", "b", None]) for _ in range(30)])}))
    s = hdb.connect(str(tmp_path))
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, v INTEGER, g VARCHAR)")
    con.register("d0", hdb.Table(str(tmp_path / "t")).to_arrow())
    con.execute("INSERT INTO t SELECT * FROM d0")
    for step in range(20):
        ids = rng.sample(range(80), rng.randrange(1, 8))
        gs = ["NULL", "'x'", "'y'"]
        vals = ", ".join(f"({i}, {rng.randrange(100)}, {rng.choice(gs)})" for i in ids)
        action = rng.choice([
            "DO NOTHING", "DO UPDATE SET v = excluded.v",
            "DO UPDATE SET v = t.v + excluded.v, g = excluded.g",
            "DO UPDATE SET g = excluded.g WHERE t.v > 50",
            "DO UPDATE SET v = excluded.v WHERE excluded.g IS NOT NULL"])
        stmt = f"INSERT INTO t VALUES {vals} ON CONFLICT (id) {action}"
        assert s.sql(stmt).fetchall() == con.execute(stmt).fetchall(), stmt
        exp = _sorted(con.execute("SELECT id, v, g FROM t").fetchall())
        assert _sorted(s.sql("SELECT id, v, g FROM t").fetchall()) == exp, stmt
    # a column list, and the rows from a SELECT
    stmt = "INSERT INTO t (g, id) SELECT g, id + 100 FROM t WHERE id < 20 ON CONFLICT (id) DO NOTHING"
    assert s.sql(stmt).fetchall() == con.execute(stmt).fetchall()
    assert _sorted(s.sql("SELECT id, v, g FROM t").fetchall()) == \
        _sorted(con.execute("SELECT id, v, g FROM t").fetchall())
    with pytest.raises(hdb.HyperStreamError, match="cannot affect row a second time"):
        s.sql("INSERT INTO t VALUES (2, 1, 'a'), (2, 3, 'b') ON CONFLICT (id) DO UPDATE "
              "SET v = excluded.v").fetchall()
    with pytest.raises(hdb.HyperStreamError, match="same conflict key"):
        s.sql("INSERT INTO t VALUES (999, 1, 'a'), (999, 3, 'b') ON CONFLICT (id) DO NOTHING"
              ).fetchall()
    with pytest.raises(hdb.HyperStreamError, match="name the conflict columns"):
        s.sql("INSERT INTO t VALUES (1, 1, 'a') ON CONFLICT DO NOTHING").fetchall()
    # NULL keys never conflict (PostgreSQL): both rows go in
    assert s.sql("INSERT INTO t VALUES (NULL, 1, 'n'), (NULL, 2, 'n') ON CONFLICT (id) DO "
                 "NOTHING").fetchall() == [(2,)]


def test_explain_of_merges_shows_the_join_and_writes_nothing(tmp_path):
    t = hdb.Table(str(tmp_path / "t"))
    t.write(pa.table({"id": pa.array(range(5000), pa.int64()), "v": pa.array(range(5000))}))
    t.add_index("id", progress=False)
    s = hdb.connect(str(tmp_path))
    s.register("src", pa.table({"id": pa.array([5, 77, 9000], pa.int64()), "v": [1, 2, 3]}))
    before = sorted(os.listdir(tmp_path / "t" / "metadata"))
    for stmt in ["MERGE INTO t USING src ON t.id = src.id WHEN MATCHED THEN UPDATE SET v = src.v "
                 "WHEN NOT MATCHED THEN INSERT VALUES (src.id, src.v)",
                 "UPDATE t SET v = 0 FROM src WHERE t.id = src.id",
                 "DELETE FROM t USING src WHERE t.id = src.id AND src.v > 1"]:
        plan = "\n".join(r[0] for r in s.sql("EXPLAIN " + stmt).fetchall())
        assert "IndexNestedLoopJoin" in plan and "index on id" in plan, plan
    with pytest.raises(hdb.HyperStreamError, match="EXPLAIN ANALYZE"):
        s.sql("EXPLAIN ANALYZE MERGE INTO t USING src ON t.id = src.id WHEN MATCHED THEN DELETE"
              ).fetchall()
    # the changes without a join have no query plan to show: a clear refusal, nothing written
    for stmt, what in [("UPDATE t SET v = 0 WHERE id = 5", "UPDATE without FROM"),
                       ("DELETE FROM t WHERE id = 5", "DELETE without USING"),
                       ("INSERT INTO t VALUES (1, 2)", "EXPLAIN of INSERT")]:
        with pytest.raises(hdb.HyperStreamError, match=what):
            s.sql("EXPLAIN " + stmt).fetchall()
    assert sorted(os.listdir(tmp_path / "t" / "metadata")) == before
    assert len(hdb.Table(str(tmp_path / "t"))) == 5000
