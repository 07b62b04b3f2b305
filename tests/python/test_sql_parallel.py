"""Morsel-parallel operators (src/sql/pipe.c, op_agg.c) against DuckDB and
against themselves on one thread.

Random tables (several files, so the scan yields many chunks; and an
in-memory relation of many small batches) with NULLs in keys and values,
random GROUP BY queries (int / text / composite / expression keys, none)
with count, sum, avg, min, max over integers, decimals, text, dates and
doubles, FILTER clauses, WHERE conditions and projections between the scan
and the aggregate, and inner / left / semi / anti / NOT IN joins probed on
the workers below it. Every result must be DuckDB's (as a multiset; floats to
a tolerance), and HS_THREADS=1 and HS_THREADS=3 must give exactly the same
rows in the same order (groups come out in order of first appearance
either way). Errors must be the serial run's: the first failing chunk's.
"""
import decimal
import math
import os
import random

import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")


def _key1(x):
    if isinstance(x, float):  # NaN sorts last, consistently
        return (False, "float", math.isnan(x), 0.0 if math.isnan(x) else round(x, 6) + 0.0)
    return (x is None, str(type(x)), x)


def _key(row):
    return tuple(_key1(x) for x in row)


def _rows(tbl):
    cols = [c.to_pylist() for c in tbl.columns]
    return sorted(zip(*cols), key=_key) if cols else []


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, decimal.Decimal) or isinstance(b, decimal.Decimal):
        return decimal.Decimal(a) == decimal.Decimal(b)
    return a == b


def _table(rng, n):
    def maybe(v, pct=7):
        return None if rng.randrange(100) < pct else v

    return pa.table({
        "k": pa.array([maybe(rng.randrange(12)) for _ in range(n)], pa.int32()),
        "g": pa.array([maybe(rng.randrange(2000)) for _ in range(n)], pa.int64()),
        "s": pa.array([maybe(rng.choice(["a", "b", "it's", "", "zz", "é"])) for _ in range(n)]),
        "v": pa.array([maybe(rng.randrange(-1000, 1000)) for _ in range(n)], pa.int32()),
        "w": pa.array([maybe(rng.randrange(-10**12, 10**12)) for _ in range(n)], pa.int64()),
        "m": pa.array([maybe(decimal.Decimal(rng.randrange(-10**6, 10**6)) / 100) for _ in range(n)],
                      pa.decimal128(12, 2)),
        "f": pa.array([maybe(rng.uniform(-100, 100)) for _ in range(n)], pa.float64()),
        "d": pa.array([maybe(rng.randrange(18000, 19000)) for _ in range(n)], pa.int32()).cast(pa.date32()),
    })


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    rng = random.Random(1515)
    root = tmp_path_factory.mktemp("par")
    parts = [_table(rng, n) for n in (20000, 9000, 30000, 700)]
    t = hdb.Table(str(root / "t"))
    for p in parts:
        t.write(p)
    whole = pa.concat_tables(parts)
    mem = pa.Table.from_batches(whole.slice(0, 25000).to_batches(max_chunksize=1500))
    dim = pa.table({
        "dk": pa.array([None if i % 17 == 0 else i % 12 for i in range(40)], pa.int32()),
        "dname": pa.array([rng.choice(["x", "y", "z"]) for _ in range(40)]),
        "dv": pa.array([rng.randrange(-50, 50) for _ in range(40)], pa.int32()),
    })
    big = pa.table({  # a build side of many rows, keyed like t.g
        "bg": pa.array(list(range(0, 2000, 3)), pa.int64()),
        "bw": pa.array([rng.randrange(100) for _ in range(0, 2000, 3)], pa.int32()),
    })
    tb = hdb.Table(str(root / "big"))
    tb.write(big)
    s = hdb.Session()
    s.register("t", t)
    s.register("mt", mem)
    s.register("dim", dim)
    s.register("big", tb)
    d = duckdb.connect()
    d.register("t", whole)
    d.register("mt", whole.slice(0, 25000))
    d.register("dim", dim)
    d.register("big", big)
    return s, d


KEYS = ["k", "s", "g", "k, s", "k % 5", "d", "s, g", "v > 0", "lower(s), k"]
AGGS = ["count(*)", "count(v)", "sum(v)", "sum(w)", "sum(m)", "avg(v)", "avg(m)", "min(v)",
        "max(w)", "min(s)", "max(s)", "min(d)", "max(m)", "min(f)", "max(f)", "sum(v * 3 + 1)",
        "sum(m * 2)", "count(*) FILTER (WHERE v > 0)", "sum(w) FILTER (WHERE s = 'a')",
        "avg(f)", "sum(f)", "count(DISTINCT k)"]
