#!/usr/bin/env python3
"""Cold and warm hybrid queries on S3 behind added latency, side by side with
LanceDB (issue 16 "Performance"; item 4's round-trip budget).

    python3 bench/bench_s3_cold.py [--rows 100000] [--dim 768] [--files 4]
        [--rtt 20,60] [--cold 7] [--warm 20] [--kind ivf_pq] [--lance VENV_PYTHON]

Starts versitygw (build/tools/versitygw, from `scripts/setup.sh test`) on
127.0.0.1 over a temporary folder, and in front of it a TCP proxy written
here that delays every chunk by half the round-trip time in each direction
(a timestamped queue per direction, so latency is added without limiting
bandwidth; connection set-up is not delayed, both clients keep connections
alive). Writes --rows rows in --files appends: `id` int64, `category` int32
(100 values: `category = 7` is the 1 % filter), `tag` int32 (1,000 values:
`tag = 123` is the 0.1 % scalar filter), `emb` float32 x --dim; indexes:
bitmap on category and tag, --kind on emb (ours) / IVF_PQ + BITMAP (LanceDB,
searched with nprobes=20 and refine_factor=10: its defaults give recall@10
near 0.3 on this data).

Per RTT (--rtt, ms) and query kind it prints p50/p99 latency of cold queries
(each in a fresh process: nothing cached; timed from opening the table to
the answer, interpreter start not counted; RTs split into the open's, measured
alone, and the rest) and of warm ones (one process,
each query answered once untimed, then timed again), requests, bytes read
and, for ours, dependent round trips (hdb.io_stats(): the metadata part
(open) and the rest separately), recall@10 against numpy's exact top-10,
and the ratio of medians to LanceDB's. Queries: `search("emb", q, k=10)`,
the same with `filter="category = 7"`, and `to_arrow(filter="tag = 123")`
(all columns). LanceDB (from PyPI, in its own venv: --lance names that
venv's python; skipped when absent) runs the same queries against
`s3://bench/lance` through the same proxy (its requests and bytes counted by
the proxy, which parses request lines).
"""
import argparse
import json
import os
import queue
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_s3_append import ACCESS, BUCKET, SECRET, VERSITYGW  # noqa: E402
from bench_s3_append import start_server as start_gateway  # noqa: E402


class DelayProxy:
    """TCP proxy adding `rtt_ms` of round-trip latency; counts the HTTP
    requests it forwards (request lines of the client -> server stream) and
    the bytes server -> client."""

    REQ = re.compile(rb"(?:^|\r\n)(GET|HEAD|PUT|POST|DELETE) /")

    def __init__(self, upstream_port, rtt_ms):
        self.up = upstream_port
        self.half = rtt_ms / 2000.0
        self.lock = threading.Lock()
        self.requests = 0
        self.bytes_down = 0
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def counts(self, reset=False):
        with self.lock:
            out = (self.requests, self.bytes_down)
            if reset:
                self.requests = self.bytes_down = 0
        return out

    def _accept(self):
        while not self.closed:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            u = socket.create_connection(("127.0.0.1", self.up))
            for s in (c, u):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._pipe(c, u, True)
            self._pipe(u, c, False)

    def _pipe(self, src, dst, upstream):
        q = queue.Queue()

        def reader():
            tail = b""
            while True:
                try:
                    data = src.recv(1 << 16)
                except OSError:
                    data = b""
                q.put((time.monotonic() + self.half, data))
                if not data:
                    return
                with self.lock:
                    if upstream:
                        self.requests += len(self.REQ.findall(tail + data)) - len(
                            self.REQ.findall(tail))
                        tail = data[-8:]
                    else:
                        self.bytes_down += len(data)

        def writer():
            while True:
                due, data = q.get()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                if not data:
                    try:
                        dst.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    return
                try:
                    dst.sendall(data)
                except OSError:
                    return

        threading.Thread(target=reader, daemon=True).start()
        threading.Thread(target=writer, daemon=True).start()

    def close(self):
        self.closed = True
        self.sock.close()


def start_server(tmp):
    """versitygw on 127.0.0.1 (bench_s3_append's), with the bench's bucket."""
    proc, endpoint = start_gateway(tmp)
    os.mkdir(os.path.join(tmp, "data", BUCKET))  # versitygw posix: a bucket is a folder
    return proc, int(endpoint.rsplit(":", 1)[1])


