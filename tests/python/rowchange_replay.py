"""Shared by test_row_changes_race.py and test_row_changes_crash.py: row
changes whose effect can be replayed from a log, the worker that runs them,
and the checks of a table against the serial replay of its commits.

Table shape: ``id int64, v int64, w int32``; ids are unique by construction
(an upsert replaces a row with the same id). Operations (JSON):

* ``{"op": "delete", "lo", "hi"}``: ``DELETE WHERE id >= lo AND id < hi``;
* ``{"op": "update", "lo", "hi", "val", "w"}``: ``SET v = val, w = w`` on
  the same range (``val`` is unique to the writer and step);
* ``{"op": "upsert", "ids", "vals", "w"}``: rows ``(id, val, w)`` upserted
  on ``id``;
* ``{"op": "append", "ids", "vals", "w"}``: a plain append of new ids
  (unique to the writer and step, in the range deletes and updates reach);
* ``{"op": "compact"}``: a compaction (changes no row).

The replay walks the table's snapshot chain from its first snapshot, applies
the logged operation of each snapshot to a dict model, and checks the counts
the writer was told at its commit against the model's counts at that point
in the chain: a commit that was decided on a stale state and not refused
shows up as a count that differs, or as a final row set that differs.
"""

import pyarrow as pa

import hyperstreamdb as hdb

KEYS = 48  # ids of the first append: 0..KEYS-1 (upserts also add KEYS..KEYS+15)
APPEND_BASE = KEYS + 16  # appends add ids from here: APPEND_BASE + (k * 8 + w) * 2 + j
REACH = APPEND_BASE + 48  # delete and update ranges start below this


def schema():
    return pa.schema([("id", pa.int64()), ("v", pa.int64()), ("w", pa.int32())])


def rows_table(ids, vals, ws):
    return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array(vals, pa.int64()),
                     "w": pa.array(ws, pa.int32())}, schema=schema())


def make_table(uri, fv, mode):
    if mode == "mixed":  # deletes merge-on-read, updates and merges copy-on-write
        props = {"write.delete.mode": "merge-on-read", "write.update.mode": "copy-on-write",
                 "write.merge.mode": "copy-on-write"}
    else:
        props = {f"write.{op}.mode": mode for op in ("delete", "update", "merge")}
    t = hdb.Table(uri, format_version=fv, properties=props)
    # two appends, so that changes touch more than one data file
    half = KEYS // 2
    t.write(rows_table(list(range(half)), [0] * half, [-1] * half))
    t.write(rows_table(list(range(half, KEYS)), [0] * (KEYS - half), [-1] * (KEYS - half)))
    return t


def initial_model():
    return {i: (0, -1) for i in range(KEYS)}


def random_op(rng, w, k, kinds):
    kind = rng.choice(kinds)
    if kind == "delete":
        lo = rng.randrange(0, REACH)
        return {"op": "delete", "lo": lo, "hi": lo + rng.randint(1, 3)}
    if kind == "update":
        lo = rng.randrange(0, REACH)
        return {"op": "update", "lo": lo, "hi": lo + rng.randint(1, 6),
                "val": (w + 1) * 1_000_000 + k, "w": w}
    if kind == "upsert":
        ids = rng.sample(range(KEYS + 16), rng.randint(1, 4))
        return {"op": "upsert", "ids": ids,
                "vals": [(w + 1) * 1_000_000 + k * 10 + j for j in range(len(ids))], "w": w}
    if kind == "append":
        ids = [APPEND_BASE + (k * 8 + w) * 2 + j for j in range(2)]
        return {"op": "append", "ids": ids, "vals": [(w + 1) * 1_000_000 + k] * 2, "w": w}
    return {"op": "compact"}


def range_filter(op):
    return f"id >= {op['lo']} AND id < {op['hi']}"


# ------------------------------------------------------------------ running

_captured = []


def _capture_commits():
    """Record what each row change's commit returned (its snapshot id): the
    public methods return counts only, the snapshot is in the core's answer."""
    from hyperstreamdb import _changes

    orig = _changes.ChangeMethods._change

    def wrapped(self, what, mode, make):
        r = orig(self, what, mode, make)
        _captured.append(dict(r))
        return r

    _changes.ChangeMethods._change = wrapped


def run_op(t, op):
    """Run `op`; the result record (without the error case)."""
    _captured.clear()
    if op["op"] == "delete":
        n = t.delete(range_filter(op))
        res = {"rows_deleted": n}
    elif op["op"] == "update":
        n = t.update({"v": op["val"], "w": op["w"]}, filter=range_filter(op))
        res = {"rows_updated": n}
    elif op["op"] == "upsert":
        r = t.upsert(rows_table(op["ids"], op["vals"], [op["w"]] * len(op["ids"])), on="id")
        res = {"rows_updated": r.rows_updated, "rows_inserted": r.rows_inserted}
    elif op["op"] == "append":
        sid = t.write(rows_table(op["ids"], op["vals"], [op["w"]] * len(op["ids"])))
        return {"snapshot_id": -1 if sid is None else sid}
    elif op["op"] == "compact":
        r = t.compact(target_file_size_bytes=1 << 20)
        return {"compacted": repr(r), "snapshot_id": -1 if r.snapshot_id is None else r.snapshot_id}
    else:
        raise AssertionError(op)
    sids = [c["snapshot_id"] for c in _captured if c.get("snapshot_id", -1) not in (None, -1)]
    res["snapshot_id"] = sids[-1] if sids else -1
    return res


