package org.hyperstreamdb.jni;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Opened tables reused by the tasks of one JVM (an executor, or the driver at
 * local[N]), keyed by uri and the metadata version the query was planned at
 * (HsTable.metadataLocation: a new snapshot, and also a new index registry, is
 * a new version): a task borrows an idle handle instead of opening the table
 * (metadata, then the per-process plan cache) for every task. A handle opened
 * on a miss may be of a later version; it still knows the planned snapshot.
 *
 * <p>A pool, not one shared handle: a lease has its handle to itself until it
 * is closed (two streams reading through one hs_table at once were measured
 * 1.5-2x slower on a full scan than through two), then the handle waits for
 * the next task. At most {@link #MAX} idle handles are kept per JVM, the
 * least recently returned closed first. Owns every handle it made.
 */
public final class HsTableCache {
  /** Idle handles kept per JVM. */
  public static final int MAX = 16;

  private static final LinkedHashMap<String, ArrayDeque<HsTable>> IDLE =
      new LinkedHashMap<>(16, 0.75f, true);
  private static int idle;
  private static long opens, hits;

  private HsTableCache() {}

  /** A borrowed handle: close it to hand it back (the table stays open). */
  public static final class Lease implements AutoCloseable {
    private final String key;
    private final HsTable table;
    private final boolean fresh; // adopted: not yet used by a scan or search
    private boolean closed;

    private Lease(String key, HsTable table) {
      this(key, table, false);
    }

    private Lease(String key, HsTable table, boolean fresh) {
      this.key = key;
      this.table = table;
      this.fresh = fresh;
    }

    public HsTable table() {
      return table;
    }

    @Override
    public void close() {
      if (closed) return;
      closed = true;
      release(key, table, fresh);
    }
  }

  /**
   * The table at {@code uri} as of metadata {@code version} (the planning side's
   * HsTable.metadataLocation): an idle handle of that version, else a new one.
   */
  public static Lease borrow(String uri, String version) {
    String key = version + "\n" + uri;
    synchronized (HsTableCache.class) {
      ArrayDeque<HsTable> q = IDLE.get(key);
      if (q != null && !q.isEmpty()) {
        idle--;
        hits++;
        HsTable t = q.pop();
        if (q.isEmpty()) IDLE.remove(key);
        return new Lease(key, t);
      }
      opens++;
    }
    return new Lease(key, HsTable.open(uri)); // outside the lock
  }

  /**
   * A lease over a handle the caller just opened (its current version): the
   * table's latest metadata is read once per query (a planner's table lookup)
   * and the handle then serves that version's later borrows from the pool.
   * Takes ownership of {@code t}.
   */
  public static Lease adopt(HsTable t) {
    String key;
    try {
      key = t.metadataLocation() + "\n" + t.uri();
    } catch (RuntimeException e) {
      t.close();
      throw e;
    }
    synchronized (HsTableCache.class) {
      opens++;
    }
    return new Lease(key, t, true);
  }

  /**
   * Back to the pool: on top (the next borrow takes it, warm: a handle keeps
   * per-handle state such as a vector search's prepared plan), or, for an
   * adopted handle only a planner used, at the bottom (taken when the warm
   * ones are leased, closed first; closed at once when the version has an
   * idle handle already).
   */
  private static void release(String key, HsTable t, boolean fresh) {
    List<HsTable> close = new ArrayList<>();
    synchronized (HsTableCache.class) {
      ArrayDeque<HsTable> q = IDLE.computeIfAbsent(key, k -> new ArrayDeque<>());
      if (fresh && !q.isEmpty()) {
        close.add(t); // the version has idle handles already: keep the warm ones
      } else {
        if (fresh) {
          q.addLast(t);
        } else {
          q.push(t);
        }
        idle++;
      }
      Iterator<Map.Entry<String, ArrayDeque<HsTable>>> it = IDLE.entrySet().iterator();
      while (idle > MAX && it.hasNext()) {
        ArrayDeque<HsTable> old = it.next().getValue();
        while (idle > MAX && !old.isEmpty()) {
          close.add(old.pollLast());
          idle--;
        }
        if (old.isEmpty()) it.remove();
      }
    }
    for (HsTable c : close) c.close();
  }

  /** Close every idle handle (tests; a table rewritten in place). */
  public static void clear() {
    List<HsTable> close = new ArrayList<>();
    synchronized (HsTableCache.class) {
      for (ArrayDeque<HsTable> q : IDLE.values()) close.addAll(q);
      IDLE.clear();
      idle = 0;
    }
    for (HsTable c : close) c.close();
  }

  /** {opens, hits} since the JVM started: how often a task found an idle handle. */
  public static synchronized long[] counts() {
    return new long[] {opens, hits};
  }
}
