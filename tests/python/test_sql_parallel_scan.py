"""The parallel table scan (src/sql/op_scan.c, pipe.c; src/query/scan.c
morsels): a scan under a parallel aggregate is cut into row ranges of its
files and every worker decodes its own.

Random tables of several files with many row groups (small row-group limit
and pages), NULLs, a sorted column (row-group and page pruning) and rows
changed after writing (deletes and updates: position deletes the scan must
honour), read with morsels of a few hundred rows that do not line up with
row groups (HS_SQL_MORSEL_ROWS). Random aggregate queries with pushed-down
filters and projections must give DuckDB's answers (over the live rows,
computed apart with pyarrow), and HS_THREADS=1 and 2 or 4 (morsels forced
with HS_SQL_MORSEL=1) exactly the same rows in the same order; the scan's EXPLAIN ANALYZE counters (rows scanned, row
groups pruned) must be the serial scan's.
"""
import decimal
import math
import os
import random
import re

import pytest

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, decimal.Decimal) or isinstance(b, decimal.Decimal):
        return decimal.Decimal(a) == decimal.Decimal(b)
    return a == b


def _key(row):
    return tuple((x is None, str(type(x)), x) for x in row)


def _rows(tbl):
    cols = [c.to_pylist() for c in tbl.columns]
    return sorted(zip(*cols), key=_key) if cols else []


def _part(rng, base, n):
    def maybe(v, pct=8):
        return None if rng.randrange(100) < pct else v

    return pa.table({
        "id": pa.array(range(base, base + n), pa.int64()),  # sorted: prunes row groups
        "k": pa.array([maybe(rng.randrange(9)) for _ in range(n)], pa.int32()),
        "s": pa.array([maybe(rng.choice(["a", "b", "cc", "", "é"])) for _ in range(n)]),
        "v": pa.array([maybe(rng.randrange(-1000, 1000)) for _ in range(n)], pa.int32()),
        "m": pa.array([maybe(decimal.Decimal(rng.randrange(-10**6, 10**6)) / 100) for _ in range(n)],
                      pa.decimal128(12, 2)),
        "d": pa.array([maybe(rng.randrange(18000, 19000)) for _ in range(n)],
                      pa.int32()).cast(pa.date32()),
    })


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    rng = random.Random(4242)
    root = tmp_path_factory.mktemp("pscan")
    props = {"write.parquet.row-group-limit": "1000", "write.parquet.page-size-bytes": "2048"}
    t = hdb.Table(str(root / "t"), properties=props)
    base, parts = 0, []
    for n in (7000, 3500, 9100):
        parts.append(_part(rng, base, n))
        t.write(parts[-1])
        base += n
    # rows changed after writing: the scan must skip deleted rows
    dead = sorted(rng.sample(range(base), 300))
    t.delete(f"v < -900 OR id IN ({', '.join(map(str, dead))})")
    t.update({"v": 1}, filter="k = 4 AND id > 15000")
    # the live rows, computed apart (pyarrow): the same changes on the written rows
    whole = pa.concat_tables(parts)
    gone = pc.fill_null(pc.or_kleene(pc.less(whole["v"], -900),
                                     pc.is_in(whole["id"], pa.array(dead, pa.int64()))), False)
    live = whole.filter(pc.invert(gone))
    upd = pc.fill_null(pc.and_(pc.equal(live["k"], 4), pc.greater(live["id"], 15000)), False)
    live = live.set_column(live.schema.get_field_index("v"), "v",
                           pc.if_else(upd, pa.scalar(1, pa.int32()), live["v"]))
    s = hdb.Session()
    s.register("t", t)
    d = duckdb.connect()
    d.register("t", live)
    return s, d


def _run(s, q, threads, morsel="333", pipe=None, force="1"):
    env = {"HS_THREADS": str(threads), "HS_SQL_MORSEL_ROWS": morsel, "HS_SQL_PIPE": pipe,
           "HS_SQL_MORSEL": force}
    old = {k: os.environ.get(k) for k in env}
    for k, v in env.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    try:
        return s.sql(q).to_arrow()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


KEYS = ["", "k", "s", "k, s", "d", "v > 0"]
AGGS = ["count(*)", "count(v)", "sum(v)", "sum(m)", "min(s)", "max(d)", "avg(m)", "min(id)",
        "max(id)", "sum(id)", "count(*) FILTER (WHERE s = 'a')"]
WHERES = ["", "WHERE id < 4000", "WHERE id BETWEEN 6500 AND 12345", "WHERE id >= 19000",
          "WHERE v > 0", "WHERE s IS NULL", "WHERE k IN (1, 4) AND id > 2000",
          "WHERE m > 0 OR s = 'cc'", "WHERE id < 0", "WHERE d >= DATE '2021-01-01' AND v < 500"]


