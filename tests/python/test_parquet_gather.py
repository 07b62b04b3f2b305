"""Row-level random access in uncompressed Parquet pages (src/parquet/page_gather.c).

A row selection over an uncompressed page of a flat column reads only the
selected rows' values from the page bytes (PLAIN fixed width, booleans,
dictionary indices; NULLs through the definition-level runs). These tests
write such files with pyarrow and with our writer (random types, NULL rates,
page sizes, page versions, dictionary or not, with or without page index),
read random selections with ``hyperstreamdb.parquet.read_table(rows=...)``
and compare with pyarrow's ``take`` and with the decoding path
(``HS_PQ_GATHER=0``). A table written with
``write.parquet.compression-codec = uncompressed`` and indexed on every
column answers filters as the unindexed scan, DuckDB and pyarrow do over the
very same files.
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


def _column(rng, kind, n, null_rate):
    nr = np.random.default_rng(rng.randrange(1 << 30))
    if kind == "int32":
        vals = nr.integers(-1000, 1000, n).astype(np.int32)
        arr = pa.array(vals, pa.int32())
    elif kind == "int64":
        arr = pa.array(nr.integers(-(1 << 60), 1 << 60, n), pa.int64())
    elif kind == "float32":
        arr = pa.array(nr.standard_normal(n).astype(np.float32), pa.float32())
    elif kind == "float64":
        arr = pa.array(np.round(nr.uniform(0, 1000, n), 2), pa.float64())
    elif kind == "bool":
        arr = pa.array(nr.random(n) < 0.1)
    elif kind == "string":
        cats = [f"cat{i:04d}" for i in range(rng.choice([1, 7, 300]))] + [""]
        arr = pa.array([cats[i] for i in nr.integers(0, len(cats), n)])
    elif kind == "ts":
        arr = pa.array(nr.integers(0, 1 << 50, n), pa.timestamp("us"))
    elif kind == "date":
        arr = pa.array(nr.integers(0, 30000, n).astype(np.int32), pa.date32())
    elif kind == "fixed":
        arr = pa.array([bytes([i % 256, (i * 7) % 256, 3]) for i in nr.integers(0, 50, n)],
                       pa.binary(3))
    else:
        raise AssertionError(kind)
    if null_rate:
        mask = pa.array(nr.random(n) < null_rate)
        arr = pa.compute.if_else(mask, pa.nulls(n, arr.type), arr)
    return arr


KINDS = ["int32", "int64", "float32", "float64", "bool", "string", "ts", "date", "fixed"]


def _table(rng, n):
    cols = {}
    for k in rng.sample(KINDS, rng.randint(3, len(KINDS))):
        cols[k] = _column(rng, k, n, rng.choice([0, 0, 0.01, 0.3, 1.0]))
    return pa.table(cols)


def _selection(rng, n):
    every = rng.choice([1, 2, 13, 500, 50000])
    return [i for i in range(n) if rng.randrange(every) == 0]


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
def test_random_selections_match_pyarrow(tmp_path, seed):
    rng = random.Random(seed)
    n = rng.choice([1, 37, 5000, 40000])
    tbl = _table(rng, n)
    path = str(tmp_path / "f.parquet")
    if seed % 2 == 0:
        pq.write_table(tbl, path, compression="none",
                       data_page_version=rng.choice(["1.0", "2.0"]),
                       use_dictionary=rng.choice([True, False]),
                       data_page_size=rng.choice([512, 8192, 1 << 20]),
                       row_group_size=rng.choice([1000, 1 << 20]),
                       write_page_index=rng.choice([True, False]))
    else:
        hpq.write_table(tbl, path, compression=None,
                        data_page_version=rng.choice(["1.0", "2.0"]),
                        use_dictionary=rng.choice([True, False]),
                        data_page_size=rng.choice([512, 8192, 1 << 20]),
                        row_group_size=rng.choice([1000, 1 << 20]),
                        write_page_index=rng.choice([True, False]))
    ref = pq.read_table(path)
    assert ref.equals(tbl)
    for _ in range(4):
        rows = _selection(rng, n)
        want = ref.take(pa.array(rows, pa.int64()))
        got = _read(path, rows, True)
        assert got.equals(want), (seed, len(rows))
        assert _read(path, rows, False).equals(want)


def test_uncompressed_indexed_table_matches_duckdb(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    rng = random.Random(5)
    n = 30000
    props = {"write.parquet.compression-codec": "uncompressed",
             "write.parquet.page-size-bytes": "16384"}
    ix = hdb.Table(str(tmp_path / "ix"), properties=props)
    plain = hdb.Table(str(tmp_path / "plain"), properties=props)
    for f in range(3):
        t = pa.table({
            "category": _column(rng, "string", n, 0.05),
            "id": pa.array(np.arange(f * n, (f + 1) * n)[np.random.default_rng(f).permutation(n)],
                           pa.int64()),
            "price": _column(rng, "float64", n, 0.02),
            "ts": _column(rng, "ts", n, 0.0),
            "flag": _column(rng, "bool", n, 0.1),
        })
        ix.write(t)
        plain.write(t)
    for c in ("category", "id", "price", "ts", "flag"):
        ix.add_index(c, progress=False)
    ix.wait_for_indexes()
    files = sorted(os.path.join(plain.uri, "data", f)
                   for f in os.listdir(os.path.join(plain.uri, "data")) if f.endswith(".parquet"))
    for f in files:
        md = pq.ParquetFile(f).metadata
        assert md.row_group(0).column(0).compression == "UNCOMPRESSED"
    con = duckdb.connect()
    flist = "[" + ", ".join(f"'{p}'" for p in files) + "]"
    filters = ["id BETWEEN 1000 AND 1019", "category = 'cat0003' AND price < 100.0",
               "category = 'cat0007'", "flag = true AND price > 990", "id < 3000",
               "price IS NULL AND id < 20000", "category = '' OR id = 77"]
    key = ["id"]
    for flt in filters:
        want = con.sql(f"SELECT category, id, price, ts, flag FROM read_parquet({flist}) "
                       f"WHERE {flt} ORDER BY id").to_arrow_table()
        for t in (ix, plain):
            got = t.to_arrow(filter=flt)
            if hasattr(got, "read_all"):
                got = got.read_all()
            got = got.sort_by([(k, "ascending") for k in key])
            assert got.num_rows == want.num_rows, flt
            assert got.select(want.column_names).cast(want.schema).equals(want), flt
    # pyarrow reads the files of the indexed table unchanged
    for f in os.listdir(os.path.join(ix.uri, "data")):
        if f.endswith(".parquet"):
            assert pq.read_table(os.path.join(ix.uri, "data", f)).num_rows == n


# --------------------------------------------- DELTA_BINARY_PACKED pages
#
# Uncompressed DELTA_BINARY_PACKED pages of INT32/INT64 columns are read
# through a block directory of each page (cached per file stamp and page):
# only the prefix of one block in front of each selected value is unpacked.

DELTA_KINDS = ["int32", "int64", "ts", "date", "int16", "uint32", "uint64", "ids", "sorted"]


def _delta_column(rng, kind, n, null_rate):
    nr = np.random.default_rng(rng.randrange(1 << 30))
    if kind in ("int32", "int64", "ts", "date"):
        return _column(rng, kind, n, null_rate)
    if kind == "int16":
        arr = pa.array(nr.integers(-(1 << 15), 1 << 15, n).astype(np.int16), pa.int16())
    elif kind == "uint32":  # stored as INT32: deltas wrap modulo 2^32
        arr = pa.array(nr.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32), pa.uint32())
    elif kind == "uint64":  # full range: deltas wrap modulo 2^64
        arr = pa.array(nr.integers(0, np.iinfo(np.uint64).max, n, dtype=np.uint64,
                                   endpoint=True), pa.uint64())
    elif kind == "ids":  # shuffled ids, the measured case
        arr = pa.array(nr.permutation(n).astype(np.int64), pa.int64())
    else:  # sorted, small deltas (bit width 0 to a few)
        arr = pa.array(np.cumsum(nr.integers(0, 3, n)).astype(np.int64), pa.int64())
    if null_rate:
        mask = pa.array(nr.random(n) < null_rate)
        arr = pa.compute.if_else(mask, pa.nulls(n, arr.type), arr)
    return arr


def _write_delta(tbl, path, rng, version=None):
    pq.write_table(tbl, path, compression="none", use_dictionary=False,
                   column_encoding={c: "DELTA_BINARY_PACKED" for c in tbl.column_names},
                   data_page_version=version or rng.choice(["1.0", "2.0"]),
                   data_page_size=rng.choice([512, 8192, 1 << 20]),
                   row_group_size=rng.choice([1000, 1 << 20]),
                   write_page_index=rng.choice([True, False]))


def _gathered():
    return hdb._core._parquet_pages_gathered()


@pytest.mark.parametrize("seed", range(10))
def test_delta_pages_gather(tmp_path, seed):
    rng = random.Random(1000 + seed)
    n = [1, 129, 5000, 40000, 130000][seed % 5]
    cols = {k: _delta_column(rng, k, n, rng.choice([0, 0, 0.01, 0.3, 1.0]))
            for k in rng.sample(DELTA_KINDS, rng.randint(3, len(DELTA_KINDS)))}
    tbl = pa.table(cols)
    path = str(tmp_path / "d.parquet")
    _write_delta(tbl, path, rng, version=["1.0", "2.0"][seed % 2])
    md = pq.ParquetFile(path).metadata
    for i in range(md.num_columns):
        c = md.row_group(0).column(i)
        assert c.compression == "UNCOMPRESSED"
        assert "DELTA_BINARY_PACKED" in c.encodings, c
    ref = pq.read_table(path)
    assert ref.equals(tbl)
    for _ in range(5):
        rows = _selection(rng, n)
        want = ref.take(pa.array(rows, pa.int64()))
        before = _gathered()
        got = _read(path, rows, True)
        used = _gathered() - before
        assert got.equals(want), (seed, len(rows))
        if rows:
            assert used >= len(cols), used  # at least one page per column
        before = _gathered()
        assert _read(path, rows, False).equals(want)
        assert _gathered() == before


def test_delta_gather_sees_rewritten_file(tmp_path):
    """The directory cache is keyed by the file's stamp: a file rewritten in
    place (same path, inode and size) is read afresh."""
    rng = random.Random(7)
    path = str(tmp_path / "r.parquet")
    n = 20000
    rows = sorted(rng.sample(range(n), 300))
    for k in range(3):
        tbl = pa.table({"v": pa.array(np.arange(n, dtype=np.int64) * (k + 1) + k)})
        pq.write_table(tbl, path, compression="none", use_dictionary=False,
                       column_encoding={"v": "DELTA_BINARY_PACKED"})
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + k * 1_000_000_000))
        want = tbl.take(pa.array(rows, pa.int64()))
        for _ in range(2):  # the second read hits the cache
            assert _read(path, rows, True).equals(want), k



@pytest.mark.parametrize("kind", ["float64", "string"])
def test_dictionary_cache_sees_rewritten_file(tmp_path, kind):
    """Selective reads keep decoded dictionaries in the page cache, keyed by
    the file's stamp: every read equals pyarrow's ``take``, also the second
    one (a cache hit) and after the file is rewritten in place with other
    dictionary values of the very same byte size (uncompressed pages, so
    only the file's stamp tells the versions apart)."""
    rng = random.Random(11)
    path = str(tmp_path / "d.parquet")
    n = 30000
    rows = sorted(rng.sample(range(n), 500))
    nr = np.random.default_rng(5)
    codes = nr.integers(0, 5000, n)
    for k in range(3):
        if kind == "float64":
            arr = pa.array((codes * (k + 2)).astype(np.float64) / 100.0)
        else:
            arr = pa.array([f"v{(c * (k + 2)) % 100000:05d}" for c in codes])
        tbl = pa.table({"v": arr})
        hpq.write_table(tbl, path, compression=None, data_page_version="2.0")
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + k * 1_000_000_000))
        want = tbl.take(pa.array(rows, pa.int64()))
        for _ in range(2):  # the second read takes the cached dictionary
            assert _read(path, rows, True).equals(want), k
        assert _read(path, rows, False).equals(want), k


@pytest.mark.parametrize("every", [1, 2, 5, 100])
def test_dense_selections_decode_pages_whole(tmp_path, monkeypatch, every):
    """By default a flat page with more than 1/8 of its rows selected is
    decoded whole and filtered (a gather costs several decodes a value);
    sparser pages are still gathered. Both give pyarrow's take."""
    monkeypatch.delenv("HS_PQ_GATHER_DENSE_DIV")
    rng = random.Random(every)
    n = 50000
    tbl = pa.table({"i": pa.array([rng.randrange(1 << 40) for _ in range(n)], pa.int64()),
                    "s": pa.array([rng.choice(["a", "bb", None]) for _ in range(n)]),
                    "d": pa.array([rng.random() for _ in range(n)])})
    path = str(tmp_path / "dense.parquet")
    pq.write_table(tbl, path, compression="none", data_page_size=8192)
    rows = [i for i in range(n) if rng.randrange(every) == 0]
    before = _gathered()
    got = _read(path, rows, True)
    used = _gathered() - before
    assert got.equals(tbl.take(pa.array(rows, pa.int64())))
    if every <= 5:
        assert used == 0, used  # at 20 % and more every page is decoded whole
    else:
        assert used > 0, used  # 1 %: read in place
