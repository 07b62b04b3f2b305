"""The `hyperstream` command-line tool, run as a subprocess.

The CLI is found through $HS_CLI, then `hyperstream` on PATH (installed by
`pip install .`), then build/release/hyperstream. Not finding it is a test
error, never a skip, so an unbuilt CLI cannot pass vacuously.

Checks: help/version/usage errors (exit 2); `inspect` text and `--json`
against pyarrow's view of the same file (rows, row groups, column names,
codecs); `read` table output, `--columns`, `--limit`, `--count`; `demo` with
a small --rows; bad and missing files fail with exit 1 and a message naming
the file.
"""

import json
import os
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conftest  # noqa: E402


def _find_cli():
    candidates = [os.environ.get("HS_CLI"), shutil.which("hyperstream"),
                  os.path.join(conftest.REPO_ROOT, "build", "release", "hyperstream")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


@pytest.fixture(scope="module")
def cli():
    path = _find_cli()
    if path is None:
        raise RuntimeError("hyperstream CLI not found: set HS_CLI, install the package, or run "
                           "`bash scripts/build.sh release`")
    return path


def run(cli, *args, timeout=120):
    p = subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout,
                       errors="replace")
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    path = str(d / "sample.parquet")
    table = pa.table({
        "id": pa.array(range(1000), pa.int64()),
        "name": pa.array([None if i % 10 == 0 else f"user-{i}" for i in range(1000)]),
        "score": pa.array([i / 4 for i in range(1000)], pa.float64()),
        "ok": pa.array([i % 2 == 0 for i in range(1000)]),
        "day": pa.array(list(range(1000)), pa.date32()),
        "tags": pa.array([[f"t{j}" for j in range(i % 7)] for i in range(1000)]),
    })
    pq.write_table(table, path, row_group_size=300, compression={"id": "zstd", "name": "snappy",
                                                                 "score": "gzip", "ok": "none",
                                                                 "day": "zstd", "tags": "zstd"})
    return path, table


# ------------------------------------------------------------ basics


def test_help_and_version(cli):
    rc, out, _ = run(cli, "--help")
    assert rc == 0
    for word in ("inspect", "read", "demo", "--json", "--count"):
        assert word in out
    rc, out, _ = run(cli, "--version")
    assert rc == 0 and out.strip() == "hyperstream 0.1.0"


@pytest.mark.parametrize("args,needle", [
    ((), "Usage"),
    (("frobnicate",), "unknown command"),
    (("--bogus",), "unknown option"),
    (("read",), "missing FILE"),
    (("read", "a.parquet", "--limit"), "--limit"),
    (("read", "a.parquet", "--limit", "x"), "--limit"),
    (("read", "a.parquet", "--wat"), "unknown option"),
    (("inspect",), "missing FILE"),
    (("inspect", "a", "b"), "expected one file"),
    (("demo", "--rows", "0"), "--rows"),
    (("demo", "--dim"), "--dim"),
])
def test_usage_errors_exit_2(cli, args, needle):
    rc, out, err = run(cli, *args)
    assert rc == 2, (rc, out, err)
    assert needle in err


# ------------------------------------------------------------ inspect


def test_inspect_text(cli, sample):
    path, table = sample
    rc, out, err = run(cli, "inspect", path)
    assert rc == 0, err
    for name in table.column_names:
        assert name in out
    assert "1000" in out.replace(",", "")


def _walk(node, key_pred):
    """Every value whose key satisfies key_pred, anywhere in a JSON document."""
    if isinstance(node, dict):
        for k, v in node.items():
            if key_pred(k):
                yield v
            yield from _walk(v, key_pred)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v, key_pred)


def _strings(values):
    out = set()
    for v in values:
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, list):
            out.add(".".join(str(x) for x in v))
    return out


def test_inspect_json_matches_pyarrow(cli, sample):
    path, table = sample
    rc, out, err = run(cli, "inspect", path, "--json")
    assert rc == 0, err
    doc = json.loads(out)
    md = pq.read_metadata(path)
    assert isinstance(doc, dict)
    assert doc.get("num_rows") == md.num_rows
    groups = doc.get("row_groups")
    assert isinstance(groups, list) and len(groups) == md.num_row_groups
    names = _strings(_walk(doc, lambda k: k in ("name", "path", "path_in_schema", "column")))
    for col in table.column_names:
        assert any(n == col or n.split(".")[0] == col for n in names), col
    want_codecs = {md.row_group(0).column(i).compression.upper() for i in range(md.num_columns)}
    got_codecs = {str(c).upper() for c in
                  _walk(doc, lambda k: "codec" in k.lower() or "compression" in k.lower())
                  if isinstance(c, str)}
    # pyarrow says LZ4 for LZ4_RAW; the others share Parquet's names.
    assert want_codecs <= got_codecs, (want_codecs, got_codecs)


# ------------------------------------------------------------ read


def test_read_table_output(cli, sample):
    path, table = sample
    rc, out, err = run(cli, "read", path, "--limit", "5")
    assert rc == 0, err
    lines = out.splitlines()
    assert all(n in lines[0] for n in table.column_names)
    assert "user-1" in out and "null" in out  # row 0 has a null name
    assert "1970-01-02" in out  # date32 day 1
    assert "[t0, t1" in out  # lists abbreviated in brackets
    assert "true" in out and "false" in out
    assert "showing 5 of 1,000 rows" in out


