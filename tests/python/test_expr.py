"""Filter expressions (src/query/): our C evaluator against DuckDB.

The Python package does not expose filters yet, so these tests drive the C
test executable `test_expr` in its filter mode (HS_EXPR_PARQUET=<file>): it
reads the file with our Parquet reader, then answers each stdin line (a
filter) with "OK <n> <rows...>" or "ERROR <status> <pos> <message>". One
process serves many filters.

It is found at $HS_BUILD_DIR/test_expr, else build/release/, else any
build/*/.

What is checked:
  * randomized tables (pyarrow -> Parquet, with nulls, NaN, infinities,
    negative zero, decimals, dates, timestamps, unsigned ints) and thousands
    of seeded random filters (comparisons, IN / NOT IN with NULLs, BETWEEN,
    IS [NOT] NULL, LIKE with % and _, AND / OR / NOT, literals of every type
    including string literals that take the column's type): the rows we
    select equal DuckDB's `SELECT __rid ... WHERE <filter>` on the same file;
  * bad filters come back as errors with a position, never a crash.
Run time is bounded (about a minute): HS_EXPR_FILTERS sets filters per table.
"""

import datetime
import decimal
import glob
import math
import os
import random
import subprocess

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
EXE = "test_expr"
FILTERS_PER_TABLE = int(os.environ.get("HS_EXPR_FILTERS", "700"))


def _find_exe():
    cands = []
    if os.environ.get("HS_BUILD_DIR"):
        cands.append(os.path.join(os.environ["HS_BUILD_DIR"], EXE))
    cands.append(os.path.join(REPO_ROOT, "build", "release", EXE))
    cands += sorted(glob.glob(os.path.join(REPO_ROOT, "build", "*", EXE)))
    for c in cands:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise AssertionError(
        f"{EXE} executable not found (build the C tests, or set HS_BUILD_DIR); tried: "
        + ", ".join(cands)
    )


class Evaluator:
    """A long-lived `test_expr` filter process over one Parquet file."""

    def __init__(self, path):
        env = dict(os.environ, HS_EXPR_PARQUET=path)
        self.p = subprocess.Popen(
            [_find_exe()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            encoding="utf-8",
        )

    def run(self, flt):
        assert "\n" not in flt
        self.p.stdin.write(flt + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        assert line, f"test_expr died on filter {flt!r} (exit {self.p.poll()})"
        parts = line.rstrip("\n").split(" ")
        if parts[0] == "OK":
            return [int(x) for x in parts[2:]]
        return ("ERROR", parts[1], int(parts[2]), " ".join(parts[3:]))

    def close(self):
        self.p.stdin.close()
        assert self.p.wait(timeout=30) == 0


# --------------------------------------------------------------- tables

ALPHABET = ["", "a", "b", "ab", "ba", "abc", "a%", "b_", "x", "aab", "A", "ñ", "zz"]


def make_table(rng, n):
    def maybe_null(v, p=0.15):
        return None if rng.random() < p else v

    i32 = [maybe_null(rng.randint(-50, 50)) for _ in range(n)]
    i64 = [maybe_null(rng.choice([rng.randint(-(2**40), 2**40), rng.randint(-5, 5)])) for _ in range(n)]
    u8 = [maybe_null(rng.randint(0, 255)) for _ in range(n)]
    f64 = [
        maybe_null(rng.choice([rng.uniform(-10, 10), float("nan"), float("inf"), -float("inf"), 0.0, 1.5, -2.25]))
        for _ in range(n)
    ]
    s = [maybe_null("".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 3)))) for _ in range(n)]
    b = [maybe_null(rng.random() < 0.5) for _ in range(n)]
    base = datetime.date(2024, 1, 1)
    d = [maybe_null(base + datetime.timedelta(days=rng.randint(-400, 400))) for _ in range(n)]
    t0 = datetime.datetime(2024, 1, 1)
    ts = [
        maybe_null(t0 + datetime.timedelta(seconds=rng.randint(-86400 * 3, 86400 * 3), microseconds=rng.choice([0, 1, 500000])))
        for _ in range(n)
    ]
    dec = [maybe_null(decimal.Decimal(rng.randint(-100000, 100000)).scaleb(-2)) for _ in range(n)]
    return pa.table(
        {
            "__rid": pa.array(range(n), pa.int64()),
            "i32": pa.array(i32, pa.int32()),
            "i64": pa.array(i64, pa.int64()),
            "u8": pa.array(u8, pa.uint8()),
            "f64": pa.array(f64, pa.float64()),
            "s": pa.array(s, pa.string()),
            "b": pa.array(b, pa.bool_()),
            "d": pa.array(d, pa.date32()),
            "ts": pa.array(ts, pa.timestamp("us")),
            "dec": pa.array(dec, pa.decimal128(10, 2)),
        }
    )


# -------------------------------------------------------------- filters


def sql_str(v):
    return "'" + v.replace("'", "''") + "'"


