"""Issue 12, bad input: refused writes and filters that must fail clearly.

* a vector column's dimension is part of the table schema: appends of
  ``fixed_size_list<float, D'>`` (D' != D) or of ``list<float>`` rows of the
  wrong length are refused with SchemaError naming the column and both
  types, through every write path (plain, partitioned, sorted, numpy-built
  data), and leave the table exactly as pyiceberg read it before;
* a schema mismatch names the first differing column and both types;
* NUL characters in a filter, a column name or a property are errors naming
  where they are, never a silent cut;
* an empty or whitespace-only filter means "no filter" in every entry point;
* deep nesting in a filter says "nested too deeply (limit N)";
* duplicate column names (top level or inside a struct) are refused by
  table creation (Python and CLI) and by appends.

About 3 s.
"""

import os
import random
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conftest  # noqa: E402

hdb = pytest.importorskip("hyperstreamdb")

ROOT = conftest.REPO_ROOT


def _vec(n, dim, rng, list_type=None):
    flat = pa.array(rng.random(n * dim, dtype=np.float32))
    if list_type == "list":
        offs = pa.array(np.arange(0, n * dim + 1, dim, dtype=np.int32))
        return pa.ListArray.from_arrays(offs, flat)
    return pa.FixedSizeListArray.from_arrays(flat, dim)


def _rows(lo, n, dim, rng, **kw):
    return pa.table({"id": pa.array(range(lo, lo + n), pa.int64()),
                     "cat": pa.array([f"c{i % 3}" for i in range(lo, lo + n)]),
                     "emb": _vec(n, dim, rng, **kw)})


def _state(table, root):
    """What a refused write must leave unchanged: metadata file, snapshot,
    data files, and the rows pyiceberg (when present) and we read."""
    files = sorted(os.listdir(os.path.join(root, "data")))
    metas = sorted(os.listdir(os.path.join(root, "metadata")))
    ours = table.to_arrow().sort_by("id")
    theirs = None
    try:
        from pyiceberg.table import StaticTable
    except ImportError:  # pragma: no cover - pyiceberg is in requirements-test
        StaticTable = None
    if StaticTable is not None:
        theirs = StaticTable.from_metadata(table.metadata_location).scan().to_arrow()
        theirs = theirs.sort_by("id").to_pydict()
    return (table.metadata_location, table.current_snapshot_id, files, metas,
            ours.to_pydict(), theirs)


def _vector_table(tmp_path, rng, dim=8, spec=None, order=None):
    root = str(tmp_path / "t")
    t = hdb.Table(root)
    t.write(_rows(0, 20, dim, rng))
    if spec is not None:
        t.set_partition_spec(spec)
    if order is not None:
        t.set_sort_order(order)
    t.write(_rows(20, 10, dim, rng))
    return t, root


# ------------------------------------------------- item 3: vector dimension


@pytest.mark.parametrize("layout", ["plain", "partitioned", "sorted"])
def test_wrong_dimension_refused(tmp_path, layout):
    rng = np.random.default_rng(3)
    spec = ["cat"] if layout == "partitioned" else None
    order = ["id"] if layout == "sorted" else None
    t, root = _vector_table(tmp_path, rng, spec=spec, order=order)
    before = _state(t, root)
    for bad_dim in (9, 7, 1, 16):
        with pytest.raises(hdb.SchemaError) as e:
            t.write(_rows(100, 5, bad_dim, rng))
        msg = str(e.value)
        assert "'emb'" in msg, msg
        assert "fixed_size_list<float32, 8>" in msg and f"fixed_size_list<float32, {bad_dim}>" in msg
        assert _state(t, root) == before
    # searching still works on 8 dimensions and sees only 8-dim rows
    q = rng.random(8, dtype=np.float32)
    got = t.search("emb", q, k=3)
    assert got.num_rows == 3 and set(got.column("id").to_pylist()) <= set(range(30))
    # a right-dimension append still works after the refusals
    t.write(_rows(200, 4, 8, rng))
    assert t.to_arrow().num_rows == 34


def test_wrong_length_list_rows(tmp_path):
    """list<float> into a fixed_size_list<float, 8> column: rows of length 8
    are stored as the fixed size; any other length is refused."""
    rng = np.random.default_rng(4)
    t, root = _vector_table(tmp_path, rng)
    before = _state(t, root)
    bad = pa.table({"id": pa.array([100, 101, 102], pa.int64()), "cat": ["a", "b", "c"],
                    "emb": pa.array([[1.0] * 8, [1.0] * 9, [2.0] * 8], pa.list_(pa.float32()))})
    with pytest.raises(hdb.SchemaError) as e:
        t.write(bad)
    assert "'emb'" in str(e.value)
    assert _state(t, root) == before
    good = pa.table({"id": pa.array([100, 101], pa.int64()), "cat": ["a", "b"],
                     "emb": pa.array([[1.0] * 8, [2.0] * 8], pa.list_(pa.float32()))})
    t.write(good)
    out = t.to_arrow().sort_by("id")
    assert out.schema.field("emb").type == pa.list_(pa.field("element", pa.float32(),
                                                             nullable=True), 8) or \
        pa.types.is_fixed_size_list(out.schema.field("emb").type)
    assert out.num_rows == 32
    assert out.column("emb").to_pylist()[-2:] == [[1.0] * 8, [2.0] * 8]


