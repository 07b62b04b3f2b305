"""hyperstreamdb.VectorIndex (the per-data-file HNSW/IVF index) against numpy
brute force: recall@10 for every metric, batch == single queries, filter
semantics (exactly min(k, allowed indexed rows), only allowed ids), NaN rows
left out, bytes round trip, corrupt bytes refused, bad input refused."""

import numpy as np
import pytest

import hyperstreamdb as hdb
from hyperstreamdb import CorruptFileError, InvalidArgumentError, VectorIndex

N, DIM, K = 3000, 16, 10


def clustered(n, dim, seed, clusters=20, centers_seed=0):
    """Gaussian blobs around centres drawn from centers_seed: queries come
    from the same distribution as the data (different noise)."""
    centers = np.random.default_rng(centers_seed).normal(size=(clusters, dim))
    rng = np.random.default_rng(seed)
    x = centers[rng.integers(0, clusters, n)] + 0.35 * rng.normal(size=(n, dim))
    return x.astype(np.float32)


@pytest.fixture(scope="module")
def data():
    x = clustered(N, DIM, 1)
    q = clustered(50, DIM, 2)
    return x, q


def brute(x, q, metric, k, allowed=None):
    x64, q64 = x.astype(np.float64), q.astype(np.float64)
    if metric == "l2":
        d = np.sqrt(((x64 - q64) ** 2).sum(1))
    elif metric == "ip":
        d = -(x64 @ q64)
    elif metric == "cosine":
        d = 1 - (x64 @ q64) / (np.linalg.norm(x64, axis=1) * np.linalg.norm(q64))
    else:
        d = np.abs(x64 - q64).sum(1)
    ids = np.arange(len(x))
    if allowed is not None:
        ids = np.intersect1d(ids, allowed)
    ids = ids[~np.isnan(d[ids])]
    order = np.lexsort((ids, d[ids]))[:k]
    return ids[order], d[ids[order]]


@pytest.mark.parametrize("metric", ["l2", "ip", "cosine", "l1"])
def test_recall_against_numpy(data, metric):
    x, q = data
    ix = VectorIndex.build(x, metric=metric)
    assert len(ix) == N and ix.dim == DIM and ix.metric == metric
    ids, dist = ix.search(q, k=K)
    assert ids.shape == (len(q), K) and ids.dtype == np.int64 and dist.dtype == np.float32
    hit = 0
    for i in range(len(q)):
        t_ids, _ = brute(x, q[i], metric, K)
        hit += len(set(t_ids.tolist()) & set(ids[i].tolist()))
        # exact distances for what came back, sorted
        exact = {int(r): v for r, v in zip(*brute(x, q[i], metric, N))}
        np.testing.assert_allclose(dist[i], [exact[int(r)] for r in ids[i]], rtol=1e-4,
                                   atol=1e-4)
        assert np.all(np.diff(dist[i]) >= 0)
    assert hit / (len(q) * K) >= 0.95


def test_batch_equals_single(data):
    x, q = data
    ix = VectorIndex.build(x)
    ids, dist = ix.search(q, k=7)
    for i in range(len(q)):
        i1, d1 = ix.search(q[i], k=7)
        np.testing.assert_array_equal(i1, ids[i])
        np.testing.assert_array_equal(d1, dist[i])
    # threads=1 gives the same answers as the parallel batch
    ids1, dist1 = ix.search(q, k=7, threads=1)
    np.testing.assert_array_equal(ids1, ids)


@pytest.mark.parametrize("fraction", [0.002, 0.05, 0.5])
def test_filter_semantics(data, fraction):
    x, q = data
    ix = VectorIndex.build(x)
    rng = np.random.default_rng(3)
    allowed = np.sort(rng.choice(N, size=max(1, int(N * fraction)), replace=False))
    ids, dist = ix.search(q, k=K, filter=allowed)
    want = min(K, len(allowed))
    hit = 0
    for i in range(len(q)):
        got = ids[i][ids[i] >= 0]
        assert len(got) == want
        assert np.isin(got, allowed).all()
        t_ids, _ = brute(x, q[i], "l2", K, allowed)
        hit += len(set(t_ids.tolist()) & set(got.tolist()))
        if want < K:
            assert (ids[i][want:] == -1).all() and np.isinf(dist[i][want:]).all()
    assert hit / (len(q) * want) >= 0.95
    # a boolean mask means the same as its true positions
    mask = np.zeros(N, dtype=bool)
    mask[allowed] = True
    ids2, _ = ix.search(q, k=K, filter=mask)
    np.testing.assert_array_equal(ids2, ids)


