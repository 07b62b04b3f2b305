/*
 * test_sql_vector.c — pgvector in SQL (src/sql/fn_vector*.c): text forms
 * round trip (and PostgreSQL's float4 output format), pgvector's error
 * messages, every operator and function against double-precision brute
 * force on random vectors, casts among vector/halfvec/sparsevec/bit/text,
 * and the avg/sum aggregates.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs_test.h"
#include "index/vector/distance.h"
#include "sql/fn_vector.h"
#include "sql/func_tables.h"
#include "arrow/arrow.h"
#include "hyperstream.h"
#include "table/table.h"

static uint64_t g_rng = 0x5eed1234;

/* a cleared error (hs_error_set keeps the first error) */
static hs_error *E(hs_error *e) {
  memset(e, 0, sizeof *e);
  return e;
}

static double urand(void) {
  return (double)(hs_test_rand(&g_rng) >> 11) / 9007199254740992.0;
}
static float frand(void) {
  return (float)(urand() * 2 - 1);
}

static const hs_sql_fn *find_fn(const char *name, hs_sql_tid a0, int32_t n_args) {
  for (size_t i = 0; i < hs_sql_fns_vector_n; i++) {
    const hs_sql_fn *f = &hs_sql_fns_vector[i];
    if (strcmp(f->name, name) == 0 && f->args[0] == a0 && f->n_args == n_args) return f;
  }
  fprintf(stderr, "no function %s\n", name);
  exit(2);
}

static const hs_sql_agg *find_agg(const char *name, hs_sql_tid a0) {
  for (size_t i = 0; i < hs_sql_aggs_vector_n; i++)
    if (strcmp(hs_sql_aggs_vector[i].name, name) == 0 && hs_sql_aggs_vector[i].arg == a0)
      return &hs_sql_aggs_vector[i];
  exit(2);
}

/* Call a kernel with e = NULL (or with the given expression node). */
static hs_status call(const hs_sql_fn *f, const hs_sql_expr *e, const hs_sql_vec *args,
                      int32_t n_args, int64_t n, hs_sql_vec *out, hs_error *err) {
  hs_sql_type types[8];
  for (int32_t i = 0; i < n_args; i++) types[i] = args[i].type;
  hs_sql_type ret = hs_sql_type_of(f->ret);
  char why[200] = "";
  if (f->rettype != NULL && !f->rettype(types, n_args, &ret, why, sizeof why))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s", why);
  memset(out, 0, sizeof *out);
  return f->kernel(e, args, n_args, n, ret, out, err);
}

static void dense_vec(hs_sql_vec *v, hs_sql_tid id, int32_t dim, int64_t n, const float *x) {
  hs_error err;
  hs_sql_type t = hs_sql_type_of(id);
  t.a = dim;
  memset(v, 0, sizeof *v);
  CHECK_OK(hs_sql_vec_alloc(v, t, n, false, &err), &err);
  memcpy(hs_sql_vec_mut_data(v), x, (size_t)n * (size_t)dim * sizeof(float));
}

static void int_vec(hs_sql_vec *v, int64_t n, const int32_t *x) {
  hs_error err;
  memset(v, 0, sizeof *v);
  CHECK_OK(hs_sql_vec_alloc(v, hs_sql_type_of(HS_SQL_INT32), n, false, &err), &err);
  memcpy(hs_sql_vec_mut_data(v), x, (size_t)n * sizeof(int32_t));
}

static void text_vec(hs_sql_vec *v, int64_t n, const char *const *s) {
  hs_error err;
  memset(v, 0, sizeof *v);
  CHECK_OK(hs_sql_vec_alloc(v, hs_sql_type_of(HS_SQL_TEXT), n, false, &err), &err);
  hs_sql_str *o = hs_sql_vec_mut_data(v);
  for (int64_t i = 0; i < n; i++) {
    o[i].ptr = s[i];
    o[i].len = (uint32_t)strlen(s[i]);
  }
}

/* parse then print: the printed text, in buf */
static hs_status roundtrip(const char *lit, hs_sql_tid id, int32_t typmod, char *buf, size_t cap,
                           hs_error *err) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_sql_type t = hs_sql_type_of(id);
  t.a = typmod;
  hs_sql_value v;
  hs_status st = hs_sql_vector_parse(lit, strlen(lit), t, 7, &arena, &v, err);
  if (st == HS_OK) {
    hs_buf b;
    hs_buf_init(&b);
    CHECK(hs_sql_vector_format(&v, &b));
    snprintf(buf, cap, "%.*s", (int)b.len, b.len ? (const char *)b.data : "");
    hs_buf_free(&b);
  }
  hs_arena_reset(&arena);
  return st;
}

static void check_text(const char *lit, hs_sql_tid id, int32_t typmod, const char *want) {
  hs_error err;
  char buf[512];
  hs_status st = roundtrip(lit, id, typmod, buf, sizeof buf, E(&err));
  CHECK_OK(st, &err);
  if (st == HS_OK && strcmp(buf, want) != 0) {
    fprintf(stderr, "text %s: got %s, want %s\n", lit, buf, want);
    CHECK(0);
  }
}

static void check_error(const char *lit, hs_sql_tid id, int32_t typmod, const char *want) {
  hs_error err = {0};
  char buf[512];
  hs_status st = roundtrip(lit, id, typmod, buf, sizeof buf, E(&err));
  CHECK(st == HS_ERR_INVALID_ARG);
  if (st != HS_OK && strstr(err.message, want) == NULL) {
    fprintf(stderr, "error for %s: got \"%s\", want \"%s\"\n", lit, err.message, want);
    CHECK(0);
  }
  if (st != HS_OK) CHECK(strncmp(err.message, "at position 7: ", 15) == 0);
}

/* ----------------------------------------------------------- text forms */

static void test_float4_format(void) {
  static const struct {
    float f;
    const char *s;
  } cases[] = {
      {1.5f, "1.5"},
      {1e7f, "1e+07"},
      {1234567.f, "1.234567e+06"},
      {123456.f, "123456"},
      {0.0001f, "0.0001"},
      {1e-5f, "1e-05"},
      {-0.0f, "-0"},
      {0.0f, "0"},
      {0.1f, "0.1"},
      {-2.5e-10f, "-2.5e-10"},
      {3.4028235e38f, "3.4028235e+38"},
      {1.0996094f, "1.0996094"},
      {100.f, "100"},
      {0.00012345f, "0.00012345"},
      {1e-45f, "1e-45"},
  };
  char buf[32];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hs_sql_float4_format(cases[i].f, buf);
    if (strcmp(buf, cases[i].s) != 0) {
      fprintf(stderr, "float4 %.9g: got %s want %s\n", (double)cases[i].f, buf, cases[i].s);
      CHECK(0);
    }
  }
  /* random bit patterns: reads back exactly, and no shorter decimal does */
  for (int i = 0; i < 20000; i++) {
    uint32_t bits = (uint32_t)hs_test_rand(&g_rng);
    float f;
    memcpy(&f, &bits, 4);
    if (!isfinite(f)) continue;
    hs_sql_float4_format(f, buf);
    float back = strtof(buf, NULL);
    CHECK(memcmp(&back, &f, 4) == 0);
    /* significant digits: those before the exponent, without leading or
     * trailing zeros */
    char dg[32];
    int nd = 0;
    for (const char *p = buf; *p && *p != 'e'; p++)
      if (*p >= '0' && *p <= '9' && (nd > 0 || *p != '0')) dg[nd++] = *p;
    while (nd > 1 && dg[nd - 1] == '0') nd--;
    int digits = nd;
    if (digits > 1) {
      char shorter[40];
      snprintf(shorter, sizeof shorter, "%.*e", digits - 2, (double)f);
      CHECK(strtof(shorter, NULL) != f);
    }
  }
}

