"""Upserts matched by key in C (issue 14): the key path of
``Table.upsert`` (src/table/deletes_eq.c, one-column integer keys matched by
value through a bitmap of a narrow key range or a hash table of a wide one;
other keys by their encoded bytes) against a pyarrow model, on random
tables: int64, int32, date32 and timestamp keys, narrow and wide (up to 2^62) ranges,
NULL keys on both sides, keys of rows an earlier delete removed (they match
nothing), data files written before an int -> long promotion, and a string
and a two-column key for the byte path. After each upsert the table's rows
and the returned counts equal the model's; v2 (position deletes) and v3
(deletion vectors).
"""

import datetime as dt
import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hyperstreamdb as hdb


def _keys(rng, kind, n, wide):
    if kind == "str":
        return [f"k{rng.randrange(3 * n)}" for _ in range(n)]
    if kind == "date":
        return [dt.date(2000, 1, 1) + dt.timedelta(days=rng.randrange(4 * n)) for _ in range(n)]
    if kind == "ts":
        return [dt.datetime(2020, 1, 1) + dt.timedelta(microseconds=rng.randrange(1 << 40))
                for _ in range(n)]
    hi = (1 << 62) if wide and kind == "int64" else (1 << 30) if wide else 3 * n
    return [rng.randrange(-hi, hi) for _ in range(n)]


def _type(kind):
    return {"int64": pa.int64(), "int32": pa.int32(), "date": pa.date32(), "ts": pa.timestamp("us"),
            "str": pa.string()}[kind]


def _rows(rng, kind, n, wide, nulls, start):
    ks = _keys(rng, kind, n, wide)
    ks = [None if rng.random() < nulls else k for k in ks]
    return pa.table({"k": pa.array(ks, _type(kind)),
                     "v": pa.array(range(start, start + n), pa.int64())})


def _unique(t):
    """Source rows with distinct non-NULL keys (NULL keys kept)."""
    seen, keep = set(), []
    for i, k in enumerate(t.column("k").to_pylist()):
        if k is None or k not in seen:
            keep.append(i)
            seen.add(k)
    return t.take(pa.array(keep, pa.int64()))


def _model_upsert(live, src):
    skeys = pc.drop_null(src.column("k"))
    hit = pc.fill_null(pc.is_in(live.column("k"), value_set=skeys), False)
    matched = set(live.filter(hit).column("k").to_pylist())
    updated = sum(1 for k in src.column("k").to_pylist() if k is not None and k in matched)
    return pa.concat_tables([live.filter(pc.invert(hit)), src]), updated


def _sorted(t):
    return sorted(zip(t.column("k").to_pylist(), t.column("v").to_pylist()),
                  key=lambda r: (r[1], repr(r[0])))


@pytest.mark.parametrize("fv", [2, 3])
@pytest.mark.parametrize("kind,wide", [("int64", False), ("int64", True), ("int32", False),
                                       ("int32", True), ("date", False), ("ts", True), ("str", False)])
def test_upsert_by_key_matches_model(tmp_path, fv, kind, wide):
    rng = random.Random(f"{fv}-{kind}-{wide}")
    t = hdb.Table(tmp_path / "t", format_version=fv)
    live = None
    v = 0
    for f in range(3):
        part = _rows(rng, kind, 300, wide, 0.05, v)
        v += 300
        t.write(part)
        live = part if live is None else pa.concat_tables([live, part])
    # Rows an earlier delete removed: their keys must match nothing later.
    t.delete("v BETWEEN 100 AND 199 OR v BETWEEN 500 AND 560 OR v = 899")
    vv = live.column("v")
    gone = pc.or_(pc.or_(pc.and_(pc.greater_equal(vv, 100), pc.less_equal(vv, 199)),
                         pc.and_(pc.greater_equal(vv, 500), pc.less_equal(vv, 560))),
                  pc.equal(vv, 899))
    removed = live.filter(gone)
    live = live.filter(pc.invert(gone))
    assert _sorted(t.to_arrow()) == _sorted(live)
    for step in range(4):
        old = live.column("k").to_pylist()
        picks = rng.sample(old, min(len(old), 120)) + removed.column("k").to_pylist()[:20]
        fresh = _rows(rng, kind, 80, wide, 0.1, v).column("k").to_pylist()
        ks = picks + fresh
        src = pa.table({"k": pa.array(ks, _type(kind)),
                        "v": pa.array(range(v, v + len(ks)), pa.int64())})
        v += len(ks)
        src = _unique(src)
        want, updated = _model_upsert(live, src)
        r = t.upsert(src, on="k")
        assert (r.rows_updated, r.rows_inserted) == (updated, src.num_rows - updated), step
        assert _sorted(t.to_arrow()) == _sorted(want), step
        assert len(t) == want.num_rows
        live = want


def test_upsert_two_column_key(tmp_path):
    rng = random.Random(7)
    t = hdb.Table(tmp_path / "t")
    a = [rng.randrange(20) for _ in range(400)]
    b = [rng.randrange(20) for _ in range(400)]
    base = pa.table({"a": pa.array(a, pa.int64()), "b": pa.array(b, pa.int32()),
                     "v": pa.array(range(400), pa.int64())})
    t.write(base)
    pairs = sorted({(rng.randrange(25), rng.randrange(25)) for _ in range(150)})
    src = pa.table({"a": pa.array([p[0] for p in pairs], pa.int64()),
                    "b": pa.array([p[1] for p in pairs], pa.int32()),
                    "v": pa.array(range(1000, 1000 + len(pairs)), pa.int64())})
    r = t.upsert(src, on=["a", "b"])
    keys = set(pairs)
    kept = [(x, y, w) for x, y, w in zip(a, b, range(400)) if (x, y) not in keys]
    updated = len(keys & set(zip(a, b)))
    assert (r.rows_updated, r.rows_inserted) == (updated, len(pairs) - updated)
    got = t.to_arrow()
    want = kept + [(x, y, w) for (x, y), w in zip(pairs, range(1000, 1000 + len(pairs)))]
    assert sorted(zip(*(got.column(c).to_pylist() for c in ("a", "b", "v")))) == sorted(want)


def test_upsert_int_key_after_promotion(tmp_path):
    """Files written while the key was an int, matched under a long key."""
    t = hdb.Table(tmp_path / "t")
    t.write(pa.table({"k": pa.array([1, 2, 3, None, 5], pa.int32()),
                      "v": pa.array([10, 20, 30, 40, 50], pa.int64())}))
    t.update_column("k", pa.int64())
    t.write(pa.table({"k": pa.array([6, 1 << 40], pa.int64()), "v": pa.array([60, 70], pa.int64())}))
    src = pa.table({"k": pa.array([2, 5, 1 << 40, None, 9], pa.int64()),
                    "v": pa.array([1, 2, 3, 4, 5], pa.int64())})
    r = t.upsert(src, on="k")
    assert (r.rows_updated, r.rows_inserted) == (3, 2)
    got = sorted(zip(*(t.to_arrow().column(c).to_pylist() for c in ("k", "v"))),
                 key=lambda x: x[1])
    assert got == sorted([(1, 10), (3, 30), (None, 40), (6, 60), (2, 1), (5, 2), (1 << 40, 3),
                          (None, 4), (9, 5)], key=lambda x: x[1])
