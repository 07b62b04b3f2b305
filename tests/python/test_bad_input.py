"""Hostile and broken inputs: every one must end in a clear exception, never a
crash, hang or garbage table.

  * truncations of valid files at many offsets    -> CorruptFileError naming the file
  * bit flips in the footer and in the pages       -> a valid table or a
    (seeded random, reproducible)                     HyperStreamError naming the file
  * zero-length, not-Parquet, bad magic/footer len -> CorruptFileError naming the file
  * directory, missing file                        -> HyperStreamError/OSError naming it
  * unwritable destination                         -> HyperStreamError/OSError naming it
  * schemas the writer cannot store (unions, ...)  -> HyperStreamError naming the column,
                                                      and no file left behind
  * bad arguments (unknown column, unsorted rows)  -> HyperStreamError / ValueError

All reads and writes run through conftest.run_isolated (child processes), so
a segfault or sanitizer abort is reported against the input that caused it.
"""

import os
import random
import struct
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conftest  # noqa: E402

SEED = 20240601
N_TRUNCATIONS = 60
N_FLIPS = 120


def _base_table(n=3000):
    rng = np.random.default_rng(3)
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "f": pa.array(rng.standard_normal(n), mask=rng.random(n) < 0.1),
        "s": pa.array([f"v{i % 50}" for i in range(n)]),
        "l": pa.array([[i, i + 1] if i % 3 else None for i in range(n)], pa.list_(pa.int32())),
        "v": pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(n * 4)
                                                        .astype(np.float32)), 4),
    })


BASES = {
    # name: pyarrow.parquet.write_table keyword arguments
    "plain_v1": dict(compression="none", use_dictionary=False, row_group_size=1000,
                     data_page_size=2048),
    "dict_snappy_v2": dict(compression="snappy", data_page_version="2.0", row_group_size=1500,
                           data_page_size=4096, write_page_checksum=True),
    "zstd_index": dict(compression="zstd", write_page_index=True, data_page_size=1024),
}


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    d = tmp_path_factory.mktemp("bases")
    t = _base_table()
    out = {}
    for name, kw in BASES.items():
        p = str(d / f"{name}.parquet")
        pq.write_table(t, p, **kw)
        with open(p, "rb") as f:
            out[name] = f.read()
    return out


def _footer_span(data):
    """[start, end) of the Thrift FileMetaData of a valid file."""
    (flen,) = struct.unpack("<I", data[-8:-4])
    return len(data) - 8 - flen, len(data) - 8


def _check_error(res, path, classes=("HyperStreamError",), allow_oserror=False):
    base = os.path.basename(path)
    assert not res.get("crash"), f"{base}: CRASH {res['crash']}\n{res.get('stderr', '')[-3000:]}"
    assert not res["ok"], f"{base}: read succeeded, expected {classes}"
    ok_class = any(c in res["mro"] for c in classes) or (allow_oserror and res["oserror"])
    assert ok_class, f"{base}: expected {classes}, got {res['type']}: {res['msg']}"
    assert base in res["msg"], f"{base}: message does not name the file: {res['msg']!r}"


def _write(tmp, name, data):
    p = str(tmp / name)
    with open(p, "wb") as f:
        f.write(data)
    return p


# ------------------------------------------------------------ truncation


