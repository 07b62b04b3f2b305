"""Vector distances over numpy arrays, computed by the C kernels.

The kernels (``src/index/vector/distance.c``) use AVX-512, AVX2+FMA or scalar
code, chosen once from the CPU (``simd_level()`` says which; the environment
variable ``HS_SIMD=scalar|avx2|avx512`` caps it). Values follow pgvector:

==========================  ========  =======================================
function                    operator  value
==========================  ========  =======================================
``l2_distance``             ``<->``   sqrt(sum (a-b)^2)
``inner_product_distance``  ``<#>``   -(a . b): smaller is closer
``cosine_distance``         ``<=>``   1 - a.b/(|a||b|) in [0, 2]; NaN when a
                                      vector is all zeros
``l1_distance``             ``<+>``   sum |a-b|
``hamming_distance``        ``<~>``   positions where a and b differ
``jaccard_distance``        ``<%>``   1 - |A & B| / |A | B| over the non-zero
                                      positions; 1 when both are empty
==========================  ========  =======================================

Inputs are converted to C-contiguous float32 (a copy only when needed);
float16 and int8 matrices are kept as they are and converted on the fly in
C. Sums accumulate in float32, as pgvector's do. Like pgvector, NaN and
infinite components are refused (``InvalidArgumentError``, a ValueError);
finite values whose squares overflow float32 give ``inf``. Every ``_batch``
function takes one query and a 2-D matrix of rows and returns a float32
array with one distance per row; it releases the GIL while it computes.

The original HyperStreamDB's names are aliases: ``l2``, ``l2_batch``,
``cosine``, ``l1``, ``hamming``, ``jaccard`` and their ``_batch`` forms are
the functions above. ``inner_product`` is the plain dot product a . b (as in
the original and pgvector's ``inner_product()``), not the negated distance.
The original's cosine of a zero vector was 1.0; here it is NaN, as pgvector.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._core import InvalidArgumentError, UnsupportedError

__all__ = [
    "simd_level",
    "l2_distance",
    "l2_squared_distance",
    "inner_product_distance",
    "cosine_distance",
    "l1_distance",
    "hamming_distance",
    "jaccard_distance",
    "hamming_distance_packed",
    "jaccard_distance_packed",
    "l2_distance_batch",
    "l2_squared_distance_batch",
    "inner_product_distance_batch",
    "cosine_distance_batch",
    "l1_distance_batch",
    "hamming_distance_batch",
    "jaccard_distance_batch",
    "hamming_distance_packed_batch",
    "jaccard_distance_packed_batch",
    "SparseVector",
    "l2_distance_sparse",
    "inner_product_distance_sparse",
    "cosine_distance_sparse",
    "l1_distance_sparse",
    "GPUContext",
    "ComputeContext",
    "set_global_gpu_context",
    "get_global_gpu_context",
    "l2",
    "l2_batch",
    "cosine",
    "cosine_batch",
    "inner_product",
    "inner_product_batch",
    "l1",
    "l1_batch",
    "hamming",
    "hamming_batch",
    "jaccard",
    "jaccard_batch",
    "VectorIndex",
    "AllowedRows",
]

ArrayLike = Any


def simd_level() -> str:
    """The SIMD level the kernels run at: ``"scalar"``, ``"avx2"``, ``"avx512"`` (x86-64) or
    ``"neon"`` (AArch64)."""
    return _core.simd_level()


# ----------------------------------------------------------------- helpers


def _device(device: Any, context: Any) -> Any:
    """``device=`` or the seed's spelling ``context=`` (a GPUContext); both
    given must be the same context."""
    if context is None:
        return device
    if device is not None and device is not context:
        raise InvalidArgumentError("pass device= or context=, not both")
    return context


def _check_device(device: Any) -> None:
    if device is not None and getattr(device, "backend", "cpu") != "cpu":
        raise UnsupportedError(f"device {device!r}: only the CPU backend exists in this build")


def _vector(x: ArrayLike, name: str) -> np.ndarray:
    a = np.ascontiguousarray(x, dtype=np.float32)
    if a.ndim != 1:
        raise InvalidArgumentError(f"{name}: expected a 1-D vector, got shape {a.shape}")
    if a.shape[0] == 0:
        raise InvalidArgumentError(f"{name}: vector must have at least 1 dimension")
    return a


def _matrix(x: ArrayLike, dim: int, name: str) -> np.ndarray:
    m = np.asarray(x)
    if m.dtype not in (np.float16, np.int8):
        m = np.ascontiguousarray(m, dtype=np.float32)
    else:
        m = np.ascontiguousarray(m)
    if m.ndim != 2:
        raise InvalidArgumentError(f"{name}: expected a 2-D matrix, got shape {m.shape}")
    if m.shape[1] != dim:
        raise InvalidArgumentError(
            f"{name}: rows have {m.shape[1]} dimensions, the query {dim}")
    return m


def _refuse_non_finite(arr: np.ndarray, name: str) -> None:
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidArgumentError(
            f"{name}: NaN or infinite value at position {tuple(int(i) for i in bad)}"
            " (not allowed in vectors, as in pgvector)")


_U32_MAX = 0xFFFFFFFF
#: Bounds of the vector index parameters (``VectorIndex``; README "Limits").
M_MAX = 256
EF_CONSTRUCTION_MAX = 65536
PARTITIONS_MAX = 65536
THREADS_MAX = 256
PQ_M_MAX = 65536


def _count_arg(name: str, v: Any, hi: int = _U32_MAX, lo: int = 0,
               default_note: str = "0: the default") -> int:
    """A count parameter in [lo, hi] (0 is the default where lo is 0),
    else InvalidArgumentError naming it, its value and the range."""
    if isinstance(v, bool):
        raise InvalidArgumentError(f"{name} must be an integer, got {v!r}")
    try:
        n = int(v)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgumentError(f"{name} must be an integer, got {v!r}") from None
    if n != v:
        raise InvalidArgumentError(f"{name} must be an integer, got {v!r}")
    if n != 0 and (n < lo or n > hi) or n < 0:
        raise InvalidArgumentError(f"{name} = {v} outside [{lo}, {hi}] ({default_note})")
    return n


def _kind(m: np.ndarray) -> str:
    if m.dtype == np.float16:
        return "f16"
    if m.dtype == np.int8:
        return "i8"
    return "f32"


def _batch(metric: str, query: ArrayLike, matrix: ArrayLike) -> np.ndarray:
    q = _vector(query, "query")
    m = _matrix(matrix, q.shape[0], "matrix")
    out = np.empty(m.shape[0], dtype=np.float32)
    _core._distance_batch(metric, _kind(m), q, m, m.shape[0], q.shape[0], out)
    # A non-finite result comes from a non-finite input, a zero vector
    # (cosine) or an overflow; only the first is an error, and the inputs
    # are inspected only then, so the common case pays no extra pass.
    if not np.isfinite(out).all():
        _refuse_non_finite(q, "query")
        if m.dtype.kind == "f":
            for row in np.flatnonzero(~np.isfinite(out)):
                _refuse_non_finite(m[row], f"matrix row {int(row)}")
    return out


def _pair(metric: str, a: ArrayLike, b: ArrayLike) -> float:
    va = _vector(a, "a")
    vb = _vector(b, "b")
    if va.shape != vb.shape:
        raise InvalidArgumentError(
            f"vectors have different dimensions {va.shape[0]} and {vb.shape[0]}")
    out = np.empty(1, dtype=np.float32)
    _core._distance_batch(metric, "f32", va, vb, 1, va.shape[0], out)
    if not np.isfinite(out[0]):
        _refuse_non_finite(va, "a")
        _refuse_non_finite(vb, "b")
    return float(out[0])


# ------------------------------------------------------- dense float32


def l2_distance(a: ArrayLike, b: ArrayLike, device: Any = None, context: Any = None) -> float:
    """L2 (Euclidean) distance, pgvector's ``<->``."""
    _check_device(_device(device, context))
    return _pair("l2", a, b)


