/*
 * distance.h — vector distance kernels with runtime CPU dispatch.
 *
 * Semantics follow pgvector so that a query written against pgvector means
 * the same here (README.md in this directory lists every edge case):
 *   <->  L2 distance, sqrt(sum (a-b)^2); hs_distance_l2sq_f32 skips the sqrt
 *   <#>  negative inner product, -sum a*b (smaller is closer)
 *   <=>  cosine distance, 1 - a.b / (|a| |b|), clamped to [0, 2];
 *        NaN when either vector is all zeros
 *   <+>  L1 distance, sum |a-b|
 *   <~>  Hamming distance over bit-packed vectors, popcount(a ^ b)
 *   <%>  Jaccard distance over bit-packed vectors,
 *        1 - |a & b| / |a | b|; 1 when both vectors are all zeros
 * Float sums accumulate in float32 (as pgvector does), so values whose
 * squares exceed FLT_MAX give +inf; NaN inputs give NaN.
 *
 * Dispatch: every kernel has a scalar reference; AVX2+FMA and AVX-512F
 * variants (x86-64) and NEON (AArch64) are compiled per file and chosen
 * once, at first use, from __builtin_cpu_supports (NEON is always there on
 * AArch64). The environment variable HS_SIMD=scalar|avx2|avx512|neon caps
 * the level (a level the CPU lacks falls back to the best one below).
 * All functions are thread-safe and allocate nothing.
 */
#ifndef HS_INDEX_VECTOR_DISTANCE_H
#define HS_INDEX_VECTOR_DISTANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hyperstream.h"

typedef enum hs_metric {
  HS_METRIC_L2 = 0,  /* <-> */
  HS_METRIC_L2SQ,    /* squared L2: same order as L2, no sqrt */
  HS_METRIC_IP,      /* <#> negative inner product */
  HS_METRIC_COSINE,  /* <=> */
  HS_METRIC_L1,      /* <+> */
  HS_METRIC_HAMMING, /* <~> bit vectors only */
  HS_METRIC_JACCARD, /* <%> bit vectors only */
  HS_METRIC_COUNT
} hs_metric;

/* "l2", "l2sq", "ip" (also "inner_product"), "cosine", "l1", "hamming",
 * "jaccard", or an operator ("<->", "<#>", "<=>", "<+>", "<~>", "<%>").
 * HS_ERR_INVALID_ARG naming the string otherwise. */
hs_status hs_metric_parse(const char *name, hs_metric *out, hs_error *err);
const char *hs_metric_name(hs_metric metric);

typedef enum hs_simd_level {
  HS_SIMD_SCALAR = 0,
  HS_SIMD_AVX2 = 1,   /* AVX2 + FMA */
  HS_SIMD_AVX512 = 2, /* AVX-512F */
  HS_SIMD_NEON = 3,   /* AArch64 Advanced SIMD (x86 builds: never available) */
  HS_SIMD_LEVEL_COUNT
} hs_simd_level;

/* The primitive kernels of one SIMD level. Lengths are element counts
 * (floats or 64-bit words); any length, including 0, is valid. */
typedef struct hs_distance_kernels {
  hs_simd_level level;
  float (*l2sq_f32)(const float *a, const float *b, size_t n);
  float (*dot_f32)(const float *a, const float *b, size_t n);
  float (*l1_f32)(const float *a, const float *b, size_t n);
  /* out[0] = a.b, out[1] = a.a, out[2] = b.b in one pass. */
  void (*cosine_parts_f32)(const float *a, const float *b, size_t n, float out[3]);
  uint64_t (*hamming_u64)(const uint64_t *a, const uint64_t *b, size_t words);
  /* out[0] = popcount(a & b), out[1] = popcount(a | b). */
  void (*jaccard_counts_u64)(const uint64_t *a, const uint64_t *b, size_t words, uint64_t out[2]);
} hs_distance_kernels;

/* The kernels in use (dispatched once, thread-safe). Never NULL. */
const hs_distance_kernels *hs_distance_kernels_active(void);
/* The kernels of `level`, or NULL when this build or this CPU lacks it.
 * Tests use this to compare every level against the scalar reference. */
