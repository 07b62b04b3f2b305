/*
 * vq_block.c — block kernels of vq_block.h: scalar, AVX2+FMA and AVX-512F
 * variants in one file through function target attributes (the file
 * itself is compiled for baseline x86-64), chosen per call from the
 * dispatched distance level.
 */
#include "vq_block.h"

#include <math.h>
#include <string.h>

#include "distance.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HS_VQ_X86 1
#endif

void hs_vq_pack(const float *rows, uint32_t k, size_t dim, float *out) {
  size_t blocks = ((size_t)k + HS_VQ_BLOCK - 1) / HS_VQ_BLOCK;
  for (size_t b = 0; b < blocks; b++) {
    float *o = out + b * dim * HS_VQ_BLOCK;
    for (size_t d = 0; d < dim; d++)
      for (size_t l = 0; l < HS_VQ_BLOCK; l++) {
        size_t j = b * HS_VQ_BLOCK + l;
        o[d * HS_VQ_BLOCK + l] = j < k ? rows[j * dim + d] : 0.0f;
      }
  }
}

static void block_scalar(hs_vq_op op, const float *blk, size_t dim, const float *x, float *out) {
  float acc[HS_VQ_BLOCK];
  for (size_t l = 0; l < HS_VQ_BLOCK; l++) acc[l] = 0.0f;
  for (size_t d = 0; d < dim; d++) {
    const float *r = blk + d * HS_VQ_BLOCK;
    float xd = x[d];
    switch (op) {
    case HS_VQ_DOT:
      for (size_t l = 0; l < HS_VQ_BLOCK; l++) acc[l] += xd * r[l];
      break;
    case HS_VQ_L1:
      for (size_t l = 0; l < HS_VQ_BLOCK; l++) acc[l] += fabsf(xd - r[l]);
      break;
    default:
      for (size_t l = 0; l < HS_VQ_BLOCK; l++) {
        float t = xd - r[l];
        acc[l] += t * t;
      }
      break;
    }
  }
  memcpy(out, acc, sizeof acc);
}

#ifdef HS_VQ_X86
/* Two (AVX2) or four (AVX-512) independent accumulator chains per lane
 * group, over alternating components: one chain would wait on the FMA
 * latency at every component (measured 4x slower). */
#define AVX2_STEP(acc0, acc1, dd)                                                  \
  do {                                                                             \
    const float *r_ = blk + (dd)*HS_VQ_BLOCK;                                      \
    __m256 xd_ = _mm256_set1_ps(x[dd]);                                            \
    __m256 r0_ = _mm256_loadu_ps(r_), r1_ = _mm256_loadu_ps(r_ + 8);               \
    if (op == HS_VQ_DOT) {                                                         \
      acc0 = _mm256_fmadd_ps(xd_, r0_, acc0);                                      \
      acc1 = _mm256_fmadd_ps(xd_, r1_, acc1);                                      \
    } else if (op == HS_VQ_L1) {                                                   \
      acc0 = _mm256_add_ps(acc0, _mm256_andnot_ps(sign, _mm256_sub_ps(xd_, r0_))); \
      acc1 = _mm256_add_ps(acc1, _mm256_andnot_ps(sign, _mm256_sub_ps(xd_, r1_))); \
    } else {                                                                       \
      __m256 t0_ = _mm256_sub_ps(xd_, r0_), t1_ = _mm256_sub_ps(xd_, r1_);         \
      acc0 = _mm256_fmadd_ps(t0_, t0_, acc0);                                      \
      acc1 = _mm256_fmadd_ps(t1_, t1_, acc1);                                      \
    }                                                                              \
  } while (0)

__attribute__((target("avx2,fma"))) static void block_avx2(hs_vq_op op, const float *blk,
                                                           size_t dim, const float *x, float *out) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  __m256 b0 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps();
  const __m256 sign = _mm256_set1_ps(-0.0f);
  size_t d = 0;
  for (; d + 2 <= dim; d += 2) {
    AVX2_STEP(a0, a1, d);
    AVX2_STEP(b0, b1, d + 1);
  }
  if (d < dim) AVX2_STEP(a0, a1, d);
  _mm256_storeu_ps(out, _mm256_add_ps(a0, b0));
  _mm256_storeu_ps(out + 8, _mm256_add_ps(a1, b1));
}

