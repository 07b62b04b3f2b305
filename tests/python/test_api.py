"""The Python API of hyperstreamdb.parquet and hyperstreamdb._core.

Covers: round trips (ours -> ours and ours -> pyarrow) over several tables and
every accepted input kind (pyarrow Table / RecordBatch / RecordBatchReader,
pandas, polars, dict, our own ParquetStream); the mapping of every
write_table option onto what pyarrow sees in the file; the exception classes
and messages; and the PyCapsule protocol (one-shot streams, capsules dropped
unconsumed, foreign capsules consumed by move).
"""

import decimal
import gc
import json
import os
import sys
import threading

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conftest  # noqa: E402


def _tables():
    n = 1000
    rng = np.random.default_rng(7)
    return {
        "ints_strings_nulls": pa.table({
            "id": pa.array(range(n), pa.int64()),
            "small": pa.array([None if i % 7 == 0 else i % 100 for i in range(n)], pa.int32()),
            "name": pa.array([None if i % 11 == 0 else f"name-{i % 37}" for i in range(n)]),
        }),
        "floats_bools": pa.table({
            "f64": pa.array(rng.standard_normal(n)),
            "f32": pa.array(rng.standard_normal(n).astype(np.float32)),
            "flag": pa.array([None if i % 5 == 0 else i % 2 == 0 for i in range(n)]),
        }),
        "temporal_decimal": pa.table({
            "ts": pa.array(np.arange(n, dtype=np.int64) * 1_000_003, pa.timestamp("us", "UTC")),
            "d": pa.array(np.arange(n, dtype=np.int32) - 500, pa.date32()),
            "dec": pa.array([decimal.Decimal(i) / 100 for i in range(n)], pa.decimal128(9, 2)),
        }),
        "lists": pa.table({
            "tags": pa.array([None if i % 9 == 0 else [f"t{j}" for j in range(i % 4)]
                              for i in range(n)], pa.list_(pa.string())),
            "vec": pa.array([[float(i), float(-i), 0.5] for i in range(n)],
                            pa.list_(pa.float32(), 3)),
        }),
        "empty": pa.table({"a": pa.array([], pa.int64()), "b": pa.array([], pa.string())}),
    }


TABLES = _tables()


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "t.parquet")


# ------------------------------------------------------------ round trips


@pytest.mark.parametrize("name", sorted(TABLES))
def test_round_trip(hdb, path, name):
    table = TABLES[name]
    hdb.parquet.write_table(table, path, row_group_size=300)
    ours = hdb.parquet.read_table(path)
    conftest.assert_tables_equal(ours, table, what=f"{name}: ours->ours")
    theirs = pq.read_table(path)
    conftest.assert_tables_equal(theirs.select(table.column_names), _as_pyarrow_reads(theirs, table),
                                 check_nullability=False, what=f"{name}: ours->pyarrow")


def _as_pyarrow_reads(theirs, table):
    """`table` with fixed-size lists as lists when pyarrow reads them so: a
    fixed size is Arrow-only information that pyarrow recovers only from its
    own ARROW:schema footer entry."""
    cols = []
    for f in table.schema:
        col = table.column(f.name)
        got = theirs.schema.field(f.name).type
        if pa.types.is_fixed_size_list(f.type) and pa.types.is_list(got):
            col = col.cast(got)
        cols.append(col)
    return pa.Table.from_arrays(cols, names=table.column_names)


def test_read_pyarrow_file_projection_and_rows(hdb, path):
    table = TABLES["ints_strings_nulls"]
    pq.write_table(table, path, row_group_size=128)
    got = hdb.parquet.read_table(path, columns=["name", "id"], rows=[0, 5, 129, 999])
    want = table.select(["name", "id"]).take([0, 5, 129, 999])
    conftest.assert_tables_equal(got, want, check_nullability=False)


def test_filters_prune_row_groups(hdb, path):
    table = TABLES["ints_strings_nulls"]
    pq.write_table(table, path, row_group_size=100)
    s = hdb.parquet.open_stream(path, filters=[("id", ">=", 900)])
    assert (s.num_rows, s.num_row_groups, s.row_groups_selected) == (1000, 10, 1)
    t = pa.table(s)
    assert t.column("id").to_pylist() == list(range(900, 1000))


