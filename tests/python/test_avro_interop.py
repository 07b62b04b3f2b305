"""Avro interop: our C codec (src/avro/) against fastavro, both ways.

The Python package does not expose Avro, so these tests drive the C test
executable `test_avro` in its two env-driven modes:

  HS_AVRO_WRITE=path [HS_AVRO_CODEC=...] [HS_AVRO_ROWS=n]  writes a sample file
  HS_AVRO_READ=path  prints {"schema", "meta"} then one JSON line per datum

It is found at $HS_BUILD_DIR/test_avro, else build/release/test_avro, else
any build/*/test_avro. fastavro is a required test dependency
(requirements-test.txt): a missing fastavro is an error, never a skip.

What is checked: fastavro reads our files (null and deflate, many blocks)
and gets the same datums we do; fastavro sees the `field-id`,
`element-id`, `key-id`, `value-id` attributes in our writer schema (the
reason this codec exists); we read fastavro's files, including every type,
logical types, recursive types, many small blocks and user metadata.
"""

import base64
import contextlib
import glob
import json
import os
import subprocess

import fastavro  # required: see requirements-test.txt
import pytest
from fastavro import logical_readers

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def _find_exe():
    cands = []
    if os.environ.get("HS_BUILD_DIR"):
        cands.append(os.path.join(os.environ["HS_BUILD_DIR"], "test_avro"))
    cands.append(os.path.join(REPO_ROOT, "build", "release", "test_avro"))
    cands += sorted(glob.glob(os.path.join(REPO_ROOT, "build", "*", "test_avro")))
    for c in cands:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise AssertionError(
        "test_avro executable not found (build the C tests, or set HS_BUILD_DIR); tried: "
        + ", ".join(cands)
    )


@pytest.fixture(scope="module")
def exe():
    return _find_exe()


def run(exe, **env):
    full = dict(os.environ)
    full.update({k: str(v) for k, v in env.items()})
    proc = subprocess.run([exe], env=full, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"test_avro failed ({proc.returncode}): {proc.stderr}"
    return proc.stdout


def c_read(exe, path):
    """Our reader: (header dict, list of datums as plain JSON)."""
    lines = run(exe, HS_AVRO_READ=path).splitlines()
    head = json.loads(lines[0])
    return head, [json.loads(line) for line in lines[1:]]


@contextlib.contextmanager
def raw_logical_values():
    """Make fastavro return logical types as their underlying values (days,
    micros, unscaled bytes, strings), which is what our plain view shows."""
    saved = dict(logical_readers.LOGICAL_READERS)
    logical_readers.LOGICAL_READERS.clear()
    try:
        yield
    finally:
        logical_readers.LOGICAL_READERS.update(saved)


def plain(v):
    """fastavro's Python values in our JSON view: bytes as lowercase hex,
    unions unwrapped (fastavro already does), floats as floats."""
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def fa_read(path):
    with open(path, "rb") as f, raw_logical_values():
        r = fastavro.reader(f)
        recs = [plain(x) for x in r]
        return r, recs


def walk_attrs(schema, out, key):
    """Collect every `key` attribute anywhere in a schema JSON tree."""
    if isinstance(schema, dict):
        if key in schema:
            out.append(schema[key])
        for v in schema.values():
            walk_attrs(v, out, key)
    elif isinstance(schema, list):
        for v in schema:
            walk_attrs(v, out, key)
    return out


# ------------------------------------------------------------ ours -> fastavro


@pytest.mark.parametrize("codec", ["null", "deflate"])
def test_fastavro_reads_our_file(exe, tmp_path, codec):
    path = str(tmp_path / f"ours_{codec}.avro")
    run(exe, HS_AVRO_WRITE=path, HS_AVRO_CODEC=codec, HS_AVRO_ROWS=100)
    r, theirs = fa_read(path)
    head, ours = c_read(exe, path)
    assert len(theirs) == 100
    assert theirs == ours
    assert r.codec == codec
    # User metadata written by us is visible to fastavro.
    assert r.metadata["format-version"] == "2"
    assert r.metadata["content"] == "data"
    assert json.loads(r.metadata["partition-spec"])[0]["transform"] == "bucket[4]"
    # The field ids are in the schema fastavro parsed, not just in our bytes.
    raw = json.loads(r.metadata["avro.schema"])
    ids = walk_attrs(raw, [], "field-id")
    assert sorted(ids) == list(range(0, 9)) + [10] + list(range(13, 20)) + [102, 125, 126, 127, 1000]
    assert walk_attrs(raw, [], "element-id") == [9]
    assert walk_attrs(raw, [], "key-id") == [11]
    assert walk_attrs(raw, [], "value-id") == [12]
    parsed = r.writer_schema
    by_name = {f["name"]: f for f in parsed["fields"]}
    assert by_name["path"]["field-id"] == 6
    assert by_name["partition"]["type"]["fields"][0]["field-id"] == 1000
    assert by_name["ids"]["type"]["element-id"] == 9
    # Our re-serialized writer schema equals what fastavro parsed from the file.
    assert json.loads(head["schema"]) == raw


def test_fastavro_logical_values(exe, tmp_path):
    """With fastavro's logical conversions on, values mean what we meant."""
    import datetime
    import decimal
    import uuid

    path = str(tmp_path / "ours.avro")
    run(exe, HS_AVRO_WRITE=path, HS_AVRO_ROWS=3)
    with open(path, "rb") as f:
        recs = list(fastavro.reader(f))
    r = recs[1]
    assert r["day"] == datetime.date(1970, 1, 1) + datetime.timedelta(days=19001)
    assert r["ts"] == datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(
        microseconds=1700000000000001
    )
    assert r["amount"] == decimal.Decimal(256 + ord("B")).scaleb(-2)
    assert r["uid"] == uuid.UUID("8f2e0001-0000-4000-8000-000000000000")


# ------------------------------------------------------------ fastavro -> ours

ALL_TYPES = {
    "type": "record",
    "name": "entry",
    "namespace": "org.example",
    "fields": [
        {"name": "n", "type": "null", "field-id": 1},
        {"name": "b", "type": "boolean", "field-id": 2},
        {"name": "i", "type": "int", "field-id": 3},
        {"name": "l", "type": "long", "field-id": 4},
        {"name": "f", "type": "float", "field-id": 5},
        {"name": "d", "type": "double", "field-id": 6},
        {"name": "by", "type": "bytes", "field-id": 7},
        {"name": "s", "type": "string", "field-id": 8},
        {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}, "field-id": 9},
        {"name": "a", "type": {"type": "array", "items": "long", "element-id": 11}, "field-id": 10},
        {
            "name": "m",
            "type": {"type": "map", "values": ["null", "string"], "key-id": 13, "value-id": 14},
            "field-id": 12,
        },
        {"name": "fx", "type": {"type": "fixed", "name": "F4", "size": 4}, "field-id": 15},
        {"name": "u", "type": ["null", "long", "string", "F4"], "default": None, "field-id": 16},
        {"name": "date", "type": {"type": "int", "logicalType": "date"}, "field-id": 17},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}, "field-id": 18},
        {
            "name": "dec",
            "type": {"type": "fixed", "name": "D", "size": 8, "logicalType": "decimal", "precision": 10, "scale": 3},
            "field-id": 19,
        },
        {
            "name": "nested",
            "type": {
                "type": "record",
                "name": "r20",
                "fields": [
                    {"name": "x", "type": ["null", "double"], "default": None, "field-id": 21},
                    {"name": "next", "type": ["null", "r20"], "default": None, "field-id": 22},
                ],
            },
            "field-id": 20,
        },
    ],
}


