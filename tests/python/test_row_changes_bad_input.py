"""Bad input to row changes, and damaged delete files (issue 14, "Must show":
bad input).

Refused changes: an upsert whose source repeats a key, a merge on a column
that the table or the source lacks, delete and update filters that do not
parse (the error shows the position), updates to a value of the wrong type
(a float into an integer column included: pyarrow would truncate it), a
vector of the wrong length, a callable returning the wrong number of values.
Each raises a clear error naming what and where, and nothing is written: the
same snapshot, the same files under data/ and metadata/.

Damaged delete files in a table (v2 position deletes: truncated, bit-flipped,
swapped for another table's; v3 deletion vectors: blob CRC, a manifest
cardinality that is not the vector's, an offset past the end of the Puffin
file; a delete manifest that lists a data file, content 0): every read path
(to_arrow, to_arrow_stream, filter with and without a scalar index, query,
len, explain, exact and indexed-free vector search) raises an error naming
the damaged file, run in a child process with a time bound so a hang or
crash fails the one case; never rows that were deleted. The CLI `scan` too,
and a delete on such a table fails writing nothing.
"""

import json
import os
import random
import shutil
import subprocess
import sys

import fastavro
import numpy as np
import pyarrow as pa
import pytest

import hyperstreamdb as hdb

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
READ_TIMEOUT = 60  # seconds for all read paths of one damaged table


def _files(uri):
    out = set()
    for sub in ("data", "metadata"):
        d = os.path.join(uri, sub)
        for dirpath, _, names in os.walk(d):
            out.update(os.path.relpath(os.path.join(dirpath, n), uri) for n in names)
    return out


def _data(ids, seed=0):
    rng = np.random.default_rng(seed)
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "v": pa.array([i * 10 for i in ids], pa.int64()),
                     "s": pa.array([f"s{i % 7}" for i in ids], pa.string()),
                     "emb": pa.array(rng.random((len(ids), 2)).astype(np.float32).tolist(),
                                     pa.list_(pa.float32(), 2))})


def _table(uri, fv, mode="merge-on-read"):
    props = {f"write.{op}.mode": mode for op in ("delete", "update", "merge")}
    t = hdb.Table(uri, format_version=fv, properties=props)
    t.write(_data(list(range(0, 30))))
    t.write(_data(list(range(30, 60)), 1))
    return t


# ------------------------------------------------------------ refused changes

@pytest.mark.parametrize("fv,mode", [(2, "merge-on-read"), (3, "merge-on-read"),
                                     (3, "copy-on-write")])
