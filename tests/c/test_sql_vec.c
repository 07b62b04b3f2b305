/*
 * test_sql_vec.c — the SQL layer's types and vectors (src/sql/types.c,
 * vec.c, vec_arrow.c): take/slice/concat/hash/cmp on random columns of
 * every type against plain loops over hs_sql_vec_get, Arrow import of
 * every supported Arrow type (built with src/arrow's builders, also
 * sliced, dictionary-encoded and as string views) against the values put
 * in, export → hs_arrow_array_validate → import round trips, and strings
 * outliving the chunk they were imported in.
 */
#include <math.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "sql/types.h"
#include "sql/vec.h"

static uint64_t g_rng = 0x5EED;

static uint64_t rnd(void) {
  return hs_test_rand(&g_rng);
}
static int64_t rnd_in(int64_t lo, int64_t hi) { /* [lo, hi] */
  return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* ---------------------------------------------------- reference compare */

static int cmp3(double a, double b) {
  return (a > b) - (a < b);
}

/* Plain comparison of two non-null values of one type (the spec in vec.h,
 * written out without the kernels' shortcuts). */
static int ref_cmp_values(const hs_sql_value *x, const hs_sql_value *y) {
  if (x->is_null || y->is_null) return (int)x->is_null - (int)y->is_null;
  switch (x->type.id) {
  case HS_SQL_BOOL: return (int)x->v.b - (int)y->v.b;
  case HS_SQL_INT32:
  case HS_SQL_DATE: return cmp3(x->v.i32, y->v.i32);
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: return (x->v.i64 > y->v.i64) - (x->v.i64 < y->v.i64);
  case HS_SQL_FLOAT64: {
    bool nx = isnan(x->v.f64), ny = isnan(y->v.f64);
    if (nx || ny) return (int)nx - (int)ny;
    return cmp3(x->v.f64, y->v.f64);
  }
  case HS_SQL_NUMERIC: return (x->v.dec > y->v.dec) - (x->v.dec < y->v.dec);
  case HS_SQL_INTERVAL: {
    /* months of 30 days, days of 24 hours, as long double to keep it simple */
    long double a = (long double)x->v.iv.months * 30 * 86400e6L +
                    (long double)x->v.iv.days * 86400e6L + (long double)x->v.iv.micros;
    long double b = (long double)y->v.iv.months * 30 * 86400e6L +
                    (long double)y->v.iv.days * 86400e6L + (long double)y->v.iv.micros;
    return (a > b) - (a < b);
  }
  case HS_SQL_TEXT:
  case HS_SQL_BYTEA: {
    for (uint32_t k = 0;; k++) {
      if (k == x->v.s.len || k == y->v.s.len) return (x->v.s.len > k) - (y->v.s.len > k);
      uint8_t a = (uint8_t)x->v.s.ptr[k], b = (uint8_t)y->v.s.ptr[k];
      if (a != b) return a < b ? -1 : 1;
    }
  }
  case HS_SQL_VECTOR:
  case HS_SQL_HALFVEC:
    for (int32_t k = 0; k < x->type.a; k++) {
      int c = cmp3(x->v.vec[k], y->v.vec[k]);
      if (c != 0) return c;
    }
    return 0;
  default: return 0;
  }
}

static int sign(int c) {
  return (c > 0) - (c < 0);
}

/* ------------------------------------------------------- random columns */

static const char *const WORDS[] = {"",
                                    "a",
                                    "ab",
                                    "abc",
                                    "b",
                                    "zz",
                                    "hello world",
                                    "\xc3\xa9t\xc3\xa9",
                                    "0123456789abcdefX",
                                    "0123456789abcdefY"};
#define N_WORDS (sizeof WORDS / sizeof WORDS[0])

/* A random column of type t with about one null in `null_every` rows
 * (0: none); values drawn from small domains so that equal values occur. */
static void random_vec(hs_sql_vec *v, hs_sql_type t, int64_t n, int null_every) {
  hs_error err = {0};
  CHECK_OK(hs_sql_vec_alloc(v, t, n, null_every > 0, &err), &err);
  uint8_t *valid = hs_sql_vec_mut_valid(v);
  void *d = hs_sql_vec_mut_data(v);
  size_t bytes_needed = 0;
  for (size_t k = 0; k < N_WORDS; k++) bytes_needed += strlen(WORDS[k]);
  char *pool = NULL;
  if (hs_sql_type_is_string(t.id)) {
    pool = hs_sql_vec_add_bytes(v, bytes_needed, &err);
    CHECK(pool != NULL);
  }
  static const double F[] = {0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, INFINITY, -INFINITY};
  for (int64_t i = 0; i < n; i++) {
    bool null = null_every > 0 && rnd() % (uint64_t)null_every == 0;
    if (valid != NULL) valid[i] = !null;
    if (null) continue; /* slot stays zero */
    switch (t.id) {
    case HS_SQL_BOOL: ((uint8_t *)d)[i] = rnd() & 1; break;
    case HS_SQL_INT32:
    case HS_SQL_DATE:
      ((int32_t *)d)[i] = (int32_t)rnd_in(-20, 20) * (rnd() % 5 == 0 ? 100000000 : 1);
      break;
    case HS_SQL_INT64:
    case HS_SQL_TIMESTAMP:
    case HS_SQL_TIMESTAMPTZ:
      ((int64_t *)d)[i] = rnd_in(-30, 30) * (rnd() % 4 == 0 ? INT64_C(1) << 50 : 1);
      break;
    case HS_SQL_FLOAT64: {
      uint64_t r = rnd() % 12;
      ((double *)d)[i] = r < 8 ? F[r] : r == 8 ? NAN : r == 9 ? -NAN : (double)rnd_in(-5, 5) / 4;
      if (t.a == 4) ((double *)d)[i] = (double)(float)((double *)d)[i]; /* real: float32 values */
      break;
    }
    case HS_SQL_NUMERIC:
      ((hs_sql_i128 *)d)[i] =
          (hs_sql_i128)rnd_in(-50, 50) * ((rnd() & 1) ? (hs_sql_i128)1 << 80 : 1);
      break;
    case HS_SQL_INTERVAL: {
      hs_sql_interval *iv = &((hs_sql_interval *)d)[i];
      iv->months = (int32_t)rnd_in(-2, 2);
      iv->days = (int32_t)rnd_in(-60, 60);
      iv->micros = rnd_in(-2, 2) * INT64_C(86400000000) + rnd_in(-1, 1);
      break;
    }
    case HS_SQL_TEXT:
    case HS_SQL_BYTEA: {
      size_t w = rnd() % N_WORDS, at = 0;
      for (size_t k = 0; k < w; k++) at += strlen(WORDS[k]);
      memcpy(pool + at, WORDS[w], strlen(WORDS[w]));
      ((hs_sql_str *)d)[i] = (hs_sql_str){pool + at, (uint32_t)strlen(WORDS[w])};
      break;
    }
    case HS_SQL_VECTOR:
    case HS_SQL_HALFVEC: {
      float *f = (float *)d + i * t.a;
      for (int32_t k = 0; k < t.a; k++) f[k] = (float)rnd_in(-2, 2) * 0.5f;
      if (rnd() % 7 == 0) f[0] = -0.0f;
      break;
    }
    default: break;
    }
  }
  /* An empty string row must still carry a pointer. */
  if (hs_sql_type_is_string(t.id)) {
    hs_sql_str *s = d;
    for (int64_t i = 0; i < n; i++) {
      if (s[i].ptr == NULL) s[i].ptr = "";
    }
  }
}

static bool rows_equal(const hs_sql_vec *a, int64_t i, const hs_sql_vec *b, int64_t j) {
  hs_sql_value x, y;
  hs_sql_vec_get(a, i, &x);
  hs_sql_vec_get(b, j, &y);
  if (x.is_null != y.is_null) return false;
  if (x.is_null) return true;
  if (a->type.id == HS_SQL_FLOAT64 && isnan(x.v.f64)) return isnan(y.v.f64);
  return ref_cmp_values(&x, &y) == 0;
}

static hs_sql_type T(hs_sql_tid id, int32_t a, int32_t b) {
  hs_sql_type t = {id, a, b};
  return t;
}

static const hs_sql_type *all_types(size_t *n) {
  static hs_sql_type ts[14];
  size_t k = 0;
  ts[k++] = T(HS_SQL_BOOL, 0, 0);
  ts[k++] = T(HS_SQL_INT32, 0, 0);
  ts[k++] = T(HS_SQL_INT64, 0, 0);
  ts[k++] = T(HS_SQL_FLOAT64, 0, 0);
  ts[k++] = T(HS_SQL_FLOAT64, 4, 0);
  ts[k++] = T(HS_SQL_NUMERIC, 38, 4);
  ts[k++] = T(HS_SQL_TEXT, 0, 0);
  ts[k++] = T(HS_SQL_BYTEA, 0, 0);
  ts[k++] = T(HS_SQL_DATE, 0, 0);
  ts[k++] = T(HS_SQL_TIMESTAMP, 0, 0);
  ts[k++] = T(HS_SQL_TIMESTAMPTZ, 0, 0);
  ts[k++] = T(HS_SQL_INTERVAL, 0, 0);
  ts[k++] = T(HS_SQL_VECTOR, 3, 0);
  ts[k++] = T(HS_SQL_HALFVEC, 2, 0);
  *n = k;
  return ts;
}

/* ------------------------------------------------ take/slice/concat/... */

static void test_kernels(void) {
  size_t nt;
  const hs_sql_type *ts = all_types(&nt);
  hs_error err = {0};
  for (size_t ti = 0; ti < nt; ti++) {
    hs_sql_type t = ts[ti];
    if (t.id == HS_SQL_FLOAT64 && t.a == 4) continue; /* same kernels as double */
    for (int round = 0; round < 4; round++) {
      int64_t n = rnd_in(0, 300);
      hs_sql_vec a = {0}, b = {0};
      random_vec(&a, t, n, round == 0 ? 0 : 4);
      random_vec(&b, t, rnd_in(1, 50), 3);

      /* take: rows sel[i] or NULL for -1 */
      int64_t n_sel = rnd_in(0, 400);
      int64_t *sel = malloc((size_t)(n_sel + 1) * sizeof *sel);
      for (int64_t i = 0; i < n_sel; i++) sel[i] = n == 0 || rnd() % 9 == 0 ? -1 : rnd_in(0, n - 1);
      hs_sql_vec tk = {0};
      CHECK_OK(hs_sql_vec_take(&tk, &a, sel, n_sel, &err), &err);
      CHECK_EQ_INT(tk.n, n_sel);
      int bad_take = 0;
      for (int64_t i = 0; i < n_sel; i++) {
        if (sel[i] < 0) {
          bad_take += hs_sql_vec_valid(&tk, i);
        } else {
          bad_take += !rows_equal(&tk, i, &a, sel[i]);
        }
      }
      CHECK_EQ_INT(bad_take, 0);

      /* slice */
      int64_t off = rnd_in(0, n), len = rnd_in(0, n - off);
      hs_sql_vec sl = {0};
      CHECK_OK(hs_sql_vec_slice(&sl, &a, off, len, &err), &err);
      int bad_slice = 0;
      for (int64_t i = 0; i < len; i++) bad_slice += !rows_equal(&sl, i, &a, off + i);
      CHECK_EQ_INT(bad_slice, 0);
      CHECK(hs_sql_vec_slice(&(hs_sql_vec){0}, &a, off, n - off + 1, &err) != HS_OK);
      err = (hs_error){0};

      /* concat of a, its slice, the take and b */
      hs_sql_vec parts[4] = {a, sl, tk, b}, cat = {0};
      CHECK_OK(hs_sql_vec_concat(&cat, parts, 4, &err), &err);
      CHECK_EQ_INT(cat.n, a.n + sl.n + tk.n + b.n);
      int bad_cat = 0;
      int64_t at = 0;
      for (int p = 0; p < 4; p++) {
        for (int64_t i = 0; i < parts[p].n; i++) bad_cat += !rows_equal(&cat, at + i, &parts[p], i);
        at += parts[p].n;
      }
      CHECK_EQ_INT(bad_cat, 0);

      /* cmp against the reference; hash equal whenever cmp says equal */
      int bad_cmp = 0, bad_hash = 0, bad_anti = 0;
      int64_t distinct_pairs = 0, distinct_hash_eq = 0;
      for (int64_t i = 0; i < cat.n; i++) {
        for (int r = 0; r < 8; r++) {
          int64_t j = rnd_in(0, b.n - 1);
          hs_sql_value x, y;
          hs_sql_vec_get(&cat, i, &x);
          hs_sql_vec_get(&b, j, &y);
          int c = hs_sql_vec_cmp(&cat, i, &b, j), ref = ref_cmp_values(&x, &y);
          bad_cmp += sign(c) != sign(ref);
          bad_anti += sign(hs_sql_vec_cmp(&b, j, &cat, i)) != -sign(c);
          uint64_t h1 = hs_sql_vec_hash(&cat, i, 42), h2 = hs_sql_vec_hash(&b, j, 42);
          if (ref == 0) {
            bad_hash += h1 != h2;
          } else {
            distinct_pairs++;
            distinct_hash_eq += h1 == h2;
          }
        }
      }
      CHECK_EQ_INT(bad_cmp, 0);
      CHECK_EQ_INT(bad_anti, 0);
      CHECK_EQ_INT(bad_hash, 0);
      CHECK(distinct_hash_eq * 100 <= distinct_pairs + 100); /* distinct values rarely collide */
      if (bad_cmp || bad_hash || bad_take || bad_slice || bad_cat) {
        char name[64];
        fprintf(stderr, "  (type %s, round %d)\n", hs_sql_type_name(t, name, sizeof name), round);
      }

      /* hash_rows over a slice equals the per-row hash */
      {
        int64_t hoff = rnd_in(0, cat.n), hn = rnd_in(0, cat.n - hoff);
        uint64_t *hs = malloc((size_t)(hn + 1) * sizeof *hs),
                 *seeds = malloc((size_t)(hn + 1) * sizeof *seeds);
        for (int64_t i = 0; i < hn; i++) hs[i] = seeds[i] = rnd();
        hs_sql_vec_hash_rows(&cat, hoff, hn, hs);
        int bad_rows = 0;
        for (int64_t i = 0; i < hn; i++)
          bad_rows += hs[i] != hs_sql_vec_hash(&cat, hoff + i, seeds[i]);
        CHECK_EQ_INT(bad_rows, 0);
        free(hs);
        free(seeds);
      }

      /* shares outlive the original */
      hs_sql_vec sh = {0};
      CHECK_OK(hs_sql_vec_share(&sh, &tk, &err), &err);
      hs_sql_vec_release(&tk);
      for (int64_t i = 0; i < sh.n; i++) (void)hs_sql_vec_hash(&sh, i, 1);
      CHECK(tk.n == 0 && tk.n_refs == 0 && tk.data == NULL);
      hs_sql_vec_release(&sh);
      hs_sql_vec_release(&sh); /* zeroed: a no-op */
      hs_sql_vec_release(&cat);
      hs_sql_vec_release(&sl);
      hs_sql_vec_release(&a);
      hs_sql_vec_release(&b);
      free(sel);
    }
  }
}

/* INT32 and INT64, -0.0 and 0.0, NaN and -NaN hash alike; NULLs alike. */
static void test_hash_cross(void) {
  hs_error err = {0};
  hs_sql_vec a = {0}, b = {0};
  CHECK_OK(hs_sql_vec_alloc(&a, T(HS_SQL_INT32, 0, 0), 3, true, &err), &err);
  CHECK_OK(hs_sql_vec_alloc(&b, T(HS_SQL_INT64, 0, 0), 3, true, &err), &err);
  int32_t *x = hs_sql_vec_mut_data(&a);
  int64_t *y = hs_sql_vec_mut_data(&b);
  x[0] = -7;
  y[0] = -7;
  x[1] = INT32_MAX;
  y[1] = INT32_MAX;
  hs_sql_vec_mut_valid(&a)[0] = hs_sql_vec_mut_valid(&a)[1] = 1;
  hs_sql_vec_mut_valid(&b)[0] = hs_sql_vec_mut_valid(&b)[1] = 1;
  for (int i = 0; i < 3; i++) CHECK(hs_sql_vec_hash(&a, i, 9) == hs_sql_vec_hash(&b, i, 9));
  CHECK(hs_sql_vec_hash(&a, 0, 9) != hs_sql_vec_hash(&a, 0, 10)); /* the seed counts */
  hs_sql_vec_release(&a);
  hs_sql_vec_release(&b);
  CHECK_OK(hs_sql_vec_alloc(&a, T(HS_SQL_FLOAT64, 0, 0), 4, false, &err), &err);
  double *f = hs_sql_vec_mut_data(&a);
  f[0] = 0.0;
  f[1] = -0.0;
  f[2] = NAN;
  f[3] = -NAN;
  CHECK(hs_sql_vec_hash(&a, 0, 1) == hs_sql_vec_hash(&a, 1, 1));
  CHECK(hs_sql_vec_hash(&a, 2, 1) == hs_sql_vec_hash(&a, 3, 1));
  CHECK(hs_sql_vec_cmp(&a, 0, &a, 1) == 0 && hs_sql_vec_cmp(&a, 2, &a, 3) == 0);
  CHECK(hs_sql_vec_cmp(&a, 2, &a, 0) > 0);
  hs_sql_vec_release(&a);
}

/* const, make_nullable, chunks */
static void test_const_chunk(void) {
  hs_error err = {0};
  size_t nt;
  const hs_sql_type *ts = all_types(&nt);
  for (size_t ti = 0; ti < nt; ti++) {
    hs_sql_vec src = {0}, c = {0};
    random_vec(&src, ts[ti], 5, 2);
    for (int64_t r = 0; r < 5; r++) {
      hs_sql_value val;
      hs_sql_vec_get(&src, r, &val);
      int64_t n = rnd_in(0, 70);
      CHECK_OK(hs_sql_vec_const(&c, &val, n, &err), &err);
      int bad = 0;
      for (int64_t i = 0; i < n; i++) bad += !rows_equal(&c, i, &src, r);
      CHECK_EQ_INT(bad, 0);
      hs_sql_vec_release(&c);
    }
    hs_sql_vec_release(&src);
  }
  hs_sql_value nullv = {.type = T(HS_SQL_NULLTYPE, 0, 0), .is_null = true};
  hs_sql_vec c = {0};
  CHECK_OK(hs_sql_vec_const(&c, &nullv, 10, &err), &err);
  CHECK(c.n == 10 && !hs_sql_vec_valid(&c, 3));
  hs_sql_vec_release(&c);

  CHECK_OK(hs_sql_vec_alloc(&c, T(HS_SQL_INT64, 0, 0), 100, false, &err), &err);
  CHECK(c.valid == NULL);
  CHECK_OK(hs_sql_vec_make_nullable(&c, &err), &err);
  CHECK(c.valid != NULL && hs_sql_vec_valid(&c, 99));
  for (int k = 0; k < 5; k++)
    CHECK(hs_sql_vec_add_bytes(&c, 10, &err) != NULL); /* refs go to the heap */
  CHECK_EQ_INT(c.n_refs, 7);
  hs_sql_vec sh = {0};
  CHECK_OK(hs_sql_vec_share(&sh, &c, &err), &err);
  hs_sql_vec_release(&c);
  CHECK_EQ_INT(sh.n_refs, 7);
  hs_sql_vec_release(&sh);

  /* A gather of strings holds the blobs of their bytes, not the source's
   * array of views; the strings stay readable after the source goes. */
  {
    hs_sql_vec src = {0}, g = {0};
    CHECK_OK(hs_sql_vec_alloc(&src, T(HS_SQL_TEXT, 0, 0), 1000, false, &err), &err);
    char *bytes = hs_sql_vec_add_bytes(&src, 5, &err);
    memcpy(bytes, "hello", 5);
    hs_sql_str *sv = hs_sql_vec_mut_data(&src);
    for (int i = 0; i < 1000; i++) sv[i] = (hs_sql_str){bytes + i % 5, (uint32_t)(5 - i % 5)};
    int64_t pick[3] = {999, 3, 0};
    CHECK_OK(hs_sql_vec_take(&g, &src, pick, 3, &err), &err);
    CHECK_EQ_INT(g.n_refs, 2); /* its own views + the bytes */
    CHECK(g.refs_inline[0] != src.refs_inline[0] && g.refs_inline[1] == src.refs_inline[1]);
    hs_sql_vec_release(&src);
    hs_sql_value x;
    hs_sql_vec_get(&g, 0, &x);
    CHECK(x.v.s.len == 1 && x.v.s.ptr[0] == 'o');
    hs_sql_vec_get(&g, 1, &x);
    CHECK(x.v.s.len == 2 && memcmp(x.v.s.ptr, "lo", 2) == 0);
    hs_sql_vec_release(&g);
  }

  /* concat widens labels, refuses layouts */
  {
    hs_sql_vec parts[2], cat = {0};
    memset(parts, 0, sizeof parts);
    CHECK_OK(hs_sql_vec_alloc(&parts[0], T(HS_SQL_NUMERIC, 10, 2), 2, false, &err), &err);
    CHECK_OK(hs_sql_vec_alloc(&parts[1], T(HS_SQL_NUMERIC, 12, 2), 3, false, &err), &err);
    CHECK_OK(hs_sql_vec_concat(&cat, parts, 2, &err), &err);
    CHECK(hs_sql_type_eq(cat.type, T(HS_SQL_NUMERIC, 12, 2)) && cat.n == 5);
    hs_sql_vec_release(&cat);
    hs_sql_vec_release(&parts[1]);
    CHECK_OK(hs_sql_vec_alloc(&parts[1], T(HS_SQL_NUMERIC, 10, 3), 3, false, &err), &err);
    CHECK(hs_sql_vec_concat(&cat, parts, 2, &err) == HS_ERR_INTERNAL && cat.n_refs == 0);
    err = (hs_error){0};
    hs_sql_vec_release(&parts[0]);
    hs_sql_vec_release(&parts[1]);
    CHECK_OK(hs_sql_vec_alloc(&parts[0], T(HS_SQL_FLOAT64, 4, 0), 2, false, &err), &err);
    CHECK_OK(hs_sql_vec_alloc(&parts[1], T(HS_SQL_FLOAT64, 0, 0), 3, false, &err), &err);
    CHECK_OK(hs_sql_vec_concat(&cat, parts, 2, &err), &err);
    CHECK(hs_sql_type_eq(cat.type, T(HS_SQL_FLOAT64, 0, 0)));
    hs_sql_vec_release(&cat);
    hs_sql_vec_release(&parts[0]);
    hs_sql_vec_release(&parts[1]);
    CHECK_OK(hs_sql_vec_alloc(&parts[0], T(HS_SQL_VECTOR, 3, 0), 2, false, &err), &err);
    CHECK_OK(hs_sql_vec_alloc(&parts[1], T(HS_SQL_VECTOR, 4, 0), 3, false, &err), &err);
    CHECK(hs_sql_vec_concat(&cat, parts, 2, &err) == HS_ERR_INTERNAL);
    err = (hs_error){0};
    hs_sql_vec_release(&parts[0]);
    hs_sql_vec_release(&parts[1]);
  }

  hs_sql_chunk ch = {0}, tk = {0}, mv = {0};
  CHECK_OK(hs_sql_chunk_init(&ch, 3, 50, &err), &err);
  for (int k = 0; k < 3; k++) random_vec(&ch.cols[k], ts[k + 5], 50, 3);
  int64_t sel[4] = {49, 0, -1, 7};
  CHECK_OK(hs_sql_chunk_take(&tk, &ch, sel, 4, &err), &err);
  CHECK(tk.n == 4 && tk.n_cols == 3);
  for (int k = 0; k < 3; k++) {
    CHECK(rows_equal(&tk.cols[k], 0, &ch.cols[k], 49) &&
          rows_equal(&tk.cols[k], 3, &ch.cols[k], 7));
    CHECK(!hs_sql_vec_valid(&tk.cols[k], 2));
  }
  hs_sql_chunk_move(&mv, &tk);
  CHECK(tk.cols == NULL && mv.n == 4);
  hs_sql_chunk_release(&ch);
  hs_sql_chunk_release(&mv);
  hs_sql_chunk_release(&tk);
}

/* ------------------------------------------------------------ types.c */

static void test_types(void) {
  char buf[64], why[128];
  CHECK(strcmp(hs_sql_type_name(T(HS_SQL_NUMERIC, 15, 2), buf, sizeof buf), "numeric(15,2)") == 0);
  CHECK(strcmp(hs_sql_type_name(T(HS_SQL_VECTOR, 3, 0), buf, sizeof buf), "vector(3)") == 0);
  CHECK(strcmp(hs_sql_type_name(T(HS_SQL_INT32, 0, 0), buf, sizeof buf), "integer") == 0);
  CHECK(strcmp(hs_sql_type_name(T(HS_SQL_FLOAT64, 4, 0), buf, sizeof buf), "real") == 0);
  CHECK(strcmp(hs_sql_type_name(T(HS_SQL_TIMESTAMPTZ, 0, 0), buf, sizeof buf),
               "timestamp with time zone") == 0);
  CHECK(strcmp(hs_sql_type_name(T(HS_SQL_NUMERIC, 15, 2), buf, 4), "num") == 0); /* truncated */
  hs_sql_type t;
  int32_t m2[2] = {15, 2}, m1[1] = {3}, bad[1] = {0};
  CHECK(hs_sql_type_from_name("numeric", m2, 2, &t, why, sizeof why) &&
        hs_sql_type_eq(t, T(HS_SQL_NUMERIC, 15, 2)));
  CHECK(hs_sql_type_from_name("int4", NULL, 0, &t, why, sizeof why) && t.id == HS_SQL_INT32);
  CHECK(hs_sql_type_from_name("int2", NULL, 0, &t, why, sizeof why) && t.id == HS_SQL_INT32);
  CHECK(hs_sql_type_from_name("int8", NULL, 0, &t, why, sizeof why) && t.id == HS_SQL_INT64);
  CHECK(hs_sql_type_from_name("float4", NULL, 0, &t, why, sizeof why) &&
        hs_sql_type_eq(t, T(HS_SQL_FLOAT64, 4, 0)));
  CHECK(hs_sql_type_from_name("varchar", m1, 1, &t, why, sizeof why) && t.id == HS_SQL_TEXT);
  CHECK(hs_sql_type_from_name("timestamptz", NULL, 0, &t, why, sizeof why) &&
        t.id == HS_SQL_TIMESTAMPTZ);
  CHECK(hs_sql_type_from_name("vector", m1, 1, &t, why, sizeof why) &&
        hs_sql_type_eq(t, T(HS_SQL_VECTOR, 3, 0)));
  CHECK(hs_sql_type_from_name("bit", NULL, 0, &t, why, sizeof why) &&
        hs_sql_type_eq(t, T(HS_SQL_BIT, 1, 0)));
  CHECK(!hs_sql_type_from_name("vector", bad, 1, &t, why, sizeof why) &&
        strstr(why, "at least 1") != NULL);
  int32_t big[2] = {50, 2};
  CHECK(!hs_sql_type_from_name("numeric", big, 2, &t, why, sizeof why) &&
        strstr(why, "precision 50") != NULL);
  CHECK(!hs_sql_type_from_name("frobnicate", NULL, 0, &t, why, sizeof why) &&
        strcmp(why, "type \"frobnicate\" does not exist") == 0);
  CHECK(!hs_sql_type_from_name("int4", m1, 1, &t, why, sizeof why));

  /* implicit casts and common types */
  hs_sql_type i4 = T(HS_SQL_INT32, 0, 0), i8 = T(HS_SQL_INT64, 0, 0), f8 = T(HS_SQL_FLOAT64, 0, 0);
  hs_sql_type num = T(HS_SQL_NUMERIC, 10, 2), txt = T(HS_SQL_TEXT, 0, 0), d = T(HS_SQL_DATE, 0, 0);
  hs_sql_type ts = T(HS_SQL_TIMESTAMP, 0, 0), tz = T(HS_SQL_TIMESTAMPTZ, 0, 0);
  CHECK(hs_sql_type_implicit(i4, i8) && hs_sql_type_implicit(i4, num) &&
        hs_sql_type_implicit(i8, f8));
  CHECK(hs_sql_type_implicit(num, f8) && !hs_sql_type_implicit(f8, num) &&
        !hs_sql_type_implicit(i8, i4));
  CHECK(hs_sql_type_implicit(d, ts) && hs_sql_type_implicit(ts, tz) &&
        !hs_sql_type_implicit(tz, d));
  CHECK(!hs_sql_type_implicit(txt, i4) && !hs_sql_type_implicit(i4, txt));
  CHECK(hs_sql_type_implicit(T(HS_SQL_NULLTYPE, 0, 0), txt));
  CHECK(hs_sql_type_implicit(T(HS_SQL_VECTOR, 0, 0), T(HS_SQL_VECTOR, 3, 0)));
  CHECK(hs_sql_type_implicit(T(HS_SQL_VECTOR, 3, 0), T(HS_SQL_VECTOR, 0, 0)));
  CHECK(!hs_sql_type_implicit(T(HS_SQL_VECTOR, 3, 0), T(HS_SQL_VECTOR, 4, 0)));
  hs_sql_type out;
  CHECK(hs_sql_type_common(i4, i8, &out) && out.id == HS_SQL_INT64);
  CHECK(hs_sql_type_common(i8, f8, &out) && out.id == HS_SQL_FLOAT64);
  CHECK(hs_sql_type_common(i4, T(HS_SQL_FLOAT64, 4, 0), &out) &&
        hs_sql_type_eq(out, T(HS_SQL_FLOAT64, 4, 0)));
  CHECK(hs_sql_type_common(T(HS_SQL_FLOAT64, 4, 0), f8, &out) && hs_sql_type_eq(out, f8));
  CHECK(hs_sql_type_common(i4, num, &out) && hs_sql_type_eq(out, T(HS_SQL_NUMERIC, 12, 2)));
  CHECK(hs_sql_type_common(T(HS_SQL_NUMERIC, 5, 2), T(HS_SQL_NUMERIC, 7, 4), &out) &&
        hs_sql_type_eq(out, T(HS_SQL_NUMERIC, 7, 4)));
  CHECK(hs_sql_type_common(T(HS_SQL_NULLTYPE, 0, 0), txt, &out) && out.id == HS_SQL_TEXT);
  CHECK(hs_sql_type_common(d, tz, &out) && out.id == HS_SQL_TIMESTAMPTZ);
  CHECK(!hs_sql_type_common(txt, i4, &out));
  CHECK(!hs_sql_type_common(T(HS_SQL_VECTOR, 3, 0), T(HS_SQL_VECTOR, 4, 0), &out));

  CHECK(strcmp(hs_sql_type_arrow_format(T(HS_SQL_NUMERIC, 15, 2)), "d:15,2") == 0);
  CHECK(hs_sql_type_arrow_format(T(HS_SQL_NUMERIC, 15, 2)) ==
        hs_sql_type_arrow_format(T(HS_SQL_NUMERIC, 15, 2)));
  CHECK(strcmp(hs_sql_type_arrow_format(T(HS_SQL_VECTOR, 768, 0)), "+w:768") == 0);
  CHECK(strcmp(hs_sql_type_arrow_format(T(HS_SQL_FLOAT64, 4, 0)), "f") == 0);
  CHECK(strcmp(hs_sql_type_arrow_format(T(HS_SQL_TIMESTAMPTZ, 0, 0)), "tsu:UTC") == 0);
  CHECK(strcmp(hs_sql_type_arrow_format(T(HS_SQL_INTERVAL, 0, 0)), "tin") == 0);
}

/* ------------------------------------------------------------- Arrow */

/* A hs_malloc'd copy of n bytes. */
static void *dup_bytes(const void *p, size_t n) {
  void *d = hs_malloc(n > 0 ? n : 1);
  if (n > 0) memcpy(d, p, n);
  return d;
}

/* A validity bitmap of n rows where row i is null when null[i]. */
static uint8_t *bitmap(const bool *null, int64_t n, int64_t *null_count) {
  uint8_t *b = hs_calloc((size_t)(n + 7) / 8 + 1, 1);
  *null_count = 0;
  for (int64_t i = 0; i < n; i++) {
    if (null[i]) {
      (*null_count)++;
    } else {
      b[i >> 3] |= (uint8_t)(1 << (i & 7));
    }
  }
  return b;
}

/* Random chunk → export → validate → import: every row back as it was. */
static void test_arrow_round_trip(void) {
  hs_error err = {0};
  size_t nt;
  const hs_sql_type *ts = all_types(&nt);
  int32_t n_cols = (int32_t)nt + 3; /* + NULLTYPE, SPARSEVEC, BIT */
  for (int round = 0; round < 6; round++) {
    int64_t n = round == 0 ? 0 : rnd_in(1, 200);
    hs_sql_chunk c = {0};
    CHECK_OK(hs_sql_chunk_init(&c, n_cols, n, &err), &err);
    hs_sql_type types[32];
    const char *names[32];
    char name_buf[32][16];
    for (int32_t k = 0; k < n_cols; k++) {
      snprintf(name_buf[k], sizeof name_buf[k], "c%d", (int)k);
      names[k] = name_buf[k];
    }
    for (size_t k = 0; k < nt; k++) {
      types[k] = ts[k];
      random_vec(&c.cols[k], ts[k], n, round % 3 == 0 ? 0 : 3);
    }
    types[nt] = T(HS_SQL_NULLTYPE, 0, 0);
    CHECK_OK(hs_sql_vec_alloc(&c.cols[nt], types[nt], n, false, &err), &err);
    /* sparsevec {i+1:0.5}/(i+3) and bit strings of i % 11 bits */
    types[nt + 1] = T(HS_SQL_SPARSEVEC, 0, 0);
    types[nt + 2] = T(HS_SQL_BIT, 0, 0);
    hs_sql_vec *sp = &c.cols[nt + 1], *bt = &c.cols[nt + 2];
    CHECK_OK(hs_sql_vec_alloc(sp, types[nt + 1], n, true, &err), &err);
    CHECK_OK(hs_sql_vec_alloc(bt, types[nt + 2], n, false, &err), &err);
    char *spb = hs_sql_vec_add_bytes(sp, (size_t)n * 16 + 1, &err);
    char *btb = hs_sql_vec_add_bytes(bt, (size_t)n * 6 + 1, &err);
    for (int64_t i = 0; i < n; i++) {
      int32_t hdr[3] = {(int32_t)i + 3, i % 2 == 0 ? 1 : 0, (int32_t)i};
      float val = i % 4 == 0 ? 0.5f : -1.25f;
      memcpy(spb + i * 16, hdr, 12);
      memcpy(spb + i * 16 + 12, &val, 4);
      ((hs_sql_str *)hs_sql_vec_mut_data(sp))[i] = (hs_sql_str){spb + i * 16, hdr[1] ? 16u : 8u};
      hs_sql_vec_mut_valid(sp)[i] = i % 5 != 1;
      int32_t nbits = (int32_t)(i % 11);
      memcpy(btb + i * 6, &nbits, 4);
      btb[i * 6 + 4] = (char)0xA5;
      btb[i * 6 + 5] = (char)0x80;
      if (nbits < 8) btb[i * 6 + 4] = (char)(0xA5 & (0xff << (8 - nbits)));
      if (nbits < 9) btb[i * 6 + 5] = 0;
      ((hs_sql_str *)hs_sql_vec_mut_data(bt))[i] =
          (hs_sql_str){btb + i * 6, 4u + (uint32_t)(nbits + 7) / 8};
    }
    struct ArrowSchema schema;
    struct ArrowArray arr;
    CHECK_OK(hs_sql_schema_to_arrow(types, names, n_cols, &schema, &err), &err);
    CHECK_OK(hs_sql_chunk_to_arrow(&c, &arr, &err), &err);
    /* The array must not depend on the chunk: release it first. */
    hs_sql_chunk ref = {0};
    CHECK_OK(hs_sql_chunk_init(&ref, n_cols, n, &err), &err);
    for (int32_t k = 0; k < n_cols; k++)
      CHECK_OK(hs_sql_vec_share(&ref.cols[k], &c.cols[k], &err), &err);
    hs_sql_chunk_release(&c);
    /* Validation column by column: intervals ("tin") are beyond validate.c. */
    for (int32_t k = 0; k < n_cols; k++) {
      hs_error verr = {0};
      hs_status vs = hs_arrow_array_validate(schema.children[k], arr.children[k], &verr);
      if (types[k].id == HS_SQL_INTERVAL) {
        CHECK(vs == HS_ERR_UNSUPPORTED);
      } else {
        CHECK_OK(vs, &verr);
      }
      CHECK(strcmp(schema.children[k]->format, hs_sql_type_arrow_format(types[k])) == 0);
    }
    hs_sql_chunk back = {0};
    CHECK_OK(hs_sql_chunk_from_arrow(&schema, &arr, NULL, 0, &back, &err), &err);
    CHECK(arr.release == NULL); /* consumed */
    CHECK_EQ_INT(back.n, n);
    CHECK_EQ_INT(back.n_cols, n_cols);
    for (int32_t k = 0; k < back.n_cols && k < n_cols; k++) {
      hs_sql_vec *a = &ref.cols[k], *b = &back.cols[k];
      int bad = 0;
      hs_sql_type want = types[k];
      if (want.id == HS_SQL_SPARSEVEC || want.id == HS_SQL_BIT) want = T(HS_SQL_TEXT, 0, 0);
      CHECK(hs_sql_type_eq(b->type, want));
      for (int64_t i = 0; i < n; i++) {
        if (types[k].id == HS_SQL_SPARSEVEC || types[k].id == HS_SQL_BIT) {
          hs_sql_value y;
          hs_sql_vec_get(b, i, &y);
          char want_s[64];
          if (types[k].id == HS_SQL_SPARSEVEC) {
            if (i % 2 == 0) {
              snprintf(want_s, sizeof want_s, "{%d:%s}/%d", (int)i + 1,
                       i % 4 == 0 ? "0.5" : "-1.25", (int)i + 3);
            } else {
              snprintf(want_s, sizeof want_s, "{}/%d", (int)i + 3);
            }
            bad += y.is_null != (i % 5 == 1);
          } else {
            const char *pat = "1010010110";
            snprintf(want_s, sizeof want_s, "%.*s", (int)(i % 11), pat);
            bad += y.is_null;
          }
          if (!y.is_null)
            bad += y.v.s.len != strlen(want_s) || memcmp(y.v.s.ptr, want_s, y.v.s.len) != 0;
        } else if (types[k].id == HS_SQL_FLOAT64 && types[k].a == 4) {
          hs_sql_value x, y;
          hs_sql_vec_get(a, i, &x);
          hs_sql_vec_get(b, i, &y);
          bad += x.is_null != y.is_null;
          if (!x.is_null && !y.is_null) {
            double w = (double)(float)x.v.f64;
            bad += isnan(w) ? !isnan(y.v.f64) : w != y.v.f64;
          }
        } else {
          bad += !rows_equal(a, i, b, i);
        }
      }
      CHECK_EQ_INT(bad, 0);
      if (bad)
        fprintf(stderr, "  (round trip of column %d, format %s)\n", (int)k,
                schema.children[k]->format);
    }
    hs_sql_chunk_release(&back);
    hs_sql_chunk_release(&ref);
    hs_arrow_schema_release(&schema);
  }
}

/* A struct schema over formats[0..n) (children of fixed lists: "f"). */
static void make_schema(struct ArrowSchema *s, const char *const *formats, int n) {
  hs_error err = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, n, &err), &err);
  for (int k = 0; k < n; k++) {
    const char *f = formats[k];
    bool list = f[0] == '+';
    char name[16];
    snprintf(name, sizeof name, "x%d", k);
    CHECK_OK(hs_arrow_schema_init(s->children[k], list ? f + 2 : f, name, ARROW_FLAG_NULLABLE,
                                  list ? 1 : 0, &err),
             &err);
    if (list) {
      /* formats "+f+w:2" / "+e+w:2": child type, then the list format */
      const char *lf = strchr(f + 1, '+');
      hs_arrow_schema_release(s->children[k]);
      CHECK_OK(hs_arrow_schema_init(s->children[k], lf, name, ARROW_FLAG_NULLABLE, 1, &err), &err);
      char cf[2] = {f[1], 0};
      CHECK_OK(hs_arrow_schema_init(s->children[k]->children[0], cf, "item", ARROW_FLAG_NULLABLE, 0,
                                    &err),
               &err);
    }
  }
}

