package org.hyperstreamdb.trino;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.trino.spi.connector.ConnectorInsertTableHandle;
import io.trino.spi.connector.ConnectorOutputTableHandle;
import io.trino.spi.connector.SchemaTableName;
import java.util.List;

/**
 * An INSERT (or the writing part of a CREATE TABLE AS) in progress: the
 * table folder, the snapshot it started from (the commit is validated
 * against commits since; -1 for the table CREATE TABLE AS just made), and
 * the columns the page sinks receive, in table order.
 */
public final class HsInsertHandle
    implements ConnectorInsertTableHandle, ConnectorOutputTableHandle {
  private final SchemaTableName name;
  private final String path;
  private final long baseSnapshotId;
  private final List<HsColumnHandle> columns;

  @JsonCreator
  public HsInsertHandle(@JsonProperty("name") SchemaTableName name,
      @JsonProperty("path") String path, @JsonProperty("baseSnapshotId") long baseSnapshotId,
      @JsonProperty("columns") List<HsColumnHandle> columns) {
    this.name = name;
    this.path = path;
    this.baseSnapshotId = baseSnapshotId;
    this.columns = columns;
  }

  @JsonProperty
  public SchemaTableName name() {
    return name;
  }

  @JsonProperty
  public String path() {
    return path;
  }

  @JsonProperty
  public long baseSnapshotId() {
    return baseSnapshotId;
  }

  @JsonProperty
  public List<HsColumnHandle> columns() {
    return columns;
  }
}
