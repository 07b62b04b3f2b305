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

hs_status hs_table_explain(hs_table *table, const hs_scan_options *opts, hs_table_explain_info *out,
                           hs_error *err) {
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
    st = hs_table_schema(table, &schema, err);
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
  if (stream.release != NULL) stream.release(&stream);
  if (schema.release != NULL) schema.release(&schema);
  return st;
}
