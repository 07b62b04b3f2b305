"""Inner joins reordered from row estimates (src/sql/optimize_order.c)
against DuckDB.

Random star/chain schemas (a fact table and dimensions of very different
sizes, some as table folders so the snapshot summary gives their size,
some registered in memory), queried with the FROM list in random orders,
with WHERE conditions that chain the tables (single and composite keys,
residual conditions across tables, filters on single tables, a condition
on three tables, constants) and JOIN ... ON forms mixed in: every query
must give DuckDB's multiset of rows, and the same rows with reordering
off (HS_SQL_JOIN_ORDER=0 is read per statement). EXPLAIN must show the
fact table probed, not built, when it is written first or last, and an OR
across tables sending each table's scan what it implies about that table.
"""
import decimal
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


def _tables(rng):
    nd = rng.randrange(5, 40)
    ns = rng.randrange(3, 15)
    nf = rng.randrange(200, 3000)

    def maybe(v, pct=5):
        return None if rng.randrange(100) < pct else v

    dim = pa.table({
        "d_id": pa.array(range(nd), pa.int64()),
        "d_name": pa.array([rng.choice(["red", "green", "blue", "it's"]) for _ in range(nd)]),
        "d_s": pa.array([maybe(rng.randrange(ns)) for _ in range(nd)], pa.int64()),
    })
    sup = pa.table({
        "s_id": pa.array(range(ns), pa.int64()),
        "s_region": pa.array([rng.randrange(3) for _ in range(ns)], pa.int32()),
    })
    pairs = pa.table({
        "p_d": pa.array([rng.randrange(nd) for _ in range(nd * 2)], pa.int64()),
        "p_s": pa.array([rng.randrange(ns) for _ in range(nd * 2)], pa.int64()),
        "p_cost": pa.array([rng.randrange(1000) for _ in range(nd * 2)], pa.int32()),
    })
    fact = pa.table({
        "f_id": pa.array(range(nf), pa.int64()),
        "f_d": pa.array([maybe(rng.randrange(nd + 2)) for _ in range(nf)], pa.int64()),
        "f_s": pa.array([maybe(rng.randrange(ns)) for _ in range(nf)], pa.int64()),
        "f_qty": pa.array([rng.randrange(50) for _ in range(nf)], pa.int32()),
    })
    return {"dim": dim, "sup": sup, "pairs": pairs, "fact": fact}


CONDS = [  # (tables it needs, condition)
    ({"fact", "dim"}, "f_d = d_id"),
    ({"fact", "sup"}, "f_s = s_id"),
    ({"dim", "sup"}, "d_s = s_id"),
    ({"pairs", "fact"}, "p_d = f_d AND p_s = f_s"),
    ({"pairs", "dim"}, "p_d = d_id"),
]
FILTERS = {
    "dim": ["d_name = 'green'", "d_name LIKE '%e%'", "d_id < 10"],
    "sup": ["s_region = 1", "s_region <> 2"],
    "pairs": ["p_cost > 500", "p_cost BETWEEN 100 AND 600"],
    "fact": ["f_qty < 10", "f_qty >= 25"],
}


