"""Row changes racing each other (issue 14, "Must show": concurrency).

Three writer processes delete, update, upsert, append (and compact, once
``Table.compact`` exists) the same small table at once, released together by
a start file, in format v2 and v3, merge-on-read and copy-on-write. Each
writer logs every operation with the snapshot its commit made and the counts
it was told, or the error it got. Then (rowchange_replay.py):

* the history is linear: the snapshot log is the current snapshot's parent
  chain and there are no other snapshots;
* every snapshot after the two initial appends is one acknowledged commit,
  and every acknowledged commit is in the chain (none lost, none partial);
* replaying the logged operations serially in chain order on a dict model
  gives, at each commit, the counts the writer was told, and at the end
  exactly the table's rows, by every read path and by pyiceberg;
* every failure is CommitConflictError.

HS_RACE_OPS (default 10) operations per writer; about 10-20 s on 2 cores.
"""

import json
import os
import subprocess
import sys

import pyarrow as pa
import pytest

import hyperstreamdb as hdb

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rowchange_replay as R  # noqa: E402

pytest.importorskip("pyiceberg.table")

WRITERS = 3
OPS = int(os.environ.get("HS_RACE_OPS", "10"))
# Compaction joins the race when the table API has it (issue 14 item 4 is
# landing separately); until then the kinds below leave it out.
HAS_COMPACT = hasattr(hdb.Table, "compact")
KINDS = ["delete", "update", "update", "upsert", "upsert", "append"] + \
    (["compact"] if HAS_COMPACT else [])


def _race(uri, seed):
    go = str(uri) + ".go"
    procs = [subprocess.Popen([sys.executable, "-c", R.WORKER, HERE, str(uri), str(w), str(OPS),
                               str(seed * 100 + w), go, ",".join(KINDS)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for w in range(WRITERS)]
    open(go, "w").close()
    logs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()[-3000:]
        logs.extend(json.loads(line) for line in out.decode().splitlines() if line.startswith("{"))
    return logs


def _check(uri, logs, where):
    t = hdb.Table(uri)
    ids = R.chain(t)
    assert len(ids) >= 2
    by_sid = {}
    conflicts = 0
    for rec in logs:
        if "error" in rec:
            e = rec["error"]
            assert e["type"] == "CommitConflictError", f"{where}: {rec}"
            assert "nothing was committed" in e["message"] or "run the change again" in \
                e["message"], f"{where}: {rec}"
            conflicts += 1
            continue
        sid = rec["res"]["snapshot_id"]
        if sid == -1:
            continue
        assert sid not in by_sid, f"{where}: snapshot {sid} acknowledged twice"
        by_sid[sid] = rec
    unacked = [s for s in ids[2:] if s not in by_sid]
    assert not unacked, f"{where}: snapshots nobody acknowledged: {unacked}"
    lost = [s for s in by_sid if s not in ids]
    assert not lost, f"{where}: acknowledged commits not in the history: {[by_sid[s] for s in lost]}"
    model = R.initial_model()
    for n, sid in enumerate(ids[2:]):
        rec = by_sid[sid]
        R.apply(model, rec["op"], rec["res"], f"{where}: commit {n} (writer {rec['w']} op {rec['k']})")
    R.check_reads(uri, R.canon_model(model), where)
    return len(by_sid), conflicts


@pytest.mark.parametrize("fv,mode", [(2, "merge-on-read"), (3, "merge-on-read"),
                                     (2, "copy-on-write"), (3, "copy-on-write"),
                                     (2, "mixed"), (3, "mixed")])
def test_concurrent_row_changes(tmp_path, fv, mode):
    uri = tmp_path / "t"
    R.make_table(uri, fv, mode)
    logs = _race(uri, fv * 10 + len(mode))
    acked, conflicts = _check(uri, logs, f"v{fv} {mode}")
    assert acked >= WRITERS, f"too few commits to race: {acked}"
    compactions = sum(1 for r in logs if r["op"]["op"] == "compact" and "res" in r
                      and r["res"]["snapshot_id"] != -1)
    print(f"v{fv} {mode}: {acked} commits ({compactions} compactions), {conflicts} "
          f"CommitConflictError, compaction {'in' if HAS_COMPACT else 'not yet in'} the race")


# ------------------------------------------------ one interleaving, made exact
#
# A row change's append stream is read after the change has planned and
# marked its rows and before it commits: a stream whose first batch makes
# another handle commit puts that commit exactly inside the change's window.

def _rows(ids):
    return R.rows_table(ids, [7] * len(ids), [9] * len(ids))


INTERLEAVINGS = [
    # (what the other handle commits, whether our change must conflict)
    ("append ids 1000-1001 (its bounds miss our filter)", lambda o: o.write(_rows([1000, 1001])),
     False),
    ("append id 5 (our filter may match it)", lambda o: o.write(_rows([5])), True),
    ("append id 9 and 1000 (bounds overlap)", lambda o: o.write(_rows([9, 1000])), True),
    ("delete id 3 (a row of the file we delete from)", lambda o: o.delete("id = 3"), True),
    ("delete id 25 (another data file)", lambda o: o.delete("id = 25"), False),
]
if HAS_COMPACT:
    INTERLEAVINGS.append(("compaction rewriting our data file",
                          lambda o: o.compact(target_file_size_bytes=1 << 20), True))


@pytest.mark.parametrize("fv,mode", [(2, "merge-on-read"), (3, "merge-on-read"),
                                     (2, "copy-on-write"), (3, "copy-on-write")])
def test_commit_inside_the_window(tmp_path, fv, mode):
    for n, (what, other_commit, conflict) in enumerate(INTERLEAVINGS):
        uri = str(tmp_path / f"t{n}")
        props = {f"write.{op}.mode": mode for op in ("delete", "update", "merge")}
        t = hdb.Table(uri, format_version=fv, properties=props)
        t.write(_rows(list(range(20))))
        t.write(_rows(list(range(20, 40))))
        other = hdb.Table(uri)
        done = []

        def gen():
            other_commit(other)
            done.append(other.current_snapshot_id)
            yield _rows([500]).to_batches()[0]

        h = t._require()
        h.refresh()
        start = h.current_snapshot_id
        reader = pa.RecordBatchReader.from_batches(R.schema(), gen())
        where = f"v{fv} {mode}, {what}"
        try:  # an update of ids < 10: delete them, append a row (the core's change)
            r = h.change_rows(snapshot_id=start, deletes=["id < 10"], appends=[reader],
                              what="update", mode_property="write.update.mode")
            got = False
        except hdb.CommitConflictError as e:
            got = True
            assert "nothing was committed" in str(e), f"{where}: {e}"
        assert done, f"{where}: the other commit did not run"
        assert got == conflict, f"{where}: {'conflict' if got else 'committed'}, expected " \
                                f"{'a conflict' if conflict else 'a commit'}"
        # the other commit is kept; ours wholly or not at all, on top of it
        t2 = hdb.Table(uri)
        chain = R.chain(t2)
        ids = sorted(t2.to_arrow()["id"].to_pylist())
        after_other = sorted(hdb.Table(uri).to_arrow(snapshot_id=done[0])["id"].to_pylist())
        if got:
            assert chain[-1] == done[0] and ids == after_other, where
        else:
            assert chain[-2:] == [done[0], r["snapshot_id"]], where
            assert ids == sorted([i for i in after_other if i >= 10] + [500]), where
