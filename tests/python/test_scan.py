"""Filtered, projected table scans (hs_table_scan_query) against DuckDB.

Seeded random tables: pyarrow writes several Parquet files whose value
ranges differ (so file bounds and row-group statistics can prune), the C
driver `test_scan` (HS_SCAN_CREATE) appends each as one snapshot of a new
table with small row groups. Then hundreds of random filters go through the
query driver (HS_SCAN_DRIVER: one filter per stdin line, the matching ids
back); DuckDB evaluates the same filter over the table's data files with
read_parquet([...]). The id sets must be equal: this also proves that
pruning never drops a file or row group holding a matching row. Selective
filters must actually prune files and row groups.
"""

import datetime
import decimal
import glob
import os
import random
import subprocess

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
duckdb = pytest.importorskip("duckdb")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N_FILTERS = int(os.environ.get("HS_SCAN_FILTERS", "300"))


def _exe():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "test_scan")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (set HS_BUILD_DIR)")
    return path


WORDS = ["apple", "apricot", "banana", "blueberry", "cherry", "date", "elder",
         "fig", "grape", "grapefruit_with_a_very_long_name", "grapefruit_with_a_very_long_name_too",
         "kiwi", "lemon", "lime", "mango", "zucchini_zzzzzzzzzzzzzzzzz", ""]
EPOCH = datetime.date(1970, 1, 1)


def _file(rng, k, n, first_id):
    """One data file: file k's values live in ranges shifted by k."""
    ids = list(range(first_id, first_id + n))
    rng.shuffle(ids) if k % 2 else None

    def maybe(v, p=0.1):
        return None if rng.random() < p else v

    a = [maybe(rng.randint(k * 1000, k * 1000 + 1500)) for _ in range(n)]
    b = []
    for _ in range(n):
        r = rng.random()
        b.append(None if r < 0.05 else float("nan") if r < 0.08 else
                 round(rng.uniform(k * 10.0, k * 10.0 + 25.0), 3))
    words = WORDS[(k * 3) % len(WORDS):] + WORDS[:2]
    s = [maybe(rng.choice(words) + (str(rng.randint(0, 99)) if rng.random() < 0.5 else ""))
         for _ in range(n)]
    d = [maybe(datetime.date(2020 + k, 1, 1) + datetime.timedelta(days=rng.randint(0, 400)))
         for _ in range(n)]
    ts = [maybe(datetime.datetime(2021, 1 + k, 1) + datetime.timedelta(
        seconds=rng.randint(0, 86400 * 40), microseconds=rng.randint(0, 999999))) for _ in range(n)]
    flag = [maybe(rng.random() < 0.3 + 0.1 * k) for _ in range(n)]
    dec = [maybe(decimal.Decimal(rng.randint(-5000, 5000 + k * 3000)) / 100) for _ in range(n)]
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "a": pa.array(a, pa.int32()),
        "b": pa.array(b, pa.float64()),
        "s": pa.array(s, pa.string()),
        "d": pa.array(d, pa.date32()),
        "ts": pa.array(ts, pa.timestamp("us")),
        "flag": pa.array(flag, pa.bool_()),
        "dec": pa.array(dec, pa.decimal128(9, 2)),
    })


def _lit(rng, col, tables):
    """A literal for `col`: usually a value present in the data."""
    t = rng.choice(tables)
    vals = [v for v in t.column(col).to_pylist() if v is not None]
    v = rng.choice(vals) if vals else None
    if col in ("id", "a"):
        v = v if v is not None else 0
        return str(v + rng.choice([0, 0, 1, -1, 7]))
    if col == "b":
        if v is None or v != v:
            v = 1.5
        return repr(round(v + rng.choice([0, 0, 0.001, -2.5]), 3))
    if col == "s":
        v = v if v is not None else "kiwi"
        if rng.random() < 0.3:
            v = v[:rng.randint(0, len(v))]
        return "'" + v.replace("'", "''") + "'"
    if col == "d":
        v = v or EPOCH
        return f"DATE '{(v + datetime.timedelta(days=rng.choice([0, 0, 1, -3]))).isoformat()}'"
    if col == "ts":
        v = v or datetime.datetime(2021, 3, 1)
        return f"TIMESTAMP '{v.isoformat(sep=' ')}'"
    if col == "flag":
        return rng.choice(["true", "false"])
    if col == "dec":
        v = v if v is not None else decimal.Decimal("1.00")
        return str(v)
    raise AssertionError(col)


COLS = ["id", "a", "b", "s", "d", "ts", "flag", "dec"]


