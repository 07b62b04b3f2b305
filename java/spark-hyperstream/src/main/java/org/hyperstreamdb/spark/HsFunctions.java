package org.hyperstreamdb.spark;

import java.util.Locale;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.catalog.functions.BoundFunction;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The distance functions of HsCatalog: {@code l2_distance(a, b)},
 * {@code cosine_distance(a, b)} (1 - cos), {@code inner_product(a, b)}
 * (a.b), over array&lt;float&gt; (other numeric arrays are cast). Evaluated
 * by Spark row by row where they are not pushed; {@code ORDER BY
 * l2_distance(v, array(...)) LIMIT k} (cosine_distance ascending,
 * inner_product descending) over our tables becomes our vector top-k
 * (HsScanBuilder.pushTopN). A null argument, or vectors of different
 * lengths, give NULL.
 */
final class HsFunctions {
  static final String[] NAMES = {"l2_distance", "cosine_distance", "inner_product"};

  private HsFunctions() {}

  static UnboundFunction load(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    for (String k : NAMES) {
      if (k.equals(n)) return new Unbound(k);
    }
    return null;
  }

  /** Our metric for an ORDER BY on function {@code name} (ascending or not), or null. */
  static String metric(String name, boolean ascending) {
    switch (name.toLowerCase(Locale.ROOT)) {
      case "l2_distance": return ascending ? "l2" : null;
      case "cosine_distance": return ascending ? "cosine" : null;
      case "inner_product": return ascending ? null : "ip"; // our ip is -a.b, ascending
      default: return null;
    }
  }

  static final class Unbound implements UnboundFunction {
    private final String name;

    Unbound(String name) {
      this.name = name;
    }

    @Override public String name() { return name; }

    @Override
    public String description() {
      return name + "(array<float>, array<float>) -> double (hyperstream)";
    }

    @Override
    public BoundFunction bind(StructType input) {
      if (input.fields().length != 2) {
        throw new UnsupportedOperationException(name + " takes two vectors (arrays of floats)");
      }
      for (int i = 0; i < 2; i++) {
        DataType t = input.fields()[i].dataType();
        if (!(t instanceof ArrayType) || !(((ArrayType) t).elementType() instanceof
            org.apache.spark.sql.types.NumericType)) {
          throw new UnsupportedOperationException(name + ": argument " + (i + 1) + " is " + t
              + ", not an array of numbers");
        }
      }
      return new Bound(name);
    }
  }

  static final class Bound implements ScalarFunction<Double> {
    private final String name;

    Bound(String name) {
      this.name = name;
    }

    @Override public String name() { return name; }
    @Override public String canonicalName() { return "hyperstream." + name; }
    @Override public DataType resultType() { return DataTypes.DoubleType; }
    @Override public boolean isResultNullable() { return true; }

    @Override
    public DataType[] inputTypes() {
      DataType v = DataTypes.createArrayType(DataTypes.FloatType);
      return new DataType[] {v, v};
    }

    @Override
    public Double produceResult(InternalRow row) {
      if (row.isNullAt(0) || row.isNullAt(1)) return null;
      ArrayData a = row.getArray(0), b = row.getArray(1);
      int n = a.numElements();
      if (n != b.numElements()) return null;
      double dot = 0, aa = 0, bb = 0, l2 = 0;
      for (int i = 0; i < n; i++) {
        if (a.isNullAt(i) || b.isNullAt(i)) return null;
        double x = a.getFloat(i), y = b.getFloat(i);
        dot += x * y;
        aa += x * x;
        bb += y * y;
        l2 += (x - y) * (x - y);
      }
      switch (name) {
        case "l2_distance": return Math.sqrt(l2);
        case "inner_product": return dot;
        default: return aa == 0 || bb == 0 ? null : 1.0 - dot / Math.sqrt(aa * bb);
      }
    }
  }
}
