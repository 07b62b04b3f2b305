/*
 * distance_avx2.c — AVX2 + FMA variants of the distance kernels. Built with
 * -mavx2 -mfma -mpopcnt (CMakeLists.txt, this file only); the dispatcher in
 * distance.c calls hs_distance_kernels_avx2() and uses the table only when
 * __builtin_cpu_supports reports AVX2 and FMA, so no other code runs these
 * instructions on a CPU without them.
 *
 * Four 8-lane accumulators hide FMA latency; the tail (< 8 floats) is summed
 * in scalar order. Results differ from the scalar reference only by float
 * rounding of the reordered sums.
 */
#include "distance.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)

#include <immintrin.h>
#include <math.h>

static float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

static float avx2_l2sq_f32(const float *a, const float *b, size_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
    __m256 d2 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16));
    __m256 d3 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24));
    s0 = _mm256_fmadd_ps(d0, d0, s0);
    s1 = _mm256_fmadd_ps(d1, d1, s1);
    s2 = _mm256_fmadd_ps(d2, d2, s2);
    s3 = _mm256_fmadd_ps(d3, d3, s3);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 d = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    s0 = _mm256_fmadd_ps(d, d, s0);
  }
  float s = hsum256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < n; i++) {
    float d = a[i] - b[i];
    s += d * d;
  }
  return s;
}

static float avx2_dot_f32(const float *a, const float *b, size_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8)
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  float s = hsum256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < n; i++) s += a[i] * b[i];
  return s;
}

static float avx2_l1_f32(const float *a, const float *b, size_t n) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
    s0 = _mm256_add_ps(s0, _mm256_and_ps(d0, abs_mask));
    s1 = _mm256_add_ps(s1, _mm256_and_ps(d1, abs_mask));
  }
  for (; i + 8 <= n; i += 8) {
    __m256 d = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    s0 = _mm256_add_ps(s0, _mm256_and_ps(d, abs_mask));
  }
  float s = hsum256(_mm256_add_ps(s0, s1));
  for (; i < n; i++) s += fabsf(a[i] - b[i]);
  return s;
}

static void avx2_cosine_parts_f32(const float *a, const float *b, size_t n, float out[3]) {
  __m256 ab = _mm256_setzero_ps(), aa = _mm256_setzero_ps(), bb = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_loadu_ps(a + i), y = _mm256_loadu_ps(b + i);
    ab = _mm256_fmadd_ps(x, y, ab);
    aa = _mm256_fmadd_ps(x, x, aa);
    bb = _mm256_fmadd_ps(y, y, bb);
  }
  float sab = hsum256(ab), saa = hsum256(aa), sbb = hsum256(bb);
  for (; i < n; i++) {
    sab += a[i] * b[i];
    saa += a[i] * a[i];
    sbb += b[i] * b[i];
  }
  out[0] = sab;
  out[1] = saa;
  out[2] = sbb;
}

/* popcnt is scalar on every AVX2 CPU; four independent counters keep the
 * port busy. A pshufb nibble-count would win only on very long vectors. */
static uint64_t avx2_hamming_u64(const uint64_t *a, const uint64_t *b, size_t words) {
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

static void avx2_jaccard_counts_u64(const uint64_t *a, const uint64_t *b, size_t words,
                                    uint64_t out[2]) {
  uint64_t in0 = 0, in1 = 0, un0 = 0, un1 = 0;
  size_t i = 0;
  for (; i + 2 <= words; i += 2) {
    in0 += (uint64_t)__builtin_popcountll(a[i] & b[i]);
    un0 += (uint64_t)__builtin_popcountll(a[i] | b[i]);
    in1 += (uint64_t)__builtin_popcountll(a[i + 1] & b[i + 1]);
    un1 += (uint64_t)__builtin_popcountll(a[i + 1] | b[i + 1]);
  }
  for (; i < words; i++) {
    in0 += (uint64_t)__builtin_popcountll(a[i] & b[i]);
    un0 += (uint64_t)__builtin_popcountll(a[i] | b[i]);
  }
  out[0] = in0 + in1;
  out[1] = un0 + un1;
}

static const hs_distance_kernels avx2_kernels = {
    .level = HS_SIMD_AVX2,
    .l2sq_f32 = avx2_l2sq_f32,
    .dot_f32 = avx2_dot_f32,
    .l1_f32 = avx2_l1_f32,
    .cosine_parts_f32 = avx2_cosine_parts_f32,
    .hamming_u64 = avx2_hamming_u64,
    .jaccard_counts_u64 = avx2_jaccard_counts_u64,
};

const hs_distance_kernels *hs_distance_kernels_avx2(void);
const hs_distance_kernels *hs_distance_kernels_avx2(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("popcnt")) {
    return &avx2_kernels;
  }
  return NULL;
}

#else /* not built for x86-64 with AVX2: the level does not exist */

const hs_distance_kernels *hs_distance_kernels_avx2(void);
const hs_distance_kernels *hs_distance_kernels_avx2(void) {
  return NULL;
}

#endif
