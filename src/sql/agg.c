/*
 * agg.c — the basic aggregates (count, sum, avg, min, max, the standard
 * deviations and variances, bool_and/bool_or/every) and aggregate
 * resolution over the aggregate tables (func_tables.h).
 *
 * Each aggregate is one row per accepted argument type, so update loops
 * run over one typed array with no switch inside. States are fixed-size
 * and live in the hash aggregate's state arrays (func.h); the only
 * variable memory is the bytes of string min/max, kept in the arena the
 * caller passes (a state's buffer is reused while the new value fits, so
 * a group holds at most about twice its longest value).
 *
 * Result types (PostgreSQL's unless noted): count -> bigint; sum(int) ->
 * bigint; sum(bigint) -> numeric(38,0); sum(numeric(p,s)) ->
 * numeric(38,s); sum(double) -> double; avg(any number) -> double
 * (PostgreSQL: numeric for integer and numeric arguments); min/max -> the
 * argument's type; stddev/variance of anything numeric -> double
 * (PostgreSQL: numeric for integer and numeric arguments); bool_and,
 * bool_or, every -> boolean. Sums past 38 digits are "numeric field
 * overflow"; sum(int) past bigint is "bigint out of range".
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "func_tables.h"

#define NUMERIC_LIMIT ((hs_sql_i128)10000000000000000000ull * (hs_sql_i128)10000000000000000000ull)

/* ---------------------------------------------------------------- helpers */

static inline void set_valid(hs_sql_vec *out, int64_t row) {
  uint8_t *valid = hs_sql_vec_mut_valid(out);
  if (valid != NULL) valid[row] = 1;
}

static inline bool row_valid(const hs_sql_vec *v, int64_t i) {
  return v->valid == NULL || v->valid[i];
}

static hs_status numeric_overflow(hs_error *err) {
  return hs_error_set(err, HS_ERR_INVALID_ARG, "numeric field overflow");
}

/* ------------------------------------------------------------------ count */

static void init_zero(void *state, hs_sql_type arg, hs_sql_type ret) {
  (void)state;
  (void)arg;
  (void)ret;
}

static hs_status count_star_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                                   const hs_sql_vec *args, int64_t n, hs_arena *arena,
                                   hs_error *err) {
  int64_t *s = states;
  for (int64_t i = 0; i < n; i++) s[group[i]]++;
  return HS_OK;
}

static hs_status count_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                              const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err) {
  int64_t *s = states;
  const hs_sql_vec *v = &args[0];
  if (v->type.id == HS_SQL_NULLTYPE) return HS_OK;
  if (v->valid == NULL) {
    for (int64_t i = 0; i < n; i++) s[group[i]]++;
  } else {
    for (int64_t i = 0; i < n; i++) s[group[i]] += v->valid[i];
  }
  return HS_OK;
}

static hs_status count_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                             hs_error *err) {
  *(int64_t *)dst += *(const int64_t *)src;
  return HS_OK;
}

static hs_status count_final(const hs_sql_agg *a, const void *state, hs_sql_type ret,
                             hs_sql_vec *out, int64_t row, hs_error *err) {
  ((int64_t *)hs_sql_vec_mut_data(out))[row] = *(const int64_t *)state;
  set_valid(out, row);
  return HS_OK;
}

static bool ret_int64(const hs_sql_type *args, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  *ret = hs_sql_type_of(HS_SQL_INT64);
  return true;
}
static bool ret_float64(const hs_sql_type *args, int32_t n, hs_sql_type *ret, char *why,
                        size_t wl) {
  *ret = hs_sql_type_of(HS_SQL_FLOAT64);
  return true;
}
static bool ret_bool(const hs_sql_type *args, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  *ret = hs_sql_type_of(HS_SQL_BOOL);
  return true;
}
static bool ret_same(const hs_sql_type *args, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  *ret = args[0];
  return true;
}
static bool ret_numeric38(const hs_sql_type *args, int32_t n, hs_sql_type *ret, char *why,
                          size_t wl) {
  ret->id = HS_SQL_NUMERIC;
  ret->a = 38;
  ret->b = args[0].id == HS_SQL_NUMERIC ? args[0].b : 0;
  return true;
}

/* -------------------------------------------------------------------- sum */

typedef struct sum_i64_state { /* sum(int) */
  int64_t sum;
  int64_t has;
} sum_i64_state;

