package org.hyperstreamdb.trino;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.trino.spi.connector.ConnectorSplit;
import java.util.List;
import java.util.Map;
import org.hyperstreamdb.jni.Split;

/**
 * What one page source reads: planned data files of the snapshot
 * (hs_table_plan_splits; one file, or several files the indexes narrowed to
 * few candidate rows, packed by SplitGroups), each with the candidate rows
 * the plan found (read at those rows by hs_table_scan_split_rows, no index
 * file opened again); or, for a pushed vector top-k, the whole snapshot
 * ({@code files} empty: hs_table_vector_search merges every file's
 * candidates in the global order).
 */
public final class HsSplit implements ConnectorSplit {
  /** One planned file (jni.Split as JSON: candidates travel as base64). */
  public record File(@JsonProperty("path") String path, @JsonProperty("planIndex") long planIndex,
      @JsonProperty("recordCount") long recordCount, @JsonProperty("rowsDeleted") long rowsDeleted,
      @JsonProperty("rowsCandidate") long rowsCandidate,
      @JsonProperty("candidates") byte[] candidates,
      @JsonProperty("candidatesExact") boolean candidatesExact) {
    @JsonCreator
    public File {}

    static File of(Split s) {
      return new File(s.path(), s.planIndex(), s.recordCount(), s.rowsDeleted(), s.rowsCandidate(),
          s.candidates(), s.candidatesExact());
    }

    Split split(long snapshotId) {
      return new Split(path, snapshotId, planIndex, 0, recordCount, rowsDeleted, rowsCandidate,
          candidates, candidatesExact);
    }
  }

  private final List<File> files;

  @JsonCreator
  public HsSplit(@JsonProperty("files") List<File> files) {
    this.files = List.copyOf(files);
  }

  static HsSplit of(List<Split> group) {
    return new HsSplit(group.stream().map(File::of).toList());
  }

  /** The split of a pushed top-k: the whole snapshot. */
  static HsSplit topK() {
    return new HsSplit(List.of());
  }

  @JsonProperty
  public List<File> files() {
    return files;
  }

  /** Rows the split may return: candidates where planned with a filter, else live rows. */
  long rows() {
    long n = 0;
    for (File f : files) n += f.rowsCandidate >= 0 ? f.rowsCandidate : f.recordCount - f.rowsDeleted;
    return n;
  }

  @Override
  public Map<String, String> getSplitInfo() {
    if (files.isEmpty()) return Map.of("path", "(top-k over the snapshot)");
    return Map.of("path", files.get(0).path + (files.size() > 1 ? " +" + (files.size() - 1) : ""),
        "planIndex", Long.toString(files.get(0).planIndex), "files",
        Integer.toString(files.size()));
  }

  @Override
  public long getRetainedSizeInBytes() {
    long n = 64;
    for (File f : files) {
      n += 96 + 2L * f.path.length() + (f.candidates == null ? 0 : f.candidates.length);
    }
    return n;
  }

  @Override
  public String toString() {
    if (files.isEmpty()) return "HsSplit[top-k]";
    return "HsSplit[" + files.get(0).path + " #" + files.get(0).planIndex
        + (files.size() > 1 ? " +" + (files.size() - 1) + " files" : "") + "]";
  }
}
