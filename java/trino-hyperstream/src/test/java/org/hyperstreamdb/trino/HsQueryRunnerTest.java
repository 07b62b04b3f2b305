package org.hyperstreamdb.trino;

import static io.trino.testing.TestingSession.testSessionBuilder;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.trino.Session;
import io.trino.execution.QueryInfo;
import io.trino.operator.OperatorStats;
import io.trino.spi.metrics.Count;
import io.trino.spi.metrics.Metric;
import io.trino.spi.type.TimeZoneKey;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.MaterializedResult;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import java.io.File;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.TreeMap;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Runs SQL through Trino's own query runner (trino-testing's
 * DistributedQueryRunner: a coordinator that is also the worker, HTTP task
 * protocol, JSON-serialized handles and splits) with our plugin installed as
 * catalog {@code hyperstream} over {@code -Dhs.trino.root}. The runner starts
 * first; then the test waits (up to {@code -Dhs.trino.wait} seconds, default
 * 900) for the cases file {@code -Dhs.trino.cases} to appear, so the caller
 * writes its tables while Trino starts. The file is a JSON list of {id, sql,
 * metrics, session, group}: session holds system session properties; cases
 * run on {@code -Dhs.trino.threads} threads (default 1: one at a time, in
 * order, as a benchmark needs), and cases of one {@code group} run in their
 * order on one thread (an INSERT, then the read of what it wrote). The results
 * go to {@code -Dhs.trino.out}, in the cases' order: rows as canonical JSON
 * values (timestamps as epoch microseconds, dates and decimals as text), or
 * the error's message, and, when asked, the connector metrics summed over the
 * query's operators. tests/python/test_trino_connector.py writes the tables
 * with the Python API, makes the cases and checks every answer against
 * pyarrow, the Python API and brute force. Without the properties (a plain
 * {@code mvn test}) the test is skipped.
 */
