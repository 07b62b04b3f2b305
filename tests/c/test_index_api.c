/*
 * test_index_api.c — the scalar index user API: configuration in the
 * table property "hyperstream.indexes" (add, drop, list, survives reopen,
 * bad input commits nothing), configured builds (layout per kind, progress
 * and cancellation, coverage counts), a drop racing a build (the dropped
 * column is not registered), and hs_table_explain's counters against a
 * brute-force count (hs_table_explain_files' per-file records summing to
 * them), with randomized filters giving the same rows with and
 * without indexes.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "hs_table_fixture.h"
#include "index/index.h"
#include "io/io.h"

static hs_table *make_table(char *root, size_t cap) {
  char tmpl[] = "/tmp/hs_test_idxapi_XXXXXX";
  char *d = mkdtemp(tmpl);
  CHECK(d != NULL);
  snprintf(root, cap, "%s/t", d ? d : "/tmp");
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options to;
  hs_table_options_init(&to);
  const char *k[] = {"write.parquet.row-group-limit"};
  const char *v[] = {"100"};
  to.property_keys = k;
  to.property_values = v;
  to.n_properties = 1;
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, &to, &t, &e), &e);
  s.release(&s);
  return t;
}

static hs_error *fresh(hs_error *e) {
  memset(e, 0, sizeof *e);
  return e;
}

/* The list entry of `column`, or NULL. */
static const hs_table_index_info *find_info(const hs_table_index_info *v, size_t n,
                                            const char *column) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i].column, column) == 0) return &v[i];
  return NULL;
}

/* Rows matching `filter` (sorted ids) and the explain counters. */
typedef struct result {
  int64_t *ids;
  size_t n;
  hs_table_explain_info ex;
} result;

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static void run(hs_table *t, const char *filter, result *r) {
  memset(r, 0, sizeof *r);
  hs_error e = {0};
  CHECK_OK(hs_table_refresh(t, &e), &e);
  hs_scan_options o;
  hs_scan_options_init(&o);
  const char *cols[] = {"id"};
  o.columns = cols;
  o.n_columns = 1;
  o.filter = filter;
  struct ArrowArrayStream st;
  CHECK_OK(hs_table_scan_query(t, &o, &st, &e), &e);
  size_t cap = 0;
  for (;;) {
    struct ArrowArray b;
    if (st.get_next(&st, &b) != 0 || b.release == NULL) break;
    const struct ArrowArray *c = b.children[0];
    const int64_t *v = c->buffers[1];
    for (int64_t i = 0; i < b.length; i++) {
      if (r->n == cap) {
        cap = cap ? cap * 2 : 256;
        r->ids = hs_realloc(r->ids, cap * sizeof *r->ids);
      }
      r->ids[r->n++] = v[c->offset + i];
    }
    b.release(&b);
  }
  st.release(&st);
  if (r->n) qsort(r->ids, r->n, sizeof *r->ids, cmp_i64);
  hs_scan_options_init(&o);
  o.filter = filter;
  /* hs_table_explain_files: the per-file records add up to the totals. */
  hs_scan_file_info *f = NULL;
  size_t nf = 0;
  CHECK_OK(hs_table_explain_files(t, &o, &r->ex, &f, &nf, &e), &e);
  CHECK_EQ_INT((int64_t)nf, r->ex.scan.files_read);
  int64_t matched = 0, scanned = 0, cand = 0, elim = 0, rgs = 0, indexed = 0;
  for (size_t i = 0; i < nf; i++) {
    matched += f[i].rows_matched;
    scanned += f[i].rows_scanned;
    cand += f[i].rows_candidate;
    elim += f[i].rows_eliminated;
    rgs += f[i].row_groups_read;
    indexed += f[i].indexed;
    CHECK(f[i].path != NULL && strstr(f[i].path, ".parquet") != NULL);
    CHECK(f[i].indexed ? f[i].index_columns[0] != 0 : f[i].index_columns[0] == 0);
    if (f[i].indexed) CHECK_EQ_INT(f[i].rows_candidate + f[i].rows_eliminated, f[i].rows);
  }
  CHECK_EQ_INT(matched, r->ex.scan.rows_matched);
  CHECK_EQ_INT(scanned, r->ex.scan.rows_scanned);
  CHECK_EQ_INT(cand, r->ex.index.rows_candidate);
  CHECK_EQ_INT(elim, r->ex.index.rows_eliminated);
  CHECK_EQ_INT(rgs, r->ex.scan.row_groups_read);
  CHECK_EQ_INT(indexed, r->ex.index.files_indexed);
  hs_free(f);
}

