/*
 * bind_expr.c — expressions: parse-tree nodes to typed hs_sql_expr trees.
 *
 * Literals: integers are INT32 when they fit, else INT64; decimals are
 * NUMERIC with the precision and scale written (as PostgreSQL types
 * 1.50 numeric(3,2)); quoted strings are TEXT marked "unknown" until an
 * operator or function gives them a type, as in PostgreSQL; a cast of a
 * string literal is parsed now (so '[1,2,3]'::vector is a constant).
 * Names resolve exactly first, then case-insensitively when unique; an
 * unknown name gets a "did you mean" from the scope.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "bind_internal.h"

#define UNKNOWN_LIT 1 /* aux marker on CONST nodes: an untyped string literal */

static bool is_unknown(const hs_sql_expr *e) {
  return e->kind == HS_SX_CONST && e->aux == (void *)(uintptr_t)UNKNOWN_LIT;
}

/* ------------------------------------------------------------ equality */

static bool value_equal(const hs_sql_value *a, const hs_sql_value *b) {
  if (!hs_sql_type_eq(a->type, b->type) || a->is_null != b->is_null) return false;
  if (a->is_null) return true;
  switch (a->type.id) {
  case HS_SQL_BOOL: return a->v.b == b->v.b;
  case HS_SQL_INT32:
  case HS_SQL_DATE: return a->v.i32 == b->v.i32;
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: return a->v.i64 == b->v.i64;
  case HS_SQL_FLOAT64: return memcmp(&a->v.f64, &b->v.f64, sizeof(double)) == 0;
  case HS_SQL_NUMERIC: return a->v.dec == b->v.dec;
  case HS_SQL_INTERVAL:
    return a->v.iv.months == b->v.iv.months && a->v.iv.days == b->v.iv.days &&
           a->v.iv.micros == b->v.iv.micros;
  case HS_SQL_VECTOR:
  case HS_SQL_HALFVEC: return memcmp(a->v.vec, b->v.vec, sizeof(float) * (size_t)a->type.a) == 0;
  default:
    return a->v.s.len == b->v.s.len &&
           (a->v.s.len == 0 || memcmp(a->v.s.ptr, b->v.s.ptr, a->v.s.len) == 0);
  }
}

bool hs_sql_expr_equal(const hs_sql_expr *a, const hs_sql_expr *b) {
  if (a == b) return true;
  if (a->kind != b->kind || !hs_sql_type_eq(a->type, b->type) || a->n_args != b->n_args)
    return false;
  switch (a->kind) {
  case HS_SX_COL:
    if (a->col != b->col) return false;
    break;
  case HS_SX_CONST:
    if (!value_equal(&a->value, &b->value)) return false;
    break;
  case HS_SX_PARAM:
    if (a->param != b->param) return false;
    break;
  default: break;
  }
  if (a->fn != b->fn || a->negated != b->negated || a->icase != b->icase ||
      a->has_else != b->has_else || a->which != b->which)
    return false;
  if (a->fn != NULL && a->fn->volatile_) return false;
  for (int32_t i = 0; i < a->n_args; i++)
    if (!hs_sql_expr_equal(a->args[i], b->args[i])) return false;
  return true;
}

/* ----------------------------------------------------------- builders */

static hs_status args_alloc(hs_sql_binder *b, hs_sql_expr *e, int32_t n) {
  e->args = hs_arena_alloc(b->A, sizeof(hs_sql_expr *) * (size_t)(n > 0 ? n : 1));
  if (e->args == NULL) return hs_sql_bind_nomem(b);
  e->n_args = n;
  return HS_OK;
}

/* Resolve a call of `name` over args[0..n) and build the FUNC node with
 * casts inserted. */
static hs_status make_call(hs_sql_binder *b, const char *name, hs_sql_expr **args, int32_t n,
                           int32_t pos, hs_sql_expr **out) {
  hs_sql_type types[HS_SQL_FN_ARGS_MAX];
  bool unknown[HS_SQL_FN_ARGS_MAX];
  if (n > HS_SQL_FN_ARGS_MAX)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "function %s takes at most %d arguments",
                            name, HS_SQL_FN_ARGS_MAX);
  /* concat / concat_ws take "any" arguments in PostgreSQL: ours take text,
   * so other types are cast to their text form first */
  if (strcmp(name, "concat") == 0 || strcmp(name, "concat_ws") == 0) {
    for (int32_t i = 0; i < n; i++) {
      if (is_unknown(args[i]) || args[i]->type.id == HS_SQL_TEXT ||
          args[i]->type.id == HS_SQL_NULLTYPE ||
          !hs_sql_cast_exists(args[i]->type, hs_sql_type_of(HS_SQL_TEXT)))
        continue;
      hs_status cst =
          hs_sql_expr_cast(b->A, args[i], hs_sql_type_of(HS_SQL_TEXT), &args[i], b->err);
      if (cst != HS_OK) return cst;
    }
  }
  for (int32_t i = 0; i < n; i++) types[i] = args[i]->type, unknown[i] = is_unknown(args[i]);
  hs_sql_fn_match m;
  hs_error ferr = {0};
  hs_status st = hs_sql_fn_resolve(name, types, unknown, n, &m, &ferr);
  if (st != HS_OK) {
    if (st == HS_ERR_NOT_FOUND) {
      /* "did you mean" among function names */
      const char *const *names;
      size_t nn;
      hs_sql_fn_names(&names, &nn);
      const char *best = NULL;
      int best_d = 3;
      for (size_t i = 0; i < nn; i++) {
        int d = hs_sql_edit_distance(name, names[i], best_d);
        if (d < best_d) best_d = d, best = names[i];
      }
      if (best != NULL && strcmp(best, name) != 0)
        return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s; did you mean %s?", ferr.message,
                                best);
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s", ferr.message);
    }
    return hs_sql_bind_fail(b, st, pos, "%s", ferr.message);
  }
  hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_FUNC, m.ret, pos);
  if (e == NULL || args_alloc(b, e, n) != HS_OK) return hs_sql_bind_nomem(b);
  e->fn = m.fn;
  for (int32_t i = 0; i < n; i++) {
    hs_sql_expr *a = args[i];
    if (is_unknown(a) && m.cast_to[i].id != HS_SQL_TEXT) {
      /* parse the literal as the wanted type now */
      hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_CONST, m.cast_to[i], a->pos);
      if (c == NULL) return hs_sql_bind_nomem(b);
      st = hs_sql_cast_text(a->value.v.s.ptr, a->value.v.s.len, m.cast_to[i], a->pos, b->A,
                            &c->value, b->err);
      if (st != HS_OK) {
        if (b->err_pos != NULL && *b->err_pos == 0) *b->err_pos = a->pos;
        return st;
      }
      if (hs_sql_type_is_vector(m.cast_to[i].id) && m.cast_to[i].a == 0 &&
          c->value.type.id == m.cast_to[i].id)
        c->type = c->value.type;
      else
        c->value.type = m.cast_to[i];
      e->args[i] = c;
      continue;
    }
    if (is_unknown(a)) a->aux = NULL; /* now a text constant */
    st = hs_sql_expr_cast(b->A, a, m.cast_to[i], &e->args[i], b->err);
    if (st != HS_OK) {
      if (b->err_pos != NULL && *b->err_pos == 0) *b->err_pos = a->pos;
      return st;
    }
  }
  *out = e;
  return HS_OK;
}

hs_status hs_sql_bind_binop(hs_sql_binder *b, const char *op, hs_sql_expr *l, bool l_unknown,
                            hs_sql_expr *r, bool r_unknown, int32_t pos, hs_sql_expr **out) {
  (void)l_unknown, (void)r_unknown;
  hs_sql_expr *args[2] = {l, r};
  return make_call(b, op, args, 2, pos, out);
}

static hs_status make_bool(hs_sql_binder *b, hs_sql_expr_kind kind, hs_sql_expr **args, int32_t n,
                           int32_t pos, hs_sql_expr **out) {
  hs_sql_expr *e = hs_sql_expr_new(b->A, kind, hs_sql_type_of(HS_SQL_BOOL), pos);
  if (e == NULL || args_alloc(b, e, n) != HS_OK) return hs_sql_bind_nomem(b);
  for (int32_t i = 0; i < n; i++) e->args[i] = args[i];
  *out = e;
  return HS_OK;
}

hs_status hs_sql_bind_bool_node(hs_sql_binder *b, hs_sql_expr_kind kind, hs_sql_expr **args,
                                int32_t n, int32_t pos, hs_sql_expr **out) {
  return make_bool(b, kind, args, n, pos, out);
}

hs_status hs_sql_bind_and(hs_sql_binder *b, hs_sql_expr *acc, hs_sql_expr *e, hs_sql_expr **out) {
  if (acc == NULL) {
    *out = e;
    return HS_OK;
  }
  hs_sql_expr *args[2] = {acc, e};
  return make_bool(b, HS_SX_AND, args, 2, e->pos, out);
}

/* Cast to boolean for a condition; text literals 'true' etc. allowed. */
static hs_status to_bool(hs_sql_binder *b, hs_sql_expr *e, const char *clause, hs_sql_expr **out) {
  if (e->type.id == HS_SQL_BOOL || e->type.id == HS_SQL_NULLTYPE) {
    *out = e;
    return HS_OK;
  }
  if (is_unknown(e)) {
    hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_CONST, hs_sql_type_of(HS_SQL_BOOL), e->pos);
    if (c == NULL) return hs_sql_bind_nomem(b);
    hs_status st = hs_sql_cast_text(e->value.v.s.ptr, e->value.v.s.len, hs_sql_type_of(HS_SQL_BOOL),
                                    e->pos, b->A, &c->value, b->err);
    if (st != HS_OK) return st;
    *out = c;
    return HS_OK;
  }
  char tn[64];
  return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, e->pos,
                          "argument of %s must be type boolean, not type %s", clause,
                          hs_sql_type_name(e->type, tn, sizeof tn));
}