def l2_squared_distance(a: ArrayLike, b: ArrayLike,
                        device: Any = None, context: Any = None) -> float:
    """Squared L2 distance: the order of ``l2_distance`` without the sqrt."""
    _check_device(_device(device, context))
    return _pair("l2sq", a, b)


def inner_product_distance(a: ArrayLike, b: ArrayLike,
                           device: Any = None, context: Any = None) -> float:
    """Negative inner product -(a . b), pgvector's ``<#>``: smaller is closer."""
    _check_device(_device(device, context))
    return _pair("ip", a, b)


def cosine_distance(a: ArrayLike, b: ArrayLike, device: Any = None, context: Any = None) -> float:
    """Cosine distance 1 - cos(a, b) in [0, 2], pgvector's ``<=>``; NaN for a zero vector."""
    _check_device(_device(device, context))
    return _pair("cosine", a, b)


def l1_distance(a: ArrayLike, b: ArrayLike, device: Any = None, context: Any = None) -> float:
    """L1 (Manhattan) distance, pgvector's ``<+>``."""
    _check_device(_device(device, context))
    return _pair("l1", a, b)


def l2_distance_batch(query: ArrayLike, matrix: ArrayLike,
                      device: Any = None, context: Any = None) -> np.ndarray:
    """L2 distance from ``query`` to every row of ``matrix`` (float32, float16 or int8)."""
    _check_device(_device(device, context))
    return _batch("l2", query, matrix)


