package org.hyperstreamdb.trino;

import io.airlift.slice.Slice;
import io.trino.spi.StandardErrorCode;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.connector.AggregateFunction;
import io.trino.spi.connector.AggregationApplicationResult;
import io.trino.spi.connector.Assignment;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.connector.ConnectorInsertTableHandle;
import io.trino.spi.connector.ConnectorMetadata;
import io.trino.spi.connector.ConnectorOutputMetadata;
import io.trino.spi.connector.ConnectorOutputTableHandle;
import io.trino.spi.connector.ConnectorTableLayout;
import io.trino.spi.connector.ConnectorMergeTableHandle;
import io.trino.spi.connector.RetryMode;
import io.trino.spi.connector.RowChangeParadigm;
import io.trino.spi.connector.SaveMode;
import io.trino.spi.statistics.ComputedStatistics;
import io.trino.spi.statistics.Estimate;
import io.trino.spi.statistics.TableStatistics;
import java.util.Collection;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ConnectorTableMetadata;
import io.trino.spi.connector.ConnectorTableVersion;
import io.trino.spi.connector.Constraint;
import io.trino.spi.connector.ConstraintApplicationResult;
import io.trino.spi.connector.LimitApplicationResult;
import io.trino.spi.connector.PointerType;
import io.trino.spi.connector.ProjectionApplicationResult;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.connector.SortItem;
import io.trino.spi.connector.SortOrder;
import io.trino.spi.connector.TopNApplicationResult;
import io.trino.spi.expression.Call;
import io.trino.spi.expression.ConnectorExpression;
import io.trino.spi.expression.Constant;
import io.trino.spi.expression.Variable;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.expression.StandardFunctions;
import io.trino.spi.type.ArrayType;
import io.trino.spi.type.BigintType;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.Int128;
import io.trino.spi.type.IntegerType;
import io.trino.spi.type.SmallintType;
import io.trino.spi.type.TinyintType;
import io.trino.spi.type.DateTimeEncoding;
import io.trino.spi.type.DateType;
import io.trino.spi.type.DoubleType;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.RealType;
import io.trino.spi.type.TimestampType;
import io.trino.spi.type.TimestampWithTimeZoneType;
import io.trino.spi.type.Type;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.hyperstreamdb.jni.HsPlanCache;
import org.hyperstreamdb.jni.HsTable;
import org.hyperstreamdb.jni.HsTableCache;
import org.hyperstreamdb.jni.Split;
import org.hyperstreamdb.jni.SplitGroups;
import org.hyperstreamdb.jni.HyperStreamException;

/**
 * Schemas are the folders under the catalog's root, tables the folders in
 * them that hold a table (a metadata/ folder). A table handle pins one
 * snapshot: the current one, or {@code FOR VERSION AS OF <snapshot id |
 * 'tag or branch'>} / {@code FOR TIMESTAMP AS OF}. Pushdown: applyFilter
 * (TupleDomain as our filter text, enforced),
 * applyLimit (each split stops early; Trino keeps its limit),
 * applyProjection (a distance function of a vector column and a constant
 * becomes a column we compute) and applyTopN (ORDER BY that distance
 * LIMIT k: our vector top-k with the pushed filter as pre-filter, in the
 * order of Table.search; guaranteed, so Trino drops its TopN) and
 * applyAggregation (a global count / sum / min / max over one split,
 * computed in its page source: HsAggregates).
 */
final class HsMetadata implements ConnectorMetadata {
  private final Path root;
  private final java.util.function.Consumer<Path> created; // the transaction's new tables

  HsMetadata(Path root, java.util.function.Consumer<Path> created) {
    this.root = root;
    this.created = created;
  }

  @Override
  public List<String> listSchemaNames(ConnectorSession session) {
    List<String> out = new ArrayList<>();
    for (Path p : dirs(root)) {
      String n = p.getFileName().toString();
      if (n.equals(n.toLowerCase(Locale.ROOT)) && !isTable(p)) out.add(n);
    }
    return out;
  }

