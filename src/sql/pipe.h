/*
 * pipe.h — morsel-driven pipelines (pipe.c): a blocking operator's input
 * pulled by several workers at once. Private to src/sql/.
 *
 * A pipeline is a *source* operator (any operator: a scan, a union, a
 * join that cannot be a stage) whose chunks are handed out one at a time
 * under a lock, each with its sequence number (0, 1, 2, ... in the
 * source's order) — or, for a table scan that can be cut, morsels handed
 * out (each worker decodes its own; a chunk's sequence number is its
 * morsel's number << 16 plus its rank in the morsel) — followed by the stages between the source
 * and the blocking operator: FILTER and PROJECT nodes (stateless: their expressions are evaluated
 * on the worker) and joins probed on the worker (op_join_par.c: the build side made once before the
 * workers start, in the serial order, top join first). The result goes to the caller's sink with
 * the worker index and the *position* of its first row — the chunk's sequence number << 32 plus the
 * rows the chunk's earlier outputs had — so that a sink keeping per-worker state can restore the
 * serial order of rows afterwards (a join emits a left chunk's output in several chunks).
 *
 * Errors are the serial run's: a failing chunk stops the hand-out, the
 * chunks already handed out finish, and the error of the lowest sequence
 * number is returned (a serial run would have met it first).
 *
 * Ownership: the pipe borrows the operators (they belong to the exec); the
 * sink borrows each chunk for the call only.
 */
#ifndef HS_SQL_PIPE_H
#define HS_SQL_PIPE_H

#include "plan.h"

#define HS_SQL_PIPE_STAGES_MAX 16

typedef hs_status (*hs_sql_pipe_sink)(void *ctx, uint32_t worker, int64_t pos,
                                      const hs_sql_chunk *chunk, hs_error *err);

typedef struct hs_sql_pipe {
  hs_sql_op *source;
  /* FILTER / PROJECT / JOIN operators above the source, bottom first (their
   * plans give the expressions; their stats get the rows and calls). */
  hs_sql_op *stages[HS_SQL_PIPE_STAGES_MAX];
  int32_t n_stages;
} hs_sql_pipe;

/* The pipeline feeding `input` (a blocking operator's kid): the FILTER /
 * PROJECT / qualifying JOIN chain (through a join's left side) from it
 * down to the first other operator. False when a FILTER or PROJECT calls a
 * volatile function (random(): its sequence would depend on the workers)
 * or the chain is longer than HS_SQL_PIPE_STAGES_MAX. */
bool hs_sql_pipe_find(hs_sql_op *input, hs_sql_pipe *out);

/* Workers a pipeline of this statement may use: hs_parallel_cores()
 * (HS_THREADS caps it), at most HS_SQL_PIPE_WORKERS_MAX; 1 (no pipeline)
 * when the environment has HS_SQL_PIPE=0 (read per call). */
#define HS_SQL_PIPE_WORKERS_MAX 64
uint32_t hs_sql_pipe_workers(void);

/* Run the pipeline on `workers` workers (the caller is one), calling sink
 * for every non-empty chunk, to the source's end (*ended true) or until
 * *stop (read atomically before each hand-out; may be NULL) becomes
 * non-zero: then the chunks handed out are finished and *ended is false,
 * and the source and stage operators can be pulled on serially from where
 * the pipeline left them. */
hs_status hs_sql_pipe_run(const hs_sql_pipe *p, uint32_t workers, hs_sql_pipe_sink sink, void *ctx,
                          const int *stop, bool *ended, hs_error *err);

/* Joins as stages (op_join_par.c). */
bool hs_sql_join_par_ok(const hs_sql_op *op);
/* The join's build phase (if it has not run); *done when no row can come
 * out of it (then its left side must not be pulled). */
hs_status hs_sql_join_par_prepare(hs_sql_op *op, bool *done, hs_error *err);
/* A worker's probe state (hs_sql_join_par_free it, also on failure). */
hs_status hs_sql_join_par_new(hs_sql_op *op, void **probe, hs_error *err);
/* Probe with left chunk *in (moved in), emitting the output chunks in order. */
hs_status hs_sql_join_par_probe(void *probe, hs_sql_chunk *in,
                                hs_status (*emit)(void *ctx, hs_sql_chunk *out, hs_error *err),
                                void *ctx, hs_error *err);
void hs_sql_join_par_free(void *probe);

/* Table scans as sources (op_scan.c): read by every worker at once, each
 * taking the next morsel (a row range of a file, hs_scan_morsels) and
 * decoding it into chunks of its own. hs_sql_scan_par_ok cuts the scan
 * (once; then the scan's serial next reads the morsels not taken) and is
 * true while morsels are left; false for other operators, a scan with a
 * limit or already read, one that cannot be cut or would be one morsel,
 * and below 4 `workers` unless HS_SQL_MORSEL=1 (op_scan.c).
 * take: the next morsel's number (atomic; -1 when none is left). open /
 * next / close: a worker's reader of morsel k (next: n == 0 at its end;
 * close adds its counters to the scan's, under the scan's lock). end: the
 * EXPLAIN ANALYZE note once every morsel has been read. */
#define HS_SQL_SCAN_MORSELS_MAX 32767
bool hs_sql_scan_par_ok(hs_sql_op *op, uint32_t workers);
int64_t hs_sql_scan_par_take(hs_sql_op *op);
hs_status hs_sql_scan_par_open(hs_sql_op *op, int64_t k, void **cur, hs_error *err);
hs_status hs_sql_scan_par_next(hs_sql_op *op, void *cur, hs_sql_chunk *out, hs_error *err);
void hs_sql_scan_par_close(hs_sql_op *op, void *cur);
void hs_sql_scan_par_end(hs_sql_op *op);

#endif /* HS_SQL_PIPE_H */
