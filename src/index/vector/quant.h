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

typedef struct hs_quant_params {
  hs_quant_kind kind;
  uint32_t pq_m;    /* PQ sub-spaces; must divide dim; 0 means dim/8 (at least 1) */
  uint64_t seed;    /* PQ training */
  uint32_t threads; /* 0 means the machine's cores */
} hs_quant_params;

/* Train on n x dim floats (a sample is enough). metric decides what the
 * query tables compute (L2/L2SQ give squared L2; IP and COSINE give the
 * negative inner product, cosine callers normalise first). */
hs_status hs_quant_train(const float *points, size_t n, size_t dim, hs_metric metric,
                         const hs_quant_params *p, hs_quant **out, hs_error *err);
void hs_quant_free(hs_quant *q); /* accepts NULL */

hs_quant_kind hs_quant_kind_of(const hs_quant *q);
size_t hs_quant_code_size(const hs_quant *q); /* bytes per vector */

/* Encode n vectors into codes (n * code_size bytes). */
void hs_quant_encode(const hs_quant *q, const float *points, size_t n, uint8_t *codes);

/* Per-query precomputation (PQ: the m x 256 lookup table; SQ8: the query
 * scaled into code space). */
typedef struct hs_quant_query hs_quant_query;
hs_status hs_quant_query_make(const hs_quant *q, const float *query, hs_quant_query **out,
                              hs_error *err);
void hs_quant_query_free(hs_quant_query *qq); /* accepts NULL */
/* Approximate distance (smaller is closer) of the query to one code. */
float hs_quant_distance(const hs_quant_query *qq, const uint8_t *code);

/* Serialise (little-endian, self-describing, bounded) and parse back. The
 * parser checks every length against `len` and refuses anything else with
 * HS_ERR_CORRUPT naming the field; it never trusts a count to allocate. */
hs_status hs_quant_serialize(const hs_quant *q, hs_buf *out, hs_error *err);
hs_status hs_quant_parse(const uint8_t *data, size_t len, hs_quant **out, hs_error *err);

#endif /* HS_INDEX_VECTOR_QUANT_H */
