/*
 * bind.c — statements: libpg_query's JSON parse tree to plans (bind.h).
 *
 * A SELECT binds in PostgreSQL's order of evaluation: FROM (scans, joins,
 * subqueries, CTEs inlined per reference) -> WHERE (FILTER) -> GROUP BY
 * and aggregates (AGG) -> HAVING (FILTER) -> window functions (WINDOW) ->
 * the select list (PROJECT, with hidden columns for ORDER BY expressions
 * that are not in it) -> DISTINCT (AGG without aggregates) -> ORDER BY
 * (SORT) -> LIMIT/OFFSET -> a last PROJECT dropping hidden columns.
 *
 * Expressions of the select list, HAVING and ORDER BY of a grouped query
 * bind in "aggregate mode": an aggregate call becomes a reference to an
 * AGG output column, a subexpression equal to a GROUP BY key becomes a
 * reference to that key, and any other column reference is an error, as
 * in PostgreSQL. Window calls become references to WINDOW output columns,
 * fixed up once the number of aggregates is known.
 *
 * Uncorrelated subqueries (scalar, EXISTS, IN) are run while binding and
 * replaced by their values. Correlated subqueries are refused for now.
 *
 * Expression-level details live in bind_expr.c; this file does
 * statements, FROM and the clause pipeline.
 */
#include <jansson.h>
#include <pg_query.h>
#include <stdio.h>
#include <string.h>

#include "../query/expr.h"
#include "bind_internal.h"

/* ------------------------------------------------------------- errors */

hs_status hs_sql_bind_fail(hs_sql_binder *b, hs_status st, int32_t pos, const char *fmt, ...) {
  if (b->err->status != HS_OK) return b->err->status;
  char msg[HS_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (b->err_pos != NULL && *b->err_pos == 0) *b->err_pos = pos;
  if (pos > 0) return hs_error_set(b->err, st, "at position %d: %s", pos, msg);
  return hs_error_set(b->err, st, "%s", msg);
}

hs_status hs_sql_bind_nomem(hs_sql_binder *b) {
  return hs_sql_bind_fail(b, HS_ERR_NOMEM, 0, "out of memory while planning");
}

/* -------------------------------------------------------- json access */

const char *hs_sql_json_type(json_t *n, json_t **body) {
  if (!json_is_object(n) || json_object_size(n) != 1) return NULL;
  const char *key;
  json_t *val;
  json_object_foreach(n, key, val) {
    if (body != NULL) *body = val;
    return key;
  }
  return NULL;
}

int32_t hs_sql_json_pos(json_t *body) {
  json_t *loc = json_object_get(body, "location");
  if (!json_is_integer(loc)) return 0;
  json_int_t l = json_integer_value(loc);
  return l >= 0 && l < INT32_MAX ? (int32_t)l + 1 : 0;
}

const char *hs_sql_json_str(json_t *n) {
  json_t *b;
  const char *t = hs_sql_json_type(n, &b);
  if (t == NULL || strcmp(t, "String") != 0) return NULL;
  return json_string_value(json_object_get(b, "sval"));
}

/* The last element of a qualified name list (["pg_catalog", "int4"]). */
const char *hs_sql_json_last_name(json_t *list) {
  size_t n = json_array_size(list);
  return n ? hs_sql_json_str(json_array_get(list, n - 1)) : NULL;
}

/* -------------------------------------------------------------- scopes */

hs_status hs_sql_scope_add(hs_sql_binder *b, hs_sql_scope *s, const char *qual, const char *name,
                           hs_sql_type type) {
  if (s->n == s->cap) {
    int32_t nc = s->cap ? s->cap * 2 : 16;
    hs_sql_scol *g = hs_arena_alloc(b->A, sizeof(*g) * (size_t)nc);
    if (g == NULL) return hs_sql_bind_nomem(b);
    if (s->n) memcpy(g, s->cols, sizeof(*g) * (size_t)s->n);
    s->cols = g, s->cap = nc;
  }
  hs_sql_scol *c = &s->cols[s->n++];
  memset(c, 0, sizeof(*c));
  c->qual = qual;
  c->name = name;
  c->type = type;
  return HS_OK;
}

/* A scope of a plan's output columns, all qualified by `qual`. */
static hs_status scope_of_plan(hs_sql_binder *b, const hs_sql_plan *p, const char *qual,
                               hs_sql_scope *out) {
  memset(out, 0, sizeof(*out));
  for (int32_t i = 0; i < p->n_cols; i++) {
    hs_status st = hs_sql_scope_add(b, out, qual, p->names[i], p->types[i]);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

hs_sql_plan *hs_sql_bind_plan(hs_sql_binder *b, hs_sql_plan_kind kind, int32_t n_cols) {
  hs_sql_plan *p = hs_sql_plan_new(b->pc, kind, n_cols);
  if (p == NULL) hs_sql_bind_nomem(b);
  return p;
}

hs_sql_plan *hs_sql_plan_new(hs_sql_plan_ctx *ctx, hs_sql_plan_kind kind, int32_t n_cols) {
  hs_sql_plan *p = hs_arena_alloc(&ctx->arena, sizeof(*p));
  if (p == NULL) return NULL;
  p->kind = kind;
  p->n_cols = n_cols;
  p->est_rows = -1;
  p->limit = -1;
  p->scan.snapshot_id = -1;
  p->scan.limit = -1;
  if (n_cols > 0) {
    p->types = hs_arena_alloc(&ctx->arena, sizeof(*p->types) * (size_t)n_cols);
    p->names = hs_arena_alloc(&ctx->arena, sizeof(*p->names) * (size_t)n_cols);
    if (p->types == NULL || p->names == NULL) return NULL;
  }
  return p;
}

/* ---------------------------------------------------------------- FROM */

static hs_status bind_from_item(hs_sql_binder *b, json_t *item, hs_sql_plan **out,
                                hs_sql_scope *sc);

static const char *alias_of(json_t *body, json_t **colnames) {
  json_t *al = json_object_get(body, "alias");
  if (colnames != NULL) *colnames = al != NULL ? json_object_get(al, "colnames") : NULL;
  return al != NULL ? json_string_value(json_object_get(al, "aliasname")) : NULL;
}

/* Rename the columns of scope `sc` from an alias column list. */
static hs_status apply_colnames(hs_sql_binder *b, json_t *colnames, hs_sql_scope *sc, int32_t pos) {
  size_t n = json_array_size(colnames);
  if (n > (size_t)sc->n)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos,
                            "table has %d columns available but %zu columns specified", sc->n, n);
  for (size_t i = 0; i < n; i++) {
    const char *nm = hs_sql_json_str(json_array_get(colnames, i));
    if (nm != NULL) sc->cols[i].name = nm;
  }
  return HS_OK;
}

static hs_status bind_range_var(hs_sql_binder *b, json_t *body, hs_sql_plan **out,
                                hs_sql_scope *sc) {
  const char *name = json_string_value(json_object_get(body, "relname"));
  int32_t pos = hs_sql_json_pos(body);
  json_t *colnames;
  const char *alias = alias_of(body, &colnames);
  const char *qual = alias != NULL ? alias : name;
  if (name == NULL) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "missing table name");
  /* a CTE in scope: bind its query again here (inlined) */
  for (int32_t i = b->n_ctes; i-- > 0;) {
    if (strcmp(b->ctes[i].name, name) != 0) continue;
    int32_t saved = b->n_ctes;
    b->n_ctes = i; /* a CTE sees only the CTEs before it */
    hs_sql_plan *p = NULL;
    hs_status st = hs_sql_bind_query(b, b->ctes[i].query, &p);
    b->n_ctes = saved;
    if (st != HS_OK) return st;
    if ((st = scope_of_plan(b, p, qual, sc)) != HS_OK) return st;
    if (b->ctes[i].colnames != NULL &&
        (st = apply_colnames(b, b->ctes[i].colnames, sc, pos)) != HS_OK)
      return st;
    if (colnames != NULL && (st = apply_colnames(b, colnames, sc, pos)) != HS_OK) return st;
    *out = p;
    return HS_OK;
  }
  hs_sql_rel *rel = NULL;
  hs_error lerr = {0};
  hs_status st = b->o->lookup(b->o->lookup_ud, name, b->pc, &rel, &lerr);
  if (st != HS_OK) return hs_sql_bind_fail(b, st, pos, "%s", lerr.message);
  hs_sql_plan *p = hs_sql_bind_plan(b, HS_SP_SCAN, rel->n_cols);
  if (p == NULL) return HS_ERR_NOMEM;
  p->pos = pos;
  p->scan.rel = rel;
  p->scan.columns = hs_arena_alloc(b->A, sizeof(char *) * (size_t)(rel->n_cols + 1));
  if (p->scan.columns == NULL) return hs_sql_bind_nomem(b);
  p->scan.n_columns = rel->n_cols;
  memset(sc, 0, sizeof(*sc));
  for (int32_t i = 0; i < rel->n_cols; i++) {
    p->types[i] = rel->types[i];
    p->names[i] = rel->col_names[i];
    p->scan.columns[i] = rel->col_names[i];
    if ((st = hs_sql_scope_add(b, sc, qual, rel->col_names[i], rel->types[i])) != HS_OK) return st;
    sc->cols[sc->n - 1].hidden = i >= rel->n_cols - rel->n_hidden;
  }
  if (colnames != NULL && (st = apply_colnames(b, colnames, sc, pos)) != HS_OK) return st;
  *out = p;
  return HS_OK;
}

/* Join two inputs: output = left columns then right columns. */
hs_sql_plan *hs_sql_bind_join_node(hs_sql_binder *b, hs_sql_plan *l, hs_sql_plan *r,
                                   hs_sql_join_type type) {
  bool semi = type == HS_SJ_SEMI || type == HS_SJ_ANTI || type == HS_SJ_ANTI_NULLAWARE;
  hs_sql_plan *j = hs_sql_bind_plan(b, HS_SP_JOIN, semi ? l->n_cols : l->n_cols + r->n_cols);
  if (j == NULL) return NULL;
  j->kids[0] = l, j->kids[1] = r;
  j->join.type = type;
  j->join.method = HS_SJM_NL;
  for (int32_t i = 0; i < l->n_cols; i++) j->types[i] = l->types[i], j->names[i] = l->names[i];
  if (!semi)
    for (int32_t i = 0; i < r->n_cols; i++)
      j->types[l->n_cols + i] = r->types[i], j->names[l->n_cols + i] = r->names[i];
  return j;
}

static hs_status scope_concat(hs_sql_binder *b, const hs_sql_scope *l, const hs_sql_scope *r,
                              hs_sql_scope *out) {
  memset(out, 0, sizeof(*out));
  for (int32_t i = 0; i < l->n; i++) {
    hs_status st = hs_sql_scope_add(b, out, l->cols[i].qual, l->cols[i].name, l->cols[i].type);
    if (st != HS_OK) return st;
    out->cols[out->n - 1].hidden = l->cols[i].hidden;
  }
  for (int32_t i = 0; i < r->n; i++) {
    hs_status st = hs_sql_scope_add(b, out, r->cols[i].qual, r->cols[i].name, r->cols[i].type);
    if (st != HS_OK) return st;
    out->cols[out->n - 1].hidden = r->cols[i].hidden;
  }
  return HS_OK;
}

static hs_status bind_join_expr(hs_sql_binder *b, json_t *body, hs_sql_plan **out,
                                hs_sql_scope *sc) {
  const char *jt = json_string_value(json_object_get(body, "jointype"));
  int32_t pos = hs_sql_json_pos(body);
  hs_sql_join_type type;
  if (jt == NULL || strcmp(jt, "JOIN_INNER") == 0)
    type = HS_SJ_INNER;
  else if (strcmp(jt, "JOIN_LEFT") == 0)
    type = HS_SJ_LEFT;
  else if (strcmp(jt, "JOIN_RIGHT") == 0)
    type = HS_SJ_RIGHT;
  else if (strcmp(jt, "JOIN_FULL") == 0)
    type = HS_SJ_FULL;
  else
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos, "join type %s is not supported", jt);
  hs_sql_plan *l = NULL, *r = NULL;
  hs_sql_scope ls, rs;
  hs_status st = bind_from_item(b, json_object_get(body, "larg"), &l, &ls);
  if (st == HS_OK) st = bind_from_item(b, json_object_get(body, "rarg"), &r, &rs);
  if (st != HS_OK) return st;
  hs_sql_plan *j = hs_sql_bind_join_node(b, l, r, type);
  if (j == NULL) return HS_ERR_NOMEM;
  j->pos = pos;
  if ((st = scope_concat(b, &ls, &rs, sc)) != HS_OK) return st;
  json_t *using_ = json_object_get(body, "usingClause");
  bool natural = json_is_true(json_object_get(body, "isNatural"));
  json_t *quals = json_object_get(body, "quals");
  if (using_ != NULL || natural) {
    /* USING (a, b): l.a = r.a AND ...; the right copies are hidden from * */
    hs_sql_expr *pred = NULL;
    size_t n_using = natural ? (size_t)rs.n : json_array_size(using_);
    for (size_t u = 0; u < n_using; u++) {
      /* NATURAL: the columns both sides show (not hidden ones: USING
       * copies, a v3 table's row lineage) */
      if (natural && rs.cols[u].hidden) continue;
      const char *nm = natural ? rs.cols[u].name : hs_sql_json_str(json_array_get(using_, u));
      int32_t li = -1, ri = -1;
      for (int32_t i = 0; i < ls.n; i++)
        if (strcmp(ls.cols[i].name, nm) == 0 && !(natural && ls.cols[i].hidden)) li = i;
      for (int32_t i = 0; i < rs.n; i++)
        if (strcmp(rs.cols[i].name, nm) == 0) ri = i;
      if (natural && li < 0) continue;
      if (li < 0 || ri < 0)
        return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos,
                                "column \"%s\" specified in USING clause does not exist in %s "
                                "table",
                                nm, li < 0 ? "left" : "right");
      hs_sql_expr *le = hs_sql_expr_new(b->A, HS_SX_COL, ls.cols[li].type, pos);
      hs_sql_expr *re = hs_sql_expr_new(b->A, HS_SX_COL, rs.cols[ri].type, pos);
      if (le == NULL || re == NULL) return hs_sql_bind_nomem(b);
      le->col = li;
      re->col = ls.n + ri;
      hs_sql_expr *eq = NULL;
      if ((st = hs_sql_bind_binop(b, "=", le, false, re, false, pos, &eq)) != HS_OK) return st;
      if ((st = hs_sql_bind_and(b, pred, eq, &pred)) != HS_OK) return st;
      sc->cols[ls.n + ri].hidden = true;
      sc->cols[ls.n + ri].using_of = li + 1;
    }
    j->pred = pred;
  } else if (quals != NULL) {
    hs_sql_ectx ec = {.sc = sc};
    hs_sql_expr *pred = NULL;
    if ((st = hs_sql_bind_bool(b, &ec, quals, "JOIN/ON", &pred)) != HS_OK) return st;
    j->pred = pred;
  }
  *out = j;
  return HS_OK;
}

