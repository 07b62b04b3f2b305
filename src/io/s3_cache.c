/*
 * s3_cache.c — the process-wide cache of S3 objects read through sources:
 * their HEAD answers (size, ETag) and their bytes in aligned blocks of
 * S3_BLOCK bytes, least recently used first out, bounded in bytes.
 *
 * Why: a Parquet or Puffin reader asks for many small ranges (a footer's
 * length, the footer, page headers, index sections); on S3 each would be
 * a round trip. A miss fetches the whole run of missing blocks around the
 * range in one ranged GET, so nearby reads that follow are free, and a
 * warm query reads nothing again.
 *
 * Why it is safe: every object we read through a source is written once
 * (data, delete and index files, manifests are new names); the names a
 * table writes again (the version hint; vN.metadata.json when a table is
 * dropped and made anew at its URI) are never cached (reused_name).
 * Each block fetch carries `If-Match: <ETag>` from the HEAD the object was
 * opened with, so an object replaced under the same name is a clear error
 * (HS_ERR_CONFLICT) rather than bytes of two objects; our own PUTs and
 * DELETEs forget the name (hs_s3_cache_forget). A HEAD answer is kept for
 * as long as its object entry lives; missing objects are never cached.
 *
 * Bound: HS_S3_CACHE_MB in the environment (default 256; 0 turns block
 * caching off, HEAD answers are still kept); reads larger than
 * S3_DIRECT_MIN bypass the blocks unless the blocks hold them whole (a
 * scan's column chunks would only evict what queries reuse). Objects: at most S3_OBJECTS HEAD
 * entries, the oldest dropped first (its blocks age out of the LRU list).
 *
 * Fragments: a prefetch of scattered small ranges (a search's re-ranked
 * rows, a filtered scan's pages) asks for exactly those bytes instead of
 * whole blocks (`exact` items, s3_prefetch.c); they are kept as fragments
 * of at most S3_FRAG_MAX bytes, found by the S3_FRAG_STEP-aligned step
 * they start in, and served to reads they contain. They share the blocks'
 * LRU list and bound.
 *
 * Thread safety: one mutex; fetches run outside it (two threads missing
 * the same block may both fetch it; the second copy is dropped).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_internal.h"

#define S3_BLOCK HS_S3_CACHE_BLOCK
#define S3_DIRECT_MIN ((size_t)1 << 20)
#define S3_OBJECTS 4096
#define S3_OBJ_BUCKETS 8192
#define S3_BLOCK_BUCKETS 16384
#define S3_FRAG_MAX HS_S3_CACHE_FRAG_MAX
#define S3_FRAG_STEP ((uint64_t)64 << 10)
#define S3_FRAG_BUCKETS 16384

typedef struct cobj {
  char *key; /* endpoint \n bucket \n object key */
  uint64_t id;
  hs_object_info info;
  struct cobj *next; /* hash chain */
} cobj;

typedef struct cblock {
  uint64_t id, index; /* a fragment: index = off / S3_FRAG_STEP */
  uint64_t off;       /* a fragment's first byte (blocks: index * S3_BLOCK) */
  bool frag;
  size_t len;
  struct cblock *hnext;      /* hash chain */
  struct cblock *prev, *nxt; /* LRU list, most recent at head */
  uint8_t data[];
} cblock;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static cobj *g_obj[S3_OBJ_BUCKETS];
static cobj *g_ring[S3_OBJECTS]; /* insertion order, for eviction */
static size_t g_ring_at;
static uint64_t g_next_id = 1;
static cblock *g_blk[S3_BLOCK_BUCKETS];
static cblock *g_frag[S3_FRAG_BUCKETS];
static cblock *g_head, *g_tail;
static size_t g_bytes;
static size_t g_cap = (size_t)-1; /* set from the environment on first use */

