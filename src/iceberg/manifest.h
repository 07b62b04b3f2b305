/*
 * manifest.h — Iceberg manifests and manifest lists (apache/iceberg
 * format/spec.md, "Manifests" and "Manifest Lists"), format v2 and v3, as
 * Avro object container files through src/avro/, plus the data-file model
 * with column metrics computed from a Parquet footer.
 *
 * Writers produce the spec's Avro schemas with every field id (data_file
 * fields 100.., partition 102 with partition field ids 1000+, manifest_entry
 * 0..4, manifest_file 500..) and the header metadata keys Iceberg readers
 * expect. Readers resolve fields by NAME against our reader schema, so
 * manifests written by pyiceberg or Java Iceberg (any version, extra or
 * missing optional fields) read too, and apply the spec's inheritance of
 * snapshot id, sequence numbers and (v3) first_row_id from the manifest-list
 * entry.
 *
 * Ownership: everything a reader or hs_iceberg_data_file_from_parquet
 * produces lives in the caller's hs_arena (strings and bytes included) and
 * never points into the input bytes. Writers copy what they need from the
 * entries passed to them; the caller's structs may be reused right after.
 *
 * Optional values carry a has_ flag; byte strings are absent when their
 * pointer is NULL (a present empty string has a non-NULL pointer, len 0).
 */
#ifndef HS_ICEBERG_MANIFEST_H
#define HS_ICEBERG_MANIFEST_H

#include <string.h>

#include "../avro/avro.h"
#include "../io/io.h"
#include "../parquet/metadata.h"
#include "iceberg.h"

/* -------------------------------------------------------------- model */

/* data_file.content (field 134) and manifest content. */
typedef enum hs_iceberg_content {
  HS_ICE_CONTENT_DATA = 0,
  HS_ICE_CONTENT_POSITION_DELETES = 1,
  HS_ICE_CONTENT_EQUALITY_DELETES = 2
} hs_iceberg_content;

/* manifest_file.content (field 517): data or deletes. */
typedef enum hs_iceberg_manifest_content {
  HS_ICE_MANIFEST_DATA = 0,
  HS_ICE_MANIFEST_DELETES = 1
} hs_iceberg_manifest_content;

/* manifest_entry.status (field 0). */
typedef enum hs_iceberg_entry_status {
  HS_ICE_ENTRY_EXISTING = 0,
  HS_ICE_ENTRY_ADDED = 1,
  HS_ICE_ENTRY_DELETED = 2
} hs_iceberg_entry_status;

/* Metrics of one column (leaf field id) of a data file. The spec keeps each
 * metric in its own map keyed by field id; a field id appears in a map only
 * when its has_ flag (or bound pointer) is set. Bounds are Iceberg's
 * single-value binary serialization (appendix D) of the field's type. */
typedef struct hs_iceberg_column_metrics {
  int32_t field_id;
  bool has_column_size;
  int64_t column_size; /* column_sizes (108): on-disk bytes, compressed */
  bool has_value_count;
  int64_t value_count; /* value_counts (109): values incl. nulls and NaN */
  bool has_null_count;
  int64_t null_count; /* null_value_counts (110) */
  bool has_nan_count;
  int64_t nan_count;    /* nan_value_counts (137) */
  const uint8_t *lower; /* lower_bounds (125); NULL when absent */
  size_t lower_len;
  const uint8_t *upper; /* upper_bounds (128); NULL when absent */
  size_t upper_len;
} hs_iceberg_column_metrics;

/* One data (or delete) file: the data_file struct (field 2 of the entry). */
typedef struct hs_iceberg_data_file {
  hs_iceberg_content content;
  const char *file_path;
  const char *file_format; /* "PARQUET", "AVRO", "ORC", "PUFFIN" as written */
  /* Partition tuple, one value per partition-spec field in spec order, of
   * the field's result type (hs_iceberg_partition_types). */
  hs_iceberg_value *partition;
  size_t n_partition;
  int64_t record_count;
  int64_t file_size_in_bytes;
  /* Metrics sorted by field id, each id at most once. */
  hs_iceberg_column_metrics *metrics;
  size_t n_metrics;
  const uint8_t *key_metadata; /* NULL when absent */
  size_t key_metadata_len;
  bool has_split_offsets;
  int64_t *split_offsets; /* ascending row-group start offsets */
  size_t n_split_offsets;
  bool has_equality_ids;
  int32_t *equality_ids; /* equality deletes only */
  size_t n_equality_ids;
  bool has_sort_order_id;
  int32_t sort_order_id;
  /* v3 */
  bool has_first_row_id; /* after reading: inherited when not written */
  int64_t first_row_id;
  const char *referenced_data_file; /* deletes; NULL when absent */
  bool has_content_offset;
  int64_t content_offset; /* deletion vectors */
  bool has_content_size_in_bytes;
  int64_t content_size_in_bytes;
} hs_iceberg_data_file;

