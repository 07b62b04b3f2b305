"""Table maintenance: remove_orphan_files / `hyperstream remove-orphans` and
expire_snapshots / `hyperstream expire-snapshots`. What they remove is
exactly what nothing reaches, checked against outside oracles.

A table goes through appends, partition evolution, a sort order, scalar index
builds, a re-configured and a dropped index, a rollback, a tag and writers
SIGKILLed inside their commits (HS_TABLE_CRASH_STEP); junk is dropped into its
folders. Then:
* the reachable set is rebuilt independently with pyiceberg (metadata log,
  manifest lists, manifests and every entry's file, for every snapshot) plus
  the index files `explain` reports in use — every file outside it is listed,
  every file inside it is kept;
* every snapshot reads the same rows before and after, by us and by pyiceberg,
  and the remaining index still answers;
* young files, links and files outside data/, index/, metadata/ stay; files
  younger than the 1 hour floor stay unless force=True (`--force`); an
  unreadable manifest stops the call before anything is removed;
* expire_snapshots keeps the current snapshot, tagged ones and the last N,
  deletes exactly the files pyiceberg no longer reaches afterwards (index
  files of vanished data files too), and every kept snapshot reads the same.
About 15 s.
"""

import datetime as dt
import json
import os
import random
import subprocess
import sys

import pyarrow as pa
import pytest

import hyperstreamdb as hdb

static = pytest.importorskip("pyiceberg.table").StaticTable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = pa.schema([("id", pa.int64()), ("cat", pa.string()), ("x", pa.float64())])
ALL = dt.timedelta(0)


def _batch(lo, n, rng):
    return pa.table({"id": pa.array(range(lo, lo + n), pa.int64()),
                     "cat": pa.array([rng.choice(["a", "b", "c", None]) for _ in range(n)]),
                     "x": pa.array([rng.uniform(0, 100) for _ in range(n)])}, schema=SCHEMA)


def _sorted(t):
    return sorted(t.to_pylist(), key=lambda r: r["id"])


def _crashed_write(uri, step, lo):
    """A writer killed at commit step `step`: leaves what it wrote so far."""
    code = ("import sys, pyarrow as pa, hyperstreamdb as hdb\n"
            f"t = hdb.Table({str(uri)!r})\n"
            f"t.write(pa.table({{'id': pa.array(range({lo}, {lo} + 50), pa.int64()),"
            " 'cat': ['z'] * 50, 'x': [1.0] * 50}))\n")
    env = dict(os.environ, HS_TABLE_CRASH_STEP=str(step))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=60)
    assert r.returncode == -9, (step, r.returncode, r.stderr[-2000:])


def _all_files(uri):
    out = set()
    for top in ("data", "index", "metadata"):
        for d, _dirs, names in os.walk(os.path.join(uri, top)):
            out.update(os.path.join(d, n) for n in names
                       if not os.path.islink(os.path.join(d, n)))
    return out


def _local(p):
    return p[len("file://"):] if p.startswith("file://") else p[len("file:"):] \
        if p.startswith("file:") else p


def _reachable_by_pyiceberg(table):
    """Metadata files, manifest lists, manifests and every entry's file of
    every snapshot, as pyiceberg reads them."""
    ice = static.from_metadata(table.metadata_location)
    io = ice.io
    keep = {table.metadata_location}
    keep.update(_local(e.metadata_file) for e in ice.metadata.metadata_log)
    for snap in ice.metadata.snapshots:
        keep.add(_local(snap.manifest_list))
        for m in snap.manifests(io):
            keep.add(_local(m.manifest_path))
            for e in m.fetch_manifest_entry(io, discard_deleted=False):
                keep.add(_local(e.data_file.file_path))
    return {os.path.realpath(p) for p in keep}


def _index_files_in_use(table, data_files=None):
    """The current index registry file and the index files it names (only
    those covering a data file in `data_files`, when given)."""
    props = static.from_metadata(table.metadata_location).metadata.properties
    reg_name = props.get("hyperstream.index-registry")
    if reg_name is None:
        return set(), set()
    reg = _local(reg_name)
    with open(reg) as f:
        entries = json.load(f)["entries"]
    return ({os.path.realpath(reg)},
            {os.path.realpath(_local(e["index-file"])) for e in entries
             if data_files is None or os.path.realpath(_local(e["data-file"])) in data_files})


