/*
 * expr.h — filter expressions: SQL boolean expressions (the WHERE clause of
 * a SELECT) parsed by PostgreSQL's own grammar through libpg_query, bound
 * against an Arrow schema, evaluated vectorized over Arrow record batches
 * with SQL three-valued logic, and checked against per-column statistics to
 * prune files, row groups and pages.
 *
 * Supported: column references (top-level fields), literals of every
 * column type (integers, decimals, floats incl. 'NaN'/'Infinity', strings,
 * booleans, NULL, DATE '…', TIMESTAMP '…', casts '…'::type and CAST), the
 * comparisons = <> != < <= > >=, [NOT] IN (…), [NOT] BETWEEN, IS [NOT] NULL,
 * [NOT] LIKE [ESCAPE], AND, OR, NOT, parentheses, and a boolean column used
 * as a predicate. Semantics follow PostgreSQL (see src/query/README.md):
 * NaN equals NaN and is greater than every number; a string literal takes
 * the column's type; a NULL operand makes a comparison unknown, and unknown
 * rows are not selected.
 *
 * Ownership: hs_expr_parse returns an hs_expr owned by the caller
 * (hs_expr_free, which accepts NULL). A bound expression does not keep the
 * schema; it is immutable, so several threads may evaluate it at once.
 */
#ifndef HS_QUERY_EXPR_H
#define HS_QUERY_EXPR_H

#include "../arrow/arrow.h"
#include "../common/common.h"

typedef struct hs_expr hs_expr;

/* Parse `filter` (NUL-terminated) and bind it against `schema` (a struct
 * schema, e.g. a record batch's). On failure the message in `err` reads
 *   filter: at position 12: unknown column 'agee'; columns are: id, age
 *     id > 3 AND agee > 5
 *                ^
 * and *error_pos (may be NULL) receives the 1-based character position in
 * `filter` (0 when none applies). Statuses: HS_ERR_INVALID_ARG for syntax
 * and semantic errors (unknown column, type mismatch, bad literal),
 * HS_ERR_UNSUPPORTED for valid SQL we do not evaluate (functions, column
 * to column comparisons, subqueries), HS_ERR_NOMEM. */
hs_status hs_expr_parse(const char *filter, const struct ArrowSchema *schema, hs_expr **out,
                        int32_t *error_pos, hs_error *err);

void hs_expr_free(hs_expr *e);

/* 1-based position in f[0..n) where the nesting of parentheses and
 * operators passes HS_EXPR_DEPTH_MAX (256) levels, or 0: a lexical bound
 * run before libpg_query, whose grammar and JSON output recurse per level
 * (also used for whole SQL statements by src/sql/). */
int32_t hs_expr_nesting_overflow(const char *f, size_t n);

/* A canonical rendering of the bound tree, for tests and diagnostics
 * (BETWEEN appears desugared, IN lists sorted and deduplicated). *out is NUL-terminated, owned by
 * the caller (hs_free). */
hs_status hs_expr_to_string(const hs_expr *e, char **out, hs_error *err);

/* Does the expression read top-level field `field_index` of the schema it
 * was bound against? (For projection: read the columns the filter needs.) */
bool hs_expr_uses_field(const hs_expr *e, int64_t field_index);

/* ------------------------------------------------------------ evaluation */

/* Evaluate over `batch`, a struct array shaped like the bound schema (the
 * caller validates arrays from outside with hs_arrow_array_validate). Sets
 * bit i (word i / 64, bit i % 64) of `sel_words` exactly when row i
 * satisfies the filter (TRUE; FALSE and unknown rows are not selected);
 * `sel_words` holds (batch->length + 63) / 64 words, bits past the length
 * are cleared. *n_selected (may be NULL) receives the number of set bits.
 * HS_ERR_INVALID_ARG when the batch does not match the bound schema. */
hs_status hs_expr_eval(const hs_expr *e, const struct ArrowArray *batch, uint64_t *sel_words,
                       int64_t *n_selected, hs_error *err);

/* The same, as strictly increasing batch-relative row indices: *rows_out is
 * hs_malloc'd and owned by the caller (NULL when none match). */
hs_status hs_expr_select_rows(const hs_expr *e, const struct ArrowArray *batch, int64_t **rows_out,
                              int64_t *n_out, hs_error *err);

/* ---------------------------------------------------- statistics pruning */

/* Bounds of one column over a set of rows (a file, row group or page), in
 * the column's own Arrow type: integers and dates and timestamps in `i64`
 * (unsigned in `u64`), floats in `f64`, decimal128 as 16 little-endian
 * bytes in `dec`, strings and binaries in `bytes`/`len` (borrowed),
 * booleans in `b`. Bounds need not be tight but must hold:
 * min <= every non-null value <= max (a truncated string max must already
 * have been rounded up). Float bounds ignore NaN; `nan_count` says whether
 * NaNs may be present. */
typedef struct hs_expr_scalar {
  int64_t i64;
  uint64_t u64;
  double f64;
  uint8_t dec[16];
  const uint8_t *bytes;
  size_t len;
  bool b;
} hs_expr_scalar;

typedef struct hs_expr_stats {
  bool has_bounds;    /* min and max below are meaningful */
  hs_expr_scalar min; /* lower bound of the non-null values */
  hs_expr_scalar max; /* upper bound of the non-null values */
  int64_t null_count; /* -1 when unknown */
  int64_t nan_count;  /* -1 when unknown (float columns) */
  int64_t row_count;  /* -1 when unknown */
} hs_expr_stats;

/* Initialise to "nothing known" (no bounds, counts -1). */
void hs_expr_stats_init(hs_expr_stats *s);

/* Could any row described by `stats` satisfy the filter? `stats[i]`
 * describes top-level field i of the bound schema; `n_stats` must cover
 * every field the expression uses (hs_expr_uses_field), else
 * HS_ERR_INVALID_ARG. Conservative: *may_match is false only when the
 * statistics prove that no row can be TRUE. */
hs_status hs_expr_may_match(const hs_expr *e, const hs_expr_stats *stats, int64_t n_stats,
                            bool *may_match, hs_error *err);

#endif /* HS_QUERY_EXPR_H */