def _pred(rng, tables):
    col = rng.choice(COLS)
    r = rng.random()
    if r < 0.08:
        return f"{col} IS {'NOT ' if rng.random() < 0.5 else ''}NULL"
    if col == "flag":
        return f"flag = {_lit(rng, col, tables)}"
    if col == "s" and r < 0.25:
        prefix = _lit(rng, "s", tables)[1:-1][:3].replace("%", "").replace("_", "")
        return f"s {'NOT ' if rng.random() < 0.2 else ''}LIKE '{prefix}%'"
    if r < 0.35:
        lo, hi = sorted([_lit(rng, col, tables), _lit(rng, col, tables)],
                        key=lambda x: x)
        return f"{col} BETWEEN {lo} AND {hi}"
    if r < 0.45:
        items = ", ".join(_lit(rng, col, tables) for _ in range(rng.randint(1, 4)))
        return f"{col} {'NOT ' if rng.random() < 0.3 else ''}IN ({items})"
    op = rng.choice(["=", "<>", "<", "<=", ">", ">="])
    return f"{col} {op} {_lit(rng, col, tables)}"


def _filter(rng, tables, depth=0):
    r = rng.random()
    if depth >= 2 or r < 0.45:
        return _pred(rng, tables)
    if r < 0.75:
        return f"({_filter(rng, tables, depth + 1)}) AND ({_filter(rng, tables, depth + 1)})"
    if r < 0.92:
        return f"({_filter(rng, tables, depth + 1)}) OR ({_filter(rng, tables, depth + 1)})"
    return f"NOT ({_filter(rng, tables, depth + 1)})"