def l2_squared_distance_batch(query: ArrayLike, matrix: ArrayLike,
                              device: Any = None, context: Any = None) -> np.ndarray:
    """Squared L2 distance from ``query`` to every row of ``matrix``."""
    _check_device(_device(device, context))
    return _batch("l2sq", query, matrix)


def inner_product_distance_batch(query: ArrayLike, matrix: ArrayLike,
                                 device: Any = None, context: Any = None) -> np.ndarray:
    """Negative inner product from ``query`` to every row of ``matrix``."""
    _check_device(_device(device, context))
    return _batch("ip", query, matrix)


def cosine_distance_batch(query: ArrayLike, matrix: ArrayLike,
                          device: Any = None, context: Any = None) -> np.ndarray:
    """Cosine distance from ``query`` to every row (NaN for zero rows or a zero query)."""
    _check_device(_device(device, context))
    return _batch("cosine", query, matrix)


def l1_distance_batch(query: ArrayLike, matrix: ArrayLike,
                      device: Any = None, context: Any = None) -> np.ndarray:
    """L1 distance from ``query`` to every row of ``matrix``."""
    _check_device(_device(device, context))
    return _batch("l1", query, matrix)


# ------------------------------------------------------- binary vectors


def _packed(x: ArrayLike, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind not in "ui" or a.ndim == 0:
        raise InvalidArgumentError(
            f"{name}: packed bits must be an integer array of 1 or more dimensions, got {a.dtype}")
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).reshape(a.shape[:-1] + (-1,))


def _bits_of(x: ArrayLike, name: str) -> np.ndarray:
    """Elements to bits: non-zero is 1; packed 8 to a byte along the last axis."""
    a = np.asarray(x)
    if a.ndim == 0 or a.shape[-1] == 0:
        raise InvalidArgumentError(f"{name}: vector must have at least 1 dimension")
    return np.packbits(a != 0, axis=-1)


def _bits_pair(metric: str, pa: np.ndarray, pb: np.ndarray) -> float:
    if pa.ndim != 1 or pa.shape != pb.shape:
        raise InvalidArgumentError(
            f"bit vectors must be 1-D of equal length, got {pa.shape} and {pb.shape}")
    out = np.empty(1, dtype=np.float32)
    _core._distance_batch(metric, "bits", pa, pb, 1, pa.shape[0], out)
    return float(out[0])


def _bits_batch(metric: str, pq: np.ndarray, pm: np.ndarray) -> np.ndarray:
    if pq.ndim != 1 or pm.ndim != 2 or pm.shape[1] != pq.shape[0]:
        raise InvalidArgumentError(
            f"bit query {pq.shape} and matrix {pm.shape} do not match")
    pm = np.ascontiguousarray(pm)
    out = np.empty(pm.shape[0], dtype=np.float32)
    _core._distance_batch(metric, "bits", pq, pm, pm.shape[0], pq.shape[0], out)
    return out


def hamming_distance(a: ArrayLike, b: ArrayLike, device: Any = None, context: Any = None) -> float:
    """Number of positions where ``a`` and ``b`` differ, pgvector's ``<~>``.

    Boolean vectors are packed to bits and counted by the popcount kernel;
    other dtypes compare elements (NaN differs from everything), as the
    original did for float vectors."""
    _check_device(_device(device, context))
    va, vb = np.asarray(a), np.asarray(b)
    if va.shape != vb.shape or va.ndim != 1:
        raise InvalidArgumentError(f"vectors must be 1-D of equal length, got {va.shape} and {vb.shape}")
    if va.dtype == np.bool_ and vb.dtype == np.bool_:
        return _bits_pair("hamming", _bits_of(va, "a"), _bits_of(vb, "b"))
    return float(np.count_nonzero(va != vb))


