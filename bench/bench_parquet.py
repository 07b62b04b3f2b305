#!/usr/bin/env python3
"""HyperStreamDB Parquet vs pyarrow, side by side, one thread each.

Datasets (generated once, cached as Arrow IPC under bench/data/):
  scalars  10M rows: int64, float64, string category (1000 values), timestamp[us],
           bool, int32
  vectors  1M x 768 float32 vectors (fixed_size_list<float32, 768>)

For each dataset and each library: write throughput (MB/s of Arrow data, i.e.
Table.nbytes / seconds), full-read throughput (the same Arrow bytes / seconds)
and peak RSS. Every measurement runs in a fresh subprocess (its peak RSS,
VmHWM, falling back to ru_maxrss, is that measurement's own), and the median of --runs runs is
reported. Each reader reads the file its own library wrote and also the other
library's file.

    python3 bench/bench_parquet.py                 # full size
    python3 bench/bench_parquet.py --quick         # 1M scalars, 50k vectors
    python3 bench/bench_parquet.py --rows 2000000 --vector-rows 100000 --runs 5

Single thread: pyarrow.set_cpu_count(1), set_io_thread_count(1),
use_threads=False; HyperStreamDB with HS_THREADS=1. Both use --compression
(default zstd) with their default settings otherwise (dictionary on,
1 MiB pages). Results go to stdout and to bench/results/<timestamp>.md.
"""

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data")
RESULTS = os.path.join(HERE, "results")


# ------------------------------------------------------------ data


def make_scalars(n, path):
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(42)
    cats = np.array([f"category-{i:04d}" for i in range(1000)])
    t = pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "value": pa.array(rng.standard_normal(n)),
        "category": pa.array(cats[rng.integers(0, 1000, n)]),
        "ts": pa.array(1_600_000_000_000_000 + np.sort(rng.integers(0, 10**13, n)),
                       pa.int64()).view(pa.timestamp("us")),
        "flag": pa.array(rng.random(n) < 0.3),
        "qty": pa.array(rng.integers(-(10**6), 10**6, n).astype(np.int32)),
    })
    _write_ipc(t, path)


def make_vectors(n, dim, path):
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(7)
    flat = pa.array(rng.standard_normal(n * dim, dtype=np.float32))
    t = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                  "embedding": pa.FixedSizeListArray.from_arrays(flat, dim)})
    _write_ipc(t, path)


def _write_ipc(t, path):
    import pyarrow as pa

    tmp = path + ".tmp"
    with pa.OSFile(tmp, "wb") as f, pa.ipc.new_file(f, t.schema) as w:
        w.write_table(t, max_chunksize=1 << 20)
    os.replace(tmp, path)


# ------------------------------------------------------------ one measurement (child)


def child(args):
    """Run one measurement in this fresh process; print a JSON line."""
    os.environ["HS_THREADS"] = "1"
    import pyarrow as pa
    import pyarrow.parquet as pq

    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    op, lib, src, dst, codec = args.child
    if op == "write":
        with pa.memory_map(src) as f:
            table = pa.ipc.open_file(f).read_all()
        nbytes = table.nbytes
        t0 = time.perf_counter()
        if lib == "pyarrow":
            pq.write_table(table, dst, compression=codec, use_dictionary=True)
        else:
            import hyperstreamdb as hdb

            hdb.parquet.write_table(table, dst, compression=codec)
        secs = time.perf_counter() - t0
    else:
        t0 = time.perf_counter()
        if lib == "pyarrow":
            table = pq.read_table(src, use_threads=False)
        else:
            import hyperstreamdb as hdb

            table = hdb.parquet.read_table(src)
        secs = time.perf_counter() - t0
        nbytes = table.nbytes
    print(json.dumps({"seconds": secs, "nbytes": nbytes, "rss_mb": peak_rss_mb()}))


