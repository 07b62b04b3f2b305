package org.hyperstreamdb.spark;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import org.apache.spark.sql.sources.AlwaysFalse;
import org.apache.spark.sql.sources.AlwaysTrue;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;
import org.apache.spark.sql.sources.StringContains;
import org.apache.spark.sql.sources.StringEndsWith;
import org.apache.spark.sql.sources.StringStartsWith;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Spark's data source filters as our filter language (the SQL WHERE text of
 * hs_scan_options.filter, src/query/README.md). A filter we cannot say
 * exactly is not translated (null) and stays with Spark. Top-level columns of
 * boolean, integer, decimal, string, date, timestamp and floating types are
 * pushed, and every pushed filter is enforced: on float and double our
 * language and Spark agree (NaN equals NaN and sorts above every number,
 * -0.0 = 0.0), so Spark need not re-check them. A double value compared
 * with a float column is pushed only when the float holds it exactly.
 */
final class HsFilters {
  private HsFilters() {}

  /** The SQL text of {@code f}, or null when it cannot be pushed. */
  static String toSql(Filter f, StructType schema) {
    if (f instanceof AlwaysTrue) return "TRUE";
    if (f instanceof AlwaysFalse) return "FALSE";
    if (f instanceof And) {
      String l = toSql(((And) f).left(), schema), r = toSql(((And) f).right(), schema);
      return l != null && r != null ? "(" + l + " AND " + r + ")" : null;
    }
    if (f instanceof Or) {
      String l = toSql(((Or) f).left(), schema), r = toSql(((Or) f).right(), schema);
      return l != null && r != null ? "(" + l + " OR " + r + ")" : null;
    }
    if (f instanceof Not) {
      String c = toSql(((Not) f).child(), schema);
      return c != null ? "(NOT " + c + ")" : null;
    }
    if (f instanceof IsNull) {
      String c = col(((IsNull) f).attribute(), schema);
      return c != null ? "(" + c + " IS NULL)" : null;
    }
    if (f instanceof IsNotNull) {
      String c = col(((IsNotNull) f).attribute(), schema);
      return c != null ? "(" + c + " IS NOT NULL)" : null;
    }
    if (f instanceof EqualTo) return cmp(((EqualTo) f).attribute(), "=", ((EqualTo) f).value(), schema);
    if (f instanceof GreaterThan) {
      return cmp(((GreaterThan) f).attribute(), ">", ((GreaterThan) f).value(), schema);
    }
    if (f instanceof GreaterThanOrEqual) {
      return cmp(((GreaterThanOrEqual) f).attribute(), ">=", ((GreaterThanOrEqual) f).value(),
          schema);
    }
    if (f instanceof LessThan) return cmp(((LessThan) f).attribute(), "<", ((LessThan) f).value(), schema);
    if (f instanceof LessThanOrEqual) {
      return cmp(((LessThanOrEqual) f).attribute(), "<=", ((LessThanOrEqual) f).value(), schema);
    }
    if (f instanceof In) {
      In in = (In) f;
      String c = col(in.attribute(), schema);
      if (c == null || in.values().length == 0) return null;
      DataType t = schema.apply(in.attribute()).dataType();
      StringBuilder sb = new StringBuilder("(").append(c).append(" IN (");
      for (int i = 0; i < in.values().length; i++) {
        String v = literal(in.values()[i], t);
        if (v == null) return null;
        sb.append(i > 0 ? ", " : "").append(v);
      }
      return sb.append("))").toString();
    }
    if (f instanceof StringStartsWith) {
      return like(((StringStartsWith) f).attribute(), "", ((StringStartsWith) f).value(), "%",
          schema);
    }
    if (f instanceof StringEndsWith) {
      return like(((StringEndsWith) f).attribute(), "%", ((StringEndsWith) f).value(), "",
          schema);
    }
    if (f instanceof StringContains) {
      return like(((StringContains) f).attribute(), "%", ((StringContains) f).value(), "%",
          schema);
    }
    return null;
  }

  private static String cmp(String attr, String op, Object value, StructType schema) {
    String c = col(attr, schema);
    if (c == null) return null;
    String v = literal(value, schema.apply(attr).dataType());
    return v != null ? "(" + c + " " + op + " " + v + ")" : null;
  }

  private static String like(String attr, String pre, String value, String post,
      StructType schema) {
    String c = col(attr, schema);
    if (c == null || schema.apply(attr).dataType() != DataTypes.StringType) return null;
    StringBuilder sb = new StringBuilder();
    for (char ch : value.toCharArray()) {
      if (ch == '%' || ch == '_' || ch == '\\') sb.append('\\');
      sb.append(ch);
    }
    return "(" + c + " LIKE " + quote(pre + sb + post) + ")";
  }

  /** A quoted top-level column of a pushable type, or null. */
  private static String col(String attr, StructType schema) {
    if (attr.contains(".") || attr.contains("`") || attr.contains("\"")) return null;
    if (!schema.getFieldIndex(attr).isDefined()) return null;
    StructField fld = schema.apply(attr);
    if (!pushable(fld.dataType())) return null;
    return "\"" + attr + "\"";
  }

  private static boolean pushable(DataType t) {
    return t == DataTypes.BooleanType || t == DataTypes.ByteType || t == DataTypes.ShortType
        || t == DataTypes.IntegerType || t == DataTypes.LongType || t == DataTypes.FloatType
        || t == DataTypes.DoubleType || t == DataTypes.StringType || t == DataTypes.DateType
        || t == DataTypes.TimestampType || t == DataTypes.TimestampNTZType
        || t instanceof DecimalType;
  }

  private static String quote(String s) {
    return "'" + s.replace("'", "''") + "'";
  }

  /** {@code v} (Spark's external value) as a literal of the column's type, or null. */
  private static String literal(Object v, DataType t) {
    if (v == null) return null; // comparisons with NULL: Spark simplifies them itself
    if (v instanceof Boolean) return ((Boolean) v) ? "TRUE" : "FALSE";
    if (v instanceof Byte || v instanceof Short || v instanceof Integer || v instanceof Long) {
      return v.toString();
    }
    if (v instanceof Float || v instanceof Double) {
      double d = ((Number) v).doubleValue();
      if (t == DataTypes.FloatType && v instanceof Double && !Double.isNaN(d)
          && (double) (float) d != d) {
        return null; // our scan would round it to the column's float
      }
      if (Double.isNaN(d)) return "'NaN'";
      if (Double.isInfinite(d)) return d > 0 ? "'Infinity'" : "'-Infinity'";
      // The shortest decimal that reads back as the value in its own width.
      return v instanceof Float ? new BigDecimal(Float.toString((Float) v)).toPlainString()
                                : new BigDecimal(Double.toString((Double) v)).toPlainString();
    }
    if (v instanceof BigDecimal) return ((BigDecimal) v).toPlainString();
    if (v instanceof String) return t == DataTypes.StringType ? quote((String) v) : null;
    if (v instanceof LocalDate) return quote(v.toString());
    if (v instanceof java.sql.Date) return quote(((java.sql.Date) v).toLocalDate().toString());
    if (v instanceof Instant) return quote(v.toString());
    if (v instanceof java.sql.Timestamp) return quote(((java.sql.Timestamp) v).toInstant().toString());
    if (v instanceof LocalDateTime) {
      return quote(((LocalDateTime) v).atOffset(ZoneOffset.UTC).toInstant().toString());
    }
    return null;
  }
}
