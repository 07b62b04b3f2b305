/*
 * io.h — byte sources and sinks: local files (and, later, object stores)
 * behind one interface of bounded range reads and sequential writes.
 *
 * A source is reference-counted so that a stream can outlive the reader
 * that created it. Every read is checked against the source's length:
 * asking for bytes past the end is an HS_ERR_CORRUPT error naming the
 * source, never a short read.
 */
#ifndef HS_IO_H
#define HS_IO_H

#include "../common/common.h"
#include "fs.h"

typedef struct hs_source hs_source;

/* Open a local file for range reads. *out is owned (hs_source_unref). */
hs_status hs_source_open_file(const char *path, hs_source **out, hs_error *err);
/* Wrap borrowed memory; `buf` must outlive every reference. */
hs_status hs_source_open_memory(const uint8_t *buf, size_t len, const char *name, hs_source **out,
                                hs_error *err);
void hs_source_ref(hs_source *src);
void hs_source_unref(hs_source *src); /* accepts NULL */

uint64_t hs_source_size(const hs_source *src);
const char *hs_source_name(const hs_source *src);

/* Read exactly `len` bytes at `offset` into `dst`. */
hs_status hs_source_read(hs_source *src, uint64_t offset, size_t len, void *dst, hs_error *err);

/* Borrow `len` bytes at `offset` without copying when the source is memory
 * or memory-mapped; otherwise copy into `scratch` (grown as needed) and
 * point at it. *out is valid until the next use of `scratch`. */
hs_status hs_source_view(hs_source *src, uint64_t offset, size_t len, hs_buf *scratch,
                         const uint8_t **out, hs_error *err);

/* A hint that bytes [offset, offset + len) will not be read again soon: a
 * memory-mapped file drops the whole OS pages inside the range from the
 * resident set (they stay in the page cache and map in again on use), so
 * reading a large file does not keep it resident. Views already handed out
 * stay valid. A no-op for other sources. */
void hs_source_release(hs_source *src, uint64_t offset, size_t len);

/* Read exactly `len` bytes at `offset` into `dst` without mapping them:
 * a file source reads with pread(2) even when it is memory-mapped, so the
 * bytes come from the page cache and the process's resident set does not
 * grow (an index reading a few rows of a large section keeps it cold).
 * Memory sources copy. Safe from any number of threads at once. */
hs_status hs_source_read_unmapped(hs_source *src, uint64_t offset, size_t len, void *dst,
                                  hs_error *err);
/* True when the source is a file (reads can bypass any mapping). */
bool hs_source_is_file(const hs_source *src);
/* True when the source reads through a backend (an object store): every
 * byte not cached is a request, so read what you need, together. */
bool hs_source_is_remote(const hs_source *src);
/* Ranges [offsets[i], offsets[i] + lens[i]) a reader is about to read, one
 * by one: a remote source fetches those its cache lacks in one parallel
 * wave (store.h hs_store_prefetch; ranges up to 1 MiB exactly, `exact`,
 * larger ones widened to the cache's blocks); a no-op for other sources. */
void hs_source_prefetch(hs_source *src, const uint64_t *offsets, const size_t *lens, size_t n);
/* The stamp (fs.h) of a file source's file as it was opened, when the
 * file is a regular file, or of a store object (hs_store_source_open:
 * derived from its URI, size and ETag): what a cache of things derived
 * from its bytes keys on. False for memory sources, which have none. */
bool hs_source_stamp(const hs_source *src, hs_fs_stamp *out);

/* ---------------------------------------------------------------- sink */

typedef struct hs_sink hs_sink;

/* Create (truncate) a local file for writing. */
hs_status hs_sink_open_file(const char *path, hs_sink **out, hs_error *err);
hs_status hs_sink_write(hs_sink *sink, const void *data, size_t len, hs_error *err);
uint64_t hs_sink_offset(const hs_sink *sink);
/* Flush, fsync and close. */
hs_status hs_sink_close(hs_sink *sink, hs_error *err);
/* Flush and free the sink WITHOUT syncing: *fd_out is the still open
 * descriptor, which the caller must make durable (fdatasync, e.g. through
 * hs_fs_sync_group) and close. On failure the file is closed and removed
 * and *fd_out is -1. */
hs_status hs_sink_close_unsynced(hs_sink *sink, int *fd_out, hs_error *err);
/* Close without flushing and delete the file (after a failure). */
void hs_sink_abort(hs_sink *sink); /* accepts NULL */

#endif /* HS_IO_H */
