/*
 * test_hnsw_reach.c — after hs_hnsw_build every node is reachable on layer 0
 * from the partition's entry (the connectivity repair in hnsw.c), even with
 * small m and ef_construction, where heuristic pruning drops the last
 * in-link of some nodes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/vector/hnsw.h"
#include "hs_test.h"

static uint32_t reached(const hs_hnsw_graph *g, uint32_t entry) {
  uint8_t *seen = calloc(g->n, 1);
  uint32_t *queue = malloc((size_t)g->n * sizeof *queue), head = 0, tail = 0;
  seen[entry] = 1;
  queue[tail++] = entry;
  while (head < tail) {
    const uint32_t *blk = hs_hnsw_links(g, queue[head++], 0);
    for (uint32_t j = 0; j < blk[0] && j < g->m0; j++)
      if (blk[1 + j] < g->n && !seen[blk[1 + j]]) {
        seen[blk[1 + j]] = 1;
        queue[tail++] = blk[1 + j];
      }
  }
  free(seen);
  free(queue);
  return tail;
}

int main(void) {
  const uint32_t dims[] = {2, 8, 32};
  for (size_t di = 0; di < 3; di++) {
    const uint32_t n = 6000, dim = dims[di];
    float *x = malloc((size_t)n * dim * sizeof *x);
    uint64_t st = 17 + di;
    /* many exact duplicates and tight clusters: the hard case for pruning */
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t j = 0; j < dim; j++)
        x[(size_t)i * dim + j] = i % 3 == 0 && i > 0
                                     ? x[(size_t)(i - 1) * dim + j]
                                     : (float)(hs_test_rand(&st) % 1000) / 1000.0f + (float)(i % 7);
    for (uint32_t m = 4; m <= 16; m *= 2) { /* m = 2 (m0 = 4) can oscillate: README */
      hs_hnsw_graph g;
      memset(&g, 0, sizeof g);
      g.n = n;
      g.dim = dim;
      g.m = m;
      g.m0 = 2 * m;
      g.space = HS_HNSW_L2SQ;
      g.vectors = x;
      hs_hnsw_part p = {0, n, 0, 0};
      hs_hnsw_build_params bp = {m, 4, 2, 5 + m, NULL};
      hs_error err = {0};
      CHECK_OK(hs_hnsw_build(&g, &p, 1, &bp, &err), &err);
      uint32_t r = reached(&g, p.entry);
      if (r != n) fprintf(stderr, "dim %u m %u: %u of %u reached\n", dim, m, r, n);
      CHECK_EQ_INT(r, n);
      hs_hnsw_build_free(&g);
    }
    free(x);
  }
  return hs_test_finish("test_hnsw_reach");
}