static hs_status sum_i32_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                                const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err) {
  sum_i64_state *s = states;
  const hs_sql_vec *v = &args[0];
  const int32_t *d = v->data;
  for (int64_t i = 0; i < n; i++) {
    if (!row_valid(v, i)) continue;
    sum_i64_state *g = &s[group[i]];
    if (__builtin_add_overflow(g->sum, (int64_t)d[i], &g->sum))
      return hs_error_set(err, HS_ERR_INVALID_ARG, "bigint out of range");
    g->has = 1;
  }
  return HS_OK;
}

static hs_status sum_i64_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                               hs_error *err) {
  sum_i64_state *d = dst;
  const sum_i64_state *s = src;
  if (!s->has) return HS_OK;
  if (__builtin_add_overflow(d->sum, s->sum, &d->sum))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "bigint out of range");
  d->has = 1;
  return HS_OK;
}

static hs_status sum_i64_final(const hs_sql_agg *a, const void *state, hs_sql_type ret,
                               hs_sql_vec *out, int64_t row, hs_error *err) {
  const sum_i64_state *s = state;
  if (!s->has) return HS_OK;
  ((int64_t *)hs_sql_vec_mut_data(out))[row] = s->sum;
  set_valid(out, row);
  return HS_OK;
}

typedef struct sum_dec_state { /* sum(bigint), sum(numeric) */
  hs_sql_i128 sum;
  int64_t has;
  int64_t pad;
} sum_dec_state;

static hs_status sum_i64arg_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                                   const hs_sql_vec *args, int64_t n, hs_arena *arena,
                                   hs_error *err) {
  sum_dec_state *s = states;
  const hs_sql_vec *v = &args[0];
  const int64_t *d = v->data;
  /* |sum| stays below 2^63 * rows: no i128 overflow; the 38-digit bound is
   * checked at the end. */
  for (int64_t i = 0; i < n; i++) {
    if (!row_valid(v, i)) continue;
    sum_dec_state *g = &s[group[i]];
    g->sum += d[i];
    g->has = 1;
  }
  return HS_OK;
}

static hs_status sum_dec_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                                const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err) {
  sum_dec_state *s = states;
  const hs_sql_vec *v = &args[0];
  const hs_sql_i128 *d = v->data;
  for (int64_t i = 0; i < n; i++) {
    if (!row_valid(v, i)) continue;
    sum_dec_state *g = &s[group[i]];
    if (__builtin_add_overflow(g->sum, d[i], &g->sum)) return numeric_overflow(err);
    g->has = 1;
  }
  return HS_OK;
}

static hs_status sum_dec_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                               hs_error *err) {
  sum_dec_state *d = dst;
  const sum_dec_state *s = src;
  if (!s->has) return HS_OK;
  if (__builtin_add_overflow(d->sum, s->sum, &d->sum)) return numeric_overflow(err);
  d->has = 1;
  return HS_OK;
}

static hs_status sum_dec_final(const hs_sql_agg *a, const void *state, hs_sql_type ret,
                               hs_sql_vec *out, int64_t row, hs_error *err) {
  const sum_dec_state *s = state;
  if (!s->has) return HS_OK;
  if (s->sum >= NUMERIC_LIMIT || s->sum <= -NUMERIC_LIMIT) return numeric_overflow(err);
  ((hs_sql_i128 *)hs_sql_vec_mut_data(out))[row] = s->sum;
  set_valid(out, row);
  return HS_OK;
}

typedef struct sum_f64_state {
  double sum;
  int64_t has;
} sum_f64_state;

static hs_status sum_f64_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                                const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err) {
  sum_f64_state *s = states;
  const hs_sql_vec *v = &args[0];
  const double *d = v->data;
  if (v->valid == NULL) {
    for (int64_t i = 0; i < n; i++) {
      sum_f64_state *g = &s[group[i]];
      g->sum += d[i];
      g->has = 1;
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      if (!v->valid[i]) continue;
      sum_f64_state *g = &s[group[i]];
      g->sum += d[i];
      g->has = 1;
    }
  }
  return HS_OK;
}

static hs_status sum_f64_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                               hs_error *err) {
  sum_f64_state *d = dst;
  const sum_f64_state *s = src;
  if (!s->has) return HS_OK;
  d->sum += s->sum;
  d->has = 1;
  return HS_OK;
}

static hs_status sum_f64_final(const hs_sql_agg *a, const void *state, hs_sql_type ret,
                               hs_sql_vec *out, int64_t row, hs_error *err) {
  const sum_f64_state *s = state;
  if (!s->has) return HS_OK;
  ((double *)hs_sql_vec_mut_data(out))[row] = s->sum;
  set_valid(out, row);
  return HS_OK;
}