def _query(rng):
    """A connected set of tables, its conditions and filters, in a random FROM order."""
    names = ["fact", "dim", "sup", "pairs"]
    chosen = {"fact"}
    conds = []
    want = rng.randrange(2, 5)
    while len(chosen) < want:
        c = rng.choice(CONDS)
        t = c[0]
        if len(t & chosen) == 1 and len(t - chosen) == 1:
            chosen |= t
            conds.append(c[1])
    for c in CONDS:  # extra conditions over chosen tables (cycles) now and then
        if c[0] <= chosen and c[1] not in conds and rng.random() < 0.3:
            conds.append(c[1])
    for t in chosen:
        if rng.random() < 0.5:
            conds.append(rng.choice(FILTERS[t]))
    if {"fact", "dim", "sup"} <= chosen and rng.random() < 0.3:
        conds.append("f_qty + s_region < d_id + 30")  # three tables, not an equality
    if "sup" in chosen and "dim" in chosen and rng.random() < 0.3:
        conds.append("(s_region = 0 OR d_name = 'red')")  # two tables, residual
    if "sup" in chosen and "dim" in chosen and rng.random() < 0.3:
        # Q7's shape: each side gets what the OR implies about it alone
        conds.append("((d_name = 'green' AND s_region = 1) OR "
                     "(d_name IN ('red', 'it''s') AND s_region = 0 AND d_id > 3))")
    order = [n for n in names if n in chosen]
    rng.shuffle(order)
    cols = []
    for t in order:
        cols += {"fact": ["f_id", "f_qty"], "dim": ["d_name"], "sup": ["s_region"],
                 "pairs": ["p_cost"]}[t]
    rng.shuffle(conds)
    if rng.random() < 0.3 and len(order) >= 2 and conds:
        # JOIN ... ON form: the first condition on the first join
        frm = f"{order[0]} JOIN {order[1]} ON TRUE" + "".join(f", {t}" for t in order[2:])
    else:
        frm = ", ".join(order)
    where = " AND ".join(conds) if conds else "TRUE"
    return f"SELECT {', '.join(cols)} FROM {frm} WHERE {where}"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    rng = random.Random(20261203)
    root = tmp_path_factory.mktemp("joinorder")
    tabs = _tables(rng)
    s = hdb.Session()
    d = duckdb.connect()
    for name, tbl in tabs.items():
        if name in ("fact", "sup"):  # table folders: estimated from the snapshot summary
            t = hdb.Table(root / name)
            t.write(tbl)
            s.register(name, t)
        else:
            s.register(name, tbl)
        d.register(name, tbl)
    return s, d, rng


def test_random_join_orders_match_duckdb(setup, monkeypatch):
    s, d, rng = setup
    for _ in range(120):
        sql = _query(rng)
        ours = _rows(s.sql(sql).to_arrow())
        duck = sorted(d.execute(sql).fetchall(), key=_key)
        assert ours == duck, f"{sql}: {len(ours)} rows, DuckDB {len(duck)}"
        monkeypatch.setenv("HS_SQL_JOIN_ORDER", "0")
        written = _rows(s.sql(sql).to_arrow())
        monkeypatch.delenv("HS_SQL_JOIN_ORDER")
        assert written == duck, f"{sql} (written order): rows differ from DuckDB's"


def _plan(s, sql):
    return "\n".join(str(r[0]) for r in s.sql("EXPLAIN " + sql).fetchall())


def test_fact_table_is_probed_not_built(setup):
    s, d, _ = setup
    for frm in ("fact, dim, sup", "sup, dim, fact", "dim, fact, sup"):
        sql = f"SELECT f_id, d_name, s_region FROM {frm} WHERE f_d = d_id AND f_s = s_id"
        plan = _plan(s, sql)
        # the hash joins' build sides (the second input of each join) never scan fact
        lines = [ln for ln in plan.splitlines() if ln.strip()]
        assert "est." in plan, plan
        joins = [i for i, ln in enumerate(lines) if "Join" in ln]
        assert len(joins) == 2, plan
        # the deepest join's first (probe) input is the scan of fact
        deepest = joins[-1]
        probe = lines[deepest + 1]
        assert "fact" in probe, plan
        ours = _rows(s.sql(sql).to_arrow())
        assert ours == sorted(d.execute(sql).fetchall(), key=_key), sql


def test_cross_product_only_when_unconnected(setup):
    s, d, _ = setup
    # written with the unconnected pair first: the reorder joins through fact
    sql = ("SELECT count(*) FROM dim, sup, fact WHERE f_d = d_id AND f_s = s_id "
           "AND d_name <> 'blue'")
    plan = _plan(s, sql)
    assert "NestedLoop" not in plan and "CrossJoin" not in plan, plan
    assert s.sql(sql).fetchall() == d.execute(sql).fetchall()
    # truly unconnected: still right (a cross product)
    sql = "SELECT count(*) FROM dim, sup WHERE d_name = 'red' AND s_region = 1"
    assert s.sql(sql).fetchall() == d.execute(sql).fetchall()


