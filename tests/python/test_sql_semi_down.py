"""Semi joins moved below inner joins to the input their keys come from
(src/sql/optimize_semi.c) against DuckDB.

Random fact / dimension / supplier tables (NULL keys, duplicates), queries
joining them with IN / EXISTS subqueries whose keys and correlation
conditions read one of the joined tables (or several: then the semi join
stays), with residual conditions, projections of the FROM columns and
aggregates above. Every result must be DuckDB's multiset of rows, and the
same with the optimizer's reordering passes off (HS_SQL_JOIN_ORDER=0).
EXPLAIN must show the semi join below the inner join when it moves.
"""
import os
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
def setup(tmp_path_factory):
    rng = random.Random(1518)
    root = tmp_path_factory.mktemp("semi")

    def maybe(v, pct=6):
        return None if rng.randrange(100) < pct else v

    nf, nd, ns = 4000, 300, 40
    tables = {
        "fact": pa.table({
            "f_id": pa.array(range(nf), pa.int64()),
            "f_d": pa.array([maybe(rng.randrange(nd + 5)) for _ in range(nf)], pa.int64()),
            "f_s": pa.array([maybe(rng.randrange(ns)) for _ in range(nf)], pa.int32()),
            "f_q": pa.array([rng.randrange(50) for _ in range(nf)], pa.int32()),
        }),
        "dim": pa.table({
            "d_id": pa.array(range(nd), pa.int64()),
            "d_s": pa.array([maybe(rng.randrange(ns)) for _ in range(nd)], pa.int32()),
            "d_name": pa.array([rng.choice(["red", "green", "blue"]) for _ in range(nd)]),
        }),
        "sup": pa.table({
            "s_id": pa.array(range(ns), pa.int32()),
            "s_r": pa.array([rng.randrange(4) for _ in range(ns)], pa.int32()),
        }),
    }
    s = hdb.Session()
    d = duckdb.connect()
    for name, tbl in tables.items():
        t = hdb.Table(str(root / name))
        t.write(tbl)
        s.register(name, t)
        d.register(name, tbl)
    return s, d


SUBS = [  # (the semi condition, tables whose columns it reads)
    ("f_d IN (SELECT d_id FROM dim WHERE d_name = 'red')", {"fact"}),
    ("d_id IN (SELECT f_d FROM fact WHERE f_q < 3)", {"dim"}),
    ("EXISTS (SELECT 1 FROM fact f2 WHERE f2.f_d = d_id AND f2.f_q > 45)", {"dim"}),
    ("EXISTS (SELECT 1 FROM sup WHERE s_id = f_s AND s_r = 1)", {"fact"}),
    ("f_s IN (SELECT s_id FROM sup WHERE s_r <> 2)", {"fact"}),
    ("EXISTS (SELECT 1 FROM sup WHERE s_id = f_s AND s_r > f_q % 4)", {"fact"}),
    ("EXISTS (SELECT 1 FROM sup WHERE s_id = d_s AND s_r = f_q % 4)", {"fact", "dim"}),
    ("d_s IN (SELECT s_id FROM sup WHERE s_r = 0)", {"dim"}),
    ("f_d IN (SELECT f_d FROM fact GROUP BY f_d HAVING sum(f_q) > 200)", {"fact"}),
]
FROMS = [
    "fact, dim WHERE f_d = d_id",
    "dim, fact WHERE d_id = f_d AND f_q > 10",
    "fact JOIN dim ON f_d = d_id JOIN sup ON d_s = s_id",
    "fact, dim, sup WHERE f_d = d_id AND f_s = s_id",
]
SELS = ["f_id, d_name", "count(*)", "d_name, sum(f_q)", "f_id, f_q, d_id"]


def _run(s, q, order):
    old = os.environ.get("HS_SQL_JOIN_ORDER")
    if order:
        os.environ.pop("HS_SQL_JOIN_ORDER", None)
    else:
        os.environ["HS_SQL_JOIN_ORDER"] = "0"
    try:
        return s.sql(q).to_arrow()
    finally:
        if old is None:
            os.environ.pop("HS_SQL_JOIN_ORDER", None)
        else:
            os.environ["HS_SQL_JOIN_ORDER"] = old


def test_random_semi_joins_over_inner_joins(setup):
    s, d = setup
    rng = random.Random(18)
    for _ in range(70):
        frm = rng.choice(FROMS)
        conds = rng.sample(SUBS, rng.randrange(1, 3))
        where = " AND ".join(c for c, _ in conds)
        sel = rng.choice(SELS)
        group = " GROUP BY d_name" if sel.startswith("d_name,") else ""
        q = f"SELECT {sel} FROM {frm} {'AND' if 'WHERE' in frm else 'WHERE'} {where}{group}"
        want = _rows(d.sql(q).to_arrow_table())
        assert _rows(_run(s, q, True)) == want, q
        assert _rows(_run(s, q, False)) == want, q


def test_semi_join_moves_onto_its_table(setup):
    s, _ = setup
    q = ("SELECT f_id, d_name FROM fact, dim WHERE f_d = d_id "
         "AND d_id IN (SELECT f_d FROM fact WHERE f_q < 3)")
    plan = s.sql("EXPLAIN " + q).to_arrow().column(0).to_pylist()
    semi = [i for i, ln in enumerate(plan) if "semi" in ln]
    inner = [i for i, ln in enumerate(plan) if "HashJoin inner" in ln]
    assert semi and inner and semi[0] > inner[0], "\n".join(plan)
    # reading both joined tables: it stays above the inner join
    q = ("SELECT count(*) FROM fact, dim WHERE f_d = d_id AND EXISTS "
         "(SELECT 1 FROM sup WHERE s_id = d_s AND s_r = f_q % 4)")
    plan = s.sql("EXPLAIN " + q).to_arrow().column(0).to_pylist()
    semi = [i for i, ln in enumerate(plan) if "semi" in ln]
    inner = [i for i, ln in enumerate(plan) if "HashJoin inner" in ln]
    assert semi and inner and semi[0] < inner[0], "\n".join(plan)
