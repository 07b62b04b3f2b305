/*
 * vector_search_index.c — the indexed half of a vector search
 * (vector_search.h): which data files have a usable vector index, which of
 * their rows a filter allows, and their top-k through hs_vidx_search.
 *
 * A file's index is used only when it opens cleanly and was built with the
 * query's metric and dimension; otherwise the file is scored exactly, so a
 * damaged or foreign index only costs speed. With a filter, one filtered
 * scan over the indexed files (scan.c's on_rows hook: only the filter's
 * columns are decoded, files, row groups and pages pruned as usual) gives
 * each file its allowed rows as a bitmap; hs_vidx_search then never returns
 * fewer than min(k, allowed indexed rows) hits. Hits carry exact distances
 * and merge into the same per-query heaps as exactly scored files.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/parallel.h"
#include "../io/fs.h"
#include "../io/store.h"
#include "../table/vector_index.h"
#include "scan.h"
#include "vector_search.h"

/* ------------------------------------------------- open-index cache */

/* Opening an index checks every section's CRC (O(index size)), so opened
 * indexes are kept for later searches in this process: index files are
 * written once under fresh names and never changed, and the key includes
 * the file's hs_fs_stamp, so a cached index is the file's content.
 * An opened index is read-only and thread-safe; entries in use are never
 * evicted (least recently used among the others goes first). */
#define VX_CACHE_MAX 256

typedef struct vx_entry {
  char *path, *column;
  hs_fs_stamp stamp;
  hs_vidx *x;
  uint32_t users;
  uint64_t used_at;
} vx_entry;

static pthread_mutex_t vx_mu = PTHREAD_MUTEX_INITIALIZER;
static vx_entry vx_cache[VX_CACHE_MAX];
static uint64_t vx_tick;

static vx_entry *vx_find(const char *path, const char *column, const hs_fs_stamp *stamp) {
  for (size_t i = 0; i < VX_CACHE_MAX; i++) {
    vx_entry *e = &vx_cache[i];
    if (e->x != NULL && hs_fs_stamp_equal(&e->stamp, stamp) && strcmp(e->path, path) == 0 &&
        strcmp(e->column, column) == 0)
      return e;
  }
  return NULL;
}

/* The opened index of `column` in `path` (cached: *cached true, release
 * with vx_release; else owned by the caller). */
static hs_status vx_acquire(const char *path, const char *column, hs_vidx **out, bool *cached,
                            hs_error *err) {
  *out = NULL;
  *cached = false;
  hs_fs_stamp stamp;
  bool keyed = hs_store_stamp_of(path, &stamp);
  if (keyed) {
    pthread_mutex_lock(&vx_mu);
    vx_entry *e = vx_find(path, column, &stamp);
    if (e != NULL) {
      e->users++;
      e->used_at = ++vx_tick;
      *out = e->x;
      *cached = true;
    }
    pthread_mutex_unlock(&vx_mu);
    if (*out != NULL) return HS_OK;
  }
  hs_vidx *x = NULL;
  hs_status st = hs_table_vector_index_open(path, column, &x, err);
  if (st != HS_OK || !keyed) {
    *out = x;
    return st;
  }
  char *p = hs_strdup(path), *c = hs_strdup(column);
  pthread_mutex_lock(&vx_mu);
  vx_entry *e = vx_find(path, column, &stamp); /* opened meanwhile by another thread */
  if (e == NULL && p != NULL && c != NULL) {
    for (size_t i = 0; i < VX_CACHE_MAX; i++) {
      vx_entry *v = &vx_cache[i];
      if (v->x == NULL) {
        e = v;
        break;
      }
      if (v->users == 0 && (e == NULL || v->used_at < e->used_at)) e = v;
    }
    if (e != NULL) {
      if (e->x != NULL) { /* evict */
        hs_vidx_free(e->x);
        hs_free(e->path);
        hs_free(e->column);
      }
      *e = (vx_entry){p, c, stamp, x, 0, 0};
      p = c = NULL;
      x = NULL;
    }
  }
  if (e != NULL) {
    e->users++;
    e->used_at = ++vx_tick;
    *out = e->x;
    *cached = true;
  }
  pthread_mutex_unlock(&vx_mu);
  hs_free(p);
  hs_free(c);
  if (*cached) {
    hs_vidx_free(x); /* NULL, or a duplicate of the cached one */
  } else {
    *out = x; /* cache full of indexes in use: owned by the caller */
  }
  return HS_OK;
}

static void vx_release(hs_vidx *x) {
  pthread_mutex_lock(&vx_mu);
  for (size_t i = 0; i < VX_CACHE_MAX; i++)
    if (vx_cache[i].x == x && vx_cache[i].users > 0) {
      vx_cache[i].users--;
      break;
    }
  pthread_mutex_unlock(&vx_mu);
}

/* ------------------------------------------------------- which files */

/* Whether data file `path`'s column of field `id` (matched by
 * PARQUET:field_id) is named `stored`, the name its index entry records;
 * false when it cannot tell (a file without field ids: its names may be
 * older than the schema's, so its index is not used once the schema has
 * evolved). */
static bool file_column_is(const char *path, const char *stored, int32_t id) {
  char *fname = NULL;
  hs_error local = {0};
  if (id < 0 || hs_table_data_file_column(path, id, NULL, &fname, &local) != HS_OK) return false;
  bool same = fname != NULL && strcmp(fname, stored) == 0;
  hs_free(fname);
  return same;
}

/* Count a registered index left unused, keeping the first reason. */
static void reject(hs_vs_indexed *ix, const char *index, const char *data, const char *why) {
  if (ix->n_rejected++ > 0) return;
  char *w = ix->why;
  size_t cap = sizeof ix->why;
  int n = snprintf(w, cap, "vector index %.*s ignored for data file %.*s: ", 100,
                   hs_index_short_path(index), 100, hs_index_short_path(data));
  if (n > 0 && (size_t)n < cap) snprintf(w + n, cap - (size_t)n, "%.*s", 110, why);
  hs_index_rejection_note(ix->why);
}