def test_env_switch_is_per_statement(setup, monkeypatch):
    s, _, _ = setup
    sql = "SELECT f_id FROM sup, dim, fact WHERE f_d = d_id AND f_s = s_id"
    monkeypatch.setenv("HS_SQL_JOIN_ORDER", "0")
    written = _plan(s, sql)
    monkeypatch.delenv("HS_SQL_JOIN_ORDER")
    chosen = _plan(s, sql)
    assert written != chosen
    assert os.environ.get("HS_SQL_JOIN_ORDER") is None


def test_or_across_tables_implies_filters(setup):
    s, d, _ = setup
    sql = ("SELECT f_id, d_name, s_region FROM fact, dim, sup WHERE f_d = d_id AND f_s = s_id "
           "AND ((d_name = 'green' AND s_region = 1) OR (d_name = 'red' AND s_region = 2 "
           "AND f_qty < 5))")
    plan = _plan(s, sql)
    # sup is a table folder: the implied s_region IN-like OR reaches its scan filter
    scan = [ln for ln in plan.splitlines() if "TableScan sup" in ln]
    assert scan and '"s_region" = 1' in scan[0] and '"s_region" = 2' in scan[0], plan
    assert _rows(s.sql(sql).to_arrow()) == sorted(d.execute(sql).fetchall(), key=_key), sql
    # a branch with nothing about one side implies nothing there
    sql = ("SELECT f_id FROM fact, sup WHERE f_s = s_id AND (s_region = 1 OR f_qty = 3)")
    plan = _plan(s, sql)
    assert not [ln for ln in plan.splitlines() if "TableScan sup" in ln and "filter" in ln], plan
    assert _rows(s.sql(sql).to_arrow()) == sorted(d.execute(sql).fetchall(), key=_key), sql


def test_explain_names_semi_join_residual_columns(setup):
    s, d, _ = setup
    sql = ("SELECT f_id FROM fact WHERE EXISTS (SELECT 1 FROM sup WHERE s_id = f_s "
           "AND s_region <> f_qty)")
    plan = _plan(s, sql)
    line = [ln for ln in plan.splitlines() if "residual" in ln]
    assert line and "s_region" in line[0] and "f_qty" in line[0], plan
    assert _rows(s.sql(sql).to_arrow()) == sorted(d.execute(sql).fetchall(), key=_key), sql


SEMI = [
    "SELECT d_id, d_name FROM dim WHERE EXISTS (SELECT 1 FROM fact WHERE f_d = d_id)",
    "SELECT d_id, d_name FROM dim WHERE EXISTS (SELECT 1 FROM fact WHERE f_d = d_id "
    "AND f_qty > d_id)",
    "SELECT d_id FROM dim WHERE NOT EXISTS (SELECT 1 FROM fact WHERE f_d = d_id AND f_qty < 3)",
    "SELECT d_id FROM dim WHERE NOT EXISTS (SELECT 1 FROM fact WHERE f_d = d_id "
    "AND f_s <> d_s)",
    "SELECT d_id, d_s FROM dim WHERE d_id IN (SELECT f_d FROM fact WHERE f_qty >= 40)",
    "SELECT s_id FROM sup WHERE EXISTS (SELECT 1 FROM fact, dim WHERE f_s = s_id "
    "AND f_d = d_id AND d_name = 'red')",
    "SELECT d_id FROM dim WHERE d_id NOT IN (SELECT f_d FROM fact WHERE f_qty = 7)",
]


def test_semi_joins_built_on_the_small_outer_side(setup):
    """EXISTS / NOT EXISTS / IN over a large inner table from a small outer
    one: the hash table is built on the outer rows (EXPLAIN says so) and
    the rows equal DuckDB's, NULL keys and residuals included."""
    s, d, _ = setup
    swapped = 0
    for sql in SEMI:
        plan = _plan(s, sql)
        swapped += "hash on the outer side" in plan
        assert _rows(s.sql(sql).to_arrow()) == sorted(d.execute(sql).fetchall(), key=_key), sql
    assert swapped >= 5, swapped


