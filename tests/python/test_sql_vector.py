"""pgvector in SQL (src/sql/fn_vector*.c, op_knn.c, optimize_knn.c) against numpy.

Random vectors go in as registered Arrow data; every operator and function
(<-> <#> <=> <+>, l2/cosine/l1_distance, inner_product, vector_dims,
vector_norm, l2_normalize, binary_quantize, subvector, + - * ||, the halfvec
and sparsevec overloads, <~> <%> on bit strings, avg/sum) is compared with
numpy in float64. SQL kNN over a table (with and without an HNSW index,
with and without WHERE) must return exactly min(k, matches) rows in distance
order, equal to t.query().vector_search() and, for exact searches, to brute
force; EXPLAIN shows the VectorTopK node.

hs_sql_* is called through ctypes from the extension module, which exports
it once the SQL layer is linked into it; until then the test is skipped.
HS_SQL_LIB may name another shared library holding the library (e.g. one
linked from build/release/libhyperstream.a with --whole-archive).
"""

import ctypes
import os

import pytest

np = pytest.importorskip("numpy")
pa = pytest.importorskip("pyarrow")
cffi = pytest.importorskip("pyarrow.cffi")
ffi = cffi.ffi


def _load():
    path = os.environ.get("HS_SQL_LIB")
    if not path:
        core = pytest.importorskip("hyperstreamdb._core")
        path = core.__file__
    lib = ctypes.CDLL(path)
    try:
        for name in ("hs_sql_session_new", "hs_sql_execute", "hs_sql_register_stream",
                     "hs_sql_register_table", "hs_sql_session_free"):
            getattr(lib, name)
    except AttributeError:
        pytest.skip("the SQL layer is not linked into the extension yet")
    return lib


class HsError(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 1024)]


def _ptr(x):
    return int(ffi.cast("uintptr_t", x))


class Session:
    def __init__(self, lib):
        self.lib = lib
        self.s = ctypes.c_void_p()
        err = HsError()
        assert lib.hs_sql_session_new(None, ctypes.byref(self.s), ctypes.byref(err)) == 0, err.message

    def close(self):
        self.lib.hs_sql_session_free(self.s)

    def register(self, name, table):
        reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
        stream = ffi.new("struct ArrowArrayStream*")
        reader._export_to_c(_ptr(stream))
        err = HsError()
        st = self.lib.hs_sql_register_stream(self.s, name.encode(), ctypes.c_void_p(_ptr(stream)),
                                             ctypes.byref(err))
        assert st == 0, err.message

    def register_table(self, name, uri):
        err = HsError()
        st = self.lib.hs_sql_register_table(self.s, name.encode(), str(uri).encode(),
                                            ctypes.byref(err))
        assert st == 0, err.message

    def sql(self, text, params=None):
        """The result as a pyarrow Table; raises RuntimeError(message) on failure."""
        out = ffi.new("struct ArrowArrayStream*")
        err = HsError()
        pos = ctypes.c_int32(0)
        ps = pa_ = None
        if params is not None:
            ps, pa_ = ffi.new("struct ArrowSchema*"), ffi.new("struct ArrowArray*")
            params._export_to_c(_ptr(pa_), _ptr(ps))
        try:
            st = self.lib.hs_sql_execute(self.s, text.encode(),
                                         ctypes.c_void_p(_ptr(ps)) if ps is not None else None,
                                         ctypes.c_void_p(_ptr(pa_)) if pa_ is not None else None,
                                         ctypes.c_void_p(_ptr(out)), ctypes.byref(pos),
                                         ctypes.byref(err))
        finally:
            if ps is not None and ps.release != ffi.NULL:
                ps.release(ps)
            if pa_ is not None and pa_.release != ffi.NULL:
                pa_.release(pa_)
        if st != 0:
            raise RuntimeError(err.message.decode())
        return pa.RecordBatchReader._import_from_c(_ptr(out)).read_all()


@pytest.fixture(scope="module")
def lib():
    return _load()


@pytest.fixture()
def sess(lib):
    s = Session(lib)
    yield s
    s.close()


D = 12
N = 300


def _vecs(rng, n, d, zero_frac=0.2):
    x = rng.standard_normal((n, d)).astype(np.float32)
    x[rng.random((n, d)) < zero_frac] = 0
    return x


def _fsl(x):
    return pa.FixedSizeListArray.from_arrays(pa.array(x.ravel(), pa.float32()), x.shape[1])


