"""The `hyperstream` CLI on tables of an Iceberg REST catalog (rest://...#ns.t):
create, write, scan, snapshots, delete, inspect and `catalog` listings, run
as the built binary against Apache Iceberg's RESTCatalogServer
(conftest_rest.py), with pyiceberg's RestCatalog reading every result and a
random oracle in numpy/pyarrow."""
import json
import os
import subprocess

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest_rest import RestProxy, rest_catalog  # noqa: F401
from test_cli_changes import _exe

WAREHOUSE = "wh"


def _rest(server):
    return "rest://" + server["uri"].split("://", 1)[1]


def run(*args, rc=0, env=None):
    e = dict(os.environ, HS_CATALOG_WAREHOUSE=WAREHOUSE)
    e.update(env or {})
    r = subprocess.run([_exe(), *map(str, args)], capture_output=True, text=True, timeout=120,
                       env=e)
    assert r.returncode == rc, f"{args}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def py(rest_catalog):  # noqa: F811
    from pyiceberg.catalog.rest import RestCatalog
    c = RestCatalog("peer", uri=rest_catalog["uri"], warehouse=WAREHOUSE)
    c.create_namespace_if_not_exists("clidb")
    return c


def _parquet(tmp_path, name, rng, start, n):
    t = pa.table({
        "id": pa.array(np.arange(start, start + n, dtype=np.int64)),
        "k": pa.array(rng.integers(0, 20, n).astype(np.int64)),
        "s": pa.array([f"s{v}" for v in rng.integers(0, 50, n)]),
    })
    p = tmp_path / name
    pq.write_table(t, p)
    return p, t


def test_create_write_scan_delete_through_the_catalog(rest_catalog, py, tmp_path):  # noqa: F811
    base = _rest(rest_catalog)
    uri = f"{base}#clidb.events"
    rng = np.random.default_rng(7)
    run("create", uri, "--schema", "id:int64,k:int64,s:string")
    expect = []
    for i in range(3):
        p, t = _parquet(tmp_path, f"b{i}.parquet", rng, i * 1000, 1000)
        run("write", uri, p)
        expect.append(t)
    want = pa.concat_tables(expect)
    # pyiceberg sees our three commits through the catalog
    peer = py.load_table("clidb.events")
    assert len(peer.snapshots()) == 3
    assert peer.scan().to_arrow().sort_by("id").equals(want.sort_by("id"))
    # scan with a filter, against pyarrow's answer
    out = run("scan", uri, "--filter", "k < 5 AND s <> 's3'", "--columns", "id",
              "--limit", "100000", "--csv").stdout.splitlines()
    got = sorted(int(v) for v in out[1:])
    mask = np.logical_and(want["k"].to_numpy() < 5,
                          np.array(want["s"].to_pylist()) != "s3")
    assert got == sorted(want["id"].to_numpy()[mask].tolist())
    # snapshots lists what pyiceberg lists
    snaps = run("snapshots", uri).stdout
    for s in peer.snapshots():
        assert str(s.snapshot_id) in snaps
    # a delete through the CLI, read by pyiceberg
    deleted = run("delete", uri, "--filter", "k = 3").stdout
    n3 = int((want["k"].to_numpy() == 3).sum())
    assert str(n3) in deleted.replace(",", "")
    peer = py.load_table("clidb.events")
    rows = peer.scan().to_arrow()
    assert rows.num_rows == want.num_rows - n3
    assert 3 not in set(rows["k"].to_pylist())
    # inspect names the catalog's metadata file
    text = run("inspect", uri).stdout
    assert "Iceberg v" in text and peer.metadata_location.split("/")[-1] in text


def test_catalog_listing(rest_catalog, py):  # noqa: F811
    base = _rest(rest_catalog)
    py.create_namespace_if_not_exists("clilist")
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField
    for name in ("a", "b"):
        if not py.table_exists(f"clilist.{name}"):
            py.create_table(f"clilist.{name}", Schema(NestedField(1, "id", LongType())))
    rows = json.loads(run("catalog", base, "clilist", "--json").stdout)
    assert sorted(r["name"] for r in rows if r["kind"] == "table") == ["clilist.a", "clilist.b"]
    everything = run("catalog", base).stdout
    want_ns = {".".join(ns) for ns in py.list_namespaces()}
    for ns in want_ns:
        assert f"namespace {ns}" in everything
    assert "table     clilist.a" in everything


def test_credentials_from_the_environment(rest_catalog, py):  # noqa: F811
    proxy = RestProxy(rest_catalog["port"], tokens={"tok-1"})
    try:
        base = f"rest://127.0.0.1:{proxy.port}"
        py.create_namespace_if_not_exists("cliauth")
        r = run("catalog", base, rc=1)
        assert "401" in r.stderr and "127.0.0.1" in r.stderr
        out = run("catalog", base, "cliauth", env={"HS_CATALOG_TOKEN": "tok-1"})
        assert out.returncode == 0
        # the token travels in a header, never on the command line
        assert all("tok-1" not in p for (_, p, _) in proxy.log)
    finally:
        proxy.close()


def test_bad_input(rest_catalog):  # noqa: F811
    base = _rest(rest_catalog)
    r = run("scan", f"{base}#clidb.no_such_table", rc=1)
    assert "no_such_table" in r.stderr
    r = run("scan", f"{base}#notanident", rc=1)
    assert "namespace.table" in r.stderr
    r = run("catalog", "rest://127.0.0.1:1", rc=1)
    assert "127.0.0.1:1" in r.stderr
    r = run("catalog", f"{base}#clidb.x", rc=2)
    assert "not a catalog URI" in r.stderr
    r = run("catalog", rc=2)
    assert "missing URI" in r.stderr
