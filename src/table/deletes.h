/*
 * deletes.h — Iceberg delete-file codecs: v2 position-delete files (Parquet,
 * deletes_pos.c) and v3 deletion vectors (Puffin "deletion-vector-v1"
 * blobs, deletes_dv.c), read and written. apache/iceberg format/spec.md
 * ("Position Delete Files", "Deletion Vectors") and format/puffin-spec.md.
 *
 * Deleted positions of one data file are 32-bit CRoaring bitmaps (a data
 * file here holds fewer than 2^32 rows, as for the scalar indexes); a
 * deletion vector naming a position >= 2^32 is HS_ERR_UNSUPPORTED. Bitmaps
 * handed out are CRoaring's (roaring_bitmap_free).
 *
 * Nothing here knows tables: paths are local paths, the caller resolves
 * recorded paths (hs_table_resolve_path) and decides which delete applies
 * to which data file (sequence numbers, partitions).
 */
#ifndef HS_TABLE_DELETES_H
#define HS_TABLE_DELETES_H

#include <roaring/roaring.h>

#include "../iceberg/manifest.h"
#include "../parquet/parquet.h"

/* Reserved field ids (spec, "Reserved Field IDs"). */
#define HS_DELETE_FILE_PATH_ID 2147483546 /* file_path: string, required */
#define HS_DELETE_POS_ID 2147483545       /* pos: long, required */
#define HS_DELETE_ROW_ID 2147483544       /* row: struct, optional (ignored) */
#define HS_ROW_POSITION_ID 2147483645     /* _pos: what a DV blob's "fields" names */

#define HS_DV_BLOB_TYPE "deletion-vector-v1"
/* A deletion-vector blob larger than this is refused (HS_ERR_CORRUPT): a
 * bitmap of 2^32 positions is ~512 MiB as bitsets, far beyond what any
 * writer produces for a data file; 1 GiB bounds the allocation. */
#define HS_DV_BLOB_BYTES_MAX ((int64_t)1 << 30)
/* Rows per batch read from a position-delete file (bounded memory). */
#define HS_POSDEL_BATCH_ROWS 65536

/* ------------------------------------------------------ position deletes */

/* Called once per run of consecutive rows with equal file_path, in file
 * order (a path may come back in several runs: a run is also cut at batch
 * boundaries). `data_file` is the recorded path (NUL-terminated, borrowed
 * for the call); pos are the run's positions (borrowed, each >= 0). A
 * status other than HS_OK stops the read and is returned. */
typedef hs_status (*hs_table_posdel_fn)(void *ctx, const char *data_file, const int64_t *pos,
                                        size_t n, hs_error *err);

/* Read the Iceberg position-delete file `path` (Parquet, any writer:
 * Spark/Iceberg Java, pyiceberg, ours): columns file_path (field id
 * 2147483546) and pos (2147483545), found by field id, by name when the
 * file has no field ids; an optional `row` column is ignored. A negative
 * pos, a NULL, a missing column or a wrong type is HS_ERR_CORRUPT naming
 * the file (and the row). Reads the file once, streaming (bounded memory
 * per batch: HS_POSDEL_BATCH_ROWS rows). */
hs_status hs_table_posdel_read(const char *path, hs_table_posdel_fn fn, void *ctx, hs_error *err);

/* The same over a reader already open (`name` in messages; the reader
 * stays the caller's). Used by fuzzers and tests over memory. */
hs_status hs_table_posdel_read_reader(hs_parquet_reader *r, const char *name, hs_table_posdel_fn fn,
                                      void *ctx, hs_error *err);

/* ----------------------------------------------------- deletion vectors */

/* Parse one deletion-vector-v1 blob (Puffin spec, "deletion-vector-v1"):
 * 4-byte big-endian length of magic+vector, magic D1 D3 39 64, the vector
 * in Roaring's 64-bit portable format (little-endian 64-bit bucket count,
 * then per bucket a 32-bit key and a 32-bit portable Roaring bitmap),
 * 4-byte big-endian CRC-32 (zlib's crc32) of magic+vector. Any mismatch is
 * HS_ERR_CORRUPT saying which check failed (every 32-bit bitmap is checked
 * against the Roaring format before CRoaring sees it: keys strictly
 * increasing, containers sorted, runs in order, cardinalities, offsets, no
 * trailing bytes). Positions >= 2^32 (a non-empty bucket with key > 0) are
 * HS_ERR_UNSUPPORTED. *out is a new roaring bitmap. */
