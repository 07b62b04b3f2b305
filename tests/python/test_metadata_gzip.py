"""Gzip-compressed table metadata and finding the newest metadata file.

Iceberg Java's Hadoop tables write `vN.gz.metadata.json` (older releases
`vN.metadata.json.gz`) when `write.metadata.compression-codec=gzip`; the
latest version is found from the hint by probing v{N+1} under every name
(HadoopTableOperations). Here tables switch codec mid-history the way such a
writer leaves them (a version's plain file replaced by its gzip twin), and
ours write gzip when the property says so. pyiceberg's StaticTable (which
picks gzip by the `.gz.metadata.json` name) is the oracle for every file we
write; our reads must equal the rows we appended at every step.
"""

import glob
import gzip
import json
import os
import random
import subprocess
import sys

import pyarrow as pa
import pytest

import hyperstreamdb as hdb

pyiceberg_table = pytest.importorskip("pyiceberg.table")

CODEC = "write.metadata.compression-codec"


def _batch(rng, start, n):
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "name": pa.array([f"n{rng.randrange(1000)}" for _ in ids]),
                     "x": pa.array([rng.random() for _ in ids], pa.float64())})


def _rows(t):
    return sorted(t.to_pylist(), key=lambda r: r["id"])


def _pyiceberg_rows(meta_path, snapshot_id=None):
    st = pyiceberg_table.StaticTable.from_metadata(meta_path)
    scan = st.scan(snapshot_id=snapshot_id) if snapshot_id is not None else st.scan()
    return _rows(scan.to_arrow())


def _metadata_names(root):
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(root, "metadata", "v*.json*")))


def _gzip_version(root, v, name_suffix=".gz.metadata.json"):
    """Replace v{v}.metadata.json by its gzip twin, as a gzip writer leaves it."""
    plain = os.path.join(root, "metadata", f"v{v}.metadata.json")
    with open(plain, "rb") as f:
        data = f.read()
    with open(os.path.join(root, "metadata", f"v{v}{name_suffix}"), "wb") as f:
        f.write(gzip.compress(data))
    os.remove(plain)


def _hint(root, text):
    with open(os.path.join(root, "metadata", "version-hint.text"), "w") as f:
        f.write(text)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("suffix", [".gz.metadata.json", ".metadata.json.gz"])
def test_codec_switched_mid_history(tmp_path, fmt, suffix):
    rng = random.Random(fmt * 7 + len(suffix))
    root = str(tmp_path / "t")
    t = hdb.Table(root, format_version=fmt)
    want = []
    nid = 0
    # v1 (create) + v2, v3 plain; then the versions from 2 on become gzip, as
    # a writer that switched codec after v1 would have left them.
    for _ in range(2):
        b = _batch(rng, nid, rng.randrange(1, 50))
        nid += b.num_rows
        t.write(b)
        want += b.to_pylist()
    _gzip_version(root, 2, suffix)
    _gzip_version(root, 3, suffix)
    for hint in ["3", "1", "garbage", None]:
        if hint is None:
            os.remove(os.path.join(root, "metadata", "version-hint.text"))
        else:
            _hint(root, hint)
        t2 = hdb.Table(root)
        assert t2.metadata_location.endswith(f"v3{suffix}"), (hint, t2.metadata_location)
        assert _rows(t2.to_arrow()) == sorted(want, key=lambda r: r["id"])
        assert len(t2) == len(want)
    _hint(root, "1")
    # Our next commits go after the true latest (v4, not a fork of v2).
    t2 = hdb.Table(root)
    for _ in range(2):
        b = _batch(rng, nid, rng.randrange(1, 50))
        nid += b.num_rows
        t2.write(b)
        want += b.to_pylist()
    names = _metadata_names(root)
    assert "v4.metadata.json" in names and "v5.metadata.json" in names, names
    assert "v2.metadata.json" not in names and "v3.metadata.json" not in names, names
    latest = os.path.join(root, "metadata", "v5.metadata.json")
    log = json.load(open(latest))["metadata-log"]
    assert log[-1]["metadata-file"].endswith("v4.metadata.json")
    assert log[-2]["metadata-file"].endswith(f"v3{suffix}")
    assert _rows(hdb.Table(root).to_arrow()) == sorted(want, key=lambda r: r["id"])
    if suffix == ".gz.metadata.json":  # pyiceberg only knows this gzip name
        assert _pyiceberg_rows(latest) == sorted(want, key=lambda r: r["id"])
        # ... and every snapshot through the gzip versions.
        st = pyiceberg_table.StaticTable.from_metadata(os.path.join(root, "metadata", f"v3{suffix}"))
        assert len(st.metadata.snapshots) == 2