def _snapshot_rows(table):
    ice = static.from_metadata(table.metadata_location)
    out = {}
    for s in table.snapshots():
        ours = _sorted(table.to_arrow(snapshot_id=s.snapshot_id))
        theirs = _sorted(ice.scan(snapshot_id=s.snapshot_id).to_arrow().cast(SCHEMA))
        assert ours == theirs, s.snapshot_id
        out[s.snapshot_id] = ours
    return out


def _history(tmp_path, seed=7):
    rng = random.Random(seed)
    uri = tmp_path / "t"
    table = hdb.Table(uri)
    lo = 0
    for _ in range(3):
        table.write(_batch(lo, 200, rng))
        lo += 200
    table.add_index("cat", "bitmap", progress=False)
    table.add_index("x", "btree", progress=False)
    table.wait_for_indexes()
    s3 = table.current_snapshot_id
    table.set_partition_spec(["cat"])
    table.write(_batch(lo, 300, rng))
    lo += 300
    table.set_sort_order(["x"])
    table.write(_batch(lo, 150, rng))
    lo += 150
    table.wait_for_indexes()
    table.drop_index("x")                          # its index files become orphans
    table.add_index("cat", "btree", progress=False)  # re-configured: old files orphaned
    table.wait_for_indexes()
    table.create_tag("before-rollback")
    table.rollback_to_snapshot(s3)
    table.write(_batch(lo, 100, rng))
    lo += 100
    table.wait_for_indexes()
    for step in (2, 3, 4):                         # killed inside the commit
        _crashed_write(uri, step, 10_000 + 100 * step)
    junk = [uri / "data" / "junk.parquet", uri / "index" / "junk.puffin",
            uri / "metadata" / "stray.avro", uri / "data" / "cat=zz" / "deep.parquet"]
    for j in junk:
        j.parent.mkdir(parents=True, exist_ok=True)
        j.write_bytes(b"not ours any more")
    return hdb.Table(uri), [str(j) for j in junk]


def test_removes_exactly_the_unreachable(tmp_path):
    table, junk = _history(tmp_path)
    uri = str(tmp_path / "t")
    before_rows = _snapshot_rows(table)
    cat_plan = table.explain("cat = 'b'").stats
    reach = _reachable_by_pyiceberg(table)
    regs, index_files = _index_files_in_use(table)
    assert index_files, "the cat index is registered"
    everything = {os.path.realpath(p) for p in _all_files(uri)}
    hint = os.path.realpath(os.path.join(uri, "metadata", "version-hint.text"))

    listed = {os.path.realpath(p) for p in table.remove_orphan_files(older_than=ALL, dry_run=True,
                                                                      force=True)}
    assert {os.path.realpath(p) for p in _all_files(uri)} == everything  # dry run removed nothing
    assert set(map(os.path.realpath, junk)) <= listed
    # nothing reachable is listed; everything listed is reachable by nobody
    assert not listed & reach
    assert not listed & index_files and not listed & regs and hint not in listed
    unreachable = everything - reach - index_files - {hint}
    # old registries of metadata-log versions are kept on purpose; all else unreachable goes
    kept_registries = {p for p in unreachable - listed if "index-registry-" in p}
    assert unreachable - listed == kept_registries
    # the crashed writers, the dropped and the re-configured index left real files behind
    assert len(listed - set(map(os.path.realpath, junk))) >= 4

    removed = {os.path.realpath(p) for p in table.remove_orphan_files(older_than=ALL, force=True)}
    assert removed == listed
    assert {os.path.realpath(p) for p in _all_files(uri)} == everything - listed
    again = hdb.Table(uri)
    assert _snapshot_rows(again) == before_rows  # ours == pyiceberg's, as before
    after_plan = again.explain("cat = 'b'").stats
    assert after_plan["files_indexed"] == cat_plan["files_indexed"] > 0
    assert after_plan["rows_matched"] == cat_plan["rows_matched"]
    assert again.remove_orphan_files(older_than=ALL, force=True) == []
    n = len(again)
    again.write(_batch(50_000, 10, random.Random(1)))  # still writable
    assert len(again) == n + 10 and len(hdb.Table(uri)) == n + 10


