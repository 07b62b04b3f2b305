/*
 * quant.h — vector quantizers: SQ8 (one byte per component, per-dimension
 * min/scale) and PQ (m sub-spaces, 256 centroids each, one byte per
 * sub-space). Both give approximate distances; indexes re-rank the best
 * candidates exactly on the float32 vectors.
 *
 * Ownership: a trained quantizer is hs_malloc'd and owned by the caller
 * (hs_quant_free). Encoded codes are written into caller buffers of
 * hs_quant_code_size() bytes per vector. Query tables (hs_quant_query) are
 * owned by the caller (hs_quant_query_free) and are read-only during
 * search, so one table may be shared by threads.
 */
#ifndef HS_INDEX_VECTOR_QUANT_H
#define HS_INDEX_VECTOR_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/common.h"
#include "distance.h"

typedef enum hs_quant_kind {
  HS_QUANT_NONE = 0,
  HS_QUANT_SQ8 = 1,
  HS_QUANT_PQ = 2,
} hs_quant_kind;

typedef struct hs_quant hs_quant;

#define HS_QUANT_DIM_MAX 65536

typedef struct hs_quant_params {
  hs_quant_kind kind;
  uint32_t pq_m;    /* PQ sub-spaces; must divide dim; 0 means the largest
                       divisor of dim that is <= max(1, dim/8) (dim 128: 16;
                       384: 48; 100: 10) */
  uint64_t seed;    /* PQ training */
  uint32_t threads; /* 0 means the machine's cores */
} hs_quant_params;

/* Train on n x dim floats (a sample is enough; PQ trains each sub-space's
 * 256 centroids with hs_kmeans_train on min(n, 65536) points, fewer
 * centroids when n < 256). metric decides what the query tables compute
 * (L2/L2SQ give squared L2; IP and COSINE give the negative inner product,
 * cosine callers normalise first; L1 gives L1). SQ8 ranges are the exact
 * per-dimension min/max of the n points. HS_ERR_INVALID_ARG for n == 0,
 * dim == 0 or > HS_QUANT_DIM_MAX, a bit metric, kind NONE, or pq_m not
 * dividing dim; non-finite components are refused too (they would make
 * every range or codebook non-finite). */
hs_status hs_quant_train(const float *points, size_t n, size_t dim, hs_metric metric,
                         const hs_quant_params *p, hs_quant **out, hs_error *err);
void hs_quant_free(hs_quant *q); /* accepts NULL */

hs_quant_kind hs_quant_kind_of(const hs_quant *q);
size_t hs_quant_code_size(const hs_quant *q); /* bytes per vector */
size_t hs_quant_dim(const hs_quant *q);
hs_metric hs_quant_metric(const hs_quant *q);
uint32_t hs_quant_pq_m(const hs_quant *q); /* 0 for SQ8 */

/* Encode n vectors into codes (n * code_size bytes), in parallel over
 * vectors (p->threads of training; 0: the machine's cores) when n is large.
 * SQ8 rounds to the nearest level and clamps values outside the trained
 * range; PQ picks each sub-vector's nearest centroid (squared L2). */
void hs_quant_encode(const hs_quant *q, const float *points, size_t n, uint8_t *codes);
/* The vector a code stands for (dim floats): what the approximate
 * distances are exact distances to. Any code bytes are valid. */
void hs_quant_decode(const hs_quant *q, const uint8_t *code, float *out);

/* Per-query precomputation (PQ: the m x 256 lookup table; SQ8: the query
 * scaled into code space). */
typedef struct hs_quant_query hs_quant_query;
hs_status hs_quant_query_make(const hs_quant *q, const float *query, hs_quant_query **out,
                              hs_error *err);
void hs_quant_query_free(hs_quant_query *qq); /* accepts NULL */
/* Approximate distance (smaller is closer) of the query to one code: the
 * metric's distance (squared for L2) between the query and the decoded
 * vector, up to float rounding. Any code bytes are valid (no bounds to
 * trust). */