def test_read_columns_and_count(cli, sample):
    path, table = sample
    rc, out, err = run(cli, "read", path, "--columns", "score,id", "--limit", "3")
    assert rc == 0, err
    header = out.splitlines()[0].split("|")
    assert [h.strip() for h in header] == ["score", "id"]
    rc, out, err = run(cli, "read", path, "--count")
    assert rc == 0, err
    assert out.strip() == "1000"
    rc, out, err = run(cli, "read", path, "--count", "--columns", "tags")
    assert rc == 0 and out.strip() == "1000", err


def test_read_missing_column(cli, sample):
    path, _ = sample
    rc, _, err = run(cli, "read", path, "--columns", "nope")
    assert rc == 1
    assert "nope" in err


@pytest.mark.parametrize("content", [b"", b"PAR1garbagePAR1", b"hello world" * 100])
def test_bad_file_fails_cleanly(cli, tmp_path, content):
    p = str(tmp_path / "bad.parquet")
    with open(p, "wb") as f:
        f.write(content)
    for args in (("read", p, "--count"), ("inspect", p), ("read", p)):
        rc, out, err = run(cli, *args)
        assert rc == 1, (args, rc, out, err)
        assert "bad.parquet" in err and err.startswith("hyperstream: error:")


def test_missing_file(cli, tmp_path):
    p = str(tmp_path / "missing.parquet")
    rc, _, err = run(cli, "read", p)
    assert rc == 1 and "missing.parquet" in err
    rc, _, err = run(cli, "inspect", p, "--json")
    assert rc == 1 and "missing.parquet" in err


def test_read_counts_match_pyarrow_on_corpus_sample(cli):
    """A few conformance files decoded end to end (the full corpus, under
    ASan, is test_conformance.py's job)."""
    root = conftest.conformance_dir()
    if root is None:
        pytest.skip("conformance corpus not present")
    names = ["alltypes_plain.parquet", "alltypes_dictionary.parquet", "nested_lists.snappy.parquet",
             "datapage_v2.snappy.parquet", "nullable.impala.parquet"]
    checked = 0
    for n in names:
        p = os.path.join(root, "data", n)
        if not os.path.exists(p):
            continue
        rc, out, err = run(cli, "read", p, "--count")
        assert rc == 0, (n, err)
        assert int(out) == pq.read_metadata(p).num_rows, n
        rc, out, err = run(cli, "read", p, "--limit", "3")
        assert rc == 0, (n, err)
        checked += 1
    assert checked > 0


# ------------------------------------------------------------ demo


def test_demo_small(cli, tmp_path):
    d = str(tmp_path / "demo")
    rc, out, err = run(cli, "demo", "--rows", "3000", "--dim", "16", "--dir", d, timeout=300)
    assert rc == 0, (out, err)
    for word in ("rows", "file size", "row groups", "MB/s", "ms", "filtered scan"):
        assert word in out, word
    assert "read 1 of 10 row groups" in out
    assert "300 rows match" in out
    f = os.path.join(d, "demo.parquet")
    t = pq.read_table(f)
    assert t.num_rows == 3000
    assert t.column_names == ["id", "category", "price", "ts", "flag", "embedding"]
    assert len(t.column("embedding")[0]) == 16
    assert pq.read_metadata(f).num_row_groups == 10
    # the table tour: its own checks passed (rc 0), and an outside reader agrees
    assert "Table tour: 3,000 rows" in out and "the bitmap index answered 4 of 4 files" in out
    assert "first id 1500 at distance 0" in out and "all 'sports': yes" in out
    assert "holds 750 rows (expected 750)" in out
    science = pc.and_(pc.equal(t.column("category"), "science"), pc.less(t.column("price"), 100))
    want = pc.sum(pc.fill_null(science, False).cast("int64")).as_py()
    assert f"category = 'science' AND price < 100: {want:,} rows (expected {want:,})" in out
    meta = next(line.split()[-1] for line in out.splitlines() if line.strip().startswith("Iceberg"))
    static = pytest.importorskip("pyiceberg.table").StaticTable
    ice = static.from_metadata(meta).scan().to_arrow()
    assert sorted(ice.column("id").to_pylist()) == list(range(3000))
    assert len(os.listdir(os.path.join(d, "table", "index"))) == 8


def test_demo_table_rows_zero_skips_the_tour(cli, tmp_path):
    rc, out, err = run(cli, "demo", "--rows", "500", "--dim", "4", "--table-rows", "0",
                       "--dir", str(tmp_path / "d"), timeout=120)
    assert rc == 0, (out, err)
    assert "Table tour" not in out and not os.path.exists(tmp_path / "d" / "table")


def test_demo_temp_dir_is_cleaned(cli):
    rc, out, err = run(cli, "demo", "--rows", "100", "--dim", "2", timeout=120)
    assert rc == 0, (out, err)
    path = next(line.split()[-1] for line in out.splitlines() if line.strip().startswith("file"))
    assert not os.path.exists(path)
