"""`hyperstream sql`, run as the built binary (HS_BUILD_DIR, default
build/release; a missing binary fails, never skips) over a table folder
of random rows: the aligned table, --csv (read back by pyarrow's CSV
reader) and --json (read back by json) must hold DuckDB's answer to the
same query over the same rows; --root and --table naming; several
statements, a script on stdin, errors with the caret and exit status 1,
usage errors 2, Ctrl-C cancelling a statement (a script's, and one typed at
the prompt), and the interactive prompt on a pseudo-terminal (history, a
statement over several lines, an error that does not end the session).
"""
import csv
import io
import json
import math
import os
import random
import select
import subprocess
import time

import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
hdb = pytest.importorskip("hyperstreamdb")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _exe():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "hyperstream")
    if not os.path.exists(path):
        pytest.fail(f"{path} not built: run scripts/build.sh release (or set HS_BUILD_DIR)")
    return path


def run(*args, rc=0, cwd=None, stdin=None):
    r = subprocess.run([_exe(), "sql", *map(str, args)], capture_output=True, text=True,
                       timeout=60, cwd=cwd, input=stdin)
    assert r.returncode == rc, f"{args}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    rng = random.Random(11)
    n = 300
    words = ["alpha", "b,c", 'say "hi"', "", "ünï", None]
    data = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "w": pa.array([rng.choice(words) for _ in range(n)], pa.string()),
        "v": pa.array([None if rng.random() < 0.1 else rng.randrange(-50, 50) for _ in range(n)],
                      pa.int32()),
        "f": pa.array([None if rng.random() < 0.1 else rng.uniform(-10, 10) for _ in range(n)],
                      pa.float64()),
    })
    root = tmp_path_factory.mktemp("lake")
    t = hdb.Table.create(str(root / "items"), data.schema)
    t.write(data)
    return root, data


Q = "SELECT id, w, v, f, v > 0 AS pos FROM items WHERE id % 7 = 1 ORDER BY id"


def _duck(data, sql):
    con = duckdb.connect()
    con.register("items", data)
    return con.execute(sql).fetchall()


def test_table_output_is_aligned_and_complete(lake):
    root, data = lake
    out = run("--root", root, "SELECT id, w, v FROM items ORDER BY id LIMIT 12").stdout
    lines = out.rstrip("\n").split("\n")
    assert [c.strip() for c in lines[0].split("|")] == ["id", "w", "v"]
    assert set(lines[1]) <= {"-", "+"}
    bar = [i for i, ch in enumerate(lines[1]) if ch == "+"]
    for line in lines[2:-1]:  # every row's separators under the header's
        assert [i for i, ch in enumerate(line) if ch == "|"] == bar or "ü" in line
    assert lines[-1] == "(12 rows)"
    expect = _duck(data, "SELECT id, w, v FROM items ORDER BY id LIMIT 12")
    for line, row in zip(lines[2:-1], expect):
        cells = [c.strip() for c in line.split(" | ")]
        assert int(cells[0]) == row[0]
        assert cells[1] == (row[1] or "").strip()
        assert cells[2] == ("" if row[2] is None else str(row[2]))


def test_csv_and_json_equal_duckdb(lake):
    root, data = lake
    expect = _duck(data, Q)
    out = run("--root", root, "--csv", Q).stdout
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["id", "w", "v", "f", "pos"]
    assert len(rows) - 1 == len(expect)
    for got, exp in zip(rows[1:], expect):
        assert int(got[0]) == exp[0]
        assert got[1] == (exp[1] if exp[1] is not None else "")
        assert got[2] == ("" if exp[2] is None else str(exp[2]))
        if exp[3] is None:
            assert got[3] == ""
        else:
            assert math.isclose(float(got[3]), exp[3], rel_tol=1e-15)
    # an empty string is "" and a NULL is nothing
    raw = run("--root", root, "--csv", "SELECT '' AS e, NULL::text AS n").stdout
    assert raw.splitlines()[1] == '"",'
    out = run("--root", root, "--json", Q).stdout
    objs = [json.loads(line) for line in out.splitlines()]
    assert len(objs) == len(expect)
    for o, exp in zip(objs, expect):
        assert list(o) == ["id", "w", "v", "f", "pos"]
        assert (o["id"], o["w"], o["v"], o["pos"]) == (exp[0], exp[1], exp[2], exp[4])
        assert (o["f"] is None) == (exp[3] is None)
        if exp[3] is not None:
            assert math.isclose(o["f"], exp[3], rel_tol=1e-15)


