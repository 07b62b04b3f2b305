/*
 * test_kmeans.c — k-means against outside facts: on well-separated
 * synthetic clusters the trained centroids are the generator's centres
 * (Euclidean and spherical); the objective never increases; assignment is
 * the brute-force argmin over hs_distance_f32 (every float metric, packed
 * and unpacked paths, k around the block and stack sizes); the block
 * kernels equal the distance functions; results do not depend on the
 * thread count; edge cases (k > n, duplicates, dim 1, n = 1, bad input).
 */
#include <math.h>

#include "common/common.h"
#include "hs_test.h"
#include "index/vector/kmeans.h"
#include "index/vector/vq_block.h"

static uint64_t rng = 7;

static double unit(void) {
  return (double)(hs_test_rand(&rng) >> 11) * 0x1.0p-53;
}
static float uniform(float lo, float hi) {
  return lo + (hi - lo) * (float)unit();
}
static float gauss(void) {
  double u = unit(), v = unit();
  return (float)(sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v));
}

/* n points around `c` centres (dim each), sigma noise; centres in [-10,10]. */
static void clusters(size_t n, size_t dim, uint32_t c, float sigma, float *centres, float *pts,
                     uint32_t *label) {
  for (size_t i = 0; i < c * dim; i++) centres[i] = uniform(-10, 10);
  for (size_t i = 0; i < n; i++) {
    uint32_t l = (uint32_t)(i % c);
    if (label) label[i] = l;
    for (size_t d = 0; d < dim; d++) pts[i * dim + d] = centres[l * dim + d] + sigma * gauss();
  }
}

static float l2(const float *a, const float *b, size_t dim) {
  double s = 0;
  for (size_t d = 0; d < dim; d++) s += ((double)a[d] - b[d]) * ((double)a[d] - b[d]);
  return (float)sqrt(s);
}

/* Every true centre has its own trained centroid within `tol` (L2). */
static int recovers(const float *truth, const float *got, uint32_t k, size_t dim, float tol) {
  int used[64] = {0}, ok = 1;
  for (uint32_t i = 0; i < k; i++) {
    uint32_t best = 0;
    float bd = INFINITY;
    for (uint32_t j = 0; j < k; j++) {
      float d = l2(truth + i * dim, got + j * dim, dim);
      if (d < bd) bd = d, best = j;
    }
    if (bd > tol || used[best]++) {
      fprintf(stderr, "centre %u: nearest centroid %u at %g (tol %g, used %d)\n", i, best, bd, tol,
              used[best]);
      ok = 0;
    }
  }
  return ok;
}

static void test_recovers_centres(void) {
  enum { C = 8, DIM = 16, N = 4000 };
  static float centres[C * DIM], pts[N * DIM];
  for (uint64_t seed = 1; seed <= 4; seed++) {
    clusters(N, DIM, C, 0.2f, centres, pts, NULL);
    for (uint32_t threads = 1; threads <= 2; threads++) {
      hs_kmeans_params p = {.k = C, .seed = seed, .threads = threads, .metric = HS_METRIC_L2};
      float *cent = NULL;
      uint32_t k = 0;
      hs_error err = {0};
      CHECK_OK(hs_kmeans_train(pts, N, DIM, &p, &cent, &k, &err), &err);
      CHECK_EQ_INT(k, C);
      /* The mean of 500 points with sigma 0.2 per component is off by about
       * 0.2 / sqrt(500) * sqrt(16) = 0.036. */
      if (cent) CHECK(recovers(centres, cent, C, DIM, 0.1f));
      hs_free(cent);
    }
  }
  /* Spherical: clusters are directions; points have random lengths. */
  for (uint64_t seed = 1; seed <= 3; seed++) {
    for (size_t i = 0; i < C; i++) {
      float *c = centres + i * DIM;
      double s = 0;
      for (size_t d = 0; d < DIM; d++) c[d] = gauss(), s += (double)c[d] * c[d];
      for (size_t d = 0; d < DIM; d++) c[d] /= (float)sqrt(s);
    }
    for (size_t i = 0; i < N; i++) {
      float len = uniform(0.5f, 3.0f);
      for (size_t d = 0; d < DIM; d++)
        pts[i * DIM + d] = len * (centres[(i % C) * DIM + d] + 0.02f * gauss());
    }
    for (int metric = HS_METRIC_IP; metric <= HS_METRIC_COSINE; metric++) {
      hs_kmeans_params p = {.k = C, .seed = seed, .metric = (hs_metric)metric};
      float *cent = NULL;
      uint32_t k = 0;
      hs_error err = {0};
      CHECK_OK(hs_kmeans_train(pts, N, DIM, &p, &cent, &k, &err), &err);
      if (cent == NULL) continue;
      for (uint32_t j = 0; j < k; j++) /* unit length */
        CHECK(fabs(sqrt(-hs_distance_ip_f32(cent + j * DIM, cent + j * DIM, DIM)) - 1) < 1e-4);
      CHECK(recovers(centres, cent, C, DIM, 0.05f));
      hs_free(cent);
    }
  }
}

