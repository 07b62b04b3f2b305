"""The Python SQL front end (python/hyperstreamdb/_sql.py, python/src/sql.c).

hdb.Session / hdb.connect / Table.sql: every kind of registered data
(table objects and folders, pyarrow Table/RecordBatch/RecordBatchReader,
pandas, polars, a folder under the session root), parameters (scalars,
NULL, numpy vectors), every result conversion compared with DuckDB's answer
to the same query over the same random data, SqlError positions, runtime
errors through the result, cancellation from another thread and by SIGINT
(KeyboardInterrupt), and a result outliving its session.
"""
import math
import os
import random
import signal
import threading
import time

import pytest

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")


def _data(seed, n=500):
    rng = random.Random(seed)

    def maybe(v, pct=10):
        return None if rng.randrange(100) < pct else v

    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "g": pa.array([maybe(rng.choice(["a", "b", "c", "it's"])) for _ in range(n)], pa.string()),
        "v": pa.array([maybe(rng.randrange(-1000, 1000)) for _ in range(n)], pa.int32()),
        "f": pa.array([maybe(rng.uniform(-1e3, 1e3)) for _ in range(n)], pa.float64()),
    })


def _key(row):
    return tuple((x is None, x) for x in row)


def _close_rows(a, b):
    assert len(a) == len(b), (len(a), len(b))
    for ra, rb in zip(a, b):
        assert len(ra) == len(rb)
        for x, y in zip(ra, rb):
            if isinstance(x, float) and isinstance(y, float):
                assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9), (ra, rb)
            else:
                assert x == y, (ra, rb)


QUERIES = [
    "SELECT id, g, v, f FROM d WHERE v > 10 ORDER BY id",
    "SELECT g, count(*) AS n, sum(v) AS s, min(f) AS lo, max(f) AS hi FROM d GROUP BY g ORDER BY g",
    "SELECT id, v * 2 + 1 AS w, coalesce(g, 'none') AS g2 FROM d ORDER BY id LIMIT 37",
    "SELECT count(*) AS n FROM d WHERE f IS NULL",
]


@pytest.fixture()
def data():
    return _data(7)


def test_result_conversions_equal_duckdb(data):
    s = hdb.Session()
    s.register("d", data)
    con = duckdb.connect()
    con.register("d", data)
    for q in QUERIES:
        expect = con.execute(q).fetchall()
        _close_rows(s.sql(q).fetchall(), expect)
        tbl = s.sql(q).to_arrow()
        assert isinstance(tbl, pa.Table)
        _close_rows(list(zip(*[c.to_pylist() for c in tbl.columns])), expect)
        assert tbl.column_names == [d[0] for d in con.execute(q).description]
        df = s.sql(q).to_pandas()
        ddf = con.execute(q).df()
        assert list(df.columns) == list(ddf.columns)
        assert len(df) == len(ddf)
        pl = pytest.importorskip("polars")
        pdf = s.sql(q).to_polars()
        assert isinstance(pdf, pl.DataFrame)
        _close_rows(pdf.rows(), expect)
        rd = s.sql(q).reader()
        assert isinstance(rd, pa.RecordBatchReader)
        _close_rows(list(zip(*[c.to_pylist() for c in rd.read_all().columns])), expect)
        via_capsule = pa.table(s.sql(q))  # __arrow_c_stream__
        _close_rows(list(zip(*[c.to_pylist() for c in via_capsule.columns])), expect)
        # DuckDB reads our result through the Arrow C stream
        res = s.sql(q).to_arrow()
        assert len(s.sql(q)) == len(expect)
        assert list(iter(s.sql(q))) == s.sql(q).fetchall()
        _close_rows(con.execute("SELECT * FROM res").fetchall(), expect)