def test_young_files_links_and_outsiders_stay(tmp_path):
    table = hdb.Table(tmp_path / "t")
    table.write(_batch(0, 10, random.Random(2)))
    data = tmp_path / "t" / "data"
    (data / "fresh.parquet").write_bytes(b"x")
    old = data / "old.parquet"
    old.write_bytes(b"y")
    week_ago = (dt.datetime.now() - dt.timedelta(days=7)).timestamp()
    os.utime(old, (week_ago, week_ago))
    outside = tmp_path / "t" / "README.txt"
    outside.write_text("the user's own file")
    os.utime(outside, (week_ago, week_ago))
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    os.symlink(target, data / "link.parquet")
    assert table.remove_orphan_files() == [str(old)]  # default: older than 3 days
    assert not old.exists() and (data / "fresh.parquet").exists()
    assert outside.exists() and target.read_text() == "keep me" and os.path.islink(data / "link.parquet")
    # younger than the floor (1 hour): kept, listed by no dry run, unless forced
    hour = dt.datetime.now() + dt.timedelta(hours=1)
    assert table.remove_orphan_files(older_than=ALL) == []
    assert table.remove_orphan_files(older_than=hour, dry_run=True) == []
    assert (data / "fresh.parquet").exists()
    assert table.remove_orphan_files(older_than=hour, dry_run=True, force=True) == \
        [str(data / "fresh.parquet")]
    assert table.remove_orphan_files(older_than=hour, force=True) == [str(data / "fresh.parquet")]
    # just past the floor: removed without force
    (data / "stale.parquet").write_bytes(b"s")
    past = (dt.datetime.now() - dt.timedelta(minutes=61)).timestamp()
    os.utime(data / "stale.parquet", (past, past))
    assert table.remove_orphan_files(older_than=ALL) == [str(data / "stale.parquet")]
    assert table.to_arrow().num_rows == 10


def test_unreadable_manifest_removes_nothing(tmp_path):
    table = hdb.Table(tmp_path / "t")
    table.write(_batch(0, 10, random.Random(3)))
    table.write(_batch(10, 10, random.Random(4)))
    junk = tmp_path / "t" / "data" / "junk.parquet"
    junk.write_bytes(b"z")
    ice = static.from_metadata(table.metadata_location)
    first = ice.metadata.snapshots[0].manifests(ice.io)[0].manifest_path
    with open(_local(first), "r+b") as f:
        f.truncate(20)
    with pytest.raises(hdb.HyperStreamError) as e:
        table.remove_orphan_files(older_than=ALL, force=True)
    assert os.path.basename(_local(first)) in str(e.value)
    assert junk.exists()
    with pytest.raises(ValueError, match="negative"):
        table.remove_orphan_files(older_than=dt.timedelta(seconds=-1))
    with pytest.raises(TypeError):
        table.remove_orphan_files(older_than=5)


def _exe():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    path = os.path.join(build if os.path.isabs(build) else os.path.join(ROOT, build), "hyperstream")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (set HS_BUILD_DIR)")
    return path


