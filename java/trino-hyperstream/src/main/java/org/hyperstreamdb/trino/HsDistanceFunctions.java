package org.hyperstreamdb.trino;

import io.trino.spi.StandardErrorCode;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.function.Description;
import io.trino.spi.function.ScalarFunction;
import io.trino.spi.function.SqlNullable;
import io.trino.spi.function.SqlType;
import io.trino.spi.type.RealType;
import io.trino.spi.type.StandardTypes;

/**
 * {@code l2_distance(a, b)} (Euclidean), {@code cosine_distance(a, b)}
 * (1 - cos) and {@code inner_product(a, b)} (a.b) of two array(real)
 * vectors, as global Trino functions. Evaluated here row by row where not
 * pushed; over a hyperstream table {@code ORDER BY l2_distance(v, ARRAY[...])
 * LIMIT k} (cosine_distance ascending, inner_product descending) becomes our
 * vector top-k (HsMetadata.applyTopN). A null vector or element, or a zero
 * vector under cosine, gives NULL; vectors of different lengths are an
 * error naming both.
 */
public final class HsDistanceFunctions {
  private HsDistanceFunctions() {}

  /** Our metric for a function name (its ORDER BY direction: ip descending), or null. */
  static String metric(String function) {
    switch (function) {
      case "l2_distance": return "l2";
      case "cosine_distance": return "cosine";
      case "inner_product": return "ip";
      default: return null;
    }
  }

  @ScalarFunction("l2_distance")
  @Description("Euclidean distance of two vectors (hyperstream)")
  @SqlNullable
  @SqlType(StandardTypes.DOUBLE)
  public static Double l2Distance(@SqlType("array(real)") Block a, @SqlType("array(real)") Block b) {
    return compute("l2_distance", a, b);
  }

  @ScalarFunction("cosine_distance")
  @Description("1 - cosine similarity of two vectors (hyperstream)")
  @SqlNullable
  @SqlType(StandardTypes.DOUBLE)
  public static Double cosineDistance(@SqlType("array(real)") Block a,
      @SqlType("array(real)") Block b) {
    return compute("cosine_distance", a, b);
  }

  @ScalarFunction("inner_product")
  @Description("Inner product of two vectors (hyperstream)")
  @SqlNullable
  @SqlType(StandardTypes.DOUBLE)
  public static Double innerProduct(@SqlType("array(real)") Block a,
      @SqlType("array(real)") Block b) {
    return compute("inner_product", a, b);
  }

  /** {@code function(a, b)} over two blocks of real elements. */
  static Double compute(String function, Block a, Block b) {
    int n = a.getPositionCount();
    if (n != b.getPositionCount()) {
      throw new TrinoException(StandardErrorCode.INVALID_FUNCTION_ARGUMENT, function
          + ": the vectors have different dimensions (" + n + " and " + b.getPositionCount() + ")");
    }
    double dot = 0, aa = 0, bb = 0, l2 = 0;
    for (int i = 0; i < n; i++) {
      if (a.isNull(i) || b.isNull(i)) return null;
      double x = RealType.REAL.getFloat(a, i), y = RealType.REAL.getFloat(b, i);
      dot += x * y;
      aa += x * x;
      bb += y * y;
      l2 += (x - y) * (x - y);
    }
    switch (function) {
      case "l2_distance": return Math.sqrt(l2);
      case "inner_product": return dot;
      default: return aa == 0 || bb == 0 ? null : 1.0 - dot / Math.sqrt(aa * bb);
    }
  }
}