def test_input_kinds(hdb, tmp_path):
    table = TABLES["ints_strings_nulls"]
    inputs = {
        "table": table,
        "record_batch": table.to_batches()[0] if table.num_rows else table,
        "reader": pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=64)),
        "dict": {"id": table.column("id").to_pylist(), "name": table.column("name").to_pylist()},
    }
    for kind, data in inputs.items():
        p = str(tmp_path / f"{kind}.parquet")
        hdb.parquet.write_table(data, p)
        assert pq.read_metadata(p).num_rows == table.num_rows, kind
    got = hdb.parquet.read_table(str(tmp_path / "dict.parquet"))
    assert got.column("name").to_pylist() == table.column("name").to_pylist()


def test_pandas_input(hdb, path):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"x": [1, 2, 3], "y": ["a", None, "c"], "z": [0.5, 1.5, float("nan")]},
                      index=[10, 20, 30])
    hdb.parquet.write_table(df, path)
    got = hdb.parquet.read_table(path)
    assert got.column_names == ["x", "y", "z"]  # the index is not written
    assert got.column("y").to_pylist() == ["a", None, "c"]
    back = pq.read_table(path).to_pandas()
    assert back["x"].tolist() == [1, 2, 3]


def test_polars_input_and_output(hdb, path):
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"a": [1, 2, None], "b": ["x", "y", "z"]})
    hdb.parquet.write_table(df, path, compression="snappy")
    assert pq.read_table(path).column("a").to_pylist() == [1, 2, None]
    back = pl.from_arrow(hdb.parquet.read_table(path))
    assert back["b"].to_list() == ["x", "y", "z"]


def test_parquet_stream_as_writer_input(hdb, tmp_path):
    src, dst = str(tmp_path / "src.parquet"), str(tmp_path / "dst.parquet")
    table = TABLES["temporal_decimal"]
    pq.write_table(table, src)
    hdb.parquet.write_table(hdb.parquet.open_stream(src, batch_rows=100), dst)
    conftest.assert_tables_equal(pq.read_table(dst), table, check_nullability=False)


# ------------------------------------------------------------ options


# pyarrow names Parquet's LZ4_RAW codec "LZ4" (and the legacy framed one "LZ4_HADOOP").
@pytest.mark.parametrize("codec,expected", [("zstd", "ZSTD"), ("snappy", "SNAPPY"),
                                            ("gzip", "GZIP"), ("lz4", "LZ4"),
                                            ("brotli", "BROTLI"),
                                            (None, "UNCOMPRESSED"), ("none", "UNCOMPRESSED")])
def test_compression(hdb, path, codec, expected):
    hdb.parquet.write_table(TABLES["ints_strings_nulls"], path, compression=codec)
    md = pq.read_metadata(path)
    assert {md.row_group(0).column(i).compression for i in range(md.num_columns)} == {expected}
    conftest.assert_tables_equal(hdb.parquet.read_table(path), TABLES["ints_strings_nulls"])
    # pyarrow decodes what we wrote, whatever the codec
    conftest.assert_tables_equal(pq.read_table(path), TABLES["ints_strings_nulls"])


def test_options_reach_the_file(hdb, path):
    table = TABLES["ints_strings_nulls"]
    hdb.parquet.write_table(
        table, path, row_group_size=250, data_page_version="2.0", compression_level=3,
        column_encoding={"id": "DELTA_BINARY_PACKED", "name": "DELTA_BYTE_ARRAY"},
        use_dictionary=False, write_statistics=True, write_page_index=True,
        write_page_checksum=True, metadata={"owner": "front", b"raw": b"bytes"},
        field_ids={"id": 10, "small": 11, "name": 12})
    pf = pq.ParquetFile(path)
    md = pf.metadata
    assert md.num_row_groups == 4
    cols = {md.row_group(0).column(i).path_in_schema: md.row_group(0).column(i)
            for i in range(md.num_columns)}
    assert "DELTA_BINARY_PACKED" in cols["id"].encodings
    assert "DELTA_BYTE_ARRAY" in cols["name"].encodings
    assert not any("DICTIONARY" in e for c in cols.values() for e in c.encodings)
    assert cols["id"].statistics is not None and cols["id"].statistics.min == 0
    assert cols["id"].has_column_index and cols["id"].has_offset_index
    assert md.metadata[b"owner"] == b"front" and md.metadata[b"raw"] == b"bytes"
    assert [pf.schema_arrow.field(n).metadata[b"PARQUET:field_id"]
            for n in ("id", "small", "name")] == [b"10", b"11", b"12"]
    # CRCs written must verify.
    t = pq.read_table(path, page_checksum_verification=True)
    conftest.assert_tables_equal(t, table, check_nullability=False)


