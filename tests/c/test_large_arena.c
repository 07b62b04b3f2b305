/*
 * test_large_arena.c — the large-block arena under hs_malloc / hs_free
 * (common/large_arena.c), with the large-block cache off so that every
 * free reaches it: which sizes it serves; blocks are unit-aligned and
 * never overlap; hs_realloc grows and shrinks in place when the units
 * allow and keeps the bytes when it moves; hs_calloc zeroes reused units;
 * a freed block's whole huge pages are given back (mincore); the first
 * free run is reused; random operations against a model (contents, no
 * overlap, the arena's byte count); several threads at once; a forked
 * child allocates and frees on its own copy.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"
#include "hs_test.h"

#define KB ((size_t)1 << 10)
#define MB ((size_t)1 << 20)
#define UNIT (16 * KB)

static bool on(void) {
  hs_large_arena_info s;
  hs_large_arena_stats(&s);
  return s.enabled;
}

static size_t arena_bytes(void) {
  hs_large_arena_info s;
  hs_large_arena_stats(&s);
  return s.bytes;
}

static void test_sizes_served(void) {
  uint8_t *small = hs_malloc(200 * KB), *p = hs_malloc(1 * MB), *q = hs_malloc(300 * KB);
  uint8_t *huge = hs_malloc(80 * MB);
  CHECK(small && p && q && huge);
  CHECK(hs_large_arena_usable(small) == 0);
  CHECK(hs_large_arena_usable(huge) == 0); /* over 64 MiB: malloc's */
  CHECK(hs_large_arena_usable(p) == 1 * MB);
  CHECK(hs_large_arena_usable(q) == 304 * KB); /* 19 units */
  CHECK((uintptr_t)p % UNIT == 0 && (uintptr_t)q % UNIT == 0);
  CHECK(q >= p + MB || q + 304 * KB <= p);
  CHECK(hs_alloc_usable(p, 1) == 1 * MB);
  memset(p, 1, MB);
  memset(q, 2, 300 * KB);
  hs_free(small);
  hs_free(huge);
  hs_free(p);
  hs_free(q);
  CHECK(arena_bytes() == 0);
}

/* A freed block's 2 MB pages are given back; its units are reused first. */
static void test_release_and_reuse(void) {
  uint8_t *a = hs_malloc(8 * MB);
  CHECK(a != NULL && hs_large_arena_usable(a) == 8 * MB);
  memset(a, 0x5A, 8 * MB);
  unsigned char vec[2048];
  CHECK(mincore(a, 8 * MB, vec) == 0);
  int resident = 0;
  for (size_t i = 0; i < 8 * MB / 4096; i++) resident += vec[i] & 1;
  CHECK(resident == (int)(8 * MB / 4096));
  uint8_t *b = hs_malloc(1 * MB); /* after a */
  memset(b, 1, MB);
  hs_free(a);
  /* The 2 MB pages wholly inside a's units are gone: 2 MB-aligned spans of
   * [a, a + 8 MB) that do not reach b. */
  uintptr_t lo = ((uintptr_t)a + 2 * MB - 1) & ~(uintptr_t)(2 * MB - 1);
  uintptr_t hi = ((uintptr_t)a + 8 * MB) & ~(uintptr_t)(2 * MB - 1);
  CHECK(hi > lo);
  CHECK(mincore((void *)lo, hi - lo, vec) == 0);
  resident = 0;
  for (size_t i = 0; i < (hi - lo) / 4096; i++) resident += vec[i] & 1;
  CHECK_EQ_INT(resident, 0);
  uint8_t *c = hs_malloc(512 * KB); /* first fit: a's place */
  CHECK(c == a);
  bool zero = true; /* released pages come back zero; c's start was released */
  if ((uintptr_t)a == lo)
    for (size_t i = 0; i < 512 * KB; i += 4096) zero &= c[i] == 0;
  CHECK(zero);
  for (size_t i = 0; i < MB; i += 4096) CHECK(b[i] == 1);
  hs_free(c);
  hs_free(b);
  CHECK(arena_bytes() == 0);
}

