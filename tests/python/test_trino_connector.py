"""Our Trino connector (java/trino-hyperstream, issue 17) inside real Trino 476.

Tables are written by our Python API (appends, an identity partition spec,
deletes, a tag, scalar and HNSW indexes; a table of many files; a table of
every type we map) under one root folder, schema ``default``. All queries
run in one Trino query runner (trino-testing's DistributedQueryRunner,
started once by the JUnit test HsQueryRunnerTest; trino_util.py), and the
answers are checked here:

* rows equal the Python API's (``Table.to_arrow``) on seeded random
  filters, and equal Trino's own evaluation of the same SQL with pushdown
  into connectors switched off (``allow_pushdown_into_connectors``);
* pushdown is real: ``EXPLAIN`` shows the filter text in the table scan,
  the connector's metrics show an index answered and few rows were scanned,
  and a table of many files is read as that many splits;
* ``ORDER BY l2_distance(emb, ARRAY[...]) LIMIT k`` (and cosine_distance,
  inner_product DESC) is our vector top-k: exactly min(k, matches) rows,
  equal to ``Table.search`` row for row (ties included) and to brute force;
* time travel (``FOR VERSION AS OF`` id or tag, ``FOR TIMESTAMP AS OF``);
* ``INSERT INTO ... SELECT`` / ``VALUES`` commit one snapshot that our Python
  API and pyiceberg read back identically (every mapped type, vectors; a
  wrong vector dimension is an error naming the column);
* bad input (a missing table, a wrong vector dimension, a type we cannot
  map, an unknown snapshot) is a Trino error naming the problem, and the
  runner keeps answering afterwards.
"""

import collections
import datetime as dt
import decimal
import math
import os

import numpy as np
import pyarrow as pa
import pytest

from random_filters import combine, float_filter, float_table
from trino_util import TrinoRunner

DIM = 8
T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
MANY_FILES = 12


def gen(rng, ids, tag="", vectors=None):
    n = len(ids)
    if vectors is None:
        emb = [None if rng.random() < 0.05 else rng.standard_normal(DIM).astype(np.float32).tolist()
               for _ in range(n)]
    else:  # drawn from a few distinct vectors: many exact ties
        emb = [vectors[int(rng.integers(0, len(vectors)))].tolist() for _ in range(n)]
    return pa.table({
        "id": pa.array(list(ids), pa.int64()),
        "name": pa.array([None if rng.random() < 0.1 else f"n{int(rng.integers(0, 40))}{tag}"
                          for _ in range(n)], pa.string()),
        "score": pa.array([None if rng.random() < 0.1 else float(rng.integers(-800, 800)) / 8
                           for _ in range(n)], pa.float64()),
        "cat": pa.array([str(rng.choice(["a", "b", "c"])) for _ in range(n)], pa.string()),
        "qty": pa.array([int(rng.integers(0, 100)) for _ in range(n)], pa.int32()),
        "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(rng.integers(0, 20)))
                       for _ in range(n)], pa.date32()),
        "ts": pa.array([T0 + dt.timedelta(seconds=int(rng.integers(0, 20 * 86400)))
                        for _ in range(n)], pa.timestamp("us", tz="UTC")),
        "emb": pa.array(emb, pa.list_(pa.float32(), DIM)),
    })


def random_filter(rng):
    """A filter valid in Trino SQL (session time zone UTC) and in our filter language."""
    def atom():
        k = int(rng.integers(0, 9))
        if k == 0:
            return f"id {rng.choice(['=', '<', '>=', '<>'])} {int(rng.integers(0, 1200))}"
        if k == 1:
            lo = int(rng.integers(0, 1000))
            return f"id BETWEEN {lo} AND {lo + int(rng.integers(0, 200))}"
        if k == 2:
            return f"cat {rng.choice(['=', '<>'])} '{rng.choice(['a', 'b', 'c'])}'"
        if k == 3:
            return f"qty IN ({', '.join(str(int(x)) for x in rng.integers(0, 100, 4))})"
        if k == 4:
            return f"name LIKE 'n{int(rng.integers(1, 4))}%'"
        if k == 5:
            return f"score {rng.choice(['<', '>'])} {float(rng.integers(-800, 800)) / 8}"
        if k == 6:
            return f"d >= DATE '2024-01-{int(rng.integers(1, 20)):02d}'"
        if k == 7:
            return f"ts < TIMESTAMP '2024-01-{int(rng.integers(2, 20)):02d} 06:00:00'"
        return f"name IS {rng.choice(['', 'NOT '])}NULL"
    return combine(rng, atom)


# ------------------------------------------------------------ canonical rows