def test_statistics_and_page_index_off(hdb, path):
    hdb.parquet.write_table(TABLES["ints_strings_nulls"], path, write_statistics=False,
                            write_page_index=False)
    col = pq.read_metadata(path).row_group(0).column(0)
    assert col.statistics is None or not col.statistics.has_min_max
    assert not col.has_column_index


def test_use_dictionary_list_and_all_columns_encoding(hdb, tmp_path):
    table = TABLES["ints_strings_nulls"]
    p1 = str(tmp_path / "d.parquet")
    hdb.parquet.write_table(table, p1, use_dictionary=["name"])
    rg = pq.read_metadata(p1).row_group(0)
    enc = {rg.column(i).path_in_schema: rg.column(i).encodings for i in range(3)}
    assert any("DICTIONARY" in e for e in enc["name"])
    assert not any("DICTIONARY" in e for e in enc["id"])
    p2 = str(tmp_path / "p.parquet")
    hdb.parquet.write_table(table.select(["id", "small"]), p2, column_encoding="PLAIN",
                            use_dictionary=False)
    rg = pq.read_metadata(p2).row_group(0)
    assert all("PLAIN" in rg.column(i).encodings for i in range(2))


@pytest.mark.parametrize("kwargs,needle", [
    ({"compression": "lzo"}, "compression must be one of"),
    ({"data_page_version": "3.0"}, "data_page_version"),
    ({"column_encoding": {"id": "FANCY"}}, "column_encoding['id'] must be one of"),
    ({"row_group_size": 0}, "row_group_size"),
    ({"data_page_size": -1}, "data_page_size"),
    ({"field_ids": {"nope": 1}}, "nope"),
    ({"use_dictionary": ["nope"]}, "nope"),
])
def test_bad_options(hdb, path, kwargs, needle):
    with pytest.raises((ValueError, hdb.HyperStreamError)) as e:
        hdb.parquet.write_table(TABLES["ints_strings_nulls"], path, **kwargs)
    assert needle in str(e.value)
    assert isinstance(e.value, hdb.HyperStreamError)
    assert not os.path.exists(path)


def test_bad_data_type(hdb, path):
    with pytest.raises(TypeError, match="__arrow_c_stream__"):
        hdb.parquet.write_table(42, path)


# ------------------------------------------------------------ errors


def test_exception_hierarchy(hdb):
    assert issubclass(hdb.NotFoundError, FileNotFoundError)
    assert issubclass(hdb.HSIOError, OSError)
    assert issubclass(hdb.InvalidArgumentError, ValueError)
    for name in ("CorruptFileError", "UnsupportedError", "SchemaError", "NotFoundError",
                 "HSIOError", "InvalidArgumentError"):
        assert issubclass(getattr(hdb, name), hdb.HyperStreamError), name


def test_missing_file(hdb, tmp_path):
    p = str(tmp_path / "missing.parquet")
    with pytest.raises(hdb.NotFoundError) as e:
        hdb.parquet.read_table(p)
    assert p in str(e.value)
    assert isinstance(e.value, FileNotFoundError)
    assert e.value.status == "not found"
    with pytest.raises(FileNotFoundError):
        hdb.parquet.inspect(p)


@pytest.mark.parametrize("content", [b"", b"PAR1", b"not a parquet file at all" * 10,
                                     b"PAR1" + b"\x00" * 64 + b"\xff\xff\x00\x00PAR1"])
def test_corrupt_file(hdb, path, content):
    with open(path, "wb") as f:
        f.write(content)
    with pytest.raises(hdb.CorruptFileError) as e:
        hdb.parquet.read_table(path)
    assert path in str(e.value)


def test_truncated_file(hdb, path):
    pq.write_table(TABLES["ints_strings_nulls"], path)
    data = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])
    with pytest.raises(hdb.CorruptFileError, match="t.parquet"):
        hdb.parquet.read_table(path)


def test_missing_column(hdb, path):
    pq.write_table(TABLES["ints_strings_nulls"], path)
    with pytest.raises(hdb.HyperStreamError) as e:
        hdb.parquet.read_table(path, columns=["id", "no_such_column"])
    assert "no_such_column" in str(e.value)


