"""Numeric (decimal) arithmetic kernels against exact arithmetic and DuckDB.

`+`, `-` and `*` on numeric columns have a fast path when every value of a
chunk fits in int64 (no int128 overflow checks per row) and the general
path otherwise; both must give the exact results (Python's `decimal`, 50
digits, is the oracle; DuckDB agrees on every query it computes: it
refuses products of two decimals of <= 18 digits that need more), NULLs stay NULL, an empty input gives no rows, and a result of
39 digits or more is PostgreSQL's "numeric field overflow" whichever path
the chunk took (38 digits at the result's scale: numeric(38,0) + numeric(12,4)
is numeric(38,4), 34 digits before the point). Random tables: small values only (the fast path), small
ones with a few past int64 (the general path in the same chunk), and huge
ones that overflow. Bounded: a few thousand rows, a few dozen queries.
"""
import decimal
import random

import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")

decimal.getcontext().prec = 80
D = decimal.Decimal
EXPRS = ["a * b", "a + b", "a - b", "1 - a", "a * (1 - b)", "b - a * 2", "c * a", "c + b", "c - c * 1",
         "a * b * (1 + a)"]


def _table(rng, n, big):
    def maybe(v):
        return None if rng.random() < 0.1 else v

    a = [maybe(D(rng.randrange(-10**13, 10**13)).scaleb(-2)) for _ in range(n)]
    b = [maybe(D(rng.randrange(-10**8, 10**8)).scaleb(-4)) for _ in range(n)]
    c = []
    for _ in range(n):
        if big == "huge" and rng.random() < 0.5:
            v = rng.randrange(-10**37, 10**37)
        elif big != "small" and rng.random() < 0.05:
            v = rng.choice([1, -1]) * rng.randrange(2**63, 10**24)  # past int64
        else:
            v = rng.randrange(-10**9, 10**9)
        c.append(maybe(D(v)))
    return pa.table({"a": pa.array(a, pa.decimal128(15, 2)), "b": pa.array(b, pa.decimal128(12, 4)),
                     "c": pa.array(c, pa.decimal128(38, 0)), "k": pa.array(range(n), pa.int64())})


def _exact(expr, row):
    env = {k: row[k] for k in "abc"}
    if any(env[k] is None for k in "abc" if k in expr):
        return None
    return eval(expr, {}, env)  # Decimal arithmetic, exact at 80 digits


@pytest.mark.parametrize("big", ["small", "mixed", "huge"])
def test_numeric_arith_exact(big):
    rng = random.Random({"small": 1, "mixed": 2, "huge": 3}[big])
    t = _table(rng, 3000, big)
    rows = t.to_pylist()
    s = hdb.Session()
    s.register("t", t)
    con = duckdb.connect()
    con.register("t", t)
    for expr in EXPRS:
        want = [_exact(expr, r) for r in rows]
        # Exact Decimal arithmetic keeps SQL's result scale (the exponent), so
        # a result needing more than 38 digits at its scale is an overflow.
        overflow = any(v is not None and len(v.as_tuple().digits) > 38 for v in want)
        q = f"SELECT k, {expr} AS v FROM t ORDER BY k"
        if overflow:
            with pytest.raises(hdb.SqlError, match="overflow"):
                s.sql(q).to_arrow()
            continue
        got = s.sql(q).to_arrow().column("v").to_pylist()
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert (g is None) == (w is None), (expr, i, g, w)
            assert g is None or D(g) == w, (expr, i, g, w)
        if big == "small":  # DuckDB agrees wherever it computes the query
            try:  # (a product of two decimals of <= 18 digits must fit 18 digits there)
                duck = [r[0] for r in con.execute(q.replace("k, ", "")).fetchall()]
            except duckdb.OutOfRangeException:
                continue
            for g, d in zip(got, duck):
                assert (g is None) == (d is None) and (g is None or D(g) == D(d)), (expr, g, d)


def test_numeric_arith_filtered_and_empty():
    rng = random.Random(7)
    t = _table(rng, 2000, "mixed")
    s = hdb.Session()
    s.register("t", t)
    for expr in EXPRS[:6]:
        assert s.sql(f"SELECT {expr} FROM t WHERE k < 0").to_arrow().num_rows == 0
        got = s.sql(f"SELECT sum({expr}) AS v FROM t WHERE k % 3 = 0").to_arrow().column("v")[0].as_py()
        want = [_exact(expr, r) for r in t.to_pylist() if r["k"] % 3 == 0]
        want = [w for w in want if w is not None]
        assert D(got) == sum(want), expr
