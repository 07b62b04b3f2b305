package org.hyperstreamdb.trino;

import io.trino.spi.StandardErrorCode;
import io.trino.spi.TrinoException;
import io.trino.spi.type.ArrayType;
import io.trino.spi.type.BigintType;
import io.trino.spi.type.BooleanType;
import io.trino.spi.type.DateType;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.DoubleType;
import io.trino.spi.type.IntegerType;
import io.trino.spi.type.RealType;
import io.trino.spi.type.RowType;
import io.trino.spi.type.SmallintType;
import io.trino.spi.type.TimestampType;
import io.trino.spi.type.TimestampWithTimeZoneType;
import io.trino.spi.type.TinyintType;
import io.trino.spi.type.Type;
import io.trino.spi.type.VarbinaryType;
import io.trino.spi.type.VarcharType;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Arrow types (the scan's read schema) as Trino types. Vectors
 * (fixed-size lists of float32) are array(real); timestamps are
 * microsecond precision, with time zone when the Arrow type has one (UTC).
 * Types Trino cannot hold here (unsigned integers, time of day, maps,
 * nanosecond timestamps) are an error naming the column.
 */
final class HsTypes {
  private HsTypes() {}

  static Type toTrino(Field f, String where, String table) {
    ArrowType t = f.getType();
    switch (t.getTypeID()) {
      case Bool:
        return BooleanType.BOOLEAN;
      case Int: {
        ArrowType.Int i = (ArrowType.Int) t;
        if (!i.getIsSigned()) break;
        switch (i.getBitWidth()) {
          case 8: return TinyintType.TINYINT;
          case 16: return SmallintType.SMALLINT;
          case 32: return IntegerType.INTEGER;
          case 64: return BigintType.BIGINT;
          default: break;
        }
        break;
      }
      case FloatingPoint: {
        FloatingPointPrecision p = ((ArrowType.FloatingPoint) t).getPrecision();
        if (p == FloatingPointPrecision.SINGLE) return RealType.REAL;
        if (p == FloatingPointPrecision.DOUBLE) return DoubleType.DOUBLE;
        break;
      }
      case Utf8:
      case LargeUtf8:
        return VarcharType.VARCHAR;
      case Binary:
      case LargeBinary:
        return VarbinaryType.VARBINARY;
      case Date:
        if (((ArrowType.Date) t).getUnit() == DateUnit.DAY) return DateType.DATE;
        break;
      case Timestamp: {
        ArrowType.Timestamp ts = (ArrowType.Timestamp) t;
        if (ts.getUnit() != TimeUnit.MICROSECOND) break;
        return ts.getTimezone() != null ? TimestampWithTimeZoneType.TIMESTAMP_TZ_MICROS
                                        : TimestampType.TIMESTAMP_MICROS;
      }
      case Decimal: {
        ArrowType.Decimal d = (ArrowType.Decimal) t;
        if (d.getBitWidth() != 128 || d.getPrecision() > 38) break;
        return DecimalType.createDecimalType(d.getPrecision(), d.getScale());
      }
      case List:
      case LargeList:
      case FixedSizeList:
        return new ArrayType(toTrino(f.getChildren().get(0), where + ".element", table));
      case Struct: {
        List<RowType.Field> kids = new ArrayList<>();
        for (Field c : f.getChildren()) {
          kids.add(RowType.field(c.getName(), toTrino(c, where + "." + c.getName(), table)));
        }
        return RowType.from(kids);
      }
      default:
        break;
    }
    throw new TrinoException(StandardErrorCode.NOT_SUPPORTED, "hyperstream: " + table
        + ": column '" + where + "' has Arrow type " + t + ", which this connector cannot read");
  }

  /** Whether {@code f} is a vector: a list of float32 (fixed-size or not). */
  /**
   * A Trino column type as the Arrow field a new table gets (CREATE TABLE; the
   * Iceberg mapping assigns field ids): the inverse of toTrino, arrays as lists
   * (array(real) is a list of float32: a vector column's dimension is not
   * known here). Other types are NOT_SUPPORTED naming the column.
   */
  static Field toArrow(String name, Type t, String table) {
    ArrowType a;
    List<Field> children = new ArrayList<>();
    if (t instanceof BooleanType) {
      a = ArrowType.Bool.INSTANCE;
    } else if (t instanceof TinyintType) {
      a = new ArrowType.Int(8, true);
    } else if (t instanceof SmallintType) {
      a = new ArrowType.Int(16, true);
    } else if (t instanceof IntegerType) {
      a = new ArrowType.Int(32, true);
    } else if (t instanceof BigintType) {
      a = new ArrowType.Int(64, true);
    } else if (t instanceof RealType) {
      a = new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
    } else if (t instanceof DoubleType) {
      a = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
    } else if (t instanceof VarcharType) {
      a = ArrowType.Utf8.INSTANCE;
    } else if (t instanceof VarbinaryType) {
      a = ArrowType.Binary.INSTANCE;
    } else if (t instanceof DateType) {
      a = new ArrowType.Date(DateUnit.DAY);
    } else if (t instanceof TimestampType ts && ts.getPrecision() == 6) {
      a = new ArrowType.Timestamp(TimeUnit.MICROSECOND, null);
    } else if (t instanceof TimestampWithTimeZoneType tz && tz.getPrecision() == 6) {
      a = new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC");
    } else if (t instanceof DecimalType d) {
      a = new ArrowType.Decimal(d.getPrecision(), d.getScale(), 128);
    } else if (t instanceof ArrayType at) {
      a = ArrowType.List.INSTANCE;
      children.add(toArrow("element", at.getElementType(), table));
    } else if (t instanceof RowType rt) {
      a = ArrowType.Struct.INSTANCE;
      for (RowType.Field f : rt.getFields()) {
        if (f.getName().isEmpty()) {
          throw new TrinoException(StandardErrorCode.NOT_SUPPORTED, "hyperstream: " + table
              + ": column " + name + ": row fields need names");
        }
        children.add(toArrow(f.getName().get(), f.getType(), table));
      }
    } else {
      throw new TrinoException(StandardErrorCode.NOT_SUPPORTED, "hyperstream: " + table
          + ": column " + name + ": cannot create a column of type " + t
          + " (timestamps are timestamp(6) [with time zone])");
    }
    return new Field(name, org.apache.arrow.vector.types.pojo.FieldType.nullable(a), children);
  }

  static boolean isFloatVector(Field f) {
    ArrowType.ArrowTypeID id = f.getType().getTypeID();
    if (id != ArrowType.ArrowTypeID.FixedSizeList && id != ArrowType.ArrowTypeID.List) {
      return false;
    }
    ArrowType c = f.getChildren().get(0).getType();
    return c instanceof ArrowType.FloatingPoint fp
        && fp.getPrecision() == FloatingPointPrecision.SINGLE;
  }
}
