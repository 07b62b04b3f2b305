"""Position delete files merged as they pile up (issue 14): in a v2
merge-on-read table a delete adds one position-delete file per partition it
touches; once a data file has `hyperstream.delete.max-position-files`
(default 4) of them applied, the next change that deletes from it writes one
file restating every position of the files those delete files cover and
removes them in the same commit, so reads never combine more than that many
files per data file. Manifests left with removed entries only drop out of
the next snapshot's list (Iceberg's MergingSnapshotProducer rule).

Oracles: a plain in-memory model of the rows; pyiceberg's StaticTable, which
applies the position deletes itself, at every snapshot; and pyiceberg's scan
plan, whose tasks list the delete files that apply to each data file.
"""

import json
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hyperstreamdb as hdb
from pyiceberg.table import StaticTable

CATS = ["a", "b", "c"]
MAX_PROP = "hyperstream.delete.max-position-files"


def _batch(rng, ids):
    ids = list(ids)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "cat": pa.array([rng.choice(CATS) for _ in ids], pa.string()),
        "v": pa.array([float(rng.randint(0, 100)) for _ in ids], pa.float64()),
    })


def _canon(t):
    return sorted(zip(t["id"].to_pylist(), t["cat"].to_pylist(), t["v"].to_pylist()))


def _model_add(model, b):
    for r in zip(b["id"].to_pylist(), b["cat"].to_pylist(), b["v"].to_pylist()):
        model[r[0]] = r


def _summary(t):
    with open(t.metadata_location) as f:
        meta = json.load(f)
    cur = meta["current-snapshot-id"]
    return next(s for s in meta["snapshots"] if s["snapshot-id"] == cur)["summary"]


def _check(t, model, limit, step):
    want = sorted(model.values())
    assert _canon(t.to_arrow()) == want, f"step {step}: to_arrow"
    assert len(t) == len(want), f"step {step}: len"
    exp = sorted(r for r in want if r[1] == "b")
    assert _canon(t.to_arrow(filter="cat = 'b'")) == exp, f"step {step}: filter"
    st = StaticTable.from_metadata(t.metadata_location)
    scan = st.scan()
    assert _canon(scan.to_arrow()) == want, f"step {step}: pyiceberg"
    for task in scan.plan_files():
        # pyiceberg lists every delete file whose file_path bounds cover the
        # data file; pyarrow reads which of them hold positions for it.
        n = sum(1 for d in task.delete_files
                if task.file.file_path in set(pq.read_table(d.file_path.removeprefix("file://"),
                                                           columns=["file_path"])
                                              ["file_path"].to_pylist()))
        assert n <= limit, f"step {step}: {n} delete files apply to {task.file.file_path}"
    snap = st.current_snapshot()
    if snap is not None:
        for m in snap.manifests(st.io):
            live = (m.added_files_count or 0) + (m.existing_files_count or 0)
            assert live > 0 or m.added_snapshot_id == snap.snapshot_id, \
                f"step {step}: manifest {m.manifest_path} has no live file"


@pytest.mark.parametrize("limit,partitioned", [(1, False), (2, True), (4, False)])
def test_position_deletes_merged_random(tmp_path, limit, partitioned):
    for seed in range(2):
        rng = random.Random(seed * 13 + limit * 5 + partitioned)
        props = {"write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read",
                 "write.merge.mode": "merge-on-read"}
        if limit != 4:
            props[MAX_PROP] = str(limit)
        first = _batch(rng, range(0, 60))
        path = tmp_path / f"t{seed}"
        if partitioned:
            t = hdb.Table.create(path, schema=first.schema, partition_spec=["cat"],
                                 properties=props)
        else:
            t = hdb.Table(path, properties=props)
        model = {}
        t.write(first)
        _model_add(model, first)
        next_id = 60
        history = []
        for step in range(18):
            op = rng.choice(["delete", "delete", "delete", "update", "upsert", "append"])
            if op == "append":
                b = _batch(rng, range(next_id, next_id + rng.randint(10, 40)))
                next_id += b.num_rows
                t.write(b)
                _model_add(model, b)
            elif op == "delete":
                lo = rng.randint(0, next_id)
                hi = lo + rng.randint(0, 12)
                sql = f"id BETWEEN {lo} AND {hi}" if rng.random() < 0.7 else \
                    f"v < {rng.randint(0, 10)}"
                if sql.startswith("id"):
                    gone = [i for i in model if lo <= i <= hi]
                else:
                    lim = int(sql.split("<")[1])
                    gone = [i for i, r in model.items() if r[2] < lim]
                assert t.delete(sql) == len(gone), f"step {step}: {sql}"
                for i in gone:
                    del model[i]
            elif op == "update":
                lo = rng.randint(0, next_id)
                hit = [i for i in model if lo <= i < lo + 5]
                assert t.update({"v": 500.0}, filter=f"id >= {lo} AND id < {lo + 5}") == len(hit)
                for i in hit:
                    model[i] = (i, model[i][1], 500.0)
            else:
                old = rng.sample(sorted(model), min(len(model), rng.randint(0, 6)))
                new = list(range(next_id, next_id + rng.randint(0, 3)))
                next_id += len(new)
                b = _batch(rng, old + new)
                r = t.upsert(b, on="id")
                assert (r.rows_updated, r.rows_inserted) == (len(old), len(new))
                _model_add(model, b)
            _check(t, model, limit, f"{seed}.{step} {op}")
            history.append((t.snapshots()[-1].snapshot_id, sorted(model.values())))
        # Every snapshot reads the same here, in pyiceberg and in the model.
        st = StaticTable.from_metadata(t.metadata_location)
        for sid, want in history:
            assert _canon(t.to_arrow(snapshot_id=sid)) == want, f"snapshot {sid}"
            assert _canon(st.scan(snapshot_id=sid).to_arrow()) == want, f"pyiceberg {sid}"


