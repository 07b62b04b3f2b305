"""Iceberg manifests and manifest lists against pyiceberg, both ways.

(a) We write: Parquet data files (pyarrow, field ids through
    PARQUET:field_id), then our C code (the HS_MANIFEST_BUILD=1 driver mode
    of tests/c/test_manifest.c) computes the data-file metrics from each
    footer, writes a manifest, a manifest list and the next metadata JSON.
    pyiceberg's StaticTable must return exactly the rows, and its
    inspect.files()/entries() must show our counts, sizes and bounds.
(b) pyiceberg writes (SQL catalog on SQLite; appends, identity-partitioned
    tables); our reader (HS_MANIFEST_DUMP=<manifest list>) must see the same
    entries, paths, counts, partition values and bounds as inspect.files().
"""

import json
import os
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pyiceberg = pytest.importorskip("pyiceberg")
from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402
from pyiceberg.partitioning import PartitionField, PartitionSpec, UNPARTITIONED_PARTITION_SPEC  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.table import StaticTable  # noqa: E402
from pyiceberg.table.metadata import new_table_metadata  # noqa: E402
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER  # noqa: E402
from pyiceberg.transforms import IdentityTransform  # noqa: E402
from pyiceberg.types import (  # noqa: E402
    DoubleType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    ListType,
)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="module")
def driver():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    path = os.path.join(build, "test_manifest")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (set HS_BUILD_DIR)")
    return path


def run_driver(exe, env_extra, stdin=""):
    env = dict(os.environ, **env_extra)
    p = subprocess.run([exe], input=stdin.encode(), capture_output=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    return p.stdout.decode()


SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "cat", StringType(), required=False),
    NestedField(3, "score", DoubleType(), required=False),
    NestedField(4, "ts", TimestampType(), required=False),
    NestedField(5, "tags", ListType(6, StringType(), element_required=False), required=False),
)


def arrow_schema():
    def f(name, typ, fid, nullable=True):
        return pa.field(name, typ, nullable=nullable, metadata={b"PARQUET:field_id": str(fid).encode()})

    return pa.schema(
        [
            f("id", pa.int64(), 1, nullable=False),
            f("cat", pa.string(), 2),
            f("score", pa.float64(), 3),
            f("ts", pa.timestamp("us"), 4),
            f("tags", pa.list_(f("element", pa.string(), 6)), 5),
        ]
    )


def make_rows(start, n, cat):
    long = "x" * 40
    return {
        "id": list(range(start, start + n)),
        "cat": [cat if i % 5 else None for i in range(n)],
        "score": [float(i) / 3 if i % 7 else None for i in range(n)],
        "ts": [1_700_000_000_000_000 + i * 1_000_000 for i in range(n)],
        "tags": [[f"t{i}", long + str(i)] if i % 4 else None for i in range(n)],
    }


def write_parquet(path, rows, row_group_size=None):
    tbl = pa.Table.from_pydict(rows, schema=arrow_schema())
    pq.write_table(tbl, path, row_group_size=row_group_size)
    return tbl


def base_metadata(location, spec, fv):
    md = new_table_metadata(SCHEMA, spec, UNSORTED_SORT_ORDER, location, {})
    doc = json.loads(md.model_dump_json(exclude_none=True))
    if fv == 3:
        doc["format-version"] = 3
        doc["next-row-id"] = 0
    return doc


