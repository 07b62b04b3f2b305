/*
 * theta_sketch.h — a Theta sketch of distinct values (KMV: the k smallest
 * 63-bit hashes), serialized as the "compact" sketch of Apache
 * DataSketches (serial version 3), which is what an Iceberg Puffin
 * `apache-datasketches-theta-v1` blob holds (format/puffin-spec.md).
 *
 * Hashing is DataSketches': MurmurHash3 x64 128-bit over the value's bytes
 * with seed 9001, the first 64-bit half shifted right by one; a zero hash
 * and empty values are not counted (DataSketches rejects them). Values are
 * fed as Iceberg single-value bytes (src/query/stats.c), as Iceberg's own
 * writers (Spark's compute_table_stats, Trino's ANALYZE) do.
 *
 * The sketch keeps every hash while it holds at most 2k, then the k
 * smallest with theta = the (k+1)-th smallest; the estimate is
 * retained / (theta / 2^63). Serialized: 8 bytes (empty), 16 (one hash,
 * exact), else 16 (exact) or 24 (theta < 2^63 - 1) bytes of preamble and
 * the retained hashes in increasing order, all little-endian; an empty
 * sketch has seed hash 0, as DataSketches writes it.
 */
#ifndef HS_INDEX_THETA_SKETCH_H
#define HS_INDEX_THETA_SKETCH_H

#include "../common/common.h"

#define HS_THETA_SEED 9001
#define HS_THETA_NOMINAL_DEFAULT 4096 /* DataSketches' default nominal entries */
#define HS_THETA_MAX INT64_MAX        /* theta of a sketch in exact mode */

typedef struct hs_theta_sketch {
  uint32_t k;       /* nominal entries (a power of two, 16 .. 2^26) */
  int64_t theta;    /* hashes >= theta are not kept */
  uint64_t *slots;  /* open addressing; 0 = empty */
  size_t cap, used; /* slots (a power of two), hashes kept */
} hs_theta_sketch;

/* MurmurHash3 x64 128-bit of data[0..len) with `seed`: out[0] = h1, out[1] = h2. */
void hs_murmur3_x64_128(const void *data, size_t len, uint64_t seed, uint64_t out[2]);

/* DataSketches' 16-bit hash of the seed, written in every sketch. */
uint16_t hs_theta_seed_hash(uint64_t seed);

hs_status hs_theta_init(hs_theta_sketch *s, uint32_t k, hs_error *err);
void hs_theta_free(hs_theta_sketch *s);

/* Count the value whose bytes are data[0..len) (empty: ignored). */
hs_status hs_theta_update(hs_theta_sketch *s, const void *data, size_t len, hs_error *err);

/* The distinct-count estimate. */
double hs_theta_estimate(const hs_theta_sketch *s);

/* Append the compact serialization to `out` (the sketch is trimmed to k
 * entries first, as the estimate is). */
hs_status hs_theta_serialize(hs_theta_sketch *s, hs_buf *out, hs_error *err);

/* Parse a compact sketch (serial version 3, little-endian, ordered or
 * not) written by us or DataSketches: its estimate, retained hashes and
 * theta. Bad bytes are HS_ERR_CORRUPT naming what is wrong. */
hs_status hs_theta_parse(const uint8_t *p, size_t len, double *estimate, int64_t *retained,
                         int64_t *theta, hs_error *err);

#endif /* HS_INDEX_THETA_SKETCH_H */
