"""A REST catalog whose warehouse is on S3: Apache Iceberg's RESTCatalogServer
with S3FileIO (iceberg-aws, from build/jars/rest) over a local versitygw, our
Catalog on one side and pyiceberg's RestCatalog (its own S3 FileIO) on the
other, both writing and each reading what the other wrote; every object the
two engines make lies under the warehouse prefix of the bucket."""
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hyperstreamdb as hdb
from conftest_rest import JARS, RestProxy, start_server, stop_server
from test_s3_tables import ACCESS, BUCKET, SECRET, s3  # noqa: F401

WAREHOUSE = f"s3://{BUCKET}/restwh"


@pytest.fixture(scope="module")
def server(s3):  # noqa: F811
    if not (JARS / "iceberg-aws-bundle-1.10.0.jar").exists():
        pytest.skip("iceberg-aws-bundle missing (scripts/setup.sh test fetches it)")
    env = {"CATALOG_IO__IMPL": "org.apache.iceberg.aws.s3.S3FileIO",
           "CATALOG_S3_ENDPOINT": s3["endpoint"],
           "CATALOG_S3_PATH__STYLE__ACCESS": "true",
           "CATALOG_S3_ACCESS__KEY__ID": ACCESS,
           "CATALOG_S3_SECRET__ACCESS__KEY": SECRET,
           "CATALOG_CLIENT_REGION": "us-east-1",
           "AWS_REGION": "us-east-1"}
    srv = start_server(WAREHOUSE, env)
    yield srv
    stop_server(srv)


@pytest.fixture(scope="module")
def cat(server, s3):  # noqa: F811
    c = hdb.connect("rest://" + server["uri"].split("://", 1)[1], warehouse=WAREHOUSE,
                    storage_options=s3["options"])
    c.create_namespace("lake", exist_ok=True)
    return c


@pytest.fixture(scope="module")
def py(server, s3):  # noqa: F811
    from pyiceberg.catalog.rest import RestCatalog
    return RestCatalog("peer", uri=server["uri"], warehouse=WAREHOUSE,
                       **{"s3.endpoint": s3["endpoint"], "s3.access-key-id": ACCESS,
                          "s3.secret-access-key": SECRET, "s3.region": "us-east-1"})


def _batch(rng, n, start, d=4):
    vec = rng.normal(size=(n, d)).astype(np.float32)
    return pa.table({
        "id": pa.array(np.arange(start, start + n, dtype=np.int64)),
        "k": pa.array(rng.integers(0, 30, n).astype(np.int64),
                      mask=rng.random(n) < 0.1),
        "s": pa.array([f"s{v}" for v in rng.integers(0, 40, n)]),
        "emb": pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), d),
    })


def _peer_append(py, ident, data):
    """pyiceberg's append; versitygw refuses pyarrow's CompleteMultipartUpload
    now and then (HTTP 400 "parsing the HTTP request", before the commit, so
    nothing was committed): such an append is retried on the reloaded table."""
    for attempt in range(6):
        t = py.load_table(ident)
        try:
            t.append(data.cast(t.schema().as_arrow()))
            return
        except OSError as e:
            if "CompleteMultipartUpload" not in str(e) or attempt == 5:
                raise


def _ids(t):
    return sorted(t["id"].to_pylist())


def _objects(s3):  # noqa: F811
    from pyarrow import fs as pafs
    f = pafs.S3FileSystem(endpoint_override=s3["endpoint"], scheme="http", access_key=ACCESS,
                          secret_key=SECRET, region="us-east-1")
    return [i.path for i in f.get_file_info(pafs.FileSelector(BUCKET, recursive=True))
            if i.type == pafs.FileType.File]


