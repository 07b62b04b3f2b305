package org.hyperstreamdb.trino;

import io.trino.spi.StandardErrorCode;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.function.Description;
import io.trino.spi.function.ScalarFunction;
import io.trino.spi.function.SqlNullable;
import io.trino.spi.function.SqlType;
import io.trino.spi.function.TypeParameter;
import io.trino.spi.type.BigintType;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.DoubleType;
import io.trino.spi.type.Int128;
import io.trino.spi.type.IntegerType;
import io.trino.spi.type.RealType;
import io.trino.spi.type.SmallintType;
import io.trino.spi.type.StandardTypes;
import io.trino.spi.type.TinyintType;
import io.trino.spi.type.Type;
import java.math.BigDecimal;
import java.math.BigInteger;

/**
 * {@code l2_distance(a, b)} (Euclidean), {@code cosine_distance(a, b)}
 * (1 - cos) and {@code inner_product(a, b)} (a.b) of two vectors, as
 * global Trino functions. One generic signature each, {@code (array(T),
 * array(U))} for arrays of any numbers (real, double, decimal, integers),
 * in either order: {@code l2_distance(emb, ARRAY[0.1e0, ...])} and
 * {@code l2_distance(ARRAY[1.0, ...], emb)} both bind exactly, with no
 * coercion, so there is no overload to choose (a set of (real, real), (real,
 * double) and (double, real) forms was ambiguous for decimal literals, which
 * coerce to real and to double: Trino's most-specific choice depended on
 * the order it listed the candidates). Elements are read as their type
 * holds them and computed in double; an array of something else than
 * numbers is an error naming its type. Trino's own
 * cosine_distance(array(double), array(double)) stays as it is (chosen
 * for two double arrays; ours otherwise). Evaluated here row by row where
 * not pushed; over a hyperstream table {@code ORDER BY l2_distance(v,
 * ARRAY[...]) LIMIT k} (cosine_distance ascending, inner_product
 * descending) becomes our vector top-k (HsMetadata.applyTopN). A null
 * vector or element, or a zero vector under cosine, gives NULL; vectors of
 * different lengths are an error naming both.
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
  @TypeParameter("T")
  @TypeParameter("U")
  @SqlNullable
  @SqlType(StandardTypes.DOUBLE)
  public static Double l2Distance(@TypeParameter("T") Type t, @TypeParameter("U") Type u,
      @SqlType("array(T)") Block a, @SqlType("array(U)") Block b) {
    return compute("l2_distance", a, t, b, u);
  }

  @ScalarFunction("cosine_distance")
  @Description("1 - cosine similarity of two vectors (hyperstream)")
  @TypeParameter("T")
  @TypeParameter("U")
  @SqlNullable
  @SqlType(StandardTypes.DOUBLE)
  public static Double cosineDistance(@TypeParameter("T") Type t, @TypeParameter("U") Type u,
      @SqlType("array(T)") Block a, @SqlType("array(U)") Block b) {
    return compute("cosine_distance", a, t, b, u);
  }

  @ScalarFunction("inner_product")
  @Description("Inner product of two vectors (hyperstream)")
  @TypeParameter("T")
  @TypeParameter("U")
  @SqlNullable
  @SqlType(StandardTypes.DOUBLE)
  public static Double innerProduct(@TypeParameter("T") Type t, @TypeParameter("U") Type u,
      @SqlType("array(T)") Block a, @SqlType("array(U)") Block b) {
    return compute("inner_product", a, t, b, u);
  }

  /** {@code function(a, b)} over two blocks of real elements. */
  static Double compute(String function, Block a, Block b) {
    return compute(function, a, RealType.REAL, b, RealType.REAL);
  }

  /** {@code function(a, b)}; the blocks hold elements of types {@code at} and {@code bt}. */
  static Double compute(String function, Block a, Type at, Block b, Type bt) {
    int n = a.getPositionCount();
    if (n != b.getPositionCount()) {
      throw new TrinoException(StandardErrorCode.INVALID_FUNCTION_ARGUMENT, function
          + ": the vectors have different dimensions (" + n + " and " + b.getPositionCount() + ")");
    }
    double dot = 0, aa = 0, bb = 0, l2 = 0;
    for (int i = 0; i < n; i++) {
      if (a.isNull(i) || b.isNull(i)) return null;
      double x = value(function, at, a, i);
      double y = value(function, bt, b, i);
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

  /** Element {@code i} of a block of numbers of type {@code t}, as a double. */
  private static double value(String function, Type t, Block b, int i) {
    if (t instanceof RealType) return RealType.REAL.getFloat(b, i);
    if (t instanceof DoubleType) return DoubleType.DOUBLE.getDouble(b, i);
    if (t instanceof BigintType || t instanceof IntegerType || t instanceof SmallintType
        || t instanceof TinyintType) {
      return t.getLong(b, i);
    }
    if (t instanceof DecimalType d) {
      BigInteger u = d.isShort() ? BigInteger.valueOf(d.getLong(b, i))
          : ((Int128) d.getObject(b, i)).toBigInteger();
      return new BigDecimal(u, d.getScale()).doubleValue();
    }
    throw new TrinoException(StandardErrorCode.INVALID_FUNCTION_ARGUMENT,
        function + ": the vectors must be arrays of numbers, not array(" + t + ")");
  }
}
