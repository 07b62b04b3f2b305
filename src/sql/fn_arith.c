/*
 * fn_arith.c — arithmetic (+ - * / % and unary - +), comparisons
 * (= <> < <= > >= for every comparable type) and math functions.
 *
 * PostgreSQL's semantics: integer overflow is an error ("integer out of
 * range", "bigint out of range"), integer division truncates toward zero
 * and % takes the dividend's sign, x / 0 and x % 0 are "division by zero"
 * for every type (float8 too), float8 results that overflow to infinity
 * from finite operands are "value out of range: overflow". NUMERIC is a
 * scaled int128: + and - give scale max(s1, s2), * gives s1 + s2, the
 * precision grows as PostgreSQL's would and is capped at 38 digits (a
 * result that needs more is "numeric field overflow"); numeric / numeric
 * is double precision (DuckDB's rule; PostgreSQL keeps numeric). Floats
 * compare with NaN equal to NaN and above every number.
 *
 * Each kernel allocates its output, takes the strict validity (NULL in,
 * NULL out), runs one loop over the typed arrays with overflow flags
 * gathered branch-free, and only when a flag is set looks for the first
 * valid row that raised it (null rows compute on zeros and never fail).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fn_internal.h"

static const char *int_range_msg(hs_sql_tid t) {
  return t == HS_SQL_INT32 ? "integer out of range" : "bigint out of range";
}

/* ------------------------------------------------------------- integers */

#define INT_BIN(NAME, T, TID, BUILTIN)                                            \
  static hs_status NAME(KARGS) {                                                  \
    BEGIN();                                                                      \
    const T *a = args[0].data, *b = args[1].data;                                 \
    T *o = hs_sql_vec_mut_data(out);                                              \
    bool bad = false;                                                             \
    for (int64_t i = 0; i < n; i++) bad |= BUILTIN(a[i], b[i], &o[i]);            \
    if (HS_UNLIKELY(bad))                                                         \
      for (int64_t i = 0; i < n; i++) {                                           \
        T r;                                                                      \
        if (BUILTIN(a[i], b[i], &r) && ROW_OK(i)) FAIL("%s", int_range_msg(TID)); \
      }                                                                           \
    return HS_OK;                                                                 \
  }

INT_BIN(i32_add, int32_t, HS_SQL_INT32, __builtin_add_overflow)
INT_BIN(i32_sub, int32_t, HS_SQL_INT32, __builtin_sub_overflow)
INT_BIN(i32_mul, int32_t, HS_SQL_INT32, __builtin_mul_overflow)
INT_BIN(i64_add, int64_t, HS_SQL_INT64, __builtin_add_overflow)
INT_BIN(i64_sub, int64_t, HS_SQL_INT64, __builtin_sub_overflow)
INT_BIN(i64_mul, int64_t, HS_SQL_INT64, __builtin_mul_overflow)

#define INT_DIV(NAME, T, TID, IS_MOD)                                        \
  static hs_status NAME(KARGS) {                                             \
    BEGIN();                                                                 \
    const T *a = args[0].data, *b = args[1].data;                            \
    T *o = hs_sql_vec_mut_data(out);                                         \
    for (int64_t i = 0; i < n; i++) {                                        \
      T d = b[i];                                                            \
      if (HS_UNLIKELY(d == 0 || d == -1)) {                                  \
        if (d == 0) {                                                        \
          if (ROW_OK(i)) FAIL("division by zero");                           \
          o[i] = 0;                                                          \
        } else if (IS_MOD) {                                                 \
          o[i] = 0;                                                          \
        } else if (__builtin_sub_overflow((T)0, a[i], &o[i]) && ROW_OK(i)) { \
          FAIL("%s", int_range_msg(TID));                                    \
        }                                                                    \
      } else {                                                               \
        o[i] = IS_MOD ? a[i] % d : a[i] / d;                                 \
      }                                                                      \
    }                                                                        \
    return HS_OK;                                                            \
  }

INT_DIV(i32_div, int32_t, HS_SQL_INT32, 0)
INT_DIV(i32_mod, int32_t, HS_SQL_INT32, 1)
INT_DIV(i64_div, int64_t, HS_SQL_INT64, 0)
INT_DIV(i64_mod, int64_t, HS_SQL_INT64, 1)

#define INT_UN(NAME, T, TID, EXPR)                                                               \
  static hs_status NAME(KARGS) {                                                                 \
    BEGIN();                                                                                     \
    const T *a = args[0].data;                                                                   \
    T *o = hs_sql_vec_mut_data(out);                                                             \
    bool bad = false;                                                                            \
    for (int64_t i = 0; i < n; i++) {                                                            \
      T x = a[i];                                                                                \
      bad |= __builtin_sub_overflow((T)0, x, &o[i]);                                             \
      o[i] = EXPR;                                                                               \
    }                                                                                            \
    if (HS_UNLIKELY(bad))                                                                        \
      for (int64_t i = 0; i < n; i++) {                                                          \
        T r;                                                                                     \
        if (__builtin_sub_overflow((T)0, a[i], &r) && ROW_OK(i)) FAIL("%s", int_range_msg(TID)); \
      }                                                                                          \
    return HS_OK;                                                                                \
  }

