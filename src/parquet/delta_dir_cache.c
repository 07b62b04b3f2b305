/*
 * delta_dir_cache.c — the process-wide cache of DELTA_BINARY_PACKED block
 * directories (page_read.h) behind row gather of delta pages.
 *
 * Building a page's directory walks the whole page (about what decoding it
 * costs), so a selection that reads a few rows of the page only gains from
 * the second query on. Data files are written once and stay open between
 * queries (hs_parquet_reader_open_shared), so a directory is kept under
 * the key of the bytes it describes: the file's hs_fs_stamp (device, inode,
 * size, mtime, taken when the source was opened), the page's offset in the
 * file and the length of its value stream. A rewritten file has another
 * stamp; its old entries are never hit again and age out.
 *
 * Entries are reference counted: the cache holds one reference, each
 * borrower another, so eviction (least recently used first, beyond
 * HS_PQ_DELTA_CACHE_BYTES) never frees a directory in use. One mutex
 * guards the hash chains and the LRU list; directories are built and
 * freed outside it. Two threads missing the same page both build it; the
 * second to insert uses the first one's and frees its own.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "page_read.h"

struct hs_pq_delta_ref {
  atomic_int refs;
  hs_fs_stamp stamp;
  uint64_t offset;
  size_t vlen;
  size_t bytes; /* charged to the cache */
  hs_delta_dir dir;
  hs_pq_delta_ref *chain;         /* next in the hash bucket */
  hs_pq_delta_ref *newer, *older; /* LRU list */
};

#define DD_BUCKETS 4096

static pthread_mutex_t dd_mu = PTHREAD_MUTEX_INITIALIZER;
static hs_pq_delta_ref *dd_bucket[DD_BUCKETS];
static hs_pq_delta_ref *dd_newest, *dd_oldest;
static size_t dd_bytes;

static size_t dd_hash(const hs_fs_stamp *s, uint64_t offset) {
  uint64_t h = s->ino * 0x9E3779B97F4A7C15ull ^ s->dev ^ (uint64_t)s->mtime_ns;
  h = (h ^ offset) * 0xBF58476D1CE4E5B9ull;
  return (size_t)(h >> 52) % DD_BUCKETS;
}

static void dd_unref(hs_pq_delta_ref *e) {
  if (e == NULL || atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) > 1) return;
  hs_delta_dir_free(&e->dir);
  hs_free(e);
}

/* Under dd_mu. */
static void dd_lru_unlink(hs_pq_delta_ref *e) {
  if (e->newer)
    e->newer->older = e->older;
  else
    dd_newest = e->older;
  if (e->older)
    e->older->newer = e->newer;
  else
    dd_oldest = e->newer;
  e->newer = e->older = NULL;
}

static void dd_lru_push(hs_pq_delta_ref *e) {
  e->older = dd_newest;
  e->newer = NULL;
  if (dd_newest) dd_newest->newer = e;
  dd_newest = e;
  if (dd_oldest == NULL) dd_oldest = e;
}

/* Unlink e from the cache; the cache's reference goes to the caller. */
static void dd_remove(hs_pq_delta_ref *e) {
  hs_pq_delta_ref **p = &dd_bucket[dd_hash(&e->stamp, e->offset)];
  while (*p != e) p = &(*p)->chain;
  *p = e->chain;
  e->chain = NULL;
  dd_lru_unlink(e);
  dd_bytes -= e->bytes;
}

/* A cached entry of the key, with a reference taken for the caller. */
static hs_pq_delta_ref *dd_find(const hs_fs_stamp *stamp, uint64_t offset, size_t vlen) {
  for (hs_pq_delta_ref *e = dd_bucket[dd_hash(stamp, offset)]; e != NULL; e = e->chain) {
    if (e->offset == offset && e->vlen == vlen && hs_fs_stamp_equal(&e->stamp, stamp)) {
      atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
      dd_lru_unlink(e);
      dd_lru_push(e);
      return e;
    }
  }
  return NULL;
}

hs_status hs_pq_delta_dir_get(const hs_pq_gather_page *pg, const hs_delta_dir **dir,
                              hs_pq_delta_ref **ref, hs_error *err) {
  *dir = NULL;
  *ref = NULL;
  if (pg->stamp != NULL) {
    pthread_mutex_lock(&dd_mu);
    hs_pq_delta_ref *hit = dd_find(pg->stamp, pg->offset, pg->vlen);
    pthread_mutex_unlock(&dd_mu);
    if (hit != NULL) {
      *dir = &hit->dir;
      *ref = hit;
      return HS_OK;
    }
  }
  hs_pq_delta_ref *e = hs_calloc(1, sizeof *e);
  if (e == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory for a delta directory");
  uint64_t total_max = pg->n_levels > 0 ? (uint64_t)pg->n_levels : 0;
  hs_status st = hs_delta_dir_build(pg->vals, pg->vlen, total_max, &e->dir, err);
  if (st != HS_OK) {
    hs_free(e);
    return st;
  }
  atomic_init(&e->refs, 1);
  e->offset = pg->offset;
  e->vlen = pg->vlen;
  e->bytes = hs_delta_dir_bytes(&e->dir) + sizeof *e;
  hs_pq_delta_ref *mine = e, *evicted = NULL;
  if (pg->stamp != NULL && e->bytes <= HS_PQ_DELTA_CACHE_BYTES / 4) {
    e->stamp = *pg->stamp;
    pthread_mutex_lock(&dd_mu);
    hs_pq_delta_ref *other = dd_find(pg->stamp, pg->offset, pg->vlen);
    if (other != NULL) {
      e = other; /* built meanwhile by another thread; ours goes */
    } else {
      atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed); /* the cache's */
      size_t b = dd_hash(&e->stamp, e->offset);
      e->chain = dd_bucket[b];
      dd_bucket[b] = e;
      dd_lru_push(e);
      dd_bytes += e->bytes;
      mine = NULL;
      /* Evict from the old end; freed after unlocking, chained by `chain`. */
      while (dd_bytes > HS_PQ_DELTA_CACHE_BYTES && dd_oldest != e) {
        hs_pq_delta_ref *old = dd_oldest;
        dd_remove(old);
        old->chain = evicted;
        evicted = old;
      }
    }
    pthread_mutex_unlock(&dd_mu);
    if (mine != NULL) dd_unref(mine);
    while (evicted != NULL) {
      hs_pq_delta_ref *next = evicted->chain;
      dd_unref(evicted);
      evicted = next;
    }
  }
  *dir = &e->dir;
  *ref = e;
  return HS_OK;
}

void hs_pq_delta_dir_put(hs_pq_delta_ref *ref) {
  dd_unref(ref);
}

void hs_pq_delta_cache_clear(void) {
  hs_pq_delta_ref *gone = NULL;
  pthread_mutex_lock(&dd_mu);
  while (dd_oldest != NULL) {
    hs_pq_delta_ref *e = dd_oldest;
    dd_remove(e);
    e->chain = gone;
    gone = e;
  }
  pthread_mutex_unlock(&dd_mu);
  while (gone != NULL) {
    hs_pq_delta_ref *next = gone->chain;
    dd_unref(gone);
    gone = next;
  }
}
