"""Defining a table before its first write and evolving it from our API.

Oracle: pyiceberg (`StaticTable.from_metadata` of our latest metadata file)
must see the schema we meant (field ids, names, types, required, v3
initial-default/write-default), the partition spec and the sort order, and
read exactly our rows after every change. A seeded random history of schema
changes (add with and without defaults, rename, drop, widening, several in
one `update_schema()` block) with an append after each is also checked
against a plain model of the rows (by field id: a column added later reads
as its initial-default or NULL in older files, a widened column keeps its
values).
"""

import datetime as dt
import decimal
import glob
import json
import os
import random
import subprocess
import sys

import pyarrow as pa
import pytest

import hyperstreamdb as hdb

pyiceberg_table = pytest.importorskip("pyiceberg.table")
from pyiceberg import types as it  # noqa: E402


def _static(t):
    return pyiceberg_table.StaticTable.from_metadata(t.metadata_location)


def _meta(t):
    with open(t.metadata_location) as f:
        return json.load(f)


def _versions(t):
    return len(glob.glob(os.path.join(t.uri, "metadata", "v*.metadata.json")))


def _rows(tbl, key="k"):
    return sorted(tbl.to_pylist(), key=lambda r: r[key])


# ------------------------------------------------------------ create


@pytest.mark.parametrize("fmt", [2, 3])
def test_create_with_spec_and_order(tmp_path, fmt):
    schema = pa.schema([("k", pa.int64()), ("day", pa.date32()), ("name", pa.string()),
                        ("emb", pa.list_(pa.float32(), 4))])
    t = hdb.Table.create(tmp_path / "t", schema=schema,
                         partition_spec=[{"source_id": 2, "field_id": 1000, "name": "date",
                                          "transform": "day"}],
                         sort_order=[("name", "desc"), "k"], format_version=fmt,
                         properties={"owner": "tests"})
    assert t.exists and t.current_snapshot_id is None and len(t) == 0
    assert t.metadata_location.endswith("/v1.metadata.json")  # spec and order are in v1
    m = _meta(t)
    assert m["default-spec-id"] == 0 and len(m["partition-specs"]) == 1
    assert m["default-sort-order-id"] == 1
    assert t.format_version == fmt
    assert t.to_arrow().num_rows == 0
    st = _static(t)
    assert st.metadata.current_snapshot_id is None
    assert st.metadata.properties["owner"] == "tests"
    ps = st.spec()
    assert [(f.source_id, f.field_id, f.name, str(f.transform)) for f in ps.fields] == \
        [(2, 1000, "date", "day")]
    so = st.sort_order()
    assert [(f.source_id, f.direction.value, f.null_order.value) for f in so.fields] == \
        [(3, "desc", "nulls-last"), (1, "asc", "nulls-first")]
    ours = t.schema
    assert ours.field("emb").type == pa.list_(pa.float32(), 4)  # a vector column, as an append
    sch = st.schema()
    assert [(f.field_id, f.name) for f in sch.fields] == [(1, "k"), (2, "day"), (3, "name"),
                                                           (4, "emb")]
    assert isinstance(sch.find_field("emb").field_type, it.ListType)
    # the first write lands in the spec and the order
    rng = random.Random(fmt)
    n = 60
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(3)) for _ in range(n)]
    data = pa.table({"k": pa.array(range(n), pa.int64()), "day": pa.array(days, pa.date32()),
                     "name": pa.array([rng.choice(["a", "b", None, "c"]) for _ in range(n)]),
                     "emb": pa.FixedSizeListArray.from_arrays(
                         pa.array([rng.random() for _ in range(4 * n)], pa.float32()), 4)},
                    schema=schema)
    t.write(data)
    files = list(_static(t).scan().plan_files())
    assert len(files) == len(set(days))
    for f in files:
        assert f.file.sort_order_id == so.order_id
        one = pa.parquet.read_table(f.file.file_path.replace("file://", ""))
        assert len(set(one["day"].to_pylist())) == 1
        names = one["name"].to_pylist()
        # desc, nulls last; within a name, k ascending
        key = [(0 if v is None else 1, v or "") for v in names]
        assert key == sorted(key, reverse=True) or all(v is None for v in names)
    assert _rows(t.to_arrow()) == _rows(data)
    assert _rows(_static(t).scan().to_arrow()) == _rows(data)


