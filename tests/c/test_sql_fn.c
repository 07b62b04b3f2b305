/*
 * test_sql_fn.c — the SQL layer's casts and scalar functions (cast.c,
 * fn_arith.c, fn_string.c, fn_time.c) against reference computations:
 * integer arithmetic against __int128 with explicit overflow checks,
 * numeric against an independent scaled-int128 computation, float text
 * forms round-tripping through strtod, dates against civil.c, string
 * functions against straightforward reference code, LIKE against a
 * recursive matcher; plus PostgreSQL's edge cases (INT_MIN / -1, division
 * by zero, NULLs, NaN and infinities, empty strings, multibyte UTF-8).
 */
#include <ctype.h>
#include <math.h>

#include "hs_test.h"
#include "sql/fn_internal.h"

/* ------------------------------------------------------------- helpers */

static hs_sql_vec mk(hs_sql_type t, const void *data, const uint8_t *valid, int64_t n) {
  hs_sql_vec v;
  hs_error err = {0};
  hs_sql_vec_alloc(&v, t, n, valid != NULL, &err);
  size_t w = hs_sql_vec_width(t);
  if (data != NULL) memcpy(hs_sql_vec_mut_data(&v), data, w * (size_t)n);
  if (valid != NULL) memcpy(hs_sql_vec_mut_valid(&v), valid, (size_t)n);
  return v;
}

static hs_sql_vec mk_text(const char *const *s, int64_t n) {
  hs_sql_vec v;
  hs_error err = {0};
  bool nulls = false;
  for (int64_t i = 0; i < n; i++) nulls |= s[i] == NULL;
  hs_sql_vec_alloc(&v, hs_sql_type_of(HS_SQL_TEXT), n, nulls, &err);
  hs_sql_str *o = hs_sql_vec_mut_data(&v);
  for (int64_t i = 0; i < n; i++) {
    if (s[i] == NULL) continue;
    size_t len = strlen(s[i]);
    char *p = hs_sql_vec_add_bytes(&v, len + 1, &err);
    memcpy(p, s[i], len);
    o[i].ptr = p;
    o[i].len = (uint32_t)len;
    if (nulls) hs_sql_vec_mut_valid(&v)[i] = 1;
  }
  return v;
}

static bool str_is(hs_sql_str s, const char *want) {
  return s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0;
}

/* Resolve `name` for exactly these argument types and run its kernel. */
static hs_status call(const char *name, const hs_sql_vec *args, int32_t n_args, int64_t n,
                      hs_sql_vec *out, hs_error *err) {
  hs_sql_type types[HS_SQL_FN_ARGS_MAX] = {{0}};
  for (int32_t i = 0; i < n_args; i++) types[i] = args[i].type;
  hs_sql_fn_match m;
  hs_status st = hs_sql_fn_resolve(name, types, NULL, n_args, &m, err);
  if (st != HS_OK) return st;
  for (int32_t i = 0; i < n_args; i++)
    if (m.cast_to[i].id != args[i].type.id) {
      return hs_error_set(err, HS_ERR_INTERNAL, "%s: resolved to another overload", name);
    }
  memset(out, 0, sizeof *out);
  return m.fn->kernel(NULL, args, n_args, n, m.ret, out, err);
}

static const hs_sql_type T_I32 = {HS_SQL_INT32, 0, 0}, T_I64 = {HS_SQL_INT64, 0, 0},
                         T_F64 = {HS_SQL_FLOAT64, 0, 0}, T_TEXT = {HS_SQL_TEXT, 0, 0},
                         T_BOOL = {HS_SQL_BOOL, 0, 0}, T_DATE = {HS_SQL_DATE, 0, 0},
                         T_TS = {HS_SQL_TIMESTAMP, 0, 0}, T_TSTZ = {HS_SQL_TIMESTAMPTZ, 0, 0},
                         T_IV = {HS_SQL_INTERVAL, 0, 0}, T_BYTEA = {HS_SQL_BYTEA, 0, 0};

static uint64_t g_seed = 0x5eed;
static uint64_t rnd(void) {
  return hs_test_rand(&g_seed);
}

/* A random int64 from a mix of distributions: small, near the int32 and
 * int64 limits, and anything. */
static int64_t rnd_i64(int bits) {
  uint64_t r = rnd();
  int64_t lim = bits == 32 ? INT32_MAX : INT64_MAX;
  int64_t lo = bits == 32 ? INT32_MIN : INT64_MIN;
  switch (r % 6) {
  case 0: return (int64_t)(rnd() % 21) - 10;
  case 1: return lim - (int64_t)(rnd() % 4);
  case 2: return lo + (int64_t)(rnd() % 4);
  case 3: return bits == 32 ? (int32_t)rnd() : (int64_t)rnd();
  case 4:
    return bits == 32 ? (int32_t)(rnd() % 100000) - 50000
                      : (int64_t)(rnd() % 4000000000ull) - 2000000000;
  default: return r % 2 ? -1 : 0;
  }
}

/* ----------------------------------------------------- integer arithmetic */

static void test_int_arith(int bits) {
  const char *ops[] = {"+", "-", "*", "/", "%"};
  hs_sql_type t = bits == 32 ? T_I32 : T_I64;
  for (int trial = 0; trial < 3000; trial++) {
    int op = (int)(rnd() % 5);
    enum { N = 16 };
    int64_t a[N], b[N];
    int32_t a32[N], b32[N];
    uint8_t valid[N];
    bool any_null = rnd() % 2;
    bool want_err = false, want_zero = false;
    __int128 ref[N];
    for (int i = 0; i < N; i++) {
      a[i] = rnd_i64(bits);
      b[i] = rnd_i64(bits);
      a32[i] = (int32_t)a[i];
      b32[i] = (int32_t)b[i];
      valid[i] = any_null ? rnd() % 4 != 0 : 1;
      __int128 x = a[i], y = b[i], r = 0;
      bool bad = false, zero = false;
      switch (op) {
      case 0: r = x + y; break;
      case 1: r = x - y; break;
      case 2: r = x * y; break;
      case 3:
        if (y == 0)
          zero = true;
        else
          r = x / y; /* C truncates toward zero, as SQL */
        break;
      default:
        if (y == 0)
          zero = true;
        else
          r = x % y;
        break;
      }
      __int128 lim = bits == 32 ? (__int128)INT32_MAX : (__int128)INT64_MAX;
      if (!zero && (r > lim || r < -lim - 1)) bad = true;
      ref[i] = r;
      if (valid[i] && zero && !want_err) want_zero = true;
      if (valid[i] && (bad || zero)) want_err = true;
    }
    hs_sql_vec args[2];
    args[0] = mk(t, bits == 32 ? (void *)a32 : (void *)a, any_null ? valid : NULL, N);
    args[1] = mk(t, bits == 32 ? (void *)b32 : (void *)b, NULL, N);
    hs_sql_vec out;
    hs_error err = {0};
    hs_status st = call(ops[op], args, 2, N, &out, &err);
    if (want_err) {
      CHECK(st == HS_ERR_INVALID_ARG);
      if (st == HS_OK) {
        fprintf(stderr, "op %s expected error\n", ops[op]);
        hs_sql_vec_release(&out);
      } else if (!want_zero || op < 3) {
        /* the first failing row decides the message; both kinds may occur */
        CHECK(strstr(err.message, "out of range") != NULL ||
              strstr(err.message, "division by zero") != NULL);
      }
    } else {
      CHECK_OK(st, &err);
      if (st == HS_OK) {
        int bad = 0;
        for (int i = 0; i < N; i++) {
          if (!valid[i]) {
            if (hs_sql_vec_valid(&out, i)) bad++;
            continue;
          }
          int64_t got = bits == 32 ? ((int32_t *)out.data)[i] : ((int64_t *)out.data)[i];
          if (!hs_sql_vec_valid(&out, i) || got != (int64_t)ref[i]) bad++;
        }
        CHECK_EQ_INT(bad, 0);
        hs_sql_vec_release(&out);
      }
    }
    hs_sql_vec_release(&args[0]);
    hs_sql_vec_release(&args[1]);
  }
}

static uint64_t gcd_ref(uint64_t a, uint64_t b) {
  return b == 0 ? a : gcd_ref(b, a % b);
}

static void test_gcd(void) {
  for (int trial = 0; trial < 2000; trial++) {
    int64_t a[1] = {rnd_i64(64) / (trial % 2 ? 1 : 1000000)},
            b[1] = {rnd_i64(64) / (trial % 3 ? 1 : 1000000)};
    hs_sql_vec args[2] = {mk(T_I64, a, NULL, 1), mk(T_I64, b, NULL, 1)};
    hs_sql_vec out;
    hs_error err = {0};
    uint64_t x = a[0] < 0 ? 0 - (uint64_t)a[0] : (uint64_t)a[0];
    uint64_t y = b[0] < 0 ? 0 - (uint64_t)b[0] : (uint64_t)b[0];
    uint64_t g = gcd_ref(x, y);
    hs_status st = call("gcd", args, 2, 1, &out, &err);
    if (g > (uint64_t)INT64_MAX) {
      CHECK(st == HS_ERR_INVALID_ARG);
    } else {
      CHECK(st == HS_OK && ((int64_t *)out.data)[0] == (int64_t)g);
      if (st == HS_OK) hs_sql_vec_release(&out);
    }
    unsigned __int128 l = (x == 0 || y == 0) ? 0 : (unsigned __int128)(x / g) * y;
    memset(&err, 0, sizeof err);
    st = call("lcm", args, 2, 1, &out, &err);
    if (l > (unsigned __int128)INT64_MAX) {
      CHECK(st == HS_ERR_INVALID_ARG);
    } else {
      CHECK(st == HS_OK && ((int64_t *)out.data)[0] == (int64_t)l);
      if (st == HS_OK) hs_sql_vec_release(&out);
    }
    hs_sql_vec_release(&args[0]);
    hs_sql_vec_release(&args[1]);
  }
}