INT_UN(i32_neg, int32_t, HS_SQL_INT32, o[i])
INT_UN(i64_neg, int64_t, HS_SQL_INT64, o[i])
INT_UN(i32_abs, int32_t, HS_SQL_INT32, x < 0 ? o[i] : x)
INT_UN(i64_abs, int64_t, HS_SQL_INT64, x < 0 ? o[i] : x)

/* gcd / lcm (PostgreSQL's: non-negative; gcd(INT_MIN, 0) and lcm past the
 * range are out of range) */
#define INT_GCD(NAME, T, TID, TMAX, LCM)                                                \
  static hs_status NAME(KARGS) {                                                        \
    BEGIN();                                                                            \
    const T *a = args[0].data, *b = args[1].data;                                       \
    T *o = hs_sql_vec_mut_data(out);                                                    \
    for (int64_t i = 0; i < n; i++) {                                                   \
      uint64_t x = a[i] < 0 ? 0 - (uint64_t)a[i] : (uint64_t)a[i];                      \
      uint64_t y = b[i] < 0 ? 0 - (uint64_t)b[i] : (uint64_t)b[i];                      \
      uint64_t g = x, h = y;                                                            \
      while (h != 0) {                                                                  \
        uint64_t r = g % h;                                                             \
        g = h;                                                                          \
        h = r;                                                                          \
      }                                                                                 \
      uint64_t r = g;                                                                   \
      if (LCM) {                                                                        \
        r = 0;                                                                          \
        if (x != 0 && y != 0 && __builtin_mul_overflow(x / g, y, &r)) r = UINT64_MAX;   \
      }                                                                                 \
      if (HS_UNLIKELY(r > (uint64_t)TMAX) && ROW_OK(i)) FAIL("%s", int_range_msg(TID)); \
      o[i] = (T)r;                                                                      \
    }                                                                                   \
    return HS_OK;                                                                       \
  }

INT_GCD(i32_gcd, int32_t, HS_SQL_INT32, INT32_MAX, 0)
INT_GCD(i64_gcd, int64_t, HS_SQL_INT64, INT64_MAX, 0)
INT_GCD(i32_lcm, int32_t, HS_SQL_INT32, INT32_MAX, 1)
INT_GCD(i64_lcm, int64_t, HS_SQL_INT64, INT64_MAX, 1)

/* unary plus and other identities: the argument itself */
static hs_status identity(KARGS) {
  if (args[0].type.id == HS_SQL_NULLTYPE)
    return hs_sql_kernel_begin(args, n_args, n, ret, out, err);
  hs_status st = hs_sql_vec_share(out, &args[0], err);
  if (st == HS_OK) out->type = ret;
  return st;
}

/* --------------------------------------------------------------- floats */

/* The loop computes; a second, vectorizable pass flags infinite or zero
 * results, and only then are the operands looked at (a result is an
 * overflow when it is infinite from finite operands, an underflow when it
 * is zero from non-zero ones). */
#define F64_BIN(NAME, OP, UNDER)                                                                 \
  static hs_status NAME(KARGS) {                                                                 \
    BEGIN();                                                                                     \
    const double *a = args[0].data, *b = args[1].data;                                           \
    double *o = hs_sql_vec_mut_data(out);                                                        \
    for (int64_t i = 0; i < n; i++) o[i] = a[i] OP b[i];                                         \
    int odd = 0;                                                                                 \
    for (int64_t i = 0; i < n; i++) odd |= (fabs(o[i]) == INFINITY) | (UNDER && o[i] == 0);      \
    if (HS_UNLIKELY(odd))                                                                        \
      for (int64_t i = 0; i < n; i++) {                                                          \
        if (!ROW_OK(i)) continue;                                                                \
        if (isinf(o[i]) && !isinf(a[i]) && !isinf(b[i])) FAIL("value out of range: overflow");   \
        if (UNDER && o[i] == 0 && a[i] != 0 && b[i] != 0) FAIL("value out of range: underflow"); \
      }                                                                                          \
    return HS_OK;                                                                                \
  }

F64_BIN(f64_add, +, 0)
F64_BIN(f64_sub, -, 0)
F64_BIN(f64_mul, *, 1)

static hs_status f64_div(KARGS) {
  BEGIN();
  const double *a = args[0].data, *b = args[1].data;
  double *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) o[i] = a[i] / b[i];
  int odd = 0;
  for (int64_t i = 0; i < n; i++) odd |= (fabs(o[i]) == INFINITY) | (o[i] == 0) | (b[i] == 0);
  if (HS_UNLIKELY(odd))
    for (int64_t i = 0; i < n; i++) {
      if (!ROW_OK(i)) continue;
      if (b[i] == 0) FAIL("division by zero");
      if (isinf(o[i]) && !isinf(a[i])) FAIL("value out of range: overflow");
      if (o[i] == 0 && a[i] != 0 && !isinf(b[i])) FAIL("value out of range: underflow");
    }
  return HS_OK;
}

