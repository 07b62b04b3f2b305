package org.hyperstreamdb.spark;

import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * {@code spark.read.format("hyperstream").load(path)}: a DataSource V2 over
 * one table folder (see java/README.md for the options).
 */
public final class HyperStreamSource implements TableProvider, DataSourceRegister {
  @Override
  public String shortName() {
    return "hyperstream";
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return new HsSparkTable(new HsOptions(options), null).schema();
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> props) {
    return new HsSparkTable(new HsOptions(props), schema);
  }

  /** Writes hand us the DataFrame's schema (a new table is created with it). */
  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }
}
