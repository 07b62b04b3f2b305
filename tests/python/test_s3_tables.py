"""Tables on S3: hdb.Table("s3://bucket/prefix/t", storage_options=...) against
a local versitygw (build/tools/versitygw, built by `scripts/setup.sh test`),
checked against pyarrow and read back by pyiceberg at every snapshot.

The server is started once for the module over a temporary folder; the
tests SKIP only when the binary is missing.
"""
import multiprocessing
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hyperstreamdb as hdb

ROOT = pathlib.Path(__file__).resolve().parents[2]
VERSITYGW = ROOT / "build" / "tools" / "versitygw"
ACCESS, SECRET = "hsaccess", "hssecret-0123456789"
BUCKET = "hsbucket"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(port):
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def s3():
    if not os.access(VERSITYGW, os.X_OK):
        pytest.skip(f"{VERSITYGW} missing (scripts/setup.sh test builds it)")
    tmp = tempfile.mkdtemp(prefix="hs_s3_tables_")
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    proc = None
    for _ in range(5):
        port = _free_port()
        log = open(os.path.join(tmp, "versitygw.log"), "ab")
        proc = subprocess.Popen([str(VERSITYGW), "--access", ACCESS, "--secret", SECRET,
                                 "--port", f"127.0.0.1:{port}", "--quiet", "--keep-alive",
                                 "posix", data], stdout=log, stderr=subprocess.STDOUT)
        for _ in range(200):
            if _port_open(port) or proc.poll() is not None:
                break
            time.sleep(0.05)
        if proc.poll() is None and _port_open(port):
            break
        proc.kill()
        proc.wait()
        proc = None
    assert proc is not None, f"versitygw did not start; see {tmp}/versitygw.log"
    endpoint = f"http://127.0.0.1:{port}"
    from pyarrow import fs as pafs
    pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", access_key=ACCESS,
                      secret_key=SECRET, region="us-east-1",
                      allow_bucket_creation=True).create_dir(BUCKET)
    opts = {"aws_access_key_id": ACCESS, "aws_secret_access_key": SECRET,
            "region": "us-east-1", "endpoint": endpoint, "allow_http": "true"}
    # "dir": the server's backing folder (<dir>/<bucket>/<key>), for tests that
    # age objects by their files' mtimes (versitygw serves it as LastModified)
    yield {"endpoint": endpoint, "options": opts, "dir": data}
    proc.terminate()
    proc.wait()
    shutil.rmtree(tmp, ignore_errors=True)


def _batch(rng, n, start):
    def nulls(arr):
        mask = rng.random(n) < 0.1
        return pa.array(arr, mask=mask)
    ts = (np.datetime64("2024-01-01T00:00:00", "us")
          + rng.integers(0, 10**12, n).astype("timedelta64[us]"))
    return pa.table({
        "id": pa.array(np.arange(start, start + n, dtype=np.int64)),
        "k": nulls(rng.integers(-50, 50, n).astype(np.int32)),
        "s": nulls(np.array([f"s{v}" for v in rng.integers(0, 200, n)], dtype=object)),
        "x": nulls(rng.normal(size=n)),
        "t": nulls(ts),
    })


def _sorted(t):
    return t.sort_by("id")


def test_write_read_time_travel_pyiceberg(s3):
    uri = f"s3://{BUCKET}/tables/t1"
    t = hdb.Table(uri, storage_options=s3["options"])
    assert not t.exists
    rng = np.random.default_rng(7)
    parts, snaps = [], []
    start = 0
    for n in (1000, 1, 2500, 700):
        b = _batch(rng, n, start)
        start += n
        t.write(b)
        parts.append(b)
        snaps.append(t.current_snapshot_id)
    want = pa.concat_tables(parts)
    assert len(t) == want.num_rows
    got = t.to_arrow()
    assert _sorted(got).equals(_sorted(want.cast(got.schema)))
    # filters against pyarrow.compute
    f = t.to_arrow(filter="k > 10")
    assert _sorted(f).equals(_sorted(want.filter(pc.greater(want["k"], 10)).cast(got.schema)))
    f = t.to_arrow(filter="s = 's5'")
    assert f.num_rows == want.filter(pc.equal(want["s"], "s5")).num_rows
    # a fresh handle (no caches of this object) reads the same
    t2 = hdb.Table(uri, storage_options=s3["options"])
    assert _sorted(t2.to_arrow()).equals(_sorted(got))
    # time travel: every snapshot as of its write
    for i, sid in enumerate(snaps):
        old = t.to_arrow(snapshot_id=sid)
        assert _sorted(old).equals(_sorted(pa.concat_tables(parts[:i + 1]).cast(got.schema)))
    # pyiceberg reads the same table from S3 at every snapshot
    pyiceberg = pytest.importorskip("pyiceberg.table")
    meta = t.metadata_location
    assert meta.startswith(uri + "/metadata/v")
    st = pyiceberg.StaticTable.from_metadata(meta, properties={
        "s3.endpoint": s3["endpoint"], "s3.access-key-id": ACCESS,
        "s3.secret-access-key": SECRET, "s3.region": "us-east-1"})
    for i, sid in enumerate(snaps):
        theirs = st.scan(snapshot_id=sid).to_arrow()
        mine = pa.concat_tables(parts[:i + 1])
        assert sorted(theirs["id"].to_pylist()) == sorted(mine["id"].to_pylist())
        assert sorted(theirs["s"].to_pylist(), key=str) == sorted(mine["s"].to_pylist(), key=str)


