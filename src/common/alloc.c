/* alloc.c — the one allocation wrapper, arenas and growable buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "common.h"

void *hs_malloc(size_t size) {
  if (size > HS_ALLOC_BYTES_MAX) return NULL;
  void *p = hs_block_cache_get(size);
  if (p != NULL) return p;
  /* A fresh large block comes from the huge-page arena: it faults in 2 MB
   * at a time together with its neighbours (large_arena.c). */
  p = hs_large_arena_alloc(size);
  if (p != NULL) return p;
  p = malloc(size ? size : 1);
  /* A fresh large block (a first read's results) faults in 2 MB at a time
   * instead of 4 KB: ~500x fewer faults for the same zero-filling. */
  if (p != NULL && size >= ((size_t)4 << 20) && hs_large_arena_huge_ok()) {
    hs_mem_advise_huge(p, size);
  }
  return p;
}

void *hs_calloc(size_t count, size_t size) {
  size_t total;
  if (!hs_mul_size(count, size, &total) || total > HS_ALLOC_BYTES_MAX) return NULL;
  /* A kept block zeroed here costs a memset of warm memory; a fresh one
   * from calloc is mapped and zero-filled by the kernel a page fault at a
   * time (~10x the memset on this project's VMs: a 1M-row decimal column
   * of 16 MB was ~4,000 faults per row group read). */
  void *p = hs_block_cache_get(total);
  if (p == NULL) p = hs_large_arena_alloc(total); /* reused units are not zero */
  if (p != NULL) {
    memset(p, 0, total);
    return p;
  }
  p = calloc(total ? total : 1, 1);
  if (p != NULL && total >= ((size_t)4 << 20) && hs_large_arena_huge_ok()) {
    hs_mem_advise_huge(p, total);
  }
  return p;
}

void *hs_realloc(void *ptr, size_t size) {
  if (size > HS_ALLOC_BYTES_MAX) return NULL;
  if (ptr == NULL) return hs_malloc(size);
  /* Growing into a kept block: a copy into warm memory costs less than the
   * page faults of growing in place (a buffer doubling as pages arrive). */
  void *kept = size <= SIZE_MAX / 2 ? hs_block_cache_grow(ptr, SIZE_MAX, size, 2 * size) : NULL;
  if (kept != NULL) return kept;
  size_t have = hs_large_arena_usable(ptr);
  if (have != 0) { /* an arena block: in place when the units allow, else moved */
    if (hs_large_arena_resize(ptr, size)) return ptr;
    void *q = hs_malloc(size);
    if (q == NULL) return NULL;
    memcpy(q, ptr, have < size ? have : size);
    hs_free(ptr);
    return q;
  }
  return realloc(ptr, size ? size : 1);
}

void hs_free(void *ptr) {
  if (ptr == NULL || hs_block_cache_put(ptr) || hs_large_arena_free(ptr)) return;
  free(ptr);
}

char *hs_strndup(const char *s, size_t n) {
  char *out = hs_malloc(n + 1);
  if (out == NULL) return NULL;
  memcpy(out, s, n);
  out[n] = '\0';
  return out;
}

char *hs_strdup(const char *s) {
  return hs_strndup(s, strlen(s));
}

void hs_mem_advise_huge(void *p, size_t len) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20;
  const char *env = getenv("HS_HUGEPAGES");
  if (p == NULL || len < 2 * huge || (env != NULL && env[0] == '0')) return;
  uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
  uintptr_t b = ((uintptr_t)p + len) & ~(huge - 1);
  if (b > a) (void)madvise((void *)a, (size_t)(b - a), MADV_HUGEPAGE);
#else
  (void)p;
  (void)len;
#endif
}

/* ---------------------------------------------------------------- arena */

struct hs_arena_block {
  hs_arena_block *next;
  size_t used;
  size_t cap;
  _Alignas(16) uint8_t data[];
};

void hs_arena_init(hs_arena *arena) {
  arena->head = NULL;
  arena->block_bytes = 0;
}

void *hs_arena_alloc(hs_arena *arena, size_t size) {
  size = (size + 15u) & ~(size_t)15u;
  if (size > HS_ALLOC_BYTES_MAX) return NULL;
  hs_arena_block *b = arena->head;
  if (b == NULL || b->cap - b->used < size) {
    size_t cap = arena->block_bytes ? arena->block_bytes : 65536;
    if (cap < size) cap = size;
    b = hs_malloc(sizeof *b + cap);
    if (b == NULL) return NULL;
    b->cap = cap;
    b->used = 0;
    b->next = arena->head;
    arena->head = b;
  }
  void *p = b->data + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

void *hs_arena_memdup(hs_arena *arena, const void *src, size_t size) {
  void *p = hs_arena_alloc(arena, size);
  if (p != NULL && size) memcpy(p, src, size);
  return p;
}

char *hs_arena_strndup(hs_arena *arena, const char *s, size_t n) {
  char *p = hs_arena_alloc(arena, n + 1);
  if (p == NULL) return NULL;
  if (n) memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

void hs_arena_reset(hs_arena *arena) {
  hs_arena_block *b = arena->head;
  while (b != NULL) {
    hs_arena_block *next = b->next;
    hs_free(b);
    b = next;
  }
  arena->head = NULL;
}

/* --------------------------------------------------------------- buffer */

void hs_buf_free(hs_buf *b) {
  hs_free(b->data);
  hs_buf_init(b);
}

bool hs_buf_reserve(hs_buf *b, size_t extra) {
  size_t need;
  if (!hs_add_size(b->len, extra, &need)) return false;
  if (need <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need) {
    if (!hs_mul_size(cap, 2, &cap)) return false;
  }
  /* A kept block of up to the doubled capacity (or twice the need) will
   * do: blocks come back to the cache at their fitted sizes (detach_fit),
   * between the powers of two the doubling asks for. */
  size_t hi = need > SIZE_MAX / 2 || cap > 2 * need ? cap : 2 * need;
  uint8_t *p = hs_block_cache_grow(b->data, b->len, need, hi);
  if (p == NULL) p = hs_realloc(b->data, cap);
  if (p == NULL) return false;
  b->data = p;
  b->cap = hs_alloc_usable(p, cap); /* a kept block may be larger: use it */
  return true;
}

bool hs_buf_append(hs_buf *b, const void *src, size_t n) {
  if (n == 0) return true;
  if (!hs_buf_reserve(b, n)) return false;
  memcpy(b->data + b->len, src, n);
  b->len += n;
  return true;
}

bool hs_buf_append_byte(hs_buf *b, uint8_t v) {
  return hs_buf_append(b, &v, 1);
}

bool hs_buf_printf(hs_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !hs_buf_reserve(b, (size_t)n + 1)) {
    va_end(ap2);
    return false;
  }
  vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  b->len += (size_t)n;
  return true;
}

uint8_t *hs_buf_detach(hs_buf *b) {
  uint8_t *p = b->data;
  hs_buf_init(b);
  return p;
}

uint8_t *hs_buf_detach_fit(hs_buf *b) {
  if (b->data != NULL && b->cap - b->len > b->len / 4 + 4096) {
    uint8_t *p = hs_realloc(b->data, b->len);
    if (p != NULL) { /* on failure keep the larger block: still correct */
      b->data = p;
      b->cap = b->len;
    }
  }
  return hs_buf_detach(b);
}

int64_t hs_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
