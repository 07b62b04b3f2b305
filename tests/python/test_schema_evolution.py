"""Schema evolution (issue 3): we read tables whose schema pyiceberg evolved.

pyiceberg writes through a SQL catalog on SQLite and evolves the schema
between appends: rename, add, drop, re-add a dropped name, reuse a dropped
name for a rename, reorder, int->long, float->double, decimal precision
widening. At every snapshot our scan (to_arrow, to_pandas, to_arrow_stream,
projections, filters, the CLI) must return exactly what pyiceberg's own
scan(snapshot_id=...) returns: columns matched by field id, absent columns
NULL, types promoted, the snapshot's own schema for time travel. Filters on
renamed, added and promoted columns are checked against a Python
evaluation (three-valued: NULL never matches a comparison) of pyiceberg's
rows.

Our own tables evolved by another writer (a new schema in the metadata,
as any Iceberg writer would commit it): a scalar index built under the old
schema must not answer for a new column that reuses the indexed name, and
our appends write the current schema's field ids.
"""

import json
import os
import random
import shutil
import subprocess
from decimal import Decimal

import pyarrow as pa
import pytest

pytest.importorskip("pyiceberg")
import hyperstreamdb as hdb  # noqa: E402
from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import (  # noqa: E402
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _values(rng, ptype, n):
    out = []
    for _ in range(n):
        if rng.random() < 0.15:
            out.append(None)
        elif isinstance(ptype, (IntegerType, LongType)):
            out.append(rng.randrange(-50, 50))
        elif isinstance(ptype, (FloatType, DoubleType)):
            out.append(rng.randrange(-400, 400) / 8)  # exact in float32
        elif isinstance(ptype, DecimalType):
            out.append(Decimal(rng.randrange(-10 ** (ptype.precision - 1), 10 ** (ptype.precision - 1)))
                       .scaleb(-ptype.scale))
        elif isinstance(ptype, StringType):
            out.append(rng.choice(["v0", "v1", "v2", "v3", "zz"]))
        else:
            raise AssertionError(ptype)
    return out


def _batch(tbl, rng, n, next_id):
    arrow_schema = tbl.schema().as_arrow()
    cols = {}
    for f in tbl.schema().fields:
        if f.name == "id":
            cols["id"] = list(range(next_id, next_id + n))
        else:
            cols[f.name] = _values(rng, f.field_type, n)
    return pa.Table.from_pydict(cols, schema=arrow_schema)


def _normalize(t):
    """Large string types as plain ones, rows by id."""
    fields = [pa.field(f.name, pa.string() if f.type == pa.large_string() else f.type) for f in t.schema]
    t = t.cast(pa.schema(fields))
    return t.sort_by("id")


def _evolve_steps():
    """(description, function of the UpdateSchema) applied in order."""
    return [
        ("rename a -> a2", lambda u: u.rename_column("a", "a2")),
        ("add n string, m long", lambda u: (u.add_column("n", StringType()), u.add_column("m", LongType()))),
        ("drop s", lambda u: u.delete_column("s")),
        ("promote a2 int->long, f float->double, d decimal(5,2)->(9,2)",
         lambda u: (u.update_column("a2", LongType()), u.update_column("f", DoubleType()),
                    u.update_column("d", DecimalType(9, 2)))),
        ("move m first", lambda u: u.move_first("m")),
        ("drop x, re-add x as string", None),
        ("rename n -> s (a dropped name)", lambda u: u.rename_column("n", "s")),
    ]


def _make_table(tmp_path, fmt, seed):
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "a", IntegerType(), required=False),
        NestedField(3, "f", FloatType(), required=False),
        NestedField(4, "d", DecimalType(5, 2), required=False),
        NestedField(5, "s", StringType(), required=False),
        NestedField(6, "x", IntegerType(), required=False),
    )
    try:
        tbl = cat.create_table("ns.t", schema=schema, properties={"format-version": str(fmt)})
    except (NotImplementedError, ValueError) as e:  # pragma: no cover - pyiceberg without v3
        pytest.skip(f"pyiceberg cannot create a v{fmt} table: {e}")
    rng = random.Random(seed)
    next_id = 0
    snaps = []  # (snapshot id, description)

    def append(desc):
        nonlocal next_id, tbl
        n = rng.randrange(5, 40)
        try:
            tbl.append(_batch(tbl, rng, n, next_id))
        except NotImplementedError as e:  # pragma: no cover
            pytest.skip(f"pyiceberg cannot append to a v{fmt} table: {e}")
        next_id += n
        tbl = cat.load_table("ns.t")
        snaps.append((tbl.current_snapshot().snapshot_id, desc))

    append("initial")
    append("second append, same schema")
    for desc, fn in _evolve_steps():
        if fn is None:
            with tbl.update_schema() as u:
                u.delete_column("x")
            with tbl.update_schema() as u:
                u.add_column("x", StringType())
        else:
            with tbl.update_schema() as u:
                fn(u)
        tbl = cat.load_table("ns.t")
        append(desc)
    return cat.load_table("ns.t"), snaps


