/*
 * page_cache.c — the process-wide cache of things derived from a page's
 * bytes (page_read.h): DELTA_BINARY_PACKED directories (per miniblock) behind row
 * gather of delta pages, and decoded dictionaries.
 *
 * Deriving them costs about a page's decode (a dictionary page also its
 * decompression), so a selection that reads a few rows of a chunk would
 * pay that on every query. Data files are written once and stay open
 * between queries (hs_parquet_reader_open_shared), so a derived object is
 * kept under the key of the bytes it comes from: the file's hs_fs_stamp
 * (device, inode, size, mtime, taken when the source was opened), the
 * page's offset in the file, the length of its bytes and the kind. A
 * rewritten file has another stamp; its old entries are never hit again
 * and age out.
 *
 * Entries are reference counted: the cache holds one reference, each
 * borrower another, so eviction (least recently used first, beyond
 * HS_PQ_PAGE_CACHE_BYTES) never frees an object in use. One mutex guards
 * the hash chains and the LRU list; objects are built and freed outside
 * it. Two threads missing the same page both build it; the second to
 * insert uses the first one's and frees its own.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "page_read.h"

struct hs_pq_cached {
  atomic_int refs;
  hs_fs_stamp stamp;
  uint64_t offset;
  size_t len;
  int kind;
  size_t bytes; /* charged to the cache */
  void *obj;
  void (*free_obj)(void *);
  hs_pq_cached *chain;         /* next in the hash bucket */
  hs_pq_cached *newer, *older; /* LRU list */
};

#define PC_BUCKETS 4096

static pthread_mutex_t pc_mu = PTHREAD_MUTEX_INITIALIZER;
static hs_pq_cached *pc_bucket[PC_BUCKETS];
static hs_pq_cached *pc_newest, *pc_oldest;
static size_t pc_bytes;

static size_t pc_hash(const hs_fs_stamp *s, uint64_t offset, int kind) {
  uint64_t h = s->ino * 0x9E3779B97F4A7C15ull ^ s->dev ^ (uint64_t)s->mtime_ns;
  h = (h ^ offset ^ ((uint64_t)kind << 56)) * 0xBF58476D1CE4E5B9ull;
  return (size_t)(h >> 52) % PC_BUCKETS;
}

static void pc_unref(hs_pq_cached *e) {
  if (e == NULL || atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) > 1) return;
  if (e->free_obj != NULL) e->free_obj(e->obj);
  hs_free(e);
}

/* Under pc_mu. */
static void pc_lru_unlink(hs_pq_cached *e) {
  if (e->newer)
    e->newer->older = e->older;
  else
    pc_newest = e->older;
  if (e->older)
    e->older->newer = e->newer;
  else
    pc_oldest = e->newer;
  e->newer = e->older = NULL;
}

static void pc_lru_push(hs_pq_cached *e) {
  e->older = pc_newest;
  e->newer = NULL;
  if (pc_newest) pc_newest->newer = e;
  pc_newest = e;
  if (pc_oldest == NULL) pc_oldest = e;
}

/* Unlink e from the cache; the cache's reference goes to the caller. */
static void pc_remove(hs_pq_cached *e) {
  hs_pq_cached **p = &pc_bucket[pc_hash(&e->stamp, e->offset, e->kind)];
  while (*p != e) p = &(*p)->chain;
  *p = e->chain;
  e->chain = NULL;
  pc_lru_unlink(e);
  pc_bytes -= e->bytes;
}

/* A cached entry of the key, with a reference taken for the caller. Under pc_mu. */
static hs_pq_cached *pc_find(const hs_fs_stamp *stamp, uint64_t offset, size_t len, int kind) {
  for (hs_pq_cached *e = pc_bucket[pc_hash(stamp, offset, kind)]; e != NULL; e = e->chain) {
    if (e->offset == offset && e->len == len && e->kind == kind &&
        hs_fs_stamp_equal(&e->stamp, stamp)) {
      atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
      pc_lru_unlink(e);
      pc_lru_push(e);
      return e;
    }
  }
  return NULL;
}

hs_pq_cached *hs_pq_cache_find(const hs_fs_stamp *stamp, uint64_t offset, size_t len, int kind) {
  if (stamp == NULL) return NULL;
  pthread_mutex_lock(&pc_mu);
  hs_pq_cached *hit = pc_find(stamp, offset, len, kind);
  pthread_mutex_unlock(&pc_mu);
  return hit;
}

hs_pq_cached *hs_pq_cache_add(const hs_fs_stamp *stamp, uint64_t offset, size_t len, int kind,
                              void *obj, size_t bytes, void (*free_obj)(void *)) {
  hs_pq_cached *e = hs_calloc(1, sizeof *e);
  if (e == NULL) {
    if (free_obj != NULL) free_obj(obj);
    return NULL;
  }
  atomic_init(&e->refs, 1);
  e->offset = offset;
  e->len = len;
  e->kind = kind;
  e->obj = obj;
  e->free_obj = free_obj;
  e->bytes = bytes + sizeof *e;
  if (stamp == NULL || e->bytes > HS_PQ_PAGE_CACHE_BYTES / 4) return e; /* the caller's alone */
  e->stamp = *stamp;
  hs_pq_cached *mine = e, *evicted = NULL;
  pthread_mutex_lock(&pc_mu);
  hs_pq_cached *other = pc_find(stamp, offset, len, kind);
  if (other != NULL) {
    e = other; /* built meanwhile by another thread; ours goes */
  } else {
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed); /* the cache's */
    size_t b = pc_hash(&e->stamp, e->offset, e->kind);
    e->chain = pc_bucket[b];
    pc_bucket[b] = e;
    pc_lru_push(e);
    pc_bytes += e->bytes;
    mine = NULL;
    /* Evict from the old end; freed after unlocking, chained by `chain`. */
    while (pc_bytes > HS_PQ_PAGE_CACHE_BYTES && pc_oldest != e) {
      hs_pq_cached *old = pc_oldest;
      pc_remove(old);
      old->chain = evicted;
      evicted = old;
    }
  }
  pthread_mutex_unlock(&pc_mu);
  if (mine != NULL) pc_unref(mine);
  while (evicted != NULL) {
    hs_pq_cached *next = evicted->chain;
    pc_unref(evicted);
    evicted = next;
  }
  return e;
}

void *hs_pq_cached_obj(const hs_pq_cached *c) {
  return c != NULL ? c->obj : NULL;
}

void hs_pq_cache_put(hs_pq_cached *c) {
  pc_unref(c);
}

void hs_pq_cache_clear(void) {
  hs_pq_cached *gone = NULL;
  pthread_mutex_lock(&pc_mu);
  while (pc_oldest != NULL) {
    hs_pq_cached *e = pc_oldest;
    pc_remove(e);
    e->chain = gone;
    gone = e;
  }
  pthread_mutex_unlock(&pc_mu);
  while (gone != NULL) {
    hs_pq_cached *next = gone->chain;
    pc_unref(gone);
    gone = next;
  }
}
