/*
 * deletes_eq.h — Iceberg v2 equality deletes (spec "Equality Delete
 * Files"): the key set of one delete file, and the positions of a data
 * file's rows it matches. Which delete files apply to which data file
 * (sequence numbers, partitions) is the read plan's decision (plan.c);
 * this module only loads keys and matches rows.
 *
 * Matching follows Iceberg's Java reader: a row is deleted when, for every
 * equality field, its value equals the delete row's, where NULL equals
 * NULL, NaN equals NaN and -0.0 differs from 0.0 (values compared as
 * Double.compare does). Values are normalized so that files written
 * before a type promotion match: integers as int64, float as double,
 * date/time/timestamps as int64 in the field's Iceberg unit, decimals as
 * unscaled 128-bit integers, strings/binary/uuid/fixed as bytes. Only
 * top-level primitive fields can be equality keys here (a nested struct
 * field is HS_ERR_UNSUPPORTED naming it).
 */
#ifndef HS_TABLE_DELETES_EQ_H
#define HS_TABLE_DELETES_EQ_H

#include <roaring/roaring.h>

#include "table.h"

typedef struct hs_table_eqdel hs_table_eqdel;

/* Load the delete keys of equality-delete file `path` (Parquet; any
 * writer) for the equality field ids `ids` (n >= 1, from the manifest
 * entry's equality_ids), typed by `schema` (see hs_table_eqdel_schema).
 * Key columns are found in the delete file by PARQUET:field_id (by name
 * through `schema` when the file has no field ids); a key column missing
 * from the file is HS_ERR_CORRUPT. NULL key values are keys too. The key
 * set is hashed and deduplicated; its size is bounded by the file's size
 * (a file whose keys expand past 64 MiB + 32 x its size is refused).
 * Errors name the file. */
hs_status hs_table_eqdel_load(const char *path, const int32_t *ids, size_t n,
                              const hs_iceberg_schema *schema, hs_table_eqdel **out, hs_error *err);

/* Add to *deleted the positions of the rows of data file `data_path`
 * matched by any of the n_d key sets. Only the key columns are read
 * (found by field id, else by `schema`'s names; a column the data file
 * lacks reads as NULL, or as the field's v3 initial-default), in batches.
 * Positions above UINT32_MAX are HS_ERR_UNSUPPORTED. Errors name the data
 * file. n_d == 0 reads nothing. */
hs_status hs_table_eqdel_apply(const hs_table_eqdel *const *d, size_t n_d, const char *data_path,
                               const hs_iceberg_schema *schema, roaring_bitmap_t *deleted,
                               hs_error *err);

void hs_table_eqdel_free(hs_table_eqdel *d); /* accepts NULL */

/* Keys of rows in memory (upserts and merges, src/query/rowdelta.c): the
 * struct batches `batches` (schema `s`: one child per key field, in `ids`
 * order, each of the Arrow type the table writes for it) as a key set typed
 * by `schema`'s fields. A row with a NULL in its key matches nothing (SQL's
 * rule, not the equality-delete rule). */
hs_status hs_table_eqdel_from_arrow(const int32_t *ids, size_t n, const hs_iceberg_schema *schema,
                                    const struct ArrowSchema *s, const struct ArrowArray *batches,
                                    size_t n_batches, hs_table_eqdel **out, hs_error *err);
/* hs_table_eqdel_apply for one set, leaving out the rows in `skip` (may be
 * NULL: deleted rows), and remembering which keys matched a row. Several
 * threads may match data files against one set at once. */
hs_status hs_table_eqdel_match(hs_table_eqdel *d, const char *data_path,
                               const hs_iceberg_schema *schema, const roaring_bitmap_t *skip,
                               roaring_bitmap_t *matched, hs_error *err);
/* For a set from hs_table_eqdel_from_arrow: hits[r] = whether source row
 * r's key matched a data-file row in some hs_table_eqdel_match (one byte
 * per source row, in batch order). */
void hs_table_eqdel_hits(const hs_table_eqdel *d, uint8_t *hits);

/* The same over Parquet bytes in memory (`name` in errors; `data` is
 * borrowed for the call only): fuzz/fuzz_eqdel.c. */
hs_status hs_table_eqdel_load_buffer(const char *name, const uint8_t *data, size_t len,
                                     const int32_t *ids, size_t n, const hs_iceberg_schema *schema,
                                     hs_table_eqdel **out, hs_error *err);
hs_status hs_table_eqdel_apply_buffer(const hs_table_eqdel *const *d, size_t n_d, const char *name,
                                      const uint8_t *data, size_t len,
                                      const hs_iceberg_schema *schema, roaring_bitmap_t *deleted,
                                      hs_error *err);

/* Distinct keys loaded (duplicates in the file count once). */
size_t hs_table_eqdel_count(const hs_table_eqdel *d);
/* The key's field ids, as given to hs_table_eqdel_load (borrowed). */
const int32_t *hs_table_eqdel_ids(const hs_table_eqdel *d, size_t *n);

/* A schema holding just the fields `ids` (top-level), each taken from the
 * newest schema of `m` (highest schema-id) that contains it: the type a
 * delete was written under, also when the current schema dropped or
 * promoted the field since. Strings and arrays live in `arena`. A field no
 * schema has is HS_ERR_SCHEMA naming its id. */
hs_status hs_table_eqdel_schema(const hs_iceberg_metadata *m, const int32_t *ids, size_t n,
                                hs_arena *arena, hs_iceberg_schema *out, hs_error *err);

/* Write an equality-delete file at `path` (must not exist) holding the
 * key rows of `rows` (consumed and released on every return): a stream of
 * struct batches whose n columns are the key fields `ids`, in that order
 * (top-level fields of `schema`), each of the Arrow type the table writes
 * for the field (string/binary may be the large variants). Columns are
 * written under the fields' names and ids, zstd. Not fsynced (written and
 * closed: the commit syncs it and its folder). On failure nothing is left
 * at `path`. Fills *df: content HS_ICE_CONTENT_EQUALITY_DELETES,
 * file_path = `recorded` (copied into a), file_format "PARQUET",
 * record_count, file_size_in_bytes, split_offsets, metrics of the key
 * columns (Iceberg's default truncate(16) bounds), equality_ids = ids;
 * the partition tuple is the caller's. */
hs_status hs_table_eqdel_write(const char *path, const char *recorded, const int32_t *ids, size_t n,
                               const hs_iceberg_schema *schema, struct ArrowArrayStream *rows,
                               hs_arena *a, hs_iceberg_data_file *df, hs_error *err);

#endif /* HS_TABLE_DELETES_EQ_H */