def test_bad_rows(hdb, path):
    pq.write_table(TABLES["ints_strings_nulls"], path)
    with pytest.raises(ValueError, match="strictly increasing"):
        hdb.parquet.read_table(path, rows=[5, 3])
    with pytest.raises(ValueError, match="out of range"):
        hdb.parquet.read_table(path, rows=[0, 5000])
    with pytest.raises(ValueError, match="operator"):
        hdb.parquet.read_table(path, filters=[("id", "~", 1)])


def test_write_to_missing_directory(hdb, tmp_path):
    p = str(tmp_path / "no" / "such" / "dir" / "t.parquet")
    with pytest.raises(OSError) as e:
        hdb.parquet.write_table(TABLES["ints_strings_nulls"], p)
    assert isinstance(e.value, hdb.HyperStreamError)
    assert "t.parquet" in str(e.value)


def test_failing_source_leaves_no_file(hdb, path):
    table = TABLES["ints_strings_nulls"]

    def batches():
        yield table.to_batches()[0]
        raise RuntimeError("source exploded")

    reader = pa.RecordBatchReader.from_batches(table.schema, batches())
    with pytest.raises(Exception) as e:
        hdb.parquet.write_table(reader, path)
    assert "exploded" in str(e.value) or isinstance(e.value, hdb.HyperStreamError)
    assert not os.path.exists(path)


# ------------------------------------------------------------ PyCapsule protocol


def test_stream_consumed_twice(hdb, path):
    pq.write_table(TABLES["ints_strings_nulls"], path)
    s = hdb.parquet.open_stream(path)
    assert not s.consumed
    assert pa.table(s).num_rows == 1000
    assert s.consumed
    with pytest.raises(hdb.HyperStreamError, match="already consumed"):
        s.__arrow_c_stream__()
    with pytest.raises(hdb.HyperStreamError):
        pa.table(s)


def _open_fds():
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0


def test_capsule_dropped_unconsumed_releases(hdb, path):
    pq.write_table(TABLES["lists"], path)
    before = _open_fds()
    for _ in range(300):
        s = hdb.parquet.open_stream(path)
        cap = s.__arrow_c_stream__()
        assert type(cap).__name__ == "PyCapsule"
        del cap, s
        s = hdb.parquet.open_stream(path)  # never exported: released by dealloc
        del s
        s = hdb.parquet.open_stream(path)
        s.close()
        s.close()
    gc.collect()
    assert _open_fds() <= before + 2  # every stream closed its file


def test_requested_schema_is_accepted(hdb, path):
    pq.write_table(TABLES["ints_strings_nulls"], path)
    s = hdb.parquet.open_stream(path)
    schema_capsule = pa.schema([("id", pa.int64())]).__arrow_c_schema__()
    cap = s.__arrow_c_stream__(schema_capsule)
    reader = pa.RecordBatchReader._import_from_c_capsule(cap)
    assert reader.read_all().num_rows == 1000


def test_schema_and_metadata(hdb, path):
    table = TABLES["temporal_decimal"]
    pq.write_table(table, path, row_group_size=400)
    assert hdb.parquet.read_schema(path).names == table.column_names
    md = hdb.parquet.read_metadata(path)
    ref = pq.read_metadata(path)
    assert (md.num_rows, md.num_row_groups, md.num_columns) == (1000, 3, 3)
    assert md.created_by == ref.created_by
    assert md.schema == hdb.parquet.read_schema(path)
    assert set(md.metadata) == {k.decode() for k in ref.metadata}
    assert [g.num_rows for g in md.row_groups] == [400, 400, 200]
    for i, g in enumerate(md.row_groups):
        assert g.index == i and g.num_columns == 3 and len(list(g)) == 3
        for j, c in enumerate(g):
            rc = ref.row_group(i).column(j)
            assert (c.path, c.physical_type, c.num_values) == (
                rc.path_in_schema, rc.physical_type, rc.num_values)
            assert (c.compressed_size, c.uncompressed_size) == (
                rc.total_compressed_size, rc.total_uncompressed_size)
            assert c.codec == rc.compression
            assert c.statistics["null_count"] == rc.statistics.null_count
    assert md.row_group(0).column(0).path == "ts"
    assert md.to_dict()["row_groups"][2]["num_rows"] == 200
    r = repr(md)
    assert r.startswith("<FileMetadata ") and "num_rows=1000" in r and "num_row_groups=3" in r
    assert "num_rows=400" in repr(md.row_group(0))
    assert "'ts'" in repr(md.row_group(0).column(0))
    with pytest.raises(hdb.NotFoundError):
        hdb.parquet.read_metadata(path + ".missing")


