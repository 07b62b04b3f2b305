/*
 * plan_manifests.c — parsed manifests shared by every plan of the process
 * (see plan_manifests.h for what is cached, keyed how, and who owns what).
 *
 * Before, plans were cached only whole, per manifest list: a delete or an
 * append (a new list) re-read and re-parsed every manifest of the table,
 * and resolved and link-checked every entry's path again (two lstat each),
 * ~20-25 % of a 0.1 % delete's CPU at 10 data files. Now a new snapshot's
 * plan parses only the manifests it adds; each other costs one stat.
 *
 * Bounds: at most PM_MAX manifests and PM_COST_MAX bytes (an estimate: the
 * arena block plus four times the file's bytes); unreferenced entries are
 * evicted least recently used first. Manifests of files that cannot be
 * stamped, or with an entry whose path does not resolve, are not cached
 * (returned to the caller alone).
 */
#include "plan_manifests.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../io/store.h"

#define PM_MAX 1024
#define PM_BUCKETS 2048 /* a power of two */
#define PM_COST_MAX ((size_t)128 << 20)
#define PM_BLOCK_BYTES ((size_t)16 << 10)

static pthread_mutex_t pm_mu = PTHREAD_MUTEX_INITIALIZER;
static hs_plan_manifest *pm_bucket[PM_BUCKETS];
static size_t pm_n, pm_cost;
static uint64_t pm_tick, pm_parsed, pm_served;