def make_parts(rows, dim, files, seed=0):
    rng = np.random.default_rng(seed)
    per = rows // files
    for f in range(files):
        n = per if f < files - 1 else rows - per * (files - 1)
        lo = f * per
        # Clustered vectors (64 centres), as embeddings are: an IVF index
        # has structure to find.
        centres = np.random.default_rng(99).normal(size=(64, dim)).astype(np.float32)
        x = centres[rng.integers(0, 64, n)] + 0.35 * rng.normal(size=(n, dim)).astype(np.float32)
        yield pa.table({
            "id": pa.array(np.arange(lo, lo + n, dtype=np.int64)),
            "category": pa.array(rng.integers(0, 100, n).astype(np.int32)),
            "tag": pa.array(rng.integers(0, 1000, n).astype(np.int32)),
            "emb": pa.FixedSizeListArray.from_arrays(pa.array(x.reshape(-1)), dim),
        })


def opts(port):
    return {"aws_access_key_id": ACCESS, "aws_secret_access_key": SECRET,
            "region": "us-east-1", "endpoint": f"http://127.0.0.1:{port}", "allow_http": "true"}


# One query in a fresh process (ours). argv: uri, options, kind, query json.
OURS_COLD = r"""
import json, sys, time
import numpy as np
import hyperstreamdb as hdb
uri, o, kind = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
q = np.load(sys.argv[4])[int(sys.argv[5])] if kind != "open" else None
a = time.perf_counter()
t = hdb.Table(uri, storage_options=o)
if kind == "open":  # only the open: the hint, the version probe, the metadata (and its stream)
    pass  # hdb.Table(...) opened it
    print(json.dumps({"rts": hdb.io_stats()["round_trips"]}))
    sys.exit(0)
if kind == "scalar":
    r = t.to_arrow(filter="tag = 123")
    ids = sorted(r.column("id").to_pylist())
else:
    kw = {"filter": "category = 7"} if kind == "filtered" else {}
    ids = t.search("emb", q, k=10, **kw).column("id").to_pylist()
ms = (time.perf_counter() - a) * 1000
st = hdb.io_stats()
print(json.dumps({"ms": ms, "ids": ids, "requests": st["requests"], "bytes": st["bytes_read"],
                  "rts": st["round_trips"], "stream": st["index_streams"]}))
"""

OURS_WARM = r"""
import json, sys, time
import numpy as np
import hyperstreamdb as hdb
uri, o, kind = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
qs = np.load(sys.argv[4])[:int(sys.argv[5])]
t = hdb.Table(uri, storage_options=o)
def one(q):
    if kind == "scalar":
        return sorted(t.to_arrow(filter="tag = 123").column("id").to_pylist())
    kw = {"filter": "category = 7"} if kind == "filtered" else {}
    return t.search("emb", np.array(q, np.float32), k=10, **kw).column("id").to_pylist()
for q in qs:
    one(q)
out = []
for q in qs:
    hdb.io_stats(reset=True)
    a = time.perf_counter()
    ids = one(q)
    ms = (time.perf_counter() - a) * 1000
    st = hdb.io_stats()
    out.append({"ms": ms, "ids": ids, "requests": st["requests"], "bytes": st["bytes_read"],
                "rts": st["round_trips"]})
print(json.dumps(out))
"""

LANCE_COLD = r"""
import json, sys, time
NPROBES = 20
import numpy as np
import lancedb
uri, o, kind = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
q = np.load(sys.argv[4])[int(sys.argv[5])]
a = time.perf_counter()
db = lancedb.connect(uri, storage_options=o)
t = db.open_table("t")
if kind == "scalar":
    ids = sorted(t.search().where("tag = 123").limit(1 << 30).to_arrow().column("id").to_pylist())
else:
    s = t.search(np.array(q, np.float32)).metric("l2").limit(10).nprobes(NPROBES).refine_factor(10)
    if kind == "filtered":
        s = s.where("category = 7", prefilter=True)
    ids = s.to_arrow().column("id").to_pylist()
print(json.dumps({"ms": (time.perf_counter() - a) * 1000, "ids": ids}))
"""

LANCE_WARM = r"""
import json, sys, time
NPROBES = 20
import numpy as np
import lancedb
uri, o, kind = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
qs = np.load(sys.argv[4])[:int(sys.argv[5])]
t = lancedb.connect(uri, storage_options=o).open_table("t")
def one(q):
    if kind == "scalar":
        return sorted(t.search().where("tag = 123").limit(1 << 30).to_arrow().column("id").to_pylist())
    s = t.search(np.array(q, np.float32)).metric("l2").limit(10).nprobes(NPROBES).refine_factor(10)
    if kind == "filtered":
        s = s.where("category = 7", prefilter=True)
    return s.to_arrow().column("id").to_pylist()
for q in qs:
    one(q)
out = []
for q in qs:
    a = time.perf_counter()
    ids = one(q)
    out.append({"ms": (time.perf_counter() - a) * 1000, "ids": ids})
print(json.dumps(out))
"""

