/*
 * deletes_cache.c — position delete files' contents kept per process
 * (deletes_cache.h): per file, its data files' positions as Roaring
 * bitmaps, sorted by data file path.
 */
#include "deletes_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct pd_target {
  char *data_file;
  roaring_bitmap_t *rows;
} pd_target;

typedef struct pd_entry {
  char *path;
  int64_t size;
  pd_target *targets;
  size_t n;
  uint64_t positions;
  uint64_t used_at;
} pd_entry;

static pthread_mutex_t pd_mu = PTHREAD_MUTEX_INITIALIZER;
static pd_entry *pd[HS_POSDEL_CACHE_ENTRIES];
static size_t pd_n;
static uint64_t pd_positions, pd_tick;

static void entry_free(pd_entry *e) {
  if (e == NULL) return;
  for (size_t i = 0; i < e->n; i++) {
    hs_free(e->targets[i].data_file);
    roaring_bitmap_free(e->targets[i].rows);
  }
  hs_free(e->targets);
  hs_free(e->path);
  hs_free(e);
}

/* Remove slot i (lock held); returns the entry for freeing outside. */
static pd_entry *take(size_t i) {
  pd_entry *e = pd[i];
  pd_positions -= e->positions;
  pd[i] = pd[--pd_n];
  pd[pd_n] = NULL;
  return e;
}

static ssize_t find(const char *path) {
  for (size_t i = 0; i < pd_n; i++)
    if (strcmp(pd[i]->path, path) == 0) return (ssize_t)i;
  return -1;
}

bool hs_posdel_cache_apply(const char *path, int64_t size, hs_posdel_cache_fn fn, void *ctx,
                           hs_status *st, hs_error *err) {
  *st = HS_OK;
  pthread_mutex_lock(&pd_mu);
  ssize_t i = find(path);
  bool hit = i >= 0 && pd[i]->size == size;
  if (hit) {
    pd_entry *e = pd[i];
    e->used_at = ++pd_tick;
    for (size_t k = 0; *st == HS_OK && k < e->n; k++)
      *st = fn(ctx, e->targets[k].data_file, e->targets[k].rows, err);
  }
  pthread_mutex_unlock(&pd_mu);
  return hit;
}

static int target_cmp(const void *a, const void *b) {
  return strcmp(((const pd_target *)a)->data_file, ((const pd_target *)b)->data_file);
}

void hs_posdel_cache_put(const char *path, int64_t size, const hs_table_delete_group *groups,
                         size_t n) {
  uint64_t positions = 0;
  for (size_t i = 0; i < n; i++) positions += roaring_bitmap_get_cardinality(groups[i].rows);
  if (positions > HS_POSDEL_CACHE_POSITIONS / 4) return; /* one file may not take the cache */
  pd_entry *e = hs_calloc(1, sizeof *e);
  if (e == NULL) return;
  e->path = hs_strdup(path);
  e->targets = hs_calloc(n ? n : 1, sizeof *e->targets);
  bool ok = e->path != NULL && e->targets != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    e->targets[i].data_file = hs_strdup(groups[i].data_file);
    e->targets[i].rows = roaring_bitmap_copy(groups[i].rows);
    e->n = i + 1;
    ok = e->targets[i].data_file != NULL && e->targets[i].rows != NULL;
  }
  if (!ok) {
    entry_free(e);
    return;
  }
  qsort(e->targets, e->n, sizeof *e->targets, target_cmp);
  e->size = size;
  e->positions = positions;
  pd_entry *gone[HS_POSDEL_CACHE_ENTRIES + 1];
  size_t n_gone = 0;
  pthread_mutex_lock(&pd_mu);
  ssize_t old = find(path);
  if (old >= 0) gone[n_gone++] = take((size_t)old);
  while (pd_n > 0 && (pd_n >= HS_POSDEL_CACHE_ENTRIES ||
                      pd_positions + positions > HS_POSDEL_CACHE_POSITIONS)) {
    size_t lru = 0;
    for (size_t i = 1; i < pd_n; i++)
      if (pd[i]->used_at < pd[lru]->used_at) lru = i;
    gone[n_gone++] = take(lru);
  }
  e->used_at = ++pd_tick;
  pd[pd_n++] = e;
  pd_positions += positions;
  pthread_mutex_unlock(&pd_mu);
  for (size_t i = 0; i < n_gone; i++) entry_free(gone[i]);
}

void hs_posdel_cache_clear(void) {
  pthread_mutex_lock(&pd_mu);
  while (pd_n > 0) entry_free(take(pd_n - 1));
  pthread_mutex_unlock(&pd_mu);
}
