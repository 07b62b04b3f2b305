package org.hyperstreamdb.jni;

import org.apache.arrow.vector.ipc.ArrowReader;

/** A top-k result: its reader (batches in distance order) and the search's counters. */
public final class VectorResult implements AutoCloseable {
  private final ArrowReader reader;
  /** files_planned, files_searched, files_indexed, rows_scored, rows_matched,
   *  rows_returned, files_index_rejected (hs_vector_search_stats). */
  public final long filesPlanned, filesSearched, filesIndexed, rowsScored, rowsMatched,
      rowsReturned, filesIndexRejected;

  VectorResult(ArrowReader reader, long[] v) {
    this.reader = reader;
    filesPlanned = v[0];
    filesSearched = v[1];
    filesIndexed = v[2];
    rowsScored = v[3];
    rowsMatched = v[4];
    rowsReturned = v[5];
    filesIndexRejected = v[6];
  }

  public ArrowReader reader() {
    return reader;
  }

  @Override
  public void close() throws java.io.IOException {
    reader.close();
  }
}
