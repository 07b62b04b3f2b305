"""Scalar indexes built from an append's kept batches (TableHandle.append(keep=True),
index_build(appended=...)) instead of re-reading the data file.

The rule: the index files are byte-identical to a build from the data file.
Each case appends the same random data to two tables; table A keeps the
batches, then its data file's pages are overwritten with zeros (same size, so
the registry key still matches) before its build — so A's build can only
succeed by using the batches, which the test checks where the batch's Arrow
type is the one the file reads back as. Table B builds from its (intact) file.
Every column of every type the table accepts is compared, with NULLs, NaN,
-0.0, +-inf, extremes, empty strings and several batches per write. (A
column whose batch type differs from the type the file reads back as would
be re-read instead; our files store the Arrow schema, so every accepted type
reads back as written.) Also: the background build of Table.write() keeps
batches for in-memory inputs, and queries agree with and without indexes.
About 5 s.
"""

import glob
import os
import random

import pytest

pa = pytest.importorskip("pyarrow")
hdb = pytest.importorskip("hyperstreamdb")
from hyperstreamdb import _core  # noqa: E402


def _floats(rng, n):
    special = [float("nan"), -0.0, 0.0, float("inf"), float("-inf"), 1e308, -1e-308]
    return [None if rng.random() < 0.05 else
            (rng.choice(special) if rng.random() < 0.1 else round(rng.uniform(-1e3, 1e3), 2))
            for _ in range(n)]


def _ints(rng, n, lo, hi, distinct=None):
    vals = [lo, hi, 0, -1 if lo < 0 else 1]
    return [None if rng.random() < 0.05 else
            (rng.choice(vals) if rng.random() < 0.05 else
             rng.randrange(lo, hi) if distinct is None else rng.randrange(distinct))
            for _ in range(n)]


def _strings(rng, n, distinct):
    pool = ["", "a", "ab", "\xff", "zz\u00e9"] + [f"s{i:05d}" for i in range(distinct)]
    return [None if rng.random() < 0.05 else rng.choice(pool) for _ in range(n)]


def _table(rng, n):
    import datetime as dt
    import decimal
    base = dt.datetime(2020, 1, 1)
    return pa.table({
        "i64": pa.array(_ints(rng, n, -2**63, 2**63 - 1), pa.int64()),
        "i64_rep": pa.array(_ints(rng, n, -2**63, 2**63 - 1, distinct=30), pa.int64()),
        "i32": pa.array(_ints(rng, n, -2**31, 2**31 - 1), pa.int32()),
        "i16": pa.array(_ints(rng, n, -2**15, 2**15 - 1), pa.int16()),
        "i8": pa.array(_ints(rng, n, -128, 127), pa.int8()),
        "f64": pa.array(_floats(rng, n), pa.float64()),
        "f32": pa.array(_floats(rng, n), pa.float32()),
        "s_many": pa.array(_strings(rng, n, 5000), pa.string()),
        "s_few": pa.array(_strings(rng, n, 20), pa.string()),
        "ls": pa.array(_strings(rng, n, 300), pa.large_string()),
        "bin": pa.array([None if v is None else v.encode() for v in _strings(rng, n, 100)],
                        pa.binary()),
        "flag": pa.array([None if rng.random() < 0.1 else rng.random() < 0.3
                          for _ in range(n)], pa.bool_()),
        "d": pa.array([None if rng.random() < 0.05 else
                       dt.date(2000, 1, 1) + dt.timedelta(days=rng.randrange(20000))
                       for _ in range(n)], pa.date32()),
        "ts": pa.array([None if rng.random() < 0.05 else
                        base + dt.timedelta(microseconds=rng.randrange(10**12))
                        for _ in range(n)], pa.timestamp("us")),
        "tstz": pa.array([None if rng.random() < 0.05 else
                          base + dt.timedelta(microseconds=rng.randrange(10**9))
                          for _ in range(n)], pa.timestamp("us", tz="UTC")),
        "dec": pa.array([None if rng.random() < 0.05 else
                         decimal.Decimal(rng.randrange(-10**8, 10**8)).scaleb(-2)
                         for _ in range(n)], pa.decimal128(12, 2)),
    })