def test_create_refuses_existing_unless_exist_ok(tmp_path):
    s = pa.schema([("k", pa.int64())])
    t = hdb.Table.create(tmp_path / "t", schema=s)
    v = t.metadata_location
    with pytest.raises(hdb.InvalidArgumentError, match="already exists"):
        hdb.Table.create(tmp_path / "t", schema=s)
    t2 = hdb.Table.create(tmp_path / "t", schema=pa.schema([("x", pa.string())]), exist_ok=True)
    assert t2.metadata_location == v and t2.schema.names == ["k"]
    with pytest.raises(hdb.HyperStreamError):
        hdb.Table.create(tmp_path / "u", schema="not a schema")
    assert not os.path.exists(tmp_path / "u" / "metadata")
    # a refused spec or order creates nothing (the folder stays free)
    with pytest.raises(hdb.SchemaError, match="no top-level column 'nope'"):
        hdb.Table.create(tmp_path / "u", schema=s, partition_spec=["nope"])
    with pytest.raises(hdb.HyperStreamError, match="nope"):
        hdb.Table.create(tmp_path / "u", schema=s, sort_order=["nope"])
    with pytest.raises(hdb.HyperStreamError, match="bucket"):
        hdb.Table.create(tmp_path / "u", schema=s, partition_spec=[("k", "bucket[x]")])
    assert not os.path.exists(tmp_path / "u" / "metadata")
    assert not hdb.Table(tmp_path / "u").exists
    hdb.Table.create(tmp_path / "u", schema=s, partition_spec=[("k", "bucket[4]")])


def test_partition_field_id_must_match(tmp_path):
    t = hdb.Table.create(tmp_path / "t", schema=pa.schema([("k", pa.int64()), ("d", pa.date32())]))
    with pytest.raises(hdb.InvalidArgumentError, match="assigned by the table"):
        t.set_partition_spec([{"source_id": 2, "field_id": 1005, "name": "dd",
                               "transform": "day"}])
    with pytest.raises(hdb.InvalidArgumentError, match="field id 9"):
        t.set_partition_spec([{"source_id": 9, "name": "x", "transform": "identity"}])


# ------------------------------------------------------- spec and order


def test_update_spec_and_replace_sort_order(tmp_path):
    s = pa.schema([("k", pa.int64()), ("c", pa.string()), ("n", pa.int32())])
    t = hdb.Table.create(tmp_path / "t", schema=s)
    with t.update_spec() as u:
        u.add_identity("c")
        u.add_field("k", "bucket[4]", "kb")
    assert [(f.name, str(f.transform)) for f in _static(t).spec().fields] == \
        [("c", "identity"), ("kb", "bucket[4]")]
    with t.update_spec() as u:
        u.remove_field("c")
        u.rename_field("kb", "k_bucket")
    sp = _static(t).spec()
    # (a renamed field gets a new partition field id here: partition.c recycles a historical
    # field's id only under its old name; still a valid spec)
    assert [(f.name, str(f.transform)) for f in sp.fields] == [("k_bucket", "bucket[4]")]
    t.update_spec([("n", "truncate[10]")])
    assert [str(f.transform) for f in _static(t).spec().fields] == ["truncate[10]"]
    with t.replace_sort_order() as r:
        r.desc("n")
        r.asc("c", null_order="nulls-last")
    so = _static(t).sort_order()
    assert [(f.source_id, f.direction.value, f.null_order.value) for f in so.fields] == \
        [(3, "desc", "nulls-last"), (2, "asc", "nulls-last")]
    t.replace_sort_order([{"source-id": 1, "direction": "desc", "null-order": "nulls-first"}])
    so = _static(t).sort_order()
    assert [(f.source_id, f.direction.value, f.null_order.value) for f in so.fields] == \
        [(1, "desc", "nulls-first")]
    t.replace_sort_order(["k"], ascending=[True])
    assert [f.source_id for f in _static(t).sort_order().fields] == [1]
    # an exception inside the block commits nothing
    v = _versions(t)
    with pytest.raises(RuntimeError):
        with t.update_spec() as u:
            u.add_identity("c")
            raise RuntimeError("stop")
    assert _versions(t) == v


# ----------------------------------------------------- schema changes


