"""The session's plan cache (src/sql/plan_cache.c): a SELECT's bound and
optimized plan kept by text and parameter types, its tables refreshed per
run, dropped when a table's schema or indexes change.

Every answer of a cached plan is compared with DuckDB's over the same rows
and with a fresh session's that binds every time (HS_SQL_PLAN_CACHE=0),
through CREATE INDEX / DROP INDEX / ALTER TABLE, another process's append,
settings, re-registered names and parameters of other types; the cache's
memory is bounded however many texts run.
"""
import os
import random
import subprocess
import sys

import pytest

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")


def _fresh(root):
    """A session that binds every statement (no plan cache)."""
    old = os.environ.get("HS_SQL_PLAN_CACHE")
    os.environ["HS_SQL_PLAN_CACHE"] = "0"
    try:
        return hdb.connect(root)
    finally:
        if old is None:
            del os.environ["HS_SQL_PLAN_CACHE"]
        else:
            os.environ["HS_SQL_PLAN_CACHE"] = old


def _rows(tbl):
    cols = [tbl.column(i).to_pylist() for i in range(tbl.num_columns)]
    return [tuple(r) for r in zip(*cols)]


def _make(root, n=3000, d=8, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype(np.float32)
    t = hdb.Table(os.path.join(root, "t"))
    v = rng.integers(-100, 100, n)
    vnull = [None if i % 17 == 0 else int(v[i]) for i in range(n)]
    t.write(pa.table({
        "id": pa.array(np.arange(n), pa.int64()),
        "g": pa.array([f"c{i % 20:02d}" for i in range(n)]),
        "v": pa.array(vnull, pa.int32()),
        "emb": pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), d),
    }))
    return t, x


def _duck(t):
    con = duckdb.connect()
    con.register("t", t.to_arrow())
    return con


def _explain(s, q, params=None):
    return "\n".join(s.sql("EXPLAIN " + q, params).to_arrow().column(0).to_pylist())


def test_cached_plans_answer_as_duckdb_and_a_fresh_session(tmp_path):
    """Random parameterized statements, each text run many times with new
    values: the same rows (in the same order where ORDER BY fixes it) as
    DuckDB and as a session that binds every time."""
    root = str(tmp_path)
    t, x = _make(root)
    s, f = hdb.connect(root), _fresh(root)
    con = _duck(t)
    rng = random.Random(7)
    texts = [
        ("SELECT id, v FROM t WHERE v > $1 ORDER BY id", "SELECT id, v FROM t WHERE v > ? ORDER BY id",
         lambda: [rng.randrange(-120, 120)]),
        ("SELECT g, count(*) AS n, sum(v) AS s FROM t WHERE id < $1 GROUP BY g ORDER BY g",
         "SELECT g, count(*) AS n, sum(v) AS s FROM t WHERE id < ? GROUP BY g ORDER BY g",
         lambda: [rng.randrange(0, 3500)]),
        ("SELECT id FROM t WHERE g = $1 AND v BETWEEN $2 AND $3 ORDER BY v, id",
         "SELECT id FROM t WHERE g = ? AND v BETWEEN ? AND ? ORDER BY v, id",
         lambda: [f"c{rng.randrange(25):02d}", rng.randrange(-100, 0), rng.randrange(0, 100)]),
        ("SELECT a.id, b.id FROM t a JOIN t b ON a.v = b.v WHERE a.id < $1 AND b.g = $2 "
         "ORDER BY a.id, b.id",
         "SELECT a.id, b.id FROM t a JOIN t b ON a.v = b.v WHERE a.id < ? AND b.g = ? "
         "ORDER BY a.id, b.id",
         lambda: [rng.randrange(0, 200), f"c{rng.randrange(20):02d}"]),
        ("SELECT id, v * $1 AS w FROM t WHERE v IS NOT NULL ORDER BY w DESC, id LIMIT 7",
         "SELECT id, v * ? AS w FROM t WHERE v IS NOT NULL ORDER BY w DESC, id LIMIT 7",
         lambda: [rng.randrange(-5, 6)]),
    ]
    for _ in range(12):
        for ours, theirs, params in texts:
            p = params()
            got = _rows(s.sql(ours, p).to_arrow())
            assert got == _rows(f.sql(ours, p).to_arrow()), (ours, p)
            assert got == [tuple(r) for r in con.execute(theirs, p).fetchall()], (ours, p)
    # kNN with a parameter vector: exact (no index) and equal to the fresh plan
    q = "SELECT id FROM t WHERE g = 'c03' ORDER BY emb <-> $1 LIMIT 5"
    ids = np.nonzero(np.array([i % 20 == 3 for i in range(len(x))]))[0]
    for i in range(10):
        qv = x[rng.randrange(len(x))] + np.float32(0.01)
        got = s.sql(q, [qv]).to_arrow().column(0).to_pylist()
        want = ids[np.argsort(((x[ids] - qv) ** 2).sum(1), kind="stable")[:5]].tolist()
        assert got == want
        assert got == f.sql(q, [qv]).to_arrow().column(0).to_pylist()


