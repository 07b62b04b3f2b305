/*
 * kmeans.h — sampled, parallel k-means over dense float32 vectors: the
 * coarse quantizer of IVF indexes and the codebook trainer of PQ.
 *
 * Ownership: inputs are borrowed; every output array is hs_malloc'd and
 * owned by the caller (hs_free). Deterministic for a given seed, and for
 * ANY thread count: work is split into fixed chunks whose partial sums are
 * reduced in chunk order, and centroid sums are taken per cluster over its
 * points in index order (parallel over clusters, no locks, no per-thread
 * accumulators whose merge order would depend on scheduling).
 *
 * Algorithm (README.md in this directory has the measurements):
 *   1. a uniform sample (Knuth's selection sampling, so no n-sized index
 *      array) is copied out; COSINE normalises the copy;
 *   2. k-means++ seeding on the sample (D^2 sampling with squared L2),
 *      the distance refresh per new centre in parallel;
 *   3. Lloyd iterations: assignment in parallel (direct SIMD kernels, see
 *      hs_kmeans_assign), centroid = mean of its points (spherical for IP
 *      and COSINE: the mean normalised to unit length); stops early when no
 *      assignment changes;
 *   4. an empty cluster takes the point of the largest cluster that lies
 *      farthest from that cluster's centre.
 * With L2/L2SQ, IP and COSINE the objective never increases from one
 * iteration to the next (up to float rounding). L1 assigns by L1 distance
 * but updates with the mean (not the median), so it is not monotone.
 */
#ifndef HS_INDEX_VECTOR_KMEANS_H
#define HS_INDEX_VECTOR_KMEANS_H

#include <stddef.h>
#include <stdint.h>

#include "distance.h"

/* What a training run did (optional output, see hs_kmeans_params.stats). */
#define HS_KMEANS_TRACE_MAX 64
typedef struct hs_kmeans_stats {
  uint32_t iterations;    /* Lloyd iterations run (assignment steps) */
  uint32_t empty_repairs; /* empty clusters re-seeded, over all iterations */
  uint32_t sample;        /* points trained on */
  /* inertia[i]: the objective after assignment step i (i < iterations,
   * at most HS_KMEANS_TRACE_MAX): sum over the sample of squared L2 (L2,
   * L2SQ), -x.c (IP), 1 - x.c on normalised points (COSINE), L1 (L1). */
  double inertia[HS_KMEANS_TRACE_MAX];
} hs_kmeans_stats;

/* Bounds (README.md "Limits"): more iterations is HS_ERR_INVALID_ARG;
 * more threads are clamped (the same centroids for any thread count). */
#define HS_KMEANS_ITERATIONS_MAX 10000u
#define HS_KMEANS_THREADS_MAX 256u

typedef struct hs_kmeans_params {
  uint32_t k;             /* clusters (>= 1; clamped to the number of points) */
  uint32_t iterations;    /* Lloyd iterations; 0 means 20; at most HS_KMEANS_ITERATIONS_MAX */
  uint32_t sample;        /* points sampled for training; 0 means min(n, 256 * k) */
  uint64_t seed;          /* k-means++ seeding and sampling */
  uint32_t threads;       /* 0 means the machine's cores */
  hs_metric metric;       /* L2/L2SQ (Euclidean), IP or COSINE (spherical:
                             centroids normalised each iteration), or L1
                             (L1 assignment, mean update); not HAMMING/JACCARD */
  hs_kmeans_stats *stats; /* optional (NULL): filled on success */
} hs_kmeans_params;

/* Train p->k centroids on `n` points of `dim` floats (row-major). *centroids
 * is k_out x dim floats, k_out = min(k, n). Empty clusters are re-seeded
 * from the largest one. Points that are all equal give equal centroids
 * (k_out is not reduced to the number of distinct points). The sample is
 * clamped to [k_out, n]. HS_ERR_INVALID_ARG for n == 0, dim == 0, k == 0 or
 * a bit metric; HS_ERR_NOMEM when the sample does not fit. Non-finite
 * components are the caller's to filter out (they poison their cluster). */
hs_status hs_kmeans_train(const float *points, size_t n, size_t dim, const hs_kmeans_params *p,
                          float **centroids, uint32_t *k_out, hs_error *err);

/* For each of `n` points the nearest of `k` centroids (assign[i] in [0,k)),
 * optionally its distance (dist may be NULL), in parallel. "Nearest" is by
 * `metric` exactly as hs_distance_f32 computes it (L2/L2SQ: squared L2;
 * IP: -x.c; COSINE: -x.c/|c|, i.e. the cosine order; L1: L1); ties go to
 * the lowest centroid index. dist[i] is hs_distance_f32(metric, x, c) of
 * the chosen centroid (pgvector's value: sqrt for L2, NaN cosine for a
 * zero point). HS_ERR_INVALID_ARG for k == 0, dim == 0 or a bit metric. */
hs_status hs_kmeans_assign(const float *points, size_t n, size_t dim, const float *centroids,
                           uint32_t k, hs_metric metric, uint32_t threads, uint32_t *assign,
                           float *dist, hs_error *err);

#endif /* HS_INDEX_VECTOR_KMEANS_H */
