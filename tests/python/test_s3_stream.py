"""The index stream (src/table/stream.c): per metadata version of a table on
S3, `<metadata file>.hsis` packs what a cold query reads after the metadata
(manifest list, manifests, registry, data and index footers, small index
files) so that chain is one GET, fetched in the same wave as the search's
freshness LIST. It may only change the requests, never an answer: a cold
process answers the same with the stream, without it (deleted), with a
damaged one and with a stale one (another version's), and recall@10 of the
HNSW search against numpy's exact top-10 holds cold and warm.
"""
import json
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

import hyperstreamdb as hdb
from test_s3_tables import BUCKET, s3  # noqa: F401 (the fixture)

DIM = 16

# A cold process: argv = uri, options, queries; prints [ids per query cold,
# ids per query again (warm), io_stats after the first query, io_stats of
# the warm repeats].
_COLD = """
import json, sys
import numpy as np
import hyperstreamdb as hdb
uri, opts, qs = sys.argv[1], json.loads(sys.argv[2]), np.array(json.loads(sys.argv[3]), np.float32)
t = hdb.Table(uri, storage_options=opts)
cold, first = [], None
for q in qs:
    cold.append(t.search("emb", q, k=10).column("id").to_pylist())
    if first is None:
        first = hdb.io_stats(reset=True)
hdb.io_stats(reset=True)
warm = [t.search("emb", q, k=10).column("id").to_pylist() for q in qs]
print(json.dumps([cold, warm, first, hdb.io_stats()]))
"""


def _fs(s3):  # noqa: F811
    from pyarrow import fs as pafs
    o = s3["options"]
    return pafs.S3FileSystem(endpoint_override=s3["endpoint"], scheme="http",
                             access_key=o["aws_access_key_id"],
                             secret_key=o["aws_secret_access_key"], region="us-east-1")