#define AVX512_STEP(acc, dd)                                           \
  do {                                                                 \
    __m512 xd_ = _mm512_set1_ps(x[dd]);                                \
    __m512 r_ = _mm512_loadu_ps(blk + (dd)*HS_VQ_BLOCK);               \
    if (op == HS_VQ_DOT) {                                             \
      acc = _mm512_fmadd_ps(xd_, r_, acc);                             \
    } else if (op == HS_VQ_L1) {                                       \
      acc = _mm512_add_ps(acc, _mm512_abs_ps(_mm512_sub_ps(xd_, r_))); \
    } else {                                                           \
      __m512 t_ = _mm512_sub_ps(xd_, r_);                              \
      acc = _mm512_fmadd_ps(t_, t_, acc);                              \
    }                                                                  \
  } while (0)

__attribute__((target("avx512f"))) static void block_avx512(hs_vq_op op, const float *blk,
                                                            size_t dim, const float *x,
                                                            float *out) {
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
  __m512 a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
  size_t d = 0;
  for (; d + 4 <= dim; d += 4) {
    AVX512_STEP(a0, d);
    AVX512_STEP(a1, d + 1);
    AVX512_STEP(a2, d + 2);
    AVX512_STEP(a3, d + 3);
  }
  for (; d < dim; d++) AVX512_STEP(a0, d);
  _mm512_storeu_ps(out, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

/* Lane-wise running minimum with the index that set it (strict <: the
 * earliest index wins within a lane; NaN never wins), then a scalar pass
 * over the lanes taking the lowest index among equal minima. */
static uint32_t lanes_pick(const float *v, const uint32_t *ix, int lanes, float *best) {
  uint32_t a = ix[0];
  float b = v[0];
  for (int l = 1; l < lanes; l++)
    if (v[l] < b || (v[l] == b && ix[l] < a)) b = v[l], a = ix[l];
  *best = b;
  return a;
}

__attribute__((target("avx512f"))) static uint32_t argmin_avx512(hs_vq_op op, const float *packed,
                                                                 uint32_t k, size_t dim,
                                                                 const float *x, float *best) {
  float s[HS_VQ_BLOCK], bv[HS_VQ_BLOCK];
  uint32_t bi[HS_VQ_BLOCK];
  __m512 vbest = _mm512_set1_ps(INFINITY);
  __m512i vidx = _mm512_setzero_si512(),
          cur = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i step = _mm512_set1_epi32(HS_VQ_BLOCK);
  size_t full = k / HS_VQ_BLOCK;
  for (size_t b = 0; b < full; b++) {
    block_avx512(op, packed + b * dim * HS_VQ_BLOCK, dim, x, s);
    __m512 v = _mm512_loadu_ps(s);
    if (op == HS_VQ_DOT) v = _mm512_sub_ps(_mm512_setzero_ps(), v);
    __mmask16 m = _mm512_cmp_ps_mask(v, vbest, _CMP_LT_OQ);
    vbest = _mm512_mask_mov_ps(vbest, m, v);
    vidx = _mm512_mask_mov_epi32(vidx, m, cur);
    cur = _mm512_add_epi32(cur, step);
  }
  _mm512_storeu_ps(bv, vbest);
  _mm512_storeu_si512((void *)bi, vidx);
  uint32_t a = lanes_pick(bv, bi, HS_VQ_BLOCK, best);
  if (full * HS_VQ_BLOCK < k) { /* the partial last block: lanes < k only */
    block_avx512(op, packed + full * dim * HS_VQ_BLOCK, dim, x, s);
    for (uint32_t l = 0; l < k - full * HS_VQ_BLOCK; l++) {
      float v = op == HS_VQ_DOT ? -s[l] : s[l];
      if (v < *best) *best = v, a = (uint32_t)(full * HS_VQ_BLOCK + l);
    }
  }
  return a;
}

__attribute__((target("avx2,fma"))) static uint32_t argmin_avx2(hs_vq_op op, const float *packed,
                                                                uint32_t k, size_t dim,
                                                                const float *x, float *best) {
  float s[HS_VQ_BLOCK], bv[HS_VQ_BLOCK];
  uint32_t bi[HS_VQ_BLOCK];
  __m256 b0 = _mm256_set1_ps(INFINITY), b1 = b0;
  __m256i i0 = _mm256_setzero_si256(), i1 = i0;
  __m256i c0 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
          c1 = _mm256_add_epi32(c0, _mm256_set1_epi32(8));
  const __m256i step = _mm256_set1_epi32(HS_VQ_BLOCK);
  const __m256 neg = _mm256_set1_ps(-0.0f);
  size_t full = k / HS_VQ_BLOCK;
  for (size_t b = 0; b < full; b++) {
    block_avx2(op, packed + b * dim * HS_VQ_BLOCK, dim, x, s);
    __m256 v0 = _mm256_loadu_ps(s), v1 = _mm256_loadu_ps(s + 8);
    if (op == HS_VQ_DOT) v0 = _mm256_xor_ps(v0, neg), v1 = _mm256_xor_ps(v1, neg);
    __m256 m0 = _mm256_cmp_ps(v0, b0, _CMP_LT_OQ), m1 = _mm256_cmp_ps(v1, b1, _CMP_LT_OQ);
    b0 = _mm256_blendv_ps(b0, v0, m0);
    b1 = _mm256_blendv_ps(b1, v1, m1);
    i0 =
        _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(i0), _mm256_castsi256_ps(c0), m0));
    i1 =
        _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(i1), _mm256_castsi256_ps(c1), m1));
    c0 = _mm256_add_epi32(c0, step);
    c1 = _mm256_add_epi32(c1, step);
  }
  _mm256_storeu_ps(bv, b0);
  _mm256_storeu_ps(bv + 8, b1);
  _mm256_storeu_si256((void *)bi, i0);
  _mm256_storeu_si256((void *)(bi + 8), i1);
  uint32_t a = lanes_pick(bv, bi, HS_VQ_BLOCK, best);
  if (full * HS_VQ_BLOCK < k) {
    block_avx2(op, packed + full * dim * HS_VQ_BLOCK, dim, x, s);
    for (uint32_t l = 0; l < k - full * HS_VQ_BLOCK; l++) {
      float v = op == HS_VQ_DOT ? -s[l] : s[l];
      if (v < *best) *best = v, a = (uint32_t)(full * HS_VQ_BLOCK + l);
    }
  }
  return a;
}
#endif

