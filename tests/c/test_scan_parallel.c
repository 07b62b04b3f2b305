/*
 * test_scan_parallel.c — a filtered scan with several threads (pass one of
 * files run ahead, column chunks decoded and assembled on the worker pool)
 * must be the serial scan, exactly: the same batches (boundaries, rows,
 * values, nulls), the same batch origins, the same scan, page and index
 * counters and per-file records, the same error after the same rows. The
 * serial scan (HS_THREADS=1) is the oracle; it is itself checked against
 * DuckDB by test_scan / test_index_plan and tests/python/test_scan.py.
 *
 * Table: 6 files (one unindexed), row groups of 1500 rows and small pages
 * so page indexes prune, columns id/name/x/k with nulls. The parallel run
 * sets HS_PQ_PARALLEL_MIN=0 so that even these small chunks go through the
 * reader's parallel paths. Sizes scale down under ASan (or HS_TEST_SMALL).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "hs_table_fixture.h"
#include "io/fs.h"
#include "query/scan.h"

#if defined(__SANITIZE_ADDRESS__)
#define SCALE_DOWN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCALE_DOWN 1
#endif
#endif
#ifndef SCALE_DOWN
#define SCALE_DOWN 0
#endif

/* Everything a scan showed: a text rendering of every batch (its length,
 * origin and rows), its counters and per-file records, its error. */
typedef struct seen {
  hs_buf text;
  hs_status status;
  char message[HS_ERROR_MESSAGE_MAX];
  hs_scan_stats stats;
  hs_scan_page_stats pstats;
  hs_scan_index_stats istats;
  int64_t rows;
} seen;

static bool valid_at(const struct ArrowArray *c, int64_t i) {
  const uint8_t *v = c->n_buffers > 0 ? c->buffers[0] : NULL;
  int64_t j = i + c->offset;
  return v == NULL || (v[j / 8] >> (j % 8)) & 1;
}

static void render_batch(hs_buf *b, const struct ArrowArray *a) {
  const struct ArrowArray *id = a->children[0], *name = a->children[1], *x = a->children[2],
                          *k = a->children[3];
  for (int64_t i = 0; i < a->length; i++) {
    hs_buf_printf(b, "%lld|", (long long)((const int64_t *)id->buffers[1])[id->offset + i]);
    if (valid_at(name, i)) {
      const int32_t *off = name->buffers[1];
      const char *d = name->buffers[2];
      int32_t s = off[name->offset + i], e = off[name->offset + i + 1];
      hs_buf_printf(b, "%.*s|", (int)(e - s), d + s);
    } else {
      hs_buf_printf(b, "null|");
    }
    if (valid_at(x, i))
      hs_buf_printf(b, "%.17g|", ((const double *)x->buffers[1])[x->offset + i]);
    else
      hs_buf_printf(b, "null|");
    if (valid_at(k, i))
      hs_buf_printf(b, "%d\n", ((const int32_t *)k->buffers[1])[k->offset + i]);
    else
      hs_buf_printf(b, "null\n");
  }
}

