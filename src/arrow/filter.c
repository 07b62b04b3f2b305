/*
 * filter.c — hs_arrow_array_filter: the rows of an array that a bitmap
 * keeps, as a new owned array (Arrow's "filter" kernel).
 *
 * One pass per buffer: fixed-width values of 1-8 bytes are copied 64 rows
 * at a time (a wholly kept word in one copy, else branch-free: the
 * destination advances by the keep bit), wider ones by runs of kept rows;
 * validity and boolean bits are compacted run by run, 64 bits at a time;
 * variable-width values are sized then copied by runs (one copy of a run's
 * bytes, its offsets moved by one difference); and nested columns recurse
 * with the bitmap their children need (a fixed-size list of D widens each
 * run by D, a list to its runs' value ranges). Scans use it to drop deleted
 * rows from whole row groups (src/query/scan.c, drop_deleted), where a row
 * selection of most rows would cost the Parquet reader a gather per row.
 */
#include <string.h>

#include "arrow.h"

/* x86-64: PEXT (BMI2) compacts 64 bits in one instruction and AVX-512F
 * compresses 8 or 16 kept values at once; used when the CPU has them
 * (checked once), the portable loops otherwise. HS_SIMD caps them as it
 * caps the distance kernels: "scalar" neither, "avx2" PEXT only (tests run
 * the portable loops this way). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#include <stdatomic.h>
#include <stdlib.h>
#define FILTER_X86 1
/* Bit 0: checked; bit 1: BMI2; bit 2: AVX-512F (every thread finds the same). */
static atomic_int cpu_has;
static int cpu_check(void) {
  int h = atomic_load_explicit(&cpu_has, memory_order_relaxed);
  if (h != 0) return h;
  const char *cap = getenv("HS_SIMD");
  bool scalar = cap != NULL && strcmp(cap, "scalar") == 0;
  bool avx2 = cap != NULL && strcmp(cap, "avx2") == 0;
  h = 1 | (!scalar && __builtin_cpu_supports("bmi2") ? 2 : 0) |
      (!scalar && !avx2 && __builtin_cpu_supports("avx512f") ? 4 : 0);
  atomic_store_explicit(&cpu_has, h, memory_order_relaxed);
  return h;
}
static bool have_bmi2(void) {
  return (cpu_check() & 2) != 0;
}
static bool have_avx512(void) {
  return (cpu_check() & 4) != 0;
}
#endif

#define FILTER_DEPTH_MAX 64

static inline bool bit_get(const uint8_t *b, int64_t i) {
  return (b[i >> 3] >> (i & 7)) & 1;
}

static uint8_t *bits_alloc(int64_t n, hs_error *err) {
  uint8_t *b = hs_calloc((size_t)(n + 63) / 64 * 8 + 8, 1);
  if (b == NULL) hs_error_set(err, HS_ERR_NOMEM, "filter: out of memory");
  return b;
}

/* 64 bits of `src` from bit `pos` (bits past `nbits` read as 0). */
static inline uint64_t bits_load(const uint8_t *src, int64_t pos, int64_t nbits) {
  int64_t byte = pos >> 3, bytes = (nbits + 7) >> 3;
  unsigned sh = (unsigned)(pos & 7);
  uint64_t v = 0, hi = 0;
  if (byte + 9 <= bytes) {
    memcpy(&v, src + byte, 8);
    hi = src[byte + 8];
  } else {
    for (int64_t b = 0; b < 8 && byte + b < bytes; b++) v |= (uint64_t)src[byte + b] << (8 * b);
    if (byte + 8 < bytes) hi = src[byte + 8];
  }
  return sh ? (v >> sh) | (hi << (64 - sh)) : v;
}

/* Compact bits src[off + i] for kept i < n into dst (k bits; dst zeroed,
 * room for whole 64-bit words). Runs of kept rows are copied 64 bits at a
 * time: the work is per run, not per row. */
#ifdef FILTER_X86
/* bits_compact with PEXT: per 64 rows, one load of their bits and one
 * extraction of the kept ones. */
