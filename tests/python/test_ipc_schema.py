"""Arrow IPC Schema messages: our C codec (src/arrow/ipc_schema.c) against pyarrow.

The Python package does not expose the codec, so these tests drive the C test
executable `test_ipc_schema` in its filter mode (HS_IPC_ROUNDTRIP=1): one
base64 message per stdin line in, one line out -- the base64 of our
re-encoding of our decoding, or "ERROR: <status>: <message>". One process
serves a whole module (lines are flushed one by one).

It is found at $HS_BUILD_DIR/test_ipc_schema, else build/release/, else any
build/*/.

What is checked, with pyarrow as the oracle:
  * randomized schemas (hypothesis: every type we model, nested lists,
    large/fixed-size lists, structs, maps, dictionaries, timezones, field and
    schema metadata with arbitrary bytes): pyarrow `schema.serialize()` ->
    our decode -> our encode -> `pa.ipc.read_schema` equals the original,
    metadata included; and our output is a fixed point of our codec;
  * the real thing: the "ARROW:schema" value pyarrow writes into a Parquet
    footer decodes (and round trips) to the file's Arrow schema;
  * types we do not model are refused as "unsupported", naming the field;
  * garbage, truncated and bit-flipped messages give ERROR lines, never a
    crash or hang.
"""

import base64
import glob
import os
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
EXE = "test_ipc_schema"


def _find_exe():
    cands = []
    if os.environ.get("HS_BUILD_DIR"):
        cands.append(os.path.join(os.environ["HS_BUILD_DIR"], EXE))
    cands.append(os.path.join(REPO_ROOT, "build", "release", EXE))
    cands += sorted(glob.glob(os.path.join(REPO_ROOT, "build", "*", EXE)))
    for c in cands:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise AssertionError(
        f"{EXE} executable not found (build the C tests, or set HS_BUILD_DIR); tried: "
        + ", ".join(cands)
    )


class Codec:
    """A long-lived filter process: bytes in, (re-encoded bytes | error text) out."""

    def __init__(self, exe):
        env = dict(os.environ, HS_IPC_ROUNDTRIP="1")
        self.proc = subprocess.Popen(
            [exe], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            errors="replace",  # error messages quote hostile names byte for byte
        )

    def roundtrip_line(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        out = self.proc.stdout.readline()
        assert out, f"{EXE} died (exit {self.proc.poll()}) on input {line[:200]!r}"
        return out.rstrip("\n")

    def roundtrip(self, message):
        """Our decode + encode of message bytes: (bytes, None) or (None, error)."""
        out = self.roundtrip_line(base64.b64encode(message).decode())
        if out.startswith("ERROR: "):
            return None, out[len("ERROR: "):]
        return base64.b64decode(out, validate=True), None

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def codec():
    c = Codec(_find_exe())
    yield c
    c.close()


def check_roundtrip(codec, schema):
    message = schema.serialize().to_pybytes()
    # The oracle is pyarrow's own round trip (which, e.g., renames a map's
    # value field to "value").
    schema = pa.ipc.read_schema(pa.py_buffer(message))
    ours, error = codec.roundtrip(message)
    assert error is None, f"{error}\nschema:\n{schema}"
    assert len(ours) % 8 == 0
    back = pa.ipc.read_schema(pa.py_buffer(ours))
    assert back.equals(schema, check_metadata=True), f"\nwant:\n{schema}\ngot:\n{back}"
    # Our encoding is a fixed point of our codec.
    again, error = codec.roundtrip(ours)
    assert error is None and again == ours
    return back


# ---------------------------------------------------------------- strategies

names = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=6,
)
metadata = st.one_of(
    st.none(),
    st.dictionaries(st.binary(max_size=6), st.binary(max_size=12), max_size=3),
)
units = st.sampled_from(["s", "ms", "us", "ns"])
timezones = st.sampled_from([None, "UTC", "Europe/Paris", "America/New_York", "+05:30"])
int_types = st.sampled_from(
    [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]
)


@st.composite
def decimals(draw):
    precision = draw(st.integers(1, 38))
    return pa.decimal128(precision, draw(st.integers(-5, precision)))


leaf_types = st.one_of(
    st.sampled_from(
        [
            pa.null(), pa.bool_(), pa.float16(), pa.float32(), pa.float64(),
            pa.binary(), pa.large_binary(), pa.string(), pa.large_string(),
            pa.date32(), pa.date64(), pa.time32("s"), pa.time32("ms"),
            pa.time64("us"), pa.time64("ns"),
        ]
    ),
    int_types,
    st.integers(1, 64).map(pa.binary),
    decimals(),
    st.builds(pa.timestamp, units, timezones),
    st.builds(pa.duration, units),
    st.builds(
        pa.dictionary,
        st.sampled_from([pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint16()]),
        st.sampled_from([pa.string(), pa.large_string(), pa.int64(), pa.binary()]),
        st.booleans(),
    ),
)
map_keys = st.sampled_from([pa.string(), pa.int32(), pa.binary(), pa.date32()])


def fields_of(types):
    return st.builds(
        lambda n, t, nullable, md: pa.field(
            n, t, nullable=nullable or t == pa.null(), metadata=md
        ),
        names, types, st.booleans(), metadata,
    )


