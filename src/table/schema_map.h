/*
 * schema_map.h — reading data files written under older schemas (Iceberg
 * "Schema Evolution" / "Column Projection"): columns of a data file are
 * matched to the read schema by field id, not by name; a field the file
 * lacks reads as NULL; a file's int/float/decimal(P,S) is promoted to the
 * schema's long/double/decimal(P',S); dropped columns are never read.
 * Files without field ids fall back to the table's
 * `schema.name-mapping.default`, else to names.
 *
 * Used by both scans (src/table/scan.c, src/query/scan.c): the read schema
 * of the snapshot (its schema-id), a map per data file from the columns a
 * scan wants to the file's columns, and the adaptation of each batch the
 * Parquet reader returns for the file's names into the wanted columns.
 */
#ifndef HS_TABLE_SCHEMA_MAP_H
#define HS_TABLE_SCHEMA_MAP_H

#include "../arrow/arrow.h"
#include "table.h"

/* The schema a read of `snapshot_id` uses: for a snapshot named by id
 * (time travel), the snapshot's own schema-id when it records one; for -1
 * (the current snapshot, not named) and otherwise, the table's current
 * schema, as Iceberg's scans do (a column added after the last append
 * reads as NULL). NULL when missing. */
const hs_iceberg_schema *hs_table_read_schema(const hs_table *t, int64_t snapshot_id);

/* That schema as Arrow (every node carries PARQUET:field_id). */
hs_status hs_table_read_schema_arrow(const hs_table *t, int64_t snapshot_id,
                                     struct ArrowSchema *out, hs_error *err);

typedef enum hs_colmap_conv {
  HS_COLMAP_PASS,      /* the file's array as is */
  HS_COLMAP_RELABEL,   /* same data, wider type (decimal precision) */
  HS_COLMAP_I32_I64,   /* int -> long */
  HS_COLMAP_F32_F64,   /* float -> double */
  HS_COLMAP_OFFSETS,   /* string/binary <-> large_string/large_binary (fixed outputs only) */
  HS_COLMAP_NULLS,     /* absent from the file: all NULL */
  HS_COLMAP_DEFAULT,   /* absent from the file: the field's (v3) initial-default */
  HS_COLMAP_LIST_FSL,  /* list<float> (another engine's vectors) -> fixed_size_list<float, D> */
  HS_COLMAP_LLIST_FSL, /* the same from large_list<float> */
  HS_COLMAP_ROW_ID,    /* v3 `_row_id`: stored, else inherited (lineage.h) */
  HS_COLMAP_LAST_SEQ   /* v3 `_last_updated_sequence_number`: the same */
} hs_colmap_conv;

struct hs_lineage_pos;

/* How one data file's columns become the wanted ones. */
typedef struct hs_colmap {
  size_t n;               /* wanted (output) columns */
  char **file_names;      /* per output column: the file's top-level name; NULL: absent
                             (all NULL); "": absent, read as its initial-default */
  hs_colmap_conv *conv;   /* per output column */
  int64_t *src;           /* per output column: index in `read`, -1 when absent */
  char **read;            /* the names to ask the Parquet reader for, in order */
  size_t n_read;          /* >= 1: a file with none of the columns reads its first one */
  bool identity;          /* read == wanted names, every conv PASS: batches need no change */
  struct ArrowSchema out; /* the output schema (struct) */
  uint8_t **def;          /* per output column: its default value (HS_COLMAP_DEFAULT) */
  size_t *def_len;
  char *path;       /* the data file (errors of HS_COLMAP_LIST_FSL) */
  int64_t *rows_in; /* rows applied so far (one counter, so that errors name the file's row) */
  /* Row lineage (lineage.h): the file's first_row_id and data sequence
   * number, and where the next batch's rows lie in the file; the scan that
   * built the map sets them (defaults: no first_row_id, sequence 0, rows
   * contiguous from rows_in). */
  struct hs_lineage_pos *lin;
} hs_colmap;

/* What a map needs of the table, copied at a scan's opening (a stream
 * outlives refreshes of its table handle): the name mapping property and
 * the top-level fields' (v3) initial-defaults. */
typedef struct hs_colmap_ctx {
  char *name_mapping; /* schema.name-mapping.default, NULL when unset */
  size_t n;
  int32_t *ids; /* top-level fields of the read schema */
  char **names;
  char **defaults; /* initial-default JSON text; NULL when none (or null) */
} hs_colmap_ctx;

hs_status hs_colmap_ctx_init(const hs_table *t, const hs_iceberg_schema *schema, hs_colmap_ctx *out,
                             hs_error *err);
void hs_colmap_ctx_free(hs_colmap_ctx *c);

/* Map `want` (a struct schema whose children carry PARQUET:field_id) onto
 * the columns of a data file whose reader schema is `file`. With `fixed`
 * the output types are want's: a file column must have that type (same
 * formats, same nested field ids) or one promotable to it, else
 * HS_ERR_SCHEMA naming `path`, the column and both types. Without it the
 * output types are chosen: the file's own type (renamed to want's name)
 * where its nesting (child counts, nested field ids) is want's, want's
 * where the file's promotes to it or lacks the column; a nested column
 * whose fields differ (a field added inside a struct) is HS_ERR_SCHEMA. A file that
 * lacks a column whose field has an initial-default (v3) reads the default
 * (schema_default.c); a default of a type not read yet is HS_ERR_UNSUPPORTED
 * rather than NULLs. */
hs_status hs_colmap_build(const hs_colmap_ctx *ctx, const struct ArrowSchema *want,
                          const struct ArrowSchema *file, bool fixed, const char *path,
                          hs_colmap *out, hs_error *err);

void hs_colmap_free(hs_colmap *m);

/* Turn batch `in` (a struct array read with m->read) into `out`, shaped as
 * m->out: children moved, promoted or NULL-filled. `in` is consumed
 * (released) on every return. Batches of one map are the file's rows in
 * order: a variable-length list read as a vector column whose non-null
 * row does not hold exactly the dimension is HS_ERR_SCHEMA naming the
 * file, the row (counted over the batches applied) and the length. */
hs_status hs_colmap_apply(const hs_colmap *m, struct ArrowArray *in, struct ArrowArray *out,
                          hs_error *err);

/* An all-NULL array of `type` and `length` rows (nested types: empty
 * lists, NULL struct fields). */
hs_status hs_colmap_null_array(const struct ArrowSchema *type, int64_t length,
                               struct ArrowArray *out, hs_error *err);

/* schema_default.c: the JSON single value `json` as one value of Arrow
 * type `type` (*bytes hs_malloc'd: the value's bytes, or a string's UTF-8).
 * HS_ERR_UNSUPPORTED for types not read yet, HS_ERR_CORRUPT for a value
 * that does not fit the type. */
hs_status hs_colmap_default_parse(const char *json, const struct ArrowSchema *type, uint8_t **bytes,
                                  size_t *len, hs_error *err);
/* `length` rows of that value (no NULLs). */
hs_status hs_colmap_default_array(const struct ArrowSchema *type, const uint8_t *bytes, size_t len,
                                  int64_t length, struct ArrowArray *out, hs_error *err);

#endif /* HS_TABLE_SCHEMA_MAP_H */
