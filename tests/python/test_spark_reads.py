"""Spark writes, we read (issue 14, "Spark as the oracle").

Apache Spark 3.5 with Iceberg 1.12 (tests/python/spark_util.py) builds
tables in a Hadoop catalog from seeded random data (ints, strings, doubles,
dates, timestamps, an ``array<float>`` embedding) and changes them step by
step: INSERT, DELETE / UPDATE / MERGE INTO in merge-on-read (v2 position
deletes, v3 deletion vectors) and copy-on-write, identity and transform
partitions with partition-scoped deletes and a spec evolution, schema
evolution, gzip metadata switched on mid-history, compaction
(``rewrite_data_files``) and ``rewrite_position_delete_files``.

At every snapshot Spark lists, ``SELECT * ... VERSION AS OF id`` must equal
our ``to_arrow(snapshot_id=id)`` and ``to_arrow_stream`` as multisets, each
filter must equal Spark's ``WHERE``, exact vector search must equal brute
force over Spark's live rows (min(k, candidates) rows, the true top-k
distances), and after every step ``len(t)`` must equal ``count(*)``. Then we
build our indexes (every scalar column and an HNSW index) and check the
filters again at every snapshot (indexed path) and the HNSW search's recall
at the current one; finally Spark appends on top of our index commits and
reads what it wrote, which we read too.

First, each test checks that Spark wrote what it claims to exercise (delete
files of the right kind, gzip metadata files, the partition specs), so a
test cannot pass by testing less than its name says.
"""

import datetime as dt
import glob
import os

import numpy as np
import pytest

from spark_util import CATALOG, Checker

DIM = 8
SCHEMA = "id int, name string, score double, cat string, d date, ts timestamp, emb array<float>"
COLUMNS = ["id", "name", "score", "cat", "d", "ts", "emb"]
T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)

FILTERS = [
    "id BETWEEN 50 AND 450 AND cat IN ('a', 'c')",
    "score > 20.5 OR name LIKE 'n1%'",
    "ts < TIMESTAMP '2024-01-12 00:00:00' AND d >= DATE '2024-01-03'",
]


def gen_rows(rng, ids, tag="", days=30):
    rows = []
    for i in ids:
        name = None if rng.random() < 0.1 else f"n{int(rng.integers(0, 50))}{tag}"
        score = None if rng.random() < 0.1 else float(rng.integers(-8000, 8000)) / 64
        cat = str(rng.choice(["a", "b", "c", "d"]))
        day = dt.date(2024, 1, 1) + dt.timedelta(days=int(rng.integers(0, 30)))
        ts = T0 + dt.timedelta(seconds=int(rng.integers(0, days * 86400)),
                               microseconds=int(rng.integers(0, 10**6)))
        emb = (None if rng.random() < 0.05
               else rng.standard_normal(DIM).astype(np.float32).tolist())
        rows.append((int(i), name, score, cat, day, ts, emb))
    return rows


