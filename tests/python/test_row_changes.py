"""Row-level changes (issue 14): delete, update, upsert and merge against a
plain in-memory model, on every read path, with pyiceberg reading every
snapshot we commit.

Model-based random histories: a seeded sequence of appends, deletes,
updates, upserts, merges (and index builds) on tables of format v2 and v3,
merge-on-read and copy-on-write. After every step the table equals the
model through `to_arrow`, a filter (with and without scalar indexes),
`len`, and exact vector search equals brute force over the live rows; and
pyiceberg's `StaticTable` scan of our metadata (which applies position
deletes and deletion vectors itself) equals the model too.
"""

import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hyperstreamdb as hdb
from pyiceberg.table import StaticTable

DIM = 4
CATS = [f"c{i}" for i in range(6)]


def _rows(rng, ids):
    return {
        "id": list(ids),
        "cat": [rng.choice(CATS) for _ in ids],
        "v": [float(rng.randint(0, 1000)) for _ in ids],
        "emb": [[rng.random() for _ in range(DIM)] for _ in ids],
    }


def _table(d):
    return pa.table({
        "id": pa.array(d["id"], pa.int64()),
        "cat": pa.array(d["cat"], pa.string()),
        "v": pa.array(d["v"], pa.float64()),
        "emb": pa.array(d["emb"], pa.list_(pa.float32(), DIM)),
    })


class Model:
    """id -> (cat, v, emb): the table's rows (ids unique by construction)."""

    def __init__(self):
        self.rows = {}

    def add(self, d):
        for i, c, v, e in zip(d["id"], d["cat"], d["v"], d["emb"]):
            self.rows[i] = (c, v, tuple(np.float32(x) for x in e))

    def where(self, pred):
        return [i for i, r in self.rows.items() if pred(i, r)]

    def canon(self):
        return sorted((i, r[0], r[1]) for i, r in self.rows.items())


def _canon(t):
    t = t.select(["id", "cat", "v"])
    return sorted(zip(t["id"].to_pylist(), t["cat"].to_pylist(), t["v"].to_pylist()))


# Filters in our SQL and as model predicates.
FILTERS = [
    ("cat = 'c1'", lambda i, r: r[0] == "c1"),
    ("cat IN ('c2', 'c4') AND v > 500", lambda i, r: r[0] in ("c2", "c4") and r[1] > 500),
    ("id < 40", lambda i, r: i < 40),
    ("v <= 100 OR cat = 'c5'", lambda i, r: r[1] <= 100 or r[0] == "c5"),
]


def _check(t, model, step, indexed):
    want = model.canon()
    got = _canon(t.to_arrow())
    assert got == want, f"step {step}: to_arrow differs ({len(got)} rows, model {len(want)})"
    assert len(t) == len(want), f"step {step}: len {len(t)} != {len(want)}"
    for sql, pred in FILTERS:
        exp = sorted(x for x in want if pred(x[0], model.rows[x[0]]))
        assert _canon(t.to_arrow(filter=sql)) == exp, f"step {step}: filter {sql!r} (indexed={indexed})"
    st = StaticTable.from_metadata(t.metadata_location)
    assert _canon(st.scan().to_arrow()) == want, f"step {step}: pyiceberg reads other rows"
    if want:
        q = np.full(DIM, 0.5, dtype=np.float32)
        ids = np.array([i for i in model.rows])
        vecs = np.array([model.rows[i][2] for i in ids], dtype=np.float32)
        dist = np.sqrt(((vecs - q) ** 2).sum(1))
        k = min(5, len(ids))
        r = t.search("emb", q, k=k, columns=["id"], exact=True)
        assert r.num_rows == k, f"step {step}: search returned {r.num_rows} of {k}"
        got_d = np.sort(r["distance"].to_numpy())
        np.testing.assert_allclose(got_d, np.sort(dist)[:k], rtol=1e-5, atol=1e-6,
                                   err_msg=f"step {step}: exact search after deletes")
        assert set(r["id"].to_pylist()) <= set(ids.tolist()), f"step {step}: a deleted row found"


