"""Shared helpers for the HyperStreamDB Python suite.

What lives here:
  * the hypothesis profiles ("ci": derandomized, bounded by HS_HYPOTHESIS_EXAMPLES;
    "dev": random) -- select with HS_HYPOTHESIS_PROFILE, default "ci";
  * locating the repository, the conformance corpus and the ASan CLI;
  * the `hdb` fixture: importing hyperstreamdb is a test *error*, never a skip,
    so a broken package cannot make the suite pass vacuously;
  * exact table comparison (floats compared bitwise, so NaN payloads and -0.0
    count);
  * a crash-isolating runner that performs reads/writes through the Python
    package in child processes, so a segfault or hang in the C core is reported
    as a failure of the one input that caused it instead of killing pytest;
  * Arrow table strategies shared by test_roundtrip.py and test_duckdb.py.

Test files import this module by name (`import conftest`), which works with
pytest's default import mode; they put this directory on sys.path first so
that `--import-mode=importlib` works too.
"""

import decimal
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

# ------------------------------------------------------------ hypothesis

HYPOTHESIS_EXAMPLES = int(os.environ.get("HS_HYPOTHESIS_EXAMPLES", "150"))

settings.register_profile(
    "ci",
    max_examples=HYPOTHESIS_EXAMPLES,
    derandomize=True,  # same examples on every run: CI failures reproduce
    database=None,
    deadline=None,  # file I/O timing varies on a shared 2-core machine
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HS_HYPOTHESIS_PROFILE", "ci"))

# ------------------------------------------------------------ locations


def conformance_dir():
    """The parquet-testing checkout (holding data/ and bad_data/), or None."""
    candidates = []
    if os.environ.get("HS_CONFORMANCE_DIR"):
        candidates.append(os.environ["HS_CONFORMANCE_DIR"])
    candidates.append(os.path.join(REPO_ROOT, "..", "shared", "conformance", "parquet-testing"))
    for c in candidates:
        if os.path.isdir(os.path.join(c, "data")):
            return os.path.abspath(c)
    return None


def asan_cli():
    """Path of the ASan+UBSan CLI from HS_ASAN_CLI, or None when unset."""
    p = os.environ.get("HS_ASAN_CLI")
    return p or None


# ------------------------------------------------------------ the package

try:
    import hyperstreamdb as _hdb

    HDB_IMPORT_ERROR = None
except Exception as e:  # noqa: BLE001 -- reported by the fixture below
    _hdb = None
    HDB_IMPORT_ERROR = e


def require_hdb():
    if _hdb is None:
        raise RuntimeError(
            "cannot import hyperstreamdb (build it with `bash scripts/build.sh python`): "
            f"{HDB_IMPORT_ERROR!r}"
        )
    return _hdb


@pytest.fixture(scope="session")
def hdb():
    """The hyperstreamdb module; failing to import it is an error, not a skip."""
    return require_hdb()


@pytest.fixture(scope="session")
def hs_errors(hdb):
    """Exception classes by name, looked up once so a missing one fails loudly."""
    names = ["HyperStreamError", "CorruptFileError", "UnsupportedError", "SchemaError",
             "NotFoundError"]
    missing = [n for n in names if not hasattr(hdb, n)]
    assert not missing, f"hyperstreamdb lacks exception classes {missing}"
    return {n: getattr(hdb, n) for n in names}


# ------------------------------------------------------------ comparison


def bits_type(t):
    """`t` with every floating-point type replaced by the unsigned integer of
    its width, recursively, so that a zero-copy view compares floats bitwise."""
    if pa.types.is_float16(t):
        return pa.uint16()
    if pa.types.is_float32(t):
        return pa.uint32()
    if pa.types.is_float64(t):
        return pa.uint64()
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(bits_type(t.key_type)),
                       t.item_field.with_type(bits_type(t.item_type)), t.keys_sorted)
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(bits_type(t.value_type)), t.list_size)
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(bits_type(t.value_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(bits_type(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(bits_type(t.field(i).type))
                          for i in range(t.num_fields)])
    return t


def _bits(arr):
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], arr.type)
    bt = bits_type(arr.type)
    return arr if bt == arr.type else arr.view(bt)


def _first_difference(a, b):
    la, lb = a.to_pylist(), b.to_pylist()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return i, x, y
    return None