def test_nan_rows_left_out_and_k_past_rows():
    x = clustered(200, 8, 5)
    x[3, 2] = np.nan
    x[7, 0] = np.inf
    ix = VectorIndex.build(x)
    assert len(ix) == 198 and ix.row_count == 200
    ids, dist = ix.search(x[0], k=500)
    got = ids[ids >= 0]
    assert len(got) == 198 and 3 not in got and 7 not in got
    assert np.isinf(dist[198:]).all()
    empty = ix.search(x[0], k=5, filter=np.array([3, 7, 1000], dtype=np.uint32))
    assert (empty[0] == -1).all()


def test_bytes_round_trip_and_corruption(data):
    x, q = data
    ix = VectorIndex.build(x[:500], metric="cosine", threads=1)
    b = ix.to_bytes()
    assert VectorIndex.build(x[:500], metric="cosine", threads=1).to_bytes() == b
    ix2 = VectorIndex.from_bytes(b)
    ix2.validate()
    np.testing.assert_array_equal(ix.search(q, k=5)[0], ix2.search(q, k=5)[0])
    assert "VectorIndex(dim=16, metric='cosine'" in repr(ix2)
    for cut in (0, 10, len(b) // 2, len(b) - 1):
        with pytest.raises(CorruptFileError):
            VectorIndex.from_bytes(b[:cut])
    bad = bytearray(b)
    bad[len(b) - 5] ^= 0x40  # inside the last section (partitions)
    with pytest.raises(CorruptFileError):
        VectorIndex.from_bytes(bytes(bad))


def test_ivf_partitions(data):
    x, q = data
    ix = VectorIndex.build(x, partitions=4)
    assert ix.partitions == 4
    ix.validate()
    ids, _ = ix.search(q, k=K, nprobe=4)
    hit = sum(len(set(brute(x, q[i], "l2", K)[0].tolist()) & set(ids[i].tolist()))
              for i in range(len(q)))
    assert hit / (len(q) * K) >= 0.95


@pytest.mark.parametrize("quantizer,pq_m", [("sq8", 0), ("pq", 0), ("pq", 8)])
def test_quantized(data, quantizer, pq_m):
    x, q = data
    ix = VectorIndex.build(x, quantizer=quantizer, pq_m=pq_m)
    assert f"quantizer='{quantizer}'" in repr(ix)
    ix.validate()
    ids, dist = ix.search(q, k=K)
    hit = 0
    for i in range(len(q)):
        t_ids, t_d = brute(x, q[i], "l2", K)
        hit += len(set(t_ids.tolist()) & set(ids[i].tolist()))
        exact = np.sqrt(((x[ids[i]].astype(np.float64) - q[i]) ** 2).sum(1))
        np.testing.assert_allclose(dist[i], exact, rtol=1e-4, atol=1e-4)  # re-ranked exactly
    assert hit / (len(q) * K) >= 0.95
    ix2 = VectorIndex.from_bytes(ix.to_bytes())
    np.testing.assert_array_equal(ix2.search(q, k=K)[0], ids)


def test_built_index_owns_its_bytes(data):
    """VectorIndex.build keeps the built buffer in the opened index (no bytes
    copy): it outlives the input, reports its size, and to_bytes() copies it
    on demand, the same bytes each time, reopening to the same answers."""
    x, q = data
    xs = x[:800].copy()
    ix = VectorIndex.build(xs, quantizer="sq8", threads=1)
    ids, dist = ix.search(q, k=K)
    del xs
    np.testing.assert_array_equal(ix.search(q, k=K)[0], ids)
    b = ix.to_bytes()
    assert isinstance(b, bytes) and len(b) == int(repr(ix).split(", ")[-1].split()[0])
    assert ix.nbytes == len(b) and VectorIndex.from_bytes(b).nbytes == len(b)
    assert ix.to_bytes() == b
    assert b[8] == 2  # quantized: compact layer 0, format version 2
    assert VectorIndex.build(x[:800], threads=1).to_bytes()[8] == 1  # float32: version 1
    ix2 = VectorIndex.from_bytes(b)
    ids2, dist2 = ix2.search(q, k=K)
    np.testing.assert_array_equal(ids2, ids)
    np.testing.assert_array_equal(dist2, dist)
    ix.validate()


def test_bad_input(data):
    x, q = data
    ix = VectorIndex.build(x[:300])
    with pytest.raises(InvalidArgumentError):
        ix.search(q[0][:5], k=3)  # wrong dimension
    bad = q[0].copy()
    bad[1] = np.nan
    with pytest.raises(InvalidArgumentError):
        ix.search(bad, k=3)
    for k in (0, -1, 2.5):
        with pytest.raises(InvalidArgumentError):
            ix.search(q[0], k=k)
    with pytest.raises(InvalidArgumentError):
        ix.search(q[0], k=3, filter=np.array([-1]))
    with pytest.raises(InvalidArgumentError):
        VectorIndex.build(np.zeros(10, dtype=np.float32))
    with pytest.raises(InvalidArgumentError):
        VectorIndex.build(x[:10], metric="hamming")
    with pytest.raises(InvalidArgumentError):
        VectorIndex.build(x[:10], metric="nope")
    with pytest.raises(InvalidArgumentError):
        VectorIndex.build(x[:10], m=1)
    with pytest.raises(InvalidArgumentError):
        VectorIndex.build(x[:10], quantizer="opq")
    with pytest.raises(InvalidArgumentError):
        VectorIndex.build(x[:100], quantizer="pq", pq_m=5)  # does not divide 16
    cos = VectorIndex.build(x[:50], metric="cosine")
    with pytest.raises(InvalidArgumentError):
        cos.search(np.zeros(DIM), k=3)  # a zero query has no cosine distance


def test_single_query_fast_path(data):
    """The lean per-call path (exact-type checks, NaN check in C, inline
    small batches) answers as the general one for every input form."""
    x, q = data
    ix = VectorIndex.build(x[:400])
    ref_i, ref_d = ix.search(q[:40], k=5)
    for n in (1, 31, 32, 40):  # inline below 32 queries, the thread pool from 32
        ids, dist = ix.search(q[:n], k=5)
        np.testing.assert_array_equal(ids, ref_i[:n])
        np.testing.assert_array_equal(dist, ref_d[:n])
    wide = np.zeros((DIM, 2), dtype=np.float32)
    wide[:, 0] = q[3]
    for form in (q[3], q[3].astype(np.float64), list(map(float, q[3])), wide[:, 0]):
        i1, d1 = ix.search(form, k=np.int64(5), ef_search=0)
        assert i1.shape == (5,) and i1.dtype == np.int64 and d1.dtype == np.float32
        np.testing.assert_array_equal(i1, ref_i[3])
        np.testing.assert_array_equal(d1, ref_d[3])
    bad = q[:4].copy()
    bad[2, 7] = np.inf
    with pytest.raises(InvalidArgumentError, match=r"position \(2, 7\)"):
        ix.search(bad, k=3)
    with np.errstate(over="ignore"), pytest.raises(InvalidArgumentError, match="not allowed"):
        ix.search(np.full(DIM, 1e300), k=3)  # overflows float32 to inf
    for shape in ((), (2, DIM + 1), (1, 1, DIM)):
        with pytest.raises(InvalidArgumentError):
            ix.search(np.ones(shape, dtype=np.float32), k=3)
    with pytest.raises(InvalidArgumentError):
        ix.search(q[0], k=3, ef_search=-1)
