"""Tables in an Iceberg REST catalog: hdb.connect("rest://host:port", ...)
against Apache Iceberg's own RESTCatalogServer (conftest_rest.py), with
pyiceberg's RestCatalog on the other side of every check: what we create
and commit pyiceberg loads with identical rows, what pyiceberg appends we
see, concurrent commits of both land (the server's 409 retried), and bad
input (wrong token or secret, missing namespace or table, a server that is
down, a catalog never connected) is a clear error.
"""
import os
import socket
import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hyperstreamdb as hdb
from conftest_rest import RestProxy

WAREHOUSE = "wh"


def _rest(server):
    return "rest://" + server["uri"].split("://", 1)[1]


@pytest.fixture(scope="module")
def cat(rest_catalog):
    c = hdb.connect(_rest(rest_catalog), warehouse=WAREHOUSE)
    c.create_namespace("db", exist_ok=True)
    return c


@pytest.fixture(scope="module")
def py(rest_catalog):
    from pyiceberg.catalog.rest import RestCatalog
    return RestCatalog("peer", uri=rest_catalog["uri"], warehouse=WAREHOUSE)


def _batch(rng, n, start):
    def nulls(a):
        return pa.array(a, mask=rng.random(n) < 0.1)
    return pa.table({
        "id": pa.array(np.arange(start, start + n, dtype=np.int64)),
        "k": nulls(rng.integers(-50, 50, n).astype(np.int32)),
        "s": nulls(np.array([f"s{v}" for v in rng.integers(0, 300, n)], dtype=object)),
        "x": nulls(rng.normal(size=n)),
    })


SCHEMA = pa.schema([("id", pa.int64()), ("k", pa.int32()), ("s", pa.string()),
                    ("x", pa.float64())])


def _eq(a, b):
    a = a.select(b.column_names).sort_by("id")
    b = b.sort_by("id")
    assert a.num_rows == b.num_rows
    for name in b.column_names:
        assert a.column(name).to_pylist() == b.column(name).to_pylist(), name


def test_namespaces_create_commit_pyiceberg_reads(cat, py):
    cat.create_namespace("db.sub", exist_ok=True)
    assert "db" in cat.list_namespaces()
    assert "db.sub" in cat.list_namespaces("db")
    assert ("db", "sub") in [tuple(n) for n in py.list_namespaces(("db",))]
    t = cat.create_table("db.events", SCHEMA)
    assert "db.events" in cat.list_tables("db")
    assert ("db", "events") in py.list_tables("db")
    rng = np.random.default_rng(16)
    parts, snaps, start = [], [], 0
    for n in (500, 1, 1200):
        b = _batch(rng, n, start)
        start += n
        t.write(b)
        parts.append(b)
        snaps.append(t.current_snapshot_id)
    expected = pa.concat_tables(parts)
    _eq(t.to_arrow(), expected)
    pt = py.load_table("db.events")
    assert pt.metadata.current_snapshot_id == snaps[-1]
    _eq(pt.scan().to_arrow(), expected)
    for i, sid in enumerate(snaps):  # every snapshot, through pyiceberg
        _eq(pt.scan(snapshot_id=sid).to_arrow(), pa.concat_tables(parts[: i + 1]))
    flt = pt.scan(row_filter="k >= 10").to_arrow()
    _eq(t.to_arrow(filter="k >= 10"), flt)
    # The catalog wrote the metadata; ours are the manifests and data under its location.
    assert os.path.basename(t.metadata_location)[:5].isdigit()
    assert t.metadata_location == pt.metadata_location.removeprefix("file:")


