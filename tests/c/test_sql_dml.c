/*
 * test_sql_dml.c — SQL UPDATE, DELETE and MERGE through the C API (src/sql/
 * ddl_update.c, ddl_change.c, ddl_merge.c), run under ASan+UBSan in the suite: random
 * statements against a row-by-row model of the table in this file, the
 * whole table compared after each; statements that must fail (bad
 * columns, types, division by zero, overflow, refused clauses) fail and
 * leave the table as it was. The DuckDB oracle over more types is
 * tests/python/test_sql_update.py and test_sql_merge.py.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "hyperstream.h"

enum { N_ROWS = 300, N_MODEL = 351 };

typedef struct row {
  int64_t id;
  int32_t v;
  bool v_null;
  double w;
  bool live;
} row;

static hs_status run(hs_sql_session *s, const char *sql, int64_t *count, hs_error *err) {
  struct ArrowArrayStream out;
  int32_t pos = 0;
  memset(err, 0, sizeof *err);
  hs_status st = hs_sql_execute(s, sql, NULL, NULL, &out, &pos, err);
  if (st != HS_OK) return st;
  struct ArrowArray b;
  *count = -1;
  while (out.get_next(&out, &b) == 0 && b.release != NULL) {
    if (b.n_children == 1 && b.length == 1)
      *count = ((const int64_t *)b.children[0]->buffers[1])[0];
    b.release(&b);
  }
  out.release(&out);
  return HS_OK;
}

/* The table read back (ORDER BY id) equals the model's live rows. */
static bool table_matches(hs_sql_session *s, const row *m, int n, hs_error *err) {
  struct ArrowArrayStream out;
  int32_t pos = 0;
  if (hs_sql_execute(s, "SELECT id, v, w FROM t ORDER BY id", NULL, NULL, &out, &pos, err) != HS_OK)
    return false;
  int i = 0;
  bool ok = true;
  struct ArrowArray b;
  while (ok && out.get_next(&out, &b) == 0 && b.release != NULL) {
    const int64_t *id = (const int64_t *)b.children[0]->buffers[1] + b.children[0]->offset;
    const int32_t *v = (const int32_t *)b.children[1]->buffers[1] + b.children[1]->offset;
    const double *w = (const double *)b.children[2]->buffers[1] + b.children[2]->offset;
    for (int64_t r = 0; r < b.length && ok; r++) {
      while (i < n && !m[i].live) i++;
      bool vnull = !hs_arrow_is_valid(b.children[1], r);
      ok = i < n && id[r] == m[i].id && vnull == m[i].v_null && (vnull || v[r] == m[i].v) &&
           w[r] == m[i].w;
      if (!ok)
        fprintf(stderr,
                "row %" PRId64 ": id %" PRId64 " v %d%s w %g, model id %" PRId64 " v %d%s w %g\n",
                r, id[r], v[r], vnull ? "(null)" : "", w[r], i < n ? m[i].id : -1,
                i < n ? m[i].v : 0, i < n && m[i].v_null ? "(null)" : "", i < n ? m[i].w : 0);
      i++;
    }
    b.release(&b);
  }
  out.release(&out);
  while (ok && i < n && !m[i].live) i++;
  return ok && i == n;
}