def jaccard_distance(a: ArrayLike, b: ArrayLike, device: Any = None, context: Any = None) -> float:
    """1 - |A & B| / |A | B| over the sets of non-zero positions, pgvector's ``<%>``;
    1.0 when both vectors are all zeros (as pgvector)."""
    _check_device(_device(device, context))
    va, vb = np.asarray(a), np.asarray(b)
    if va.shape != vb.shape or va.ndim != 1:
        raise InvalidArgumentError(f"vectors must be 1-D of equal length, got {va.shape} and {vb.shape}")
    return _bits_pair("jaccard", _bits_of(va, "a"), _bits_of(vb, "b"))


def hamming_distance_batch(query: ArrayLike, matrix: ArrayLike,
                           device: Any = None, context: Any = None) -> np.ndarray:
    """Hamming distance from ``query`` to every row of ``matrix`` (see ``hamming_distance``)."""
    _check_device(_device(device, context))
    q, m = np.asarray(query), np.asarray(matrix)
    if m.ndim != 2 or q.ndim != 1 or m.shape[1] != q.shape[0]:
        raise InvalidArgumentError(f"query {q.shape} and matrix {m.shape} do not match")
    if q.dtype == np.bool_ and m.dtype == np.bool_:
        return _bits_batch("hamming", _bits_of(q, "query"), _bits_of(m, "matrix"))
    return np.count_nonzero(m != q, axis=1).astype(np.float32)


def jaccard_distance_batch(query: ArrayLike, matrix: ArrayLike,
                           device: Any = None, context: Any = None) -> np.ndarray:
    """Jaccard distance from ``query`` to every row of ``matrix`` (non-zero = member)."""
    _check_device(_device(device, context))
    q, m = np.asarray(query), np.asarray(matrix)
    if m.ndim != 2 or q.ndim != 1 or m.shape[1] != q.shape[0]:
        raise InvalidArgumentError(f"query {q.shape} and matrix {m.shape} do not match")
    return _bits_batch("jaccard", _bits_of(q, "query"), _bits_of(m, "matrix"))


def hamming_distance_packed(a: ArrayLike, b: ArrayLike) -> float:
    """Hamming distance between bit-packed vectors (uint8, e.g. ``np.packbits``,
    or wider integers, read as their bytes). Both must use the same packing."""
    return _bits_pair("hamming", _packed(a, "a"), _packed(b, "b"))


def jaccard_distance_packed(a: ArrayLike, b: ArrayLike) -> float:
    """Jaccard distance between bit-packed vectors (see ``hamming_distance_packed``)."""
    return _bits_pair("jaccard", _packed(a, "a"), _packed(b, "b"))


def hamming_distance_packed_batch(query: ArrayLike, matrix: ArrayLike) -> np.ndarray:
    """Hamming distance from a packed query to every packed row of ``matrix``."""
    return _bits_batch("hamming", _packed(query, "query"), _packed(matrix, "matrix"))


def jaccard_distance_packed_batch(query: ArrayLike, matrix: ArrayLike) -> np.ndarray:
    """Jaccard distance from a packed query to every packed row of ``matrix``."""
    return _bits_batch("jaccard", _packed(query, "query"), _packed(matrix, "matrix"))


# ------------------------------------------------------- sparse vectors


