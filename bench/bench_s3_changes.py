#!/usr/bin/env python3
"""Row deletes on a table on S3, side by side with pyiceberg (issue 16 item 2:
row changes on object storage).

    python3 bench/bench_s3_changes.py [--batches 5] [--rows 20000] [--deletes 5] [--runs 3]

Starts versitygw (build/tools/versitygw) on 127.0.0.1 as bench_s3_append.py
does, writes the same --batches tables of --rows rows (one commit each) to a
fresh table per engine and run, then times --deletes deletes of 0.5 % of the
rows each (`id >= a AND id < b`, a range inside one data file; one commit
each): ours copy-on-write (`write.delete.mode=copy-on-write`: the touched
file rewritten, as pyiceberg does), ours merge-on-read (the default: a
position-delete file), and pyiceberg 0.x `table.delete("id >= a and id < b")`
with a SQLite SqlCatalog whose warehouse is on the same server (copy-on-write:
pyiceberg writes no delete files). Each delete's result is checked (row count).
Prints the median seconds per delete over every delete of every run and the
ratios. pyiceberg's uploads whose CompleteMultipartUpload versitygw refuses
(see bench_s3_append.py) are retried (_retry_pyiceberg_uploads) and counted.
"""
import argparse
import io
import os
import shutil
import statistics
import sys
import tempfile
import time

from bench_s3_append import ACCESS, BUCKET, SECRET, VERSITYGW, batches, start_server


def ranges(args):
    step = max(1, args.rows * args.batches // 200)  # 0.5 % of the table
    out = []
    for d in range(args.deletes):
        first = (d % args.batches) * args.rows + (d // args.batches) * step
        out.append((first, first + step))
    return out


def ours(endpoint, data, rs, name, mode):
    import hyperstreamdb as hdb
    opts = {"aws_access_key_id": ACCESS, "aws_secret_access_key": SECRET,
            "region": "us-east-1", "endpoint": endpoint, "allow_http": "true"}
    props = {"write.delete.mode": mode}
    t = hdb.Table(f"s3://{BUCKET}/ours/{name}", storage_options=opts, properties=props)
    for b in data:
        t.write(b)
    times = []
    for a, b in rs:
        s = time.perf_counter()
        n = t.delete(f"id >= {a} AND id < {b}")
        times.append(time.perf_counter() - s)
        assert n == b - a, (n, a, b)
    assert len(t) == sum(x.num_rows for x in data) - sum(b - a for a, b in rs)
    return times


RETRIED = [0]


def _retry_pyiceberg_uploads():
    """versitygw refuses pyarrow's CompleteMultipartUpload now and then (400
    BadRequest; bench_s3_append.py): pyiceberg's output files are buffered in
    memory and uploaded at close, retried up to 8 times (counted in RETRIED).
    Without this no pyiceberg run of this size completes."""
    from pyiceberg.io import pyarrow as pio
    create = pio.PyArrowFile.create

    class Buffered(io.BytesIO):
        def __init__(self, f, overwrite):
            super().__init__()
            self._f, self._overwrite = f, overwrite

        def close(self):
            if self.closed:
                return
            data = self.getvalue()
            super().close()
            for attempt in range(8):
                try:
                    with create(self._f, overwrite=self._overwrite or attempt > 0) as out:
                        out.write(data)
                    return
                except OSError:
                    if attempt == 7:
                        raise
                    RETRIED[0] += 1

    pio.PyArrowFile.create = lambda self, overwrite=False: Buffered(self, overwrite)


def pyiceberg(endpoint, data, rs, name, tmp):
    from pyiceberg.catalog.sql import SqlCatalog
    props = {"uri": f"sqlite:///{tmp}/{name}.db", "warehouse": f"s3://{BUCKET}/pyiceberg",
             "s3.endpoint": endpoint, "s3.access-key-id": ACCESS,
             "s3.secret-access-key": SECRET, "s3.region": "us-east-1"}
    cat = SqlCatalog("bench", **props)
    cat.create_namespace_if_not_exists("ns")
    t = cat.create_table(f"ns.{name}", schema=data[0].schema)
    for b in data:
        t.append(b)
    times = []
    for a, b in rs:
        s = time.perf_counter()
        t.delete(f"id >= {a} and id < {b}")
        times.append(time.perf_counter() - s)
    got = t.scan().to_arrow().num_rows
    assert got == sum(x.num_rows for x in data) - sum(b - a for a, b in rs), got
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, default=5)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--deletes", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if not os.access(VERSITYGW, os.X_OK):
        sys.exit(f"{VERSITYGW} missing: run scripts/setup.sh test")
    tmp = tempfile.mkdtemp(prefix="hs_bench_s3c_")
    proc, endpoint = start_server(tmp)
    try:
        from pyarrow import fs as pafs
        pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", access_key=ACCESS,
                          secret_key=SECRET, region="us-east-1",
                          allow_bucket_creation=True).create_dir(BUCKET)
        data = batches(args.batches, args.rows)
        rs = ranges(args)
        _retry_pyiceberg_uploads()
        res = {"cow": [], "mor": [], "pyiceberg": []}
        failed = 0
        for run in range(args.runs):  # the engines alternate
            res["cow"] += ours(endpoint, data, rs, f"cow{run}", "copy-on-write")
            res["mor"] += ours(endpoint, data, rs, f"mor{run}", "merge-on-read")
            for attempt in range(8):
                try:
                    res["pyiceberg"] += pyiceberg(endpoint, data, rs, f"t{run}_{attempt}", tmp)
                    break
                except OSError as e:
                    failed += 1
                    print(f"pyiceberg run failed, retried: {str(e)[:160]}", file=sys.stderr)
        if not res["pyiceberg"]:
            sys.exit("pyiceberg never completed a run")
        med = {k: statistics.median(v) for k, v in res.items()}
        n = len(res["cow"])
        print(f"{args.deletes} deletes of {rs[0][1] - rs[0][0]} rows each on a "
              f"{args.batches} x {args.rows}-row table on versitygw, median of {n} deletes "
              f"({args.runs} runs)")
        print(f"  ours copy-on-write   {med['cow'] * 1e3:9.1f} ms")
        print(f"  ours merge-on-read   {med['mor'] * 1e3:9.1f} ms")
        print(f"  pyiceberg (cow)      {med['pyiceberg'] * 1e3:9.1f} ms")
        print(f"  pyiceberg / ours: copy-on-write {med['pyiceberg'] / med['cow']:.2f}, "
              f"merge-on-read {med['pyiceberg'] / med['mor']:.2f}  "
              f"(pyiceberg uploads retried: {RETRIED[0]}, runs: {failed})")
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