static size_t cap_bytes(void) {
  if (g_cap == (size_t)-1) {
    const char *v = getenv("HS_S3_CACHE_MB");
    long long mb = v != NULL && *v != '\0' ? atoll(v) : 256;
    g_cap = mb <= 0 ? 0 : (size_t)mb << 20;
  }
  return g_cap;
}

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

static uint64_t hash_block(uint64_t id, uint64_t index) {
  uint64_t h = id * 0x9E3779B97F4A7C15ull ^ (index + 0x632BE59BD9B4E019ull);
  h ^= h >> 31;
  return h * 0xBF58476D1CE4E5B9ull;
}

/* Names a table writes again under the same key: its version hint, and
 * vN.metadata.json (and the gzip spellings) when a table is dropped and
 * made anew at the same URI by another process. Never cached: a new
 * table's v1 must not be read as the old one's. */
static bool reused_name(const char *key) {
  const char *base = strrchr(key, '/');
  base = base != NULL ? base + 1 : key;
  if (strcmp(base, "version-hint.text") == 0) return true;
  if (base[0] != 'v' || base[1] < '0' || base[1] > '9') return false;
  const char *p = base + 1;
  while (*p >= '0' && *p <= '9') p++;
  return strcmp(p, ".metadata.json") == 0 || strcmp(p, ".gz.metadata.json") == 0 ||
         strcmp(p, ".metadata.json.gz") == 0;
}

/* The object's key into buf (false when it does not fit or is a reused
 * name: not cached). */
static bool obj_key(const hs_store_loc *loc, char *buf, size_t cap) {
  if (reused_name(loc->key)) return false;
  int n = snprintf(buf, cap, "%s\n%s\n%s", loc->cfg->endpoint, loc->bucket, loc->key);
  return n > 0 && (size_t)n < cap;
}

/* Under g_mu. */
static cobj *obj_find(const char *key) {
  for (cobj *o = g_obj[hash_str(key) % S3_OBJ_BUCKETS]; o != NULL; o = o->next) {
    if (strcmp(o->key, key) == 0) return o;
  }
  return NULL;
}

/* Under g_mu: unlink and free (its blocks become unreachable and age out). */
static void obj_drop(cobj *o) {
  cobj **p = &g_obj[hash_str(o->key) % S3_OBJ_BUCKETS];
  while (*p != NULL && *p != o) p = &(*p)->next;
  if (*p == o) *p = o->next;
  for (size_t i = 0; i < S3_OBJECTS; i++) {
    if (g_ring[i] == o) g_ring[i] = NULL;
  }
  hs_free(o->key);
  hs_free(o);
}

static void lru_unlink(cblock *b) {
  if (b->prev != NULL)
    b->prev->nxt = b->nxt;
  else
    g_head = b->nxt;
  if (b->nxt != NULL)
    b->nxt->prev = b->prev;
  else
    g_tail = b->prev;
  b->prev = b->nxt = NULL;
}

static void lru_front(cblock *b) {
  b->nxt = g_head;
  b->prev = NULL;
  if (g_head != NULL) g_head->prev = b;
  g_head = b;
  if (g_tail == NULL) g_tail = b;
}

static cblock *block_find(uint64_t id, uint64_t index) {
  for (cblock *b = g_blk[hash_block(id, index) % S3_BLOCK_BUCKETS]; b != NULL; b = b->hnext) {
    if (b->id == id && b->index == index) return b;
  }
  return NULL;
}

static void block_evict_tail(void) {
  cblock *b = g_tail;
  lru_unlink(b);
  cblock **p = b->frag ? &g_frag[hash_block(b->id, b->index) % S3_FRAG_BUCKETS]
                       : &g_blk[hash_block(b->id, b->index) % S3_BLOCK_BUCKETS];
  while (*p != b) p = &(*p)->hnext;
  *p = b->hnext;
  g_bytes -= b->len;
  hs_free(b);
}

