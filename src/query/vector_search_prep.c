/*
 * vector_search_prep.c — what a vector search prepares from one metadata
 * version, kept on the table handle and reused by the next searches of that
 * version (vector_search.h, hs_vs_prep_*).
 *
 * A search plans the snapshot's files, loads the index registry, opens each
 * file's vector index (checking its binding to the data file) and opens the
 * data files it fetches rows from. Each step goes through a process-wide
 * cache keyed by the file's stamp, so each costs a stat per file and query
 * even when nothing changed. All those files are written once under fresh
 * names (Iceberg's rule), so while the handle's metadata names the same
 * snapshot manifest list, registry and schemas, their results are the same:
 * the prepared search holds them (plan, registry, opened indexes with their
 * cache references, one reader per fetched data file) and a search of the
 * same version does no stat at all. A new version (any commit) or another
 * column, metric, dimension or field prepares afresh, and the caches check
 * every stamp again. The allowed rows a filter gives the indexed files are a
 * function of the version and the filter's text too: the last few are kept
 * (copied in and out, so a search owns its sets), so a search repeating a
 * filter does not scan for it again. Ownership: the table owns one prepared search
 * (hs_table.aux); searches borrow it by reference count, so the one a newer
 * version replaced lives until its last borrower releases it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../index/binding.h"
#include "../io/store.h"
#include "../parquet/parquet.h"
#include "../table/schema_map.h"
#include "scan.h"
#include "vector_search.h"

#define REGISTRY_PROPERTY "hyperstream.index-registry"
/* Filters whose allowed rows a prepared search keeps, and their bytes. */
#define PREP_ALLOWS 8
#define PREP_ALLOW_BYTES ((size_t)64 << 20)
/* Projections whose column map a prepared search keeps per data file. */
#define PREP_MAPS 4

/* The map of one file's columns onto one projection (hs_vs_prep_map_*). */
struct prep_map {
  char *key; /* NULL: free */
  hs_colmap map;
};

struct hs_vs_prep {
  int refs; /* borrowers, + 1 while the table holds it (prep_mu) */
  /* The key: what the plan and indexes were made from. */
  char *manifest_list, *registry, *column;
  int64_t snapshot_id;
  int32_t schema_id, field_id;
  size_t n_schemas, dim;
  hs_metric metric;
  bool exact;
  hs_table_plan plan;
  hs_vs_indexed ix;
  pthread_mutex_t mu;          /* guards readers and allows */
  hs_parquet_reader **readers; /* plan.n_files, opened on first fetch */
  struct prep_map **maps;      /* plan.n_files, each PREP_MAPS slots made on first use */
  /* The allowed rows of the indexed files under recent filters (by text),
   * least recently used replaced; at most PREP_ALLOW_BYTES in all. */
  struct prep_allow {
    char *filter;
    roaring_bitmap_t **allowed; /* ix.n, NULL where not indexed */
    int64_t rows_matched;
    size_t bytes;
    uint64_t used_at;
  } allows[PREP_ALLOWS];
  uint64_t tick;
};

static pthread_mutex_t prep_mu = PTHREAD_MUTEX_INITIALIZER;

static void allow_clear(struct prep_allow *a, size_t n) {
  for (size_t i = 0; a->allowed != NULL && i < n; i++)
    if (a->allowed[i] != NULL) roaring_bitmap_free(a->allowed[i]);
  hs_free(a->allowed);
  hs_free(a->filter);
  memset(a, 0, sizeof *a);
}

static void prep_free(hs_vs_prep *p) {
  if (p == NULL) return;
  for (int i = 0; i < PREP_ALLOWS; i++) allow_clear(&p->allows[i], p->ix.n);
  for (size_t i = 0; p->readers != NULL && i < p->plan.n_files; i++)
    hs_parquet_reader_free(p->readers[i]);
  hs_free(p->readers);
  for (size_t i = 0; p->maps != NULL && i < p->plan.n_files; i++) {
    for (int j = 0; p->maps[i] != NULL && j < PREP_MAPS; j++) {
      hs_free(p->maps[i][j].key);
      hs_colmap_free(&p->maps[i][j].map);
    }
    hs_free(p->maps[i]);
  }
  hs_free(p->maps);
  hs_vs_indexed_free(&p->ix);
  hs_table_plan_free(&p->plan);
  hs_free(p->manifest_list);
  hs_free(p->registry);
  hs_free(p->column);
  pthread_mutex_destroy(&p->mu);
  hs_free(p);
}

