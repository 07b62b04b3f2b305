/*
 * op_knn.c — the index-backed vector top-k (HS_SP_KNN, built by
 * optimize_knn.c from ORDER BY <distance to a constant> LIMIT k): one
 * hs_table_vector_search over the scan's table with its pushed-down filter,
 * projection and snapshot; the files' vector indexes answer where their
 * metric and dimension match (ef_search and nprobe from the session
 * settings hnsw.ef_search and ivfflat.probes), other files are scored
 * exactly. Output: scan.columns, then "distance" (FLOAT64) when
 * knn.with_distance.
 *
 * Distances and order are the exact plan's (the operators': the float32
 * sum, then sqrt / the cosine quotient in double). When the vector column
 * is among the columns, they are recomputed from it and the rows re-sorted
 * by them (stable). When it is not (the optimizer's second column pruning
 * dropped it: the statement reads neither the vector nor, for l2 and
 * cosine, the distance), the search's own float32 distances are used: for
 * ip and l1 they are the operators' values exactly; for l2, sqrtf of the
 * same float32 sum, so a strictly smaller float32 distance is a strictly
 * smaller double one and the search's order is the exact order unless two
 * returned rows have equal float32 distances: then the search runs again
 * reading the vector column, and the rows are ordered as above
 * (hs_sql_knn_search_distance_exact, EXPLAIN ANALYZE notes the re-read).
 *
 * The search never returns rows whose distance is NULL or not finite (a
 * NULL vector, a zero vector under cosine), which the exact plan sorts
 * last (+inf, then NaN, then NULL). So when it returns fewer than k rows,
 * a second pass scans the filter's rows and appends those, in that order,
 * up to k: the result is the exact plan's (min(k, matching rows) rows).
 *
 * The query vector is knn.query (knn.dim floats) or, when that is NULL,
 * the expression in p->pred (a parameter), evaluated once at open.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../index/vector/distance.h"
#include "fn_vector.h"
#include "plan.h"

#define KNN_FALLBACK_BATCH_ROWS 16384

/* Rows of the fallback pass by distance class, in output order. */
enum { CLS_INF, CLS_NAN, CLS_NULL, CLS_N };

typedef struct knn_state {
  hs_table *table;
  struct ArrowArrayStream stream;
  struct ArrowSchema schema;
  bool open;
  bool started; /* the search runs at the first next(), so EXPLAIN ANALYZE times it */
  bool searched_done;
  hs_vector_search_options opts;
  int32_t cols[2048 + 2]; /* imported children: the search's columns, then distance */
  int32_t n_cols;
  const char **search_cols; /* the columns the search reads: scan.columns [+ the vector] */
  int32_t n_search_cols;
  bool reread; /* l2 ties: searched again with the vector column */
  hs_vector_search_stats stats;
  int64_t returned;
  const float *query; /* NULL: the query is NULL (every distance NULL) */
  int32_t dim;
  hs_metric metric;
  hs_arena arena;
  /* fallback rows, kept per class, then emitted in order */
  hs_sql_chunk *extra[CLS_N];
  size_t n_extra[CLS_N], cap_extra[CLS_N];
  int64_t rows_extra[CLS_N];
  bool fallback_done;
  int cls_at;
  size_t chunk_at;
  int64_t left; /* rows still to emit */
} knn_state;

static void knn_stop(knn_state *s) {
  if (s->open) {
    if (s->stream.release != NULL) s->stream.release(&s->stream);
    hs_arrow_schema_release(&s->schema);
    s->open = false;
  }
}

static void knn_free(hs_sql_op *op) {
  knn_state *s = op->state;
  if (s == NULL) return;
  knn_stop(s);
  for (int c = 0; c < CLS_N; c++) {
    for (size_t i = 0; i < s->n_extra[c]; i++) hs_sql_chunk_release(&s->extra[c][i]);
    hs_free(s->extra[c]);
  }
  hs_sql_rel_close(op->plan->scan.rel, s->table);
  hs_arena_reset(&s->arena);
  hs_free(s);
}

