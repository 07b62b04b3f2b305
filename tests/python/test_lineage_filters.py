"""Filters on the v3 row-lineage columns `_row_id` and
`_last_updated_sequence_number` (issue 14 item 6): every filtered read path
and every row change takes them, and row groups are pruned by them.

Oracle: DuckDB evaluates the same filter over our unfiltered read of the
table with both columns (whose values test_row_lineage.py checks against the
spec's rules and Spark). Seeded random histories of appends, deletes,
updates, upserts, merges and compactions (which store the columns in the
rewritten files, so stored, inherited and mixed files all occur) in
merge-on-read and copy-on-write; after every step random filters mixing the
lineage columns with plain columns are read through to_arrow (with and
without the columns projected), a small-batch stream, explain's counts,
exact vector search, and a delete by `_row_id` is checked against the model.
"""

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

LIN = ["_row_id", "_last_updated_sequence_number"]
DIM = 4


def _props(mode):
    p = {f"write.{op}.mode": mode for op in ("delete", "update", "merge")}
    p["write.parquet.row-group-limit"] = "16"  # several row groups per file
    return p


def _batch(ids, tag, rng):
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "v": pa.array([f"{tag}{i}" for i in ids], pa.string()),
        "k": pa.array(rng.integers(0, 10, len(ids)), pa.int32()),
        "vec": pa.FixedSizeListArray.from_arrays(
            pa.array(rng.standard_normal(len(ids) * DIM).astype(np.float32)), DIM),
    })


def _full(t):
    return t.to_arrow(columns=["id", "v", "k", "vec"] + LIN)


def _expect(full, where, cols=("id",)):
    con = duckdb.connect()
    con.register("f", full)
    sel = ", ".join(f'"{c}"' for c in cols)
    r = con.sql(f"SELECT {sel} FROM f WHERE {where} ORDER BY id").arrow()
    r = r.read_all() if hasattr(r, "read_all") else r  # a reader in newer DuckDB
    return r if r.num_rows else full.select(list(cols)).slice(0, 0)


def _random_filter(rng, full):
    rids = [r for r in full["_row_id"].to_pylist() if r is not None]
    seqs = sorted(set(full["_last_updated_sequence_number"].to_pylist()))
    r = int(rng.choice(rids)) if rids else 0
    s = int(rng.choice(seqs)) if seqs else 1
    span = int(rng.integers(0, 40))
    some = [int(x) for x in rng.choice(rids, size=min(len(rids), 5), replace=False)] if rids else [0]
    return str(rng.choice([
        f"_row_id = {r}",
        f"_row_id >= {r} AND _row_id < {r + span}",
        f"_row_id IN ({', '.join(map(str, some))})",
        f"_row_id NOT IN ({', '.join(map(str, some))}) AND k < 3",
        f"_row_id < {r} OR k = {int(rng.integers(0, 10))}",
        f"_last_updated_sequence_number = {s}",
        f"_last_updated_sequence_number > {s} AND _row_id > {r}",
        f"NOT (_last_updated_sequence_number <= {s}) OR id = {int(rng.integers(0, 50))}",
        "_row_id IS NULL",
        "_row_id IS NOT NULL AND k >= 5",
    ]))


def _check_filters(t, rng, n=6):
    full = _full(t)
    for _ in range(n):
        where = _random_filter(rng, full)
        want = _expect(full, where, ("id", "v") + tuple(LIN))
        got = t.to_arrow(filter=where, columns=["id", "v"] + LIN).sort_by("id")
        assert got.to_pylist() == want.to_pylist(), where
        # Without the lineage columns projected: the filter still reads them,
        # and a NULL projection does not return them.
        plain = t.to_arrow(filter=where)
        assert plain.column_names == ["id", "v", "k", "vec"], where
        assert sorted(plain["id"].to_pylist()) == want["id"].to_pylist(), where
        rd = t.to_arrow_stream(filter=where, columns=["id"], batch_rows=5)
        ids = sorted(i for b in rd for i in b.column("id").to_pylist())
        assert ids == want["id"].to_pylist(), where
        assert t.explain(where).stats["rows_matched"] == want.num_rows, where
    # Exact vector search restricted by a lineage filter: brute force over
    # the live rows the filter keeps.
    where = _random_filter(rng, full)
    keep = _expect(full, where, ("id", "vec"))
    q = rng.standard_normal(DIM).astype(np.float32)
    got = t.search("vec", q, k=7, filter=where, exact=True)
    if keep.num_rows:
        vecs = np.array(keep["vec"].to_pylist(), dtype=np.float32)
        d = ((vecs - q) ** 2).sum(1)
        want_ids = [keep["id"][int(i)].as_py() for i in np.argsort(d, kind="stable")[:7]]
        assert sorted(got["id"].to_pylist()) == sorted(want_ids), where
    else:
        assert got.num_rows == 0, where


