package org.hyperstreamdb.trino;

import io.trino.spi.StandardErrorCode;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.function.Description;
import io.trino.spi.function.ScalarFunction;
import io.trino.spi.function.SqlNullable;
import io.trino.spi.function.SqlType;
import io.trino.spi.type.DoubleType;
import io.trino.spi.type.RealType;
import io.trino.spi.type.StandardTypes;

/**
 * {@code l2_distance(a, b)} (Euclidean), {@code cosine_distance(a, b)}
 * (1 - cos) and {@code inner_product(a, b)} (a.b) of two vectors, as
 * global Trino functions: an array(real) vector first, then array(real) or
 * array(double) (a query vector of double literals; Trino does not coerce it
 * to real). No (array(double), array(real)) form: beside (real, double) it
 * made {@code l2_distance(v, ARRAY[1.0, 2.0])} (decimal literals, which
 * coerce to both) ambiguous in some JVMs, Trino's most-specific choice
 * depending on the order it lists candidates.
 * Trino's own cosine_distance(array(double), array(double)) stays as it is. Evaluated here row by row where not
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
  public static Double l2Distance(@SqlType("array(real)") Block a,
      @SqlType("array(real)") Block b) {
    return compute("l2_distance", a, false, b, false);
  }

  @ScalarFunction("l2_distance")
  @Description("Euclidean distance of two vectors (hyperstream)")
  @SqlNullable
  @SqlType(StandardTypes.DOUBLE)
  public static Double l2DistanceRealDouble(@SqlType("array(real)") Block a,
      @SqlType("array(double)") Block b) {
    return compute("l2_distance", a, false, b, true);
  }

  @ScalarFunction("cosine_distance")
  @Description("1 - cosine similarity of two vectors (hyperstream)")
  @SqlNullable
  @SqlType(StandardTypes.DOUBLE)
  public static Double cosineDistance(@SqlType("array(real)") Block a,
      @SqlType("array(real)") Block b) {
    return compute("cosine_distance", a, false, b, false);
  }

  @ScalarFunction("cosine_distance")
  @Description("1 - cosine similarity of two vectors (hyperstream)")
  @SqlNullable
  @SqlType(StandardTypes.DOUBLE)
  public static Double cosineDistanceRealDouble(@SqlType("array(real)") Block a,
      @SqlType("array(double)") Block b) {
    return compute("cosine_distance", a, false, b, true);
  }

  @ScalarFunction("inner_product")
  @Description("Inner product of two vectors (hyperstream)")
  @SqlNullable
  @SqlType(StandardTypes.DOUBLE)
  public static Double innerProduct(@SqlType("array(real)") Block a,
      @SqlType("array(real)") Block b) {
    return compute("inner_product", a, false, b, false);
  }

  @ScalarFunction("inner_product")
  @Description("Inner product of two vectors (hyperstream)")
  @SqlNullable
  @SqlType(StandardTypes.DOUBLE)
  public static Double innerProductRealDouble(@SqlType("array(real)") Block a,
      @SqlType("array(double)") Block b) {
    return compute("inner_product", a, false, b, true);
  }

  /** {@code function(a, b)} over two blocks of real elements. */
  static Double compute(String function, Block a, Block b) {
    return compute(function, a, false, b, false);
  }

  /** {@code function(a, b)}; each block holds real elements, or double ones. */
  static Double compute(String function, Block a, boolean aDouble, Block b, boolean bDouble) {
    int n = a.getPositionCount();
    if (n != b.getPositionCount()) {
      throw new TrinoException(StandardErrorCode.INVALID_FUNCTION_ARGUMENT, function
          + ": the vectors have different dimensions (" + n + " and " + b.getPositionCount() + ")");
    }
    double dot = 0, aa = 0, bb = 0, l2 = 0;
    for (int i = 0; i < n; i++) {
      if (a.isNull(i) || b.isNull(i)) return null;
      double x = aDouble ? DoubleType.DOUBLE.getDouble(a, i) : RealType.REAL.getFloat(a, i);
      double y = bDouble ? DoubleType.DOUBLE.getDouble(b, i) : RealType.REAL.getFloat(b, i);
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
