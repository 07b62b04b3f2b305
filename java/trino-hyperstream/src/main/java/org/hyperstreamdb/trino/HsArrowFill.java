package org.hyperstreamdb.trino;

import io.trino.spi.StandardErrorCode;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.block.SqlRow;
import io.trino.spi.type.ArrayType;
import io.trino.spi.type.BooleanType;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.DoubleType;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.RealType;
import io.trino.spi.type.RowType;
import io.trino.spi.type.Type;
import java.math.BigDecimal;
import java.math.BigInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Trino blocks (an INSERT's pages) copied into Arrow vectors of the table's
 * schema (HsTypes' mapping run backwards): scalars value by value, arrays
 * and rows through their element / field blocks. A vector whose length is
 * not its column's dimension is an error naming the column.
 */
final class HsArrowFill {
  private HsArrowFill() {}

  /** A new vector of field {@code f} holding the {@code n} values of {@code b}. */
  static FieldVector fill(Field f, Type type, Block b, int n, BufferAllocator a, String table) {
    FieldVector v = f.createVector(a);
    try {
      v.setInitialCapacity(n);
      v.allocateNew();
      into(v, type, b, n, table);
      return v;
    } catch (RuntimeException e) {
      v.close();
      throw e;
    }
  }

  private static void into(FieldVector v, Type t, Block b, int n, String table) {
    if (v instanceof FixedSizeListVector fl && t instanceof ArrayType at) {
      int w = fl.getListSize();
      Type et = at.getElementType();
      BlockBuilder elems = et.createBlockBuilder(null, n * w);
      for (int i = 0; i < n; i++) {
        if (b.isNull(i)) {
          fl.setNull(i);
          for (int j = 0; j < w; j++) elems.appendNull();
          continue;
        }
        Block e = at.getObject(b, i);
        if (e.getPositionCount() != w) {
          throw new TrinoException(StandardErrorCode.INVALID_FUNCTION_ARGUMENT, "hyperstream: "
              + table + ": column '" + v.getName() + "' holds vectors of dimension " + w
              + "; a row has " + e.getPositionCount() + " values");
        }
        fl.setNotNull(i);
        for (int j = 0; j < w; j++) et.appendTo(e, j, elems);
      }
      FieldVector child = fl.getDataVector();
      child.setInitialCapacity(n * w);
      child.allocateNew();
      into(child, et, elems.build(), n * w, table);
      fl.setValueCount(n);
      return;
    }
    if (v instanceof ListVector lv && t instanceof ArrayType at) {
      Type et = at.getElementType();
      BlockBuilder elems = et.createBlockBuilder(null, n);
      for (int i = 0; i < n; i++) {
        lv.startNewValue(i);
        if (b.isNull(i)) {
          lv.endValue(i, 0);
          BitVectorHelper.unsetBit(lv.getValidityBuffer(), i);
          continue;
        }
        Block e = at.getObject(b, i);
        for (int j = 0; j < e.getPositionCount(); j++) et.appendTo(e, j, elems);
        lv.endValue(i, e.getPositionCount());
      }
      Block all = elems.build();
      FieldVector child = lv.getDataVector();
      child.setInitialCapacity(all.getPositionCount());
      child.allocateNew();
      into(child, et, all, all.getPositionCount(), table);
      lv.setValueCount(n);
      return;
    }
    if (v instanceof StructVector sv && t instanceof RowType rt) {
      int k = rt.getFields().size();
      BlockBuilder[] fields = new BlockBuilder[k];
      for (int c = 0; c < k; c++) fields[c] = rt.getFields().get(c).getType().createBlockBuilder(null, n);
      for (int i = 0; i < n; i++) {
        if (b.isNull(i)) {
          sv.setNull(i);
          for (BlockBuilder fb : fields) fb.appendNull();
          continue;
        }
        sv.setIndexDefined(i);
        SqlRow row = rt.getObject(b, i);
        for (int c = 0; c < k; c++) {
          rt.getFields().get(c).getType().appendTo(row.getRawFieldBlock(c), row.getRawIndex(),
              fields[c]);
        }
      }
      for (int c = 0; c < k; c++) {
        FieldVector child = (FieldVector) sv.getChildByOrdinal(c);
        child.setInitialCapacity(n);
        child.allocateNew();
        into(child, rt.getFields().get(c).getType(), fields[c].build(), n, table);
      }
      sv.setValueCount(n);
      return;
    }
    for (int i = 0; i < n; i++) {
      if (b.isNull(i)) {
        setNull(v, i);
      } else {
        set(v, t, b, i);
      }
    }
    v.setValueCount(n);
  }

  private static void setNull(FieldVector v, int i) {
    if (v instanceof org.apache.arrow.vector.BaseFixedWidthVector fw) {
      fw.setNull(i);
    } else if (v instanceof org.apache.arrow.vector.BaseVariableWidthVector vw) {
      vw.setNull(i);
    } else {
      throw new IllegalStateException("hyperstream: no null for " + v.getField());
    }
  }

  private static void set(FieldVector v, Type t, Block b, int i) {
    if (v instanceof BitVector x) {
      x.setSafe(i, BooleanType.BOOLEAN.getBoolean(b, i) ? 1 : 0);
    } else if (v instanceof TinyIntVector x) {
      x.setSafe(i, (byte) t.getLong(b, i));
    } else if (v instanceof SmallIntVector x) {
      x.setSafe(i, (short) t.getLong(b, i));
    } else if (v instanceof IntVector x) {
      x.setSafe(i, (int) t.getLong(b, i));
    } else if (v instanceof BigIntVector x) {
      x.setSafe(i, t.getLong(b, i));
    } else if (v instanceof Float4Vector x) {
      x.setSafe(i, RealType.REAL.getFloat(b, i));
    } else if (v instanceof Float8Vector x) {
      x.setSafe(i, DoubleType.DOUBLE.getDouble(b, i));
    } else if (v instanceof VarCharVector x) {
      x.setSafe(i, t.getSlice(b, i).getBytes());
    } else if (v instanceof VarBinaryVector x) {
      x.setSafe(i, t.getSlice(b, i).getBytes());
    } else if (v instanceof DateDayVector x) {
      x.setSafe(i, (int) t.getLong(b, i));
    } else if (v instanceof TimeStampMicroTZVector x) {
      LongTimestampWithTimeZone ts = (LongTimestampWithTimeZone) t.getObject(b, i);
      x.setSafe(i, ts.getEpochMillis() * 1000L + ts.getPicosOfMilli() / 1_000_000);
    } else if (v instanceof TimeStampMicroVector x) {
      x.setSafe(i, t.getLong(b, i));
    } else if (v instanceof DecimalVector x && t instanceof DecimalType d) {
      BigInteger u = d.isShort() ? BigInteger.valueOf(d.getLong(b, i))
                                 : ((Int128) d.getObject(b, i)).toBigInteger();
      x.setSafe(i, new BigDecimal(u, d.getScale()));
    } else {
      throw new TrinoException(StandardErrorCode.NOT_SUPPORTED, "hyperstream: cannot write "
          + t + " into column '" + v.getName() + "' (" + v.getField().getType() + ")");
    }
  }
}
