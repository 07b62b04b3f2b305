/*
 * parquet.h — what other layers may use of the Parquet layer: the public
 * reader/writer API (hyperstream.h) plus read access to parsed metadata.
 * Everything else in src/parquet/ is private to the layer.
 */
#ifndef HS_PARQUET_H
#define HS_PARQUET_H

#include "hyperstream.h"
#include "metadata.h"

/* The parsed footer of an open reader; borrowed, valid while it is open. */
const hs_pq_file_metadata *hs_parquet_reader_metadata(const hs_parquet_reader *reader);

/* hs_parquet_reader_open for a table's data file, which is written once
 * and never changed: the opened file (mapping, parsed footer, schema) is
 * kept per process and shared by later opens of the same path while its
 * device, inode, size and mtime are unchanged (stat on every open). At most
 * HS_PQ_FILE_CACHE_MAX files are kept, least recently opened evicted; a kept
 * file holds its descriptor and mapping, so a deleted one's space returns
 * on eviction or hs_parquet_file_cache_clear(). The reader is the caller's,
 * as from hs_parquet_reader_open. */
#define HS_PQ_FILE_CACHE_MAX 32
hs_status hs_parquet_reader_open_shared(const char *path, hs_parquet_reader **out, hs_error *err);
/* Another reader of the same opened file as `reader` (no stat, no open:
 * the file's mapping and parsed footer are shared by reference count), for
 * callers that keep one reader per file and read it from several threads.
 * The new reader is the caller's. */
hs_status hs_parquet_reader_dup(const hs_parquet_reader *reader, hs_parquet_reader **out,
                                hs_error *err);
/* The reader's byte source, with a reference taken for the caller
 * (hs_source_unref): for reading the file's page indexes, say, without
 * mapping it a second time. */
hs_source *hs_parquet_reader_source(hs_parquet_reader *reader);
/* Drop every kept file (files still open elsewhere stay valid) and the
 * cached directories of their delta pages (README "Row gather"). */
void hs_parquet_file_cache_clear(void);
/* Data pages read by row gather (only the selected rows, in place) in this
 * process so far: for tests and benchmarks that check the path is taken. */
long long hs_parquet_pages_gathered(void);

/* hs_parquet_writer_close without the fsync: the complete file is written
 * but not yet durable; *fd_out is its open descriptor, which the caller
 * must fdatasync (or hand to hs_fs_sync_group) and close. Lets a commit
 * sync the data file together with its other files. A remote file
 * (hs_store_is_remote) has no descriptor: it is closed durable, *fd_out
 * -1. */
hs_status hs_parquet_writer_close_unsynced(hs_parquet_writer *writer, int *fd_out, hs_error *err);

/* After a successful close (either form), before hs_parquet_writer_free:
 * the footer the writer wrote, parsed back from its bytes into `arena`
 * (file_size, footer_len and footer_crc32c set as hs_pq_footer_read sets
 * them), so that a caller records the file's metrics without reading it
 * again (on object storage that read is a HEAD and ranged GETs). */
hs_status hs_parquet_writer_footer(const hs_parquet_writer *writer, hs_arena *arena,
                                   hs_pq_file_metadata *out, hs_error *err);

/* --- Page indexes (pageprune) --- */
#include "../io/io.h"

/* Read and check the ColumnIndex and OffsetIndex of column chunk `cc`
 * (a chunk of a row group of `rg_rows` rows) through `src`, with reads
 * bounded by the source size and the lengths the footer gives. Each of
 * *ci / *oi is NULL when the chunk has none (not an error); both are
 * allocated in `arena`. A malformed index is HS_ERR_CORRUPT naming the
 * column and byte offset (the caller decides whether to ignore it).
 * Checked: the offset index has pages, the first starts at row 0, first
 * rows strictly increase and stay below rg_rows; the column index has as
 * many pages as the offset index, and null counts in [0, page rows]. */
hs_status hs_parquet_page_index_read(hs_source *src, const hs_pq_column_chunk *cc, int64_t rg_rows,
                                     hs_arena *arena, hs_pq_column_index **ci,
                                     hs_pq_offset_index **oi, hs_error *err);

/* Rows of page p of `oi` in a row group of rg_rows rows: [*first, *end). */
void hs_parquet_page_rows(const hs_pq_offset_index *oi, uint32_t p, int64_t rg_rows, int64_t *first,
                          int64_t *end);

#endif /* HS_PARQUET_H */
