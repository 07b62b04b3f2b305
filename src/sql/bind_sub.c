/*
 * bind_sub.c — subqueries that become joins (decorrelation).
 *
 * A WHERE conjunct `[NOT] EXISTS (SELECT ... FROM X WHERE ...)` or
 * `x [NOT] IN (SELECT y FROM X WHERE ...)` becomes a semi (anti) join of
 * the query's FROM plan with X:
 *  - uncorrelated: X is the whole subquery; IN joins on x = y (NOT IN is
 *    the null-aware anti join: no row when the subquery has a NULL);
 *  - correlated (its WHERE names the enclosing query's columns, and the
 *    subquery has no GROUP BY, aggregates, DISTINCT or LIMIT): X is the
 *    subquery's FROM with its local conjuncts as a filter, and the
 *    correlated conjuncts (any predicate over both sides) become the join
 *    condition, with x = y for IN.
 * A correlated scalar subquery in WHERE — `(SELECT agg(...) FROM X WHERE
 * X.a = outer.b AND ...)` — is computed once per correlation key: the
 * subquery is re-bound grouped by the inner sides of its correlated
 * equalities, left-joined to the FROM plan on them, and the expression
 * refers to the joined value (count(...) of no rows is 0, as PostgreSQL
 * gives for an empty correlated subquery).
 */
#include <string.h>

#include "bind_internal.h"

bool hs_sql_bind_err_is_unknown_name(const hs_sql_binder *b) {
  const char *m = b->err->message;
  return b->err->status == HS_ERR_INVALID_ARG &&
         (strstr(m, "does not exist") != NULL || strstr(m, "missing FROM-clause") != NULL) &&
         strstr(m, "relation") == NULL && strstr(m, "function") == NULL &&
         strstr(m, "operator") == NULL;
}

/* Does e reference a column below `n_outer` (the enclosing query's)? */
static bool refs_below(const hs_sql_expr *e, int32_t n_outer) {
  if (e->kind == HS_SX_COL) return e->col < n_outer;
  for (int32_t i = 0; i < e->n_args; i++)
    if (refs_below(e->args[i], n_outer)) return true;
  return false;
}

static bool refs_at_or_above(const hs_sql_expr *e, int32_t n_outer) {
  if (e->kind == HS_SX_COL) return e->col >= n_outer;
  for (int32_t i = 0; i < e->n_args; i++)
    if (refs_at_or_above(e->args[i], n_outer)) return true;
  return false;
}

/* A copy of e with every column shifted by `d`. */
static hs_sql_expr *shift(hs_sql_binder *b, const hs_sql_expr *e, int32_t d) {
  hs_sql_expr *c = hs_arena_memdup(b->A, e, sizeof(*e));
  if (c == NULL) return NULL;
  if (e->kind == HS_SX_COL) c->col = e->col + d;
  if (e->n_args > 0) {
    c->args = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (size_t)e->n_args);
    if (c->args == NULL) return NULL;
    for (int32_t i = 0; i < e->n_args; i++)
      if ((c->args[i] = shift(b, e->args[i], d)) == NULL) return NULL;
  }
  return c;
}

static json_t *sublink_of(json_t *conj, bool *negated) {
  json_t *body;
  const char *t = hs_sql_json_type(conj, &body);
  *negated = false;
  if (t != NULL && strcmp(t, "BoolExpr") == 0) {
    const char *op = json_string_value(json_object_get(body, "boolop"));
    json_t *args = json_object_get(body, "args");
    if (op == NULL || strcmp(op, "NOT_EXPR") != 0 || json_array_size(args) != 1) return NULL;
    t = hs_sql_json_type(json_array_get(args, 0), &body);
    *negated = true;
  }
  if (t == NULL || strcmp(t, "SubLink") != 0) return NULL;
  const char *k = json_string_value(json_object_get(body, "subLinkType"));
  if (k == NULL) return NULL;
  if (strcmp(k, "EXISTS_SUBLINK") == 0) return body;
  if (strcmp(k, "ANY_SUBLINK") == 0) {
    const char *op = hs_sql_json_last_name(json_object_get(body, "operName"));
    if (op == NULL || strcmp(op, "=") == 0) return body;
  }
  return NULL;
}