/* Under g_mu: keep a copy of data[0..len) as block `index` of object id. */
static void block_put(uint64_t id, uint64_t index, const uint8_t *data, size_t len) {
  if (len > cap_bytes() || block_find(id, index) != NULL) return;
  while (g_tail != NULL && g_bytes + len > cap_bytes()) block_evict_tail();
  cblock *b = hs_malloc(sizeof *b + len);
  if (b == NULL) return;
  b->id = id;
  b->index = index;
  b->off = index * S3_BLOCK;
  b->frag = false;
  b->len = len;
  memcpy(b->data, data, len);
  size_t h = hash_block(id, index) % S3_BLOCK_BUCKETS;
  b->hnext = g_blk[h];
  g_blk[h] = b;
  lru_front(b);
  g_bytes += len;
}

/* Under g_mu: a fragment of object id holding [off, end), or NULL. */
static cblock *frag_find(uint64_t id, uint64_t off, uint64_t end) {
  if (end - off > S3_FRAG_MAX) return NULL;
  uint64_t k = off / S3_FRAG_STEP, k0 = off > S3_FRAG_MAX ? (off - S3_FRAG_MAX) / S3_FRAG_STEP : 0;
  for (;; k--) {
    for (cblock *b = g_frag[hash_block(id, k) % S3_FRAG_BUCKETS]; b != NULL; b = b->hnext)
      if (b->id == id && b->index == k && b->off <= off && b->off + b->len >= end) return b;
    if (k == k0) return NULL;
  }
}

/* Under g_mu: keep data[0..len) as the fragment at off of object id. */
static void frag_put(uint64_t id, uint64_t off, const uint8_t *data, size_t len) {
  if (len == 0 || len > S3_FRAG_MAX || len > cap_bytes() || frag_find(id, off, off + len) != NULL)
    return;
  while (g_tail != NULL && g_bytes + len > cap_bytes()) block_evict_tail();
  cblock *b = hs_malloc(sizeof *b + len);
  if (b == NULL) return;
  b->id = id;
  b->index = off / S3_FRAG_STEP;
  b->off = off;
  b->frag = true;
  b->len = len;
  memcpy(b->data, data, len);
  size_t h = hash_block(id, b->index) % S3_FRAG_BUCKETS;
  b->hnext = g_frag[h];
  g_frag[h] = b;
  lru_front(b);
  g_bytes += len;
}

/* Under g_mu: whether [off, end) is held, by blocks or one fragment. */
static bool held(uint64_t id, uint64_t off, uint64_t end) {
  if (frag_find(id, off, end) != NULL) return true;
  for (uint64_t k = off / S3_BLOCK; k <= (end - 1) / S3_BLOCK; k++)
    if (block_find(id, k) == NULL) return false;
  return true;
}

bool hs_s3_cache_head_get(const hs_store_loc *loc, hs_object_info *info) {
  char key[1400];
  if (!obj_key(loc, key, sizeof key)) return false;
  pthread_mutex_lock(&g_mu);
  cobj *o = obj_find(key);
  if (o != NULL) *info = o->info;
  pthread_mutex_unlock(&g_mu);
  return o != NULL;
}

/* Under g_mu: the entry for key with this info (a new id when the ETag or
 * size changed). NULL on out of memory. */
static cobj *obj_set(const char *key, const hs_object_info *info) {
  cobj *o = obj_find(key);
  if (o != NULL) {
    if (o->info.size != info->size || strcmp(o->info.etag, info->etag) != 0) o->id = g_next_id++;
    o->info = *info;
    return o;
  }
  if (g_ring[g_ring_at] != NULL) obj_drop(g_ring[g_ring_at]);
  o = hs_calloc(1, sizeof *o);
  if (o == NULL || (o->key = hs_strdup(key)) == NULL) {
    hs_free(o);
    return NULL;
  }
  o->id = g_next_id++;
  o->info = *info;
  size_t h = hash_str(key) % S3_OBJ_BUCKETS;
  o->next = g_obj[h];
  g_obj[h] = o;
  g_ring[g_ring_at] = o;
  g_ring_at = (g_ring_at + 1) % S3_OBJECTS;
  return o;
}

