package org.hyperstreamdb.spark;

import java.util.EnumSet;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.hyperstreamdb.jni.HsTable;

/**
 * One table folder at one snapshot (resolved from the options when the
 * table is made, so every scan of this DataFrame reads the same snapshot).
 * With vector options it is the top-k relation: the projected columns plus
 * a float "distance".
 */
final class HsSparkTable implements SupportsRead {
  final HsOptions opts;
  final long snapshotId;
  private final StructType schema;

  HsSparkTable(HsOptions opts) {
    this.opts = opts;
    try (HsTable t = HsTable.open(opts.path);
        BufferAllocator a = HsMemory.child("schema")) {
      snapshotId = t.resolveSnapshot(opts.snapshotId, opts.asOfTimestampMs, opts.ref);
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
    return EnumSet.of(TableCapability.BATCH_READ);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new HsScanBuilder(this);
  }
}
