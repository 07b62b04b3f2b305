package org.hyperstreamdb.spark;

import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomSumMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.hyperstreamdb.jni.ScanStats;

/**
 * What our readers did: per task as Spark custom metrics (the SQL UI, the
 * executed plan's metrics), and summed over this JVM's tasks since the last
 * {@link #reset()} (read by the tests through py4j at local[N]).
 */
public final class HsMetrics {
  static final String[] NAMES = {"filesRead", "filesIndexed", "rowsScanned", "rowsMatched",
      "rowsEliminated", "rowGroupsPruned", "pagesPruned", "rowsReturned", "tasks",
      "vectorFilesSearched", "vectorFilesIndexed", "vectorRowsScored", "readNanos", "planNanos"};
  /** Where the ms go: time in our readers (open, batches, close) and in planning on the driver. */
  static final int READ_NS = 12, PLAN_NS = 13;
  private static final AtomicLongArray TOTAL = new AtomicLongArray(NAMES.length);

  private HsMetrics() {}

  /** Zero the JVM-wide totals. */
  public static void reset() {
    for (int i = 0; i < NAMES.length; i++) TOTAL.set(i, 0);
  }

  /** The JVM-wide totals as "name=value" pairs, in NAMES order. */
  public static java.util.Map<String, Long> totals() {
    java.util.Map<String, Long> m = new java.util.LinkedHashMap<>();
    for (int i = 0; i < NAMES.length; i++) m.put(NAMES[i], TOTAL.get(i));
    return m;
  }

  static long[] of(ScanStats s) {
    return new long[] {s.filesRead, s.filesIndexed, s.rowsScanned, s.rowsMatched,
        s.rowsEliminated, s.rowGroupsPruned, s.pagesPruned, s.rowsReturned, 0, 0, 0, 0, 0, 0};
  }

  /** Add {@code nanos} to one JVM-wide total (the driver's planning). */
  static void addOne(int i, long nanos) {
    TOTAL.addAndGet(i, nanos);
  }

  static void add(long[] v) {
    for (int i = 0; i < NAMES.length; i++) TOTAL.addAndGet(i, v[i]);
  }

  static CustomMetric[] supported() {
    CustomMetric[] m = new CustomMetric[NAMES.length];
    for (int i = 0; i < NAMES.length; i++) m[i] = new Sum(NAMES[i]);
    return m;
  }

  static CustomTaskMetric[] task(long[] v) {
    CustomTaskMetric[] m = new CustomTaskMetric[NAMES.length];
    for (int i = 0; i < NAMES.length; i++) {
      final String n = NAMES[i];
      final long x = v[i];
      m[i] = new CustomTaskMetric() {
        @Override public String name() { return n; }
        @Override public long value() { return x; }
      };
    }
    return m;
  }

  /** A summed metric (needs a public no-argument constructor for Spark: one class per name). */
  public static class Sum extends CustomSumMetric {
    private final String name;

    public Sum() {
      this("metric");
    }

    Sum(String name) {
      this.name = name;
    }

    @Override public String name() { return name; }
    @Override public String description() { return "hyperstream " + name; }
  }
}
