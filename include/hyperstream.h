/*
 * hyperstream.h — the one public C API of HyperStreamDB.
 *
 * Conventions
 *  - Every fallible call returns hs_status (HS_OK == 0) and, when `err` is not
 *    NULL, fills it with a message naming what failed and where (file, column,
 *    offset, reason). `err` may always be NULL.
 *  - Opaque handles come in create/free pairs; every *_free accepts NULL.
 *  - Ownership is stated at each call that hands something out. Strings and
 *    buffers returned to the caller are released with hs_free().
 *  - In-memory data crosses this API as the Arrow C Data Interface.
 */
#ifndef HYPERSTREAM_H
#define HYPERSTREAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HS_VERSION_STRING "0.1.0"

/* ---------------------------------------------------------------- status */

typedef enum hs_status {
  HS_OK = 0,
  HS_ERR_INVALID_ARG = 1, /* caller passed something unusable */
  HS_ERR_IO = 2,          /* the operating system refused a read or write */
  HS_ERR_CORRUPT = 3,     /* bytes on disk violate the format */
  HS_ERR_UNSUPPORTED = 4, /* valid, but a feature we do not implement */
  HS_ERR_NOMEM = 5,       /* allocation failed or a size limit was exceeded */
  HS_ERR_SCHEMA = 6,      /* data does not fit the expected schema */
  HS_ERR_NOT_FOUND = 7,   /* a named file or column does not exist */
  HS_ERR_INTERNAL = 8,    /* a bug: an invariant did not hold */
  HS_ERR_CONFLICT = 9     /* a concurrent commit changed what this commit changes */
} hs_status;

/* Static string naming a status ("corrupt", "io error", ...). Never NULL. */
const char *hs_status_str(hs_status status);

#define HS_ERROR_MESSAGE_MAX 1024

/* Error detail. Zero-initialise before use; the first error set wins
 * (later failures while unwinding do not overwrite the root cause). */
typedef struct hs_error {
  hs_status status;
  char message[HS_ERROR_MESSAGE_MAX];
} hs_error;

/* Release memory that this API handed to the caller (strings, buffers). */
void hs_free(void *ptr);

/* ------------------------------------------ Arrow C Data Interface (ABI) */
/* The standard structures, as the Arrow specification defines them. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;
  void (*release)(struct ArrowSchema *);
  void *private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;
  void (*release)(struct ArrowArray *);
  void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
  int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
  const char *(*get_last_error)(struct ArrowArrayStream *);
  void (*release)(struct ArrowArrayStream *);
  void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/* ---------------------------------------------------------- Parquet read */

typedef struct hs_parquet_reader hs_parquet_reader;

/* Comparison used for row-group pruning by column-chunk statistics. */
typedef enum hs_cmp_op {
  HS_CMP_EQ = 0,
  HS_CMP_NE = 1,
  HS_CMP_LT = 2,
  HS_CMP_LE = 3,
  HS_CMP_GT = 4,
  HS_CMP_GE = 5
} hs_cmp_op;

typedef enum hs_value_kind {
  HS_VALUE_INT64 = 0,  /* integers, dates (days), times/timestamps (column unit) */
  HS_VALUE_DOUBLE = 1, /* floating point */
  HS_VALUE_STRING = 2  /* strings and binary, compared bytewise unsigned */
} hs_value_kind;

typedef struct hs_value {
  hs_value_kind kind;
  int64_t i64;
  double f64;
  const char *str; /* borrowed; str_len bytes */
  size_t str_len;
} hs_value;

/* "column op value": a row group is skipped only when its statistics prove
 * that no row in it can satisfy the predicate. Pruning never drops a row
 * that could match; callers re-check rows themselves. */
typedef struct hs_stat_predicate {
  const char *column; /* top-level leaf column name */
  hs_cmp_op op;
  hs_value value;
} hs_stat_predicate;

typedef struct hs_parquet_read_options {
  /* Projection: top-level column names, in output order; NULL means all. */
  const char *const *columns;
  size_t n_columns;
  /* Conjunction of predicates used to prune row groups; may be empty. */
  const hs_stat_predicate *predicates;
  size_t n_predicates;
  /* Row selection: strictly increasing file-wide row positions; only pages
   * holding them are decoded and only those rows are returned. NULL = all. */
  const int64_t *rows;
  size_t n_rows;
  /* Upper bound on rows per emitted batch (0 = one batch per row group). */
  int64_t batch_rows_max;
} hs_parquet_read_options;

void hs_parquet_read_options_init(hs_parquet_read_options *opts);

/* Open a Parquet file. On success *out is owned by the caller (free with
 * hs_parquet_reader_free). Parses and validates the footer. */
hs_status hs_parquet_reader_open(const char *path, hs_parquet_reader **out, hs_error *err);

/* Open over bytes in memory; `buf` is borrowed and must outlive the reader.
 * `name` is used in error messages. Used by fuzzers and tests. */
hs_status hs_parquet_reader_open_buffer(const uint8_t *buf, size_t len, const char *name,
                                        hs_parquet_reader **out, hs_error *err);

void hs_parquet_reader_free(hs_parquet_reader *reader);

int64_t hs_parquet_reader_num_rows(const hs_parquet_reader *reader);
int64_t hs_parquet_reader_num_row_groups(const hs_parquet_reader *reader);

/* The file's schema as Arrow; *out is owned by the caller (call release). */
hs_status hs_parquet_reader_schema(hs_parquet_reader *reader, struct ArrowSchema *out,
                                   hs_error *err);

/* Stream record batches (struct arrays). `opts` may be NULL; its arrays are
 * copied. The stream holds a reference to the reader's file, so the reader
 * may be freed before the stream is released. *out is owned by the caller. */
hs_status hs_parquet_reader_stream(hs_parquet_reader *reader, const hs_parquet_read_options *opts,
                                   struct ArrowArrayStream *out, hs_error *err);

/* Number of row groups a stream with `opts` would read (after pruning). */
hs_status hs_parquet_reader_count_row_groups(hs_parquet_reader *reader,
                                             const hs_parquet_read_options *opts, int64_t *out,
                                             hs_error *err);

/* Human-readable (json == 0) or JSON (json != 0) description of the file:
 * schema, row groups, column chunks with encodings, codecs, sizes and
 * statistics. *out is NUL-terminated, owned by the caller (hs_free). */
hs_status hs_parquet_inspect(const char *path, int json, char **out, hs_error *err);

/* --------------------------------------------------------- Parquet write */

typedef enum hs_codec {
  HS_CODEC_UNCOMPRESSED = 0,
  HS_CODEC_SNAPPY = 1,
  HS_CODEC_GZIP = 2,
  HS_CODEC_BROTLI = 4,
  HS_CODEC_ZSTD = 6,
  HS_CODEC_LZ4_RAW = 7
} hs_codec; /* values equal Parquet's CompressionCodec */

typedef enum hs_encoding {
  HS_ENCODING_DEFAULT = -1, /* dictionary with fallback to PLAIN */
  HS_ENCODING_PLAIN = 0,
  HS_ENCODING_DELTA_BINARY_PACKED = 5,
  HS_ENCODING_DELTA_LENGTH_BYTE_ARRAY = 6,
  HS_ENCODING_DELTA_BYTE_ARRAY = 7,
  HS_ENCODING_RLE_DICTIONARY = 8,
  HS_ENCODING_BYTE_STREAM_SPLIT = 9
} hs_encoding; /* values equal Parquet's Encoding */

typedef struct hs_parquet_write_options {
  hs_codec compression;         /* default HS_CODEC_ZSTD */
  int compression_level;        /* 0 = codec default */
  int64_t row_group_rows_max;   /* default 1,048,576 */
  int64_t page_bytes_max;       /* default 1 MiB (uncompressed values) */
  int64_t dictionary_bytes_max; /* default 1 MiB; past it, fall back to PLAIN */
  int use_dictionary;           /* default 1 */
  int data_page_version;        /* 1 (default) or 2 */
  /* INT32 / INT64 columns (dates, timestamps, decimals too) whose dictionary
   * is given up: 1 writes DELTA_BINARY_PACKED instead of PLAIN (default 0). */
  int delta_fallback;
  /* Data page v2 only: a page the codec shrinks by less than this many
   * percent is stored uncompressed (is_compressed = false), so that readers
   * skip a useless decompression and can read single rows in place.
   * 0 (default): every page goes through the codec. */
  int compress_min_saving_pct;
  int write_statistics; /* default 1 */
  int write_page_index; /* default 1: ColumnIndex + OffsetIndex */
  int write_page_crc;   /* default 1: each page header carries the CRC-32 of its bytes */
  /* Per-column encoding overrides by top-level column name. */
  const char *const *encoding_columns;
  const hs_encoding *encodings;
  size_t n_encodings;
  /* File key-value metadata. */
  const char *const *kv_keys;
  const char *const *kv_values;
  size_t n_kv;
  const char *created_by; /* default "hyperstreamdb version 0.1.0" */
  /* Bytes per data page of list leaves (list / fixed_size_list columns:
   * vectors); 0 (default) = page_bytes_max. Smaller pages let a row
   * selection reach a row's levels in fewer steps. */
  int64_t list_page_bytes_max;
} hs_parquet_write_options;

