"""Vector search, side by side in one run on the same data: HyperStreamDB's
VectorIndex against hnswlib (HNSW), FAISS (IndexHNSWFlat; IVF-PQ with exact
re-ranking), LanceDB (IVF_PQ; IVF_HNSW_SQ) and the original HyperStreamDB.

    bash bench/vector_env.sh                       # once: peers + embedding model
    python3 bench/bench_vector.py                  # 200k x 128 synthetic + WordNet MiniLM
    python3 bench/bench_vector.py --data synth --n 1000000 --engines ours,hnswlib
    python3 bench/bench_vector.py --quick          # 20k x 32, a smoke run

Every engine runs in its own subprocess (ours: this interpreter, which must
import hyperstreamdb; peers: bench/.venv-vector/bin/python; the original:
bench/.venv-original/bin/python) that loads the cached data
(bench/vector_data.py), builds the index with all cores, and reports:
build seconds, index bytes (serialised / on disk), peak RSS (ru_maxrss) and
RSS before the build (the data itself), then for each search setting
(ef_search or nprobe sweep) recall@10 against exact ground truth,
single-query QPS (one query per call, one thread: --single queries) and
batched QPS (all queries in one call, all cores where the engine can).
Each timing is the median of --reps (3) repetitions. An engine that is
missing or fails is reported as "not available: why".
Results: printed as Markdown and saved to bench/results/vector-<time>.md
and .json; the summary line per engine is the best single-query QPS at
recall@10 >= --target (0.95) and its ratio to hnswlib's.
"""

import argparse
import glob
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vector_data  # noqa: E402

VENV_VECTOR = os.path.join(HERE, ".venv-vector", "bin", "python")
VENV_ORIGINAL = os.path.join(HERE, ".venv-original", "bin", "python")

ENGINES = ["ours", "ours_sq8", "ours_pq", "hnswlib", "faiss_hnsw", "faiss_ivfpq", "lance_ivfpq",
           "lance_hnsw_sq", "original"]
# Fine around recall 0.95 (ef 20-40 on our sets), where the threshold
# falls: a coarse grid charges an engine a whole step for missing 0.95 by 0.004.
EF_SWEEP = [10, 16, 20, 24, 28, 32, 40, 48, 64, 96, 128, 256]
NPROBE_SWEEP = [1, 2, 4, 8, 16, 32, 64, 128]


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def recall_at(ids, gt, k=10):
    hit = 0
    for r, g in zip(ids, gt):
        hit += len(set(int(i) for i in r[:k]) & set(int(i) for i in g[:k]))
    return hit / (k * len(gt))


def dir_bytes(d):
    total = 0
    for root, _, files in os.walk(d):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
    return total


# ----------------------------------------------------------------- engines
# Each engine: build(base, metric, args) -> state; size(state) -> bytes;
# settings(args, state) -> list of (label, value); search_one(state, q, k, v)
# -> ids; search_batch(state, Q, k, v) -> ids (nq x k).


class Ours:
    def __init__(self, quantizer=None, partitions=0):
        self.quantizer = quantizer
        self.partitions = partitions  # 0: vidx's default (one graph below 4M rows)

    def build(self, base, metric, a):
        import hyperstreamdb.vector as hv
        self.ix = hv.VectorIndex.build(np.ascontiguousarray(base), metric=metric, m=a.m,
                                       ef_construction=a.efc, quantizer=self.quantizer,
                                       partitions=self.partitions, threads=0)
        return self

    def size(self):
        return self.ix.nbytes

    def settings(self, a):
        return [("ef", e) for e in EF_SWEEP]

    def search_one(self, q, k, v):
        return self.ix.search(q, k=k, ef_search=max(v, k), threads=1)[0]

    def search_batch(self, Q, k, v):
        return self.ix.search(Q, k=k, ef_search=max(v, k), threads=0)[0]