# (filter, needed columns, predicate over a row dict): three-valued logic,
# a comparison with NULL never selects the row.
def _cmp(col, op, v):
    def p(r):
        x = r[col]
        if x is None:
            return False
        ops = {"<": lambda: x < v, "<=": lambda: x <= v, ">": lambda: x > v, ">=": lambda: x >= v,
               "=": lambda: x == v, "<>": lambda: x != v}
        return ops[op]()
    return p


FILTERS = [
    ("a2 > 10", {"a2"}, _cmp("a2", ">", 10)),
    ("a2 <= -20 OR m IS NULL", {"a2", "m"}, lambda r: _cmp("a2", "<=", -20)(r) or r["m"] is None),
    ("n IS NULL", {"n"}, lambda r: r["n"] is None),
    ("n = 'v3'", {"n"}, _cmp("n", "=", "v3")),
    ("m >= 0", {"m"}, _cmp("m", ">=", 0)),
    ("m IS NOT NULL AND a2 < 0", {"m", "a2"}, lambda r: r["m"] is not None and _cmp("a2", "<", 0)(r)),
    ("f < 2.5", {"f"}, _cmp("f", "<", 2.5)),
    ("d > 1.05", {"d"}, _cmp("d", ">", Decimal("1.05"))),
    ("d = 0.25", {"d"}, _cmp("d", "=", Decimal("0.25"))),
    ("x IS NULL", {"x"}, lambda r: r["x"] is None),
    ("x = 'v1'", {"x"}, _cmp("x", "=", "v1")),  # string x (re-added) only
    ("x > 3", {"x"}, _cmp("x", ">", 3)),  # int x (the first x) only
    ("s = 'v2'", {"s"}, _cmp("s", "=", "v2")),
    ("a = 7", {"a"}, _cmp("a", "=", 7)),
]


# v2 only: pyiceberg does not write v3 tables (its create refuses them); v3
# schema evolution written by another engine is test_spark_reads.py's
# test_schema_evolution_with_deletes[3] (Spark + Iceberg).
@pytest.mark.parametrize("fmt,seed", [(2, 1), (2, 2), (2, 3)])
def test_every_snapshot_reads_as_pyiceberg_reads_it(tmp_path, fmt, seed):
    tbl, snaps = _make_table(tmp_path, fmt, seed)
    root = tbl.location().replace("file://", "")
    ours = hdb.Table(root)
    checked_filters = 0
    for sid, desc in snaps:
        theirs = _normalize(tbl.scan(snapshot_id=sid).to_arrow())
        got = _normalize(ours.to_arrow(snapshot_id=sid))
        assert got.schema.names == theirs.schema.names, desc
        assert got.schema.types == theirs.schema.types, desc
        assert got.to_pylist() == theirs.to_pylist(), desc
        # to_pandas and the stream agree with to_arrow
        assert _normalize(pa.Table.from_pandas(ours.to_pandas(snapshot_id=sid), preserve_index=False)
                          .cast(got.schema)).to_pylist() == got.to_pylist()
        reader = ours.to_arrow_stream(snapshot_id=sid)
        assert _normalize(reader.read_all()).to_pylist() == got.to_pylist()
        # a projection of the evolved columns, in another order
        names = theirs.schema.names
        proj = [c for c in ("n", "a2", "s", "m", "id") if c in names]
        if "id" in proj:
            assert _normalize(ours.to_arrow(snapshot_id=sid, columns=proj)).to_pylist() == \
                theirs.select(proj).to_pylist(), desc
        rows = theirs.to_pylist()
        types = dict(zip(names, theirs.schema.types))
        for sql, cols, pred in FILTERS:
            if not cols <= set(names):
                continue
            if "x" in cols and pa.types.is_integer(types["x"]) != (sql == "x > 3"):
                continue  # the filter binds to one of the two x columns only
            want = [r for r in rows if pred(r)]
            out = _normalize(ours.to_arrow(snapshot_id=sid, filter=sql)).to_pylist()
            assert out == want, (desc, sql)
            checked_filters += 1
    assert checked_filters >= 30
    # The current snapshot without snapshot_id, and pyiceberg's own row_filter.
    cur = _normalize(ours.to_arrow(filter="m IS NULL"))
    theirs = _normalize(tbl.scan(row_filter="m IS NULL").to_arrow())
    assert cur.to_pylist() == theirs.to_pylist()
    theirs = _normalize(tbl.scan(row_filter="a2 > 5").to_arrow())
    assert _normalize(ours.to_arrow(filter="a2 > 5")).to_pylist() == theirs.to_pylist()


