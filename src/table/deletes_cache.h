/*
 * deletes_cache.h — the contents of position delete files, kept per
 * process (deletes_cache.c): a table deleted from row by row plans every
 * new snapshot again, and without this each plan decoded every position of
 * every live delete file anew. Delete files are written once under fresh
 * names, so an entry is keyed by the file's resolved path and its size
 * (the manifest entry's file_size_in_bytes, which the plan checks against
 * the file first). Writers put the files they write (src/query/rowdelta.c),
 * the plan (plan_deletes.c) the files it reads. Bounded: at most
 * HS_POSDEL_CACHE_ENTRIES files and HS_POSDEL_CACHE_POSITIONS positions,
 * least recently used evicted. Thread-safe (one mutex). A file damaged
 * after this process wrote or read it (same size) is served as it was; a
 * process that did not see it reads and checks the file itself.
 */
#ifndef HS_TABLE_DELETES_CACHE_H
#define HS_TABLE_DELETES_CACHE_H

#include <roaring/roaring.h>
#include <stdbool.h>

#include "deletes.h"

enum { HS_POSDEL_CACHE_ENTRIES = 256, HS_POSDEL_CACHE_POSITIONS = 1 << 25 };

/* One data file's positions in a cached delete file, handed to the caller
 * (borrowed for the call, under the cache's lock: keep it short). */
typedef hs_status (*hs_posdel_cache_fn)(void *ctx, const char *data_file,
                                        const roaring_bitmap_t *rows, hs_error *err);

/* If delete file `path` of `size` bytes is cached, call fn for each data
 * file it names (in path order) and return true with *st its status;
 * else return false. */
bool hs_posdel_cache_apply(const char *path, int64_t size, hs_posdel_cache_fn fn, void *ctx,
                           hs_status *st, hs_error *err);

/* Keep a copy of the n groups as the contents of delete file `path` of
 * `size` bytes (replacing an entry of that path). Best effort: out of
 * memory, or a file larger than the bound, keeps nothing. */
void hs_posdel_cache_put(const char *path, int64_t size, const hs_table_delete_group *groups,
                         size_t n);

/* Drop every entry (tests). */
void hs_posdel_cache_clear(void);

#endif /* HS_TABLE_DELETES_CACHE_H */
