"""Apache Spark + Iceberg as the oracle: the session and the comparisons.

One SparkSession per pytest run, started lazily by the `spark` fixture (see
conftest_spark.py), so a test run that selects no Spark test never starts a
JVM. Spark runs at ``local[2]`` with ``iceberg-spark-runtime-3.5_2.12-1.12.0.jar``
(fetched by ``scripts/setup.sh test`` into ``build/jars/``) and one Hadoop
catalog, ``hs_spark``, whose warehouse is a pytest temporary folder. A
Hadoop-catalog table ``hs_spark.db.t`` is the folder ``<warehouse>/db/t``:
exactly one of our table folders, opened with ``hdb.Table(path)``; and a
table we create in that folder is a table Spark can read.

Rows are compared as multisets of canonical Python values: timestamps as
microseconds, dates as days, floats by their exact hex form (so -0.0 and
0.0 differ and no rounding hides a difference), lists as tuples. Column
names and logical (Iceberg) types must match too.

Problems are collected as strings (``Checker.problems``) instead of failing
at the first one, so that one run reports every snapshot and read path that
disagrees; a test asserts at its end that the list is empty.
"""

import collections
import datetime as dt
import math
import os
import re
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401 -- pa.compute

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

ICEBERG_SPARK_JAR = os.path.join(REPO_ROOT, "build", "jars",
                                 "iceberg-spark-runtime-3.5_2.12-1.12.0.jar")
# Our connector (java/spark-hyperstream, built by scripts/build_java.sh):
# format("hyperstream") in the same session as Spark's own Iceberg reader.
# HS_SPARK_JAR overrides it (benchmarks' A/B runs of two builds of the connector).
HS_SPARK_JAR = os.environ.get("HS_SPARK_JAR") or os.path.join(
    REPO_ROOT, "java", "spark-hyperstream", "target", "spark-hyperstream-0.1.0.jar")
CATALOG = "hs_spark"
HS_CATALOG = "hs"

# Seconds the last start_spark() took (reported by the fixture).
STARTUP_SECONDS = None

_LOG4J2 = """\
status = error
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
logger.spark.name = org.apache.spark
logger.spark.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
logger.iceberg.name = org.apache.iceberg
logger.iceberg.level = error
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
"""
# pyspark counts as a shell: Spark prints "Setting default log level" unless
# the level configured for its own loggers (org.apache.spark) is the root's.