/* What a prefetch brings of an index file: its head (the vidx header,
 * section table, row ids) and its tail (the Puffin footer); the open reads
 * the rest (a quantized index lean: all but its float32 vectors, which
 * re-ranking reads by range). The index stream (src/table/stream.c) packs
 * these ranges and what the open reads, so all are cache hits. */
#define VX_PREFETCH_HEAD ((size_t)256 << 10)
#define VX_PREFETCH_TAIL ((size_t)128 << 10)
#define VX_PREFETCH_FOOTER ((size_t)128 << 10)

/* On an object store, the index files the registry names for the plan's
 * files (their footers and heads) and the data files' footers (the
 * binding check reads them) in one parallel wave (hs_store_prefetch),
 * instead of a few round trips per file one after another. */
static void prefetch_indexes(hs_table *t, const hs_table_plan *plan,
                             const hs_table_index_registry *reg, const char *column,
                             int32_t field_id, bool filtered) {
  if (!t->remote || plan->n_files == 0) return;
  size_t most = plan->n_files + (filtered ? reg->n_entries : 0);
  hs_store_prefetch_item *items = hs_calloc(4 * plan->n_files + most, sizeof *items);
  char **paths = hs_calloc(most, sizeof *paths);
  size_t n = 0, np = 0;
  for (size_t i = 0; items != NULL && paths != NULL && i < plan->n_files; i++) {
    const hs_table_plan_file *pf = &plan->files[i];
    const char *stored = NULL;
    const char *rec = hs_table_index_lookup_field(reg, pf->path, pf->data_file->file_size_in_bytes,
                                                  column, field_id, &stored);
    if (rec == NULL || hs_table_resolve_path(t, rec, "index registry", &paths[np], NULL) != HS_OK)
      continue;
    items[n++] = (hs_store_prefetch_item){paths[np], 0, VX_PREFETCH_TAIL, true, false};
    items[n++] = (hs_store_prefetch_item){paths[np], 0, VX_PREFETCH_HEAD, false, false};
    items[n++] = (hs_store_prefetch_item){pf->path, 0, VX_PREFETCH_FOOTER, true, false};
    items[n++] = (hs_store_prefetch_item){pf->path, 0, 4, false, false}; /* its magic */
    np++;
  }
  /* A filter's scalar indexes (hs_vs_indexed_allow opens those of the
   * indexed files): their footers are known from the registry too, so in
   * this wave rather than one of their own after the vector indexes open
   * (the vector index files' own entries merge with their tails above). */
  for (size_t e = 0; filtered && items != NULL && paths != NULL && e < reg->n_entries; e++) {
    bool planned = false;
    for (size_t i = 0; i < plan->n_files && !planned; i++)
      planned = strcmp(plan->files[i].path, reg->entries[e].data_file) == 0;
    if (!planned || hs_table_resolve_path(t, reg->entries[e].index_file, "index registry",
                                          &paths[np], NULL) != HS_OK)
      continue;
    items[n++] = (hs_store_prefetch_item){paths[np++], 0, VX_PREFETCH_FOOTER, true, false};
  }
  if (items != NULL && paths != NULL) (void)hs_store_prefetch(items, n);
  for (size_t i = 0; paths != NULL && i < np; i++) hs_free(paths[i]);
  hs_free(paths);
  hs_free(items);
}

/* At most this many bytes fetched in the opens' wave (what the object
 * cache holds, from the index stream, does not count); the sections past
 * it are read by their opens as before. Well inside the object cache
 * (256 MiB by default), so nothing it brings is evicted before its open
 * reads it; 16 MiB, not 8: bench_s3_cold's two files without their index
 * stream need 9 MB (8 MiB left one file's five reads one after another). */
#define VX_OPEN_BATCH_MAX ((uint64_t)16 << 20)

/* Whether the process already holds the opened index (vx_acquire finds it). */
static bool vx_held(const char *path, const char *column) {
  hs_fs_stamp stamp;
  if (!hs_store_stamp_of(path, &stamp)) return false;
  pthread_mutex_lock(&vx_mu);
  bool held = vx_find(path, column, &stamp) != NULL;
  pthread_mutex_unlock(&vx_mu);
  return held;
}

/* On an object store, after the heads are in the cache: what every file's
 * index open will read (its header's sections: links, IVF lists,
 * quantizer and codes; hs_vidx_open_reads) in one parallel wave of ranged
 * GETs (coalesced by the prefetch), instead of each open reading its
 * sections one after another, file after file. Indexes this process holds
 * open are skipped; best effort (an open reads what is missing). */
typedef struct vx_items {
  hs_store_prefetch_item *v;
  size_t n, cap;
  char **paths; /* owned: the items' URIs */
  size_t np;
} vx_items;

static void vx_items_free(vx_items *l) {
  for (size_t i = 0; i < l->np; i++) hs_free(l->paths[i]);
  hs_free(l->paths);
  hs_free(l->v);
  memset(l, 0, sizeof *l);
}

/* What every plan file's index open will read (hs_vidx_open_reads) into
 * l, for indexes this process does not hold open. */
