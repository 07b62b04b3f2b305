#!/usr/bin/env python3
"""Tables: HyperStreamDB vs pyiceberg vs the original HyperStreamDB, one run.

Data: --rows rows (default 2M) of mixed scalar columns (int64 ``id`` 0..N-1,
string ``category`` of 1000 values ``c0``..``c999``, float64 ``price``
uniform in [0, 1000), ``ts`` timestamp[us], bool ``flag``), generated once with
a fixed seed and cached as Arrow IPC under bench/data/. Each engine:

  append    the table is created and the rows are written as --appends
            (default 10) equal appends, each one committed transaction;
            rows/s = N / total seconds (table creation included).
  full      open the table and read every row and column into Arrow.
  filtered  open the table and read the rows matching a filter into Arrow:
              id_0.1%     id < N*0.001
              category    category = 'c7'            (~0.1%)
              price_10%   price BETWEEN 100 AND 200  (~10%)

Engines:
  ours       hyperstreamdb from this repository (``Table.write``,
             ``Table.to_arrow(filter=...)``); must be importable by python3.
  pyiceberg  pyiceberg with a SQL catalog on SQLite in a temp dir
             (``table.append``, ``table.scan(row_filter=...).to_arrow()``).
  original   the original HyperStreamDB from PyPI (hyperstreamdb==0.9.0), which
             has our import name, so it lives in bench/.venv-original (made by
             bench/original_env.sh) and runs in that venv's interpreter. Its
             writes buffer until ``commit()``, so each append is
             ``write_arrow(chunk); commit()`` (or ``write_pandas`` with
             --original-api pandas; scans then use ``to_pandas``).

Every measurement runs in a fresh subprocess, which reports its own time and
peak RSS (VmHWM, falling back to ru_maxrss); each number is the median of
--runs runs (engines interleaved run by run). Every scan's row count and
sum(id) are checked against pyarrow's answer on the source data: a wrong
answer is reported as WRONG and makes the exit status 1. A failing engine (not
installed, an exception, a timeout) is reported with its error, not skipped
silently. Each engine uses its default threading.

    python3 bench/bench_table.py                          # 2M rows, 10 appends, 3 runs
    python3 bench/bench_table.py --rows 200000 --runs 1   # quick
    python3 bench/bench_table.py --engines ours,pyiceberg
    python3 bench/bench_table.py --codec uncompressed     # like-for-like with the original
    python3 bench/bench_table.py --vectors 200000 --dim 768 --appends 10 --runs 1

--codec NAME sets the Iceberg table property write.parquet.compression-codec
on our table and on pyiceberg's (both honour it; default: each engine's own
default, zstd for both). The original has no such setting: it always writes
UNCOMPRESSED Parquet, so --codec uncompressed is the like-for-like run.

--vectors N switches to the issue's vector case: N rows of (int64 ``id``,
``embedding`` fixed_size_list<float32>[--dim], unit-normal values), appended
in --appends batches, then one full scan checked like the others (row count
and sum(id)); the filtered scalar queries do not apply. An engine whose API
refuses fixed-size lists is reported with its error.

Results go to stdout and to bench/results/table_<timestamp>.md.
"""

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data")
RESULTS = os.path.join(HERE, "results")
ORIGINAL_PY = os.path.join(HERE, ".venv-original", "bin", "python")
ENGINES = ("ours", "pyiceberg", "original")
QUERIES = ("full", "id_0.1%", "category", "price_10%")


def filters(n):
    """Filter of each query, per engine dialect; None is a full scan. Ours and
    the original take SQL; pyiceberg's string parser has no BETWEEN, so it gets
    the equivalent closed range."""
    idmax = max(1, int(n * 0.001))
    sql = {"full": None, "id_0.1%": f"id < {idmax}", "category": "category = 'c7'",
           "price_10%": "price BETWEEN 100 AND 200"}
    ice = dict(sql)
    ice["price_10%"] = "price >= 100.0 AND price <= 200.0"
    return {"ours": sql, "original": sql, "pyiceberg": ice}


# ------------------------------------------------------------ data


def make_vectors(n, dim, path):
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(768)
    schema = pa.schema([("id", pa.int64()), ("embedding", pa.list_(pa.float32(), dim))])
    tmp = path + ".tmp"
    step = 1 << 14
    with pa.OSFile(tmp, "wb") as f, pa.ipc.new_file(f, schema) as w:
        for lo in range(0, n, step):
            m = min(step, n - lo)
            vals = pa.array(rng.standard_normal(m * dim, dtype=np.float32))
            w.write_batch(pa.record_batch(
                [pa.array(np.arange(lo, lo + m, dtype=np.int64)),
                 pa.FixedSizeListArray.from_arrays(vals, dim)], schema=schema))
    os.replace(tmp, path)


