/*
 * test_scan.c — filtered, projected table scans (hs_table_scan_query):
 * rows, projections, limits, time travel, bad filters, and that files and
 * row groups are actually pruned on selective filters; the statistics
 * conversions (Iceberg bounds incl. truncated strings and partition
 * values, Parquet row-group statistics).
 *
 * Driver modes for tests/python/test_scan.py:
 *  - HS_SCAN_CREATE=<dir> test_scan FILE.parquet...: create a table at
 *    <dir> with the first file's schema (row groups of HS_SCAN_RG_ROWS rows,
 *    default 1000; data pages of HS_SCAN_PAGE_BYTES bytes when set) and
 *    append each file as one snapshot;
 *  - HS_SCAN_DRIVER=<dir>: for each filter line on stdin print
 *    "ok <files_planned> <files_pruned> <rg_read> <rg_pruned> <pages>
 *    <pages_pruned> <rows_pruned_by_pages> <ids...>"
 *    (the int64 column "id" of the matching rows; HS_SCAN_COLUMNS picks the
 *    projection, comma separated, default "id"), or "err <message>".
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "hs_table_fixture3.h"
#include "io/fs.h"
#include "query/scan.h"

static int64_t append_rows(hs_table *t, int64_t first, int64_t n) {
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArray *b = hs_calloc(1, sizeof *b);
  make_batch(b, first, n);
  struct ArrowArrayStream st;
  CHECK_OK(hs_arrow_stream_from_batches(&s, b, 1, &st, &e), &e);
  hs_free(b);
  int64_t snap = -1;
  CHECK_OK(hs_table_append(t, &st, &snap, &e), &e);
  return snap;
}

/* Run a scan; collect the "id" column (when projected) into ids (caller
 * frees), the stats and the output schema's child count. */
typedef struct scan_result {
  hs_status status;
  hs_error err;
  int64_t *ids;
  size_t n;
  int64_t n_columns;
  hs_scan_stats stats;
  hs_scan_page_stats pstats;
  bool shape_ok; /* every batch matches the schema */
  int64_t batches;
} scan_result;

static void run_scan(hs_table *t, const hs_scan_options *o, scan_result *r) {
  memset(r, 0, sizeof *r);
  struct ArrowArrayStream st;
  r->status = hs_table_scan_query(t, o, &st, &r->err);
  if (r->status != HS_OK) return;
  struct ArrowSchema schema;
  CHECK(st.get_schema(&st, &schema) == 0);
  r->n_columns = schema.n_children;
  int64_t idcol = -1;
  for (int64_t i = 0; i < schema.n_children; i++)
    if (strcmp(schema.children[i]->name, "id") == 0) idcol = i;
  r->shape_ok = true;
  size_t cap = 0;
  for (;;) {
    struct ArrowArray b;
    int rc = st.get_next(&st, &b);
    if (rc != 0) {
      r->status = HS_ERR_IO;
      snprintf(r->err.message, sizeof r->err.message, "%s", st.get_last_error(&st));
      break;
    }
    if (b.release == NULL) break;
    r->batches++;
    hs_error ve = {0};
    if (hs_arrow_array_validate(&schema, &b, &ve) != HS_OK || b.length == 0) r->shape_ok = false;
    if (idcol >= 0) {
      const struct ArrowArray *c = b.children[idcol];
      const int64_t *v = c->buffers[1];
      for (int64_t i = 0; i < b.length; i++) {
        if (r->n == cap) {
          cap = cap ? cap * 2 : 256;
          r->ids = hs_realloc(r->ids, cap * sizeof *r->ids);
        }
        r->ids[r->n++] = v[c->offset + i];
      }
    }
    b.release(&b);
  }
  CHECK_OK(hs_scan_stats_get(&st, &r->stats, NULL), NULL);
  CHECK_OK(hs_scan_page_stats_get(&st, &r->pstats, NULL), NULL);
  schema.release(&schema);
  st.release(&st);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Are the ids exactly lo..hi-1 (files come in manifest order: newest
 * first, so ids are sorted before the check)? */
static bool ids_range(scan_result *r, int64_t lo, int64_t hi) {
  if (r->n != (size_t)(hi - lo)) return false;
  if (r->n > 0) qsort(r->ids, r->n, sizeof *r->ids, cmp_i64);
  for (size_t i = 0; i < r->n; i++)
    if (r->ids[i] != lo + (int64_t)i) return false;
  return true;
}

/* A table with row groups of `rg_rows` rows and, when page_bytes is not
 * NULL, data pages of that many bytes. */
static hs_table *make_table_pages(const char *root, const char *rg_rows, const char *page_bytes) {
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options to;
  hs_table_options_init(&to);
  const char *k[] = {"write.parquet.row-group-limit", "write.parquet.page-size-bytes"};
  const char *v[] = {rg_rows, page_bytes};
  to.property_keys = k;
  to.property_values = v;
  to.n_properties = page_bytes ? 2 : 1;
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, &to, &t, &e), &e);
  s.release(&s);
  return t;
}

