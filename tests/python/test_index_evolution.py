"""Indexes under schema evolution: index configuration and registry entries
record the Iceberg field id, so an index follows its column through a
rename, is built by reading each data file's column by field id, and never
answers for another field (a dropped column re-added under the same name, a
column that took a renamed column's name).

Two ways the schema evolves here: a new schema committed to our own table as
another Iceberg writer would (hand-written metadata, as
test_schema_evolution.py does), and pyiceberg's own update_schema() on our
table registered in a pyiceberg SQL catalog (its new metadata published as
our next version). Every filtered read is compared with the same filter
evaluated in Python on the unfiltered (unindexed) scan, and with pyiceberg's
scan of the same metadata.
"""

import json
import os
import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest

pytest.importorskip("pyiceberg")
np = pytest.importorskip("numpy")
import hyperstreamdb as hdb  # noqa: E402
from pyiceberg.table import StaticTable  # noqa: E402

DIM = 8


# ------------------------------------------------------------------ helpers


def _latest(root):
    meta_dir = os.path.join(root, "metadata")
    n = max(int(f[1:].split(".")[0]) for f in os.listdir(meta_dir)
            if f.startswith("v") and f.endswith(".metadata.json"))
    return n, os.path.join(meta_dir, f"v{n}.metadata.json")


def _publish(root, n, meta):
    meta_dir = os.path.join(root, "metadata")
    # As every Iceberg writer does: the replaced version joins the log.
    meta = dict(meta)
    meta["metadata-log"] = list(meta.get("metadata-log", [])) + [
        {"timestamp-ms": meta["last-updated-ms"],
         "metadata-file": os.path.join(meta_dir, f"v{n}.metadata.json")}]
    with open(os.path.join(meta_dir, f"v{n + 1}.metadata.json"), "x") as fh:
        json.dump(meta, fh)
    with open(os.path.join(meta_dir, "version-hint.text"), "w") as fh:
        fh.write(str(n + 1))


def _evolve(root, renames=None, drops=(), adds=()):
    """Commit a new current schema to our table as another Iceberg writer
    would: renamed, dropped and added (name, type) top-level fields."""
    renames = renames or {}
    n, path = _latest(root)
    with open(path) as fh:
        meta = json.load(fh)
    cur = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
    fields = []
    for f in cur["fields"]:
        if f["name"] in drops:
            continue
        f = dict(f)
        f["name"] = renames.get(f["name"], f["name"])
        fields.append(f)
    last = meta["last-column-id"]
    for name, typ in adds:
        last += 1
        fields.append({"id": last, "name": name, "required": False, "type": typ})
    sid = max(s["schema-id"] for s in meta["schemas"]) + 1
    meta["schemas"].append({"type": "struct", "schema-id": sid, "fields": fields})
    meta["current-schema-id"] = sid
    meta["last-column-id"] = last
    _publish(root, n, meta)


def _pyiceberg_evolve(tmp_path, root, change):
    """Evolve our table's schema with pyiceberg: register its latest metadata
    in a SQL catalog, apply `change(update_schema)`, and publish the metadata
    pyiceberg wrote as our next version (exactly its JSON)."""
    from pyiceberg.catalog.sql import SqlCatalog
    db = tmp_path / f"cat-{random.getrandbits(32)}.db"
    cat = SqlCatalog("c", uri=f"sqlite:///{db}", warehouse=f"file://{tmp_path}")
    cat.create_namespace_if_not_exists("ns")
    n, path = _latest(root)
    ident = f"ns.t{random.getrandbits(32)}"
    tbl = cat.register_table(ident, path)
    with tbl.update_schema() as up:
        change(up)
    new_path = cat.load_table(ident).metadata_location
    if new_path.startswith("file://"):
        new_path = new_path[len("file://"):]
    with open(new_path) as fh:
        meta = json.load(fh)
    os.remove(new_path)  # ours is v{n+1}; leave no catalog-style file behind
    _publish(root, n, meta)


def _vecs(rng, n):
    return rng.normal(size=(n, DIM)).astype(np.float32)


def _batch(rng, start, n, names=("id", "a", "cat", "emb")):
    v = _vecs(rng, n)
    cols = {
        names[0]: pa.array(range(start, start + n), pa.int64()),
        names[1]: pa.array([int(x) for x in rng.integers(0, 50, size=n)], pa.int64()),
        names[2]: pa.array([["p", "q", "r", "s"][int(x)] for x in rng.integers(0, 4, size=n)]),
        names[3]: pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), DIM),
    }
    return pa.table(cols)


def _ids(t):
    return sorted(t.column("id").to_pylist())