def test_refused_changes_write_nothing(tmp_path, fv, mode):
    uri = str(tmp_path / "t")
    t = _table(uri, fv, mode)
    assert t.delete("id >= 50") == 10  # a delete file present, so reads apply deletes
    before, files = t.current_snapshot_id, _files(uri)

    def refused(exc, match, fn):
        with pytest.raises(exc) as ei:
            fn()
        msg = str(ei.value)
        for m in match:
            assert m in msg, f"{m!r} not in {msg!r}"
        t2 = hdb.Table(uri)
        assert t2.current_snapshot_id == before, f"a snapshot was written by {msg!r}"
        assert _files(uri) == files, f"files left behind by {msg!r}: {_files(uri) ^ files}"
        return msg

    dup = _data([3, 7, 3, 100])
    refused(hdb.InvalidArgumentError, ["more than once", "'id'", "3"],
            lambda: t.upsert(dup, on="id"))
    refused(hdb.InvalidArgumentError, ["more than once"],
            lambda: t.merge(dup, on=["id"]).when_matched_update_all()
            .when_not_matched_insert_all().execute())
    refused(hdb.SchemaError, ["no column 'nope'", "on:"],
            lambda: t.merge(_data([1]), on="nope").when_matched_update_all().execute())
    src = _data([1]).drop_columns(["s"])
    refused(hdb.SchemaError, ["source", "no column 's'"],
            lambda: t.merge(src, on=["id", "s"]).when_matched_update_all().execute())
    for f, pos in [("id >", 5), ("id > 3 AND", 11), ("(id > 3", 8), ("id <<< 3", 4),
                   ("v = 'abc'", 5), ("nope = 1", 1)]:
        m = refused(hdb.HyperStreamError, ["filter", f"at position {pos}", f], lambda: t.delete(f))
        assert "^" in m, m  # the caret under the position
        refused(hdb.HyperStreamError, [f"at position {pos}"],
                lambda: t.update({"v": 1}, filter=f))
    refused(hdb.HyperStreamError, ["at position"],
            lambda: t.merge(_data([1]), on="id").when_not_matched_by_source_delete("id >")
            .execute())
    for col, val in [("v", "x"), ("v", 1.5), ("v", 2.0), ("s", 5), ("id", True),
                     ("emb", [1.0, 2.0, 3.0]), ("emb", "x")]:
        refused(hdb.SchemaError, ["update", repr(col)], lambda: t.update({col: val}, filter="id < 5"))
    refused(hdb.SchemaError, ["no column 'nope'"], lambda: t.update({"nope": 1}, filter="id < 5"))
    refused(hdb.InvalidArgumentError, ["returned 2 values"],
            lambda: t.update({"v": lambda rows: pa.array([1, 2], pa.int64())}, filter="id < 5"))
    refused(hdb.HyperStreamError, ["write.update.mode"],
            lambda: (_set_prop(t, "write.update.mode", "sometimes"),
                     t.update({"v": 1}, filter="id < 5")))


def _set_prop(t, key, value):
    """A table property edited in place in the latest metadata file (the API
    sets properties at creation only); the snapshot stays the same."""
    path = t.metadata_location
    with open(path) as f:
        m = json.load(f)
    m["properties"][key] = value
    with open(path, "w") as f:
        json.dump(m, f)
    t._load()


# ------------------------------------------------------------ damaged delete files

_READER = r'''
import json, sys
import numpy as np
import hyperstreamdb as hdb
uri = sys.argv[1]
out = {}
def run(name, fn):
    try:
        r = fn()
        out[name] = {"ok": True, "rows": r}
    except Exception as e:
        out[name] = {"ok": False, "type": type(e).__name__, "hs": isinstance(e, hdb.HyperStreamError),
                     "message": str(e)[:1500]}
ids = lambda tbl: sorted(tbl.column("id").to_pylist())
t = hdb.Table(uri)
run("to_arrow", lambda: ids(t.to_arrow()))
run("to_arrow_stream", lambda: sorted(i for b in t.to_arrow_stream() for i in b.column(0).to_pylist()))
run("filter", lambda: ids(t.to_arrow(filter="v >= 0")))
run("filter_indexed", lambda: ids(t.to_arrow(filter="s = 's3' OR s <> 's3'")))
run("query", lambda: ids(t.query().filter("id >= 0").execute()))
run("len", lambda: list(range(len(t))))
run("explain", lambda: str(t.query().filter("id >= 0").explain()))
run("search", lambda: ids(t.search("emb", np.zeros(2, np.float32), k=100, exact=True)))
print(json.dumps(out))
'''

PATHS = ["to_arrow", "to_arrow_stream", "filter", "filter_indexed", "query", "len", "explain",
         "search"]


def _reads(uri):
    p = subprocess.run([sys.executable, "-c", _READER, uri], capture_output=True, text=True,
                       timeout=READ_TIMEOUT)
    assert p.returncode == 0, f"reader died ({p.returncode}): {p.stderr[-2000:]}"
    return json.loads(p.stdout.strip().splitlines()[-1])


def _cli():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    return os.path.join(build, "hyperstream")


def _current_manifests(uri):
    """(manifest list path, [its records])."""
    t = hdb.Table(uri)
    with open(t.metadata_location) as f:
        m = json.load(f)
    snap = [s for s in m["snapshots"] if s["snapshot-id"] == m["current-snapshot-id"]][0]
    ml = snap["manifest-list"]
    with open(ml, "rb") as f:
        return ml, list(fastavro.reader(f))


