/*
 * index_plan.h — turning a bound filter into scalar-index queries for one
 * data file (index_plan.c). Private to src/query/.
 *
 * The answer is a candidate set: a superset of the rows for which the
 * filter is TRUE (never smaller), so the scan may only narrow with it and
 * re-evaluates the filter on the candidates, unless the plan says the set
 * is exact (hs_index_plan_rows' *exact) and the caller wants rows only.
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
 * unreadable, corrupt or foreign index files (reported in `rep`), just do
 * not narrow; only running out of memory is an error. */
/* The data file the indexes must be bound to (src/index/binding.h): its
 * resolved path, size and footer CRC-32C as the scan opened it. */
typedef struct hs_index_plan_data {
  const char *path;
  uint64_t size;
  uint32_t footer_crc32c;
} hs_index_plan_data;

/* Index columns a plan did not use although the registry named them: the
 * blob was bound to another data file, failed its checksum or checks, or
 * the file was missing or unreadable. The file is then read without them
 * (exactly); `why` holds the first reason, naming the index file. */
typedef struct hs_index_plan_report {
  int64_t rejected;
  char why[320];
} hs_index_plan_report;

/* `data` NULL: bindings are not checked (tests of the index alone); rep
 * may be NULL. *exact (exact may be NULL) is set true when *out is not
 * only a superset but exactly the rows where the filter is TRUE: every
 * leaf answered by an exact index column of an integer, decimal, string
 * or boolean domain, combined by AND / OR / NOT without a skipped range
 * (see index_plan.c). Only then may a caller skip re-evaluating the filter
 * on the candidates. */
hs_status hs_index_plan_rows(const hs_expr *e, const char *const *paths, const char *const *names,
                             size_t n_paths, const hs_index_plan_data *data,
                             hs_index_plan_report *rep, roaring_bitmap_t **out, bool *exact,
                             hs_error *err);

#endif /* HS_QUERY_INDEX_PLAN_H */