@pytest.mark.parametrize("fv,mode", [(2, "merge-on-read"), (3, "merge-on-read"),
                                     (2, "copy-on-write"), (3, "copy-on-write")])
def test_random_histories(tmp_path, fv, mode):
    for seed in range(3):
        rng = random.Random(seed * 31 + fv * 7 + len(mode))
        path = tmp_path / f"t{seed}"
        props = {f"write.{op}.mode": mode for op in ("delete", "update", "merge")}
        t = hdb.Table(path, format_version=fv, properties=props)
        model = Model()
        next_id = 0
        indexed = False
        for step in range(14):
            op = rng.choice(["append", "append", "delete", "update", "upsert", "merge", "index"])
            if step < 2:
                op = "append"
            if op == "append":
                n = rng.randint(20, 120)
                d = _rows(rng, range(next_id, next_id + n))
                next_id += n
                t.write(_table(d))
                model.add(d)
            elif op == "delete":
                sql, pred = rng.choice(FILTERS)
                gone = model.where(pred)
                assert t.delete(sql) == len(gone)
                for i in gone:
                    del model.rows[i]
            elif op == "update":
                sql, pred = rng.choice(FILTERS)
                hit = model.where(pred)
                nv = float(rng.randint(0, 1000))
                assert t.update({"v": nv}, filter=sql) == len(hit)
                for i in hit:
                    c, _, e = model.rows[i]
                    model.rows[i] = (c, nv, e)
            elif op == "upsert":
                old = rng.sample(sorted(model.rows), min(len(model.rows), rng.randint(0, 15)))
                new = list(range(next_id, next_id + rng.randint(0, 10)))
                next_id += len(new)
                d = _rows(rng, old + new)
                r = t.upsert(_table(d), on="id")
                assert (r.rows_updated, r.rows_inserted) == (len(old), len(new))
                model.add(d)
            elif op == "merge":
                old = rng.sample(sorted(model.rows), min(len(model.rows), rng.randint(0, 10)))
                new = list(range(next_id, next_id + rng.randint(0, 5)))
                next_id += len(new)
                d = _rows(rng, old + new)
                lim = rng.randint(0, next_id)
                r = (t.merge(_table(d), on=["id"]).when_matched_update_all()
                     .when_not_matched_insert_all()
                     .when_not_matched_by_source_delete(f"id < {lim}").execute())
                keep = set(old)
                gone = [i for i in model.rows if i not in keep and i < lim]
                assert (r.num_updated_rows, r.num_inserted_rows, r.num_deleted_rows) == \
                    (len(old), len(new), len(gone))
                for i in gone:
                    del model.rows[i]
                model.add(d)
            elif op == "index" and not indexed:
                t.add_index("cat")
                t.add_index("id")
                t.add_index("emb", kind="hnsw")
                indexed = True
            _check(t, model, f"{seed}.{step} {op}", indexed)
        # Every snapshot we made reads the same in pyiceberg as in ours.
        for s in t.snapshots():
            ours = _canon(t.to_arrow(snapshot_id=s.snapshot_id))
            st = StaticTable.from_metadata(t.metadata_location)
            theirs = _canon(st.scan(snapshot_id=s.snapshot_id).to_arrow())
            assert ours == theirs, f"snapshot {s.snapshot_id} ({s.operation}) differs from pyiceberg"


def test_bad_changes_write_nothing(tmp_path):
    t = hdb.Table(tmp_path / "t")
    t.write(_table(_rows(random.Random(1), range(50))))
    before = t.current_snapshot_id
    with pytest.raises(hdb.InvalidArgumentError, match="position"):
        t.delete("id = = 3")
    dup = _table(_rows(random.Random(2), [1, 1, 2]))
    with pytest.raises(hdb.InvalidArgumentError, match="more than once"):
        t.upsert(dup, on="id")
    with pytest.raises(hdb.SchemaError, match="no column 'nope'"):
        t.merge(_table(_rows(random.Random(3), [7])), on="nope").when_not_matched_insert_all() \
            .execute()
    with pytest.raises(hdb.SchemaError, match="no column"):
        t.update({"nope": 1}, filter="id = 1")
    with pytest.raises(hdb.SchemaError):
        t.update({"v": "not a number"}, filter="id = 1")
    assert t.current_snapshot_id == before
    assert len(t) == 50
    assert t.delete("id > 1000") == 0
    assert t.current_snapshot_id == before  # nothing matched: no commit


