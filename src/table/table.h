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
#include "../io/fs.h"
#include "../io/store.h"
#include "../iceberg/manifest.h"
#include "../index/binding.h"

#include <roaring/roaring.h>

/* Metadata JSON files larger than this are refused as corrupt. */
#define HS_TABLE_METADATA_BYTES_MAX ((size_t)256 << 20)
/* Manifests and manifest lists larger than this are refused. */
#define HS_TABLE_MANIFEST_BYTES_MAX ((size_t)1 << 30)
/* metadata-log entries kept (Iceberg's write.metadata.previous-versions-max). */
#define HS_TABLE_METADATA_LOG_MAX 100
/* A table root (resolved) is shorter than this, so that every path built
 * under it fits the 4200-byte buffers of the table layer. */
#define HS_TABLE_ROOT_MAX 4000

/* What a folder's stat says of its entries (hs_table_refresh). */
typedef struct hs_table_dir_stamp {
  uint64_t dev, ino;
  int64_t size, mtime_ns, ctime_ns;
} hs_table_dir_stamp;

struct hs_table {
  /* Absolute real path (symlinks resolved at open and create), no
   * trailing '/'; lexical only while the folder does not exist yet. For a
   * table on object storage (`remote`) the normalised URI
   * ("s3://bucket/prefix/t"), every file below it read and written
   * through store.h. */
  char *root;
  bool remote;
  /* The metadata's "location" when it differs from `root` as text but
   * resolves to it (a table made through a linked parent folder): paths
   * recorded under it are read under `root`. NULL otherwise. */
  char *location_alias;
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
  /* The stamp of metadata_path when loaded, if meta_stamped
   * (hs_table_refresh: a version that is still the latest and unchanged is
   * not parsed again). */
  hs_fs_stamp meta_stamp;
  bool meta_stamped;
  /* Freshness (table.c, README "Finding the latest version"): the
   * metadata folder as the last full check found it (meta_dir_settled:
   * its last change was long enough before that check for any later
   * change to show as another stamp), so that a refresh of an unchanged
   * table is two stats; fresh_at_ns (CLOCK_MONOTONIC) when the handle was
   * last found current, and staleness_ns (hs_table_set_staleness_ms) the
   * age within which hs_table_refresh checks nothing. */
  hs_table_dir_stamp meta_dir;
  bool meta_dir_settled;
  int64_t fresh_at_ns, staleness_ns;
  /* One cache of an upper layer hung on the handle (the vector search's
   * prepared plan, src/query/vector_search_prep.c): owned, freed with
   * aux_free by hs_table_free. It keys itself on the metadata it was made
   * from. */
  void *aux;
  void (*aux_free)(void *aux);
  /* A table whose current-metadata pointer a catalog holds (src/catalog/):
   * loads (open, refresh, a commit's reload) and the publish step of every
   * commit (txn.c) go through `catalog`, not the folder's vN files. NULL:
   * the folder's own protocol. `catalog_ctx` is released with the table. */
  const struct hs_table_catalog_ops *catalog;
  void *catalog_ctx;
};

/* ------------------------------------------------------------------
 * Catalog tables: the pluggable publish step. A commit builds the next
 * metadata `m` from the loaded `old` exactly as for a folder (manifests,
 * manifest list, snapshot, edits); a folder table then publishes
 * v{N+1}.metadata.json exclusively, a catalog table hands (old, m) to its
 * catalog, which sends the difference as the catalog's updates and
 * requirements (Iceberg REST: POST .../tables/{t}).
 */
typedef struct hs_table_catalog_ops {
  /* Load the catalog's current metadata into t (hs_table_metadata_adopt):
   * hs_table_load_latest (a transaction's begin and reloads). */
  hs_status (*load)(hs_table *t, hs_error *err);
  /* hs_table_refresh: may keep what t holds when the catalog allows some
   * staleness (NULL: load). Commits never depend on it: a stale base is a
   * refused commit, reloaded and retried. */
  hs_status (*refresh)(hs_table *t, hs_error *err);
  /* Commit `m`, built on `old` (t's loaded metadata). *won false (HS_OK):
   * the catalog refused because the table changed meanwhile (REST: 409):
   * the transaction reloads and retries as after a lost link on disk. On a
   * win t holds the committed metadata. An error with *won true: the
   * outcome is unknown (the catalog may have applied it): the commit fails
   * but reports itself committed to its caller, so that nothing the
   * version names is removed. */
  hs_status (*commit)(hs_table *t, const hs_iceberg_metadata *old, const hs_iceberg_metadata *m,
                      bool *won, hs_error *err);
  void (*release)(void *ctx); /* may be NULL */
} hs_table_catalog_ops;

