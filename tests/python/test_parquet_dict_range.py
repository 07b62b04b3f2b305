"""Dictionary indices past the dictionary are an error, not a read outside it.

The range check of fixed-width dictionary pages rides along the gather
(src/parquet/page_read.c); these files, written by pyarrow and then damaged in
their index bytes, must fail with the index named, for each value width, and
the undamaged file must read as pyarrow reads it."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hyperstreamdb as hdb

TYPES = [pa.int8(), pa.int32(), pa.int64(), pa.binary(3)]


def _table(typ, n, rng):
    if typ == pa.binary(3):
        vals = [b"abc", b"def", b"ghi"]
        return pa.table({"v": pa.array([vals[i] for i in rng.integers(0, 3, n)], typ)})
    return pa.table({"v": pa.array(rng.integers(0, 3, n), typ)})


@pytest.mark.parametrize("typ", TYPES, ids=str)
def test_dictionary_index_out_of_range(tmp_path, typ):
    rng = np.random.default_rng(5)
    t = _table(typ, 4000, rng)
    schema = pa.schema([pa.field("v", typ, nullable=False)])
    t = t.cast(schema)
    path = tmp_path / "d.parquet"
    pq.write_table(t, path, compression="none", use_dictionary=True, write_statistics=False)
    got = hdb.parquet.read_table(str(path))
    assert got.column("v").to_pylist() == pq.read_table(path).column("v").to_pylist()
    md = pq.ParquetFile(path).metadata.row_group(0).column(0)
    assert "RLE_DICTIONARY" in md.encodings
    end = md.data_page_offset + md.total_compressed_size - (
        md.data_page_offset - (md.dictionary_page_offset or md.data_page_offset))
    raw = bytearray(path.read_bytes())
    # Width-2 indices of a 3-entry dictionary: 0xFF packs index 3 four times.
    at = int(rng.integers(end - 200, end - 20))
    raw[at:at + 8] = b"\xff" * 8
    path.write_bytes(bytes(raw))
    with pytest.raises(hdb.HyperStreamError, match=r"dictionary index 3 out of range"):
        hdb.parquet.read_table(str(path))