static hs_status bind_range_subselect(hs_sql_binder *b, json_t *body, hs_sql_plan **out,
                                      hs_sql_scope *sc) {
  json_t *colnames;
  const char *alias = alias_of(body, &colnames);
  json_t *q = json_object_get(body, "subquery");
  if (json_is_true(json_object_get(body, "lateral")))
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, hs_sql_json_pos(body),
                            "LATERAL subqueries are not supported");
  hs_sql_plan *p = NULL;
  hs_status st = hs_sql_bind_query(b, q, &p);
  if (st != HS_OK) return st;
  if ((st = scope_of_plan(b, p, alias, sc)) != HS_OK) return st;
  if (colnames != NULL && (st = apply_colnames(b, colnames, sc, 0)) != HS_OK) return st;
  *out = p;
  return HS_OK;
}

static hs_status bind_from_item(hs_sql_binder *b, json_t *item, hs_sql_plan **out,
                                hs_sql_scope *sc) {
  json_t *body;
  const char *t = hs_sql_json_type(item, &body);
  if (t == NULL) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, 0, "malformed FROM item");
  if (strcmp(t, "RangeVar") == 0) return bind_range_var(b, body, out, sc);
  if (strcmp(t, "JoinExpr") == 0) return bind_join_expr(b, body, out, sc);
  if (strcmp(t, "RangeSubselect") == 0) return bind_range_subselect(b, body, out, sc);
  if (strcmp(t, "RangeFunction") == 0) return hs_sql_bind_range_function(b, body, out, sc);
  return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, hs_sql_json_pos(body),
                          "%s in FROM is not supported", t);
}

hs_status hs_sql_bind_from(hs_sql_binder *b, json_t *from, hs_sql_plan **out, hs_sql_scope *sc) {
  size_t n = json_array_size(from);
  if (n == 0) {
    /* SELECT without FROM: one row of no columns */
    hs_sql_plan *p = hs_sql_bind_plan(b, HS_SP_VALUES, 0);
    if (p == NULL) return HS_ERR_NOMEM;
    p->values.n_rows = 1;
    memset(sc, 0, sizeof(*sc));
    *out = p;
    return HS_OK;
  }
  hs_sql_plan *acc = NULL;
  hs_sql_scope acc_sc;
  for (size_t i = 0; i < n; i++) {
    hs_sql_plan *p = NULL;
    hs_sql_scope s;
    hs_status st = bind_from_item(b, json_array_get(from, i), &p, &s);
    if (st != HS_OK) return st;
    if (acc == NULL) {
      acc = p, acc_sc = s;
      continue;
    }
    hs_sql_plan *j = hs_sql_bind_join_node(b, acc, p, HS_SJ_INNER);
    if (j == NULL) return HS_ERR_NOMEM;
    hs_sql_scope js;
    if ((st = scope_concat(b, &acc_sc, &s, &js)) != HS_OK) return st;
    acc = j, acc_sc = js;
  }
  *out = acc;
  *sc = acc_sc;
  return HS_OK;
}

/* ------------------------------------------------------- select clauses */

