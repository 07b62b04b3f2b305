/*
 * fn_internal.h — what cast.c, fn_arith.c, fn_string.c and fn_time.c
 * share: positioned errors, the strict-kernel prologue, powers of ten for
 * NUMERIC, and the text forms of values (PostgreSQL's output functions)
 * and of dates and times. Private to src/sql/.
 */
#ifndef HS_SQL_FN_INTERNAL_H
#define HS_SQL_FN_INTERNAL_H

#include "func_tables.h"

#define HS_SQL_USECS_PER_DAY INT64_C(86400000000)
#define HS_SQL_USECS_PER_HOUR INT64_C(3600000000)
#define HS_SQL_USECS_PER_MINUTE INT64_C(60000000)
#define HS_SQL_USECS_PER_SEC INT64_C(1000000)

/* Largest text any of the hs_sql_fmt_* functions writes (plus NUL). */
#define HS_SQL_FMT_MAX 128

/* hs_error_set with "at position N: " before the message when pos > 0. */
hs_status hs_sql_errf(hs_error *err, hs_status st, int32_t pos, const char *fmt, ...)
    HS_PRINTF(4, 5);

static inline int32_t hs_sql_epos(const hs_sql_expr *e) {
  return e != NULL ? e->pos : 0;
}

/* The usual first step of a strict kernel: *out allocated with n rows of
 * `ret`, row i valid iff every argument's row i is. */
hs_status hs_sql_kernel_begin(const hs_sql_vec *args, int32_t n_args, int64_t n, hs_sql_type ret,
                              hs_sql_vec *out, hs_error *err);

/* Does some argument have no data at all (a bare NULL)? Kernels then stop
 * after hs_sql_kernel_begin, which made every row NULL. */
static inline bool hs_sql_any_nulltype(const hs_sql_vec *args, int32_t n_args) {
  for (int32_t k = 0; k < n_args; k++)
    if (args[k].type.id == HS_SQL_NULLTYPE) return true;
  return false;
}

/* The shape every kernel of fn_arith.c, fn_string.c and fn_time.c shares:
 * KARGS is the hs_sql_kernel parameter list; BEGIN() runs the strict
 * prologue (stops with all-NULL output on a bare NULL argument) and binds
 * `valid`; ROW_OK(i) says row i is not NULL; FAIL(...) releases the output
 * and returns a positioned HS_ERR_INVALID_ARG. */
#define KARGS                                                                               \
  const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args, int64_t n, hs_sql_type ret, \
      hs_sql_vec *out, hs_error *err

#define BEGIN()                                                        \
  hs_status st_ = hs_sql_kernel_begin(args, n_args, n, ret, out, err); \
  if (st_ != HS_OK) return st_;                                        \
  if (hs_sql_any_nulltype(args, n_args)) return HS_OK;                 \
  const uint8_t *valid = out->valid;                                   \
  (void)valid

#define ROW_OK(i) (valid == NULL || valid[i])

#define FAIL(...)                                                             \
  do {                                                                        \
    hs_sql_vec_release(out);                                                  \
    return hs_sql_errf(err, HS_ERR_INVALID_ARG, hs_sql_epos(e), __VA_ARGS__); \
  } while (0)

/* 10^0 .. 10^38. */
extern const hs_sql_i128 hs_sql_pow10[39];

/* Precision of a NUMERIC type (0 = unconstrained reads as 38). */
static inline int hs_sql_num_prec(hs_sql_type t) {
  return t.a > 0 && t.a <= 38 ? t.a : 38;
}

/* Round v (scale `from`) to scale `to` (half away from zero when
 * narrowing); false when the result does not fit in int128. */
bool hs_sql_num_rescale(hs_sql_i128 v, int from, int to, hs_sql_i128 *out);

/* Does |v| < 10^prec? */
static inline bool hs_sql_num_fits(hs_sql_i128 v, int prec) {
  hs_sql_i128 lim = hs_sql_pow10[prec];
  return v < lim && v > -lim;
}

/* Text forms (PostgreSQL's output functions), NUL-terminated into buf
 * (HS_SQL_FMT_MAX bytes); each returns the length. */
size_t hs_sql_fmt_int64(int64_t v, char *buf);
size_t hs_sql_fmt_f64(double v, int width, char *buf); /* width 4: float4's shortest form */
size_t hs_sql_fmt_numeric(hs_sql_i128 v, int scale, char *buf);
size_t hs_sql_fmt_date(int32_t days, char *buf);
size_t hs_sql_fmt_timestamp(int64_t us, bool tz, char *buf);
size_t hs_sql_fmt_interval(hs_sql_interval iv, char *buf);

/* floor(a / b) for b > 0. */
static inline int64_t hs_sql_floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* PostgreSQL's timestamp + interval: months first (day clamped to the end
 * of the month), then days, then microseconds. false when out of range. */
bool hs_sql_ts_add_interval(int64_t ts, hs_sql_interval iv, int64_t *out);

/* Day numbers (since 1970-01-01) of PostgreSQL's first date and
 * timestamp day, 4714-11-24 BC, of the day after our last timestamp day
 * (294247-01-01: int64 microseconds end during 294247) and after the last date
 * (5874898-01-01). */
#define HS_SQL_TS_MIN_DAYS INT64_C(-2440588)
#define HS_SQL_TS_END_DAYS INT64_C(106751982)
#define HS_SQL_DATE_END_DAYS INT64_C(2145042906)

/* Is a timestamp (microseconds) within PostgreSQL's range (4714-11-24 BC to
 * 294276 AD)? */
bool hs_sql_ts_in_range(int64_t us);

#endif /* HS_SQL_FN_INTERNAL_H */
