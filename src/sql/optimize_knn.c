/*
 * optimize_knn.c — ORDER BY <distance to a constant vector> LIMIT k over a
 * table becomes the index-backed vector top-k (HS_SP_KNN, op_knn.c).
 *
 * Recognised: a SORT with a limit (or a LIMIT over a SORT) whose only key
 * is ascending, NULLS LAST, and is <->, <#>, <=>, <+>, l2_distance,
 * cosine_distance or l1_distance (the vector overloads) between a vector
 * column of a table SCAN and an expression without column references (a
 * constant, evaluated now; or one with parameters, kept for run time),
 * with only PROJECT nodes and empty FILTERs between the SORT and the SCAN
 * (every WHERE conjunct already pushed into the scan's filter text, which
 * becomes the search's pre-filter). Then:
 *   SORT(limit l, offset o) -> ... -> SCAN
 * becomes
 *   [LIMIT(l, o) when o > 0] -> ... -> KNN(k = l + o)
 * with the SCAN's columns kept in place (column references above stay
 * valid) and "distance" appended; a PROJECT directly above that computes
 * the same distance reads the KNN's column instead.
 *
 * The result equals the exact plan's: the search returns min(k, rows) rows
 * in distance order, and op_knn appends the rows whose distance is NULL or
 * not finite when fewer than k come back. Not rewritten (left exact):
 * several sort keys (ties would order differently), DESC, NULLS FIRST,
 * inner_product() (ascending = largest distance first), halfvec and
 * sparsevec, in-memory relations, a remaining FILTER, a constant that is
 * NULL, fails to evaluate or has another dimension than the column (the
 * exact plan reports it), a scan with a pushed-down limit.
 *
 * The parameter case keeps the query expression in the KNN node's `pred`
 * (plan.h has no field for it).
 */
#include <string.h>

#include "plan.h"

static bool no_cols(const hs_sql_expr *e) {
  if (e == NULL) return true;
  if (e->kind == HS_SX_COL) return false;
  if (e->kind == HS_SX_FUNC && e->fn != NULL && e->fn->volatile_) return false;
  for (int32_t i = 0; i < e->n_args; i++)
    if (!no_cols(e->args[i])) return false;
  return true;
}

static bool has_param(const hs_sql_expr *e) {
  if (e == NULL) return false;
  if (e->kind == HS_SX_PARAM) return true;
  for (int32_t i = 0; i < e->n_args; i++)
    if (has_param(e->args[i])) return true;
  return false;
}

/* The metric of a distance function on vectors ordered ascending by
 * pgvector's value, or NULL. */
static const char *metric_of(const hs_sql_fn *fn) {
  if (fn == NULL || fn->n_args != 2 || fn->args[0] != HS_SQL_VECTOR || fn->args[1] != HS_SQL_VECTOR)
    return NULL;
  const char *n = fn->name;
  if (!strcmp(n, "<->") || !strcmp(n, "l2_distance")) return "l2";
  if (!strcmp(n, "<#>")) return "ip";
  if (!strcmp(n, "<=>") || !strcmp(n, "cosine_distance")) return "cosine";
  if (!strcmp(n, "<+>") || !strcmp(n, "l1_distance")) return "l1";
  return NULL;
}

/* Skip empty FILTERs. */
static hs_sql_plan *skip_filters(hs_sql_plan *p) {
  while (p != NULL && p->kind == HS_SP_FILTER && p->pred == NULL) p = p->kids[0];
  return p;
}

/* Follow a column reference down through PROJECTs (and empty FILTERs) from
 * `node`: the expression it stands for and the node it is over. */
static const hs_sql_expr *through(const hs_sql_expr *e, hs_sql_plan **node) {
  hs_sql_plan *p = skip_filters(*node);
  while (e != NULL && e->kind == HS_SX_COL && p != NULL && p->kind == HS_SP_PROJECT) {
    if (e->col < 0 || e->col >= p->n_cols) return NULL;
    e = p->project.exprs[e->col];
    p = skip_filters(p->kids[0]);
  }
  *node = p;
  return e;
}

/* May rows pass from `p` down to the scan unchanged (PROJECTs and empty
 * FILTERs only)? Returns the scan or NULL. */
static hs_sql_plan *scan_below(hs_sql_plan *p) {
  p = skip_filters(p);
  while (p != NULL && p->kind == HS_SP_PROJECT) p = skip_filters(p->kids[0]);
  if (p == NULL || p->kind != HS_SP_SCAN) return NULL;
  return p;
}