/* Whether `d` is a v3 deletion vector (a position delete stored as a
 * Puffin blob) rather than a position-delete file. */
static inline bool hs_iceberg_data_file_is_dv(const hs_iceberg_data_file *d) {
  return d->content == HS_ICE_CONTENT_POSITION_DELETES && d->file_format != NULL &&
         strcmp(d->file_format, "PUFFIN") == 0;
}

/* One manifest entry. On write, has_snapshot_id/has_sequence_number/
 * has_file_sequence_number false writes null ("inherit from the manifest
 * list entry"), which is what a new ADDED entry should do. After a read the
 * values are the inherited ones (has_ true) whenever inheritance applies. */
typedef struct hs_iceberg_manifest_entry {
  hs_iceberg_entry_status status;
  bool has_snapshot_id;
  int64_t snapshot_id;
  bool has_sequence_number;
  int64_t sequence_number; /* data sequence number */
  bool has_file_sequence_number;
  int64_t file_sequence_number;
  hs_iceberg_data_file data_file;
} hs_iceberg_manifest_entry;

/* manifest_file.partitions element (field 508 -> 509..). */
typedef struct hs_iceberg_field_summary {
  bool contains_null;
  bool has_contains_nan;
  bool contains_nan;
  const uint8_t *lower_bound; /* NULL when absent (all null, or no values) */
  size_t lower_len;
  const uint8_t *upper_bound;
  size_t upper_len;
} hs_iceberg_field_summary;

/* One manifest-list entry (manifest_file struct, fields 500..). */
typedef struct hs_iceberg_manifest_file {
  const char *manifest_path;
  int64_t manifest_length;
  int32_t partition_spec_id;
  hs_iceberg_manifest_content content;
  int64_t sequence_number;     /* v1 lists: 0 */
  int64_t min_sequence_number; /* v1 lists: 0 */
  int64_t added_snapshot_id;
  int32_t added_files_count;
  int32_t existing_files_count;
  int32_t deleted_files_count;
  int64_t added_rows_count;
  int64_t existing_rows_count;
  int64_t deleted_rows_count;
  bool has_partitions;
  hs_iceberg_field_summary *partitions; /* one per partition field */
  size_t n_partitions;
  const uint8_t *key_metadata; /* NULL when absent */
  size_t key_metadata_len;
  bool has_first_row_id; /* v3: data manifests */
  int64_t first_row_id;
} hs_iceberg_manifest_file;

/* The result type of each field of `spec` applied to `schema` (the
 * partition struct's field types, in spec order), into an arena array of
 * spec->n_fields. A source id missing from the schema or a transform that
 * does not fit its source is HS_ERR_SCHEMA naming the partition field;
 * unknown transforms give HS_ERR_UNSUPPORTED. */
hs_status hs_iceberg_partition_types(const hs_iceberg_schema *schema,
                                     const hs_iceberg_partition_spec *spec, hs_arena *arena,
                                     hs_iceberg_type **out, hs_error *err);

/* ------------------------------------------------- data files (Parquet) */

typedef struct hs_iceberg_data_file_options {
  const hs_iceberg_schema *schema; /* table schema: field ids -> Iceberg types */
  const char *file_path;           /* as recorded in the manifest (copied) */
  int64_t file_size_in_bytes;
  /* Partition tuple (values copied; bytes too), n_partition == spec fields. */
  const hs_iceberg_value *partition;
  size_t n_partition;
  bool has_sort_order_id;
  int32_t sort_order_id;
  /* Metrics mode for string and binary bounds: truncate(N). 0 means the
   * Iceberg default, 16; negative means "full" (no truncation). */
  int32_t truncate_length;
} hs_iceberg_data_file_options;

/* Fill *out for a Parquet data file from its footer: record_count,
 * split_offsets (row-group starts), and for every leaf whose schema element
 * carries a field_id that names a primitive field of opts->schema:
 * column_size (sum of compressed chunk sizes), value_count (sum of
 * num_values), null_count (when every chunk has one), and lower/upper bounds
 * from chunk statistics converted to Iceberg's binary form (min over chunks,
 * max over chunks; only when every non-all-null chunk has them). Strings
 * and binary are truncated to truncate(16); a truncated upper bound is
 * incremented (the last code point / byte that can be) and dropped when no
 * increment exists. Float/double bounds exclude NaN (as Parquet's do) and
 * are dropped when a min/max is NaN; nan_count is left absent. A bound that
 * cannot be converted exactly (INT96, a unit needing rounding, a chunk with
 * values but no statistics) is left absent. Leaves inside lists and maps get
 * sizes and counts but no bounds. Everything lands in `arena`. */