def test_merge_removes_the_old_files(tmp_path):
    """With the limit at 2, the third delete from one data file merges: the
    snapshot removes both earlier delete files and adds one holding all
    three deletes' positions."""
    rng = random.Random(3)
    t = hdb.Table(tmp_path / "t", properties={MAX_PROP: "2"})
    t.write(_batch(rng, range(100)))
    for k in range(2):
        assert t.delete(f"id = {k}") == 1
    assert t.delete("id = 2") == 1
    s = _summary(t)
    assert s.get("removed-position-delete-files") == "2", s
    assert s.get("added-position-delete-files") == "1", s
    assert s.get("total-delete-files") == "1", s
    assert s.get("total-position-deletes") == "3", s
    assert sorted(t.to_arrow()["id"].to_pylist()) == list(range(3, 100))
    st = StaticTable.from_metadata(t.metadata_location)
    assert sorted(st.scan().to_arrow()["id"].to_pylist()) == list(range(3, 100))
    # A second data file untouched so far gets its own files until it has 2.
    t.write(_batch(rng, range(100, 110)))
    assert t.delete("id = 100") == 1
    assert _summary(t).get("total-delete-files") == "2"


def test_bad_limit_property(tmp_path):
    rng = random.Random(4)
    t = hdb.Table(tmp_path / "t", properties={MAX_PROP: "zero"})
    t.write(_batch(rng, range(10)))
    with pytest.raises(hdb.InvalidArgumentError, match=MAX_PROP):
        t.delete("id = 1")
    assert len(t) == 10


@pytest.mark.parametrize("partitioned", [False, True])
def test_rewrite_position_deletes(tmp_path, partitioned):
    """t.rewrite_position_deletes(): one replace commit merging every data
    file's position delete files (here never merged by the deletes
    themselves: the limit is high); the rows stay, in ours and pyiceberg."""
    rng = random.Random(7 + partitioned)
    props = {MAX_PROP: "1000"}
    first = _batch(rng, range(200))
    if partitioned:
        t = hdb.Table.create(tmp_path / "t", schema=first.schema, partition_spec=["cat"],
                             properties=props)
    else:
        t = hdb.Table(tmp_path / "t", properties=props)
    t.write(first)
    t.write(_batch(rng, range(200, 300)))
    model = {}
    _model_add(model, first)
    _model_add(model, t.to_arrow(filter="id >= 200"))
    for k in range(6):
        lo = rng.randint(0, 290)
        gone = [i for i in model if lo <= i <= lo + 9]
        assert t.delete(f"id BETWEEN {lo} AND {lo + 9}") == len(gone)
        for i in gone:
            del model[i]
    before = int(_summary(t)["total-delete-files"])
    assert before >= 4
    n_snap = len(t.snapshots())
    removed = t.rewrite_position_deletes()
    s = _summary(t)
    assert removed > 0 and removed == int(s["removed-position-delete-files"])
    assert int(s["total-delete-files"]) == before - removed + int(s["added-position-delete-files"])
    if not partitioned:
        assert int(s["total-delete-files"]) == 1
    with open(t.metadata_location) as f:
        meta = json.load(f)
    cur = next(x for x in meta["snapshots"] if x["snapshot-id"] == meta["current-snapshot-id"])
    assert cur["summary"]["operation"] == "replace"
    _check(t, model, 1, "after rewrite")
    assert len(t.snapshots()) == n_snap + 1
    assert t.rewrite_position_deletes() == 0  # nothing left to merge: no commit
    assert len(t.snapshots()) == n_snap + 1


def test_rewrite_position_deletes_v3_refused(tmp_path):
    rng = random.Random(8)
    t = hdb.Table(tmp_path / "t", format_version=3)
    t.write(_batch(rng, range(10)))
    t.delete("id = 1")
    with pytest.raises(hdb.UnsupportedError, match="deletion vector"):
        t.rewrite_position_deletes()
