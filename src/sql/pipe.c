/*
 * pipe.c — morsel-driven pipelines (see pipe.h).
 *
 * Each worker loops: take the lock, pull the source's next chunk and its
 * sequence number, drop the lock, push the chunk through the stages — a
 * FILTER or PROJECT in place, a join probe whose every output chunk goes
 * on up the stages — into the sink. Such a source (and everything below
 * it) runs on one worker at a time; the stages and the sink run on all of
 * them. A table scan that can be cut into morsels runs on all of them
 * too: a worker takes a morsel number (atomically), reads the morsel's
 * chunks with a reader of its own and pushes each on; chunk j of morsel k
 * is sequence number k << 16 | j, so a worker's chunks still come in
 * increasing order and the serial order is restored as before. Workers
 * are hs_parallel_for's (src/common/parallel.c).
 */
#include "pipe.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/parallel.h"

typedef struct pipe_run {
  const hs_sql_pipe *p;
  hs_sql_pipe_sink sink;
  void *ctx;
  const int *stop;
  pthread_mutex_t mu;
  int64_t next_seq;  /* under mu */
  bool done;         /* the source ended or failed (under mu) */
  bool failed;       /* some chunk failed: hand out no more (under mu) */
  int64_t err_seq;   /* sequence number of the error kept (under mu) */
  hs_error err;      /* the error of the lowest failing sequence number */
  bool morsels;      /* the source is a table scan cut into morsels */
  struct wstate *ws; /* per worker */
} pipe_run;

/* A worker's state: its join probes, its counters per stage (rows out,
 * calls, ns; added to the stage operators' stats at the end), the chunk
 * it is on. */
typedef struct wstate {
  pipe_run *r;
  uint32_t w;
  int64_t seq, emitted; /* the source chunk, rows its outputs had so far */
  void *probes[HS_SQL_PIPE_STAGES_MAX];
  int64_t stats[HS_SQL_PIPE_STAGES_MAX][3];
  int64_t src_stats[3]; /* morsels: the source's rows, chunks, ns on this worker */
} wstate;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool hs_sql_pipe_find(hs_sql_op *input, hs_sql_pipe *out) {
  memset(out, 0, sizeof *out);
  hs_sql_op *chain[HS_SQL_PIPE_STAGES_MAX];
  int32_t n = 0;
  hs_sql_op *op = input;
  for (;;) {
    const hs_sql_plan *p = op->plan;
    if (p->kind == HS_SP_FILTER) {
      if (hs_sql_expr_has_volatile(p->pred)) return false;
    } else if (p->kind == HS_SP_PROJECT) {
      for (int32_t i = 0; i < p->n_cols; i++)
        if (hs_sql_expr_has_volatile(p->project.exprs[i])) return false;
    } else if (p->kind != HS_SP_JOIN || !hs_sql_join_par_ok(op)) {
      break;
    }
    if (n == HS_SQL_PIPE_STAGES_MAX) return false;
    chain[n++] = op;
    op = op->kids[0];
  }
  out->source = op;
  for (int32_t i = 0; i < n; i++) out->stages[i] = chain[n - 1 - i];
  out->n_stages = n;
  return true;
}

uint32_t hs_sql_pipe_workers(void) {
  const char *off = getenv("HS_SQL_PIPE"); /* "0": serial operators (benchmarks, diagnosis) */
  if (off != NULL && strcmp(off, "0") == 0) return 1;
  uint32_t n = hs_parallel_cores();
  return n > HS_SQL_PIPE_WORKERS_MAX ? HS_SQL_PIPE_WORKERS_MAX : n;
}