static hs_table *make_table(const char *root, const char *rg_rows) {
  return make_table_pages(root, rg_rows, NULL);
}

static void test_scan_basic(void) {
  char *root = hs_test_temp_root("scan");
  hs_table *t = make_table(root, "100");
  if (t == NULL) return;
  hs_scan_options o;
  hs_scan_options_init(&o);
  scan_result r;

  /* Empty table: projected table schema, no rows. */
  o.filter = "id > 3";
  run_scan(t, &o, &r);
  CHECK_OK(r.status, &r.err);
  CHECK(r.n == 0 && r.n_columns == 3 && r.stats.files_planned == 0);
  hs_free(r.ids);

  int64_t s1 = append_rows(t, 0, 1000);
  append_rows(t, 1000, 1000);
  append_rows(t, 2000, 1000);

  /* Selective: one file, one row group of it. */
  o.filter = "id >= 1500 AND id < 1550";
  run_scan(t, &o, &r);
  CHECK_OK(r.status, &r.err);
  CHECK(ids_range(&r, 1500, 1550) && r.shape_ok);
  CHECK_EQ_INT(r.stats.files_planned, 3);
  CHECK_EQ_INT(r.stats.files_pruned, 2);
  CHECK_EQ_INT(r.stats.row_groups_pruned, 9);
  CHECK_EQ_INT(r.stats.row_groups_read, 1);
  CHECK_EQ_INT(r.stats.rows_scanned, 100);
  CHECK_EQ_INT(r.stats.rows_matched, 50);
  hs_free(r.ids);

  /* No filter, every row in order; a small batch size. */
  o.filter = NULL;
  o.batch_rows_max = 77;
  run_scan(t, &o, &r);
  CHECK_OK(r.status, &r.err);
  CHECK(ids_range(&r, 0, 3000) && r.shape_ok);
  CHECK_EQ_INT(r.stats.rows_returned, 3000);
  hs_free(r.ids);

  /* batch_rows_min: the rows of 5 row groups in 3 files merged into one
   * batch (or two, at 3 rows), in the same order as unmerged. */
  o.filter = "id IN (5, 150, 1234, 2500, 2999) OR (id >= 600 AND id < 640)";
  o.batch_rows_max = 0;
  scan_result plain, merged;
  run_scan(t, &o, &plain);
  CHECK_OK(plain.status, &plain.err);
  CHECK(plain.batches >= 5 && plain.n == 45);
  int64_t mins[] = {1000, 3, 1};
  for (size_t m = 0; m < 3; m++) {
    o.batch_rows_min = mins[m];
    run_scan(t, &o, &merged);
    CHECK_OK(merged.status, &merged.err);
    CHECK(merged.shape_ok && merged.n == plain.n);
    CHECK(memcmp(merged.ids, plain.ids, plain.n * sizeof *plain.ids) == 0);
    CHECK_EQ_INT(merged.stats.rows_returned, 45);
    if (m == 0) CHECK_EQ_INT(merged.batches, 1);
    if (m == 2) CHECK_EQ_INT(merged.batches, plain.batches);
    hs_free(merged.ids);
  }
  o.limit = 20; /* a limit ends the merged batch too */
  o.batch_rows_min = 1000;
  run_scan(t, &o, &merged);
  CHECK(merged.status == HS_OK && merged.n == 20 && merged.batches == 1);
  CHECK(memcmp(merged.ids, plain.ids, 20 * sizeof *plain.ids) == 0);
  hs_free(merged.ids);
  hs_free(plain.ids);
  o.limit = -1;
  o.batch_rows_min = -1;
  run_scan(t, &o, &merged);
  CHECK(merged.status == HS_ERR_INVALID_ARG);
  o.batch_rows_min = 0;
  o.batch_rows_max = 77;
  o.filter = NULL;

  /* Limit without and with a filter. */
  o.limit = 250;
  run_scan(t, &o, &r);
  CHECK(r.n == 250 && r.ids[0] == 2000 && r.ids[249] == 2249 && r.shape_ok); /* newest first */
  CHECK_EQ_INT(r.stats.files_read, 1);
  hs_free(r.ids);
  o.filter = "x > 100 AND id < 1000";
  o.limit = 10;
  run_scan(t, &o, &r);
  CHECK(ids_range(&r, 201, 211) && r.shape_ok);
  hs_free(r.ids);
  o.limit = 0;
  run_scan(t, &o, &r);
  CHECK(r.status == HS_OK && r.n == 0);
  hs_free(r.ids);
  o.limit = -1;
  o.batch_rows_max = 0;

  /* Projection without the filter column; column order follows the list. */
  const char *cols[] = {"x", "name"};
  o.columns = cols;
  o.n_columns = 2;
  o.filter = "name LIKE 'n12%' AND id < 1300";
  run_scan(t, &o, &r);
  CHECK_OK(r.status, &r.err);
  CHECK(r.n_columns == 2 && r.n == 0);
  /* n12, n120-129 but n126, n1200-1299 but 14 multiples of 7 */
  CHECK_EQ_INT(r.stats.rows_matched, 1 + 9 + 86);
  hs_free(r.ids);
  const char *cols2[] = {"name", "id"};
  o.columns = cols2;
  o.filter = "name IS NULL AND id BETWEEN 2000 AND 2100";
  run_scan(t, &o, &r);
  CHECK_OK(r.status, &r.err);
  CHECK(r.n == 15 && r.ids[0] == 2002 && r.ids[14] == 2100);
  hs_free(r.ids);
  o.columns = NULL;
  o.n_columns = 0;

  /* A filter no file can satisfy reads nothing; a constant filter. */
  o.filter = "id > 5000 OR name = 'zzz'";
  run_scan(t, &o, &r);
  CHECK(r.status == HS_OK && r.n == 0 && r.stats.files_pruned == 3 && r.stats.files_read == 0);
  hs_free(r.ids);
  o.filter = "TRUE";
  run_scan(t, &o, &r);
  CHECK_OK(r.status, &r.err);
  CHECK_EQ_INT(r.n, 3000);
  hs_free(r.ids);
  o.filter = "NULL";
  run_scan(t, &o, &r);
  CHECK(r.status == HS_OK && r.n == 0);
  hs_free(r.ids);

  /* Time travel: the first snapshot holds ids 0..999 only. */
  o.snapshot_id = s1;
  o.filter = "id >= 500";
  run_scan(t, &o, &r);
  CHECK(ids_range(&r, 500, 1000) && r.stats.files_planned == 1);
  hs_free(r.ids);
  o.snapshot_id = 12345;
  run_scan(t, &o, &r);
  CHECK(r.status == HS_ERR_NOT_FOUND);
  o.snapshot_id = -1;

  /* Errors: unknown column with its position; unknown projection. */
  o.filter = "id > 3 AND agee > 5";
  run_scan(t, &o, &r);
  CHECK(r.status == HS_ERR_INVALID_ARG && strstr(r.err.message, "position 12") != NULL);
  o.filter = "id >";
  run_scan(t, &o, &r);
  CHECK(r.status == HS_ERR_INVALID_ARG && strstr(r.err.message, "position") != NULL);
  o.filter = NULL;
  const char *bad[] = {"nope"};
  o.columns = bad;
  o.n_columns = 1;
  run_scan(t, &o, &r);
  CHECK(r.status == HS_ERR_NOT_FOUND && strstr(r.err.message, "nope") != NULL);
  o.n_columns = 0;
  run_scan(t, &o, &r);
  CHECK(r.status == HS_ERR_INVALID_ARG);

  struct ArrowArrayStream other;
  struct ArrowSchema es;
  make_schema(&es);
  hs_error e = {0};
  CHECK_OK(hs_arrow_stream_from_batches(&es, NULL, 0, &other, &e), &e);
  hs_scan_stats ss;
  CHECK(hs_scan_stats_get(&other, &ss, NULL) == HS_ERR_INVALID_ARG);
  other.release(&other);

  hs_table_free(t);
  free(root);
}

