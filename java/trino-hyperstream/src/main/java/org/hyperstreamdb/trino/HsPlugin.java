package org.hyperstreamdb.trino;

import io.trino.spi.Plugin;
import io.trino.spi.connector.ConnectorFactory;
import java.util.List;
import java.util.Set;

/**
 * The Trino plugin of HyperStreamDB: the connector {@code hyperstream}
 * (HsConnectorFactory) and the global distance functions
 * {@code l2_distance}, {@code cosine_distance}, {@code inner_product}
 * (HsDistanceFunctions), which the connector turns into its vector top-k.
 */
public final class HsPlugin implements Plugin {
  @Override
  public Iterable<ConnectorFactory> getConnectorFactories() {
    return List.of(new HsConnectorFactory());
  }

  @Override
  public Set<Class<?>> getFunctions() {
    return Set.of(HsDistanceFunctions.class);
  }
}
