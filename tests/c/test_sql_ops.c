/*
 * test_sql_ops.c — the hash aggregate, sort/top-N and window operators
 * (src/sql/op_agg.c, op_sort.c, op_window.c) and the basic aggregates
 * (agg.c), on plans built by hand over a source operator that emits
 * prepared chunks of random data (NULLs, NaN, -0.0, infinities, duplicate
 * keys, empty strings), each result checked against a brute-force
 * reference computed row by row from the same data.
 */
#include <math.h>
#include <string.h>

#include "hs_test.h"
#include "sql/func_tables.h"
#include "sql/exec.h"
#include "sql/plan.h"

/* ----------------------------------------------------------- the data */

enum { C_ID, C_K1, C_K2, C_F, C_I64, C_DEC, C_B, C_D, C_G, N_COLS };

static const hs_sql_type *col_types(void) {
  static hs_sql_type t[N_COLS];
  t[C_ID] = hs_sql_type_of(HS_SQL_INT64);
  t[C_K1] = hs_sql_type_of(HS_SQL_INT32);
  t[C_K2] = hs_sql_type_of(HS_SQL_TEXT);
  t[C_F] = hs_sql_type_of(HS_SQL_FLOAT64);
  t[C_I64] = hs_sql_type_of(HS_SQL_INT64);
  t[C_DEC] = (hs_sql_type){HS_SQL_NUMERIC, 12, 2};
  t[C_B] = hs_sql_type_of(HS_SQL_BOOL);
  t[C_D] = hs_sql_type_of(HS_SQL_DATE);
  t[C_G] = hs_sql_type_of(HS_SQL_FLOAT64);
  return t;
}

static const char *STRS[] = {"",
                             "a",
                             "b",
                             "ab",
                             "ba",
                             "abc",
                             "zz",
                             "\xff",
                             "a\0b",
                             "B",
                             "abcdefg",
                             "abcdefgh",
                             "abcdefghi",
                             "abcdefgh\0",
                             "abcdefghijklmnopq",
                             "abcdefghijklmnopz",
                             "abcdefghijklmn",
                             "abcdefghijklmno\xff"};
static const uint32_t STR_LENS[] = {0, 1, 1, 2, 2, 3, 2, 1, 3, 1, 7, 8, 9, 9, 17, 17, 14, 16};
#define N_STRS ((int)(sizeof STRS / sizeof STRS[0]))

typedef struct dataset {
  int64_t n;
  int32_t *k1;
  hs_sql_str *k2;
  double *f, *g;
  int64_t *i64;
  hs_sql_i128 *dec;
  uint8_t *b;
  int32_t *d;
  uint8_t *valid[N_COLS];
  hs_sql_chunk *chunks;
  size_t n_chunks;
} dataset;

static bool rvalid(const dataset *ds, int c, int64_t r) {
  return ds->valid[c][r] != 0;
}

static void make_data(dataset *ds, int64_t n, int k1_domain, uint64_t *rng) {
  memset(ds, 0, sizeof *ds);
  ds->n = n;
  size_t m = (size_t)(n > 0 ? n : 1);
  ds->k1 = calloc(m, sizeof *ds->k1);
  ds->k2 = calloc(m, sizeof *ds->k2);
  ds->f = calloc(m, sizeof *ds->f);
  ds->g = calloc(m, sizeof *ds->g);
  ds->i64 = calloc(m, sizeof *ds->i64);
  ds->dec = calloc(m, sizeof *ds->dec);
  ds->b = calloc(m, sizeof *ds->b);
  ds->d = calloc(m, sizeof *ds->d);
  for (int c = 0; c < N_COLS; c++) ds->valid[c] = calloc(m, 1);
  static const double FS[] = {0.0, -0.0, 1.5, -2.25, NAN, INFINITY, -INFINITY, 3.0, 1e300, -7.5};
  for (int64_t r = 0; r < n; r++) {
    for (int c = 0; c < N_COLS; c++) ds->valid[c][r] = c == C_ID || hs_test_rand(rng) % 10 != 0;
    ds->k1[r] = (int32_t)(hs_test_rand(rng) % (uint64_t)k1_domain) - 2;
    int s = (int)(hs_test_rand(rng) % N_STRS);
    ds->k2[r].ptr = STRS[s];
    ds->k2[r].len = STR_LENS[s];
    uint64_t fr = hs_test_rand(rng) % 16;
    ds->f[r] = fr < 10 ? FS[fr] : (double)((int64_t)(hs_test_rand(rng) % 41) - 20) / 4.0;
    ds->g[r] = (double)((int64_t)(hs_test_rand(rng) % 2001) - 1000) / 8.0;
    uint64_t ir = hs_test_rand(rng) % 8;
    ds->i64[r] = ir == 0   ? INT64_MAX - (int64_t)(hs_test_rand(rng) % 5)
                 : ir == 1 ? INT64_MIN + (int64_t)(hs_test_rand(rng) % 5)
                           : (int64_t)(hs_test_rand(rng) % 2000001) - 1000000;
    ds->dec[r] = (hs_sql_i128)((int64_t)(hs_test_rand(rng) % 200000000001ull) - 100000000000LL);
    ds->b[r] = (uint8_t)(hs_test_rand(rng) % 4 != 0);
    ds->d[r] = (int32_t)(hs_test_rand(rng) % 12) + 19000;
    /* a NULL row's data slot holds zero, as vec.h says */
    if (!ds->valid[C_K1][r]) ds->k1[r] = 0;
    if (!ds->valid[C_K2][r]) ds->k2[r] = (hs_sql_str){NULL, 0};
    if (!ds->valid[C_F][r]) ds->f[r] = 0;
    if (!ds->valid[C_G][r]) ds->g[r] = 0;
    if (!ds->valid[C_I64][r]) ds->i64[r] = 0;
    if (!ds->valid[C_DEC][r]) ds->dec[r] = 0;
    if (!ds->valid[C_B][r]) ds->b[r] = 0;
    if (!ds->valid[C_D][r]) ds->d[r] = 0;
  }
  /* chunks of random sizes; some columns without a validity array */
  const hs_sql_type *types = col_types();
  hs_error err = {0};
  size_t cap = 16;
  ds->chunks = calloc(cap, sizeof *ds->chunks);
  for (int64_t off = 0; off < n;) {
    int64_t len = 1 + (int64_t)(hs_test_rand(rng) % 700);
    if (len > n - off) len = n - off;
    if (ds->n_chunks == cap) {
      cap *= 2;
      ds->chunks = realloc(ds->chunks, cap * sizeof *ds->chunks);
    }
    hs_sql_chunk *ch = &ds->chunks[ds->n_chunks++];
    CHECK_OK(hs_sql_chunk_init(ch, N_COLS, len, &err), &err);
    for (int c = 0; c < N_COLS; c++) {
      bool nulls = false;
      for (int64_t i = 0; i < len; i++)
        if (!ds->valid[c][off + i]) nulls = true;
      hs_sql_vec *v = &ch->cols[c];
      CHECK_OK(hs_sql_vec_alloc(v, types[c], len, nulls, &err), &err);
      void *dst = hs_sql_vec_mut_data(v);
      size_t w = hs_sql_vec_width(types[c]);
      const void *src = NULL;
      int64_t *ids = NULL;
      switch (c) {
      case C_ID:
        ids = dst;
        for (int64_t i = 0; i < len; i++) ids[i] = off + i;
        break;
      case C_K1: src = ds->k1 + off; break;
      case C_K2: src = ds->k2 + off; break;
      case C_F: src = ds->f + off; break;
      case C_G: src = ds->g + off; break;
      case C_I64: src = ds->i64 + off; break;
      case C_DEC: src = ds->dec + off; break;
      case C_B: src = ds->b + off; break;
      case C_D: src = ds->d + off; break;
      }
      if (src != NULL) memcpy(dst, src, (size_t)len * w);
      if (nulls) memcpy(hs_sql_vec_mut_valid(v), ds->valid[c] + off, (size_t)len);
    }
    off += len;
  }
}

