"""Search results fetched at the cost of their rows (issue 13 item 1).

The fetch step of vector search reads the winners' rows by row selection;
list leaves (list<T>, fixed_size_list<T>: vector columns) of uncompressed
data page v2 pages are read in place (src/parquet/page_gather_rep.c), other
pages decoded. Files written by pyarrow and by us, with NULL lists, NULL
elements, empty lists, several pages, dictionary strings, are read by random
row selections and compared with pyarrow's ``take`` of the same rows and
with the decoding path (``HS_PQ_GATHER=0``); tables of several files with
NULLs in the vector and other columns return, for searches with k up to
1000, exactly the rows pyarrow's ``take`` gives for the returned ids, with
distances checked against numpy.
"""

import os
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hyperstreamdb as hdb
from hyperstreamdb import _core
from hyperstreamdb import parquet as hpq

np = pytest.importorskip("numpy")


def _nullify(nr, arr, rate):
    if not rate:
        return arr
    mask = pa.array(nr.random(len(arr)) < rate)
    return pa.compute.if_else(mask, pa.nulls(len(arr), arr.type), arr)


def _lists(nr, n, kind, dim, list_nulls, elem_nulls):
    if kind == "fsl":
        vals = _nullify(nr, pa.array(nr.standard_normal(n * dim).astype(np.float32)), elem_nulls)
        arr = pa.FixedSizeListArray.from_arrays(vals, dim)
    else:
        lens = nr.integers(0, 2 * dim + 1, n)
        offs = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
        m = int(offs[-1])
        if kind == "list_f32":
            vals = pa.array(nr.standard_normal(m).astype(np.float32))
        elif kind == "list_i64":
            vals = pa.array(nr.integers(-(1 << 40), 1 << 40, m), pa.int64())
        else:
            cats = [f"w{i:03d}" for i in range(20)]
            vals = pa.array([cats[i] for i in nr.integers(0, len(cats), m)])
        vals = _nullify(nr, vals, elem_nulls)
        arr = pa.ListArray.from_arrays(pa.array(offs), vals)
    return _nullify(nr, arr, list_nulls)


def _table(seed, n):
    rng = random.Random(seed)
    nr = np.random.default_rng(seed)
    dim = rng.choice([1, 3, 16, 64])
    cols = {"id": pa.array(np.arange(n, dtype=np.int64))}
    for kind in ["fsl", "list_f32", "list_i64", "list_str"]:
        cols[kind] = _lists(nr, n, kind, dim, rng.choice([0, 0.1, 0.5]), rng.choice([0, 0.05]))
    cols["s"] = _nullify(nr, pa.array([f"c{i}" for i in nr.integers(0, 30, n)]), 0.1)
    cols["b"] = _nullify(nr, pa.array(nr.random(n) < 0.3), 0.1)
    return pa.table(cols), rng


def _selections(rng, n):
    out = [[0], [n - 1], list(range(min(n, 70)))]
    for _ in range(6):
        k = rng.choice([1, 2, 10, 100, min(n, 1000)])
        out.append(sorted(rng.sample(range(n), min(k, n))))
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("writer", ["pyarrow", "ours"])
def test_list_row_selection_matches_take(tmp_path, seed, writer):
    n = 3000 + seed * 517
    t, rng = _table(seed, n)
    path = str(tmp_path / "f.parquet")
    page = rng.choice([1 << 10, 8 << 10, 1 << 20])
    if writer == "pyarrow":
        pq.write_table(t, path, data_page_version="2.0", compression="none",
                       data_page_size=page, write_page_index=True,
                       row_group_size=rng.choice([n, 1200]))
    else:
        hpq.write_table(t, path, data_page_version="2.0",
                        compression=rng.choice([None, "zstd"]), compress_min_saving_pct=12,
                        data_page_size=page, row_group_size=rng.choice([n, 1200]))
    before = _core._parquet_pages_gathered()
    for rows in _selections(rng, n):
        got = hpq.read_table(path, rows=rows)
        want = t.take(pa.array(rows, pa.int64()))
        for name in t.column_names:
            assert got.column(name).combine_chunks().equals(
                want.column(name).combine_chunks()), (writer, seed, name, rows[:5])
    assert _core._parquet_pages_gathered() > before  # the in-place path ran
    # The decoding path gives the same rows.
    os.environ["HS_PQ_GATHER"] = "0"
    try:
        rows = sorted(rng.sample(range(n), 50))
        slow = hpq.read_table(path, rows=rows)
    finally:
        del os.environ["HS_PQ_GATHER"]
    assert slow.equals(hpq.read_table(path, rows=rows))


