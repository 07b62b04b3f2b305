/*
 * bind_internal.h — the binder's state, shared by bind.c (statements,
 * FROM, clauses) and bind_expr.c (expressions). Private to src/sql/.
 */
#ifndef HS_SQL_BIND_INTERNAL_H
#define HS_SQL_BIND_INTERNAL_H

#include <jansson.h>

#include "bind.h"

/* One column visible to name resolution. */
typedef struct hs_sql_scol {
  const char *qual; /* table name or alias (NULL: none) */
  const char *name;
  hs_sql_type type;
  bool hidden;      /* not expanded by * (the right copy of a USING column) */
  int32_t using_of; /* hidden USING copies: 1 + the left column they equal */
} hs_sql_scol;

typedef struct hs_sql_scope {
  hs_sql_scol *cols;
  int32_t n, cap;
} hs_sql_scope;

/* Aggregate mode: expressions of a grouped query refer to AGG outputs. */
typedef struct hs_sql_aggmode {
  hs_sql_scope *from;
  hs_sql_expr **keys;
  int32_t n_keys;
  hs_sql_aggcall *aggs;
  int32_t n_aggs, cap_aggs;
} hs_sql_aggmode;

/* Window calls met while binding, referenced by placeholders. */
#define HS_SQL_WIN_PLACEHOLDER (-1000)
typedef struct hs_sql_winmode {
  hs_sql_wincall *calls;
  hs_sql_type *types;
  const char **names;
  int32_t n_calls, cap_calls;
} hs_sql_winmode;

/* Where a correlated scalar subquery of a WHERE clause may join its
 * grouped result: the query's FROM plan and scope (extended in place). */
typedef struct hs_sql_decor {
  hs_sql_plan **plan;
  hs_sql_scope *sc;
} hs_sql_decor;

typedef struct hs_sql_ectx {
  hs_sql_scope *sc;   /* names resolve here (the FROM scope) */
  hs_sql_aggmode *am; /* non-NULL: a grouped query's post-aggregation expression */
  hs_sql_winmode *wm; /* non-NULL: window calls allowed */
  /* Correlated binding: names not in `sc` resolve in `outer` (column i
   * there is COL i), names in `sc` are COL inner_base + i. */
  hs_sql_scope *outer;
  int32_t inner_base;
  hs_sql_decor *decor; /* non-NULL: correlated scalar subqueries may join here */
} hs_sql_ectx;

typedef struct hs_sql_cte {
  const char *name;
  json_t *query;
  json_t *colnames;
} hs_sql_cte;

typedef struct hs_sql_binder {
  hs_sql_plan_ctx *pc;
  hs_arena *A;
  const char *sql;
  size_t len;
  const hs_sql_bind_opts *o;
  hs_error *err;
  int32_t *err_pos;
  hs_sql_evalctx ectx; /* for constant folding and subqueries */
  hs_sql_cte *ctes;
  int32_t n_ctes, cap_ctes;
  int depth;
} hs_sql_binder;

hs_status hs_sql_bind_fail(hs_sql_binder *b, hs_status st, int32_t pos, const char *fmt, ...)
    HS_PRINTF(4, 5);
hs_status hs_sql_bind_nomem(hs_sql_binder *b);
hs_sql_plan *hs_sql_bind_plan(hs_sql_binder *b, hs_sql_plan_kind kind, int32_t n_cols);
hs_status hs_sql_scope_add(hs_sql_binder *b, hs_sql_scope *s, const char *qual, const char *name,
                           hs_sql_type type);

const char *hs_sql_json_type(json_t *n, json_t **body);
int32_t hs_sql_json_pos(json_t *body);
const char *hs_sql_json_str(json_t *n);
const char *hs_sql_json_last_name(json_t *list);
bool hs_sql_json_has_agg(json_t *n);

/* A SELECT body to a plan; FROM items to a plan and scope; a join node
 * (output: left then right columns; SEMI/ANTI: left only). */