hs_status hs_iceberg_data_file_from_parquet(const hs_pq_file_metadata *footer,
                                            const hs_iceberg_data_file_options *opts,
                                            hs_arena *arena, hs_iceberg_data_file *out,
                                            hs_error *err);

/* Convenience: read the footer of the Parquet file at `path` (size taken
 * from the file when opts->file_size_in_bytes is 0; file_path defaults to
 * `path` when opts->file_path is NULL) and call the function above. */
hs_status hs_iceberg_data_file_from_parquet_path(const char *path,
                                                 const hs_iceberg_data_file_options *opts,
                                                 hs_arena *arena, hs_iceberg_data_file *out,
                                                 hs_error *err);

/* The same from the footer a closed writer wrote (hs_parquet_writer_footer:
 * no read of the file; size from the writer when opts->file_size_in_bytes
 * is 0); opts->file_path is required. */
typedef struct hs_parquet_writer hs_parquet_writer; /* parquet/parquet.h */
hs_status hs_iceberg_data_file_from_parquet_writer(const hs_parquet_writer *writer,
                                                   const hs_iceberg_data_file_options *opts,
                                                   hs_arena *arena, hs_iceberg_data_file *out,
                                                   hs_error *err);

/* ----------------------------------------------------------- manifests */

typedef struct hs_iceberg_manifest_writer_options {
  int32_t format_version; /* 2 or 3 */
  hs_iceberg_manifest_content content;
  const hs_iceberg_schema *schema;       /* table schema (its JSON goes in "schema") */
  const hs_iceberg_partition_spec *spec; /* the files' spec (fields JSON, "partition-spec") */
  /* The snapshot that will reference this manifest and its data sequence
   * number: entries written with null ids/sequence numbers inherit these
   * when read, and the summary (hs_iceberg_manifest_writer_close) uses them
   * for added_snapshot_id, sequence_number and min_sequence_number. */
  int64_t snapshot_id;
  int64_t sequence_number;
  const uint8_t *sync; /* 16 bytes for reproducible files; NULL: random */
} hs_iceberg_manifest_writer_options;

typedef struct hs_iceberg_manifest_writer hs_iceberg_manifest_writer;

/* Start a manifest written to exactly one of `buf` (appended to) or `sink`
 * (written through; the caller closes it). The options' schema and spec
 * must outlive the writer. *out is owned: hs_iceberg_manifest_writer_close
 * or hs_iceberg_manifest_writer_free. */
hs_status hs_iceberg_manifest_writer_open(const hs_iceberg_manifest_writer_options *opts,
                                          hs_buf *buf, hs_sink *sink,
                                          hs_iceberg_manifest_writer **out, hs_error *err);
/* Append one entry. Its partition tuple must have one value per spec field,
 * of the field's result type; metrics must be sorted by field id. */
hs_status hs_iceberg_manifest_writer_add(hs_iceberg_manifest_writer *w,
                                         const hs_iceberg_manifest_entry *entry, hs_error *err);
/* Finish the file and free the writer (always freed, even on error).
 * When `summary` is not NULL it receives the manifest-list entry for this
 * manifest: counts, partition field summaries, spec id, content, snapshot
 * id and sequence numbers; manifest_path is NULL and manifest_length is
 * the bytes written: the caller sets the path. Summary bytes live in
 * `arena` (required when summary is not NULL). */
hs_status hs_iceberg_manifest_writer_close(hs_iceberg_manifest_writer *w,
                                           hs_iceberg_manifest_file *summary, hs_arena *arena,
                                           hs_error *err);
void hs_iceberg_manifest_writer_free(hs_iceberg_manifest_writer *w); /* accepts NULL */

/* A manifest read whole. */
typedef struct hs_iceberg_manifest {
  int32_t format_version; /* from "format-version"; 1 when absent */
  hs_iceberg_manifest_content content;
  bool has_schema_id;
  int32_t schema_id;
  bool has_schema;
  hs_iceberg_schema schema; /* parsed "schema" metadata */
  int32_t partition_spec_id;
  hs_iceberg_partition_spec spec; /* "partition-spec" fields (ids as written) */
  /* Types of the partition tuple's values, from the file's Avro partition
   * struct (one per field, in the file's order). */
  hs_iceberg_type *partition_types;
  size_t n_partition_types;
  hs_iceberg_manifest_entry *entries;
  size_t n_entries;
} hs_iceberg_manifest;

/* Read a manifest (`data` borrowed for the call only). `from_list` (may be
 * NULL) is the manifest-list entry that referenced it: entries with null
 * snapshot_id inherit its added_snapshot_id; ADDED entries with a null
 * (file) sequence number inherit its sequence_number (v1 manifests: 0);
 * in v3 data manifests, live entries (ADDED, EXISTING) with a null
 * first_row_id get from_list->first_row_id plus the record counts of the
 * preceding such entries. Without from_list nothing is inherited. The
 * partition tuple is decoded by field name against the partition type the
 * file's own Avro schema declares (field ids 1000+), so the table schema is
 * not needed. Errors name the manifest entry index and field. */
