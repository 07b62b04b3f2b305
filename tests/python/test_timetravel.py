"""Time travel agrees with pyiceberg, both ways.

(a) We write: the C driver `test_timetravel` (HS_TT_SCRIPT mode) runs a
    seeded random script of appends, tags, branches and rollbacks (some
    rollbacks deliberately onto non-ancestors, which must fail) on a new
    table, then dumps every snapshot's scan to Parquet, the history, the
    refs and our "as of" answers around every snapshot-log entry.
    pyiceberg's StaticTable.from_metadata must see the same current
    snapshot, refs and history (inspect.history()), resolve every "as of"
    time to the same snapshot (snapshot_as_of_timestamp), and return
    exactly our rows at every snapshot; a Python model of the script
    predicts the rows and the rollback outcomes independently.
(b) We read: pyiceberg writes tables through a SQL catalog on SQLite
    (metadata named 00000-<uuid>.metadata.json, no version hint): appends,
    overwrites and deletes (snapshots with deleted manifest entries),
    identity-partitioned (string and date) or not, with date, timestamp,
    decimal and list columns, tags and a rollback; format v2 and v1 (read
    only). hs_table_open on the
    folder (HS_TT_READ mode) must find the latest metadata, and our scan of
    every snapshot must equal pyiceberg's scan(snapshot_id=...); opening an
    older metadata file by name (hs_table_open_metadata) gives that
    version.
"""

import datetime as dt
import os
import random
from decimal import Decimal
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("pyiceberg")
from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402
from pyiceberg.expressions import EqualTo, GreaterThanOrEqual, LessThan  # noqa: E402
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.table import StaticTable  # noqa: E402
from pyiceberg.transforms import IdentityTransform  # noqa: E402
from pyiceberg.types import (  # noqa: E402
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _exe():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "test_timetravel")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (set HS_BUILD_DIR)")
    return path