static void free_data(dataset *ds) {
  free(ds->k1);
  free(ds->k2);
  free(ds->f);
  free(ds->g);
  free(ds->i64);
  free(ds->dec);
  free(ds->b);
  free(ds->d);
  for (int c = 0; c < N_COLS; c++) free(ds->valid[c]);
  for (size_t i = 0; i < ds->n_chunks; i++) hs_sql_chunk_release(&ds->chunks[i]);
  free(ds->chunks);
}

/* ----------------------------------------------- reference comparisons */

static int ref_cmp3(double x, double y) {
  bool xn = isnan(x), yn = isnan(y);
  if (xn || yn) return xn == yn ? 0 : xn ? 1 : -1;
  return x < y ? -1 : x > y ? 1 : 0;
}

/* Non-null values of column c at rows a and b. */
static int ref_value_cmp(const dataset *ds, int c, int64_t a, int64_t b) {
  switch (c) {
  case C_ID: return a < b ? -1 : a > b;
  case C_K1: return ds->k1[a] < ds->k1[b] ? -1 : ds->k1[a] > ds->k1[b];
  case C_K2: {
    hs_sql_str x = ds->k2[a], y = ds->k2[b];
    uint32_t m = x.len < y.len ? x.len : y.len;
    for (uint32_t i = 0; i < m; i++)
      if (x.ptr[i] != y.ptr[i]) return (uint8_t)x.ptr[i] < (uint8_t)y.ptr[i] ? -1 : 1;
    return x.len < y.len ? -1 : x.len > y.len;
  }
  case C_F: return ref_cmp3(ds->f[a], ds->f[b]);
  case C_G: return ref_cmp3(ds->g[a], ds->g[b]);
  case C_I64: return ds->i64[a] < ds->i64[b] ? -1 : ds->i64[a] > ds->i64[b];
  case C_DEC: return ds->dec[a] < ds->dec[b] ? -1 : ds->dec[a] > ds->dec[b];
  case C_B: return ds->b[a] < ds->b[b] ? -1 : ds->b[a] > ds->b[b];
  case C_D: return ds->d[a] < ds->d[b] ? -1 : ds->d[a] > ds->d[b];
  }
  return 0;
}

/* Grouping equality: NULL = NULL, NaN = NaN, -0.0 = 0.0. */
static bool ref_same(const dataset *ds, int c, int64_t a, int64_t b) {
  bool va = rvalid(ds, c, a), vb = rvalid(ds, c, b);
  if (va != vb) return false;
  return !va || ref_value_cmp(ds, c, a, b) == 0;
}

typedef struct ref_key {
  int col;
  bool desc, nulls_first;
} ref_key;

static int ref_order(const dataset *ds, const ref_key *keys, int nk, int64_t a, int64_t b) {
  for (int k = 0; k < nk; k++) {
    int c = keys[k].col;
    bool va = rvalid(ds, c, a), vb = rvalid(ds, c, b);
    if (!va || !vb) {
      if (va == vb) continue;
      int r = va ? -1 : 1;
      return keys[k].nulls_first ? -r : r;
    }
    int r = ref_value_cmp(ds, c, a, b);
    if (r != 0) return keys[k].desc ? -r : r;
  }
  return 0;
}

/* ----------------------------------------------- reference aggregates */

typedef enum ref_agg {
  RA_COUNT_STAR,
  RA_COUNT,
  RA_SUM,
  RA_AVG,
  RA_MIN,
  RA_MAX,
  RA_VAR_SAMP,
  RA_VAR_POP,
  RA_STDDEV_SAMP,
  RA_STDDEV_POP,
  RA_BOOL_AND,
  RA_BOOL_OR,
} ref_agg;

static const char *ref_agg_name(ref_agg a) {
  static const char *names[] = {"count",  "count",      "sum",      "avg",
                                "min",    "max",        "var_samp", "var_pop",
                                "stddev", "stddev_pop", "bool_and", "bool_or"};
  return names[a];
}

typedef struct agg_spec {
  ref_agg kind;
  int col;        /* argument column (-1: count(*)) */
  int filter_col; /* -1: none; else FILTER (WHERE col) on a BOOL column */
  bool distinct;
} agg_spec;

typedef struct expect {
  bool is_null;
  bool overflow; /* the engine must fail */
  int64_t i;     /* count, sum(int), bool */
  hs_sql_i128 dec;
  double f;
  int64_t row; /* min/max: the row holding the value */
} expect;

static double as_double(const dataset *ds, int c, int64_t r) {
  switch (c) {
  case C_K1: return ds->k1[r];
  case C_F: return ds->f[r];
  case C_G: return ds->g[r];
  case C_I64: return (double)ds->i64[r];
  case C_DEC: return (double)ds->dec[r] / 100.0;
  }
  return 0;
}

