package org.hyperstreamdb.trino;

import io.trino.spi.connector.Connector;
import io.trino.spi.connector.ConnectorMetadata;
import io.trino.spi.connector.ConnectorPageSinkProvider;
import io.trino.spi.connector.ConnectorPageSourceProvider;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorSplitManager;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.transaction.IsolationLevel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * One hyperstream catalog: every table folder under the root; reads, INSERT,
 * DELETE, CREATE TABLE [AS]. A transaction holds the folders its CREATE
 * TABLE AS made: committed, they stay; rolled back (the query failed), they
 * are removed.
 */
final class HsConnector implements Connector {
  private final Path root;
  private final Map<UUID, List<Path>> created = new ConcurrentHashMap<>();
  private final HsSplitManager splits = new HsSplitManager();
  private final HsPageSourceProvider pages = new HsPageSourceProvider();
  private final HsPageSinkProvider sinks = new HsPageSinkProvider();

  HsConnector(Path root) {
    this.root = root;
  }

  @Override
  public ConnectorTransactionHandle beginTransaction(IsolationLevel level, boolean readOnly,
      boolean autoCommit) {
    return new HsTransactionHandle(UUID.randomUUID());
  }

  @Override
  public ConnectorMetadata getMetadata(ConnectorSession session, ConnectorTransactionHandle tx) {
    UUID id = ((HsTransactionHandle) tx).id();
    return new HsMetadata(root, p -> created.computeIfAbsent(id,
        k -> Collections.synchronizedList(new ArrayList<>())).add(p));
  }

  @Override
  public void commit(ConnectorTransactionHandle tx) {
    created.remove(((HsTransactionHandle) tx).id());
  }

  @Override
  public void rollback(ConnectorTransactionHandle tx) {
    List<Path> made = created.remove(((HsTransactionHandle) tx).id());
    if (made == null) return;
    for (Path p : made) {
      try (Stream<Path> all = Files.walk(p)) {
        for (Path f : all.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(f);
      } catch (IOException e) {
        // best effort: a folder without metadata/ is no table
      }
    }
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