static hs_status sum_iv_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                               const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err);
static hs_status sum_iv_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                              hs_error *err);
static hs_status sum_iv_final(const hs_sql_agg *a, const void *state, hs_sql_type ret,
                              hs_sql_vec *out, int64_t row, hs_error *err);

typedef struct sum_iv_state {
  hs_sql_interval sum;
  int64_t has;
} sum_iv_state;

static hs_status iv_add(hs_sql_interval *d, const hs_sql_interval *s, hs_error *err) {
  if (__builtin_add_overflow(d->months, s->months, &d->months) ||
      __builtin_add_overflow(d->days, s->days, &d->days) ||
      __builtin_add_overflow(d->micros, s->micros, &d->micros))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "interval out of range");
  return HS_OK;
}

static hs_status sum_iv_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                               const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err) {
  sum_iv_state *s = states;
  const hs_sql_vec *v = &args[0];
  const hs_sql_interval *d = v->data;
  for (int64_t i = 0; i < n; i++) {
    if (!row_valid(v, i)) continue;
    sum_iv_state *g = &s[group[i]];
    hs_status st = iv_add(&g->sum, &d[i], err);
    if (st != HS_OK) return st;
    g->has = 1;
  }
  return HS_OK;
}

static hs_status sum_iv_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                              hs_error *err) {
  sum_iv_state *d = dst;
  const sum_iv_state *s = src;
  if (!s->has) return HS_OK;
  d->has = 1;
  return iv_add(&d->sum, &s->sum, err);
}

static hs_status sum_iv_final(const hs_sql_agg *a, const void *state, hs_sql_type ret,
                              hs_sql_vec *out, int64_t row, hs_error *err) {
  const sum_iv_state *s = state;
  if (!s->has) return HS_OK;
  ((hs_sql_interval *)hs_sql_vec_mut_data(out))[row] = s->sum;
  set_valid(out, row);
  return HS_OK;
}

/* -------------------------------------------------------------------- avg */

typedef struct avg_state {
  hs_sql_i128 sum; /* integers and numerics (scaled) */
  double fsum;     /* doubles */
  int64_t count;
  int32_t scale; /* numeric argument's scale */
  int32_t pad;
} avg_state;

static void avg_init(void *state, hs_sql_type arg, hs_sql_type ret) {
  avg_state *s = state;
  s->scale = arg.id == HS_SQL_NUMERIC ? arg.b : 0;
}

#define AVG_INT_UPDATE(NAME, CT)                                                             \
  static hs_status NAME(const hs_sql_agg *a, void *states, const uint32_t *group,            \
                        const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err) { \
    avg_state *s = states;                                                                   \
    const hs_sql_vec *v = &args[0];                                                          \
    const CT *d = v->data;                                                                   \
    for (int64_t i = 0; i < n; i++) {                                                        \
      if (!row_valid(v, i)) continue;                                                        \
      avg_state *g = &s[group[i]];                                                           \
      g->sum += d[i];                                                                        \
      g->count++;                                                                            \
    }                                                                                        \
    return HS_OK;                                                                            \
  }
AVG_INT_UPDATE(avg_i32_update, int32_t)
AVG_INT_UPDATE(avg_i64_update, int64_t)

static hs_status avg_dec_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                                const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err) {
  avg_state *s = states;
  const hs_sql_vec *v = &args[0];
  const hs_sql_i128 *d = v->data;
  for (int64_t i = 0; i < n; i++) {
    if (!row_valid(v, i)) continue;
    avg_state *g = &s[group[i]];
    if (__builtin_add_overflow(g->sum, d[i], &g->sum)) return numeric_overflow(err);
    g->count++;
  }
  return HS_OK;
}

static hs_status avg_f64_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                                const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err) {
  avg_state *s = states;
  const hs_sql_vec *v = &args[0];
  const double *d = v->data;
  for (int64_t i = 0; i < n; i++) {
    if (!row_valid(v, i)) continue;
    avg_state *g = &s[group[i]];
    g->fsum += d[i];
    g->count++;
  }
  return HS_OK;
}

static hs_status avg_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                           hs_error *err) {
  avg_state *d = dst;
  const avg_state *s = src;
  if (__builtin_add_overflow(d->sum, s->sum, &d->sum)) return numeric_overflow(err);
  d->fsum += s->fsum;
  d->count += s->count;
  return HS_OK;
}