hs_status hs_sql_bind_bool(hs_sql_binder *b, hs_sql_ectx *ec, json_t *node, const char *clause,
                           hs_sql_expr **out) {
  hs_sql_expr *e = NULL;
  hs_status st = hs_sql_bind_expr(b, ec, node, &e);
  if (st != HS_OK) return st;
  return to_bool(b, e, clause, out);
}

/* Unify branch types (CASE, COALESCE, IN lists, GREATEST): cast every
 * expression to their common type. Unknown literals take it. */
static hs_status unify(hs_sql_binder *b, hs_sql_expr **es, int32_t n, const char *what,
                       hs_sql_type *out) {
  hs_sql_type t = hs_sql_type_of(HS_SQL_NULLTYPE);
  bool have = false;
  for (int32_t i = 0; i < n; i++) {
    if (es[i] == NULL || is_unknown(es[i]) || es[i]->type.id == HS_SQL_NULLTYPE) continue;
    if (!have) {
      t = es[i]->type, have = true;
      continue;
    }
    hs_sql_type c;
    if (!hs_sql_type_common(t, es[i]->type, &c)) {
      char x[64], y[64];
      return hs_sql_bind_fail(
          b, HS_ERR_INVALID_ARG, es[i]->pos, "%s types %s and %s cannot be matched", what,
          hs_sql_type_name(t, x, sizeof x), hs_sql_type_name(es[i]->type, y, sizeof y));
    }
    t = c;
  }
  if (!have) {
    /* all unknown literals (or NULL): text, as PostgreSQL resolves them */
    bool any_text = false;
    for (int32_t i = 0; i < n; i++) any_text |= es[i] != NULL && is_unknown(es[i]);
    t = hs_sql_type_of(any_text ? HS_SQL_TEXT : HS_SQL_NULLTYPE);
  }
  for (int32_t i = 0; i < n; i++) {
    hs_sql_expr *e = es[i];
    if (e == NULL) continue;
    if (is_unknown(e)) {
      if (t.id == HS_SQL_TEXT) {
        e->aux = NULL;
        continue;
      }
      hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_CONST, t, e->pos);
      if (c == NULL) return hs_sql_bind_nomem(b);
      hs_status st =
          hs_sql_cast_text(e->value.v.s.ptr, e->value.v.s.len, t, e->pos, b->A, &c->value, b->err);
      if (st != HS_OK) return st;
      if (hs_sql_type_is_vector(t.id) && t.a == 0 && c->value.type.id == t.id)
        c->type = c->value.type;
      else
        c->value.type = t;
      es[i] = c;
      continue;
    }
    if (t.id == HS_SQL_NULLTYPE) continue;
    hs_status st = hs_sql_expr_cast(b->A, e, t, &es[i], b->err);
    if (st != HS_OK) return st;
  }
  *out = t;
  return HS_OK;
}

/* -------------------------------------------------------------- names */

int hs_sql_edit_distance(const char *a, const char *b, int cap) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 64 || m > 64) return cap;
  int prev[65], cur[65];
  for (size_t j = 0; j <= m; j++) prev[j] = (int)j;
  for (size_t i = 1; i <= n; i++) {
    cur[0] = (int)i;
    int row_min = cur[0];
    for (size_t j = 1; j <= m; j++) {
      char x = a[i - 1], y = b[j - 1];
      if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
      if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
      int c = prev[j - 1] + (x != y);
      if (prev[j] + 1 < c) c = prev[j] + 1;
      if (cur[j - 1] + 1 < c) c = cur[j - 1] + 1;
      cur[j] = c;
      if (c < row_min) row_min = c;
    }
    if (row_min >= cap) return cap;
    memcpy(prev, cur, sizeof(int) * (m + 1));
  }
  return prev[m] < cap ? prev[m] : cap;
}

static bool ieq(const char *a, const char *b) {
  for (; *a && *b; a++, b++) {
    char x = *a, y = *b;
    if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
    if (x != y) return false;
  }
  return *a == *b;
}

/* Find column `name` (qualified by `qual` when not NULL) in the scope. */
static hs_status resolve_column(hs_sql_binder *b, hs_sql_scope *sc, const char *qual,
                                const char *name, int32_t pos, int32_t *col) {
  int32_t found = -1, n_found = 0;
  for (int pass = 0; pass < 2 && n_found == 0; pass++) {
    for (int32_t i = 0; i < sc->n; i++) {
      const hs_sql_scol *c = &sc->cols[i];
      bool nm = pass == 0 ? strcmp(c->name, name) == 0 : ieq(c->name, name);
      if (!nm) continue;
      if (qual != NULL) {
        if (c->qual == NULL) continue;
        if (pass == 0 ? strcmp(c->qual, qual) != 0 : !ieq(c->qual, qual)) continue;
      } else if (c->using_of > 0) {
        continue; /* an unqualified USING column is the left one */
      }
      if (found < 0 || found != i) n_found++;
      if (found < 0) found = i;
    }
  }
  if (n_found == 1) {
    *col = found;
    return HS_OK;
  }
  if (n_found > 1)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "column reference \"%s\" is ambiguous",
                            name);
  if (qual != NULL) {
    bool known = false;
    for (int32_t i = 0; i < sc->n && !known; i++)
      known = sc->cols[i].qual != NULL && ieq(sc->cols[i].qual, qual);
    if (!known)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos,
                              "missing FROM-clause entry for table \"%s\"", qual);
  }
  const char *best = NULL;
  int best_d = 3;
  for (int32_t i = 0; i < sc->n; i++) {
    int d = hs_sql_edit_distance(name, sc->cols[i].name, best_d);
    if (d < best_d) best_d = d, best = sc->cols[i].name;
  }
  if (best != NULL)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos,
                            "column \"%s\" does not exist; did you mean \"%s\"?", name, best);
  return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "column \"%s\" does not exist", name);
}

static hs_status bind_column_ref(hs_sql_binder *b, hs_sql_ectx *ec, json_t *body,
                                 hs_sql_expr **out) {
  json_t *fields = json_object_get(body, "fields");
  int32_t pos = hs_sql_json_pos(body);
  size_t n = json_array_size(fields);
  const char *qual = NULL, *name = NULL;
  if (n == 1) {
    name = hs_sql_json_str(json_array_get(fields, 0));
  } else if (n == 2) {
    qual = hs_sql_json_str(json_array_get(fields, 0));
    name = hs_sql_json_str(json_array_get(fields, 1));
  } else if (n == 3) { /* schema.table.column: the schema is ignored */
    qual = hs_sql_json_str(json_array_get(fields, 1));
    name = hs_sql_json_str(json_array_get(fields, 2));
  }
  if (name == NULL) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "* is not allowed here");
  int32_t col = -1;
  hs_sql_type type;
  hs_status st;
  if (ec->outer != NULL) {
    /* inner names first; then the enclosing query's */
    hs_error saved = *b->err;
    int32_t saved_pos = b->err_pos != NULL ? *b->err_pos : 0;
    st = resolve_column(b, ec->sc, qual, name, pos, &col);
    if (st == HS_OK) {
      type = ec->sc->cols[col].type;
      col += ec->inner_base;
    } else if (strstr(b->err->message, "ambiguous") != NULL) {
      return st;
    } else {
      hs_error inner_err = *b->err;
      *b->err = saved;
      if (b->err_pos != NULL) *b->err_pos = saved_pos;
      st = resolve_column(b, ec->outer, qual, name, pos, &col);
      if (st != HS_OK) {
        *b->err = inner_err;
        return st;
      }
      type = ec->outer->cols[col].type;
    }
  } else {
    st = resolve_column(b, ec->sc, qual, name, pos, &col);
    if (st != HS_OK) return st;
    type = ec->sc->cols[col].type;
  }
  hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_COL, type, pos);
  if (e == NULL) return hs_sql_bind_nomem(b);
  e->col = col;
  *out = e;
  return HS_OK;
}

/* ----------------------------------------------------------- literals */

/* Integer constants <= 0 are missing from libpg_query's JSON (see
 * src/query/expr_parse.c); read the digits at the location. */
static bool int_at(hs_sql_binder *b, int32_t pos, int64_t *out) {
  if (pos <= 0 || (size_t)pos > b->len) return false;
  size_t i = (size_t)pos - 1;
  const char *s = b->sql;
  while (i < b->len && (s[i] == '-' || s[i] == '+' || s[i] == ' ' || s[i] == '(' || s[i] == '\t' ||
                        s[i] == '\n' || s[i] == '\r'))
    i++;
  int64_t v = 0;
  size_t d = 0;
  while (i < b->len && s[i] >= '0' && s[i] <= '9' && d < 18) v = v * 10 + (s[i++] - '0'), d++;
  if (d == 0) return false;
  *out = -v; /* the JSON dropped it, so it was <= 0 */
  return true;
}

/* NUMERIC constant from its text: precision and scale as written. */
static hs_status numeric_const(hs_sql_binder *b, const char *text, int32_t pos, hs_sql_expr **out) {
  /* exponent forms and very long literals become float8 (PostgreSQL keeps
   * numeric; we note the difference in README) */
  size_t len = strlen(text);
  int digits = 0, scale = 0;
  bool dot = false, expo = false;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (c == '.')
      dot = true;
    else if (c == 'e' || c == 'E')
      expo = true;
    else if (c >= '0' && c <= '9') {
      digits++;
      if (dot) scale++;
    }
  }
  hs_sql_type t;
  if (expo || digits > 38) {
    t = hs_sql_type_of(HS_SQL_FLOAT64);
  } else {
    t = hs_sql_type_of(HS_SQL_NUMERIC);
    t.a = digits > scale ? digits : scale + 1;
    if (t.a < 1) t.a = 1;
    t.b = scale;
  }
  hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_CONST, t, pos);
  if (e == NULL) return hs_sql_bind_nomem(b);
  hs_status st = hs_sql_cast_text(text, len, t, pos, b->A, &e->value, b->err);
  if (st != HS_OK) return st;
  e->value.type = t;
  *out = e;
  return HS_OK;
}

