"""The cost of index binding and checksum verification on selective queries
(issue 12's performance target: <= 3 % of issue 4's selective-query latencies).

Builds issue 4's shape (category with 1,000 values, unique shuffled ids,
price, ts, flag) in a few data files with an index on every column, then
times selective filtered reads (all five columns) in ONE process, the same
build, alternating two modes in blocks:

  on    as shipped: every read checks each index column's binding to the
        data file it narrows, each data page's CRC against the set of pages
        verified before, an opened index blob's checksum against the set of
        blobs verified before, and Python asks the core whether any index
        was refused (the IndexIgnoredWarning check around to_arrow)
  off   those repeated checks turned off: the core's benchmark-only switch
        hs_bench_skip_repeat_verify (src/common/verify_switch.h, called
        through ctypes; nothing else can turn it on) and the two Python
        calls replaced by no-ops

A warm-up in mode "on" first verifies everything the queries touch (the
first query of a file version reads and CRCs its index blobs and pages
whole; that one-time cost is printed separately), so both modes return the
same rows (checked). Each pair is one block of --block runs per mode (one
run by default), the order alternating pair by pair, so both modes see the
same machine; a block's p50 is its latency. Both wall time and CPU time
(time.process_time: every thread of the process, not the time spent
waiting for a core, which dominates the noise on a shared machine) are
reported per query: the median block latency in each mode (microseconds),
their ratio on / off with a 95 % bootstrap interval (pairs resampled), and
the median of the per-pair ratios; then the median of every pair's ratio
over all queries.

    python3 bench/bench_index_binding.py                  # 1M rows, 4 files
    python3 bench/bench_index_binding.py --rows 2000000 --files 8

Against a build without the switch (an older one, for a before/after of
two builds in separate processes) it only times mode "on".
"""

import argparse
import ctypes
import shutil
import statistics
import tempfile
import time

import numpy as np
import pyarrow as pa

import hyperstreamdb as hdb
from hyperstreamdb import _binding, _core


def make_table(path, rows, files):
    rng = np.random.default_rng(1)
    t = hdb.Table(path)
    ids = rng.permutation(rows).astype(np.int64)
    per = rows // files
    for f in range(files):
        s = slice(f * per, (f + 1) * per)
        n = per
        t.write(pa.table({
            "category": pa.array([f"cat{v:04d}" for v in rng.integers(0, 1000, n)]),
            "id": ids[s],
            "price": np.round(rng.uniform(0, 1000, n), 2),
            "ts": pa.array(rng.integers(0, 10**15, n), pa.timestamp("us")),
            "flag": rng.random(n) < 0.1}))
    for c in ("category", "id", "price", "ts", "flag"):
        t.add_index(c)
    t.wait_for_indexes()
    return t


class Switch:
    """Mode "off": the core's repeated checks and the Python refusal check
    turned off; mode "on": as shipped."""

    def __init__(self):
        try:
            self.fn = ctypes.CDLL(_core.__file__).hs_bench_skip_repeat_verify
        except (OSError, AttributeError):
            self.fn = None
        if self.fn is not None:
            self.fn.argtypes = [ctypes.c_int]
            self.fn.restype = ctypes.c_int
        self.rejections, self.warn_since = _binding.rejections, _binding.warn_since

    def set(self, off):
        self.fn(1 if off else 0)
        if off:
            _binding.rejections = lambda: 0
            _binding.warn_since = lambda before, stacklevel=3: None
        else:
            _binding.rejections, _binding.warn_since = self.rejections, self.warn_since


def block(t, flt, reps):
    """p50 wall and p50 CPU time (all threads of the process) of `reps`
    runs, in microseconds."""
    wall, cpu = [], []
    for _ in range(reps):
        c0, t0 = time.process_time_ns(), time.perf_counter_ns()
        t.to_arrow(filter=flt)
        wall.append((time.perf_counter_ns() - t0) / 1e3)
        cpu.append((time.process_time_ns() - c0) / 1e3)
    return statistics.median(wall), statistics.median(cpu)


