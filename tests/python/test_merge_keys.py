"""The merge builder on the key path (issue 14): every combination of
`when_matched_update_all(where=)`, `when_not_matched_insert_all()` and
`when_not_matched_by_source_delete(filter)` runs as one pass in C (each
data file's key columns matched against a hash set of the source keys; a
filter scan of the matched files for `where`; the source rows to append
picked from the same pass), instead of generated `IN (...)` filters.

Oracle: DuckDB's own `MERGE INTO` with the same clauses on a copy of the
rows, after every step of seeded random histories (v2 and v3, merge-on-read
and copy-on-write, with and without scalar indexes, NULL keys on both
sides); the counts each merge returns equal DuckDB's answers to the same
questions, and pyiceberg reads every snapshot as we do.
"""

import random

import duckdb
import pyarrow as pa
import pytest

import hyperstreamdb as hdb
from pyiceberg.table import StaticTable

CATS = ["a", "b", "c", "d"]
WHERES = [None, "cat = 'a'", "v > 50", "cat IN ('b', 'c') OR v < 10"]
FILTERS = [None, "cat = 'd'", "id < 40", "v <= 30 AND cat <> 'a'"]


def _batch(rng, ids):
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "cat": pa.array([rng.choice(CATS) for _ in ids], pa.string()),
        "v": pa.array([float(rng.randint(0, 100)) for _ in ids], pa.float64()),
    })


def _rows(t):
    return sorted(zip(t["id"].to_pylist(), t["cat"].to_pylist(), t["v"].to_pylist()),
                  key=lambda r: (r[0] is None, r[0] or 0, r[1], r[2]))


def _duck_rows(con):
    return _rows(con.sql("SELECT id, cat, v FROM t").to_arrow_table())


def _expected_counts(con, update, where, insert, delete, filt):
    upd = ins = dele = 0
    if update:
        cond = f" AND ({where})" if where else ""
        upd = con.sql(f"SELECT count(*) FROM s WHERE EXISTS (SELECT 1 FROM t WHERE t.id = s.id"
                      f"{cond})").fetchall()[0][0]
    if insert:
        ins = con.sql("SELECT count(*) FROM s WHERE NOT EXISTS "
                      "(SELECT 1 FROM t WHERE t.id = s.id)").fetchall()[0][0]
    if delete:
        cond = f" AND ({filt})" if filt else ""
        dele = con.sql(f"SELECT count(*) FROM t WHERE NOT EXISTS "
                       f"(SELECT 1 FROM s WHERE s.id = t.id){cond}").fetchall()[0][0]
    return upd, ins, dele


def _duck_merge(con, update, where, insert, delete, filt):
    q = "MERGE INTO t USING s ON t.id = s.id"
    if update:
        # Column names unqualified in our filters name the target's row.
        w = where.replace("cat", "t.cat").replace("v ", "t.v ") if where else None
        q += (f" WHEN MATCHED AND ({w})" if w else " WHEN MATCHED") + \
            " THEN UPDATE SET cat = s.cat, v = s.v"
    if insert:
        q += " WHEN NOT MATCHED THEN INSERT (id, cat, v) VALUES (s.id, s.cat, s.v)"
    if delete:
        f = filt.replace("cat", "t.cat").replace("v ", "t.v ").replace("id ", "t.id ") \
            if filt else None
        q += (f" WHEN NOT MATCHED BY SOURCE AND ({f})" if f else
              " WHEN NOT MATCHED BY SOURCE") + " THEN DELETE"
    con.sql(q)


@pytest.mark.parametrize("fv,mode", [(2, "merge-on-read"), (3, "merge-on-read"),
                                     (2, "copy-on-write")])
