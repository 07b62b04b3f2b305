"""Vectors (fixed-size lists) written by our Parquet writer, read back by
pyarrow and DuckDB (outside oracles): sizes around the writer's implicit
repetition-level path (HS_WREP_IMPLICIT_MIN = 16: rows of 16+ values are
emitted per row without storing their levels), with and without null rows
(which switch a page to stored levels mid-way), several page sizes, data
page v1 and v2, with and without compression, and through a table append
(where columns are encoded on worker threads)."""

import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conftest  # noqa: E402


@pytest.fixture(scope="module")
def hdb():
    return conftest.require_hdb()


def _table(n, size, null_every, seed):
    rng = np.random.default_rng(seed)
    vals = rng.standard_normal(n * size).astype(np.float32)
    mask = None
    if null_every:
        mask = np.zeros(n, dtype=bool)
        mask[n // 3: n // 3 + 40] = True          # a stretch of null rows
        mask[::null_every] = True
    vec = pa.FixedSizeListArray.from_arrays(pa.array(vals), size, mask=pa.array(mask) if mask is not None else None)
    return pa.table({"id": pa.array(np.arange(n, dtype=np.int64)), "v": vec})


@pytest.mark.parametrize("size", [15, 16, 17, 24, 768])
@pytest.mark.parametrize("null_every", [0, 97])
@pytest.mark.parametrize("page,version,codec", [
    (1 << 20, "1.0", "zstd"), (4096, "1.0", "none"), (1 << 16, "2.0", "snappy")])
def test_vectors_read_by_pyarrow_and_duckdb(hdb, tmp_path, size, null_every, page, version, codec):
    n = 3000 if size < 768 else 400
    t = _table(n, size, null_every, seed=size * 1000 + null_every)
    p = str(tmp_path / "v.parquet")
    hdb.parquet.write_table(t, p, data_page_size=page, data_page_version=version,
                            compression=codec, row_group_size=n // 2 + 1)
    got = pq.read_table(p)
    assert got.column("v").type.list_size == size or got.column("v").type == pa.list_(pa.float32())
    assert got.column("id").equals(t.column("id"))
    exp = t.column("v").to_pylist()
    assert got.column("v").to_pylist() == exp
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    rows = con.execute(f"SELECT id, v FROM read_parquet('{p}') ORDER BY id").fetchall()
    con.close()
    assert len(rows) == n
    for (i, v), e in zip(rows, exp):
        assert (None if v is None else [float(x) for x in v]) == (
            None if e is None else [float(x) for x in e]), f"row {i}"


def test_vector_table_append_read_by_pyarrow(hdb, tmp_path):
    t = _table(5000, 32, 0, seed=5)
    tab = hdb.Table(str(tmp_path / "t"))
    for lo in range(0, 5000, 1250):
        tab.write(t.slice(lo, 1250))
    files = []
    for root, _, names in os.walk(str(tmp_path / "t" / "data")):
        files += [os.path.join(root, f) for f in names if f.endswith(".parquet")]
    assert len(files) == 4
    got = pa.concat_tables([pq.read_table(f) for f in files]).sort_by("id")
    assert got.column("v").to_pylist() == t.column("v").to_pylist()
    assert tab.to_arrow().sort_by("id").column("v").to_pylist() == t.column("v").to_pylist()