def _run(env):
    r = subprocess.run([_exe()], capture_output=True, env={**os.environ, **env}, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    out = {"ops": [], "snapshots": [], "history": [], "refs": {}, "asof": [], "scanerror": []}
    for line in r.stdout.decode().splitlines():
        kind, _, rest = line.partition(" ")
        f = rest.split(" ")
        if kind == "op":
            out["ops"].append((int(f[0]), f[1], " ".join(f[2:])))
        elif kind in ("metadata", "current"):
            out[kind] = rest if kind == "metadata" else int(rest)
        elif kind == "snapshot":
            out["snapshots"].append(tuple(int(x) for x in f))
        elif kind == "history":
            out["history"].append(tuple(int(x) for x in f))
        elif kind == "ref":
            out["refs"][f[0]] = (int(f[1]), f[2])
        elif kind == "asof":
            out["asof"].append((int(f[0]), int(f[1])))
        elif kind == "readonly":
            out["readonly"] = rest == "1"
        elif kind == "scanerror":
            out["scanerror"].append(rest)
    return out


def _key(row):
    return tuple((v is None, v) for _, v in sorted(row.items()))


def _rows(table):
    return sorted(table.to_pylist(), key=_key)


def _check_against_pyiceberg(tbl, ours, out_dir):
    """pyiceberg's view of `tbl` must equal what our driver printed."""
    md = tbl.metadata
    assert ours["scanerror"] == []
    assert md.current_snapshot_id == (ours["current"] if ours["current"] != -1 else None)
    assert [s.snapshot_id for s in md.snapshots] == [s[0] for s in ours["snapshots"]]
    for sid, parent, ts, _ in ours["snapshots"]:
        snap = md.snapshot_by_id(sid)
        assert snap.timestamp_ms == ts
        assert (snap.parent_snapshot_id or -1) == parent
    assert {k: (v.snapshot_id, str(v.snapshot_ref_type)) for k, v in md.refs.items()} == ours["refs"]
    history = tbl.inspect.history()
    made_ms = history.column("made_current_at").cast(pa.int64()).to_pylist()  # no time zones
    hist = history.to_pylist()
    assert [
        (
            ms,
            h["snapshot_id"],
            -1 if h["parent_id"] is None else h["parent_id"],
            int(h["is_current_ancestor"]),
        )
        for ms, h in zip(made_ms, hist)
    ] == ours["history"]
    for at, sid in ours["asof"]:
        snap = tbl.snapshot_as_of_timestamp(at)
        assert (snap.snapshot_id if snap else -1) == sid, at
    rows = {}
    for sid, *_ in ours["snapshots"]:
        theirs = _rows(tbl.scan(snapshot_id=sid).to_arrow())
        mine = _rows(pq.read_table(os.path.join(out_dir, f"{sid}.parquet")))
        assert mine == theirs, sid
        rows[sid] = mine
    if md.current_snapshot_id is not None:
        assert _rows(tbl.scan().to_arrow()) == rows[md.current_snapshot_id]
    return rows


# --------------------------------------------------- (a) we write, pyiceberg reads


def _script(rng):
    """A random script and the model's expectations: per op, whether it
    succeeds, and per appended snapshot index the ids it holds."""
    ops, expect = [], []
    parents, ids, cur, next_id, names = [], [], None, 0, []
    for step in range(rng.randint(10, 16)):
        if step and rng.random() < 0.8:
            ops.append(f"sleep {rng.randint(1, 3)}")
            expect.append(True)
        choice = "append" if not parents else rng.choice(["append"] * 4 + ["rollback"] * 3 + ["tag", "branch"])
        if choice == "append":
            n = rng.randint(1, 40)
            ops.append(f"append {n}")
            expect.append(True)
            parents.append(cur)
            ids.append((ids[cur] if cur is not None else []) + list(range(next_id, next_id + n)))
            next_id += n
            cur = len(parents) - 1
        elif choice == "rollback":
            k = rng.randrange(len(parents))
            anc, a = set(), cur
            while a is not None:
                anc.add(a)
                a = parents[a]
            ops.append(f"rollback {k}")
            expect.append(k in anc)
            if k in anc:
                cur = k
        else:
            dup = names and rng.random() < 0.2
            name = rng.choice(names) if dup else f"{choice}{len(names)}"
            ops.append(f"{choice} {name} {rng.randrange(-1, len(parents))}")
            expect.append(not dup and name != "main")
            if not dup:
                names.append(name)
    return ops, expect, ids, cur


@pytest.mark.parametrize("fmt,seed", [(2, 1), (2, 2), (2, 5), (3, 3), (3, 4), (3, 6)])
def test_pyiceberg_agrees_with_our_time_travel(tmp_path, fmt, seed):
    rng = random.Random(seed)
    ops, expect, ids, cur = _script(rng)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    ours = _run(
        {
            "HS_TT_SCRIPT": ";".join(ops),
            "HS_TT_TABLE": str(tmp_path / "t"),
            "HS_TT_FORMAT": str(fmt),
            "HS_TT_OUT": str(out_dir),
        }
    )
    assert [ok == "ok" for _, ok, _ in ours["ops"]] == expect, (ops, ours["ops"])
    for (_, ok, msg), op in zip(ours["ops"], ops):
        if ok == "err" and op.startswith("rollback"):
            assert msg.startswith("1 ") and "not an ancestor" in msg  # HS_ERR_INVALID_ARG
    appended = [int(m) for (_, ok, m), op in zip(ours["ops"], ops) if op.startswith("append")]
    assert ours["current"] == appended[cur]

    tbl = StaticTable.from_metadata(ours["metadata"])
    assert tbl.metadata.format_version == fmt
    rows = _check_against_pyiceberg(tbl, ours, out_dir)
    for k, sid in enumerate(appended):
        assert [r["id"] for r in rows[sid]] == sorted(ids[k])
        assert all(r["name"] == (None if r["id"] % 5 == 0 else f"r{r['id']}") for r in rows[sid])


def test_rollback_is_seen_by_pyiceberg_and_errors(tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    script = "append 5;sleep 2;append 6;sleep 2;tag v1 1;append 7;sleep 2;rollback 0;rollback 2;tag v1 0"
    ours = _run({"HS_TT_SCRIPT": script, "HS_TT_TABLE": str(tmp_path / "t"), "HS_TT_OUT": str(out_dir)})
    res = ours["ops"]
    assert [r[1] for r in res] == ["ok"] * 8 + ["err", "err"]
    assert res[8][2].startswith("1 ") and "not an ancestor of the current snapshot" in res[8][2]
    assert res[9][2].startswith("1 ") and "already exists" in res[9][2]
    s0, s1, s2 = (int(res[i][2]) for i in (0, 2, 5))
    tbl = StaticTable.from_metadata(ours["metadata"])
    assert tbl.metadata.current_snapshot_id == s0 == ours["current"]
    assert tbl.metadata.refs["main"].snapshot_id == s0
    assert tbl.metadata.refs["v1"].snapshot_id == s1
    assert len(tbl.metadata.snapshot_log) == 4
    assert tbl.scan().to_arrow().num_rows == 5
    assert tbl.scan(snapshot_id=s2).to_arrow().num_rows == 18
    # The time just before the rollback still reads s2, in both readers.
    before = tbl.metadata.snapshot_log[-1].timestamp_ms - 1
    if tbl.metadata.snapshot_log[-2].timestamp_ms <= before:
        assert tbl.snapshot_as_of_timestamp(before).snapshot_id == s2
        assert (before, s2) in ours["asof"]
    _check_against_pyiceberg(tbl, ours, out_dir)


# ------------------------------------------------------ (b) pyiceberg writes, we read


def _pyiceberg_table(tmp_path, partitioned, seed, fmt):
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "cat", StringType(), required=False),
        NestedField(3, "score", DoubleType(), required=False),
        NestedField(4, "day", DateType(), required=False),
        NestedField(5, "at", TimestampType(), required=False),
        NestedField(6, "price", DecimalType(10, 2), required=False),
        NestedField(7, "tags", ListType(8, IntegerType(), element_required=False), required=False),
    )
    spec = (
        PartitionSpec(
            PartitionField(2, 1000, IdentityTransform(), "cat"),
            PartitionField(4, 1001, IdentityTransform(), "day"),
        )
        if partitioned
        else PartitionSpec()
    )
    tbl = cat.create_table("ns.t", schema=schema, partition_spec=spec, properties={"format-version": str(fmt)})
    rng = random.Random(seed)
    next_id = 0
    day0 = dt.date(2024, 1, 1)

    def batch(n):
        nonlocal next_id
        t = pa.table(
            {
                "id": pa.array(range(next_id, next_id + n), pa.int64()),
                "cat": pa.array([rng.choice(["a", "b", "c", None]) for _ in range(n)], pa.string()),
                "score": pa.array([rng.choice([None, rng.random()]) for _ in range(n)], pa.float64()),
                "day": pa.array([rng.choice([None, day0, day0 + dt.timedelta(days=40)]) for _ in range(n)]),
                "at": pa.array(
                    [dt.datetime(2024, 3, 1) + dt.timedelta(microseconds=rng.randrange(10**12)) for _ in range(n)],
                    pa.timestamp("us"),
                ),
                "price": pa.array([Decimal(rng.randrange(-10**6, 10**6)) / 100 for _ in range(n)], pa.decimal128(10, 2)),
                "tags": pa.array(
                    [rng.choice([None, [], [rng.randrange(100) for _ in range(rng.randrange(4))]]) for _ in range(n)],
                    pa.list_(pa.int32()),
                ),
            }
        )
        next_id += n
        return t

    tbl.append(batch(30))
    tbl.append(batch(20))
    tag_at = tbl.current_snapshot().snapshot_id
    tbl.manage_snapshots().create_tag(tag_at, "t1").commit()
    tbl.overwrite(batch(10), overwrite_filter=LessThan("id", 15))
    tbl.delete(EqualTo("cat", "b"))
    tbl.append(batch(25))
    tbl.delete(GreaterThanOrEqual("id", 70))
    back_to = tbl.current_snapshot().parent_snapshot_id
    tbl.manage_snapshots().rollback_to_snapshot(back_to).commit()
    return cat.load_table("ns.t"), tag_at