/* Output name of a select-list item (PostgreSQL's rules, simplified). */
static const char *target_name(json_t *val) {
  json_t *body;
  const char *t = hs_sql_json_type(val, &body);
  if (t == NULL) return "?column?";
  if (strcmp(t, "ColumnRef") == 0) {
    const char *nm = hs_sql_json_last_name(json_object_get(body, "fields"));
    return nm != NULL ? nm : "?column?";
  }
  if (strcmp(t, "FuncCall") == 0) {
    const char *nm = hs_sql_json_last_name(json_object_get(body, "funcname"));
    return nm != NULL ? nm : "?column?";
  }
  if (strcmp(t, "TypeCast") == 0) {
    json_t *arg = json_object_get(body, "arg");
    json_t *ab;
    const char *at = hs_sql_json_type(arg, &ab);
    if (at != NULL && (strcmp(at, "ColumnRef") == 0 || strcmp(at, "FuncCall") == 0))
      return target_name(arg);
    json_t *tn = json_object_get(body, "typeName");
    const char *nm = tn != NULL ? hs_sql_json_last_name(json_object_get(tn, "names")) : NULL;
    if (nm != NULL) {
      if (strcmp(nm, "int4") == 0) return "int4";
      return nm;
    }
    return "?column?";
  }
  if (strcmp(t, "CaseExpr") == 0) return "case";
  if (strcmp(t, "A_Expr") == 0) {
    const char *k = json_string_value(json_object_get(body, "kind"));
    if (k != NULL && strcmp(k, "AEXPR_NULLIF") == 0) return "nullif";
  }
  if (strcmp(t, "CoalesceExpr") == 0) return "coalesce";
  if (strcmp(t, "NullIfExpr") == 0) return "nullif";
  if (strcmp(t, "MinMaxExpr") == 0) {
    const char *op = json_string_value(json_object_get(body, "op"));
    return op != NULL && strcmp(op, "IS_LEAST") == 0 ? "least" : "greatest";
  }
  if (strcmp(t, "SubLink") == 0) {
    const char *k = json_string_value(json_object_get(body, "subLinkType"));
    if (k != NULL && strcmp(k, "EXISTS_SUBLINK") == 0) return "exists";
    if (k != NULL && strcmp(k, "EXPR_SUBLINK") == 0) {
      /* the subquery's own column name */
      json_t *sel = json_object_get(json_object_get(body, "subselect"), "SelectStmt");
      json_t *tl = sel != NULL ? json_object_get(sel, "targetList") : NULL;
      json_t *rt =
          json_array_size(tl) == 1 ? json_object_get(json_array_get(tl, 0), "ResTarget") : NULL;
      if (rt != NULL) {
        const char *nm = json_string_value(json_object_get(rt, "name"));
        return nm != NULL ? nm : target_name(json_object_get(rt, "val"));
      }
    }
  }
  return "?column?";
}

static bool is_star(json_t *val, const char **qual) {
  json_t *body;
  const char *t = hs_sql_json_type(val, &body);
  if (t == NULL || strcmp(t, "ColumnRef") != 0) return false;
  json_t *fields = json_object_get(body, "fields");
  size_t n = json_array_size(fields);
  if (n == 0) return false;
  const char *lt = hs_sql_json_type(json_array_get(fields, n - 1), NULL);
  if (lt == NULL || strcmp(lt, "A_Star") != 0) return false;
  *qual = n >= 2 ? hs_sql_json_str(json_array_get(fields, n - 2)) : NULL;
  return true;
}

/* A growing list of expressions and names. */
typedef struct exprs {
  hs_sql_expr **e;
  const char **names;
  int32_t *pos;
  int32_t n, cap;
} exprs;

static hs_status exprs_add(hs_sql_binder *b, exprs *l, hs_sql_expr *e, const char *name,
                           int32_t pos) {
  if (l->n == l->cap) {
    int32_t nc = l->cap ? l->cap * 2 : 16;
    hs_sql_expr **ge = hs_arena_alloc(b->A, sizeof(*ge) * (size_t)nc);
    const char **gn = hs_arena_alloc(b->A, sizeof(*gn) * (size_t)nc);
    int32_t *gp = hs_arena_alloc(b->A, sizeof(*gp) * (size_t)nc);
    if (ge == NULL || gn == NULL || gp == NULL) return hs_sql_bind_nomem(b);
    if (l->n) {
      memcpy(ge, l->e, sizeof(*ge) * (size_t)l->n);
      memcpy(gn, l->names, sizeof(*gn) * (size_t)l->n);
      memcpy(gp, l->pos, sizeof(*gp) * (size_t)l->n);
    }
    l->e = ge, l->names = gn, l->pos = gp, l->cap = nc;
  }
  l->e[l->n] = e;
  l->names[l->n] = name;
  l->pos[l->n] = pos;
  l->n++;
  return HS_OK;
}

/* Replace window placeholders (COL <= HS_SQL_WIN_PLACEHOLDER) by their
 * final column indices. */
static void fix_window_refs(hs_sql_expr *e, int32_t base) {
  if (e == NULL) return;
  if (e->kind == HS_SX_COL && e->col <= HS_SQL_WIN_PLACEHOLDER)
    e->col = base + (HS_SQL_WIN_PLACEHOLDER - e->col);
  for (int32_t i = 0; i < e->n_args; i++) fix_window_refs(e->args[i], base);
}

static hs_status const_int(hs_sql_binder *b, json_t *node, const char *what, int64_t *out) {
  hs_sql_scope empty = {0};
  hs_sql_ectx ec = {.sc = &empty};
  hs_sql_expr *e = NULL;
  hs_status st = hs_sql_bind_expr(b, &ec, node, &e);
  if (st != HS_OK) return st;
  if (!hs_sql_type_is_int(e->type.id) && e->type.id != HS_SQL_NULLTYPE &&
      e->type.id != HS_SQL_NUMERIC)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, e->pos, "argument of %s must be an integer",
                            what);
  if (e->type.id != HS_SQL_INT64 && e->type.id != HS_SQL_NULLTYPE &&
      (st = hs_sql_expr_cast(b->A, e, hs_sql_type_of(HS_SQL_INT64), &e, b->err)) != HS_OK)
    return st;
  if (hs_sql_expr_has_param(e)) b->pc->no_cache = true; /* its value is baked in */
  hs_sql_value v;
  if ((st = hs_sql_eval_const(e, &b->ectx, b->A, &v, b->err)) != HS_OK) {
    if (b->err_pos != NULL && *b->err_pos == 0) *b->err_pos = e->pos;
    return st;
  }
  if (v.is_null) {
    *out = -1; /* LIMIT NULL: no limit */
    return HS_OK;
  }
  if (v.v.i64 < 0)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, e->pos, "%s must not be negative", what);
  *out = v.v.i64;
  return HS_OK;
}

/* DISTINCT ON (on[0..n_on)) over p: row_number() OVER (PARTITION BY the
 * ON columns ORDER BY the sort keys) = 1, the numbering dropped (peers
 * keep their input order: the first row of a group is deterministic). */
static hs_status bind_distinct_on(hs_sql_binder *b, const hs_sql_sortkey *on, int32_t n_on,
                                  const hs_sql_sortkey *keys, int32_t nk, hs_sql_plan **io) {
  hs_sql_plan *p = *io;
  int32_t n = p->n_cols;
  hs_sql_type i64 = hs_sql_type_of(HS_SQL_INT64);
  hs_sql_plan *w = hs_sql_bind_plan(b, HS_SP_WINDOW, n + 1);
  hs_sql_wincall *call = hs_arena_alloc(b->A, sizeof *call);
  if (w == NULL || call == NULL) return hs_sql_bind_nomem(b);
  memset(call, 0, sizeof *call);
  call->fn = HS_SW_ROW_NUMBER;
  call->partition = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (size_t)n_on);
  call->order = hs_arena_alloc(b->A, sizeof(hs_sql_sortkey) * (size_t)(nk + 1));
  if (call->partition == NULL || call->order == NULL) return hs_sql_bind_nomem(b);
  for (int32_t i = 0; i < n_on; i++) call->partition[i] = on[i].expr;
  call->n_partition = n_on;
  for (int32_t i = 0; i < nk; i++) call->order[i] = keys[i];
  call->n_order = nk;
  w->kids[0] = p;
  w->window.calls = call;
  w->window.n_calls = 1;
  for (int32_t i = 0; i < n; i++) w->types[i] = p->types[i], w->names[i] = p->names[i];
  w->types[n] = i64;
  w->names[n] = "?distinct_on?";
  hs_sql_expr *rn = hs_sql_expr_new(b->A, HS_SX_COL, i64, 0);
  hs_sql_expr *one = hs_sql_expr_new(b->A, HS_SX_CONST, i64, 0);
  if (rn == NULL || one == NULL) return hs_sql_bind_nomem(b);
  rn->col = n;
  one->value.type = i64;
  one->value.v.i64 = 1;
  hs_sql_plan *f = hs_sql_bind_plan(b, HS_SP_FILTER, n + 1);
  if (f == NULL) return HS_ERR_NOMEM;
  hs_status st = hs_sql_bind_binop(b, "=", rn, false, one, false, 0, &f->pred);
  if (st != HS_OK) return st;
  f->kids[0] = w;
  for (int32_t i = 0; i <= n; i++) f->types[i] = w->types[i], f->names[i] = w->names[i];
  hs_sql_plan *pr = hs_sql_bind_plan(b, HS_SP_PROJECT, n);
  if (pr == NULL) return HS_ERR_NOMEM;
  pr->kids[0] = f;
  pr->project.exprs = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (size_t)n);
  if (pr->project.exprs == NULL) return hs_sql_bind_nomem(b);
  for (int32_t i = 0; i < n; i++) {
    hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_COL, p->types[i], 0);
    if (c == NULL) return hs_sql_bind_nomem(b);
    c->col = i;
    pr->project.exprs[i] = c;
    pr->types[i] = p->types[i];
    pr->names[i] = p->names[i];
  }
  *io = pr;
  return HS_OK;
}

/* Bind a sort key: an output column by name or position, else an
 * expression over the pre-projection scope (added as a hidden column). */
