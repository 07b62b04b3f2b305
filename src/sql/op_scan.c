/*
 * op_scan.c — reading a relation: a table through the query layer's
 * filtered, projected scan (so partition, file, row-group and page pruning
 * and the scalar indexes answer the pushed-down filter), or a registered
 * in-memory relation (its chunks shared, never copied).
 *
 * A scan that needs no column (SELECT count(*) FROM t) still reads one (the
 * table's first) to learn the row counts, and drops it.
 */
#include <stdio.h>
#include <string.h>

#include "plan.h"

#define SCAN_BATCH_ROWS 16384

typedef struct scan_state {
  hs_table *table;
  struct ArrowArrayStream stream;
  struct ArrowSchema schema;
  bool open;
  bool no_columns; /* read one column only for its row count */
  size_t at;       /* in-memory: next chunk */
} scan_state;

static void scan_free(hs_sql_op *op) {
  scan_state *s = op->state;
  if (s == NULL) return;
  if (s->open) {
    if (s->stream.release != NULL) s->stream.release(&s->stream);
    hs_arrow_schema_release(&s->schema);
  }
  hs_table_free(s->table);
  hs_free(s);
}

static void note_stats(hs_sql_op *op) {
  scan_state *s = op->state;
  hs_scan_stats ss;
  hs_scan_index_stats is;
  hs_error ignore = {0};
  if (hs_scan_stats_get(&s->stream, &ss, &ignore) != HS_OK) return;
  int len = snprintf(op->stats.note, sizeof op->stats.note,
                     "files %lld/%lld read, row groups pruned %lld, rows scanned %lld",
                     (long long)ss.files_read, (long long)ss.files_planned,
                     (long long)ss.row_groups_pruned, (long long)ss.rows_scanned);
  if (len > 0 && (size_t)len < sizeof op->stats.note &&
      hs_scan_index_stats_get(&s->stream, &is, &ignore) == HS_OK && is.files_indexed > 0)
    snprintf(op->stats.note + len, sizeof op->stats.note - (size_t)len,
             ", index answered %lld files (%lld candidate rows)", (long long)is.files_indexed,
             (long long)is.rows_candidate);
}

static hs_status table_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  scan_state *s = op->state;
  for (;;) {
    struct ArrowArray batch;
    memset(&batch, 0, sizeof batch);
    int rc = s->stream.get_next(&s->stream, &batch);
    if (rc != 0) {
      const char *m = s->stream.get_last_error(&s->stream);
      return hs_error_set(err, hs_status_of_errno(rc), "%s: %s", op->plan->scan.rel->name,
                          m != NULL ? m : "scan failed");
    }
    if (batch.release == NULL) {
      note_stats(op);
      return HS_OK;
    }
    if (batch.length == 0) {
      batch.release(&batch);
      continue;
    }
    if (s->no_columns) {
      out->n = batch.length;
      out->n_cols = 0;
      batch.release(&batch);
      return HS_OK;
    }
    return hs_sql_chunk_from_arrow(&s->schema, &batch, NULL, -1, out, err);
  }
}

static hs_status mem_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  scan_state *s = op->state;
  const hs_sql_plan *p = op->plan;
  const hs_sql_rel *rel = p->scan.rel;
  while (s->at < rel->n_chunks) {
    const hs_sql_chunk *c = &rel->chunks[s->at++];
    if (c->n == 0) continue;
    hs_status st = hs_sql_chunk_init(out, p->scan.n_columns, c->n, err);
    for (int32_t i = 0; i < p->scan.n_columns && st == HS_OK; i++) {
      int32_t k = -1;
      for (int32_t j = 0; j < rel->n_cols; j++)
        if (strcmp(rel->col_names[j], p->scan.columns[i]) == 0) k = j;
      if (k < 0) {
        st = hs_error_set(err, HS_ERR_INTERNAL, "sql: %s has no column %s", rel->name,
                          p->scan.columns[i]);
        break;
      }
      st = hs_sql_vec_share(&out->cols[i], &c->cols[k], err);
    }
    if (st != HS_OK) hs_sql_chunk_release(out);
    return st;
  }
  return HS_OK;
}

hs_status hs_sql_op_scan_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err) {
  (void)x;
  scan_state *s = hs_calloc(1, sizeof(*s));
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  op->state = s;
  op->free = scan_free;
  const hs_sql_rel *rel = p->scan.rel;
  if (rel->uri == NULL) {
    op->next = mem_next;
    return HS_OK;
  }
  hs_status st = hs_table_open(rel->uri, &s->table, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "table %s: ", rel->name);
    return st;
  }
  hs_scan_options so;
  hs_scan_options_init(&so);
  so.snapshot_id = p->scan.snapshot_id;
  so.filter = p->scan.filter;
  so.limit = p->scan.limit;
  so.batch_rows_max = SCAN_BATCH_ROWS;
  const char *first = NULL;
  if (p->scan.n_columns > 0) {
    so.columns = p->scan.columns;
    so.n_columns = (size_t)p->scan.n_columns;
  } else {
    s->no_columns = true;
    first = rel->n_cols > 0 ? rel->col_names[0] : NULL;
    if (first == NULL)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "table %s has no columns", rel->name);
    so.columns = &first;
    so.n_columns = 1;
  }
  st = hs_table_scan_query(s->table, &so, &s->stream, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "table %s: ", rel->name);
    return st;
  }
  s->open = true;
  int rc = s->stream.get_schema(&s->stream, &s->schema);
  if (rc != 0) return hs_error_set(err, hs_status_of_errno(rc), "table %s: no schema", rel->name);
  op->next = table_next;
  return HS_OK;
}
