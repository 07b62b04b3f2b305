package org.hyperstreamdb.trino;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.trino.spi.connector.ConnectorSplit;
import java.util.Map;

/**
 * What one page source reads: one data file of the planned snapshot
 * ({@code path}, from hs_table_plan_splits), or, for a pushed vector top-k,
 * the whole snapshot ({@code path == null}: hs_table_vector_search merges
 * every file's candidates in the global order).
 */
public final class HsSplit implements ConnectorSplit {
  private final String path;
  private final long planIndex;
  private final long rows;

  @JsonCreator
  public HsSplit(@JsonProperty("path") String path, @JsonProperty("planIndex") long planIndex,
      @JsonProperty("rows") long rows) {
    this.path = path;
    this.planIndex = planIndex;
    this.rows = rows;
  }

  @JsonProperty
  public String path() {
    return path;
  }

  @JsonProperty
  public long planIndex() {
    return planIndex;
  }

  /** Live rows of the file (before the filter); -1 when unknown. */
  @JsonProperty
  public long rows() {
    return rows;
  }

  @Override
  public Map<String, String> getSplitInfo() {
    return Map.of("path", path == null ? "(top-k over the snapshot)" : path, "planIndex",
        Long.toString(planIndex));
  }

  @Override
  public long getRetainedSizeInBytes() {
    return 64 + (path == null ? 0 : 2L * path.length());
  }

  @Override
  public String toString() {
    return "HsSplit[" + (path == null ? "top-k" : path) + " #" + planIndex + "]";
  }
}