hs_status hs_table_dv_parse(const uint8_t *p, size_t len, roaring_bitmap_t **out, hs_error *err);

/* Read the blob at [offset, offset + length) of Puffin file `path`
 * (opened non-blocking, type checked: hs_source_open_file), parse it, and
 * check its cardinality against `cardinality` (the manifest entry's
 * record_count; -1: unchecked). Errors name the file and offset. */
hs_status hs_table_dv_read(const char *path, int64_t offset, int64_t length, int64_t cardinality,
                           roaring_bitmap_t **out, hs_error *err);

/* The blob bytes of `bm` (appended to out): one bucket (key 0) unless
 * `bm` is empty (no bucket), run-optimized on a copy. */
hs_status hs_table_dv_serialize(const roaring_bitmap_t *bm, hs_buf *out, hs_error *err);

/* ------------------------------------------------------------- writers */

/* One data file's deleted positions, for the writers. */
typedef struct hs_table_delete_group {
  const char *data_file;        /* the data file's path as recorded in its manifest entry */
  const roaring_bitmap_t *rows; /* deleted positions (non-empty) */
} hs_table_delete_group;

/* Write a position-delete file at `path` (v2 tables): rows sorted by
 * (file_path, pos) as the spec requires (groups are sorted here by their
 * path's bytes; two groups with one path are HS_ERR_INVALID_ARG), Parquet
 * with the spec's schema and field ids (file_path string required
 * 2147483546, pos long required 2147483545), zstd. `path` must not exist.
 * Leaves the file written but NOT fsynced: the writer's descriptor
 * (hs_parquet_writer_close_unsynced) is closed here, so the commit must
 * open and fdatasync `path` (and fsync its folder) before publishing.
 * A store URI (s3://) is written by the Parquet writer's store sink and
 * is durable on return.
 * On failure nothing is left at `path`.
 * Fills *df: content HS_ICE_CONTENT_POSITION_DELETES, file_path =
 * `recorded` (copied into a), file_format "PARQUET", record_count,
 * file_size_in_bytes, split_offsets, metrics of both columns (column
 * sizes, value and null counts, lower/upper bounds; file_path bounds are
 * full, never truncated, so lower == upper names the one data file as
 * Iceberg's readers expect), referenced_data_file when there is exactly
 * one group (Iceberg does this); partition left for the caller. */
hs_status hs_table_posdel_write(const char *path, const char *recorded,
                                const hs_table_delete_group *groups, size_t n, hs_arena *a,
                                hs_iceberg_data_file *df, hs_error *err);

/* Write a Puffin file at `path` (v3 tables; must not exist) holding one
 * deletion-vector-v1 blob per group, in the groups' order (blob metadata:
 * type "deletion-vector-v1", fields [2147483645], snapshot-id and
 * sequence-number -1, properties "referenced-data-file" and "cardinality",
 * uncompressed), then the Puffin footer (magic PFA1, footer JSON, length,
 * flags 0, magic). Not fsynced (written and closed; the commit syncs it);
 * a store URI is one PUT If-None-Match (durable on return; an existing
 * object is HS_ERR_INVALID_ARG, as an existing file is).
 * On failure nothing is left at `path`. Fills dfs[i] (n entries): content
 * HS_ICE_CONTENT_POSITION_DELETES, file_format "PUFFIN", file_path =
 * `recorded`, referenced_data_file = groups[i].data_file,
 * content_offset / content_size_in_bytes of blob i, record_count = its
 * cardinality, file_size_in_bytes of the Puffin file (strings in a). */
hs_status hs_table_dv_write(const char *path, const char *recorded,
                            const hs_table_delete_group *groups, size_t n, hs_arena *a,
                            hs_iceberg_data_file *dfs, hs_error *err);

#endif /* HS_TABLE_DELETES_H */