static void test_text_forms(void) {
  check_text("[1,2,3]", HS_SQL_VECTOR, 0, "[1,2,3]");
  check_text("  [ 1.5 , -2e3,3.25 ]  ", HS_SQL_VECTOR, 3, "[1.5,-2000,3.25]");
  check_text("[1.23456]", HS_SQL_VECTOR, 0, "[1.23456]");
  check_text("[1.1]", HS_SQL_HALFVEC, 0, "[1.0996094]");
  check_text("[65504,-0.5]", HS_SQL_HALFVEC, 2, "[65504,-0.5]");
  check_text("{1:1.5,3:2}/5", HS_SQL_SPARSEVEC, 0, "{1:1.5,3:2}/5");
  check_text(" { 3:2 , 1:1.5 } / 5 ", HS_SQL_SPARSEVEC, 5, "{1:1.5,3:2}/5");
  check_text("{1:0,2:1}/2", HS_SQL_SPARSEVEC, 0, "{2:1}/2");
  check_text("{}/3", HS_SQL_SPARSEVEC, 0, "{}/3");
  check_text("0101", HS_SQL_BIT, 0, "0101");
  check_text("b0101", HS_SQL_BIT, 4, "0101");
  check_text("x5F", HS_SQL_BIT, 0, "01011111");
  check_text("101000001", HS_SQL_BIT, 9, "101000001");

  check_error("[1,2", HS_SQL_VECTOR, 0, "invalid input syntax for type vector: \"[1,2\"");
  check_error("1,2]", HS_SQL_VECTOR, 0, "invalid input syntax for type vector");
  check_error("[hello,1]", HS_SQL_VECTOR, 0, "invalid input syntax for type vector");
  check_error("[1,2]x", HS_SQL_VECTOR, 0, "invalid input syntax for type vector");
  check_error("[1,,2]", HS_SQL_VECTOR, 0, "invalid input syntax for type vector");
  check_error("[]", HS_SQL_VECTOR, 0, "vector must have at least 1 dimension");
  check_error("[NaN,1]", HS_SQL_VECTOR, 0, "NaN not allowed in vector");
  check_error("[Infinity,1]", HS_SQL_VECTOR, 0, "infinite value not allowed in vector");
  check_error("[1e39]", HS_SQL_VECTOR, 0, "\"1e39\" is out of range for type vector");
  check_error("[1,2,3,4]", HS_SQL_VECTOR, 3, "expected 3 dimensions, not 4");
  check_error("[70000]", HS_SQL_HALFVEC, 0, "\"70000\" is out of range for type halfvec");
  check_error("[NaN]", HS_SQL_HALFVEC, 0, "NaN not allowed in halfvec");
  check_error("{1:1,1:2}/3", HS_SQL_SPARSEVEC, 0, "indexes must not contain duplicates");
  check_error("{5:1}/3", HS_SQL_SPARSEVEC, 0, "index must be less than or equal to dimensions");
  check_error("{0:1}/3", HS_SQL_SPARSEVEC, 0, "index \"0\" is out of range for type sparsevec");
  check_error("{1:1}/0", HS_SQL_SPARSEVEC, 0, "sparsevec must have at least 1 dimension");
  check_error("{1:1}/3", HS_SQL_SPARSEVEC, 4, "expected 4 dimensions, not 3");
  check_error("{1:1}", HS_SQL_SPARSEVEC, 0, "invalid input syntax for type sparsevec");
  check_error("{1:NaN}/2", HS_SQL_SPARSEVEC, 0, "NaN not allowed in sparsevec");
  check_error("{1:1}/2000000000", HS_SQL_SPARSEVEC, 0,
              "sparsevec cannot have more than 1000000000 dimensions");
  check_error("0102", HS_SQL_BIT, 0, "\"2\" is not a valid binary digit");
  check_error("xG", HS_SQL_BIT, 0, "\"G\" is not a valid hexadecimal digit");
  check_error("0101", HS_SQL_BIT, 3, "bit string length 4 does not match type bit(3)");

  /* 16001 dimensions */
  size_t cap = 16001 * 2 + 3;
  char *big = malloc(cap);
  char *p = big;
  *p++ = '[';
  for (int i = 0; i < 16001; i++) {
    if (i) *p++ = ',';
    *p++ = '1';
  }
  *p++ = ']';
  *p = '\0';
  check_error(big, HS_SQL_VECTOR, 0, "vector cannot have more than 16000 dimensions");
  big[16000 * 2] = ']';
  big[16000 * 2 + 1] = '\0';
  hs_error err;
  char *out = malloc(cap + 10);
  CHECK_OK(roundtrip(big, HS_SQL_VECTOR, 16000, out, cap + 10, &err), &err);
  CHECK(strcmp(out, big) == 0);
  free(out);
  free(big);

  /* random vectors round-trip bit for bit through their text form */
  hs_arena arena;
  hs_arena_init(&arena);
  for (int it = 0; it < 300; it++) {
    int32_t dim = 1 + (int32_t)(hs_test_rand(&g_rng) % 40);
    float x[40];
    for (int32_t k = 0; k < dim; k++) {
      double mag = pow(10.0, urand() * 60 - 30);
      x[k] = (float)(frand() * mag);
    }
    hs_sql_value v = {0};
    v.type = hs_sql_type_of(HS_SQL_VECTOR);
    v.type.a = dim;
    v.v.vec = x;
    hs_buf b;
    hs_buf_init(&b);
    CHECK(hs_sql_vector_format(&v, &b));
    hs_sql_value w;
    CHECK_OK(hs_sql_vector_parse((const char *)b.data, b.len, hs_sql_type_of(HS_SQL_VECTOR), 0,
                                 &arena, &w, &err),
             &err);
    CHECK_EQ_INT(w.type.a, dim);
    CHECK(memcmp(w.v.vec, x, (size_t)dim * 4) == 0);
    hs_buf_free(&b);
  }
  hs_arena_reset(&arena);
}

/* --------------------------------------------------- operators vs brute */

static double ref_metric(const char *m, const float *a, const float *b, int32_t d) {
  double s = 0, na = 0, nb = 0;
  for (int32_t k = 0; k < d; k++) {
    double x = a[k], y = b[k];
    if (!strcmp(m, "l2"))
      s += (x - y) * (x - y);
    else if (!strcmp(m, "l1"))
      s += fabs(x - y);
    else
      s += x * y;
    na += x * x;
    nb += y * y;
  }
  if (!strcmp(m, "l2")) return sqrt(s);
  if (!strcmp(m, "nip")) return -s;
  if (!strcmp(m, "cos")) {
    double c = s / sqrt(na * nb);
    return 1 - (c > 1 ? 1 : c < -1 ? -1 : c);
  }
  return s;
}

static bool close_to(double got, double want, double tol) {
  if (isnan(want)) return isnan(got);
  return fabs(got - want) <= tol;
}

