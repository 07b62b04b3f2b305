package org.hyperstreamdb.jni;

import java.util.ArrayList;
import java.util.List;

/**
 * Planned splits into engine tasks (Spark input partitions, Trino splits),
 * by work: a file no index narrowed is a task of its own (its rows are the
 * work); files the indexes narrowed to candidate rows are packed, in plan
 * order, into tasks of up to {@code rowsPerTask} candidates, so a selective
 * filter over many files is one task, not one per file.
 */
public final class SplitGroups {
  private SplitGroups() {}

  /** {@code filesPerTask} > 0: that many files per task, in plan order, instead. */
  public static List<List<Split>> group(List<Split> all, int filesPerTask, long rowsPerTask) {
    List<List<Split>> out = new ArrayList<>();
    if (filesPerTask > 0) {
      for (int i = 0; i < all.size(); i += filesPerTask) {
        out.add(all.subList(i, Math.min(all.size(), i + filesPerTask)));
      }
      return out;
    }
    List<Split> packed = new ArrayList<>();
    long rows = 0;
    for (Split s : all) {
      if (s.candidates() == null) {
        out.add(List.of(s));
        continue;
      }
      if (!packed.isEmpty() && rows + s.rowsCandidate() > rowsPerTask) {
        out.add(packed);
        packed = new ArrayList<>();
        rows = 0;
      }
      packed.add(s);
      rows += s.rowsCandidate();
    }
    if (!packed.isEmpty()) out.add(packed);
    return out;
  }
}