/* How hs_table_open / hs_table_create reach a catalog for URIs naming a
 * catalog table ("rest://host:port#ns.table"): set by the catalog layer
 * when a catalog is connected (the table layer cannot call up into it). */
typedef struct hs_table_catalog_hooks {
  hs_status (*open)(const char *uri, hs_table **out, hs_error *err);
  hs_status (*create)(const char *uri, const struct ArrowSchema *schema,
                      const hs_table_options *opts, hs_table **out, hs_error *err);
} hs_table_catalog_hooks;
void hs_table_set_catalog_hooks(const hs_table_catalog_hooks *hooks);
/* "rest://..." or "rests://...". */
bool hs_table_is_catalog_uri(const char *uri);

/* hs_table_refresh with reads to make in the freshness check's wave: on
 * an object store, where the check is one LIST of v(N+1), the prefetch of
 * pf[0, n_pf) (at most pf_max bytes fetched; store.h
 * hs_store_list_prefixes_wave) rides in that LIST's round trip, so a
 * query that knows what the loaded version will make it read pays no
 * round trip of its own for them. Wasted bytes, never wrong ones, when a
 * newer version is found (objects are written once, read by ETag). Other
 * refreshes (local, a catalog, within the staleness bound) prefetch
 * nothing. */
hs_status hs_table_refresh_prefetch(hs_table *table, const hs_store_prefetch_item *pf, size_t n_pf,
                                    uint64_t pf_max, hs_error *err);

/* Version 1's metadata of a new table (hs_table_create, and a catalog's
 * create): schema from `schema` with field ids, vector dimension
 * properties, the options' properties, spec and sort order, a fresh uuid;
 * no location. Everything in `arena`; `uri` names errors. */
hs_status hs_table_initial_metadata(const char *uri, const struct ArrowSchema *schema,
                                    const hs_table_options *opts, hs_arena *arena,
                                    hs_iceberg_metadata *out, hs_error *err);

/* Files of a table on either store (table.c): local paths through fs.h as
 * always (their messages and durability), store URIs through store.h. */
hs_status hs_table_file_read(const char *path, size_t max_bytes, hs_buf *out, hs_error *err);
/* A new file, durable on return: a local path by hs_fs_write_file after
 * hs_fs_mkdirs(dir) (dir may be NULL), a store URI by hs_store_put. */
hs_status hs_table_file_write(const char *dir, const char *path, const void *data, size_t len,
                              hs_error *err);
/* A probe: an error is never "missing" (hs_fs_probe, hs_store_exists). */
hs_status hs_table_file_exists(const char *path, bool *exists, hs_error *err);
/* A missing file is HS_OK. */
hs_status hs_table_file_remove(const char *path, hs_error *err);
/* The file names directly in folder `dir` (hs_fs_list's contract: an
 * array freed with hs_fs_names_free; a store folder's sub-folders left
 * out, a missing one empty). */
hs_status hs_table_file_list(const char *dir, char ***names_out, size_t *n_out, hs_error *err);

/* "<root>/metadata/v<N>.metadata.json" into `out` (cap >= 4200). */
bool hs_table_version_path(const char *root, int64_t version, char *out, size_t cap);

/* Gzip-compressed metadata (table.c). A version's file is any one of
 * "vN.metadata.json", "vN.gz.metadata.json" (Iceberg Java with
 * write.metadata.compression-codec=gzip) and "vN.metadata.json.gz" (its
 * older name). */
/* The N of such a name, else -1. */
int64_t hs_table_version_of_name(const char *name);
/* Which file holds version `version` of t: *exists and its path in `out`
 * (cap >= 4200; the plain name when none exists). Two names for one
 * version is HS_ERR_CORRUPT naming both; a probe error (a name too long,
 * a file where a folder should be) is returned, never "missing". */
hs_status hs_table_version_find(const hs_table *t, int64_t version, char *out, size_t cap,
                                bool *exists, hs_error *err);
/* Whether `m` asks for gzip metadata (write.metadata.compression-codec). */
bool hs_table_metadata_gzip(const hs_iceberg_metadata *m);
/* Serialize `m` as version t->version + 1 into `out` (appended) and its
 * final name into `path` (cap >= 4200): gzip ("v{N+1}.gz.metadata.json")
 * when t's loaded version (the base every racing writer shares) asks for
 * it, else plain JSON. Every publish of a version goes through this. */
hs_status hs_table_next_version(const hs_table *t, const hs_iceberg_metadata *m, hs_buf *out,
                                char *path, size_t cap, hs_error *err);
