package org.hyperstreamdb.spark;

import java.io.File;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.util.ArrowUtils;
import org.hyperstreamdb.jni.HsTable;

/**
 * {@code df.write.format("hyperstream").mode("append").save(path)}: a batch
 * append. Tasks write Parquet data files under the table's data/ folder
 * through the C writer (HsDataWriter); the driver commits them all as one
 * append snapshot (hs_table_commit_row_delta, validated against commits
 * since the snapshot the write started from) or, when the job fails, deletes
 * them. A folder without a table is created first with the DataFrame's
 * schema. Partitioned tables are refused by the commit (not written yet).
 */
final class HsWrite implements WriteBuilder, Write, BatchWrite {
  private final HsSparkTable table;
  private final LogicalWriteInfo info;
  private long base = -1;

  HsWrite(HsSparkTable table, LogicalWriteInfo info) {
    this.table = table;
    this.info = info;
  }

  @Override
  public Write build() {
    return this;
  }

  @Override
  public String description() {
    return "HyperStreamAppend[path=" + table.opts.path + "]";
  }

  @Override
  public BatchWrite toBatch() {
    String path = table.opts.path;
    if (table.pending) {
      try (BufferAllocator a = HsMemory.child("create");
          HsTable t = HsTable.create(path,
              ArrowUtils.toArrowSchema(info.schema(), "UTC", true, false), a)) {
        base = t.currentSnapshotId();
      }
    } else {
      try (HsTable t = HsTable.open(path)) {
        base = t.currentSnapshotId();
      }
    }
    return this;
  }

  @Override
  public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo physical) {
    return new HsWriterFactory(table.opts.path, info.queryId());
  }

  /** What one task wrote. */
  static final class Files implements WriterCommitMessage, Serializable {
    private static final long serialVersionUID = 1L;
    final String[] paths;
    final long rows;

    Files(String[] paths, long rows) {
      this.paths = paths;
      this.rows = rows;
    }
  }

  private static List<String> files(WriterCommitMessage[] messages) {
    List<String> out = new ArrayList<>();
    for (WriterCommitMessage m : messages) {
      if (m instanceof Files) {
        for (String p : ((Files) m).paths) out.add(p);
      }
    }
    return out;
  }

  @Override
  public void commit(WriterCommitMessage[] messages) {
    List<String> fs = files(messages);
    if (fs.isEmpty()) return;
    try (HsTable t = HsTable.open(table.opts.path)) {
      t.commitAppend(fs.toArray(new String[0]), base);
    } catch (RuntimeException e) {
      for (String p : fs) new File(p).delete();
      throw e;
    }
  }

  @Override
  public void abort(WriterCommitMessage[] messages) {
    for (String p : files(messages)) new File(p).delete();
  }
}