static void index_open_items(hs_table *t, const hs_table_plan *plan,
                             const hs_table_index_registry *reg, const char *column,
                             int32_t field_id, vx_items *l) {
  memset(l, 0, sizeof *l);
  if (!t->remote || plan->n_files == 0) return;
  l->paths = hs_calloc(plan->n_files, sizeof *l->paths);
  for (size_t i = 0; l->paths != NULL && i < plan->n_files; i++) {
    const hs_table_plan_file *pf = &plan->files[i];
    const char *stored = NULL;
    const char *rec = hs_table_index_lookup_field(reg, pf->path, pf->data_file->file_size_in_bytes,
                                                  column, field_id, &stored);
    if (rec == NULL || stored == NULL ||
        hs_table_resolve_path(t, rec, "index registry", &l->paths[l->np], NULL) != HS_OK)
      continue;
    const char *ip = l->paths[l->np++];
    if (!hs_store_is_remote(ip) || vx_held(ip, stored)) continue;
    hs_vidx_reads r = {0};
    hs_error local = {0};
    if (hs_table_vector_index_open_reads(ip, stored, &r, &local) == HS_OK && l->n + r.n > l->cap) {
      size_t c = (l->n + r.n) * 2;
      hs_store_prefetch_item *g = hs_realloc(l->v, c * sizeof *g);
      if (g != NULL) {
        l->v = g;
        l->cap = c;
      }
    }
    for (size_t j = 0; j < r.n && l->n < l->cap; j++)
      l->v[l->n++] = (hs_store_prefetch_item){ip, r.off[j], r.len[j], false, false};
    hs_vidx_reads_free(&r);
  }
}

/* On an object store, after the heads are in the cache: what every file's
 * index open will read (its header's sections: links, IVF lists,
 * quantizer and codes; hs_vidx_open_reads) in one parallel wave of ranged
 * GETs (coalesced by the prefetch), instead of each open reading its
 * sections one after another, file after file. Indexes this process holds
 * open are skipped; best effort (an open reads what is missing). After
 * hs_table_vector_search_refresh this wave finds everything held. */
static void prefetch_index_opens(hs_table *t, const hs_table_plan *plan,
                                 const hs_table_index_registry *reg, const char *column,
                                 int32_t field_id) {
  vx_items l;
  index_open_items(t, plan, reg, column, field_id, &l);
  if (l.n > 0) (void)hs_store_prefetch_max(l.v, l.n, VX_OPEN_BATCH_MAX);
  vx_items_free(&l);
}

static size_t file_k(const hs_vs_indexed *ix, size_t f, size_t k);

/* The ranged reads each of `files` indexed files' filtered PQ scan may
 * make for its codes (hs_vidx_search_params.scan_ranges): all files' in
 * one wave of 64 with the freshness LIST, 4 to 32 a file. The same in
 * the LIST's wave and the search, so the search finds them cached. */
static uint32_t scan_ranges_for(size_t files) {
  size_t r = files > 0 ? 63 / files : 32;
  return (uint32_t)(r < 4 ? 4 : (r > 32 ? 32 : r));
}

/* With a filter: the version's prepared search (vector_search_prep.c) and
 * each indexed file's allowed rows (ix->allowed, owned; the rest of *ix
 * the prep's), computed as the search computes them (hs_vs_indexed_allow:
 * the scalar indexes' blobs come from the index stream) and kept on the
 * prep, so the search that follows the LIST finds them there instead of
 * evaluating the filter again; false when they cannot be had. */
static bool parts_allowed(hs_table *t, const hs_vector_search_options *o, int32_t fid, size_t dim,
                          hs_vs_prep **prep, hs_vs_indexed *ix) {
  hs_metric metric = HS_METRIC_L2;
  hs_error local = {0};
  int64_t matched = 0;
  *prep = NULL;
  memset(ix, 0, sizeof *ix);
  if ((o->metric != NULL && hs_metric_parse(o->metric, &metric, &local) != HS_OK) ||
      hs_vs_prep_acquire(t, -1, o->column, fid, metric, dim, false, true, NULL, 0, prep, &local) !=
          HS_OK)
    return false;
  *ix = *hs_vs_prep_indexed(*prep);
  ix->allowed = NULL;
  bool ok = ix->n_indexed > 0 && (ix->allowed = hs_calloc(ix->n + 1, sizeof *ix->allowed)) != NULL;
  if (ok && !hs_vs_prep_allowed_get(*prep, o->filter, ix->allowed, ix->n, &matched)) {
    ok = hs_vs_indexed_allow(t, hs_vs_prep_plan(*prep), o->filter, ix, &matched, &local) == HS_OK;
    if (ok) hs_vs_prep_allowed_put(*prep, o->filter, ix->allowed, ix->n, matched);
  }
  return ok;
}

static void parts_allowed_free(hs_vs_prep *prep, hs_vs_indexed *ix) {
  for (size_t f = 0; ix->allowed != NULL && f < ix->n; f++)
    if (ix->allowed[f] != NULL) roaring_bitmap_free(ix->allowed[f]);
  hs_free(ix->allowed);
  memset(ix, 0, sizeof *ix);
  if (prep != NULL) hs_vs_prep_release(prep);
}

/* The probed lists' codes the queries' searches will load of the plan's
 * partial indexes (with a filter, those holding the allowed rows a PQ scan
 * scores, or the probed lists a walk reads: parts_allowed), appended to l,
 * when everything the indexes' opens read is in the object cache (the
 * index stream's): then the opens cost no request and are kept
 * (vx_acquire), and those codes ride in the freshness LIST's round trip
 * too. Best effort. */
