"""Decimal columns read back exactly as pyarrow reads them, for every
precision and physical layout (src/parquet/assemble.c: FIXED_LEN_BYTE_ARRAY
of up to 8 bytes has a one-loop sign extension; wider ones, INT32/INT64 and
BYTE_ARRAY keep the general conversion): random values at the limits of
each precision, negatives, zeros and nulls, written by pyarrow (fixed bytes
or integers) and by us, read whole and through row selections."""
import decimal
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hyperstreamdb import parquet as hpq


def _values(rng, precision, scale, n):
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.05:
            out.append(None)
            continue
        if r < 0.15:
            digits = 10 ** precision - 1  # the extremes
        elif r < 0.2:
            digits = 0
        else:
            digits = rng.randrange(10 ** rng.randint(1, precision))
        sign = -1 if rng.random() < 0.5 else 1
        out.append(decimal.Decimal(sign * digits).scaleb(-scale, decimal.Context(prec=60)))
    return out


@pytest.mark.parametrize("precision", [1, 2, 4, 7, 9, 10, 15, 18, 19, 25, 38])
def test_decimals_match_pyarrow(tmp_path, precision):
    rng = random.Random(precision)
    scale = rng.randint(0, precision)
    n = 3000
    t = pa.table({"d": pa.array(_values(rng, precision, scale, n),
                                pa.decimal128(precision, scale))})
    rows = sorted(rng.sample(range(n), 40))
    for i, how in enumerate(["fixed", "int", "ours"]):
        path = str(tmp_path / f"{how}.parquet")
        if how == "ours":
            hpq.write_table(t, path)
        else:
            pq.write_table(t, path, store_decimal_as_integer=(how == "int"),
                           use_dictionary=rng.random() < 0.5, data_page_size=4096)
        ref = pq.read_table(path)
        assert ref.equals(t), how
        assert hpq.read_table(path).equals(t), (how, precision)
        assert hpq.read_table(path, rows=rows).equals(t.take(pa.array(rows))), (how, precision)