static double pow10_of(int32_t s) {
  double p = 1.0;
  for (int32_t i = 0; i < s; i++) p *= 10.0;
  return p;
}

static hs_status avg_final(const hs_sql_agg *a, const void *state, hs_sql_type ret, hs_sql_vec *out,
                           int64_t row, hs_error *err) {
  const avg_state *s = state;
  if (s->count == 0) return HS_OK;
  double r;
  if (a->arg == HS_SQL_FLOAT64) {
    r = s->fsum / (double)s->count;
  } else {
    /* exact integer part first, so large sums keep their precision */
    hs_sql_i128 q = s->sum / s->count, rem = s->sum % s->count;
    r = ((double)q + (double)rem / (double)s->count) / pow10_of(s->scale);
  }
  ((double *)hs_sql_vec_mut_data(out))[row] = r;
  set_valid(out, row);
  return HS_OK;
}

/* ------------------------------------------------------- stddev, variance */

/* Welford's running mean and sum of squared deviations; merged with Chan
 * et al.'s pairwise formula. */
typedef struct var_state {
  int64_t n;
  double mean;
  double m2;
} var_state;

static hs_status var_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                            const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err) {
  var_state *s = states;
  const hs_sql_vec *v = &args[0];
  const double *d = v->data;
  for (int64_t i = 0; i < n; i++) {
    if (!row_valid(v, i)) continue;
    var_state *g = &s[group[i]];
    double x = d[i];
    g->n++;
    double delta = x - g->mean;
    g->mean += delta / (double)g->n;
    g->m2 += delta * (x - g->mean);
  }
  return HS_OK;
}

static hs_status var_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                           hs_error *err) {
  var_state *d = dst;
  const var_state *s = src;
  if (s->n == 0) return HS_OK;
  if (d->n == 0) {
    *d = *s;
    return HS_OK;
  }
  double n = (double)(d->n + s->n);
  double delta = s->mean - d->mean;
  d->m2 += s->m2 + delta * delta * (double)d->n * (double)s->n / n;
  d->mean += delta * (double)s->n / n;
  d->n += s->n;
  return HS_OK;
}

/* kind: 0 var_samp, 1 var_pop, 2 stddev_samp, 3 stddev_pop */
static hs_status var_final_kind(const var_state *s, int kind, hs_sql_vec *out, int64_t row) {
  bool samp = kind == 0 || kind == 2;
  if (s->n == 0 || (samp && s->n < 2)) return HS_OK;
  double m2 = s->m2 < 0 ? 0 : s->m2;
  double r = m2 / (double)(samp ? s->n - 1 : s->n);
  if (kind >= 2) r = sqrt(r);
  ((double *)hs_sql_vec_mut_data(out))[row] = r;
  set_valid(out, row);
  return HS_OK;
}

#define VAR_FINAL(NAME, KIND)                                                                     \
  static hs_status NAME(const hs_sql_agg *a, const void *state, hs_sql_type ret, hs_sql_vec *out, \
                        int64_t row, hs_error *err) {                                             \
    return var_final_kind(state, KIND, out, row);                                                 \
  }
VAR_FINAL(var_samp_final, 0)
VAR_FINAL(var_pop_final, 1)
VAR_FINAL(stddev_samp_final, 2)
VAR_FINAL(stddev_pop_final, 3)

/* ---------------------------------------------------------- bool_and/or */

typedef struct bool_state {
  uint8_t has;
  uint8_t val;
} bool_state;

static hs_status bool_and_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                                 const hs_sql_vec *args, int64_t n, hs_arena *arena,
                                 hs_error *err) {
  bool_state *s = states;
  const hs_sql_vec *v = &args[0];
  const uint8_t *d = v->data;
  for (int64_t i = 0; i < n; i++) {
    if (!row_valid(v, i)) continue;
    bool_state *g = &s[group[i]];
    g->val = g->has ? (uint8_t)(g->val & d[i]) : d[i];
    g->has = 1;
  }
  return HS_OK;
}

static hs_status bool_or_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                                const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err) {
  bool_state *s = states;
  const hs_sql_vec *v = &args[0];
  const uint8_t *d = v->data;
  for (int64_t i = 0; i < n; i++) {
    if (!row_valid(v, i)) continue;
    bool_state *g = &s[group[i]];
    g->val = (uint8_t)(g->val | d[i]);
    g->has = 1;
  }
  return HS_OK;
}

