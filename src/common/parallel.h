/*
 * parallel.h — a parallel for-loop over [0, n) on worker threads.
 *
 * hs_parallel_for splits [0, n) into chunks of `grain` items; `threads`
 * workers (the calling thread is one of them) claim chunks from a shared
 * atomic counter until none are left, so uneven chunks balance. Returns
 * when every chunk is done. Helper workers are threads of a pool kept
 * between calls (parallel.c), woken per call (microseconds); the pool
 * grows only when a call finds no idle thread (nested or concurrent calls)
 * and survives fork() (the child starts with an empty pool).
 *
 * `fn` must not fail: a worker that hits an error records it in its own
 * slot of the caller's context (the `worker` argument, in [0, threads),
 * indexes such per-worker state) and the caller checks after the call.
 * When a thread cannot be started the remaining workers (at least the
 * caller) do all the work: never an error, only less parallelism.
 */
#ifndef HS_COMMON_PARALLEL_H
#define HS_COMMON_PARALLEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*hs_parallel_fn)(void *ctx, size_t begin, size_t end, uint32_t worker);

/* Cores available to this process (sched_getaffinity), at least 1. The
 * environment variable HS_THREADS (a positive integer) overrides it. */
uint32_t hs_parallel_cores(void);

/* While set on a thread (thread-local; unset by default), hs_parallel_cores()
 * answers 1 there: a thread that already is one of several workers sharing
 * the cores (src/sql/pipe.c's morsel readers) runs the parallel loops it
 * calls (a reader's columns) itself, instead of waking more threads than
 * there are cores and waiting on them. */
void hs_parallel_set_serial(bool on);

/* threads == 0 means hs_parallel_cores(); it is also capped by the number
 * of chunks. grain == 0 means 1. */
void hs_parallel_for(size_t n, size_t grain, uint32_t threads, hs_parallel_fn fn, void *ctx);

/* Threads the pool has started and not lost (tests). */
uint32_t hs_parallel_pool_threads(void);

#endif /* HS_COMMON_PARALLEL_H */