def test_every_register_kind(tmp_path, data):
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    root = tmp_path / "lake"
    root.mkdir()
    t = hdb.Table.create(str(root / "tbl"), data.schema)
    t.write(data)
    s = hdb.connect(str(root))  # folders under the root are tables by name
    expect = sorted(zip(*[c.to_pylist() for c in data.columns]), key=_key)
    q = "SELECT id, g, v, f FROM {}"
    assert sorted(s.sql(q.format("tbl")).fetchall(), key=_key) == expect
    kinds = {
        "arrow_table": data,
        "record_batch": data.combine_chunks().to_batches()[0],
        "reader": pa.RecordBatchReader.from_batches(data.schema, data.to_batches(max_chunksize=64)),
        "pandas": data.to_pandas(),
        "polars": pl.from_arrow(data),
        "table_obj": t,
        "folder": str(root / "tbl"),
    }
    for name, obj in kinds.items():
        assert s.register(name, obj) is s
        got = sorted(s.sql(q.format(name)).fetchall(), key=_key)
        if name == "pandas":  # pandas makes nullable ints floats: compare as floats
            got = [(a, b, None if c is None or c != c else int(c), e) for a, b, c, e in got]
            got = [(a, b, c, None if e != e else e) for a, b, c, e in got]
            got = sorted(got, key=_key)
        assert got == expect, name
    core = hdb._core.SqlSession()  # the extension type also takes a bare stream capsule
    core.register_stream("cap", data.__arrow_c_stream__())
    got = pa.RecordBatchReader.from_stream(core.execute("SELECT count(*) AS n FROM cap")).read_all()
    assert got.column("n").to_pylist() == [data.num_rows]
    s.unregister("pandas")
    with pytest.raises(hdb.SqlError):
        s.sql("SELECT * FROM pandas")
    with pytest.raises(TypeError):
        s.register("bad", object())
    assert "lake" in repr(s)


def test_params_scalars_null_and_vectors():
    s = hdb.Session()
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((50, 8)).astype(np.float32)
    emb = pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), 8)
    s.register("v", pa.table({"id": pa.array(range(50), pa.int64()), "e": emb}))
    got = s.sql("SELECT $1::bigint + 1, $2::text || 'x', $3::double precision * 2, $4::int IS NULL",
                [41, "a", 1.25, None]).fetchall()
    assert got == [(42, "ax", 2.5, True)]
    import datetime
    import decimal
    d, ts = datetime.date(2024, 1, 31), datetime.datetime(2024, 1, 1, 12, 30, 1, 5)
    got = s.sql("SELECT $1 + 1, $2 + interval '1 day', $3 * 2, $4, $5", [
        d, ts, decimal.Decimal("1.25"), True, b"\x00b"]).fetchall()
    assert got == duckdb.execute("SELECT $1 + 1, $2 + interval '1 day', $3 * 2, $4, $5", [
        d, ts, decimal.Decimal("1.25"), True, b"\x00b"]).fetchall()
    q = vecs[17] + np.float32(0.01)
    rows = s.sql("SELECT id, e <-> $1 AS d FROM v ORDER BY e <-> $1 LIMIT 5", [q]).fetchall()
    dist = np.sqrt(((vecs.astype(np.float64) - q.astype(np.float64)) ** 2).sum(axis=1))
    order = np.argsort(dist, kind="stable")[:5]
    assert [r[0] for r in rows] == order.tolist()
    for (i, d), j in zip(rows, order):
        assert math.isclose(d, dist[j], rel_tol=1e-5)
    with pytest.raises(ValueError):
        s.sql("SELECT $1", [np.zeros((2, 2), np.float32)])
    with pytest.raises(TypeError):
        s.sql("SELECT $1", "not a list")
    with pytest.raises(hdb.SqlError):  # a vector of the wrong dimension
        s.sql("SELECT id FROM v ORDER BY e <-> $1 LIMIT 1", [np.zeros(3, np.float32)]).fetchall()


def test_sql_error_position_and_caret(data):
    s = hdb.Session()
    s.register("d", data)
    sql = "SELECT id, vv FROM d"
    with pytest.raises(hdb.SqlError) as ei:
        s.sql(sql)
    e = ei.value
    assert isinstance(e, hdb.InvalidArgumentError) and isinstance(e, ValueError)
    assert e.position == sql.index("vv") + 1
    lines = str(e).split("\n")
    assert "vv" in lines[0]
    assert lines[-1].index("^") - lines[-2].index("SELECT") == sql.index("vv")
    # a runtime error is a SqlError too, raised while reading the result
    sql = "SELECT id, 100 / (v - v) FROM d"
    with pytest.raises(hdb.SqlError) as ei:
        s.sql(sql).fetchall()
    assert "division by zero" in str(ei.value)
    assert ei.value.position == sql.index("/") + 1
    assert str(ei.value).rstrip().endswith("^")
    with pytest.raises(hdb.SqlError) as ei:
        s.sql("SELEC 1")
    assert ei.value.position == 1
    with pytest.raises(hdb.UnsupportedError):
        s.sql("SELECT id FROM d FOR UPDATE")


def _long_session():
    s = hdb.Session()
    n = 30000
    s.register("a", pa.table({"x": pa.array(range(n), pa.int64())}))
    # 9e8 pairs: many seconds, unless cancelled
    return s, "SELECT count(*) FROM a a1, a a2 WHERE a1.x + a2.x > 5"


