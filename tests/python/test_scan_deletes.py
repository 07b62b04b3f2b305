"""Full scans of files with deleted rows (issue 14's read path): when at
most 7/8 of a file's rows are deleted, the scan reads whole row groups and
cuts their live rows into batches of at most ``batch_rows``
(src/query/scan.c, hold_deleted / drop_deleted, through
hs_arrow_array_filter); with more deleted, the live rows are the reader's
row selection.

Random delete patterns (none, one, every other row, long runs, random
sparse, all but one, all) over files of several row groups, read with
several batch sizes and limits, must equal pyarrow's own filter of the
written rows by the model's mask, every column type included (NULLs too),
and v3 row lineage (``_row_id``) must stay each row's own.
"""

import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hyperstreamdb as hdb

N = 2000
ROW_GROUP = 700  # rows per row group: cut batches cross row groups and files


def _data(rng, n, base):
    def maybe(vals, p=0.1):
        return [None if rng.random() < p else v for v in vals]

    return pa.table({
        "id": pa.array(np.arange(base, base + n), pa.int64()),
        "b": pa.array(maybe([bool(x) for x in rng.integers(0, 2, n)]), pa.bool_()),
        "i8": pa.array(maybe([int(x) for x in rng.integers(-100, 100, n)]), pa.int8()),
        "i16": pa.array([int(x) for x in rng.integers(-30000, 30000, n)], pa.int16()),
        "i32": pa.array(maybe([int(x) for x in rng.integers(-10**9, 10**9, n)]), pa.int32()),
        "f": pa.array([float(x) for x in rng.standard_normal(n)], pa.float32()),
        "g": pa.array(maybe([float(x) for x in rng.standard_normal(n)]), pa.float64()),
        "s": pa.array(maybe([f"s{int(x)}" * int(x % 4) for x in rng.integers(0, 50, n)]),
                      pa.string()),
        "cat": pa.array([f"cat{int(x):03d}" for x in rng.integers(0, 40, n)], pa.string()),
        "bin": pa.array([bytes([int(x) % 256]) * int(x % 5) for x in rng.integers(0, 999, n)],
                        pa.binary()),
        "dec": pa.array(maybe([decimal.Decimal(int(x)).scaleb(-2)
                               for x in rng.integers(0, 10**6, n)]), pa.decimal128(12, 2)),
        "d": pa.array(maybe([int(x) for x in rng.integers(0, 9999, n)]), pa.int32()).cast(
            pa.date32()),
        "ts": pa.array(maybe([int(x) for x in rng.integers(0, 10**15, n)]), pa.timestamp("us")),
        "l": pa.array(maybe([[int(y) for y in rng.integers(0, 9, int(x % 4))]
                             for x in rng.integers(0, 99, n)]), pa.list_(pa.int64())),
        "v": pa.array([[float(y) for y in rng.standard_normal(3)] for _ in range(n)],
                      pa.list_(pa.float32(), 3)),
    })


def _pattern(rng, name, ids):
    """The ids of `ids` (one file's) that the pattern deletes."""
    n = len(ids)
    if name == "none":
        return ids[:0]
    if name == "one":
        return ids[rng.integers(0, n):][:1]
    if name == "every_other":
        return ids[::2]
    if name == "runs":
        keep = np.zeros(n, dtype=bool)
        at, on = 0, False
        while at < n:
            run = int(rng.integers(1, 400))
            keep[at:at + run] = on
            at += run
            on = not on
        return ids[keep]
    if name == "sparse":
        return ids[rng.random(n) < 0.1]
    if name == "all_but_one":
        return np.delete(ids, rng.integers(0, n))
    return ids  # "all"


PATTERNS = ["none", "one", "every_other", "runs", "sparse", "all_but_one", "all"]


def _check(t, data, alive, fv, what, row_ids=None):
    want = data.filter(pa.array(alive))
    for batch_rows in (0, 7, 333):
        batches = list(t.to_arrow_stream(batch_rows=batch_rows))
        assert all(b.num_rows > 0 for b in batches), what
        if batch_rows:
            assert max((b.num_rows for b in batches), default=0) <= batch_rows, what
        got = pa.Table.from_batches(batches, schema=t.to_arrow_stream().schema)
        assert got.num_rows == want.num_rows, f"{what}, batch_rows={batch_rows}"
        got = got.sort_by("id")
        for c in data.schema.names:
            assert got.column(c).combine_chunks().equals(
                want.column(c).combine_chunks().cast(got.schema.field(c).type)), \
                f"{what}, batch_rows={batch_rows}: column {c!r} differs"
    for limit in (1, 700, 1500):
        got = t.to_arrow(limit=limit)
        assert got.num_rows == min(limit, want.num_rows), what
        assert pc.is_in(got["id"], want["id"]).to_pylist() == [True] * got.num_rows, what
    if want.num_rows:  # exact vector search reads the rows' origins from the scan
        q = np.array([0.3, -0.2, 0.1], dtype=np.float32)
        vecs = np.array(want["v"].to_pylist(), dtype=np.float32)
        dist = np.sqrt(((vecs - q) ** 2).sum(1))
        k = min(40, want.num_rows)
        r = t.search("v", q, k=k, columns=["id"], exact=True)
        order = np.argsort(dist, kind="stable")[:k]
        assert sorted(r["id"].to_pylist()) == sorted(want["id"].to_numpy()[order].tolist()), what
    if row_ids is not None:  # v3 row lineage: each live row keeps its own _row_id
        got = t.to_arrow(columns=["id", "_row_id"]).sort_by("id")
        assert got["id"].to_pylist() == want["id"].to_pylist(), what
        assert got["_row_id"].to_pylist() == [row_ids[i] for i in got["id"].to_pylist()], what


@pytest.mark.parametrize("fv", [2, 3])
def test_scan_after_delete_patterns(tmp_path, fv):
    rng = np.random.default_rng(140 + fv)
    files = 3
    parts = [_data(rng, N, f * N) for f in range(files)]
    data = pa.concat_tables(parts)
    t = hdb.Table(tmp_path / "t", format_version=fv,
                  properties={"write.parquet.row-group-limit": str(ROW_GROUP)})
    for p in parts:
        t.write(p)
    alive = np.ones(N * files, dtype=bool)
    row_ids = None
    if fv == 3:
        before = t.to_arrow(columns=["id", "_row_id"])
        row_ids = dict(zip(before["id"].to_pylist(), before["_row_id"].to_pylist()))
        assert len(set(row_ids.values())) == N * files
    _check(t, data, alive, fv, "no deletes", row_ids)
    # Each round deletes by one pattern per file (files differ), checked
    # after every delete; a later round's deletes land on top of earlier ones.
    for rnd in range(3):
        for f in range(files):
            name = PATTERNS[(rnd * files + f) % (len(PATTERNS) - 1)]  # "all" last
            ids = np.arange(f * N, (f + 1) * N)[alive[f * N:(f + 1) * N]]
            gone = _pattern(rng, name, ids)
            if len(gone) == 0:
                continue
            t.delete("id IN (" + ", ".join(str(int(g)) for g in gone) + ")")
            alive[gone] = False
            _check(t, data, alive, fv, f"v{fv}, round {rnd}, file {f}: {name}", row_ids)
    t.delete(f"id < {N}")  # "all" of the first file
    alive[:N] = False
    _check(t, data, alive, fv, f"v{fv}: first file all deleted", row_ids)