static hs_status bool_and_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                                hs_error *err) {
  bool_state *d = dst;
  const bool_state *s = src;
  if (!s->has) return HS_OK;
  d->val = d->has ? (uint8_t)(d->val & s->val) : s->val;
  d->has = 1;
  return HS_OK;
}

static hs_status bool_or_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                               hs_error *err) {
  bool_state *d = dst;
  const bool_state *s = src;
  if (!s->has) return HS_OK;
  d->val = (uint8_t)(d->val | s->val);
  d->has = 1;
  return HS_OK;
}

static hs_status bool_final(const hs_sql_agg *a, const void *state, hs_sql_type ret,
                            hs_sql_vec *out, int64_t row, hs_error *err) {
  const bool_state *s = state;
  if (!s->has) return HS_OK;
  ((uint8_t *)hs_sql_vec_mut_data(out))[row] = s->val;
  set_valid(out, row);
  return HS_OK;
}

/* ---------------------------------------------------------------- min/max */

/* One state for every ordered type: the value in its physical layout. */
typedef struct mm_state {
  union {
    int32_t i32;
    int64_t i64;
    double f64;
    hs_sql_i128 dec;
    hs_sql_interval iv;
    struct {
      char *ptr;
      uint32_t len;
      uint32_t cap;
    } s;
  } v;
  int64_t has;
  int64_t pad;
} mm_state;

/* NaN sorts above every number (and equals NaN). */
static inline int f64_cmp(double x, double y) {
  bool xn = isnan(x), yn = isnan(y);
  if (xn || yn) return xn == yn ? 0 : xn ? 1 : -1;
  return x < y ? -1 : x > y ? 1 : 0;
}

/* PostgreSQL compares intervals as their total span with a month of 30
 * days and a day of 24 hours. */
static inline hs_sql_i128 iv_span(const hs_sql_interval *v) {
  return ((hs_sql_i128)v->months * 30 + v->days) * (hs_sql_i128)86400000000LL + v->micros;
}

static inline int str_cmp(const char *a, uint32_t al, const char *b, uint32_t bl) {
  uint32_t m = al < bl ? al : bl;
  int c = m ? memcmp(a, b, m) : 0;
  if (c != 0) return c;
  return al < bl ? -1 : al > bl ? 1 : 0;
}

/* MAX: sign 1 (replace when the new value is greater); MIN: -1. */
#define MM_SCALAR(NAME, CT, FIELD, CMP)                                                        \
  static hs_status NAME##_min_update(const hs_sql_agg *a, void *states, const uint32_t *group, \
                                     const hs_sql_vec *args, int64_t n, hs_arena *arena,       \
                                     hs_error *err) {                                          \
    mm_state *s = states;                                                                      \
    const hs_sql_vec *v = &args[0];                                                            \
    const CT *d = v->data;                                                                     \
    for (int64_t i = 0; i < n; i++) {                                                          \
      if (!row_valid(v, i)) continue;                                                          \
      mm_state *g = &s[group[i]];                                                              \
      if (!g->has || CMP(d[i], g->v.FIELD) < 0) {                                              \
        g->v.FIELD = d[i];                                                                     \
        g->has = 1;                                                                            \
      }                                                                                        \
    }                                                                                          \
    return HS_OK;                                                                              \
  }                                                                                            \
  static hs_status NAME##_max_update(const hs_sql_agg *a, void *states, const uint32_t *group, \
                                     const hs_sql_vec *args, int64_t n, hs_arena *arena,       \
                                     hs_error *err) {                                          \
    mm_state *s = states;                                                                      \
    const hs_sql_vec *v = &args[0];                                                            \
    const CT *d = v->data;                                                                     \
    for (int64_t i = 0; i < n; i++) {                                                          \
      if (!row_valid(v, i)) continue;                                                          \
      mm_state *g = &s[group[i]];                                                              \
      if (!g->has || CMP(d[i], g->v.FIELD) > 0) {                                              \
        g->v.FIELD = d[i];                                                                     \
        g->has = 1;                                                                            \
      }                                                                                        \
    }                                                                                          \
    return HS_OK;                                                                              \
  }                                                                                            \
  static hs_status NAME##_min_merge(const hs_sql_agg *a, void *dst, const void *src,           \
                                    hs_arena *arena, hs_error *err) {                          \
    mm_state *d = dst;                                                                         \
    const mm_state *s = src;                                                                   \
    if (s->has && (!d->has || CMP(s->v.FIELD, d->v.FIELD) < 0)) *d = *s;                       \
    return HS_OK;                                                                              \
  }                                                                                            \
  static hs_status NAME##_max_merge(const hs_sql_agg *a, void *dst, const void *src,           \
                                    hs_arena *arena, hs_error *err) {                          \
    mm_state *d = dst;                                                                         \
    const mm_state *s = src;                                                                   \
    if (s->has && (!d->has || CMP(s->v.FIELD, d->v.FIELD) > 0)) *d = *s;                       \
    return HS_OK;                                                                              \
  }                                                                                            \
  static hs_status NAME##_final(const hs_sql_agg *a, const void *state, hs_sql_type ret,       \
                                hs_sql_vec *out, int64_t row, hs_error *err) {                 \
    const mm_state *s = state;                                                                 \
    if (!s->has) return HS_OK;                                                                 \
    ((CT *)hs_sql_vec_mut_data(out))[row] = s->v.FIELD;                                        \
    set_valid(out, row);                                                                       \
    return HS_OK;                                                                              \
  }

