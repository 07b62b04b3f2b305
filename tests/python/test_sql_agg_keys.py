"""A GROUP BY joined on its group key reads only the keys the other side's
table scan has (src/sql/optimize_aggkeys.c): TPC-H Q17's shape, where a
correlated scalar aggregate becomes a left join of the subquery grouped by
part, and the parts a small filtered scan keeps semi join the aggregate's
input. Random tables (NULL keys, keys without partners on either side,
empty groups), queries of that shape against DuckDB, with the rewrite on
and off (HS_SQL_AGG_KEYS=0, read per statement); EXPLAIN shows the semi
join under the aggregate only where the copied scan is small.
"""
import random

import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")


def _key(row):
    return tuple((x is None, x) for x in row)


def _rows(tbl):
    cols = [c.to_pylist() for c in tbl.columns]
    return sorted(zip(*cols), key=_key) if cols else []


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    rng = random.Random(17)
    root = tmp_path_factory.mktemp("aggkeys")
    n_dim, n_fact = 2000, 20000

    def maybe(v, pct=3):
        return None if rng.randrange(100) < pct else v

    tabs = {
        "dim": pa.table({
            "d_id": pa.array([maybe(i) for i in range(n_dim)], pa.int64()),
            "d_tag": pa.array([rng.choice(["a", "b", "c", "d"]) + str(rng.randrange(40))
                               for _ in range(n_dim)]),
        }),
        "fact": pa.table({
            "f_d": pa.array([maybe(rng.randrange(n_dim + 50)) for _ in range(n_fact)], pa.int64()),
            "f_q": pa.array([maybe(rng.randrange(1, 50)) for _ in range(n_fact)], pa.int32()),
            "f_v": pa.array([rng.randrange(0, 100_000) for _ in range(n_fact)], pa.int64()),
        }),
    }
    s = hdb.Session()
    d = duckdb.connect()
    for name, tbl in tabs.items():
        t = hdb.Table(root / name)
        t.write(tbl)
        s.register(name, t)
        d.register(name, tbl)
    return s, d


QUERIES = [
    # Q17: a correlated scalar aggregate per dimension row
    "SELECT sum(f_v) FROM fact, dim WHERE d_id = f_d AND d_tag = 'a7' "
    "AND f_q < (SELECT 0.5 * avg(f_q) FROM fact f2 WHERE f2.f_d = d_id)",
    "SELECT d_id, count(*) FROM fact, dim WHERE d_id = f_d AND d_tag IN ('b3', 'c9') "
    "AND f_v > (SELECT avg(f_v) FROM fact f2 WHERE f2.f_d = dim.d_id) GROUP BY d_id",
    # an explicit left join to a grouped derived table: empty groups stay NULL
    "SELECT d_id, d_tag, g.n, g.s FROM dim LEFT JOIN (SELECT f_d, count(*) AS n, sum(f_q) AS s "
    "FROM fact GROUP BY f_d) g ON g.f_d = d_id WHERE d_tag = 'd1'",
    "SELECT d_id, g.m FROM dim JOIN (SELECT f_d, max(f_v) AS m FROM fact WHERE f_q > 10 "
    "GROUP BY f_d) g ON g.f_d = d_id WHERE d_tag LIKE 'a1%'",
    # Q20: the outer key is also a semi join's key, whose small side is copied
    "SELECT count(*), sum(f_v) FROM fact f1 WHERE f1.f_d IN (SELECT d_id FROM dim "
    "WHERE d_tag = 'c5') AND f1.f_v > (SELECT 0.8 * avg(f_v) FROM fact f2 WHERE f2.f_d = f1.f_d)",
    # an unfiltered dimension: no copy (it is not smaller than the groups)
    "SELECT count(*), sum(g.n) FROM dim JOIN (SELECT f_d, count(*) AS n FROM fact GROUP BY f_d) g "
    "ON g.f_d = d_id",
]


def _plan(s, sql):
    return "\n".join(str(r[0]) for r in s.sql("EXPLAIN " + sql).fetchall())


def test_grouped_side_filtered_by_keys_matches_duckdb(lake, monkeypatch):
    s, d = lake
    for sql in QUERIES:
        duck = sorted(d.execute(sql).fetchall(), key=_key)
        ours = _rows(s.sql(sql).to_arrow())
        assert len(ours) == len(duck), sql
        for a, b in zip(ours, duck):
            assert a == pytest.approx(b), sql
        monkeypatch.setenv("HS_SQL_AGG_KEYS", "0")
        off = _rows(s.sql(sql).to_arrow())
        monkeypatch.delenv("HS_SQL_AGG_KEYS")
        assert off == ours, sql


def test_explain_shows_the_semi_join_under_the_aggregate(lake, monkeypatch):
    s, _ = lake
    for sql, want in zip(QUERIES, [True, True, True, True, True, False]):
        lines = _plan(s, sql).splitlines()
        agg = [i for i, ln in enumerate(lines) if "HashAggregate keys=[f_d]" in ln]
        assert agg, lines
        below = lines[agg[-1] + 1] if agg[-1] + 1 < len(lines) else ""
        assert ("HashJoin semi" in below) == want, (sql, lines)
    monkeypatch.setenv("HS_SQL_AGG_KEYS", "0")
    assert "HashJoin semi" not in _plan(s, QUERIES[0])
