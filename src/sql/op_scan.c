/*
 * op_scan.c — reading a relation: a table through the query layer's
 * filtered, projected scan (so partition, file, row-group and page pruning
 * and the scalar indexes answer the pushed-down filter), or a registered
 * in-memory relation (its chunks shared, never copied).
 *
 * A scan that needs no column (SELECT count(*) FROM t) still reads one (the
 * table's first) to learn the row counts, and drops it.
 *
 * As a pipeline's source (pipe.h) a table scan is read by several workers
 * at once: its files are cut into morsels of row ranges (hs_scan_morsels,
 * src/query/scan.h), each worker decodes the morsels it takes into its own
 * chunks. Once cut, the scan is read morsel by morsel also when pulled
 * serially (after a pipeline stopped early), so no row is read twice.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../query/scan.h"
#include "pipe.h"

#define SCAN_BATCH_ROWS 16384
/* Rows of a morsel (HS_SQL_MORSEL_ROWS overrides it: tests cut small
 * tables); 2^18 cuts the usual 2^20-row row group into four. */
#define SCAN_MORSEL_ROWS (INT64_C(1) << 18)

typedef struct scan_state {
  hs_table *table;
  struct ArrowArrayStream stream;
  struct ArrowSchema schema;
  bool open;
  bool started;    /* a batch was read serially: too late to cut */
  bool no_columns; /* read one column only for its row count */
  size_t at;       /* in-memory: next chunk */
  /* Morsels (cut on the first hs_sql_scan_par_ok): taken in order through
   * next_morsel (atomic); mu guards the stream's counters as morsels end;
   * cur is the serial reader's open morsel. */
  bool cut;
  hs_scan_morsel *morsels;
  size_t n_morsels;
  int64_t next_morsel;
  pthread_mutex_t mu;
  struct scan_cursor *cur;
} scan_state;

typedef struct scan_cursor {
  struct ArrowArrayStream stream;
} scan_cursor;

static void scan_free(hs_sql_op *op) {
  scan_state *s = op->state;
  if (s == NULL) return;
  if (s->cur != NULL) hs_sql_scan_par_close(op, s->cur);
  if (s->cut) pthread_mutex_destroy(&s->mu);
  hs_free(s->morsels);
  if (s->open) {
    if (s->stream.release != NULL) s->stream.release(&s->stream);
    hs_arrow_schema_release(&s->schema);
  }
  hs_sql_rel_close(op->plan->scan.rel, s->table);
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

static hs_status batch_chunk(scan_state *s, struct ArrowArray *batch, hs_sql_chunk *out,
                             hs_error *err) {
  if (s->no_columns) {
    out->n = batch->length;
    out->n_cols = 0;
    batch->release(batch);
    return HS_OK;
  }
  return hs_sql_chunk_from_arrow(&s->schema, batch, NULL, -1, out, err);
}

/* Serially, once cut: the morsels not taken, in order. */
static hs_status morsels_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  scan_state *s = op->state;
  for (;;) {
    if (s->cur == NULL) {
      int64_t k = hs_sql_scan_par_take(op);
      if (k < 0) {
        note_stats(op);
        return HS_OK;
      }
      void *cur = NULL;
      hs_status st = hs_sql_scan_par_open(op, k, &cur, err);
      if (st != HS_OK) return st;
      s->cur = cur;
    }
    hs_status st = hs_sql_scan_par_next(op, s->cur, out, err);
    if (st != HS_OK || out->n > 0) return st;
    hs_sql_scan_par_close(op, s->cur);
    s->cur = NULL;
  }
}

static hs_status table_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  scan_state *s = op->state;
  if (s->cut) return morsels_next(op, out, err);
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
    s->started = true;
    return batch_chunk(s, &batch, out, err);
  }
}

/* ------------------------------------------------ as a parallel source */

/* Morsels or the lock, and their size (0: no morsels). A whole file reads
 * as in the serial scan, a part of one through a row selection (the
 * Parquet reader has no row-group subset), which costs more CPU than the
 * whole-file read. On two busy cores neither beat the locked stream, whose
 * scan decodes a file's columns on the pool and runs pass one of several
 * files ahead (TPC-H SF1 on this project's box, BENCHMARKS.md: files cut,
 * Q6 and Q15 +40-70 % CPU; eight whole files per lineitem, Q12 and Q19
 * faster but Q15 and Q17 slower: a worker reads its morsel to the end
 * after the aggregate's stop, so past 65,536 groups the partials grow by a
 * file's groups). So morsels are used from SCAN_MORSEL_MIN_WORKERS workers
 * on, files cut in pieces of SCAN_MORSEL_ROWS. HS_SQL_MORSEL=1 uses them at
 * any count, HS_SQL_MORSEL=0 never, HS_SQL_MORSEL_ROWS sets the size (read
 * per statement). */
