/*
 * optimize_aggkeys.c — a grouped input joined on its group keys reads
 * only the keys the other side can have (hs_sql_optimize_agg_keys, after
 * join keys are extracted and semi joins moved down, before filters go
 * into scans and columns are pruned).
 *
 * A decorrelated scalar subquery (bind_sub.c) is a left join of the outer
 * rows with the subquery grouped by its correlation keys: TPC-H Q17's
 * `avg(l_quantity)` per part over all 6M lineitem rows (200,000 groups),
 * of which the join keeps the 204 parts the outer side has. When a hash
 * join (inner or left) has on its right a GROUP BY (under projections of
 * plain columns) and one of its keys is a group key there, and the left
 * key is a plain column that comes, through projections, filters and
 * joins, from a table scan (possibly filtered), then every left key value
 * is among that scan's values (a semi join's key column is also among its
 * right side's: the smaller estimate is taken, TPC-H Q20's part names). So the aggregate's input
 * can be semi joined with a copy of that scan on the group key first:
 *
 *     L ⟕ γ_k(X)  =  L ⟕ γ_k(X ⋉_k S)     (S ⊇ the k values of L)
 *
 * (the groups the semi join drops have no partner in L: an inner join
 * drops them, a left join too, since the aggregate is on its right; an
 * inner join's aggregate may be on either side). The
 * copy is estimated first: only a scan estimated at under a quarter of
 * the aggregate's estimated groups is copied (a small filtered dimension),
 * so the extra scan is cheap and the semi join drops most input rows.
 */
#include <string.h>

#include "bind.h"
#include "bind_internal.h"

typedef struct ak_ctx {
  hs_sql_plan_ctx *pc;
  hs_error *err;
} ak_ctx;

static hs_status nomem(ak_ctx *o) {
  return hs_error_set(o->err, HS_ERR_NOMEM, "out of memory");
}

/* The table scan (or filter over one) column `c` of p's output comes
 * from, through projections of plain columns, filters and joins; NULL when
 * there is none. *col: the column of that node. */
static const hs_sql_plan *source_of(const hs_sql_plan *p, int32_t c, int32_t *col) {
  for (;;) {
    if (c < 0 || c >= p->n_cols) return NULL;
    switch (p->kind) {
    case HS_SP_SCAN:
      if (p->scan.rel == NULL || p->scan.rel->uri == NULL || p->scan.limit >= 0) return NULL;
      *col = c;
      return p;
    case HS_SP_FILTER:
      if (p->kids[0]->kind == HS_SP_SCAN && source_of(p->kids[0], c, col) != NULL) {
        *col = c;
        return p;
      }
      p = p->kids[0];
      break;
    case HS_SP_PROJECT: {
      const hs_sql_expr *e = p->project.exprs[c];
      if (e->kind != HS_SX_COL || !hs_sql_type_eq(e->type, p->types[c])) return NULL;
      c = e->col;
      p = p->kids[0];
      break;
    }
    case HS_SP_JOIN: {
      hs_sql_join_type t = p->join.type;
      int32_t nl = p->kids[0]->n_cols;
      if (t == HS_SJ_INNER || t == HS_SJ_LEFT || t == HS_SJ_SEMI || t == HS_SJ_ANTI ||
          t == HS_SJ_ANTI_NULLAWARE) {
        /* values of either side's columns (or NULL, which never matches) */
        if (c < nl && t == HS_SJ_SEMI && p->join.method == HS_SJM_HASH) {
          /* a semi join's key column: also among its right side's values */
          const hs_sql_plan *best = source_of(p->kids[0], c, col);
          for (int32_t k = 0; k < p->join.n_keys; k++) {
            const hs_sql_expr *lk = p->join.left_keys[k], *rk = p->join.right_keys[k];
            int32_t rc = -1;
            const hs_sql_plan *r;
            if (lk->kind != HS_SX_COL || lk->col != c || rk->kind != HS_SX_COL ||
                !hs_sql_type_eq(lk->type, rk->type) ||
                (r = source_of(p->kids[1], rk->col, &rc)) == NULL ||
                !hs_sql_type_eq(r->types[rc], p->types[c]))
              continue;
            if (best == NULL || hs_sql_estimate_rows(r) < hs_sql_estimate_rows(best)) {
              best = r;
              *col = rc;
            }
          }
          return best;
        }
        if (c < nl) {
          p = p->kids[0];
        } else if (t == HS_SJ_INNER || t == HS_SJ_LEFT) {
          c -= nl;
          p = p->kids[1];
        } else {
          return NULL;
        }
        break;
      }
      return NULL;
    }
    default: return NULL;
    }
  }
}

/* A copy of a scan, or of a filter over one (its own nodes, arrays and
 * predicate: later passes rewrite them in place). */