def all_types_record(i):
    return {
        "n": None,
        "b": i % 2 == 0,
        "i": -(2**31) if i == 3 else i * 1000,
        "l": 2**63 - 1 if i == 4 else -i * 10**12,
        "f": 0.5 + i,
        "d": -1.0 / (i + 1),
        "by": bytes(range(i % 7)),
        "s": "héllo ✓ %d" % i,
        "e": "GREEN" if i % 3 else "RED",
        "a": list(range(i % 5)),
        "m": {f"k{j}": (None if j % 2 else "v" * j) for j in range(i % 4)},
        "fx": bytes([i % 256, 1, 2, 3]),
        "u": [None, i, "s%d" % i, b"\x00\x01\x02\x03"][i % 4],
        "date": 18000 + i,
        "ts": 1600000000000000 + i,
        "dec": (i * 12345).to_bytes(8, "big", signed=True),
        "nested": {"x": None if i % 2 else i / 4, "next": {"x": 1.0, "next": None} if i % 3 == 0 else None},
    }


@pytest.mark.parametrize("codec", ["null", "deflate"])
@pytest.mark.parametrize("sync_interval", [64, 16000])
def test_we_read_fastavro_file(exe, tmp_path, codec, sync_interval):
    path = str(tmp_path / f"fa_{codec}_{sync_interval}.avro")
    records = [all_types_record(i) for i in range(200)]
    with open(path, "wb") as f, raw_logical_values():
        fastavro.writer(
            f,
            fastavro.parse_schema(ALL_TYPES),
            records,
            codec=codec,
            sync_interval=sync_interval,
            metadata={"schema": '{"type":"struct"}', "format-version": "2"},
        )
    head, ours = c_read(exe, path)
    _, theirs = fa_read(path)
    assert len(ours) == 200
    assert ours == theirs
    assert head["meta"]["avro.codec"] == codec
    assert head["meta"]["format-version"] == "2"
    # Our writer-schema serialization kept every id fastavro wrote.
    ours_schema = json.loads(head["schema"])
    assert sorted(walk_attrs(ours_schema, [], "field-id")) == list(range(1, 11)) + [12] + list(range(15, 23))
    assert walk_attrs(ours_schema, [], "element-id") == [11]
    assert walk_attrs(ours_schema, [], "key-id") == [13]
    assert walk_attrs(ours_schema, [], "value-id") == [14]
    # And fastavro accepts our serialization of its schema.
    fastavro.parse_schema(ours_schema)


def test_we_read_fastavro_empty_and_blocks(exe, tmp_path):
    path = str(tmp_path / "empty.avro")
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema({"type": "record", "name": "r", "fields": []}), [])
    head, ours = c_read(exe, path)
    assert ours == []
    path = str(tmp_path / "many.avro")
    schema = {"type": "record", "name": "r", "fields": [{"name": "v", "type": "long"}]}
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), [{"v": i} for i in range(5000)], sync_interval=1)
    _, ours = c_read(exe, path)
    assert [r["v"] for r in ours] == list(range(5000))


def test_corrupt_file_is_an_error(exe, tmp_path):
    path = str(tmp_path / "ours.avro")
    run(exe, HS_AVRO_WRITE=path, HS_AVRO_ROWS=30)
    data = bytearray(open(path, "rb").read())
    data[-5] ^= 0xFF  # inside the last sync marker
    bad = str(tmp_path / "bad.avro")
    open(bad, "wb").write(bytes(data))
    full = dict(os.environ, HS_AVRO_READ=bad)
    proc = subprocess.run([exe], env=full, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "sync marker mismatch" in proc.stderr
