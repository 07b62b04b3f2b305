/*
 * timetravel.h — private interface of the table layer's time-travel files
 * (refs.c, history.c, foreign.c) to the rest of src/table: opening
 * metadata that other writers named, refusing commits on tables we may
 * only read, and the load helpers table.c exports for them. The public
 * side is the "Tables: time travel (timetravel)" section of
 * include/hyperstream.h.
 */
#ifndef HS_TABLE_TIMETRAVEL_H
#define HS_TABLE_TIMETRAVEL_H

#include "table.h"

/* table.c: load the metadata file `path` into `t` as version `version`
 * (replacing what it held only on success). */
hs_status hs_table_load_file(hs_table *t, const char *path, int64_t version, hs_error *err);

/* table.c: read and parse metadata file `path` into `arena` (errors name
 * the path). */
hs_status hs_table_metadata_read(const char *path, hs_arena *arena, hs_iceberg_metadata *meta,
                                 hs_error *err);
/* table.c: make `meta` (parsed into `arena`, which `t` takes over; *arena
 * is left empty, and is reset on failure) `t`'s version `version`, read
 * from `path`. */
hs_status hs_table_metadata_adopt(hs_table *t, const char *path, int64_t version, hs_arena *arena,
                                  const hs_iceberg_metadata *meta, hs_error *err);
/* table.c: `uri` past a leading "file://" or "file:". */
const char *hs_table_strip_file_scheme(const char *uri);

/* table.c: a handle for folder `uri` (normalised, absolute), nothing loaded. */
hs_status hs_table_alloc(const char *uri, hs_table **out, hs_error *err);

/* foreign.c: load the latest "NNNNN-<uuid>.metadata.json" of a folder that
 * has no vN.metadata.json (Java and pyiceberg catalogs name them so): the
 * highest NNNNN; among equal prefixes the newest last-updated-ms, then the
 * greatest name. HS_ERR_NOT_FOUND "not a table" when there is none. */
hs_status hs_table_load_foreign(hs_table *t, hs_error *err);

/* foreign.c: HS_ERR_UNSUPPORTED naming `what` when `t` may not commit:
 * opened from one metadata file, or its metadata was named by a catalog
 * (which holds the pointer to the current version: a commit here would
 * fork the table behind the catalog's back). */
hs_status hs_table_check_writable(const hs_table *t, const char *what, hs_error *err);

/* refs.c: is `ancestor` on the parent chain of `of` (itself included)?
 * The walk is bounded by the number of snapshots (cycles end it). */
bool hs_table_is_ancestor(const hs_iceberg_metadata *m, int64_t ancestor, int64_t of);

#endif /* HS_TABLE_TIMETRAVEL_H */