def test_vectors_numeric_and_naming(lake, tmp_path):
    root, data = lake
    out = run("--root", root, "--json",
              "SELECT '[1,2.5,3]'::vector AS e, 1.50::numeric(5,2) AS n, 'NaN'::float8 AS x").stdout
    o = json.loads(out)
    assert o == {"e": [1, 2.5, 3], "n": 1.5, "x": "NaN"}
    # --table NAME=PATH; the default root is the current directory
    out = run("--table", f"t2={root / 'items'}", "--csv", "SELECT count(*) AS n FROM t2").stdout
    assert out.splitlines() == ["n", str(data.num_rows)]
    out = run("--csv", "SELECT count(*) AS n FROM items", cwd=root).stdout
    assert out.splitlines()[1] == str(data.num_rows)


def test_statements_script_and_errors(lake):
    root, data = lake
    out = run("--root", root, "--csv", "SELECT 1 AS a; SELECT 'x;y' AS b -- c;\n; SELECT 2 AS c")
    assert out.stdout.split() == ["a", "1", "b", "x;y", "c", "2"]
    out = run("--root", root, "--csv", stdin="SELECT 3 AS a;\n/* ; */ SELECT $$;$$ AS b;\n")
    assert out.stdout.split() == ["a", "3", "b", ";"]
    sql = "SELECT id, wx FROM items"
    r = run("--root", root, sql, rc=1)
    err = r.stderr.rstrip("\n").split("\n")
    assert '"wx"' in err[0] and "position 12" in err[0]
    assert err[-1].index("^") - err[-2].index("SELECT") == sql.index("wx")
    r = run("--root", root, "SELECT 1 AS a; SELECT 1/(v-v) FROM items; SELECT 2 AS b", rc=1)
    assert "division by zero" in r.stderr and r.stderr.rstrip().endswith("^")
    assert "b" not in r.stdout.split()  # the script stopped at the failure
    run("--root", root, "--bogus", "SELECT 1", rc=2)
    run("--table", "nopath", "SELECT 1", rc=2)
    run("--root", root, "SELECT * FROM no_such_table", rc=1)


def _read_until(fd, marker, timeout=20.0):
    buf = b""
    end = time.monotonic() + timeout
    while marker not in buf:
        left = end - time.monotonic()
        assert left > 0, f"timed out waiting for {marker!r}; got {buf!r}"
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    return buf.decode("utf-8", "replace")


@pytest.mark.skipif(os.name != "posix", reason="needs a pseudo-terminal")
def test_interactive_prompt(lake):
    import pty

    root, data = lake
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI on the terminal
        os.execv(_exe(), [_exe(), "sql", "--root", str(root)])
    try:
        _read_until(fd, b"hs> ")
        os.write(fd, b"SELECT count(*)\n")
        _read_until(fd, b"..> ")  # continued until ';'
        os.write(fd, b"  FROM items;\n")
        out = _read_until(fd, b"hs> ")
        assert str(data.num_rows) in out and "(1 row)" in out
        os.write(fd, b"SELECT nope FROM items;\n")
        out = _read_until(fd, b"hs> ")
        assert "does not exist" in out and "^" in out
        # Ctrl-C cancels a long statement and the prompt comes back
        os.write(fd, b"SELECT count(*) FROM items a, items b, items c, items d;\n")
        time.sleep(0.5)
        os.write(fd, b"\x03")
        out = _read_until(fd, b"hs> ")
        assert "cancelled" in out
        os.write(fd, b"\\s\n")
        out = _read_until(fd, b"hs> ")
        assert "1  SELECT count(*)" in out and "2  SELECT nope FROM items;" in out
        os.write(fd, b"SELECT 1 AS one;\n")
        assert "(1 row)" in _read_until(fd, b"hs> ")
        os.write(fd, b"\\q\n")
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        pid = 0
    finally:
        if pid:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)


def test_sigint_cancels_a_script(lake):
    import signal

    root, _ = lake
    p = subprocess.Popen([_exe(), "sql", "--root", str(root),
                          "SELECT count(*) FROM items a, items b, items c, items d"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert time.monotonic() - t0 < 10
    assert p.returncode == 1 and "cancelled" in err, (p.returncode, out, err)
