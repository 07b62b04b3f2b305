package org.hyperstreamdb.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A vector top-k as a Spark LocalScan: Spark plans its k rows as a local
 * table scan, so handing them over runs no job (no task launch, no partition
 * sent and read back). The search runs once, when Spark plans the query: on
 * the driver itself (at most {@code vector-driver-rows} planned rows: no job
 * at all), or as the one job of the distributed search (HsVectorPlan). The
 * rows are the search's, in its order.
 */
final class HsLocalVectorScan implements LocalScan {
  private final HsScan scan;

  HsLocalVectorScan(HsScan scan) {
    this.scan = scan;
  }

  @Override
  public StructType readSchema() {
    return scan.readSchema();
  }

  @Override
  public String description() {
    return "Local" + scan.description();
  }

  @Override
  public InternalRow[] rows() {
    List<InternalRow> out = new ArrayList<>();
    for (InputPartition p : scan.planInputPartitions()) {
      try (HsVectorReader r = new HsVectorReader((HsVectorPartition) p, scan.readSchema())) {
        while (r.next()) {
          ColumnarBatch b = r.get();
          for (Iterator<InternalRow> it = b.rowIterator(); it.hasNext(); ) {
            out.add(it.next().copy());
          }
        }
      } catch (IOException e) {
        throw new RuntimeException("hyperstream: reading the top-k: " + e, e);
      }
    }
    return out.toArray(new InternalRow[0]);
  }
}
