package org.hyperstreamdb.spark;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.hyperstreamdb.jni.HsTable;
import org.hyperstreamdb.jni.ParquetWriter;

/**
 * One task's rows as one Parquet data file: rows go into Arrow vectors of
 * the table's schema through Spark's own ArrowWriter (fixed-size-list
 * vector columns are filled as lists and re-laid as fixed lists, each row's
 * length checked against the dimension), and every BATCH_ROWS rows the batch
 * is handed to the C writer, which keeps the table's field ids.
 */
final class HsDataWriter implements DataWriter<InternalRow> {
  private static final int BATCH_ROWS = 65536;

  private final BufferAllocator allocator = HsMemory.child("write");
  private final Schema tableSchema;
  private final VectorSchemaRoot root; // lists where the table has fixed lists
  private final ArrowWriter writer;
  private final List<FixedSizeListVector> fixed = new ArrayList<>();
  private final ParquetWriter out;
  private long rows, inBatch;

  HsDataWriter(String path, String queryId, int partitionId, long taskId) {
    try (HsTable t = HsTable.open(path)) {
      tableSchema = t.tableSchema(allocator);
    } catch (RuntimeException e) {
      allocator.close();
      throw e;
    }
    List<Field> fs = new ArrayList<>();
    for (Field f : tableSchema.getFields()) fs.add(asList(f));
    root = VectorSchemaRoot.create(new Schema(fs), allocator);
    writer = ArrowWriter.create(root);
    for (int i = 0; i < tableSchema.getFields().size(); i++) {
      Field f = tableSchema.getFields().get(i);
      fixed.add(f.getType() instanceof ArrowType.FixedSizeList
          ? (FixedSizeListVector) f.createVector(allocator) : null);
    }
    String name = String.format("%05d-%d-%s.parquet", partitionId, taskId, UUID.randomUUID());
    out = new ParquetWriter(new File(new File(path, "data"), name).getPath(), tableSchema,
        allocator);
  }

  /** {@code f} with fixed-size lists (top level) as lists: what ArrowWriter fills. */
  private static Field asList(Field f) {
    if (!(f.getType() instanceof ArrowType.FixedSizeList)) return f;
    FieldType t = new FieldType(f.isNullable(), ArrowType.List.INSTANCE, null, f.getMetadata());
    return new Field(f.getName(), t, f.getChildren());
  }

  @Override
  public void write(InternalRow row) throws IOException {
    writer.write(row);
    rows++;
    if (++inBatch == BATCH_ROWS) flush();
  }

  private void flush() {
    if (inBatch == 0) return;
    writer.finish();
    int n = root.getRowCount();
    List<FieldVector> cols = new ArrayList<>();
    for (int c = 0; c < fixed.size(); c++) {
      FieldVector v = root.getVector(c);
      cols.add(fixed.get(c) != null ? relay((ListVector) v, fixed.get(c), n) : v);
    }
    VectorSchemaRoot batch = new VectorSchemaRoot(cols);
    batch.setRowCount(n);
    out.write(batch);
    for (FixedSizeListVector f : fixed) {
      if (f != null) f.clear();
    }
    writer.reset();
    inBatch = 0;
  }

  /** The list column {@code src} as the fixed-size-list column {@code dst}. */
  private static FixedSizeListVector relay(ListVector src, FixedSizeListVector dst, int n) {
    int w = dst.getListSize();
    dst.setInitialCapacity(n);
    dst.allocateNew();
    FieldVector from = src.getDataVector(), to = dst.getDataVector();
    for (int i = 0; i < n; i++) {
      if (src.isNull(i)) {
        dst.setNull(i);
        continue;
      }
      int start = src.getElementStartIndex(i), len = src.getElementEndIndex(i) - start;
      if (len != w) {
        throw new IllegalArgumentException("hyperstream: column '" + dst.getName()
            + "' holds vectors of dimension " + w + "; a row has " + len + " values");
      }
      int at = dst.startNewValue(i);
      for (int j = 0; j < w; j++) to.copyFromSafe(start + j, at + j, from);
    }
    to.setValueCount(n * w);
    dst.setValueCount(n);
    return dst;
  }

  @Override
  public WriterCommitMessage commit() throws IOException {
    flush();
    out.close();
    String[] paths = rows > 0 ? new String[] {out.path()} : new String[0];
    if (rows == 0) new File(out.path()).delete();
    return new HsWrite.Files(paths, rows);
  }

  @Override
  public void abort() throws IOException {
    out.abort();
  }

  @Override
  public void close() throws IOException {
    try {
      out.abort(); // no-op after a commit
      root.close();
      for (FixedSizeListVector f : fixed) {
        if (f != null) f.close();
      }
    } finally {
      allocator.close();
    }
  }
}