static hs_status f64_mod(KARGS) {
  BEGIN();
  const double *a = args[0].data, *b = args[1].data;
  double *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (HS_UNLIKELY(b[i] == 0) && ROW_OK(i)) FAIL("division by zero");
    o[i] = fmod(a[i], b[i]);
  }
  return HS_OK;
}

/* One-argument float functions: EXPR of x, with a domain check. */
#define F64_UN(NAME, EXPR, BAD, MSG)             \
  static hs_status NAME(KARGS) {                 \
    BEGIN();                                     \
    const double *a = args[0].data;              \
    double *o = hs_sql_vec_mut_data(out);        \
    int bad = 0;                                 \
    for (int64_t i = 0; i < n; i++) {            \
      double x = a[i];                           \
      bad |= (BAD);                              \
      o[i] = EXPR;                               \
    }                                            \
    if (HS_UNLIKELY(bad))                        \
      for (int64_t i = 0; i < n; i++) {          \
        double x = a[i];                         \
        (void)x;                                 \
        if ((BAD) && ROW_OK(i)) FAIL("%s", MSG); \
      }                                          \
    return HS_OK;                                \
  }

F64_UN(f64_neg, -x, 0, "")
F64_UN(f64_abs, fabs(x), 0, "")
F64_UN(f64_round, rint(x), 0, "")
F64_UN(f64_trunc, trunc(x), 0, "")
F64_UN(f64_floor, floor(x), 0, "")
F64_UN(f64_ceil, ceil(x), 0, "")
F64_UN(f64_sign, x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0, 0, "")
F64_UN(f64_sqrt, sqrt(x), x < 0, "cannot take square root of a negative number")
F64_UN(f64_cbrt, cbrt(x), 0, "")
F64_UN(f64_exp, exp(x), (int)((isinf(exp(x)) != 0) & !isinf(x)) | (int)((exp(x) == 0) & !isinf(x)),
       "value out of range: exp() result overflows or underflows")
F64_UN(f64_ln, log(x), x <= 0, "cannot take logarithm of zero or a negative number")
F64_UN(f64_log10, log10(x), x <= 0, "cannot take logarithm of zero or a negative number")
F64_UN(f64_degrees, x *(180.0 / M_PI), 0, "")
F64_UN(f64_radians, x *(M_PI / 180.0), 0, "")
F64_UN(f64_sin, sin(x), isinf(x), "input is out of range")
F64_UN(f64_cos, cos(x), isinf(x), "input is out of range")
F64_UN(f64_tan, tan(x), isinf(x), "input is out of range")
F64_UN(f64_asin, asin(x), x<-1 || x> 1, "input is out of range")
F64_UN(f64_acos, acos(x), x<-1 || x> 1, "input is out of range")
F64_UN(f64_atan, atan(x), 0, "")

static hs_status f64_atan2(KARGS) {
  BEGIN();
  const double *a = args[0].data, *b = args[1].data;
  double *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) o[i] = atan2(a[i], b[i]);
  return HS_OK;
}

static hs_status f64_power(KARGS) {
  BEGIN();
  const double *a = args[0].data, *b = args[1].data;
  double *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    double x = a[i], y = b[i];
    if (HS_UNLIKELY(x == 0 && y < 0) && ROW_OK(i))
      FAIL("zero raised to a negative power is undefined");
    if (HS_UNLIKELY(x < 0 && floor(y) != y && !isinf(y) && !isnan(y)) && ROW_OK(i))
      FAIL("a negative number raised to a non-integer power yields a complex result");
    double r = pow(x, y);
    if (HS_UNLIKELY(isinf(r) && !isinf(x) && !isinf(y)) && ROW_OK(i) && x != 0)
      FAIL("value out of range: overflow");
    o[i] = r;
  }
  return HS_OK;
}

/* log(b, x): logarithm of x to base b. */
static hs_status f64_logb(KARGS) {
  BEGIN();
  const double *b = args[0].data, *x = args[1].data;
  double *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (HS_UNLIKELY((b[i] <= 0 || x[i] <= 0)) && ROW_OK(i))
      FAIL("cannot take logarithm of zero or a negative number");
    double lb = log(b[i]);
    if (HS_UNLIKELY(lb == 0) && ROW_OK(i)) FAIL("division by zero");
    o[i] = log(x[i]) / lb;
  }
  return HS_OK;
}

/* round(x, digits) for double precision (DuckDB's; half away from zero). */
static hs_status f64_round_n(KARGS) {
  BEGIN();
  const double *a = args[0].data;
  const int32_t *d = args[1].data;
  double *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    int32_t k = d[i] > 308 ? 308 : d[i] < -308 ? -308 : d[i];
    double x = a[i];
    if (isinf(x) || isnan(x)) {
      o[i] = x;
      continue;
    }
    if (k >= 0) {
      double m = pow(10.0, k);
      double y = round(x * m) / m;
      o[i] = isinf(x * m) ? x : y;
    } else {
      double m = pow(10.0, -k);
      o[i] = round(x / m) * m;
    }
  }
  return HS_OK;
}

