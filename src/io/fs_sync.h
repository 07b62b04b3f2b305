/*
 * fs_sync.h — a set of syncs started one by one, waited for once.
 *
 * A commit makes several files and directories durable before it
 * publishes the version that names them. Each sync starts as soon as what
 * it covers is written (the delete file's while the manifests are still
 * being built) and the commit waits once, for all of them, before the
 * link. On Linux the syncs go through an io_uring (IORING_OP_FSYNC: the
 * kernel's async workers run them side by side and the caller sleeps in
 * one io_uring_enter instead of creating and joining a thread per sync);
 * where io_uring is unavailable (old kernel, seccomp, io_uring_disabled)
 * or HS_IO_URING=0 is set, a thread per sync, as hs_fs_sync_group.
 *
 * Rings are kept per process between sets (a few, for concurrent
 * commits); a forked child never uses its parent's.
 *
 * Ownership: the set borrows each file descriptor (it must stay open until
 * hs_fs_syncs_wait or hs_fs_syncs_free returned) and copies each path; it
 * opens and closes the directories itself.
 */
#ifndef HS_IO_FS_SYNC_H
#define HS_IO_FS_SYNC_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/common.h"

typedef struct hs_fs_syncs hs_fs_syncs;

/* An empty set; NULL when out of memory. */
hs_fs_syncs *hs_fs_syncs_new(void);

/* Start fdatasync of `fd` (its bytes and size); `path` names it in errors. */
hs_status hs_fs_syncs_add_file(hs_fs_syncs *s, int fd, const char *path, hs_error *err);

/* Start fsync of directory `path` (its entries), unless this set already
 * synced or is syncing it since the last wait. */
hs_status hs_fs_syncs_add_dir(hs_fs_syncs *s, const char *path, hs_error *err);

/* Return once every sync started so far has returned. The first failure
 * (in the order started) is the error, naming its path and the call. The
 * set stays usable: later adds start new syncs (a directory synced before
 * this wait is synced again if added again). */
hs_status hs_fs_syncs_wait(hs_fs_syncs *s, hs_error *err);

/* Wait for what is still in flight, then free. NULL is a no-op. */
void hs_fs_syncs_free(hs_fs_syncs *s);

/* Whether sets use io_uring in this process (tests, benchmarks). */
bool hs_fs_syncs_uring(void);

#endif /* HS_IO_FS_SYNC_H */
