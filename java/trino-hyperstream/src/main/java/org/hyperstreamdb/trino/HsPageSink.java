package org.hyperstreamdb.trino;

import io.airlift.slice.Slice;
import io.airlift.slice.Slices;
import io.trino.spi.Page;
import io.trino.spi.StandardErrorCode;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorPageSink;
import java.io.File;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.hyperstreamdb.jni.HsTable;
import org.hyperstreamdb.jni.HyperStreamException;
import org.hyperstreamdb.jni.ParquetWriter;

/**
 * One writer task's rows as one Parquet data file under the table's data/
 * folder: each page is copied into Arrow vectors of the table's schema
 * (HsArrowFill; field ids kept) and handed to the C writer (ZSTD, page
 * indexes). finish() closes the file and reports its path and row count;
 * HsMetadata.finishInsert commits every task's file in one snapshot.
 */
final class HsPageSink implements ConnectorPageSink {
  private final HsInsertHandle handle;
  private final BufferAllocator allocator = HsMemory.child("sink");
  private final Schema schema;
  private final ParquetWriter out;
  private long rows, bytes;

  HsPageSink(HsInsertHandle handle) {
    this.handle = handle;
    try (HsTable t = HsTable.open(handle.path())) {
      schema = t.tableSchema(allocator);
      String name = String.format("trino-%s.parquet", UUID.randomUUID());
      out = new ParquetWriter(new File(new File(handle.path(), "data"), name).getPath(), schema,
          allocator);
    } catch (HyperStreamException e) {
      allocator.close();
      throw HsErrors.of(e, handle.name() + ": insert");
    }
    if (schema.getFields().size() != handle.columns().size()) {
      out.abort();
      allocator.close();
      throw new TrinoException(StandardErrorCode.TRANSACTION_CONFLICT, "hyperstream: "
          + handle.name() + ": the table's schema changed while the insert was planned");
    }
  }

  @Override
  public CompletableFuture<?> appendPage(Page page) {
    int n = page.getPositionCount();
    List<FieldVector> cols = new ArrayList<>();
    try {
      for (int c = 0; c < schema.getFields().size(); c++) {
        Field f = schema.getFields().get(c);
        cols.add(HsArrowFill.fill(f, handle.columns().get(c).type(), page.getBlock(c), n,
            allocator, handle.name().toString()));
      }
      try (VectorSchemaRoot root = new VectorSchemaRoot(cols)) {
        root.setRowCount(n);
        out.write(root);
        cols.clear();
      }
    } catch (HyperStreamException e) {
      throw HsErrors.of(e, handle.name() + ": insert");
    } finally {
      for (FieldVector v : cols) v.close();
    }
    rows += n;
    bytes += page.getSizeInBytes();
    return NOT_BLOCKED;
  }

  @Override
  public long getCompletedBytes() {
    return bytes;
  }

  @Override
  public long getMemoryUsage() {
    return allocator.getAllocatedMemory();
  }

  @Override
  public CompletableFuture<Collection<Slice>> finish() {
    List<Slice> files = new ArrayList<>();
    try {
      if (rows == 0) {
        out.abort();
      } else {
        out.close();
        files.add(Slices.utf8Slice(out.path()));
      }
    } catch (HyperStreamException e) {
      throw HsErrors.of(e, handle.name() + ": insert");
    } finally {
      allocator.close();
    }
    return CompletableFuture.completedFuture(files);
  }

  @Override
  public void abort() {
    try {
      out.abort();
    } finally {
      allocator.close();
    }
  }
}
