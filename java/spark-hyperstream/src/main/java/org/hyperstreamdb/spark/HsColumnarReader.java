package org.hyperstreamdb.spark;

import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.hyperstreamdb.jni.HsTable;
import org.hyperstreamdb.jni.HsTableCache;
import org.hyperstreamdb.jni.ScanResult;

/**
 * Reads one partition's data files through hs_table_scan_split_rows (at the
 * candidate rows the plan found; the table handle shared per JVM,
 * HsTableCache): each Arrow
 * batch the C scan emits becomes one ColumnarBatch (no copy). An empty
 * projection (count(*)) reads the first column and hands Spark row counts.
 */
final class HsColumnarReader implements PartitionReader<ColumnarBatch> {
  private final BufferAllocator allocator;
  private final ScanResult scan;
  private final ArrowReader reader;
  private final StructType schema;
  private final boolean countOnly;
  private ColumnarBatch batch;
  private long[] metrics = new long[HsMetrics.NAMES.length];
  private boolean closed;
  private long nanos; // in this reader: open, next, close
  private final HsTableCache.Lease lease;

  HsColumnarReader(HsPartition p, StructType schema) {
    long t0 = System.nanoTime();
    this.schema = schema;
    this.countOnly = p.columns.length == 0;
    allocator = HsMemory.child("scan");
    ScanResult s = null;
    // Held until close: the handle stays open while its stream is read.
    HsTableCache.Lease l = HsTableCache.borrow(p.path, p.version);
    try {
      HsTable.ScanRequest r = new HsTable.ScanRequest();
      r.snapshotId = p.snapshotId;
      r.filter = p.filter;
      r.limit = p.limit;
      r.columns = countOnly ? new String[] {p.firstColumn} : p.columns;
      r.splits = p.splits; // paths, and the candidate rows the plan found
      s = l.table().scan(allocator, r);
    } catch (RuntimeException e) {
      l.close();
      allocator.close();
      throw e;
    }
    lease = l;
    scan = s;
    reader = s.reader();
    nanos = System.nanoTime() - t0;
  }

  @Override
  public boolean next() throws IOException {
    long t0 = System.nanoTime();
    try {
      return load();
    } finally {
      nanos += System.nanoTime() - t0;
    }
  }

  private boolean load() throws IOException {
    if (!reader.loadNextBatch()) return false;
    VectorSchemaRoot root = reader.getVectorSchemaRoot();
    int rows = root.getRowCount();
    ColumnVector[] cols = new ColumnVector[countOnly ? 0 : root.getFieldVectors().size()];
    for (int i = 0; i < cols.length; i++) {
      cols[i] = HsTypes.wrap(root.getVector(i), schema.fields()[i].dataType());
    }
    batch = new ColumnarBatch(cols, rows);
    return true;
  }

  @Override
  public ColumnarBatch get() {
    return batch;
  }

  @Override
  public CustomTaskMetric[] currentMetricsValues() {
    if (!closed) {
      metrics = HsMetrics.of(scan.stats());
      metrics[8] = 1;
      metrics[HsMetrics.READ_NS] = nanos;
    }
    return HsMetrics.task(metrics);
  }

  @Override
  public void close() throws IOException {
    if (closed) return;
    long t0 = System.nanoTime();
    metrics = HsMetrics.of(scan.stats());
    metrics[8] = 1;
    closed = true;
    try {
      scan.close();
    } finally {
      lease.close();
      allocator.close();
      metrics[HsMetrics.READ_NS] = nanos + System.nanoTime() - t0;
      HsMetrics.add(metrics);
    }
  }
}
