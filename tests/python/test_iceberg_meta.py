"""Iceberg metadata layer against pyiceberg, the outside oracle.

Metadata: pyiceberg (SQL catalog on SQLite in a tmp dir) creates tables with
various schemas, partition specs (and their evolution), sort orders,
properties, appends and tags; our C codec (the filter mode of
tests/c/test_iceberg_meta.c, HS_ICEBERG_ROUNDTRIP=1) parses each metadata
file and writes it back, and pyiceberg's parse of our output must equal its
parse of the original. pyiceberg 0.12 cannot write format v3, so v3
documents are derived from its v2 output the way a v3 writer would extend it
(format-version, next-row-id, snapshot first-row-id/added-rows, v3 types,
defaults) and compared the same way.

Hashes: bucket values (HS_ICEBERG_HASH=1 filter mode) equal pyiceberg's
BucketTransform over random values of every bucketable type (hypothesis).
"""

import copy
import datetime
import decimal
import json
import os
import struct
import subprocess
import uuid

import pyarrow as pa
import pytest

pyiceberg = pytest.importorskip("pyiceberg")
from hypothesis import given, settings, strategies as st  # noqa: E402
from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.table.metadata import TableMetadataUtil  # noqa: E402
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder  # noqa: E402
from pyiceberg.transforms import (  # noqa: E402
    BucketTransform,
    IdentityTransform,
    DayTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from pyiceberg.types import (  # noqa: E402
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _exe():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "test_iceberg_meta")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (set HS_BUILD_DIR)")
    return path


def roundtrip(text: str) -> str:
    r = subprocess.run(
        [_exe()], input=text.encode(), capture_output=True, env={**os.environ, "HS_ICEBERG_ROUNDTRIP": "1"}
    )
    out = r.stdout.decode()
    assert r.returncode == 0, out + r.stderr.decode()
    return out


def assert_same(original: str):
    ours = roundtrip(original)
    assert TableMetadataUtil.parse_raw(ours) == TableMetadataUtil.parse_raw(original)
    # And our writer is a fixed point of itself.
    assert roundtrip(ours) == ours
    return ours


@pytest.fixture()
def catalog(tmp_path):
    cat = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("ns")
    return cat


def metadata_text(table) -> str:
    with open(table.metadata_location.replace("file://", "")) as f:
        return f.read()


NESTED = Schema(
    NestedField(1, "id", LongType(), required=True, doc="row key"),
    NestedField(2, "flag", BooleanType(), required=False),
    NestedField(3, "i", IntegerType(), required=False),
    NestedField(4, "f", FloatType(), required=False),
    NestedField(5, "d", DoubleType(), required=False),
    NestedField(6, "price", DecimalType(9, 2), required=False),
    NestedField(7, "day", DateType(), required=False),
    NestedField(8, "t", TimeType(), required=False),
    NestedField(9, "ts", TimestampType(), required=False),
    NestedField(10, "tstz", TimestamptzType(), required=False),
    NestedField(11, "u", UUIDType(), required=False),
    NestedField(12, "fx", FixedType(16), required=False),
    NestedField(13, "bin", BinaryType(), required=False),
    NestedField(14, "tags", ListType(15, StringType(), element_required=False), required=False),
    NestedField(
        16,
        "attrs",
        MapType(17, StringType(), 18, StructType(NestedField(19, "x", DoubleType(), required=False)), value_required=True),
        required=False,
    ),
    NestedField(20, "pt", StructType(NestedField(21, "lat", DoubleType(), required=True)), required=False),
    NestedField(22, "vec", ListType(23, FloatType(), element_required=True), required=False),
    identifier_field_ids=[1],
)


def _tables(catalog):
    """Metadata texts from several pyiceberg tables and their histories."""
    texts = []
    t = catalog.create_table(
        "ns.nested",
        NESTED,
        partition_spec=PartitionSpec(
            PartitionField(1, 1000, BucketTransform(16), "id_bucket"),
            PartitionField(9, 1001, DayTransform(), "ts_day"),
            PartitionField(3, 1002, TruncateTransform(4), "i_trunc"),
            PartitionField(7, 1003, YearTransform(), "day_year"),
            PartitionField(10, 1004, MonthTransform(), "tstz_month"),
        ),
        sort_order=SortOrder(
            SortField(source_id=1, transform=IdentityTransform(), direction=SortDirection.DESC, null_order=NullOrder.NULLS_LAST),
            SortField(source_id=3, transform=BucketTransform(4)),
        ),
        properties={"format-version": "2", "hyperstream.vector.22.dimension": "4", "owner": "x"},
    )
    texts.append(metadata_text(t))
    with t.update_schema() as u:
        u.add_column("note", StringType(), doc="added later")
    texts.append(metadata_text(catalog.load_table("ns.nested")))

    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "s", StringType(), required=False),
        NestedField(3, "ts", TimestampType(), required=False),
    )
    for name, spec in [("plain", PartitionSpec()), ("byident", PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "s")))]:
        t = catalog.create_table(f"ns.{name}", schema, partition_spec=spec, properties={"format-version": "2"})
        texts.append(metadata_text(t))
        for i in range(3):
            t.append(
                pa.table(
                    {
                        "id": pa.array([i, i + 1], pa.int64()),
                        "s": ["a", "b"],
                        "ts": pa.array([datetime.datetime(2020, 1, 1 + i)] * 2, pa.timestamp("us")),
                    },
                    schema=t.schema().as_arrow(),
                )
            )
            texts.append(metadata_text(t))
        t.overwrite(pa.table({"id": pa.array([9], pa.int64()), "s": ["z"], "ts": pa.array([None], pa.timestamp("us"))}, schema=t.schema().as_arrow()))
        texts.append(metadata_text(t))
        with t.update_spec() as u:
            u.add_field("id", BucketTransform(8), "id_b")
            u.add_field("ts", DayTransform(), "ts_d")
        t.manage_snapshots().create_tag(t.current_snapshot().snapshot_id, "v1").commit()
        t = catalog.load_table(f"ns.{name}")
        texts.append(metadata_text(t))
    return texts