def test_inspect(hdb, path):
    pq.write_table(TABLES["ints_strings_nulls"], path, compression="snappy")
    text = hdb.parquet.inspect(path)
    assert isinstance(text, str) and "name" in text
    doc = hdb.parquet.inspect(path, json=True)
    assert isinstance(doc, dict)
    assert "1000" in json.dumps(doc)


def test_threads_share_the_library(hdb, tmp_path):
    """Calls release the GIL; concurrent reads and writes must stay correct."""
    table = TABLES["ints_strings_nulls"]
    errors = []

    def work(i):
        try:
            p = str(tmp_path / f"t{i}.parquet")
            for _ in range(5):
                hdb.parquet.write_table(table, p)
                conftest.assert_tables_equal(hdb.parquet.read_table(p), table)
        except BaseException as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_version(hdb):
    assert hdb.__version__ == "0.1.0"
    assert hdb._core.__version__ == "0.1.0"


# ------------------------------------------------------------ errors met mid-stream


def _crc_damaged_file(path):
    """A file whose footer is intact but whose second data page fails its CRC:
    opening succeeds, decoding fails."""
    n = 4000
    pq.write_table(pa.table({"id": pa.array(np.arange(n, dtype=np.int64) + 10**12)}), path,
                   compression="none", use_dictionary=False, write_page_checksum=True,
                   data_page_size=2048, write_statistics=False, row_group_size=1000)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    pos = data.find((10**12 + 2500).to_bytes(8, "little", signed=True))
    assert pos > 0
    data[pos] ^= 0x10
    with open(path, "wb") as f:
        f.write(bytes(data))


def test_stream_errors_raise_our_classes(hdb, path):
    _crc_damaged_file(path)
    s = hdb.parquet.open_stream(path)  # the footer is fine
    assert s.state == "open"
    with pytest.raises(hdb.CorruptFileError) as e:
        hdb.parquet.read_table(path)
    assert "t.parquet" in str(e.value) and "crc" in str(e.value).lower()
    assert e.value.status == "corrupt data"  # hs_status_str(HS_ERR_CORRUPT)
    reader = hdb.parquet.iter_batches(path, batch_rows=500)
    got = []
    with pytest.raises(hdb.CorruptFileError, match="t.parquet"):
        for batch in reader:
            got.append(batch.num_rows)
    assert sum(got) == 2000  # the two row groups before the damaged one
    with pytest.raises(hdb.CorruptFileError):
        hdb.parquet.iter_batches(path).read_all()
    # The stream is left failed: it says so instead of reading on.
    reader = hdb.parquet.stream_reader(s)
    with pytest.raises(hdb.CorruptFileError):
        reader.read_all()
    assert s.consumed and s.state == "failed" and "failed" in repr(s)
    with pytest.raises(hdb.HyperStreamError, match="failed"):
        s.__arrow_c_stream__()
    # The raw C stream interface carries only an errno: pyarrow's OSError.
    with pytest.raises(OSError, match="t.parquet"):
        pa.RecordBatchReader.from_stream(hdb.parquet.open_stream(path)).read_all()


def test_stream_repr_and_states(hdb, path):
    pq.write_table(TABLES["ints_strings_nulls"], path, row_group_size=300)
    s = hdb.parquet.open_stream(path, filters=[("id", "<", 10)])
    r = repr(s)
    assert r.startswith("<ParquetStream ") and "t.parquet" in r
    assert "num_rows=1000" in r and "row_groups=1/4" in r and r.endswith("open>")
    reader = hdb.parquet.stream_reader(s)
    assert reader.schema == hdb.parquet.read_schema(path)
    assert reader.read_all().num_rows == 300
    assert s.state == "exhausted" and s.batches_read == 1 and "exhausted" in repr(s)
    with pytest.raises(hdb.HyperStreamError, match="already consumed"):
        pa.table(s)
    s = hdb.parquet.open_stream(path)
    s.__arrow_c_stream__()
    assert s.state == "exported"
    s = hdb.parquet.open_stream(path)
    s.close()
    assert s.state == "closed"
    with pytest.raises(hdb.HyperStreamError, match="closed"):
        hdb.parquet.stream_reader(s)


