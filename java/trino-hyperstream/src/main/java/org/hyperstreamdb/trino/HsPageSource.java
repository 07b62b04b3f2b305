package org.hyperstreamdb.trino;

import io.trino.plugin.base.metrics.LongCount;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metric;
import io.trino.spi.metrics.Metrics;
import io.trino.spi.type.ArrayType;
import io.trino.spi.type.DoubleType;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.hyperstreamdb.jni.HsTable;
import org.hyperstreamdb.jni.HsTableCache;
import org.hyperstreamdb.jni.HyperStreamException;
import org.hyperstreamdb.jni.ScanResult;
import org.hyperstreamdb.jni.ScanStats;
import org.hyperstreamdb.jni.Split;
import org.hyperstreamdb.jni.VectorResult;

/**
 * Reads one split: the C scan of its planned files at the candidate rows the
 * plan found (hs_table_scan_split_rows: the pushed filter, deletes, row-group
 * and page pruning; the pushed limit) or the pushed vector top-k of the snapshot,
 * as Arrow batches through the C Data Interface, each copied into one page
 * (HsBlocks). Distance columns not answered by the top-k are computed here
 * from their vector column; a pushed global aggregate (HsAggregates) reads
 * every batch and returns its one row. Metrics (EXPLAIN ANALYZE VERBOSE): the
 * scan's counters, hyperstream.splits = 1 per page source.
 */
final class HsPageSource implements ConnectorPageSource {
  private final List<HsColumnHandle> columns;
  private final HsTableHandle table;
  private final HsSplit split;
  private final BufferAllocator allocator;
  private final ArrowReader reader;
  private final ScanResult scan; // null for a top-k
  private final VectorResult vector; // null for a scan
  private final HsTableCache.Lease lease;
  private final boolean negateDistance; // inner_product: our ip is -a.b
  private final List<HsAggregates.Acc> aggregates; // null unless a pushed aggregate
  private long completedBytes, readNanos, positions;
  private boolean finished;

  HsPageSource(HsTableHandle table, HsSplit split, List<HsColumnHandle> columns) {
    this.table = table;
    this.split = split;
    this.columns = columns;
    Set<String> read = new LinkedHashSet<>();
    if (table.aggregates() != null) {
      aggregates = new ArrayList<>();
      for (HsColumnHandle c : columns) aggregates.add(new HsAggregates.Acc(c.aggregate()));
      read.addAll(HsAggregates.arguments(columns));
    } else {
      aggregates = null;
    }
    for (HsColumnHandle c : columns) {
      if (c.aggregate() != null) {
        continue;
      } else if (c.distance() == null) {
        read.add(c.name());
      } else if (!c.equals(table.topKColumn())) {
        read.add(c.distance().vector());
      }
    }
    this.allocator = HsMemory.child("split");
    // A pooled handle of the planned version (HsTableCache): no table open per
    // split. Held until close: two streams read through one handle are slower.
    HsTableCache.Lease l = null;
    try {
      l = HsTableCache.borrow(table.path(), table.version());
      HsTable t = l.table();
      if (aggregates != null && split.files().isEmpty()) { // an empty table: no row to read
        vector = null;
        scan = null;
        reader = null;
        negateDistance = false;
      } else if (table.topKColumn() != null) {
        HsColumnHandle.HsDistance d = table.topKColumn().distance();
        HsTable.VectorRequest r = new HsTable.VectorRequest();
        r.snapshotId = table.snapshotId();
        r.column = d.vector();
        r.query = d.query();
        r.k = table.topK();
        r.metric = HsDistanceFunctions.metric(d.function());
        r.filter = table.filter();
        r.columns = read.toArray(new String[0]);
        vector = t.vectorSearch(allocator, r);
        scan = null;
        reader = vector.reader();
        negateDistance = r.metric.equals("ip");
      } else {
        if (read.isEmpty()) read.add(countColumn(table)); // count(*): rows only
        HsTable.ScanRequest r = new HsTable.ScanRequest();
        r.snapshotId = table.snapshotId();
        r.columns = read.toArray(new String[0]);
        r.filter = table.filter();
        r.limit = table.limit();
        // The planned files, read at the candidate rows the plan found.
        r.splits = split.files().stream().map(f -> f.split(table.snapshotId()))
            .toArray(Split[]::new);
        scan = t.scan(allocator, r);
        vector = null;
        reader = scan.reader();
        negateDistance = false;
      }
    } catch (RuntimeException e) {
      if (l != null) l.close();
      allocator.close();
      if (e instanceof HyperStreamException h) throw HsErrors.of(h, table.name().toString());
      throw e;
    }
    lease = l;
  }