static hs_status bind_sort_key(hs_sql_binder *b, hs_sql_ectx *ec, json_t *sb, exprs *out_cols,
                               int32_t n_visible, bool distinct, hs_sql_sortkey *key) {
  json_t *node = json_object_get(sb, "node");
  const char *dir = json_string_value(json_object_get(sb, "sortby_dir"));
  const char *nulls = json_string_value(json_object_get(sb, "sortby_nulls"));
  key->desc = dir != NULL && strcmp(dir, "SORTBY_DESC") == 0;
  key->nulls_first = key->desc;
  if (nulls != NULL && strcmp(nulls, "SORTBY_NULLS_FIRST") == 0) key->nulls_first = true;
  if (nulls != NULL && strcmp(nulls, "SORTBY_NULLS_LAST") == 0) key->nulls_first = false;
  if (dir != NULL && strcmp(dir, "SORTBY_USING") == 0)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, hs_sql_json_pos(sb),
                            "ORDER BY ... USING is not supported");
  json_t *body;
  const char *t = hs_sql_json_type(node, &body);
  int32_t col = -1;
  if (t != NULL && strcmp(t, "A_Const") == 0 && json_object_get(body, "ival") != NULL) {
    int64_t k = 0;
    hs_status st = const_int(b, node, "ORDER BY position", &k);
    if (st != HS_OK) return st;
    if (k < 1 || k > n_visible)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, hs_sql_json_pos(body),
                              "ORDER BY position %lld is not in select list", (long long)k);
    col = (int32_t)k - 1;
  } else if (t != NULL && strcmp(t, "ColumnRef") == 0) {
    json_t *fields = json_object_get(body, "fields");
    if (json_array_size(fields) == 1) {
      const char *nm = hs_sql_json_str(json_array_get(fields, 0));
      for (int32_t i = 0; i < n_visible && nm != NULL; i++) {
        if (out_cols->names[i] != NULL && strcmp(out_cols->names[i], nm) == 0) {
          if (col >= 0 && !hs_sql_expr_equal(out_cols->e[col], out_cols->e[i]))
            return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, hs_sql_json_pos(body),
                                    "ORDER BY \"%s\" is ambiguous", nm);
          if (col < 0) col = i;
        }
      }
    }
  }
  if (col < 0) {
    hs_sql_expr *e = NULL;
    hs_status st = hs_sql_bind_expr(b, ec, node, &e);
    if (st != HS_OK) return st;
    for (int32_t i = 0; i < out_cols->n && col < 0; i++)
      if (hs_sql_expr_equal(out_cols->e[i], e)) col = i;
    if (col < 0) {
      if (distinct)
        return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, e->pos,
                                "for SELECT DISTINCT, ORDER BY expressions must appear in select "
                                "list");
      col = out_cols->n;
      if ((st = exprs_add(b, out_cols, e, NULL, e->pos)) != HS_OK) return st;
    }
  }
  hs_sql_expr *ref = hs_sql_expr_new(b->A, HS_SX_COL, out_cols->e[col]->type, out_cols->pos[col]);
  if (ref == NULL) return hs_sql_bind_nomem(b);
  ref->col = col;
  key->expr = ref;
  return HS_OK;
}

/* Does the parse tree `n` contain an aggregate call (outside subqueries)? */
bool hs_sql_json_has_agg(json_t *n) {
  if (json_is_array(n)) {
    size_t i;
    json_t *v;
    json_array_foreach(n, i, v) if (hs_sql_json_has_agg(v)) return true;
    return false;
  }
  if (!json_is_object(n)) return false;
  json_t *body;
  const char *t = hs_sql_json_type(n, &body);
  if (t != NULL && strcmp(t, "SubLink") == 0) return false;
  if (t != NULL && strcmp(t, "FuncCall") == 0 && json_object_get(body, "over") == NULL) {
    const char *nm = hs_sql_json_last_name(json_object_get(body, "funcname"));
    if (nm != NULL && hs_sql_agg_exists(nm)) return true;
  }
  const char *k;
  json_t *v;
  json_object_foreach(n, k, v) if (hs_sql_json_has_agg(v)) return true;
  return false;
}

static hs_sql_expr *col_ref(hs_sql_binder *b, int32_t col, hs_sql_type t) {
  hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_COL, t, 0);
  if (c != NULL) c->col = col;
  return c;
}

/* A PROJECT of `kid`'s columns [0, n) (then [n, n + extra) when `extra`)
 * and the constant boolean `tag`. */
static hs_sql_plan *tagged(hs_sql_binder *b, hs_sql_plan *kid, int32_t n, int32_t extra, bool tag) {
  int32_t m = n + extra + 1;
  hs_sql_plan *p = hs_sql_bind_plan(b, HS_SP_PROJECT, m);
  if (p == NULL) return NULL;
  p->kids[0] = kid;
  p->project.exprs = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (size_t)m);
  if (p->project.exprs == NULL) return NULL;
  for (int32_t i = 0; i < n + extra; i++) {
    if ((p->project.exprs[i] = col_ref(b, i, kid->types[i])) == NULL) return NULL;
    p->types[i] = kid->types[i];
    p->names[i] = kid->names[i];
  }
  hs_sql_type bt = hs_sql_type_of(HS_SQL_BOOL);
  hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_CONST, bt, 0);
  if (c == NULL) return NULL;
  c->value.type = bt;
  c->value.v.b = tag;
  p->project.exprs[m - 1] = c;
  p->types[m - 1] = bt;
  p->names[m - 1] = "?setop_side?";
  return p;
}

/* INTERSECT / EXCEPT [ALL] from the operators UNION already has. Each side
 * is tagged (left TRUE, right FALSE); for ALL each row's copies are first
 * numbered (row_number() OVER (PARTITION BY every column)), so that the
 * i-th copy on one side meets the i-th on the other and a group of equal
 * rows keeps min(l, r) (INTERSECT ALL) or max(l - r, 0) (EXCEPT ALL)
 * copies. Then UNION ALL, an AGG grouping by the columns (and the copy
 * number) with bool_or(tag) and bool_and(tag) — grouping compares NULLs as
 * equal, as set operations do — and a FILTER keeping the groups seen on
 * both sides (bool_or AND NOT bool_and) or on the left only (bool_and);
 * a PROJECT drops the copy number and the aggregates. */
static hs_status bind_intersect_except(hs_sql_binder *b, hs_sql_plan *sides[2],
                                       const hs_sql_type *common, const char **names, int32_t n,
                                       bool intersect, bool all, hs_sql_plan **out) {
  int32_t extra = all ? 1 : 0, m = n + extra + 1;
  hs_sql_type i64 = hs_sql_type_of(HS_SQL_INT64), bt = hs_sql_type_of(HS_SQL_BOOL);
  hs_sql_plan *u = hs_sql_bind_plan(b, HS_SP_UNION, m);
  if (u == NULL) return HS_ERR_NOMEM;
  u->many = hs_arena_alloc(b->A, sizeof(hs_sql_plan *) * 2);
  if (u->many == NULL) return hs_sql_bind_nomem(b);
  u->n_many = 2;
  for (int s = 0; s < 2; s++) {
    hs_sql_plan *kid = sides[s];
    if (all) {
      hs_sql_plan *w = hs_sql_bind_plan(b, HS_SP_WINDOW, n + 1);
      hs_sql_wincall *call = hs_arena_alloc(b->A, sizeof *call);
      if (w == NULL || call == NULL) return hs_sql_bind_nomem(b);
      memset(call, 0, sizeof *call);
      call->fn = HS_SW_ROW_NUMBER;
      call->n_partition = n;
      call->partition = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (size_t)(n + 1));
      if (call->partition == NULL) return hs_sql_bind_nomem(b);
      for (int32_t i = 0; i < n; i++)
        if ((call->partition[i] = col_ref(b, i, kid->types[i])) == NULL)
          return hs_sql_bind_nomem(b);
      w->kids[0] = kid;
      w->window.calls = call;
      w->window.n_calls = 1;
      for (int32_t i = 0; i < n; i++) w->types[i] = kid->types[i], w->names[i] = kid->names[i];
      w->types[n] = i64;
      w->names[n] = "?setop_copy?";
      kid = w;
    }
    if ((u->many[s] = tagged(b, kid, n, extra, s == 0)) == NULL) return hs_sql_bind_nomem(b);
  }
  for (int32_t i = 0; i < m; i++)
    u->types[i] = u->many[0]->types[i], u->names[i] = u->many[0]->names[i];
  hs_sql_plan *a = hs_sql_bind_plan(b, HS_SP_AGG, m + 1);
  if (a == NULL) return HS_ERR_NOMEM;
  a->kids[0] = u;
  a->agg.n_keys = n + extra;
  a->agg.keys = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (size_t)(n + extra));
  a->agg.aggs = hs_arena_alloc(b->A, sizeof(hs_sql_aggcall) * 2);
  if (a->agg.keys == NULL || a->agg.aggs == NULL) return hs_sql_bind_nomem(b);
  for (int32_t i = 0; i < n + extra; i++) {
    if ((a->agg.keys[i] = col_ref(b, i, u->types[i])) == NULL) return hs_sql_bind_nomem(b);
    a->types[i] = u->types[i];
    a->names[i] = u->names[i];
  }
  a->agg.n_aggs = 2;
  static const char *const fns[2] = {"bool_or", "bool_and"};
  for (int k = 0; k < 2; k++) {
    hs_sql_aggcall *c = &a->agg.aggs[k];
    memset(c, 0, sizeof *c);
    c->args = hs_arena_alloc(b->A, sizeof(hs_sql_expr *));
    if (c->args == NULL || (c->args[0] = col_ref(b, m - 1, bt)) == NULL)
      return hs_sql_bind_nomem(b);
    c->n_args = 1;
    hs_status st = hs_sql_agg_resolve(fns[k], &bt, 1, &c->m, b->err);
    if (st != HS_OK) return st;
    a->types[n + extra + k] = c->m.ret;
    a->names[n + extra + k] = fns[k];
  }
  hs_sql_plan *f = hs_sql_bind_plan(b, HS_SP_FILTER, m + 1);
  if (f == NULL) return HS_ERR_NOMEM;
  f->kids[0] = a;
  for (int32_t i = 0; i < m + 1; i++) f->types[i] = a->types[i], f->names[i] = a->names[i];
  hs_sql_expr *any_left = col_ref(b, n + extra, bt), *only_left = col_ref(b, n + extra + 1, bt);
  if (any_left == NULL || only_left == NULL) return hs_sql_bind_nomem(b);
  if (intersect) {
    hs_sql_expr *no = hs_sql_expr_new(b->A, HS_SX_NOT, bt, 0);
    hs_sql_expr *and = hs_sql_expr_new(b->A, HS_SX_AND, bt, 0);
    hs_sql_expr **args = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * 2);
    no->args = hs_arena_alloc(b->A, sizeof(hs_sql_expr *));
    if (no == NULL || and == NULL || args == NULL || no->args == NULL) return hs_sql_bind_nomem(b);
    no->args[0] = only_left;
    no->n_args = 1;
    args[0] = any_left;
    args[1] = no;
    and->args = args;
    and->n_args = 2;
    f->pred = and;
  } else {
    f->pred = only_left;
  }
  hs_sql_plan *p = hs_sql_bind_plan(b, HS_SP_PROJECT, n);
  if (p == NULL) return HS_ERR_NOMEM;
  p->kids[0] = f;
  p->project.exprs = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (size_t)(n + 1));
  if (p->project.exprs == NULL) return hs_sql_bind_nomem(b);
  for (int32_t i = 0; i < n; i++) {
    if ((p->project.exprs[i] = col_ref(b, i, common[i])) == NULL) return hs_sql_bind_nomem(b);
    p->types[i] = common[i];
    p->names[i] = names[i];
  }
  *out = p;
  return HS_OK;
}

