/*
 * test_quant.c — SQ8 and PQ against exact distances on clustered data.
 *
 * Bounds that cannot be argued away (triangle inequality, Cauchy-Schwarz):
 * with x' = decode(encode(x)) and e = x - x',
 *   L2:  | sqrt(approx) - ||q - x|| | <= ||e||_2
 *   IP:  | approx - (-q.x) |          <= ||q||_2 ||e||_2
 *   L1:  | approx - ||q - x||_1 |     <= ||e||_1
 * (plus float rounding), and approx equals the exact distance to x'. SQ8's
 * per-component error is at most half a step. Quality checks, on 20
 * clusters of 32-d points: top-100 by approximate distance holds >= 0.9 of
 * the true top-10 (SQ8 and PQ), Spearman correlation of approximate and
 * exact distances >= 0.99 (SQ8) / 0.9 (PQ), PQ reconstruction error well
 * below the data's variance. Then: encodings independent of threads,
 * serialize/parse round trip, every truncation, bit flips and re-checksummed
 * bad fields refused with HS_ERR_CORRUPT, invalid training input.
 */
#include <math.h>

#include "common/common.h"
#include "hs_test.h"
#include "index/vector/quant.h"

#define N 4000
#define DIM 32
#define NQ 40
#define C 20

/* Sanitized builds (every C test also runs under ASan) check fewer queries:
 * the per-point bound checks dominate and run ~15x slower there. */
#if defined(__SANITIZE_ADDRESS__)
#define HS_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HS_TEST_ASAN 1
#endif
#endif
#ifdef HS_TEST_ASAN
static const size_t nq_checked = 10;
#else
static const size_t nq_checked = NQ;
#endif

static uint64_t rng = 99;
static float data[N * DIM], queries[NQ * DIM];

static double unit(void) {
  return (double)(hs_test_rand(&rng) >> 11) * 0x1.0p-53;
}
static float gauss(void) {
  double u = unit(), v = unit();
  return (float)(sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v));
}

static void make_data(void) {
  static float centres[C * DIM];
  for (size_t i = 0; i < C * DIM; i++) centres[i] = (float)(unit() * 20 - 10);
  for (size_t i = 0; i < N; i++)
    for (size_t d = 0; d < DIM; d++)
      data[i * DIM + d] = centres[(i % C) * DIM + d] + gauss() * (1.0f + (float)(d % 4));
  for (size_t i = 0; i < NQ; i++)
    for (size_t d = 0; d < DIM; d++)
      queries[i * DIM + d] = data[(i * 97 % N) * DIM + d] + 0.5f * gauss();
}

static double exact(hs_metric m, const float *q, const float *x) {
  double s = 0;
  for (size_t d = 0; d < DIM; d++) {
    double t = (double)q[d] - x[d];
    s += m == HS_METRIC_IP ? -(double)q[d] * x[d] : m == HS_METRIC_L1 ? fabs(t) : t * t;
  }
  return s;
}