/* Iceberg bounds of a string column: a possibly truncated upper bound is
 * rounded up, a short one kept; identity partitions pin the value. */
static void test_file_stats(void) {
  hs_error e = {0};
  hs_arena a;
  hs_arena_init(&a);
  struct ArrowSchema s;
  make_schema(&s);
  hs_iceberg_from_arrow_options fo = {.format_version = 2, .next_id = 1};
  hs_iceberg_schema is;
  int32_t last = 0;
  hs_iceberg_vector_dim *vd = NULL;
  size_t nvd = 0;
  CHECK_OK(hs_iceberg_schema_from_arrow(&s, &fo, &a, &is, &last, &vd, &nvd, &e), &e);
  struct ArrowSchema ts;
  CHECK_OK(hs_iceberg_schema_to_arrow(&is, NULL, &ts, &e), &e);
  hs_iceberg_metadata meta;
  memset(&meta, 0, sizeof meta);

  const char *lo = "aaaa", *hi16 = "abcdefghijklmnop";
  hs_iceberg_column_metrics m[2];
  memset(m, 0, sizeof m);
  m[0].field_id = 1;
  uint8_t l8[8], h8[8];
  hs_store_u64le(l8, 10);
  hs_store_u64le(h8, 20);
  m[0].lower = l8, m[0].lower_len = 8, m[0].upper = h8, m[0].upper_len = 8;
  m[0].has_null_count = true;
  m[1].field_id = 2;
  m[1].lower = (const uint8_t *)lo, m[1].lower_len = 4;
  m[1].upper = (const uint8_t *)hi16, m[1].upper_len = 16;
  hs_iceberg_data_file df;
  memset(&df, 0, sizeof df);
  df.record_count = 5;
  df.metrics = m;
  df.n_metrics = 2;
  hs_expr_stats st[3];
  CHECK_OK(hs_scan_file_stats(&meta, &is, NULL, &ts, NULL, &df, &a, st, &e), &e);
  CHECK(st[0].has_bounds && st[0].min.i64 == 10 && st[0].max.i64 == 20 && st[0].null_count == 0);
  CHECK(st[1].has_bounds && st[1].max.len == 17 && st[1].max.bytes[16] == 0xFF);
  CHECK(!st[2].has_bounds && st[2].null_count == -1);
  m[1].upper_len = 5; /* "abcde": shorter than 16, exact */
  CHECK_OK(hs_scan_file_stats(&meta, &is, NULL, &ts, NULL, &df, &a, st, &e), &e);
  CHECK(st[1].has_bounds && st[1].max.len == 5);

  /* Partitioned by identity(id) = 15 and truncate[2](name) = "ab". */
  hs_iceberg_partition_field pf[2];
  memset(pf, 0, sizeof pf);
  pf[0].source_id = 1, pf[0].transform.kind = HS_ICE_T_IDENTITY;
  pf[1].source_id = 2, pf[1].transform.kind = HS_ICE_T_TRUNCATE, pf[1].transform.param = 2;
  hs_iceberg_partition_spec spec = {.spec_id = 0, .fields = pf, .n_fields = 2};
  hs_iceberg_value pv[2];
  memset(pv, 0, sizeof pv);
  pv[0].i64 = 15;
  pv[1].bytes = (const uint8_t *)"ab", pv[1].len = 2;
  df.partition = pv;
  df.n_partition = 2;
  df.n_metrics = 0;
  CHECK_OK(hs_scan_file_stats(&meta, &is, &spec, &ts, NULL, &df, &a, st, &e), &e);
  CHECK(st[0].has_bounds && st[0].min.i64 == 15 && st[0].max.i64 == 15 && st[0].null_count == 0);
  CHECK(st[1].has_bounds && st[1].min.len == 2 && st[1].max.len == 3 && st[1].max.bytes[2] == 0xFF);
  pv[0].is_null = true;
  CHECK_OK(hs_scan_file_stats(&meta, &is, &spec, &ts, NULL, &df, &a, st, &e), &e);
  CHECK(!st[0].has_bounds && st[0].null_count == 5);

  ts.release(&ts);
  s.release(&s);
  hs_arena_reset(&a);
}