static uint64_t rng_next(void) {
  static _Thread_local uint64_t state;
  if (state == 0)
    state = (uint64_t)hs_now_ns() ^ (uint64_t)(uintptr_t)&state ^ 0x9E3779B97F4A7C15ull;
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static hs_status f64_random(KARGS) {
  hs_status st = hs_sql_vec_alloc(out, ret, n, false, err);
  if (st != HS_OK) return st;
  double *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) o[i] = (double)(rng_next() >> 11) * 0x1.0p-53;
  return HS_OK;
}

static hs_status f64_pi(KARGS) {
  hs_status st = hs_sql_vec_alloc(out, ret, n, false, err);
  if (st != HS_OK) return st;
  double *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) o[i] = M_PI;
  return HS_OK;
}

/* -------------------------------------------------------------- numeric */

static bool rt_same(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  *ret = a[0];
  return true;
}

static int imax(int a, int b) {
  return a > b ? a : b;
}
static int imin(int a, int b) {
  return a < b ? a : b;
}

static bool rt_num_add(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  int p1 = hs_sql_num_prec(a[0]), p2 = hs_sql_num_prec(a[1]);
  int s = imax(a[0].b, a[1].b);
  *ret = (hs_sql_type){HS_SQL_NUMERIC, imin(38, imax(p1 - a[0].b, p2 - a[1].b) + 1 + s), s};
  return true;
}

static bool rt_num_mul(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  int s = a[0].b + a[1].b;
  if (s > 38) {
    snprintf(why, wl,
             "the product's scale %d exceeds 38 digits (cast an operand to a smaller scale)", s);
    return false;
  }
  int p = imin(38, imax(s, hs_sql_num_prec(a[0]) + hs_sql_num_prec(a[1])));
  *ret = (hs_sql_type){HS_SQL_NUMERIC, p, s};
  return true;
}

static bool rt_num_mod(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  int p1 = hs_sql_num_prec(a[0]), p2 = hs_sql_num_prec(a[1]);
  int s = imax(a[0].b, a[1].b);
  *ret = (hs_sql_type){HS_SQL_NUMERIC, imin(38, imax(1, imin(p1 - a[0].b, p2 - a[1].b) + s)), s};
  if (ret->a < s) ret->a = s;
  return true;
}

/* round / ceil / floor to an integer: one more integer digit. */
static bool rt_num_int1(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  int p = hs_sql_num_prec(a[0]);
  *ret = (hs_sql_type){HS_SQL_NUMERIC, imin(38, imax(1, p - a[0].b + 1)), 0};
  return true;
}

static bool rt_num_int0(const hs_sql_type *a, int32_t n, hs_sql_type *ret, char *why, size_t wl) {
  int p = hs_sql_num_prec(a[0]);
  *ret = (hs_sql_type){HS_SQL_NUMERIC, imax(1, p - a[0].b), 0};
  return true;
}

/* The scales a kernel was bound with must be the ones its vectors carry
 * (the result's scale is at least each operand's for + - %, their sum for *). */
#define NUM_SCALES_OK(cond)                                                                        \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      hs_sql_vec_release(out);                                                                     \
      return hs_sql_errf(err, HS_ERR_INTERNAL, hs_sql_epos(e),                                     \
                         "numeric scales %d and %d do not fit the result's scale %d",              \
                         (int)args[0].type.b, (int)(n_args > 1 ? args[1].type.b : 0), (int)ret.b); \
    }                                                                                              \
  } while (0)

#define NUM_OVERFLOW() \
  FAIL("numeric field overflow: the result needs more than numeric(%d,%d) holds", ret.a, ret.b)

/* Do all of a[0..n) fit in int64? (Then a product of two such, or of one
 * and a power of ten up to 10^18, cannot overflow int128: the overflow
 * builtins, a dozen instructions a row, can go.) */
static bool num_all_i64(const hs_sql_i128 *a, int64_t n) {
  bool ok = true;
  for (int64_t i = 0; i < n; i++) ok &= a[i] == (hs_sql_i128)(int64_t)a[i];
  return ok;
}

