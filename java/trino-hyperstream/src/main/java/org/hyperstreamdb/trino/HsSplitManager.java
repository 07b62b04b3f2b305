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
import org.hyperstreamdb.jni.HsTable;
import org.hyperstreamdb.jni.HyperStreamException;
import org.hyperstreamdb.jni.Split;

/**
 * One split per data file of the planned snapshot that the pushed filter
 * leaves (hs_table_plan_splits: manifest and column-bound pruning, files
 * whose rows are all deleted dropped). A pushed vector top-k is one split:
 * hs_table_vector_search scores every file (in parallel, through their
 * vector indexes) and merges them in Table.search's order.
 */
final class HsSplitManager implements ConnectorSplitManager {
  @Override
  public ConnectorSplitSource getSplits(ConnectorTransactionHandle tx, ConnectorSession session,
      ConnectorTableHandle table, DynamicFilter dynamicFilter, Constraint constraint) {
    HsTableHandle h = (HsTableHandle) table;
    if (h.snapshotId() < 0 || h.constraint().isNone()) return FixedSplitSource.emptySplitSource();
    if (h.topKColumn() != null) return new FixedSplitSource(new HsSplit(null, -1, -1));
    List<ConnectorSplit> out = new ArrayList<>();
    try (HsTable t = HsTable.open(h.path())) {
      for (Split s : t.planSplits(h.snapshotId(), h.filter())) {
        out.add(new HsSplit(s.path(), s.planIndex(), s.recordCount() - s.rowsDeleted()));
      }
    } catch (HyperStreamException e) {
      throw HsErrors.of(e, h.name() + ": planning splits");
    }
    return new FixedSplitSource(out);
  }
}
