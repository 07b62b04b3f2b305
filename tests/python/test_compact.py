"""Compaction (issue 14 item 4): ``Table.compact`` / ``rewrite_data_files``.

Seeded random tables of many small files with deletes (position deletes in
v2, deletion vectors in v3, copy-on-write rewrites, equality deletes written
by the Iceberg Java library), partitioned with spec evolution, sorted, with
scalar and vector indexes. Oracles: a plain in-memory model of the rows, the
rows every read path returned before the compaction, pyiceberg's
``StaticTable`` at every snapshot (it applies position deletes and deletion
vectors itself), and brute-force vector search. Also: what the commit
records (operation ``replace``, no delete file left, the current spec and
sort order in every new file, batches kept for the index build), a
concurrent appender and deleter (nothing lost, nothing resurrected), and
expire_snapshots / remove_orphan_files keeping delete files while reachable.
"""

import os
import random
import shutil
import threading

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import StaticTable

import hyperstreamdb as hdb
from hyperstreamdb import _core

DIM = 4
CATS = [f"c{i}" for i in range(5)]


def _batch(rng, ids):
    return pa.table({
        "id": pa.array(list(ids), pa.int64()),
        "cat": pa.array([rng.choice(CATS) for _ in ids], pa.string()),
        "v": pa.array([float(rng.randint(0, 1000)) for _ in ids], pa.float64()),
        "emb": pa.array([[rng.random() for _ in range(DIM)] for _ in ids],
                        pa.list_(pa.float32(), DIM)),
    })


def _canon(t):
    t = t.select(["id", "cat", "v"])
    return sorted(zip(t["id"].to_pylist(), t["cat"].to_pylist(), t["v"].to_pylist()))


FILTERS = ["cat = 'c1'", "id < 60", "v > 700 OR cat = 'c3'", "cat IN ('c0', 'c2') AND v <= 400"]


def _reads(t, sid=None):
    """Every read path's answer at snapshot `sid` (None: current)."""
    out = {"to_arrow": _canon(t.to_arrow(snapshot_id=sid)),
           "stream": _canon(t.to_arrow_stream(snapshot_id=sid).read_all())}
    for f in FILTERS:
        out[f] = _canon(t.to_arrow(filter=f, snapshot_id=sid))
    return out


def _pyiceberg(t, sid):
    st = StaticTable.from_metadata(t.metadata_location)
    return _canon(st.scan(snapshot_id=sid).to_arrow())


def _search_check(t, where):
    rows = t.to_arrow(columns=["id", "emb"])
    if rows.num_rows == 0:
        return
    ids = np.array(rows["id"].to_pylist())
    vecs = np.array(rows["emb"].to_pylist(), dtype=np.float32)
    q = np.full(DIM, 0.4, dtype=np.float32)
    dist = np.sqrt(((vecs - q) ** 2).sum(1))
    k = min(7, len(ids))
    r = t.search("emb", q, k=k, columns=["id"], exact=True)
    assert r.num_rows == k, where
    np.testing.assert_allclose(np.sort(r["distance"].to_numpy()), np.sort(dist)[:k],
                               rtol=1e-5, atol=1e-6, err_msg=where)
    assert set(r["id"].to_pylist()) <= set(ids.tolist()), f"{where}: a deleted row found"


def _summary(t):
    import json
    with open(t.metadata_location) as f:
        meta = json.load(f)
    cur = meta["current-snapshot-id"]
    snap = next(s for s in meta["snapshots"] if s["snapshot-id"] == cur)
    return meta, snap["summary"]


def _data_files(t):
    st = StaticTable.from_metadata(t.metadata_location)
    return [task.file for task in st.scan().plan_files()]


def _history(rng, t, model, steps, next_id):
    """Random appends and deletes; returns the next free id."""
    for step in range(steps):
        op = rng.choice(["append", "append", "append", "delete"]) if step > 1 else "append"
        if op == "append":
            n = rng.randint(5, 60)
            b = _batch(rng, range(next_id, next_id + n))
            next_id += n
            t.write(b)
            for r in zip(b["id"].to_pylist(), b["cat"].to_pylist(), b["v"].to_pylist()):
                model[r[0]] = r
        else:
            f = rng.choice(FILTERS)
            want = {i for i, r in model.items() if _match(f, r)}
            assert t.delete(f) == len(want), f"step {step}: delete {f!r}"
            for i in want:
                del model[i]
    return next_id