static hs_status bind_const(hs_sql_binder *b, json_t *body, hs_sql_expr **out) {
  int32_t pos = hs_sql_json_pos(body);
  json_t *v;
  hs_sql_expr *e;
  if (json_is_true(json_object_get(body, "isnull"))) {
    e = hs_sql_expr_new(b->A, HS_SX_CONST, hs_sql_type_of(HS_SQL_NULLTYPE), pos);
    if (e == NULL) return hs_sql_bind_nomem(b);
    e->value.is_null = true;
    *out = e;
    return HS_OK;
  }
  if ((v = json_object_get(body, "ival")) != NULL) {
    json_t *iv = json_object_get(v, "ival");
    int64_t x = 0;
    if (iv != NULL)
      x = json_integer_value(iv);
    else if (!int_at(b, pos, &x))
      x = 0;
    bool small = x >= INT32_MIN && x <= INT32_MAX;
    e = hs_sql_expr_new(b->A, HS_SX_CONST, hs_sql_type_of(small ? HS_SQL_INT32 : HS_SQL_INT64),
                        pos);
    if (e == NULL) return hs_sql_bind_nomem(b);
    if (small)
      e->value.v.i32 = (int32_t)x;
    else
      e->value.v.i64 = x;
    *out = e;
    return HS_OK;
  }
  if ((v = json_object_get(body, "fval")) != NULL) {
    const char *f = json_string_value(json_object_get(v, "fval"));
    if (f == NULL) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "malformed number");
    /* The parser gives an integer too large for int32 as fval: like
     * PostgreSQL's make_const, one that fits int64 is a bigint (so
     * q * 3000000000 is bigint arithmetic), a larger one numeric. */
    if (f[0] != '\0' && strspn(f, "0123456789") == strlen(f) && strlen(f) <= 19) {
      errno = 0;
      char *end = NULL;
      unsigned long long u = strtoull(f, &end, 10);
      if (errno == 0 && end != NULL && *end == '\0' && u <= (unsigned long long)INT64_MAX) {
        e = hs_sql_expr_new(b->A, HS_SX_CONST, hs_sql_type_of(HS_SQL_INT64), pos);
        if (e == NULL) return hs_sql_bind_nomem(b);
        e->value.v.i64 = (int64_t)u;
        *out = e;
        return HS_OK;
      }
    }
    return numeric_const(b, f, pos, out);
  }
  if ((v = json_object_get(body, "boolval")) != NULL) {
    e = hs_sql_expr_new(b->A, HS_SX_CONST, hs_sql_type_of(HS_SQL_BOOL), pos);
    if (e == NULL) return hs_sql_bind_nomem(b);
    e->value.v.b = json_is_true(json_object_get(v, "boolval"));
    *out = e;
    return HS_OK;
  }
  if ((v = json_object_get(body, "sval")) != NULL) {
    json_t *sv = json_object_get(v, "sval");
    const char *s = sv != NULL ? json_string_value(sv) : "";
    size_t n = sv != NULL ? json_string_length(sv) : 0;
    e = hs_sql_expr_new(b->A, HS_SX_CONST, hs_sql_type_of(HS_SQL_TEXT), pos);
    char *copy = hs_arena_strndup(b->A, s, n);
    if (e == NULL || copy == NULL) return hs_sql_bind_nomem(b);
    e->value.v.s.ptr = copy;
    e->value.v.s.len = (uint32_t)n;
    e->aux = (void *)(uintptr_t)UNKNOWN_LIT;
    *out = e;
    return HS_OK;
  }
  if ((v = json_object_get(body, "bsval")) != NULL) {
    const char *s = json_string_value(json_object_get(v, "bsval"));
    if (s == NULL) s = "";
    if (s[0] == 'x' || s[0] == 'X')
      return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos,
                              "hexadecimal bit strings are not supported");
    if (s[0] == 'b' || s[0] == 'B') s++;
    hs_sql_type t = hs_sql_type_of(HS_SQL_BIT);
    t.a = (int32_t)strlen(s);
    e = hs_sql_expr_new(b->A, HS_SX_CONST, t, pos);
    if (e == NULL) return hs_sql_bind_nomem(b);
    hs_status st = hs_sql_cast_text(s, strlen(s), t, pos, b->A, &e->value, b->err);
    if (st != HS_OK) return st;
    e->value.type = t;
    *out = e;
    return HS_OK;
  }
  e = hs_sql_expr_new(b->A, HS_SX_CONST, hs_sql_type_of(HS_SQL_NULLTYPE), pos);
  if (e == NULL) return hs_sql_bind_nomem(b);
  e->value.is_null = true;
  *out = e;
  return HS_OK;
}

/* The type named by a TypeName node. */
static hs_status type_of_name(hs_sql_binder *b, json_t *tn, hs_sql_type *out) {
  json_t *names = json_object_get(tn, "names");
  const char *name = hs_sql_json_last_name(names);
  int32_t pos = hs_sql_json_pos(tn);
  if (name == NULL) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "malformed type name");
  if (json_array_size(json_object_get(tn, "arrayBounds")) > 0)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos, "array types are not supported");
  int32_t mods[4];
  int n_mods = 0;
  json_t *tm = json_object_get(tn, "typmods");
  size_t i;
  json_t *m;
  json_array_foreach(tm, i, m) {
    if (n_mods >= 4) break;
    json_t *cb;
    const char *ct = hs_sql_json_type(m, &cb);
    if (ct == NULL || strcmp(ct, "A_Const") != 0)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos,
                              "type modifiers must be integer constants");
    json_t *iv = json_object_get(json_object_get(cb, "ival"), "ival");
    int64_t x = 0;
    if (iv != NULL)
      x = json_integer_value(iv);
    else if (json_object_get(cb, "ival") == NULL)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, hs_sql_json_pos(cb),
                              "type modifiers must be integers");
    if (x < 0 || x > 1000000)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, hs_sql_json_pos(cb),
                              "type modifier %lld is out of range", (long long)x);
    mods[n_mods++] = (int32_t)x;
  }
  char why[160] = "";
  if (!hs_sql_type_from_name(name, mods, n_mods, out, why, sizeof why))
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s", why[0] ? why : "unknown type");
  return HS_OK;
}

static hs_status bind_cast(hs_sql_binder *b, hs_sql_ectx *ec, json_t *body, hs_sql_expr **out) {
  hs_sql_type t;
  hs_status st = type_of_name(b, json_object_get(body, "typeName"), &t);
  if (st != HS_OK) return st;
  hs_sql_expr *arg = NULL;
  if ((st = hs_sql_bind_expr(b, ec, json_object_get(body, "arg"), &arg)) != HS_OK) return st;
  int32_t pos = hs_sql_json_pos(body);
  if (is_unknown(arg)) {
    hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_CONST, t, pos);
    if (c == NULL) return hs_sql_bind_nomem(b);
    st = hs_sql_cast_text(arg->value.v.s.ptr, arg->value.v.s.len, t, arg->pos, b->A, &c->value,
                          b->err);
    if (st != HS_OK) {
      if (b->err_pos != NULL && *b->err_pos == 0) *b->err_pos = arg->pos;
      return st;
    }
    if (c->value.type.id == t.id && hs_sql_type_is_vector(t.id) && t.a == 0)
      c->type = c->value.type; /* '[1,2,3]'::vector is a vector(3) */
    else
      c->value.type = t;
    *out = c;
    return HS_OK;
  }
  if (arg->type.id == HS_SQL_NULLTYPE) {
    hs_sql_expr *c = hs_sql_expr_new(b->A, HS_SX_CONST, t, pos);
    if (c == NULL) return hs_sql_bind_nomem(b);
    c->value.is_null = true;
    *out = c;
    return HS_OK;
  }
  arg->pos = arg->pos ? arg->pos : pos;
  st = hs_sql_expr_cast(b->A, arg, t, out, b->err);
  if (st != HS_OK && b->err_pos != NULL && *b->err_pos == 0) *b->err_pos = pos;
  return st;
}

/* --------------------------------------------------------- operators */

/* A JSON array of nodes, or a List node ({"List": {"items": [...]}}, as
 * libpg_query writes IN lists and BETWEEN bounds): its items. */
static json_t *items_of(json_t *list) {
  if (json_is_array(list) || list == NULL) return list;
  json_t *l = json_object_get(list, "List");
  return l != NULL ? json_object_get(l, "items") : list;
}

static hs_status bind_list(hs_sql_binder *b, hs_sql_ectx *ec, json_t *list, hs_sql_expr ***out,
                           int32_t *n_out) {
  list = items_of(list);
  size_t n = json_array_size(list);
  hs_sql_expr **v = hs_arena_alloc(b->A, sizeof(*v) * (n + 1));
  if (v == NULL) return hs_sql_bind_nomem(b);
  for (size_t i = 0; i < n; i++) {
    hs_status st = hs_sql_bind_expr(b, ec, json_array_get(list, i), &v[i]);
    if (st != HS_OK) return st;
  }
  *out = v;
  *n_out = (int32_t)n;
  return HS_OK;
}

