/*
 * optimize.c — rewrites of a bound plan, in this order:
 *
 *  1. Filters move down: the conjuncts of a FILTER go below joins to the
 *     side whose columns they use (for the sides whose rows they may
 *     remove: both of an inner join, the left of a left/semi/anti join,
 *     the right of a right join), through projections, and merge into
 *     the FILTER below.
 *     A condition on both sides of an inner join that is an OR also
 *     sends each side what it implies about that side alone (the OR of
 *     each branch's conjuncts there, when every branch has some).
 *  1b. Inner joins are reordered from row estimates (optimize_order.c;
 *     HS_SQL_JOIN_ORDER=0 in the environment keeps the written order).
 *  2. Joins get keys: conjuncts `l = r` of an inner join's condition (and
 *     of filters pushed onto it) between a left-only and a right-only
 *     expression become hash-join keys; the rest stays as the residual.
 *  3. Filters reach scans: each conjunct over a table scan that the filter
 *     language (src/query/expr.h) expresses exactly — column vs constant
 *     comparisons, IN lists, IS [NOT] NULL, LIKE, AND/OR/NOT of those — is
 *     rendered as text into the scan's filter, so file, row-group and page
 *     pruning and the scalar indexes answer it; the rest stays above.
 *  4. Columns are pruned: every node keeps only the columns its ancestors
 *     use, so scans read only those.
 *  5. ORDER BY a distance to a constant vector LIMIT k over a table
 *     becomes the index-backed vector top-k (optimize_knn.c); then the
 *     columns are pruned again: the sort key was often the only reader of
 *     the vector column and the distance, and a KNN that reads neither
 *     takes the search's own distances (op_knn.c).
 *  6. LIMIT over a plain scan is pushed into it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind_internal.h"
#include "op_join.h"

typedef struct opt {
  hs_sql_plan_ctx *pc;
  hs_error *err;
} opt;

static hs_status nomem(opt *o) {
  return hs_error_set(o->err, HS_ERR_NOMEM, "out of memory while optimizing");
}

/* ----------------------------------------------------------- helpers */

static void cols_used(const hs_sql_expr *e, bool *used, int32_t n) {
  if (e == NULL) return;
  if (e->kind == HS_SX_COL && e->col >= 0 && e->col < n) used[e->col] = true;
  for (int32_t i = 0; i < e->n_args; i++) cols_used(e->args[i], used, n);
}

/* Do all column references of e lie in [lo, hi)? */
static bool cols_within(const hs_sql_expr *e, int32_t lo, int32_t hi) {
  if (e->kind == HS_SX_COL) return e->col >= lo && e->col < hi;
  for (int32_t i = 0; i < e->n_args; i++)
    if (!cols_within(e->args[i], lo, hi)) return false;
  return true;
}

static hs_sql_expr *remap(opt *o, const hs_sql_expr *e, const int32_t *map, int32_t shift) {
  return hs_sql_expr_remap(&o->pc->arena, e, map, shift);
}

/* Replace column refs of e by the expressions that compute them (a
 * projection's), for moving a filter below it. */
static hs_sql_expr *substitute(opt *o, const hs_sql_expr *e, hs_sql_expr *const *defs) {
  if (e->kind == HS_SX_COL) return defs[e->col];
  hs_sql_expr *c = hs_arena_memdup(&o->pc->arena, e, sizeof(*e));
  if (c == NULL) return NULL;
  if (e->n_args > 0) {
    c->args = hs_arena_alloc(&o->pc->arena, sizeof(hs_sql_expr *) * (size_t)e->n_args);
    if (c->args == NULL) return NULL;
    for (int32_t i = 0; i < e->n_args; i++)
      if ((c->args[i] = substitute(o, e->args[i], defs)) == NULL) return NULL;
  }
  return c;
}

/* Conjuncts of e appended to list. */
typedef struct conj {
  hs_sql_expr **v;
  int32_t n, cap;
} conj;

static hs_status conj_add(opt *o, conj *c, hs_sql_expr *e) {
  if (c->n == c->cap) {
    int32_t nc = c->cap ? c->cap * 2 : 8;
    hs_sql_expr **g = hs_arena_alloc(&o->pc->arena, sizeof(*g) * (size_t)nc);
    if (g == NULL) return nomem(o);
    if (c->n) memcpy(g, c->v, sizeof(*g) * (size_t)c->n);
    c->v = g, c->cap = nc;
  }
  c->v[c->n++] = e;
  return HS_OK;
}

static hs_status split_and(opt *o, hs_sql_expr *e, conj *c) {
  if (e == NULL) return HS_OK;
  if (e->kind == HS_SX_AND) {
    for (int32_t i = 0; i < e->n_args; i++) {
      hs_status st = split_and(o, e->args[i], c);
      if (st != HS_OK) return st;
    }
    return HS_OK;
  }
  return conj_add(o, c, e);
}

static hs_sql_expr *and_of(opt *o, hs_sql_expr **v, int32_t n) {
  if (n == 0) return NULL;
  if (n == 1) return v[0];
  hs_sql_expr *e =
      hs_sql_expr_new(&o->pc->arena, HS_SX_AND, hs_sql_type_of(HS_SQL_BOOL), v[0]->pos);
  if (e == NULL) return NULL;
  e->args = hs_arena_alloc(&o->pc->arena, sizeof(hs_sql_expr *) * (size_t)n);
  if (e->args == NULL) return NULL;
  memcpy(e->args, v, sizeof(hs_sql_expr *) * (size_t)n);
  e->n_args = n;
  return e;
}

static hs_sql_plan *filter_over(opt *o, hs_sql_plan *kid, hs_sql_expr *pred) {
  hs_sql_plan *f = hs_sql_plan_new(o->pc, HS_SP_FILTER, kid->n_cols);
  if (f == NULL) return NULL;
  f->kids[0] = kid;
  f->pred = pred;
  for (int32_t i = 0; i < kid->n_cols; i++)
    f->types[i] = kid->types[i], f->names[i] = kid->names[i];
  return f;
}

/* ------------------------------------------- 0. constant folding */

static bool has_param(const hs_sql_expr *e) {
  if (e->kind == HS_SX_PARAM) return true;
  for (int32_t i = 0; i < e->n_args; i++)
    if (has_param(e->args[i])) return true;
  return false;
}