static bool simple_for_correlation(json_t *sel) {
  return json_array_size(json_object_get(sel, "groupClause")) == 0 &&
         json_object_get(sel, "havingClause") == NULL &&
         json_object_get(sel, "distinctClause") == NULL &&
         json_object_get(sel, "limitCount") == NULL &&
         json_object_get(sel, "limitOffset") == NULL &&
         json_object_get(sel, "withClause") == NULL &&
         json_object_get(sel, "valuesLists") == NULL &&
         (json_object_get(sel, "op") == NULL ||
          strcmp(json_string_value(json_object_get(sel, "op")), "SETOP_NONE") == 0) &&
         !hs_sql_json_has_agg(json_object_get(sel, "targetList"));
}

hs_status hs_sql_bind_semi(hs_sql_binder *b, json_t *conj, hs_sql_plan **plan, hs_sql_scope *sc,
                           bool *done) {
  *done = false;
  bool negated;
  json_t *body = sublink_of(conj, &negated);
  if (body == NULL) return HS_OK;
  bool in = strcmp(json_string_value(json_object_get(body, "subLinkType")), "ANY_SUBLINK") == 0;
  int32_t pos = hs_sql_json_pos(body);
  json_t *sub = json_object_get(body, "subselect");
  json_t *sel = json_object_get(sub, "SelectStmt");
  int32_t n_outer = (*plan)->n_cols;
  hs_status st;
  hs_sql_expr *pred = NULL;
  hs_sql_plan *right = NULL;
  hs_sql_join_type type = negated ? HS_SJ_ANTI : HS_SJ_SEMI;

  /* uncorrelated: the whole subquery */
  hs_error saved = *b->err;
  int32_t saved_pos = b->err_pos != NULL ? *b->err_pos : 0;
  st = hs_sql_bind_query(b, sub, &right);
  if (st == HS_OK) {
    if (in) {
      if (right->n_cols != 1)
        return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "subquery has too many columns");
      hs_sql_ectx oec = {.sc = sc};
      hs_sql_expr *x = NULL;
      if ((st = hs_sql_bind_expr(b, &oec, json_object_get(body, "testexpr"), &x)) != HS_OK)
        return st;
      hs_sql_expr *y = hs_sql_expr_new(b->A, HS_SX_COL, right->types[0], pos);
      if (y == NULL) return hs_sql_bind_nomem(b);
      y->col = n_outer;
      if ((st = hs_sql_bind_binop(b, "=", x, false, y, false, pos, &pred)) != HS_OK) return st;
      if (negated) type = HS_SJ_ANTI_NULLAWARE;
    }
  } else {
    if (!hs_sql_bind_err_is_unknown_name(b) || sel == NULL) return st;
    *b->err = saved;
    if (b->err_pos != NULL) *b->err_pos = saved_pos;
    if (!simple_for_correlation(sel))
      return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos,
                              "correlated subqueries with GROUP BY, aggregates, DISTINCT, LIMIT or "
                              "WITH are not supported yet");
    hs_sql_scope ssub;
    if ((st = hs_sql_bind_from(b, json_object_get(sel, "fromClause"), &right, &ssub)) != HS_OK)
      return st;
    hs_sql_ectx cec = {.sc = &ssub, .outer = sc, .inner_base = n_outer};
    json_t **conj2 = NULL;
    int32_t n2 = 0, cap2 = 0;
    json_t *where = json_object_get(sel, "whereClause");
    if (where != NULL && (st = hs_sql_json_conjuncts(b, where, &conj2, &n2, &cap2)) != HS_OK)
      return st;
    hs_sql_expr *local = NULL;
    for (int32_t i = 0; i < n2; i++) {
      hs_sql_expr *e = NULL;
      if ((st = hs_sql_bind_bool(b, &cec, conj2[i], "WHERE", &e)) != HS_OK) return st;
      if (refs_below(e, n_outer)) {
        if ((st = hs_sql_bind_and(b, pred, e, &pred)) != HS_OK) return st;
      } else {
        hs_sql_expr *l = shift(b, e, -n_outer);
        if (l == NULL) return hs_sql_bind_nomem(b);
        if ((st = hs_sql_bind_and(b, local, l, &local)) != HS_OK) return st;
      }
    }
    if (local != NULL) {
      hs_sql_plan *f = hs_sql_bind_plan(b, HS_SP_FILTER, right->n_cols);
      if (f == NULL) return HS_ERR_NOMEM;
      f->kids[0] = right;
      f->pred = local;
      for (int32_t i = 0; i < right->n_cols; i++)
        f->types[i] = right->types[i], f->names[i] = right->names[i];
      right = f;
    }
    if (in) {
      json_t *tl = json_object_get(sel, "targetList");
      if (json_array_size(tl) != 1)
        return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "subquery has too many columns");
      json_t *val = json_object_get(json_object_get(json_array_get(tl, 0), "ResTarget"), "val");
      hs_sql_ectx oec = {.sc = sc};
      hs_sql_expr *x = NULL, *y = NULL, *eq = NULL;
      if ((st = hs_sql_bind_expr(b, &oec, json_object_get(body, "testexpr"), &x)) != HS_OK ||
          (st = hs_sql_bind_expr(b, &cec, val, &y)) != HS_OK)
        return st;
      if ((st = hs_sql_bind_binop(b, "=", x, false, y, false, pos, &eq)) != HS_OK) return st;
      if (negated) {
        /* Correlated NOT IN: the row goes when a right row of its subset
         * equals x or might (x or that row's value NULL): an anti join on
         * corr AND (x = y OR y IS NULL OR x IS NULL), each bound anew. */
        hs_sql_expr *x2 = NULL, *y2 = NULL, *xn = NULL, *yn = NULL, *any = NULL;
        if ((st = hs_sql_bind_expr(b, &oec, json_object_get(body, "testexpr"), &x2)) != HS_OK ||
            (st = hs_sql_bind_expr(b, &cec, val, &y2)) != HS_OK ||
            (st = hs_sql_bind_bool_node(b, HS_SX_ISNULL, &x2, 1, pos, &xn)) != HS_OK ||
            (st = hs_sql_bind_bool_node(b, HS_SX_ISNULL, &y2, 1, pos, &yn)) != HS_OK)
          return st;
        hs_sql_expr *alts[3] = {eq, yn, xn};
        if ((st = hs_sql_bind_bool_node(b, HS_SX_OR, alts, 3, pos, &any)) != HS_OK) return st;
        eq = any;
      }
      if ((st = hs_sql_bind_and(b, pred, eq, &pred)) != HS_OK) return st;
    }
  }
  hs_sql_plan *j = hs_sql_bind_join_node(b, *plan, right, type);
  if (j == NULL) return HS_ERR_NOMEM;
  j->pos = pos;
  j->pred = pred;
  *plan = j;
  *done = true;
  return HS_OK;
}