def _query(rng):
    keys = rng.choice(KEYS)
    aggs = rng.sample(AGGS, rng.randrange(1, 4))
    where = rng.choice(WHERES)
    rel = "t"
    if rng.randrange(3) == 0:  # a projection between the scan and the aggregate
        rel = f"(SELECT id, k, s, v * 2 AS v, m, d FROM t {where}) AS q"
        where = ""
    sel = ", ".join(([keys] if keys else []) + aggs)
    group = f" GROUP BY {keys}" if keys else ""
    return f"SELECT {sel} FROM {rel} {where}{group}"


def test_random_aggregates_over_morsels_vs_duckdb(setup):
    s, d = setup
    rng = random.Random(77)
    for i in range(70):
        q = _query(rng)
        morsel = rng.choice(["1", "333", "1000", "4096"])
        one = _run(s, q, 1, morsel)
        many = _run(s, q, rng.choice([2, 4]), morsel)
        assert one.to_pylist() == many.to_pylist(), (q, morsel)
        ours, theirs = _rows(many), _rows(d.sql(q).to_arrow_table())
        assert len(ours) == len(theirs), q
        for a, b in zip(ours, theirs):
            assert all(_same(x, y) for x, y in zip(a, b)), (q, a, b)


def test_ordered_and_limited_queries_same_on_one_and_four_threads(setup):
    s, d = setup
    for q in ["SELECT k, count(*), sum(m) FROM t WHERE id > 1234 GROUP BY k ORDER BY k NULLS FIRST",
              "SELECT s, max(id) AS x FROM t GROUP BY s ORDER BY x DESC LIMIT 3",
              "SELECT id, v FROM t WHERE v > 990 ORDER BY id",
              "SELECT count(*) FROM t"]:
        one, many = _run(s, q, 1), _run(s, q, 4)
        assert one.to_pylist() == many.to_pylist(), q
        theirs = d.sql(q).to_arrow_table()
        assert [list(r.values()) for r in many.to_pylist()] == \
            [list(r.values()) for r in theirs.to_pylist()], q


def _scan_note(text):
    m = re.search(r"TableScan t .*?\[(files [^\]]*)\]", text)
    assert m, text
    return re.sub(r", \d+ morsels", "", m.group(1)), " morsels" in m.group(1)


def test_explain_analyze_counters_are_the_serial_scans(setup):
    s, _ = setup
    for where in ["WHERE id BETWEEN 6500 AND 12345", "", "WHERE v > 0 AND id < 9000"]:
        q = f"EXPLAIN ANALYZE SELECT k, count(*) FROM t {where} GROUP BY k"
        text_par = "\n".join(str(list(x.values())[0]) for x in _run(s, q, 4).to_pylist())
        text_ser = "\n".join(str(list(x.values())[0]) for x in _run(s, q, 4, pipe="0").to_pylist())
        par, cut = _scan_note(text_par)
        ser, _ = _scan_note(text_ser)
        assert cut, text_par
        assert par == ser, (par, ser)


def test_whole_files_as_morsels(setup):
    # morsels larger than the files: each file (3 written, 1 by the update)
    # is a morsel, read as the serial scan reads it
    s, d = setup
    q = "SELECT k, count(*), sum(m), min(s) FROM t WHERE id > 3000 GROUP BY k"
    one = _run(s, q, 1, morsel="1000000")
    two = _run(s, q, 2, morsel="1000000")
    assert one.to_pylist() == two.to_pylist()
    ours, theirs = _rows(two), _rows(d.sql(q).to_arrow_table())
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert all(_same(x, y) for x, y in zip(a, b)), (a, b)
    text = "\n".join(str(list(x.values())[0]) for x in
                     _run(s, "EXPLAIN ANALYZE " + q, 2, morsel="1000000").to_pylist())
    assert "files 4/4 read" in text and ", 4 morsels" in text, text
    # by default, below 4 workers the scan stays one stream
    text = "\n".join(str(list(x.values())[0]) for x in
                     _run(s, "EXPLAIN ANALYZE " + q, 2, morsel=None, force=None).to_pylist())
    assert "morsels" not in text, text


def test_errors_are_the_serial_runs(setup):
    s, _ = setup
    q = "SELECT k, sum(100 / (v - 1)) FROM t GROUP BY k"  # v = 1 somewhere (the update)
    for threads in (1, 4):
        with pytest.raises(hdb.SqlError, match="division by zero"):
            _run(s, q, threads)