static void scan(hs_table *t, const char *filter, const char *threads, int64_t batch, seen *out) {
  memset(out, 0, sizeof *out);
  hs_buf_init(&out->text);
  setenv("HS_THREADS", threads, 1);
  /* The parallel run decodes and assembles columns on the pool whatever
   * their size (reader.c thresholds off). */
  if (strcmp(threads, "1") != 0) setenv("HS_PQ_PARALLEL_MIN", "0", 1);
  hs_scan_options o;
  hs_scan_options_init(&o);
  o.filter = filter;
  o.batch_rows_max = batch;
  hs_error e = {0};
  struct ArrowArrayStream st;
  out->status = hs_table_scan_query(t, &o, &st, &e);
  if (out->status != HS_OK) {
    snprintf(out->message, sizeof out->message, "%s", e.message);
    unsetenv("HS_THREADS");
    unsetenv("HS_PQ_PARALLEL_MIN");
    return;
  }
  for (;;) {
    struct ArrowArray a;
    int rc = st.get_next(&st, &a);
    if (rc != 0) {
      out->status = HS_ERR_IO;
      const char *m = st.get_last_error(&st);
      snprintf(out->message, sizeof out->message, "%s", m ? m : "");
      break;
    }
    if (a.release == NULL) break;
    hs_scan_origin org;
    CHECK_OK(hs_scan_batch_origin(&st, &org, &e), &e);
    hs_buf_printf(&out->text, "batch %lld file %zu %s first %lld:", (long long)a.length, org.file,
                  org.path, (long long)org.first);
    for (int64_t i = 0; org.rows != NULL && i < org.n; i++)
      hs_buf_printf(&out->text, " %lld", (long long)org.rows[i]);
    hs_buf_printf(&out->text, "\n");
    render_batch(&out->text, &a);
    out->rows += a.length;
    a.release(&a);
  }
  CHECK_OK(hs_scan_stats_get(&st, &out->stats, &e), &e);
  CHECK_OK(hs_scan_page_stats_get(&st, &out->pstats, &e), &e);
  CHECK_OK(hs_scan_index_stats_get(&st, &out->istats, &e), &e);
  size_t nf = 0;
  CHECK_OK(hs_scan_file_info_get(&st, 0, NULL, &nf, &e), &e);
  for (size_t i = 0; i < nf; i++) {
    hs_scan_file_info f;
    CHECK_OK(hs_scan_file_info_get(&st, i, &f, NULL, &e), &e);
    hs_buf_printf(&out->text,
                  "file %s rows %lld ix %d '%s' rg %lld/%lld rows %lld/%lld "
                  "pages %lld/%lld cand %lld elim %lld\n",
                  f.path, (long long)f.rows, (int)f.indexed, f.index_columns,
                  (long long)f.row_groups_read, (long long)f.row_groups_pruned,
                  (long long)f.rows_scanned, (long long)f.rows_matched, (long long)f.pages,
                  (long long)f.pages_pruned, (long long)f.rows_candidate,
                  (long long)f.rows_eliminated);
  }
  st.release(&st);
  unsetenv("HS_THREADS");
  unsetenv("HS_PQ_PARALLEL_MIN");
}

static void seen_free(seen *s) {
  hs_buf_free(&s->text);
}

/* Serial and parallel agree on everything; returns the rows. */
static int64_t agree(hs_table *t, const char *filter, int64_t batch) {
  seen a, b;
  scan(t, filter, "1", batch, &a);
  scan(t, filter, "3", batch, &b);
  bool same = a.status == b.status && strcmp(a.message, b.message) == 0 &&
              a.text.len == b.text.len &&
              (a.text.len == 0 || memcmp(a.text.data, b.text.data, a.text.len) == 0) &&
              memcmp(&a.stats, &b.stats, sizeof a.stats) == 0 &&
              memcmp(&a.pstats, &b.pstats, sizeof a.pstats) == 0 &&
              memcmp(&a.istats, &b.istats, sizeof a.istats) == 0;
  if (!same) {
    fprintf(stderr,
            "serial and parallel differ: filter %s batch %lld: %zu vs %zu bytes, "
            "rows %lld vs %lld, '%s' vs '%s'\n",
            filter ? filter : "(none)", (long long)batch, a.text.len, b.text.len, (long long)a.rows,
            (long long)b.rows, a.message, b.message);
  }
  CHECK(same);
  int64_t rows = a.status == HS_OK ? a.rows : -1;
  seen_free(&a);
  seen_free(&b);
  return rows;
}