/* -------------------------------------------------- scalar subqueries */

static json_t *wrap(const char *type, json_t *body) {
  json_t *o = json_object();
  if (o == NULL || json_object_set_new(o, type, body) != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static bool is_count(json_t *val) {
  json_t *body;
  const char *t = hs_sql_json_type(val, &body);
  if (t == NULL || strcmp(t, "FuncCall") != 0) return false;
  const char *nm = hs_sql_json_last_name(json_object_get(body, "funcname"));
  return nm != NULL && strcmp(nm, "count") == 0;
}

hs_status hs_sql_bind_scalar_correlated(hs_sql_binder *b, hs_sql_ectx *ec, json_t *sublink,
                                        hs_sql_expr **out) {
  int32_t pos = hs_sql_json_pos(sublink);
  json_t *sel = json_object_get(json_object_get(sublink, "subselect"), "SelectStmt");
  json_t *tl = sel != NULL ? json_object_get(sel, "targetList") : NULL;
  if (sel == NULL || json_array_size(tl) != 1)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "subquery must return only one column");
  json_t *target = json_object_get(json_object_get(json_array_get(tl, 0), "ResTarget"), "val");
  if (json_array_size(json_object_get(sel, "groupClause")) > 0 ||
      json_object_get(sel, "havingClause") != NULL || json_object_get(sel, "limitCount") != NULL ||
      json_object_get(sel, "withClause") != NULL ||
      json_object_get(sel, "distinctClause") != NULL || !hs_sql_json_has_agg(target))
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos,
                            "correlated scalar subqueries are supported as one aggregate over "
                            "FROM ... WHERE (no GROUP BY, HAVING, LIMIT or WITH)");
  hs_sql_scope *osc = ec->decor->sc;
  int32_t n_outer = osc->n;
  /* classify the subquery's conjuncts over its FROM scope */
  hs_sql_plan *from_plan = NULL;
  hs_sql_scope ssub;
  hs_status st = hs_sql_bind_from(b, json_object_get(sel, "fromClause"), &from_plan, &ssub);
  if (st != HS_OK) return st;
  hs_sql_ectx cec = {.sc = &ssub, .outer = osc, .inner_base = n_outer};
  json_t **conj = NULL;
  int32_t n_conj = 0, cap = 0;
  json_t *where = json_object_get(sel, "whereClause");
  if (where != NULL && (st = hs_sql_json_conjuncts(b, where, &conj, &n_conj, &cap)) != HS_OK)
    return st;
  json_t *local = json_array(), *inner = json_array(), *outer = json_array();
  if (local == NULL || inner == NULL || outer == NULL) {
    json_decref(local), json_decref(inner), json_decref(outer);
    return hs_sql_bind_nomem(b);
  }
  for (int32_t i = 0; i < n_conj && st == HS_OK; i++) {
    hs_sql_expr *e = NULL;
    if ((st = hs_sql_bind_bool(b, &cec, conj[i], "WHERE", &e)) != HS_OK) break;
    if (!refs_below(e, n_outer)) {
      json_array_append(local, conj[i]);
      continue;
    }
    /* inner = outer equalities only */
    json_t *ab;
    const char *at = hs_sql_json_type(conj[i], &ab);
    const char *op = at != NULL && strcmp(at, "A_Expr") == 0
                         ? hs_sql_json_last_name(json_object_get(ab, "name"))
                         : NULL;
    const char *kind = at != NULL ? json_string_value(json_object_get(ab, "kind")) : NULL;
    bool ok = op != NULL && strcmp(op, "=") == 0 && kind != NULL && strcmp(kind, "AEXPR_OP") == 0 &&
              e->kind == HS_SX_FUNC && e->n_args == 2;
    if (ok) {
      hs_sql_expr *l = e->args[0], *r = e->args[1];
      bool l_in = !refs_below(l, n_outer) && refs_at_or_above(l, n_outer);
      bool r_in = !refs_below(r, n_outer) && refs_at_or_above(r, n_outer);
      bool l_out = !refs_at_or_above(l, n_outer), r_out = !refs_at_or_above(r, n_outer);
      if (l_in && r_out) {
        json_array_append(inner, json_object_get(ab, "lexpr"));
        json_array_append(outer, json_object_get(ab, "rexpr"));
      } else if (r_in && l_out) {
        json_array_append(inner, json_object_get(ab, "rexpr"));
        json_array_append(outer, json_object_get(ab, "lexpr"));
      } else {
        ok = false;
      }
    }
    if (!ok)
      st = hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, hs_sql_json_pos(ab),
                            "a correlated scalar subquery may refer to the outer query only in "
                            "equalities inner = outer");
  }
  if (st != HS_OK) {
    json_decref(local), json_decref(inner), json_decref(outer);
    return st;
  }
  /* the grouped subquery: SELECT target, inner... FROM ... WHERE local GROUP BY inner... */
  json_t *s2 = json_deep_copy(sel);
  json_t *targets = json_array();
  json_t *t0 = json_deep_copy(json_array_get(tl, 0));
  if (s2 == NULL || targets == NULL || t0 == NULL) {
    json_decref(s2), json_decref(targets), json_decref(t0);
    json_decref(local), json_decref(inner), json_decref(outer);
    return hs_sql_bind_nomem(b);
  }
  json_array_append_new(targets, t0);
  size_t nk = json_array_size(inner);
  for (size_t i = 0; i < nk; i++) {
    json_t *rt = json_object();
    json_object_set_new(rt, "val", json_deep_copy(json_array_get(inner, i)));
    json_array_append_new(targets, wrap("ResTarget", rt));
  }
  json_object_set_new(s2, "targetList", targets);
  json_t *group = json_array();
  for (size_t i = 0; i < nk; i++)
    json_array_append_new(group, json_deep_copy(json_array_get(inner, i)));
  json_object_set_new(s2, "groupClause", group);
  size_t nl = json_array_size(local);
  if (nl == 0) {
    json_object_del(s2, "whereClause");
  } else if (nl == 1) {
    json_object_set_new(s2, "whereClause", json_deep_copy(json_array_get(local, 0)));
  } else {
    json_t *be = json_object();
    json_object_set_new(be, "boolop", json_string("AND_EXPR"));
    json_object_set_new(be, "args", json_deep_copy(local));
    json_object_set_new(s2, "whereClause", wrap("BoolExpr", be));
  }
  json_decref(local), json_decref(inner);
  if ((st = hs_sql_bind_keep(b, s2)) != HS_OK) {
    json_decref(outer);
    return st;
  }
  hs_sql_plan *right = NULL;
  if ((st = hs_sql_bind_select(b, s2, &right)) != HS_OK) {
    json_decref(outer);
    return st;
  }
  /* left join on outer_i = right.k_i */
  hs_sql_ectx oec = {.sc = osc};
  hs_sql_expr *pred = NULL;
  for (size_t i = 0; i < nk && st == HS_OK; i++) {
    hs_sql_expr *o = NULL, *eq = NULL;
    if ((st = hs_sql_bind_expr(b, &oec, json_array_get(outer, i), &o)) != HS_OK) break;
    hs_sql_expr *k = hs_sql_expr_new(b->A, HS_SX_COL, right->types[1 + i], pos);
    if (k == NULL) {
      st = hs_sql_bind_nomem(b);
      break;
    }
    k->col = n_outer + 1 + (int32_t)i;
    if ((st = hs_sql_bind_binop(b, "=", o, false, k, false, pos, &eq)) == HS_OK)
      st = hs_sql_bind_and(b, pred, eq, &pred);
  }
  json_decref(outer);
  if (st != HS_OK) return st;
  hs_sql_plan *j = hs_sql_bind_join_node(b, *ec->decor->plan, right, HS_SJ_LEFT);
  if (j == NULL) return HS_ERR_NOMEM;
  j->pos = pos;
  j->pred = pred;
  *ec->decor->plan = j;
  for (int32_t i = 0; i < right->n_cols; i++) {
    if ((st = hs_sql_scope_add(b, osc, NULL, "?subquery?", right->types[i])) != HS_OK) return st;
    osc->cols[osc->n - 1].hidden = true;
  }
  hs_sql_expr *v = hs_sql_expr_new(b->A, HS_SX_COL, right->types[0], pos);
  if (v == NULL) return hs_sql_bind_nomem(b);
  v->col = n_outer;
  if (is_count(target)) {
    /* count over no rows is 0, not NULL */
    hs_sql_expr *zero = hs_sql_expr_new(b->A, HS_SX_CONST, right->types[0], pos);
    hs_sql_expr *co = hs_sql_expr_new(b->A, HS_SX_COALESCE, right->types[0], pos);
    hs_sql_expr **args = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * 2);
    if (zero == NULL || co == NULL || args == NULL) return hs_sql_bind_nomem(b);
    zero->value.type = right->types[0];
    args[0] = v, args[1] = zero;
    co->args = args;
    co->n_args = 2;
    v = co;
  }
  *out = v;
  return HS_OK;
}
