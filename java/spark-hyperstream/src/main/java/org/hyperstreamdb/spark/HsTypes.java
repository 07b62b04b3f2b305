package org.hyperstreamdb.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;

/**
 * Arrow types as Spark types, and Arrow vectors as Spark column vectors.
 * Types Spark 3.5 cannot hold (time of day, nanosecond timestamps, unsigned
 * integers) are an error naming the column.
 */
final class HsTypes {
  private HsTypes() {}

  static StructType toSpark(Schema schema, String table) {
    List<StructField> fields = new ArrayList<>();
    for (Field f : schema.getFields()) {
      fields.add(new StructField(f.getName(), toSpark(f, f.getName(), table), f.isNullable(),
          Metadata.empty()));
    }
    return new StructType(fields.toArray(new StructField[0]));
  }

  static DataType toSpark(Field f, String where, String table) {
    ArrowType t = f.getType();
    switch (t.getTypeID()) {
      case Bool:
        return DataTypes.BooleanType;
      case Int: {
        ArrowType.Int i = (ArrowType.Int) t;
        if (!i.getIsSigned()) break;
        switch (i.getBitWidth()) {
          case 8: return DataTypes.ByteType;
          case 16: return DataTypes.ShortType;
          case 32: return DataTypes.IntegerType;
          case 64: return DataTypes.LongType;
          default: break;
        }
        break;
      }
      case FloatingPoint: {
        FloatingPointPrecision p = ((ArrowType.FloatingPoint) t).getPrecision();
        if (p == FloatingPointPrecision.SINGLE) return DataTypes.FloatType;
        if (p == FloatingPointPrecision.DOUBLE) return DataTypes.DoubleType;
        break;
      }
      case Utf8:
      case LargeUtf8:
        return DataTypes.StringType;
      case Binary:
      case LargeBinary:
        return DataTypes.BinaryType;
      case Date:
        if (((ArrowType.Date) t).getUnit() == DateUnit.DAY) return DataTypes.DateType;
        break;
      case Timestamp: {
        ArrowType.Timestamp ts = (ArrowType.Timestamp) t;
        if (ts.getUnit() != TimeUnit.MICROSECOND) break;
        return ts.getTimezone() != null ? DataTypes.TimestampType : DataTypes.TimestampNTZType;
      }
      case Decimal: {
        ArrowType.Decimal d = (ArrowType.Decimal) t;
        if (d.getBitWidth() != 128 || d.getPrecision() > 38) break;
        return DataTypes.createDecimalType(d.getPrecision(), d.getScale());
      }
      case List:
      case LargeList:
      case FixedSizeList: {
        Field c = f.getChildren().get(0);
        return DataTypes.createArrayType(toSpark(c, where + ".element", table), c.isNullable());
      }
      case Struct: {
        List<StructField> kids = new ArrayList<>();
        for (Field c : f.getChildren()) {
          kids.add(new StructField(c.getName(), toSpark(c, where + "." + c.getName(), table),
              c.isNullable(), Metadata.empty()));
        }
        return new StructType(kids.toArray(new StructField[0]));
      }
      case Map: {
        Field entries = f.getChildren().get(0);
        Field key = entries.getChildren().get(0), value = entries.getChildren().get(1);
        return DataTypes.createMapType(toSpark(key, where + ".key", table),
            toSpark(value, where + ".value", table), value.isNullable());
      }
      default:
        break;
    }
    throw new UnsupportedOperationException("hyperstream: " + table + ": column '" + where
        + "' has Arrow type " + t + ", which Spark 3.5 cannot read");
  }

  /** A Spark column over an Arrow vector (fixed-size lists through our adapter). */
  static ColumnVector wrap(ValueVector v, DataType type) {
    if (v instanceof FixedSizeListVector) {
      return new FixedListColumnVector((FixedSizeListVector) v, type);
    }
    return new ArrowColumnVector(v);
  }

  static ColumnVector wrapChild(FieldVector v, DataType type) {
    return wrap(v, type);
  }
}
