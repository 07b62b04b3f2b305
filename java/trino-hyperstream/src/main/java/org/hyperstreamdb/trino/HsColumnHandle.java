package org.hyperstreamdb.trino;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.type.Type;
import java.util.Arrays;
import java.util.Objects;

/**
 * A column of a table, or a distance the connector computes
 * ({@code distance != null}: {@code l2_distance(vector, query)} and the
 * like, made by HsMetadata.applyProjection; its values come from our vector
 * top-k when one is pushed, else are computed from {@code vector}), or a
 * global aggregate the page source computes ({@code aggregate != null}, made
 * by HsMetadata.applyAggregation).
 */
public final class HsColumnHandle implements ColumnHandle {
  private final String name;
  private final Type type;
  private final HsDistance distance;
  private final HsAggregates.Agg aggregate;

  @JsonCreator
  public HsColumnHandle(@JsonProperty("name") String name, @JsonProperty("type") Type type,
      @JsonProperty("distance") HsDistance distance,
      @JsonProperty("aggregate") HsAggregates.Agg aggregate) {
    this.name = name;
    this.type = type;
    this.distance = distance;
    this.aggregate = aggregate;
  }

  HsColumnHandle(String name, Type type, HsDistance distance) {
    this(name, type, distance, null);
  }

  @JsonProperty
  public String name() {
    return name;
  }

  @JsonProperty
  public Type type() {
    return type;
  }

  /** The distance this column holds, or null for a table column. */
  @JsonProperty
  public HsDistance distance() {
    return distance;
  }

  /** The aggregate this column holds, or null. */
  @JsonProperty
  public HsAggregates.Agg aggregate() {
    return aggregate;
  }

  /** A column of the table (not a distance nor an aggregate). */
  boolean plain() {
    return distance == null && aggregate == null;
  }

  ColumnMetadata metadata() {
    return new ColumnMetadata(name, type);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof HsColumnHandle c && c.name.equals(name) && c.type.equals(type)
        && Objects.equals(c.distance, distance) && Objects.equals(c.aggregate, aggregate);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, type, distance, aggregate);
  }

  @Override
  public String toString() {
    if (aggregate != null) return name + ":=" + aggregate;
    return distance == null ? name + ":" + type : name + ":=" + distance;
  }

  /** {@code function(vector, query)}: a distance function of a vector column and a constant. */
  public static final class HsDistance {
    private final String function;
    private final String vector;
    private final float[] query;

    @JsonCreator
    public HsDistance(@JsonProperty("function") String function,
        @JsonProperty("vector") String vector, @JsonProperty("query") float[] query) {
      this.function = function;
      this.vector = vector;
      this.query = query;
    }

    /** l2_distance, cosine_distance or inner_product. */
    @JsonProperty
    public String function() {
      return function;
    }

    @JsonProperty
    public String vector() {
      return vector;
    }

    @JsonProperty
    public float[] query() {
      return query;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof HsDistance d && d.function.equals(function) && d.vector.equals(vector)
          && Arrays.equals(d.query, query);
    }

    @Override
    public int hashCode() {
      return Objects.hash(function, vector, Arrays.hashCode(query));
    }

    @Override
    public String toString() {
      return function + "(" + vector + ", [" + query.length + " floats])";
    }
  }
}