def test_cancel_from_another_thread():
    s, q = _long_session()
    r = s.sql(q)
    threading.Timer(0.3, s.cancel).start()
    t0 = time.monotonic()
    with pytest.raises(hdb.SqlError, match="cancelled"):
        r.fetchall()
    assert time.monotonic() - t0 < 5
    assert s.sql("SELECT 1 AS one").fetchall() == [(1,)]  # the session still works


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread()
                    or not hasattr(signal, "SIGINT") or os.name != "posix",
                    reason="SIGINT on the main thread")
@pytest.mark.parametrize("how", ["fetchall", "reader"])
def test_ctrl_c_cancels_and_raises_keyboard_interrupt(how):
    # Python's own handler for the test (other libraries in this process,
    # e.g. pyspark, install theirs); ours must put back whatever was there
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        s, q = _long_session()
        r = s.sql(q)
        timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            if how == "fetchall":
                r.fetchall()
            else:
                r.reader().read_all()
        timer.join()
        assert time.monotonic() - t0 < 5
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)
    assert s.sql("SELECT 2 AS two").fetchall() == [(2,)]


def test_table_sql_names_and_result_outlives_session(tmp_path, data):
    t = hdb.Table.create(str(tmp_path / "events"), data.schema)
    t.write(data)
    a = t.sql("SELECT count(*) AS n FROM t WHERE v > $1", [0]).fetchall()
    b = t.sql("SELECT count(*) AS n FROM events WHERE v > $1", [0]).fetchall()
    expect = duckdb.sql("SELECT count(*) FROM data WHERE v > 0").fetchall()
    assert a == b == expect
    with hdb.connect(str(tmp_path)) as s:
        r = s.execute("SELECT id FROM events ORDER BY id LIMIT 3")  # execute = sql
    assert r.fetchall() == [(0,), (1,), (2,)]  # read after the session closed
    with pytest.raises(hdb.InvalidArgumentError):
        s.sql("SELECT 1")
    r = t.sql("SELECT id, g FROM t ORDER BY id LIMIT 12")
    text = repr(r)
    assert "id: int64" in text and "12 rows" in text and "(0, " in text and "2 more rows" in text
    assert "no columns" in repr(t.sql("SET memory_limit = '1GB'"))


def test_result_is_one_shot_but_cached(data):
    s = hdb.Session()
    s.register("d", data)
    r = s.sql("SELECT id FROM d ORDER BY id LIMIT 4")
    assert r.schema == pa.schema([("id", pa.int64())])
    assert r.fetchall() == r.fetchall() == [(0,), (1,), (2,), (3,)]
    assert r.to_arrow().num_rows == 4
    r2 = s.sql("SELECT id FROM d ORDER BY id LIMIT 4")
    rd = r2.reader()
    assert rd.read_all().num_rows == 4
    with pytest.raises(hdb.HyperStreamError):
        r2.to_arrow()  # the reader consumed it


def test_statements_reuse_handles_and_see_every_commit(tmp_path):
    """A session keeps table handles between statements (refreshed at each
    statement's start): each statement still sees every commit made before
    it, by this process or another (appends, deletes, a new column, an
    index), while streams of earlier statements — more of them at once than
    the session keeps idle handles — keep reading their own version.
    DuckDB over the rows a fresh Table reads is the oracle."""
    import subprocess
    import sys

    rng = random.Random(20261203)
    uri = str(tmp_path / "t")
    t = hdb.Table(uri)
    t.write(_data(1, 200))
    s = hdb.connect(str(tmp_path))
    held = []  # (stream, expected rows at its statement)
    next_id = 10_000
    for step in range(40):
        op = rng.choice(["append", "append_proc", "delete", "column", "index", "hold", "hold"])
        if op == "append":
            w = hdb.Table(uri)
            d = _data(step, 20).set_column(
                0, "id", pa.array(range(next_id, next_id + 20), pa.int64()))
            w.write(pa.table({f.name: d[f.name] if f.name in d.schema.names
                              else pa.nulls(20, f.type) for f in w.schema}, schema=w.schema))
            next_id += 20
        elif op == "append_proc":
            # a full-schema row batch written by another process
            code = ("import hyperstreamdb as h, pyarrow as pa; t = h.Table(%r); "
                    "sc = t.schema; n = 5; cols = {f.name: pa.nulls(n, f.type) for f in sc}; "
                    "cols['id'] = pa.array(range(%d, %d), pa.int64()); "
                    "t.write(pa.table(cols, schema=sc))" % (uri, next_id, next_id + 5))
            subprocess.run([sys.executable, "-c", code], check=True)
            next_id += 5
        elif op == "delete":
            lo = rng.randrange(0, 200)
            hdb.Table(uri).delete(f"id >= {lo} AND id < {lo + 15}")
        elif op == "column":
            name = f"c{step}"
            hdb.Table(uri).add_column(name, pa.int64())
        elif op == "index":
            s.sql(f"CREATE INDEX ON t ({rng.choice(['id', 'g'])})")
        want = hdb.Table(uri).to_arrow()
        q = "SELECT * FROM t WHERE v IS NULL OR v > -500"
        if op == "hold":
            held.append((s.sql(q), duckdb.sql(q.replace("FROM t", "FROM want")).fetchall(),
                         want.schema.names))
            continue
        got = s.sql(q).to_arrow()
        assert got.schema.names == want.schema.names, step
        exp = duckdb.sql(q.replace("FROM t", "FROM want")).fetchall()
        assert sorted(got.to_pylist(), key=_key_dict) == sorted(
            [dict(zip(want.schema.names, r)) for r in exp], key=_key_dict), step
        assert s.sql("SELECT count(*) FROM t").fetchall() == [(len(want),)], step
    assert len(held) > 4
    for r, exp, names in held:
        got = r.to_arrow()
        assert got.schema.names == names
        assert sorted(got.to_pylist(), key=_key_dict) == sorted(
            [dict(zip(names, row)) for row in exp], key=_key_dict)


