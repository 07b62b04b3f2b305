/*
 * hnsw.h — the HNSW graph inside a vector index file (internal to
 * src/index/vector/). One flat layout serves both the builder and the
 * reader, so an opened index searches the file's bytes in place:
 *
 *   nodes      local ids 0..n-1; IVF partition p owns [start_p, start_p + count_p)
 *              and its graph links only nodes inside that range
 *   levels     one byte per node (0..HS_HNSW_MAX_LEVEL)
 *   links0     n blocks of (1 + m0) uint32: count, then neighbour ids
 *   upper      blocks of (1 + m) uint32 for layers 1..level of every node, in
 *              node order; upper_off[i] is node i's first block (a prefix sum
 *              of levels, so the reader recomputes it instead of trusting it)
 *
 * Distances inside the graph are "internal": squared L2 for L2, -dot for IP
 * and COSINE (rows normalised), L1 for L1 — same order as the metric.
 *
 * Ownership: every array is borrowed by the graph view; the builder owns
 * what it allocates (hs_hnsw_build_free). Scratch (visited tags, heaps) is
 * per thread and reused between queries.
 */
#ifndef HS_INDEX_VECTOR_HNSW_H
#define HS_INDEX_VECTOR_HNSW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../common/common.h"
#include "distance.h"
#include "quant.h"

#define HS_HNSW_MAX_LEVEL 24
#define HS_HNSW_MAX_M 256
/* Build workers at most (hs_parallel_for's own cap); more are clamped. */
#define HS_HNSW_THREADS_MAX 256

/* The internal distance of a metric (what the graph orders by). */
typedef enum hs_hnsw_space { HS_HNSW_L2SQ, HS_HNSW_NEGDOT, HS_HNSW_L1 } hs_hnsw_space;

typedef struct hs_hnsw_graph {
  uint32_t n, dim, m, m0;
  hs_hnsw_space space;
  const float *vectors; /* n x dim, local order */
  const uint8_t *levels;
  uint32_t *links0;          /* n * (1 + m0) */
  uint32_t *upper;           /* upper_blocks * (1 + m) */
  const uint32_t *upper_off; /* n */
  uint64_t upper_blocks;
  const uint8_t *codes; /* n * code_size quantized codes, or NULL */
  size_t code_size;
  /* Compact layer 0 (read-only graphs; README.md "File format"): when off0
   * is set, links0 is NULL and node i's layer-0 neighbours are the ids
   * [off0[i], off0[i + 1]) of ids0, idw (3 or 4) little-endian bytes each. */
  const uint32_t *off0; /* n + 1 */
  const uint8_t *ids0;
  uint32_t idw;
} hs_hnsw_graph;

typedef struct hs_hnsw_part {
  uint32_t start, count, entry, max_level;
} hs_hnsw_part;

/* The link block of node `i` at `level` (level <= levels[i]); layer 0 only
 * when it is not compact (g->off0 NULL). */
static inline uint32_t *hs_hnsw_links(const hs_hnsw_graph *g, uint32_t i, uint32_t level) {
  if (level == 0) return g->links0 + (size_t)i * (1 + g->m0);
  return g->upper + (size_t)(g->upper_off[i] + level - 1) * (1 + g->m);
}

/* Read-only neighbour list of `i` at `level`, its count clamped to the
 * layer's capacity: the block in place, or (compact layer 0) decoded into
 * `buf` (room for m0 ids). */
static inline const uint32_t *hs_hnsw_neighbours_ro(const hs_hnsw_graph *g, uint32_t i,
                                                    uint32_t level, uint32_t *buf,
                                                    uint32_t *count) {
  uint32_t cap = level ? g->m : g->m0, c;
  if (level == 0 && g->off0 != NULL) {
    uint32_t a = g->off0[i];
    c = g->off0[i + 1] - a;
    if (c > cap) c = cap;
    const uint8_t *p = g->ids0 + (size_t)a * g->idw;
    if (g->idw == 3) {
      for (uint32_t j = 0; j < c; j++, p += 3)
        buf[j] = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
    } else {
      memcpy(buf, p, (size_t)c * 4);
    }
    *count = c;
    return buf;
  }
  const uint32_t *blk = hs_hnsw_links(g, i, level);
  c = blk[0];
  *count = c < cap ? c : cap;
  return blk + 1;
}

/* Where node i's links at `level` start (for prefetching). */
static inline const void *hs_hnsw_links_addr(const hs_hnsw_graph *g, uint32_t i, uint32_t level) {
  if (level == 0 && g->off0 != NULL) return g->ids0 + (size_t)g->off0[i] * g->idw;
  return hs_hnsw_links(g, i, level);
}

/* Prefetch every cache line [p, p + len) touches: a row that is not
 * 64-byte aligned (an index opened from a caller's buffer, e.g. Python
 * bytes) spans one line more than len / 64. */
