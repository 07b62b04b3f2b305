"""Search rows fetched through kept per-chunk memos (issue 13 item 1).

A search's winners are read by row selection from data files that stay
open between searches; what a selection derives from a chunk's bytes
(parsed page headers, the checked offset index, CRC-checked flags,
decompressed small pages, dictionaries, list pages' row maps, delta
directories) is kept on the opened file (src/parquet/chunk_memo.c) and
reused by later selections, and a vector column's gathered rows keep their
levels implicit (src/parquet/column_read.c, cr_sel_unlazy). These tests run
many searches, with random k, through one Table (so later searches read
through memos earlier ones filled), on tables holding every column type
(nullable strings, dictionary strings, lists of strings, variable-length
float lists, fixed-size vectors with NULL vectors and NULL elements,
booleans, timestamps, decimals), small pages (rows across page
boundaries), zstd and uncompressed files and deleted rows, and compare
every returned row with pyarrow's ``take`` of the same rows of the data
written, and exact searches' distances with numpy's brute force. Searches
from several threads at once share the memos.
"""

import decimal
import random
import threading

import pyarrow as pa
import pytest

import hyperstreamdb as hdb
from hyperstreamdb import _core

np = pytest.importorskip("numpy")

DIM = 12


def _nullify(nr, arr, rate):
    if not rate:
        return arr
    mask = pa.array(nr.random(len(arr)) < rate)
    return pa.compute.if_else(mask, pa.nulls(len(arr), arr.type), arr)


def _batch(nr, start, n, vec_nulls, elem_nulls):
    v = nr.standard_normal((n, DIM)).astype(np.float32)
    vals = _nullify(nr, pa.array(v.reshape(-1)), elem_nulls)
    emb = _nullify(nr, pa.FixedSizeListArray.from_arrays(vals, DIM), vec_nulls)
    lens = nr.integers(0, 7, n)
    offs = pa.array(np.concatenate([[0], np.cumsum(lens)]).astype(np.int32))
    m = int(lens.sum())
    words = [f"t{i:02d}" for i in range(40)]
    tags = pa.ListArray.from_arrays(
        offs, _nullify(nr, pa.array([words[i] for i in nr.integers(0, 40, m)]), 0.1))
    floats = pa.ListArray.from_arrays(offs, pa.array(nr.standard_normal(m).astype(np.float32)))
    cents = nr.integers(-10**6, 10**6, n)
    return pa.table({
        "id": pa.array(np.arange(start, start + n, dtype=np.int64)),
        "emb": emb,
        "s": _nullify(nr, pa.array([f"row-{i}-{'x' * (i % 13)}" for i in range(start, start + n)]),
                      0.2),
        "cat": _nullify(nr, pa.array([f"c{i % 7}" for i in nr.integers(0, 1000, n)]), 0.1),
        "tags": _nullify(nr, tags, 0.15),
        "vl": _nullify(nr, floats, 0.1),
        "flag": _nullify(nr, pa.array(nr.random(n) < 0.4), 0.1),
        "ts": _nullify(nr, pa.array(nr.integers(0, 1 << 50, n), pa.timestamp("us")), 0.1),
        "price": _nullify(nr, pa.array([decimal.Decimal(int(c)).scaleb(-2) for c in cents],
                                       pa.decimal128(12, 2)), 0.05),
        "small": pa.array(nr.integers(-100, 100, n), pa.int32()),
    })


def _vectors(full):
    emb = full.column("emb").combine_chunks()
    valid = np.asarray(emb.is_valid())
    flat = emb.values.slice(emb.offset * DIM, len(emb) * DIM)  # NULL vectors' slots too
    ok = np.asarray(flat.is_valid()).reshape(-1, DIM)
    vec = np.nan_to_num(np.asarray(flat.to_numpy(zero_copy_only=False), np.float32))
    vec = vec.reshape(-1, DIM)
    # NULL elements make no finite distance: such rows never match (Table.search)
    return vec, valid & ok.all(axis=1)


