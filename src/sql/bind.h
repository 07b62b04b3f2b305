/*
 * bind.h — from SQL text to a plan: libpg_query's parse tree (JSON) is
 * walked once, names are resolved against the session's relations and
 * the query's scopes, every expression is typed and its calls resolved
 * (func.h), and the statement becomes a tree of plan nodes (plan.h).
 * Private to src/sql/.
 *
 * Errors carry the 1-based position of the offending token; the caller
 * (session.c) formats the caret line.
 */
#ifndef HS_SQL_BIND_H
#define HS_SQL_BIND_H

#include "exec.h"

/* Finds the relation a FROM clause names (session.c): *out is built in
 * ctx's arena (the statement's), with the table's current columns and the
 * handle they came from (hs_sql_rel.table, listed in ctx->opened). HS_ERR_NOT_FOUND with a
 * message listing the known names (the binder adds the position). */
typedef hs_status (*hs_sql_lookup_fn)(void *ud, const char *name, hs_sql_plan_ctx *ctx,
                                      hs_sql_rel **out, hs_error *err);

typedef enum hs_sql_stmt_kind {
  HS_SQL_STMT_QUERY,   /* rows: `plan` */
  HS_SQL_STMT_EXPLAIN, /* plan->kind == HS_SP_EXPLAIN */
  HS_SQL_STMT_SET,     /* SET name = value: set_name, set_value */
  HS_SQL_STMT_RESET,   /* RESET name / RESET ALL (set_name NULL) */
  HS_SQL_STMT_OTHER    /* DDL and DML, handled by session.c from `json` */
} hs_sql_stmt_kind;

typedef struct hs_sql_stmt {
  hs_sql_stmt_kind kind;
  hs_sql_plan_ctx *pctx; /* owns the plan; moves into the exec */
  hs_sql_plan *plan;
  hs_sql_plan **shared; /* SHARED inputs (CTEs referenced more than once), in pctx */
  int32_t n_shared;
  const char *set_name, *set_value; /* SET (in pctx) */
  const char *other;                /* OTHER: the statement node's type name (in pctx) */
  void *json;                       /* OTHER: the statement's json_t body (in pctx->json) */
  void *json_root;                  /* the whole parse tree (pctx->json holds a reference) */
} hs_sql_stmt;

/* A session's parse trees by statement text (parse_cache.c); NULL: none
 * (HS_SQL_PARSE_CACHE=0 makes _new return NULL). Owned by the session. */
typedef struct hs_sql_parse_cache hs_sql_parse_cache;
hs_sql_parse_cache *hs_sql_parse_cache_new(void);
void hs_sql_parse_cache_free(hs_sql_parse_cache *c); /* accepts NULL */
/* The cached tree of `sql` (a json_t, a new reference) or NULL. */
void *hs_sql_parse_cache_get(hs_sql_parse_cache *c, const char *sql, size_t len);
/* Keep `root` (a json_t, the cache takes its own reference) for `sql`. */
void hs_sql_parse_cache_put(hs_sql_parse_cache *c, const char *sql, size_t len, void *root);

typedef struct hs_sql_bind_opts {
  hs_sql_lookup_fn lookup;
  void *lookup_ud;
  const hs_sql_value *params; /* $1.. (their types type the parameters) */
  int32_t n_params;
  const volatile int *cancel;
  const hs_sql_setting *settings; /* for subqueries run while binding */
  size_t n_settings;
  int64_t memory_limit;
  hs_sql_parse_cache *parse_cache; /* NULL: parse every time */
} hs_sql_bind_opts;

/* Parse and bind one statement. *error_pos receives the 1-based position
 * of an error (0: none). */
hs_status hs_sql_bind(const char *sql, const hs_sql_bind_opts *o, hs_sql_stmt *out,
                      int32_t *error_pos, hs_error *err);
void hs_sql_stmt_free(hs_sql_stmt *s);

/* ORDER BY distance LIMIT k over a table to a KNN node (optimize_knn.c). */
hs_status hs_sql_optimize_knn(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err);
/* Inner joins reordered from row estimates (optimize_order.c). */
hs_status hs_sql_optimize_join_order(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err);
/* Hash semi/anti joins built on a much smaller outer side (optimize_order.c). */
hs_status hs_sql_optimize_semi_sides(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err);
/* The row estimate the join order uses (optimize_order.c). */
double hs_sql_estimate_rows(const hs_sql_plan *p);
/* Column `column` of table relation `rel` at `snapshot_id` (-1: current):
 * the smallest lower and largest upper manifest bound over its live files,
 * as numbers (estimate_bounds.c); false when unknown. Reads through the
 * statement's shared handle (hs_sql_rel_peek) when it has one. */
bool hs_sql_column_range(const hs_sql_rel *rel, int64_t snapshot_id, const char *column, double *lo,
                         double *hi);
/* Semi joins moved below inner joins to the input their keys come from
 * (optimize_semi.c). */
hs_status hs_sql_optimize_semi_down(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err);
/* A GROUP BY joined on a group key reads only keys the other side's table
 * scan has: its input semi joined with a copy of that scan
 * (optimize_aggkeys.c; HS_SQL_AGG_KEYS=0 turns it off). */
hs_status hs_sql_optimize_agg_keys(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err);

/* Optimize a bound query plan in place (optimize.c). */
hs_status hs_sql_optimize(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err);

/* DDL and DML statements (ddl.c): CREATE INDEX, DROP INDEX, INSERT,
 * CREATE TABLE, ... `kind` is the parse node's type, `json` its body.
 * *pos: the error position (0: none). */
hs_status hs_sql_session_other(hs_sql_session *s, const hs_sql_bind_opts *bo, const char *sql,
                               const char *kind, void *json, struct ArrowArrayStream *out,
                               int32_t *pos, hs_error *err);

/* One text column `name` with a row per line of `text` (session.c: EXPLAIN). */
hs_status hs_sql_text_stream(const char *name, const char *text, struct ArrowArrayStream *out,
                             hs_error *err);

/* Is an ExplainStmt body's statement one that runs as a MERGE (MERGE,
 * UPDATE ... FROM, DELETE ... USING; ddl_merge.c)? */
bool hs_sql_explain_is_merge(void *explain_body);

/* The session's root folder, or NULL (session.c). */
const char *hs_sql_session_root(const hs_sql_session *s);

/* Bind (and optimize) one query node (a SelectStmt json_t) of statement
 * `sql` into a plan built in `pctx` (used by INSERT ... SELECT and CREATE
 * TABLE AS). */
hs_status hs_sql_bind_query_node(const char *sql, void *node, const hs_sql_bind_opts *o,
                                 hs_sql_plan_ctx *pctx, hs_sql_plan **out, int32_t *error_pos,
                                 hs_error *err);

#endif /* HS_SQL_BIND_H */