static inline void hs_prefetch_span(const void *p, size_t len) {
  const char *a = (const char *)((uintptr_t)p & ~(uintptr_t)63), *e = (const char *)p + len;
  for (; a < e; a += 64) __builtin_prefetch(a);
}

static inline float hs_hnsw_dist(const hs_distance_kernels *k, hs_hnsw_space s, const float *a,
                                 const float *b, size_t dim) {
  switch (s) {
  case HS_HNSW_L2SQ: return k->l2sq_f32(a, b, dim);
  case HS_HNSW_NEGDOT: return -k->dot_f32(a, b, dim);
  default: return k->l1_f32(a, b, dim);
  }
}

/* A (distance, id) pair and the heaps the searches use. */
typedef struct hs_hnsw_cand {
  float d;
  uint32_t id;
} hs_hnsw_cand;

/* Per-thread search scratch: visited tags with a generation counter (no
 * clearing per query) and growable heaps. */
typedef struct hs_hnsw_scratch {
  uint32_t *tags;
  uint32_t n_tags, gen;
  hs_hnsw_cand *cand, *res;
  size_t cand_cap, res_cap;
} hs_hnsw_scratch;

bool hs_hnsw_scratch_init(hs_hnsw_scratch *s, uint32_t n);
void hs_hnsw_scratch_free(hs_hnsw_scratch *s);

/* A filter over local ids for the traversal (NULL: none): a flat bitset
 * over the data file's rows (vidx_allow.c builds it), so a test is one bit,
 * not a roaring lookup (17-140 ns measured on a 200K-row allow-set). */
typedef struct hs_hnsw_filter {
  const uint64_t *bits; /* row r allowed: bit r % 64 of bits[r / 64], every row of rows[] covered */
  const uint32_t *rows; /* local id -> row; NULL: the identity */
  /* false: every node is walked and scored, only allowed ones enter the
   * results (hnswlib's filtered walk, for dense filters); true: only
   * allowed nodes are scored and filtered-out ones are stepped through to
   * their neighbours (ACORN-style two hops, for sparse filters); the
   * second hop stops once `hop_cap` fresh allowed nodes are held (0: 2 m0). */
  bool two_hop;
  uint32_t hop_cap;
} hs_hnsw_filter;

/* Search partition `p` for the `ef` nearest nodes to `q` (internal
 * distances); an ef above the partition's node count is clamped to it (the
 * same answer), so the scratch grows with the partition, not with ef.
 * Writes up to ef candidates (unsorted) into *out (pointing into the
 * scratch) and returns their count. With a filter only allowed nodes are
 * returned; disallowed nodes are walked through (filter->two_hop false) or
 * stepped through to their neighbours (two hops, as ACORN does). Never reads outside the graph
 * arrays, even when ids are hostile: ids outside the partition are skipped. */
size_t hs_hnsw_search(const hs_hnsw_graph *g, const hs_hnsw_part *p, const float *q, uint32_t ef,
                      const hs_hnsw_filter *filter, hs_hnsw_scratch *s, hs_hnsw_cand **out);
/* The same over the quantized codes (g->codes): distances are `qq`'s
 * approximations, for the caller to re-rank. */
size_t hs_hnsw_search_quant(const hs_hnsw_graph *g, const hs_hnsw_part *p, const float *q,
                            const hs_quant_query *qq, uint32_t ef, const hs_hnsw_filter *filter,
                            hs_hnsw_scratch *s, hs_hnsw_cand **out);

/* ------------------------------------------------------------- building */

typedef struct hs_hnsw_build_params {
  uint32_t m, ef_construction, threads;
  uint64_t seed;
  /* Optional: n * (1 + m0) u32 for layer 0, caller-owned (vidx builds it in
   * place in the output file); hs_hnsw_build zeroes it and never frees it.
   * NULL: allocated and owned by the graph. */
  uint32_t *links0;
} hs_hnsw_build_params;

/* The upper blocks hs_hnsw_build will allocate for n nodes (its level draw
 * depends only on the seed, m and the node ids), so a caller can size the
 * file before building. */
uint64_t hs_hnsw_upper_blocks(uint32_t n, uint32_t m, uint64_t seed);

/* Allocates levels, links and upper blocks for `n` nodes and builds one
 * graph per partition (parts[] cover [0, n) in order). g->vectors must be
 * set by the caller; the arrays are owned by the graph (hs_hnsw_build_free),
 * but for bp->links0 (on success g->links0 points there: the caller sets
 * g->links0 to NULL before hs_hnsw_build_free).
 * parts[].entry and max_level are filled in. */
hs_status hs_hnsw_build(hs_hnsw_graph *g, hs_hnsw_part *parts, uint32_t n_parts,
                        const hs_hnsw_build_params *bp, hs_error *err);
void hs_hnsw_build_free(hs_hnsw_graph *g);

#endif /* HS_INDEX_VECTOR_HNSW_H */