class SparseVector:
    """A sparse vector: sorted zero-based ``indices`` (uint32), their ``values``
    (float32) and the total dimension ``dim``.

    Indices must be strictly increasing and below ``dim``; values must be
    finite. (pgvector's text form ``{1:1,3:2}/5`` is one-based; ``repr``
    prints that form.) Explicit zeros are kept: they do not change any
    distance."""

    __slots__ = ("indices", "values", "dim")

    def __init__(self, indices: ArrayLike, values: ArrayLike, dim: int) -> None:
        idx = np.asarray(indices)
        if idx.size and (idx.dtype.kind not in "ui" or int(idx.min()) < 0):
            raise InvalidArgumentError("sparse vector: indices must be non-negative integers")
        dim = int(dim)
        if dim < 1 or dim > 0xFFFFFFFF:
            raise InvalidArgumentError(f"sparse vector: dim {dim} out of range 1..2^32-1")
        idx = np.ascontiguousarray(idx, dtype=np.uint32).reshape(-1)
        val = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
        if idx.shape != val.shape:
            raise InvalidArgumentError(
                f"sparse vector: {idx.shape[0]} indices but {val.shape[0]} values")
        if idx.size and int(idx[-1]) >= dim:
            raise InvalidArgumentError(f"sparse vector: index {int(idx[-1])} >= dim {dim}")
        if idx.size > 1 and not (np.diff(idx.astype(np.int64)) > 0).all():
            raise InvalidArgumentError("sparse vector: indices must be strictly increasing")
        _refuse_non_finite(val, "sparse vector values")
        self.indices, self.values, self.dim = idx, val, dim

    @classmethod
    def from_dense(cls, dense: ArrayLike) -> "SparseVector":
        d = np.asarray(dense, dtype=np.float32).reshape(-1)
        nz = np.flatnonzero(d)
        return cls(nz, d[nz], d.shape[0])

    def to_dense(self) -> np.ndarray:
        out = np.zeros(self.dim, dtype=np.float32)
        out[self.indices] = self.values
        return out

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[0])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SparseVector):
            return NotImplemented
        return (self.dim == other.dim and np.array_equal(self.indices, other.indices)
                and np.array_equal(self.values, other.values))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        body = ",".join(f"{int(i) + 1}:{float(v):g}" for i, v in zip(self.indices, self.values))
        return f"SparseVector('{{{body}}}/{self.dim}')"


def _sparse(metric: str, a: SparseVector, b: SparseVector) -> float:
    if not isinstance(a, SparseVector) or not isinstance(b, SparseVector):
        raise InvalidArgumentError("expected two SparseVector objects")
    return _core._distance_sparse(metric, a.indices, a.values, a.dim, b.indices, b.values, b.dim)


def l2_distance_sparse(a: SparseVector, b: SparseVector) -> float:
    """L2 distance between sparse vectors of equal ``dim``."""
    return _sparse("l2", a, b)


def inner_product_distance_sparse(a: SparseVector, b: SparseVector) -> float:
    """Negative inner product between sparse vectors."""
    return _sparse("ip", a, b)


def cosine_distance_sparse(a: SparseVector, b: SparseVector) -> float:
    """Cosine distance between sparse vectors (NaN when one has no non-zero value)."""
    return _sparse("cosine", a, b)


def l1_distance_sparse(a: SparseVector, b: SparseVector) -> float:
    """L1 distance between sparse vectors."""
    return _sparse("l1", a, b)


# --------------------------------------------------------------- devices


class GPUContext:
    """Where distances are computed. Only the CPU backend exists in this build:
    ``auto_detect()`` does not probe for GPUs yet and always returns a CPU
    context (``backend == "cpu"``), whose kernels are the SIMD ones above.
    Functions accept it as ``device=`` or ``context=`` (the seed's spelling); a non-CPU
    context is refused."""

    __slots__ = ("backend", "device_id")

    def __init__(self, backend: str = "cpu", device_id: int = -1) -> None:
        if backend.lower() != "cpu":
            raise UnsupportedError(f"backend {backend!r}: only 'cpu' exists in this build")
        self.backend = "cpu"
        self.device_id = int(device_id)

    @staticmethod
    def auto_detect() -> "GPUContext":
        """A CPU context (no GPU probing in this build)."""
        return GPUContext("cpu")

    @staticmethod
    def is_available(backend: str) -> bool:
        return backend.lower() == "cpu"

    @staticmethod
    def list_available_backends() -> list:
        return ["cpu"]

    @property
    def simd_level(self) -> str:
        return simd_level()

    def __repr__(self) -> str:
        return f"GPUContext(backend='cpu', simd='{simd_level()}')"


ComputeContext = GPUContext

_global_context = GPUContext("cpu")


def set_global_gpu_context(ctx: GPUContext) -> None:
    """Make ``ctx`` the context used when a call passes no ``device=`` (the
    original's API). Only CPU contexts exist in this build, so this records the
    choice; anything but a :class:`GPUContext` raises ``TypeError``."""
    global _global_context
    if not isinstance(ctx, GPUContext):
        raise TypeError(f"set_global_gpu_context expects a GPUContext, not {type(ctx).__name__}")
    _global_context = ctx