def assert_tables_equal(actual, expected, check_nullability=True, what=""):
    """Exact equality: same column names, types, (optionally) nullability, row
    count and values, floats compared by their bits. Metadata is ignored."""
    assert isinstance(actual, pa.Table), f"{what}: expected a pyarrow.Table, got {type(actual)}"
    assert actual.column_names == expected.column_names, (
        f"{what}: columns {actual.column_names} != {expected.column_names}")
    for fa, fe in zip(actual.schema, expected.schema):
        assert fa.type == fe.type, f"{what}: column {fe.name!r}: type {fa.type} != {fe.type}"
        if check_nullability:
            assert fa.nullable == fe.nullable, (
                f"{what}: column {fe.name!r}: nullable {fa.nullable} != {fe.nullable}")
    assert actual.num_rows == expected.num_rows, (
        f"{what}: {actual.num_rows} rows != {expected.num_rows}")
    for name in expected.column_names:
        a, e = _bits(actual.column(name)), _bits(expected.column(name))
        if not a.equals(e):
            diff = _first_difference(a, e)
            raise AssertionError(
                f"{what}: column {name!r} differs (floats shown as bits); first difference "
                f"(row, actual, expected) = {diff!r}")


# ------------------------------------------------------------ crash isolation

_CHILD = r"""
import json, sys, traceback
import pyarrow as pa
try:
    import hyperstreamdb as hdb
except Exception as e:
    print(json.dumps({"import_error": repr(e)}), flush=True)
    sys.exit(3)

def describe(e):
    return {"ok": False, "type": type(e).__name__,
            "mro": [c.__name__ for c in type(e).__mro__],
            "hs": isinstance(e, hdb.HyperStreamError), "oserror": isinstance(e, OSError),
            "msg": str(e)}

for line in sys.stdin:
    op = json.loads(line)
    print(json.dumps({"id": op["id"], "started": True}), flush=True)
    try:
        kw = op.get("kwargs") or {}
        if op["op"] == "read":
            t = hdb.parquet.read_table(op["path"], **kw)
            if not isinstance(t, pa.Table):
                raise TypeError("read_table returned %r" % type(t))
            t.validate(full=True)
            if op.get("out"):
                with pa.OSFile(op["out"], "wb") as f, pa.ipc.new_file(f, t.schema) as w:
                    w.write_table(t)
            res = {"ok": True, "num_rows": t.num_rows}
        elif op["op"] == "write":
            with pa.memory_map(op["input"]) as f:
                t = pa.ipc.open_file(f).read_all()
            hdb.parquet.write_table(t, op["path"], **kw)
            res = {"ok": True}
        else:
            raise ValueError("unknown op %r" % op["op"])
    except BaseException as e:
        res = describe(e)
    res["id"] = op["id"]
    print(json.dumps(res), flush=True)
"""


def run_isolated(ops, timeout_per_op=30.0):
    """Run ops (dicts with id, op="read"|"write", path, kwargs, and out/input
    IPC paths) through hyperstreamdb in child processes.

    Returns {id: result}. A result is {"ok": True, ...} or {"ok": False, "type",
    "mro", "hs", "oserror", "msg"} for a Python exception, or {"ok": False,
    "crash": description} when the child died (signal, sanitizer abort) or hung
    while on that op; the remaining ops then continue in a fresh child."""
    results = {}
    pending = list(ops)
    env = dict(os.environ)
    env.setdefault("PYTHONFAULTHANDLER", "1")
    while pending:
        payload = "".join(json.dumps(op) + "\n" for op in pending)
        timeout = 30.0 + timeout_per_op * len(pending)
        timed_out = False
        try:
            proc = subprocess.run([sys.executable, "-c", _CHILD], input=payload, text=True,
                                  capture_output=True, timeout=timeout, env=env)
            out, errtxt, rc = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            errtxt = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            rc, timed_out = None, True
        started = None
        for line in out.splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if "import_error" in rec:
                raise RuntimeError(f"cannot import hyperstreamdb in child: {rec['import_error']}")
            if rec.get("started"):
                started = rec["id"]
            else:
                results[rec["id"]] = rec
                started = None
        if started is None and not timed_out and rc == 0:
            break
        why = ("hung (timeout %.0fs)" % timeout) if timed_out else f"child exited rc={rc}"
        if started is None:
            # Died between ops or before the first: blame the next pending op.
            started = next((op["id"] for op in pending if op["id"] not in results), None)
            if started is None:
                break
        results[started] = {"ok": False, "crash": why, "stderr": errtxt[-4000:]}
        pending = [op for op in pending if op["id"] not in results]
    return results


def read_ipc(path):
    with pa.memory_map(path) as f:
        return pa.ipc.open_file(f).read_all()


