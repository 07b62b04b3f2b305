/*
 * distance_neon.c — Arm Advanced SIMD (NEON) variants of the distance
 * kernels for AArch64, where NEON is part of the base architecture (so the
 * table is always usable there). On other targets the level does not exist
 * and hs_distance_kernels_neon() returns NULL.
 *
 * Four 4-lane accumulators hide FMA latency (vfmaq_f32); the tail (< 4
 * floats) is summed in scalar order. Popcounts use vcntq_u8 with widening
 * pairwise adds. Results differ from the scalar reference only by float
 * rounding of the reordered sums; tests/c/test_distance.c checks every level
 * the CPU supports, and scripts/test_neon.sh runs that check for AArch64
 * under qemu on x86 machines.
 */
#include "distance.h"

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <arm_neon.h>
#include <math.h>

static float neon_l2sq_f32(const float *a, const float *b, size_t n) {
  float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0), s2 = vdupq_n_f32(0), s3 = vdupq_n_f32(0);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float32x4_t d0 = vsubq_f32(vld1q_f32(a + i), vld1q_f32(b + i));
    float32x4_t d1 = vsubq_f32(vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
    float32x4_t d2 = vsubq_f32(vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
    float32x4_t d3 = vsubq_f32(vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
    s0 = vfmaq_f32(s0, d0, d0);
    s1 = vfmaq_f32(s1, d1, d1);
    s2 = vfmaq_f32(s2, d2, d2);
    s3 = vfmaq_f32(s3, d3, d3);
  }
  for (; i + 4 <= n; i += 4) {
    float32x4_t d = vsubq_f32(vld1q_f32(a + i), vld1q_f32(b + i));
    s0 = vfmaq_f32(s0, d, d);
  }
  float s = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
  for (; i < n; i++) {
    float d = a[i] - b[i];
    s += d * d;
  }
  return s;
}

static float neon_dot_f32(const float *a, const float *b, size_t n) {
  float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0), s2 = vdupq_n_f32(0), s3 = vdupq_n_f32(0);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
    s1 = vfmaq_f32(s1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
    s2 = vfmaq_f32(s2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
    s3 = vfmaq_f32(s3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
  }
  for (; i + 4 <= n; i += 4) s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
  float s = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
  for (; i < n; i++) s += a[i] * b[i];
  return s;
}

static float neon_l1_f32(const float *a, const float *b, size_t n) {
  float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0), s2 = vdupq_n_f32(0), s3 = vdupq_n_f32(0);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = vaddq_f32(s0, vabdq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
    s1 = vaddq_f32(s1, vabdq_f32(vld1q_f32(a + i + 4), vld1q_f32(b + i + 4)));
    s2 = vaddq_f32(s2, vabdq_f32(vld1q_f32(a + i + 8), vld1q_f32(b + i + 8)));
    s3 = vaddq_f32(s3, vabdq_f32(vld1q_f32(a + i + 12), vld1q_f32(b + i + 12)));
  }
  for (; i + 4 <= n; i += 4) s0 = vaddq_f32(s0, vabdq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
  float s = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
  for (; i < n; i++) s += fabsf(a[i] - b[i]);
  return s;
}

static void neon_cosine_parts_f32(const float *a, const float *b, size_t n, float out[3]) {
  float32x4_t ab0 = vdupq_n_f32(0), aa0 = vdupq_n_f32(0), bb0 = vdupq_n_f32(0);
  float32x4_t ab1 = vdupq_n_f32(0), aa1 = vdupq_n_f32(0), bb1 = vdupq_n_f32(0);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    float32x4_t x0 = vld1q_f32(a + i), y0 = vld1q_f32(b + i);
    float32x4_t x1 = vld1q_f32(a + i + 4), y1 = vld1q_f32(b + i + 4);
    ab0 = vfmaq_f32(ab0, x0, y0);
    aa0 = vfmaq_f32(aa0, x0, x0);
    bb0 = vfmaq_f32(bb0, y0, y0);
    ab1 = vfmaq_f32(ab1, x1, y1);
    aa1 = vfmaq_f32(aa1, x1, x1);
    bb1 = vfmaq_f32(bb1, y1, y1);
  }
  for (; i + 4 <= n; i += 4) {
    float32x4_t x = vld1q_f32(a + i), y = vld1q_f32(b + i);
    ab0 = vfmaq_f32(ab0, x, y);
    aa0 = vfmaq_f32(aa0, x, x);
    bb0 = vfmaq_f32(bb0, y, y);
  }
  float ab = vaddvq_f32(vaddq_f32(ab0, ab1)), aa = vaddvq_f32(vaddq_f32(aa0, aa1));
  float bb = vaddvq_f32(vaddq_f32(bb0, bb1));
  for (; i < n; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  out[0] = ab;
  out[1] = aa;
  out[2] = bb;
}

/* Bits set in 16 bytes, as one 64-bit count. */
static uint64_t popcount128(uint8x16_t v) {
  return vaddvq_u16(vpaddlq_u8(vcntq_u8(v)));
}

static uint64_t neon_hamming_u64(const uint64_t *a, const uint64_t *b, size_t words) {
  uint64_t c = 0;
  size_t i = 0;
  for (; i + 2 <= words; i += 2)
    c += popcount128(
        veorq_u8(vreinterpretq_u8_u64(vld1q_u64(a + i)), vreinterpretq_u8_u64(vld1q_u64(b + i))));
  for (; i < words; i++) c += (uint64_t)__builtin_popcountll(a[i] ^ b[i]);
  return c;
}

static void neon_jaccard_counts_u64(const uint64_t *a, const uint64_t *b, size_t words,
                                    uint64_t out[2]) {
  uint64_t inter = 0, uni = 0;
  size_t i = 0;
  for (; i + 2 <= words; i += 2) {
    uint8x16_t x = vreinterpretq_u8_u64(vld1q_u64(a + i));
    uint8x16_t y = vreinterpretq_u8_u64(vld1q_u64(b + i));
    inter += popcount128(vandq_u8(x, y));
    uni += popcount128(vorrq_u8(x, y));
  }
  for (; i < words; i++) {
    inter += (uint64_t)__builtin_popcountll(a[i] & b[i]);
    uni += (uint64_t)__builtin_popcountll(a[i] | b[i]);
  }
  out[0] = inter;
  out[1] = uni;
}

static const hs_distance_kernels neon_kernels = {
    .level = HS_SIMD_NEON,
    .l2sq_f32 = neon_l2sq_f32,
    .dot_f32 = neon_dot_f32,
    .l1_f32 = neon_l1_f32,
    .cosine_parts_f32 = neon_cosine_parts_f32,
    .hamming_u64 = neon_hamming_u64,
    .jaccard_counts_u64 = neon_jaccard_counts_u64,
};

const hs_distance_kernels *hs_distance_kernels_neon(void);
const hs_distance_kernels *hs_distance_kernels_neon(void) {
  return &neon_kernels;
}

#else /* not AArch64: the level does not exist */

const hs_distance_kernels *hs_distance_kernels_neon(void);
const hs_distance_kernels *hs_distance_kernels_neon(void) {
  return NULL;
}

#endif