/* The metadata JSON text of the file at `path`, inflated when it is gzip
 * (bounded by HS_TABLE_METADATA_BYTES_MAX before and after inflating: a
 * decompression bomb is HS_ERR_CORRUPT naming the file). */
hs_status hs_table_metadata_bytes(const char *path, hs_buf *out, hs_error *err);

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

/* I6 on disk: the resolved path `path` (under t->root, as from
 * hs_table_resolve_path) may pass through symbolic links only if where it
 * leads is inside the table root. Costs an lstat per component below the
 * root (a realpath only when one is a link), so it runs where a file list
 * is planned, not per query. A link that escapes is HS_ERR_CORRUPT naming
 * the file and its target; a dangling link HS_ERR_NOT_FOUND; a missing
 * file is left to its open. `what` names the referencing place. */
hs_status hs_table_check_links(const hs_table *t, const char *path, const char *what,
                               hs_error *err);

/* Read a whole manifest-list or manifest file under the table root
 * (resolved and link-checked). */
hs_status hs_table_read_avro(const hs_table *t, const char *recorded, const char *what, hs_buf *out,
                             hs_error *err);

/* The current snapshot, or NULL when the table has none. */
const hs_iceberg_snapshot *hs_table_current(const hs_table *t);

/* Test hook: when the environment variable HS_TABLE_CRASH_STEP is N > 0,
 * the N-th call in this process raises SIGKILL. Called at each step of the
 * commit path so that tests can kill a writer at every point. */
void hs_table_crash_point(void);

/* ------------------------------------------------------------------
 * Partitioning and sorting on write (partition.c, sort.c).
 */

/* A metadata-only change: `m` starts as a shallow copy of `old` (arrays
 * shared with it); the callback replaces what it changes with arrays in
 * `a` and sets *changed (false: nothing to commit). */
typedef hs_status (*hs_table_metadata_edit)(const hs_iceberg_metadata *old, hs_iceberg_metadata *m,
                                            hs_arena *a, void *ctx, bool *changed, hs_error *err);

/* Wall-clock milliseconds since the epoch (Iceberg's timestamps). */
int64_t hs_table_wall_ms(void);
/* Sleep before retry `attempt` (>= 1) of a commit that lost a race: a
 * random 0.1 ms .. min(2^attempt, 50) ms, so racing writers spread out. */
void hs_table_backoff(int attempt);

/* Commit `edit` applied to the latest version as v{N+1} through the
 * exclusive publish (retried on lost races, the edit re-applied to the
 * winner's version); last-updated-ms and the metadata log are maintained
 * here. `what` names the operation in errors. */
hs_status hs_table_commit_metadata(hs_table *t, const char *what, hs_table_metadata_edit edit,
                                   void *ctx, hs_error *err);

/* The edits of hs_table_set_partition_spec (partition.c) and
 * hs_table_set_sort_order (sort.c) applied to `old` into `m` without a
 * commit (hs_table_create: the spec and order of version 1). */
hs_status hs_table_spec_edit_apply(const hs_iceberg_metadata *old, hs_iceberg_metadata *m,
                                   hs_arena *a, const hs_table_partition_field *fields, size_t n,
                                   hs_error *err);
hs_status hs_table_order_edit_apply(const hs_iceberg_metadata *old, hs_iceberg_metadata *m,
                                    hs_arena *a, const char *const *columns, const int *ascending,
                                    const int *nulls_first, size_t n, hs_error *err);

/* `list` (a metadata `statistics` or `partition-statistics` JSON array, may
 * be NULL) without the entries of the snapshots expired[0..n), into *out
 * (`list` itself when none goes; else text in `a`). stats_list.c. */
hs_status hs_table_statistics_drop(hs_iceberg_json list, const int64_t *expired, size_t n,
                                   hs_arena *a, hs_iceberg_json *out, hs_error *err);

/* One row of one of several batches. */
typedef struct hs_table_row {
  int64_t row;    /* logical row of the top-level batch (its offset not applied) */
  uint32_t batch; /* index into the batch array */
} hs_table_row;

/* A top-level primitive column of the batches being written, bound to
 * its Iceberg type for reading values. */
typedef struct hs_table_column {
  size_t index; /* child index in the top-level struct */
  hs_arrow_type at;
  const hs_iceberg_type *it;
  const char *name;
} hs_table_column;

/* Bind Iceberg field `field_id` (a top-level primitive field of `schema`)
 * to child `index` of `arrow` (the stamped write schema, same order). */