/* Layout of `column` in the index file registered for data file 0. */
static int layout_of(const char *root, const char *column) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "ls %s/index/*.puffin", root);
  FILE *p = popen(cmd, "r");
  int layout = -1;
  char line[512];
  while (p != NULL && fgets(line, sizeof line, p) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    hs_error e = {0};
    hs_source *src = NULL;
    hs_sidx_file *f = NULL;
    hs_sidx_column *c = NULL;
    if (hs_source_open_file(line, &src, &e) != HS_OK) continue;
    if (hs_sidx_file_open(src, &f, &e) == HS_OK && hs_sidx_column_open(f, column, &c, &e) == HS_OK)
      layout = (int)hs_sidx_column_layout(c);
    hs_sidx_column_free(c);
    hs_sidx_file_free(f);
    hs_source_unref(src);
  }
  if (p != NULL) pclose(p);
  return layout;
}

static void test_config(void) {
  char root[256];
  hs_table *t = make_table(root, sizeof root);
  append_rows(t, 0, 500);
  hs_error e = {0};
  int64_t v0 = hs_table_version(t);
  /* Bad input commits nothing and says why. */
  CHECK(hs_table_add_index(t, "nope", "bitmap", NULL, fresh(&e)) == HS_ERR_INVALID_ARG);
  CHECK(strstr(e.message, "no column 'nope'") != NULL);
  CHECK(hs_table_add_index(t, "k", "hash", NULL, fresh(&e)) == HS_ERR_INVALID_ARG);
  CHECK(strstr(e.message, "unknown kind 'hash'") != NULL);
  CHECK(hs_table_add_index(t, "k", "btree", "{\"blocks\": 3}", fresh(&e)) == HS_ERR_INVALID_ARG);
  CHECK(strstr(e.message, "unknown parameter 'blocks'") != NULL);
  CHECK(hs_table_add_index(t, "k", "btree", "[1]", fresh(&e)) == HS_ERR_INVALID_ARG);
  CHECK(hs_table_add_index(t, "k", "bitmap", "{\"block_rows\": 128}", fresh(&e)) ==
        HS_ERR_INVALID_ARG);
  CHECK(hs_table_drop_index(t, "k", fresh(&e)) == HS_ERR_NOT_FOUND);
  CHECK_OK(hs_table_refresh(t, &e), &e);
  CHECK_EQ_INT(hs_table_version(t), v0);
  /* Adds; re-adding the same is a no-op commit; kind case-insensitive. */
  CHECK_OK(hs_table_add_index(t, "k", "BitMap", NULL, &e), &e);
  CHECK_OK(hs_table_add_index(t, "x", "btree", "{\"block_rows\": 128}", &e), &e);
  CHECK_OK(hs_table_add_index(t, "name", "inverted", "{}", &e), &e);
  CHECK(hs_table_add_index(t, "id", "hnsw", "{\"m\": 16}", fresh(&e)) == HS_ERR_INVALID_ARG);
  CHECK(strstr(e.message, "needs a vector column") != NULL);
  CHECK_OK(hs_table_add_index(t, "id", "btree", NULL, &e), &e);
  int64_t v1 = hs_table_version(t);
  CHECK_EQ_INT(v1, v0 + 4);
  CHECK_OK(hs_table_add_index(t, "k", "bitmap", NULL, &e), &e);
  CHECK_EQ_INT(hs_table_version(t), v1);
  /* A reopened table knows the configuration; nothing is built yet. */
  hs_table *t2 = NULL;
  CHECK_OK(hs_table_open(root, &t2, &e), &e);
  hs_table_index_info *v = NULL;
  size_t n = 0;
  CHECK_OK(hs_table_list_indexes(t2, &v, &n, &e), &e);
  CHECK_EQ_INT(n, 4);
  if (n == 4) {
    CHECK(strcmp(v[0].column, "k") == 0 && strcmp(v[0].kind, "bitmap") == 0);
    CHECK(strcmp(v[1].column, "x") == 0 && strcmp(v[1].params, "{\"block_rows\":128}") == 0);
    CHECK(strcmp(v[3].kind, "btree") == 0 && !v[3].is_vector && !v[0].is_vector);
    CHECK_EQ_INT(v[0].files_indexed, 0);
    CHECK_EQ_INT(v[0].files_total, 1);
  }
  hs_table_index_info_free(v, n);
  /* Naming an unconfigured column is refused. */
  const char *flagcol[] = {"nope"};
  hs_table_index_build_options bo;
  memset(&bo, 0, sizeof bo);
  bo.columns = flagcol;
  bo.n_columns = 1;
  CHECK(hs_table_build_configured_indexes(t2, &bo, NULL, fresh(&e)) == HS_ERR_INVALID_ARG);
  CHECK(strstr(e.message, "no configured index") != NULL);
  /* Build everything configured: layouts follow the kinds. */
  int64_t built = -1;
  CHECK_OK(hs_table_build_configured_indexes(t2, NULL, &built, &e), &e);
  CHECK_EQ_INT(built, 1);
  CHECK_EQ_INT(layout_of(root, "k"), HS_SIDX_LAYOUT_DICT);
  CHECK_EQ_INT(layout_of(root, "x"), HS_SIDX_LAYOUT_SORTED);
  CHECK_EQ_INT(layout_of(root, "id"), HS_SIDX_LAYOUT_SORTED);
  /* Idempotent: nothing missing, nothing committed. */
  int64_t v2 = hs_table_version(t2);
  CHECK_OK(hs_table_build_configured_indexes(t2, NULL, &built, &e), &e);
  CHECK_EQ_INT(built, 0);
  CHECK_EQ_INT(hs_table_version(t2), v2);
  /* Drop: the config goes, scans stop using the index at once. */
  result r;
  run(t, "k = 3", &r);
  CHECK_EQ_INT(r.ex.index.files_indexed, 1);
  hs_free(r.ids);
  CHECK_OK(hs_table_drop_index(t, "k", &e), &e);
  run(t2, "k = 3", &r);
  CHECK_EQ_INT(r.ex.index.files_indexed, 0);
  CHECK_EQ_INT(r.n, 500 / 13 + 1);
  hs_free(r.ids);
  run(t2, "x = 3.5", &r); /* another column of the same file still answers */
  CHECK_EQ_INT(r.ex.index.files_indexed, 1);
  hs_free(r.ids);
  CHECK_OK(hs_table_list_indexes(t2, &v, &n, &e), &e);
  CHECK_EQ_INT(n, 3);
  CHECK(find_info(v, n, "k") == NULL);
  hs_table_index_info_free(v, n);
  /* Re-adding with another kind replaces the old index files' use. */
  CHECK_OK(hs_table_add_index(t, "x", "bitmap", NULL, &e), &e);
  run(t, "x = 3.5", &r);
  CHECK_EQ_INT(r.ex.index.files_indexed, 0);
  hs_free(r.ids);
  /* Unconfigured builds (hs_table_build_indexes) show as such. */
  const char *kcol[] = {"k"};
  CHECK_OK(hs_table_build_indexes(t, kcol, 1, &e), &e);
  CHECK_OK(hs_table_list_indexes(t, &v, &n, &e), &e);
  const hs_table_index_info *ki = find_info(v, n, "k");
  CHECK(ki != NULL && strcmp(ki->kind, "unconfigured") == 0 && ki->files_indexed == 1);
  hs_table_index_info_free(v, n);
  CHECK_OK(hs_table_drop_index(t, "k", &e), &e); /* registry-only columns drop too */
  hs_table_free(t2);
  hs_table_free(t);
}