@pytest.mark.parametrize("partitioned,seed,fmt", [(False, 10, 2), (True, 11, 2), (True, 12, 1)])
def test_we_read_pyiceberg_tables_at_every_snapshot(tmp_path, partitioned, seed, fmt):
    tbl, tag_at = _pyiceberg_table(tmp_path, partitioned, seed, fmt)
    assert tbl.metadata.format_version == fmt
    folder = tbl.metadata.location.removeprefix("file://")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    ours = _run({"HS_TT_READ": folder, "HS_TT_OUT": str(out_dir)})
    assert ours["metadata"] == tbl.metadata_location.removeprefix("file://")
    assert ours["refs"]["t1"] == (tag_at, "tag")
    assert ours["readonly"]  # the catalog owns this table
    ops = [s.summary.operation.value for s in tbl.metadata.snapshots]
    assert "overwrite" in ops  # rewritten files: entries with status DELETED
    if partitioned:
        assert "delete" in ops  # cat = 'b' drops whole partitions' files
    _check_against_pyiceberg(tbl, ours, out_dir)

    # An older metadata file by name: that version, read-only.
    md_dir = os.path.join(folder, "metadata")
    older = sorted(n for n in os.listdir(md_dir) if n.endswith(".metadata.json"))[3]
    old_dir = tmp_path / "old"
    old_dir.mkdir()
    old = _run({"HS_TT_READ": os.path.join(md_dir, older), "HS_TT_OUT": str(old_dir)})
    st = StaticTable.from_metadata(os.path.join(md_dir, older))
    assert old["current"] == st.metadata.current_snapshot_id
    assert old["readonly"]
    _check_against_pyiceberg(st, old, old_dir)