static void parts_items(hs_table *t, const hs_table_plan *plan, const hs_table_index_registry *reg,
                        const hs_vector_search_options *o, const float *queries, size_t nq,
                        size_t dim, vx_items *l) {
  if (queries == NULL || nq == 0) return;
  if (l->n > 0 && hs_store_prefetch_missing(l->v, l->n) > 0) return;
  int32_t fid = hs_table_current_field_id(&t->meta, o->column);
  const bool filtered = o->filter != NULL && o->filter[strspn(o->filter, " \t\r\n")] != 0;
  hs_vs_indexed ix;
  hs_vs_prep *prep = NULL;
  memset(&ix, 0, sizeof ix);
  if (filtered && !parts_allowed(t, o, fid, dim, &prep, &ix)) {
    parts_allowed_free(prep, &ix);
    return;
  }
  hs_vidx_search_params sp = {0};
  sp.ef_search = o->ef_search;
  sp.nprobe = o->nprobe;
  sp.scan_ranges = scan_ranges_for(ix.n_indexed);
  size_t k = o->k > 0 ? (size_t)o->k : 10;
  char **paths = hs_calloc(plan->n_files, sizeof *paths);
  size_t np = 0;
  for (size_t i = 0; paths != NULL && i < plan->n_files; i++) {
    const hs_table_plan_file *pf = &plan->files[i];
    const char *stored = NULL;
    const char *rec = hs_table_index_lookup_field(reg, pf->path, pf->data_file->file_size_in_bytes,
                                                  o->column, fid, &stored);
    char *ip = NULL;
    if (rec == NULL || stored == NULL ||
        hs_table_resolve_path(t, rec, "index registry", &ip, NULL) != HS_OK)
      continue;
    hs_vidx *x = NULL;
    bool cached = false;
    hs_error local = {0};
    if (!hs_store_is_remote(ip) || vx_acquire(ip, stored, &x, &cached, &local) != HS_OK ||
        x == NULL || hs_vidx_dim(x) != dim) {
      if (x != NULL && cached)
        vx_release(x);
      else
        hs_vidx_free(x);
      hs_free(ip);
      continue;
    }
    hs_vidx_reads r = {0};
    /* a filter: files the search uses the index of, with its allowed rows
     * and k as the search gives them (file_k) */
    bool same = filtered && i < ix.n && ix.vx[i] != NULL && strcmp(ix.paths[i], pf->path) == 0;
    const roaring_bitmap_t *allowed = same ? ix.allowed[i] : NULL;
    size_t kf = filtered ? (same ? file_k(&ix, i, k) : 0) : k;
    for (size_t q = 0; kf > 0 && q < nq; q++)
      if (hs_vidx_search_parts_reads(x, queries + q * dim, (uint32_t)kf, &sp, allowed, &r,
                                     &local) != HS_OK)
        break;
    if (l->n + r.n > l->cap) {
      size_t c = (l->n + r.n) * 2;
      hs_store_prefetch_item *g = hs_realloc(l->v, c * sizeof *g);
      if (g != NULL) {
        l->v = g;
        l->cap = c;
      }
    }
    for (size_t j = 0; j < r.n && l->n < l->cap; j++)
      l->v[l->n++] = (hs_store_prefetch_item){ip, r.off[j], r.len[j], false, true};
    hs_vidx_reads_free(&r);
    if (cached)
      vx_release(x);
    else
      hs_vidx_free(x);
    paths[np++] = ip;
  }
  /* the items' URIs live as long as l */
  char **all = paths != NULL ? hs_realloc(l->paths, (l->np + np + 1) * sizeof *all) : NULL;
  if (all != NULL) {
    l->paths = all;
    for (size_t i = 0; i < np; i++) l->paths[l->np++] = paths[i];
  } else {
    for (size_t i = 0; paths != NULL && i < np; i++) hs_free(paths[i]); /* and their items */
    if (paths != NULL) l->n = 0;
  }
  hs_free(paths);
  if (filtered) parts_allowed_free(prep, &ix);
}

hs_status hs_table_vector_search_refresh(hs_table *t, const hs_vector_search_options *o,
                                         hs_error *err) {
  return hs_table_vector_search_refresh_queries(t, o, NULL, 0, 0, err);
}

