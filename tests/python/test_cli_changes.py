"""`hyperstream delete` and `hyperstream compact`, run as the built binary
(HS_BUILD_DIR, default build/release; a missing binary fails, never skips)
on seeded random tables; the rows are checked against a model, hdb's reads
and pyiceberg's StaticTable at every snapshot. About 5 s.
"""

import json
import os
import random
import subprocess

import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

import hyperstreamdb as hdb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _exe():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "hyperstream")
    if not os.path.exists(path):
        pytest.fail(f"{path} not built: run scripts/build.sh release (or set HS_BUILD_DIR)")
    return path


def run(*args, rc=0):
    r = subprocess.run([_exe(), *map(str, args)], capture_output=True, text=True, timeout=60)
    assert r.returncode == rc, f"{args}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def _rows(t, sid=None):
    a = t.to_arrow(snapshot_id=sid)
    return sorted(zip(a["id"].to_pylist(), a["tag"].to_pylist()))


def _make(path, rng, fv, n_files):
    t = hdb.Table(path, format_version=fv)
    model = {}
    nid = 0
    for _ in range(n_files):
        n = rng.randint(5, 40)
        tags = [rng.choice("abcd") for _ in range(n)]
        t.write(pa.table({"id": pa.array(range(nid, nid + n), pa.int64()),
                          "tag": pa.array(tags, pa.string())}))
        model.update({i: g for i, g in zip(range(nid, nid + n), tags)})
        nid += n
    return t, model


@pytest.mark.parametrize("fv", [2, 3])
def test_delete_and_compact(tmp_path, fv):
    rng = random.Random(fv * 101)
    path = tmp_path / "t"
    t, model = _make(path, rng, fv, 9)
    for lo in (rng.randint(0, 60), rng.randint(60, 150)):
        flt = f"id >= {lo} AND id < {lo + 20} AND tag <> 'a'"
        gone = [i for i, g in model.items() if lo <= i < lo + 20 and g != "a"]
        out = run("delete", path, "--filter", flt).stdout
        assert out.startswith(f"deleted {len(gone)} rows (snapshot "), out
        for i in gone:
            del model[i]
        assert _rows(t) == sorted(model.items())
    out = run("delete", path, "--filter", "id < 0").stdout
    assert out.startswith("deleted 0 rows"), out
    before = {s.snapshot_id: _rows(t, s.snapshot_id) for s in t.snapshots()}
    r = json.loads(run("compact", path, "--json").stdout)
    assert r["files_rewritten"] == 9 and r["files_added"] == 1, r
    assert r["rows"] == len(model) and r["delete_files_removed"] >= 1, r
    assert t.current_snapshot_id == r["snapshot_id"]
    assert t.snapshots()[-1].operation == "replace"
    assert _rows(t) == sorted(model.items())
    st = StaticTable.from_metadata(t.metadata_location)
    for s in t.snapshots():
        a = st.scan(snapshot_id=s.snapshot_id).to_arrow()
        want = before.get(s.snapshot_id, sorted(model.items()))
        assert sorted(zip(a["id"].to_pylist(), a["tag"].to_pylist())) == want, s
    out = run("compact", path).stdout
    assert out.strip() == "nothing to compact", out
    # --all deletes every row; the table reads empty everywhere.
    out = run("delete", path, "--all").stdout
    assert out.startswith(f"deleted {len(model)} rows"), out
    assert len(t) == 0 and _rows(t) == []
    assert StaticTable.from_metadata(t.metadata_location).scan().to_arrow().num_rows == 0


def test_compact_options_and_indexes(tmp_path):
    rng = random.Random(9)
    path = tmp_path / "t"
    t, model = _make(path, rng, 2, 8)
    t.add_index("tag")
    sizes = [os.path.getsize(os.path.join(path, "data", f)) for f in os.listdir(path / "data")]
    target = 3 * max(sizes)
    out = run("compact", path, "--filter", "id < 0").stdout
    assert out.strip() == "nothing to compact", out  # no file may match
    out = run("compact", path, "--min-input-files", "100").stdout
    assert out.strip() == "nothing to compact", out
    out = run("compact", path, "--target-file-size", str(target)).stdout
    assert out.startswith("compacted 8 data files into "), out
    assert "index files built" in out
    ix = {i.column: i for i in t.indexes()}
    assert ix["tag"].complete, ix
    assert t.validate() == []
    assert _rows(t) == sorted(model.items())
    for g in "abcd":
        a = t.to_arrow(filter=f"tag = '{g}'")
        assert sorted(a["id"].to_pylist()) == sorted(i for i, x in model.items() if x == g)


def test_usage_and_errors(tmp_path):
    rng = random.Random(2)
    path = tmp_path / "t"
    t, _ = _make(path, rng, 2, 2)
    n = len(t.snapshots())
    for cmd in ("delete", "compact"):
        h = run(cmd, "--help").stdout
        assert h.startswith(f"Usage: hyperstream {cmd} TABLE"), h
        r = run(cmd, rc=2)
        assert f"{cmd}: missing TABLE" in r.stderr
        r = run(cmd, path, "--bogus", rc=2)
        assert "unknown or incomplete option '--bogus'" in r.stderr
    assert "hyperstream compact TABLE" in run("--help").stdout
    r = run("delete", path, rc=2)
    assert "no --filter given (use --all" in r.stderr
    r = run("delete", path, "--filter", "id < 3", "--all", rc=2)
    assert "not both" in r.stderr
    r = run("delete", path, "--filter", "id <", rc=1)
    assert str(path) in r.stderr and "position" in r.stderr, r.stderr
    r = run("delete", path, "--filter", "nope = 1", rc=1)
    assert "nope" in r.stderr, r.stderr
    r = run("compact", path, "--target-file-size", "0", rc=2)
    assert "--target-file-size expects a positive number" in r.stderr
    r = run("compact", path, "--filter", "id <", rc=1)
    assert str(path) in r.stderr, r.stderr
    r = run("compact", tmp_path / "missing", rc=1)
    assert "missing" in r.stderr
    assert len(t.snapshots()) == n  # nothing was committed
