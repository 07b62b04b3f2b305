"""Scalar inverted indexes vs DuckDB over the same Parquet files.

pyarrow writes a Parquet file with one randomized column (NULLs, NaN, -0.0,
empty and non-ASCII strings, few or many distinct values, several row
groups). The C test executable `test_scalar_index` in driver mode
(HS_SIDX_DRIVER=<file>, HS_SIDX_COLUMN=x) reads the column with our Parquet
reader, builds its index, validates it and answers predicates read from
stdin with row positions; DuckDB answers the same predicates over the same
file (`file_row_number`). Both must be identical, predicate by predicate.

Set HS_BUILD_DIR to the CMake build directory (default build/release).
Bounded to roughly 30 s; HS_SIDX_PREDICATES changes the predicates per column.
"""

import datetime
import math
import os
import random
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

duckdb = pytest.importorskip("duckdb")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
N_PRED = int(os.environ.get("HS_SIDX_PREDICATES", "150"))
WORDS = ["", "a", "ab", "abc", "b", "été", "über", "日本語", "😀x", "zz", "a%_", "Ωmega", "x" * 40]


def _exe():
    build = os.environ.get("HS_BUILD_DIR", os.path.join(ROOT, "build", "release"))
    if not os.path.isabs(build):
        build = os.path.join(ROOT, build)
    path = os.path.join(build, "test_scalar_index")
    if not os.path.exists(path):
        pytest.skip(f"{path} not built (set HS_BUILD_DIR)")
    return path


# Each kind: (arrow type, value generator(rng, distinct), literal kinds).
def _gen(kind, rng, distinct):
    if kind == "int64":
        return rng.randrange(distinct) * 7919 - 3 * distinct
    if kind == "int32":
        return rng.randrange(distinct) - distinct // 2
    if kind == "float64":
        if rng.random() < 0.1:
            return rng.choice([float("nan"), -0.0, 0.0, float("inf"), -float("inf")])
        return (rng.randrange(distinct) - distinct / 2) / 4
    if kind == "string":
        if distinct <= 20:
            return rng.choice(WORDS)
        return "".join(rng.choice("ab日😀") for _ in range(rng.randrange(6)))
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "date":
        return datetime.date(2000, 1, 1) + datetime.timedelta(days=rng.randrange(distinct))
    if kind == "timestamp":
        return datetime.datetime(2020, 1, 1) + datetime.timedelta(microseconds=rng.randrange(distinct) * 999)
    raise AssertionError(kind)


ARROW = {"int64": pa.int64(), "int32": pa.int32(), "float64": pa.float64(), "string": pa.string(),
         "bool": pa.bool_(), "date": pa.date32(), "timestamp": pa.timestamp("us")}


def _key(kind, v):
    """(driver literal, DuckDB column expression, DuckDB literal) for value v."""
    if kind in ("int64", "int32"):
        return f"i:{v}", "x", f"CAST({v} AS BIGINT)"
    if kind == "float64":
        return f"d:{v!r}", "x", f"CAST('{v!r}' AS DOUBLE)"
    if kind == "string":
        b = v.encode()
        return "s:" + b.hex(), "x", "'" + v.replace("'", "''") + "'"
    if kind == "bool":
        return f"b:{int(v)}", "x", "true" if v else "false"
    if kind == "date":
        days = (v - datetime.date(1970, 1, 1)).days
        return f"i:{days}", "date_diff('day', DATE '1970-01-01', x)", str(days)
    if kind == "timestamp":
        us = (v - datetime.datetime(1970, 1, 1)) // datetime.timedelta(microseconds=1)
        return f"i:{us}", "epoch_us(x)", str(us)
    raise AssertionError(kind)


