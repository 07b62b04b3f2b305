/*
 * fs.h — local file-system primitives the table layer's commit protocol
 * stands on: directory creation, whole-file reads bounded by a size cap,
 * durable writes, an exclusive atomic publish (a name that appears complete
 * or not at all, and only for the first writer), directory fsync, listing,
 * and random identifiers for unique file names.
 *
 * Durability contract: hs_fs_write_file and hs_fs_publish_exclusive return
 * HS_OK only after the file's bytes and the directory entry naming it are
 * on stable storage (fdatasync of the file and fsync of its directory;
 * hs_fs_write_file runs the two side by side, fs_sync.h).
 * hs_fs_create_file makes only the bytes durable, so that a caller creating
 * several files in one directory pays one directory fsync for all of them
 * (hs_fs_fsync_dir, before anything durable names them). hs_fs_replace_hint
 * makes nothing durable: for hints that readers verify and may find stale,
 * empty or missing after a crash.
 */
#ifndef HS_IO_FS_H
#define HS_IO_FS_H

#include <sys/stat.h>

#include "../common/common.h"

/* Create `path` and its missing parents (mode 0755). Existing directories
 * are fine; an existing non-directory is HS_ERR_IO. Each directory created
 * is fsynced into its parent. */
hs_status hs_fs_mkdirs(const char *path, hs_error *err);

/* Read the whole regular file `path` into `out` (appended). Files larger
 * than `max_bytes` give HS_ERR_CORRUPT naming the file; a missing file gives
 * HS_ERR_NOT_FOUND. */
hs_status hs_fs_read_file(const char *path, size_t max_bytes, hs_buf *out, hs_error *err);

/* Does `path` exist (any type; a link is not followed)? Errors other than
 * ENOENT count as "exists" so that a caller probing for a free name never
 * overwrites. A caller that loops until a name is missing must use
 * hs_fs_probe instead: with a name too long, a symlink loop or a file
 * where a folder should be, every name "exists". */
bool hs_fs_exists(const char *path);

/* lstat `path`: HS_OK with *exists true (any type) or false (ENOENT);
 * any other failure is an error explaining it (hs_fs_path_error). */
hs_status hs_fs_probe(const char *path, bool *exists, hs_error *err);

/* Set `err` to `status` with a message naming `path`, what was being done
 * (`doing`, e.g. "cannot open") and the cause of `errnum` in words a user
 * can act on: for ENAMETOOLONG the component that is too long (or the
 * whole path), for ENOTDIR the prefix that is a file, not a folder, for
 * ELOOP the prefix that is a symlink loop; else strerror. */
hs_status hs_fs_path_error(hs_error *err, hs_status status, const char *path, const char *doing,
                           int errnum);

/* "a file", "a folder", "a FIFO", ... for messages. */
const char *hs_fs_kind_name(mode_t mode);

/* Open regular file `path` for reading without ever blocking: the open is
 * non-blocking (a FIFO or a device never waits for a writer) and the type
 * is checked on the descriptor. Anything but a regular file is HS_ERR_IO
 * naming its kind; a missing file HS_ERR_NOT_FOUND. *sb is the
 * descriptor's fstat. The descriptor keeps O_NONBLOCK, which reads of a
 * regular file ignore on Linux file systems (no extra syscall per open:
 * some opens are per query); a read that fails with EAGAIN anyway calls
 * hs_fs_set_blocking and retries. */
hs_status hs_fs_open_read(const char *path, int *fd_out, struct stat *sb, hs_error *err);
/* Clear O_NONBLOCK on a descriptor from hs_fs_open_read; false on failure. */
bool hs_fs_set_blocking(int fd);

/* fsync the directory `path` so that entries created or removed in it are
 * durable. */
hs_status hs_fs_fsync_dir(const char *path, hs_error *err);

/* Write `len` bytes to a new file `path` (which must not exist: O_EXCL),
 * fsync it and its directory. On failure the partial file is removed. */
hs_status hs_fs_write_file(const char *path, const void *data, size_t len, hs_error *err);

/* Like hs_fs_write_file, but the directory entry is NOT fsynced: after a
 * crash the file may be missing until the caller has fsynced its directory.
 * Callers must call hs_fs_fsync_dir on the directory before publishing
 * anything that names the file. On failure the partial file is removed. */
hs_status hs_fs_create_file(const char *path, const void *data, size_t len, hs_error *err);

