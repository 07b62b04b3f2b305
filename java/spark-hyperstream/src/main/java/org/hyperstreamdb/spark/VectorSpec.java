package org.hyperstreamdb.spark;

import java.io.Serializable;

/**
 * One vector top-k: from the options (vector_column, query_vector, k, metric,
 * filter, ...) or from an ORDER BY distance-function LIMIT k that Spark
 * pushed down (HsScanBuilder.pushTopN, the WHERE as the pre-filter).
 */
final class VectorSpec implements Serializable {
  private static final long serialVersionUID = 1L;

  final String column;
  final float[] query;
  final long k;
  final String metric; // null: l2
  final String filter; // the pre-filter (SQL text), or null
  final int efSearch, nprobe;
  final boolean exact;

  VectorSpec(String column, float[] query, long k, String metric, String filter, int efSearch,
      int nprobe, boolean exact) {
    this.column = column;
    this.query = query;
    this.k = k;
    this.metric = metric;
    this.filter = filter;
    this.efSearch = efSearch;
    this.nprobe = nprobe;
    this.exact = exact;
  }

  static VectorSpec of(HsOptions o) {
    return o.isVector() ? new VectorSpec(o.vectorColumn, o.queryVector, o.k, o.metric, o.filter,
        o.efSearch, o.nprobe, o.exact) : null;
  }

  @Override
  public String toString() {
    return "vector_column=" + column + ", k=" + k + ", metric=" + (metric != null ? metric : "l2")
        + ", filter=" + filter;
  }
}
