/*
 * vector_search.h — internals of hs_table_vector_search (vector_search.c,
 * vector_search_topk.c): the bounded top-k heap every query keeps and the
 * global order of hits.
 *
 * A hit is (distance, file ordinal, row position). Its order is total:
 * distance ascending, then the data file's ordinal in the snapshot's plan
 * (manifest order), then the row position in that file, so ties between
 * duplicate vectors resolve the same way on every run and every front end.
 * Distances are never NaN here (such rows do not match).
 */
#ifndef HS_QUERY_VECTOR_SEARCH_H
#define HS_QUERY_VECTOR_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/common.h"
#include "../index/vector/vidx.h"
#include "../table/table.h"

typedef struct hs_vs_hit {
  float distance;
  uint32_t file; /* ordinal of the data file in the snapshot's plan */
  int64_t row;   /* file-wide row position */
} hs_vs_hit;

/* a < b in the global order. */
static inline bool hs_vs_hit_less(const hs_vs_hit *a, const hs_vs_hit *b) {
  if (a->distance != b->distance) return a->distance < b->distance;
  if (a->file != b->file) return a->file < b->file;
  return a->row < b->row;
}

/* The k smallest hits pushed so far: a max-heap of at most k hits, its
 * array grown on demand (memory: min(k, pushed) hits). Owned; free with
 * hs_vs_topk_free. */
typedef struct hs_vs_topk {
  hs_vs_hit *h;
  size_t n, cap;
  size_t k;
} hs_vs_topk;

void hs_vs_topk_init(hs_vs_topk *t, size_t k);
void hs_vs_topk_free(hs_vs_topk *t);
/* True once k hits are kept (a new hit must then beat the worst, h[0]). */
static inline bool hs_vs_topk_full(const hs_vs_topk *t) {
  return t->n == t->k;
}
/* Offer a hit; false only when the array cannot grow (out of memory). */
bool hs_vs_topk_push(hs_vs_topk *t, const hs_vs_hit *hit);
/* Sort the kept hits ascending in place (the heap is consumed: t->h[0..n)
 * becomes the answer). */
void hs_vs_topk_sort(hs_vs_topk *t);

/* The vector column of a search. */
typedef struct hs_vs_column {
  const char *name;
  bool fixed;    /* fixed_size_list; else list / large_list */
  int64_t width; /* fixed: the list size */
  bool large;    /* large_list: int64 offsets */
  bool f64;      /* float64 values (pandas' lists), scored as float32 */
} hs_vs_column;

/* Paths of the data files that gave hits, by plan index (owned). */
typedef struct hs_vs_files {
  char **paths;
  size_t n;
} hs_vs_files;

/* Record the path of plan file `file` once (copied); *searched (may be
 * NULL) counts the files recorded. */
hs_status hs_vs_files_set(hs_vs_files *f, size_t file, const char *path, int64_t *searched,
                          hs_error *err);
void hs_vs_files_free(hs_vs_files *f);

/* A winner of a search: row `row` of plan file `file`. */
typedef struct hs_vs_key {
  uint32_t file;
  int64_t row;
} hs_vs_key;

/* Before the winners' rows keys[0..n) (sorted by file, then row) are
 * fetched with projection `proj` (vector_search_prefetch.c): on an object
 * store, the pages they lie in, in two parallel waves (offset indexes,
 * then pages and dictionaries) into the object cache. Best effort. */
struct hs_colmap_ctx;
struct hs_vs_prep;
void hs_vs_prefetch_rows(const hs_vs_files *files, struct hs_vs_prep *prep,
                         const struct hs_colmap_ctx *ctx, const struct ArrowSchema *proj,
                         const hs_vs_key *keys, size_t n);

/* ------------------------------------------------------------------
 * The data files searched through their vector index
 * (vector_search_index.c). Arrays are indexed by the file's place in the
 * snapshot's plan (the order ties are broken by).
 */
typedef struct hs_vs_indexed {
  size_t n;                   /* files in the plan */
  hs_vidx **vx;               /* usable index of each file, or NULL: scored exactly */
  char **paths;               /* data file paths */
  char **ipaths;              /* their index files (where vx[i]) */
  roaring_bitmap_t **allowed; /* with a filter: the file's matching rows */
  bool *cached;               /* vx[i] is shared from the process's open-index cache */
  bool filtered;              /* allowed[] were computed */
  size_t n_indexed;
  int64_t n_rejected; /* registered indexes not used: foreign, corrupt or missing */
  char why[320];      /* the first one's reason */
  /* The table's index registry, loaded once per query by hs_vs_indexed_open
   * (have_reg: it loaded) and handed to the query's scans (hs_scan_hooks.reg). */
  hs_table_index_registry reg;
  bool have_reg;
} hs_vs_indexed;

/* Open the registered vector index of `column` of each data file of
 * `plan` (the snapshot's; indexes of `out` follow it); keep those whose metric and dimension match
 * (others, and any that fail to open, are left to the exact path: never an error). Indexes are
 * registered by name: once the table has had more than one schema, an index is kept only where
 * the data file's column of that name is field `field_id` (-1: no check) of the read schema, so
 * a rename or a new column reusing the name never gets another column's index. `filtered`: a
 * filter follows (hs_vs_indexed_allow); on an object store the scalar index files the registry
 * names for the plan's files are fetched in the vector indexes' first wave. */
