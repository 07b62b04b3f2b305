/*
 * table.h — the table layer's private interface (shared by table.c,
 * commit.c and scan.c; other layers use include/hyperstream.h).
 *
 * A table is a folder:
 *   <root>/metadata/vN.metadata.json   Iceberg table metadata, N = 1, 2, ...
 *   <root>/metadata/version-hint.text  "N" of the latest version (a hint)
 *   <root>/metadata/<name>.avro        manifests and manifest lists
 *   <root>/data/<name>.parquet          data files
 * The "location" in metadata is the absolute path of <root>; every file the
 * metadata references must lie under it (checked on read).
 */
#ifndef HS_TABLE_H
#define HS_TABLE_H

#include "../iceberg/iceberg.h"
#include "../iceberg/manifest.h"

/* Metadata JSON files larger than this are refused as corrupt. */
#define HS_TABLE_METADATA_BYTES_MAX ((size_t)256 << 20)
/* Manifests and manifest lists larger than this are refused. */
#define HS_TABLE_MANIFEST_BYTES_MAX ((size_t)1 << 30)
/* metadata-log entries kept (Iceberg's write.metadata.previous-versions-max). */
#define HS_TABLE_METADATA_LOG_MAX 100

struct hs_table {
  char *root;          /* absolute path, no trailing '/' */
  int64_t version;     /* N of the loaded vN.metadata.json */
  char *metadata_path; /* <root>/metadata/vN.metadata.json */
  hs_arena arena;      /* owns `meta` */
  hs_iceberg_metadata meta;
  /* hs_table_open_metadata: this one file, never reloaded; no commits. */
  bool is_static;
  /* Metadata named as catalogs write it ("00003-<uuid>.metadata.json",
   * foreign.c): readable, but commits are refused (the catalog that owns
   * the table keeps the pointer to its current metadata). */
  bool foreign_names;
};

/* "<root>/metadata/v<N>.metadata.json" into `out` (cap >= 4200). */
bool hs_table_version_path(const char *root, int64_t version, char *out, size_t cap);

/* Find the latest version of the table at `root` and load it into `t`
 * (replacing what it held only on success). See table.c for the probe. */
hs_status hs_table_load_latest(hs_table *t, hs_error *err);

/* Load exactly version `version` into `t` on success. HS_ERR_NOT_FOUND
 * when the file does not exist. */
hs_status hs_table_load_version(hs_table *t, int64_t version, hs_error *err);

/* Resolve a path recorded in metadata (absolute, "file:" or "file://"
 * prefixed) to a local path, refusing anything outside the table root:
 * it must start with "<root>/" and contain no "." or ".." components and
 * no empty component. `what` names the referencing place in errors.
 * *out is hs_malloc'd. */
hs_status hs_table_resolve_path(const hs_table *t, const char *recorded, const char *what,
                                char **out, hs_error *err);

/* Read a whole manifest-list or manifest file under the table root. */
hs_status hs_table_read_avro(const hs_table *t, const char *recorded, const char *what, hs_buf *out,
                             hs_error *err);

/* The current snapshot, or NULL when the table has none. */
const hs_iceberg_snapshot *hs_table_current(const hs_table *t);

/* Test hook: when the environment variable HS_TABLE_CRASH_STEP is N > 0,
 * the N-th call in this process raises SIGKILL. Called at each step of the
 * commit path so that tests can kill a writer at every point. */
void hs_table_crash_point(void);

#endif /* HS_TABLE_H */
