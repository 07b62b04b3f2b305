"""Compressed PLAIN pages decompressed straight into the result (src/parquet/column_read.c,
"Direct pages") read as pyarrow reads them.

A v1 page is decompressed in front of the values' end by the previous page's level bytes
(saved and put back); a wrong guess (a page whose nulls change its level bytes) moves the
values into place. These files, written by pyarrow with small pages so that a column has
many, cover every fixed-width physical type, v1 and v2 pages, every codec, required and
nullable columns with nulls at random densities that change from page to page (so the
guess is right on some pages and wrong on others), dictionary pages falling back to PLAIN,
several row groups, and projections, against pyarrow's own read of the same file."""

import zlib
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import hyperstreamdb as hdb

CODECS = ["zstd", "snappy", "gzip", "lz4"]


def _column(typ, n, rng):
    if pa.types.is_boolean(typ):
        return pa.array(rng.random(n) < 0.5)
    if pa.types.is_fixed_size_binary(typ):
        return pa.array([bytes(rng.integers(0, 256, typ.byte_width, dtype=np.uint8))
                         for _ in range(n)], typ)
    if pa.types.is_decimal(typ):
        top = 10 ** min(typ.precision, 18) - 1
        return pa.array([Decimal(int(v)).scaleb(-typ.scale) for v in rng.integers(-top, top, n)],
                        typ)
    if pa.types.is_floating(typ):
        return pa.array(rng.standard_normal(n).astype(typ.to_pandas_dtype()))
    if pa.types.is_timestamp(typ):
        return pa.array(rng.integers(0, 2 * 10**18, n), pa.int64()).cast(typ)
    if pa.types.is_date(typ):
        return pa.array(rng.integers(-10**5, 10**5, n).astype(np.int32), pa.int32()).cast(typ)
    dt = np.dtype(typ.to_pandas_dtype())
    return pa.array(rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(dt))


def _with_nulls(arr, rng, n):
    # Null density changes every ~700 rows: some pages have none, some many.
    dens = np.repeat(rng.choice([0.0, 0.0, 0.01, 0.3, 0.9, 1.0], n // 700 + 1), 700)[:n]
    mask = rng.random(n) < dens
    return pc.if_else(pa.array(mask), pa.nulls(n, arr.type), arr) if mask.any() else arr


TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint32(), pa.uint64(),
         pa.float32(), pa.float64(), pa.timestamp("us"), pa.timestamp("ns"), pa.date32(),
         pa.binary(5), pa.decimal128(9, 2), pa.decimal128(18, 3), pa.decimal128(30, 4),
         pa.bool_()]


def _table(n, rng, nullable):
    cols, fields = {}, []
    for i, typ in enumerate(TYPES):
        a = _column(typ, n, rng)
        if nullable:
            a = _with_nulls(a, rng, n)
        cols[f"c{i}"] = a
        fields.append(pa.field(f"c{i}", typ, nullable=nullable))
    return pa.table(cols, schema=pa.schema(fields))


def _check(path, columns=None):
    want = pq.read_table(path, columns=columns)
    got = hdb.parquet.read_table(str(path), columns=columns)
    assert got.schema.names == want.schema.names
    for name in want.schema.names:
        w, g = want.column(name).combine_chunks(), got.column(name).combine_chunks()
        assert g.type == w.type, name
        assert g.equals(w), name


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("nullable", [False, True], ids=["required", "nullable"])
def test_plain_pages_vs_pyarrow(tmp_path, codec, version, nullable):
    rng = np.random.default_rng(zlib.crc32(f"{codec}{version}{nullable}".encode()))
    n = 9000 + int(rng.integers(0, 500))
    t = _table(n, rng, nullable)
    path = tmp_path / "p.parquet"
    pq.write_table(t, path, compression=codec, data_page_version=version, use_dictionary=False,
                   data_page_size=int(rng.integers(1500, 6000)), row_group_size=n // 2 + 17,
                   write_statistics=False)
    md = pq.ParquetFile(path).metadata
    assert md.num_row_groups == 2
    assert md.row_group(0).column(3).encodings == ("PLAIN",) or \
        "PLAIN" in md.row_group(0).column(3).encodings
    _check(path)
    _check(path, columns=["c3", "c0", "c7"])


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("codec", ["zstd", "none"])
def test_dictionary_pages_vs_pyarrow(tmp_path, codec, version):
    # Dictionary pages (small dictionaries, nulls) between PLAIN direct pages' neighbours:
    # the values a gather appends are what the next direct page's guess lands in front of.
    rng = np.random.default_rng(zlib.crc32(f"dict{codec}{version}".encode()))
    n = 9000
    t = _table(n, rng, True)
    small = pa.table({name: pc.take(col, pa.array(rng.integers(0, 50, n)))
                      for name, col in zip(t.schema.names, t.columns)}, schema=t.schema)
    path = tmp_path / "d.parquet"
    pq.write_table(small, path, compression=codec, data_page_version=version,
                   data_page_size=2000, row_group_size=4000)
    assert "RLE_DICTIONARY" in pq.ParquetFile(path).metadata.row_group(0).column(3).encodings
    _check(path)
    _check(path, columns=["c7", "c2"])


@pytest.mark.parametrize("codec", ["zstd", "snappy"])
def test_dictionary_fallback_then_plain(tmp_path, codec):
    # pyarrow's default: dictionary pages until the dictionary passes its limit, then PLAIN
    # pages for the rest of the chunk (a random-permutation id, as in issue 13).
    rng = np.random.default_rng(13)
    n = 60000
    ids = rng.permutation(n).astype(np.int64)
    mask = rng.random(n) < 0.05
    t = pa.table({"id": pa.array(ids), "ts": pa.array(ids * 1000, pa.int64()).cast(pa.timestamp("us")),
                  "x": pa.array(ids.astype(np.float64) / 7, mask=mask)})
    path = tmp_path / "d.parquet"
    pq.write_table(t, path, compression=codec, dictionary_pagesize_limit=4096,
                   data_page_size=8192)
    encs = pq.ParquetFile(path).metadata.row_group(0).column(0).encodings
    assert "PLAIN" in encs and "RLE_DICTIONARY" in encs
    _check(path)


def test_page_with_all_nulls_then_values(tmp_path):
    # Level bytes change from page to page: all-null, all-defined, mixed.
    n = 12000
    vals = np.arange(n, dtype=np.int64)
    mask = np.zeros(n, dtype=bool)
    mask[2000:4000] = True
    mask[7000:9000:3] = True
    t = pa.table({"v": pa.array(vals, mask=mask)})
    path = tmp_path / "n.parquet"
    pq.write_table(t, path, compression="zstd", use_dictionary=False, data_page_size=2048)
    _check(path)
