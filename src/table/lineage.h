/*
 * lineage.h — v3 row lineage (Iceberg spec "Row Lineage"): the metadata
 * columns `_row_id` (field id 2147483540) and `_last_updated_sequence_number`
 * (2147483539), read and written.
 *
 * Reading: a scan that names either column gets it as an int64 column
 * (schema_map.c maps it, HS_COLMAP_ROW_ID / HS_COLMAP_LAST_SEQ): the value
 * stored in the data file's column of that field id where present and
 * non-null, else inherited: `_row_id` = the file's first_row_id + the row's
 * position in the file (NULL when the file has no first_row_id: snapshots
 * from before an upgrade to v3); `_last_updated_sequence_number` = the data
 * sequence number of the file's manifest entry. Tables of format v1/v2 have
 * no lineage: naming the columns is HS_ERR_UNSUPPORTED naming the version.
 *
 * Writing (rowdelta.c's copy-on-write and updates, compaction): a stream
 * appended through hs_table_append_schema may end with the two columns
 * (int64, these names): they are written into the data file under the
 * reserved field ids. Per the spec a row moved to a new file keeps its
 * `_row_id`; `_last_updated_sequence_number` keeps its value when the row
 * is unchanged and is NULL (inherits the new commit's sequence number) when
 * the row was modified. hs_lineage_scan_columns gives a rewriter the column
 * list that reads a table's rows with both columns.
 */
#ifndef HS_TABLE_LINEAGE_H
#define HS_TABLE_LINEAGE_H

#include "../arrow/arrow.h"
#include "table.h"

#define HS_LINEAGE_ROW_ID_FIELD 2147483540
#define HS_LINEAGE_SEQ_FIELD 2147483539
#define HS_LINEAGE_ROW_ID "_row_id"
#define HS_LINEAGE_SEQ "_last_updated_sequence_number"

typedef enum hs_lineage_kind {
  HS_LINEAGE_NONE = 0,
  HS_LINEAGE_ROW_ID_COL,
  HS_LINEAGE_SEQ_COL
} hs_lineage_kind;

/* Which lineage column a name or field id is. */
hs_lineage_kind hs_lineage_of_name(const char *name);
hs_lineage_kind hs_lineage_of_field(int32_t field_id);

/* Where a map's rows come from in its data file, and what they inherit
 * (schema_map.c owns one per hs_colmap; scans set it). */
typedef struct hs_lineage_pos {
  int64_t first_row_id; /* the file's first_row_id; -1: none (_row_id inherits NULL) */
  int64_t data_seq;     /* the data sequence number of its manifest entry */
  /* The next batch's rows: positions rows[0..length) when `rows`, else
   * first, first + 1, ...; when `set` is false the map's rows applied so
   * far are the first position (a whole-file read). Reset after a batch. */
  const int64_t *rows;
  int64_t first;
  bool set;
} hs_lineage_pos;

/* `full` (the read schema as Arrow, a struct) with the lineage columns of
 * names[0..n) appended (int64, nullable, their reserved field ids) when it
 * lacks them; `filter` (may be NULL) also counts as naming a column it
 * mentions. A table below format 3 is HS_ERR_UNSUPPORTED naming the column
 * and the version. Nothing named: `full` unchanged. */
hs_status hs_lineage_schema_add(const hs_table *t, const char *const *names, size_t n,
                                const char *filter, struct ArrowSchema *full, hs_error *err);

/* The int64 column of `length` rows: from `stored` (an int64 array of the
 * file's column, may be NULL when the file lacks it) where non-null, else
 * inherited per `pos` for `kind`. */
hs_status hs_lineage_column(hs_lineage_kind kind, const struct ArrowArray *stored,
                            const hs_lineage_pos *pos, int64_t length, struct ArrowArray *out,
                            hs_error *err);

/* Writing: how many of `in`'s last children are lineage columns (0, 1 or
 * 2; `_row_id` then `_last_updated_sequence_number`, each int64). */
size_t hs_lineage_trailing(const struct ArrowSchema *in);
/* `in` without its last `k` children, into *core (owned). A table below
 * format 3 is HS_ERR_UNSUPPORTED naming the column. */
hs_status hs_lineage_schema_core(const hs_table *t, const struct ArrowSchema *in, size_t k,
                                 struct ArrowSchema *core, hs_error *err);
/* *stamped_core (consumed) with `in`'s last `k` children appended, stamped
 * with their reserved field ids, into *out. */
hs_status hs_lineage_schema_stamp(struct ArrowSchema *stamped_core, const struct ArrowSchema *in,
                                  size_t k, struct ArrowSchema *out, hs_error *err);

/* For a rewriter (copy-on-write, compaction): the top-level column names of
 * the read schema of `snapshot_id` followed, in a v3 table, by `_row_id`
 * and `_last_updated_sequence_number`, so that a scan with them and an
 * append of its batches (through hs_table_append_schema) keep each row's
 * lineage. *names is one hs_malloc'd block (free with hs_free); v1/v2
 * tables get the plain columns. */
hs_status hs_lineage_scan_columns(const hs_table *t, int64_t snapshot_id, const char ***names,
                                  size_t *n, hs_error *err);

#endif /* HS_TABLE_LINEAGE_H */