def canon(v):
    """A Python value as HsQueryRunnerTest writes Trino's (hashable)."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=dt.timezone.utc)
        return (v - EPOCH) // dt.timedelta(microseconds=1)
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, dict):
        return tuple(canon(x) for x in v.values())
    if isinstance(v, (list, tuple)):
        return tuple(canon(x) for x in v)
    return v


def arrow_rows(table, columns):
    cols = [table.column(c).to_pylist() for c in columns]
    return [tuple(canon(c[i]) for c in cols) for i in range(table.num_rows)]


def trino_rows(result):
    return [tuple(canon(x) for x in r) for r in result["rows"]]


def diff(mine, want):
    """None when the two row lists are the same multiset, else a description."""
    a, b = collections.Counter(mine), collections.Counter(want)
    if a == b:
        return None
    extra, lost = a - b, b - a
    return (f"{len(mine)} rows, want {len(want)}; only Trino: {list(extra.elements())[:3]}; "
            f"missing: {list(lost.elements())[:3]}")


def sql_vector(q):
    """An ARRAY of DOUBLE literals (1.5e0), each exactly a float32 value.
    (Decimal literals such as 0.123 go through Trino's decimal-to-real cast,
    which may round a float32 value to a neighbour; Trino's rows then differ
    from Table.search's by that query vector, pushed or not.)"""
    return "ARRAY[" + ", ".join(repr(float(x)) + ("" if "e" in repr(float(x)) else "e0")
                                for x in q) + "]"


# ------------------------------------------------------------ the tables and the run

COLS = ["id", "name", "score", "cat", "qty", "d", "ts", "emb"]
NOPUSH = {"allow_pushdown_into_connectors": "false"}
# The runner's JVM in tests: C1 only. A short run on few cores spends more on
# C2 compiling than it gains (about 25 % less CPU over the module here).
TEST_JVM = "-XX:TieredStopAtLevel=1"


@pytest.fixture(scope="module")
def trino(tmp_path_factory, hdb):
    """Start Trino, write the tables meanwhile, build every case, run them all
    in that one runner (4 at a time; a table's writes and the reads that must
    see them in order, as a group)."""
    root = str(tmp_path_factory.mktemp("trino-root"))
    os.makedirs(os.path.join(root, "default"))
    scratch = str(tmp_path_factory.mktemp("trino-run"))
    runner = TrinoRunner(root, scratch, threads=4, jvm=TEST_JVM)
    try:
        yield _cases_and_run(runner, root, hdb)
    finally:
        runner.close()


def _cases_and_run(runner, root, hdb):
    rng = np.random.default_rng(17)

    t = hdb.Table(os.path.join(root, "default", "t"))
    sids = [t.write(gen(rng, range(0, 300), "a")), t.write(gen(rng, range(300, 500), "b"))]
    t.create_tag("two")
    t.set_partition_spec(["cat"])
    sids.append(t.write(gen(rng, range(500, 800), "c")))
    t.delete("qty < 5")
    sids.append(t.current_snapshot_id)
    sids.append(t.write(gen(rng, range(800, 1000), "d")))
    t.delete("cat = 'b' AND id < 200")
    sids.append(t.current_snapshot_id)
    t.index_all()
    t.add_index("emb", "hnsw")

    many = hdb.Table(os.path.join(root, "default", "many"))
    tie_vectors = rng.standard_normal((5, DIM)).astype(np.float32)
    for i in range(MANY_FILES):
        many.write(gen(rng, range(i * 40, (i + 1) * 40), vectors=tie_vectors))

    types = hdb.Table(os.path.join(root, "default", "types"))
    types.write(pa.table({
        "i8": pa.array([1, None, -3, 127], pa.int8()),
        "i16": pa.array([1, 2, None, -32768], pa.int16()),
        "f": pa.array([1.5, float("nan"), None, -0.0], pa.float32()),
        "b": pa.array([True, None, False, True]),
        "dec": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.50"),
                         decimal.Decimal("99999999.99")], pa.decimal128(10, 2)),
        "big": pa.array([decimal.Decimal("12345678901234567890.1234"), decimal.Decimal("-1.0001"),
                         None, decimal.Decimal("0.0000")], pa.decimal128(30, 4)),
        "tsn": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 678901), None,
                         dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
                         dt.datetime(2000, 2, 29)], pa.timestamp("us")),
        "bin": pa.array([b"ab", None, b"", b"\x00\xff"], pa.binary()),
        "li": pa.array([[1, 2], None, [], [None, 4]], pa.list_(pa.int32())),
        "s": pa.array([{"x": 1, "y": "a"}, None, {"x": None, "y": "c"}, {"x": 4, "y": None}],
                      pa.struct([("x", pa.int32()), ("y", pa.string())])),
    }))

    bad = hdb.Table(os.path.join(root, "default", "bad"))
    bad.write(pa.table({"id": pa.array([1], pa.int64()),
                        "tm": pa.array([dt.time(1, 2, 3)], pa.time64("us"))}))

    cases, checks = [], []
    results_ref = []  # filled after the run: checks that compare two results read it

    def case(cid, sql, check, metrics=False, session=None, group=None):
        c = {"id": cid, "sql": sql, "metrics": metrics}
        if session:
            c["session"] = session
        if group:
            c["group"] = group  # run in order with the group's other cases
        cases.append(c)
        checks.append((cid, sql, check))

    def rows_equal(want):
        def check(r):
            if "error" in r:
                return f"error {r['error']}"
            return diff(trino_rows(r), want)
        return check

    # Random filters: pushed, and Trino's own evaluation, both = Python's.
    frng = np.random.default_rng(5)
    select = ", ".join(COLS)
    for i, where in enumerate([None] + [random_filter(frng) for _ in range(8)]):
        want = arrow_rows(t.to_arrow(filter=where), COLS)
        sql = f"SELECT {select} FROM t" + (f" WHERE {where}" if where else "")
        case(f"filter{i}", sql, rows_equal(want))
        case(f"filter{i}-nopush", sql, rows_equal(want), session=NOPUSH)
    # Projection, count(*), limit.
    case("project", "SELECT name, id FROM t WHERE qty > 50",
         rows_equal(arrow_rows(t.to_arrow(filter="qty > 50"), ["name", "id"])))
    n_a = t.to_arrow(filter="cat = 'a'", columns=["id"]).num_rows
    case("count", "SELECT count(*) FROM t WHERE cat = 'a'", rows_equal([(n_a,)]))
    live_c = set(t.to_arrow(filter="cat = 'c'", columns=["id"]).column("id").to_pylist())

    def limit_check(r):
        if "error" in r:
            return r["error"]
        ids = [x[0] for x in r["rows"]]
        return None if len(ids) == 7 and set(ids) <= live_c else f"LIMIT 7 gave {ids}"
    case("limit", "SELECT id FROM t WHERE cat = 'c' LIMIT 7", limit_check)

    # Every mapped type, as pyarrow reads the table back.
    tcols = types.to_arrow().column_names
    case("types", f"SELECT {', '.join(tcols)} FROM types",
         rows_equal(arrow_rows(types.to_arrow(), tcols)), group="types")
    case("types-filter", "SELECT i8, dec, big, tsn FROM types WHERE dec < 2 AND big IS NOT NULL",
         rows_equal(arrow_rows(types.to_arrow(filter="dec < 2 AND big IS NOT NULL"),
                               ["i8", "dec", "big", "tsn"])), group="types")
    case("types-ts", "SELECT i8 FROM types WHERE tsn >= TIMESTAMP '2000-01-01 00:00:00'",
         rows_equal([(1,), (127,)]), group="types")

    # Metadata: schemas are folders, tables the table folders in them.
    case("show-tables", "SHOW TABLES FROM default",
         rows_equal([("bad",), ("del",), ("floats",), ("floats1",), ("ins",), ("many",),
                     ("t",), ("typed",), ("types",)]), group="made")  # before CREATE TABLE made
    case("show-schemas", "SHOW SCHEMAS",
         rows_equal([("default",), ("information_schema",)]))
    case("show-columns", "SELECT column_name, data_type FROM information_schema.columns "
         "WHERE table_schema = 'default' AND table_name = 't'",
         rows_equal([("id", "bigint"), ("name", "varchar"), ("score", "double"),
                     ("cat", "varchar"), ("qty", "integer"), ("d", "date"),
                     ("ts", "timestamp(6) with time zone"), ("emb", "array(real)")]))

    # Random filters over every pushable type: pushed = Trino's own evaluation.
    trng = np.random.default_rng(31)
    n = 400
    typed = hdb.Table(os.path.join(root, "default", "typed"))
    typed.write(pa.table({
        "i16": pa.array([None if trng.random() < 0.1 else int(x)
                         for x in trng.integers(-300, 300, n)], pa.int16()),
        "f": pa.array([None if trng.random() < 0.1 else float(x) / 4
                       for x in trng.integers(-40, 40, n)], pa.float32()),
        "b": pa.array([None if trng.random() < 0.1 else bool(x) for x in trng.integers(0, 2, n)]),
        "dec": pa.array([None if trng.random() < 0.1 else decimal.Decimal(int(x)) / 100
                         for x in trng.integers(-5000, 5000, n)], pa.decimal128(10, 2)),
        "big": pa.array([None if trng.random() < 0.1 else decimal.Decimal(int(x)) / 10000
                         for x in trng.integers(-10**9, 10**9, n)], pa.decimal128(30, 4)),
        "tsn": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(microseconds=int(x))
                         for x in trng.integers(0, 10 * 86400 * 10**6, n)], pa.timestamp("us")),
        "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(x))
                       for x in trng.integers(0, 30, n)], pa.date32()),
        "s": pa.array([None if trng.random() < 0.1 else f"s{int(x)}"
                       for x in trng.integers(0, 30, n)], pa.string()),
    }))

    def typed_atom():
        k = int(trng.integers(0, 8))
        op = str(trng.choice(["=", "<", ">=", "<>"]))
        if k == 0:
            return f"i16 {op} {int(trng.integers(-300, 300))}"
        if k == 1:
            return f"f {op} REAL '{float(trng.integers(-40, 40)) / 4}'"
        if k == 2:
            return f"b = {str(trng.choice(['TRUE', 'FALSE']))}"
        if k == 3:
            return f"dec {op} DECIMAL '{int(trng.integers(-5000, 5000)) / 100:.2f}'"
        if k == 4:
            return f"big BETWEEN {int(trng.integers(-10**5, 0))} AND {int(trng.integers(0, 10**5))}"
        if k == 5:
            return (f"tsn {op} TIMESTAMP '2024-01-0{int(trng.integers(1, 10))} "
                    f"{int(trng.integers(0, 24)):02d}:00:00.{int(trng.integers(0, 10**6)):06d}'")
        if k == 6:
            return f"d IN (DATE '2024-01-{int(trng.integers(1, 29)):02d}', DATE '2024-01-05')"
        return f"s {str(trng.choice(['IS NULL', 'IS NOT NULL', '>= ' + repr('s1')]))}"
    tsel = "SELECT i16, f, b, dec, big, tsn, d, s FROM typed"

    def same_as(other):  # rows equal the (unpushed) case `other`'s, as multisets
        def check(r):
            if "error" in r:
                return r["error"]
            ref = results_ref[0][other]
            if "error" in ref:
                return "unpushed: " + ref["error"]
            return diff(trino_rows(r), trino_rows(ref))
        return check
    for i in range(8):
        f = combine(trng, typed_atom)
        cid = f"typed{i}"
        case(cid + "-nopush", f"{tsel} WHERE {f}", None, session=NOPUSH)
        case(cid, f"{tsel} WHERE {f}", same_as(cid + "-nopush"))

    # Real and double filters are enforced by the scan (Trino keeps no filter
    # of its own): rows equal Trino's own evaluation on random filters over
    # NaN, -0.0, 0.0, infinities and nulls, in indexed files.
    flrng = np.random.default_rng(37)
    floats = hdb.Table(os.path.join(root, "default", "floats"))
    for i in range(3):  # the last file: plain doubles
        floats.write(float_table(flrng, range(i * 100, i * 100 + 100), plain=i == 2))
    floats.index_all()
    fl_filters = ["g > DOUBLE '1.5'", "f >= CAST('-0.0' AS REAL)", "g = nan()", "f <> nan()",
                  "g < infinity()", "NOT (g <> 0.0E0)"]
    # (No NaN in IN lists: Trino's domain extraction drops a NaN from an IN
    # list as never equal, its evaluator matches NaN rows, so Trino's own
    # pushed plan differs from its unpushed one there, whoever re-checks.)
    fl_filters += [float_filter(flrng, "REAL", distinct=True, nan_in=False) for _ in range(30)]
    for i, f in enumerate(fl_filters):
        case(f"floats{i}-nopush", f"SELECT id FROM floats WHERE {f}", None, session=NOPUSH)
        case(f"floats{i}", f"SELECT id FROM floats WHERE {f}", same_as(f"floats{i}-nopush"))

    def no_trino_filter(r):
        if "error" in r:
            return r["error"]
        text = r["rows"][0][0]
        if "Filter" in text or "<> 'NaN'" not in text:
            return f"Trino still filters, or NaN is not excluded:\n{text}"
        return None
    case("floats-explain", "EXPLAIN SELECT id FROM floats WHERE g > DOUBLE '1.5'",
         no_trino_filter)
    # One file (one split): a global aggregate over a double filter is pushed
    # too, now that the filter is ours whole.
    floats1 = hdb.Table(os.path.join(root, "default", "floats1"))
    floats1.write(float_table(flrng, range(0, 100)))
    n_fl = sum(1 for x in floats1.to_arrow(columns=["g"]).column("g").to_pylist()
               if x is not None and not math.isnan(x) and x > 1.5)

    def fl_agg(r):
        if "error" in r:
            return r["error"]
        if r["rows"][0][0] != n_fl or r["metrics"].get("hyperstream.aggregated") != 1:
            return f"rows {r['rows']} (want count {n_fl}), pushed? {r['metrics']}"
        return None
    case("floats-agg", "SELECT count(*) FROM floats1 WHERE g > DOUBLE '1.5'", fl_agg,
         metrics=True)

    # Pushdown: EXPLAIN shows the filter; metrics show the index answered.
    def explain_has(*needles):
        def check(r):
            if "error" in r:
                return r["error"]
            text = r["rows"][0][0]
            missing = [s for s in needles if s not in text]
            return f"EXPLAIN lacks {missing}:\n{text}" if missing else None
        return check
    case("explain", "EXPLAIN SELECT id, cat FROM t WHERE id = 417",
         explain_has('filter=("id" = 417)', "TableScan"))

    def indexed(r):
        if "error" in r:
            return r["error"]
        m = r["metrics"]
        if [x[0] for x in r["rows"]] != [417]:
            return f"rows {r['rows']}"
        if m.get("hyperstream.files_indexed", 0) < 1 or m.get("hyperstream.rows_scanned", 99) > 10:
            return f"the index did not answer: {m}"
        return None
    case("indexed", "SELECT id, cat FROM t WHERE id = 417", indexed, metrics=True)

    # A selective filter over indexed files: the plan's candidates are packed
    # into one split (its files read at those rows), and the table statistics
    # the planner sees are the candidate count.
    n_q7 = t.to_arrow(filter="qty = 7", columns=["id"]).num_rows

    def packed(r):
        if "error" in r:
            return r["error"]
        m = r["metrics"]
        if r["rows"] != [[n_q7]]:
            return f"rows {r['rows']}, want {n_q7}"
        if m.get("hyperstream.splits") != 1 or m.get("hyperstream.split_files", 0) < 2:
            return f"not one split of several files: {m}"
        if m.get("hyperstream.files_indexed", 0) < 2 or m.get("hyperstream.rows_scanned") != n_q7:
            return f"the indexes did not answer: {m}"
        return None
    case("packed-split", "SELECT count(*) FROM t WHERE qty = 7", packed, metrics=True)
    case("packed-estimate", "EXPLAIN SELECT id FROM t WHERE id = 417",
         explain_has("Estimates: {rows: 1 "))

    # Global aggregates: pushed (applyAggregation, one split computes the row)
    # where the filter is ours whole and its candidates fit one split, else
    # Trino's; either way equal to Trino's own evaluation on random filters.
    # (sum of an integer column is sum(CAST(x AS bigint)): a projection, so Trino's)
    agg_t = ("count(*), count(name), sum(id), min(qty), max(id), min(name), max(cat), "
             "min(d), max(d), min(ts), max(ts), sum(score)")

    def agg_same(other, pushed=None):
        def check(r):
            if "error" in r:
                return r["error"]
            ref = results_ref[0][other]
            if "error" in ref:
                return "unpushed: " + ref["error"]
            a, b = trino_rows(r), trino_rows(ref)
            if len(a) != 1 or len(b) != 1 or len(a[0]) != len(b[0]):
                return f"{a} != {b}"
            for x, y in zip(a[0], b[0]):
                same = (math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9)
                        if isinstance(x, float) and isinstance(y, float) else x == y)
                if not same:
                    return f"{a} != unpushed {b}"
            if pushed is not None and (r["metrics"].get("hyperstream.aggregated") == 1) != pushed:
                return f"pushed should be {pushed}: {r['metrics']}"
            return None
        return check
    arng = np.random.default_rng(41)
    for i, where in enumerate(["qty = 7", "id < 0", "cat = 'a' AND id BETWEEN 100 AND 700"]
                              + [random_filter(arng) for _ in range(6)]):
        sql = f"SELECT {agg_t} FROM t WHERE {where}"
        case(f"agg{i}-nopush", sql, None, session=NOPUSH)
        case(f"agg{i}", sql, agg_same(f"agg{i}-nopush", True if i < 2 else None), metrics=True)
    case("agg-count", "SELECT count(*) FROM t WHERE qty = 7", rows_equal([(n_q7,)]))
    case("agg-cast-nopush", "SELECT sum(qty), max(id) FROM t WHERE qty = 7", None, session=NOPUSH)
    case("agg-cast", "SELECT sum(qty), max(id) FROM t WHERE qty = 7", agg_same("agg-cast-nopush"),
         metrics=True)
    case("agg-explain", f"EXPLAIN SELECT {agg_t} FROM t WHERE qty = 7",
         explain_has('filter=("qty" = 7) aggregate=[count(*), count(name), sum(id)'))
    case("agg-many", "EXPLAIN SELECT count(*), max(id) FROM many",  # 12 splits: Trino's
         explain_has("Aggregate[type = FINAL]"))

    agg_typed = ("count(*), count(s), sum(i16), min(i16), max(i16), min(dec), max(dec), "
                 "min(tsn), max(tsn), min(d), max(d), min(s), max(s), count_if(b)")
    for i in range(5):
        f = typed_atom()
        if i % 2:
            f = f"({f}) AND ({typed_atom()})"
        sql = f"SELECT {agg_typed} FROM typed WHERE {f}"
        case(f"agg-typed{i}-nopush", sql, None, session=NOPUSH)
        case(f"agg-typed{i}", sql, agg_same(f"agg-typed{i}-nopush"), metrics=True)
    agg_types = ("count(*), count(b), count_if(b), min(i8), max(i8), max(i16), min(dec), max(dec), "
                 "min(tsn), max(tsn)")
    case("agg-types-nopush", f"SELECT {agg_types} FROM types", None, session=NOPUSH,
         group="types")
    case("agg-types", f"SELECT {agg_types} FROM types", agg_same("agg-types-nopush", True),
         metrics=True, group="types")

    # Many files: one split per file; a filter on id prunes files by bounds.
    def splits(n_want, rows_want):
        def check(r):
            if "error" in r:
                return r["error"]
            got = r["metrics"].get("hyperstream.splits")
            if got != n_want:
                return f"{got} splits, want {n_want} ({r['metrics']})"
            return None if r["rows"] == [[rows_want]] else f"rows {r['rows']}"
        return check
    case("many-splits", "SELECT count(*) FROM many", splits(MANY_FILES, MANY_FILES * 40),
         metrics=True)
    case("many-pruned", "SELECT count(*) FROM many WHERE id >= 400", splits(2, 80), metrics=True)
    case("many-explain", "EXPLAIN SELECT count(*) FROM many WHERE id >= 400",
         explain_has('filter=("id" >= 400)'))
    case("many-explain-analyze", "EXPLAIN ANALYZE VERBOSE SELECT count(*) FROM many WHERE qty > 3",
         explain_has('filter=("qty" > 3)', f"Splits: {MANY_FILES},",
                     f"'hyperstream.splits' = LongCount{{total={MANY_FILES}}}",
                     f"'hyperstream.files_read' = LongCount{{total={MANY_FILES}}}"))

    # Vector top-k = Table.search, row for row, ties included; = brute force.
    vrng = np.random.default_rng(23)
    for j in range(3):
        q = vrng.standard_normal(DIM).astype(np.float32)
        for metric, fn, order in [("l2", "l2_distance", ""), ("cosine", "cosine_distance", ""),
                                  ("ip", "inner_product", " DESC")]:
            for tbl, where, k in [("t", None, 10), ("t", "cat <> 'b'", 15), ("many", None, 12),
                                  ("many", "qty < 50", 9)]:
                tab = t if tbl == "t" else many
                want = tab.search("emb", q, k=k, filter=where, metric=metric, columns=["id"])
                dist = want.column("distance").to_pylist()
                if metric == "ip":
                    dist = [-x for x in dist]  # our ip is -a.b; inner_product is a.b
                want_rows = list(zip(want.column("id").to_pylist(), dist))
                expr = f"{fn}(emb, {sql_vector(q)})"
                sql = (f"SELECT id, {expr} FROM {tbl}" + (f" WHERE {where}" if where else "")
                       + f" ORDER BY {expr}{order} LIMIT {k}")

                def ordered(r, want_rows=want_rows):
                    if "error" in r:
                        return r["error"]
                    got = [tuple(x) for x in r["rows"]]
                    return None if got == want_rows else f"got {got[:4]}..., want {want_rows[:4]}..."
                case(f"topk-{tbl}-{metric}-{j}-{where}", sql, ordered, metrics=(j == 0))
                if tbl == "many" and metric == "l2":
                    # Brute force over the filtered rows: the k smallest distances.
                    rows = many.to_arrow(filter=where)
                    vecs = np.array(rows.column("emb").to_pylist(), np.float64)
                    bf = np.sort(np.sqrt(((vecs - q.astype(np.float64)) ** 2).sum(1)))[:k]

                    def brute(r, bf=bf):
                        if "error" in r:
                            return r["error"]
                        got = np.array([x[1] for x in r["rows"]])
                        ok = len(got) == len(bf) and np.allclose(got, bf, rtol=1e-5, atol=1e-5)
                        return None if ok else f"distances {got} != brute force {bf}"
                    case(f"brute-{j}-{where}", sql, brute)
                    case(f"nopush-{j}-{where}", sql, brute, session=NOPUSH)
    q = vrng.standard_normal(DIM).astype(np.float32)
    expr = f"l2_distance(emb, {sql_vector(q)})"
    case("topk-explain", f"EXPLAIN SELECT id FROM t WHERE cat = 'a' ORDER BY {expr} LIMIT 5",
         explain_has("topK=5", "filter=(\"cat\" = 'a')"))
    # Every column beside the distance, in top-k order.
    want = t.search("emb", q, k=7, filter="qty > 20", columns=["id", "cat", "qty", "emb"])
    want_rows = [(i, c, n, tuple(e), d) for i, c, n, e, d in
                 zip(*[want.column(x).to_pylist() for x in ("id", "cat", "qty", "emb", "distance")])]

    def wide(r):
        if "error" in r:
            return r["error"]
        got = trino_rows(r)
        return None if got == want_rows else f"got {got[:2]}, want {want_rows[:2]}"
    case("topk-columns", f"SELECT id, cat, qty, emb, {expr} AS dist FROM t WHERE qty > 20 "
         f"ORDER BY dist LIMIT 7", wide)
    # k above the matches: exactly the rows with a vector.
    few = t.to_arrow(filter="id < 12", columns=["id", "emb"])
    n_vec = sum(v is not None for v in few.column("emb").to_pylist())

    def exactly(r):
        if "error" in r:
            return r["error"]
        return None if len(r["rows"]) == n_vec else f"{len(r['rows'])} rows, want {n_vec}"
    case("topk-few", f"SELECT id FROM t WHERE id < 12 ORDER BY {expr} LIMIT 50", exactly)
    # Distances as a projection only (no top-k): computed per row in double.
    few_many = many.to_arrow(filter="id < 3")
    want_d = {int(i): float(np.sqrt(((np.array(v, np.float64) - q.astype(np.float64)) ** 2).sum()))
              for i, v in zip(few_many.column("id").to_pylist(), few_many.column("emb").to_pylist())}

    def projected(r):
        if "error" in r:
            return r["error"]
        got = {x[0]: x[1] for x in r["rows"]}
        ok = got.keys() == want_d.keys() and all(math.isclose(got[i], want_d[i], rel_tol=1e-12)
                                                 for i in got)
        return None if ok else f"got {got}, want {want_d}"
    case("distance-projection", f"SELECT id, {expr} FROM many WHERE id < 3", projected)

    def error_has(*needles):
        def check(r):
            if "error" not in r:
                return f"no error: {r.get('rows')}"
            missing = [s for s in needles if s not in r["error"]]
            return f"error {r['error']!r} lacks {missing}" if missing else None
        return check

    # The distance functions take the vector and the query in either order,
    # as double, decimal or integer literals (one generic signature each: no
    # overload for Trino to choose between).
    q = vrng.standard_normal(DIM).astype(np.float32)
    want = t.search("emb", q, k=6, filter="cat = 'a'", columns=["id"]).column("id").to_pylist()
    dec = [f"{float(x):.3f}" for x in q]
    qd = np.array([float(x) for x in dec], np.float32)
    want_dec = t.search("emb", qd, k=6, filter="cat = 'a'", columns=["id"]).column("id").to_pylist()
    ints = [int(x) for x in np.round(q * 3)]
    want_int = t.search("emb", np.array(ints, np.float32), k=6, filter="cat = 'a'",
                        columns=["id"]).column("id").to_pylist()
    lit_dec = "ARRAY[" + ", ".join(dec) + "]"
    lit_int = "ARRAY[" + ", ".join(map(str, ints)) + "]"

    def ids_are(want_ids):
        def check(r):
            if "error" in r:
                return r["error"]
            got = [x[0] for x in r["rows"]]
            return None if got == want_ids else f"got {got}, want {want_ids}"
        return check
    for name, lit, w in [("double", sql_vector(q), want), ("decimal", lit_dec, want_dec),
                         ("integer", lit_int, want_int)]:
        for order, expr in [("vector-first", f"l2_distance(emb, {lit})"),
                            ("query-first", f"l2_distance({lit}, emb)")]:
            sql = f"SELECT id FROM t WHERE cat = 'a' ORDER BY {expr} LIMIT 6"
            case(f"fnorder-{name}-{order}", sql, ids_are(w))
            case(f"fnorder-{name}-{order}-nopush", sql, ids_are(w), session=NOPUSH)
        case(f"fnorder-{name}-explain", f"EXPLAIN SELECT id FROM t WHERE cat = 'a' "
             f"ORDER BY cosine_distance({lit}, emb) LIMIT 6", explain_has("topK=6"))
    case("fnorder-projection", f"SELECT id, l2_distance({sql_vector(q)}, emb) FROM many "
         "WHERE id < 3", None)
    want_p = {int(i): float(np.sqrt(((np.array(v, np.float64) - q.astype(np.float64)) ** 2).sum()))
              for i, v in zip(few_many.column("id").to_pylist(), few_many.column("emb").to_pylist())}

    def projected_first(r):
        if "error" in r:
            return r["error"]
        got = {x[0]: x[1] for x in r["rows"]}
        ok = got.keys() == want_p.keys() and all(math.isclose(got[i], want_p[i], rel_tol=1e-12)
                                                 for i in got)
        return None if ok else f"got {got}, want {want_p}"
    checks[-1] = (checks[-1][0], checks[-1][1], projected_first)
    case("fnorder-both-double", "SELECT cosine_distance(ARRAY[1e0, 0e0], ARRAY[0e0, 1e0]), "
         "l2_distance(ARRAY[3e0, 0e0], ARRAY[0, 4]), inner_product(ARRAY[REAL '2'], ARRAY[1.5])",
         rows_equal([(1.0, 5.0, 3.0)]))
    case("fnorder-not-numbers", "SELECT l2_distance(ARRAY['a'], ARRAY['b'])",
         error_has("l2_distance", "arrays of numbers", "varchar"))

    # Time travel.
    for sid in sids:
        case(f"version-{sid}", f"SELECT id, qty, cat FROM t FOR VERSION AS OF {sid}",
             rows_equal(arrow_rows(t.to_arrow(snapshot_id=sid), ["id", "qty", "cat"])))
    case("version-tag", "SELECT id FROM t FOR VERSION AS OF 'two' WHERE id > 250",
         rows_equal(arrow_rows(t.to_arrow(ref="two", filter="id > 250"), ["id"])))
    for h in t.history()[:3]:
        when = dt.datetime.fromtimestamp(h.made_current_at_ms / 1000, dt.timezone.utc)
        lit = when.strftime("%Y-%m-%d %H:%M:%S.") + f"{when.microsecond // 1000:03d} UTC"
        case(f"timestamp-{h.snapshot_id}", f"SELECT id FROM t FOR TIMESTAMP AS OF TIMESTAMP '{lit}'",
             rows_equal(arrow_rows(t.to_arrow(snapshot_id=h.snapshot_id), ["id"])))

    # Bad input: clear errors, and the runner keeps working.
    case("missing-table", "SELECT * FROM nope", error_has("nope", "does not exist"))
    case("wrong-dim", "SELECT id FROM t ORDER BY l2_distance(emb, ARRAY[1.0, 2.0]) LIMIT 3",
         error_has("emb", "dimension"))
    case("wrong-dim-nopush", "SELECT id FROM t ORDER BY l2_distance(emb, ARRAY[1.0, 2.0]) LIMIT 3",
         error_has("dimension"), session=NOPUSH)
    case("unsupported-type", "SELECT * FROM bad", error_has("tm", "Time", "cannot read"))
    case("bad-version", "SELECT * FROM t FOR VERSION AS OF 12345", error_has("12345"))
    case("bad-tag", "SELECT * FROM t FOR VERSION AS OF 'nosuchtag'", error_has("nosuchtag"))
    case("still-alive", "SELECT count(*) FROM t",
         rows_equal([(t.to_arrow(columns=["id"]).num_rows,)]))

    # INSERT: Trino's rows become one committed data file per writer task.
    ins = hdb.Table(os.path.join(root, "default", "ins"))
    ins.write(gen(rng, range(5000, 5010), "i"))
    ins_before = arrow_rows(ins.to_arrow(), COLS)
    src = t.to_arrow(filter="id < 300")
    shifted = [(r[0] + 10000,) + r[1:] for r in arrow_rows(src, COLS)]
    case("insert-select", f"INSERT INTO ins SELECT id + 10000, {', '.join(COLS[1:])} "
         "FROM t WHERE id < 300", rows_equal([(src.num_rows,)]), group="ins")
    case("insert-read", f"SELECT {select} FROM ins", rows_equal(ins_before + shifted),
         group="ins")
    case("insert-values", "INSERT INTO ins VALUES (7, 'x', 1.5e0, 'a', 3, DATE '2024-02-03', "
         "TIMESTAMP '2024-02-03 04:05:06.123456 UTC', ARRAY[" + ", ".join(["1e0"] * DIM) + "])",
         rows_equal([(1,)]), group="ins")
    case("insert-wrong-dim", "INSERT INTO ins VALUES (8, 'x', 1.5e0, 'a', 3, DATE '2024-02-03', "
         "TIMESTAMP '2024-02-03 04:05:06 UTC', ARRAY[1e0, 2e0])", error_has("emb", "dimension"),
         group="ins")
    tcols_all = ", ".join(tcols)
    case("insert-types", f"INSERT INTO types SELECT {tcols_all} FROM types", rows_equal([(4,)]),
         group="types")
    case("insert-types-read", f"SELECT {tcols_all} FROM types",
         rows_equal(2 * arrow_rows(types.to_arrow(), tcols)), group="types")

    # DELETE with a WHERE we enforce whole: one row-change commit (applyDelete).
    dl = hdb.Table(os.path.join(root, "default", "del"))
    dl.write(gen(rng, range(0, 150), "x"))
    dl.write(gen(rng, range(150, 300), "y"))
    dl.index_all()
    gone = set(dl.to_arrow(filter="qty < 30 AND cat = 'a'", columns=["id"]).column("id").to_pylist())
    kept = arrow_rows(dl.to_arrow(filter="NOT (qty < 30 AND cat = 'a')"), COLS)
    case("delete-where", "DELETE FROM del WHERE qty < 30 AND cat = 'a'",
         rows_equal([(len(gone),)]), group="del")
    case("delete-read", f"SELECT {select} FROM del", rows_equal(kept), group="del")
    case("delete-again", "DELETE FROM del WHERE qty < 30 AND cat = 'a'", rows_equal([(0,)]),
         group="del")
    case("delete-like", "DELETE FROM del WHERE name LIKE 'n1%'",
         error_has("del", "DELETE whose WHERE is pushed whole"), group="del")
    # A double comparison is ours whole too (NaN and -0.0 as Trino means them).
    live = "NOT (qty < 30 AND cat = 'a')"
    n_neg = dl.to_arrow(filter=f"{live} AND score < 0", columns=["id"]).num_rows
    case("delete-double", "DELETE FROM del WHERE score < 0", rows_equal([(n_neg,)]), group="del")
    kept = arrow_rows(dl.to_arrow(filter=f"{live} AND (score >= 0 OR score IS NULL)"), COLS)
    case("delete-read-after", f"SELECT {select} FROM del", rows_equal(kept), group="del")

    # CREATE TABLE: an empty table of our own, filled by INSERT, read by everyone.
    made_cols = ["id", "name", "score", "d", "ts", "dec", "v", "s"]

    def no_error(r):
        return r.get("error")
    case("create-table", "CREATE TABLE made (id bigint, name varchar, score double, d date, "
         "ts timestamp(6) with time zone, dec decimal(10, 2), v array(real), "
         "s row(x integer, y varchar))", no_error, group="made")
    case("create-insert", "INSERT INTO made VALUES (1, 'a', 1.5e0, DATE '2024-01-02', "
         "TIMESTAMP '2024-01-02 03:04:05.123456 UTC', DECIMAL '12.34', ARRAY[REAL '1', REAL '2'], "
         "ROW(7, 'q')), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
         rows_equal([(2,)]), group="made")
    made_want = [(1, "a", 1.5, "2024-01-02",
                  (dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=dt.timezone.utc) - EPOCH)
                  // dt.timedelta(microseconds=1), "12.34", (1.0, 2.0), (7, "q")),
                 (2, None, None, None, None, None, None, None)]
    case("create-read", f"SELECT {', '.join(made_cols)} FROM made", rows_equal(made_want),
         group="made")
    case("create-exists", "CREATE TABLE made (id bigint)", error_has("made", "already exists"),
         group="made")
    case("create-if-not-exists", "CREATE TABLE IF NOT EXISTS made (id bigint)", no_error,
         group="made")
    case("create-bad-type", "CREATE TABLE made2 (tm time)", error_has("tm", "cannot create"))
    # CREATE TABLE AS: the table made, Trino's rows written as for INSERT, one
    # commit; a query that fails leaves no table behind.
    ctas_src = t.to_arrow(filter="cat = 'a' AND id < 700")
    ctas_want = arrow_rows(ctas_src, COLS)
    case("create-as", f"CREATE TABLE ctas AS SELECT {select} FROM t WHERE cat = 'a' AND id < 700",
         rows_equal([(ctas_src.num_rows,)]), group="made")
    case("create-as-read", f"SELECT {select} FROM ctas", rows_equal(ctas_want), group="made")
    case("create-as-exists", "CREATE TABLE ctas AS SELECT 1 AS x",
         error_has("ctas", "already exists"), group="made")
    case("create-as-no-data", "CREATE TABLE ctas_empty AS SELECT id, name FROM t WITH NO DATA",
         rows_equal([(0,)]), group="made")
    case("create-as-empty-read", "SELECT count(*) FROM ctas_empty", rows_equal([(0,)]),
         group="made")
    case("create-as-fails", "CREATE TABLE ctas_bad AS SELECT id, 10 / (id - 417) AS x FROM t",
         error_has("Division by zero"), group="made")
    case("create-as-gone", "SHOW TABLES FROM default LIKE 'ctas%'",
         rows_equal([("ctas",), ("ctas_empty",)]), group="made")
    case("create-as-bad-type", "CREATE TABLE ctas_tm AS SELECT TIME '01:02:03' AS tm",
         error_has("tm", "cannot create"), group="made")

    case("create-no-schema", "CREATE TABLE nosuch.made3 (id bigint)", error_has("nosuch"))

    results = runner.run(cases)
    results_ref.append(results)
    inserted = ins_before + shifted + [(7, "x", 1.5, "a", 3, "2024-02-03",
                                        (dt.datetime(2024, 2, 3, 4, 5, 6, 123456,
                                                     tzinfo=dt.timezone.utc) - EPOCH)
                                        // dt.timedelta(microseconds=1), (1.0,) * DIM)]
    return results, checks, {"ins": (ins.uri, inserted), "del": (dl.uri, kept),
                             "made": (os.path.join(root, "default", "made"), made_want,
                                      made_cols),
                             "ctas": (os.path.join(root, "default", "ctas"), ctas_want),
                             "ctas_bad": os.path.join(root, "default", "ctas_bad")}


def run_checks(trino, prefix):
    results, checks, _ = trino
    problems, n = [], 0
    for cid, sql, check in checks:
        if not cid.startswith(prefix) or check is None:
            continue
        n += 1
        p = check(results[cid])
        if p:
            problems.append(f"{cid}: {sql[:300]}\n    {p}")
    assert n > 0
    assert not problems, "\n".join(problems)


def test_rows_equal_python_on_random_filters(trino):
    run_checks(trino, "filter")


def test_random_filters_on_every_pushable_type(trino):
    results, checks, _ = trino
    problems = []
    for cid, sql, check in checks:
        if cid.startswith("typed") and check is not None:
            p = check(results[cid])
            if p:
                problems.append(f"{cid}: {sql}\n    {p}")
    n_rows = sum(len(results[c]["rows"]) for c, _, chk in checks
                 if c.startswith("typed") and chk is not None and "rows" in results[c])
    assert n_rows > 0, "the random filters kept no row at all"
    assert not problems, "\n".join(problems)


def test_float_filters_are_enforced(trino):
    run_checks(trino, "floats")


def test_projection_count_limit_and_types(trino):
    for p in ("project", "count", "limit", "types", "show-"):
        run_checks(trino, p)


def test_global_aggregates(trino):
    run_checks(trino, "agg")


def test_pushdown_is_real(trino):
    for p in ("explain", "indexed", "many-", "packed-"):
        run_checks(trino, p)


def test_vector_top_k(trino):
    for p in ("topk", "brute", "nopush", "distance-projection"):
        run_checks(trino, p)


def test_distance_function_argument_orders(trino):
    run_checks(trino, "fnorder")


def test_time_travel(trino):
    for p in ("version", "timestamp"):
        run_checks(trino, p)


def test_bad_input(trino):
    for p in ("missing-table", "wrong-dim", "unsupported-type", "bad-", "still-alive"):
        run_checks(trino, p)


def test_insert(trino, hdb):
    run_checks(trino, "insert")
    # What Trino committed, read back by our Python API and by pyiceberg.
    uri, want = trino[2]["ins"]
    t = hdb.Table(uri)
    problems = [diff(arrow_rows(t.to_arrow(), COLS), want)]
    from pyiceberg.table import StaticTable
    theirs = StaticTable.from_metadata(t.metadata_location).scan().to_arrow()
    problems.append(diff(arrow_rows(theirs, COLS), want))
    problems = [p for p in problems if p]
    assert not problems, "\n".join(problems)


def test_delete(trino, hdb):
    run_checks(trino, "delete")
    # What Trino's DELETE committed, read back by our Python API and by pyiceberg.
    uri, want = trino[2]["del"]
    t = hdb.Table(uri)
    problems = [diff(arrow_rows(t.to_arrow(), COLS), want)]
    from pyiceberg.table import StaticTable
    theirs = StaticTable.from_metadata(t.metadata_location).scan().to_arrow()
    problems.append(diff(arrow_rows(theirs, COLS), want))
    assert t.history()[-1].snapshot_id == t.current_snapshot_id
    problems = [p for p in problems if p]
    assert not problems, "\n".join(problems)


def test_create_table(trino, hdb):
    run_checks(trino, "create")
    # Trino's table, as our Python API and pyiceberg read it.
    path, want, cols = trino[2]["made"]
    t = hdb.Table(path)
    problems = [diff(arrow_rows(t.to_arrow(), cols), want)]
    from pyiceberg.table import StaticTable
    theirs = StaticTable.from_metadata(t.metadata_location).scan().to_arrow()
    problems.append(diff(arrow_rows(theirs, cols), want))
    # CREATE TABLE AS: read back the same way; the failed one left no folder.
    path, want = trino[2]["ctas"]
    t = hdb.Table(path)
    problems.append(diff(arrow_rows(t.to_arrow(), COLS), want))
    theirs = StaticTable.from_metadata(t.metadata_location).scan().to_arrow()
    problems.append(diff(arrow_rows(theirs, COLS), want))
    if os.path.exists(trino[2]["ctas_bad"]):
        problems.append(f"the failed CREATE TABLE AS left {os.listdir(trino[2]['ctas_bad'])}")
    problems = [p for p in problems if p]
    assert not problems, "\n".join(problems)


def test_runner_is_bounded(trino):
    results, _, _ = trino
    assert results["$startup"]["seconds"] < 90, results["$startup"]