/* A bare NULL argument (NULLTYPE: no data) gives all-NULL rows, never a read. */
static void test_nulltype_args(void) {
  const hs_sql_fn *tabs[] = {hs_sql_fns_arith, hs_sql_fns_string, hs_sql_fns_time};
  const size_t ns[] = {hs_sql_fns_arith_n, hs_sql_fns_string_n, hs_sql_fns_time_n};
  int tried = 0;
  for (int t = 0; t < 3; t++)
    for (size_t r = 0; r < ns[t]; r++) {
      const hs_sql_fn *f = &tabs[t][r];
      if (f->n_args < 1 || f->volatile_) continue;
      hs_sql_vec args[HS_SQL_FN_ARGS_MAX];
      memset(args, 0, sizeof args);
      hs_sql_vec_alloc(&args[0], hs_sql_type_of(HS_SQL_NULLTYPE), 3, true, &(hs_error){0});
      for (int32_t k = 1; k < f->n_args; k++) {
        hs_sql_type at = hs_sql_type_of(f->args[k]);
        if (at.id == HS_SQL_NUMERIC) at.a = 10;
        hs_sql_vec_alloc(&args[k], at, 3, false, &(hs_error){0});
      }
      hs_sql_type ret = hs_sql_type_of(f->ret);
      if (ret.id == HS_SQL_NUMERIC) ret.a = 10;
      hs_sql_vec out;
      memset(&out, 0, sizeof out);
      hs_error err = {0};
      hs_status st = f->kernel(NULL, args, f->n_args, 3, ret, &out, &err);
      if (st == HS_OK) {
        CHECK((!hs_sql_vec_valid(&out, 0) && !hs_sql_vec_valid(&out, 2)) ||
              strcmp(f->name, "concat") == 0);
        hs_sql_vec_release(&out);
        tried++;
      }
      for (int32_t k = 0; k < f->n_args; k++) hs_sql_vec_release(&args[k]);
    }
  CHECK(tried > 100);
}

static void test_int_edges(void) {
  int32_t a[] = {INT32_MIN}, b[] = {-1};
  hs_sql_vec args[2] = {mk(T_I32, a, NULL, 1), mk(T_I32, b, NULL, 1)};
  hs_sql_vec out;
  hs_error err = {0};
  CHECK(call("/", args, 2, 1, &out, &err) == HS_ERR_INVALID_ARG);
  CHECK(strcmp(err.message, "integer out of range") == 0);
  memset(&err, 0, sizeof err);
  CHECK_OK(call("%", args, 2, 1, &out, &err), &err); /* INT_MIN % -1 = 0 */
  CHECK_EQ_INT(((int32_t *)out.data)[0], 0);
  hs_sql_vec_release(&out);
  memset(&err, 0, sizeof err);
  CHECK(call("-", args, 1, 1, &out, &err) == HS_ERR_INVALID_ARG);
  memset(&err, 0, sizeof err);
  CHECK(call("abs", args, 1, 1, &out, &err) == HS_ERR_INVALID_ARG);
  hs_sql_vec_release(&args[0]);
  hs_sql_vec_release(&args[1]);
  /* a NULL row's garbage never errors: 5 / NULL(0) */
  int32_t c[] = {5, 6}, d[] = {0, 2};
  uint8_t v[] = {0, 1};
  hs_sql_vec args2[2] = {mk(T_I32, c, NULL, 2), mk(T_I32, d, v, 2)};
  memset(&err, 0, sizeof err);
  CHECK_OK(call("/", args2, 2, 2, &out, &err), &err);
  CHECK(!hs_sql_vec_valid(&out, 0) && hs_sql_vec_valid(&out, 1));
  CHECK_EQ_INT(((int32_t *)out.data)[1], 3);
  hs_sql_vec_release(&out);
  /* 6 / 0 */
  d[0] = 0;
  hs_sql_vec_release(&args2[1]);
  args2[1] = mk(T_I32, d, NULL, 2);
  memset(&err, 0, sizeof err);
  CHECK(call("/", args2, 2, 2, &out, &err) == HS_ERR_INVALID_ARG);
  CHECK(strcmp(err.message, "division by zero") == 0);
  hs_sql_vec_release(&args2[0]);
  hs_sql_vec_release(&args2[1]);
}

/* --------------------------------------------------------------- floats */

static void test_float(void) {
  double a[] = {1.5, -2.0, 1e308, NAN, INFINITY, 0.0, 3.0};
  double b[] = {2.0, 0.5, 10.0, 1.0, 1.0, 5.0, NAN};
  enum { N = 7 };
  hs_sql_vec args[2] = {mk(T_F64, a, NULL, N), mk(T_F64, b, NULL, N)};
  hs_sql_vec out;
  hs_error err = {0};
  /* 1e308 * 10 overflows */
  CHECK(call("*", args, 2, N, &out, &err) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "overflow") != NULL);
  memset(&err, 0, sizeof err);
  CHECK_OK(call("+", args, 2, N, &out, &err), &err);
  if (out.data != NULL) {
    const double *o = out.data;
    CHECK(o[0] == 3.5 && o[1] == -1.5 && isnan(o[3]) && isinf(o[4]) && o[5] == 5.0 && isnan(o[6]));
    hs_sql_vec_release(&out);
  }
  /* comparisons: NaN = NaN, NaN above everything */
  memset(&err, 0, sizeof err);
  CHECK_OK(call("<", args, 2, N, &out, &err), &err);
  if (out.data != NULL) {
    const uint8_t *o = out.data;
    CHECK(o[0] == 1 && o[1] == 1 && o[3] == 0 && o[4] == 0 && o[5] == 1 && o[6] == 1);
    hs_sql_vec_release(&out);
  }
  double c[] = {NAN}, d[] = {NAN};
  hs_sql_vec a2[2] = {mk(T_F64, c, NULL, 1), mk(T_F64, d, NULL, 1)};
  memset(&err, 0, sizeof err);
  CHECK_OK(call("=", a2, 2, 1, &out, &err), &err);
  CHECK(((uint8_t *)out.data)[0] == 1);
  hs_sql_vec_release(&out);
  /* float / 0 is an error in PostgreSQL */
  double z[] = {0.0};
  hs_sql_vec_release(&a2[1]);
  a2[1] = mk(T_F64, z, NULL, 1);
  memset(&err, 0, sizeof err);
  CHECK(call("/", a2, 2, 1, &out, &err) == HS_ERR_INVALID_ARG);
  CHECK(strcmp(err.message, "division by zero") == 0);
  /* sqrt(-1) */
  double neg[] = {-1.0};
  hs_sql_vec nv = mk(T_F64, neg, NULL, 1);
  memset(&err, 0, sizeof err);
  CHECK(call("sqrt", &nv, 1, 1, &out, &err) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "square root of a negative number") != NULL);
  memset(&err, 0, sizeof err);
  CHECK(call("ln", a2 + 1, 1, 1, &out, &err) == HS_ERR_INVALID_ARG);
  /* round(2.5::float8) is 2 (rint, as PostgreSQL) */
  double h[] = {2.5, 3.5, -2.5};
  hs_sql_vec hv = mk(T_F64, h, NULL, 3);
  memset(&err, 0, sizeof err);
  CHECK_OK(call("round", &hv, 1, 3, &out, &err), &err);
  CHECK(((double *)out.data)[0] == 2 && ((double *)out.data)[1] == 4 &&
        ((double *)out.data)[2] == -2);
  hs_sql_vec_release(&out);
  hs_sql_vec_release(&hv);
  hs_sql_vec_release(&nv);
  hs_sql_vec_release(&a2[0]);
  hs_sql_vec_release(&a2[1]);
  hs_sql_vec_release(&args[0]);
  hs_sql_vec_release(&args[1]);
}

/* -------------------------------------------------------------- numeric */

static __int128 pow10_ref(int k) {
  __int128 p = 1;
  while (k-- > 0) p *= 10;
  return p;
}