static void note_stats(hs_sql_op *op) {
  knn_state *s = op->state;
  const hs_vector_search_stats *v = &s->stats;
  int len = snprintf(op->stats.note, sizeof op->stats.note,
                     "vector index answered %lld of %lld files searched (%lld planned), "
                     "%lld rows scored exactly",
                     (long long)v->files_indexed, (long long)v->files_searched,
                     (long long)v->files_planned, (long long)v->rows_scored);
  if (len > 0 && (size_t)len < sizeof op->stats.note && v->files_index_rejected > 0)
    snprintf(op->stats.note + len, sizeof op->stats.note - (size_t)len,
             "; %lld indexes refused: %.40s", (long long)v->files_index_rejected,
             v->index_rejected);
  size_t at = strlen(op->stats.note);
  if (s->reread && at < sizeof op->stats.note)
    snprintf(op->stats.note + at, sizeof op->stats.note - at,
             "; equal float32 distances: searched again reading %s", op->plan->knn.column);
}

static hs_status setting_u32(hs_sql_exec *x, const char *name, uint32_t *out, hs_error *err) {
  const char *v = hs_sql_exec_setting(x, name);
  *out = 0;
  if (v == NULL || *v == '\0') return HS_OK;
  char *end;
  unsigned long long u = strtoull(v, &end, 10);
  if (*end != '\0' || u == 0 || u > UINT32_MAX)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "invalid value for parameter \"%s\": \"%s\" (a positive integer)", name, v);
  *out = (uint32_t)u;
  return HS_OK;
}

/* The distance column (the last) of an imported chunk carries no output
 * width: the plan's type is FLOAT64 (double precision). */
static void fix_distance_type(hs_sql_chunk *c) {
  if (c->n_cols > 0) c->cols[c->n_cols - 1].type = hs_sql_type_of(HS_SQL_FLOAT64);
}

bool hs_sql_knn_search_distance_exact(const char *metric) {
  return metric != NULL && (strcmp(metric, "ip") == 0 || strcmp(metric, "l1") == 0);
}

/* ------------------------------------------------------ fallback pass */

