package org.hyperstreamdb.jni;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Planned splits (HsTable.planSplits) kept per JVM, keyed by table uri,
 * metadata version (HsTable.metadataLocation: a commit or a new index is a
 * new version), snapshot and filter text: an engine asks for the plan of one
 * query several times (statistics, then splits) and a repeated query asks
 * again; each answer is the same immutable list. Planning runs through a
 * handle borrowed from HsTableCache. At most {@link #MAX_ENTRIES} plans and
 * {@link #MAX_BYTES} bytes of candidate rows are kept, least recently used
 * dropped first. Owns nothing native.
 */
public final class HsPlanCache {
  public static final int MAX_ENTRIES = 64;
  public static final long MAX_BYTES = 64L << 20;

  private static final LinkedHashMap<String, Entry> PLANS = new LinkedHashMap<>(16, 0.75f, true);
  private static long bytes, plans, hits;

  private record Entry(List<Split> splits, long bytes) {}

  private HsPlanCache() {}

  /** The splits of {@code snapshotId} under {@code filter} (null: none), planned once. */
  public static List<Split> plan(String uri, String version, long snapshotId, String filter) {
    String key = version + "\n" + uri + "\n" + snapshotId + "\n" + (filter == null ? "\0" : filter);
    synchronized (HsPlanCache.class) {
      Entry e = PLANS.get(key);
      if (e != null) {
        hits++;
        return e.splits;
      }
      plans++;
    }
    List<Split> splits; // planned outside the lock: two planners may race, both right
    try (HsTableCache.Lease l = HsTableCache.borrow(uri, version)) {
      splits = l.table().planSplits(snapshotId, filter);
    }
    long size = 64L * splits.size();
    for (Split s : splits) size += s.candidates() == null ? 0 : s.candidates().length;
    synchronized (HsPlanCache.class) {
      Entry old = PLANS.put(key, new Entry(splits, size));
      if (old != null) bytes -= old.bytes;
      bytes += size;
      Iterator<Map.Entry<String, Entry>> it = PLANS.entrySet().iterator();
      while ((PLANS.size() > MAX_ENTRIES || bytes > MAX_BYTES) && it.hasNext()) {
        Entry drop = it.next().getValue();
        if (drop.splits == splits) continue; // keep the one just planned
        bytes -= drop.bytes;
        it.remove();
      }
    }
    return splits;
  }

  /** Forget every plan (tests). */
  public static synchronized void clear() {
    PLANS.clear();
    bytes = 0;
  }

  /** {plans made, plans answered from the cache} since the JVM started. */
  public static synchronized long[] counts() {
    return new long[] {plans, hits};
  }
}