static hs_status num_addsub(KARGS, bool sub) {
  BEGIN();
  const hs_sql_i128 *a = args[0].data, *b = args[1].data;
  hs_sql_i128 *o = hs_sql_vec_mut_data(out);
  int s = ret.b;
  NUM_SCALES_OK(s >= args[0].type.b && s >= args[1].type.b && s <= 38);
  hs_sql_i128 fa = hs_sql_pow10[s - args[0].type.b], fb = hs_sql_pow10[s - args[1].type.b];
  hs_sql_i128 lim = hs_sql_pow10[hs_sql_num_prec(ret)];
  bool bad = false;
  if (fa == 1 && fb == 1) {
    for (int64_t i = 0; i < n; i++) {
      hs_sql_i128 r = sub ? a[i] - b[i] : a[i] + b[i]; /* |a|, |b| < 10^38: no int128 overflow */
      o[i] = r;
      bad |= (r >= lim) | (r <= -lim);
    }
  } else if (fa <= INT64_MAX && fb <= INT64_MAX && num_all_i64(a, n) && num_all_i64(b, n)) {
    const int64_t sa = (int64_t)fa, sb = (int64_t)fb;
    for (int64_t i = 0; i < n; i++) {
      hs_sql_i128 x = (hs_sql_i128)(int64_t)a[i] * sa, y = (hs_sql_i128)(int64_t)b[i] * sb;
      hs_sql_i128 r = sub ? x - y : x + y; /* |x|, |y| < 2^126 */
      o[i] = r;
      bad |= (r >= lim) | (r <= -lim);
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      hs_sql_i128 x, y, r;
      bool ov =
          (int)__builtin_mul_overflow(a[i], fa, &x) | (int)__builtin_mul_overflow(b[i], fb, &y);
      ov |= sub ? __builtin_sub_overflow(x, y, &r) : __builtin_add_overflow(x, y, &r);
      o[i] = r;
      bad |= ov | (r >= lim) | (r <= -lim);
    }
  }
  if (HS_UNLIKELY(bad))
    for (int64_t i = 0; i < n; i++) {
      if (!ROW_OK(i)) continue;
      hs_sql_i128 x, y, r;
      bool ov =
          (int)__builtin_mul_overflow(a[i], fa, &x) | (int)__builtin_mul_overflow(b[i], fb, &y);
      ov |= sub ? __builtin_sub_overflow(x, y, &r) : __builtin_add_overflow(x, y, &r);
      if (ov || r >= lim || r <= -lim) NUM_OVERFLOW();
    }
  return HS_OK;
}

static hs_status num_add(KARGS) {
  return num_addsub(e, args, n_args, n, ret, out, err, false);
}
static hs_status num_sub(KARGS) {
  return num_addsub(e, args, n_args, n, ret, out, err, true);
}

static hs_status num_mul(KARGS) {
  BEGIN();
  const hs_sql_i128 *a = args[0].data, *b = args[1].data;
  hs_sql_i128 *o = hs_sql_vec_mut_data(out);
  NUM_SCALES_OK(ret.b == args[0].type.b + args[1].type.b);
  hs_sql_i128 lim = hs_sql_pow10[hs_sql_num_prec(ret)];
  if (num_all_i64(a, n) && num_all_i64(b, n)) {
    bool bad = false;
    for (int64_t i = 0; i < n; i++) {
      hs_sql_i128 r = (hs_sql_i128)(int64_t)a[i] * (int64_t)b[i]; /* |r| <= 2^126 */
      o[i] = r;
      bad |= (r >= lim) | (r <= -lim);
    }
    if (HS_LIKELY(!bad)) return HS_OK;
  }
  for (int64_t i = 0; i < n; i++) {
    hs_sql_i128 r;
    bool ov = __builtin_mul_overflow(a[i], b[i], &r);
    o[i] = r;
    if (HS_UNLIKELY(ov || r >= lim || r <= -lim) && ROW_OK(i)) NUM_OVERFLOW();
  }
  return HS_OK;
}

static double num_f64(hs_sql_i128 v, int scale) {
  hs_sql_i128 lim = (hs_sql_i128)1 << 53;
  if (v < lim && v > -lim && scale <= 22) return (double)(int64_t)v / (double)hs_sql_pow10[scale];
  char buf[HS_SQL_FMT_MAX];
  hs_sql_fmt_numeric(v, scale, buf);
  return strtod(buf, NULL);
}

static hs_status num_div(KARGS) {
  BEGIN();
  const hs_sql_i128 *a = args[0].data, *b = args[1].data;
  double *o = hs_sql_vec_mut_data(out);
  int sa = args[0].type.b, sb = args[1].type.b;
  for (int64_t i = 0; i < n; i++) {
    if (HS_UNLIKELY(b[i] == 0)) {
      if (ROW_OK(i)) FAIL("division by zero");
      o[i] = 0;
      continue;
    }
    o[i] = num_f64(a[i], sa) / num_f64(b[i], sb);
  }
  return HS_OK;
}

static hs_status num_mod(KARGS) {
  BEGIN();
  const hs_sql_i128 *a = args[0].data, *b = args[1].data;
  hs_sql_i128 *o = hs_sql_vec_mut_data(out);
  int s = ret.b;
  NUM_SCALES_OK(s >= args[0].type.b && s >= args[1].type.b && s <= 38);
  hs_sql_i128 fa = hs_sql_pow10[s - args[0].type.b], fb = hs_sql_pow10[s - args[1].type.b];
  for (int64_t i = 0; i < n; i++) {
    hs_sql_i128 x, y;
    bool ov = (int)__builtin_mul_overflow(a[i], fa, &x) | (int)__builtin_mul_overflow(b[i], fb, &y);
    if (HS_UNLIKELY(ov || y == 0)) {
      if (!ROW_OK(i)) {
        o[i] = 0;
        continue;
      }
      if (ov) NUM_OVERFLOW();
      FAIL("division by zero");
    }
    o[i] = x % y;
  }
  return HS_OK;
}

