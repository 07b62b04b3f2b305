/*
 * EqDeleteTables — the Iceberg Java library as the writer (and a reader)
 * of equality deletes, for tests/python/test_equality_deletes.py.
 *
 *   java -cp <iceberg-spark-runtime jar>:<pyspark jars>/* EqDeleteTables OUT_DIR SEED
 *
 * Creates Hadoop tables (HadoopTables: <dir>/metadata/vN.metadata.json,
 * our table layout) under OUT_DIR, for format versions 2 and 3:
 *
 *   global_v{2,3}   unpartitioned: appends, ival promoted int -> long, equality
 *                   deletes on [id], on [ival] (after the promotion, NULL keys
 *                   included) and on [name, price] (NaN, -0.0, NULLs), then an
 *                   append re-using deleted keys (newer: not deleted)
 *   part_v{2,3}     partitioned by identity(cat): a partition-scoped delete on
 *                   [name, ival] in cat='a' whose keys also occur in the other
 *                   partitions (not deleted there), a later append, a delete on
 *                   [id] in cat='b'
 *   evolved_v{2,3}  unpartitioned, then identity(cat) added: a global delete
 *                   (the unpartitioned spec) on [cat, id] applies to files of
 *                   both specs
 *
 * OUT_DIR/oracle.json lists every table with its operations (rows appended,
 * keys deleted, sequence numbers, spec and partition: what a brute-force
 * matcher needs) and, for every snapshot, the rows Iceberg's own generic
 * reader (IcebergGenerics, which applies the deletes) returns. Doubles are
 * written as strings (Double.toString: "NaN", "-0.0") so JSON can hold them.
 */
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;

public final class EqDeleteTables {
  static final String[] NAMES = {"ann", "bob", "cy", "dee", null};
  static final double[] PRICES = {0.0, -0.0, 1.5, -2.25, Double.NaN, 3.0};
  static final String[] CATS = {"a", "b", "c"};

  final Random rng;
  final HadoopTables tables = new HadoopTables(new Configuration());
  final StringBuilder json = new StringBuilder();
  long fileCounter = 0;
  boolean firstTable = true;

  // Per table, while it is being made.
  Table table;
  StringBuilder ops;
  boolean firstOp;
  long nextId;

  EqDeleteTables(long seed) {
    rng = new Random(seed);
  }

  static Schema schema() {
    return new Schema(
        Types.NestedField.optional(1, "id", Types.LongType.get()),
        Types.NestedField.optional(2, "name", Types.StringType.get()),
        Types.NestedField.optional(3, "ival", Types.IntegerType.get()),
        Types.NestedField.optional(4, "price", Types.DoubleType.get()),
        Types.NestedField.optional(5, "cat", Types.StringType.get()));
  }

  // ------------------------------------------------------------ JSON

