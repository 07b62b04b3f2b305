"""Issue 12, items 1 and 6 (paths): no path may hang, and paths resolve the way a user expects.

* Opening a table whose path is too long, whose `metadata` is a regular file or a symlink loop,
  or which is a regular file, is a clear error (never the endless version probe it once was),
  through the Python package and the CLI.
* A FIFO where a data file, an index file, a metadata file, `version-hint.text` or a Parquet
  file is expected never blocks in open(): an error naming the file (or, for the hint, which is
  only a hint, the table still opens).
* A table reached through a symlinked parent folder opens (created through the link and opened
  through the real path, and the other way round; pyiceberg still reads it).
* A symlink in `data/` is followed only when its target lies inside the table folder; one that
  escapes is a CorruptFileError naming the file and its target.

Every call that once hung runs in a child process with a timeout, so a regression fails the test
instead of stalling the suite.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conftest  # noqa: E402

hdb = pytest.importorskip("hyperstreamdb")

TIMEOUT = 15  # seconds; each call below takes well under one


def _cli():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(conftest.REPO_ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(conftest.REPO_ROOT, build)
    path = os.environ.get("HS_CLI") or os.path.join(build, "hyperstream")
    if not os.path.exists(path):
        raise RuntimeError(f"hyperstream CLI not found at {path}: build it or set HS_CLI")
    return path


def _py(code):
    """Run `code` in a child Python (bound by TIMEOUT); it sets `result`. Returns
    {"ok": result} or {"error": class name, "message": str, "hs": is a HyperStreamError}."""
    prog = textwrap.dedent("""
        import json, sys
        import hyperstreamdb as hdb
        try:
            result = None
            exec(sys.argv[1])
            print(json.dumps({"ok": result}))
        except Exception as e:
            print(json.dumps({"error": type(e).__name__, "message": str(e),
                              "hs": isinstance(e, hdb.HyperStreamError)}))
        """)
    try:
        p = subprocess.run([sys.executable, "-c", prog, textwrap.dedent(code)],
                           capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung (> {TIMEOUT} s): {code.strip()}")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def _error(code, *words, cls=None):
    r = _py(code)
    assert "error" in r, f"no error: {r}"
    assert r["hs"], r
    if cls is not None:
        assert r["error"] == cls, r
    for w in words:
        assert str(w) in r["message"], (w, r["message"])
    return r["message"]


def _run_cli(*args):
    try:
        return subprocess.run([_cli(), *map(str, args)], capture_output=True, text=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"CLI hung (> {TIMEOUT} s): hyperstream {' '.join(map(str, args))}")


def _cli_error(*args, words=()):
    r = _run_cli(*args)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    for w in words:
        assert str(w) in r.stderr, (w, r.stderr)
    return r.stderr


def _make(path, n=40, index_all=False):
    t = hdb.Table(str(path), index_all=index_all)
    t.write(pa.table({"id": pa.array(range(n), pa.int64()),
                      "cat": pa.array([f"k{i % 4}" for i in range(n)])}))
    if index_all:
        t.wait_for_indexes()
    return t


def _data_files(root):
    return sorted(glob.glob(os.path.join(str(root), "data", "**", "*.parquet"), recursive=True))


def _fifo_over(path):
    os.unlink(path)
    os.mkfifo(path)


# ---------------------------------------------------------------- opening a table


def test_long_name_is_an_error_naming_the_component(tmp_path):
    name = "x" * 300
    long_path = str(tmp_path / name)
    msg = _error(f"hdb.Table({long_path!r}).schema", name, "too long")
    assert "too long" in msg
    _cli_error("scan", long_path, words=[name, "too long"])
    _cli_error("inspect", long_path, words=[name, "too long"])


def test_long_total_path_is_an_error(tmp_path):
    deep = str(tmp_path) + ("/" + "d" * 200) * 25  # every name fits; the whole path does not
    _error(f"hdb.Table({deep!r}).schema", "too long")
    _cli_error("scan", deep, words=["too long"])


def test_metadata_is_a_regular_file(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    (root / "metadata").write_text("not a folder")
    _error(f"hdb.Table({str(root)!r}).schema", str(root / "metadata"), "not a folder")
    _cli_error("scan", root, words=[str(root / "metadata"), "not a folder"])


def test_metadata_is_a_symlink_loop(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    os.symlink("metadata", root / "metadata")
    _error(f"hdb.Table({str(root)!r}).schema", str(root / "metadata"))
    _cli_error("scan", root, words=[str(root / "metadata")])


def test_table_folder_symlink_loop(tmp_path):
    os.symlink("loop", tmp_path / "loop")
    _error(f"hdb.Table({str(tmp_path / 'loop')!r}).schema", str(tmp_path / "loop"))
    _cli_error("scan", tmp_path / "loop", words=[str(tmp_path / "loop")])


def test_table_path_is_a_regular_file(tmp_path):
    f = tmp_path / "plain.txt"
    f.write_text("hello")
    _error(f"hdb.Table({str(f)!r}).schema", str(f), "is a file, not a table folder")
    _cli_error("scan", f, words=[str(f), "is a file, not a table folder"])
    # below a regular file
    below = f / "t"
    _error(f"hdb.Table({str(below)!r}).schema", str(f), "not a folder")
    _cli_error("scan", below, words=[str(f), "not a folder"])


def test_missing_table_is_still_not_found(tmp_path):
    r = _py(f"hdb.Table({str(tmp_path / 'none')!r}).schema")
    assert r["error"] == "NotFoundError", r
    r = _py(f"t = hdb.Table({str(tmp_path / 'a' / 'b')!r}); result = t.exists")
    assert r == {"ok": False}


# ---------------------------------------------------------------- FIFOs never block


def test_fifo_data_file(tmp_path):
    root = tmp_path / "t"
    _make(root)
    [f] = _data_files(root)
    _fifo_over(f)
    _error(f"hdb.Table({str(root)!r}).to_arrow()", f, "not a regular file")
    _error(f"hdb.Table({str(root)!r}).to_arrow(filter='id = 3')", f)
    _cli_error("scan", root, words=[f])


def test_fifo_index_file(tmp_path):
    root = tmp_path / "t"
    _make(root, index_all=True)
    [ix] = glob.glob(os.path.join(str(root), "index", "*.puffin"))
    _fifo_over(ix)
    # the index is unusable: the answer stays right (or is an error naming it), never a hang
    r = _py(f"result = hdb.Table({str(root)!r}).to_arrow(filter=\"cat = 'k1'\").num_rows")
    assert r == {"ok": 10} or (r.get("hs") and ix in r["message"]), r
    r = _run_cli("scan", root, "--filter", "cat = 'k1'", "--csv", "--limit", "0")
    assert r.returncode in (0, 1), r.stderr


def test_fifo_metadata_file(tmp_path):
    root = tmp_path / "t"
    _make(root)
    meta = sorted(glob.glob(os.path.join(str(root), "metadata", "v*.metadata.json")))[-1]
    _fifo_over(meta)
    _error(f"hdb.Table({str(root)!r}).schema", meta, "not a regular file")
    _cli_error("scan", root, words=[meta])
    _cli_error("inspect", root, words=[meta])


def test_fifo_version_hint(tmp_path):
    root = tmp_path / "t"
    _make(root)
    _fifo_over(str(root / "metadata" / "version-hint.text"))
    # only a hint: the probe finds the latest version without it
    assert _py(f"result = hdb.Table({str(root)!r}).to_arrow().num_rows") == {"ok": 40}
    r = _run_cli("scan", root, "--csv", "--limit", "0")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 41, r.stderr


def test_fifo_parquet_file(tmp_path):
    f = str(tmp_path / "f.parquet")
    os.mkfifo(f)
    _error(f"import hyperstreamdb.parquet as P; P.read_table({f!r})", f, "not a regular file")
    _cli_error("inspect", f, words=[f])


def test_fifo_metadata_folder_entries(tmp_path):
    """A FIFO named like a metadata file in a folder with no vN (the catalog-named path)."""
    root = tmp_path / "t"
    (root / "metadata").mkdir(parents=True)
    os.mkfifo(root / "metadata" / "00000-abc.metadata.json")
    _error(f"hdb.Table({str(root)!r}).schema")
    _cli_error("scan", root)


# ---------------------------------------------------------------- symlinked folders


def _ice_rows(metadata_location):
    static = pytest.importorskip("pyiceberg.table").StaticTable
    return static.from_metadata(metadata_location).scan().to_arrow().num_rows


@pytest.mark.parametrize("create_via", ["link", "real"])
def test_table_through_symlinked_parent(tmp_path, create_via):
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "link")
    make_at, open_at = (tmp_path / "link" / "t", real / "t") if create_via == "link" else (
        real / "t", tmp_path / "link" / "t")
    t = _make(make_at)
    t.write(pa.table({"id": pa.array([100], pa.int64()), "cat": ["z"]}))
    n = 41
    for where in (make_at, open_at):
        o = hdb.Table(str(where))
        assert o.to_arrow().num_rows == n
        assert o.to_arrow(filter="id >= 39 AND id < 200").num_rows == 2
        o.write(pa.table({"id": pa.array([200], pa.int64()), "cat": ["y"]}))
        n += 1
        assert o.to_arrow().num_rows == n
        assert _ice_rows(o.metadata_location) == n
    r = _run_cli("scan", open_at, "--csv", "--limit", "0")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 44, r.stderr


def test_table_recorded_through_a_link_opens_by_real_path(tmp_path):
    """Tables written before the root was resolved recorded the linked path: still readable."""
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "link")
    t = _make(real / "t")
    # rewrite every recorded path as if the table had been made through the link
    meta = t.metadata_location
    doc = json.loads(open(meta).read())
    old, new = str(real / "t"), str(tmp_path / "link" / "t")
    assert doc["location"] == old
    doc["location"] = new
    text = json.dumps(doc).replace(old + "/", new + "/")
    with open(meta, "w") as f:
        f.write(text)
    # the manifest list is now named by the linked path, manifests keep the real
    # ones: both prefixes name the same folder
    assert hdb.Table(str(real / "t")).to_arrow().num_rows == 40
    assert hdb.Table(str(tmp_path / "link" / "t")).to_arrow().num_rows == 40
    # a new commit, an index and an orphan sweep see one set of files: nothing reachable goes
    o = hdb.Table(str(real / "t"), index_all=True)
    o.write(pa.table({"id": pa.array([100], pa.int64()), "cat": ["z"]}))
    o.wait_for_indexes()
    import datetime as dt
    gone = o.remove_orphan_files(older_than=dt.timedelta(0), force=True)
    # at most a registry a racing background build wrote and never committed
    live = json.loads(open(o.metadata_location).read())["properties"]["hyperstream.index-registry"]
    assert all("/metadata/index-registry-" in g and g != live for g in gone), gone
    assert all(i.complete for i in o.indexes())
    assert hdb.Table(str(tmp_path / "link" / "t")).to_arrow(filter="cat = 'z'").num_rows == 1
    assert _ice_rows(o.metadata_location) == 41


def test_location_elsewhere_is_still_refused(tmp_path):
    """A copied table whose metadata names another folder is not read from that folder."""
    _make(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    _error(f"hdb.Table({str(tmp_path / 'b')!r}).to_arrow()", "outside the table folder",
           cls="CorruptFileError")


# ---------------------------------------------------------------- symlinks in data/


def test_data_symlink_escaping_the_root_is_refused(tmp_path):
    root = tmp_path / "t"
    _make(root)
    [f] = _data_files(root)
    outside = tmp_path / "outside.parquet"
    shutil.move(f, outside)
    os.symlink(outside, f)
    for code in (f"hdb.Table({str(root)!r}).to_arrow()",
                 f"hdb.Table({str(root)!r}).to_arrow(filter='id = 3')"):
        _error(code, f, str(outside), "outside the table folder", cls="CorruptFileError")
    _cli_error("scan", root, words=[f, str(outside)])


def test_data_folder_symlink_escaping_the_root_is_refused(tmp_path):
    root = tmp_path / "t"
    _make(root)
    [f] = _data_files(root)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(str(root / "data"), elsewhere)
    os.symlink(elsewhere, root / "data")
    _error(f"hdb.Table({str(root)!r}).to_arrow()", f, "outside the table folder",
           cls="CorruptFileError")


def test_data_symlink_inside_the_root_is_followed(tmp_path):
    root = tmp_path / "t"
    _make(root)
    [f] = _data_files(root)
    (root / "store").mkdir()
    shutil.move(f, root / "store" / "x.parquet")
    os.symlink(root / "store" / "x.parquet", f)  # absolute, inside
    assert hdb.Table(str(root)).to_arrow().num_rows == 40
    os.unlink(f)
    os.symlink(os.path.join("..", "store", "x.parquet"), f)  # relative, inside
    assert hdb.Table(str(root)).to_arrow(filter="id < 5").num_rows == 5


def test_dangling_data_symlink(tmp_path):
    root = tmp_path / "t"
    _make(root)
    [f] = _data_files(root)
    os.unlink(f)
    os.symlink(tmp_path / "gone.parquet", f)
    _error(f"hdb.Table({str(root)!r}).to_arrow()", f)


def test_standalone_parquet_through_a_symlink_still_reads(tmp_path):
    f = tmp_path / "f.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), f)
    os.symlink(f, tmp_path / "l.parquet")
    import hyperstreamdb.parquet as P
    assert P.read_table(str(tmp_path / "l.parquet")).num_rows == 3
