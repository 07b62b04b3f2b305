"""Row gather from compressed pages (src/parquet/column_read.c cr_page_gather).

A row selection over a compressed page decompresses the page (v2: only its
values; the levels are stored raw) and then reads the selected rows from the
decompressed bytes as from a raw page, instead of decoding every value: a
search fetching ten ids from a zstd delta page of 100K ids paid the whole
page's decode. Random files (pyarrow's writer and ours; zstd, snappy, gzip;
page v1 and v2; PLAIN, dictionary and DELTA_BINARY_PACKED; NULLs; list
columns) are read at random selections and compared with pyarrow's ``take``
and with the decoding path (``HS_PQ_GATHER=0``); the gathered-page counter
shows the path is taken.
"""

import os
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hyperstreamdb as hdb
from hyperstreamdb import parquet as hpq

@pytest.fixture(autouse=True)
def _gather_every_page(monkeypatch):
    """Gather however many rows a page has selected (by default a page with
    more than 1/8 of its rows selected is decoded whole instead)."""
    monkeypatch.setenv("HS_PQ_GATHER_DENSE_DIV", "0")


np = pytest.importorskip("numpy")


def _flat(nr, kind, n, null_rate):
    if kind == "seq":  # sorted ids: what compresses (the table's id column)
        arr = pa.array(np.arange(n, dtype=np.int64) * 3 + 7)
    elif kind == "i32":
        arr = pa.array(nr.integers(-50, 50, n).astype(np.int32))
    elif kind == "i64":
        arr = pa.array(nr.integers(0, 1000, n), pa.int64())
    elif kind == "f64":
        arr = pa.array(np.round(nr.uniform(0, 10, n), 1))
    elif kind == "bool":
        arr = pa.array(nr.random(n) < 0.2)
    else:
        cats = [f"c{i}" for i in range(9)]
        arr = pa.array([cats[i] for i in nr.integers(0, len(cats), n)])
    if null_rate:
        mask = pa.array(nr.random(n) < null_rate)
        arr = pa.compute.if_else(mask, pa.nulls(n, arr.type), arr)
    return arr


def _vectors(nr, n, dim, fixed):
    vals = pa.array(np.round(nr.standard_normal(n * dim), 1).astype(np.float32))
    if fixed:
        return pa.FixedSizeListArray.from_arrays(vals, dim)
    return pa.ListArray.from_arrays(pa.array(np.arange(n + 1, dtype=np.int32) * dim), vals)


def _read(path, rows, gather):
    old = os.environ.get("HS_PQ_GATHER")
    try:
        if gather:
            os.environ.pop("HS_PQ_GATHER", None)
        else:
            os.environ["HS_PQ_GATHER"] = "0"
        return hpq.read_table(path, rows=rows)
    finally:
        if old is None:
            os.environ.pop("HS_PQ_GATHER", None)
        else:
            os.environ["HS_PQ_GATHER"] = old


@pytest.mark.parametrize("seed", range(12))
def test_compressed_pages_gather(tmp_path, seed):
    rng = random.Random(5000 + seed)
    nr = np.random.default_rng(seed)
    n = [1, 300, 5000, 30000][seed % 4]
    kinds = rng.sample(["seq", "i32", "i64", "f64", "bool", "str"], 4)
    cols = {k: _flat(nr, k, n, 0 if k == "seq" else rng.choice([0, 0.1, 1.0])) for k in kinds}
    if seed % 3 != 2:
        cols["emb"] = _vectors(nr, n, rng.choice([4, 16]), fixed=seed % 3 == 0)
    tbl = pa.table(cols)
    path = str(tmp_path / "c.parquet")
    codec = ["zstd", "snappy", "gzip"][seed % 3]
    version = ["1.0", "2.0"][(seed // 3) % 2]
    delta = {k: "DELTA_BINARY_PACKED" for k in kinds if k in ("seq", "i32", "i64")}
    if seed % 2 == 0:
        pq.write_table(tbl, path, compression=codec, data_page_version=version,
                       use_dictionary=False if delta else rng.choice([True, False]),
                       column_encoding=delta or None,
                       data_page_size=rng.choice([1024, 1 << 20]),
                       write_page_index=rng.choice([True, False]))
    else:
        hpq.write_table(tbl, path, compression=codec, data_page_version=version,
                        use_dictionary=rng.choice([True, False]),
                        data_page_size=rng.choice([1024, 1 << 20]))
    md = pq.ParquetFile(path).metadata
    assert md.row_group(0).column(0).compression != "UNCOMPRESSED"
    ref = pq.read_table(path)
    assert ref.equals(tbl)
    for _ in range(4):
        every = rng.choice([1, 7, 400, 100000])
        rows = [i for i in range(n) if rng.randrange(every) == 0]
        want = ref.take(pa.array(rows, pa.int64()))
        before = hdb._core._parquet_pages_gathered()
        got = _read(path, rows, True)
        used = hdb._core._parquet_pages_gathered() - before
        assert got.equals(want), (seed, len(rows))
        if rows:
            assert used > 0, used  # the compressed pages were gathered, not decoded
        assert _read(path, rows, False).equals(want)


def test_damaged_compressed_page_reports(tmp_path):
    """A compressed page that no longer decompresses is reported by the
    decode path (the gather declines it), never read as rows."""
    path = str(tmp_path / "d.parquet")
    x = np.random.default_rng(3).integers(0, 1 << 40, 200).repeat(100)  # compresses
    pq.write_table(pa.table({"x": x}), path, compression="zstd",
                   column_encoding={"x": "DELTA_BINARY_PACKED"}, use_dictionary=False,
                   write_page_checksum=False, data_page_version="2.0")
    raw = bytearray(open(path, "rb").read())
    cc = pq.ParquetFile(path).metadata.row_group(0).column(0)
    assert cc.total_compressed_size < cc.total_uncompressed_size // 4
    at = cc.data_page_offset + cc.total_compressed_size // 2  # inside the page's zstd frame
    for i in range(at, at + 64):
        raw[i] ^= 0xA5
    open(path, "wb").write(bytes(raw))
    for gather in (True, False):
        with pytest.raises(hdb.HyperStreamError, match="offset"):
            _read(path, [3, 5, 19999], gather)
