package org.hyperstreamdb.trino;

import io.airlift.slice.Slices;
import io.trino.spi.block.ArrayBlock;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.block.ByteArrayBlock;
import io.trino.spi.block.Int128ArrayBlock;
import io.trino.spi.block.IntArrayBlock;
import io.trino.spi.block.LongArrayBlock;
import io.trino.spi.block.RowBlock;
import io.trino.spi.block.ShortArrayBlock;
import io.trino.spi.block.VariableWidthBlock;
import io.trino.spi.type.ArrayType;
import io.trino.spi.type.BigintType;
import io.trino.spi.type.IntegerType;
import io.trino.spi.type.SmallintType;
import io.trino.spi.type.TinyintType;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.RowType;
import io.trino.spi.type.TimeZoneKey;
import io.trino.spi.type.TimestampWithTimeZoneType;
import io.trino.spi.type.Type;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

/**
 * Arrow vectors (one batch of the C scan, imported through the C Data
 * Interface) copied into Trino blocks of the types HsTypes maps them to:
 * fixed-width values in bulk from the Arrow buffers, strings as one slice
 * with offsets, lists and structs recursively over their children.
 */
final class HsBlocks {
  private HsBlocks() {}

  static Block toBlock(FieldVector v, Type type) {
    int n = v.getValueCount();
    Optional<boolean[]> nulls = nulls(v, n);
    if (v instanceof BitVector b) {
      byte[] out = new byte[n];
      for (int i = 0; i < n; i++) out[i] = (byte) (b.isNull(i) ? 0 : b.get(i));
      return new ByteArrayBlock(n, nulls, out);
    }
    if (type instanceof TimestampWithTimeZoneType tz && v instanceof TimeStampVector ts) {
      BlockBuilder bb = tz.createBlockBuilder(null, n);
      for (int i = 0; i < n; i++) {
        if (ts.isNull(i)) {
          bb.appendNull();
          continue;
        }
        long us = ts.get(i);
        long ms = Math.floorDiv(us, 1000L);
        int picos = (int) Math.floorMod(us, 1000L) * 1_000_000;
        tz.writeObject(bb, LongTimestampWithTimeZone.fromEpochMillisAndFraction(ms, picos,
            TimeZoneKey.UTC_KEY));
      }
      return bb.build();
    }
    if (type instanceof DecimalType d && v instanceof BaseFixedWidthVector fw) {
      ByteBuffer buf = bytes(fw.getDataBuffer(), 16L * n);
      if (d.isShort()) {
        long[] out = new long[n];
        for (int i = 0; i < n; i++) out[i] = buf.getLong(16 * i); // fits: precision <= 18
        return new LongArrayBlock(n, nulls, out);
      }
      long[] out = new long[2 * n]; // Int128: high, low
      for (int i = 0; i < n; i++) {
        out[2 * i] = buf.getLong(16 * i + 8);
        out[2 * i + 1] = buf.getLong(16 * i);
      }
      return new Int128ArrayBlock(n, nulls, out);
    }
    if ((v instanceof TinyIntVector || v instanceof SmallIntVector || v instanceof IntVector)
        && widthOf(type) > ((BaseFixedWidthVector) v).getTypeWidth()) {
      BaseFixedWidthVector fw = (BaseFixedWidthVector) v;
      return widen(fw, n, nulls, type);
    }
    if (v instanceof BaseFixedWidthVector fw) {
      int width = fw.getTypeWidth();
      ByteBuffer buf = bytes(fw.getDataBuffer(), (long) width * n);
      switch (width) {
        case 1: {
          byte[] out = new byte[n];
          buf.get(0, out);
          return new ByteArrayBlock(n, nulls, out);
        }
        case 2: {
          short[] out = new short[n];
          buf.asShortBuffer().get(out);
          return new ShortArrayBlock(n, nulls, out);
        }
        case 4: {
          int[] out = new int[n]; // int32, date32, float32 (as its bits: Trino's REAL)
          buf.asIntBuffer().get(out);
          return new IntArrayBlock(n, nulls, out);
        }
        case 8: {
          long[] out = new long[n]; // int64, float64 (bits: DOUBLE), timestamp[us]
          buf.asLongBuffer().get(out);
          return new LongArrayBlock(n, nulls, out);
        }
        default:
          break;
      }
    }
    if (v instanceof BaseVariableWidthVector vw) {
      ByteBuffer ob = bytes(vw.getOffsetBuffer(), 4L * (n + 1));
      int[] offsets = new int[n + 1];
      if (n > 0) ob.asIntBuffer().get(offsets);
      int base = offsets[0];
      for (int i = 0; i <= n; i++) offsets[i] -= base;
      byte[] data = new byte[offsets[n]];
      vw.getDataBuffer().getBytes(base, data);
      return new VariableWidthBlock(n, Slices.wrappedBuffer(data), offsets, nulls);
    }
    if (v instanceof BaseLargeVariableWidthVector lw) {
      int[] offsets = new int[n + 1];
      ByteBuffer ob = bytes(lw.getOffsetBuffer(), 8L * (n + 1));
      long base = n > 0 ? ob.getLong(0) : 0;
      for (int i = 0; i <= n; i++) offsets[i] = Math.toIntExact(ob.getLong(8 * i) - base);
      byte[] data = new byte[offsets[n]];
      lw.getDataBuffer().getBytes(base, data);
      return new VariableWidthBlock(n, Slices.wrappedBuffer(data), offsets, nulls);
    }
    if (v instanceof FixedSizeListVector fl && type instanceof ArrayType at) {
      int size = fl.getListSize();
      int[] offsets = new int[n + 1];
      for (int i = 0; i <= n; i++) offsets[i] = i * size;
      Block values = child(fl.getDataVector(), at.getElementType(), (long) n * size);
      return array(n, nulls, offsets, values);
    }
    if (v instanceof ListVector lv && type instanceof ArrayType at) {
      int[] offsets = new int[n + 1];
      ByteBuffer ob = bytes(lv.getOffsetBuffer(), 4L * (n + 1));
      if (n > 0) ob.asIntBuffer().get(offsets);
      Block values = slice(lv.getDataVector(), at.getElementType(), offsets);
      return array(n, nulls, rebase(offsets), values);
    }
    if (v instanceof LargeListVector lv && type instanceof ArrayType at) {
      int[] offsets = new int[n + 1];
      ByteBuffer ob = bytes(lv.getOffsetBuffer(), 8L * (n + 1));
      for (int i = 0; i <= n; i++) offsets[i] = Math.toIntExact(ob.getLong(8 * i));
      Block values = slice(lv.getDataVector(), at.getElementType(), offsets);
      return array(n, nulls, rebase(offsets), values);
    }
    if (v instanceof StructVector sv && type instanceof RowType rt) {
      Block[] fields = new Block[rt.getFields().size()];
      for (int i = 0; i < fields.length; i++) {
        fields[i] = child((FieldVector) sv.getChildByOrdinal(i), rt.getFields().get(i).getType(), n);
      }
      return RowBlock.fromNotNullSuppressedFieldBlocks(n, nulls, fields);
    }
    throw new IllegalStateException("hyperstream: no block for Arrow vector "
        + v.getField() + " as " + type);
  }

