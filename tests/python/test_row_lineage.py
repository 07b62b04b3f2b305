"""v3 row lineage (issue 14 item 6): `_row_id` and `_last_updated_sequence_number`.

Oracles:
  * a model (no Spark): seeded random histories of appends, deletes, updates
    and upserts on our own v3 tables (merge-on-read and copy-on-write),
    checked after every step against the spec's rules -- a row keeps its
    `_row_id` through updates, merges, copy-on-write rewrites and
    compaction (which changes neither column), while the one-pass upsert
    replaces rows under new ids (delete + insert, which the spec allows); an
    updated or inserted row's `_last_updated_sequence_number` is the
    sequence number of the commit that made it, an untouched row's is
    unchanged; row ids are unique; every read path (to_arrow, filtered,
    streamed in small batches) agrees;
  * Spark 3.5.7 + Iceberg 1.12 (`SELECT _row_id, _last_updated_sequence_number`)
    on Spark-made v3 tables after INSERT, UPDATE, MERGE, DELETE and
    rewrite_data_files, and on our tables after t.update / t.upsert / t.delete /
    t.compact,
    at every snapshot.
"""

import os

import numpy as np
import pyarrow as pa
import pytest

LIN = ["_row_id", "_last_updated_sequence_number"]
MODES = ["merge-on-read", "copy-on-write"]


def _props(mode):
    return {f"write.{op}.mode": mode for op in ("delete", "update", "merge")}


def _rows(t, sid=None, **kw):
    """{id: (v, _row_id, _last_updated_sequence_number)} of our read."""
    a = t.to_arrow(columns=["id", "v"] + LIN, snapshot_id=sid, **kw).to_pydict()
    out = {}
    for i, v, r, s in zip(a["id"], a["v"], a["_row_id"], a["_last_updated_sequence_number"]):
        assert i not in out, f"id {i} twice"
        out[i] = (v, r, s)
    return out


def _stream_rows(t, sid):
    rd = t.to_arrow_stream(columns=["id", "v"] + LIN, snapshot_id=sid, batch_rows=7)
    return _rows_of(pa.Table.from_batches(list(rd), rd.schema))


def _rows_of(tbl):
    a = tbl.to_pydict()
    return {i: (v, r, s) for i, v, r, s in
            zip(a["id"], a["v"], a["_row_id"], a["_last_updated_sequence_number"])}


def _seq(t):
    return t.snapshots()[-1].sequence_number