def test_pyiceberg_commits_are_seen(cat, py):
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType
    pt = py.create_table("db.theirs", Schema(NestedField(1, "id", LongType(), required=False),
                                             NestedField(2, "s", StringType(), required=False)))
    rng = np.random.default_rng(3)
    a = pa.table({"id": pa.array(rng.permutation(300).astype(np.int64)),
                  "s": pa.array([f"v{i}" for i in range(300)])})
    pt.append(a)
    t = cat.load_table("db.theirs")
    _eq(t.to_arrow(), a)
    _eq(hdb.Table.from_catalog(cat.uri, "db.theirs", warehouse=WAREHOUSE).to_arrow(), a)
    b = pa.table({"id": pa.array(np.arange(1000, 1100, dtype=np.int64)),
                  "s": pa.array([None] * 100, pa.string())})
    t.write(b)  # ours on top of theirs
    pt.refresh()
    _eq(pt.scan().to_arrow(), pa.concat_tables([a, b]))
    c = pa.table({"id": pa.array([5000], pa.int64()), "s": ["last"]})
    pt.append(c)
    _eq(t.to_arrow(), pa.concat_tables([a, b, c]))  # a refresh loads from the catalog
    assert len(t.snapshots()) == 3


def test_concurrent_commit_is_retried(rest_catalog, py):
    proxy = RestProxy(rest_catalog["port"])
    try:
        c = hdb.connect(f"rest://127.0.0.1:{proxy.port}", warehouse=WAREHOUSE)
        t = c.create_table("db.race", SCHEMA)
        rng = np.random.default_rng(11)
        first = _batch(rng, 50, 0)
        t.write(first)
        theirs = _batch(rng, 30, 10_000)
        # pyiceberg (straight to the server) commits between our load and our commit.
        proxy.before_commit = lambda: py.load_table("db.race").append(theirs)
        ours = _batch(rng, 40, 20_000)
        t.write(ours)
        statuses = [s for (m, p, s) in proxy.log if m == "POST" and p.endswith("/tables/race")]
        assert statuses[-2:] == [409, 200], statuses
        expected = pa.concat_tables([first, theirs, ours])
        _eq(t.to_arrow(), expected)
        _eq(py.load_table("db.race").scan().to_arrow(), expected)
    finally:
        proxy.close()


def test_concurrent_index_registrations_both_kept(rest_catalog, cat):
    """Another writer configures (then registers) an index between our load
    and our commit of another: the REST protocol has no requirement that
    guards a property, so our commit replaced the value that writer had
    just committed. The catalog's answer shows it (the version before ours
    is not our base) and the commit merges theirs back: both indexes stay
    configured and registered."""
    proxy = RestProxy(rest_catalog["port"])
    try:
        theirs = cat.create_table("db.regrace", SCHEMA)
        rng = np.random.default_rng(17)
        data = pa.concat_tables([_batch(rng, 300, 0), _batch(rng, 300, 1000)])
        theirs.write(data.slice(0, 300))
        theirs.write(data.slice(300))
        c = hdb.connect(f"rest://127.0.0.1:{proxy.port}", warehouse=WAREHOUSE)
        ours = c.load_table("db.regrace")
        # Their configuration commit lands inside our configuration commit ...
        proxy.before_commit_match = "hyperstream.indexes"
        proxy.before_commit = lambda: theirs.add_index("s", "bitmap", build=False)
        ours.add_index("k", "btree", build=False)
        assert proxy.before_commit is None
        kinds = {i.column: i.kind for i in cat.load_table("db.regrace").indexes()}
        assert kinds == {"k": "btree", "s": "bitmap"}, kinds
        # ... and their registration inside ours.
        proxy.before_commit_match = "hyperstream.index-registry"
        proxy.before_commit = lambda: theirs.build_indexes(["s"])
        ours.build_indexes(["k"])
        assert proxy.before_commit is None  # their registration ran inside our commit
        fresh = hdb.connect(_rest(rest_catalog), warehouse=WAREHOUSE).load_table("db.regrace")
        got = {i.column: (i.files_indexed, i.files_total) for i in fresh.indexes()}
        assert got == {"k": (2, 2), "s": (2, 2)}, got
        for f in ("k = 7", "s = 's12'"):
            assert fresh.explain(filter=f, as_dict=True)["files_indexed"] == 2, f
        _eq(fresh.to_arrow(filter="k = 7"), data.filter(pc.field("k") == 7))
        _eq(fresh.to_arrow(filter="s = 's12'"), data.filter(pc.field("s") == "s12"))
    finally:
        proxy.close()