WHERES = ["", "WHERE v > -500", "WHERE s <> 'b'", "WHERE k IS NOT NULL AND v < 700",
          "WHERE m > 0 OR s = 'zz'", "WHERE d >= DATE '2020-01-01'"]


def _query(rng):
    keys = rng.choice(KEYS + [""])
    aggs = rng.sample(AGGS, rng.randrange(1, 5))
    rel = rng.choice(["t", "t", "mt"])
    where = rng.choice(WHERES)
    if rng.randrange(3) == 0:  # a projection between the scan and the aggregate
        rel = f"(SELECT k, g, s, v + 0 AS v, w, m, f, d FROM {rel} {where}) AS q"
        where = ""
    sel = ", ".join(([keys] if keys else []) + aggs)
    group = f" GROUP BY {keys}" if keys else ""
    return f"SELECT {sel} FROM {rel} {where}{group}"


JOINS = [
    "FROM t JOIN dim ON k = dk",
    "FROM t LEFT JOIN dim ON k = dk AND dv > 0",
    "FROM t JOIN big ON g = bg",
    "FROM t JOIN big ON g = bg JOIN dim ON k = dk",
    "FROM t LEFT JOIN big ON g = bg AND bw < 50",
    "FROM t WHERE EXISTS (SELECT 1 FROM big WHERE bg = g)",
    "FROM t WHERE NOT EXISTS (SELECT 1 FROM big WHERE bg = g AND bw > 20)",
    "FROM t WHERE k IN (SELECT dk FROM dim WHERE dname = 'x')",
    "FROM t WHERE k NOT IN (SELECT dk FROM dim WHERE dv > 0)",
    "FROM mt JOIN dim ON k = dk AND v > dv",
    "FROM t, dim WHERE k = dk AND s <> dname",
]
JKEYS = ["k", "s", "", "k, s", "g % 7"]
JAGGS = ["count(*)", "sum(v)", "sum(m)", "min(s)", "max(w)", "avg(v)", "count(v)"]


def _join_query(rng):
    keys = rng.choice(JKEYS)
    frm = rng.choice(JOINS)
    if "dim" in frm.split("WHERE")[0] and rng.randrange(2) == 0:
        keys = rng.choice(["dname", "dname, k", "dv"])
    if "JOIN big" in frm and "LEFT" not in frm and rng.randrange(2) == 0:
        keys = rng.choice(["bw", "bw % 3, k"])
    aggs = rng.sample(JAGGS, rng.randrange(1, 4))
    sel = ", ".join(([keys] if keys else []) + aggs)
    extra = rng.choice(["", " AND v > 0", " AND m < 5000"])
    where = (" WHERE TRUE" if "WHERE" not in frm else "") + extra
    group = f" GROUP BY {keys}" if keys else ""
    return f"SELECT {sel} {frm}{where}{group}"


def test_random_joins_under_aggregates_vs_duckdb_and_one_thread(setup):
    s, d = setup
    rng = random.Random(1516)
    for _ in range(80):
        q = _join_query(rng)
        one = _run(s, q, 1)
        many = _run(s, q, 3)
        assert one.to_pylist() == many.to_pylist(), q
        ours, theirs = _rows(many), _rows(d.sql(q).to_arrow_table())
        assert len(ours) == len(theirs), q
        for a, b in zip(ours, theirs):
            assert all(_same(x, y) for x, y in zip(a, b)), (q, a, b)


def _run(s, q, threads):
    old = os.environ.get("HS_THREADS")
    os.environ["HS_THREADS"] = str(threads)
    try:
        return s.sql(q).to_arrow()
    finally:
        if old is None:
            del os.environ["HS_THREADS"]
        else:
            os.environ["HS_THREADS"] = old


def test_random_aggregates_vs_duckdb_and_one_thread(setup):
    s, d = setup
    rng = random.Random(15)
    for _ in range(120):
        q = _query(rng)
        one = _run(s, q, 1)
        many = _run(s, q, 3)
        # float sums are not run in parallel, so even those agree exactly
        assert one.to_pylist() == many.to_pylist(), q
        ours, theirs = _rows(many), _rows(d.sql(q).to_arrow_table())
        assert len(ours) == len(theirs), q
        for a, b in zip(ours, theirs):
            assert all(_same(x, y) for x, y in zip(a, b)), (q, a, b)