LANCE_BUILD = r"""
import json, sys
import pyarrow as pa, pyarrow.ipc as ipc
import lancedb
uri, o, path, parts = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
db = lancedb.connect(uri, storage_options=o)
t = None
for i in range(parts):
    data = ipc.open_file(f"{path}/{i}.arrow").read_all()
    if t is None:
        t = db.create_table("t", data)
    else:
        t.add(data)
n = t.count_rows()
t.create_index(metric="l2", vector_column_name="emb", num_partitions=max(1, int(n ** 0.5) // 2),
               num_sub_vectors=max(1, data.schema.field("emb").type.list_size // 16))
t.create_scalar_index("category", index_type="BITMAP")
t.create_scalar_index("tag", index_type="BITMAP")
print(n)
"""


def run(py, code, *args, timeout=600, env=None):
    out = subprocess.run([py, "-c", code, *args], capture_output=True, text=True,
                         timeout=timeout, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def recall(got, want):
    return float(np.mean([len(set(g) & set(w)) / max(1, len(w)) for g, w in zip(got, want)]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--rtt", default="20,60")
    ap.add_argument("--cold", type=int, default=7, help="cold queries (processes) per cell")
    ap.add_argument("--warm", type=int, default=20, help="warm queries per cell")
    ap.add_argument("--kind", default="ivf_pq", help="our vector index kind")
    ap.add_argument("--no-pq-lists", dest="pq_lists", action="store_false",
                    help="ivf_pq with the default partitioning (one graph a file) instead of "
                         "IVF lists of ~sqrt(2 n) rows")
    ap.add_argument("--lance", default=None, help="python of a venv with lancedb")
    a = ap.parse_args()
    if not os.access(VERSITYGW, os.X_OK):
        sys.exit(f"{VERSITYGW} missing (scripts/setup.sh test builds it)")
    import hyperstreamdb as hdb
    tmp = tempfile.mkdtemp(prefix="bench_s3_cold_")
    proc, port = start_server(tmp)
    try:
        o = opts(port)
        uri = f"s3://{BUCKET}/ours/t"
        t0 = time.perf_counter()
        t = hdb.Table(uri, storage_options=o)
        allv, ids, cats, tags = [], [], [], []
        os.mkdir(os.path.join(tmp, "arrow"))
        for i, p in enumerate(make_parts(a.rows, a.dim, a.files)):
            t.write(p)
            allv.append(p["emb"].combine_chunks().values.to_numpy().reshape(-1, a.dim))
            ids.append(p["id"].to_numpy())
            cats.append(p["category"].to_numpy())
            tags.append(p["tag"].to_numpy())
            if a.lance:
                import pyarrow.ipc as ipc
                with ipc.new_file(os.path.join(tmp, "arrow", f"{i}.arrow"), p.schema) as w:
                    w.write_table(p)
        t.add_index("category", "bitmap")
        t.add_index("tag", "bitmap")
        vparams = {}
        if a.kind == "ivf_pq" and a.pq_lists:  # lists of ~sqrt(2 n) rows (README "IVF-PQ lists")
            vparams["partitions"] = max(1, round((a.rows / a.files / 2) ** 0.5))
        t.add_index("emb", a.kind, **vparams)
        build_s = time.perf_counter() - t0
        allv, ids = np.concatenate(allv), np.concatenate(ids)
        cats, tags = np.concatenate(cats), np.concatenate(tags)
        table_bytes = sum(os.path.getsize(os.path.join(dp, f))
                          for dp, _, fs in os.walk(os.path.join(tmp, "data", BUCKET, "ours"))
                          for f in fs)
        print(f"# {a.rows} rows x {a.dim}-d in {a.files} files, ours built in {build_s:.0f} s "
              f"({table_bytes / 1e6:.0f} MB on the server, index {a.kind})", flush=True)
        lance_uri = f"s3://{BUCKET}/lance"
        lo = {"aws_access_key_id": ACCESS, "aws_secret_access_key": SECRET,
              "aws_region": "us-east-1", "aws_endpoint": f"http://127.0.0.1:{port}",
              "allow_http": "true"}
        if a.lance:
            t1 = time.perf_counter()
            run(a.lance, LANCE_BUILD, lance_uri, json.dumps(lo), os.path.join(tmp, "arrow"),
                str(a.files), timeout=3600)
            print(f"# LanceDB built in {time.perf_counter() - t1:.0f} s", flush=True)
        rng = np.random.default_rng(7)
        pick = rng.integers(0, a.rows, max(a.cold, a.warm))
        qs = (allv[pick] + 0.1 * rng.normal(size=(len(pick), a.dim))).astype(np.float32)
        qpath = os.path.join(tmp, "queries.npy")
        np.save(qpath, qs)

        def exact(q, kind):
            if kind == "scalar":
                return sorted(ids[tags == 123].tolist())
            m = np.ones(len(ids), bool) if kind == "unfiltered" else cats == 7
            d = ((allv[m] - q) ** 2).sum(1)
            return ids[m][np.argsort(d, kind="stable")[:10]].tolist()

        truth = {k: [exact(q, k) for q in qs] for k in ("unfiltered", "filtered", "scalar")}
        print("| RTT | query | engine | cold p50 / p99 ms | warm p50 / p99 ms | cold requests "
              "/ MB | cold RTs (open + rest) | warm requests / RTs | recall@10 cold / warm "
              "| cold p50 vs LanceDB |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for rtt in [int(x) for x in a.rtt.split(",")]:
            px = DelayProxy(port, rtt)
            po = dict(o, endpoint=f"http://127.0.0.1:{px.port}")
            plo = dict(lo, aws_endpoint=f"http://127.0.0.1:{px.port}")
            open_rts = run(sys.executable, OURS_COLD, uri, json.dumps(po), "open", qpath, "0")["rts"]
            for kind in ("unfiltered", "filtered", "scalar"):
                cold = [run(sys.executable, OURS_COLD, uri, json.dumps(po), kind, qpath, str(i))
                        for i in range(a.cold)]
                warm = run(sys.executable, OURS_WARM, uri, json.dumps(po), kind, qpath,
                           str(a.warm))
                c50 = statistics.median(r["ms"] for r in cold)
                rc = recall([r["ids"] for r in cold], truth[kind][:a.cold])
                rw = recall([r["ids"] for r in warm], truth[kind][:a.warm])
                lance = ""
                l50 = None
                if a.lance:
                    px.counts(reset=True)
                    lc = [run(a.lance, LANCE_COLD, lance_uri, json.dumps(plo), kind, qpath, str(i))
                          for i in range(a.cold)]
                    lreq, lbytes = px.counts(reset=True)
                    lw = run(a.lance, LANCE_WARM, lance_uri, json.dumps(plo), kind, qpath,
                             str(a.warm))
                    l50 = statistics.median(r["ms"] for r in lc)
                    lance = (f"| {rtt} | {kind} | LanceDB | {l50:.0f} / "
                             f"{pct([r['ms'] for r in lc], 99):.0f} | "
                             f"{statistics.median(r['ms'] for r in lw):.1f} / "
                             f"{pct([r['ms'] for r in lw], 99):.1f} | "
                             f"{lreq / a.cold:.0f} / {lbytes / a.cold / 1e6:.2f} | — | — | "
                             f"{recall([r['ids'] for r in lc], truth[kind][:a.cold]):.3f} / "
                             f"{recall([r['ids'] for r in lw], truth[kind][:a.warm]):.3f} | 1 |")
                ratio = f"{c50 / l50:.2f}x" if l50 else "—"
                mb = statistics.median(r["bytes"] for r in cold) / 1e6
                print(f"| {rtt} | {kind} | ours | {c50:.0f} / {pct([r['ms'] for r in cold], 99):.0f}"
                      f" | {statistics.median(r['ms'] for r in warm):.1f} / "
                      f"{pct([r['ms'] for r in warm], 99):.1f} | "
                      f"{statistics.median(r['requests'] for r in cold):.0f} / {mb:.2f} "
                      f"({100 * mb * 1e6 / table_bytes:.2f} % of the table) | "
                      f"{statistics.median(r['rts'] for r in cold):.0f} "
                      f"({open_rts} + {statistics.median(r['rts'] for r in cold) - open_rts:.0f}) | "
                      f"{statistics.median(r['requests'] for r in warm):.0f} / "
                      f"{statistics.median(r['rts'] for r in warm):.0f} | "
                      f"{rc:.3f} / {rw:.3f} | {ratio} |", flush=True)
                if lance:
                    print(lance, flush=True)
            px.close()
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