static void test_distances(void) {
  static const struct {
    const char *op, *fn, *m;
  } ops[] = {{"<->", "l2_distance", "l2"},
             {"<#>", "inner_product", "nip"},
             {"<=>", "cosine_distance", "cos"},
             {"<+>", "l1_distance", "l1"}};
  hs_sql_tid tids[] = {HS_SQL_VECTOR, HS_SQL_HALFVEC, HS_SQL_SPARSEVEC};
  hs_error err;
  for (int it = 0; it < 60; it++) {
    int32_t dim = 1 + (int32_t)(hs_test_rand(&g_rng) % 200);
    int64_t n = 1 + (int64_t)(hs_test_rand(&g_rng) % 50);
    float *a = malloc((size_t)n * (size_t)dim * 4), *b = malloc((size_t)n * (size_t)dim * 4);
    for (int64_t i = 0; i < n * dim; i++) {
      a[i] = urand() < 0.3 ? 0 : frand() * 10;
      b[i] = urand() < 0.3 ? 0 : frand() * 10;
    }
    if (it == 0) memset(a, 0, (size_t)dim * 4); /* a zero vector: cosine NaN */
    for (int ti = 0; ti < 3; ti++) {
      hs_sql_tid t = tids[ti];
      if (t == HS_SQL_HALFVEC)
        for (int64_t i = 0; i < n * dim; i++) {
          a[i] = hs_f16_to_f32(hs_f32_to_f16(a[i]));
          b[i] = hs_f16_to_f32(hs_f32_to_f16(b[i]));
        }
      hs_sql_vec args[2];
      dense_vec(&args[0], t == HS_SQL_SPARSEVEC ? HS_SQL_VECTOR : t, dim, n, a);
      dense_vec(&args[1], t == HS_SQL_SPARSEVEC ? HS_SQL_VECTOR : t, dim, n, b);
      if (t == HS_SQL_SPARSEVEC) {
        hs_sql_type st = hs_sql_type_of(HS_SQL_SPARSEVEC);
        for (int k = 0; k < 2; k++) {
          hs_sql_vec sp;
          CHECK_OK(hs_sql_vector_cast_vec(&args[k], st, 0, &sp, &err), &err);
          hs_sql_vec_release(&args[k]);
          args[k] = sp;
        }
      }
      for (int o = 0; o < 4; o++) {
        for (int form = 0; form < 2; form++) {
          const hs_sql_fn *f = find_fn(form ? ops[o].fn : ops[o].op, t, 2);
          hs_sql_vec out;
          CHECK_OK(call(f, NULL, args, 2, n, &out, &err), &err);
          CHECK(out.type.id == HS_SQL_FLOAT64);
          const double *r = out.data;
          for (int64_t i = 0; i < n; i++) {
            const float *x = a + i * dim, *y = b + i * dim;
            double want = ref_metric(ops[o].m, x, y, dim);
            if (form && o == 1) want = -want; /* inner_product is +a.b */
            double mag = 0;
            for (int32_t k = 0; k < dim; k++)
              mag += fabs((double)x[k] * y[k]) + (double)(x[k] - y[k]) * (x[k] - y[k]) +
                     fabs((double)x[k] - y[k]);
            double tol = 1e-5 * mag + 1e-6;
            if (o == 2) tol = 1e-4;
            if (o == 0) tol = 1e-5 * (want + 1) + 1e-5;
            if (!close_to(r[i], want, tol)) {
              fprintf(stderr, "%s type %d dim %d row %lld: got %.9g want %.9g\n", f->name, t, dim,
                      (long long)i, r[i], want);
              CHECK(0);
            }
          }
          hs_sql_vec_release(&out);
        }
      }
      hs_sql_vec_release(&args[0]);
      hs_sql_vec_release(&args[1]);
    }
    free(a);
    free(b);
  }

  /* different dimensions */
  float x[4] = {1, 2, 3, 4};
  hs_sql_vec args[2];
  dense_vec(&args[0], HS_SQL_VECTOR, 3, 1, x);
  dense_vec(&args[1], HS_SQL_VECTOR, 4, 1, x);
  hs_sql_vec out;
  memset(&out, 0, sizeof out);
  hs_status st = find_fn("<->", HS_SQL_VECTOR, 2)
                     ->kernel(NULL, args, 2, 1, hs_sql_type_of(HS_SQL_FLOAT64), &out, E(&err));
  CHECK(st == HS_ERR_INVALID_ARG && strstr(err.message, "different vector dimensions 3 and 4"));
  hs_sql_type ta[2] = {args[0].type, args[1].type}, rt;
  char why[200];
  CHECK(!find_fn("<->", HS_SQL_VECTOR, 2)->rettype(ta, 2, &rt, why, sizeof why));
  CHECK(strstr(why, "different vector dimensions 3 and 4") != NULL);
  hs_sql_vec_release(&args[0]);
  hs_sql_vec_release(&args[1]);
}

/* A constant second argument is read from the expression (stride 0), with
 * the same results as its broadcast copy; NULL rows stay NULL. */
static void test_const_query_and_nulls(void) {
  hs_error err;
  int32_t dim = 37;
  int64_t n = 100;
  float *a = malloc((size_t)n * dim * 4), *q = malloc((size_t)dim * 4),
        *qb = malloc((size_t)n * dim * 4);
  for (int64_t i = 0; i < n * dim; i++) a[i] = frand();
  for (int32_t k = 0; k < dim; k++) q[k] = frand();
  for (int64_t i = 0; i < n; i++) memcpy(qb + i * dim, q, (size_t)dim * 4);
  hs_sql_vec args[2];
  dense_vec(&args[0], HS_SQL_VECTOR, dim, n, a);
  dense_vec(&args[1], HS_SQL_VECTOR, dim, n, qb);
  CHECK_OK(hs_sql_vec_make_nullable(&args[0], &err), &err);
  uint8_t *valid = hs_sql_vec_mut_valid(&args[0]);
  for (int64_t i = 0; i < n; i += 7) valid[i] = 0;
  hs_sql_expr c0, c1, call_e;
  hs_sql_expr *kids[2] = {&c0, &c1};
  memset(&c0, 0, sizeof c0);
  memset(&c1, 0, sizeof c1);
  memset(&call_e, 0, sizeof call_e);
  c0.kind = HS_SX_COL;
  c1.kind = HS_SX_CONST;
  c1.type = args[1].type;
  c1.value.type = args[1].type;
  c1.value.v.vec = q;
  call_e.kind = HS_SX_FUNC;
  call_e.args = kids;
  call_e.n_args = 2;
  const char *names[] = {"<->", "<#>", "<=>", "<+>"};
  for (int o = 0; o < 4; o++) {
    const hs_sql_fn *f = find_fn(names[o], HS_SQL_VECTOR, 2);
    hs_sql_vec r1, r2;
    CHECK_OK(call(f, NULL, args, 2, n, &r1, &err), &err);
    CHECK_OK(call(f, &call_e, args, 2, n, &r2, &err), &err);
    for (int64_t i = 0; i < n; i++) {
      CHECK(hs_sql_vec_valid(&r1, i) == (i % 7 != 0));
      CHECK(hs_sql_vec_valid(&r2, i) == (i % 7 != 0));
      if (i % 7) CHECK(((const double *)r1.data)[i] == ((const double *)r2.data)[i]);
    }
    hs_sql_vec_release(&r1);
    hs_sql_vec_release(&r2);
  }
  hs_sql_vec_release(&args[0]);
  hs_sql_vec_release(&args[1]);
  free(a);
  free(q);
  free(qb);
}

