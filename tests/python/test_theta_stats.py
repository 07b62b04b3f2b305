"""Column NDV statistics (issue 14 item 6): Table.compute_statistics writes a
Puffin statistics file of `apache-datasketches-theta-v1` blobs and lists it
in the metadata's `statistics`.

Oracles:
  * Apache DataSketches' Java library (datasketches-java 6.1.1 from Maven,
    tests/java/theta/ThetaCheck.java): it deserializes each of our blobs; its
    estimate must equal our `ndv` property and its 3-standard-deviation
    bounds must hold the true distinct count (pyarrow's count_distinct over
    the live rows); Java also builds its own sketch from the same values
    (serialized here, independently of the C code, as Iceberg single-value
    bytes) -- in exact mode its compact bytes must equal our blob byte for
    byte, in estimation mode its bounds must hold the truth too;
  * the Puffin footer and the metadata entry parsed here from the bytes
    (spec: magic, offsets, lengths, footer size, snapshot id and sequence
    number), and pyiceberg's parse of the metadata's `statistics`.
Empty strings and binaries are not counted (DataSketches rejects empty
values, and Iceberg feeds them as they are).
"""

import datetime as dt
import decimal
import glob
import json
import os
import shutil
import struct
import subprocess

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JAVA_SRC = os.path.join(REPO, "tests", "java", "theta", "ThetaCheck.java")
CLASSES = os.path.join(REPO, "build", "java-theta")
JARS = [os.path.join(REPO, "build", "jars", "datasketches-java-6.1.1.jar"),
        os.path.join(REPO, "build", "jars", "datasketches-memory-3.0.2.jar")]