def start_spark(warehouse, scratch, c1_only=True):
    """A SparkSession at local[2] with the Iceberg runtime and the Hadoop
    catalog ``hs_spark`` on `warehouse`. A missing pyspark or jar is an
    error naming the set-up step, never a skip. `c1_only`: the driver JVM
    compiles with C1 only (tests: many small queries, where C2's compiling
    costs more CPU than it saves; about 25 % off test_spark_connector.py
    here); benchmarks pass False for the default JIT."""
    global STARTUP_SECONDS
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise RuntimeError(f"pyspark is not installed (run `bash scripts/setup.sh test`): {e}")
    if not os.path.isfile(ICEBERG_SPARK_JAR):
        raise RuntimeError(f"{ICEBERG_SPARK_JAR} is missing (run `bash scripts/setup.sh test`, "
                           "which fetches it with Maven)")
    if not os.path.isfile(HS_SPARK_JAR):
        raise RuntimeError(f"{HS_SPARK_JAR} is missing (run `bash scripts/build_java.sh` "
                           "after `bash scripts/build.sh release`)")
    os.makedirs(scratch, exist_ok=True)
    log_conf = os.path.join(scratch, "log4j2.properties")
    with open(log_conf, "w") as f:
        f.write(_LOG4J2)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    # spark-submit puts SPARK_CONF_DIR on the driver's class path, where
    # log4j2 finds log4j2.properties: errors only, no start-up banner.
    os.environ["SPARK_CONF_DIR"] = scratch
    java_opts = f"-Duser.timezone=UTC -Djava.io.tmpdir={scratch}"
    if c1_only:
        java_opts += " -XX:TieredStopAtLevel=1"
    # Extra driver JVM flags (benchmarks' A/B runs, e.g. -Dhyperstream.batch_rows_min=0).
    java_opts += " " + os.environ.get("HS_SPARK_JVM", "")
    t0 = time.monotonic()
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("hyperstreamdb-tests")
        .config("spark.jars", f"{ICEBERG_SPARK_JAR},{HS_SPARK_JAR}")
        .config("spark.sql.extensions",
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config(f"spark.sql.catalog.{CATALOG}", "org.apache.iceberg.spark.SparkCatalog")
        .config(f"spark.sql.catalog.{CATALOG}.type", "hadoop")
        .config(f"spark.sql.catalog.{CATALOG}.warehouse", warehouse)
        # We commit to the same tables between Spark's statements (index
        # registries, our appends): Spark must reload a table every time.
        .config(f"spark.sql.catalog.{CATALOG}.cache-enabled", "false")
        # Our catalog over the same warehouse: hs.db.t is the folder <warehouse>/db/t too.
        .config(f"spark.sql.catalog.{HS_CATALOG}", "org.hyperstreamdb.spark.HsCatalog")
        .config(f"spark.sql.catalog.{HS_CATALOG}.root", warehouse)
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.local.dir", scratch)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("SELECT 1").collect()  # the first query loads most classes
    STARTUP_SECONDS = time.monotonic() - t0
    return spark


# ------------------------------------------------------------ Spark -> Arrow


def spark_arrow(spark, sql):
    """Run `sql` and return the result as a pyarrow Table (timestamps in
    UTC microseconds, as Spark's Arrow export gives them)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    df = spark.sql(sql)
    schema = to_arrow_schema(df.schema)
    batches = df._collect_as_arrow()
    if not batches:
        return schema.empty_table()
    return pa.Table.from_batches(batches).cast(schema)


# ------------------------------------------------------------ canonical rows


_JOB_GROUPS = iter(range(1 << 62))


def job_count(spark, fn):
    """How many Spark jobs one call of fn starts, from Spark's own status
    tracker: fn runs in a job group of its own, and Spark's listener bus (which
    fills the status store) is drained before and after. Returns (jobs, fn())."""
    sc = spark.sparkContext
    bus = sc._jsc.sc().listenerBus()
    bus.waitUntilEmpty(30000)
    group = f"hs-job-count-{next(_JOB_GROUPS)}"
    sc.setJobGroup(group, "counted")
    try:
        out = fn()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    bus.waitUntilEmpty(30000)
    return len(sc.statusTracker().getJobIdsForGroup(group)), out


def logical_type(t):
    """The Iceberg type an Arrow type stands for (what must agree between
    engines, whatever Arrow encoding each returns)."""
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return "int"
    if pa.types.is_int64(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "binary"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamptz" if t.tz is not None else "timestamp"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return f"list<{logical_type(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"{t.field(i).name}:{logical_type(t.field(i).type)}"
                                    for i in range(t.num_fields)) + ">"
    return str(t)


def _plain(arr):
    """`arr` with temporal values as integers (timestamps: UTC microseconds,
    dates: days), recursively through lists."""
    t = arr.type
    if pa.types.is_timestamp(t):
        return arr.cast(pa.timestamp("us", t.tz)).cast(pa.int64())
    if pa.types.is_date32(t):
        return arr.cast(pa.int32())
    if pa.types.is_date64(t):
        return arr.cast(pa.date32()).cast(pa.int32())
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        if pa.types.is_temporal(t.value_type):
            raise NotImplementedError(f"lists of {t.value_type} are not compared yet")
    return arr


def _canon(v):
    if v is None:
        return None
    if isinstance(v, float):
        return "nan" if math.isnan(v) else v.hex()
    if isinstance(v, (list, tuple)):
        return tuple(_canon(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, _canon(x)) for k, x in v.items())
    return v


def canonical_rows(table, columns=None):
    """The rows of `table` (columns in the given order) as canonical
    tuples, for a multiset comparison."""
    columns = list(columns if columns is not None else table.column_names)
    cols = []
    for name in columns:
        col = table.column(name)
        col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        cols.append([_canon(v) for v in _plain(col).to_pylist()])
    return list(zip(*cols)) if cols else [() for _ in range(table.num_rows)]


def _fmt_rows(rows, limit=3):
    rows = list(rows)
    s = "; ".join(repr(r)[:200] for r in rows[:limit])
    return s + (f" ... ({len(rows)} in all)" if len(rows) > limit else "")


def diff_tables(ours, theirs, columns=None):
    """A problem string, or None when `ours` and `theirs` (Spark's) hold the
    same columns (names, logical types) and the same multiset of rows."""
    names = list(columns if columns is not None else theirs.column_names)
    if columns is None and ours.column_names != theirs.column_names:
        return f"columns {ours.column_names} != Spark's {theirs.column_names}"
    missing = [n for n in names if n not in ours.column_names]
    if missing:
        return f"columns {missing} missing (ours: {ours.column_names})"
    for n in names:
        lo, lt = logical_type(ours.schema.field(n).type), logical_type(theirs.schema.field(n).type)
        if lo != lt:
            return (f"column {n!r} is {lo} ({ours.schema.field(n).type}), "
                    f"Spark's is {lt} ({theirs.schema.field(n).type})")
    a = collections.Counter(canonical_rows(ours, names))
    b = collections.Counter(canonical_rows(theirs, names))
    if a == b:
        return None
    extra, lost = a - b, b - a
    return (f"{ours.num_rows} rows, Spark {theirs.num_rows}; "
            f"{sum(extra.values())} rows only ours [{_fmt_rows(extra.elements())}], "
            f"{sum(lost.values())} rows only Spark's [{_fmt_rows(lost.elements())}]")


def describe_error(e):
    msg = str(e).replace("\n", " ")
    return f"{type(e).__name__}: {msg[:400]}"


# ------------------------------------------------------------ vector checks


def brute_force(ids, vecs, q, k):
    """The exact top-k (L2, computed in float64) over rows with a vector:
    (ids, distances) sorted by distance, then id."""
    keep = [i for i, v in enumerate(vecs) if v is not None and len(v) == len(q)]
    if not keep:
        return [], np.zeros(0)
    m = np.asarray([vecs[i] for i in keep], dtype=np.float64)
    d = np.sqrt(((m - np.asarray(q, dtype=np.float64)) ** 2).sum(axis=1))
    order = sorted(range(len(keep)), key=lambda j: (d[j], ids[keep[j]]))[:k]
    return [ids[keep[j]] for j in order], d[order]


def check_search(result, ids, vecs, q, k, exact=True, min_recall=0.8):
    """Check a search result (columns id, distance) against brute force over
    the oracle's live rows `ids`/`vecs`. Exact: exactly min(k, candidates)
    rows, distances equal to the true top-k distances (float32 tolerance),
    every id a candidate at its stated distance. Approximate (HNSW): the
    same, except that the ids need only reach `min_recall` of the true
    top-k. Returns a problem string or None."""
    want_ids, want_d = brute_force(ids, vecs, q, k)
    true_d = {}
    for i, v in zip(ids, vecs):
        if v is not None and len(v) == len(q):
            true_d[i] = float(np.sqrt(((np.asarray(v, np.float64) - np.asarray(q, np.float64)) ** 2).sum()))
    got_ids = result.column("id").to_pylist()
    got_d = np.asarray(result.column("distance").to_pylist(), dtype=np.float64)
    if len(got_ids) != len(want_ids):
        return f"{len(got_ids)} rows, want min(k={k}, candidates) = {len(want_ids)}"
    if len(set(got_ids)) != len(got_ids):
        return f"duplicate ids {got_ids}"
    for i, d in zip(got_ids, got_d):
        if i not in true_d:
            return f"id {i} is not a live candidate row (deleted or filtered out?)"
        if not math.isclose(d, true_d[i], rel_tol=1e-4, abs_tol=1e-5):
            return f"id {i} distance {d} != true {true_d[i]}"
    if np.any(np.diff(got_d) < -1e-6):
        return f"distances not ascending {got_d.tolist()}"
    if exact:
        if not np.allclose(got_d, want_d, rtol=1e-4, atol=1e-5):
            return f"distances {got_d.tolist()} != brute force {want_d.tolist()}"
        return None
    if want_ids:
        recall = len(set(got_ids) & set(want_ids)) / len(want_ids)
        if recall < min_recall:
            return f"recall {recall:.2f} < {min_recall}"
    return None


# ------------------------------------------------------------ the checker


class Checker:
    """Compares one table, as Spark (``hs_spark.<ident>``) and we
    (``hdb.Table(path)``) read it, snapshot by snapshot, collecting problems.

    filters: SQL boolean expressions valid in both dialects.
    vector: (column, dim) to check exact search (and HNSW recall), or None.
    """

    def __init__(self, spark, hdb, ident, path, filters=(), vector=None, seed=0):
        self.spark, self.hdb, self.ident, self.path = spark, hdb, ident, path
        self.filters = list(filters)
        self.vector = vector
        self.rng = np.random.default_rng(seed)
        self.problems = []
        self._spark_cache = {}
        self.spark_queries = 0
        self.spark_seconds = 0.0
        self.our_seconds = 0.0

    def add(self, where, msg):
        """Record a problem (`msg` None: none)."""
        if msg is not None:
            self.problems.append((where, msg))

    @property
    def name(self):
        return f"{CATALOG}.{self.ident}"

    # -- Spark side
    def spark_sql(self, sql):
        """Run `sql` in Spark and collect its rows."""
        self.spark_queries += 1
        t0 = time.monotonic()
        try:
            return self.spark.sql(sql).collect()
        finally:
            self.spark_seconds += time.monotonic() - t0

    def _spark_snapshot(self, sid):
        """Spark's rows at `sid` with one boolean column per filter (Spark's
        own evaluation of it): one query per snapshot answers them all."""
        if sid not in self._spark_cache:
            extra = "".join(f", ({f}) AS __hs_f{i}" for i, f in enumerate(self.filters))
            self.spark_queries += 1
            t0 = time.monotonic()
            self._spark_cache[sid] = spark_arrow(
                self.spark, f"SELECT *{extra} FROM {self.name} VERSION AS OF {sid}")
            self.spark_seconds += time.monotonic() - t0
        return self._spark_cache[sid]

    def spark_rows(self, sid, where=None):
        """Spark's rows at `sid`, or those its ``WHERE where`` keeps (the
        predicate TRUE, not NULL) for one of `filters`."""
        full = self._spark_snapshot(sid)
        names = [n for n in full.column_names if not n.startswith("__hs_f")]
        if where is None:
            return full.select(names)
        mask = full.column(f"__hs_f{self.filters.index(where)}")
        return full.filter(pa.compute.fill_null(mask, False)).select(names)

    def spark_snapshots(self):
        """[(snapshot_id, operation)] in commit order."""
        rows = self.spark_sql(f"SELECT snapshot_id, operation FROM {self.name}.snapshots "
                              "ORDER BY committed_at, snapshot_id")
        return [(r.snapshot_id, r.operation) for r in rows]

    def spark_current(self):
        snaps = self.spark_sql(f"SELECT snapshot_id FROM {self.name}.history "
                               "WHERE is_current_ancestor ORDER BY made_current_at DESC "
                               "LIMIT 1")
        return snaps[0].snapshot_id if snaps else None

    # -- our side
    def table(self):
        return self.hdb.Table(self.path)

    def _ours(self, what, fn):
        t0 = time.monotonic()
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 -- every failure is a reported problem
            self.add(what, describe_error(e))
            return None
        finally:
            self.our_seconds += time.monotonic() - t0

    def timing(self):
        return (f"{self.spark_queries} Spark queries in {self.spark_seconds:.1f} s, "
                f"our reads {self.our_seconds:.1f} s")

    def check_len(self, label, sid):
        """len(t) (the current snapshot `sid`) against Spark's row count."""
        want = self.spark_rows(sid).num_rows
        got = self._ours(f"{label}: len(t)", lambda: len(self.table()))
        if got is not None and got != want:
            self.add(f"{label}: len(t)", f"{got}, Spark's rows: {want}")

    def check_snapshot(self, sid, label, indexed=False, hnsw=False):
        """Every read path at snapshot `sid` against Spark's rows."""
        tag = f"{label} [snapshot {sid}{', indexed' if indexed else ''}]"
        t = self._ours(f"{tag}: open", self.table)
        if t is None:
            return
        if not indexed:
            theirs = self.spark_rows(sid)
            ours = self._ours(f"{tag}: to_arrow", lambda: t.to_arrow(snapshot_id=sid))
            if ours is not None:
                self.add(f"{tag}: to_arrow", diff_tables(ours, theirs))
            stream = self._ours(f"{tag}: to_arrow_stream",
                                lambda: t.to_arrow_stream(snapshot_id=sid).read_all())
            if stream is not None:
                self.add(f"{tag}: to_arrow_stream", diff_tables(stream, theirs))
            df = self._ours(f"{tag}: to_pandas", lambda: t.to_pandas(snapshot_id=sid))
            if df is not None:
                self.add(f"{tag}: to_pandas",
                         diff_tables(pa.Table.from_pandas(df, preserve_index=False), theirs))
            self._check_cli(tag, sid, None)
            self._check_explain(t, tag, sid, None, indexed)
        for f in self.filters:
            theirs = self.spark_rows(sid, f)
            ours = self._ours(f"{tag}: to_arrow(filter={f!r})",
                              lambda: t.to_arrow(filter=f, snapshot_id=sid))
            if ours is not None:
                self.add(f"{tag}: to_arrow(filter={f!r})", diff_tables(ours, theirs))
            self._check_explain(t, tag, sid, f, indexed)
        if self.filters:
            f = self.filters[0]
            q = self._ours(f"{tag}: query().filter({f!r})",
                           lambda: t.query().filter(f).snapshot(sid).execute())
            if q is not None:
                self.add(f"{tag}: query().filter({f!r})", diff_tables(q, self.spark_rows(sid, f)))
            if not indexed:
                self._check_cli(tag, sid, f)
        if self.vector is not None:
            self._check_vectors(t, sid, tag, exact=not hnsw)

    def _check_explain(self, t, tag, sid, where, indexed):
        """explain(): the rows it matched equal Spark's count; on the
        indexed pass at the current snapshot, some file answered by an
        index (so the indexed path really ran)."""
        what = f"{tag}: explain({where!r})"
        st = self._ours(what, lambda: t.explain(where, snapshot_id=sid, as_dict=True))
        if st is None:
            return
        want = self.spark_rows(sid, where).num_rows
        if st.get("rows_matched") != want:
            self.add(what, f"rows_matched {st.get('rows_matched')}, Spark's rows: {want}")
        if indexed and where and sid == t.current_snapshot_id and not st.get("files_indexed"):
            self.add(what, f"no file answered by an index ({st.get('files_read')} files read)")

    def _check_cli(self, tag, sid, where):
        """`hyperstream scan --snapshot` (ids only: CSV text formats the
        other types its own way) against Spark's ids."""
        what = f"{tag}: hyperstream scan --filter {where!r}"
        build = os.environ.get("HS_BUILD_DIR", os.path.join(REPO_ROOT, "build", "release"))
        exe = os.path.join(build if os.path.isabs(build) else os.path.join(REPO_ROOT, build),
                           "hyperstream")
        args = [exe, "scan", self.path, "--columns", "id", "--csv", "--limit", "0",
                "--snapshot", str(sid)] + (["--filter", where] if where else [])
        t0 = time.monotonic()
        try:
            r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.add(what, describe_error(e))
            return
        finally:
            self.our_seconds += time.monotonic() - t0
        if r.returncode != 0:
            self.add(what, f"exit {r.returncode}: {r.stderr.strip()[:400]}")
            return
        lines = r.stdout.split("\n")
        got = collections.Counter(int(x) for x in lines[1:] if x.strip())
        want = collections.Counter(self.spark_rows(sid, where).column("id").to_pylist())
        if lines[0].strip() != "id" or got != want:
            self.add(what, f"header {lines[0]!r}, {sum(got.values())} ids, Spark "
                           f"{sum(want.values())}; only ours {list((got - want).elements())[:5]}, "
                           f"only Spark's {list((want - got).elements())[:5]}")

    def _check_vectors(self, t, sid, tag, exact):
        col, dim = self.vector
        cases = [(None, 10), (None, 1000)]
        if self.filters:
            cases.append((self.filters[0], 7))
        for where, k in cases:
            theirs = self.spark_rows(sid, where)
            ids = theirs.column("id").to_pylist()
            vecs = theirs.column(col).to_pylist()
            q = self.rng.standard_normal(dim).astype(np.float32)
            what = f"{tag}: search({col!r}, k={k}, filter={where!r}, exact={exact})"
            res = self._ours(what, lambda: t.search(col, q, k=k, filter=where, columns=["id"],
                                                    snapshot_id=sid, exact=exact))
            if res is not None:
                self.add(what, check_search(res, ids, vecs, q, k, exact=exact))

    def check_all_snapshots(self, labels, indexed=False):
        """check_snapshot for every snapshot Spark lists (labels: {sid: text})."""
        for sid, op in self.spark_snapshots():
            self.check_snapshot(sid, labels.get(sid, op), indexed=indexed)

    def index_ours(self, label, hnsw=True):
        """Build our scalar indexes (every column) and an HNSW index on the
        vector column; errors are problems. Returns whether it worked."""
        t = self._ours(f"{label}: open", self.table)
        if t is None:
            return False
        def scalar():
            t.index_all()
            return True

        def vector():
            t.add_index(self.vector[0], "hnsw")
            return True

        ok = self._ours(f"{label}: index_all()", scalar)
        if ok and hnsw and self.vector is not None:
            ok = self._ours(f"{label}: add_index({self.vector[0]!r}, 'hnsw')", vector)
        if ok:
            n = self._ours(f"{label}: indexes()", lambda: [(i.column, i.files_indexed, i.files_total)
                                                         for i in t.indexes()])
            if n is not None:
                # Not every file needs one (a file written before a column
                # was added has none of it; a vector index skips files
                # without a vector), but each index must exist somewhere.
                unbuilt = [c for c, a, b in n if a == 0 and b > 0]
                if unbuilt:
                    self.add(f"{label}: indexes()", f"no file indexed for {unbuilt}: {n}")
        return bool(ok)

    def report(self, limit=40):
        """The problems, one line per distinct error (file paths ignored when
        grouping), with the places it happened."""
        groups = collections.OrderedDict()
        for where, msg in self.problems:
            key = re.sub(r"\S*/\S*", "<path>", msg)
            groups.setdefault(key, (msg, []))[1].append(where)
        lines = []
        for msg, wheres in list(groups.values())[:limit]:
            lines.append(f"- {msg}\n    at {len(wheres)} place(s): " + "; ".join(wheres[:4])
                         + (" ..." if len(wheres) > 4 else ""))
        if len(groups) > limit:
            lines.append(f"... and {len(groups) - limit} more distinct problems")
        return "\n".join(lines)


