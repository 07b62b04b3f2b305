/*
 * page_crc.c — PageHeader.crc: the CRC-32 of zlib and gzip (reflected
 * polynomial 0xEDB88320, initial and final value inverted) over a page's
 * bytes as stored, i.e. after compression, header excluded, as parquet-mr
 * and Arrow compute it.
 *
 * Every data file we write carries one per page and every page read is
 * checked, so its speed matters to appends and full scans: zlib's table
 * CRC runs at ~1.5-3 GB/s here. On x86-64 with PCLMULQDQ the bytes are
 * folded instead, four 16-byte lanes at a time (carry-less multiplication
 * by x^(512+64) and x^512 mod P, then by x^(128+64) and x^128 mod P to
 * fold the lanes into one); the folded 16 bytes are congruent mod P to
 * everything folded so far, so the CRC finishes as zlib's CRC of those 16
 * bytes (started from a zero state) and the tail after them. No Barrett
 * reduction is needed. tests/c/test_writer.c compares it with zlib on
 * every length 0..300 and large unaligned buffers.
 */
#include <stdatomic.h>
#include <zlib.h>

#include "compress.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define PC_CLMUL 1
#endif

static uint32_t crc_zlib(uint32_t crc, const uint8_t *p, size_t n) {
  while (n > 0) {
    uInt k = n > ((size_t)1 << 30) ? (uInt)1 << 30 : (uInt)n;
    crc = (uint32_t)crc32(crc, p, k);
    p += k;
    n -= k;
  }
  return crc;
}

#ifdef PC_CLMUL
__attribute__((target("pclmul,sse2"))) static inline __m128i fold(__m128i x, __m128i k,
                                                                  __m128i next) {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

#define LOAD(q) _mm_loadu_si128((const __m128i *)(const void *)(q))

/* n >= 64. */
__attribute__((target("pclmul,sse2"))) static uint32_t crc_clmul(uint32_t crc, const uint8_t *p,
                                                                 size_t n) {
  /* Low qword: x^(4*128+32) mod P, high: x^(4*128-32) mod P (bit-reflected,
   * shifted one place, as the reflected product needs). */
  const __m128i k4x = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
  const __m128i k1x = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL); /* likewise for 128 bits */
  __m128i x0 = _mm_xor_si128(LOAD(p), _mm_cvtsi32_si128((int)~crc));
  __m128i x1 = LOAD(p + 16), x2 = LOAD(p + 32), x3 = LOAD(p + 48);
  p += 64;
  n -= 64;
  for (; n >= 64; p += 64, n -= 64) {
    x0 = fold(x0, k4x, LOAD(p));
    x1 = fold(x1, k4x, LOAD(p + 16));
    x2 = fold(x2, k4x, LOAD(p + 32));
    x3 = fold(x3, k4x, LOAD(p + 48));
  }
  x0 = fold(x0, k1x, x1);
  x0 = fold(x0, k1x, x2);
  x0 = fold(x0, k1x, x3);
  for (; n >= 16; p += 16, n -= 16) x0 = fold(x0, k1x, LOAD(p));
  uint8_t b[16];
  _mm_storeu_si128((__m128i *)(void *)b, x0);
  /* zlib's crc32(~0, b) is the inverted CRC of b from a zero state, which
   * is the state to continue the tail with. */
  return crc_zlib(crc_zlib(0xFFFFFFFFu, b, 16), p, n);
}
#undef LOAD
#endif

uint32_t hs_pq_crc32(uint32_t crc, const void *data, size_t len) {
  const uint8_t *p = (const uint8_t *)data;
#ifdef PC_CLMUL
  static atomic_int have = -1;
  int h = atomic_load_explicit(&have, memory_order_relaxed);
  if (h < 0) {
    h = __builtin_cpu_supports("pclmul") ? 1 : 0;
    atomic_store_explicit(&have, h, memory_order_relaxed);
  }
  if (h && len >= 64) return crc_clmul(crc, p, len);
#endif
  return crc_zlib(crc, p, len);
}

uint32_t hs_pq_crc32_portable(uint32_t crc, const void *data, size_t len) {
  return crc_zlib(crc, (const uint8_t *)data, len);
}