void hs_s3_cache_head_put(const hs_store_loc *loc, const hs_object_info *info) {
  char key[1400];
  if (info->etag[0] == '\0' || !obj_key(loc, key, sizeof key)) return; /* no ETag: no If-Match */
  pthread_mutex_lock(&g_mu);
  obj_set(key, info);
  pthread_mutex_unlock(&g_mu);
}

void hs_s3_cache_forget(const hs_store_loc *loc) {
  char key[1400];
  if (!obj_key(loc, key, sizeof key)) return;
  pthread_mutex_lock(&g_mu);
  cobj *o = obj_find(key);
  if (o != NULL) obj_drop(o);
  pthread_mutex_unlock(&g_mu);
}

/* The id blocks of (loc, info) are cached under: that of the object's
 * entry when it holds this very HEAD answer (entries come from HEADs
 * only, so a source opened before the object changed cannot bring its old
 * ETag back); 0 when none, and the read goes to S3 uncached. */
static uint64_t block_id(const hs_store_loc *loc, const hs_object_info *info) {
  char key[1400];
  if (info->etag[0] == '\0' || cap_bytes() == 0 || !obj_key(loc, key, sizeof key)) return 0;
  pthread_mutex_lock(&g_mu);
  cobj *o = obj_find(key);
  uint64_t id =
      o != NULL && o->info.size == info->size && strcmp(o->info.etag, info->etag) == 0 ? o->id : 0;
  pthread_mutex_unlock(&g_mu);
  return id;
}

bool hs_s3_cache_keeps(const hs_store_loc *loc) {
  char key[1400];
  return cap_bytes() > 0 && obj_key(loc, key, sizeof key);
}

bool hs_s3_cache_holds(const hs_store_loc *loc, const hs_object_info *info, uint64_t offset,
                       uint64_t len) {
  uint64_t id = block_id(loc, info), end = offset + len;
  if (id == 0 || end > info->size) return false;
  if (len == 0) return true;
  pthread_mutex_lock(&g_mu);
  bool all = held(id, offset, end);
  pthread_mutex_unlock(&g_mu);
  return all;
}

bool hs_s3_cache_get_whole(const hs_store_loc *loc, size_t max_bytes, hs_buf *out,
                           hs_object_info *info) {
  hs_object_info seen;
  if (!hs_s3_cache_head_get(loc, &seen) || seen.size > max_bytes || seen.size > S3_DIRECT_MIN)
    return false;
  uint64_t id = block_id(loc, &seen);
  if (id == 0) return false;
  size_t base = out->len;
  bool ok = hs_buf_reserve(out, (size_t)seen.size);
  pthread_mutex_lock(&g_mu);
  for (uint64_t k = 0; ok && k * S3_BLOCK < seen.size; k++) {
    cblock *c = block_find(id, k);
    uint64_t want = seen.size - k * S3_BLOCK < S3_BLOCK ? seen.size - k * S3_BLOCK : S3_BLOCK;
    ok = c != NULL && c->len == want && hs_buf_append(out, c->data, c->len);
  }
  pthread_mutex_unlock(&g_mu);
  if (!ok) {
    out->len = base;
    return false;
  }
  *info = seen;
  return true;
}

void hs_s3_cache_put_range(const hs_store_loc *loc, const hs_object_info *info, uint64_t offset,
                           const uint8_t *data, size_t len) {
  uint64_t id = block_id(loc, info), end = offset + len;
  if (id == 0 || end > info->size) return;
  pthread_mutex_lock(&g_mu);
  for (uint64_t k = (offset + S3_BLOCK - 1) / S3_BLOCK; k * S3_BLOCK < end; k++) {
    uint64_t bend = (k + 1) * S3_BLOCK < info->size ? (k + 1) * S3_BLOCK : info->size;
    if (bend > end) break; /* only part of this block is here */
    block_put(id, k, data + (k * S3_BLOCK - offset), (size_t)(bend - k * S3_BLOCK));
  }
  pthread_mutex_unlock(&g_mu);
}

