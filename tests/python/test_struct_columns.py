"""Struct columns written by our Parquet writer and changed row by row (issue
14: "struct columns in row changes"; before, any append, update, upsert,
merge or compaction of a table with a struct column failed with "Arrow type
'+s' cannot be written to Parquet").

Oracles:
  * the writer: seeded random struct types (nested up to three levels,
    members of every primitive type, required and optional at each level,
    NULLs at each level, sliced inputs, several row groups and pages) are
    read back by pyarrow and DuckDB exactly as written, DuckDB's filters on
    members (row-group statistics) agree with pyarrow's compute, and the
    Parquet field ids are the Arrow fields';
  * tables: random histories of appends, deletes, updates, upserts, merges
    and compactions of v2/v3 tables with struct columns, merge-on-read and
    copy-on-write, sorted, against an in-memory model; pyiceberg reads every
    snapshot identically; Spark reads our changes identically (one test).
"""

import datetime as dt
import decimal
import os

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

SEEDS = int(os.environ.get("HS_STRUCT_SEEDS", "8"))  # 60 agreed when written
PRIMS = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32(), pa.float32(),
         pa.float64(), pa.bool_(), pa.string(), pa.large_string(), pa.binary(), pa.date32(),
         pa.timestamp("us"), pa.timestamp("us", tz="UTC"), pa.decimal128(9, 2),
         pa.decimal128(30, 4)]


def _prim_values(rng, t, n):
    if pa.types.is_boolean(t):
        return pa.array(rng.random(n) < 0.5)
    if pa.types.is_integer(t):
        info = np.iinfo(t.to_pandas_dtype())
        return pa.array(rng.integers(max(info.min, -1000), min(info.max, 1000), n), t)
    if pa.types.is_floating(t):
        v = rng.standard_normal(n)
        return pa.array(v.astype(np.float32) if t == pa.float32() else v, t)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.array([f"s{int(x)}" * int(x % 3) for x in rng.integers(0, 500, n)], t)
    if pa.types.is_binary(t):
        return pa.array([bytes(rng.integers(0, 256, int(x % 5)).astype(np.uint8))
                         for x in rng.integers(0, 500, n)], t)
    if pa.types.is_date(t):
        return pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=int(x))
                         for x in rng.integers(0, 3000, n)], t)
    if pa.types.is_timestamp(t):
        return pa.array(rng.integers(0, 2 ** 50, n), pa.int64()).cast(t)
    if pa.types.is_decimal(t):
        return pa.array([decimal.Decimal(int(x)).scaleb(-t.scale)
                         for x in rng.integers(-10 ** 8, 10 ** 8, n)], t)
    raise AssertionError(t)


def _with_nulls(rng, arr, p):
    if p == 0:
        return arr
    mask = pa.array(rng.random(len(arr)) < p)
    return pc.if_else(mask, pa.scalar(None, arr.type), arr)


def _random_struct_type(rng, depth=0):
    fields = []
    for k in range(int(rng.integers(1, 4))):
        if depth < 2 and rng.random() < 0.3:
            t = _random_struct_type(rng, depth + 1)
        else:
            t = PRIMS[int(rng.integers(0, len(PRIMS)))]
        fields.append(pa.field(f"m{depth}{k}", t, nullable=bool(rng.random() < 0.7)))
    return pa.struct(fields)


def _struct_values(rng, field, n, p):
    """An array of `field` (nullable per the field) with NULLs at rate p."""
    t = field.type
    if pa.types.is_struct(t):
        kids = [_struct_values(rng, t.field(i), n, p) for i in range(t.num_fields)]
        mask = pa.array(rng.random(n) < p) if field.nullable and p else None
        return pa.StructArray.from_arrays(kids, fields=list(t), mask=mask)
    return _with_nulls(rng, _prim_values(rng, t, n), p if field.nullable else 0)


def _random_table(rng, n):
    cols = {"id": pa.array(np.arange(n), pa.int64())}
    fields = [pa.field("id", pa.int64(), nullable=False)]
    for c in range(int(rng.integers(1, 3))):
        f = pa.field(f"s{c}", _random_struct_type(rng), nullable=bool(rng.random() < 0.8))
        p = float(rng.choice([0.0, 0.1, 0.5]))
        cols[f.name] = _struct_values(rng, f, n, p)
        fields.append(f)
    return pa.Table.from_arrays(list(cols.values()), schema=pa.schema(fields))