def _probe(kind, rng, values, distinct):
    """A query value: usually from the data, sometimes absent or a boundary."""
    if values and rng.random() < 0.6:
        return rng.choice(values)
    v = _gen(kind, rng, distinct * 2 + 3)
    if kind == "float64" and rng.random() < 0.3:
        v = rng.choice([0.125, -1e300, 1e300, v + 0.5 if math.isfinite(v) else v])
    return v


def _predicates(kind, rng, values, distinct):
    out = []
    for _ in range(N_PRED):
        op = rng.choice(["eq", "in", "range", "range", "null", "notnull"] + (["prefix"] * 2 if kind == "string" else []))
        if op == "eq":
            d, col, lit = _key(kind, _probe(kind, rng, values, distinct))
            out.append((f"eq {d}", f"{col} = {lit}"))
        elif op == "in":
            ks = [_key(kind, _probe(kind, rng, values, distinct)) for _ in range(rng.randint(1, 4))]
            out.append(("in " + " ".join(k[0] for k in ks), f"{ks[0][1]} IN ({', '.join(k[2] for k in ks)})"))
        elif op == "range":
            lo = _key(kind, _probe(kind, rng, values, distinct)) if rng.random() < 0.8 else None
            hi = _key(kind, _probe(kind, rng, values, distinct)) if rng.random() < 0.8 else None
            li, hi_i = rng.random() < 0.5, rng.random() < 0.5
            conds = []
            col = (lo or hi or _key(kind, _gen(kind, rng, 2)))[1]
            if lo:
                conds.append(f"{col} {'>=' if li else '>'} {lo[2]}")
            if hi:
                conds.append(f"{col} {'<=' if hi_i else '<'} {hi[2]}")
            where = " AND ".join(conds) if conds else "x IS NOT NULL"
            out.append((f"range {lo[0] if lo else '-'} {int(li)} {hi[0] if hi else '-'} {int(hi_i)}", where))
        elif op == "null":
            out.append(("null", "x IS NULL"))
        elif op == "notnull":
            out.append(("notnull", "x IS NOT NULL"))
        else:
            s = _probe(kind, rng, values, distinct)
            s = s[: rng.randrange(len(s) + 1)] if s else s
            lit = "'" + s.replace("'", "''") + "'"
            out.append((f"prefix s:{s.encode().hex()}", f"starts_with(x, {lit})"))
    return out


CASES = [(k, d) for k in ("int64", "int32", "float64", "string", "date", "timestamp") for d in (12, 5000)] + [("bool", 2)]


@pytest.mark.parametrize("kind,distinct", CASES)
def test_index_matches_duckdb(tmp_path, kind, distinct):
    rng = random.Random(f"{kind}-{distinct}")
    n = 6000
    null_p = rng.choice([0.0, 0.1, 0.5])
    vals = [None if rng.random() < null_p else _gen(kind, rng, distinct) for _ in range(n)]
    path = str(tmp_path / "data.parquet")
    pq.write_table(pa.table({"x": pa.array(vals, type=ARROW[kind])}), path, row_group_size=2500)
    present = [v for v in vals if v is not None]
    preds = _predicates(kind, rng, present, distinct)

    env = {**os.environ, "HS_SIDX_DRIVER": path, "HS_SIDX_COLUMN": "x"}
    r = subprocess.run([_exe()], input="".join(p[0] + "\n" for p in preds), capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("layout "), lines[:1]
    answers = lines[1:]
    assert len(answers) == len(preds), r.stdout[-2000:]

    con = duckdb.connect()
    con.execute(f"CREATE VIEW t AS SELECT file_row_number AS rn, x FROM read_parquet('{path}', file_row_number=true)")
    for (cmd, where), got in zip(preds, answers):
        assert got.startswith("ok"), (cmd, got)
        ours = [int(t) for t in got.split()[1:]]
        want = [row[0] for row in con.execute(f"SELECT rn FROM t WHERE {where} ORDER BY rn").fetchall()]
        assert ours == want, f"{cmd!r} / WHERE {where}: {len(ours)} rows vs DuckDB {len(want)}"
