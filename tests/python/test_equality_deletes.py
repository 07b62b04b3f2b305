"""Equality deletes written by the Iceberg Java library, read by us.

``tests/java/EqDeleteTables.java`` (compiled once with javac against
``build/jars/iceberg-spark-runtime-3.5_2.12-1.12.0.jar`` and pyspark's bundled
Hadoop jars, cached under ``build/java-eqdel/``; no Spark is started) makes
Hadoop tables in v2 and v3 with equality deletes on one and two columns,
partition-scoped and global (an unpartitioned spec's delete in a table whose
spec evolved), NULL / NaN / -0.0 keys, a key column promoted int -> long
before its delete, and appends after the deletes that re-use deleted keys
(their higher sequence number keeps them), and keys of every other
primitive type (date, timestamp, timestamptz, time, decimal as int32 and as
fixed bytes, uuid, binary, fixed, float, boolean). It writes ``oracle.json``: every
operation (rows appended, keys deleted, sequence numbers, spec, partition)
and, per snapshot, the rows Iceberg's own generic reader returns.

Two oracles: Iceberg Java's reader, and a brute-force matcher over the
operation log (spec "Scan Planning": an equality delete applies to a data
file of a lower data sequence number, in the same spec and partition unless
the delete is global; NULL equals NULL; doubles compared as Java's
Double.compare: NaN equals NaN, -0.0 differs from 0.0). They are checked
against each other (Java's answers only before its uuid/fixed-key deletes,
which its generic reader mis-applies: JAVA_UNRELIABLE_KEYS), then ``hdb.Table``
is checked against the brute force at every snapshot: ``to_arrow`` (all columns and a projection without the key
columns), ``to_arrow_stream``, a filter, and ``len`` of the current snapshot.
pyiceberg 0.x does not apply equality deletes (it raises); it is asked
anyway and compared when it answers. Spark's Iceberg reader (the session
`spark` fixture) is a third reader, compared with the brute force on the
tables it can read.

A missing java/javac, pyspark or runtime jar is an error naming the set-up
step (``scripts/setup.sh test``), never a skip.
"""

import glob
import importlib.util
import json
import math
import os
import shutil
import subprocess
import uuid

import pyarrow as pa
import pytest

import hyperstreamdb as hdb

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
JAVA_SRC = os.path.join(REPO, "tests", "java", "EqDeleteTables.java")
CLASSES = os.path.join(REPO, "build", "java-eqdel")
RUNTIME_JAR = os.path.join(REPO, "build", "jars", "iceberg-spark-runtime-3.5_2.12-1.12.0.jar")
SEED = 14


def _classpath():
    spec = importlib.util.find_spec("pyspark")
    missing = []
    if spec is None or spec.origin is None:
        missing.append("pyspark (pip, 3.5.x: its jars/ holds Hadoop)")
    if not os.path.exists(RUNTIME_JAR):
        missing.append(RUNTIME_JAR)
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            missing.append(tool)
    if missing:
        pytest.fail("equality-delete oracle needs " + ", ".join(missing) +
                    ": run scripts/setup.sh test")
    jars = os.path.join(os.path.dirname(spec.origin), "jars")
    if not glob.glob(os.path.join(jars, "hadoop-client-api-*.jar")):
        pytest.fail(f"no Hadoop client jar under {jars}: reinstall pyspark 3.5.x")
    return os.pathsep.join([RUNTIME_JAR, os.path.join(jars, "*")])


