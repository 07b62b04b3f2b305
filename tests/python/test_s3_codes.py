"""A cold IVF-PQ search on S3 reads only the probed lists' codes (issue 16
item 4; src/index/vector/README.md "IVF-PQ lists"): a lean PQ index with
IVF lists opens partial on an object store, its search range-reads the
codes of the lists it probes, and several files share one re-rank budget.
Checked against the same process with partial opens turned off
(HS_VIDX_PARTIAL=0: every file's codes read whole), against the same table
on local disk (the same rows and distances: the flat-scan rule and the
shared budget do not look at where an index lives) and against numpy's
exact top-10 (recall). Bytes and requests come from hdb.io_stats(); nothing
is timed.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa

import hyperstreamdb as hdb
from test_s3_tables import BUCKET, s3  # noqa: F401 (the fixture)

# One cold process: argv = uri, options, queries; prints the answers (ids,
# distances) and the search's io_stats (the open's excluded).
_COLD = """
import json, sys
import numpy as np
import hyperstreamdb as hdb
uri, opts, qs = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
t = hdb.Table(uri, storage_options=opts)
hdb.io_stats(reset=True)
out = []
for q in qs:
    r = t.search("emb", np.array(q, np.float32), k=10, columns=["id"])
    out.append([r.column("id").to_pylist(), r.column("distance").to_pylist()])
    if len(out) == 1:
        first = hdb.io_stats()
print(json.dumps([out, first]))
"""

DIM, ROWS, FILES = 64, 10_000, 2  # >= 8192 rows a file: IVF lists by default


def _parts(seed=5):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, DIM)).astype(np.float32)
    for f in range(FILES):
        x = centres[rng.integers(0, 40, ROWS)] + 0.3 * rng.normal(size=(ROWS, DIM)).astype(
            np.float32)
        yield pa.table({
            "id": pa.array(np.arange(f * ROWS, (f + 1) * ROWS), pa.int64()),
            "emb": pa.FixedSizeListArray.from_arrays(pa.array(x.reshape(-1)), DIM)})


def _cold(uri, opts, qs, **env):
    out = subprocess.run([sys.executable, "-c", _COLD, uri, json.dumps(opts), json.dumps(qs)],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, **env))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_cold_search_reads_probed_codes_only_and_answers_as_local(s3, tmp_path):  # noqa: F811
    uri = f"s3://{BUCKET}/codes/t"
    remote = hdb.Table(uri, storage_options=s3["options"])
    local = hdb.Table(str(tmp_path / "t"))
    parts = list(_parts())
    for p in parts:
        remote.write(p)
        local.write(p)
    for t in (remote, local):
        # IVF lists of ~sqrt(2 n) rows, the layout a partial open reads by range
        # (hs_vidx_default_partitions_pq; asked for, not the default)
        t.add_index("emb", "ivf_pq", partitions=round((ROWS / 2) ** 0.5))
    allv = np.concatenate([p["emb"].combine_chunks().values.to_numpy().reshape(-1, DIM)
                           for p in parts])
    rng = np.random.default_rng(8)
    qs = (allv[rng.integers(0, len(allv), 8)] + 0.05 * rng.normal(size=(8, DIM))).astype(
        np.float32)
    # The codes' total: n x code size per file (4-d sub-spaces: DIM / 4 bytes a row).
    codes_total = FILES * ROWS * (DIM // 4)
    got, first = _cold(uri, s3["options"], qs.tolist())
    whole, wfirst = _cold(uri, s3["options"], qs.tolist(), HS_VIDX_PARTIAL="0")
    print(f"\n  cold search: {first['bytes_read']} B / {first['requests']} requests / "
          f"{first['round_trips']} RTs; codes read whole: {wfirst['bytes_read']} B / "
          f"{wfirst['requests']} / {wfirst['round_trips']}; codes {codes_total} B")
    # Fewer bytes than the codes alone, and well under what reading them whole costs.
    assert first["bytes_read"] < codes_total, (first, codes_total)
    assert wfirst["bytes_read"] - first["bytes_read"] > codes_total // 2, (first, wfirst)
    # The same rows and distances: partial or whole, S3 or local disk.
    assert got == whole
    for (ids, dist), q in zip(got, qs):
        lr = local.search("emb", q, k=10, columns=["id"])
        assert ids == lr.column("id").to_pylist()
        assert np.allclose(dist, lr.column("distance").to_pylist(), rtol=0, atol=0)
    truth = [np.argsort(((allv - q) ** 2).sum(1), kind="stable")[:10].tolist() for q in qs]
    recall = np.mean([len(set(g[0]) & set(t)) / 10 for g, t in zip(got, truth)])
    assert recall >= 0.95, recall


# One cold process, a filtered search: argv = uri, options, queries, filter;
# prints the answers and the first search's io_stats (the open's excluded).
_COLD_FILTERED = """
import json, sys
import numpy as np
import hyperstreamdb as hdb
uri, opts, qs, flt = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
t = hdb.Table(uri, storage_options=opts)
hdb.io_stats(reset=True)
out = []
for q in qs:
    r = t.search("emb", np.array(q, np.float32), k=10, columns=["id"], filter=flt)
    out.append([r.column("id").to_pylist(), r.column("distance").to_pylist()])
    if len(out) == 1:
        first = hdb.io_stats()