  static String str(String s) {
    if (s == null) return "null";
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\');
      b.append(c);
    }
    return b.append('"').toString();
  }

  static String val(Object v) {
    if (v == null) return "null";
    if (v instanceof Double) return str(Double.toString((Double) v));
    if (v instanceof CharSequence) return str(v.toString());
    return v.toString();
  }

  static String row(Record r) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < r.size(); i++) {
      if (i > 0) b.append(',');
      b.append(val(r.get(i)));
    }
    return b.append(']').toString();
  }

  void op(String text) {
    if (!firstOp) ops.append(",\n");
    firstOp = false;
    ops.append("    ").append(text);
  }

  long seq() {
    return table.currentSnapshot().sequenceNumber();
  }

  // ------------------------------------------------------------ writing

  Record newRow(String cat) {
    Record r = GenericRecord.create(table.schema());
    r.setField("id", nextId++);
    r.setField("name", NAMES[rng.nextInt(NAMES.length)]);
    boolean isLong = table.schema().findType("ival").typeId() == Types.LongType.get().typeId();
    if (rng.nextInt(8) != 0) {
      int x = rng.nextInt(7) - 2;
      r.setField("ival", isLong ? (Object) (long) x : (Object) x);
    }
    r.setField("price", rng.nextInt(10) == 0 ? null : PRICES[rng.nextInt(PRICES.length)]);
    r.setField("cat", cat);
    return r;
  }

  EncryptedOutputFile outFile(PartitionSpec spec, StructLike partition) {
    OutputFileFactory f =
        OutputFileFactory.builderFor(table, 1, ++fileCounter).format(FileFormat.PARQUET).build();
    return partition == null ? f.newOutputFile() : f.newOutputFile(spec, partition);
  }

  StructLike partitionOf(PartitionSpec spec, String cat) {
    if (spec.isUnpartitioned()) return null;
    GenericRecord p = GenericRecord.create(spec.partitionType());
    p.set(0, cat);
    return p;
  }

  /* Append one data file of `n` new rows in partition `cat` of the default spec. */
  List<Record> append(int n, String cat) throws IOException {
    PartitionSpec spec = table.spec();
    StructLike part = partitionOf(spec, cat);
    GenericFileWriterFactory wf =
        new GenericFileWriterFactory.Builder(table).dataFileFormat(FileFormat.PARQUET).build();
    DataWriter<Record> w = wf.newDataWriter(outFile(spec, part), spec, part);
    List<Record> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Record r = newRow(spec.isUnpartitioned() ? CATS[rng.nextInt(3)] : cat);
      rows.add(r);
      w.write(r);
    }
    w.close();
    DataFile df = w.toDataFile();
    table.newAppend().appendFile(df).commit();
    StringBuilder b = new StringBuilder();
    for (Record r : rows) b.append(b.length() > 0 ? "," : "").append(row(r));
    op(String.format(
        "{\"op\": \"append\", \"seq\": %d, \"snapshot\": %d, \"spec_id\": %d, \"partition\": %s,"
            + " \"file\": %s, \"rows\": [%s]}",
        seq(), table.currentSnapshot().snapshotId(), spec.specId(),
        str(part == null ? null : cat), str(df.location()), b));
    return rows;
  }

  /* Commit one equality delete file on `cols` holding `keys` (values in
   * column order), in partition `cat` of `spec` (unpartitioned: global). */
  void delete(String[] cols, List<Object[]> keys, PartitionSpec spec, String cat)
      throws IOException {
    Schema del = table.schema().select(cols);
    int[] ids = new int[cols.length];
    for (int i = 0; i < cols.length; i++) ids[i] = table.schema().findField(cols[i]).fieldId();
    StructLike part = partitionOf(spec, cat);
    GenericFileWriterFactory wf =
        new GenericFileWriterFactory.Builder(table)
            .deleteFileFormat(FileFormat.PARQUET)
            .equalityFieldIds(ids)
            .equalityDeleteRowSchema(del)
            .build();
    EqualityDeleteWriter<Record> w = wf.newEqualityDeleteWriter(outFile(spec, part), spec, part);
    StringBuilder b = new StringBuilder();
    for (Object[] k : keys) {
      Record r = GenericRecord.create(del);
      StringBuilder kb = new StringBuilder("[");
      for (int i = 0; i < cols.length; i++) {
        r.setField(cols[i], k[i]);
        kb.append(i > 0 ? "," : "").append(val(k[i]));
      }
      w.write(r);
      b.append(b.length() > 0 ? "," : "").append(kb).append(']'); // in `cols` order
    }
    w.close();
    DeleteFile f = w.toDeleteFile();
    table.newRowDelta().addDeletes(f).commit();
    StringBuilder c = new StringBuilder();
    for (String s : cols) c.append(c.length() > 0 ? "," : "").append(str(s));
    op(String.format(
        "{\"op\": \"delete\", \"seq\": %d, \"snapshot\": %d, \"spec_id\": %d, \"partition\": %s,"
            + " \"file\": %s, \"columns\": [%s], \"keys\": [%s]}",
        seq(), table.currentSnapshot().snapshotId(), spec.specId(),
        str(part == null ? null : cat), str(f.location()), c, b));
  }

  /* Keys on `cols`: `hits` taken from `from` (some repeated), `misses` made up. */
  List<Object[]> keysFrom(List<Record> from, String[] cols, int hits, int misses) {
    List<Object[]> keys = new ArrayList<>();
    for (int i = 0; i < hits; i++) {
      Record r = from.get(rng.nextInt(from.size()));
      Object[] k = new Object[cols.length];
      for (int c = 0; c < cols.length; c++) {
        Object v = r.getField(cols[c]);
        if (v instanceof Integer && table.schema().findType(cols[c]) instanceof Types.LongType)
          v = (long) (Integer) v;
        k[c] = v;
      }
      keys.add(k);
      if (i % 5 == 0) keys.add(k.clone()); // a duplicate delete row
    }
    for (int i = 0; i < misses; i++) {
      Object[] k = new Object[cols.length];
      for (int c = 0; c < cols.length; c++) {
        org.apache.iceberg.types.Type t = table.schema().findType(cols[c]);
        if (t instanceof Types.LongType) k[c] = 1_000_000L + rng.nextInt(1000);
        else if (t instanceof Types.IntegerType) k[c] = 1000 + rng.nextInt(1000);
        else if (t instanceof Types.DoubleType) k[c] = 1e9 + rng.nextInt(1000);
        else k[c] = "zz" + rng.nextInt(1000);
      }
      keys.add(k);
    }
    return keys;
  }

  List<Record> concat(List<Record> a, List<Record> b) {
    List<Record> r = new ArrayList<>(a);
    r.addAll(b);
    return r;
  }

  // ------------------------------------------------------------ tables

  void begin(Path out, String name, int version, PartitionSpec spec) {
    Map<String, String> props = new HashMap<>();
    props.put(TableProperties.FORMAT_VERSION, Integer.toString(version));
    String location = out.resolve(name).toAbsolutePath().toString();
    table = tables.create(schema(), spec, props, location);
    ops = new StringBuilder();
    firstOp = true;
    nextId = 0;
  }

  void end(String name, int version) throws IOException {
    table.refresh();
    StringBuilder snaps = new StringBuilder();
    for (Snapshot s : table.snapshots()) {
      StringBuilder rows = new StringBuilder();
      try (CloseableIterable<Record> it =
          IcebergGenerics.read(table).useSnapshot(s.snapshotId()).build()) {
        for (Record r : it) rows.append(rows.length() > 0 ? "," : "").append(row(r));
      }
      snaps.append(snaps.length() > 0 ? ",\n" : "")
          .append(String.format(
              "    {\"snapshot\": %d, \"seq\": %d, \"operation\": %s, \"rows\": [%s]}",
              s.snapshotId(), s.sequenceNumber(), str(s.operation()), rows));
    }
    json.append(firstTable ? "" : ",\n");
    firstTable = false;
    json.append(String.format(
        "{\"name\": %s, \"format_version\": %d, \"location\": %s,\n  \"ops\": [\n%s],\n"
            + "  \"snapshots\": [\n%s]}",
        str(name), version, str(table.location()), ops, snaps));
  }

  void globalTable(Path out, int v) throws IOException {
    String name = "global_v" + v;
    begin(out, name, v, PartitionSpec.unpartitioned());
    List<Record> f0 = append(200, null);
    table.updateSchema().updateColumn("ival", Types.LongType.get()).commit();
    op("{\"op\": \"promote\", \"column\": \"ival\"}");
    List<Record> f1 = append(200, null);
    List<Record> all = concat(f0, f1);
    delete(new String[] {"id"}, keysFrom(all, new String[] {"id"}, 30, 5),
        PartitionSpec.unpartitioned(), null);
    List<Object[]> ik = new ArrayList<>();
    ik.add(new Object[] {3L});
    ik.add(new Object[] {null});
    ik.add(new Object[] {3L});
    ik.add(new Object[] {77L});
    delete(new String[] {"ival"}, ik, PartitionSpec.unpartitioned(), null);
    nextId = 0; // the same ids again: newer rows, not deleted by older deletes
    List<Record> f2 = append(150, null);
    String[] np = {"name", "price"};
    List<Object[]> nk = keysFrom(concat(all, f2), np, 6, 2);
    nk.add(new Object[] {null, Double.NaN});
    nk.add(new Object[] {"ann", -0.0});
    nk.add(new Object[] {"bob", null});
    delete(np, nk, PartitionSpec.unpartitioned(), null);
    append(50, null);
    end(name, v);
  }

  void partTable(Path out, int v) throws IOException {
    String name = "part_v" + v;
    PartitionSpec spec = PartitionSpec.builderFor(schema()).identity("cat").build();
    begin(out, name, v, spec);
    List<Record> a = append(150, "a");
    List<Record> b = append(150, "b");
    List<Record> c = append(150, "c");
    String[] ni = {"name", "ival"};
    // Keys drawn from every partition, scoped to 'a': rows of b and c stay.
    List<Object[]> keys = keysFrom(concat(concat(a, b), c), ni, 6, 2);
    keys.add(new Object[] {null, null});
    delete(ni, keys, table.spec(), "a");
    List<Record> a2 = append(100, "a");
    List<Record> b2 = append(100, "b");
    delete(new String[] {"id"}, keysFrom(concat(concat(b, b2), a2), new String[] {"id"}, 40, 3),
        table.spec(), "b");
    end(name, v);
  }

  void evolvedTable(Path out, int v) throws IOException {
    String name = "evolved_v" + v;
    begin(out, name, v, PartitionSpec.unpartitioned());
    PartitionSpec unpart = table.spec();
    List<Record> f0 = append(200, null);
    table.updateSpec().addField("cat").commit();
    op("{\"op\": \"spec\", \"spec_id\": " + table.spec().specId() + "}");
    List<Record> fa = append(120, "a");
    List<Record> fb = append(120, "b");
    String[] ci = {"cat", "id"};
    delete(ci, keysFrom(concat(concat(f0, fa), fb), ci, 40, 3), unpart, null);
    nextId = 0;
    append(80, "a");
    end(name, v);
  }

  public static void main(String[] args) throws IOException {
    Path out = Paths.get(args[0]);
    long seed = args.length > 1 ? Long.parseLong(args[1]) : 14;
    Files.createDirectories(out);
    EqDeleteTables m = new EqDeleteTables(seed);
    m.json.append("{\"tables\": [\n");
    for (int v = 2; v <= 3; v++) {
      m.globalTable(out, v);
      m.partTable(out, v);
      m.evolvedTable(out, v);
    }
    m.json.append("]}\n");
    try (Writer w = Files.newBufferedWriter(out.resolve("oracle.json"), StandardCharsets.UTF_8)) {
      w.write(m.json.toString());
    }
  }
}