/* A FILTER or PROJECT on *c in place (c->n == 0 after it: no rows left). */
static hs_status run_stage(const hs_sql_op *op, hs_sql_chunk *c, hs_error *err) {
  const hs_sql_plan *p = op->plan;
  const hs_sql_evalctx *ctx = hs_sql_exec_evalctx(op->x);
  hs_sql_chunk out = {0};
  hs_status st = HS_OK;
  if (p->kind == HS_SP_FILTER) {
    int64_t *sel = hs_malloc(sizeof(int64_t) * (size_t)c->n);
    if (sel == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    int64_t n_sel = 0;
    st = hs_sql_eval_select(p->pred, c, ctx, sel, &n_sel, err);
    if (st == HS_OK && n_sel == c->n) {
      hs_free(sel);
      return HS_OK;
    }
    if (st == HS_OK && n_sel > 0) st = hs_sql_chunk_take(&out, c, sel, n_sel, err);
    hs_free(sel);
  } else {
    st = hs_sql_chunk_init(&out, p->n_cols, c->n, err);
    for (int32_t i = 0; i < p->n_cols && st == HS_OK; i++)
      st = hs_sql_eval(p->project.exprs[i], c, ctx, &out.cols[i], err);
  }
  hs_sql_chunk_release(c);
  if (st != HS_OK) {
    hs_sql_chunk_release(&out);
    return st;
  }
  hs_sql_chunk_move(c, &out);
  return HS_OK;
}

static hs_status push(wstate *ws, int32_t i, hs_sql_chunk *c, hs_error *err);

typedef struct join_emit_ctx {
  wstate *ws;
  int32_t level;   /* the join's stage */
  int64_t down_ns; /* time spent in the stages above it */
} join_emit_ctx;

static hs_status join_emit(void *vctx, hs_sql_chunk *out, hs_error *err) {
  join_emit_ctx *jc = vctx;
  jc->ws->stats[jc->level][0] += out->n;
  jc->ws->stats[jc->level][1]++;
  hs_sql_chunk c;
  hs_sql_chunk_move(&c, out);
  int64_t t0 = now_ns();
  hs_status st = push(jc->ws, jc->level + 1, &c, err);
  jc->down_ns += now_ns() - t0;
  return st;
}

/* Chunk *c (owned: released here) through stages i.. and into the sink. */
static hs_status push(wstate *ws, int32_t i, hs_sql_chunk *c, hs_error *err) {
  const hs_sql_pipe *p = ws->r->p;
  /* as hs_sql_op_next does per chunk: a join may turn one chunk into many */
  if (hs_sql_exec_cancelled(p->source->x, err)) {
    hs_sql_chunk_release(c);
    return HS_ERR_INVALID_ARG;
  }
  hs_status st = HS_OK;
  for (; i < p->n_stages; i++) {
    const hs_sql_op *op = p->stages[i];
    int64_t t0 = now_ns();
    if (op->plan->kind == HS_SP_JOIN) {
      join_emit_ctx jc = {ws, i, 0};
      st = hs_sql_join_par_probe(ws->probes[i], c, join_emit, &jc, err);
      hs_sql_chunk_release(c);
      ws->stats[i][2] += now_ns() - t0 - jc.down_ns;
      return st;
    }
    st = run_stage(op, c, err);
    ws->stats[i][0] += st == HS_OK ? c->n : 0;
    ws->stats[i][1]++;
    ws->stats[i][2] += now_ns() - t0;
    if (st != HS_OK || c->n == 0) {
      hs_sql_chunk_release(c);
      return st;
    }
  }
  int64_t pos = (ws->seq << 32) + ws->emitted;
  ws->emitted += c->n;
  st = ws->r->sink(ws->r->ctx, ws->w, pos, c, err);
  hs_sql_chunk_release(c);
  return st;
}

/* Keep the error of chunk `seq` if it is the earliest so far; stop the
 * hand-out. */
static void fail(pipe_run *r, int64_t seq, const hs_error *e) {
  pthread_mutex_lock(&r->mu);
  if (!r->failed || seq < r->err_seq) {
    r->err = *e;
    r->err_seq = seq;
  }
  r->failed = true;
  pthread_mutex_unlock(&r->mu);
}

/* A worker of a source cut into morsels: morsel after morsel, each read
 * to its end (a stop is seen between morsels). */
static void morsel_worker(pipe_run *r, wstate *ws) {
  hs_sql_op *src = r->p->source;
  for (;;) {
    pthread_mutex_lock(&r->mu);
    bool quit =
        r->done || r->failed || (r->stop != NULL && __atomic_load_n(r->stop, __ATOMIC_RELAXED));
    pthread_mutex_unlock(&r->mu);
    if (quit) return;
    int64_t k = hs_sql_scan_par_take(src);
    if (k < 0) {
      pthread_mutex_lock(&r->mu);
      r->done = true;
      pthread_mutex_unlock(&r->mu);
      return;
    }
    hs_error e = {0};
    void *cur = NULL;
    hs_status st = hs_sql_scan_par_open(src, k, &cur, &e);
    for (int64_t j = 0; st == HS_OK; j++) {
      int64_t seq = k << 16 | j;
      hs_sql_chunk c;
      int64_t t0 = now_ns();
      if (j > 0xffff)
        st = hs_error_set(&e, HS_ERR_INTERNAL, "sql: a morsel of over 65535 chunks");
      else
        st = hs_sql_scan_par_next(src, cur, &c, &e);
      ws->src_stats[2] += now_ns() - t0;
      ws->src_stats[1]++;
      if (st != HS_OK) {
        fail(r, seq, &e);
        break;
      }
      if (c.n == 0) {
        hs_sql_chunk_release(&c);
        break;
      }
      ws->src_stats[0] += c.n;
      ws->seq = seq;
      ws->emitted = 0;
      st = push(ws, 0, &c, &e);
      if (st != HS_OK) fail(r, seq, &e);
    }
    if (st != HS_OK && cur == NULL) fail(r, k << 16, &e);
    hs_sql_scan_par_close(src, cur);
    if (st != HS_OK) return;
  }
}

static void worker(void *vctx, size_t begin, size_t end, uint32_t w) {
  (void)begin, (void)end;
  pipe_run *r = vctx;
  wstate *ws = &r->ws[w];
  if (r->morsels) {
    hs_parallel_set_serial(true); /* its morsels' columns decode here */
    morsel_worker(r, ws);
    hs_parallel_set_serial(false);
    return;
  }
  for (;;) {
    hs_sql_chunk c;
    hs_error e = {0};
    pthread_mutex_lock(&r->mu);
    if (r->done || r->failed || (r->stop != NULL && __atomic_load_n(r->stop, __ATOMIC_RELAXED))) {
      pthread_mutex_unlock(&r->mu);
      return;
    }
    int64_t seq = r->next_seq++;
    hs_status st = hs_sql_op_next(r->p->source, &c, &e);
    if (st != HS_OK || c.n == 0) r->done = true;
    pthread_mutex_unlock(&r->mu);
    if (st != HS_OK) {
      fail(r, seq, &e);
      return;
    }
    if (c.n == 0) {
      hs_sql_chunk_release(&c);
      return;
    }
    ws->seq = seq;
    ws->emitted = 0;
    st = push(ws, 0, &c, &e);
    if (st != HS_OK) {
      fail(r, seq, &e);
      return;
    }
  }
}

hs_status hs_sql_pipe_run(const hs_sql_pipe *p, uint32_t workers, hs_sql_pipe_sink sink, void *ctx,
                          const int *stop, bool *ended, hs_error *err) {
  *ended = false;
  if (workers < 1) workers = 1;
  if (workers > HS_SQL_PIPE_WORKERS_MAX) workers = HS_SQL_PIPE_WORKERS_MAX;
  /* Joins build first, top first (as the serial pulls would); one that
   * can give no row ends the pipeline before anything below it runs. */
  for (int32_t i = p->n_stages; i-- > 0;) {
    if (p->stages[i]->plan->kind != HS_SP_JOIN) continue;
    bool done = false;
    hs_status st = hs_sql_join_par_prepare(p->stages[i], &done, err);
    if (st != HS_OK) return st;
    if (done) {
      *ended = true;
      return HS_OK;
    }
  }
  pipe_run r = {.p = p, .sink = sink, .ctx = ctx, .stop = stop};
  r.morsels = hs_sql_scan_par_ok(p->source, workers);
  r.ws = hs_calloc(workers, sizeof *r.ws);
  if (r.ws == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  hs_status st = HS_OK;
  for (uint32_t w = 0; w < workers; w++) {
    r.ws[w].r = &r;
    r.ws[w].w = w;
    for (int32_t i = 0; i < p->n_stages && st == HS_OK; i++)
      if (p->stages[i]->plan->kind == HS_SP_JOIN)
        st = hs_sql_join_par_new(p->stages[i], &r.ws[w].probes[i], err);
  }
  if (st == HS_OK) {
    pthread_mutex_init(&r.mu, NULL);
    hs_parallel_for(workers, 1, workers, worker, &r);
    pthread_mutex_destroy(&r.mu);
  }
  for (uint32_t w = 0; w < workers; w++) {
    hs_sql_opstats *ss = &p->source->stats;
    ss->rows += r.ws[w].src_stats[0];
    ss->calls += r.ws[w].src_stats[1];
    ss->ns += r.ws[w].src_stats[2];
    for (int32_t i = 0; i < p->n_stages; i++) {
      hs_sql_opstats *s = &p->stages[i]->stats;
      s->rows += r.ws[w].stats[i][0];
      s->calls += r.ws[w].stats[i][1];
      s->ns += r.ws[w].stats[i][2];
      if (r.ws[w].probes[i] != NULL) hs_sql_join_par_free(r.ws[w].probes[i]);
    }
  }
  hs_free(r.ws);
  if (st != HS_OK) return st;
  if (r.failed) {
    if (err != NULL) *err = r.err;
    return r.err.status != HS_OK ? r.err.status : HS_ERR_INTERNAL;
  }
  *ended = r.done;
  if (r.morsels && r.done) hs_sql_scan_par_end(p->source);
  return HS_OK;
}