class History:
    """A Spark table changed step by step; records each step's snapshot."""

    def __init__(self, spark, hdb, ident, path, filters=FILTERS, seed=0):
        self.spark, self.ident, self.path = spark, ident, path
        self.name = f"{CATALOG}.{ident}"
        self.rng = np.random.default_rng(seed)
        self.labels = {}
        self.current = None
        self.check = Checker(spark, hdb, ident, path, filters=filters, vector=("emb", DIM),
                             seed=seed + 1)

    def view(self, rows, schema=SCHEMA, view="src", parts=2):
        self.spark.createDataFrame(rows, schema).repartition(parts).createOrReplaceTempView(view)

    def step(self, label, sql):
        """Run one Spark statement; label the snapshot it made (if any) and
        compare len(t) with count(*) right away."""
        self.check.spark_sql(sql.format(t=self.name, ident=self.ident))
        after = self.check.spark_current()
        if after != self.current:
            self.labels[after] = label
            self.current = after
        self.check.check_len(label, after)
        return after

    def insert(self, label, ids, tag="", days=30):
        self.view(gen_rows(self.rng, ids, tag, days))
        return self.step(label, "INSERT INTO {t} SELECT * FROM src")

    def spark_files(self):
        """[(content, file_format)] of every data and delete file of every snapshot."""
        rows = self.check.spark_sql(f"SELECT content, file_format FROM {self.name}.all_files")
        return [(r.content, r.file_format) for r in rows]

    def verify_ours(self, hnsw=True, append=None):
        """Every snapshot unindexed; build indexes; every snapshot indexed;
        HNSW at the current one; Spark appends over our commits."""
        c = self.check
        c.check_all_snapshots(self.labels)
        if c.index_ours("after indexing", hnsw=hnsw):
            c.check_all_snapshots(self.labels, indexed=True)
            cur = c.spark_current()
            if hnsw:
                c.check_snapshot(cur, "current, HNSW", indexed=True, hnsw=True)
            # Spark commits on top of our metadata-only (index) commits.
            last = max(int(x) for x in c.spark_rows(cur).column("id").to_pylist()) + 1
            rows = gen_rows(self.rng, range(last, last + 20), "z")
            self.view(*(append(rows) if append else (rows,)))
            sid = self.step("Spark INSERT after our index commits",
                            "INSERT INTO {t} SELECT * FROM src")
            c.check_snapshot(sid, "Spark INSERT after our index commits")
        print(f"\n{self.ident}: {len(self.labels)} snapshots, {c.timing()}")
        if c.problems:
            raise AssertionError(f"{self.ident}: {len(c.problems)} disagreements with Spark "
                                 f"({c.timing()}):\n{c.report()}")


def _modes(mode):
    return ", ".join(f"'write.{op}.mode'='{mode}'" for op in ("delete", "update", "merge"))


# ---------------------------------------------------------------- row changes


@pytest.mark.parametrize("fmt,mode", [(2, "merge-on-read"), (2, "copy-on-write"),
                                      (3, "merge-on-read"), (3, "copy-on-write")])
def test_delete_update_merge_compact(spark, spark_table, hdb, fmt, mode):
    ident, path = spark_table
    h = History(spark, hdb, ident, path, seed=fmt * 10 + (mode == "copy-on-write"))
    spark.sql(f"CREATE TABLE {h.name} ({SCHEMA}) USING iceberg "
              f"TBLPROPERTIES ('format-version'='{fmt}', {_modes(mode)})")
    h.insert("INSERT 0-399", range(0, 400))
    h.insert("INSERT 400-699", range(400, 700))
    h.step("DELETE id % 5 = 0", "DELETE FROM {t} WHERE id % 5 = 0")
    h.step("UPDATE cat = 'b'",
           "UPDATE {t} SET score = score + 1000, name = concat('u', name) WHERE cat = 'b'")
    # MERGE: 40 existing ids (every third deleted, the rest updated, some of
    # them already deleted above), 60 new ones inserted.
    src = gen_rows(h.rng, list(range(3, 123, 3)) + list(range(1000, 1060)), "m")
    src = [r + ("d" if r[0] < 1000 and r[0] % 9 == 0 else "u",) for r in src]
    h.view(src, schema=SCHEMA + ", op string", view="msrc")
    h.step("MERGE INTO", """
        MERGE INTO {t} t USING msrc s ON t.id = s.id
        WHEN MATCHED AND s.op = 'd' THEN DELETE
        WHEN MATCHED THEN UPDATE SET t.name = s.name, t.score = s.score, t.emb = s.emb
        WHEN NOT MATCHED THEN INSERT (id, name, score, cat, d, ts, emb)
                              VALUES (s.id, s.name, s.score, s.cat, s.d, s.ts, s.emb)""")
    h.step("DELETE ts < 2024-01-04", "DELETE FROM {t} WHERE ts < TIMESTAMP '2024-01-04 00:00:00'")
    files = h.spark_files()
    if mode == "merge-on-read":
        h.step("rewrite_position_delete_files",
               "CALL hs_spark.system.rewrite_position_delete_files("
               "table => '{ident}', options => map('rewrite-all', 'true'))")
    h.step("rewrite_data_files",
           "CALL hs_spark.system.rewrite_data_files("
           "table => '{ident}', options => map('rewrite-all', 'true'))")
    h.insert("INSERT after compaction", range(2000, 2050), "c")

    # Spark wrote what this test claims to read.
    deletes = {(c, f) for c, f in files if c != 0}
    if mode == "copy-on-write":
        assert not deletes, f"copy-on-write wrote delete files {deletes}"
    elif fmt == 2:
        assert (1, "PARQUET") in deletes, f"v2 merge-on-read wrote no position deletes: {deletes}"
    else:
        assert (1, "PUFFIN") in deletes, f"v3 merge-on-read wrote no deletion vectors: {deletes}"
    ops = [op for _, op in h.check.spark_snapshots()]
    assert ops.count("replace") >= 1, ops  # the compaction
    if mode == "merge-on-read" and fmt == 2:  # v3 DVs are not rewritten: no snapshot
        assert "rewrite_position_delete_files" in h.labels.values(), h.labels
    h.verify_ours()


