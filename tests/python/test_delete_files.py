"""Delete-file codecs (src/table/deletes.h) against outside oracles.

The C codecs are driven through the driver mode of the C test executable
`test_deletes` (`test_deletes CMD ARGS...`, one JSON object out; see the
comment in tests/c/test_deletes.c), as test_table_commit.py drives
`test_table`.

* Position-delete files we write: pyarrow reads them (schema, required
  columns, `PARQUET:field_id` metadata, zstd, sort order by (file_path, pos))
  and so does pyiceberg's own delete reader (`_read_deletes`); the metrics
  we report equal the bounds computed here.
* Position-delete files pyarrow writes in the spec's shape (with and without
  field ids, a `row` struct column, large strings, dictionary or plain,
  several row groups, any codec) read back through our reader exactly, row
  by row; NULLs, negative positions, missing columns and wrong types are
  refused naming the file (and the row).
* Deletion vectors: our Puffin files are read by pyiceberg
  (`PuffinFile`, `deletion_vectors_from_puffin_file`); blobs built here from
  the spec (struct, zlib.crc32, pyroaring's portable bitmaps, Java-style
  empty buckets) are read by ours, and damaged ones refused.
"""

import json
import os
import random
import struct
import subprocess
import zlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pyroaring = pytest.importorskip("pyroaring")
puffin = pytest.importorskip("pyiceberg.table.puffin")
deletion_vector = pytest.importorskip("pyiceberg.table.deletion_vector")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATH_ID, POS_ID, ROW_ID, ROW_POSITION_ID = 2147483546, 2147483545, 2147483544, 2147483645


def _exe():
    exe = os.environ.get("HS_DELETES_EXE")
    if exe:
        return exe
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "test_deletes")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (set HS_BUILD_DIR)")
    return path


