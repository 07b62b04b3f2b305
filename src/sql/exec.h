/*
 * exec.h — running a planned statement (exec.c): the operator tree, its
 * output as an ArrowArrayStream, EXPLAIN [ANALYZE] text, memory accounting
 * and cancellation. Private to src/sql/.
 *
 * Ownership: hs_sql_exec_stream takes the plan context (its arena holds the
 * plan) and the exec; both are freed when the stream is released.
 */
#ifndef HS_SQL_EXEC_H
#define HS_SQL_EXEC_H

#include "plan.h"

typedef struct hs_sql_setting {
  const char *name;
  const char *value;
} hs_sql_setting;

typedef struct hs_sql_exec_opts {
  const hs_sql_value *params;
  int32_t n_params;
  const volatile int *cancel;
  int64_t memory_limit; /* bytes; <= 0: none */
  const hs_sql_setting *settings;
  size_t n_settings;
  hs_sql_plan **shared; /* SHARED node inputs, by id */
  int32_t n_shared;
} hs_sql_exec_opts;

/* Build the operator tree of `root` (in *pctx, which the exec then owns:
 * the caller must not free it; pctx NULL: the caller keeps the plan alive
 * until hs_sql_exec_free). The options are copied; params, settings
 * and the cancel flag must outlive the exec. */
hs_status hs_sql_exec_new(hs_sql_plan_ctx *pctx, hs_sql_plan *root, const hs_sql_exec_opts *o,
                          hs_sql_exec **out, hs_error *err);
void hs_sql_exec_free(hs_sql_exec *x);

/* The exec's results as a stream; *out owns x from now on. */
hs_status hs_sql_exec_stream(hs_sql_exec *x, struct ArrowArrayStream *out, hs_error *err);

/* Run the statement to its end, keeping every chunk (*chunks hs_malloc'd;
 * release each, then hs_free). */
hs_status hs_sql_exec_collect(hs_sql_exec *x, hs_sql_chunk **chunks, size_t *n, hs_error *err);

/* Run the statement to its end, discarding rows (EXPLAIN ANALYZE, DDL). */
hs_status hs_sql_exec_run(hs_sql_exec *x, hs_error *err);

/* The plan as indented text, one node per line, with each operator's
 * rows/time/notes after a run when `analyze`. *out hs_malloc'd. */
hs_status hs_sql_exec_explain(hs_sql_exec *x, bool analyze, char **out, hs_error *err);

/* The same for a plan that was not run (plain EXPLAIN). */
hs_status hs_sql_plan_explain(const hs_sql_plan *root, char **out, hs_error *err);

#endif /* HS_SQL_EXEC_H */