def get_global_gpu_context() -> GPUContext:
    """The context set by :func:`set_global_gpu_context` (a CPU one by default)."""
    return _global_context


# ------------------------------------------- the original's names (aliases)


def inner_product(a: ArrayLike, b: ArrayLike, device: Any = None, context: Any = None) -> float:
    """The dot product a . b (the original's and pgvector's ``inner_product``;
    the distance ``<#>`` is its negation, ``inner_product_distance``)."""
    return -inner_product_distance(a, b, device)


def inner_product_batch(query: ArrayLike, matrix: ArrayLike,
                        device: Any = None, context: Any = None) -> np.ndarray:
    """The dot product of ``query`` with every row of ``matrix``."""
    return -inner_product_distance_batch(query, matrix, device, context)


l2 = l2_distance
l2_batch = l2_distance_batch
cosine = cosine_distance
cosine_batch = cosine_distance_batch
l1 = l1_distance
l1_batch = l1_distance_batch
hamming = hamming_distance
hamming_batch = hamming_distance_batch
jaccard = jaccard_distance
jaccard_batch = jaccard_distance_batch


# ------------------------------------------------------------ vector index


def _allow_arg(filter: ArrayLike) -> np.ndarray:
    """A search filter as the C call takes it: int64 row ids or a bool mask
    (converted to the row bitset in one pass in C)."""
    f = np.asarray(filter)
    if f.ndim != 1:
        raise InvalidArgumentError(
            f"filter: expected a 1-D array of row ids or a bool mask, got shape {f.shape}")
    if f.dtype == np.bool_:
        return np.ascontiguousarray(f)
    if f.size and f.dtype.kind not in "iu":
        raise InvalidArgumentError(f"filter: expected integer row ids, got dtype {f.dtype}")
    if f.dtype.kind == "u" and f.dtype.itemsize == 8 and f.size and f.max() > 0x7FFFFFFFFFFFFFFF:
        raise InvalidArgumentError("filter: row id above 2**63 - 1")
    return np.ascontiguousarray(f, dtype=np.int64)