def test_parallel_aggregate_shown_in_explain(setup):
    s, _ = setup
    old = os.environ.get("HS_THREADS")
    os.environ["HS_THREADS"] = "3"
    try:
        plan = "\n".join(s.sql("EXPLAIN ANALYZE SELECT k, sum(v) FROM t WHERE v > 0 GROUP BY k")
                         .to_arrow().column(0).to_pylist())
        assert "3 workers" in plan, plan
        # a join probed on the workers: its rows still counted
        plan = "\n".join(s.sql("EXPLAIN ANALYZE SELECT dname, count(*) FROM t JOIN dim ON k = dk "
                               "GROUP BY dname").to_arrow().column(0).to_pylist())
        assert "3 workers" in plan, plan
        n = s.sql("SELECT count(*) FROM t JOIN dim ON k = dk").to_arrow().column(0)[0].as_py()
        join_line = [ln for ln in plan.splitlines() if "HashJoin" in ln][0]
        assert f"rows={n} " in join_line, plan
        # a float sum keeps the serial path (its rounding depends on the order)
        plan = "\n".join(s.sql("EXPLAIN ANALYZE SELECT k, sum(f) FROM t GROUP BY k")
                         .to_arrow().column(0).to_pylist())
        assert "workers" not in plan, plan
    finally:
        if old is None:
            del os.environ["HS_THREADS"]
        else:
            os.environ["HS_THREADS"] = old


def test_first_failing_chunk_error_wins(tmp_path):
    # one file divides by zero, another overflows: whichever a serial run
    # meets first (the scan's file order), every worker count must report
    t = hdb.Table(str(tmp_path / "e"))
    n = 20000
    t.write(pa.table({"a": pa.array([1] * n, pa.int32()), "b": pa.array([1] * n, pa.int32())}))
    t.write(pa.table({"a": pa.array([1] * (n - 1) + [0], pa.int32()),
                      "b": pa.array([1] * n, pa.int32())}))
    t.write(pa.table({"a": pa.array([1] * n, pa.int32()), "b": pa.array([3] * n, pa.int32())}))
    s = hdb.Session()
    s.register("e", t)
    q = "SELECT b, sum(100 / a + b * 1000000000) FROM e GROUP BY b"
    msgs = []
    for th in (1, 2, 3, 4):
        with pytest.raises(hdb.SqlError) as ei:
            _run(s, q, th)
        msgs.append(str(ei.value))
    assert "division by zero" in msgs[0] or "out of range" in msgs[0], msgs[0]
    assert all(m == msgs[0] for m in msgs), msgs


def test_runs_of_equal_keys(tmp_path):
    # sorted / clustered input takes the "same group as the row before"
    # path: runs of equal ints, NULLs, texts, -0.0 / 0.0 and NaN
    rng = random.Random(7)
    ks, ss, fs, vs = [], [], [], []
    while len(ks) < 30000:
        run = rng.randrange(1, 40)
        k = None if rng.randrange(10) == 0 else rng.randrange(50)
        st = rng.choice([None, "a", "b", "", "ab"])
        f = rng.choice([0.0, -0.0, float("nan"), 1.5, None])
        for _ in range(run):
            ks.append(k)
            ss.append(st)
            fs.append(f if rng.randrange(4) else (-f if isinstance(f, float) else f))
            vs.append(rng.randrange(100))
    tbl = pa.table({"k": pa.array(ks, pa.int64()), "s": pa.array(ss), "f": pa.array(fs, pa.float64()),
                    "v": pa.array(vs, pa.int32())})
    t = hdb.Table(str(tmp_path / "r"))
    t.write(tbl)
    s = hdb.Session()
    s.register("r", t)
    d = duckdb.connect()
    d.register("r", tbl)
    for q in ["SELECT k, count(*), sum(v) FROM r GROUP BY k",
              "SELECT s, k, count(*), min(v) FROM r GROUP BY s, k",
              "SELECT f, count(*) FROM r GROUP BY f",
              "SELECT k, s, f, count(*) FROM r GROUP BY k, s, f"]:
        for th in (1, 3):
            ours, theirs = _rows(_run(s, q, th)), _rows(d.sql(q).to_arrow_table())
            assert len(ours) == len(theirs), q
            for a, b in zip(ours, theirs):
                assert all(_same(x, y) for x, y in zip(a, b)), (q, a, b)