float hs_quant_distance(const hs_quant_query *qq, const uint8_t *code);
/* The kernel behind hs_quant_distance for qq, chosen once (the same
 * distances up to float summation order: the AVX-512 SQ8 kernel sums 16
 * components a step), for scans that call it per row. */
typedef float (*hs_quant_distance_fn)(const hs_quant_query *qq, const uint8_t *code);
hs_quant_distance_fn hs_quant_distance_kernel(const hs_quant_query *qq);
/* The same for n consecutive codes: out[i] for codes + i * code_size. */
void hs_quant_distance_batch(const hs_quant_query *qq, const uint8_t *codes, size_t n, float *out);
/* The same for n scattered codes: out[i] for codes + ids[i] * code_size,
 * with the kernel hs_quant_distance_kernel returns (the same distances, bit
 * for bit); SQ8 L2 with 16 | dim scores four rows at a time (independent
 * accumulators, the query's terms loaded once: exact scans over codes,
 * README.md "Scan codes"). */
void hs_quant_distance_gather(const hs_quant_query *qq, const uint8_t *codes, const uint32_t *ids,
                              uint32_t n, float *out);

/* 4-bit scan codes of an SQ8 quantizer (README.md "Coarse code scan"): the
 * high nibble of every SQ8 code, for a first, approximate pass of a scan
 * over many rows that reads half the bytes (a nibble v stands for
 * min + step * (16 v + 7.5)). A row is hs_quant_sq4_size(q) bytes: per
 * group of 32 dimensions 16 bytes, byte j holding dimension 32 g + j in its
 * low nibble and 32 g + 16 + j in its high one; dimensions past dim are 0.
 * hs_quant_sq4_size is 0 when q is not SQ8. */
size_t hs_quant_sq4_size(const hs_quant *q);
/* out (n * hs_quant_sq4_size(q) bytes) from n SQ8 codes. */
void hs_quant_sq4_derive(const hs_quant *q, const uint8_t *codes, size_t n, uint8_t *out);
/* Whether this machine scores 4-bit codes with a vector kernel (AVX-512):
 * the scalar one is slower than the SQ8 scan a coarse pass would replace. */
bool hs_quant_sq4_fast(void);
/* Fold an SQ8 query for 4-bit codes (once per query, before the gathers). */
hs_status hs_quant_query_sq4(hs_quant_query *qq, hs_error *err);
/* out[i]: the approximate distance (hs_quant_distance's form, to the row
 * the nibbles decode to) of codes4 + ids[i] * hs_quant_sq4_size; AVX-512
 * scores four rows at a time. qq folded by hs_quant_query_sq4. */
void hs_quant_sq4_gather(const hs_quant_query *qq, const uint8_t *codes4, const uint32_t *ids,
                         uint32_t n, float *out);
/* The scalar reference of one row (tests compare the kernel with it). */
float hs_quant_sq4_distance_ref(const hs_quant_query *qq, const uint8_t *code4);

/* Serialise (little-endian, self-describing, bounded) and parse back.
 * Layout: "HSQ1", u32 version (1), u32 kind, u32 metric, u32 dim, then SQ8:
 * dim f32 minimums, dim f32 steps; PQ: u32 m, u32 ksub, m*ksub*(dim/m) f32
 * centroids; then u32 murmur3 (seed 0x48535131) of everything before it.
 * The parser checks the total length against the header before allocating,
 * every field's range (finite floats, steps >= 0, m | dim, 1 <= ksub <=
 * 256, dim <= HS_QUANT_DIM_MAX) and the checksum, and refuses anything else
 * with HS_ERR_CORRUPT naming the field; it never trusts a count to
 * allocate. hs_quant_serialize appends to `out`. */
hs_status hs_quant_serialize(const hs_quant *q, hs_buf *out, hs_error *err);
hs_status hs_quant_parse(const uint8_t *data, size_t len, hs_quant **out, hs_error *err);

#endif /* HS_INDEX_VECTOR_QUANT_H */
