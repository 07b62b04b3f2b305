"""LIKE / ILIKE with a constant pattern (read once, not copied per row) and
with a pattern column, with and without ESCAPE, NULL strings, NULL
patterns, an empty input: the same rows as DuckDB on random strings over a
small alphabet (so that patterns match often)."""
import random

import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")

ALPHA = "ab%_#A"


def _word(rng, lo, hi):
    return "".join(rng.choice(ALPHA) for _ in range(rng.randint(lo, hi)))


def _pattern(rng):
    p = "".join(rng.choice(["a", "b", "%", "_", "#%", "#_", "A", "##"]) for _ in range(rng.randint(0, 4)))
    return p


def test_like_constant_and_column_patterns_match_duckdb():
    rng = random.Random(15)
    n = 3000
    s = [None if rng.random() < 0.1 else _word(rng, 0, 6) for _ in range(n)]
    p = [None if rng.random() < 0.1 else _pattern(rng) for _ in range(n)]
    t = pa.table({"k": pa.array(range(n), pa.int64()), "s": pa.array(s, pa.string()), "p": pa.array(p, pa.string())})
    ses = hdb.Session()
    ses.register("t", t)
    con = duckdb.connect()
    con.register("t", t)
    preds = ["s LIKE p", "s NOT LIKE p", "s LIKE p ESCAPE '#'", "s ILIKE p", "s LIKE NULL",
             "s NOT LIKE NULL"]
    for _ in range(12):
        c = _pattern(rng).replace("'", "''")
        preds += [f"s LIKE '{c}'", f"s NOT LIKE '{c}'", f"s LIKE '{c}' ESCAPE '#'",
                  f"s ILIKE '{c}'", f"s NOT ILIKE '{c}' ESCAPE '#'"]
    for pr in preds:
        q = f"SELECT k, {pr} AS m FROM t ORDER BY k"
        ours = ses.sql(q).to_arrow().column("m").to_pylist()
        theirs = [r[1] for r in con.execute(q).fetchall()]
        assert ours == theirs, pr
        q0 = f"SELECT k FROM t WHERE k < 0 AND {pr}"
        assert ses.sql(q0).to_arrow().num_rows == 0, pr