__attribute__((target("bmi2,popcnt"))) static void bits_compact_pext(
    uint8_t *dst, const uint8_t *src, int64_t off, const uint64_t *keep, int64_t n) {
  uint64_t acc = 0;
  unsigned accn = 0;
  int64_t out = 0, nbits = off + n;
  for (int64_t w = 0; w * 64 < n; w++) {
    uint64_t m = keep[w];
    int64_t lim = n - w * 64 < 64 ? n - w * 64 : 64;
    if (lim < 64) m &= (UINT64_C(1) << lim) - 1;
    if (m == 0) continue;
    uint64_t bits = _pext_u64(bits_load(src, off + w * 64, nbits), m);
    unsigned len = (unsigned)__builtin_popcountll(m);
    acc |= bits << accn;
    if (accn + len >= 64) {
      memcpy(dst + 8 * out++, &acc, 8);
      acc = accn ? bits >> (64 - accn) : 0;
      accn = accn + len - 64;
    } else {
      accn += len;
    }
  }
  if (accn > 0) memcpy(dst + 8 * out, &acc, 8);
}
#endif

static void bits_compact(uint8_t *dst, const uint8_t *src, int64_t off, const uint64_t *keep,
                         int64_t n) {
#ifdef FILTER_X86
  if (have_bmi2()) {
    bits_compact_pext(dst, src, off, keep, n);
    return;
  }
#endif
  uint64_t acc = 0;
  unsigned accn = 0;
  int64_t out = 0; /* words written */
  int64_t nbits = off + n;
  for (int64_t w = 0; w * 64 < n; w++) {
    uint64_t m = keep[w];
    int64_t lim = n - w * 64 < 64 ? n - w * 64 : 64;
    if (lim < 64) m &= (UINT64_C(1) << lim) - 1;
    while (m != 0) {
      unsigned start = (unsigned)__builtin_ctzll(m);
      uint64_t rest = ~(m >> start);
      unsigned len = rest == 0 ? 64 - start : (unsigned)__builtin_ctzll(rest);
      uint64_t mask = len == 64 ? ~UINT64_C(0) : (UINT64_C(1) << len) - 1;
      uint64_t bits = bits_load(src, off + w * 64 + start, nbits) & mask;
      acc |= bits << accn;
      if (accn + len >= 64) {
        memcpy(dst + 8 * out++, &acc, 8);
        acc = accn ? bits >> (64 - accn) : 0;
        accn = accn + len - 64;
      } else {
        accn += len;
      }
      m &= len + start >= 64 ? 0 : ~UINT64_C(0) << (start + len);
    }
  }
  if (accn > 0) memcpy(dst + 8 * out, &acc, 8);
}

static int64_t count_zero_bits(const uint8_t *b, int64_t n) {
  int64_t ones = 0, i = 0;
  for (; i + 64 <= n; i += 64) {
    uint64_t w;
    memcpy(&w, b + i / 8, 8);
    ones += __builtin_popcountll(w);
  }
  for (; i < n; i++) ones += bit_get(b, i);
  return n - ones;
}

/* The next run [*lo, *hi) of set bits of keep[0 .. n) at or after *pos
 * (bits past n ignored); false when none is left. *pos moves past it. */
static inline bool next_run(const uint64_t *keep, int64_t n, int64_t *pos, int64_t *lo,
                            int64_t *hi) {
  int64_t p = *pos;
  if (p >= n) return false;
  int64_t w = p >> 6;
  uint64_t m = keep[w] & (~UINT64_C(0) << (p & 63));
  while (m == 0) {
    if (++w * 64 >= n) return false;
    m = keep[w];
  }
  int64_t a = w * 64 + __builtin_ctzll(m);
  if (a >= n) return false;
  uint64_t z = ~keep[w] & (~UINT64_C(0) << (a & 63));
  while (z == 0) {
    if (++w * 64 >= n) break;
    z = ~keep[w];
  }
  int64_t b = z == 0 ? n : w * 64 + __builtin_ctzll(z);
  *lo = a;
  *hi = b < n ? b : n;
  *pos = *hi;
  return true;
}

/* Fixed-width values of `w` bytes. Narrow values: per 64 rows, a whole
 * kept word is one copy, an empty one is skipped, else each value is
 * written and the destination advances by its keep bit (no branch per
 * row). Wide values (fixed-size list children are widened bitmaps, with
 * long runs): one copy per run of kept rows. */