def assert_same_at_every_snapshot(spark, hdb, ident, path, filters=(), vector=None,
                                  pyiceberg=True):
    """The helper for tables we write: our snapshot ids and current snapshot
    equal Spark's; at every snapshot Spark's rows (and filters, exact vector
    search, every read path of Checker.check_snapshot) equal ours, and so do
    pyiceberg's (``StaticTable`` on our metadata file; rows only); at every
    snapshot-log entry Spark's ``TIMESTAMP AS OF`` equals our ``as_of``."""
    c = Checker(spark, hdb, ident, path, filters=filters, vector=vector)
    t = hdb.Table(path)
    ours = [s.snapshot_id for s in t.snapshots()]
    theirs = [sid for sid, _ in c.spark_snapshots()]
    assert sorted(ours) == sorted(theirs), f"{ident}: our snapshots {ours} != Spark's {theirs}"
    cur = t.current_snapshot_id
    assert cur == c.spark_current(), f"{ident}: current snapshot {cur} != Spark's {c.spark_current()}"
    for sid in theirs:
        c.check_snapshot(sid, f"{ident}")
    c.check_len(ident, cur)
    if pyiceberg:
        from pyiceberg.table import StaticTable

        st = StaticTable.from_metadata(t.metadata_location)
        for sid in theirs:
            rows = c._ours(f"{ident} [snapshot {sid}]: pyiceberg scan",
                           lambda: st.scan(snapshot_id=sid).to_arrow())
            if rows is not None:
                c.add(f"{ident} [snapshot {sid}]: pyiceberg's rows vs Spark's",
                      diff_tables(rows, c.spark_rows(sid)))
    # Time travel by time: each log entry's instant, as Spark resolves it.
    for r in c.spark_sql(f"SELECT made_current_at, snapshot_id FROM {c.name}.history"):
        when = r.made_current_at.astimezone(dt.timezone.utc)
        lit = when.strftime("%Y-%m-%d %H:%M:%S.%f")
        theirs_ids = collections.Counter(x.id for x in c.spark_sql(
            f"SELECT id FROM {c.name} TIMESTAMP AS OF '{lit}'"))
        got = c._ours(f"{ident} as_of={lit}", lambda: t.to_arrow(as_of=when, columns=["id"]))
        if got is not None:
            ours_ids = collections.Counter(got.column("id").to_pylist())
            if ours_ids != theirs_ids:
                c.add(f"{ident} as_of={lit} (Spark: snapshot {r.snapshot_id})",
                      f"{sum(ours_ids.values())} ids, Spark's TIMESTAMP AS OF "
                      f"{sum(theirs_ids.values())}")
    if c.problems:
        raise AssertionError(f"{ident}: Spark and we disagree:\n{c.report()}")
    return c