static bool values_equal(const hs_sql_value *a, const hs_sql_value *b) {
  if (!hs_sql_type_eq(a->type, b->type) || a->is_null != b->is_null) return false;
  if (a->is_null) return true;
  if (hs_sql_type_is_vector(a->type.id))
    return memcmp(a->v.vec, b->v.vec, sizeof(float) * (size_t)a->type.a) == 0;
  if (hs_sql_type_is_string(a->type.id))
    return a->v.s.len == b->v.s.len && memcmp(a->v.s.ptr, b->v.s.ptr, a->v.s.len) == 0;
  return memcmp(&a->v, &b->v, sizeof a->v) == 0;
}

/* Structural equality of two expressions over the same input. */
static bool expr_equal(const hs_sql_expr *a, const hs_sql_expr *b) {
  if (a == b) return true;
  if (a == NULL || b == NULL || a->kind != b->kind || !hs_sql_type_eq(a->type, b->type) ||
      a->n_args != b->n_args)
    return false;
  switch (a->kind) {
  case HS_SX_COL: return a->col == b->col;
  case HS_SX_PARAM: return a->param == b->param;
  case HS_SX_CONST: return values_equal(&a->value, &b->value);
  case HS_SX_FUNC:
    if (a->fn != b->fn) return false;
    break;
  case HS_SX_CAST: break;
  default: return false;
  }
  for (int32_t i = 0; i < a->n_args; i++)
    if (!expr_equal(a->args[i], b->args[i])) return false;
  return true;
}

typedef struct knn_match {
  hs_sql_plan *scan;
  int32_t col; /* the vector column's index in the scan's output */
  const hs_sql_expr *query;
  const char *metric;
  const hs_sql_fn *fn;
} knn_match;

/* Is the sort key `e` (over `input`) a distance we can answer? */
static bool match_key(const hs_sql_expr *e, hs_sql_plan *input, knn_match *m) {
  hs_sql_plan *node = input;
  e = through(e, &node);
  if (e == NULL || e->kind != HS_SX_FUNC || e->n_args != 2) return false;
  const char *metric = metric_of(e->fn);
  if (metric == NULL) return false;
  for (int side = 0; side < 2; side++) {
    const hs_sql_expr *c = e->args[side], *q = e->args[1 - side];
    if (!no_cols(q)) continue;
    hs_sql_plan *n2 = node;
    c = through(c, &n2);
    if (c == NULL || c->kind != HS_SX_COL || n2 == NULL || n2->kind != HS_SP_SCAN) continue;
    if (c->col < 0 || c->col >= n2->n_cols || c->col >= n2->scan.n_columns) continue;
    if (n2->types[c->col].id != HS_SQL_VECTOR) continue;
    m->scan = n2;
    m->col = c->col;
    m->query = q;
    m->metric = metric;
    m->fn = e->fn;
    return true;
  }
  return false;
}

/* In the PROJECT over the KNN (through empty FILTERs), expressions that
 * compute the sort's distance read the KNN's distance column instead. */
static void map_distance(hs_sql_plan_ctx *ctx, hs_sql_plan *top, hs_sql_plan *knn,
                         const knn_match *m) {
  hs_sql_plan *p = top;
  while (p != NULL && p != knn) {
    hs_sql_plan *below = skip_filters(p->kids[0]);
    if (p->kind == HS_SP_PROJECT && below == knn) {
      for (int32_t i = 0; i < p->n_cols; i++) {
        const hs_sql_expr *e = p->project.exprs[i];
        if (e == NULL || e->kind != HS_SX_FUNC || e->fn == NULL || e->n_args != 2) continue;
        if (e->fn->kernel != m->fn->kernel || e->fn->args[0] != HS_SQL_VECTOR) continue;
        bool same = false;
        for (int side = 0; side < 2 && !same; side++) {
          const hs_sql_expr *c = e->args[side], *q = e->args[1 - side];
          same = c->kind == HS_SX_COL && c->col == m->col && expr_equal(q, m->query);
        }
        if (!same) continue;
        hs_sql_expr *d = hs_sql_expr_new(&ctx->arena, HS_SX_COL, e->type, e->pos);
        if (d == NULL) continue; /* keep computing it */
        d->col = knn->n_cols - 1;
        p->project.exprs[i] = d;
      }
      return;
    }
    p = below;
  }
}