static void test_inertia_monotone(void) {
  enum { N = 3000, DIM = 8 };
  static float pts[N * DIM];
  for (size_t i = 0; i < N * DIM; i++) pts[i] = uniform(-1, 1) + (i % 3 == 0 ? 2.0f : 0.0f);
  const hs_metric metrics[] = {HS_METRIC_L2, HS_METRIC_L2SQ, HS_METRIC_IP, HS_METRIC_COSINE};
  for (size_t mi = 0; mi < 4; mi++) {
    hs_kmeans_stats st;
    hs_kmeans_params p = {
        .k = 40, .iterations = 30, .seed = 3, .metric = metrics[mi], .stats = &st};
    float *cent = NULL;
    uint32_t k = 0;
    hs_error err = {0};
    CHECK_OK(hs_kmeans_train(pts, N, DIM, &p, &cent, &k, &err), &err);
    hs_free(cent);
    CHECK(st.iterations >= 2);
    CHECK_EQ_INT(st.sample, N < 256 * 40 ? N : 256 * 40);
    for (uint32_t i = 1; i < st.iterations && i < HS_KMEANS_TRACE_MAX; i++) {
      double a = st.inertia[i - 1], b = st.inertia[i];
      if (!(b <= a + 1e-5 * fabs(a))) {
        fprintf(stderr, "%s: inertia rose at %u: %.9g -> %.9g\n", hs_metric_name(metrics[mi]), i, a,
                b);
        CHECK(b <= a + 1e-5 * fabs(a));
      }
    }
    /* Lloyd improves on the seeding by a clear margin on such data. */
    CHECK(st.inertia[st.iterations - 1] < st.inertia[0] - 1e-3 * fabs(st.inertia[0]));
  }
}

static void check_assign(size_t n, size_t dim, uint32_t k, hs_metric metric, uint32_t threads) {
  float *pts = hs_malloc(n * dim * sizeof(float)), *cent = hs_malloc(k * dim * sizeof(float));
  float *dist = hs_malloc(n * sizeof(float)), *dist2 = hs_malloc(n * sizeof(float));
  uint32_t *a = hs_malloc(n * sizeof(uint32_t)), *a2 = hs_malloc(n * sizeof(uint32_t));
  for (size_t i = 0; i < n * dim; i++) pts[i] = uniform(-1, 1);
  for (size_t i = 0; i < k * dim; i++) cent[i] = uniform(-1, 1);
  hs_error err = {0};
  CHECK_OK(hs_kmeans_assign(pts, n, dim, cent, k, metric, threads, a, dist, &err), &err);
  size_t bad = 0, mismatched_index = 0;
  for (size_t i = 0; i < n; i++) {
    float best = INFINITY, second = INFINITY, mine = NAN;
    uint32_t arg = 0;
    for (uint32_t j = 0; j < k; j++) {
      float d;
      hs_distance_f32(metric, pts + i * dim, cent + j * dim, dim, &d, NULL);
      if (j == a[i]) mine = d;
      if (d < best)
        second = best, best = d, arg = j;
      else if (d < second)
        second = d;
    }
    float tol = 1e-5f * (fabsf(best) + 1.0f) * (float)dim;
    if (a[i] >= k || !(mine <= best + tol) || !(fabsf(dist[i] - mine) <= tol)) bad++;
    if (second - best > 10 * tol && a[i] != arg) mismatched_index++;
  }
  if (bad || mismatched_index)
    fprintf(stderr, "assign n=%zu dim=%zu k=%u %s: %zu not nearest, %zu wrong index\n", n, dim, k,
            hs_metric_name(metric), bad, mismatched_index);
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(mismatched_index, 0);
  /* The unpacked fallback (one kernel call per pair) agrees. */
  setenv("HS_KMEANS_NOPACK", "1", 1);
  CHECK_OK(hs_kmeans_assign(pts, n, dim, cent, k, metric, threads, a2, dist2, &err), &err);
  unsetenv("HS_KMEANS_NOPACK");
  size_t differ = 0;
  for (size_t i = 0; i < n; i++) differ += a[i] != a2[i];
  if (differ > n / 1000 && !(dim == 1 && metric == HS_METRIC_COSINE))
    fprintf(stderr, "packed/unpacked differ: n=%zu dim=%zu k=%u %s: %zu\n", n, dim, k,
            hs_metric_name(metric), differ);
  /* Only float near-ties may differ; in 1-d every same-sign centroid has
   * cosine exactly +-1, so there the winner among ties is rounding's. */
  if (!(dim == 1 && metric == HS_METRIC_COSINE)) CHECK(differ <= n / 1000);
  hs_free(pts);
  hs_free(cent);
  hs_free(dist);
  hs_free(dist2);
  hs_free(a);
  hs_free(a2);
}

