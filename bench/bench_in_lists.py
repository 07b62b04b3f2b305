"""IN / NOT IN lists through the table's filter against DuckDB, one run.

Data (fixed seed): `rows` rows of int64 `id`, string `sec` with a bitmap
index, int64 `k` (uniform over rows/5 values) with an inverted index,
float64 `price`. `sec` has 58 values: 40 small ones (s rows each), 2 medium
ones (20·s rows each) and 16 big ones sharing the rest, with s = rows/800,
so `sec IN (2 medium)`, `sec IN (40 small)`, `sec IN (40 small + 960 or
9,960 absent values)` and `sec NOT IN (2 medium + 16 big)` all select the
same 5 % of the rows. `k IN (n values)` draws n values of the data.

Each query: p50 of `t.to_arrow(filter=f)` (all columns) and of DuckDB's
`SELECT * FROM data WHERE f` over the same Arrow table (`.to_arrow_table()`), both in
this process, alternating. One thread each (HS_THREADS=1, DuckDB threads=1).

    python3 bench/bench_in_lists.py                 # 12K and 1M rows
    python3 bench/bench_in_lists.py --rows 12000 --reps 50
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

os.environ.setdefault("HS_THREADS", "1")

import duckdb  # noqa: E402
import pyarrow as pa  # noqa: E402

import hyperstreamdb as hdb  # noqa: E402


def make(rows, seed=1):
    rng = random.Random(seed)
    s = max(1, rows // 800)
    small = [f"small{i:02d}" for i in range(40)]
    medium = ["medium0", "medium1"]
    big = [f"big{i:02d}" for i in range(16)]
    secs = [v for v in small for _ in range(s)] + [v for v in medium for _ in range(20 * s)]
    rest = rows - len(secs)
    secs += [big[i % 16] for i in range(rest)]
    rng.shuffle(secs)
    nk = max(1, rows // 5)
    t = pa.table({
        "id": pa.array(range(rows), pa.int64()),
        "sec": pa.array(secs, pa.string()),
        "k": pa.array([rng.randrange(nk) for _ in range(rows)], pa.int64()),
        "price": pa.array([rng.random() * 100 for _ in range(rows)], pa.float64()),
    })
    return t, small, medium, big


def q(vals):
    return ", ".join("'" + v + "'" for v in vals)


def p50(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def run(rows, reps, out):
    data, small, medium, big = make(rows)
    absent = [f"absent{i:05d}" for i in range(9960)]
    rng = random.Random(2)
    ks = data.column("k").to_pylist()
    filters = [
        ("sec IN 2", f"sec IN ({q(medium)})"),
        ("sec IN 40", f"sec IN ({q(small)})"),
        ("sec IN 1,000", f"sec IN ({q(small + absent[:960])})"),
        ("sec IN 10,000", f"sec IN ({q(small + absent)})"),
        ("sec NOT IN 18", f"sec NOT IN ({q(medium + big)})"),
        ("sec = a OR ... (40)", " OR ".join(f"sec = '{v}'" for v in small)),
    ]
    for n in (2, 40, 1000, 10000):
        vals = rng.sample(ks, min(n, len(ks)))
        filters.append((f"k IN {n:,}", f"k IN ({', '.join(map(str, vals))})"))
    with tempfile.TemporaryDirectory() as d:
        t = hdb.Table(os.path.join(d, "t"))
        t.write(data)
        t.add_index("sec", "bitmap", progress=False)
        t.add_index("k", "inverted", progress=False)
        t.wait_for_indexes()
        con = duckdb.connect()
        con.execute("SET threads=1")
        con.register("data", data)
        base = None
        for name, f in filters:
            n_ours = t.to_arrow(filter=f).num_rows
            n_duck = con.execute(f"SELECT * FROM data WHERE {f}").to_arrow_table().num_rows
            assert n_ours == n_duck, (name, n_ours, n_duck)
            idx = t.explain(f).stats["files_indexed"]
            ours = p50(lambda: t.to_arrow(filter=f), reps)
            duck = p50(lambda: con.execute(f"SELECT * FROM data WHERE {f}").to_arrow_table(), reps)
            if name == "sec IN 2":
                base = ours
            line = (f"| {rows:,} | {name} | {n_ours:,} | {idx} | {ours:.3f} | {duck:.3f} | "
                    f"{duck / ours:.2f}x | {ours / base:.2f} |")
            print(line, flush=True)
            out.append(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, action="append")
    ap.add_argument("--reps", type=int, default=0)
    a = ap.parse_args()
    out = ["| rows | filter | rows matched | files via index | ours p50 ms | DuckDB p50 ms | "
           "DuckDB/ours | ours / `sec IN 2` |", "|---|---|---|---|---|---|---|---|"]
    print("\n".join(out))
    for rows in a.rows or [12000, 1000000]:
        run(rows, a.reps or (41 if rows <= 100000 else 11), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
