"""Page checksums (issue 12 hardening; src/parquet/README.md "Page checksums").

Every page we write (data pages v1 and v2, dictionary pages, any codec)
carries PageHeader.crc, the zlib CRC-32 of its bytes as stored; pyarrow
verifies them (``page_checksum_verification=True``). Every page we read
that carries one is checked before it is decoded -- or, for a row gather
(a few rows read in place from a raw page), the first time the page is
gathered in this process and file version (the verified set keyed by the
file's stamp). A flipped bit inside a page is then a CorruptFileError
naming the file, row group, column, page offset and both checksums,
never silently wrong values: through ``hdb.parquet.read_table`` (whole
and with ``rows=``), and through an indexed Table query that gathers the
row. Files without CRCs (pyarrow's default) read as before.

Pages are located by walking the Thrift page headers of each column chunk
(a small compact-protocol reader below), so flips land inside page
payloads exactly. After each in-place change the file gets a new mtime
(os.utime), as a rewrite would, so that the process-wide caches keyed by
the file's stamp see a new version even within one clock tick.
"""

import os
import random
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

hdb = pytest.importorskip("hyperstreamdb")
np = pytest.importorskip("numpy")

# ------------------------------------------------- page header walking


class _Compact:
    """Just enough of the Thrift compact protocol to read PageHeaders."""

    def __init__(self, buf, pos):
        self.b, self.p = buf, pos

    def byte(self):
        v = self.b[self.p]
        self.p += 1
        return v

    def varint(self):
        shift = v = 0
        while True:
            c = self.byte()
            v |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                return v

    def zigzag(self):
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def skip(self, t):
        if t in (1, 2):
            return
        if t == 3:
            self.p += 1
        elif t in (4, 5, 6):
            self.varint()
        elif t == 7:
            self.p += 8
        elif t == 8:
            n = self.varint()
            self.p += n
        elif t in (9, 10):
            h = self.byte()
            n, et = h >> 4, h & 0x0F
            if n == 15:
                n = self.varint()
            for _ in range(n):
                if et in (1, 2):
                    self.p += 1
                else:
                    self.skip(et)
        elif t == 11:
            n = self.varint()
            if n:
                kv = self.byte()
                for _ in range(n):
                    self.skip(kv >> 4)
                    self.skip(kv & 0x0F)
        elif t == 12:
            self.struct(lambda fid, ft: self.skip(ft))
        else:
            raise ValueError(f"thrift type {t}")

    def struct(self, on_field):
        fid = 0
        while True:
            h = self.byte()
            if h == 0:
                return
            d, t = h >> 4, h & 0x0F
            fid = fid + d if d else self.zigzag()
            on_field(fid, t)


def _page_header(buf, pos):
    """(type, compressed size, has crc, header length) of the header at pos."""
    r = _Compact(buf, pos)
    out = {"type": None, "csize": None, "crc": None}

    def field(fid, t):
        if fid == 1 and t == 5:
            out["type"] = r.zigzag()
        elif fid == 3 and t == 5:
            out["csize"] = r.zigzag()
        elif fid == 4 and t == 5:
            out["crc"] = r.zigzag() & 0xFFFFFFFF
        else:
            r.skip(t)

    r.struct(field)
    return out["type"], out["csize"], out["crc"], r.p - pos


DATA_PAGE, DICT_PAGE, DATA_PAGE_V2 = 0, 2, 3


def _pages(path):
    """Every page of every column chunk: dicts with rg, col, off (header),
    body and len (the payload), type, crc (None when the header has none)."""
    buf = open(path, "rb").read()
    md = pq.ParquetFile(path).metadata
    out = []
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        for c in range(rg.num_columns):
            cc = rg.column(c)
            start = cc.data_page_offset
            if cc.has_dictionary_page and cc.dictionary_page_offset:
                start = min(start, cc.dictionary_page_offset)
            end = start + cc.total_compressed_size
            off = start
            while off < end:
                typ, csize, crc, hlen = _page_header(buf, off)
                out.append({"rg": g, "col": cc.path_in_schema, "off": off, "body": off + hlen,
                            "len": csize, "type": typ, "crc": crc})
                off += hlen + csize
    return out


def _flip(path, pos, bit, stamp_ns):
    with open(path, "r+b") as f:
        f.seek(pos)
        b = f.read(1)[0]
        f.seek(pos)
        f.write(bytes([b ^ (1 << bit)]))
    os.utime(path, ns=(stamp_ns, stamp_ns))


def _data(n, seed):
    rng = np.random.default_rng(seed)
    cats = np.array([f"cat{i:03d}" for i in range(50)])
    ids = np.arange(n, dtype=np.int64)
    rng.shuffle(ids)
    return pa.table({
        "id": ids,
        "cat": pa.array(cats[rng.integers(0, 50, n)]),
        "price": pa.array(np.round(rng.uniform(0, 1000, n), 2)),
        "flag": pa.array(rng.random(n) < 0.1),
        "maybe": pa.array([None if i % 7 == 0 else int(i) for i in range(n)], pa.int32()),
    })