def _make_table(tmp_path, seed, n_files=5, rows=1200, rg_rows=200, page_bytes=None):
    rng = random.Random(seed)
    tables, paths, first = [], [], 0
    for k in range(n_files):
        t = _file(rng, k, rows, first)
        first += rows
        p = tmp_path / f"in{k}.parquet"
        pq.write_table(t, p)
        tables.append(t)
        paths.append(str(p))
    root = tmp_path / "table"
    env = {**os.environ, "HS_SCAN_CREATE": str(root), "HS_SCAN_RG_ROWS": str(rg_rows)}
    if page_bytes is not None:
        env["HS_SCAN_PAGE_BYTES"] = str(page_bytes)
    r = subprocess.run([_exe(), *paths], capture_output=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    files = sorted(glob.glob(str(root / "data" / "*.parquet")))
    assert len(files) == n_files
    return rng, tables, root, files


def _query(root, filters, columns="id"):
    env = {**os.environ, "HS_SCAN_DRIVER": str(root), "HS_SCAN_COLUMNS": columns}
    r = subprocess.run([_exe()], input="\n".join(filters) + "\n", capture_output=True,
                       env=env, timeout=300, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == len(filters), r.stdout[-2000:]
    out = []
    for line in lines:
        kind, _, rest = line.partition(" ")
        if kind == "err":
            out.append(("err", rest))
        else:
            f = [int(x) for x in rest.split()]
            out.append(("ok", {"files_planned": f[0], "files_pruned": f[1], "rg_read": f[2],
                               "rg_pruned": f[3], "pages": f[4], "pages_pruned": f[5],
                               "rows_pruned": f[6]}, sorted(f[7:])))
    return out


class _Duck:
    """DuckDB over the table's data files, materialized first: DuckDB's
    Parquet filter pushdown trusts min/max statistics that leave NaN out and
    would drop NaN rows that `b > x` selects (NaN sorts above every number
    in DuckDB and PostgreSQL alike)."""

    def __init__(self, files):
        self.con = duckdb.connect()
        lst = ", ".join("'" + f + "'" for f in files)
        self.con.execute(f"CREATE TABLE t AS SELECT * FROM read_parquet([{lst}])")

    def ids(self, flt):
        return sorted(r[0] for r in self.con.execute(f"SELECT id FROM t WHERE {flt}").fetchall())


@pytest.mark.parametrize("seed", [1, 2])
def test_random_filters_match_duckdb(tmp_path, seed):
    rng, tables, root, files = _make_table(tmp_path, seed)
    filters = [_filter(rng, tables) for _ in range(N_FILTERS)]
    results = _query(root, filters)
    duck = _Duck(files)
    pruned_files = pruned_rgs = 0
    for flt, res in zip(filters, results):
        assert res[0] == "ok", f"{flt}: {res[1]}"
        want = duck.ids(flt)
        assert res[2] == want, f"filter {flt!r}: ours {len(res[2])} rows, DuckDB {len(want)}"
        pruned_files += res[1]["files_pruned"]
        pruned_rgs += res[1]["rg_pruned"]
    assert pruned_files > 0 and pruned_rgs > 0


def test_selective_filters_prune(tmp_path):
    _, tables, root, files = _make_table(tmp_path, 7, n_files=4, rows=1000, rg_rows=100)
    # file k holds ids k*1000 .. k*1000+999; odd files are shuffled, even ones
    # sorted, so a narrow id range prunes 3 files, and in sorted files 9 of
    # 10 row groups.
    filters = ["id BETWEEN 2100 AND 2150", "id = 17", "id IN (5, 2999)",
               "a > 3600", "d >= DATE '2023-01-01'", "s = 'no such fruit'",
               "id > 100000 OR a < -5"]
    res = _query(root, filters)
    duck = _Duck(files)
    for flt, r in zip(filters, res):
        assert r[0] == "ok", r
        assert r[2] == duck.ids(flt), flt
    st = [r[1] for r in res]
    assert st[0]["files_pruned"] == 3 and st[0]["rg_pruned"] == 9 and st[0]["rg_read"] == 1
    assert st[1]["files_pruned"] == 3 and st[1]["rg_pruned"] == 9
    assert st[2]["files_pruned"] == 2
    assert st[3]["files_pruned"] >= 2  # a < 1000k + 1501 in file k
    assert st[4]["files_pruned"] >= 2
    assert st[6]["files_pruned"] == 4 and st[6]["rg_read"] == 0


def test_projection_and_errors(tmp_path):
    _, tables, root, files = _make_table(tmp_path, 3, n_files=2, rows=300, rg_rows=100)
    res = _query(root, ["s LIKE 'a%' AND b > 3", "agee > 3", "id >", "id = 'x'"],
                 columns="id,s")
    assert res[0][0] == "ok" and res[0][2] == _Duck(files).ids("s LIKE 'a%' AND b > 3")
    assert res[1][0] == "err" and "position 1" in res[1][1] and "agee" in res[1][1]
    assert res[2][0] == "err" and "position" in res[2][1]
    assert res[3][0] == "err"


@pytest.mark.parametrize("seed", [11, 12])
def test_small_pages_match_duckdb(tmp_path, seed):
    """Row groups of 600 rows cut into pages of 256 bytes (32 int64 values):
    page indexes prune inside row groups that statistics keep. Random
    filters must still select exactly DuckDB's rows, and pages must get
    pruned."""
    rng, tables, root, files = _make_table(tmp_path, seed, n_files=4, rows=1200, rg_rows=600,
                                           page_bytes=256)
    filters = [_filter(rng, tables) for _ in range(max(N_FILTERS // 2, 20))]
    results = _query(root, filters)
    duck = _Duck(files)
    pages_pruned = 0
    for flt, res in zip(filters, results):
        assert res[0] == "ok", f"{flt}: {res[1]}"
        want = duck.ids(flt)
        assert res[2] == want, f"filter {flt!r}: ours {len(res[2])} rows, DuckDB {len(want)}"
        assert 0 <= res[1]["pages_pruned"] <= res[1]["pages"]
        pages_pruned += res[1]["pages_pruned"]
    assert pages_pruned > 0


def test_selective_filters_prune_pages(tmp_path):
    # even files hold sorted ids k*1000 .. k*1000+999 in two row groups of
    # 500 rows, pages of 32 ids: a narrow id range reads a page or two
    _, tables, root, files = _make_table(tmp_path, 5, n_files=3, rows=1000, rg_rows=500,
                                         page_bytes=256)
    filters = ["id BETWEEN 2100 AND 2110", "id = 17 OR id = 2990", "id < 40 AND a > 0",
               "id >= 2400 AND id < 2450 AND s IS NOT NULL"]
    res = _query(root, filters)
    duck = _Duck(files)
    for flt, r in zip(filters, res):
        assert r[0] == "ok", r
        assert r[2] == duck.ids(flt), flt
        assert r[1]["pages_pruned"] > 0 and r[1]["rows_pruned"] >= 400, (flt, r[1])
    # and the same filters without small pages prune no page
    (tmp_path / "big").mkdir()
    _, _, root2, files2 = _make_table(tmp_path / "big", 5, n_files=3, rows=1000, rg_rows=500)
    for flt, r in zip(filters, _query(root2, filters)):
        assert r[0] == "ok" and r[2] == duck.ids(flt)
        assert r[1]["pages_pruned"] == 0