# ---------------------------------------------------------------- partitions


@pytest.mark.parametrize("fmt", [2, 3])
def test_partitioned_deletes_and_spec_evolution(spark, spark_table, hdb, fmt):
    ident, path = spark_table
    h = History(spark, hdb, ident, path, seed=100 + fmt)
    # Timestamps over 4 days only: (cat, day, bucket) stays at 48 partitions.
    spark.sql(f"CREATE TABLE {h.name} ({SCHEMA}) USING iceberg PARTITIONED BY (cat, days(ts)) "
              f"TBLPROPERTIES ('format-version'='{fmt}', {_modes('merge-on-read')})")
    h.insert("INSERT 0-499 (cat, days(ts))", range(0, 500), days=4)
    h.step("DELETE cat = 'a' (whole partitions)", "DELETE FROM {t} WHERE cat = 'a'")
    h.step("DELETE cat = 'b' AND id % 3 = 0 (in partitions)",
           "DELETE FROM {t} WHERE cat = 'b' AND id % 3 = 0")
    h.step("ADD PARTITION FIELD bucket(3, id)", "ALTER TABLE {t} ADD PARTITION FIELD bucket(3, id)")
    h.insert("INSERT 500-799 (cat, days(ts), bucket(3, id))", range(500, 800), days=4)
    h.step("DELETE id % 7 = 1 (both specs)", "DELETE FROM {t} WHERE id % 7 = 1")
    h.step("UPDATE cat = 'c'", "UPDATE {t} SET score = -score WHERE cat = 'c'")
    h.step("DELETE ts in a day (partition-scoped)",
           "DELETE FROM {t} WHERE ts >= TIMESTAMP '2024-01-02 00:00:00' "
           "AND ts < TIMESTAMP '2024-01-03 00:00:00' AND id % 2 = 0")
    h.step("rewrite_data_files (into the current spec)",
           "CALL hs_spark.system.rewrite_data_files(table => '{ident}', "
           "options => map('rewrite-all', 'true'))")

    specs = spark.sql(f"SELECT DISTINCT data_file.spec_id FROM {h.name}.all_entries "
                      "WHERE data_file.content = 0").collect()
    assert len(specs) == 2, f"expected data files under two partition specs: {specs}"
    deletes = {(c, f) for c, f in h.spark_files() if c != 0}
    assert (1, "PARQUET" if fmt == 2 else "PUFFIN") in deletes, deletes
    h.verify_ours()


# ---------------------------------------------------------------- schema evolution