#define NR 37

/* Every Arrow type we read, built with src/arrow's builders, with nulls,
 * as a struct batch with a row offset; values checked one by one. */
static void test_arrow_import_types(void) {
  hs_error err = {0};
  static const char *const formats[] = {
      "b",   "c",      "C",   "s",   "S",      "i",       "I",    "l",
      "L",   "e",      "f",   "g",   "u",      "U",       "z",    "Z",
      "w:3", "d:12,3", "tdD", "tdm", "tss:",   "tsm:UTC", "tsu:", "tsn:Europe/Paris",
      "tDs", "tin",    "tiM", "tiD", "+f+w:2", "+e+w:2",  "n",    "c",
      "vu"};
  enum { NF = sizeof formats / sizeof formats[0] };
  bool null[NR];
  int64_t vals[NR];
  for (int i = 0; i < NR; i++) {
    null[i] = rnd() % 4 == 0;
    vals[i] = rnd_in(-100, 100);
  }
  struct ArrowArray kids[NF];
  for (int k = 0; k < NF; k++) {
    const char *f = formats[k];
    int64_t nc;
    uint8_t *valid = strcmp(f, "n") == 0 ? NULL : bitmap(null, NR, &nc);
    if (valid == NULL) nc = 0;
    if (strcmp(f, "b") == 0) {
      uint8_t *bits = hs_calloc(NR / 8 + 1, 1);
      for (int i = 0; i < NR; i++) bits[i >> 3] |= (uint8_t)((vals[i] > 0) << (i & 7));
      CHECK_OK(hs_arrow_array_make_primitive(&kids[k], NR, bits, valid, nc, &err), &err);
    } else if (strchr("cCsSiIlLegf", f[0]) != NULL && f[1] == 0 && k != NF - 2) {
      size_t w = f[0] == 'c' || f[0] == 'C'                  ? 1
                 : f[0] == 's' || f[0] == 'S' || f[0] == 'e' ? 2
                 : f[0] == 'i' || f[0] == 'I' || f[0] == 'f' ? 4
                                                             : 8;
      uint8_t *d = hs_calloc(NR, w);
      for (int i = 0; i < NR; i++) {
        int64_t v = vals[i];
        switch (f[0]) {
        case 'c': ((int8_t *)d)[i] = (int8_t)v; break;
        case 'C': ((uint8_t *)d)[i] = (uint8_t)(v + 100); break;
        case 's': ((int16_t *)d)[i] = (int16_t)(v * 300); break;
        case 'S': ((uint16_t *)d)[i] = (uint16_t)(v + 65000); break;
        case 'i': ((int32_t *)d)[i] = (int32_t)(v * 20000000); break;
        case 'I': ((uint32_t *)d)[i] = (uint32_t)(v + 4000000000u); break;
        case 'l': ((int64_t *)d)[i] = v * (INT64_C(1) << 40); break;
        case 'L': ((uint64_t *)d)[i] = UINT64_MAX - (uint64_t)(v + 100); break;
        case 'e': ((uint16_t *)d)[i] = (uint16_t)(0x3c00 + (v & 0x3ff)); break; /* 1 + v/1024 */
        case 'f': ((float *)d)[i] = (float)v * 0.25f; break;
        case 'g': ((double *)d)[i] = (double)v / 3; break;
        }
        /* Garbage in null slots: the import must not show it. */
        if (null[i] && f[0] == 'l') ((int64_t *)d)[i] = 12345;
      }
      CHECK_OK(hs_arrow_array_make_primitive(&kids[k], NR, d, valid, nc, &err), &err);
    } else if (strchr("uUzZ", f[0]) != NULL && f[1] == 0) {
      bool large = f[0] == 'U' || f[0] == 'Z';
      hs_buf chars;
      hs_buf_init(&chars);
      int64_t *o64 = hs_calloc(NR + 1, 8);
      int32_t *o32 = hs_calloc(NR + 1, 4);
      for (int i = 0; i < NR; i++) {
        const char *w = WORDS[(vals[i] + 100) % N_WORDS];
        if (!null[i]) hs_buf_append(&chars, w, strlen(w));
        o64[i + 1] = (int64_t)chars.len;
        o32[i + 1] = (int32_t)chars.len;
      }
      hs_buf_reserve(&chars, 1);
      if (large) {
        hs_free(o32);
      } else {
        hs_free(o64);
      }
      CHECK_OK(hs_arrow_array_make_binary(&kids[k], NR, large ? (void *)o64 : (void *)o32,
                                          hs_buf_detach(&chars), valid, nc, &err),
               &err);
    } else if (strcmp(f, "w:3") == 0 || strcmp(f, "d:12,3") == 0 || strcmp(f, "tin") == 0) {
      size_t w = f[0] == 'w' ? 3 : 16;
      uint8_t *d = hs_calloc(NR, w);
      for (int i = 0; i < NR; i++) {
        if (f[0] == 'w') {
          memcpy(d + i * 3, &vals[i], 3);
        } else if (f[0] == 'd') {
          hs_sql_i128 x = (hs_sql_i128)vals[i] * 1000000007;
          memcpy(d + i * 16, &x, 16);
        } else {
          int32_t mo = (int32_t)vals[i], dd = (int32_t)-vals[i];
          int64_t ns = vals[i] * 1234567;
          memcpy(d + i * 16, &mo, 4);
          memcpy(d + i * 16 + 4, &dd, 4);
          memcpy(d + i * 16 + 8, &ns, 8);
        }
      }
      CHECK_OK(hs_arrow_array_make_primitive(&kids[k], NR, d, valid, nc, &err), &err);
    } else if (f[0] == 't') {
      bool is32 = strcmp(f, "tdD") == 0 || strcmp(f, "tiM") == 0;
      bool is_dt = strcmp(f, "tiD") == 0;
      uint8_t *d = hs_calloc(NR, is32 ? 4 : 8);
      for (int i = 0; i < NR; i++) {
        int64_t v = vals[i];
        if (is32) {
          ((int32_t *)d)[i] = (int32_t)(v * 100);
        } else if (is_dt) {
          ((int32_t *)d)[2 * i] = (int32_t)v;
          ((int32_t *)d)[2 * i + 1] = (int32_t)(v * 1001);
        } else if (strcmp(f, "tdm") == 0) {
          ((int64_t *)d)[i] = v * 86400000 + ((v % 7 + 7) % 7) * 1000; /* after midnight */
        } else {
          ((int64_t *)d)[i] = v * 1000003;
        }
      }
      CHECK_OK(hs_arrow_array_make_primitive(&kids[k], NR, d, valid, nc, &err), &err);
    } else if (f[0] == '+') {
      bool half = f[1] == 'e';
      struct ArrowArray child;
      /* child with 2 floats of padding in front (child offset) */
      size_t w = half ? 2 : 4;
      uint8_t *d = hs_calloc(NR * 2 + 2, w);
      for (int i = 0; i < NR; i++) {
        for (int j = 0; j < 2; j++) {
          float x = (float)(vals[i] + j) * 0.5f;
          if (half) {
            /* exact halves of small integers: build via float bits */
            uint32_t b;
            memcpy(&b, &x, 4);
            uint16_t h = x == 0
                             ? 0
                             : (uint16_t)(((b >> 16) & 0x8000) |
                                          ((((b >> 23) & 0xff) - 112) << 10) | ((b >> 13) & 0x3ff));
            ((uint16_t *)d)[2 + 2 * i + j] = h;
          } else {
            ((float *)d)[2 + 2 * i + j] = x;
          }
        }
      }
      CHECK_OK(hs_arrow_array_make_primitive(&child, NR * 2 + 2, d, NULL, 0, &err), &err);
      child.offset = 2;
      child.length = NR * 2;
      CHECK_OK(hs_arrow_array_init(&kids[k], 1, 1, &err), &err);
      kids[k].length = NR;
      kids[k].null_count = nc;
      hs_arrow_array_set_buffer(&kids[k], 0, valid);
      *kids[k].children[0] = child;
    } else if (strcmp(f, "n") == 0) {
      CHECK_OK(hs_arrow_array_init(&kids[k], 0, 0, &err), &err);
      kids[k].length = NR;
      kids[k].null_count = NR;
    } else if (strcmp(f, "c") == 0) { /* the dictionary column */
      int8_t *idx = hs_calloc(NR, 1);
      for (int i = 0; i < NR; i++) idx[i] = (int8_t)((vals[i] + 100) % 4);
      CHECK_OK(hs_arrow_array_make_primitive(&kids[k], NR, idx, valid, nc, &err), &err);
      int32_t *o = hs_calloc(5, 4);
      static const char dchars[] = "redgreenbluecyan";
      o[1] = 3;
      o[2] = 8;
      o[3] = 12;
      o[4] = 16;
      struct ArrowArray dict;
      CHECK_OK(hs_arrow_array_make_binary(&dict, 4, o, dup_bytes(dchars, 16), NULL, 0, &err), &err);
      CHECK_OK(hs_arrow_array_set_dictionary(&kids[k], &dict, &err), &err);
    } else if (strcmp(f, "vu") == 0) {
      /* views: inline (<= 12 bytes) or into data buffer 0 */
      uint8_t *views = hs_calloc(NR, 16);
      hs_buf chars;
      hs_buf_init(&chars);
      for (int i = 0; i < NR; i++) {
        const char *w = WORDS[(vals[i] + 100) % N_WORDS];
        int32_t len = (int32_t)strlen(w);
        memcpy(views + i * 16, &len, 4);
        if (len <= 12) {
          memcpy(views + i * 16 + 4, w, (size_t)len);
        } else {
          int32_t bi = 0, bo = (int32_t)chars.len;
          memcpy(views + i * 16 + 4, w, 4);
          memcpy(views + i * 16 + 8, &bi, 4);
          memcpy(views + i * 16 + 12, &bo, 4);
          hs_buf_append(&chars, w, (size_t)len);
        }
      }
      for (int i = 0; i < NR; i++) { /* garbage in NULL rows' views */
        int32_t junk = -5;
        if (null[i]) memcpy(views + i * 16, &junk, 4);
      }
      int64_t *sizes = hs_calloc(1, 8);
      sizes[0] = (int64_t)chars.len;
      hs_buf_reserve(&chars, 1);
      CHECK_OK(hs_arrow_array_init(&kids[k], 4, 0, &err), &err);
      kids[k].length = NR;
      kids[k].null_count = nc;
      hs_arrow_array_set_buffer(&kids[k], 0, valid);
      hs_arrow_array_set_buffer(&kids[k], 1, views);
      hs_arrow_array_set_buffer(&kids[k], 2, hs_buf_detach(&chars));
      hs_arrow_array_set_buffer(&kids[k], 3, sizes);
    } else {
      CHECK(!"format without a builder");
    }
  }
  struct ArrowSchema schema;
  make_schema(&schema, formats, NF);
  {
    struct ArrowSchema ds;
    CHECK_OK(hs_arrow_schema_init(&ds, "u", NULL, 0, 0, &err), &err);
    CHECK_OK(hs_arrow_schema_set_dictionary(schema.children[NF - 2], &ds, &err), &err);
  }
  struct ArrowArray batch;
  CHECK_OK(hs_arrow_array_make_struct(&batch, NR, kids, NF, NULL, 0, &err), &err);
  const int64_t OFF = 3; /* a sliced batch: rows 3.. */
  batch.offset = OFF;
  batch.length = NR - OFF;
  hs_sql_chunk c = {0};
  CHECK_OK(hs_sql_chunk_from_arrow(&schema, &batch, NULL, 0, &c, &err), &err);
  CHECK_EQ_INT(c.n, NR - OFF);
  CHECK_EQ_INT(c.n_cols, NF);
  /* Keep only a gather of the text columns and the borrowed int64: they must
   * outlive the chunk (and its Arrow batch). */
  hs_sql_vec keep_u = {0}, keep_l = {0};
  int64_t sel[NR];
  for (int64_t i = 0; i < c.n; i++) sel[i] = c.n - 1 - i;
  CHECK_OK(hs_sql_vec_take(&keep_u, &c.cols[12], sel, c.n, &err), &err);
  CHECK_OK(hs_sql_vec_share(&keep_l, &c.cols[7], &err), &err);
  static const hs_sql_tid want[NF] = {
      HS_SQL_BOOL,      HS_SQL_INT32,       HS_SQL_INT32,     HS_SQL_INT32,       HS_SQL_INT32,
      HS_SQL_INT32,     HS_SQL_INT64,       HS_SQL_INT64,     HS_SQL_NUMERIC,     HS_SQL_FLOAT64,
      HS_SQL_FLOAT64,   HS_SQL_FLOAT64,     HS_SQL_TEXT,      HS_SQL_TEXT,        HS_SQL_BYTEA,
      HS_SQL_BYTEA,     HS_SQL_BYTEA,       HS_SQL_NUMERIC,   HS_SQL_DATE,        HS_SQL_DATE,
      HS_SQL_TIMESTAMP, HS_SQL_TIMESTAMPTZ, HS_SQL_TIMESTAMP, HS_SQL_TIMESTAMPTZ, HS_SQL_INTERVAL,
      HS_SQL_INTERVAL,  HS_SQL_INTERVAL,    HS_SQL_INTERVAL,  HS_SQL_VECTOR,      HS_SQL_HALFVEC,
      HS_SQL_NULLTYPE,  HS_SQL_TEXT,        HS_SQL_TEXT};
  for (int k = 0; k < NF && k < c.n_cols; k++) {
    const hs_sql_vec *v = &c.cols[k];
    const char *f = formats[k];
    CHECK(v->type.id == want[k]);
    int bad = 0;
    for (int64_t r = 0; r < c.n; r++) {
      int64_t i = r + OFF, x = vals[i];
      hs_sql_value y;
      hs_sql_vec_get(v, r, &y);
      bool is_null = strcmp(f, "n") == 0 || null[i];
      if (y.is_null != is_null) {
        bad++;
        continue;
      }
      if (is_null) {
        /* the data slot of a null row holds zero */
        size_t w = hs_sql_vec_width(v->type);
        const uint8_t *slot = v->data != NULL ? (const uint8_t *)v->data + (size_t)r * w : NULL;
        if (slot != NULL && !hs_sql_type_is_string(v->type.id)) {
          for (size_t b = 0; b < w; b++) bad += slot[b] != 0;
        }
        continue;
      }
      const char *word = WORDS[(x + 100) % N_WORDS];
      bool ok = true;
      switch (k) {
      case 0: ok = y.v.b == (x > 0); break;
      case 1: ok = y.v.i32 == (int8_t)x; break;
      case 2: ok = y.v.i32 == x + 100; break;
      case 3: ok = y.v.i32 == x * 300; break;
      case 4: ok = y.v.i32 == (uint16_t)(x + 65000); break;
      case 5: ok = y.v.i32 == x * 20000000; break;
      case 6: ok = y.v.i64 == (int64_t)(uint32_t)(x + 4000000000u); break;
      case 7: ok = y.v.i64 == x * (INT64_C(1) << 40); break;
      case 8:
        ok = y.v.dec == (hs_sql_i128)(UINT64_MAX - (uint64_t)(x + 100)) && v->type.a == 20;
        break;
      case 9: ok = y.v.f64 == 1.0 + (double)(x & 0x3ff) / 1024 && v->type.a == 4; break;
      case 10: ok = y.v.f64 == (double)x * 0.25 && v->type.a == 4; break;
      case 11: ok = y.v.f64 == (double)x / 3 && v->type.a != 4; break;
      case 12:
      case 13:
      case 14:
      case 15:
      case 32: ok = y.v.s.len == strlen(word) && memcmp(y.v.s.ptr, word, y.v.s.len) == 0; break;
      case 16: ok = y.v.s.len == 3 && memcmp(y.v.s.ptr, &vals[i], 3) == 0; break;
      case 17:
        ok = y.v.dec == (hs_sql_i128)x * 1000000007 && v->type.a == 12 && v->type.b == 3;
        break;
      case 18: ok = y.v.i32 == x * 100; break;
      case 19: ok = y.v.i32 == x; break; /* floor of x days + (x % 7) s */
      case 20: ok = y.v.i64 == x * 1000003 * 1000000; break;
      case 21: ok = y.v.i64 == x * 1000003 * 1000; break;
      case 22: ok = y.v.i64 == x * 1000003; break;
      case 23: {
        int64_t ns = x * 1000003;
        ok = y.v.i64 == (ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000));
        break;
      }
      case 24:
        ok = y.v.iv.micros == x * 1000003 * 1000000 && y.v.iv.days == 0 && y.v.iv.months == 0;
        break;
      case 25: {
        int64_t ns = x * 1234567;
        ok = y.v.iv.months == x && y.v.iv.days == -x &&
             y.v.iv.micros == (ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000));
        break;
      }
      case 26: ok = y.v.iv.months == x * 100 && y.v.iv.days == 0 && y.v.iv.micros == 0; break;
      case 27:
        ok = y.v.iv.days == x && y.v.iv.micros == x * 1001 * 1000 && y.v.iv.months == 0;
        break;
      case 28:
      case 29:
        ok = v->type.a == 2 && y.v.vec[0] == (float)x * 0.5f && y.v.vec[1] == (float)(x + 1) * 0.5f;
        break;
      case 31: {
        static const char *const dw[] = {"red", "green", "blue", "cyan"};
        const char *w = dw[(x + 100) % 4];
        ok = y.v.s.len == strlen(w) && memcmp(y.v.s.ptr, w, y.v.s.len) == 0;
        break;
      }
      default: break;
      }
      bad += !ok;
    }
    CHECK_EQ_INT(bad, 0);
    if (bad) fprintf(stderr, "  (import of Arrow '%s', column %d)\n", f, k);
  }
  hs_sql_chunk_release(&c);
  hs_arrow_schema_release(&schema);
  int bad = 0;
  for (int64_t r = 0; r < keep_u.n; r++) {
    int64_t i = (keep_u.n - 1 - r) + OFF;
    hs_sql_value y;
    hs_sql_vec_get(&keep_u, r, &y);
    const char *word = WORDS[(vals[i] + 100) % N_WORDS];
    if (!y.is_null) bad += y.v.s.len != strlen(word) || memcmp(y.v.s.ptr, word, y.v.s.len) != 0;
    bad += y.is_null != null[i];
    hs_sql_vec_get(&keep_l, r, &y);
    if (!y.is_null) bad += y.v.i64 != vals[r + OFF] * (INT64_C(1) << 40);
  }
  CHECK_EQ_INT(bad, 0);
  hs_sql_vec_release(&keep_u);
  hs_sql_vec_release(&keep_l);
}

