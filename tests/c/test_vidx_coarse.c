/*
 * test_vidx_coarse.c — the coarse code scan (src/index/vector README.md
 * "Coarse code scan"): the 4-bit codes decode to the SQ8 code's high nibble,
 * the vector kernel gives the scalar reference's distances on every
 * dimension 1..100 (padding, tails) and metric form; a filtered exact plan
 * forced to the coarse scan (HS_VIDX_PLAN=coarse) returns exactly
 * min(k, allowed) distinct allowed rows in order with their exact
 * distances, and recall@k >= 0.95 against float brute force, on random and
 * clustered allow-sets, roaring and row words, for L2, L2SQ, cosine and L1;
 * below its row minimum the scan stays exact.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "hs_test.h"
#include "hs_vidx_oracle.h"
#include "index/vector/quant.h"
#include "index/vector/vidx.h"

/* The kernel against the scalar reference, and the nibbles against the SQ8
 * codes they come from. */
static void check_kernel(void) {
  const hs_metric ms[] = {HS_METRIC_L2, HS_METRIC_COSINE, HS_METRIC_L1};
  uint64_t st = 5;
  for (uint32_t dim = 1; dim <= 100; dim += (dim < 40 ? 1 : 7)) {
    for (size_t mi = 0; mi < 3; mi++) {
      const size_t n = 64;
      float *x = malloc(n * dim * sizeof *x), q[100];
      for (size_t i = 0; i < n * dim; i++) x[i] = (float)gauss(&st);
      for (uint32_t j = 0; j < dim; j++) q[j] = (float)gauss(&st);
      hs_quant_params p = {.kind = HS_QUANT_SQ8, .threads = 1};
      hs_quant *qz = NULL;
      hs_error err = {0};
      CHECK_OK(hs_quant_train(x, n, dim, ms[mi], &p, &qz, &err), &err);
      if (qz == NULL) {
        free(x);
        continue;
      }
      const size_t rs = hs_quant_sq4_size(qz);
      CHECK_EQ_INT(rs, 16 * ((dim + 31) / 32));
      uint8_t *c8 = malloc(n * dim), *c4 = malloc(n * rs);
      hs_quant_encode(qz, x, n, c8);
      hs_quant_sq4_derive(qz, c8, n, c4);
      for (size_t i = 0; i < n; i++)
        for (uint32_t d = 0; d < dim; d++) {
          uint8_t b = c4[i * rs + 16 * (d / 32) + (d % 16)];
          CHECK_EQ_INT((d % 32) < 16 ? b & 15 : b >> 4, c8[i * dim + d] >> 4);
        }
      hs_quant_query *qq = NULL;
      CHECK_OK(hs_quant_query_make(qz, q, &qq, &err), &err);
      CHECK_OK(hs_quant_query_sq4(qq, &err), &err);
      uint32_t ids[64];
      float out[64];
      for (uint32_t i = 0; i < 63; i++) ids[i] = (uint32_t)(hs_test_rand(&st) % n);
      hs_quant_sq4_gather(qq, c4, ids, 63, out); /* 63: a tail of three */
      for (uint32_t i = 0; i < 63; i++) {
        float ref = hs_quant_sq4_distance_ref(qq, c4 + ids[i] * rs);
        CHECK(fabsf(out[i] - ref) <= 1e-4f * (1 + fabsf(ref)));
        /* it is the distance to the row the nibbles decode to: a nibble v
         * stands for the mean of SQ8 codes 16 v + 7 and 16 v + 8 */
        uint8_t lo[100], hi[100];
        float dl[100], dh[100];
        for (uint32_t d = 0; d < dim; d++) {
          uint8_t nib = (uint8_t)(c8[ids[i] * dim + d] >> 4);
          lo[d] = (uint8_t)(16 * nib + 7);
          hi[d] = (uint8_t)(16 * nib + 8);
        }
        hs_quant_decode(qz, lo, dl);
        hs_quant_decode(qz, hi, dh);
        double want = 0;
        for (uint32_t d = 0; d < dim; d++) {
          double v = 0.5 * ((double)dl[d] + dh[d]), t = q[d] - v;
          want += ms[mi] == HS_METRIC_COSINE ? -q[d] * v : ms[mi] == HS_METRIC_L1 ? fabs(t) : t * t;
        }
        CHECK(fabs(ref - want) <= 1e-3 * (1 + fabs(want)));
      }
      hs_quant_query_free(qq);
      hs_quant_free(qz);
      free(c8);
      free(c4);
      free(x);
    }
  }
}