static hs_status num_neg(KARGS) {
  BEGIN();
  const hs_sql_i128 *a = args[0].data;
  hs_sql_i128 *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) o[i] = -a[i];
  return HS_OK;
}

static hs_status num_abs(KARGS) {
  BEGIN();
  const hs_sql_i128 *a = args[0].data;
  hs_sql_i128 *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) o[i] = a[i] < 0 ? -a[i] : a[i];
  return HS_OK;
}

static hs_status num_sign(KARGS) {
  BEGIN();
  const hs_sql_i128 *a = args[0].data;
  hs_sql_i128 *o = hs_sql_vec_mut_data(out);
  hs_sql_i128 one = hs_sql_pow10[ret.b];
  for (int64_t i = 0; i < n; i++) o[i] = a[i] > 0 ? one : a[i] < 0 ? -one : 0;
  return HS_OK;
}

/* Integer part of v / 10^k by mode: 0 half away from zero, 1 toward zero,
 * 2 toward -inf, 3 toward +inf. */
static hs_sql_i128 num_div_round(hs_sql_i128 v, int k, int mode) {
  if (k <= 0) return v;
  if (k > 38) {
    if (mode == 2 && v < 0) return -1;
    if (mode == 3 && v > 0) return 1;
    return 0;
  }
  hs_sql_i128 p = hs_sql_pow10[k], q = v / p, r = v % p;
  switch (mode) {
  case 0:
    if ((r < 0 ? -r : r) * 2 >= p) q += v < 0 ? -1 : 1;
    break;
  case 2:
    if (r < 0) q -= 1;
    break;
  case 3:
    if (r > 0) q += 1;
    break;
  default: break;
  }
  return q;
}

#define NUM_TO_INT(NAME, MODE)                                           \
  static hs_status NAME(KARGS) {                                         \
    BEGIN();                                                             \
    const hs_sql_i128 *a = args[0].data;                                 \
    hs_sql_i128 *o = hs_sql_vec_mut_data(out);                           \
    int k = args[0].type.b - ret.b;                                      \
    NUM_SCALES_OK(k >= 0);                                               \
    for (int64_t i = 0; i < n; i++) o[i] = num_div_round(a[i], k, MODE); \
    return HS_OK;                                                        \
  }

NUM_TO_INT(num_round, 0)
NUM_TO_INT(num_trunc, 1)
NUM_TO_INT(num_floor, 2)
NUM_TO_INT(num_ceil, 3)

/* round(x, d) / trunc(x, d) for numeric: x rounded to d decimal places,
 * kept at x's scale (PostgreSQL's result takes scale d). */
static hs_status num_round_n_mode(KARGS, int mode) {
  BEGIN();
  const hs_sql_i128 *a = args[0].data;
  const int32_t *d = args[1].data;
  hs_sql_i128 *o = hs_sql_vec_mut_data(out);
  int s = args[0].type.b;
  NUM_SCALES_OK(ret.b == s);
  hs_sql_i128 lim = hs_sql_pow10[hs_sql_num_prec(ret)];
  for (int64_t i = 0; i < n; i++) {
    int64_t k = (int64_t)s - d[i]; /* digits to drop */
    if (k <= 0) {
      o[i] = a[i];
      continue;
    }
    if (k > 38) {
      o[i] = 0;
      continue;
    }
    hs_sql_i128 q = num_div_round(a[i], (int)k, mode), r;
    if (__builtin_mul_overflow(q, hs_sql_pow10[k], &r) || r >= lim || r <= -lim) {
      if (ROW_OK(i)) NUM_OVERFLOW();
      r = 0;
    }
    o[i] = r;
  }
  return HS_OK;
}
static hs_status num_round_n(KARGS) {
  return num_round_n_mode(e, args, n_args, n, ret, out, err, 0);
}
static hs_status num_trunc_n(KARGS) {
  return num_round_n_mode(e, args, n_args, n, ret, out, err, 1);
}

/* ---------------------------------------------------------- comparisons */

static inline int cmp_f64(double a, double b) {
  if (a != a) return b != b ? 0 : 1;
  if (b != b) return -1;
  return (a > b) - (a < b);
}

static inline int cmp_str(hs_sql_str a, hs_sql_str b) {
  uint32_t m = a.len < b.len ? a.len : b.len;
  int c = m ? memcmp(a.ptr, b.ptr, m) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  return (a.len > b.len) - (a.len < b.len);
}

static inline hs_sql_i128 iv_span(hs_sql_interval v) {
  return ((hs_sql_i128)v.months * 30 + v.days) * HS_SQL_USECS_PER_DAY + v.micros;
}

static inline int cmp_iv(hs_sql_interval a, hs_sql_interval b) {
  hs_sql_i128 x = iv_span(a), y = iv_span(b);
  return (x > y) - (x < y);
}

#define CMP_NUM(x, y) (((x) > (y)) - ((x) < (y)))

