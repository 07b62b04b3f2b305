/*
 * index_plan.h — turning a bound filter into scalar-index queries for one
 * data file (index_plan.c). Private to src/query/.
 *
 * The answer is a candidate set: a superset of the rows for which the
 * filter is TRUE (never smaller), so the scan may only narrow with it and
 * always re-evaluates the filter on the candidates.
 */
#ifndef HS_QUERY_INDEX_PLAN_H
#define HS_QUERY_INDEX_PLAN_H

#include "../index/index.h"
#include "expr.h"

/* Candidate rows of one data file for `e`. paths[i] (i < n_fields of the
 * schema `e` was bound against) is the index file holding field i's index,
 * or NULL; names[i] (names may be NULL) the column name its blob carries
 * (the data file's own name of the field, which a rename since leaves
 * behind), NULL: the filter's name. *out is a CRoaring bitmap of row positions (caller frees), or
 * NULL when the index cannot narrow anything ("all rows"). Indexes that
 * cannot answer a predicate (unsupported value kind), and missing,
 * unreadable or corrupt index files, just do not narrow; only running out
 * of memory is an error. */
hs_status hs_index_plan_rows(const hs_expr *e, const char *const *paths, const char *const *names,
                             size_t n_paths, roaring_bitmap_t **out, hs_error *err);

#endif /* HS_QUERY_INDEX_PLAN_H */