def _check(r, full, alive, vec, usable, q, k, exact, where):
    ids = r.column("id").to_numpy()
    assert len(set(ids.tolist())) == len(ids), where
    assert alive[ids].all(), where  # deleted rows never come back
    want = full.take(pa.array(ids))
    for name in full.column_names:
        got = r.column(name).combine_chunks()
        assert got.equals(want.column(name).combine_chunks().cast(got.type)), (where, name)
    d = np.sqrt(((vec[ids] - q) ** 2).sum(1))
    np.testing.assert_allclose(r.column("distance").to_numpy(), d, rtol=1e-4, atol=1e-4)
    live = alive & usable
    assert r.num_rows == min(k, int(live.sum())), where
    if exact:
        true = np.sort(np.sqrt(((vec[live] - q) ** 2).sum(1)))[:k]
        np.testing.assert_allclose(r.column("distance").to_numpy(), true, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("codec", ["zstd", "uncompressed"])
def test_repeated_searches_match_take(tmp_path, codec):
    nr = np.random.default_rng(11 if codec == "zstd" else 12)
    rng = random.Random(codec)
    props = {"write.parquet.page-size-bytes": "2048",
             "write.parquet.compression-codec": codec}
    t = hdb.Table(str(tmp_path / "t"), properties=props)
    parts, start = [], 0
    # vectors: none NULL (every page's levels implicit), many, a few (pages
    # with and without NULLs in one selection), NULL elements
    for n, vn, en in [(1300, 0.0, 0.0), (900, 0.1, 0.0), (900, 0.01, 0.0), (600, 0.05, 0.02)]:
        b = _batch(nr, start, n, vn, en)
        t.write(b)
        parts.append(b)
        start += n
    full = pa.concat_tables([p.cast(parts[0].schema) for p in parts])
    alive = np.ones(full.num_rows, bool)
    dead = sorted(rng.sample(range(full.num_rows), 150))
    t.delete("id IN (" + ", ".join(str(i) for i in dead) + ")")
    alive[dead] = False
    vec, usable = _vectors(full)
    before = _core._parquet_pages_gathered()
    for phase in ("exact", "indexed"):
        if phase == "indexed":
            t.add_index("emb", "hnsw", m=12, ef_construction=64, progress=False)
            t.wait_for_indexes()
        for i in range(40):
            q = nr.standard_normal(DIM).astype(np.float32)
            k = rng.choice([1, 3, 10, 50, 300])
            exact = phase == "exact" or i % 5 == 0
            cols = None if i % 4 else rng.sample(full.column_names, 4)
            r = t.search("emb", q, k=k, exact=exact, columns=cols)
            where = (codec, phase, i, k)
            if cols is None:
                _check(r, full, alive, vec, usable, q, k, exact, where)
            else:
                ids = t.search("emb", q, k=k, exact=exact, columns=["id"]).column("id")
                want = full.take(ids)
                assert r.column_names == cols + ["distance"], where
                for name in cols:
                    assert r.column(name).combine_chunks().equals(
                        want.column(name).combine_chunks().cast(r.schema.field(name).type)), where
    assert _core._parquet_pages_gathered() > before  # rows were read in place


def test_concurrent_searches_share_memos(tmp_path):
    nr = np.random.default_rng(5)
    props = {"write.parquet.page-size-bytes": "4096"}
    full = _batch(nr, 0, 2500, 0.05, 0.0)
    # The answers from one table, the threads on another of the same rows:
    # its file is first read by the threads together (they fill its memos).
    ref = hdb.Table(str(tmp_path / "ref"), properties=props)
    t = hdb.Table(str(tmp_path / "t"), properties=props)
    ref.write(full)
    t.write(full)
    alive = np.ones(full.num_rows, bool)
    vec, usable = _vectors(full)
    qs = nr.standard_normal((48, DIM)).astype(np.float32)
    ks = [1 + (i * 37) % 120 for i in range(len(qs))]
    want = [ref.search("emb", q, k=k, exact=True) for q, k in zip(qs, ks)]
    errors = []

    def run(offset):
        try:
            for j in range(len(qs)):
                i = (j + offset) % len(qs)
                r = t.search("emb", qs[i], k=ks[i], exact=True)
                if not r.equals(want[i]):
                    errors.append(("differs", offset, i))
                _check(r, full, alive, vec, usable, qs[i], ks[i], True, (offset, i))
        except Exception as e:  # reported below: pytest sees no thread's assert
            errors.append(repr(e))

    threads = [threading.Thread(target=run, args=(o * 11,)) for o in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
