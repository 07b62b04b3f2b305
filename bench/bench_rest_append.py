#!/usr/bin/env python3
"""Commits through an Iceberg REST catalog, side by side: appends and
loads of the same table through Apache Iceberg's RESTCatalogServer, ours
(`hdb.connect("rest://...")`) against pyiceberg's RestCatalog, same server,
same run.

    python3 bench/bench_rest_append.py [--batches 20] [--rows 10000] [--runs 3]

Starts RESTCatalogServer (iceberg-open-api 1.10.0 test fixtures, jars in
build/jars/rest from `scripts/setup.sh test`; SQLite JDBC catalog, local
warehouse in a temporary folder) on 127.0.0.1, then per run creates a fresh
table for each client and appends the same --batches pyarrow tables of
--rows rows (one commit each: data file, manifest, manifest list, then the
catalog commit), and loads the table 20 times. Prints, per client, the median
over runs of rows/s and of the per-append and per-load median latency, and
the ratios. "ours-stale" connects with max_staleness_ms=1000 (the refreshes
the Python layer makes around each write keep what the handle holds; the
commit's own load and the catalog's requirements are unchanged).
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request

import numpy as np
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
JARS = os.path.join(HERE, "..", "build", "jars", "rest")


def start_server(tmp):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, CATALOG_WAREHOUSE=os.path.join(tmp, "wh"),
               CATALOG_URI=f"jdbc:sqlite:{os.path.join(tmp, 'cat.db')}",
               CATALOG_REST_PORT=str(port))
    proc = subprocess.Popen(["java", "-Xmx512m", "-cp", f"{JARS}/*",
                             "org.apache.iceberg.rest.RESTCatalogServer"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/config", timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    return proc, port


def batches(n, rows, seed=0):
    rng = np.random.default_rng(seed)
    return [pa.table({
        "id": pa.array(np.arange(b * rows, (b + 1) * rows, dtype=np.int64)),
        "k": pa.array(rng.integers(0, 1000, rows).astype(np.int32)),
        "x": pa.array(rng.normal(size=rows)),
        "s": pa.array([f"v{v}" for v in rng.integers(0, 1000, rows)]),
    }) for b in range(n)]


def run_ours(cat, name, data):
    t = cat.create_table(f"bench.{name}", data[0].schema)
    lat = []
    for b in data:
        t0 = time.perf_counter()
        t.write(b)
        lat.append(time.perf_counter() - t0)
    loads = []
    for _ in range(20):
        t0 = time.perf_counter()
        cat.load_table(f"bench.{name}").current_snapshot_id
        loads.append(time.perf_counter() - t0)
    return lat, loads


def run_pyiceberg(pc, name, data):
    t = pc.create_table(f"bench.{name}", data[0].schema)
    lat = []
    for b in data:
        t0 = time.perf_counter()
        t.append(b)
        lat.append(time.perf_counter() - t0)
    loads = []
    for _ in range(20):
        t0 = time.perf_counter()
        pc.load_table(f"bench.{name}").current_snapshot()
        loads.append(time.perf_counter() - t0)
    return lat, loads


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    import hyperstreamdb as hdb
    from pyiceberg.catalog.rest import RestCatalog
    tmp = tempfile.mkdtemp(prefix="hs_bench_rest_")
    proc, port = start_server(tmp)
    try:
        cat = hdb.connect(f"rest://127.0.0.1:{port}", warehouse="wh")
        cat.create_namespace("bench")
        # The same server under another name, with reads allowed 1 s of staleness:
        # the Python layer's refreshes around a write need no GET (the commit's own
        # load before it and the catalog's requirements stay as they are).
        stale = hdb.connect(f"rest://localhost:{port}", warehouse="wh", max_staleness_ms="1000")
        pc = RestCatalog("peer", uri=f"http://127.0.0.1:{port}", warehouse="wh")
        data = batches(a.batches, a.rows)
        total = a.batches * a.rows
        res = {"ours": [], "ours-stale": [], "pyiceberg": []}
        for r in range(a.runs):
            for who, fn, client in (("ours", run_ours, cat), ("ours-stale", run_ours, stale),
                                    ("pyiceberg", run_pyiceberg, pc)):
                lat, loads = fn(client, f"{who}_{r}", data)
                res[who].append((total / sum(lat), statistics.median(lat),
                                 statistics.median(loads)))
        print(f"{a.batches} appends x {a.rows} rows, {a.runs} runs (medians)")
        med = {}
        for who in ("ours", "ours-stale", "pyiceberg"):
            rps = statistics.median(x[0] for x in res[who])
            app = statistics.median(x[1] for x in res[who]) * 1e3
            load = statistics.median(x[2] for x in res[who]) * 1e3
            med[who] = (rps, app, load)
            print(f"  {who:10s}  {rps / 1e3:9.0f}K rows/s  append {app:7.1f} ms  load {load:6.1f} ms")
        p = med["pyiceberg"]
        for who in ("ours", "ours-stale"):
            o = med[who]
            print(f"  {who:10s}  {o[0] / p[0]:.2f}x pyiceberg's rows/s, append {p[1] / o[1]:.2f}x"
                  f" as fast, load {p[2] / o[2]:.2f}x as fast")
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