/* Progress: (0, total) first, then 1..total; a non-zero return cancels. */
typedef struct progress_log {
  int64_t calls, last_done, total;
  int ordered;
  int64_t cancel_at; /* return 1 when done reaches this (-1: never) */
  hs_table *other;   /* when set: drop index "k" through it at the first call */
} progress_log;

static int on_progress(void *ctx, int64_t done, int64_t total) {
  progress_log *p = ctx;
  if (p->calls == 0)
    p->ordered = done == 0;
  else if (done != p->last_done + 1 || total != p->total)
    p->ordered = 0;
  p->calls++;
  p->last_done = done;
  p->total = total;
  if (p->other != NULL && done == 1) {
    hs_error e = {0};
    CHECK_OK(hs_table_drop_index(p->other, "k", &e), &e);
  }
  return p->cancel_at >= 0 && done >= p->cancel_at;
}

static void test_build_progress_and_race(void) {
  char root[256];
  hs_table *t = make_table(root, sizeof root);
  hs_error e = {0};
  for (int i = 0; i < 5; i++) append_rows(t, i * 300, 300);
  CHECK_OK(hs_table_add_index(t, "k", "bitmap", NULL, &e), &e);
  CHECK_OK(hs_table_add_index(t, "name", "inverted", NULL, &e), &e);
  /* Cancelled at once: nothing built, nothing registered. */
  progress_log p = {0, 0, 0, 0, 0, NULL};
  hs_table_index_build_options bo;
  memset(&bo, 0, sizeof bo);
  bo.progress = on_progress;
  bo.progress_ctx = &p;
  bo.threads = 2;
  int64_t built = -1;
  CHECK(hs_table_build_configured_indexes(t, &bo, &built, fresh(&e)) == HS_ERR_INVALID_ARG);
  CHECK(strstr(e.message, "cancelled") != NULL);
  CHECK_EQ_INT(built, 0);
  CHECK_EQ_INT(p.calls, 1);
  /* A drop committed while the build runs: "k" is not registered. */
  hs_table *other = NULL;
  CHECK_OK(hs_table_open(root, &other, &e), &e);
  progress_log q = {0, 0, 0, 0, -1, other};
  bo.progress_ctx = &q;
  CHECK_OK(hs_table_build_configured_indexes(t, &bo, &built, &e), &e);
  CHECK_EQ_INT(built, 5);
  CHECK(q.ordered && q.calls == 6 && q.total == 5 && q.last_done == 5);
  hs_table_index_info *v = NULL;
  size_t n = 0;
  CHECK_OK(hs_table_list_indexes(t, &v, &n, &e), &e);
  CHECK_EQ_INT(n, 1);
  const hs_table_index_info *ni = find_info(v, n, "name");
  CHECK(ni != NULL && ni->files_indexed == 5 && ni->files_total == 5);
  CHECK(find_info(v, n, "k") == NULL);
  hs_table_index_info_free(v, n);
  /* Appends after the build are uncovered until the next build. */
  append_rows(t, 1500, 300);
  CHECK_OK(hs_table_list_indexes(t, &v, &n, &e), &e);
  CHECK(n == 1 && v[0].files_indexed == 5 && v[0].files_total == 6);
  hs_table_index_info_free(v, n);
  CHECK_OK(hs_table_build_configured_indexes(other, NULL, &built, &e), &e);
  CHECK_EQ_INT(built, 1);
  hs_table_free(other);
  hs_table_free(t);
}

