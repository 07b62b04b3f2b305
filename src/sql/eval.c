/*
 * eval.c — vectorized evaluation of bound SQL expressions (expr.h).
 *
 * Every node turns its input chunk into one vector of its type. Kernels
 * (func.h) do the work of operators and functions; this file does the
 * control flow: boolean three-valued logic, NULL tests, and the lazy forms
 * CASE and COALESCE, whose branches are evaluated only on the rows that
 * reach them (so `CASE WHEN x = 0 THEN 0 ELSE 1 / x END` never divides by
 * zero), by evaluating on a gathered sub-chunk and scattering back.
 */
#include <string.h>

#include "func_tables.h"

static hs_status eval(const hs_sql_expr *e, const hs_sql_chunk *in, const hs_sql_evalctx *ctx,
                      hs_sql_vec *out, hs_error *err);

hs_sql_expr *hs_sql_expr_new(hs_arena *arena, hs_sql_expr_kind kind, hs_sql_type type,
                             int32_t pos) {
  hs_sql_expr *e = hs_arena_alloc(arena, sizeof(*e));
  if (e == NULL) return NULL;
  e->kind = kind;
  e->type = type;
  e->pos = pos;
  e->value.type = type;
  return e;
}

bool hs_sql_expr_has_volatile(const hs_sql_expr *e) {
  if (e->kind == HS_SX_FUNC && e->fn != NULL && e->fn->volatile_) return true;
  for (int32_t i = 0; i < e->n_args; i++)
    if (hs_sql_expr_has_volatile(e->args[i])) return true;
  return false;
}

/* Column c of the copy: map[c], c + shift, or (swap) the other side's. */
static hs_sql_expr *copy_cols(hs_arena *arena, const hs_sql_expr *e, const int32_t *map,
                              int32_t shift, bool swap, int32_t nl, int32_t nr) {
  hs_sql_expr *c = hs_arena_memdup(arena, e, sizeof(*e));
  if (c == NULL) return NULL;
  if (e->kind == HS_SX_COL)
    c->col = swap          ? (e->col < nl ? e->col + nr : e->col - nl)
             : map != NULL ? map[e->col]
                           : e->col + shift;
  if (e->n_args > 0) {
    c->args = hs_arena_alloc(arena, sizeof(hs_sql_expr *) * (size_t)e->n_args);
    if (c->args == NULL) return NULL;
    for (int32_t i = 0; i < e->n_args; i++)
      if ((c->args[i] = copy_cols(arena, e->args[i], map, shift, swap, nl, nr)) == NULL)
        return NULL;
  }
  return c;
}

hs_sql_expr *hs_sql_expr_remap(hs_arena *arena, const hs_sql_expr *e, const int32_t *map,
                               int32_t shift) {
  return copy_cols(arena, e, map, shift, false, 0, 0);
}

hs_sql_expr *hs_sql_expr_swap_sides(hs_arena *arena, const hs_sql_expr *e, int32_t nl, int32_t nr) {
  return copy_cols(arena, e, NULL, 0, true, nl, nr);
}

bool hs_sql_expr_is_const(const hs_sql_expr *e) {
  if (e->kind == HS_SX_COL) return false;
  if (e->kind == HS_SX_FUNC && e->fn != NULL && e->fn->volatile_) return false;
  for (int32_t i = 0; i < e->n_args; i++)
    if (!hs_sql_expr_is_const(e->args[i])) return false;
  return true;
}

bool hs_sql_expr_has_param(const hs_sql_expr *e) {
  if (e == NULL) return false;
  if (e->kind == HS_SX_PARAM) return true;
  for (int32_t i = 0; i < e->n_args; i++)
    if (hs_sql_expr_has_param(e->args[i])) return true;
  return false;
}

