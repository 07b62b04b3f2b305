package org.hyperstreamdb.spark;

import java.io.File;
import java.util.EnumSet;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.hyperstreamdb.jni.HsTable;
import org.hyperstreamdb.jni.HsTableCache;

/**
 * One table folder at one snapshot (resolved from the options when the
 * table is made, so every scan of this DataFrame reads the same snapshot).
 * With vector options it is the top-k relation: the projected columns plus
 * a float "distance".
 */
final class HsSparkTable implements SupportsRead, SupportsWrite {
  final HsOptions opts;
  final long snapshotId;
  /** The metadata file read when the DataFrame was made (HsTableCache's key); null: pending. */
  final String version;
  /** No table in the folder yet: a write creates it with {@code schema}. */
  final boolean pending;
  private final StructType schema;

  /** {@code base} read with other task options (same snapshot, version and schema). */
  private HsSparkTable(HsSparkTable base, HsOptions opts) {
    this.opts = opts;
    this.snapshotId = base.snapshotId;
    this.version = base.version;
    this.pending = base.pending;
    this.schema = base.schema;
  }

  /** {@code external}: the schema Spark offers (a DataFrame's, on writes), or null. */
  HsSparkTable(HsOptions opts, StructType external) {
    this.opts = opts;
    if (external != null && !new File(opts.path, "metadata").isDirectory()) {
      pending = true;
      snapshotId = -1;
      version = null;
      schema = external;
      return;
    }
    pending = false;
    // The handle goes to the pool (HsTableCache) for this version's planning and tasks.
    try (HsTableCache.Lease l = HsTableCache.adopt(HsTable.open(opts.path));
        BufferAllocator a = HsMemory.child("schema")) {
      HsTable t = l.table();
      snapshotId = t.resolveSnapshot(opts.snapshotId, opts.asOfTimestampMs, opts.ref);
      version = t.metadataLocation();
      Schema s = t.schema(a, snapshotId, null);
      StructType st = HsTypes.toSpark(s, opts.path);
      if (opts.isVector()) {
        st = st.add(new StructField("distance", DataTypes.FloatType, false, Metadata.empty()));
      }
      schema = st;
    }
  }

  @Override
  public String name() {
    return "hyperstream:" + opts.path + (snapshotId >= 0 ? "@" + snapshotId : "");
  }

  @Override
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    if (pending) {
      throw new IllegalArgumentException("hyperstream: no table at " + opts.path);
    }
    // A catalog table's reader options (spark.read.option(...).table(...))
    // may set the scan's task shape: HsOptions.withScanOptions.
    HsOptions o = opts.withScanOptions(options);
    return new HsScanBuilder(o == opts ? this : new HsSparkTable(this, o));
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    if (opts.isVector() || opts.snapshotId != null || opts.asOfTimestampMs != null
        || opts.ref != null) {
      throw new IllegalArgumentException("hyperstream: writes append to the current snapshot; "
          + "vector and time-travel options are for reads");
    }
    return new HsWrite(this, info);
  }
}