#define COMPACT_WORDS(T)                                           \
  do {                                                             \
    T *d = (T *)(void *)dst;                                       \
    int64_t k = 0;                                                 \
    for (int64_t b = 0; b < n; b += 64) {                          \
      uint64_t m = keep[b >> 6];                                   \
      int64_t lim = n - b < 64 ? n - b : 64;                       \
      if (lim == 64 && m == ~UINT64_C(0)) {                        \
        memcpy(d + k, p + b * (int64_t)sizeof(T), 64 * sizeof(T)); \
        k += 64;                                                   \
        continue;                                                  \
      }                                                            \
      if (lim < 64) m &= (UINT64_C(1) << lim) - 1;                 \
      if (m == 0) continue;                                        \
      const uint8_t *q = p + b * (int64_t)sizeof(T);               \
      for (int64_t i = 0; i < lim; i++) {                          \
        T v;                                                       \
        memcpy(&v, q + i * (int64_t)sizeof(T), sizeof(T));         \
        d[k] = v;                                                  \
        k += (int64_t)((m >> i) & 1);                              \
      }                                                            \
    }                                                              \
  } while (0)

#ifdef FILTER_X86
/* 8- and 4-byte values with AVX-512F: per 8 (16) rows, one load and one
 * compress of the kept lanes, stored whole (up to a vector past the kept
 * values is written: filter_node allocates FILTER_SLACK values more). The
 * last rows load masked, so nothing past row n is read. */
__attribute__((target("avx512f,popcnt"))) static void compact64_avx512(uint8_t *dst,
                                                                       const uint8_t *p,
                                                                       const uint64_t *keep,
                                                                       int64_t n) {
  int64_t k = 0;
  for (int64_t b = 0; b < n; b += 64) {
    uint64_t m = keep[b >> 6];
    int64_t lim = n - b < 64 ? n - b : 64;
    if (lim < 64) m &= (UINT64_C(1) << lim) - 1;
    if (m == 0) continue;
    if (lim == 64) { /* 8 whole vectors, the source read ahead */
      __builtin_prefetch(p + (b + 256) * 8);
      __builtin_prefetch(p + (b + 256) * 8 + 256);
      for (int g = 0; g < 64; g += 8) {
        __mmask8 mk = (__mmask8)(m >> g);
        __m512i v = _mm512_loadu_si512((const void *)(p + (b + g) * 8));
        _mm512_storeu_si512((void *)(dst + k * 8), _mm512_maskz_compress_epi64(mk, v));
        k += __builtin_popcount(mk);
      }
      continue;
    }
    for (int64_t g = 0; g < lim; g += 8) {
      __mmask8 mk = (__mmask8)(m >> g);
      if (mk == 0) continue;
      __mmask8 ld = lim - g >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (lim - g)) - 1);
      __m512i v = _mm512_maskz_loadu_epi64(ld, p + (b + g) * 8);
      _mm512_storeu_si512((void *)(dst + k * 8), _mm512_maskz_compress_epi64(mk, v));
      k += __builtin_popcount(mk);
    }
  }
}

__attribute__((target("avx512f,popcnt"))) static void compact32_avx512(uint8_t *dst,
                                                                       const uint8_t *p,
                                                                       const uint64_t *keep,
                                                                       int64_t n) {
  int64_t k = 0;
  for (int64_t b = 0; b < n; b += 64) {
    uint64_t m = keep[b >> 6];
    int64_t lim = n - b < 64 ? n - b : 64;
    if (lim < 64) m &= (UINT64_C(1) << lim) - 1;
    if (m == 0) continue;
    if (lim == 64) { /* 4 whole vectors, the source read ahead */
      __builtin_prefetch(p + (b + 512) * 4);
      __builtin_prefetch(p + (b + 512) * 4 + 128);
      for (int g = 0; g < 64; g += 16) {
        __mmask16 mk = (__mmask16)(m >> g);
        __m512i v = _mm512_loadu_si512((const void *)(p + (b + g) * 4));
        _mm512_storeu_si512((void *)(dst + k * 4), _mm512_maskz_compress_epi32(mk, v));
        k += __builtin_popcount(mk);
      }
      continue;
    }
    for (int64_t g = 0; g < lim; g += 16) {
      __mmask16 mk = (__mmask16)(m >> g);
      if (mk == 0) continue;
      __mmask16 ld = lim - g >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (lim - g)) - 1);
      __m512i v = _mm512_maskz_loadu_epi32(ld, p + (b + g) * 4);
      _mm512_storeu_si512((void *)(dst + k * 4), _mm512_maskz_compress_epi32(mk, v));
      k += __builtin_popcount(mk);
    }
  }
}
#endif

/* Values past the kept ones that values_compact may write. */
#define FILTER_SLACK 16