static hs_status bind_setop(hs_sql_binder *b, json_t *sel, const char *op, hs_sql_plan **out) {
  bool all = json_is_true(json_object_get(sel, "all"));
  hs_sql_plan *l = NULL, *r = NULL;
  hs_status st = hs_sql_bind_select(b, json_object_get(sel, "larg"), &l);
  if (st == HS_OK) st = hs_sql_bind_select(b, json_object_get(sel, "rarg"), &r);
  if (st != HS_OK) return st;
  if (l->n_cols != r->n_cols)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, 0,
                            "each %s query must have the same number of columns (%d vs %d)", op,
                            l->n_cols, r->n_cols);
  /* unify column types: cast each side through a projection */
  hs_sql_type *common = hs_arena_alloc(b->A, sizeof(*common) * (size_t)(l->n_cols + 1));
  if (common == NULL) return hs_sql_bind_nomem(b);
  bool lcast = false, rcast = false;
  for (int32_t i = 0; i < l->n_cols; i++) {
    if (!hs_sql_type_common(l->types[i], r->types[i], &common[i])) {
      char a[64], c[64];
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, 0, "%s types %s and %s cannot be matched", op,
                              hs_sql_type_name(l->types[i], a, sizeof a),
                              hs_sql_type_name(r->types[i], c, sizeof c));
    }
    if (!hs_sql_type_eq(common[i], l->types[i])) lcast = true;
    if (!hs_sql_type_eq(common[i], r->types[i])) rcast = true;
  }
  hs_sql_plan *sides[2] = {l, r};
  bool casts[2] = {lcast, rcast};
  for (int s = 0; s < 2; s++) {
    if (!casts[s]) continue;
    hs_sql_plan *p = hs_sql_bind_plan(b, HS_SP_PROJECT, l->n_cols);
    if (p == NULL) return HS_ERR_NOMEM;
    p->kids[0] = sides[s];
    p->project.exprs = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (size_t)l->n_cols);
    if (p->project.exprs == NULL) return hs_sql_bind_nomem(b);
    for (int32_t i = 0; i < l->n_cols; i++) {
      hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_COL, sides[s]->types[i], 0);
      if (c == NULL) return hs_sql_bind_nomem(b);
      c->col = i;
      if ((st = hs_sql_expr_cast(b->A, c, common[i], &p->project.exprs[i], b->err)) != HS_OK)
        return st;
      p->types[i] = common[i];
      p->names[i] = sides[s]->names[i];
    }
    sides[s] = p;
  }
  if (strcmp(op, "UNION") != 0)
    return bind_intersect_except(b, sides, common, l->names, l->n_cols, op[0] == 'I', all, out);
  hs_sql_plan *u = hs_sql_bind_plan(b, HS_SP_UNION, l->n_cols);
  if (u == NULL) return HS_ERR_NOMEM;
  u->many = hs_arena_alloc(b->A, sizeof(hs_sql_plan *) * 2);
  if (u->many == NULL) return hs_sql_bind_nomem(b);
  u->many[0] = sides[0], u->many[1] = sides[1];
  u->n_many = 2;
  for (int32_t i = 0; i < l->n_cols; i++) u->types[i] = common[i], u->names[i] = l->names[i];
  hs_sql_plan *top = u;
  if (!all) {
    hs_sql_plan *d = hs_sql_bind_plan(b, HS_SP_AGG, u->n_cols);
    if (d == NULL) return HS_ERR_NOMEM;
    d->kids[0] = u;
    d->agg.keys = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (size_t)u->n_cols);
    if (d->agg.keys == NULL) return hs_sql_bind_nomem(b);
    d->agg.n_keys = u->n_cols;
    for (int32_t i = 0; i < u->n_cols; i++) {
      hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_COL, u->types[i], 0);
      if (c == NULL) return hs_sql_bind_nomem(b);
      c->col = i;
      d->agg.keys[i] = c;
      d->types[i] = u->types[i], d->names[i] = u->names[i];
    }
    top = d;
  }
  *out = top;
  return HS_OK;
}

/* The ORDER BY / LIMIT of a set operation apply to its result. */
static hs_status bind_setop_tail(hs_sql_binder *b, json_t *sel, hs_sql_plan **top) {
  json_t *sort = json_object_get(sel, "sortClause");
  json_t *lim = json_object_get(sel, "limitCount");
  json_t *off = json_object_get(sel, "limitOffset");
  hs_sql_plan *p = *top;
  hs_status st;
  if (json_array_size(sort) > 0) {
    hs_sql_scope sc;
    if ((st = scope_of_plan(b, p, NULL, &sc)) != HS_OK) return st;
    hs_sql_ectx ec = {.sc = &sc};
    exprs cols = {0};
    for (int32_t i = 0; i < p->n_cols; i++) {
      hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_COL, p->types[i], 0);
      if (c == NULL) return hs_sql_bind_nomem(b);
      c->col = i;
      if ((st = exprs_add(b, &cols, c, p->names[i], 0)) != HS_OK) return st;
    }
    size_t nk = json_array_size(sort);
    hs_sql_plan *s = hs_sql_bind_plan(b, HS_SP_SORT, p->n_cols);
    if (s == NULL) return HS_ERR_NOMEM;
    s->sort.keys = hs_arena_alloc(b->A, sizeof(hs_sql_sortkey) * nk);
    if (s->sort.keys == NULL) return hs_sql_bind_nomem(b);
    for (size_t i = 0; i < nk; i++) {
      json_t *sb = json_object_get(json_array_get(sort, i), "SortBy");
      if ((st = bind_sort_key(b, &ec, sb, &cols, p->n_cols, true, &s->sort.keys[i])) != HS_OK)
        return st;
    }
    s->sort.n_keys = (int32_t)nk;
    s->kids[0] = p;
    for (int32_t i = 0; i < p->n_cols; i++) s->types[i] = p->types[i], s->names[i] = p->names[i];
    p = s;
  }
  int64_t limit = -1, offset = 0;
  if (lim != NULL && (st = const_int(b, lim, "LIMIT", &limit)) != HS_OK) return st;
  if (off != NULL && (st = const_int(b, off, "OFFSET", &offset)) != HS_OK) return st;
  if (offset < 0) offset = 0;
  if (limit >= 0 || offset > 0) {
    if (p->kind == HS_SP_SORT) {
      p->limit = limit;
      p->offset = offset;
    } else {
      hs_sql_plan *l = hs_sql_bind_plan(b, HS_SP_LIMIT, p->n_cols);
      if (l == NULL) return HS_ERR_NOMEM;
      l->kids[0] = p;
      l->limit = limit, l->offset = offset;
      for (int32_t i = 0; i < p->n_cols; i++) l->types[i] = p->types[i], l->names[i] = p->names[i];
      p = l;
    }
  }
  *top = p;
  return HS_OK;
}

static hs_status push_ctes(hs_sql_binder *b, json_t *sel, int32_t *saved) {
  *saved = b->n_ctes;
  json_t *with = json_object_get(sel, "withClause");
  if (with == NULL) return HS_OK;
  if (json_is_true(json_object_get(with, "recursive")))
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, hs_sql_json_pos(with),
                            "WITH RECURSIVE is not supported");
  json_t *ctes = json_object_get(with, "ctes");
  size_t n = json_array_size(ctes);
  for (size_t i = 0; i < n; i++) {
    json_t *c = json_object_get(json_array_get(ctes, i), "CommonTableExpr");
    if (c == NULL) continue;
    if (b->n_ctes == b->cap_ctes) {
      int32_t nc = b->cap_ctes ? b->cap_ctes * 2 : 8;
      hs_sql_cte *g = hs_arena_alloc(b->A, sizeof(*g) * (size_t)nc);
      if (g == NULL) return hs_sql_bind_nomem(b);
      if (b->n_ctes) memcpy(g, b->ctes, sizeof(*g) * (size_t)b->n_ctes);
      b->ctes = g, b->cap_ctes = nc;
    }
    hs_sql_cte *e = &b->ctes[b->n_ctes++];
    e->name = json_string_value(json_object_get(c, "ctename"));
    e->query = json_object_get(c, "ctequery");
    e->colnames = json_object_get(c, "aliascolnames");
    if (e->name == NULL || e->query == NULL)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, hs_sql_json_pos(c), "malformed WITH item");
  }
  return HS_OK;
}

