/*
 * plan_manifests.h — private to plan.c: parsed manifests shared by every
 * plan of the process (plan_manifests.c).
 *
 * A manifest is written once under a fresh name and never changed, and a
 * new snapshot's manifest list names the manifests of its parent again
 * (all but the few it adds or rewrites). Planning a new snapshot therefore
 * reads and parses only the manifests it has not seen: the others come
 * from this cache, keyed by the manifest's resolved path and stamp
 * (hs_fs_stamp: device, inode, size, mtime; a store object's HEAD) and by
 * what its list entry lends the entries (added snapshot id, sequence
 * number, first row id). The entries' paths are resolved inside the table
 * and checked for escaping links once, when the manifest is parsed.
 *
 * Ownership: a hs_plan_manifest is reference counted. The cache holds one
 * reference while the entry is cached; each plan that points into it
 * (data_file, entry paths) holds one more (hs_table_plan.held), released
 * by hs_table_plan_free. Everything in it is read-only once returned.
 */
#ifndef HS_TABLE_PLAN_MANIFESTS_H
#define HS_TABLE_PLAN_MANIFESTS_H

#include "../io/fs.h"
#include "table.h"

typedef struct hs_plan_manifest {
  hs_iceberg_manifest man; /* entries with the list entry's fields inherited */
  /* Per entry: its file's path resolved inside the table and link-checked,
   * or NULL (a DELETED entry, or one whose path failed: the caller resolves
   * it again for the error, hs_plan_manifest_entry_path). */
  const char **paths;
  const char *manifest_path; /* as its list records it */
  size_t len;                /* the file's bytes */
  /* Its resolved path and stamp, when it has one (stamped): a plan cache
   * entry records them as its dependencies without another stat. */
  const char *resolved;
  hs_fs_stamp stamp;
  bool stamped;
  /* private to plan_manifests.c */
  hs_arena arena;
  int64_t added_snapshot_id, sequence_number, first_row_id;
  bool has_first_row_id;
  const char *root, *alias; /* the table folder it was resolved against */
  uint64_t hash, used_at;
  size_t cost;
  int refs;
  struct hs_plan_manifest *next; /* hash chain */
} hs_plan_manifest;

/* Manifest `mf` of `t`'s current list, parsed: a cached one when its file
 * and the inherited fields are the ones it was parsed with, else read
 * (into `buf`, scratch), parsed and, when stamped and every path resolved,
 * cached. *out holds a reference for the caller. Errors are the ones
 * reading and parsing it give (they name the manifest). */
hs_status hs_plan_manifest_get(const hs_table *t, const hs_iceberg_manifest_file *mf, hs_buf *buf,
                               hs_plan_manifest **out, hs_error *err);

/* Entry k's resolved path: m->paths[k], or (an uncached manifest whose
 * entry did not resolve when parsed) resolved again into `arena`, or the
 * error resolving it gives (naming the manifest and the entry). */
hs_status hs_plan_manifest_entry_path(const hs_table *t, const hs_plan_manifest *m, size_t k,
                                      hs_arena *arena, const char **out, hs_error *err);

void hs_plan_manifest_unref(hs_plan_manifest *m); /* accepts NULL */

/* Cache statistics (tests): manifests parsed (misses), served (hits). */
void hs_plan_manifest_stats(uint64_t *parsed, uint64_t *served);

#endif /* HS_TABLE_PLAN_MANIFESTS_H */