def test_both_engines_write_and_read_on_s3(cat, py, s3):  # noqa: F811
    rng = np.random.default_rng(5)
    before = set(_objects(s3))
    first = _batch(rng, 1500, 0)
    t = cat.create_table("lake.events", first.schema)
    t.write(first)
    assert t.uri.startswith("rest://")
    peer = py.load_table("lake.events")
    assert len(peer.snapshots()) == 1
    assert peer.location().startswith(f"{WAREHOUSE}/"), peer.location()
    got = peer.scan(selected_fields=("id", "k", "s")).to_arrow()
    assert got.sort_by("id").equals(first.select(["id", "k", "s"]).sort_by("id"))
    # pyiceberg appends through the catalog (it has no fixed-size list type:
    # it writes the column as a list<float>, which we read back as vectors)
    second = _batch(rng, 700, 1500)
    _peer_append(py, "lake.events", second)
    want = pa.concat_tables([first, second])
    mine = t.to_arrow()
    assert _ids(mine) == _ids(want)
    assert mine.sort_by("id")["s"].to_pylist() == want.sort_by("id")["s"].to_pylist()
    # an index and a filtered, vector search against brute force
    t.add_index("s", "bitmap")
    t.wait_for_indexes()
    sel = t.to_arrow(filter="s = 's7' AND k > 10")
    mask = pc.and_(pc.equal(want["s"], "s7"), pc.greater(want["k"], 10))
    assert _ids(sel) == _ids(want.filter(mask))
    vec = np.stack(want["emb"].to_numpy(zero_copy_only=False))
    q = rng.normal(size=4).astype(np.float32)
    hits = t.search("emb", q, k=10)
    brute = want["id"].to_numpy()[np.argsort(((vec - q) ** 2).sum(axis=1))[:10]]
    assert sorted(hits["id"].to_pylist()) == sorted(brute.tolist())
    # a row delete by us, read by pyiceberg
    assert t.delete("id < 200") == 200
    rows = py.load_table("lake.events").scan(selected_fields=("id",)).to_arrow()
    assert _ids(rows) == [i for i in _ids(want) if i >= 200]
    # everything either engine wrote is under the warehouse prefix
    new = set(_objects(s3)) - before
    assert new and all(p.startswith(f"{BUCKET}/restwh/") for p in new), sorted(new)[:5]


def test_table_made_by_pyiceberg_is_read_and_changed_by_us(cat, py):
    rng = np.random.default_rng(9)
    data = _batch(rng, 900, 0).drop_columns(["emb"])
    py.create_table("lake.theirs", schema=data.schema)
    _peer_append(py, "lake.theirs", data)
    t = cat.load_table("lake.theirs")
    assert _ids(t.to_arrow()) == _ids(data)
    extra = _batch(rng, 100, 900).drop_columns(["emb"])
    t.write(extra)
    assert t.delete("k = 3") == int(pc.sum(pc.equal(
        pa.concat_tables([data, extra])["k"], 3)).as_py() or 0)
    both = pa.concat_tables([data, extra])
    keep = both.filter(pc.invert(pc.fill_null(pc.equal(both["k"], 3), False)))
    got = py.load_table("lake.theirs").scan().to_arrow()
    assert _ids(got) == _ids(keep)


def test_bad_storage_option_fails_at_connect(server, s3):  # noqa: F811
    uri = "rest://" + server["uri"].split("://", 1)[1]
    with pytest.raises(hdb.InvalidArgumentError, match="endpointt"):
        hdb.connect(uri, warehouse=WAREHOUSE, storage_options={"endpointt": s3["endpoint"]})


def test_storage_config_the_catalog_vends(server, s3, cat, py):  # noqa: F811
    """A catalog that vends a table's storage configuration (LoadTableResult
    "config", e.g. short-lived credentials): the table's objects are read and
    written with it, over the catalog's own options, as Iceberg's clients do.
    versitygw checks signatures: a wrong secret fails until the catalog
    vends the right one. Keys for other clients are ignored."""
    rng = np.random.default_rng(31)
    data = _batch(rng, 200, 0).drop_columns(["emb"])
    # Written by pyiceberg: no object of it is in this process's S3 cache.
    py.create_table("lake.vended", schema=data.schema)
    _peer_append(py, "lake.vended", data)
    uri = "rest://" + server["uri"].split("://", 1)[1]
    proxy = RestProxy(server["port"])
    try:
        wrong = dict(s3["options"], aws_secret_access_key="not-the-secret")
        c = hdb.connect(f"rest://127.0.0.1:{proxy.port}", warehouse=WAREHOUSE,
                        storage_options=wrong)
        with pytest.raises(hdb.HyperStreamError, match="403|Signature"):
            c.load_table("lake.vended").to_arrow()
        proxy.table_config = {"s3.secret-access-key": SECRET, "client.region": "us-east-1",
                              "s3.signer.uri": "http://127.0.0.1:1/not-used"}
        t = c.load_table("lake.vended")
        assert _ids(t.to_arrow()) == _ids(data)
        more = _batch(rng, 50, 1000).drop_columns(["emb"])
        t.write(more)
        got = py.load_table("lake.vended").scan().to_arrow()
        assert _ids(got) == _ids(pa.concat_tables([data, more]))
    finally:
        proxy.close()
        # The storage options are per location, process-wide: give the shared
        # catalog's back.
        hdb.connect(uri, warehouse=WAREHOUSE, storage_options=s3["options"])
        cat.load_table("lake.vended")

