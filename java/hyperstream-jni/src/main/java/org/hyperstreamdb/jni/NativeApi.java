package org.hyperstreamdb.jni;

/**
 * The native methods (java/hyperstream-jni/src/main/c/hs_jni.c), one per C API
 * call. Package-private: {@link HsTable} is the API. Every method throws
 * {@link HyperStreamException} on failure; addresses are of Arrow C Data
 * Interface structs allocated by the caller.
 */
final class NativeApi {
  static {
    NativeLoader.load();
  }

  private NativeApi() {}

  static native long tableOpen(String uri);

  static native void tableClose(long table);

  static native long currentSnapshotId(long table);

  static native String metadataLocation(long table);

  static native long snapshotAt(long table, long timestampMs);

  static native long refSnapshot(long table, String name);

  static native Split[] planSplits(long table, long snapshotId, String filter);

  static native void schema(long table, long snapshotId, String[] columns, long schemaAddr);

  /**
   * Returns the counters' handle (statsGet, statsFree). paths null: every file.
   * candidates (null, or one entry per path: a split's candidate bytes or null)
   * with each path's planned recordCounts and exactness: hs_table_scan_split_rows.
   */
  static native long scan(long table, long snapshotId, String[] columns, String filter, long limit,
      long batchRows, long batchRowsMin, String[] paths, byte[][] candidates,
      long[] recordCounts, boolean[] exact, long streamAddr);

  static native long[] statsGet(long handle);

  static native void statsFree(long handle);

  static native long[] vectorSearch(long table, long snapshotId, String column, float[] query,
      long k, String metric, String filter, String[] columns, int efSearch, int nprobe,
      boolean exact, String[] paths, long streamAddr);

  static native void tableSchema(long table, long schemaAddr);

  static native long tableCreate(String uri, long schemaAddr);

  static native long writerOpen(String path, long schemaAddr);

  static native void writerWrite(long writer, long arrayAddr);

  static native void writerClose(long writer);

  static native void writerAbort(long writer);

  static native long commitAppend(long table, String[] files, long baseSnapshotId);

  /** {new snapshot id (-1: nothing deleted), rows deleted}. */
  static native long[] deleteRows(long table, long snapshotId, String filter);
}