static int cmp_pair(const void *a, const void *b) {
  const double *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Ranks (0..n-1) of v[i], ties broken by index. */
static void ranks(const double *v, size_t n, double *r) {
  double *p = malloc(n * 2 * sizeof(double));
  for (size_t i = 0; i < n; i++) p[2 * i] = v[i], p[2 * i + 1] = (double)i;
  qsort(p, n, 2 * sizeof(double), cmp_pair);
  for (size_t i = 0; i < n; i++) r[(size_t)p[2 * i + 1]] = (double)i;
  free(p);
}

static double spearman(const double *a, const double *b, size_t n) {
  double *ra = malloc(n * sizeof(double)), *rb = malloc(n * sizeof(double)), s = 0;
  ranks(a, n, ra);
  ranks(b, n, rb);
  for (size_t i = 0; i < n; i++) s += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  free(ra);
  free(rb);
  return 1.0 - 6.0 * s / ((double)n * ((double)n * n - 1));
}

static void check_quantizer(hs_quant_kind kind, hs_metric metric) {
  const char *name = kind == HS_QUANT_SQ8 ? "SQ8" : "PQ";
  hs_quant_params p = {.kind = kind, .seed = 5};
  hs_quant *q = NULL;
  hs_error err = {0};
  CHECK_OK(hs_quant_train(data, N, DIM, metric, &p, &q, &err), &err);
  if (q == NULL) return;
  CHECK_EQ_INT(hs_quant_kind_of(q), kind);
  size_t cs = hs_quant_code_size(q);
  CHECK_EQ_INT(cs, kind == HS_QUANT_SQ8 ? DIM : 4); /* default m = 32/8 */
  uint8_t *codes = malloc(N * cs);
  float *rec = malloc(N * DIM * sizeof(float)), *approx = malloc(N * sizeof(float));
  hs_quant_encode(q, data, N, codes);
  double err_sq = 0, var = 0, mean[DIM] = {0};
  for (size_t i = 0; i < N; i++) {
    hs_quant_decode(q, codes + i * cs, rec + i * DIM);
    for (size_t d = 0; d < DIM; d++) {
      double e = (double)data[i * DIM + d] - rec[i * DIM + d];
      err_sq += e * e;
      mean[d] += data[i * DIM + d] / (double)N;
    }
  }
  for (size_t i = 0; i < N * DIM; i++) var += pow(data[i] - mean[i % DIM], 2);
  /* SQ8: half a step of a range of ~40 + 8 sigma, so ~1e-5 of the
   * variance; PQ with 256 centroids per 8-d sub-space captures the
   * clusters and part of the noise: measured 0.077, bound 0.15. */
  printf("%s %s: reconstruction error / variance = %.5f\n", name, hs_metric_name(metric),
         err_sq / var);
  CHECK(err_sq / var < (kind == HS_QUANT_SQ8 ? 1e-4 : 0.15));

  double recall = 0, rho_sum = 0;
  size_t bound_fail = 0;
  double *ex = malloc(N * sizeof(double)), *ap = malloc(N * sizeof(double));
  for (size_t iq = 0; iq < nq_checked; iq++) {
    const float *qv = queries + iq * DIM;
    hs_quant_query *qq = NULL;
    CHECK_OK(hs_quant_query_make(q, qv, &qq, &err), &err);
    if (qq == NULL) break;
    hs_quant_distance_batch(qq, codes, N, approx);
    { /* scattered rows, odd counts: the scan kernel's distances bit for bit */
      const hs_quant_distance_fn kf = hs_quant_distance_kernel(qq);
      uint32_t ids[37];
      float got[37];
      for (uint32_t n = 0; n <= 37; n += 5) {
        for (uint32_t j = 0; j < n; j++) ids[j] = (uint32_t)((j * 7919u + iq * 31u) % N);
        hs_quant_distance_gather(qq, codes, ids, n, got);
        for (uint32_t j = 0; j < n; j++) CHECK(got[j] == kf(qq, codes + (size_t)ids[j] * cs));
      }
    }
    double qn = sqrt(exact(HS_METRIC_L2, qv, (float[DIM]){0}));
    double qabs = exact(HS_METRIC_L1, qv, (float[DIM]){0});
    for (size_t i = 0; i < N; i++) {
      const float *x = data + i * DIM, *xr = rec + i * DIM;
      double e2 = sqrt(exact(HS_METRIC_L2, x, xr)), e1 = exact(HS_METRIC_L1, x, xr);
      double want = exact(metric, qv, x), to_rec = exact(metric, qv, xr), a = approx[i];
      CHECK(a == hs_quant_distance(qq, codes + i * cs));
      int ok;
      double tol = 1e-4 * (fabs(to_rec) + 1);
      /* SQ8 IP sums w_d c_d terms up to |q_d| * 80 (the data lie in
       * [-40, 40]) and a constant of the same size: float rounding of
       * such sums is far below 1e-5 of that magnitude. */
      if (metric == HS_METRIC_IP) tol += 1e-5 * qabs * 80;
      if (metric == HS_METRIC_IP)
        ok = fabs(a - want) <= qn * e2 + tol;
      else if (metric == HS_METRIC_L1)
        ok = fabs(a - want) <= e1 + tol;
      else
        ok = fabs(sqrt(fmax(a, 0)) - sqrt(want)) <= e2 + 1e-3;
      ok = ok && fabs(a - to_rec) <= tol;
      bound_fail += !ok;
      ex[i] = want;
      ap[i] = a;
    }
    rho_sum += spearman(ex, ap, N);
    /* Recall: the true top-10 inside the approximate top-100. */
    double *ord = malloc(N * 2 * sizeof(double));
    for (size_t i = 0; i < N; i++) ord[2 * i] = ap[i], ord[2 * i + 1] = (double)i;
    qsort(ord, N, 2 * sizeof(double), cmp_pair);
    char *in100 = calloc(N, 1);
    for (size_t i = 0; i < 100; i++) in100[(size_t)ord[2 * i + 1]] = 1;
    for (size_t i = 0; i < N; i++) ord[2 * i] = ex[i], ord[2 * i + 1] = (double)i;
    qsort(ord, N, 2 * sizeof(double), cmp_pair);
    for (size_t i = 0; i < 10; i++) recall += in100[(size_t)ord[2 * i + 1]] / 10.0 / nq_checked;
    free(in100);
    free(ord);
    hs_quant_query_free(qq);
  }
  double rho = rho_sum / nq_checked;
  printf("%s %s: recall10@100 = %.3f, Spearman = %.4f, bound failures %zu\n", name,
         hs_metric_name(metric), recall, rho, bound_fail);
  CHECK_EQ_INT(bound_fail, 0);
  CHECK(recall >= 0.9);
  CHECK(rho >= (kind == HS_QUANT_SQ8 ? 0.99 : 0.9));

  /* Training and encoding with 3 threads give the same bytes (once per
   * kind: the metric does not enter training). */
  p.threads = 3;
  hs_quant *q3 = NULL;
  if (metric == HS_METRIC_L2) CHECK_OK(hs_quant_train(data, N, DIM, metric, &p, &q3, &err), &err);
  if (q3 != NULL) {
    uint8_t *codes3 = malloc(N * cs);
    hs_quant_encode(q3, data, N, codes3);
    CHECK(memcmp(codes, codes3, N * cs) == 0);
    free(codes3);
    hs_quant_free(q3);
  }

  /* Round trip: same bytes, same codes, same distances. */
  hs_buf b, b2;
  hs_buf_init(&b);
  hs_buf_init(&b2);
  CHECK_OK(hs_quant_serialize(q, &b, &err), &err);
  hs_quant *r = NULL;
  CHECK_OK(hs_quant_parse(b.data, b.len, &r, &err), &err);
  if (r != NULL) {
    CHECK_OK(hs_quant_serialize(r, &b2, &err), &err);
    CHECK(b.len == b2.len && memcmp(b.data, b2.data, b.len) == 0);
    CHECK_EQ_INT(hs_quant_metric(r), metric);
    CHECK_EQ_INT(hs_quant_dim(r), DIM);
    uint8_t *c2 = malloc(N * cs);
    hs_quant_encode(r, data, N, c2);
    CHECK(memcmp(codes, c2, N * cs) == 0);
    hs_quant_query *qa = NULL, *qb = NULL;
    hs_quant_query_make(q, queries, &qa, &err);
    hs_quant_query_make(r, queries, &qb, &err);
    for (size_t i = 0; qa && qb && i < 50; i++)
      CHECK(hs_quant_distance(qa, codes + i * cs) == hs_quant_distance(qb, codes + i * cs));
    hs_quant_query_free(qa);
    hs_quant_query_free(qb);
    free(c2);
    hs_quant_free(r);
  }
  hs_buf_free(&b);
  hs_buf_free(&b2);
  free(ex);
  free(ap);
  free(codes);
  free(rec);
  free(approx);
  hs_quant_free(q);
}

/* Re-checksum a modified serialization (the trailer is murmur3 with the
 * documented seed), so the field checks themselves are exercised. */
static void reseal(uint8_t *p, size_t len) {
  hs_store_u32le(p + len - 4, hs_murmur3_x86_32(p, len - 4, 0x48535131u));
}

static hs_status parse_bytes(const uint8_t *p, size_t len, const char *want) {
  hs_quant *q = NULL;
  hs_error err = {0};
  hs_status st = hs_quant_parse(p, len, &q, &err);
  hs_quant_free(q);
  if (st != HS_OK && want != NULL && strstr(err.message, want) == NULL) {
    fprintf(stderr, "parse error '%s' does not name '%s'\n", err.message, want);
    return HS_ERR_INTERNAL;
  }
  return st;
}

static void test_corruption(void) {
  float small[300 * 8];
  for (size_t i = 0; i < 300 * 8; i++) small[i] = (float)(unit() * 4 - 2);
  for (int kind = HS_QUANT_SQ8; kind <= HS_QUANT_PQ; kind++) {
    hs_quant_params p = {.kind = (hs_quant_kind)kind, .pq_m = 2, .seed = 1};
    hs_quant *q = NULL;
    hs_error err = {0};
    CHECK_OK(hs_quant_train(small, 300, 8, HS_METRIC_L2, &p, &q, &err), &err);
    if (q == NULL) continue;
    hs_buf b;
    hs_buf_init(&b);
    CHECK_OK(hs_quant_serialize(q, &b, &err), &err);
    hs_quant_free(q);
    CHECK_EQ_INT(parse_bytes(b.data, b.len, NULL), HS_OK);
    size_t bad = 0;
    for (size_t len = 0; len < b.len; len++)
      bad += parse_bytes(b.data, len, NULL) != HS_ERR_CORRUPT;
    CHECK_EQ_INT(bad, 0);
    uint8_t *m = malloc(b.len + 1);
    memcpy(m, b.data, b.len);
    m[b.len] = 0;
    CHECK_EQ_INT(parse_bytes(m, b.len + 1, "bytes"), HS_ERR_CORRUPT); /* trailing byte */
    for (size_t i = 0; i < b.len; i += 1 + i / 7) {                   /* bit flips */
      m[i] ^= (uint8_t)(1u << (i % 8));
      bad += parse_bytes(m, b.len, NULL) != HS_ERR_CORRUPT;
      m[i] ^= (uint8_t)(1u << (i % 8));
    }
    CHECK_EQ_INT(bad, 0);
    struct {
      size_t off;
      uint32_t val;
      const char *names;
    } fields[] = {{0, 0x31515349, "magic"},
                  {4, 2, "version"},
                  {8, 0, "kind"},
                  {12, HS_METRIC_HAMMING, "metric"},
                  {16, 0, "dim"},
                  {16, 70000, "dim"},
                  {20, kind == HS_QUANT_SQ8 ? 0x7FC00000u : 3, kind == HS_QUANT_SQ8 ? "min" : "m"},
                  {kind == HS_QUANT_SQ8 ? 20 + 32 : 24, kind == HS_QUANT_SQ8 ? 0xBF800000u : 257,
                   kind == HS_QUANT_SQ8 ? "step" : "ksub"}};
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
      memcpy(m, b.data, b.len);
      hs_store_u32le(m + fields[f].off, fields[f].val);
      reseal(m, b.len);
      CHECK_EQ_INT(parse_bytes(m, b.len, fields[f].names), HS_ERR_CORRUPT);
    }
    if (kind == HS_QUANT_PQ) { /* a NaN centroid */
      memcpy(m, b.data, b.len);
      hs_store_u32le(m + 28 + 40, 0x7F800001u);
      reseal(m, b.len);
      CHECK_EQ_INT(parse_bytes(m, b.len, "centroid"), HS_ERR_CORRUPT);
    }
    free(m);
    hs_buf_free(&b);
  }
}