static void test_realloc_in_place(void) {
  uint8_t *p = hs_malloc(1 * MB);
  for (size_t i = 0; i < MB; i++) p[i] = (uint8_t)(i * 13);
  uint8_t *g = hs_realloc(p, 3 * MB); /* at the top: grows in place */
  CHECK(g == p && hs_large_arena_usable(g) == 3 * MB);
  uint8_t *fence = hs_malloc(1 * MB); /* right after g */
  memset(fence, 9, MB);
  uint8_t *s = hs_realloc(g, 1 * MB + 5); /* shrinks in place */
  CHECK(s == p && hs_large_arena_usable(s) == 1 * MB + UNIT);
  bool same = true;
  for (size_t i = 0; i < MB; i++) same &= s[i] == (uint8_t)(i * 13);
  CHECK(same);
  uint8_t *m = hs_realloc(s, 6 * MB); /* the fence is in the way beyond 3 MB: moves */
  CHECK(m != NULL && m != s);
  same = true;
  for (size_t i = 0; i < MB; i++) same &= m[i] == (uint8_t)(i * 13);
  CHECK(same);
  uint8_t *t = hs_realloc(m, 100 * KB); /* below the arena's sizes: to malloc */
  CHECK(t != NULL && hs_large_arena_usable(t) == 0);
  same = true;
  for (size_t i = 0; i < 100 * KB; i++) same &= t[i] == (uint8_t)(i * 13);
  CHECK(same);
  for (size_t i = 0; i < MB; i += 4096) CHECK(fence[i] == 9);
  hs_free(t);
  hs_free(fence);
  uint8_t *z = hs_calloc(1, 2 * MB); /* reuses dirty units: zeroed */
  CHECK(z != NULL && hs_large_arena_usable(z) == 2 * MB);
  same = true;
  for (size_t i = 0; i < 2 * MB; i++) same &= z[i] == 0;
  CHECK(same);
  hs_free(z);
  CHECK(arena_bytes() == 0);
}

/* Random malloc / calloc / realloc / free against a model of live blocks. */
#define LIVE 24
typedef struct {
  uint8_t *p;
  size_t n;
  uint8_t tag;
} blk;

static void fill(blk *b) {
  for (size_t i = 0; i + 1 < b->n; i += 1021) b->p[i] = (uint8_t)(b->tag + i);
  if (b->n) b->p[b->n - 1] = b->tag;
}

static bool intact(const blk *b, size_t upto) {
  bool ok = true;
  for (size_t i = 0; i < upto && i + 1 < b->n; i += 1021) ok &= b->p[i] == (uint8_t)(b->tag + i);
  if (upto >= b->n && b->n) ok &= b->p[b->n - 1] == b->tag;
  return ok;
}

static size_t rand_size(uint64_t *st) {
  uint64_t r = hs_test_rand(st);
  switch (r % 8) {
  case 0: return (size_t)(hs_test_rand(st) % (300 * KB)); /* around the lower bound */
  case 1: return 6 * MB + (size_t)(hs_test_rand(st) % (4 * MB));
  default: return 256 * KB + (size_t)(hs_test_rand(st) % (3 * MB));
  }
}

