/*
 * large_arena.c — large blocks carved from one huge-page region (common.h,
 * "large-block arena").
 *
 * Why: a first read's results are many blocks of 256 KiB - a few MiB (a
 * DuckDB or Spark file's row groups of ~120K rows give ~1 MB per column).
 * glibc maps each such block on its own, 4 KiB aligned, so none can hold
 * an aligned 2 MB page and the kernel maps and zero-fills it a 4 KiB page
 * fault at a time: ~4,200 faults and ~9 ms of CPU for a first read of
 * DuckDB's 16 MB `ts` column, where pyarrow's mimalloc, carving its
 * blocks from a region advised huge pages, faults ~25 times (6.5 ms).
 * Here blocks of [LA_MIN, LA_MAX] bytes come from one reserved region
 * advised MADV_HUGEPAGE, so a fresh block faults in 2 MB at a time, next
 * to its neighbours.
 *
 * Layout: LA_RESERVE bytes of address space reserved PROT_NONE (no memory,
 * no commit charge), made read-write LA_COMMIT bytes at a time as the top
 * grows. Blocks are runs of LA_UNIT-byte units found first-fit in a bitmap
 * below the top (then bumped at it); a block's length in units is kept at
 * its first unit. Freeing a block clears its bits and gives the kernel
 * back (MADV_DONTNEED) every whole 2 MB page of the free run it lands in,
 * so the arena holds no more idle memory than glibc's munmap would leave;
 * keeping freed blocks for reuse is the large-block cache's job
 * (block_cache.c), above this, exactly as for malloc'd blocks. A request
 * the arena cannot serve (full, or the reservation failed) goes to malloc.
 *
 * Probing: a fresh huge page is not always cheap. In a VM whose host
 * takes free guest memory back (free page reporting: this project's
 * Firecracker VMs), a 2 MB page comes from the high-order free blocks the
 * guest reported, and its first touch costs the host 512 faults: ~16 ms
 * against ~0.15 ms for one freed moments ago and ~1 ms for 2 MB of 4 KiB
 * pages (`bench/` notes in BENCHMARKS.md: a fresh read of 10M rows, 1.2-2.3
 * s of CPU with huge pages, 0.47 s without; pyarrow's mimalloc, 2.2 s).
 * So the arena faults each fresh 2 MB page of a new block itself, timed,
 * and the first that takes over LA_SLOW_NS turns huge pages off
 * (MADV_NOHUGEPAGE over the region, 4 KiB faults by the caller) for
 * LA_SMALL_NS, after which it tries again. hs_malloc's huge-page advice for
 * blocks above the arena's sizes follows the same verdict
 * (hs_large_arena_huge_ok).
 *
 * hs_free, hs_realloc, hs_alloc_usable and the block cache tell arena
 * blocks by address (hs_large_arena_usable), so arena and malloc blocks mix
 * freely. Off in sanitized builds (a block inside the region is invisible
 * to ASan) unless HS_LARGE_ARENA=1; HS_LARGE_ARENA=0 or HS_HUGEPAGES=0
 * turn it off elsewhere.
 *
 * Thread safety: one mutex around the bitmap, held across the madvise of
 * released pages (a block allocated into a page being released would
 * otherwise lose its bytes). A forked child re-initialises the mutex and
 * keeps the region, which is its memory too.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__) && UINTPTR_MAX > 0xffffffffu
#include <sys/mman.h>
#define LA_ENABLED 1
#else
#define LA_ENABLED 0
#endif
#if defined(__SANITIZE_ADDRESS__)
#define LA_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LA_SANITIZED 1
#endif
#endif
#ifndef LA_SANITIZED
#define LA_SANITIZED 0
#endif

#include "common.h"

#define LA_UNIT_SHIFT 14 /* 16 KiB units */
#define LA_UNIT ((size_t)1 << LA_UNIT_SHIFT)
#define LA_HUGE ((size_t)2 << 20)
#define LA_COMMIT ((size_t)64 << 20)
#define LA_RESERVE ((size_t)4 << 30)
#define LA_UNITS (LA_RESERVE / LA_UNIT) /* 262,144 */
#define LA_WORDS (LA_UNITS / 64)
#define LA_MIN ((size_t)256 << 10)
#define LA_MAX ((size_t)64 << 20)             /* LA_MAX / LA_UNIT fits the uint16 lengths */
#define LA_SLOW_NS ((int64_t)2 * 1000 * 1000) /* a 4 KiB-paged 2 MB costs ~1 ms here */
#define LA_SMALL_NS ((int64_t)10 * 1000 * 1000 * 1000)

