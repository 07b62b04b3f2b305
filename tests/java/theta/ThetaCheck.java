// ThetaCheck: reads the apache-datasketches-theta-v1 blobs of a Puffin
// statistics file with Apache DataSketches' own Java library, and builds its
// own sketch of the same values to compare with.
//
//   java -cp <datasketches jars>:<classes> ThetaCheck STATS_FILE OFFSET LENGTH VALUES ...
//
// For each (OFFSET, LENGTH, VALUES) triple it prints one line:
//   blob <estimate> <lower 3sd> <upper 3sd> <retained> <theta> <empty>
//   java <estimate> <lower 3sd> <upper 3sd> <retained> <theta> <empty> <hex of its compact bytes>
// VALUES is a file of one value per line, hex of its Iceberg single-value
// bytes (an empty line is an empty value), or "-" for none (no "java" line).
import java.io.BufferedReader;
import java.io.FileReader;
import java.io.RandomAccessFile;

import org.apache.datasketches.memory.Memory;
import org.apache.datasketches.theta.CompactSketch;
import org.apache.datasketches.theta.Sketch;
import org.apache.datasketches.theta.UpdateSketch;

public class ThetaCheck {
  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) s.append(String.format("%02x", x & 0xff));
    return s.toString();
  }

  static byte[] unhex(String s) {
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    return b;
  }

  static String describe(Sketch sk) {
    return sk.getEstimate() + " " + sk.getLowerBound(3) + " " + sk.getUpperBound(3) + " "
        + sk.getRetainedEntries(true) + " " + sk.getThetaLong() + " " + sk.isEmpty();
  }

  public static void main(String[] args) throws Exception {
    RandomAccessFile f = new RandomAccessFile(args[0], "r");
    for (int i = 1; i + 2 < args.length + 0 && i + 2 <= args.length - 1; i += 3) {
      long off = Long.parseLong(args[i]);
      int len = Integer.parseInt(args[i + 1]);
      byte[] blob = new byte[len];
      f.seek(off);
      f.readFully(blob);
      CompactSketch sk = CompactSketch.heapify(Memory.wrap(blob));
      System.out.println("blob " + describe(sk));
      if (!args[i + 2].equals("-")) {
        UpdateSketch u = UpdateSketch.builder().build();
        try (BufferedReader r = new BufferedReader(new FileReader(args[i + 2]))) {
          String line;
          while ((line = r.readLine()) != null) u.update(unhex(line.trim()));
        }
        CompactSketch c = u.compact(true, null);
        System.out.println("java " + describe(c) + " " + hex(c.toByteArray()));
      }
    }
    f.close();
  }
}
