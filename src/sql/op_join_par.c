/*
 * op_join_par.c — a join as a pipeline stage (pipe.c): its build side made
 * once, before the workers start, then every worker probes with its own
 * left chunks on a probe state of its own (a copy of the join's state
 * sharing the build side, the keys' descriptions and the conditions, with
 * its own probe arrays and pair buffers).
 *
 * Only the joins whose probes write nothing shared qualify: inner, left,
 * semi, anti and NOT IN, hashed or nested-loop (not RIGHT / FULL, which
 * mark build rows, nor swapped semi / anti joins, nor an index nested
 * loop, which decides from the left side read ahead).
 */
#include <string.h>
#include <time.h>

#include "op_join_internal.h"
#include "pipe.h"

bool hs_sql_join_par_ok(const hs_sql_op *op) {
  const join_state *st = op->state;
  const hs_sql_plan *p = op->plan;
  if (st == NULL || st->phase != PH_BUILD || st->n_pend != 0) return false;
  if (st->method != HS_SJM_HASH && st->method != HS_SJM_NL) return false;
  switch (st->type) {
  case HS_SJ_INNER:
  case HS_SJ_LEFT:
  case HS_SJ_SEMI:
  case HS_SJ_ANTI:
  case HS_SJ_ANTI_NULLAWARE: break;
  default: return false;
  }
  if (p->pred != NULL && hs_sql_expr_has_volatile(p->pred)) return false;
  for (int32_t k = 0; k < p->join.n_keys; k++)
    if (hs_sql_expr_has_volatile(p->join.left_keys[k]) ||
        hs_sql_expr_has_volatile(p->join.right_keys[k]))
      return false;
  return true;
}

hs_status hs_sql_join_par_prepare(hs_sql_op *op, bool *done, hs_error *err) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  hs_status s = hs_sql_join_build_phase(op, err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  op->stats.ns += (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
  *done = s == HS_OK && hs_sql_join_done(op);
  return s;
}

hs_status hs_sql_join_par_new(hs_sql_op *op, void **out, hs_error *err) {
  const join_state *st = op->state;
  join_state *w = hs_malloc(sizeof *w);
  if (w == NULL) return hs_sql_join_oom(err, "probe");
  *w = *st;
  memset(&w->pr, 0, sizeof w->pr);
  w->nc = 0;
  w->cl = hs_sql_join_alloc(JOIN_CHUNK_ROWS, 8);
  w->cr = hs_sql_join_alloc(JOIN_CHUNK_ROWS, 8);
  w->sel = hs_sql_join_alloc(JOIN_CHUNK_ROWS, 8);
  *out = w;
  if (w->cl == NULL || w->cr == NULL || w->sel == NULL) return hs_sql_join_oom(err, "probe");
  return HS_OK;
}

hs_status hs_sql_join_par_probe(void *probe, hs_sql_chunk *in,
                                hs_status (*emit)(void *ctx, hs_sql_chunk *out, hs_error *err),
                                void *ctx, hs_error *err) {
  return hs_sql_join_probe_one(probe, in, emit, ctx, err);
}

void hs_sql_join_par_free(void *probe) {
  join_state *w = probe;
  if (w == NULL) return;
  hs_sql_join_probe_release(w);
  hs_free(w->cl);
  hs_free(w->cr);
  hs_free(w->sel);
  hs_free(w);
}
