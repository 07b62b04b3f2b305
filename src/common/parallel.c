/*
 * parallel.c — hs_parallel_for: per-call worker threads claiming chunks
 * from an atomic counter (see parallel.h).
 */
#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "common.h"

#define THREADS_MAX 256

uint32_t hs_parallel_cores(void) {
  const char *env = getenv("HS_THREADS");
  if (env != NULL && *env != '\0') {
    char *end = NULL;
    long v = strtol(env, &end, 10);
    if (end != NULL && *end == '\0' && v > 0) return v > THREADS_MAX ? THREADS_MAX : (uint32_t)v;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int c = CPU_COUNT(&set);
    if (c > 0) return c > THREADS_MAX ? THREADS_MAX : (uint32_t)c;
  }
  return 1;
}

typedef struct job {
  size_t n, grain, chunks;
  atomic_size_t next;
  hs_parallel_fn fn;
  void *ctx;
} job;

typedef struct worker_arg {
  job *j;
  uint32_t worker;
} worker_arg;

static void run_chunks(job *j, uint32_t worker) {
  for (;;) {
    size_t c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
    if (c >= j->chunks) return;
    size_t begin = c * j->grain;
    size_t end = begin + j->grain < j->n ? begin + j->grain : j->n;
    j->fn(j->ctx, begin, end, worker);
  }
}

static void *worker_main(void *p) {
  worker_arg *a = p;
  run_chunks(a->j, a->worker);
  return NULL;
}

void hs_parallel_for(size_t n, size_t grain, uint32_t threads, hs_parallel_fn fn, void *ctx) {
  if (n == 0) return;
  if (grain == 0) grain = 1;
  job j = {.n = n, .grain = grain, .chunks = n / grain + (n % grain != 0), .fn = fn, .ctx = ctx};
  atomic_init(&j.next, 0);
  if (threads == 0) threads = hs_parallel_cores();
  if (threads > THREADS_MAX) threads = THREADS_MAX;
  if (threads > j.chunks) threads = (uint32_t)j.chunks;
  pthread_t tids[THREADS_MAX];
  worker_arg args[THREADS_MAX];
  uint32_t started = 0;
  /* Workers 1..threads-1 on new threads; worker 0 is the caller. A thread
   * that fails to start only means fewer workers. */
  for (uint32_t w = 1; w < threads; w++) {
    args[started] = (worker_arg){.j = &j, .worker = started + 1};
    if (pthread_create(&tids[started], NULL, worker_main, &args[started]) != 0) break;
    started++;
  }
  run_chunks(&j, 0);
  for (uint32_t i = 0; i < started; i++) pthread_join(tids[i], NULL);
}