static void values_compact(uint8_t *dst, const uint8_t *src, int64_t off, int w,
                           const uint64_t *keep, int64_t n) {
  const uint8_t *p = src + off * (int64_t)w;
#ifdef FILTER_X86
  if ((w == 8 || w == 4) && have_avx512()) {
    if (w == 8)
      compact64_avx512(dst, p, keep, n);
    else
      compact32_avx512(dst, p, keep, n);
    return;
  }
#endif
  /* d[k] is written before k is known kept: dst has room for more values
   * than the kept ones (filter_node allocates k + FILTER_SLACK). */
  if (w == 8) {
    COMPACT_WORDS(uint64_t);
    return;
  }
  if (w == 4) {
    COMPACT_WORDS(uint32_t);
    return;
  }
  if (w == 2) {
    COMPACT_WORDS(uint16_t);
    return;
  }
  if (w == 1) {
    COMPACT_WORDS(uint8_t);
    return;
  }
  int64_t pos = 0, lo, hi, k = 0;
  while (next_run(keep, n, &pos, &lo, &hi)) {
    memcpy(dst + k * w, p + lo * (int64_t)w, (size_t)((hi - lo) * w));
    k += hi - lo;
  }
}
#undef COMPACT_WORDS

/* A keep bitmap of `m` bits (zeroed, hs_malloc'd). */
static uint64_t *keep_alloc(int64_t m, hs_error *err) {
  uint64_t *k = hs_calloc((size_t)(m + 63) / 64 + 1, sizeof *k);
  if (k == NULL) hs_error_set(err, HS_ERR_NOMEM, "filter: out of memory");
  return k;
}

/* Set bits lo .. hi - 1 of k, a word at a time. */
static void keep_range(uint64_t *k, int64_t lo, int64_t hi) {
  if (lo >= hi) return;
  int64_t wl = lo >> 6, wh = (hi - 1) >> 6;
  uint64_t ml = ~UINT64_C(0) << (lo & 63), mh = ~UINT64_C(0) >> (63 - ((hi - 1) & 63));
  if (wl == wh) {
    k[wl] |= ml & mh;
    return;
  }
  k[wl] |= ml;
  for (int64_t w = wl + 1; w < wh; w++) k[w] = ~UINT64_C(0);
  k[wh] |= mh;
}

/* Rows off .. off + n - 1 of `a` (its own offset added here). */
static hs_status filter_node(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t off,
                             int64_t n, const uint64_t *keep, int64_t k, struct ArrowArray *out,
                             int depth, hs_error *err);

static hs_status filter_validity(const struct ArrowArray *a, int64_t off, int64_t n,
                                 const uint64_t *keep, int64_t k, struct ArrowArray *out,
                                 hs_error *err) {
  out->null_count = 0;
  const uint8_t *v = a->n_buffers > 0 ? a->buffers[0] : NULL;
  if (v == NULL || a->null_count == 0) return HS_OK;
  uint8_t *bits = bits_alloc(k, err);
  if (bits == NULL) return HS_ERR_NOMEM;
  bits_compact(bits, v, off, keep, n);
  hs_arrow_array_set_buffer(out, 0, bits);
  out->null_count = count_zero_bits(bits, k);
  return HS_OK;
}

/* Bytes a short value's copy may write (and read) past its end. */
#define STR_SHORT 16

/* Offsets of type T: the kept rows' values into bytes/offs (room for
 * STR_SHORT bytes past the kept ones); returns the bytes written. Per 64
 * rows: wholly kept, one copy of their bytes and the offsets moved by one
 * difference; else each row without a branch on its keep bit: its offset
 * written, a value of at most STR_SHORT bytes copied whole (where that much
 * can be read), the write position advanced by its length if kept. Longer
 * values are copied only when kept. */