static uint64_t fnv(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

static bool str_eq(const char *a, const char *b) {
  return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void pm_free(hs_plan_manifest *m) {
  hs_arena_reset(&m->arena);
  hs_free(m);
}

void hs_plan_manifest_unref(hs_plan_manifest *m) {
  if (m == NULL) return;
  pthread_mutex_lock(&pm_mu);
  bool last = --m->refs == 0;
  pthread_mutex_unlock(&pm_mu);
  if (last) pm_free(m);
}

void hs_plan_manifest_stats(uint64_t *parsed, uint64_t *served) {
  pthread_mutex_lock(&pm_mu);
  *parsed = pm_parsed;
  *served = pm_served;
  pthread_mutex_unlock(&pm_mu);
}

/* The stamp of a local file or a store object (plans of anything else
 * are not cached); as plan.c's. */
static bool stamp_of(const char *path, hs_fs_stamp *st) {
  return (path[0] == '/' || hs_store_is_remote(path)) && hs_store_stamp_of(path, st);
}

static bool key_eq(const hs_plan_manifest *m, const hs_table *t, const char *path, uint64_t h,
                   const hs_fs_stamp *stamp, const hs_iceberg_manifest_file *mf) {
  return m->hash == h && hs_fs_stamp_equal(&m->stamp, stamp) &&
         m->added_snapshot_id == mf->added_snapshot_id &&
         m->sequence_number == mf->sequence_number && m->has_first_row_id == mf->has_first_row_id &&
         (!mf->has_first_row_id || m->first_row_id == mf->first_row_id) &&
         strcmp(m->resolved, path) == 0 && str_eq(m->root, t->root) &&
         str_eq(m->alias, t->location_alias) && str_eq(m->manifest_path, mf->manifest_path);
}

static hs_plan_manifest *pm_find(const hs_table *t, const char *path, uint64_t h,
                                 const hs_fs_stamp *stamp, const hs_iceberg_manifest_file *mf) {
  hs_plan_manifest *hit = NULL;
  pthread_mutex_lock(&pm_mu);
  for (hs_plan_manifest *m = pm_bucket[h & (PM_BUCKETS - 1)]; m != NULL && hit == NULL; m = m->next)
    if (key_eq(m, t, path, h, stamp, mf)) hit = m;
  if (hit != NULL) {
    hit->refs++;
    hit->used_at = ++pm_tick;
    pm_served++;
  }
  pthread_mutex_unlock(&pm_mu);
  return hit;
}

/* Unlink m from its chain (under pm_mu). */
static void pm_unlink(hs_plan_manifest *m) {
  hs_plan_manifest **pp = &pm_bucket[m->hash & (PM_BUCKETS - 1)];
  while (*pp != NULL && *pp != m) pp = &(*pp)->next;
  if (*pp == m) *pp = m->next;
  m->next = NULL;
  pm_n--;
  pm_cost -= m->cost;
}

/* Cache m (its reference for the caller kept, one more for the cache),
 * evicting unreferenced entries, least recently used first, past the
 * bounds; an entry with the same key (another thread parsed it too)
 * is replaced. When nothing can be evicted m simply stays uncached. */
static void pm_put(hs_plan_manifest *m) {
  hs_plan_manifest *gone[8];
  size_t n_gone = 0;
  pthread_mutex_lock(&pm_mu);
  for (hs_plan_manifest **pp = &pm_bucket[m->hash & (PM_BUCKETS - 1)]; *pp != NULL;
       pp = &(*pp)->next) {
    hs_plan_manifest *o = *pp;
    if (o->hash == m->hash && hs_fs_stamp_equal(&o->stamp, &m->stamp) &&
        strcmp(o->resolved, m->resolved) == 0 && o->added_snapshot_id == m->added_snapshot_id &&
        o->sequence_number == m->sequence_number) {
      pm_unlink(o);
      gone[n_gone++] = o;
      break;
    }
  }
  while ((pm_n >= PM_MAX || pm_cost + m->cost > PM_COST_MAX) && n_gone < 8) {
    hs_plan_manifest *lru = NULL;
    for (size_t b = 0; b < PM_BUCKETS; b++)
      for (hs_plan_manifest *o = pm_bucket[b]; o != NULL; o = o->next)
        if (o->refs == 1 && (lru == NULL || o->used_at < lru->used_at)) lru = o;
    if (lru == NULL) break;
    pm_unlink(lru);
    gone[n_gone++] = lru;
  }
  bool fits = pm_n < PM_MAX && pm_cost + m->cost <= PM_COST_MAX;
  if (fits) {
    size_t b = m->hash & (PM_BUCKETS - 1);
    m->next = pm_bucket[b];
    pm_bucket[b] = m;
    m->refs++;
    m->used_at = ++pm_tick;
    pm_n++;
    pm_cost += m->cost;
  }
  /* The evicted: the cache's reference dropped (freed when no plan holds
   * them any more). */
  for (size_t i = 0; i < n_gone; i++) {
    if (--gone[i]->refs == 0) {
      pthread_mutex_unlock(&pm_mu);
      pm_free(gone[i]);
      pthread_mutex_lock(&pm_mu);
    }
  }
  pthread_mutex_unlock(&pm_mu);
}

/* Entry k's path resolved inside the table (README invariant I6) and
 * link-checked, into m's arena; errors name the manifest and the entry. */
static hs_status resolve_entry(const hs_table *t, const char *manifest_path,
                               const hs_iceberg_manifest_entry *e, size_t k, hs_arena *arena,
                               const char **out, hs_error *err) {
  char what[64];
  snprintf(what, sizeof what, "manifest entry %zu", k);
  char *path = NULL;
  hs_status st = hs_table_resolve_path(t, e->data_file.file_path, what, &path, err);
  if (st == HS_OK && (st = hs_table_check_links(t, path, what, err)) != HS_OK) hs_free(path);
  if (st != HS_OK) {
    hs_error_prefix(err, "%s: ", manifest_path);
    return st;
  }
  *out = arena != NULL ? hs_arena_strndup(arena, path, strlen(path)) : NULL;
  hs_free(path);
  return arena == NULL || *out != NULL
             ? HS_OK
             : hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
}

hs_status hs_plan_manifest_entry_path(const hs_table *t, const hs_plan_manifest *m, size_t k,
                                      hs_arena *arena, const char **out, hs_error *err) {
  if (m->paths[k] != NULL) {
    *out = m->paths[k];
    return HS_OK;
  }
  /* Only a manifest that is not cached has entries without a path. */
  return resolve_entry(t, m->manifest_path, &m->man.entries[k], k, arena, out, err);
}

static const char *dup_or_null(hs_arena *a, const char *s, bool *ok) {
  if (s == NULL) return NULL;
  const char *c = hs_arena_strndup(a, s, strlen(s));
  if (c == NULL) *ok = false;
  return c;
}

hs_status hs_plan_manifest_get(const hs_table *t, const hs_iceberg_manifest_file *mf, hs_buf *buf,
                               hs_plan_manifest **out, hs_error *err) {
  *out = NULL;
  char *path = NULL;
  hs_fs_stamp stamp;
  memset(&stamp, 0, sizeof stamp);
  bool stamped = false;
  uint64_t h = 0;
  if (mf->manifest_path != NULL &&
      hs_table_resolve_path(t, mf->manifest_path, "manifest", &path, NULL) == HS_OK) {
    stamped = stamp_of(path, &stamp);
    h = fnv(path);
    if (stamped && (*out = pm_find(t, path, h, &stamp, mf)) != NULL) {
      hs_free(path);
      return HS_OK;
    }
  }
  buf->len = 0;
  hs_status st = hs_table_read_avro(t, mf->manifest_path, "manifest", buf, err);
  if (st != HS_OK) {
    hs_free(path);
    return st;
  }
  hs_plan_manifest *m = hs_calloc(1, sizeof *m);
  if (m == NULL) {
    hs_free(path);
    return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
  }
  hs_arena_init(&m->arena);
  m->arena.block_bytes = PM_BLOCK_BYTES;
  m->refs = 1;
  st = hs_iceberg_manifest_read(buf->data, buf->len, mf, &m->arena, &m->man, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "%s: ", mf->manifest_path);
    hs_free(path);
    pm_free(m);
    return st;
  }
  m->len = buf->len;
  bool ok = true;
  m->manifest_path = dup_or_null(&m->arena, mf->manifest_path, &ok);
  m->resolved = dup_or_null(&m->arena, path, &ok);
  m->root = dup_or_null(&m->arena, t->root, &ok);
  m->alias = dup_or_null(&m->arena, t->location_alias, &ok);
  hs_free(path);
  m->stamp = stamp;
  m->stamped = stamped && m->resolved != NULL;
  m->hash = h;
  m->added_snapshot_id = mf->added_snapshot_id;
  m->sequence_number = mf->sequence_number;
  m->has_first_row_id = mf->has_first_row_id;
  m->first_row_id = mf->first_row_id;
  m->cost = PM_BLOCK_BYTES + 4 * m->len;
  m->paths =
      m->man.n_entries ? hs_arena_alloc(&m->arena, m->man.n_entries * sizeof *m->paths) : NULL;
  if (!ok || (m->man.n_entries && m->paths == NULL)) {
    pm_free(m);
    return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
  }
  bool clean = true;
  for (size_t k = 0; k < m->man.n_entries; k++) {
    const hs_iceberg_manifest_entry *e = &m->man.entries[k];
    if (e->status == HS_ICE_ENTRY_DELETED) continue;
    hs_error ignored;
    memset(&ignored, 0, sizeof ignored);
    if (resolve_entry(t, m->manifest_path, e, k, &m->arena, &m->paths[k], &ignored) != HS_OK) {
      m->paths[k] = NULL;
      clean = false;
    }
  }
  pthread_mutex_lock(&pm_mu);
  pm_parsed++;
  pthread_mutex_unlock(&pm_mu);
  if (m->stamped && clean) pm_put(m);
  *out = m;
  return HS_OK;
}
