/*
 * test_sql_plan_cache.c — the lifetimes of cached plans (src/sql/plan_cache.c)
 * through the C API, under ASan+UBSan in the suite: two results of one text
 * open at once; a result kept open while its entry is evicted (more texts
 * than the cache holds) and invalidated (CREATE INDEX, an append) and read
 * afterwards; every result's sum checked against the rows written. The
 * answers against DuckDB are tests/python/test_sql_plan_cache.py.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "hyperstream.h"

static hs_status start(hs_sql_session *s, const char *sql, struct ArrowArrayStream *out,
                       hs_error *err) {
  int32_t pos = 0;
  memset(err, 0, sizeof *err);
  return hs_sql_execute(s, sql, NULL, NULL, out, &pos, err);
}

/* Sum of the first (bigint) column of the stream's rows, and their count;
 * releases the stream. */
static void drain(struct ArrowArrayStream *out, int64_t *sum, int64_t *rows) {
  *sum = 0, *rows = 0;
  struct ArrowArray b;
  while (out->get_next(out, &b) == 0 && b.release != NULL) {
    const int64_t *v = (const int64_t *)b.children[0]->buffers[1] + b.children[0]->offset;
    for (int64_t r = 0; r < b.length; r++) *sum += v[r];
    *rows += b.length;
    b.release(&b);
  }
  out->release(out);
}

static void run(hs_sql_session *s, const char *sql, int64_t *sum, int64_t *rows) {
  struct ArrowArrayStream out;
  hs_error err;
  hs_status st = start(s, sql, &out, &err);
  CHECK_OK(st, &err);
  if (st == HS_OK) drain(&out, sum, rows);
}

int main(void) {
  char *root = hs_test_temp_root("sql_plan_cache");
  if (root != NULL) *strrchr(root, '/') = '\0';
  hs_error err = {0};
  hs_sql_session *s = NULL;
  CHECK_OK(hs_sql_session_new(root, &s, &err), &err);
  int64_t sum = 0, rows = 0;
  run(s, "CREATE TABLE t (id bigint, v int)", &sum, &rows);
  char sql[512];
  int64_t n = 0, want_sum = 0;
  for (int k = 0; k < 3; k++) { /* three appends: three data files */
    int off = snprintf(sql, sizeof sql, "INSERT INTO t VALUES ");
    for (int i = 0; i < 10; i++, n++) {
      off += snprintf(sql + off, sizeof sql - (size_t)off, "%s(%" PRId64 ", %d)", i ? ", " : "", n,
                      (int)(n % 7));
      want_sum += n;
    }
    run(s, sql, &sum, &rows);
  }
  const char *q = "SELECT id FROM t WHERE v >= 0 ORDER BY id";
  run(s, q, &sum, &rows); /* planned and kept */
  CHECK_EQ_INT(sum, want_sum);
  CHECK_EQ_INT(rows, n);

  /* two runs of the cached text open at once, read in reverse order */
  struct ArrowArrayStream a, b;
  CHECK_OK(start(s, q, &a, &err), &err);
  CHECK_OK(start(s, q, &b, &err), &err);
  drain(&b, &sum, &rows);
  CHECK_EQ_INT(sum, want_sum);
  drain(&a, &sum, &rows);
  CHECK_EQ_INT(sum, want_sum);

  /* a run kept open while its entry is evicted by 40 other texts, then
   * read; and one open across an invalidation (CREATE INDEX, an append) */
  CHECK_OK(start(s, q, &a, &err), &err);
  for (int i = 0; i < 40; i++) {
    snprintf(sql, sizeof sql, "SELECT id FROM t WHERE id < %d ORDER BY id", i);
    run(s, sql, &sum, &rows);
    CHECK_EQ_INT(rows, i < n ? i : n);
  }
  run(s, q, &sum, &rows); /* planned again */
  CHECK_OK(start(s, q, &b, &err), &err);
  run(s, "CREATE INDEX ON t (v)", &sum, &rows);
  run(s, "INSERT INTO t VALUES (1000, 1)", &sum, &rows);
  drain(&a, &sum, &rows);
  CHECK_EQ_INT(sum, want_sum);
  run(s, q, &sum, &rows); /* replanned: the index and the new row */
  CHECK_EQ_INT(sum, want_sum + 1000);
  CHECK_EQ_INT(rows, n + 1);
  run(s, q, &sum, &rows); /* cached again */
  CHECK_EQ_INT(sum, want_sum + 1000);
  drain(&b, &sum, &rows); /* the run from before the change: its own version */
  CHECK_EQ_INT(sum, want_sum);
  hs_sql_session_free(s);
  free(root);
  return hs_test_finish("test_sql_plan_cache");
}