def test_pruning_never_drops_added_or_promoted_rows(tmp_path):
    """Selective filters on an added column whose old files carry no
    statistics, and on a promoted column whose old bounds are 4 bytes: the
    scan's counters show pruning happened where it may, never wrongly."""
    tbl, snaps = _make_table(tmp_path, 2, 7)
    ours = hdb.Table(tbl.location().replace("file://", ""))
    rows = _normalize(tbl.scan().to_arrow()).to_pylist()
    for sql, pred in [("m IS NULL", lambda r: r["m"] is None),
                      ("m = 3", _cmp("m", "=", 3)),
                      ("a2 >= 49", _cmp("a2", ">=", 49)),
                      ("a2 = -50", _cmp("a2", "=", -50)),
                      ("f >= 49.875", _cmp("f", ">=", 49.875))]:
        got = _normalize(ours.to_arrow(filter=sql)).to_pylist()
        assert got == [r for r in rows if pred(r)], sql
    # m was added after 3 appends: those files hold no m, so their row
    # groups are pruned as all-NULL for "m = 3" and kept for "m IS NULL".
    before_m = 3
    st = ours.explain("m = 3").stats
    assert st["row_groups_pruned"] >= before_m and st["rows_matched"] == sum(r["m"] == 3 for r in rows)
    st = ours.explain("m IS NULL").stats
    assert st["row_groups_pruned"] == 0 and st["rows_matched"] == sum(r["m"] is None for r in rows)
    # explain at the first snapshot reads with that snapshot's schema (a, not a2)
    first = snaps[0][0]
    old = _normalize(tbl.scan(snapshot_id=first).to_arrow()).to_pylist()
    assert ours.explain("a > 3", snapshot_id=first).stats["rows_matched"] == \
        sum(r["a"] is not None and r["a"] > 3 for r in old)