class HsQueryRunnerTest {
  @Test
  void runCases() throws Exception {
    String root = System.getProperty("hs.trino.root");
    String cases = System.getProperty("hs.trino.cases");
    String out = System.getProperty("hs.trino.out");
    Assumptions.assumeTrue(root != null && cases != null && out != null,
        "driven by tests/python/test_trino_connector.py");
    int threads = Integer.getInteger("hs.trino.threads", 1);
    long waitMs = Long.getLong("hs.trino.wait", 900) * 1000;
    ObjectMapper json = new ObjectMapper();
    Session session = testSessionBuilder().setCatalog("hyperstream").setSchema("default")
        .setTimeZoneKey(TimeZoneKey.UTC_KEY).build();
    long t0 = System.nanoTime();
    try (DistributedQueryRunner runner = DistributedQueryRunner.builder(session)
        .setWorkerCount(0).build()) {
      runner.installPlugin(new HsPlugin());
      runner.createCatalog("hyperstream", "hyperstream", Map.of("hyperstream.root", root));
      String iceberg = System.getProperty("hs.trino.iceberg");
      if (iceberg != null) {
        // The peer for bench/bench_trino_connector.py (Maven profile "bench" puts
        // io.trino:trino-iceberg on the class path): Trino's own Iceberg connector
        // over a file metastore in `iceberg`; tables join it by register_table.
        runner.installPlugin((io.trino.spi.Plugin) Class.forName(
            "io.trino.plugin.iceberg.IcebergPlugin").getDeclaredConstructor().newInstance());
        runner.createCatalog("iceberg", "iceberg", Map.of(
            "iceberg.catalog.type", "TESTING_FILE_METASTORE",
            "hive.metastore.catalog.dir", iceberg,
            "iceberg.register-table-procedure.enabled", "true",
            "fs.native-local.enabled", "true",
            "local.location", "/"));
      }
      double startup = (System.nanoTime() - t0) / 1e9;
      File casesFile = new File(cases);
      long deadline = System.currentTimeMillis() + waitMs;
      while (!casesFile.exists()) {
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException("no cases at " + cases + " after " + waitMs + " ms");
        }
        Thread.sleep(20);
      }
      JsonNode in = json.readTree(casesFile);
      // Cases in their run units: a group's cases in order, any other case alone.
      List<List<Integer>> units = new ArrayList<>();
      Map<String, List<Integer>> groups = new LinkedHashMap<>();
      for (int i = 0; i < in.size(); i++) {
        JsonNode g = in.get(i).get("group");
        if (g == null || g.isNull()) {
          units.add(List.of(i));
        } else {
          groups.computeIfAbsent(g.asText(), k -> {
            List<Integer> u = new ArrayList<>();
            units.add(u);
            return u;
          }).add(i);
        }
      }
      ObjectNode[] results = new ObjectNode[in.size()];
      ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
      try {
        List<Future<?>> done = new ArrayList<>();
        for (List<Integer> u : units) {
          done.add(pool.submit(() -> {
            for (int i : u) results[i] = run(runner, session, in.get(i));
          }));
        }
        for (Future<?> f : done) f.get();
      } finally {
        pool.shutdownNow();
      }
      ArrayNode all = JsonNodeFactory.instance.arrayNode();
      for (ObjectNode r : results) all.add(r);
      ObjectNode meta = all.addObject();
      meta.put("id", "$startup");
      meta.put("seconds", startup);
      json.writeValue(new File(out), all);
    }
  }

  private static ObjectNode run(DistributedQueryRunner runner, Session session, JsonNode c) {
    ObjectNode r = JsonNodeFactory.instance.objectNode();
    r.put("id", c.get("id").asText());
    long q0 = System.nanoTime();
    try {
      Session s = session;
      if (c.has("session")) {
        Session.SessionBuilder b = Session.builder(session);
        c.get("session").fields().forEachRemaining(
            p -> b.setSystemProperty(p.getKey(), p.getValue().asText()));
        s = b.build();
      }
      QueryRunner.MaterializedResultWithPlan res = runner.executeWithPlan(s,
          c.get("sql").asText());
      r.put("seconds", (System.nanoTime() - q0) / 1e9); // the query, results included
      r.set("rows", rows(res.result()));
      if (c.path("metrics").asBoolean(false) || c.path("stats").asBoolean(false)) {
        QueryInfo info = runner.getCoordinator().getQueryManager()
            .getFullQueryInfo(res.queryId());
        if (c.path("metrics").asBoolean(false)) r.set("metrics", metrics(info));
        if (c.path("stats").asBoolean(false)) r.set("stats", stats(info));
      }
    } catch (RuntimeException e) {
      r.put("error", String.valueOf(e.getMessage()));
      r.put("seconds", (System.nanoTime() - q0) / 1e9);
    }
    return r;
  }

  /** Where a query's time went (seconds), from Trino's query stats. */
  private static ObjectNode stats(QueryInfo info) {
    io.trino.execution.QueryStats q = info.getQueryStats();
    ObjectNode o = JsonNodeFactory.instance.objectNode();
    o.put("elapsed", q.getElapsedTime().getValue(java.util.concurrent.TimeUnit.SECONDS));
    o.put("queued", q.getQueuedTime().getValue(java.util.concurrent.TimeUnit.SECONDS));
    o.put("analysis", q.getAnalysisTime().getValue(java.util.concurrent.TimeUnit.SECONDS));
    o.put("planning", q.getPlanningTime().getValue(java.util.concurrent.TimeUnit.SECONDS));
    o.put("execution", q.getExecutionTime().getValue(java.util.concurrent.TimeUnit.SECONDS));
    o.put("finishing", q.getFinishingTime().getValue(java.util.concurrent.TimeUnit.SECONDS));
    o.put("cpu", q.getTotalCpuTime().getValue(java.util.concurrent.TimeUnit.SECONDS));
    o.put("scheduled", q.getTotalScheduledTime().getValue(java.util.concurrent.TimeUnit.SECONDS));
    o.put("splits", q.getTotalDrivers());
    return o;
  }

  private static ObjectNode metrics(QueryInfo info) {
    Map<String, Long> sum = new TreeMap<>();
    for (OperatorStats op : info.getQueryStats().getOperatorSummaries()) {
      for (Map.Entry<String, Metric<?>> m : op.getConnectorMetrics().getMetrics().entrySet()) {
        if (m.getValue() instanceof Count<?> c) sum.merge(m.getKey(), c.getTotal(), Long::sum);
      }
    }
    ObjectNode o = JsonNodeFactory.instance.objectNode();
    sum.forEach(o::put);
    return o;
  }

  private static ArrayNode rows(MaterializedResult r) {
    ArrayNode out = JsonNodeFactory.instance.arrayNode();
    for (MaterializedRow row : r.getMaterializedRows()) {
      ArrayNode a = out.addArray();
      for (Object v : row.getFields()) add(a, v);
    }
    return out;
  }

  private static void add(ArrayNode a, Object v) {
    if (v == null) {
      a.addNull();
    } else if (v instanceof Boolean b) {
      a.add(b);
    } else if (v instanceof Long || v instanceof Integer || v instanceof Short
        || v instanceof Byte) {
      a.add(((Number) v).longValue());
    } else if (v instanceof Float f) {
      addDouble(a, f.doubleValue());
    } else if (v instanceof Double d) {
      addDouble(a, d);
    } else if (v instanceof BigDecimal d) {
      a.add(d.toPlainString());
    } else if (v instanceof LocalDate d) {
      a.add(d.toString());
    } else if (v instanceof LocalDateTime t) {
      a.add(t.toEpochSecond(ZoneOffset.UTC) * 1_000_000L + t.getNano() / 1000);
    } else if (v instanceof ZonedDateTime t) {
      a.add(t.toEpochSecond() * 1_000_000L + t.getNano() / 1000);
    } else if (v instanceof io.trino.spi.type.SqlVarbinary b) {
      a.add(HexFormat.of().formatHex(b.getBytes()));
    } else if (v instanceof byte[] b) {
      a.add(HexFormat.of().formatHex(b));
    } else if (v instanceof io.trino.client.Row row) {
      ArrayNode c = a.addArray();
      for (io.trino.client.RowField f : row.getFields()) add(c, f.getValue());
    } else if (v instanceof MaterializedRow row) {
      ArrayNode c = a.addArray();
      for (Object f : row.getFields()) add(c, f);
    } else if (v instanceof List<?> l) {
      ArrayNode c = a.addArray();
      for (Object e : l) add(c, e);
    } else {
      a.add(v.toString());
    }
  }

  private static void addDouble(ArrayNode a, double d) {
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      a.add(Double.toString(d));
    } else {
      a.add(d);
    }
  }
}
