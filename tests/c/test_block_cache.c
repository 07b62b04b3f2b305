/*
 * test_block_cache.c — the large-block cache under hs_malloc / hs_free
 * (common/block_cache.c): a freed large block is handed out again to a
 * request of about its size and not to one much smaller or larger; small
 * blocks are never kept; the byte limit holds under random sizes from
 * several threads; realloc of a handed-out block keeps its bytes; clear
 * empties it; hs_calloc takes a kept block and hands it out zeroed. Every block is written whole
 * and checked, so a block handed out twice at once would show as a wrong byte (and to ASan as
 * overlap).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "hs_test.h"

#define KB ((size_t)1 << 10)

static void test_reuse_and_fit(void) {
  hs_block_cache_clear();
  hs_block_cache_info a, b;
  if (hs_block_cache_limit() == 0) return; /* HS_BLOCK_CACHE_MB=0, or no glibc */
  uint8_t *p = hs_malloc(1024 * KB);
  CHECK(p != NULL);
  memset(p, 7, 1024 * KB);
  hs_free(p);
  hs_block_cache_stats(&a);
#if defined(__GLIBC__)
  CHECK_EQ_INT(a.blocks, 1);
  CHECK(a.bytes >= 1024 * KB);
  /* Too small a request for it (more than 1.5x waste) and too large: missed. */
  uint8_t *small = hs_malloc(600 * KB);
  uint8_t *big = hs_malloc(1100 * KB);
  CHECK(small != p && big != p);
  hs_block_cache_stats(&b);
  CHECK_EQ_INT(b.blocks, 1);
  hs_free(small);
  hs_free(big);
  hs_block_cache_clear();
  p = hs_malloc(1024 * KB);
  memset(p, 1, 1024 * KB);
  hs_free(p);
  uint8_t *q = hs_malloc(1000 * KB); /* fits: the same block back */
  CHECK(q == p);
  hs_block_cache_stats(&b);
  CHECK_EQ_INT(b.blocks, 0);
  /* realloc of a handed-out block keeps its bytes. */
  for (size_t i = 0; i < 1000 * KB; i++) q[i] = (uint8_t)(i * 31);
  q = hs_realloc(q, 4096 * KB);
  CHECK(q != NULL);
  bool same = true;
  for (size_t i = 0; i < 1000 * KB; i++) same &= q[i] == (uint8_t)(i * 31);
  CHECK(same);
  hs_free(q);
  /* hs_realloc(NULL, n) takes from the cache like hs_malloc. */
  uint8_t *r = hs_realloc(NULL, 4000 * KB);
  CHECK(r == q);
  hs_free(r);
  /* A growing buffer moves into a kept block of up to twice the request,
   * bytes kept, and hs_buf then uses all of it. */
  hs_block_cache_clear();
  uint8_t *k = hs_malloc(1024 * KB);
  hs_free(k);
  uint8_t *g = hs_malloc(300 * KB);
  for (size_t i = 0; i < 300 * KB; i++) g[i] = (uint8_t)(i * 7);
  g = hs_realloc(g, 600 * KB);
  CHECK(g == k);
  same = true;
  for (size_t i = 0; i < 300 * KB; i++) same &= g[i] == (uint8_t)(i * 7);
  CHECK(same);
  hs_free(g);
  hs_buf hb;
  hs_buf_init(&hb);
  CHECK(hs_buf_reserve(&hb, 900 * KB));
  CHECK(hb.data == k && hb.cap >= 1024 * KB);
  hs_buf_free(&hb);
  /* Small blocks are never kept. */
  hs_block_cache_clear();
  void *s = hs_malloc(100 * KB);
  hs_free(s);
  hs_block_cache_stats(&b);
  CHECK_EQ_INT(b.blocks, 0);
#endif
  hs_block_cache_clear();
  hs_block_cache_stats(&b);
  CHECK_EQ_INT(b.blocks, 0);
  CHECK(b.bytes == 0);
}

/* Threads allocate, fill with their tag, check and free random sizes. */
static void *churn(void *arg) {
  uint64_t st = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ull + 1;
  uint8_t tag = (uint8_t)(uintptr_t)arg;
  int bad = 0;
  uint8_t *held[8] = {0};
  size_t held_n[8] = {0};
  for (int it = 0; it < 400; it++) {
    int k = (int)(hs_test_rand(&st) % 8);
    if (held[k] != NULL) {
      for (size_t i = 0; i < held_n[k]; i += 4093) bad |= held[k][i] != tag;
      bad |= held[k][held_n[k] - 1] != tag;
      hs_free(held[k]);
    }
    size_t n = 200 * KB + (size_t)(hs_test_rand(&st) % (3000 * KB));
    held[k] = hs_malloc(n);
    held_n[k] = n;
    if (held[k] == NULL) return (void *)1;
    memset(held[k], tag, n);
  }
  for (int k = 0; k < 8; k++) hs_free(held[k]);
  return (void *)(uintptr_t)bad;
}

static void test_threads_and_limit(void) {
  pthread_t t[4];
  for (uintptr_t i = 0; i < 4; i++) pthread_create(&t[i], NULL, churn, (void *)(i + 1));
  for (int i = 0; i < 4; i++) {
    void *bad = NULL;
    pthread_join(t[i], &bad);
    CHECK(bad == NULL);
  }
  hs_block_cache_info s;
  hs_block_cache_stats(&s);
  CHECK(s.bytes <= s.limit);
  CHECK(s.blocks <= 256);
  hs_block_cache_clear();
}

/* hs_calloc reuses a kept (dirty) block and zeroes it; a fresh one is zero too. */
static void test_calloc_zeroes_kept(void) {
  hs_block_cache_clear();
  if (hs_block_cache_limit() == 0) return;
  size_t n = 3000 * KB;
  uint8_t *p = hs_malloc(n);
  CHECK(p != NULL);
  memset(p, 0xA5, n);
  hs_free(p);
  uint8_t *q = hs_calloc(n / 8, 8);
  CHECK(q != NULL);
#if defined(__GLIBC__)
  CHECK(q == p);
#endif
  bool zero = true;
  for (size_t i = 0; i < n; i++) zero &= q[i] == 0;
  CHECK(zero);
  uint8_t *f = hs_calloc(n, 2); /* nothing kept fits: fresh, zero */
  CHECK(f != NULL);
  zero = true;
  for (size_t i = 0; i < 2 * n; i++) zero &= f[i] == 0;
  CHECK(zero);
  hs_free(f);
  hs_free(q);
  hs_block_cache_clear();
}

int main(void) {
  /* Sanitized builds keep the cache off unless asked: ask, so that ASan
   * checks the cache itself. */
  if (getenv("HS_BLOCK_CACHE_MB") == NULL) setenv("HS_BLOCK_CACHE_MB", "256", 1);
  test_reuse_and_fit();
  test_threads_and_limit();
  test_calloc_zeroes_kept();
  return hs_test_finish("test_block_cache");
}