def literal(rng, col, table):
    """A literal for `col`: usually a value drawn from the column, sometimes an edge."""
    vals = [v for v in table.column(col).to_pylist() if v is not None]
    v = rng.choice(vals) if vals and rng.random() < 0.7 else None
    if col in ("i32", "i64", "u8"):
        choice = rng.random()
        if v is None or choice < 0.2:
            return rng.choice(["0", "-1", "2.5", "-3.5", "255", "256", "99999999999999", "-99999999999999", "1e3"])
        if choice < 0.3:
            return sql_str(str(v))  # a string literal takes the column's type
        return str(v)
    if col == "f64":
        if v is None or rng.random() < 0.3:
            return rng.choice(["0", "1.5", "-2.25", "'NaN'", "'Infinity'", "'-Infinity'", "10", "-0.0"])
        if math.isnan(v):
            return "'NaN'"
        if math.isinf(v):
            return "'Infinity'" if v > 0 else "'-Infinity'"
        return repr(v)
    if col == "s":
        return sql_str(v if v is not None else rng.choice(ALPHABET))
    if col == "b":
        return rng.choice(["TRUE", "FALSE", "'t'", "'false'"])
    if col == "d":
        if v is None:
            v = datetime.date(2024, 1, 1)
        form = rng.random()
        if form < 0.4:
            return f"DATE '{v.isoformat()}'"
        if form < 0.7:
            return f"'{v.isoformat()}'"
        if form < 0.85:
            return f"'{v.isoformat()}'::date"
        return f"TIMESTAMP '{v.isoformat()} 12:00:00'"
    if col == "ts":
        if v is None:
            v = datetime.datetime(2024, 1, 1)
        form = rng.random()
        text = v.isoformat(sep=" ")
        if form < 0.4:
            return f"TIMESTAMP '{text}'"
        if form < 0.7:
            return f"'{text}'"
        if form < 0.85:
            return f"'{text}'::timestamp"
        return f"DATE '{v.date().isoformat()}'"
    if col == "dec":
        if v is None or rng.random() < 0.3:
            return rng.choice(["0", "1.005", "-2.5", "100", "999.99", "-0.01", "12345678.9"])
        return str(v)
    raise AssertionError(col)


COLS = ["i32", "i64", "u8", "f64", "s", "b", "d", "ts", "dec"]


def like_pattern(rng):
    parts = ["a", "b", "%", "_", "ab", "x", "A"]
    return sql_str("".join(rng.choice(parts) for _ in range(rng.randint(0, 4))))


def leaf(rng, table):
    col = rng.choice(COLS)
    k = rng.random()
    if col == "s" and k < 0.2:
        return f"s {'NOT ' if rng.random() < 0.3 else ''}LIKE {like_pattern(rng)}"
    if col == "b" and k < 0.2:
        return "b"
    if k < 0.5:
        op = rng.choice(["=", "<>", "!=", "<", "<=", ">", ">="])
        lit = literal(rng, col, table) if rng.random() > 0.03 else "NULL"
        if rng.random() < 0.15:  # literal on the left
            flip = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
            return f"{lit} {flip} {col}"
        return f"{col} {op} {lit}"
    if k < 0.7:
        items = [literal(rng, col, table) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.15:
            items.append("NULL")
        return f"{col} {'NOT ' if rng.random() < 0.4 else ''}IN ({', '.join(items)})"
    if k < 0.85:
        lo, hi = literal(rng, col, table), literal(rng, col, table)
        return f"{col} {'NOT ' if rng.random() < 0.4 else ''}BETWEEN {lo} AND {hi}"
    return f"{col} IS {'NOT ' if rng.random() < 0.5 else ''}NULL"


def expr(rng, table, depth=0):
    if depth >= 3 or rng.random() < 0.4:
        return leaf(rng, table)
    k = rng.random()
    if k < 0.2:
        return f"NOT ({expr(rng, table, depth + 1)})"
    op = "AND" if k < 0.6 else "OR"
    return f"({expr(rng, table, depth + 1)} {op} {expr(rng, table, depth + 1)})"


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_filters_match_duckdb(tmp_path, seed):
    rng = random.Random(seed)
    table = make_table(rng, rng.choice([0, 1, 37, 300]) if seed != 1 else 300)
    path = str(tmp_path / "t.parquet")
    pq.write_table(table, path, row_group_size=rng.choice([50, 1000]))
    con = duckdb.connect()
    ev = Evaluator(path)
    compared = 0
    try:
        for _ in range(FILTERS_PER_TABLE):
            flt = expr(rng, table)
            try:
                want = [r[0] for r in con.execute(f"SELECT __rid FROM read_parquet('{path}') WHERE {flt} ORDER BY __rid").fetchall()]
            except duckdb.Error:
                continue  # DuckDB refuses it (e.g. a cast it does not allow); not a comparison
            got = ev.run(flt)
            assert got == want, f"filter {flt!r}: ours {got}, DuckDB {want}"
            compared += 1
    finally:
        ev.close()
    assert compared >= FILTERS_PER_TABLE * 0.8


BAD = [
    ("i32 > 3 AND i33 > 5", 13, "unknown column 'i33'"),
    ("i32 >", 6, "syntax error"),
    ("s = 5", 5, "type mismatch"),
    ("d > DATE 'nope'", 10, "invalid date literal"),
    ("i32 > 1; SELECT 1", 8, "not several statements"),
    ("upper(s) = 'A'", 1, "function calls"),
]


def test_bad_filters_report_positions(tmp_path):
    rng = random.Random(5)
    path = str(tmp_path / "t.parquet")
    pq.write_table(make_table(rng, 10), path)
    ev = Evaluator(path)
    try:
        for flt, pos, needle in BAD:
            got = ev.run(flt)
            assert got[0] == "ERROR" and got[2] == pos and needle in got[3], (flt, got)
        # Arbitrary junk: an error or an answer, never a crash.
        junk = ["(((", "'", "$1", "i32 = ANY('{1}')", "s ~ 'a'", "NOT", "i32 IS DISTINCT FROM 1",
                "b IS TRUE AND b IS NOT FALSE", "i32 BETWEEN SYMMETRIC 1 AND 2", "s ILIKE 'a'",
                "d = '2024-13-01'", "ts > 'yesterday'", "dec > 1e400", "i64 = -9223372036854775808"]
        for flt in junk:
            ev.run(flt)
    finally:
        ev.close()