def test_fixed_rows_into_list_column(tmp_path):
    """A list<float> column takes fixed-size rows (cast by Python; the core
    refuses them uncast, as files of both kinds would not scan together)."""
    root = str(tmp_path / "t")
    t = hdb.Table(root)
    t.write(pa.table({"id": pa.array([1], pa.int64()),
                      "emb": pa.array([[1.0, 2.0]], pa.list_(pa.float32()))}))
    fixed = pa.table({"id": pa.array([2], pa.int64()),
                      "emb": pa.FixedSizeListArray.from_arrays(
                          pa.array([1.0, 2.0, 3.0], pa.float32()), 3)})
    before = _state(t, root)
    with pytest.raises(hdb.SchemaError) as e:
        t._handle.append(fixed.to_reader())
    assert "column 'emb': table has list<float32>, data has fixed_size_list<float32, 3>" in \
        str(e.value)
    assert _state(t, root) == before
    t.write(fixed)
    assert t.to_arrow().sort_by("id").column("emb").to_pylist() == [[1.0, 2.0], [1.0, 2.0, 3.0]]
    assert _state(t, root)[5]["emb"] == [[1.0, 2.0], [1.0, 2.0, 3.0]]


def test_wrong_dimension_numpy_and_dict(tmp_path):
    rng = np.random.default_rng(5)
    t, root = _vector_table(tmp_path, rng)
    before = _state(t, root)
    emb9 = list(rng.random((3, 9), dtype=np.float32))
    with pytest.raises(hdb.SchemaError):
        t.write({"id": np.arange(3, dtype=np.int64), "cat": ["a", "b", "c"], "emb": emb9})
    with pytest.raises(hdb.SchemaError):
        t.write([{"id": 1, "cat": "a", "emb": [0.5] * 9}])
    assert _state(t, root) == before
    t.write({"id": np.arange(50, 53, dtype=np.int64), "cat": ["a", "b", "c"],
             "emb": list(rng.random((3, 8), dtype=np.float32))})
    assert t.to_arrow().num_rows == 33


def test_randomized_append_oracle(tmp_path):
    """Random appends of right and wrong dimensions, list and fixed layouts:
    the table holds exactly the accepted ones (checked with pyiceberg)."""
    rng = np.random.default_rng(6)
    r = random.Random(6)
    root = str(tmp_path / "t")
    t = hdb.Table(root)
    t.write(_rows(0, 5, 4, rng))
    want = 5
    for i in range(12):
        dim = r.choice([4, 4, 3, 5])
        kind = r.choice([None, "list"])
        n = r.randint(1, 6)
        data = _rows(1000 * (i + 1), n, dim, rng, list_type=kind)
        if dim == 4:
            t.write(data)
            want += n
        else:
            before = _state(t, root)
            with pytest.raises(hdb.SchemaError):
                t.write(data)
            assert _state(t, root) == before
    assert t.to_arrow().num_rows == want
    assert _state(t, root)[4]["id"] == _state(t, root)[5]["id"]


# ---------------------------------------------- item 6a: mismatch messages


@pytest.mark.parametrize("data,col,table_has,data_has", [
    ({"id": pa.array([1], pa.int32()), "x": pa.array([0.5])}, "id", "int64", "int32"),
    ({"id": pa.array([1], pa.int64()), "x": pa.array(["a"])}, "x", "float64", "string"),
    ({"id": pa.array([1], pa.int64()), "x": pa.array([[0.5]])}, "x", "float64", "list<float64>"),
])
def test_mismatch_names_column_and_types(tmp_path, data, col, table_has, data_has):
    t = hdb.Table(tmp_path / "t")
    t.write(pa.table({"id": pa.array([0], pa.int64()), "x": pa.array([0.0])}))
    with pytest.raises(hdb.SchemaError) as e:
        t.write_arrow(pa.table(data))
    msg = str(e.value)
    assert f"column '{col}'" in msg, msg
    assert f"table has {table_has}" in msg and f"data has {data_has}" in msg, msg


