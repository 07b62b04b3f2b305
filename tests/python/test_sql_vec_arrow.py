"""The SQL layer's Arrow import and export (src/sql/vec_arrow.c) against pyarrow.

Every Arrow type the SQL layer reads is built by pyarrow (plain, sliced, in
a sliced multi-column batch, dictionary-encoded, string views), imported as
an SQL chunk (hs_sql_chunk_from_arrow), exported again (hs_sql_schema_to_arrow
+ hs_sql_chunk_to_arrow) and handed back to pyarrow, which must find it valid
(``validate(full=True)``) and equal to the input cast to the SQL type's
export type (int8 -> int32, float16 -> float32, date64 -> date32, timestamps
-> us, uint64 -> decimal128(20, 0), ...). Types SQL cannot read are refused
naming the column.

The C functions are called through ctypes from the extension module, which
exports them once the SQL layer is linked into it (the module links only
what it uses); until then the test is skipped. HS_SQL_VEC_LIB may name
another shared library holding them (a developer's shim).
"""

import ctypes
import datetime
import decimal
import os
import random

import pytest

pa = pytest.importorskip("pyarrow")
cffi = pytest.importorskip("pyarrow.cffi")
ffi = cffi.ffi


def _load():
    path = os.environ.get("HS_SQL_VEC_LIB")
    if not path:
        core = pytest.importorskip("hyperstreamdb._core")
        path = core.__file__
    lib = ctypes.CDLL(path)
    try:
        for name in ("hs_sql_chunk_from_arrow", "hs_sql_schema_to_arrow", "hs_sql_chunk_to_arrow",
                     "hs_sql_chunk_release"):
            getattr(lib, name)
    except AttributeError:
        pytest.skip("the SQL layer is not linked into the extension yet")
    return lib


class HsError(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 1024)]


class SqlType(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("a", ctypes.c_int32), ("b", ctypes.c_int32)]


class SqlVec(ctypes.Structure):  # only the leading fields are read
    _fields_ = [("type", SqlType), ("n", ctypes.c_int64)]


class SqlVecFull(ctypes.Structure):
    _fields_ = [("type", SqlType), ("n", ctypes.c_int64), ("valid", ctypes.c_void_p),
                ("data", ctypes.c_void_p), ("n_refs", ctypes.c_int32), ("refs_cap", ctypes.c_int32),
                ("refs_inline", ctypes.c_void_p * 2), ("refs_heap", ctypes.c_void_p)]


class SqlChunk(ctypes.Structure):
    _fields_ = [("n", ctypes.c_int64), ("n_cols", ctypes.c_int32),
                ("cols", ctypes.POINTER(SqlVecFull))]


@pytest.fixture(scope="module")
def lib():
    return _load()


def _ptr(x):
    return int(ffi.cast("uintptr_t", x))


def roundtrip(lib, batch):
    """batch -> chunk -> Arrow -> pyarrow; (batch, None) or (None, message)."""
    cs_in, ca_in = ffi.new("struct ArrowSchema*"), ffi.new("struct ArrowArray*")
    cs_out, ca_out = ffi.new("struct ArrowSchema*"), ffi.new("struct ArrowArray*")
    batch._export_to_c(_ptr(ca_in), _ptr(cs_in))
    err = HsError()
    chunk = SqlChunk()
    vp = ctypes.c_void_p
    try:
        st = lib.hs_sql_chunk_from_arrow(vp(_ptr(cs_in)), vp(_ptr(ca_in)), None, 0,
                                         ctypes.byref(chunk), ctypes.byref(err))
        assert ca_in.release == ffi.NULL  # consumed on every return
        if st != 0:
            return None, err.message.decode()
        n = chunk.n_cols
        types = (SqlType * max(n, 1))()
        names = (ctypes.c_char_p * max(n, 1))()
        for k in range(n):
            types[k] = chunk.cols[k].type
            names[k] = batch.schema.names[k].encode()
        st = lib.hs_sql_schema_to_arrow(types, names, n, vp(_ptr(cs_out)), ctypes.byref(err))
        assert st == 0, err.message
        st = lib.hs_sql_chunk_to_arrow(ctypes.byref(chunk), vp(_ptr(ca_out)), ctypes.byref(err))
        assert st == 0, err.message
    finally:
        lib.hs_sql_chunk_release(ctypes.byref(chunk))
        if cs_in.release != ffi.NULL:
            cs_in.release(cs_in)
    # The chunk is gone: the exported array must stand on its own.
    out = pa.RecordBatch._import_from_c(_ptr(ca_out), _ptr(cs_out))
    out.validate(full=True)
    return out, None


N = 600
_rng = random.Random(20261202)
INTS = [None if _rng.random() < 0.2 else _rng.randint(-100, 100) for _ in range(N)]
WORDS = ["", "a", "hello world", "\u00e9t\u00e9", "0123456789abcdefXYZ", "zz"]
STRS = [None if _rng.random() < 0.2 else _rng.choice(WORDS) for _ in range(N)]


def _map(f, xs):
    return [None if x is None else f(x) for x in xs]