def _match(f, r):
    i, c, v = r
    return {"cat = 'c1'": c == "c1", "id < 60": i < 60, "v > 700 OR cat = 'c3'": v > 700 or c == "c3",
            "cat IN ('c0', 'c2') AND v <= 400": c in ("c0", "c2") and v <= 400}[f]


def _check_against(t, model, where):
    want = sorted(model.values())
    got = _reads(t)
    assert got["to_arrow"] == want, f"{where}: to_arrow"
    assert got["stream"] == want, f"{where}: to_arrow_stream"
    for f in FILTERS:
        assert got[f] == sorted(r for r in want if _match(f, r)), f"{where}: filter {f!r}"
    assert len(t) == len(want), f"{where}: len"
    _search_check(t, where)


@pytest.mark.parametrize("fv,mode", [(2, "merge-on-read"), (3, "merge-on-read"),
                                     (2, "copy-on-write")])
def test_random_small_files(tmp_path, fv, mode):
    for seed in range(3):
        rng = random.Random(1400 + seed * 17 + fv)
        t = hdb.Table(tmp_path / f"t{seed}", format_version=fv,
                      properties={"write.delete.mode": mode})
        model = {}
        nid = _history(rng, t, model, 14, 0)
        if seed == 1:
            t.add_index("cat")
            t.add_index("v", "sorted")
        before_ids = [s.snapshot_id for s in t.snapshots()]
        before = {sid: _reads(t, sid) for sid in before_ids}
        n_before = len(_data_files(t))
        r = t.compact(min_input_files=2)
        where = f"v{fv} {mode} seed {seed}"
        if n_before < 2 and int(_summary(t)[1].get("total-delete-files", 0)) == 0:
            assert r.snapshot_id is None, f"{where}: one clean file rewritten"
            continue
        assert r.snapshot_id is not None and r.snapshot_id == t.current_snapshot_id, where
        assert r.files_rewritten == n_before and r.files_added == 1, f"{where}: {r!r}"
        assert r.rows == len(model), where
        assert "CompactResult(snapshot" in repr(r)
        meta, summ = _summary(t)
        assert t.snapshots()[-1].operation == "replace", where
        assert int(summ.get("total-delete-files", 0)) == 0, f"{where}: {summ}"
        assert int(summ["total-records"]) == len(model), where
        _check_against(t, model, where)
        # Every older snapshot reads as before; pyiceberg agrees at every snapshot.
        for sid in before_ids:
            assert _reads(t, sid) == before[sid], f"{where}: snapshot {sid} changed"
        for s in t.snapshots():
            ours = _reads(t, s.snapshot_id)["to_arrow"]
            assert _pyiceberg(t, s.snapshot_id) == ours, f"{where}: pyiceberg at {s.snapshot_id}"
        if seed == 1:  # the new file is indexed, and the index answers right
            for ix in t.indexes():
                assert ix.complete, f"{where}: {ix}"
            assert t.validate() == [], where
            assert t.explain("cat = 'c1'").stats["files_indexed"] >= 1, where
        # Nothing left to do; later changes and another compaction still agree.
        assert t.compact().snapshot_id is None, where
        nid = _history(rng, t, model, 6, nid)
        t.compact(target_file_size_bytes=rng.choice([2000, 5000, 1 << 20]))
        _check_against(t, model, f"{where} (second)")
        assert _pyiceberg(t, t.current_snapshot_id) == sorted(model.values()), where