hs_status hs_sql_bind_select(hs_sql_binder *b, json_t *sel, hs_sql_plan **out) {
  if (sel == NULL) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, 0, "malformed SELECT");
  if (++b->depth > 64)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, 0, "query nested too deeply (limit 64)");
  int32_t saved_ctes;
  hs_status st = push_ctes(b, sel, &saved_ctes);
  if (st != HS_OK) return st;
  const char *op = json_string_value(json_object_get(sel, "op"));
  if (op != NULL && strcmp(op, "SETOP_NONE") != 0) {
    const char *name = strcmp(op, "SETOP_UNION") == 0       ? "UNION"
                       : strcmp(op, "SETOP_INTERSECT") == 0 ? "INTERSECT"
                                                            : "EXCEPT";
    st = bind_setop(b, sel, name, out);
    if (st == HS_OK) st = bind_setop_tail(b, sel, out);
    b->n_ctes = saved_ctes;
    b->depth--;
    return st;
  }
  json_t *values = json_object_get(sel, "valuesLists");
  if (values != NULL) {
    st = hs_sql_bind_values(b, values, out);
    if (st == HS_OK) st = bind_setop_tail(b, sel, out);
    b->n_ctes = saved_ctes;
    b->depth--;
    return st;
  }
  if (json_object_get(sel, "intoClause") != NULL)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, 0, "SELECT INTO is not supported");
  if (json_object_get(sel, "lockingClause") != NULL)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, 0, "FOR UPDATE/SHARE is not supported");

  /* FROM */
  hs_sql_plan *p = NULL;
  hs_sql_scope from_sc;
  if ((st = hs_sql_bind_from(b, json_object_get(sel, "fromClause"), &p, &from_sc)) != HS_OK)
    return st;

  /* WHERE: [NOT] EXISTS / IN subqueries become semi/anti joins, the rest a
   * FILTER (where correlated scalar subqueries may add left joins) */
  json_t *where = json_object_get(sel, "whereClause");
  if (where != NULL) {
    if (hs_sql_json_has_agg(where))
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, 0,
                              "aggregate functions are not allowed in WHERE");
    json_t **conj = NULL;
    int32_t n_conj = 0, cap_conj = 0;
    if ((st = hs_sql_json_conjuncts(b, where, &conj, &n_conj, &cap_conj)) != HS_OK) return st;
    hs_sql_decor decor = {&p, &from_sc};
    hs_sql_expr *pred = NULL;
    for (int32_t i = 0; i < n_conj; i++) {
      bool done = false;
      if ((st = hs_sql_bind_semi(b, conj[i], &p, &from_sc, &done)) != HS_OK) return st;
      if (done) continue;
      hs_sql_ectx wec = {.sc = &from_sc, .decor = &decor};
      hs_sql_expr *e = NULL;
      if ((st = hs_sql_bind_bool(b, &wec, conj[i], "WHERE", &e)) != HS_OK) return st;
      if ((st = hs_sql_bind_and(b, pred, e, &pred)) != HS_OK) return st;
    }
    if (pred != NULL) {
      hs_sql_plan *f = hs_sql_bind_plan(b, HS_SP_FILTER, p->n_cols);
      if (f == NULL) return HS_ERR_NOMEM;
      f->kids[0] = p;
      f->pred = pred;
      for (int32_t i = 0; i < p->n_cols; i++) f->types[i] = p->types[i], f->names[i] = p->names[i];
      p = f;
    }
  }

  json_t *targets = json_object_get(sel, "targetList");
  json_t *group = json_object_get(sel, "groupClause");
  json_t *having = json_object_get(sel, "havingClause");
  json_t *sort = json_object_get(sel, "sortClause");
  json_t *distinct = json_object_get(sel, "distinctClause");
  bool grouped = json_array_size(group) > 0 || having != NULL || hs_sql_json_has_agg(targets) ||
                 hs_sql_json_has_agg(sort);

  hs_sql_aggmode am;
  memset(&am, 0, sizeof am);
  am.from = &from_sc;
  hs_sql_winmode wm;
  memset(&wm, 0, sizeof wm);
  hs_sql_ectx ec = {.sc = &from_sc, .wm = &wm};
  if (grouped) {
    ec.am = &am;
    /* GROUP BY keys over the FROM scope */
    size_t ng = json_array_size(group);
    am.keys = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (ng + 1));
    if (am.keys == NULL) return hs_sql_bind_nomem(b);
    for (size_t i = 0; i < ng; i++) {
      json_t *g = json_array_get(group, i);
      json_t *gb;
      const char *gt = hs_sql_json_type(g, &gb);
      json_t *node = g;
      if (gt != NULL && (strcmp(gt, "GroupingSet") == 0))
        return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, hs_sql_json_pos(gb),
                                "GROUPING SETS, ROLLUP and CUBE are not supported");
      if (gt != NULL && strcmp(gt, "A_Const") == 0 && json_object_get(gb, "ival") != NULL) {
        int64_t k = 0;
        if ((st = const_int(b, g, "GROUP BY position", &k)) != HS_OK) return st;
        if (k < 1 || (size_t)k > json_array_size(targets))
          return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, hs_sql_json_pos(gb),
                                  "GROUP BY position %lld is not in select list", (long long)k);
        node = json_object_get(json_object_get(json_array_get(targets, (size_t)k - 1), "ResTarget"),
                               "val");
      } else if (gt != NULL && strcmp(gt, "ColumnRef") == 0) {
        /* an output column name that is not an input column */
        json_t *fields = json_object_get(gb, "fields");
        const char *nm =
            json_array_size(fields) == 1 ? hs_sql_json_str(json_array_get(fields, 0)) : NULL;
        bool input = false;
        for (int32_t c = 0; c < from_sc.n && nm != NULL; c++)
          if (strcmp(from_sc.cols[c].name, nm) == 0) input = true;
        if (nm != NULL && !input) {
          size_t nt = json_array_size(targets);
          for (size_t t = 0; t < nt; t++) {
            json_t *rt = json_object_get(json_array_get(targets, t), "ResTarget");
            const char *alias = json_string_value(json_object_get(rt, "name"));
            if (alias != NULL && strcmp(alias, nm) == 0) {
              node = json_object_get(rt, "val");
              break;
            }
          }
        }
      }
      if (hs_sql_json_has_agg(node))
        return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, hs_sql_json_pos(gb),
                                "aggregate functions are not allowed in GROUP BY");
      hs_sql_ectx kec = {.sc = &from_sc};
      hs_sql_expr *k = NULL;
      if ((st = hs_sql_bind_expr(b, &kec, node, &k)) != HS_OK) return st;
      bool dup = false;
      for (int32_t j = 0; j < am.n_keys && !dup; j++) dup = hs_sql_expr_equal(am.keys[j], k);
      if (!dup) am.keys[am.n_keys++] = k;
    }
  }

  /* the select list */
  exprs cols = {0};
  size_t nt = json_array_size(targets);
  for (size_t t = 0; t < nt; t++) {
    json_t *rt = json_object_get(json_array_get(targets, t), "ResTarget");
    json_t *val = json_object_get(rt, "val");
    const char *alias = json_string_value(json_object_get(rt, "name"));
    int32_t pos = hs_sql_json_pos(rt);
    const char *qual = NULL;
    if (is_star(val, &qual)) {
      if (grouped)
        return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos,
                                "SELECT * is not allowed with GROUP BY or aggregates; name the "
                                "columns");
      bool any = false;
      for (int32_t c = 0; c < from_sc.n; c++) {
        const hs_sql_scol *sc = &from_sc.cols[c];
        if (sc->hidden) continue;
        if (qual != NULL && (sc->qual == NULL || strcmp(sc->qual, qual) != 0)) continue;
        hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_COL, sc->type, pos);
        if (e == NULL) return hs_sql_bind_nomem(b);
        e->col = c;
        if ((st = exprs_add(b, &cols, e, sc->name, pos)) != HS_OK) return st;
        any = true;
      }
      if (!any && qual != NULL)
        return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos,
                                "missing FROM-clause entry for table \"%s\"", qual);
      continue;
    }
    hs_sql_expr *e = NULL;
    if ((st = hs_sql_bind_expr(b, &ec, val, &e)) != HS_OK) return st;
    if ((st = exprs_add(b, &cols, e, alias != NULL ? alias : target_name(val), pos)) != HS_OK)
      return st;
  }
  int32_t n_visible = cols.n;
  if (n_visible == 0)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, 0, "a SELECT with no columns is not supported");

  /* HAVING */
  hs_sql_expr *having_e = NULL;
  if (having != NULL) {
    hs_sql_ectx hec = ec;
    hec.wm = NULL;
    if ((st = hs_sql_bind_bool(b, &hec, having, "HAVING", &having_e)) != HS_OK) return st;
  }

  /* ORDER BY (may add hidden columns and aggregates) */
  size_t nk = json_array_size(sort);
  hs_sql_sortkey *keys = nk ? hs_arena_alloc(b->A, sizeof(*keys) * nk) : NULL;
  if (nk && keys == NULL) return hs_sql_bind_nomem(b);
  bool distinct_on =
      json_array_size(distinct) > 0 && hs_sql_json_type(json_array_get(distinct, 0), NULL) != NULL;
  for (size_t i = 0; i < nk; i++) {
    json_t *sb = json_object_get(json_array_get(sort, i), "SortBy");
    if ((st = bind_sort_key(b, &ec, sb, &cols, n_visible, distinct != NULL && !distinct_on,
                            &keys[i])) != HS_OK)
      return st;
  }
  /* DISTINCT ON (...): its expressions bind as sort keys do (output columns
   * by name or position, else hidden columns) */
  size_t n_on = distinct_on ? json_array_size(distinct) : 0;
  hs_sql_sortkey *on = n_on ? hs_arena_alloc(b->A, sizeof(*on) * n_on) : NULL;
  if (n_on && on == NULL) return hs_sql_bind_nomem(b);
  for (size_t i = 0; i < n_on; i++) {
    json_t *sb = json_pack("{s:O}", "node", json_array_get(distinct, i));
    if (sb == NULL) return hs_sql_bind_nomem(b);
    st = bind_sort_key(b, &ec, sb, &cols, n_visible, false, &on[i]);
    json_decref(sb);
    if (st != HS_OK) return st;
  }
  /* PostgreSQL: they must match the leftmost ORDER BY expressions */
  for (size_t i = 0; i < n_on && nk > 0; i++) {
    bool found = false;
    for (size_t j = 0; j < n_on && j < nk && !found; j++)
      found = keys[j].expr->col == on[i].expr->col;
    if (!found || nk < n_on)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, on[i].expr->pos,
                              "SELECT DISTINCT ON expressions must match initial ORDER BY "
                              "expressions");
  }

  /* AGG */
  if (grouped) {
    hs_sql_plan *a = hs_sql_bind_plan(b, HS_SP_AGG, am.n_keys + am.n_aggs);
    if (a == NULL) return HS_ERR_NOMEM;
    a->kids[0] = p;
    a->agg.keys = am.keys;
    a->agg.n_keys = am.n_keys;
    a->agg.aggs = am.aggs;
    a->agg.n_aggs = am.n_aggs;
    for (int32_t i = 0; i < am.n_keys; i++) {
      a->types[i] = am.keys[i]->type;
      a->names[i] = am.keys[i]->kind == HS_SX_COL ? from_sc.cols[am.keys[i]->col].name : "?key?";
    }
    for (int32_t i = 0; i < am.n_aggs; i++) {
      a->types[am.n_keys + i] = am.aggs[i].m.ret;
      a->names[am.n_keys + i] = am.aggs[i].m.agg->name;
    }
    p = a;
    if (having_e != NULL) {
      hs_sql_plan *f = hs_sql_bind_plan(b, HS_SP_FILTER, p->n_cols);
      if (f == NULL) return HS_ERR_NOMEM;
      f->kids[0] = p;
      f->pred = having_e;
      for (int32_t i = 0; i < p->n_cols; i++) f->types[i] = p->types[i], f->names[i] = p->names[i];
      p = f;
    }
  }

  /* WINDOW */
  if (wm.n_calls > 0) {
    int32_t base = p->n_cols;
    hs_sql_plan *w = hs_sql_bind_plan(b, HS_SP_WINDOW, base + wm.n_calls);
    if (w == NULL) return HS_ERR_NOMEM;
    w->kids[0] = p;
    w->window.calls = wm.calls;
    w->window.n_calls = wm.n_calls;
    for (int32_t i = 0; i < base; i++) w->types[i] = p->types[i], w->names[i] = p->names[i];
    for (int32_t i = 0; i < wm.n_calls; i++) {
      w->types[base + i] = wm.types[i];
      w->names[base + i] = wm.names[i];
    }
    for (int32_t i = 0; i < cols.n; i++) fix_window_refs(cols.e[i], base);
    p = w;
  }

  /* PROJECT (visible + hidden sort columns) */
  hs_sql_plan *pr = hs_sql_bind_plan(b, HS_SP_PROJECT, cols.n);
  if (pr == NULL) return HS_ERR_NOMEM;
  pr->kids[0] = p;
  pr->project.exprs = cols.e;
  for (int32_t i = 0; i < cols.n; i++) {
    pr->types[i] = cols.e[i]->type;
    pr->names[i] = cols.names[i] != NULL ? cols.names[i] : "?sort?";
  }
  p = pr;

  /* DISTINCT ON: the first row of each group in ORDER BY's order */
  if (distinct_on) {
    if ((st = bind_distinct_on(b, on, (int32_t)n_on, keys, (int32_t)nk, &p)) != HS_OK) return st;
  } else if (distinct != NULL) {
    hs_sql_plan *d = hs_sql_bind_plan(b, HS_SP_AGG, p->n_cols);
    if (d == NULL) return HS_ERR_NOMEM;
    d->kids[0] = p;
    d->agg.keys = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (size_t)p->n_cols);
    if (d->agg.keys == NULL) return hs_sql_bind_nomem(b);
    d->agg.n_keys = p->n_cols;
    for (int32_t i = 0; i < p->n_cols; i++) {
      hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_COL, p->types[i], 0);
      if (c == NULL) return hs_sql_bind_nomem(b);
      c->col = i;
      d->agg.keys[i] = c;
      d->types[i] = p->types[i], d->names[i] = p->names[i];
    }
    p = d;
  }

  /* ORDER BY, LIMIT, OFFSET */
  int64_t limit = -1, offset = 0;
  json_t *lim = json_object_get(sel, "limitCount");
  json_t *off = json_object_get(sel, "limitOffset");
  if (lim != NULL && (st = const_int(b, lim, "LIMIT", &limit)) != HS_OK) return st;
  if (off != NULL && (st = const_int(b, off, "OFFSET", &offset)) != HS_OK) return st;
  if (nk > 0) {
    hs_sql_plan *s = hs_sql_bind_plan(b, HS_SP_SORT, p->n_cols);
    if (s == NULL) return HS_ERR_NOMEM;
    s->kids[0] = p;
    s->sort.keys = keys;
    s->sort.n_keys = (int32_t)nk;
    s->limit = limit;
    s->offset = offset;
    for (int32_t i = 0; i < p->n_cols; i++) s->types[i] = p->types[i], s->names[i] = p->names[i];
    p = s;
  } else if (limit >= 0 || offset > 0) {
    hs_sql_plan *l = hs_sql_bind_plan(b, HS_SP_LIMIT, p->n_cols);
    if (l == NULL) return HS_ERR_NOMEM;
    l->kids[0] = p;
    l->limit = limit;
    l->offset = offset;
    for (int32_t i = 0; i < p->n_cols; i++) l->types[i] = p->types[i], l->names[i] = p->names[i];
    p = l;
  }

  /* drop hidden sort columns */
  if (cols.n > n_visible) {
    hs_sql_plan *fin = hs_sql_bind_plan(b, HS_SP_PROJECT, n_visible);
    if (fin == NULL) return HS_ERR_NOMEM;
    fin->kids[0] = p;
    fin->project.exprs = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (size_t)n_visible);
    if (fin->project.exprs == NULL) return hs_sql_bind_nomem(b);
    for (int32_t i = 0; i < n_visible; i++) {
      hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_COL, p->types[i], 0);
      if (c == NULL) return hs_sql_bind_nomem(b);
      c->col = i;
      fin->project.exprs[i] = c;
      fin->types[i] = p->types[i];
      fin->names[i] = p->names[i];
    }
    p = fin;
  }
  b->n_ctes = saved_ctes;
  b->depth--;
  *out = p;
  return HS_OK;
}

