/*
 * optimize_semi.c — semi joins moved down to the input their keys come
 * from (hs_sql_optimize_semi_down, after join keys are extracted, before
 * columns are pruned and semi join sides are chosen).
 *
 * `WHERE x IN (SELECT ...)` and `EXISTS (...)` bind to a semi join over
 * the whole FROM clause (bind_sub.c). When every column the semi join's
 * keys and condition read from its left input comes from one input A of
 * an inner join below (through projections of plain columns), the semi
 * join moves onto A:
 *
 *     (A ⋈ B) ⋉ S  =  (A ⋉ S) ⋈ B        (a row of A ⋈ B has a match in S
 *                                         exactly when its A part has)
 *
 * and on down while that holds. It moves only onto an input estimated at
 * no more rows than the one it leaves (the semi join then probes fewer
 * rows, and the joins above it see at most as many): TPC-H Q18's
 * `o_orderkey IN (57 order keys)` filters 1.5M orders instead of 6M
 * joined lineitem rows, and Q21's EXISTS stays above its selective joins.
 * Anti joins stay (they remove few rows when their subquery is small).
 * Projections it passes keep their place above (their output is
 * unchanged: a semi join's output is its left input's columns); one with a
 * volatile expression stops it (it would be evaluated on other rows).
 */
#include <string.h>

#include "bind.h"
#include "bind_internal.h"

typedef struct semi_ctx {
  hs_sql_plan_ctx *pc;
  hs_error *err;
} semi_ctx;

/* Mark the columns < nl that e reads. */
static void mark(const hs_sql_expr *e, bool *m, int32_t nl) {
  if (e == NULL) return;
  if (e->kind == HS_SX_COL && e->col >= 0 && e->col < nl) m[e->col] = true;
  for (int32_t i = 0; i < e->n_args; i++) mark(e->args[i], m, nl);
}

/* Rewrite j's left-side references through map (old left column -> new
 * left column), right-side ones shifted to follow nl_new left columns. */
static hs_status rebase(semi_ctx *o, hs_sql_plan *j, const int32_t *lmap, int32_t nl_new) {
  int32_t nl = j->kids[0]->n_cols, nr = j->kids[1]->n_cols;
  int32_t *map = hs_arena_alloc(&o->pc->arena, sizeof(int32_t) * (size_t)(nl + nr + 1));
  if (map == NULL) return hs_error_set(o->err, HS_ERR_NOMEM, "out of memory");
  for (int32_t c = 0; c < nl; c++) map[c] = lmap[c];
  for (int32_t c = 0; c < nr; c++) map[nl + c] = nl_new + c;
  for (int32_t k = 0; k < j->join.n_keys; k++) {
    j->join.left_keys[k] = hs_sql_expr_remap(&o->pc->arena, j->join.left_keys[k], map, 0);
    if (j->join.left_keys[k] == NULL) return hs_error_set(o->err, HS_ERR_NOMEM, "out of memory");
  }
  if (j->pred != NULL && (j->pred = hs_sql_expr_remap(&o->pc->arena, j->pred, map, 0)) == NULL)
    return hs_error_set(o->err, HS_ERR_NOMEM, "out of memory");
  return HS_OK;
}

/* Try one step down for semi join *jp; true in *moved when it moved
 * (then *jp is the node that took its place). */
static hs_status step(semi_ctx *o, hs_sql_plan **jp, bool *moved) {
  *moved = false;
  hs_sql_plan *j = *jp, *x = j->kids[0];
  int32_t nl = x->n_cols;
  bool *used = hs_arena_alloc(&o->pc->arena, (size_t)nl + 1);
  int32_t *lmap = hs_arena_alloc(&o->pc->arena, sizeof(int32_t) * ((size_t)nl + 1));
  if (used == NULL || lmap == NULL) return hs_error_set(o->err, HS_ERR_NOMEM, "out of memory");
  memset(used, 0, (size_t)nl + 1);
  for (int32_t k = 0; k < j->join.n_keys; k++) mark(j->join.left_keys[k], used, nl);
  mark(j->pred, used, nl);
  hs_sql_plan *a; /* the new left input of j */
  int side = -1;  /* x->kids[side] is a (x is a join); -1: x is a projection over a */
  if (x->kind == HS_SP_PROJECT) {
    a = x->kids[0];
    for (int32_t c = 0; c < nl; c++) {
      const hs_sql_expr *e = x->project.exprs[c];
      if (hs_sql_expr_has_volatile(e)) return HS_OK;
      if (!used[c]) continue;
      if (e->kind != HS_SX_COL) return HS_OK;
      lmap[c] = e->col;
    }
  } else if (x->kind == HS_SP_JOIN && x->join.type == HS_SJ_INNER &&
             (x->join.method == HS_SJM_HASH || x->join.method == HS_SJM_NL)) {
    int32_t xl = x->kids[0]->n_cols;
    bool any_l = false, any_r = false;
    for (int32_t c = 0; c < nl; c++) {
      if (!used[c]) continue;
      if (c < xl)
        any_l = true;
      else
        any_r = true;
    }
    if (any_l == any_r) return HS_OK; /* both sides (or none: keep it simple) */
    side = any_l ? 0 : 1;
    a = x->kids[side];
    if (hs_sql_estimate_rows(a) > hs_sql_estimate_rows(x)) return HS_OK;
    for (int32_t c = 0; c < nl; c++) lmap[c] = side == 0 ? c : c - xl;
  } else {
    return HS_OK;
  }
  hs_status st = rebase(o, j, lmap, a->n_cols);
  if (st != HS_OK) return st;
  j->kids[0] = a;
  j->n_cols = a->n_cols;
  j->types = a->types;
  j->names = a->names;
  j->est_rows = -1;
  if (side < 0)
    x->kids[0] = j;
  else
    x->kids[side] = j;
  *jp = x;
  *moved = true;
  return HS_OK;
}

static hs_status visit(semi_ctx *o, hs_sql_plan **pp) {
  hs_sql_plan *p = *pp;
  hs_status st = HS_OK;
  for (int i = 0; st == HS_OK && i < 2; i++)
    if (p->kids[i] != NULL) st = visit(o, &p->kids[i]);
  for (int32_t i = 0; st == HS_OK && i < p->n_many; i++) st = visit(o, &p->many[i]);
  if (st != HS_OK || p->kind != HS_SP_JOIN || p->join.type != HS_SJ_SEMI ||
      p->join.method != HS_SJM_HASH || p->join.n_keys <= 0)
    return st;
  /* sink it as far as it goes: after each step *pp is the node above it */
  hs_sql_plan **at = pp;
  for (;;) {
    bool moved = false;
    st = step(o, at, &moved);
    if (st != HS_OK || !moved) return st;
    hs_sql_plan *x = *at;
    at = x->kind == HS_SP_PROJECT ? &x->kids[0] : x->kids[0] == p ? &x->kids[0] : &x->kids[1];
  }
}

hs_status hs_sql_optimize_semi_down(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err) {
  semi_ctx o = {ctx, err};
  return visit(&o, root);
}
