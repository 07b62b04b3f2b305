"""A vector column that another engine appended as a variable-length list.

We create a table whose `emb` column is our fixed-size vector
(fixed_size_list<float32, D> in Arrow; Iceberg list<float> with the
`hyperstream.vector.<id>.dimension` property). pyiceberg then appends plain
`pa.list_(pa.float32())` data to it (through a SQL catalog the table is
registered in; its new metadata file is then published as our next
vN.metadata.json, as a Hadoop-catalog writer would leave it). Every read
path must return fixed-size vectors equal to the rows both writers appended
(pyiceberg's own scan is the second oracle), brute-force search included; a
list of another length is an error naming the file, the row and the length.
"""

import os
import random
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import hyperstreamdb as hdb

pytest.importorskip("pyiceberg.catalog.sql")
from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402
from pyiceberg.table import StaticTable  # noqa: E402


def _ours(rng, start, n, dim):
    vecs = []
    for _ in range(n):
        vecs.append(None if rng.random() < 0.15 else [rng.uniform(-1, 1) for _ in range(dim)])
    flat = [x for v in vecs for x in (v if v is not None else [0.0] * dim)]
    mask = pa.array([v is None for v in vecs])
    emb = pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), dim, mask=mask)
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()), "emb": emb}), vecs


def _theirs(rng, start, n, dim, bad_row=None):
    vecs = []
    for i in range(n):
        if rng.random() < 0.15:
            vecs.append(None)
        else:
            d = dim + (1 if i == bad_row else 0)
            vecs.append([rng.uniform(-1, 1) for _ in range(d)])
    t = pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                  "emb": pa.array(vecs, pa.list_(pa.float32()))})
    return t, vecs


def _f32(v):
    return None if v is None else [float(np.float32(x)) for x in v]


def _publish(root, tbl):
    """pyiceberg's new metadata file becomes our v{N+1} (Hadoop naming)."""
    src = tbl.metadata_location.replace("file://", "")
    mdir = os.path.join(root, "metadata")
    n = max(int(f[1:].split(".")[0]) for f in os.listdir(mdir)
            if f.startswith("v") and f.endswith(".metadata.json"))
    shutil.copy(src, os.path.join(mdir, f"v{n + 1}.metadata.json"))


def _setup(tmp_path, dim, fmt):
    root = str(tmp_path / "t")
    t = hdb.Table(root, format_version=fmt)
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    return root, t, cat


