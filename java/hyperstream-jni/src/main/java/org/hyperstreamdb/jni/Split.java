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

  public Split(String path, long snapshotId, long planIndex, long fileSizeInBytes,
      long recordCount, long rowsDeleted) {
    this.path = path;
    this.snapshotId = snapshotId;
    this.planIndex = planIndex;
    this.fileSizeInBytes = fileSizeInBytes;
    this.recordCount = recordCount;
    this.rowsDeleted = rowsDeleted;
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

  @Override
  public String toString() {
    return "Split[" + path + " #" + planIndex + ", " + recordCount + " rows, " + rowsDeleted
        + " deleted]";
  }
}