static void test_random_model(void) {
  uint64_t st = 20261203;
  blk live[LIVE];
  memset(live, 0, sizeof live);
  int bad = 0, overlaps = 0;
  for (int it = 0; it < 3000; it++) {
    blk *b = &live[hs_test_rand(&st) % LIVE];
    int op = (int)(hs_test_rand(&st) % 4);
    if (b->p != NULL && op == 3) {
      size_t n = rand_size(&st);
      uint8_t *q = hs_realloc(b->p, n ? n : 1);
      if (q == NULL) {
        bad++;
        continue;
      }
      b->p = q;
      size_t keep = n < b->n ? n : b->n;
      bad += !intact(b, keep - (keep > 0 && keep < b->n ? 1 : 0));
      b->n = n;
      fill(b);
      continue;
    }
    if (b->p != NULL) {
      bad += !intact(b, b->n);
      hs_free(b->p);
      b->p = NULL;
      continue;
    }
    b->n = rand_size(&st);
    b->tag = (uint8_t)hs_test_rand(&st);
    if (op == 0) {
      b->p = hs_calloc(1, b->n);
      bool zero = true;
      for (size_t i = 0; b->p && i < b->n; i += 509) zero &= b->p[i] == 0;
      bad += !zero;
    } else {
      b->p = hs_malloc(b->n);
    }
    if (b->p == NULL) {
      bad++;
      continue;
    }
    fill(b);
    /* No two live blocks share a byte (usable extents). */
    for (int j = 0; j < LIVE; j++) {
      blk *o = &live[j];
      if (o == b || o->p == NULL) continue;
      size_t ub = hs_alloc_usable(b->p, b->n), uo = hs_alloc_usable(o->p, o->n);
      overlaps += b->p < o->p + uo && o->p < b->p + ub;
    }
  }
  size_t want = 0;
  for (int j = 0; j < LIVE; j++) want += live[j].p ? hs_large_arena_usable(live[j].p) : 0;
  CHECK(arena_bytes() == want);
  for (int j = 0; j < LIVE; j++) {
    if (live[j].p == NULL) continue;
    bad += !intact(&live[j], live[j].n);
    hs_free(live[j].p);
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(overlaps, 0);
  hs_large_arena_info s;
  hs_large_arena_stats(&s);
  CHECK(s.bytes == 0 && s.blocks == 0 && s.top == 0);
}

static void *churn(void *arg) {
  uint64_t st = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ull + 1;
  uint8_t tag = (uint8_t)(uintptr_t)arg;
  int bad = 0;
  uint8_t *held[6] = {0};
  size_t held_n[6] = {0};
  for (int it = 0; it < 300; it++) {
    int k = (int)(hs_test_rand(&st) % 6);
    if (held[k] != NULL) {
      for (size_t i = 0; i < held_n[k]; i += 4093) bad |= held[k][i] != tag;
      bad |= held[k][held_n[k] - 1] != tag;
      hs_free(held[k]);
    }
    size_t n = 256 * KB + (size_t)(hs_test_rand(&st) % (2 * MB));
    held[k] = hs_malloc(n);
    held_n[k] = n;
    if (held[k] == NULL) return (void *)1;
    memset(held[k], tag, n);
  }
  for (int k = 0; k < 6; k++) hs_free(held[k]);
  return (void *)(uintptr_t)bad;
}

static void test_threads(void) {
  pthread_t t[4];
  for (uintptr_t i = 0; i < 4; i++) pthread_create(&t[i], NULL, churn, (void *)(i + 1));
  for (int i = 0; i < 4; i++) {
    void *bad = NULL;
    pthread_join(t[i], &bad);
    CHECK(bad == NULL);
  }
  CHECK(arena_bytes() == 0);
}

static void test_fork(void) {
  uint8_t *p = hs_malloc(1 * MB);
  memset(p, 3, MB);
  pid_t pid = fork();
  if (pid == 0) {
    uint8_t *q = hs_malloc(2 * MB);
    int rc = q == NULL || p[MB - 1] != 3 || hs_large_arena_usable(q) != 2 * MB;
    if (q) memset(q, 4, 2 * MB);
    hs_free(q);
    hs_free(p);
    _exit(rc == 0 && arena_bytes() == 0 ? 0 : 1);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(p[0] == 3 && p[MB - 1] == 3);
  hs_free(p);
  CHECK(arena_bytes() == 0);
}

/* In a child whose arena starts with every fresh huge page "slow": the
 * first block's probe turns huge pages off, later fresh pages are not
 * probed, hs_malloc's advice for larger blocks is off, blocks still work. */
static void test_slow_probe_turns_huge_pages_off(void) {
  pid_t pid = fork();
  if (pid == 0) {
    setenv("HS_LARGE_ARENA_SLOW_US", "0", 1);
    uint8_t *a = hs_malloc(4 * MB), *b = hs_malloc(6 * MB);
    hs_large_arena_info s;
    hs_large_arena_stats(&s);
    if (!s.enabled) _exit(0);
    int rc = a == NULL || b == NULL || s.huge_probes != 1 || s.huge_slow != 1 || s.huge_now ||
             hs_large_arena_huge_ok();
    if (a && b) {
      memset(a, 1, 4 * MB);
      memset(b, 2, 6 * MB);
      rc |= a[4 * MB - 1] != 1 || b[0] != 2;
    }
    hs_free(a);
    hs_free(b);
    _exit(rc);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
  /* Every free reaches the arena (no cache above it); sanitized builds
   * keep the arena off unless asked: ask, so that ASan checks its code. */
  setenv("HS_BLOCK_CACHE_MB", "0", 1);
  if (getenv("HS_LARGE_ARENA") == NULL) setenv("HS_LARGE_ARENA", "1", 1);
  if (getenv("HS_HUGEPAGES") != NULL) unsetenv("HS_HUGEPAGES");
  test_slow_probe_turns_huge_pages_off(); /* first: the child's arena is not started yet */
  if (!on()) return hs_test_finish("test_large_arena"); /* not Linux/64-bit, or no reservation */
  test_sizes_served();
  test_release_and_reuse();
  test_realloc_in_place();
  test_random_model();
  test_threads();
  test_fork();
  hs_large_arena_info s;
  hs_large_arena_stats(&s);
  CHECK(s.huge_probes >= 1); /* fresh pages were timed */
  return hs_test_finish("test_large_arena");
}