static void random_filter(uint64_t *rs, char *buf, size_t cap, int64_t n, int depth) {
  uint64_t r = hs_test_rand(rs);
  if (depth < 2 && r % 3 == 0) {
    char a[512], b[512];
    random_filter(rs, a, sizeof a, n, depth + 1);
    random_filter(rs, b, sizeof b, n, depth + 1);
    snprintf(buf, cap, "(%s) %s (%s)", a, (r >> 4) & 1 ? "AND" : "OR", b);
    return;
  }
  static const char *cmp[] = {"=", "<>", "<", "<=", ">", ">="};
  const char *op = cmp[(r >> 4) % 6];
  switch ((r >> 12) % 6) {
  case 0: snprintf(buf, cap, "id %s %lld", op, (long long)((r >> 20) % (uint64_t)n)); break;
  case 1: snprintf(buf, cap, "k %s %d", op, (int)((r >> 20) % 15) - 1); break;
  case 2: snprintf(buf, cap, "x %s %.1f", op, (double)((r >> 20) % 60) * 0.25); break;
  case 3: snprintf(buf, cap, "name = 'n%d'", (int)((r >> 20) % 40)); break;
  case 4: snprintf(buf, cap, "x IS %sNULL", (r >> 21) & 1 ? "NOT " : ""); break;
  default: {
    long long lo = (long long)((r >> 20) % (uint64_t)n);
    snprintf(buf, cap, "id BETWEEN %lld AND %lld", lo, lo + (long long)((r >> 40) % 50));
  }
  }
}

int main(void) {
  bool small = SCALE_DOWN || getenv("HS_TEST_SMALL") != NULL;
  int64_t per_file = small ? 2000 : 5000;
  int n_filters = small ? 20 : 40;
  char tmpl[] = "/tmp/hs_test_scanpar_XXXXXX";
  char *dir = mkdtemp(tmpl);
  CHECK(dir != NULL);
  if (dir == NULL) return hs_test_finish("test_scan_parallel");
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options to;
  hs_table_options_init(&to);
  const char *k[] = {"write.parquet.row-group-limit", "write.parquet.page-size-bytes"};
  const char *v[] = {"1500", "2048"};
  to.property_keys = k;
  to.property_values = v;
  to.n_properties = 2;
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, &to, &t, &e), &e);
  s.release(&s);
  if (t == NULL) return hs_test_finish("test_scan_parallel");
  for (int f = 0; f < 5; f++) append_rows(t, f * per_file, per_file - f * 7);
  const char *cols[] = {"id", "name", "x", "k"};
  CHECK_OK(hs_table_build_indexes(t, cols, 4, &e), &e);
  append_rows(t, 5 * per_file, per_file / 2); /* unindexed */
  int64_t n = 5 * per_file + per_file / 2;

  /* No filter, selective, dense and empty filters; several batch sizes. */
  CHECK(agree(t, NULL, 0) > 0);
  CHECK(agree(t, NULL, 1000) > 0);
  CHECK(agree(t, "id = 17", 0) == 1);
  CHECK(agree(t, "id < 0", 0) == 0);
  CHECK(agree(t, "k = 3", 0) > 0);
  CHECK(agree(t, "k >= 1", 777) > 0);
  CHECK(agree(t, "name = 'n5' AND x < 3", 0) > 0);
  uint64_t rs = 99;
  int64_t total = 0;
  for (int i = 0; i < n_filters; i++) {
    char f[2048];
    random_filter(&rs, f, sizeof f, n, 0);
    int64_t rows = agree(t, f, i % 3 == 0 ? 0 : 1 + (int64_t)(hs_test_rand(&rs) % 5000));
    CHECK(rows >= 0);
    total += rows;
  }
  CHECK(total > 0);

  /* A data file gone: the same rows before the same error. */
  char data[4300];
  snprintf(data, sizeof data, "%s/data", root);
  char **names = NULL;
  size_t n_names = 0;
  CHECK_OK(hs_fs_list(data, &names, &n_names, &e), &e);
  CHECK(n_names >= 6);
  if (n_names >= 6) {
    char p[4600];
    snprintf(p, sizeof p, "%s/%s", data, names[2]);
    CHECK_OK(hs_fs_remove(p, &e), &e);
    CHECK(agree(t, "k = 3", 0) == -1);
    CHECK(agree(t, "id >= 0", 500) == -1);
  }
  hs_fs_names_free(names, n_names);
  hs_table_free(t);
  return hs_test_finish("test_scan_parallel");
}