def test_wrong_secret_is_a_clear_error(s3):
    uri = f"s3://{BUCKET}/tables/secret"
    hdb.Table(uri, storage_options=s3["options"]).write(pa.table({"a": [1, 2, 3]}))
    bad = dict(s3["options"], aws_secret_access_key="wrong")
    with pytest.raises(hdb.HyperStreamError) as e:
        len(hdb.Table(uri, storage_options=bad))
    msg = str(e.value)
    assert "SignatureDoesNotMatch" in msg or "403" in msg, msg
    assert uri in msg, msg


def test_missing_bucket_is_a_clear_error(s3):
    # Not "no table here yet": the bucket is named, at the first look.
    uri = "s3://no-such-bucket-hs/t"
    with pytest.raises(hdb.HyperStreamError) as e:
        hdb.Table(uri, storage_options=s3["options"])
    msg = str(e.value)
    assert "s3://no-such-bucket-hs/t/" in msg and "bucket no-such-bucket-hs does not exist" in msg, msg


def test_dotdot_is_refused(s3):
    with pytest.raises(hdb.HyperStreamError) as e:
        hdb.Table(f"s3://{BUCKET}/a/../t", storage_options=s3["options"]).write(
            pa.table({"a": [1]}))
    assert ".." in str(e.value)


def _appender(args):
    uri, opts, w = args
    t = hdb.Table(uri, storage_options=opts)
    for i in range(5):
        t.write(pa.table({"w": pa.array([w] * 3, pa.int64()),
                          "i": pa.array([i] * 3, pa.int64())}))
    return w


def test_concurrent_appends_lose_nothing(s3):
    uri = f"s3://{BUCKET}/tables/conc"
    opts = s3["options"]
    t = hdb.Table(uri, storage_options=opts)
    t.write(pa.table({"w": pa.array([-1], pa.int64()), "i": pa.array([-1], pa.int64())}))
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        assert sorted(pool.map(_appender, [(uri, opts, w) for w in range(4)])) == [0, 1, 2, 3]
    got = t.to_arrow()
    assert len(t) == 1 + 4 * 5 * 3
    pairs = sorted(zip(got["w"].to_pylist(), got["i"].to_pylist()))
    assert pairs == sorted([(-1, -1)] + [(w, i) for w in range(4) for i in range(5)] * 3)
    assert len(t.snapshots()) == 1 + 4 * 5


