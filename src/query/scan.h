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

/* The same with the footer's top-level name of each child given apart:
 * names[i] is child i's column in the file (NULL: the file lacks it, so
 * every row is NULL); names NULL: the children's own names. Used when a
 * file was written under an older schema (src/table/schema_map.h). */
void hs_scan_row_group_stats_names(const hs_pq_file_metadata *md, uint32_t rg,
                                   const struct ArrowSchema *fields, const char *const *names,
                                   hs_expr_stats *stats);

/* v3 row lineage (src/table/lineage.h): the statistics of rows [first, end)
 * of a data file for `_row_id` (row_id) or `_last_updated_sequence_number`,
 * whose values are the stored column's where non-null, else inherited
 * (first_row_id + position, -1: NULL; the entry's data_seq). `stored`: the
 * file holds the column and *s already describes its stored values (as
 * hs_scan_row_group_stats_names gives them); they are widened by what its
 * NULLs inherit. Otherwise *s is replaced by the inherited values' range. */
void hs_scan_lineage_stats(bool row_id, int64_t first_row_id, int64_t data_seq, int64_t first,
                           int64_t end, bool stored, hs_expr_stats *s);

/* One Parquet statistic (min/max bytes of element `e`) as a scalar of
 * Arrow type `at`; false when it cannot be taken exactly. `typed`: the
 * bytes are ordered by the column's own sort order (min_value/max_value,
 * column indexes of files with column orders); otherwise only signed
 * types are accepted. Bytes are borrowed. */
bool hs_scan_pq_scalar(const hs_pq_schema_element *e, const hs_arrow_type *at, hs_pq_bytes b,
                       bool typed, hs_expr_scalar *out);

/* Leaf index of top-level element `name` in the footer's flat schema (and
 * the element in *elem), or -1 when absent, a group or malformed. */
int32_t hs_scan_pq_top_leaf(const hs_pq_file_metadata *md, const char *name,
                            const hs_pq_schema_element **elem);

/* Page-level pruning of one row group (scan_pages.c). */
typedef struct hs_scan_page_ranges {
  int64_t *ranges;      /* 2 * n entries: [start, end) rows of the row group, increasing */
  size_t n;             /* ranges that may hold matching rows */
  int64_t rows;         /* rows in those ranges */
  bool indexed;         /* a filter column had a usable page index */
  int64_t pages;        /* pages of the indexed filter columns */
  int64_t pages_pruned; /* of those, pages no surviving range touches */
} hs_scan_page_ranges;

/* The rows of row group `g` of the file with footer `md` (read through
 * `src`) that the page indexes of the filter's flat columns cannot rule
 * out for `e`, bound to `fields` (the filter columns, as for
 * hs_scan_row_group_stats). The row group is cut at every page boundary
 * of every indexed filter column; in each piece each column's values lie
 * in one page, whose statistics (min/max, null page, null count) feed
 * hs_expr_may_match as row-group statistics would, so AND/OR/NOT are
 * handled exactly as for row groups. Columns without a usable index
 * (absent, malformed, nested) contribute their row-group statistics.
 * Without any index: one range, all rows, indexed false. Only running out
 * of memory is an error. Arrays come from `arena`. */
hs_status hs_scan_page_ranges_compute(hs_source *src, const hs_pq_file_metadata *md, uint32_t g,
                                      const struct ArrowSchema *fields, const hs_expr *e,
                                      hs_arena *arena, hs_scan_page_ranges *out, hs_error *err);
/* The same with the file's column names given apart (as for
 * hs_scan_row_group_stats_names). */
hs_status hs_scan_page_ranges_compute_names(hs_source *src, const hs_pq_file_metadata *md,
                                            uint32_t g, const struct ArrowSchema *fields,
                                            const char *const *names, const hs_expr *e,
                                            hs_arena *arena, hs_scan_page_ranges *out,
                                            hs_error *err);