const hs_distance_kernels *hs_distance_kernels_for(hs_simd_level level);
const char *hs_simd_level_name(hs_simd_level level);

/* ------------------------------------------------- dense float32 vectors */

float hs_distance_l2sq_f32(const float *a, const float *b, size_t dim);
float hs_distance_l2_f32(const float *a, const float *b, size_t dim);
float hs_distance_ip_f32(const float *a, const float *b, size_t dim); /* -a.b */
float hs_distance_cosine_f32(const float *a, const float *b, size_t dim);
float hs_distance_l1_f32(const float *a, const float *b, size_t dim);

/* One-to-one for a float metric (not Hamming/Jaccard: HS_ERR_INVALID_ARG). */
hs_status hs_distance_f32(hs_metric metric, const float *a, const float *b, size_t dim, float *out,
                          hs_error *err);
/* One-to-many: out[i] = d(query, rows + i * dim) for i < n. Rows are
 * contiguous, row-major. The query's norm is computed once for cosine. */
hs_status hs_distance_f32_batch(hs_metric metric, const float *query, const float *rows, size_t n,
                                size_t dim, float *out, hs_error *err);

/* ------------------------------------------- float16 and int8 storage */

/* IEEE 754 binary16 to float (subnormals, inf and NaN preserved). */
float hs_f16_to_f32(uint16_t h);
/* Round-to-nearest-even float to binary16; overflow gives +-inf. */
uint16_t hs_f32_to_f16(float f);

/* A float32 query against stored rows converted on the fly. int8 rows are
 * the raw integers (-128..127), with no scale: callers fold a scale into
 * the query when they quantize. Metrics: L2, L2SQ, IP, COSINE, L1. */
hs_status hs_distance_f16_batch(hs_metric metric, const float *query, const uint16_t *rows,
                                size_t n, size_t dim, float *out, hs_error *err);
hs_status hs_distance_i8_batch(hs_metric metric, const float *query, const int8_t *rows, size_t n,
                               size_t dim, float *out, hs_error *err);

/* ---------------------------------------------- bit-packed binary vectors */

/* Bits packed into 64-bit words; unused high bits of the last word must be
 * zero in both operands (pack with hs_bits_pack_u8 or zero-padding). */
uint64_t hs_distance_hamming_u64(const uint64_t *a, const uint64_t *b, size_t words);
float hs_distance_jaccard_u64(const uint64_t *a, const uint64_t *b, size_t words);
/* The same over byte-packed bits (numpy.packbits order does not matter:
 * both operands use the same packing). */
uint64_t hs_distance_hamming_u8(const uint8_t *a, const uint8_t *b, size_t nbytes);
float hs_distance_jaccard_u8(const uint8_t *a, const uint8_t *b, size_t nbytes);
/* One-to-many over byte-packed rows of `nbytes` each; metric HAMMING or
 * JACCARD. Hamming counts are written as floats (exact below 2^24). */
hs_status hs_distance_bits_batch(hs_metric metric, const uint8_t *query, const uint8_t *rows,
                                 size_t n, size_t nbytes, float *out, hs_error *err);

/* ------------------------------------------------------ sparse vectors */

/* A sparse vector: nnz (index, value) pairs, indices strictly increasing
 * and < dim. Borrowed pointers. */
typedef struct hs_sparse_vec {
  const uint32_t *indices;
  const float *values;
  size_t nnz;
  uint32_t dim;
} hs_sparse_vec;

/* Checks the invariants above; HS_ERR_INVALID_ARG naming the position. */
hs_status hs_sparse_vec_validate(const hs_sparse_vec *v, hs_error *err);
/* L2, L2SQ, IP, COSINE, L1 between two valid sparse vectors of equal dim
 * (HS_ERR_INVALID_ARG otherwise). Zeros are implicit: L1 and L2 count the
 * entries present in only one vector. */
hs_status hs_distance_sparse(hs_metric metric, const hs_sparse_vec *a, const hs_sparse_vec *b,
                             float *out, hs_error *err);

#endif /* HS_INDEX_VECTOR_DISTANCE_H */