static void test_bits(void) {
  hs_error err;
  hs_arena arena;
  hs_arena_init(&arena);
  for (int it = 0; it < 200; it++) {
    int32_t nbits = 1 + (int32_t)(hs_test_rand(&g_rng) % 150);
    char sa[160], sb[160];
    for (int32_t k = 0; k < nbits; k++) {
      sa[k] = urand() < (it % 5 == 0 ? 0.0 : 0.4) ? '1' : '0';
      sb[k] = urand() < (it % 7 == 0 ? 0.0 : 0.5) ? '1' : '0';
    }
    sa[nbits] = sb[nbits] = '\0';
    const char *ta[1] = {sa}, *tb[1] = {sb};
    hs_sql_vec texts[2], bits[2];
    text_vec(&texts[0], 1, ta);
    text_vec(&texts[1], 1, tb);
    for (int k = 0; k < 2; k++)
      CHECK_OK(hs_sql_vector_cast_vec(&texts[k], hs_sql_type_of(HS_SQL_BIT), 0, &bits[k], &err),
               &err);
    int ham = 0, both = 0, either = 0;
    for (int32_t k = 0; k < nbits; k++) {
      ham += sa[k] != sb[k];
      both += sa[k] == '1' && sb[k] == '1';
      either += sa[k] == '1' || sb[k] == '1';
    }
    double jac = both == 0 ? 1.0 : 1.0 - (double)both / either;
    hs_sql_vec out;
    CHECK_OK(call(find_fn("<~>", HS_SQL_BIT, 2), NULL, bits, 2, 1, &out, &err), &err);
    CHECK(((const double *)out.data)[0] == ham);
    hs_sql_vec_release(&out);
    CHECK_OK(call(find_fn("hamming_distance", HS_SQL_BIT, 2), NULL, bits, 2, 1, &out, &err), &err);
    CHECK(((const double *)out.data)[0] == ham);
    hs_sql_vec_release(&out);
    CHECK_OK(call(find_fn("<%>", HS_SQL_BIT, 2), NULL, bits, 2, 1, &out, &err), &err);
    CHECK(fabs(((const double *)out.data)[0] - jac) < 1e-15);
    hs_sql_vec_release(&out);
    /* back to text */
    hs_sql_vec back;
    CHECK_OK(hs_sql_vector_cast_vec(&bits[0], hs_sql_type_of(HS_SQL_TEXT), 0, &back, &err), &err);
    const hs_sql_str *bs = back.data;
    CHECK(bs[0].len == (uint32_t)nbits && memcmp(bs[0].ptr, sa, (size_t)nbits) == 0);
    hs_sql_vec_release(&back);
    /* bit(n) casts pad or truncate on the right */
    hs_sql_type t5 = hs_sql_type_of(HS_SQL_BIT);
    t5.a = 5;
    CHECK_OK(hs_sql_vector_cast_vec(&bits[0], t5, 0, &back, &err), &err);
    hs_sql_value v;
    hs_sql_vec_get(&back, 0, &v);
    hs_buf b;
    hs_buf_init(&b);
    CHECK(hs_sql_vector_format(&v, &b));
    char want[6];
    for (int k = 0; k < 5; k++) want[k] = k < nbits ? sa[k] : '0';
    CHECK(b.len == 5 && memcmp(b.data, want, 5) == 0);
    hs_buf_free(&b);
    hs_sql_vec_release(&back);
    for (int k = 0; k < 2; k++) {
      hs_sql_vec_release(&texts[k]);
      hs_sql_vec_release(&bits[k]);
    }
  }
  /* comparisons: PostgreSQL's bit order is the order of the '0'/'1' text */
  for (int it = 0; it < 300; it++) {
    char sa[24], sb[24];
    int la = (int)(hs_test_rand(&g_rng) % 20), lb = (int)(hs_test_rand(&g_rng) % 20);
    if (it % 3 == 0) lb = la;
    for (int k = 0; k < la; k++) sa[k] = urand() < 0.5 ? '1' : '0';
    for (int k = 0; k < lb; k++)
      sb[k] = k < la && urand() < 0.7 ? sa[k] : urand() < 0.5 ? '1' : '0';
    sa[la] = sb[lb] = '\0';
    const char *ta[1] = {sa}, *tb[1] = {sb};
    hs_sql_vec texts[2], bits[2];
    text_vec(&texts[0], 1, ta);
    text_vec(&texts[1], 1, tb);
    for (int k = 0; k < 2; k++)
      CHECK_OK(hs_sql_vector_cast_vec(&texts[k], hs_sql_type_of(HS_SQL_BIT), 0, &bits[k], E(&err)),
               &err);
    int want = strcmp(sa, sb);
    const char *ops[] = {"=", "<>", "<", "<=", ">", ">="};
    bool wants[] = {want == 0, want != 0, want<0, want <= 0, want> 0, want >= 0};
    for (int o = 0; o < 6; o++) {
      hs_sql_vec out;
      CHECK_OK(call(find_fn(ops[o], HS_SQL_BIT, 2), NULL, bits, 2, 1, &out, E(&err)), &err);
      CHECK(((const uint8_t *)out.data)[0] == wants[o]);
      hs_sql_vec_release(&out);
    }
    for (int k = 0; k < 2; k++) {
      hs_sql_vec_release(&texts[k]);
      hs_sql_vec_release(&bits[k]);
    }
  }
  /* different lengths */
  hs_sql_value v1, v2;
  CHECK_OK(hs_sql_vector_parse("0101", 4, hs_sql_type_of(HS_SQL_BIT), 0, &arena, &v1, &err), &err);
  CHECK_OK(hs_sql_vector_parse("010", 3, hs_sql_type_of(HS_SQL_BIT), 0, &arena, &v2, &err), &err);
  hs_sql_vec args[2];
  CHECK_OK(hs_sql_vec_const(&args[0], &v1, 1, &err), &err);
  CHECK_OK(hs_sql_vec_const(&args[1], &v2, 1, &err), &err);
  hs_sql_vec out = {0};
  hs_status st = find_fn("<~>", HS_SQL_BIT, 2)
                     ->kernel(NULL, args, 2, 1, hs_sql_type_of(HS_SQL_FLOAT64), &out, E(&err));
  CHECK(st == HS_ERR_INVALID_ARG && strstr(err.message, "different bit lengths 4 and 3"));
  hs_sql_vec_release(&args[0]);
  hs_sql_vec_release(&args[1]);
  hs_arena_reset(&arena);
}