static hs_status bind_in(hs_sql_binder *b, hs_sql_expr *x, hs_sql_expr **vals, int32_t n,
                         bool negated, int32_t pos, hs_sql_expr **out) {
  hs_sql_expr **all = hs_arena_alloc(b->A, sizeof(*all) * (size_t)(n + 1));
  if (all == NULL) return hs_sql_bind_nomem(b);
  all[0] = x;
  for (int32_t i = 0; i < n; i++) all[i + 1] = vals[i];
  hs_sql_type t;
  hs_status st = unify(b, all, n + 1, "IN", &t);
  if (st != HS_OK) return st;
  hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_IN, hs_sql_type_of(HS_SQL_BOOL), pos);
  if (e == NULL) return hs_sql_bind_nomem(b);
  e->args = all;
  e->n_args = n + 1;
  e->negated = negated;
  /* the "=" of the common type */
  hs_sql_type ts[2] = {t.id == HS_SQL_NULLTYPE ? hs_sql_type_of(HS_SQL_TEXT) : t,
                       t.id == HS_SQL_NULLTYPE ? hs_sql_type_of(HS_SQL_TEXT) : t};
  hs_sql_fn_match m;
  hs_error ferr = {0};
  if (hs_sql_fn_resolve("=", ts, NULL, 2, &m, &ferr) != HS_OK)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "IN: %s", ferr.message);
  e->fn = m.fn;
  if (t.id == HS_SQL_NULLTYPE)
    for (int32_t i = 0; i <= n; i++)
      if ((st = hs_sql_expr_cast(b->A, all[i], ts[0], &all[i], b->err)) != HS_OK) return st;
  *out = e;
  return HS_OK;
}

static hs_status bind_subquery_values(hs_sql_binder *b, json_t *sub, int32_t pos, bool want_one_col,
                                      hs_sql_expr ***vals, int32_t *n_vals, hs_sql_type *col_type);

static hs_status bind_a_expr(hs_sql_binder *b, hs_sql_ectx *ec, json_t *body, hs_sql_expr **out) {
  const char *kind = json_string_value(json_object_get(body, "kind"));
  const char *op = hs_sql_json_last_name(json_object_get(body, "name"));
  int32_t pos = hs_sql_json_pos(body);
  json_t *lj = json_object_get(body, "lexpr"), *rj = json_object_get(body, "rexpr");
  hs_sql_expr *l = NULL, *r = NULL;
  hs_status st;
  if (kind == NULL || op == NULL)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "malformed operator");
  if (strcmp(kind, "AEXPR_IN") == 0) {
    if ((st = hs_sql_bind_expr(b, ec, lj, &l)) != HS_OK) return st;
    hs_sql_expr **vals;
    int32_t n;
    if ((st = bind_list(b, ec, rj, &vals, &n)) != HS_OK) return st;
    return bind_in(b, l, vals, n, strcmp(op, "<>") == 0, pos, out);
  }
  if (strcmp(kind, "AEXPR_BETWEEN") == 0 || strcmp(kind, "AEXPR_NOT_BETWEEN") == 0 ||
      strcmp(kind, "AEXPR_BETWEEN_SYM") == 0 || strcmp(kind, "AEXPR_NOT_BETWEEN_SYM") == 0) {
    if (strstr(kind, "SYM") != NULL)
      return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos, "BETWEEN SYMMETRIC is not supported");
    bool neg = strstr(kind, "NOT") != NULL;
    rj = items_of(rj);
    if (json_array_size(rj) != 2)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "malformed BETWEEN");
    hs_sql_expr *lo = NULL, *hi = NULL, *x2 = NULL;
    if ((st = hs_sql_bind_expr(b, ec, lj, &l)) != HS_OK ||
        (st = hs_sql_bind_expr(b, ec, json_array_get(rj, 0), &lo)) != HS_OK ||
        (st = hs_sql_bind_expr(b, ec, json_array_get(rj, 1), &hi)) != HS_OK ||
        (st = hs_sql_bind_expr(b, ec, lj, &x2)) != HS_OK)
      return st;
    hs_sql_expr *ge = NULL, *le = NULL;
    if ((st = hs_sql_bind_binop(b, neg ? "<" : ">=", l, false, lo, false, pos, &ge)) != HS_OK ||
        (st = hs_sql_bind_binop(b, neg ? ">" : "<=", x2, false, hi, false, pos, &le)) != HS_OK)
      return st;
    hs_sql_expr *args[2] = {ge, le};
    return make_bool(b, neg ? HS_SX_OR : HS_SX_AND, args, 2, pos, out);
  }
  if (strcmp(kind, "AEXPR_LIKE") == 0 || strcmp(kind, "AEXPR_ILIKE") == 0) {
    if ((st = hs_sql_bind_expr(b, ec, lj, &l)) != HS_OK) return st;
    json_t *rb;
    const char *rt = hs_sql_json_type(rj, &rb);
    hs_sql_expr *esc = NULL;
    /* LIKE ... ESCAPE e arrives as like_escape(pattern, e) */
    if (rt != NULL && strcmp(rt, "FuncCall") == 0) {
      const char *fn = hs_sql_json_last_name(json_object_get(rb, "funcname"));
      json_t *fa = json_object_get(rb, "args");
      if (fn != NULL && strcmp(fn, "like_escape") == 0 && json_array_size(fa) == 2) {
        if ((st = hs_sql_bind_expr(b, ec, json_array_get(fa, 0), &r)) != HS_OK ||
            (st = hs_sql_bind_expr(b, ec, json_array_get(fa, 1), &esc)) != HS_OK)
          return st;
      }
    }
    if (r == NULL && (st = hs_sql_bind_expr(b, ec, rj, &r)) != HS_OK) return st;
    hs_sql_expr *es[3] = {l, r, esc};
    int32_t n = esc != NULL ? 3 : 2;
    for (int32_t i = 0; i < n; i++) {
      if (is_unknown(es[i])) {
        es[i]->aux = NULL;
        continue;
      }
      if (es[i]->type.id == HS_SQL_TEXT) continue;
      if (es[i]->type.id == HS_SQL_NULLTYPE || hs_sql_type_is_string(es[i]->type.id) || true) {
        char tn[64];
        if (es[i]->type.id != HS_SQL_NULLTYPE && es[i]->type.id != HS_SQL_TEXT)
          return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, es[i]->pos,
                                  "operator does not exist: %s %s text (LIKE needs text; add a "
                                  "cast)",
                                  hs_sql_type_name(es[i]->type, tn, sizeof tn),
                                  strstr(op, "*") ? "ILIKE" : "LIKE");
        if ((st = hs_sql_expr_cast(b->A, es[i], hs_sql_type_of(HS_SQL_TEXT), &es[i], b->err)) !=
            HS_OK)
          return st;
      }
    }
    hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_LIKE, hs_sql_type_of(HS_SQL_BOOL), pos);
    if (e == NULL || args_alloc(b, e, n) != HS_OK) return hs_sql_bind_nomem(b);
    for (int32_t i = 0; i < n; i++) e->args[i] = es[i];
    e->negated = op[0] == '!';
    e->icase = strcmp(kind, "AEXPR_ILIKE") == 0;
    *out = e;
    return HS_OK;
  }
  if (strcmp(kind, "AEXPR_NULLIF") == 0) {
    if ((st = hs_sql_bind_expr(b, ec, lj, &l)) != HS_OK ||
        (st = hs_sql_bind_expr(b, ec, rj, &r)) != HS_OK)
      return st;
    hs_sql_expr *both[2] = {l, r};
    hs_sql_type t;
    if ((st = unify(b, both, 2, "NULLIF", &t)) != HS_OK) return st;
    hs_sql_expr *eq = NULL;
    if ((st = hs_sql_bind_binop(b, "=", both[0], false, both[1], false, pos, &eq)) != HS_OK)
      return st;
    hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_NULLIF, both[0]->type, pos);
    if (e == NULL || args_alloc(b, e, 2) != HS_OK) return hs_sql_bind_nomem(b);
    e->args[0] = both[0], e->args[1] = both[1];
    e->fn = eq->fn;
    *out = e;
    return HS_OK;
  }
  if (strcmp(kind, "AEXPR_DISTINCT") == 0 || strcmp(kind, "AEXPR_NOT_DISTINCT") == 0) {
    /* a IS DISTINCT FROM b = NOT COALESCE(a = b, a IS NULL AND b IS NULL) */
    hs_sql_expr *l2 = NULL, *r2 = NULL;
    if ((st = hs_sql_bind_expr(b, ec, lj, &l)) != HS_OK ||
        (st = hs_sql_bind_expr(b, ec, rj, &r)) != HS_OK ||
        (st = hs_sql_bind_expr(b, ec, lj, &l2)) != HS_OK ||
        (st = hs_sql_bind_expr(b, ec, rj, &r2)) != HS_OK)
      return st;
    hs_sql_expr *eq = NULL, *ln = NULL, *rn = NULL, *both = NULL, *co = NULL;
    if ((st = hs_sql_bind_binop(b, "=", l, false, r, false, pos, &eq)) != HS_OK) return st;
    if ((st = make_bool(b, HS_SX_ISNULL, &l2, 1, pos, &ln)) != HS_OK ||
        (st = make_bool(b, HS_SX_ISNULL, &r2, 1, pos, &rn)) != HS_OK)
      return st;
    hs_sql_expr *nn[2] = {ln, rn};
    if ((st = make_bool(b, HS_SX_AND, nn, 2, pos, &both)) != HS_OK) return st;
    hs_sql_expr *cs[2] = {eq, both};
    if ((st = make_bool(b, HS_SX_COALESCE, cs, 2, pos, &co)) != HS_OK) return st;
    if (strcmp(kind, "AEXPR_NOT_DISTINCT") == 0) {
      *out = co;
      return HS_OK;
    }
    return make_bool(b, HS_SX_NOT, &co, 1, pos, out);
  }
  if (strcmp(kind, "AEXPR_OP_ANY") == 0 || strcmp(kind, "AEXPR_OP_ALL") == 0)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos, "%s with arrays is not supported",
                            strcmp(kind, "AEXPR_OP_ANY") == 0 ? "ANY" : "ALL");
  if (strcmp(kind, "AEXPR_OP") != 0)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos, "operator form %s is not supported", kind);
  if (lj == NULL) {
    /* prefix operator: -x, +x, ~x, |/x */
    if ((st = hs_sql_bind_expr(b, ec, rj, &r)) != HS_OK) return st;
    if (strcmp(op, "+") == 0) {
      *out = r;
      return HS_OK;
    }
    /* fold -<numeric literal> so that -2147483648 is an int4 */
    if (strcmp(op, "-") == 0 && r->kind == HS_SX_CONST && !r->value.is_null) {
      if (r->type.id == HS_SQL_INT32 && r->value.v.i32 != INT32_MIN) {
        r->value.v.i32 = -r->value.v.i32;
        r->pos = pos;
        *out = r;
        return HS_OK;
      }
      if (r->type.id == HS_SQL_INT64 && r->value.v.i64 == (int64_t)INT32_MAX + 1) {
        r->type = r->value.type = hs_sql_type_of(HS_SQL_INT32);
        r->value.v.i32 = INT32_MIN;
        r->pos = pos;
        *out = r;
        return HS_OK;
      }
      if (r->type.id == HS_SQL_INT64 && r->value.v.i64 != INT64_MIN) {
        r->value.v.i64 = -r->value.v.i64;
        r->pos = pos;
        *out = r;
        return HS_OK;
      }
      if (r->type.id == HS_SQL_NUMERIC) {
        r->value.v.dec = -r->value.v.dec;
        r->pos = pos;
        *out = r;
        return HS_OK;
      }
      if (r->type.id == HS_SQL_FLOAT64) {
        r->value.v.f64 = -r->value.v.f64;
        r->pos = pos;
        *out = r;
        return HS_OK;
      }
    }
    hs_sql_expr *args[1] = {r};
    return make_call(b, op, args, 1, pos, out);
  }
  if ((st = hs_sql_bind_expr(b, ec, lj, &l)) != HS_OK) return st;
  if (rj == NULL)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos, "postfix operators are not supported");
  if ((st = hs_sql_bind_expr(b, ec, rj, &r)) != HS_OK) return st;
  /* two unknown literals compare as text */
  if (is_unknown(l) && is_unknown(r)) l->aux = NULL, r->aux = NULL;
  return hs_sql_bind_binop(b, op, l, false, r, false, pos, out);
}