hs_status hs_table_column_bind(const struct ArrowSchema *arrow, const hs_iceberg_schema *schema,
                               int32_t field_id, hs_table_column *out, hs_error *err);
/* Row `row` of top-level batch `batch` as an Iceberg value of c->it
 * (bytes borrowed from the batch; times in the Iceberg unit). */
void hs_table_column_value(const hs_table_column *c, const struct ArrowArray *batch, int64_t row,
                           hs_iceberg_value *out);

typedef struct hs_table_sort_key {
  hs_table_column col;
  bool descending, nulls_first;
} hs_table_sort_key;

/* Keys of sort order `order` over `arrow`/`schema` (arena array). Only
 * identity transforms of top-level primitive columns are applied;
 * anything else is HS_ERR_UNSUPPORTED naming the field. */
hs_status hs_table_sort_keys(const hs_iceberg_sort_order *order, const struct ArrowSchema *arrow,
                             const hs_iceberg_schema *schema, hs_arena *arena,
                             hs_table_sort_key **out, hs_error *err);
/* Stable sort of `rows` by `keys` (Iceberg order: nulls per key, floats
 * -NaN < -inf < ... < -0 < 0 < ... < inf < NaN, strings by UTF-8 bytes). */
hs_status hs_table_sort_rows(const hs_table_sort_key *keys, size_t n_keys,
                             const struct ArrowArray *batches, hs_table_row *rows, size_t n,
                             hs_error *err);
/* Gather `rows` (in order) of `batches` (all of `schema`) into one owned
 * struct batch *out. Dictionary-encoded and union columns are
 * HS_ERR_UNSUPPORTED. */
hs_status hs_table_take(const struct ArrowSchema *schema, const struct ArrowArray *batches,
                        const hs_table_row *rows, size_t n, struct ArrowArray *out, hs_error *err);

/* The append's schema check (commit.c): `in` (an input stream's schema)
 * must fit table schema `ts` (names, types, nullability, vector
 * dimensions; errors say what differs and how to fix it); *stamped is a
 * copy of `in` with every field's Iceberg field id, for the writers. */
hs_status hs_table_append_schema(const hs_table *t, const hs_iceberg_schema *ts,
                                 const struct ArrowSchema *in, struct ArrowSchema *stamped,
                                 hs_error *err);

/* The partition tuple (arena array of spec->n_fields; NULL for an
 * unpartitioned spec) of the data file at `path` written elsewhere: its
 * rows' source columns (top-level, matched by field id; absent: NULL) are
 * read and transformed, and every row must give the same tuple, else
 * HS_ERR_INVALID_ARG naming the first row that differs. A file without
 * rows is HS_ERR_INVALID_ARG. */
hs_status hs_table_partition_of_file(const hs_iceberg_schema *schema,
                                     const hs_iceberg_partition_spec *spec, const char *path,
                                     hs_arena *arena, hs_iceberg_value **tuple_out, hs_error *err);

/* Write every batch of `stream` (consumed, not released) as data files
 * under <root>/data: one file per partition of `spec` (may have no
 * fields), rows stably sorted by `order` (NULL or no fields: input order)
 * within each file. *files (arena array of *n_files) carry metrics,
 * partition tuples and sort_order_id; on failure every file written is
 * removed. `stamped` is the write schema with field ids. */
hs_status hs_table_write_clustered(const hs_table *t, const hs_iceberg_schema *schema,
                                   const hs_iceberg_partition_spec *spec,
                                   const hs_iceberg_sort_order *order,
                                   const struct ArrowSchema *stamped,
                                   struct ArrowArrayStream *stream, hs_arena *arena,
                                   hs_iceberg_data_file **files, size_t *n_files, hs_error *err);
/* The same, each partition's rows cut into files of at most
 * `rows_per_file` consecutive rows (0: no limit), as compaction splits
 * files larger than its target. */
hs_status hs_table_write_clustered_split(const hs_table *t, const hs_iceberg_schema *schema,
                                         const hs_iceberg_partition_spec *spec,
                                         const hs_iceberg_sort_order *order,
                                         const struct ArrowSchema *stamped,
                                         struct ArrowArrayStream *stream, int64_t rows_per_file,
                                         hs_arena *arena, hs_iceberg_data_file **files_out,
                                         size_t *n_files_out, hs_error *err);

/* ------------------------------------------------------------------
 * The index stream (stream.c): per metadata version of a table on object
 * storage, `<metadata file>.hsis` packs what a cold query reads after the
 * metadata (manifest list, manifests, registry, data and index footers,
 * small index files), so that chain is one GET. Optional everywhere: a
 * missing, stale or damaged stream only costs the reads it would save.
 */

