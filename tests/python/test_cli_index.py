"""`hyperstream index add|drop|list|build` and `hyperstream explain`: round
trips through the table metadata (what the CLI configures the Python API
sees, and the other way round), coverage counts after appends and builds,
explain counters against DuckDB counts over the same Parquet files, --json
everywhere, and clear errors with exit codes 1 (failure) and 2 (usage).
The executable comes from HS_BUILD_DIR (default build/release). About 3 s.
"""

import glob
import json
import os
import random
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

duckdb = pytest.importorskip("duckdb")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _exe():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "hyperstream")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (set HS_BUILD_DIR)")
    return path


def run(*args, rc=0):
    r = subprocess.run([_exe(), *map(str, args)], capture_output=True, text=True, timeout=60)
    assert r.returncode == rc, (args, r.stdout, r.stderr)
    return r


def _table(tmp_path, n_files=3, rows=2000, seed=1):
    t = tmp_path / "t"
    run("create", t, "--schema", "id:int64,cat:string,x:double,k:int")
    rng = random.Random(seed)
    for f in range(n_files):
        path = tmp_path / f"in{f}.parquet"
        pq.write_table(pa.table({
            "id": pa.array(range(f * rows, (f + 1) * rows), pa.int64()),
            "cat": pa.array([rng.choice(["a", "b", "c", None]) for _ in range(rows)]),
            "x": pa.array([rng.uniform(0, 100) for _ in range(rows)]),
            "k": pa.array([rng.randrange(50) for _ in range(rows)], pa.int32()),
        }), path)
        run("write", t, path)
    return t


def _list(t):
    return json.loads(run("index", "list", t, "--json").stdout)


def _duck_count(t, flt):
    files = sorted(glob.glob(os.path.join(str(t), "data", "*.parquet")))
    return duckdb.connect().execute(
        f"SELECT count(*) FROM read_parquet({files!r}) WHERE {flt}").fetchone()[0]


def test_add_list_explain_build_drop(tmp_path):
    t = _table(tmp_path)
    assert _list(t) == []
    out = run("index", "add", t, "cat:bitmap", "x", "k", "--kind", "btree", "--param",
              "block_rows=128", "--no-progress").stdout
    assert "index on cat (bitmap)" in out and "3 index files built" in out
    got = {d["column"]: d for d in _list(t)}
    assert {c: (d["kind"], d["params"], d["files_indexed"], d["files_total"])
            for c, d in got.items()} == {
        "cat": ("bitmap", {}, 3, 3), "x": ("btree", {"block_rows": 128}, 3, 3),
        "k": ("btree", {"block_rows": 128}, 3, 3)}
    text = run("index", "list", t).stdout
    assert "cat" in text and "3/3" in text
    for flt in ["cat = 'b'", "x < 10 AND k IN (1, 2, 3)", "cat IS NULL OR k >= 45",
                "NOT (x BETWEEN 20 AND 90)"]:
        ex = json.loads(run("explain", t, "--filter", flt, "--json").stdout)
        assert ex["filter"] == flt
        assert ex["rows_matched"] == _duck_count(t, flt), flt
        assert ex["files_indexed"] == ex["files_read"] == 3, flt
        assert ex["index_rows_candidate"] + ex["index_rows_eliminated"] == 6000
        per_file = ex["files"]
        assert len(per_file) == 3 and all(f["indexed"] for f in per_file), flt
        assert sum(f["rows_matched"] for f in per_file) == ex["rows_matched"], flt
        assert sum(f["index_rows_candidate"] for f in per_file) == ex["index_rows_candidate"]
        for f in per_file:  # each file's own count, from DuckDB over that file alone
            assert f["rows"] == 2000
            got = duckdb.connect().execute(
                f"SELECT count(*) FROM read_parquet('{f['path']}') WHERE {flt}").fetchone()[0]
            assert f["rows_matched"] == got, (flt, f)
    plain = run("explain", t, "--filter", "cat = 'b'").stdout
    assert "3 of 3 files read answered by a scalar index" in plain
    assert "  per file:" in plain
    lines = [ln for ln in plain.splitlines() if ln.startswith("    ") and ".parquet:" in ln]
    assert len(lines) == 3 and all("index on cat:" in ln for ln in lines), plain
    # an append leaves the new file unindexed until a build
    pq.write_table(pq.read_table(tmp_path / "in0.parquet"), tmp_path / "more.parquet")
    run("write", t, tmp_path / "more.parquet")
    assert {d["files_indexed"] for d in _list(t)} == {3}
    ex = json.loads(run("explain", t, "--filter", "cat = 'b'", "--json").stdout)
    assert ex["files_indexed"] == 3 and ex["files_read"] == 4
    assert sorted(f["indexed"] for f in ex["files"]) == [False, True, True, True]
    assert "no index;" in run("explain", t, "--filter", "cat = 'b'").stdout
    assert ex["rows_matched"] == _duck_count(t, "cat = 'b'")
    assert json.loads(run("index", "build", t, "--json").stdout) == {"files_built": 1}
    assert json.loads(run("index", "build", t, "k", "--json").stdout) == {"files_built": 0}
    assert {(d["files_indexed"], d["files_total"]) for d in _list(t)} == {(4, 4)}
    # drop: gone from the list, no longer used
    run("index", "drop", t, "cat", "k")
    assert [d["column"] for d in _list(t)] == ["x"]
    ex = json.loads(run("explain", t, "--filter", "cat = 'b'", "--json").stdout)
    assert ex["files_indexed"] == 0 and ex["rows_matched"] == _duck_count(t, "cat = 'b'")


