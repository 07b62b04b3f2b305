/*
 * test_scan_morsels.c — a scan cut into morsels (hs_scan_morsels,
 * src/query/scan.h) read on several threads at once must give, morsel
 * after morsel, exactly the serial scan's rows (ids, nulls, values) and,
 * with hs_scan_morsel_done, its counters (files, row groups read and
 * pruned, pages, rows scanned / matched / returned / deleted). The serial
 * scan is the oracle (itself checked against DuckDB by test_scan and
 * tests/python/test_scan.py); src/sql's parallel scan is checked against
 * DuckDB by tests/python/test_sql_parallel_scan.py.
 *
 * Table: 4 files, row groups of 700 rows, small pages (page pruning), rows
 * deleted by a filter after writing; morsel sizes that cut row groups and
 * cross their boundaries; no filter, selective and dense filters. A table
 * with a scalar index on a filter column is not cut.
 */
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow.h"
#include "common/parallel.h"
#include "hs_test.h"
#include "hs_table_fixture.h"
#include "query/scan.h"

static bool valid_at(const struct ArrowArray *c, int64_t i) {
  const uint8_t *v = c->n_buffers > 0 ? c->buffers[0] : NULL;
  int64_t j = i + c->offset;
  return v == NULL || (v[j / 8] >> (j % 8)) & 1;
}

/* Columns id, x, k of every batch of `st` (to its end) appended to b. */
static hs_status drain(struct ArrowArrayStream *st, hs_buf *b) {
  for (;;) {
    struct ArrowArray a;
    int rc = st->get_next(st, &a);
    if (rc != 0) return HS_ERR_IO;
    if (a.release == NULL) return HS_OK;
    const struct ArrowArray *id = a.children[0], *x = a.children[1], *k = a.children[2];
    for (int64_t i = 0; i < a.length; i++) {
      hs_buf_printf(b, "%lld ", (long long)((const int64_t *)id->buffers[1])[id->offset + i]);
      if (valid_at(x, i))
        hs_buf_printf(b, "%.17g ", ((const double *)x->buffers[1])[x->offset + i]);
      else
        hs_buf_printf(b, "null ");
      hs_buf_printf(b, "%d\n", ((const int32_t *)k->buffers[1])[k->offset + i]);
    }
    a.release(&a);
  }
}

typedef struct job {
  struct ArrowArrayStream *parent;
  const hs_scan_morsel *m;
  hs_buf *out; /* per morsel */
  struct ArrowArrayStream *streams;
  hs_status *st;
} job;

static void read_morsels(void *ctx, size_t begin, size_t end, uint32_t w) {
  (void)w;
  job *j = ctx;
  for (size_t i = begin; i < end; i++) {
    hs_error e = {0};
    j->st[i] = hs_scan_morsel_open(j->parent, &j->m[i], &j->streams[i], &e);
    if (j->st[i] == HS_OK) j->st[i] = drain(&j->streams[i], &j->out[i]);
  }
}

static const char *cols[] = {"id", "x", "k"};

static void open_scan(hs_table *t, const char *filter, struct ArrowArrayStream *st) {
  hs_scan_options o;
  hs_scan_options_init(&o);
  o.filter = filter;
  o.columns = cols;
  o.n_columns = 3;
  o.batch_rows_max = 300;
  hs_error e = {0};
  CHECK_OK(hs_table_scan_query(t, &o, st, &e), &e);
}

