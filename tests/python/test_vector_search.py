"""Vector search over tables (Table.search, Query.vector_search,
to_pandas(vector_filter=...)) against outside oracles.

Seeded random multi-file tables (several appends, null vectors, NaN
vectors, all-zero vectors, duplicate vectors for ties). The oracle:
  * which rows match a filter: DuckDB over the table's rows;
  * distances: numpy in float64 (pgvector's definitions);
  * order: (distance, data file order, row position) -- the position of a row
    in a plain scan (``to_arrow()`` reads files in plan order), so ties
    between duplicate vectors are checked too.
With small-integer vectors, L2/IP/L1 distances are exact in float32 and
rows, distances and order must be identical; with random floats they are
compared within float32 tolerance (near-ties may swap).
"""

import os
import sys

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hyperstreamdb as hdb  # noqa: E402

DIM = 16


def _batch(rng, first, n, integer):
    if integer:
        v = rng.integers(-3, 4, size=(n, DIM)).astype(np.float32)
    else:
        centers = rng.normal(size=(4, DIM)).astype(np.float32) * 3
        v = centers[rng.integers(0, 4, n)] + rng.normal(size=(n, DIM)).astype(np.float32)
    dup = rng.random(n) < 0.15  # a copy of the previous row: a tie
    for i in np.nonzero(dup)[0]:
        if i > 0:
            v[i] = v[i - 1]
    v[rng.random(n) < 0.02, rng.integers(0, DIM)] = np.nan
    v[rng.random(n) < 0.02] = 0.0  # cosine: NaN distance, never matches
    null = rng.random(n) < 0.06
    flat = pa.array(v.reshape(-1), type=pa.float32())
    emb = pa.FixedSizeListArray.from_arrays(flat, DIM, mask=pa.array(null))
    cats = np.array(["a", "b", "c", "d"])[rng.integers(0, 4, n)]
    return pa.table({
        "id": pa.array(np.arange(first, first + n), pa.int64()),
        "cat": pa.array(cats),
        "grp": pa.array(rng.integers(0, 1000, n).astype(np.int32)),
        "emb": emb,
    })


def _make(path, integer, seed=7, sizes=(700, 500, 900, 300)):
    rng = np.random.default_rng(seed)
    t = hdb.Table(str(path))
    snaps, first = [], 0
    for n in sizes:
        snaps.append(t.write(_batch(rng, first, n, integer)))
        first += n
    return t, snaps


@pytest.fixture(scope="module")
def int_table(tmp_path_factory):
    return _make(tmp_path_factory.mktemp("vs") / "int", integer=True)


@pytest.fixture(scope="module")
def float_table(tmp_path_factory):
    return _make(tmp_path_factory.mktemp("vs") / "float", integer=False, seed=11)


_SCANS = {}


def _scan(t, snapshot_id):
    key = (t.uri, snapshot_id, t.current_snapshot_id)
    if key not in _SCANS:
        _SCANS[key] = t.to_arrow(snapshot_id=snapshot_id)
    return _SCANS[key]


def _oracle_rows(t, filter, snapshot_id=None):
    """(ids, vectors as float64 with NaN for nulls, scan positions) of the
    rows matching `filter` per DuckDB, in scan (plan) order."""
    rows = _scan(t, snapshot_id)
    pos = np.arange(rows.num_rows)
    if filter:
        tbl = rows.drop_columns(["emb"]).append_column("pos", pa.array(pos))  # noqa: F841
        keep = duckdb.connect().sql(f"SELECT pos FROM tbl WHERE {filter}").fetchnumpy()["pos"]
        keep = np.sort(np.asarray(keep, dtype=np.int64))
    else:
        keep = pos
    emb = rows.column("emb").combine_chunks()
    valid = ~np.asarray(emb.is_null().to_numpy(zero_copy_only=False))
    flat = np.asarray(emb.flatten().to_numpy(zero_copy_only=False), dtype=np.float64)
    dim = emb.type.list_size
    vecs = np.full((rows.num_rows, dim), np.nan)
    vecs[valid] = flat.reshape(-1, dim)
    ids = rows.column("id").to_numpy()
    return ids[keep], vecs[keep], keep


