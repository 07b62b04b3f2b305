"""Row-level commits and concurrent writers (src/table/txn.c), read by pyiceberg.

The C test executable `test_txn` has two driver modes:

* HS_TXN_DRIVER=<dir> HS_TXN_FORMAT=2|3 HS_TXN_SEED=n: a seeded random history
  of appends, deletes (position-delete files in v2; deletion vectors merged with
  the file's live one in v3), whole-file removals and replaces (two files
  compacted into one of their live rows) committed through
  hs_table_commit_row_delta; it prints "snapshot <id> <ids>" with the ids its
  own model says are live after each commit, then "metadata <path>".
* HS_TXN_MODE=race: 4 forked writers each remove or delete a row of every one
  of 12 data files (deciding each on the snapshot they just read) while a fifth
  process appends 10 files; losers get HS_ERR_CONFLICT or retry. It prints
  "final <ids>": the rows a serial order of the commits that succeeded (by the
  writers' logs) leaves.

pyiceberg's StaticTable is the oracle: its scan (which applies position deletes
and deletion vectors) must return exactly the model's rows at every snapshot, its
`inspect` tables must agree with our summaries (total-data-files,
total-delete-files, total-records, total-position-deletes) and operations, and
the race's final table must be the serial outcome.
"""

import os
import subprocess

import pytest

pyiceberg_table = pytest.importorskip("pyiceberg.table")
import hyperstreamdb as hdb  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _exe():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "test_txn")
    if not os.path.exists(path):
        pytest.fail(f"{path} not built (scripts/build.sh release)")
    return path


def _run(env):
    r = subprocess.run([_exe()], capture_output=True, env={**os.environ, **env}, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    snaps, final, meta = [], None, None
    for line in r.stdout.decode().splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "snapshot":
            sid, _, ids = rest.partition(" ")
            snaps.append((int(sid), sorted(int(x) for x in ids.split(",") if x)))
        elif kind == "final":
            final = sorted(int(x) for x in rest.split(",") if x)
        elif kind == "metadata":
            meta = rest
    assert meta is not None
    return snaps, final, meta


def _ids(table, sid):
    return sorted(table.scan(snapshot_id=sid).to_arrow()["id"].to_pylist())


def _entries(table, sid):
    """(manifest, entry) of every entry of the snapshot's manifests, deleted ones too
    (pyiceberg's own manifest readers: inspect.entries() needs column metrics that
    delete files need not carry)."""
    snap = table.metadata.snapshot_by_id(sid)
    out = []
    for m in snap.manifests(table.io):
        for e in m.fetch_manifest_entry(io=table.io, discard_deleted=False):
            out.append((m, e))
    return out


def _live_dv_refs(table, sid):
    """referenced_data_file of the snapshot's live deletion vectors, read from the
    manifests with fastavro (pyiceberg 0.12's DataFile has no v3 fields)."""
    fastavro = pytest.importorskip("fastavro")
    refs = []
    for m in table.metadata.snapshot_by_id(sid).manifests(table.io):
        if m.content.value != 1:
            continue
        with open(m.manifest_path.removeprefix("file:"), "rb") as f:
            for rec in fastavro.reader(f):
                df = rec["data_file"]
                if rec["status"] != 2 and df["file_format"] == "PUFFIN":
                    assert df["referenced_data_file"] is not None
                    assert df["content_offset"] is not None
                    refs.append(df["referenced_data_file"])
    return refs


def _check_summary(table, sid):
    snap = table.metadata.snapshot_by_id(sid)
    summ = snap.summary
    entries = _entries(table, sid)
    live = [e.data_file for _, e in entries if e.status.value != 2]
    data = [f for f in live if f.content.value == 0]
    deletes = [f for f in live if f.content.value != 0]
    assert int(summ["total-data-files"]) == len(data)
    assert int(summ["total-delete-files"]) == len(deletes)
    assert int(summ["total-records"]) == sum(f.record_count for f in data)
    assert int(summ["total-position-deletes"]) == sum(
        f.record_count for f in deletes if f.content.value == 1)
    assert int(summ["total-equality-deletes"]) == 0
    # the entries this snapshot added and deleted are the summary's counts; added
    # ones carry its sequence number (inherited), deleted ones their own older one;
    # delete files sit in delete manifests only
    added = deleted = 0
    for m, e in entries:
        assert (m.content.value == 1) == (e.data_file.content.value != 0)
        if e.snapshot_id != sid:
            continue
        if e.status.value == 1:
            added += 1
            assert e.sequence_number == snap.sequence_number
        elif e.status.value == 2:
            deleted += 1
            assert e.sequence_number < snap.sequence_number

    def get(k):
        v = summ.get(k)
        return int(v) if v is not None else 0

    assert added == get("added-data-files") + get("added-delete-files")
    assert deleted == get("deleted-data-files") + get("removed-delete-files")
    return summ, live


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_pyiceberg_reads_every_row_delta(tmp_path, fmt, seed):
    snaps, _, meta = _run({"HS_TXN_DRIVER": str(tmp_path / "t"), "HS_TXN_FORMAT": str(fmt),
                           "HS_TXN_SEED": str(seed)})
    table = pyiceberg_table.StaticTable.from_metadata(meta)
    assert table.metadata.format_version == fmt
    assert [s.snapshot_id for s in table.metadata.snapshots] == [sid for sid, _ in snaps]
    ops = set()
    prev = None
    for sid, want in snaps:
        assert _ids(table, sid) == want, f"snapshot {sid}"
        summ, live = _check_summary(table, sid)
        op = summ.operation.value
        ops.add(op)
        if op == "replace":  # the same rows in other files
            assert prev is not None and want == prev
        if op == "append":
            assert len(want) > len(prev or [])
        if fmt == 3:  # at most one live deletion vector per data file
            refs = _live_dv_refs(table, sid)
            assert len(refs) == len(set(refs))
            assert len(refs) == sum(1 for f in live if f.file_format.value == "PUFFIN")
        prev = want
    assert "append" in ops and ("delete" in ops or "replace" in ops)


@pytest.mark.parametrize("fmt", [2, 3])
def test_concurrent_writers_end_in_a_serial_state(tmp_path, fmt):
    _, final, meta = _run({"HS_TXN_DRIVER": str(tmp_path / "t"), "HS_TXN_FORMAT": str(fmt),
                           "HS_TXN_MODE": "race"})
    assert final is not None
    table = pyiceberg_table.StaticTable.from_metadata(meta)
    cur = table.metadata.current_snapshot_id
    assert _ids(table, cur) == final
    _check_summary(table, cur)
    # every snapshot's parent is the one before it: one linear history
    snaps = table.metadata.snapshots
    for a, b in zip(snaps, snaps[1:]):
        assert b.parent_snapshot_id == a.snapshot_id
        assert b.sequence_number == a.sequence_number + 1


def test_commit_conflict_error_is_a_hyperstream_error():
    assert issubclass(hdb.CommitConflictError, hdb.HyperStreamError)
    assert hdb.CommitConflictError.__module__ == "hyperstreamdb"