#define BINARY_COMPACT(NAME, T)                                                             \
  static int64_t NAME(const T *restrict src, const uint8_t *restrict data,                  \
                      const uint64_t *restrict keep, int64_t n, T *restrict dst,            \
                      uint8_t *restrict bytes) {                                            \
    int64_t at = 0, j = 0;                                                                  \
    int64_t safe = (int64_t)src[n] - STR_SHORT; /* a copy from at most here stays inside */ \
    for (int64_t b = 0; b < n; b += 64) {                                                   \
      uint64_t m = keep[b >> 6];                                                            \
      int64_t lim = n - b < 64 ? n - b : 64;                                                \
      if (lim < 64) m &= (UINT64_C(1) << lim) - 1;                                          \
      if (m == 0) continue;                                                                 \
      const T *sp = src + b;                                                                \
      if (lim == 64 && m == ~UINT64_C(0)) {                                                 \
        int64_t o0 = (int64_t)sp[0], len = (int64_t)sp[64] - o0;                            \
        if (len > 0) memcpy(bytes + at, data + o0, (size_t)len);                            \
        T diff = (T)(at - o0);                                                              \
        for (int64_t i = 0; i < 64; i++) dst[j + i] = (T)(sp[i] + diff);                    \
        j += 64;                                                                            \
        at += len;                                                                          \
        continue;                                                                           \
      }                                                                                     \
      for (int64_t i = 0; i < lim; i++) {                                                   \
        int64_t o = (int64_t)sp[i], len = (int64_t)sp[i + 1] - o;                           \
        int64_t kb = (int64_t)((m >> i) & 1);                                               \
        dst[j] = (T)at;                                                                     \
        if (len <= STR_SHORT && o <= safe)                                                  \
          memcpy(bytes + at, data + o, STR_SHORT);                                          \
        else if (kb && len > 0)                                                             \
          memcpy(bytes + at, data + o, (size_t)len);                                        \
        at += len & -kb;                                                                    \
        j += kb;                                                                            \
      }                                                                                     \
    }                                                                                       \
    dst[j] = (T)at;                                                                         \
    return at;                                                                              \
  }
BINARY_COMPACT(binary_compact32, int32_t)
BINARY_COMPACT(binary_compact64, int64_t)
#undef BINARY_COMPACT

static hs_status filter_binary(const struct ArrowArray *a, int64_t off, int64_t n,
                               const uint64_t *keep, int64_t k, bool large, struct ArrowArray *out,
                               hs_error *err) {
  size_t ow = large ? 8 : 4;
  const uint8_t *ob = a->buffers[1], *data = a->buffers[2];
  /* Room for every row's bytes (no pass to size the kept ones); shrunk
   * after when many were dropped. */
  int64_t span = n == 0  ? 0
                 : large ? ((const int64_t *)(const void *)ob)[off + n] -
                               ((const int64_t *)(const void *)ob)[off]
                         : (int64_t)((const int32_t *)(const void *)ob)[off + n] -
                               (int64_t)((const int32_t *)(const void *)ob)[off];
  uint8_t *offs = hs_malloc((size_t)(k + 1) * ow);
  uint8_t *bytes = hs_malloc((size_t)span + STR_SHORT + 1);
  if (offs == NULL || bytes == NULL) {
    hs_free(offs);
    hs_free(bytes);
    return hs_error_set(err, HS_ERR_NOMEM, "filter: out of memory");
  }
  int64_t total = large ? binary_compact64((const int64_t *)(const void *)ob + off, data, keep, n,
                                           (int64_t *)(void *)offs, bytes)
                        : binary_compact32((const int32_t *)(const void *)ob + off, data, keep, n,
                                           (int32_t *)(void *)offs, bytes);
  if (total + total / 4 < span) { /* give back what the dropped rows held */
    uint8_t *fit = hs_realloc(bytes, (size_t)total + 1);
    if (fit != NULL) bytes = fit;
  }
  hs_arrow_array_set_buffer(out, 1, offs);
  hs_arrow_array_set_buffer(out, 2, bytes);
  return HS_OK;
}

static hs_status filter_list(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t off,
                             int64_t n, const uint64_t *keep, int64_t k, bool large,
                             struct ArrowArray *out, int depth, hs_error *err) {
  const uint8_t *ob = a->buffers[1];
#define OFF(i) (large ? ((const int64_t *)ob)[i] : (int64_t)((const int32_t *)ob)[i])
  int64_t lo = n > 0 ? OFF(off) : 0, hi = n > 0 ? OFF(off + n) : 0;
  uint64_t *ck = keep_alloc(hi - lo, err);
  uint8_t *offs = hs_malloc((size_t)(k + 1) * (large ? 8 : 4));
  if (ck == NULL || offs == NULL) {
    hs_free(ck);
    hs_free(offs);
    return hs_error_set(err, HS_ERR_NOMEM, "filter: out of memory");
  }
  int64_t j = 0, at = 0, pos = 0, rl, rh;
  while (next_run(keep, n, &pos, &rl, &rh)) { /* a run of kept lists: their values' range */
    int64_t b = OFF(off + rl), e = OFF(off + rh);
    for (int64_t i = rl; i < rh; i++, j++) {
      int64_t o = at + OFF(off + i) - b;
      if (large)
        ((int64_t *)offs)[j] = o;
      else
        ((int32_t *)offs)[j] = (int32_t)o;
    }
    keep_range(ck, b - lo, e - lo);
    at += e - b;
  }
#undef OFF
  if (large)
    ((int64_t *)offs)[k] = at;
  else
    ((int32_t *)offs)[k] = (int32_t)at;
  hs_arrow_array_set_buffer(out, 1, offs);
  hs_status st = filter_node(s->children[0], a->children[0], lo, hi - lo, ck, at, out->children[0],
                             depth + 1, err);
  hs_free(ck);
  return st;
}