def _drive(*args):
    r = subprocess.run([_exe(), *map(str, args)], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    return json.loads(r.stdout)


def _random_groups(rng, n_files, tmp_path):
    groups = {}
    for i in range(n_files):
        kind = rng.randrange(3)
        if kind == 0:
            name = f"{tmp_path}/data/{rng.randrange(10**6):06d}-{i}.parquet"
        elif kind == 1:
            name = f"s3://bucket/t/data/caf\u00e9-{i}-" + "x" * rng.randrange(300) + ".parquet"
        else:
            name = f"file:/t/data/{chr(65 + i)}.parquet"
        shape = rng.randrange(4)
        if shape == 0:
            pos = {rng.randrange(2**31) for _ in range(rng.randrange(1, 200))}
        elif shape == 1:
            s = rng.randrange(10**6)
            pos = set(range(s, s + rng.randrange(1, 70000)))
        elif shape == 2:
            pos = set(rng.sample(range(100000), rng.randrange(1, 5000)))
        else:
            pos = {rng.randrange(50)}
        groups[name] = sorted(pos)
    return groups


def _spill(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


# ------------------------------------------------------- ours, read by others


@pytest.mark.parametrize("seed", range(6))
def test_posdel_ours_read_by_pyarrow_and_pyiceberg(tmp_path, seed):
    rng = random.Random(seed)
    groups = _random_groups(rng, rng.randrange(1, 6), tmp_path)
    out = tmp_path / "deletes.parquet"
    res = _drive("posdel-write", out, "file:/recorded/deletes.parquet",
                 _spill(tmp_path / "g.json", groups))
    assert "error" not in res, res
    df = res["data_file"]

    expected = sorted(((p.encode(), x) for p, xs in groups.items() for x in xs))
    t = pq.read_table(out)
    assert t.schema.names == ["file_path", "pos"]
    assert t.schema.field("file_path").type == pa.string()
    assert t.schema.field("pos").type == pa.int64()
    assert not t.schema.field("file_path").nullable and not t.schema.field("pos").nullable
    assert t.schema.field("file_path").metadata[b"PARQUET:field_id"] == str(PATH_ID).encode()
    assert t.schema.field("pos").metadata[b"PARQUET:field_id"] == str(POS_ID).encode()
    got = list(zip((p.encode() for p in t.column("file_path").to_pylist()),
                   t.column("pos").to_pylist()))
    assert got == expected  # the spec's order: file_path bytes, then pos
    md = pq.ParquetFile(out).metadata
    assert md.row_group(0).column(0).compression == "ZSTD"
    assert md.num_rows == len(expected)

    # What we report for the manifest entry.
    assert df["content"] == 1 and df["file_format"] == "PARQUET"
    assert df["file_path"] == "file:/recorded/deletes.parquet"
    assert df["record_count"] == len(expected)
    assert df["file_size_in_bytes"] == os.path.getsize(out)
    assert df["referenced_data_file"] == (next(iter(groups)) if len(groups) == 1 else None)
    mp, mq = df["metrics"][str(PATH_ID)], df["metrics"][str(POS_ID)]
    assert bytes.fromhex(mp["lower"]) == expected[0][0]  # full, never truncated
    assert bytes.fromhex(mp["upper"]) == expected[-1][0]
    assert struct.unpack("<q", bytes.fromhex(mq["lower"]))[0] == min(x for _, x in expected)
    assert struct.unpack("<q", bytes.fromhex(mq["upper"]))[0] == max(x for _, x in expected)
    assert mp["value_count"] == mq["value_count"] == len(expected)
    assert mp["null_count"] == mq["null_count"] == 0

    # pyiceberg's own position-delete reader.
    from pyiceberg.io.pyarrow import PyArrowFileIO, _read_deletes
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    d = DataFile.from_args(content=DataFileContent.POSITION_DELETES, file_path=str(out),
                           file_format=FileFormat.PARQUET, record_count=len(expected),
                           file_size_in_bytes=os.path.getsize(out))
    theirs = _read_deletes(PyArrowFileIO(), d)
    assert {k: v.to_pylist() for k, v in theirs.items()} == groups


@pytest.mark.parametrize("seed", range(6))
def test_dv_ours_read_by_pyiceberg(tmp_path, seed):
    rng = random.Random(100 + seed)
    groups = _random_groups(rng, rng.randrange(1, 6), tmp_path)
    out = tmp_path / "dv.puffin"
    res = _drive("dv-write", out, "/recorded/dv.puffin", _spill(tmp_path / "g.json", groups))
    assert "error" not in res, res
    raw = out.read_bytes()
    pf = puffin.PuffinFile(raw)
    assert pf.footer.properties.get("created-by", "").startswith("hyperstreamdb")
    assert len(pf.footer.blobs) == len(groups)
    dvs = deletion_vector.deletion_vectors_from_puffin_file(pf)
    assert {dv.referenced_data_file: dv.to_vector().to_pylist() for dv in dvs} == groups
    for blob, df, (name, pos) in zip(pf.footer.blobs, res["data_files"], groups.items()):
        assert blob.type == "deletion-vector-v1"
        assert blob.fields == [ROW_POSITION_ID]
        assert blob.snapshot_id == -1 and blob.sequence_number == -1
        assert blob.compression_codec is None
        assert blob.properties == {"referenced-data-file": name, "cardinality": str(len(pos))}
        assert (df["content_offset"], df["content_size_in_bytes"]) == (blob.offset, blob.length)
        assert df["referenced_data_file"] == name and df["record_count"] == len(pos)
        assert df["file_format"] == "PUFFIN" and df["file_path"] == "/recorded/dv.puffin"
        assert df["file_size_in_bytes"] == len(raw)
        # The blob frame, checked from the spec.
        b = raw[blob.offset:blob.offset + blob.length]
        (length,) = struct.unpack(">I", b[:4])
        assert length == len(b) - 8 and b[4:8] == b"\xd1\xd3\x39\x64"
        assert struct.unpack(">I", b[-4:])[0] == zlib.crc32(b[4:-4])
        assert struct.unpack("<Q", b[8:16])[0] == 1 and struct.unpack("<I", b[16:20])[0] == 0
        assert list(pyroaring.BitMap.deserialize(b[20:-4])) == pos


# ------------------------------------------------------- others', read by ours


def _posdel_table(paths, pos, ids=True, row=False, large=False, nullable=True):
    def fld(name, typ, fid):
        md = {b"PARQUET:field_id": str(fid).encode()} if ids else None
        return pa.field(name, typ, nullable=nullable, metadata=md)

    fields = [fld("file_path", pa.large_string() if large else pa.string(), PATH_ID),
              fld("pos", pa.int64(), POS_ID)]
    cols = [pa.array(paths, fields[0].type), pa.array(pos, pa.int64())]
    if row:
        rt = pa.struct([pa.field("id", pa.int64()), pa.field("name", pa.string())])
        fields.append(pa.field("row", rt, nullable=True,
                               metadata={b"PARQUET:field_id": str(ROW_ID).encode()} if ids else None))
        cols.append(pa.array([{"id": x, "name": f"n{x}"} if x % 3 else None for x in pos], rt))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


@pytest.mark.parametrize("seed", range(8))
def test_posdel_pyarrow_read_by_ours(tmp_path, seed):
    rng = random.Random(200 + seed)
    groups = _random_groups(rng, rng.randrange(1, 5), tmp_path)
    rows = sorted((p, x) for p, xs in groups.items() for x in xs)
    paths, pos = [r[0] for r in rows], [r[1] for r in rows]
    t = _posdel_table(paths, pos, ids=seed % 3 != 1, row=seed % 2 == 1, large=seed % 4 == 3,
                      nullable=seed % 2 == 0)
    out = tmp_path / "theirs.parquet"
    pq.write_table(t, out, row_group_size=rng.choice([1000, 7777, 1 << 20]),
                   compression=rng.choice(["zstd", "snappy", "gzip", "none"]),
                   use_dictionary=seed % 2 == 0, data_page_size=rng.choice([1024, 1 << 20]))
    res = _drive("posdel-read", out)
    assert "error" not in res, res
    assert [tuple(r) for r in res["rows"]] == rows
    runs = sum(1 for i in range(len(rows)) if i == 0 or rows[i][0] != rows[i - 1][0])
    assert res["calls"] >= runs


def test_posdel_pyarrow_found_by_id_not_name(tmp_path):
    """Columns are found by field id: renamed columns in another order read."""
    paths, pos = ["/a", "/a", "/b"], [3, 9, 1]
    t = pa.Table.from_arrays(
        [pa.array(pos, pa.int64()), pa.array(paths)],
        schema=pa.schema([
            pa.field("p", pa.int64(), metadata={b"PARQUET:field_id": str(POS_ID).encode()}),
            pa.field("f", pa.string(), metadata={b"PARQUET:field_id": str(PATH_ID).encode()})]))
    pq.write_table(t, tmp_path / "x.parquet")
    assert [tuple(r) for r in _drive("posdel-read", tmp_path / "x.parquet")["rows"]] == \
        list(zip(paths, pos))


def _bad(tmp_path, name, table):
    out = tmp_path / name
    pq.write_table(table, out)
    res = _drive("posdel-read", out)
    assert res.get("error") == "corrupt data", res
    assert str(out) in res["message"], res
    return res["message"]


def test_posdel_bad_files_refused(tmp_path):
    ok_paths = ["/a", "/a", "/b", "/b"]
    m = _bad(tmp_path, "null_pos.parquet", _posdel_table(ok_paths, [0, 1, None, 3]))
    assert "row 2" in m and "NULL" in m
    m = _bad(tmp_path, "null_path.parquet", _posdel_table(["/a", None, "/b", "/b"], [0, 1, 2, 3]))
    assert "row 1" in m and "file_path is NULL" in m
    m = _bad(tmp_path, "negative.parquet", _posdel_table(ok_paths, [0, 1, -5, 3]))
    assert "row 2" in m and "negative" in m
    t = pa.table({"file_path": ok_paths, "pos": pa.array([0, 1, 2, 3], pa.int32())})
    assert "not a long" in _bad(tmp_path, "int32.parquet", t)
    t = pa.table({"file_path": pa.array([1, 2, 3, 4], pa.int64()), "pos": [0, 1, 2, 3]})
    assert "not a string" in _bad(tmp_path, "intpath.parquet", t)
    assert "no 'pos' column" in _bad(tmp_path, "nopos.parquet", pa.table({"file_path": ok_paths}))
    t = pa.table({"path": ok_paths, "position": [0, 1, 2, 3]})
    assert "no 'file_path' column" in _bad(tmp_path, "names.parquet", t)
    t = pa.table({"file_path": pa.array([["/a"]] * 4), "pos": [0, 1, 2, 3]})
    assert "not a string" in _bad(tmp_path, "listpath.parquet", t)
    (tmp_path / "junk.parquet").write_bytes(b"PAR1" + b"\0" * 50 + b"PAR1")
    res = _drive("posdel-read", tmp_path / "junk.parquet")
    assert "error" in res and "junk.parquet" in res["message"]


# ----------------------------------------------- deletion vectors from the spec


def _bitmap_bytes(values, run_optimize):
    bm = pyroaring.BitMap(values)
    if run_optimize:
        bm.run_optimize()
    return bm.serialize()


def _blob(buckets):
    """deletion-vector-v1 bytes for [(key, [low positions]), ...] as the spec lays them out."""
    vec = struct.pack("<Q", len(buckets))
    for key, values, run in buckets:
        vec += struct.pack("<I", key) + _bitmap_bytes(values, run)
    body = b"\xd1\xd3\x39\x64" + vec
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def _puffin(blobs):
    """A Puffin file of `blobs` (bytes) as the Puffin spec lays it out; offsets of each."""
    out, offs = bytearray(b"PFA1"), []
    for b in blobs:
        offs.append((len(out), len(b)))
        out += b
    footer = json.dumps({"blobs": [
        {"type": "deletion-vector-v1", "fields": [ROW_POSITION_ID], "snapshot-id": -1,
         "sequence-number": -1, "offset": o, "length": n,
         "properties": {"referenced-data-file": f"/d{i}.parquet", "cardinality": "0"}}
        for i, (o, n) in enumerate(offs)]}).encode()
    out += b"PFA1" + footer + struct.pack("<ii", len(footer), 0) + b"PFA1"
    return bytes(out), offs


def test_dv_spec_blobs_read_by_ours(tmp_path):
    rng = random.Random(7)
    cases = []
    for i in range(30):
        shape = i % 5
        if shape == 0:
            values = []
        elif shape == 1:
            values = sorted({rng.randrange(2**32) for _ in range(rng.randrange(1, 3000))})
        elif shape == 2:
            s = rng.randrange(2**31)
            values = list(range(s, s + rng.randrange(1, 100000)))
        elif shape == 3:
            values = sorted(rng.sample(range(200000), 20000))  # bitset containers
        else:
            values = [0, 2**32 - 1]
        buckets = [(0, values, i % 2 == 0)]
        if i % 3 == 0:  # Java writes a bucket for every key up to the highest
            buckets += [(1, [], False), (2, [], True)]
        cases.append((values, _blob(buckets)))
    raw, offs = _puffin([b for _, b in cases])
    path = tmp_path / "spec.puffin"
    path.write_bytes(raw)
    for (values, blob), (o, n) in zip(cases, offs):
        res = _drive("dv-read", path, o, n, len(values))
        assert res.get("positions") == values, res.get("message")
        bp = tmp_path / "one.bin"
        bp.write_bytes(blob)
        assert _drive("dv-parse", bp)["positions"] == values
    # pyiceberg agrees with the blobs built here (the oracle checks itself).
    dvs = deletion_vector.deletion_vectors_from_puffin_file(puffin.PuffinFile(raw))
    assert [[x for x in dv.to_vector().to_pylist()] for dv in dvs] == [v for v, _ in cases]
    # A wrong cardinality, offset or length is refused naming the file.
    o, n = offs[1]
    for args in [(o, n, len(cases[1][0]) + 1), (o + 1, n, -1), (o, n - 1, -1), (o, len(raw), -1)]:
        res = _drive("dv-read", path, *args)
        assert res.get("error") == "corrupt data" and str(path) in res["message"], res


def test_dv_spec_blobs_refused(tmp_path):
    def parse(b):
        p = tmp_path / "b.bin"
        p.write_bytes(b)
        return _drive("dv-parse", p)

    # Positions >= 2^32: unsupported, not corrupt.
    res = parse(_blob([(0, [1], True), (1, [5], True)]))
    assert res["error"] == "unsupported" and "2^32" in res["message"]
    # Unsorted and duplicate keys, with a valid CRC.
    assert "key" in parse(_blob([(1, [], True), (0, [], True)]))["message"]
    assert "key" in parse(_blob([(0, [1], True), (0, [2], True)]))["message"]
    # Random damage: one byte changed anywhere, truncation, a trailing byte.
    rng = random.Random(11)
    good = _blob([(0, sorted(rng.sample(range(10**6), 3000)), True)])
    assert parse(good)["positions"]
    for _ in range(40):
        b = bytearray(good)
        i = rng.randrange(len(b))
        b[i] ^= rng.randrange(1, 256)
        res = parse(bytes(b))
        assert res.get("error") == "corrupt data", (i, res)
    for cut in [0, 3, 11, 12, len(good) // 2, len(good) - 1]:
        assert parse(good[:cut]).get("error") == "corrupt data"
    assert "length" in parse(good + b"\0")["message"]
    body = good[4:-4]
    assert "CRC" in parse(good[:-4] + struct.pack(">I", zlib.crc32(body) ^ 1))["message"]
    bad_magic = b"\xd1\xd3\x39\x65" + body[4:]
    res = parse(struct.pack(">I", len(bad_magic)) + bad_magic + struct.pack(">I", zlib.crc32(bad_magic)))
    assert "magic" in res["message"]
    # A huge bucket count with a valid CRC: refused before allocating.
    body = b"\xd1\xd3\x39\x64" + struct.pack("<Q", 2**62) + struct.pack("<I", 0) + _bitmap_bytes([1], False)
    res = parse(struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body)))
    assert res["error"] == "corrupt data" and "bucket" in res["message"]


def test_dv_serialize_matches_spec(tmp_path):
    """Our blob bytes decode with pyroaring and the spec's framing."""
    rng = random.Random(3)
    for values in [[], [0], sorted(rng.sample(range(2**31), 5000)), list(range(10, 80000))]:
        res = _drive("dv-serialize", _spill(tmp_path / "v.json", values))
        b = bytes.fromhex(res["blob"])
        assert struct.unpack(">I", b[:4])[0] == len(b) - 8 and b[4:8] == b"\xd1\xd3\x39\x64"
        assert struct.unpack(">I", b[-4:])[0] == zlib.crc32(b[4:-4])
        (count,) = struct.unpack("<Q", b[8:16])
        assert count == (1 if values else 0)
        got = list(pyroaring.BitMap.deserialize(b[20:-4])) if values else []
        assert got == values
        if not values:
            assert len(b) == 20
