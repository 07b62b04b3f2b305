"""Files other writers make, read by us as pyarrow reads them (issue 13 item 5).

pyarrow writes every encoding it has (PLAIN, dictionary / RLE_DICTIONARY with its fallback
to PLAIN, RLE booleans, DELTA_BINARY_PACKED, DELTA_BYTE_ARRAY, DELTA_LENGTH_BYTE_ARRAY,
BYTE_STREAM_SPLIT), data page v1 and v2, every codec we read (zstd, snappy, gzip, lz4,
none), nullable columns with nulls at changing densities, and nested lists and structs.
DuckDB writes its defaults and other codecs, row-group sizes and its v2 format (DELTA
encodings). The data are random (a seed per case, printed on failure); each file is read
by us (`hdb.parquet.read_table`) and by pyarrow, and the two results must agree in
schema (names and types), values and nulls, whole and projected."""

import os
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import hyperstreamdb as hdb

CODECS = ["zstd", "snappy", "gzip", "lz4", "none"]
ALPHA = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789-_", dtype=np.uint8)


def _seed(*parts):
    # HS_TEST_SEED varies the data between runs; the case's name keeps cases apart.
    return zlib.crc32(("/".join(map(str, parts)) + os.environ.get("HS_TEST_SEED", "")).encode())


def _strings(rng, n, lo=0, hi=24, card=None):
    if card is not None:
        pool = _strings(rng, card, lo + 1, hi).to_numpy(zero_copy_only=False)
        return pa.array(pool[rng.integers(0, card, n)])
    lens = rng.integers(lo, hi, n)
    offs = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lens, out=offs[1:])
    chars = ALPHA[rng.integers(0, len(ALPHA), int(offs[-1]))]
    return pa.StringArray.from_buffers(n, pa.py_buffer(offs), pa.py_buffer(chars.tobytes()))


