package org.hyperstreamdb.spark;

import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A fixed_size_list column (our vectors) as a Spark array column, which
 * Spark 3.5's ArrowColumnVector does not read: row i is the child's values
 * [i * width, (i + 1) * width), no copy.
 */
final class FixedListColumnVector extends ColumnVector {
  private final FixedSizeListVector v;
  private final ColumnVector child;
  private final int width;

  FixedListColumnVector(FixedSizeListVector v, DataType type) {
    super(type);
    this.v = v;
    this.width = v.getListSize();
    this.child = HsTypes.wrap(v.getDataVector(), ((ArrayType) type).elementType());
  }

  @Override public void close() { child.close(); }
  @Override public boolean hasNull() { return v.getNullCount() > 0; }
  @Override public int numNulls() { return v.getNullCount(); }
  @Override public boolean isNullAt(int rowId) { return v.isNull(rowId); }
  @Override public ColumnarArray getArray(int rowId) {
    return new ColumnarArray(child, rowId * width, width);
  }
  private static UnsupportedOperationException no() {
    return new UnsupportedOperationException("hyperstream: an array column has no scalar values");
  }
  @Override public boolean getBoolean(int rowId) { throw no(); }
  @Override public byte getByte(int rowId) { throw no(); }
  @Override public short getShort(int rowId) { throw no(); }
  @Override public int getInt(int rowId) { throw no(); }
  @Override public long getLong(int rowId) { throw no(); }
  @Override public float getFloat(int rowId) { throw no(); }
  @Override public double getDouble(int rowId) { throw no(); }
  @Override public ColumnarMap getMap(int ordinal) { throw no(); }
  @Override public Decimal getDecimal(int rowId, int precision, int scale) { throw no(); }
  @Override public UTF8String getUTF8String(int rowId) { throw no(); }
  @Override public byte[] getBinary(int rowId) { throw no(); }
  @Override public ColumnVector getChild(int ordinal) { throw no(); }
}