  /** Bytes per value of an integer type, 0 for others. */
  private static int widthOf(Type t) {
    if (t instanceof TinyintType) return 1;
    if (t instanceof SmallintType) return 2;
    if (t instanceof IntegerType) return 4;
    if (t instanceof BigintType) return 8;
    return 0;
  }

  /**
   * Narrow signed integers as a wider Trino integer type: a file may hold
   * int8 / int16 where the table's (Iceberg) type is int.
   */
  private static Block widen(BaseFixedWidthVector fw, int n, Optional<boolean[]> nulls, Type t) {
    int w = fw.getTypeWidth();
    ByteBuffer buf = bytes(fw.getDataBuffer(), (long) w * n);
    long[] vals = new long[n];
    for (int i = 0; i < n; i++) {
      vals[i] = w == 1 ? buf.get(i) : w == 2 ? buf.getShort(2 * i) : buf.getInt(4 * i);
    }
    switch (widthOf(t)) {
      case 2: {
        short[] out = new short[n];
        for (int i = 0; i < n; i++) out[i] = (short) vals[i];
        return new ShortArrayBlock(n, nulls, out);
      }
      case 4: {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) out[i] = (int) vals[i];
        return new IntArrayBlock(n, nulls, out);
      }
      default:
        return new LongArrayBlock(n, nulls, vals);
    }
  }

  /**
   * An array block; Trino wants null entries empty, Arrow lets them hold
   * elements (a fixed-size list always does): those are dropped.
   */
  private static Block array(int n, Optional<boolean[]> nulls, int[] offsets, Block values) {
    if (nulls.isEmpty()) return ArrayBlock.fromElementBlock(n, nulls, offsets, values);
    boolean[] isNull = nulls.get();
    boolean clean = true;
    for (int i = 0; i < n && clean; i++) clean = !isNull[i] || offsets[i] == offsets[i + 1];
    if (clean) return ArrayBlock.fromElementBlock(n, nulls, offsets, values);
    int[] keep = new int[offsets[n]];
    int[] out = new int[n + 1];
    int m = 0;
    for (int i = 0; i < n; i++) {
      if (!isNull[i]) {
        for (int j = offsets[i]; j < offsets[i + 1]; j++) keep[m++] = j;
      }
      out[i + 1] = m;
    }
    return ArrayBlock.fromElementBlock(n, nulls, out, values.copyPositions(keep, 0, m));
  }

  /** A child vector's first {@code count} values (children may hold more). */
  private static Block child(FieldVector c, Type type, long count) {
    Block b = toBlock(c, type);
    return b.getPositionCount() == count ? b : b.getRegion(0, Math.toIntExact(count));
  }

  private static Block slice(FieldVector c, Type type, int[] offsets) {
    int n = offsets.length - 1;
    Block b = toBlock(c, type);
    return b.getRegion(offsets[0], offsets[n] - offsets[0]);
  }

  private static int[] rebase(int[] offsets) {
    int base = offsets[0];
    for (int i = 0; i < offsets.length; i++) offsets[i] -= base;
    return offsets;
  }

  private static Optional<boolean[]> nulls(FieldVector v, int n) {
    if (v.getNullCount() == 0) return Optional.empty();
    boolean[] out = new boolean[n];
    for (int i = 0; i < n; i++) out[i] = v.isNull(i);
    return Optional.of(out);
  }

  /** {@code len} bytes of {@code b} as a little-endian buffer (no copy). */
  private static ByteBuffer bytes(ArrowBuf b, long len) {
    if (len == 0) return ByteBuffer.allocate(0).order(ByteOrder.LITTLE_ENDIAN);
    return b.nioBuffer(0, Math.toIntExact(len)).order(ByteOrder.LITTLE_ENDIAN);
  }
}