def test_changes_are_one_commit_each_and_read_by_pyiceberg(tmp_path):
    s = pa.schema([("k", pa.int64()), ("i", pa.int32()), ("f", pa.float32()),
                   ("d", pa.decimal128(7, 2)), ("s", pa.string())])
    t = hdb.Table.create(tmp_path / "t", schema=s, format_version=3)
    t.write(pa.table({"k": [1, 2], "i": [10, None], "f": [1.5, 2.25],
                      "d": [decimal.Decimal("1.25"), None], "s": ["a", "b"]}, schema=s))
    v0 = _versions(t)
    t.add_column("score", pa.float64(), default=0.5, doc="a score")
    t.add_column("tag", pa.string(), default="none")
    t.add_column("born", pa.date32(), default=dt.date(2020, 2, 29))
    t.add_column("flag", pa.bool_(), default=True)
    t.add_column("note", pa.string())
    assert _versions(t) == v0 + 5
    with t.update_schema() as u:  # one commit
        u.rename_column("s", "text")
        u.update_column("i", pa.int64())
        u.update_column("f", pa.float64())
        u.update_column("d", pa.decimal128(12, 2))
        u.drop_column("note")
    assert _versions(t) == v0 + 6
    m = _meta(t)
    assert m["current-schema-id"] == len(m["schemas"]) - 1 == 6
    assert m["last-column-id"] == 10
    sch = _static(t).schema()
    got = [(f.field_id, f.name, str(f.field_type), f.required, f.initial_default,
            f.write_default) for f in sch.fields]
    assert got == [
        (1, "k", "long", False, None, None), (2, "i", "long", False, None, None),
        (3, "f", "double", False, None, None), (4, "d", "decimal(12, 2)", False, None, None),
        (5, "text", "string", False, None, None), (6, "score", "double", False, 0.5, 0.5),
        (7, "tag", "string", False, "none", "none"),
        (8, "born", "date", False, dt.date(2020, 2, 29), dt.date(2020, 2, 29)),
        (9, "flag", "boolean", False, True, True)]
    assert sch.find_field("score").doc == "a score"
    # old rows read the defaults; new rows their values; pyiceberg agrees
    new = pa.table({"k": [3], "i": [2 ** 40], "f": [0.1], "d": [decimal.Decimal("12345.67")],
                    "text": ["c"], "score": [9.0], "tag": ["x"], "born": [dt.date(2024, 1, 1)],
                    "flag": [False]}, schema=t.schema.remove_metadata())
    t.write(new)
    ours = _rows(t.to_arrow())
    theirs = _rows(_static(t).scan().to_arrow())
    assert ours == theirs
    assert ours[0] == {"k": 1, "i": 10, "f": 1.5, "d": decimal.Decimal("1.25"), "text": "a",
                       "score": 0.5, "tag": "none", "born": dt.date(2020, 2, 29), "flag": True}
    assert ours[2]["i"] == 2 ** 40


def test_refusals(tmp_path):
    s = pa.schema([("k", pa.int64()), ("p", pa.string()), ("o", pa.int32()), ("x", pa.string())])
    t2 = hdb.Table.create(tmp_path / "v2", schema=s, partition_spec=["p"], sort_order=["o"])
    v = _versions(t2)
    with pytest.raises(hdb.HyperStreamError, match="format version 3"):
        t2.add_column("y", pa.int32(), default=1)
    with pytest.raises(hdb.HyperStreamError, match="partition spec"):
        t2.drop_column("p")
    with pytest.raises(hdb.HyperStreamError, match="sort order"):
        t2.drop_column("o")
    with pytest.raises(hdb.SchemaError, match="from long to int"):
        t2.update_column("k", pa.int32())
    with pytest.raises(hdb.SchemaError, match="from string to long"):
        t2.update_column("x", pa.int64())
    with pytest.raises(hdb.HyperStreamError, match="already exists"):
        t2.add_column("x", pa.int32())
    with pytest.raises(hdb.HyperStreamError, match="no column 'nope'"):
        t2.rename_column("nope", "z")
    with pytest.raises(hdb.HyperStreamError, match="'x' exists"):
        t2.rename_column("k", "x")
    with pytest.raises(hdb.HyperStreamError, match="needs a default"):
        t2.add_column("r", pa.int32(), required=True)
    t3 = hdb.Table.create(tmp_path / "v3", schema=s, format_version=3)
    with pytest.raises(hdb.HyperStreamError):
        t3.add_column("y", pa.int32(), default="not a number")
    with pytest.raises(hdb.SchemaError, match="decimal"):
        t3.add_column("dd", pa.decimal128(5, 2))
        t3.update_column("dd", pa.decimal128(6, 3))  # scale changes are not promotions
    # a failing change inside a builder: nothing of the block is committed
    v3 = _versions(t3)
    with pytest.raises(hdb.HyperStreamError):
        with t3.update_schema() as u:
            u.add_column("fine", pa.int32())
            u.drop_column("nope")
    with pytest.raises(RuntimeError):
        with t3.update_schema() as u:
            u.add_column("fine2", pa.int32())
            raise RuntimeError("stop")
    assert _versions(t3) == v3 and "fine" not in t3.schema.names
    assert _versions(t2) == v  # every refusal committed nothing
    # a partition source may go once the spec no longer uses it
    t2.set_partition_spec([])
    t2.drop_column("p")
    assert "p" not in t2.schema.names