hs_status hs_table_vector_search_refresh_queries(hs_table *t, const hs_vector_search_options *o,
                                                 const float *queries, size_t nq, size_t dim,
                                                 hs_error *err) {
  if (t == NULL || o == NULL || o->column == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vector search refresh: no table or column");
  /* Only the first search of the current version on an object store: its
   * opens are still to come (else nothing to ride along). */
  if (!t->remote || o->snapshot_id != -1 || o->exact || t->catalog != NULL ||
      hs_table_current(t) == NULL || hs_vs_prep_current(t, o->column))
    return hs_table_refresh(t, err);
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  hs_table_index_registry reg;
  memset(&reg, 0, sizeof reg);
  vx_items l = {0};
  hs_error local = {0};
  /* The loaded version's plan, registry and index heads (the index
   * stream's, in the cache since the open: no request), then the ranges
   * its opens will read, as the search will ask for them. */
  hs_vs_prep_prefetch_current(t);
  if (hs_table_plan_files(t, -1, &plan, &local) == HS_OK &&
      hs_table_index_registry_load(t, NULL, &reg, &local) == HS_OK) {
    int32_t fid = hs_table_current_field_id(&t->meta, o->column);
    bool filtered = o->filter != NULL && o->filter[strspn(o->filter, " \t\r\n")] != 0;
    prefetch_indexes(t, &plan, &reg, o->column, fid, filtered);
    index_open_items(t, &plan, &reg, o->column, fid, &l);
    parts_items(t, &plan, &reg, o, queries, nq, dim, &l);
    hs_table_index_registry_free(&reg);
  }
  hs_table_plan_free(&plan);
  hs_status st = hs_table_refresh_prefetch(t, l.v, l.n, VX_OPEN_BATCH_MAX, err);
  vx_items_free(&l);
  return st;
}

hs_status hs_vs_indexed_open(hs_table *t, const hs_table_plan *plan, const char *column,
                             int32_t field_id, hs_metric metric, size_t dim, bool filtered,
                             hs_vs_indexed *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_table_index_registry *regp = &out->reg;
  hs_status st = HS_OK;
  hs_error local = {0};
  if (hs_table_index_registry_load(t, NULL, regp, &local) != HS_OK) {
    hs_table_index_registry_free(regp); /* no usable registry: everything exact */
    memset(regp, 0, sizeof *regp);
    return HS_OK;
  }
  out->have_reg = true; /* kept for the query's scans */
  if (regp->n_entries == 0) return HS_OK;
  prefetch_indexes(t, plan, regp, column, field_id, filtered);
  prefetch_index_opens(t, plan, regp, column, field_id);
  out->n = plan->n_files;
  out->vx = hs_calloc(plan->n_files + 1, sizeof *out->vx);
  out->paths = hs_calloc(plan->n_files + 1, sizeof *out->paths);
  out->ipaths = hs_calloc(plan->n_files + 1, sizeof *out->ipaths);
  out->allowed = hs_calloc(plan->n_files + 1, sizeof *out->allowed);
  out->cached = hs_calloc(plan->n_files + 1, sizeof *out->cached);
  if (out->vx == NULL || out->paths == NULL || out->ipaths == NULL || out->allowed == NULL ||
      out->cached == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  for (size_t i = 0; st == HS_OK && i < plan->n_files; i++) {
    const hs_table_plan_file *pf = &plan->files[i];
    /* Found by field id (an entry without field ids: by name); the index
     * answers only where the file's column of the searched field is the one
     * the entry names (after a rename: its old name, which the blob carries). */
    const char *stored = NULL;
    const char *rec = hs_table_index_lookup_field(regp, pf->path, pf->data_file->file_size_in_bytes,
                                                  column, field_id, &stored);
    if (rec == NULL || stored == NULL) continue;
    if (t->meta.n_schemas > 1 ? !file_column_is(pf->path, stored, field_id)
                              : strcmp(stored, column) != 0)
      continue;
    char *ipath = NULL;
    hs_vidx *x = NULL;
    bool cached = false;
    memset(&local, 0, sizeof local);
    bool usable = hs_table_resolve_path(t, rec, "index registry", &ipath, &local) == HS_OK &&
                  vx_acquire(ipath, stored, &x, &cached, &local) == HS_OK && x != NULL;
    if (!usable) {
      reject(out, ipath != NULL ? ipath : rec, pf->path, local.message);
    } else if (hs_vidx_metric(x) == metric && hs_vidx_dim(x) == dim) {
      /* Bound to this data file (src/index/binding.h): its path, size
       * and footer (through the shared open-file cache: one stat). */
      uint64_t size = 0;
      uint32_t crc = 0;
      char why[256];
      memset(&local, 0, sizeof local);
      if (hs_table_data_file_footer(pf->path, &size, &crc, &local) != HS_OK) {
        snprintf(why, sizeof why, "%s", "the data file cannot be opened");
        usable = false;
      } else {
        usable = hs_index_binding_matches(hs_vidx_binding(x), pf->path, size, true, crc, why,
                                          sizeof why);
      }
      if (!usable) reject(out, ipath, pf->path, why);
    } else {
      usable = false; /* another metric or dimension: the exact path, no fault */
    }
    if (usable) {
      out->vx[i] = x;
      out->cached[i] = cached;
      x = NULL;
      /* Deleted rows are excluded before the top-k: the index searches the
       * file's live rows only (a filter narrows them further). */
      if (pf->deleted != NULL &&
          (out->allowed[i] =
               roaring_bitmap_flip(pf->deleted, 0, (uint64_t)pf->data_file->record_count)) == NULL)
        st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
      if ((out->paths[i] = hs_strdup(pf->path)) == NULL)
        st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
      out->ipaths[i] = ipath;
      ipath = NULL;
      out->n_indexed++;
    }
    if (x != NULL && cached)
      vx_release(x);
    else
      hs_vidx_free(x);
    hs_free(ipath);
  }
  if (st != HS_OK) hs_vs_indexed_free(out);
  return st;
}

void hs_vs_indexed_free(hs_vs_indexed *ix) {
  for (size_t i = 0; i < ix->n; i++) {
    if (ix->vx != NULL && ix->vx[i] != NULL) {
      if (ix->cached != NULL && ix->cached[i])
        vx_release(ix->vx[i]);
      else
        hs_vidx_free(ix->vx[i]);
    }
    if (ix->paths != NULL) hs_free(ix->paths[i]);
    if (ix->ipaths != NULL) hs_free(ix->ipaths[i]);
    if (ix->allowed != NULL && ix->allowed[i] != NULL) roaring_bitmap_free(ix->allowed[i]);
  }
  hs_free(ix->vx);
  hs_free(ix->paths);
  hs_free(ix->ipaths);
  hs_free(ix->allowed);
  hs_free(ix->cached);
  if (ix->have_reg) hs_table_index_registry_free(&ix->reg);
  memset(ix, 0, sizeof *ix);
}

/* -------------------------------------------------------- allowed rows */

static bool keep_indexed(void *ctx, size_t plan_index, const char *path, int64_t size) {
  (void)path;
  (void)size;
  const hs_vs_indexed *ix = ctx;
  return plan_index < ix->n && ix->vx[plan_index] != NULL;
}

static hs_status add_rows(void *ctx, size_t plan_index, const char *path, const int64_t *rows,
                          size_t n, hs_error *err) {
  hs_vs_indexed *ix = ctx;
  if (plan_index >= ix->n || ix->allowed[plan_index] == NULL)
    return hs_error_set(err, HS_ERR_INTERNAL, "vector search: rows of an unplanned file %s", path);
  uint32_t buf[1024];
  for (size_t i = 0; i < n;) {
    size_t m = 0;
    for (; m < 1024 && i < n; i++, m++) {
      if (rows[i] < 0 || rows[i] > UINT32_MAX)
        return hs_error_set(err, HS_ERR_CORRUPT, "%s: row %lld beyond 2^32", path,
                            (long long)rows[i]);
      buf[m] = (uint32_t)rows[i];
    }
    roaring_bitmap_add_many(ix->allowed[plan_index], m, buf);
  }
  return HS_OK;
}

static hs_status add_bitmap(void *ctx, size_t plan_index, const char *path,
                            const roaring_bitmap_t *rows, hs_error *err) {
  hs_vs_indexed *ix = ctx;
  if (plan_index >= ix->n || ix->allowed[plan_index] == NULL)
    return hs_error_set(err, HS_ERR_INTERNAL, "vector search: rows of an unplanned file %s", path);
  roaring_bitmap_or_inplace(ix->allowed[plan_index], rows);
  return HS_OK;
}

/* Before a filter's index plan opens the scalar indexes of the indexed
 * files one by one: on an object store, the footers of every index file
 * the registry names for them in one wave (those already read, the vector
 * indexes, are not fetched again). */
static void prefetch_scalar_indexes(hs_table *t, const hs_vs_indexed *ix) {
  if (!t->remote || !ix->have_reg || ix->reg.n_entries == 0) return;
  const hs_table_index_registry *reg = &ix->reg;
  hs_store_prefetch_item *items = hs_calloc(reg->n_entries, sizeof *items);
  char **paths = hs_calloc(reg->n_entries, sizeof *paths);
  size_t n = 0;
  for (size_t e = 0; items != NULL && paths != NULL && e < reg->n_entries; e++) {
    bool wanted = false;
    for (size_t i = 0; i < ix->n && !wanted; i++)
      wanted = ix->vx[i] != NULL && strcmp(ix->paths[i], reg->entries[e].data_file) == 0;
    if (!wanted || hs_table_resolve_path(t, reg->entries[e].index_file, "index registry", &paths[n],
                                         NULL) != HS_OK)
      continue;
    items[n] = (hs_store_prefetch_item){paths[n], 0, VX_PREFETCH_FOOTER, true, false};
    n++;
  }
  if (items != NULL && paths != NULL) (void)hs_store_prefetch(items, n);
  for (size_t i = 0; paths != NULL && i < n; i++) hs_free(paths[i]);
  hs_free(paths);
  hs_free(items);
}

hs_status hs_vs_indexed_allow(hs_table *t, const hs_table_plan *plan, const char *filter,
                              hs_vs_indexed *ix, int64_t *rows_matched, hs_error *err) {
  prefetch_scalar_indexes(t, ix);
  for (size_t i = 0; i < ix->n; i++) {
    if (ix->vx[i] == NULL) continue;
    /* The filtered scan leaves deleted rows out itself. */
    if (ix->allowed[i] != NULL) roaring_bitmap_free(ix->allowed[i]);
    if ((ix->allowed[i] = roaring_bitmap_create()) == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  }
  ix->filtered = true;
  hs_scan_hooks hooks = {.keep_file = keep_indexed,
                         .on_rows = add_rows,
                         .ctx = ix,
                         .plan = plan,
                         .reg = ix->have_reg ? &ix->reg : NULL,
                         .rows_from_index = true};
  hs_scan_stats ss;
  hs_status rc = hs_table_scan_rows_bitmap(t, plan->snapshot_id, filter, &hooks, add_bitmap,
                                           "vector search", &ss, err);
  if (rc == HS_OK) *rows_matched += ss.rows_matched;
  return rc;
}

/* ------------------------------------------------------------- search */

#define SHARE_NONE UINT32_MAX

typedef struct isearch {
  const hs_vs_indexed *ix;
  const float *queries;
  size_t dim, k;
  hs_vidx_search_params sp;
  hs_vs_topk *topk;
  size_t file; /* the file being searched */
  /* per (file, query) at [file * nq + q]: a PQ index's share of the
   * query's re-rank budget (rerank_shares), SHARE_NONE: no share in it
   * (the file is not searched for that query); NULL / 0: its own default */
  const uint32_t *share;
  size_t nq;
  hs_vidx_hit **hits; /* per worker, room for k */
  hs_status *st;      /* per worker */
  hs_error *err;      /* per worker */
} isearch;

static void search_queries(void *ctx, size_t begin, size_t end, uint32_t worker) {
  isearch *c = ctx;
  /* NULL: every indexed row (no filter, nothing deleted). */
  const roaring_bitmap_t *allowed = c->ix->allowed[c->file];
  for (size_t q = begin; q < end && c->st[worker] == HS_OK; q++) {
    uint32_t n = 0;
    hs_vidx_search_params sp = c->sp;
    if (c->share != NULL) {
      sp.rerank_share = c->share[c->file * c->nq + q];
      if (sp.rerank_share == SHARE_NONE) continue;
    }
    c->st[worker] = hs_vidx_search(c->ix->vx[c->file], c->queries + q * c->dim, (uint32_t)c->k, &sp,
                                   allowed, c->hits[worker], &n, &c->err[worker]);
    for (uint32_t i = 0; c->st[worker] == HS_OK && i < n; i++) {
      hs_vs_hit h = {c->hits[worker][i].distance, (uint32_t)c->file, c->hits[worker][i].row};
      if (!hs_vs_topk_push(&c->topk[q], &h))
        c->st[worker] = hs_error_set(&c->err[worker], HS_ERR_NOMEM, "vector search: OOM");
    }
  }
}

/* The top-k of file f's index for nq queries: at most k, at most its
 * allowed indexed rows. */
static size_t file_k(const hs_vs_indexed *ix, size_t f, size_t k) {
  size_t have = hs_vidx_indexed_count(ix->vx[f]);
  if (ix->allowed[f] != NULL) {
    uint64_t a = roaring_bitmap_get_cardinality(ix->allowed[f]);
    if (a < have) have = (size_t)a;
  }
  return k < have ? k : have;
}

/* On an object store: what every file's search will read (a lean index's
 * re-ranked rows, hs_vidx_search_reads) in one parallel wave for all
 * files and queries, instead of one wave per file searched in turn. The
 * searches that follow find the rows in the object cache. Best effort. */
typedef hs_status (*reads_fn)(const hs_vidx *x, const float *query, uint32_t k,
                              const hs_vidx_search_params *sp, const roaring_bitmap_t *allowed,
                              hs_vidx_reads *out, hs_error *err);

/* A wave's GETs (s3_prefetch.c runs 64 at once: more is another round
 * trip each 64), exact ranges this close sharing one GET already, and
 * the longest range merged here (longer exact ranges are widened). */
#define VS_WAVE_GETS 64
#define VS_WAVE_NEAR ((uint64_t)4 << 10)
#define VS_WAVE_SPAN ((uint64_t)1 << 20)

static int wave_item_cmp(const void *a, const void *b) {
  const hs_store_prefetch_item *x = a, *y = b;
  int c = strcmp(x->uri, y->uri);
  if (c != 0) return c;
  return (x->offset > y->offset) - (x->offset < y->offset);
}

/* Exact ranges v[0, n) merged, within an object, across their smallest
 * gaps until they are one wave's GETs (VS_WAVE_GETS), while the bytes
 * added stay under the bytes asked for (at most twice the bytes read);
 * the number of ranges left. A re-rank of 240 rows scattered over the
 * probed lists of two files was 140 GETs, three round trips, for some
 * queries of bench_s3_cold (src/query/README.md). */
static size_t wave_fit(hs_store_prefetch_item *v, size_t n) {
  if (n <= VS_WAVE_GETS) return n;
  qsort(v, n, sizeof *v, wave_item_cmp);
  size_t m = 0;
  uint64_t asked = 0, added = 0;
  for (size_t i = 0; i < n; i++) {
    asked += v[i].len;
    if (m > 0) {
      hs_store_prefetch_item *l = &v[m - 1];
      uint64_t end = l->offset + l->len, e = v[i].offset + v[i].len;
      if (strcmp(l->uri, v[i].uri) == 0 && v[i].offset <= end + VS_WAVE_NEAR &&
          (e > end ? e : end) - l->offset <= VS_WAVE_SPAN) {
        if (e > end) l->len = (size_t)(e - l->offset);
        continue;
      }
    }
    v[m++] = v[i];
  }
  while (m > VS_WAVE_GETS) {
    size_t best = SIZE_MAX;
    uint64_t gap = UINT64_MAX;
    for (size_t i = 0; i + 1 < m; i++) {
      const hs_store_prefetch_item *a = &v[i], *b = &v[i + 1];
      uint64_t g = b->offset - (a->offset + a->len);
      if (g < gap && strcmp(a->uri, b->uri) == 0 &&
          b->offset + b->len - a->offset <= VS_WAVE_SPAN) {
        gap = g;
        best = i;
      }
    }
    if (best == SIZE_MAX || added + gap > asked) break;
    added += gap;
    v[best].len = (size_t)(v[best + 1].offset + v[best + 1].len - v[best].offset);
    memmove(&v[best + 1], &v[best + 2], (m - best - 2) * sizeof *v);
    m--;
  }
  return m;
}

/* On an object store: what `fn` says every file's search will read, for
 * all files and queries, in one parallel wave of exact ranges (merged to
 * fit one wave where they can: wave_fit). Best effort. */
static void prefetch_wave(const hs_vs_indexed *ix, const float *queries, size_t nq, size_t dim,
                          size_t k, const hs_vidx_search_params *sp, const uint32_t *share,
                          reads_fn fn) {
  size_t n = 0, cap = 0;
  hs_store_prefetch_item *items = NULL;
  for (size_t f = 0; f < ix->n; f++) {
    if (ix->vx[f] == NULL || ix->ipaths[f] == NULL || !hs_store_is_remote(ix->ipaths[f])) continue;
    size_t kf = file_k(ix, f, k);
    if (kf == 0) continue;
    hs_vidx_reads r = {0};
    hs_error local = {0};
    for (size_t q = 0; q < nq; q++) {
      hs_vidx_search_params p = *sp;
      if (share != NULL && (p.rerank_share = share[f * nq + q]) == SHARE_NONE) continue;
      if (fn(ix->vx[f], queries + q * dim, (uint32_t)kf, &p, ix->allowed[f], &r, &local) != HS_OK)
        break;
    }
    if (n + r.n > cap) {
      size_t c = (n + r.n) * 2;
      hs_store_prefetch_item *g = hs_realloc(items, c * sizeof *g);
      if (g != NULL) {
        items = g;
        cap = c;
      }
    }
    for (size_t i = 0; i < r.n && n < cap; i++)
      items[n++] = (hs_store_prefetch_item){ix->ipaths[f], r.off[i], r.len[i], false, true};
    hs_vidx_reads_free(&r);
  }
  if (n > 0) (void)hs_store_prefetch(items, wave_fit(items, n));
  hs_free(items);
}

/* One candidate of a query's shared re-rank: approximate distance, file. */
typedef struct share_cand {
  float d;
  uint32_t file;
} share_cand;

static int share_cand_cmp(const void *a, const void *b) {
  const share_cand *x = a, *y = b;
  if (x->d < y->d) return -1;
  if (x->d > y->d) return 1;
  return (x->file > y->file) - (x->file < y->file);
}

/* With two or more PQ indexes: one re-rank budget per query over all
 * files (README.md "IVF-PQ lists"). Each file's re-rank candidates
 * (hs_vidx_search_cands) are merged, the best 1.5 hs_vidx_pq_rerank(k) kept,
 * and each file re-ranks its own among those (*out[f * nq + q]; SHARE_NONE:
 * none, its search is skipped; 0: the file's own default, where its search
 * has no PQ candidates). Instead of pq_rerank(k) rows per file: one
 * budget, so the exact rows a cold query fetches do not grow with the
 * files. The same wherever the indexes live. *out NULL:
 * fewer than two PQ indexes (nothing shared). */
static hs_status rerank_shares(const hs_vs_indexed *ix, const float *queries, size_t nq, size_t dim,
                               size_t k, const hs_vidx_search_params *sp, uint32_t **out,
                               hs_error *err) {
  *out = NULL;
  size_t pq = 0;
  for (size_t f = 0; f < ix->n; f++)
    pq += ix->vx[f] != NULL && hs_vidx_quant_kind(ix->vx[f]) == HS_QUANT_PQ && file_k(ix, f, k) > 0;
  if (pq < 2 || nq == 0) return HS_OK;
  uint32_t *share = hs_calloc(ix->n * nq, sizeof *share);
  hs_vidx_cands *cands = hs_calloc(ix->n, sizeof *cands);
  share_cand *all = NULL;
  size_t all_cap = 0;
  hs_status st = share != NULL && cands != NULL
                     ? HS_OK
                     : hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  /* 1.5 times one file's default (160 for k = 10): on bench_s3_cold's two
   * files (IVF-PQ lists, 768-d) recall@10 was 0.93 at 160 (10 queries),
   * 0.995 at 240 (20), 0.98 at 320 (10) */
  const uint64_t dflt = hs_vidx_pq_rerank((uint32_t)k);
  for (size_t q = 0; st == HS_OK && q < nq; q++) {
    size_t m = 0;
    /* the most any file would re-rank alone: walks (1.5 x it below) and a
     * filter's PQ scans (`scan`: every allowed row scored, so the global
     * best `scan` over the files is what one file of all the rows re-ranks) */
    uint64_t one = 0, scan = 0;
    for (size_t f = 0; st == HS_OK && f < ix->n; f++) {
      cands[f].n = 0;
      cands[f].applies = false;
      cands[f].rerank = 0;
      cands[f].scan = false;
      if (ix->vx[f] == NULL || hs_vidx_quant_kind(ix->vx[f]) != HS_QUANT_PQ) continue;
      size_t kf = file_k(ix, f, k);
      if (kf == 0) continue;
      st = hs_vidx_search_cands(ix->vx[f], queries + q * dim, (uint32_t)kf, sp, ix->allowed[f],
                                &cands[f], err);
      if (st != HS_OK) {
        hs_error_prefix(err, "%s: ", ix->paths[f]);
        break;
      }
      if (!cands[f].applies) continue;
      uint64_t own = cands[f].rerank ? cands[f].rerank : dflt;
      if (cands[f].scan) {
        if (own > scan) scan = own;
      } else if (own > one) {
        one = own;
      }
      if (m + cands[f].n > all_cap) {
        size_t c = (m + cands[f].n) * 2;
        share_cand *g = hs_realloc(all, c * sizeof *g);
        if (g == NULL) {
          st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
          break;
        }
        all = g;
        all_cap = c;
      }
      for (size_t i = 0; i < cands[f].n; i++)
        all[m++] = (share_cand){cands[f].approx[i], (uint32_t)f};
    }
    if (st != HS_OK) break;
    qsort(all, m, sizeof *all, share_cand_cmp);
    const size_t budget = (size_t)(one + one / 2 > scan ? one + one / 2 : scan);
    for (size_t f = 0; f < ix->n; f++)
      if (cands[f].applies) share[f * nq + q] = SHARE_NONE;
    for (size_t i = 0; i < m && i < budget; i++) {
      uint32_t *v = &share[all[i].file * nq + q];
      *v = *v == SHARE_NONE ? 1 : *v + 1;
    }
  }
  for (size_t f = 0; cands != NULL && f < ix->n; f++) hs_vidx_cands_free(&cands[f]);
  hs_free(cands);
  hs_free(all);
  if (st != HS_OK) {
    hs_free(share);
    return st;
  }
  *out = share;
  return HS_OK;
}

hs_status hs_vs_indexed_search(const hs_vs_indexed *ix, const float *queries, size_t nq, size_t dim,
                               size_t k, uint32_t ef_search, uint32_t nprobe, uint32_t threads,
                               hs_vs_topk *topk, int64_t *files_searched, hs_error *err) {
  if (ix->n_indexed == 0) return HS_OK;
  if (threads == 0) threads = hs_parallel_cores();
  if (threads > nq) threads = (uint32_t)nq;
  isearch c = {.ix = ix, .queries = queries, .dim = dim, .topk = topk};
  c.sp.ef_search = ef_search;
  c.sp.nprobe = nprobe;
  c.sp.scan_ranges = scan_ranges_for(ix->n_indexed);
  c.hits = hs_calloc(threads, sizeof *c.hits);
  c.st = hs_calloc(threads, sizeof *c.st);
  c.err = hs_calloc(threads, sizeof *c.err);
  hs_status st = HS_OK;
  if (c.hits == NULL || c.st == NULL || c.err == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  uint32_t *share = NULL;
  /* the probed lists' codes (partial indexes), then the shares, then the
   * re-ranked rows: one wave each for all files */
  if (st == HS_OK) prefetch_wave(ix, queries, nq, dim, k, &c.sp, NULL, hs_vidx_search_parts_reads);
  if (st == HS_OK) st = rerank_shares(ix, queries, nq, dim, k, &c.sp, &share, err);
  if (st == HS_OK) prefetch_wave(ix, queries, nq, dim, k, &c.sp, share, hs_vidx_search_reads);
  c.share = share;
  c.nq = nq;
  for (size_t f = 0; st == HS_OK && f < ix->n; f++) {
    if (ix->vx[f] == NULL) continue;
    c.k = file_k(ix, f, k);
    if (c.k == 0) continue;
    c.file = f;
    for (uint32_t w = 0; st == HS_OK && w < threads; w++) {
      hs_free(c.hits[w]);
      if ((c.hits[w] = hs_malloc(c.k * sizeof *c.hits[w])) == NULL)
        st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
    }
    if (st != HS_OK) break;
    (*files_searched)++;
    if (threads > 1)
      hs_parallel_for(nq, 1, threads, search_queries, &c);
    else
      search_queries(&c, 0, nq, 0);
    for (uint32_t w = 0; st == HS_OK && w < threads; w++) {
      if (c.st[w] != HS_OK) {
        st = hs_error_set(err, c.st[w], "%s", c.err[w].message);
        hs_error_prefix(err, "%s: ", ix->paths[f]);
      }
    }
  }
  for (uint32_t w = 0; c.hits != NULL && w < threads; w++) hs_free(c.hits[w]);
  hs_free(share);
  hs_free(c.hits);
  hs_free(c.st);
  hs_free(c.err);
  return st;
}