/* Randomized filters: same rows with and without indexes; explain counts. */
static void test_explain_random(void) {
  char root[256];
  hs_table *t = make_table(root, sizeof root);
  hs_error e = {0};
  for (int i = 0; i < 4; i++) append_rows(t, i * 400, 400);
  uint64_t rs = 42;
  const char *ops[] = {"=", "<>", "<", "<=", ">", ">="};
  char filters[40][128];
  result plain[40];
  for (int i = 0; i < 40; i++) {
    int c = (int)(hs_test_rand(&rs) % 3);
    const char *op = ops[hs_test_rand(&rs) % 6];
    if (c == 0)
      snprintf(filters[i], sizeof filters[i], "k %s %d OR name IS NULL", op,
               (int)(hs_test_rand(&rs) % 15));
    else if (c == 1)
      snprintf(filters[i], sizeof filters[i], "x %s %.1f AND id < %d", op,
               (double)(hs_test_rand(&rs) % 60) * 0.5, (int)(hs_test_rand(&rs) % 1700));
    else
      snprintf(filters[i], sizeof filters[i], "name %s 'n%d' OR name LIKE 'n3%%'", op,
               (int)(hs_test_rand(&rs) % 40));
    run(t, filters[i], &plain[i]);
    CHECK_EQ_INT(plain[i].ex.index.files_indexed, 0);
    CHECK_EQ_INT(plain[i].ex.scan.rows_matched, plain[i].n);
  }
  CHECK_OK(hs_table_add_index(t, "k", "bitmap", NULL, &e), &e);
  CHECK_OK(hs_table_add_index(t, "x", "sorted", "{\"block_rows\": 64}", &e), &e);
  CHECK_OK(hs_table_add_index(t, "name", "scalar", NULL, &e), &e);
  CHECK_OK(hs_table_add_index(t, "id", "btree", NULL, &e), &e);
  CHECK_OK(hs_table_build_configured_indexes(t, NULL, NULL, &e), &e);
  int64_t answered = 0;
  for (int i = 0; i < 40; i++) {
    result r;
    run(t, filters[i], &r);
    CHECK(r.n == plain[i].n && (r.n == 0 || memcmp(r.ids, plain[i].ids, r.n * 8) == 0));
    CHECK_EQ_INT(r.ex.scan.rows_matched, r.n);
    CHECK_EQ_INT(r.ex.scan.files_planned, 4);
    CHECK(r.ex.index.files_indexed <= r.ex.scan.files_read);
    answered += r.ex.index.files_indexed;
    if (r.n != plain[i].n) fprintf(stderr, "differs: %s\n", filters[i]);
    hs_free(r.ids);
    hs_free(plain[i].ids);
  }
  CHECK(answered > 40);
  /* An exact count: k = 5 in 1600 rows (ids 0..1599). */
  result r;
  run(t, "k = 5", &r);
  CHECK_EQ_INT(r.n, 123);
  CHECK_EQ_INT(r.ex.index.files_indexed, 4);
  CHECK_EQ_INT(r.ex.index.rows_candidate + r.ex.index.rows_eliminated, 1600);
  CHECK_EQ_INT(r.ex.index.rows_candidate, 123);
  hs_free(r.ids);
  /* A bad filter is an error naming the position. */
  hs_scan_options o;
  hs_scan_options_init(&o);
  o.filter = "nope = 1";
  hs_table_explain_info ex;
  CHECK(hs_table_explain(t, &o, &ex, fresh(&e)) != HS_OK);
  CHECK(strstr(e.message, "nope") != NULL);
  hs_table_free(t);
}