/* `<t->metadata_path>.hsis`; false when it does not fit or t has none. */
bool hs_table_stream_path(const hs_table *t, char *out, size_t cap);
/* Whether a file name is a stream's ("....hsis"). */
bool hs_table_stream_name(const char *name);
/* Write the stream of t's loaded (just published) version: a table on
 * object storage with a snapshot and an index registry; anything else
 * writes nothing. *n_segments (may be NULL): the ranges it holds. */
hs_status hs_table_stream_write(hs_table *t, size_t *n_segments, hs_error *err);
/* Once per process and version: GET t's stream and load it into the
 * object cache (never an error: what is not loaded is read as before). */
void hs_table_stream_load(const hs_table *t);
/* Whether t's stream should be fetched (its path into out): once per
 * process and version, so a true answer marks it tried. */
bool hs_table_stream_wanted(const hs_table *t, char *path, size_t cap);
/* Load the bytes a GET of that path gave (`got`: its status). */
void hs_table_stream_take(const hs_table *t, const char *path, const hs_buf *bytes, hs_status got);
/* Whether this process tried a stream of that name (for any version). */
bool hs_table_stream_seen(const char *path);
/* The most bytes a stream GET accepts. */
size_t hs_table_stream_max_bytes(void);
/* Check a stream's bytes (header bound to t's loaded version unless t is
 * NULL; the pack's checksum and bounds) and, with `load`, load its ranges.
 * HS_ERR_CONFLICT: written for another version; HS_ERR_CORRUPT: damaged. */
hs_status hs_table_stream_parse(const hs_table *t, const uint8_t *data, size_t len,
                                const char *what, bool load, size_t *n_segments, hs_error *err);
/* What this process's stream loads did (hs_table_stream_load). */
typedef struct hs_table_stream_stats {
  int64_t loaded, missing, refused; /* streams */
  int64_t segments, bytes;          /* of those loaded */
  char last_refusal[256];
} hs_table_stream_stats;
void hs_table_stream_stats_get(hs_table_stream_stats *out, bool reset);

/* ------------------------------------------------------------------
 * Scan planning (plan.c): the live data files of a snapshot with their
 * manifest metadata, for readers that prune files before opening them.
 */

typedef struct hs_table_plan_file {
  const char *path;                      /* resolved local path (plan arena) */
  const hs_iceberg_data_file *data_file; /* metrics, partition tuple (plan arena) */
  int32_t spec_id;                       /* partition spec of its manifest */
  int64_t data_seq;                      /* data sequence number (inherited; v1: 0) */
  /* The file's live-row set (plan_deletes.c): positions deleted by the
   * snapshot's delete files that apply to it (deletion vector, position
   * deletes, equality deletes, by the spec's sequence-number and partition
   * rules), clipped to [0, record_count). NULL: no row deleted. Owned by
   * the plan (or the cached plan lent), read-only. */
  const roaring_bitmap_t *deleted;
  int64_t n_deleted;       /* cardinality of `deleted` */
  uint32_t n_delete_files; /* delete files (and vectors) applied to it */
  /* The deletion vector applied to it (v3): its Puffin file as recorded,
   * or NULL. A writer replacing the vector removes that file's entries. */
  const char *dv_file;
  /* The position delete files (not vectors) applied to it, as recorded in
   * their manifest entries (plan arena), in manifest order: a writer that
   * merges them into one removes these (src/query/rowdelta.c). */
  const char *const *pos_files;
  uint32_t n_pos_files;
} hs_table_plan_file;

typedef struct hs_table_plan {
  hs_arena arena;            /* owns everything below except `files` and `bitmaps` */
  int64_t snapshot_id;       /* the planned snapshot; -1 when the table has none */
  hs_table_plan_file *files; /* hs_malloc'd array, manifest order */
  size_t n_files;
  int64_t n_manifests;        /* data manifests read (for a cached plan: when it was made) */
  int64_t n_delete_manifests; /* delete manifests read */
  int64_t n_delete_files;     /* live delete files (and vectors) in the snapshot */
  int64_t n_deleted;          /* rows deleted, over all files */
  roaring_bitmap_t **bitmaps; /* the files' `deleted` sets (hs_malloc'd array; owner only) */
  size_t n_bitmaps;
  struct hs_plan_shared *shared; /* a cached plan's owner, lent: files point into it */
  /* The parsed manifests its files and entries point into (plan_manifests.h:
   * shared by plans, one reference each; the owner's only, like bitmaps). */
  struct hs_plan_manifest **held;
  size_t n_held;
} hs_table_plan;

