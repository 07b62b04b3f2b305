package org.hyperstreamdb.jni;

import java.util.List;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.CDataDictionaryProvider;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An open table (hs_table): a folder of Parquet files under Iceberg metadata.
 * Engine-neutral: Spark's and Trino's connectors plan with {@link #planSplits}
 * on their coordinator and read each {@link Split} with {@link #scan} or
 * {@link #vectorSearch} on a worker that opened the same table.
 *
 * <p>Methods are synchronized (a handle serves one call at a time); readers it
 * returns keep no reference to it and may outlive it. Close it to free the
 * native handle. Snapshot ids: -1 means the current snapshot.
 */
public final class HsTable implements AutoCloseable {
  private long handle;
  private final String uri;

  private HsTable(long handle, String uri) {
    this.handle = handle;
    this.uri = uri;
  }

  /** Open the table folder at {@code uri} at its latest committed version. */
  public static HsTable open(String uri) {
    return new HsTable(NativeApi.tableOpen(uri), uri);
  }

  /**
   * Create an empty table at {@code uri} (a folder that holds no table) with
   * {@code schema} (field ids are assigned by the Iceberg mapping).
   */
  public static HsTable create(String uri, Schema schema, BufferAllocator allocator) {
    try (ArrowSchema s = ArrowSchema.allocateNew(allocator)) {
      Data.exportSchema(allocator, schema, null, s);
      return new HsTable(NativeApi.tableCreate(uri, s.memoryAddress()), uri);
    }
  }

  /**
   * The current schema as the table stores it: field ids on every field
   * ("PARQUET:field_id"), vectors as fixed-size lists. Data files for
   * {@link #commitAppend} are written with it ({@link ParquetWriter}).
   */
  public synchronized Schema tableSchema(BufferAllocator allocator) {
    try (ArrowSchema s = ArrowSchema.allocateNew(allocator);
        CDataDictionaryProvider dict = new CDataDictionaryProvider()) {
      NativeApi.tableSchema(h(), s.memoryAddress());
      return Data.importSchema(allocator, s, dict);
    }
  }

  /**
   * Commit Parquet files already written under the table's data/ folder as
   * one append snapshot, validated against the commits since
   * {@code baseSnapshotId} (-1: the table had none); returns the new id.
   */
  public synchronized long commitAppend(String[] files, long baseSnapshotId) {
    return NativeApi.commitAppend(h(), files, baseSnapshotId);
  }

  /**
   * Delete the live rows of {@code snapshotId} (the snapshot the delete was
   * planned on; -1: current) matching {@code filter} (SQL WHERE text; null:
   * every row) in one commit (hs_table_change_rows, the table's
   * write.delete.mode); returns the rows deleted (0: nothing committed).
   */
  public synchronized long deleteRows(long snapshotId, String filter) {
    return NativeApi.deleteRows(h(), snapshotId, filter)[1];
  }

  public String uri() {
    return uri;
  }

  private long h() {
    if (handle == 0) throw new HyperStreamException(HyperStreamException.INVALID_ARG,
        uri + ": the table is closed");
    return handle;
  }

  /**
   * The metadata file this handle read (hs_table_metadata_location): names the
   * table version, index registry included (HsTableCache's key).
   */
  public synchronized String metadataLocation() {
    return NativeApi.metadataLocation(h());
  }

  public synchronized long currentSnapshotId() {
    return NativeApi.currentSnapshotId(h());
  }

  /** The snapshot current at {@code timestampMs} (ms since the epoch, UTC). */
  public synchronized long snapshotAt(long timestampMs) {
    return NativeApi.snapshotAt(h(), timestampMs);
  }

  /** The snapshot a tag or branch points at. */
  public synchronized long refSnapshot(String name) {
    return NativeApi.refSnapshot(h(), name);
  }

  /**
   * The snapshot chosen by at most one of an id, a time and a ref (all unset:
   * the current one); -1 when the table has no snapshot.
   */
  public synchronized long resolveSnapshot(Long snapshotId, Long asOfTimestampMs, String ref) {
    int given = (snapshotId != null ? 1 : 0) + (asOfTimestampMs != null ? 1 : 0)
        + (ref != null ? 1 : 0);
    if (given > 1) {
      throw new HyperStreamException(HyperStreamException.INVALID_ARG,
          "give at most one of snapshot-id, as-of-timestamp and tag/branch");
    }
    if (snapshotId != null) return snapshotId;
    if (asOfTimestampMs != null) return snapshotAt(asOfTimestampMs);
    if (ref != null) return refSnapshot(ref);
    return currentSnapshotId();
  }

  /** The read schema of a snapshot projected to {@code columns} (null: all). */
  public synchronized Schema schema(BufferAllocator allocator, long snapshotId, String[] columns) {
    try (ArrowSchema s = ArrowSchema.allocateNew(allocator);
        CDataDictionaryProvider dict = new CDataDictionaryProvider()) {
      NativeApi.schema(h(), snapshotId, columns, s.memoryAddress());
      return Data.importSchema(allocator, s, dict);
    }
  }

  /**
   * The data files a scan of the snapshot with {@code filter} (SQL text, may be
   * null) opens. With a filter each file's footer, statistics and scalar indexes
   * are consulted (no data page is read): files without a candidate row are left
   * out, and each split carries its candidates ({@link Split#candidates()}).
   */
  public synchronized List<Split> planSplits(long snapshotId, String filter) {
    return List.of(NativeApi.planSplits(h(), snapshotId, filter));
  }

  static final long BATCH_ROWS_MIN = Long.getLong("hyperstream.batch_rows_min", 65536L);

  /** A scan request: projection, filter (SQL WHERE text), limit, and the files. */
  public static final class ScanRequest {
    public long snapshotId = -1;
    public String[] columns; // null: every column
    public String filter; // null: every row
    public long limit = -1; // -1: none
    public long batchRows = 0; // 0: the default (65536)
    /**
     * Small batches (row groups, files) merged in C until at least this many
     * rows (hs_scan_options.batch_rows_min): one JNI crossing and Arrow import
     * per merged batch. 0: as the row groups give them. Default: the system
     * property {@code hyperstream.batch_rows_min}, else 65536.
     */
    public long batchRowsMin = BATCH_ROWS_MIN;
    public String[] paths; // null: every data file (the whole scan)
    /**
     * Instead of paths: planned splits (same snapshot and filter), read at their
     * candidate rows where the plan has them (hs_table_scan_split_rows).
     */
    public Split[] splits;
  }

  /**
   * Start a scan. The result's reader streams Arrow batches; its statistics
   * are complete once the reader is exhausted. Close the result.
   */
  public synchronized ScanResult scan(BufferAllocator allocator, ScanRequest r) {
    ArrowArrayStream s = ArrowArrayStream.allocateNew(allocator);
    long stats;
    String[] paths = r.paths;
    byte[][] cand = null;
    long[] counts = null;
    boolean[] exact = null;
    if (r.splits != null) {
      int n = r.splits.length;
      paths = new String[n];
      cand = new byte[n][];
      counts = new long[n];
      exact = new boolean[n];
      for (int i = 0; i < n; i++) {
        paths[i] = r.splits[i].path();
        cand[i] = r.splits[i].candidates();
        counts[i] = r.splits[i].recordCount();
        exact[i] = r.splits[i].candidatesExact();
      }
    }
    try {
      stats = NativeApi.scan(h(), r.snapshotId, r.columns, r.filter, r.limit, r.batchRows,
          r.batchRowsMin, paths, cand, counts, exact, s.memoryAddress());
    } catch (RuntimeException e) {
      s.close();
      throw e;
    }
    ArrowReader reader;
    try {
      reader = Data.importArrayStream(allocator, s);
    } catch (RuntimeException e) {
      NativeApi.statsFree(stats);
      s.close();
      throw e;
    }
    s.close();
    return new ScanResult(reader, stats);
  }

  /** A top-k request (hs_vector_search_options). */
  public static final class VectorRequest {
    public long snapshotId = -1;
    public String column;
    public float[] query;
    public long k = 10;
    public String metric; // null: l2
    public String filter; // null: every row
    public String[] columns; // null: every column (plus "distance")
    public int efSearch, nprobe; // 0: the index's defaults
    public boolean exact;
    public String[] paths; // null: every data file (the whole search)
  }

  /** The top-k rows (projected columns plus float32 "distance", in order). */
  public synchronized VectorResult vectorSearch(BufferAllocator allocator, VectorRequest r) {
    ArrowArrayStream s = ArrowArrayStream.allocateNew(allocator);
    long[] stats;
    try {
      stats = NativeApi.vectorSearch(h(), r.snapshotId, r.column, r.query, r.k, r.metric, r.filter,
          r.columns, r.efSearch, r.nprobe, r.exact, r.paths, s.memoryAddress());
      return new VectorResult(Data.importArrayStream(allocator, s), stats);
    } finally {
      s.close();
    }
  }

  @Override
  public synchronized void close() {
    if (handle != 0) {
      NativeApi.tableClose(handle);
      handle = 0;
    }
  }
}
