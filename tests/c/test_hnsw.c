/*
 * test_hnsw.c — structure of the HNSW graphs hs_hnsw_build makes
 * (src/index/vector/hnsw.c), where recall tests cannot see it:
 *
 * - a layer whose nodes number at most m is a complete graph: while fewer
 *   than m candidates exist, all are linked unpruned (as hnswlib does), so
 *   the sparse top layers, which the greedy descent depends on, keep every
 *   link (the heuristic used to prune them: issue 5, src/index/vector/README.md);
 * - every link list of every build (1 and 2 threads) is within capacity,
 *   without self loops or repeats, and names nodes present on its layer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "hs_test.h"
#include "index/vector/hnsw.h"

static double gauss(uint64_t *st) {
  double u = ((double)(hs_test_rand(st) >> 11) + 1.0) / 9007199254740993.0;
  double v = (double)(hs_test_rand(st) >> 11) / 9007199254740992.0;
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* n rows of dim floats around `clusters` gaussian centres (noise 0.35). */
static float *make_data(size_t n, size_t dim, size_t clusters, uint64_t seed) {
  uint64_t st = seed;
  float *c = malloc(clusters * dim * sizeof *c), *x = malloc(n * dim * sizeof *x);
  for (size_t i = 0; i < clusters * dim; i++) c[i] = (float)gauss(&st);
  for (size_t i = 0; i < n; i++) {
    size_t k = hs_test_rand(&st) % clusters;
    for (size_t j = 0; j < dim; j++) x[i * dim + j] = c[k * dim + j] + 0.35f * (float)gauss(&st);
  }
  free(c);
  return x;
}

static int build(hs_hnsw_graph *g, hs_hnsw_part *p, const float *x, uint32_t n, uint32_t dim,
                 uint32_t m, uint32_t threads, uint64_t seed) {
  memset(g, 0, sizeof *g);
  g->n = n;
  g->dim = dim;
  g->m = m;
  g->m0 = 2 * m;
  g->space = HS_HNSW_L2SQ;
  g->vectors = x;
  *p = (hs_hnsw_part){0, n, 0, 0};
  hs_hnsw_build_params bp = {m, 100, threads, seed, NULL};
  hs_error err = {0};
  CHECK_OK(hs_hnsw_build(g, p, 1, &bp, &err), &err);
  return g->links0 != NULL;
}

/* Every list: count within capacity, neighbours in range, on the layer,
 * not the node itself, not repeated. Returns the number of bad lists. */
static size_t bad_lists(const hs_hnsw_graph *g) {
  size_t bad = 0;
  for (uint32_t i = 0; i < g->n; i++)
    for (uint32_t lev = 0; lev <= g->levels[i]; lev++) {
      const uint32_t *blk = hs_hnsw_links(g, i, lev);
      uint32_t cap = lev ? g->m : g->m0, cnt = blk[0];
      int ok = cnt <= cap;
      for (uint32_t a = 0; ok && a < cnt; a++) {
        uint32_t v = blk[1 + a];
        ok = v < g->n && v != i && g->levels[v] >= lev;
        for (uint32_t b = 0; ok && b < a; b++) ok = blk[1 + b] != v;
      }
      bad += !ok;
    }
  return bad;
}

/* Layers with at most m nodes (and at least 2): is each one complete?
 * Returns how many such layers were found; *incomplete counts the lists
 * missing a node of their layer. */
static uint32_t small_layers(const hs_hnsw_graph *g, size_t *incomplete) {
  uint32_t found = 0;
  *incomplete = 0;
  for (uint32_t lev = 0; lev <= HS_HNSW_MAX_LEVEL; lev++) {
    uint32_t count = 0;
    for (uint32_t i = 0; i < g->n; i++) count += g->levels[i] >= lev;
    if (count < 2 || count > g->m) continue;
    found++;
    for (uint32_t i = 0; i < g->n; i++) {
      if (g->levels[i] < lev) continue;
      const uint32_t *blk = hs_hnsw_links(g, i, lev);
      *incomplete += blk[0] != count - 1;
    }
  }
  return found;
}

int main(void) {
  /* 12 nodes, m = 16: every layer is complete, level 0 included. */
  {
    float *x = make_data(12, 8, 3, 7);
    hs_hnsw_graph g;
    hs_hnsw_part p;
    if (build(&g, &p, x, 12, 8, 16, 1, 42)) {
      size_t incomplete;
      CHECK(small_layers(&g, &incomplete) >= 1);
      CHECK_EQ_INT(incomplete, 0);
      for (uint32_t i = 0; i < 12; i++) CHECK_EQ_INT(g.links0[i * (1 + g.m0)], 11);
      CHECK_EQ_INT(bad_lists(&g), 0);
      hs_hnsw_build_free(&g);
    }
    free(x);
  }
  /* 3000 clustered nodes, m = 8: the top layers (at most m nodes each)
   * are complete; every list is sane for 1 and 2 threads. */
  {
    const uint32_t n = 3000, dim = 16;
    float *x = make_data(n, dim, 30, 11);
    for (uint32_t threads = 1; threads <= 2; threads++) {
      hs_hnsw_graph g;
      hs_hnsw_part p;
      if (!build(&g, &p, x, n, dim, 8, threads, 5)) continue;
      CHECK_EQ_INT(bad_lists(&g), 0);
      CHECK(g.levels[p.entry] == p.max_level);
      if (threads == 1) {
        size_t incomplete;
        CHECK(small_layers(&g, &incomplete) >= 1); /* 3000 / 8^3 ≈ 6 nodes at level 3 */
        CHECK_EQ_INT(incomplete, 0);
      }
      hs_hnsw_build_free(&g);
    }
    free(x);
  }
  /* ef far above the node count (issue 12): the same candidates as ef = n,
   * with the result heap sized by the partition, not by ef (it used to
   * reserve ef + 1 entries: 32 GiB for ef = 2^32 - 1). */
  {
    const uint32_t n = 500, dim = 8;
    float *x = make_data(n, dim, 5, 3);
    hs_hnsw_graph g;
    hs_hnsw_part p;
    if (build(&g, &p, x, n, dim, 8, 1, 9)) {
      hs_hnsw_scratch s1, s2;
      CHECK(hs_hnsw_scratch_init(&s1, n));
      CHECK(hs_hnsw_scratch_init(&s2, n));
      hs_hnsw_cand *c1 = NULL, *c2 = NULL;
      size_t n1 = hs_hnsw_search(&g, &p, x + 7 * dim, n, NULL, &s1, &c1);
      size_t n2 = hs_hnsw_search(&g, &p, x + 7 * dim, UINT32_MAX, NULL, &s2, &c2);
      CHECK(n1 > n / 2);
      CHECK_EQ_INT(n2, n1);
      CHECK(n2 == n1 && memcmp(c1, c2, n1 * sizeof *c1) == 0);
      CHECK(s2.res_cap <= (size_t)n + 1);
      hs_hnsw_scratch_free(&s1);
      hs_hnsw_scratch_free(&s2);
      hs_hnsw_build_free(&g);
    }
    free(x);
  }
  /* threads far above the pool: clamped (no scratch for 2^32 workers) */
  {
    const uint32_t n = 300, dim = 8;
    float *x = make_data(n, dim, 5, 4);
    hs_hnsw_graph g;
    hs_hnsw_part p;
    if (build(&g, &p, x, n, dim, 8, UINT32_MAX, 9)) {
      CHECK_EQ_INT(bad_lists(&g), 0);
      hs_hnsw_build_free(&g);
    }
    free(x);
  }
  return hs_test_finish("test_hnsw");
}
