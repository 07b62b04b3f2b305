/*
 * common.h — status helpers, allocation, arenas, growable buffers and
 * overflow-checked arithmetic shared by every layer.
 *
 * All heap memory in the project goes through hs_malloc/hs_calloc/
 * hs_realloc/hs_free (declared here and in hyperstream.h), so that a test
 * can inject allocation failures and a host can hook the allocator.
 */
#ifndef HS_COMMON_H
#define HS_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hyperstream.h"

#if defined(__GNUC__)
#define HS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define HS_LIKELY(x) __builtin_expect(!!(x), 1)
#define HS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define HS_PRINTF(a, b)
#define HS_LIKELY(x) (x)
#define HS_UNLIKELY(x) (x)
#endif

/* ------------------------------------------------------------- errors */

/* Record `status` and a formatted message in `err` (which may be NULL),
 * unless `err` already holds an error. Returns `status` so callers can
 * write `return hs_error_set(err, HS_ERR_CORRUPT, "...")`. */
hs_status hs_error_set(hs_error *err, hs_status status, const char *fmt, ...) HS_PRINTF(3, 4);

/* Prefix the message already in `err` (which may be NULL) with context
 * ("file.parquet: ") as an error travels up through layers. Returns nothing
 * on purpose: callers return the status they hold, so a NULL `err` can
 * never turn a failure into HS_OK. */
void hs_error_prefix(hs_error *err, const char *fmt, ...) HS_PRINTF(2, 3);

/* Arrow C streams report failures as errno values: one errno per status,
 * both ways, so a status survives a trip through a stream (and a stream
 * wrapping a stream). Unknown errno values map to HS_ERR_INTERNAL. */
int hs_status_errno(hs_status status);
hs_status hs_status_of_errno(int errnum);

/* ---------------------------------------------------------- allocation */

/* Hard ceiling on any single allocation derived from untrusted sizes. */
#define HS_ALLOC_BYTES_MAX ((size_t)1 << 36) /* 64 GiB */

void *hs_malloc(size_t size);
void *hs_calloc(size_t count, size_t size);
void *hs_realloc(void *ptr, size_t size);
/* hs_free is declared in hyperstream.h; accepts NULL. */

/* Large-block cache (block_cache.c): hs_free keeps freed blocks of at least
 * 256 KiB, and hs_malloc / hs_realloc(NULL, n) hand them out again, so a
 * repeated read does not map and zero-fill its result buffers afresh.
 * Bounded by HS_BLOCK_CACHE_MB (0: off; default physical memory / 32 within
 * [64 MiB, 1 GiB]); a block kept over a second is freed at the next large
 * allocation or free. Blocks are not zeroed (hs_calloc zeroes what it takes).
 * get/put are the hooks alloc.c calls; clear frees every kept block. */
typedef struct hs_block_cache_info {
  long long blocks, hits, misses;
  size_t bytes, limit;
} hs_block_cache_info;
void *hs_block_cache_get(size_t size); /* NULL: none kept fits */
/* Growth of `p` (NULL: none yet) to at least `need` (>= 256 KiB) bytes into
 * a kept block of [need, hi] bytes: p's first `keep` bytes (SIZE_MAX: all)
 * are copied and p freed; NULL
 * (p untouched) when p already holds need bytes or no kept block fits.
 * hs_realloc and hs_buf_reserve try it before realloc. */
void *hs_block_cache_grow(void *p, size_t keep, size_t need, size_t hi);
/* Usable bytes of hs_malloc'd `p` (a kept block may hold fewer than an
 * hs_buf's doubled capacity, or more than asked); `requested` where the
 * allocator cannot tell. */