def _ours(path, t, **kw):
    hdb.parquet.write_table(t, path, write_page_checksum=True, data_page_size=16384, **kw)


VARIANTS = [
    ("v1-zstd", dict(compression="zstd", data_page_version="1.0")),
    ("v1-raw", dict(compression="none", data_page_version="1.0")),
    ("v2-snappy", dict(compression="snappy", data_page_version="2.0")),
    ("v2-raw", dict(compression="none", data_page_version="2.0")),
    ("v2-zstd-keepraw", dict(compression="zstd", data_page_version="2.0",
                             compress_min_saving_pct=20)),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("crc")
    t = _data(30000, 1)
    out = {}
    for name, kw in VARIANTS:
        p = str(d / f"ours-{name}.parquet")
        _ours(p, t, **kw)
        out[name] = p
    p = str(d / "pyarrow-crc.parquet")
    pq.write_table(t, p, write_page_checksum=True, data_page_size=16384,
                   compression="none", write_page_index=True)
    out["pyarrow-crc"] = p
    p = str(d / "pyarrow-crc-v2.parquet")
    pq.write_table(t, p, write_page_checksum=True, data_page_size=16384,
                   data_page_version="2.0", compression="zstd")
    out["pyarrow-crc-v2"] = p
    return t, out


def _assert_corrupt(exc, path):
    msg = str(exc)
    assert os.path.basename(path) in msg, msg
    assert "CRC" in msg and "row group" in msg and "offset" in msg, msg


# ------------------------------------------------------------------ tests


def test_our_pages_carry_crcs_pyarrow_verifies(files):
    t, paths = files
    for name, p in paths.items():
        pages = _pages(p)
        types = {pg["type"] for pg in pages}
        assert DICT_PAGE in types, name
        assert all(pg["crc"] is not None for pg in pages), name
        got = pq.read_table(p, page_checksum_verification=True)
        assert got.equals(t), name
        assert hdb.parquet.read_table(p).equals(t), name


def test_table_files_carry_crcs(tmp_path):
    t = hdb.Table(str(tmp_path / "t"))
    t.write(_data(5000, 2))
    files = _data_files(t)
    assert files
    for f in files:
        assert all(pg["crc"] is not None for pg in _pages(f)), f
        pq.read_table(f, page_checksum_verification=True)


def _data_files(t):
    root = t._uri
    out = []
    for dirpath, _, names in os.walk(os.path.join(root, "data")):
        out += [os.path.join(dirpath, n) for n in names if n.endswith(".parquet")]
    return sorted(out)


@pytest.mark.parametrize("kind", [DICT_PAGE, DATA_PAGE, DATA_PAGE_V2])
def test_flip_in_page_refused_by_both(files, tmp_path, kind):
    t, paths = files
    tried = 0
    for name, src in paths.items():
        pages = [pg for pg in _pages(src) if pg["type"] == kind and pg["len"] > 0]
        if not pages:
            continue
        for i, pg in enumerate(pages[:: max(1, len(pages) // 5)]):
            p = str(tmp_path / f"{name}-{kind}-{i}.parquet")
            shutil.copyfile(src, p)
            _flip(p, pg["body"] + pg["len"] // 2, i % 8, 10**18 + i)
            with pytest.raises(OSError):
                pq.read_table(p, page_checksum_verification=True)
            with pytest.raises(hdb.CorruptFileError) as ei:
                hdb.parquet.read_table(p)
            _assert_corrupt(ei.value, p)
            assert pg["col"] in str(ei.value) and str(pg["off"]) in str(ei.value)
            # A selection that touches every page (gathered where raw).
            with pytest.raises(hdb.CorruptFileError) as ei:
                hdb.parquet.read_table(p, columns=[pg["col"]], rows=list(range(0, t.num_rows, 97)))
            _assert_corrupt(ei.value, p)
            tried += 1
    assert tried > 0


def test_files_without_crcs_still_read(tmp_path):
    t = _data(20000, 3)
    for kw in (dict(), dict(data_page_version="2.0", compression="none")):
        p = str(tmp_path / f"nocrc-{len(kw)}.parquet")
        pq.write_table(t, p, data_page_size=16384, **kw)
        assert all(pg["crc"] is None for pg in _pages(p))
        assert hdb.parquet.read_table(p).equals(t)
        sel = list(range(3, 20000, 101))
        assert hdb.parquet.read_table(p, rows=sel).equals(t.take(sel))
    p = str(tmp_path / "ours-nocrc.parquet")
    hdb.parquet.write_table(t, p, write_page_checksum=False)
    assert all(pg["crc"] is None for pg in _pages(p))
    assert hdb.parquet.read_table(p).equals(t)


def test_gather_verifies_once_per_file_version(tmp_path):
    """Raw pages read by row gather: the first gather of a page checks it
    whole; a changed file (new stamp) is checked again, so a flip made
    after warm queries is still caught."""
    t = _data(40000, 4)
    p = str(tmp_path / "raw.parquet")
    _ours(p, t, compression="none")
    sel = [5, 777, 12345, 39999]
    gathered0 = hdb._core._parquet_pages_gathered()
    for _ in range(3):
        assert hdb.parquet.read_table(p, columns=["id", "price"], rows=sel).equals(
            t.select(["id", "price"]).take(sel))
    assert hdb._core._parquet_pages_gathered() > gathered0
    pages = [pg for pg in _pages(p) if pg["col"] == "id" and pg["type"] == DATA_PAGE]
    # Flip a byte of the page holding row 12345, far from the row itself.
    pristine = open(p, "rb").read()
    per_page = t.num_rows / len(pages)
    pg = pages[min(len(pages) - 1, int(12345 // per_page))]
    for pos in (pg["body"] + 1, pg["body"] + pg["len"] - 1):
        _flip(p, pos, 3, 10**18 + pos)
        with pytest.raises(hdb.CorruptFileError) as ei:
            hdb.parquet.read_table(p, columns=["id"], rows=list(range(0, 40000, 50)))
        _assert_corrupt(ei.value, p)
        with open(p, "wb") as f:
            f.write(pristine)
        os.utime(p, ns=(2 * 10**18 + pos, 2 * 10**18 + pos))
        assert hdb.parquet.read_table(p, columns=["id"], rows=sel).equals(
            t.select(["id"]).take(sel))


@pytest.mark.parametrize("codec", ["uncompressed", None])
def test_indexed_table_query_refuses_flipped_page(tmp_path, codec):
    props = {"write.parquet.compression-codec": codec} if codec else {}
    t = hdb.Table(str(tmp_path / "t"), properties=props)
    parts = [_data(3000, 10 + i) for i in range(3)]
    for i, part in enumerate(parts):
        ids = pa.compute.add(part.column("id"), 100000 * i)
        t.write(part.set_column(0, "id", ids))
    t.add_index("id", "btree")
    t.wait_for_indexes()
    target = 100000 + 1234
    want = t.to_arrow(filter=f"id = {target}")
    assert want.num_rows == 1
    files = _data_files(t)
    f = next(x for x in files if pq.read_table(x, columns=["id"]).column("id")
             .to_pylist().count(target))
    g0 = hdb._core._parquet_pages_gathered()
    for _ in range(2):  # warm: the pages are verified and remembered
        assert t.to_arrow(filter=f"id = {target}").equals(want)
    if codec == "uncompressed":
        assert hdb._core._parquet_pages_gathered() > g0
    pristine = open(f, "rb").read()
    for col in ("id", "price"):
        pages = [pg for pg in _pages(f) if pg["col"] == col and pg["type"] != DICT_PAGE]
        assert pages and all(pg["crc"] is not None for pg in pages)
        for pg in pages:  # every page of the chunk: the row is in one of them
            _flip(f, pg["body"] + pg["len"] // 3, 5, 10**18 + pg["off"])
        with pytest.raises(hdb.CorruptFileError) as ei:
            t.to_arrow(filter=f"id = {target}")
        _assert_corrupt(ei.value, f)
        with open(f, "wb") as out:
            out.write(pristine)
        os.utime(f, ns=(3 * 10**18 + len(col), 3 * 10**18 + len(col)))
        assert t.to_arrow(filter=f"id = {target}").equals(want)


def test_random_flips(files, tmp_path):
    """Random bits flipped in the pages of several files: every read is
    exactly pyarrow's read of the pristine file or a CorruptFileError; a
    flip inside a page payload is always caught. (A flip in a page header
    may also be refused by header parsing, or land in a field no reader
    needs; a flip in the footer is not this test's subject.)"""
    t, paths = files
    rng = random.Random(12)
    n = t.num_rows
    caught = harmless = 0
    for trial in range(60):
        name = rng.choice(sorted(paths))
        src = paths[name]
        pages = _pages(src)
        pg = rng.choice([x for x in pages if x["len"] > 0])
        in_body = trial % 3 != 0
        if in_body:
            pos = pg["body"] + rng.randrange(pg["len"])
        else:
            pos = pg["off"] + rng.randrange(pg["body"] - pg["off"])
        p = str(tmp_path / f"flip-{trial}.parquet")
        shutil.copyfile(src, p)
        _flip(p, pos, rng.randrange(8), 10**18 + trial)
        sel = sorted(rng.sample(range(n), 200))
        for rows in (None, sel):
            try:
                got = hdb.parquet.read_table(p, rows=rows)
            except hdb.CorruptFileError as e:
                assert os.path.basename(p) in str(e), str(e)
                caught += 1
                continue
            except hdb.HyperStreamError as e:
                assert not in_body, f"{name}: flip at {pos} (payload): {type(e).__name__}: {e}"
                assert os.path.basename(p) in str(e), str(e)
                caught += 1
                continue
            want = t if rows is None else t.take(rows)
            if in_body and rows is None:
                raise AssertionError(f"{name}: flip at {pos} in a page payload read silently")
            # A selection may skip the damaged page: then the rows are exact.
            assert got.equals(want), f"{name}: flip at byte {pos} gave wrong values"
            harmless += 1
    assert caught > 40