@pytest.fixture(scope="session")
def theta_java():
    missing = [j for j in JARS if not os.path.exists(j)]
    missing += [t for t in ("java", "javac") if shutil.which(t) is None]
    if missing:
        pytest.fail("the DataSketches oracle needs " + ", ".join(missing) +
                    ": run scripts/setup.sh test")
    cp = os.pathsep.join(JARS)
    cls = os.path.join(CLASSES, "ThetaCheck.class")
    if not os.path.exists(cls) or os.path.getmtime(cls) < os.path.getmtime(JAVA_SRC):
        os.makedirs(CLASSES, exist_ok=True)
        r = subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", CLASSES, JAVA_SRC],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"javac failed:\n{r.stdout}\n{r.stderr}"

    def run(args):
        r = subprocess.run(["java", "-Xmx512m", "-XX:TieredStopAtLevel=1",
                            "-cp", os.pathsep.join([CLASSES, cp]),
                            "ThetaCheck"] + [str(a) for a in args],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"ThetaCheck failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        return r.stdout.splitlines()
    return run


# ------------------------------------------------- Iceberg single-value bytes


def _decimal_bytes(d, scale):
    n = int(d.scaleb(scale))
    length = ((n if n >= 0 else ~n).bit_length() + 8) // 8
    return n.to_bytes(length, "big", signed=True)


def _value_bytes(v, t):
    """Iceberg single-value serialization (spec Appendix D) of one value."""
    if pa.types.is_boolean(t):
        return b"\x01" if v else b"\x00"
    if pa.types.is_int32(t):
        return struct.pack("<i", v)
    if pa.types.is_int64(t):
        return struct.pack("<q", v)
    if pa.types.is_float32(t):
        return np.float32(v).tobytes()
    if pa.types.is_float64(t):
        return struct.pack("<d", v)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return v.encode("utf-8")
    if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
        return bytes(v)
    if pa.types.is_date32(t):
        return struct.pack("<i", (v - dt.date(1970, 1, 1)).days)
    if pa.types.is_timestamp(t):
        return struct.pack("<q", v)  # given as integers (microseconds)
    if pa.types.is_decimal(t):
        return _decimal_bytes(v, t.scale)
    raise AssertionError(f"no serialization for {t}")


def _values_file(path, col):
    t = col.type
    vals = col.cast(pa.int64()).to_pylist() if pa.types.is_timestamp(t) else col.to_pylist()
    with open(path, "w") as f:
        for v in vals:
            if v is not None:
                f.write(_value_bytes(v, t).hex() + "\n")


def _truth(col):
    if pa.types.is_string(col.type) or pa.types.is_binary(col.type):
        col = col.filter(pc.not_equal(pc.binary_length(col), 0))
    return pc.count_distinct(col, mode="only_valid").as_py()


# ----------------------------------------------------------------- the data


def _data(rng, n, big):
    """Columns of every primitive type; `big` distinct counts beyond 4096."""
    card = 30000 if big else 900
    ids = rng.integers(0, card, n)
    nulls = rng.random(n) < 0.1
    mask = pa.array(nulls)

    def nullable(arr):
        return pc.if_else(mask, pa.nulls(n, arr.type), arr)
    strs = [("" if i % 97 == 0 else f"s{i}") for i in ids]
    return pa.table({
        "id": pa.array(np.arange(n), pa.int64()),
        "i32": nullable(pa.array((ids * 7 - card).astype(np.int32))),
        "i64": nullable(pa.array(ids.astype(np.int64) * 1_000_003 - 5, pa.int64())),
        "f32": nullable(pa.array((ids / 8).astype(np.float32))),
        "f64": nullable(pa.array(ids * 0.25 - 1.5, pa.float64())),
        "s": nullable(pa.array(strs, pa.string())),
        "b": nullable(pa.array([x.encode() for x in strs], pa.binary())),
        "d": nullable(pa.array([dt.date(2000, 1, 1) + dt.timedelta(days=int(i % 5000))
                                for i in ids], pa.date32())),
        "ts": nullable(pa.array(ids.astype(np.int64) * 1_000_001, pa.timestamp("us"))),
        "dec": nullable(pa.array([decimal.Decimal(int(i) - card // 2).scaleb(-2) for i in ids],
                                 pa.decimal128(12, 2))),
        "flag": nullable(pa.array(ids % 2 == 0)),
        "one": pa.array(np.full(n, 7, np.int32)),  # a single-item sketch
        "nul": pa.nulls(n, pa.string()),  # an empty sketch
        "vec": pa.array([[float(i), 1.0] for i in ids], pa.list_(pa.float32(), 2)),
    })


def _footer(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"PFA1" and data[-4:] == b"PFA1"
    size, flags = struct.unpack("<ii", data[-12:-4])
    assert flags == 0
    assert data[-16 - size:-12 - size] == b"PFA1"
    return data, json.loads(data[-12 - size:-12]), size + 16


def _latest_metadata(root):
    vs = glob.glob(os.path.join(root, "metadata", "v*.metadata.json"))
    return max(vs, key=lambda p: int(os.path.basename(p)[1:].split(".")[0]))


@pytest.mark.parametrize("fmt,big", [(2, False), (3, True)])
def test_theta_blobs_against_datasketches(hdb, tmp_path, theta_java, fmt, big):
    rng = np.random.default_rng(40 + fmt)
    root = str(tmp_path / "t")
    t = hdb.Table(root, format_version=fmt)
    data = _data(rng, 60000 if big else 5000, big)
    half = data.num_rows // 2
    t.write(data.slice(0, half))
    t.write(data.slice(half))
    t.delete("id < 200")  # statistics count live rows only
    live = data.filter(pc.greater_equal(data["id"], 200))
    stats = t.compute_statistics()
    cols = [c for c in data.column_names if c != "vec"]
    assert sorted(stats.ndv) == sorted(cols)  # vectors have no NDV
    snap = t.snapshots()[-1]
    assert stats.snapshot_id == snap.snapshot_id
    # The metadata entry and the file agree (sizes, footer size, blobs).
    meta = json.load(open(_latest_metadata(root)))
    entries = [e for e in meta["statistics"] if e["snapshot-id"] == snap.snapshot_id]
    assert len(entries) == 1
    e = entries[0]
    assert e["statistics-path"] == stats.path
    assert os.path.dirname(stats.path) == os.path.join(root, "metadata")
    assert os.path.basename(stats.path).startswith(f"{snap.snapshot_id}-")
    data_bytes, footer, footer_size = _footer(stats.path)
    assert e["file-size-in-bytes"] == len(data_bytes) == os.path.getsize(stats.path)
    assert e["file-footer-size-in-bytes"] == footer_size
    blobs = footer["blobs"]
    assert [b["fields"] for b in blobs] == [[stats.field_ids[c]] for c in cols]
    assert [b["fields"] for b in e["blob-metadata"]] == [b["fields"] for b in blobs]
    for b, m in zip(blobs, e["blob-metadata"]):
        assert b["type"] == m["type"] == "apache-datasketches-theta-v1"
        assert b["snapshot-id"] == m["snapshot-id"] == snap.snapshot_id
        assert b["sequence-number"] == m["sequence-number"] == snap.sequence_number
        assert b["properties"]["ndv"] == m["properties"]["ndv"]
    # DataSketches reads every blob; Java's own sketch of the values.
    args = [stats.path]
    for c, b in zip(cols, blobs):
        vf = str(tmp_path / f"{c}.hex")
        _values_file(vf, live.column(c).combine_chunks())
        args += [b["offset"], b["length"], vf]
    out = theta_java(args)
    assert len(out) == 2 * len(cols)
    estimation = 0
    for k, (c, b) in enumerate(zip(cols, blobs)):
        truth = _truth(live.column(c).combine_chunks())
        ours = out[2 * k].split()
        java = out[2 * k + 1].split()
        assert ours[0] == "blob" and java[0] == "java"
        est, lo, hi = float(ours[1]), float(ours[2]), float(ours[3])
        ndv = int(b["properties"]["ndv"])
        assert ndv == int(est) == stats.ndv[c], c
        assert lo <= truth <= hi, f"{c}: true NDV {truth} outside [{lo}, {hi}]"
        jest, jlo, jhi = float(java[1]), float(java[2]), float(java[3])
        assert jlo <= truth <= jhi, c
        blob = data_bytes[b["offset"]:b["offset"] + b["length"]]
        if int(ours[5]) == 2**63 - 1:  # exact mode: the same sketch, byte for byte
            assert ndv == truth, c
            assert java[7] == blob.hex(), f"{c}: Java's compact sketch differs from ours"
        else:
            estimation += 1
            assert int(ours[4]) == 4096
            assert abs(est - truth) <= 0.05 * truth, c
    if big:
        assert estimation >= 5  # the large columns really were estimated
    # pyiceberg parses the statistics list.
    from pyiceberg.table import StaticTable
    st = StaticTable.from_metadata(_latest_metadata(root))
    assert [s.statistics_path for s in st.metadata.statistics] == [stats.path]


def test_statistics_replaced_listed_and_refused(hdb, tmp_path, theta_java):
    root = str(tmp_path / "t")
    t = hdb.Table(root, format_version=3)
    with pytest.raises(hdb.HyperStreamError):
        t.compute_statistics()  # no table yet
    t.write(pa.table({"id": pa.array([1, 2, 2, 3], pa.int64()),
                      "s": pa.array(["a", "b", None, "b"]),
                      "v": pa.array([[1.0, 2.0]] * 4, pa.list_(pa.float32(), 2))}))
    first = t.compute_statistics(["s"])
    assert first.ndv == {"s": 2}
    again = t.compute_statistics()
    assert again.ndv == {"id": 3, "s": 2}
    meta = json.load(open(_latest_metadata(root)))
    assert [e["statistics-path"] for e in meta["statistics"]] == [again.path]  # one per snapshot
    t.write(pa.table({"id": pa.array([9], pa.int64()), "s": pa.array(["z"]),
                      "v": pa.array([[0.0, 0.0]], pa.list_(pa.float32(), 2))}))
    third = t.compute_statistics(["id"])
    meta = json.load(open(_latest_metadata(root)))
    assert sorted(e["statistics-path"] for e in meta["statistics"]) == \
        sorted([again.path, third.path])
    assert third.ndv == {"id": 4}
    # Later commits keep the list; orphan removal keeps the files.
    t.delete("id = 9")
    meta = json.load(open(_latest_metadata(root)))
    assert len(meta["statistics"]) == 2
    t.remove_orphan_files(older_than=dt.datetime.now() + dt.timedelta(days=1))
    assert os.path.exists(again.path) and os.path.exists(third.path)
    with pytest.raises(hdb.UnsupportedError, match="'v'"):
        t.compute_statistics(["v"])
    with pytest.raises(hdb.NotFoundError, match="'nope'"):
        t.compute_statistics(["nope"])
    with pytest.raises(hdb.InvalidArgumentError):
        t.compute_statistics([])
    # A single-value and an exact blob read by DataSketches.
    one = t.compute_statistics(["s"])
    _, footer, _ = _footer(one.path)
    b = footer["blobs"][0]
    out = theta_java([one.path, b["offset"], b["length"], "-"])
    assert out[0].split()[1:2] == ["2.0"]


def test_iceberg_java_lists_our_statistics(spark, spark_table, hdb):
    """Iceberg's Java library (the Spark runtime) loads our table and lists
    our statistics file (Table.statisticsFiles()) with its blob metadata."""
    ident, path = spark_table
    t = hdb.Table(path, format_version=3)
    t.write(pa.table({"id": pa.array(range(3000), pa.int64()),
                      "s": pa.array([f"k{i % 250}" for i in range(3000)])}))
    stats = t.compute_statistics()
    jvm = spark._jvm
    tables = jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    jt = tables.load(path)
    files = list(jt.statisticsFiles())
    assert len(files) == 1
    f = files[0]
    assert f.snapshotId() == stats.snapshot_id
    assert f.path() == stats.path
    assert f.fileSizeInBytes() == os.path.getsize(stats.path)
    blobs = list(f.blobMetadata())
    assert [b.type() for b in blobs] == ["apache-datasketches-theta-v1"] * 2
    assert sorted((list(b.fields())[0], b.properties().get("ndv")) for b in blobs) == \
        sorted((stats.field_ids[c], str(v)) for c, v in stats.ndv.items())
    assert stats.ndv == {"id": 3000, "s": 250}
    # Spark reads the table after the metadata-only commit as before.
    from spark_util import CATALOG
    spark.sql(f"REFRESH TABLE {CATALOG}.{ident}")
    assert spark.sql(f"SELECT count(DISTINCT s) AS n FROM {CATALOG}.{ident}").collect()[0].n == 250


def test_statistics_expire_with_their_snapshot(hdb, tmp_path):
    root = str(tmp_path / "t")
    t = hdb.Table(root, format_version=2)
    t.write(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    first = t.compute_statistics()
    t.write(pa.table({"id": pa.array([4, 5], pa.int64())}))
    second = t.compute_statistics()
    assert second.ndv == {"id": 5}
    t.expire_snapshots(older_than=dt.timedelta(seconds=0), retain_last=1)
    meta = json.load(open(_latest_metadata(root)))
    assert [e["snapshot-id"] for e in meta["statistics"]] == [second.snapshot_id]
    assert not os.path.exists(first.path)  # only the expired snapshot used it
    assert os.path.exists(second.path)
    from pyiceberg.table import StaticTable
    st = StaticTable.from_metadata(_latest_metadata(root))
    assert [s.snapshot_id for s in st.metadata.statistics] == [second.snapshot_id]
    assert t.to_arrow().num_rows == 5