class AllowedRows:
    """An allow-set over a data file's ``row_count`` rows, kept as a bitset of
    64-bit words (bit ``r % 64`` of word ``r // 64`` set: row ``r`` allowed),
    made once from row ids or a bool mask and passed as
    ``VectorIndex.search(..., filter=...)`` to any number of searches without
    a conversion per call. ``count`` is the number of allowed rows."""

    __slots__ = ("_words", "row_count", "count")

    def __init__(self, filter: ArrayLike, row_count: int) -> None:
        row_count = _count_arg("row_count", row_count)
        f = np.asarray(filter)
        if f.ndim != 1:
            raise InvalidArgumentError(
                f"filter: expected a 1-D array of row ids or a bool mask, got shape {f.shape}")
        mask = np.zeros(row_count, dtype=np.bool_)
        if f.dtype == np.bool_:
            m = min(f.size, row_count)
            mask[:m] = f[:m]
        else:
            if f.size and f.dtype.kind not in "iu":
                raise InvalidArgumentError(f"filter: expected integer row ids, got dtype {f.dtype}")
            if f.size and f.min() < 0:
                raise InvalidArgumentError(f"filter: negative row id {int(f.min())}")
            mask[f[f < row_count]] = True
        self.count = int(np.count_nonzero(mask))
        self.row_count = row_count
        packed = np.packbits(mask, bitorder="little")
        words = np.zeros((row_count + 63) // 64 * 8, dtype=np.uint8)
        words[:packed.size] = packed
        self._words = words.view(np.uint64)

    def __len__(self) -> int:
        return self.count

    def __repr__(self) -> str:
        return f"AllowedRows({self.count} of {self.row_count} rows)"


class VectorIndex:
    """An HNSW (+ IVF) vector index over the rows of one matrix: the index a
    table keeps per data file (``src/index/vector/``), usable on its own.

    ``VectorIndex.build(vectors, metric="l2", m=16, ef_construction=100,
    partitions=0, quantizer=None, seed=42, threads=0, pq_m=0)`` indexes the
    rows of a 2-D array; row ``i`` answers as id ``i``. ``quantizer`` "sq8"
    or "pq" (``pq_m`` sub-spaces, dividing the dimension; 0: 4-d sub-spaces, 2-d below 32 dimensions) makes
    the graph traversal run on compact codes, re-ranked exactly. Rows holding NaN or
    infinite values (and, for cosine, all-zero rows) are left out.
    ``search(q, k=10, ef_search=None, nprobe=None, filter=None, threads=0)``
    takes one query (1-D) or a batch (2-D; run in parallel with the GIL
    released) and returns ``(ids, distances)``: int64 and float32 arrays of
    shape ``(k',)`` or ``(nq, k')`` with ``k' = min(k, len(index))``, each row
    sorted by (distance, id), with exact distances in the metric (pgvector's
    values: ``l2`` is the Euclidean distance, ``ip`` the negative inner
    product, ``cosine`` 1 - cos). ``filter`` is the allowed rows: an array of
    row ids, a bool mask over the rows, or an ``AllowedRows`` from
    ``allowed_rows()`` (prepared once, no conversion per call; ids and masks
    are turned into the index's row bitset in one pass per call). Then
    exactly min(k, allowed indexed rows) answers come back, and the
    rest of a row (fewer allowed rows than k') is id -1 and distance inf.
    ``to_bytes()``/``from_bytes()`` round-trip the index file; ``validate()``
    deep-checks it.

    Limits (every size is bounded before anything is allocated; outside a
    range is :class:`InvalidArgumentError` naming the parameter, its value
    and the range):

    * ``k`` >= 1; above the indexed rows it is clamped to them (the same
      answers: every row), so memory is bounded by the index, not by ``k``.
    * ``ef_search``, ``nprobe``: 0 (or None: the default) to 2**32 - 1; the
      search clamps them to the rows of a partition and to the partition
      count (the same answers as any larger value).
    * ``threads`` (build and search): 0 (all cores) to 256, the worker pool's
      size.
    * ``m``: 2 to 256 (0: the default 16); ``ef_construction``: 1 to 65536
      (0: the default 100); ``partitions``: 0 (chosen from the rows) to
      65536, and at most the indexed rows (more are clamped to them);
      ``pq_m``: 0 (the default) to the dimension, dividing it; dimension:
      1 to 65536.
    * The number of queries in a batch is the caller's (``q`` is already in
      memory); the outputs are ``nq x k'``.
    """

    __slots__ = ("_ix", "_info")

    def __init__(self, _ix: Any) -> None:
        self._ix = _ix
        self._info = _ix.info()

    @classmethod
    def build(cls, vectors: ArrayLike, metric: str = "l2", m: int = 16,
              ef_construction: int = 100, partitions: int = 0,
              quantizer: Optional[str] = None, seed: int = 42,
              threads: int = 0, pq_m: int = 0) -> "VectorIndex":
        x = np.ascontiguousarray(vectors, dtype=np.float32)
        if x.ndim != 2:
            raise InvalidArgumentError(f"vectors: expected a 2-D matrix, got shape {x.shape}")
        if x.shape[1] == 0:
            raise InvalidArgumentError("vectors: rows must have at least 1 dimension")
        quant = "none" if quantizer is None else str(quantizer).lower()
        if quant not in ("none", "sq8", "pq"):
            raise InvalidArgumentError(f"quantizer {quantizer!r}: expected None, 'sq8' or 'pq'")
        m = _count_arg("m", m, M_MAX, 2)
        ef_construction = _count_arg("ef_construction", ef_construction, EF_CONSTRUCTION_MAX, 1)
        partitions = _count_arg("partitions", partitions, PARTITIONS_MAX, 0,
                                "0: chosen from the rows")
        threads = _count_arg("threads", threads, THREADS_MAX, 0, "0: all cores")
        pq_m = _count_arg("pq_m", pq_m, min(PQ_M_MAX, x.shape[1]), 1,
                          "0: the default; it must divide the dimension")
        # The index is built into memory the opened index owns: no bytes copy
        # at the end of the build (to_bytes() makes one on demand).
        ix = _core._vindex_build_open(x, x.shape[0], x.shape[1], str(metric), int(m),
                                      int(ef_construction), int(partitions),
                                      int(seed) & 0xFFFFFFFFFFFFFFFF, int(threads), quant,
                                      int(pq_m))
        return cls(ix)

    @classmethod
    def from_bytes(cls, data: Union[bytes, bytearray, memoryview]) -> "VectorIndex":
        return cls(_core._VectorIndex(bytes(data)))

    def to_bytes(self) -> bytes:
        return self._ix.to_bytes()

    def validate(self) -> None:
        self._ix.validate()

    @property
    def dim(self) -> int:
        return self._info["dim"]

    @property
    def metric(self) -> str:
        return self._info["metric"]

    @property
    def indexed_count(self) -> int:
        return self._info["indexed_count"]

    @property
    def row_count(self) -> int:
        return self._info["row_count"]

    @property
    def partitions(self) -> int:
        return self._info["partitions"]

    @property
    def nbytes(self) -> int:
        """Size of the serialized index in bytes (what ``to_bytes()`` would
        return, without making that copy)."""
        return self._info["nbytes"]

    def __len__(self) -> int:
        return self._info["indexed_count"]

    def __repr__(self) -> str:
        i = self._info
        return (f"VectorIndex(dim={i['dim']}, metric={i['metric']!r}, "
                f"indexed={i['indexed_count']}/{i['row_count']} rows, "
                f"partitions={i['partitions']}, quantizer={i['quantizer']!r}, "
                f"{i['nbytes']} bytes)")

    def search(self, q: ArrayLike, k: int = 10, ef_search: Optional[int] = None,
               nprobe: Optional[int] = None, filter: Optional[ArrayLike] = None,
               threads: int = 0) -> Tuple[np.ndarray, np.ndarray]:
        # The fixed per-call cost matters for single queries (hnswlib's is a
        # few microseconds): common arguments take cheap exact-type checks,
        # the NaN/inf check runs in C, and a 1-D query goes to C unreshaped.
        if type(k) is not int or k <= 0:
            if isinstance(k, bool) or int(k) != k or int(k) <= 0:
                raise InvalidArgumentError(f"k must be a positive integer, got {k!r}")
            k = int(k)
        # k above the indexed rows means every row: clamp before the outputs
        # are allocated (k = 10**8 on 300 rows used to allocate 1.2 GB).
        n_indexed = self._info["indexed_count"]
        kk = k if k <= n_indexed else n_indexed
        kc = kk or 1  # an empty index: the C call still checks the query
        qa = np.ascontiguousarray(q, dtype=np.float32)
        single = qa.ndim == 1
        dim = self._info["dim"]
        if (qa.shape[0] if single else (qa.shape[1] if qa.ndim == 2 else -1)) != dim:
            raise InvalidArgumentError(
                f"query: expected {dim} dimensions, got shape {np.shape(q)}")
        allowed = words = None
        if filter is not None:
            if type(filter) is AllowedRows:
                words = filter._words
            else:
                allowed = _allow_arg(filter)
        ef = 0 if ef_search is None else _count_arg("ef_search", ef_search)
        npr = 0 if nprobe is None else _count_arg("nprobe", nprobe)
        if type(threads) is not int or not 0 <= threads <= THREADS_MAX:
            threads = _count_arg("threads", threads, THREADS_MAX, 0, "0: all cores")
        if single:
            ids = np.empty(kc, dtype=np.int64)
            dist = np.empty(kc, dtype=np.float32)
            self._ix.search(qa, 1, kc, ef, npr, allowed, ids, dist, threads, words)
            return (ids, dist) if kk else (ids[:0], dist[:0])
        nq = qa.shape[0]
        ids = np.empty((nq, kc), dtype=np.int64)
        dist = np.empty((nq, kc), dtype=np.float32)
        self._ix.search(qa, nq, kc, ef, npr, allowed, ids, dist, threads, words)
        return (ids, dist) if kk else (ids[:, :0], dist[:, :0])

    def allowed_rows(self, filter: ArrayLike) -> "AllowedRows":
        """``filter`` (row ids, or a bool mask over the rows) prepared once as
        the index's row bitset, for many searches with the same allow-set:
        ``search(q, filter=ix.allowed_rows(ids))`` then costs no conversion per
        call (README "Filtered search"). Ids at or past ``row_count`` allow
        nothing; a negative id is an ``InvalidArgumentError``."""
        return AllowedRows(filter, self._info["row_count"])