/* The live (not deleted) row positions of a planned file, increasing, as a
 * hs_malloc'd array (*rows NULL when none live). */
hs_status hs_table_plan_live_rows(const hs_table_plan_file *f, int64_t **rows, size_t *n,
                                  hs_error *err);

/* Whether two planned files have the same partition (spec id and values;
 * floats by their bits, NULL equal to NULL: the spec's scope rule). */
bool hs_table_plan_same_partition(const hs_table_plan_file *a, const hs_table_plan_file *b);

/* The live rows of a planned file: record_count - n_deleted. */
static inline int64_t hs_table_plan_file_live(const hs_table_plan_file *f) {
  return f->data_file->record_count - f->n_deleted;
}

/* Plan snapshot `snapshot_id` (-1: current; a table without snapshots
 * gives no files). *out is fully overwritten and independent of `t`
 * afterwards; free with hs_table_plan_free (also on failure: safe).
 * Plans are cached per process by their manifest list (a local file,
 * keyed by path, size and mtime: written once, never changed), so a later
 * query of the same snapshot reads no manifest; a cached plan is shared
 * read-only (`shared`), the caller's arena starting empty. */
hs_status hs_table_plan_files(const hs_table *t, int64_t snapshot_id, hs_table_plan *out,
                              hs_error *err);
void hs_table_plan_free(hs_table_plan *p); /* accepts NULL */

/* Apply the table's Parquet write properties to `po` (after
 * hs_parquet_write_options_init): "write.parquet.row-group-limit" (rows per
 * row group, Iceberg's name). Unset or malformed values are ignored. */
void hs_table_parquet_options(const hs_table *t, hs_parquet_write_options *po);

/* ------------------------------------------------------------------
 * Index registry (index_registry.c): which scalar index file covers which
 * column of which data file, keyed by data file path and size.
 */

/* ------------------------------------------ index binding (index_bind.c) */
/* `path` relative to t's root when it lies under it (borrowed from path),
 * else path itself. */
const char *hs_table_relative_path(const hs_table *t, const char *path);
/* Size and footer CRC-32C of the data file at `path` (its footer, through
 * the shared open-file cache). */
hs_status hs_table_data_file_footer(const char *path, uint64_t *size, uint32_t *crc, hs_error *err);
/* A data file as opened (md: its footer) against its manifest entry's
 * size and record count (-1: not compared): HS_ERR_CORRUPT naming the
 * file when either differs (another file copied over it, truncation). */
struct hs_pq_file_metadata;
hs_status hs_table_data_file_check(const char *path, const struct hs_pq_file_metadata *md,
                                   int64_t size, int64_t rows, hs_error *err);
/* The binding an index blob of data file `path` records
 * (src/index/binding.h); out->data_file is borrowed from path. */
hs_status hs_table_data_file_binding(const hs_table *t, const char *path, hs_index_binding *out,
                                     hs_error *err);

typedef struct hs_table_index_entry {
  char *data_file; /* resolved local path of the data file */
  int64_t file_size;
  char *index_file; /* absolute path of the Puffin index file (as recorded) */
  char **columns;   /* top-level column names indexed in it: the data file's own names */
  size_t n_columns;
  int32_t *field_ids; /* per column: its Iceberg field id, -1 (or field_ids NULL): not
                         recorded (older registries: the entry answers only under its
                         name, and only where the file's column of that name is the field) */
} hs_table_index_entry;

typedef struct hs_table_index_registry {
  hs_arena arena; /* owns everything, unless `shared` does */
  hs_table_index_entry *entries;
  size_t n_entries;
  size_t *order; /* entry indices sorted by (data_file, file_size, index): lookups bisect */
  void *shared;  /* a parse lent by the per-process cache (read-only), or NULL */
} hs_table_index_registry;

/* Load the registry named by `meta`'s property "hyperstream.index-registry"
 * (meta NULL: t's current metadata). No property: an empty registry. *out
 * is fully overwritten and read-only (it may be a parse shared with other
 * loads of the same, unchanged file); free with hs_table_index_registry_free. */
hs_status hs_table_index_registry_load(const hs_table *t, const hs_iceberg_metadata *meta,
                                       hs_table_index_registry *out, hs_error *err);
void hs_table_index_registry_free(hs_table_index_registry *r); /* accepts NULL */
/* Parse registry JSON bytes (`what` names them in errors); the same checks
 * as hs_table_index_registry_load without the file (fuzz/fuzz_table_json.c). */
hs_status hs_table_index_registry_parse(const char *what, const uint8_t *data, size_t len,
                                        hs_table_index_registry *out, hs_error *err);