/* The morsels of `rows` give the serial scan's rows and counters. */
static void agree(hs_table *t, const char *filter, int64_t rows) {
  hs_error e = {0};
  struct ArrowArrayStream ser, par;
  hs_buf a, b;
  hs_buf_init(&a);
  hs_buf_init(&b);
  open_scan(t, filter, &ser);
  CHECK(drain(&ser, &a) == HS_OK);
  hs_scan_stats sa, sb;
  hs_scan_page_stats pa, pb;
  CHECK_OK(hs_scan_stats_get(&ser, &sa, &e), &e);
  CHECK_OK(hs_scan_page_stats_get(&ser, &pa, &e), &e);
  ser.release(&ser);

  open_scan(t, filter, &par);
  hs_scan_morsel *m = NULL;
  size_t n = 0;
  CHECK_OK(hs_scan_morsels(&par, rows, &m, &n, &e), &e);
  if (filter == NULL) CHECK(n >= 4);
  hs_buf *outs = hs_calloc(n ? n : 1, sizeof *outs);
  struct ArrowArrayStream *streams = hs_calloc(n ? n : 1, sizeof *streams);
  hs_status *sts = hs_calloc(n ? n : 1, sizeof *sts);
  for (size_t i = 0; i < n; i++) hs_buf_init(&outs[i]);
  job j = {&par, m, outs, streams, sts};
  hs_parallel_for(n, 1, 3, read_morsels, &j);
  for (size_t i = 0; i < n; i++) {
    CHECK(sts[i] == HS_OK);
    if (outs[i].len > 0) hs_buf_append(&b, outs[i].data, outs[i].len);
    if (streams[i].release != NULL) {
      CHECK_OK(hs_scan_morsel_done(&par, &streams[i], &e), &e);
      streams[i].release(&streams[i]);
    }
    hs_buf_free(&outs[i]);
  }
  CHECK_OK(hs_scan_stats_get(&par, &sb, &e), &e);
  CHECK_OK(hs_scan_page_stats_get(&par, &pb, &e), &e);
  par.release(&par);
  bool same = a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
  if (!same)
    fprintf(stderr, "morsels differ: filter %s rows %lld: %zu vs %zu bytes\n",
            filter ? filter : "(none)", (long long)rows, a.len, b.len);
  CHECK(same);
  CHECK(memcmp(&sa, &sb, sizeof sa) == 0);
  CHECK(memcmp(&pa, &pb, sizeof pa) == 0);
  if (memcmp(&sa, &sb, sizeof sa) != 0)
    fprintf(stderr,
            "counters differ: filter %s rows %lld: files %lld/%lld rg %lld/%lld pruned %lld/%lld "
            "scanned %lld/%lld matched %lld/%lld deleted %lld/%lld\n",
            filter ? filter : "(none)", (long long)rows, (long long)sa.files_read,
            (long long)sb.files_read, (long long)sa.row_groups_read, (long long)sb.row_groups_read,
            (long long)sa.row_groups_pruned, (long long)sb.row_groups_pruned,
            (long long)sa.rows_scanned, (long long)sb.rows_scanned, (long long)sa.rows_matched,
            (long long)sb.rows_matched, (long long)sa.rows_deleted, (long long)sb.rows_deleted);
  hs_free(m);
  hs_free(outs);
  hs_free(streams);
  hs_free(sts);
  hs_buf_free(&a);
  hs_buf_free(&b);
}

int main(void) {
  char tmpl[] = "/tmp/hs_test_morsels_XXXXXX";
  char *dir = mkdtemp(tmpl);
  CHECK(dir != NULL);
  if (dir == NULL) return hs_test_finish("test_scan_morsels");
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options to;
  hs_table_options_init(&to);
  const char *k[] = {"write.parquet.row-group-limit", "write.parquet.page-size-bytes"};
  const char *v[] = {"700", "1024"};
  to.property_keys = k;
  to.property_values = v;
  to.n_properties = 2;
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, &to, &t, &e), &e);
  s.release(&s);
  if (t == NULL) return hs_test_finish("test_scan_morsels");
  append_rows(t, 0, 3000);
  append_rows(t, 3000, 1234);
  append_rows(t, 4234, 2500);
  append_rows(t, 6734, 99);
  const char *dels[] = {"k = 5 OR (id > 2500 AND id < 2900) OR id = 6800"};
  hs_row_change c = {.what = "delete", .snapshot_id = -1, .deletes = dels, .n_deletes = 1};
  hs_row_change_result r;
  CHECK_OK(hs_table_change_rows(t, &c, &r, &e), &e);
  CHECK(r.rows_deleted > 0);

  const char *filters[] = {
      NULL,        "id < 1500", "id >= 1000 AND id < 5000", "x IS NULL", "k IN (2, 5) OR x > 20",
      "id = 4300", "id < 0",    "x < 3 AND id > 700"};
  const int64_t sizes[] = {1, 333, 700, 1000, 5000};
  for (size_t f = 0; f < sizeof filters / sizeof *filters; f++)
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
      if (sizes[z] == 1 && f % 3 != 0) continue; /* a morsel per row: a few filters only */
      agree(t, filters[f], sizes[z]);
    }

  /* A scan with a limit, or over a file with a scalar index on a filter
   * column, is not cut; the index only matters with a filter. */
  const char *ix[] = {"k"};
  CHECK_OK(hs_table_build_indexes(t, ix, 1, &e), &e);
  struct ArrowArrayStream st;
  hs_scan_morsel *m = NULL;
  size_t n = 99;
  open_scan(t, "k = 3", &st);
  CHECK_OK(hs_scan_morsels(&st, 100, &m, &n, &e), &e);
  CHECK(n == 0 && m == NULL);
  st.release(&st);
  open_scan(t, "id < 10", &st);
  CHECK_OK(hs_scan_morsels(&st, 100, &m, &n, &e), &e);
  CHECK(n > 4);
  hs_free(m);
  st.release(&st);
  hs_table_free(t);
  return hs_test_finish("test_scan_morsels");
}