def _random_filter(rng, num, cat):
    def one():
        c = rng.random()
        if c < 0.4:
            op = rng.choice(["=", "<", "<=", ">", ">=", "<>"])
            return f"{num} {op} {rng.randrange(-2, 52)}", (num, op, rng)
        op = rng.choice(["=", "<>"])
        return f"{cat} {op} '{rng.choice('pqrsx')}'", (cat, op, rng)
    parts = [one()[0] for _ in range(rng.randrange(1, 3))]
    return (" AND " if rng.random() < 0.5 else " OR ").join(parts)


def _py_eval(table, flt):
    """Rows of `table` (an unfiltered scan) matching `flt` (the simple
    grammar _random_filter makes), evaluated with pyarrow."""
    def one(text):
        col, op, val = text.split(" ", 2)
        val = val.strip("'") if val.startswith("'") else int(val)
        x = table.column(col)
        return {"=": pc.equal, "<>": pc.not_equal, "<": pc.less, "<=": pc.less_equal,
                ">": pc.greater, ">=": pc.greater_equal}[op](x, val)
    if " AND " in flt:
        m = None
        for p in flt.split(" AND "):
            m = one(p) if m is None else pc.and_kleene(m, one(p))
    else:
        m = None
        for p in flt.split(" OR "):
            m = one(p) if m is None else pc.or_kleene(m, one(p))
    return table.filter(pc.fill_null(m, False))


def _check_filters(t, num, cat, seed, n=40, expect_indexed=True):
    rng = random.Random(seed)
    full = t.to_arrow()
    indexed_any = 0
    for _ in range(n):
        flt = _random_filter(rng, num, cat)
        got = t.to_arrow(filter=flt)
        assert _ids(got) == _ids(_py_eval(full, flt)), flt
        indexed_any += t.explain(flt).stats["files_indexed"] > 0
    if expect_indexed:
        assert indexed_any > 0


def _pyiceberg_ids(root, flt_expr):
    _, path = _latest(root)
    st = StaticTable.from_metadata(path)
    return sorted(st.scan(row_filter=flt_expr).to_arrow().column("id").to_pylist())


def _search_ids(t, col, q, exact):
    got = t.search(col, q, k=7, exact=exact, ef_search=400, columns=["id"])
    return got.column("id").to_pylist(), got.column("distance").to_pylist()


def _vector_explain(t, col, q):
    return t.query().vector_search(q, column=col, k=7).explain()


# -------------------------------------------------------------------- tests


@pytest.mark.parametrize("how", ["metadata", "pyiceberg"])
def test_rename_keeps_scalar_and_vector_indexes(tmp_path, how):
    root = str(tmp_path / "t")
    t = hdb.Table(root)
    rng = np.random.default_rng(5)
    for i in range(3):
        t.write(_batch(rng, 1000 * i, 400))
    t.add_index("a", "btree")
    t.add_index("cat", "bitmap")
    t.add_index("emb", "hnsw", metric="l2")
    t.wait_for_indexes()
    q = _vecs(rng, 1)[0]
    want_ids, want_d = _search_ids(t, "emb", q, exact=True)
    assert "3 searched (3 through a vector index" in _vector_explain(t, "emb", q)
    before = {f: _ids(t.to_arrow(filter=f)) for f in ("a = 7", "cat = 'q'", "a < 3 OR cat = 's'")}

    if how == "metadata":
        _evolve(root, renames={"a": "a2", "cat": "kind", "emb": "vec"})
    else:
        def change(up):
            up.rename_column("a", "a2")
            up.rename_column("cat", "kind")
            up.rename_column("emb", "vec")
        _pyiceberg_evolve(tmp_path, root, change)
    t = hdb.Table(root)
    assert t.schema.names == ["id", "a2", "kind", "vec"]
    assert sorted(t.index_columns()) == ["a2", "kind", "vec"]
    assert all(i.files_indexed == 3 for i in t.indexes())
    for f, ids in before.items():
        f2 = f.replace("a ", "a2 ").replace("cat ", "kind ")
        assert _ids(t.to_arrow(filter=f2)) == ids, f2
        ex = t.explain(f2).stats
        assert ex["files_indexed"] == 3, (f2, ex)
        assert all(set(fi["index_columns"].split(",")) <= {"a2", "kind"}
                   for fi in ex["files"]), ex["files"]
    from pyiceberg.expressions import EqualTo
    assert _pyiceberg_ids(root, EqualTo("a2", 7)) == before["a = 7"]
    # The vector index answers under the new name, exactly as the exact search.
    assert "3 searched (3 through a vector index" in _vector_explain(t, "vec", q)
    got_ids, got_d = _search_ids(t, "vec", q, exact=False)
    assert got_ids == want_ids and got_d == pytest.approx(want_d)
    # Old names are gone.
    with pytest.raises(Exception):
        t.to_arrow(filter="a = 7")
    # Appends under the new names: the background build indexes them (the
    # data file's own names are the new ones) and the scans use every index.
    t.write(_batch(rng, 5000, 400, names=("id", "a2", "kind", "vec")))
    t.wait_for_indexes()
    assert all(i.files_indexed == 4 for i in t.indexes()), t.indexes()
    assert t.explain("a2 = 7").stats["files_indexed"] == 4
    assert "4 searched (4 through a vector index" in _vector_explain(t, "vec", q)
    _check_filters(t, "a2", "kind", seed=1)
    # drop_index takes the current name and stops every file's index.
    t.drop_index("a2")
    assert "a2" not in t.index_columns()
    assert t.explain("a2 = 7").stats["files_indexed"] == 0
    assert _ids(t.to_arrow(filter="a2 = 7")) == _ids(_py_eval(t.to_arrow(), "a2 = 7"))


