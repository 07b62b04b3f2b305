"""ARROW:schema in Parquet footers, both directions, with pyarrow as the oracle.

* Our writer stores base64(IPC schema) under "ARROW:schema" like pyarrow, so
  pyarrow reads our files with the Arrow types it would restore for its own
  files (large_string, fixed_size_list, time-zone names, durations).
* Our reader refines the Parquet-derived types from a pyarrow-written
  ARROW:schema where the data layout is unchanged (fixed-size lists, time
  zones, durations); a malformed or mismatching ARROW:schema never fails a
  read.
* Regression: pyarrow writes empty data pages (and offset indexes whose first
  rows repeat) for list columns with tiny pages; row selection must still
  work. DuckDB is the oracle there: pyarrow cannot read some of these files.
"""

import base64
import os
import random
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conftest  # noqa: E402,F401


def _table():
    return pa.table({
        "ls": pa.array(["a", None, "ccc"], pa.large_string()),
        "vec": pa.array([[1.0, 2.0], [3.0, 4.0], None], pa.list_(pa.float32(), 2)),
        "tz": pa.array([1, 2, None], pa.timestamp("us", "Europe/Paris")),
        "tsn": pa.array([1, None, 3], pa.timestamp("ns", "UTC")),
        "dur": pa.array([1, None, 3], pa.duration("ms")),
        "durs": pa.array([5, 6, None], pa.duration("s")),
        "d64": pa.array([86400000, None, 0], pa.date64()),
        "t32s": pa.array([1, 2, 3], pa.time32("s")),
        "tss": pa.array([1, 2, 3], pa.timestamp("s")),
        "bin": pa.array([b"x", b"y", None], pa.binary()),
        "lst": pa.array([[1], [], None], pa.list_(pa.int64())),
    })


def test_pyarrow_reads_our_arrow_schema(hdb, tmp_path):
    t = _table()
    ours, theirs = str(tmp_path / "ours.parquet"), str(tmp_path / "theirs.parquet")
    hdb.parquet.write_table(t, ours)
    pq.write_table(t, theirs)
    meta = pq.read_metadata(ours).metadata
    assert b"ARROW:schema" in meta and b"hyperstream:fixed_size_list" in meta
    stored = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(meta[b"ARROW:schema"])))
    assert stored.names == t.schema.names
    for f in t.schema:  # the exact types we were given
        assert stored.field(f.name).type == f.type, f.name
    got, want = pq.read_table(ours), pq.read_table(theirs)
    assert got.schema == want.schema  # pyarrow restores exactly what it does for its own files
    assert got.to_pylist() == want.to_pylist()


def test_we_read_pyarrow_arrow_schema(hdb, tmp_path):
    t = _table()
    path = str(tmp_path / "theirs.parquet")
    pq.write_table(t, path)
    got = hdb.parquet.read_table(path)
    s = got.schema
    assert pa.types.is_fixed_size_list(s.field("vec").type)
    assert s.field("vec").type.list_size == 2
    assert s.field("tz").type == pa.timestamp("us", "Europe/Paris")
    assert s.field("tsn").type == pa.timestamp("ns", "UTC")
    assert s.field("dur").type == pa.duration("ms")
    assert s.field("durs").type == pa.duration("s")
    assert s.field("bin").type == pa.binary()
    # Refinements that would need the values converted keep the Parquet type
    # (pyarrow 26 does the same for date64, time32[s] and timestamp[s]).
    assert s.field("d64").type == pa.date32()
    assert s.field("t32s").type == pa.time32("ms")
    for name in t.column_names:
        assert got.column(name).to_pylist() == pq.read_table(path).column(name).to_pylist(), name


@pytest.mark.parametrize("value", [
    b"not base64 at all!",
    base64.b64encode(b"\xff\xff\xff\xff\x10\x00\x00\x00garbage-garbage-"),
    # a valid schema of a different table: names and types do not match
    base64.b64encode(pa.schema([("other", pa.duration("s"))]).serialize().to_pybytes()),
    # a valid schema with the same names but incompatible types
    base64.b64encode(pa.schema([("a", pa.duration("s")), ("v", pa.list_(pa.string(), 3))])
                     .serialize().to_pybytes()),
    b"",
])
def test_malformed_arrow_schema_is_ignored(hdb, tmp_path, value):
    t = pa.table({"a": pa.array([1, 2, None], pa.int32()),
                  "v": pa.array([[1.0, 2.0], None, [3.0, 4.0]], pa.list_(pa.float64()))})
    path = str(tmp_path / "bad_meta.parquet")
    # pyarrow writes its own ARROW:schema: store the value under a key of the
    # same length and swap the two names in the footer bytes.
    pq.write_table(t.replace_schema_metadata({b"ARROW:schemX": value}), path)
    data = open(path, "rb").read()
    assert data.count(b"ARROW:schemX") == 1 and data.count(b"ARROW:schema") == 1
    with open(path, "wb") as f:
        f.write(data.replace(b"ARROW:schema", b"ARROW:schemY")
                .replace(b"ARROW:schemX", b"ARROW:schema"))
    # (pyarrow itself fails on most of these files)
    got = hdb.parquet.read_table(path)
    assert got.schema.field("a").type == pa.int32()
    assert pa.types.is_list(got.schema.field("v").type)
    assert got.to_pylist() == t.to_pylist()


@pytest.mark.parametrize("seed", range(40))
def test_row_selection_pyarrow_empty_pages(hdb, tmp_path, seed):
    duckdb = pytest.importorskip("duckdb")
    rng = random.Random(seed)
    n = rng.choice([1, 2, 5, 17, 100])
    large = seed % 2 == 1
    vals = [None if rng.random() < .1 else
            [rng.randint(-9, 9) for _ in range(rng.choice([0, 1, 3, 8]))] for _ in range(n)]
    t = pa.table({"l": pa.array(vals, pa.large_list(pa.int32()) if large else pa.list_(pa.int32())),
                  "x": pa.array(range(n), pa.int64())})
    path = str(tmp_path / f"sel{seed}.parquet")
    pq.write_table(t, path, data_page_size=rng.choice([1, 10]),
                   write_batch_size=rng.choice([1, 2, 3]), use_dictionary=True,
                   data_page_version=rng.choice(["1.0", "2.0"]), write_page_index=True,
                   row_group_size=rng.choice([3, 1 << 20]))
    rows = duckdb.connect().sql(f"select l, x from '{path}'").fetchall()
    assert [r[0] for r in rows] == vals
    assert hdb.parquet.read_table(path).column("l").to_pylist() == vals
    for _ in range(3):
        sel = sorted(rng.sample(range(n), rng.randint(1, n)))
        got = hdb.parquet.read_table(path, rows=sel)
        assert got.column("l").to_pylist() == [vals[i] for i in sel]
        assert got.column("x").to_pylist() == sel
