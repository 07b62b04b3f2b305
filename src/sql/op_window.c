/*
 * op_window.c — window functions: row_number, rank, dense_rank and
 * aggregates OVER (PARTITION BY ... ORDER BY ...), appended to the input's
 * columns in the input's row order.
 *
 * The input is drained and concatenated; per call its rows are ordered by
 * (partition keys, order keys) with the stable sort of op_sort.c, and the
 * ordered rows are walked partition by partition. Frames are PostgreSQL's
 * defaults: with ORDER BY, RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT
 * ROW (a row sees its whole peer group, i.e. rows equal on the order
 * keys); without ORDER BY (or `whole`), the whole partition. Aggregates
 * run incrementally: one state per partition, updated a peer group at a
 * time over slices of the argument vectors taken in sorted order, and
 * finalized for each row of the peer group. FILTER (WHERE ...) drops rows
 * before that; DISTINCT is refused, as in PostgreSQL.
 *
 * ntile, percent_rank and cume_dist read the partition's size and the peer
 * groups as rank does. The value functions (lag, lead, first_value,
 * last_value, nth_value) pick, per row, the row of the partition whose
 * argument they return (an input row, the row's own default, or none:
 * NULL) and gather the argument once through those indices (the default
 * frame ends at the peer group's end, as for aggregates).
 */
#include <string.h>

#include "op_sort.h"

#define HS_WIN_CHUNK 4096

typedef struct win_state {
  hs_sql_exec *x;
  int32_t n_in;
  hs_sql_chunk all;    /* the input */
  hs_sql_vec *results; /* per call, all.n rows */
  hs_arena arena;      /* aggregates' variable memory */
  int64_t reserved;
  bool built;
  int64_t pos;
} win_state;

static hs_status reserve(win_state *s, int64_t bytes, hs_error *err) {
  hs_status st = hs_sql_exec_reserve(s->x, bytes, "window", err);
  if (st == HS_OK) s->reserved += bytes;
  return st;
}

/* A borrowed view of rows [off, off + len) of v (no references held). */
static void view_of(const hs_sql_vec *v, int64_t off, int64_t len, hs_sql_vec *out) {
  memset(out, 0, sizeof *out);
  out->type = v->type;
  out->n = len;
  size_t w = hs_sql_vec_width(v->type);
  out->data = v->data != NULL ? (const uint8_t *)v->data + (size_t)off * w : NULL;
  out->valid = v->valid != NULL ? v->valid + off : NULL;
}

static hs_status drain_input(hs_sql_op *op, win_state *s, hs_error *err) {
  hs_sql_chunk *chunks = NULL;
  size_t n = 0;
  hs_status st = hs_sql_op_drain(op->kids[0], &chunks, &n, err);
  int64_t rows = 0;
  for (size_t i = 0; i < n && st == HS_OK; i++) {
    rows += chunks[i].n;
    st = reserve(s, hs_sql_chunk_bytes(&chunks[i]), err);
  }
  if (st == HS_OK) st = hs_sql_chunk_init(&s->all, s->n_in, rows, err);
  if (st == HS_OK) s->all.n = rows;
  hs_sql_vec *parts = hs_malloc((n ? n : 1) * sizeof *parts);
  if (parts == NULL && st == HS_OK) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory in window");
  size_t used = 0;
  for (size_t i = 0; i < n; i++)
    if (chunks[i].n > 0)
      chunks[used++] = chunks[i];
    else
      hs_sql_chunk_release(&chunks[i]);
  for (int32_t k = 0; k < s->n_in && st == HS_OK && used > 0; k++) {
    for (size_t i = 0; i < used; i++) parts[i] = chunks[i].cols[k];
    hs_sql_vec_release(&s->all.cols[k]);
    st = hs_sql_vec_concat(&s->all.cols[k], parts, used, err);
  }
  hs_free(parts);
  for (size_t i = 0; i < used; i++) hs_sql_chunk_release(&chunks[i]);
  hs_free(chunks);
  return st;
}

/* Move the string bytes of rows whose results borrow from aggregate
 * states into a buffer (offsets in off[]), before the states change. */