WORKER = r'''
import json, os, random, sys, time
sys.path.insert(0, sys.argv[1])
import rowchange_replay as R
import hyperstreamdb as hdb
uri, w, n_ops, seed, go = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
kinds = sys.argv[7].split(",")
R._capture_commits()
rng = random.Random(seed)
t = hdb.Table(uri)
log = []
while not os.path.exists(go):
    time.sleep(0.002)
for k in range(n_ops):
    op = R.random_op(rng, w, k, kinds)
    rec = {"w": w, "k": k, "op": op}
    try:
        rec["res"] = R.run_op(t, op)
    except Exception as e:
        rec["error"] = {"type": type(e).__name__, "message": str(e)[:800]}
    log.append(rec)
    # flushed per operation: a killed writer's log holds what was acknowledged
    print(json.dumps(rec), flush=True)
'''


# ------------------------------------------------------------------ checking

def chain(t):
    """The snapshot ids of the current snapshot's ancestry, oldest first,
    checked linear: the snapshot log (history) is exactly that chain."""
    snaps = {s.snapshot_id: s for s in t.snapshots()}
    out = []
    sid = t.current_snapshot_id
    while sid is not None:
        out.append(sid)
        sid = snaps[sid].parent_snapshot_id
        assert len(out) <= len(snaps), "parents form a cycle"
    out.reverse()
    hist = [h.snapshot_id for h in t.history()]
    assert hist == out, f"snapshot log {hist} is not the parent chain {out}"
    assert sorted(snaps) == sorted(out), \
        f"snapshots off the main line: {sorted(set(snaps) - set(out))}"
    return out


def apply(model, op, res, where):
    """Apply `op` to `model`; assert the counts `res` the writer was told
    (None: a commit whose answer was never seen: a crash)."""
    if op["op"] == "delete":
        hit = [i for i in model if op["lo"] <= i < op["hi"]]
        for i in hit:
            del model[i]
        if res is not None:
            assert res["rows_deleted"] == len(hit), f"{where}: {op} deleted {res} (replay {len(hit)})"
    elif op["op"] == "update":
        hit = [i for i in model if op["lo"] <= i < op["hi"]]
        for i in hit:
            model[i] = (op["val"], op["w"])
        if res is not None:
            assert res["rows_updated"] == len(hit), f"{where}: {op} updated {res} (replay {len(hit)})"
    elif op["op"] == "append":
        for i, v in zip(op["ids"], op["vals"]):
            assert i not in model, f"{where}: append of id {i} twice"
            model[i] = (v, op["w"])
    elif op["op"] == "upsert":
        upd = sum(1 for i in op["ids"] if i in model)
        for i, v in zip(op["ids"], op["vals"]):
            model[i] = (v, op["w"])
        if res is not None:
            got = (res["rows_updated"], res["rows_inserted"])
            assert got == (upd, len(op["ids"]) - upd), \
                f"{where}: {op} told {got} (replay {(upd, len(op['ids']) - upd)})"


def canon_model(model):
    return sorted((i, v, w) for i, (v, w) in model.items())


def canon(tbl):
    tbl = tbl.select(["id", "v", "w"])
    return sorted(zip(tbl["id"].to_pylist(), tbl["v"].to_pylist(), tbl["w"].to_pylist()))


def check_reads(uri, want, where, pyiceberg=True):
    """Every read path of the table at its current snapshot equals `want`."""
    t = hdb.Table(uri)
    got = canon(t.to_arrow())
    assert got == want, f"{where}: to_arrow: {len(got)} rows, replay {len(want)}; " \
                        f"extra {sorted(set(got) - set(want))[:6]} missing {sorted(set(want) - set(got))[:6]}"
    ids = [r[0] for r in got]
    assert len(ids) == len(set(ids)), f"{where}: an id twice"
    assert len(t) == len(want), f"{where}: len {len(t)} != {len(want)}"
    st = pa.Table.from_batches(list(t.to_arrow_stream()), schema=t.schema) \
        if len(want) else None
    if st is not None:
        assert canon(st) == want, f"{where}: to_arrow_stream differs"
    f = "id >= 10 AND id < 30"
    assert canon(t.to_arrow(filter=f)) == [r for r in want if 10 <= r[0] < 30], \
        f"{where}: filter {f!r} differs"
    assert canon(t.query().filter("w >= 0").execute()) == [r for r in want if r[2] >= 0], \
        f"{where}: query().filter differs"
    if pyiceberg:
        from pyiceberg.table import StaticTable
        theirs = canon(StaticTable.from_metadata(t.metadata_location).scan().to_arrow())
        assert theirs == want, f"{where}: pyiceberg reads {len(theirs)} rows, replay {len(want)}"