class Hnswlib:
    def build(self, base, metric, a):
        import hnswlib
        self.ix = hnswlib.Index(space="cosine" if metric == "cosine" else "l2", dim=base.shape[1])
        self.ix.init_index(max_elements=base.shape[0], M=a.m, ef_construction=a.efc, random_seed=1)
        self.ix.add_items(np.ascontiguousarray(base), np.arange(base.shape[0]), num_threads=-1)
        return self

    def size(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "ix.bin")
            self.ix.save_index(p)
            return os.path.getsize(p)

    def settings(self, a):
        return [("ef", e) for e in EF_SWEEP]

    def search_one(self, q, k, v):
        self.ix.set_ef(max(v, k))
        return self.ix.knn_query(q, k=k, num_threads=1)[0][0]

    def search_batch(self, Q, k, v):
        self.ix.set_ef(max(v, k))
        return self.ix.knn_query(Q, k=k, num_threads=-1)[0]


def faiss_metric(faiss, metric):
    return faiss.METRIC_INNER_PRODUCT if metric == "cosine" else faiss.METRIC_L2


class FaissHnsw:
    def build(self, base, metric, a):
        import faiss
        self.faiss = faiss
        self.cores = faiss.omp_get_max_threads()
        self.ix = faiss.IndexHNSWFlat(base.shape[1], a.m, faiss_metric(faiss, metric))
        self.ix.hnsw.efConstruction = a.efc
        self.ix.add(np.ascontiguousarray(base))  # cosine data are unit length
        return self

    def size(self):
        return int(self.faiss.serialize_index(self.ix).size)

    def settings(self, a):
        return [("ef", e) for e in EF_SWEEP]

    def search_one(self, q, k, v):
        self.faiss.omp_set_num_threads(1)
        self.ix.hnsw.efSearch = max(v, k)
        return self.ix.search(q.reshape(1, -1), k)[1][0]

    def search_batch(self, Q, k, v):
        self.faiss.omp_set_num_threads(self.cores)
        self.ix.hnsw.efSearch = max(v, k)
        return self.ix.search(Q, k)[1]