def _dist(metric, q, x):
    q = q.astype(np.float64)
    if metric == "l2":
        return np.sqrt(((x - q) ** 2).sum(1))
    if metric == "l2sq":
        return ((x - q) ** 2).sum(1)
    if metric == "ip":
        return -(x @ q)
    if metric == "l1":
        return np.abs(x - q).sum(1)
    if metric == "cosine":
        with np.errstate(invalid="ignore", divide="ignore"):
            d = 1 - (x @ q) / (np.linalg.norm(x, axis=1) * np.linalg.norm(q))
        return np.clip(d, 0, 2)
    raise AssertionError(metric)


def _expected(t, metric, q, k, filter, snapshot_id=None):
    ids, vecs, pos = _oracle_rows(t, filter, snapshot_id)
    d = _dist(metric, q, vecs)
    ok = ~np.isnan(d)
    ids, d, pos = ids[ok], d[ok], pos[ok]
    order = np.lexsort((pos, d.astype(np.float32)))
    return ids[order][:k], d[order][:k], dict(zip(ids, d))


def _check_tolerant(got, exp_ids, exp_d, all_d, k):
    gid = got.column("id").to_numpy()
    gd = got.column("distance").to_numpy()
    assert len(gid) == len(exp_ids) == min(k, len(all_d))
    assert np.all(np.diff(gd) >= 0)
    assert len(set(gid)) == len(gid)
    for i, d in zip(gid, gd):  # true distances
        assert d == pytest.approx(all_d[i], rel=1e-4, abs=1e-4)
    if len(gid):
        kth = exp_d[-1]
        must = {i for i, d in all_d.items() if d < kth - 1e-3}
        assert must <= set(gid)
        assert all(all_d[i] <= kth + 1e-3 for i in gid)


FILTERS = [None, "grp < 500", "cat = 'b' AND grp >= 100", "grp < 3", "grp < 0",
           "cat IN ('a', 'c') OR grp > 990"]


@pytest.mark.parametrize("metric", ["l2", "ip", "l1", "l2sq"])
def test_exact_rows_order_and_ties(int_table, metric):
    t, _ = int_table
    rng = np.random.default_rng(hash(metric) % 1000)
    for filter in FILTERS:
        for k in (1, 137, 100000) if filter in (None, "grp < 500") else (10,):
            q = rng.integers(-3, 4, DIM).astype(np.float32)
            got = t.search("emb", q, k=k, filter=filter, metric=metric)
            exp_ids, exp_d, all_d = _expected(t, metric, q, k, filter)
            assert got.column("id").to_pylist() == exp_ids.tolist(), (metric, filter, k)
            np.testing.assert_array_equal(got.column("distance").to_numpy(),
                                          exp_d.astype(np.float32))
            assert got.column_names == ["id", "cat", "grp", "emb", "distance"]


@pytest.mark.parametrize("metric", ["l2", "ip", "cosine", "l1"])
def test_random_floats_every_metric(float_table, metric):
    t, _ = float_table
    rng = np.random.default_rng(3)
    for filter in FILTERS:
        for k in (1, 50) if filter is None else (10,):
            q = rng.normal(size=DIM).astype(np.float32) * 2
            got = t.search("emb", q, k=k, filter=filter, metric=metric, columns=["id"])
            assert got.column_names == ["id", "distance"]
            exp_ids, exp_d, all_d = _expected(t, metric, q, k, filter)
            _check_tolerant(got, exp_ids, exp_d, all_d, k)