def test_add_index_on_a_renamed_column_builds_and_is_used(tmp_path):
    root = str(tmp_path / "t")
    t = hdb.Table(root)
    rng = np.random.default_rng(6)
    for i in range(2):
        t.write(_batch(rng, 1000 * i, 500))
    _evolve(root, renames={"a": "a2", "emb": "vec"})
    t = hdb.Table(root)
    t.add_index("a2", "inverted")  # reads column 'a' of the old files, by field id
    t.add_index("vec", "hnsw", metric="l2")
    t.wait_for_indexes()
    info = {i.column: (i.files_indexed, i.files_total) for i in t.indexes()}
    assert info == {"a2": (2, 2), "vec": (2, 2)}
    assert t.explain("a2 = 3").stats["files_indexed"] == 2
    _check_filters(t, "a2", "cat", seed=2)
    q = _vecs(rng, 1)[0]
    assert "2 searched (2 through a vector index" in _vector_explain(t, "vec", q)
    assert _search_ids(t, "vec", q, exact=False)[0] == _search_ids(t, "vec", q, exact=True)[0]
    # The registry records the data files' own names and the field ids.
    with open(_latest(root)[1]) as fh:
        meta = json.load(fh)
    with open(meta["properties"]["hyperstream.index-registry"]) as fh:
        reg = json.load(fh)
    fid = {f["name"]: f["id"] for f in next(
        s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])["fields"]}
    for e in reg["entries"]:
        assert e["columns"] in (["a"], ["emb"]) and e["field-ids"] in ([fid["a2"]], [fid["vec"]])
    conf = json.loads(meta["properties"]["hyperstream.indexes"])
    assert {c["column"]: c["field-id"] for c in conf} == {"a2": fid["a2"], "vec": fid["vec"]}


@pytest.mark.parametrize("how", ["metadata", "pyiceberg"])
def test_dropped_and_re_added_name_never_uses_the_old_index(tmp_path, how):
    root = str(tmp_path / "t")
    t = hdb.Table(root)
    rng = np.random.default_rng(7)
    t.write(_batch(rng, 0, 600))
    t.add_index("a", "bitmap")
    t.add_index("emb", "hnsw", metric="l2")
    t.wait_for_indexes()
    assert t.explain("a = 4").stats["files_indexed"] == 1
    if how == "metadata":
        _evolve(root, drops=("a", "emb"))
        _evolve(root, adds=(("a", "long"),))
    else:
        from pyiceberg.types import LongType
        _pyiceberg_evolve(tmp_path, root, lambda up: (up.delete_column("a"),
                                                      up.delete_column("emb")))
        _pyiceberg_evolve(tmp_path, root, lambda up: up.add_column("a", LongType()))
    t = hdb.Table(root)
    assert t.schema.names == ["id", "cat", "a"]
    # The dropped fields' configuration is ignored: not listed, not built.
    assert t.index_columns() == []
    assert t.to_arrow(filter="a = 4").num_rows == 0  # the new a is NULL in the old file
    assert t.explain("a = 4").stats["files_indexed"] == 0
    assert t.to_arrow(filter="a IS NULL").num_rows == 600
    # New rows with a = 4 under the new field; the old index (of the old
    # file's 'a') must never narrow them away nor answer for them.
    m = 30
    t.write(pa.table({"id": pa.array(range(10000, 10000 + m), pa.int64()),
                      "cat": pa.array(["p"] * m), "a": pa.array([4] * m, pa.int64())}))
    t.wait_for_indexes()
    assert _ids(t.to_arrow(filter="a = 4")) == list(range(10000, 10000 + m))
    assert t.explain("a = 4").stats["files_indexed"] == 0
    # Indexing the new 'a': only the file that holds the new field is built.
    t.add_index("a", "btree")
    t.wait_for_indexes()
    assert [(i.column, i.files_indexed, i.files_total) for i in t.indexes()] == [("a", 1, 2)]
    ex = t.explain("a = 4").stats
    assert ex["files_indexed"] == 1 and ex["rows_matched"] == m
    assert _ids(t.to_arrow(filter="a = 4")) == list(range(10000, 10000 + m))
    _check_filters(t, "a", "cat", seed=3)
    # The configuration the drop left ignored is gone once it is committed again.
    with open(_latest(root)[1]) as fh:
        conf = json.loads(json.load(fh)["properties"]["hyperstream.indexes"])
    assert [c["column"] for c in conf] == ["a"]


