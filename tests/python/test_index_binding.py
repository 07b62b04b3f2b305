"""Indexes bound to their data files (issue 12, item 2).

Every index blob records the data file it was built for (path relative to
the table root, size, CRC-32C of the Parquet footer) and the CRC-32C of its
own bytes. These tests damage a healthy table's index files the ways a
shared lake gets damaged — another data file's index copied over, an index
from another table, a swapped vector index, random bit flips, a truncated
or missing file — and check that every query still returns exactly what
pyarrow / numpy compute from the data (the damaged index is ignored and the
file read exactly), that the reader says so (IndexIgnoredWarning, explain),
and that ``Table.validate()`` lists each damaged index and nothing on a
healthy table. About 10 s.
"""

import json
import os
import random
import shutil
import warnings

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
hdb = pytest.importorskip("hyperstreamdb")

ROWS = 400  # per data file
FILES = 3
DIM = 8


def _batch(i, rng):
    ids = np.arange(i * 100000, i * 100000 + ROWS, dtype=np.int64)
    rng.shuffle(ids)
    cats = [f"k{rng.randrange(10)}" for _ in range(ROWS)]
    emb = np.asarray([[rng.uniform(-1, 1) for _ in range(DIM)] for _ in range(ROWS)],
                     dtype=np.float32)
    return pa.table({"id": ids, "cat": cats,
                     "emb": pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()), DIM)})


def _make(root, seed, vector=True):
    rng = random.Random(seed)
    t = hdb.Table(root)
    for i in range(FILES):
        t.write(_batch(i, rng))
    t.add_index("cat", "bitmap")
    t.add_index("id", "btree")
    if vector:
        t.add_index("emb", "hnsw")
    t.wait_for_indexes()
    return t


_TICK = [0]


def _touch(path):
    """A distinct mtime after an in-place rewrite. Readers key what they
    cache of a file on (device, inode, size, mtime); a same-size rewrite
    within one clock tick of the write before it keeps all four, as any
    stamp-keyed cache (ours, and a kernel's own) then sees the old file."""
    _TICK[0] += 1
    os.utime(path, ns=(_TICK[0], 3 * 10**18 + _TICK[0]))


def _registry(t):
    meta = json.load(open(t.metadata_location))
    props = meta.get("properties", {})
    path = props["hyperstream.index-registry"]
    if path.startswith("file:"):
        path = path[len("file:"):]
    return json.load(open(path))["entries"]


def _index_of(t, column):
    """{data file: index file} of `column`'s index."""
    return {e["data-file"]: e["index-file"] for e in _registry(t) if column in e["columns"]}


def _oracle(t):
    # The unindexed truth: every data file read by pyarrow itself.
    files = sorted({e["data-file"] for e in _registry(t)})
    import pyarrow.parquet as pq
    return pa.concat_tables([pq.read_table(f) for f in files])


def _check_queries(t, truth, expect_warning):
    ids = truth.column("id").to_pylist()
    probe = [ids[0], ids[ROWS + 5], ids[-1], 123456789]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for cat in ("k0", "k5", "k9"):
            got = sorted(t.to_arrow(filter=f"cat = '{cat}'", columns=["id"]).column("id").to_pylist())
            want = sorted(truth.filter(pc.equal(truth.column("cat"), cat)).column("id").to_pylist())
            assert got == want, cat
        for v in probe:
            got = t.to_arrow(filter=f"id = {v}", columns=["id"]).column("id").to_pylist()
            assert got == ([v] if v in ids else []), v
        lo, hi = sorted(ids)[100], sorted(ids)[700]
        got = sorted(t.to_arrow(filter=f"id BETWEEN {lo} AND {hi}", columns=["id"])
                     .column("id").to_pylist())
        assert got == [x for x in sorted(ids) if lo <= x <= hi]
    warned = [w for w in seen if issubclass(w.category, hdb.IndexIgnoredWarning)]
    if expect_warning is not None:
        assert bool(warned) == expect_warning, [str(w.message) for w in seen]


def _check_search(t, truth, expect_warning):
    """Vector top-10 against brute force. HNSW is approximate, so what must
    hold exactly is what a foreign or damaged index would break: every row
    returned is a real row with its true distance, in order, 10 of them;
    and recall stays high (a rejected index is scored exactly, which only
    raises it)."""
    emb = np.asarray(truth.column("emb").combine_chunks().flatten()).reshape(-1, DIM)
    ids = np.asarray(truth.column("id"))
    pos = {int(v): i for i, v in enumerate(ids)}
    rng = np.random.default_rng(3)
    hits = 0
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(5):
            q = rng.uniform(-1, 1, DIM).astype(np.float32)
            d = np.sqrt(((emb.astype(np.float64) - q) ** 2).sum(axis=1))
            want = set(ids[np.argsort(d, kind="stable")[:10]].tolist())
            got = t.search("emb", q, k=10, columns=["id"], ef_search=400, nprobe=64)
            gi, gd = got.column("id").to_pylist(), got.column("distance").to_pylist()
            assert len(gi) == 10 and gd == sorted(gd)
            for i, dist in zip(gi, gd):
                assert abs(dist - d[pos[i]]) < 1e-4, (i, dist, d[pos[i]])
            hits += len(want & set(gi))
    assert hits >= 40, f"recall {hits / 50:.2f}"
    warned = [w for w in seen if issubclass(w.category, hdb.IndexIgnoredWarning)]
    assert bool(warned) == expect_warning, [str(w.message) for w in seen]