class FaissIvfPq:
    """IVF with 4*sqrt(n) lists, PQ dim/4 x 8 bits, exact re-ranking of the
    best 10*k (IndexRefineFlat), nprobe swept."""

    def build(self, base, metric, a):
        import faiss
        self.faiss = faiss
        self.cores = faiss.omp_get_max_threads()
        n, dim = base.shape
        nlist = max(1, int(4 * np.sqrt(n)))
        fm = faiss_metric(faiss, metric)
        coarse = faiss.IndexFlatIP(dim) if fm == faiss.METRIC_INNER_PRODUCT else faiss.IndexFlatL2(dim)
        ivf = faiss.IndexIVFPQ(coarse, dim, nlist, max(1, dim // 4), 8, fm)
        ivf.own_fields = True
        coarse.this.disown()
        x = np.ascontiguousarray(base)
        rng = np.random.default_rng(1)
        ivf.train(x[rng.choice(n, min(n, 256 * nlist), replace=False)])
        self.ivf = ivf
        self.ix = faiss.IndexRefineFlat(ivf)
        self.ix.k_factor = 10
        self.ix.add(x)
        return self

    def size(self):
        return int(self.faiss.serialize_index(self.ix).size)

    def settings(self, a):
        return [("nprobe", p) for p in NPROBE_SWEEP]

    def search_one(self, q, k, v):
        self.faiss.omp_set_num_threads(1)
        self.ivf.nprobe = v
        return self.ix.search(q.reshape(1, -1), k)[1][0]

    def search_batch(self, Q, k, v):
        self.faiss.omp_set_num_threads(self.cores)
        self.ivf.nprobe = v
        return self.ix.search(Q, k)[1]


class Lance:
    """LanceDB on a local table; index IVF_PQ (sqrt(n) partitions, dim/8
    sub-vectors, refine_factor 10, nprobes swept) or IVF_HNSW_SQ (one
    partition per 100k rows, m and ef_construction as the others, ef
    swept)."""

    def __init__(self, kind):
        self.kind = kind

    def build(self, base, metric, a):
        import lancedb
        import pyarrow as pa
        self.dir = tempfile.mkdtemp(prefix="lance-", dir=a.tmp)
        db = lancedb.connect(self.dir)
        n, dim = base.shape
        x = np.ascontiguousarray(base, dtype=np.float32)
        vec = pa.FixedSizeListArray.from_arrays(pa.array(x.reshape(-1)), dim)
        t = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)), "vector": vec})
        self.tbl = db.create_table("t", data=t)
        self.metric = "cosine" if metric == "cosine" else "l2"
        t0 = time.perf_counter()
        if self.kind == "IVF_PQ":
            self.parts = max(1, int(np.sqrt(n)))
            self.tbl.create_index(metric=self.metric, index_type="IVF_PQ",
                                  num_partitions=self.parts, num_sub_vectors=max(1, dim // 8),
                                  vector_column_name="vector")
        else:
            self.parts = max(1, n // 100000)
            self.tbl.create_index(metric=self.metric, index_type="IVF_HNSW_SQ",
                                  num_partitions=self.parts, m=a.m, ef_construction=a.efc,
                                  vector_column_name="vector")
        self.index_s = time.perf_counter() - t0
        return self

    def size(self):
        return dir_bytes(os.path.join(self.dir, "t.lance", "_indices"))

    def settings(self, a):
        if self.kind == "IVF_PQ":
            return [("nprobe", p) for p in NPROBE_SWEEP]
        return [("ef", e) for e in EF_SWEEP]

    def _query(self, q, k, v):
        s = self.tbl.search(q, vector_column_name="vector")
        s = s.distance_type(self.metric) if hasattr(s, "distance_type") else s.metric(self.metric)
        if self.kind == "IVF_PQ":
            s = s.nprobes(v).refine_factor(10)
        else:
            s = s.nprobes(self.parts).ef(max(v, k))
        return s.limit(k).select(["id"])

    def search_one(self, q, k, v):
        return self._query(q, k, v).to_arrow()["id"].to_numpy()

    def search_batch(self, Q, k, v):
        # LanceDB takes a list of query vectors in one call (a query_index
        # column says which query a row answers); fall back to a loop.
        try:
            t = self._query([list(map(float, r)) for r in Q], k, v).with_row_id(False).to_arrow()
            if "query_index" not in t.column_names:
                raise ValueError("no query_index")
            qi = t["query_index"].to_numpy()
            ids = t["id"].to_numpy()
            out = np.full((len(Q), k), -1, dtype=np.int64)
            fill = np.zeros(len(Q), dtype=np.int64)
            for i, r in zip(qi, ids):
                if fill[i] < k:
                    out[i, fill[i]] = r
                    fill[i] += 1
            return out
        except Exception:
            return np.stack([self.search_one(q, k, v) for q in Q])


class Original:
    """The original HyperStreamDB (PyPI hyperstreamdb 0.9.0): a table with
    an HNSW index on the vector column, searched through its Python API."""

    def build(self, base, metric, a):
        import hyperstreamdb as o
        import pyarrow as pa
        self.o = o
        self.dir = tempfile.mkdtemp(prefix="orig-", dir=a.tmp)
        n, dim = base.shape
        x = np.ascontiguousarray(base, dtype=np.float32)
        vec = pa.FixedSizeListArray.from_arrays(pa.array(x.reshape(-1)), dim)
        t = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)), "embedding": vec})
        self.t = o.Table(self.dir)
        self.t.write_arrow(t)
        self.t.commit()
        self.t.add_index("embedding", "hnsw")
        self.t.wait_for_background_tasks()
        return self

    def size(self):
        return sum(os.path.getsize(p) for p in glob.glob(os.path.join(self.dir, "**", "*"), recursive=True)
                   if os.path.isfile(p) and not p.endswith(".parquet"))

    def settings(self, a):
        return [("default", 0)]

    def search_one(self, q, k, v):
        r = self.t.search("embedding", q.tolist(), k, columns=["id"])
        if hasattr(r, "to_pandas"):
            r = r.to_pandas()
        ids = np.full(k, -1, dtype=np.int64)
        got = np.asarray(r["id"])[:k]
        ids[:len(got)] = got
        return ids

    def search_batch(self, Q, k, v):  # no batched API: a loop
        return np.stack([self.search_one(q, k, v) for q in Q])