void hs_s3_cache_put_fragment(const hs_store_loc *loc, const hs_object_info *info, uint64_t offset,
                              const uint8_t *data, size_t len) {
  uint64_t id = block_id(loc, info);
  if (id == 0 || offset + len > info->size) return;
  pthread_mutex_lock(&g_mu);
  frag_put(id, offset, data, len);
  pthread_mutex_unlock(&g_mu);
}

hs_status hs_s3_cache_read(const hs_store_loc *loc, const hs_object_info *info, uint64_t offset,
                           size_t len, void *dst, hs_error *err) {
  if (len == 0) return HS_OK;
  uint64_t end = offset + len;
  /* Large reads, and reads past the end (the plain read names the error). */
  uint64_t id = end > info->size ? 0 : block_id(loc, info);
  /* A large read held whole (a prefetch or an index stream brought it)
   * is served from the blocks; else it goes straight through. */
  if (id != 0 && len > S3_DIRECT_MIN && !hs_s3_cache_holds(loc, info, offset, len)) id = 0;
  if (id == 0) return hs_s3_get_range_if(loc, info->etag, offset, len, dst, err);
  if (len <= S3_FRAG_MAX) { /* inside a fragment a prefetch brought */
    pthread_mutex_lock(&g_mu);
    cblock *f = frag_find(id, offset, end);
    if (f != NULL) {
      memcpy(dst, f->data + (offset - f->off), len);
      lru_unlink(f);
      lru_front(f);
    }
    pthread_mutex_unlock(&g_mu);
    if (f != NULL) return HS_OK;
  }
  uint64_t last = (end - 1) / S3_BLOCK;
  uint8_t *out = dst;
  for (uint64_t b = offset / S3_BLOCK; b <= last;) {
    /* Copy the cached blocks from b on, up to the first missing one. */
    pthread_mutex_lock(&g_mu);
    for (cblock *c; b <= last && (c = block_find(id, b)) != NULL; b++) {
      uint64_t lo = b * S3_BLOCK > offset ? b * S3_BLOCK : offset;
      uint64_t hi = (b + 1) * S3_BLOCK < end ? (b + 1) * S3_BLOCK : end;
      if (b * S3_BLOCK + c->len < hi) break; /* cannot be (the size is part of the id) */
      memcpy(out + (lo - offset), c->data + (lo - b * S3_BLOCK), (size_t)(hi - lo));
      lru_unlink(c);
      lru_front(c);
    }
    uint64_t m1 = b; /* the run of missing blocks from b */
    while (m1 < last && block_find(id, m1 + 1) == NULL) m1++;
    pthread_mutex_unlock(&g_mu);
    if (b > last) break;
    uint64_t lo = b * S3_BLOCK;
    uint64_t hi = (m1 + 1) * S3_BLOCK < info->size ? (m1 + 1) * S3_BLOCK : info->size;
    uint8_t *tmp = hs_malloc((size_t)(hi - lo));
    if (tmp == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", loc->uri);
    hs_status st = hs_s3_get_range_if(loc, info->etag, lo, (size_t)(hi - lo), tmp, err);
    if (st != HS_OK) {
      hs_free(tmp);
      return st;
    }
    uint64_t clo = lo > offset ? lo : offset, chi = hi < end ? hi : end;
    memcpy(out + (clo - offset), tmp + (clo - lo), (size_t)(chi - clo));
    pthread_mutex_lock(&g_mu);
    for (uint64_t k = b; k <= m1; k++) {
      uint64_t blo = k * S3_BLOCK, bhi = blo + S3_BLOCK < hi ? blo + S3_BLOCK : hi;
      block_put(id, k, tmp + (blo - lo), (size_t)(bhi - blo));
    }
    pthread_mutex_unlock(&g_mu);
    hs_free(tmp);
    b = m1 + 1;
  }
  return HS_OK;
}
