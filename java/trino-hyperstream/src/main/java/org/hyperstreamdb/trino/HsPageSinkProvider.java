package org.hyperstreamdb.trino;

import io.trino.spi.connector.ConnectorInsertTableHandle;
import io.trino.spi.connector.ConnectorOutputTableHandle;
import io.trino.spi.connector.ConnectorPageSink;
import io.trino.spi.connector.ConnectorPageSinkId;
import io.trino.spi.connector.ConnectorPageSinkProvider;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTransactionHandle;

/** A page sink per INSERT or CREATE TABLE AS writer task (HsPageSink). */
final class HsPageSinkProvider implements ConnectorPageSinkProvider {
  @Override
  public ConnectorPageSink createPageSink(ConnectorTransactionHandle tx, ConnectorSession session,
      ConnectorOutputTableHandle output, ConnectorPageSinkId id) {
    return new HsPageSink((HsInsertHandle) output);
  }

  @Override
  public ConnectorPageSink createPageSink(ConnectorTransactionHandle tx, ConnectorSession session,
      ConnectorInsertTableHandle insert, ConnectorPageSinkId id) {
    return new HsPageSink((HsInsertHandle) insert);
  }
}
