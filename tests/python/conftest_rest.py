"""Apache Iceberg's REST catalog server for the tests (session fixture
`rest_catalog`), and a checking proxy in front of it (`RestProxy`).

The server is org.apache.iceberg.rest.RESTCatalogServer from
iceberg-open-api 1.10.0's test fixtures, run from the jars
`scripts/setup.sh test` gathers into build/jars/rest/ (tests/rest/pom.xml):
a JDBC catalog over SQLite and a local warehouse folder, on 127.0.0.1 with a
free port (its CATALOG_* environment variables: CATALOG_URI,
CATALOG_WAREHOUSE, CATALOG_REST_PORT -> rest.port). Started once per
session, when a test asks for it; the tests SKIP only when the jars are
missing.

RestProxy forwards every request to the server and can (a) require a bearer
token and a client secret, answering 401 with the spec's ErrorModel
otherwise, as a deployed catalog would (the test server checks neither), and
(b) run a callback before forwarding a table commit, so that another
engine's commit lands first and ours gets the server's 409, and (c) answer
one commit with a 503, after forwarding it (applied, answer lost) or instead
of it (not applied): the commit's outcome is unknown to the client.
"""
import http.client
import http.server
import json
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
JARS = ROOT / "build" / "jars" / "rest"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ready(port):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        c.request("GET", "/v1/config")
        ok = c.getresponse().status == 200
        c.close()
        return ok
    except OSError:
        return False


