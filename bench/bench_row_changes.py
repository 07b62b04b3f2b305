"""Row changes side by side (issue 14's performance section).

One run, the same data for every engine. Table shape of issue 4: string
``category`` of 1,000 values, int64 ``id`` (a random permutation, so every
data file spans the whole id range), float64 ``price`` with cents,
timestamp[us] ``ts``, bool ``flag`` (10 % true), written as ``--files``
appends (one data file each).

changes   (every engine, each in its own fresh process)
  delete    0.1 % of the rows by ``id BETWEEN lo AND hi`` (an indexed column
            on ours and LanceDB); one untimed warm-up, then ``--reps`` timed
            deletes of disjoint ranges on the same table
  upsert    ``--upsert-rows`` rows by key ``id`` (default 100K or 10 % of the
            rows, whichever is smaller): 90 % existing ids with new values,
            10 % new ids; warm-up, then ``--reps`` disjoint batches
  engines   ours (all five columns indexed; merge-on-read v2 position
            deletes, the default; upsert timed until it returns and until
            wait_for_indexes() has indexed the new files), pyiceberg
            (SQL catalog on sqlite in a temp folder; ``delete(filter)``,
            ``upsert(df, join_cols=["id"])``), LanceDB (bench/.venv-vector,
            BITMAP/BTREE scalar indexes as bench_scalar_query.py;
            ``delete(where)``, ``merge_insert("id")...execute(df)``), Spark
            + Iceberg 1.12 at local[2] (Hadoop catalog, merge-on-read,
            ``DELETE FROM`` and ``MERGE INTO``; the source DataFrame is
            cached before the clock)
  check     every engine's final count(*), sum(id) and sum(price) must equal
            the brute-force model (pyarrow over the source rows), else WRONG
reads     (ours) two tables of the same rows with the five indexes; 10 % of
          one deleted (``id < rows/10``, every file). Full scan (rows/s of
          live rows), ``category = 'cat0007'`` (0.1 %) latency p50, each
          with vs without deletes, alternating, ``--read-reps`` times
vector    (ours) two tables of ``--vectors`` x ``--dim`` float32 (clustered)
          with an HNSW index and a bitmap index on ``grp``; 10 % of one
          deleted; top-10 inside ``grp < 100`` (10 %), p50 per query, with
          vs without deletes; recall@10 against numpy brute force over the
          live matching rows and no deleted id returned
churn     (ours and LanceDB, ``--engines``) ``--churn`` successive deletes of
          0.1 % each (``id BETWEEN``, disjoint ranges, every file touched) on
          the five-index table: seconds of the first and the last 10, then
          ``category = 'cat0007'`` p50 after them; final count checked
compact   (ours) ``--compact-files`` appends (``index_all=True``), 10 %
          deleted, ``t.compact()`` (returns after the new files' indexes are
          built) against writing the same live rows fresh into an
          ``index_all=True`` table until ``wait_for_indexes()``

    python3 bench/bench_row_changes.py                     # 1M rows, 50K x 128 (a few minutes)
    python3 bench/bench_row_changes.py --full              # the issue's 10M rows, 1M x 768
    python3 bench/bench_row_changes.py --parts changes --engines ours,lancedb
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LANCE_PY = os.path.join(HERE, ".venv-vector", "bin", "python")
COLUMNS = ["category", "id", "price", "ts", "flag"]
ENGINES = ("ours", "pyiceberg", "lancedb", "spark")
PARTS = ("changes", "reads", "vector", "compact", "churn")
CATEGORY = "category = 'cat0007'"


# ------------------------------------------------------------ data


def make_parts(rows, files, seed):
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    cats = np.array([f"cat{i:04d}" for i in range(1000)])
    ids = rng.permutation(rows).astype(np.int64)
    out = []
    for f in range(files):
        lo, hi = rows * f // files, rows * (f + 1) // files
        out.append(rows_of(rng, cats, ids[lo:hi]))
    return out


def rows_of(rng, cats, ids):
    import numpy as np
    import pyarrow as pa

    n = len(ids)
    return pa.table({
        "category": pa.array(cats[rng.integers(0, 1000, n)]),
        "id": pa.array(ids, pa.int64()),
        "price": pa.array(np.round(rng.uniform(0, 1000, n), 2)),
        "ts": pa.array(1_700_000_000_000_000 + rng.integers(0, 86_400_000_000 * 30, n),
                       pa.timestamp("us")),
        "flag": pa.array(rng.random(n) < 0.1),
    })


def change_plan(rows, reps, upsert_rows, seed):
    """The delete ranges and upsert batches (warm-up first) every engine
    runs, in order."""
    import numpy as np

    rng = np.random.default_rng(seed + 1)
    cats = np.array([f"cat{i:04d}" for i in range(1000)])
    k = max(1, rows // 1000)
    deletes = [(i * k, (i + 1) * k - 1) for i in range(reps + 1)]
    matched = upsert_rows * 9 // 10
    fresh = upsert_rows - matched
    upserts = []
    for i in range(reps + 1):
        lo = rows // 2 + i * matched  # existing ids, untouched by the deletes
        old = np.arange(lo, lo + matched, dtype=np.int64)
        new = np.arange(rows + i * fresh, rows + (i + 1) * fresh, dtype=np.int64)
        ids = np.concatenate([old, new])
        upserts.append(rows_of(rng, cats, rng.permutation(ids)))
    return deletes, upserts


def model_answer(parts, deletes, upserts):
    """count, sum(id), sum(price) after every delete and upsert, by pyarrow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = pa.concat_tables(parts)
    for lo, hi in deletes:
        t = t.filter(pc.invert(pc.and_(pc.greater_equal(t["id"], lo),
                                       pc.less_equal(t["id"], hi))))
    for u in upserts:
        t = pa.concat_tables([t.filter(pc.invert(pc.is_in(t["id"], value_set=u["id"]))), u])
    return summary(t)