def _leaves(t, prefix=""):
    for i in range(t.num_fields):
        f = t.field(i)
        if pa.types.is_struct(f.type):
            yield from _leaves(f.type, f"{prefix}{f.name}.")
        else:
            yield f"{prefix}{f.name}", f.type


@pytest.mark.parametrize("seed", range(SEEDS))
def test_writer_random_structs_vs_pyarrow_and_duckdb(hdb, tmp_path, seed):
    from hyperstreamdb import parquet as hp

    rng = np.random.default_rng(seed)
    tbl = _random_table(rng, int(rng.integers(1, 3000)))
    off = int(rng.integers(0, max(1, tbl.num_rows // 3)))
    tbl = tbl.slice(off)  # struct arrays with offsets
    path = str(tmp_path / "s.parquet")
    hp.write_table(tbl, path, row_group_size=int(rng.choice([100, 1000, 10 ** 6])),
                   data_page_size=int(rng.choice([512, 1 << 20])),
                   data_page_version=str(rng.choice(["1.0", "2.0"])),
                   use_dictionary=bool(rng.random() < 0.5))
    back = pq.read_table(path)
    assert back.schema.equals(tbl.schema), (back.schema, tbl.schema)
    assert back.to_pylist() == tbl.to_pylist()
    assert hp.read_table(path).to_pylist() == tbl.to_pylist()
    # Field ids depth first, as the writer numbers them without metadata.
    assert _field_ids(pq.ParquetFile(path).schema_arrow) == list(range(1, 1 + _n_fields(tbl.schema)))
    # DuckDB: every leaf, and filters on members (statistics-driven pruning).
    con = duckdb.connect()
    for name, t in _leaves(tbl.schema.field("s0").type, "s0."):
        if pa.types.is_binary(t) or pa.types.is_decimal(t) or pa.types.is_timestamp(t):
            continue  # DuckDB's own conversions (bytes, decimals, time zones) aside
        got = [r[0] for r in con.execute(f"SELECT {name} FROM read_parquet('{path}') "
                                         "ORDER BY id").fetchall()]
        col = tbl.column("s0").combine_chunks()
        for part in name.split(".")[1:]:
            col = pc.struct_field(col, part) if col.null_count == 0 else _null_through(col, part)
        want = col.to_pylist()
        if pa.types.is_floating(t):
            want = [None if w is None else float(w) for w in want]
        assert got == want, name
        if pa.types.is_integer(t) and len([w for w in want if w is not None]):
            x = sorted(w for w in want if w is not None)[len([w for w in want if w is not None]) // 2]
            n = con.execute(f"SELECT count(*) FROM read_parquet('{path}') WHERE {name} > {x}"
                            ).fetchone()[0]
            assert n == sum(1 for w in want if w is not None and w > x), name


def _field_ids(fields):
    out = []
    for f in fields:
        out.append(int(f.metadata[b"PARQUET:field_id"]))
        if pa.types.is_struct(f.type):
            out += _field_ids(list(f.type))
    return out


def _n_fields(fields):
    return sum(1 + (_n_fields(list(f.type)) if pa.types.is_struct(f.type) else 0) for f in fields)


def _null_through(col, part):
    """struct_field that keeps the parent's NULLs (pc.struct_field does not)."""
    child = pc.struct_field(col, part)
    return pc.if_else(col.is_valid(), child, pa.scalar(None, child.type))


def test_writer_refuses_nested_types_inside_structs(hdb, tmp_path):
    from hyperstreamdb import parquet as hp

    bad = pa.table({"s": pa.array([{"a": [1, 2]}], pa.struct([("a", pa.list_(pa.int64()))]))})
    path = tmp_path / "bad.parquet"
    with pytest.raises(hdb.UnsupportedError, match=r"s\.a.*inside a struct"):
        hp.write_table(bad, str(path))
    assert not path.exists()
    empty = pa.table({"s": pa.array([{}], pa.struct([]))})
    with pytest.raises(hdb.UnsupportedError, match="struct without fields"):
        hp.write_table(empty, str(path))


# ---------------------------------------------------------------- tables

STRUCT = pa.struct([("a", pa.int64()), ("b", pa.string()),
                    ("c", pa.struct([("x", pa.float64()), ("y", pa.bool_())]))])


def _rows(rng, ids, tag, member_nulls=True):
    vals = []
    for i in ids:
        r = rng.random()
        vals.append(None if r < 0.15 and member_nulls else
                    {"a": None if r < 0.3 and member_nulls else int(i) * 10, "b": f"{tag}{i}",
                     "c": None if r < 0.45 else {"x": float(i) / 4, "y": bool(i % 2)}})
    return pa.table({"id": pa.array(ids, pa.int64()), "k": pa.array([int(i) % 7 for i in ids],
                                                                      pa.int32()),
                     "s": pa.array(vals, STRUCT)})


def _model_of(tbl):
    return {r["id"]: r for r in tbl.to_pylist()}


@pytest.mark.parametrize("fmt,mode", [(2, "merge-on-read"), (2, "copy-on-write"),
                                      (3, "merge-on-read"), (3, "copy-on-write")])
def test_row_changes_on_struct_tables(hdb, tmp_path, fmt, mode):
    from pyiceberg.table import StaticTable

    rng = np.random.default_rng(fmt * 10 + len(mode))
    props = {f"write.{op}.mode": mode for op in ("delete", "update", "merge")}
    t = hdb.Table.create(str(tmp_path / "t"), schema=_rows(rng, [0], "x").schema,
                         format_version=fmt, properties=props,
                         sort_order=["k"] if fmt == 3 else None)
    model, history, next_id = {}, [], 0
    for step in range(12):
        op = str(rng.choice(["append", "delete", "update", "upsert", "merge", "compact"])) \
            if model else "append"
        live = sorted(model)
        if op == "append":
            ids = list(range(next_id, next_id + int(rng.integers(1, 80))))
            next_id += len(ids)
            batch = _rows(rng, ids, f"a{step}_")
            t.write(batch)
            model.update(_model_of(batch))
        elif op == "delete":
            k = int(rng.integers(0, 7))
            assert t.delete(f"k = {k}") == sum(1 for r in model.values() if r["k"] == k)
            model = {i: r for i, r in model.items() if r["k"] != k}
        elif op == "update":
            lo = int(rng.choice(live))
            hit = [i for i in live if lo <= i < lo + 10]
            assert t.update({"k": 100 + step}, filter=f"id >= {lo} AND id < {lo + 10}") == len(hit)
            for i in hit:
                model[i] = dict(model[i], k=100 + step)
        elif op in ("upsert", "merge"):
            old = [int(x) for x in rng.choice(live, size=min(len(live), 5), replace=False)]
            new = list(range(next_id, next_id + int(rng.integers(0, 5))))
            next_id += len(new)
            src = _rows(rng, old + new, f"p{step}_")
            if op == "upsert":
                t.upsert(src, on="id")
            else:
                t.merge(src, on="id").when_matched_update_all() \
                    .when_not_matched_insert_all().execute()
            model.update(_model_of(src))
        else:
            t.compact(min_input_files=1)
        got = t.to_arrow()
        assert got.schema.field("s").type == STRUCT
        assert _model_of(got) == model, f"step {step} ({op})"
        assert len(t) == len(model)
        assert _model_of(t.to_arrow(filter="k < 3")) == {i: r for i, r in model.items()
                                                         if r["k"] < 3}
        history.append((t.current_snapshot_id, dict(model)))
    st = StaticTable.from_metadata(t.metadata_location)
    for sid, m in history:
        assert _model_of(t.to_arrow(snapshot_id=sid)) == m
        assert _model_of(st.scan(snapshot_id=sid).to_arrow()) == m, sid


def test_struct_row_changes_read_by_spark(spark, spark_table, hdb):
    """Spark reads our struct table at every snapshot of deletes (v3
    deletion vectors), updates, upserts and a compaction as we do. (No NULL
    structs or integer members here: the harness's to_pandas path turns an
    int member with NULLs into doubles, pandas' doing, not the table's.)"""
    from spark_util import assert_same_at_every_snapshot

    ident, path = spark_table
    rng = np.random.default_rng(3)
    t = hdb.Table(path, format_version=3)
    t.write(_rows(rng, range(0, 200), "a", False))
    t.write(_rows(rng, range(200, 300), "b", False))
    assert t.delete("k = 3") > 0
    assert t.update({"k": 50}, filter="id < 20") > 0
    t.upsert(_rows(rng, [5, 150, 300, 301], "u", False), on="id")
    t.compact(min_input_files=1)
    assert_same_at_every_snapshot(spark, hdb, ident, path)