def make_data(n, path):
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(20261130)
    cats = np.array([f"c{i}" for i in range(1000)])
    t = pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "category": pa.array(cats[rng.integers(0, 1000, n)]),
        "price": pa.array(rng.random(n) * 1000.0),
        "ts": pa.array(1_700_000_000_000_000 + np.arange(n, dtype=np.int64) * 1000,
                       pa.int64()).view(pa.timestamp("us")),
        "flag": pa.array(rng.random(n) < 0.5),
    })
    tmp = path + ".tmp"
    with pa.OSFile(tmp, "wb") as f, pa.ipc.new_file(f, t.schema) as w:
        w.write_table(t, max_chunksize=1 << 16)
    os.replace(tmp, path)


def load_data(path):
    import pyarrow as pa

    with pa.memory_map(path) as src:
        return pa.ipc.open_file(src).read_all()


def expected(path, n, vectors=False):
    """The right answer for each query: (rows, sum of id), from pyarrow."""
    import pyarrow.compute as pc

    t = load_data(path)
    if vectors:
        return {"full": (t.num_rows, int(pc.sum(t["id"]).as_py() or 0))}
    masks = {"full": None,
             "id_0.1%": pc.less(t["id"], max(1, int(n * 0.001))),
             "category": pc.equal(t["category"], "c7"),
             "price_10%": pc.and_(pc.greater_equal(t["price"], 100.0),
                                  pc.less_equal(t["price"], 200.0))}
    out = {}
    for q, m in masks.items():
        sub = t if m is None else t.filter(m)
        out[q] = (sub.num_rows, int(pc.sum(sub["id"]).as_py() or 0))
    return out


# ------------------------------------------------------------ worker (in the subprocess)


def peak_rss_mb():
    """This process's peak RSS. VmHWM starts afresh at exec; ru_maxrss on
    Linux may carry the parent's peak across exec, so it is the fallback."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def cpu_seconds():
    """User + system CPU seconds of this process, all threads: compared with
    wall seconds it shows how many cores an engine kept busy."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _import_engine(engine):
    """Import the engine's modules before the clock starts (imports of
    pyiceberg and SQLAlchemy alone take about a second)."""
    if engine == "pyiceberg":
        import pyiceberg.expressions.parser  # noqa: F401  (row_filter strings)
        import pyiceberg.io.pyarrow  # noqa: F401  (file IO, Parquet read/write)
        import pyiceberg.table  # noqa: F401
        from pyiceberg.catalog.sql import SqlCatalog

        return SqlCatalog
    import hyperstreamdb

    return hyperstreamdb


def _ice_catalog(root):
    from pyiceberg.catalog.sql import SqlCatalog

    wh = os.path.join(root, "warehouse")
    os.makedirs(wh, exist_ok=True)
    return SqlCatalog("bench", uri=f"sqlite:///{os.path.join(root, 'catalog.db')}",
                      warehouse=f"file://{wh}")


