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
__attribute__((target("avx2,fma"))) static void block_avx2(hs_vq_op op, const float *blk,
                                                           size_t dim, const float *x, float *out) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (size_t d = 0; d < dim; d++) {
    const float *r = blk + d * HS_VQ_BLOCK;
    __m256 xd = _mm256_set1_ps(x[d]);
    __m256 r0 = _mm256_loadu_ps(r), r1 = _mm256_loadu_ps(r + 8);
    if (op == HS_VQ_DOT) {
      a0 = _mm256_fmadd_ps(xd, r0, a0);
      a1 = _mm256_fmadd_ps(xd, r1, a1);
    } else if (op == HS_VQ_L1) {
      a0 = _mm256_add_ps(a0, _mm256_andnot_ps(sign, _mm256_sub_ps(xd, r0)));
      a1 = _mm256_add_ps(a1, _mm256_andnot_ps(sign, _mm256_sub_ps(xd, r1)));
    } else {
      __m256 t0 = _mm256_sub_ps(xd, r0), t1 = _mm256_sub_ps(xd, r1);
      a0 = _mm256_fmadd_ps(t0, t0, a0);
      a1 = _mm256_fmadd_ps(t1, t1, a1);
    }
  }
  _mm256_storeu_ps(out, a0);
  _mm256_storeu_ps(out + 8, a1);
}

__attribute__((target("avx512f"))) static void block_avx512(hs_vq_op op, const float *blk,
                                                            size_t dim, const float *x,
                                                            float *out) {
  __m512 a = _mm512_setzero_ps();
  for (size_t d = 0; d < dim; d++) {
    __m512 xd = _mm512_set1_ps(x[d]);
    __m512 r = _mm512_loadu_ps(blk + d * HS_VQ_BLOCK);
    if (op == HS_VQ_DOT) {
      a = _mm512_fmadd_ps(xd, r, a);
    } else if (op == HS_VQ_L1) {
      a = _mm512_add_ps(a, _mm512_abs_ps(_mm512_sub_ps(xd, r)));
    } else {
      __m512 t = _mm512_sub_ps(xd, r);
      a = _mm512_fmadd_ps(t, t, a);
    }
  }
  _mm512_storeu_ps(out, a);
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