/* The index file recorded for `column` of the data file, or NULL. The path
 * is as recorded: resolve it with hs_table_resolve_path before opening. */
const char *hs_table_index_lookup(const hs_table_index_registry *r, const char *data_file,
                                  int64_t file_size, const char *column);

/* The index file recorded for field `field_id` of the data file, or NULL:
 * an entry column recorded with that field id, or one recorded without a
 * field id under the name `column` (older registries). *stored (may be
 * NULL) is the entry's column name: the data file's own name of the
 * column, which the index file's blob carries. A caller must still check
 * that the data file's column of that name is the field, unpromoted. */
const char *hs_table_index_lookup_field(const hs_table_index_registry *r, const char *data_file,
                                        int64_t file_size, const char *column, int32_t field_id,
                                        const char **stored);

/* *out (hs_malloc'd): data file `path`'s own name of top-level field
 * `field_id` (by PARQUET:field_id; a file without field ids, or field_id
 * -1: the column named `name`); NULL when the file has no such column. */
hs_status hs_table_data_file_column(const char *path, int32_t field_id, const char *name,
                                    char **out, hs_error *err);

/* The field id of top-level column `name` in `meta`'s current schema, or -1. */
int32_t hs_table_current_field_id(const hs_iceberg_metadata *meta, const char *name);
/* The name of top-level field `id` in `meta`'s current schema, or NULL. */
const char *hs_table_current_field_name(const hs_iceberg_metadata *meta, int32_t id);

/* Add entries (their index files already durable) in one metadata-only
 * commit: a new registry file, the property pointed at it. */
hs_status hs_table_index_register(hs_table *t, const hs_table_index_entry *add, size_t n,
                                  hs_error *err);

/* ------------------------------------------------------------------
 * Reachable files (orphans.c): what the loaded metadata of a table reaches
 * (metadata files and log, manifest lists, manifests, every entry's file,
 * statistics files, registries, and the index files covering a reached data
 * file), as resolved absolute paths. Used by remove_orphan_files and
 * expire_snapshots (expire.c).
 */
typedef struct hs_table_file_set {
  char **paths; /* hs_malloc'd strings; sorted and unique once `sorted` */
  size_t n, cap;
  bool sorted;
  /* Set before hs_table_reachable(_latest) (kept by them): manifest entries
   * of status DELETED do not reach their file. expire_snapshots' walk after
   * its commit: a file a kept snapshot still reads has a live entry there,
   * so a data or delete file removed by a kept snapshot (compaction, a
   * replaced deletion vector) goes once the snapshots reading it expire. */
  bool live_entries_only;
} hs_table_file_set;

hs_status hs_table_reachable(hs_table *t, hs_table_file_set *out, hs_error *err);
/* hs_table_reachable of the latest metadata: a file that vanished under the
 * walk while a newer version exists (another process expired the snapshot
 * and deleted its files) reloads the latest and walks again, a bounded
 * number of times. Loads the latest first. */
hs_status hs_table_reachable_latest(hs_table *t, hs_table_file_set *out, hs_error *err);
/* Whether v{N+1} exists for the handle's version N. */
bool hs_table_newer_version_exists(const hs_table *t);

/* ------------------------------------------------------------------
 * The publish lock (orphans.c): flock(2) on the table's metadata/ folder.
 * Every publish of a version holds it shared from re-checking the files
 * the version names (hs_table_publish_check) until the link; the orphan
 * sweep holds it exclusively from its last look for newer versions until
 * its last unlink. So a sweep never removes a file between a writer's
 * check and its publish: the writer either sees the file gone and fails,
 * or publishes first and the sweep finds the version. Local folders only
 * (an object store would need a conditional write instead).
 */
hs_status hs_table_publish_lock(const hs_table *t, bool exclusive, int *fd_out, hs_error *err);
void hs_table_publish_unlock(int fd); /* accepts -1 */
/* Every path (absolute, NULL entries skipped) still a file, else
 * HS_ERR_IO naming it: "... was removed before the commit published ...;
 * nothing was committed". `what` names the commit. */
hs_status hs_table_publish_check(const char *what, const char *const *paths, size_t n,
                                 hs_error *err);
bool hs_table_file_set_has(hs_table_file_set *s, const char *path); /* sorts on first use */
void hs_table_file_set_free(hs_table_file_set *s);

/* ------------------------------------------------------------------
 * Index configuration (index_config.c): the table property
 * "hyperstream.indexes", a JSON list of {"column", "kind", "params"}.
 */

