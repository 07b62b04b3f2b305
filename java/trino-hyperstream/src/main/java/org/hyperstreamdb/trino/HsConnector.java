package org.hyperstreamdb.trino;

import io.trino.spi.connector.Connector;
import io.trino.spi.connector.ConnectorMetadata;
import io.trino.spi.connector.ConnectorPageSinkProvider;
import io.trino.spi.connector.ConnectorPageSourceProvider;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorSplitManager;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.transaction.IsolationLevel;
import java.nio.file.Path;

/** One hyperstream catalog: every table folder under the root; reads and INSERT. */
final class HsConnector implements Connector {
  private final HsMetadata metadata;
  private final HsSplitManager splits = new HsSplitManager();
  private final HsPageSourceProvider pages = new HsPageSourceProvider();
  private final HsPageSinkProvider sinks = new HsPageSinkProvider();

  HsConnector(Path root) {
    this.metadata = new HsMetadata(root);
  }

  @Override
  public ConnectorTransactionHandle beginTransaction(IsolationLevel level, boolean readOnly,
      boolean autoCommit) {
    return HsTransactionHandle.INSTANCE;
  }

  @Override
  public ConnectorMetadata getMetadata(ConnectorSession session, ConnectorTransactionHandle tx) {
    return metadata;
  }

  @Override
  public ConnectorSplitManager getSplitManager() {
    return splits;
  }

  @Override
  public ConnectorPageSourceProvider getPageSourceProvider() {
    return pages;
  }

  @Override
  public ConnectorPageSinkProvider getPageSinkProvider() {
    return sinks;
  }
}
