/*
 * ddl.h — what ddl.c (CREATE, INSERT, indexes) and ddl_change.c (DELETE,
 * ALTER TABLE) share: the parse tree's positions, the one-row "count"
 * result, column types from a TypeName, and the change statements.
 */
#ifndef HS_SQL_DDL_H
#define HS_SQL_DDL_H

#include <jansson.h>

#include "bind.h"

/* A parse node's 1-based "location" (0 when it has none). */
int32_t hs_sql_ddl_pos(json_t *o);
/* One row of int64 "count" as the statement's result. */
hs_status hs_sql_ddl_count_stream(int64_t n, struct ArrowArrayStream *out, hs_error *err);
/* The type of a ColumnDef's TypeName (*pos: its position, for errors). */
hs_status hs_sql_ddl_type_of(json_t *tn, hs_sql_type *out, int32_t *pos, hs_error *err);

/* Run a bound query to its end, collecting its chunks (release them with
 * hs_sql_ddl_free_chunks; *x with hs_sql_exec_free, after the chunks are
 * used: they may borrow from it). */
hs_status hs_sql_ddl_run(const hs_sql_bind_opts *bo, hs_sql_plan *plan, hs_sql_chunk **chunks,
                         size_t *n, hs_sql_exec **x, hs_error *err);
void hs_sql_ddl_free_chunks(hs_sql_chunk *c, size_t n); /* accepts NULL */
/* A value assigned to column `column` of type `to` (INSERT, UPDATE):
 * shared when of that type, NULLs of it for NULLTYPE, else cast where a
 * cast exists; otherwise PostgreSQL's "column \"c\" is of type integer
 * but expression is of type text". *out is zeroed on entry. */
hs_status hs_sql_ddl_assign(const hs_sql_vec *v, hs_sql_type to, const char *column,
                            hs_sql_vec *out, hs_error *err);

/* The statement's target table `rel` (a RangeVar body; `verb` names the
 * statement in errors; an alias is refused unless `alias_ok`), its handle
 * taken from the statement's lookup into *t (give it back with
 * hs_sql_rel_close(*r, *t)). In-memory relations are refused. */
hs_status hs_sql_ddl_open_target(const hs_sql_bind_opts *bo, hs_sql_plan_ctx *pc, json_t *rel,
                                 const char *verb, bool alias_ok, hs_sql_rel **r, hs_table **t,
                                 int32_t *pos, hs_error *err);
/* The text of a WHERE clause (`where`, the parse node) that ends
 * statement `sql`: from the WHERE keyword's end to the statement's end, in
 * A; `verb` names the statement in errors. Parameters are refused. */
const char *hs_sql_ddl_where_text(const char *sql, json_t *where, const char *verb, hs_arena *A,
                                  int32_t *pos, hs_error *err);
/* A new plan context (NULL when out of memory). */
hs_sql_plan_ctx *hs_sql_ddl_ctx_new(void);

/* CREATE TABLE's PARTITION BY and WITH (...) as table options (in A):
 * partition fields by Iceberg transform, format_version, properties
 * (ddl_table_opts.c). */
hs_status hs_sql_ddl_table_options(json_t *body, hs_arena *A, hs_table_options *o, int32_t *pos,
                                   hs_error *err);

/* DELETE FROM t [WHERE filter]: one row change; count = rows deleted. */
hs_status hs_sql_ddl_delete(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                            struct ArrowArrayStream *out, int32_t *pos, hs_error *err);
/* One assignment of an UPDATE's SET list (or a MERGE's UPDATE SET). */
typedef struct hs_sql_set_item {
  const char *col; /* the table column */
  json_t *val;     /* its expression (borrowed from the parse tree) */
  int32_t pos;     /* 1-based position of the target */
  int32_t tcol;    /* the column's index in `ts` */
} hs_sql_set_item;
/* The n ResTargets of a SET list against the table's columns `ts` (an
 * Arrow struct schema; lineage columns are not settable): (a, b) = (x, y)
 * split into its assignments; DEFAULT, (a, b) = (SELECT ...), c[i] / c.f,
 * unknown columns and a column set twice refused with the position. */
hs_status hs_sql_ddl_set_items(json_t *list, const struct ArrowSchema *ts, const char *table,
                               hs_sql_set_item *items, size_t n, int32_t *pos, hs_error *err);

/* UPDATE t SET c = expr, ... [WHERE filter] (ddl_update.c): the matching
 * rows read, their new values computed by the SQL engine, one row change
 * deleting them and appending the new rows; count = rows updated. */
hs_status hs_sql_ddl_update(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                            struct ArrowArrayStream *out, int32_t *pos, hs_error *err);
/* MERGE INTO t USING s ON t.k = s.k ... WHEN [NOT] MATCHED ... (ddl_merge.c):
 * one row change on the key path; count = rows updated, deleted, inserted. */
hs_status hs_sql_ddl_merge(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                           struct ArrowArrayStream *out, int32_t *pos, hs_error *err);
/* UPDATE t SET ... FROM s WHERE t.k = s.k [AND cond] (ddl_merge.c): the
 * MERGE of one WHEN MATCHED [AND cond] THEN UPDATE; a target row that two
 * source rows match is an error (PostgreSQL would take either). */
hs_status hs_sql_ddl_update_from(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                                 struct ArrowArrayStream *out, int32_t *pos, hs_error *err);
/* DELETE FROM t USING s WHERE t.k = s.k [AND cond] (ddl_merge.c): the MERGE
 * of one WHEN MATCHED [AND cond] THEN DELETE. */
hs_status hs_sql_ddl_delete_using(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                                  struct ArrowArrayStream *out, int32_t *pos, hs_error *err);
/* INSERT INTO t [(cols)] ... ON CONFLICT (k, ...) DO UPDATE SET ... [WHERE c]
 * | DO NOTHING (ddl_merge.c): the MERGE of the rows to insert (as
 * "excluded") on the conflict columns; rows to insert sharing a key are an
 * error. `tnames` / `ttypes`: the table's columns (an INSERT without a list
 * names them all; a key of the rows is cast to its column's type). */
hs_status hs_sql_ddl_insert_on_conflict(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                                        const char *const *tnames, const hs_sql_type *ttypes,
                                        size_t n_tcols, struct ArrowArrayStream *out, int32_t *pos,
                                        hs_error *err);
/* EXPLAIN of MERGE, UPDATE ... FROM or DELETE ... USING: the plan of the
 * SELECT they run (the join and its index use), nothing written. */
hs_status hs_sql_ddl_explain_merge(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                                   struct ArrowArrayStream *out, int32_t *pos, hs_error *err);
/* ALTER TABLE t ADD [COLUMN] c type, DROP [COLUMN] [IF EXISTS] c, ALTER
 * [COLUMN] c [SET DATA] TYPE type, ... : one schema change (one commit). */
hs_status hs_sql_ddl_alter(const hs_sql_bind_opts *bo, json_t *body, struct ArrowArrayStream *out,
                           int32_t *pos, hs_error *err);
/* ALTER TABLE t RENAME [COLUMN] a TO b. */
hs_status hs_sql_ddl_rename(const hs_sql_bind_opts *bo, json_t *body, struct ArrowArrayStream *out,
                            int32_t *pos, hs_error *err);

#endif /* HS_SQL_DDL_H */
