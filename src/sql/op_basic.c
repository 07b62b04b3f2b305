/*
 * op_basic.c — the streaming operators: filter, project, limit, values,
 * union all, and reads of shared (materialized) results.
 */
#include <string.h>

#include "plan.h"

/* ----------------------------------------------------------------- FILTER */

static hs_status filter_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  const hs_sql_evalctx *ctx = hs_sql_exec_evalctx(op->x);
  for (;;) {
    hs_sql_chunk in;
    hs_status st = hs_sql_op_next(op->kids[0], &in, err);
    if (st != HS_OK) return st;
    if (in.n == 0) {
      hs_sql_chunk_release(&in);
      return HS_OK;
    }
    int64_t *sel = hs_malloc(sizeof(int64_t) * (size_t)in.n);
    if (sel == NULL) {
      hs_sql_chunk_release(&in);
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    }
    int64_t n_sel = 0;
    st = hs_sql_eval_select(op->plan->pred, &in, ctx, sel, &n_sel, err);
    if (st == HS_OK && n_sel == in.n) {
      hs_sql_chunk_move(out, &in);
    } else if (st == HS_OK && n_sel > 0) {
      st = hs_sql_chunk_take(out, &in, sel, n_sel, err);
    }
    hs_free(sel);
    hs_sql_chunk_release(&in);
    if (st != HS_OK || out->n > 0) return st;
  }
}

hs_status hs_sql_op_filter_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op,
                                hs_error *err) {
  (void)x, (void)p, (void)err;
  op->next = filter_next;
  return HS_OK;
}

/* ---------------------------------------------------------------- PROJECT */

static hs_status project_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  const hs_sql_evalctx *ctx = hs_sql_exec_evalctx(op->x);
  hs_sql_chunk in;
  hs_status st = hs_sql_op_next(op->kids[0], &in, err);
  if (st != HS_OK) return st;
  if (in.n == 0) {
    hs_sql_chunk_release(&in);
    return HS_OK;
  }
  const hs_sql_plan *p = op->plan;
  st = hs_sql_chunk_init(out, p->n_cols, in.n, err);
  for (int32_t i = 0; i < p->n_cols && st == HS_OK; i++)
    st = hs_sql_eval(p->project.exprs[i], &in, ctx, &out->cols[i], err);
  hs_sql_chunk_release(&in);
  if (st != HS_OK) hs_sql_chunk_release(out);
  return st;
}

hs_status hs_sql_op_project_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op,
                                 hs_error *err) {
  (void)x, (void)p, (void)err;
  op->next = project_next;
  return HS_OK;
}

/* ------------------------------------------------------------------ LIMIT */

typedef struct limit_state {
  int64_t skipped; /* of the offset */
  int64_t emitted;
} limit_state;

static hs_status limit_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  limit_state *ls = op->state;
  const hs_sql_plan *p = op->plan;
  for (;;) {
    if (p->limit >= 0 && ls->emitted >= p->limit) return HS_OK;
    hs_sql_chunk in;
    hs_status st = hs_sql_op_next(op->kids[0], &in, err);
    if (st != HS_OK) return st;
    if (in.n == 0) {
      hs_sql_chunk_release(&in);
      return HS_OK;
    }
    int64_t from = 0;
    if (ls->skipped < p->offset) {
      int64_t skip = p->offset - ls->skipped;
      if (skip >= in.n) {
        ls->skipped += in.n;
        hs_sql_chunk_release(&in);
        continue;
      }
      from = skip;
      ls->skipped = p->offset;
    }
    int64_t len = in.n - from;
    if (p->limit >= 0 && len > p->limit - ls->emitted) len = p->limit - ls->emitted;
    if (from == 0 && len == in.n) {
      hs_sql_chunk_move(out, &in);
    } else {
      st = hs_sql_chunk_init(out, in.n_cols, len, err);
      for (int32_t c = 0; c < in.n_cols && st == HS_OK; c++)
        st = hs_sql_vec_slice(&out->cols[c], &in.cols[c], from, len, err);
      hs_sql_chunk_release(&in);
      if (st != HS_OK) {
        hs_sql_chunk_release(out);
        return st;
      }
    }
    ls->emitted += out->n;
    return HS_OK;
  }
}

