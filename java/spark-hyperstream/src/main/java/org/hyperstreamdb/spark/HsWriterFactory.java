package org.hyperstreamdb.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;

/** Makes one HsDataWriter per task (shipped to the executors). */
final class HsWriterFactory implements DataWriterFactory {
  private static final long serialVersionUID = 1L;
  private final String path;
  private final String queryId;

  HsWriterFactory(String path, String queryId) {
    this.path = path;
    this.queryId = queryId;
  }

  @Override
  public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
    return new HsDataWriter(path, queryId, partitionId, taskId);
  }
}
