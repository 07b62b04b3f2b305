"""Table.search keeps its open table between calls (a search cache per
Table, refreshed per call) and loads the index registry once per query
(issue 13 item 4). These tests check that what is reused never hides a
change: appends by another handle, a vector or scalar index added, replaced
or dropped between queries, time travel, and filters the scalar index
answers or cannot. Every answer is checked against numpy brute force over
the rows the test wrote (exact searches: the exact rows in order; indexed:
real rows, true distances, sorted, exactly min(k, matches) rows, recall).
"""

import threading

import numpy as np
import pyarrow as pa
import pytest

import hyperstreamdb as hdb

DIM = 16


def _rows(rng, first, n, centers):
    v = (centers[rng.integers(0, len(centers), n)]
         + rng.normal(size=(n, DIM)) * 0.7).astype(np.float32)
    return {"id": np.arange(first, first + n, dtype=np.int64),
            "sel": rng.integers(0, 100, n).astype(np.int32),
            "fv": rng.random(n).astype(np.float64),
            "emb": v}


def _arrow(d):
    return pa.table({"id": d["id"], "sel": d["sel"], "fv": d["fv"],
                     "emb": pa.FixedSizeListArray.from_arrays(pa.array(d["emb"].reshape(-1)),
                                                              DIM)})


def _concat(parts):
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _mask(d, flt):
    """The oracle of the filters used here (numpy over the written rows)."""
    if flt is None:
        return np.ones(len(d["id"]), bool)
    kind, v = flt
    if kind == "sel<":
        return d["sel"] < v
    if kind == "fv>":
        return d["fv"] > v
    if kind == "both":
        return (d["sel"] < v) & (d["fv"] > 0.5)
    raise AssertionError(kind)


def _text(flt):
    if flt is None:
        return None
    kind, v = flt
    return {"sel<": f"sel < {v}", "fv>": f"fv > {v}", "both": f"sel < {v} AND fv > 0.5"}[kind]


def _brute(d, q, k, flt):
    m = _mask(d, flt)
    ids = d["id"][m]
    dist = np.sqrt(((d["emb"][m].astype(np.float64) - q.astype(np.float64)) ** 2).sum(1))
    order = np.lexsort((ids, dist.astype(np.float32)))
    return ids[order][:k], dist[order][:k], dict(zip(ids.tolist(), dist.tolist()))


def _check(t, d, q, k, flt, exact, snapshot_id=None, stats=None):
    got = t.search("emb", q, k=k, filter=_text(flt), columns=["id"], exact=exact,
                   snapshot_id=snapshot_id)
    exp_ids, exp_d, all_d = _brute(d, q, k, flt)
    gid = got.column("id").to_numpy()
    gd = got.column("distance").to_numpy()
    assert len(gid) == len(exp_ids), (flt, len(gid), len(exp_ids))
    assert np.all(np.diff(gd) >= 0)
    assert len(set(gid.tolist())) == len(gid)
    for i, dd in zip(gid.tolist(), gd):
        assert i in all_d, (flt, i)  # a real row inside the filter
        assert dd == pytest.approx(all_d[i], rel=1e-4, abs=1e-4)  # its true distance
    if exact:
        # Ties at the k-th distance may resolve either way between files.
        kth = exp_d[-1] if len(exp_d) else 0
        assert {i for i in exp_ids.tolist() if all_d[i] < kth - 1e-4} <= set(gid.tolist())
        assert all(all_d[i] <= kth + 1e-4 for i in gid.tolist())
    if stats is not None:
        stats[0] += len(set(gid.tolist()) & set(exp_ids.tolist()))
        stats[1] += len(exp_ids)
    return got


def _recall_ok(stats, floor=0.9):
    assert stats[1] > 0
    assert stats[0] / stats[1] >= floor, stats


@pytest.fixture()
def lake(tmp_path):
    rng = np.random.default_rng(1313)
    centers = rng.normal(size=(10, DIM)).astype(np.float32) * 3
    parts = [_rows(rng, 0, 1500, centers), _rows(rng, 1500, 1200, centers)]
    t = hdb.Table(str(tmp_path / "t"))
    for p in parts:
        t.write(_arrow(p))
    queries = (centers[rng.integers(0, 10, 12)]
               + rng.normal(size=(12, DIM))).astype(np.float32)
    return t, parts, queries, rng, centers


FILTERS = [None, ("sel<", 1), ("sel<", 10), ("sel<", 50), ("sel<", 99), ("fv>", 0.9),
           ("both", 30), ("sel<", 0)]


def test_indexed_and_filtered_answers(lake):
    t, parts, queries, _, _ = lake
    t.add_index("sel", "bitmap", progress=False)
    t.add_index("emb", "hnsw", progress=False)
    t.wait_for_indexes()
    d = _concat(parts)
    for flt in FILTERS:
        rec = [0, 0]
        for q in queries:
            _check(t, d, q, 10, flt, exact=True)
            _check(t, d, q, 10, flt, exact=False, stats=rec)
        if _mask(d, flt).any():
            _recall_ok(rec)
    # The same Table used again and again: the cached table gives the same rows.
    a = t.search("emb", queries[0], k=10, filter="sel < 10", columns=["id"])
    for _ in range(5):
        assert t.search("emb", queries[0], k=10, filter="sel < 10",
                        columns=["id"]).equals(a)