def test_roundtrip_pyiceberg_v2(catalog):
    texts = _tables(catalog)
    assert len(texts) >= 10
    for text in texts:
        assert_same(text)


def _to_v3(text: str) -> str:
    """Extend pyiceberg's v2 output as a v3 writer would."""
    d = json.loads(text)
    d["format-version"] = 3
    next_row = 0
    for s in d.get("snapshots", []):
        added = int(s["summary"].get("added-records", "0"))
        s["first-row-id"] = next_row
        s["added-rows"] = added
        next_row += added
    d["next-row-id"] = next_row
    schema = copy.deepcopy(d["schemas"][-1])
    schema["schema-id"] = max(s["schema-id"] for s in d["schemas"]) + 1
    top = d["last-column-id"]
    schema["fields"] += [
        {"id": top + 1, "name": "ns_ts", "required": False, "type": "timestamp_ns"},
        {"id": top + 2, "name": "ns_tstz", "required": False, "type": "timestamptz_ns"},
        {"id": top + 3, "name": "nothing", "required": False, "type": "unknown"},
        {"id": top + 4, "name": "dflt", "required": True, "type": "int", "initial-default": 7, "write-default": 8},
        {"id": top + 5, "name": "sdflt", "required": False, "type": "string", "initial-default": "a", "write-default": "b"},
    ]
    d["schemas"].append(schema)
    d["current-schema-id"] = schema["schema-id"]
    d["last-column-id"] = top + 5
    return json.dumps(d, indent=1)


def test_roundtrip_pyiceberg_v3(catalog):
    for text in _tables(catalog):
        v3 = _to_v3(text)
        ours = assert_same(v3)
        parsed = TableMetadataUtil.parse_raw(ours)
        assert parsed.format_version == 3
        assert parsed.next_row_id == json.loads(v3)["next-row-id"]