void hs_parquet_write_options_init(hs_parquet_write_options *opts);

typedef struct hs_parquet_writer hs_parquet_writer;

/* Create `path` for writing batches of `schema` (a struct schema; borrowed,
 * copied inside). Field ids come from the field metadata key
 * "PARQUET:field_id" when present, else are assigned 1..n depth-first. */
hs_status hs_parquet_writer_open(const char *path, const struct ArrowSchema *schema,
                                 const hs_parquet_write_options *opts, hs_parquet_writer **out,
                                 hs_error *err);

/* Append one record batch (a struct array matching the schema). The batch
 * is borrowed: the caller still owns and releases it. */
hs_status hs_parquet_writer_write(hs_parquet_writer *writer, const struct ArrowArray *batch,
                                  hs_error *err);

/* Flush remaining rows, write the page indexes and the footer, close the
 * file. After a failed write or close the file is removed. */
hs_status hs_parquet_writer_close(hs_parquet_writer *writer, hs_error *err);

/* Frees; a writer freed without a successful close removes its file. */
void hs_parquet_writer_free(hs_parquet_writer *writer);

/* Convenience: write every batch of `stream` (consumed and released). */
hs_status hs_parquet_write_stream(const char *path, struct ArrowArrayStream *stream,
                                  const hs_parquet_write_options *opts, hs_error *err);

/* ---------------------------------------------------------------- Tables */
/* A table is a folder of Parquet data files under Apache Iceberg metadata
 * (metadata/vN.metadata.json, Avro manifests, metadata/version-hint.text).
 * Appends commit with optimistic concurrency: several processes may append
 * to one table at once; each acknowledged append (HS_OK) is durable and is
 * never lost by a concurrent commit or a crash. See src/table/README.md. */

typedef struct hs_table hs_table;

typedef struct hs_table_options {
  int format_version; /* Iceberg format: 2 (default) or 3 */
  /* Extra table properties (copied). */
  const char *const *property_keys;
  const char *const *property_values;
  size_t n_properties;
  /* The default partition spec and sort order of version 1 (n = 0: none), as
   * hs_table_set_partition_spec and hs_table_set_sort_order take them; the
   * spec is spec 0, the order order 1 (0 is Iceberg's unsorted order). */
  const struct hs_table_partition_field *partition_fields;
  size_t n_partition_fields;
  const char *const *sort_columns;
  const int *sort_ascending, *sort_nulls_first; /* may be NULL */
  size_t n_sort_columns;
} hs_table_options;

void hs_table_options_init(hs_table_options *opts);

/* Create a new empty table at local folder `uri` (created with parents; it
 * must not already hold a table) with the Arrow struct schema `schema`
 * (borrowed). Field ids are assigned by the Iceberg mapping. `opts` may be
 * NULL. On success *out is owned by the caller (hs_table_free). */
hs_status hs_table_create(const char *uri, const struct ArrowSchema *schema,
                          const hs_table_options *opts, hs_table **out, hs_error *err);

/* Open the table at `uri` at its latest committed version. Missing or
 * corrupt metadata is an error naming the file. *out is owned. */
hs_status hs_table_open(const char *uri, hs_table **out, hs_error *err);

void hs_table_free(hs_table *table); /* accepts NULL */

/* Reload the latest committed version (other writers may have committed).
 * Cheap when nothing changed: on a local table, a stat of the metadata
 * folder and one of the loaded metadata file (src/table/README.md,
 * "Finding the latest version"); a commit by any process is seen by the
 * next refresh. */
hs_status hs_table_refresh(hs_table *table, hs_error *err);

/* Let refreshes trust the loaded version for `ms` milliseconds after the
 * handle was last found current (0, the default: every refresh checks):
 * within that bound hs_table_refresh does no I/O at all, so another
 * process's commit may be seen up to `ms` late. Commits through this
 * handle are seen at once. Negative is 0. */
void hs_table_set_staleness_ms(hs_table *table, int64_t ms);

/* Append every batch of `stream` (consumed and released on every return)
 * as new data file(s), then commit one new snapshot. The stream's schema
 * must equal the table's (names, types, nullability; a non-nullable input
 * column may fill an optional one): otherwise HS_ERR_SCHEMA and nothing is
 * written. A stream without rows commits nothing. On HS_OK the snapshot is
 * durable and *snapshot_id_out (may be NULL) receives its id; -1 when
 * nothing was committed. Data files are ZSTD-compressed Parquet with page
 * indexes and Iceberg field ids on every column. */
hs_status hs_table_append(hs_table *table, struct ArrowArrayStream *stream,
                          int64_t *snapshot_id_out, hs_error *err);

/* What one append wrote, kept so that its scalar indexes can be built from
 * memory (hs_table_index_build_options.appended) instead of re-reading and
 * decoding the data file. Owns the batches (their buffers stay alive). */
typedef struct hs_table_appended hs_table_appended;

/* hs_table_append that also returns, in *kept, the batches it wrote with
 * the input's schema and the committed data file's path and size. *kept is
 * NULL when nothing was committed, and for appends that write one file per
 * partition or sort their rows (partitioned or sorted tables: batch rows
 * are not file rows there). Free with hs_table_appended_free. */
hs_status hs_table_append_keep(hs_table *table, struct ArrowArrayStream *stream,
                               int64_t *snapshot_id_out, hs_table_appended **kept, hs_error *err);
void hs_table_appended_free(hs_table_appended *kept); /* accepts NULL */

/* Stream the rows of snapshot `snapshot_id` (-1: the current snapshot; a
 * table without snapshots yields no rows), projected to `columns` (top-level
 * names, NULL for all). Files are read in manifest order. *out is owned by
 * the caller; it keeps no reference to `table`. */
hs_status hs_table_scan(hs_table *table, int64_t snapshot_id, const char *const *columns,
                        size_t n_columns, struct ArrowArrayStream *out, hs_error *err);

/* The table's schema as Arrow (owned by the caller: call release). */
hs_status hs_table_schema(hs_table *table, struct ArrowSchema *out, hs_error *err);

typedef struct hs_table_snapshot_info {
  int64_t snapshot_id;
  int64_t parent_snapshot_id; /* -1 when none */
  int64_t sequence_number;
  int64_t timestamp_ms;
  int64_t added_records;    /* from the summary; -1 when absent */
  int64_t total_records;    /* from the summary; -1 when absent */
  int64_t added_data_files; /* from the summary; -1 when absent */
  int64_t total_data_files; /* from the summary; -1 when absent */
  char operation[16];       /* "append", ...; "" when absent */
} hs_table_snapshot_info;

/* Every snapshot of the loaded version, in metadata order (commit order for
 * our tables). *out is an hs_malloc'd array of *n_out entries (hs_free;
 * NULL when none). */
hs_status hs_table_snapshots(const hs_table *table, hs_table_snapshot_info **out, size_t *n_out,
                             hs_error *err);

/* Rows of snapshot `snapshot_id` (-1: current) that are live: every data
 * file's record count minus its rows deleted by position deletes, deletion
 * vectors and equality deletes (the scan plan's live-row sets; no data is
 * read, delete files are). *deleted (may be NULL) gets the rows deleted and
 * *delete_files (may be NULL) the snapshot's live delete files. */
hs_status hs_table_count_rows(hs_table *table, int64_t snapshot_id, int64_t *rows, int64_t *deleted,
                              int64_t *delete_files, hs_error *err);

/* ---------------------------------------------------- row-level changes
 * One commit that deletes the live rows matching filters and appends new
 * rows (src/query/rowdelta.c): deletes, updates, upserts and merges. */