#define CMP_PLAIN(x, y) ((x) < (y) ? -1 : (x) > (y) ? 1 : 0)
#define CMP_IV(x, y) CMP_PLAIN(iv_span(&(x)), iv_span(&(y)))
MM_SCALAR(mm_i32, int32_t, i32, CMP_PLAIN)
MM_SCALAR(mm_i64, int64_t, i64, CMP_PLAIN)
MM_SCALAR(mm_f64, double, f64, f64_cmp)
MM_SCALAR(mm_dec, hs_sql_i128, dec, CMP_PLAIN)
MM_SCALAR(mm_iv, hs_sql_interval, iv, CMP_IV)

/* Keep a copy of string `x` in the state, reusing its buffer when it fits. */
static hs_status mm_str_set(mm_state *g, const char *p, uint32_t len, hs_arena *arena,
                            hs_error *err) {
  if (g->v.s.ptr == NULL || len > g->v.s.cap) {
    uint32_t cap = len > UINT32_MAX / 2 ? len : len * 2;
    if (cap < 16) cap = 16;
    char *buf = hs_arena_alloc(arena, cap);
    if (buf == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in min/max");
    g->v.s.ptr = buf;
    g->v.s.cap = cap;
  }
  if (len > 0) memcpy(g->v.s.ptr, p, len);
  g->v.s.len = len;
  g->has = 1;
  return HS_OK;
}

static hs_status mm_str_update_dir(void *states, const uint32_t *group, const hs_sql_vec *v,
                                   int64_t n, int dir, hs_arena *arena, hs_error *err) {
  mm_state *s = states;
  const hs_sql_str *d = v->data;
  for (int64_t i = 0; i < n; i++) {
    if (!row_valid(v, i)) continue;
    mm_state *g = &s[group[i]];
    if (g->has && str_cmp(d[i].ptr, d[i].len, g->v.s.ptr, g->v.s.len) * dir <= 0) continue;
    hs_status st = mm_str_set(g, d[i].ptr, d[i].len, arena, err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

static hs_status mm_str_min_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                                   const hs_sql_vec *args, int64_t n, hs_arena *arena,
                                   hs_error *err) {
  return mm_str_update_dir(states, group, &args[0], n, -1, arena, err);
}
static hs_status mm_str_max_update(const hs_sql_agg *a, void *states, const uint32_t *group,
                                   const hs_sql_vec *args, int64_t n, hs_arena *arena,
                                   hs_error *err) {
  return mm_str_update_dir(states, group, &args[0], n, 1, arena, err);
}

static hs_status mm_str_merge_dir(void *dst, const void *src, int dir, hs_arena *arena,
                                  hs_error *err) {
  mm_state *d = dst;
  const mm_state *s = src;
  if (!s->has) return HS_OK;
  if (d->has && str_cmp(s->v.s.ptr, s->v.s.len, d->v.s.ptr, d->v.s.len) * dir <= 0) return HS_OK;
  return mm_str_set(d, s->v.s.ptr, s->v.s.len, arena, err);
}
static hs_status mm_str_min_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                                  hs_error *err) {
  return mm_str_merge_dir(dst, src, -1, arena, err);
}
static hs_status mm_str_max_merge(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                                  hs_error *err) {
  return mm_str_merge_dir(dst, src, 1, arena, err);
}

/* The result borrows the state's bytes: the caller copies them into the
 * output vector before the state changes or goes away. */
static hs_status mm_str_final(const hs_sql_agg *a, const void *state, hs_sql_type ret,
                              hs_sql_vec *out, int64_t row, hs_error *err) {
  const mm_state *s = state;
  if (!s->has) return HS_OK;
  hs_sql_str *d = hs_sql_vec_mut_data(out);
  d[row].ptr = s->v.s.ptr;
  d[row].len = s->v.s.len;
  set_valid(out, row);
  return HS_OK;
}

/* ------------------------------------------------------------------ table */

#define AGG(NAME, NARGS, ARG, RET, STATE, INIT, UPD, MERGE, FINAL) \
  { NAME, NARGS, ARG, RET, sizeof(STATE), INIT, UPD, MERGE, FINAL }

#define MM_ROWS(TID, P)                                                                        \
  AGG("min", 1, TID, ret_same, mm_state, init_zero, P##_min_update, P##_min_merge, P##_final), \
      AGG("max", 1, TID, ret_same, mm_state, init_zero, P##_max_update, P##_max_merge, P##_final)

#define MM_STR_ROWS(TID)                                                                     \
  AGG("min", 1, TID, ret_same, mm_state, init_zero, mm_str_min_update, mm_str_min_merge,     \
      mm_str_final),                                                                         \
      AGG("max", 1, TID, ret_same, mm_state, init_zero, mm_str_max_update, mm_str_max_merge, \
          mm_str_final)

#define VAR_ROW(NAME, FINAL) \
  AGG(NAME, 1, HS_SQL_FLOAT64, ret_float64, var_state, init_zero, var_update, var_merge, FINAL)

/* Overloads are listed narrowest first: on an implicit cast the first
 * reachable row wins (sum(NULL) is sum(integer), as the cheapest). */
const hs_sql_agg hs_sql_aggs_basic[] = {
    AGG("count", 0, HS_SQL_NULLTYPE, ret_int64, int64_t, init_zero, count_star_update, count_merge,
        count_final),
    AGG("count", 1, HS_SQL_NULLTYPE, ret_int64, int64_t, init_zero, count_update, count_merge,
        count_final),
    AGG("sum", 1, HS_SQL_INT32, ret_int64, sum_i64_state, init_zero, sum_i32_update, sum_i64_merge,
        sum_i64_final),
    AGG("sum", 1, HS_SQL_INT64, ret_numeric38, sum_dec_state, init_zero, sum_i64arg_update,
        sum_dec_merge, sum_dec_final),
    AGG("sum", 1, HS_SQL_NUMERIC, ret_numeric38, sum_dec_state, init_zero, sum_dec_update,
        sum_dec_merge, sum_dec_final),
    AGG("sum", 1, HS_SQL_FLOAT64, ret_float64, sum_f64_state, init_zero, sum_f64_update,
        sum_f64_merge, sum_f64_final),
    AGG("sum", 1, HS_SQL_INTERVAL, ret_same, sum_iv_state, init_zero, sum_iv_update, sum_iv_merge,
        sum_iv_final),
    AGG("avg", 1, HS_SQL_INT32, ret_float64, avg_state, avg_init, avg_i32_update, avg_merge,
        avg_final),
    AGG("avg", 1, HS_SQL_INT64, ret_float64, avg_state, avg_init, avg_i64_update, avg_merge,
        avg_final),
    AGG("avg", 1, HS_SQL_NUMERIC, ret_float64, avg_state, avg_init, avg_dec_update, avg_merge,
        avg_final),
    AGG("avg", 1, HS_SQL_FLOAT64, ret_float64, avg_state, avg_init, avg_f64_update, avg_merge,
        avg_final),
    MM_ROWS(HS_SQL_INT32, mm_i32),
    MM_ROWS(HS_SQL_INT64, mm_i64),
    MM_ROWS(HS_SQL_NUMERIC, mm_dec),
    MM_ROWS(HS_SQL_FLOAT64, mm_f64),
    MM_ROWS(HS_SQL_DATE, mm_i32),
    MM_ROWS(HS_SQL_TIMESTAMP, mm_i64),
    MM_ROWS(HS_SQL_TIMESTAMPTZ, mm_i64),
    MM_ROWS(HS_SQL_INTERVAL, mm_iv),
    MM_STR_ROWS(HS_SQL_TEXT),
    MM_STR_ROWS(HS_SQL_BYTEA),
    VAR_ROW("stddev", stddev_samp_final),
    VAR_ROW("stddev_samp", stddev_samp_final),
    VAR_ROW("stddev_pop", stddev_pop_final),
    VAR_ROW("variance", var_samp_final),
    VAR_ROW("var_samp", var_samp_final),
    VAR_ROW("var_pop", var_pop_final),
    AGG("bool_and", 1, HS_SQL_BOOL, ret_bool, bool_state, init_zero, bool_and_update,
        bool_and_merge, bool_final),
    AGG("every", 1, HS_SQL_BOOL, ret_bool, bool_state, init_zero, bool_and_update, bool_and_merge,
        bool_final),
    AGG("bool_or", 1, HS_SQL_BOOL, ret_bool, bool_state, init_zero, bool_or_update, bool_or_merge,
        bool_final),
};
const size_t hs_sql_aggs_basic_n = sizeof(hs_sql_aggs_basic) / sizeof(hs_sql_aggs_basic[0]);

/* ------------------------------------------------------------- resolution */

typedef struct agg_table {
  const hs_sql_agg *rows;
  const size_t *n;
} agg_table;

static const agg_table TABLES[] = {
    {hs_sql_aggs_basic, &hs_sql_aggs_basic_n},
    {hs_sql_aggs_vector, &hs_sql_aggs_vector_n},
};
#define N_TABLES (sizeof(TABLES) / sizeof(TABLES[0]))

bool hs_sql_agg_exists(const char *name) {
  for (size_t t = 0; t < N_TABLES; t++)
    for (size_t i = 0; i < *TABLES[t].n; i++)
      if (strcmp(TABLES[t].rows[i].name, name) == 0) return true;
  return false;
}

/* Cost of passing `have` where `want` is declared (-1: impossible); the
 * type the argument must be cast to in *to. */
static int agg_arg_cost(hs_sql_type have, hs_sql_tid want, hs_sql_type *to) {
  if (want == HS_SQL_NULLTYPE || have.id == want) {
    *to = have;
    return 0;
  }
  hs_sql_type w = hs_sql_type_of(want);
  if (want == HS_SQL_NUMERIC) {
    w.a = have.id == HS_SQL_INT32 ? 10 : have.id == HS_SQL_INT64 ? 19 : 38;
    w.b = 0;
  }
  if (have.id == HS_SQL_NULLTYPE) {
    *to = w;
    return 1;
  }
  if (hs_sql_type_implicit(have, w)) {
    *to = w;
    return 2;
  }
  return -1;
}

hs_status hs_sql_agg_resolve(const char *name, const hs_sql_type *args, int32_t n,
                             hs_sql_agg_match *m, hs_error *err) {
  bool named = false;
  char why[160] = ""; /* why the last fitting overload refused its arguments */
  int best_cost = -1;
  hs_sql_agg_match best;
  memset(&best, 0, sizeof best);
  for (size_t t = 0; t < N_TABLES; t++) {
    for (size_t i = 0; i < *TABLES[t].n; i++) {
      const hs_sql_agg *a = &TABLES[t].rows[i];
      if (strcmp(a->name, name) != 0) continue;
      named = true;
      if (a->n_args != n) continue;
      hs_sql_type to = hs_sql_type_of(HS_SQL_NULLTYPE);
      int cost = 0;
      if (n > 0) {
        cost = agg_arg_cost(args[0], a->arg, &to);
        if (cost < 0) continue;
      }
      if (best_cost >= 0 && cost >= best_cost) continue;
      hs_sql_type ret;
      if (!a->rettype(&to, n, &ret, why, sizeof why)) continue;
      best.agg = a;
      best.ret = ret;
      best.cast_to = to;
      best_cost = cost;
    }
  }
  if (!named) return hs_error_set(err, HS_ERR_NOT_FOUND, "function %s does not exist", name);
  if (best_cost < 0 && why[0] != '\0')
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: %s", name, why);
  if (best_cost < 0) {
    char list[256] = "";
    size_t len = 0;
    for (int32_t i = 0; i < n && len + 1 < sizeof list; i++) {
      char tn[64];
      hs_sql_type_name(args[i], tn, sizeof tn);
      int w = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", tn);
      if (w < 0) break;
      len += (size_t)w;
    }
    if (len >= sizeof list) len = sizeof list - 1;
    return hs_error_set(err, HS_ERR_INVALID_ARG, "function %s(%s) does not exist", name, list);
  }
  *m = best;
  return HS_OK;
}
