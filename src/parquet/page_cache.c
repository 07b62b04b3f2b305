/*
 * page_cache.c — the process-wide cache of things derived from a page's
 * bytes (page_read.h): DELTA_BINARY_PACKED directories (per miniblock) behind row
 * gather of delta pages, decoded dictionaries, and (at the end of the file)
 * the set of pages whose CRC was verified.
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

size_t hs_pq_cached_bytes(const hs_pq_cached *c) {
  return c != NULL ? c->bytes : 0;
}

void hs_pq_cache_put(hs_pq_cached *c) {
  pc_unref(c);
}

static void vp_clear(void);

void hs_pq_cache_clear(void) {
  vp_clear();
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

/* ------------------------------------------------- verified pages
 *
 * Pages whose CRC was checked, so that a row gather (which reads a few
 * rows of a page in place) pays the whole page's CRC once per process and
 * file version instead of every query. A set of fixed size: VP_SETS sets
 * of VP_WAYS slots, an entry replaced round robin within its set when the
 * set is full; forgetting one only costs a re-verification. The key is
 * the file's stamp, the page header's offset, the page's stored length
 * and its stored CRC (a header that changed is a different page). Slots
 * are guarded by striped mutexes (a lookup is a few compares). */
#define VP_SETS 2048
#define VP_WAYS 4
#define VP_STRIPES 64

typedef struct vp_slot {
  hs_fs_stamp stamp;
  uint64_t offset_plus1; /* 0: empty */
  uint32_t len, crc;
} vp_slot;

static vp_slot vp_slots[VP_SETS][VP_WAYS];
static uint8_t vp_next[VP_SETS]; /* the way to replace next */
static pthread_mutex_t vp_mu[VP_STRIPES];
static pthread_once_t vp_once = PTHREAD_ONCE_INIT;

static void vp_init(void) {
  for (int i = 0; i < VP_STRIPES; i++) pthread_mutex_init(&vp_mu[i], NULL);
}

static size_t vp_set(const hs_fs_stamp *s, uint64_t offset, uint32_t crc) {
  uint64_t h =
      (s->ino * 0x9E3779B97F4A7C15ull) ^ s->dev ^ (uint64_t)s->mtime_ns ^ ((uint64_t)s->size << 17);
  h = (h ^ offset ^ ((uint64_t)crc << 32)) * 0xBF58476D1CE4E5B9ull;
  return (size_t)(h >> 40) % VP_SETS;
}

static bool vp_match(const vp_slot *e, const hs_fs_stamp *stamp, uint64_t offset, uint32_t len,
                     uint32_t crc) {
  return e->offset_plus1 == offset + 1 && e->len == len && e->crc == crc &&
         hs_fs_stamp_equal(&e->stamp, stamp);
}

bool hs_pq_page_verified(const hs_fs_stamp *stamp, uint64_t offset, uint32_t len, uint32_t crc) {
  if (stamp == NULL) return false;
  pthread_once(&vp_once, vp_init);
  size_t set = vp_set(stamp, offset, crc);
  pthread_mutex_t *mu = &vp_mu[set % VP_STRIPES];
  bool hit = false;
  pthread_mutex_lock(mu);
  for (int w = 0; w < VP_WAYS && !hit; w++)
    hit = vp_match(&vp_slots[set][w], stamp, offset, len, crc);
  pthread_mutex_unlock(mu);
  return hit;
}

void hs_pq_page_mark_verified(const hs_fs_stamp *stamp, uint64_t offset, uint32_t len,
                              uint32_t crc) {
  if (stamp == NULL) return;
  pthread_once(&vp_once, vp_init);
  size_t set = vp_set(stamp, offset, crc);
  pthread_mutex_t *mu = &vp_mu[set % VP_STRIPES];
  pthread_mutex_lock(mu);
  bool have = false;
  int free_way = -1;
  for (int w = 0; w < VP_WAYS && !have; w++) {
    have = vp_match(&vp_slots[set][w], stamp, offset, len, crc);
    if (free_way < 0 && vp_slots[set][w].offset_plus1 == 0) free_way = w;
  }
  if (!have) {
    int w = free_way >= 0 ? free_way : vp_next[set]++ % VP_WAYS;
    vp_slot *e = &vp_slots[set][w];
    e->stamp = *stamp;
    e->offset_plus1 = offset + 1;
    e->len = len;
    e->crc = crc;
  }
  pthread_mutex_unlock(mu);
}

static void vp_clear(void) {
  pthread_once(&vp_once, vp_init);
  for (size_t s = 0; s < VP_SETS; s++) {
    pthread_mutex_t *mu = &vp_mu[s % VP_STRIPES];
    pthread_mutex_lock(mu);
    memset(vp_slots[s], 0, sizeof vp_slots[s]);
    pthread_mutex_unlock(mu);
  }
}