typedef struct hs_row_change {
  const char *what;           /* names the change in errors ("delete", "update", ...) */
  int64_t snapshot_id;        /* the snapshot the change was decided on; -1: current */
  const char *const *deletes; /* filters (SQL WHERE text; NULL or "": every row) */
  size_t n_deletes;
  struct ArrowArrayStream *appends; /* rows to append (consumed, on every return) */
  size_t n_appends;
  /* The table property choosing how deletes are written: "write.delete.mode",
   * "write.update.mode" or "write.merge.mode" (Iceberg's names): unset or
   * "merge-on-read" writes position deletes (v2) or deletion vectors (v3);
   * "copy-on-write" rewrites the touched data files. NULL: merge-on-read. */
  const char *mode_property;
  /* Key matching (upserts, merges): the live rows whose columns
   * `key_columns` (current names) equal a row of the struct batches `keys`
   * (schema `keys_schema`, one child per key column in that order, of the
   * table's types; borrowed) are deleted too, each data file's key columns
   * matched against a hash set of the keys. A NULL in a key matches
   * nothing. `key_matched` (may be NULL): one byte per key row, in batch
   * order, set to whether it matched a live row. */
  const char *const *key_columns;
  size_t n_key_columns;
  const struct ArrowSchema *keys_schema;
  const struct ArrowArray *keys;
  size_t n_keys_batches;
  uint8_t *key_matched;
  /* Merges (LanceDB's builder) on the key path, each optional:
   *  - `keep_matched`: the key-matched rows are not deleted (a merge
   *    without when_matched_update_all);
   *  - `key_where` (SQL; NULL: none): only the key-matched rows satisfying
   *    it are deleted (when_matched_update_all(where=)); `key_matched_where`
   *    (may be NULL) gets a byte per key row: it matched such a row;
   *  - `delete_unmatched`: the live rows whose key matches no key row (a
   *    NULL in the key matches nothing) are deleted, only those satisfying
   *    `unmatched_filter` when it is given (when_not_matched_by_source_delete);
   *  - `append_select` (HS_APPEND_*; 0: every row): appends[0] (the only
   *    stream) holds the source row of each key row, in key order, and only
   *    rows that matched (matched-where when key_where is given) and/or
   *    that matched nothing are appended. */
  int keep_matched; /* nonzero: true */
  const char *key_where;
  uint8_t *key_matched_where;
  int delete_unmatched;
  const char *unmatched_filter;
  uint32_t append_select;
  /* Nonzero (format v2): every data file with two or more position delete
   * files applied gets them merged into one (Iceberg's
   * rewrite_position_delete_files; also done by any change past the table's
   * hyperstream.delete.max-position-files). No row changes. */
  int merge_position_deletes;
} hs_row_change;

enum { HS_APPEND_MATCHED = 1, HS_APPEND_UNMATCHED = 2 };

typedef struct hs_row_change_result {
  int64_t snapshot_id;          /* the new snapshot; -1 when nothing changed */
  int64_t rows_deleted;         /* live rows the filters matched */
  int64_t rows_added;           /* rows appended (copy-on-write: with the rewritten rows) */
  int64_t files_added;          /* data files written */
  int64_t files_removed;        /* data files removed (copy-on-write) */
  int64_t delete_files_added;   /* position delete files / deletion vectors written */
  int64_t delete_files_removed; /* deletion vectors and position delete files replaced */
  int64_t rows_matched_deleted; /* of rows_deleted: key-matched rows (updated by a merge) */
} hs_row_change_result;

/* Apply `c` in one commit. A concurrent commit that removed a data file
 * the change deletes from or rewrites is HS_ERR_CONFLICT (nothing is
 * committed; re-run the change on the new snapshot); other lost races are
 * retried. */
hs_status hs_table_change_rows(hs_table *table, const hs_row_change *c, hs_row_change_result *out,
                               hs_error *err);

/* Column statistics (src/query/stats.c): one Puffin statistics file
 * "metadata/<snapshot-id>-<uuid>.stats" of the current snapshot holding an
 * `apache-datasketches-theta-v1` blob (DataSketches' compact Theta sketch,
 * 4096 nominal entries, seed 9001, values as Iceberg single-value bytes;
 * property `ndv`) per column, listed in the metadata's `statistics` by a
 * metadata-only commit (replacing an earlier entry of that snapshot).
 * `columns` NULL: every top-level primitive column. */
typedef struct hs_table_statistics {
  int64_t snapshot_id; /* the snapshot the statistics describe */
  char *path;          /* the statistics file */
  size_t n;            /* columns */
  char **columns;      /* their names */
  int32_t *field_ids;
  int64_t *ndv; /* the estimate of distinct non-null values (the blob's `ndv`) */
} hs_table_statistics;
hs_status hs_table_compute_statistics(hs_table *table, const char *const *columns, size_t n_columns,
                                      hs_table_statistics *out, hs_error *err);
void hs_table_statistics_free(hs_table_statistics *s);

/* Compaction (src/query/compact.c): Iceberg's rewrite_data_files, bin-pack. */
typedef struct hs_compact_options {
  /* Output file size aimed at; 0: table property write.target-file-size-bytes,
   * else 512 MiB. Files under 3/4 of it are rewritten (with files that have
   * deletes or an older partition spec). */
  int64_t target_file_size_bytes;
  const char *filter;      /* only files this SQL filter may match (pruning); NULL: all */
  int32_t min_input_files; /* a clean partition is rewritten from this many files; 0: 2 */
} hs_compact_options;

typedef struct hs_compact_result {
  int64_t snapshot_id;                /* the replace snapshot; -1: nothing to do */
  int64_t files_rewritten;            /* data files removed */
  int64_t files_added;                /* data files written */
  int64_t delete_files_removed;       /* delete files and deletion vectors no longer applying */
  int64_t rows;                       /* rows written */
  int64_t rows_dropped;               /* deleted rows not written */
  int64_t bytes_removed, bytes_added; /* data file bytes */
  int64_t bins;
  int32_t attempts; /* runs (a conflicting concurrent delete re-runs it) */
} hs_compact_result;

/* Rewrite the current snapshot's small files and files with deletes into
 * the current partition spec and sort order, deletes applied, as one
 * "replace" snapshot; delete files left dangling are removed with it. A
 * concurrent delete against a rewritten file re-runs the compaction on the
 * new snapshot, at most 4 times, then HS_ERR_CONFLICT; concurrent appends
 * are kept. With `kept` (may be NULL): the written batches of each new file
 * of an unpartitioned, unsorted table, for hs_table_index_build_options
 * .appended (free with hs_table_compacted_free). */
hs_status hs_table_compact(hs_table *table, const hs_compact_options *o, hs_compact_result *out,
                           hs_table_appended ***kept, size_t *n_kept, hs_error *err);
void hs_table_compacted_free(hs_table_appended **kept, size_t n); /* accepts NULL */

/* Current snapshot id, or -1 when the table has none. */
int64_t hs_table_current_snapshot_id(const hs_table *table);
/* Path of the loaded metadata file (valid until the next refresh/append). */
const char *hs_table_metadata_location(const hs_table *table);
/* N of the loaded metadata/vN.metadata.json. */
int64_t hs_table_version(const hs_table *table);

/* ------------------------------------------- Tables: filtered scans */
/* A scan plans the snapshot's data files from its manifests, skips files
 * whose partition values and column bounds (manifest metrics) prove that no
 * row can match the filter, skips row groups the same way by Parquet
 * statistics, evaluates the filter vectorized on the rest (reading only the
 * filter's columns first) and then reads the projected columns of the
 * matching rows only. Pruning is conservative: it never drops a row that
 * matches. See src/query/scan.c. */

typedef struct hs_scan_options {
  int64_t snapshot_id; /* -1 (default): the current snapshot */
  /* Projection: top-level column names in output order; NULL (default):
   * every column. Filter columns are read but returned only if listed. */
  const char *const *columns;
  size_t n_columns;
  /* SQL boolean expression (the WHERE clause), e.g. "age > 25 AND name
   * LIKE 'a%'"; NULL or "" (default): every row. A filter that does not
   * parse or bind fails hs_table_scan_query with HS_ERR_INVALID_ARG (or
   * HS_ERR_UNSUPPORTED) and a message giving the 1-based position. */
  const char *filter;
  int64_t limit;          /* at most this many rows; -1 (default): no limit */
  int64_t batch_rows_max; /* rows per emitted batch at most; 0 (default): 65536 */
  /* Coalesce: > 0 gathers consecutive batches (row groups, files) until at
   * least this many rows and emits them as one (then a batch holds fewer
   * than batch_rows_min + batch_rows_max rows, and hs_scan_batch_origin
   * refuses a merged one); for consumers that pay per batch (JNI, Arrow
   * C Data import). 0 (default): one batch per row group slice. */
  int64_t batch_rows_min;
} hs_scan_options;

void hs_scan_options_init(hs_scan_options *opts);

/* What a scan did so far (counters grow while the stream is read). */
typedef struct hs_scan_stats {
  int64_t manifests_read;    /* data manifests read while planning */
  int64_t files_planned;     /* live data files in the snapshot */
  int64_t files_pruned;      /* skipped by partition values or column bounds */
  int64_t files_read;        /* opened (footer read) */
  int64_t row_groups_read;   /* row groups whose filter columns were decoded */
  int64_t row_groups_pruned; /* skipped by Parquet statistics */
  int64_t rows_scanned;      /* rows the filter was evaluated on (or read, without one) */
  int64_t rows_matched;      /* rows the filter selected */
  int64_t rows_returned;     /* rows emitted (after `limit`) */
  int64_t delete_files;      /* live delete files (and deletion vectors) in the snapshot */
  int64_t rows_deleted;      /* rows of the files read that deletes remove (never returned) */
} hs_scan_stats;

/* Open a scan of `table` with `opts` (NULL: defaults). The filter is bound
 * against the table schema here, so filter errors surface now. *out is
 * owned by the caller; it keeps no reference to `table` (data files are
 * opened while it is read). Batches are struct arrays of the projected
 * columns; a batch is never empty. */