static hs_status filter_node(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t off,
                             int64_t n, const uint64_t *keep, int64_t k, struct ArrowArray *out,
                             int depth, hs_error *err) {
  memset(out, 0, sizeof *out);
  const char *name = s->name ? s->name : "";
  if (depth > FILTER_DEPTH_MAX) return hs_error_set(err, HS_ERR_UNSUPPORTED, "filter: too deep");
  if (s->dictionary != NULL)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "filter: column '%s': dictionary arrays", name);
  hs_arrow_type at;
  hs_status st = hs_arrow_type_parse(s->format, &at, err);
  if (st != HS_OK) return st;
  off += a->offset;
  int64_t nb, nc;
  if (!hs_arrow_type_layout(&at, s->n_children, &nb, &nc))
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "filter: column '%s': Arrow type '%s'", name,
                        s->format);
  if (nc != s->n_children || a->n_children != nc || a->n_buffers < nb)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "filter: column '%s': malformed array", name);
  if ((st = hs_arrow_array_init(out, nb, nc, err)) != HS_OK) return st;
  out->length = k;
  if (at.id == HS_AT_NA) {
    out->null_count = k;
    return HS_OK;
  }
  if ((st = filter_validity(a, off, n, keep, k, out, err)) != HS_OK) return st;
  switch (at.id) {
  case HS_AT_BOOL: {
    uint8_t *bits = bits_alloc(k, err);
    if (bits == NULL) return HS_ERR_NOMEM;
    bits_compact(bits, a->buffers[1], off, keep, n);
    hs_arrow_array_set_buffer(out, 1, bits);
    return HS_OK;
  }
  case HS_AT_BINARY:
  case HS_AT_STRING: return filter_binary(a, off, n, keep, k, false, out, err);
  case HS_AT_LARGE_BINARY:
  case HS_AT_LARGE_STRING: return filter_binary(a, off, n, keep, k, true, out, err);
  case HS_AT_LIST:
  case HS_AT_MAP: return filter_list(s, a, off, n, keep, k, false, out, depth, err);
  case HS_AT_LARGE_LIST: return filter_list(s, a, off, n, keep, k, true, out, depth, err);
  case HS_AT_STRUCT:
    for (int64_t c = 0; st == HS_OK && c < nc; c++)
      st = filter_node(s->children[c], a->children[c], off, n, keep, k, out->children[c], depth + 1,
                       err);
    return st;
  case HS_AT_FIXED_LIST: {
    int64_t d = at.width;
    uint64_t *ck = keep_alloc(n * d, err);
    if (ck == NULL) return HS_ERR_NOMEM;
    int64_t pos = 0, rl, rh;
    while (next_run(keep, n, &pos, &rl, &rh)) keep_range(ck, rl * d, rh * d);
    st = filter_node(s->children[0], a->children[0], off * d, n * d, ck, k * d, out->children[0],
                     depth + 1, err);
    hs_free(ck);
    return st;
  }
  default: {
    int w = hs_arrow_type_byte_width(&at);
    uint8_t *vals = hs_malloc((size_t)(k + FILTER_SLACK) * (size_t)w);
    if (vals == NULL) return hs_error_set(err, HS_ERR_NOMEM, "filter: out of memory");
    values_compact(vals, a->buffers[1], off, w, keep, n);
    hs_arrow_array_set_buffer(out, 1, vals);
    return HS_OK;
  }
  }
}

hs_status hs_arrow_array_filter(const struct ArrowSchema *s, const struct ArrowArray *a,
                                const uint64_t *keep, int64_t n_keep, struct ArrowArray *out,
                                hs_error *err) {
  hs_status st = filter_node(s, a, 0, a->length, keep, n_keep, out, 0, err);
  if (st != HS_OK) hs_arrow_array_release(out);
  return st;
}