/* ------------------------------------------------------- page pruning */

static void sort_ids(scan_result *r) {
  if (r->n > 0) qsort(r->ids, r->n, sizeof *r->ids, cmp_i64);
}

/* The same sorted rows in a table with 512-byte pages (many pages per row
 * group) and one with default pages (one page per chunk): every filter
 * gives the same rows; selective ones prune pages in the first. */
static void test_page_pruning(void) {
  char *root1 = hs_test_temp_root("scan"), *root2 = hs_test_temp_root("scan");
  hs_table *t1 = make_table_pages(root1, "5000", "512");
  hs_table *t2 = make_table(root2, "5000");
  if (t1 == NULL || t2 == NULL) return;
  append_rows(t1, 0, 10000);
  append_rows(t2, 0, 10000);
  static const char *filters[] = {
      "id BETWEEN 5000 AND 5010",
      "id < 100 OR id >= 9900",
      "id = 7777",
      "id IN (3, 4000, 9999)",
      "NOT (id >= 20) OR id = 7777",
      "x < 10",
      "x > 4990.0",
      "x >= 100 AND x < 120.5",
      "name = 'n5003'",
      "name IS NULL AND id < 100",
      "name IS NOT NULL AND id > 9990",
      "name >= 'n9' AND id > 9000",
      "name LIKE 'n12%' AND id < 2000",
      "(id < 50 AND name IS NULL) OR (id > 9950 AND x > 4980)",
      "id > 20000",
      "id IS NULL",
      "true",
  };
  hs_scan_options o;
  hs_scan_options_init(&o);
  for (size_t f = 0; f < sizeof filters / sizeof *filters; f++) {
    scan_result a, b;
    o.filter = filters[f];
    run_scan(t1, &o, &a);
    run_scan(t2, &o, &b);
    CHECK_OK(a.status, &a.err);
    CHECK_OK(b.status, &b.err);
    sort_ids(&a);
    sort_ids(&b);
    bool same = a.n == b.n && (a.n == 0 || memcmp(a.ids, b.ids, a.n * sizeof *a.ids) == 0);
    if (!same) fprintf(stderr, "filter %s: %zu rows vs %zu\n", filters[f], a.n, b.n);
    CHECK(same && a.shape_ok);
    CHECK(b.pstats.pages_pruned == 0 && b.pstats.rows_pruned == 0);
    CHECK(a.pstats.pages_pruned <= a.pstats.pages);
    if (f == 0) {
      /* ids 5000..5010 in row group 1; row group 0 pruned by its stats,
       * nearly every page of row group 1 by the page index */
      CHECK(ids_range(&a, 5000, 5011));
      CHECK_EQ_INT(a.stats.row_groups_pruned, 1);
      CHECK(a.pstats.row_groups_indexed == 1 && a.pstats.pages > 10);
      CHECK(a.pstats.pages_pruned >= a.pstats.pages - 2);
      CHECK(a.pstats.rows_pruned >= 4800);
      CHECK(a.stats.rows_scanned <= 200);
    }
    /* 64 ids per page: the filter sees only the pages around the matches */
    if (f == 1) CHECK(a.stats.rows_scanned <= 400 && a.pstats.rows_pruned >= 9000);
    if (f == 2) CHECK(a.stats.rows_scanned <= 200 && a.pstats.pages_pruned > 0);
    if (f == 3) CHECK(a.stats.rows_scanned <= 600 && a.pstats.pages_pruned > 0);
    /* floats: only lower bounds prune (NaN counts unknown), so x < 120.5
     * cuts the pages above, x >= 100 none below */
    if (f == 7) CHECK(ids_range(&a, 200, 241) && a.stats.rows_scanned <= 400);
    if (f == 9) CHECK(a.n == 15 && a.stats.rows_scanned <= 200); /* multiples of 7 below 100 */
    if (f == 14) CHECK(a.n == 0 && a.stats.row_groups_read == 0);
    if (f == 16) CHECK(a.n == 10000 && a.pstats.rows_pruned == 0);
    hs_free(a.ids);
    hs_free(b.ids);
  }
  hs_table_free(t1);
  hs_table_free(t2);
  free(root1);
  free(root2);
}

