package org.hyperstreamdb.jni;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Opened tables shared by the tasks of one JVM (an executor, or the driver at
 * local[N]), keyed by uri and the metadata version the query was planned at
 * (HsTable.metadataLocation: a new snapshot, and also a new index registry, is
 * a new version): a task borrows that handle instead of opening the table
 * (metadata, then the per-process plan cache) for every task. A handle opened
 * on a miss may be of a later version; it still knows the planned snapshot.
 *
 * <p>Handles are shared (HsTable's methods are synchronized; a scan's stream
 * does not need the handle once started) and refcounted: at most
 * {@link #MAX} idle entries are kept, the least recently used closed once no
 * task holds it. Owns every handle it made.
 */
public final class HsTableCache {
  /** Idle handles kept per JVM. */
  public static final int MAX = 16;

  private static final class Entry {
    final HsTable table;
    int users;
    boolean evicted;

    Entry(HsTable table) {
      this.table = table;
    }
  }

  private static final LinkedHashMap<String, Entry> MAP = new LinkedHashMap<>(16, 0.75f, true);
  private static long opens, hits;

  private HsTableCache() {}

  /** A borrowed handle: close it to hand it back (the table stays open). */
  public static final class Lease implements AutoCloseable {
    private final String key;
    private final Entry entry;
    private boolean closed;

    private Lease(String key, Entry entry) {
      this.key = key;
      this.entry = entry;
    }

    public HsTable table() {
      return entry.table;
    }

    @Override
    public void close() {
      if (closed) return;
      closed = true;
      release(key, entry);
    }
  }

  /**
   * The table at {@code uri} as of metadata {@code version} (the planning side's
   * HsTable.metadataLocation), opened once per JVM.
   */
  public static Lease borrow(String uri, String version) {
    String key = version + "\n" + uri;
    Entry e;
    synchronized (HsTableCache.class) {
      e = MAP.get(key);
      if (e != null) {
        e.users++;
        hits++;
        return new Lease(key, e);
      }
    }
    HsTable t = HsTable.open(uri); // outside the lock: other tables stay available
    List<HsTable> close = new ArrayList<>();
    Lease lease;
    synchronized (HsTableCache.class) {
      opens++;
      Entry had = MAP.get(key);
      if (had != null) { // another task opened it meanwhile
        close.add(t);
        had.users++;
        lease = new Lease(key, had);
      } else {
        e = new Entry(t);
        e.users = 1;
        MAP.put(key, e);
        lease = new Lease(key, e);
        Iterator<Map.Entry<String, Entry>> it = MAP.entrySet().iterator();
        while (MAP.size() > MAX && it.hasNext()) {
          Entry old = it.next().getValue();
          if (old == e) continue;
          it.remove();
          old.evicted = true;
          if (old.users == 0) close.add(old.table);
        }
      }
    }
    for (HsTable c : close) c.close();
    return lease;
  }

  private static void release(String key, Entry e) {
    boolean close;
    synchronized (HsTableCache.class) {
      e.users--;
      close = e.evicted && e.users == 0;
    }
    if (close) e.table.close();
  }

  /** Close every idle handle (tests; a table rewritten in place). */
  public static void clear() {
    List<HsTable> close = new ArrayList<>();
    synchronized (HsTableCache.class) {
      for (Entry e : MAP.values()) {
        e.evicted = true;
        if (e.users == 0) close.add(e.table);
      }
      MAP.clear();
    }
    for (HsTable c : close) c.close();
  }

  /** {opens, hits} since the JVM started: how often a task found its table open. */
  public static synchronized long[] counts() {
    return new long[] {opens, hits};
  }
}