def _nulls(arr, rng):
    # Null density changes every ~900 rows: pages with none, a few, most, all.
    n = len(arr)
    dens = np.repeat(rng.choice([0.0, 0.02, 0.3, 0.9, 1.0], n // 900 + 1), 900)[:n]
    mask = rng.random(n) < dens
    return pc.if_else(pa.array(mask), pa.nulls(n, arr.type), arr) if mask.any() else arr


def _flat(rng, n):
    """The columns of issue 13's shape plus the other flat types, by encoding family."""
    sorted_ts = np.sort(rng.integers(0, 10**13, n)) + 1_600_000_000_000_000
    cols = {
        "id": pa.array(rng.permutation(n).astype(np.int64)),
        "i32": pa.array(rng.integers(-(10**6), 10**6, n).astype(np.int32)),
        "small": pa.array(rng.integers(0, 100, n).astype(np.int32)),
        "u16": pa.array(rng.integers(0, 2**16, n).astype(np.uint16)),
        "i8": pa.array(rng.integers(-128, 128, n).astype(np.int8)),
        "price": pa.array(np.round(rng.random(n) * 1000.0, 2)),
        "f32": pa.array(rng.standard_normal(n).astype(np.float32)),
        "ts": pa.array(sorted_ts, pa.int64()).cast(pa.timestamp("us")),
        "ts_ns": pa.array(rng.integers(0, 2 * 10**18, n), pa.int64()).cast(pa.timestamp("ns")),
        "day": pa.array(rng.integers(-(10**5), 10**5, n).astype(np.int32)).cast(pa.date32()),
        "flag": pa.array(rng.random(n) < 0.3),
        "category": _strings(rng, n, card=int(rng.integers(3, 1200))),
        "note": _strings(rng, n),
        "blob": pa.array([bytes(rng.integers(0, 256, int(k), dtype=np.uint8))
                          for k in rng.integers(0, 12, n)], pa.binary()),
        "fixed": pa.array([bytes(rng.integers(0, 256, 6, dtype=np.uint8)) for _ in range(n)],
                          pa.binary(6)),
    }
    return cols


def _check(path, columns=None):
    want = pq.read_table(path, columns=columns)
    got = hdb.parquet.read_table(str(path), columns=columns)
    assert got.schema.names == want.schema.names
    assert got.num_rows == want.num_rows
    for name in want.schema.names:
        w, g = want.column(name).combine_chunks(), got.column(name).combine_chunks()
        assert g.type == w.type, (name, g.type, w.type)
        assert g.null_count == w.null_count, name
        assert g.equals(w), name


# Encoding -> the flat columns pyarrow can write with it (column_encoding=...).
ENCODINGS = {
    "PLAIN": ["id", "i32", "small", "u16", "i8", "price", "f32", "ts", "ts_ns", "day", "flag",
              "category", "note", "blob", "fixed"],
    "RLE": ["flag"],
    "DELTA_BINARY_PACKED": ["id", "i32", "small", "u16", "i8", "ts", "ts_ns", "day"],
    "DELTA_BYTE_ARRAY": ["category", "note", "blob", "fixed"],
    "DELTA_LENGTH_BYTE_ARRAY": ["category", "note", "blob"],
    "BYTE_STREAM_SPLIT": ["price", "f32", "id", "i32", "ts", "day", "fixed"],
}


@pytest.mark.parametrize("nullable", [False, True], ids=["required", "nulls"])
@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_pyarrow_encodings(tmp_path, encoding, version, nullable):
    seed = _seed("enc", encoding, version, nullable)
    rng = np.random.default_rng(seed)
    n = 20000 + int(rng.integers(0, 3000))
    all_cols = _flat(rng, n)
    names = ENCODINGS[encoding]
    cols = {k: (_nulls(all_cols[k], rng) if nullable else all_cols[k]) for k in names}
    t = pa.table(cols)
    if not nullable:
        t = t.cast(pa.schema([pa.field(f.name, f.type, nullable=False) for f in t.schema]))
    path = tmp_path / "e.parquet"
    codec = CODECS[seed % len(CODECS)]
    pq.write_table(t, path, compression=codec, data_page_version=version,
                   use_dictionary=False, column_encoding=encoding,
                   data_page_size=int(rng.integers(2000, 40000)),
                   row_group_size=n // 2 + int(rng.integers(1, 999)))
    md = pq.ParquetFile(path).metadata
    for i, name in enumerate(names):
        assert encoding in md.row_group(0).column(i).encodings, (name, seed)
    _check(path)
    _check(path, columns=names[::-2])


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_pyarrow_defaults_every_codec(tmp_path, codec, version):
    # pyarrow's defaults: dictionary pages (RLE_DICTIONARY) falling back to PLAIN once a
    # chunk's dictionary passes its limit (the permutation id, the random strings).
    seed = _seed("codec", codec, version)
    rng = np.random.default_rng(seed)
    n = 150000 + int(rng.integers(0, 20000))
    cols = _flat(rng, n)
    for k in ("price", "category", "note", "ts", "blob"):
        cols[k] = _nulls(cols[k], rng)
    t = pa.table(cols)
    path = tmp_path / "d.parquet"
    pq.write_table(t, path, compression=codec, data_page_version=version,
                   row_group_size=int(rng.integers(30000, 90000)))
    encs = pq.ParquetFile(path).metadata.row_group(0).column(0).encodings
    assert "RLE_DICTIONARY" in encs and "PLAIN" in encs, (encs, seed)
    _check(path)
    _check(path, columns=["note", "id", "flag"])


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_pyarrow_nested(tmp_path, version):
    seed = _seed("nested", version)
    rng = np.random.default_rng(seed)
    n = 12000 + int(rng.integers(0, 999))

    def lists(values, empty=0.1, null=0.1):
        lens = rng.integers(0, 6, n)
        lens[rng.random(n) < empty] = 0
        offs = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(lens, out=offs[1:])
        vals = values(int(offs[-1]))
        mask = pa.array(rng.random(n) < null)
        return pa.ListArray.from_arrays(pa.array(offs), vals, mask=mask)

    ints = lists(lambda k: _nulls(pa.array(rng.integers(0, 10**9, k)), rng))
    strs = lists(lambda k: _strings(rng, k, card=50))
    dbl = lists(lambda k: pa.array(rng.standard_normal(k)), empty=0.3, null=0.0)
    st = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 1000, n).astype(np.int32)), _nulls(_strings(rng, n), rng)],
        names=["a", "b"], mask=pa.array(rng.random(n) < 0.05))
    t = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)), "ints": ints, "strs": strs,
                  "dbl": dbl, "st": st})
    path = tmp_path / "n.parquet"
    pq.write_table(t, path, compression=CODECS[seed % len(CODECS)], data_page_version=version,
                   data_page_size=4096, row_group_size=n // 3 + 5)
    _check(path)
    _check(path, columns=["strs", "id"])


duckdb = pytest.importorskip("duckdb")


def _duckdb_write(tmp_path, t, options):
    path = tmp_path / "duck.parquet"
    con = duckdb.connect()
    con.execute("SET threads TO 1")
    con.register("src", t)
    con.execute("CREATE TABLE t AS SELECT * FROM src")
    opts = f" ({options})" if options else ""
    con.execute(f"COPY t TO '{path}'{opts}")
    con.close()
    return path


def _duck_table(rng, n):
    cols = _flat(rng, n)
    del cols["u16"], cols["fixed"]  # DuckDB writes them as other types; covered by pyarrow
    for k in ("price", "note", "category", "ts", "i32"):
        cols[k] = _nulls(cols[k], rng)
    return pa.table(cols)


DUCK_OPTIONS = [
    "",  # DuckDB's defaults: snappy, 122,880-row row groups
    "COMPRESSION zstd",
    "COMPRESSION gzip",
    "COMPRESSION uncompressed",
    "COMPRESSION lz4",
    "COMPRESSION zstd, ROW_GROUP_SIZE 10000",
    "COMPRESSION snappy, ROW_GROUP_SIZE 2048",
    "PARQUET_VERSION V2",
    "PARQUET_VERSION V2, COMPRESSION zstd, ROW_GROUP_SIZE 30000",
]


@pytest.mark.parametrize("options", DUCK_OPTIONS, ids=lambda o: o or "defaults")
def test_duckdb_written(tmp_path, options):
    seed = _seed("duck", options)
    rng = np.random.default_rng(seed)
    n = 150000 + int(rng.integers(0, 20000))
    path = _duckdb_write(tmp_path, _duck_table(rng, n), options)
    _check(path)
    _check(path, columns=["ts", "note", "id"])


def test_duckdb_nested(tmp_path):
    seed = _seed("ducknested")
    rng = np.random.default_rng(seed)
    path = tmp_path / "dn.parquet"
    con = duckdb.connect()
    con.execute("SET threads TO 1")
    con.execute(f"SELECT setseed({(seed % 1000) / 1000.0})")
    con.execute(f"""COPY (SELECT i AS id,
        CASE WHEN random() < 0.1 THEN NULL
             ELSE list_transform(range((random() * 5)::INT), lambda x: (x * i) % 97) END AS ints,
        CASE WHEN random() < 0.1 THEN NULL
             ELSE list_transform(range((random() * 4)::INT), lambda x: 's' || ((x + i) % 13)) END AS strs,
        {{'a': i % 7, 'b': CASE WHEN i % 5 = 0 THEN NULL ELSE 'v' || i END}} AS st
        FROM range(40000) t(i)) TO '{path}' (ROW_GROUP_SIZE 9000)""")
    con.close()
    _check(path)
    _check(path, columns=["strs"])