hs_status hs_table_scan_query(hs_table *table, const hs_scan_options *opts,
                              struct ArrowArrayStream *out, hs_error *err);

/* Counters of a stream made by hs_table_scan_query (not yet released).
 * HS_ERR_INVALID_ARG for any other stream. */
hs_status hs_scan_stats_get(const struct ArrowArrayStream *stream, hs_scan_stats *out,
                            hs_error *err);

/* ---------------------------------------------- Tables: time travel */
/* Reading a table as it was: at a snapshot id (hs_table_scan), at a time
 * or at a tag or branch (resolved here to a snapshot id), the snapshot
 * log, refs, and metadata-only commits that move main (rollback) or name
 * snapshots (tags, branches). Commits use the same exclusive publish and
 * retries as appends. hs_table_open also opens folders whose metadata is
 * named as Java and pyiceberg catalogs write it ("00003-<uuid>.metadata.json",
 * no version hint: the highest number wins); such tables, and those opened
 * with hs_table_open_metadata, are read-only (HS_ERR_UNSUPPORTED on any
 * commit), as are format v1 tables (read, never written). See
 * src/table/README.md, "Time travel". */

/* Open exactly the metadata file `metadata_json_path` (any name) as a
 * static, read-only table: hs_table_refresh keeps this version; appends and
 * ref changes fail with HS_ERR_UNSUPPORTED. The table folder is the
 * metadata's "location" (a local path, optionally "file:"-prefixed): every
 * file it references must lie under it. *out is owned (hs_table_free). */
hs_status hs_table_open_metadata(const char *metadata_json_path, hs_table **out, hs_error *err);

/* The snapshot that was current at `timestamp_ms` (ms since the Unix epoch,
 * UTC): the last snapshot-log entry made at or before it, as Iceberg's Java
 * SnapshotUtil and pyiceberg's snapshot_as_of_timestamp resolve "as of".
 * After a rollback the log keeps the snapshots that were current then, so
 * a time before the rollback reads what the table showed at that time.
 * Without a log, the newest ancestor of the current snapshot at or before
 * the time. HS_ERR_NOT_FOUND when the time is before the first snapshot
 * ("no snapshot at or before 2024-01-01T00:00:00Z; the first is ... at
 * ...") or the snapshot current then has expired. */
hs_status hs_table_snapshot_at(const hs_table *table, int64_t timestamp_ms, int64_t *snapshot_id,
                               hs_error *err);

/* The snapshot a tag or branch `name` points at (main is the current
 * snapshot). HS_ERR_NOT_FOUND "no tag or branch named 'x'; refs are: main,
 * v1" otherwise. */
hs_status hs_table_ref_snapshot(const hs_table *table, const char *name, int64_t *snapshot_id,
                                hs_error *err);

typedef struct hs_table_ref_info {
  const char *name; /* borrowed from the table: valid until its next reload */
  int64_t snapshot_id;
  int is_tag;                    /* 1: tag, 0: branch */
  int64_t max_ref_age_ms;        /* -1 when unset */
  int64_t max_snapshot_age_ms;   /* branches; -1 when unset */
  int32_t min_snapshots_to_keep; /* branches; -1 when unset */
} hs_table_ref_info;

/* Every ref (tags and branches, main included) of the loaded version in
 * metadata order. *out is hs_malloc'd (hs_free; NULL when none). */
hs_status hs_table_refs(const hs_table *table, hs_table_ref_info **out, size_t *n_out,
                        hs_error *err);

typedef struct hs_table_history_entry {
  int64_t made_current_at_ms; /* the snapshot-log entry's timestamp */
  int64_t snapshot_id;
  int64_t parent_snapshot_id; /* -1 when none (or the snapshot expired) */
  int is_current_ancestor;    /* on the current snapshot's parent chain */
} hs_table_history_entry;

/* The snapshot log, oldest first, with each entry's parent and whether it
 * is an ancestor of the current snapshot (pyiceberg's inspect.history()).
 * *out is hs_malloc'd (hs_free; NULL when the log is empty). */
hs_status hs_table_history(const hs_table *table, hs_table_history_entry **out, size_t *n_out,
                           hs_error *err);

/* Make ancestor `snapshot_id` of the current snapshot current again (main
 * and current-snapshot-id move to it, a snapshot-log entry records when):
 * a metadata-only commit, no data is written or removed. Snapshots after
 * it stay in the metadata (readable by id, tag or time). Checked against
 * the latest version at commit time: a snapshot that is not an ancestor of
 * the current one is HS_ERR_INVALID_ARG (as in Iceberg); an unknown id is
 * HS_ERR_NOT_FOUND. Rolling back to the current snapshot commits nothing. */
hs_status hs_table_rollback_to_snapshot(hs_table *table, int64_t snapshot_id, hs_error *err);

/* Name snapshot `snapshot_id` (-1: the current one) with a new tag, or a
 * new branch. `max_ref_age_ms` > 0 records when the tag may be expired
 * (-1: kept forever). A name already used by a tag or branch is
 * HS_ERR_INVALID_ARG; an unknown snapshot HS_ERR_NOT_FOUND. */
hs_status hs_table_create_tag(hs_table *table, const char *name, int64_t snapshot_id,
                              int64_t max_ref_age_ms, hs_error *err);
hs_status hs_table_create_branch(hs_table *table, const char *name, int64_t snapshot_id,
                                 hs_error *err);

/* Files under the table's data/, index/ and metadata/ folders that nothing
 * in the latest metadata reaches (left by failed or crashed commits, index
 * builds never registered, dropped indexes, replaced registries) and that
 * were last modified before `older_than_ms` (ms since the epoch; pass now
 * minus a margin longer than any writer runs: Iceberg uses 3 days; never
 * later than now minus HS_ORPHAN_MIN_AGE_MS unless `flags` has
 * HS_ORPHAN_FORCE). Listed into *files (one allocation holding the paths
 * too; the caller hs_free()s it; NULL when *n_files is 0) and removed
 * unless `flags` has HS_ORPHAN_DRY_RUN (a dry run lists what a run with the
 * same flags would remove). Files that vanish under the walk (another
 * process expiring snapshots) are no error: the walk is redone on the
 * newer metadata. Everything a
 * snapshot, the metadata log, Iceberg statistics or the index registry
 * reaches is kept, as are version-hint.text and newer metadata versions;
 * links and files outside those folders are never touched. A reference that
 * cannot be read or resolved stops the call before anything is removed.
 * Refused (HS_ERR_UNSUPPORTED) for static and catalog-named metadata. See
 * src/table/orphans.c. */
typedef struct hs_table_orphan_file {
  const char *path; /* absolute */
  int64_t size;     /* bytes */
  int64_t mtime_ms; /* last modification, ms since the epoch */
} hs_table_orphan_file;

/* `flags` of hs_table_remove_orphan_files (0: remove, honouring the floor). */
#define HS_ORPHAN_DRY_RUN 1 /* list only, remove nothing */
#define HS_ORPHAN_FORCE 2   /* take the cut-off as given, even younger than the floor */
/* The floor: without HS_ORPHAN_FORCE a cut-off later than now minus this
 * is moved back to it (files younger than 1 hour are never removed), so an
 * append, index build or metadata commit still running keeps its files.
 * With HS_ORPHAN_FORCE a commit in flight may still lose a file; it then
 * fails before publishing (it re-checks its files under the publish lock,
 * src/table/orphans.c), never publishing a version naming a missing file. */
#define HS_ORPHAN_MIN_AGE_MS (3600LL * 1000)

hs_status hs_table_remove_orphan_files(hs_table *table, int64_t older_than_ms, int flags,
                                       hs_table_orphan_file **files, size_t *n_files,
                                       hs_error *err);

/* Expire snapshots (Iceberg's ExpireSnapshots): every snapshot committed
 * before `older_than_ms` leaves the metadata (and the snapshot log) in one
 * metadata-only commit, except the current one, those a tag or branch
 * names, and the `retain_last` (< 1: 1) most recent of the current
 * snapshot's ancestry. Then the files only they reached — manifest lists,
 * manifests and data files no kept snapshot shares, and index files that
 * covered only those data files — are deleted. *expired: the removed ids
 * (hs_malloc'd; NULL when none); *files: the deleted files as in
 * hs_table_remove_orphan_files. dry_run: nothing is committed or deleted,
 * the lists say what would be. Time travel to an expired snapshot is
 * HS_ERR_NOT_FOUND afterwards. See src/table/expire.c. */
hs_status hs_table_expire_snapshots(hs_table *table, int64_t older_than_ms, int32_t retain_last,
                                    int dry_run, int64_t **expired, size_t *n_expired,
                                    hs_table_orphan_file **files, size_t *n_files, hs_error *err);

