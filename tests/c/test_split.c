/*
 * test_split.c — scans cut into splits (src/query/split.c): the splits a
 * filtered scan plans are the files it opens (manifest pruning included),
 * the union of the splits' scans is the full scan's rows (with and without
 * a filter and an index), a split of no files gives the projected schema,
 * and bad paths, NULL arguments and bad filters are errors naming them.
 */
#include <stdlib.h>
#include <string.h>

#include "hs_test.h"
#include "hs_table_fixture.h"

#define FILES 5
#define ROWS 200

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Append the ids (column 0) of every batch of `s` (released) to ids[*n..]. */
static void drain_ids(struct ArrowArrayStream *s, int64_t *ids, size_t *n, size_t cap) {
  for (;;) {
    struct ArrowArray b;
    memset(&b, 0, sizeof b);
    int rc = s->get_next(s, &b);
    CHECK(rc == 0);
    if (rc != 0 || b.release == NULL) break;
    const struct ArrowArray *c = b.children[0];
    const int64_t *v = c->buffers[1];
    for (int64_t i = 0; i < b.length && *n < cap; i++) ids[(*n)++] = v[c->offset + b.offset + i];
    b.release(&b);
  }
  s->release(s);
}

static size_t full_ids(hs_table *t, const char *filter, int64_t *ids, size_t cap) {
  hs_error e = {0};
  hs_scan_options o;
  hs_scan_options_init(&o);
  o.filter = filter;
  struct ArrowArrayStream s;
  CHECK_OK(hs_table_scan_query(t, &o, &s, &e), &e);
  size_t n = 0;
  drain_ids(&s, ids, &n, cap);
  qsort(ids, n, sizeof *ids, cmp_i64);
  return n;
}

/* The rows of each split of `filter`, scanned one split at a time. */
static size_t split_ids(hs_table *t, const char *filter, int64_t *ids, size_t cap,
                        size_t *n_splits) {
  hs_error e = {0};
  hs_scan_options o;
  hs_scan_options_init(&o);
  o.filter = filter;
  hs_scan_split *v = NULL;
  size_t nv = 0;
  int64_t sid = -2;
  CHECK_OK(hs_table_plan_splits(t, &o, &v, &nv, &sid, &e), &e);
  CHECK(sid == hs_table_current_snapshot_id(t));
  o.snapshot_id = sid;
  size_t n = 0;
  for (size_t i = 0; i < nv; i++) {
    CHECK(i == 0 || v[i].plan_index > v[i - 1].plan_index);
    CHECK(v[i].record_count == ROWS && v[i].rows_deleted == 0);
    const char *p = v[i].path;
    struct ArrowArrayStream s;
    CHECK_OK(hs_table_scan_split(t, &o, &p, 1, &s, &e), &e);
    drain_ids(&s, ids, &n, cap);
  }
  qsort(ids, n, sizeof *ids, cmp_i64);
  /* The candidates the plan carries: with a filter every split has some
   * (files without are left out), an upper bound of its matches, exact
   * when the plan says so; scanning the splits with them (one call) gives
   * the same rows, and no index file is read again. */
  size_t n2 = 0;
  int64_t *ids2 = hs_malloc((cap ? cap : 1) * sizeof *ids2);
  for (size_t i = 0; i < nv; i++) {
    if (filter == NULL) {
      CHECK(v[i].rows_candidate == -1 && v[i].candidates == NULL);
      continue;
    }
    CHECK(v[i].rows_candidate > 0 && v[i].rows_candidate <= v[i].record_count);
    const char *p = v[i].path;
    struct ArrowArrayStream s;
    CHECK_OK(hs_table_scan_split(t, &o, &p, 1, &s, &e), &e);
    size_t k = 0;
    drain_ids(&s, ids2, &k, cap);
    CHECK((int64_t)k <= v[i].rows_candidate);
    if (v[i].candidates != NULL && v[i].candidates_exact) CHECK((int64_t)k == v[i].rows_candidate);
  }
  struct ArrowArrayStream s;
  CHECK_OK(hs_table_scan_split_rows(t, &o, v, nv, &s, &e), &e);
  hs_scan_index_stats is;
  CHECK_OK(hs_scan_index_stats_get(&s, &is, &e), &e);
  drain_ids(&s, ids2, &n2, cap);
  qsort(ids2, n2, sizeof *ids2, cmp_i64);
  CHECK(n2 == n && memcmp(ids, ids2, n * sizeof *ids) == 0);
  hs_free(ids2);
  *n_splits = nv;
  hs_scan_splits_free(v, nv);
  return n;
}

/* Candidates are untrusted bytes on the worker: garbage, rows past the
 * file and a file of another row count are errors naming the file. */
