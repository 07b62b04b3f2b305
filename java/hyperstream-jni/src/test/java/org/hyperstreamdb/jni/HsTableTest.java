package org.hyperstreamdb.jni;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.Test;

/**
 * The JNI layer end to end, without an engine: a table created, three data
 * files written by ParquetWriter and committed by one commitAppend, then
 * planned, scanned per split and whole (ids compared), searched (per split
 * and merged vs whole), and the error paths: each a HyperStreamException
 * carrying the C message, the JVM unharmed.
 */
public class HsTableTest {
  private static final int DIM = 3, FILES = 3, ROWS = 100;

  private static Schema schema() {
    Field item = new Field("item", FieldType.nullable(
        new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)), null);
    return new Schema(List.of(
        new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
        new Field("v", FieldType.nullable(new ArrowType.FixedSizeList(DIM)), List.of(item))));
  }

  private static List<Long> ids(ArrowReader r) throws Exception {
    List<Long> out = new ArrayList<>();
    while (r.loadNextBatch()) {
      BigIntVector id = (BigIntVector) r.getVectorSchemaRoot().getVector("id");
      for (int i = 0; i < id.getValueCount(); i++) out.add(id.get(i));
    }
    return out;
  }

  @Test
  public void createWriteCommitPlanScanSearch() throws Exception {
    File dir = Files.createTempDirectory("hs_jni_test").toFile();
    String path = new File(dir, "t").getPath();
    try (BufferAllocator a = new RootAllocator()) {
      try (HsTable t = HsTable.create(path, schema(), a)) {
        assertEquals(-1, t.currentSnapshotId());
        Schema ts = t.tableSchema(a);
        Map<String, String> md = ts.getFields().get(0).getMetadata();
        assertTrue(md.toString(), md.containsKey("PARQUET:field_id"));
        String[] files = new String[FILES];
        for (int f = 0; f < FILES; f++) {
          files[f] = new File(new File(path, "data"), "j" + f + ".parquet").getPath();
          try (VectorSchemaRoot root = VectorSchemaRoot.create(ts, a);
              ParquetWriter w = new ParquetWriter(files[f], ts, a)) {
            BigIntVector id = (BigIntVector) root.getVector("id");
            FixedSizeListVector v = (FixedSizeListVector) root.getVector("v");
            Float4Vector x = (Float4Vector) v.getDataVector();
            id.allocateNew(ROWS);
            v.allocateNew();
            for (int i = 0; i < ROWS; i++) {
              long k = (long) f * ROWS + i;
              id.set(i, k);
              int at = v.startNewValue(i);
              for (int j = 0; j < DIM; j++) x.setSafe(at + j, (float) (k % 10) + j);
            }
            x.setValueCount(ROWS * DIM);
            v.setValueCount(ROWS);
            id.setValueCount(ROWS);
            root.setRowCount(ROWS);
            w.write(root);
          }
        }
        long sid = t.commitAppend(files, -1);
        assertEquals(sid, t.currentSnapshotId());
      }
      try (HsTable t = HsTable.open(path)) {
        long sid = t.currentSnapshotId();
        List<Split> splits = t.planSplits(sid, null);
        assertEquals(FILES, splits.size());
        assertEquals(1, t.planSplits(sid, "id >= 250").size());
        // Union of the splits' scans = the whole scan.
        List<Long> whole, parts = new ArrayList<>();
        HsTable.ScanRequest r = new HsTable.ScanRequest();
        r.snapshotId = sid;
        r.filter = "id IN (3, 10, 17, 150, 201) OR id > 280";
        try (ScanResult s = t.scan(a, r)) {
          whole = ids(s.reader());
          assertEquals(whole.size(), s.stats().rowsReturned);
        }
        for (Split sp : splits) {
          r.paths = new String[] {sp.path()};
          try (ScanResult s = t.scan(a, r)) {
            parts.addAll(ids(s.reader()));
            assertEquals(1, s.stats().filesRead);
          }
        }
        // Batches merged in C (batchRowsMin, default 65536): the 3 files' rows
        // as one batch, the same rows and vectors, in the same order, as the
        // unmerged scan's one batch per file at least.
        r.paths = null;
        List<String> mergedRows = new ArrayList<>(), unmergedRows = new ArrayList<>();
        int[] batches = new int[2];
        for (int m = 0; m < 2; m++) {
          r.batchRowsMin = m == 0 ? HsTable.BATCH_ROWS_MIN : 0;
          try (ScanResult s = t.scan(a, r)) {
            while (s.reader().loadNextBatch()) {
              batches[m]++;
              VectorSchemaRoot root = s.reader().getVectorSchemaRoot();
              for (int i = 0; i < root.getRowCount(); i++) {
                (m == 0 ? mergedRows : unmergedRows).add(root.getVector("id").getObject(i) + ":"
                    + root.getVector("v").getObject(i));
              }
            }
          }
        }
        assertEquals(unmergedRows, mergedRows);
        assertEquals(whole.size(), mergedRows.size());
        assertEquals(1, batches[0]);
        assertTrue("unmerged batches: " + batches[1], batches[1] >= FILES);
        r.batchRowsMin = HsTable.BATCH_ROWS_MIN;
        whole.sort(null);
        parts.sort(null);
        assertEquals(whole, parts);
        assertEquals(5 + 19, whole.size());
        // The same filter planned: its splits (no index here: candidates are the
        // kept row groups' rows, no bytes) scanned together as planned.
        List<Split> planned = t.planSplits(sid, r.filter);
        for (Split sp : planned) {
          assertTrue(sp.toString(),
              sp.rowsCandidate() > 0 && sp.rowsCandidate() <= sp.recordCount());
          assertNull(sp.candidates());
        }
        for (Split sp : splits) assertEquals(-1, sp.rowsCandidate());
        r.paths = null;
        r.splits = planned.toArray(new Split[0]);
        try (ScanResult s = t.scan(a, r)) {
          List<Long> got = ids(s.reader());
          got.sort(null);
          assertEquals(whole, got);
        }
        r.splits = null;
        // Candidate bytes that are not a bitmap of the file: an exception naming it.
        Split bad = planned.get(0);
        r.splits = new Split[] {new Split(bad.path(), bad.snapshotId(), bad.planIndex(),
            bad.fileSizeInBytes(), bad.recordCount(), bad.rowsDeleted(), 1, new byte[] {1, 2, 3},
            true)};
        HyperStreamException ex = assertThrows(HyperStreamException.class, () -> t.scan(a, r));
        assertTrue(ex.getMessage(), ex.getMessage().contains(bad.path()));
        r.splits = null;
        // One handle per table version and JVM, shared by leases.
        try (HsTableCache.Lease l1 = HsTableCache.borrow(path, t.metadataLocation());
            HsTableCache.Lease l2 = HsTableCache.borrow(path, t.metadataLocation())) {
          assertNotSame(l1.table(), l2.table()); // one lease, one handle
          assertEquals(sid, l1.table().currentSnapshotId());
        }
        try (HsTableCache.Lease l3 = HsTableCache.borrow(path, t.metadataLocation())) {
          assertEquals(sid, l3.table().currentSnapshotId()); // a returned handle, reused
        }
        assertTrue(HsTableCache.counts()[1] >= 1);
        // An adopted handle joins the pool under its own version.
        HsTableCache.clear();
        HsTableCache.adopt(HsTable.open(path)).close();
        long[] c0 = HsTableCache.counts();
        try (HsTableCache.Lease l4 = HsTableCache.borrow(path, t.metadataLocation())) {
          assertEquals(c0[0], HsTableCache.counts()[0]); // no open
          assertEquals(c0[1] + 1, HsTableCache.counts()[1]);
        }
        // Plans: one per (version, snapshot, filter), the same list on a repeat.
        List<Split> p1 = HsPlanCache.plan(path, t.metadataLocation(), sid, r.filter);
        assertSame(p1, HsPlanCache.plan(path, t.metadataLocation(), sid, r.filter));
        assertEquals(planned.size(), p1.size());
        assertNotSame(p1, HsPlanCache.plan(path, t.metadataLocation(), sid, null));
        assertEquals(FILES, HsPlanCache.plan(path, t.metadataLocation(), sid, null).size());
        HsPlanCache.clear();
        assertNotSame(p1, HsPlanCache.plan(path, t.metadataLocation(), sid, r.filter));
        // Grouping by work: unnarrowed files alone, narrowed ones packed by candidates.
        Split w1 = new Split("a", sid, 0, 1, 100, 0, 10, new byte[1], true);
        Split w2 = new Split("b", sid, 1, 1, 100, 0, 10, new byte[1], true);
        Split w3 = new Split("c", sid, 2, 1, 100, 0, 95, new byte[1], true);
        Split w4 = new Split("d", sid, 3, 1, 100, 0);
        assertEquals(List.of(List.of(w1, w2), List.of(w4), List.of(w3)), // packs close last
            SplitGroups.group(List.of(w1, w2, w3, w4), 0, 100));
        assertEquals(List.of(List.of(w1, w2, w3), List.of(w4)),
            SplitGroups.group(List.of(w1, w2, w3, w4), 3, 0));
        HsTableCache.clear();
        // Vector top-k: per split, merged by (distance, plan index) = the whole search.
        HsTable.VectorRequest q = new HsTable.VectorRequest();
        q.snapshotId = sid;
        q.column = "v";
        q.query = new float[] {4, 5, 6};
        q.k = 12;
        q.columns = new String[] {"id"};
        List<Long> top;
        try (VectorResult vr = t.vectorSearch(a, q)) {
          top = ids(vr.reader());
          assertEquals(12, vr.rowsReturned);
        }
        List<long[]> hits = new ArrayList<>(); // distance bits, plan index, rank, id
        for (Split sp : splits) {
          q.paths = new String[] {sp.path()};
          try (VectorResult vr = t.vectorSearch(a, q)) {
            int rank = 0;
            while (vr.reader().loadNextBatch()) {
              VectorSchemaRoot root = vr.reader().getVectorSchemaRoot();
              BigIntVector id = (BigIntVector) root.getVector("id");
              Float4Vector d = (Float4Vector) root.getVector("distance");
              for (int i = 0; i < root.getRowCount(); i++) {
                hits.add(new long[] {Float.floatToIntBits(d.get(i)), sp.planIndex(), rank++,
                    id.get(i)});
              }
            }
          }
        }
        hits.sort((x, y) -> {
          int c = Float.compare(Float.intBitsToFloat((int) x[0]), Float.intBitsToFloat((int) y[0]));
          if (c != 0) return c;
          return x[1] != y[1] ? Long.compare(x[1], y[1]) : Long.compare(x[2], y[2]);
        });
        List<Long> merged = new ArrayList<>();
        for (int i = 0; i < 12; i++) merged.add(hits.get(i)[3]);
        assertEquals(top, merged); // ties (every k % 10 == 4 row) resolved alike

        // Errors carry the C message; the handle stays usable.
        q.paths = null;
        q.query = new float[] {1, 2};
        try {
          t.vectorSearch(a, q);
          fail("wrong dimension accepted");
        } catch (HyperStreamException e) {
          assertTrue(e.getMessage(), e.getMessage().contains("dimension 3, the query has "
              + "dimension 2"));
          assertEquals(HyperStreamException.INVALID_ARG, e.status());
        }
        r.paths = new String[] {"/nonexistent/x.parquet"};
        try {
          t.scan(a, r);
          fail("bogus split accepted");
        } catch (HyperStreamException e) {
          assertEquals(HyperStreamException.NOT_FOUND, e.status());
          assertTrue(e.getMessage(), e.getMessage().contains("/nonexistent/x.parquet"));
        }
        r.paths = null;
        r.filter = "id >>> 1";
        try {
          t.scan(a, r);
          fail("bad filter accepted");
        } catch (HyperStreamException e) {
          assertTrue(e.getMessage(), e.getMessage().contains("position"));
        }
        assertEquals(FILES, t.planSplits(sid, null).size());
      }
      try {
        HsTable.open(new File(dir, "missing").getPath());
        fail("missing table opened");
      } catch (HyperStreamException e) {
        assertTrue(e.getMessage(), e.getMessage().contains("missing"));
      }
    }
  }
}