hs_status hs_sql_bind_select(hs_sql_binder *b, json_t *sel, hs_sql_plan **out);
hs_status hs_sql_bind_from(hs_sql_binder *b, json_t *from, hs_sql_plan **out, hs_sql_scope *sc);
hs_sql_plan *hs_sql_bind_join_node(hs_sql_binder *b, hs_sql_plan *l, hs_sql_plan *r,
                                   hs_sql_join_type type);
/* The top-level AND conjuncts of a parse-tree expression, appended. */
hs_status hs_sql_json_conjuncts(hs_sql_binder *b, json_t *n, json_t ***v, int32_t *count,
                                int32_t *cap);
/* Keep a parse-tree node made while binding alive as long as the plan. */
hs_status hs_sql_bind_keep(hs_sql_binder *b, json_t *node);

/* Subqueries (bind_sub.c): a WHERE conjunct that is [NOT] EXISTS (...) or
 * x [NOT] IN (SELECT ...) becomes a semi/anti join of *plan (whose scope
 * is `sc`); *done false when the conjunct is not of that form. */
hs_status hs_sql_bind_semi(hs_sql_binder *b, json_t *conj, hs_sql_plan **plan, hs_sql_scope *sc,
                           bool *done);
/* A correlated scalar subquery (SubLink body) in a WHERE clause: its
 * grouped result is left-joined into ec->decor's plan and *out refers to
 * it. */
hs_status hs_sql_bind_scalar_correlated(hs_sql_binder *b, hs_sql_ectx *ec, json_t *sublink,
                                        hs_sql_expr **out);
/* Is the bind error in b->err one of a name that is not in scope? */
bool hs_sql_bind_err_is_unknown_name(const hs_sql_binder *b);

/* A query (SelectStmt node) to a plan. */
hs_status hs_sql_bind_query(hs_sql_binder *b, json_t *node, hs_sql_plan **out);
/* VALUES lists to a VALUES plan. */
hs_status hs_sql_bind_values(hs_sql_binder *b, json_t *lists, hs_sql_plan **out);
/* A table function in FROM (time travel). */
hs_status hs_sql_bind_range_function(hs_sql_binder *b, json_t *body, hs_sql_plan **out,
                                     hs_sql_scope *sc);

/* Expressions (bind_expr.c). */
hs_status hs_sql_bind_expr(hs_sql_binder *b, hs_sql_ectx *ec, json_t *node, hs_sql_expr **out);
/* A boolean expression (`clause` names it in errors: "WHERE"). */
hs_status hs_sql_bind_bool(hs_sql_binder *b, hs_sql_ectx *ec, json_t *node, const char *clause,
                           hs_sql_expr **out);
/* l op r, resolved (unknown: the operand is an untyped string literal). */
hs_status hs_sql_bind_binop(hs_sql_binder *b, const char *op, hs_sql_expr *l, bool l_unknown,
                            hs_sql_expr *r, bool r_unknown, int32_t pos, hs_sql_expr **out);
/* acc AND e (acc may be NULL). */
hs_status hs_sql_bind_and(hs_sql_binder *b, hs_sql_expr *acc, hs_sql_expr *e, hs_sql_expr **out);
/* A boolean node of `kind` (AND, OR, ISNULL, ...) over args[0..n). */
hs_status hs_sql_bind_bool_node(hs_sql_binder *b, hs_sql_expr_kind kind, hs_sql_expr **args,
                                int32_t n, int32_t pos, hs_sql_expr **out);
bool hs_sql_expr_equal(const hs_sql_expr *a, const hs_sql_expr *b);

/* Edit distance of a and b (ASCII case folded), capped at `cap`. */
int hs_sql_edit_distance(const char *a, const char *b, int cap);

/* FROM hs_snapshot('t', id) / hs_as_of('t', ts) / hs_ref('t', name)
 * (bind_tt.c); `call` is the FuncCall body. */
hs_status hs_sql_bind_time_travel(hs_sql_binder *b, json_t *range, json_t *call, int32_t pos,
                                  hs_sql_plan **out, hs_sql_scope *sc);

#endif /* HS_SQL_BIND_INTERNAL_H */