def test_index_ddl_and_schema_changes_replan(tmp_path):
    """Plans cached before CREATE INDEX / DROP INDEX / ALTER TABLE follow
    them: EXPLAIN of a cached text shows the index once it exists and not
    after it is dropped, new columns appear in *, renamed ones are errors."""
    root = str(tmp_path)
    t, x = _make(root)
    s = hdb.connect(root)
    small = hdb.Table(os.path.join(root, "o"))
    small.write(pa.table({"k": pa.array([3, 5, 8], pa.int64())}))
    join = "SELECT o.k, t.g FROM o LEFT JOIN t ON t.id = o.k ORDER BY o.k"
    want = _rows(s.sql(join).to_arrow())
    assert "IndexNestedLoopJoin" not in _explain(s, join)
    assert "IndexNestedLoopJoin" not in _explain(s, join)  # cached now
    s.sql("CREATE INDEX ON t (id)")
    assert "IndexNestedLoopJoin" in _explain(s, join)
    assert _rows(s.sql(join).to_arrow()) == want
    s.sql("DROP INDEX t_id_idx")
    assert "IndexNestedLoopJoin" not in _explain(s, join)
    assert _rows(s.sql(join).to_arrow()) == want

    knn = "SELECT id FROM t ORDER BY emb <-> $1 LIMIT 3"
    ea = "EXPLAIN ANALYZE " + knn
    before = "\n".join(s.sql(ea, [x[0]]).to_arrow().column(0).to_pylist())
    assert "vector index answered 0 of 1" in before, before
    s.sql("CREATE INDEX ON t USING hnsw (emb vector_l2_ops)")
    after = "\n".join(s.sql(ea, [x[0]]).to_arrow().column(0).to_pylist())
    assert "vector index answered 1" in after, after
    assert s.sql(knn, [x[0]]).to_arrow().column(0).to_pylist()[0] == 0

    star = "SELECT * FROM t WHERE id = $1"
    assert s.sql(star, [1]).to_arrow().schema.names == ["id", "g", "v", "emb"]
    s.sql("ALTER TABLE t ADD COLUMN z integer")
    assert s.sql(star, [1]).to_arrow().schema.names == ["id", "g", "v", "emb", "z"]
    by_name = "SELECT v FROM t WHERE id = $1"
    assert s.sql(by_name, [2]).to_arrow().num_rows == 1
    s.sql("ALTER TABLE t RENAME COLUMN v TO w")
    with pytest.raises(hdb.SqlError, match="v"):
        s.sql(by_name, [2]).to_arrow()
    assert s.sql("SELECT w FROM t WHERE id = $1", [2]).to_arrow().num_rows == 1


def test_another_process_append_is_seen_by_a_cached_plan(tmp_path):
    """Rows another process appends are read by the next run of a cached
    plan (single-table plans keep their plan across appends; joins replan)."""
    root = str(tmp_path)
    t, x = _make(root, n=500)
    s = hdb.connect(root)
    cnt = "SELECT count(*) FROM t WHERE id >= $1"
    knn = "SELECT id FROM t ORDER BY emb <-> $1 LIMIT 1"
    join = "SELECT count(*) FROM t a JOIN t b ON a.id = b.id WHERE a.id >= $1"
    qv = np.full(8, 9.0, np.float32)
    assert s.sql(cnt, [0]).to_arrow().column(0)[0].as_py() == 500
    assert s.sql(knn, [qv]).to_arrow().column(0)[0].as_py() != 99999
    assert s.sql(join, [0]).to_arrow().column(0)[0].as_py() == 500
    code = f"""
import numpy as np, pyarrow as pa, hyperstreamdb as hdb
t = hdb.Table({os.path.join(root, 't')!r})
t.write(pa.table({{"id": pa.array([99999], pa.int64()), "g": ["c00"], "v": pa.array([1], pa.int32()),
    "emb": pa.FixedSizeListArray.from_arrays(pa.array(np.full(8, 9.0, np.float32)), 8)}}))
"""
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ.copy())
    assert s.sql(cnt, [0]).to_arrow().column(0)[0].as_py() == 501
    assert s.sql(knn, [qv]).to_arrow().column(0)[0].as_py() == 99999
    assert s.sql(join, [0]).to_arrow().column(0)[0].as_py() == 501


