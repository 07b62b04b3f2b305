"""Filtered vector search takes its allowed rows straight from the scalar
indexes when they answer the whole filter exactly (scan.c
index_rows_out, index_plan.c's exactness flags), without re-reading the
filter columns: those rows must be exactly the rows DuckDB selects.

A table of three files with NULLs in every column, scalar indexes on an
int, a string, a boolean, a decimal and a float column (floats are never
claimed exact: the filter re-checks them) and an HNSW index on a small
vector column; random filters of comparisons, <>, IN / NOT IN (with NULLs),
LIKE prefixes, IS [NOT] NULL and constants under AND / OR / NOT. A search
with k = every row through the vector index (small files: the planner
scores the allowed rows exactly) must return exactly DuckDB's ids. About 5 s.
"""

import decimal
import random

import pytest

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")

FILES, PER = 3, 700
N = FILES * PER
CATS = [f"c{i:02d}" for i in range(25)] + ["", "c1x"]


def _batch(rng, base):
    def nul(v, p=0.07):
        return None if rng.random() < p else v

    emb = np.asarray([[rng.random() for _ in range(4)] for _ in range(PER)], np.float32)
    return pa.table({
        "id": pa.array(range(base, base + PER), pa.int64()),
        "a": pa.array([nul(rng.randrange(-40, 40)) for _ in range(PER)], pa.int32()),
        "cat": pa.array([nul(rng.choice(CATS)) for _ in range(PER)], pa.string()),
        "flag": pa.array([nul(rng.random() < 0.4) for _ in range(PER)], pa.bool_()),
        "dec": pa.array([nul(decimal.Decimal(rng.randrange(-500, 500)) / 10) for _ in range(PER)],
                        pa.decimal128(9, 1)),
        "f": pa.array([nul(rng.choice([float("nan"), -0.0, 0.0, rng.randrange(-20, 20) / 2]))
                       for _ in range(PER)], pa.float64()),
        "emb": pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()), 4),
    })


def _leaf(rng):
    kind = rng.randrange(9)
    if kind == 0:
        return f"a {rng.choice(['=', '<>', '<', '<=', '>', '>='])} {rng.randrange(-45, 45)}"
    if kind == 1:
        return f"cat {rng.choice(['=', '<>', '<', '>='])} '{rng.choice(CATS)}'"
    if kind == 2:
        vals = [str(rng.randrange(-45, 45)) for _ in range(rng.randrange(1, 12))]
        if rng.random() < 0.25:
            vals.append("NULL")
        return f"a {rng.choice(['IN', 'NOT IN'])} ({', '.join(vals)})"
    if kind == 3:
        vals = [f"'{rng.choice(CATS + ['zz'])}'" for _ in range(rng.randrange(1, 6))]
        if rng.random() < 0.2:
            vals.append("NULL")
        return f"cat {rng.choice(['IN', 'NOT IN'])} ({', '.join(vals)})"
    if kind == 4:
        return f"cat {rng.choice(['LIKE', 'NOT LIKE'])} '{rng.choice(['c1', 'c', 'c2', ''])}%'"
    if kind == 5:
        return f"{rng.choice(['a', 'cat', 'flag', 'dec', 'f'])} IS {rng.choice(['', 'NOT '])}NULL"
    if kind == 6:
        return f"flag = {rng.choice(['true', 'false'])}"
    if kind == 7:
        return f"dec {rng.choice(['=', '<', '>='])} {rng.randrange(-50, 50) / 2}"
    return f"f {rng.choice(['=', '<', '>', '<>'])} {rng.randrange(-10, 10) / 2}"


def _filter(rng, depth=0):
    r = rng.random()
    if depth >= 3 or r < 0.35:
        return _leaf(rng)
    if r < 0.5:
        return f"NOT ({_filter(rng, depth + 1)})"
    op = "AND" if r < 0.78 else "OR"
    kids = [_filter(rng, depth + 1) for _ in range(rng.randrange(2, 4))]
    return "(" + f" {op} ".join(kids) + ")"


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rng = random.Random(17)
    root = str(tmp_path_factory.mktemp("exact") / "t")
    t = hdb.Table(root)
    parts = [_batch(rng, i * PER) for i in range(FILES)]
    for p in parts:
        t.write(p)
    t.add_index("a", "inverted", progress=False)
    t.add_index("cat", "bitmap", progress=False)
    t.add_index("flag", "bitmap", progress=False)
    t.add_index("dec", "inverted", progress=False)
    t.add_index("f", "inverted", progress=False)
    t.add_index("emb", "hnsw", metric="l2", progress=False)
    t.wait_for_indexes()
    return t, pa.concat_tables(parts)


def test_allowed_rows_from_exact_indexes_equal_duckdb(table):
    t, data = table
    con = duckdb.connect()
    con.register("data", data)
    rng = random.Random(5)
    q = [0.5, 0.5, 0.5, 0.5]
    checked = nonempty = 0
    for _ in range(150):
        flt = _filter(rng)
        want = sorted(r[0] for r in con.execute(f"SELECT id FROM data WHERE {flt}").fetchall())
        got = t.search("emb", q, k=N, filter=flt, columns=["id"])
        assert sorted(got.column("id").to_pylist()) == want, flt
        checked += 1
        nonempty += bool(want)
    assert checked == 150 and nonempty > 40


def test_search_through_the_index_path(table):
    """The searches above went through the vector index (the path that takes
    rows from the scalar indexes) and the filters through the scalar ones."""
    t, _ = table
    ex = t.explain("a IN (1, 2, 3) AND cat <> 'c05'").stats
    assert ex["files_indexed"] == FILES, ex
    text = t.query().vector_search([0.5] * 4, column="emb", k=10).filter("a = 3").explain()
    assert f"{FILES} searched ({FILES} through a vector index" in str(text), text