@pytest.fixture()
def table(tmp_path):
    t = _make(str(tmp_path / "t"), seed=1)
    return t, _oracle(t)


def test_healthy_table_validates_and_uses_indexes(table):
    t, truth = table
    assert t.validate() == []
    _check_queries(t, truth, expect_warning=False)
    _check_search(t, truth, expect_warning=False)
    plan = t.explain(filter="cat = 'k5'", as_dict=True)
    assert plan["files_indexed"] == FILES and plan["files_index_rejected"] == 0


def test_another_files_scalar_index_copied_over(table):
    t, truth = table
    m = _index_of(t, "cat")
    a, b = sorted(m)[:2]
    shutil.copyfile(m[a], m[b])  # b's index now describes a
    _touch(m[b])
    _check_queries(t, truth, expect_warning=True)
    plan = t.explain(filter="cat = 'k5'", as_dict=True)
    assert plan["files_index_rejected"] == 1
    assert os.path.basename(a) in plan["index_rejected"]
    per = {f["path"]: f for f in plan["files"]}
    assert per[b]["index_rejected"] and not per[a]["index_rejected"]
    text = str(t.explain(filter="cat = 'k5'"))
    assert "INDEX IGNORED" in text
    problems = t.validate()
    assert {p.data_file for p in problems} == {b}
    assert any("built for data file" in p.problem for p in problems)


def test_index_from_another_table(table, tmp_path):
    t, truth = table
    other = _make(str(tmp_path / "other"), seed=2, vector=False)
    theirs = sorted(_index_of(other, "cat").values())
    for mine, src in zip(sorted(_index_of(t, "cat").values()), theirs):
        shutil.copyfile(src, mine)
        _touch(mine)
    _check_queries(t, truth, expect_warning=True)
    assert len({p.data_file for p in t.validate()}) == FILES


def test_swapped_vector_index(table):
    t, truth = table
    m = _index_of(t, "emb")
    a, b = sorted(m)[:2]
    tmp = m[a] + ".swap"
    shutil.copyfile(m[a], tmp)
    shutil.copyfile(m[b], m[a])
    shutil.copyfile(tmp, m[b])
    os.unlink(tmp)
    _touch(m[a])
    _touch(m[b])
    _check_search(t, truth, expect_warning=True)
    problems = t.validate()
    assert {p.data_file for p in problems} == {a, b}
    assert all(p.column == "emb" for p in problems)


def test_random_bit_flips(table):
    t, truth = table
    rng = random.Random(7)
    files = sorted(set(_index_of(t, "cat").values()) | set(_index_of(t, "id").values()))
    pristine = {f: open(f, "rb").read() for f in files}
    for trial in range(24):
        f = rng.choice(files)
        data = bytearray(pristine[f])
        footer_start = len(data) - 16 - int.from_bytes(data[-12:-8], "little")
        # Half the flips inside the blobs (or the magic): every one must be
        # caught; the rest anywhere (a flip in an unused footer property is
        # harmless, but the answers must stay exact).
        pos = rng.randrange(footer_start) if trial % 2 == 0 else rng.randrange(len(data))
        data[pos] ^= 1 << rng.randrange(8)
        with open(f, "wb") as out:
            out.write(data)
        os.utime(f, ns=(trial + 1, 10**18 + trial))  # a new stamp even within one clock tick
        _check_queries(t, truth, expect_warning=None)
        if pos < footer_start:
            assert t.validate(), f"flip at byte {pos} of {f} not reported by validate()"
        with open(f, "wb") as out:
            out.write(pristine[f])
        os.utime(f, ns=(trial + 1, 2 * 10**18 + trial))
    assert t.validate() == []


def test_truncated_and_missing_index_files(table):
    t, truth = table
    m = _index_of(t, "id")
    a, b = sorted(m)[:2]
    with open(m[a], "r+b") as f:
        f.truncate(os.path.getsize(m[a]) // 2)
    _touch(m[a])
    os.unlink(m[b])
    _check_queries(t, truth, expect_warning=True)
    assert {p.data_file for p in t.validate()} >= {a, b}