#define CMP_ONE(TN, T, CMP3, OPN, OP)                             \
  static hs_status cmp_##TN##_##OPN(KARGS) {                      \
    BEGIN();                                                      \
    const T *a = args[0].data, *b = args[1].data;                 \
    uint8_t *o = hs_sql_vec_mut_data(out);                        \
    for (int64_t i = 0; i < n; i++) o[i] = CMP3(a[i], b[i]) OP 0; \
    return HS_OK;                                                 \
  }

#define CMP_ALL(TN, T, CMP3)   \
  CMP_ONE(TN, T, CMP3, eq, ==) \
  CMP_ONE(TN, T, CMP3, ne, !=) \
  CMP_ONE(TN, T, CMP3, lt, <)  \
  CMP_ONE(TN, T, CMP3, le, <=) \
  CMP_ONE(TN, T, CMP3, gt, >)  \
  CMP_ONE(TN, T, CMP3, ge, >=)

CMP_ALL(bo, uint8_t, CMP_NUM)
CMP_ALL(i32, int32_t, CMP_NUM)
CMP_ALL(i64, int64_t, CMP_NUM)
CMP_ALL(f64, double, cmp_f64)
CMP_ALL(str, hs_sql_str, cmp_str)
CMP_ALL(iv, hs_sql_interval, cmp_iv)

/* numeric operands of different scales: the smaller scale is raised; when
 * that overflows int128 its magnitude exceeds anything the other holds. */
static inline int cmp_dec(hs_sql_i128 a, int sa, hs_sql_i128 b, int sb) {
  if (sa < sb) {
    hs_sql_i128 x;
    if (!hs_sql_num_rescale(a, sa, sb, &x)) return a < 0 ? -1 : 1;
    a = x;
  } else if (sb < sa) {
    hs_sql_i128 y;
    if (!hs_sql_num_rescale(b, sb, sa, &y)) return b < 0 ? 1 : -1;
    b = y;
  }
  return (a > b) - (a < b);
}

#define CMP_DEC_ONE(OPN, OP)                                                   \
  static hs_status cmp_dec_##OPN(KARGS) {                                      \
    BEGIN();                                                                   \
    const hs_sql_i128 *a = args[0].data, *b = args[1].data;                    \
    uint8_t *o = hs_sql_vec_mut_data(out);                                     \
    int sa = args[0].type.b, sb = args[1].type.b;                              \
    if (sa == sb)                                                              \
      for (int64_t i = 0; i < n; i++) o[i] = a[i] OP b[i];                     \
    else                                                                       \
      for (int64_t i = 0; i < n; i++) o[i] = cmp_dec(a[i], sa, b[i], sb) OP 0; \
    return HS_OK;                                                              \
  }

CMP_DEC_ONE(eq, ==)
CMP_DEC_ONE(ne, !=)
CMP_DEC_ONE(lt, <)
CMP_DEC_ONE(le, <=)
CMP_DEC_ONE(gt, >)
CMP_DEC_ONE(ge, >=)

/* ---------------------------------------------------------------- table */

#define B HS_SQL_BOOL
#define I4 HS_SQL_INT32
#define I8 HS_SQL_INT64
#define F8 HS_SQL_FLOAT64
#define NU HS_SQL_NUMERIC
#define TX HS_SQL_TEXT
#define BY HS_SQL_BYTEA
#define DT HS_SQL_DATE
#define TS HS_SQL_TIMESTAMP
#define TZ HS_SQL_TIMESTAMPTZ
#define IV HS_SQL_INTERVAL

#define FN2(NAME, A, B_, R, RT, K) \
  { NAME, 2, {A, B_}, R, RT, K, false }
#define FN1(NAME, A, R, RT, K) \
  { NAME, 1, {A}, R, RT, K, false }