static pthread_mutex_t la_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t la_once = PTHREAD_ONCE_INIT;
static uint8_t *la_base;               /* NULL: off */
static _Atomic(uint8_t *) la_base_pub; /* la_base, for la_holds without the once */
static uint64_t *la_used;              /* bit u: unit u is in a block */
static uint16_t *la_len;               /* at a block's first unit: its length in units */
static size_t la_top;                  /* units in [la_top, LA_UNITS) are free and never used */
static size_t la_committed;            /* bytes made read-write from la_base */
static size_t la_first_free;           /* no free unit below it */
static long long la_blocks, la_allocs, la_fallbacks;
/* Huge pages, when they are cheap (see "Probing" at the top). la_fresh_done[i]:
 * 2 MB page i has been faulted in (or left to the caller to fault) since
 * it was committed or last given back. la_small: fresh pages get 4 KiB pages until la_small_until.
 */
static uint8_t la_fresh_done[LA_RESERVE / LA_HUGE];
static bool la_small;
static int64_t la_small_until, la_slow_ns;
static long long la_probes, la_slow;
static size_t la_bytes;

#if LA_ENABLED
static void la_atfork_child(void) {
  pthread_mutex_init(&la_mu, NULL);
}
#endif

static void la_init(void) {
#if LA_ENABLED
  const char *env = getenv("HS_LARGE_ARENA");
  const char *huge = getenv("HS_HUGEPAGES");
  bool on = !LA_SANITIZED;
  if (env != NULL && *env != '\0') on = env[0] != '0';
  if (huge != NULL && huge[0] == '0') on = false;
  if (!on) return;
  la_slow_ns = LA_SLOW_NS;
  const char *slow = getenv("HS_LARGE_ARENA_SLOW_US"); /* tests */
  if (slow != NULL && *slow != '\0') la_slow_ns = (int64_t)strtoll(slow, NULL, 10) * 1000;
  /* The bitmap and lengths (544 KiB) come zeroed from calloc: only the
   * pages the top has reached are ever touched. */
  la_used = calloc(LA_WORDS, sizeof *la_used);
  la_len = calloc(LA_UNITS, sizeof *la_len);
  void *m = la_used && la_len ? mmap(NULL, LA_RESERVE + LA_HUGE, PROT_NONE,
                                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                              : MAP_FAILED;
  if (m == MAP_FAILED) {
    free(la_used);
    free(la_len);
    la_used = NULL;
    la_len = NULL;
    return;
  }
  /* Align the region to 2 MB and hand back the slack on either side. */
  uintptr_t a = ((uintptr_t)m + LA_HUGE - 1) & ~(uintptr_t)(LA_HUGE - 1);
  size_t head = (size_t)(a - (uintptr_t)m);
  if (head > 0) munmap(m, head);
  if (LA_HUGE - head > 0) munmap((uint8_t *)a + LA_RESERVE, LA_HUGE - head);
  la_base = (uint8_t *)a;
  atomic_store_explicit(&la_base_pub, la_base, memory_order_release);
  pthread_atfork(NULL, NULL, la_atfork_child);
#endif
}

static bool la_on(void) {
  pthread_once(&la_once, la_init);
  return la_base != NULL;
}

static bool bit_get(size_t u) {
  return (la_used[u / 64] >> (u % 64)) & 1;
}

/* Set (v) or clear the bits of units [u, u + n). */
static void bits_set(size_t u, size_t n, bool v) {
  while (n > 0) {
    size_t w = u / 64, b = u % 64, k = 64 - b < n ? 64 - b : n;
    uint64_t m = (k == 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1)) << b;
    la_used[w] = v ? la_used[w] | m : la_used[w] & ~m;
    u += k;
    n -= k;
  }
}

#if LA_ENABLED
/* First unit of a free run of n units, or of a free run reaching the top
 * (the block then extends past it); la_top when there is neither. */