def _batch(ids, tag):
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "v": pa.array([f"{tag}{i}" for i in ids], pa.string())})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_model_history(hdb, tmp_path, mode, seed):
    rng = np.random.default_rng(seed * 7 + (mode == "copy-on-write"))
    t = hdb.Table(str(tmp_path / "t"), format_version=3, properties=_props(mode))
    model = {}  # id -> (v, row_id, seq)
    seen_row_ids = set()
    next_id = 0
    history = []  # (snapshot id, model copy)

    def fresh(ids, value):
        seq = _seq(t)
        got = _rows(t)
        for i in ids:
            v, r, s = got[i]
            assert r not in seen_row_ids, f"new row {i} reuses _row_id {r}"
            seen_row_ids.add(r)
            assert s == seq
            model[i] = (value(i), r, seq)

    for step in range(14):
        op = rng.choice(["append", "delete", "update", "upsert", "merge", "compact"]) \
            if model else "append"
        live = sorted(model)
        if op == "append":
            ids = list(range(next_id, next_id + int(rng.integers(1, 40))))
            next_id += len(ids)
            t.write(_batch(ids, f"a{step}_"))
            fresh(ids, lambda i, tag=f"a{step}_": f"{tag}{i}")
        elif op == "delete":
            lo = int(rng.choice(live))
            hi = lo + int(rng.integers(0, 10))
            t.delete(f"id >= {lo} AND id <= {hi}")
            for i in live:
                if lo <= i <= hi:
                    del model[i]
        elif op == "update":
            lo = int(rng.choice(live))
            hi = lo + int(rng.integers(0, 12))
            n = t.update({"v": f"u{step}"}, filter=f"id >= {lo} AND id <= {hi}")
            hit = [i for i in live if lo <= i <= hi]
            assert n == len(hit)
            if hit:
                seq = _seq(t)
                for i in hit:
                    model[i] = (f"u{step}", model[i][1], seq)
        elif op == "compact":
            # Rows move to new files; lineage must not change (spec: copied).
            t.compact(min_input_files=1)
        else:
            old = [int(x) for x in rng.choice(live, size=min(len(live), 5), replace=False)]
            new = list(range(next_id, next_id + int(rng.integers(0, 4))))
            next_id += len(new)
            keys = old + new
            src = pa.table({"id": pa.array(keys, pa.int64()),
                            "v": pa.array([f"p{step}"] * len(keys), pa.string())})
            if op == "upsert":
                # The one-pass upsert (keys matched in C) is modeled as delete +
                # insert, which the spec allows: replaced rows get new ids.
                t.upsert(src, on="id")
                fresh(old + new, lambda i, v=f"p{step}": v)
            else:
                # A merge that reads the matched rows keeps their _row_id.
                t.merge(src, on="id").when_matched_update_all(where="id >= 0") \
                    .when_not_matched_insert_all().execute()
                seq = _seq(t)
                for i in old:
                    model[i] = (f"p{step}", model[i][1], seq)
                fresh(new, lambda i, v=f"p{step}": v)
        sid = t.snapshots()[-1].snapshot_id if t.snapshots() else None
        history.append((sid, dict(model)))
        assert _rows(t) == model, f"step {step} ({op})"
    # Every snapshot, every read path.
    for sid, m in history:
        assert _rows(t, sid) == m
        assert _stream_rows(t, sid) == m
        f = t.to_arrow(filter="id > 20 AND v <> 'zz'", columns=["id", "v"] + LIN, snapshot_id=sid)
        assert _rows_of(f) == {i: x for i, x in m.items() if i > 20}
    # The whole table's row ids are distinct (the model holds one per id).
    rids = [x[1] for x in model.values()]
    assert len(set(rids)) == len(rids)


def test_v2_refused_and_bad_use(hdb, tmp_path):
    t = hdb.Table(str(tmp_path / "v2"))
    t.write(_batch([1, 2], "x"))
    for col in LIN:
        with pytest.raises(hdb.UnsupportedError, match=f"'{col}'.*format version 2"):
            t.to_arrow(columns=["id", col])
    t3 = hdb.Table(str(tmp_path / "v3"), format_version=3)
    t3.write(_batch([1, 2], "x"))
    # Filters on them work (test_lineage_filters.py).
    assert t3.to_arrow(filter="_row_id > 0", columns=["id", "_row_id"]).num_rows == 1
    # Plain reads never show the metadata columns.
    assert t3.to_arrow().column_names == ["id", "v"]
    # Users cannot write them through an append.
    bad = _batch([3], "y").append_column("_row_id", pa.array([5], pa.int64()))
    with pytest.raises(hdb.HyperStreamError):
        t3.write(bad)
    assert t3.to_arrow(columns=["id", "_row_id"]).num_rows == 2


# ------------------------------------------------------------------- Spark



def _spark_lineage(check, name, sid):
    from spark_util import spark_arrow
    tbl = spark_arrow(check, f"SELECT id, v, _row_id, _last_updated_sequence_number FROM {name} "
                      f"VERSION AS OF {sid}")
    return _rows_of(tbl)


def _spark_snapshots(spark, name):
    return [r.snapshot_id for r in
            spark.sql(f"SELECT snapshot_id FROM {name}.snapshots ORDER BY committed_at").collect()]


def _files_with_lineage(path):
    """Data files under `path` that store a `_row_id` column."""
    import pyarrow.parquet as pq
    out = []
    for root, _, names in os.walk(os.path.join(path, "data")):
        for n in names:
            if n.endswith(".parquet") and "deletes" not in n:
                if "_row_id" in pq.read_schema(os.path.join(root, n)).names:
                    out.append(n)
    return out


