"""Tables on S3 through a fault-injecting proxy (issue 16 "Faults"): between
our client and versitygw, about one request in ten is answered
`503 SlowDown`, has its connection reset before it is sent on, has its
response cut short after the headers or part of the body, or stalls for a
while first. Appends, reads and concurrent writers must come through with
exactly the rows acknowledged (none lost, none twice: a conditional PUT
whose answer was lost is read back, src/io/s3.c) and every snapshot
readable; with every request failing, an operation fails with a clear
error after bounded retries instead of hanging.

The proxy parses HTTP/1.1 framing (Content-Length bodies, HEAD without a
body) so that each request on a kept-alive connection gets its own fault
draw; the fault log is checked, so the test cannot pass without faults.
"""
import multiprocessing
import random
import socket
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

import hyperstreamdb as hdb
from test_s3_tables import BUCKET, _batch, _sorted, s3  # noqa: F401 (the fixture)


def _read_head(sock, buf):
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return None, buf
        buf += chunk
    i = buf.index(b"\r\n\r\n") + 4
    return buf[:i], buf[i:]


def _length(head):
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            return int(v.strip())
        if k.strip().lower() == b"transfer-encoding":
            raise RuntimeError("chunked bodies are not expected")
    return 0


def _read_body(sock, buf, n):
    while len(buf) < n:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf[:n], buf[n:]


class FaultProxy:
    """127.0.0.1 proxy to `upstream` with per-request faults at `rate`."""

    KINDS = ("503", "reset", "cut_head", "cut_body", "stall")

    def __init__(self, upstream_port, rate, seed=0):
        self.up = upstream_port
        self.rate = rate
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.log = {k: 0 for k in self.KINDS}
        self.requests = 0
        self.entries = []  # (method, path, query, request body, response body bytes) forwarded
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(64)
        self.port = self.srv.getsockname()[1]
        self.stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _draw(self):
        with self.lock:
            self.requests += 1
            if self.rng.random() >= self.rate:
                return None
            k = self.rng.choice(self.KINDS)
            self.log[k] += 1
            return k

    def _accept(self):
        while not self.stop:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        u = None
        try:
            u = socket.create_connection(("127.0.0.1", self.up))
            cbuf = ubuf = b""
            while True:
                head, cbuf = _read_head(c, cbuf)
                if head is None:
                    return
                body, cbuf = _read_body(c, cbuf, _length(head))
                method, target = head.split(b" ", 2)[:2]
                fault = self._draw()
                if fault == "reset":
                    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                    return
                if fault == "503":
                    msg = (b"<?xml version=\"1.0\"?><Error><Code>SlowDown</Code>"
                           b"<Message>injected</Message></Error>")
                    c.sendall(b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\n"
                              b"Content-Length: " + str(len(msg)).encode() + b"\r\n\r\n" + msg)
                    continue
                if fault == "stall":
                    time.sleep(0.3)
                u.sendall(head + body)
                rhead, ubuf = _read_head(u, ubuf)
                if rhead is None:
                    return
                n = 0 if method == b"HEAD" or b" 204 " in rhead.split(b"\r\n")[0] else _length(rhead)
                rbody, ubuf = _read_body(u, ubuf, n)
                if fault == "cut_head":
                    c.sendall(rhead[: len(rhead) // 2])
                    return
                if fault == "cut_body" and n > 1:
                    c.sendall(rhead + rbody[: n // 2])
                    return
                path, _, query = target.decode().partition("?")
                with self.lock:  # logged before the answer goes back: in order
                    self.entries.append((method.decode(), path, query, len(body), len(rbody)))
                c.sendall(rhead + rbody)
        except (OSError, RuntimeError):
            return
        finally:
            c.close()
            if u is not None:
                u.close()

    def close(self):
        self.stop = True
        self.srv.close()


def _opts(s3_, port, **extra):
    o = dict(s3_["options"], endpoint=f"http://127.0.0.1:{port}", request_timeout_ms="3000",
             connect_timeout_ms="1000", max_retries="8")
    o.update(extra)
    return o


@pytest.fixture
def proxy(s3):  # noqa: F811
    up = int(s3["endpoint"].rsplit(":", 1)[1])
    p = FaultProxy(up, rate=0.1, seed=7)
    yield p
    p.close()


def test_appends_and_reads_survive_faults(s3, proxy):  # noqa: F811
    rng = np.random.default_rng(3)
    t = hdb.Table(f"s3://{BUCKET}/faults/t1", storage_options=_opts(s3, proxy.port))
    written = []
    for i in range(8):
        b = _batch(rng, int(rng.integers(50, 400)), start=sum(x.num_rows for x in written))
        t.write(b)
        written.append(b)
    want = _sorted(pa.concat_tables(written))
    for _ in range(3):  # fresh handles: open, refresh, manifests and data files through faults
        got = hdb.Table(f"s3://{BUCKET}/faults/t1",
                        storage_options=_opts(s3, proxy.port)).to_arrow()
        assert _sorted(got).equals(want)
    snaps = t.snapshots()
    assert len(snaps) == 8
    for i, s in enumerate(snaps):
        got = t.to_arrow(snapshot_id=s.snapshot_id)
        assert got.num_rows == sum(x.num_rows for x in written[: i + 1])
    assert sum(proxy.log.values()) >= 5, (proxy.log, proxy.requests)  # faults really happened


def _appender(args):
    opts, uri, w, n = args
    t = hdb.Table(uri, storage_options=opts)
    for i in range(n):
        t.write(pa.table({"w": pa.array([w], pa.int32()), "i": pa.array([i], pa.int32())}))
    return n


def test_concurrent_writers_through_faults_lose_and_repeat_nothing(s3, proxy):  # noqa: F811
    uri = f"s3://{BUCKET}/faults/conc"
    opts = _opts(s3, proxy.port)
    hdb.Table(uri, storage_options=opts).write(
        pa.table({"w": pa.array([-1], pa.int32()), "i": pa.array([0], pa.int32())}))
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        done = pool.map(_appender, [(opts, uri, w, 5) for w in range(3)])
    assert done == [5, 5, 5]
    got = hdb.Table(uri, storage_options=_opts(s3, proxy.port)).to_arrow()
    pairs = sorted(zip(got.column("w").to_pylist(), got.column("i").to_pylist()))
    assert pairs == sorted([(-1, 0)] + [(w, i) for w in range(3) for i in range(5)])
    assert sum(proxy.log.values()) >= 3, (proxy.log, proxy.requests)


def test_every_request_failing_is_a_bounded_clear_error(s3):  # noqa: F811
    up = int(s3["endpoint"].rsplit(":", 1)[1])
    p = FaultProxy(up, rate=1.0, seed=1)
    p.KINDS = ("503",)
    try:
        t0 = time.monotonic()
        with pytest.raises(Exception) as e:
            hdb.Table(f"s3://{BUCKET}/faults/never",
                      storage_options=_opts(s3, p.port, max_retries="3")).write(
                pa.table({"a": [1]}))
        assert time.monotonic() - t0 < 60
        assert "503" in str(e.value) or "SlowDown" in str(e.value), str(e.value)
    finally:
        p.close()
