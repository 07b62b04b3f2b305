package org.hyperstreamdb.jni;

import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * A running scan: its Arrow reader and its counters (hs_scan_stats,
 * hs_scan_index_stats, hs_scan_page_stats), which grow while the reader is
 * read. Closing closes the reader and frees the counters.
 */
public final class ScanResult implements AutoCloseable {
  private final ArrowReader reader;
  private long stats;
  private long[] last = new long[17];

  ScanResult(ArrowReader reader, long stats) {
    this.reader = reader;
    this.stats = stats;
  }

  public ArrowReader reader() {
    return reader;
  }

  /** The counters now (after close: as they were at close). */
  public synchronized ScanStats stats() {
    if (stats != 0) last = NativeApi.statsGet(stats);
    return new ScanStats(last);
  }

  @Override
  public synchronized void close() throws java.io.IOException {
    try {
      stats();
      reader.close();
    } finally {
      if (stats != 0) NativeApi.statsFree(stats);
      stats = 0;
    }
  }
}