def test_cli_scan_reads_the_evolved_schema(tmp_path):
    tbl, snaps = _make_table(tmp_path, 2, 5)
    root = tbl.location().replace("file://", "")
    # $HS_CLI, else the build named by $HS_BUILD_DIR (as test_cli_table.py), else PATH
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    cli = os.environ.get("HS_CLI") or os.path.join(build if os.path.isabs(build) else os.path.join(ROOT, build),
                                                   "hyperstream")
    if not os.path.exists(cli):
        cli = shutil.which("hyperstream")
    if cli is None:
        pytest.skip("no hyperstream CLI built (set HS_CLI or HS_BUILD_DIR)")
    out = subprocess.run([cli, "scan", root, "--filter", "s IS NULL AND a2 > 0", "--columns", "id,a2,s", "--limit", "1000000",
                          "--csv"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0].replace('"', "") == "id,a2,s"
    rows = _normalize(tbl.scan().to_arrow()).to_pylist()
    want = sorted(r["id"] for r in rows if r["s"] is None and r["a2"] is not None and r["a2"] > 0)
    assert sorted(int(line.split(",")[0]) for line in lines[1:]) == want
    # time travel through the CLI: the first snapshot reads under schema 0
    out = subprocess.run([cli, "scan", root, "--snapshot", str(snaps[0][0]), "--csv"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].replace('"', "") == "id,a,f,d,s,x"


def test_writes_to_catalog_tables_are_refused(tmp_path):
    tbl, _ = _make_table(tmp_path, 2, 9)
    ours = hdb.Table(tbl.location().replace("file://", ""))
    with pytest.raises(hdb.HyperStreamError):
        ours.write(pa.table({"id": pa.array([1], pa.int64())}))


# ------------------------------------------------ our tables, evolved elsewhere


def _evolve_our_table(root, new_fields, renames):
    """Commit a new schema to our table the way another Iceberg writer would:
    v{N+1}.metadata.json with the schema appended and made current."""
    meta_dir = os.path.join(root, "metadata")
    n = max(int(f[1:].split(".")[0]) for f in os.listdir(meta_dir)
            if f.startswith("v") and f.endswith(".metadata.json"))
    with open(os.path.join(meta_dir, f"v{n}.metadata.json")) as fh:
        meta = json.load(fh)
    cur = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
    fields = []
    for f in cur["fields"]:
        f = dict(f)
        f["name"] = renames.get(f["name"], f["name"])
        fields.append(f)
    last = meta["last-column-id"]
    for name, typ in new_fields:
        last += 1
        if typ == "list<float>":
            fields.append({"id": last, "name": name, "required": False,
                           "type": {"type": "list", "element-id": last + 1, "element": "float",
                                    "element-required": False}})
            last += 1
        elif isinstance(typ, tuple):  # (type, initial-default): v3
            fields.append({"id": last, "name": name, "required": False, "type": typ[0],
                           "initial-default": typ[1], "write-default": typ[1]})
        else:
            fields.append({"id": last, "name": name, "required": False, "type": typ})
    sid = max(s["schema-id"] for s in meta["schemas"]) + 1
    meta["schemas"].append({"type": "struct", "schema-id": sid, "fields": fields})
    meta["current-schema-id"] = sid
    meta["last-column-id"] = last
    # As every Iceberg writer does: the replaced version joins the log.
    meta.setdefault("metadata-log", []).append(
        {"timestamp-ms": meta["last-updated-ms"],
         "metadata-file": os.path.join(meta_dir, f"v{n}.metadata.json")})
    with open(os.path.join(meta_dir, f"v{n + 1}.metadata.json"), "x") as fh:
        json.dump(meta, fh)
    with open(os.path.join(meta_dir, "version-hint.text"), "w") as fh:
        fh.write(str(n + 1))


def test_index_keyed_by_name_never_answers_for_a_new_column(tmp_path):
    root = str(tmp_path / "t")
    t = hdb.Table(root)
    rng = random.Random(11)
    n = 4000
    t.write(pa.table({"id": pa.array(range(n), pa.int64()),
                      "a": pa.array([rng.randrange(100) for _ in range(n)], pa.int64()),
                      "b": pa.array([rng.choice(["p", "q", "r"]) for _ in range(n)])}))
    t.add_index("a")
    t.wait_for_indexes()
    before = t.to_arrow(filter="a = 5").num_rows
    assert before > 0
    # a -> a_old; a new long column takes the name "a"
    _evolve_our_table(root, [("a", "long")], {"a": "a_old"})
    t = hdb.Table(root)
    assert t.schema.names == ["id", "a_old", "b", "a"]
    assert t.to_arrow(filter="a = 5").num_rows == 0  # the new a is NULL in the old file
    assert t.to_arrow(filter="a IS NULL").num_rows == n
    assert t.to_arrow(filter="a_old = 5").num_rows == before
    # our append under the evolved schema: field ids of the current schema
    m = 50
    t.write(pa.table({"id": pa.array(range(n, n + m), pa.int64()),
                      "a_old": pa.array([5] * m, pa.int64()),
                      "b": pa.array(["p"] * m),
                      "a": pa.array([5] * m, pa.int64())}))
    got = t.to_arrow(filter="a = 5")
    assert got.num_rows == m and got.column("a_old").to_pylist() == [5] * m
    assert t.to_arrow(filter="a_old = 5").num_rows == before + m
    # data under the old names does not fit the evolved schema
    with pytest.raises(hdb.SchemaError):
        t.write(pa.table({"id": pa.array([1], pa.int64()), "a": pa.array(["oops"]),
                          "b": pa.array(["p"]), "zz": pa.array([1])}))
    # the first snapshot still reads under its own schema
    first = t.snapshots()[0].snapshot_id
    assert t.to_arrow(snapshot_id=first).schema.names == ["id", "a", "b"]
    assert t.to_arrow(snapshot_id=first, filter="a = 5").num_rows == before


def test_vector_search_by_field_id(tmp_path):
    """A vector index registered as 'emb' answers only for that column: after
    emb -> emb_old and a new list<float> 'emb', searching 'emb' finds no rows
    in the old file (NULL vectors), searching 'emb_old' equals the exact
    search before the change, and projected renamed columns come back."""
    np = pytest.importorskip("numpy")
    root = str(tmp_path / "v")
    t = hdb.Table(root)
    rng = np.random.default_rng(3)
    n, dim = 600, 8
    vecs = rng.integers(-8, 8, size=(n, dim)).astype(np.float32)
    t.write(pa.table({"id": pa.array(range(n), pa.int64()),
                      "label": pa.array([f"l{i % 7}" for i in range(n)]),
                      "emb": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), dim)}))
    assert t._build_vector_index("emb", "hnsw", metric="l2") == 1
    q = rng.integers(-8, 8, size=dim).astype(np.float32)
    want = t.search("emb", q, k=10, exact=True, columns=["id", "label"])
    _evolve_our_table(root, [("emb", "list<float>")], {"emb": "emb_old", "label": "tag"})
    t = hdb.Table(root)
    assert t.schema.names == ["id", "tag", "emb_old", "emb"]
    assert t.search("emb", q, k=10).num_rows == 0
    got = t.search("emb_old", q, k=10, exact=True, columns=["id", "tag"])
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    assert got.column("tag").to_pylist() == want.column("label").to_pylist()
    assert got.column("distance").to_pylist() == want.column("distance").to_pylist()
    # Through the index (HNSW promises recall, not the exact top-k): real
    # rows of the renamed columns, their true distances, in order.
    got = t.search("emb_old", q, k=10, exact=False, columns=["id", "tag"])
    ids = got.column("id").to_pylist()
    assert len(ids) == 10 and len(set(ids)) == 10
    assert got.column("tag").to_pylist() == [f"l{i % 7}" for i in ids]
    true = np.sqrt(((vecs[ids] - q) ** 2).sum(axis=1))
    dist = got.column("distance").to_pylist()
    assert dist == sorted(dist)
    assert np.allclose(dist, true, rtol=1e-5)
    assert len(set(ids) & set(want.column("id").to_pylist())) >= 8


