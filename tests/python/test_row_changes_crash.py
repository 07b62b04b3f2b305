"""Row changes killed mid-commit (issue 14, "Must show": crashes).

A writer deleting, updating, upserting or compacting (format v2 and v3, merge-on-read
and copy-on-write) is SIGKILLed either by the core's crash hook
(``HS_TABLE_CRASH_STEP=N``: the N-th ``hs_table_crash_point()`` of the
process raises SIGKILL; src/table/README.md) or from outside after a random
0-250 ms. Writers are forked from a helper process that imported the package
once (a fresh interpreter per run would cost 0.4 s). Each writer logs an
operation before it starts and its result once acknowledged (unbuffered, so
the log survives the kill). After each kill:

* the history is linear and holds every acknowledged commit in order, plus
  at most the one in flight (committed but not yet acknowledged);
* the table reads (to_arrow, to_arrow_stream, filters, query, len, and
  pyiceberg every few runs) exactly the serial replay of those commits:
  the in-flight change wholly or not at all;
* ``remove_orphan_files(force=True)`` then removes what the dead writer left
  (a dry run after it finds nothing) and the table reads the same.

HS_CRASH_RUNS runs (default 100: about 35-50 s on 2 busy cores).
"""

import datetime as dt
import json
import os
import random
import subprocess
import sys

import pytest

import hyperstreamdb as hdb

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rowchange_replay as R  # noqa: E402

pytest.importorskip("pyiceberg.table")

RUNS = int(os.environ.get("HS_CRASH_RUNS", "100"))
CONFIGS = [(2, "merge-on-read"), (3, "merge-on-read"), (2, "copy-on-write"),
           (3, "copy-on-write")]
KINDS = ["delete", "update", "upsert", "compact"]

_FORKER = r'''
import json, os, random, signal, sys, time
sys.path.insert(0, sys.argv[1])
import rowchange_replay as R
import hyperstreamdb as hdb
R._capture_commits()
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            if job["step"]:
                os.environ["HS_TABLE_CRASH_STEP"] = str(job["step"])
            fd = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            t = hdb.Table(job["uri"])
            for k, op in enumerate(job["ops"]):
                os.write(fd, (json.dumps({"k": k, "start": op}) + "\n").encode())
                try:
                    res = R.run_op(t, op)
                    os.write(fd, (json.dumps({"k": k, "res": res}) + "\n").encode())
                except Exception as e:
                    os.write(fd, (json.dumps({"k": k, "error": type(e).__name__ + ": " + str(e)[:600]}) + "\n").encode())
            os._exit(0)
        except BaseException:
            os._exit(3)
    if job["kill_ms"] is not None:
        time.sleep(job["kill_ms"] / 1000.0)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"killed": os.WIFSIGNALED(status), "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None}), flush=True)
'''


def _ops(rng, kind, w):
    """The kind under test first, then two more of any kind (so deletes do
    not empty the table and upserts do not only grow it)."""
    return [R.random_op(rng, w, 0, [kind])] + [R.random_op(rng, w, k, KINDS) for k in (1, 2)]


class Forker:
    def __init__(self):
        self.p = subprocess.Popen([sys.executable, "-c", _FORKER, HERE], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def run(self, job):
        self.p.stdin.write(json.dumps(job) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        assert line, "the forking helper died"
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def _read_log(path):
    if not os.path.exists(path):
        return {}, {}, {}
    starts, acks, errors = {}, {}, {}
    with open(path) as f:
        for line in f:
            if not line.endswith("\n"):
                break  # a record cut by the kill
            rec = json.loads(line)
            if "start" in rec:
                starts[rec["k"]] = rec["start"]
            elif "res" in rec:
                acks[rec["k"]] = rec["res"]
            else:
                errors[rec["k"]] = rec["error"]
    return starts, acks, errors


def test_crash_during_row_changes(tmp_path):
    forker = Forker()
    rng = random.Random(1414)
    tables = {}
    stats = {"killed": 0, "hook": 0, "external": 0, "in_flight_committed": 0,
             "orphans_removed": 0, "acked": 0}
    try:
        for run in range(RUNS):
            fv, mode = CONFIGS[run % len(CONFIGS)]
            kind = KINDS[(run // len(CONFIGS)) % len(KINDS)]
            key = (fv, mode)
            where = f"run {run} (v{fv} {mode}, {kind})"
            if key not in tables:
                uri = tmp_path / f"t{fv}-{mode}"
                R.make_table(uri, fv, mode)
                t0 = hdb.Table(uri)
                tables[key] = {"uri": uri, "model": R.initial_model(), "chain": R.chain(t0)}
            st = tables[key]
            uri = st["uri"]
            hook = rng.random() < 0.6
            job = {"uri": str(uri), "ops": _ops(rng, kind, run), "log": str(tmp_path / f"log{run}"),
                   "step": rng.randint(1, 30) if hook else None,
                   "kill_ms": None if hook else rng.uniform(0, 250)}
            out = forker.run(job)
            assert out["code"] in (None, 0), f"{where}: the writer failed outside the kill: {out}"
            stats["killed"] += out["killed"]
            stats["hook" if hook else "external"] += out["killed"]
            starts, acks, errors = _read_log(job["log"])
            assert not errors, f"{where}: {errors}"

            # The chain extends the old one by the acknowledged commits, in
            # order, and at most the in-flight one.
            t = hdb.Table(uri)
            chain = R.chain(t)
            old = st["chain"]
            assert chain[:len(old)] == old, f"{where}: history rewritten"
            new = chain[len(old):]
            model = st["model"]
            i = 0
            for k in sorted(starts):
                op = starts[k]
                if k in acks:
                    sid = acks[k]["snapshot_id"]
                    if sid == -1:
                        R.apply(model, op, acks[k], f"{where} op {k}")  # nothing matched
                        continue
                    assert i < len(new) and new[i] == sid, \
                        f"{where}: acknowledged snapshot {sid} of op {k} not next in {new[i:]}"
                    R.apply(model, op, acks[k], f"{where} op {k}")
                    i += 1
                    stats["acked"] += 1
                else:  # in flight when killed: committed wholly or not at all
                    if i < len(new):
                        R.apply(model, op, None, f"{where} op {k} (in flight)")
                        i += 1
                        stats["in_flight_committed"] += 1
            assert i == len(new), f"{where}: snapshots nobody made: {new[i:]}"
            want = R.canon_model(model)
            R.check_reads(uri, want, where, pyiceberg=run % 5 == 0)

            removed = t.remove_orphan_files(older_than=dt.timedelta(0), force=True)
            stats["orphans_removed"] += len(removed)
            assert hdb.Table(uri).remove_orphan_files(older_than=dt.timedelta(0), force=True,
                                                      dry_run=True) == [], where
            R.check_reads(uri, want, where + " after remove_orphan_files", pyiceberg=run % 5 == 0)
            st["chain"] = chain
        for key, st in tables.items():
            R.check_reads(st["uri"], R.canon_model(st["model"]), f"final v{key[0]} {key[1]}")
    finally:
        forker.close()
    print(RUNS, "runs:", stats)
    assert stats["killed"] >= RUNS // 4, f"too few kills to mean anything: {stats}"
    assert stats["hook"] > 0 and stats["external"] > 0, stats