def _col(t, name):
    c = t.column(name).combine_chunks()
    if pa.types.is_fixed_size_list(c.type):
        return np.asarray(c.flatten().to_numpy(zero_copy_only=False), np.float64).reshape(len(c), -1)
    return c.to_numpy(zero_copy_only=False)


def _close(got, want, rtol=2e-5, atol=1e-5):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    assert ok.all(), (got[~ok][:5], want[~ok][:5])


@pytest.fixture()
def ab(sess):
    rng = np.random.default_rng(7)
    a, b = _vecs(rng, N, D), _vecs(rng, N, D)
    a[3] = 0  # a zero vector: cosine NaN
    sess.register("ab", pa.table({"id": np.arange(N, dtype=np.int64), "g": np.arange(N) % 5,
                                  "a": _fsl(a), "b": _fsl(b)}))
    return a.astype(np.float64), b.astype(np.float64)


def _ref(a, b):
    dot = (a * b).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = 1 - np.clip(dot / np.sqrt((a * a).sum(1) * (b * b).sum(1)), -1, 1)
    return {"l2": np.sqrt(((a - b) ** 2).sum(1)), "ip": dot, "cos": cos,
            "l1": np.abs(a - b).sum(1)}


def test_distance_operators_and_functions(sess, ab):
    a, b = ab
    r = _ref(a, b)
    t = sess.sql("SELECT a <-> b AS l2, a <#> b AS nip, a <=> b AS cos, a <+> b AS l1, "
                 "l2_distance(a, b) AS l2f, inner_product(a, b) AS ipf, "
                 "cosine_distance(a, b) AS cosf, l1_distance(a, b) AS l1f FROM ab ORDER BY id")
    _close(_col(t, "l2"), r["l2"])
    _close(_col(t, "nip"), -r["ip"])
    _close(_col(t, "cos"), r["cos"])
    _close(_col(t, "l1"), r["l1"])
    _close(_col(t, "l2f"), r["l2"])
    _close(_col(t, "ipf"), r["ip"])
    _close(_col(t, "cosf"), r["cos"])
    _close(_col(t, "l1f"), r["l1"])
    assert np.isnan(_col(t, "cos")[3])


def test_halfvec_and_sparsevec_distances(sess, ab):
    a, b = ab
    ah, bh = a.astype(np.float16).astype(np.float64), b.astype(np.float16).astype(np.float64)
    rh = _ref(ah, bh)
    t = sess.sql(f"SELECT a::halfvec({D}) <-> b::halfvec({D}) AS l2, "
                 f"a::halfvec({D}) <#> b::halfvec({D}) AS nip, "
                 f"a::halfvec({D}) <=> b::halfvec({D}) AS cos, "
                 f"l1_distance(a::halfvec({D}), b::halfvec({D})) AS l1 FROM ab ORDER BY id")
    _close(_col(t, "l2"), rh["l2"])
    _close(_col(t, "nip"), -rh["ip"])
    _close(_col(t, "cos"), rh["cos"])
    _close(_col(t, "l1"), rh["l1"])
    r = _ref(a, b)
    t = sess.sql(f"SELECT a::sparsevec({D}) <-> b::sparsevec({D}) AS l2, "
                 f"a::sparsevec <#> b::sparsevec AS nip, a::sparsevec <=> b::sparsevec AS cos, "
                 f"a::sparsevec <+> b::sparsevec AS l1, l2_norm(a::sparsevec) AS n, "
                 f"a::sparsevec::text AS txt FROM ab ORDER BY id")
    _close(_col(t, "l2"), r["l2"])
    _close(_col(t, "nip"), -r["ip"])
    _close(_col(t, "cos"), r["cos"])
    _close(_col(t, "l1"), r["l1"])
    _close(_col(t, "n"), np.sqrt((a * a).sum(1)))
    for i in (0, 1, 3):
        nz = np.nonzero(a[i])[0]
        got = _col(t, "txt")[i]
        body, dim = got[1:].split("}/")
        parsed = {int(k): np.float32(v) for k, v in (p.split(":") for p in body.split(",") if p)}
        assert parsed == {int(j) + 1: np.float32(a[i, j]) for j in nz}, got
        assert int(dim) == D