@pytest.mark.parametrize("fmt", [2, 3])
def test_we_write_gzip_when_asked(tmp_path, fmt):
    rng = random.Random(fmt)
    root = str(tmp_path / "t")
    t = hdb.Table(root, format_version=fmt, properties={CODEC: "gzip"})
    want, nid, snaps = [], 0, []
    for _ in range(4):
        b = _batch(rng, nid, rng.randrange(1, 40))
        nid += b.num_rows
        t.write(b)
        want += b.to_pylist()
        snaps.append((t.current_snapshot_id, sorted(want, key=lambda r: r["id"])))
    names = _metadata_names(root)
    assert names == [f"v{i}.gz.metadata.json" for i in range(1, 6)], names
    for n in names:  # really gzip, and Iceberg metadata inside
        with open(os.path.join(root, "metadata", n), "rb") as f:
            assert json.loads(gzip.decompress(f.read()))["format-version"] == fmt
    latest = os.path.join(root, "metadata", names[-1])
    assert hdb.Table(root).metadata_location == latest
    for sid, rows in snaps:  # pyiceberg reads every snapshot of our gzip metadata
        assert _pyiceberg_rows(latest, sid) == rows
        assert _rows(hdb.Table(root).to_arrow(snapshot_id=sid)) == rows
    # metadata-log names the gzip files
    log = pyiceberg_table.StaticTable.from_metadata(latest).metadata.metadata_log
    assert [os.path.basename(e.metadata_file) for e in log] == names[:-1]


def test_catalog_named_gzip(tmp_path):
    """Catalog-named metadata in gzip (NNNNN-<uuid>.gz.metadata.json, as Java
    catalogs write it with the gzip property; pyiceberg 0.12's SQL catalog
    ignores the property, so its files are compressed here): we open the
    folder, find the highest NNNNN among plain and gzip names, and read it as
    pyiceberg reads the same file."""
    from pyiceberg.catalog.sql import SqlCatalog
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("db")
    rng = random.Random(5)
    b = _batch(rng, 0, 30)
    tbl = cat.create_table("db.t", schema=b.schema)
    want = []
    nid = 30
    for _ in range(3):
        b = _batch(rng, nid, rng.randrange(1, 30))
        nid += b.num_rows
        tbl.append(b)
        want += b.to_pylist()
    loc = tbl.metadata_location.replace("file://", "")
    mdir = os.path.dirname(loc)
    # the last two versions gzip-compressed under their gzip names
    for p in sorted(glob.glob(os.path.join(mdir, "0000[23]-*.metadata.json"))):
        with open(p, "rb") as f:
            data = f.read()
        with open(p[: -len(".metadata.json")] + ".gz.metadata.json", "wb") as f:
            f.write(gzip.compress(data))
        os.remove(p)
    gz = loc[: -len(".metadata.json")] + ".gz.metadata.json"
    t = hdb.Table(os.path.dirname(mdir))
    assert t.metadata_location == gz
    want = sorted(want, key=lambda r: r["id"])
    assert _rows(t.to_arrow()) == want
    assert _pyiceberg_rows(gz) == want


def test_two_files_for_one_version(tmp_path):
    root = str(tmp_path / "t")
    t = hdb.Table(root)
    t.write(pa.table({"id": [1, 2]}))
    t.write(pa.table({"id": [3]}))
    plain = os.path.join(root, "metadata", "v3.metadata.json")
    with open(plain, "rb") as f:
        data = f.read()
    with open(os.path.join(root, "metadata", "v3.gz.metadata.json"), "wb") as f:
        f.write(gzip.compress(data))
    with pytest.raises(hdb.HyperStreamError) as e:
        hdb.Table(root).to_arrow()
    msg = str(e.value)
    assert "v3.metadata.json" in msg and "v3.gz.metadata.json" in msg, msg
    # a writer refuses too: nothing is published beside the ambiguity
    with pytest.raises(hdb.HyperStreamError):
        t.write(pa.table({"id": [4]}))
    assert not glob.glob(os.path.join(root, "metadata", "v4*"))