/* The aggregate over rows[0..n) (in input order). */
static expect ref_compute(const dataset *ds, const agg_spec *a, const int64_t *rows, int64_t n) {
  expect e;
  memset(&e, 0, sizeof e);
  int64_t *use = malloc((size_t)(n > 0 ? n : 1) * sizeof *use);
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t r = rows[i];
    if (a->filter_col >= 0 && !(rvalid(ds, a->filter_col, r) && ds->b[r])) continue;
    if (a->col >= 0 && !rvalid(ds, a->col, r)) continue;
    if (a->distinct) {
      bool seen = false;
      for (int64_t j = 0; j < m && !seen; j++) seen = ref_same(ds, a->col, use[j], r);
      if (seen) continue;
    }
    use[m++] = r;
  }
  switch (a->kind) {
  case RA_COUNT_STAR:
  case RA_COUNT: e.i = m; break;
  case RA_SUM:
    e.is_null = m == 0;
    if (a->col == C_K1) {
      for (int64_t i = 0; i < m; i++) e.i += ds->k1[use[i]];
    } else if (a->col == C_I64 || a->col == C_DEC) {
      for (int64_t i = 0; i < m; i++) e.dec += a->col == C_I64 ? ds->i64[use[i]] : ds->dec[use[i]];
    } else {
      for (int64_t i = 0; i < m; i++) e.f += as_double(ds, a->col, use[i]);
    }
    break;
  case RA_AVG: {
    e.is_null = m == 0;
    if (a->col == C_F || a->col == C_G) {
      double s = 0;
      for (int64_t i = 0; i < m; i++) s += as_double(ds, a->col, use[i]);
      e.f = s / (double)m;
    } else {
      hs_sql_i128 s = 0;
      for (int64_t i = 0; i < m; i++)
        s += a->col == C_I64 ? ds->i64[use[i]] : a->col == C_DEC ? ds->dec[use[i]] : ds->k1[use[i]];
      e.f = (double)s / (double)m / (a->col == C_DEC ? 100.0 : 1.0);
    }
    break;
  }
  case RA_MIN:
  case RA_MAX:
    e.is_null = m == 0;
    e.row = m ? use[0] : -1;
    for (int64_t i = 1; i < m; i++) {
      int c = ref_value_cmp(ds, a->col, use[i], e.row);
      if (a->kind == RA_MIN ? c < 0 : c > 0) e.row = use[i];
    }
    break;
  case RA_VAR_SAMP:
  case RA_VAR_POP:
  case RA_STDDEV_SAMP:
  case RA_STDDEV_POP: {
    bool samp = a->kind == RA_VAR_SAMP || a->kind == RA_STDDEV_SAMP;
    e.is_null = m == 0 || (samp && m < 2);
    if (e.is_null) break;
    double mean = 0, ss = 0;
    for (int64_t i = 0; i < m; i++) mean += as_double(ds, a->col, use[i]);
    mean /= (double)m;
    for (int64_t i = 0; i < m; i++) {
      double dlt = as_double(ds, a->col, use[i]) - mean;
      ss += dlt * dlt;
    }
    e.f = ss / (double)(samp ? m - 1 : m);
    if (a->kind == RA_STDDEV_SAMP || a->kind == RA_STDDEV_POP) e.f = sqrt(e.f);
    break;
  }
  case RA_BOOL_AND:
  case RA_BOOL_OR:
    e.is_null = m == 0;
    e.i = a->kind == RA_BOOL_AND;
    for (int64_t i = 0; i < m; i++)
      e.i = a->kind == RA_BOOL_AND ? (e.i && ds->b[use[i]]) : (e.i || ds->b[use[i]]);
    break;
  }
  free(use);
  return e;
}

static bool close_f(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  if (isinf(x) || isinf(y)) return x == y;
  double d = fabs(x - y), s = fabs(x) > fabs(y) ? fabs(x) : fabs(y);
  return d <= 1e-9 * (s > 1 ? s : 1);
}

/* Does row `row` of v hold the expected value? */
static bool matches(const dataset *ds, const agg_spec *a, const expect *e, const hs_sql_vec *v,
                    int64_t row) {
  hs_sql_value got;
  hs_sql_vec_get(v, row, &got);
  if (e->is_null || got.is_null) return e->is_null == got.is_null;
  switch (a->kind) {
  case RA_COUNT_STAR:
  case RA_COUNT: return got.type.id == HS_SQL_INT64 && got.v.i64 == e->i;
  case RA_SUM:
    if (a->col == C_K1) return got.type.id == HS_SQL_INT64 && got.v.i64 == e->i;
    if (a->col == C_I64 || a->col == C_DEC)
      return got.type.id == HS_SQL_NUMERIC && got.type.a == 38 &&
             got.type.b == (a->col == C_DEC ? 2 : 0) && got.v.dec == e->dec;
    return got.type.id == HS_SQL_FLOAT64 && close_f(got.v.f64, e->f);
  case RA_AVG:
  case RA_VAR_SAMP:
  case RA_VAR_POP:
  case RA_STDDEV_SAMP:
  case RA_STDDEV_POP: return got.type.id == HS_SQL_FLOAT64 && close_f(got.v.f64, e->f);
  case RA_BOOL_AND:
  case RA_BOOL_OR: return got.type.id == HS_SQL_BOOL && (int64_t)got.v.b == e->i;
  case RA_MIN:
  case RA_MAX: {
    int64_t r = e->row;
    switch (a->col) {
    case C_ID: return got.v.i64 == r;
    case C_K1: return got.v.i32 == ds->k1[r];
    case C_K2:
      return got.v.s.len == ds->k2[r].len &&
             (got.v.s.len == 0 || memcmp(got.v.s.ptr, ds->k2[r].ptr, got.v.s.len) == 0);
    case C_F: return ref_cmp3(got.v.f64, ds->f[r]) == 0;
    case C_G: return got.v.f64 == ds->g[r];
    case C_I64: return got.v.i64 == ds->i64[r];
    case C_DEC: return got.v.dec == ds->dec[r];
    case C_D: return got.v.i32 == ds->d[r];
    }
    return false;
  }
  }
  return false;
}

/* ------------------------------------------------------- plan building */

static const char *const COL_NAMES[N_COLS] = {"id", "k1", "k2", "f", "i64", "dec", "b", "d", "g"};

static hs_sql_expr *col_expr(hs_arena *a, int col) {
  hs_sql_expr *e = hs_arena_alloc(a, sizeof *e);
  e->kind = HS_SX_COL;
  e->type = col_types()[col];
  e->col = col;
  return e;
}