def nested(children):
    child = fields_of(children)
    return st.one_of(
        child.map(pa.list_),
        child.map(pa.large_list),
        st.builds(pa.list_, child, st.sampled_from([0, 1, 3, 768])),
        st.lists(child, max_size=4).map(pa.struct),
        st.builds(
            lambda k, v, s: pa.map_(k, v, keys_sorted=s), map_keys, child, st.booleans()
        ),
    )


arrow_types = st.recursive(leaf_types, nested, max_leaves=10)
schemas = st.builds(
    lambda fs, md: pa.schema(fs, metadata=md),
    st.lists(fields_of(arrow_types), max_size=6),
    metadata,
)


# --------------------------------------------------------------------- tests

@given(schemas)
def test_random_schemas_roundtrip(codec, schema):
    check_roundtrip(codec, schema)


def test_every_type_once(codec):
    types = [
        pa.null(), pa.bool_(), pa.int8(), pa.uint8(), pa.int16(), pa.uint16(), pa.int32(),
        pa.uint32(), pa.int64(), pa.uint64(), pa.float16(), pa.float32(), pa.float64(),
        pa.binary(), pa.large_binary(), pa.string(), pa.large_string(), pa.binary(16),
        pa.decimal128(38, 10), pa.decimal128(5, -2), pa.date32(), pa.date64(),
        pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns"),
        pa.timestamp("s"), pa.timestamp("ms", "UTC"), pa.timestamp("ns", "Asia/Tokyo"),
        pa.duration("s"), pa.duration("ns"), pa.list_(pa.int8()), pa.large_list(pa.utf8()),
        pa.list_(pa.float32(), 768), pa.struct([("a", pa.int8())]), pa.struct([]),
        pa.map_(pa.string(), pa.list_(pa.int64()), keys_sorted=True),
        pa.dictionary(pa.int8(), pa.string(), ordered=True),
        pa.dictionary(pa.uint32(), pa.list_(pa.int64())),
    ]
    schema = pa.schema(
        [pa.field(f"c{i}", t, nullable=i % 2 == 0) for i, t in enumerate(types)],
        metadata={"pandas": '{"columns": []}', b"\x00bin": b"\xff\x00"},
    )
    check_roundtrip(codec, schema)


def test_parquet_footer_schema(codec, tmp_path):
    """What pyarrow stores under ARROW:schema in a Parquet file decodes to the table's schema."""
    table = pa.table(
        {
            "embedding": pa.array([[0.5] * 768, None], pa.list_(pa.float32(), 768)),
            "title": pa.array(["a", "b"], pa.large_string()),
            "at": pa.array([0, 1], pa.timestamp("s", tz="Europe/Paris")),
            "day": pa.array([0, 86400000], pa.date64()),
            "t": pa.array([1, 2], pa.time32("s")),
            "dur": pa.array([1, 2], pa.duration("ms")),
            "cat": pa.array(["x", "y"]).dictionary_encode(),
            "tags": pa.array([{"k": 1}, None], pa.struct([("k", pa.int16())])),
        }
    ).replace_schema_metadata({"owner": "hs"})
    table = table.cast(table.schema.set(0, table.schema.field(0).with_metadata({"hs:dim": "768"})))
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    stored = pq.read_metadata(path).metadata[b"ARROW:schema"]
    message = base64.b64decode(stored, validate=True)
    original = pa.ipc.read_schema(pa.py_buffer(message))
    assert original.field("embedding").type == pa.list_(pa.float32(), 768)
    back = check_roundtrip(codec, original)
    assert back.field("at").type.tz == "Europe/Paris"
    assert back.field("embedding").metadata == {b"hs:dim": b"768"}
    assert back.metadata[b"owner"] == b"hs"


@pytest.mark.parametrize(
    "field",
    [
        pa.field("u", pa.dense_union([pa.field("x", pa.int32())])),
        pa.field("sv", pa.string_view()),
        pa.field("iv", pa.month_day_nano_interval()),
        pa.field("d256", pa.decimal256(40, 2)),
        pa.field("ree", pa.run_end_encoded(pa.int32(), pa.string())),
        pa.field("lv", pa.list_view(pa.int32())),
    ],
    ids=lambda f: f.name,
)
def test_unsupported_types_named(codec, field):
    schema = pa.schema([pa.field("ok", pa.int32()), pa.field("outer", pa.struct([field]))])
    ours, error = codec.roundtrip(schema.serialize().to_pybytes())
    assert ours is None
    assert error.startswith("unsupported: ") and f"'outer.{field.name}'" in error, error


def test_hostile_messages(codec):
    schema = pa.schema(
        [
            pa.field("m", pa.map_(pa.string(), pa.list_(pa.float32(), 4)), metadata={"a": "b"}),
            pa.field("d", pa.dictionary(pa.int16(), pa.string())),
            pa.field("ts", pa.timestamp("us", "UTC")),
        ],
        metadata={"k": "v"},
    )
    message = schema.serialize().to_pybytes()
    for cut in range(0, len(message), 3):
        ours, error = codec.roundtrip(message[:cut])
        assert ours is None or pa.ipc.read_schema(pa.py_buffer(ours)) is not None
    rng = __import__("random").Random(5)
    for _ in range(1500):
        b = bytearray(message)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        codec.roundtrip(bytes(b))  # an answer line (not a crash) is what matters
    for line in ["", "!!!!", "AAAA", "/////w==", base64.b64encode(os.urandom(300)).decode()]:
        out = codec.roundtrip_line(line)
        assert out.startswith("ERROR: ")