/* Replace constant subtrees by their values. A subtree whose evaluation
 * fails stays as it is: the error then happens only if a row reaches it
 * (CASE WHEN false THEN 1/0 END must not fail). */
static hs_status fold(opt *o, hs_sql_expr **ep) {
  hs_sql_expr *e = *ep;
  if (e == NULL || e->kind == HS_SX_CONST || e->kind == HS_SX_COL || e->kind == HS_SX_PARAM)
    return HS_OK;
  if (hs_sql_expr_is_const(e) && !has_param(e)) {
    hs_sql_value v;
    hs_error ferr = {0};
    hs_sql_evalctx ctx = {0};
    if (hs_sql_eval_const(e, &ctx, &o->pc->arena, &v, &ferr) == HS_OK) {
      hs_sql_expr *c = hs_sql_expr_new(&o->pc->arena, HS_SX_CONST, e->type, e->pos);
      if (c == NULL) return nomem(o);
      c->value = v;
      c->value.type = e->type;
      *ep = c;
      return HS_OK;
    }
  }
  for (int32_t i = 0; i < e->n_args; i++) {
    hs_status st = fold(o, &e->args[i]);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

static hs_status fold_all(opt *o, hs_sql_expr **v, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    hs_status st = fold(o, &v[i]);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

static hs_status fold_plan(opt *o, hs_sql_plan *p) {
  hs_status st;
  for (int i = 0; i < 2; i++)
    if (p->kids[i] != NULL && (st = fold_plan(o, p->kids[i])) != HS_OK) return st;
  for (int32_t i = 0; i < p->n_many; i++)
    if ((st = fold_plan(o, p->many[i])) != HS_OK) return st;
  if ((st = fold(o, &p->pred)) != HS_OK) return st;
  switch (p->kind) {
  case HS_SP_PROJECT: return fold_all(o, p->project.exprs, p->n_cols);
  case HS_SP_AGG:
    if ((st = fold_all(o, p->agg.keys, p->agg.n_keys)) != HS_OK) return st;
    for (int32_t i = 0; i < p->agg.n_aggs; i++) {
      if ((st = fold_all(o, p->agg.aggs[i].args, p->agg.aggs[i].n_args)) != HS_OK) return st;
      if ((st = fold(o, &p->agg.aggs[i].filter)) != HS_OK) return st;
    }
    return HS_OK;
  case HS_SP_SORT:
    for (int32_t i = 0; i < p->sort.n_keys; i++)
      if ((st = fold(o, &p->sort.keys[i].expr)) != HS_OK) return st;
    return HS_OK;
  case HS_SP_JOIN:
    if ((st = fold_all(o, p->join.left_keys, p->join.n_keys)) != HS_OK) return st;
    return fold_all(o, p->join.right_keys, p->join.n_keys);
  default: return HS_OK;
  }
}

/* ------------------------------------------- 1. filters move down */

static hs_status push_filters(opt *o, hs_sql_plan **pp);

/* An equality with a constant or an IN list: the conjuncts worth deriving
 * (selective, cheap in a scan filter). Ranges are left out: on TPC-H Q19
 * the implied quantity ranges kept 60 % of lineitem and cost its scan 0.2 s. */
static bool is_point(const hs_sql_expr *e) {
  if (e->kind == HS_SX_IN) return !e->negated;
  if (e->kind != HS_SX_FUNC || e->n_args != 2 || e->fn == NULL || strcmp(e->fn->name, "=") != 0)
    return false;
  return hs_sql_expr_is_const(e->args[0]) != hs_sql_expr_is_const(e->args[1]);
}

/* What OR `e` implies about columns [lo, hi) alone: the OR of each
 * branch's conjuncts over those columns, or NULL when some branch has
 * none (nothing is implied). TPC-H Q7's (n1 = 'FRANCE' AND n2 = 'GERMANY')
 * OR (n1 = 'GERMANY' AND n2 = 'FRANCE') implies n1 IN ('FRANCE',
 * 'GERMANY') for the first nation's scan; the OR itself stays. Only
 * point conjuncts (is_point) are taken. */
static hs_status implied(opt *o, const hs_sql_expr *e, int32_t lo, int32_t hi, hs_sql_expr **out) {
  *out = NULL;
  if (e->kind != HS_SX_OR || e->n_args < 2 || e->n_args > 64 || hs_sql_expr_has_volatile(e))
    return HS_OK;
  hs_sql_expr **br = hs_arena_alloc(&o->pc->arena, sizeof(hs_sql_expr *) * (size_t)e->n_args);
  if (br == NULL) return nomem(o);
  for (int32_t i = 0; i < e->n_args; i++) {
    conj all = {0}, mine = {0};
    hs_status st = split_and(o, e->args[i], &all);
    for (int32_t k = 0; st == HS_OK && k < all.n; k++)
      if (cols_within(all.v[k], lo, hi) && !hs_sql_expr_is_const(all.v[k]) && is_point(all.v[k]))
        st = conj_add(o, &mine, all.v[k]);
    if (st != HS_OK) return st;
    if (mine.n == 0) return HS_OK;
    if ((br[i] = and_of(o, mine.v, mine.n)) == NULL) return nomem(o);
  }
  hs_sql_expr *orr = hs_sql_expr_new(&o->pc->arena, HS_SX_OR, e->type, e->pos);
  if (orr == NULL) return nomem(o);
  orr->args = br;
  orr->n_args = e->n_args;
  *out = orr;
  return HS_OK;
}

/* Put conjuncts c[0..n) (over p's output) onto p: pushed into p's inputs
 * where allowed, else a FILTER over p. */
static hs_status push_into(opt *o, hs_sql_plan **pp, hs_sql_expr **c, int32_t n) {
  hs_sql_plan *p = *pp;
  if (n == 0) return HS_OK;
  conj keep = {0};
  hs_status st = HS_OK;
  if (p->kind == HS_SP_FILTER) {
    conj all = {0};
    if ((st = split_and(o, p->pred, &all)) != HS_OK) return st;
    for (int32_t i = 0; i < n; i++)
      if ((st = conj_add(o, &all, c[i])) != HS_OK) return st;
    if ((st = push_into(o, &p->kids[0], all.v, all.n)) != HS_OK) return st;
    *pp = p->kids[0];
    return HS_OK;
  }
  if (p->kind == HS_SP_JOIN && p->kids[0] != NULL) {
    int32_t nl = p->kids[0]->n_cols;
    int32_t nr = p->kids[1]->n_cols;
    hs_sql_join_type t = p->join.type;
    bool semi = t == HS_SJ_SEMI || t == HS_SJ_ANTI || t == HS_SJ_ANTI_NULLAWARE;
    bool left_ok = t == HS_SJ_INNER || t == HS_SJ_LEFT || semi;
    bool right_ok = t == HS_SJ_INNER || t == HS_SJ_RIGHT;
    conj lc = {0}, rc = {0}, jc = {0};
    for (int32_t i = 0; i < n && st == HS_OK; i++) {
      hs_sql_expr *e = c[i];
      if (hs_sql_expr_has_volatile(e)) {
        st = conj_add(o, &keep, e);
      } else if (left_ok && cols_within(e, 0, nl)) {
        st = conj_add(o, &lc, e);
      } else if (!semi && right_ok && cols_within(e, nl, nl + nr)) {
        hs_sql_expr *r = remap(o, e, NULL, -nl);
        st = r == NULL ? nomem(o) : conj_add(o, &rc, r);
      } else if (t == HS_SJ_INNER) {
        st = conj_add(o, &jc, e); /* joins both sides: into the join condition */
        hs_sql_expr *l = NULL, *r = NULL;
        if (st == HS_OK) st = implied(o, e, 0, nl, &l);
        if (st == HS_OK && l != NULL) st = conj_add(o, &lc, l);
        if (st == HS_OK) st = implied(o, e, nl, nl + nr, &r);
        if (st == HS_OK && r != NULL) {
          hs_sql_expr *rr = remap(o, r, NULL, -nl);
          st = rr == NULL ? nomem(o) : conj_add(o, &rc, rr);
        }
      } else {
        st = conj_add(o, &keep, e);
      }
    }
    if (st != HS_OK) return st;
    if (jc.n > 0) {
      hs_sql_expr *pred = p->pred;
      conj all = {0};
      if ((st = split_and(o, pred, &all)) != HS_OK) return st;
      for (int32_t i = 0; i < jc.n; i++)
        if ((st = conj_add(o, &all, jc.v[i])) != HS_OK) return st;
      p->pred = and_of(o, all.v, all.n);
      if (p->pred == NULL) return nomem(o);
    }
    if ((st = push_into(o, &p->kids[0], lc.v, lc.n)) != HS_OK) return st;
    if ((st = push_into(o, &p->kids[1], rc.v, rc.n)) != HS_OK) return st;
  } else if (p->kind == HS_SP_PROJECT) {
    /* through a projection: substitute the definitions */
    conj down = {0};
    for (int32_t i = 0; i < n && st == HS_OK; i++) {
      bool vol = hs_sql_expr_has_volatile(c[i]);
      bool uses_volatile = false;
      bool u[4096];
      int32_t nn = p->n_cols < 4096 ? p->n_cols : 4096;
      memset(u, 0, sizeof(bool) * (size_t)nn);
      cols_used(c[i], u, nn);
      for (int32_t k = 0; k < nn; k++)
        if (u[k] && hs_sql_expr_has_volatile(p->project.exprs[k])) uses_volatile = true;
      if (vol || uses_volatile || p->n_cols > 4096) {
        st = conj_add(o, &keep, c[i]);
      } else {
        hs_sql_expr *s = substitute(o, c[i], p->project.exprs);
        st = s == NULL ? nomem(o) : conj_add(o, &down, s);
      }
    }
    if (st == HS_OK) st = push_into(o, &p->kids[0], down.v, down.n);
  } else if (p->kind == HS_SP_SORT && p->limit < 0) {
    st = push_into(o, &p->kids[0], c, n);
  } else {
    for (int32_t i = 0; i < n && st == HS_OK; i++) st = conj_add(o, &keep, c[i]);
  }
  if (st != HS_OK) return st;
  if (keep.n > 0) {
    hs_sql_expr *pred = and_of(o, keep.v, keep.n);
    hs_sql_plan *f = pred != NULL ? filter_over(o, p, pred) : NULL;
    if (f == NULL) return nomem(o);
    *pp = f;
  }
  return HS_OK;
}

/* OR(A AND X, B AND X) -> X AND OR(A, B): conjuncts common to every
 * branch of an OR come out of it (TPC-H Q19's join key), so they can
 * become join keys and scan filters. A branch left with nothing makes the
 * OR true (only X remains). */
static hs_status factor_or(opt *o, hs_sql_expr **ep) {
  hs_sql_expr *e = *ep;
  if (e == NULL) return HS_OK;
  if (e->kind == HS_SX_AND) {
    for (int32_t i = 0; i < e->n_args; i++) {
      hs_status st = factor_or(o, &e->args[i]);
      if (st != HS_OK) return st;
    }
    return HS_OK;
  }
  if (e->kind != HS_SX_OR || e->n_args < 2) return HS_OK;
  int32_t nb = e->n_args;
  conj *br = hs_arena_alloc(&o->pc->arena, sizeof(conj) * (size_t)nb);
  if (br == NULL) return nomem(o);
  for (int32_t i = 0; i < nb; i++) {
    hs_status st = split_and(o, e->args[i], &br[i]);
    if (st != HS_OK) return st;
  }
  conj common = {0};
  for (int32_t k = 0; k < br[0].n; k++) {
    hs_sql_expr *x = br[0].v[k];
    if (hs_sql_expr_has_volatile(x)) continue;
    bool everywhere = true;
    for (int32_t i = 1; i < nb && everywhere; i++) {
      bool found = false;
      for (int32_t j = 0; j < br[i].n && !found; j++) found = hs_sql_expr_equal(br[i].v[j], x);
      everywhere = found;
    }
    bool dup = false;
    for (int32_t j = 0; j < common.n && !dup; j++) dup = hs_sql_expr_equal(common.v[j], x);
    if (everywhere && !dup) {
      hs_status st = conj_add(o, &common, x);
      if (st != HS_OK) return st;
    }
  }
  if (common.n == 0) return HS_OK;
  /* the branches without the common conjuncts */
  hs_sql_expr **rest = hs_arena_alloc(&o->pc->arena, sizeof(hs_sql_expr *) * (size_t)nb);
  if (rest == NULL) return nomem(o);
  bool always = false;
  for (int32_t i = 0; i < nb; i++) {
    conj left = {0};
    for (int32_t j = 0; j < br[i].n; j++) {
      bool is_common = false;
      for (int32_t k = 0; k < common.n && !is_common; k++)
        is_common = hs_sql_expr_equal(br[i].v[j], common.v[k]);
      if (!is_common && conj_add(o, &left, br[i].v[j]) != HS_OK) return nomem(o);
    }
    if (left.n == 0) always = true;
    rest[i] = left.n > 0 ? and_of(o, left.v, left.n) : NULL;
    if (left.n > 0 && rest[i] == NULL) return nomem(o);
  }
  if (!always) {
    hs_sql_expr *orr = hs_sql_expr_new(&o->pc->arena, HS_SX_OR, e->type, e->pos);
    if (orr == NULL) return nomem(o);
    orr->args = rest;
    orr->n_args = nb;
    if (conj_add(o, &common, orr) != HS_OK) return nomem(o);
  }
  *ep = and_of(o, common.v, common.n);
  return *ep == NULL ? nomem(o) : HS_OK;
}

static hs_status push_filters(opt *o, hs_sql_plan **pp) {
  hs_sql_plan *p = *pp;
  if ((p->kind == HS_SP_FILTER || p->kind == HS_SP_JOIN) && p->pred != NULL) {
    hs_status st = factor_or(o, &p->pred);
    if (st != HS_OK) return st;
  }
  hs_status st;
  for (int i = 0; i < 2; i++)
    if (p->kids[i] != NULL && (st = push_filters(o, &p->kids[i])) != HS_OK) return st;
  for (int32_t i = 0; i < p->n_many; i++)
    if ((st = push_filters(o, &p->many[i])) != HS_OK) return st;
  if (p->kind == HS_SP_FILTER) {
    conj c = {0};
    if ((st = split_and(o, p->pred, &c)) != HS_OK) return st;
    hs_sql_plan *kid = p->kids[0];
    if ((st = push_into(o, &kid, c.v, c.n)) != HS_OK) return st;
    *pp = kid;
  }
  return HS_OK;
}

/* ------------------------------------------------- 2. join keys */

static bool is_eq(const hs_sql_expr *e) {
  return e->kind == HS_SX_FUNC && e->n_args == 2 && e->fn != NULL && strcmp(e->fn->name, "=") == 0;
}

static hs_status join_keys(opt *o, hs_sql_plan *p) {
  hs_status st;
  for (int i = 0; i < 2; i++)
    if (p->kids[i] != NULL && (st = join_keys(o, p->kids[i])) != HS_OK) return st;
  for (int32_t i = 0; i < p->n_many; i++)
    if ((st = join_keys(o, p->many[i])) != HS_OK) return st;
  if (p->kind != HS_SP_JOIN || p->join.method != HS_SJM_NL || p->pred == NULL) return HS_OK;
  int32_t nl = p->kids[0]->n_cols, nr = p->kids[1]->n_cols;
  conj c = {0}, rest = {0}, lk = {0}, rk = {0};
  if ((st = split_and(o, p->pred, &c)) != HS_OK) return st;
  for (int32_t i = 0; i < c.n; i++) {
    hs_sql_expr *e = c.v[i];
    if (is_eq(e) && !hs_sql_expr_has_volatile(e)) {
      hs_sql_expr *a = e->args[0], *b = e->args[1];
      if (cols_within(a, 0, nl) && cols_within(b, nl, nl + nr) && !hs_sql_expr_is_const(a) &&
          !hs_sql_expr_is_const(b)) {
        hs_sql_expr *rb = remap(o, b, NULL, -nl);
        if (rb == NULL || conj_add(o, &lk, a) != HS_OK || conj_add(o, &rk, rb) != HS_OK)
          return nomem(o);
        continue;
      }
      if (cols_within(b, 0, nl) && cols_within(a, nl, nl + nr) && !hs_sql_expr_is_const(a) &&
          !hs_sql_expr_is_const(b)) {
        hs_sql_expr *ra = remap(o, a, NULL, -nl);
        if (ra == NULL || conj_add(o, &lk, b) != HS_OK || conj_add(o, &rk, ra) != HS_OK)
          return nomem(o);
        continue;
      }
    }
    if ((st = conj_add(o, &rest, e)) != HS_OK) return st;
  }
  if (lk.n == 0) return HS_OK;
  p->join.method = HS_SJM_HASH;
  p->join.left_keys = lk.v;
  p->join.right_keys = rk.v;
  p->join.n_keys = lk.n;
  p->pred = rest.n > 0 ? and_of(o, rest.v, rest.n) : NULL;
  return HS_OK;
}

/* -------------------------------------------- 3. filters into scans */

static void put(hs_buf *b, const char *s) {
  hs_buf_append(b, s, strlen(s));
}

static void put_ident(hs_buf *b, const char *name) {
  put(b, "\"");
  for (const char *s = name; *s; s++) {
    if (*s == '"') put(b, "\"");
    hs_buf_append(b, s, 1);
  }
  put(b, "\"");
}

static void put_text_lit(hs_buf *b, const char *s, uint32_t n) {
  put(b, "'");
  for (uint32_t i = 0; i < n; i++) {
    if (s[i] == '\'') put(b, "'");
    hs_buf_append(b, &s[i], 1);
  }
  put(b, "'");
}

/* The scan column a (possibly widened) column reference names, or NULL. */
static const char *scan_col(const hs_sql_plan *scan, const hs_sql_expr *e, hs_sql_type *ct) {
  if (e->kind == HS_SX_CAST && e->n_args == 1) {
    const hs_sql_expr *a = e->args[0];
    /* integer widening and int -> float are value-preserving for compares
     * of int32/int64 columns against their literals */
    if (a->kind == HS_SX_COL && ((a->type.id == HS_SQL_INT32 &&
                                  (e->type.id == HS_SQL_INT64 || e->type.id == HS_SQL_FLOAT64)) ||
                                 (a->type.id == HS_SQL_INT64 && e->type.id == HS_SQL_FLOAT64 && 0)))
      e = a;
    else
      return NULL;
  }
  if (e->kind != HS_SX_COL || e->col < 0 || e->col >= scan->scan.n_columns) return NULL;
  *ct = e->type;
  return scan->scan.columns[e->col];
}

/* Render a constant as a filter-language literal for a column of type
 * ct; false when it cannot be rendered exactly. */
static bool put_const(hs_buf *b, const hs_sql_value *v, hs_sql_type ct) {
  char tmp[96];
  if (v->is_null) return false;
  switch (v->type.id) {
  case HS_SQL_BOOL:
    if (ct.id != HS_SQL_BOOL) return false;
    put(b, v->v.b ? "TRUE" : "FALSE");
    return true;
  case HS_SQL_INT32:
  case HS_SQL_INT64:
    if (!hs_sql_type_is_numeric(ct.id)) return false;
    snprintf(tmp, sizeof tmp, "%lld",
             (long long)(v->type.id == HS_SQL_INT32 ? v->v.i32 : v->v.i64));
    put(b, tmp);
    return true;
  case HS_SQL_FLOAT64:
    if (ct.id != HS_SQL_FLOAT64 || isnan(v->v.f64) || isinf(v->v.f64)) return false;
    if (ct.a == 4) return false; /* float4 columns compare in float8 here; not in the filter */
    snprintf(tmp, sizeof tmp, "%.17g", v->v.f64);
    if (strchr(tmp, 'e') != NULL || strchr(tmp, 'E') != NULL) return false;
    put(b, tmp);
    return true;
  case HS_SQL_NUMERIC: {
    if (ct.id != HS_SQL_NUMERIC) return false;
    hs_sql_i128 d = v->v.dec;
    bool neg = d < 0;
    unsigned __int128 u = neg ? (unsigned __int128)(-(d + 1)) + 1 : (unsigned __int128)d;
    char digits[50];
    int nd = 0;
    do {
      digits[nd++] = (char)('0' + (int)(u % 10));
      u /= 10;
    } while (u > 0 && nd < 45);
    while (nd <= v->type.b) digits[nd++] = '0';
    if (neg) put(b, "-");
    for (int i = nd - 1; i >= 0; i--) {
      hs_buf_append(b, &digits[i], 1);
      if (i == v->type.b && i > 0) put(b, ".");
    }
    return true;
  }
  case HS_SQL_TEXT:
    if (ct.id != HS_SQL_TEXT) return false;
    put_text_lit(b, v->v.s.ptr, v->v.s.len);
    return true;
  case HS_SQL_DATE: {
    if (ct.id != HS_SQL_DATE) return false;
    int64_t y;
    int m, d;
    hs_civil_from_days(v->v.i32, &y, &m, &d);
    if (y < 1 || y > 9999) return false;
    snprintf(tmp, sizeof tmp, "DATE '%04lld-%02d-%02d'", (long long)y, m, d);
    put(b, tmp);
    return true;
  }
  default: return false;
  }
}

static const char *cmp_op(const char *fn) {
  static const char *ops[] = {"=", "<>", "<", "<=", ">", ">="};
  for (size_t i = 0; i < 6; i++)
    if (strcmp(fn, ops[i]) == 0) return ops[i];
  return NULL;
}

static const char *flip(const char *op) {
  if (strcmp(op, "<") == 0) return ">";
  if (strcmp(op, "<=") == 0) return ">=";
  if (strcmp(op, ">") == 0) return "<";
  if (strcmp(op, ">=") == 0) return "<=";
  return op;
}

/* Render e over `scan`'s columns; false (buffer untouched past `mark`)
 * when the filter language cannot express it exactly. */
static bool render(hs_buf *b, const hs_sql_plan *scan, const hs_sql_expr *e, int depth) {
  if (depth > 64) return false;
  hs_sql_type ct;
  switch (e->kind) {
  case HS_SX_AND:
  case HS_SX_OR:
    put(b, "(");
    for (int32_t i = 0; i < e->n_args; i++) {
      if (i) put(b, e->kind == HS_SX_AND ? " AND " : " OR ");
      if (!render(b, scan, e->args[i], depth + 1)) return false;
    }
    put(b, ")");
    return true;
  case HS_SX_NOT:
    put(b, "(NOT ");
    if (!render(b, scan, e->args[0], depth + 1)) return false;
    put(b, ")");
    return true;
  case HS_SX_ISNULL: {
    const char *c = scan_col(scan, e->args[0], &ct);
    if (c == NULL) return false;
    put(b, "(");
    put_ident(b, c);
    put(b, e->negated ? " IS NOT NULL)" : " IS NULL)");
    return true;
  }
  case HS_SX_FUNC: {
    if (e->n_args != 2 || e->fn == NULL) return false;
    const char *op = cmp_op(e->fn->name);
    if (op == NULL) return false;
    const hs_sql_expr *l = e->args[0], *r = e->args[1];
    const char *c = scan_col(scan, l, &ct);
    const hs_sql_expr *k = r;
    if (c == NULL) {
      c = scan_col(scan, r, &ct);
      k = l;
      op = flip(op);
    }
    if (c == NULL || k->kind != HS_SX_CONST) return false;
    put(b, "(");
    put_ident(b, c);
    put(b, " ");
    put(b, op);
    put(b, " ");
    if (!put_const(b, &k->value, ct)) return false;
    put(b, ")");
    return true;
  }
  case HS_SX_IN: {
    const char *c = scan_col(scan, e->args[0], &ct);
    if (c == NULL) return false;
    put(b, "(");
    put_ident(b, c);
    put(b, e->negated ? " NOT IN (" : " IN (");
    for (int32_t i = 1; i < e->n_args; i++) {
      if (e->args[i]->kind != HS_SX_CONST) return false;
      if (i > 1) put(b, ", ");
      if (e->args[i]->value.is_null) {
        put(b, "NULL");
        continue;
      }
      if (!put_const(b, &e->args[i]->value, ct)) return false;
    }
    put(b, "))");
    return true;
  }
  case HS_SX_LIKE: {
    if (e->icase || e->n_args != 2) return false;
    const char *c = scan_col(scan, e->args[0], &ct);
    const hs_sql_expr *pat = e->args[1];
    if (c == NULL || ct.id != HS_SQL_TEXT || pat->kind != HS_SX_CONST || pat->value.is_null)
      return false;
    put(b, "(");
    put_ident(b, c);
    put(b, e->negated ? " NOT LIKE " : " LIKE ");
    put_text_lit(b, pat->value.v.s.ptr, pat->value.v.s.len);
    put(b, ")");
    return true;
  }
  default: return false;
  }
}

static hs_status filters_into_scans(opt *o, hs_sql_plan **pp) {
  hs_sql_plan *p = *pp;
  hs_status st;
  for (int i = 0; i < 2; i++)
    if (p->kids[i] != NULL && (st = filters_into_scans(o, &p->kids[i])) != HS_OK) return st;
  for (int32_t i = 0; i < p->n_many; i++)
    if ((st = filters_into_scans(o, &p->many[i])) != HS_OK) return st;
  if (p->kind != HS_SP_FILTER) return HS_OK;
  hs_sql_plan *scan = p->kids[0];
  if (scan->kind != HS_SP_SCAN || scan->scan.rel == NULL || scan->scan.rel->uri == NULL ||
      scan->scan.limit >= 0)
    return HS_OK;
  conj c = {0}, rest = {0};
  if ((st = split_and(o, p->pred, &c)) != HS_OK) return st;
  hs_buf text;
  hs_buf_init(&text);
  if (scan->scan.filter != NULL) {
    put(&text, "(");
    put(&text, scan->scan.filter);
    put(&text, ")");
  }
  for (int32_t i = 0; i < c.n; i++) {
    hs_buf one;
    hs_buf_init(&one);
    if (render(&one, scan, c.v[i], 0) && one.data != NULL) {
      if (text.len > 0) put(&text, " AND ");
      hs_buf_append(&text, one.data, one.len);
    } else if ((st = conj_add(o, &rest, c.v[i])) != HS_OK) {
      hs_buf_free(&one);
      hs_buf_free(&text);
      return st;
    }
    hs_buf_free(&one);
  }
  if (text.len > 0) {
    char *f = hs_arena_strndup(&o->pc->arena, (const char *)text.data, text.len);
    if (f == NULL) {
      hs_buf_free(&text);
      return nomem(o);
    }
    scan->scan.filter = f;
  }
  hs_buf_free(&text);
  if (rest.n == 0) {
    *pp = scan;
  } else {
    p->pred = and_of(o, rest.v, rest.n);
    if (p->pred == NULL) return nomem(o);
  }
  return HS_OK;
}

/* ------------------------------------------------ 4. column pruning */

static hs_status remap_all(opt *o, hs_sql_expr **v, int32_t n, const int32_t *map) {
  for (int32_t i = 0; i < n; i++)
    if (v[i] != NULL && (v[i] = remap(o, v[i], map, 0)) == NULL) return nomem(o);
  return HS_OK;
}

static hs_status remap_one(opt *o, hs_sql_expr **e, const int32_t *map) {
  if (*e == NULL) return HS_OK;
  *e = remap(o, *e, map, 0);
  return *e == NULL ? nomem(o) : HS_OK;
}

/* Keep the first n scan columns of p that are needed (or named `also`),
 * in order: map[i] is column i's new position or -1; the kept count. */
static int32_t keep_scan_columns(hs_sql_plan *p, int32_t n, const bool *need, const char *also,
                                 int32_t *map) {
  int32_t k = 0;
  for (int32_t i = 0; i < n; i++) {
    if (!need[i] && !(also != NULL && strcmp(p->scan.columns[i], also) == 0)) {
      map[i] = -1;
      continue;
    }
    map[i] = k;
    p->scan.columns[k] = p->scan.columns[i];
    p->types[k] = p->types[i];
    p->names[k] = p->names[i];
    k++;
  }
  return k;
}

/* Keep only the needed output columns of p (need[i] for i < p->n_cols);
 * map[i] receives the new index of old output i (-1: dropped). */
static hs_status prune(opt *o, hs_sql_plan *p, const bool *need, int32_t *map) {
  int32_t n = p->n_cols;
  hs_arena *A = &o->pc->arena;
  hs_status st = HS_OK;
  switch (p->kind) {
  case HS_SP_SCAN:
    p->n_cols = p->scan.n_columns = keep_scan_columns(p, n, need, NULL, map);
    return HS_OK;
  case HS_SP_PROJECT: {
    hs_sql_plan *kid = p->kids[0];
    bool *kneed = hs_arena_alloc(A, sizeof(bool) * (size_t)(kid->n_cols + 1));
    int32_t *kmap = hs_arena_alloc(A, sizeof(int32_t) * (size_t)(kid->n_cols + 1));
    if (kneed == NULL || kmap == NULL) return nomem(o);
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
      if (!need[i]) {
        map[i] = -1;
        continue;
      }
      map[i] = k;
      p->project.exprs[k] = p->project.exprs[i];
      p->types[k] = p->types[i];
      p->names[k] = p->names[i];
      cols_used(p->project.exprs[k], kneed, kid->n_cols);
      k++;
    }
    p->n_cols = k;
    if ((st = prune(o, kid, kneed, kmap)) != HS_OK) return st;
    return remap_all(o, p->project.exprs, k, kmap);
  }
  case HS_SP_FILTER:
  case HS_SP_SORT:
  case HS_SP_LIMIT: {
    hs_sql_plan *kid = p->kids[0];
    bool *kneed = hs_arena_alloc(A, sizeof(bool) * (size_t)(n + 1));
    if (kneed == NULL) return nomem(o);
    memcpy(kneed, need, sizeof(bool) * (size_t)n);
    if (p->kind == HS_SP_FILTER) cols_used(p->pred, kneed, n);
    if (p->kind == HS_SP_SORT)
      for (int32_t i = 0; i < p->sort.n_keys; i++) cols_used(p->sort.keys[i].expr, kneed, n);
    if ((st = prune(o, kid, kneed, map)) != HS_OK) return st;
    if (p->kind == HS_SP_FILTER && (st = remap_one(o, &p->pred, map)) != HS_OK) return st;
    if (p->kind == HS_SP_SORT)
      for (int32_t i = 0; i < p->sort.n_keys; i++)
        if ((st = remap_one(o, &p->sort.keys[i].expr, map)) != HS_OK) return st;
    /* outputs are the kid's (columns kept only for this node pass through) */
    for (int32_t i = 0; i < kid->n_cols; i++)
      p->types[i] = kid->types[i], p->names[i] = kid->names[i];
    p->n_cols = kid->n_cols;
    return HS_OK;
  }
  case HS_SP_AGG: {
    hs_sql_plan *kid = p->kids[0];
    bool *kneed = hs_arena_alloc(A, sizeof(bool) * (size_t)(kid->n_cols + 1));
    int32_t *kmap = hs_arena_alloc(A, sizeof(int32_t) * (size_t)(kid->n_cols + 1));
    if (kneed == NULL || kmap == NULL) return nomem(o);
    for (int32_t i = 0; i < p->agg.n_keys; i++) cols_used(p->agg.keys[i], kneed, kid->n_cols);
    for (int32_t i = 0; i < p->agg.n_aggs; i++) {
      for (int32_t k = 0; k < p->agg.aggs[i].n_args; k++)
        cols_used(p->agg.aggs[i].args[k], kneed, kid->n_cols);
      cols_used(p->agg.aggs[i].filter, kneed, kid->n_cols);
    }
    if ((st = prune(o, kid, kneed, kmap)) != HS_OK) return st;
    if ((st = remap_all(o, p->agg.keys, p->agg.n_keys, kmap)) != HS_OK) return st;
    for (int32_t i = 0; i < p->agg.n_aggs; i++) {
      if ((st = remap_all(o, p->agg.aggs[i].args, p->agg.aggs[i].n_args, kmap)) != HS_OK) return st;
      if ((st = remap_one(o, &p->agg.aggs[i].filter, kmap)) != HS_OK) return st;
    }
    for (int32_t i = 0; i < n; i++) map[i] = i;
    return HS_OK;
  }
  case HS_SP_JOIN: {
    hs_sql_plan *l = p->kids[0], *r = p->kids[1];
    int32_t nl = l->n_cols, nr = r->n_cols;
    bool semi = p->join.type == HS_SJ_SEMI || p->join.type == HS_SJ_ANTI ||
                p->join.type == HS_SJ_ANTI_NULLAWARE;
    bool *all = hs_arena_alloc(A, sizeof(bool) * (size_t)(nl + nr + 1));
    int32_t *lmap = hs_arena_alloc(A, sizeof(int32_t) * (size_t)(nl + 1));
    int32_t *rmap = hs_arena_alloc(A, sizeof(int32_t) * (size_t)(nr + 1));
    int32_t *jmap = hs_arena_alloc(A, sizeof(int32_t) * (size_t)(nl + nr + 1));
    if (all == NULL || lmap == NULL || rmap == NULL || jmap == NULL) return nomem(o);
    memcpy(all, need, sizeof(bool) * (size_t)n);
    cols_used(p->pred, all, nl + nr);
    for (int32_t i = 0; i < p->join.n_keys; i++) {
      cols_used(p->join.left_keys[i], all, nl);
      cols_used(p->join.right_keys[i], all + nl, nr);
    }
    if ((st = prune(o, l, all, lmap)) != HS_OK) return st;
    if ((st = prune(o, r, all + nl, rmap)) != HS_OK) return st;
    for (int32_t i = 0; i < nl; i++) jmap[i] = lmap[i];
    for (int32_t i = 0; i < nr; i++) jmap[nl + i] = rmap[i] < 0 ? -1 : l->n_cols + rmap[i];
    if ((st = remap_one(o, &p->pred, jmap)) != HS_OK) return st;
    if ((st = remap_all(o, p->join.left_keys, p->join.n_keys, lmap)) != HS_OK) return st;
    if ((st = remap_all(o, p->join.right_keys, p->join.n_keys, rmap)) != HS_OK) return st;
    int32_t k = 0;
    for (int32_t i = 0; i < l->n_cols; i++)
      p->types[k] = l->types[i], p->names[k] = l->names[i], k++;
    if (!semi)
      for (int32_t i = 0; i < r->n_cols; i++)
        p->types[k] = r->types[i], p->names[k] = r->names[i], k++;
    for (int32_t i = 0; i < n; i++) map[i] = jmap[i];
    p->n_cols = k;
    return HS_OK;
  }
  case HS_SP_WINDOW: {
    hs_sql_plan *kid = p->kids[0];
    int32_t nk = kid->n_cols;
    bool *kneed = hs_arena_alloc(A, sizeof(bool) * (size_t)(nk + 1));
    int32_t *kmap = hs_arena_alloc(A, sizeof(int32_t) * (size_t)(nk + 1));
    if (kneed == NULL || kmap == NULL) return nomem(o);
    memcpy(kneed, need, sizeof(bool) * (size_t)nk);
    for (int32_t i = 0; i < p->window.n_calls; i++) {
      hs_sql_wincall *c = &p->window.calls[i];
      for (int32_t k = 0; k < c->n_partition; k++) cols_used(c->partition[k], kneed, nk);
      for (int32_t k = 0; k < c->n_order; k++) cols_used(c->order[k].expr, kneed, nk);
      for (int32_t k = 0; k < c->agg.n_args; k++) cols_used(c->agg.args[k], kneed, nk);
      cols_used(c->agg.filter, kneed, nk);
    }
    if ((st = prune(o, kid, kneed, kmap)) != HS_OK) return st;
    for (int32_t i = 0; i < p->window.n_calls; i++) {
      hs_sql_wincall *c = &p->window.calls[i];
      if ((st = remap_all(o, c->partition, c->n_partition, kmap)) != HS_OK) return st;
      for (int32_t k = 0; k < c->n_order; k++)
        if ((st = remap_one(o, &c->order[k].expr, kmap)) != HS_OK) return st;
      if ((st = remap_all(o, c->agg.args, c->agg.n_args, kmap)) != HS_OK) return st;
      if ((st = remap_one(o, &c->agg.filter, kmap)) != HS_OK) return st;
    }
    int32_t k = kid->n_cols;
    for (int32_t i = 0; i < nk; i++) {
      map[i] = kmap[i];
      if (kmap[i] >= 0)
        p->types[kmap[i]] = kid->types[kmap[i]], p->names[kmap[i]] = kid->names[kmap[i]];
    }
    for (int32_t i = 0; i < p->window.n_calls; i++) {
      map[nk + i] = k;
      p->types[k] = p->types[nk + i];
      p->names[k] = p->names[nk + i];
      k++;
    }
    p->n_cols = k;
    return HS_OK;
  }
  case HS_SP_KNN: {
    /* (the second pass, after optimize_knn) the columns the ancestors read;
     * the vector column also when the distance is read and the search's
     * float32 value is not the operators' (l2, cosine), or always for
     * cosine (its index ranks by the normalized vectors' distance) */
    int32_t nc = p->scan.n_columns;
    bool dist = p->knn.with_distance && need[nc];
    bool cos = strcmp(p->knn.metric, "cosine") == 0;
    bool vec = cos || (dist && !hs_sql_knn_search_distance_exact(p->knn.metric));
    int32_t k = keep_scan_columns(p, nc, need, vec ? p->knn.column : NULL, map);
    p->scan.n_columns = k;
    if (p->knn.with_distance) {
      map[nc] = dist ? k : -1;
      if (dist) p->types[k] = p->types[nc], p->names[k] = p->names[nc], k++;
    }
    p->knn.with_distance = dist;
    p->n_cols = k;
    return HS_OK;
  }
  default: {
    /* UNION, VALUES, SHARED, EXPLAIN: keep every column, prune below */
    for (int32_t i = 0; i < n; i++) map[i] = i;
    for (int32_t m = 0; m < p->n_many; m++) {
      hs_sql_plan *kid = p->many[m];
      bool *kneed = hs_arena_alloc(A, sizeof(bool) * (size_t)(kid->n_cols + 1));
      int32_t *kmap = hs_arena_alloc(A, sizeof(int32_t) * (size_t)(kid->n_cols + 1));
      if (kneed == NULL || kmap == NULL) return nomem(o);
      for (int32_t i = 0; i < kid->n_cols; i++) kneed[i] = true;
      if ((st = prune(o, kid, kneed, kmap)) != HS_OK) return st;
    }
    return HS_OK;
  }
  }
}

/* ------------------------------------------------------ 6. limits */

static void push_limits(hs_sql_plan *p) {
  for (int i = 0; i < 2; i++)
    if (p->kids[i] != NULL) push_limits(p->kids[i]);
  for (int32_t i = 0; i < p->n_many; i++) push_limits(p->many[i]);
  if (p->kind == HS_SP_LIMIT && p->limit >= 0 && p->kids[0]->kind == HS_SP_SCAN &&
      p->kids[0]->scan.rel->uri != NULL && p->limit <= INT64_MAX - p->offset)
    p->kids[0]->scan.limit = p->limit + p->offset;
}

static bool has_knn(const hs_sql_plan *p) {
  if (p == NULL) return false;
  if (p->kind == HS_SP_KNN) return true;
  for (int i = 0; i < 2; i++)
    if (has_knn(p->kids[i])) return true;
  for (int32_t i = 0; i < p->n_many; i++)
    if (has_knn(p->many[i])) return true;
  return false;
}

/* Whether PROJECT p passes its input through unchanged: column i is the
 * input's column i, with its name and type. */
static bool identity_project(const hs_sql_plan *p) {
  const hs_sql_plan *c = p->kids[0];
  if (p->kind != HS_SP_PROJECT || c == NULL || p->n_cols != c->n_cols) return false;
  for (int32_t i = 0; i < p->n_cols; i++) {
    const hs_sql_expr *e = p->project.exprs[i];
    if (e == NULL || e->kind != HS_SX_COL || e->col != i) return false;
    if (!hs_sql_type_eq(p->types[i], c->types[i])) return false;
    if ((p->names[i] == NULL) != (c->names[i] == NULL) ||
        (p->names[i] != NULL && strcmp(p->names[i], c->names[i]) != 0))
      return false;
  }
  return true;
}

/* Identity PROJECTs directly over a KNN (left by the rewrite and the
 * pruning: SELECT id ... ORDER BY emb <-> $1 LIMIT k had two) are dropped,
 * bottom up; each was an operator opened and called per statement. */
static void drop_knn_identity_projects(hs_sql_plan **at) {
  hs_sql_plan *p = *at;
  if (p == NULL) return;
  for (int i = 0; i < 2; i++) drop_knn_identity_projects(&p->kids[i]);
  for (int32_t i = 0; i < p->n_many; i++) drop_knn_identity_projects(&p->many[i]);
  if (p->kids[0] != NULL && p->kids[0]->kind == HS_SP_KNN && identity_project(p)) *at = p->kids[0];
}

hs_status hs_sql_optimize(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err) {
  opt o = {ctx, err};
  hs_status st = fold_plan(&o, *root);
  if (st == HS_OK) st = push_filters(&o, root);
  const char *order = getenv("HS_SQL_JOIN_ORDER");
  if (st == HS_OK && (order == NULL || strcmp(order, "0") != 0))
    st = hs_sql_optimize_join_order(ctx, root, err);
  if (st == HS_OK) st = join_keys(&o, *root);
  if (st == HS_OK && (order == NULL || strcmp(order, "0") != 0))
    st = hs_sql_optimize_semi_down(ctx, root, err);
  const char *aggkeys = getenv("HS_SQL_AGG_KEYS");
  if (st == HS_OK && (aggkeys == NULL || strcmp(aggkeys, "0") != 0))
    st = hs_sql_optimize_agg_keys(ctx, root, err);
  if (st == HS_OK) st = filters_into_scans(&o, root);
  if (st == HS_OK) {
    hs_sql_plan *p = *root;
    bool *need = hs_arena_alloc(&ctx->arena, sizeof(bool) * (size_t)(p->n_cols + 1));
    int32_t *map = hs_arena_alloc(&ctx->arena, sizeof(int32_t) * (size_t)(p->n_cols + 1));
    if (need == NULL || map == NULL) return nomem(&o);
    for (int32_t i = 0; i < p->n_cols; i++) need[i] = true;
    st = prune(&o, p, need, map);
  }
  if (st == HS_OK) st = hs_sql_optimize_knn(ctx, root, err);
  if (st == HS_OK && has_knn(*root)) { /* again: the sort keys are gone */
    hs_sql_plan *p = *root;
    bool *need = hs_arena_alloc(&ctx->arena, sizeof(bool) * (size_t)(p->n_cols + 1));
    int32_t *map = hs_arena_alloc(&ctx->arena, sizeof(int32_t) * (size_t)(p->n_cols + 1));
    if (need == NULL || map == NULL) return nomem(&o);
    for (int32_t i = 0; i < p->n_cols; i++) need[i] = true;
    st = prune(&o, p, need, map);
  }
  if (st == HS_OK && has_knn(*root)) drop_knn_identity_projects(root);
  if (st == HS_OK) st = hs_sql_optimize_join_index(ctx, root, err);
  if (st == HS_OK && (order == NULL || strcmp(order, "0") != 0))
    st = hs_sql_optimize_semi_sides(ctx, root, err);
  if (st == HS_OK) push_limits(*root);
  return st;
}