def test_nested_columns_pass_through_and_nested_evolution_is_refused(tmp_path):
    """Struct and list columns read by field id as they are (every nested
    id checked); a field added inside a struct is not read yet: a clear
    SchemaError naming the file and column, never data under wrong names."""
    from pyiceberg.types import ListType, StructType

    wh = tmp_path / "wh"
    wh.mkdir()
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "st", StructType(NestedField(3, "p", IntegerType(), required=False),
                                        NestedField(4, "q", StringType(), required=False)), required=False),
        NestedField(5, "tags", ListType(6, IntegerType(), element_required=False), required=False),
    )
    tbl = cat.create_table("ns.t", schema=schema)
    rng = random.Random(4)

    def append(first):
        n = 20
        st = [None if rng.random() < 0.2 else {"p": rng.choice([None, rng.randrange(9)]),
                                                "q": rng.choice([None, "u", "v"])} for _ in range(n)]
        names = [f.name for f in tbl.schema().fields]  # id, st|s2, tags|t2[, extra]
        data = {"id": list(range(first, first + n)), names[1]: st,
                names[2]: [rng.choice([None, [], [rng.randrange(5) for _ in range(rng.randrange(4))]])
                           for _ in range(n)]}
        if "extra" in names:
            data["extra"] = [rng.randrange(3) for _ in range(n)]
        tbl.append(pa.Table.from_pydict(data, schema=tbl.schema().as_arrow()))

    append(0)
    with tbl.update_schema() as u:
        u.rename_column("st", "s2")
        u.rename_column("tags", "t2")
        u.add_column("extra", LongType())
    tbl = cat.load_table("ns.t")
    append(100)
    ours = hdb.Table(tbl.location().replace("file://", ""))
    for snap in tbl.snapshots():
        theirs = _normalize(tbl.scan(snapshot_id=snap.snapshot_id).to_arrow())
        got = _normalize(ours.to_arrow(snapshot_id=snap.snapshot_id))
        assert got.schema.names == theirs.schema.names
        assert got.to_pylist() == theirs.to_pylist()
    assert _normalize(ours.to_arrow(filter="extra IS NULL")).column("id").to_pylist() == list(range(20))
    # a field added inside the struct: refused, not misread
    with tbl.update_schema() as u:
        u.add_column(("s2", "r"), LongType())
    tbl = cat.load_table("ns.t")
    with pytest.raises(hdb.SchemaError, match="s2"):
        hdb.Table(tbl.location().replace("file://", "")).to_arrow()