def _cold(uri, opts, qs):
    out = subprocess.run([sys.executable, "-c", _COLD, uri, json.dumps(opts),
                          json.dumps(qs.tolist())], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _recall(got, want):
    return np.mean([len(set(g) & set(w)) / len(w) for g, w in zip(got, want)])


@pytest.fixture(scope="module")
def table(s3):  # noqa: F811
    uri = f"s3://{BUCKET}/stream/t"
    rng = np.random.default_rng(21)
    t = hdb.Table(uri, storage_options=s3["options"])
    parts, n = [], 1500
    for i in range(3):
        parts.append(pa.table({
            "id": pa.array(np.arange(i * n, (i + 1) * n), pa.int64()),
            "g": pa.array(rng.integers(0, 100, n), pa.int32()),
            "emb": pa.FixedSizeListArray.from_arrays(
                pa.array(rng.normal(size=n * DIM).astype(np.float32)), DIM)}))
        t.write(parts[-1])
    t.add_index("g", "bitmap")
    t.add_index("emb", "hnsw")
    allv = np.concatenate([p["emb"].combine_chunks().values.to_numpy().reshape(-1, DIM)
                           for p in parts])
    ids = np.concatenate([p["id"].to_numpy() for p in parts])
    qs = rng.normal(size=(8, DIM)).astype(np.float32)
    exact = [ids[np.argsort(((allv - q) ** 2).sum(1), kind="stable")[:10]].tolist() for q in qs]
    meta = t.metadata_location
    key = meta.split("://", 1)[1] + ".hsis"
    return {"uri": uri, "t": t, "qs": qs, "exact": exact, "stream": key}


def test_stream_written_and_loaded_cold(s3, table):  # noqa: F811
    fs = _fs(s3)
    info = fs.get_file_info(table["stream"])
    assert info.size > 0, table["stream"]  # the current version's stream exists
    cold, warm, first, again = _cold(table["uri"], s3["options"], table["qs"])
    st = first["index_streams"]
    assert st["loaded"] == 1 and st["refused"] == 0 and st["missing"] == 0, st
    assert st["segments"] > 0 and st["bytes"] == info.size, (st, info.size)
    # Recall@10 against the exact top-10 (numpy), cold and warm, and the
    # warm answers are the cold ones.
    assert _recall(cold, table["exact"]) >= 0.95, _recall(cold, table["exact"])
    assert _recall(warm, table["exact"]) >= 0.95
    assert warm == cold
    # Warm repeats: one freshness LIST each and nothing else.
    assert again["requests"] == again["lists"] == len(table["qs"]), again
    table["cold_ids"] = cold


@pytest.mark.parametrize("how", ["missing", "damaged", "stale"])
def test_stream_missing_damaged_or_stale_changes_no_answer(s3, table, how):  # noqa: F811
    fs = _fs(s3)
    key = table["stream"]
    with fs.open_input_stream(key) as f:
        good = f.read()
    try:
        if how == "missing":
            fs.delete_file(key)
        elif how == "damaged":
            bad = bytearray(good)
            bad[len(bad) // 2] ^= 0x5A
            with fs.open_output_stream(key) as f:
                f.write(bytes(bad))
        else:  # another version's stream under this version's name
            meta_dir = key.rsplit("/", 1)[0]
            from pyarrow import fs as pafs
            others = sorted(i.path for i in fs.get_file_info(pafs.FileSelector(meta_dir))
                            if i.path.endswith(".hsis") and i.path != key)
            assert others, "the index build before the last commit wrote one too"
            fs.copy_file(others[-1], key)
        cold, warm, first, _ = _cold(table["uri"], s3["options"], table["qs"])
        st = first["index_streams"]
        if how == "missing":
            assert st["missing"] == 1 and st["loaded"] == 0, st
        else:
            assert st["refused"] == 1 and st["loaded"] == 0, st
            word = "checksum" if how == "damaged" else "another version"
            assert word in st["last_refusal"], st
        want = table.get("cold_ids") or cold
        assert cold == want and warm == want, how
        assert _recall(cold, table["exact"]) >= 0.95
    finally:
        with fs.open_output_stream(key) as f:
            f.write(good)


def test_orphan_removal_keeps_the_current_stream_only(s3, table):  # noqa: F811
    # The current version's stream is kept; an older version's is a cache
    # no reader asks for: an orphan (the index build and the appends
    # before the last commit wrote them).
    import datetime
    removed = table["t"].remove_orphan_files(older_than=datetime.timedelta(0), dry_run=True,
                                             force=True)
    name = table["stream"].rsplit("/", 1)[1]
    assert not any(r.endswith("/" + name) for r in removed), removed
    assert any(r.endswith(".hsis") for r in removed), removed


def test_quantized_index_cold_on_s3_reads_its_vectors_by_range(s3):  # noqa: F811
    # An IVF-PQ index opens lean on S3 (its float32 section is not read at
    # open; the rows it scores are fetched by range, together): the index
    # stream packs what that open reads, recall@10 against numpy holds
    # cold and warm.
    uri = f"s3://{BUCKET}/stream/pq"
    rng = np.random.default_rng(33)
    dim, n = 64, 4000
    t = hdb.Table(uri, storage_options=s3["options"])
    parts = []
    centres = rng.normal(size=(16, dim)).astype(np.float32)
    for i in range(2):
        x = centres[rng.integers(0, 16, n)] + 0.3 * rng.normal(size=(n, dim)).astype(np.float32)
        parts.append(pa.table({
            "id": pa.array(np.arange(i * n, (i + 1) * n), pa.int64()),
            "emb": pa.FixedSizeListArray.from_arrays(pa.array(x.reshape(-1)), dim)}))
        t.write(parts[-1])
    t.add_index("emb", "ivf_pq")
    allv = np.concatenate([p["emb"].combine_chunks().values.to_numpy().reshape(-1, dim)
                           for p in parts])
    ids = np.arange(2 * n)
    qs = (allv[rng.integers(0, 2 * n, 6)] + 0.05 * rng.normal(size=(6, dim))).astype(np.float32)
    exact = [ids[np.argsort(((allv - q) ** 2).sum(1), kind="stable")[:10]].tolist() for q in qs]
    fs = _fs(s3)
    from pyarrow import fs as pafs
    index_bytes = sum(i.size for i in fs.get_file_info(
        pafs.FileSelector(f"{BUCKET}/stream/pq/index", recursive=True)) if i.size)
    cold, warm, first, _ = _cold(uri, s3["options"], qs)
    assert _recall(cold, exact) >= 0.95, _recall(cold, exact)
    assert warm == cold
    assert first["index_streams"]["loaded"] == 1, first
    # The stream holds what a lean open reads (all but the float32
    # vectors): less than the index files; the search then reads the
    # vectors it scores (the planner scans these small files exactly: a
    # wave per file) and the winners' pages. No other round trip.
    vectors = 2 * n * dim * 4  # the float32 sections
    assert first["index_streams"]["bytes"] < index_bytes - vectors // 2, (first, index_bytes)
    assert first["round_trips"] <= 4 + 2, first
