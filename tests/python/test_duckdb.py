"""DuckDB interoperability, both directions.

* DuckDB reads our files -- every codec, data page v1 and v2, with and without
  dictionaries, page indexes and checksums, one and many row groups -- and gets
  the input back (after the DuckDB type normalisations documented in
  conftest.duckdb_type).
* DuckDB writes files (many types, every codec it shares with us, Parquet
  format V1 and V2 -- V2 makes DuckDB use DELTA_* and BYTE_STREAM_SPLIT
  encodings) and we read them exactly as DuckDB itself reads them back.
"""

import decimal
import os
import sys

import numpy as np
import pyarrow as pa
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conftest  # noqa: E402

duckdb = pytest.importorskip("duckdb")

N = 5000


def _mixed_table(n=N, seed=7):
    """Deterministic table over the types DuckDB and we share, with nulls, NaN,
    -0.0, +-inf, extremes, empty strings and a low-cardinality column (so the
    dictionary path is taken)."""
    rng = np.random.default_rng(seed)
    nulls = lambda: rng.random(n) < 0.1  # noqa: E731
    f64 = rng.standard_normal(n)
    f64[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, np.finfo(np.float64).max]
    f32 = rng.standard_normal(n).astype(np.float32)
    f32[:4] = [np.nan, -0.0, np.inf, -np.inf]
    i64 = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True)
    i64[:2] = [-(2**63), 2**63 - 1]
    u64 = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
    words = np.array(["", "a", "hello", "wörld", "x" * 40, "🚀"])
    cat = words[rng.integers(0, len(words), n)]
    uniq = np.array([f"row-{i}-{rng.integers(1 << 30)}" for i in range(n)])
    ts = rng.integers(-(4 * 10**15), 4 * 10**15, n)
    days = rng.integers(-(10**6), 10**6, n).astype(np.int32)
    dec = [decimal.Decimal(int(v)).scaleb(-3) for v in rng.integers(-(10**17), 10**17, n)]
    lists = [None if rng.random() < 0.1 else
             [None if rng.random() < 0.1 else int(x) for x in rng.integers(-100, 100, rng.integers(0, 5))]
             for _ in range(n)]
    vecs = rng.standard_normal((n, 4)).astype(np.float32)
    cols = {
        "b": pa.array(rng.random(n) < 0.5, mask=nulls()),
        "i8": pa.array(rng.integers(-128, 127, n, endpoint=True).astype(np.int8), mask=nulls()),
        "i32": pa.array(rng.integers(-(2**31), 2**31 - 1, n, endpoint=True).astype(np.int32)),
        "i64": pa.array(i64, mask=nulls()),
        "u16": pa.array(rng.integers(0, 2**16 - 1, n, endpoint=True).astype(np.uint16)),
        "u64": pa.array(u64, mask=nulls()),
        "f32": pa.array(f32, mask=nulls()),
        "f64": pa.array(f64),
        "cat": pa.array(cat, pa.string(), mask=nulls()),
        "uniq": pa.array(uniq, pa.large_string()),
        "bin": pa.array([s.encode() for s in cat], pa.binary(), mask=nulls()),
        "d": pa.array(days, mask=nulls()).view(pa.date32()),
        "ts": pa.array(ts, mask=nulls()).view(pa.timestamp("us")),
        "tsns": pa.array(ts * 100, mask=nulls()).view(pa.timestamp("ns")),
        "tstz": pa.array(ts // 1000).view(pa.timestamp("ms", "UTC")),
        "t": pa.array(rng.integers(0, 86400 * 10**6, n), mask=nulls()).view(pa.time64("us")),
        "dec": pa.array(dec, pa.decimal128(18, 3), mask=nulls()),
        "dec38": pa.array(dec, pa.decimal128(38, 3)),
        "lst": pa.array(lists, pa.list_(pa.int32())),
        "vec": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), 4),
    }
    schema = pa.schema([pa.field(k, v.type, nullable=(k not in ("i32", "f64", "uniq")))
                        for k, v in cols.items()])
    return pa.Table.from_arrays(list(cols.values()), schema=schema)


@pytest.fixture(scope="module")
def mixed():
    return _mixed_table()


OUR_CASES = [
    pytest.param(dict(compression=c, data_page_version=v, write_page_index=pi, use_dictionary=dic,
                      write_page_checksum=pi), id=f"{c}-v{v}-pi{int(pi)}-dict{int(dic)}")
    for c in ["none", "snappy", "gzip", "zstd", "lz4"]
    for v in ["1.0", "2.0"]
    for pi, dic in [(True, True), (False, False)]
] + [
    pytest.param(dict(row_group_size=700, data_page_size=512), id="many-row-groups-small-pages"),
    pytest.param(dict(use_dictionary=False, column_encoding={
        "i64": "DELTA_BINARY_PACKED", "i32": "DELTA_BINARY_PACKED", "cat": "DELTA_BYTE_ARRAY",
        "uniq": "DELTA_LENGTH_BYTE_ARRAY", "f64": "BYTE_STREAM_SPLIT", "f32": "BYTE_STREAM_SPLIT",
        "ts": "DELTA_BINARY_PACKED"}), id="delta-and-byte-stream-split"),
]


