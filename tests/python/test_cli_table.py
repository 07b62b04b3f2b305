"""The table subcommands of the `hyperstream` CLI, checked with pyiceberg,
pyarrow and DuckDB: create (--schema / --like), write (Parquet and typed
CSV), scan (--filter, --columns, --limit, --snapshot, --csv), snapshots and
inspect (a table folder, and still a Parquet file). The executable comes
from HS_BUILD_DIR (default build/release). About 3 s.
"""

import csv
import io
import os
import random
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _exe():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "hyperstream")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (set HS_BUILD_DIR)")
    return path


def run(*args, ok=True):
    r = subprocess.run([_exe(), *map(str, args)], capture_output=True, text=True, timeout=60)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def scan_csv(table, *args):
    out = run("scan", table, "--csv", "--limit", "0", *args).stdout
    return list(csv.DictReader(io.StringIO(out)))


def test_create_write_csv_scan(tmp_path):
    t = tmp_path / "t"
    run("create", t, "--schema", "id:int64,name:string,x:double,d:date,ts:timestamp,ok:bool")
    rng = random.Random(3)
    rows = []
    for i in range(500):
        rows.append({"id": i, "name": rng.choice(["", "a,b", 'q"t', f"n{i}", None]),
                     "x": rng.choice([None, round(rng.uniform(-100, 100), 3)]),
                     "d": f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
                     "ts": "2024-03-04 05:06:07.250000", "ok": rng.choice(["true", "false", ""])})
    path = tmp_path / "a.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ok", "ts", "d", "x", "name", "id"])  # any column order
        for r in rows:
            w.writerow([r["ok"], r["ts"], r["d"], "" if r["x"] is None else r["x"],
                        "" if r["name"] is None else r["name"], r["id"]])
    out = run("write", t, path).stdout
    assert "appended 500 rows" in out
    got = scan_csv(t)
    assert len(got) == 500
    static = pytest.importorskip("pyiceberg.table").StaticTable
    meta = sorted((t / "metadata").glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))[-1]
    ice = static.from_metadata(str(meta)).scan().to_arrow().sort_by("id")
    assert ice.column("id").to_pylist() == list(range(500))
    assert ice.column("x").to_pylist() == [r["x"] for r in rows]
    assert [str(v) for v in ice.column("d").to_pylist()] == [r["d"] for r in rows]
    assert ice.column("ok").to_pylist() == [{"true": True, "false": False, "": None}[r["ok"]] for r in rows]


def test_filter_columns_limit_snapshot_vs_duckdb(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    t = tmp_path / "t"
    src = tmp_path / "s.parquet"
    data = pa.table({"id": pa.array(range(1000), pa.int64()),
                     "g": pa.array([f"g{i % 7}" for i in range(1000)])})
    pq.write_table(data, src)
    run("create", t, "--like", src, "--format-version", "3")
    run("write", t, src)
    first = run("snapshots", t).stdout
    second_src = tmp_path / "s2.parquet"
    pq.write_table(pa.table({"id": pa.array(range(1000, 1100), pa.int64()),
                             "g": pa.array(["g9"] * 100)}), second_src)
    run("write", t, second_src)
    snaps = [line[2:].split()[0] for line in run("snapshots", t).stdout.splitlines()[1:]]
    assert len(snaps) == 2 and snaps[0] in first
    for flt in ["id < 10 OR g = 'g3'", "g IN ('g1', 'g9') AND NOT id > 500", "id BETWEEN 990 AND 1010"]:
        got = sorted(int(r["id"]) for r in scan_csv(t, "--filter", flt, "--columns", "id"))
        files = [str(src), str(second_src)]
        want = sorted(x[0] for x in duckdb.connect().sql(
            f"SELECT id FROM read_parquet({files!r}) WHERE {flt}").fetchall())
        assert got == want, flt
    old = scan_csv(t, "--snapshot", snaps[0])
    assert len(old) == 1000
    assert len(scan_csv(t, "--limit", "7")) == 7
    bad = run("scan", t, "--filter", "id >>> 1", ok=False)
    assert bad.returncode == 1 and "position" in bad.stderr


def test_inspect_table_and_parquet(tmp_path):
    t = tmp_path / "t"
    run("create", t, "--schema", "id:int64!,name:string")
    out = run("inspect", t).stdout
    for word in ["Iceberg v2", "id", "long not null", "partition spec 0", "sort order 0", "snapshots: 0"]:
        assert word in out, word
    pq.write_table(pa.table({"a": [1, 2]}), tmp_path / "f.parquet")
    assert "a" in run("inspect", tmp_path / "f.parquet").stdout


def test_errors(tmp_path):
    t = tmp_path / "t"
    assert run("create", t, "--schema", "id:nosuchtype", ok=False).returncode == 2
    assert run("create", t, ok=False).returncode == 2
    run("create", t, "--schema", "id:int64,name:string")
    assert run("create", t, "--schema", "id:int64", ok=False).returncode == 1  # exists
    bad = tmp_path / "bad.csv"
    bad.write_text("id,name\n1,a\nnot-a-number,b\n")
    r = run("write", t, bad, ok=False)
    assert r.returncode == 1 and "bad.csv:3" in r.stderr and "id" in r.stderr
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("id,nme\n1,a\n")
    assert "nme" in run("write", t, wrong, ok=False).stderr
    mismatch = tmp_path / "m.parquet"
    pq.write_table(pa.table({"id": pa.array([1], pa.int32()), "name": ["a"]}), mismatch)
    assert run("write", t, mismatch, ok=False).returncode == 1
    assert "snapshots: 0" in run("inspect", t).stdout  # nothing was committed
    assert run("scan", tmp_path / "none", ok=False).returncode == 1