/* ------------------------------------ Tables: row-level commits (txn) */
/* One commit that adds data files and delete files and removes files, with
 * Iceberg's validation against concurrent writers (src/table/txn.c): a file
 * it removes must still be live, a data file its position deletes reference
 * must not have been removed since `base_snapshot_id`, a replace (and a
 * copy-on-write overwrite) fails when a delete file that may apply to a
 * file it removes was committed meanwhile, and a deletion vector fails when
 * another one was committed for the same data file. Such a conflict is
 * HS_ERR_CONFLICT and nothing is committed; any other lost race is retried.
 * The files added must be written (they are synced here) under the table
 * folder; nothing is removed from disk (expiry does that). */
typedef enum hs_table_operation {
  HS_TABLE_OP_AUTO = 0, /* append / delete / overwrite by what changes */
  HS_TABLE_OP_APPEND = 1,
  HS_TABLE_OP_OVERWRITE = 2,
  HS_TABLE_OP_DELETE = 3,
  HS_TABLE_OP_REPLACE = 4 /* compaction: the same rows in other files */
} hs_table_operation;

typedef struct hs_table_delete_file {
  const char *path;        /* absolute, under the table folder; recorded as is */
  int content;             /* 1: position deletes, 2: equality deletes */
  const char *file_format; /* NULL: "PARQUET"; "PUFFIN": a deletion vector (v3) */
  int64_t record_count;    /* positions deleted / equality-delete rows */
  int64_t file_size_in_bytes;
  const char *referenced_data_file; /* the one data file its positions name (DVs: required) */
  int64_t content_offset, content_size_in_bytes; /* a DV's blob in the Puffin file */
  const int32_t *equality_ids;                   /* equality deletes: the key field ids */
  size_t n_equality_ids;
  /* A live data file (as recorded) whose partition spec and tuple the
   * delete file takes; NULL: referenced_data_file's, and without one the
   * current spec, which must then be unpartitioned. */
  const char *partition_of;
} hs_table_delete_file;

typedef struct hs_table_row_delta {
  hs_table_operation operation;
  /* Parquet files written under data/ with the current schema's field ids
   * (metrics are read from their footers). In a partitioned table each
   * file's rows must share one partition of the current spec: its tuple is
   * computed from their source columns (a file of rows of two partitions,
   * or of no rows, is HS_ERR_INVALID_ARG and nothing is committed). */
  const char *const *add_data_files;
  size_t n_add_data_files;
  const hs_table_delete_file *add_delete_files;
  size_t n_add_delete_files;
  const char *const *remove_files; /* data or delete files, as recorded (every entry) */
  size_t n_remove_files;
  /* Deletion vectors removed one by one: that of data file remove_dv_of[i]
   * in Puffin file remove_dvs[i] (the file's other DVs stay). */
  const char *const *remove_dvs;
  const char *const *remove_dv_of;
  size_t n_remove_dvs;
  int validate_no_new_deletes; /* -1: on for REPLACE and OVERWRITE; 0 off; 1 on */
  /* The snapshot the change was decided on (the one read): commits since
   * it are validated. 0: the latest snapshot when the call begins. */
  int has_base_snapshot_id;
  int64_t base_snapshot_id; /* -1: the table had none */
} hs_table_row_delta;

hs_status hs_table_commit_row_delta(hs_table *table, const hs_table_row_delta *delta,
                                    int64_t *snapshot_id_out, hs_error *err);

/* --------------------------------- Tables: partitioning and sorting */
/* A table's default partition spec splits later appends: each write
 * becomes one data file per partition (the Iceberg transform of each row's
 * source value), recorded with its partition tuple in a manifest of that
 * spec, with partition summaries in the manifest list. Its default sort
 * order sorts the rows within each written file (stable) and is recorded
 * as the file's sort_order_id. Changing either is a metadata-only commit
 * (same exclusive publish and retries as appends); files already written
 * keep the spec and order they were written with. Such appends buffer the
 * whole write in memory (sorting needs it). See src/table/partition.c. */

typedef struct hs_table_partition_field {
  const char *source;    /* a top-level column name */
  const char *transform; /* "identity", "bucket[N]", "truncate[W]", "year", "month", "day",
                            "hour", "void" */
  const char *name;      /* partition field name; NULL: Iceberg's ("id_bucket_16", "ts_day") */
} hs_table_partition_field;

/* Make the spec of `n` fields (0: unpartitioned) the default for later
 * appends. A spec equal to an existing one is re-selected; otherwise a new
 * spec id is added. A field whose source and transform appeared in an
 * earlier spec keeps that field's id (and name when none is given); new
 * fields get last-partition-id + 1 (1000+). A transform that does not fit
 * its column's type, an unknown column or duplicate names are
 * HS_ERR_SCHEMA / HS_ERR_INVALID_ARG and commit nothing. */
hs_status hs_table_set_partition_spec(hs_table *table, const hs_table_partition_field *fields,
                                      size_t n, hs_error *err);

/* Make the sort order over top-level `columns` the default for later
 * appends (n = 0: unsorted, order id 0). `ascending` and `nulls_first`
 * (non-zero: true) may be NULL: ascending, and Iceberg's default nulls first when
 * ascending, last when descending. Floats sort -NaN < -inf < ... < -0 <
 * 0 < ... < inf < NaN; strings by UTF-8 bytes. An order equal to an
 * existing one is re-selected, otherwise a new order id is added. */
hs_status hs_table_set_sort_order(hs_table *table, const char *const *columns, const int *ascending,
                                  const int *nulls_first, size_t n, hs_error *err);

/* --------------------------------------- Tables: schema evolution */
/* Schema changes, applied in order and committed together as ONE
 * metadata-only commit: a new schema (next schema-id, new field ids above
 * last-column-id) made current. Data files are never rewritten. Top-level
 * columns only. See src/table/schema_evolve.c. */
typedef enum hs_table_schema_op {
  HS_SCHEMA_ADD_COLUMN = 1, /* column (new name), type, default_json, doc, required */
  HS_SCHEMA_RENAME_COLUMN,  /* column, new_name */
  HS_SCHEMA_DROP_COLUMN,    /* column (refused for a source of the current partition spec or
                               sort order; its registered indexes are dropped) */
  HS_SCHEMA_UPDATE_COLUMN   /* column, type (widening only: int -> long, float -> double,
                               decimal precision), doc (NULL: unchanged) */
} hs_table_schema_op;

typedef struct hs_table_schema_change {
  hs_table_schema_op op;
  const char *column;
  const char *new_name;
  /* ADD / UPDATE: an Arrow struct schema of exactly one child, the column's type (its name
   * and nullability ignored; a fixed_size_list<float32> becomes a vector column). */
  const struct ArrowSchema *type;
  /* ADD: the v3 initial-default and write-default as a JSON single value ("3", "\"x\"",
   * "true", "\"2024-01-02\""); v2 tables refuse one. NULL: none. */
  const char *default_json;
  const char *doc;
  int required; /* ADD: required column (needs a default) */
} hs_table_schema_change;

hs_status hs_table_update_schema(hs_table *table, const hs_table_schema_change *changes, size_t n,
                                 hs_error *err);

/* ------------------------------------- Tables: page-index pruning */
/* hs_table_scan_query also prunes pages: in each row group kept by its
 * statistics, the ColumnIndex/OffsetIndex of the filter's flat columns
 * rule out row ranges, and neither filter nor projected columns decode the
 * pages holding only those rows. See src/query/scan_pages.c. */

typedef struct hs_scan_page_stats {
  int64_t row_groups_indexed; /* kept row groups with a usable page index on a filter column */
  int64_t pages;              /* pages of those indexed filter columns */
  int64_t pages_pruned;       /* of those, pages whose rows were all ruled out (not decoded) */
  int64_t rows_pruned;        /* rows of kept row groups ruled out by page indexes */
} hs_scan_page_stats;

/* Page-pruning counters of a stream made by hs_table_scan_query (not yet
 * released); they grow as files are opened. HS_ERR_INVALID_ARG for any
 * other stream. */
hs_status hs_scan_page_stats_get(const struct ArrowArrayStream *stream, hs_scan_page_stats *out,
                                 hs_error *err);

/* ------------------------------------ Tables: scalar index registry */
/* Build inverted indexes (src/index) for `columns[0..n)` of every data file
 * of the current snapshot that lacks one for them: each file's columns are
 * read, indexed and written as <table>/index/<uuid>.puffin (fsynced), then
 * all are registered in one metadata-only commit (the registry is keyed by
 * data file, so time travel and rollback use exactly the indexes of the
 * snapshot's files). hs_table_scan_query then narrows each indexed file's
 * rows with the index before evaluating the filter on the candidates. */
hs_status hs_table_build_indexes(hs_table *table, const char *const *columns, size_t n,
                                 hs_error *err);

typedef struct hs_scan_index_stats {
  int64_t files_indexed;   /* files whose candidate rows came from an index */
  int64_t rows_candidate;  /* rows of those files left as candidates */
  int64_t rows_eliminated; /* rows of those files the index ruled out */
  /* Files whose registered index was not used because it did not match
   * its data file (bound to another file, a failed checksum, missing or
   * unreadable: src/index/binding.h); they were read exactly. The first
   * reason, naming the index and data file, in index_rejected ("" if none). */
  int64_t files_index_rejected;
  char index_rejected[320];
} hs_scan_index_stats;

