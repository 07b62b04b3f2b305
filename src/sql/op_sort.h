/*
 * op_sort.h — row ordering shared by the sort and window operators
 * (op_sort.c). Private to src/sql/.
 */
#ifndef HS_SQL_OP_SORT_H
#define HS_SQL_OP_SORT_H

#include "plan.h"

/* One sort column: its values, direction and where its NULLs go. */
typedef struct hs_sql_sortcol {
  const hs_sql_vec *v;
  bool desc;
  bool nulls_first;
} hs_sql_sortcol;

/* perm[0..n) = the rows [0, n) of cols[0..n_cols) (each of >= n rows) in
 * order: stable (ties keep their input order), NaN above every number,
 * strings by bytes. With `diff` (n entries, may be NULL): diff[i] = the
 * first key on which row perm[i] differs from perm[i - 1] (n_cols when
 * equal on all; diff[0] = 0), i.e. where partitions and peer groups
 * start. HS_ERR_NOMEM when the buffers cannot be had. */
hs_status hs_sql_sort_perm(const hs_sql_sortcol *cols, int32_t n_cols, int64_t n, int64_t *perm,
                           int32_t *diff, hs_error *err);

/* Compare rows a and b of the sort columns (<0, 0, >0), as hs_sql_sort_perm
 * orders them (without the input-order tie break). */
int hs_sql_sort_cmp(const hs_sql_sortcol *cols, int32_t n_cols, int64_t a, int64_t b);

/* Bytes a chunk holds (fixed-width data, validity and string bytes), for
 * memory accounting. */
int64_t hs_sql_chunk_bytes(const hs_sql_chunk *c);

/* The statement's cancellation as an error (HS_OK when not cancelled). */
hs_status hs_sql_op_check_cancel(hs_sql_exec *x, hs_error *err);

#endif /* HS_SQL_OP_SORT_H */