def test_concurrent_writers_race(cat, py):
    t = cat.create_table("db.many", SCHEMA)
    rng = np.random.default_rng(5)
    ours = [_batch(rng, 20, 100 * i) for i in range(6)]
    theirs = [_batch(rng, 20, 100_000 + 100 * i) for i in range(4)]
    errors = []

    def mine(batches):
        try:
            h = cat.load_table("db.many")
            for b in batches:
                h.write(b)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def peer():
        from pyiceberg.exceptions import CommitFailedException
        try:
            for b in theirs:
                for _ in range(50):
                    try:
                        py.load_table("db.many").append(b)
                        break
                    except CommitFailedException:
                        continue
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    th = [threading.Thread(target=mine, args=(ours[:3],)),
          threading.Thread(target=mine, args=(ours[3:],)), threading.Thread(target=peer)]
    for x in th:
        x.start()
    for x in th:
        x.join(120)
    assert not errors, errors
    expected = pa.concat_tables(ours + theirs)
    _eq(t.to_arrow(), expected)
    _eq(py.load_table("db.many").scan().to_arrow(), expected)
    assert len(t.snapshots()) == len(ours) + len(theirs)


def test_indexes_search_row_changes(cat, py):
    rng = np.random.default_rng(21)
    n, d = 2000, 8
    vec = rng.normal(size=(n, d)).astype(np.float32)
    data = pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "cat": pa.array([f"c{v}" for v in rng.integers(0, 20, n)]),
        "emb": pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), d),
    })
    t = cat.create_table("db.vec", data.schema)
    t.write(data)
    t.add_index("cat", "bitmap")
    t.wait_for_indexes()
    assert [i.column for i in t.indexes()] == ["cat"]
    props = py.load_table("db.vec").properties
    assert any(k.startswith("hyperstream.") for k in props), props
    got = t.to_arrow(filter="cat = 'c3'")
    assert sorted(got["id"].to_pylist()) == \
        sorted(data.filter(pc.equal(data["cat"], "c3"))["id"].to_pylist())
    q = rng.normal(size=d).astype(np.float32)
    hits = t.search("emb", q, k=10)
    brute = np.argsort(((vec - q) ** 2).sum(axis=1))[:10]
    assert sorted(hits["id"].to_pylist()) == sorted(brute.tolist())
    deleted = t.delete("id < 100")
    assert deleted == 100
    keep = data.filter(pc.greater_equal(data["id"], 100))
    _eq(t.to_arrow(), keep.select(["id", "cat"]).append_column("emb", keep["emb"]))
    pyrows = py.load_table("db.vec").scan(selected_fields=("id", "cat")).to_arrow()
    _eq(pyrows, keep.select(["id", "cat"]))
    s = cat.session("db")
    r = s.sql("SELECT count(*) AS n FROM vec WHERE cat = 'c3'").to_arrow()
    assert r["n"][0].as_py() == keep.filter(pc.equal(keep["cat"], "c3")).num_rows