def _truncation_offsets(length, rng):
    fixed = {0, 1, 3, 4, 5, 8, 12, length - 1, length - 2, length - 4, length - 5,
             length - 8, length - 9}
    even = {length * i // 25 for i in range(1, 25)}
    rand = {rng.randrange(1, length) for _ in range(N_TRUNCATIONS)}
    return sorted(o for o in fixed | even | rand if 0 <= o < length)


@pytest.mark.parametrize("base", sorted(BASES))
def test_truncated(hdb, tmp_path, bases, base):
    data = bases[base]
    rng = random.Random(SEED)
    ops = []
    for off in _truncation_offsets(len(data), rng):
        p = _write(tmp_path, f"{base}_trunc_{off}.parquet", data[:off])
        ops.append({"id": p, "op": "read", "path": p})
    results = conftest.run_isolated(ops)
    for op in ops:
        _check_error(results[op["id"]], op["path"], classes=("CorruptFileError",))


# ------------------------------------------------------------ bit flips


def _flip(data, lo, hi, rng, nbits):
    b = bytearray(data)
    for _ in range(nbits):
        pos = rng.randrange(lo, hi)
        b[pos] ^= 1 << rng.randrange(8)
    return bytes(b)


@pytest.mark.parametrize("region", ["footer", "pages", "tail"])
@pytest.mark.parametrize("base", sorted(BASES))
def test_bit_flips(hdb, tmp_path, bases, base, region):
    """A flipped bit may leave a valid file (a changed value in a page without
    CRC); otherwise the error must be a HyperStreamError naming the file. The
    child validates every table it gets (Table.validate(full=True))."""
    data = bases[base]
    fstart, fend = _footer_span(data)
    lo, hi = {"footer": (fstart, fend), "pages": (4, fstart), "tail": (fend, len(data))}[region]
    rng = random.Random(f"{SEED}-{base}-{region}")
    n = N_FLIPS if region != "tail" else 16
    ops = []
    for i in range(n):
        p = _write(tmp_path, f"{base}_{region}_flip_{i}.parquet",
                   _flip(data, lo, hi, rng, rng.choice([1, 1, 2, 8])))
        ops.append({"id": p, "op": "read", "path": p})
    results = conftest.run_isolated(ops)
    n_ok = 0
    for op in ops:
        res = results[op["id"]]
        if res.get("ok"):
            n_ok += 1
            continue
        _check_error(res, op["path"])
    if region == "tail":
        # The footer length and magic: no flip there leaves a readable file.
        assert n_ok == 0, f"{n_ok} files with a damaged footer length/magic read without error"


def test_page_checksum_catches_flips(hdb, tmp_path):
    """A file with page CRCs, uncompressed PLAIN int64 pages: flipping any bit
    of a stored value must be caught by the CRC check (CorruptFileError naming
    the file and the CRC), never returned as a different value."""
    n = 4000
    src = str(tmp_path / "crc_base.parquet")
    base = 10**12  # large values: each 8-byte pattern occurs once in the file
    pq.write_table(pa.table({"id": pa.array(np.arange(n, dtype=np.int64) + base)}), src,
                   compression="none", use_dictionary=False, write_page_checksum=True,
                   data_page_size=2048, write_statistics=False)
    with open(src, "rb") as f:
        data = f.read()
    rng = random.Random(SEED + 1)
    ops = []
    for i in range(40):
        k = base + rng.randrange(n)
        pos = data.find(struct.pack("<q", k))
        assert pos > 0 and data.count(struct.pack("<q", k)) == 1, f"value {k} not stored once"
        b = bytearray(data)
        b[pos + rng.randrange(8)] ^= 1 << rng.randrange(8)
        p = _write(tmp_path, f"crc_flip_{i}.parquet", bytes(b))
        ops.append({"id": p, "op": "read", "path": p})
    results = conftest.run_isolated(ops)
    for op in ops:
        res = results[op["id"]]
        _check_error(res, op["path"], classes=("CorruptFileError",))
        assert "crc" in res["msg"].lower(), res["msg"]


# ------------------------------------------------------------ not Parquet at all


NOT_PARQUET = {
    "empty.parquet": b"",
    "text.parquet": b"hello, this is not a parquet file\n" * 50,
    "magic_only.parquet": b"PAR1",
    "two_magics.parquet": b"PAR1PAR1",
    "zero_footer.parquet": b"PAR1" + struct.pack("<I", 0) + b"PAR1",
    "huge_footer_len.parquet": b"PAR1" + b"\0" * 16 + struct.pack("<I", 0xFFFFFFF0) + b"PAR1",
    "footer_len_eq_file.parquet": b"PAR1" + b"\x15" * 8 + struct.pack("<I", 20) + b"PAR1",
    "garbage_footer.parquet": b"PAR1" + bytes(range(256)) * 4 + struct.pack("<I", 1024) + b"PAR1",
    "bad_tail_magic.parquet": b"PAR1" + b"\0" * 32 + struct.pack("<I", 16) + b"PARX",
    "encrypted_magic.parquet": b"PAR1" + b"\0" * 32 + struct.pack("<I", 16) + b"PARE",
}


def test_not_parquet(hdb, tmp_path):
    ops = []
    for name, data in NOT_PARQUET.items():
        p = _write(tmp_path, name, data)
        ops.append({"id": p, "op": "read", "path": p})
    results = conftest.run_isolated(ops)
    for op in ops:
        name = os.path.basename(op["path"])
        classes = ("UnsupportedError", "CorruptFileError") if "encrypted" in name \
            else ("CorruptFileError",)
        _check_error(results[op["id"]], op["path"], classes=classes)


def test_directory_and_missing(hdb, tmp_path):
    d = tmp_path / "a_directory.parquet"
    d.mkdir()
    missing = str(tmp_path / "no_such_file.parquet")
    ops = [{"id": "dir", "op": "read", "path": str(d)},
           {"id": "missing", "op": "read", "path": missing}]
    results = conftest.run_isolated(ops)
    _check_error(results["dir"], str(d), allow_oserror=True)
    _check_error(results["missing"], missing, classes=("NotFoundError", "FileNotFoundError"))


# ------------------------------------------------------------ writing


def test_unwritable_destinations(hdb, tmp_path):
    src = str(tmp_path / "in.arrow")
    conftest.write_ipc(pa.table({"x": [1, 2, 3]}), src)
    a_file = tmp_path / "plain_file"
    a_file.write_bytes(b"x")
    targets = {
        "under_a_file": str(a_file / "out.parquet"),  # ENOTDIR, even for root
        "missing_dir": str(tmp_path / "no" / "such" / "dir" / "out.parquet"),
        "is_directory": str(tmp_path),
    }
    ops = [{"id": k, "op": "write", "path": v, "input": src} for k, v in targets.items()]
    results = conftest.run_isolated(ops)
    for k, path in targets.items():
        _check_error(results[k], path, allow_oserror=True)
    assert not os.path.exists(targets["missing_dir"])


UNSUPPORTED_COLUMNS = {
    "dense_union": lambda: pa.UnionArray.from_dense(
        pa.array([0, 1, 0], pa.int8()), pa.array([0, 0, 1], pa.int32()),
        [pa.array([1, 2]), pa.array(["a"])]),
    "sparse_union": lambda: pa.UnionArray.from_sparse(
        pa.array([0, 1, 0], pa.int8()), [pa.array([1, 2, 3]), pa.array(["a", "b", "c"])]),
    "month_day_nano": lambda: pa.array([(1, 2, 3), None, (0, 0, 0)],
                                       pa.month_day_nano_interval()),
}


@pytest.mark.parametrize("kind", sorted(UNSUPPORTED_COLUMNS))
def test_unwritable_schema(hdb, tmp_path, kind):
    """Types Parquet cannot hold: a HyperStreamError naming the column, and the
    half-written file removed."""
    col = f"bad_{kind}_col"
    table = pa.table({"ok": pa.array([1, 2, 3]), col: UNSUPPORTED_COLUMNS[kind]()})
    src = str(tmp_path / "in.arrow")
    conftest.write_ipc(table, src)
    out = str(tmp_path / "out.parquet")
    res = conftest.run_isolated([{"id": kind, "op": "write", "path": out, "input": src}])[kind]
    assert not res.get("crash"), f"{kind}: CRASH {res['crash']}\n{res.get('stderr', '')}"
    assert not res["ok"], f"writing a {kind} column succeeded"
    assert res["hs"], f"{kind}: not a HyperStreamError: {res['type']}: {res['msg']}"
    assert any(c in res["mro"] for c in ("SchemaError", "UnsupportedError")), res
    assert col in res["msg"], f"{kind}: message does not name the column: {res['msg']!r}"
    assert not os.path.exists(out), f"{kind}: failed write left {out} behind"


def test_dictionary_column_written_or_refused(hdb, tmp_path):
    """A dictionary-typed column is either written so that every reader sees
    the decoded values, or refused with a HyperStreamError naming it."""
    col = "dict_col"
    arr = pa.array(["x", "y", None, "x", ""]).dictionary_encode()
    table = pa.table({"i": pa.array(range(5)), col: arr})
    src = str(tmp_path / "in.arrow")
    conftest.write_ipc(table, src)
    out = str(tmp_path / "out.parquet")
    res = conftest.run_isolated([{"id": "d", "op": "write", "path": out, "input": src}])["d"]
    assert not res.get("crash"), res
    if not res["ok"]:
        assert res["hs"] and col in res["msg"], res
        assert not os.path.exists(out)
        return
    got = pq.read_table(out).column(col)
    if pa.types.is_dictionary(got.type):
        got = got.cast(got.type.value_type)
    assert got.to_pylist() == arr.to_pylist()


# ------------------------------------------------------------ bad arguments


def test_bad_read_arguments(hdb, tmp_path):
    p = str(tmp_path / "args.parquet")
    pq.write_table(pa.table({"a": list(range(10)), "b": list(range(10))}), p)
    ops = [
        {"id": "unknown_column", "op": "read", "path": p, "kwargs": {"columns": ["a", "nope"]}},
        {"id": "unsorted_rows", "op": "read", "path": p, "kwargs": {"rows": [5, 2]}},
        {"id": "duplicate_rows", "op": "read", "path": p, "kwargs": {"rows": [2, 2]}},
        {"id": "negative_row", "op": "read", "path": p, "kwargs": {"rows": [-1]}},
        {"id": "row_past_end", "op": "read", "path": p, "kwargs": {"rows": [3, 10]}},
    ]
    results = conftest.run_isolated(ops)
    r = results["unknown_column"]
    assert not r.get("crash") and not r["ok"], r
    assert "NotFoundError" in r["mro"] and "nope" in r["msg"], r
    for k in ("unsorted_rows", "duplicate_rows", "negative_row", "row_past_end"):
        r = results[k]
        assert not r.get("crash"), f"{k}: CRASH {r}"
        assert not r["ok"], f"{k}: read succeeded"
        assert r["hs"] or "ValueError" in r["mro"] or "IndexError" in r["mro"], f"{k}: {r}"