#define CMP_ROWS(T, TN)                                                                \
  FN2("=", T, T, B, NULL, cmp_##TN##_eq), FN2("<>", T, T, B, NULL, cmp_##TN##_ne),     \
      FN2("!=", T, T, B, NULL, cmp_##TN##_ne), FN2("<", T, T, B, NULL, cmp_##TN##_lt), \
      FN2("<=", T, T, B, NULL, cmp_##TN##_le), FN2(">", T, T, B, NULL, cmp_##TN##_gt), \
      FN2(">=", T, T, B, NULL, cmp_##TN##_ge)

/* Preferred overloads first (func.c breaks ties by order). */
const hs_sql_fn hs_sql_fns_arith[] = {
    FN2("+", I4, I4, I4, NULL, i32_add),
    FN2("+", I8, I8, I8, NULL, i64_add),
    FN2("+", NU, NU, NU, rt_num_add, num_add),
    FN2("+", F8, F8, F8, NULL, f64_add),
    FN2("-", I4, I4, I4, NULL, i32_sub),
    FN2("-", I8, I8, I8, NULL, i64_sub),
    FN2("-", NU, NU, NU, rt_num_add, num_sub),
    FN2("-", F8, F8, F8, NULL, f64_sub),
    FN2("*", I4, I4, I4, NULL, i32_mul),
    FN2("*", I8, I8, I8, NULL, i64_mul),
    FN2("*", NU, NU, NU, rt_num_mul, num_mul),
    FN2("*", F8, F8, F8, NULL, f64_mul),
    FN2("/", I4, I4, I4, NULL, i32_div),
    FN2("/", I8, I8, I8, NULL, i64_div),
    FN2("/", NU, NU, F8, NULL, num_div),
    FN2("/", F8, F8, F8, NULL, f64_div),
    FN2("%", I4, I4, I4, NULL, i32_mod),
    FN2("%", I8, I8, I8, NULL, i64_mod),
    FN2("%", NU, NU, NU, rt_num_mod, num_mod),
    FN2("%", F8, F8, F8, NULL, f64_mod),
    FN2("mod", I4, I4, I4, NULL, i32_mod),
    FN2("mod", I8, I8, I8, NULL, i64_mod),
    FN2("mod", NU, NU, NU, rt_num_mod, num_mod),
    FN2("mod", F8, F8, F8, NULL, f64_mod),
    FN1("-", I4, I4, NULL, i32_neg),
    FN1("-", I8, I8, NULL, i64_neg),
    FN1("-", NU, NU, rt_same, num_neg),
    FN1("-", F8, F8, rt_same, f64_neg),
    FN1("+", I4, I4, NULL, identity),
    FN1("+", I8, I8, NULL, identity),
    FN1("+", NU, NU, rt_same, identity),
    FN1("+", F8, F8, rt_same, identity),
    CMP_ROWS(B, bo),
    CMP_ROWS(I4, i32),
    CMP_ROWS(I8, i64),
    CMP_ROWS(NU, dec),
    CMP_ROWS(F8, f64),
    CMP_ROWS(TX, str),
    CMP_ROWS(BY, str),
    CMP_ROWS(DT, i32),
    CMP_ROWS(TS, i64),
    CMP_ROWS(TZ, i64),
    CMP_ROWS(IV, iv),
    FN1("abs", I4, I4, NULL, i32_abs),
    FN1("abs", I8, I8, NULL, i64_abs),
    FN1("abs", NU, NU, rt_same, num_abs),
    FN1("abs", F8, F8, rt_same, f64_abs),
    FN1("round", F8, F8, NULL, f64_round),
    FN1("round", NU, NU, rt_num_int1, num_round),
    FN2("round", NU, I4, NU, rt_same, num_round_n),
    FN2("round", F8, I4, F8, NULL, f64_round_n),
    FN1("trunc", F8, F8, NULL, f64_trunc),
    FN1("trunc", NU, NU, rt_num_int0, num_trunc),
    FN2("trunc", NU, I4, NU, rt_same, num_trunc_n),
    FN1("floor", F8, F8, NULL, f64_floor),
    FN1("floor", NU, NU, rt_num_int1, num_floor),
    FN1("ceil", F8, F8, NULL, f64_ceil),
    FN1("ceil", NU, NU, rt_num_int1, num_ceil),
    FN1("ceiling", F8, F8, NULL, f64_ceil),
    FN1("ceiling", NU, NU, rt_num_int1, num_ceil),
    FN2("gcd", I4, I4, I4, NULL, i32_gcd),
    FN2("gcd", I8, I8, I8, NULL, i64_gcd),
    FN2("lcm", I4, I4, I4, NULL, i32_lcm),
    FN2("lcm", I8, I8, I8, NULL, i64_lcm),
    FN1("sign", F8, F8, NULL, f64_sign),
    FN1("sign", NU, NU, rt_same, num_sign),
    FN1("sqrt", F8, F8, NULL, f64_sqrt),
    FN1("cbrt", F8, F8, NULL, f64_cbrt),
    FN1("exp", F8, F8, NULL, f64_exp),
    FN1("ln", F8, F8, NULL, f64_ln),
    FN1("log", F8, F8, NULL, f64_log10),
    FN1("log10", F8, F8, NULL, f64_log10),
    FN2("log", F8, F8, F8, NULL, f64_logb),
    FN2("power", F8, F8, F8, NULL, f64_power),
    FN2("pow", F8, F8, F8, NULL, f64_power),
    FN1("degrees", F8, F8, NULL, f64_degrees),
    FN1("radians", F8, F8, NULL, f64_radians),
    FN1("sin", F8, F8, NULL, f64_sin),
    FN1("cos", F8, F8, NULL, f64_cos),
    FN1("tan", F8, F8, NULL, f64_tan),
    FN1("asin", F8, F8, NULL, f64_asin),
    FN1("acos", F8, F8, NULL, f64_acos),
    FN1("atan", F8, F8, NULL, f64_atan),
    FN2("atan2", F8, F8, F8, NULL, f64_atan2),
    {"pi", 0, {0}, F8, NULL, f64_pi, false},
    {"random", 0, {0}, F8, NULL, f64_random, true},
};
const size_t hs_sql_fns_arith_n = sizeof hs_sql_fns_arith / sizeof hs_sql_fns_arith[0];