def test_elementwise_and_unary_functions(sess, ab):
    a, b = ab
    t = sess.sql("SELECT a + b AS s, a - b AS d, a * b AS m, a || b AS c, vector_dims(a) AS n, "
                 "vector_norm(a) AS nrm, l2_normalize(b) AS u, subvector(a, 3, 4)::text AS sub, "
                 "binary_quantize(a)::text AS bq FROM ab ORDER BY id")
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    assert np.array_equal(_col(t, "s"), (a32 + b32).astype(np.float64))
    assert np.array_equal(_col(t, "d"), (a32 - b32).astype(np.float64))
    assert np.array_equal(_col(t, "m"), (a32 * b32).astype(np.float64))
    assert np.array_equal(_col(t, "c"), np.hstack([a, b]))
    assert (_col(t, "n") == D).all()
    _close(_col(t, "nrm"), np.sqrt((a * a).sum(1)), rtol=1e-12, atol=0)
    nb = np.sqrt((b * b).sum(1))[:, None]
    _close(_col(t, "u"), np.where(nb > 0, b / np.where(nb > 0, nb, 1), 0), rtol=1e-6, atol=1e-7)
    # (as text: a vector whose dimension is only known at run time exports as
    # vector(0) for now)
    sub = [np.array(x[1:-1].split(","), np.float32) for x in _col(t, "sub")]
    assert np.array_equal(np.array(sub, np.float64), a[:, 2:6])
    bq = _col(t, "bq")
    for i in range(N):
        assert bq[i] == "".join("1" if x > 0 else "0" for x in a[i])


def test_bit_distances(sess, ab):
    a, b = ab
    t = sess.sql("SELECT binary_quantize(a) <~> binary_quantize(b) AS h, "
                 "binary_quantize(a) <%> binary_quantize(b) AS j, "
                 "hamming_distance(binary_quantize(a), binary_quantize(b)) AS hf, "
                 "jaccard_distance(binary_quantize(a), binary_quantize(b)) AS jf FROM ab ORDER BY id")
    x, y = a > 0, b > 0
    ham = (x != y).sum(1)
    inter, union = (x & y).sum(1), (x | y).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        jac = np.where(inter == 0, 1.0, 1 - inter / np.where(union == 0, 1, union))
    assert np.array_equal(_col(t, "h"), ham)
    assert np.array_equal(_col(t, "hf"), ham)
    _close(_col(t, "j"), jac, rtol=1e-15, atol=0)
    _close(_col(t, "jf"), jac, rtol=1e-15, atol=0)


def test_aggregates(sess, ab):
    a, _ = ab
    t = sess.sql("SELECT g, avg(a) AS av, sum(a) AS s, count(*) AS n FROM ab GROUP BY g ORDER BY g")
    g = np.arange(N) % 5
    for k in range(5):
        _close(_col(t, "av")[k], a[g == k].mean(0), rtol=1e-6, atol=1e-6)
        _close(_col(t, "s")[k], a[g == k].sum(0), rtol=1e-5, atol=1e-4)


def test_null_rows(sess):
    rng = np.random.default_rng(9)
    a, b = _vecs(rng, 50, 4), _vecs(rng, 50, 4)
    na, nb = rng.random(50) < 0.3, rng.random(50) < 0.3
    sess.register("nn", pa.table({
        "id": np.arange(50, dtype=np.int64),
        "a": pa.FixedSizeListArray.from_arrays(pa.array(a.ravel()), 4, mask=pa.array(na)),
        "b": pa.FixedSizeListArray.from_arrays(pa.array(b.ravel()), 4, mask=pa.array(nb))}))
    t = sess.sql("SELECT a <-> b AS d, a::sparsevec(4) <=> b::sparsevec(4) AS s, "
                 "binary_quantize(a) <~> binary_quantize(b) AS h, (a + b)::text AS p, "
                 "l2_normalize(a)::text AS u, vector_norm(a) AS n, a::halfvec(4) <+> b::halfvec(4) AS hv "
                 "FROM nn ORDER BY id")
    both = ~(na | nb)
    for name in ("d", "s", "h", "p", "hv"):
        col = t.column(name).to_pylist()
        assert [x is not None for x in col] == list(both), name
    for name in ("u", "n"):
        assert [x is not None for x in t.column(name).to_pylist()] == list(~na), name
    d = np.array([x for x in t.column("d").to_pylist() if x is not None])
    _close(d, np.sqrt(((a[both].astype(np.float64) - b[both]) ** 2).sum(1)))
    t = sess.sql("SELECT avg(a) AS av, sum(b) AS sb FROM nn")
    _close(_col(t, "av")[0], a[~na].astype(np.float64).mean(0), rtol=1e-6, atol=1e-6)
    _close(_col(t, "sb")[0], b[~nb].astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)