def test_target_size_and_min_input_files(tmp_path):
    rng = random.Random(7)
    t = hdb.Table(tmp_path / "t")
    model = {}
    _history(rng, t, model, 1, 0)
    # One small clean file and min_input_files=2: nothing to do.
    assert t.compact().snapshot_id is None
    for i in range(11):
        b = _batch(rng, range(1000 + i * 200, 1200 + i * 200))
        t.write(b)
        for r in zip(b["id"].to_pylist(), b["cat"].to_pylist(), b["v"].to_pylist()):
            model[r[0]] = r
    assert t.compact(min_input_files=20).snapshot_id is None
    sizes = [f.file_size_in_bytes for f in _data_files(t)]
    target = 3 * max(sizes)
    r = t.compact(target_file_size_bytes=target)
    files = _data_files(t)
    assert r.files_rewritten == 12 and r.files_added == len(files)
    assert 3 <= len(files) <= 6, [f.file_size_in_bytes for f in files]
    assert all(f.file_size_in_bytes <= 1.5 * target for f in files)
    _check_against(t, model, "target size")
    with pytest.raises(hdb.InvalidArgumentError):
        t.compact(target_file_size_bytes=0)
    with pytest.raises(hdb.InvalidArgumentError):
        t.compact(min_input_files=0)
    n = len(t.snapshots())
    with pytest.raises(hdb.HyperStreamError, match="position"):
        t.compact(filter="id <")  # does not parse: a clear error, nothing committed
    with pytest.raises(hdb.HyperStreamError):
        t.compact(filter="nope = 1")
    assert len(t.snapshots()) == n
    # The table property write.target-file-size-bytes is the default target.
    p = hdb.Table(tmp_path / "prop", properties={"write.target-file-size-bytes": str(target)})
    for i in range(12):
        p.write(_batch(rng, range(i * 200, i * 200 + 200)))
    r = p.compact()
    # (a last bin of one clean file is left alone)
    assert r.files_rewritten >= 11 and 3 <= r.files_added <= 6, r
    # rewrite_data_files is the same operation.
    t.write(_batch(rng, range(9000, 9010)))
    t.write(_batch(rng, range(9010, 9020)))
    assert t.rewrite_data_files(target_file_size_bytes=target).files_rewritten >= 2


@pytest.mark.parametrize("fv", [2, 3])
def test_large_files_are_split_to_the_target(tmp_path, fv):
    """Files larger than 1.8 x the target (Iceberg's default max file size)
    are rewritten into files of about the target, partition by partition,
    sorted rows staying sorted in each; the rows, every read path, the row
    lineage and pyiceberg's reads are unchanged."""
    rng = random.Random(90 + fv)
    b = _batch(rng, range(0, 6000))
    t = hdb.Table.create(tmp_path / "t", schema=b.schema, partition_spec=["cat"],
                         sort_order=["v"], format_version=fv)
    model = {}
    t.write(b)
    for r in zip(b["id"].to_pylist(), b["cat"].to_pylist(), b["v"].to_pylist()):
        model[r[0]] = r
    before = _data_files(t)
    assert len(before) == len(CATS)
    lin = t.to_arrow(columns=["id", "_row_id"]).sort_by("id") if fv == 3 else None
    target = min(f.file_size_in_bytes for f in before) // 4
    # Files within 1.8 x the target are left alone.
    assert t.compact(target_file_size_bytes=max(f.file_size_in_bytes for f in before)
                     ).snapshot_id is None
    r = t.compact(target_file_size_bytes=target)
    files = _data_files(t)
    assert r.files_rewritten == len(CATS) and r.files_added == len(files) >= 4 * len(CATS), r
    meta, _ = _summary(t)
    for f in files:
        assert f.file_size_in_bytes <= 1.8 * target, (f.file_size_in_bytes, target)
        tab = pq.read_table(f.file_path.removeprefix("file://"))
        v = tab["v"].to_pylist()
        assert v == sorted(v), f"{f.file_path} not sorted"
        assert len(set(tab["cat"].to_pylist())) == 1
        assert f.sort_order_id == meta["default-sort-order-id"]
    _check_against(t, model, "split")
    for s in t.snapshots():
        assert _pyiceberg(t, s.snapshot_id) == _reads(t, s.snapshot_id)["to_arrow"]
    if fv == 3:
        assert t.to_arrow(columns=["id", "_row_id"]).sort_by("id").equals(lin)