def test_cli(tmp_path):
    table = hdb.Table(tmp_path / "t")
    table.write(_batch(0, 10, random.Random(5)))
    junk = tmp_path / "t" / "index" / "junk.puffin"
    junk.parent.mkdir(exist_ok=True)
    junk.write_bytes(b"12345")

    def run(*args, rc=0):
        r = subprocess.run([_exe(), "remove-orphans", str(tmp_path / "t"), *args],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == rc, (args, r.stdout, r.stderr)
        return r

    # under the 1 h floor without --force: nothing, not even in a dry run
    assert json.loads(run("--older-than", "0s", "--dry-run", "--json").stdout)["files"] == []
    assert "removed 0 orphan files" in run("--older-than", "0s").stdout and junk.exists()
    dry = json.loads(run("--older-than", "0s", "--force", "--dry-run", "--json").stdout)
    assert dry["dry_run"] is True and dry["files_removed"] == 0 and dry["bytes"] == 5
    assert [f["path"] for f in dry["files"]] == [str(junk)] and junk.exists()
    assert "removed 0 orphan files" in run().stdout  # 3 days by default: too young
    out = run("--older-than", "0s", "--force").stdout
    assert str(junk) in out and "removed 1 orphan files, 5 bytes" in out and not junk.exists()
    assert "--older-than expects an age" in run("--older-than", "3 weeks", rc=2).stderr
    assert "missing TABLE" in subprocess.run([_exe(), "remove-orphans"], capture_output=True,
                                             text=True).stderr
    assert table.to_arrow().num_rows == 10


def _reach_all(table):
    reach = _reachable_by_pyiceberg(table)
    regs, index_files = _index_files_in_use(table, reach)
    return reach | regs | index_files


def test_expire_snapshots_vs_pyiceberg(tmp_path):
    rng = random.Random(11)
    uri = tmp_path / "t"
    table = hdb.Table(uri)
    snaps = [table.write(_batch(100 * i, 100, rng)) for i in range(4)]  # s0..s3
    table.add_index("cat", "bitmap", progress=False)
    table.wait_for_indexes()                       # index files for all four data files
    table.create_tag("keep", snaps[1])
    table.rollback_to_snapshot(snaps[1])           # s2, s3 leave the current history
    snaps.append(table.write(_batch(1000, 50, rng)))  # s4 (current)
    table.wait_for_indexes()
    rows = {s: _sorted(table.to_arrow(snapshot_id=s)) for s in snaps}
    before = _reach_all(table)
    everything = {os.path.realpath(p) for p in _all_files(str(uri))}

    dry = table.expire_snapshots(retain_last=1, dry_run=True)
    assert dry.dry_run and sorted(dry.snapshot_ids) == sorted([snaps[0], snaps[2], snaps[3]])
    assert {os.path.realpath(p) for p in _all_files(str(uri))} == everything
    assert [s.snapshot_id for s in table.snapshots()] == snaps

    done = table.expire_snapshots(retain_last=1)
    assert sorted(done.snapshot_ids) == sorted(dry.snapshot_ids)
    assert sorted(done.files_deleted) == sorted(dry.files_deleted)
    again = hdb.Table(uri)
    assert [s.snapshot_id for s in again.snapshots()] == [snaps[1], snaps[4]]
    after = _reach_all(again)
    # deleted == what pyiceberg (and the registry) reached before and not after
    assert {os.path.realpath(p) for p in done.files_deleted} == before - after
    gone_data = {p for p in before - after if p.endswith(".parquet")}
    assert len(gone_data) == 2  # s2's and s3's data files
    assert any(p.endswith(".puffin") for p in before - after)  # their index files
    assert all(not os.path.exists(p) for p in done.files_deleted)
    assert {os.path.realpath(p) for p in _all_files(str(uri))} >= after
    for s in (snaps[1], snaps[4]):  # kept snapshots read the same, ours and pyiceberg's
        assert _sorted(again.to_arrow(snapshot_id=s)) == rows[s]
    _snapshot_rows(again)
    with pytest.raises(hdb.NotFoundError):
        again.to_arrow(snapshot_id=snaps[2])
    assert again.to_arrow(ref="keep").num_rows == 200
    plan = again.explain("cat = 'a'").stats
    assert plan["files_indexed"] == plan["files_read"] == 3
    # the snapshot log loses the expired snapshots' entries: s1, rollback to s1, s4
    assert [h.snapshot_id for h in again.history()] == [snaps[1], snaps[1], snaps[4]]
    # nothing left to expire; the orphan sweep finds nothing either
    assert again.expire_snapshots(retain_last=1).snapshot_ids == []
    assert [p for p in again.remove_orphan_files(older_than=ALL, force=True)
            if "index-registry-" not in p] == []


def test_expire_defaults_and_errors(tmp_path):
    table = hdb.Table(tmp_path / "t")
    ids = [table.write(_batch(i, 1, random.Random(i))) for i in range(3)]
    assert table.expire_snapshots().snapshot_ids == []      # 5 days by default: all too young
    r = table.expire_snapshots(older_than=dt.timedelta(0))  # keep the last 1
    assert r.snapshot_ids == ids[:2] and len(table) == 3 and "expired 2 snapshots" in repr(r)
    with pytest.raises(ValueError, match="retain_last"):
        table.expire_snapshots(retain_last=0)


def test_expire_cli(tmp_path):
    table = hdb.Table(tmp_path / "t")
    ids = [table.write(_batch(i, 1, random.Random(i))) for i in range(4)]

    def run(*args, rc=0):
        r = subprocess.run([_exe(), "expire-snapshots", str(tmp_path / "t"), *args],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == rc, (args, r.stdout, r.stderr)
        return r

    dry = json.loads(run("--older-than", "0s", "--retain-last", "2", "--dry-run", "--json").stdout)
    assert dry["dry_run"] is True and dry["snapshots_expired"] == ids[:2]
    assert len(dry["files_deleted"]) == 2  # the two manifest lists
    assert "expired 0 snapshots" in run().stdout  # 5 days by default
    out = run("--older-than", "0s", "--retain-last", "2").stdout
    assert "expired 2 snapshots; deleted 2 files" in out
    assert [s.snapshot_id for s in hdb.Table(tmp_path / "t").snapshots()] == ids[2:]
    assert "--retain-last expects a count" in run("--retain-last", "0", rc=2).stderr
