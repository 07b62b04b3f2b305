"""Filtered vector search across selectivities: hdb.VectorIndex (allowed ids)
against hnswlib's filtered search (its `filter=` callable), one thread, in
one run.

    python3 bench/bench_filtered_sweep.py [--name synth_200000x128_c1000_s1]
        [--queries 20] [--per-decade 20] [--seed 0] [--hnswlib-queries 5]

Data: bench/vector_data.py (make it first, e.g. `python3 bench/vector_data.py
synthetic --n 200000 --queries 200 --gt-k 10`). Allowed sets: a uniform
random sample of the rows, at selectivities 10^-4 .. 0.99, `--per-decade`
points per decade. Per point: p50 latency of both (ms), recall@10 against
numpy brute force over the allowed rows, and the ratio to each one's
unfiltered p50. Printed at the end: the largest step ratio between
neighbouring points (max(t[i+1]/t[i], t[i]/t[i+1])) and the worst p50
relative to unfiltered. hdb's time includes building the allowed-row
bitmap from the id array in the binding (python/src/vindex.c, one pass in
C); "prep" is the same search given the allow-set prepared once as
`VectorIndex.allowed_rows(ids)` (no conversion per call; skipped on builds
without it). Unfiltered p50 is measured again before every point and each
point's ratio is to that one (the box's load moves during a sweep).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vector_data  # noqa: E402

import hyperstreamdb as hdb  # noqa: E402


def p50(f, qs):
    ts = []
    for q in qs:
        t = time.perf_counter()
        f(q)
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)) * 1e3


def timed(f, qs, truths, want):
    """p50 ms and mean recall@10 of f over qs (one call per query)."""
    ts, rec = [], []
    for q, tr in zip(qs, truths):
        t = time.perf_counter()
        ids = f(q)
        ts.append(time.perf_counter() - t)
        rec.append(len(tr & set(np.asarray(ids).tolist())) / want)
    return float(np.median(ts)) * 1e3, float(np.mean(rec))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", default="synth_200000x128_c1000_s1")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--per-decade", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-hnswlib", action="store_true")
    ap.add_argument("--hnswlib-queries", type=int, default=5,
                    help="queries for hnswlib (its Python filter callable costs ~1 us a node)")
    a = ap.parse_args()
    base, qs, _, meta = vector_data.load(a.name)
    base = np.ascontiguousarray(base)
    qs = np.ascontiguousarray(qs[: a.queries])
    n, dim = base.shape
    t = time.time()
    ix = hdb.VectorIndex.build(base, m=16, ef_construction=100, threads=0)
    print(f"# {a.name}: {n} x {dim}; hdb build {time.time() - t:.1f} s", flush=True)
    hl = None
    if not a.no_hnswlib:
        try:
            import hnswlib
            t = time.time()
            hl = hnswlib.Index(space="l2", dim=dim)
            hl.init_index(max_elements=n, M=16, ef_construction=100, random_seed=1)
            hl.add_items(base, np.arange(n))
            hl.set_ef(64)
            hl.set_num_threads(1)
            print(f"# hnswlib build {time.time() - t:.1f} s", flush=True)
        except ImportError:
            print("# hnswlib not importable: hdb only")
    unf = p50(lambda q: ix.search(q, 10, threads=1), qs)
    unf_h = p50(lambda q: hl.knn_query(q, k=10), qs) if hl else float("nan")
    print(f"# unfiltered p50: hdb {unf:.4f} ms, hnswlib {unf_h:.4f} ms")
    rng = np.random.default_rng(a.seed)
    perm = rng.permutation(n)
    sels = np.logspace(-4, np.log10(0.99), int(round(a.per_decade * (4 + np.log10(0.99)))) + 1)
    prep_ok = hasattr(ix, "allowed_rows")
    print("sel\tallowed\thdb_ms\thdb_rel\thdb_recall\tprep_ms\tprep_rel\tprep_recall\t"
          "hnswlib_ms\thnswlib_rel\thnswlib_recall")
    rows = []
    for s in sels:
        c = max(1, int(round(s * n)))
        allow = np.sort(perm[:c]).astype(np.int64)
        sub = base[allow].astype(np.float32)
        truths = []
        for q in qs:
            d = ((sub - q) ** 2).sum(1)
            truths.append(set(allow[np.argsort(d, kind="stable")[:10]].tolist()))
        want = min(10, c)
        unf = p50(lambda q: ix.search(q, 10, threads=1), qs)
        th, rh = timed(lambda q: ix.search(q, 10, filter=allow, threads=1)[0], qs, truths, want)
        tp = rp = float("nan")
        if prep_ok:
            prepared = ix.allowed_rows(allow)
            tp, rp = timed(lambda q: ix.search(q, 10, filter=prepared, threads=1)[0], qs, truths,
                           want)
        tl = rl = float("nan")
        if hl is not None:
            mask = np.zeros(n, bool)
            mask[allow] = True
            flt = mask.__getitem__
            nh = a.hnswlib_queries
            tl, rl = timed(lambda q: hl.knn_query(q, k=want, filter=flt)[0][0], qs[:nh],
                           truths[:nh], want)
        rows.append((s, c, th, rh, tp, rp, tl, rl, unf))
        print(f"{s:.6f}\t{c}\t{th:.4f}\t{th / unf:.2f}\t{rh:.3f}\t{tp:.4f}\t{tp / unf:.2f}\t{rp:.3f}\t"
              f"{tl:.4f}\t{tl / unf_h:.2f}\t{rl:.3f}", flush=True)
    r = np.array([(x[2], x[4], x[6]) for x in rows])
    us = np.array([x[8] for x in rows])
    for j, who in ((0, "hdb ids"), (1, "hdb prepared"), (2, "hnswlib")):
        v = r[:, j]
        if np.isnan(v).all():
            continue
        u = us if j < 2 else unf_h
        step = np.maximum(v[1:] / v[:-1], v[:-1] / v[1:])
        i = int(np.argmax(step))
        rel = v / u
        print(f"# {who}: max step {step[i]:.2f}x between {rows[i][1]} and {rows[i + 1][1]} rows; "
              f"p50 / unfiltered max {rel.max():.2f}x (at {rows[int(np.argmax(rel))][1]} rows), "
              f"at 99% {rel[-1]:.2f}x; min recall {min(x[3 + 2 * j] for x in rows):.3f}")


if __name__ == "__main__":
    main()