/* Registered indexes that readers of this process left unused because
 * they did not match their data file (see hs_scan_index_stats), counted
 * since the process started; the latest reason into last[0..cap) (may be
 * NULL). Front ends compare counts before and after a call to warn. */
uint64_t hs_index_rejections(char *last, size_t cap);

/* One registered index that does not check out (hs_table_validate_indexes). */
typedef struct hs_table_index_problem {
  char *data_file;  /* the data file it is registered for */
  char *index_file; /* the index file, as resolved ("" when unknown) */
  char *column;     /* the indexed column; "" for the whole file */
  char *message;    /* what is wrong, and how to fix it where known */
} hs_table_index_problem;

/* Check every registered index of the data files of snapshot `snapshot_id`
 * (-1: the current one) as strictly as possible: the index file opens,
 * each blob's bytes match its recorded CRC-32C (read again), the blob is
 * bound to its data file (path, size, footer CRC: src/index/binding.h),
 * and its contents pass the format's full check. *out (free with
 * hs_table_index_problems_free) lists what failed: none is a healthy
 * table; *checked (may be NULL) counts the (file, column) indexes checked.
 * Readers never use an index that fails the binding or checksum checks. */
hs_status hs_table_validate_indexes(hs_table *table, int64_t snapshot_id,
                                    hs_table_index_problem **out, size_t *n_out, int64_t *checked,
                                    hs_error *err);
void hs_table_index_problems_free(hs_table_index_problem *v, size_t n); /* accepts NULL */

/* Index counters of a stream made by hs_table_scan_query (not released);
 * HS_ERR_INVALID_ARG for any other stream. */
hs_status hs_scan_index_stats_get(const struct ArrowArrayStream *stream, hs_scan_index_stats *out,
                                  hs_error *err);

/* Which columns are indexed, and how: the table property
 * "hyperstream.indexes" (a JSON list of {"column", "kind", "params"}),
 * changed by metadata-only commits (exclusive publish, retried on lost
 * races), so every handle, process and the CLI sees the same
 * configuration. Kinds: "inverted" and "scalar" (layout chosen from the
 * data), "bitmap" (one bitmap per distinct value), "btree" and "sorted"
 * (sorted values in blocks; params {"block_rows": N}; {"lossy": true} keeps
 * only each block's min/max and row bitmap: ~2 B/row, answers re-checked
 * on the data); vector kinds
 * "hnsw", "ivf_hnsw", "ivf_hnsw_sq8", "ivf_pq" are recorded (params kept
 * as given) and built by the vector index code, not by
 * hs_table_build_configured_indexes. See src/table/index_config.c. */

/* Record an index of `kind` on top-level `column` (params_json: a JSON
 * object or NULL). Nothing is built here. Re-adding the same kind and
 * params commits nothing; a different kind or params replaces the old
 * configuration and unregisters the column's old index files in the same
 * commit. Unknown column or kind, a scalar kind on a nested column, or
 * unknown params (vector kinds: metric, m, ef_construction, partitions,
 * pq_m, threads and the aliases M, efConstruction, ef, nlist,
 * num_partitions, num_sub_vectors): HS_ERR_INVALID_ARG (nothing committed). */
hs_status hs_table_add_index(hs_table *table, const char *column, const char *kind,
                             const char *params_json, hs_error *err);

/* hs_table_add_index for n columns in one metadata commit (columns[i] with
 * kinds[i] and params_json[i]; params_json may be NULL): all are checked
 * first, and any error commits nothing. A column named twice:
 * HS_ERR_INVALID_ARG. */
hs_status hs_table_add_indexes(hs_table *table, const char *const *columns,
                               const char *const *kinds, const char *const *params_json, size_t n,
                               hs_error *err);

/* Remove `column`'s configuration and the column from every registry
 * entry in one metadata-only commit: scans stop using its index at once.
 * The index files stay on disk as orphans (like replaced metadata
 * versions; other columns may share a file). HS_ERR_NOT_FOUND when the
 * column is neither configured nor registered. */
hs_status hs_table_drop_index(hs_table *table, const char *column, hs_error *err);

typedef struct hs_table_index_info {
  char *column;          /* hs_malloc'd */
  char *kind;            /* configured kind; "unconfigured" for registry-only columns */
  char *params;          /* JSON object text */
  int is_vector;         /* a vector kind (built elsewhere) */
  int64_t files_indexed; /* current snapshot's data files with this column registered */
  int64_t files_total;   /* data files of the current snapshot */
} hs_table_index_info;

/* Configured indexes in configuration order, then columns present only in
 * the registry (built by hs_table_build_indexes without configuration).
 * Free with hs_table_index_info_free. */
hs_status hs_table_list_indexes(hs_table *table, hs_table_index_info **out, size_t *n_out,
                                hs_error *err);
void hs_table_index_info_free(hs_table_index_info *v, size_t n); /* accepts NULL */

/* Progress of a build: called with (0, total) first, then after each data
 * file, never concurrently. A non-zero return cancels the build (what is
 * finished is still registered). */
typedef int (*hs_table_index_progress_fn)(void *ctx, int64_t files_done, int64_t files_total);

typedef struct hs_table_index_build_options {
  const char *const *columns; /* configured columns to build; NULL: every scalar one */
  size_t n_columns;
  uint32_t threads;                    /* 0: all cores (files are built in parallel) */
  hs_table_index_progress_fn progress; /* may be NULL */
  void *progress_ctx;
  int skip_vector; /* non-zero: scalar kinds only (Python builds vector kinds itself) */
  /* Non-NULL: build only the data files of these appends (those still
   * missing an index), from their kept batches where a column's Arrow type
   * is the one the file reads back as (else from the file); the current
   * snapshot is not planned. The index files are byte-identical to a build
   * from the data file. */
  const hs_table_appended *const *appended;
  size_t n_appended;
} hs_table_index_build_options;

/* Build the configured scalar indexes missing for the current snapshot's
 * files (layout per kind) and register them in one commit; a column
 * dropped or re-configured meanwhile is not registered. Then each
 * configured vector index through hs_table_build_vector_indexes (its params
 * mapped to hs_vector_index_options; progress covers the scalar part) unless
 * skip_vector. *files_built (may be NULL) counts the index files written. A
 * file that fails is reported after the others are registered. Naming an
 * unconfigured column: HS_ERR_INVALID_ARG. opts may be NULL. */
hs_status hs_table_build_configured_indexes(hs_table *table,
                                            const hs_table_index_build_options *opts,
                                            int64_t *files_built, hs_error *err);

/* What a filtered scan does, measured by running it (EXPLAIN ANALYZE):
 * the scan, page and index counters after the whole stream was read.
 * opts->columns NULL projects only the table's first flat (non-nested) column.
 * See src/query/explain.c. */
typedef struct hs_table_explain_info {
  hs_scan_stats scan;
  hs_scan_page_stats pages;
  hs_scan_index_stats index;
} hs_table_explain_info;

hs_status hs_table_explain(hs_table *table, const hs_scan_options *opts, hs_table_explain_info *out,
                           hs_error *err);

/* Per data file opened by a scan (read order): whether a scalar index
 * answered it and this file's share of the scan's counters. */
typedef struct hs_scan_file_info {
  const char *path;          /* the data file */
  const char *index_columns; /* filter columns with an index on it ("a,b"); "" if none */
  int indexed;               /* 1: its candidate rows came from an index */
  int64_t rows;              /* rows in the file */
  int64_t row_groups_read, row_groups_pruned;
  int64_t pages, pages_pruned;             /* as hs_scan_page_stats */
  int64_t rows_candidate, rows_eliminated; /* by the index (0 unless indexed) */
  int64_t rows_scanned, rows_matched;
  int64_t rows_deleted;     /* its rows that delete files remove (never read) */
  char index_rejected[320]; /* why a registered index was not used; "" if none was refused */
} hs_scan_file_info;

/* *n (may be NULL): files opened so far by a stream of hs_table_scan_query;
 * *out (may be NULL): record i < *n, its strings borrowed from the stream. */
hs_status hs_scan_file_info_get(const struct ArrowArrayStream *stream, size_t i,
                                hs_scan_file_info *out, size_t *n, hs_error *err);

/* hs_table_explain, plus one record per data file read into *files (one
 * allocation holding the strings too; the caller hs_free()s it; NULL when
 * *n_files is 0). */
hs_status hs_table_explain_files(hs_table *table, const hs_scan_options *opts,
                                 hs_table_explain_info *out, hs_scan_file_info **files,
                                 size_t *n_files, hs_error *err);