static hs_status keep_rows(knn_state *s, int cls, const hs_sql_chunk *c, const int64_t *sel,
                           int64_t n_sel, const double *dist, int32_t n_out, bool with_distance,
                           hs_error *err) {
  if (n_sel == 0) return HS_OK;
  if (s->n_extra[cls] == s->cap_extra[cls]) {
    size_t cap = s->cap_extra[cls] ? s->cap_extra[cls] * 2 : 8;
    hs_sql_chunk *g = hs_realloc(s->extra[cls], cap * sizeof(hs_sql_chunk));
    if (g == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in vector top-k");
    s->extra[cls] = g;
    s->cap_extra[cls] = cap;
  }
  hs_sql_chunk *o = &s->extra[cls][s->n_extra[cls]];
  memset(o, 0, sizeof *o);
  hs_status st = hs_sql_chunk_init(o, n_out + (with_distance ? 1 : 0), n_sel, err);
  if (st != HS_OK) return st;
  s->n_extra[cls]++;
  for (int32_t j = 0; j < n_out && st == HS_OK; j++)
    st = hs_sql_vec_take(&o->cols[j], &c->cols[j], sel, n_sel, err);
  if (st == HS_OK && with_distance) {
    hs_sql_vec *d = &o->cols[n_out];
    st = hs_sql_vec_alloc(d, hs_sql_type_of(HS_SQL_FLOAT64), n_sel, cls == CLS_NULL, err);
    if (st == HS_OK && cls != CLS_NULL) memcpy(hs_sql_vec_mut_data(d), dist, (size_t)n_sel * 8);
  }
  s->rows_extra[cls] += n_sel;
  return st;
}

/* Scan the filter's rows and keep, per class, up to `need` rows whose
 * distance the search does not return. */
static hs_status fallback_collect(hs_sql_op *op, hs_error *err) {
  knn_state *s = op->state;
  const hs_sql_plan *p = op->plan;
  int64_t need = p->knn.k - s->returned;
  s->left = need;
  if (need <= 0) return HS_OK;
  int32_t n_out = p->scan.n_columns, vc = -1;
  for (int32_t j = 0; j < n_out; j++)
    if (strcmp(p->scan.columns[j], p->knn.column) == 0) vc = j;
  const char **names = hs_arena_alloc(&s->arena, sizeof(char *) * (size_t)(n_out + 1));
  if (names == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in vector top-k");
  for (int32_t j = 0; j < n_out; j++) names[j] = p->scan.columns[j];
  int32_t n_read = n_out;
  if (vc < 0) {
    vc = n_out;
    names[n_read++] = p->knn.column;
  }
  hs_scan_options so;
  hs_scan_options_init(&so);
  so.snapshot_id = p->scan.snapshot_id;
  so.filter = p->scan.filter;
  so.columns = names;
  so.n_columns = (size_t)n_read;
  so.batch_rows_max = KNN_FALLBACK_BATCH_ROWS;
  struct ArrowArrayStream st_;
  hs_status st = hs_table_scan_query(s->table, &so, &st_, err);
  if (st != HS_OK) return st;
  struct ArrowSchema sch;
  int rc = st_.get_schema(&st_, &sch);
  if (rc != 0) {
    st_.release(&st_);
    return hs_error_set(err, hs_status_of_errno(rc), "vector top-k: no schema");
  }
  int64_t *sel[CLS_N] = {0};
  double *dist = NULL;
  hs_sql_chunk c = {0};
  for (;;) {
    struct ArrowArray b;
    memset(&b, 0, sizeof b);
    rc = st_.get_next(&st_, &b);
    if (rc != 0) {
      const char *m = st_.get_last_error(&st_);
      st = hs_error_set(err, hs_status_of_errno(rc), "%s", m != NULL ? m : "scan failed");
      break;
    }
    if (b.release == NULL) break;
    if (b.length == 0) {
      b.release(&b);
      continue;
    }
    st = hs_sql_chunk_from_arrow(&sch, &b, NULL, -1, &c, err);
    if (st != HS_OK) break;
    for (int k = 0; k < CLS_N; k++) {
      hs_free(sel[k]);
      sel[k] = hs_malloc(sizeof(int64_t) * (size_t)c.n);
    }
    hs_free(dist);
    dist = hs_malloc(sizeof(double) * (size_t)c.n * CLS_N);
    if (sel[0] == NULL || sel[1] == NULL || sel[2] == NULL || dist == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "out of memory in vector top-k");
      break;
    }
    int64_t ns[CLS_N] = {0};
    const hs_sql_vec *v = &c.cols[vc];
    int32_t dim = v->type.a;
    for (int64_t i = 0; i < c.n; i++) {
      int cls;
      float d = 0;
      if (s->query == NULL || !hs_sql_vec_valid(v, i) || v->type.id != HS_SQL_VECTOR) {
        cls = CLS_NULL;
      } else if (dim != s->dim) {
        st = hs_error_set(err, HS_ERR_INVALID_ARG, "different vector dimensions %d and %d",
                          (int)dim, (int)s->dim);
        break;
      } else {
        const float *row = (const float *)v->data + (size_t)i * (size_t)dim;
        hs_error ignore = {0};
        if (hs_distance_f32(s->metric, row, s->query, (size_t)dim, &d, &ignore) != HS_OK) d = NAN;
        if (isfinite(d)) continue; /* the search returned it */
        cls = isnan(d) ? CLS_NAN : CLS_INF;
      }
      if (s->rows_extra[cls] + ns[cls] >= need) continue;
      dist[(size_t)cls * (size_t)c.n + (size_t)ns[cls]] = (double)d;
      sel[cls][ns[cls]++] = i;
    }
    for (int k = 0; k < CLS_N && st == HS_OK; k++)
      st = keep_rows(s, k, &c, sel[k], ns[k], dist + (size_t)k * (size_t)c.n, n_out,
                     p->knn.with_distance, err);
    hs_sql_chunk_release(&c);
    if (st != HS_OK) break;
    if (s->rows_extra[CLS_INF] >= need) break; /* nothing later can come first */
  }
  hs_sql_chunk_release(&c);
  for (int k = 0; k < CLS_N; k++) hs_free(sel[k]);
  hs_free(dist);
  hs_arrow_schema_release(&sch);
  st_.release(&st_);
  size_t len = strlen(op->stats.note);
  int64_t kept = s->rows_extra[CLS_INF] + s->rows_extra[CLS_NAN] + s->rows_extra[CLS_NULL];
  if (len < sizeof op->stats.note)
    snprintf(op->stats.note + len, sizeof op->stats.note - len,
             "; %lld rows found, a rescan added %lld without a finite distance",
             (long long)s->returned, (long long)(kept < need ? kept : need));
  return st;
}

static hs_status fallback_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  knn_state *s = op->state;
  while (s->left > 0 && s->cls_at < CLS_N) {
    if (s->chunk_at >= s->n_extra[s->cls_at]) {
      s->cls_at++;
      s->chunk_at = 0;
      continue;
    }
    hs_sql_chunk *c = &s->extra[s->cls_at][s->chunk_at++];
    if (c->n <= s->left) {
      s->left -= c->n;
      hs_sql_chunk_move(out, c);
      return HS_OK;
    }
    int64_t *sel = hs_malloc(sizeof(int64_t) * (size_t)s->left);
    if (sel == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in vector top-k");
    for (int64_t i = 0; i < s->left; i++) sel[i] = i;
    hs_status st = hs_sql_chunk_take(out, c, sel, s->left, err);
    hs_free(sel);
    s->left = 0;
    return st;
  }
  return HS_OK;
}

/* ------------------------------------------------------------ operator */

typedef struct knn_ord {
  double d;
  int64_t row;
} knn_ord;

static int knn_ord_cmp(const void *a, const void *b) {
  const knn_ord *x = a, *y = b;
  if (x->d < y->d) return -1;
  if (x->d > y->d) return 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* The search's rows (at most k) as one chunk: its columns, then the
 * distance (FLOAT64, the search's float32 value). */
static hs_status read_search(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  knn_state *s = op->state;
  const hs_sql_plan *p = op->plan;
  hs_sql_chunk *cs = NULL;
  size_t n = 0, cap = 0;
  hs_status st = HS_OK;
  for (;;) {
    struct ArrowArray batch;
    memset(&batch, 0, sizeof batch);
    int rc = s->stream.get_next(&s->stream, &batch);
    if (rc != 0) {
      const char *m = s->stream.get_last_error(&s->stream);
      st = hs_error_set(err, hs_status_of_errno(rc), "%s: %s", p->scan.rel->name,
                        m != NULL ? m : "vector search failed");
      break;
    }
    if (batch.release == NULL) break;
    if (batch.length == 0) {
      batch.release(&batch);
      continue;
    }
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 4;
      hs_sql_chunk *g = hs_realloc(cs, nc * sizeof *g);
      if (g == NULL) {
        batch.release(&batch);
        st = hs_error_set(err, HS_ERR_NOMEM, "out of memory in vector top-k");
        break;
      }
      cs = g, cap = nc;
    }
    memset(&cs[n], 0, sizeof cs[n]);
    st = hs_sql_chunk_from_arrow(&s->schema, &batch, s->cols, s->n_cols, &cs[n], err);
    if (st != HS_OK) break;
    fix_distance_type(&cs[n]);
    n++;
  }
  if (st == HS_OK && n == 1) { /* the usual case: the search's one batch */
    hs_sql_chunk_move(out, &cs[0]);
    n = 0;
  } else if (st == HS_OK && n > 1) {
    int64_t rows = 0;
    for (size_t c = 0; c < n; c++) rows += cs[c].n;
    st = hs_sql_chunk_init(out, s->n_cols, rows, err);
    hs_sql_vec *col = st == HS_OK ? hs_malloc(n * sizeof *col) : NULL;
    if (st == HS_OK && col == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    for (int32_t j = 0; j < s->n_cols && st == HS_OK; j++) {
      for (size_t c = 0; c < n; c++) col[c] = cs[c].cols[j];
      hs_sql_vec_release(&out->cols[j]);
      st = hs_sql_vec_concat(&out->cols[j], col, n, err);
    }
    hs_free(col);
    if (st != HS_OK) hs_sql_chunk_release(out);
  }
  for (size_t c = 0; c < n; c++) hs_sql_chunk_release(&cs[c]);
  hs_free(cs);
  return st;
}

/* Recompute the distances of `c` (its last column) from its vector column
 * `vc` exactly as the operators do and re-sort the rows by them (stable). */
static hs_status order_exact(hs_sql_op *op, hs_sql_chunk *c, int32_t vc, hs_error *err) {
  knn_state *s = op->state;
  int64_t m = c->n;
  knn_ord *ord = hs_malloc(sizeof(knn_ord) * (size_t)m);
  double *dist = hs_malloc(sizeof(double) * (size_t)m);
  int64_t *sel = hs_malloc(sizeof(int64_t) * (size_t)m);
  hs_status st;
  if (ord == NULL || dist == NULL || sel == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory in vector top-k");
  else
    st = hs_sql_vector_distances(op->plan->knn.metric, s->query, s->dim, &c->cols[vc], dist, err);
  if (st == HS_OK) {
    for (int64_t i = 0; i < m; i++) ord[i] = (knn_ord){dist[i], i};
    qsort(ord, (size_t)m, sizeof *ord, knn_ord_cmp);
    for (int64_t i = 0; i < m; i++) sel[i] = ord[i].row;
    hs_sql_chunk sorted = {0};
    st = hs_sql_chunk_take(&sorted, c, sel, m, err);
    if (st == HS_OK) {
      hs_sql_vec *dv = &sorted.cols[sorted.n_cols - 1];
      hs_sql_vec_release(dv);
      st = hs_sql_vec_alloc(dv, hs_sql_type_of(HS_SQL_FLOAT64), m, false, err);
      if (st == HS_OK) {
        double *o = hs_sql_vec_mut_data(dv);
        for (int64_t i = 0; i < m; i++) o[i] = ord[i].d;
      }
    }
    if (st == HS_OK) {
      hs_sql_chunk_release(c);
      hs_sql_chunk_move(c, &sorted);
    } else {
      hs_sql_chunk_release(&sorted);
    }
  }
  hs_free(ord);
  hs_free(dist);
  hs_free(sel);
  return st;
}

/* Does the (sorted) distance column hold two equal values? */
static bool has_ties(const hs_sql_chunk *c) {
  const double *d = c->cols[c->n_cols - 1].data;
  for (int64_t i = 1; i < c->n; i++)
    if (d[i] == d[i - 1]) return true;
  return false;
}

static void chunk_drop_col(hs_sql_chunk *c, int32_t j) {
  hs_sql_vec_release(&c->cols[j]);
  memmove(&c->cols[j], &c->cols[j + 1], sizeof(hs_sql_vec) * (size_t)(c->n_cols - j - 1));
  c->n_cols--;
}

static hs_status knn_start(hs_sql_op *op, hs_error *err) {
  knn_state *s = op->state;
  const hs_sql_plan *p = op->plan;
  s->started = true;
  static const char *const none[1] = {NULL};
  s->opts.columns = s->n_search_cols > 0 ? s->search_cols : none;
  s->opts.n_columns = (size_t)s->n_search_cols;
  s->n_cols = s->n_search_cols + 1;
  for (int32_t i = 0; i < s->n_cols; i++) s->cols[i] = i;
  hs_status st = hs_table_vector_search(s->table, &s->opts, s->query, (size_t)s->dim, &s->stream,
                                        &s->stats, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "table %s: ", p->scan.rel->name);
    return st;
  }
  s->open = true;
  int rc = s->stream.get_schema(&s->stream, &s->schema);
  if (rc != 0)
    return hs_error_set(err, hs_status_of_errno(rc), "table %s: no schema", p->scan.rel->name);
  return HS_OK;
}

/* The search's rows in the exact plan's order, as the plan's columns
 * (scan.columns, then distance when with_distance). */
static hs_status knn_collect(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  knn_state *s = op->state;
  const hs_sql_plan *p = op->plan;
  hs_status st = read_search(op, out, err);
  if (st != HS_OK || out->n == 0) return st;
  int32_t vc = -1;
  for (int32_t j = 0; j < s->n_search_cols; j++)
    if (strcmp(s->search_cols[j], p->knn.column) == 0) vc = j;
  if (vc < 0 && !hs_sql_knn_search_distance_exact(p->knn.metric) && has_ties(out)) {
    /* equal float32 distances may be unequal doubles: read the vectors */
    hs_sql_chunk_release(out);
    knn_stop(s);
    const char **cols = hs_arena_alloc(&s->arena, sizeof(char *) * (size_t)(s->n_search_cols + 1));
    if (cols == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in vector top-k");
    for (int32_t j = 0; j < s->n_search_cols; j++) cols[j] = s->search_cols[j];
    vc = s->n_search_cols;
    cols[vc] = p->knn.column;
    s->search_cols = cols;
    s->n_search_cols++;
    s->reread = true;
    if ((st = knn_start(op, err)) != HS_OK) return st;
    if ((st = read_search(op, out, err)) != HS_OK || out->n == 0) return st;
  }
  if (vc >= 0 && (st = order_exact(op, out, vc, err)) != HS_OK) {
    hs_sql_chunk_release(out);
    return st;
  }
  if (s->reread) chunk_drop_col(out, vc);
  if (!p->knn.with_distance) chunk_drop_col(out, out->n_cols - 1);
  s->returned = out->n;
  return HS_OK;
}

static hs_status knn_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  knn_state *s = op->state;
  const hs_sql_plan *p = op->plan;
  if (!s->started && !s->searched_done) {
    hs_status st = knn_start(op, err);
    if (st != HS_OK) return st;
  }
  if (!s->searched_done) {
    s->searched_done = true;
    hs_status st = knn_collect(op, out, err);
    if (hs_sql_exec_analyzing(op->x)) note_stats(op);
    if (st != HS_OK || out->n > 0) return st;
  }
  if (!s->fallback_done) {
    s->fallback_done = true;
    if (s->returned < p->knn.k) {
      hs_status st = fallback_collect(op, err);
      if (st != HS_OK) return st;
    }
  }
  return fallback_next(op, out, err);
}

hs_status hs_sql_op_knn_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err) {
  knn_state *s = hs_calloc(1, sizeof(*s));
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  op->state = s;
  op->free = knn_free;
  op->next = knn_next;
  hs_arena_init(&s->arena);
  const hs_sql_rel *rel = p->scan.rel;
  if (rel == NULL || rel->uri == NULL)
    return hs_error_set(err, HS_ERR_INTERNAL, "sql: vector top-k over a relation without a table");
  if (p->scan.n_columns > 2048)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "vector top-k over more than 2048 columns");
  hs_status st = hs_metric_parse(p->knn.metric, &s->metric, err);
  if (st != HS_OK) return st;
  /* the query */
  if (p->knn.query != NULL) {
    s->query = p->knn.query;
    s->dim = p->knn.dim;
  } else if (p->pred != NULL) {
    hs_sql_value v;
    st = hs_sql_eval_const(p->pred, hs_sql_exec_evalctx(x), &s->arena, &v, err);
    if (st != HS_OK) return st;
    if (!v.is_null) {
      if (v.type.id != HS_SQL_VECTOR)
        return hs_error_set(err, HS_ERR_INTERNAL, "sql: vector top-k query is not a vector");
      s->query = v.v.vec;
      s->dim = v.type.a;
    }
  }
  st = hs_sql_rel_open(rel, &s->table, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "table %s: ", rel->name);
    return st;
  }
  s->search_cols = p->scan.columns;
  s->n_search_cols = p->scan.n_columns;
  if (s->query == NULL) { /* NULL distances: rows of the filter, any order */
    s->searched_done = true;
    return HS_OK;
  }
  hs_vector_search_options *o = &s->opts;
  hs_vector_search_options_init(o);
  o->snapshot_id = p->scan.snapshot_id;
  o->column = p->knn.column;
  o->metric = p->knn.metric;
  o->k = p->knn.k;
  o->filter = p->scan.filter;
  if ((st = setting_u32(x, "hnsw.ef_search", &o->ef_search, err)) != HS_OK) return st;
  if ((st = setting_u32(x, "ivfflat.probes", &o->nprobe, err)) != HS_OK) return st;
  return HS_OK;
}
