package org.hyperstreamdb.trino;

import io.airlift.slice.Slice;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import io.trino.spi.type.BigintType;
import io.trino.spi.type.BooleanType;
import io.trino.spi.type.DateType;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.DoubleType;
import io.trino.spi.type.Int128;
import io.trino.spi.type.IntegerType;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.RealType;
import io.trino.spi.type.SmallintType;
import io.trino.spi.type.TimestampType;
import io.trino.spi.type.TimestampWithTimeZoneType;
import io.trino.spi.type.TinyintType;
import io.trino.spi.type.Type;
import io.trino.spi.type.VarcharType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Trino's TupleDomain (what applyFilter is handed) as our filter language
 * (the SQL WHERE text of hs_scan_options.filter, src/query/README.md). Only
 * top-level columns of boolean, integer, decimal, varchar, date, timestamp
 * and floating types are said; a column of another type, or a value we
 * cannot write exactly, is left to Trino. Every pushed domain is enforced.
 *
 * Real and double: Trino's value sets hold NaN only when they hold every
 * value (SortedRangeSet.containsValue), and a domain Trino keeps is
 * evaluated as comparisons with its bounds (IEEE: NaN compares false,
 * -0.0 = 0.0). Our language orders NaN above every number and equal to
 * itself, with -0.0 = 0.0, so a range open above would keep NaN: such a
 * domain is said with {@code AND col <> 'NaN'}. Bounds of -0.0 are written
 * as 0.0 (equal under both).
 */
final class HsFilters {
  private HsFilters() {}

  /** Whether a domain on a column of {@code t} can be said in our filter language. */
  static boolean pushable(Type t) {
    return t instanceof BooleanType || t instanceof TinyintType || t instanceof SmallintType
        || t instanceof IntegerType || t instanceof BigintType || t instanceof RealType
        || t instanceof DoubleType || t instanceof VarcharType vc && vc.isUnbounded()
        || t instanceof DateType || t instanceof DecimalType
        || t.equals(TimestampType.TIMESTAMP_MICROS)
        || t.equals(TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS);
  }

  /** The text of {@code td} (every column domain AND-ed), or null for "every row". */
  static String toSql(TupleDomain<HsColumnHandle> td) {
    if (td.isNone()) return "FALSE";
    List<String> parts = new ArrayList<>();
    for (Map.Entry<HsColumnHandle, Domain> e : td.getDomains().orElseThrow().entrySet()) {
      String s = domain(quoteIdent(e.getKey().name()), e.getValue());
      if (s != null) parts.add(s);
    }
    return parts.isEmpty() ? null : String.join(" AND ", parts);
  }

  private static String domain(String col, Domain d) {
    if (d.isAll()) return null;
    if (d.isNone()) return "FALSE";
    if (d.isOnlyNull()) return "(" + col + " IS NULL)";
    Type t = d.getType();
    ValueSet vs = d.getValues();
    String values;
    if (vs.isAll()) {
      values = null;
    } else if (vs.isDiscreteSet() || vs.isSingleValue()) {
      List<Object> vals = vs.isSingleValue() ? List.of(vs.getSingleValue()) : vs.getDiscreteSet();
      List<String> lits = new ArrayList<>();
      for (Object v : vals) lits.add(literal(t, v));
      values = lits.size() == 1 ? "(" + col + " = " + lits.get(0) + ")"
                                : "(" + col + " IN (" + String.join(", ", lits) + "))";
    } else {
      List<String> ors = new ArrayList<>();
      boolean openAbove = false;
      for (Range r : vs.getRanges().getOrderedRanges()) {
        ors.add(range(col, t, r));
        openAbove |= !r.isSingleValue() && r.isHighUnbounded();
      }
      values = ors.size() == 1 ? ors.get(0) : "(" + String.join(" OR ", ors) + ")";
      if (openAbove && (t instanceof RealType || t instanceof DoubleType)) {
        values = "(" + values + " AND " + col + " <> 'NaN')";
      }
    }
    if (values == null) return d.isNullAllowed() ? null : "(" + col + " IS NOT NULL)";
    return d.isNullAllowed() ? "(" + values + " OR " + col + " IS NULL)" : values;
  }

  private static String range(String col, Type t, Range r) {
    if (r.isSingleValue()) return "(" + col + " = " + literal(t, r.getSingleValue()) + ")";
    List<String> and = new ArrayList<>();
    if (!r.isLowUnbounded()) {
      and.add(col + (r.isLowInclusive() ? " >= " : " > ") + literal(t, r.getLowBoundedValue()));
    }
    if (!r.isHighUnbounded()) {
      and.add(col + (r.isHighInclusive() ? " <= " : " < ")
          + literal(t, r.getHighBoundedValue()));
    }
    if (and.isEmpty()) return "(" + col + " IS NOT NULL)";
    return "(" + String.join(" AND ", and) + ")";
  }

  /** A value of Trino's native representation of {@code t} as a literal of our language. */
  static String literal(Type t, Object v) {
    if (t instanceof BooleanType) return ((Boolean) v) ? "TRUE" : "FALSE";
    if (t instanceof TinyintType || t instanceof SmallintType || t instanceof IntegerType
        || t instanceof BigintType) {
      return Long.toString((Long) v);
    }
    if (t instanceof RealType) {
      return floating(Float.intBitsToFloat(Math.toIntExact((Long) v)), true);
    }
    if (t instanceof DoubleType) return floating((Double) v, false);
    if (t instanceof VarcharType) return quote(((Slice) v).toStringUtf8());
    if (t instanceof DateType) return quote(LocalDate.ofEpochDay((Long) v).toString());
    if (t instanceof DecimalType dt) {
      BigInteger unscaled = dt.isShort() ? BigInteger.valueOf((Long) v)
                                         : ((Int128) v).toBigInteger();
      return new BigDecimal(unscaled, dt.getScale()).toPlainString();
    }
    if (t.equals(TimestampType.TIMESTAMP_MICROS)) {
      long us = (Long) v;
      return quote(Instant.ofEpochSecond(Math.floorDiv(us, 1_000_000L),
          Math.floorMod(us, 1_000_000L) * 1000L).toString());
    }
    if (t.equals(TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS)) {
      LongTimestampWithTimeZone ts = (LongTimestampWithTimeZone) v;
      long ms = ts.getEpochMillis();
      long nanos = Math.floorMod(ms, 1000L) * 1_000_000L + ts.getPicosOfMilli() / 1000L;
      return quote(Instant.ofEpochSecond(Math.floorDiv(ms, 1000L), nanos).toString());
    }
    throw new IllegalArgumentException("hyperstream: no literal for type " + t);
  }

  private static String floating(double d, boolean single) {
    if (Double.isNaN(d)) return "'NaN'";
    if (Double.isInfinite(d)) return d > 0 ? "'Infinity'" : "'-Infinity'";
    // The shortest decimal that reads back as the value in its own width.
    return single ? new BigDecimal(Float.toString((float) d)).toPlainString()
                  : new BigDecimal(Double.toString(d)).toPlainString();
  }

  static String quote(String s) {
    return "'" + s.replace("'", "''") + "'";
  }

  static String quoteIdent(String s) {
    return "\"" + s.replace("\"", "\"\"") + "\"";
  }
}
