"""The freshness contract of reads (issue 13: the search path's fixed cost).

A refresh of an unchanged local table is two stats once its metadata folder
has settled (src/table/README.md "Finding the latest version"), and what a
search prepared for one metadata version (plan, registry, opened indexes and
data files) is reused while the version is unchanged. These tests check the
contract that buys:

* another process's commit is seen by the very next search (and scan), settled
  folder or not;
* ``staleness_s`` defers other processes' commits by at most that long, never
  this object's own;
* a data file replaced under its name (outside Iceberg's rules: files are
  immutable) never yields the substitute's rows silently: while the version
  is unchanged a reader keeps the rows of the file it opened for it or
  refuses the file (CorruptFileError naming it: its size is not the
  manifest's); after the next commit it is refused likewise.

Oracle: numpy brute force over the rows the test wrote.
"""

import os
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hyperstreamdb as hdb

DIM = 8

WRITER = textwrap.dedent("""
    import sys, numpy as np, pyarrow as pa, hyperstreamdb as hdb
    path, first, n, value = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    v = np.full((n, %d), value, dtype=np.float32)
    t = hdb.Table(path)
    t.write(pa.table({"id": np.arange(first, first + n, dtype=np.int64),
                      "emb": pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), %d)}))
""" % (DIM, DIM))


def _table(rng, first, n):
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v, pa.table({"id": np.arange(first, first + n, dtype=np.int64),
                        "emb": pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), DIM)})


def _write_elsewhere(path, first, n, value):
    """Append n rows whose vectors are all `value`, from another process."""
    subprocess.run([sys.executable, "-c", WRITER, path, str(first), str(n), str(value)],
                   check=True, env=dict(os.environ))


def _settle():
    time.sleep(1.15)  # past the folder's settle time (table.c DIR_SETTLE_NS)


def _brute(vecs, ids, q, k):
    d = np.linalg.norm(vecs - q, axis=1)
    order = np.lexsort((ids, d))[:k]
    return ids[order], d[order]


@pytest.fixture
def base(tmp_path):
    rng = np.random.default_rng(13)
    path = str(tmp_path / "t")
    v, tb = _table(rng, 0, 3000)
    t = hdb.Table(path)
    t.write(tb)
    t.add_index("emb", "hnsw", m=8, ef_construction=40, progress=False)
    t.wait_for_indexes()
    return path, v


@pytest.fixture
def scalar_indexed(base):
    """base with an inverted index on id: `id < N` is answered by the index
    exactly, so the allowed rows reach the vector index as one bitmap."""
    path, v = base
    t = hdb.Table(path)
    t.add_index("id", "inverted", progress=False)
    t.wait_for_indexes()
    return path, v


@pytest.mark.parametrize("settle", [False, True])
def test_other_process_commit_seen_by_next_search(base, settle):
    path, v = base
    t = hdb.Table(path)
    q = np.full(DIM, 7.0, dtype=np.float32)  # far from the random rows
    vecs, ids = v, np.arange(len(v))
    for step in range(3):
        t.search("emb", q, k=5)  # warm: prepared plan, open indexes and files
        if settle:
            _settle()
            t.search("emb", q, k=5)  # the full check that records the settled folder
            t.search("emb", q, k=5)  # the two-stat path
        value = 7.0 - 0.25 * step  # each new row nearer q than the last ones
        _write_elsewhere(path, 10_000 + 10 * step, 2, value)
        vecs = np.vstack([vecs, np.full((2, DIM), value, np.float32)])
        ids = np.concatenate([ids, [10_000 + 10 * step, 10_000 + 10 * step + 1]])
        got = t.search("emb", q, k=5)
        want_ids, want_d = _brute(vecs, ids, q, 5)
        assert got.column("id").to_pylist()[:2] == list(want_ids[:2])
        np.testing.assert_allclose(got.column("distance").to_numpy()[:2], want_d[:2], rtol=1e-5)
        assert len(t) == len(ids)
        assert t.to_arrow(filter=f"id >= 10000").num_rows == 2 * (step + 1)


