/*
 * block_cache.c — freed large blocks kept for the next allocation of about
 * their size (common.h, "large-block cache").
 *
 * Why: glibc hands a large freed block back to the kernel (munmap, or a
 * trim of the heap's top), so the next read of the same file maps and
 * zero-fills the same amount again: a page fault per 4 KiB. On a whole
 * read of a 2M-row pyarrow file that was ~32,000 faults and a third of
 * the read's CPU; pyarrow's own allocator (its memory pool) keeps such
 * blocks and faults almost never on a second read. Result buffers handed
 * to Arrow are freed by the consumer's release through hs_free, so the
 * cache sits here, under hs_malloc/hs_free, not in a reader.
 *
 * Policy: blocks of at least BC_MIN usable bytes are kept, up to BC_SLOTS
 * of them and hs_block_cache_limit() bytes in all (the oldest go first
 * when a new one does not fit); a kept block older than BC_DECAY_NS is
 * freed at the next large allocation or free, so memory a process is done
 * with goes back within about a second of its next large operation. A
 * request takes the smallest kept block whose size is within
 * [size, size + size / 2]; a large block grown by hs_realloc moves into a
 * kept one of [size, 2 * size] when there is one (hs_buf: of [need, its
 * doubled capacity or 2 * need]) (a copy into memory
 * already mapped costs less than faulting in the grown part), and hs_buf
 * uses the whole usable size of what it gets. Blocks are malloc blocks or
 * blocks of the large-block arena (large_arena.c, told apart by address);
 * an evicted one goes back to where it came from. Only glibc (malloc_usable_size) has
 * the cache; elsewhere hs_free is free().
 *
 * Thread safety: one mutex around the table; frees of evicted blocks
 * happen outside it. A forked child re-initialises the mutex (another
 * thread of the parent may have held it) and keeps the blocks, which are
 * its memory too.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#define BC_ENABLED 1
#else
#define BC_ENABLED 0
#endif
/* Under AddressSanitizer the cache is off unless HS_BLOCK_CACHE_MB asks
 * for it: a kept block is live memory to ASan, so a use after hs_free of
 * a large block would go unseen by the sanitized test runs. */
#if defined(__SANITIZE_ADDRESS__)
#define BC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BC_SANITIZED 1
#endif
#endif
#ifndef BC_SANITIZED
#define BC_SANITIZED 0
#endif

#include "common.h"

#define BC_MIN ((size_t)256 << 10)
#define BC_SLOTS 256
#define BC_DECAY_NS ((int64_t)1000 * 1000 * 1000)

typedef struct bc_slot {
  void *p;
  size_t size; /* malloc_usable_size */
  int64_t t;   /* when it was freed */
} bc_slot;

static pthread_mutex_t bc_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t bc_once = PTHREAD_ONCE_INIT;
static bc_slot bc[BC_SLOTS]; /* bc[0..bc_n) in order of freeing, oldest first */
static int bc_n;
static size_t bc_bytes;
static size_t bc_limit;
static long long bc_hits, bc_misses;

static void bc_atfork_child(void) {
  pthread_mutex_init(&bc_mu, NULL);
}

/* HS_BLOCK_CACHE_MB, else physical memory / 32 within [64 MiB, 1 GiB]
 * (0 in sanitized builds). */
static void bc_init(void) {
  const char *env = getenv("HS_BLOCK_CACHE_MB");
  if (env != NULL && *env != '\0') {
    char *end = NULL;
    long long mb = strtoll(env, &end, 10);
    if (end != NULL && *end == '\0' && mb >= 0) {
      bc_limit = mb > (1LL << 20) ? (size_t)1 << 40 : (size_t)mb << 20;
      pthread_atfork(NULL, NULL, bc_atfork_child);
      return;
    }
  }
  if (BC_SANITIZED) {
    bc_limit = 0;
    return;
  }
  size_t lim = (size_t)64 << 20;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  if (pages > 0 && psz > 0) {
    unsigned long long phys = (unsigned long long)pages * (unsigned long long)psz;
    unsigned long long l = phys / 32;
    if (l > (1ULL << 30)) l = 1ULL << 30;
    if (l > lim) lim = (size_t)l;
  }
#endif
  bc_limit = lim;
  pthread_atfork(NULL, NULL, bc_atfork_child);
}

size_t hs_block_cache_limit(void) {
  pthread_once(&bc_once, bc_init);
  return bc_limit;
}

/* Remove slot i (under bc_mu). */
static void *bc_take(int i) {
  void *p = bc[i].p;
  bc_bytes -= bc[i].size;
  memmove(&bc[i], &bc[i + 1], (size_t)(bc_n - i - 1) * sizeof bc[0]);
  bc_n--;
  return p;
}