def make_engine(name):
    return {"ours": lambda: Ours(None), "ours_sq8": lambda: Ours("sq8"), "ours_pq": lambda: Ours("pq"),
            "ours_p1": lambda: Ours(None, partitions=1),
            "hnswlib": Hnswlib, "faiss_hnsw": FaissHnsw, "faiss_ivfpq": FaissIvfPq,
            "lance_ivfpq": lambda: Lance("IVF_PQ"), "lance_hnsw_sq": lambda: Lance("IVF_HNSW_SQ"),
            "original": Original}[name]()


def worker(a):
    base, queries, gt, meta = vector_data.load(a.dataset)
    base = np.ascontiguousarray(base)  # into memory: counted in rss_base
    k = 10
    res = {"engine": a.worker, "dataset": a.dataset}
    rss0 = rss_mb()
    eng = make_engine(a.worker)
    t0 = time.perf_counter()
    eng.build(base, meta["metric"], a)
    res["build_s"] = time.perf_counter() - t0
    res["rss_base_mb"] = rss0
    res["rss_after_build_mb"] = rss_mb()
    try:
        res["index_bytes"] = eng.size()
    except Exception as e:  # size is informative only
        res["index_bytes"] = None
        res["size_error"] = repr(e)
    nsingle = min(a.single, len(queries))
    curve = []
    deadline = time.perf_counter() + a.sweep_seconds
    for label, v in eng.settings(a):
        tbs, tss = [], []
        for _ in range(a.reps):  # medians: this box is shared and noisy
            t0 = time.perf_counter()
            ids_b = eng.search_batch(queries, k, v)
            tbs.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for i in range(nsingle):
                eng.search_one(queries[i], k, v)
            tss.append(time.perf_counter() - t0)
        rec = recall_at(ids_b, gt)
        tb, ts = float(np.median(tbs)), float(np.median(tss))
        curve.append({"param": label, "value": v, "recall": rec, "qps_single": nsingle / ts,
                      "qps_batch": len(queries) / tb})
        if rec >= 0.999 or time.perf_counter() > deadline:
            break
    res["curve"] = curve
    res["rss_peak_mb"] = rss_mb()
    print("RESULT " + json.dumps(res))


# ------------------------------------------------------------------ driver


def interpreter(engine):
    if engine.startswith("ours"):
        return sys.executable
    if engine == "original":
        return VENV_ORIGINAL
    return VENV_VECTOR