def peak_rss_mb():
    """This process's peak RSS. VmHWM starts afresh at exec; ru_maxrss on Linux
    carries the parent's peak across fork+exec, so it is only the fallback."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure(op, lib, src, dst, codec, runs):
    out = []
    for _ in range(runs):
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", op, lib, src,
                            dst, codec], capture_output=True, text=True)
        if p.returncode != 0:
            return {"error": (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]}
        out.append(json.loads(p.stdout.strip().splitlines()[-1]))
    secs = statistics.median(r["seconds"] for r in out)
    return {"seconds": secs, "mb_s": out[0]["nbytes"] / secs / 1e6,
            "rss_mb": statistics.median(r["rss_mb"] for r in out),
            "arrow_mb": out[0]["nbytes"] / 1e6}


# ------------------------------------------------------------ harness


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            mem = "%.0f GiB RAM" % (int(f.readline().split()[1]) / 2**20)
    except OSError:
        pass
    import pyarrow

    return (f"{cpu}, {os.cpu_count()} cores, {mem}; Python {platform.python_version()}, "
            f"pyarrow {pyarrow.__version__}")


def fmt(r, key, spec):
    return "error: " + r["error"][:60] if "error" in r else format(r[key], spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000, help="scalar rows")
    ap.add_argument("--vector-rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--quick", action="store_true", help="1M scalar rows, 50k vectors, 1 run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--compression", default="zstd")
    ap.add_argument("--only", choices=["scalars", "vectors"])
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    if args.quick:
        args.rows, args.vector_rows, args.runs = 1_000_000, 50_000, 1

    os.makedirs(DATA, exist_ok=True)
    os.makedirs(RESULTS, exist_ok=True)
    datasets = []
    if args.only in (None, "scalars"):
        p = os.path.join(DATA, f"scalars_{args.rows}.arrow")
        if not os.path.exists(p):
            make_scalars(args.rows, p)
        datasets.append((f"scalars ({args.rows:,} rows x 6 cols)", "scalars", p))
    if args.only in (None, "vectors"):
        p = os.path.join(DATA, f"vectors_{args.vector_rows}x{args.dim}.arrow")
        if not os.path.exists(p):
            make_vectors(args.vector_rows, args.dim, p)
        datasets.append((f"vectors ({args.vector_rows:,} x {args.dim} float32)", "vectors", p))

    libs = ["hyperstreamdb", "pyarrow"]
    lines = [f"Machine: {machine()}", "",
             f"Command: `python3 bench/bench_parquet.py {' '.join(sys.argv[1:])}`; "
             f"compression {args.compression}; median of {args.runs} run(s); one thread each; "
             "MB = 10^6 bytes of Arrow data.", ""]
    for title, key, src in datasets:
        files = {lib: os.path.join(DATA, f"{key}_{lib}.parquet") for lib in libs}
        rows = []
        w = {lib: measure("write", lib, src, files[lib], args.compression, args.runs)
             for lib in libs}
        for lib in libs:
            size = os.path.getsize(files[lib]) / 1e6 if os.path.exists(files[lib]) else 0
            rows.append((f"write ({lib})", lib, w[lib], f"{size:.1f} MB file"))
        r = {}
        for reader in libs:
            for writer in libs:
                if not os.path.exists(files[writer]):
                    continue
                r[(reader, writer)] = measure("read", reader, files[writer], "-",
                                              args.compression, args.runs)
                rows.append((f"read {writer} file ({reader})", reader, r[(reader, writer)], ""))
        lines += [f"### {title}", "",
                  "| operation | library | MB/s | seconds | peak RSS MB | note |",
                  "|---|---|---:|---:|---:|---|"]
        for op, lib, res, note in rows:
            lines.append(f"| {op} | {lib} | {fmt(res, 'mb_s', '.0f')} | "
                         f"{fmt(res, 'seconds', '.3f')} | {fmt(res, 'rss_mb', '.0f')} | {note} |")

        def ratio(a, b):
            if "error" in a or "error" in b:
                return "n/a"
            return f"{a['mb_s'] / b['mb_s']:.2f}x"

        lines += ["", "Ratios (HyperStreamDB / pyarrow throughput; >1 means faster):",
                  f"write {ratio(w['hyperstreamdb'], w['pyarrow'])}"]
        if ("hyperstreamdb", "hyperstreamdb") in r and ("pyarrow", "pyarrow") in r:
            lines[-1] += (f", read own file {ratio(r[('hyperstreamdb', 'hyperstreamdb')], r[('pyarrow', 'pyarrow')])}")
        if ("hyperstreamdb", "pyarrow") in r and ("pyarrow", "pyarrow") in r:
            lines[-1] += (f", read pyarrow's file {ratio(r[('hyperstreamdb', 'pyarrow')], r[('pyarrow', 'pyarrow')])}")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    out = os.path.join(RESULTS, time.strftime("%Y%m%d-%H%M%S") + ".md")
    with open(out, "w") as f:
        f.write(text + "\n")
    print(f"(written to {os.path.relpath(out, REPO)})")


if __name__ == "__main__":
    sys.exit(main())
