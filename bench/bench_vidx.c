/*
 * bench_vidx.c — the vector index on clustered synthetic data: build time,
 * then recall@k against brute force and single-thread QPS for a list of
 * ef_search values. Used to choose the defaults in
 * src/index/vector/README.md.
 *
 *   bench_vidx [n=20000] [dim=32] [clusters=50] [queries=200] [metric=l2]
 *              [m=16] [ef_construction=100] [threads=0] [noise=0.35]
 *
 * Prints one line per ef: "ef=.. recall=.. qps=..".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "index/vector/vidx.h"

static uint64_t rnd(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double gauss(uint64_t *st) {
  double u = ((double)(rnd(st) >> 11) + 1.0) / 9007199254740993.0;
  double v = (double)(rnd(st) >> 11) / 9007199254740992.0;
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

typedef struct pair {
  float d;
  uint32_t i;
} pair;

static int pair_cmp(const void *a, const void *b) {
  const pair *x = a, *y = b;
  return x->d < y->d ? -1 : (x->d > y->d ? 1 : (x->i > y->i) - (x->i < y->i));
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
  size_t dim = argc > 2 ? strtoul(argv[2], NULL, 10) : 32;
  size_t clusters = argc > 3 ? strtoul(argv[3], NULL, 10) : 50;
  size_t nq = argc > 4 ? strtoul(argv[4], NULL, 10) : 200;
  hs_vidx_params p;
  hs_vidx_params_default(&p);
  if (argc > 5 && hs_metric_parse(argv[5], &p.metric, NULL) != HS_OK) return 2;
  if (argc > 6) p.m = (uint32_t)strtoul(argv[6], NULL, 10);
  if (argc > 7) p.ef_construction = (uint32_t)strtoul(argv[7], NULL, 10);
  if (argc > 8) p.threads = (uint32_t)strtoul(argv[8], NULL, 10);
  double noise = argc > 9 ? atof(argv[9]) : 0.35;
  const uint32_t k = 10;

  uint64_t st = 1;
  float *c = malloc(clusters * dim * sizeof *c), *x = malloc(n * dim * sizeof *x);
  float *q = malloc(nq * dim * sizeof *q);
  for (size_t i = 0; i < clusters * dim; i++) c[i] = (float)gauss(&st);
  for (size_t i = 0; i < n; i++) {
    size_t cl = rnd(&st) % clusters;
    for (size_t j = 0; j < dim; j++) x[i * dim + j] = c[cl * dim + j] + (float)(noise * gauss(&st));
  }
  for (size_t i = 0; i < nq; i++) {
    size_t cl = rnd(&st) % clusters;
    for (size_t j = 0; j < dim; j++) q[i * dim + j] = c[cl * dim + j] + (float)(noise * gauss(&st));
  }
  /* ground truth */
  uint32_t *truth = malloc(nq * k * sizeof *truth);
  pair *all = malloc(n * sizeof *all);
  for (size_t qi = 0; qi < nq; qi++) {
    for (size_t i = 0; i < n; i++) {
      hs_distance_f32(p.metric, q + qi * dim, x + i * dim, dim, &all[i].d, NULL);
      all[i].i = (uint32_t)i;
    }
    qsort(all, n, sizeof *all, pair_cmp);
    for (uint32_t j = 0; j < k; j++) truth[qi * k + j] = all[j].i;
  }
  free(all);

  hs_buf b;
  hs_buf_init(&b);
  hs_error err = {0};
  int64_t t0 = hs_now_ns();
  if (hs_vidx_build(x, n, dim, NULL, &p, &b, &err) != HS_OK) {
    fprintf(stderr, "build: %s\n", err.message);
    return 1;
  }
  double build_s = (hs_now_ns() - t0) / 1e9;
  hs_source *src;
  hs_vidx *v;
  hs_source_open_memory(b.data, b.len, "bench", &src, NULL);
  t0 = hs_now_ns();
  if (hs_vidx_open(src, 0, b.len, &v, &err) != HS_OK) {
    fprintf(stderr, "open: %s\n", err.message);
    return 1;
  }
  double open_ms = (hs_now_ns() - t0) / 1e6;
  printf(
      "n=%zu dim=%zu clusters=%zu metric=%s m=%u ef_construction=%u threads=%u: build %.2fs, "
      "%.1f MB, open %.1f ms\n",
      n, dim, clusters, hs_metric_name(p.metric), p.m, p.ef_construction, p.threads, build_s,
      b.len / 1e6, open_ms);
  const uint32_t efs[] = {10, 16, 24, 32, 40, 48, 64, 96, 128, 200};
  hs_vidx_hit hits[10];
  for (size_t e = 0; e < sizeof efs / sizeof efs[0]; e++) {
    hs_vidx_search_params sp = {.ef_search = efs[e]};
    size_t same = 0;
    t0 = hs_now_ns();
    for (size_t qi = 0; qi < nq; qi++) {
      uint32_t nh;
      hs_vidx_search(v, q + qi * dim, k, &sp, NULL, hits, &nh, NULL);
      for (uint32_t a = 0; a < nh; a++)
        for (uint32_t t = 0; t < k; t++) same += hits[a].row == truth[qi * k + t];
    }
    double s = (hs_now_ns() - t0) / 1e9;
    printf("ef=%-4u recall=%.4f qps=%.0f\n", efs[e], (double)same / (nq * k), nq / s);
  }
  hs_vidx_free(v);
  hs_source_unref(src);
  hs_buf_free(&b);
  free(c);
  free(x);
  free(q);
  free(truth);
  return 0;
}