def start_server(warehouse, extra_env=None):
    """Start RESTCatalogServer over a JDBC (SQLite) catalog whose warehouse is
    `warehouse` (a folder, or s3://... with S3FileIO's settings in
    `extra_env` as CATALOG_* variables). Returns {"uri", "port", "proc",
    "tmp", "log"}; stop it with stop_server. SKIPs when the jars are missing."""
    fixtures = JARS / "iceberg-open-api-1.10.0-test-fixtures.jar"
    if not fixtures.exists():
        pytest.skip(f"{fixtures} missing (scripts/setup.sh test fetches it)")
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java")
    tmp = tempfile.mkdtemp(prefix="hs_rest_")
    proc = None
    for _ in range(3):
        port = _free_port()
        env = dict(os.environ, CATALOG_WAREHOUSE=warehouse,
                   CATALOG_URI=f"jdbc:sqlite:{os.path.join(tmp, 'catalog.db')}",
                   CATALOG_REST_PORT=str(port))
        env.update(extra_env or {})
        log = open(os.path.join(tmp, "server.log"), "ab")
        quick = ["-XX:TieredStopAtLevel=1"] if "PYTEST_CURRENT_TEST" in os.environ else []
        proc = subprocess.Popen([java, "-Xmx512m", *quick, "-cp", f"{JARS}/*",
                                 "org.apache.iceberg.rest.RESTCatalogServer"],
                                env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None and not _ready(port):
            time.sleep(0.1)
        if proc.poll() is None and _ready(port):
            break
        proc.kill()
        proc.wait()
        proc = None
    assert proc is not None, f"RESTCatalogServer did not start; see {tmp}/server.log"
    return {"uri": f"http://127.0.0.1:{port}", "port": port, "proc": proc, "tmp": tmp,
            "log": os.path.join(tmp, "server.log")}


def stop_server(server):
    proc = server["proc"]
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    shutil.rmtree(server["tmp"], ignore_errors=True)


@pytest.fixture(scope="session")
def rest_catalog():
    """{"uri": "http://127.0.0.1:PORT", "port", "warehouse" (folder), "log"}"""
    wh = tempfile.mkdtemp(prefix="hs_rest_wh_")
    server = start_server(wh)
    yield {"uri": server["uri"], "port": server["port"], "warehouse": wh, "log": server["log"]}
    stop_server(server)
    shutil.rmtree(wh, ignore_errors=True)


class RestProxy:
    """A forwarding proxy on 127.0.0.1 in front of the server on `port`."""

    def __init__(self, port, tokens=None, secrets=None):
        self.target = port
        self.tokens = tokens          # None: no check; else the accepted bearer tokens
        self.secrets = secrets        # None: no check; else client_id -> secret
        self.before_commit = None     # callable run once before forwarding a table commit
        self.before_commit_match = None  # set: only before a commit whose body holds this text
        # Set: every table load (and create) answer carries this "config", as a
        # catalog vending a table's storage credentials does.
        self.table_config = None
        # Once, for the next table commit: "lost" forwards it and answers 503 (the
        # server applied it, the answer was lost); "refused" answers 503 unforwarded.
        self.commit_fault = None
        self.log = []                 # (method, path, status)
        self.down = False             # close() sets it: kept-alive connections stop too
        # Set: GET /v1/config answers these overrides, and a "prefix" among them
        # is required in (then stripped from) every other path, as a catalog
        # serving several warehouses under /v1/{prefix}/ would.
        self.overrides = None
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _answer(self, status, body, ctype="application/json"):
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                proxy.log.append((self.command, self.path, status))

            def _any(self):
                if proxy.down:  # gone: the connection closes without an answer
                    self.close_connection = True
                    return
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                path = urllib.parse.urlsplit(self.path).path
                forward = self.path
                if proxy.overrides is not None:
                    if path == "/v1/config":
                        return self._answer(200, {"defaults": {"prefix": "not-this"},
                                                  "overrides": proxy.overrides})
                    prefix = proxy.overrides.get("prefix")
                    if prefix and not path.endswith("/oauth/tokens"):
                        if not path.startswith(f"/v1/{prefix}/"):
                            return self._answer(404, {"error": {
                                "message": f"no prefix in {path}", "type": "NotFound",
                                "code": 404}})
                        forward = "/v1/" + self.path[len(f"/v1/{prefix}/"):]
                        path = "/v1/" + path[len(f"/v1/{prefix}/"):]
                if path.endswith("/oauth/tokens"):
                    form = urllib.parse.parse_qs(body.decode())
                    cid = form.get("client_id", [""])[0]
                    if proxy.secrets is not None and \
                            proxy.secrets.get(cid) != form.get("client_secret", [None])[0]:
                        return self._answer(401, {"error": "invalid_client",
                                                  "error_description": "bad client secret"})
                elif proxy.tokens is not None:
                    auth = self.headers.get("Authorization", "")
                    if not auth.startswith("Bearer ") or auth[7:] not in proxy.tokens:
                        return self._answer(401, {"error": {
                            "message": "Not authorized: bad or missing bearer token",
                            "type": "NotAuthorizedException", "code": 401}})
                commit = self.command == "POST" and "/tables/" in path
                if commit and proxy.before_commit is not None and (
                        proxy.before_commit_match is None
                        or proxy.before_commit_match.encode() in body):
                    hook, proxy.before_commit = proxy.before_commit, None
                    hook()
                fault = proxy.commit_fault if commit else None
                if fault is not None:
                    proxy.commit_fault = None
                if fault == "refused":
                    return self._answer(503, {"error": {"message": "try later",
                                                        "type": "ServiceUnavailable",
                                                        "code": 503}})
                c = http.client.HTTPConnection("127.0.0.1", proxy.target, timeout=60)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("host", "content-length", "connection")}
                c.request(self.command, forward, body=body or None, headers=headers)
                r = c.getresponse()
                data = r.read()
                c.close()
                if fault == "lost":
                    return self._answer(503, {"error": {"message": "gateway lost the answer",
                                                        "type": "ServiceUnavailable",
                                                        "code": 503}})
                loads = self.command == "GET" and "/tables/" in path or \
                    self.command == "POST" and path.endswith("/tables")
                if proxy.table_config is not None and loads and r.status == 200:
                    doc = json.loads(data)
                    doc["config"] = dict(proxy.table_config)
                    data = json.dumps(doc).encode()
                self._answer(r.status, data, r.getheader("Content-Type") or "application/json")

            do_GET = do_POST = do_DELETE = do_HEAD = _any

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.down = True
        self.server.shutdown()
        self.server.server_close()