/* ------------------------------------------------------ function calls */

static hs_status bind_agg_call(hs_sql_binder *b, hs_sql_ectx *ec, json_t *body, const char *name,
                               hs_sql_aggcall *call) {
  int32_t pos = hs_sql_json_pos(body);
  memset(call, 0, sizeof(*call));
  hs_sql_ectx inner = {.sc = ec->am != NULL ? ec->am->from : ec->sc};
  json_t *args = json_object_get(body, "args");
  bool star = json_is_true(json_object_get(body, "agg_star"));
  if (json_object_get(body, "agg_order") != NULL)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos,
                            "ORDER BY inside an aggregate is not supported");
  if (hs_sql_json_has_agg(args))
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos,
                            "aggregate function calls cannot be nested");
  hs_status st;
  if (!star && (st = bind_list(b, &inner, args, &call->args, &call->n_args)) != HS_OK) return st;
  if (star && strcmp(name, "count") != 0)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s(*) does not exist", name);
  hs_sql_type types[HS_SQL_FN_ARGS_MAX];
  if (call->n_args > HS_SQL_FN_ARGS_MAX)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "too many arguments");
  for (int32_t i = 0; i < call->n_args; i++) {
    if (is_unknown(call->args[i])) call->args[i]->aux = NULL;
    types[i] = call->args[i]->type;
  }
  hs_error aerr = {0};
  if ((st = hs_sql_agg_resolve(name, types, call->n_args, &call->m, &aerr)) != HS_OK)
    return hs_sql_bind_fail(b, st == HS_ERR_NOT_FOUND ? HS_ERR_INVALID_ARG : st, pos, "%s",
                            aerr.message);
  if (call->n_args == 1 && (st = hs_sql_expr_cast(b->A, call->args[0], call->m.cast_to,
                                                  &call->args[0], b->err)) != HS_OK)
    return st;
  call->distinct = json_is_true(json_object_get(body, "agg_distinct"));
  json_t *filter = json_object_get(body, "agg_filter");
  if (filter != NULL &&
      (st = hs_sql_bind_bool(b, &inner, filter, "FILTER", &call->filter)) != HS_OK)
    return st;
  return HS_OK;
}

static hs_status bind_window_call(hs_sql_binder *b, hs_sql_ectx *ec, json_t *body, const char *name,
                                  hs_sql_expr **out) {
  int32_t pos = hs_sql_json_pos(body);
  if (ec->wm == NULL)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "window functions are not allowed here");
  json_t *over = json_object_get(body, "over");
  if (json_object_get(over, "name") != NULL || json_object_get(over, "refname") != NULL)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos, "named windows are not supported");
  hs_sql_wincall call;
  memset(&call, 0, sizeof call);
  hs_sql_type ret;
  hs_status st;
  /* partition and order keys bind like the select list (after grouping) */
  hs_sql_ectx kec = *ec;
  kec.wm = NULL;
  if (strcmp(name, "row_number") == 0 || strcmp(name, "rank") == 0 ||
      strcmp(name, "dense_rank") == 0) {
    call.fn = name[0] == 'r' && name[1] == 'o' ? HS_SW_ROW_NUMBER
              : name[0] == 'r'                 ? HS_SW_RANK
                                               : HS_SW_DENSE_RANK;
    if (json_array_size(json_object_get(body, "args")) != 0)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s takes no arguments", name);
    ret = hs_sql_type_of(HS_SQL_INT64);
  } else if (strcmp(name, "ntile") == 0 || strcmp(name, "percent_rank") == 0 ||
             strcmp(name, "cume_dist") == 0) {
    bool nt = name[0] == 'n';
    call.fn = nt ? HS_SW_NTILE : name[0] == 'p' ? HS_SW_PERCENT_RANK : HS_SW_CUME_DIST;
    json_t *args = json_object_get(body, "args");
    if (json_array_size(args) != (nt ? 1u : 0u))
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s takes %s", name,
                              nt ? "one argument (the number of buckets)" : "no arguments");
    if ((st = bind_list(b, &kec, args, &call.agg.args, &call.agg.n_args)) != HS_OK) return st;
    if (nt && !hs_sql_type_is_int(call.agg.args[0]->type.id) &&
        call.agg.args[0]->type.id != HS_SQL_NULLTYPE)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "argument of ntile must be an integer");
    if (nt && (st = hs_sql_expr_cast(b->A, call.agg.args[0], hs_sql_type_of(HS_SQL_INT64),
                                     &call.agg.args[0], b->err)) != HS_OK)
      return st;
    ret = hs_sql_type_of(nt ? HS_SQL_INT64 : HS_SQL_FLOAT64);
    call.agg.m.ret = ret;
  } else if (strcmp(name, "lag") == 0 || strcmp(name, "lead") == 0 ||
             strcmp(name, "first_value") == 0 || strcmp(name, "last_value") == 0 ||
             strcmp(name, "nth_value") == 0) {
    bool shift = strcmp(name, "lag") == 0 || strcmp(name, "lead") == 0;
    call.fn = strcmp(name, "lag") == 0           ? HS_SW_LAG
              : strcmp(name, "lead") == 0        ? HS_SW_LEAD
              : strcmp(name, "first_value") == 0 ? HS_SW_FIRST_VALUE
              : strcmp(name, "last_value") == 0  ? HS_SW_LAST_VALUE
                                                 : HS_SW_NTH_VALUE;
    json_t *args = json_object_get(body, "args");
    size_t na = json_array_size(args);
    size_t lo = call.fn == HS_SW_NTH_VALUE ? 2 : 1, hi = shift ? 3 : lo;
    if (na < lo || na > hi)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s takes %s", name,
                              shift                        ? "1 to 3 arguments"
                              : call.fn == HS_SW_NTH_VALUE ? "2 arguments"
                                                           : "one argument");
    if ((st = bind_list(b, &kec, args, &call.agg.args, &call.agg.n_args)) != HS_OK) return st;
    hs_sql_expr **a = call.agg.args;
    ret = a[0]->type;
    if (na == 3 && !hs_sql_type_common(a[0]->type, a[2]->type, &ret)) {
      char x[64], y[64];
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, a[2]->pos,
                              "%s: the default's type %s does not match the value's %s", name,
                              hs_sql_type_name(a[2]->type, y, sizeof y),
                              hs_sql_type_name(a[0]->type, x, sizeof x));
    }
    for (size_t i = 0; i < na; i++) {
      hs_sql_type want = i == 1 ? hs_sql_type_of(HS_SQL_INT64) : ret;
      if (i == 1 && !hs_sql_type_is_int(a[1]->type.id) && a[1]->type.id != HS_SQL_NULLTYPE)
        return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, a[1]->pos,
                                "%s: the offset must be an integer", name);
      if (!hs_sql_type_eq(a[i]->type, want) &&
          (st = hs_sql_expr_cast(b->A, a[i], want, &a[i], b->err)) != HS_OK)
        return st;
    }
    call.agg.m.ret = ret;
  } else if (hs_sql_agg_exists(name)) {
    call.fn = HS_SW_AGG;
    /* the aggregate's arguments bind in the window's input scope */
    hs_sql_ectx aec = kec;
    aec.am = NULL;
    if (ec->am != NULL) {
      /* over a grouped query: arguments are post-aggregation expressions */
      json_t *args = json_object_get(body, "args");
      memset(&call.agg, 0, sizeof call.agg);
      if ((st = bind_list(b, &kec, args, &call.agg.args, &call.agg.n_args)) != HS_OK) return st;
      hs_sql_type types[HS_SQL_FN_ARGS_MAX];
      for (int32_t i = 0; i < call.agg.n_args && i < HS_SQL_FN_ARGS_MAX; i++)
        types[i] = call.agg.args[i]->type;
      hs_error aerr = {0};
      if ((st = hs_sql_agg_resolve(name, types, call.agg.n_args, &call.agg.m, &aerr)) != HS_OK)
        return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s", aerr.message);
      if (call.agg.n_args == 1 && (st = hs_sql_expr_cast(b->A, call.agg.args[0], call.agg.m.cast_to,
                                                         &call.agg.args[0], b->err)) != HS_OK)
        return st;
    } else if ((st = bind_agg_call(b, &aec, body, name, &call.agg)) != HS_OK) {
      return st;
    }
    ret = call.agg.m.ret;
  } else {
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos, "window function %s is not supported",
                            name);
  }
  json_t *part = json_object_get(over, "partitionClause");
  if ((st = bind_list(b, &kec, part, &call.partition, &call.n_partition)) != HS_OK) return st;
  json_t *order = json_object_get(over, "orderClause");
  size_t no = json_array_size(order);
  call.order = hs_arena_alloc(b->A, sizeof(hs_sql_sortkey) * (no + 1));
  if (call.order == NULL) return hs_sql_bind_nomem(b);
  for (size_t i = 0; i < no; i++) {
    json_t *sb = json_object_get(json_array_get(order, i), "SortBy");
    const char *dir = json_string_value(json_object_get(sb, "sortby_dir"));
    const char *nulls = json_string_value(json_object_get(sb, "sortby_nulls"));
    hs_sql_sortkey *k = &call.order[i];
    k->desc = dir != NULL && strcmp(dir, "SORTBY_DESC") == 0;
    k->nulls_first = k->desc;
    if (nulls != NULL && strcmp(nulls, "SORTBY_NULLS_FIRST") == 0) k->nulls_first = true;
    if (nulls != NULL && strcmp(nulls, "SORTBY_NULLS_LAST") == 0) k->nulls_first = false;
    if ((st = hs_sql_bind_expr(b, &kec, json_object_get(sb, "node"), &k->expr)) != HS_OK) return st;
  }
  call.n_order = (int32_t)no;
  int fo = (int)json_integer_value(json_object_get(over, "frameOptions"));
  /* PostgreSQL's frame option bits: 1058 is the default frame; 307 / 309
   * are RANGE / ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING */
  if (fo != 0 && fo != 1058) {
    if (fo == 307 || fo == 309)
      call.whole = true;
    else
      return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos,
                              "window frames other than the default and the whole partition are "
                              "not supported");
  }
  hs_sql_winmode *wm = ec->wm;
  if (wm->n_calls == wm->cap_calls) {
    int32_t nc = wm->cap_calls ? wm->cap_calls * 2 : 8;
    hs_sql_wincall *gc = hs_arena_alloc(b->A, sizeof(*gc) * (size_t)nc);
    hs_sql_type *gt = hs_arena_alloc(b->A, sizeof(*gt) * (size_t)nc);
    const char **gn = hs_arena_alloc(b->A, sizeof(*gn) * (size_t)nc);
    if (gc == NULL || gt == NULL || gn == NULL) return hs_sql_bind_nomem(b);
    if (wm->n_calls) {
      memcpy(gc, wm->calls, sizeof(*gc) * (size_t)wm->n_calls);
      memcpy(gt, wm->types, sizeof(*gt) * (size_t)wm->n_calls);
      memcpy(gn, wm->names, sizeof(*gn) * (size_t)wm->n_calls);
    }
    wm->calls = gc, wm->types = gt, wm->names = gn, wm->cap_calls = nc;
  }
  const char *kept = hs_arena_strndup(b->A, name, strlen(name)); /* `name` is the caller's buffer */
  if (kept == NULL) return hs_sql_bind_nomem(b);
  int32_t idx = wm->n_calls++;
  wm->calls[idx] = call;
  wm->types[idx] = ret;
  wm->names[idx] = kept;
  hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_COL, ret, pos);
  if (e == NULL) return hs_sql_bind_nomem(b);
  e->col = HS_SQL_WIN_PLACEHOLDER - idx;
  *out = e;
  return HS_OK;
}

