"""Our compaction read by Spark (issue 14 item 4, "Spark as the oracle").

Tables we write in Spark's Hadoop-catalog warehouse with small appends,
deletes (v2 position deletes, v3 deletion vectors), a partition spec change
and a sort order, then ``Table.compact`` (and a filter-limited one): at every
snapshot Spark's rows equal ours (``spark_util.assert_same_at_every_snapshot``:
snapshot ids, rows, filters, exact vector search, pyiceberg, TIMESTAMP AS OF),
Spark sees the replace snapshot with no delete files left, and Spark's own
DELETE on the compacted table is read back by us. Spark start-up 6-20 s, then
a few seconds a case.
"""

import numpy as np
import pytest

from spark_util import CATALOG, assert_same_at_every_snapshot
from test_spark_writes import FILTERS, VECTOR, gen


def _same(spark, hdb, ident, path):
    return assert_same_at_every_snapshot(spark, hdb, ident, path, filters=FILTERS, vector=VECTOR)


@pytest.mark.parametrize("fmt,partitioned", [(2, False), (3, False), (2, True), (3, True)])
def test_our_compaction_read_by_spark(spark, spark_table, hdb, fmt, partitioned):
    ident, path = spark_table
    rng = np.random.default_rng(140 + fmt * 2 + partitioned)
    t = hdb.Table(path, format_version=fmt)
    start = 0
    for i in range(6):
        n = int(rng.integers(20, 120))
        t.write(gen(rng, range(start, start + n), str(i)))
        start += n
        if partitioned and i == 2:
            t.set_partition_spec(["cat"])
        if partitioned and i == 4:
            t.set_sort_order(["score"], ascending=[False])
    assert t.delete("cat = 'a' AND id < 300") > 0
    assert t.delete("name LIKE 'n1%'") > 0
    if partitioned:
        r = t.compact(filter="cat = 'b'")
        assert r.snapshot_id is not None, r
    lineage = None
    if fmt == 3:
        a = t.to_arrow(columns=["id", "_row_id", "_last_updated_sequence_number"])
        lineage = sorted(zip(*[a[c].to_pylist() for c in a.column_names]))
    r = t.compact()
    assert r.snapshot_id is not None and r.rows == len(t), r
    ops = spark.sql(f"SELECT operation FROM {CATALOG}.{ident}.snapshots ORDER BY committed_at"
                    ).collect()
    assert ops[-1][0] == "replace", ops
    left = spark.sql(f"SELECT count(*) FROM {CATALOG}.{ident}.delete_files").collect()[0][0]
    assert left == 0, f"{ident}: {left} delete files left after compaction"
    _same(spark, hdb, ident, path)
    if fmt == 3:  # row lineage survives the compaction, as Spark reads it
        lin = "id, _row_id, _last_updated_sequence_number"
        theirs = sorted(tuple(r) for r in spark.sql(
            f"SELECT {lin} FROM {CATALOG}.{ident}").collect())
        a = t.to_arrow(columns=["id", "_row_id", "_last_updated_sequence_number"])
        ours = sorted(zip(*[a[c].to_pylist() for c in a.column_names]))
        assert ours == theirs and ours == lineage, f"{ident}: row lineage differs"
    # Spark changes the compacted table; we read it as Spark does.
    spark.sql(f"DELETE FROM {CATALOG}.{ident} WHERE id < 40")
    _same(spark, hdb, ident, path)
