package org.hyperstreamdb.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownTopN;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.expressions.UserDefinedScalarFunc;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/**
 * Pushdown: filters become our filter text (HsFilters), the projection our
 * column list, the limit each task's row limit (Spark keeps its own LIMIT
 * above: isPartiallyPushed), ORDER BY a distance function LIMIT k our vector
 * top-k (whole: Spark neither sorts nor limits its rows again). A top-k
 * relation (the vector options) takes no pushdown but the
 * projection: WHERE and LIMIT over it are Spark's (they mean "of the k").
 */
final class HsScanBuilder
    implements ScanBuilder, SupportsPushDownFilters, SupportsPushDownRequiredColumns,
        SupportsPushDownLimit, SupportsPushDownTopN {
  private final HsSparkTable table;
  private StructType required;
  private Filter[] pushed = new Filter[0];
  private String filterSql;
  private long limit = -1;
  private VectorSpec topN; // ORDER BY a distance function LIMIT k, pushed

  HsScanBuilder(HsSparkTable table) {
    this.table = table;
    this.required = table.schema();
  }

  @Override
  public Filter[] pushFilters(Filter[] filters) {
    if (table.opts.isVector()) return filters;
    List<Filter> done = new ArrayList<>();
    List<Filter> left = new ArrayList<>();
    List<String> sql = new ArrayList<>();
    for (Filter f : filters) {
      String s = HsFilters.toSql(f, table.schema());
      if (s == null) {
        left.add(f);
        continue;
      }
      sql.add(s);
      done.add(f);
    }
    pushed = done.toArray(new Filter[0]);
    filterSql = sql.isEmpty() ? null : String.join(" AND ", sql);
    return left.toArray(new Filter[0]);
  }

  @Override
  public Filter[] pushedFilters() {
    return pushed;
  }

  @Override
  public void pruneColumns(StructType requiredSchema) {
    required = requiredSchema;
  }

  @Override
  public boolean pushLimit(int n) {
    if (table.opts.isVector()) return false;
    limit = n;
    return true;
  }

  /**
   * ORDER BY l2_distance(col, literal) [ASC] / cosine_distance ASC /
   * inner_product DESC, LIMIT k: our vector top-k with the pushed filter as
   * pre-filter.
   */
  @Override
  public boolean pushTopN(SortOrder[] orders, int k) {
    if (table.opts.isVector() || orders.length != 1 || k < 1) return false;
    Expression e = orders[0].expression();
    if (!(e instanceof UserDefinedScalarFunc)) return false;
    UserDefinedScalarFunc f = (UserDefinedScalarFunc) e;
    if (!f.canonicalName().startsWith("hyperstream.") || f.children().length != 2) return false;
    String metric = HsFunctions.metric(f.name(), orders[0].direction() == SortDirection.ASCENDING);
    Expression col = f.children()[0], lit = f.children()[1];
    if (metric == null || !(col instanceof NamedReference)
        || ((NamedReference) col).fieldNames().length != 1
        || !(lit instanceof org.apache.spark.sql.connector.expressions.Literal)) {
      return false;
    }
    Object v = ((org.apache.spark.sql.connector.expressions.Literal<?>) lit).value();
    if (!(v instanceof ArrayData)) return false;
    ArrayData a = (ArrayData) v;
    float[] q = new float[a.numElements()];
    for (int i = 0; i < q.length; i++) {
      if (a.isNullAt(i)) return false;
      q[i] = a.getFloat(i);
    }
    String name = ((NamedReference) col).fieldNames()[0];
    if (!table.schema().getFieldIndex(name).isDefined()
        || !(table.schema().apply(name).dataType() instanceof ArrayType)
        || ((ArrayType) table.schema().apply(name).dataType()).elementType()
            != DataTypes.FloatType) {
      return false;
    }
    topN = new VectorSpec(name, q, k, metric, filterSql, 0, 0, false);
    return true;
  }

  /**
   * A limit is partial (Spark keeps its LIMIT over the tasks' rows); a top-k
   * is whole: its k rows come in the search's order (distance, then file and
   * row: Table.search's, ties included), so Spark drops its sort and limit.
   */
  @Override
  public boolean isPartiallyPushed() {
    return topN == null;
  }

  /**
   * A top-k is a LocalScan: its k rows are known while the query is planned
   * (searched on the driver, or by the distributed search's one job:
   * HsVectorPlan), so Spark runs no further job to hand them over. Option
   * {@code local-scan} false: they go through one task instead.
   */
  @Override
  public Scan build() {
    VectorSpec v = topN != null ? topN : VectorSpec.of(table.opts);
    HsScan s = new HsScan(table, required, filterSql, limit, v);
    return v != null && table.opts.localScan ? new HsLocalVectorScan(s) : s;
  }
}