static hs_status bind_func_call(hs_sql_binder *b, hs_sql_ectx *ec, json_t *body,
                                hs_sql_expr **out) {
  json_t *fname = json_object_get(body, "funcname");
  const char *name = hs_sql_json_last_name(fname);
  int32_t pos = hs_sql_json_pos(body);
  if (name == NULL) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "malformed function call");
  char lname[64];
  size_t nl = strlen(name);
  if (nl >= sizeof lname)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "function name too long");
  for (size_t i = 0; i <= nl; i++) {
    char c = name[i];
    lname[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  if (json_object_get(body, "over") != NULL) return bind_window_call(b, ec, body, lname, out);
  if (hs_sql_agg_exists(lname)) {
    if (ec->am == NULL)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos,
                              "aggregate functions are not allowed here");
    hs_sql_aggcall call;
    hs_status st = bind_agg_call(b, ec, body, lname, &call);
    if (st != HS_OK) return st;
    hs_sql_aggmode *am = ec->am;
    int32_t idx = -1;
    for (int32_t i = 0; i < am->n_aggs && idx < 0; i++) {
      hs_sql_aggcall *o = &am->aggs[i];
      if (o->m.agg != call.m.agg || o->n_args != call.n_args || o->distinct != call.distinct ||
          (o->filter == NULL) != (call.filter == NULL))
        continue;
      bool same = o->filter == NULL || hs_sql_expr_equal(o->filter, call.filter);
      for (int32_t k = 0; k < o->n_args && same; k++)
        same = hs_sql_expr_equal(o->args[k], call.args[k]);
      if (same) idx = i;
    }
    if (idx < 0) {
      if (am->n_aggs == am->cap_aggs) {
        int32_t nc = am->cap_aggs ? am->cap_aggs * 2 : 8;
        hs_sql_aggcall *g = hs_arena_alloc(b->A, sizeof(*g) * (size_t)nc);
        if (g == NULL) return hs_sql_bind_nomem(b);
        if (am->n_aggs) memcpy(g, am->aggs, sizeof(*g) * (size_t)am->n_aggs);
        am->aggs = g, am->cap_aggs = nc;
      }
      idx = am->n_aggs++;
      am->aggs[idx] = call;
    }
    hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_COL, call.m.ret, pos);
    if (e == NULL) return hs_sql_bind_nomem(b);
    e->col = am->n_keys + idx;
    *out = e;
    return HS_OK;
  }
  if (json_is_true(json_object_get(body, "agg_star")) ||
      json_is_true(json_object_get(body, "agg_distinct")))
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s is not an aggregate function", lname);
  hs_sql_expr **args;
  int32_t n;
  hs_status st = bind_list(b, ec, json_object_get(body, "args"), &args, &n);
  if (st != HS_OK) return st;
  /* pg_catalog spellings of SQL syntax */
  const char *call_name = lname;
  if (strcmp(lname, "date_part") == 0 && json_array_size(fname) == 2) call_name = "extract";
  if (strcmp(lname, "ceiling") == 0) call_name = "ceil";
  return make_call(b, call_name, args, n, pos, out);
}

/* ---------------------------------------------------------- subqueries */

/* A copy of row i of v as a constant expression (bytes into the arena). */
static hs_status const_of_row(hs_sql_binder *b, const hs_sql_vec *v, int64_t i, int32_t pos,
                              hs_sql_expr **out) {
  hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_CONST, v->type, pos);
  if (e == NULL) return hs_sql_bind_nomem(b);
  hs_sql_vec_get(v, i, &e->value);
  e->value.type = v->type;
  if (!e->value.is_null) {
    if (hs_sql_type_is_string(v->type.id)) {
      char *p =
          hs_arena_memdup(b->A, e->value.v.s.len ? e->value.v.s.ptr : "", e->value.v.s.len + 1);
      if (p == NULL) return hs_sql_bind_nomem(b);
      e->value.v.s.ptr = p;
    } else if (hs_sql_type_is_vector(v->type.id)) {
      float *p = hs_arena_memdup(b->A, e->value.v.vec,
                                 sizeof(float) * (size_t)(v->type.a ? v->type.a : 1));
      if (p == NULL) return hs_sql_bind_nomem(b);
      e->value.v.vec = p;
    }
  }
  *out = e;
  return HS_OK;
}

/* Run an uncorrelated subquery now: its rows (first column) as constants. */
static hs_status bind_subquery_values(hs_sql_binder *b, json_t *sub, int32_t pos, bool want_one_col,
                                      hs_sql_expr ***vals, int32_t *n_vals, hs_sql_type *col_type) {
  hs_sql_plan *plan = NULL;
  b->pc->no_cache = true; /* its rows become constants of this plan */
  /* a subquery sees no outer columns here: a reference to one fails to bind */
  hs_status st = hs_sql_bind_query(b, sub, &plan);
  if (st != HS_OK) {
    if (strstr(b->err->message, "does not exist") != NULL ||
        strstr(b->err->message, "missing FROM-clause") != NULL)
      hs_error_prefix(b->err, "(correlated subqueries are not supported yet) ");
    return st;
  }
  if (want_one_col && plan->n_cols != 1)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "subquery must return only one column");
  *col_type = plan->n_cols > 0 ? plan->types[0] : hs_sql_type_of(HS_SQL_NULLTYPE);
  st = hs_sql_optimize(b->pc, &plan, b->err);
  if (st != HS_OK) return st;
  hs_sql_exec_opts o;
  memset(&o, 0, sizeof o);
  o.params = b->o->params;
  o.n_params = b->o->n_params;
  o.cancel = b->o->cancel;
  o.memory_limit = b->o->memory_limit;
  o.settings = b->o->settings;
  o.n_settings = b->o->n_settings;
  hs_sql_exec *x = NULL;
  hs_sql_chunk *chunks = NULL;
  size_t n = 0;
  if ((st = hs_sql_exec_new(NULL, plan, &o, &x, b->err)) != HS_OK) return st;
  st = hs_sql_exec_collect(x, &chunks, &n, b->err);
  int64_t total = 0;
  for (size_t i = 0; i < n; i++) total += chunks[i].n;
  if (st == HS_OK && total > 1000000)
    st = hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos,
                          "subquery returned %lld rows; IN lists of more than 1,000,000 values are "
                          "not supported yet",
                          (long long)total);
  hs_sql_expr **v = NULL;
  if (st == HS_OK && (v = hs_arena_alloc(b->A, sizeof(*v) * (size_t)(total + 1))) == NULL)
    st = hs_sql_bind_nomem(b);
  int64_t k = 0;
  for (size_t i = 0; i < n && st == HS_OK; i++)
    for (int64_t r = 0; r < chunks[i].n && st == HS_OK; r++)
      st = const_of_row(b, &chunks[i].cols[0], r, pos, &v[k++]);
  for (size_t i = 0; i < n; i++) hs_sql_chunk_release(&chunks[i]);
  hs_free(chunks);
  hs_sql_exec_free(x);
  if (st != HS_OK) return st;
  *vals = v;
  *n_vals = (int32_t)k;
  return HS_OK;
}

