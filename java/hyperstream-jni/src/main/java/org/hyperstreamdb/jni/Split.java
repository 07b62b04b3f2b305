package org.hyperstreamdb.jni;

import java.io.Serializable;

/**
 * One data file of a planned scan (hs_scan_split): what a task reads.
 * Immutable and serializable, so an engine ships it to its workers.
 */
public final class Split implements Serializable {
  private static final long serialVersionUID = 1L;

  private final String path;
  private final long snapshotId;
  private final long planIndex;
  private final long fileSizeInBytes;
  private final long recordCount;
  private final long rowsDeleted;
  private final long rowsCandidate;
  private final byte[] candidates;
  private final boolean candidatesExact;

  public Split(String path, long snapshotId, long planIndex, long fileSizeInBytes,
      long recordCount, long rowsDeleted) {
    this(path, snapshotId, planIndex, fileSizeInBytes, recordCount, rowsDeleted, -1, null, false);
  }

  public Split(String path, long snapshotId, long planIndex, long fileSizeInBytes,
      long recordCount, long rowsDeleted, long rowsCandidate, byte[] candidates,
      boolean candidatesExact) {
    this.path = path;
    this.snapshotId = snapshotId;
    this.planIndex = planIndex;
    this.fileSizeInBytes = fileSizeInBytes;
    this.recordCount = recordCount;
    this.rowsDeleted = rowsDeleted;
    this.rowsCandidate = rowsCandidate;
    this.candidates = candidates;
    this.candidatesExact = candidatesExact;
  }

  /** The data file (resolved local path, as planned). */
  public String path() { return path; }
  /** The snapshot that was planned: pin every read of the split to it. */
  public long snapshotId() { return snapshotId; }
  /** Place in the snapshot's plan; orders vector-search ties across splits. */
  public long planIndex() { return planIndex; }
  public long fileSizeInBytes() { return fileSizeInBytes; }
  public long recordCount() { return recordCount; }
  /** Rows of the file that the snapshot's delete files remove. */
  public long rowsDeleted() { return rowsDeleted; }
  /**
   * Planned with a filter: how many rows may match (the scalar indexes'
   * candidates, else the live rows of the row groups statistics keep); -1:
   * planned without one.
   */
  public long rowsCandidate() { return rowsCandidate; }
  /**
   * The candidate row positions the indexes left (CRoaring portable bytes, read
   * by the scan instead of the index files), or null when no index narrowed the
   * file. Not copied: do not modify.
   */
  public byte[] candidates() { return candidates; }
  /** Whether {@link #candidates()} are exactly the filter's matches. */
  public boolean candidatesExact() { return candidatesExact; }

  @Override
  public String toString() {
    return "Split[" + path + " #" + planIndex + ", " + recordCount + " rows, " + rowsDeleted
        + " deleted" + (rowsCandidate >= 0 ? ", " + rowsCandidate + " candidates" : "") + "]";
  }
}
