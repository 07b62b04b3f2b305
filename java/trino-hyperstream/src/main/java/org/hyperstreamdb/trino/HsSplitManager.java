package org.hyperstreamdb.trino;

import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorSplitManager;
import io.trino.spi.connector.ConnectorSplitSource;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.connector.Constraint;
import io.trino.spi.connector.DynamicFilter;
import io.trino.spi.connector.FixedSplitSource;
import java.util.ArrayList;
import java.util.List;
import org.hyperstreamdb.jni.Split;
import org.hyperstreamdb.jni.SplitGroups;

/**
 * Splits by work (SplitGroups): the planned snapshot's data files that the
 * pushed filter leaves (hs_table_plan_splits, through HsPlanCache: manifest
 * and column-bound pruning, then each file's scalar indexes; files whose
 * rows are all deleted or that hold no candidate dropped), one split per
 * file no index narrowed, and the files narrowed to candidate rows packed
 * into splits of up to {@link #ROWS_PER_SPLIT} candidates: a 0.1 % filter
 * over 8 files is one split. A pushed global aggregate is one split (of
 * every planned file, none for an empty table). A pushed vector top-k is one split:
 * hs_table_vector_search scores every file (in parallel, through their
 * vector indexes) and merges them in Table.search's order.
 */
final class HsSplitManager implements ConnectorSplitManager {
  /** Candidate rows per packed split (as Spark's rows-per-task). */
  static final long ROWS_PER_SPLIT = 1_000_000;

  @Override
  public ConnectorSplitSource getSplits(ConnectorTransactionHandle tx, ConnectorSession session,
      ConnectorTableHandle table, DynamicFilter dynamicFilter, Constraint constraint) {
    HsTableHandle h = (HsTableHandle) table;
    if (h.aggregates() != null) {
      // One split whatever the plan (applyAggregation checked it packs into
      // one): a global aggregate is one row, even over no rows.
      boolean empty = h.snapshotId() < 0 || h.constraint().isNone();
      return new FixedSplitSource(HsSplit.of(empty ? List.of() : HsMetadata.plan(h)));
    }
    if (h.snapshotId() < 0 || h.constraint().isNone()) return FixedSplitSource.emptySplitSource();
    if (h.topKColumn() != null) return new FixedSplitSource(HsSplit.topK());
    List<ConnectorSplit> out = new ArrayList<>();
    for (List<Split> group : SplitGroups.group(HsMetadata.plan(h), 0, ROWS_PER_SPLIT)) {
      out.add(HsSplit.of(group));
    }
    return new FixedSplitSource(out);
  }
}