static hs_status stash_strings(hs_sql_vec *out, const int64_t *perm, int64_t from, int64_t to,
                               hs_buf *bytes, int64_t *off, hs_error *err) {
  hs_sql_str *d = hs_sql_vec_mut_data(out);
  for (int64_t j = from; j < to; j++) {
    int64_t r = perm[j];
    if (!hs_sql_vec_valid(out, r)) continue;
    off[r] = (int64_t)bytes->len;
    if (d[r].len > 0 && !hs_buf_append(bytes, d[r].ptr, d[r].len))
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory in window");
  }
  return HS_OK;
}

static hs_status unstash_strings(hs_sql_vec *out, const hs_buf *bytes, const int64_t *off,
                                 hs_error *err) {
  hs_sql_str *d = hs_sql_vec_mut_data(out);
  char *base = NULL;
  if (bytes->len > 0) {
    base = hs_sql_vec_add_bytes(out, bytes->len, err);
    if (base == NULL) return err != NULL && err->status ? err->status : HS_ERR_NOMEM;
    memcpy(base, bytes->data, bytes->len);
  }
  for (int64_t r = 0; r < out->n; r++)
    if (hs_sql_vec_valid(out, r) && d[r].len > 0) d[r].ptr = base + off[r];
  return HS_OK;
}

/* Row r of an int8 vector; *null when it is NULL (a NULLTYPE vector is
 * NULL everywhere; v NULL: no argument, never NULL). */
static int64_t int_at(const hs_sql_vec *v, int64_t r, bool *null) {
  *null = v != NULL && !hs_sql_vec_valid(v, r);
  return v == NULL || *null ? 0 : ((const int64_t *)v->data)[r];
}

/* The row a value function returns for sorted position j of partition
 * [ps, pe) whose frame ends at fe: an index into the argument (< n), into
 * its defaults (n + row), or -1 (NULL). `off` is lag/lead's offset or
 * nth_value's n (NULL: none given). */
static hs_status value_source(hs_sql_winfn fn, const int64_t *perm, int64_t n, int64_t j,
                              int64_t ps, int64_t pe, int64_t fe, const hs_sql_vec *off,
                              bool has_default, int64_t *src, hs_error *err) {
  int64_t r = perm[j];
  bool null = false;
  __int128 t;
  switch (fn) {
  case HS_SW_LAG:
  case HS_SW_LEAD: {
    int64_t o = off != NULL ? int_at(off, r, &null) : 1;
    if (null) {
      *src = -1; /* a NULL offset: NULL */
      return HS_OK;
    }
    t = fn == HS_SW_LAG ? (__int128)j - o : (__int128)j + o;
    *src = t >= ps && t < pe ? perm[(int64_t)t] : has_default ? n + r : -1;
    return HS_OK;
  }
  case HS_SW_FIRST_VALUE: *src = perm[ps]; return HS_OK;
  case HS_SW_LAST_VALUE: *src = perm[fe - 1]; return HS_OK;
  default: { /* HS_SW_NTH_VALUE */
    int64_t k = int_at(off, r, &null);
    if (null) {
      *src = -1;
      return HS_OK;
    }
    if (k <= 0)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "argument of nth_value must be greater than zero");
    t = (__int128)ps + k - 1;
    *src = t < fe ? perm[(int64_t)t] : -1;
    return HS_OK;
  }
  }
}

/* A value function's results: its argument gathered at src[] (rows
 * [n, 2n) being the defaults when lag/lead has one). */
static hs_status value_gather(const hs_sql_wincall *w, const hs_sql_chunk *in,
                              const hs_sql_evalctx *ctx, const int64_t *src, hs_sql_vec *res,
                              hs_error *err) {
  if (in->n == 0) return hs_sql_vec_alloc(res, w->agg.m.ret, 0, true, err); /* no input */
  hs_sql_vec parts[2];
  memset(parts, 0, sizeof parts);
  bool def = w->fn <= HS_SW_LEAD && w->agg.n_args == 3;
  hs_status st = hs_sql_eval(w->agg.args[0], in, ctx, &parts[0], err);
  if (st == HS_OK && def) st = hs_sql_eval(w->agg.args[2], in, ctx, &parts[1], err);
  hs_sql_vec both = {0};
  if (st == HS_OK && def) st = hs_sql_vec_concat(&both, parts, 2, err);
  if (st == HS_OK) st = hs_sql_vec_take(res, def ? &both : &parts[0], src, in->n, err);
  hs_sql_vec_release(&both);
  hs_sql_vec_release(&parts[0]);
  hs_sql_vec_release(&parts[1]);
  return st;
}

