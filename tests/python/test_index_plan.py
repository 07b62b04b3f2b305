"""Scalar indexes in table scans: results never change, against DuckDB.

The C driver `test_index_plan` (HS_IDX_CREATE) builds a table from seeded
random Parquet files (the generator of test_scan.py: int, float with NaN,
string, date, timestamp, boolean, decimal columns with NULLs) and, with
HS_IDX_BUILD, builds inverted indexes on columns after the first
HS_IDX_BUILD_AFTER appends: later files stay unindexed (a partly indexed
table). The same files also make an unindexed table. Random filters (every
operator, nested AND/OR/NOT, NULL tests, absent values, prefixes) must give
the same ids on both tables and in DuckDB over the same Parquet files, and
the index must actually answer some files. pyiceberg must still read the
indexed table (the registry is an unknown property and extra files).
"""

import glob
import importlib.util
import os
import random
import subprocess

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("duckdb")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
N_FILTERS = int(os.environ.get("HS_IDX_FILTERS", "250"))

_spec = importlib.util.spec_from_file_location("_scan_gen", os.path.join(HERE, "test_scan.py"))
_gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_gen)

ALL_COLS = "id,a,b,s,d,ts,flag,dec,f"


def _exe():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "test_index_plan")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (set HS_BUILD_DIR)")
    return path


def _create(root, paths, build=None, after=None, rg_rows=300):
    env = {**os.environ, "HS_IDX_CREATE": str(root), "HS_IDX_RG_ROWS": str(rg_rows)}
    if build:
        env["HS_IDX_BUILD"] = build
    if after is not None:
        env["HS_IDX_BUILD_AFTER"] = str(after)
    r = subprocess.run([_exe(), *paths], capture_output=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr.decode()


def _query(root, filters):
    env = {**os.environ, "HS_IDX_DRIVER": str(root)}
    r = subprocess.run([_exe()], input="\n".join(filters) + "\n", capture_output=True,
                       env=env, timeout=300, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == len(filters), r.stdout[-2000:]
    out = []
    for line in lines:
        kind, _, rest = line.partition(" ")
        if kind == "err":
            out.append(("err", rest, None))
        else:
            f = [int(x) for x in rest.split()]
            out.append(("ok", f[0], sorted(f[1:])))
    return out


def _inputs(tmp_path, seed, n_files, rows):
    rng = random.Random(seed)
    tables, paths, first = [], [], 0
    for k in range(n_files):
        t = _gen._file(rng, k, rows, first)
        # a float32 copy of b: literals are compared as doubles with the
        # float values, which the index must do exactly as the scan does
        t = t.append_column("f", t.column("b").cast(pa.float32()))
        first += rows
        p = tmp_path / f"in{k}.parquet"
        pq.write_table(t, p)
        tables.append(t)
        paths.append(str(p))
    return rng, tables, paths


@pytest.mark.parametrize("seed,after", [(21, 2), (22, 4)])
def test_indexed_equals_unindexed_equals_duckdb(tmp_path, seed, after):
    rng, tables, paths = _inputs(tmp_path, seed, n_files=4, rows=1000)
    plain, indexed = tmp_path / "plain", tmp_path / "indexed"
    _create(plain, paths)
    _create(indexed, paths, build=ALL_COLS, after=after)
    filters = [_gen._filter(rng, tables) for _ in range(N_FILTERS)]
    # fixed edge cases: fractions against integers and decimals (the bound
    # literal sits between two values), NaN, infinities, empty strings,
    # absent values, wildcard-free and non-prefix LIKE, constant filters
    filters += ["id = 17", "s LIKE 'ap%'", "b > 1e300", "NOT (a IS NULL)", "flag <> true",
                "s = ''", "id IN (3, 999999)", "NOT (s LIKE 'ki%')", "a BETWEEN 10 AND 5",
                "a < 1000.5", "a <= 1000.5", "a > 1000.5", "a >= 1000.5", "a = 1000.5",
                "a <> 1000.5", "NOT (a >= 1200.5)", "id > -0.5", "id < 99999999999999999999",
                "dec >= 1.005", "dec < -10.001", "dec = 0.001", "b = 'NaN'", "b >= 'NaN'",
                "b < 'NaN'", "NOT (b > 5)", "b > '-Infinity'", "s LIKE ''", "s LIKE 'kiwi'",
                "s LIKE '%i%'", "s NOT LIKE 'a%'", "s >= 'zz'", "s < ''", "true", "false",
                "NOT (id IS NOT NULL)", "d = DATE '2021-02-03'", "ts < TIMESTAMP '2021-02-01'",
                "(a > 1000 OR s IS NULL) AND NOT (flag = false OR b IS NULL)",
                "NOT (NOT (a = 1001) AND NOT (s = 'kiwi'))", "a NOT IN (1001, 1002, 1003)"]
    # float32 filters: only indexed == unindexed (DuckDB casts literals to
    # FLOAT, we compare as doubles)
    vals = [v for v in tables[0].column("b").to_pylist() if v is not None and v == v]
    own = []
    for v in rng.sample(vals, 8) + [0.1, 10.3, 1e40]:
        own += [f"f {op} {v!r}" for op in ("=", "<>", "<", "<=", ">", ">=")]
    own += ["f = 'NaN'", "f > 'Infinity'", "NOT (f < 3)", "f IS NULL"]
    got_own = zip(own, _query(plain, own), _query(indexed, own))
    for flt, p, i in got_own:
        assert p[0] == "ok" and i[0] == "ok", (flt, p[1], i[1])
        assert i[2] == p[2], f"indexed {flt!r}: {len(i[2])} rows, unindexed {len(p[2])}"
    got_plain, got_idx = _query(plain, filters), _query(indexed, filters)
    duck = _gen._Duck(sorted(glob.glob(str(plain / "data" / "*.parquet"))))
    answered = 0
    for flt, p, i in zip(filters, got_plain, got_idx):
        assert p[0] == "ok" and i[0] == "ok", (flt, p[1], i[1])
        want = duck.ids(flt)
        assert p[2] == want, f"unindexed {flt!r}"
        assert i[2] == want, f"indexed {flt!r}: ours {len(i[2])} rows, DuckDB {len(want)}"
        assert p[1] == 0 and i[1] <= after
        answered += i[1]
    assert answered > 0


def test_pyiceberg_reads_indexed_table(tmp_path):
    static = pytest.importorskip("pyiceberg.table").StaticTable
    _, tables, paths = _inputs(tmp_path, 5, n_files=2, rows=300)
    root = tmp_path / "t"
    _create(root, paths, build="id,s,a")
    metas = sorted((root / "metadata").glob("v*.metadata.json"),
                   key=lambda p: int(p.name[1:].split(".")[0]))
    assert glob.glob(str(root / "metadata" / "index-registry-*.json"))
    assert glob.glob(str(root / "index" / "*.puffin"))
    ice = static.from_metadata(str(metas[-1]))
    assert "hyperstream.index-registry" in ice.metadata.properties
    got = ice.scan().to_arrow().sort_by("id")
    assert got.column("id").to_pylist() == list(range(600))
