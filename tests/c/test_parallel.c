/*
 * test_parallel.c — hs_parallel_for covers [0, n) exactly once for many
 * (n, grain, threads) shapes, gives every worker an index below the
 * thread count, and honours HS_THREADS in hs_parallel_cores. The thread
 * pool: repeated calls reuse its threads, nested and concurrent calls
 * complete, and a forked child (which has none of the parent's threads)
 * still runs parallel loops.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Cover [0, n) with `threads` workers; true when every item was hit once. */
static bool cover(size_t n, size_t grain, uint32_t threads) {
  ctx c = {.hits = calloc(n ? n : 1, sizeof(atomic_uint)), .threads = threads};
  atomic_init(&c.bad_worker, 0);
  hs_parallel_for(n, grain, threads, mark, &c);
  bool once = atomic_load(&c.bad_worker) == 0;
  for (size_t i = 0; i < n; i++) once &= atomic_load(&c.hits[i]) == 1;
  free(c.hits);
  return once;
}

static atomic_uint nested_ok;

static void nested(void *p, size_t begin, size_t end, uint32_t worker) {
  (void)p;
  (void)worker;
  for (size_t i = begin; i < end; i++)
    if (cover(300, 7, 3)) atomic_fetch_add(&nested_ok, 1);
}

static void *caller(void *p) {
  atomic_uint *ok = p;
  for (int r = 0; r < 200; r++)
    if (cover(500, 3, 2)) atomic_fetch_add(ok, 1);
  return NULL;
}

static void *niced_caller(void *p) {
  atomic_uint *ok = p;
  /* Below the main thread whatever the suite runs at (`nice ctest`); this
   * thread only (Linux). A suite already at nice 19 cannot go lower: fail. */
  int now = getpriority(PRIO_PROCESS, 0);
  if (now >= 19 || setpriority(PRIO_PROCESS, 0, now + 5 > 19 ? 19 : now + 5) != 0) return NULL;
  for (int r = 0; r < 20; r++)
    if (cover(500, 3, 3)) atomic_fetch_add(ok, 1);
  return NULL;
}

static void test_pool(void) {
  CHECK(cover(1000, 1, 2));
  uint32_t base = hs_parallel_pool_threads();
  CHECK(base >= 1);
  for (int r = 0; r < 2000; r++) CHECK(cover(64, 1, 2));
  CHECK_EQ_INT(hs_parallel_pool_threads(), base); /* reused, none started */
  /* Nested: 4 outer items, each a parallel loop of its own. */
  atomic_init(&nested_ok, 0);
  hs_parallel_for(4, 1, 4, nested, NULL);
  CHECK_EQ_INT(atomic_load(&nested_ok), 4);
  /* Four threads calling at once. */
  pthread_t t[4];
  atomic_uint ok;
  atomic_init(&ok, 0);
  for (int i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, caller, &ok) == 0);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  CHECK_EQ_INT(atomic_load(&ok), 800);
  CHECK(hs_parallel_pool_threads() <= 256);
  /* A forked child: the pool's threads are not there; loops still run. A
   * thread niced below the main thread (a background build) starts no pool
   * threads, which would inherit its priority; the main thread does. */
  pid_t kid = fork();
  if (kid == 0) {
    alarm(20); /* a hang fails the test instead of blocking it */
    bool good = hs_parallel_pool_threads() == 0;
    pthread_t low;
    atomic_uint low_ok;
    atomic_init(&low_ok, 0);
    good &= pthread_create(&low, NULL, niced_caller, &low_ok) == 0 && pthread_join(low, NULL) == 0;
    good &= atomic_load(&low_ok) == 20 && hs_parallel_pool_threads() == 0;
    for (int r = 0; r < 50; r++) good &= cover(2000, 5, 3);
    good &= hs_parallel_pool_threads() >= 1;
    _exit(good ? 0 : 1);
  }
  int status = 0;
  CHECK(kid > 0 && waitpid(kid, &status, 0) == kid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
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
  test_pool();
  return hs_test_finish("test_parallel");
}