typedef struct hs_table_index_conf {
  char *column;        /* the current schema's name of the field */
  int32_t field_id;    /* the configured field; -1: none in the current schema */
  char *kind;          /* lower case, one of the kinds index_config.c knows */
  char *params;        /* compact JSON object text ("{}" when none) */
  int layout;          /* hs_sidx_layout of a scalar kind; -1 for vector kinds */
  uint32_t block_rows; /* SORTED block size from params ("block_rows"); 0: default */
  bool lossy;          /* SORTED: min/max + bitmap blocks (params "lossy": true) */
} hs_table_index_conf;

typedef struct hs_table_index_config {
  hs_arena arena; /* owns everything */
  hs_table_index_conf *entries;
  size_t n_entries;
} hs_table_index_config;

/* Parse `meta`'s configuration (no property: empty). Malformed JSON is
 * HS_ERR_CORRUPT naming the property. Free with hs_table_index_config_free. */
hs_status hs_table_index_config_load(const hs_iceberg_metadata *meta, hs_table_index_config *out,
                                     hs_error *err);
void hs_table_index_config_free(hs_table_index_config *c); /* accepts NULL */
const hs_table_index_conf *hs_table_index_config_find(const hs_table_index_config *c,
                                                      const char *column);

/* One column to index in a build (index_registry.c). */
/* hs_table_append_keep's result (commit.c). */
struct hs_table_appended {
  char *data_path;
  int64_t file_size, records;
  struct ArrowSchema schema; /* the input stream's (field names, Arrow types) */
  struct ArrowArray *batches;
  size_t n_batches, cap;
};

typedef struct hs_table_index_spec {
  const char *column;  /* current name */
  int32_t field_id;    /* its field id in the current schema; -1: unknown (by name) */
  int layout;          /* hs_sidx_layout */
  uint32_t block_rows; /* 0: default */
  bool lossy;          /* SORTED: lossy blocks */
  const char *kind;    /* configured kind, or NULL (unconfigured build) */
} hs_table_index_spec;

/* Build the missing indexes of `specs` for the current snapshot's files
 * (in parallel over files), then register them in one commit. With
 * `configured`, a column whose configuration at commit time no longer has
 * the spec's kind (dropped or changed meanwhile) is not registered.
 * Files that fail are skipped (their error returned after the others are
 * registered). `progress` may be NULL. */
hs_status hs_table_index_build(hs_table *t, const hs_table_index_spec *specs, size_t n,
                               bool configured, uint32_t threads,
                               hs_table_index_progress_fn progress, void *progress_ctx,
                               int64_t *files_built, hs_error *err);

/* hs_table_index_build over the files of `appended` only (no plan), built
 * from their kept batches where possible (hs_table_index_build_options). */
hs_status hs_table_index_build_appended(hs_table *t, const hs_table_index_spec *specs, size_t n,
                                        bool configured, uint32_t threads,
                                        const hs_table_appended *const *appended, size_t n_appended,
                                        int64_t *files_built, hs_error *err);

/* Metadata edit helper: `m`'s registry becomes a new file holding the
 * registry of `old` with `drop_column` (NULL: none) removed from every
 * entry (entries left without columns go), plus `add`: columns recorded
 * with field id `drop_field_id`, and columns recorded without a field id
 * under the name `drop_column`. *changed tells whether the registry changed. */
hs_status hs_table_index_registry_rewrite(const hs_table *t, const hs_iceberg_metadata *old,
                                          hs_iceberg_metadata *m, hs_arena *a,
                                          const char *drop_column, int32_t drop_field_id,
                                          const hs_table_index_entry *add, size_t n_add,
                                          bool *changed, hs_error *err);

/* A three-way merge of index registries, for a commit that replaced the
 * registry a concurrent writer had just committed (catalogs whose
 * property updates are last-writer-wins): `base` the registry file our
 * change began from, `theirs` the one our commit replaced (the recorded
 * property values; NULL: none), ours the one `m` names. Ours keeps its
 * entries less those theirs removed from base (or with theirs' columns
 * where theirs changed them), plus those theirs added that ours lacks; the
 * result is a new registry file named in m (*changed false: ours already
 * is the merge, nothing written). */
hs_status hs_table_index_registry_merge3(const hs_table *t, const char *base, const char *theirs,
                                         hs_iceberg_metadata *m, hs_arena *a, bool *changed,
                                         hs_error *err);

/* Set (value != NULL) or remove property `key` of `m` (a copy of its
 * properties in `a`). */
hs_status hs_table_set_property(hs_iceberg_metadata *m, hs_arena *a, const char *key,
                                const char *value, hs_error *err);

#endif /* HS_TABLE_H */