/* Types SQL cannot read are refused with the column named; the batch is
 * consumed all the same. */
static void test_arrow_import_errors(void) {
  static const char *const cases[][2] = {
      {"+l", "fixed_size_list"}, {"tts", "time of day"}, {"+s", "not supported"}};
  for (size_t t = 0; t < 3; t++) {
    hs_error err = {0};
    struct ArrowSchema s;
    CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 1, &err), &err);
    CHECK_OK(hs_arrow_schema_init(s.children[0], cases[t][0], "emb", 0,
                                  cases[t][0][0] == '+' ? 1 : 0, &err),
             &err);
    if (cases[t][0][0] == '+') {
      CHECK_OK(hs_arrow_schema_init(s.children[0]->children[0], "f", "item", 0, 0, &err), &err);
    }
    hs_sql_type ty;
    char why[256];
    CHECK(!hs_sql_type_from_arrow(s.children[0], &ty, why, sizeof why));
    CHECK(strstr(why, cases[t][1]) != NULL && strstr(why, "emb") != NULL);
    struct ArrowArray kid, batch;
    int32_t *vals = hs_calloc(4, 4);
    CHECK_OK(hs_arrow_array_make_primitive(&kid, 4, vals, NULL, 0, &err), &err);
    CHECK_OK(hs_arrow_array_make_struct(&batch, 4, &kid, 1, NULL, 0, &err), &err);
    hs_sql_chunk c = {0};
    hs_status st = hs_sql_chunk_from_arrow(&s, &batch, NULL, 0, &c, &err);
    CHECK(st == HS_ERR_UNSUPPORTED && strstr(err.message, "emb") != NULL);
    CHECK(batch.release == NULL && c.cols == NULL);
    hs_arrow_schema_release(&s);
  }
  /* out-of-range dictionary index */
  hs_error err = {0};
  struct ArrowSchema s, ds;
  CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 1, &err), &err);
  CHECK_OK(hs_arrow_schema_init(s.children[0], "i", "d", 0, 0, &err), &err);
  CHECK_OK(hs_arrow_schema_init(&ds, "l", NULL, 0, 0, &err), &err);
  CHECK_OK(hs_arrow_schema_set_dictionary(s.children[0], &ds, &err), &err);
  int32_t *idx = hs_calloc(3, 4);
  idx[2] = 5;
  int64_t *dv = hs_calloc(2, 8);
  struct ArrowArray kid, dict, batch;
  CHECK_OK(hs_arrow_array_make_primitive(&kid, 3, idx, NULL, 0, &err), &err);
  CHECK_OK(hs_arrow_array_make_primitive(&dict, 2, dv, NULL, 0, &err), &err);
  CHECK_OK(hs_arrow_array_set_dictionary(&kid, &dict, &err), &err);
  CHECK_OK(hs_arrow_array_make_struct(&batch, 3, &kid, 1, NULL, 0, &err), &err);
  hs_sql_chunk c = {0};
  CHECK(hs_sql_chunk_from_arrow(&s, &batch, NULL, 0, &c, &err) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "dictionary index 5") != NULL);
  hs_arrow_schema_release(&s);
}