def test_settings_names_and_parameter_types(tmp_path):
    """SET hnsw.ef_search reaches a cached kNN plan (it answers as a fresh
    session with the same setting); a name registered again means the new
    data; a parameter of another type gets a plan of its own; values baked
    in while binding (LIMIT $1, an uncorrelated subquery) are never reused."""
    root = str(tmp_path)
    t, x = _make(root, n=4000, d=16)
    t.add_index("emb", "hnsw", progress=False)
    t.wait_for_indexes()
    s, f = hdb.connect(root), _fresh(root)
    knn = "SELECT id FROM t ORDER BY emb <-> $1 LIMIT 10"
    rng = np.random.default_rng(3)
    for ef in (1, 400, 2, 40):
        s.sql(f"SET hnsw.ef_search = {ef}")
        f.sql(f"SET hnsw.ef_search = {ef}")
        for _ in range(4):
            qv = rng.normal(size=16).astype(np.float32)
            assert (s.sql(knn, [qv]).to_arrow().column(0).to_pylist()
                    == f.sql(knn, [qv]).to_arrow().column(0).to_pylist()), ef
    s.sql("SET hnsw.ef_search = 400")
    qv = x[17]
    assert s.sql(knn, [qv]).to_arrow().column(0)[0].as_py() == 17

    assert s.sql("SELECT $1 AS a", [5]).to_arrow().column(0).to_pylist() == [5]
    assert s.sql("SELECT $1 AS a", ["x"]).to_arrow().column(0).to_pylist() == ["x"]
    assert s.sql("SELECT $1 AS a", [2.5]).to_arrow().column(0).to_pylist() == [2.5]
    assert s.sql("SELECT $1 AS a", [5]).to_arrow().column(0).to_pylist() == [5]

    lim = "SELECT id FROM t ORDER BY id LIMIT $1"
    for k in (3, 1, 6, 0):
        assert s.sql(lim, [k]).to_arrow().column(0).to_pylist() == list(range(k))
    sub = "SELECT count(*) FROM t WHERE id > (SELECT max(id) FROM t) - $1"
    assert s.sql(sub, [10]).to_arrow().column(0)[0].as_py() == 10
    t.write(pa.table({"id": pa.array([5000, 5001], pa.int64()), "g": ["c00", "c00"],
                      "v": pa.array([1, 2], pa.int32()),
                      "emb": pa.FixedSizeListArray.from_arrays(pa.array(np.zeros(32, np.float32)),
                                                               16)}))
    # max(id) is 5001 now: ids 5000 and 5001 (a stale 3999 would count 12)
    assert s.sql(sub, [10]).to_arrow().column(0)[0].as_py() == 2
    assert s.sql("SELECT max(id) FROM t WHERE id < $1", [10**6]).to_arrow().column(0)[0].as_py() \
        == 5001

    q = "SELECT count(*) AS n FROM t WHERE id < $1"
    assert s.sql(q, [100]).to_arrow().column(0)[0].as_py() == 100
    s.register("t", pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    assert s.sql(q, [100]).to_arrow().column(0)[0].as_py() == 3
    s.register("t", hdb.Table(os.path.join(root, "t")))
    assert s.sql(q, [100]).to_arrow().column(0)[0].as_py() == 100


def test_two_open_streams_of_one_cached_text(tmp_path):
    """A cached plan's runs are copies: two results of one text, open at
    once and read in either order, each have their own rows."""
    root = str(tmp_path)
    _make(root, n=1000)
    s = hdb.connect(root)
    q = "SELECT id FROM t WHERE id < $1 ORDER BY id"
    s.sql(q, [1]).to_arrow()
    a = s.sql(q, [5])
    b = s.sql(q, [3])
    assert b.to_arrow().column(0).to_pylist() == [0, 1, 2]
    assert a.to_arrow().column(0).to_pylist() == [0, 1, 2, 3, 4]


def _rss_kib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc (Linux)")
def test_many_texts_keep_memory_bounded(tmp_path):
    """Thousands of distinct texts: the cache holds a bounded number of
    plans (their memory does not grow with the texts run), and each text
    still answers right."""
    root = str(tmp_path)
    _make(root, n=200)
    s = hdb.connect(root)

    def run(i):
        q = f"SELECT id, g, v FROM t WHERE id = {i % 200} AND v IS DISTINCT FROM {i} ORDER BY id"
        r = s.sql(q).to_arrow()
        assert r.column(0).to_pylist() in ([i % 200], [])

    for i in range(400):
        run(i)
    before = _rss_kib()
    for i in range(400, 4400):
        run(i)
    grown = _rss_kib() - before
    # 4,000 plans kept would take well over 100 MB (a 64 KiB arena block each)
    assert grown < 40_000, f"RSS grew {grown} KiB over 4,000 distinct texts"