static hs_status bind_sublink(hs_sql_binder *b, hs_sql_ectx *ec, json_t *body, hs_sql_expr **out) {
  const char *kind = json_string_value(json_object_get(body, "subLinkType"));
  int32_t pos = hs_sql_json_pos(body);
  json_t *sub = json_object_get(body, "subselect");
  hs_sql_expr **vals = NULL;
  int32_t n = 0;
  hs_sql_type t;
  hs_status st;
  if (kind == NULL) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "malformed subquery");
  if (strcmp(kind, "EXPR_SUBLINK") == 0) {
    hs_error saved = *b->err;
    int32_t saved_pos = b->err_pos != NULL ? *b->err_pos : 0;
    if ((st = bind_subquery_values(b, sub, pos, true, &vals, &n, &t)) != HS_OK) {
      if (ec->decor == NULL || !hs_sql_bind_err_is_unknown_name(b)) return st;
      *b->err = saved; /* correlated: decorrelate into a left join */
      if (b->err_pos != NULL) *b->err_pos = saved_pos;
      return hs_sql_bind_scalar_correlated(b, ec, body, out);
    }
    if (n > 1)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos,
                              "more than one row returned by a subquery used as an expression");
    if (n == 1) {
      *out = vals[0];
      return HS_OK;
    }
    hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_CONST, t, pos);
    if (e == NULL) return hs_sql_bind_nomem(b);
    e->value.is_null = true;
    *out = e;
    return HS_OK;
  }
  if (strcmp(kind, "EXISTS_SUBLINK") == 0) {
    if ((st = bind_subquery_values(b, sub, pos, false, &vals, &n, &t)) != HS_OK) return st;
    hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_CONST, hs_sql_type_of(HS_SQL_BOOL), pos);
    if (e == NULL) return hs_sql_bind_nomem(b);
    e->value.v.b = n > 0;
    *out = e;
    return HS_OK;
  }
  if (strcmp(kind, "ANY_SUBLINK") == 0 || strcmp(kind, "ALL_SUBLINK") == 0) {
    const char *op = hs_sql_json_last_name(json_object_get(body, "operName"));
    bool any = kind[1] == 'N';
    if (!(any && (op == NULL || strcmp(op, "=") == 0)) &&
        !(!any && op != NULL && strcmp(op, "<>") == 0))
      return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos,
                              "only IN / = ANY and <> ALL subqueries are supported");
    hs_sql_expr *x = NULL;
    if ((st = hs_sql_bind_expr(b, ec, json_object_get(body, "testexpr"), &x)) != HS_OK) return st;
    if ((st = bind_subquery_values(b, sub, pos, true, &vals, &n, &t)) != HS_OK) return st;
    if (n == 0) {
      hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_CONST, hs_sql_type_of(HS_SQL_BOOL), pos);
      if (e == NULL) return hs_sql_bind_nomem(b);
      e->value.v.b = !any; /* x IN (empty) is false, x <> ALL (empty) is true */
      *out = e;
      return HS_OK;
    }
    return bind_in(b, x, vals, n, !any, pos, out);
  }
  return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos, "%s subqueries are not supported", kind);
}

/* --------------------------------------------------------------- CASE */

static hs_status bind_case(hs_sql_binder *b, hs_sql_ectx *ec, json_t *body, hs_sql_expr **out) {
  int32_t pos = hs_sql_json_pos(body);
  json_t *arg = json_object_get(body, "arg");
  json_t *whens = json_object_get(body, "args");
  json_t *def = json_object_get(body, "defresult");
  size_t nw = json_array_size(whens);
  int32_t n = (int32_t)(2 * nw + (def != NULL ? 1 : 0));
  hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_CASE, hs_sql_type_of(HS_SQL_NULLTYPE), pos);
  if (e == NULL || args_alloc(b, e, n) != HS_OK) return hs_sql_bind_nomem(b);
  e->has_else = def != NULL;
  hs_sql_expr **results = hs_arena_alloc(b->A, sizeof(*results) * (nw + 1));
  if (results == NULL) return hs_sql_bind_nomem(b);
  hs_status st;
  for (size_t i = 0; i < nw; i++) {
    json_t *w = json_object_get(json_array_get(whens, i), "CaseWhen");
    if (w == NULL) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "malformed CASE");
    hs_sql_expr *cond = NULL;
    if (arg != NULL) {
      hs_sql_expr *a = NULL, *v = NULL;
      if ((st = hs_sql_bind_expr(b, ec, arg, &a)) != HS_OK ||
          (st = hs_sql_bind_expr(b, ec, json_object_get(w, "expr"), &v)) != HS_OK)
        return st;
      if (is_unknown(a) && is_unknown(v)) a->aux = NULL, v->aux = NULL;
      if ((st = hs_sql_bind_binop(b, "=", a, false, v, false, hs_sql_json_pos(w), &cond)) != HS_OK)
        return st;
    } else if ((st = hs_sql_bind_bool(b, ec, json_object_get(w, "expr"), "CASE/WHEN", &cond)) !=
               HS_OK) {
      return st;
    }
    e->args[2 * i] = cond;
    if ((st = hs_sql_bind_expr(b, ec, json_object_get(w, "result"), &results[i])) != HS_OK)
      return st;
  }
  hs_sql_expr *d = NULL;
  if (def != NULL && (st = hs_sql_bind_expr(b, ec, def, &d)) != HS_OK) return st;
  hs_sql_expr **all = hs_arena_alloc(b->A, sizeof(*all) * (nw + 2));
  if (all == NULL) return hs_sql_bind_nomem(b);
  for (size_t i = 0; i < nw; i++) all[i] = results[i];
  all[nw] = d;
  hs_sql_type t;
  if ((st = unify(b, all, (int32_t)nw + 1, "CASE", &t)) != HS_OK) return st;
  for (size_t i = 0; i < nw; i++) e->args[2 * i + 1] = all[i];
  if (def != NULL) e->args[n - 1] = all[nw];
  e->type = e->value.type = t;
  *out = e;
  return HS_OK;
}

static hs_status bind_variadic(hs_sql_binder *b, hs_sql_ectx *ec, json_t *body,
                               hs_sql_expr_kind kind, int32_t which, const char *what,
                               hs_sql_expr **out) {
  int32_t pos = hs_sql_json_pos(body);
  hs_sql_expr **args;
  int32_t n;
  hs_status st = bind_list(b, ec, json_object_get(body, "args"), &args, &n);
  if (st != HS_OK) return st;
  if (n == 0) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s needs arguments", what);
  hs_sql_type t;
  if ((st = unify(b, args, n, what, &t)) != HS_OK) return st;
  hs_sql_expr *e = hs_sql_expr_new(b->A, kind, t, pos);
  if (e == NULL) return hs_sql_bind_nomem(b);
  e->args = args;
  e->n_args = n;
  e->which = which;
  *out = e;
  return HS_OK;
}

/* ------------------------------------------------------------ dispatch */

/* In a grouped query: a subexpression equal to a GROUP BY key refers to
 * it; a constant stays; anything else binds structurally. */
static hs_status try_group_key(hs_sql_binder *b, hs_sql_ectx *ec, json_t *node, bool *done,
                               hs_sql_expr **out) {
  *done = false;
  if (hs_sql_json_has_agg(node)) return HS_OK;
  json_t *body;
  const char *t = hs_sql_json_type(node, &body);
  if (t != NULL &&
      (strcmp(t, "A_Const") == 0 || strcmp(t, "SubLink") == 0 || strcmp(t, "ParamRef") == 0))
    return HS_OK;
  if (t != NULL && strcmp(t, "FuncCall") == 0 && json_object_get(body, "over") != NULL)
    return HS_OK;
  hs_sql_aggmode *am = ec->am;
  hs_sql_ectx plain = {.sc = am->from};
  hs_error saved = *b->err;
  int32_t saved_pos = b->err_pos != NULL ? *b->err_pos : 0;
  hs_sql_expr *e = NULL;
  hs_status st = hs_sql_bind_expr(b, &plain, node, &e);
  if (st != HS_OK) {
    /* not bindable plainly (e.g. contains a window call): bind structurally */
    *b->err = saved;
    if (b->err_pos != NULL) *b->err_pos = saved_pos;
    return HS_OK;
  }
  for (int32_t k = 0; k < am->n_keys; k++) {
    if (hs_sql_expr_equal(am->keys[k], e)) {
      hs_sql_expr *ref = hs_sql_expr_new(b->A, HS_SX_COL, e->type, e->pos);
      if (ref == NULL) return hs_sql_bind_nomem(b);
      ref->col = k;
      *out = ref;
      *done = true;
      return HS_OK;
    }
  }
  if (t != NULL && strcmp(t, "ColumnRef") == 0) {
    const char *nm = hs_sql_json_last_name(json_object_get(body, "fields"));
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, hs_sql_json_pos(body),
                            "column \"%s\" must appear in the GROUP BY clause or be used in an "
                            "aggregate function",
                            nm != NULL ? nm : "?");
  }
  return HS_OK;
}

