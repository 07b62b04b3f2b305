package org.hyperstreamdb.spark;

import java.io.Serializable;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;

/**
 * The data source's options, parsed once on the driver (keys are case-insensitive):
 * {@code path} (the table folder, required); at most one of {@code snapshot-id},
 * {@code as-of-timestamp} (ms since the epoch or ISO-8601) and {@code tag} /
 * {@code branch}; vector search: {@code vector_column}, {@code query_vector}
 * ("[0.1, 0.2]" or "0.1,0.2"), {@code k} (default 10), {@code metric},
 * {@code filter} (SQL WHERE text: the search's pre-filter), {@code ef_search},
 * {@code nprobe}, {@code exact}; tasks: {@code files-per-task} (files per task,
 * a distributed top-k's too; unset: by work, see HsScan, and for a top-k
 * min(files, Spark's default parallelism) tasks, see HsVectorPlan),
 * {@code rows-per-task} (candidate rows packed into one task, default
 * 1,000,000); {@code vector-driver-rows} (a top-k over at most this many
 * planned rows runs on the driver, no Spark job for the search; default
 * 2,000,000; 0: always distributed, one job); {@code local-scan} (default
 * true: a top-k's k rows are a LocalScan, no job to hand them over; false:
 * they go through one task). The task options may also come per scan, as the
 * reader's options of a catalog table ({@code spark.read.option(...).table(...)}:
 * {@link #withScanOptions}).
 */
public final class HsOptions implements Serializable {
  private static final long serialVersionUID = 1L;

  final String path;
  final Long snapshotId;
  final Long asOfTimestampMs;
  final String ref;
  final String vectorColumn;
  final float[] queryVector;
  final long k;
  final String metric;
  final String filter;
  final int efSearch, nprobe;
  final boolean exact;
  final int filesPerTask; // 0: by work (HsScan)
  final long rowsPerTask;
  final long vectorDriverRows;
  final boolean localScan;
  private final java.util.HashMap<String, String> given; // lower-case keys

  /** Options a scan may set over its table's (the task shape, not what is read). */
  private static final java.util.List<String> SCAN_KEYS =
      java.util.List.of("files-per-task", "rows-per-task", "vector-driver-rows", "local-scan");

  HsOptions(Map<String, String> raw) {
    java.util.HashMap<String, String> o = new java.util.HashMap<>();
    raw.forEach((key, v) -> o.put(key.toLowerCase(Locale.ROOT), v));
    given = o;
    path = o.get("path");
    if (path == null || path.isEmpty()) {
      throw new IllegalArgumentException(
          "hyperstream: option 'path' (the table folder) is required: "
              + "spark.read.format(\"hyperstream\").load(\"/path/to/table\")");
    }
    snapshotId = longOpt(o, "snapshot-id");
    asOfTimestampMs = timeOpt(o, "as-of-timestamp");
    String tag = o.get("tag"), branch = o.get("branch");
    if (tag != null && branch != null) {
      throw new IllegalArgumentException("hyperstream: give 'tag' or 'branch', not both");
    }
    ref = tag != null ? tag : branch;
    vectorColumn = o.get("vector_column");
    queryVector = o.containsKey("query_vector") ? floats(o.get("query_vector")) : null;
    if ((vectorColumn == null) != (queryVector == null)) {
      throw new IllegalArgumentException(
          "hyperstream: vector search needs both 'vector_column' and 'query_vector'");
    }
    Long kk = longOpt(o, "k");
    k = kk != null ? kk : 10;
    if (k < 1) throw new IllegalArgumentException("hyperstream: option 'k' must be >= 1, got " + k);
    metric = o.get("metric");
    filter = o.get("filter");
    Long ef = longOpt(o, "ef_search"), np = longOpt(o, "nprobe"), fpt = longOpt(o, "files-per-task");
    efSearch = ef != null ? ef.intValue() : 0;
    nprobe = np != null ? np.intValue() : 0;
    exact = Boolean.parseBoolean(o.getOrDefault("exact", "false"));
    filesPerTask = fpt != null ? Math.max(1, fpt.intValue()) : 0;
    Long rpt = longOpt(o, "rows-per-task"), vdr = longOpt(o, "vector-driver-rows");
    rowsPerTask = rpt != null ? Math.max(1, rpt) : 1_000_000L;
    vectorDriverRows = vdr != null ? Math.max(0, vdr) : 2_000_000L;
    localScan = Boolean.parseBoolean(o.getOrDefault("local-scan", "true"));
    if (!isVector() && (filter != null || o.containsKey("k") || metric != null)) {
      throw new IllegalArgumentException("hyperstream: options 'filter', 'k' and 'metric' belong "
          + "to a vector search (set 'vector_column' and 'query_vector'); filter a scan with "
          + ".where(...)");
    }
  }

  /**
   * These options with a scan's task options ({@code files-per-task},
   * {@code rows-per-task}, {@code vector-driver-rows}, {@code local-scan})
   * over them; this object when the scan changes none. Other keys are ignored.
   */
  HsOptions withScanOptions(Map<String, String> scan) {
    Map<String, String> o = new java.util.HashMap<>(given);
    boolean changed = false;
    for (Map.Entry<String, String> e : scan.entrySet()) {
      String key = e.getKey().toLowerCase(Locale.ROOT);
      if (SCAN_KEYS.contains(key) && !e.getValue().equals(given.get(key))) {
        o.put(key, e.getValue());
        changed = true;
      }
    }
    return changed ? new HsOptions(o) : this;
  }

  boolean isVector() {
    return vectorColumn != null;
  }

  private static Long longOpt(Map<String, String> o, String key) {
    String v = o.get(key);
    if (v == null) return null;
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("hyperstream: option '" + key + "' = '" + v
          + "' is not an integer");
    }
  }

  private static Long timeOpt(Map<String, String> o, String key) {
    String v = o.get(key);
    if (v == null) return null;
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      try {
        return OffsetDateTime.parse(v.trim()).toInstant().toEpochMilli();
      } catch (DateTimeParseException e2) {
        try {
          return Instant.parse(v.trim()).toEpochMilli();
        } catch (DateTimeParseException e3) {
          throw new IllegalArgumentException("hyperstream: option '" + key + "' = '" + v
              + "' is neither milliseconds since the epoch nor an ISO-8601 time");
        }
      }
    }
  }

  static float[] floats(String s) {
    String t = s.trim();
    if (t.startsWith("[") && t.endsWith("]")) t = t.substring(1, t.length() - 1);
    if (t.trim().isEmpty()) {
      throw new IllegalArgumentException("hyperstream: option 'query_vector' is empty");
    }
    String[] parts = t.split(",");
    float[] q = new float[parts.length];
    for (int i = 0; i < parts.length; i++) {
      try {
        q[i] = Float.parseFloat(parts[i].trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("hyperstream: option 'query_vector': component " + i
            + " '" + parts[i].trim() + "' is not a number");
      }
    }
    return q;
  }
}
