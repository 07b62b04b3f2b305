package org.hyperstreamdb.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.hyperstreamdb.jni.HsPlanCache;
import org.hyperstreamdb.jni.Split;
import org.hyperstreamdb.jni.SplitGroups;

/**
 * A planned scan: the splits of the table's snapshot under the pushed
 * filter (planned once per table version and filter, on the driver:
 * HsPlanCache), grouped into tasks by SplitGroups. Vector search: see HsVectorPlan.
 */
final class HsScan implements Scan, Batch, SupportsReportStatistics {
  private final HsSparkTable table;
  private final StructType required;
  private final String filterSql;
  private final long limit;
  private final VectorSpec vector; // null: a plain scan
  private List<Split> splits;
  private InputPartition[] parts; // planned once: Spark may ask again (plan copies, AQE)

  HsScan(HsSparkTable table, StructType required, String filterSql, long limit,
      VectorSpec vector) {
    this.table = table;
    this.vector = vector;
    this.required = required;
    this.filterSql = filterSql;
    this.limit = limit;
  }

  @Override
  public StructType readSchema() {
    return required;
  }

  @Override
  public String description() {
    HsOptions o = table.opts;
    StringBuilder sb = new StringBuilder("HyperStreamScan[path=").append(o.path)
        .append(", snapshot=").append(table.snapshotId);
    if (vector != null) {
      sb.append(", ").append(vector);
    } else {
      sb.append(", filter=").append(filterSql).append(", limit=").append(limit);
    }
    sb.append(", columns=").append(String.join(",", required.fieldNames()));
    if (splits != null) sb.append(", splits=").append(splits.size());
    return sb.append("]").toString();
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  /**
   * From the plan (no data read): live rows and bytes of the files the filter
   * keeps (an upper bound under a filter); a top-k: k rows.
   */
  @Override
  public Statistics estimateStatistics() {
    long rows = 0, bytes = 0;
    for (Split s : splits()) {
      rows += s.rowsCandidate() >= 0 ? s.rowsCandidate() : s.recordCount() - s.rowsDeleted();
      bytes += s.fileSizeInBytes();
    }
    if (vector != null) rows = Math.min(rows, vector.k);
    if (limit >= 0) rows = Math.min(rows, limit);
    final long r = rows, b = vector != null ? Math.min(bytes, rows * 1024L) : bytes;
    return new Statistics() {
      @Override public java.util.OptionalLong sizeInBytes() { return java.util.OptionalLong.of(b); }
      @Override public java.util.OptionalLong numRows() { return java.util.OptionalLong.of(r); }
    };
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return HsMetrics.supported();
  }

  /**
   * Planned once on the driver: with a filter each file's footer, statistics and
   * scalar indexes are consulted, files without a candidate row left out (no
   * task for them) and the others carry their candidate rows to the task.
   */
  private synchronized List<Split> splits() {
    if (splits == null) {
      if (table.snapshotId < 0) {
        splits = List.of();
      } else {
        long t0 = System.nanoTime();
        // A top-k plans its files without the pre-filter (manifests only): the
        // search applies it, and a small table is searched on the driver anyway.
        // Cached per table version, snapshot and filter (HsPlanCache).
        splits = HsPlanCache.plan(table.opts.path, table.version, table.snapshotId,
            vector != null ? null : filterSql);
        HsMetrics.addOne(HsMetrics.PLAN_NS, System.nanoTime() - t0);
      }
    }
    return splits;
  }

  /** The first column's name (a count(*) reads it), from the read schema. */
  private String firstColumn() {
    StructField[] f = table.schema().fields();
    return f.length > 0 ? f[0].name() : null;
  }

  /** The table columns to read: the projection (without our "distance"). */
  private String[] columns() {
    List<String> c = new ArrayList<>();
    for (StructField f : required.fields()) {
      if (!(table.opts.isVector() && f.name().equals("distance"))) c.add(f.name());
    }
    return c.toArray(new String[0]);
  }

  @Override
  public synchronized InputPartition[] planInputPartitions() {
    if (parts == null) parts = plan();
    return parts;
  }

  private InputPartition[] plan() {
    List<Split> all = splits();
    if (vector != null) {
      return HsVectorPlan.plan(table, vector, all, columns());
    }
    List<InputPartition> out = new ArrayList<>();
    for (List<Split> group : SplitGroups.group(all, table.opts.filesPerTask, table.opts.rowsPerTask)) {
      out.add(new HsPartition(table.opts.path, group.toArray(new Split[0]), table.snapshotId,
          columns(), filterSql, limit, firstColumn(), table.version));
    }
    return out.toArray(new InputPartition[0]);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new HsReaderFactory(required);
  }
}
