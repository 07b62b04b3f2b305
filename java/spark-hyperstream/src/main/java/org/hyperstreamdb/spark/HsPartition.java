package org.hyperstreamdb.spark;

import org.apache.spark.sql.connector.read.InputPartition;
import org.hyperstreamdb.jni.Split;

/**
 * What one task reads: data files of one snapshot (with the candidate rows the
 * plan found for them), projection, filter, limit.
 */
final class HsPartition implements InputPartition {
  private static final long serialVersionUID = 1L;

  final String path;
  final Split[] splits;
  final long snapshotId;
  final String[] columns; // the table columns Spark asked for (may be empty)
  final String filter;
  final long limit;
  final String firstColumn; // what a count(*) (no columns) reads
  final String version; // the metadata the plan read (HsTableCache)

  HsPartition(String path, Split[] splits, long snapshotId, String[] columns, String filter,
      long limit, String firstColumn, String version) {
    this.firstColumn = firstColumn;
    this.version = version;
    this.path = path;
    this.splits = splits;
    this.snapshotId = snapshotId;
    this.columns = columns;
    this.filter = filter;
    this.limit = limit;
  }
}