/* Where the rows of the batch a hs_table_scan_query stream emitted last
 * come from (vector_search.c scores rows by file and row position). */
typedef struct hs_scan_origin {
  size_t file;         /* index of the data file in the snapshot's plan (manifest order) */
  const char *path;    /* that data file; valid until the stream is released */
  const int64_t *rows; /* file-wide row of each batch row; valid until the next
                          get_next. NULL: rows first, first + 1, ... */
  int64_t first;
  int64_t n; /* rows in the batch */
} hs_scan_origin;

/* The origin of the last batch emitted by `stream` (made by
 * hs_table_scan_query, not released; without `limit`, rows are never cut).
 * HS_ERR_INVALID_ARG for another stream or before the first batch. */
hs_status hs_scan_batch_origin(const struct ArrowArrayStream *stream, hs_scan_origin *out,
                               hs_error *err);

/* Internal hooks of a scan (vector_search.c). keep_file (NULL: all) drops
 * the planned data file `plan_index` (of the snapshot's plan, after the
 * filter's file pruning) from the scan. on_rows (only with a filter)
 * replaces the output: the matching rows (file-wide positions, increasing
 * within a call) of each evaluated batch are handed to it and no batch is
 * emitted; an error it returns ends the stream. */
typedef struct hs_scan_hooks {
  bool (*keep_file)(void *ctx, size_t plan_index, const char *path, int64_t file_size);
  hs_status (*on_rows)(void *ctx, size_t plan_index, const char *path, const int64_t *rows,
                       size_t n, hs_error *err);
  void *ctx;
  /* NULL: plan opts->snapshot_id here. Else the caller's plan of exactly
   * that snapshot (borrowed for the call; the stream keeps nothing of it). */
  const hs_table_plan *plan;
  /* NULL: load the table's index registry here (with a filter). Else the
   * caller's, loaded once for all the scans of one query (borrowed). */
  const hs_table_index_registry *reg;
  /* With on_rows: a data file whose scalar indexes answer the whole filter
   * exactly (index_plan.h) hands their rows to on_rows without reading the
   * file (its filter columns are not re-checked). */
  bool rows_from_index;
  /* Planning (split.c), with a filter: each file that survives the
   * manifest is opened (footer, row-group statistics, scalar indexes) and,
   * instead of being read, handed to on_cand (with ctx): `cand` its
   * candidate rows within the kept row groups, deleted rows removed (NULL:
   * no index narrowed the file), `exact` as hs_index_plan_rows says, `rows`
   * how many rows may match (cand's cardinality, else the live rows of the
   * kept row groups; 0 when nothing can). */
  hs_status (*on_cand)(void *ctx, size_t plan_index, const char *path, const roaring_bitmap_t *cand,
                       bool exact, int64_t rows, hs_error *err);
  /* A split's scan (split.c): the candidates the plan gave data file
   * `plan_index` (NULL: none; the file's indexes are asked as usual), used
   * instead of the index files (with cand_ctx; borrowed for the scan). */
  const roaring_bitmap_t *(*given_cand)(void *cand_ctx, size_t plan_index, bool *exact);
  void *cand_ctx;
  /* NULL, or called with cand_ctx when the stream is released (a stream
   * that failed to open does not call it: the caller frees then). */
  void (*cand_free)(void *cand_ctx);
} hs_scan_hooks;

/* A data file's rows as one bitmap of row positions (borrowed for the
 * call): hs_table_scan_rows_bitmap. */
typedef hs_status (*hs_scan_bitmap_fn)(void *ctx, size_t plan_index, const char *path,
                                       const roaring_bitmap_t *rows, hs_error *err);

/* A filtered scan of snapshot `snapshot_id` that emits nothing (its rows go
 * to hooks->on_rows, or keep_file takes every file): opened, run to its
 * end and released. `what` (may be NULL) prefixes errors met while it runs.
 * *stats (may be NULL) gets the scan's counters. */