static void test_elementwise(void) {
  hs_error err;
  for (int it = 0; it < 40; it++) {
    int32_t dim = 1 + (int32_t)(hs_test_rand(&g_rng) % 64);
    int64_t n = 1 + (int64_t)(hs_test_rand(&g_rng) % 20);
    float *a = malloc((size_t)n * dim * 4), *b = malloc((size_t)n * dim * 4);
    for (int64_t i = 0; i < n * dim; i++) {
      a[i] = frand() * 100;
      b[i] = frand() * 100;
    }
    hs_sql_vec args[3];
    dense_vec(&args[0], HS_SQL_VECTOR, dim, n, a);
    dense_vec(&args[1], HS_SQL_VECTOR, dim, n, b);
    const char *ops = "+-*";
    for (int o = 0; o < 3; o++) {
      char name[2] = {ops[o], 0};
      hs_sql_vec out;
      CHECK_OK(call(find_fn(name, HS_SQL_VECTOR, 2), NULL, args, 2, n, &out, &err), &err);
      CHECK(out.type.id == HS_SQL_VECTOR && out.type.a == dim);
      const float *r = out.data;
      for (int64_t i = 0; i < n * dim; i++) {
        float want = o == 0 ? a[i] + b[i] : o == 1 ? a[i] - b[i] : a[i] * b[i];
        CHECK(r[i] == want);
      }
      hs_sql_vec_release(&out);
    }
    /* concat */
    hs_sql_vec out;
    CHECK_OK(call(find_fn("||", HS_SQL_VECTOR, 2), NULL, args, 2, n, &out, &err), &err);
    CHECK(out.type.a == 2 * dim);
    for (int64_t i = 0; i < n; i++) {
      CHECK(memcmp((const float *)out.data + i * 2 * dim, a + i * dim, (size_t)dim * 4) == 0);
      CHECK(memcmp((const float *)out.data + i * 2 * dim + dim, b + i * dim, (size_t)dim * 4) == 0);
    }
    hs_sql_vec_release(&out);
    /* norm, normalize, dims, binary_quantize */
    CHECK_OK(call(find_fn("vector_norm", HS_SQL_VECTOR, 1), NULL, args, 1, n, &out, &err), &err);
    for (int64_t i = 0; i < n; i++) {
      double s = 0;
      for (int32_t k = 0; k < dim; k++) s += (double)a[i * dim + k] * a[i * dim + k];
      CHECK(fabs(((const double *)out.data)[i] - sqrt(s)) <= 1e-12 * sqrt(s) + 1e-300);
    }
    hs_sql_vec_release(&out);
    CHECK_OK(call(find_fn("l2_normalize", HS_SQL_VECTOR, 1), NULL, args, 1, n, &out, &err), &err);
    for (int64_t i = 0; i < n; i++) {
      double s = 0;
      for (int32_t k = 0; k < dim; k++) {
        float y = ((const float *)out.data)[i * dim + k];
        s += (double)y * y;
      }
      CHECK(fabs(s - 1) < 1e-5);
    }
    hs_sql_vec_release(&out);
    CHECK_OK(call(find_fn("vector_dims", HS_SQL_VECTOR, 1), NULL, args, 1, n, &out, &err), &err);
    for (int64_t i = 0; i < n; i++) CHECK(((const int32_t *)out.data)[i] == dim);
    hs_sql_vec_release(&out);
    CHECK_OK(call(find_fn("binary_quantize", HS_SQL_VECTOR, 1), NULL, args, 1, n, &out, &err),
             &err);
    CHECK(out.type.id == HS_SQL_BIT && out.type.a == dim);
    for (int64_t i = 0; i < n; i++) {
      hs_sql_value v;
      hs_sql_vec_get(&out, i, &v);
      CHECK(hs_sql_bit_len(v.v.s) == dim);
      for (int32_t k = 0; k < dim; k++) {
        int bit = ((unsigned char)v.v.s.ptr[4 + k / 8] >> (7 - k % 8)) & 1;
        CHECK(bit == (a[i * dim + k] > 0));
      }
    }
    hs_sql_vec_release(&out);
    /* subvector with random bounds, against substring-like clipping */
    int32_t start = (int32_t)(hs_test_rand(&g_rng) % (uint64_t)(dim + 4)) - 2;
    int32_t count = 1 + (int32_t)(hs_test_rand(&g_rng) % (uint64_t)(dim + 2));
    int32_t *sv = malloc((size_t)n * 4), *cv = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) {
      sv[i] = start;
      cv[i] = count;
    }
    hs_sql_vec_release(&args[1]);
    int_vec(&args[1], n, sv);
    int_vec(&args[2], n, cv);
    int32_t lo = start < 1 ? 1 : start, hi = start + count > dim + 1 ? dim + 1 : start + count;
    hs_status st = call(find_fn("subvector", HS_SQL_VECTOR, 3), NULL, args, 3, n, &out, E(&err));
    if (hi - lo < 1) {
      CHECK(st == HS_ERR_INVALID_ARG && strstr(err.message, "at least 1 dimension"));
    } else {
      CHECK_OK(st, &err);
      CHECK_EQ_INT(out.type.a, hi - lo);
      for (int64_t i = 0; i < n; i++)
        CHECK(memcmp((const float *)out.data + i * (hi - lo), a + i * dim + lo - 1,
                     (size_t)(hi - lo) * 4) == 0);
      hs_sql_vec_release(&out);
    }
    free(sv);
    free(cv);
    for (int k = 0; k < 3; k++) hs_sql_vec_release(&args[k]);
    free(a);
    free(b);
  }
  /* overflow and underflow */
  float big[2] = {3e38f, 1e-30f}, big2[2] = {3e38f, 1e-30f};
  hs_sql_vec args[2];
  dense_vec(&args[0], HS_SQL_VECTOR, 2, 1, big);
  dense_vec(&args[1], HS_SQL_VECTOR, 2, 1, big2);
  hs_sql_vec out;
  hs_status st = call(find_fn("+", HS_SQL_VECTOR, 2), NULL, args, 2, 1, &out, E(&err));
  CHECK(st == HS_ERR_INVALID_ARG && strstr(err.message, "value out of range: overflow"));
  big[0] = 1;
  big2[0] = 1;
  hs_sql_vec_release(&args[0]);
  hs_sql_vec_release(&args[1]);
  dense_vec(&args[0], HS_SQL_VECTOR, 2, 1, big);
  dense_vec(&args[1], HS_SQL_VECTOR, 2, 1, big2);
  st = call(find_fn("*", HS_SQL_VECTOR, 2), NULL, args, 2, 1, &out, E(&err));
  CHECK(st == HS_ERR_INVALID_ARG && strstr(err.message, "value out of range: underflow"));
  hs_sql_vec_release(&args[0]);
  hs_sql_vec_release(&args[1]);
}

/* IEEE binary16 rounding of a finite float, from first principles: the
 * nearest of all finite halves (ldexp of sign, exponent, mantissa), ties
 * to an even mantissa; beyond 65520 it overflows (inf). */
static float ref_half(float x) {
  double ax = fabs((double)x), best = 0;
  int best_m = 0;
  double best_err = INFINITY;
  if (ax >= 65520.0) return x < 0 ? -INFINITY : INFINITY;
  for (int e = 0; e < 31; e++)
    for (int m = 0; m < 1024; m++) {
      double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
      double d = fabs(v - ax);
      if (d < best_err || (d == best_err && (m & 1) == 0)) {
        best_err = d;
        best = v;
        best_m = m;
      }
    }
  (void)best_m;
  return (float)(x < 0 ? -best : best);
}

static void test_casts(void) {
  hs_error err;
  int32_t dim = 10;
  int64_t n = 30;
  float *a = malloc((size_t)n * dim * 4);
  for (int64_t i = 0; i < n * dim; i++) a[i] = urand() < 0.5 ? 0 : frand() * 1000;
  hs_sql_vec v, h, s, back, txt, parsed;
  dense_vec(&v, HS_SQL_VECTOR, dim, n, a);
  hs_sql_type th = hs_sql_type_of(HS_SQL_HALFVEC), ts = hs_sql_type_of(HS_SQL_SPARSEVEC),
              tv = hs_sql_type_of(HS_SQL_VECTOR);
  CHECK_OK(hs_sql_vector_cast_vec(&v, th, 0, &h, &err), &err);
  for (int64_t i = 0; i < n * dim; i++) {
    float want = ref_half(a[i]);
    CHECK(((const float *)h.data)[i] == want);
  }
  CHECK_OK(hs_sql_vector_cast_vec(&v, ts, 0, &s, &err), &err);
  CHECK_OK(hs_sql_vector_cast_vec(&s, tv, 0, &back, &err), &err);
  CHECK(back.type.a == dim && memcmp(back.data, a, (size_t)n * dim * 4) == 0);
  hs_sql_vec_release(&back);
  /* sparse -> text -> sparse, and its text against the dense values */
  CHECK_OK(hs_sql_vector_cast_vec(&s, hs_sql_type_of(HS_SQL_TEXT), 0, &txt, &err), &err);
  CHECK_OK(hs_sql_vector_cast_vec(&txt, ts, 0, &parsed, &err), &err);
  for (int64_t i = 0; i < n; i++) {
    const hs_sql_str *x = (const hs_sql_str *)s.data + i, *y = (const hs_sql_str *)parsed.data + i;
    CHECK(x->len == y->len && memcmp(x->ptr, y->ptr, x->len) == 0);
  }
  hs_sql_vec_release(&parsed);
  hs_sql_vec_release(&txt);
  /* typmod checks */
  hs_sql_type t3 = tv;
  t3.a = 3;
  hs_status st = hs_sql_vector_cast_vec(&v, t3, 12, &back, E(&err));
  CHECK(st == HS_ERR_INVALID_ARG &&
        strstr(err.message, "at position 12: expected 3 dimensions, not 10"));
  st = hs_sql_vector_cast_vec(&s, t3, 0, &back, E(&err));
  CHECK(st == HS_ERR_INVALID_ARG && strstr(err.message, "expected 3 dimensions, not 10"));
  /* halfvec overflow */
  float huge[1] = {1e6f};
  hs_sql_vec hv;
  dense_vec(&hv, HS_SQL_VECTOR, 1, 1, huge);
  st = hs_sql_vector_cast_vec(&hv, th, 0, &back, E(&err));
  CHECK(st == HS_ERR_INVALID_ARG && strstr(err.message, "out of range for type halfvec"));
  hs_sql_vec_release(&hv);
  /* text column -> vector: rows of other dimensions are errors */
  const char *rows[3] = {"[1,2]", "[3,4]", "[5,6,7]"};
  text_vec(&txt, 3, rows);
  st = hs_sql_vector_cast_vec(&txt, tv, 0, &parsed, E(&err));
  CHECK(st == HS_ERR_INVALID_ARG && strstr(err.message, "expected 2 dimensions, not 3"));
  hs_sql_vec_release(&txt);
  text_vec(&txt, 2, rows);
  CHECK_OK(hs_sql_vector_cast_vec(&txt, tv, 0, &parsed, &err), &err);
  CHECK(parsed.type.a == 2 && ((const float *)parsed.data)[3] == 4);
  hs_sql_vec_release(&parsed);
  hs_sql_vec_release(&txt);
  CHECK(hs_sql_vector_cast_exists(tv, th) && hs_sql_vector_cast_exists(ts, tv));
  CHECK(hs_sql_vector_cast_exists(hs_sql_type_of(HS_SQL_TEXT), ts));
  CHECK(!hs_sql_vector_cast_exists(hs_sql_type_of(HS_SQL_BIT), tv));
  CHECK(!hs_sql_vector_cast_exists(hs_sql_type_of(HS_SQL_INT32), tv));
  hs_sql_vec_release(&v);
  hs_sql_vec_release(&h);
  hs_sql_vec_release(&s);
  free(a);
}