def test_bomb_and_damage(tmp_path):
    root = str(tmp_path / "t")
    t = hdb.Table(root)
    t.write(pa.table({"id": [1, 2]}))
    gz = os.path.join(root, "metadata", "v2.gz.metadata.json")
    os.remove(os.path.join(root, "metadata", "v2.metadata.json"))
    # 300 MiB of spaces (past the 256 MiB metadata limit) in ~300 KB of gzip
    with gzip.open(gz, "wb", compresslevel=9) as f:
        chunk = b" " * (1 << 20)
        for _ in range(300):
            f.write(chunk)
    assert os.path.getsize(gz) < 2 << 20
    with pytest.raises(hdb.HyperStreamError) as e:
        hdb.Table(root).to_arrow()
    assert "v2.gz.metadata.json" in str(e.value) and "decompression bomb" in str(e.value)
    # truncated and bit-flipped gzip: errors naming the file
    good = gzip.compress(json.dumps(json.load(open(os.path.join(root, "metadata",
                                                                  "v1.metadata.json")))).encode())
    for damaged in [good[: len(good) // 2], good[:-3] + bytes([good[-3] ^ 1]) + good[-2:],
                    good + b"xx"]:
        with open(gz, "wb") as f:
            f.write(damaged)
        with pytest.raises(hdb.HyperStreamError) as e:
            hdb.Table(root).to_arrow()
        assert "v2.gz.metadata.json" in str(e.value), str(e.value)


def test_concurrent_writers_over_gzip(tmp_path):
    """Writers racing on a gzip table: every append lands once, versions dense."""
    root = str(tmp_path / "t")
    t = hdb.Table(root, properties={CODEC: "gzip"})
    t.write(pa.table({"id": pa.array([0], pa.int64())}))
    code = (
        "import sys, pyarrow as pa, hyperstreamdb as hdb\n"
        "w = int(sys.argv[2])\n"
        "t = hdb.Table(sys.argv[1])\n"
        "for i in range(10):\n"
        "    t.write(pa.table({'id': pa.array([1000 * w + i + 1], pa.int64())}))\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, root, str(w)]) for w in range(3)]
    for p in procs:
        assert p.wait(timeout=120) == 0
    ids = sorted(hdb.Table(root).to_arrow()["id"].to_pylist())
    assert ids == sorted([0] + [1000 * w + i + 1 for w in range(3) for i in range(10)])
    names = _metadata_names(root)
    assert names == sorted(f"v{i}.gz.metadata.json" for i in range(1, 33)), names


def test_maintenance_and_cli_on_gzip_tables(tmp_path):
    """Orphan removal keeps every gzip version it must (old ones through the
    metadata log, newer ones always), expiry works, the CLI scans."""
    import csv
    import datetime as dt
    import io

    root = str(tmp_path / "t")
    t = hdb.Table(root, properties={CODEC: "gzip"})
    for i in range(4):
        t.write(pa.table({"id": pa.array([i], pa.int64())}))
    stray = os.path.join(root, "data", "stray.parquet")
    with open(stray, "wb") as f:
        f.write(b"x")
    old = (dt.datetime.now() - dt.timedelta(days=10)).timestamp()
    os.utime(stray, (old, old))
    for n in _metadata_names(root):
        os.utime(os.path.join(root, "metadata", n), (old, old))
    removed = t.remove_orphan_files(older_than=dt.timedelta(days=1))
    assert [os.path.basename(p) for p in removed] == ["stray.parquet"], removed
    assert _metadata_names(root) == [f"v{i}.gz.metadata.json" for i in range(1, 6)]
    assert sorted(hdb.Table(root).to_arrow()["id"].to_pylist()) == [0, 1, 2, 3]
    gone = t.expire_snapshots(older_than=dt.timedelta(seconds=0), retain_last=1)
    assert len(gone.snapshot_ids) == 3
    assert sorted(hdb.Table(root).to_arrow()["id"].to_pylist()) == [0, 1, 2, 3]
    assert hdb.Table(root).metadata_location.endswith("v6.gz.metadata.json")
    build = os.environ.get("HS_BUILD_DIR", os.path.join(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))), "build", "release"))
    exe = os.path.join(build, "hyperstream")
    if not os.path.exists(exe):
        pytest.skip(f"{exe} not built")
    r = subprocess.run([exe, "scan", root, "--csv", "--limit", "0"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert sorted(int(row["id"]) for row in csv.DictReader(io.StringIO(r.stdout))) == [0, 1, 2, 3]