def test_bad_input(rest_catalog, cat, py):
    with pytest.raises(hdb.NotFoundError, match="NoSuchNamespaceException"):
        cat.list_tables("nope")
    with pytest.raises(hdb.NotFoundError, match=r"load table db\.missing.*404"):
        cat.load_table("db.missing")
    with pytest.raises(hdb.NotFoundError, match=r"drop table db\.missing: HTTP 404.*NoSuchTable"):
        cat.drop_table("db.missing")
    with pytest.raises(hdb.NotFoundError, match="drop namespace nope: HTTP 404"):
        cat.drop_namespace("nope")
    with pytest.raises(hdb.CommitConflictError, match="AlreadyExists"):
        cat.create_namespace("db")
    with pytest.raises(hdb.UnsupportedError, match="REST catalog"):
        cat.create_table("db.orphans", SCHEMA).remove_orphan_files()
    with pytest.raises(hdb.InvalidArgumentError, match="namespace.table"):
        cat.load_table("justaname")
    with pytest.raises(hdb.InvalidArgumentError, match="no catalog connected"):
        hdb.Table("rest://127.0.0.1:1#db.t").to_arrow()
    with pytest.raises(hdb.InvalidArgumentError, match="unknown catalog option"):
        hdb.connect(_rest(rest_catalog), warehouse=WAREHOUSE, color="blue")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    with pytest.raises(hdb.HSIOError, match=r"GET /v1/config.*(refused|connect)"):
        hdb.connect(f"rest://127.0.0.1:{dead}", warehouse=WAREHOUSE, timeout_ms="2000")
    cat.create_table("db.authd", SCHEMA).write(_batch(np.random.default_rng(0), 10, 0))
    proxy = RestProxy(rest_catalog["port"], tokens={"good", "client-credentials-token:sub=hs"},
                      secrets={"hs": "s3cret"})
    try:
        base = f"rest://127.0.0.1:{proxy.port}"
        with pytest.raises(hdb.InvalidArgumentError,
                           match=r"GET /v1/config: HTTP 401: NotAuthorizedException"):
            hdb.connect(base, warehouse=WAREHOUSE, token="wrong")
        with pytest.raises(hdb.InvalidArgumentError, match="OAuth token .*HTTP 401.*bad client"):
            hdb.connect(base, warehouse=WAREHOUSE, credential="hs:wrong")
        with pytest.raises(hdb.InvalidArgumentError, match="client_id:client_secret"):
            hdb.connect(base, warehouse=WAREHOUSE, credential="nocolon")
        good = hdb.connect(base, warehouse=WAREHOUSE, token="good")
        assert "db" in good.list_namespaces()
        oauth = hdb.connect(base + "/", warehouse=WAREHOUSE, credential="hs:s3cret")
        assert "db.authd" in oauth.list_tables("db")
        t = oauth.load_table("db.authd")
        t.write(_batch(np.random.default_rng(1), 10, 100))  # commits with the fetched token
        assert py.load_table("db.authd").scan().to_arrow().num_rows == 20
    finally:
        proxy.close()


def test_metadata_changes_through_the_catalog(cat, py):
    """Schema evolution, a partitioned create, a sort order, rollback, a tag,
    compaction and expiry each commit through the catalog's updates, and
    pyiceberg reads every result."""
    rng = np.random.default_rng(8)
    t = cat.create_table("db.evolve", SCHEMA, partition_spec=["k"], format_version=3)
    a = _batch(rng, 300, 0)
    t.write(a)
    pt = py.load_table("db.evolve")
    assert pt.format_version == 3
    assert [f.name for f in pt.spec().fields] == ["k"]
    t.add_column("extra", pa.string())  # add-schema + set-current-schema
    b = _batch(rng, 200, 1000).append_column("extra", pa.array([f"e{i}" for i in range(200)]))
    t.write(b)
    pt.refresh()
    assert "extra" in [f.name for f in pt.schema().fields]
    expected = pa.concat_tables([a.append_column("extra", pa.nulls(300, pa.string())), b])
    _eq(pt.scan().to_arrow(), expected)
    _eq(t.to_arrow(), expected)
    t.set_sort_order(["id"])  # add-sort-order + set-default-sort-order
    pt.refresh()
    assert [f.source_id for f in pt.sort_order().fields] == [pt.schema().find_field("id").field_id]
    first = t.snapshots()[0].snapshot_id
    t.create_tag("v1", first)  # set-snapshot-ref (a tag)
    pt.refresh()
    assert pt.metadata.refs["v1"].snapshot_id == first
    t.rollback_to_snapshot(first)  # set-snapshot-ref main
    pt.refresh()
    assert pt.metadata.current_snapshot_id == first
    _eq(pt.scan().to_arrow().select(a.column_names), a)
    c = _batch(rng, 100, 5000).append_column("extra", pa.array(["c"] * 100))
    t.write(c)
    expected = pa.concat_tables([a.append_column("extra", pa.nulls(300, pa.string())), c])
    t.compact(min_input_files=2)  # a replace snapshot
    pt.refresh()
    assert pt.current_snapshot().summary.operation.value == "replace"
    _eq(pt.scan().to_arrow(), expected)
    n_before = len(t.snapshots())
    res = t.expire_snapshots(retain_last=1)  # remove-snapshots
    pt.refresh()
    assert len(pt.metadata.snapshots) == len(t.snapshots()) < n_before, res
    _eq(pt.scan().to_arrow(), expected)
    _eq(t.to_arrow(), expected)