size_t hs_alloc_usable(void *p, size_t requested);
bool hs_block_cache_put(void *p); /* false: not kept (caller frees) */
void hs_block_cache_clear(void);
size_t hs_block_cache_limit(void);
void hs_block_cache_stats(hs_block_cache_info *out);
/* Large-block arena (large_arena.c): fresh blocks of 256 KiB - 64 MiB are
 * carved from one region advised transparent huge pages, so a first read
 * faults its results in 2 MB at a time instead of 4 KiB, while fresh huge
 * pages prove cheap (each first touch is timed); freed blocks'
 * whole huge pages go back to the kernel (the cache above keeps blocks for
 * reuse). HS_LARGE_ARENA=0 or HS_HUGEPAGES=0: off (also in sanitized builds
 * unless HS_LARGE_ARENA=1). alloc: NULL when not served (size out of range,
 * off, full); free: false when p is not an arena block; usable: 0 when not
 * an arena block; resize: p now holds >= size bytes in place (false: it
 * could not, p untouched). hs_malloc/hs_free/hs_realloc call these. */
typedef struct hs_large_arena_info {
  bool enabled;
  long long blocks, allocs, fallbacks;
  size_t bytes, top;
  long long huge_probes, huge_slow; /* fresh 2 MB pages timed; those found slow */
  bool huge_now;                    /* fresh pages get huge pages now */
} hs_large_arena_info;
void *hs_large_arena_alloc(size_t size);
bool hs_large_arena_free(void *p);
size_t hs_large_arena_usable(const void *p);
bool hs_large_arena_resize(void *p, size_t size);
void hs_large_arena_stats(hs_large_arena_info *out);
/* false for a while after a fresh huge page was found slow (large_arena.c). */
bool hs_large_arena_huge_ok(void);
char *hs_strdup(const char *s);
char *hs_strndup(const char *s, size_t n);