def test_partitioned_spec_evolution_sorted(tmp_path):
    for fv in (2, 3):
        rng = random.Random(40 + fv)
        t = hdb.Table(tmp_path / f"p{fv}", format_version=fv)
        model = {}
        nid = _history(rng, t, model, 2, 0)  # unpartitioned files first
        t.set_partition_spec(["cat"])
        nid = _history(rng, t, model, 8, nid)
        t.set_partition_spec([("id", "bucket[3]")])
        nid = _history(rng, t, model, 8, nid)
        t.set_sort_order(["v"], ascending=[False])
        nid = _history(rng, t, model, 4, nid)
        before = {s.snapshot_id: _reads(t, s.snapshot_id) for s in t.snapshots()}
        old_specs = {f.spec_id for f in _data_files(t)}
        assert len(old_specs) == 3
        r = t.compact(filter="id >= 0")
        where = f"partitioned v{fv}"
        assert r.snapshot_id is not None, where
        files = _data_files(t)
        meta, summ = _summary(t)
        assert {f.spec_id for f in files} == {meta["default-spec-id"]}, where
        assert int(summ.get("total-delete-files", 0)) == 0, where
        for f in files:  # one bucket per file, rows sorted by v descending
            tab = pq.read_table(f.file_path.removeprefix("file://"))
            v = tab["v"].to_pylist()
            assert v == sorted(v, reverse=True), f"{where}: {f.file_path} not sorted"
            b = {int(x) for x in tab["id"].to_pylist()}
            assert f.sort_order_id == meta["default-sort-order-id"], where
            assert len(b) == f.record_count
        _check_against(t, model, where)
        for sid, want in before.items():
            assert _reads(t, sid) == want, f"{where}: snapshot {sid}"
        for s in t.snapshots():
            assert _pyiceberg(t, s.snapshot_id) == _reads(t, s.snapshot_id)["to_arrow"], where


def test_filter_limits_to_partitions(tmp_path):
    rng = random.Random(3)
    t = hdb.Table(tmp_path / "t")
    model = {}
    for i in range(6):
        if i == 1:
            t.set_partition_spec(["cat"])
        b = _batch(rng, range(i * 50, i * 50 + 50))
        if i == 0:  # an unpartitioned file of cat c2 only: its bounds match the filter
            b = b.set_column(1, "cat", pa.array(["c2"] * 50))
        t.write(b)
        for r in zip(b["id"].to_pylist(), b["cat"].to_pylist(), b["v"].to_pylist()):
            model[r[0]] = r
    t.delete("id < 60")
    for r in [r for r in model.values() if r[0] < 60]:
        del model[r[0]]
    keep = [f.file_path for f in _data_files(t) if len(f.partition) and f.partition[0] != "c2"]
    r = t.compact(filter="cat = 'c2'")
    after = [f.file_path for f in _data_files(t)]
    assert r.files_added == 1
    assert set(keep) <= set(after), "a file of another partition was rewritten"
    c2 = [f for f in _data_files(t) if not len(f.partition) or f.partition[0] == "c2"]
    assert len(c2) == 1
    _check_against(t, model, "filtered compaction")
    # The deletes of the other partitions still apply (not dangling).
    assert int(_summary(t)[1].get("total-delete-files", 0)) >= 1


def test_kept_batches_build_the_indexes(tmp_path):
    rng = random.Random(5)
    t = hdb.Table(tmp_path / "t", index_all=True)
    model = {}
    _history(rng, t, model, 10, 0)
    t.wait_for_indexes()
    # The core keeps one batch set per new file (no re-read for the index build).
    r, kept = _core.compact(t.uri, 0, None, 2, True)
    assert r["files_added"] == 1 and len(kept) == 1
    del kept
    t.write(_batch(rng, range(5000, 5030)))
    t.write(_batch(rng, range(5030, 5060)))
    t.wait_for_indexes()
    res = t.compact()
    assert res.indexes_built >= 1
    for ix in t.indexes():
        assert ix.complete, ix
    assert t.validate() == []