def test_batched_equals_single(float_table):
    t, _ = float_table
    rng = np.random.default_rng(5)
    Q = rng.normal(size=(9, DIM)).astype(np.float32)
    for metric in ("l2", "cosine"):
        many = t.search("emb", Q, k=12, filter="grp < 700", metric=metric, columns=["id", "cat"])
        assert isinstance(many, list) and len(many) == len(Q)
        for q, got in zip(Q, many):
            one = t.search("emb", q, k=12, filter="grp < 700", metric=metric,
                           columns=["id", "cat"])
            assert got.equals(one)
    # The query() form returns the same list.
    res = t.query().filter("grp < 700").vector_search(Q, column="emb", k=12).select(["id"]) \
        .execute()
    assert [r.column("id").to_pylist() for r in res] == \
        [r.column("id").to_pylist() for r in t.search("emb", Q, k=12, filter="grp < 700",
                                                       columns=["id"])]


def test_query_and_pandas_forms(int_table):
    t, _ = int_table
    q = np.arange(DIM, dtype=np.float32) % 3
    want = t.search("emb", q, k=7, filter="cat = 'a'", metric="cosine", columns=["id", "grp"])
    got = (t.query().filter("cat = 'a'")
           .vector_search(q.tolist(), column="emb", k=7, metric="cosine")
           .select(["id", "grp"]).execute())
    assert got.equals(want)
    df = t.to_pandas(filter="cat = 'a'", columns=["id", "grp"],
                     vector_filter={"emb": q, "k": 7, "metric": "cosine"})
    assert df["id"].tolist() == want.column("id").to_pylist()
    df2 = t.to_pandas(filter="cat = 'a'", columns=["id", "grp"],
                      vector_filter={"column": "emb", "query": q, "k": 7, "metric": "<=>"})
    assert df2["id"].tolist() == want.column("id").to_pylist()
    assert list(df2.columns) == ["id", "grp", "distance"]
    arrow = t.to_arrow(filter="cat = 'a'", vector_filter={"emb": q, "k": 3})
    assert arrow.num_rows == 3 and arrow.column_names[-1] == "distance"
    # select() may name "distance" (always returned, last).
    sel = t.query().vector_search(q, column="emb", k=4).select(["distance", "id"]).execute()
    assert sel.column_names == ["id", "distance"]
    qq = t.query().filter("grp < 10").vector_search(q, column="emb", k=5, ef_search=40)
    assert "vector_search(column='emb'" in repr(qq) and "ef_search=40" in repr(qq)
    text = qq.explain()
    assert "data files: 4 planned" in text and "filter: grp < 10" in text


def test_k_beyond_matches_and_no_match(int_table):
    t, _ = int_table
    q = np.ones(DIM, np.float32)
    ids, vecs, _ = _oracle_rows(t, "grp < 20")
    n_match = int((~np.isnan(_dist("l2", q, vecs))).sum())
    got = t.search("emb", q, k=10 ** 6, filter="grp < 20")
    assert got.num_rows == n_match > 0
    none = t.search("emb", q, k=5, filter="grp < 0", columns=["id", "cat"])
    assert none.num_rows == 0 and none.column_names == ["id", "cat", "distance"]


def test_time_travel(int_table):
    t, snaps = int_table
    q = np.zeros(DIM, np.float32)
    q[0] = 2
    for i, sid in enumerate(snaps[:2]):
        got = t.search("emb", q, k=30, filter="grp > 200", snapshot_id=sid)
        exp_ids, _, _ = _expected(t, "l2", q, 30, "grp > 200", snapshot_id=sid)
        assert got.column("id").to_pylist() == exp_ids.tolist()
        assert got.column("id").to_numpy().max() < [700, 1200][i]