def _key_dict(d):
    return tuple((k, str(v)) for k, v in sorted(d.items()))


def test_parse_cache_never_returns_stale_rows_or_columns(tmp_path):
    """A session keeps parse trees by statement text (src/sql/parse_cache.c)
    and binds every run anew: the same `$n` statements, run again and again
    with random parameters, between appends, deletes, added / renamed /
    dropped columns and the name re-registered to other data, always answer
    as DuckDB does over the rows and columns of that moment; a correlated
    subquery (whose binder adds nodes) runs from the shared tree as often as
    asked; more texts than the cache holds evict and still answer right."""
    rng = random.Random(20261204)
    uri = str(tmp_path / "t")
    t = hdb.Table(uri)
    t.write(_data(1, 300))
    s = hdb.connect(str(tmp_path))
    queries = [
        ("SELECT * FROM t WHERE v > $1", lambda: [rng.randrange(-1000, 1000)]),
        ("SELECT g, count(*) AS n, sum(v) AS sv FROM t WHERE id < $1 GROUP BY g",
         lambda: [rng.randrange(0, 400)]),
        ("SELECT id FROM t a WHERE v > (SELECT avg(v) FROM t b WHERE b.g = a.g) AND id > $1",
         lambda: [rng.randrange(0, 300)]),
    ]
    next_id = 10_000
    names = {"id", "g", "v", "f"}
    for step in range(60):
        op = rng.choice(["append", "delete", "add", "rename", "drop", "register", "run", "run"])
        current = hdb.Table(uri)
        if op == "append":
            d = _data(step, 25).set_column(0, "id", pa.array(range(next_id, next_id + 25), pa.int64()))
            current.write(pa.table({f.name: d[f.name] if f.name in d.schema.names
                                    else pa.nulls(25, f.type) for f in current.schema},
                                   schema=current.schema))
            next_id += 25
        elif op == "delete":
            lo = rng.randrange(0, 300)
            current.delete(f"id >= {lo} AND id < {lo + 20}")
        elif op == "add":
            current.add_column(f"x{step}", pa.int64())
        elif op == "rename" and "f" in names:
            current.rename_column("f", "f2")
            names = (names - {"f"}) | {"f2"}
        elif op == "drop" and "f2" in names:
            current.drop_column("f2")
            names -= {"f2"}
        elif op == "register":
            # the name now means other data with other columns, then the table again
            other = _data(step + 100, 40).rename_columns(["id", "g", "v", "h"])
            s.register("t", other)
            for q, mk in queries:
                p = mk()
                got = s.sql(q, p).to_arrow()
                exp = duckdb.sql(q.replace("FROM t", "FROM other"), params=p).to_arrow_table()
                assert got.schema.names == exp.schema.names, (step, q)
                assert sorted(got.to_pylist(), key=_key_dict) == sorted(
                    exp.to_pylist(), key=_key_dict), (step, q)
            s.register("t", hdb.Table(uri))
        # cache churn: more distinct texts than the cache keeps
        for j in range(rng.randrange(0, 40)):
            assert s.sql(f"SELECT {j} + $1 AS x", [step]).fetchall() == [(j + step,)]
        want = hdb.Table(uri).to_arrow()
        for q, mk in queries:
            p = mk()
            got = s.sql(q, p).to_arrow()
            exp = duckdb.sql(q.replace("FROM t", "FROM want"), params=p).to_arrow_table()
            assert got.schema.names == exp.schema.names, (step, q, op)
            assert sorted(got.to_pylist(), key=_key_dict) == sorted(
                exp.to_pylist(), key=_key_dict), (step, q, op)