void hs_vq_all(hs_vq_op op, const float *packed, uint32_t k, size_t dim, const float *x,
               float *out) {
  size_t blocks = ((size_t)k + HS_VQ_BLOCK - 1) / HS_VQ_BLOCK;
  hs_simd_level level = hs_distance_kernels_active()->level;
  for (size_t b = 0; b < blocks; b++) {
    const float *blk = packed + b * dim * HS_VQ_BLOCK;
    float *o = out + b * HS_VQ_BLOCK;
#ifdef HS_VQ_X86
    if (level >= HS_SIMD_AVX512) {
      block_avx512(op, blk, dim, x, o);
      continue;
    }
    if (level >= HS_SIMD_AVX2) {
      block_avx2(op, blk, dim, x, o);
      continue;
    }
#else
    (void)level;
#endif
    block_scalar(op, blk, dim, x, o);
  }
}

uint32_t hs_vq_argmin(hs_vq_op op, const float *packed, uint32_t k, size_t dim, const float *x,
                      float *best) {
#ifdef HS_VQ_X86
  hs_simd_level level = hs_distance_kernels_active()->level;
  if (level >= HS_SIMD_AVX512) return argmin_avx512(op, packed, k, dim, x, best);
  if (level >= HS_SIMD_AVX2) return argmin_avx2(op, packed, k, dim, x, best);
#endif
  float s[HS_VQ_BLOCK];
  uint32_t a = 0;
  *best = INFINITY;
  for (uint32_t b0 = 0; b0 < k; b0 += HS_VQ_BLOCK) {
    block_scalar(op, packed + (size_t)b0 * dim, dim, x, s);
    for (uint32_t l = 0; l < HS_VQ_BLOCK && b0 + l < k; l++) {
      float v = op == HS_VQ_DOT ? -s[l] : s[l];
      if (v < *best) *best = v, a = b0 + l;
    }
  }
  return a;
}