static void free_state(hs_sql_op *op) {
  hs_free(op->state);
}

hs_status hs_sql_op_limit_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err) {
  (void)x, (void)p;
  op->state = hs_calloc(1, sizeof(limit_state));
  if (op->state == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  op->next = limit_next;
  op->free = free_state;
  return HS_OK;
}

/* ----------------------------------------------------------------- VALUES */

typedef struct once_state {
  bool done;
} once_state;

static hs_status values_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  once_state *os = op->state;
  const hs_sql_plan *p = op->plan;
  if (os->done) return HS_OK;
  os->done = true;
  int64_t n = p->values.n_rows;
  if (n == 0) return HS_OK;
  const hs_sql_evalctx *ctx = hs_sql_exec_evalctx(op->x);
  hs_status st = hs_sql_chunk_init(out, p->n_cols, n, err);
  if (st != HS_OK) return st;
  /* each column: one vector per row, concatenated */
  hs_sql_chunk one = {1, 0, NULL};
  hs_sql_vec *parts = hs_calloc((size_t)n, sizeof(hs_sql_vec));
  if (parts == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (int32_t c = 0; c < p->n_cols && st == HS_OK; c++) {
    int64_t r = 0;
    for (; r < n && st == HS_OK; r++)
      st = hs_sql_eval(p->values.rows[r][c], &one, ctx, &parts[r], err);
    if (st == HS_OK) st = hs_sql_vec_concat(&out->cols[c], parts, (size_t)n, err);
    for (int64_t k = 0; k < r; k++) hs_sql_vec_release(&parts[k]);
  }
  hs_free(parts);
  if (st != HS_OK) hs_sql_chunk_release(out);
  return st;
}

/* VALUES with no columns (SELECT without FROM): n rows of nothing. */
static hs_status values0_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  once_state *os = op->state;
  (void)err;
  if (os->done) return HS_OK;
  os->done = true;
  out->n = op->plan->values.n_rows;
  out->n_cols = 0;
  return HS_OK;
}

hs_status hs_sql_op_values_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op,
                                hs_error *err) {
  (void)x;
  op->state = hs_calloc(1, sizeof(once_state));
  if (op->state == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  op->next = p->n_cols == 0 ? values0_next : values_next;
  op->free = free_state;
  return HS_OK;
}

/* ------------------------------------------------------------------ UNION */

typedef struct union_state {
  int32_t at;
} union_state;

static hs_status union_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  union_state *us = op->state;
  while (us->at < op->n_many) {
    hs_sql_chunk in;
    hs_status st = hs_sql_op_next(op->many[us->at], &in, err);
    if (st != HS_OK) return st;
    if (in.n == 0) {
      hs_sql_chunk_release(&in);
      us->at++;
      continue;
    }
    hs_sql_chunk_move(out, &in);
    return HS_OK;
  }
  return HS_OK;
}

hs_status hs_sql_op_union_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err) {
  (void)x, (void)p;
  op->state = hs_calloc(1, sizeof(union_state));
  if (op->state == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  op->next = union_next;
  op->free = free_state;
  return HS_OK;
}

/* ----------------------------------------------------------------- SHARED */

typedef struct shared_state {
  size_t at;
} shared_state;

static hs_status shared_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  shared_state *ss = op->state;
  const hs_sql_chunk *chunks;
  size_t n;
  hs_status st = hs_sql_exec_shared(op->x, op->plan->shared.id, &chunks, &n, err);
  if (st != HS_OK || ss->at >= n) return st;
  const hs_sql_chunk *c = &chunks[ss->at++];
  st = hs_sql_chunk_init(out, c->n_cols, c->n, err);
  for (int32_t i = 0; i < c->n_cols && st == HS_OK; i++)
    st = hs_sql_vec_share(&out->cols[i], &c->cols[i], err);
  if (st != HS_OK) hs_sql_chunk_release(out);
  return st;
}

hs_status hs_sql_op_shared_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op,
                                hs_error *err) {
  (void)x, (void)p;
  op->state = hs_calloc(1, sizeof(shared_state));
  if (op->state == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  op->next = shared_next;
  op->free = free_state;
  return HS_OK;
}