@pytest.mark.parametrize("fv", [2, 3])
@pytest.mark.parametrize("partitioned", [False, True])
def test_pyiceberg_reads_our_manifests(driver, tmp_path, fv, partitioned):
    loc = tmp_path / "t"
    (loc / "data").mkdir(parents=True)
    (loc / "metadata").mkdir()
    spec = (
        PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "cat"))
        if partitioned
        else UNPARTITIONED_PARTITION_SPEC
    )
    doc = base_metadata(str(loc), spec, fv)
    v0 = loc / "metadata" / "v0.metadata.json"
    v0.write_text(json.dumps(doc))
    expected = []
    lines = [f"base {v0}", f"out {loc / 'metadata' / 'v1.metadata.json'}", f"dir {loc / 'metadata'}",
             "snapshot 1234567"]
    for k, cat in enumerate(["alpha", "beta", "gamma"]):
        p = loc / "data" / f"f{k}.parquet"
        rows = make_rows(k * 1000, 60 + k, cat)
        if partitioned:
            rows["cat"] = [cat] * len(rows["id"])
        expected.append(write_parquet(str(p), rows, row_group_size=25))
        lines.append(f"file {p}" + (f" {cat}" if partitioned else ""))
    run_driver(driver, {"HS_MANIFEST_BUILD": "1"}, "\n".join(lines) + "\n")

    t = StaticTable.from_metadata(str(loc / "metadata" / "v1.metadata.json"))
    got = t.scan().to_arrow().sort_by("id")
    want = pa.concat_tables(expected).sort_by("id")
    assert got.num_rows == want.num_rows
    for name in ["id", "cat", "score", "ts", "tags"]:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name

    files = t.inspect.files().sort_by("file_path").to_pylist()
    assert len(files) == 3
    for k, f in enumerate(files):
        p = str(loc / "data" / f"f{k}.parquet")
        assert f["file_path"] == p
        assert f["file_format"] == "PARQUET"
        assert f["record_count"] == 60 + k
        assert f["file_size_in_bytes"] == os.path.getsize(p)
        md = pq.ParquetFile(p).metadata
        vc = dict(f["value_counts"])
        nc = dict(f["null_value_counts"])
        lo = dict(f["lower_bounds"])
        hi = dict(f["upper_bounds"])
        assert vc[1] == 60 + k and nc[1] == 0
        assert nc[2] == (0 if partitioned else sum(1 for i in range(60 + k) if i % 5 == 0))
        assert nc[3] == sum(1 for i in range(60 + k) if i % 7 == 0)
        assert 6 in vc and 6 not in lo  # list element: counts, no bounds
        assert int.from_bytes(lo[1], "little", signed=True) == k * 1000
        assert int.from_bytes(hi[1], "little", signed=True) == k * 1000 + 59 + k
        assert lo[2].decode() == ["alpha", "beta", "gamma"][k]
        cs = dict(f["column_sizes"])
        assert cs[1] == sum(md.row_group(g).column(0).total_compressed_size for g in range(md.num_row_groups))
        def start(g):
            c = md.row_group(g).column(0)
            return min(x for x in (c.dictionary_page_offset, c.data_page_offset) if x)

        assert list(f["split_offsets"]) == sorted(start(g) for g in range(md.num_row_groups))
        if partitioned:
            assert f["partition"] == {"cat": ["alpha", "beta", "gamma"][k]}
    entries = t.inspect.entries().to_pylist()
    assert {e["status"] for e in entries} == {1}
    assert {e["snapshot_id"] for e in entries} == {1234567}
    assert {e["sequence_number"] for e in entries} == {1}
    # A filter on the partition/bounds prunes with our metrics.
    assert t.scan(row_filter="id >= 2000").to_arrow().num_rows == 62
    # And our reader reads what we wrote (inheritance from the list entry).
    snap = t.current_snapshot()
    dump = [json.loads(x) for x in run_driver(driver, {"HS_MANIFEST_DUMP": snap.manifest_list}).splitlines()]
    ents = [d for d in dump if d["kind"] == "entry"]
    assert [e["snapshot_id"] for e in ents] == [1234567] * 3
    if fv == 3:
        assert [e["first_row_id"] for e in ents] == [0, 60, 121]