/* hs_scan_page_ranges_compute on a file written directly: ranges, and a
 * damaged index (offsets outside the file, a column index that is really
 * an offset index) giving no page information instead of an error. */
static void test_page_ranges(void) {
  char *root = hs_test_temp_root("scan");
  hs_error e = {0};
  CHECK_OK(hs_fs_mkdirs(root, &e), &e);
  char path[512];
  snprintf(path, sizeof path, "%s/f.parquet", root);
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArray b;
  make_batch(&b, 0, 3000);
  hs_parquet_write_options wo;
  hs_parquet_write_options_init(&wo);
  wo.page_bytes_max = 800; /* 100 ids per page */
  hs_parquet_writer *w = NULL;
  CHECK_OK(hs_parquet_writer_open(path, &s, &wo, &w, &e), &e);
  CHECK_OK(hs_parquet_writer_write(w, &b, &e), &e);
  CHECK_OK(hs_parquet_writer_close(w, &e), &e);
  hs_parquet_writer_free(w);
  b.release(&b);
  hs_parquet_reader *r = NULL;
  CHECK_OK(hs_parquet_reader_open(path, &r, &e), &e);
  hs_source *src = NULL;
  CHECK_OK(hs_source_open_file(path, &src, &e), &e);
  const hs_pq_file_metadata *md = hs_parquet_reader_metadata(r);
  hs_expr *x = NULL;
  CHECK_OK(hs_expr_parse("id >= 1234 AND id < 1250 OR id = 2999", &s, &x, NULL, &e), &e);
  hs_arena a;
  hs_arena_init(&a);
  hs_scan_page_ranges pr;
  CHECK_OK(hs_scan_page_ranges_compute(src, md, 0, &s, x, &a, &pr, &e), &e);
  CHECK(pr.indexed && pr.n == 2 && pr.pages >= 30);
  if (pr.n == 2) {
    CHECK(pr.ranges[0] <= 1234 && pr.ranges[1] >= 1250 && pr.ranges[1] - pr.ranges[0] <= 200);
    CHECK(pr.ranges[2] <= 2999 && pr.ranges[3] == 3000);
    CHECK_EQ_INT(pr.rows, pr.ranges[1] - pr.ranges[0] + pr.ranges[3] - pr.ranges[2]);
  }
  /* Damaged copies of the footer's id chunk. */
  hs_pq_file_metadata bad = *md;
  hs_pq_row_group rg = md->row_groups[0];
  hs_pq_column_chunk cols[3];
  memcpy(cols, rg.columns, sizeof cols);
  rg.columns = cols;
  bad.row_groups = &rg;
  bad.n_row_groups = 1;
  cols[0].offset_index_offset = INT64_MAX - 10;
  CHECK_OK(hs_scan_page_ranges_compute(src, &bad, 0, &s, x, &a, &pr, &e), &e);
  CHECK(!pr.indexed && pr.n == 1 && pr.rows == 3000);
  cols[0] = md->row_groups[0].columns[0];
  cols[0].column_index_offset = cols[0].offset_index_offset;
  cols[0].column_index_length = cols[0].offset_index_length;
  CHECK_OK(hs_scan_page_ranges_compute(src, &bad, 0, &s, x, &a, &pr, &e), &e);
  CHECK(!pr.indexed && pr.n == 1 && pr.rows == 3000);
  cols[0] = md->row_groups[0].columns[0];
  cols[0].has_offset_index = false;
  CHECK_OK(hs_scan_page_ranges_compute(src, &bad, 0, &s, x, &a, &pr, &e), &e);
  CHECK(!pr.indexed && pr.rows == 3000);
  hs_arena_reset(&a);
  hs_expr_free(x);
  hs_source_unref(src);
  hs_parquet_reader_free(r);
  s.release(&s);
  free(root);
}