def test_list_columns_and_pandas_lists(tmp_path):
    import pandas as pd
    t = hdb.Table(str(tmp_path / "l"))
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(300, 4))
    df = pd.DataFrame({"id": np.arange(300), "embedding": [list(v) for v in vecs]})
    t.write_pandas(df)  # list<double>, as the seed README writes it
    t.write_pandas(df.assign(id=df.id + 300))
    q = np.array([0.1, 0.2, 0.3, 0.4])
    got = t.query().vector_search(q, column="embedding", k=10).execute()
    # Scored as float32; ties (each vector is there twice) by scan order.
    ids = t.to_arrow(columns=["id"]).column("id").to_numpy()
    v32 = vecs.astype(np.float32).astype(np.float64)[ids % 300]
    d = np.sqrt(((v32 - q.astype(np.float32)) ** 2).sum(1))
    order = np.lexsort((np.arange(600), d.astype(np.float32)))
    assert got.column("id").to_pylist() == ids[order][:10].tolist()
    np.testing.assert_allclose(got.column("distance").to_numpy(), d[order][:10], rtol=1e-5)
    # A ragged list row: a clear error naming the column and both dimensions.
    bad = pa.table({"id": pa.array([999], pa.int64()),
                    "embedding": pa.array([[1.0, 2.0, 3.0]], pa.list_(pa.float64()))})
    t.write(bad)
    with pytest.raises(hdb.InvalidArgumentError, match=r"'embedding'.*dimension 3.*dimension 4"):
        t.search("embedding", q, k=5)


def test_errors(int_table):
    t, _ = int_table
    q = np.zeros(DIM, np.float32)
    with pytest.raises(hdb.InvalidArgumentError, match=r"'emb' has dimension 16.*dimension 3"):
        t.search("emb", [1.0, 2.0, 3.0])
    with pytest.raises(hdb.SchemaError, match="'grp'"):
        t.search("grp", q)
    with pytest.raises(hdb.InvalidArgumentError, match="no column 'nope'"):
        t.search("nope", q)
    with pytest.raises(hdb.InvalidArgumentError, match="metric"):
        t.search("emb", q, metric="manhattan-ish")
    with pytest.raises(hdb.InvalidArgumentError, match="k must be"):
        t.search("emb", q, k=0)
    with pytest.raises(hdb.InvalidArgumentError, match="NaN"):
        t.search("emb", np.full(DIM, np.nan, np.float32))
    with pytest.raises(hdb.InvalidArgumentError, match="position"):
        t.search("emb", q, filter="grp >")
    with pytest.raises(hdb.InvalidArgumentError):
        t.to_pandas(vector_filter={"emb": q, "other": q})
    with pytest.raises(hdb.InvalidArgumentError):
        t.search("emb", "not a vector")


# ------------------------------------------------------- through the index

def _clustered(rng, first, n, dim=32, centers=None):
    v = centers[rng.integers(0, len(centers), n)] + rng.normal(size=(n, dim)) * 0.6
    return pa.table({
        "id": pa.array(np.arange(first, first + n), pa.int64()),
        "grp": pa.array(rng.integers(0, 1000, n).astype(np.int32)),
        "emb": pa.FixedSizeListArray.from_arrays(pa.array(v.astype(np.float32).reshape(-1)), dim),
    })


def _indexed_table(path):
    """Three files of 2000 clustered rows (tables record absolute paths, so
    each test writes its own copy), and 25 queries near the clusters."""
    rng = np.random.default_rng(21)
    centers = rng.normal(size=(12, 32)) * 4
    t = hdb.Table(str(path))
    for i in range(3):
        t.write(_clustered(rng, i * 2000, 2000, centers=centers))
    queries = (centers[rng.integers(0, 12, 20)] + rng.normal(size=(20, 32))).astype(np.float32)
    return t, queries


def _recall(got, exp_ids):
    return len(set(got) & set(exp_ids)), len(exp_ids)