def test_read_empty_file(hdb, path):
    hdb.parquet.write_table(TABLES["empty"], path)
    conftest.assert_tables_equal(hdb.parquet.read_table(path), TABLES["empty"])
    assert hdb.parquet.iter_batches(path).read_all().num_rows == 0


# ------------------------------------------------------------ dictionary columns


def test_dictionary_columns_are_written_decoded(hdb, tmp_path):
    d = pa.array(["x", "y", None, "x", ""]).dictionary_encode()
    di = pa.array([7, None, 7, 8, 9], pa.int64()).dictionary_encode()
    lst = pa.ListArray.from_arrays(pa.array([0, 2, 2, 5, 5, 5], pa.int32()), d)
    fsl = pa.FixedSizeListArray.from_arrays(pa.array(["p", "q"] * 5).dictionary_encode(), 2)
    table = pa.table({"d": d, "di": di, "lst": lst, "fsl": fsl})
    want = table.cast(pa.schema([
        ("d", pa.string()), ("di", pa.int64()), ("lst", pa.list_(pa.string())),
        ("fsl", pa.list_(pa.string(), 2)),
    ]))
    inputs = {
        "table": table,
        "batch": table.to_batches()[0],
        "reader": pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=2)),
        "capsule_only": _CapsuleOnly(table),
    }
    for kind, data in inputs.items():
        p = str(tmp_path / f"{kind}.parquet")
        hdb.parquet.write_table(data, p)
        theirs = pq.read_table(p)
        for name in want.column_names:
            got = theirs.column(name)
            if pa.types.is_dictionary(got.type):
                got = got.cast(got.type.value_type)
            assert got.to_pylist() == want.column(name).to_pylist(), (kind, name)
        conftest.assert_tables_equal(hdb.parquet.read_table(p), want, check_nullability=False,
                                     what=kind)


class _CapsuleOnly:
    """Only the PyCapsule stream protocol, like a foreign library's table."""

    def __init__(self, table):
        self._table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self._table.__arrow_c_stream__(requested_schema)


# ------------------------------------------------------------ the package surface


def test_public_names(hdb):
    for name in hdb.__all__:
        assert hasattr(hdb, name), name
    for name in hdb.parquet.__all__:
        obj = getattr(hdb.parquet, name)
        if callable(obj) and not isinstance(obj, type):
            assert obj.__doc__ and obj.__doc__.strip(), f"{name} has no docstring"
    for name in ("read_table", "write_table", "iter_batches", "open_stream", "stream_reader",
                 "read_schema", "read_metadata", "inspect", "FileMetadata"):
        assert name in hdb.parquet.__all__, name
    for name in ("HyperStreamError", "CorruptFileError", "parquet"):
        assert name in hdb.__all__, name


def test_dictionary_decoding_reaches_every_depth(hdb):
    """Structs and maps are not written by the C writer yet, but the Python
    side already decodes dictionaries inside them."""
    dict_s = pa.dictionary(pa.int8(), pa.string())
    nested = pa.struct([("a", dict_s), ("m", pa.map_(dict_s, pa.list_(dict_s)))])
    assert hdb.parquet._storable_type(nested) == pa.struct(
        [("a", pa.string()), ("m", pa.map_(pa.string(), pa.list_(pa.string())))])
    assert hdb.parquet._storable_type(pa.large_list(dict_s)) == pa.large_list(pa.string())


def test_core_stub_is_complete(hdb):
    """_core.pyi declares every public name of the extension module, and every
    attribute and method of ParquetStream."""
    import ast
    stub = os.path.join(os.path.dirname(hdb.__file__), "_core.pyi")
    if not os.path.exists(stub):  # running from an install without the stub
        stub = os.path.join(conftest.REPO_ROOT, "python", "hyperstreamdb", "_core.pyi")
    tree = ast.parse(open(stub).read())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
            if isinstance(node, ast.ClassDef):
                members[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.AnnAssign):
            top.add(node.target.id)
    core = hdb._core
    public = {n for n in dir(core) if not n.startswith("__")} | {"__version__"}
    assert public - top == set(), f"missing from _core.pyi: {sorted(public - top)}"
    stream_attrs = {n for n in dir(core.ParquetStream)
                    if not n.startswith("__") or n == "__arrow_c_stream__"}
    missing = stream_attrs - members["ParquetStream"]
    assert not missing, f"ParquetStream members missing from _core.pyi: {sorted(missing)}"