@pytest.mark.parametrize("fmt", [2, 3])
def test_schema_evolution_with_deletes(spark, spark_table, hdb, fmt):
    ident, path = spark_table
    # Filters on columns every snapshot has, under the same name.
    h = History(spark, hdb, ident, path, seed=200 + fmt,
                filters=["id BETWEEN 100 AND 600", "score > 0 AND d < DATE '2024-01-20'"])
    spark.sql(f"CREATE TABLE {h.name} ({SCHEMA}) USING iceberg "
              f"TBLPROPERTIES ('format-version'='{fmt}', {_modes('merge-on-read')})")
    h.insert("INSERT 0-199", range(0, 200))
    h.step("ADD COLUMN extra string", "ALTER TABLE {t} ADD COLUMN extra string")
    h.view([r + (f"x{r[0] % 5}",) for r in gen_rows(h.rng, range(200, 300))],
           schema=SCHEMA + ", extra string")
    h.step("INSERT with extra", "INSERT INTO {t} SELECT * FROM src")
    h.step("DELETE id % 4 = 0", "DELETE FROM {t} WHERE id % 4 = 0")
    h.step("RENAME name TO title", "ALTER TABLE {t} RENAME COLUMN name TO title")
    h.view([r + (None,) for r in gen_rows(h.rng, range(300, 400), "r")],
           schema=SCHEMA.replace("name string", "title string") + ", extra string")
    h.step("INSERT after rename", "INSERT INTO {t} SELECT * FROM src")
    h.step("DROP COLUMN cat", "ALTER TABLE {t} DROP COLUMN cat")
    h.step("id int -> bigint", "ALTER TABLE {t} ALTER COLUMN id TYPE bigint")
    rows = [(r[0], r[1], r[2], r[4], r[5], r[6], "y") for r in gen_rows(h.rng, range(400, 700))]
    h.view(rows, schema="id bigint, title string, score double, d date, ts timestamp, "
                        "emb array<float>, extra string")
    h.step("INSERT after drop and widen", "INSERT INTO {t} SELECT * FROM src")
    h.step("UPDATE extra", "UPDATE {t} SET extra = concat(extra, '!') WHERE id % 3 = 1")
    h.step("DELETE id % 7 = 2", "DELETE FROM {t} WHERE id % 7 = 2")

    schemas = spark.sql(f"SELECT DISTINCT latest_schema_id FROM {h.name}.metadata_log_entries"
                        ).collect()
    assert len(schemas) >= 5, f"expected at least 5 schemas in the history: {schemas}"
    h.verify_ours(append=lambda rows: ([(r[0], r[1], r[2], r[4], r[5], r[6], "z") for r in rows],
                                       "id bigint, title string, score double, d date, "
                                       "ts timestamp, emb array<float>, extra string"))


# ---------------------------------------------------------------- gzip metadata


@pytest.mark.parametrize("fmt", [2, 3])
def test_gzip_metadata_switched_on_mid_history(spark, spark_table, hdb, fmt):
    ident, path = spark_table
    h = History(spark, hdb, ident, path, seed=300 + fmt)
    spark.sql(f"CREATE TABLE {h.name} ({SCHEMA}) USING iceberg "
              f"TBLPROPERTIES ('format-version'='{fmt}', {_modes('merge-on-read')})")
    h.insert("INSERT 0-299 (plain metadata)", range(0, 300))
    h.step("DELETE id % 6 = 0 (plain metadata)", "DELETE FROM {t} WHERE id % 6 = 0")
    h.step("gzip metadata on",
           "ALTER TABLE {t} SET TBLPROPERTIES ('write.metadata.compression-codec'='gzip')")
    h.insert("INSERT 300-599 (gzip metadata)", range(300, 600))
    h.step("UPDATE (gzip metadata)", "UPDATE {t} SET name = 'g' WHERE id % 10 = 3")
    h.step("DELETE (gzip metadata)", "DELETE FROM {t} WHERE cat = 'd' AND id > 250")

    meta = os.path.join(path, "metadata")
    gz = glob.glob(os.path.join(meta, "*.gz.metadata.json"))
    plain = [p for p in glob.glob(os.path.join(meta, "v*.metadata.json")) if ".gz." not in p]
    assert gz and plain, f"expected plain and gzip metadata files: {sorted(os.listdir(meta))}"
    h.verify_ours()