@pytest.fixture(scope="module")
def snowflake(tmp_path_factory):
    """Q7's shape in small: a fact table (dates, a supplier and an order
    key), a big unfiltered `ords` table, a small `supp` table and its
    `nat` dimension, which carries the selective filter; all table
    folders, so their sizes and column bounds come from the manifests."""
    rng = random.Random(7)
    root = tmp_path_factory.mktemp("snowflake")
    n_nat, n_sup, n_ord, n_fact = 25, 100, 3000, 12000
    tabs = {
        "nat": pa.table({"n_id": pa.array(range(n_nat), pa.int32()),
                         "n_name": pa.array([f"N{i}" for i in range(n_nat)])}),
        "supp": pa.table({"s_id": pa.array(range(n_sup), pa.int32()),
                          "s_nat": pa.array([rng.randrange(n_nat) for _ in range(n_sup)],
                                            pa.int32())}),
        "ords": pa.table({"o_id": pa.array(range(n_ord), pa.int64()),
                          "o_pri": pa.array([rng.randrange(5) for _ in range(n_ord)], pa.int32())}),
        "fact": pa.table({
            "f_o": pa.array([rng.randrange(n_ord) for _ in range(n_fact)], pa.int64()),
            "f_s": pa.array([rng.randrange(n_sup) for _ in range(n_fact)], pa.int32()),
            "f_day": pa.array([rng.randrange(0, 2000) for _ in range(n_fact)], pa.int32()).cast(
                pa.date32()),
            "f_amt": pa.array([decimal.Decimal(rng.randrange(1, 10_000)).scaleb(-2)
                               for _ in range(n_fact)], pa.decimal128(12, 2)),
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


def _est_of(plan, needle):
    for ln in plan.splitlines():
        if needle in ln and "est. " in ln:
            return float(ln.split("est. ")[1].split()[0])
    raise AssertionError(f"no estimate on a line with {needle!r}:\n{plan}")


def test_range_estimates_use_column_bounds(snowflake):
    """A range on a column with manifest bounds is estimated as its share
    of [min, max] (BETWEEN: both ends together), not as a default per
    comparison: half of f_day's range is about half of the rows."""
    s, d = snowflake
    for where, share in (("f_day BETWEEN DATE '1970-01-01' AND DATE '1972-09-27'", 0.5),
                         ("f_day >= DATE '1974-02-02'", 0.25),
                         ("f_amt < 25.00", 0.25)):
        sql = f"SELECT count(*) FROM supp, fact WHERE f_s = s_id AND {where}"  # reordered: estimates shown
        est = _est_of(_plan(s, sql), "Join")
        assert abs(est - 12000 * share) <= 12000 * 0.03, (where, est)
        assert s.sql(sql).fetchall() == d.execute(sql).fetchall(), sql
    # past the column's bounds: fewer rows than supp's 100, so fact is the build side
    sql = "SELECT count(*) FROM fact, supp WHERE f_s = s_id AND f_day > DATE '2100-01-01'"
    lines = [ln for ln in _plan(s, sql).splitlines() if "TableScan" in ln]
    assert "supp" in lines[0] and "fact" in lines[1], lines
    assert s.sql(sql).fetchall() == d.execute(sql).fetchall(), sql


def test_dimension_filtered_through_its_own_dimension_joins_first(snowflake):
    """fact joins supp (which nat filters to a few rows) before the larger
    ords: the look-ahead sees supp then nat cut the rows, so the fact rows
    meet ords already filtered (TPC-H Q7). Rows equal DuckDB's."""
    s, d = snowflake
    sql = ("SELECT o_pri, count(*), sum(f_amt) FROM fact, ords, supp, nat "
           "WHERE f_o = o_id AND f_s = s_id AND s_nat = n_id AND n_name IN ('N3', 'N7') "
           "AND f_day BETWEEN DATE '1970-06-01' AND DATE '1974-06-01' GROUP BY o_pri ORDER BY o_pri")
    plan = _plan(s, sql)
    lines = plan.splitlines()
    scans = [ln.strip().split()[2] for ln in lines if "TableScan" in ln]
    # deepest first in the printed tree: fact, supp and nat are joined below ords
    joins = [i for i, ln in enumerate(lines) if "Join" in ln]
    ords_join = [i for i in joins if "o_id" in lines[i]]
    nat_join = [i for i in joins if "n_id" in lines[i]]
    assert ords_join and nat_join and ords_join[0] < nat_join[0], plan
    assert set(scans) == {"fact", "ords", "supp", "nat"}, plan
    assert s.sql(sql).fetchall() == d.execute(sql).fetchall(), sql