def _compare_all(spark, hdb, name, path):
    t = hdb.Table(path)
    bad = []
    sids = _spark_snapshots(spark, name)
    assert len(sids) >= 6
    for sid in sids:
        theirs = _spark_lineage(spark, name, sid)
        ours = _rows(t, sid)
        if ours != theirs:
            diff = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
            bad.append(f"snapshot {sid}: {len(diff)} rows differ, e.g. "
                       f"{[(k, ours.get(k), theirs.get(k)) for k in diff[:3]]}")
        if _stream_rows(t, sid) != theirs:
            bad.append(f"snapshot {sid}: streamed read differs")
    return bad


@pytest.mark.parametrize("mode", MODES)
def test_spark_made_v3_lineage(spark, spark_table, hdb, mode):
    from spark_util import CATALOG
    ident, path = spark_table
    name = f"{CATALOG}.{ident}"
    modes = ", ".join(f"'write.{op}.mode'='{mode}'" for op in ("delete", "update", "merge"))
    spark.sql(f"CREATE TABLE {name} (id BIGINT, v STRING) USING iceberg "
              f"TBLPROPERTIES ('format-version'='3', {modes})")
    rng = np.random.default_rng(11 + (mode == "copy-on-write"))
    spark.createDataFrame([(i, f"a{i}") for i in range(0, 60)], "id BIGINT, v STRING") \
        .repartition(3).createOrReplaceTempView("src")
    spark.sql(f"INSERT INTO {name} SELECT * FROM src")
    spark.createDataFrame([(i, f"b{i}") for i in range(60, 90)], "id BIGINT, v STRING") \
        .repartition(2).createOrReplaceTempView("src")
    spark.sql(f"INSERT INTO {name} SELECT * FROM src")
    spark.sql(f"UPDATE {name} SET v = 'u1' WHERE id % 7 = 3")
    keys = [int(x) for x in rng.choice(90, size=15, replace=False)] + list(range(90, 95))
    spark.createDataFrame([(k, f"m{k}") for k in keys], "id BIGINT, v STRING") \
        .createOrReplaceTempView("src")
    spark.sql(f"MERGE INTO {name} t USING src s ON t.id = s.id "
              "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")
    spark.sql(f"DELETE FROM {name} WHERE id % 11 = 5")
    spark.sql(f"CALL {CATALOG}.system.rewrite_data_files(table => '{ident}', "
              "options => map('rewrite-all', 'true'))")
    spark.sql(f"UPDATE {name} SET v = 'u2' WHERE id % 5 = 0")
    bad = _compare_all(spark, hdb, name, path)
    assert not bad, "\n".join(bad)
    # rewrite_data_files (and copy-on-write) wrote the lineage columns into
    # their files: our read of stored values (not inheritance) was compared.
    assert _files_with_lineage(path)


@pytest.mark.parametrize("mode", MODES)
def test_our_changes_read_by_spark(spark, spark_table, hdb, mode):
    from spark_util import CATALOG
    ident, path = spark_table
    name = f"{CATALOG}.{ident}"
    t = hdb.Table(path, format_version=3, properties=_props(mode))
    t.write(_batch(list(range(0, 50)), "a"))
    t.write(_batch(list(range(50, 80)), "b"))
    t.update({"v": "u1"}, filter="id IN (1, 7, 13, 19, 25, 31, 55, 61, 67)")
    t.upsert(_batch([3, 9, 51, 77, 80, 81], "p"), on="id")
    t.delete("id IN (4, 14, 24, 54, 64, 81)")
    t.update({"v": "u2"}, filter="id >= 70")
    assert _files_with_lineage(path)  # updates write the original _row_id
    t.compact(min_input_files=1)  # compaction copies every row's lineage
    bad = _compare_all(spark, hdb, name, path)
    assert not bad, "\n".join(bad)
    # Spark's own UPDATE on top of ours keeps our ids, and we read its result.
    spark.sql(f"REFRESH TABLE {name}")
    spark.sql(f"UPDATE {name} SET v = 'su' WHERE id < 10")
    bad = _compare_all(spark, hdb, name, path)
    assert not bad, "\n".join(bad)