def worker_append(spec):
    engine, root, k = spec["engine"], spec["table"], spec["appends"]
    data = load_data(spec["data"])
    n = data.num_rows
    bounds = [n * i // k for i in range(k + 1)]
    chunks = [data.slice(bounds[i], bounds[i + 1] - bounds[i]) for i in range(k)]
    api = spec.get("original_api", "arrow")
    if engine == "original" and api == "pandas":
        chunks = [c.to_pandas() for c in chunks]  # conversion not timed
    for c in chunks:  # touch the input once so the first append doesn't pay page faults
        if hasattr(c, "nbytes"):
            _ = c.nbytes
    hdb = _import_engine(engine)
    c0 = cpu_seconds()
    t0 = time.perf_counter()
    props = {}
    if spec.get("codec"):
        props["write.parquet.compression-codec"] = spec["codec"]
    if engine == "ours":
        t = hdb.Table(os.path.join(root, "t"), properties=props or None)
        for c in chunks:
            t.write(c)
    elif engine == "pyiceberg":
        cat = _ice_catalog(root)
        cat.create_namespace("bench")
        t = cat.create_table("bench.t", schema=data.schema, properties=props)
        for c in chunks:
            t.append(c)
    else:
        t = hdb.Table(os.path.join(root, "t"))
        for c in chunks:
            if api == "pandas":
                t.write_pandas(c)
            else:
                t.write_arrow(c)
            t.commit()
    secs = time.perf_counter() - t0
    return {"seconds": secs, "cpu_s": cpu_seconds() - c0, "rows": n}


def worker_scan(spec):
    engine, root, flt = spec["engine"], spec["table"], spec["filter"]
    import pyarrow as pa
    import pyarrow.compute as pc

    hdb = _import_engine(engine)
    c0 = cpu_seconds()
    t0 = time.perf_counter()
    if engine == "ours":
        out = hdb.Table(os.path.join(root, "t")).to_arrow(filter=flt)
    elif engine == "pyiceberg":
        t = _ice_catalog(root).load_table("bench.t")
        out = (t.scan() if flt is None else t.scan(row_filter=flt)).to_arrow()
    else:
        t = hdb.Table(os.path.join(root, "t"))
        if spec.get("original_api", "arrow") == "pandas":
            out = t.to_pandas(filter=flt)
        else:
            out = t.to_arrow(filter=flt)
    secs = time.perf_counter() - t0
    cpu = cpu_seconds() - c0
    if not isinstance(out, pa.Table):
        out = pa.Table.from_pandas(out, preserve_index=False)
    return {"seconds": secs, "cpu_s": cpu, "rows": out.num_rows, "columns": out.num_columns,
            "id_sum": int(pc.sum(out["id"]).as_py() or 0)}


def worker(spec_json):
    spec = json.loads(spec_json)
    res = worker_append(spec) if spec["op"] == "append" else worker_scan(spec)
    res["rss_mb"] = peak_rss_mb()
    print("RESULT " + json.dumps(res), flush=True)


# ------------------------------------------------------------ driver


def python_env(python):
    """The environment for an engine's interpreter. The original has our
    import name: a PYTHONPATH that points at a development build of ours
    (to benchmark it without installing) must not reach its venv."""
    env = dict(os.environ)
    if python == ORIGINAL_PY:
        env.pop("PYTHONPATH", None)
    return env


def run_worker(python, spec, timeout):
    """One measurement in a fresh interpreter: its result dict, or
    {"error": ...} saying what failed."""
    cmd = [python, os.path.abspath(__file__), "--worker", json.dumps(spec)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE,
                           env=python_env(python))
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = (p.stderr.strip().splitlines() or ["(no stderr)"])[-1]
    return {"error": f"exit {p.returncode}: {tail}"}


def engine_python(engine):
    return ORIGINAL_PY if engine == "original" else sys.executable


def engine_version(engine):
    code = {"ours": "import hyperstreamdb as h, os, time; from hyperstreamdb import _core as c; "
                    "print(getattr(h, '__version__', '?'), '(_core built', time.strftime("
                    "'%Y-%m-%d %H:%M UTC', time.gmtime(os.path.getmtime(c.__file__))) + ')')",
            "pyiceberg": "import pyiceberg; print(pyiceberg.__version__)",
            "original": "import importlib.metadata as m; print(m.version('hyperstreamdb'))"}
    py = engine_python(engine)
    if not os.path.exists(py):
        return None, f"{py} missing: run `bash bench/original_env.sh`"
    try:
        p = subprocess.run([py, "-c", code[engine]], capture_output=True, text=True, timeout=120,
                           env=python_env(py))
    except subprocess.TimeoutExpired:
        return None, "import timed out"
    if p.returncode != 0:
        return None, "import failed: " + (p.stderr.strip().splitlines() or ["?"])[-1]
    return p.stdout.strip(), None


def git_commit():
    try:
        return subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip() or "?"
    except OSError:
        return "?"


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return (f"{cpu}, {os.cpu_count()} cores, {mem} RAM; {platform.system()} "
            f"{platform.release()}; Python {platform.python_version()}")


def median_of(results):
    ok = [r for r in results if "error" not in r]
    if not ok:
        return {"error": results[-1]["error"] if results else "not run"}
    return {"seconds": statistics.median(r["seconds"] for r in ok),
            "cpu_s": statistics.median(r.get("cpu_s", 0.0) for r in ok),
            "rss_mb": statistics.median(r["rss_mb"] for r in ok),
            "rows": ok[0]["rows"], "id_sum": ok[0].get("id_sum"),
            "columns": ok[0].get("columns"), "n_ok": len(ok),
            "errors": [r["error"] for r in results if "error" in r],
            "all": [r for r in ok]}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--appends", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--original-api", choices=("arrow", "pandas"), default="arrow",
                    help="original engine: write_arrow/to_arrow (default) or "
                         "write_pandas/to_pandas (pandas conversion of the input untimed)")
    ap.add_argument("--codec", default=None,
                    help="write.parquet.compression-codec for ours and pyiceberg "
                         "(uncompressed, snappy, gzip, lz4, zstd, brotli); default: engine default")
    ap.add_argument("--vectors", type=int, default=0,
                    help="vector case: this many rows of (id, embedding[--dim] float32) "
                         "instead of the scalar table; full scan only")
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per measurement")
    ap.add_argument("--keep", action="store_true", help="keep the table folders")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker)
        return 0

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for e in engines:
        if e not in ENGINES:
            ap.error(f"unknown engine {e!r}; choose from {','.join(ENGINES)}")
    if "ours" not in engines:
        ap.error("ratios need the 'ours' engine")
    global QUERIES
    vectors = args.vectors > 0
    n, k = (args.vectors if vectors else args.rows), args.appends
    if n < k or k < 1:
        ap.error("need --rows (or --vectors) >= --appends >= 1")
    if vectors:
        QUERIES = ("full",)

    os.makedirs(DATA, exist_ok=True)
    os.makedirs(RESULTS, exist_ok=True)
    data = os.path.join(DATA, f"vectors_{n}x{args.dim}.arrow" if vectors else f"table_{n}.arrow")
    if not os.path.exists(data):
        print(f"generating {n} rows -> {data}", flush=True)
        if vectors:
            make_vectors(n, args.dim, data)
        else:
            make_data(n, data)
    want = expected(data, n, vectors)

    versions, failures = {}, {}
    for e in engines:
        v, err = engine_version(e)
        versions[e] = v
        if err:
            failures[e] = err
            print(f"{e}: unavailable: {err}", flush=True)
    live = [e for e in engines if e not in failures]
    flt = filters(n)

    scratch = tempfile.mkdtemp(prefix="hs_bench_table_")
    raw = {e: {op: [] for op in ("append",) + QUERIES} for e in live}
    tables = {}
    started = time.time()
    try:
        for run in range(args.runs):
            for e in live:
                root = os.path.join(scratch, f"{e}_{run}")
                os.makedirs(root)
                spec = {"op": "append", "engine": e, "table": root, "data": data,
                        "appends": k, "original_api": args.original_api, "codec": args.codec}
                r = run_worker(engine_python(e), spec, args.timeout)
                raw[e]["append"].append(r)
                print(f"run {run + 1} {e:9s} append {_short(r)}", flush=True)
                if "error" not in r:
                    if e in tables:  # keep one table per engine for the scans
                        shutil.rmtree(tables[e], ignore_errors=True)
                    tables[e] = root
                else:
                    shutil.rmtree(root, ignore_errors=True)
        for run in range(args.runs):
            for q in QUERIES:
                for e in live:
                    if e not in tables:
                        raw[e][q].append({"error": "no table (every append failed)"})
                        continue
                    spec = {"op": "scan", "engine": e, "table": tables[e], "filter": flt[e][q],
                            "original_api": args.original_api}
                    r = run_worker(engine_python(e), spec, args.timeout)
                    raw[e][q].append(r)
                    print(f"run {run + 1} {e:9s} {q:9s} {_short(r)}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"tables kept under {scratch}")
    elapsed = time.time() - started

    res = {e: {op: median_of(rs) for op, rs in ops.items()} for e, ops in raw.items()}
    wrong = check(res, want, n, 2 if vectors else 5)
    md = report(args, n, k, engines, versions, failures, res, want, wrong, flt, elapsed)
    print()
    print(md)
    path = os.path.join(RESULTS, time.strftime("table_%Y%m%d_%H%M%S.md"))
    with open(path, "w") as f:
        f.write(md)
    print(f"saved {path}")
    return 1 if wrong else 0


def _short(r):
    if "error" in r:
        return "FAILED: " + r["error"]
    s = f"{r['seconds']:.3f} s  cpu {r.get('cpu_s', 0):.3f} s  rss {r['rss_mb']:.0f} MB  rows {r['rows']}"
    return s + (f"  sum(id) {r['id_sum']}" if "id_sum" in r else "")


def check(res, want, n, n_columns):
    """Every engine's answers against pyarrow's: a list of what disagrees."""
    wrong = []
    for e, ops in res.items():
        if "error" not in ops["append"] and ops["append"]["rows"] != n:
            wrong.append(f"{e} append: wrote {ops['append']['rows']} rows, expected {n}")
        for q in QUERIES:
            for r in ops[q].get("all", []):
                got = (r["rows"], r["id_sum"])
                if got != want[q]:
                    wrong.append(f"{e} {q}: {got[0]} rows, sum(id) {got[1]}; expected "
                                 f"{want[q][0]} rows, sum(id) {want[q][1]}")
                    break
            if ops[q].get("columns") not in (None, n_columns):
                wrong.append(f"{e} {q}: {ops[q]['columns']} columns, expected {n_columns}")
    return wrong


def _cell_secs(m):
    return f"failed: {m['error']}" if "error" in m else f"{m['seconds']:.3f}"


def report(args, n, k, engines, versions, failures, res, want, wrong, flt, elapsed):
    out = []
    w = out.append
    what = f"{n:,} vectors of {args.dim} float32" if args.vectors else f"{n:,} rows"
    w(f"### Tables: {what} in {k} appends, median of {args.runs} "
      f"(wall {elapsed:.0f} s for all measurements)\n")
    w(f"Command: `{' '.join(['python3', 'bench/bench_table.py'] + sys.argv[1:])}`\n")
    w(f"Machine: {machine()}; repository HEAD {git_commit()} (the measured build is the "
      f"installed `hyperstreamdb`, see its build time below).\n")
    vs = ", ".join(f"{e} {versions[e] or 'unavailable'}" for e in engines)
    w(f"Versions: {vs}; original API: {args.original_api}; codec: "
      f"{args.codec or 'engine defaults (ours zstd, pyiceberg zstd, original uncompressed)'}"
      f"{' (ours and pyiceberg; the original always writes uncompressed)' if args.codec else ''}.\n")
    w("| engine | append s | append rows/s | append CPU s | append peak RSS MB | "
      + " | ".join(f"{q} s" for q in QUERIES) + " | full scan CPU s | scan peak RSS MB |")
    w("|---|---:|---:|---:|---:|" + "---:|" * len(QUERIES) + "---:|---:|")
    for e in engines:
        if e in failures:
            w(f"| {e} | unavailable: {failures[e]} |" + " |" * (5 + len(QUERIES)))
            continue
        a = res[e]["append"]
        cells = [e]
        if "error" in a:
            cells += [f"failed: {a['error']}", "", "", ""]
        else:
            cells += [f"{a['seconds']:.3f}", f"{n / a['seconds']:,.0f}", f"{a['cpu_s']:.2f}",
                      f"{a['rss_mb']:.0f}"]
        cells += [_cell_secs(res[e][q]) for q in QUERIES]
        f = res[e]["full"]
        cells.append("" if "error" in f else f"{f['cpu_s']:.2f}")
        rss = [res[e][q]["rss_mb"] for q in QUERIES if "error" not in res[e][q]]
        cells.append(f"{max(rss):.0f}" if rss else "")
        w("| " + " | ".join(cells) + " |")
    w("")
    w("Rows returned (all engines must agree with pyarrow on the source data): "
      + ", ".join(f"{q} {want[q][0]:,}" for q in QUERIES) + ".")
    if not args.vectors:
        w("Filters: " + "; ".join(f"{q}: `{flt['ours'][q]}`" for q in QUERIES if flt['ours'][q])
          + f" (pyiceberg: `{flt['pyiceberg']['price_10%']}`).\n")
    else:
        w("")
    ours = res.get("ours", {})
    for peer in engines:
        if peer == "ours" or peer in failures:
            continue
        parts = []
        a, b = ours.get("append", {"error": 1}), res[peer]["append"]
        if "error" not in a and "error" not in b:
            parts.append(f"append **{b['seconds'] / a['seconds']:.2f}×**")
        for q in QUERIES:
            a, b = ours.get(q, {"error": 1}), res[peer][q]
            if "error" not in a and "error" not in b:
                parts.append(f"{q} **{b['seconds'] / a['seconds']:.2f}×**")
        w(f"Ours vs {peer} (our rows/s ÷ theirs; for scans their seconds ÷ ours; "
          f">1 means ours is faster): " + (", ".join(parts) or "n/a") + ".\n")
    errs = [(e, op, x) for e in res for op in res[e] for x in res[e][op].get("errors", [])]
    if errs or failures:
        w("Failures:\n")
        for e, err in failures.items():
            w(f"* {e}: {err}")
        for e, op, x in errs:
            w(f"* {e} {op}: {x}")
        w("")
    if wrong:
        w("**WRONG ANSWERS** (these timings compare different results):\n")
        for x in wrong:
            w(f"* {x}")
    else:
        w("Every successful measurement returned the expected row count and sum(id).")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