#define SCAN_MORSEL_MIN_WORKERS 4

static int64_t morsel_rows(uint32_t workers) {
  const char *f = getenv("HS_SQL_MORSEL");
  bool on = f != NULL && strcmp(f, "1") == 0;
  if (f != NULL && strcmp(f, "0") == 0) return 0;
  if (!on && workers < SCAN_MORSEL_MIN_WORKERS) return 0;
  const char *v = getenv("HS_SQL_MORSEL_ROWS");
  long long n = v != NULL ? atoll(v) : 0;
  return n > 0 ? (int64_t)n : SCAN_MORSEL_ROWS;
}

bool hs_sql_scan_par_ok(hs_sql_op *op, uint32_t workers) {
  if (op->plan->kind != HS_SP_SCAN || op->next != table_next) return false;
  scan_state *s = op->state;
  if (s->cut) return s->next_morsel < (int64_t)s->n_morsels; /* morsels left */
  int64_t rows = morsel_rows(workers);
  if (s->started || op->plan->scan.limit >= 0 || rows == 0) return false;
  hs_error ignore = {0};
  hs_scan_morsel *m = NULL;
  size_t n = 0;
  if (hs_scan_morsels(&s->stream, rows, &m, &n, &ignore) != HS_OK) return false;
  /* One morsel gains nothing; past HS_SQL_SCAN_MORSELS_MAX the chunks'
   * sequence numbers (pipe.c) would not fit. */
  if (n < 2 || n > HS_SQL_SCAN_MORSELS_MAX) {
    hs_free(m);
    return false;
  }
  s->morsels = m;
  s->n_morsels = n;
  s->next_morsel = 0;
  pthread_mutex_init(&s->mu, NULL);
  s->cut = true;
  return true;
}

int64_t hs_sql_scan_par_take(hs_sql_op *op) {
  scan_state *s = op->state;
  int64_t k = __atomic_fetch_add(&s->next_morsel, 1, __ATOMIC_RELAXED);
  return k < (int64_t)s->n_morsels ? k : -1;
}

hs_status hs_sql_scan_par_open(hs_sql_op *op, int64_t k, void **cur, hs_error *err) {
  scan_state *s = op->state;
  *cur = NULL;
  scan_cursor *c = hs_calloc(1, sizeof *c);
  if (c == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  hs_status st = hs_scan_morsel_open(&s->stream, &s->morsels[k], &c->stream, err);
  if (st != HS_OK) {
    hs_free(c);
    hs_error_prefix(err, "table %s: ", op->plan->scan.rel->name);
    return st;
  }
  *cur = c;
  return HS_OK;
}

hs_status hs_sql_scan_par_next(hs_sql_op *op, void *cur, hs_sql_chunk *out, hs_error *err) {
  scan_state *s = op->state;
  scan_cursor *c = cur;
  memset(out, 0, sizeof *out);
  for (;;) {
    struct ArrowArray batch;
    memset(&batch, 0, sizeof batch);
    int rc = c->stream.get_next(&c->stream, &batch);
    if (rc != 0) {
      const char *m = c->stream.get_last_error(&c->stream);
      return hs_error_set(err, hs_status_of_errno(rc), "%s: %s", op->plan->scan.rel->name,
                          m != NULL ? m : "scan failed");
    }
    if (batch.release == NULL) return HS_OK;
    if (batch.length == 0) {
      batch.release(&batch);
      continue;
    }
    return batch_chunk(s, &batch, out, err);
  }
}

void hs_sql_scan_par_close(hs_sql_op *op, void *cur) {
  scan_state *s = op->state;
  scan_cursor *c = cur;
  if (c == NULL) return;
  hs_error ignore = {0};
  pthread_mutex_lock(&s->mu);
  hs_scan_morsel_done(&s->stream, &c->stream, &ignore);
  pthread_mutex_unlock(&s->mu);
  c->stream.release(&c->stream);
  hs_free(c);
}

void hs_sql_scan_par_end(hs_sql_op *op) {
  scan_state *s = op->state;
  size_t n = s->n_morsels;
  note_stats(op);
  size_t len = strlen(op->stats.note);
  if (len + 1 < sizeof op->stats.note)
    snprintf(op->stats.note + len, sizeof op->stats.note - len, ", %zu morsels", n);
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
  hs_status st = hs_sql_rel_open(rel, &s->table, err);
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