@pytest.mark.parametrize("kind,metric", [("hnsw", "l2"), ("ivf_hnsw", "cosine")])
def test_index_recall_and_filters(kind, metric, tmp_path):
    t, queries = _indexed_table(tmp_path / "t")
    before = [t.search("emb", q, k=10, metric=metric, columns=["id"]) for q in queries[:5]]
    assert t._build_vector_index("emb", kind, metric=metric) == 3
    assert t._build_vector_index("emb", kind, metric=metric) == 0  # every file has one
    hit = total = 0
    for q in queries:
        got = t.search("emb", q, k=10, metric=metric, columns=["id"])
        exp_ids, exp_d, all_d = _expected(t, metric, q, 10, None)
        h, n = _recall(got.column("id").to_pylist(), exp_ids.tolist())
        hit, total = hit + h, total + n
        assert got.num_rows == 10
        for i, d in zip(got.column("id").to_pylist(), got.column("distance").to_numpy()):
            assert d == pytest.approx(all_d[i], rel=1e-4, abs=1e-4)  # true distances
    assert hit / total >= 0.95, hit / total
    # The same queries before and after indexing: the same rows up to recall.
    same = sum(len(set(b.column("id").to_pylist()) &
                   set(t.search("emb", q, k=10, metric=metric, columns=["id"])
                       .column("id").to_pylist()))
               for b, q in zip(before, queries[:5]))
    assert same >= 0.95 * 50
    # Filtered: 0.1%, 1%, 10%, 50% -- min(k, matches) rows, recall holds.
    for cut in (1, 10, 100, 500):
        hit = total = 0
        for q in queries[:10]:
            got = t.search("emb", q, k=10, metric=metric, filter=f"grp < {cut}", columns=["id"])
            exp_ids, _, _ = _expected(t, metric, q, 10, f"grp < {cut}")
            assert got.num_rows == len(exp_ids)
            h, n = _recall(got.column("id").to_pylist(), exp_ids.tolist())
            hit, total = hit + h, total + n
        assert hit / total >= 0.95, (cut, hit / total)
    # ef_search and the exact switch are honoured; explain says what ran.
    q = queries[0]
    exact = t.search("emb", q, k=10, metric=metric, exact=True, columns=["id"])
    wide = t.search("emb", q, k=10, metric=metric, ef_search=400, columns=["id"])
    assert _recall(wide.column("id").to_pylist(), exact.column("id").to_pylist())[0] >= 9
    text = t.query().vector_search(q, column="emb", k=10, metric=metric).explain()
    assert "3 searched (3 through a vector index" in text
    # Another metric than the index's: scored exactly, still right.
    other = "ip" if metric != "ip" else "l2"
    got = t.search("emb", q, k=10, metric=other, columns=["id"])
    assert got.column("id").to_pylist() == _expected(t, other, q, 10, None)[0].tolist()
    # A later, unindexed file is searched exactly and merged.
    rng = np.random.default_rng(4)
    t.write(_clustered(rng, 10 ** 6, 300, centers=rng.normal(size=(3, 32)) * 4))
    got = t.search("emb", q, k=10, metric=metric, columns=["id"])
    exp_ids, _, _ = _expected(t, metric, q, 10, None)
    assert _recall(got.column("id").to_pylist(), exp_ids.tolist())[0] >= 9


def test_index_kinds_and_errors(tmp_path):
    t, queries = _indexed_table(tmp_path / "t")
    with pytest.raises(hdb.InvalidArgumentError, match="kind"):
        t._build_vector_index("emb", "kdtree")
    with pytest.raises(hdb.InvalidArgumentError, match="parameter"):
        t._build_vector_index("emb", "hnsw", colour="red")
    with pytest.raises(hdb.SchemaError, match="'grp'"):
        t._build_vector_index("grp", "hnsw")
    for kind, params in (("ivf_hnsw_sq8", {}), ("ivf_pq", dict(partitions=4, pq_m=8))):
        t2, _ = _indexed_table(tmp_path / kind)
        assert t2._build_vector_index("emb", kind, **params) == 3
        hit = total = 0
        for q in queries[:10]:
            got = t2.search("emb", q, k=10, columns=["id"])
            exp_ids, _, all_d = _expected(t2, "l2", q, 10, None)
            # exact distances (the index files are opened lean: float32 rows read by pread)
            for i, d in zip(got.column("id").to_pylist(), got.column("distance").to_numpy()):
                assert d == pytest.approx(all_d[i], rel=1e-4, abs=1e-4), (kind, i)
            h, n = _recall(got.column("id").to_pylist(), exp_ids.tolist())
            hit, total = hit + h, total + n
        assert hit / total >= 0.95, (kind, hit / total)