/* Move blocks older than the decay into out[] (under bc_mu); returns how many. */
static int bc_expire(int64_t now, void **out, int n_out) {
  int k = 0;
  while (bc_n > 0 && k < n_out && now - bc[0].t > BC_DECAY_NS) out[k++] = bc_take(0);
  return k;
}

#define BC_EXPIRE_BATCH 16

#if BC_ENABLED
/* Kept blocks come from malloc or from the large-block arena (large_arena.c). */
static size_t bc_usable(void *p) {
  size_t a = hs_large_arena_usable(p);
  return a != 0 ? a : malloc_usable_size(p);
}
#endif

static void bc_release(void *p) {
  if (!hs_large_arena_free(p)) free(p);
}

size_t hs_alloc_usable(void *p, size_t requested) {
  size_t a = p != NULL ? hs_large_arena_usable(p) : 0;
  if (a != 0) return a;
#if BC_ENABLED
  if (p != NULL) return malloc_usable_size(p);
#endif
  return requested;
}

/* Take the smallest kept block in [size, hi] (NULL: none). */
static void *bc_get(size_t size, size_t hi) {
  if (!BC_ENABLED || size < BC_MIN) return NULL;
  pthread_once(&bc_once, bc_init);
  if (bc_limit == 0) return NULL;
  void *old[BC_EXPIRE_BATCH];
  void *got = NULL;
  int64_t now = hs_now_ns();
  pthread_mutex_lock(&bc_mu);
  int n_old = bc_expire(now, old, BC_EXPIRE_BATCH);
  int best = -1;
  for (int i = 0; i < bc_n; i++) {
    if (bc[i].size >= size && bc[i].size <= hi && (best < 0 || bc[i].size < bc[best].size)) {
      best = i;
    }
  }
  if (best >= 0) {
    got = bc_take(best);
    bc_hits++;
  } else {
    bc_misses++;
  }
  pthread_mutex_unlock(&bc_mu);
  for (int i = 0; i < n_old; i++) bc_release(old[i]);
  return got;
}

void *hs_block_cache_get(size_t size) {
  return bc_get(size, size + size / 2);
}

void *hs_block_cache_grow(void *p, size_t keep, size_t need, size_t hi) {
#if BC_ENABLED
  if (need < BC_MIN || hi < need) return NULL;
  size_t have = p != NULL ? bc_usable(p) : 0;
  if (p != NULL && have >= need) return NULL;
  void *q = bc_get(need, hi);
  if (q == NULL) return NULL;
  if (p != NULL) {
    memcpy(q, p, keep < have ? keep : have);
    hs_free(p);
  }
  return q;
#else
  (void)p;
  (void)keep;
  (void)need;
  (void)hi;
  return NULL;
#endif
}

bool hs_block_cache_put(void *p) {
#if BC_ENABLED
  if (p == NULL) return false;
  size_t size = bc_usable(p);
  if (size < BC_MIN) return false;
  pthread_once(&bc_once, bc_init);
  if (size > bc_limit) return false;
  void *old[BC_SLOTS];
  int n_old = 0;
  int64_t now = hs_now_ns();
  pthread_mutex_lock(&bc_mu);
  n_old = bc_expire(now, old, BC_SLOTS);
  while (bc_n > 0 && (bc_n == BC_SLOTS || bc_bytes + size > bc_limit)) old[n_old++] = bc_take(0);
  bc[bc_n].p = p;
  bc[bc_n].size = size;
  bc[bc_n].t = now;
  bc_n++;
  bc_bytes += size;
  pthread_mutex_unlock(&bc_mu);
  for (int i = 0; i < n_old; i++) bc_release(old[i]);
  return true;
#else
  (void)p;
  return false;
#endif
}

void hs_block_cache_clear(void) {
  pthread_mutex_lock(&bc_mu);
  int n = bc_n;
  void *old[BC_SLOTS];
  for (int i = 0; i < n; i++) old[i] = bc[i].p;
  bc_n = 0;
  bc_bytes = 0;
  pthread_mutex_unlock(&bc_mu);
  for (int i = 0; i < n; i++) bc_release(old[i]);
}

void hs_block_cache_stats(hs_block_cache_info *out) {
  pthread_mutex_lock(&bc_mu);
  out->blocks = bc_n;
  out->bytes = bc_bytes;
  out->hits = bc_hits;
  out->misses = bc_misses;
  pthread_mutex_unlock(&bc_mu);
  out->limit = hs_block_cache_limit();
}
