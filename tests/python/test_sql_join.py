"""SQL joins (src/sql/op_join.c, optimize_join.c) against DuckDB.

Random tables with duplicate and NULL keys (bigint and text, a quote in
one key value), registered as in-memory data and loaded into DuckDB; every
join type (INNER, LEFT, RIGHT, FULL, with ON, USING, composite keys,
residual conditions that need three-valued logic, conditions without an
equality: nested loop, CROSS JOIN, EXISTS / NOT EXISTS / IN / NOT IN)
must give the same multiset of rows. Then an index nested loop: a small
filtered input joined with a table that has a scalar index on the key,
where EXPLAIN must name IndexNestedLoopJoin, EXPLAIN ANALYZE must show the
index lookups, and the rows must again equal DuckDB's (also with the
indexed table on the left, which the optimizer swaps, and with a left side
too large for lookups, which falls back to hashing).
"""
import random

import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")

if not hasattr(hdb, "Session"):
    pytest.skip("the SQL front end (hyperstreamdb.Session) is not built yet",
                allow_module_level=True)

WORDS = ["a", "b", "it's", "", "a longer key string"]


def _side(rng, n, domain, null_pct):
    def maybe(v):
        return None if rng.randrange(100) < null_pct else v

    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "k1": pa.array([maybe(rng.randrange(domain) - domain // 3) for _ in range(n)], pa.int64()),
        "k2": pa.array([maybe(rng.choice(WORDS[:3])) for _ in range(n)], pa.string()),
        "v": pa.array([None if rng.randrange(10) == 0 else rng.randrange(100) for _ in range(n)],
                      pa.int32()),
    })


def _key(row):
    return tuple((x is None, x) for x in row)


def _rows(tbl):
    cols = [c.to_pylist() for c in tbl.columns]
    return sorted(zip(*cols), key=_key) if cols else []


def _same(ours, duck, sql):
    a = _rows(ours)
    b = sorted(duck.fetchall(), key=_key)
    assert len(a) == len(b), f"{sql}: {len(a)} rows, DuckDB {len(b)}"
    assert a == b, f"{sql}: rows differ from DuckDB's"


SHAPES = [  # (left rows, right rows, key domain, null %)
    (0, 40, 10, 10), (40, 0, 10, 10), (1, 1, 1, 0), (300, 200, 25, 15), (2000, 1500, 300, 10),
    (500, 300, 4, 5),
]

JOINS = ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"]

CONDS = [
    "l.k1 = r.k1",
    "l.k1 = r.k1 AND l.k2 = r.k2",
    "l.k1 = r.k1 AND l.v < r.v",
    "l.k1 = r.k1 AND (l.v IS NULL OR l.v < r.v)",
    "r.k1 = l.k1 AND r.v IS NULL",
    "l.k2 = r.k2 AND l.k1 + 1 = r.k1 + 1",
]


@pytest.fixture(scope="module", params=range(len(SHAPES)))
def pair(request):
    n_l, n_r, domain, null_pct = SHAPES[request.param]
    rng = random.Random(1000 + request.param)
    left, right = _side(rng, n_l, domain, null_pct), _side(rng, n_r, domain, null_pct)
    s = hdb.Session()
    s.register("l", left)
    s.register("r", right)
    d = duckdb.connect()
    d.register("l", left)
    d.register("r", right)
    return s, d, n_l * n_r


@pytest.mark.parametrize("join", JOINS)
@pytest.mark.parametrize("cond", CONDS)
def test_equi_joins(pair, join, cond):
    s, d, _ = pair
    sql = f"SELECT l.id, r.id, l.k1, r.k2, r.v FROM l {join} r ON {cond}"
    _same(s.sql(sql).to_arrow(), d.execute(sql), sql)


@pytest.mark.parametrize("join", JOINS)
def test_using(pair, join):
    s, d, _ = pair
    sql = f"SELECT l.id, r.id, k1 FROM l {join} r USING (k1)"
    if join in ("RIGHT JOIN", "FULL JOIN"):  # k1 differs by engine for NULL-extended rows
        sql = f"SELECT l.id, r.id FROM l {join} r USING (k1)"
    _same(s.sql(sql).to_arrow(), d.execute(sql), sql)


def _cut(size, limit):
    """The two sides, each cut to its first rows when their pairs pass `limit`
    (a nested loop's result grows with the product)."""
    if size <= limit:
        return "l", "r"
    return "(SELECT * FROM l WHERE id < 300) l", "(SELECT * FROM r WHERE id < 300) r"


@pytest.mark.parametrize("join", JOINS)
def test_nested_loop(pair, join):
    s, d, size = pair
    left, right = _cut(size, 400_000)
    sql = (f"SELECT l.id, r.id FROM {left} {join} {right} "
           "ON l.v < r.v - 90 OR r.k1 IS NULL AND l.k1 > 5")
    _same(s.sql(sql).to_arrow(), d.execute(sql), sql)


def test_cross_join(pair):
    s, d, size = pair
    left, right = _cut(size, 100_000)
    sql = f"SELECT l.id, r.id FROM {left} CROSS JOIN {right} WHERE l.k1 < r.k1"
    _same(s.sql(sql).to_arrow(), d.execute(sql), sql)


SUBQUERIES = [
    "SELECT l.id FROM l WHERE EXISTS (SELECT 1 FROM r WHERE r.k1 = l.k1)",
    "SELECT l.id FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k1 = l.k1 AND r.v > l.v)",
    "SELECT l.id FROM l WHERE l.k1 IN (SELECT k1 FROM r)",
    "SELECT l.id FROM l WHERE l.k1 NOT IN (SELECT k1 FROM r)",
    "SELECT l.id FROM l WHERE l.k1 NOT IN (SELECT k1 FROM r WHERE k1 IS NOT NULL)",
    "SELECT l.id FROM l WHERE l.k1 NOT IN (SELECT r.k1 FROM r WHERE r.v > l.v)",
    "SELECT l.id FROM l WHERE l.k2 IN (SELECT r.k2 FROM r WHERE r.v < l.v)",
    # correlated NOT IN: an anti join on corr AND (x = y OR y IS NULL OR x IS NULL)
    "SELECT l.id FROM l WHERE l.k2 NOT IN (SELECT r.k2 FROM r WHERE r.k1 = l.k1)",
    "SELECT l.id FROM l WHERE l.k1 NOT IN (SELECT r.k1 FROM r WHERE r.k2 = l.k2 AND r.v > 0)",
    "SELECT l.id FROM l WHERE l.k2 NOT IN (SELECT r.k2 || '' FROM r WHERE r.k1 = l.k1 "
    "AND r.k2 IS NOT NULL) AND l.v > 0",
]


@pytest.mark.parametrize("sql", SUBQUERIES)
def test_semi_anti(pair, sql):
    s, d, _ = pair
    _same(s.sql(sql).to_arrow(), d.execute(sql), sql)


# ------------------------------------------------------------ index nested loop

N_BIG = 40_000


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    rng = random.Random(7)
    root = tmp_path_factory.mktemp("sqljoin")
    big = hdb.Table(root / "big")
    parts = []
    for f in range(4):  # four data files
        ids = list(range(f * N_BIG // 4, (f + 1) * N_BIG // 4))
        part = pa.table({
            "id": pa.array(ids, pa.int64()),
            "k": pa.array([None if i % 97 == 0 else (i * 7919) % 5000 for i in ids], pa.int64()),
            "name": pa.array([f"n{i % 301}" if i % 13 else None for i in ids], pa.string()),
            "x": pa.array([float(rng.randrange(1000)) for _ in ids], pa.float64()),
        })
        big.write(part)
        parts.append(part)
    big.add_index("k", "bitmap")
    big.add_index("name", "inverted")
    small = pa.table({
        "sid": pa.array(range(1200), pa.int64()),
        "k": pa.array([None if i % 50 == 0 else rng.randrange(5200) for i in range(1200)],
                      pa.int64()),
        "name": pa.array([f"n{rng.randrange(320)}" for _ in range(1200)], pa.string()),
        "w": pa.array([rng.randrange(10) for _ in range(1200)], pa.int32()),
    })
    s = hdb.Session()
    s.register("big", big)
    s.register("small", small)
    d = duckdb.connect()
    d.register("big", pa.concat_tables(parts))
    d.register("small", small)
    return s, d


def _plan(s, sql):
    return "\n".join(str(r[0]) for r in s.sql(sql).fetchall())


INDEX_QUERIES = [
    # small filtered left, indexed table on the right
    "SELECT small.sid, big.id, big.x FROM small JOIN big ON big.k = small.k WHERE small.w = 3",
    "SELECT small.sid, big.id FROM small LEFT JOIN big ON big.k = small.k AND big.x < 500 "
    "WHERE small.w < 2",
    "SELECT small.sid, big.id FROM small JOIN big ON big.name = small.name AND big.k > small.k "
    "WHERE small.w = 1",
    # the indexed table on the left of an inner join: swapped by the optimizer
    "SELECT big.id, small.sid FROM big JOIN small ON big.k = small.k WHERE small.w = 5",
    # the right side's own filter stays with the lookups
    "SELECT small.sid, big.id FROM small JOIN big ON big.k = small.k "
    "WHERE small.w = 2 AND big.x >= 250",
    # semi and anti joins from subqueries
    "SELECT small.sid FROM small WHERE small.w = 4 AND EXISTS "
    "(SELECT 1 FROM big WHERE big.k = small.k AND big.x < 300)",
    "SELECT small.sid FROM small WHERE small.w = 6 AND NOT EXISTS "
    "(SELECT 1 FROM big WHERE big.name = small.name)",
    "SELECT small.sid FROM small WHERE small.w = 8 AND small.k IN (SELECT k FROM big)",
]


@pytest.mark.parametrize("sql", INDEX_QUERIES)
def test_index_nested_loop(indexed, sql):
    s, d = indexed
    plan = _plan(s, "EXPLAIN " + sql)
    assert "IndexNestedLoopJoin" in plan, plan
    analyzed = _plan(s, "EXPLAIN ANALYZE " + sql)
    assert "index on " in analyzed and "lookups" in analyzed, analyzed
    _same(s.sql(sql).to_arrow(), d.execute(sql), sql)


def test_index_nested_loop_falls_back_to_hashing(indexed):
    """A left side over a quarter of the table's rows is hashed instead; same rows."""
    s, d = indexed
    sql = "SELECT small.sid, big.id FROM small JOIN big ON big.k = small.k"
    big_left = ("SELECT count(*), sum(b2.id * 3 + big.id) FROM big AS b2 JOIN big "
                f"ON big.k = b2.k WHERE b2.id < {N_BIG // 2}")
    analyzed = _plan(s, "EXPLAIN ANALYZE " + big_left)
    assert "no index lookups" in analyzed or "HashJoin" in analyzed, analyzed
    for q in (sql, big_left):
        _same(s.sql(q).to_arrow(), d.execute(q), q)


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    """A table indexed on date, timestamp, numeric and text (with quotes) columns."""
    import datetime as dt
    import decimal

    n = 8000

    def make(ids, first="id"):
        return pa.table({
            first: pa.array(ids, pa.int64()),
            "d": pa.array([dt.date(1999, 1, 1) + dt.timedelta(days=i % 400) for i in ids],
                          pa.date32()),
            "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i % 500,
                                                                  microseconds=i % 7)
                            for i in ids], pa.timestamp("us")),
            "amt": pa.array([decimal.Decimal(i % 300 - 150) / 100 for i in ids],
                            pa.decimal128(12, 2)),
            "s": pa.array([f"it's {i % 250}" for i in ids], pa.string()),
        })

    rng = random.Random(3)
    big = hdb.Table(tmp_path_factory.mktemp("sqljoin_typed") / "big")
    parts = [make(list(range(f * n // 2, (f + 1) * n // 2))) for f in range(2)]
    for p in parts:
        big.write(p)
    for c in ("d", "ts", "amt", "s"):
        big.add_index(c, "inverted")
    small = make([rng.randrange(0, 3 * n) for _ in range(300)], first="sid")
    s = hdb.Session()
    s.register("big", big)
    s.register("small", small)
    d = duckdb.connect()
    d.register("big", pa.concat_tables(parts))
    d.register("small", small)
    return s, d


@pytest.mark.parametrize("col", ["d", "ts", "amt", "s"])
def test_index_nested_loop_key_types(typed, col):
    """Keys go into the lookup's IN list as literals: dates, timestamps with
    microseconds, numerics with their scale, text with quotes."""
    s, d = typed
    sql = f"SELECT small.sid, big.id FROM small JOIN big ON big.{col} = small.{col}"
    analyzed = _plan(s, "EXPLAIN ANALYZE " + sql)
    assert f"index on {col}: 1 lookups" in analyzed, analyzed
    _same(s.sql(sql).to_arrow(), d.execute(sql), sql)


@pytest.mark.parametrize("join", JOINS)
def test_float_keys(join):
    """PostgreSQL's float "=" (DuckDB agrees): -0 = 0, NaN = NaN, NULL matches nothing."""
    nan, inf = float("nan"), float("inf")
    left = pa.table({"id": list(range(7)), "f": [0.0, -0.0, nan, 1.5, None, inf, -inf]})
    right = pa.table({"id": list(range(6)), "f": [-0.0, nan, nan, None, inf, 2.5]})
    s = hdb.Session()
    s.register("l", left)
    s.register("r", right)
    d = duckdb.connect()
    d.register("l", left)
    d.register("r", right)
    sql = f"SELECT l.id, r.id FROM l {join} r ON l.f = r.f"
    _same(s.sql(sql).to_arrow(), d.execute(sql), sql)
