/*
 * vq_block.h — one point against many small rows at once (k-means
 * assignment, PQ encoding and PQ query tables).
 *
 * Rows (centroids) are packed in blocks of HS_VQ_BLOCK rows, transposed:
 * block b holds, for each component d, the d-th component of its 16 rows
 * side by side. A point's component is broadcast once and meets 16 rows
 * in two AVX2 (or one AVX-512) registers, so there is one load per 8/16
 * multiply-adds and no call per (point, row) pair, which matters when rows
 * are short (PQ sub-vectors of 4-16 floats) or many.
 *
 * Each lane sums its components in index order at the scalar level and
 * in 2 or 4 interleaved partial sums (with FMA) at the SIMD levels, so
 * values agree with hs_distance_* up to float rounding.
 * The level follows hs_distance_kernels_active() (and so HS_SIMD).
 * Internal to src/index/vector; thread-safe: no state.
 */
#ifndef HS_INDEX_VECTOR_VQ_BLOCK_H
#define HS_INDEX_VECTOR_VQ_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#define HS_VQ_BLOCK 16

typedef enum hs_vq_op {
  HS_VQ_L2SQ = 0, /* sum (x - r)^2 */
  HS_VQ_DOT = 1,  /* sum x * r */
  HS_VQ_L1 = 2,   /* sum |x - r| */
} hs_vq_op;

/* Floats needed to pack k rows of dim floats (k rounded up to a block). */
static inline size_t hs_vq_packed_floats(uint32_t k, size_t dim) {
  return (((size_t)k + HS_VQ_BLOCK - 1) / HS_VQ_BLOCK) * HS_VQ_BLOCK * dim;
}

/* Pack rows[k][dim] into out (hs_vq_packed_floats(k, dim) floats); padding
 * rows are zero. */
void hs_vq_pack(const float *rows, uint32_t k, size_t dim, float *out);

/* out[j] = op(x, row j) for j < k over packed rows. out has room for k
 * rounded up to HS_VQ_BLOCK (padding lanes are written with garbage). */
void hs_vq_all(hs_vq_op op, const float *packed, uint32_t k, size_t dim, const float *x,
               float *out);

/* The row minimising op(x, row) (HS_VQ_DOT: maximising the dot, *best is
 * then -dot) and its score in *best. Ties go to the lowest row; NaN
 * scores never win, so a point whose every score is NaN gets row 0 and
 * *best = +inf (callers recompute such a score exactly). */
uint32_t hs_vq_argmin(hs_vq_op op, const float *packed, uint32_t k, size_t dim, const float *x,
                      float *best);

#endif /* HS_INDEX_VECTOR_VQ_BLOCK_H */