def test_mismatch_nullability_and_nested(tmp_path):
    t = hdb.Table(tmp_path / "t")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False),
                        pa.field("l", pa.list_(pa.int64()))])
    t.write(pa.table({"id": [1], "l": [[1, 2]]}, schema=schema))
    loose = pa.schema([pa.field("id", pa.int64()), schema.field("l")])
    # (Table.write adapts a nullable column without nulls; the core refuses it)
    with pytest.raises(hdb.SchemaError) as e:
        t._handle.append(pa.table({"id": [2], "l": [[3]]}, schema=loose).to_reader())
    assert "column 'id': table has int64 not null, data has int64" in str(e.value)
    other = pa.schema([schema.field("id"), pa.field("l", pa.list_(pa.string()))])
    with pytest.raises(hdb.SchemaError) as e:
        t.write_arrow(pa.table({"id": [2], "l": [["x"]]}, schema=other))
    assert "column 'l.element': table has int64, data has string" in str(e.value)
    with pytest.raises(hdb.SchemaError) as e:
        t.write_arrow(pa.table({"id": pa.array([2], pa.int64()), "m": [[1]]}))
    assert "data has no column 'l'" in str(e.value)
    with pytest.raises(hdb.SchemaError) as e:
        t.write_arrow(pa.table({"l": [[1]], "id": pa.array([2], pa.int64()), "z": [1]}))
    assert "data column 'z' is not in the table" in str(e.value)
    assert t.to_arrow().num_rows == 1


# ------------------------------------------------------------ item 4: NUL


@pytest.fixture
def small(tmp_path):
    t = hdb.Table(tmp_path / "t")
    t.write(pa.table({"a": pa.array([1, 2, 3, 1], pa.int64()), "b": ["x", "y", "z", "w"]}))
    return t


@pytest.mark.parametrize("filt,pos", [
    ("a = 1\x00 garbage (((", 6),
    ("\x00a = 1", 1),
    ("a = 1\x00", 6),
    ("b = 'x\x00y'", 7),
])
def test_nul_in_filter(small, filt, pos):
    calls = [
        lambda: small.to_arrow(filter=filt),
        lambda: small.to_pandas(filter=filt),
        lambda: small.to_arrow_stream(filter=filt),
        lambda: small.query().filter(filt).execute(),
        lambda: small.explain(filter=filt),
        lambda: small.search("a", [1.0], k=1, filter=filt),
    ]
    for call in calls:
        with pytest.raises(hdb.InvalidArgumentError) as e:
            call()
        assert "NUL" in str(e.value) and f"position {pos}" in str(e.value), str(e.value)


def test_nul_in_core_text(small, tmp_path):
    """The extension's own str -> char* conversions refuse NULs (naming the
    argument and offset) rather than cutting the text."""
    from hyperstreamdb import _core
    h = small._handle
    for call in (lambda: h.scan(filter="a = 1\x00x"),
                 lambda: h.scan(columns=["a\x00b"]),
                 lambda: _core.explain(small._uri, "a = 1\x00x", None),
                 lambda: h.scan(columns=["b", "a\x00"])):
        with pytest.raises(ValueError) as e:
            call()
        assert "NUL" in str(e.value) and "offset" in str(e.value), str(e.value)
    with pytest.raises(ValueError) as e:
        small.to_arrow(columns=["a\x00junk"])
    assert "NUL" in str(e.value)
    with pytest.raises(ValueError) as e:
        hdb.Table(tmp_path / "p", properties={"k": "v\x00w"}).write({"a": [1]})
    assert "NUL" in str(e.value)
    with pytest.raises(ValueError):
        hdb.Table(tmp_path / "q", properties={"k\x00x": "v"}).write({"a": [1]})


# ------------------------------------------------------ item 4: empty filter


@pytest.mark.parametrize("empty", ["", " ", "\t\n  \r"])
def test_empty_filter_means_no_filter(small, empty):
    n = small.to_arrow().num_rows
    assert small.to_arrow(filter=empty).num_rows == n
    assert len(small.to_pandas(filter=empty)) == n
    assert small.to_arrow_stream(filter=empty).read_all().num_rows == n
    assert small.query().filter(empty).execute().num_rows == n
    assert small.query().filter(empty).filter("a = 1").execute().num_rows == 2
    assert small.query().filter("a = 1").filter(empty).execute().num_rows == 2
    assert small.query().filter(empty).where is None
    small.explain(filter=empty)


def test_empty_filter_search(tmp_path):
    rng = np.random.default_rng(7)
    t, _ = _vector_table(tmp_path, rng, dim=4)
    q = rng.random(4, dtype=np.float32)
    ref = t.search("emb", q, k=5).column("id").to_pylist()
    for empty in ("", "  "):
        assert t.search("emb", q, k=5, filter=empty).column("id").to_pylist() == ref
        assert t.query().filter(empty).vector_search(q, column="emb", k=5).execute() \
            .column("id").to_pylist() == ref


# ------------------------------------------------------ item 6b: deep nesting