void hs_vs_prep_release(hs_vs_prep *p) {
  if (p == NULL) return;
  pthread_mutex_lock(&prep_mu);
  bool last = --p->refs == 0;
  pthread_mutex_unlock(&prep_mu);
  if (last) prep_free(p);
}

static void table_aux_free(void *aux) {
  hs_vs_prep_release(aux);
}

static bool same_str(const char *a, const char *b) {
  return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

static char *dup_or_null(const char *s, bool *ok) {
  if (s == NULL) return NULL;
  char *d = hs_strdup(s);
  if (d == NULL) *ok = false;
  return d;
}

/* On an object store, the snapshot's manifest list and the index registry
 * (both named by the metadata) in one parallel wave before they are read
 * one after the other. */
static void prefetch_list_and_registry(const hs_table *t, const char *list, const char *reg) {
  if (!t->remote) return;
  hs_table_stream_load(t); /* the version's index stream: all of these in one GET */
  char *p[2] = {NULL, NULL};
  hs_store_prefetch_item items[2];
  size_t n = 0;
  if (list != NULL && hs_table_resolve_path(t, list, "manifest list", &p[0], NULL) == HS_OK)
    items[n++] = (hs_store_prefetch_item){p[0], 0, (size_t)128 << 10, true, false};
  if (reg != NULL && hs_table_resolve_path(t, reg, "index registry", &p[1], NULL) == HS_OK)
    items[n++] = (hs_store_prefetch_item){p[1], 0, (size_t)128 << 10, true, false};
  if (n == 2) (void)hs_store_prefetch(items, n);
  hs_free(p[0]);
  hs_free(p[1]);
}

void hs_vs_prep_prefetch_current(hs_table *t) {
  const hs_iceberg_snapshot *snap = hs_table_current(t);
  prefetch_list_and_registry(t, snap != NULL ? snap->manifest_list : NULL,
                             hs_iceberg_metadata_property(&t->meta, REGISTRY_PROPERTY));
}

bool hs_vs_prep_current(hs_table *t, const char *column) {
  const hs_iceberg_snapshot *snap = hs_table_current(t);
  const char *list = snap != NULL ? snap->manifest_list : NULL;
  const char *reg = hs_iceberg_metadata_property(&t->meta, REGISTRY_PROPERTY);
  pthread_mutex_lock(&prep_mu);
  const hs_vs_prep *p = t->aux_free == table_aux_free ? t->aux : NULL;
  bool cur = p != NULL && list != NULL && p->snapshot_id == snap->snapshot_id &&
             same_str(p->manifest_list, list) && same_str(p->registry, reg) &&
             p->schema_id == t->meta.current_schema_id && strcmp(p->column, column) == 0;
  pthread_mutex_unlock(&prep_mu);
  return cur;
}

hs_status hs_vs_prep_acquire(hs_table *t, int64_t snapshot_id, const char *column, int32_t field_id,
                             hs_metric metric, size_t dim, bool exact, bool filtered,
                             const char *const *paths, size_t n_paths, hs_vs_prep **out,
                             hs_error *err) {
  *out = NULL;
  const hs_iceberg_snapshot *snap =
      snapshot_id == -1 ? hs_table_current(t) : hs_iceberg_metadata_snapshot(&t->meta, snapshot_id);
  const char *list = snap != NULL ? snap->manifest_list : NULL;
  const char *reg = hs_iceberg_metadata_property(&t->meta, REGISTRY_PROPERTY);
  int64_t sid = snap != NULL ? snap->snapshot_id : -1;
  pthread_mutex_lock(&prep_mu);
  hs_vs_prep *p = t->aux_free == table_aux_free && paths == NULL ? t->aux : NULL;
  if (p != NULL && list != NULL && p->snapshot_id == sid && same_str(p->manifest_list, list) &&
      same_str(p->registry, reg) && p->schema_id == t->meta.current_schema_id &&
      p->n_schemas == t->meta.n_schemas && p->field_id == field_id && p->metric == metric &&
      p->dim == dim && p->exact == exact && strcmp(p->column, column) == 0) {
    p->refs++;
    pthread_mutex_unlock(&prep_mu);
    *out = p;
    return HS_OK;
  }
  pthread_mutex_unlock(&prep_mu);
  if ((p = hs_calloc(1, sizeof *p)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  pthread_mutex_init(&p->mu, NULL);
  p->refs = 1;
  bool ok = true;
  p->manifest_list = dup_or_null(list, &ok);
  p->registry = dup_or_null(reg, &ok);
  p->column = dup_or_null(column, &ok);
  p->snapshot_id = sid;
  p->schema_id = t->meta.current_schema_id;
  p->n_schemas = t->meta.n_schemas;
  p->field_id = field_id;
  p->metric = metric;
  p->dim = dim;
  p->exact = exact;
  hs_status st = ok ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  if (st == HS_OK && !exact) prefetch_list_and_registry(t, list, reg);
  if (st == HS_OK) st = hs_table_plan_files(t, snapshot_id, &p->plan, err);
  if (st == HS_OK && paths != NULL) st = hs_scan_plan_restrict(&p->plan, paths, n_paths, err);
  if (st == HS_OK && !exact)
    st = hs_vs_indexed_open(t, &p->plan, column, field_id, metric, dim, filtered, &p->ix, err);
  if (st == HS_OK && p->plan.n_files > 0 &&
      ((p->readers = hs_calloc(p->plan.n_files, sizeof *p->readers)) == NULL ||
       (p->maps = hs_calloc(p->plan.n_files, sizeof *p->maps)) == NULL))
    st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  if (st != HS_OK) {
    prep_free(p);
    return st;
  }
  /* Kept only for a version with a snapshot (an empty table plans nothing). */
  if (list != NULL && paths == NULL && (t->aux == NULL || t->aux_free == table_aux_free)) {
    hs_vs_prep *old = NULL;
    pthread_mutex_lock(&prep_mu);
    old = t->aux;
    t->aux = p;
    t->aux_free = table_aux_free;
    p->refs++;
    pthread_mutex_unlock(&prep_mu);
    hs_vs_prep_release(old);
  }
  *out = p;
  return HS_OK;
}

const hs_table_plan *hs_vs_prep_plan(const hs_vs_prep *p) {
  return &p->plan;
}

const hs_vs_indexed *hs_vs_prep_indexed(const hs_vs_prep *p) {
  return &p->ix;
}

/* Whether `file` of the prepared plan is `path` (a split's own plan or a
 * path from elsewhere is not). */
static bool plan_file_is(const hs_vs_prep *p, size_t file, const char *path) {
  return p != NULL && file < p->plan.n_files && strcmp(p->plan.files[file].path, path) == 0;
}

hs_status hs_vs_prep_reader(hs_vs_prep *p, size_t file, const char *path, hs_parquet_reader **out,
                            hs_error *err) {
  if (!plan_file_is(p, file, path)) return hs_parquet_reader_open_shared(path, out, err);
  pthread_mutex_lock(&p->mu);
  hs_status st = HS_OK;
  if (p->readers[file] == NULL) {
    /* Opened once for the version, so checked once: it must be the file
     * the manifest records and, when searched through its index, the one
     * the index was built from (a file replaced under its name is refused,
     * never read as the winners' rows). */
    hs_parquet_reader *r = NULL;
    const hs_iceberg_data_file *df = p->plan.files[file].data_file;
    st = hs_parquet_reader_open_shared(path, &r, err);
    const hs_pq_file_metadata *md = st == HS_OK ? hs_parquet_reader_metadata(r) : NULL;
    if (st == HS_OK)
      st = hs_table_data_file_check(path, md, df->file_size_in_bytes, df->record_count, err);
    char why[256];
    if (st == HS_OK && file < p->ix.n && p->ix.vx[file] != NULL &&
        !hs_index_binding_matches(hs_vidx_binding(p->ix.vx[file]), path, md->file_size, true,
                                  md->footer_crc32c, why, sizeof why))
      st = hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: not the data file its vector index was built from (replaced under "
                        "its name?): %s",
                        path, why);
    if (st == HS_OK)
      p->readers[file] = r;
    else
      hs_parquet_reader_free(r);
  }
  if (st == HS_OK) st = hs_parquet_reader_dup(p->readers[file], out, err);
  pthread_mutex_unlock(&p->mu);
  return st;
}

const hs_colmap *hs_vs_prep_map_get(hs_vs_prep *p, size_t file, const char *path, const char *key) {
  if (!plan_file_is(p, file, path) || key == NULL) return NULL;
  const hs_colmap *hit = NULL;
  pthread_mutex_lock(&p->mu);
  for (int j = 0; p->maps[file] != NULL && j < PREP_MAPS && hit == NULL; j++)
    if (p->maps[file][j].key != NULL && strcmp(p->maps[file][j].key, key) == 0)
      hit = &p->maps[file][j].map;
  pthread_mutex_unlock(&p->mu);
  return hit;
}

const hs_colmap *hs_vs_prep_map_put(hs_vs_prep *p, size_t file, const char *path, const char *key,
                                    hs_colmap *map) {
  if (!plan_file_is(p, file, path) || key == NULL || !map->identity) return NULL;
  char *k = hs_strdup(key);
  if (k == NULL) return NULL;
  const hs_colmap *kept = NULL;
  pthread_mutex_lock(&p->mu);
  if (p->maps[file] == NULL) p->maps[file] = hs_calloc(PREP_MAPS, sizeof *p->maps[file]);
  for (int j = 0; p->maps[file] != NULL && j < PREP_MAPS && kept == NULL; j++) {
    struct prep_map *m = &p->maps[file][j];
    if (m->key != NULL && strcmp(m->key, key) == 0) break; /* another search kept one */
    if (m->key != NULL) continue;
    m->key = k;
    m->map = *map;
    memset(map, 0, sizeof *map);
    k = NULL;
    kept = &m->map;
  }
  pthread_mutex_unlock(&p->mu);
  hs_free(k);
  return kept;
}

bool hs_vs_prep_allowed_get(hs_vs_prep *p, const char *filter, roaring_bitmap_t **allowed, size_t n,
                            int64_t *rows_matched) {
  if (p == NULL || n != p->ix.n) return false;
  bool hit = false;
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < PREP_ALLOWS && !hit; i++) {
    struct prep_allow *a = &p->allows[i];
    if (a->filter == NULL || strcmp(a->filter, filter) != 0) continue;
    hit = true;
    for (size_t f = 0; hit && f < n; f++) {
      if (a->allowed[f] != NULL && (allowed[f] = roaring_bitmap_copy(a->allowed[f])) == NULL)
        hit = false;
    }
    if (!hit) { /* out of memory: the caller computes them */
      for (size_t f = 0; f < n; f++) {
        if (allowed[f] != NULL) roaring_bitmap_free(allowed[f]);
        allowed[f] = NULL;
      }
      break;
    }
    a->used_at = ++p->tick;
    *rows_matched += a->rows_matched;
  }
  pthread_mutex_unlock(&p->mu);
  return hit;
}

void hs_vs_prep_allowed_put(hs_vs_prep *p, const char *filter, roaring_bitmap_t *const *allowed,
                            size_t n, int64_t rows_matched) {
  if (p == NULL || n != p->ix.n) return;
  size_t bytes = strlen(filter) + n * sizeof *allowed;
  for (size_t f = 0; f < n; f++)
    if (allowed[f] != NULL) bytes += roaring_bitmap_size_in_bytes(allowed[f]);
  if (bytes > PREP_ALLOW_BYTES / 2) return; /* too big to be worth keeping */
  struct prep_allow a = {.filter = hs_strdup(filter), .rows_matched = rows_matched, .bytes = bytes};
  a.allowed = hs_calloc(n + 1, sizeof *a.allowed);
  bool ok = a.filter != NULL && a.allowed != NULL;
  for (size_t f = 0; ok && f < n; f++)
    if (allowed[f] != NULL && (a.allowed[f] = roaring_bitmap_copy(allowed[f])) == NULL) ok = false;
  if (ok) {
    for (size_t f = 0; f < n; f++)
      if (a.allowed[f] != NULL) roaring_bitmap_shrink_to_fit(a.allowed[f]);
  }
  pthread_mutex_lock(&p->mu);
  size_t total = 0;
  for (int i = 0; i < PREP_ALLOWS; i++) {
    if (p->allows[i].filter != NULL && strcmp(p->allows[i].filter, filter) == 0) ok = false;
    total += p->allows[i].bytes;
  }
  while (ok && total + bytes > PREP_ALLOW_BYTES) { /* make room: least recently used first */
    int old = -1;
    for (int i = 0; i < PREP_ALLOWS; i++)
      if (p->allows[i].filter != NULL && (old < 0 || p->allows[i].used_at < p->allows[old].used_at))
        old = i;
    if (old < 0) break;
    total -= p->allows[old].bytes;
    allow_clear(&p->allows[old], n);
  }
  int slot = -1;
  for (int i = 0; ok && i < PREP_ALLOWS; i++) {
    if (p->allows[i].filter == NULL) {
      slot = i;
      break;
    }
    if (slot < 0 || p->allows[i].used_at < p->allows[slot].used_at) slot = i;
  }
  if (ok && slot >= 0) {
    allow_clear(&p->allows[slot], n);
    a.used_at = ++p->tick;
    p->allows[slot] = a;
    memset(&a, 0, sizeof a);
  }
  pthread_mutex_unlock(&p->mu);
  allow_clear(&a, n);
}