@pytest.mark.parametrize("dim,fmt,seed", [(3, 2, 1), (8, 3, 2), (17, 2, 3)])
def test_pyiceberg_list_appends_read_as_vectors(tmp_path, dim, fmt, seed):
    rng = random.Random(seed)
    root, t, cat = _setup(tmp_path, dim, fmt)
    want = {}
    nid = 0
    tbl = None
    for step in range(5):
        n = rng.randrange(1, 40)
        if step % 2 == 0:
            b, vecs = _ours(rng, nid, n, dim)
            t = hdb.Table(root)
            t.write(b)
        else:
            # registered at our latest version, then its commit becomes our next
            if tbl is not None:
                cat.drop_table("db.t")  # the catalog row only (no purge)
            tbl = cat.register_table("db.t", hdb.Table(root).metadata_location)
            b, vecs = _theirs(rng, nid, n, dim)
            tbl.append(b)
            _publish(root, tbl)
        for i, v in enumerate(vecs):
            want[nid + i] = _f32(v)
        nid += n
        t = hdb.Table(root)
        got = t.to_arrow()
        assert got.schema.field("emb").type == pa.list_(pa.float32(), dim), got.schema
        rows = {r["id"]: r["emb"] for r in got.to_pylist()}
        assert rows == want
        # pyiceberg's own reading of the same metadata agrees
        st = StaticTable.from_metadata(t.metadata_location)
        theirs = {r["id"]: r["emb"] for r in st.scan().to_arrow().to_pylist()}
        assert theirs == want
        assert len(t) == len(want)
        # a filter, a projection, the stream
        f = t.to_arrow(filter=f"id >= {nid // 2}", columns=["emb", "id"])
        assert f.schema.field("emb").type == pa.list_(pa.float32(), dim)
        assert {r["id"]: r["emb"] for r in f.to_pylist()} == \
            {k: v for k, v in want.items() if k >= nid // 2}
        batches = list(t.to_arrow_stream())
        assert all(b.schema.field("emb").type == pa.list_(pa.float32(), dim) for b in batches)
        assert sum(b.num_rows for b in batches) == len(want)
        # exact search over both writers' files against brute force
        q = [rng.uniform(-1, 1) for _ in range(dim)]
        live = [(k, v) for k, v in want.items() if v is not None]
        k = min(7, len(live))
        res = t.search("emb", q, k=7, exact=True)
        qa = np.array(q, np.float32)
        d = sorted(float(np.linalg.norm(np.array(v, np.float32) - qa)) for _, v in live)[:k]
        assert res.num_rows == k
        assert np.allclose(sorted(res["distance"].to_pylist()), d, rtol=1e-5, atol=1e-6)
        for r in res.to_pylist():
            assert r["emb"] == want[r["id"]]


def test_wrong_length_named(tmp_path):
    dim = 4
    rng = random.Random(9)
    root, t, cat = _setup(tmp_path, dim, 2)
    b, _ = _ours(rng, 0, 10, dim)
    t.write(b)
    tbl = cat.register_table("db.t", t.metadata_location)
    bad, vecs = _theirs(random.Random(4), 100, 30, dim, bad_row=17)
    tbl.append(bad)
    _publish(root, tbl)
    t = hdb.Table(root)
    data_files = [f.file.file_path for f in StaticTable.from_metadata(t.metadata_location)
                  .scan().plan_files()]
    theirs = [p for p in data_files if p not in
              {f.file.file_path for f in StaticTable.from_metadata(
                  os.path.join(root, "metadata", "v2.metadata.json")).scan().plan_files()}]
    assert len(theirs) == 1
    for whole, read in [(True, lambda: t.to_arrow()), (False, lambda: t.to_arrow(filter="id > 100")),
                        (True, lambda: list(t.to_arrow_stream())),
                        (False, lambda: t.search("emb", [0.0] * dim, k=100, exact=True))]:
        with pytest.raises(hdb.HyperStreamError) as e:
            read()
        msg = str(e.value)
        assert os.path.basename(theirs[0].replace("file://", "")) in msg, msg
        assert "list of 5 floats" in msg and "dimension 4" in msg, msg
        if whole:
            assert "row 17 " in msg, msg


def test_hnsw_over_both_writers_files(tmp_path):
    """A vector index builds over our files and pyiceberg's list files alike;
    indexed search (recall, not exact) returns fixed-size vectors."""
    dim = 8
    rng = np.random.default_rng(5)
    root, t, cat = _setup(tmp_path, dim, 2)
    a = rng.standard_normal((300, dim)).astype(np.float32)
    t.write(pa.table({"id": pa.array(range(300), pa.int64()),
                      "emb": pa.FixedSizeListArray.from_arrays(pa.array(a.ravel()), dim)}))
    tbl = cat.register_table("db.t", t.metadata_location)
    b = rng.standard_normal((300, dim)).astype(np.float32)
    tbl.append(pa.table({"id": pa.array(range(300, 600), pa.int64()),
                         "emb": pa.array(list(b), pa.list_(pa.float32()))}))
    _publish(root, tbl)
    t = hdb.Table(root)
    t.add_index("emb", "hnsw")
    assert [(i.column, i.files_indexed, i.files_total) for i in t.indexes()] == [("emb", 2, 2)]
    allv = np.vstack([a, b])
    hits = 0
    for _ in range(20):
        q = rng.standard_normal(dim).astype(np.float32)
        r = t.search("emb", q, k=10)
        assert r.schema.field("emb").type == pa.list_(pa.float32(), dim)
        for i, v in zip(r["id"].to_pylist(), r["emb"].to_pylist()):
            assert np.array_equal(np.array(v, np.float32), allv[i])
        truth = set(np.argsort(np.linalg.norm(allv - q, axis=1))[:10].tolist())
        hits += len(truth & set(r["id"].to_pylist()))
    assert hits / 200 >= 0.9, hits