hs_status hs_iceberg_manifest_read(const uint8_t *data, size_t len,
                                   const hs_iceberg_manifest_file *from_list, hs_arena *arena,
                                   hs_iceberg_manifest *out, hs_error *err);

/* ------------------------------------------------------ manifest lists */

typedef struct hs_iceberg_manifest_list_options {
  int32_t format_version; /* 2 or 3 */
  int64_t snapshot_id;
  bool has_parent_snapshot_id;
  int64_t parent_snapshot_id;
  int64_t sequence_number;
  /* v3: the snapshot's first-row-id. Data manifests written without a
   * first_row_id get one assigned from here, advancing by their added and
   * existing row counts (spec "Row Lineage"). */
  int64_t first_row_id;
  const uint8_t *sync; /* 16 bytes or NULL */
} hs_iceberg_manifest_list_options;

/* Write a manifest list of `n` entries to exactly one of `buf` or `sink`.
 * In v3, *assigned_rows_out (may be NULL) receives the number of row ids
 * assigned (the snapshot's "added-rows"; next-row-id advances by it). */
hs_status hs_iceberg_manifest_list_write(const hs_iceberg_manifest_list_options *opts,
                                         const hs_iceberg_manifest_file *files, size_t n,
                                         hs_buf *buf, hs_sink *sink, int64_t *assigned_rows_out,
                                         hs_error *err);

typedef struct hs_iceberg_manifest_list {
  int32_t format_version; /* 1 when absent */
  bool has_snapshot_id;
  int64_t snapshot_id;
  bool has_parent_snapshot_id;
  int64_t parent_snapshot_id;
  bool has_sequence_number;
  int64_t sequence_number;
  bool has_first_row_id;
  int64_t first_row_id;
  hs_iceberg_manifest_file *files;
  size_t n_files;
} hs_iceberg_manifest_list;

/* Read a manifest list (`data` borrowed for the call only). */
hs_status hs_iceberg_manifest_list_read(const uint8_t *data, size_t len, hs_arena *arena,
                                        hs_iceberg_manifest_list *out, hs_error *err);

/* ------------------------------------------------------------------------
 * Private to src/iceberg/ (manifest.c, manifest_list.c): Avro value helpers.
 * Other layers must not use these. */

/* A record value of `node` whose optional fields (unions with a null branch)
 * are null; others zeroed. NULL on OOM. */
hs_avro_value *hs_ice_av_record(hs_arena *arena, const hs_avro_node *node);

/* A parsed Avro schema for `json` from the process-wide cache of manifest
 * and manifest-list schemas (manifest.c; at most 32, never freed, so the
 * pointer stays valid), parsing it on a miss. *shared: *out belongs to the
 * cache; false only when the cache is full (then the caller frees it).
 * *writer_json (may be NULL): the schema as hs_avro_schema_to_json writes
 * it, serialized once and kept by the cache (for hs_avro_writer_options
 * .schema_json), or NULL when not shared. */
hs_status hs_ice_avro_schema_cached(const hs_buf *json, hs_avro_schema **out, bool *shared,
                                    const char **writer_json, hs_error *err);

/* Set field `name` of record `rec` (a value of `node`); when the field is a
 * union, `v` is wrapped in the first branch of v's type. HS_ERR_INTERNAL
 * when the field or branch is missing. */
hs_status hs_ice_av_set(hs_arena *arena, const hs_avro_node *node, hs_avro_value *rec,
                        const char *name, hs_avro_value v, hs_error *err);
/* Field `name` of `rec`, unions unwrapped; NULL when absent or null. The
 * value's node goes to *type_out (may be NULL). */
const hs_avro_value *hs_ice_av_get(const hs_avro_node *node, const hs_avro_value *rec,
                                   const char *name, const hs_avro_node **type_out);
/* Integer field (int or long); absent or null leaves *has false, or is
 * HS_ERR_CORRUPT "<what>: missing <name>" when `has` is NULL. */
hs_status hs_ice_av_get_long(const hs_avro_node *node, const hs_avro_value *rec, const char *name,
                             const char *what, int64_t *out, bool *has, hs_error *err);
/* String or bytes field copied into `arena` (NUL-terminated); *out NULL when
 * absent (error when required: `required`). */
hs_status hs_ice_av_get_bytes(const hs_avro_node *node, const hs_avro_value *rec, const char *name,
                              const char *what, bool required, hs_arena *arena, const uint8_t **out,
                              size_t *len, hs_error *err);
/* Parse a decimal integer metadata value ("123", "-4"); false if malformed. */
bool hs_ice_parse_i64(const uint8_t *p, size_t len, int64_t *out);

#endif /* HS_ICEBERG_MANIFEST_H */