static void test_aggregates(void) {
  hs_error err;
  int32_t dim = 17;
  int64_t n = 500;
  uint32_t groups = 7;
  float *a = malloc((size_t)n * dim * 4);
  uint32_t *g = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n * dim; i++) a[i] = frand() * 50;
  for (int64_t i = 0; i < n; i++) g[i] = (uint32_t)(hs_test_rand(&g_rng) % (groups - 1));
  /* group groups-1 gets no rows: NULL */
  hs_sql_vec v;
  dense_vec(&v, HS_SQL_VECTOR, dim, n, a);
  CHECK_OK(hs_sql_vec_make_nullable(&v, &err), &err);
  for (int64_t i = 0; i < n; i += 11) hs_sql_vec_mut_valid(&v)[i] = 0;
  for (int which = 0; which < 2; which++) {
    const hs_sql_agg *ag = find_agg(which ? "sum" : "avg", HS_SQL_VECTOR);
    hs_sql_type ret;
    char why[100];
    CHECK(ag->rettype(&v.type, 1, &ret, why, sizeof why));
    hs_arena arena;
    hs_arena_init(&arena);
    char *states = calloc(groups, ag->state_size);
    for (uint32_t k = 0; k < groups; k++) ag->init(states + k * ag->state_size, v.type, ret);
    /* two halves, the second merged in */
    hs_sql_vec h1, h2;
    memset(&h1, 0, sizeof h1);
    h1 = v;
    h1.n = n / 2;
    h2 = v;
    h2.n = n - n / 2;
    h2.data = (const float *)v.data + (size_t)(n / 2) * dim;
    h2.valid = v.valid + n / 2;
    char *states2 = calloc(groups, ag->state_size);
    for (uint32_t k = 0; k < groups; k++) ag->init(states2 + k * ag->state_size, v.type, ret);
    CHECK_OK(ag->update(ag, states, g, &h1, h1.n, &arena, &err), &err);
    CHECK_OK(ag->update(ag, states2, g + n / 2, &h2, h2.n, &arena, &err), &err);
    for (uint32_t k = 0; k < groups; k++)
      CHECK_OK(
          ag->merge(ag, states + k * ag->state_size, states2 + k * ag->state_size, &arena, &err),
          &err);
    hs_sql_vec out;
    CHECK_OK(hs_sql_vec_alloc(&out, ret, groups, true, &err), &err);
    for (uint32_t k = 0; k < groups; k++)
      CHECK_OK(ag->final(ag, states + k * ag->state_size, ret, &out, k, &err), &err);
    for (uint32_t k = 0; k < groups; k++) {
      double sum[17] = {0};
      int64_t cnt = 0;
      for (int64_t i = 0; i < n; i++) {
        if (g[i] != k || i % 11 == 0) continue;
        cnt++;
        for (int32_t d = 0; d < dim; d++) sum[d] += a[i * dim + d];
      }
      CHECK(hs_sql_vec_valid(&out, k) == (cnt > 0));
      if (cnt == 0) continue;
      for (int32_t d = 0; d < dim; d++) {
        double want = which ? sum[d] : sum[d] / (double)cnt;
        double got = ((const float *)out.data)[k * dim + d];
        CHECK(fabs(got - want) <= (which ? 1e-4 * 50 * cnt : 1e-5 * 50));
      }
    }
    hs_sql_vec_release(&out);
    free(states);
    free(states2);
    hs_arena_reset(&arena);
  }
  hs_sql_vec_release(&v);
  free(a);
  free(g);
}

/* ------------------------------------------------- SQL end to end: kNN */

#define KD 8
#define KAPPENDS 2
#define KROWS 700

typedef struct krow {
  int64_t id;
  int32_t cat;
  bool null_vec;
  float v[KD];
} krow;

static krow g_k[KAPPENDS * KROWS];
static size_t g_kn;

static void k_schema(struct ArrowSchema *s) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, 3, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[0], "l", "id", 0, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[1], "i", "cat", ARROW_FLAG_NULLABLE, 0, &e), &e);
  char fmt[16];
  snprintf(fmt, sizeof fmt, "+w:%d", KD);
  CHECK_OK(hs_arrow_schema_init(s->children[2], fmt, "emb", ARROW_FLAG_NULLABLE, 1, &e), &e);
  CHECK_OK(
      hs_arrow_schema_init(s->children[2]->children[0], "f", "item", ARROW_FLAG_NULLABLE, 0, &e),
      &e);
}