def test_cli_scan_reads_an_s3_table(s3):
    cli = ROOT / "build" / "release" / "hyperstream"
    if not os.access(cli, os.X_OK):
        cli = ROOT / "build" / "pyinst" / "bin" / "hyperstream"
    if not os.access(cli, os.X_OK):
        pytest.skip("no hyperstream CLI built in this tree")
    uri = f"s3://{BUCKET}/tables/cli"
    t = hdb.Table(uri, storage_options=s3["options"])
    t.write(pa.table({"a": pa.array([1, 2, 3], pa.int64()), "b": ["x", "y", "z"]}))
    t.write(pa.table({"a": pa.array([4], pa.int64()), "b": ["w"]}))
    # The CLI takes its options the AWS way, from the environment.
    env = dict(os.environ, AWS_ACCESS_KEY_ID=ACCESS, AWS_SECRET_ACCESS_KEY=SECRET,
               AWS_REGION="us-east-1", AWS_ENDPOINT_URL_S3=s3["endpoint"])
    env.pop("AWS_PROFILE", None)
    out = subprocess.run([str(cli), "scan", uri, "--filter", "a >= 2", "--csv"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0].replace('"', "") == "a,b"
    assert sorted(lines[1:]) == ["2,y", "3,z", "4,w"]


def test_metadata_only_changes_commit_on_s3(s3, tmp_path, monkeypatch):
    # (row changes, compaction, statistics and orphan removal on S3:
    # test_s3_changes.py)
    monkeypatch.chdir(tmp_path)  # a local "s3:" folder would appear here
    uri = f"s3://{BUCKET}/tables/later"
    t = hdb.Table(uri, storage_options=s3["options"])
    t.write(pa.table({"a": pa.array([1, 2, 3], pa.int64())}))
    # metadata-only changes commit by the same conditional PUT
    t.add_column("b", pa.string())
    assert t.schema.names == ["a", "b"]
    assert len(t) == 3
    assert not os.path.exists(tmp_path / "s3:")


def test_sql_over_a_registered_s3_table(s3):
    uri = f"s3://{BUCKET}/tables/sqlt"
    t = hdb.Table(uri, storage_options=s3["options"])
    t.write(pa.table({"a": pa.array([1, 2, 3, 4], pa.int64()), "b": ["x", "y", "x", "z"]}))
    got = t.sql("SELECT b, count(*) AS n FROM t WHERE a > 1 GROUP BY b ORDER BY b").to_arrow()
    assert got.to_pylist() == [{"b": "x", "n": 1}, {"b": "y", "n": 1}, {"b": "z", "n": 1}]


def test_connect_to_an_s3_prefix_finds_its_tables(s3):
    """hdb.connect("s3://bucket/prefix", storage_options=...): tables under
    the prefix by name, as folders under a local root; a name with no table
    is the usual unknown-table error, and SQL joins two S3 tables like DuckDB."""
    root = f"s3://{BUCKET}/lake"
    opts = s3["options"]
    a = pa.table({"k": pa.array([1, 2, 3, 4, None], pa.int64()), "v": ["p", "q", "r", "s", "t"]})
    b = pa.table({"k": pa.array([2, 3, 3, 9], pa.int64()), "w": [1.5, 2.5, 3.5, 4.5]})
    hdb.Table(f"{root}/ta", storage_options=opts).write(a)
    hdb.Table(f"{root}/tb", storage_options=opts).write(b)
    s = hdb.connect(root, storage_options=opts)
    sql = "SELECT v, w FROM ta JOIN tb ON ta.k = tb.k ORDER BY v, w"
    got = s.sql(sql).to_arrow().to_pylist()
    import duckdb
    con = duckdb.connect()
    con.register("ta", a)
    con.register("tb", b)
    want = [dict(zip(["v", "w"], r)) for r in con.execute(sql).fetchall()]
    assert got == want
    with pytest.raises(Exception, match="nosuch"):
        s.sql("SELECT * FROM nosuch").to_arrow()


def _top_k(ids, vecs, q, k):
    d = np.sqrt(((vecs.astype(np.float64) - q.astype(np.float64)) ** 2).sum(axis=1))
    order = np.lexsort((ids, d))[:k]
    return ids[order], d[order]


def test_scalar_and_vector_indexes_on_s3(s3, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a local "s3:" folder would appear here
    uri = f"s3://{BUCKET}/tables/indexed"
    t = hdb.Table(uri, storage_options=s3["options"])
    rng = np.random.default_rng(11)
    dim, parts, start = 16, [], 0
    for n in (700, 900, 400):
        parts.append(pa.table({
            "id": pa.array(np.arange(start, start + n), pa.int64()),
            "g": pa.array(rng.integers(0, 50, n), pa.int32()),
            "emb": pa.FixedSizeListArray.from_arrays(
                pa.array(rng.normal(size=n * dim).astype(np.float32)), dim)}))
        start += n
        t.write(parts[-1])
    want = pa.concat_tables(parts)
    t.add_index("g", "bitmap")
    t.add_index("emb", "hnsw")
    got = {i.column: (i.kind, i.files_indexed, i.files_total) for i in t.indexes()}
    assert got == {"g": ("bitmap", 3, 3), "emb": ("hnsw", 3, 3)}, got
    assert t.validate() == []
    # index files and the registry are objects below the table, nothing local
    assert not os.path.exists(tmp_path / "s3:")
    # filters through the bitmap index equal pyarrow.compute's rows
    g = want["g"]
    for lo, hi in ((0, 1), (10, 13), (49, 50), (7, 40)):
        flt = f"g >= {lo} AND g < {hi}"
        mine = t.to_arrow(filter=flt, columns=["id"])["id"].to_pylist()
        theirs = want.filter(pc.and_(pc.greater_equal(g, lo), pc.less(g, hi)))["id"]
        assert sorted(mine) == sorted(theirs.to_pylist()), flt
        assert t.explain(flt).stats["files_indexed"] == 3, flt
    v = rng.integers(0, 50)
    mine = t.to_arrow(filter=f"g = {v}", columns=["id"])["id"].to_pylist()
    assert sorted(mine) == sorted(want.filter(pc.equal(g, v))["id"].to_pylist())
    # a fresh handle opens the same index objects
    t2 = hdb.Table(uri, storage_options=s3["options"])
    assert t2.explain("g = 3").stats["files_indexed"] == 3
    # vector search through the HNSW index equals the brute-force top 10
    ids = want["id"].to_numpy()
    vecs = want["emb"].combine_chunks().values.to_numpy().reshape(-1, dim)
    gnp = g.to_numpy()
    for _ in range(5):
        q = rng.normal(size=dim).astype(np.float32)
        for flt, mask in ((None, None), ("g < 25", gnp < 25)):
            sel = np.ones(len(ids), bool) if mask is None else mask
            e_ids, e_d = _top_k(ids[sel], vecs[sel], q, 10)
            res = t.search("emb", q, k=10, filter=flt, ef_search=2000, columns=["id"])
            assert res.column("id").to_pylist() == e_ids.tolist(), flt
            np.testing.assert_allclose(res.column("distance").to_numpy(), e_d, rtol=1e-4,
                                       atol=1e-4)
            exact = t.search("emb", q, k=10, filter=flt, exact=True, columns=["id"])
            assert exact.column("id").to_pylist() == e_ids.tolist(), flt
    text = t.query().vector_search(q, column="emb", k=10).explain()
    assert "3 searched (3 through a vector index" in text, text
    # pyiceberg still reads the table the indexes sit beside
    pyiceberg = pytest.importorskip("pyiceberg.table")
    st = pyiceberg.StaticTable.from_metadata(t.metadata_location, properties={
        "s3.endpoint": s3["endpoint"], "s3.access-key-id": ACCESS,
        "s3.secret-access-key": SECRET, "s3.region": "us-east-1"})
    theirs = st.scan().to_arrow()
    assert sorted(theirs["id"].to_pylist()) == ids.tolist()
    assert sorted(theirs["g"].to_pylist()) == sorted(g.to_pylist())


def test_expire_snapshots_on_s3(s3):
    """Expiry on S3: the snapshots older than the kept ones go, the files
    only they reached are deleted from the bucket (listed before and after),
    the rows stay, and pyiceberg reads the expired table."""
    uri = f"s3://{BUCKET}/tables/expire"
    t = hdb.Table(uri, storage_options=s3["options"])
    rng = np.random.default_rng(11)
    parts = [_batch(rng, 50, i * 50) for i in range(4)]
    for p in parts:
        t.write(p)
    from pyarrow import fs as pafs
    fs = pafs.S3FileSystem(endpoint_override=s3["endpoint"], scheme="http", access_key=ACCESS,
                           secret_key=SECRET, region="us-east-1")
    def keys():
        return {f.path for f in fs.get_file_info(pafs.FileSelector(f"{BUCKET}/tables/expire",
                                                                     recursive=True))
                if f.type == pafs.FileType.File}
    before = keys()
    dry = t.expire_snapshots(retain_last=2, dry_run=True)
    assert keys() == before  # a dry run removes nothing
    done = t.expire_snapshots(retain_last=2)
    assert len(done.snapshot_ids) == 2 and len(t.snapshots()) == 2
    after = keys()
    removed, added = before - after, after - before
    deleted = {f.split("://", 1)[1] for f in done.files_deleted}
    assert removed and removed == deleted, (removed, deleted)
    assert sorted(deleted) == sorted(f.split("://", 1)[1] for f in dry.files_deleted)
    assert all(k.endswith(".metadata.json") for k in added), added  # the new version only
    assert _sorted(t.to_arrow()).equals(_sorted(pa.concat_tables(parts)))
    from pyiceberg.table import StaticTable
    props = {"s3.endpoint": s3["endpoint"], "s3.access-key-id": ACCESS,
             "s3.secret-access-key": SECRET, "s3.region": "us-east-1"}
    st = StaticTable.from_metadata(t.metadata_location, properties=props)
    assert st.scan().to_arrow().num_rows == 200
