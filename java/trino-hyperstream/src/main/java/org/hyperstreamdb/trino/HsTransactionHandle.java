package org.hyperstreamdb.trino;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.trino.spi.connector.ConnectorTransactionHandle;
import java.util.UUID;

/**
 * Reads pin a snapshot in their table handle; a transaction only names
 * itself, so that a rolled-back CREATE TABLE AS removes the table it made
 * (HsConnector.rollback).
 */
public record HsTransactionHandle(@JsonProperty("id") UUID id)
    implements ConnectorTransactionHandle {
  @JsonCreator
  public HsTransactionHandle {}
}
