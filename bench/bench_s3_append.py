#!/usr/bin/env python3
"""Appends to a table on S3, side by side (issue 16: "appends to S3 at >= 5x
pyiceberg's rows/s on the same server").

    python3 bench/bench_s3_append.py [--batches 10] [--rows 100000] [--runs 3]

Starts versitygw (build/tools/versitygw, from `scripts/setup.sh test`) on
127.0.0.1 over a temporary folder, then appends the same --batches pyarrow
tables of --rows rows (int64 id, int32, float64, a 1,000-value string, a
timestamp) to a fresh table per run: ours with
`hdb.Table("s3://...", storage_options=...).write(batch)` (one commit per
batch), pyiceberg 0.x with a SqlCatalog (SQLite) whose warehouse is on the
same server (`table.append(batch)`, one commit per batch). Prints the median
rows/s of --runs runs for each and the ratio. pyarrow's S3 client under
pyiceberg has its CompleteMultipartUpload refused by versitygw v1.8.0 now
and then (400 BadRequest); such a run is retried and counted.
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
VERSITYGW = os.path.join(HERE, "..", "build", "tools", "versitygw")
ACCESS, SECRET, BUCKET = "benchaccess", "benchsecret-0123456789", "bench"


def start_server(tmp):
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([VERSITYGW, "--access", ACCESS, "--secret", SECRET, "--port",
                             f"127.0.0.1:{port}", "--quiet", "--keep-alive", "posix", data],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port}"


def batches(n, rows, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for b in range(n):
        out.append(pa.table({
            "id": pa.array(np.arange(b * rows, (b + 1) * rows, dtype=np.int64)),
            "k": pa.array(rng.integers(0, 1000, rows).astype(np.int32)),
            "x": pa.array(rng.normal(size=rows)),
            "cat": pa.array([f"c{v}" for v in rng.integers(0, 1000, rows)]),
            "ts": pa.array(rng.integers(0, 10**15, rows).astype("datetime64[us]")),
        }))
    return out


def ours(endpoint, data, run):
    import hyperstreamdb as hdb
    opts = {"aws_access_key_id": ACCESS, "aws_secret_access_key": SECRET,
            "region": "us-east-1", "endpoint": endpoint, "allow_http": "true"}
    t = hdb.Table(f"s3://{BUCKET}/ours/t{run}", storage_options=opts)
    a = time.perf_counter()
    for b in data:
        t.write(b)
    return time.perf_counter() - a


def pyiceberg(endpoint, data, run, tmp):
    from pyiceberg.catalog.sql import SqlCatalog
    props = {"uri": f"sqlite:///{tmp}/cat{run}.db", "warehouse": f"s3://{BUCKET}/pyiceberg",
             "s3.endpoint": endpoint, "s3.access-key-id": ACCESS,
             "s3.secret-access-key": SECRET, "s3.region": "us-east-1"}
    cat = SqlCatalog("bench", **props)
    cat.create_namespace_if_not_exists("ns")
    t = cat.create_table(f"ns.t{run}", schema=data[0].schema)
    a = time.perf_counter()
    for b in data:
        t.append(b)
    return time.perf_counter() - a


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if not os.access(VERSITYGW, os.X_OK):
        sys.exit(f"{VERSITYGW} missing: run scripts/setup.sh test")
    tmp = tempfile.mkdtemp(prefix="hs_bench_s3_")
    proc, endpoint = start_server(tmp)
    try:
        from pyarrow import fs as pafs
        pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", access_key=ACCESS,
                          secret_key=SECRET, region="us-east-1",
                          allow_bucket_creation=True).create_dir(BUCKET)
        data = batches(args.batches, args.rows)
        total = args.batches * args.rows
        res = {"ours": [], "pyiceberg": []}
        failed = 0
        for run in range(args.runs):  # the engines alternate
            res["ours"].append(total / ours(endpoint, data, run))
            # pyarrow's S3 client (under pyiceberg) has CompleteMultipartUpload
            # refused by versitygw now and then (400 BadRequest): retry the run
            for attempt in range(8):
                try:
                    res["pyiceberg"].append(
                        total / pyiceberg(endpoint, data, run * 100 + attempt, tmp))
                    break
                except OSError as e:
                    failed += 1
                    print(f"pyiceberg run failed, retried: {str(e)[:160]}", file=sys.stderr)
        if not res["pyiceberg"]:
            sys.exit("pyiceberg never completed a run")
        o, p = statistics.median(res["ours"]), statistics.median(res["pyiceberg"])
        print(f"{args.batches} appends of {args.rows} rows to versitygw, median of {args.runs}")
        print(f"  ours       {o:12,.0f} rows/s")
        print(f"  pyiceberg  {p:12,.0f} rows/s")
        print(f"  ours / pyiceberg: {o / p:.2f}  (pyiceberg runs retried: {failed})")
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