def test_drop_column_drops_its_indexes_and_rename_keeps_them(tmp_path):
    s = pa.schema([("k", pa.int64()), ("c", pa.string()), ("z", pa.int64())])
    t = hdb.Table.create(tmp_path / "t", schema=s)
    rng = random.Random(3)
    n = 300
    t.write(pa.table({"k": list(range(n)), "c": [rng.choice("abc") for _ in range(n)],
                      "z": [rng.randrange(10) for _ in range(n)]}, schema=s))
    t.add_index("c", "bitmap")
    t.add_index("z", "inverted")
    assert sorted(t.index_columns()) == ["c", "z"]

    def registry_ids():
        reg = _meta(t)["properties"].get("hyperstream.index-registry")
        if reg is None:
            return set()
        with open(reg.replace("file://", "")) as f:
            entries = json.load(f)
        entries = entries.get("entries", entries) if isinstance(entries, dict) else entries
        return {i for e in entries for i in e.get("field-ids", [])}

    assert registry_ids() == {2, 3}
    t.rename_column("c", "cat")
    assert sorted(t.index_columns()) == ["cat", "z"]
    want = sorted(r["k"] for r in t.to_arrow().to_pylist() if r["cat"] == "b")
    assert sorted(t.to_arrow(filter="cat = 'b'")["k"].to_pylist()) == want
    t.drop_column("z")
    assert t.index_columns() == ["cat"]
    assert registry_ids() == {2}
    assert "z" not in t.to_arrow().column_names