@pytest.mark.parametrize("make", [
    lambda n: "(" * n + "a = 1" + ")" * n,
    lambda n: "NOT " * n + "a = 1",
    lambda n: "".join("(a = 1 OR " for _ in range(n)) + "a = 2" + ")" * n,
    lambda n: "a = 1" + "::int8" * n,
    lambda n: "(a = 1)" + " IS TRUE" * n,
    lambda n: "a = " + "+".join(["1"] * n),
])
@pytest.mark.parametrize("n", [300, 10_000, 90_000])
def test_deep_filter(small, make, n):
    with pytest.raises(hdb.HyperStreamError) as e:
        small.to_arrow(filter=make(n))
    msg = str(e.value)
    assert "nested too deeply (limit 256)" in msg or "arithmetic" in msg, msg
    assert "memory exhausted" not in msg and "parse tree" not in msg


def test_moderate_nesting_still_works(small):
    assert small.to_arrow(filter="(" * 200 + "a = 1" + ")" * 200).num_rows == 2
    assert small.to_arrow(filter="NOT " * 100 + "a = 1").num_rows == 2
    big_in = "a IN (" + ", ".join(str(-i) for i in range(20000)) + ")"
    assert small.to_arrow(filter=big_in).num_rows == 0
    big_or = " OR ".join(f"a = {i}" for i in range(5000))
    assert small.to_arrow(filter=big_or).num_rows == 4
    assert small.to_arrow(filter="b = '" + "(" * 1000 + "'").num_rows == 0
    assert small.to_arrow(filter="b = 'x' -- " + "(" * 1000).num_rows == 1
    assert small.to_arrow(filter="b = 'x' /* " + "(" * 1000 + " */").num_rows == 1
    assert small.to_arrow(filter="b = $q$" + "(" * 1000 + "$q$").num_rows == 0
    assert small.to_arrow(filter="b = E'\\'" + "(" * 1000 + "'").num_rows == 0


# ------------------------------------------------- item 6c: duplicate names


def test_duplicate_names_python(tmp_path):
    dup = pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["a", "a"])
    root = tmp_path / "t"
    with pytest.raises(hdb.SchemaError) as e:
        hdb.Table(root).write(dup)
    assert "duplicate" in str(e.value) and "'a'" in str(e.value)
    assert not os.path.exists(root / "metadata" / "v1.metadata.json")
    st = pa.struct([pa.field("x", pa.int64()), pa.field("x", pa.int64())])
    nested = pa.table({"s": pa.StructArray.from_arrays([pa.array([1]), pa.array([2])],
                                                        fields=list(st))})
    with pytest.raises(hdb.SchemaError) as e:
        hdb.Table(tmp_path / "n").write(nested)
    assert "duplicate" in str(e.value) and "'x'" in str(e.value)
    # appends with a duplicate are refused too, writing nothing
    t = hdb.Table(tmp_path / "ok")
    t.write(pa.table({"a": [1], "b": [2]}))
    before = _state_plain(t, tmp_path / "ok")
    with pytest.raises(hdb.SchemaError):
        t.write(pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["a", "a"]))
    assert _state_plain(t, tmp_path / "ok") == before
    # case differs: distinct names in Iceberg
    hdb.Table(tmp_path / "case").write(pa.table({"a": [1], "A": [2]}))


def _state_plain(t, root):
    return (t.metadata_location, sorted(os.listdir(os.path.join(root, "data"))),
            t.to_arrow().to_pydict())


def _exe():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "hyperstream")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (set HS_BUILD_DIR)")
    return path


def _cli(*args):
    return subprocess.run([_exe(), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_duplicate_names_cli(tmp_path):
    r = _cli("create", tmp_path / "t", "--schema", "a:int64,a:int64")
    assert r.returncode != 0
    assert "duplicate" in r.stderr and "'a'" in r.stderr, r.stderr
    assert not os.path.exists(tmp_path / "t" / "metadata" / "v1.metadata.json")
    r = _cli("create", tmp_path / "u", "--schema", "a:int64,A:int64")
    assert r.returncode == 0, r.stderr


def test_cli_empty_filter_and_deep(tmp_path):
    root = tmp_path / "t"
    assert _cli("create", root, "--schema", "a:int64").returncode == 0
    hdb.Table(root).write(pa.table({"a": pa.array([1, 2, 3], pa.int64())}))
    r = _cli("scan", root, "--filter", "  ", "--csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[1:] == ["1", "2", "3"]
    r = _cli("scan", root, "--filter", "(" * 10000 + "a = 1" + ")" * 10000)
    assert r.returncode != 0 and "nested too deeply (limit 256)" in r.stderr, r.stderr
    r = _cli("explain", root, "--filter", "")
    assert r.returncode == 0, r.stderr