/* ---------------------------------------- Tables: vector search */
/* Vector indexes (src/table/vector_index.c): for each data file of the
 * current snapshot without one for `column`, its vectors are read, a vidx
 * (IVF partitions, an HNSW graph per partition, optional SQ8/PQ codes with
 * exact re-ranking; src/index/vector) is built and written as
 * <table>/index/<uuid>.puffin (one blob of type "hyperstream-vidx-v1",
 * fsynced), then all are registered in one metadata-only commit. Searches
 * use a file's index when its metric and dimension match the query's
 * (ef_search/nprobe apply; the filter becomes the index's allowed rows) and
 * score other files exactly; results merge in the same global order. */
typedef struct hs_vector_index_options {
  const char *metric;       /* NULL (default): "l2"; as hs_vector_search_options.metric */
  uint32_t m;               /* graph degree; 0: default */
  uint32_t ef_construction; /* 0: default */
  uint32_t partitions;      /* IVF lists; 0: chosen from the row count; 1: one graph */
  const char *quantizer;    /* NULL or "none" (default), "sq8", "pq" */
  uint32_t pq_m;            /* PQ sub-spaces (must divide the dimension); 0: default */
  uint32_t threads;         /* 0: every core */
} hs_vector_index_options;

void hs_vector_index_options_init(hs_vector_index_options *opts);

/* `files_built` (may be NULL) receives the number of files indexed. A
 * column that is not a float vector is HS_ERR_SCHEMA; an unknown one
 * HS_ERR_INVALID_ARG. Nothing is registered unless every build succeeds. */
hs_status hs_table_build_vector_indexes(hs_table *table, const char *column,
                                        const hs_vector_index_options *opts, int64_t *files_built,
                                        hs_error *err);

/* Top-k nearest rows of a vector column (fixed_size_list or list of
 * float32; float64 lists are scored as float32) to one or many query
 * vectors, alone or inside a filter (the scan's filter language; files, row
 * groups and pages are pruned as in hs_table_scan_query). Exactly
 * min(k, matching rows) rows per query, in global order by (distance, data
 * file order in the snapshot's plan, row position), with the true metric
 * value in a float32 "distance" column (pgvector's: l2 <->, ip <#> = -a.b,
 * cosine <=>, l1 <+>). Null vectors, vectors with a null component and
 * vectors whose distance is not finite (a NaN or infinite component; an
 * all-zero vector under cosine) never match. Only the vector and filter
 * columns are read to score; the projected columns are then read for the
 * winning rows only. Memory: k hits per query, plus one batch per core.
 * See src/query/README.md, "Vector search". */

typedef struct hs_vector_search_options {
  int64_t snapshot_id; /* -1 (default): the current snapshot */
  const char *column;  /* the vector column (required) */
  const char *metric;  /* NULL (default): "l2"; "l2sq", "ip", "cosine", "l1" or an operator */
  int64_t k;           /* rows per query, >= 1 (default 10) */
  const char *filter;  /* as hs_scan_options.filter; NULL or "": every row */
  /* Projection: top-level names in output order; NULL (default): every
   * column. A non-NULL list may be empty (distance only). */
  const char *const *columns;
  size_t n_columns;
  uint32_t ef_search; /* files with a vector index: 0 (default) = the index's default */
  uint32_t nprobe;    /* likewise */
  int exact;          /* non-zero: ignore vector indexes (brute force everywhere) */
} hs_vector_search_options;

void hs_vector_search_options_init(hs_vector_search_options *opts);

typedef struct hs_vector_search_stats {
  int64_t files_planned;  /* live data files of the snapshot */
  int64_t files_searched; /* files with at least one candidate row */
  int64_t files_indexed;  /* of those, searched through their vector index */
  int64_t rows_scored;    /* exact distances computed (all queries) */
  int64_t rows_matched;   /* rows that passed the filter (non-null vectors included) */
  int64_t rows_returned;  /* rows in the result (all queries) */
  /* Files whose registered vector index was not used because it does not
   * match its data file (bound to another file, corrupt, missing); they
   * were scored exactly. The first reason in index_rejected ("" if none). */
  int64_t files_index_rejected;
  char index_rejected[320];
} hs_vector_search_stats;

/* One query of `dim` floats. The result streams struct batches of the
 * projected columns plus "distance" (float32, last). A query dimension
 * other than the column's is HS_ERR_INVALID_ARG naming the column and both
 * dimensions (for list<float32> columns: found on a row); a column that is
 * not a float32 vector is HS_ERR_SCHEMA; a query holding NaN or inf is
 * HS_ERR_INVALID_ARG. `stats` may be NULL. *out is owned by the caller. */
hs_status hs_table_vector_search(hs_table *table, const hs_vector_search_options *opts,
                                 const float *query, size_t dim, struct ArrowArrayStream *out,
                                 hs_vector_search_stats *stats, hs_error *err);

/* hs_table_refresh for a search with `opts` that follows: on an object
 * store, the first time a version is searched, the reads that search's
 * index opens will make of the loaded version (its vector indexes'
 * sections) ride in the freshness check's round trip; otherwise exactly
 * hs_table_refresh. A newer version found costs those bytes, never an
 * answer: the search then plans and reads that version. */
hs_status hs_table_vector_search_refresh(hs_table *table, const hs_vector_search_options *opts,
                                         hs_error *err);
/* The same for the `n_queries` queries (`dim` floats each) of that search:
 * an unfiltered one also has the IVF lists its queries probe of partial
 * (lean PQ) indexes ride in that round trip, when the index stream held
 * the indexes' open reads (src/query/README.md "Round trips on an object
 * store"). queries NULL: hs_table_vector_search_refresh. */
hs_status hs_table_vector_search_refresh_queries(hs_table *table,
                                                 const hs_vector_search_options *opts,
                                                 const float *queries, size_t n_queries, size_t dim,
                                                 hs_error *err);

/* `n_queries` queries (row-major, `dim` floats each) in one pass over the
 * data, scored in parallel. The result has an int32 "query_index" column
 * first; rows are grouped by query (0, 1, ...), each group in the order
 * above. */
hs_status hs_table_vector_search_batch(hs_table *table, const hs_vector_search_options *opts,
                                       const float *queries, size_t n_queries, size_t dim,
                                       struct ArrowArrayStream *out, hs_vector_search_stats *stats,
                                       hs_error *err);

/* ------------------------------------------ Tables: splits (engines) */
/* Distributed engines (the JVM connectors under java/) plan a scan on one
 * machine and read its data files on others. hs_table_plan_splits lists
 * the data files a filtered scan of a snapshot would open, in plan order
 * (manifest order, after partition / column-bound pruning; files whose
 * every row is deleted are left out); hs_table_scan_split and
 * hs_table_vector_search_split run the scan, or the top-k, over some of
 * them, with the snapshot's deletes and the files' scalar and vector
 * indexes applied exactly as hs_table_scan_query and
 * hs_table_vector_search apply them. Pin opts->snapshot_id to the planned
 * snapshot on every machine. The union of the splits' scans is the scan;
 * the splits' top-k (one file each) ordered by (distance, plan_index, order
 * within the split) and cut to k is hs_table_vector_search's result. See
 * src/query/split.c. */
typedef struct hs_scan_split {
  char *path;                 /* the data file, as planned (resolved local path) */
  int64_t plan_index;         /* its place in the snapshot's plan */
  int64_t file_size_in_bytes; /* as its manifest entry records */
  int64_t record_count;       /* rows in the file */
  int64_t rows_deleted;       /* of those, rows the snapshot's delete files remove */
  /* With a filter: how many rows may match (the scalar indexes'
   * candidates, else the live rows of the row groups the statistics keep);
   * -1: not planned with a filter (every live row). */
  int64_t rows_candidate;
  /* The candidate row positions (CRoaring portable serialization; NULL: no
   * index narrowed the file), and whether they are exactly the filter's
   * matches (else a superset, re-checked by the scan). */
  uint8_t *candidates;
  size_t candidates_size;
  int candidates_exact;
} hs_scan_split;

/* The splits of a scan with `opts` (its snapshot, filter; projection and
 * limit are ignored). *out is hs_malloc'd (free with hs_scan_splits_free;
 * NULL when *n_out is 0); *snapshot_id (may be NULL) receives the planned
 * snapshot (-1: the table has none). A filter that does not parse or bind
 * is an error, as for hs_table_scan_query. With a filter, each file the
 * manifests keep is opened (footer, row-group statistics, scalar indexes,
 * deletes; no data page is read): a file left without a candidate row is
 * no split, and the others carry their candidates. */
hs_status hs_table_plan_splits(hs_table *table, const hs_scan_options *opts, hs_scan_split **out,
                               size_t *n_out, int64_t *snapshot_id, hs_error *err);
void hs_scan_splits_free(hs_scan_split *splits, size_t n); /* accepts NULL */

/* hs_table_scan_query restricted to the data files `paths[0..n_paths)`
 * (hs_scan_split.path of the same snapshot and filter). A path that is not
 * a data file of the snapshot is HS_ERR_NOT_FOUND naming it and the
 * snapshot. The stream's counters (hs_scan_stats_get, ...) cover these
 * files only. */