/* A sliced string dictionary with a NULL entry, int16 indices; then a
 * negative index. */
static void test_arrow_dictionary_edges(void) {
  for (int round = 0; round < 2; round++) {
    hs_error err = {0};
    struct ArrowSchema s, ds;
    CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 1, &err), &err);
    CHECK_OK(hs_arrow_schema_init(s.children[0], "s", "d", 0, 0, &err), &err);
    CHECK_OK(hs_arrow_schema_init(&ds, round == 0 ? "u" : "U", NULL, 0, 0, &err), &err);
    CHECK_OK(hs_arrow_schema_set_dictionary(s.children[0], &ds, &err), &err);
    /* dictionary entries: [pad] "x" NULL "zz"  (offset 1) */
    static const char chars[] = "#xzz";
    int64_t offs[5] = {0, 1, 2, 2, 4};
    void *o;
    if (round == 0) {
      int32_t *o32 = hs_malloc(5 * 4);
      for (int i = 0; i < 5; i++) o32[i] = (int32_t)offs[i];
      o = o32;
    } else {
      o = dup_bytes(offs, sizeof offs);
    }
    bool dnull[4] = {false, false, true, false};
    int64_t dnc;
    uint8_t *dvalid = bitmap(dnull, 4, &dnc);
    struct ArrowArray dict, kid, batch;
    CHECK_OK(hs_arrow_array_make_binary(&dict, 4, o, dup_bytes(chars, 4), dvalid, dnc, &err), &err);
    dict.offset = 1;
    dict.length = 3;
    int16_t *ix = hs_malloc(5 * 2);
    int16_t want[5] = {0, 1, 2, 0, 2};
    memcpy(ix, want, sizeof want);
    bool inull[5] = {false, false, false, true, false};
    int64_t inc;
    uint8_t *ivalid = bitmap(inull, 5, &inc);
    CHECK_OK(hs_arrow_array_make_primitive(&kid, 5, ix, ivalid, inc, &err), &err);
    CHECK_OK(hs_arrow_array_set_dictionary(&kid, &dict, &err), &err);
    CHECK_OK(hs_arrow_array_make_struct(&batch, 5, &kid, 1, NULL, 0, &err), &err);
    hs_sql_chunk c = {0};
    CHECK_OK(hs_sql_chunk_from_arrow(&s, &batch, NULL, 0, &c, &err), &err);
    if (c.n_cols == 1) {
      const hs_sql_vec *v = &c.cols[0];
      static const char *const got_want[5] = {"x", NULL, "zz", NULL, "zz"};
      for (int i = 0; i < 5; i++) {
        hs_sql_value y;
        hs_sql_vec_get(v, i, &y);
        CHECK(y.is_null == (got_want[i] == NULL));
        if (!y.is_null && got_want[i] != NULL) {
          CHECK(y.v.s.len == strlen(got_want[i]) && memcmp(y.v.s.ptr, got_want[i], y.v.s.len) == 0);
        }
      }
    }
    hs_sql_chunk_release(&c);
    /* a negative index */
    err = (hs_error){0};
    int16_t *neg = hs_malloc(2 * 2);
    neg[0] = 0;
    neg[1] = -3;
    int32_t *o2 = hs_calloc(2, 4);
    o2[1] = 1;
    CHECK_OK(hs_arrow_array_make_binary(&dict, 1, o2, dup_bytes("q", 1), NULL, 0, &err), &err);
    CHECK_OK(hs_arrow_array_make_primitive(&kid, 2, neg, NULL, 0, &err), &err);
    CHECK_OK(hs_arrow_array_set_dictionary(&kid, &dict, &err), &err);
    CHECK_OK(hs_arrow_array_make_struct(&batch, 2, &kid, 1, NULL, 0, &err), &err);
    CHECK(hs_sql_chunk_from_arrow(&s, &batch, NULL, 0, &c, &err) == HS_ERR_INVALID_ARG);
    CHECK(strstr(err.message, "dictionary index -3 out of range at row 1") != NULL);
    hs_arrow_schema_release(&s);
  }
}