/* Overflow-checked arithmetic: return false on overflow. */
static inline bool hs_mul_size(size_t a, size_t b, size_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool hs_add_size(size_t a, size_t b, size_t *out) {
  return !__builtin_add_overflow(a, b, out);
}

/* --------------------------------------------------------------- arena */

/* A bump allocator: many small allocations, one free. Memory is zeroed.
 * Used for parsed metadata whose lifetime is that of its owner. */
typedef struct hs_arena_block hs_arena_block;
typedef struct hs_arena {
  hs_arena_block *head;
  size_t block_bytes; /* default block size; 0 means 64 KiB */
} hs_arena;

void hs_arena_init(hs_arena *arena);
void *hs_arena_alloc(hs_arena *arena, size_t size); /* 16-byte aligned, zeroed; NULL on OOM */
void *hs_arena_memdup(hs_arena *arena, const void *src, size_t size);
char *hs_arena_strndup(hs_arena *arena, const char *s, size_t n);
void hs_arena_reset(hs_arena *arena); /* frees all blocks */

/* ---------------------------------------------------- growable buffer */

/* A growable byte buffer. `data` is owned by the buffer until detached. */
typedef struct hs_buf {
  uint8_t *data;
  size_t len;
  size_t cap;
} hs_buf;

static inline void hs_buf_init(hs_buf *b) {
  b->data = NULL;
  b->len = 0;
  b->cap = 0;
}
void hs_buf_free(hs_buf *b);
/* Ensure room for `extra` more bytes. Returns false on OOM/overflow. */
bool hs_buf_reserve(hs_buf *b, size_t extra);
bool hs_buf_append(hs_buf *b, const void *src, size_t n);
bool hs_buf_append_byte(hs_buf *b, uint8_t v);
bool hs_buf_printf(hs_buf *b, const char *fmt, ...) HS_PRINTF(2, 3);
/* Detach: returns data (caller owns, hs_free) and resets the buffer. */
uint8_t *hs_buf_detach(hs_buf *b);
/* Detach, first shrinking the allocation to the bytes in use when it holds
 * much more (a buffer sized for a whole chunk that now holds a few selected
 * rows): what is lent to a long-lived Arrow array should not pin the rest. */
uint8_t *hs_buf_detach_fit(hs_buf *b);

/* Ask for transparent huge pages (2 MB) over the 2 MB-aligned part of
 * [p, p + len), for large memory read at random (a vector index's vectors
 * and links: one TLB entry per 2 MB instead of per 4 KB). Only pages not
 * yet touched get them, so call it right after allocating. A hint: a no-op
 * where the kernel or build lacks MADV_HUGEPAGE, for ranges under 4 MB, and
 * when HS_HUGEPAGES=0. */
void hs_mem_advise_huge(void *p, size_t len);

/* -------------------------------------------------------- little endian */

static inline uint32_t hs_load_u32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t hs_load_u64le(const uint8_t *p) {
  return (uint64_t)hs_load_u32le(p) | (uint64_t)hs_load_u32le(p + 4) << 32;
}
static inline void hs_store_u32le(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}
static inline void hs_store_u64le(uint8_t *p, uint64_t v) {
  hs_store_u32le(p, (uint32_t)v);
  hs_store_u32le(p + 4, (uint32_t)(v >> 32));
}

/* --------------------------------------------------------------- time */

/* Monotonic clock in nanoseconds. */
int64_t hs_now_ns(void);

#endif /* HS_COMMON_H */

/* ------------------------------------------------------------- base64 */
/* base64.c. Appended after the main guard, so it carries its own. */
#ifndef HS_COMMON_BASE64_H
#define HS_COMMON_BASE64_H

/* Append the RFC 4648 base64 encoding (standard alphabet, '=' padded) of
 * src[0..n) to `out` (no NUL terminator). Returns false on OOM/overflow,
 * leaving `out` unchanged. */
bool hs_base64_encode(const uint8_t *src, size_t n, hs_buf *out);
/* Strictly decode base64 text src[0..n) (not NUL-terminated; no whitespace,
 * length a multiple of 4, canonical padding bits) and append the bytes to
 * `out`. HS_ERR_CORRUPT names the offending offset; on any failure `out` is
 * unchanged (its contents; capacity may have grown). */
hs_status hs_base64_decode(const char *src, size_t n, hs_buf *out, hs_error *err);

#endif /* HS_COMMON_BASE64_H */

/* --------------------------------------------------------------- hash */
/* hash.c. Appended after the main guard, so it carries its own. */
#ifndef HS_COMMON_HASH_H
#define HS_COMMON_HASH_H

/* MurmurHash3, x86 32-bit variant, over data[0..len): the hash Iceberg's
 * bucket transform uses (seed 0). Reads bytes little-endian, so the result
 * is the same on every host. */
uint32_t hs_murmur3_x86_32(const void *data, size_t len, uint32_t seed);

#endif /* HS_COMMON_HASH_H */

/* ------------------------------------------------------------- crc32c */
/* crc32c.c. Appended after the main guard, so it carries its own. */
#ifndef HS_COMMON_CRC32C_H
#define HS_COMMON_CRC32C_H

/* CRC-32C (Castagnoli) of data[0..len) continuing `crc` (0 to start):
 * hs_crc32c_extend(hs_crc32c_extend(0, a, n), b, m) is the CRC of a then b.
 * Hardware (SSE4.2) where the CPU has it, else a portable table walk. */
uint32_t hs_crc32c_extend(uint32_t crc, const void *data, size_t len);
/* The portable walk alone (tests compare the two). */
uint32_t hs_crc32c_portable(uint32_t crc, const void *data, size_t len);

#endif /* HS_COMMON_CRC32C_H */

/* -------------------------------------------------------------- civil */
/* civil.c. Appended after the main guard, so it carries its own. */
#ifndef HS_COMMON_CIVIL_H
#define HS_COMMON_CIVIL_H

/* Days since 1970-01-01 of proleptic Gregorian date y-m-d (m 1..12; d may
 * run past the month: the result is then that many days later). */
int64_t hs_days_from_civil(int64_t y, int64_t m, int64_t d);
/* The inverse: day count -> year, month (1..12) and day (1..31). */
void hs_civil_from_days(int64_t days, int64_t *y, int *m, int *d);
bool hs_civil_leap_year(int64_t y);
/* Days in month m (1..12) of year y. */
int hs_civil_days_in_month(int64_t y, int m);

#endif /* HS_COMMON_CIVIL_H */