/* A scan of the data set's chunks (none when `empty`). */
static hs_sql_plan *source_plan(hs_arena *a, const dataset *ds, bool empty) {
  hs_sql_rel *rel = hs_arena_alloc(a, sizeof *rel);
  rel->name = "t";
  rel->chunks = ds->chunks;
  rel->n_chunks = empty ? 0 : ds->n_chunks;
  rel->n_cols = N_COLS;
  rel->types = col_types();
  rel->col_names = COL_NAMES;
  hs_sql_plan *p = hs_arena_alloc(a, sizeof *p);
  p->kind = HS_SP_SCAN;
  p->n_cols = N_COLS;
  p->types = hs_arena_memdup(a, col_types(), N_COLS * sizeof(hs_sql_type));
  p->names = hs_arena_memdup(a, COL_NAMES, sizeof COL_NAMES);
  p->est_rows = -1;
  p->scan.rel = rel;
  p->scan.snapshot_id = -1;
  p->scan.columns = p->names;
  p->scan.n_columns = N_COLS;
  p->scan.limit = -1;
  p->limit = -1;
  return p;
}

/* Output column names "c0".. (EXPLAIN and Arrow want names). */
static const char **out_names(hs_arena *a, int32_t n) {
  const char **names = hs_arena_alloc(a, (size_t)(n + 1) * sizeof *names);
  for (int32_t i = 0; i < n; i++) {
    char buf[16];
    snprintf(buf, sizeof buf, "c%d", (int)i);
    names[i] = hs_arena_strndup(a, buf, strlen(buf));
  }
  return names;
}

static bool make_call(hs_arena *a, const agg_spec *s, hs_sql_aggcall *call) {
  memset(call, 0, sizeof *call);
  hs_error err = {0};
  hs_sql_type t[1] = {{HS_SQL_NULLTYPE, 0, 0}};
  int32_t n = s->col >= 0 ? 1 : 0;
  if (n) t[0] = col_types()[s->col];
  hs_status st = hs_sql_agg_resolve(ref_agg_name(s->kind), t, n, &call->m, &err);
  CHECK_OK(st, &err);
  if (st != HS_OK) return false;
  call->n_args = n;
  if (n) {
    call->args = hs_arena_alloc(a, sizeof *call->args);
    call->args[0] = col_expr(a, s->col);
  }
  call->distinct = s->distinct;
  if (s->filter_col >= 0) call->filter = col_expr(a, s->filter_col);
  return true;
}

/* Run plan p to its end through the executor (memory_limit bytes, 0:
 * none); the output concatenated into *out. */
static hs_status run_plan(hs_sql_plan *p, int64_t memory_limit, hs_sql_chunk *out, hs_error *err) {
  hs_sql_exec_opts o;
  memset(&o, 0, sizeof o);
  o.memory_limit = memory_limit;
  hs_sql_exec *x = NULL;
  hs_status st = hs_sql_exec_new(NULL, p, &o, &x, err);
  hs_sql_chunk *chunks = NULL;
  size_t n = 0;
  if (st == HS_OK) st = hs_sql_exec_collect(x, &chunks, &n, err);
  int64_t rows = 0;
  for (size_t i = 0; i < n; i++) {
    CHECK(chunks[i].n <= 4096 && chunks[i].n_cols == p->n_cols);
    rows += chunks[i].n;
  }
  if (st == HS_OK) st = hs_sql_chunk_init(out, p->n_cols, rows, err);
  for (int32_t k = 0; k < p->n_cols && st == HS_OK; k++) {
    hs_sql_vec *parts = calloc(n ? n : 1, sizeof *parts);
    for (size_t i = 0; i < n; i++) parts[i] = chunks[i].cols[k];
    if (n > 0)
      st = hs_sql_vec_concat(&out->cols[k], parts, n, err);
    else
      st = hs_sql_vec_alloc(&out->cols[k], p->types[k], 0, false, err);
    free(parts);
  }
  for (size_t i = 0; i < n; i++) hs_sql_chunk_release(&chunks[i]);
  hs_free(chunks);
  hs_sql_exec_free(x);
  return st;
}

/* ------------------------------------------------------------ agg tests */

static const agg_spec AGGS[] = {
    {RA_COUNT_STAR, -1, -1, false},   {RA_COUNT, C_F, -1, false},
    {RA_SUM, C_K1, -1, false},        {RA_SUM, C_I64, -1, false},
    {RA_SUM, C_DEC, -1, false},       {RA_SUM, C_G, -1, false},
    {RA_SUM, C_F, -1, false},         {RA_AVG, C_I64, -1, false},
    {RA_AVG, C_DEC, -1, false},       {RA_AVG, C_G, -1, false},
    {RA_AVG, C_K1, -1, false},        {RA_MIN, C_K2, -1, false},
    {RA_MAX, C_K2, -1, false},        {RA_MIN, C_F, -1, false},
    {RA_MAX, C_F, -1, false},         {RA_MIN, C_DEC, -1, false},
    {RA_MAX, C_D, -1, false},         {RA_MAX, C_ID, -1, false},
    {RA_VAR_SAMP, C_G, -1, false},    {RA_VAR_POP, C_G, -1, false},
    {RA_STDDEV_SAMP, C_G, -1, false}, {RA_STDDEV_POP, C_G, -1, false},
    {RA_BOOL_AND, C_B, -1, false},    {RA_BOOL_OR, C_B, -1, false},
    {RA_COUNT, C_D, -1, true},        {RA_SUM, C_I64, C_B, false},
    {RA_SUM, C_K1, C_B, true},        {RA_COUNT_STAR, -1, C_B, false},
    {RA_MIN, C_K2, C_B, false},       {RA_COUNT, C_K2, -1, true},
};
#define N_AGGS ((int)(sizeof AGGS / sizeof AGGS[0]))

