/*
 * parallel.c — hs_parallel_for: workers claiming chunks from an atomic
 * counter (see parallel.h), run by a pool of threads kept between calls.
 *
 * A query of a few milliseconds calls hs_parallel_for several times (files,
 * columns); starting threads per call cost it ~20 % of its CPU in clone()
 * alone. Pool threads wait, each on its own condition variable, in an idle
 * list; a call takes as many as it needs and starts new ones only when the
 * list runs dry (nested calls, or calls from several threads at once), up
 * to THREADS_MAX in all. A finished worker returns to the idle list before
 * it reports done, so the caller's next call finds it there.
 *
 * A thread at a lower priority than the main thread (the background index
 * build lowers its own) starts no pool threads: they would inherit it.
 *
 * fork(): the child has none of the pool's threads, so an atfork handler
 * empties the pool in the child (the parent's idle records are abandoned
 * there, not freed: another thread of the parent may have held their
 * locks). A job's state lives on the caller's stack until its helpers
 * have reported.
 */
#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common.h"

#define THREADS_MAX 256

static _Thread_local bool serial_here;

void hs_parallel_set_serial(bool on) {
  serial_here = on;
}

uint32_t hs_parallel_cores(void) {
  if (serial_here) return 1;
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
  pthread_mutex_t mu;
  pthread_cond_t done;
  uint32_t running; /* helpers enlisted and not yet reported (under mu) */
} job;

typedef struct pool_worker {
  pthread_mutex_t mu;
  pthread_cond_t wake;
  job *j;      /* the job to help with; NULL while idle (under mu) */
  uint32_t id; /* its worker index in that job */
  struct pool_worker *next_idle;
} pool_worker;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pool_worker *pool_idle;
static uint32_t pool_threads; /* started and alive, idle or not */
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_prepare(void) {
  pthread_mutex_lock(&pool_mu);
}

static void pool_parent(void) {
  pthread_mutex_unlock(&pool_mu);
}

static void pool_child(void) {
  pthread_mutex_init(&pool_mu, NULL);
  pool_idle = NULL;
  pool_threads = 0;
}

static void pool_init(void) {
  pthread_atfork(pool_prepare, pool_parent, pool_child);
}

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
  pool_worker *w = p;
  for (;;) {
    pthread_mutex_lock(&w->mu);
    while (w->j == NULL) pthread_cond_wait(&w->wake, &w->mu);
    job *j = w->j;
    uint32_t id = w->id;
    pthread_mutex_unlock(&w->mu);
    run_chunks(j, id);
    /* Idle again before reporting, so that the caller's next call finds
     * this thread; j is not touched after the report. */
    pthread_mutex_lock(&w->mu);
    w->j = NULL;
    pthread_mutex_unlock(&w->mu);
    pthread_mutex_lock(&pool_mu);
    w->next_idle = pool_idle;
    pool_idle = w;
    pthread_mutex_unlock(&pool_mu);
    pthread_mutex_lock(&j->mu);
    if (--j->running == 0) pthread_cond_signal(&j->done);
    pthread_mutex_unlock(&j->mu);
  }
  return NULL;
}

/* True when the calling thread runs at a lower priority (a higher nice)
 * than the process's main thread: a background index build (Linux nice is
 * per thread). Pool threads it started would keep that priority for every
 * later caller, so it starts none (idle ones may still help it). */
static bool caller_demoted(void) {
#ifdef __linux__
  int mine = getpriority(PRIO_PROCESS, 0); /* the calling thread */
  int main_thread = getpriority(PRIO_PROCESS, (id_t)getpid());
  return mine > main_thread;
#else
  return false;
#endif
}

/* Hand job j to a pool thread as worker `id`: an idle one, else a new one.
 * False when neither is possible. */
static bool enlist(job *j, uint32_t id) {
  pthread_mutex_lock(&pool_mu);
  pool_worker *w = pool_idle;
  if (w != NULL) pool_idle = w->next_idle;
  bool may_start = w == NULL && pool_threads < THREADS_MAX;
  if (may_start && caller_demoted()) may_start = false;
  if (may_start) pool_threads++;
  pthread_mutex_unlock(&pool_mu);
  if (w == NULL && !may_start) return false;
  pthread_mutex_lock(&j->mu);
  j->running++;
  pthread_mutex_unlock(&j->mu);
  if (w != NULL) {
    pthread_mutex_lock(&w->mu);
    w->j = j;
    w->id = id;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->mu);
    return true;
  }
  w = hs_calloc(1, sizeof *w);
  pthread_t tid;
  pthread_attr_t attr;
  bool ok = w != NULL && pthread_attr_init(&attr) == 0;
  if (ok) {
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->wake, NULL);
    w->j = j;
    w->id = id;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    ok = pthread_create(&tid, &attr, worker_main, w) == 0;
    pthread_attr_destroy(&attr);
  }
  if (!ok) {
    if (w != NULL) {
      pthread_mutex_destroy(&w->mu);
      pthread_cond_destroy(&w->wake);
    }
    hs_free(w);
    pthread_mutex_lock(&pool_mu);
    pool_threads--;
    pthread_mutex_unlock(&pool_mu);
    pthread_mutex_lock(&j->mu);
    j->running--;
    pthread_mutex_unlock(&j->mu);
  }
  return ok;
}

void hs_parallel_for(size_t n, size_t grain, uint32_t threads, hs_parallel_fn fn, void *ctx) {
  if (n == 0) return;
  if (grain == 0) grain = 1;
  job j = {.n = n, .grain = grain, .chunks = n / grain + (n % grain != 0), .fn = fn, .ctx = ctx};
  atomic_init(&j.next, 0);
  if (threads == 0) threads = hs_parallel_cores();
  if (threads > THREADS_MAX) threads = THREADS_MAX;
  if (threads > j.chunks) threads = (uint32_t)j.chunks;
  if (threads <= 1) {
    run_chunks(&j, 0);
    return;
  }
  pthread_once(&pool_once, pool_init);
  pthread_mutex_init(&j.mu, NULL);
  pthread_cond_init(&j.done, NULL);
  /* Workers 1..threads-1 on pool threads; worker 0 is the caller. A worker
   * that cannot be had only means fewer workers. */
  for (uint32_t w = 1; w < threads; w++)
    if (!enlist(&j, w)) break;
  run_chunks(&j, 0);
  pthread_mutex_lock(&j.mu);
  while (j.running > 0) pthread_cond_wait(&j.done, &j.mu);
  pthread_mutex_unlock(&j.mu);
  pthread_mutex_destroy(&j.mu);
  pthread_cond_destroy(&j.done);
}

uint32_t hs_parallel_pool_threads(void) {
  pthread_mutex_lock(&pool_mu);
  uint32_t n = pool_threads;
  pthread_mutex_unlock(&pool_mu);
  return n;
}