hs_status hs_sql_expr_cast(hs_arena *arena, hs_sql_expr *e, hs_sql_type t, hs_sql_expr **out,
                           hs_error *err) {
  if (hs_sql_type_eq(e->type, t)) {
    *out = e;
    return HS_OK;
  }
  if (e->type.id != HS_SQL_NULLTYPE && !hs_sql_cast_exists(e->type, t)) {
    char a[64], b[64];
    return hs_error_set(err, HS_ERR_INVALID_ARG, "at position %d: cannot cast type %s to %s",
                        e->pos, hs_sql_type_name(e->type, a, sizeof a),
                        hs_sql_type_name(t, b, sizeof b));
  }
  hs_sql_expr *c = hs_sql_expr_new(arena, HS_SX_CAST, t, e->pos);
  hs_sql_expr **args = hs_arena_alloc(arena, sizeof(*args));
  if (c == NULL || args == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  args[0] = e;
  c->args = args;
  c->n_args = 1;
  *out = c;
  return HS_OK;
}

/* ------------------------------------------------------------ helpers */

static hs_status null_vec(hs_sql_vec *out, hs_sql_type t, int64_t n, hs_error *err) {
  return hs_sql_vec_alloc(out, t, n, true, err);
}

static bool is_true(const hs_sql_vec *v, int64_t i) {
  return hs_sql_vec_valid(v, i) && ((const uint8_t *)v->data)[i] != 0;
}

/* Rows of `in` at sel[0..n) as a chunk. Columns that are placeholders
 * (fewer rows than the chunk: an operator materializes only the columns
 * an expression reads, e.g. a join's residual) stay empty. */
static hs_status sub_chunk(const hs_sql_chunk *in, const int64_t *sel, int64_t n, hs_sql_chunk *out,
                           hs_error *err) {
  hs_status st = hs_sql_chunk_init(out, in->n_cols, n, err);
  for (int32_t c = 0; c < in->n_cols && st == HS_OK; c++) {
    if (in->cols[c].n < in->n) continue;
    st = hs_sql_vec_take(&out->cols[c], &in->cols[c], sel, n, err);
  }
  if (st != HS_OK) hs_sql_chunk_release(out);
  return st;
}

/* out[rows[i]] = src[i] for i < n (out of the same type, nullable, built
 * by the caller); src's blobs are held by out. */
static hs_status scatter(hs_sql_vec *out, const hs_sql_vec *src, const int64_t *rows, int64_t n,
                         hs_error *err) {
  if (src->type.id == HS_SQL_NULLTYPE || n == 0) return HS_OK;
  size_t w = hs_sql_vec_width(out->type);
  uint8_t *d = hs_sql_vec_mut_data(out);
  uint8_t *v = hs_sql_vec_mut_valid(out);
  const uint8_t *s = src->data;
  for (int64_t i = 0; i < n; i++) {
    if (!hs_sql_vec_valid(src, i)) continue;
    memcpy(d + (size_t)rows[i] * w, s + (size_t)i * w, w);
    v[rows[i]] = 1;
  }
  int32_t nr = src->n_refs;
  hs_sql_blob *const *refs = nr <= HS_SQL_VEC_REFS_INLINE ? src->refs_inline : src->refs_heap;
  for (int32_t i = 0; i < nr; i++) {
    hs_status st = hs_sql_vec_hold(out, refs[i], err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

static hs_status check_cancel(const hs_sql_evalctx *ctx, hs_error *err) {
  if (ctx != NULL && ctx->cancel != NULL && *ctx->cancel)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "query cancelled");
  return HS_OK;
}

/* ------------------------------------------------------------ boolean */

/* AND / OR over n >= 2 boolean args, three-valued. */
static hs_status eval_andor(const hs_sql_expr *e, const hs_sql_chunk *in, const hs_sql_evalctx *ctx,
                            hs_sql_vec *out, hs_error *err) {
  bool is_and = e->kind == HS_SX_AND;
  int64_t n = in->n;
  hs_status st = hs_sql_vec_alloc(out, hs_sql_type_of(HS_SQL_BOOL), n, true, err);
  if (st != HS_OK) return st;
  uint8_t *d = hs_sql_vec_mut_data(out), *v = hs_sql_vec_mut_valid(out);
  /* start from the identity: TRUE for AND, FALSE for OR */
  memset(d, is_and ? 1 : 0, (size_t)n);
  memset(v, 1, (size_t)n);
  for (int32_t k = 0; k < e->n_args; k++) {
    hs_sql_vec a = {0};
    st = eval(e->args[k], in, ctx, &a, err);
    if (st != HS_OK) return st;
    const uint8_t *ad = a.data, *av = a.valid;
    bool all_null = a.type.id == HS_SQL_NULLTYPE;
    for (int64_t i = 0; i < n; i++) {
      bool known = !all_null && (av == NULL || av[i]);
      if (is_and) {
        /* FALSE dominates; UNKNOWN stays unless FALSE */
        if (known && !ad[i]) {
          d[i] = 0;
          v[i] = 1;
        } else if (!known && !(v[i] && !d[i])) {
          v[i] = 0;
        }
      } else {
        if (known && ad[i]) {
          d[i] = 1;
          v[i] = 1;
        } else if (!known && !(v[i] && d[i])) {
          v[i] = 0;
        }
      }
    }
    hs_sql_vec_release(&a);
  }
  return HS_OK;
}

static hs_status eval_not(const hs_sql_expr *e, const hs_sql_chunk *in, const hs_sql_evalctx *ctx,
                          hs_sql_vec *out, hs_error *err) {
  hs_sql_vec a = {0};
  hs_status st = eval(e->args[0], in, ctx, &a, err);
  if (st != HS_OK) return st;
  int64_t n = in->n;
  if (a.type.id == HS_SQL_NULLTYPE) {
    hs_sql_vec_release(&a);
    return null_vec(out, hs_sql_type_of(HS_SQL_BOOL), n, err);
  }
  st = hs_sql_vec_alloc(out, hs_sql_type_of(HS_SQL_BOOL), n, a.valid != NULL, err);
  if (st == HS_OK) {
    uint8_t *d = hs_sql_vec_mut_data(out);
    const uint8_t *ad = a.data;
    for (int64_t i = 0; i < n; i++) d[i] = !ad[i];
    if (a.valid != NULL) memcpy(hs_sql_vec_mut_valid(out), a.valid, (size_t)n);
  }
  hs_sql_vec_release(&a);
  return st;
}

static hs_status eval_isnull(const hs_sql_expr *e, const hs_sql_chunk *in,
                             const hs_sql_evalctx *ctx, hs_sql_vec *out, hs_error *err) {
  hs_sql_vec a = {0};
  hs_status st = eval(e->args[0], in, ctx, &a, err);
  if (st != HS_OK) return st;
  int64_t n = in->n;
  st = hs_sql_vec_alloc(out, hs_sql_type_of(HS_SQL_BOOL), n, false, err);
  if (st == HS_OK) {
    uint8_t *d = hs_sql_vec_mut_data(out);
    for (int64_t i = 0; i < n; i++) d[i] = (uint8_t)(hs_sql_vec_valid(&a, i) == e->negated);
  }
  hs_sql_vec_release(&a);
  return st;
}

static hs_status eval_booltest(const hs_sql_expr *e, const hs_sql_chunk *in,
                               const hs_sql_evalctx *ctx, hs_sql_vec *out, hs_error *err) {
  hs_sql_vec a = {0};
  hs_status st = eval(e->args[0], in, ctx, &a, err);
  if (st != HS_OK) return st;
  int64_t n = in->n;
  st = hs_sql_vec_alloc(out, hs_sql_type_of(HS_SQL_BOOL), n, false, err);
  if (st == HS_OK) {
    uint8_t *d = hs_sql_vec_mut_data(out);
    for (int64_t i = 0; i < n; i++) {
      int tv = !hs_sql_vec_valid(&a, i) ? -1 : ((const uint8_t *)a.data)[i] ? 1 : 0;
      d[i] = (uint8_t)((tv == e->which) != e->negated);
    }
  }
  hs_sql_vec_release(&a);
  return st;
}

/* ------------------------------------------------------- lazy branches */

/* CASE WHEN c1 THEN v1 ... [ELSE d] END: each condition is evaluated on the
 * rows no earlier condition took, each value on the rows its condition
 * took. */
static hs_status eval_case(const hs_sql_expr *e, const hs_sql_chunk *in, const hs_sql_evalctx *ctx,
                           hs_sql_vec *out, hs_error *err) {
  int64_t n = in->n;
  hs_status st = null_vec(out, e->type, n, err);
  if (st != HS_OK) return st;
  int64_t *rows = hs_malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  int64_t *take = hs_malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  int64_t *back = hs_malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  if (rows == NULL || take == NULL || back == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory evaluating CASE");
    goto done;
  }
  int64_t n_rows = n; /* rows still undecided, as indices into `in` */
  for (int64_t i = 0; i < n; i++) rows[i] = i;
  int32_t n_when = (e->n_args - (e->has_else ? 1 : 0)) / 2;
  for (int32_t w = 0; w < n_when && n_rows > 0; w++) {
    hs_sql_chunk sub = {0};
    bool whole = n_rows == n;
    if (!whole && (st = sub_chunk(in, rows, n_rows, &sub, err)) != HS_OK) goto done;
    const hs_sql_chunk *src = whole ? in : &sub;
    hs_sql_vec c = {0};
    st = eval(e->args[2 * w], src, ctx, &c, err);
    if (st != HS_OK) {
      hs_sql_chunk_release(&sub);
      goto done;
    }
    int64_t n_take = 0, n_left = 0;
    for (int64_t i = 0; i < n_rows; i++) {
      if (is_true(&c, i)) {
        take[n_take] = i;
        back[n_take++] = rows[i];
      } else {
        rows[n_left++] = rows[i];
      }
    }
    hs_sql_vec_release(&c);
    if (n_take > 0) {
      hs_sql_chunk vsub = {0};
      if ((st = sub_chunk(src, take, n_take, &vsub, err)) == HS_OK) {
        hs_sql_vec v = {0};
        if ((st = eval(e->args[2 * w + 1], &vsub, ctx, &v, err)) == HS_OK)
          st = scatter(out, &v, back, n_take, err);
        hs_sql_vec_release(&v);
      }
      hs_sql_chunk_release(&vsub);
    }
    hs_sql_chunk_release(&sub);
    if (st != HS_OK) goto done;
    n_rows = n_left;
  }
  if (e->has_else && n_rows > 0) {
    hs_sql_chunk sub = {0};
    bool whole = n_rows == n;
    if (!whole && (st = sub_chunk(in, rows, n_rows, &sub, err)) != HS_OK) goto done;
    hs_sql_vec v = {0};
    if ((st = eval(e->args[e->n_args - 1], whole ? in : &sub, ctx, &v, err)) == HS_OK)
      st = scatter(out, &v, rows, n_rows, err);
    hs_sql_vec_release(&v);
    hs_sql_chunk_release(&sub);
  }
done:
  hs_free(rows);
  hs_free(take);
  hs_free(back);
  if (st != HS_OK) hs_sql_vec_release(out);
  return st;
}

/* COALESCE(a, b, ...): each argument on the rows still NULL. */
static hs_status eval_coalesce(const hs_sql_expr *e, const hs_sql_chunk *in,
                               const hs_sql_evalctx *ctx, hs_sql_vec *out, hs_error *err) {
  int64_t n = in->n;
  hs_status st = null_vec(out, e->type, n, err);
  if (st != HS_OK) return st;
  int64_t *rows = hs_malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  int64_t *back = hs_malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  if (rows == NULL || back == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory evaluating COALESCE");
    goto done;
  }
  int64_t n_rows = n;
  for (int64_t i = 0; i < n; i++) rows[i] = i;
  for (int32_t k = 0; k < e->n_args && n_rows > 0; k++) {
    hs_sql_chunk sub = {0};
    bool whole = n_rows == n;
    if (!whole && (st = sub_chunk(in, rows, n_rows, &sub, err)) != HS_OK) goto done;
    hs_sql_vec v = {0};
    st = eval(e->args[k], whole ? in : &sub, ctx, &v, err);
    if (st == HS_OK) st = scatter(out, &v, rows, n_rows, err);
    int64_t n_left = 0;
    if (st == HS_OK)
      for (int64_t i = 0; i < n_rows; i++)
        if (!hs_sql_vec_valid(&v, i)) rows[n_left++] = rows[i];
    hs_sql_vec_release(&v);
    hs_sql_chunk_release(&sub);
    if (st != HS_OK) goto done;
    n_rows = n_left;
  }
done:
  hs_free(rows);
  hs_free(back);
  if (st != HS_OK) hs_sql_vec_release(out);
  return st;
}

/* ---------------------------------------------------- calls and tests */

static hs_status eval_args(const hs_sql_expr *e, const hs_sql_chunk *in, const hs_sql_evalctx *ctx,
                           hs_sql_vec *args, hs_error *err) {
  for (int32_t k = 0; k < e->n_args; k++) {
    hs_status st = eval(e->args[k], in, ctx, &args[k], err);
    if (st != HS_OK) {
      for (int32_t j = 0; j < k; j++) hs_sql_vec_release(&args[j]);
      return st;
    }
  }
  return HS_OK;
}

static hs_status eval_func(const hs_sql_expr *e, const hs_sql_chunk *in, const hs_sql_evalctx *ctx,
                           hs_sql_vec *out, hs_error *err) {
  hs_sql_vec args[HS_SQL_FN_ARGS_MAX];
  hs_sql_vec *heap = NULL, *a = args;
  if (e->n_args > HS_SQL_FN_ARGS_MAX) {
    heap = hs_calloc((size_t)e->n_args, sizeof(hs_sql_vec));
    if (heap == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    a = heap;
  } else {
    memset(args, 0, sizeof args);
  }
  hs_status st = eval_args(e, in, ctx, a, err);
  if (st == HS_OK) {
    st = e->fn->kernel(e, a, e->n_args, in->n, e->type, out, err);
    for (int32_t k = 0; k < e->n_args; k++) hs_sql_vec_release(&a[k]);
  }
  hs_free(heap);
  return st;
}

/* Equality of two vectors through the node's "=" function. */
static hs_status eq_vec(const hs_sql_expr *e, const hs_sql_vec *a, const hs_sql_vec *b, int64_t n,
                        hs_sql_vec *out, hs_error *err) {
  hs_sql_vec args[2] = {*a, *b};
  return e->fn->kernel(e, args, 2, n, hs_sql_type_of(HS_SQL_BOOL), out, err);
}

static hs_status eval_nullif(const hs_sql_expr *e, const hs_sql_chunk *in,
                             const hs_sql_evalctx *ctx, hs_sql_vec *out, hs_error *err) {
  hs_sql_vec a[2];
  memset(a, 0, sizeof a);
  hs_status st = eval_args(e, in, ctx, a, err);
  if (st != HS_OK) return st;
  int64_t n = in->n;
  hs_sql_vec eq = {0};
  if ((st = eq_vec(e, &a[0], &a[1], n, &eq, err)) == HS_OK &&
      (st = null_vec(out, e->type, n, err)) == HS_OK) {
    int64_t *rows = hs_malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    hs_sql_vec sub = {0};
    if (rows == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    } else {
      int64_t k = 0;
      for (int64_t i = 0; i < n; i++)
        if (!is_true(&eq, i)) rows[k++] = i;
      if ((st = hs_sql_vec_take(&sub, &a[0], rows, k, err)) == HS_OK)
        st = scatter(out, &sub, rows, k, err);
    }
    hs_sql_vec_release(&sub);
    hs_free(rows);
  }
  hs_sql_vec_release(&eq);
  hs_sql_vec_release(&a[0]);
  hs_sql_vec_release(&a[1]);
  return st;
}

/* x IN (v1, ...): OR of x = vi, three-valued; NOT IN is its negation. */
static hs_status eval_in(const hs_sql_expr *e, const hs_sql_chunk *in, const hs_sql_evalctx *ctx,
                         hs_sql_vec *out, hs_error *err) {
  int64_t n = in->n;
  hs_sql_vec x = {0};
  hs_status st = eval(e->args[0], in, ctx, &x, err);
  if (st != HS_OK) return st;
  if ((st = hs_sql_vec_alloc(out, hs_sql_type_of(HS_SQL_BOOL), n, true, err)) != HS_OK) {
    hs_sql_vec_release(&x);
    return st;
  }
  uint8_t *d = hs_sql_vec_mut_data(out), *v = hs_sql_vec_mut_valid(out);
  memset(v, 1, (size_t)n); /* FALSE so far */
  for (int32_t k = 1; k < e->n_args && st == HS_OK; k++) {
    hs_sql_vec y = {0}, eq = {0};
    if ((st = eval(e->args[k], in, ctx, &y, err)) == HS_OK &&
        (st = eq_vec(e, &x, &y, n, &eq, err)) == HS_OK) {
      for (int64_t i = 0; i < n; i++) {
        if (d[i] && v[i]) continue; /* TRUE already */
        if (!hs_sql_vec_valid(&eq, i))
          v[i] = 0;
        else if (((const uint8_t *)eq.data)[i])
          d[i] = 1, v[i] = 1;
      }
    }
    hs_sql_vec_release(&y);
    hs_sql_vec_release(&eq);
  }
  if (st == HS_OK && e->negated)
    for (int64_t i = 0; i < n; i++) d[i] = !d[i];
  hs_sql_vec_release(&x);
  if (st != HS_OK) hs_sql_vec_release(out);
  return st;
}

static hs_status eval_like(const hs_sql_expr *e, const hs_sql_chunk *in, const hs_sql_evalctx *ctx,
                           hs_sql_vec *out, hs_error *err) {
  hs_sql_vec a[3], strict[3];
  memset(a, 0, sizeof a);
  int64_t n = in->n;
  /* A constant pattern or escape is one row, not a copy per input row
   * (a 16-byte string slot per row of every chunk); a NULL one makes
   * every row NULL. */
  bool konst[3] = {false, false, false}, null_const = false;
  int32_t n_strict = 0;
  hs_status st = HS_OK;
  for (int32_t k = 0; k < e->n_args && st == HS_OK; k++) {
    konst[k] = k > 0 && e->args[k]->kind == HS_SX_CONST;
    if (konst[k]) {
      null_const |= e->args[k]->value.is_null;
      st = hs_sql_vec_const(&a[k], &e->args[k]->value, 1, err);
    } else {
      st = eval(e->args[k], in, ctx, &a[k], err);
      strict[n_strict++] = a[k];
    }
  }
  if (st == HS_OK) st = hs_sql_vec_alloc(out, hs_sql_type_of(HS_SQL_BOOL), n, null_const, err);
  if (st == HS_OK && !null_const) st = hs_sql_fn_strict_valid(strict, n_strict, out, err);
  if (st == HS_OK && !null_const) {
    uint8_t *d = hs_sql_vec_mut_data(out);
    const hs_sql_str *s = a[0].data, *p = a[1].data, *es = e->n_args > 2 ? a[2].data : NULL;
    const int64_t pstep = konst[1] ? 0 : 1, estep = konst[2] ? 0 : 1;
    for (int64_t i = 0; i < n && st == HS_OK; i++) {
      if (!hs_sql_vec_valid(out, i)) continue;
      int esc = '\\';
      if (es != NULL) {
        const hs_sql_str *ei = &es[i * estep];
        if (ei->len == 0)
          esc = -1;
        else if (ei->len == 1)
          esc = (unsigned char)ei->ptr[0];
        else
          st = hs_error_set(err, HS_ERR_INVALID_ARG,
                            "at position %d: invalid escape string (must be empty or one "
                            "character)",
                            e->pos);
      }
      if (st == HS_OK) {
        const hs_sql_str *pi = &p[i * pstep];
        if (esc >= 0 && pi->len > 0) {
          /* a trailing escape is an error in PostgreSQL */
          size_t j = 0;
          bool bad = false;
          while (j < pi->len) {
            if ((unsigned char)pi->ptr[j] == esc) {
              if (j + 1 >= pi->len) bad = true;
              j += 2;
            } else {
              j++;
            }
          }
          if (bad)
            st = hs_error_set(err, HS_ERR_INVALID_ARG,
                              "at position %d: LIKE pattern must not end with escape character",
                              e->pos);
        }
        if (st == HS_OK)
          d[i] = (uint8_t)(hs_sql_like(s[i].ptr, s[i].len, pi->ptr, pi->len, esc, e->icase) !=
                           e->negated);
      }
    }
  }
  for (int32_t k = 0; k < e->n_args; k++) hs_sql_vec_release(&a[k]);
  if (st != HS_OK) hs_sql_vec_release(out);
  return st;
}

/* GREATEST / LEAST: NULLs ignored (PostgreSQL), NULL when all are. */
static hs_status eval_greatest(const hs_sql_expr *e, const hs_sql_chunk *in,
                               const hs_sql_evalctx *ctx, hs_sql_vec *out, hs_error *err) {
  int64_t n = in->n;
  hs_sql_vec *a = hs_calloc((size_t)e->n_args, sizeof(hs_sql_vec));
  int64_t *pick = hs_malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  int32_t *which = hs_malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
  hs_status st = HS_OK;
  if (a == NULL || pick == NULL || which == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    goto done;
  }
  if ((st = eval_args(e, in, ctx, a, err)) != HS_OK) goto done;
  for (int64_t i = 0; i < n; i++) which[i] = -1;
  for (int32_t k = 0; k < e->n_args; k++)
    for (int64_t i = 0; i < n; i++) {
      if (!hs_sql_vec_valid(&a[k], i)) continue;
      if (which[i] < 0) {
        which[i] = k;
        continue;
      }
      int c = hs_sql_vec_cmp(&a[k], i, &a[which[i]], i);
      if ((e->which > 0 && c > 0) || (e->which < 0 && c < 0)) which[i] = k;
    }
  if ((st = null_vec(out, e->type, n, err)) != HS_OK) goto release;
  for (int32_t k = 0; k < e->n_args && st == HS_OK; k++) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
      if (which[i] == k) pick[m++] = i;
    if (m == 0) continue;
    hs_sql_vec sub = {0};
    if ((st = hs_sql_vec_take(&sub, &a[k], pick, m, err)) == HS_OK)
      st = scatter(out, &sub, pick, m, err);
    hs_sql_vec_release(&sub);
  }
release:
  for (int32_t k = 0; k < e->n_args; k++) hs_sql_vec_release(&a[k]);
done:
  hs_free(a);
  hs_free(pick);
  hs_free(which);
  if (st != HS_OK) hs_sql_vec_release(out);
  return st;
}

static hs_status eval(const hs_sql_expr *e, const hs_sql_chunk *in, const hs_sql_evalctx *ctx,
                      hs_sql_vec *out, hs_error *err) {
  memset(out, 0, sizeof(*out));
  switch (e->kind) {
  case HS_SX_COL:
    if (e->col < 0 || e->col >= in->n_cols)
      return hs_error_set(err, HS_ERR_INTERNAL, "sql: column #%d outside the input's %d", e->col,
                          in->n_cols);
    return hs_sql_vec_share(out, &in->cols[e->col], err);
  case HS_SX_CONST: return hs_sql_vec_const(out, &e->value, in->n, err);
  case HS_SX_PARAM:
    if (ctx == NULL || e->param < 0 || e->param >= ctx->n_params)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "at position %d: no value for parameter $%d",
                          e->pos, e->param + 1);
    return hs_sql_vec_const(out, &ctx->params[e->param], in->n, err);
  case HS_SX_FUNC: return eval_func(e, in, ctx, out, err);
  case HS_SX_CAST: {
    hs_sql_vec a = {0};
    hs_status st = eval(e->args[0], in, ctx, &a, err);
    if (st != HS_OK) return st;
    if (a.type.id == HS_SQL_NULLTYPE)
      st = null_vec(out, e->type, in->n, err);
    else
      st = hs_sql_cast_vec(&a, e->type, e->pos, out, err);
    hs_sql_vec_release(&a);
    return st;
  }
  case HS_SX_AND:
  case HS_SX_OR: return eval_andor(e, in, ctx, out, err);
  case HS_SX_NOT: return eval_not(e, in, ctx, out, err);
  case HS_SX_ISNULL: return eval_isnull(e, in, ctx, out, err);
  case HS_SX_BOOLTEST: return eval_booltest(e, in, ctx, out, err);
  case HS_SX_CASE: return eval_case(e, in, ctx, out, err);
  case HS_SX_COALESCE: return eval_coalesce(e, in, ctx, out, err);
  case HS_SX_NULLIF: return eval_nullif(e, in, ctx, out, err);
  case HS_SX_IN: return eval_in(e, in, ctx, out, err);
  case HS_SX_LIKE: return eval_like(e, in, ctx, out, err);
  case HS_SX_GREATEST: return eval_greatest(e, in, ctx, out, err);
  }
  return hs_error_set(err, HS_ERR_INTERNAL, "sql: unknown expression kind %d", (int)e->kind);
}

hs_status hs_sql_eval(const hs_sql_expr *e, const hs_sql_chunk *in, const hs_sql_evalctx *ctx,
                      hs_sql_vec *out, hs_error *err) {
  hs_status st = check_cancel(ctx, err);
  if (st != HS_OK) return st;
  return eval(e, in, ctx, out, err);
}

hs_status hs_sql_eval_select(const hs_sql_expr *e, const hs_sql_chunk *in,
                             const hs_sql_evalctx *ctx, int64_t *sel, int64_t *n_sel,
                             hs_error *err) {
  hs_sql_vec v = {0};
  *n_sel = 0;
  hs_status st = hs_sql_eval(e, in, ctx, &v, err);
  if (st != HS_OK) return st;
  int64_t k = 0;
  if (v.type.id == HS_SQL_BOOL) {
    const uint8_t *d = v.data, *valid = v.valid;
    if (valid == NULL) {
      for (int64_t i = 0; i < in->n; i++) {
        sel[k] = i;
        k += d[i] != 0;
      }
    } else {
      for (int64_t i = 0; i < in->n; i++) {
        sel[k] = i;
        k += (d[i] & valid[i]) != 0;
      }
    }
  }
  *n_sel = k;
  hs_sql_vec_release(&v);
  return HS_OK;
}

hs_status hs_sql_eval_const(const hs_sql_expr *e, const hs_sql_evalctx *ctx, hs_arena *arena,
                            hs_sql_value *out, hs_error *err) {
  hs_sql_chunk one = {1, 0, NULL};
  hs_sql_vec v = {0};
  hs_status st = hs_sql_eval(e, &one, ctx, &v, err);
  if (st != HS_OK) return st;
  hs_sql_value val;
  hs_sql_vec_get(&v, 0, &val);
  val.type = e->type;
  if (!val.is_null) {
    if (hs_sql_type_is_string(val.type.id)) {
      /* a string in a vector is not NUL-terminated: copy len bytes, add the NUL */
      char *p = hs_arena_alloc(arena, (size_t)val.v.s.len + 1);
      if (p == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      } else {
        if (val.v.s.len) memcpy(p, val.v.s.ptr, val.v.s.len);
        p[val.v.s.len] = '\0';
      }
      val.v.s.ptr = p;
    } else if (hs_sql_type_is_vector(val.type.id)) {
      float *p = hs_arena_memdup(arena, val.v.vec, sizeof(float) * (size_t)val.type.a);
      if (p == NULL && val.type.a > 0) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      val.v.vec = p;
    }
  }
  hs_sql_vec_release(&v);
  *out = val;
  return st;
}