/* Compute call `c` into s->results[c]. */
static hs_status compute_call(const hs_sql_plan *p, win_state *s, int32_t c, hs_error *err) {
  const hs_sql_wincall *w = &p->window.calls[c];
  const hs_sql_evalctx *ctx = hs_sql_exec_evalctx(s->x);
  const hs_sql_chunk *in = &s->all;
  int64_t n = in->n;
  int32_t np = w->n_partition, no = w->n_order, nk = np + no;
  bool is_agg = w->fn == HS_SW_AGG, is_value = w->fn >= HS_SW_LAG;
  bool is_float = w->fn == HS_SW_PERCENT_RANK || w->fn == HS_SW_CUME_DIST;
  const hs_sql_aggcall *call = &w->agg;
  const hs_sql_agg *agg = is_agg ? call->m.agg : NULL;
  hs_sql_type ret =
      is_agg || is_value ? call->m.ret : hs_sql_type_of(is_float ? HS_SQL_FLOAT64 : HS_SQL_INT64);
  hs_sql_vec *res = &s->results[c];
  if (is_agg && call->distinct)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "DISTINCT is not implemented for window functions");
  if (is_agg && call->n_args > HS_SQL_FN_ARGS_MAX)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "aggregate with %d arguments", (int)call->n_args);
  /* value functions gather into res at the end; ntile's may be NULL */
  hs_status st =
      is_value ? HS_OK : hs_sql_vec_alloc(res, ret, n, is_agg || w->fn == HS_SW_NTILE, err);
  if (st != HS_OK) return st;
  st = reserve(s, (int64_t)(hs_sql_vec_width(ret) + 1) * n, err);
  if (st != HS_OK) return st;
  /* while the call runs: keys, perm, diff, the sort's buffers, sorted arguments */
  int64_t transient = 96 * n;
  st = reserve(s, transient, err);
  if (st != HS_OK) return st;

  hs_sql_vec *keys = hs_calloc((size_t)(nk > 0 ? nk : 1), sizeof *keys);
  hs_sql_sortcol *cols = hs_calloc((size_t)(nk > 0 ? nk : 1), sizeof *cols);
  int64_t *perm = hs_malloc((size_t)(n > 0 ? n : 1) * sizeof *perm);
  int32_t *diff = hs_malloc((size_t)(n > 0 ? n : 1) * sizeof *diff);
  hs_sql_vec args[HS_SQL_FN_ARGS_MAX], sorted[HS_SQL_FN_ARGS_MAX];
  memset(args, 0, sizeof args);
  memset(sorted, 0, sizeof sorted);
  int32_t na = is_agg ? call->n_args : 0;
  void *state = NULL;
  uint32_t *zeros = NULL;
  int64_t *cpos = NULL; /* per sorted position: rows of the filtered args before it */
  int64_t *soff = NULL;
  hs_buf sbytes;
  hs_buf_init(&sbytes);
  hs_sql_vec iarg = {0}; /* ntile's buckets, lag/lead/nth_value's offset */
  const hs_sql_vec *ia = NULL;
  int64_t *vsrc = NULL; /* value functions: the row each row returns */
  bool has_default = is_value && w->fn <= HS_SW_LEAD && call->n_args == 3;
  bool strings = is_agg && hs_sql_type_is_string(ret.id);
  if (keys == NULL || cols == NULL || perm == NULL || diff == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory in window");
    goto done;
  }
  for (int32_t k = 0; k < nk && st == HS_OK; k++) {
    const hs_sql_expr *e = k < np ? w->partition[k] : w->order[k - np].expr;
    st = hs_sql_eval(e, in, ctx, &keys[k], err);
    cols[k].v = &keys[k];
    cols[k].desc = k < np ? false : w->order[k - np].desc;
    cols[k].nulls_first = k < np ? false : w->order[k - np].nulls_first;
  }
  if (st == HS_OK) st = hs_sql_sort_perm(cols, nk, n, perm, diff, err);
  if (st != HS_OK) goto done;
  int32_t ia_at = w->fn == HS_SW_NTILE ? 0 : is_value && call->n_args >= 2 ? 1 : -1;
  if (ia_at >= 0) {
    if ((st = hs_sql_eval(call->args[ia_at], in, ctx, &iarg, err)) != HS_OK) goto done;
    ia = &iarg; /* a NULLTYPE vector reads as NULL at every row */
  }
  if (is_value && (vsrc = hs_malloc((size_t)(n > 0 ? n : 1) * sizeof *vsrc)) == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory in window");
    goto done;
  }

  int64_t n_used = n; /* rows the aggregate sees, in sorted order */
  if (is_agg) {
    int64_t *sel = perm;
    int64_t *fsel = NULL;
    cpos = hs_malloc((size_t)(n + 1) * sizeof *cpos);
    zeros = hs_calloc((size_t)(n > 0 ? n : 1), sizeof *zeros);
    state = hs_calloc(1, agg->state_size > 0 ? agg->state_size : 1);
    if (strings) soff = hs_calloc((size_t)(n > 0 ? n : 1), sizeof *soff);
    if (cpos == NULL || zeros == NULL || state == NULL || (strings && soff == NULL)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "out of memory in window");
      goto done;
    }
    if (call->filter != NULL) {
      hs_sql_vec f = {0};
      st = hs_sql_eval(call->filter, in, ctx, &f, err);
      fsel = hs_malloc((size_t)(n > 0 ? n : 1) * sizeof *fsel);
      if (st == HS_OK && fsel == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      if (st == HS_OK) {
        const uint8_t *fd = f.data;
        n_used = 0;
        for (int64_t j = 0; j < n; j++) {
          cpos[j] = n_used;
          int64_t r = perm[j];
          if (hs_sql_vec_valid(&f, r) && fd[r]) fsel[n_used++] = r;
        }
        cpos[n] = n_used;
        sel = fsel;
      }
      hs_sql_vec_release(&f);
    } else {
      for (int64_t j = 0; j <= n; j++) cpos[j] = j;
    }
    for (int32_t k = 0; k < na && st == HS_OK; k++) {
      st = hs_sql_eval(call->args[k], in, ctx, &args[k], err);
      if (st == HS_OK) st = hs_sql_vec_take(&sorted[k], &args[k], sel, n_used, err);
      hs_sql_vec_release(&args[k]);
    }
    hs_free(fsel);
    if (st != HS_OK) goto done;
  }

  int64_t *rd = is_agg || is_value ? NULL : hs_sql_vec_mut_data(res);
  for (int64_t ps = 0; ps < n && st == HS_OK;) {
    int64_t pe = ps + 1;
    while (pe < n && diff[pe] >= np) pe++;
    if (is_agg) {
      memset(state, 0, agg->state_size);
      agg->init(state, call->m.cast_to, ret);
    }
    bool running = is_agg && no > 0 && !w->whole;
    int64_t rank = 0, dense = 0;
    for (int64_t gs = ps; gs < pe && st == HS_OK;) {
      /* peer group [gs, ge) (the whole partition for a whole-partition frame) */
      int64_t ge = gs + 1;
      if (is_agg && !running)
        ge = pe;
      else
        while (ge < pe && diff[ge] >= nk) ge++;
      if (is_agg) {
        int64_t from = cpos[gs], len = cpos[ge] - cpos[gs];
        if (len > 0) {
          hs_sql_vec v[HS_SQL_FN_ARGS_MAX];
          for (int32_t k = 0; k < na; k++) view_of(&sorted[k], from, len, &v[k]);
          st = agg->update(agg, state, zeros, v, len, &s->arena, err);
        }
        for (int64_t j = gs; j < ge && st == HS_OK; j++)
          st = agg->final(agg, state, ret, res, perm[j], err);
        if (st == HS_OK && strings) st = stash_strings(res, perm, gs, ge, &sbytes, soff, err);
      } else if (is_value) {
        int64_t fe = no > 0 && !w->whole ? ge : pe; /* the frame's end */
        for (int64_t j = gs; j < ge && st == HS_OK; j++)
          st = value_source(w->fn, perm, n, j, ps, pe, fe, ia, has_default, &vsrc[perm[j]], err);
      } else {
        dense++;
        rank = gs - ps + 1;
        int64_t rows = pe - ps;
        for (int64_t j = gs; j < ge && st == HS_OK; j++) {
          int64_t r = perm[j];
          if (is_float) {
            double *fd = (double *)rd;
            fd[r] = w->fn == HS_SW_CUME_DIST ? (double)(ge - ps) / (double)rows
                    : rows > 1               ? (double)(rank - 1) / (double)(rows - 1)
                                             : 0.0;
          } else if (w->fn == HS_SW_NTILE) {
            bool null = false;
            int64_t nb = int_at(ia, r, &null), k = j - ps;
            if (null) continue; /* validity stays 0: NULL */
            if (nb <= 0) {
              st = hs_error_set(err, HS_ERR_INVALID_ARG,
                                "argument of ntile must be greater than zero");
              break;
            }
            int64_t q = rows / nb, rem = rows % nb, big = rem * (q + 1);
            rd[r] = 1 + (k < big ? k / (q + 1) : rem + (k - big) / q);
            hs_sql_vec_mut_valid(res)[r] = 1;
          } else {
            rd[r] = w->fn == HS_SW_ROW_NUMBER ? j - ps + 1 : w->fn == HS_SW_RANK ? rank : dense;
          }
        }
      }
      gs = ge;
    }
    ps = pe;
  }
  if (st == HS_OK && strings) st = unstash_strings(res, &sbytes, soff, err);
  if (st == HS_OK && is_value) st = value_gather(w, in, ctx, vsrc, res, err);