def test_text_forms_and_errors(sess):
    t = sess.sql("SELECT '[1,2.5,3]'::vector(3)::text AS v, '[1.1]'::halfvec(1)::text AS h, "
                 "'{3:2,1:1.5}/5'::sparsevec(5)::text AS s, B'0101'::text AS b")
    assert t.to_pylist() == [{"v": "[1,2.5,3]", "h": "[1.0996094]", "s": "{1:1.5,3:2}/5",
                              "b": "0101"}]
    for q, msg in [("SELECT '[1,2,3,4]'::vector(3)", "expected 3 dimensions, not 4"),
                   ("SELECT '[1,2'::vector(2)", "invalid input syntax for type vector"),
                   ("SELECT '[NaN]'::vector(1)", "NaN not allowed in vector"),
                   ("SELECT '[1,2]'::vector(2) <-> '[1,2,3]'::vector(3)",
                    "different vector dimensions 2 and 3"),
                   ("SELECT '{1:1,1:2}/3'::sparsevec(3)", "indexes must not contain duplicates")]:
        with pytest.raises(RuntimeError, match=msg.replace("[", r"\[")):
            sess.sql(q)


# ------------------------------------------------------------------ kNN

KN, KD = 2000, 16


def _make_table(uri, hnsw=False):
    h = pytest.importorskip("hyperstreamdb")
    rng = np.random.default_rng(11)
    emb = rng.standard_normal((KN, KD)).astype(np.float32)
    null = np.zeros(KN, bool)
    null[::53] = True
    cat = rng.integers(0, 10, KN).astype(np.int32)
    arr = pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()), KD, mask=pa.array(null))
    tb = pa.table({"id": np.arange(KN, dtype=np.int64), "cat": cat, "emb": arr})
    t = h.Table.create(str(uri), tb.schema)
    t.write_arrow(tb.slice(0, KN // 2))
    t.write_arrow(tb.slice(KN // 2))
    if hnsw:
        t.add_index("emb", "hnsw")
    return t, uri, emb.astype(np.float64), null, cat


@pytest.fixture(scope="module")
def knn_table(tmp_path_factory):
    return _make_table(tmp_path_factory.mktemp("sqlvec") / "items")


def _lit(q):
    return "'[" + ",".join(repr(float(x)) for x in q.astype(np.float32)) + f"]'::vector({KD})"


def _brute(emb, null, cat, q, metric, where):
    keep = np.ones(len(emb), bool) if where is None else where(cat, np.arange(len(emb)))
    if metric == "<->":
        d = np.sqrt(((emb - q) ** 2).sum(1))
    elif metric == "<#>":
        d = -(emb @ q)
    elif metric == "<=>":
        d = 1 - (emb @ q) / np.sqrt((emb * emb).sum(1) * (q @ q))
    else:
        d = np.abs(emb - q).sum(1)
    idx = np.nonzero(keep & ~null)[0]
    order = idx[np.argsort(d[idx], kind="stable")]
    return order, d, np.nonzero(keep & null)[0]


WHERES = [("", None), ("WHERE cat = 4", lambda c, i: c == 4),
          ("WHERE cat = 1 AND id < 150", lambda c, i: (c == 1) & (i < 150))]


@pytest.mark.parametrize("metric", ["<->", "<#>", "<=>", "<+>"])
@pytest.mark.parametrize("where", range(len(WHERES)))
@pytest.mark.parametrize("k", [1, 10, 40])
def test_knn_exact_table(sess, knn_table, metric, where, k):
    t, uri, emb, null, cat = knn_table
    sess.register_table("items", uri)
    rng = np.random.default_rng(k * 100 + where)
    q = rng.standard_normal(KD).astype(np.float32).astype(np.float64)
    wtext, wf = WHERES[where]
    sql = f"SELECT id, emb {metric} {_lit(q)} AS d FROM items {wtext} ORDER BY emb {metric} {_lit(q)} LIMIT {k}"
    plan = "\n".join(sess.sql("EXPLAIN " + sql).column(0).to_pylist())
    assert "VectorTopK" in plan
    res = sess.sql(sql)
    order, d, nulls = _brute(emb, null, cat, q, metric, wf)
    want_n = min(k, len(order) + len(nulls))
    assert res.num_rows == want_n
    ids = _col(res, "id")
    dist = res.column("d").to_pylist()
    n_fin = min(k, len(order))
    assert list(ids[:n_fin]) == list(order[:n_fin])
    _close(dist[:n_fin], d[order[:n_fin]], rtol=1e-5, atol=1e-5)
    # rows without a distance (NULL vectors) come last, as the exact plan sorts them
    assert set(ids[n_fin:]) <= set(nulls) and all(x is None for x in dist[n_fin:])
    # the exact plan (a second key keeps the rewrite away) gives the same rows
    exact = sess.sql(sql.replace(f"LIMIT {k}", f", id LIMIT {k}"))
    assert "VectorTopK" not in "\n".join(
        sess.sql("EXPLAIN " + sql.replace(f"LIMIT {k}", f", id LIMIT {k}")).column(0).to_pylist())
    assert list(_col(exact, "id")[:n_fin]) == list(order[:n_fin])
    assert exact.num_rows == want_n


def test_knn_indexed_matches_vector_search(sess, tmp_path):
    t, uri, emb, null, cat = _make_table(tmp_path / "items", hnsw=True)
    sess.register_table("items", uri)
    rng = np.random.default_rng(5)
    for where, filt in [("", None), ("WHERE cat = 4", "cat = 4")]:
        q = rng.standard_normal(KD).astype(np.float32)
        sql = f"SELECT id, emb <-> {_lit(q)} AS d FROM items {where} ORDER BY emb <-> {_lit(q)} LIMIT 10"
        plan = "\n".join(sess.sql("EXPLAIN ANALYZE " + sql).column(0).to_pylist())
        assert "VectorTopK" in plan and "vector index answered" in plan
        res = sess.sql(sql)
        qy = t.query()
        if filt:
            qy = qy.filter(filt)
        vs = qy.vector_search(q, "emb", k=10).execute()
        assert res.num_rows == 10 == vs.num_rows
        assert list(_col(res, "id")) == list(_col(vs, "id"))
        # true distances of the returned rows
        own = np.sqrt(((emb[_col(res, "id")] - q.astype(np.float64)) ** 2).sum(1))
        _close(_col(res, "d"), own, rtol=1e-5, atol=1e-5)


def test_knn_param_query(sess, knn_table):
    _, uri, emb, null, cat = knn_table
    sess.register_table("items", uri)
    q = np.random.default_rng(3).standard_normal(KD).astype(np.float32)
    params = pa.StructArray.from_arrays([_fsl(q[None, :])], names=["q"])
    res = sess.sql("SELECT id FROM items ORDER BY emb <-> $1 LIMIT 7", params)
    order, _, _ = _brute(emb, null, cat, q.astype(np.float64), "<->", None)
    assert list(_col(res, "id")) == list(order[:7])


def _dup_table(uri, hnsw):
    """KN rows in two data files, every 7th vector NULL, a third of the
    vectors duplicates of others (exact ties), small integers so sums and
    duplicate distances are exact."""
    h = pytest.importorskip("hyperstreamdb")
    rng = np.random.default_rng(23)
    emb = rng.integers(-3, 4, (KN, KD)).astype(np.float32)
    dup = rng.random(KN) < 0.33
    emb[dup] = emb[rng.integers(0, KN, dup.sum())]
    null = np.zeros(KN, bool)
    null[::7] = True
    cat = rng.integers(0, 10, KN).astype(np.int32)
    arr = pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()), KD, mask=pa.array(null))
    tb = pa.table({"id": np.arange(KN, dtype=np.int64), "cat": cat, "emb": arr})
    t = h.Table.create(str(uri), tb.schema)
    t.write_arrow(tb.slice(0, KN // 2))
    t.write_arrow(tb.slice(KN // 2))
    if hnsw:
        t.add_index("emb", "hnsw")
    return uri


@pytest.fixture(scope="module", params=[False, True], ids=["exact", "hnsw"])
def dup_table(request, tmp_path_factory):
    return request.param, _dup_table(tmp_path_factory.mktemp("sqlvecdup") / "items", request.param)


def _plan(sess, sql):
    return "\n".join(sess.sql("EXPLAIN " + sql).column(0).to_pylist())


@pytest.mark.parametrize("metric", ["<->", "<#>", "<=>", "<+>"])
@pytest.mark.parametrize("where", ["", "WHERE cat = 4"])
def test_knn_without_the_vector_column_is_the_exact_plans(sess, dup_table, metric, where):
    """A kNN statement that reads neither the vector nor (l2, cosine) the
    distance takes the search's own distances (op_knn.c): its rows and order
    are the ones of the statement reading the vector, the distances of ip
    and l1 (read without the vector) are the exact plan's bit for bit, and
    without an index every answer is the exact plan's, ties included."""
    indexed, uri = dup_table
    sess.register_table("items", uri)
    rng = np.random.default_rng(len(metric) * 10 + len(where))
    for k in (1, 10, 40):
        q = rng.integers(-3, 4, KD).astype(np.float32)
        if metric == "<=>" and not q.any():
            q[0] = 1
        key = f"emb {metric} {_lit(q)}"
        only_id = f"SELECT id FROM items {where} ORDER BY {key} LIMIT {k}"
        with_d = f"SELECT id, {key} AS d FROM items {where} ORDER BY {key} LIMIT {k}"
        with_v = f"SELECT id, emb FROM items {where} ORDER BY {key} LIMIT {k}"
        vec_read = metric == "<=>"
        assert ("columns=[id, emb]" if vec_read else "columns=[id]") in _plan(sess, only_id)
        vec_read = metric in ("<->", "<=>")
        assert ("columns=[id, emb]" if vec_read else "columns=[id]") in _plan(sess, with_d)
        a, b, c = sess.sql(only_id), sess.sql(with_d), sess.sql(with_v)
        assert list(_col(a, "id")) == list(_col(b, "id")) == list(_col(c, "id"))
        # the exact plan's distances (a second key keeps the rewrite away)
        every = sess.sql(f"SELECT id, {key} AS d FROM items {where} ORDER BY {key}, id")
        exact_d = dict(zip(_col(every, "id").tolist(), every.column("d").to_pylist()))
        assert b.column("d").to_pylist() == [exact_d[i] for i in _col(b, "id").tolist()]
        if not indexed:
            # `+ 0` keeps the rewrite away; the sort is stable: ties in scan order
            plain = f"SELECT id, {key} AS d FROM items {where} ORDER BY ({key}) + 0 LIMIT {k}"
            assert "VectorTopK" not in _plan(sess, plain)
            exact = sess.sql(plain)
            assert list(_col(a, "id")) == list(_col(exact, "id"))
            assert b.column("d").to_pylist() == exact.column("d").to_pylist()


def test_knn_float32_ties_keep_the_exact_order(sess, tmp_path):
    """Two l2 sums of squares one apart round to the same float32 sqrt
    (2897.014): the search returns them as a tie in row order, the exact
    plan orders them by the double sqrt. A statement that does not read the
    vector searches again with it (EXPLAIN ANALYZE says so) and returns the
    exact order; exact duplicates stay in row order."""
    h = pytest.importorskip("hyperstreamdb")
    assert np.sqrt(np.float32(8392689)) == np.sqrt(np.float32(8392690))
    rows = [[2897, 9, 0, 0], [2895, 108, 0, 0], [2897, 9, 0, 0]]  # sums 8392690, 8392689, 8392690
    rows += [[5000 + i, 0, 0, 0] for i in range(30)]
    emb = np.array(rows, np.float32)
    tb = pa.table({"id": np.arange(len(rows), dtype=np.int64), "emb": _fsl(emb)})
    for hnsw in (False, True):
        uri = tmp_path / f"ties{int(hnsw)}"
        t = h.Table.create(str(uri), tb.schema)
        t.write_arrow(tb)
        if hnsw:
            t.add_index("emb", "hnsw")
        sess.register_table("ties", uri)
        sql = "SELECT id FROM ties ORDER BY emb <-> '[0,0,0,0]' LIMIT 4"
        assert "columns=[id]" in _plan(sess, sql)
        assert list(_col(sess.sql(sql), "id")) == [1, 0, 2, 3]
        assert "searched again reading emb" in "\n".join(
            sess.sql("EXPLAIN ANALYZE " + sql).column(0).to_pylist())
        d = sess.sql("SELECT id, emb <-> '[0,0,0,0]' AS d FROM ties ORDER BY d LIMIT 3")
        assert list(_col(d, "id")) == [1, 0, 2]
        assert d.column("d").to_pylist() == [np.sqrt(8392689.0), np.sqrt(8392690.0),
                                              np.sqrt(8392690.0)]
        # no ties among the rows returned: no second search
        far = "SELECT id FROM ties WHERE id > 2 ORDER BY emb <-> '[0,0,0,0]' LIMIT 4"
        assert list(_col(sess.sql(far), "id")) == [3, 4, 5, 6]
        assert "searched again" not in "\n".join(
            sess.sql("EXPLAIN ANALYZE " + far).column(0).to_pylist())