/* cols[]: a projection of the batch's children. */
static void test_arrow_projection(void) {
  hs_error err = {0};
  static const char *const formats[] = {"l", "u", "i"};
  struct ArrowSchema s;
  make_schema(&s, formats, 3);
  struct ArrowArray kids[3], batch;
  int64_t *a = hs_calloc(4, 8);
  int32_t *o = hs_calloc(5, 4), *cc = hs_calloc(4, 4);
  for (int i = 0; i < 4; i++) {
    a[i] = i * 10;
    o[i + 1] = i + 1;
    cc[i] = -i;
  }
  CHECK_OK(hs_arrow_array_make_primitive(&kids[0], 4, a, NULL, 0, &err), &err);
  CHECK_OK(hs_arrow_array_make_binary(&kids[1], 4, o, dup_bytes("abcd", 4), NULL, 0, &err), &err);
  CHECK_OK(hs_arrow_array_make_primitive(&kids[2], 4, cc, NULL, 0, &err), &err);
  CHECK_OK(hs_arrow_array_make_struct(&batch, 4, kids, 3, NULL, 0, &err), &err);
  int32_t cols[3] = {2, 0, 2};
  hs_sql_chunk c = {0};
  CHECK_OK(hs_sql_chunk_from_arrow(&s, &batch, cols, 3, &c, &err), &err);
  CHECK(c.n_cols == 3 && c.n == 4);
  CHECK(c.cols[0].type.id == HS_SQL_INT32 && c.cols[1].type.id == HS_SQL_INT64);
  CHECK(((const int32_t *)c.cols[2].data)[3] == -3 && ((const int64_t *)c.cols[1].data)[2] == 20);
  CHECK(c.cols[1].data == a + 0); /* borrowed, not copied */
  hs_sql_chunk_release(&c);
  hs_arrow_schema_release(&s);
}