  @Override
  public List<SchemaTableName> listTables(ConnectorSession session, Optional<String> schema) {
    List<SchemaTableName> out = new ArrayList<>();
    List<String> schemas = schema.map(List::of).orElseGet(() -> listSchemaNames(session));
    for (String s : schemas) {
      for (Path p : dirs(root.resolve(s))) {
        String n = p.getFileName().toString();
        if (n.equals(n.toLowerCase(Locale.ROOT)) && isTable(p)) {
          out.add(new SchemaTableName(s, n));
        }
      }
    }
    return out;
  }

  private static boolean isTable(Path p) {
    return Files.isDirectory(p.resolve("metadata"));
  }

  private static List<Path> dirs(Path p) {
    List<Path> out = new ArrayList<>();
    if (!Files.isDirectory(p)) return out;
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(p, Files::isDirectory)) {
      for (Path c : ds) out.add(c);
    } catch (IOException e) {
      throw new TrinoException(StandardErrorCode.GENERIC_INTERNAL_ERROR,
          "hyperstream: cannot list " + p + ": " + e.getMessage(), e);
    }
    out.sort(null);
    return out;
  }

  @Override
  public ConnectorTableHandle getTableHandle(ConnectorSession session, SchemaTableName name,
      Optional<ConnectorTableVersion> startVersion, Optional<ConnectorTableVersion> endVersion) {
    if (startVersion.isPresent()) {
      throw new TrinoException(StandardErrorCode.NOT_SUPPORTED,
          "hyperstream: " + name + ": reading changes between versions is not supported");
    }
    Path p = root.resolve(name.getSchemaName()).resolve(name.getTableName());
    if (!p.normalize().startsWith(root.normalize()) || !isTable(p)) return null;
    // The latest metadata, read once per query; the handle then serves this
    // version's schema, plan and page sources from the pool (HsTableCache).
    try (HsTableCache.Lease l = HsTableCache.adopt(HsTable.open(p.toString()))) {
      HsTable t = l.table();
      long snap = endVersion.isEmpty() ? t.currentSnapshotId() : version(t, endVersion.get(), name);
      if (endVersion.isPresent()) {
        try (BufferAllocator a = HsMemory.child("schema")) {
          t.schema(a, snap, null); // an unknown snapshot is an error here
        }
      }
      return HsTableHandle.of(name, p.toString(), snap, t.metadataLocation());
    } catch (HyperStreamException e) {
      throw HsErrors.of(e, name.toString());
    }
  }

  private static long version(HsTable t, ConnectorTableVersion v, SchemaTableName name) {
    Type type = v.getVersionType();
    Object val = v.getVersion();
    if (v.getPointerType() == PointerType.TARGET_ID) {
      if (val instanceof Long id) return id;
      if (val instanceof Slice s) return t.refSnapshot(s.toStringUtf8());
    } else {
      long ms;
      if (type instanceof TimestampWithTimeZoneType tz && tz.isShort()) {
        ms = DateTimeEncoding.unpackMillisUtc((Long) val);
      } else if (val instanceof LongTimestampWithTimeZone l) {
        ms = l.getEpochMillis();
      } else if (type instanceof TimestampType ts && ts.isShort()) {
        ms = Math.floorDiv((Long) val, 1000L);
      } else if (type instanceof DateType) {
        ms = (Long) val * 86_400_000L;
      } else {
        throw new TrinoException(StandardErrorCode.NOT_SUPPORTED,
            "hyperstream: " + name + ": FOR TIMESTAMP AS OF takes a timestamp, not " + type);
      }
      long snap = t.snapshotAt(ms);
      if (snap < 0) {
        throw new TrinoException(StandardErrorCode.INVALID_ARGUMENTS,
            "hyperstream: " + name + ": no snapshot at or before " + ms + " ms");
      }
      return snap;
    }
    throw new TrinoException(StandardErrorCode.NOT_SUPPORTED, "hyperstream: " + name
        + ": FOR VERSION AS OF takes a snapshot id (bigint) or a tag or branch name, not "
        + type);
  }

  /** Columns per (metadata version, table, snapshot): a query asks several times. */
  private static final Map<String, List<HsColumnHandle>> COLUMNS =
      java.util.Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, List<HsColumnHandle>> e) {
          return size() > 256;
        }
      });

  /** The table's columns at the handle's snapshot, in schema order. */
  static List<HsColumnHandle> columns(HsTableHandle h) {
    String key = h.version() + "\n" + h.path() + "\n" + h.snapshotId();
    List<HsColumnHandle> cached = COLUMNS.get(key);
    if (cached != null) return cached;
    try (HsTableCache.Lease l = HsTableCache.borrow(h.path(), h.version());
        BufferAllocator a = HsMemory.child("schema")) {
      Schema s = l.table().schema(a, h.snapshotId(), null);
      List<HsColumnHandle> out = new ArrayList<>();
      for (Field f : s.getFields()) {
        out.add(new HsColumnHandle(f.getName(),
            HsTypes.toTrino(f, f.getName(), h.name().toString()), null));
      }
      out = List.copyOf(out);
      COLUMNS.put(key, out);
      return out;
    } catch (HyperStreamException e) {
      throw HsErrors.of(e, h.name().toString());
    }
  }

  /**
   * The splits of the handle's snapshot under its pushed filter, planned once
   * per table version and filter (HsPlanCache): statistics and the split
   * manager read the same plan.
   */
  static List<Split> plan(HsTableHandle h) {
    try {
      return HsPlanCache.plan(h.path(), h.version(), h.snapshotId(), h.filter());
    } catch (HyperStreamException e) {
      throw HsErrors.of(e, h.name() + ": planning splits");
    }
  }

  /**
   * The row count from the plan (no data page read): live rows of the files
   * the filter keeps, or their index candidates, so that Trino's cost-based
   * choices see a selective filter as the few rows it is; k for a top-k.
   */
  @Override
  public TableStatistics getTableStatistics(ConnectorSession session,
      ConnectorTableHandle table) {
    HsTableHandle h = (HsTableHandle) table;
    if (h.topKColumn() != null) {
      return TableStatistics.builder().setRowCount(Estimate.of(h.topK())).build(); // at most
    }
    if (h.aggregates() != null) {
      return TableStatistics.builder().setRowCount(Estimate.of(1)).build();
    }
    long rows = 0;
    if (h.snapshotId() >= 0 && !h.constraint().isNone()) {
      for (Split s : plan(h)) {
        rows += s.rowsCandidate() >= 0 ? s.rowsCandidate() : s.recordCount() - s.rowsDeleted();
      }
    }
    if (h.limit() >= 0) rows = Math.min(rows, h.limit());
    return TableStatistics.builder().setRowCount(Estimate.of(rows)).build();
  }

  @Override
  public ConnectorTableMetadata getTableMetadata(ConnectorSession session,
      ConnectorTableHandle table) {
    HsTableHandle h = (HsTableHandle) table;
    List<ColumnMetadata> cols = new ArrayList<>();
    for (HsColumnHandle c : columns(h)) cols.add(c.metadata());
    return new ConnectorTableMetadata(h.name(), cols);
  }

  @Override
  public Map<String, ColumnHandle> getColumnHandles(ConnectorSession session,
      ConnectorTableHandle table) {
    Map<String, ColumnHandle> out = new LinkedHashMap<>();
    for (HsColumnHandle c : columns((HsTableHandle) table)) out.put(c.name(), c);
    return out;
  }

  @Override
  public ColumnMetadata getColumnMetadata(ConnectorSession session, ConnectorTableHandle table,
      ColumnHandle column) {
    return ((HsColumnHandle) column).metadata();
  }

  @Override
  public ConnectorInsertTableHandle beginInsert(ConnectorSession session,
      ConnectorTableHandle table, List<ColumnHandle> columns, RetryMode retryMode) {
    HsTableHandle h = (HsTableHandle) table;
    if (retryMode != RetryMode.NO_RETRIES) {
      throw new TrinoException(StandardErrorCode.NOT_SUPPORTED,
          "hyperstream: INSERT with fault-tolerant execution (retry-policy) is not supported");
    }
    List<HsColumnHandle> all = columns(h);
    List<HsColumnHandle> given = new ArrayList<>();
    for (ColumnHandle c : columns) given.add((HsColumnHandle) c);
    if (!all.equals(given)) {
      throw new TrinoException(StandardErrorCode.NOT_SUPPORTED,
          "hyperstream: " + h.name() + ": INSERT must write every column, in table order");
    }
    return new HsInsertHandle(h.name(), h.path(), h.snapshotId(), all);
  }

  @Override
  public Optional<ConnectorOutputMetadata> finishInsert(ConnectorSession session,
      ConnectorInsertTableHandle insert, List<ConnectorTableHandle> sourceTables,
      Collection<Slice> fragments, Collection<ComputedStatistics> statistics) {
    HsInsertHandle h = (HsInsertHandle) insert;
    List<String> files = new ArrayList<>();
    for (Slice s : fragments) files.add(s.toStringUtf8());
    if (files.isEmpty()) return Optional.empty();
    try (HsTable t = HsTable.open(h.path())) {
      t.commitAppend(files.toArray(new String[0]), h.baseSnapshotId());
    } catch (HyperStreamException e) {
      for (String f : files) new java.io.File(f).delete();
      throw HsErrors.of(e, h.name() + ": committing the insert");
    }
    return Optional.empty();
  }

  /**
   * {@code CREATE TABLE hyperstream.s.t (...)}: an empty table in the folder
   * {@code <root>/s/t} (HsTable.create: Iceberg metadata, field ids assigned),
   * unpartitioned, columns as HsTypes.toArrow maps them; then INSERT fills it.
   * The schema folder must exist; table properties, partitioning and
   * CREATE OR REPLACE are not supported.
   */
  @Override
  public void createTable(ConnectorSession session, ConnectorTableMetadata meta,
      SaveMode saveMode) {
    if (saveMode == SaveMode.REPLACE) {
      throw new TrinoException(StandardErrorCode.NOT_SUPPORTED,
          "hyperstream: " + meta.getTable() + ": CREATE OR REPLACE TABLE is not supported");
    }
    create(meta, saveMode == SaveMode.IGNORE);
  }

  /** Makes the empty table; null when it exists and {@code ignoreExisting}. */
  private Path create(ConnectorTableMetadata meta, boolean ignoreExisting) {
    SchemaTableName name = meta.getTable();
    Path schema = root.resolve(name.getSchemaName());
    Path p = schema.resolve(name.getTableName());
    if (!p.normalize().startsWith(root.normalize()) || !Files.isDirectory(schema)) {
      throw new TrinoException(StandardErrorCode.SCHEMA_NOT_FOUND,
          "hyperstream: schema " + name.getSchemaName() + " does not exist");
    }
    if (isTable(p)) {
      if (ignoreExisting) return null;
      throw new TrinoException(StandardErrorCode.TABLE_ALREADY_EXISTS,
          "hyperstream: table " + name + " already exists");
    }
    if (!meta.getProperties().isEmpty()) {
      throw new TrinoException(StandardErrorCode.NOT_SUPPORTED,
          "hyperstream: " + name + ": table properties are not supported");
    }
    List<Field> fields = new ArrayList<>();
    for (ColumnMetadata c : meta.getColumns()) {
      if (c.isHidden()) continue;
      fields.add(HsTypes.toArrow(c.getName(), c.getType(), name.toString()));
    }
    boolean existed = Files.exists(p);
    try (BufferAllocator a = HsMemory.child("create");
        HsTable t = HsTable.create(p.toString(), new Schema(fields), a)) {
      // created: nothing more (INSERT appends)
    } catch (HyperStreamException e) {
      throw HsErrors.of(e, name + ": CREATE TABLE");
    }
    if (!existed) created.accept(p); // a CREATE TABLE AS rolled back removes it
    return p;
  }

  /**
   * {@code CREATE TABLE hyperstream.s.t AS SELECT ...}: the empty table is
   * made now (as CREATE TABLE makes it), the writer tasks write its data
   * files as for INSERT (HsPageSink, the query's column types), and
   * finishCreateTable commits them in one append snapshot. A query that
   * fails rolls its transaction back, which removes the new table's folder
   * (HsConnector.rollback): no half-made table stays behind.
   */
  @Override
  public ConnectorOutputTableHandle beginCreateTable(ConnectorSession session,
      ConnectorTableMetadata meta, Optional<ConnectorTableLayout> layout, RetryMode retryMode,
      boolean replace) {
    SchemaTableName name = meta.getTable();
    if (replace) {
      throw new TrinoException(StandardErrorCode.NOT_SUPPORTED,
          "hyperstream: " + name + ": CREATE OR REPLACE TABLE is not supported");
    }
    if (retryMode != RetryMode.NO_RETRIES) {
      throw new TrinoException(StandardErrorCode.NOT_SUPPORTED, "hyperstream: CREATE TABLE AS "
          + "with fault-tolerant execution (retry-policy) is not supported");
    }
    Path p = create(meta, false);
    List<HsColumnHandle> cols = new ArrayList<>();
    for (ColumnMetadata c : meta.getColumns()) {
      if (!c.isHidden()) cols.add(new HsColumnHandle(c.getName(), c.getType(), null));
    }
    return new HsInsertHandle(name, p.toString(), -1, cols);
  }

  @Override
  public Optional<ConnectorOutputMetadata> finishCreateTable(ConnectorSession session,
      ConnectorOutputTableHandle table, Collection<Slice> fragments,
      Collection<ComputedStatistics> statistics) {
    return finishInsert(session, (HsInsertHandle) table, List.of(), fragments, statistics);
  }

  /**
   * {@code DELETE FROM t [WHERE ...]} whose WHERE we enforce entirely (applyFilter
   * pushed every conjunct; Trino then asks us to delete by the handle): one
   * commit of the C row-change path (hs_table_change_rows: position deletes or
   * deletion vectors, or copy-on-write by the table's write.delete.mode),
   * decided on the handle's snapshot (a concurrent commit that removed a file
   * it deletes from is a conflict). Anything else Trino must evaluate row by
   * row (LIKE, a float column, an expression) would need MERGE: refused.
   */
  @Override
  public Optional<ConnectorTableHandle> applyDelete(ConnectorSession session,
      ConnectorTableHandle table) {
    HsTableHandle h = (HsTableHandle) table;
    if (h.topKColumn() != null || h.limit() >= 0 || h.aggregates() != null) {
      return Optional.empty();
    }
    return Optional.of(h);
  }

  @Override
  public OptionalLong executeDelete(ConnectorSession session, ConnectorTableHandle table) {
    HsTableHandle h = (HsTableHandle) table;
    if (h.snapshotId() < 0 || h.constraint().isNone()) return OptionalLong.of(0);
    try (HsTable t = HsTable.open(h.path())) { // its own handle: the commit moves it on
      return OptionalLong.of(t.deleteRows(h.snapshotId(), h.filter()));
    } catch (HyperStreamException e) {
      throw HsErrors.of(e, h.name() + ": DELETE");
    }
  }

  /** Row ids exist for Trino's DELETE analysis only: a DELETE runs as applyDelete. */
  @Override
  public ColumnHandle getMergeRowIdColumnHandle(ConnectorSession session,
      ConnectorTableHandle table) {
    return new HsColumnHandle("$row_id", BigintType.BIGINT, null);
  }

  @Override
  public RowChangeParadigm getRowChangeParadigm(ConnectorSession session,
      ConnectorTableHandle table) {
    return RowChangeParadigm.DELETE_ROW_AND_INSERT_ROW;
  }

  @Override
  public ConnectorMergeTableHandle beginMerge(ConnectorSession session,
      ConnectorTableHandle table, Map<Integer, Collection<ColumnHandle>> updateCaseColumns,
      RetryMode retryMode) {
    HsTableHandle h = (HsTableHandle) table;
    throw new TrinoException(StandardErrorCode.NOT_SUPPORTED, "hyperstream: " + h.name()
        + ": only a DELETE whose WHERE is pushed whole (comparisons, IN, IS [NOT] NULL) is "
        + "supported; UPDATE and MERGE are not");
  }

  @Override
  public Optional<ConstraintApplicationResult<ConnectorTableHandle>> applyFilter(
      ConnectorSession session, ConnectorTableHandle table, Constraint constraint) {
    HsTableHandle h = (HsTableHandle) table;
    if (h.topKColumn() != null || h.limit() >= 0 || h.aggregates() != null) {
      return Optional.empty(); // filter after them
    }
    TupleDomain<ColumnHandle> summary = constraint.getSummary();
    if (summary.isNone()) {
      if (h.constraint().isNone()) return Optional.empty();
      return Optional.of(new ConstraintApplicationResult<>(
          h.withFilter(TupleDomain.none(), "FALSE"), TupleDomain.all(), constraint.getExpression(),
          false));
    }
    Map<HsColumnHandle, Domain> pushed = new LinkedHashMap<>();
    Map<ColumnHandle, Domain> remaining = new LinkedHashMap<>();
    for (Map.Entry<ColumnHandle, Domain> e : summary.getDomains().orElseThrow().entrySet()) {
      HsColumnHandle c = (HsColumnHandle) e.getKey();
      if (!c.plain() || !HsFilters.pushable(c.type())) {
        remaining.put(c, e.getValue());
        continue;
      }
      pushed.put(c, e.getValue());
    }
    TupleDomain<HsColumnHandle> next = h.constraint().intersect(TupleDomain.withColumnDomains(pushed));
    if (next.equals(h.constraint())) return Optional.empty();
    return Optional.of(new ConstraintApplicationResult<>(h.withFilter(next, HsFilters.toSql(next)),
        TupleDomain.withColumnDomains(remaining), constraint.getExpression(), false));
  }

  @Override
  public Optional<LimitApplicationResult<ConnectorTableHandle>> applyLimit(
      ConnectorSession session, ConnectorTableHandle table, long limit) {
    HsTableHandle h = (HsTableHandle) table;
    if (h.topKColumn() != null || h.aggregates() != null
        || (h.limit() >= 0 && h.limit() <= limit)) {
      return Optional.empty();
    }
    return Optional.of(new LimitApplicationResult<>(h.withLimit(limit), false, false));
  }

  @Override
  public Optional<ProjectionApplicationResult<ConnectorTableHandle>> applyProjection(
      ConnectorSession session, ConnectorTableHandle table, List<ConnectorExpression> projections,
      Map<String, ColumnHandle> assignments) {
    if (((HsTableHandle) table).aggregates() != null) return Optional.empty();
    List<ConnectorExpression> out = new ArrayList<>();
    Map<String, Assignment> assigned = new LinkedHashMap<>();
    boolean changed = false;
    for (ConnectorExpression e : projections) {
      HsColumnHandle d = distance(e, assignments);
      if (d == null) {
        out.add(e);
        continue;
      }
      changed = true;
      out.add(new Variable(d.name(), DoubleType.DOUBLE));
      assigned.put(d.name(), new Assignment(d.name(), d, DoubleType.DOUBLE));
    }
    if (!changed) return Optional.empty();
    for (Map.Entry<String, ColumnHandle> a : assignments.entrySet()) {
      HsColumnHandle c = (HsColumnHandle) a.getValue();
      assigned.putIfAbsent(a.getKey(), new Assignment(a.getKey(), c, c.type()));
    }
    return Optional.of(new ProjectionApplicationResult<>(table, out,
        new ArrayList<>(assigned.values()), false));
  }

  /** {@code f(vector, ARRAY[...])} (either order) as a distance column, or null. */
  private static HsColumnHandle distance(ConnectorExpression e, Map<String, ColumnHandle> cols) {
    if (!(e instanceof Call call) || call.getFunctionName().getCatalogSchema().isPresent()) {
      return null;
    }
    String fn = call.getFunctionName().getName();
    if (HsDistanceFunctions.metric(fn) == null || call.getArguments().size() != 2) return null;
    ConnectorExpression a = call.getArguments().get(0), b = call.getArguments().get(1);
    if (!(a instanceof Variable)) {
      ConnectorExpression t = a;
      a = b;
      b = t;
    }
    if (!(a instanceof Variable v)) return null;
    if (!(cols.get(v.getName()) instanceof HsColumnHandle col) || !col.plain()
        || !(col.type() instanceof ArrayType at) || !(at.getElementType() instanceof RealType)) {
      return null;
    }
    float[] query = constantVector(b);
    if (query == null) return null;
    HsColumnHandle.HsDistance d = new HsColumnHandle.HsDistance(fn, col.name(), query);
    String name = "$" + fn + "_" + col.name() + "_" + Integer.toHexString(d.hashCode());
    return new HsColumnHandle(name, DoubleType.DOUBLE, d);
  }

  /**
   * A constant array of numbers as floats, or null: {@code ARRAY[...]}
   * folded to array(real), or a cast of a constant numeric array to it
   * (decimal literals with many digits stay a cast).
   */
  private static float[] constantVector(ConnectorExpression e) {
    if (e instanceof Call c && c.getFunctionName().equals(StandardFunctions.CAST_FUNCTION_NAME)
        && c.getArguments().size() == 1) {
      e = c.getArguments().get(0);
    }
    if (!(e instanceof Constant k) || k.getValue() == null
        || !(k.getType() instanceof ArrayType kt)) {
      return null;
    }
    Type et = kt.getElementType();
    Block q = (Block) k.getValue();
    float[] out = new float[q.getPositionCount()];
    for (int i = 0; i < out.length; i++) {
      if (q.isNull(i)) return null;
      if (et instanceof RealType) {
        out[i] = RealType.REAL.getFloat(q, i);
      } else if (et instanceof DoubleType) {
        out[i] = (float) DoubleType.DOUBLE.getDouble(q, i);
      } else if (et instanceof DecimalType dt) {
        java.math.BigInteger u = dt.isShort() ? java.math.BigInteger.valueOf(dt.getLong(q, i))
            : ((Int128) dt.getObject(q, i)).toBigInteger();
        out[i] = (float) new java.math.BigDecimal(u, dt.getScale()).doubleValue();
      } else if (et instanceof BigintType || et instanceof IntegerType
          || et instanceof SmallintType || et instanceof TinyintType) {
        out[i] = (float) et.getLong(q, i);
      } else {
        return null;
      }
    }
    return out;
  }

  /**
   * A global aggregate (no GROUP BY) of functions HsAggregates computes, over
   * a scan whose filter we enforce whole, when the plan is at most one split
   * (the filter's candidates pack into one, or one file): the split's page
   * source returns the one row, so the query is one fragment (no partial and
   * final aggregation with an exchange between). Several splits stay Trino's
   * to aggregate in parallel.
   */
  @Override
  public Optional<AggregationApplicationResult<ConnectorTableHandle>> applyAggregation(
      ConnectorSession session, ConnectorTableHandle table, List<AggregateFunction> aggregates,
      Map<String, ColumnHandle> assignments, List<List<ColumnHandle>> groupingSets) {
    HsTableHandle h = (HsTableHandle) table;
    if (h.topKColumn() != null || h.limit() >= 0 || h.aggregates() != null
        || aggregates.isEmpty() || groupingSets.size() > 1
        || (groupingSets.size() == 1 && !groupingSets.get(0).isEmpty())) {
      return Optional.empty();
    }
    List<HsColumnHandle> cols = HsAggregates.columns(aggregates, assignments);
    if (cols == null) return Optional.empty();
    if (h.snapshotId() >= 0 && !h.constraint().isNone()
        && SplitGroups.group(plan(h), 0, HsSplitManager.ROWS_PER_SPLIT).size() > 1) {
      return Optional.empty();
    }
    List<ConnectorExpression> projections = new ArrayList<>();
    List<Assignment> assigned = new ArrayList<>();
    for (HsColumnHandle c : cols) {
      projections.add(new Variable(c.name(), c.type()));
      assigned.add(new Assignment(c.name(), c, c.type()));
    }
    return Optional.of(new AggregationApplicationResult<>(h.withAggregates(cols), projections,
        assigned, Map.of(), false));
  }

  @Override
  public Optional<TopNApplicationResult<ConnectorTableHandle>> applyTopN(
      ConnectorSession session, ConnectorTableHandle table, long topNCount,
      List<SortItem> sortItems, Map<String, ColumnHandle> assignments) {
    HsTableHandle h = (HsTableHandle) table;
    if (h.topKColumn() != null || h.limit() >= 0 || h.aggregates() != null
        || sortItems.size() != 1 || topNCount < 1) {
      return Optional.empty();
    }
    SortItem s = sortItems.get(0);
    if (!(assignments.get(s.getName()) instanceof HsColumnHandle c) || c.distance() == null) {
      return Optional.empty();
    }
    SortOrder want = HsDistanceFunctions.metric(c.distance().function()).equals("ip")
        ? SortOrder.DESC_NULLS_LAST : SortOrder.ASC_NULLS_LAST;
    if (s.getSortOrder() != want) return Optional.empty();
    return Optional.of(new TopNApplicationResult<>(h.withTopK(c, topNCount), true, false));
  }
}