/* What EXPLAIN cannot show of a statement that changes rows without a
 * join (those with one are ddl_merge.c's), and what to EXPLAIN instead;
 * NULL for a query. */
static const char *explain_of_change(json_t *explain_body) {
  json_t *q = json_object_get(explain_body, "query");
  if (json_object_get(q, "UpdateStmt") != NULL || json_object_get(q, "DeleteStmt") != NULL)
    return "UPDATE without FROM or DELETE without USING is not supported: it runs as one row "
           "change through the "
           "table's filter, not as a query plan (EXPLAIN SELECT * FROM t WHERE <its condition> "
           "shows how the rows are found)";
  if (json_object_get(q, "InsertStmt") != NULL)
    return "INSERT is not supported (EXPLAIN the SELECT or VALUES it inserts)";
  return NULL;
}

hs_status hs_sql_bind_query(hs_sql_binder *b, json_t *node, hs_sql_plan **out) {
  json_t *body;
  const char *t = hs_sql_json_type(node, &body);
  if (t == NULL || strcmp(t, "SelectStmt") != 0)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, 0, "%s is not a query", t ? t : "statement");
  return hs_sql_bind_select(b, body, out);
}

/* ----------------------------------------------------------- statements */

void hs_sql_stmt_free(hs_sql_stmt *s) {
  if (s == NULL) return;
  hs_sql_plan_ctx_free(s->pctx); /* frees the parse tree too */
  memset(s, 0, sizeof(*s));
}