static void test_numeric_arith(void) {
  for (int trial = 0; trial < 2000; trial++) {
    int p1 = 1 + (int)(rnd() % 20), p2 = 1 + (int)(rnd() % 20);
    int s1 = (int)(rnd() % (unsigned)(p1 + 1)), s2 = (int)(rnd() % (unsigned)(p2 + 1));
    hs_sql_type t1 = {HS_SQL_NUMERIC, p1, s1}, t2 = {HS_SQL_NUMERIC, p2, s2};
    enum { N = 8 };
    __int128 a[N], b[N];
    for (int i = 0; i < N; i++) {
      __int128 l1 = pow10_ref(p1), l2 = pow10_ref(p2);
      a[i] = (__int128)(rnd() % (uint64_t)(l1 > 1000000000000000000 ? 1000000000000000000 : l1));
      b[i] = (__int128)(rnd() % (uint64_t)(l2 > 1000000000000000000 ? 1000000000000000000 : l2));
      if (rnd() % 2) a[i] = -a[i];
      if (rnd() % 2) b[i] = -b[i];
    }
    hs_sql_vec args[2] = {mk(t1, a, NULL, N), mk(t2, b, NULL, N)};
    const char *ops[] = {"+", "-", "*", "<", "="};
    int op = (int)(rnd() % 5);
    hs_sql_vec out;
    hs_error err = {0};
    hs_status st = call(ops[op], args, 2, N, &out, &err);
    CHECK_OK(st, &err);
    if (st == HS_OK) {
      int bad = 0;
      int s = s1 > s2 ? s1 : s2;
      for (int i = 0; i < N; i++) {
        __int128 x = a[i] * pow10_ref(s - s1), y = b[i] * pow10_ref(s - s2);
        if (op == 0 || op == 1) {
          if (out.type.b != s)
            bad++;
          else if (((__int128 *)out.data)[i] != (op == 0 ? x + y : x - y))
            bad++;
        } else if (op == 2) {
          if (out.type.b != s1 + s2 || ((__int128 *)out.data)[i] != a[i] * b[i]) bad++;
        } else {
          bool want = op == 3 ? x < y : x == y;
          if (((uint8_t *)out.data)[i] != want) bad++;
        }
      }
      CHECK_EQ_INT(bad, 0);
      hs_sql_vec_release(&out);
    }
    hs_sql_vec_release(&args[0]);
    hs_sql_vec_release(&args[1]);
  }
}

/* ---------------------------------------------------------------- casts */

static hs_status cast1(const char *s, hs_sql_type to, hs_sql_value *v, hs_error *err,
                       hs_arena *arena) {
  memset(err, 0, sizeof *err);
  return hs_sql_cast_text(s, strlen(s), to, 0, arena, v, err);
}

/* value -> text through hs_sql_cast_vec */
static void check_to_text(hs_sql_type t, const void *val, const char *want) {
  hs_sql_vec in = mk(t, val, NULL, 1), out;
  hs_error err = {0};
  memset(&out, 0, sizeof out);
  CHECK_OK(hs_sql_cast_vec(&in, T_TEXT, 0, &out, &err), &err);
  if (out.data != NULL) {
    hs_sql_str s = ((hs_sql_str *)out.data)[0];
    if (!str_is(s, want)) {
      hs_test_failures++;
      fprintf(stderr, "to text: got '%.*s', want '%s'\n", (int)s.len, s.ptr, want);
    }
    hs_test_checks++;
  }
  hs_sql_vec_release(&out);
  hs_sql_vec_release(&in);
}