@pytest.fixture(scope="session")
def oracle(tmp_path_factory):
    cp = _classpath()
    cls = os.path.join(CLASSES, "EqDeleteTables.class")
    if not os.path.exists(cls) or os.path.getmtime(cls) < os.path.getmtime(JAVA_SRC):
        os.makedirs(CLASSES, exist_ok=True)
        r = subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", CLASSES, JAVA_SRC],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"javac failed:\n{r.stdout}\n{r.stderr}"
    out = str(tmp_path_factory.mktemp("eqdel-java"))
    r = subprocess.run(["java", "-Xmx512m", "-XX:TieredStopAtLevel=1",
                        "-cp", os.pathsep.join([CLASSES, cp]),
                        "EqDeleteTables", out, str(SEED)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"EqDeleteTables failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    with open(os.path.join(out, "oracle.json"), encoding="utf-8") as f:
        doc = json.load(f)
    return {t["name"]: t for t in doc["tables"]}


# Iceberg Java's generic reader (1.12) mis-applies equality deletes keyed on uuid and
# fixed columns: loading the delete file it keeps one reused buffer for every fixed key
# (found here: a fixed-key delete removes the rows whose key is the file's *last* fixed
# value; a uuid-key delete removes nothing), while the delete files hold the right keys
# (pyarrow reads them). The program writes those deletes last; Java's answers are
# compared only before them, ours against the brute force at every snapshot.
JAVA_UNRELIABLE_KEYS = {"u", "fx"}

TABLES = [f"{kind}_v{v}" for v in (2, 3) for kind in ("global", "part", "evolved", "types")]

# ------------------------------------------------------------ canonical rows


def _float(v):
    return None if v is None else float(v)


def _java_row(table, r):
    """A row as the program wrote it (canonical JSON): floats arrive as strings; a row
    written before a column was added gets the column's initial-default (NULL in v2)."""
    floats = set(table["float_columns"])
    r = list(r)
    defaults = [op["default"] for op in table["ops"] if op["op"] == "add_column"]
    missing = len(table["columns"]) - len(r)
    if missing > 0:
        r += defaults[len(defaults) - missing:]  # added columns come last
    return [_float(v) if c in floats else v for c, v in zip(table["columns"], r)]


def _canon_value(v):
    if isinstance(v, float):
        return "nan" if math.isnan(v) else v.hex()  # -0.0 and 0.0 differ
    return v


def _canon(rows):
    """A sortable multiset of rows."""
    return sorted((tuple(_canon_value(v) for v in r) for r in rows), key=repr)


def _same_value(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def brute_force(table, seq):
    """Live rows at sequence number `seq`, from the operation log alone."""
    columns = table["columns"]
    appends = [op for op in table["ops"] if op["op"] == "append" and op["seq"] <= seq]
    deletes = [op for op in table["ops"] if op["op"] == "delete" and op["seq"] <= seq]
    live = []
    for a in appends:
        for row in (_java_row(table, r) for r in a["rows"]):
            dead = False
            for d in deletes:
                if not a["seq"] < d["seq"]:
                    continue  # a delete applies to older data only
                if d["partition"] is not None and (d["spec_id"] != a["spec_id"] or
                                                   d["partition"] != a["partition"]):
                    continue  # partition-scoped: same spec and partition only
                idx = [columns.index(c) for c in d["columns"]]
                for key in d["keys"]:
                    key = [_float(k) if columns[i] in table["float_columns"] else k
                           for k, i in zip(key, idx)]
                    if all(_same_value(row[i], k) for i, k in zip(idx, key)):
                        dead = True
                        break
                if dead:
                    break
            if not dead:
                live.append(row)
    return live


def _column_values(col: pa.ChunkedArray, name):
    """One column of our output in the program's canonical forms."""
    t = col.type
    if pa.types.is_date(t):
        return col.cast(pa.int32()).to_pylist()
    if pa.types.is_timestamp(t):
        return col.cast(pa.timestamp("us", t.tz)).cast(pa.int64()).to_pylist()
    if pa.types.is_time(t):
        return col.cast(pa.time64("us")).cast(pa.int64()).to_pylist()
    out = []
    for v in col.to_pylist():
        if isinstance(v, uuid.UUID):
            v = str(v)
        elif isinstance(v, bytes) and name == "u" and len(v) == 16:
            v = str(uuid.UUID(bytes=v))
        elif isinstance(v, bytes):
            v = v.hex()
        elif hasattr(v, "as_tuple"):  # Decimal: plain, at its scale (Java's toPlainString)
            v = format(v, "f")
        out.append(v)
    return out


def _arrow_rows(t: pa.Table, columns):
    cols = [_column_values(t.column(c), c) for c in columns]
    return [list(r) for r in zip(*cols)] if cols else []


# ------------------------------------------------------------------- tests


def test_java_reader_equals_brute_force(oracle):
    """The two oracles agree (the program wrote what the log says, Iceberg
    Java applied the deletes by the rules the brute force follows)."""
    problems = []
    deleted_somewhere = compared = 0
    for name in TABLES:
        t = oracle[name]
        bad = [op["seq"] for op in t["ops"] if op["op"] == "delete" and
               JAVA_UNRELIABLE_KEYS & set(op["columns"])]
        for s in t["snapshots"]:
            if bad and s["seq"] >= min(bad):
                continue
            compared += 1
            java = _canon(_java_row(t, r) for r in s["rows"])
            brute = _canon(brute_force(t, s["seq"]))
            if s["rows"] and len(s["rows"][0]) < len(t["columns"]):  # read without a later column
                brute = _canon(r[:len(s["rows"][0])] for r in brute_force(t, s["seq"]))
                java = _canon(r[:len(s["rows"][0])] for r in (_java_row(t, x) for x in s["rows"]))
            if java != brute:
                problems.append(f"{name} snapshot {s['snapshot']} (seq {s['seq']}): "
                                f"Java {len(java)} rows, brute force {len(brute)}")
            appended = sum(len(op["rows"]) for op in t["ops"]
                           if op["op"] == "append" and op["seq"] <= s["seq"])
            deleted_somewhere += appended - len(java)
        assert any(op["op"] == "delete" for op in t["ops"]), name
    assert not problems, "\n".join(problems)
    assert deleted_somewhere > 0  # the deletes delete something
    assert compared >= 50  # of 74 snapshots


def test_later_appends_survive(oracle):
    """Rows appended after a delete that re-use its keys are live (in the
    oracle: guards the sequence-number case the hdb test relies on)."""
    t = oracle["global_v2"]
    last = t["snapshots"][-1]
    ids = [r[0] for r in last["rows"]]
    del_ids = {k[0] for op in t["ops"] if op["op"] == "delete" and op["columns"] == ["id"]
               for k in op["keys"]}
    assert del_ids & set(ids), "a deleted id re-appended later must be live"


@pytest.mark.parametrize("name", TABLES)
def test_hdb_reads_java_equality_deletes(oracle, name):
    t = oracle[name]
    problems = []
    table = hdb.Table(t["location"])
    columns = t["columns"]
    for s in t["snapshots"]:
        # The brute force (equal to Java's reader wherever that is reliable, above).
        sid, want = s["snapshot"], _canon(brute_force(t, s["seq"]))
        where = f"{name} snapshot {sid} (seq {s['seq']}, {s['operation']})"
        try:
            out = table.to_arrow(snapshot_id=sid)
            # A snapshot before a column was added reads without it (its own schema).
            cols = [c for c in columns if c in out.column_names]
            want = _canon(r[:len(cols)] for r in brute_force(t, s["seq"]))
            got = _canon(_arrow_rows(out, cols))
            if got != want:
                problems.append(f"{where}: to_arrow {len(got)} rows, expected {len(want)}")
            # A projection without the key columns still drops the deleted rows.
            ids = sorted(r[0] for r in _arrow_rows(table.to_arrow(columns=["id"],
                                                                  snapshot_id=sid), ["id"]))
            if ids != sorted(w[0] for w in want):
                problems.append(f"{where}: to_arrow(columns=['id']) {len(ids)} rows, "
                                f"expected {len(want)}")
            stream = table.to_arrow_stream(snapshot_id=sid).read_all()
            if _canon(_arrow_rows(stream, cols)) != want:
                problems.append(f"{where}: to_arrow_stream {stream.num_rows} rows, "
                                f"expected {len(want)}")
            flt = _canon(_arrow_rows(table.to_arrow(filter="id < 60", snapshot_id=sid), cols))
            want_flt = [w for w in want if w[0] is not None and w[0] < 60]  # id is column 0
            if flt != want_flt:
                problems.append(f"{where}: filter id < 60 {len(flt)} rows, "
                                f"expected {len(want_flt)}")
        except Exception as e:  # noqa: BLE001 -- every failure is a reported problem
            problems.append(f"{where}: {type(e).__name__}: {e}")
    live = len(brute_force(t, t["snapshots"][-1]["seq"]))
    try:
        n = len(table)
        if n != live:
            problems.append(f"{name}: len(t) = {n}, expected {live} live rows")
    except Exception as e:  # noqa: BLE001
        problems.append(f"{name}: len(t): {type(e).__name__}: {e}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ["global_v2", "part_v3", "types_v2"])
def test_pyiceberg_where_it_answers(oracle, name):
    """pyiceberg reads the snapshots before the first delete exactly; on a
    snapshot with equality deletes it either refuses (0.x: "does not yet
    support equality deletes") or must give the oracle's rows."""
    from pyiceberg.table import StaticTable

    t = oracle[name]
    meta = sorted(glob.glob(os.path.join(t["location"], "metadata", "v*.metadata.json")),
                  key=lambda p: int(os.path.basename(p)[1:].split(".")[0]))[-1]
    st = StaticTable.from_metadata(meta)
    first_delete = min(op["seq"] for op in t["ops"] if op["op"] == "delete")
    compared = 0
    for s in t["snapshots"]:
        want = _canon(_java_row(t, r) for r in s["rows"])
        try:
            got = st.scan(snapshot_id=s["snapshot"]).to_arrow()
        except (NotImplementedError, ValueError) as e:
            assert s["seq"] >= first_delete, f"pyiceberg refused a snapshot without deletes: {e}"
            assert "equality delete" in str(e)
            continue
        assert _canon(_arrow_rows(got, t["columns"])) == want, f"{name} snapshot {s['snapshot']}"
        compared += 1
    assert compared >= 1


def test_spark_reads_java_equality_deletes(oracle, spark):
    """Spark's Iceberg reader (a third reader, its own delete filter over Spark rows) agrees
    with the brute force at every snapshot of the tables Spark can read (it has no TIME
    type, so not the types tables)."""
    problems = []
    compared = 0
    for name in [n for n in TABLES if not n.startswith("types")]:
        t = oracle[name]
        for s in t["snapshots"]:
            df = (spark.read.format("iceberg").option("snapshot-id", str(s["snapshot"]))
                  .load(t["location"]))
            cols = [c for c in t["columns"] if c in df.columns]
            got = _canon([list(r) for r in df.select(*cols).collect()])
            want = _canon(r[:len(cols)] for r in brute_force(t, s["seq"]))
            compared += 1
            if got != want:
                problems.append(f"{name} snapshot {s['snapshot']} (seq {s['seq']}): Spark "
                                f"{len(got)} rows, brute force {len(want)}")
    assert not problems, "\n".join(problems)
    assert compared >= 40