def test_unknown_keys_survive(catalog):
    t = catalog.create_table("ns.k", Schema(NestedField(1, "a", IntegerType(), required=False)), properties={"format-version": "2"})
    d = json.loads(metadata_text(t))
    d["x-extension"] = {"nested": [1, "two", None, True]}
    ours = json.loads(roundtrip(json.dumps(d)))
    assert ours["x-extension"] == d["x-extension"]


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: d["schemas"][0]["fields"][0].update(type="strin"), "schemas[0].fields[0].type: unknown type 'strin'"),
        (lambda d: d.pop("last-sequence-number"), "last-sequence-number: required field is missing"),
        (lambda d: d.update({"current-schema-id": 42}), "current-schema-id: no schema with id 42"),
        (lambda d: d["sort-orders"][0]["fields"][0].update(direction="up"), "direction: 'up' is not asc or desc"),
        (lambda d: d["partition-specs"][0]["fields"][0].pop("field-id"), "partition-specs[0].fields[0].field-id"),
    ],
)
def test_errors_name_the_path(catalog, mutate, message):
    t = catalog.create_table(
        "ns.e",
        Schema(NestedField(1, "a", IntegerType(), required=False)),
        partition_spec=PartitionSpec(PartitionField(1, 1000, IdentityTransform(), "a")),
        sort_order=SortOrder(SortField(source_id=1, transform=IdentityTransform())),
        properties={"format-version": "2"},
    )
    d = json.loads(metadata_text(t))
    mutate(d)
    r = subprocess.run([_exe()], input=json.dumps(d).encode(), capture_output=True, env={**os.environ, "HS_ICEBERG_ROUNDTRIP": "1"})
    assert r.returncode == 1
    out = r.stdout.decode()
    assert out.startswith("ERROR: ") and message in out, out


# ------------------------------------------------------------------ hashes


def _dec_bytes(unscaled: int) -> bytes:
    n = 1
    while not (-(1 << (8 * n - 1)) <= unscaled < (1 << (8 * n - 1))):
        n += 1
    return unscaled.to_bytes(n, "big", signed=True)


EPOCH = datetime.datetime(1970, 1, 1)

VALUES = st.one_of(
    st.integers(-(2**31), 2**31 - 1).map(lambda v: ("int", struct.pack("<i", v), IntegerType(), v)),
    st.integers(-(2**63), 2**63 - 1).map(lambda v: ("long", struct.pack("<q", v), LongType(), v)),
    st.integers(-(10**9) + 1, 10**9 - 1).map(
        lambda v: ("decimal(9,2)", _dec_bytes(v), DecimalType(9, 2), decimal.Decimal(v).scaleb(-2))
    ),
    st.integers(-(10**37), 10**37).map(
        lambda v: ("decimal(38,0)", _dec_bytes(v), DecimalType(38, 0), decimal.Decimal(v))
    ),
    st.integers(-100000, 100000).map(lambda v: ("date", struct.pack("<i", v), DateType(), v)),
    st.integers(0, 86400 * 10**6 - 1).map(lambda v: ("time", struct.pack("<q", v), TimeType(), v)),
    st.integers(-(2**60), 2**60).map(lambda v: ("timestamp", struct.pack("<q", v), TimestampType(), v)),
    st.integers(-(2**60), 2**60).map(lambda v: ("timestamptz", struct.pack("<q", v), TimestamptzType(), v)),
    st.text(max_size=40).map(lambda v: ("string", v.encode(), StringType(), v)),
    st.binary(max_size=40).map(lambda v: ("binary", v, BinaryType(), v)),
    st.binary(min_size=5, max_size=5).map(lambda v: ("fixed[5]", v, FixedType(5), v)),
    st.uuids().map(lambda v: ("uuid", v.bytes, UUIDType(), v)),
)


def _hash_lines(items):
    text = "".join(f"{t} {b.hex() or '-'} {n}\n" for t, b, n in items)
    r = subprocess.run([_exe()], input=text.encode(), capture_output=True, env={**os.environ, "HS_ICEBERG_HASH": "1"})
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()
    return [tuple(int(x) for x in line.split()) for line in r.stdout.decode().splitlines()]


@settings(max_examples=60, deadline=None)
@given(st.lists(VALUES, min_size=1, max_size=40), st.sampled_from([1, 7, 16, 1000, 2**31 - 1]))
def test_bucket_matches_pyiceberg(values, n):
    got = _hash_lines([(name, b, n) for name, b, _, _ in values])
    assert len(got) == len(values)
    for (name, _, itype, pyv), (_, bucket) in zip(values, got):
        want = BucketTransform(n).transform(itype)(pyv)
        assert bucket == want, (name, pyv, n)


def test_bucket_spec_reference_values():
    got = _hash_lines(
        [
            ("int", struct.pack("<i", 34), 2**31 - 1),
            ("string", b"iceberg", 2**31 - 1),
            ("uuid", uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7").bytes, 2**31 - 1),
        ]
    )
    assert [h for h, _ in got] == [2017239379, 1210000089, 1488055340]