def write_ipc(table, path):
    with pa.OSFile(path, "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        w.write_table(table)


# ------------------------------------------------------------ sanitizer CLI

SANITIZER_MARKERS = ("AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
                     "runtime error:", "MemorySanitizer", "SUMMARY: ")
# Distinct exit codes so a sanitizer abort is never mistaken for an ordinary
# "this file is bad" exit status.
ASAN_EXIT = 86
UBSAN_EXIT = 87


def run_asan_cli(path, timeout=120):
    """Run `$HS_ASAN_CLI read PATH --count`; returns (rc, stdout, stderr)."""
    cli = asan_cli()
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = f"exitcode={ASAN_EXIT}:detect_leaks=1:abort_on_error=0"
    env["UBSAN_OPTIONS"] = f"exitcode={UBSAN_EXIT}:halt_on_error=1:print_stacktrace=1"
    p = subprocess.run([cli, "read", path, "--count"], capture_output=True, text=True,
                       timeout=timeout, env=env, errors="replace")
    return p.returncode, p.stdout, p.stderr


def assert_no_sanitizer_report(rc, stderr, what):
    assert rc is not None and rc >= 0, f"{what}: killed by signal {-rc}\n{stderr[-3000:]}"
    assert rc not in (ASAN_EXIT, UBSAN_EXIT), f"{what}: sanitizer exit {rc}\n{stderr[-3000:]}"
    for m in SANITIZER_MARKERS:
        assert m not in stderr, f"{what}: sanitizer report ({m})\n{stderr[-3000:]}"


# ------------------------------------------------------------ table strategies

INT_BOUNDS = {
    "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1), "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}

FLAT_TYPE_NAMES = [
    "bool", *INT_BOUNDS, "float16", "float32", "float64", "string", "large_string", "binary",
    "fixed_size_binary", "date32", "time32[ms]", "time64[us]", "time64[ns]", "timestamp[ms]",
    "timestamp[us]", "timestamp[ns]", "timestamp_tz", "decimal128", "list", "fixed_size_list",
]

LIST_ELEMENT_TYPES = ["bool", "int8", "int32", "int64", "uint16", "float32", "float64",
                      "string", "binary"]

_UNIT_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_DAY = 86400


class ColSpec:
    """One generated column: its Arrow type, the python-value strategy used for
    non-null values, and how to build the array from python values."""

    def __init__(self, name, arrow_type, values, build=None):
        self.name, self.type, self.values = name, arrow_type, values
        self.build = build or (lambda vals, t=arrow_type: pa.array(vals, t))


def _view_build(storage, arrow_type):
    return lambda vals: pa.array(vals, storage).view(arrow_type)


def _float16_build(vals):
    mask = np.array([v is None for v in vals], dtype=bool)
    data = np.array([0.0 if v is None else v for v in vals], dtype=np.float16)
    return pa.array(data, type=pa.float16(), mask=mask)


def _decimal_values(p, s):
    bound = 10**p - 1
    ints = st.one_of(st.sampled_from([0, 1, -1, bound, -bound]),
                     st.integers(-bound, bound))
    return ints.map(lambda i: decimal.Decimal(f"{i}E-{s}"))


def _scalar_spec(draw, tname, duckdb_safe):
    """ColSpec for a flat (non-list) type name."""
    if tname == "bool":
        return ColSpec(tname, pa.bool_(), st.booleans())
    if tname in INT_BOUNDS:
        lo, hi = INT_BOUNDS[tname]
        vals = st.one_of(st.sampled_from([lo, hi, 0, -1 if lo else 1]), st.integers(lo, hi))
        return ColSpec(tname, pa.type_for_alias(tname), vals)
    if tname == "float16":
        vals = st.floats(width=16, allow_nan=True, allow_infinity=True)
        return ColSpec(tname, pa.float16(), vals, _float16_build)
    if tname in ("float32", "float64"):
        width = 32 if tname == "float32" else 64
        special = st.sampled_from([0.0, -0.0, float("nan"), float("inf"), float("-inf")])
        vals = st.one_of(special, st.floats(width=width))
        return ColSpec(tname, pa.type_for_alias(tname), vals)
    if tname in ("string", "large_string"):
        vals = st.one_of(st.just(""), st.text(max_size=12))
        return ColSpec(tname, pa.type_for_alias(tname), vals)
    if tname == "binary":
        return ColSpec(tname, pa.binary(), st.one_of(st.just(b""), st.binary(max_size=12)))
    if tname == "fixed_size_binary":
        w = draw(st.sampled_from([1, 3, 16]))
        return ColSpec(tname, pa.binary(w), st.binary(min_size=w, max_size=w))
    if tname == "date32":
        lim = 10**6 if duckdb_safe else 2**31 - 2
        return ColSpec(tname, pa.date32(), st.integers(-lim, lim), _view_build(pa.int32(), pa.date32()))
    if tname.startswith("time"):
        if tname.startswith("timestamp"):
            unit = draw(st.sampled_from(["ms", "us", "ns"])) if tname == "timestamp_tz" else tname[10:-1]
            tz = draw(st.sampled_from(["UTC", "America/New_York", "+05:30"])) if tname == "timestamp_tz" else None
            t = pa.timestamp(unit, tz)
            # DuckDB widens ms to us and maps int64 extremes to +-infinity.
            lim = (4 * 10**18) // _UNIT_NS[unit] if duckdb_safe else 2**63 - 1
            vals = st.one_of(st.sampled_from([0, -1, lim, -lim]), st.integers(-lim, lim))
            return ColSpec(tname, t, vals, _view_build(pa.int64(), t))
        unit = tname[7:-1]
        t = pa.time32(unit) if tname.startswith("time32") else pa.time64(unit)
        day = _DAY * 10**9 // _UNIT_NS[unit]
        storage = pa.int32() if tname.startswith("time32") else pa.int64()
        return ColSpec(tname, t, st.integers(0, day - 1), _view_build(storage, t))
    if tname == "decimal128":
        p = draw(st.sampled_from([1, 4, 9, 10, 18, 19, 28, 38]))
        s = draw(st.integers(0, p))
        return ColSpec(tname, pa.decimal128(p, s), _decimal_values(p, s))
    raise AssertionError(tname)


@st.composite
def column_specs(draw, duckdb_safe=False, type_names=None):
    tname = draw(st.sampled_from(type_names or FLAT_TYPE_NAMES))
    if tname == "list":
        elem = _scalar_spec(draw, draw(st.sampled_from(LIST_ELEMENT_TYPES)), duckdb_safe)
        vals = st.lists(st.one_of(st.none(), elem.values), max_size=5)
        return ColSpec("list", pa.list_(elem.type), vals)
    if tname == "fixed_size_list":
        d = draw(st.sampled_from([1, 3, 8]))
        elem_vals = st.floats(width=32)
        if draw(st.booleans()):
            elem_vals = st.one_of(st.none(), elem_vals)
        return ColSpec("fixed_size_list", pa.list_(pa.float32(), d),
                       st.lists(elem_vals, min_size=d, max_size=d))
    return _scalar_spec(draw, tname, duckdb_safe)


@st.composite
def arrow_tables(draw, max_columns=5, max_rows=40, duckdb_safe=False, type_names=None,
                 allow_tiling=True):
    """A random flat table. Rows are drawn explicitly (so hypothesis shrinks
    them); tiling the drawn rows up to 40x then gives multi-page and
    multi-row-group files without a huge generated buffer."""
    ncols = draw(st.integers(1, max_columns))
    nrows = draw(st.one_of(st.sampled_from([0, 1]), st.integers(0, max_rows)))
    fields, arrays = [], []
    for i in range(ncols):
        spec = draw(column_specs(duckdb_safe=duckdb_safe, type_names=type_names))
        nullable = draw(st.booleans())
        vals = spec.values
        if nullable:
            vals = st.one_of(st.none(), vals)
        data = draw(st.lists(vals, min_size=nrows, max_size=nrows))
        name = f"c{i}_{spec.name}"
        fields.append(pa.field(name, spec.type, nullable=nullable))
        arrays.append(spec.build(data))
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    if allow_tiling and nrows and draw(st.integers(0, 3)) == 0:
        reps = draw(st.integers(2, 40))
        table = pa.concat_tables([table] * reps)
    return table.combine_chunks()


# Valid column encodings by Arrow type, for writers that accept per-column
# overrides (pyarrow's column_encoding and ours). Names are Parquet's.
def valid_encodings(t, for_ours=False, for_duckdb=False):
    if pa.types.is_boolean(t):
        return ["PLAIN"] if for_ours else ["PLAIN", "RLE"]
    if pa.types.is_floating(t) and not pa.types.is_float16(t):
        return ["PLAIN", "BYTE_STREAM_SPLIT"]
    bss = [] if for_duckdb else ["BYTE_STREAM_SPLIT"]
    if pa.types.is_decimal(t):
        # Ours may store small decimals as INT32/INT64, where DELTA_BYTE_ARRAY is invalid.
        return ["PLAIN"] + bss if for_ours else ["PLAIN", "DELTA_BYTE_ARRAY"] + bss
    if pa.types.is_integer(t) or pa.types.is_temporal(t):
        return ["PLAIN", "DELTA_BINARY_PACKED"] + bss
    if pa.types.is_float16(t) or pa.types.is_fixed_size_binary(t):
        return ["PLAIN", "DELTA_BYTE_ARRAY"] + bss
    if (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)):
        return ["PLAIN", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY"]
    return []


@st.composite
def column_encodings(draw, schema, **kw):
    """A {column: encoding} dict over some flat columns (possibly empty)."""
    out = {}
    for f in schema:
        choices = valid_encodings(f.type, **kw)
        if choices and draw(st.booleans()):
            out[f.name] = draw(st.sampled_from(choices))
    return out


def scratch_dir(prefix):
    return tempfile.mkdtemp(prefix=prefix)


def remove_dir(path):
    shutil.rmtree(path, ignore_errors=True)



# ------------------------------------------------------------ DuckDB


def duckdb_read(path):
    """DuckDB's decode of a Parquet file as a pyarrow Table (session zone UTC)."""
    import duckdb

    con = duckdb.connect()
    try:
        con.execute("SET TimeZone='UTC'")
        return con.sql("SELECT * FROM read_parquet(?)", params=[path]).to_arrow_table()
    finally:
        con.close()


def duckdb_type(t, tz):
    """The Arrow type DuckDB hands back for a Parquet column written from Arrow
    type `t`. Each normalisation is a DuckDB type-system fact, not a loss in
    our files:
      float16            -> float32      (DuckDB has no half float; widened exactly)
      large_string       -> string       (DuckDB exports VARCHAR with 32-bit offsets)
      fixed_size_binary  -> binary       (DuckDB has only BLOB)
      time32[ms]         -> time64[us]   (DuckDB TIME is microseconds)
      timestamp[ms]      -> timestamp[us] (DuckDB TIMESTAMP is microseconds; ns stays ns)
      timestamp[*, tz]   -> tz = DuckDB session zone (TIMESTAMPTZ keeps the instant,
                            not the zone name)
      fixed_size_list    -> list         (DuckDB ignores ARROW:schema; Parquet has LIST)
      list item name     -> ignored      (DuckDB names it "l"; Arrow type equality
                            ignores it)
      nullability        -> ignored      (DuckDB marks every column nullable)"""
    if pa.types.is_float16(t):
        return pa.float32()
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if pa.types.is_time32(t):
        return pa.time64("us")
    if pa.types.is_timestamp(t):
        unit = "us" if t.unit in ("s", "ms") else t.unit
        return pa.timestamp(unit, tz if t.tz is not None else None)
    if pa.types.is_fixed_size_list(t) or pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(duckdb_type(t.value_type, tz))
    return t


def storage_type(t):
    """`t` with temporal types replaced by their integer storage, recursively,
    so values outside Python's datetime range can still be listed."""
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_date64(t) or pa.types.is_time64(t) or pa.types.is_timestamp(t):
        return pa.int64()
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(storage_type(t.value_type)))
    return t


