package org.hyperstreamdb.trino;

import io.trino.spi.TrinoException;
import io.trino.spi.StandardErrorCode;
import io.trino.spi.connector.Connector;
import io.trino.spi.connector.ConnectorContext;
import io.trino.spi.connector.ConnectorFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Makes a catalog of the connector {@code hyperstream}. Properties:
 * {@code hyperstream.root} (required), a folder whose sub-folders are the
 * schemas and whose sub-sub-folders holding a table are the tables.
 */
public final class HsConnectorFactory implements ConnectorFactory {
  public static final String ROOT = "hyperstream.root";

  @Override
  public String getName() {
    return "hyperstream";
  }

  @Override
  public Connector create(String catalogName, Map<String, String> config, ConnectorContext ctx) {
    for (String k : config.keySet()) {
      if (!k.equals(ROOT)) {
        throw new TrinoException(StandardErrorCode.CONFIGURATION_INVALID,
            "hyperstream catalog '" + catalogName + "': unknown property '" + k + "' (known: "
                + ROOT + ")");
      }
    }
    String root = config.get(ROOT);
    if (root == null || root.isEmpty()) {
      throw new TrinoException(StandardErrorCode.CONFIGURATION_INVALID,
          "hyperstream catalog '" + catalogName + "': set " + ROOT + " to a folder of schemas");
    }
    if (!Files.isDirectory(Path.of(root))) {
      throw new TrinoException(StandardErrorCode.CONFIGURATION_INVALID,
          "hyperstream catalog '" + catalogName + "': " + ROOT + "=" + root
              + " is not a folder");
    }
    return new HsConnector(Path.of(root));
  }
}