def test_v3_initial_default_fills_older_files(tmp_path):
    """v3: a column added with an initial-default reads as that default in
    files written before it (Iceberg spec, "Default values"), not NULL;
    filters and pruning see the default; a default of a type we do not read
    yet is an error, never NULLs."""
    root = str(tmp_path / "v3")
    t = hdb.Table(root, format_version=3)
    n = 50
    t.write(pa.table({"id": pa.array(range(n), pa.int64())}))
    _evolve_our_table(root, [("k", ("long", 7)), ("tag", ("string", "dflt")),
                             ("price", ("decimal(9,2)", "-1.50")), ("day", ("date", "2024-03-01")),
                             ("ok", ("boolean", True)), ("r", ("double", 0.25))], {})
    t = hdb.Table(root)
    got = t.to_arrow()
    assert got.column("k").to_pylist() == [7] * n
    assert got.column("tag").to_pylist() == ["dflt"] * n
    assert got.column("price").to_pylist() == [Decimal("-1.50")] * n
    assert [str(d) for d in got.column("day").to_pylist()] == ["2024-03-01"] * n
    assert got.column("ok").to_pylist() == [True] * n and got.column("r").to_pylist() == [0.25] * n
    assert t.to_arrow(filter="k = 7 AND tag = 'dflt' AND price < 0").num_rows == n
    assert t.to_arrow(filter="k IS NULL").num_rows == 0
    assert t.to_arrow(filter="k <> 7").num_rows == 0
    # rows written after the change carry their own values
    t.write(pa.table({"id": pa.array([n], pa.int64()), "k": pa.array([None], pa.int64()),
                      "tag": pa.array(["x"]), "price": pa.array([Decimal("2.00")], pa.decimal128(9, 2)),
                      "day": pa.array([None], pa.date32()), "ok": pa.array([False]),
                      "r": pa.array([1.0])}))
    assert t.to_arrow(filter="k IS NULL").column("id").to_pylist() == [n]
    assert t.to_arrow(filter="k = 7").num_rows == n
    # a list default is not read yet: an error naming the column
    _evolve_our_table(root, [("lst", ({"type": "list", "element-id": 100, "element": "int",
                                        "element-required": False}, [1, 2]))], {})
    with pytest.raises(hdb.UnsupportedError, match="lst"):
        hdb.Table(root).to_arrow()


def test_files_without_field_ids_through_the_name_mapping(tmp_path):
    """pyiceberg's add_files registers Parquet files written without field
    ids and sets schema.name-mapping.default; after renames (pyiceberg adds
    the new name to the mapping) and an added column, those files read
    through the mapping exactly as pyiceberg reads them."""
    import pyarrow.parquet as pq

    wh = tmp_path / "wh"
    wh.mkdir()
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "a", LongType(), required=False),
                    NestedField(3, "b", StringType(), required=False))
    tbl = cat.create_table("ns.t", schema=schema)
    rng = random.Random(12)
    path = str(tbl.location().replace("file://", "")) + "/data/plain.parquet"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(range(30), pa.int64()),
                             "a": pa.array([rng.choice([None, rng.randrange(9)]) for _ in range(30)], pa.int64()),
                             "b": pa.array([rng.choice(["p", "q", None]) for _ in range(30)])}), path)
    assert pq.read_schema(path).field("a").metadata is None  # no field ids
    tbl.add_files([path])
    tbl = cat.load_table("ns.t")
    assert "schema.name-mapping.default" in tbl.properties
    with tbl.update_schema() as u:
        u.rename_column("a", "a2")
    with tbl.update_schema() as u:
        u.add_column("c", LongType())
        u.update_column("b", doc="renamed below")
    with tbl.update_schema() as u:
        u.rename_column("b", "b2")
    tbl = cat.load_table("ns.t")
    tbl.append(pa.Table.from_pydict({"id": [100, 101], "a2": [5, None], "b2": ["z", None], "c": [1, 2]},
                                    schema=tbl.schema().as_arrow()))
    tbl = cat.load_table("ns.t")
    ours = hdb.Table(tbl.location().replace("file://", ""))
    for snap in tbl.snapshots():
        theirs = _normalize(tbl.scan(snapshot_id=snap.snapshot_id).to_arrow())
        got = _normalize(ours.to_arrow(snapshot_id=snap.snapshot_id))
        assert got.schema.names == theirs.schema.names
        assert got.to_pylist() == theirs.to_pylist()
    rows = _normalize(tbl.scan().to_arrow()).to_pylist()
    assert _normalize(ours.to_arrow(filter="a2 > 3")).to_pylist() == \
        [r for r in rows if r["a2"] is not None and r["a2"] > 3]
    assert _normalize(ours.to_arrow(filter="c IS NULL")).column("id").to_pylist() == list(range(30))
    assert _normalize(ours.to_arrow(filter="b2 = 'p'")).to_pylist() == [r for r in rows if r["b2"] == "p"]