static void k_append(hs_table *t, size_t n) {
  hs_error e = {0};
  int64_t *ids = hs_malloc(n * sizeof *ids);
  int32_t *cat = hs_malloc(n * sizeof *cat);
  float *vals = hs_malloc(n * KD * sizeof *vals);
  uint8_t *valid = hs_calloc((n + 7) / 8 + 1, 1);
  int64_t nulls = 0;
  for (size_t i = 0; i < n; i++) {
    krow *r = &g_k[g_kn + i];
    r->id = (int64_t)(g_kn + i);
    r->cat = (int32_t)(hs_test_rand(&g_rng) % 10);
    r->null_vec = hs_test_rand(&g_rng) % 23 == 0;
    for (int d = 0; d < KD; d++) r->v[d] = frand() * 3;
    if (hs_test_rand(&g_rng) % 31 == 0) memset(r->v, 0, sizeof r->v); /* cosine: NaN */
    ids[i] = r->id;
    cat[i] = r->cat;
    memcpy(vals + i * KD, r->v, sizeof r->v);
    if (r->null_vec)
      nulls++;
    else
      valid[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  struct ArrowArray cols[3], item;
  memset(cols, 0, sizeof cols);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[0], (int64_t)n, ids, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[1], (int64_t)n, cat, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_primitive(&item, (int64_t)(n * KD), vals, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_init(&cols[2], 1, 1, &e), &e);
  hs_arrow_array_set_buffer(&cols[2], 0, valid);
  cols[2].length = (int64_t)n;
  cols[2].null_count = nulls;
  *cols[2].children[0] = item;
  struct ArrowArray b;
  CHECK_OK(hs_arrow_array_make_struct(&b, (int64_t)n, cols, 3, NULL, 0, &e), &e);
  struct ArrowSchema s;
  k_schema(&s);
  struct ArrowArrayStream st;
  CHECK_OK(hs_arrow_stream_from_batches(&s, &b, 1, &st, &e), &e);
  int64_t snap = -1;
  CHECK_OK(hs_table_append(t, &st, &snap, &e), &e);
  g_kn += n;
}

/* A result of (id int64, d float8) rows, or the plan text. */
typedef struct kres {
  int64_t n;
  int64_t id[512];
  double d[512];
  bool d_null[512];
  char text[4096];
} kres;

static hs_status k_run(hs_sql_session *s, const char *sql, const struct ArrowSchema *ps,
                       const struct ArrowArray *pa, kres *r, hs_error *err) {
  memset(r, 0, sizeof *r);
  struct ArrowArrayStream out;
  int32_t pos = 0;
  hs_status st = hs_sql_execute(s, sql, ps, pa, &out, &pos, err);
  if (st != HS_OK) return st;
  struct ArrowSchema sch;
  if (out.get_schema(&out, &sch) != 0) {
    out.release(&out);
    return hs_error_set(err, HS_ERR_INTERNAL, "no schema");
  }
  size_t tl = 0;
  for (;;) {
    struct ArrowArray b;
    if (out.get_next(&out, &b) != 0) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s", out.get_last_error(&out));
      break;
    }
    if (b.release == NULL) break;
    for (int64_t i = 0; i < b.length && r->n < 512; i++, r->n++) {
      const struct ArrowArray *c0 = b.children[0];
      if (!strcmp(sch.children[0]->format, "u")) { /* EXPLAIN text */
        const int32_t *o = (const int32_t *)c0->buffers[1] + c0->offset;
        int len = o[i + 1] - o[i];
        if (tl + (size_t)len + 2 < sizeof r->text) {
          memcpy(r->text + tl, (const char *)c0->buffers[2] + o[i], (size_t)len);
          tl += (size_t)len;
          r->text[tl++] = '\n';
        }
        continue;
      }
      r->id[r->n] = ((const int64_t *)c0->buffers[1])[c0->offset + i];
      if (b.n_children > 1) {
        const struct ArrowArray *c1 = b.children[1];
        r->d_null[r->n] = !hs_arrow_is_valid(c1, i);
        r->d[r->n] = ((const double *)c1->buffers[1])[c1->offset + i];
      }
    }
    b.release(&b);
  }
  sch.release(&sch);
  out.release(&out);
  return st;
}

/* pgvector's value of row r against q (NAN: NULL distance as +inf + 1). */
static double k_dist(const char *op, const krow *r, const float *q, bool *is_null) {
  *is_null = r->null_vec;
  if (r->null_vec) return 0;
  return ref_metric(!strcmp(op, "<->")   ? "l2"
                    : !strcmp(op, "<#>") ? "nip"
                    : !strcmp(op, "<=>") ? "cos"
                                         : "l1",
                    r->v, q, KD);
}

/* rank key of the exact plan: finite < +inf < NaN < NULL */
static double k_key(double d, bool null) {
  if (null) return INFINITY;
  if (isnan(d)) return DBL_MAX;
  if (isinf(d)) return DBL_MAX / 2;
  return d;
}

static double *g_keys;
static int k_cmp(const void *a, const void *b) {
  double x = g_keys[*(const int64_t *)a], y = g_keys[*(const int64_t *)b];
  return x < y ? -1 : x > y;
}

/* Check a kNN result against brute force over rows passing `pass`. */
static void k_check(const char *sql, const kres *r, const char *op, const float *q, int64_t k,
                    int cat_eq, int64_t id_lt) {
  int64_t *m = malloc(sizeof(int64_t) * g_kn);
  g_keys = malloc(sizeof(double) * g_kn);
  int64_t nm = 0;
  for (size_t i = 0; i < g_kn; i++) {
    if (cat_eq >= 0 && g_k[i].cat != cat_eq) continue;
    if (id_lt >= 0 && g_k[i].id >= id_lt) continue;
    bool nul;
    double d = k_dist(op, &g_k[i], q, &nul);
    g_keys[i] = k_key(d, nul);
    m[nm++] = (int64_t)i;
  }
  qsort(m, (size_t)nm, sizeof(int64_t), k_cmp);
  int64_t want = nm < k ? nm : k;
  if (r->n != want) {
    fprintf(stderr, "%s: %lld rows, want %lld\n", sql, (long long)r->n, (long long)want);
    CHECK(0);
  }
  bool seen_bad = false;
  for (int64_t i = 0; i < r->n && i < want; i++) {
    int64_t id = r->id[i];
    CHECK(id >= 0 && (size_t)id < g_kn);
    if (id < 0 || (size_t)id >= g_kn) break;
    bool nul;
    double own = k_dist(op, &g_k[id], q, &nul);
    double got = r->d_null[i] ? NAN : r->d[i];
    double ref = g_keys[m[i]];
    bool ok;
    if (nul)
      ok = r->d_null[i] && ref == INFINITY;
    else if (isnan(own))
      ok = isnan(got) && ref == DBL_MAX;
    else
      ok = !r->d_null[i] && fabs(got - own) <= 1e-5 * (fabs(own) + 1) &&
           fabs(got - ref) <= 1e-5 * (fabs(ref) + 1);
    if (!ok && !seen_bad) {
      fprintf(stderr, "%s: row %lld id %lld d %.9g (null %d), own %.9g, want %.9g\n", sql,
              (long long)i, (long long)id, got, r->d_null[i], own, ref);
      seen_bad = true;
    }
    CHECK(ok);
    for (int64_t j = 0; j < i; j++) CHECK(r->id[j] != id);
  }
  free(m);
  free(g_keys);
}

static void k_query_text(const float *q, char *buf, size_t cap) {
  size_t at = (size_t)snprintf(buf, cap, "'[");
  for (int d = 0; d < KD; d++)
    at += (size_t)snprintf(buf + at, cap - at, "%s%.9g", d ? "," : "", (double)q[d]);
  snprintf(buf + at, cap - at, "]'::vector(%d)", KD);
}

static void test_sql_knn(void) {
  hs_error e = {0};
  char *root = hs_test_temp_root("sqlvec");
  hs_table *t = NULL;
  struct ArrowSchema s;
  k_schema(&s);
  CHECK_OK(hs_table_create(root, &s, NULL, &t, &e), &e);
  hs_arrow_schema_release(&s);
  if (t == NULL) return;
  for (int a = 0; a < KAPPENDS; a++) k_append(t, KROWS);
  hs_sql_session *ss = NULL;
  CHECK_OK(hs_sql_session_new(NULL, &ss, &e), &e);
  CHECK_OK(hs_sql_register_table(ss, "items", root, &e), &e);
  const char *ops[] = {"<->", "<#>", "<=>", "<+>"};
  const char *fns[] = {"l2_distance", NULL, "cosine_distance", "l1_distance"};
  struct {
    const char *where;
    int cat;
    int64_t id_lt;
  } filters[] = {{"", -1, -1}, {"WHERE cat = 3", 3, -1}, {"WHERE cat = 2 AND id < 300", 2, 300}};
  int64_t ks[] = {1, 10, 60};
  kres *r = malloc(sizeof *r), *rk = malloc(sizeof *rk);
  char sql[1024], qt[256];
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) { /* an HNSW index on every file (l2): the same answers here */
      hs_vector_index_options io;
      hs_vector_index_options_init(&io);
      int64_t built = 0;
      CHECK_OK(hs_table_build_vector_indexes(t, "emb", &io, &built, &e), &e);
      CHECK_EQ_INT(built, KAPPENDS);
    }
    for (int o = 0; o < 4; o++)
      for (size_t f = 0; f < sizeof filters / sizeof filters[0]; f++)
        for (size_t ki = 0; ki < 3; ki++) {
          float q[KD];
          for (int d = 0; d < KD; d++) q[d] = frand() * 3;
          k_query_text(q, qt, sizeof qt);
          const char *dist_fn = fns[o] != NULL && ki == 1 ? fns[o] : NULL;
          char expr[320];
          if (dist_fn != NULL)
            snprintf(expr, sizeof expr, "%s(emb, %s)", dist_fn, qt);
          else
            snprintf(expr, sizeof expr, "emb %s %s", ops[o], qt);
          snprintf(sql, sizeof sql, "SELECT id, %s AS d FROM items %s ORDER BY %s LIMIT %lld", expr,
                   filters[f].where, expr, (long long)ks[ki]);
          CHECK_OK(k_run(ss, sql, NULL, NULL, r, E(&e)), &e);
          k_check(sql, r, ops[o], q, ks[ki], filters[f].cat, filters[f].id_lt);
          memcpy(rk, r, sizeof *r);
          /* the same through the exact plan (a second key prevents the rewrite) */
          snprintf(sql, sizeof sql, "SELECT id, %s AS d FROM items %s ORDER BY %s, id LIMIT %lld",
                   expr, filters[f].where, expr, (long long)ks[ki]);
          CHECK_OK(k_run(ss, sql, NULL, NULL, r, E(&e)), &e);
          k_check(sql, r, ops[o], q, ks[ki], filters[f].cat, filters[f].id_lt);
          /* both plans: the same rows, the same distances to the bit (ids break
           * ties the same way here: both read rows in id order) */
          CHECK_EQ_INT(rk->n, r->n);
          for (int64_t i = 0; i < r->n && i < rk->n; i++) {
            CHECK_EQ_INT(rk->id[i], r->id[i]);
            CHECK(rk->d_null[i] == r->d_null[i]);
            if (!r->d_null[i])
              CHECK(memcmp(&rk->d[i], &r->d[i], 8) == 0 || (isnan(rk->d[i]) && isnan(r->d[i])));
          }
          /* EXPLAIN: the top-k is the vector search, the other is not */
          snprintf(sql, sizeof sql,
                   "EXPLAIN SELECT id, %s AS d FROM items %s ORDER BY %s LIMIT %lld", expr,
                   filters[f].where, expr, (long long)ks[ki]);
          CHECK_OK(k_run(ss, sql, NULL, NULL, r, E(&e)), &e);
          if (strstr(r->text, "VectorTopK") == NULL) {
            fprintf(stderr, "no VectorTopK in:\n%s\n", r->text);
            CHECK(0);
          }
          snprintf(sql, sizeof sql,
                   "EXPLAIN SELECT id, %s AS d FROM items %s ORDER BY %s DESC LIMIT %lld", expr,
                   filters[f].where, expr, (long long)ks[ki]);
          CHECK_OK(k_run(ss, sql, NULL, NULL, r, E(&e)), &e);
          CHECK(strstr(r->text, "VectorTopK") == NULL);
        }
  }
  /* inner_product() ascending is not <#>: exact plan, true order */
  float q[KD];
  for (int d = 0; d < KD; d++) q[d] = frand();
  k_query_text(q, qt, sizeof qt);
  snprintf(sql, sizeof sql, "EXPLAIN SELECT id FROM items ORDER BY inner_product(emb, %s) LIMIT 5",
           qt);
  CHECK_OK(k_run(ss, sql, NULL, NULL, r, E(&e)), &e);
  CHECK(strstr(r->text, "VectorTopK") == NULL);
  /* OFFSET: rows 5..7 of the first 8; the distance need not be selected */
  kres *r8 = malloc(sizeof *r8);
  snprintf(sql, sizeof sql, "SELECT id FROM items ORDER BY emb <-> %s LIMIT 8", qt);
  CHECK_OK(k_run(ss, sql, NULL, NULL, r8, E(&e)), &e);
  snprintf(sql, sizeof sql, "SELECT id FROM items ORDER BY emb <-> %s LIMIT 3 OFFSET 5", qt);
  CHECK_OK(k_run(ss, sql, NULL, NULL, r, E(&e)), &e);
  CHECK_EQ_INT(r8->n, 8);
  CHECK_EQ_INT(r->n, 3);
  for (int i = 0; i < 3 && r->n == 3 && r8->n == 8; i++) CHECK_EQ_INT(r->id[i], r8->id[5 + i]);
  /* the query as a parameter ($1 fixed_size_list<float32>) */
  {
    struct ArrowSchema ps;
    CHECK_OK(hs_arrow_schema_init(&ps, "+s", "", 0, 1, &e), &e);
    char fmt[16];
    snprintf(fmt, sizeof fmt, "+w:%d", KD);
    CHECK_OK(hs_arrow_schema_init(ps.children[0], fmt, "q", 0, 1, &e), &e);
    CHECK_OK(hs_arrow_schema_init(ps.children[0]->children[0], "f", "item", 0, 0, &e), &e);
    float *qv = hs_malloc(sizeof q);
    memcpy(qv, q, sizeof q);
    struct ArrowArray item, col;
    memset(&col, 0, sizeof col);
    CHECK_OK(hs_arrow_array_make_primitive(&item, KD, qv, NULL, 0, &e), &e);
    CHECK_OK(hs_arrow_array_init(&col, 1, 1, &e), &e);
    col.length = 1;
    *col.children[0] = item;
    struct ArrowArray pa;
    CHECK_OK(hs_arrow_array_make_struct(&pa, 1, &col, 1, NULL, 0, &e), &e);
    CHECK_OK(k_run(ss, "SELECT id, emb <-> $1 AS d FROM items ORDER BY emb <-> $1 LIMIT 8", &ps,
                   &pa, r, E(&e)),
             &e);
    CHECK_EQ_INT(r->n, 8);
    for (int i = 0; i < 8 && r->n == 8; i++) CHECK_EQ_INT(r->id[i], r8->id[i]);
    CHECK_OK(
        k_run(ss, "EXPLAIN SELECT id FROM items ORDER BY emb <-> $1 LIMIT 8", &ps, &pa, r, E(&e)),
        &e);
    CHECK(strstr(r->text, "VectorTopK") != NULL);
    hs_arrow_array_release(&pa);
    hs_arrow_schema_release(&ps);
  }
  /* EXPLAIN ANALYZE names the index; session settings reach the search */
  CHECK_OK(k_run(ss, "SET hnsw.ef_search = 100", NULL, NULL, r, E(&e)), &e);
  snprintf(sql, sizeof sql, "EXPLAIN ANALYZE SELECT id FROM items ORDER BY emb <-> %s LIMIT 8", qt);
  CHECK_OK(k_run(ss, sql, NULL, NULL, r, E(&e)), &e);
  CHECK(strstr(r->text, "vector index answered 2 of 2 files") != NULL);
  hs_status st = k_run(ss, "SET hnsw.ef_search = 'x'", NULL, NULL, r, E(&e));
  CHECK(st == HS_ERR_INVALID_ARG && strstr(e.message, "hnsw.ef_search"));
  CHECK_OK(k_run(ss, "SET ivfflat.probes = 3", NULL, NULL, r, E(&e)), &e);
  CHECK_OK(k_run(ss, sql, NULL, NULL, r, E(&e)), &e);
  /* a query of another dimension: pgvector's error from the exact plan */
  st = k_run(ss, "SELECT id FROM items ORDER BY emb <-> '[1,2]'::vector(2) LIMIT 3", NULL, NULL, r,
             E(&e));
  CHECK(st == HS_ERR_INVALID_ARG && strstr(e.message, "different vector dimensions 8 and 2"));
  free(r8);
  free(r);
  free(rk);
  hs_sql_session_free(ss);
  hs_table_free(t);
  free(root);
}

int main(void) {
  test_float4_format();
  test_text_forms();
  test_distances();
  test_const_query_and_nulls();
  test_bits();
  test_elementwise();
  test_casts();
  test_aggregates();
  test_sql_knn();
  return hs_test_finish("test_sql_vector");
}