/* Export under the schema's types: labels follow the schema, layouts must
 * agree, NULL-typed columns become nulls of the schema's type. */
static void test_arrow_export_as(void) {
  hs_error err = {0};
  hs_sql_chunk c = {0};
  CHECK_OK(hs_sql_chunk_init(&c, 3, 4, &err), &err);
  CHECK_OK(hs_sql_vec_alloc(&c.cols[0], T(HS_SQL_FLOAT64, 0, 0), 4, false, &err), &err);
  for (int i = 0; i < 4; i++) ((double *)hs_sql_vec_mut_data(&c.cols[0]))[i] = i * 0.5;
  CHECK_OK(hs_sql_vec_alloc(&c.cols[1], T(HS_SQL_NULLTYPE, 0, 0), 4, false, &err), &err);
  CHECK_OK(hs_sql_vec_alloc(&c.cols[2], T(HS_SQL_TEXT, 0, 0), 4, false, &err), &err);
  for (int i = 0; i < 4; i++)
    ((hs_sql_str *)hs_sql_vec_mut_data(&c.cols[2]))[i] = (hs_sql_str){"xy", 2};
  hs_sql_type types[3] = {T(HS_SQL_FLOAT64, 4, 0), T(HS_SQL_INT64, 0, 0), T(HS_SQL_TEXT, 0, 0)};
  const char *names[3] = {"r", "n", "t"};
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_OK(hs_sql_schema_to_arrow(types, names, 3, &s, &err), &err);
  CHECK_OK(hs_sql_chunk_to_arrow_as(&c, types, &a, &err), &err);
  CHECK_OK(hs_arrow_array_validate(&s, &a, &err), &err);
  CHECK(strcmp(s.children[0]->format, "f") == 0 &&
        ((const float *)a.children[0]->buffers[1])[3] == 1.5f);
  CHECK(strcmp(s.children[1]->format, "l") == 0 && a.children[1]->null_count == 4);
  hs_sql_chunk back = {0};
  CHECK_OK(hs_sql_chunk_from_arrow(&s, &a, NULL, 0, &back, &err), &err);
  CHECK(back.cols[1].type.id == HS_SQL_INT64 && !hs_sql_vec_valid(&back.cols[1], 2));
  CHECK(back.cols[0].type.a == 4 && ((const double *)back.cols[0].data)[1] == 0.5);
  hs_sql_chunk_release(&back);
  hs_arrow_schema_release(&s);
  /* a layout that differs */
  types[0] = T(HS_SQL_NUMERIC, 10, 2);
  CHECK(hs_sql_chunk_to_arrow_as(&c, types, &a, &err) == HS_ERR_INTERNAL && a.release == NULL);
  CHECK(strstr(err.message, "column 0 is double precision") != NULL);
  hs_sql_chunk_release(&c);
  /* a vector type without its dimension has no schema */
  err = (hs_error){0};
  hs_sql_type v0 = T(HS_SQL_VECTOR, 0, 0);
  const char *vn = "emb";
  CHECK(hs_sql_schema_to_arrow(&v0, &vn, 1, &s, &err) == HS_ERR_UNSUPPORTED && s.release == NULL);
  CHECK(strstr(err.message, "\"emb\"") != NULL);
}