def test_a_name_taken_over_by_a_rename_uses_only_its_own_index(tmp_path):
    """a -> a_old, then b -> a: the index of the old 'a' follows a_old; the
    column now called 'a' (field b) uses b's index; randomized filters on
    both agree with the unindexed answer."""
    root = str(tmp_path / "t")
    t = hdb.Table(root)
    rng = np.random.default_rng(8)
    for i in range(2):
        b = _batch(rng, 1000 * i, 500)
        b = b.append_column("b", pa.array([int(x) for x in rng.integers(0, 20, size=500)],
                                          pa.int64()))
        t.write(b)
    t.add_index("a", "btree")
    t.add_index("b", "bitmap")
    t.wait_for_indexes()
    _evolve(root, renames={"a": "a_old", "b": "a"})
    t = hdb.Table(root)
    assert sorted(t.index_columns()) == ["a", "a_old"]
    kinds = {i.column: i.kind for i in t.indexes()}
    assert kinds == {"a_old": "btree", "a": "bitmap"}
    _check_filters(t, "a", "cat", seed=4)
    _check_filters(t, "a_old", "cat", seed=5)
    for v in (0, 3, 19, 40):  # 40: outside b's values, pruned by statistics
        assert t.explain(f"a = {v}").stats["files_indexed"] == (2 if v < 20 else 0)
        assert _ids(t.to_arrow(filter=f"a = {v}")) == _ids(_py_eval(t.to_arrow(), f"a = {v}"))


@pytest.mark.parametrize("how", ["metadata", "pyiceberg"])
def test_promoted_column_is_read_unindexed_and_exact(tmp_path, how):
    """int -> long (and a rename with it): the index holds int32 keys of the
    old files, so it is not used for the promoted column; answers stay exact."""
    root = str(tmp_path / "t")
    t = hdb.Table(root)
    rng = random.Random(9)
    n = 800
    t.write(pa.table({"id": pa.array(range(n), pa.int64()),
                      "k": pa.array([rng.randrange(30) for _ in range(n)], pa.int32()),
                      "cat": pa.array([rng.choice("pqrs") for _ in range(n)])}))
    t.add_index("k", "btree")
    t.add_index("cat", "bitmap")
    t.wait_for_indexes()
    assert t.explain("k = 3").stats["files_indexed"] == 1
    if how == "metadata":
        n0, path = _latest(root)
        with open(path) as fh:
            meta = json.load(fh)
        cur = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
        fields = [dict(f, type="long", name="k2") if f["name"] == "k" else f
                  for f in cur["fields"]]
        sid = max(s["schema-id"] for s in meta["schemas"]) + 1
        meta["schemas"].append({"type": "struct", "schema-id": sid, "fields": fields})
        meta["current-schema-id"] = sid
        _publish(root, n0, meta)
    else:
        from pyiceberg.types import LongType

        def change(up):
            up.update_column("k", LongType())
            up.rename_column("k", "k2")
        _pyiceberg_evolve(tmp_path, root, change)
    t = hdb.Table(root)
    assert t.schema.field("k2").type == pa.int64()
    assert sorted(t.index_columns()) == ["cat", "k2"]
    assert t.explain("k2 = 3").stats["files_indexed"] == 0  # int32 keys: refused
    assert t.explain("cat = 'q'").stats["files_indexed"] == 1  # the other index still works
    _check_filters(t, "k2", "cat", seed=6)
    from pyiceberg.expressions import EqualTo
    assert _ids(t.to_arrow(filter="k2 = 3")) == _pyiceberg_ids(root, EqualTo("k2", 3))