static void test_cast_text(void) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_sql_value v;
  hs_error err;
  /* integers */
  CHECK_OK(cast1(" -42 ", T_I32, &v, &err, &arena), &err);
  CHECK_EQ_INT(v.v.i32, -42);
  CHECK(cast1("2147483648", T_I32, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "out of range for type integer") != NULL);
  CHECK_OK(cast1("-9223372036854775808", T_I64, &v, &err, &arena), &err);
  CHECK(v.v.i64 == INT64_MIN);
  CHECK(cast1("12a", T_I64, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  CHECK(strcmp(err.message, "invalid input syntax for type bigint: \"12a\"") == 0);
  CHECK(cast1("", T_I32, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  /* booleans */
  const char *yes[] = {"t", "TRUE", "yes", "on", "1", " tr "},
             *no[] = {"f", "false", "no", "off", "0", "of"};
  for (int i = 0; i < 6; i++) {
    CHECK_OK(cast1(yes[i], T_BOOL, &v, &err, &arena), &err);
    CHECK(v.v.b == true);
    CHECK_OK(cast1(no[i], T_BOOL, &v, &err, &arena), &err);
    CHECK(v.v.b == false);
  }
  CHECK(cast1("o", T_BOOL, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  CHECK(cast1("truex", T_BOOL, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  /* floats */
  CHECK_OK(cast1("-Infinity", T_F64, &v, &err, &arena), &err);
  CHECK(isinf(v.v.f64) && v.v.f64 < 0);
  CHECK_OK(cast1("NaN", T_F64, &v, &err, &arena), &err);
  CHECK(isnan(v.v.f64));
  CHECK(cast1("1e400", T_F64, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  CHECK(cast1("0x10", T_F64, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  /* numeric: rounding half away from zero, precision checked */
  hs_sql_type n52 = {HS_SQL_NUMERIC, 5, 2};
  CHECK_OK(cast1("1.005", n52, &v, &err, &arena), &err);
  CHECK(v.v.dec == 101);
  CHECK_OK(cast1("-1.005", n52, &v, &err, &arena), &err);
  CHECK(v.v.dec == -101);
  CHECK_OK(cast1("1.004", n52, &v, &err, &arena), &err);
  CHECK(v.v.dec == 100);
  CHECK_OK(cast1("999.994", n52, &v, &err, &arena), &err);
  CHECK(v.v.dec == 99999);
  CHECK(cast1("999.995", n52, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "numeric field overflow") != NULL);
  CHECK_OK(cast1("1.5e2", n52, &v, &err, &arena), &err);
  CHECK(v.v.dec == 15000);
  CHECK_OK(cast1("-.5", n52, &v, &err, &arena), &err);
  CHECK(v.v.dec == -50);
  CHECK_OK(cast1("0.000001", n52, &v, &err, &arena), &err);
  CHECK(v.v.dec == 0);
  CHECK(cast1("1..2", n52, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  hs_sql_type n380 = {HS_SQL_NUMERIC, 38, 0};
  CHECK_OK(cast1("99999999999999999999999999999999999999", n380, &v, &err, &arena), &err);
  CHECK(cast1("100000000000000000000000000000000000000", n380, &v, &err, &arena) != HS_OK);
  /* dates and timestamps */
  CHECK_OK(cast1("2024-02-29", T_DATE, &v, &err, &arena), &err);
  CHECK_EQ_INT(v.v.i32, hs_days_from_civil(2024, 2, 29));
  CHECK_OK(cast1("2024-02-29 23:59:59", T_DATE, &v, &err, &arena), &err);
  CHECK_EQ_INT(v.v.i32, hs_days_from_civil(2024, 2, 29));
  CHECK(cast1("2024-02-29 25:00", T_DATE, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  CHECK(cast1("2023-02-29", T_DATE, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "out of range") != NULL);
  CHECK(cast1("2023-13-01", T_DATE, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  CHECK(cast1("hello", T_DATE, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  CHECK(strcmp(err.message, "invalid input syntax for type date: \"hello\"") == 0);
  CHECK_OK(cast1("2024-01-02 03:04:05.678901", T_TS, &v, &err, &arena), &err);
  CHECK(v.v.i64 == hs_days_from_civil(2024, 1, 2) * HS_SQL_USECS_PER_DAY +
                       ((3 * 60 + 4) * 60 + 5) * INT64_C(1000000) + 678901);
  /* the zone is ignored for timestamp, applied for timestamptz */
  CHECK_OK(cast1("2024-01-02 03:00:00+02", T_TS, &v, &err, &arena), &err);
  CHECK(v.v.i64 ==
        hs_days_from_civil(2024, 1, 2) * HS_SQL_USECS_PER_DAY + 3 * HS_SQL_USECS_PER_HOUR);
  CHECK_OK(cast1("2024-01-02T03:00:00+02:00", T_TSTZ, &v, &err, &arena), &err);
  CHECK(v.v.i64 ==
        hs_days_from_civil(2024, 1, 2) * HS_SQL_USECS_PER_DAY + 1 * HS_SQL_USECS_PER_HOUR);
  /* intervals */
  struct {
    const char *in, *out;
  } ivs[] = {
      {"1 day", "1 day"},
      {"2 days 3 hours", "2 days 03:00:00"},
      {"1 year 2 months", "1 year 2 mons"},
      {"3 mons", "3 mons"},
      {"-1 days +02:00:00", "-1 days +02:00:00"},
      {"1.5 days", "1 day 12:00:00"},
      {"1.5 months", "1 mon 15 days"},
      {"1.5 years", "1 year 6 mons"},
      {"01:02:03.5", "01:02:03.5"},
      {"-01:00", "-01:00:00"},
      {"0", "00:00:00"},
      {"1 week", "7 days"},
      {"10 min", "00:10:00"},
      {"1 day ago", "-1 days"},
      {"-1 year -2 mons +3 days", "-1 years -2 mons +3 days"},
      {"100 microseconds", "00:00:00.0001"},
  };
  for (size_t i = 0; i < sizeof ivs / sizeof ivs[0]; i++) {
    hs_status st = cast1(ivs[i].in, T_IV, &v, &err, &arena);
    CHECK_OK(st, &err);
    if (st == HS_OK) {
      char buf[HS_SQL_FMT_MAX];
      hs_sql_fmt_interval(v.v.iv, buf);
      if (strcmp(buf, ivs[i].out) != 0) {
        hs_test_failures++;
        fprintf(stderr, "interval '%s': got '%s', want '%s'\n", ivs[i].in, buf, ivs[i].out);
      }
      hs_test_checks++;
    }
  }
  CHECK(cast1("1 fortnight", T_IV, &v, &err, &arena) == HS_ERR_INVALID_ARG);
  /* fields masks (typmods): INTERVAL '90' DAY is 90 days, fields below the last are dropped */
  struct {
    const char *in;
    int32_t mask;
    const char *out;
  } ivm[] = {
      {"90", 8, "90 days"},
      {"1", 4, "1 year"},
      {"3", 2, "3 mons"},
      {"2", 1024, "02:00:00"},
      {"5", 2048, "00:05:00"},
      {"1 day 02:03", 8, "1 day"},
      {"1 year 5 months", 4, "1 year"},
      {"1:30", 2048 | 4096, "00:01:30"},
      {"1 day 02:03:04", 8 | 1024, "1 day 02:00:00"},
      {"7", 4096, "00:00:07"},
  };
  for (size_t i = 0; i < sizeof ivm / sizeof ivm[0]; i++) {
    hs_sql_type tm = {HS_SQL_INTERVAL, ivm[i].mask, 0};
    hs_status st = cast1(ivm[i].in, tm, &v, &err, &arena);
    CHECK_OK(st, &err);
    char buf[HS_SQL_FMT_MAX];
    hs_sql_fmt_interval(v.v.iv, buf);
    if (st != HS_OK || strcmp(buf, ivm[i].out) != 0) {
      hs_test_failures++;
      fprintf(stderr, "interval '%s' mask %d: got '%s', want '%s'\n", ivm[i].in, ivm[i].mask, buf,
              ivm[i].out);
    }
    hs_test_checks++;
  }
  /* bytea */
  CHECK_OK(cast1("\\x41ff", T_BYTEA, &v, &err, &arena), &err);
  CHECK(v.v.s.len == 2 && (uint8_t)v.v.s.ptr[0] == 0x41 && (uint8_t)v.v.s.ptr[1] == 0xff);
  CHECK_OK(cast1("a\\\\b\\101", T_BYTEA, &v, &err, &arena), &err);
  CHECK(v.v.s.len == 4 && memcmp(v.v.s.ptr, "a\\bA", 4) == 0);
  CHECK(cast1("\\x4", T_BYTEA, &v, &err, &arena) == HS_ERR_INVALID_ARG);

  /* output forms */
  double fl[] = {0.1,   1.5,   1e15,  1e14,     123456789012345.0,
                 1e-5,  1e-4,  -2.5,  1.0 / 3,  9007199254740992.0,
                 1e100, 1e23,  NAN,   INFINITY, -INFINITY,
                 0.0,   100.0, 5e-324};
  const char *fs[] = {"0.1",
                      "1.5",
                      "1e+15",
                      "100000000000000",
                      "123456789012345",
                      "1e-05",
                      "0.0001",
                      "-2.5",
                      "0.3333333333333333",
                      "9.007199254740992e+15",
                      "1e+100",
                      "9.999999999999999e+22",
                      "NaN",
                      "Infinity",
                      "-Infinity",
                      "0",
                      "100",
                      "5e-324"};
  for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) check_to_text(T_F64, &fl[i], fs[i]);
  hs_sql_i128 d1 = 150;
  check_to_text(n52, &d1, "1.50");
  d1 = -5;
  check_to_text(n52, &d1, "-0.05");
  d1 = 0;
  check_to_text(n52, &d1, "0.00");
  uint8_t bt = 1;
  check_to_text(T_BOOL, &bt, "true");
  int32_t day = (int32_t)hs_days_from_civil(2024, 3, 1);
  check_to_text(T_DATE, &day, "2024-03-01");
  day = (int32_t)hs_days_from_civil(-43, 3, 15); /* 44 BC */
  check_to_text(T_DATE, &day, "0044-03-15 BC");
  int64_t ts =
      hs_days_from_civil(1969, 12, 31) * HS_SQL_USECS_PER_DAY + 23 * HS_SQL_USECS_PER_HOUR + 500000;
  check_to_text(T_TS, &ts, "1969-12-31 23:00:00.5");
  check_to_text(T_TSTZ, &ts, "1969-12-31 23:00:00.5+00");
  hs_sql_interval iv = {14, -3, -(INT64_C(3723) * 1000000 + 5)};
  check_to_text(T_IV, &iv, "1 year 2 mons -3 days -01:02:03.000005");
  int32_t im = INT32_MIN;
  check_to_text(T_I32, &im, "-2147483648");

  /* randomized round trips: int64, float8 (shortest, reads back), numeric, dates, timestamps */
  for (int trial = 0; trial < 20000; trial++) {
    char buf[HS_SQL_FMT_MAX];
    int64_t x = rnd_i64(64);
    hs_sql_fmt_int64(x, buf);
    CHECK_OK(cast1(buf, T_I64, &v, &err, &arena), &err);
    CHECK(v.v.i64 == x);
    uint64_t bits = rnd();
    double f;
    memcpy(&f, &bits, 8);
    if (trial % 3 == 0) f = (double)(int64_t)(rnd() % 2000000) / 1000.0;
    size_t k = hs_sql_fmt_f64(f, 8, buf);
    CHECK(k < 32);
    CHECK_OK(cast1(buf, T_F64, &v, &err, &arena), &err);
    CHECK((isnan(f) && isnan(v.v.f64)) || v.v.f64 == f);
    if (!isnan(f) && !isinf(f) && f != 0) {
      /* no shorter digit string reads back (shortest) */
      char sig[40];
      int digits = 0;
      for (const char *c = buf; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9') sig[digits++] = *c;
      int lead = 0;
      while (lead < digits && sig[lead] == '0') lead++;
      int tail = digits;
      while (tail > lead && sig[tail - 1] == '0') tail--;
      int nd = tail - lead;
      if (nd > 1) {
        char shorter[48];
        snprintf(shorter, sizeof shorter, "%.*e", nd - 2, f);
        /* a shorter text may read back only by being exactly halfway to a
         * neighbour, which PostgreSQL never prints */
        long double xs = strtold(shorter, NULL);
        double nb = nextafter(f, xs > (long double)f ? INFINITY : -INFINITY);
        CHECK(strtod(shorter, NULL) != f || xs == ((long double)f + (long double)nb) / 2);
      }
    }
    int p = 1 + (int)(rnd() % 38), s = (int)(rnd() % (unsigned)(p + 1));
    hs_sql_type nt = {HS_SQL_NUMERIC, p, s};
    __int128 dv =
        (__int128)(((unsigned __int128)rnd() << 64 | rnd()) % (unsigned __int128)pow10_ref(p));
    if (rnd() % 2) dv = -dv;
    hs_sql_fmt_numeric(dv, s, buf);
    CHECK_OK(cast1(buf, nt, &v, &err, &arena), &err);
    CHECK(v.v.dec == dv);
    int64_t days = (int64_t)(rnd() % 4000000) - 2000000;
    hs_sql_fmt_date((int32_t)days, buf);
    CHECK_OK(cast1(buf, T_DATE, &v, &err, &arena), &err);
    CHECK(v.v.i32 == days);
    int64_t y;
    int mo, dd;
    hs_civil_from_days(days, &y, &mo, &dd);
    if (y >= 1) {
      char want[64];
      snprintf(want, sizeof want, "%04lld-%02d-%02d", (long long)y, mo, dd);
      CHECK(strcmp(buf, want) == 0);
    }
    int64_t us = days * HS_SQL_USECS_PER_DAY + (int64_t)(rnd() % (uint64_t)HS_SQL_USECS_PER_DAY);
    if (trial % 2) us -= us % 1000000;
    hs_sql_fmt_timestamp(us, trial % 4 == 1, buf);
    CHECK_OK(cast1(buf, trial % 4 == 1 ? T_TSTZ : T_TS, &v, &err, &arena), &err);
    CHECK(v.v.i64 == us);
    hs_sql_interval iv2 = {(int32_t)(rnd() % 2000) - 1000, (int32_t)(rnd() % 2000) - 1000,
                           (int64_t)(rnd() % 100000000000ull) - 50000000000};
    hs_sql_fmt_interval(iv2, buf);
    hs_status st = cast1(buf, T_IV, &v, &err, &arena);
    CHECK_OK(st, &err);
    CHECK(v.v.iv.months == iv2.months && v.v.iv.days == iv2.days && v.v.iv.micros == iv2.micros);
    if (v.v.iv.micros != iv2.micros && st == HS_OK)
      fprintf(stderr, "interval %s: %lld vs %lld\n", buf, (long long)v.v.iv.micros,
              (long long)iv2.micros);
  }
  hs_arena_reset(&arena);
}

/* vector casts among numbers */
static void test_cast_vec_numbers(void) {
  double f[] = {2.5, 3.5, -2.5, 2147483647.4, 2147483647.5, NAN};
  hs_sql_vec in = mk(T_F64, f, NULL, 4), out;
  hs_error err = {0};
  memset(&out, 0, sizeof out);
  CHECK_OK(hs_sql_cast_vec(&in, T_I32, 0, &out, &err), &err);
  if (out.data != NULL) {
    const int32_t *o = out.data;
    CHECK(o[0] == 2 && o[1] == 4 && o[2] == -2 && o[3] == INT32_MAX);
  }
  hs_sql_vec_release(&out);
  hs_sql_vec_release(&in);
  in = mk(T_F64, f + 4, NULL, 1);
  memset(&err, 0, sizeof err);
  CHECK(hs_sql_cast_vec(&in, T_I32, 7, &out, &err) == HS_ERR_INVALID_ARG);
  CHECK(strcmp(err.message, "at position 7: integer out of range") == 0);
  hs_sql_vec_release(&in);
  in = mk(T_F64, f + 5, NULL, 1);
  memset(&err, 0, sizeof err);
  CHECK(hs_sql_cast_vec(&in, T_I64, 0, &out, &err) == HS_ERR_INVALID_ARG);
  hs_sql_vec_release(&in);
  /* numeric -> int rounds half away from zero; numeric rescale */
  hs_sql_type n52 = {HS_SQL_NUMERIC, 5, 2}, n41 = {HS_SQL_NUMERIC, 4, 1},
              n30 = {HS_SQL_NUMERIC, 3, 0};
  hs_sql_i128 d[] = {250, -250, 249, 99999, -99950};
  in = mk(n52, d, NULL, 4);
  memset(&err, 0, sizeof err);
  CHECK_OK(hs_sql_cast_vec(&in, T_I32, 0, &out, &err), &err);
  if (out.data != NULL) {
    const int32_t *o = out.data;
    CHECK(o[0] == 3 && o[1] == -3 && o[2] == 2 && o[3] == 1000);
  }
  hs_sql_vec_release(&out);
  hs_sql_vec in3 = mk(n52, d, NULL, 3);
  CHECK_OK(hs_sql_cast_vec(&in3, n41, 0, &out, &err), &err);
  hs_sql_vec_release(&in3);
  if (out.data != NULL) {
    const hs_sql_i128 *o = out.data;
    CHECK(o[0] == 25 && o[1] == -25 && o[2] == 25);
    CHECK(out.type.a == 4 && out.type.b == 1);
  }
  hs_sql_vec_release(&out);
  memset(&err, 0, sizeof err);
  CHECK(hs_sql_cast_vec(&in, n30, 0, &out, &err) == HS_ERR_INVALID_ARG); /* 999.99 -> 1000 */
  CHECK(strstr(err.message, "numeric field overflow") != NULL);
  hs_sql_vec_release(&in);
  /* float -> numeric goes through 15 significant digits */
  double g[] = {0.1, 1.005, 123.456};
  in = mk(T_F64, g, NULL, 3);
  hs_sql_type n103 = {HS_SQL_NUMERIC, 10, 3};
  memset(&err, 0, sizeof err);
  CHECK_OK(hs_sql_cast_vec(&in, n103, 0, &out, &err), &err);
  if (out.data != NULL) {
    const hs_sql_i128 *o = out.data;
    CHECK(o[0] == 100 && o[1] == 1005 && o[2] == 123456);
  }
  hs_sql_vec_release(&out);
  hs_sql_vec_release(&in);
  /* int64 -> int32 overflow; NULL rows are skipped */
  int64_t big[] = {1, INT64_C(1) << 40, 3};
  uint8_t val[] = {1, 0, 1};
  in = mk(T_I64, big, val, 3);
  memset(&err, 0, sizeof err);
  CHECK_OK(hs_sql_cast_vec(&in, T_I32, 0, &out, &err), &err);
  CHECK(out.valid != NULL && out.valid[1] == 0 && ((int32_t *)out.data)[2] == 3);
  hs_sql_vec_release(&out);
  hs_sql_vec_release(&in);
  in = mk(T_I64, big, NULL, 3);
  memset(&err, 0, sizeof err);
  CHECK(hs_sql_cast_vec(&in, T_I32, 0, &out, &err) == HS_ERR_INVALID_ARG);
  hs_sql_vec_release(&in);
  /* text column -> int with an error naming the value */
  const char *txt[] = {"1", NULL, "x1"};
  in = mk_text(txt, 3);
  memset(&err, 0, sizeof err);
  CHECK(hs_sql_cast_vec(&in, T_I32, 3, &out, &err) == HS_ERR_INVALID_ARG);
  CHECK(strcmp(err.message, "at position 3: invalid input syntax for type integer: \"x1\"") == 0);
  hs_sql_vec_release(&in);
  /* timestamp -> date floors */
  int64_t tsv[] = {-1, 0, HS_SQL_USECS_PER_DAY - 1};
  in = mk(T_TS, tsv, NULL, 3);
  memset(&err, 0, sizeof err);
  CHECK_OK(hs_sql_cast_vec(&in, T_DATE, 0, &out, &err), &err);
  CHECK(((int32_t *)out.data)[0] == -1 && ((int32_t *)out.data)[1] == 0 &&
        ((int32_t *)out.data)[2] == 0);
  hs_sql_vec_release(&out);
  hs_sql_vec_release(&in);
  CHECK(hs_sql_cast_exists(T_I32, T_TEXT) && hs_sql_cast_exists(T_TEXT, T_IV) &&
        !hs_sql_cast_exists(T_DATE, T_I32) && !hs_sql_cast_exists(T_IV, T_DATE) &&
        hs_sql_cast_exists(T_I32, T_BOOL) && !hs_sql_cast_exists(T_F64, T_BOOL));
}

/* -------------------------------------------------------------- strings */

/* A string as an array of UTF-8 characters (each 1-4 bytes). */
typedef struct chars {
  int n;
  char c[64][5];
} chars;

static void to_chars(const char *s, chars *out) {
  out->n = 0;
  for (size_t i = 0; s[i];) {
    uint8_t b = (uint8_t)s[i];
    size_t l = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    memcpy(out->c[out->n], s + i, l);
    out->c[out->n][l] = '\0';
    out->n++;
    i += l;
  }
}

static void join(const chars *c, int from, int to, char *out) {
  out[0] = '\0';
  if (from < 0) from = 0;
  if (to > c->n) to = c->n;
  for (int i = from; i < to; i++) strcat(out, c->c[i]);
}

static const char *PIECES[] = {"a", "b", "c", " ", "é", "ß", "€", "𝄞", "A", "x"};

static void rnd_str(char *buf, int maxc) {
  int k = (int)(rnd() % (unsigned)(maxc + 1));
  buf[0] = '\0';
  for (int i = 0; i < k; i++) strcat(buf, PIECES[rnd() % 10]);
}

/* Run a text function over one row and return its text (static buffer), or NULL for NULL. */
static const char *text1(const char *name, hs_sql_vec *args, int32_t n_args) {
  static char buf[4096];
  hs_sql_vec out;
  hs_error err = {0};
  hs_status st = call(name, args, n_args, 1, &out, &err);
  if (st != HS_OK) {
    snprintf(buf, sizeof buf, "ERROR: %s", err.message);
    return buf;
  }
  const char *r = NULL;
  if (hs_sql_vec_valid(&out, 0)) {
    hs_sql_str v = ((hs_sql_str *)out.data)[0];
    memcpy(buf, v.ptr, v.len);
    buf[v.len] = '\0';
    r = buf;
  }
  hs_sql_vec_release(&out);
  return r;
}

static int64_t int1(const char *name, hs_sql_vec *args, int32_t n_args) {
  hs_sql_vec out;
  hs_error err = {0};
  if (call(name, args, n_args, 1, &out, &err) != HS_OK) return INT64_MIN;
  int64_t r = out.type.id == HS_SQL_BOOL ? ((uint8_t *)out.data)[0] : ((int32_t *)out.data)[0];
  hs_sql_vec_release(&out);
  return r;
}

static void check_text(const char *got, const char *want, const char *what) {
  hs_test_checks++;
  if ((got == NULL) != (want == NULL) || (got != NULL && strcmp(got, want) != 0)) {
    hs_test_failures++;
    fprintf(stderr, "%s: got '%s', want '%s'\n", what, got ? got : "NULL", want ? want : "NULL");
  }
}

static void test_strings(void) {
  char s[512], t[512], want[1024];
  for (int trial = 0; trial < 3000; trial++) {
    rnd_str(s, 12);
    chars c;
    to_chars(s, &c);
    const char *sv[] = {s};
    hs_sql_vec a = mk_text(sv, 1);
    int32_t k1 = (int32_t)(rnd() % 20) - 5, k2 = (int32_t)(rnd() % 20) - 3;
    hs_sql_vec i1 = mk(T_I32, &k1, NULL, 1), i2 = mk(T_I32, &k2, NULL, 1);
    hs_sql_vec args[3] = {a, i1, i2};
    /* length */
    CHECK_EQ_INT(int1("length", args, 1), c.n);
    CHECK_EQ_INT(int1("octet_length", args, 1), (int64_t)strlen(s));
    /* substr(s, k1[, k2]) */
    join(&c, k1 - 1, c.n, want);
    check_text(text1("substr", args, 2), want, "substr/2");
    if (k2 < 0) {
      const char *r = text1("substr", args, 3);
      CHECK(r != NULL && strstr(r, "negative substring length") != NULL);
    } else {
      join(&c, k1 - 1, k1 - 1 + k2, want);
      check_text(text1("substr", args, 3), want, "substr/3");
    }
    /* left / right */
    join(&c, 0, k1 >= 0 ? k1 : c.n + k1, want);
    check_text(text1("left", args, 2), want, "left");
    join(&c, k1 >= 0 ? c.n - k1 : -k1, c.n, want);
    check_text(text1("right", args, 2), want, "right");
    /* reverse */
    want[0] = '\0';
    for (int i = c.n - 1; i >= 0; i--) strcat(want, c.c[i]);
    check_text(text1("reverse", args, 1), want, "reverse");
    /* lpad / rpad with a fill */
    rnd_str(t, 3);
    chars f;
    to_chars(t, &f);
    const char *tv[] = {t};
    hs_sql_vec fill = mk_text(tv, 1);
    hs_sql_vec pargs[3] = {a, i1, fill};
    if (k1 <= 0) {
      want[0] = '\0';
    } else if (c.n >= k1 || f.n == 0) {
      join(&c, 0, k1, want);
    } else {
      char pad[512] = "";
      for (int i = 0; i < k1 - c.n; i++) strcat(pad, f.c[i % f.n]);
      snprintf(want, sizeof want, "%s%s", pad, s);
      check_text(text1("lpad", pargs, 3), want, "lpad");
      snprintf(want, sizeof want, "%s%s", s, pad);
      check_text(text1("rpad", pargs, 3), want, "rpad");
      want[0] = 1; /* skip the common check */
    }
    if (want[0] != 1) {
      check_text(text1("lpad", pargs, 3), want, "lpad cut");
      check_text(text1("rpad", pargs, 3), want, "rpad cut");
    }
    /* strpos(s, t): first character index */
    {
      int64_t w = 0;
      if (t[0] == '\0')
        w = 1;
      else {
        const char *h = strstr(s, t);
        if (h != NULL) {
          chars pre;
          char tmp[512];
          memcpy(tmp, s, (size_t)(h - s));
          tmp[h - s] = '\0';
          to_chars(tmp, &pre);
          w = pre.n + 1;
        }
      }
      hs_sql_vec sargs[2] = {a, fill};
      CHECK_EQ_INT(int1("strpos", sargs, 2), w);
      CHECK_EQ_INT(int1("starts_with", sargs, 2), strncmp(s, t, strlen(t)) == 0);
    }
    /* replace(s, t, "<>") */
    {
      const char *rv[] = {"<>"};
      hs_sql_vec rep = mk_text(rv, 1);
      hs_sql_vec rargs[3] = {a, fill, rep};
      want[0] = '\0';
      if (t[0] == '\0') {
        strcpy(want, s);
      } else {
        const char *p = s;
        for (;;) {
          const char *h = strstr(p, t);
          if (h == NULL) break;
          strncat(want, p, (size_t)(h - p));
          strcat(want, "<>");
          p = h + strlen(t);
        }
        strcat(want, p);
      }
      check_text(text1("replace", rargs, 3), want, "replace");
      hs_sql_vec_release(&rep);
    }
    /* btrim(s, t) by characters */
    {
      int a0 = 0, b0 = c.n;
      while (a0 < b0 && f.n > 0) {
        bool in = false;
        for (int j = 0; j < f.n; j++) in |= strcmp(c.c[a0], f.c[j]) == 0;
        if (!in) break;
        a0++;
      }
      int lt = a0;
      while (b0 > a0 && f.n > 0) {
        bool in = false;
        for (int j = 0; j < f.n; j++) in |= strcmp(c.c[b0 - 1], f.c[j]) == 0;
        if (!in) break;
        b0--;
      }
      hs_sql_vec targs[2] = {a, fill};
      join(&c, a0, b0, want);
      check_text(text1("btrim", targs, 2), want, "btrim");
      join(&c, lt, c.n, want);
      check_text(text1("ltrim", targs, 2), want, "ltrim");
    }
    /* split_part(s, " ", k1) */
    if (k1 != 0) {
      const char *dv[] = {" "};
      hs_sql_vec dl = mk_text(dv, 1);
      hs_sql_vec sargs[3] = {a, dl, i1};
      char fields[64][512];
      int nf = 0;
      const char *p = s;
      for (;;) {
        const char *h = strchr(p, ' ');
        size_t l = h ? (size_t)(h - p) : strlen(p);
        memcpy(fields[nf], p, l);
        fields[nf++][l] = '\0';
        if (!h) break;
        p = h + 1;
      }
      int idx = k1 > 0 ? k1 - 1 : nf + k1;
      const char *w = s[0] == '\0' || idx < 0 || idx >= nf ? "" : fields[idx];
      check_text(text1("split_part", sargs, 3), w, "split_part");
      hs_sql_vec_release(&dl);
    }
    hs_sql_vec_release(&fill);
    hs_sql_vec_release(&a);
    hs_sql_vec_release(&i1);
    hs_sql_vec_release(&i2);
  }
  /* fixed cases */
  const char *v1[] = {"ÄÖÜ Straße ΣΑΣ Жук"};
  hs_sql_vec a = mk_text(v1, 1);
  check_text(text1("lower", &a, 1), "äöü straße σασ жук", "lower");
  check_text(text1("upper", &a, 1), "ÄÖÜ STRAßE ΣΑΣ ЖУК", "upper");
  hs_sql_vec_release(&a);
  const char *v2[] = {"abc", NULL, "", "x"};
  hs_sql_vec b = mk_text(v2, 4), out;
  hs_sql_vec cargs[3] = {b, b, b};
  hs_error err = {0};
  CHECK_OK(call("concat", cargs, 3, 4, &out, &err), &err);
  CHECK(out.valid == NULL || (out.valid[0] && out.valid[1] && out.valid[2]));
  CHECK(str_is(((hs_sql_str *)out.data)[0], "abcabcabc") && ((hs_sql_str *)out.data)[1].len == 0 &&
        str_is(((hs_sql_str *)out.data)[3], "xxx"));
  hs_sql_vec_release(&out);
  CHECK_OK(call("||", cargs, 2, 4, &out, &err), &err);
  CHECK(!hs_sql_vec_valid(&out, 1) && str_is(((hs_sql_str *)out.data)[0], "abcabc"));
  hs_sql_vec_release(&out);
  int32_t iv[] = {1, 2, -3, 4};
  hs_sql_vec ivv = mk(T_I32, iv, NULL, 4);
  hs_sql_vec mix[2] = {b, ivv};
  CHECK_OK(call("||", mix, 2, 4, &out, &err), &err);
  CHECK(str_is(((hs_sql_str *)out.data)[0], "abc1") && !hs_sql_vec_valid(&out, 1) &&
        str_is(((hs_sql_str *)out.data)[2], "-3"));
  hs_sql_vec_release(&out);
  hs_sql_vec_release(&ivv);
  hs_sql_vec_release(&b);
  int32_t zero = 0;
  const char *v3[] = {"a,b"}, *v4[] = {","};
  hs_sql_vec sp[3] = {mk_text(v3, 1), mk_text(v4, 1), mk(T_I32, &zero, NULL, 1)};
  CHECK(strstr(text1("split_part", sp, 3), "field position must not be zero") != NULL);
  for (int i = 0; i < 3; i++) hs_sql_vec_release(&sp[i]);
  const char *v5[] = {"hello wORLD-foo bar1x éCOLE"}, *v6[] = {"12345"}, *v7[] = {"143"},
             *v8[] = {"ax"};
  hs_sql_vec ic = mk_text(v5, 1);
  check_text(text1("initcap", &ic, 1), "Hello World-Foo Bar1x École", "initcap");
  hs_sql_vec_release(&ic);
  hs_sql_vec tr[3] = {mk_text(v6, 1), mk_text(v7, 1), mk_text(v8, 1)};
  check_text(text1("translate", tr, 3), "a2x5", "translate");
  for (int i = 0; i < 3; i++) hs_sql_vec_release(&tr[i]);
  int32_t big = 1 << 30;
  hs_sql_vec rp[2] = {mk_text(v3, 1), mk(T_I32, &big, NULL, 1)};
  CHECK(strstr(text1("repeat", rp, 2), "requested length too large") != NULL);
  for (int i = 0; i < 2; i++) hs_sql_vec_release(&rp[i]);
}

/* ----------------------------------------------------------------- LIKE */

static bool like_ref(const char *s, const char *p, int esc, bool icase) {
  if (*p == '\0') return *s == '\0';
  if (esc >= 0 && *p == esc && p[1] != '\0') {
    if (*s == '\0') return false;
    char a = s[0], b = p[1];
    if (icase) a = (char)tolower((unsigned char)a), b = (char)tolower((unsigned char)b);
    return a == b && like_ref(s + 1, p + 2, esc, icase);
  }
  if (*p == '%')
    return like_ref(s, p + 1, esc, icase) || (*s != '\0' && like_ref(s + 1, p, esc, icase));
  if (*s == '\0') return false;
  if (*p == '_') {
    size_t l = 1;
    while ((s[l] & 0xC0) == 0x80) l++;
    return like_ref(s + l, p + 1, esc, icase);
  }
  char a = s[0], b = p[0];
  if (icase) a = (char)tolower((unsigned char)a), b = (char)tolower((unsigned char)b);
  return a == b && like_ref(s + 1, p + 1, esc, icase);
}

static void test_like(void) {
  const char *alpha = "abAB%_\\";
  for (int trial = 0; trial < 100000; trial++) {
    char s[16], p[12];
    int ns = (int)(rnd() % 10), np = (int)(rnd() % 8);
    for (int i = 0; i < ns; i++) s[i] = "abAB%_\\"[rnd() % 4 + (rnd() % 8 == 0 ? 3 : 0)];
    s[ns] = '\0';
    for (int i = 0; i < np; i++) p[i] = alpha[rnd() % 7];
    p[np] = '\0';
    int esc = rnd() % 2 ? '\\' : -1;
    bool icase = rnd() % 2;
    bool want = like_ref(s, p, esc, icase);
    bool got = hs_sql_like(s, strlen(s), p, strlen(p), esc, icase);
    if (want != got) {
      hs_test_failures++;
      fprintf(stderr, "LIKE '%s' '%s' esc %d icase %d: got %d\n", s, p, esc, icase, got);
    }
    hs_test_checks++;
  }
  CHECK(hs_sql_like("héllo", 6, "h_llo", 5, '\\', false));
  CHECK(!hs_sql_like("héllo", 6, "h__llo", 6, '\\', false));
  CHECK(hs_sql_like("ÉCOLE", 6, "%école", 7, -1, true));
  CHECK(hs_sql_like("50%", 3, "50\\%", 4, '\\', false));
  CHECK(!hs_sql_like("505", 3, "50\\%", 4, '\\', false));
  /* no exponential blow-up: many '%' against a long non-matching text */
  char big[20001];
  memset(big, 'a', 20000);
  big[20000] = '\0';
  int64_t t0 = hs_now_ns();
  CHECK(!hs_sql_like(big, 20000, "%a%a%a%a%a%a%a%a%b", 18, -1, false));
  CHECK(hs_now_ns() - t0 < INT64_C(2000000000));
}

/* ---------------------------------------------------------------- times */

static int64_t mk_ts(int64_t y, int m, int d, int hh, int mi, int ss, int us) {
  return hs_days_from_civil(y, m, d) * HS_SQL_USECS_PER_DAY +
         ((int64_t)(hh * 60 + mi) * 60 + ss) * 1000000 + us;
}

static double f64_1(const char *name, hs_sql_vec *args, int32_t n_args, hs_error *err) {
  hs_sql_vec out;
  memset(err, 0, sizeof *err);
  if (call(name, args, n_args, 1, &out, err) != HS_OK) return NAN;
  double r = ((double *)out.data)[0];
  hs_sql_vec_release(&out);
  return r;
}

static void test_times(void) {
  hs_error err = {0};
  hs_sql_vec out;
  /* month-end rule */
  struct {
    int64_t ts;
    hs_sql_interval iv;
    int64_t want;
  } cases[] = {
      {mk_ts(2024, 1, 31, 10, 0, 0, 0), {1, 0, 0}, mk_ts(2024, 2, 29, 10, 0, 0, 0)},
      {mk_ts(2023, 1, 31, 0, 0, 0, 0), {1, 0, 0}, mk_ts(2023, 2, 28, 0, 0, 0, 0)},
      {mk_ts(2024, 3, 31, 0, 0, 0, 0), {-1, 0, 0}, mk_ts(2024, 2, 29, 0, 0, 0, 0)},
      {mk_ts(2024, 12, 15, 0, 0, 0, 0), {13, 1, 3600000000}, mk_ts(2026, 1, 16, 1, 0, 0, 0)},
      {mk_ts(2024, 1, 1, 0, 0, 0, 0), {-12, 0, -1}, mk_ts(2022, 12, 31, 23, 59, 59, 999999)},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hs_sql_vec args[2] = {mk(T_TS, &cases[i].ts, NULL, 1), mk(T_IV, &cases[i].iv, NULL, 1)};
    CHECK_OK(call("+", args, 2, 1, &out, &err), &err);
    CHECK(((int64_t *)out.data)[0] == cases[i].want);
    hs_sql_vec_release(&out);
    hs_sql_vec_release(&args[0]);
    hs_sql_vec_release(&args[1]);
  }
  /* randomized: date + int, date - date, ts + interval, ts - ts, extract, date_trunc */
  for (int trial = 0; trial < 5000; trial++) {
    int64_t y0 = 1 + (int64_t)(rnd() % 3000);
    int m0 = 1 + (int)(rnd() % 12),
        d0 = 1 + (int)(rnd() % (unsigned)hs_civil_days_in_month(y0, m0));
    int hh = (int)(rnd() % 24), mi = (int)(rnd() % 60), ss = (int)(rnd() % 60),
        us = (int)(rnd() % 1000000);
    int64_t ts = mk_ts(y0, m0, d0, hh, mi, ss, us);
    int32_t day = (int32_t)hs_days_from_civil(y0, m0, d0);
    int32_t k = (int32_t)(rnd() % 100000) - 50000;
    hs_sql_vec dv = mk(T_DATE, &day, NULL, 1), kv = mk(T_I32, &k, NULL, 1);
    hs_sql_vec a2[2] = {dv, kv};
    CHECK_OK(call("+", a2, 2, 1, &out, &err), &err);
    CHECK(((int32_t *)out.data)[0] == day + k);
    hs_sql_vec_release(&out);
    /* interval: months, days, micros; reference by civil fields */
    hs_sql_interval iv = {(int32_t)(rnd() % 400) - 200, (int32_t)(rnd() % 400) - 200,
                          (int64_t)(rnd() % 200000000000ull) - 100000000000};
    hs_sql_vec tv = mk(T_TS, &ts, NULL, 1), ivv = mk(T_IV, &iv, NULL, 1);
    hs_sql_vec a3[2] = {tv, ivv};
    CHECK_OK(call("+", a3, 2, 1, &out, &err), &err);
    {
      int64_t mm = y0 * 12 + (m0 - 1) + iv.months;
      int64_t ny = mm >= 0 ? mm / 12 : (mm - 11) / 12; /* floor */
      int nm = (int)(mm - ny * 12) + 1;
      int nd = d0 > hs_civil_days_in_month(ny, nm) ? hs_civil_days_in_month(ny, nm) : d0;
      int64_t want =
          mk_ts(ny, nm, nd, hh, mi, ss, us) + (int64_t)iv.days * HS_SQL_USECS_PER_DAY + iv.micros;
      CHECK(((int64_t *)out.data)[0] == want);
      if (((int64_t *)out.data)[0] != want)
        fprintf(stderr, "%lld-%d-%d + (%d, %d, %lld): got %lld want %lld\n", (long long)y0, m0, d0,
                iv.months, iv.days, (long long)iv.micros, (long long)((int64_t *)out.data)[0],
                (long long)want);
      /* ts - ts: days and time of the difference */
      int64_t ts2 = want;
      hs_sql_vec t2 = mk(T_TS, &ts2, NULL, 1);
      hs_sql_vec a4[2] = {t2, tv};
      hs_sql_vec o2;
      CHECK_OK(call("-", a4, 2, 1, &o2, &err), &err);
      hs_sql_interval got = ((hs_sql_interval *)o2.data)[0];
      int64_t diff = ts2 - ts;
      CHECK(got.months == 0 && (int64_t)got.days * HS_SQL_USECS_PER_DAY + got.micros == diff &&
            (got.days == 0 || got.micros == 0 || (got.days > 0) == (got.micros > 0)) &&
            got.micros > -HS_SQL_USECS_PER_DAY && got.micros < HS_SQL_USECS_PER_DAY);
      hs_sql_vec_release(&o2);
      hs_sql_vec_release(&t2);
    }
    hs_sql_vec_release(&out);
    /* extract */
    const char *fields[] = {"year", "month",  "day",  "hour",    "minute", "second",  "doy",
                            "dow",  "isodow", "week", "quarter", "epoch",  "isoyear", "century"};
    int f = (int)(rnd() % 14);
    const char *fv[] = {fields[f]};
    hs_sql_vec fvec = mk_text(fv, 1);
    hs_sql_vec a5[2] = {fvec, tv};
    double got = f64_1(trial % 2 ? "extract" : "date_part", a5, 2, &err);
    int64_t doy = day - hs_days_from_civil(y0, 1, 1) + 1;
    int isodow = (int)(((day % 7) + 7 + 3) % 7) + 1;
    double want = 0;
    switch (f) {
    case 0: want = (double)y0; break;
    case 1: want = m0; break;
    case 2: want = d0; break;
    case 3: want = hh; break;
    case 4: want = mi; break;
    case 5: want = (double)(ss * 1000000 + us) / 1e6; break;
    case 6: want = (double)doy; break;
    case 7: want = isodow % 7; break;
    case 8: want = isodow; break;
    case 9:
    case 12: {
      /* ISO 8601: week = (doy - isodow + 10) / 7, wrapping into the neighbouring years */
      int64_t wy = y0;
      int64_t w = (doy - isodow + 10) / 7;
      if (w < 1) {
        wy = y0 - 1;
        int64_t dec31 = hs_days_from_civil(wy, 12, 31);
        int64_t d31 = dec31 - hs_days_from_civil(wy, 1, 1) + 1;
        int dw = (int)(((dec31 % 7) + 7 + 3) % 7) + 1;
        w = (d31 - dw + 10) / 7;
      } else {
        if (w == 53) {
          /* week 53 exists only if the year's Dec 31 is a Thursday or later (isodow >= 4) */
          int64_t dec31 = hs_days_from_civil(y0, 12, 31);
          int dw = (int)(((dec31 % 7) + 7 + 3) % 7) + 1;
          if (dw < 4) w = 1, wy = y0 + 1;
        }
      }
      want = f == 9 ? (double)w : (double)wy;
      break;
    }
    case 10: want = (m0 - 1) / 3 + 1; break;
    case 11: want = (double)ts / 1e6; break;
    default: want = (double)((y0 + 99) / 100); break;
    }
    if (!(got == want || (f == 11 && fabs(got - want) < 1e-6 * fabs(want)))) {
      hs_test_failures++;
      fprintf(stderr, "extract %s from %lld-%d-%d: got %.17g want %.17g (%s)\n", fields[f],
              (long long)y0, m0, d0, got, want, err.message);
    }
    hs_test_checks++;
    hs_sql_vec_release(&fvec);
    /* date_trunc */
    const char *units[] = {"month", "year", "day", "hour", "week", "quarter"};
    int u = (int)(rnd() % 6);
    const char *uv[] = {units[u]};
    hs_sql_vec uvec = mk_text(uv, 1);
    hs_sql_vec a6[2] = {uvec, tv};
    CHECK_OK(call("date_trunc", a6, 2, 1, &out, &err), &err);
    int64_t wt;
    switch (u) {
    case 0: wt = mk_ts(y0, m0, 1, 0, 0, 0, 0); break;
    case 1: wt = mk_ts(y0, 1, 1, 0, 0, 0, 0); break;
    case 2: wt = mk_ts(y0, m0, d0, 0, 0, 0, 0); break;
    case 3: wt = mk_ts(y0, m0, d0, hh, 0, 0, 0); break;
    case 4: wt = (int64_t)(day - (isodow - 1)) * HS_SQL_USECS_PER_DAY; break;
    default: wt = mk_ts(y0, (m0 - 1) / 3 * 3 + 1, 1, 0, 0, 0, 0); break;
    }
    CHECK(out.data != NULL && ((int64_t *)out.data)[0] == wt);
    hs_sql_vec_release(&out);
    hs_sql_vec_release(&uvec);
    hs_sql_vec_release(&tv);
    hs_sql_vec_release(&ivv);
    hs_sql_vec_release(&dv);
    hs_sql_vec_release(&kv);
  }
  /* interval * float, / float */
  hs_sql_interval m1 = {1, 0, 0}, d1 = {0, 1, 0};
  double f15 = 1.5, f05 = 0.5, z = 0;
  hs_sql_vec a[2] = {mk(T_IV, &m1, NULL, 1), mk(T_F64, &f15, NULL, 1)};
  CHECK_OK(call("*", a, 2, 1, &out, &err), &err);
  {
    char buf[HS_SQL_FMT_MAX];
    hs_sql_fmt_interval(((hs_sql_interval *)out.data)[0], buf);
    CHECK(strcmp(buf, "1 mon 15 days") == 0);
  }
  hs_sql_vec_release(&out);
  hs_sql_vec_release(&a[0]);
  hs_sql_vec_release(&a[1]);
  a[0] = mk(T_IV, &d1, NULL, 1);
  a[1] = mk(T_F64, &f05, NULL, 1);
  CHECK_OK(call("*", a, 2, 1, &out, &err), &err);
  CHECK(((hs_sql_interval *)out.data)[0].days == 0 &&
        ((hs_sql_interval *)out.data)[0].micros == 12 * HS_SQL_USECS_PER_HOUR);
  hs_sql_vec_release(&out);
  hs_sql_vec_release(&a[1]);
  a[1] = mk(T_F64, &z, NULL, 1);
  CHECK(call("/", a, 2, 1, &out, &err) == HS_ERR_INVALID_ARG);
  hs_sql_vec_release(&a[0]);
  hs_sql_vec_release(&a[1]);
  /* make_date and errors */
  int32_t ymd[3] = {2023, 2, 29};
  hs_sql_vec md[3] = {mk(T_I32, &ymd[0], NULL, 1), mk(T_I32, &ymd[1], NULL, 1),
                      mk(T_I32, &ymd[2], NULL, 1)};
  memset(&err, 0, sizeof err);
  CHECK(call("make_date", md, 3, 1, &out, &err) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "date field value out of range") != NULL);
  for (int i = 0; i < 3; i++) hs_sql_vec_release(&md[i]);
  const char *bad[] = {"fortnight"};
  int64_t ts0 = 0;
  hs_sql_vec ex[2] = {mk_text(bad, 1), mk(T_TS, &ts0, NULL, 1)};
  memset(&err, 0, sizeof err);
  CHECK(call("extract", ex, 2, 1, &out, &err) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "not recognized") != NULL);
  hs_sql_vec_release(&ex[0]);
  hs_sql_vec_release(&ex[1]);
  /* age: PostgreSQL's documented example, and month-end borrows */
  struct {
    int64_t a, b;
    const char *want;
  } ages[] = {
      {mk_ts(2001, 4, 10, 0, 0, 0, 0), mk_ts(1957, 6, 13, 0, 0, 0, 0), "43 years 9 mons 27 days"},
      {mk_ts(2024, 3, 31, 0, 0, 0, 0), mk_ts(2024, 2, 29, 0, 0, 0, 0), "1 mon 2 days"},
      {mk_ts(2024, 2, 29, 0, 0, 0, 0), mk_ts(2024, 3, 31, 0, 0, 0, 0), "-1 mons -2 days"},
      {mk_ts(2024, 1, 1, 1, 0, 0, 0), mk_ts(2023, 12, 31, 23, 0, 0, 0), "02:00:00"},
  };
  for (size_t i = 0; i < sizeof ages / sizeof ages[0]; i++) {
    hs_sql_vec ag[2] = {mk(T_TS, &ages[i].a, NULL, 1), mk(T_TS, &ages[i].b, NULL, 1)};
    CHECK_OK(call("age", ag, 2, 1, &out, &err), &err);
    char buf[HS_SQL_FMT_MAX];
    hs_sql_fmt_interval(((hs_sql_interval *)out.data)[0], buf);
    if (strcmp(buf, ages[i].want) != 0) {
      hs_test_failures++;
      fprintf(stderr, "age %zu: got '%s', want '%s'\n", i, buf, ages[i].want);
    }
    hs_test_checks++;
    hs_sql_vec_release(&out);
    hs_sql_vec_release(&ag[0]);
    hs_sql_vec_release(&ag[1]);
  }
  /* date_trunc('century') starts in year 2001 */
  int64_t t24 = mk_ts(2024, 5, 5, 0, 0, 0, 0);
  const char *cv[] = {"century"};
  hs_sql_vec dt[2] = {mk_text(cv, 1), mk(T_TS, &t24, NULL, 1)};
  CHECK_OK(call("date_trunc", dt, 2, 1, &out, &err), &err);
  CHECK(((int64_t *)out.data)[0] == mk_ts(2001, 1, 1, 0, 0, 0, 0));
  hs_sql_vec_release(&out);
  hs_sql_vec_release(&dt[0]);
  hs_sql_vec_release(&dt[1]);
}

/* Random bytes from an alphabet of the parsers' syntax into every type:
 * parse or refuse, never read past the text (ASan) or crash; what parses
 * prints and reads back the same. */
static void test_parse_garbage(void) {
  const char alpha[] = "0123456789+-.:eE TtZz\\xabcdefyoBCADmonthsdayago_%\xc3\xa9";
  hs_sql_type types[] = {T_BOOL,  T_I32,  T_I64, T_F64,  {HS_SQL_NUMERIC, 12, 3},
                         T_BYTEA, T_DATE, T_TS,  T_TSTZ, T_IV};
  hs_arena arena;
  hs_arena_init(&arena);
  int parsed = 0;
  for (int trial = 0; trial < 60000; trial++) {
    char buf[32];
    size_t n = rnd() % 24;
    for (size_t i = 0; i < n; i++) buf[i] = alpha[rnd() % (sizeof alpha - 1)];
    hs_sql_type t = types[rnd() % 10];
    /* no NUL terminator after the text: a heap copy of exactly n bytes */
    char *heap = malloc(n ? n : 1);
    memcpy(heap, buf, n);
    hs_sql_value v;
    hs_error err = {0};
    hs_status st = hs_sql_cast_text(heap, n, t, 0, &arena, &v, &err);
    CHECK(st == HS_OK || st == HS_ERR_INVALID_ARG || st == HS_ERR_UNSUPPORTED);
    if (st == HS_OK && t.id != HS_SQL_BYTEA) {
      parsed++;
      hs_sql_vec in = mk(t, &v.v, NULL, 1), out;
      memset(&out, 0, sizeof out);
      memset(&err, 0, sizeof err);
      CHECK_OK(hs_sql_cast_vec(&in, T_TEXT, 0, &out, &err), &err);
      if (out.data != NULL) {
        hs_sql_str txt = ((hs_sql_str *)out.data)[0];
        hs_sql_value w;
        memset(&err, 0, sizeof err);
        CHECK_OK(hs_sql_cast_text(txt.ptr, txt.len, t, 0, &arena, &w, &err), &err);
        bool same = memcmp(&w.v, &v.v, hs_sql_vec_width(t)) == 0 ||
                    (t.id == HS_SQL_FLOAT64 && isnan(w.v.f64) && isnan(v.v.f64)) ||
                    (t.id == HS_SQL_BOOL && w.v.b == v.v.b);
        if (!same) {
          hs_test_failures++;
          fprintf(stderr, "garbage '%.*s' as type %d printed '%.*s' which reads back differently\n",
                  (int)n, buf, t.id, (int)txt.len, txt.ptr);
        }
        hs_test_checks++;
      }
      hs_sql_vec_release(&out);
      hs_sql_vec_release(&in);
    }
    free(heap);
    if (trial % 1000 == 0) {
      hs_arena_reset(&arena);
      hs_arena_init(&arena);
    }
  }
  CHECK(parsed > 100);
  hs_arena_reset(&arena);
}

int main(void) {
  test_int_arith(32);
  test_int_arith(64);
  test_int_edges();
  test_nulltype_args();
  test_gcd();
  test_float();
  test_numeric_arith();
  test_cast_text();
  test_cast_vec_numbers();
  test_strings();
  test_like();
  test_times();
  test_parse_garbage();
  return hs_test_finish("test_sql_fn");
}
