/*
 * bench_kmeans.c — k-means training / assignment and SQ8 / PQ throughput on
 * clustered synthetic data (the numbers in src/index/vector/README.md).
 *
 *   build/<dir>/bench_kmeans [n] [dim] [k] [threads]
 *   HS_KMEANS_NOPACK=1 build/<dir>/bench_kmeans ...   # one kernel call per pair
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/common.h"
#include "index/vector/kmeans.h"
#include "index/vector/quant.h"

static uint64_t state = 1;
static double unit(void) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static double secs(int64_t t0) {
  return (double)(hs_now_ns() - t0) / 1e9;
}

/* CPU seconds of this thread: on a shared box wall time measures the load. */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000;
  size_t dim = argc > 2 ? strtoull(argv[2], NULL, 10) : 128;
  uint32_t k = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 512;
  uint32_t threads = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 0;
  size_t c = 1000;
  float *centres = malloc(c * dim * sizeof(float)), *x = malloc(n * dim * sizeof(float));
  for (size_t i = 0; i < c * dim; i++) centres[i] = (float)(unit() * 2 - 1);
  for (size_t i = 0; i < n; i++)
    for (size_t d = 0; d < dim; d++)
      x[i * dim + d] = centres[(i % c) * dim + d] + (float)(unit() - 0.5) * 0.5f;
  hs_error err = {0};
  hs_kmeans_stats st;
  hs_kmeans_params p = {
      .k = k, .seed = 1, .threads = threads, .metric = HS_METRIC_L2, .stats = &st};
  float *cent;
  uint32_t kk;
  int64_t t0 = hs_now_ns();
  if (hs_kmeans_train(x, n, dim, &p, &cent, &kk, &err) != HS_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  double tt = secs(t0);
  printf("kmeans train n=%zu dim=%zu k=%u sample=%u: %.2f s, %u iterations (%.3f s/iter)\n", n, dim,
         kk, st.sample, tt, st.iterations, tt / (st.iterations + 1));
  uint32_t *a = malloc(n * sizeof(uint32_t));
  t0 = hs_now_ns();
  hs_kmeans_assign(x, n, dim, cent, kk, HS_METRIC_L2, threads, a, NULL, &err);
  tt = secs(t0);
  printf("kmeans assign n=%zu k=%u: %.2f s (%.1f GFLOP/s)\n", n, kk, tt,
         2.0 * (double)n * kk * dim / tt / 1e9);
  for (int kind = HS_QUANT_SQ8; kind <= HS_QUANT_PQ; kind++) {
    hs_quant_params qp = {.kind = (hs_quant_kind)kind, .seed = 1, .threads = threads};
    hs_quant *q;
    t0 = hs_now_ns();
    if (hs_quant_train(x, n, dim, HS_METRIC_L2, &qp, &q, &err) != HS_OK) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    double ttrain = secs(t0);
    size_t cs = hs_quant_code_size(q);
    uint8_t *codes = malloc(n * cs);
    t0 = hs_now_ns();
    hs_quant_encode(q, x, n, codes);
    double tenc = secs(t0);
    hs_quant_query *qq;
    hs_quant_query_make(q, x, &qq, &err);
    float *out = malloc(n * sizeof(float));
    hs_quant_distance_batch(qq, codes, n, out); /* warm */
    double c0 = cpu_now();
    for (int r = 0; r < 5; r++) hs_quant_distance_batch(qq, codes, n, out);
    double tdist = (cpu_now() - c0) / 5;
    c0 = cpu_now();
    for (int r = 0; r < 1000; r++) {
      hs_quant_query_free(qq);
      hs_quant_query_make(q, x + (size_t)r * dim, &qq, &err);
    }
    double tq = (cpu_now() - c0) / 1000;
    printf(
        "%s: train %.2f s, encode %.2f s (%.0f vec/s), distance %.1f ns/code, query table %.1f "
        "us, %zu B/code\n",
        kind == HS_QUANT_SQ8 ? "SQ8" : "PQ", ttrain, tenc, n / tenc, tdist / n * 1e9, tq * 1e6, cs);
    hs_quant_query_free(qq);
    hs_quant_free(q);
    free(codes);
    free(out);
  }
  hs_free(cent);
  free(a);
  free(x);
  free(centres);
  return 0;
}