def _rewrite_avro(path, edit):
    with open(path, "rb") as f:
        r = fastavro.reader(f)
        schema, codec = r.writer_schema, r.codec
        meta = {k: v for k, v in r.metadata.items() if not k.startswith("avro.")}
        recs = list(r)
    edit(recs)
    with open(path, "wb") as f:
        fastavro.writer(f, schema, recs, codec=codec, metadata=meta)


def _edit_delete_manifest(uri, edit):
    """Apply `edit` to the entries of the live delete manifest and record its
    new length in the manifest list (which readers check). Returns the
    manifest's path."""
    ml, recs = _current_manifests(uri)
    target = [r for r in recs if r["content"] == 1]
    assert len(target) == 1, target
    path = target[0]["manifest_path"]
    _rewrite_avro(path, edit)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        entries = list(fastavro.reader(f))
    rows = {st: sum(e["data_file"]["record_count"] for e in entries if e["status"] == st)
            for st in (0, 1, 2)}

    def fix(lst):  # the list's length and row counts of the manifest (readers check both)
        for r in lst:
            if r["manifest_path"] == path:
                r["manifest_length"] = size
                r["existing_rows_count"], r["added_rows_count"], r["deleted_rows_count"] = \
                    rows[0], rows[1], rows[2]
    _rewrite_avro(ml, fix)
    return path


def _delete_file(uri):
    ml, recs = _current_manifests(uri)
    path = [r for r in recs if r["content"] == 1][0]["manifest_path"]
    with open(path, "rb") as f:
        files = {e["data_file"]["file_path"] for e in fastavro.reader(f) if e["status"] != 2}
    assert len(files) == 1, files
    return files.pop()


def _flip(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x10]))


def _set_entries(field, fn):
    def edit(recs):
        for e in recs:
            if e["status"] != 2:
                e["data_file"][field] = fn(e["data_file"])
    return edit


