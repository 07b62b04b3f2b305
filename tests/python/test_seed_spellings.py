"""The seed's spellings (issue 14 item 5): a vector query's `select([...,
"score"])` names the distance column `score` (and `distance` stays), and the
distance functions take `context=ctx` as well as `device=`."""

import numpy as np
import pyarrow as pa
import pytest

import hyperstreamdb as hdb


def _table(tmp_path, rng, n=200, dim=8, extra=None):
    vecs = rng.standard_normal((n, dim)).astype(np.float32)
    cols = {"id": pa.array(np.arange(n), pa.int64()),
            "title": pa.array([f"t{i}" for i in range(n)]),
            "emb": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), dim)}
    if extra:
        cols.update(extra)
    t = hdb.Table(tmp_path / "t")
    t.write(pa.table(cols))
    return t, vecs


def test_select_score(tmp_path):
    rng = np.random.default_rng(1)
    t, vecs = _table(tmp_path, rng)
    q = rng.standard_normal(8).astype(np.float32)
    want = np.sort(np.linalg.norm(vecs - q, axis=1))[:10]
    r = (t.query().vector_search(q, column="emb", k=10).select(["title", "score"]).execute())
    assert r.column_names == ["title", "score", "distance"]
    assert np.allclose(r["score"].to_numpy(), want, rtol=1e-5)
    assert r["score"].to_pylist() == r["distance"].to_pylist()
    ids = [int(s[1:]) for s in r["title"].to_pylist()]
    assert np.allclose(np.linalg.norm(vecs[ids] - q, axis=1), want, rtol=1e-5)
    # t.search takes the same columns
    r2 = t.search("emb", q, k=5, columns=["score", "id"], exact=True)
    assert r2.column_names == ["score", "id", "distance"]
    assert np.allclose(r2["score"].to_numpy(), want[:5], rtol=1e-5)
    # a batch of queries
    qs = rng.standard_normal((3, 8)).astype(np.float32)
    res = t.search("emb", qs, k=4, columns=["id", "score"], exact=True)
    for qi, one in zip(qs, res):
        assert one.column_names == ["id", "score", "distance"]
        assert np.allclose(one["score"].to_numpy(),
                           np.sort(np.linalg.norm(vecs - qi, axis=1))[:4], rtol=1e-5)


def test_real_score_column_wins(tmp_path):
    rng = np.random.default_rng(2)
    n = 50
    t, _ = _table(tmp_path, rng, n=n, extra={"score": pa.array(np.arange(n) * 10, pa.int64())})
    q = rng.standard_normal(8).astype(np.float32)
    r = t.search("emb", q, k=5, columns=["id", "score"], exact=True)
    assert r.column_names == ["id", "score", "distance"]
    assert r["score"].to_pylist() == [i * 10 for i in r["id"].to_pylist()]


def test_context_keyword():
    rng = np.random.default_rng(3)
    ctx = hdb.GPUContext.auto_detect()
    q = rng.standard_normal(16).astype(np.float32)
    db = rng.standard_normal((100, 16)).astype(np.float32)
    for name in ["l2_distance_batch", "cosine_distance_batch", "inner_product_distance_batch",
                 "l1_distance_batch", "l2_squared_distance_batch"]:
        f = getattr(hdb, name)
        a = f(q, db, context=ctx)
        assert np.array_equal(a, f(q, db)) and np.array_equal(a, f(q, db, device=ctx))
    want = np.linalg.norm(db - q, axis=1)
    assert np.allclose(hdb.l2_distance_batch(q, db, context=ctx), want, rtol=1e-5)
    assert hdb.cosine_distance(db[0], db[1], context=ctx) == hdb.cosine_distance(db[0], db[1])
    with pytest.raises(hdb.InvalidArgumentError, match="not both"):
        hdb.l2_distance(db[0], db[1], device=ctx, context=hdb.GPUContext("cpu"))
    with pytest.raises(hdb.HyperStreamError):
        hdb.l2_distance(db[0], db[1], context=type("C", (), {"backend": "cuda"})())