@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
@pytest.mark.parametrize("seed", [1, 2])
def test_lineage_filters_random_history(hdb, tmp_path, mode, seed):
    rng = np.random.default_rng(seed * 11 + (mode == "copy-on-write"))
    t = hdb.Table(str(tmp_path / "t"), format_version=3, properties=_props(mode))
    model = {}  # id -> v
    next_id = 0
    for step in range(10):
        op = str(rng.choice(["append", "delete", "rowid_delete", "update", "upsert", "merge",
                             "compact"])) if model else "append"
        live = sorted(model)
        if op == "append":
            ids = list(range(next_id, next_id + int(rng.integers(5, 60))))
            next_id += len(ids)
            t.write(_batch(ids, f"a{step}_", rng))
            model.update({i: f"a{step}_{i}" for i in ids})
        elif op == "delete":
            lo = int(rng.choice(live))
            hi = lo + int(rng.integers(0, 8))
            t.delete(f"id >= {lo} AND id <= {hi}")
            model = {i: v for i, v in model.items() if not lo <= i <= hi}
        elif op == "rowid_delete":
            full = _full(t)
            where = _random_filter(rng, full)
            gone = set(_expect(full, where)["id"].to_pylist())
            assert t.delete(where) == len(gone), where
            model = {i: v for i, v in model.items() if i not in gone}
        elif op == "update":
            full = _full(t)
            lo = int(rng.choice(full["_row_id"].to_pylist()))
            where = f"_row_id >= {lo} AND _row_id < {lo + int(rng.integers(1, 12))}"
            hit = set(_expect(full, where)["id"].to_pylist())
            assert t.update({"v": f"u{step}"}, filter=where) == len(hit), where
            # Updated rows keep their _row_id (the spec's rule).
            after = t.to_arrow(filter=where, columns=["id", "v"])
            assert set(after["id"].to_pylist()) == hit and set(after["v"].to_pylist()) <= {
                f"u{step}"}, where
            model.update({i: f"u{step}" for i in hit})
        elif op in ("upsert", "merge"):
            old = [int(x) for x in rng.choice(live, size=min(len(live), 4), replace=False)]
            new = list(range(next_id, next_id + int(rng.integers(0, 4))))
            next_id += len(new)
            src = _batch(old + new, f"p{step}_", rng)
            if op == "upsert":
                t.upsert(src, on="id")
            else:
                t.merge(src, on="id").when_matched_update_all(where="id >= 0") \
                    .when_not_matched_insert_all().execute()
            model.update({i: f"p{step}_{i}" for i in old + new})
        else:
            t.compact(min_input_files=1)
        got = t.to_arrow(columns=["id", "v"]).to_pydict()
        assert dict(zip(got["id"], got["v"])) == model, f"step {step} ({op})"
        _check_filters(t, rng)


def test_lineage_filters_prune_row_groups(hdb, tmp_path):
    rng = np.random.default_rng(5)
    t = hdb.Table(str(tmp_path / "t"), format_version=3, properties=_props("merge-on-read"))
    for k in range(4):
        t.write(_batch(list(range(k * 64, (k + 1) * 64)), "a", rng))
    full = _full(t)
    rid = full.filter(pa.compute.equal(full["id"], 100))["_row_id"][0].as_py()
    st = t.explain(f"_row_id = {rid}").stats
    # 4 files x 4 row groups of 16: one row group is read.
    assert st["rows_matched"] == 1 and st["rows_scanned"] == 16, st
    assert st["row_groups_pruned"] == 15, st
    seq = t.snapshots()[1].sequence_number
    st = t.explain(f"_last_updated_sequence_number = {seq}").stats
    assert st["rows_matched"] == 64 and st["rows_scanned"] == 64, st
    # After compaction the files store both columns: still pruned by their
    # stored statistics, and the values are unchanged.
    t.update({"v": "x"}, filter="id < 3")
    t.compact(min_input_files=1)
    assert _full(t).sort_by("id")["_row_id"].to_pylist() == full.sort_by("id")["_row_id"].to_pylist()
    st = t.explain(f"_row_id = {rid}").stats
    (path,) = [f["path"] for f in st["files"]]
    md = pq.ParquetFile(path).metadata
    col = md.schema.names.index("_row_id")
    hit = [g for g in range(md.num_row_groups)
           if md.row_group(g).column(col).statistics.min <= rid <= md.row_group(g).column(col)
           .statistics.max]
    assert md.num_row_groups > len(hit) >= 1
    assert st["rows_matched"] == 1, st
    assert st["rows_scanned"] == sum(md.row_group(g).num_rows for g in hit), st
    assert t.to_arrow(filter=f"_row_id = {rid}", columns=["id"])["id"].to_pylist() == [100]


def test_lineage_filter_on_v2_table_is_a_clear_error(hdb, tmp_path):
    t = hdb.Table(str(tmp_path / "t"), format_version=2)
    t.write(_batch([1, 2, 3], "a", np.random.default_rng(0)))
    with pytest.raises(hdb.InvalidArgumentError, match="_row_id"):
        t.to_arrow(filter="_row_id = 1")
    with pytest.raises(hdb.InvalidArgumentError, match="_row_id"):
        t.delete("_row_id = 1")
    assert len(t) == 3