static void test_assign_brute_force(void) {
  const hs_metric metrics[] = {HS_METRIC_L2, HS_METRIC_L2SQ, HS_METRIC_IP, HS_METRIC_COSINE,
                               HS_METRIC_L1};
  const size_t dims[] = {1, 3, 8, 33, 128};
  const uint32_t ks[] = {1, 5, 16, 17, 100, 1100};
  for (size_t mi = 0; mi < 5; mi++)
    for (size_t di = 0; di < 5; di++)
      for (size_t ki = 0; ki < 6; ki++) {
        size_t n = ks[ki] > 500 || dims[di] > 64 ? 300 : 1200;
        check_assign(n, dims[di], ks[ki], metrics[mi], ki % 2 ? 2 : 1);
      }
  /* A zero point under cosine: distance NaN as pgvector, index in range. */
  float zero[4] = {0}, cent[8] = {1, 0, 0, 0, 0, 1, 0, 0}, d;
  uint32_t a = 99;
  hs_error err = {0};
  CHECK_OK(hs_kmeans_assign(zero, 1, 4, cent, 2, HS_METRIC_COSINE, 1, &a, &d, &err), &err);
  CHECK(a < 2 && isnan(d));
  /* Bad input. */
  CHECK_EQ_INT(hs_kmeans_assign(zero, 1, 4, cent, 0, HS_METRIC_L2, 1, &a, &d, &err),
               HS_ERR_INVALID_ARG);
  CHECK_EQ_INT(hs_kmeans_assign(zero, 1, 4, cent, 2, HS_METRIC_HAMMING, 1, &a, &d, &err),
               HS_ERR_INVALID_ARG);
}

static void test_block_kernels(void) {
  static float rows[70 * 40], x[40], out[80], packed[80 * 40];
  for (size_t dim = 1; dim <= 40; dim += 13) {
    uint32_t k = 70;
    for (size_t i = 0; i < k * dim; i++) rows[i] = uniform(-3, 3);
    for (size_t d = 0; d < dim; d++) x[d] = uniform(-3, 3);
    CHECK(hs_vq_packed_floats(k, dim) == 80 * dim);
    hs_vq_pack(rows, k, dim, packed);
    for (int op = 0; op < 3; op++) {
      hs_vq_all((hs_vq_op)op, packed, k, dim, x, out);
      for (uint32_t j = 0; j < k; j++) {
        const float *r = rows + j * dim;
        double want = op == HS_VQ_DOT  ? -hs_distance_ip_f32(x, r, dim)
                      : op == HS_VQ_L1 ? hs_distance_l1_f32(x, r, dim)
                                       : hs_distance_l2sq_f32(x, r, dim);
        CHECK(fabs(out[j] - want) <= 1e-5 * (fabs(want) + 1) * (double)dim);
      }
      /* argmin over every prefix length (full and partial last blocks),
       * with a tie planted: the lower index must win. */
      for (uint32_t kk = 1; kk <= k; kk += 1 + kk / 4) {
        float best, want_best = INFINITY;
        uint32_t want = 0;
        for (uint32_t j = 0; j < kk; j++) {
          float v = op == HS_VQ_DOT ? -out[j] : out[j];
          if (v < want_best) want_best = v, want = j;
        }
        uint32_t got = hs_vq_argmin((hs_vq_op)op, packed, kk, dim, x, &best);
        CHECK_EQ_INT(got, want);
        CHECK(best == want_best);
      }
    }
    /* Duplicate rows: the first copy wins. */
    for (size_t d = 0; d < dim; d++) rows[50 * dim + d] = rows[20 * dim + d] = x[d];
    hs_vq_pack(rows, k, dim, packed);
    float best;
    CHECK_EQ_INT(hs_vq_argmin(HS_VQ_L2SQ, packed, k, dim, x, &best), 20);
    CHECK(best == 0);
  }
  /* All-NaN scores: row 0 and +inf. */
  float nanx[3] = {NAN, NAN, NAN}, best;
  hs_vq_pack(rows, 5, 3, packed);
  CHECK_EQ_INT(hs_vq_argmin(HS_VQ_L2SQ, packed, 5, 3, nanx, &best), 0);
  CHECK(best == INFINITY);
}

