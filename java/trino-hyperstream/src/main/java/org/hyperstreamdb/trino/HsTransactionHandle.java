package org.hyperstreamdb.trino;

import io.trino.spi.connector.ConnectorTransactionHandle;

/** Reads pin a snapshot in their table handle; a transaction holds nothing. */
public enum HsTransactionHandle implements ConnectorTransactionHandle {
  INSTANCE
}