hs_status hs_table_scan_split(hs_table *table, const hs_scan_options *opts,
                              const char *const *paths, size_t n_paths,
                              struct ArrowArrayStream *out, hs_error *err);

/* hs_table_scan_split over splits[0..n) as hs_table_plan_splits made them
 * (perhaps on another machine: only path, record_count and the candidates
 * are read): a split with candidates is read at those rows only, its
 * scalar indexes not consulted again. Candidates are checked as untrusted
 * bytes against the file's row count (a mismatch is HS_ERR_INVALID_ARG or
 * HS_ERR_CORRUPT naming the file); the scan must have the filter they were
 * planned with. */
hs_status hs_table_scan_split_rows(hs_table *table, const hs_scan_options *opts,
                                   const hs_scan_split *splits, size_t n,
                                   struct ArrowArrayStream *out, hs_error *err);

/* hs_table_vector_search restricted to the data files `paths[0..n_paths)`
 * (as for hs_table_scan_split): the top min(k, matches) of those files, in
 * order by (distance, plan order, row position). */
hs_status hs_table_vector_search_split(hs_table *table, const hs_vector_search_options *opts,
                                       const char *const *paths, size_t n_paths, const float *query,
                                       size_t dim, struct ArrowArrayStream *out,
                                       hs_vector_search_stats *stats, hs_error *err);
/* ---------------------------------------- Catalogs (Iceberg REST) */

/* An Iceberg REST catalog (src/catalog/). `uri` is "rest://host:port[/path]"
 * (plain http) or "rests://host:port[/path]" (https). Options, each
 * {key, value}: "warehouse" (sent to GET /v1/config), "token" (a bearer
 * token), "credential" ("client_id:client_secret": a token by OAuth2 client
 * credentials from POST /v1/oauth/tokens, or from "oauth2-server-uri"),
 * "scope" (default "catalog"), "prefix" (used until the config says
 * otherwise), "timeout_ms", "max_staleness_ms" (a table refresh within that
 * many ms of the handle's last load or commit keeps what it holds; default
 * 0: every refresh asks the catalog; a commit always starts from the
 * catalog's latest), "storage.<key>" (an object-store option, the keys of
 * hs_store_configure such as "storage.s3.endpoint": registered for each
 * table's location as the catalog gives it; checked at connect by
 * registering them for the warehouse when it is a location, else for
 * every s3:// location). Connecting fetches a token when a credential is
 * given and the catalog's config (its `defaults` then `overrides`: "prefix",
 * "uri"), so wrong credentials or a server that is down fail here, naming
 * the call and the server's message. Connecting again under the same URI
 * replaces the options (tables already open keep theirs).
 *
 * Tables of the catalog are "<uri>#<namespace>.<table>" ("rest://h:8181#db.t",
 * namespace levels joined by '.'), opened and created by hs_table_open and
 * hs_table_create like any table: every commit of such a table goes to the
 * catalog (POST .../tables/{t} with requirements and updates; a 409 is a
 * lost race, retried on the reloaded metadata), and every refresh loads it
 * from the catalog. Data and metadata files are written under the table's
 * location as the catalog gives it.
 *
 * Errors from the catalog's ErrorModel say which call, the HTTP status and
 * the server's type and message: 404 is HS_ERR_NOT_FOUND, 409
 * HS_ERR_CONFLICT, 400/401/403 HS_ERR_INVALID_ARG, anything else HS_ERR_IO. */
typedef struct hs_catalog_option {
  const char *key;
  const char *value;
} hs_catalog_option;

hs_status hs_catalog_connect(const char *uri, const hs_catalog_option *opts, size_t n,
                             hs_error *err);

/* Namespaces under `parent` (NULL or "": the top level) and tables of a
 * namespace ("ns.table" names), every page. *names_out is owned: free with
 * hs_catalog_names_free. */
hs_status hs_catalog_list_namespaces(const char *uri, const char *parent, char ***names_out,
                                     size_t *n_out, hs_error *err);
hs_status hs_catalog_list_tables(const char *uri, const char *ns, char ***names_out, size_t *n_out,
                                 hs_error *err);
void hs_catalog_names_free(char **names, size_t n);

/* Create (HS_ERR_CONFLICT when it exists) or drop (it must be empty) a
 * namespace ("a" or "a.b"). */
hs_status hs_catalog_create_namespace(const char *uri, const char *ns, hs_error *err);
hs_status hs_catalog_drop_namespace(const char *uri, const char *ns, hs_error *err);

/* Drop table "ns.table" from the catalog (`purge`: ask the catalog to
 * delete its files too). */
hs_status hs_catalog_drop_table(const char *uri, const char *ident, int purge, hs_error *err);

/* ------------------------------------------------------------------ SQL */
/* PostgreSQL/pgvector SQL over tables and registered Arrow data, parsed by
 * libpg_query and executed by our own vectorized engine (src/sql/). A
 * session maps names to relations: table folders (registered, or every
 * folder under the session's root that holds a table) and in-memory Arrow
 * data. See src/sql/README.md for the language and its semantics.
 *
 * Errors: HS_ERR_INVALID_ARG for syntax and semantic errors (unknown table
 * or column, type mismatch, division by zero, integer overflow, a vector of
 * the wrong dimension), HS_ERR_UNSUPPORTED for valid SQL we do not run,
 * HS_ERR_NOMEM past the memory limit. The message names what and where:
 *   sql: at position 8: column "nme" does not exist; did you mean "name"?
 *     SELECT nme FROM t
 *            ^
 * and *error_pos (may be NULL) receives the 1-based character position in
 * the SQL text (0 when none applies). */
typedef struct hs_sql_session hs_sql_session;

/* A new session. `root` (may be NULL): a folder whose table subfolders are
 * tables by their folder name (looked up when a query names them). *out is
 * owned by the caller (hs_sql_session_free). */
hs_status hs_sql_session_new(const char *root, hs_sql_session **out, hs_error *err);
void hs_sql_session_free(hs_sql_session *s); /* accepts NULL */

/* Register the table folder `uri` under `name` (replacing an earlier
 * relation of that name). The table is opened per query at its current
 * snapshot. */
hs_status hs_sql_register_table(hs_sql_session *s, const char *name, const char *uri,
                                hs_error *err);

/* Register in-memory data under `name`: the stream is read whole now and
 * released (its batches are kept by the session). */
hs_status hs_sql_register_stream(hs_sql_session *s, const char *name,
                                 struct ArrowArrayStream *stream, hs_error *err);

/* Forget `name`; HS_ERR_NOT_FOUND when it was not registered. */
hs_status hs_sql_unregister(hs_sql_session *s, const char *name, hs_error *err);

/* Run one SQL statement. `params` (may be NULL): a struct array of length 1
 * described by `params_schema`, whose child i is the value of $(i+1)
 * (fixed_size_list<float32> children bind as vectors). A query's rows come
 * back as a stream of struct batches, owned by the caller; statements
 * without rows (SET, CREATE INDEX, DROP INDEX) give a stream with no
 * batches and no columns; INSERT, DELETE, UPDATE and MERGE give one row with an
 * int64 column "count". The stream may be read after later calls on the
 * session, but not after hs_sql_session_free. */
hs_status hs_sql_execute(hs_sql_session *s, const char *sql,
                         const struct ArrowSchema *params_schema, const struct ArrowArray *params,
                         struct ArrowArrayStream *out, int32_t *error_pos, hs_error *err);

/* Ask the query running on `s` (from another thread) to stop: it fails
 * soon with HS_ERR_INVALID_ARG "query cancelled". Safe at any time. */
void hs_sql_cancel(hs_sql_session *s);

/* The per-query memory limit in bytes (0: the default, a quarter of the
 * machine's RAM). Past it, a query fails with HS_ERR_NOMEM naming the
 * operator and the limit (and how to raise it). */
void hs_sql_set_memory_limit(hs_sql_session *s, int64_t bytes);

/* ------------------------------------------------- object-store I/O */

/* Requests this process made to object stores (S3), all tables and threads
 * together, since it started or since the last hs_io_stats_reset. A
 * dependent round trip is one wait for the network: a request performed
 * alone, or a wave of requests sent together (a batch of parallel ranged
 * GETs or upload parts counts one per wave of at most its in-flight limit);
 * every retry is one more. Local tables make no requests. */
typedef struct hs_io_stats {
  uint64_t requests;                                 /* HTTP requests sent, retries included */
  uint64_t round_trips;                              /* dependent round trips, as above */
  uint64_t gets, heads, puts, posts, deletes, lists; /* requests by kind (LIST: a GET) */
  uint64_t retries;       /* requests that were retries of an earlier one */
  uint64_t bytes_read;    /* response bodies received */
  uint64_t bytes_written; /* request bodies sent */
} hs_io_stats;

void hs_io_stats_get(hs_io_stats *out);
void hs_io_stats_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* HYPERSTREAM_H */
