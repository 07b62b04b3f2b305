package org.hyperstreamdb.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/**
 * Pushdown: filters become our filter text (HsFilters), the projection our
 * column list, the limit each task's row limit (Spark keeps its own LIMIT
 * above: isPartiallyPushed). A top-k relation takes no pushdown but the
 * projection: WHERE and LIMIT over it are Spark's (they mean "of the k").
 */
final class HsScanBuilder
    implements ScanBuilder, SupportsPushDownFilters, SupportsPushDownRequiredColumns,
        SupportsPushDownLimit {
  private final HsSparkTable table;
  private StructType required;
  private Filter[] pushed = new Filter[0];
  private String filterSql;
  private long limit = -1;

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
      if (HsFilters.needsRecheck(f, table.schema())) left.add(f);
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

  @Override
  public boolean isPartiallyPushed() {
    return true;
  }

  @Override
  public Scan build() {
    return new HsScan(table, required, filterSql, limit);
  }
}
