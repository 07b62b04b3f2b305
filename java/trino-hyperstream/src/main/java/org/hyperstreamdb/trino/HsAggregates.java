package org.hyperstreamdb.trino;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.airlift.slice.Slice;
import io.trino.spi.StandardErrorCode;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.connector.AggregateFunction;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.expression.Variable;
import io.trino.spi.type.BigintType;
import io.trino.spi.type.BooleanType;
import io.trino.spi.type.DateType;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.DoubleType;
import io.trino.spi.type.IntegerType;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.SmallintType;
import io.trino.spi.type.TimestampType;
import io.trino.spi.type.TimestampWithTimeZoneType;
import io.trino.spi.type.TinyintType;
import io.trino.spi.type.Type;
import io.trino.spi.type.VarcharType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A global aggregate the connector computes (HsMetadata.applyAggregation):
 * {@code count(*)}, {@code count(x)}, {@code count_if(b)}, {@code sum} of
 * bigint (overflow an error, as Trino's) and double columns, {@code min} /
 * {@code max} of integers, dates, timestamps [with time zone], short decimals and varchar
 * (UTF-8 byte order, which is Trino's). Pushed only when the whole answer is
 * one split's (the pushed filter's candidates fit one packed split, or the
 * table has one file): the page source then returns the one row, and the
 * query is one fragment instead of a scan, an exchange and a final
 * aggregation. Anything else (DISTINCT, FILTER, ORDER BY inside, other
 * functions or types, GROUP BY) stays with Trino.
 */
public final class HsAggregates {
  private HsAggregates() {}

  /** {@code function(argument)}; {@code argument} null for count(*). */
  public record Agg(@JsonProperty("function") String function,
      @JsonProperty("argument") String argument, @JsonProperty("argumentType") Type argumentType,
      @JsonProperty("outputType") Type outputType) {
    @JsonCreator
    public Agg {}

    @Override
    public String toString() {
      return function + "(" + (argument == null ? "*" : argument) + ")";
    }
  }

  /** The aggregates as our columns, or null when one of them is not ours to compute. */
  static List<HsColumnHandle> columns(List<AggregateFunction> aggs,
      Map<String, ColumnHandle> assignments) {
    List<HsColumnHandle> out = new ArrayList<>();
    for (AggregateFunction f : aggs) {
      if (f.isDistinct() || f.getFilter().isPresent() || !f.getSortItems().isEmpty()) return null;
      HsColumnHandle arg = null;
      if (f.getArguments().size() == 1) {
        if (!(f.getArguments().get(0) instanceof Variable v)
            || !(assignments.get(v.getName()) instanceof HsColumnHandle c) || !c.plain()) {
          return null;
        }
        arg = c;
      } else if (!f.getArguments().isEmpty()) {
        return null;
      }
      Agg a = new Agg(f.getFunctionName(), arg == null ? null : arg.name(),
          arg == null ? null : arg.type(), f.getOutputType());
      if (!supported(a)) return null;
      out.add(new HsColumnHandle("$agg" + out.size() + "_" + a, a.outputType(), null, a));
    }
    return out;
  }

  private static boolean supported(Agg a) {
    Type t = a.argumentType(), o = a.outputType();
    switch (a.function()) {
      case "count":
        return o.equals(BigintType.BIGINT);
      case "count_if":
        return t != null && t.equals(BooleanType.BOOLEAN) && o.equals(BigintType.BIGINT);
      case "sum":
        // (Trino sums smaller integers as sum(CAST(x AS bigint)): a projection, not ours)
        return t != null && t.equals(o)
            && (t.equals(BigintType.BIGINT) || t.equals(DoubleType.DOUBLE));
      case "min":
      case "max":
        return t != null && t.equals(o) && (ordered(t) || comparable(t) || t instanceof VarcharType);
      default:
        return false;
    }
  }

  private static boolean integer(Type t) {
    return t instanceof BigintType || t instanceof IntegerType || t instanceof SmallintType
        || t instanceof TinyintType;
  }

  /** Types whose values are longs in signed order. */
  private static boolean ordered(Type t) {
    return integer(t) || t instanceof DateType
        || (t instanceof TimestampType ts && ts.isShort())
        || (t instanceof DecimalType d && d.isShort());
  }

  /** Types whose values are Comparable objects in Trino's order (instants, zones ignored). */
  private static boolean comparable(Type t) {
    return t instanceof TimestampWithTimeZoneType tz && !tz.isShort();
  }

  /** One aggregate's running value over the pages a split reads. */
  static final class Acc {
    final Agg agg;
    private long count, sum;
    private double dsum;
    private boolean seen;
    private long best;
    private Slice bestSlice;
    private LongTimestampWithTimeZone bestObject;

    Acc(Agg agg) {
      this.agg = agg;
    }

    /** {@code b}: the argument's block (null for count(*)), {@code n} rows. */
    void add(Block b, int n) {
      switch (agg.function()) {
        case "count" -> {
          if (b == null) {
            count += n;
          } else {
            for (int i = 0; i < n; i++) if (!b.isNull(i)) count++;
          }
        }
        case "count_if" -> {
          for (int i = 0; i < n; i++) {
            if (!b.isNull(i) && BooleanType.BOOLEAN.getBoolean(b, i)) count++;
          }
        }
        case "sum" -> {
          Type t = agg.argumentType();
          for (int i = 0; i < n; i++) {
            if (b.isNull(i)) continue;
            seen = true;
            if (t.equals(DoubleType.DOUBLE)) {
              dsum += DoubleType.DOUBLE.getDouble(b, i);
            } else {
              try {
                sum = Math.addExact(sum, t.getLong(b, i));
              } catch (ArithmeticException e) {
                throw new TrinoException(StandardErrorCode.NUMERIC_VALUE_OUT_OF_RANGE,
                    "bigint addition overflow: sum(" + agg.argument() + ")");
              }
            }
          }
        }
        default -> minMax(b, n, agg.function().equals("max"));
      }
    }

    private void minMax(Block b, int n, boolean max) {
      Type t = agg.argumentType();
      for (int i = 0; i < n; i++) {
        if (b.isNull(i)) continue;
        if (t instanceof VarcharType) {
          Slice s = t.getSlice(b, i);
          if (!seen || (max ? s.compareTo(bestSlice) > 0 : s.compareTo(bestSlice) < 0)) {
            bestSlice = s.copy(); // the page's bytes go away with it
          }
        } else if (comparable(t)) {
          LongTimestampWithTimeZone v = (LongTimestampWithTimeZone) t.getObject(b, i);
          if (!seen || (max ? v.compareTo(bestObject) > 0 : v.compareTo(bestObject) < 0)) {
            bestObject = v;
          }
        } else {
          long v = t.getLong(b, i);
          if (!seen || (max ? v > best : v < best)) best = v;
        }
        seen = true;
      }
    }

    void write(BlockBuilder out) {
      Type o = agg.outputType();
      switch (agg.function()) {
        case "count", "count_if" -> BigintType.BIGINT.writeLong(out, count);
        case "sum" -> {
          if (!seen) {
            out.appendNull();
          } else if (o.equals(DoubleType.DOUBLE)) {
            DoubleType.DOUBLE.writeDouble(out, dsum);
          } else {
            BigintType.BIGINT.writeLong(out, sum);
          }
        }
        default -> {
          if (!seen) {
            out.appendNull();
          } else if (o instanceof VarcharType) {
            o.writeSlice(out, bestSlice);
          } else if (comparable(o)) {
            o.writeObject(out, bestObject);
          } else {
            o.writeLong(out, best);
          }
        }
      }
    }
  }

  /** The columns the aggregates read (count(*) none). */
  static List<String> arguments(List<HsColumnHandle> aggs) {
    List<String> out = new ArrayList<>();
    for (HsColumnHandle c : aggs) {
      String a = c.aggregate().argument();
      if (a != null && !out.contains(a)) out.add(a);
    }
    return out;
  }

  static String describe(List<HsColumnHandle> aggs) {
    List<String> s = new ArrayList<>();
    for (HsColumnHandle c : aggs) s.add(Objects.toString(c.aggregate()));
    return "[" + String.join(", ", s) + "]";
  }
}