print(json.dumps([out, first]))
"""


def test_cold_hybrid_search_three_round_trips_after_the_metadata(s3, tmp_path):  # noqa: F811
    # Issue 16 item 4: a cold hybrid query (1 % scalar filter + top-10) once
    # the metadata is known: the freshness LIST with the codes of the lists
    # holding the allowed rows (the filter answered from the bitmap index
    # the index stream holds) | the re-ranked rows (one wave) | the winners'
    # pages. Before the filtered PQ scan: every allowed row's float32 vector
    # by its own GET (2 x 100 here, 4 waves of 64) after the LIST.
    uri = f"s3://{BUCKET}/codes/hybrid"
    remote = hdb.Table(uri, storage_options=s3["options"])
    local = hdb.Table(str(tmp_path / "t"))
    rng = np.random.default_rng(21)
    parts = []
    for p in _parts(seed=9):
        p = p.append_column("category", pa.array(rng.integers(0, 100, p.num_rows), pa.int32()))
        parts.append(p)
        remote.write(p)
        local.write(p)
    for t in (remote, local):
        t.add_index("category", "bitmap")
        t.add_index("emb", "ivf_pq", partitions=round((ROWS / 2) ** 0.5))
    allv = np.concatenate([p["emb"].combine_chunks().values.to_numpy().reshape(-1, DIM)
                           for p in parts])
    cats = np.concatenate([p["category"].to_numpy() for p in parts])
    qs = (allv[rng.integers(0, len(allv), 8)] + 0.05 * rng.normal(size=(8, DIM))).astype(
        np.float32)
    flt = "category = 7"
    out = subprocess.run([sys.executable, "-c", _COLD_FILTERED, uri, json.dumps(s3["options"]),
                          json.dumps(qs.tolist()), flt], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    got, first = json.loads(out.stdout.strip().splitlines()[-1])
    allowed = int((cats == 7).sum())
    print(f"\n  cold hybrid search ({allowed} allowed rows): {first['bytes_read']} B / "
          f"{first['requests']} requests / {first['round_trips']} RTs after the metadata")
    # Counted, not timed: three dependent round trips after the metadata,
    # and fewer requests than one per allowed row (the exact scan's).
    assert first["round_trips"] <= 3, first
    assert first["requests"] < allowed // 2, (first, allowed)
    # The same rows and distances as the same table on local disk.
    for (ids, dist), q in zip(got, qs):
        lr = local.search("emb", q, k=10, columns=["id"], filter=flt)
        assert ids == lr.column("id").to_pylist()
        assert np.allclose(dist, lr.column("distance").to_pylist(), rtol=0, atol=0)
    idx = np.nonzero(cats == 7)[0]
    truth = [idx[np.argsort(((allv[idx] - q) ** 2).sum(1), kind="stable")[:10]].tolist()
             for q in qs]
    recall = np.mean([len(set(g[0]) & set(t)) / 10 for g, t in zip(got, truth)])
    assert recall >= 0.95, recall