/* ------------------------------------------------------------ drivers */

static int driver_create(const char *root, int argc, char **argv) {
  hs_error e = {0};
  const char *rg = getenv("HS_SCAN_RG_ROWS");
  const char *page = getenv("HS_SCAN_PAGE_BYTES");
  hs_table *t = NULL;
  for (int i = 1; i < argc; i++) {
    hs_parquet_reader *r = NULL;
    struct ArrowArrayStream st;
    if (hs_parquet_reader_open(argv[i], &r, &e) != HS_OK) break;
    if (t == NULL) {
      struct ArrowSchema s;
      if (hs_parquet_reader_schema(r, &s, &e) != HS_OK) break;
      hs_table_options to;
      hs_table_options_init(&to);
      const char *k[] = {"write.parquet.row-group-limit", "write.parquet.page-size-bytes"};
      const char *v[] = {rg ? rg : "1000", page};
      to.property_keys = k;
      to.property_values = v;
      to.n_properties = page ? 2 : 1;
      hs_status rc = hs_table_create(root, &s, &to, &t, &e);
      s.release(&s);
      if (rc != HS_OK) break;
    }
    hs_status rc = hs_parquet_reader_stream(r, NULL, &st, &e);
    hs_parquet_reader_free(r);
    if (rc != HS_OK || hs_table_append(t, &st, NULL, &e) != HS_OK) break;
  }
  hs_table_free(t);
  if (e.status != HS_OK) fprintf(stderr, "create: %s\n", e.message);
  return e.status != HS_OK;
}