/* The one index file under root/index (its bytes in *out, hs_malloc'd). */
static size_t only_index_file(const char *root, uint8_t **out) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "ls %s/index/*.puffin", root);
  FILE *p = popen(cmd, "r");
  char line[512];
  size_t n_files = 0, len = 0;
  *out = NULL;
  while (p != NULL && fgets(line, sizeof line, p) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    n_files++;
    FILE *f = fopen(line, "rb");
    if (f == NULL) continue;
    fseek(f, 0, SEEK_END);
    len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    hs_free(*out);
    *out = hs_malloc(len ? len : 1);
    CHECK(fread(*out, 1, len, f) == len);
    fclose(f);
  }
  if (p != NULL) pclose(p);
  CHECK_EQ_INT(n_files, 1);
  return len;
}

/* hs_table_append_keep + a build over the kept append: same bytes as a
 * build that re-reads the file; indexed columns are skipped; empty and
 * failed appends keep nothing. (ASan: kept batches outlive the append.) */
static void test_append_keep(void) {
  char ra[256], rb[256];
  hs_table *a = make_table(ra, sizeof ra), *b = make_table(rb, sizeof rb);
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArray *bt = hs_calloc(3, sizeof *bt);
  make_batch(&bt[0], 0, 700);
  make_batch(&bt[1], 700, 1);
  make_batch(&bt[2], 701, 300);
  struct ArrowArrayStream st;
  CHECK_OK(hs_arrow_stream_from_batches(&s, bt, 3, &st, &e), &e);
  hs_free(bt);
  int64_t snap = -1;
  hs_table_appended *kept = NULL;
  CHECK_OK(hs_table_append_keep(a, &st, &snap, &kept, &e), &e);
  CHECK(snap > 0 && kept != NULL);
  append_rows(b, 0, 1001);
  const char *cols[] = {"id", "name", "x", "k"};
  const char *kinds[] = {"btree", "inverted", "btree", "bitmap"};
  for (int i = 0; i < 4; i++) {
    CHECK_OK(hs_table_add_index(a, cols[i], kinds[i], i == 0 ? "{\"block_rows\": 64}" : NULL, &e),
             &e);
    CHECK_OK(hs_table_add_index(b, cols[i], kinds[i], i == 0 ? "{\"block_rows\": 64}" : NULL, &e),
             &e);
  }
  const hs_table_appended *list[] = {kept, kept};
  hs_table_index_build_options bo;
  memset(&bo, 0, sizeof bo);
  bo.appended = list;
  bo.n_appended = 2; /* the same append twice: one file */
  int64_t built = 0;
  CHECK_OK(hs_table_build_configured_indexes(a, &bo, &built, &e), &e);
  CHECK_EQ_INT(built, 1);
  CHECK_OK(hs_table_build_configured_indexes(a, &bo, &built, &e), &e);
  CHECK_EQ_INT(built, 0); /* already indexed */
  CHECK_OK(hs_table_build_configured_indexes(b, NULL, &built, &e), &e);
  CHECK_EQ_INT(built, 1);
  uint8_t *xa = NULL, *xb = NULL;
  size_t la = only_index_file(ra, &xa), lb = only_index_file(rb, &xb);
  /* The blobs are the same bytes; the footers differ in the data file each
   * is bound to (src/index/binding.h). */
  size_t ba = la >= 16 ? la - 16 - hs_load_u32le(xa + la - 12) : 0;
  size_t bb = lb >= 16 ? lb - 16 - hs_load_u32le(xb + lb - 12) : 0;
  CHECK(ba > 4 && ba == bb && ba < la && memcmp(xa, xb, ba) == 0);
  hs_free(xa);
  hs_free(xb);
  hs_table_appended_free(kept);
  /* Nothing committed: nothing kept. */
  make_schema(&s);
  CHECK_OK(hs_arrow_stream_from_batches(&s, NULL, 0, &st, &e), &e);
  kept = (hs_table_appended *)1;
  CHECK_OK(hs_table_append_keep(a, &st, &snap, &kept, &e), &e);
  CHECK(snap == -1 && kept == NULL);
  struct ArrowSchema bad;
  CHECK_OK(hs_arrow_schema_init(&bad, "+s", "", 0, 1, &e), &e);
  CHECK_OK(hs_arrow_schema_init(bad.children[0], "l", "other", 0, 0, &e), &e);
  struct ArrowArray *one = hs_calloc(1, sizeof *one);
  int64_t *v = hs_malloc(sizeof *v); /* owned by the array */
  *v = 1;
  struct ArrowArray col;
  memset(&col, 0, sizeof col);
  CHECK_OK(hs_arrow_array_make_primitive(&col, 1, v, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_struct(one, 1, &col, 1, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_stream_from_batches(&bad, one, 1, &st, &e), &e);
  hs_free(one);
  kept = (hs_table_appended *)1;
  CHECK(hs_table_append_keep(a, &st, &snap, &kept, fresh(&e)) == HS_ERR_SCHEMA);
  CHECK(kept == NULL);
  hs_table_appended_free(NULL);
  /* Several columns in one commit; re-configuring two drops both columns'
   * registry entries (the other two stay registered); errors commit nothing. */
  int64_t v0 = hs_table_version(a);
  const char *two[] = {"id", "x"}, *inv[] = {"inverted", "inverted"};
  const char *dup[] = {"id", "id"}, *badc[] = {"k", "nope"};
  CHECK(hs_table_add_indexes(a, dup, inv, NULL, 2, fresh(&e)) == HS_ERR_INVALID_ARG);
  CHECK(strstr(e.message, "named twice") != NULL);
  CHECK(hs_table_add_indexes(a, badc, inv, NULL, 2, fresh(&e)) == HS_ERR_INVALID_ARG);
  CHECK_OK(hs_table_refresh(a, &e), &e);
  CHECK_EQ_INT(hs_table_version(a), v0);
  CHECK_OK(hs_table_add_indexes(a, two, inv, NULL, 2, &e), &e);
  CHECK_EQ_INT(hs_table_version(a), v0 + 1);
  CHECK_OK(hs_table_add_indexes(a, two, inv, NULL, 2, &e), &e); /* the same: no commit */
  CHECK_EQ_INT(hs_table_version(a), v0 + 1);
  hs_table_index_info *li = NULL;
  size_t nli = 0;
  CHECK_OK(hs_table_list_indexes(a, &li, &nli, &e), &e);
  for (size_t i = 0; i < nli; i++) {
    bool re = strcmp(li[i].column, "id") == 0 || strcmp(li[i].column, "x") == 0;
    CHECK_EQ_INT(li[i].files_indexed, re ? 0 : 1);
    if (re) CHECK(strcmp(li[i].kind, "inverted") == 0);
  }
  CHECK_EQ_INT(nli, 4);
  hs_table_index_info_free(li, nli);
  const hs_table_appended *none[] = {NULL};
  bo.appended = none;
  bo.n_appended = 1;
  CHECK(hs_table_build_configured_indexes(a, &bo, &built, fresh(&e)) == HS_ERR_INVALID_ARG);
  hs_table_free(a);
  hs_table_free(b);
}

int main(void) {
  test_append_keep();
  test_config();
  test_build_progress_and_race();
  test_explain_random();
  return hs_test_finish("test_index_api");
}