def test_staleness_bound(base):
    path, v = base
    q = np.full(DIM, 9.0, dtype=np.float32)
    lazy = hdb.Table(path, staleness_s=3600)
    strict = hdb.Table(path)
    assert lazy.search("emb", q, k=1).column("id").to_pylist() != [20_000]
    n0 = len(lazy)
    _write_elsewhere(path, 20_000, 1, 9.0)
    # Within the bound: the lazy object answers from the version it holds.
    assert lazy.search("emb", q, k=1).column("id").to_pylist() != [20_000]
    assert len(lazy) == n0
    # Without one: seen at once.
    assert strict.search("emb", q, k=1).column("id").to_pylist() == [20_000]
    assert len(strict) == n0 + 1
    # Its own commits are seen at once, with the others' before them.
    lazy.write(_table(np.random.default_rng(1), 30_000, 5)[1])
    assert len(lazy) == n0 + 6
    # A short bound expires.
    short = hdb.Table(path, staleness_s=0.2)
    assert len(short) == n0 + 6
    short.search("emb", q, k=1)
    _write_elsewhere(path, 40_000, 1, 9.0)
    time.sleep(0.3)
    assert sorted(short.search("emb", q, k=2).column("id").to_pylist()) == [20_000, 40_000]
    assert len(short) == n0 + 7
    for bad in (-1, "1", True, float("nan")):
        with pytest.raises(hdb.InvalidArgumentError, match="staleness_s"):
            hdb.Table(path, staleness_s=bad)


def _data_file(path):
    files = [f for f in os.listdir(os.path.join(path, "data")) if f.endswith(".parquet")]
    assert len(files) == 1
    return os.path.join(path, "data", files[0])


def test_replaced_data_file_never_gives_its_rows(base, tmp_path):
    path, v = base
    t = hdb.Table(path)
    q = v[17].copy()
    want = t.search("emb", q, k=5)
    assert want.column("id").to_pylist()[0] == 17
    # A second reader that has searched (plan and index prepared) but never
    # fetched a row, so its first fetch opens the data file after the swap.
    late = hdb.Table(path)
    assert late.search("emb", q, k=5, columns=[]).num_rows == 5
    # Substitute: same rows count and schema, other vectors and ids (a file
    # replaced under the same name, which Iceberg never does).
    rng = np.random.default_rng(99)
    fake = pq.read_table(_data_file(path))
    fv = rng.normal(size=(fake.num_rows, DIM)).astype(np.float32) + 50
    fake = pa.table({"id": pa.array(np.arange(fake.num_rows, dtype=np.int64) + 5_000_000),
                     "emb": pa.FixedSizeListArray.from_arrays(pa.array(fv.reshape(-1)), DIM)},
                    schema=fake.schema)
    tmp = str(tmp_path / "fake.parquet")
    pq.write_table(fake, tmp)
    victim = _data_file(path)
    os.replace(tmp, victim)
    name = os.path.basename(victim)

    def search_or_refused(reader):
        """The rows, or None when the search refused the replaced file."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # an index ignored: scored exactly
                return reader.search("emb", q, k=5)
        except hdb.CorruptFileError as e:
            assert name in str(e) and "replaced" in str(e)
            return None

    # Same version: the reader keeps the rows of the file it opened for the
    # version, or refuses the file; never the substitute's rows.
    got = search_or_refused(t)
    assert got is None or got.column("id").to_pylist() == want.column("id").to_pylist()
    # The late reader opens the substitute for this version: refused (its
    # size is not the manifest's), never its rows under the index's ids.
    assert search_or_refused(late) is None
    # After another commit, this reader and a new one: refused, or (where
    # the substitute passes every check) only rows of the files the version
    # names at their true distances.
    _write_elsewhere(path, 9_000_000, 1, 0.0)
    for reader in (t, hdb.Table(path)):
        got = search_or_refused(reader)
        if got is None:
            continue
        ids = got.column("id").to_numpy()
        assert set(ids) <= set(range(5_000_000, 5_000_000 + fake.num_rows)) | {9_000_000}
        vec = np.stack(got.column("emb").to_numpy(zero_copy_only=False))
        np.testing.assert_allclose(got.column("distance").to_numpy(),
                                   np.linalg.norm(vec - q, axis=1), rtol=1e-4)


@pytest.mark.parametrize("fixture", ["base", "scalar_indexed"])
def test_repeated_filter_follows_deletes_and_appends(fixture, request):
    """A filter's allowed rows are kept per version: the same filter text
    after a delete (a new version) answers from the new rows, with the
    filter read from the data or answered by a scalar index."""
    path, v = request.getfixturevalue(fixture)
    t = hdb.Table(path)
    other = hdb.Table(path)
    q = v[40].copy()
    flt = "id < 200"
    ids = np.arange(len(v))
    alive = np.ones(len(v), bool)
    for step in range(3):
        for _ in range(2):  # the second run answers from the kept allowed rows
            got = t.search("emb", q, k=5, filter=flt).column("id").to_numpy()
            m = alive & (ids < 200)
            want, _ = _brute(v[m], ids[m], q, 5)
            # indexed: true rows only, all allowed and alive, the nearest found
            assert set(got) <= set(ids[m]) and len(got) == 5
            assert got[0] == want[0]
        other.delete(f"id = {int(got[0])}")
        alive[got[0]] = False