def test_concurrent_append_and_delete(tmp_path):
    """An appender and a deleter commit while compactions run: at the end
    every acknowledged append is there and every acknowledged delete holds."""
    rng = random.Random(11)
    path = tmp_path / "t"
    t = hdb.Table(path)
    model = {}
    _history(rng, t, model, 12, 0)
    lock = threading.Lock()
    errors, conflicts = [], []

    def appender():
        w = hdb.Table(path)
        r = random.Random(1)
        for i in range(15):
            b = _batch(r, range(100000 + i * 10, 100010 + i * 10))
            w.write(b)
            with lock:
                for x in zip(b["id"].to_pylist(), b["cat"].to_pylist(), b["v"].to_pylist()):
                    model[x[0]] = x

    def deleter():
        w = hdb.Table(path)
        for i in range(0, 300, 25):
            try:
                n = w.delete(f"id >= {i} AND id < {i + 5}")
            except hdb.CommitConflictError:
                conflicts.append(i)  # not acknowledged: nothing committed
                continue
            except Exception as e:  # noqa: BLE001
                errors.append(e)
                continue
            with lock:
                gone = [k for k in model if i <= k < i + 5]
                assert n == len(gone)
                for k in gone:
                    del model[k]

    def compactor():
        w = hdb.Table(path)
        for _ in range(6):
            try:
                w.compact(target_file_size_bytes=1 << 20)
            except hdb.CommitConflictError:
                pass  # a lost race after the retries: nothing committed
            except Exception as e:  # noqa: BLE001
                errors.append(e)

    ths = [threading.Thread(target=f) for f in (appender, deleter, compactor)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert not errors, errors
    t.compact()
    _check_against(t, model, "after concurrent writers")
    assert _pyiceberg(t, t.current_snapshot_id) == sorted(model.values())


def test_expire_and_orphans_know_delete_files(tmp_path):
    for fv in (2, 3):
        rng = random.Random(fv)
        t = hdb.Table(tmp_path / f"e{fv}", format_version=fv)
        model = {}
        _history(rng, t, model, 3, 0)
        for f in ("cat = 'c1'", "id < 60"):
            t.delete(f)
            for k in [k for k, r in model.items() if _match(f, r)]:
                del model[k]
        st = StaticTable.from_metadata(t.metadata_location)
        dels = {d.file_path.removeprefix("file://") for task in st.scan().plan_files()
                for d in task.delete_files}
        assert dels and all(os.path.exists(p) for p in dels)
        # Reachable: kept by remove_orphan_files, even forced at age 0.
        import datetime as dt
        removed = t.remove_orphan_files(older_than=dt.timedelta(0), force=True)
        assert not set(removed) & dels
        assert all(os.path.exists(p) for p in dels)
        want = sorted(model.values())
        assert _reads(t)["to_arrow"] == want
        # Compaction drops them from the current snapshot; older snapshots still
        # reach them until they expire.
        t.compact()
        assert all(os.path.exists(p) for p in dels)
        t.remove_orphan_files(older_than=dt.timedelta(0), force=True)
        assert all(os.path.exists(p) for p in dels)
        t.expire_snapshots(retain_last=1)
        assert not any(os.path.exists(p) for p in dels), f"v{fv}: delete files kept"
        assert _reads(t)["to_arrow"] == want
        assert _pyiceberg(t, t.current_snapshot_id) == want


def test_equality_deletes_from_java(oracle, tmp_path):
    """Tables with equality deletes written by Iceberg Java: compacted, the
    rows equal the brute force, the delete files are gone, and pyiceberg
    (which cannot apply equality deletes) reads the result."""
    from test_equality_deletes import _arrow_rows, _canon as eq_canon, brute_force

    for name in ("global_v2", "part_v3", "evolved_v2"):
        o = oracle[name]
        path = tmp_path / name
        shutil.copytree(o["location"], path)
        t = hdb.Table(o["location"])
        cols = o["columns"]
        before = eq_canon(_arrow_rows(t.to_arrow(), cols))
        want = eq_canon(brute_force(o, o["snapshots"][-1]["seq"]))
        assert before == want, name
        r = t.compact()
        assert r.snapshot_id is not None, name
        assert eq_canon(_arrow_rows(t.to_arrow(), cols)) == want, f"{name}: after compaction"
        assert len(t) == len(want), name
        flt = eq_canon(_arrow_rows(t.to_arrow(filter="id < 60"), cols))
        assert flt == [w for w in want if w[0] is not None and w[0] < 60], name
        summ = _summary(t)[1]
        assert int(summ.get("total-equality-deletes", 0)) == 0, f"{name}: {summ}"
        assert int(summ.get("total-delete-files", 0)) == 0, f"{name}: {summ}"
        st = StaticTable.from_metadata(t.metadata_location)
        got = eq_canon(_arrow_rows(st.scan().to_arrow(), cols))
        assert got == want, f"{name}: pyiceberg"
        shutil.rmtree(o["location"])
        shutil.copytree(path, o["location"])  # other tests read the original


from test_equality_deletes import oracle  # noqa: E402,F401 (the session fixture)


def test_sigkill_at_every_crash_point(tmp_path):
    """A compaction killed (SIGKILL) at each crash point of the write and
    commit path (HS_TABLE_CRASH_STEP) leaves the table readable with the same
    rows (compaction never changes them) at the last committed snapshot: the
    one before, or the replace; pyiceberg agrees; compacting again works."""
    import subprocess
    import sys

    for fv in (2, 3):
        code = "import sys, hyperstreamdb as hdb; hdb.Table(sys.argv[1]).compact()"
        finished = False
        for step in range(1, 200):
            # The same seeded history each time (recorded paths are absolute: no copies).
            path = tmp_path / f"v{fv}-{step}"
            t = hdb.Table(path, format_version=fv)
            model = {}
            _history(random.Random(21 + fv), t, model, 10, 0)
            want = sorted(model.values())
            pre = t.current_snapshot_id
            env = dict(os.environ, HS_TABLE_CRASH_STEP=str(step))
            r = subprocess.run([sys.executable, "-c", code, str(path)], env=env,
                               capture_output=True, text=True, timeout=60)
            c = hdb.Table(path)
            where = f"v{fv} crash step {step} (rc {r.returncode})"
            assert r.returncode in (0, -9), f"{where}: {r.stderr[-2000:]}"
            assert c.current_snapshot_id == pre or c.snapshots()[-1].operation == "replace", where
            assert _reads(c)["to_arrow"] == want, where
            assert len(c) == len(want), where
            assert _pyiceberg(c, c.current_snapshot_id) == want, where
            c.compact()
            assert _reads(c)["to_arrow"] == want, f"{where}: compacting again"
            shutil.rmtree(path)
            if r.returncode == 0:
                finished = True
                break
        assert finished and step > 1, f"v{fv}: no crash point reached (step {step})"


def test_v3_row_lineage_kept(tmp_path):
    """v3: every row keeps its _row_id and _last_updated_sequence_number
    through compaction (spec "Row Lineage"), partitioned or not, with the
    new file's indexes built from the kept batches."""
    lin = ["id", "cat", "v", "_row_id", "_last_updated_sequence_number"]
    for partitioned in (False, True):
        rng = random.Random(60 + partitioned)
        t = hdb.Table(tmp_path / f"l{partitioned}", format_version=3)
        model = {}
        nid = _history(rng, t, model, 3, 0)
        if partitioned:
            t.set_partition_spec(["cat"])
        else:
            t.add_index("cat")
        nid = _history(rng, t, model, 8, nid)
        t.update({"v": 1.25}, filter="id < 30")
        for k in [k for k in model if k < 30]:
            model[k] = (k, model[k][1], 1.25)

        def rows():
            a = t.to_arrow(columns=lin)
            return sorted(zip(*[a[c].to_pylist() for c in lin]))

        before = rows()
        assert len({r[3] for r in before}) == len(before), "row ids not unique"
        if not partitioned:
            r, kept = _core.compact(t.uri, 0, None, 2, True)
            assert r["files_added"] == 1 and len(kept) == 1
            del kept
            t.build_indexes()
        else:
            t.compact()
        where = f"lineage partitioned={partitioned}"
        assert rows() == before, where
        _check_against(t, model, where)
        assert t.validate() == [], where


def test_statistics_follow_the_compaction(tmp_path):
    """A table with NDV statistics gets a statistics file for the replace
    snapshot, with the same estimates (compaction changes no row)."""
    import json
    rng = random.Random(8)
    t = hdb.Table(tmp_path / "s")
    model = {}
    _history(rng, t, model, 8, 0)
    before = t.compute_statistics()
    r = t.compact()
    assert r.snapshot_id is not None
    with open(t.metadata_location) as f:
        meta = json.load(f)
    stats = {s["snapshot-id"]: s for s in meta.get("statistics", [])}
    assert r.snapshot_id in stats, stats.keys()
    ndv = {int(b["fields"][0]): int(b["properties"]["ndv"])
           for b in stats[r.snapshot_id]["blob-metadata"]}
    assert ndv == {before.field_ids[c]: n for c, n in before.ndv.items()}
    # A table without statistics gets none.
    u = hdb.Table(tmp_path / "u")
    _history(rng, u, {}, 6, 0)
    u.compact()
    with open(u.metadata_location) as f:
        assert not json.load(f).get("statistics")