def bootstrap(on, off, n=2000):
    """95 % interval of median(on) / median(off), resampling the pairs."""
    rng = np.random.default_rng(7)
    on, off = np.asarray(on), np.asarray(off)
    idx = rng.integers(0, len(on), (n, len(on)))
    r = np.median(on[idx], axis=1) / np.median(off[idx], axis=1)
    return float(np.quantile(r, 0.025)), float(np.quantile(r, 0.975))


def quartiles(xs):
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--pairs", type=int, default=1500)
    ap.add_argument("--block", type=int, default=1, help="runs per mode in a pair")
    ap.add_argument("--table", help="reuse (or create and keep) the table at this path")
    a = ap.parse_args()
    root = None
    if a.table:
        try:
            t = hdb.Table(a.table)
            if t.to_arrow(filter="id = 0").num_rows != 1:
                raise ValueError
        except Exception:
            t = make_table(a.table, a.rows, a.files)
    else:
        root = tempfile.mkdtemp(prefix="hs_bind_")
        t = make_table(root + "/t", a.rows, a.files)
    try:
        k = max(1, a.rows // 100_000)
        queries = [("id range 0.001%", f"id BETWEEN 1000 AND {1000 + k - 1}"),
                   ("cat AND price 0.01%", "category = 'cat0003' AND price < 100.0"),
                   ("category = 0.1%", "category = 'cat0007'"),
                   ("id = 1 row", "id = 4242")]
        sw = Switch()
        print(f"hyperstreamdb from {hdb.__file__}")
        print(f"{a.rows:,} rows in {a.files} files; {a.pairs} pairs of {a.block}-run blocks "
              "per query, order alternating; p50 of a block in microseconds")
        first = {}
        for name, flt in queries:  # one-time verification (this process, first use)
            t0 = time.perf_counter()
            want = t.to_arrow(filter=flt)
            first[name] = (time.perf_counter() - t0) * 1e6
            t.to_arrow(filter=flt)
            if sw.fn is not None:
                sw.set(True)
                got = t.to_arrow(filter=flt)
                sw.set(False)
                assert got.equals(want), f"{name}: modes disagree"
        if sw.fn is None:
            print("this build has no hs_bench_skip_repeat_verify: timing mode 'on' only")
        print(f"  {'':22s} {'':>8s} {'wall time':^42s} {'CPU time':^42s}")
        print(f"  {'query':22s} {'first':>8s}" +
              f" {'on p50':>8s} {'off p50':>8s} {'on/off':>7s} {'95% CI':>13s} {'pairs':>6s}" * 2)
        all_ratios = [[], []]
        for name, flt in queries:
            on, off = [[], []], [[], []]
            for p in range(a.pairs):
                if sw.fn is None:
                    for j, v in enumerate(block(t, flt, a.block)):
                        on[j].append(v)
                    continue
                res = {}
                for mode in ((False, True) if p % 2 == 0 else (True, False)):
                    sw.set(mode)
                    res[mode] = block(t, flt, a.block)
                sw.set(False)
                for j in range(2):
                    on[j].append(res[False][j])
                    off[j].append(res[True][j])
            line = f"  {name:22s} {first[name]:8.0f}"
            for j in range(2):
                if not off[j]:
                    line += f" {statistics.median(on[j]):8.1f}"
                    continue
                ratios = [x / y for x, y in zip(on[j], off[j]) if y > 0]
                all_ratios[j] += ratios
                lo, hi = bootstrap(on[j], off[j])
                m_on, m_off = statistics.median(on[j]), statistics.median(off[j])
                line += (f" {m_on:8.1f} {m_off:8.1f} {m_on / m_off:7.4f} {lo:6.4f}-{hi:6.4f}"
                         f" {statistics.median(ratios):6.4f}")
            print(line)
        for j, what in enumerate(("wall", "CPU")):
            if all_ratios[j]:
                r = all_ratios[j]
                lo, hi = quartiles(r)
                print(f"  {what}: all {len(r)} pairs: median on/off {statistics.median(r):.4f} "
                      f"(IQR {lo:.4f}-{hi:.4f})")
    finally:
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
