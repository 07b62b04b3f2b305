package org.hyperstreamdb.trino;

import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.ConnectorPageSourceProvider;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.connector.DynamicFilter;
import java.util.ArrayList;
import java.util.List;

/** A page source per split (HsPageSource). */
final class HsPageSourceProvider implements ConnectorPageSourceProvider {
  @Override
  public ConnectorPageSource createPageSource(ConnectorTransactionHandle tx,
      ConnectorSession session, ConnectorSplit split, ConnectorTableHandle table,
      List<ColumnHandle> columns, DynamicFilter dynamicFilter) {
    List<HsColumnHandle> cols = new ArrayList<>();
    for (ColumnHandle c : columns) cols.add((HsColumnHandle) c);
    return new HsPageSource((HsTableHandle) table, (HsSplit) split, cols);
  }
}