def test_python_and_cli_share_the_configuration(tmp_path):
    hdb = pytest.importorskip("hyperstreamdb")
    t = _table(tmp_path, n_files=2, rows=500)
    run("index", "add", t, "cat:bitmap", "--no-progress")
    table = hdb.Table(str(t))
    assert [(i.column, i.kind, i.files_indexed) for i in table.indexes()] == [("cat", "bitmap", 2)]
    table.add_index("x", "sorted", block_rows=64, progress=False)
    got = {d["column"]: d for d in _list(t)}
    assert got["x"]["kind"] == "sorted" and got["x"]["params"] == {"block_rows": 64}
    assert got["x"]["files_indexed"] == 2
    explained = table.explain("x < 5").stats
    cli = json.loads(run("explain", t, "--filter", "x < 5", "--json").stdout)
    assert set(cli) <= set(explained)
    assert all(explained[k] == cli[k] for k in cli if k != "filter"), (explained, cli)
    assert len(cli["files"]) == 2


def test_errors(tmp_path):
    t = _table(tmp_path, n_files=1, rows=100)
    r = run("index", "add", t, "nope", rc=1)
    assert "no column 'nope'" in r.stderr and "columns are: id, cat, x, k" in r.stderr
    r = run("index", "add", t, "k:hash", rc=1)
    assert "unknown kind 'hash'" in r.stderr
    r = run("index", "add", t, "k", "--kind", "btree", "--param", "block_rows=3", rc=1)
    assert "block_rows must be" in r.stderr
    assert "has no index" in run("index", "drop", t, "k", rc=1).stderr
    assert "no configured index" in run("index", "build", t, "k", rc=1).stderr
    assert "unknown subcommand 'frob'" in run("index", "frob", t, rc=2).stderr
    assert "missing TABLE" in run("index", "list", rc=2).stderr
    assert "name at least one COLUMN" in run("index", "add", t, rc=2).stderr
    assert "unknown or incomplete option" in run("index", "add", t, "k", "--kind", rc=2).stderr
    r = run("explain", t, "--filter", "nope = 1", rc=1)
    assert "unknown column 'nope'" in r.stderr
    assert "missing TABLE" in run("explain", rc=2).stderr
    r = run("index", "list", tmp_path / "absent", rc=1)
    assert "absent" in r.stderr
    assert _list(t) == []  # nothing was committed by the failures
    assert "index add" in run("index", "--help").stdout
    assert "hyperstream index" in run("--help").stdout


def test_vector_kinds_from_the_cli(tmp_path):
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(3)
    src = tmp_path / "v.parquet"
    vecs = rng.random((400, 8), dtype=np.float32)
    pq.write_table(pa.table({"id": pa.array(range(400), pa.int64()),
                             "vec": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), 8)}),
                   src)
    t = tmp_path / "t"
    run("create", t, "--like", src)
    run("write", t, src)
    r = run("index", "add", t, "vec:hnsw", "id:bitmap", "--no-progress").stdout
    assert "index on vec (hnsw)" in r
    got = {d["column"]: d for d in _list(t)}
    assert got["vec"]["is_vector"] and (got["vec"]["files_indexed"], got["vec"]["files_total"]) \
        == (1, 1)
    run("write", t, src)
    assert json.loads(run("index", "build", t, "--json").stdout) == {"files_built": 2}
    assert {(d["files_indexed"], d["files_total"]) for d in _list(t)} == {(2, 2)}
    r = run("index", "add", t, "vec", "--kind", "ivf_pq", "--param", "bogus=1", rc=1)
    assert "unknown ivf_pq parameter 'bogus'" in r.stderr
    r = run("index", "add", t, "id:hnsw", rc=1)
    assert "needs a vector column" in r.stderr
