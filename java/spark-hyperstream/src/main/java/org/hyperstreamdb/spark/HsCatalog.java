package org.hyperstreamdb.spark;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.connector.catalog.FunctionCatalog;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.hyperstreamdb.jni.HsTable;

/**
 * Table folders under a root as a Spark catalog:
 * {@code spark.sql.catalog.hs = org.hyperstreamdb.spark.HsCatalog},
 * {@code spark.sql.catalog.hs.root = /data}. {@code hs.db.t} is the folder
 * {@code /data/db/t} (namespaces are folders; a folder holding
 * {@code metadata/} is a table). Reads and INSERT INTO go through the data
 * source (pushdown, one task per file, one commit per insert);
 * {@code VERSION AS OF} takes a snapshot id or a tag/branch name,
 * {@code TIMESTAMP AS OF} a time. CREATE TABLE makes an empty table;
 * ALTER, RENAME and DROP are refused (the folders are the user's).
 */
public final class HsCatalog implements TableCatalog, SupportsNamespaces, FunctionCatalog {
  private String name;
  private File root;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
    String r = options.get("root");
    if (r == null || r.isEmpty()) {
      throw new IllegalArgumentException("hyperstream catalog '" + name + "': set spark.sql.catalog."
          + name + ".root to the folder holding the table folders");
    }
    root = new File(r);
  }

  @Override
  public String name() {
    return name;
  }

  private File folder(String[] namespace) {
    File f = root;
    for (String n : namespace) f = new File(f, n);
    return f;
  }

  private File folder(Identifier ident) {
    return new File(folder(ident.namespace()), ident.name());
  }

  private static boolean isTable(File f) {
    return new File(f, "metadata").isDirectory();
  }

  private HsSparkTable load(Identifier ident, Map<String, String> extra)
      throws NoSuchTableException {
    File f = folder(ident);
    if (!isTable(f)) throw new NoSuchTableException(ident);
    Map<String, String> o = new HashMap<>(extra);
    o.put("path", f.getPath());
    return new HsSparkTable(new HsOptions(o), null);
  }

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    File d = folder(namespace);
    if (!d.isDirectory()) throw new NoSuchNamespaceException(namespace);
    List<Identifier> out = new ArrayList<>();
    File[] kids = d.listFiles();
    if (kids != null) {
      Arrays.sort(kids);
      for (File k : kids) {
        if (isTable(k)) out.add(Identifier.of(namespace, k.getName()));
      }
    }
    return out.toArray(new Identifier[0]);
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    return load(ident, Map.of());
  }

  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    boolean id = version.chars().allMatch(Character::isDigit) && !version.isEmpty();
    return load(ident, Map.of(id ? "snapshot-id" : "tag", version));
  }

  @Override
  public Table loadTable(Identifier ident, long timestampMicros) throws NoSuchTableException {
    return load(ident, Map.of("as-of-timestamp", Long.toString(Math.floorDiv(timestampMicros,
        1000L))));
  }

  @Override
  public Table createTable(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties) throws TableAlreadyExistsException, NoSuchNamespaceException {
    if (partitions.length > 0) {
      throw new UnsupportedOperationException("hyperstream catalog: PARTITIONED BY is not "
          + "supported yet; create the table and set its spec from Python");
    }
    File f = folder(ident);
    if (isTable(f)) throw new TableAlreadyExistsException(ident);
    try (BufferAllocator a = HsMemory.child("create");
        HsTable t = HsTable.create(f.getPath(), ArrowUtils.toArrowSchema(schema, "UTC", true,
            false), a)) {
      // created
    }
    try {
      return loadTable(ident);
    } catch (NoSuchTableException e) {
      throw new IllegalStateException("hyperstream catalog: " + f + " vanished after CREATE", e);
    }
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) {
    throw new UnsupportedOperationException("hyperstream catalog: ALTER TABLE is not supported "
        + "(evolve the schema from Python: Table.update_schema)");
  }

  @Override
  public boolean dropTable(Identifier ident) {
    throw new UnsupportedOperationException("hyperstream catalog: DROP TABLE is not supported "
        + "(the table folder " + folder(ident) + " is yours to remove)");
  }

  @Override
  public void renameTable(Identifier from, Identifier to) {
    throw new UnsupportedOperationException("hyperstream catalog: RENAME is not supported");
  }

  // ---------------------------------------------------------------- functions

  /** The distance functions (HsFunctions), in every namespace: hs.l2_distance, hs.db.l2_distance. */
  @Override
  public Identifier[] listFunctions(String[] namespace) {
    Identifier[] out = new Identifier[HsFunctions.NAMES.length];
    for (int i = 0; i < out.length; i++) out[i] = Identifier.of(namespace, HsFunctions.NAMES[i]);
    return out;
  }

  @Override
  public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
    UnboundFunction f = HsFunctions.load(ident.name());
    if (f == null) throw new NoSuchFunctionException(ident);
    return f;
  }

  // ---------------------------------------------------------------- namespaces

  @Override
  public String[][] listNamespaces() {
    return listNamespaces(new String[0]);
  }

  @Override
  public String[][] listNamespaces(String[] namespace) {
    List<String[]> out = new ArrayList<>();
    File[] kids = folder(namespace).listFiles();
    if (kids != null) {
      Arrays.sort(kids);
      for (File k : kids) {
        if (k.isDirectory() && !isTable(k)) {
          String[] ns = Arrays.copyOf(namespace, namespace.length + 1);
          ns[namespace.length] = k.getName();
          out.add(ns);
        }
      }
    }
    return out.toArray(new String[0][]);
  }

  @Override
  public boolean namespaceExists(String[] namespace) {
    File f = folder(namespace);
    return f.isDirectory() && !isTable(f);
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(String[] namespace)
      throws NoSuchNamespaceException {
    if (!namespaceExists(namespace)) throw new NoSuchNamespaceException(namespace);
    return Map.of("location", folder(namespace).getPath());
  }

  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata) {
    File f = folder(namespace);
    if (!f.isDirectory() && !f.mkdirs()) {
      throw new IllegalStateException("hyperstream catalog: cannot create " + f);
    }
  }

  @Override
  public void alterNamespace(String[] namespace, NamespaceChange... changes) {
    throw new UnsupportedOperationException("hyperstream catalog: namespaces have no properties");
  }

  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade) {
    throw new UnsupportedOperationException("hyperstream catalog: DROP NAMESPACE is not supported");
  }
}