hs_status hs_vs_indexed_open(hs_table *t, const hs_table_plan *plan, const char *column,
                             int32_t field_id, hs_metric metric, size_t dim, bool filtered,
                             hs_vs_indexed *out, hs_error *err);
/* With a filter: the matching rows of every indexed file (a filtered scan
 * that reads only the filter's columns; pruning as usual). Adds the rows
 * that matched to *rows_matched. */
hs_status hs_vs_indexed_allow(hs_table *t, const hs_table_plan *plan, const char *filter,
                              hs_vs_indexed *ix, int64_t *rows_matched, hs_error *err);
/* Search every indexed file with rows left for each of `nq` queries,
 * pushing hits into topk[q]; *files_searched counts the files. */
hs_status hs_vs_indexed_search(const hs_vs_indexed *ix, const float *queries, size_t nq, size_t dim,
                               size_t k, uint32_t ef_search, uint32_t nprobe, uint32_t threads,
                               hs_vs_topk *topk, int64_t *files_searched, hs_error *err);
void hs_vs_indexed_free(hs_vs_indexed *ix); /* accepts a zeroed one */

/* ------------------------------------------------------------------
 * Exact scoring (vector_search_score.c) of the files of `plan` without a
 * usable index in `ix`, inside o->filter: hits go to topk[0..nq), the
 * paths of the files read to `files`; stats: files_planned, files_searched,
 * rows_matched (added), rows_scored. */
hs_status hs_vs_score_exact(hs_table *table, const hs_vector_search_options *o,
                            const hs_vs_column *col, hs_metric metric, const float *queries,
                            size_t nq, size_t dim, const hs_vs_indexed *ix,
                            const hs_table_plan *plan, hs_vs_topk *topk, hs_vs_files *files,
                            hs_vector_search_stats *stats, hs_error *err);

/* ------------------------------------------------------------------
 * The prepared search of one metadata version (vector_search_prep.c): the
 * plan of snapshot `snapshot_id` (-1: current), the opened vector indexes
 * of `column` (none when `exact`), one reader per fetched data file, kept
 * on the table (hs_table.aux) while its metadata names the same manifest
 * list, index registry and schemas, so a search of an unchanged version
 * stats no file. Borrowed: hs_vs_prep_release. The indexed view is shared:
 * a search copies it (hs_vs_indexed by value) and replaces only `allowed`.
 * With `paths` (a split's data files, hs_table_vector_search_split) the
 * plan is restricted to them and the preparation is this call's own.
 * `filtered` (the search has a filter) only changes what a preparation
 * fetches first (hs_vs_indexed_open). */
typedef struct hs_vs_prep hs_vs_prep;
hs_status hs_vs_prep_acquire(hs_table *t, int64_t snapshot_id, const char *column, int32_t field_id,
                             hs_metric metric, size_t dim, bool exact, bool filtered,
                             const char *const *paths, size_t n_paths, hs_vs_prep **out,
                             hs_error *err);
const hs_table_plan *hs_vs_prep_plan(const hs_vs_prep *p);
/* Whether t holds a preparation of its current snapshot for `column`
 * (a search of it opens nothing). */
bool hs_vs_prep_current(hs_table *t, const char *column);
/* What a preparation of the current snapshot reads first (its manifest
 * list and the index registry, or the index stream) in one wave. */
void hs_vs_prep_prefetch_current(hs_table *t);
const hs_vs_indexed *hs_vs_prep_indexed(const hs_vs_prep *p);
/* A reader of plan file `file` at `path` (the caller's): the data file is
 * opened once per prepared search, later readers share it. A `p` of NULL,
 * or a path the plan does not give that file, opens it as
 * hs_parquet_reader_open_shared does. */
hs_status hs_vs_prep_reader(hs_vs_prep *p, size_t file, const char *path, hs_parquet_reader **out,
                            hs_error *err);
void hs_vs_prep_release(hs_vs_prep *p);
/* The column map (schema_map.h) of plan file `file` at `path` onto the
 * projection named by `key` (its column names), as the first file of a
 * fetch maps it (output types not fixed), when the prepared search keeps
 * one: valid while `p` is borrowed, read only (never applied: only maps
 * that need no adaptation are kept). NULL: build it. */
struct hs_colmap;
const struct hs_colmap *hs_vs_prep_map_get(hs_vs_prep *p, size_t file, const char *path,
                                           const char *key);
/* Keep *map (built as above) for the next fetches: moved into the
 * prepared search (*map zeroed) and returned when it needs no adaptation
 * (identity) and a slot is free; else NULL and *map stays the caller's. */
const struct hs_colmap *hs_vs_prep_map_put(hs_vs_prep *p, size_t file, const char *path,
                                           const char *key, struct hs_colmap *map);
/* The allowed rows of the prepared indexed files under filter text
 * `filter`, when kept: copies into allowed[0..n) (NULL slots stay NULL),
 * their matching-row count added to *rows_matched; false when not kept. */
bool hs_vs_prep_allowed_get(hs_vs_prep *p, const char *filter, roaring_bitmap_t **allowed, size_t n,
                            int64_t *rows_matched);
/* Keep copies of allowed[0..n) for `filter` (bounded: a few filters, 64 MiB). */
void hs_vs_prep_allowed_put(hs_vs_prep *p, const char *filter, roaring_bitmap_t *const *allowed,
                            size_t n, int64_t rows_matched);

#endif /* HS_QUERY_VECTOR_SEARCH_H */