def test_max_staleness(rest_catalog, py):
    """max_staleness_ms lets reads keep what the handle holds; commits still
    start from the catalog's latest and lose nothing."""
    port = rest_catalog["port"]
    c = hdb.connect(f"rest://localhost:{port}", warehouse=WAREHOUSE, max_staleness_ms="60000")
    t = c.create_table("db.stale", SCHEMA)
    rng = np.random.default_rng(9)
    a, theirs, ours = _batch(rng, 40, 0), _batch(rng, 30, 1000), _batch(rng, 20, 2000)
    t.write(a)
    py.load_table("db.stale").append(theirs)
    _eq(t.to_arrow(), a)  # within the bound: no GET
    t.write(ours)  # the commit loads the latest first
    expected = pa.concat_tables([a, theirs, ours])
    _eq(t.to_arrow(), expected)
    _eq(py.load_table("db.stale").scan().to_arrow(), expected)
    with pytest.raises(hdb.InvalidArgumentError, match="max_staleness_ms"):
        hdb.connect(f"rest://localhost:{port}", warehouse=WAREHOUSE, max_staleness_ms="-1")


def test_commit_outcome_unknown(rest_catalog, py):
    """A 503 for a commit the server applied (the answer lost) or refused:
    the client reloads and looks for its snapshot, so the rows land exactly
    once either way; a metadata-only change it cannot look for is a clear
    error."""
    proxy = RestProxy(rest_catalog["port"])
    try:
        c = hdb.connect(f"rest://127.0.0.1:{proxy.port}", warehouse=WAREHOUSE)
        t = c.create_table("db.unknown", SCHEMA)
        rng = np.random.default_rng(13)
        a, b = _batch(rng, 25, 0), _batch(rng, 35, 100)
        proxy.commit_fault = "lost"
        t.write(a)
        proxy.commit_fault = "refused"
        t.write(b)
        posts = [s for (m, p, s) in proxy.log if m == "POST" and p.endswith("/tables/unknown")]
        assert posts == [503, 503, 200], posts  # lost: found after a reload; refused: retried
        expected = pa.concat_tables([a, b])
        _eq(t.to_arrow(), expected)
        pt = py.load_table("db.unknown")
        _eq(pt.scan().to_arrow(), expected)
        assert len(pt.metadata.snapshots) == 2
        proxy.commit_fault = "refused"
        with pytest.raises(hdb.HSIOError, match="commit state unknown.*503"):
            t.add_column("z", pa.int32())
    finally:
        proxy.close()
    # The catalog gone mid-session: a clear error, nothing committed.
    with pytest.raises(hdb.HSIOError, match=r"load table db\.unknown.*(refused|connect|nothing)"):
        t.write(_batch(rng, 5, 900))
    _eq(py.load_table("db.unknown").scan().to_arrow(), expected)


def test_config_prefix_and_uri(rest_catalog, py):
    """GET /v1/config's overrides win over its defaults: every later call goes
    to /v1/{prefix}/..., and an override "uri" moves the client to another
    base."""
    proxy = RestProxy(rest_catalog["port"])
    other = RestProxy(rest_catalog["port"])
    try:
        proxy.overrides = {"prefix": "wh1"}
        c = hdb.connect(f"rest://127.0.0.1:{proxy.port}", warehouse=WAREHOUSE)
        t = c.create_table("db.prefixed", SCHEMA)
        a = _batch(np.random.default_rng(2), 30, 0)
        t.write(a)
        _eq(py.load_table("db.prefixed").scan().to_arrow(), a)
        paths = [p for (m, p, s) in proxy.log if p != "/v1/config?warehouse=wh"]
        assert paths and all(p.startswith("/v1/wh1/") for p in paths), paths
        other.overrides = {"uri": f"http://127.0.0.1:{proxy.port}/", "prefix": "wh1"}
        proxy.log.clear()
        c2 = hdb.connect(f"rest://127.0.0.1:{other.port}", warehouse=WAREHOUSE)
        assert "db.prefixed" in c2.list_tables("db")  # through `proxy`
        assert [p for (m, p, s) in other.log] == ["/v1/config?warehouse=wh"]
    finally:
        proxy.close()
        other.close()