hs_status hs_table_scan_rows(hs_table *table, int64_t snapshot_id, const char *filter,
                             const hs_scan_hooks *hooks, const char *what, hs_scan_stats *stats,
                             hs_error *err);

/* hs_table_scan_rows where a file that hooks->rows_from_index lets the
 * scalar indexes answer hands its rows to on_bitmap (with hooks->ctx) as one
 * bitmap, instead of to on_rows in blocks of positions; other files still
 * go to on_rows. */
hs_status hs_table_scan_rows_bitmap(hs_table *table, int64_t snapshot_id, const char *filter,
                                    const hs_scan_hooks *hooks, hs_scan_bitmap_fn on_bitmap,
                                    const char *what, hs_scan_stats *stats, hs_error *err);

/* hs_table_scan_query with `hooks` (NULL: none; copied). */
hs_status hs_table_scan_query_hooked(hs_table *table, const hs_scan_options *opts,
                                     const hs_scan_hooks *hooks, struct ArrowArrayStream *out,
                                     hs_error *err);

/* Keep only the files of `plan` whose path is one of paths[0..n) (plan
 * order kept; split.c). A path not in the plan is HS_ERR_NOT_FOUND naming
 * it and the planned snapshot. */
hs_status hs_scan_plan_restrict(hs_table_plan *plan, const char *const *paths, size_t n,
                                hs_error *err);

/* Morsels: a scan cut into row ranges of its files, for several workers
 * reading it at once (src/sql/op_scan.c). hs_scan_morsels lists the
 * ranges of `stream` (made by hs_table_scan_query, not yet read): each
 * file's rows [0, record count) in pieces of `rows`, in the stream's order
 * (*out owned, hs_free it). *n is 0 (nothing listed) when the scan cannot
 * be cut: a limit, hooks, a scalar index on a filter column of a file (its
 * candidates are the file's), a stream already read.
 *
 * hs_scan_morsel_open opens one range as a stream of its own: the rows
 * the whole scan would give from those file rows, in order (pruning,
 * pages, deletes, projection, schema evolution as in the scan). A range
 * that is a whole file reads exactly as the serial scan reads that file;
 * a part of a file is read through a row selection (the Parquet reader
 * has no row-group subset), which costs the reader more CPU. It only
 * reads `stream`, so several morsels may be opened and read at once on
 * different threads; `stream` must outlive them and not be read itself.
 * hs_scan_morsel_done adds a morsel's counters to the stream's (callers
 * serialize these calls; each row group and file is counted by the morsel
 * holding its first row, so the sums are the whole scan's). */
typedef struct hs_scan_morsel {
  size_t file;        /* ordinal among the scan's files (after pruning) */
  int64_t first, end; /* file rows [first, end) */
} hs_scan_morsel;

hs_status hs_scan_morsels(const struct ArrowArrayStream *stream, int64_t rows, hs_scan_morsel **out,
                          size_t *n, hs_error *err);
hs_status hs_scan_morsel_open(const struct ArrowArrayStream *stream, const hs_scan_morsel *m,
                              struct ArrowArrayStream *out, hs_error *err);
hs_status hs_scan_morsel_done(struct ArrowArrayStream *stream,
                              const struct ArrowArrayStream *morsel, hs_error *err);

/* scan_prefetch.c: on an object store, the pages of `rows` (a file's
 * index candidates) in the columns `cols` (file names, top level; NULLs
 * skipped), with their dictionaries, fetched in one parallel wave (after
 * one for the chunks' page indexes, when not cached) before the reader
 * reads them. Nothing for local files or more than 65,536 rows; best
 * effort. */
void hs_scan_prefetch_rows(hs_parquet_reader *r, const char *uri, const roaring_bitmap_t *rows,
                           const char *const *cols, size_t n_cols);

#endif /* HS_QUERY_SCAN_H */