static int driver_query(const char *root) {
  hs_error e = {0};
  hs_table *t = NULL;
  if (hs_table_open(root, &t, &e) != HS_OK) {
    fprintf(stderr, "open: %s\n", e.message);
    return 1;
  }
  const char *colenv = getenv("HS_SCAN_COLUMNS");
  char colbuf[1024];
  snprintf(colbuf, sizeof colbuf, "%s", colenv ? colenv : "id");
  const char *cols[32];
  size_t ncols = 0;
  for (char *p = strtok(colbuf, ","); p != NULL && ncols < 32; p = strtok(NULL, ","))
    cols[ncols++] = p;
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, stdin)) > 0) {
    if (line[len - 1] == '\n') line[len - 1] = 0;
    hs_scan_options o;
    hs_scan_options_init(&o);
    o.filter = line;
    o.columns = cols;
    o.n_columns = ncols;
    scan_result r;
    run_scan(t, &o, &r);
    if (r.status != HS_OK) {
      for (char *p = r.err.message; *p; p++)
        if (*p == '\n') *p = ' ';
      printf("err %s\n", r.err.message);
    } else {
      printf("ok %lld %lld %lld %lld %lld %lld %lld", (long long)r.stats.files_planned,
             (long long)r.stats.files_pruned, (long long)r.stats.row_groups_read,
             (long long)r.stats.row_groups_pruned, (long long)r.pstats.pages,
             (long long)r.pstats.pages_pruned, (long long)r.pstats.rows_pruned);
      for (size_t i = 0; i < r.n; i++) printf(" %lld", (long long)r.ids[i]);
      printf("\n");
    }
    fflush(stdout);
    hs_free(r.ids);
  }
  free(line);
  hs_table_free(t);
  return 0;
}

/* Drain a stream; its status (the first get_next error, or HS_OK). */
static hs_status drain(struct ArrowArrayStream *st, int64_t *rows) {
  *rows = 0;
  int rc = 0;
  for (;;) {
    struct ArrowArray a;
    if ((rc = st->get_next(st, &a)) != 0) break;
    if (a.release == NULL) break;
    *rows += a.length;
    a.release(&a);
  }
  st->release(st);
  return rc == 0 ? HS_OK : HS_ERR_CORRUPT;
}

/* A data file replaced by a sibling (another valid Parquet file of the
 * table) is an error in both scans, never the sibling's rows. */
static void test_replaced_data_file(void) {
  char *root = hs_test_temp_root("scanswap");
  hs_table *t = make_table(root, "100");
  if (t == NULL) return;
  append_rows(t, 0, 300);
  append_rows(t, 300, 500);
  hs_error e = {0};
  hs_table_plan plan;
  CHECK_OK(hs_table_plan_files(t, -1, &plan, &e), &e);
  CHECK(plan.n_files == 2);
  hs_buf b;
  hs_buf_init(&b);
  CHECK_OK(hs_fs_read_file(plan.files[1].path, 1 << 24, &b, &e), &e);
  FILE *f = fopen(plan.files[0].path, "wb");
  CHECK(f != NULL && fwrite(b.data, 1, b.len, f) == b.len);
  if (f) fclose(f);
  hs_buf_free(&b);
  hs_table_plan_free(&plan);
  struct ArrowArrayStream st;
  int64_t rows = 0;
  memset(&st, 0, sizeof st);
  hs_status ss = hs_table_scan(t, -1, NULL, 0, &st, &e);
  if (ss == HS_OK) ss = drain(&st, &rows);
  CHECK(ss == HS_ERR_CORRUPT);
  hs_scan_options o;
  hs_scan_options_init(&o);
  o.filter = "id >= 0";
  scan_result r;
  run_scan(t, &o, &r);
  CHECK(r.status != HS_OK && strstr(r.err.message, "manifest entry records") != NULL);
  hs_free(r.ids);
  hs_table_free(t);
  free(root);
}

