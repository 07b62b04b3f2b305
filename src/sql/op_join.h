/*
 * op_join.h — the join planning step that lives beside the join operator
 * (optimize_join.c). Private to src/sql/.
 */
#ifndef HS_SQL_OP_JOIN_H
#define HS_SQL_OP_JOIN_H

#include "plan.h"

/* Mark hash joins whose right input is a table scan joined on a column
 * with a scalar index as index nested loops on that column (inner joins
 * with the indexed scan on the left are swapped under a projection that
 * keeps the column order). Run after filters are pushed into scans and
 * columns are pruned. The operator falls back to hashing at run time when
 * the left side is not small next to the table. */
hs_status hs_sql_optimize_join_index(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err);

#endif /* HS_SQL_OP_JOIN_H */