/* Through the SQL front door: a random chunk of every type registered as
 * an Arrow stream, read back by SELECT * and a projection in another order,
 * equal row by row (the session's scan imports, its result stream
 * exports). */
static void test_sql_select_all(void) {
  hs_error err = {0};
  size_t nt;
  const hs_sql_type *ts = all_types(&nt);
  int64_t n = 300;
  hs_sql_chunk c = {0};
  CHECK_OK(hs_sql_chunk_init(&c, (int32_t)nt, n, &err), &err);
  hs_sql_type types[32];
  const char *names[32];
  char name_buf[32][16];
  for (size_t k = 0; k < nt; k++) {
    snprintf(name_buf[k], sizeof name_buf[k], "c%d", (int)k);
    names[k] = name_buf[k];
    /* The session validates registered arrays, and hs_arrow_array_validate
     * does not model intervals ("tin"): that column goes in as bigint. */
    types[k] = ts[k].id == HS_SQL_INTERVAL ? T(HS_SQL_INT64, 0, 0) : ts[k];
    random_vec(&c.cols[k], types[k], n, 3);
  }
  struct ArrowSchema schema;
  struct ArrowArray arr;
  CHECK_OK(hs_sql_schema_to_arrow(types, names, (int32_t)nt, &schema, &err), &err);
  CHECK_OK(hs_sql_chunk_to_arrow(&c, &arr, &err), &err);
  struct ArrowArrayStream in;
  CHECK_OK(hs_arrow_stream_from_batches(&schema, &arr, 1, &in, &err), &err);
  hs_sql_session *sess = NULL;
  CHECK_OK(hs_sql_session_new(NULL, &sess, &err), &err);
  CHECK_OK(hs_sql_register_stream(sess, "t", &in, &err), &err);
  if (in.release != NULL) in.release(&in);
  static const char *const queries[] = {"SELECT * FROM t", "SELECT c13, c2, c0, c12 FROM t"};
  static const int32_t q_cols[2][14] = {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13},
                                        {13, 2, 0, 12}};
  static const int32_t q_ncols[2] = {14, 4};
  for (int q = 0; q < 2 && sess != NULL; q++) {
    struct ArrowArrayStream out;
    int32_t pos = 0;
    err = (hs_error){0};
    hs_status st = hs_sql_execute(sess, queries[q], NULL, NULL, &out, &pos, &err);
    CHECK_OK(st, &err);
    if (st != HS_OK) continue;
    struct ArrowSchema os;
    struct ArrowArray *bs = NULL;
    size_t nb = 0;
    CHECK_OK(hs_arrow_stream_collect(&out, &os, &bs, &nb, &err), &err);
    out.release(&out);
    CHECK_EQ_INT(os.n_children, q_ncols[q]);
    int64_t at = 0;
    int bad = 0;
    for (size_t i = 0; i < nb; i++) {
      CHECK_OK(hs_arrow_array_validate(&os, &bs[i], &err), &err);
      hs_sql_chunk got = {0};
      int64_t len = bs[i].length;
      st = hs_sql_chunk_from_arrow(&os, &bs[i], NULL, 0, &got, &err);
      CHECK_OK(st, &err);
      for (int32_t k = 0; st == HS_OK && k < got.n_cols && k < q_ncols[q]; k++) {
        const hs_sql_vec *want = &c.cols[q_cols[q][k]];
        int bad_col = !hs_sql_type_eq(got.cols[k].type, want->type);
        for (int64_t r = 0; r < got.n && at + r < n; r++) {
          bad_col += !rows_equal(&got.cols[k], r, want, at + r);
        }
        if (bad_col) {
          char a[64], b[64];
          fprintf(stderr, "  (%s: column %d: %d bad; got %s, want %s)\n", queries[q], (int)k,
                  bad_col, hs_sql_type_name(got.cols[k].type, a, sizeof a),
                  hs_sql_type_name(want->type, b, sizeof b));
        }
        bad += bad_col;
      }
      at += len;
      hs_sql_chunk_release(&got);
    }
    CHECK_EQ_INT(at, n);
    CHECK_EQ_INT(bad, 0);
    hs_arrow_batches_free(bs, nb);
    hs_arrow_schema_release(&os);
  }
  hs_sql_session_free(sess);
  hs_sql_chunk_release(&c);
}

int main(void) {
  test_types();
  test_kernels();
  test_hash_cross();
  test_const_chunk();
  test_arrow_round_trip();
  test_arrow_import_types();
  test_arrow_import_errors();
  test_arrow_projection();
  test_arrow_dictionary_edges();
  test_arrow_export_as();
  test_sql_select_all();
  return hs_test_finish("test_sql_vec");
}
