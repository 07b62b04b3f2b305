"""The data page layout tables write (src/table/plan.c, hs_table_parquet_options).

By default a table writes data page v2, integer columns that give up their
dictionary as DELTA_BINARY_PACKED, and stores uncompressed every page the
codec shrinks by less than 1/8 -- so that indexed reads take single rows in
place. These tests check on random data that pyarrow and DuckDB read the
files exactly, that the layout is what it claims (encodings, raw pages) and
that it is smaller than the old v1 layout; and that
``hyperstream.parquet.page-version = 1`` brings the old layout back while a
bad value is refused naming the property.
"""

import glob
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hyperstreamdb as hdb

np = pytest.importorskip("numpy")
duckdb = pytest.importorskip("duckdb")


def _data(seed, n):
    rng = np.random.default_rng(seed)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"])
    text = [" ".join(words[rng.integers(0, 6, 8)]) + f" #{i}" for i in range(n)]
    tbl = pa.table({
        "id": pa.array(rng.permutation(n * 4)[:n].astype(np.int64)),
        "small": pa.array(rng.integers(-(1 << 20), 1 << 20, n).astype(np.int32)),
        "price": pa.array(np.round(rng.uniform(0, 1000, n), 2)),
        "ts": pa.array(1_700_000_000_000_000 + rng.integers(0, 86_400_000_000 * 30, n),
                       pa.timestamp("us")),
        "category": pa.array([f"cat{i:03d}" for i in rng.integers(0, 300, n)]),
        "text": pa.array(text),
        "flag": pa.array(rng.random(n) < 0.1),
    })
    # NULLs in two columns.
    mask = pa.array(rng.random(n) < 0.05)
    tbl = tbl.set_column(0, "id", pa.compute.if_else(mask, pa.nulls(n, pa.int64()), tbl["id"]))
    tbl = tbl.set_column(3, "ts", pa.compute.if_else(mask, pa.nulls(n, tbl["ts"].type), tbl["ts"]))
    return tbl


def _files(path):
    return sorted(glob.glob(os.path.join(str(path), "**", "*.parquet"), recursive=True))


def _encodings(f, col):
    md = pq.ParquetFile(f).metadata
    out = set()
    for g in range(md.num_row_groups):
        for c in range(md.num_columns):
            cc = md.row_group(g).column(c)
            if cc.path_in_schema == col:
                out.update(cc.encodings)
    return out


def _chunk_sizes(f, col):
    md = pq.ParquetFile(f).metadata
    z = u = 0
    for g in range(md.num_row_groups):
        for c in range(md.num_columns):
            cc = md.row_group(g).column(c)
            if cc.path_in_schema == col:
                z += cc.total_compressed_size
                u += cc.total_uncompressed_size
    return z, u


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_default_layout_reads_back_everywhere(tmp_path, seed):
    n = 150_000
    data = _data(seed, n)
    t = hdb.Table(tmp_path / "t")
    t.write(data)
    (f,) = _files(tmp_path / "t")
    assert pq.read_table(f).select(data.column_names).equals(data)
    q = ("select count(*), count(id), sum(id), sum(small), sum(round(price * 100)::bigint), max(ts), "
         "count(distinct category), sum(length(text)), sum(flag::int) from '{}'")
    arrow_tbl = data  # noqa: F841  (DuckDB scans the Arrow table by name)
    got = duckdb.sql(q.format(f)).fetchall()
    want = duckdb.sql(q.replace("'{}'", "arrow_tbl")).fetchall()
    assert got == want
    assert t.to_arrow().sort_by("price").equals(data.sort_by("price"))
    # Integers without a dictionary are DELTA_BINARY_PACKED; prices keep one.
    assert "DELTA_BINARY_PACKED" in _encodings(f, "id")
    assert "DELTA_BINARY_PACKED" in _encodings(f, "ts")
    assert "RLE_DICTIONARY" in _encodings(f, "price")
    # Random deltas do not compress: their pages are stored raw.
    z, u = _chunk_sizes(f, "id")
    assert z == u
    # Booleans are kept raw (one bit a row).
    z, u = _chunk_sizes(f, "flag")
    assert z == u
    # Words compress: those pages went through zstd.
    z, u = _chunk_sizes(f, "text")
    assert z * 2 < u


def test_v1_property_and_size(tmp_path):
    data = _data(7, 120_000)
    new = hdb.Table(tmp_path / "new")
    new.write(data)
    old = hdb.Table(tmp_path / "old", properties={"hyperstream.parquet.page-version": "1"})
    old.write(data)
    (fn,), (fo,) = _files(tmp_path / "new"), _files(tmp_path / "old")
    assert pq.read_table(fo).select(data.column_names).equals(data)
    assert "DELTA_BINARY_PACKED" not in _encodings(fo, "id")
    z, u = _chunk_sizes(fo, "id")
    assert z < u  # v1: every page through the codec
    assert os.path.getsize(fn) < os.path.getsize(fo)


def test_bad_page_version_is_refused(tmp_path):
    t = hdb.Table(tmp_path / "bad", properties={"hyperstream.parquet.page-version": "3"})
    with pytest.raises(Exception, match="hyperstream.parquet.page-version"):
        t.write(_data(1, 100))
    assert _files(tmp_path / "bad") == []


def test_parquet_writer_options(tmp_path):
    """``hyperstreamdb.parquet.write_table`` offers the same layout: with v2
    pages, ``delta_fallback`` and ``compress_min_saving_pct`` the random
    integers are delta-coded and stored raw, words still compressed, and
    row selections equal pyarrow's take."""
    from hyperstreamdb import parquet as hpq
    data = _data(5, 60_000)
    f = str(tmp_path / "f.parquet")
    hpq.write_table(data, f, data_page_version="2.0", delta_fallback=True,
                    compress_min_saving_pct=12)
    assert pq.read_table(f).equals(data)
    assert "DELTA_BINARY_PACKED" in _encodings(f, "small")
    z, u = _chunk_sizes(f, "small")
    assert z == u
    z, u = _chunk_sizes(f, "text")
    assert z * 2 < u
    rows = list(range(3, 60_000, 211))
    assert hpq.read_table(f, rows=rows).equals(data.take(pa.array(rows, pa.int64())))
    # Off by default: PLAIN fallback, every page through the codec.
    g = str(tmp_path / "g.parquet")
    hpq.write_table(data, g, data_page_version="2.0")
    assert "DELTA_BINARY_PACKED" not in _encodings(g, "small")
    with pytest.raises(ValueError, match="compress_min_saving_pct"):
        hpq.write_table(data, g, compress_min_saving_pct=101)