static void test_thread_independent(void) {
  enum { N = 6000, DIM = 16, C = 24 };
  static float centres[C * DIM], pts[N * DIM];
  clusters(N, DIM, C, 1.5f, centres, pts, NULL);
  float *ref = NULL;
  for (uint32_t threads = 1; threads <= 3; threads++) {
    hs_kmeans_params p = {
        .k = C, .seed = 11, .threads = threads, .metric = HS_METRIC_L2, .sample = 5000};
    float *cent = NULL;
    uint32_t k = 0;
    hs_error err = {0};
    CHECK_OK(hs_kmeans_train(pts, N, DIM, &p, &cent, &k, &err), &err);
    if (ref == NULL) {
      ref = cent;
    } else {
      CHECK(cent != NULL && memcmp(ref, cent, sizeof(float) * C * DIM) == 0);
      hs_free(cent);
    }
  }
  hs_free(ref);
}

static void test_edge_cases(void) {
  hs_error err = {0};
  float *cent = NULL;
  uint32_t k = 0;
  /* k > n: one centroid per point. */
  float five[5 * 2] = {0, 0, 10, 0, 0, 10, 10, 10, 5, 5};
  hs_kmeans_params p = {.k = 10, .seed = 1, .metric = HS_METRIC_L2};
  CHECK_OK(hs_kmeans_train(five, 5, 2, &p, &cent, &k, &err), &err);
  CHECK_EQ_INT(k, 5);
  if (cent) {
    for (int i = 0; i < 5; i++) {
      int found = 0;
      for (uint32_t j = 0; j < k; j++) found += l2(five + 2 * i, cent + 2 * j, 2) == 0;
      CHECK_EQ_INT(found, 1);
    }
  }
  hs_free(cent);
  /* Duplicates: every centroid is the one value. */
  static float dup[200 * 3];
  for (int i = 0; i < 600; i++) dup[i] = (float)(i % 3) + 0.5f;
  p = (hs_kmeans_params){.k = 4, .seed = 2, .metric = HS_METRIC_L2};
  cent = NULL;
  CHECK_OK(hs_kmeans_train(dup, 200, 3, &p, &cent, &k, &err), &err);
  CHECK_EQ_INT(k, 4);
  for (uint32_t j = 0; cent && j < k; j++) CHECK(l2(cent + 3 * j, dup, 3) == 0);
  hs_free(cent);
  /* dim 1: three groups on a line. */
  static float line[900];
  for (int i = 0; i < 900; i++) line[i] = (float)(i % 3) * 100.0f + uniform(-1, 1);
  p = (hs_kmeans_params){.k = 3, .seed = 3, .metric = HS_METRIC_L2};
  cent = NULL;
  CHECK_OK(hs_kmeans_train(line, 900, 1, &p, &cent, &k, &err), &err);
  if (cent) {
    float truth[3] = {0, 100, 200};
    CHECK(recovers(truth, cent, 3, 1, 0.3f));
  }
  hs_free(cent);
  /* n = 1. */
  float one[4] = {1, 2, 3, 4};
  p = (hs_kmeans_params){.k = 3, .metric = HS_METRIC_COSINE};
  cent = NULL;
  CHECK_OK(hs_kmeans_train(one, 1, 4, &p, &cent, &k, &err), &err);
  CHECK_EQ_INT(k, 1);
  if (cent) CHECK(fabsf(hs_distance_cosine_f32(cent, one, 4)) < 1e-6f);
  hs_free(cent);
  /* Refused input, with a message. */
  p = (hs_kmeans_params){.k = 0};
  CHECK_EQ_INT(hs_kmeans_train(one, 1, 4, &p, &cent, &k, &err), HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "k > 0") != NULL);
  p.k = 2;
  CHECK_EQ_INT(hs_kmeans_train(one, 0, 4, &p, &cent, &k, NULL), HS_ERR_INVALID_ARG);
  CHECK_EQ_INT(hs_kmeans_train(one, 1, 0, &p, &cent, &k, NULL), HS_ERR_INVALID_ARG);
  p.metric = HS_METRIC_JACCARD;
  CHECK_EQ_INT(hs_kmeans_train(one, 1, 4, &p, &cent, &k, NULL), HS_ERR_INVALID_ARG);
}

int main(void) {
  test_block_kernels();
  test_assign_brute_force();
  test_recovers_centres();
  test_inertia_monotone();
  test_thread_independent();
  test_edge_cases();
  return hs_test_finish("test_kmeans");
}