static size_t la_find(size_t n) {
  size_t u = la_first_free;
  while (u < la_top) {
    if (bit_get(u)) { /* to the next clear bit of this word, or the next word */
      uint64_t inv = ~la_used[u / 64] >> (u % 64);
      u = inv == 0 ? (u / 64 + 1) * 64 : u + (size_t)__builtin_ctzll(inv);
      continue;
    }
    size_t e = u + 1;
    while (e < la_top && e - u < n && !bit_get(e)) e++;
    if (e - u >= n || e == la_top) return u;
    u = e;
  }
  return la_top;
}

/* Make units up to `end` read-write; false when the reservation is spent
 * or mprotect fails (the caller falls back to malloc). */
static bool la_commit(size_t end) {
  size_t bytes = end * LA_UNIT;
  if (bytes <= la_committed) return true;
  if (end > LA_UNITS) return false;
  size_t want = (bytes + LA_COMMIT - 1) / LA_COMMIT * LA_COMMIT;
  if (want > LA_RESERVE) want = LA_RESERVE;
  uint8_t *p = la_base + la_committed;
  if (mprotect(p, want - la_committed, PROT_READ | PROT_WRITE) != 0) return false;
  (void)madvise(p, want - la_committed, la_small ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
  la_committed = want;
  return true;
}

/* Units [u, u + n) were just given to a block: fault in its fresh 2 MB
 * pages now, one write each inside the block (a fresh page holds no other
 * block's bytes: it is all zero), timing each; one slower than la_slow_ns
 * turns huge pages off for LA_SMALL_NS (under la_mu). */
static void la_touch_fresh(size_t u, size_t n) {
  int64_t now = hs_now_ns();
  if (la_small && now >= la_small_until) {
    la_small = false;
    (void)madvise(la_base, la_committed, MADV_HUGEPAGE);
  }
  const size_t per = LA_HUGE / LA_UNIT;
  for (size_t pg = u / per; pg * per < u + n; pg++) {
    if (la_fresh_done[pg]) continue;
    la_fresh_done[pg] = 1;
    if (la_small) continue; /* the caller faults its 4 KiB pages */
    size_t first = pg * per > u ? pg * per : u;
    int64_t t0 = hs_now_ns();
    *(volatile uint8_t *)(la_base + first * LA_UNIT) = 0;
    int64_t dt = hs_now_ns() - t0;
    la_probes++;
    if (dt > la_slow_ns) {
      la_slow++;
      la_small = true;
      la_small_until = t0 + dt + LA_SMALL_NS;
      (void)madvise(la_base, la_committed, MADV_NOHUGEPAGE);
    }
  }
}

#else
static bool la_commit(size_t end) {
  (void)end;
  return false;
}
#endif

void *hs_large_arena_alloc(size_t size) {
#if LA_ENABLED
  if (size < LA_MIN || size > LA_MAX || !la_on()) return NULL;
  size_t n = (size + LA_UNIT - 1) >> LA_UNIT_SHIFT;
  void *p = NULL;
  pthread_mutex_lock(&la_mu);
  size_t u = la_find(n);
  if (u + n > la_top && !la_commit(u + n)) {
    la_fallbacks++;
  } else {
    if (u + n > la_top) la_top = u + n;
    bits_set(u, n, true);
    la_touch_fresh(u, n);
    la_len[u] = (uint16_t)n;
    if (u == la_first_free) la_first_free = u + n;
    la_blocks++;
    la_allocs++;
    la_bytes += n * LA_UNIT;
    p = la_base + u * LA_UNIT;
  }
  pthread_mutex_unlock(&la_mu);
  return p;
#else
  (void)size;
  return NULL;
#endif
}

/* p lies in the region. la_base is written once, before any block exists:
 * a pointer into the region reached its holder after that write. */
static bool la_holds(const void *p) {
  const uint8_t *b = atomic_load_explicit(&la_base_pub, memory_order_acquire);
  return b != NULL && (const uint8_t *)p >= b && (const uint8_t *)p < b + LA_RESERVE;
}

size_t hs_large_arena_usable(const void *p) {
  if (!la_holds(p)) return 0;
  size_t u = (size_t)((const uint8_t *)p - la_base) >> LA_UNIT_SHIFT;
  return (size_t)la_len[u] * LA_UNIT; /* stable while the caller owns p */
}

/* Give back the whole 2 MB pages of the free run around units [u, u + n)
 * that those units touch (under la_mu). */
static void la_release(size_t u, size_t n) {
#if LA_ENABLED
  size_t lo = u, hi = u + n;
  while (lo > 0 && !bit_get(lo - 1)) lo--;
  while (hi < la_top && !bit_get(hi)) hi++;
  if (hi >= la_top) hi = la_committed / LA_UNIT; /* nothing above the top is in use */
  const size_t per = LA_HUGE / LA_UNIT;
  size_t a = (lo + per - 1) / per * per, b = hi / per * per;
  /* Only pages overlapping the freed units: the rest of the run was
   * released when its own blocks were freed. */
  size_t fa = u / per * per, fb = (u + n + per - 1) / per * per;
  if (a < fa) a = fa;
  if (b > fb) b = fb;
  if (b > a) {
    (void)madvise(la_base + a * LA_UNIT, (b - a) * LA_UNIT, MADV_DONTNEED);
    memset(la_fresh_done + a / per, 0, (b - a) / per);
  }
#else
  (void)u;
  (void)n;
#endif
}

/* Mark [u + keep, u + n) free and release what that frees (under la_mu). */
static void la_trim(size_t u, size_t n, size_t keep) {
  size_t f = u + keep, k = n - keep;
  bits_set(f, k, false);
  la_bytes -= k * LA_UNIT;
  if (f < la_first_free) la_first_free = f;
  while (la_top > 0 && !bit_get(la_top - 1)) la_top--;
  la_release(f, k);
}

bool hs_large_arena_free(void *p) {
  if (!la_holds(p)) return false;
  size_t u = (size_t)((uint8_t *)p - la_base) >> LA_UNIT_SHIFT;
  pthread_mutex_lock(&la_mu);
  size_t n = la_len[u];
  if (n == 0 || ((uint8_t *)p - la_base) % LA_UNIT != 0 || !bit_get(u)) abort(); /* not a block */
  la_len[u] = 0;
  la_blocks--;
  la_trim(u, n, 0);
  pthread_mutex_unlock(&la_mu);
  return true;
}

bool hs_large_arena_resize(void *p, size_t size) {
  size_t have = hs_large_arena_usable(p);
  if (have == 0 || size < LA_MIN || size > LA_MAX) return false;
  size_t u = (size_t)((uint8_t *)p - la_base) >> LA_UNIT_SHIFT;
  size_t n = have >> LA_UNIT_SHIFT, want = (size + LA_UNIT - 1) >> LA_UNIT_SHIFT;
  bool ok = true;
  pthread_mutex_lock(&la_mu);
  if (want < n) {
    la_len[u] = (uint16_t)want;
    la_trim(u, n, want);
  } else if (want > n) {
    size_t e = u + n;
    while (e < la_top && e < u + want && !bit_get(e)) e++;
    ok = e == u + want || (e == la_top && la_commit(u + want));
    if (ok) {
      bits_set(u + n, want - n, true);
      la_touch_fresh(u + n, want - n);
      if (u + want > la_top) la_top = u + want;
      la_len[u] = (uint16_t)want;
      la_bytes += (want - n) * LA_UNIT;
      while (la_first_free < la_top && bit_get(la_first_free)) la_first_free++;
    }
  }
  pthread_mutex_unlock(&la_mu);
  return ok;
}

bool hs_large_arena_huge_ok(void) {
  if (la_base == NULL) return true; /* no verdict: the old advice */
  pthread_mutex_lock(&la_mu);
  bool ok = !la_small || hs_now_ns() >= la_small_until;
  pthread_mutex_unlock(&la_mu);
  return ok;
}

void hs_large_arena_stats(hs_large_arena_info *out) {
  bool on = la_on();
  pthread_mutex_lock(&la_mu);
  out->enabled = on;
  out->blocks = la_blocks;
  out->allocs = la_allocs;
  out->fallbacks = la_fallbacks;
  out->bytes = la_bytes;
  out->top = la_top * LA_UNIT;
  out->huge_probes = la_probes;
  out->huge_slow = la_slow;
  out->huge_now = on && !la_small;
  pthread_mutex_unlock(&la_mu);
}