def test_plain_params_read_in_place_match_duckdb_and_numpy():
    """`$n` given as plain Python values (read in place by
    python/src/sql_params.c: None, bool, int, float, str, numpy vectors of
    any float dtype and stride) answer as DuckDB does for the same values;
    vectors' distances as numpy computes them; values of other kinds
    (numpy scalars, ints past int64) still go through pyarrow."""
    rng = random.Random(1204)
    s = hdb.Session()
    kinds = [lambda: None, lambda: rng.choice([True, False]),
             lambda: rng.choice([0, -1, 2**63 - 1, -2**63, rng.randrange(-10**12, 10**12)]),
             lambda: rng.choice([0.0, -0.0, 1e308, -2.5e-300, rng.uniform(-1e6, 1e6)]),
             lambda: rng.choice(["", "it's", "ünïcødé ✓", "x" * rng.randrange(0, 300)])]
    for _ in range(200):
        vals = [rng.choice(kinds)() for _ in range(rng.randrange(1, 6))]
        q = "SELECT " + ", ".join(f"${i + 1} AS c{i}" for i in range(len(vals)))
        assert s.sql(q, vals).fetchall() == duckdb.execute(q, vals).fetchall(), vals
    for _ in range(50):
        d = rng.randrange(1, 40)
        a = np.array([rng.uniform(-5, 5) for _ in range(2 * d)], dtype=rng.choice(
            [np.float32, np.float64]))
        v = a[::2] if rng.random() < 0.5 else a[:d]
        w = np.array([rng.uniform(-5, 5) for _ in range(d)], np.float32)
        got = s.sql("SELECT $1 <-> $2 AS l2, vector_dims($1) AS n", [v, w]).fetchall()
        want = float(np.linalg.norm(v.astype(np.float32) - w))
        assert got[0][1] == d and math.isclose(got[0][0], want, rel_tol=1e-5, abs_tol=1e-5)
    assert s.sql("SELECT $1 + 1 AS x", [np.int32(41)]).fetchall() == [(42,)]
    with pytest.raises(OverflowError):  # pyarrow's answer, as before
        s.sql("SELECT $1 AS x", [2**64])


def test_one_batch_results_reuse_the_session_schema_only_when_it_is_the_same():
    """to_arrow() of a one-batch result imports it with the pyarrow Schema the
    session kept for the last such result when the schema is the same
    (_sql.py, python/src/sql.c): statements of other schemas, run in random
    interleavings, several batches and no rows all come back as pyarrow
    builds them from the values."""
    s = hdb.Session()
    big = pa.table({"a": pa.array(range(1, 20001), pa.int64())})
    s.register("big", pa.Table.from_batches(big.to_batches(max_chunksize=6000)))
    assert s.sql("SELECT a FROM big").reader().read_next_batch().num_rows < 20000
    cases = [
        ("SELECT 1 AS a", pa.table({"a": pa.array([1], pa.int32())})),
        ("SELECT 'x' AS a", pa.table({"a": pa.array(["x"])})),
        ("SELECT 1.5::float8 AS a, 2::bigint AS b",
         pa.table({"a": pa.array([1.5]), "b": pa.array([2], pa.int64())})),
        ("SELECT 2::bigint AS b, 1.5::float8 AS a",
         pa.table({"b": pa.array([2], pa.int64()), "a": pa.array([1.5])})),
        ("SELECT 1 AS b", pa.table({"b": pa.array([1], pa.int32())})),
        ("SELECT NULL::int AS a", pa.table({"a": pa.array([None], pa.int32())})),
        ("SELECT a FROM big",
         pa.table({"a": pa.array(range(1, 20001), pa.int64())})),
        ("SELECT 1 AS a WHERE false", pa.table({"a": pa.array([], pa.int32())})),
    ]
    rng = random.Random(5)
    for _ in range(200):
        sql, want = cases[rng.randrange(len(cases))]
        got = s.sql(sql).to_arrow()
        assert got.schema.names == want.schema.names, sql
        assert got.schema.types == want.schema.types, sql
        assert got.to_pylist() == want.to_pylist(), sql