hs_status hs_sql_bind_expr(hs_sql_binder *b, hs_sql_ectx *ec, json_t *node, hs_sql_expr **out) {
  *out = NULL;
  json_t *body;
  const char *t = hs_sql_json_type(node, &body);
  if (t == NULL) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, 0, "malformed expression");
  if (++b->depth > 300)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, 0, "expression nested too deeply");
  hs_status st = HS_OK;
  if (ec->am != NULL) {
    bool done;
    st = try_group_key(b, ec, node, &done, out);
    if (st != HS_OK || done) {
      b->depth--;
      return st;
    }
  }
  int32_t pos = hs_sql_json_pos(body);
  if (strcmp(t, "ColumnRef") == 0) {
    st = bind_column_ref(b, ec, body, out);
  } else if (strcmp(t, "A_Const") == 0) {
    st = bind_const(b, body, out);
  } else if (strcmp(t, "TypeCast") == 0) {
    st = bind_cast(b, ec, body, out);
  } else if (strcmp(t, "A_Expr") == 0) {
    st = bind_a_expr(b, ec, body, out);
  } else if (strcmp(t, "BoolExpr") == 0) {
    const char *op = json_string_value(json_object_get(body, "boolop"));
    hs_sql_expr **args;
    int32_t n;
    if ((st = bind_list(b, ec, json_object_get(body, "args"), &args, &n)) == HS_OK) {
      for (int32_t i = 0; i < n && st == HS_OK; i++)
        st = to_bool(b, args[i],
                     op != NULL && strcmp(op, "NOT_EXPR") == 0  ? "NOT"
                     : op != NULL && strcmp(op, "OR_EXPR") == 0 ? "OR"
                                                                : "AND",
                     &args[i]);
      if (st == HS_OK) {
        hs_sql_expr_kind k = op != NULL && strcmp(op, "OR_EXPR") == 0    ? HS_SX_OR
                             : op != NULL && strcmp(op, "NOT_EXPR") == 0 ? HS_SX_NOT
                                                                         : HS_SX_AND;
        if ((k == HS_SX_NOT && n != 1) || (k != HS_SX_NOT && n < 2))
          st = hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "malformed boolean expression");
        else
          st = make_bool(b, k, args, n, pos, out);
      }
    }
  } else if (strcmp(t, "NullTest") == 0) {
    hs_sql_expr *a = NULL;
    if ((st = hs_sql_bind_expr(b, ec, json_object_get(body, "arg"), &a)) == HS_OK) {
      if (is_unknown(a)) a->aux = NULL;
      st = make_bool(b, HS_SX_ISNULL, &a, 1, pos, out);
      if (st == HS_OK) {
        const char *nt = json_string_value(json_object_get(body, "nulltesttype"));
        (*out)->negated = nt != NULL && strcmp(nt, "IS_NOT_NULL") == 0;
      }
    }
  } else if (strcmp(t, "BooleanTest") == 0) {
    hs_sql_expr *a = NULL;
    const char *bt = json_string_value(json_object_get(body, "booltesttype"));
    if ((st = hs_sql_bind_bool(b, ec, json_object_get(body, "arg"), "IS", &a)) == HS_OK &&
        (st = make_bool(b, HS_SX_BOOLTEST, &a, 1, pos, out)) == HS_OK) {
      hs_sql_expr *e = *out;
      if (bt == NULL) bt = "IS_TRUE";
      e->negated = strstr(bt, "NOT") != NULL;
      e->which = strstr(bt, "TRUE") ? 1 : strstr(bt, "FALSE") ? 0 : -1;
    }
  } else if (strcmp(t, "CaseExpr") == 0) {
    st = bind_case(b, ec, body, out);
  } else if (strcmp(t, "CoalesceExpr") == 0) {
    st = bind_variadic(b, ec, body, HS_SX_COALESCE, 0, "COALESCE", out);
  } else if (strcmp(t, "MinMaxExpr") == 0) {
    const char *op = json_string_value(json_object_get(body, "op"));
    bool least = op != NULL && strcmp(op, "IS_LEAST") == 0;
    st = bind_variadic(b, ec, body, HS_SX_GREATEST, least ? -1 : 1, least ? "LEAST" : "GREATEST",
                       out);
  } else if (strcmp(t, "FuncCall") == 0) {
    st = bind_func_call(b, ec, body, out);
  } else if (strcmp(t, "SubLink") == 0) {
    st = bind_sublink(b, ec, body, out);
  } else if (strcmp(t, "ParamRef") == 0) {
    int64_t num = json_integer_value(json_object_get(body, "number"));
    if (num < 1 || num > b->o->n_params) {
      st = hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "there is no parameter $%lld (%d given)",
                            (long long)num, b->o->n_params);
    } else {
      hs_sql_expr *e = hs_sql_expr_new(b->A, HS_SX_PARAM, b->o->params[num - 1].type, pos);
      if (e == NULL) return hs_sql_bind_nomem(b);
      e->param = (int32_t)num - 1;
      *out = e;
    }
  } else if (strcmp(t, "SQLValueFunction") == 0) {
    const char *op = json_string_value(json_object_get(body, "op"));
    const char *fn = op == NULL                                   ? NULL
                     : strcmp(op, "SVFOP_CURRENT_DATE") == 0      ? "current_date"
                     : strcmp(op, "SVFOP_CURRENT_TIMESTAMP") == 0 ? "now"
                     : strcmp(op, "SVFOP_LOCALTIMESTAMP") == 0    ? "localtimestamp"
                                                                  : NULL;
    if (fn == NULL)
      st = hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos, "%s is not supported",
                            op ? op : "this function");
    else
      st = make_call(b, fn, NULL, 0, pos, out);
  } else if (strcmp(t, "A_ArrayExpr") == 0) {
    st = hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos,
                          "ARRAY[...] is not supported; write vectors as '[1,2,3]'::vector");
  } else {
    st = hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos, "%s expressions are not supported", t);
  }
  b->depth--;
  return st;
}

/* -------------------------------------------------------------- VALUES */

hs_status hs_sql_bind_values(hs_sql_binder *b, json_t *lists, hs_sql_plan **out) {
  size_t nr = json_array_size(lists);
  if (nr == 0) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, 0, "VALUES needs rows");
  json_t *first = json_object_get(json_array_get(lists, 0), "List");
  size_t nc = json_array_size(json_object_get(first, "items"));
  if (nc == 0) return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, 0, "VALUES rows need columns");
  hs_sql_plan *p = hs_sql_bind_plan(b, HS_SP_VALUES, (int32_t)nc);
  if (p == NULL) return HS_ERR_NOMEM;
  p->values.rows = hs_arena_alloc(b->A, sizeof(hs_sql_expr **) * nr);
  if (p->values.rows == NULL) return hs_sql_bind_nomem(b);
  p->values.n_rows = (int64_t)nr;
  hs_sql_scope empty = {0};
  hs_sql_ectx ec = {.sc = &empty};
  hs_status st;
  for (size_t r = 0; r < nr; r++) {
    json_t *items = json_object_get(json_object_get(json_array_get(lists, r), "List"), "items");
    if (json_array_size(items) != nc)
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, 0, "VALUES lists must all be the same length");
    int32_t n;
    if ((st = bind_list(b, &ec, items, &p->values.rows[r], &n)) != HS_OK) return st;
  }
  hs_sql_expr **colv = hs_arena_alloc(b->A, sizeof(*colv) * nr);
  if (colv == NULL) return hs_sql_bind_nomem(b);
  for (size_t c = 0; c < nc; c++) {
    for (size_t r = 0; r < nr; r++) colv[r] = p->values.rows[r][c];
    hs_sql_type t;
    if ((st = unify(b, colv, (int32_t)nr, "VALUES", &t)) != HS_OK) return st;
    if (t.id == HS_SQL_NULLTYPE) t = hs_sql_type_of(HS_SQL_TEXT);
    for (size_t r = 0; r < nr; r++) {
      if ((st = hs_sql_expr_cast(b->A, colv[r], t, &p->values.rows[r][c], b->err)) != HS_OK)
        return st;
      if (!hs_sql_expr_is_const(p->values.rows[r][c]))
        return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, colv[r]->pos,
                                "VALUES entries must be constants");
    }
    char *nm = hs_arena_alloc(b->A, 32);
    if (nm == NULL) return hs_sql_bind_nomem(b);
    snprintf(nm, 32, "column%zu", c + 1);
    p->types[c] = t;
    p->names[c] = nm;
  }
  *out = p;
  return HS_OK;
}

/* --------------------------------------------------- table functions */

/* Time travel in FROM: hs_snapshot('t', 123), hs_as_of('t', '2024-01-01
 * 00:00:00'), hs_ref('t', 'tag'). */
hs_status hs_sql_bind_range_function(hs_sql_binder *b, json_t *body, hs_sql_plan **out,
                                     hs_sql_scope *sc) {
  json_t *fns = json_object_get(body, "functions");
  int32_t pos = 0;
  json_t *list = json_object_get(json_array_get(fns, 0), "List");
  json_t *call = json_array_get(json_object_get(list, "items"), 0);
  if (json_array_size(fns) != 1)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, 0,
                            "ROWS FROM with several functions is not supported");
  json_t *cb;
  const char *ct = hs_sql_json_type(call, &cb);
  if (ct == NULL || strcmp(ct, "FuncCall") != 0)
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, 0, "this table function is not supported");
  pos = hs_sql_json_pos(cb);
  return hs_sql_bind_time_travel(b, body, cb, pos, out, sc);
}
