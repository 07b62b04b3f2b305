"""Our Trino connector against Trino's own Iceberg connector, same data, same
Trino, same run (issue 17's performance section).

Rows of issue 4's shape (bench_scalar_query.make_data: category with 1,000
values, id unique and shuffled across every file, price, ts, flag) are
written by our Python API in FILES appends with our scalar indexes on every
column. One Trino 476 query runner (trino-testing's DistributedQueryRunner,
through tests/python/trino_util.run_trino and the JUnit test
HsQueryRunnerTest with Maven profile ``bench``) holds two catalogs:

  hyperstream   our connector over the table folder
  iceberg       Trino's Iceberg connector (file metastore, native local file
                system), holding a copy made by ``CREATE TABLE AS SELECT``
                from ours: Trino's register_table refuses our metadata (its
                locations are plain paths, which Trino's file systems do
                not take), so the peer reads the same rows in files its own
                writer laid out.

Each query aggregates every column of the rows a filter keeps (so both read
the same columns and the client ships one row): count, sum(id),
max(category), sum(price), max(ts), count_if(flag). The engines' answers must
agree (sum(price) up to its addition order), otherwise the row says
MISMATCH. One warm-up, then REPS timed runs, interleaved (each rep runs
every query on both engines: a shared machine's load drifts over both
alike); wall time of the query in the runner, results included; the median
is reported, and theirs / ours. Trino's fixed per-query cost (``SELECT 1``) is
reported beside them.

Vector top-k (--vectors N --dim D, 8 files, an HNSW index per file): a
filtered top-10, ``SELECT id FROM hyperstream.default.v WHERE cat = 'a'
ORDER BY l2_distance(emb, ARRAY[...]) LIMIT 10`` (our top-k, pushed),
against ``Table.search`` in this process; the rows must be Table.search's;
recall@10 against exact search; Trino's fixed cost beside it (``SELECT 1``,
a one-row table through the connector, and the query's own vector literal
without a table, ``SELECT cardinality(ARRAY[...])``: Trino parsing and
folding D literals).

    python3 bench/bench_trino_connector.py                  # 2M rows, 8 files
    python3 bench/bench_trino_connector.py --rows 10000000  # the issue's size
    python3 bench/bench_trino_connector.py --rows 0 --vectors 1000000 --dim 768
    python3 bench/bench_trino_connector.py --writes          # + INSERT rows/s
    python3 bench/bench_trino_connector.py --rows 10000000 --data /tmp/hs-bench-trino
    python3 bench/bench_trino_connector.py --rows 0 --vectors 200000 --dim 768 --data /tmp/hs-bench-trino

--data DIR keeps the table and its Iceberg copy in DIR/<rows>x<files> between
runs (written once; later runs only query them), and the vector table with its
index.

--writes: ``INSERT INTO <catalog>.default.w SELECT * FROM hyperstream.default.t``
into an empty table of each connector (ours made by the Python API, Iceberg's
by ``CREATE TABLE AS ... WITH NO DATA``), REPS+1 times each; then ``CREATE
TABLE <catalog>.default.c<rep> AS SELECT * FROM hyperstream.default.t``, a new
table per rep in each; rows/s of the medians, and both sides' counts must
agree.
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))

import bench_scalar_query  # noqa: E402
import trino_util  # noqa: E402

AGG = ("count(*), sum(id), max(category), sum(price), max(ts), count_if(flag)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--vectors", type=int, default=0)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--queries", type=int, default=10)
    ap.add_argument("--data", default=None,
                    help="keep the tables here between runs (written once)")
    ap.add_argument("--writes", action="store_true",
                    help="also INSERT the table into each connector (rows/s)")
    a = ap.parse_args()

    import hyperstreamdb as hdb

    tmp = tempfile.mkdtemp(prefix="hs_bench_trino_")
    keep = os.path.join(os.path.abspath(a.data), f"{a.rows}x{a.files}") if a.data else None
    try:
        root = os.path.join(keep or tmp, "root")
        os.makedirs(os.path.join(root, "default"), exist_ok=True)
        if a.vectors:
            vectors(hdb, root, tmp, a)
        if not a.rows:
            return
        t_dir = os.path.join(root, "default", "t")
        done = os.path.join(keep or tmp, "t.done")
        write_s = index_s = 0.0
        if not os.path.isfile(done):
            shutil.rmtree(t_dir, ignore_errors=True)
            shutil.rmtree(os.path.join(keep or tmp, "iceberg"), ignore_errors=True)
            t = hdb.Table(t_dir)
            t0 = time.perf_counter()
            for part in bench_scalar_query.make_data(a.rows, a.files):
                t.write(part)
            write_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            t.index_all()
            index_s = time.perf_counter() - t0

        k = max(1, a.rows // 100_000)
        queries = [
            ("id range (0.001%)", f"WHERE id BETWEEN 1000 AND {1000 + k - 1}"),
            ("category = (0.1%)", "WHERE category = 'cat0007'"),
            ("cat AND price (0.01%)", "WHERE category = 'cat0003' AND price < 100.0"),
            ("price < (10%)", "WHERE price < 100.0"),
            ("full scan, every column", ""),
        ]
        engines = [("hyperstream", "hyperstream.default.t"), ("iceberg", "iceberg.default.t")]
        cases = [{"id": "schema", "sql": "CREATE SCHEMA IF NOT EXISTS iceberg.default"},
                 {"id": "ctas", "sql": "CREATE TABLE IF NOT EXISTS iceberg.default.t AS "
                                       "SELECT * FROM hyperstream.default.t"}]
        # Interleaved (each rep runs every query on both engines, and SELECT 1),
        # so that the load of a shared machine drifts over both sides alike.
        for rep in range(a.reps + 1):  # rep 0: the warm-up
            cases.append({"id": f"select1/{rep}", "sql": "SELECT 1", "stats": True})
            for qi, (_, where) in enumerate(queries):
                for name, table in engines:
                    cases.append({"id": f"{qi}/{name}/{rep}", "stats": True,
                                  "sql": f"SELECT {AGG} FROM {table} {where}"})
        if a.writes:
            parts = bench_scalar_query.make_data(1000, 1)
            shutil.rmtree(os.path.join(root, "default", "w"), ignore_errors=True)  # --data
            hdb.Table.create(os.path.join(root, "default", "w"), parts[0].schema)
            cases.append({"id": "w/drop", "sql": "DROP TABLE IF EXISTS iceberg.default.w"})
            cases.append({"id": "w/create", "sql": "CREATE TABLE iceberg.default.w AS "
                                                   "SELECT * FROM hyperstream.default.t WITH NO DATA"})
            for rep in range(a.reps + 1):
                for name in ("hyperstream", "iceberg"):
                    cases.append({"id": f"w/{name}/{rep}", "sql": f"INSERT INTO {name}.default.w "
                                  "SELECT * FROM hyperstream.default.t"})
            for name in ("hyperstream", "iceberg"):
                cases.append({"id": f"w/{name}/count",
                              "sql": f"SELECT count(*), sum(id) FROM {name}.default.w"})
            # CREATE TABLE AS: a new table per rep in each connector.
            for rep in range(a.reps + 1):
                shutil.rmtree(os.path.join(root, "default", f"c{rep}"), ignore_errors=True)
                cases.append({"id": f"c/drop/{rep}",
                              "sql": f"DROP TABLE IF EXISTS iceberg.default.c{rep}"})
            for rep in range(a.reps + 1):
                for name in ("hyperstream", "iceberg"):
                    cases.append({"id": f"c/{name}/{rep}", "sql": f"CREATE TABLE {name}.default.c{rep} "
                                  "AS SELECT * FROM hyperstream.default.t"})
            for name in ("hyperstream", "iceberg"):
                cases.append({"id": f"c/{name}/count", "sql": "SELECT count(*), sum(id) FROM "
                              f"{name}.default.c{a.reps}"})
        r = trino_util.run_trino(root, cases, tmp, timeout=3600,
                                 iceberg_dir="file://" + os.path.join(keep or tmp, "iceberg"))
        for c in ("schema", "ctas"):
            if "error" in r[c]:
                raise SystemExit(f"{c}: {r[c]['error']}")
        if keep:
            open(done, "w").close()

        def med(prefix):
            runs = [r[f"{prefix}/{rep}"] for rep in range(1, a.reps + 1)]
            bad = [x["error"] for x in runs if "error" in x]
            if bad:
                raise SystemExit(f"{prefix}: {bad[0]}")
            return statistics.median(x["seconds"] for x in runs), runs[-1]["rows"]

        fixed, _ = med("select1")
        made = (f"write {write_s:.1f} s, index_all {index_s:.1f} s" if write_s
                else f"tables kept in {keep}")
        print(f"{a.rows:,} rows in {a.files} files; {made}; Trino query runner started in "
              f"{r['$startup']['seconds']:.1f} s; CREATE TABLE AS (the Iceberg copy) {r['ctas']['seconds']:.1f} s; median of "
              f"{a.reps} runs after one warm-up; Trino's fixed cost (SELECT 1) {fixed:.3f} s\n")
        print("| query | hyperstream (s) | iceberg (s) | iceberg / hyperstream | rows |")
        print("|---|---:|---:|---:|---:|")
        for qi, (label, _) in enumerate(queries):
            ours, ours_rows = med(f"{qi}/hyperstream")
            theirs, theirs_rows = med(f"{qi}/iceberg")
            same = agree(ours_rows[0], theirs_rows[0])
            print(f"| {label} | {ours:.3f} | {theirs:.3f} | {theirs / ours:.2f}x | "
                  f"{ours_rows[0][0]:,}{'' if same else f' MISMATCH ({theirs_rows})'} |")
        # Where the time goes (Trino's query stats, medians): Trino's analysis and
        # planning, the execution, and the CPU and scheduled time of the splits
        # (ours: the C scan through JNI and the page source).
        keys = ["elapsed", "analysis", "planning", "execution", "cpu", "scheduled"]
        print("\n| query (Trino's stats, ms) | " + " | ".join(keys) + " |")
        print("|---|" + "---:|" * len(keys))
        rows_ = [("SELECT 1", "select1")] + [(f"{label}, {name}", f"{qi}/{name}")
                                            for qi, (label, _) in enumerate(queries)
                                            for name, _ in engines]
        for label, prefix in rows_:
            st = [r[f"{prefix}/{rep}"].get("stats") for rep in range(1, a.reps + 1)]
            if any(x is None for x in st):
                continue
            print(f"| {label} | " + " | ".join(
                f"{1000 * statistics.median(x[k] for x in st):.1f}" for k in keys) + " |")
        if a.writes:
            ours, _ = med("w/hyperstream")
            theirs, _ = med("w/iceberg")
            counts = [r[f"w/{n}/count"].get("rows") for n in ("hyperstream", "iceberg")]
            same = counts[0] == counts[1] and counts[0][0][0] == (a.reps + 1) * a.rows
            print(f"\nINSERT INTO ... SELECT * of the {a.rows:,} rows (median of {a.reps} after a "
                  f"warm-up): hyperstream {ours:.3f} s ({a.rows / ours:,.0f} rows/s), iceberg "
                  f"{theirs:.3f} s ({a.rows / theirs:,.0f} rows/s), ours / theirs rows/s "
                  f"{theirs / ours:.2f}x{'' if same else f'  MISMATCH {counts}'}")
            ours, _ = med("c/hyperstream")
            theirs, _ = med("c/iceberg")
            counts = [r[f"c/{n}/count"].get("rows") for n in ("hyperstream", "iceberg")]
            same = counts[0] == counts[1] and counts[0][0][0] == a.rows
            print(f"CREATE TABLE ... AS SELECT * of the {a.rows:,} rows (median of {a.reps} after a "
                  f"warm-up): hyperstream {ours:.3f} s ({a.rows / ours:,.0f} rows/s), iceberg "
                  f"{theirs:.3f} s ({a.rows / theirs:,.0f} rows/s), ours / theirs rows/s "
                  f"{theirs / ours:.2f}x{'' if same else f'  MISMATCH {counts}'}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def vectors(hdb, root, tmp, a):
    import numpy as np
    import pyarrow as pa

    v_dir = os.path.join(root, "default", "v")
    done = os.path.join(os.path.dirname(root), f"v{a.vectors}x{a.dim}.done")  # --data: kept
    rng = np.random.default_rng(7)
    per = a.vectors // 8
    write_s = index_s = 0.0
    if not os.path.isfile(done):
        for d in (v_dir, os.path.join(root, "default", "tiny")):
            shutil.rmtree(d, ignore_errors=True)
        t = hdb.Table(v_dir)
        t0 = time.perf_counter()
        for f in range(8):
            emb = rng.standard_normal((per, a.dim)).astype(np.float32)
            t.write(pa.table({
                "id": pa.array(np.arange(f * per, (f + 1) * per), pa.int64()),
                "cat": pa.array(rng.choice(["a", "b", "c", "d"], per)),
                "emb": pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()), a.dim)}))
        write_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        t.add_index("emb", "hnsw")
        index_s = time.perf_counter() - t0
        hdb.Table(os.path.join(root, "default", "tiny")).write(
            pa.table({"id": pa.array([1], pa.int64())}))
        open(done, "w").close()
    else:
        for f in range(8):  # the same draws as when it was written
            rng.standard_normal((per, a.dim))
            rng.choice(["a", "b", "c", "d"], per)
    t = hdb.Table(v_dir)
    where = "cat = 'a'"
    qs = rng.standard_normal((a.queries, a.dim)).astype(np.float32)
    cases, want, py_t, rec = [], [], [], []
    for rep in range(a.reps + 1):
        cases.append({"id": f"select1/{rep}", "sql": "SELECT 1"})
        cases.append({"id": f"tiny/{rep}", "sql": "SELECT id FROM hyperstream.default.tiny"})
    for i, q in enumerate(qs):
        lit = ", ".join(repr(float(x)) + ("" if "e" in repr(float(x)) else "e0") for x in q)
        # The engine's cost of the query text itself: parsing, analysing and
        # folding the D-element ARRAY literal, no table.
        for rep in range(4):
            cases.append({"id": f"lit{i}/{rep}", "sql": f"SELECT cardinality(ARRAY[{lit}])"})
        for rep in range(4):  # a warm-up, then 3
            cases.append({"id": f"v{i}/{rep}", "sql": f"SELECT id FROM hyperstream.default.v "
                          f"WHERE {where} ORDER BY l2_distance(emb, ARRAY[{lit}]) LIMIT 10"})
        t.search("emb", q, k=10, filter=where, columns=["id"])
        ts = []
        for _ in range(3):
            t0 = time.perf_counter()
            py = t.search("emb", q, k=10, filter=where, columns=["id"])
            ts.append(time.perf_counter() - t0)
        py_t.append(statistics.median(ts))
        want.append(py.column("id").to_pylist())
        exact = t.search("emb", q, k=10, filter=where, columns=["id"], exact=True)
        rec.append(len(set(want[-1]) & set(exact.column("id").to_pylist())) / 10)
    r = trino_util.run_trino(root, cases, tmp, timeout=3600)
    tr_t, lit_t = [], []
    for i in range(len(qs)):
        runs = [r[f"v{i}/{rep}"] for rep in range(1, 4)]
        for x in runs:
            if "error" in x:
                raise SystemExit(f"query {i}: {x['error']}")
            got = [row[0] for row in x["rows"]]
            if got != want[i]:
                raise SystemExit(f"query {i}: Trino {got} != Table.search {want[i]}")
        tr_t.append(statistics.median(x["seconds"] for x in runs))
        lit_t.append(statistics.median(r[f"lit{i}/{rep}"]["seconds"] for rep in range(1, 4)))
    fixed1 = statistics.median(r[f"select1/{rep}"]["seconds"] for rep in range(1, a.reps + 1))
    fixed2 = statistics.median(r[f"tiny/{rep}"]["seconds"] for rep in range(1, a.reps + 1))
    pm, tm = statistics.median(py_t), statistics.median(tr_t)
    made = (f"write {write_s:.1f} s, HNSW {index_s:.1f} s" if write_s else "kept by --data")
    print(f"{a.vectors:,} x {a.dim}-d vectors in 8 files ({made}); filtered top-10 ({where}, ~25 %), median over {a.queries} "
          f"queries of medians of 3; rows = Table.search's; recall@10 vs exact "
          f"{statistics.mean(rec):.3f}\n")
    print("| path | latency (s) |")
    print("|---|---:|")
    print(f"| Python Table.search | {pm:.4f} |")
    print(f"| Trino ORDER BY l2_distance LIMIT 10 (pushed top-k) | {tm:.4f} |")
    print(f"| Trino fixed cost: SELECT 1 | {fixed1:.4f} |")
    print(f"| Trino fixed cost: 1-row table through the connector | {fixed2:.4f} |")
    fixed3 = statistics.median(lit_t)
    print(f"| Trino fixed cost: the query vector alone, SELECT cardinality(ARRAY[...]) | "
          f"{fixed3:.4f} |")
    print(f"\nTrino / (2 x Python + fixed cost of a connector scan) = "
          f"{tm / (2 * pm + fixed2):.2f}; with the query vector's own cost as the fixed cost: "
          f"{tm / (2 * pm + max(fixed2, fixed3)):.2f} (target <= 1)\n")


def agree(a, b):
    """Every aggregate equal, sum(price) up to the order of the additions."""
    return (len(a) == len(b) and all(x == y for i, (x, y) in enumerate(zip(a, b)) if i != 3)
            and abs(a[3] - b[3]) <= 1e-9 * max(1.0, abs(b[3])))


if __name__ == "__main__":
    main()