def test_concurrent_searches_and_writes(tmp_path):
    """Searches from several threads (GIL released, shared open-index cache)
    while another thread appends: every answer is complete and sorted, and
    the final table's answer matches brute force."""
    import threading
    from concurrent.futures import ThreadPoolExecutor
    t, queries = _indexed_table(tmp_path / "t")
    t._build_vector_index("emb", "hnsw")
    rng = np.random.default_rng(8)
    errors = []

    def searcher(i):
        for q in queries[i::4]:
            got = t.search("emb", q, k=10, columns=["id"],
                           filter="grp < 900" if i % 2 else None)
            d = got.column("distance").to_numpy()
            if got.num_rows != 10 or np.any(np.diff(d) < 0):
                errors.append((i, got.num_rows))

    def writer():
        for j in range(2):
            hdb.Table(t.uri).write(_clustered(rng, 10 ** 7 + j * 100, 100,
                                              centers=rng.normal(size=(2, 32)) * 4))

    w = threading.Thread(target=writer)
    w.start()
    with ThreadPoolExecutor(4) as ex:
        list(ex.map(searcher, range(4)))
    w.join()
    assert not errors
    q = queries[0]
    got = t.search("emb", q, k=10, columns=["id"], exact=True)
    assert got.column("id").to_pylist() == _expected(t, "l2", q, 10, None)[0].tolist()


def test_filtered_pq_scan_recall_on_uniform_vectors(tmp_path):
    """A filter's PQ scan (src/index/vector/README.md "Filtered PQ scan")
    re-ranks only the best rows by PQ distance: on vectors with no cluster
    structure (where PQ orders rows worst), two files, filters from 1 % to
    60 % allowed, recall@10 against brute force over the allowed rows stays
    >= 0.95 and every answer has exactly min(k, matches) rows with true
    distances."""
    rng = np.random.default_rng(21)
    n, dim = 6000, 48
    x = rng.random((n, dim), dtype=np.float32)
    tag = rng.integers(0, 1000, n)
    t = hdb.Table(str(tmp_path / "u"))
    for lo, hi in ((0, n // 2), (n // 2, n)):
        t.write(pa.table({"id": np.arange(lo, hi), "tag": tag[lo:hi],
                          "emb": pa.FixedSizeListArray.from_arrays(
                              pa.array(x[lo:hi].ravel()), dim)}))
    t.add_index("emb", "ivf_pq")
    queries = rng.random((12, dim), dtype=np.float32)
    for limit in (10, 50, 200, 600):
        allowed = np.flatnonzero(tag < limit)
        hit = total = 0
        for q in queries:
            got = t.search("emb", q, k=10, filter=f"tag < {limit}", columns=["id"])
            ids = got.column("id").to_pylist()
            assert len(ids) == min(10, len(allowed)), (limit, len(ids))
            d = ((x[allowed] - q) ** 2).sum(1)
            true = set(allowed[np.argsort(d, kind="stable")[:10]].tolist())
            want = np.sqrt(((x[ids] - q) ** 2).sum(1))
            np.testing.assert_allclose(got.column("distance").to_numpy(), want, rtol=1e-4,
                                       atol=1e-4)
            hit += len(true & set(ids))
            total += 10
        assert hit / total >= 0.95, (limit, hit / total)