/* v3 row lineage statistics (hs_scan_lineage_stats): inherited ranges,
 * stored statistics widened by what NULLs inherit, and NULL inheritance
 * without a first_row_id; each checked against the values' own range. */
static void test_lineage_stats(void) {
  hs_expr_stats s;
  /* No stored column: rows [16, 32) of a file whose first_row_id is 100. */
  hs_expr_stats_init(&s);
  hs_scan_lineage_stats(true, 100, 7, 16, 32, false, &s);
  CHECK(s.has_bounds && s.min.i64 == 116 && s.max.i64 == 131);
  CHECK_EQ_INT(s.null_count, 0);
  CHECK_EQ_INT(s.row_count, 16);
  /* ... and the sequence number: a constant. */
  hs_expr_stats_init(&s);
  hs_scan_lineage_stats(false, 100, 7, 16, 32, false, &s);
  CHECK(s.has_bounds && s.min.i64 == 7 && s.max.i64 == 7 && s.null_count == 0);
  /* No first_row_id (written before an upgrade to v3): every _row_id NULL. */
  hs_expr_stats_init(&s);
  hs_scan_lineage_stats(true, -1, 7, 0, 10, false, &s);
  CHECK(!s.has_bounds && s.null_count == 10);
  /* Stored without NULLs: the stored statistics stand. */
  hs_expr_stats_init(&s);
  s.has_bounds = true;
  s.min.i64 = 5;
  s.max.i64 = 9;
  s.null_count = 0;
  s.row_count = 10;
  hs_scan_lineage_stats(true, 1000, 7, 0, 10, true, &s);
  CHECK(s.has_bounds && s.min.i64 == 5 && s.max.i64 == 9 && s.null_count == 0);
  /* Stored with NULLs: widened by the inherited range of the rows. */
  s.null_count = 3;
  hs_scan_lineage_stats(true, 1000, 7, 0, 10, true, &s);
  CHECK(s.has_bounds && s.min.i64 == 5 && s.max.i64 == 1009 && s.null_count == 0);
  /* Stored, all NULL: exactly the inherited range. */
  hs_expr_stats_init(&s);
  s.null_count = 10;
  s.row_count = 10;
  hs_scan_lineage_stats(false, 1000, 42, 0, 10, true, &s);
  CHECK(s.has_bounds && s.min.i64 == 42 && s.max.i64 == 42 && s.null_count == 0);
  /* Stored with an unknown NULL count and no bounds: nothing known. */
  hs_expr_stats_init(&s);
  s.row_count = 10;
  hs_scan_lineage_stats(true, 1000, 7, 0, 10, true, &s);
  CHECK(!s.has_bounds);
  /* Stored with NULLs but no first_row_id: NULLs stay NULL, stats stand. */
  hs_expr_stats_init(&s);
  s.has_bounds = true;
  s.min.i64 = 5;
  s.max.i64 = 9;
  s.null_count = 2;
  s.row_count = 10;
  hs_scan_lineage_stats(true, -1, 7, 0, 10, true, &s);
  CHECK(s.has_bounds && s.min.i64 == 5 && s.max.i64 == 9 && s.null_count == 2);
}

int main(int argc, char **argv) {
  const char *create = getenv("HS_SCAN_CREATE");
  if (create != NULL) return driver_create(create, argc, argv);
  const char *drv = getenv("HS_SCAN_DRIVER");
  if (drv != NULL) return driver_query(drv);
  test_scan_basic();
  test_file_stats();
  test_page_pruning();
  test_page_ranges();
  test_replaced_data_file();
  test_lineage_stats();
  return hs_test_finish("test_scan");
}