static void test_small_and_invalid(void) {
  hs_error err = {0};
  hs_quant *q = NULL;
  /* n < 256: ksub = n; any code byte still decodes and scores. */
  float ten[10 * 4];
  for (int i = 0; i < 40; i++) ten[i] = (float)i;
  hs_quant_params p = {.kind = HS_QUANT_PQ, .pq_m = 2};
  CHECK_OK(hs_quant_train(ten, 10, 4, HS_METRIC_IP, &p, &q, &err), &err);
  if (q != NULL) {
    uint8_t codes[20], odd[2] = {200, 255};
    hs_quant_encode(q, ten, 10, codes);
    for (int i = 0; i < 20; i++) CHECK(codes[i] < 10);
    float out[4];
    hs_quant_decode(q, odd, out);
    hs_quant_query *qq = NULL;
    CHECK_OK(hs_quant_query_make(q, ten, &qq, &err), &err);
    if (qq) CHECK(isfinite(hs_quant_distance(qq, odd)));
    /* Exact here: 10 points, 10 centroids per sub-space. */
    for (int i = 0; qq && i < 10; i++)
      CHECK(fabsf(hs_quant_distance(qq, codes + 2 * i) - hs_distance_ip_f32(ten, ten + 4 * i, 4)) <
            1e-3f);
    hs_quant_query_free(qq);
    hs_quant_free(q);
  }
  /* Default m. */
  static float wide[2 * 384];
  const size_t dims[] = {128, 384, 100, 7, 8};
  const uint32_t ms[] = {16, 48, 10, 1, 1};
  for (int i = 0; i < 5; i++) {
    p = (hs_quant_params){.kind = HS_QUANT_PQ};
    q = NULL;
    CHECK_OK(hs_quant_train(wide, 2, dims[i], HS_METRIC_L2, &p, &q, &err), &err);
    if (q) CHECK_EQ_INT(hs_quant_pq_m(q), ms[i]);
    hs_quant_free(q);
  }
  /* Refused. */
  p = (hs_quant_params){.kind = HS_QUANT_PQ, .pq_m = 3};
  CHECK_EQ_INT(hs_quant_train(ten, 10, 4, HS_METRIC_L2, &p, &q, &err), HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "divide") != NULL);
  p.kind = HS_QUANT_NONE;
  CHECK_EQ_INT(hs_quant_train(ten, 10, 4, HS_METRIC_L2, &p, &q, NULL), HS_ERR_INVALID_ARG);
  p.kind = HS_QUANT_SQ8;
  CHECK_EQ_INT(hs_quant_train(ten, 0, 4, HS_METRIC_L2, &p, &q, NULL), HS_ERR_INVALID_ARG);
  CHECK_EQ_INT(hs_quant_train(ten, 10, 4, HS_METRIC_HAMMING, &p, &q, NULL), HS_ERR_INVALID_ARG);
  ten[7] = NAN;
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_quant_train(ten, 10, 4, HS_METRIC_L2, &p, &q, &e2), HS_ERR_INVALID_ARG);
  CHECK(strstr(e2.message, "row 1 component 3") != NULL);
  /* SQ8 clamps values outside the trained range. */
  float two[8] = {0, 0, 0, 0, 1, 1, 1, 1}, far[4] = {-5, 0.5f, 9, 1};
  p = (hs_quant_params){.kind = HS_QUANT_SQ8};
  q = NULL;
  CHECK_OK(hs_quant_train(two, 2, 4, HS_METRIC_L2, &p, &q, &err), &err);
  if (q != NULL) {
    uint8_t c[4];
    hs_quant_encode(q, far, 1, c);
    CHECK(c[0] == 0 && (c[1] == 127 || c[1] == 128) && c[2] == 255 && c[3] == 255);
    hs_quant_free(q);
  }
}

int main(void) {
  make_data();
  const hs_metric metrics[] = {HS_METRIC_L2, HS_METRIC_IP, HS_METRIC_L1};
  for (int kind = HS_QUANT_SQ8; kind <= HS_QUANT_PQ; kind++)
    for (size_t mi = 0; mi < 3; mi++) check_quantizer((hs_quant_kind)kind, metrics[mi]);
  test_corruption();
  test_small_and_invalid();
  return hs_test_finish("test_quant");
}