static hs_status bind_set(hs_sql_binder *b, json_t *body, hs_sql_stmt *out) {
  const char *kind = json_string_value(json_object_get(body, "kind"));
  const char *name = json_string_value(json_object_get(body, "name"));
  if (kind != NULL && (strcmp(kind, "VAR_RESET") == 0 || strcmp(kind, "VAR_RESET_ALL") == 0)) {
    out->kind = HS_SQL_STMT_RESET;
    out->set_name = name;
    return HS_OK;
  }
  if (kind == NULL || strcmp(kind, "VAR_SET_VALUE") != 0 || name == NULL)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, 0, "this form of SET is not supported");
  json_t *args = json_object_get(body, "args");
  if (json_array_size(args) != 1)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, 0, "SET %s takes one value", name);
  json_t *ab;
  const char *at = hs_sql_json_type(json_array_get(args, 0), &ab);
  char buf[64];
  const char *val = NULL;
  if (at != NULL && strcmp(at, "A_Const") == 0) {
    json_t *v;
    if ((v = json_object_get(ab, "sval")) != NULL)
      val = json_string_value(json_object_get(v, "sval"));
    else if ((v = json_object_get(ab, "fval")) != NULL)
      val = json_string_value(json_object_get(v, "fval"));
    else if ((v = json_object_get(ab, "ival")) != NULL) {
      json_t *iv = json_object_get(v, "ival");
      snprintf(buf, sizeof buf, "%lld", iv != NULL ? (long long)json_integer_value(iv) : 0LL);
      val = buf;
    } else if ((v = json_object_get(ab, "boolval")) != NULL) {
      val = json_is_true(json_object_get(v, "boolval")) ? "on" : "off";
    }
  }
  if (val == NULL)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, hs_sql_json_pos(ab),
                            "SET %s: the value must be a constant", name);
  out->kind = HS_SQL_STMT_SET;
  out->set_name = name;
  out->set_value = hs_arena_strndup(b->A, val, strlen(val));
  return out->set_value != NULL ? HS_OK : hs_sql_bind_nomem(b);
}

hs_status hs_sql_bind(const char *sql, const hs_sql_bind_opts *o, hs_sql_stmt *out,
                      int32_t *error_pos, hs_error *err) {
  memset(out, 0, sizeof(*out));
  if (error_pos != NULL) *error_pos = 0;
  size_t len = strlen(sql);
  json_t *root = hs_sql_parse_cache_get(o->parse_cache, sql, len);
  if (root == NULL) {
    int32_t deep = hs_expr_nesting_overflow(sql, len);
    if (deep > 0) {
      if (error_pos != NULL) *error_pos = deep;
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "at position %d: statement nested too deeply (limit 256)", deep);
    }
    PgQueryParseResult r = pg_query_parse(sql);
    if (r.error != NULL) {
      int32_t pos = r.error->cursorpos;
      hs_error_set(err, HS_ERR_INVALID_ARG, "at position %d: %s", pos,
                   r.error->message != NULL ? r.error->message : "syntax error");
      if (error_pos != NULL) *error_pos = pos;
      pg_query_free_parse_result(r);
      return HS_ERR_INVALID_ARG;
    }
    json_error_t jerr;
    root = json_loads(r.parse_tree, 0, &jerr);
    pg_query_free_parse_result(r);
    if (root == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "statement too complex to plan");
    json_t *one = json_object_get(root, "stmts");
    const char *kind = json_array_size(one) == 1
                           ? hs_sql_json_type(json_object_get(json_array_get(one, 0), "stmt"), NULL)
                           : NULL;
    if (kind != NULL && strcmp(kind, "SelectStmt") == 0) /* the statements run again */
      hs_sql_parse_cache_put(o->parse_cache, sql, len, root);
  }
  json_t *stmts = json_object_get(root, "stmts");
  if (json_array_size(stmts) != 1) {
    json_decref(root);
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        json_array_size(stmts) == 0 ? "empty statement"
                                                    : "one statement at a time, please (found %zu)",
                        json_array_size(stmts));
  }
  out->pctx = hs_calloc(1, sizeof(*out->pctx));
  /* the statement's own array holds the (possibly shared, read-only) tree
   * and whatever the binder keeps (hs_sql_bind_keep) */
  json_t *keep = out->pctx != NULL ? json_array() : NULL;
  if (keep == NULL || json_array_append_new(keep, root) != 0) {
    if (keep == NULL) json_decref(root);
    json_decref(keep);
    hs_free(out->pctx);
    out->pctx = NULL;
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  }
  out->pctx->json = keep;
  out->json_root = root;
  hs_arena_init(&out->pctx->arena);
  out->pctx->sql = sql;
  hs_sql_binder b;
  memset(&b, 0, sizeof b);
  b.pc = out->pctx;
  b.A = &out->pctx->arena;
  b.sql = sql;
  b.len = len;
  b.o = o;
  b.err = err;
  b.err_pos = error_pos;
  b.ectx.params = o->params;
  b.ectx.n_params = o->n_params;
  b.ectx.cancel = o->cancel;
  json_t *stmt = json_object_get(json_array_get(stmts, 0), "stmt");
  json_t *body;
  const char *t = hs_sql_json_type(stmt, &body);
  hs_status st;
  if (t == NULL) {
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "empty statement");
  } else if (strcmp(t, "SelectStmt") == 0) {
    out->kind = HS_SQL_STMT_QUERY;
    st = hs_sql_bind_query(&b, stmt, &out->plan);
    if (st == HS_OK) st = hs_sql_optimize(out->pctx, &out->plan, err);
  } else if (strcmp(t, "ExplainStmt") == 0 && hs_sql_explain_is_merge(body)) {
    out->kind = HS_SQL_STMT_OTHER; /* ddl_merge.c plans and explains its SELECT */
    out->other = t;
    out->json = body;
    st = HS_OK;
  } else if (strcmp(t, "ExplainStmt") == 0 && explain_of_change(body) != NULL) {
    st = hs_error_set(err, HS_ERR_UNSUPPORTED, "EXPLAIN of %s", explain_of_change(body));
  } else if (strcmp(t, "ExplainStmt") == 0) {
    bool analyze = false;
    json_t *opts = json_object_get(body, "options");
    size_t i;
    json_t *v;
    json_array_foreach(opts, i, v) {
      json_t *d = json_object_get(v, "DefElem");
      const char *dn = d != NULL ? json_string_value(json_object_get(d, "defname")) : NULL;
      if (dn != NULL && strcmp(dn, "analyze") == 0) analyze = true;
    }
    hs_sql_plan *q = NULL;
    st = hs_sql_bind_query(&b, json_object_get(body, "query"), &q);
    if (st == HS_OK) st = hs_sql_optimize(out->pctx, &q, err);
    if (st == HS_OK) {
      hs_sql_plan *e = hs_sql_plan_new(out->pctx, HS_SP_EXPLAIN, 1);
      if (e == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      } else {
        e->kids[0] = q;
        e->explain.analyze = analyze;
        e->types[0] = hs_sql_type_of(HS_SQL_TEXT);
        e->names[0] = "QUERY PLAN";
        out->plan = e;
        out->kind = HS_SQL_STMT_EXPLAIN;
      }
    }
  } else if (strcmp(t, "VariableSetStmt") == 0) {
    st = bind_set(&b, body, out);
  } else {
    out->kind = HS_SQL_STMT_OTHER;
    out->other = t;
    out->json = body;
    st = HS_OK;
  }
  if (st != HS_OK) {
    hs_sql_stmt_free(out);
    return st;
  }
  return HS_OK;
}

hs_status hs_sql_bind_query_node(const char *sql, void *node, const hs_sql_bind_opts *o,
                                 hs_sql_plan_ctx *pctx, hs_sql_plan **out, int32_t *error_pos,
                                 hs_error *err) {
  hs_sql_binder b;
  memset(&b, 0, sizeof b);
  b.pc = pctx;
  b.A = &pctx->arena;
  b.sql = sql;
  b.len = strlen(sql);
  b.o = o;
  b.err = err;
  b.err_pos = error_pos;
  b.ectx.params = o->params;
  b.ectx.n_params = o->n_params;
  b.ectx.cancel = o->cancel;
  hs_status st = hs_sql_bind_query(&b, node, out);
  if (st == HS_OK) st = hs_sql_optimize(pctx, out, err);
  return st;
}

hs_status hs_sql_json_conjuncts(hs_sql_binder *b, json_t *n, json_t ***v, int32_t *count,
                                int32_t *cap) {
  json_t *body;
  const char *t = hs_sql_json_type(n, &body);
  if (t != NULL && strcmp(t, "BoolExpr") == 0) {
    const char *op = json_string_value(json_object_get(body, "boolop"));
    if (op != NULL && strcmp(op, "AND_EXPR") == 0) {
      size_t i;
      json_t *a;
      json_array_foreach(json_object_get(body, "args"), i, a) {
        hs_status st = hs_sql_json_conjuncts(b, a, v, count, cap);
        if (st != HS_OK) return st;
      }
      return HS_OK;
    }
  }
  if (*count == *cap) {
    int32_t nc = *cap ? *cap * 2 : 8;
    json_t **g = hs_arena_alloc(b->A, sizeof(*g) * (size_t)nc);
    if (g == NULL) return hs_sql_bind_nomem(b);
    if (*count) memcpy(g, *v, sizeof(*g) * (size_t)*count);
    *v = g, *cap = nc;
  }
  (*v)[(*count)++] = n;
  return HS_OK;
}

hs_status hs_sql_bind_keep(hs_sql_binder *b, json_t *node) {
  if (b->pc->json == NULL && (b->pc->json = json_array()) == NULL) {
    json_decref(node);
    return hs_sql_bind_nomem(b);
  }
  json_t *keep = b->pc->json;
  if (json_is_object(keep)) {
    json_t *arr = json_object_get(keep, "hs_keep");
    if (arr == NULL) {
      arr = json_array();
      if (arr == NULL || json_object_set_new(keep, "hs_keep", arr) != 0) {
        json_decref(node);
        return hs_sql_bind_nomem(b);
      }
    }
    keep = arr;
  }
  if (json_array_append_new(keep, node) != 0) return hs_sql_bind_nomem(b);
  return HS_OK;
}