def test_truncated_string_bounds(driver, tmp_path):
    """truncate(16): pyiceberg prunes correctly with our truncated bounds."""
    loc = tmp_path / "t"
    (loc / "data").mkdir(parents=True)
    (loc / "metadata").mkdir()
    doc = base_metadata(str(loc), UNPARTITIONED_PARTITION_SPEC, 2)
    v0 = loc / "metadata" / "v0.metadata.json"
    v0.write_text(json.dumps(doc))
    p = loc / "data" / "f.parquet"
    rows = make_rows(0, 10, "c")
    rows["cat"] = ["a" * 30 + str(i) for i in range(9)] + ["\U0010ffff" * 20]
    write_parquet(str(p), rows)
    run_driver(
        driver,
        {"HS_MANIFEST_BUILD": "1"},
        f"base {v0}\nout {loc / 'metadata' / 'v1.metadata.json'}\ndir {loc / 'metadata'}\nsnapshot 9\nfile {p}\n",
    )
    t = StaticTable.from_metadata(str(loc / "metadata" / "v1.metadata.json"))
    f = t.inspect.files().to_pylist()[0]
    lo, hi = dict(f["lower_bounds"]), dict(f["upper_bounds"])
    assert lo[2] == b"a" * 16
    assert 2 not in hi  # U+10FFFF x 16 cannot be incremented
    assert t.scan(row_filter=f"cat = '{'a' * 30}5'").to_arrow().num_rows == 1


# ------------------------------------------------------ pyiceberg writes


def catalog(tmp_path):
    wh = tmp_path / "wh"
    wh.mkdir()
    return SqlCatalog("t", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=f"file://{wh}")


@pytest.mark.parametrize("partitioned", [False, True])
def test_we_read_pyiceberg_manifests(driver, tmp_path, partitioned):
    cat = catalog(tmp_path)
    cat.create_namespace("ns")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "cat", StringType(), required=False),
        NestedField(3, "score", DoubleType(), required=False),
    )
    spec = (
        PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "cat"))
        if partitioned
        else UNPARTITIONED_PARTITION_SPEC
    )
    tbl = cat.create_table("ns.x", schema=schema, partition_spec=spec)
    for k in range(3):
        n = 20 + k
        data = pa.table(
            {
                "id": pa.array(range(k * 100, k * 100 + n), pa.int64()),
                "cat": pa.array([["a", "b", None][(i + k) % 3] for i in range(n)], pa.string()),
                "score": pa.array([i * 0.5 if i % 4 else None for i in range(n)], pa.float64()),
            }
        )
        tbl.append(data)
    tbl = cat.load_table("ns.x")
    snap = tbl.current_snapshot()
    dump = [json.loads(x) for x in run_driver(driver, {"HS_MANIFEST_DUMP": snap.manifest_list}).splitlines()]
    ents = sorted((d for d in dump if d["kind"] == "entry"), key=lambda d: d["file_path"])
    mans = [d for d in dump if d["kind"] == "manifest"]
    files = sorted(tbl.inspect.files().to_pylist(), key=lambda f: f["file_path"])
    pe = sorted(tbl.inspect.entries().to_pylist(), key=lambda e: e["data_file"]["file_path"])
    assert len(ents) == len(files) == len(pe) >= 3
    assert len(mans) == len(tbl.inspect.manifests().to_pylist())
    assert sum(m["added_rows"] for m in mans if m["added_snapshot_id"] == snap.snapshot_id) >= 0
    for e, f, p in zip(ents, files, pe):
        assert e["file_path"] == f["file_path"]
        assert e["record_count"] == f["record_count"]
        assert e["file_size_in_bytes"] == f["file_size_in_bytes"]
        assert e["status"] == p["status"]
        assert e["snapshot_id"] == p["snapshot_id"]
        assert e["sequence_number"] == p["sequence_number"]
        assert e["file_sequence_number"] == p["file_sequence_number"]
        m = e["metrics"]
        for fid, v in (f["value_counts"] or {}).items() if isinstance(f["value_counts"], dict) else f["value_counts"]:
            assert m[str(fid)]["values"] == v
        for fid, v in f["null_value_counts"]:
            assert m[str(fid)]["nulls"] == v
        for fid, v in f["lower_bounds"]:
            assert m[str(fid)]["lower"] == v.hex()
        for fid, v in f["upper_bounds"]:
            assert m[str(fid)]["upper"] == v.hex()
        if partitioned:
            assert e["partition"] == [f["partition"]["cat"]]
        else:
            assert e["partition"] == []
