package org.hyperstreamdb.trino;

import io.trino.spi.StandardErrorCode;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorInsertTableHandle;
import io.trino.spi.connector.ConnectorOutputTableHandle;
import io.trino.spi.connector.ConnectorPageSink;
import io.trino.spi.connector.ConnectorPageSinkId;
import io.trino.spi.connector.ConnectorPageSinkProvider;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTransactionHandle;

/** A page sink per INSERT writer task (HsPageSink); CREATE TABLE AS is not supported. */
final class HsPageSinkProvider implements ConnectorPageSinkProvider {
  @Override
  public ConnectorPageSink createPageSink(ConnectorTransactionHandle tx, ConnectorSession session,
      ConnectorOutputTableHandle output, ConnectorPageSinkId id) {
    throw new TrinoException(StandardErrorCode.NOT_SUPPORTED,
        "hyperstream: CREATE TABLE is not supported (create tables with the Python API)");
  }

  @Override
  public ConnectorPageSink createPageSink(ConnectorTransactionHandle tx, ConnectorSession session,
      ConnectorInsertTableHandle insert, ConnectorPageSinkId id) {
    return new HsPageSink((HsInsertHandle) insert);
  }
}
