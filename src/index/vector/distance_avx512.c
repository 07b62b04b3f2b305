/*
 * distance_avx512.c — AVX-512F variants of the distance kernels. Built with
 * -mavx512f -mfma -mpopcnt (CMakeLists.txt, this file only) and used only
 * when __builtin_cpu_supports reports avx512f.
 *
 * Masked loads handle the tail in vector registers, so there is no scalar
 * remainder loop. Population counts use scalar popcnt: VPOPCNTQ belongs to
 * AVX512_VPOPCNTDQ, which many AVX-512 CPUs (Skylake-SP) lack.
 */
#include "distance.h"

#if defined(__x86_64__) && defined(__AVX512F__)

#include <immintrin.h>

static __mmask16 tail_mask(size_t rem) {
  return (__mmask16)((1u << rem) - 1u);
}

static float avx512_l2sq_f32(const float *a, const float *b, size_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
    __m512 d1 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16));
    s0 = _mm512_fmadd_ps(d0, d0, s0);
    s1 = _mm512_fmadd_ps(d1, d1, s1);
  }
  for (; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i);
    __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i));
    s0 = _mm512_fmadd_ps(d, d, s0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

static float avx512_dot_f32(const float *a, const float *b, size_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
  }
  for (; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i);
    s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

static float avx512_l1_f32(const float *a, const float *b, size_t n) {
  __m512 s0 = _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i);
    __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i));
    s0 = _mm512_add_ps(s0, _mm512_abs_ps(d));
  }
  return _mm512_reduce_add_ps(s0);
}

static void avx512_cosine_parts_f32(const float *a, const float *b, size_t n, float out[3]) {
  __m512 ab = _mm512_setzero_ps(), aa = _mm512_setzero_ps(), bb = _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i);
    __m512 x = _mm512_maskz_loadu_ps(m, a + i), y = _mm512_maskz_loadu_ps(m, b + i);
    ab = _mm512_fmadd_ps(x, y, ab);
    aa = _mm512_fmadd_ps(x, x, aa);
    bb = _mm512_fmadd_ps(y, y, bb);
  }
  out[0] = _mm512_reduce_add_ps(ab);
  out[1] = _mm512_reduce_add_ps(aa);
  out[2] = _mm512_reduce_add_ps(bb);
}

static uint64_t avx512_hamming_u64(const uint64_t *a, const uint64_t *b, size_t words) {
  uint64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  size_t i = 0;
  for (; i + 4 <= words; i += 4) {
    c0 += (uint64_t)__builtin_popcountll(a[i] ^ b[i]);
    c1 += (uint64_t)__builtin_popcountll(a[i + 1] ^ b[i + 1]);
    c2 += (uint64_t)__builtin_popcountll(a[i + 2] ^ b[i + 2]);
    c3 += (uint64_t)__builtin_popcountll(a[i + 3] ^ b[i + 3]);
  }
  for (; i < words; i++) c0 += (uint64_t)__builtin_popcountll(a[i] ^ b[i]);
  return c0 + c1 + c2 + c3;
}

static void avx512_jaccard_counts_u64(const uint64_t *a, const uint64_t *b, size_t words,
                                      uint64_t out[2]) {
  uint64_t in = 0, un = 0;
  for (size_t i = 0; i < words; i++) {
    in += (uint64_t)__builtin_popcountll(a[i] & b[i]);
    un += (uint64_t)__builtin_popcountll(a[i] | b[i]);
  }
  out[0] = in;
  out[1] = un;
}

static const hs_distance_kernels avx512_kernels = {
    .level = HS_SIMD_AVX512,
    .l2sq_f32 = avx512_l2sq_f32,
    .dot_f32 = avx512_dot_f32,
    .l1_f32 = avx512_l1_f32,
    .cosine_parts_f32 = avx512_cosine_parts_f32,
    .hamming_u64 = avx512_hamming_u64,
    .jaccard_counts_u64 = avx512_jaccard_counts_u64,
};

const hs_distance_kernels *hs_distance_kernels_avx512(void);
const hs_distance_kernels *hs_distance_kernels_avx512(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("popcnt")) return &avx512_kernels;
  return NULL;
}

#else /* not built for x86-64 with AVX-512F: the level does not exist */

const hs_distance_kernels *hs_distance_kernels_avx512(void);
const hs_distance_kernels *hs_distance_kernels_avx512(void) {
  return NULL;
}

#endif
