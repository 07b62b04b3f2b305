package org.hyperstreamdb.jni;

/** What a scan did (include/hyperstream.h: hs_scan_stats and friends). */
public final class ScanStats {
  public final long manifestsRead, filesPlanned, filesPruned, filesRead, rowGroupsRead,
      rowGroupsPruned, rowsScanned, rowsMatched, rowsReturned, deleteFiles, rowsDeleted,
      filesIndexed, rowsCandidate, rowsEliminated, filesIndexRejected, pages, pagesPruned;

  ScanStats(long[] v) {
    manifestsRead = v[0];
    filesPlanned = v[1];
    filesPruned = v[2];
    filesRead = v[3];
    rowGroupsRead = v[4];
    rowGroupsPruned = v[5];
    rowsScanned = v[6];
    rowsMatched = v[7];
    rowsReturned = v[8];
    deleteFiles = v[9];
    rowsDeleted = v[10];
    filesIndexed = v[11];
    rowsCandidate = v[12];
    rowsEliminated = v[13];
    filesIndexRejected = v[14];
    pages = v[15];
    pagesPruned = v[16];
  }

  @Override
  public String toString() {
    return "files_read=" + filesRead + " files_indexed=" + filesIndexed + " rows_scanned="
        + rowsScanned + " rows_matched=" + rowsMatched + " rows_eliminated=" + rowsEliminated
        + " row_groups_pruned=" + rowGroupsPruned + " pages_pruned=" + pagesPruned;
  }
}