static void check_agg(const dataset *ds, const int *keys, int n_keys, bool empty,
                      const char *what) {
  hs_arena a;
  hs_arena_init(&a);
  hs_sql_plan *p = hs_arena_alloc(&a, sizeof *p);
  p->kind = HS_SP_AGG;
  p->kids[0] = source_plan(&a, ds, empty);
  p->agg.n_keys = n_keys;
  p->agg.keys = hs_arena_alloc(&a, (size_t)(n_keys + 1) * sizeof *p->agg.keys);
  p->agg.n_aggs = N_AGGS;
  p->agg.aggs = hs_arena_alloc(&a, N_AGGS * sizeof *p->agg.aggs);
  p->n_cols = n_keys + N_AGGS;
  p->names = out_names(&a, p->n_cols);
  p->types = hs_arena_alloc(&a, (size_t)p->n_cols * sizeof *p->types);
  for (int k = 0; k < n_keys; k++) {
    p->agg.keys[k] = col_expr(&a, keys[k]);
    p->types[k] = col_types()[keys[k]];
  }
  for (int i = 0; i < N_AGGS; i++) {
    if (!make_call(&a, &AGGS[i], &p->agg.aggs[i])) goto out;
    p->types[n_keys + i] = p->agg.aggs[i].m.ret;
  }
  hs_error err = {0};
  hs_sql_chunk res = {0};
  hs_status st = run_plan(p, 0, &res, &err);
  CHECK_OK(st, &err);
  if (st != HS_OK) goto out;
  int64_t n_in = empty ? 0 : ds->n;
  /* expected groups: distinct key tuples of the input (one when no keys) */
  int64_t *first = malloc((size_t)(n_in + 1) * sizeof *first);
  int64_t n_groups = 0;
  for (int64_t r = 0; r < n_in; r++) {
    bool seen = false;
    for (int64_t g = 0; g < n_groups && !seen; g++) {
      bool same = true;
      for (int k = 0; k < n_keys && same; k++) same = ref_same(ds, keys[k], first[g], r);
      seen = same;
    }
    if (!seen) first[n_groups++] = r;
  }
  if (n_keys == 0) n_groups = 1;
  CHECK_EQ_INT(res.n, n_groups);
  int64_t *rows = malloc((size_t)(n_in + 1) * sizeof *rows);
  bool *found = calloc((size_t)n_groups + 1, 1);
  int bad = 0;
  for (int64_t j = 0; j < res.n && bad < 5; j++) {
    /* the input rows of output row j's key */
    int64_t m = 0, g = -1;
    for (int64_t r = 0; r < n_in; r++) {
      bool same = true;
      for (int k = 0; k < n_keys && same; k++) {
        const hs_sql_vec *kv = &res.cols[k];
        int c = keys[k];
        bool vo = hs_sql_vec_valid(kv, j);
        if (vo != rvalid(ds, c, r)) {
          same = false;
          break;
        }
        if (!vo) continue;
        hs_sql_value got;
        hs_sql_vec_get(kv, j, &got);
        switch (c) {
        case C_K1: same = got.v.i32 == ds->k1[r]; break;
        case C_K2:
          same = got.v.s.len == ds->k2[r].len &&
                 (got.v.s.len == 0 || memcmp(got.v.s.ptr, ds->k2[r].ptr, got.v.s.len) == 0);
          break;
        case C_F: same = ref_cmp3(got.v.f64, ds->f[r]) == 0; break;
        case C_D: same = got.v.i32 == ds->d[r]; break;
        case C_I64: same = got.v.i64 == ds->i64[r]; break;
        case C_B: same = got.v.b == (ds->b[r] != 0); break;
        default: same = false;
        }
      }
      if (same) rows[m++] = r;
    }
    for (int64_t gg = 0; gg < n_groups && m > 0; gg++)
      if (first[gg] == rows[0]) g = gg;
    if (n_keys == 0) g = 0;
    CHECK(g >= 0 && (n_keys == 0 || m > 0));
    if (g >= 0) {
      CHECK(!found[g]); /* each group once */
      found[g] = true;
    }
    for (int i = 0; i < N_AGGS; i++) {
      expect e = ref_compute(ds, &AGGS[i], rows, m);
      bool ok = matches(ds, &AGGS[i], &e, &res.cols[n_keys + i], j);
      if (!ok) {
        bad++;
        fprintf(stderr, "%s: group row %lld: aggregate %d (%s of column %d) differs\n", what,
                (long long)j, i, ref_agg_name(AGGS[i].kind), AGGS[i].col);
      }
      CHECK(ok);
    }
  }
  free(first);
  free(rows);
  free(found);
  hs_sql_chunk_release(&res);
out:
  hs_arena_reset(&a);
}

/* DISTINCT: an AGG without aggregates. */
static void check_distinct(const dataset *ds, int key) {
  hs_arena a;
  hs_arena_init(&a);
  hs_sql_plan *p = hs_arena_alloc(&a, sizeof *p);
  p->kind = HS_SP_AGG;
  p->kids[0] = source_plan(&a, ds, false);
  p->agg.n_keys = 1;
  p->agg.keys = hs_arena_alloc(&a, sizeof *p->agg.keys);
  p->agg.keys[0] = col_expr(&a, key);
  p->n_cols = 1;
  p->names = out_names(&a, 1);
  p->types = hs_arena_memdup(&a, &col_types()[key], sizeof(hs_sql_type));
  hs_error err = {0};
  hs_sql_chunk res = {0};
  CHECK_OK(run_plan(p, 0, &res, &err), &err);
  int64_t n_distinct = 0;
  for (int64_t r = 0; r < ds->n; r++) {
    bool seen = false;
    for (int64_t q = 0; q < r && !seen; q++) seen = ref_same(ds, key, q, r);
    n_distinct += !seen;
  }
  CHECK_EQ_INT(res.n, n_distinct);
  /* no two output rows equal */
  int dup = 0;
  for (int64_t i = 0; i < res.n; i++)
    for (int64_t j = i + 1; j < res.n; j++)
      if (hs_sql_vec_cmp(&res.cols[0], i, &res.cols[0], j) == 0) dup++;
  CHECK_EQ_INT(dup, 0);
  hs_sql_chunk_release(&res);
  hs_arena_reset(&a);
}

/* ----------------------------------------------------------- sort tests */

static const dataset *g_ds;
static const ref_key *g_keys;
static int g_nk;
static int ref_sort_cmp(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  int r = ref_order(g_ds, g_keys, g_nk, a, b);
  if (r != 0) return r;
  return a < b ? -1 : a > b; /* stable */
}