def test_random_histories_against_model_and_pyiceberg(tmp_path):
    """Random schema changes with an append after each, v2 and v3."""
    kinds = [pa.int32(), pa.int64(), pa.float32(), pa.float64(), pa.string(), pa.bool_(),
             pa.date32(), pa.decimal128(9, 3)]
    widen = {pa.int32(): pa.int64(), pa.float32(): pa.float64(),
             pa.decimal128(9, 3): pa.decimal128(18, 3)}

    def value(rng, ty):
        if rng.random() < 0.2:
            return None
        if pa.types.is_integer(ty):
            return rng.randrange(-1000, 1000)
        if pa.types.is_floating(ty):
            return rng.choice([0.5, -1.25, 3.0, 1e6])
        if pa.types.is_string(ty):
            return rng.choice(["", "a", "héllo", "zz"])
        if pa.types.is_boolean(ty):
            return rng.random() < 0.5
        if pa.types.is_date(ty):
            return dt.date(2000, 1, 1) + dt.timedelta(days=rng.randrange(9000))
        return decimal.Decimal(rng.randrange(-10 ** 6, 10 ** 6)).scaleb(-3)

    for fmt, seed in [(2, 11), (3, 12), (3, 13)]:
        rng = random.Random(seed)
        root = tmp_path / f"h{seed}"
        cols = {1: ["k", pa.int64(), None]}  # field id -> [name, type, initial default]
        t = hdb.Table.create(root, schema=pa.schema([("k", pa.int64())]), format_version=fmt)
        next_id, nk = 2, 0
        rows = []  # {field id: value}
        for step in range(12):
            with t.update_schema() as u:
                for _ in range(rng.randrange(1, 4)):
                    op = rng.random()
                    others = [i for i in cols if i != 1]
                    if op < 0.45 or not others:
                        ty = rng.choice(kinds)
                        name = f"c{next_id}_{rng.randrange(100)}"
                        if any(c[0] == name for c in cols.values()):
                            continue
                        d = value(rng, ty) if fmt == 3 and rng.random() < 0.5 else None
                        u.add_column(name, ty, default=d)
                        cols[next_id] = [name, ty, d]
                        next_id += 1
                    elif op < 0.65:
                        i = rng.choice(others)
                        new = cols[i][0] + "r"
                        if any(c[0] == new for c in cols.values()):
                            continue
                        u.rename_column(cols[i][0], new)
                        cols[i][0] = new
                    elif op < 0.8:
                        i = rng.choice(others)
                        u.drop_column(cols[i][0])
                        del cols[i]
                    else:
                        cand = [i for i in others if cols[i][1] in widen]
                        if not cand:
                            continue
                        i = rng.choice(cand)
                        cols[i][1] = widen[cols[i][1]]
                        u.update_column(cols[i][0], cols[i][1])
            # the schema pyiceberg sees is the model's
            sch = _static(t).schema()
            assert [f.field_id for f in sch.fields] == list(cols)
            assert [f.name for f in sch.fields] == [c[0] for c in cols.values()]
            ours = t.schema
            assert [f.type for f in ours] == [c[1] for c in cols.values()]
            # append a batch under the current schema
            n = rng.randrange(1, 6)
            batch = {}
            for i, (name, ty, _d) in cols.items():
                batch[name] = [nk + j if i == 1 else value(rng, ty) for j in range(n)]
            for j in range(n):
                rows.append({i: batch[c[0]][j] for i, c in cols.items()})
            nk += n
            t.write(pa.table(batch, schema=pa.schema([(c[0], c[1]) for c in cols.values()])))
            # model: every row under the current schema
            want = []
            for r in rows:
                want.append({c[0]: (r[i] if i in r else c[2]) for i, c in cols.items()})
            want.sort(key=lambda r: r["k"])
            got = _rows(t.to_arrow())
            assert got == want, (fmt, step)
            assert _rows(_static(t).scan().to_arrow()) == want, (fmt, step)


def test_regular_file_fails_at_once(tmp_path):
    """Issue 14 item 7: a table path that is a regular file is an error at
    once, never a hang (each call in a child with a timeout)."""
    f = tmp_path / "plain.txt"
    f.write_text("hi")
    code = (
        "import sys, pyarrow as pa, hyperstreamdb as hdb\n"
        "p = sys.argv[1]\n"
        "for call in [lambda: hdb.Table(p).to_arrow(), lambda: len(hdb.Table(p)),\n"
        "             lambda: hdb.Table(p).write(pa.table({'k': [1]})),\n"
        "             lambda: hdb.Table.create(p, schema=pa.schema([('k', pa.int64())]))]:\n"
        "    try:\n"
        "        call()\n"
        "        print('NO ERROR')\n"
        "    except hdb.HyperStreamError as e:\n"
        "        print('ERR', e)\n")
    r = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True,
                       timeout=60)
    lines = r.stdout.splitlines()
    assert len(lines) == 4, r.stdout + r.stderr
    for line in lines:
        assert line.startswith("ERR") and "not a table folder" in line, line
    assert f.read_text() == "hi"


def test_add_vector_column(tmp_path):
    """An added fixed_size_list<float32> column is a vector column, as on
    create: older rows read NULL vectors, new ones theirs; pyiceberg agrees."""
    t = hdb.Table.create(tmp_path / "t", schema=pa.schema([("k", pa.int64())]))
    t.write(pa.table({"k": pa.array([1, 2], pa.int64())}))
    t.add_column("emb", pa.list_(pa.float32(), 3))
    assert t.schema.field("emb").type == pa.list_(pa.float32(), 3)
    emb = pa.FixedSizeListArray.from_arrays(pa.array([1, 2, 3, 4, 5, 6], pa.float32()), 3)
    t.write(pa.table({"k": pa.array([3, 4], pa.int64()), "emb": emb}))
    want = [{"k": 1, "emb": None}, {"k": 2, "emb": None}, {"k": 3, "emb": [1.0, 2.0, 3.0]},
            {"k": 4, "emb": [4.0, 5.0, 6.0]}]
    assert _rows(t.to_arrow()) == want
    assert _rows(_static(t).scan().to_arrow()) == want
    r = t.search("emb", [4, 5, 6], k=1, exact=True)
    assert r["k"].to_pylist() == [4]