  /** A cheap column to count rows with: the first fixed-width one, else the first. */
  private static String countColumn(HsTableHandle table) {
    List<HsColumnHandle> cols = HsMetadata.columns(table);
    for (HsColumnHandle c : cols) {
      if (c.type() instanceof io.trino.spi.type.FixedWidthType) return c.name();
    }
    return cols.get(0).name();
  }

  @Override
  public SourcePage getNextSourcePage() {
    if (finished) return null;
    if (aggregates != null) return aggregatePage();
    if (!nextBatch()) return null;
    VectorSchemaRoot root = batch();
    int n = root.getRowCount();
    Block[] blocks = new Block[columns.size()];
    Map<String, Block> base = new LinkedHashMap<>();
    for (int i = 0; i < blocks.length; i++) {
      HsColumnHandle c = columns.get(i);
      if (c.distance() == null) {
        blocks[i] = base.computeIfAbsent(c.name(), k -> HsBlocks.toBlock(root.getVector(k), c.type()));
      } else if (c.equals(table.topKColumn())) {
        blocks[i] = distances((Float4Vector) root.getVector("distance"), n);
      } else {
        String v = c.distance().vector();
        FieldVector fv = root.getVector(v);
        Block vb = base.computeIfAbsent(v, k -> HsBlocks.toBlock(fv,
            new ArrayType(io.trino.spi.type.RealType.REAL)));
        blocks[i] = computed(c.distance(), vb, n);
      }
    }
    Page page = new Page(n, blocks);
    completedBytes += page.getSizeInBytes();
    positions += n;
    return SourcePage.create(page);
  }

  /** Every batch of the split into the aggregates, then their one row. */
  private SourcePage aggregatePage() {
    while (reader != null && nextBatch()) {
      VectorSchemaRoot root = batch();
      int n = root.getRowCount();
      Map<String, Block> blocks = new LinkedHashMap<>();
      for (HsAggregates.Acc a : aggregates) {
        String arg = a.agg.argument();
        Block b = arg == null ? null : blocks.computeIfAbsent(arg,
            k -> HsBlocks.toBlock(root.getVector(k), a.agg.argumentType()));
        a.add(b, n);
      }
      positions += n;
    }
    finished = true;
    Block[] out = new Block[aggregates.size()];
    for (int i = 0; i < out.length; i++) {
      BlockBuilder b = aggregates.get(i).agg.outputType().createBlockBuilder(null, 1);
      aggregates.get(i).write(b);
      out[i] = b.build();
    }
    Page page = new Page(1, out);
    completedBytes += page.getSizeInBytes();
    return SourcePage.create(page);
  }

  /** The next batch of the reader; false at its end (and then finished). */
  private boolean nextBatch() {
    long t0 = System.nanoTime();
    try {
      if (!reader.loadNextBatch()) {
        finished = true;
        return false;
      }
      return true;
    } catch (IOException | RuntimeException e) {
      finished = true;
      HyperStreamException h = e.getCause() instanceof HyperStreamException c ? c
          : e instanceof HyperStreamException c2 ? c2 : null;
      if (h != null) throw HsErrors.of(h, table.name().toString());
      throw new io.trino.spi.TrinoException(io.trino.spi.StandardErrorCode.GENERIC_INTERNAL_ERROR,
          "hyperstream: " + table.name() + ": reading a batch: " + e.getMessage(), e);
    } finally {
      readNanos += System.nanoTime() - t0;
    }
  }