static void check_sort(const dataset *ds, const ref_key *keys, int nk, int64_t limit,
                       int64_t offset) {
  hs_arena a;
  hs_arena_init(&a);
  hs_sql_plan *p = hs_arena_alloc(&a, sizeof *p);
  p->kind = HS_SP_SORT;
  p->kids[0] = source_plan(&a, ds, false);
  p->n_cols = N_COLS;
  p->types = p->kids[0]->types;
  p->names = p->kids[0]->names;
  p->limit = limit;
  p->offset = offset;
  p->sort.n_keys = nk;
  p->sort.keys = hs_arena_alloc(&a, (size_t)(nk + 1) * sizeof *p->sort.keys);
  for (int k = 0; k < nk; k++) {
    p->sort.keys[k].expr = col_expr(&a, keys[k].col);
    p->sort.keys[k].desc = keys[k].desc;
    p->sort.keys[k].nulls_first = keys[k].nulls_first;
  }
  hs_error err = {0};
  hs_sql_chunk res = {0};
  hs_status st = run_plan(p, 0, &res, &err);
  CHECK_OK(st, &err);
  int64_t *ref = malloc((size_t)(ds->n + 1) * sizeof *ref);
  for (int64_t r = 0; r < ds->n; r++) ref[r] = r;
  g_ds = ds;
  g_keys = keys;
  g_nk = nk;
  qsort(ref, (size_t)ds->n, sizeof *ref, ref_sort_cmp);
  int64_t from = offset < ds->n ? offset : ds->n;
  int64_t to = limit < 0 || limit > ds->n - from ? ds->n : from + limit;
  CHECK_EQ_INT(res.n, to - from);
  int bad = 0;
  for (int64_t i = 0; st == HS_OK && i < res.n && i < to - from; i++) {
    int64_t id = ((const int64_t *)res.cols[C_ID].data)[i];
    if (id != ref[from + i] && bad++ < 3)
      fprintf(stderr, "sort (%d keys, limit %lld offset %lld): row %lld is id %lld, want %lld\n",
              nk, (long long)limit, (long long)offset, (long long)i, (long long)id,
              (long long)ref[from + i]);
    /* the other columns came along with their row */
    hs_sql_value v;
    hs_sql_vec_get(&res.cols[C_K2], i, &v);
    if (id >= 0 && id < ds->n)
      CHECK(v.is_null == !rvalid(ds, C_K2, id) &&
            (v.is_null || (v.v.s.len == ds->k2[id].len &&
                           (v.v.s.len == 0 || memcmp(v.v.s.ptr, ds->k2[id].ptr, v.v.s.len) == 0))));
  }
  CHECK_EQ_INT(bad, 0);
  free(ref);
  hs_sql_chunk_release(&res);
  hs_arena_reset(&a);
}

/* --------------------------------------------------------- window tests */

typedef struct win_spec {
  hs_sql_winfn fn;
  agg_spec agg;
  int part[2];
  int n_part;
  ref_key order[2];
  int n_order;
} win_spec;

static const win_spec WINS[] = {
    {HS_SW_ROW_NUMBER, {0}, {C_K1}, 1, {{C_D, false, false}}, 1},
    {HS_SW_RANK, {0}, {C_K1}, 1, {{C_D, false, false}}, 1},
    {HS_SW_DENSE_RANK, {0}, {C_K1}, 1, {{C_D, true, false}}, 1},
    {HS_SW_RANK, {0}, {C_K2, C_B}, 2, {{C_F, true, true}, {C_K1, false, true}}, 2},
    {HS_SW_AGG, {RA_SUM, C_I64, -1, false}, {C_K1}, 1, {{C_D, false, false}}, 1},
    {HS_SW_AGG, {RA_COUNT_STAR, -1, -1, false}, {C_K2}, 1, {{0}}, 0},
    {HS_SW_AGG, {RA_MIN, C_K2, -1, false}, {0}, 0, {{C_D, false, true}}, 1},
    {HS_SW_AGG, {RA_MAX, C_K2, -1, false}, {C_K1}, 1, {{0}}, 0},
    {HS_SW_AGG, {RA_SUM, C_G, C_B, false}, {C_K1}, 1, {{C_D, false, false}}, 1},
    {HS_SW_ROW_NUMBER, {0}, {0}, 0, {{0}}, 0},
    {HS_SW_AGG, {RA_AVG, C_DEC, -1, false}, {C_F}, 1, {{C_K2, true, false}}, 1},
    {HS_SW_DENSE_RANK, {0}, {0}, 0, {{C_F, false, false}}, 1},
};
#define N_WINS ((int)(sizeof WINS / sizeof WINS[0]))

static void check_window(const dataset *ds) {
  hs_arena a;
  hs_arena_init(&a);
  hs_sql_plan *p = hs_arena_alloc(&a, sizeof *p);
  p->kind = HS_SP_WINDOW;
  p->kids[0] = source_plan(&a, ds, false);
  p->n_cols = N_COLS + N_WINS;
  p->names = out_names(&a, p->n_cols);
  p->types = hs_arena_alloc(&a, (size_t)p->n_cols * sizeof *p->types);
  memcpy(p->types, col_types(), N_COLS * sizeof *p->types);
  p->window.n_calls = N_WINS;
  p->window.calls = hs_arena_alloc(&a, N_WINS * sizeof *p->window.calls);
  for (int c = 0; c < N_WINS; c++) {
    const win_spec *w = &WINS[c];
    hs_sql_wincall *call = &p->window.calls[c];
    call->fn = w->fn;
    if (w->fn == HS_SW_AGG) {
      if (!make_call(&a, &w->agg, &call->agg)) goto out;
      p->types[N_COLS + c] = call->agg.m.ret;
    } else {
      p->types[N_COLS + c] = hs_sql_type_of(HS_SQL_INT64);
    }
    call->n_partition = w->n_part;
    call->partition = hs_arena_alloc(&a, 2 * sizeof *call->partition);
    for (int k = 0; k < w->n_part; k++) call->partition[k] = col_expr(&a, w->part[k]);
    call->n_order = w->n_order;
    call->order = hs_arena_alloc(&a, 2 * sizeof *call->order);
    for (int k = 0; k < w->n_order; k++) {
      call->order[k].expr = col_expr(&a, w->order[k].col);
      call->order[k].desc = w->order[k].desc;
      call->order[k].nulls_first = w->order[k].nulls_first;
    }
  }
  hs_error err = {0};
  hs_sql_chunk res = {0};
  hs_status st = run_plan(p, 0, &res, &err);
  CHECK_OK(st, &err);
  if (st != HS_OK) goto out;
  CHECK_EQ_INT(res.n, ds->n);
  int64_t *part = malloc((size_t)(ds->n + 1) * sizeof *part);
  int64_t *frame = malloc((size_t)(ds->n + 1) * sizeof *frame);
  for (int c = 0; c < N_WINS; c++) {
    const win_spec *w = &WINS[c];
    const hs_sql_vec *out = &res.cols[N_COLS + c];
    int bad = 0;
    for (int64_t r = 0; r < ds->n && r < res.n && bad < 3; r++) {
      CHECK_EQ_INT(((const int64_t *)res.cols[C_ID].data)[r], r); /* input order */
      int64_t np = 0;
      for (int64_t q = 0; q < ds->n; q++) {
        bool same = true;
        for (int k = 0; k < w->n_part && same; k++) same = ref_same(ds, w->part[k], q, r);
        if (same) part[np++] = q;
      }
      int64_t before = 0, tie_before = 0, n_frame = 0;
      for (int64_t i = 0; i < np; i++) {
        int64_t q = part[i];
        int o = ref_order(ds, w->order, w->n_order, q, r);
        if (o < 0) before++;
        if (o == 0 && q < r) tie_before++;
        if (o <= 0 || w->n_order == 0) frame[n_frame++] = q;
      }
      bool ok;
      if (w->fn == HS_SW_AGG) {
        expect e = ref_compute(ds, &w->agg, frame, n_frame);
        ok = matches(ds, &w->agg, &e, out, r);
      } else {
        int64_t want;
        if (w->fn == HS_SW_ROW_NUMBER) {
          want = before + tie_before + 1;
        } else if (w->fn == HS_SW_RANK) {
          want = before + 1;
        } else {
          /* distinct peer classes strictly before r */
          want = 1;
          for (int64_t i = 0; i < np; i++) {
            int64_t q = part[i];
            if (ref_order(ds, w->order, w->n_order, q, r) >= 0) continue;
            bool first_of_class = true;
            for (int64_t k = 0; k < np && first_of_class; k++) {
              int64_t q2 = part[k];
              if (q2 < q && ref_order(ds, w->order, w->n_order, q2, q) == 0) first_of_class = false;
            }
            want += first_of_class;
          }
        }
        hs_sql_value got;
        hs_sql_vec_get(out, r, &got);
        ok = !got.is_null && got.v.i64 == want;
      }
      if (!ok && bad++ < 3) fprintf(stderr, "window call %d: row %lld differs\n", c, (long long)r);
      CHECK(ok);
    }
  }
  free(part);
  free(frame);
  hs_sql_chunk_release(&res);
out:
  hs_arena_reset(&a);
}

