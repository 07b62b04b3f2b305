"""Distance API (hyperstreamdb.vector) against plain numpy formulas.

Random data (hypothesis) for every metric, one-to-one and batch, float32,
float16 and int8 matrices, bit and sparse vectors; every SIMD level the CPU
offers (HS_SIMD in a child process); pgvector's answers for the edge cases
documented in src/index/vector/README.md; the original's aliases; and the
refusals (shape mismatch, NaN/inf, bad sparse vectors, bad buffers).
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conftest  # noqa: E402,F401  (hypothesis profiles)

import hyperstreamdb as hdb  # noqa: E402

DIMS = [1, 3, 7, 8, 15, 16, 17, 31, 64, 100, 768, 1536]


# ------------------------------------------------------------ references


def ref_l2(a, b):
    return np.sqrt(np.sum((a.astype(np.float64) - b) ** 2, axis=-1))


def ref_ip(a, b):
    return -np.sum(a.astype(np.float64) * b, axis=-1)


def ref_l1(a, b):
    return np.sum(np.abs(a.astype(np.float64) - b), axis=-1)


def ref_cos(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        sim = np.sum(a * b, axis=-1) / np.sqrt(np.sum(a * a, axis=-1) * np.sum(b * b, axis=-1))
    return 1.0 - np.clip(sim, -1.0, 1.0)


REFS = {
    "l2": (hdb.l2_distance, hdb.l2_distance_batch, ref_l2),
    "ip": (hdb.inner_product_distance, hdb.inner_product_distance_batch, ref_ip),
    "l1": (hdb.l1_distance, hdb.l1_distance_batch, ref_l1),
    "cosine": (hdb.cosine_distance, hdb.cosine_distance_batch, ref_cos),
}


def tol(a, b):
    """float32 sums: error bounded by about dim * eps * sum of |terms|."""
    a = a.astype(np.float64)
    return 1e-5 * (np.sum(np.abs(a) * (np.abs(b) + np.abs(a)), axis=-1) + 1) + 1e-6


vectors = st.integers(min_value=0, max_value=len(DIMS) - 1).flatmap(
    lambda i: st.tuples(st.just(DIMS[i]), st.integers(0, 2**32 - 1), st.integers(1, 9))
)


@given(vectors, st.sampled_from(sorted(REFS)))
def test_dense_matches_numpy(case, metric):
    dim, seed, n = case
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(dim).astype(np.float32)
    m = (rng.standard_normal((n, dim)) * rng.choice([0.01, 1, 100])).astype(np.float32)
    one, batch, ref = REFS[metric]
    want = ref(q, m)
    got = batch(q, m)
    assert got.dtype == np.float32 and got.shape == (n,)
    bound = tol(q, m) if metric != "cosine" else 1e-4
    assert np.all(np.abs(got - want) <= bound), (got, want)
    for i in range(n):
        assert abs(one(q, m[i]) - got[i]) <= np.max(bound) + 1e-6
        assert isinstance(one(q, m[i]), float)


@given(vectors, st.sampled_from(sorted(REFS)))
def test_float16_and_int8_matrices(case, metric):
    dim, seed, n = case
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(dim).astype(np.float32)
    m16 = rng.standard_normal((n, dim)).astype(np.float16)
    m8 = rng.integers(-128, 128, (n, dim)).astype(np.int8)
    _, batch, _ = REFS[metric]
    for m in (m16, m8):
        want = batch(q, m.astype(np.float32))
        got = batch(q, m)
        assert np.allclose(got, want, rtol=1e-4, atol=1e-3), (m.dtype, got, want)


@given(st.integers(1, 300), st.integers(0, 2**32 - 1), st.integers(1, 6))
def test_bits_match_numpy(nbits, seed, n):
    rng = np.random.default_rng(seed)
    q = rng.random(nbits) < 0.5
    m = rng.random((n, nbits)) < rng.random()
    ham = np.count_nonzero(m != q, axis=1)
    inter = np.count_nonzero(m & q, axis=1)
    union = np.count_nonzero(m | q, axis=1)
    jac = np.where(union == 0, 1.0, 1.0 - inter / np.maximum(union, 1))
    assert np.array_equal(hdb.hamming_distance_batch(q, m), ham)
    assert np.allclose(hdb.jaccard_distance_batch(q, m), jac, atol=1e-7)
    pq, pm = np.packbits(q), np.packbits(m, axis=1)
    assert np.array_equal(hdb.hamming_distance_packed_batch(pq, pm), ham)
    assert np.allclose(hdb.jaccard_distance_packed_batch(pq, pm), jac, atol=1e-7)
    for i in range(n):
        assert hdb.hamming_distance(q, m[i]) == ham[i]
        assert hdb.hamming_distance_packed(pq, pm[i]) == ham[i]
        assert abs(hdb.jaccard_distance(q, m[i]) - jac[i]) < 1e-7
        assert abs(hdb.jaccard_distance_packed(pq, pm[i]) - jac[i]) < 1e-7


@given(st.integers(1, 200), st.integers(0, 2**32 - 1), st.floats(0.0, 1.0))
def test_sparse_matches_dense(dim, seed, density):
    rng = np.random.default_rng(seed)
    da = np.where(rng.random(dim) < density, rng.standard_normal(dim), 0).astype(np.float32)
    db = np.where(rng.random(dim) < density, rng.standard_normal(dim), 0).astype(np.float32)
    sa, sb = hdb.SparseVector.from_dense(da), hdb.SparseVector.from_dense(db)
    assert np.array_equal(sa.to_dense(), da) and sa.nnz == np.count_nonzero(da)
    pairs = [
        (hdb.l2_distance_sparse, ref_l2),
        (hdb.inner_product_distance_sparse, ref_ip),
        (hdb.l1_distance_sparse, ref_l1),
        (hdb.cosine_distance_sparse, ref_cos),
    ]
    for fn, ref in pairs:
        got, want = fn(sa, sb), ref(da, db)
        if np.isnan(want):
            assert np.isnan(got)
        else:
            assert abs(got - want) <= 1e-4 * (1 + abs(want)), (fn.__name__, got, want)


def test_uint64_packed_words():
    a = np.array([2**64 - 1, 0], dtype=np.uint64)
    b = np.array([0, 1], dtype=np.uint64)
    assert hdb.hamming_distance_packed(a, b) == 65.0
    assert hdb.jaccard_distance_packed(a, b) == 1.0


# ------------------------------------------------- pgvector edge semantics


def test_pgvector_values():
    # Values from pgvector's documentation and regression tests.
    assert hdb.l2_distance([1, 2], [3, 4]) == pytest.approx(2.8284271247461903)
    assert hdb.inner_product_distance([1, 2], [3, 4]) == -11.0
    assert hdb.inner_product([1, 2], [3, 4]) == 11.0
    assert hdb.cosine_distance([1, 2], [2, 4]) == pytest.approx(0.0, abs=1e-7)
    assert hdb.cosine_distance([1, 1], [-1.1, -1.1]) == 2.0  # clamped, never above 2
    assert hdb.l1_distance([1, 2], [3, 5]) == 5.0
    assert np.isnan(hdb.cosine_distance([0, 0], [1, 1]))
    assert np.isnan(hdb.cosine_distance([0, 0], [0, 0]))
    bits = lambda s: np.array([c == "1" for c in s])  # noqa: E731
    assert hdb.hamming_distance(bits("101"), bits("011")) == 2.0
    assert hdb.jaccard_distance(bits("101"), bits("011")) == pytest.approx(2 / 3)
    assert hdb.jaccard_distance(bits("000"), bits("000")) == 1.0
    e = hdb.SparseVector([], [], 2)
    assert np.isnan(hdb.cosine_distance_sparse(e, hdb.SparseVector([0], [1], 2)))
    assert hdb.cosine_distance_sparse(hdb.SparseVector([0], [1], 2), hdb.SparseVector([1], [1], 2)) == 1.0
    assert repr(hdb.SparseVector([0, 2], [1, 2], 3)) == "SparseVector('{1:1,3:2}/3')"


def test_overflow_gives_inf():
    assert hdb.l2_distance([3e38, 0], [-3e38, 0]) == float("inf")
    assert hdb.l1_distance([3e38, 0], [-3e38, 0]) == float("inf")


def test_zero_rows_in_batch():
    q = np.array([1, 2, 3], np.float32)
    m = np.array([[0, 0, 0], [1, 2, 3]], np.float32)
    got = hdb.cosine_distance_batch(q, m)
    assert np.isnan(got[0]) and abs(got[1]) < 1e-6
    assert hdb.l2_distance_batch(q, np.empty((0, 3), np.float32)).shape == (0,)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_refused(bad):
    with pytest.raises(hdb.InvalidArgumentError, match="NaN or infinite"):
        hdb.l2_distance([1, bad], [1, 2])
    with pytest.raises(ValueError, match="row 1"):
        hdb.l2_distance_batch([1, 2], [[1, 2], [bad, 2]])
    with pytest.raises(ValueError):
        hdb.SparseVector([0], [bad], 2)


def test_shape_errors():
    with pytest.raises(hdb.InvalidArgumentError, match="different dimensions 2 and 3"):
        hdb.l2_distance([1, 2], [1, 2, 3])
    with pytest.raises(hdb.InvalidArgumentError, match="at least 1 dimension"):
        hdb.cosine_distance([], [])
    with pytest.raises(hdb.InvalidArgumentError):
        hdb.l2_distance_batch([1, 2], [[1, 2, 3]])
    with pytest.raises(hdb.InvalidArgumentError):
        hdb.l2_distance_batch([1, 2], [1, 2])
    with pytest.raises(hdb.InvalidArgumentError):
        hdb.hamming_distance(np.ones(3, bool), np.ones(4, bool))
    with pytest.raises(hdb.InvalidArgumentError):
        hdb.hamming_distance_packed(np.ones(3, np.float32), np.ones(3, np.float32))
    for args in [([1, 0], [1.0], 3), ([2, 1], [1, 1], 3), ([3], [1], 3), ([0, 0], [1, 1], 3),
                 ([-1], [1], 3), ([0], [1], 0)]:
        with pytest.raises(ValueError):
            hdb.SparseVector(*args)
    with pytest.raises(hdb.InvalidArgumentError, match="different dimensions"):
        hdb.l2_distance_sparse(hdb.SparseVector([0], [1], 2), hdb.SparseVector([0], [1], 3))


def test_core_checks_buffers():
    """The C entry points check lengths and formats themselves."""
    q = np.ones(3, np.float32)
    out = np.empty(2, np.float32)
    with pytest.raises(ValueError, match="do not make"):
        hdb._core._distance_batch("l2", "f32", q, q, 2, 3, out)
    with pytest.raises(TypeError):
        hdb._core._distance_batch("l2", "f32", q.astype(np.float64), q, 1, 3, out[:1])
    with pytest.raises((TypeError, ValueError)):  # out must be writable
        ro = np.empty(1, np.float32)
        ro.flags.writeable = False
        hdb._core._distance_batch("l2", "f32", q, q, 1, 3, ro)
    with pytest.raises(hdb.InvalidArgumentError, match="metric 'nope'"):
        hdb._core._distance_batch("nope", "f32", q, q, 1, 3, out[:1])
    with pytest.raises(hdb.InvalidArgumentError, match="not defined on float"):
        hdb._core._distance_batch("hamming", "f32", q, q, 1, 3, out[:1])
    with pytest.raises(hdb.InvalidArgumentError, match="increasing"):
        hdb._core._distance_sparse("l2", np.array([1, 0], np.uint32), np.ones(2, np.float32), 3,
                                   np.array([], np.uint32), np.array([], np.float32), 3)


# ------------------------------------------------------- aliases, device


def test_aliases_and_device():
    a, b = np.array([1, 2, 3], np.float32), np.array([4, 5, 6], np.float32)
    assert hdb.l2 is hdb.l2_distance and hdb.cosine is hdb.cosine_distance
    assert hdb.l1(a, b) == 9.0 and hdb.inner_product(a, b) == 32.0
    assert hdb.l2(a, b) == pytest.approx(5.196, abs=1e-3)
    assert np.allclose(hdb.l2_batch(a, np.stack([a, b])), [0.0, 5.196152], atol=1e-5)
    assert np.array_equal(hdb.inner_product_batch(a, np.stack([a, b])), [14.0, 32.0])
    assert hdb.hamming([1.0, 2.0, 3.0, 4.0], [1.0, 0.0, 3.0, 5.0]) == 2.0
    assert hdb.jaccard([1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0]) == pytest.approx(2 / 3)
    ctx = hdb.GPUContext.auto_detect()
    assert ctx.backend == "cpu" and hdb.GPUContext.list_available_backends() == ["cpu"]
    assert hdb.l2(a, b, device=ctx) == hdb.l2(a, b)
    with pytest.raises(hdb.UnsupportedError):
        hdb.GPUContext("cuda")
    hdb.set_global_gpu_context(ctx)  # the seed's call sequence
    assert hdb.get_global_gpu_context() is ctx and hdb.l2(a, b) == pytest.approx(5.196, abs=1e-3)
    with pytest.raises(TypeError):
        hdb.set_global_gpu_context("cuda")
    assert hdb.simd_level() in ("scalar", "avx2", "avx512", "neon")


def test_list_and_float64_inputs():
    assert hdb.l2_distance([0, 0], [3, 4]) == 5.0
    m = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]  # strided, float64
    got = hdb.l1_distance_batch([0, 0], m)
    assert np.array_equal(got, np.abs(m).sum(axis=1))


SIMD_SCRIPT = r"""
import numpy as np, hyperstreamdb as hdb
print(hdb.simd_level())
rng = np.random.default_rng(7)
q = rng.standard_normal(1536).astype(np.float32)
m = rng.standard_normal((50, 1536)).astype(np.float32)
np.save(__import__("sys").argv[1], np.stack([
    np.concatenate([f(q[:d], m[:, :d]) for d in (1, 7, 17, 100, 1536)])
    for f in (hdb.l2_distance_batch, hdb.inner_product_distance_batch,
              hdb.cosine_distance_batch, hdb.l1_distance_batch)]))
"""


def test_every_simd_level_agrees(tmp_path):
    results = {}
    for level in ("scalar", "avx2", "avx512", "neon"):
        path = str(tmp_path / f"{level}.npy")
        env = dict(os.environ, HS_SIMD=level)
        proc = subprocess.run([sys.executable, "-c", SIMD_SCRIPT, path], env=env,
                              capture_output=True, text=True, check=True)
        results[proc.stdout.strip()] = np.load(path)
    assert "scalar" in results
    for level, got in results.items():
        assert np.allclose(got, results["scalar"], rtol=1e-4, atol=1e-4), level