def run_engine(engine, dataset, a):
    py = interpreter(engine)
    if not os.path.exists(py):
        return {"engine": engine, "error": f"not available: {py} missing (bench/*_env.sh)"}
    cmd = [py, os.path.abspath(__file__), "--worker", engine, "--dataset", dataset,
           "--m", str(a.m), "--efc", str(a.efc), "--single", str(a.single),
           "--sweep-seconds", str(a.sweep_seconds), "--reps", str(a.reps), "--tmp", a.tmp]
    env = dict(os.environ)
    if engine == "original":
        env["PYTHONPATH"] = ""  # never our package
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.engine_timeout, env=env,
                           cwd=a.tmp)
    except subprocess.TimeoutExpired:
        return {"engine": engine, "error": f"not available: timed out after {a.engine_timeout} s"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            r["wall_s"] = time.time() - t0
            return r
    tail = (p.stderr or p.stdout or "no output").strip().splitlines()[-1:]
    return {"engine": engine, "error": "not available: " + " | ".join(tail)[:300]}


def best_at(r, target, key="qps_single"):
    ok = [c for c in r.get("curve", []) if c["recall"] >= target]
    return max(ok, key=lambda c: c[key]) if ok else None


def report(results, meta, a):
    lines = [f"### {meta['kind']}: {meta['n']} x {meta['dim']} ({meta['metric']}), "
             f"{meta['queries']} queries, k = 10", ""]
    lines.append(f"M = {a.m}, ef_construction = {a.efc} for every HNSW; single-query: "
                 f"{a.single} queries one at a time on one thread; batched: all queries in one "
                 f"call on all cores ({os.cpu_count()}).")
    lines.append("")
    lines.append(f"| engine | build s | index MB | peak RSS MB (data alone) | best single QPS at "
                 f"recall >= {a.target} | vs hnswlib | best batched QPS at recall >= {a.target} |")
    lines.append("|---|---|---|---|---|---|---|")
    ref = next((r for r in results if r["engine"] == "hnswlib" and "error" not in r), None)
    ref_b = best_at(ref, a.target) if ref else None
    for r in results:
        if "error" in r:
            lines.append(f"| {r['engine']} | {r['error']} | | | | | |")
            continue
        b = best_at(r, a.target)
        bb = best_at(r, a.target, "qps_batch")
        size = f"{r['index_bytes'] / 1e6:.1f}" if r.get("index_bytes") else "?"
        single = (f"{b['qps_single']:.0f} ({b['param']} {b['value']}, recall {b['recall']:.3f})"
                  if b else f"never (max recall {max(c['recall'] for c in r['curve']):.3f})")
        ratio = f"{b['qps_single'] / ref_b['qps_single']:.2f}" if b and ref_b else "-"
        batch = f"{bb['qps_batch']:.0f} ({bb['param']} {bb['value']})" if bb else "never"
        lines.append(f"| {r['engine']} | {r['build_s']:.1f} | {size} | {r['rss_peak_mb']:.0f} "
                     f"({r['rss_base_mb']:.0f}) | {single} | {ratio} | {batch} |")
    lines.append("")
    lines.append("Recall@10 / single QPS / batched QPS per setting:")
    lines.append("")
    for r in results:
        if "error" in r:
            continue
        pts = ", ".join(f"{c['param']} {c['value']}: {c['recall']:.3f} / {c['qps_single']:.0f} / "
                        f"{c['qps_batch']:.0f}" for c in r["curve"])
        lines.append(f"* {r['engine']}: {pts}")
    lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="both", choices=["synth", "wordnet", "both"])
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--clusters", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--embed-seconds", type=float, default=240)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--efc", type=int, default=100)
    ap.add_argument("--single", type=int, default=300)
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sweep-seconds", type=float, default=120)
    ap.add_argument("--engine-timeout", type=int, default=1200)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--worker", default=None)
    ap.add_argument("--dataset", default=None)
    a = ap.parse_args()
    if a.tmp is None:
        a.tmp = tempfile.mkdtemp(prefix="bench-vector-")
    if a.worker:
        return worker(a)
    if a.quick:
        a.n, a.dim, a.clusters, a.queries, a.single = 20000, 32, 50, 200, 100
    datasets = []
    if a.data in ("synth", "both"):
        datasets.append(vector_data.make_synthetic(a.n, a.dim, a.clusters, a.queries, 100, 1))
    if a.data in ("wordnet", "both"):
        if not vector_data.exists("wordnet_minilm"):
            py = VENV_VECTOR if os.path.exists(VENV_VECTOR) else sys.executable
            subprocess.run([py, os.path.join(HERE, "vector_data.py"), "wordnet", "--seconds",
                            str(a.embed_seconds), "--queries", str(min(a.queries, 1000))])
        if vector_data.exists("wordnet_minilm"):
            datasets.append("wordnet_minilm")
        else:
            print("wordnet embeddings not available (see above)", file=sys.stderr)
    engines = [e for e in a.engines.split(",") if e]
    out_md, out_json = [], []
    stamp = time.strftime("%Y%m%d-%H%M%S")
    print(f"# bench_vector {stamp}: {' '.join(sys.argv[1:])}\n")
    for ds in datasets:
        meta = vector_data.load(ds)[3]
        results = []
        for e in engines:
            r = run_engine(e, ds, a)
            results.append(r)
            brief = r.get("error") or (f"build {r['build_s']:.1f} s, " + ", ".join(
                f"{c['value']}:{c['recall']:.3f}/{c['qps_single']:.0f}" for c in r["curve"]))
            print(f"[{ds}] {e}: {brief}", flush=True)
        md = report(results, meta, a)
        print(md, flush=True)
        out_md.append(md)
        out_json.append({"dataset": ds, "meta": meta, "results": results})
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", f"vector-{stamp}.md"), "w") as f:
        f.write(f"bench_vector.py {' '.join(sys.argv[1:])}\n\n" + "\n".join(out_md))
    with open(os.path.join(HERE, "results", f"vector-{stamp}.json"), "w") as f:
        json.dump(out_json, f, indent=1)


if __name__ == "__main__":
    main()