static void test_bad_candidates(hs_table *t) {
  hs_error e = {0};
  hs_scan_options o;
  hs_scan_options_init(&o);
  o.filter = "id = 417";
  hs_scan_split *v = NULL;
  size_t nv = 0;
  CHECK_OK(hs_table_plan_splits(t, &o, &v, &nv, NULL, &e), &e);
  CHECK(nv == 1 && v[0].candidates != NULL && v[0].candidates_size > 4);
  struct ArrowArrayStream s;
  hs_scan_split bad = v[0];
  uint8_t junk[16];
  memset(junk, 0xab, sizeof junk);
  bad.candidates = junk;
  bad.candidates_size = sizeof junk;
  hs_error e2 = {0};
  CHECK(hs_table_scan_split_rows(t, &o, &bad, 1, &s, &e2) == HS_ERR_CORRUPT);
  CHECK(strstr(e2.message, v[0].path) != NULL);
  bad = v[0];
  bad.record_count = 7;
  memset(&e2, 0, sizeof e2);
  CHECK(hs_table_scan_split_rows(t, &o, &bad, 1, &s, &e2) == HS_ERR_INVALID_ARG);
  CHECK(strstr(e2.message, "planned for 7 rows") != NULL);
  /* Candidates without the filter they were planned with. */
  hs_scan_options nof;
  hs_scan_options_init(&nof);
  memset(&e2, 0, sizeof e2);
  CHECK(hs_table_scan_split_rows(t, &nof, v, 1, &s, &e2) == HS_ERR_INVALID_ARG);
  memset(&e2, 0, sizeof e2);
  CHECK(hs_table_scan_split_rows(t, &o, NULL, 1, &s, &e2) == HS_ERR_INVALID_ARG);
  hs_scan_splits_free(v, nv);
}

static void test_splits(void) {
  char *root = hs_test_temp_root("split");
  CHECK(root != NULL);
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, NULL, &t, &e), &e);
  s.release(&s);
  /* Before any append: no splits, snapshot -1. */
  hs_scan_split *v = NULL;
  size_t nv = 7;
  int64_t sid = 0;
  CHECK_OK(hs_table_plan_splits(t, NULL, &v, &nv, &sid, &e), &e);
  CHECK(nv == 0 && v == NULL && sid == -1);
  for (int f = 0; f < FILES; f++) append_rows(t, (int64_t)f * ROWS, ROWS);
  const char *cols[] = {"id", "name"};
  CHECK_OK(hs_table_build_indexes(t, cols, 2, &e), &e);

  int64_t *a = hs_malloc(FILES * ROWS * sizeof *a), *b = hs_malloc(FILES * ROWS * sizeof *b);
  /* 'n36x' lies inside every file's name bounds but in no file: only the
   * indexes leave file 2 (id 417) to plan. */
  const char *filters[] = {
      NULL,     "k = 3 OR id < 50",          "id >= 800",    "id = 417", "name LIKE 'n1%'",
      "id < 0", "name = 'n36x' OR id = 417", "name = 'n36x'"};
  const size_t want_splits[] = {FILES, FILES, 1, 1, FILES, 0, 1, 0};
  for (size_t i = 0; i < sizeof filters / sizeof *filters; i++) {
    size_t ns = 0;
    size_t na = full_ids(t, filters[i], a, FILES * ROWS);
    size_t nb = split_ids(t, filters[i], b, FILES * ROWS, &ns);
    CHECK_EQ_INT((int64_t)ns, (int64_t)want_splits[i]);
    CHECK_EQ_INT((int64_t)na, (int64_t)nb);
    CHECK(na == nb && memcmp(a, b, na * sizeof *a) == 0);
  }

  /* A split of no files: the projected schema, no rows. */
  hs_scan_options o;
  hs_scan_options_init(&o);
  const char *proj[] = {"k", "id"};
  o.columns = proj;
  o.n_columns = 2;
  static const char *const none[1] = {NULL};
  struct ArrowArrayStream st;
  CHECK_OK(hs_table_scan_split(t, &o, none, 0, &st, &e), &e);
  struct ArrowSchema sch;
  CHECK(st.get_schema(&st, &sch) == 0);
  CHECK(sch.n_children == 2 && strcmp(sch.children[0]->name, "k") == 0);
  sch.release(&sch);
  size_t n0 = 0;
  drain_ids(&st, a, &n0, FILES * ROWS);
  CHECK(n0 == 0);

  /* Errors: a path outside the plan, NULL paths, a bad filter. */
  const char *bogus = "/nonexistent/data/x.parquet";
  hs_error e2 = {0};
  CHECK(hs_table_scan_split(t, NULL, &bogus, 1, &st, &e2) == HS_ERR_NOT_FOUND);
  CHECK(strstr(e2.message, "/nonexistent/data/x.parquet") != NULL);
  memset(&e2, 0, sizeof e2);
  CHECK(hs_table_scan_split(t, NULL, NULL, 2, &st, &e2) == HS_ERR_INVALID_ARG);
  memset(&e2, 0, sizeof e2);
  o.filter = "id >>> 3";
  hs_status bad = hs_table_plan_splits(t, &o, &v, &nv, NULL, &e2);
  CHECK(bad == HS_ERR_INVALID_ARG || bad == HS_ERR_UNSUPPORTED);
  CHECK(strstr(e2.message, "position") != NULL && v == NULL && nv == 0);
  memset(&e2, 0, sizeof e2);
  CHECK(hs_table_plan_splits(t, NULL, NULL, &nv, NULL, &e2) == HS_ERR_INVALID_ARG);
  hs_scan_splits_free(NULL, 0);

  test_bad_candidates(t);
  hs_free(a);
  hs_free(b);
  hs_table_free(t);
  free(root);
}

int main(void) {
  test_splits();
  return hs_test_finish("test_split");
}