static hs_status try_rewrite(hs_sql_plan_ctx *ctx, hs_sql_plan **slot) {
  hs_sql_plan *p = *slot, *sort, *lim = NULL;
  if (p->kind == HS_SP_SORT && p->limit >= 0) {
    sort = p;
  } else if (p->kind == HS_SP_LIMIT && p->limit >= 0 && p->kids[0] != NULL &&
             p->kids[0]->kind == HS_SP_SORT && p->kids[0]->limit < 0) {
    lim = p;
    sort = p->kids[0];
  } else {
    return HS_OK;
  }
  int64_t limit = lim ? lim->limit : sort->limit, offset = lim ? lim->offset : sort->offset;
  if (offset < 0) offset = 0;
  if (limit <= 0 || limit > INT64_MAX - offset || limit + offset > 100000000) return HS_OK;
  int64_t k = limit + offset;
  if (sort->sort.n_keys != 1 || sort->sort.keys[0].desc || sort->sort.keys[0].nulls_first)
    return HS_OK;
  hs_sql_plan *input = sort->kids[0];
  hs_sql_plan *scan = scan_below(input);
  if (scan == NULL || scan->scan.rel == NULL || scan->scan.rel->uri == NULL ||
      scan->scan.limit >= 0)
    return HS_OK;
  /* the vector search reads table columns only: a query that reads a v3
   * table's hidden row lineage sorts exactly */
  const hs_sql_rel *rel = scan->scan.rel;
  for (int32_t i = 0; i < scan->scan.n_columns; i++)
    for (int32_t h = rel->n_cols - rel->n_hidden; h < rel->n_cols; h++)
      if (strcmp(scan->scan.columns[i], rel->col_names[h]) == 0) return HS_OK;
  knn_match m;
  if (!match_key(sort->sort.keys[0].expr, input, &m) || m.scan != scan) return HS_OK;
  int32_t dim = scan->types[m.col].a;

  /* the query vector: now, or at run time for parameters */
  float *query = NULL;
  const hs_sql_expr *query_expr = NULL;
  if (has_param(m.query)) {
    if (m.query->type.id != HS_SQL_VECTOR) return HS_OK;
    query_expr = m.query;
  } else {
    hs_sql_evalctx ec;
    memset(&ec, 0, sizeof ec);
    hs_sql_value v;
    hs_error local = {0};
    if (hs_sql_eval_const(m.query, &ec, &ctx->arena, &v, &local) != HS_OK) return HS_OK;
    if (v.is_null || v.type.id != HS_SQL_VECTOR || v.type.a < 1 || (dim > 0 && v.type.a != dim))
      return HS_OK;
    query = hs_arena_memdup(&ctx->arena, v.v.vec, sizeof(float) * (size_t)v.type.a);
    if (query == NULL) return HS_OK;
    dim = v.type.a;
  }

  /* the KNN node: the scan's columns, then distance */
  int32_t n = scan->n_cols;
  hs_sql_plan *knn = hs_sql_plan_new(ctx, HS_SP_KNN, n + 1);
  if (knn == NULL) return HS_ERR_NOMEM;
  knn->pos = scan->pos;
  knn->scan = scan->scan;
  for (int32_t i = 0; i < n; i++) {
    knn->types[i] = scan->types[i];
    knn->names[i] = scan->names[i];
  }
  knn->types[n] = hs_sql_type_of(HS_SQL_FLOAT64);
  knn->names[n] = "distance";
  knn->est_rows = (double)k;
  knn->knn.column = scan->scan.columns[m.col];
  knn->knn.query = query;
  knn->knn.dim = dim;
  knn->knn.metric = m.metric;
  knn->knn.k = k;
  knn->knn.with_distance = true;
  knn->pred = (hs_sql_expr *)query_expr;

  /* put it where the scan was */
  hs_sql_plan *above = NULL;
  for (hs_sql_plan *q = input; q != scan; q = q->kids[0]) above = q;
  if (above == NULL) {
    sort->kids[0] = knn;
    input = knn;
  } else {
    above->kids[0] = knn;
  }
  map_distance(ctx, input, knn, &m);

  /* the SORT goes: the KNN's rows are in order */
  if (lim != NULL) {
    lim->kids[0] = input;
  } else if (offset > 0) {
    hs_sql_plan *l = hs_sql_plan_new(ctx, HS_SP_LIMIT, sort->n_cols);
    if (l == NULL) return HS_ERR_NOMEM;
    l->pos = sort->pos;
    l->limit = limit;
    l->offset = offset;
    l->kids[0] = input;
    l->est_rows = (double)limit;
    for (int32_t i = 0; i < sort->n_cols; i++) {
      l->types[i] = sort->types[i];
      l->names[i] = sort->names[i];
    }
    *slot = l;
  } else {
    *slot = input;
  }
  return HS_OK;
}

static hs_status walk(hs_sql_plan_ctx *ctx, hs_sql_plan **slot, hs_error *err) {
  if (*slot == NULL) return HS_OK;
  hs_status st = try_rewrite(ctx, slot);
  if (st != HS_OK) return hs_error_set(err, st, "out of memory while optimizing");
  hs_sql_plan *p = *slot;
  for (int i = 0; i < 2; i++)
    if ((st = walk(ctx, &p->kids[i], err)) != HS_OK) return st;
  for (int32_t i = 0; i < p->n_many; i++)
    if ((st = walk(ctx, &p->many[i], err)) != HS_OK) return st;
  return HS_OK;
}

hs_status hs_sql_optimize_knn(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err) {
  return walk(ctx, root, err);
}
