/*
 * op_knn.c — the index-backed vector top-k (HS_SP_KNN, built by
 * optimize_knn.c from ORDER BY <distance to a constant> LIMIT k): one
 * hs_table_vector_search over the scan's table with its pushed-down filter,
 * projection and snapshot; the files' vector indexes answer where their
 * metric and dimension match (ef_search and nprobe from the session
 * settings hnsw.ef_search and ivfflat.probes), other files are scored
 * exactly. Output: scan.columns, then "distance" (FLOAT64) when
 * knn.with_distance: recomputed in double from the vector column when it
 * is read (as the operators compute it, so equal to the exact plan's, and
 * the rows re-sorted by it), else the search's float32 value.
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
  int32_t cols[2048 + 1]; /* imported children: the columns, then distance */
  int32_t n_cols;
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

static void knn_free(hs_sql_op *op) {
  knn_state *s = op->state;
  if (s == NULL) return;
  if (s->open) {
    if (s->stream.release != NULL) s->stream.release(&s->stream);
    hs_arrow_schema_release(&s->schema);
  }
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

/* The distance column of an imported chunk carries no output width: the
 * plan's type is FLOAT64 (double precision). */
static void fix_distance_type(const hs_sql_plan *p, hs_sql_chunk *c) {
  if (p->knn.with_distance && c->n_cols == p->scan.n_columns + 1)
    c->cols[p->scan.n_columns].type = hs_sql_type_of(HS_SQL_FLOAT64);
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

/* The search's rows (at most k) as one chunk. When the vector column is
 * among the columns, the distances are recomputed in double exactly as
 * the operators compute them (the search's are float32) and the rows
 * re-sorted by them (stable), so the result is the exact plan's. */
static hs_status knn_collect(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
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
    fix_distance_type(p, &cs[n]);
    s->returned += cs[n].n;
    n++;
  }
  int32_t vc = -1;
  for (int32_t j = 0; j < p->scan.n_columns; j++)
    if (strcmp(p->scan.columns[j], p->knn.column) == 0) vc = j;
  if (st == HS_OK && n > 0) {
    /* one chunk */
    st = hs_sql_chunk_init(out, s->n_cols, s->returned, err);
    hs_sql_vec *col = st == HS_OK ? hs_malloc(n * sizeof *col) : NULL;
    if (st == HS_OK && col == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    for (int32_t j = 0; j < s->n_cols && st == HS_OK; j++) {
      for (size_t c = 0; c < n; c++) col[c] = cs[c].cols[j];
      hs_sql_vec_release(&out->cols[j]);
      st = hs_sql_vec_concat(&out->cols[j], col, n, err);
    }
    hs_free(col);
  }
  for (size_t c = 0; c < n; c++) hs_sql_chunk_release(&cs[c]);
  hs_free(cs);
  if (st != HS_OK || n == 0 || !p->knn.with_distance || vc < 0) {
    if (st != HS_OK) hs_sql_chunk_release(out);
    return st;
  }
  /* exact distances, and the order they give */
  int64_t m = out->n;
  knn_ord *ord = hs_malloc(sizeof(knn_ord) * (size_t)m);
  double *dist = hs_malloc(sizeof(double) * (size_t)m);
  int64_t *sel = hs_malloc(sizeof(int64_t) * (size_t)m);
  if (ord == NULL || dist == NULL || sel == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory in vector top-k");
  } else {
    st = hs_sql_vector_distances(p->knn.metric, s->query, s->dim, &out->cols[vc], dist, err);
  }
  if (st == HS_OK) {
    for (int64_t i = 0; i < m; i++) ord[i] = (knn_ord){dist[i], i};
    qsort(ord, (size_t)m, sizeof *ord, knn_ord_cmp);
    for (int64_t i = 0; i < m; i++) sel[i] = ord[i].row;
    hs_sql_chunk sorted = {0};
    st = hs_sql_chunk_take(&sorted, out, sel, m, err);
    if (st == HS_OK) {
      hs_sql_vec *dv = &sorted.cols[p->scan.n_columns];
      hs_sql_vec_release(dv);
      st = hs_sql_vec_alloc(dv, hs_sql_type_of(HS_SQL_FLOAT64), m, false, err);
      if (st == HS_OK) {
        double *o = hs_sql_vec_mut_data(dv);
        for (int64_t i = 0; i < m; i++) o[i] = ord[i].d;
      }
    }
    hs_sql_chunk_release(out);
    if (st == HS_OK)
      hs_sql_chunk_move(out, &sorted);
    else
      hs_sql_chunk_release(&sorted);
  } else {
    hs_sql_chunk_release(out);
  }
  hs_free(ord);
  hs_free(dist);
  hs_free(sel);
  return st;
}

static hs_status knn_start(hs_sql_op *op, hs_error *err) {
  knn_state *s = op->state;
  const hs_sql_plan *p = op->plan;
  s->started = true;
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
    note_stats(op);
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
  s->n_cols = p->scan.n_columns;
  for (int32_t i = 0; i < s->n_cols; i++) s->cols[i] = i;
  if (p->knn.with_distance) s->cols[s->n_cols] = s->n_cols, s->n_cols++;
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
  static const char *const none[1] = {NULL};
  o->columns = p->scan.n_columns > 0 ? p->scan.columns : none;
  o->n_columns = (size_t)p->scan.n_columns;
  if ((st = setting_u32(x, "hnsw.ef_search", &o->ef_search, err)) != HS_OK) return st;
  if ((st = setting_u32(x, "ivfflat.probes", &o->nprobe, err)) != HS_OK) return st;
  return HS_OK;
}