static hs_sql_plan *copy_source(ak_ctx *o, const hs_sql_plan *s) {
  hs_sql_plan *p = hs_sql_plan_new(o->pc, s->kind, s->n_cols);
  if (p == NULL) return NULL;
  p->pos = s->pos;
  p->est_rows = -1;
  memcpy(p->types, s->types, sizeof(*p->types) * (size_t)s->n_cols);
  memcpy(p->names, s->names, sizeof(*p->names) * (size_t)s->n_cols);
  if (s->kind == HS_SP_FILTER) {
    if ((p->pred = hs_sql_expr_remap(&o->pc->arena, s->pred, NULL, 0)) == NULL ||
        (p->kids[0] = copy_source(o, s->kids[0])) == NULL)
      return NULL;
    return p;
  }
  p->scan = s->scan;
  p->scan.columns = hs_arena_alloc(&o->pc->arena, sizeof(char *) * (size_t)(s->scan.n_columns + 1));
  if (p->scan.columns == NULL) return NULL;
  memcpy(p->scan.columns, s->scan.columns, sizeof(char *) * (size_t)s->scan.n_columns);
  return p;
}

/* Try join j: its input `side` (the right one, or either of an inner
 * join) a GROUP BY joined on a group key. */
static hs_status try_side(ak_ctx *o, hs_sql_plan *j, int side, bool *done) {
  hs_sql_expr **gkeys = side == 1 ? j->join.right_keys : j->join.left_keys;
  hs_sql_expr **okeys = side == 1 ? j->join.left_keys : j->join.right_keys;
  for (int32_t k = 0; k < j->join.n_keys; k++) {
    const hs_sql_expr *rk = gkeys[k], *lk = okeys[k];
    if (rk->kind != HS_SX_COL || lk->kind != HS_SX_COL) continue;
    hs_sql_plan *a = j->kids[side];
    int32_t c = rk->col;
    while (a->kind == HS_SP_PROJECT && c >= 0 && c < a->n_cols &&
           a->project.exprs[c]->kind == HS_SX_COL &&
           hs_sql_type_eq(a->project.exprs[c]->type, a->types[c])) {
      c = a->project.exprs[c]->col;
      a = a->kids[0];
    }
    if (a->kind != HS_SP_AGG || c < 0 || c >= a->agg.n_keys) continue;
    const hs_sql_expr *gk = a->agg.keys[c];
    if (hs_sql_expr_has_volatile(gk) || hs_sql_expr_is_const(gk)) continue;
    int32_t scol = -1;
    const hs_sql_plan *src = source_of(j->kids[1 - side], lk->col, &scol);
    if (src == NULL || !hs_sql_type_eq(src->types[scol], lk->type)) continue;
    double groups = hs_sql_estimate_rows(a), srows = hs_sql_estimate_rows(src);
    if (srows * 4 >= groups) continue;
    hs_sql_plan *x = a->kids[0];
    hs_sql_plan *s = copy_source(o, src);
    hs_sql_plan *semi = hs_sql_plan_new(o->pc, HS_SP_JOIN, x->n_cols);
    hs_sql_expr **l = hs_arena_alloc(&o->pc->arena, sizeof(*l));
    hs_sql_expr **r = hs_arena_alloc(&o->pc->arena, sizeof(*r));
    if (s == NULL || semi == NULL || l == NULL || r == NULL) return nomem(o);
    if ((l[0] = hs_sql_expr_remap(&o->pc->arena, gk, NULL, 0)) == NULL) return nomem(o);
    if ((r[0] = hs_sql_expr_new(&o->pc->arena, HS_SX_COL, src->types[scol], lk->pos)) == NULL)
      return nomem(o);
    r[0]->col = scol;
    memcpy(semi->types, x->types, sizeof(*x->types) * (size_t)x->n_cols);
    memcpy(semi->names, x->names, sizeof(*x->names) * (size_t)x->n_cols);
    semi->pos = a->pos;
    semi->kids[0] = x;
    semi->kids[1] = s;
    semi->join.type = HS_SJ_SEMI;
    semi->join.method = HS_SJM_HASH;
    semi->join.left_keys = l;
    semi->join.right_keys = r;
    semi->join.n_keys = 1;
    a->kids[0] = semi;
    *done = true; /* one key filters enough */
    return HS_OK;
  }
  return HS_OK;
}

static hs_status try_join(ak_ctx *o, hs_sql_plan *j) {
  if (j->kind != HS_SP_JOIN || j->join.method != HS_SJM_HASH || j->join.n_keys <= 0 ||
      (j->join.type != HS_SJ_INNER && j->join.type != HS_SJ_LEFT))
    return HS_OK;
  bool done = false;
  hs_status st = try_side(o, j, 1, &done);
  if (st == HS_OK && !done && j->join.type == HS_SJ_INNER) st = try_side(o, j, 0, &done);
  return st;
}

static hs_status visit(ak_ctx *o, hs_sql_plan *p) {
  hs_status st = HS_OK;
  for (int i = 0; st == HS_OK && i < 2; i++)
    if (p->kids[i] != NULL) st = visit(o, p->kids[i]);
  for (int32_t i = 0; st == HS_OK && i < p->n_many; i++) st = visit(o, p->many[i]);
  return st == HS_OK ? try_join(o, p) : st;
}

hs_status hs_sql_optimize_agg_keys(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err) {
  ak_ctx o = {ctx, err};
  return visit(&o, *root);
}
