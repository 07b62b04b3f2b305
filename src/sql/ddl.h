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

/* DELETE FROM t [WHERE filter]: one row change; count = rows deleted. */
hs_status hs_sql_ddl_delete(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                            struct ArrowArrayStream *out, int32_t *pos, hs_error *err);
/* ALTER TABLE t ADD [COLUMN] c type, DROP [COLUMN] [IF EXISTS] c, ALTER
 * [COLUMN] c [SET DATA] TYPE type, ... : one schema change (one commit). */
hs_status hs_sql_ddl_alter(const hs_sql_bind_opts *bo, json_t *body, struct ArrowArrayStream *out,
                           int32_t *pos, hs_error *err);
/* ALTER TABLE t RENAME [COLUMN] a TO b. */
hs_status hs_sql_ddl_rename(const hs_sql_bind_opts *bo, json_t *body, struct ArrowArrayStream *out,
                            int32_t *pos, hs_error *err);

#endif /* HS_SQL_DDL_H */
