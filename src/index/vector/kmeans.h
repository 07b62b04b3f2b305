/*
 * kmeans.h — sampled, parallel k-means over dense float32 vectors: the
 * coarse quantizer of IVF indexes and the codebook trainer of PQ.
 *
 * Ownership: inputs are borrowed; every output array is hs_malloc'd and
 * owned by the caller (hs_free). Deterministic for a given seed and
 * thread count 1; with more threads the result is the same up to float
 * summation order.
 */
#ifndef HS_INDEX_VECTOR_KMEANS_H
#define HS_INDEX_VECTOR_KMEANS_H

#include <stddef.h>
#include <stdint.h>

#include "distance.h"

typedef struct hs_kmeans_params {
  uint32_t k;          /* clusters (>= 1; clamped to the number of points) */
  uint32_t iterations; /* Lloyd iterations; 0 means 20 */
  uint32_t sample;     /* points sampled for training; 0 means min(n, 256 * k) */
  uint64_t seed;       /* k-means++ seeding and sampling */
  uint32_t threads;    /* 0 means the machine's cores */
  hs_metric metric;    /* L2/L2SQ (Euclidean), IP or COSINE (spherical:
                          centroids normalised each iteration) */
} hs_kmeans_params;

/* Train p->k centroids on `n` points of `dim` floats (row-major). *centroids
 * is k_out x dim floats. Empty clusters are re-seeded from the largest one.
 * HS_ERR_INVALID_ARG for n == 0, dim == 0 or k == 0. */
hs_status hs_kmeans_train(const float *points, size_t n, size_t dim, const hs_kmeans_params *p,
                          float **centroids, uint32_t *k_out, hs_error *err);

/* For each of `n` points the nearest of `k` centroids (assign[i] in [0,k)),
 * optionally its distance (dist may be NULL), in parallel. */
hs_status hs_kmeans_assign(const float *points, size_t n, size_t dim, const float *centroids,
                           uint32_t k, hs_metric metric, uint32_t threads, uint32_t *assign,
                           float *dist, hs_error *err);

#endif /* HS_INDEX_VECTOR_KMEANS_H */