def summary(t):
    import pyarrow.compute as pc

    return {"rows": t.num_rows, "id_sum": int(pc.sum(t["id"]).as_py() or 0),
            "price_sum": round(float(pc.sum(t["price"]).as_py() or 0.0), 2)}


def same(a, b):
    return (a["rows"] == b["rows"] and a["id_sum"] == b["id_sum"]
            and abs(a["price_sum"] - b["price_sum"]) <= 1e-6 * max(1.0, abs(b["price_sum"])))


def save(tbl, path):
    import pyarrow as pa

    with pa.OSFile(path, "wb") as f, pa.ipc.new_file(f, tbl.schema) as w:
        w.write_table(tbl)
    return path


def load(path):
    import pyarrow as pa

    return pa.ipc.open_file(path).read_all()


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def p50_ms(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return med(ts) * 1e3


def run_changes(spec, delete, upsert, wait=None):
    """Warm-up then timed deletes and upserts: seconds per call."""
    out = {"delete_s": [], "upsert_s": [], "upsert_indexed_s": [], "delete_cpu_s": [],
           "upsert_cpu_s": []}
    ups = [load(p) for p in spec["upserts"]]
    for i, (lo, hi) in enumerate(spec["deletes"]):
        c0, t0 = time.process_time(), time.perf_counter()
        delete(lo, hi)
        if i:
            out["delete_s"].append(time.perf_counter() - t0)
            out["delete_cpu_s"].append(time.process_time() - c0)
    for i, u in enumerate(ups):
        c0, t0 = time.process_time(), time.perf_counter()
        upsert(u)
        s, cs = time.perf_counter() - t0, time.process_time() - c0
        if wait is not None:
            wait()
        if i:
            out["upsert_s"].append(s)
            out["upsert_cpu_s"].append(cs)
            if wait is not None:
                out["upsert_indexed_s"].append(time.perf_counter() - t0)
    return out


# ------------------------------------------------------------ change workers


def worker_ours(spec):
    import hyperstreamdb as hdb

    parts = [load(p) for p in spec["parts"]]
    fv = spec.get("format_version", 2)
    t = hdb.Table(os.path.join(spec["root"], f"ours-v{fv}"), format_version=fv)
    t0 = time.perf_counter()
    for p in parts:
        t.write(p)
    write_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for col in COLUMNS:
        t.add_index(col, progress=False)
    index_s = time.perf_counter() - t0
    counts = []

    def delete(lo, hi):
        counts.append(t.delete(f"id BETWEEN {lo} AND {hi}"))

    def upsert(u):
        r = t.upsert(u, on=["id"])
        counts.append((r.rows_updated, r.rows_inserted))

    out = run_changes(spec, delete, upsert, wait=t.wait_for_indexes)
    got = summary(t.to_arrow(columns=["id", "price"]))
    return {**out, "write_s": write_s, "index_s": index_s, "answer": got, "counts": counts,
            "version": f"hyperstreamdb (this tree), Iceberg v{fv}"}


def worker_pyiceberg(spec):
    import importlib.metadata as md

    from pyiceberg.catalog.sql import SqlCatalog

    parts = [load(p) for p in spec["parts"]]
    wh = os.path.join(spec["root"], "pyiceberg")
    os.makedirs(wh, exist_ok=True)
    cat = SqlCatalog("bench", uri=f"sqlite:///{os.path.join(wh, 'catalog.db')}",
                     warehouse=f"file://{wh}")
    cat.create_namespace("bench")
    t = cat.create_table("bench.t", schema=parts[0].schema)
    t0 = time.perf_counter()
    for p in parts:
        t.append(p)
    write_s = time.perf_counter() - t0
    counts = []

    def delete(lo, hi):
        t.delete(f"id >= {lo} and id <= {hi}")

    def upsert(u):
        r = t.upsert(u, join_cols=["id"])
        counts.append((r.rows_updated, r.rows_inserted))

    out = run_changes(spec, delete, upsert)
    got = summary(t.scan(selected_fields=("id", "price")).to_arrow())
    return {**out, "write_s": write_s, "answer": got, "counts": counts,
            "version": f"pyiceberg {md.version('pyiceberg')}"}


def worker_lancedb(spec):
    import lancedb

    parts = [load(p) for p in spec["parts"]]
    db = lancedb.connect(os.path.join(spec["root"], "lance"))
    t0 = time.perf_counter()
    tbl = db.create_table("t", parts[0])
    for p in parts[1:]:
        tbl.add(p)
    write_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for col, kind in (("category", "BITMAP"), ("flag", "BITMAP"), ("id", "BTREE"),
                      ("price", "BTREE"), ("ts", "BTREE")):
        tbl.create_scalar_index(col, index_type=kind)
    index_s = time.perf_counter() - t0
    counts = []

    def delete(lo, hi):
        r = tbl.delete(f"id >= {lo} AND id <= {hi}")
        counts.append(getattr(r, "num_deleted_rows", None))

    def upsert(u):
        r = (tbl.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
             .execute(u))
        counts.append((getattr(r, "num_updated_rows", None),
                       getattr(r, "num_inserted_rows", None)))

    out = run_changes(spec, delete, upsert)
    got = summary(tbl.to_arrow())
    return {**out, "write_s": write_s, "index_s": index_s, "answer": got, "counts": counts,
            "version": f"lancedb {lancedb.__version__}"}


def worker_spark(spec):
    sys.path.insert(0, os.path.join(REPO, "tests", "python"))
    import spark_util

    parts = [load(p) for p in spec["parts"]]
    wh = os.path.join(spec["root"], "spark")
    t0 = time.perf_counter()
    spark = spark_util.start_spark(wh, os.path.join(spec["root"], "spark-scratch"),
                                   c1_only=False)
    start_s = time.perf_counter() - t0
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
    name = f"{spark_util.CATALOG}.db.t"
    spark.sql(f"CREATE TABLE {name} (category STRING, id BIGINT, price DOUBLE, "
              "ts TIMESTAMP_NTZ, flag BOOLEAN) USING iceberg TBLPROPERTIES ("
              "'format-version'='2', 'write.delete.mode'='merge-on-read', "
              "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')")
    dfs = [spark.createDataFrame(p.to_pandas()) for p in parts]
    t0 = time.perf_counter()
    for df in dfs:
        df.writeTo(name).append()
    write_s = time.perf_counter() - t0

    def delete(lo, hi):
        spark.sql(f"DELETE FROM {name} WHERE id BETWEEN {lo} AND {hi}")

    srcs = []

    def upsert(u):
        src = srcs.pop(0)
        src.createOrReplaceTempView("src")
        spark.sql(f"MERGE INTO {name} t USING src s ON t.id = s.id "
                  "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")

    for p in spec["upserts"]:  # sources in memory before the clock, like the other engines'
        df = spark.createDataFrame(load(p).to_pandas()).cache()
        df.count()
        srcs.append(df)
    out = run_changes(spec, delete, upsert)
    r = spark.sql(f"SELECT count(*), sum(id), sum(price) FROM {name}").collect()[0]
    got = {"rows": int(r[0]), "id_sum": int(r[1]), "price_sum": round(float(r[2]), 2)}
    v = spark.version
    spark.stop()
    return {**out, "write_s": write_s, "start_s": start_s, "answer": got,
            "version": f"Spark {v} + iceberg-spark-runtime 1.12.0, local[2]"}


# ------------------------------------------------------------ our reads, vectors, compaction


def worker_reads(spec):
    import hyperstreamdb as hdb
    import pyarrow.compute as pc

    parts = [load(p) for p in spec["parts"]]
    cut = spec["rows"] // 10
    tabs = {}
    for name in ("plain", "deleted"):
        t = hdb.Table(os.path.join(spec["root"], "reads-" + name))
        for p in parts:
            t.write(p)
        for col in COLUMNS:
            t.add_index(col, progress=False)
        tabs[name] = t
    t0 = time.perf_counter()
    n_del = tabs["deleted"].delete(f"id < {cut}")
    delete10_s = time.perf_counter() - t0
    res = {"delete10_s": delete10_s, "deleted": n_del}
    scans = {"plain": [], "deleted": []}
    filt = {"plain": [], "deleted": []}
    cpu = {"plain": ([], []), "deleted": ([], [])}  # CPU seconds (all threads): scan, filter
    rows = {}
    for r in range(spec["read_reps"] + 1):
        for name, t in tabs.items():  # alternating: the box's load hits both alike
            c0, t0 = time.process_time(), time.perf_counter()
            full = t.to_arrow()
            s, sc = time.perf_counter() - t0, time.process_time() - c0
            c0, t0 = time.process_time(), time.perf_counter()
            sel = t.to_arrow(filter=CATEGORY)
            f, fc = time.perf_counter() - t0, time.process_time() - c0
            rows[name] = (full.num_rows, int(pc.sum(full["id"]).as_py()), sel.num_rows,
                          int(pc.sum(sel["id"]).as_py()))
            del full
            if r:
                scans[name].append(s)
                filt[name].append(f)
                cpu[name][0].append(sc)
                cpu[name][1].append(fc)
    res.update({"scan_s": scans, "filter_s": filt, "rows": rows, "cpu_s": cpu})
    return res


def worker_vector(spec):
    import numpy as np
    import pyarrow as pa

    import hyperstreamdb as hdb

    n, dim, files, nq = spec["vectors"], spec["dim"], spec["vfiles"], spec["queries"]
    rng = np.random.default_rng(spec["seed"] + 7)
    centers = rng.normal(size=(max(8, n // 2000), dim)).astype(np.float32) * 3
    vecs = (centers[rng.integers(0, len(centers), n)]
            + rng.normal(size=(n, dim)).astype(np.float32)).astype(np.float32)
    ids = rng.permutation(n).astype(np.int64)
    grp = rng.integers(0, 1000, n).astype(np.int32)
    queries = (centers[rng.integers(0, len(centers), nq)]
               + rng.normal(size=(nq, dim)).astype(np.float32)).astype(np.float32)
    cut = n // 10
    res = {"build_s": {}}
    tabs = {}
    for name in ("plain", "deleted"):
        t = hdb.Table(os.path.join(spec["root"], "vec-" + name))
        for f in range(files):
            lo, hi = n * f // files, n * (f + 1) // files
            t.write(pa.table({"id": ids[lo:hi], "grp": grp[lo:hi],
                              "emb": pa.FixedSizeListArray.from_arrays(
                                  pa.array(vecs[lo:hi].reshape(-1)), dim)}))
        t.add_index("grp", "bitmap", progress=False)
        t0 = time.perf_counter()
        t.add_index("emb", "hnsw", progress=False)
        res["build_s"][name] = time.perf_counter() - t0
        tabs[name] = t
    res["deleted"] = tabs["deleted"].delete(f"id < {cut}")
    flt = "grp < 100"
    lat = {"plain": [], "deleted": []}
    hits = {"plain": 0, "deleted": 0}
    bad = 0
    norms = (vecs * vecs).sum(1)
    for qi, q in enumerate(queries):
        d = norms - 2 * vecs @ q
        for name, t in tabs.items():
            live = grp < 100
            if name == "deleted":
                live &= ids >= cut
            cand = np.nonzero(live)[0]
            want = set(ids[cand[np.argsort(d[cand], kind="stable")[:10]]].tolist())
            t0 = time.perf_counter()
            got = t.search("emb", q, k=10, filter=flt, columns=["id"])
            s = time.perf_counter() - t0
            if qi:
                lat[name].append(s)
            gid = got.column("id").to_pylist()
            hits[name] += len(want & set(gid))
            if name == "deleted":
                bad += sum(1 for x in gid if x < cut)
    res.update({"lat_s": lat, "recall": {k: v / (10 * nq) for k, v in hits.items()},
                "deleted_returned": bad})
    return res


def worker_compact(spec):
    import pyarrow as pa
    import pyarrow.compute as pc

    import hyperstreamdb as hdb

    parts = [load(p) for p in spec["cparts"]]
    cut = spec["crows"] // 10
    live = pa.concat_tables(parts)
    live = live.filter(pc.greater_equal(live["id"], cut))
    res = {"compact_s": [], "fresh_s": [], "files_added": [], "fresh_files": [], "ok": True}
    for r in range(spec["creps"]):
        t = hdb.Table(os.path.join(spec["root"], f"cmp-{r}"), index_all=True)
        for p in parts:
            t.write(p)
        t.wait_for_indexes()
        t.delete(f"id < {cut}")
        t0 = time.perf_counter()
        c = t.compact()
        res["compact_s"].append(time.perf_counter() - t0)
        res["files_added"].append(c.added_data_files_count)
        got = t.to_arrow(columns=["id", "price"])
        sel = t.to_arrow(filter=CATEGORY, columns=["id"])
        want_sel = live.filter(pc.equal(live["category"], "cat0007"))
        res["ok"] &= same(summary(got), summary(live)) and sel.num_rows == want_sel.num_rows
        f = hdb.Table(os.path.join(spec["root"], f"fresh-{r}"), index_all=True)
        t0 = time.perf_counter()
        f.write(live)
        f.wait_for_indexes()
        res["fresh_s"].append(time.perf_counter() - t0)
        res["fresh_files"].append(sum(1 for root_, _, names in os.walk(os.path.join(f.uri, "data"))
                                      for x in names if x.endswith(".parquet")))
        shutil.rmtree(t.uri, ignore_errors=True)
        shutil.rmtree(f.uri, ignore_errors=True)
    return res


def churn_run(spec, delete, query):
    rows, n = spec["rows"], spec["churn"]
    k = max(1, rows // 1000)
    ts, cs = [], []
    for i in range(n):
        c0, t0 = time.process_time(), time.perf_counter()
        delete(i * k, (i + 1) * k - 1)
        ts.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
    t0 = time.perf_counter()
    query()  # the first read after the last change (its plan is new)
    first_ms = (time.perf_counter() - t0) * 1e3
    return {"delete_s": ts, "delete_cpu_s": cs, "first_filter_ms": first_ms,
            "filter_ms": p50_ms(query, spec["read_reps"])}


def worker_churn_ours(spec):
    import hyperstreamdb as hdb

    t = hdb.Table(os.path.join(spec["root"], "churn-ours"))
    for p in spec["parts"]:
        t.write(load(p))
    for col in COLUMNS:
        t.add_index(col, progress=False)
    out = churn_run(spec, lambda lo, hi: t.delete(f"id BETWEEN {lo} AND {hi}"),
                    lambda: t.to_arrow(filter=CATEGORY))
    out["rows"] = len(t)
    out["delete_files"] = t._require().count_rows()["delete_files"]
    return out


def worker_churn_lancedb(spec):
    import lancedb

    db = lancedb.connect(os.path.join(spec["root"], "churn-lance"))
    parts = [load(p) for p in spec["parts"]]
    tbl = db.create_table("t", parts[0])
    for p in parts[1:]:
        tbl.add(p)
    for col, kind in (("category", "BITMAP"), ("flag", "BITMAP"), ("id", "BTREE"),
                      ("price", "BTREE"), ("ts", "BTREE")):
        tbl.create_scalar_index(col, index_type=kind)
    out = churn_run(spec, lambda lo, hi: tbl.delete(f"id >= {lo} AND id <= {hi}"),
                    lambda: tbl.to_lance().to_table(filter=CATEGORY))
    out["rows"] = tbl.count_rows()
    return out


WORKERS = {"ours": worker_ours, "pyiceberg": worker_pyiceberg, "lancedb": worker_lancedb,
           "spark": worker_spark, "reads": worker_reads, "vector": worker_vector,
           "compact": worker_compact, "churn-ours": worker_churn_ours,
           "churn-lancedb": worker_churn_lancedb}


def worker(spec_json):
    spec = json.loads(spec_json)
    print("RESULT " + json.dumps(WORKERS[spec["engine"]](spec)), flush=True)


def run_worker(engine, spec, timeout):
    python = LANCE_PY if engine in ("lancedb", "churn-lancedb") else sys.executable
    if not os.path.exists(python):
        return {"error": f"not available ({python} missing: bash bench/vector_env.sh)"}
    env = dict(os.environ)
    if engine in ("lancedb", "churn-lancedb"):
        env.pop("PYTHONPATH", None)
    cmd = [python, os.path.abspath(__file__), "--worker", json.dumps({**spec, "engine": engine})]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE,
                           env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            r["wall_s"] = time.perf_counter() - t0
            return r
    tail = (p.stderr or p.stdout).strip().splitlines()[-4:]
    return {"error": f"failed (exit {p.returncode}: {' | '.join(tail)[:400]})"}


# ------------------------------------------------------------ driver


def ratio(a, b):
    return a / b if b else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true",
                    help="the issue's size: 10M rows in 100 files, 1M x 768 vectors")
    ap.add_argument("--rows", type=int)
    ap.add_argument("--files", type=int)
    ap.add_argument("--upsert-rows", type=int, help="default min(100K, rows/10)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--read-reps", type=int, default=15, help="reads: timed scans per table")
    ap.add_argument("--vectors", type=int)
    ap.add_argument("--dim", type=int)
    ap.add_argument("--vfiles", type=int, default=4)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--churn", type=int, default=100, help="churn: successive deletes")
    ap.add_argument("--compact-rows", type=int, help="default: --rows")
    ap.add_argument("--compact-files", type=int, default=100)
    ap.add_argument("--compact-reps", type=int, default=2)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--timeout", type=int, default=900, help="per worker, seconds")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--formats", default="2",
                    help="our tables' Iceberg format versions for the changes part, e.g. 2,3 "
                         "(v2: position deletes; v3: deletion vectors and row lineage)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a.worker)
    rows = a.rows or (10_000_000 if a.full else 1_000_000)
    files = a.files or (100 if a.full else 10)
    vectors = a.vectors or (1_000_000 if a.full else 50_000)
    dim = a.dim or (768 if a.full else 128)
    upsert_rows = a.upsert_rows or min(100_000, rows // 10)
    crows = a.compact_rows or rows
    engines = [e for e in a.engines.split(",") if e]
    formats = [int(f) for f in a.formats.split(",") if f]
    if any(f not in (2, 3) for f in formats) or not formats:
        ap.error("--formats: 2 and/or 3")
    parts = [p for p in a.parts.split(",") if p]
    for e in engines:
        if e not in ENGINES:
            ap.error(f"--engines: unknown engine {e!r} (know {', '.join(ENGINES)})")
    for p in parts:
        if p not in PARTS:
            ap.error(f"--parts: unknown part {p!r} (know {', '.join(PARTS)})")

    root = tempfile.mkdtemp(prefix="hs_bench_rowchg_")
    data = os.path.join(root, "data")
    os.makedirs(data)
    wrong = False
    try:
        src = make_parts(rows, files, a.seed)
        deletes, upserts = change_plan(rows, a.reps, upsert_rows, a.seed)
        spec = {"root": root, "rows": rows, "reps": a.reps, "read_reps": a.read_reps,
                "seed": a.seed,
                "parts": [save(p, os.path.join(data, f"part{i}.arrow"))
                          for i, p in enumerate(src)],
                "deletes": deletes,
                "upserts": [save(u, os.path.join(data, f"upsert{i}.arrow"))
                            for i, u in enumerate(upserts)],
                "vectors": vectors, "dim": dim, "vfiles": a.vfiles, "queries": a.queries,
                "crows": crows, "creps": a.compact_reps, "churn": a.churn}
        print(f"# bench_row_changes: {rows:,} rows in {files} files; delete 0.1 % "
              f"({deletes[0][1] - deletes[0][0] + 1:,} rows) and upsert {upsert_rows:,} rows "
              f"(90 % matched), 1 warm-up + {a.reps} timed each; "
              f"vectors {vectors:,} x {dim} in {a.vfiles} files; compaction of {crows:,} rows "
              f"in {a.compact_files} files; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
              f", load average {os.getloadavg()[0]:.1f}", flush=True)
        results = {}
        if "changes" in parts:
            want = model_answer(src, deletes, upserts)
            labels = []  # "ours" once per format (ours, ours-v3, ...), then the peers
            for e in engines:
                for fv in (formats if e == "ours" else [None]):
                    labels.append((e if fv in (None, formats[0]) else f"{e}-v{fv}", e, fv))
            for label, e, fv in labels:
                r = run_worker(e, {**spec, "format_version": fv} if fv else spec, a.timeout)
                results[label] = r
                e = label
                if "error" not in r and not same(r["answer"], want):
                    r["wrong"] = f"WRONG: {r['answer']} != model {want}"
                    wrong = True
                print(f"  {e}: " + (r.get("error") or r.get("wrong") or
                                    f"delete {med(r['delete_s']):.3f} s, upsert "
                                    f"{med(r['upsert_s']):.3f} s (worker {r['wall_s']:.0f} s)"),
                      flush=True)
            report_changes(results, [label for label, _, _ in labels])
        if "reads" in parts:
            r = run_worker("reads", spec, a.timeout)
            results["reads"] = r
            wrong |= report_reads(r, src, rows)
        if "vector" in parts:
            r = run_worker("vector", spec, a.timeout)
            results["vector"] = r
            wrong |= report_vector(r)
        if "compact" in parts:
            cs = make_parts(crows, a.compact_files, a.seed + 3)
            spec["cparts"] = [save(p, os.path.join(data, f"cpart{i}.arrow"))
                              for i, p in enumerate(cs)]
            del cs
            r = run_worker("compact", spec, a.timeout)
            results["compact"] = r
            wrong |= report_compact(r)
        if "churn" in parts:
            res = {}
            for e in engines:
                if e in ("ours", "lancedb"):
                    res[e] = run_worker("churn-" + e, spec, a.timeout)
            results["churn"] = res
            wrong |= report_churn(res, rows, a.churn)
        out = os.path.join(HERE, "results")
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "row-changes.json"), "w") as f:
            json.dump({"args": vars(a), "rows": rows, "results": results}, f, indent=1)
    finally:
        if a.keep:
            print(f"# kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 1 if wrong else 0


def each(xs, digits):
    return ", ".join(f"{x:.{digits}f}" for x in xs)


def report_changes(res, engines):
    print("\n| engine | delete 0.1 % s (median) | upsert s (median) | upsert + index s | "
          "initial write s | version |")
    print("|---|---|---|---|---|---|")
    for e in engines:
        r = res[e]
        if "error" in r:
            print(f"| {e} | {r['error']} | | | | |")
            continue
        ui = f"{med(r['upsert_indexed_s']):.3f}" if r.get("upsert_indexed_s") else "-"
        flag = " WRONG" if "wrong" in r else ""
        print(f"| {e}{flag} | {med(r['delete_s']):.4f} ({each(r['delete_s'], 4)})"
              f" | {med(r['upsert_s']):.3f} ({each(r['upsert_s'], 3)})"
              f" | {ui} | {r['write_s']:.2f} | {r['version']} |")
    print("\nCPU seconds of the process (all threads), medians: " + "; ".join(
        f"{e} delete {med(res[e]['delete_cpu_s']) * 1e3:.2f} ms, upsert "
        f"{med(res[e]['upsert_cpu_s']) * 1e3:.1f} ms" for e in engines
        if "error" not in res[e] and res[e].get("delete_cpu_s")))
    for name in [e for e in engines if e == "ours" or e.startswith("ours-")]:
        o = res[name]  # each of our formats against every peer
        if "error" in o:
            continue
        print(f"\n{name} vs peers (peer time / ours; targets: >= 10x pyiceberg, >= 2x LanceDB):")
        for e in engines:
            r = res[e]
            if e == "ours" or e.startswith("ours-") or "error" in r:
                continue
            print(f"  {e}: delete {ratio(med(r['delete_s']), med(o['delete_s'])):.2f}x, "
                  f"upsert {ratio(med(r['upsert_s']), med(o['upsert_s'])):.2f}x "
                  f"(ours with its index upkeep: "
                  f"{ratio(med(r['upsert_s']), med(o['upsert_indexed_s'])):.2f}x)")


def report_churn(res, rows, n):
    want = rows - n * max(1, rows // 1000)
    print(f"\nchurn: {n} successive deletes of 0.1 % ({max(1, rows // 1000):,} rows each)")
    print("| engine | first 10 deletes, median s (CPU) | last 10, median s (CPU) | "
          f"{CATEGORY} after: first ms, p50 ms | rows | delete files |")
    print("|---|---|---|---|---|---|")
    bad = False
    for e, r in res.items():
        if "error" in r:
            print(f"| {e} | {r['error']} | | | | |")
            continue
        ok = r["rows"] == want
        bad |= not ok
        print(f"| {e} | {med(r['delete_s'][:10]):.4f} ({med(r['delete_cpu_s'][:10]):.4f}) | "
              f"{med(r['delete_s'][-10:]):.4f} ({med(r['delete_cpu_s'][-10:]):.4f}) | "
              f"{r['first_filter_ms']:.1f}, {r['filter_ms']:.1f} | "
              f"{r['rows']:,}{'' if ok else ' WRONG'} | "
              f"{r.get('delete_files', '-')} |")
    return bad


def report_reads(r, src, rows):
    import pyarrow as pa
    import pyarrow.compute as pc

    if "error" in r:
        print(f"\nreads after 10 % deleted: {r['error']}")
        return False
    t = pa.concat_tables(src)
    cut = rows // 10
    live = t.filter(pc.greater_equal(t["id"], cut))
    sel_all = t.filter(pc.equal(t["category"], "cat0007"))
    sel_live = live.filter(pc.equal(live["category"], "cat0007"))

    def key(x):
        return (x.num_rows, int(pc.sum(x["id"]).as_py()))

    want = {"plain": key(t) + key(sel_all), "deleted": key(live) + key(sel_live)}
    bad = any(tuple(r["rows"][k]) != want[k] for k in want)
    sp, sd = med(r["scan_s"]["plain"]), med(r["scan_s"]["deleted"])
    fp, fd = med(r["filter_s"]["plain"]), med(r["filter_s"]["deleted"])
    tp, td = rows / sp, (rows - cut) / sd
    print(f"\nreads after 10 % deleted ({r['deleted']:,} rows deleted by one delete in "
          f"{r['delete10_s']:.2f} s){' WRONG rows: ' + str(r['rows']) if bad else ''}:")
    print("| read | without deletes | with 10 % deleted | ratio | target |")
    print("|---|---|---|---|---|")
    print(f"| full scan, M live rows/s (s) | {tp / 1e6:.2f} ({sp:.3f}) | {td / 1e6:.2f} "
          f"({sd:.3f}) | {td / tp:.2f}x throughput | >= 0.9x |")
    print(f"| {CATEGORY} p50 ms | {fp * 1e3:.1f} | {fd * 1e3:.1f} | {fd / fp:.2f}x latency "
          f"| <= 1.2x |")
    cp, cd = (med(r["cpu_s"][k][0]) for k in ("plain", "deleted"))
    fp_, fd_ = (med(r["cpu_s"][k][1]) for k in ("plain", "deleted"))
    print(f"| CPU s (all threads): scan; filter | {cp:.3f}; {fp_ * 1e3:.1f} ms | {cd:.3f}; "
          f"{fd_ * 1e3:.1f} ms | scan {(rows - cut) / cd / (rows / cp):.2f}x rows per CPU s; "
          f"filter {fd_ / fp_:.2f}x | |")
    return bad


def report_vector(r):
    if "error" in r:
        print(f"\nvector search after 10 % deleted: {r['error']}")
        return False
    lp, ld = med(r["lat_s"]["plain"]), med(r["lat_s"]["deleted"])
    bad = r["deleted_returned"] > 0
    print(f"\nfiltered top-10 (grp < 100, 10 %) after 10 % deleted ({r['deleted']:,} rows); "
          f"hnsw built in {r['build_s']['plain']:.1f} / {r['build_s']['deleted']:.1f} s"
          f"{'; WRONG: deleted ids returned ' + str(r['deleted_returned']) if bad else ''}:")
    print("| | without deletes | with 10 % deleted | ratio | target |")
    print("|---|---|---|---|---|")
    print(f"| p50 ms/query | {lp * 1e3:.2f} | {ld * 1e3:.2f} | {ld / lp:.2f}x latency "
          "| <= 1.2x |")
    print(f"| recall@10 vs brute force over live rows | {r['recall']['plain']:.3f} | "
          f"{r['recall']['deleted']:.3f} | | |")
    return bad


def report_compact(r):
    if "error" in r:
        print(f"\ncompaction: {r['error']}")
        return False
    c, f = med(r["compact_s"]), med(r["fresh_s"])
    print(f"\ncompaction with indexes vs a fresh index_all write of the same live rows"
          f"{'' if r['ok'] else ' WRONG rows after compaction'}:")
    print(f"  compact() {c:.2f} s ({', '.join(f'{x:.2f}' for x in r['compact_s'])}; "
          f"{r['files_added']} files added), fresh write + wait_for_indexes {f:.2f} s "
          f"({', '.join(f'{x:.2f}' for x in r['fresh_s'])}; {r['fresh_files']} files): "
          f"{c / f:.2f}x (target <= 1.5x)")
    return not r["ok"]


if __name__ == "__main__":
    sys.exit(main())
