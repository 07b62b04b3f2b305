/*
 * explain.c — hs_table_explain: run a filtered scan to the end, throwing
 * the rows away, and report what it did (EXPLAIN ANALYZE): files planned
 * and pruned by partition values and column bounds, row groups pruned by
 * statistics, pages pruned by page indexes, files answered by a scalar
 * index and the rows it ruled out (scan.c's three counter sets).
 *
 * Running rather than estimating keeps the report honest: every number is
 * what the scan really did. Without a projection only the table's first
 * flat column is projected (not a vector), so the cost is close to that of
 * evaluating the filter.
 */
#include <string.h>

#include "../arrow/arrow.h"
#include "../common/common.h"
#include "../table/schema_map.h"

/* Copy the stream's per-file records into one allocation (strings after
 * the array). */
static hs_status copy_files(const struct ArrowArrayStream *stream, hs_scan_file_info **files,
                            size_t *n_files, hs_error *err) {
  size_t n = 0, bytes = 0;
  hs_status st = hs_scan_file_info_get(stream, 0, NULL, &n, err);
  if (st != HS_OK || n == 0) return st;
  hs_scan_file_info r;
  for (size_t i = 0; i < n && st == HS_OK; i++) {
    if ((st = hs_scan_file_info_get(stream, i, &r, NULL, err)) == HS_OK)
      bytes += strlen(r.path) + strlen(r.index_columns) + 2;
  }
  if (st != HS_OK) return st;
  char *block = hs_malloc(n * sizeof r + bytes);
  if (block == NULL) return hs_error_set(err, HS_ERR_NOMEM, "explain: out of memory");
  hs_scan_file_info *v = (hs_scan_file_info *)(void *)block;
  char *w = block + n * sizeof r;
  for (size_t i = 0; i < n; i++) {
    hs_scan_file_info_get(stream, i, &v[i], NULL, err);
    size_t a = strlen(v[i].path) + 1, b = strlen(v[i].index_columns) + 1;
    memcpy(w, v[i].path, a);
    v[i].path = w;
    w += a;
    memcpy(w, v[i].index_columns, b);
    v[i].index_columns = w;
    w += b;
  }
  *files = v;
  *n_files = n;
  return HS_OK;
}

static hs_status explain(hs_table *table, const hs_scan_options *opts, hs_table_explain_info *out,
                         hs_scan_file_info **files, size_t *n_files, hs_error *err) {
  memset(out, 0, sizeof *out);
  if (table == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "explain: no table");
  hs_scan_options o;
  if (opts != NULL)
    o = *opts;
  else
    hs_scan_options_init(&o);
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  const char *first[1] = {NULL};
  hs_status st = HS_OK;
  if (o.columns == NULL) {
    st = hs_table_read_schema_arrow(table, o.snapshot_id, &schema, err); /* time travel: its own */
    if (st != HS_OK) return st;
    /* The first flat column (cheap to decode), else the first column. */
    for (int64_t i = 0; i < schema.n_children && first[0] == NULL; i++)
      if (schema.children[i]->format[0] != '+') first[0] = schema.children[i]->name;
    if (first[0] == NULL && schema.n_children > 0) first[0] = schema.children[0]->name;
    if (first[0] != NULL) {
      o.columns = first;
      o.n_columns = 1;
    }
  }
  struct ArrowArrayStream stream;
  memset(&stream, 0, sizeof stream);
  st = hs_table_scan_query(table, &o, &stream, err);
  while (st == HS_OK) {
    struct ArrowArray a;
    int rc = stream.get_next(&stream, &a);
    if (rc != 0) {
      const char *m = stream.get_last_error(&stream);
      st = hs_error_set(err, hs_status_of_errno(rc), "explain: %s", m ? m : "scan failed");
      break;
    }
    if (a.release == NULL) break;
    a.release(&a);
  }
  if (st == HS_OK) st = hs_scan_stats_get(&stream, &out->scan, err);
  if (st == HS_OK) st = hs_scan_page_stats_get(&stream, &out->pages, err);
  if (st == HS_OK) st = hs_scan_index_stats_get(&stream, &out->index, err);
  if (st == HS_OK && files != NULL) st = copy_files(&stream, files, n_files, err);
  if (stream.release != NULL) stream.release(&stream);
  if (schema.release != NULL) schema.release(&schema);
  return st;
}

hs_status hs_table_explain(hs_table *table, const hs_scan_options *opts, hs_table_explain_info *out,
                           hs_error *err) {
  return explain(table, opts, out, NULL, NULL, err);
}

hs_status hs_table_explain_files(hs_table *table, const hs_scan_options *opts,
                                 hs_table_explain_info *out, hs_scan_file_info **files,
                                 size_t *n_files, hs_error *err) {
  *files = NULL;
  *n_files = 0;
  hs_status st = explain(table, opts, out, files, n_files, err);
  if (st != HS_OK) {
    hs_free(*files);
    *files = NULL;
    *n_files = 0;
  }
  return st;
}