@pytest.mark.parametrize("kw", OUR_CASES)
def test_duckdb_reads_ours(hdb, tmp_path, mixed, kw):
    path = str(tmp_path / "ours.parquet")
    hdb.parquet.write_table(mixed, path, **kw)
    conftest.assert_duckdb_equal(conftest.duckdb_read(path), mixed, what=f"DuckDB reading ours {kw}")


def test_duckdb_pushdown_on_ours(hdb, tmp_path, mixed):
    """DuckDB filters with our statistics and page index; the answer must equal
    filtering the input (wrong min/max would make DuckDB skip matching rows)."""
    path = str(tmp_path / "ours.parquet")
    hdb.parquet.write_table(mixed, path, row_group_size=500, data_page_size=256)
    con = duckdb.connect()
    for where, pred in [
        ("i64 > 0", lambda r: r["i64"] is not None and r["i64"] > 0),
        ("cat = 'hello'", lambda r: r["cat"] == "hello"),
        ("d < DATE '1970-01-01'", lambda r: r["d"] is not None and r["d"] < 0),
        ("u16 BETWEEN 100 AND 2000", lambda r: 100 <= r["u16"] <= 2000),
    ]:
        got = con.execute(f"SELECT count(*) FROM read_parquet(?) WHERE {where}",
                          [path]).fetchall()[0][0]
        rows = mixed.select(["i64", "cat", "d", "u16"]).cast(
            pa.schema([("i64", pa.int64()), ("cat", pa.string()), ("d", pa.int32()),
                       ("u16", pa.uint16())])).to_pylist()
        want = sum(1 for r in rows if pred(r))
        assert got == want, f"DuckDB WHERE {where} on our file: {got} rows, expected {want}"


DUCK_SELECT = """
SELECT
  i::INTEGER                                            AS i32,
  (i * 7919 - 50000)::BIGINT                            AS i64,
  CASE WHEN i % 11 = 0 THEN NULL ELSE ((i % 200) - 100)::TINYINT END AS i8,
  (i % 60000)::USMALLINT                                AS u16,
  (i::UBIGINT * 1000003)                                AS u64,
  CASE WHEN i % 13 = 0 THEN NULL ELSE i / 7.0 END       AS dbl,
  CASE WHEN i % 17 = 0 THEN 'nan'::DOUBLE WHEN i % 19 = 0 THEN -0.0::DOUBLE
       ELSE (i * 0.5)::DOUBLE END                       AS dbl_special,
  (i / 3.0)::FLOAT                                      AS flt,
  CASE WHEN i % 5 = 0 THEN NULL ELSE 'str-' || (i % 37) END AS s_dict,
  md5(i::VARCHAR)                                       AS s_uniq,
  CASE WHEN i % 23 = 0 THEN '' ELSE repeat('x', i % 9) END AS s_empty,
  (i % 2 = 0)                                           AS b,
  DATE '2000-01-01' + (i - 5000)::INTEGER               AS d,
  TIMESTAMP '2020-01-01' + to_microseconds(i * 1234567) AS ts,
  TIMESTAMPTZ '2020-01-01 00:00:00+00' + to_microseconds(i * 7654321) AS tstz,
  TIME '00:00:00' + to_microseconds((i * 987654) % 86400000000) AS t,
  (i * 1.25)::DECIMAL(9, 2)                             AS dec9,
  (i * 1.125)::DECIMAL(18, 3)                           AS dec18,
  (i * 3.14159)::DECIMAL(38, 5)                         AS dec38,
  encode('b' || i::VARCHAR)                             AS blob,
  CASE WHEN i % 7 = 0 THEN NULL ELSE [i, NULL, i + 1][1:(i % 4)] END AS lst,
  {'a': i, 'b': 's' || (i % 3)}                         AS st,
  CASE WHEN i % 9 = 0 THEN NULL ELSE [{'x': i, 'y': NULL}] END AS lst_st
FROM range(0, {n}) r(i)
"""


DUCK_CASES = [
    pytest.param(c, v, rg, id=f"{c}-{v}-rg{rg}")
    for c, v, rg in [
        ("uncompressed", "V1", 122880), ("snappy", "V1", 122880), ("gzip", "V1", 1000),
        ("zstd", "V1", 122880), ("lz4", "V1", 2048), ("snappy", "V2", 122880),
        ("zstd", "V2", 1000), ("uncompressed", "V2", 4096),
    ]
]


@pytest.mark.parametrize("codec,version,row_group_size", DUCK_CASES)
def test_ours_reads_duckdb(hdb, tmp_path, codec, version, row_group_size):
    path = str(tmp_path / "duck.parquet")
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    opts = f"FORMAT parquet, COMPRESSION {codec}, ROW_GROUP_SIZE {row_group_size}"
    if version == "V2":
        opts += ", PARQUET_VERSION V2"
    con.execute(f"COPY ({DUCK_SELECT.replace('{n}', str(N))}) TO '{path}' ({opts})")
    duck = conftest.duckdb_read(path)
    ours = hdb.parquet.read_table(path)
    # DuckDB's own read is the reference; ours may differ only where DuckDB's
    # type system does (zone name of TIMESTAMPTZ, list item names, nullability).
    conftest.assert_duckdb_equal(duck, ours, what=f"ours reading DuckDB {codec} {version}")