def test_merges_match_duckdb(tmp_path, fv, mode):
    rng = random.Random(fv * 17 + len(mode))
    props = {f"write.{op}.mode": mode for op in ("delete", "update", "merge")}
    t = hdb.Table(tmp_path / "t", format_version=fv, properties=props)
    con = duckdb.connect()
    first = _batch(rng, list(range(60)))
    nul = pa.table({"id": pa.array([None], pa.int64()), "cat": ["a"], "v": [5.0]})
    first = pa.concat_tables([first, nul])  # a table row with a NULL key
    t.write(first)
    con.register("first_rows", first)
    con.sql("CREATE TABLE t AS SELECT * FROM first_rows")
    next_id = 60
    history = []
    for step in range(16):
        if step == 6:
            t.add_index("cat")
            t.add_index("id")
        live = [r[0] for r in _duck_rows(con) if r[0] is not None]
        old = rng.sample(live, min(len(live), rng.randint(0, 8)))
        new = list(range(next_id, next_id + rng.randint(0, 5)))
        next_id += len(new)
        src = _batch(rng, old + new)
        if rng.random() < 0.3:  # a source row with a NULL key: never matches
            src = pa.concat_tables([src, pa.table({"id": pa.array([None], pa.int64()),
                                                    "cat": ["b"], "v": [7.0]})])
        update, insert, delete = (rng.random() < 0.7, rng.random() < 0.7, rng.random() < 0.4)
        if not (update or insert or delete):
            update = True
        where = rng.choice(WHERES) if update else None
        filt = rng.choice(FILTERS) if delete else None
        con.register("src_rows", src)
        con.sql("CREATE OR REPLACE TABLE s AS SELECT * FROM src_rows")
        want = _expected_counts(con, update, where, insert, delete, filt)
        b = t.merge(src, on="id")
        if update:
            b = b.when_matched_update_all(where=where)
        if insert:
            b = b.when_not_matched_insert_all()
        if delete:
            b = b.when_not_matched_by_source_delete(filt)
        r = b.execute()
        _duck_merge(con, update, where, insert, delete, filt)
        what = f"step {step}: {b!r}"
        assert (r.num_updated_rows, r.num_inserted_rows, r.num_deleted_rows) == want, what
        assert _rows(t.to_arrow()) == _duck_rows(con), what
        assert len(t) == con.sql("SELECT count(*) FROM t").fetchall()[0][0], what
        got = _rows(t.to_arrow(filter="cat = 'b' OR id < 10"))
        exp = _rows(con.sql("SELECT * FROM t WHERE cat = 'b' OR id < 10").to_arrow_table())
        assert got == exp, what
        history.append((t.snapshots()[-1].snapshot_id, _duck_rows(con)))
    st = StaticTable.from_metadata(t.metadata_location)
    for sid, rows in history:
        assert _rows(st.scan(snapshot_id=sid).to_arrow()) == rows, f"pyiceberg at {sid}"


def test_key_path_errors(tmp_path):
    rng = random.Random(2)
    t = hdb.Table(tmp_path / "t")
    t.write(_batch(rng, list(range(10))))
    src = _batch(rng, [1, 2, 3])
    with pytest.raises(hdb.SchemaError, match="nope"):
        t.merge(src, on="nope").when_not_matched_insert_all().execute()
    with pytest.raises(Exception, match="xyz"):
        t.merge(src, on="id").when_matched_update_all(where="xyz = 1").execute()
    with pytest.raises(Exception, match="qqq"):
        t.merge(src, on="id").when_not_matched_by_source_delete("qqq > 1").execute()
    dup = _batch(rng, [4, 4])
    with pytest.raises(hdb.InvalidArgumentError, match="more than once"):
        t.merge(dup, on="id").when_matched_update_all().execute()
    assert len(t.snapshots()) == 1 and len(t) == 10
    # Without an update, a source whose keys repeat is fine.
    r = t.merge(dup, on="id").when_not_matched_by_source_delete("id > 7").execute()
    assert (r.num_updated_rows, r.num_inserted_rows, r.num_deleted_rows) == (0, 0, 2)
    assert sorted(t.to_arrow()["id"].to_pylist()) == list(range(8))