D0 = datetime.date(2000, 1, 1)
CASES = {
    "int8": (pa.array(INTS, pa.int8()), pa.int32()),
    "int16": (pa.array(_map(lambda v: v * 300, INTS), pa.int16()), pa.int32()),
    "uint8": (pa.array(_map(lambda v: v + 100, INTS), pa.uint8()), pa.int32()),
    "uint16": (pa.array(_map(lambda v: v + 65000, INTS), pa.uint16()), pa.int32()),
    "int32": (pa.array(_map(lambda v: v * 20000000, INTS), pa.int32()), pa.int32()),
    "uint32": (pa.array(_map(lambda v: v + 4000000000, INTS), pa.uint32()), pa.int64()),
    "int64": (pa.array(_map(lambda v: v << 40, INTS), pa.int64()), pa.int64()),
    "uint64": (pa.array(_map(lambda v: 2**64 - 101 + v, INTS), pa.uint64()), pa.decimal128(20, 0)),
    "float16": (pa.array(_map(lambda v: v / 4, INTS), pa.float32()).cast(pa.float16()), pa.float32()),
    "float32": (pa.array(_map(lambda v: v / 3, INTS), pa.float32()), pa.float32()),
    "float64": (pa.array(_map(lambda v: v / 3, INTS), pa.float64()), pa.float64()),
    "bool": (pa.array(_map(lambda v: v > 0, INTS), pa.bool_()), pa.bool_()),
    "string": (pa.array(STRS, pa.string()), pa.string()),
    "large_string": (pa.array(STRS, pa.large_string()), pa.string()),
    "string_view": (pa.array(STRS, pa.string_view()), pa.string()),
    "binary": (pa.array(_map(str.encode, STRS), pa.binary()), pa.binary()),
    "large_binary": (pa.array(_map(str.encode, STRS), pa.large_binary()), pa.binary()),
    "fixed_binary": (pa.array(_map(lambda v: bytes([v & 255, 1, 2]), INTS), pa.binary(3)), pa.binary()),
    "decimal": (pa.array(_map(lambda v: decimal.Decimal(v) / 100, INTS), pa.decimal128(12, 2)),
                pa.decimal128(12, 2)),
    "decimal38": (pa.array(_map(lambda v: decimal.Decimal(v) * 10**30, INTS), pa.decimal128(38, 0)),
                  pa.decimal128(38, 0)),
    "date32": (pa.array(_map(lambda v: D0 + datetime.timedelta(days=v * 50), INTS), pa.date32()),
               pa.date32()),
    "date64": (pa.array(_map(lambda v: D0 + datetime.timedelta(days=v * 50), INTS), pa.date64()),
               pa.date32()),
    "ts_s": (pa.array(_map(lambda v: v * 1000003, INTS), pa.timestamp("s")), pa.timestamp("us")),
    "ts_ms_utc": (pa.array(_map(lambda v: v * 1000003, INTS), pa.timestamp("ms", tz="UTC")),
                  pa.timestamp("us", tz="UTC")),
    "ts_us": (pa.array(_map(lambda v: v * 1000003, INTS), pa.timestamp("us")), pa.timestamp("us")),
    "ts_ns_zone": (pa.array(_map(lambda v: v * 10**12, INTS), pa.timestamp("ns", tz="Europe/Paris")),
                   pa.timestamp("us", tz="UTC")),
    "interval": (pa.array(_map(lambda v: pa.MonthDayNano([v, -v, v * 1000]), INTS),
                          pa.month_day_nano_interval()), pa.month_day_nano_interval()),
    "vector": (pa.array(_map(lambda v: [v * 0.5, 1.0, -v * 0.25], INTS), pa.list_(pa.float32(), 3)),
               pa.list_(pa.field("item", pa.float32()), 3)),
    "null": (pa.nulls(N), pa.null()),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("sl", [(0, N), (3, 400), (N - 3, 3), (5, 0)])
def test_roundtrip(lib, name, sl):
    arr, want = CASES[name]
    col = arr.slice(*sl)
    out, err = roundtrip(lib, pa.RecordBatch.from_arrays([col], names=[name]))
    assert err is None, err
    got = out.column(0)
    assert got.type == want
    assert got.equals(col.cast(want)), (got.to_pylist()[:8], col.to_pylist()[:8])


@pytest.mark.parametrize("name", ["string", "int64", "float32", "date32"])
def test_dictionary(lib, name):
    arr, want = CASES[name]
    enc = arr.dictionary_encode().slice(2, 500)
    out, err = roundtrip(lib, pa.RecordBatch.from_arrays([enc], names=["d"]))
    assert err is None, err
    assert out.column(0).equals(enc.dictionary_decode().cast(want))


def test_sliced_batch(lib):
    names = ["string", "int64", "vector", "bool", "interval"]
    b = pa.RecordBatch.from_arrays([CASES[k][0] for k in names], names=names).slice(7, 450)
    out, err = roundtrip(lib, b)
    assert err is None, err
    assert out.num_rows == 450
    for k, name in enumerate(names):
        assert out.column(k).equals(b.column(k).cast(CASES[name][1])), name


@pytest.mark.parametrize("arr,words", [
    (pa.array([[1.0, 2.0]], pa.list_(pa.float32())), "fixed_size_list"),
    (pa.array([1], pa.time64("us")), "time of day"),
    (pa.array([{"a": 1}]), "not supported"),
    (pa.array([[1.0, 2.0]], pa.list_(pa.float64(), 2)), "fixed_size_list"),
])
def test_refused(lib, arr, words):
    out, err = roundtrip(lib, pa.RecordBatch.from_arrays([arr], names=["emb"]))
    assert out is None
    assert words in err and '"emb"' in err