/* Past the statement's memory limit the hash aggregate and the sort fail
 * with the limit's message (no spilling yet), and nothing leaks. */
static void check_memory_limit(const dataset *ds) {
  hs_arena a;
  hs_arena_init(&a);
  hs_sql_plan *p = hs_arena_alloc(&a, sizeof *p);
  p->kind = HS_SP_AGG;
  p->kids[0] = source_plan(&a, ds, false);
  p->agg.n_keys = 2;
  p->agg.keys = hs_arena_alloc(&a, 2 * sizeof *p->agg.keys);
  p->agg.keys[0] = col_expr(&a, C_ID);
  p->agg.keys[1] = col_expr(&a, C_K2);
  p->n_cols = 2;
  p->names = out_names(&a, 2);
  p->types = hs_arena_alloc(&a, 2 * sizeof *p->types);
  p->types[0] = col_types()[C_ID];
  p->types[1] = col_types()[C_K2];
  hs_error err = {0};
  hs_sql_chunk res = {0};
  CHECK(run_plan(p, 16 << 10, &res, &err) == HS_ERR_NOMEM);
  CHECK(strstr(err.message, "memory limit") != NULL && strstr(err.message, "aggregate") != NULL);
  hs_sql_chunk_release(&res);
  hs_sql_plan *q = hs_arena_alloc(&a, sizeof *q);
  q->kind = HS_SP_SORT;
  q->kids[0] = source_plan(&a, ds, false);
  q->n_cols = N_COLS;
  q->types = q->kids[0]->types;
  q->names = q->kids[0]->names;
  q->limit = -1;
  q->sort.n_keys = 1;
  q->sort.keys = hs_arena_alloc(&a, sizeof *q->sort.keys);
  q->sort.keys[0].expr = col_expr(&a, C_F);
  memset(&err, 0, sizeof err);
  CHECK(run_plan(q, 16 << 10, &res, &err) == HS_ERR_NOMEM);
  CHECK(strstr(err.message, "memory limit") != NULL && strstr(err.message, "sort") != NULL);
  hs_sql_chunk_release(&res);
  /* the same plans fit under a generous limit */
  memset(&err, 0, sizeof err);
  CHECK_OK(run_plan(p, 256 << 20, &res, &err), &err);
  CHECK_EQ_INT(res.n, ds->n);
  hs_sql_chunk_release(&res);
  hs_arena_reset(&a);
}

/* ------------------------------------------------------ aggregate errors */

static void check_resolve(void) {
  hs_sql_agg_match m;
  hs_error err = {0};
  hs_sql_type t = hs_sql_type_of(HS_SQL_INT32);
  CHECK_OK(hs_sql_agg_resolve("sum", &t, 1, &m, &err), &err);
  CHECK(m.ret.id == HS_SQL_INT64);
  t = hs_sql_type_of(HS_SQL_INT64);
  CHECK_OK(hs_sql_agg_resolve("sum", &t, 1, &m, &err), &err);
  CHECK(m.ret.id == HS_SQL_NUMERIC && m.ret.a == 38 && m.ret.b == 0);
  t = (hs_sql_type){HS_SQL_NUMERIC, 15, 2};
  CHECK_OK(hs_sql_agg_resolve("sum", &t, 1, &m, &err), &err);
  CHECK(m.ret.id == HS_SQL_NUMERIC && m.ret.a == 38 && m.ret.b == 2);
  CHECK(hs_sql_type_eq(m.cast_to, t));
  CHECK_OK(hs_sql_agg_resolve("max", &t, 1, &m, &err), &err);
  CHECK(hs_sql_type_eq(m.ret, t));
  t = hs_sql_type_of(HS_SQL_TEXT);
  memset(&err, 0, sizeof err);
  CHECK(hs_sql_agg_resolve("sum", &t, 1, &m, &err) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "sum(text)") != NULL);
  memset(&err, 0, sizeof err);
  CHECK(hs_sql_agg_resolve("lower", &t, 1, &m, &err) == HS_ERR_NOT_FOUND);
  CHECK(hs_sql_agg_exists("stddev") && hs_sql_agg_exists("count") && !hs_sql_agg_exists("lower"));
  CHECK_OK(hs_sql_agg_resolve("count", NULL, 0, &m, &err), &err);
  CHECK(m.agg->n_args == 0 && m.ret.id == HS_SQL_INT64);
}