def test_delete_everything_then_append(tmp_path):
    for fv in (2, 3):
        t = hdb.Table(tmp_path / f"t{fv}", format_version=fv)
        t.write(_table(_rows(random.Random(4), range(30))))
        t.write(_table(_rows(random.Random(5), range(30, 60))))
        assert t.delete() == 60
        assert len(t) == 0 and t.to_arrow().num_rows == 0
        assert t.search("emb", np.zeros(DIM, np.float32), k=3, exact=True).num_rows == 0
        t.write(_table(_rows(random.Random(6), range(60, 70))))
        assert sorted(t.to_arrow()["id"].to_pylist()) == list(range(60, 70))
        st = StaticTable.from_metadata(t.metadata_location)
        assert st.scan().to_arrow().num_rows == 10


def test_reads_after_deletes_all_types(tmp_path):
    """Every column type (NULLs included: bool, ints, floats, strings,
    binary, decimal, date, timestamp, lists, fixed-size lists; our writer
    writes no struct columns yet)
    reads back after sparse and dense deletes exactly as pyarrow's own
    filter of the written table by the model's mask."""
    import datetime as dt
    import decimal

    rng = np.random.default_rng(9)
    n = 5000

    def maybe(vals, p=0.1):
        return [None if rng.random() < p else v for v in vals]

    data = pa.table({
        "id": pa.array(np.arange(n), pa.int64()),
        "b": pa.array(maybe([bool(x) for x in rng.integers(0, 2, n)]), pa.bool_()),
        "i8": pa.array(maybe([int(x) for x in rng.integers(-100, 100, n)]), pa.int8()),
        "i32": pa.array(maybe([int(x) for x in rng.integers(-10**9, 10**9, n)]), pa.int32()),
        "f": pa.array(maybe([float(x) for x in rng.standard_normal(n)]), pa.float32()),
        "s": pa.array(maybe([f"s{int(x)}" * int(x % 4) for x in rng.integers(0, 50, n)]),
                      pa.string()),
        "bin": pa.array(maybe([bytes([int(x) % 256]) * int(x % 5) for x in rng.integers(0, 999, n)]),
                        pa.binary()),
        "dec": pa.array(maybe([decimal.Decimal(int(x)) / 100 for x in rng.integers(0, 10**6, n)]),
                        pa.decimal128(12, 2)),
        "d": pa.array(maybe([dt.date(2020, 1, 1) + dt.timedelta(days=int(x))
                             for x in rng.integers(0, 999, n)]), pa.date32()),
        "ts": pa.array(maybe([int(x) for x in rng.integers(0, 10**15, n)]), pa.timestamp("us")),
        "l": pa.array(maybe([[int(y) for y in rng.integers(0, 9, int(x % 4))]
                             for x in rng.integers(0, 99, n)]), pa.list_(pa.int64())),
        "v": pa.array(maybe([[float(y) for y in rng.standard_normal(3)] for _ in range(n)]),
                      pa.list_(pa.float32(), 3)),
    })
    for fv in (2, 3):
        t = hdb.Table(tmp_path / f"t{fv}", format_version=fv)
        t.write(data)
        alive = np.ones(n, dtype=bool)
        for frac in (0.02, 0.4, 1.4):  # few deleted (batches filtered), then most (row selection)
            gone = rng.choice(n, int(n * frac / 2), replace=False)
            t.delete("id IN (" + ", ".join(str(int(g)) for g in gone) + ")")
            alive[gone] = False
            want = data.filter(pa.array(alive))
            got = t.to_arrow().sort_by("id")
            assert got.num_rows == want.num_rows
            for c in data.schema.names:
                assert got.column(c).combine_chunks().equals(
                    want.column(c).combine_chunks().cast(got.schema.field(c).type)), \
                    f"v{fv}, {frac:.0%} deleted: column {c!r} differs"