/* Replace `path` with `data` through a temporary sibling and rename(2),
 * with no fsync at all: readers see the old or the new content while the
 * system runs; after a crash the file may hold either, be empty or be
 * missing. Only for hints that readers verify (version-hint.text). */
hs_status hs_fs_replace_hint(const char *path, const void *data, size_t len, hs_error *err);

/* Atomically replace `path` with `data` (temporary sibling + rename), then
 * fsync the directory. Used for hints that readers verify, never trust. */
hs_status hs_fs_replace_file(const char *path, const void *data, size_t len, hs_error *err);

/* Publish `data` as `path` only if no file of that name exists, atomically:
 * the bytes go to a unique temporary sibling that is fsynced, then linked
 * to `path` with link(2), which fails with EEXIST when another writer
 * published first. Readers therefore see either no file or the complete
 * one. Returns HS_OK and *won = true when this call created `path`;
 * HS_OK and *won = false when `path` already existed (nothing written);
 * an error otherwise. The temporary is always removed; the directory is
 * fsynced after a win. */
hs_status hs_fs_publish_exclusive(const char *path, const void *data, size_t len, bool *won,
                                  hs_error *err);

/* Deferred durability, for a commit that makes several files durable at
 * once (hs_fs_sync_group): create `path` exclusively and write `data`
 * with NO sync; *fd_out is the open descriptor (the caller syncs it
 * through the group and closes it). On failure the file is removed and
 * *fd_out is -1. */
hs_status hs_fs_create_unsynced(const char *path, const void *data, size_t len, int *fd_out,
                                hs_error *err);

/* hs_fs_publish_exclusive in two steps so that the temporary's sync can
 * join a sync group: prepare writes `data` to a unique temporary sibling
 * of `path` (its name into `tmp`, `tmp_cap` >= strlen(path) + 40) with no
 * sync and returns its open descriptor; the caller makes the bytes durable
 * (fdatasync), closes it, then calls link, which links `tmp` to `path`
 * (*won = false when `path` exists), always removes `tmp`, and fsyncs the
 * directory after a win. */
hs_status hs_fs_publish_prepare(const char *path, const void *data, size_t len, char *tmp,
                                size_t tmp_cap, int *fd_out, hs_error *err);
hs_status hs_fs_publish_link(const char *tmp, const char *path, bool *won, hs_error *err);

/* One file or directory of a sync group: a file's open descriptor (fd >= 0,
 * fdatasync: its bytes and size) or a directory path (fd < 0, fsync: its
 * entries). `path` names it in errors. */
typedef struct hs_fs_sync_item {
  int fd;
  const char *path;
} hs_fs_sync_item;

/* Sync every item, concurrently (one thread each, at most 8 items): the
 * device sees the flushes together instead of one after another. Returns
 * once all are done; the first failure (in item order) is the error, naming
 * its path. Descriptors stay open. */
hs_status hs_fs_sync_group(const hs_fs_sync_item *items, size_t n, hs_error *err);

/* What names a file's content for the process-wide caches of things read
 * from files written once (scan plans, open data files, index columns,
 * table metadata, delta-page directories): a later stamp that differs means the file was replaced
 * or rewritten and must be read again. */
typedef struct hs_fs_stamp {
  uint64_t dev, ino;
  int64_t size, mtime_ns;
} hs_fs_stamp;

/* The stamp of regular file `path`; false when it cannot be stat'ed or is
 * not a regular file. */
bool hs_fs_stamp_of(const char *path, hs_fs_stamp *out);
/* The same for an open descriptor (fstat). */
bool hs_fs_stamp_of_fd(int fd, hs_fs_stamp *out);
bool hs_fs_stamp_equal(const hs_fs_stamp *a, const hs_fs_stamp *b);

/* Remove a file; a missing file is not an error. */
hs_status hs_fs_remove(const char *path, hs_error *err);

/* Names (not "." or "..") in directory `path`, as an hs_malloc'd array of
 * hs_malloc'd strings (*n_out entries). Free with hs_fs_names_free. */
hs_status hs_fs_list(const char *path, char ***names_out, size_t *n_out, hs_error *err);
void hs_fs_names_free(char **names, size_t n);

/* Fill `out` with `n` random bytes from getrandom(2); failure is HS_ERR_IO
 * (no silent weak fallback: names built from these must not collide). */
hs_status hs_fs_random_bytes(void *out, size_t n, hs_error *err);

/* A random RFC 4122 version-4 UUID in canonical text form (36 chars + NUL). */
hs_status hs_fs_uuid4(char out[37], hs_error *err);

#endif /* HS_IO_FS_H */