static void check_scan(hs_metric m, size_t n, size_t dim, uint64_t seed) {
  float *x = malloc(n * dim * sizeof *x);
  uint64_t st = seed;
  float centers[40][64];
  for (int c = 0; c < 40; c++)
    for (size_t j = 0; j < dim; j++) centers[c][j] = (float)gauss(&st);
  for (size_t i = 0; i < n; i++) {
    int c = (int)(hs_test_rand(&st) % 40);
    for (size_t j = 0; j < dim; j++) x[i * dim + j] = centers[c][j] + 0.3f * (float)gauss(&st);
  }
  hs_vidx_params p;
  hs_vidx_params_default(&p);
  p.metric = m;
  p.m = 8;
  p.ef_construction = 32;
  p.threads = 1;
  hs_error err = {0};
  hs_buf b;
  hs_buf_init(&b);
  CHECK_OK(hs_vidx_build(x, n, dim, NULL, &p, &b, &err), &err);
  hs_source *src = NULL;
  hs_vidx *v = NULL;
  CHECK_OK(hs_source_open_memory(b.data, b.len, "mem", &src, &err), &err);
  if (src != NULL) CHECK_OK(hs_vidx_open(src, 0, b.len, &v, &err), &err);
  hs_source_unref(src);
  const uint32_t ks[] = {1, 10, 100};
  const double sels[] = {0.05, 0.2, 0.6};
  const size_t nw = (n + 63) / 64;
  uint64_t *words = malloc(nw * sizeof *words);
  hs_vidx_hit *h1 = malloc(100 * sizeof *h1), *h2 = malloc(100 * sizeof *h2),
              *hb = malloc(100 * sizeof *hb);
  double found = 0, wanted = 0;
  for (size_t si = 0; v != NULL && si < sizeof sels / sizeof *sels; si++) {
    for (int clustered = 0; clustered < 2; clustered++) {
      roaring_bitmap_t *r = roaring_bitmap_create();
      memset(words, 0, nw * sizeof *words);
      for (size_t i = 0; i < n; i++) {
        bool on = clustered ? i >= n / 7 && i < n / 7 + (size_t)(sels[si] * (double)n)
                            : (double)(hs_test_rand(&st) % 1000000) < sels[si] * 1e6;
        if (!on) continue;
        roaring_bitmap_add(r, (uint32_t)i);
        words[i >> 6] |= 1ull << (i & 63);
      }
      uint64_t c = roaring_bitmap_get_cardinality(r);
      for (int qi = 0; qi < 9; qi++) {
        float q[64];
        const float *base = x + (hs_test_rand(&st) % n) * dim;
        for (size_t j = 0; j < dim; j++) q[j] = base[j] + 0.3f * (float)gauss(&st);
        uint32_t k = ks[qi % 3], n1 = 0, n2 = 0;
        CHECK_OK(hs_vidx_search(v, q, k, NULL, r, h1, &n1, &err), &err);
        CHECK_OK(hs_vidx_search_bits(v, q, k, NULL, words, nw, h2, &n2, &err), &err);
        uint32_t nb = brute(m, x, dim, q, r, k, hb);
        CHECK_EQ_INT(n1, c < k ? c : k);
        CHECK(n1 == n2 && n1 == nb);
        for (uint32_t i = 0; i < n1 && i < n2; i++) {
          CHECK(h1[i].row == h2[i].row && h1[i].distance == h2[i].distance);
          CHECK(roaring_bitmap_contains(r, h1[i].row));
          CHECK(i == 0 || h1[i - 1].row != h1[i].row);
          CHECK(i == 0 || h1[i - 1].distance <= h1[i].distance);
          float d = NAN; /* the exact distance of the row reported */
          hs_distance_f32(m, q, x + (size_t)h1[i].row * dim, dim, &d, NULL);
          CHECK(fabsf(h1[i].distance - d) <= 1e-4f * (1 + fabsf(d)));
        }
        for (uint32_t i = 0; i < nb; i++) { /* recall against the float top-k */
          bool hit = false;
          for (uint32_t j = 0; j < n1 && !hit; j++) hit = h1[j].row == hb[i].row;
          found += hit;
        }
        wanted += nb;
      }
      roaring_bitmap_free(r);
    }
  }
  CHECK(wanted > 0 && found / wanted >= 0.95);
  /* below the coarse scan's minimum the scan is exact: brute force's answers */
  if (v != NULL) {
    roaring_bitmap_t *r = roaring_bitmap_create();
    for (size_t i = 0; i < n; i += 16) roaring_bitmap_add(r, (uint32_t)i); /* < 2048 rows */
    float q[64];
    for (size_t j = 0; j < dim; j++) q[j] = x[j] + 0.3f * (float)gauss(&st);
    uint32_t n1 = 0, nb = brute(m, x, dim, q, r, 10, hb);
    CHECK_OK(hs_vidx_search(v, q, 10, NULL, r, h1, &n1, &err), &err);
    CHECK(n1 == nb);
    for (uint32_t i = 0; i < n1 && i < nb; i++)
      CHECK(fabsf(h1[i].distance - hb[i].distance) <= 1e-4f * (1 + fabsf(hb[i].distance)));
    roaring_bitmap_free(r);
  }
  hs_vidx_free(v);
  hs_buf_free(&b);
  free(words);
  free(h1);
  free(h2);
  free(hb);
  free(x);
}

int main(void) {
  setenv("HS_VIDX_PLAN", "coarse", 1); /* read once, at the first search */
  check_kernel();
  check_scan(HS_METRIC_L2, 20000, 32, 1);
  check_scan(HS_METRIC_L2SQ, 20000, 24, 2);
  check_scan(HS_METRIC_COSINE, 20000, 48, 3);
  check_scan(HS_METRIC_L1, 20000, 16, 4);
  return hs_test_finish("test_vidx_coarse");
}