  private VectorSchemaRoot batch() {
    try {
      return reader.getVectorSchemaRoot();
    } catch (IOException e) {
      throw new io.trino.spi.TrinoException(io.trino.spi.StandardErrorCode.GENERIC_INTERNAL_ERROR,
          "hyperstream: " + table.name() + ": " + e.getMessage(), e);
    }
  }

  private Block distances(Float4Vector d, int n) {
    BlockBuilder b = DoubleType.DOUBLE.createBlockBuilder(null, n);
    for (int i = 0; i < n; i++) {
      if (d.isNull(i)) {
        b.appendNull();
      } else {
        double v = d.get(i);
        DoubleType.DOUBLE.writeDouble(b, negateDistance ? -v : v);
      }
    }
    return b.build();
  }

  private static Block computed(HsColumnHandle.HsDistance d, Block vectors, int n) {
    ArrayType at = new ArrayType(io.trino.spi.type.RealType.REAL);
    BlockBuilder q = io.trino.spi.type.RealType.REAL.createBlockBuilder(null, d.query().length);
    for (float f : d.query()) io.trino.spi.type.RealType.REAL.writeFloat(q, f);
    Block query = q.build();
    BlockBuilder b = DoubleType.DOUBLE.createBlockBuilder(null, n);
    for (int i = 0; i < n; i++) {
      Double v = vectors.isNull(i) ? null
          : HsDistanceFunctions.compute(d.function(), at.getObject(vectors, i), query);
      if (v == null) {
        b.appendNull();
      } else {
        DoubleType.DOUBLE.writeDouble(b, v);
      }
    }
    return b.build();
  }

  @Override
  public long getCompletedBytes() {
    return completedBytes;
  }

  @Override
  public java.util.OptionalLong getCompletedPositions() {
    return java.util.OptionalLong.of(positions);
  }

  @Override
  public long getReadTimeNanos() {
    return readNanos;
  }

  @Override
  public boolean isFinished() {
    return finished;
  }

  @Override
  public long getMemoryUsage() {
    return allocator.getAllocatedMemory();
  }

  @Override
  public Metrics getMetrics() {
    Map<String, Metric<?>> m = new LinkedHashMap<>();
    m.put("hyperstream.splits", new LongCount(1));
    m.put("hyperstream.split_files", new LongCount(split.files().size()));
    if (aggregates != null) m.put("hyperstream.aggregated", new LongCount(1));
    if (scan != null) {
      ScanStats s = scan.stats();
      m.put("hyperstream.files_read", new LongCount(s.filesRead));
      m.put("hyperstream.files_indexed", new LongCount(s.filesIndexed));
      m.put("hyperstream.rows_scanned", new LongCount(s.rowsScanned));
      m.put("hyperstream.rows_matched", new LongCount(s.rowsMatched));
      m.put("hyperstream.rows_eliminated", new LongCount(s.rowsEliminated));
      m.put("hyperstream.row_groups_pruned", new LongCount(s.rowGroupsPruned));
      m.put("hyperstream.pages_pruned", new LongCount(s.pagesPruned));
    } else if (vector != null) {
      m.put("hyperstream.vector_files_searched", new LongCount(vector.filesSearched));
      m.put("hyperstream.vector_files_indexed", new LongCount(vector.filesIndexed));
      m.put("hyperstream.vector_rows_scored", new LongCount(vector.rowsScored));
      m.put("hyperstream.vector_rows_returned", new LongCount(vector.rowsReturned));
    }
    return new Metrics(m);
  }

  @Override
  public void close() throws IOException {
    try {
      if (scan != null) scan.close();
      if (vector != null) vector.close();
    } finally {
      lease.close();
      allocator.close();
    }
  }
}