def test_appends_by_another_handle_are_seen(lake):
    t, parts, queries, rng, centers = lake
    t.add_index("emb", "hnsw", progress=False)
    t.wait_for_indexes()
    _check(t, _concat(parts), queries[0], 10, None, exact=True)  # opens the cache
    other = hdb.Table(t.uri)
    for round_ in range(3):
        # Rows right at the query: they must be the new top-k.
        new = _rows(rng, 10 ** 6 * (round_ + 1), 50, centers)
        q = queries[round_ + 3]
        new["emb"] = (q + rng.normal(size=(50, DIM)) * 0.01).astype(np.float32)
        other.write(_arrow(new))
        parts.append(new)
        d = _concat(parts)
        got = _check(t, d, q, 10, None, exact=False)
        assert set(got.column("id").to_pylist()) <= set(new["id"].tolist())
        _check(t, d, q, 10, None, exact=True)
        for flt in (None, ("sel<", 20), ("fv>", 0.5)):
            _check(t, d, queries[1], 10, flt, exact=True)
            _check(t, d, queries[1], 10, flt, exact=False)


def test_index_registered_replaced_dropped_between_queries(lake):
    t, parts, queries, _, _ = lake
    d = _concat(parts)

    def sweep(expect_indexed):
        rec = [0, 0]
        for q in queries[:6]:
            for flt in (None, ("sel<", 10), ("both", 40)):
                _check(t, d, q, 10, flt, exact=False, stats=rec)
                _check(t, d, q, 10, flt, exact=True)
        _recall_ok(rec)
        text = t.query().vector_search(queries[0], column="emb", k=10).explain()
        assert ("through a vector index" in text) and (
            ("(0 through" not in text) == expect_indexed), text

    sweep(False)
    t.add_index("emb", "hnsw", progress=False)
    t.wait_for_indexes()
    sweep(True)
    t.add_index("emb", "ivf_hnsw", partitions=4, progress=False)  # replaces it
    t.wait_for_indexes()
    assert [i.kind for i in t.indexes() if i.column == "emb"] == ["ivf_hnsw"]
    sweep(True)
    t.add_index("sel", "bitmap", progress=False)  # a scalar index appears
    t.wait_for_indexes()
    sweep(True)
    # Dropped by another handle: this one stops using it at once.
    hdb.Table(t.uri).drop_index("emb")
    sweep(False)
    hdb.Table(t.uri).drop_index("sel")
    sweep(False)


def test_time_travel_with_a_cached_table(lake):
    t, parts, queries, rng, centers = lake
    t.add_index("sel", "bitmap", progress=False)
    t.add_index("emb", "hnsw", progress=False)
    t.wait_for_indexes()
    snaps = [(t.current_snapshot_id, _concat(parts))]
    for _ in range(2):
        new = _rows(rng, 10 ** 6 + len(parts) * 10 ** 4, 400, centers)
        t.write(_arrow(new))
        parts.append(new)
        snaps.append((t.current_snapshot_id, _concat(parts)))
    # Alternate between snapshots: each answer is its own snapshot's.
    for _ in range(2):
        for sid, d in snaps[::-1] + snaps:
            for flt in (None, ("sel<", 5), ("fv>", 0.8)):
                _check(t, d, queries[2], 10, flt, exact=True, snapshot_id=sid)
                _check(t, d, queries[2], 10, flt, exact=False, snapshot_id=sid)


def test_concurrent_searches_on_one_table(lake):
    t, parts, queries, _, _ = lake
    t.add_index("sel", "bitmap", progress=False)
    t.add_index("emb", "hnsw", progress=False)
    t.wait_for_indexes()
    d = _concat(parts)
    want = [t.search("emb", q, k=10, filter="sel < 30", columns=["id"]) for q in queries]
    errors = []

    def worker():
        try:
            for _ in range(4):
                for q, w in zip(queries, want):
                    got = t.search("emb", q, k=10, filter="sel < 30", columns=["id"])
                    assert got.equals(w)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]
    for q in queries[:3]:
        _check(t, d, q, 10, ("sel<", 30), exact=True)


def test_table_replaced_in_place(tmp_path):
    """A folder whose table is deleted and written again: the cached table
    never answers with the old rows."""
    import shutil
    rng = np.random.default_rng(5)
    centers = rng.normal(size=(4, DIM)).astype(np.float32) * 3
    path = str(tmp_path / "t")
    a = _rows(rng, 0, 300, centers)
    t = hdb.Table(path)
    t.write(_arrow(a))
    q = a["emb"][7]
    _check(t, a, q, 5, None, exact=True)
    shutil.rmtree(path)
    b = _rows(rng, 5000, 200, centers)
    w = hdb.Table(path)
    w.write(_arrow(b))
    w.write(_arrow(b | {"id": b["id"] + 1000}))
    bb = _concat([b, b | {"id": b["id"] + 1000}])
    got = t.search("emb", q, k=5, columns=["id"], exact=True)
    assert set(got.column("id").to_pylist()) <= set(bb["id"].tolist())
