package org.hyperstreamdb.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.Function;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.hyperstreamdb.jni.HsTable;
import org.hyperstreamdb.jni.HsTableCache;
import org.hyperstreamdb.jni.Split;
import org.hyperstreamdb.jni.VectorResult;

/**
 * Vector top-k over a table. Up to {@code vector-driver-rows} planned rows
 * the driver runs the whole search itself (no job: Spark's fixed cost is
 * most of a small search). Beyond, distributed: one Spark job (run while the
 * query is planned) whose tasks each search a run of consecutive data files
 * in plan order (hs_table_vector_search_split: each file's vector index or
 * exact scoring, the pre-filter as allowed rows; the task's top k in
 * (distance, plan index, row) order) and send it back as Arrow IPC; the
 * driver merges them in the global order, keeps min(k, matches) rows and
 * (HsScanBuilder: a LocalScan) hands them to Spark as a local table, so the
 * search is that one job. Runs are contiguous in plan order, so a stable
 * merge by distance, task by task, is hs_table_vector_search's order: the
 * rows equal the Python API's, ties included.
 */
final class HsVectorPlan {
  private HsVectorPlan() {}

  /** One task's search (a run of consecutive files), run on an executor. */
  static final class SplitSearch implements Function<Split[], byte[]>, Serializable {
    private static final long serialVersionUID = 1L;
    final String path;
    final String version;
    final VectorSpec o;
    final String[] columns;

    SplitSearch(String path, String version, VectorSpec o, String[] columns) {
      this.path = path;
      this.version = version;
      this.o = o;
      this.columns = columns;
    }

    @Override
    public byte[] call(Split[] run) throws IOException {
      try (BufferAllocator a = HsMemory.child("vector");
          HsTableCache.Lease l = HsTableCache.borrow(path, version)) {
        HsTable.VectorRequest r = request(o, run[0].snapshotId(), columns);
        r.paths = new String[run.length];
        for (int i = 0; i < run.length; i++) r.paths[i] = run[i].path();
        try (VectorResult res = l.table().vectorSearch(a, r)) {
          long[] m = new long[HsMetrics.NAMES.length];
          m[8] = 1;
          m[9] = res.filesSearched;
          m[10] = res.filesIndexed;
          m[11] = res.rowsScored;
          HsMetrics.add(m);
          return ipc(res.reader());
        }
      }
    }
  }

  static HsTable.VectorRequest request(VectorSpec o, long snapshotId, String[] columns) {
    HsTable.VectorRequest r = new HsTable.VectorRequest();
    r.snapshotId = snapshotId;
    r.column = o.column;
    r.query = o.query;
    r.k = o.k;
    r.metric = o.metric;
    r.filter = o.filter;
    r.columns = columns;
    r.efSearch = o.efSearch;
    r.nprobe = o.nprobe;
    r.exact = o.exact;
    return r;
  }