/* sum(int) past bigint and sum(numeric) past 38 digits are errors. */
static void check_overflow(void) {
  hs_error err = {0};
  hs_sql_agg_match m;
  hs_sql_type t = hs_sql_type_of(HS_SQL_INT32);
  CHECK_OK(hs_sql_agg_resolve("sum", &t, 1, &m, &err), &err);
  hs_arena arena;
  hs_arena_init(&arena);
  void *state = calloc(1, m.agg->state_size);
  m.agg->init(state, t, m.ret);
  int64_t n = 4096;
  hs_sql_vec v = {0};
  CHECK_OK(hs_sql_vec_alloc(&v, t, n, false, &err), &err);
  int32_t *d = hs_sql_vec_mut_data(&v);
  for (int64_t i = 0; i < n; i++) d[i] = INT32_MAX;
  uint32_t *g = calloc((size_t)n, sizeof *g);
  hs_status st = m.agg->update(m.agg, state, g, &v, n, &arena, &err);
  CHECK_OK(st, &err);
  /* double the sum by merging the state into itself until it leaves bigint */
  void *copy = calloc(1, m.agg->state_size);
  for (int i = 0; i < 64 && st == HS_OK; i++) {
    memcpy(copy, state, m.agg->state_size);
    st = m.agg->merge(m.agg, state, copy, &arena, &err);
  }
  free(copy);
  CHECK(st == HS_ERR_INVALID_ARG && strstr(err.message, "bigint out of range") != NULL);
  hs_sql_vec_release(&v);
  free(state);

  memset(&err, 0, sizeof err);
  t = (hs_sql_type){HS_SQL_NUMERIC, 38, 0};
  CHECK_OK(hs_sql_agg_resolve("sum", &t, 1, &m, &err), &err);
  state = calloc(1, m.agg->state_size);
  m.agg->init(state, t, m.ret);
  CHECK_OK(hs_sql_vec_alloc(&v, t, 2, false, &err), &err);
  hs_sql_i128 *dd = hs_sql_vec_mut_data(&v);
  dd[0] = dd[1] = (hs_sql_i128)9000000000000000000ull * (hs_sql_i128)10000000000000000000ull;
  st = m.agg->update(m.agg, state, g, &v, 2, &arena, &err);
  hs_sql_vec out = {0};
  if (st == HS_OK) {
    CHECK_OK(hs_sql_vec_alloc(&out, m.ret, 1, true, &err), &err);
    st = m.agg->final(m.agg, state, m.ret, &out, 0, &err);
  }
  CHECK(st == HS_ERR_INVALID_ARG && strstr(err.message, "numeric field overflow") != NULL);
  hs_sql_vec_release(&v);
  hs_sql_vec_release(&out);
  free(state);
  free(g);
  hs_arena_reset(&arena);
}

/* sum/min/max of intervals: sums field by field; order by the span with a
 * month of 30 days (PostgreSQL's interval comparison). */
static void check_intervals(void) {
  hs_error err = {0};
  hs_sql_type t = hs_sql_type_of(HS_SQL_INTERVAL);
  static const hs_sql_interval IV[] = {{1, 0, 0}, {0, 31, 0}, {0, 0, -5}, {0, 29, 86400000001LL}};
  const char *names[] = {"sum", "min", "max"};
  hs_sql_interval want[] = {{1, 60, 86400000001LL - 5}, {0, 0, -5}, {0, 31, 0}};
  hs_arena arena;
  hs_arena_init(&arena);
  hs_sql_vec v = {0};
  CHECK_OK(hs_sql_vec_alloc(&v, t, 4, true, &err), &err);
  memcpy(hs_sql_vec_mut_data(&v), IV, sizeof IV);
  memset(hs_sql_vec_mut_valid(&v), 1, 4);
  uint32_t g[4] = {0, 0, 0, 0};
  for (int a = 0; a < 3; a++) {
    hs_sql_agg_match m;
    CHECK_OK(hs_sql_agg_resolve(names[a], &t, 1, &m, &err), &err);
    CHECK(m.ret.id == HS_SQL_INTERVAL);
    void *state = calloc(1, m.agg->state_size);
    m.agg->init(state, t, m.ret);
    CHECK_OK(m.agg->update(m.agg, state, g, &v, 4, &arena, &err), &err);
    hs_sql_vec out = {0};
    CHECK_OK(hs_sql_vec_alloc(&out, m.ret, 1, true, &err), &err);
    CHECK_OK(m.agg->final(m.agg, state, m.ret, &out, 0, &err), &err);
    hs_sql_value got;
    hs_sql_vec_get(&out, 0, &got);
    CHECK(!got.is_null && got.v.iv.months == want[a].months && got.v.iv.days == want[a].days &&
          got.v.iv.micros == want[a].micros);
    hs_sql_vec_release(&out);
    free(state);
  }
  hs_sql_vec_release(&v);
  hs_arena_reset(&arena);
}

int main(void) {
  uint64_t rng = 0x5EED15;
  check_resolve();
  check_overflow();
  check_intervals();
  for (int round = 0; round < 3; round++) {
    dataset ds;
    int64_t n = round == 0 ? 1 : round == 1 ? 900 : 6000;
    make_data(&ds, n, round == 2 ? 40 : 6, &rng);
    int k12[] = {C_K1, C_K2}, kf[] = {C_F}, kd[] = {C_D, C_B};
    check_agg(&ds, k12, 2, false, "group by k1, k2");
    check_agg(&ds, kf, 1, false, "group by f");
    check_agg(&ds, kd, 2, false, "group by d, b");
    int kk1[] = {C_K1}, kdd[] = {C_D}, ki[] = {C_I64};
    check_agg(&ds, kk1, 1, false, "group by k1");
    check_agg(&ds, kdd, 1, false, "group by d");
    if (n <= 1000) check_agg(&ds, ki, 1, false, "group by i64");
    check_agg(&ds, NULL, 0, false, "no group by");
    check_agg(&ds, NULL, 0, true, "no group by, empty input");
    check_agg(&ds, k12, 2, true, "group by, empty input");
    check_distinct(&ds, C_F);
    check_distinct(&ds, C_K2);
    for (int t = 0; t < 40; t++) {
      ref_key keys[3];
      static const int SORTABLE[] = {C_K1, C_K2, C_F, C_I64, C_DEC, C_B, C_D};
      int nk = 1 + (int)(hs_test_rand(&rng) % 3);
      for (int k = 0; k < nk; k++) {
        keys[k].col = SORTABLE[hs_test_rand(&rng) % 7];
        keys[k].desc = hs_test_rand(&rng) & 1;
        keys[k].nulls_first = hs_test_rand(&rng) & 1;
      }
      static const int64_t LIMITS[][2] = {{-1, 0},   {10, 0},  {7, 5}, {0, 0},
                                          {5000, 3}, {-1, 17}, {1, 0}, {100, 4000}};
      const int64_t *lo = LIMITS[t % 8];
      check_sort(&ds, keys, nk, lo[0], lo[1]);
    }
    if (n <= 1000) check_window(&ds);
    if (n > 1000) check_memory_limit(&ds);
    free_data(&ds);
  }
  {
    /* a larger window input, still brute-force checkable */
    dataset ds;
    make_data(&ds, 1500, 12, &rng);
    check_window(&ds);
    free_data(&ds);
  }
  return hs_test_finish("test_sql_ops");
}