def _float_same(a, b):
    import math

    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_float_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_float_same(a[k], b[k]) for k in a)
    return a == b


def assert_duckdb_equal(duck, expected, what=""):
    """DuckDB's table equals `expected` after the documented normalisations.
    Floats must match exactly, -0.0 included; any NaN matches any NaN (DuckDB
    may canonicalise NaN payloads)."""
    assert duck.column_names == expected.column_names, (
        f"{what}: columns {duck.column_names} != {expected.column_names}")
    assert duck.num_rows == expected.num_rows, (
        f"{what}: {duck.num_rows} rows != {expected.num_rows}")
    for f in expected.schema:
        got = duck.schema.field(f.name).type
        tz = got.tz if pa.types.is_timestamp(got) else None
        want = duckdb_type(f.type, tz)
        assert got == want, f"{what}: column {f.name!r}: DuckDB type {got} != expected {want}"
        st_type = storage_type(want)
        a = duck.column(f.name).combine_chunks().view(st_type).to_pylist()
        e = expected.column(f.name).cast(want).combine_chunks().view(st_type).to_pylist()
        for i, (x, y) in enumerate(zip(a, e)):
            if not _float_same(x, y):
                raise AssertionError(
                    f"{what}: column {f.name!r} row {i}: DuckDB {x!r} != expected {y!r}")


# ------------------------------------------------------------ Spark

# The session-scoped `spark` fixture (Apache Spark + Iceberg as the oracle,
# started only by tests that ask for it): tests/python/conftest_spark.py.
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from conftest_spark import spark, spark_table, spark_warehouse  # noqa: E402,F401
# Apache Iceberg's REST catalog server (started only by tests that ask for it).
from conftest_rest import rest_catalog  # noqa: E402,F401
