/*
 * scan.h — the query layer's filtered, projected table scan
 * (hs_table_scan_query in include/hyperstream.h) and the statistics
 * conversions it prunes with, exposed for tests.
 *
 * Pruning works on hs_expr_stats (expr.h): bounds in the column's own Arrow
 * type. Two sources feed it:
 *  - manifest entries (file level): Iceberg single-value bounds, null and
 *    NaN counts, and the partition tuple (identity, truncate and temporal
 *    transforms give ranges; bucket gives none);
 *  - Parquet column-chunk statistics (row-group level).
 * Both are conservative: a bound that cannot be converted exactly into the
 * column's Arrow type is left out ("nothing known"), never approximated in
 * the unsafe direction.
 */
#ifndef HS_QUERY_SCAN_H
#define HS_QUERY_SCAN_H

#include "../parquet/parquet.h"
#include "../table/table.h"
#include "expr.h"

/* Per-field statistics of one data file from its manifest entry. `fields`
 * is the table's Arrow schema (each child carrying "PARQUET:field_id");
 * stats[i] (i < fields->n_children) describes child i and is only filled
 * where `used[i]` (may be NULL: all). `spec` is the file's partition spec
 * (NULL: unknown, partition values ignored). Strings that must be rounded
 * up (a possibly truncated upper bound) are built in `arena`. */
hs_status hs_scan_file_stats(const hs_iceberg_metadata *meta, const hs_iceberg_schema *schema,
                             const hs_iceberg_partition_spec *spec,
                             const struct ArrowSchema *fields, const bool *used,
                             const hs_iceberg_data_file *df, hs_arena *arena, hs_expr_stats *stats,
                             hs_error *err);

/* Per-field statistics of row group `rg` of a Parquet file with footer
 * `md`. `fields` is the struct schema the reader produces for the columns
 * of interest (top-level names matched exactly against the footer's
 * top-level elements); stats[i] describes child i. Bytes are borrowed from
 * `md`. */
void hs_scan_row_group_stats(const hs_pq_file_metadata *md, uint32_t rg,
                             const struct ArrowSchema *fields, hs_expr_stats *stats);

#endif /* HS_QUERY_SCAN_H */