  static byte[] ipc(ArrowReader reader) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    VectorSchemaRoot root = reader.getVectorSchemaRoot();
    try (ArrowStreamWriter w = new ArrowStreamWriter(root, null, Channels.newChannel(out))) {
      w.start();
      while (reader.loadNextBatch()) w.writeBatch();
      w.end();
    }
    return out.toByteArray();
  }

  private static final class Hit {
    final float distance;
    final int run, batch, row;

    Hit(float distance, int run, int batch, int row) {
      this.distance = distance;
      this.run = run;
      this.batch = batch;
      this.row = row;
    }
  }

  static InputPartition[] plan(HsSparkTable table, VectorSpec o, List<Split> splits,
      String[] columns) {
    byte[] merged;
    if (onDriver(table, splits)) {
      merged = onDriver(table, o, columns);
    } else {
      JavaSparkContext sc = JavaSparkContext.fromSparkContext(SparkSession.active().sparkContext());
      List<Split[]> runs = runs(splits, table.opts.filesPerTask, sc.defaultParallelism());
      List<byte[]> parts = sc.parallelize(runs, runs.size())
          .map(new SplitSearch(table.opts.path, table.version, o, columns)).collect();
      merged = merge(parts, o.k);
    }
    return new InputPartition[] {new HsVectorPartition(merged)};
  }

  /**
   * The distributed search's tasks: runs of consecutive files in plan order
   * ({@code filesPerTask} files each when set; else {@code tasks} runs of
   * about equal live rows, at most one per file). Consecutive, so that the
   * merge's stable order by distance, run by run, is the global order.
   */
  static List<Split[]> runs(List<Split> splits, int filesPerTask, int tasks) {
    List<Split> all = new ArrayList<>(splits);
    all.sort(Comparator.comparingLong(Split::planIndex));
    List<Split[]> out = new ArrayList<>();
    if (filesPerTask > 0) {
      for (int i = 0; i < all.size(); i += filesPerTask) {
        out.add(all.subList(i, Math.min(all.size(), i + filesPerTask)).toArray(new Split[0]));
      }
      return out;
    }
    int n = Math.max(1, Math.min(tasks, all.size()));
    long total = 0;
    for (Split s : all) total += live(s);
    int from = 0;
    long seen = 0;
    for (int t = 1; t <= n; t++) {
      // Run t ends where the live rows so far reach t/n of the total, leaving
      // at least one file for each run after it.
      int to = from + 1;
      seen += live(all.get(from));
      while (to < all.size() - (n - t) && seen + live(all.get(to)) <= total * t / n) {
        seen += live(all.get(to++));
      }
      if (t == n) to = all.size();
      out.add(all.subList(from, to).toArray(new Split[0]));
      from = to;
    }
    return out;
  }

  private static long live(Split s) {
    return s.recordCount() - s.rowsDeleted();
  }

  /** Whether the driver searches (no table yet, or at most vector-driver-rows live rows). */
  static boolean onDriver(HsSparkTable table, List<Split> splits) {
    long rows = 0;
    for (Split s : splits) rows += s.recordCount() - s.rowsDeleted();
    return splits.isEmpty() || rows <= table.opts.vectorDriverRows;
  }

  /**
   * The whole top-k on the driver (hs_table_vector_search over every file, as
   * Table.search runs it): a small table, or none at all (the search still
   * gives the result's schema and its errors: dimension, column). No Spark job
   * runs for the search; the k rows reach Spark as one partition.
   */
  private static byte[] onDriver(HsSparkTable table, VectorSpec o, String[] columns) {
    try (BufferAllocator a = HsMemory.child("vector");
        HsTableCache.Lease l = HsTableCache.borrow(table.opts.path, table.version)) {
      HsTable.VectorRequest r = request(o, table.snapshotId, columns);
      try (VectorResult res = l.table().vectorSearch(a, r)) {
        long[] m = new long[HsMetrics.NAMES.length];
        m[9] = res.filesSearched;
        m[10] = res.filesIndexed;
        m[11] = res.rowsScored;
        HsMetrics.add(m);
        return ipc(res.reader());
      }
    } catch (IOException e) {
      throw new RuntimeException(e);
    }
  }

  /**
   * The k best rows of the runs' results (in plan order, each in its own
   * order), in the global order, as one IPC stream.
   */
  static byte[] merge(List<byte[]> parts, long k) {
    try (BufferAllocator a = HsMemory.child("merge")) {
      List<List<VectorSchemaRoot>> roots = new ArrayList<>();
      List<ArrowStreamReader> readers = new ArrayList<>();
      List<Hit> hits = new ArrayList<>();
      try {
        for (int s = 0; s < parts.size(); s++) {
          ArrowStreamReader rd = new ArrowStreamReader(new ByteArrayInputStream(parts.get(s)), a);
          readers.add(rd);
          List<VectorSchemaRoot> bs = new ArrayList<>();
          while (rd.loadNextBatch()) {
            VectorSchemaRoot cur = rd.getVectorSchemaRoot();
            VectorSchemaRoot copy = VectorSchemaRoot.create(cur.getSchema(), a);
            copy.allocateNew();
            for (int c = 0; c < cur.getFieldVectors().size(); c++) {
              FieldVector from = cur.getVector(c), to = copy.getVector(c);
              for (int i = 0; i < cur.getRowCount(); i++) to.copyFromSafe(i, i, from);
              to.setValueCount(cur.getRowCount());
            }
            copy.setRowCount(cur.getRowCount());
            Float4Vector d = (Float4Vector) copy.getVector("distance");
            for (int i = 0; i < copy.getRowCount(); i++) {
              hits.add(new Hit(d.get(i), s, bs.size(), i));
            }
            bs.add(copy);
          }
          roots.add(bs);
        }
        // Stable: equal distances stay in run order, then in the run's own
        // (plan index, row position): the global order, runs being consecutive.
        hits.sort(Comparator.comparingDouble(h -> h.distance));
        int n = (int) Math.min(k, hits.size());
        VectorSchemaRoot out = VectorSchemaRoot.create(readers.get(0).getVectorSchemaRoot()
            .getSchema(), a);
        try {
          out.allocateNew();
          for (int j = 0; j < n; j++) {
            Hit h = hits.get(j);
            VectorSchemaRoot src = roots.get(h.run).get(h.batch);
            for (int c = 0; c < out.getFieldVectors().size(); c++) {
              out.getVector(c).copyFromSafe(h.row, j, src.getVector(c));
            }
          }
          for (FieldVector v : out.getFieldVectors()) v.setValueCount(n);
          out.setRowCount(n);
          ByteArrayOutputStream bo = new ByteArrayOutputStream();
          try (ArrowStreamWriter w = new ArrowStreamWriter(out, null, Channels.newChannel(bo))) {
            w.start();
            w.writeBatch();
            w.end();
          }
          return bo.toByteArray();
        } finally {
          out.close();
        }
      } catch (IOException e) {
        throw new RuntimeException("hyperstream: merging the splits' top-k: " + e, e);
      } finally {
        for (List<VectorSchemaRoot> bs : roots) bs.forEach(VectorSchemaRoot::close);
        for (ArrowStreamReader rd : readers) {
          try {
            rd.close();
          } catch (IOException ignored) {
            // the bytes are in memory
          }
        }
      }
    }
  }

  static String describe(float[] q) {
    return Arrays.toString(q);
  }
}
