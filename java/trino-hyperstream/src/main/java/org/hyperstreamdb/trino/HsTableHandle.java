package org.hyperstreamdb.trino;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.TupleDomain;

/**
 * A table read at one snapshot, with what HsMetadata pushed into it:
 * {@code constraint} (what Trino handed applyFilter and we enforce),
 * {@code filter} (its text in our filter language, handed to the C scan,
 * which prunes with it and asks the indexes), {@code limit} (-1: none)
 * and {@code topK} (a vector top-k: the k nearest rows by a distance
 * column, {@code filter} as pre-filter) and {@code aggregates} (a global
 * aggregate over the filtered rows, computed in the one split's page source;
 * null: none). {@code toString} is what {@code EXPLAIN} prints.
 */
public final class HsTableHandle implements ConnectorTableHandle {
  private final SchemaTableName name;
  private final String path;
  private final long snapshotId;
  private final String version;
  private final TupleDomain<HsColumnHandle> constraint;
  private final String filter;
  private final long limit;
  private final HsColumnHandle topKColumn;
  private final long topK;
  private final java.util.List<HsColumnHandle> aggregates;

  @JsonCreator
  public HsTableHandle(@JsonProperty("name") SchemaTableName name,
      @JsonProperty("path") String path, @JsonProperty("snapshotId") long snapshotId,
      @JsonProperty("version") String version,
      @JsonProperty("constraint") TupleDomain<HsColumnHandle> constraint,
      @JsonProperty("filter") String filter, @JsonProperty("limit") long limit,
      @JsonProperty("topKColumn") HsColumnHandle topKColumn, @JsonProperty("topK") long topK,
      @JsonProperty("aggregates") java.util.List<HsColumnHandle> aggregates) {
    this.name = name;
    this.path = path;
    this.snapshotId = snapshotId;
    this.version = version;
    this.constraint = constraint;
    this.filter = filter;
    this.limit = limit;
    this.topKColumn = topKColumn;
    this.topK = topK;
    this.aggregates = aggregates == null ? null : java.util.List.copyOf(aggregates);
  }

  static HsTableHandle of(SchemaTableName name, String path, long snapshotId, String version) {
    return new HsTableHandle(name, path, snapshotId, version, TupleDomain.all(), null, -1, null,
        -1, null);
  }

  @JsonProperty
  public SchemaTableName name() {
    return name;
  }

  /** The table folder. */
  @JsonProperty
  public String path() {
    return path;
  }

  /** The snapshot every split reads (-1: the table has none, it is empty). */
  @JsonProperty
  public long snapshotId() {
    return snapshotId;
  }

  /**
   * The metadata file read when the query looked the table up
   * (HsTable.metadataLocation): the key of every handle (HsTableCache), plan
   * (HsPlanCache) and schema this query uses.
   */
  @JsonProperty
  public String version() {
    return version;
  }

  @JsonProperty
  public TupleDomain<HsColumnHandle> constraint() {
    return constraint;
  }

  /** The pushed filter in our filter language, or null. */
  @JsonProperty
  public String filter() {
    return filter;
  }

  @JsonProperty
  public long limit() {
    return limit;
  }

  /** The distance column of a pushed top-k, or null. */
  @JsonProperty
  public HsColumnHandle topKColumn() {
    return topKColumn;
  }

  @JsonProperty
  public long topK() {
    return topK;
  }

  HsTableHandle withFilter(TupleDomain<HsColumnHandle> c, String f) {
    return new HsTableHandle(name, path, snapshotId, version, c, f, limit, topKColumn, topK,
        aggregates);
  }

  HsTableHandle withLimit(long l) {
    return new HsTableHandle(name, path, snapshotId, version, constraint, filter, l, topKColumn,
        topK, aggregates);
  }

  HsTableHandle withTopK(HsColumnHandle column, long k) {
    return new HsTableHandle(name, path, snapshotId, version, constraint, filter, limit, column,
        k, aggregates);
  }

  /** The pushed global aggregates (their columns), or null. */
  @JsonProperty
  public java.util.List<HsColumnHandle> aggregates() {
    return aggregates;
  }

  HsTableHandle withAggregates(java.util.List<HsColumnHandle> a) {
    return new HsTableHandle(name, path, snapshotId, version, constraint, filter, limit, topKColumn,
        topK, a);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof HsTableHandle h && h.name.equals(name) && h.path.equals(path)
        && h.snapshotId == snapshotId && java.util.Objects.equals(h.version, version)
        && h.constraint.equals(constraint)
        && java.util.Objects.equals(h.filter, filter) && h.limit == limit
        && java.util.Objects.equals(h.topKColumn, topKColumn) && h.topK == topK
        && java.util.Objects.equals(h.aggregates, aggregates);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(name, path, snapshotId, version, constraint, filter, limit,
        topKColumn, topK, aggregates);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(name.toString()).append(" snapshot=").append(snapshotId);
    if (filter != null) sb.append(" filter=").append(filter);
    if (limit >= 0) sb.append(" limit=").append(limit);
    if (topKColumn != null) {
      sb.append(" topK=").append(topK).append(" by ").append(topKColumn.distance());
    }
    if (aggregates != null) sb.append(" aggregate=").append(HsAggregates.describe(aggregates));
    return sb.toString();
  }
}