def _damage(kind, uri, other):
    """Damage the table's one delete file (or its manifest); returns the
    file an error must name."""
    df = _delete_file(uri)
    if kind == "truncated":
        with open(df, "r+b") as f:
            f.truncate(os.path.getsize(df) // 2)
        return df
    if kind == "emptied":
        open(df, "wb").close()
        return df
    if kind == "replaced":  # another table's delete file copied over ours
        shutil.copyfile(_delete_file(other), df)
        return df
    if kind.startswith("flip"):  # a byte in the middle (a Parquet page / the DV blob)
        size = os.path.getsize(df)
        _flip(df, {"flip_mid": size // 2, "flip_footer": size - 12}[kind])
        return df
    if kind == "dv_crc":  # a byte of the vector: the blob's CRC no longer matches
        ml, recs = _current_manifests(uri)
        with open([r for r in recs if r["content"] == 1][0]["manifest_path"], "rb") as f:
            e = [e for e in fastavro.reader(f) if e["status"] != 2][0]["data_file"]
        _flip(df, e["content_offset"] + 4 + 4 + 2)
        return df
    if kind == "dv_cardinality":
        _edit_delete_manifest(uri, _set_entries("record_count", lambda d: d["record_count"] + 1))
        return df
    if kind == "dv_offset_past_end":
        size = os.path.getsize(df)
        _edit_delete_manifest(uri, _set_entries("content_offset", lambda d: size + 100))
        return df
    if kind == "dv_length_past_end":
        size = os.path.getsize(df)
        _edit_delete_manifest(uri, _set_entries("content_size_in_bytes", lambda d: size))
        return df
    if kind == "content_data":  # a delete manifest listing a data file
        return _edit_delete_manifest(uri, _set_entries("content", lambda d: 0))
    raise AssertionError(kind)


V2_KINDS = ["truncated", "emptied", "replaced", "content_data"]
V3_KINDS = ["truncated", "emptied", "replaced", "dv_crc", "dv_cardinality",
            "dv_offset_past_end", "dv_length_past_end", "content_data"]
LIVE = sorted(set(range(60)) - set(range(5, 15)) - set(range(40, 47)))


def _damaged_source(uri, fv):
    """A table whose one delete file deletes rows of both data files (with a
    scalar index on s)."""
    t = _table(uri, fv)
    t.add_index("s")
    assert t.delete("(id >= 5 AND id < 15) OR (id >= 40 AND id < 47)") == 17
    return t


@pytest.fixture(scope="module")
def others(tmp_path_factory):
    """Per format version another table, with a different delete file."""
    base = tmp_path_factory.mktemp("others")
    out = {}
    for fv in (2, 3):
        other = str(base / f"o{fv}")
        o = _table(other, fv)
        assert o.delete("id >= 20 AND id < 40") == 20
        out[fv] = other
    return out


def test_upsert_key_uniqueness_random(tmp_path):
    """The source-key uniqueness check on random one-column keys of every
    integer-family type the table can hold (numpy's sort path) and strings (pyarrow's hash
    kernel), with NULLs: refused exactly when a non-NULL key repeats
    (oracle: pyarrow group_by over the non-NULL keys), nothing written then;
    else the upsert commits."""
    rng = random.Random(14)
    types = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint32(), pa.date32(),
             pa.timestamp("us"), pa.timestamp("us", tz="UTC"), pa.time64("us"),
             pa.string()]
    def column(keys, typ):
        if typ == pa.string():
            return pa.array([None if k is None else f"k{k}" for k in keys], typ)
        if pa.types.is_integer(typ):
            return pa.array(keys, pa.int64()).cast(typ)
        return pa.array(keys, pa.int32() if pa.types.is_date(typ) else pa.int64()).view(typ)

    for i, typ in enumerate(types):
        uri = str(tmp_path / f"t{i}")
        hdb.Table(uri).write(pa.table({"k": column([100], typ), "v": pa.array([-1], pa.int64())}))
        for trial in range(6):
            n = rng.randrange(1, 60)
            pool = rng.randrange(1, 80)
            keys = [rng.randrange(pool) if rng.random() > 0.1 else None for _ in range(n)]
            src = pa.table({"k": column(keys, typ), "v": pa.array(range(n), pa.int64())})
            live = src.filter(pa.compute.is_valid(src["k"]))
            counts = live.group_by("k").aggregate([([], "count_all")])
            dup = counts.num_rows and max(counts["count_all"].to_pylist()) > 1
            t = hdb.Table(uri)
            before = t.current_snapshot_id
            if dup:
                with pytest.raises(hdb.InvalidArgumentError, match="more than once"):
                    t.upsert(src, on="k")
                assert hdb.Table(uri).current_snapshot_id == before
            else:
                t.upsert(src, on="k")
                assert hdb.Table(uri).current_snapshot_id != before


def test_upsert_creating_the_table_checks_keys(tmp_path):
    """An upsert into a table that does not exist yet creates it from the
    source, but refuses a source whose keys repeat as it does for an
    existing table (nothing created); unique keys (NULLs repeat freely)
    create the table with every source row, and a merge that only inserts
    (no update) takes repeated keys, as a plain insert does."""
    uri = str(tmp_path / "new")
    dup = pa.table({"k": pa.array([1, 2, 2], pa.int64()), "v": pa.array([1, 2, 3], pa.int64())})
    with pytest.raises(hdb.InvalidArgumentError, match="more than once"):
        hdb.Table(uri).upsert(dup, on="k")
    assert not os.path.exists(os.path.join(uri, "metadata"))
    with pytest.raises(hdb.InvalidArgumentError, match="more than once"):
        hdb.Table(uri).merge(dup, on=["k"]).when_matched_update_all() \
            .when_not_matched_insert_all().execute()
    assert not os.path.exists(os.path.join(uri, "metadata"))
    ok = pa.table({"k": pa.array([1, None, None, 3], pa.int64()),
                   "v": pa.array([1, 2, 3, 4], pa.int64())})
    r = hdb.Table(uri).upsert(ok, on="k")
    assert (r.rows_updated, r.rows_inserted) == (0, 4)
    assert hdb.Table(uri).to_arrow().sort_by("v").equals(ok)
    uri2 = str(tmp_path / "insert_only")
    r = hdb.Table(uri2).merge(dup, on="k").when_not_matched_insert_all().execute()
    assert r.num_inserted_rows == 3 and len(hdb.Table(uri2)) == 3


def test_undamaged_reads(tmp_path):
    for fv in (2, 3):
        uri = str(tmp_path / f"t{fv}")
        _damaged_source(uri, fv)
        res = _reads(uri)
        for p in PATHS:
            assert res[p]["ok"], (fv, p, res[p])
            if p != "explain":
                assert res[p]["rows"] == (LIVE if p != "len" else list(range(len(LIVE)))), (fv, p)


@pytest.mark.parametrize("fv,kind", [(2, k) for k in V2_KINDS] + [(3, k) for k in V3_KINDS])
def test_damaged_delete_file(tmp_path, others, fv, kind):
    uri = str(tmp_path / "t")
    _damaged_source(uri, fv)
    named = _damage(kind, uri, others[fv])
    base = os.path.basename(named)
    res = _reads(uri)
    _check_reads(res, base, f"v{fv} {kind}", may_be_harmless=False)
    _check_cli_and_change(uri, base)


def _check_reads(res, base, where, may_be_harmless):
    """Every read path raised an error naming `base`; where the damage may
    have hit bytes that change nothing (a flipped bit), the exact live rows
    are accepted too; deleted rows never."""
    bad = {}
    for p in PATHS:
        r = res[p]
        if r["ok"] and may_be_harmless and (p == "explain" or r["rows"] == (
                LIVE if p != "len" else list(range(len(LIVE))))):
            continue
        if r["ok"]:
            bad[p] = f"returned {str(r['rows'])[:200]}" + \
                (" (deleted rows among them)" if p not in ("explain", "len") and
                 set(r["rows"]) - set(LIVE) else "")
        elif not r["hs"] or base not in r["message"]:
            bad[p] = f"{r['type']}: {r['message'][:300]} (does not name {base})"
    assert not bad, f"{where}: " + "; ".join(f"{k}: {v}" for k, v in bad.items())
    return all(not res[p]["ok"] for p in PATHS)


def _check_cli_and_change(uri, base):
    # the CLI too
    cli = _cli()
    if os.path.exists(cli):
        r = subprocess.run([cli, "scan", uri, "--csv", "--limit", "0"], capture_output=True,
                           text=True, timeout=READ_TIMEOUT)
        assert r.returncode != 0 and base in r.stderr, (r.returncode, r.stderr[-500:])
    # a change on it fails and writes nothing
    before = _files(uri)
    t = hdb.Table(uri)
    sid = t.current_snapshot_id
    with pytest.raises(hdb.HyperStreamError) as ei:
        t.delete("id = 20")
    assert base in str(ei.value), str(ei.value)
    assert hdb.Table(uri).current_snapshot_id == sid and _files(uri) == before


FLIPS = int(os.environ.get("HS_DELETE_FLIPS", "10"))


@pytest.mark.parametrize("fv", [2, 3])
def test_bit_flipped_delete_file(tmp_path, fv):
    """A bit flipped at seeded random offsets of the delete file: each read
    path raises an error naming it or, where the flip hit bytes no reader
    needs (a Puffin footer is not read when the manifest gives the blob's
    offset; Parquet statistics), returns exactly the live rows."""
    rng = random.Random(fv)
    errors = 0
    for n in range(FLIPS):
        uri = str(tmp_path / f"t{n}")
        _damaged_source(uri, fv)
        df = _delete_file(uri)
        off = rng.randrange(os.path.getsize(df))
        _flip(df, off)
        errors += _check_reads(_reads(uri), os.path.basename(df), f"v{fv} flip at {off}",
                               may_be_harmless=True)
    print(f"v{fv}: {errors} of {FLIPS} flips refused by every read path, the rest harmless")
