package org.hyperstreamdb.spark;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Emits the merged top-k: the columns Spark asked for, by name. */
final class HsVectorReader implements PartitionReader<ColumnarBatch> {
  private final BufferAllocator allocator = HsMemory.child("vector-read");
  private final ArrowStreamReader reader;
  private final StructType schema;
  private ColumnarBatch batch;

  HsVectorReader(HsVectorPartition p, StructType schema) {
    this.schema = schema;
    this.reader = new ArrowStreamReader(new ByteArrayInputStream(p.ipc), allocator);
  }

  @Override
  public boolean next() throws IOException {
    if (!reader.loadNextBatch()) return false;
    VectorSchemaRoot root = reader.getVectorSchemaRoot();
    ColumnVector[] cols = new ColumnVector[schema.fields().length];
    for (int i = 0; i < cols.length; i++) {
      cols[i] = HsTypes.wrap(root.getVector(schema.fields()[i].name()),
          schema.fields()[i].dataType());
    }
    batch = new ColumnarBatch(cols, root.getRowCount());
    return true;
  }

  @Override
  public ColumnarBatch get() {
    return batch;
  }

  @Override
  public void close() throws IOException {
    try {
      reader.close();
    } finally {
      allocator.close();
    }
  }
}