def _index_bytes(root):
    """Index blob bytes per data file, in data-file name order."""
    out = {}
    import json
    with open(sorted(glob.glob(os.path.join(root, "metadata", "v*.metadata.json")),
                     key=lambda p: int(os.path.basename(p)[1:].split(".")[0]))[-1]) as f:
        props = json.load(f)["properties"]
    with open(props["hyperstream.index-registry"]) as f:
        reg = json.load(f)
    for e in reg["entries"]:
        with open(e["index-file"], "rb") as f:
            data = f.read()
        # The blobs (the index itself); the Puffin footer after them names
        # the data file each is bound to, which differs between tables.
        footer = int.from_bytes(data[-12:-8], "little")
        out[(os.path.basename(e["data-file"]), tuple(e["columns"]))] = data[:len(data) - 16 - footer]
    return out


def _zero_pages(path):
    """Overwrite a data file's pages (not its footer) with zeros, same size."""
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.seek(size - 8)
        footer = int.from_bytes(f.read(4), "little")
        f.seek(4)
        f.write(b"\0" * (size - 8 - footer - 4))


def _write_pair(tmp_path, tables, columns, kind="inverted", corrupt=True):
    """Table A: kept appends, pages zeroed, built from the batches; table B:
    plain appends, built from the files. Returns both index byte maps with
    their data files renamed to positions (the names differ)."""
    a = hdb.Table(str(tmp_path / "a"))
    b = hdb.Table(str(tmp_path / "b"))
    a._handle = _core.table_create(a.uri, tables[0].schema)
    kept = []
    for t in tables:
        b.write(t)
        # several batches per write; the handle keeps them
        sid, k = a._handle.append(pa.RecordBatchReader.from_batches(
            t.schema, t.to_batches(max_chunksize=max(1, t.num_rows // 3))), keep=True)
        assert sid is not None and k is not None
        kept.append(k)
    for c in columns:
        _core.index_add(a.uri, c, kind, None)
        _core.index_add(b.uri, c, kind, None)
    if corrupt:
        for p in glob.glob(os.path.join(a.uri, "data", "*.parquet")):
            _zero_pages(p)
    assert _core.index_build(a.uri, None, None, appended=kept) == len(tables)
    assert _core.index_build(b.uri) == len(tables)
    return _index_bytes(a.uri), _index_bytes(b.uri)


def _by_position(m):
    return sorted(m.items(), key=lambda kv: kv[0][0])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_build_byte_identical(tmp_path, seed):
    rng = random.Random(seed)
    tables = [_table(rng, rng.choice([1, 7, 600, 3000])) for _ in range(3)]
    cols = tables[0].column_names
    ia, ib = _write_pair(tmp_path, tables, cols)
    assert len(ia) == len(ib) == 3
    # A's data files are zeroed, so its build used the batches; bytes equal B's
    # (files are matched by append order: names are random, sizes equal).
    sa = [v for _, v in sorted(ia.items(), key=lambda kv: kv[0])]
    sb = [v for _, v in sorted(ib.items(), key=lambda kv: kv[0])]
    assert sorted(sa) == sorted(sb)


@pytest.mark.parametrize("kind", ["bitmap", "btree"])
def test_kept_build_layouts(tmp_path, kind):
    rng = random.Random(11)
    tables = [_table(rng, 2500) for _ in range(2)]
    cols = ["i64", "f64", "s_few", "ts", "dec"]
    ia, ib = _write_pair(tmp_path, tables, cols, kind=kind)
    assert sorted(ia.values()) == sorted(ib.values())


def test_kept_more_types(tmp_path):
    """Unsigned and narrow ints, times, fixed and large binary, ms timestamps:
    our Parquet files read these back as written (the Arrow schema is
    stored), so the batches are used; bytes equal the re-read build's."""
    rng = random.Random(21)

    def tbl(n):
        return pa.table({
            "u32": pa.array(_ints(rng, n, 0, 2**32 - 1), pa.uint32()),
            "u8": pa.array(_ints(rng, n, 0, 255), pa.uint8()),
            "i16": pa.array(_ints(rng, n, -2**15, 2**15 - 1, distinct=50), pa.int16()),
            "t32": pa.array(_ints(rng, n, 0, 86_400_000), pa.time32("ms")),
            "t64": pa.array(_ints(rng, n, 0, 86_400_000_000), pa.time64("us")),
            "fsb": pa.array([None if v is None else v.to_bytes(3, "big")
                             for v in _ints(rng, n, 0, 2**24 - 1)], pa.binary(3)),
            "lb": pa.array([None if v is None else v.encode()
                            for v in _strings(rng, n, 40)], pa.large_binary()),
            "tsms": pa.array(_ints(rng, n, -2**40, 2**40), pa.timestamp("ms")),
        })

    tables = [tbl(1500), tbl(3)]
    ia, ib = _write_pair(tmp_path, tables, tables[0].column_names)
    assert len(ia) == 2 and sorted(ia.values()) == sorted(ib.values())


def test_kept_skips_indexed_and_duplicate(tmp_path):
    t = _table(random.Random(5), 500)
    a = hdb.Table(str(tmp_path / "a"))
    a._handle = _core.table_create(a.uri, t.schema)
    sid, k = a._handle.append(t, keep=True)
    _core.index_add(a.uri, "i64", "inverted", None)
    assert _core.index_build(a.uri, None, None, appended=[k, k]) == 1
    assert _core.index_build(a.uri, None, None, appended=[k]) == 0  # already indexed
    _core.index_add(a.uri, "s_few", "inverted", None)
    assert _core.index_build(a.uri, None, None, appended=[k]) == 1  # the new column only
    assert _core.index_build(a.uri) == 0
    with pytest.raises(Exception):
        _core.index_build(a.uri, None, None, appended=["not a capsule"])
    assert a._handle.append(t.slice(0, 0), keep=True) == (None, None)


def test_write_background_uses_kept_batches(tmp_path, monkeypatch):
    """Table.write() of in-memory data keeps it for the background build;
    results equal an unindexed table's, every file ends up indexed."""
    rng = random.Random(9)
    tables = [_table(rng, 2000) for _ in range(3)]
    tables = [t.append_column("rid", pa.array(range(i * 2000, i * 2000 + t.num_rows), pa.int64()))
              for i, t in enumerate(tables)]
    from hyperstreamdb import _indexes
    calls = []
    real = _indexes._core.index_build

    def spy(*args, **kw):
        calls.append(kw.get("appended"))
        return real(*args, **kw)

    monkeypatch.setattr(_indexes._core, "index_build", spy)
    a = hdb.Table(str(tmp_path / "a"), index_all=True)
    b = hdb.Table(str(tmp_path / "b"))
    for t in tables:
        a.write(t)
        b.write(t)
    a.wait_for_indexes()
    # every background pass was over kept appends (the last call is
    # wait_for_indexes' own full pass, which finds nothing left)
    kept_passes = [c for c in calls if c is not None]
    assert sum(len(c) for c in kept_passes) == 3 and calls[-1] is None
    assert all(i.complete for i in a.indexes())
    assert len(glob.glob(os.path.join(a.uri, "index", "*.puffin"))) == 3
    for f in ["i64 > 0", "f64 < 0.5", "s_few = 's00003'", "flag", "ts > '2020-01-05'",
              "i32 BETWEEN -1000 AND 1000000", "f64 IS NULL", "dec > 10.5"]:
        ra = a.to_arrow(filter=f).sort_by("rid")
        rb = b.to_arrow(filter=f).sort_by("rid")
        assert ra.num_rows > 0 and repr(ra.to_pylist()) == repr(rb.to_pylist()), f  # NaN-safe
    assert a.explain("i64 > 0").stats["files_indexed"] == 3


def test_kept_backlog_is_bounded(tmp_path):
    """More pending kept writes than _KEPT_MAX: they are dropped for a full
    pass (re-read); every file still ends up indexed, results unchanged."""
    from hyperstreamdb import _indexes
    st = _indexes._BuildState(str(tmp_path / "x"), hdb.Table)
    st.running = True  # no worker: only the bookkeeping
    for i in range(_indexes._KEPT_MAX):
        st.schedule(object())
    assert len(st.kept) == _indexes._KEPT_MAX and not st.full
    st.schedule(object())
    assert st.kept == [] and st.full
    st.schedule(object())  # a full pass is due anyway: nothing more is kept
    assert st.kept == [] and st.full
