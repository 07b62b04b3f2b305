package org.hyperstreamdb.jni;

import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One Parquet data file written by the C writer (hs_parquet_writer): ZSTD,
 * page indexes, the schema's field ids. {@link #close()} finishes the file;
 * {@link #abort()} (or a failed close) removes it. Not thread-safe.
 */
public final class ParquetWriter implements AutoCloseable {
  private final BufferAllocator allocator;
  private final String path;
  private long handle;

  public ParquetWriter(String path, Schema schema, BufferAllocator allocator) {
    this.allocator = allocator;
    this.path = path;
    try (ArrowSchema s = ArrowSchema.allocateNew(allocator)) {
      Data.exportSchema(allocator, schema, null, s);
      handle = NativeApi.writerOpen(path, s.memoryAddress());
    }
  }

  public String path() {
    return path;
  }

  /** Append the root's rows (its vectors must have the writer's schema; borrowed). */
  public void write(VectorSchemaRoot root) {
    if (handle == 0) throw new HyperStreamException(HyperStreamException.INVALID_ARG,
        path + ": the writer is closed");
    try (ArrowArray a = ArrowArray.allocateNew(allocator)) {
      Data.exportVectorSchemaRoot(allocator, root, null, a);
      NativeApi.writerWrite(handle, a.memoryAddress());
    }
  }

  /** Write the footer and close the file. */
  @Override
  public void close() {
    if (handle == 0) return;
    long h = handle;
    handle = 0;
    NativeApi.writerClose(h);
  }

  /** Drop the file. */
  public void abort() {
    if (handle == 0) return;
    long h = handle;
    handle = 0;
    NativeApi.writerAbort(h);
  }
}