done:
  hs_sql_vec_release(&iarg);
  hs_free(vsrc);
  hs_sql_exec_reserve(s->x, -transient, "window", NULL);
  s->reserved -= transient;
  for (int32_t k = 0; k < nk && keys != NULL; k++) hs_sql_vec_release(&keys[k]);
  for (int32_t k = 0; k < na; k++) {
    hs_sql_vec_release(&args[k]);
    hs_sql_vec_release(&sorted[k]);
  }
  hs_free(keys);
  hs_free(cols);
  hs_free(perm);
  hs_free(diff);
  hs_free(state);
  hs_free(zeros);
  hs_free(cpos);
  hs_free(soff);
  hs_buf_free(&sbytes);
  return st;
}

static hs_status build(hs_sql_op *op, win_state *s, hs_error *err) {
  const hs_sql_plan *p = op->plan;
  hs_status st = drain_input(op, s, err);
  for (int32_t c = 0; c < p->window.n_calls && st == HS_OK; c++) {
    st = hs_sql_op_check_cancel(s->x, err);
    if (st == HS_OK) st = compute_call(p, s, c, err);
  }
  s->built = true;
  return st;
}

static hs_status win_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  win_state *s = op->state;
  const hs_sql_plan *p = op->plan;
  hs_status st;
  if (!s->built) {
    st = build(op, s, err);
    if (st != HS_OK) return st;
  }
  int32_t nc = s->n_in + p->window.n_calls;
  if (s->pos >= s->all.n) return hs_sql_chunk_init(out, nc, 0, err);
  int64_t len = s->all.n - s->pos;
  if (len > HS_WIN_CHUNK) len = HS_WIN_CHUNK;
  st = hs_sql_chunk_init(out, nc, len, err);
  if (st != HS_OK) return st;
  out->n = len;
  for (int32_t k = 0; k < nc && st == HS_OK; k++) {
    const hs_sql_vec *src = k < s->n_in ? &s->all.cols[k] : &s->results[k - s->n_in];
    hs_sql_vec_release(&out->cols[k]);
    st = hs_sql_vec_slice(&out->cols[k], src, s->pos, len, err);
  }
  if (st != HS_OK) {
    hs_sql_chunk_release(out);
    return st;
  }
  s->pos += len;
  return HS_OK;
}

static void win_free(hs_sql_op *op) {
  win_state *s = op->state;
  if (s == NULL) return;
  hs_sql_chunk_release(&s->all);
  if (s->results != NULL)
    for (int32_t c = 0; c < op->plan->window.n_calls; c++) hs_sql_vec_release(&s->results[c]);
  hs_free(s->results);
  hs_arena_reset(&s->arena);
  if (s->reserved) hs_sql_exec_reserve(s->x, -s->reserved, "window", NULL);
  hs_free(s);
  op->state = NULL;
}

hs_status hs_sql_op_window_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op,
                                hs_error *err) {
  win_state *s = hs_calloc(1, sizeof *s);
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory opening window");
  op->state = s;
  op->next = win_next;
  op->free = win_free;
  s->x = x;
  s->n_in = p->kids[0] != NULL ? p->kids[0]->n_cols : p->n_cols - p->window.n_calls;
  hs_arena_init(&s->arena);
  s->results =
      hs_calloc((size_t)(p->window.n_calls > 0 ? p->window.n_calls : 1), sizeof *s->results);
  if (s->results == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory opening window");
  return HS_OK;
}
