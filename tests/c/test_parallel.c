/*
 * test_parallel.c — hs_parallel_for covers [0, n) exactly once for many
 * (n, grain, threads) shapes, gives every worker an index below the
 * thread count, and honours HS_THREADS in hs_parallel_cores.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "common/common.h"
#include "common/parallel.h"
#include "hs_test.h"

typedef struct ctx {
  atomic_uint *hits;
  uint32_t threads;
  atomic_uint bad_worker;
} ctx;

static void mark(void *p, size_t begin, size_t end, uint32_t worker) {
  ctx *c = p;
  if (worker >= c->threads) atomic_fetch_add(&c->bad_worker, 1);
  for (size_t i = begin; i < end; i++) atomic_fetch_add(&c->hits[i], 1);
}

int main(void) {
  const size_t ns[] = {0, 1, 2, 7, 100, 1000, 4097};
  const size_t grains[] = {0, 1, 3, 64, 5000};
  const uint32_t threads[] = {1, 2, 3, 8};
  for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
    for (size_t b = 0; b < sizeof grains / sizeof grains[0]; b++) {
      for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        size_t n = ns[a];
        ctx c = {.hits = calloc(n ? n : 1, sizeof(atomic_uint)), .threads = threads[t]};
        atomic_init(&c.bad_worker, 0);
        hs_parallel_for(n, grains[b], threads[t], mark, &c);
        int once = 1;
        for (size_t i = 0; i < n; i++) once &= atomic_load(&c.hits[i]) == 1;
        CHECK(once);
        CHECK(atomic_load(&c.bad_worker) == 0);
        free(c.hits);
      }
    }
  }
  CHECK(hs_parallel_cores() >= 1);
  setenv("HS_THREADS", "3", 1);
  CHECK(hs_parallel_cores() == 3);
  setenv("HS_THREADS", "junk", 1);
  CHECK(hs_parallel_cores() >= 1);
  unsetenv("HS_THREADS");
  return hs_test_finish("test_parallel");
}