def _vec_batch(nr, start, n, dim, null_rate):
    v = nr.standard_normal((n, dim)).astype(np.float32)
    emb = pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), dim)
    emb = _nullify(nr, emb, null_rate)
    return pa.table({
        "id": pa.array(np.arange(start, start + n, dtype=np.int64)),
        "emb": emb,
        "tags": _lists(nr, n, "list_str", 3, 0.2, 0.1),
        "name": _nullify(nr, pa.array([f"n{i % 97}" for i in range(start, start + n)]), 0.2),
        "flag": _nullify(nr, pa.array(nr.random(n) < 0.5), 0.1),
        "ts": _nullify(nr, pa.array(nr.integers(0, 1 << 50, n), pa.timestamp("us")), 0.1),
        "cat": pa.array([f"k{i % 5}" for i in range(start, start + n)]),  # dictionary pages
    })


@pytest.mark.parametrize("index", [False, True])
def test_search_rows_match_take(tmp_path, index):
    nr = np.random.default_rng(7 + index)
    dim = 24
    t = hdb.Table(str(tmp_path / "t"))
    parts = []
    start = 0
    for n, null_rate in [(1500, 0.0), (2200, 0.1), (900, 0.3)]:
        b = _vec_batch(nr, start, n, dim, null_rate)
        t.write(b)
        parts.append(b)
        start += n
    full = pa.concat_tables([p.cast(parts[0].schema) for p in parts])
    if index:
        t.add_index("emb", "hnsw", m=16, ef_construction=100, progress=False)
        t.wait_for_indexes()
    emb = full.column("emb").combine_chunks()
    valid = np.asarray(emb.is_valid())
    vec = np.array([x if x is not None else [0.0] * dim for x in emb.to_pylist()], np.float32)
    before = _core._parquet_pages_gathered()
    for k in [1, 10, 137, 1000]:
        q = nr.standard_normal(dim).astype(np.float32)
        r = t.search("emb", q, k=k)
        assert r.num_rows == min(k, int(valid.sum()))
        ids = r.column("id").to_numpy()
        want = full.take(pa.array(ids))
        for name in full.column_names:
            assert r.column(name).combine_chunks().equals(
                want.column(name).combine_chunks().cast(r.schema.field(name).type)), (k, name)
        d = np.sqrt(((vec[ids] - q) ** 2).sum(1))  # l2: the Euclidean distance
        np.testing.assert_allclose(r.column("distance").to_numpy(), d, rtol=1e-4, atol=1e-4)
        same = t.query().vector_search(q, "emb", k=k).execute()
        assert same.column("id").to_pylist() == r.column("id").to_pylist()
    assert _core._parquet_pages_gathered() > before  # the rows were read in place


def test_table_vector_layout_reads_elsewhere(tmp_path):
    """Tables write list leaves in 64 KiB pages (src/table/README.md "Data page
    layout"): standard Parquet that pyarrow and DuckDB read back exactly."""
    duckdb = pytest.importorskip("duckdb")
    nr = np.random.default_rng(3)
    b = _vec_batch(nr, 0, 5000, 48, 0.05)
    t = hdb.Table(str(tmp_path / "t"))
    t.write(b)
    files = [os.path.join(dp, f) for dp, _, fs in os.walk(str(tmp_path / "t"))
             for f in fs if f.endswith(".parquet")]
    assert len(files) == 1
    got = pq.read_table(files[0]).select(b.column_names)
    assert got.column("emb").combine_chunks().equals(b.column("emb").combine_chunks())
    assert got.column("tags").combine_chunks().equals(b.column("tags").combine_chunks())
    rows = duckdb.sql(f"SELECT id, emb FROM read_parquet('{files[0]}') ORDER BY id").fetchall()
    want = b.select(["id", "emb"]).to_pylist()
    assert len(rows) == len(want)
    for (i, e), w in zip(rows, want):
        assert i == w["id"]
        if w["emb"] is None:
            assert e is None
        else:
            np.testing.assert_array_equal(np.array(e, np.float32), np.array(w["emb"], np.float32))