int main(void) {
  char *root = hs_test_temp_root("sql_dml"); /* "<dir>/t": the session's root is <dir> */
  if (root != NULL) *strrchr(root, '/') = '\0';
  hs_error err = {0};
  hs_sql_session *s = NULL;
  CHECK_OK(hs_sql_session_new(root, &s, &err), &err);
  int64_t count = 0;
  CHECK_OK(run(s, "CREATE TABLE t (id bigint, v int, w double precision)", &count, &err), &err);
  row m[N_MODEL];
  memset(m, 0, sizeof m);
  uint64_t rng = 20261206;
  char sql[8192];
  /* three INSERTs: three data files */
  for (int part = 0; part < 3; part++) {
    size_t at = (size_t)snprintf(sql, sizeof sql, "INSERT INTO t VALUES ");
    for (int i = part * 100; i < part * 100 + 100; i++) {
      m[i] = (row){i, (int32_t)(hs_test_rand(&rng) % 200) - 100, hs_test_rand(&rng) % 10 == 0,
                   (double)(hs_test_rand(&rng) % 1000) / 8, true};
      if (m[i].v_null)
        at += (size_t)snprintf(sql + at, sizeof sql - at, "%s(%d, NULL, %.3f)",
                               i > part * 100 ? ", " : "", i, m[i].w);
      else
        at += (size_t)snprintf(sql + at, sizeof sql - at, "%s(%d, %d, %.3f)",
                               i > part * 100 ? ", " : "", i, m[i].v, m[i].w);
    }
    CHECK_OK(run(s, sql, &count, &err), &err);
  }
  CHECK(table_matches(s, m, N_ROWS, &err));
  for (int step = 0; step < 40; step++) {
    int k = (int)(hs_test_rand(&rng) % 200) - 100, d = (int)(hs_test_rand(&rng) % 7) - 3;
    int lo = (int)(hs_test_rand(&rng) % N_ROWS), hi = lo + (int)(hs_test_rand(&rng) % 40);
    int kind = (int)(hs_test_rand(&rng) % 5);
    int64_t want = 0;
    if (kind == 0) {
      snprintf(sql, sizeof sql, "UPDATE t SET v = v + %d, w = w * 2 WHERE v < %d", d, k);
      for (int i = 0; i < N_ROWS; i++)
        if (m[i].live && !m[i].v_null && m[i].v < k) m[i].v += d, m[i].w *= 2, want++;
    } else if (kind == 1) {
      snprintf(sql, sizeof sql, "UPDATE t SET v = NULL WHERE id BETWEEN %d AND %d", lo, hi);
      for (int i = 0; i < N_ROWS; i++)
        if (m[i].live && m[i].id >= lo && m[i].id <= hi) m[i].v_null = true, want++;
    } else if (kind == 2) {
      snprintf(sql, sizeof sql, "UPDATE t SET v = COALESCE(v, %d), w = id WHERE v IS NULL", k);
      for (int i = 0; i < N_ROWS; i++)
        if (m[i].live && m[i].v_null)
          m[i].v_null = false, m[i].v = k, m[i].w = (double)m[i].id, want++;
    } else if (kind == 3) {
      snprintf(sql, sizeof sql, "DELETE FROM t WHERE id BETWEEN %d AND %d AND v > %d", lo, hi, k);
      for (int i = 0; i < N_ROWS; i++)
        if (m[i].live && m[i].id >= lo && m[i].id <= hi && !m[i].v_null && m[i].v > k)
          m[i].live = false, want++;
    } else { /* a row assignment reading the old v */
      snprintf(sql, sizeof sql,
               "UPDATE t SET (w, v) = (COALESCE(v, 0), CAST(id AS int) - %d) WHERE id >= %d", d,
               hi);
      for (int i = 0; i < N_ROWS; i++)
        if (m[i].live && m[i].id >= hi) {
          m[i].w = m[i].v_null ? 0 : (double)m[i].v;
          m[i].v = (int32_t)m[i].id - d, m[i].v_null = false, want++;
        }
    }
    CHECK_OK(run(s, sql, &count, &err), &err);
    CHECK_EQ_INT(count, want);
    if (!table_matches(s, m, N_ROWS, &err)) {
      fprintf(stderr, "after step %d: %s\n", step, sql);
      CHECK(false);
    }
  }
  /* MERGE: a source from the table itself; changes by key, then inserts */
  {
    int lo = 40, hi = 120, k = 10;
    int64_t want = 0;
    snprintf(sql, sizeof sql,
             "MERGE INTO t USING (SELECT id, v FROM t WHERE id BETWEEN %d AND %d) AS q ON t.id = "
             "q.id WHEN MATCHED AND q.v > %d THEN DELETE WHEN MATCHED THEN UPDATE SET w = t.w + 1",
             lo, hi, k);
    for (int i = lo; i <= hi; i++)
      if (m[i].live) {
        want++;
        if (!m[i].v_null && m[i].v > k)
          m[i].live = false;
        else
          m[i].w += 1;
      }
    CHECK_OK(run(s, sql, &count, &err), &err);
    CHECK_EQ_INT(count, want);
    CHECK(table_matches(s, m, N_ROWS, &err));
    want = 0;
    for (int i = 0; i < 50; i++) {
      m[N_ROWS + i] = (row){1000 + i, m[i].v, m[i].v_null, 0.25, m[i].live};
      want += m[i].live;
    }
    CHECK_OK(run(s,
                 "MERGE INTO t USING (SELECT id + 1000 AS id, v FROM t WHERE id < 50) AS q ON "
                 "t.id = q.id WHEN NOT MATCHED THEN INSERT (id, v, w) VALUES (q.id, q.v, 0.25)",
                 &count, &err),
             &err);
    CHECK_EQ_INT(count, want);
    CHECK(table_matches(s, m, N_MODEL, &err));
    /* INSERT ... ON CONFLICT: a MERGE underneath */
    want = 1 + m[N_ROWS].live;
    if (m[N_ROWS].live) m[N_ROWS].v = 5, m[N_ROWS].v_null = false;
    m[N_MODEL - 1] = (row){5000, 6, false, 0.5, true};
    CHECK_OK(run(s,
                 "INSERT INTO t VALUES (1000, 5, 0.25), (5000, 6, 0.5) ON CONFLICT (id) DO UPDATE "
                 "SET v = excluded.v",
                 &count, &err),
             &err);
    CHECK_EQ_INT(count, want);
    CHECK(table_matches(s, m, N_MODEL, &err));
    /* DELETE ... USING: a MERGE underneath */
    want = 0;
    for (int i = 200; i < 210; i++)
      if (m[i].live && !m[i].v_null && m[i].v < 0) m[i].live = false, want++;
    CHECK_OK(run(s,
                 "DELETE FROM t USING (SELECT id FROM t WHERE id BETWEEN 200 AND 209) AS q WHERE "
                 "t.id = q.id AND t.v < 0",
                 &count, &err),
             &err);
    CHECK_EQ_INT(count, want);
    CHECK(table_matches(s, m, N_MODEL, &err));
    /* UPDATE ... FROM: a MERGE underneath */
    want = 0;
    for (int i = 0; i < 30; i++)
      if (m[i].live && !m[i].v_null && m[i].v > k) m[i].w += 2, want++;
    snprintf(sql, sizeof sql,
             "UPDATE t SET w = t.w + 2 FROM (SELECT id FROM t WHERE id < 30) AS q WHERE t.id = "
             "q.id AND t.v > %d",
             k);
    CHECK_OK(run(s, sql, &count, &err), &err);
    CHECK_EQ_INT(count, want);
    CHECK(table_matches(s, m, N_MODEL, &err));
  }
  /* EXPLAIN of a merge: its SELECT's plan, nothing written */
  {
    struct ArrowArrayStream out;
    int32_t pos = 0;
    CHECK_OK(hs_sql_execute(s,
                            "EXPLAIN MERGE INTO t USING (SELECT id FROM t WHERE id < 5) AS q ON "
                            "t.id = q.id WHEN MATCHED THEN DELETE",
                            NULL, NULL, &out, &pos, &err),
             &err);
    struct ArrowArray b;
    int64_t lines = 0;
    while (out.get_next(&out, &b) == 0 && b.release != NULL) lines += b.length, b.release(&b);
    out.release(&out);
    CHECK(lines >= 2);
    CHECK(table_matches(s, m, N_MODEL, &err));
  }
  static const char *const bad[] = {
      "MERGE INTO t USING (SELECT id FROM t UNION ALL SELECT id FROM t) AS q ON t.id = q.id "
      "WHEN MATCHED THEN UPDATE SET v = 0",
      "MERGE INTO t USING (SELECT id FROM t) AS q ON t.id < q.id WHEN MATCHED THEN DELETE",
      "MERGE INTO t USING (SELECT id FROM t) AS q ON t.id = q.id WHEN MATCHED THEN UPDATE SET "
      "nosuch = 1",
      "MERGE INTO t USING (SELECT id FROM t) AS q ON t.id = q.id WHEN NOT MATCHED THEN INSERT "
      "VALUES (q.id, 1 / 0, 0)",
      "MERGE INTO t USING (SELECT id + 5000 AS id FROM t) AS q ON t.id = q.id WHEN NOT MATCHED "
      "THEN INSERT VALUES (q.id, 'x', 0)",
      "UPDATE t SET nosuch = 1",
      "UPDATE t SET v = 1, v = 2",
      "UPDATE t SET v = v / 0",
      "UPDATE t SET v = 2147483647 + v WHERE v > 0",
      "UPDATE t SET v = 'x'",
      "UPDATE t SET v = DEFAULT",
      "UPDATE t SET v = 1 RETURNING v",
      "UPDATE t SET v = 1 WHERE nosuch = 1",
      "UPDATE t SET (v, w) = (1)",
      "UPDATE t SET v = 1 FROM t u WHERE t.id < u.id",
      "UPDATE nope SET v = 1",
      "UPDATE t SET v = (SELECT id FROM t)", /* more than one row */
      "UPDATE t SET v = nosuch + 1",
      "UPDATE t SET w = '[1,2]'::vector",
      "INSERT INTO t VALUES (7, 1, 0) ON CONFLICT DO NOTHING",
      "INSERT INTO t VALUES (7, 1, 0), (7, 2, 0) ON CONFLICT (id) DO UPDATE SET v = excluded.v",
      "INSERT INTO t VALUES (7, 1, 0) ON CONFLICT (nosuch) DO NOTHING",
      "EXPLAIN ANALYZE MERGE INTO t USING t AS q ON t.id = q.id WHEN MATCHED THEN DELETE",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hs_status st = run(s, bad[i], &count, &err);
    if (st == HS_OK) fprintf(stderr, "should have failed: %s\n", bad[i]);
    CHECK(st != HS_OK);
    CHECK(err.message[0] != '\0');
  }
  CHECK(table_matches(s, m, N_MODEL, &err));
  hs_sql_session_free(s);
  free(root);
  return hs_test_finish("test_sql_dml");
}
