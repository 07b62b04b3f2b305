/*
 * test_vidx_scan.c — exact scans over SQ8 scan codes (src/index/vector
 * README.md "Scan codes"): a float32 index built with scan codes answers
 * every exact scan (filtered, forced with exact_rows = UINT32_MAX, random
 * and clustered allow-sets, roaring and row words, k 1..200) with exactly
 * the rows and distances of the same index built without them, and of
 * float brute force; so does an SQ8 index's own code scan; the codes cost
 * n * dim bytes and the quantizer blob, the walk is unchanged (same
 * unfiltered answers), and the index still reports itself unquantized.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "hs_test.h"
#include "hs_vidx_oracle.h"
#include "index/vector/vidx.h"

static hs_vidx *build_open(const float *x, size_t n, size_t dim, hs_metric m, hs_quant_kind qk,
                           hs_vidx_scan_codes sc, hs_buf *b) {
  hs_vidx_params p;
  hs_vidx_params_default(&p);
  p.metric = m;
  p.m = 8;
  p.ef_construction = 32;
  p.threads = 1;
  p.quant.kind = qk;
  p.scan_codes = sc;
  hs_error err = {0};
  hs_buf_init(b);
  CHECK_OK(hs_vidx_build(x, n, dim, NULL, &p, b, &err), &err);
  hs_source *src = NULL;
  hs_vidx *v = NULL;
  CHECK_OK(hs_source_open_memory(b->data, b->len, "mem", &src, &err), &err);
  if (src == NULL) return NULL;
  CHECK_OK(hs_vidx_open(src, 0, b->len, &v, &err), &err);
  hs_source_unref(src);
  if (v != NULL) CHECK_OK(hs_vidx_validate(v, &err), &err);
  return v;
}

static void check_metric(hs_metric m, size_t n, size_t dim, uint64_t seed) {
  float *x = malloc(n * dim * sizeof *x);
  uint64_t st = seed;
  float centers[20][64];
  for (int c = 0; c < 20; c++)
    for (size_t j = 0; j < dim; j++) centers[c][j] = (float)gauss(&st);
  for (size_t i = 0; i < n; i++) {
    int c = (int)(hs_test_rand(&st) % 20);
    for (size_t j = 0; j < dim; j++) x[i * dim + j] = centers[c][j] + 0.3f * (float)gauss(&st);
  }
  hs_buf bc, bf, bq;
  hs_vidx *vc = build_open(x, n, dim, m, HS_QUANT_NONE, HS_VIDX_SCAN_CODES_AUTO, &bc);
  hs_vidx *vf = build_open(x, n, dim, m, HS_QUANT_NONE, HS_VIDX_SCAN_CODES_NONE, &bf);
  hs_vidx *vq = build_open(x, n, dim, m, HS_QUANT_SQ8, HS_VIDX_SCAN_CODES_AUTO, &bq);
  if (vc == NULL || vf == NULL || vq == NULL) goto done;
  CHECK(hs_vidx_quant_kind(vc) == HS_QUANT_NONE && hs_vidx_quant_kind(vq) == HS_QUANT_SQ8);
  /* the codes: n * dim bytes, the quantizer (2 dim floats + 24 bytes),
   * two section entries and alignment */
  CHECK(bc.len > bf.len + n * dim && bc.len < bf.len + n * dim + 8 * dim + 64 + 2 * 32 + 2 * 64);
  hs_error err = {0};
  const uint32_t ks[] = {1, 10, 200};
  const double sels[] = {0.02, 0.1, 0.4, 0.9};
  const size_t nw = (n + 63) / 64;
  uint64_t *words = malloc(nw * sizeof *words);
  hs_vidx_hit *h1 = malloc(200 * sizeof *h1), *h2 = malloc(200 * sizeof *h2),
              *h3 = malloc(200 * sizeof *h3), *hb = malloc(200 * sizeof *hb);
  hs_vidx_search_params exact = {.exact_rows = UINT32_MAX};
  int checked = 0;
  for (size_t si = 0; si < sizeof sels / sizeof *sels; si++) {
    for (int clustered = 0; clustered < 2; clustered++) {
      roaring_bitmap_t *r = roaring_bitmap_create();
      memset(words, 0, nw * sizeof *words);
      uint64_t lim = (uint64_t)(sels[si] * 1e6);
      for (size_t i = 0; i < n; i++) {
        /* clustered: a run of rows (nearby in the file, not in space) */
        bool on = clustered ? i < (size_t)(sels[si] * (double)n) + n / 7 && i >= n / 7
                            : hs_test_rand(&st) % 1000000 < lim;
        if (!on) continue;
        roaring_bitmap_add(r, (uint32_t)i);
        words[i >> 6] |= 1ull << (i & 63);
      }
      for (int qi = 0; qi < 6; qi++) {
        float q[64];
        const float *base = x + (hs_test_rand(&st) % n) * dim;
        for (size_t j = 0; j < dim; j++) q[j] = base[j] + 0.3f * (float)gauss(&st);
        uint32_t k = ks[qi % 3];
        uint32_t n1 = 0, n2 = 0, n3 = 0, n4 = 0;
        CHECK_OK(hs_vidx_search(vc, q, k, &exact, r, h1, &n1, &err), &err);
        CHECK_OK(hs_vidx_search_bits(vc, q, k, &exact, words, nw, h2, &n2, &err), &err);
        CHECK_OK(hs_vidx_search(vf, q, k, &exact, r, h3, &n3, &err), &err);
        hs_metric bm = m == HS_METRIC_L2 ? HS_METRIC_L2 : m;
        uint32_t nb = brute(bm, x, dim, q, r, k, hb);
        uint64_t c = roaring_bitmap_get_cardinality(r);
        CHECK_EQ_INT(n1, c < k ? c : k);
        CHECK(n1 == n2 && n1 == n3 && n1 == nb);
        for (uint32_t i = 0; i < n1 && i < n2 && i < n3; i++) {
          CHECK(h1[i].row == h3[i].row && h1[i].distance == h3[i].distance);
          CHECK(h2[i].row == h3[i].row && h2[i].distance == h3[i].distance);
          /* brute force: the same distances (rows may swap on exact ties) */
          CHECK(fabsf(h1[i].distance - hb[i].distance) <= 1e-4f * (1 + fabsf(hb[i].distance)));
        }
        /* the SQ8 index's own code scan: the same answers */
        CHECK_OK(hs_vidx_search(vq, q, k, &exact, r, h3, &n4, &err), &err);
        CHECK(n4 == n1);
        for (uint32_t i = 0; i < n1 && i < n4; i++)
          CHECK(h1[i].row == h3[i].row && h1[i].distance == h3[i].distance);
        /* unfiltered walks (exact_rows = 1: never the exact plan, which
         * the codes make cheaper): the scan codes do not change the graph */
        hs_vidx_search_params walk = {.exact_rows = 1};
        CHECK_OK(hs_vidx_search(vc, q, 10, &walk, NULL, h1, &n1, &err), &err);
        CHECK_OK(hs_vidx_search(vf, q, 10, &walk, NULL, h3, &n3, &err), &err);
        CHECK(n1 == n3);
        for (uint32_t i = 0; i < n1 && i < n3; i++)
          CHECK(h1[i].row == h3[i].row && h1[i].distance == h3[i].distance);
        checked++;
      }
      roaring_bitmap_free(r);
    }
  }
  printf("  %-6s n %zu dim %zu: %d exact scans equal (codes %zu bytes more)\n", hs_metric_name(m),
         n, dim, checked, bc.len - bf.len);
  free(words);
  free(h1);
  free(h2);
  free(h3);
  free(hb);
done:
  hs_vidx_free(vc);
  hs_vidx_free(vf);
  hs_vidx_free(vq);
  hs_buf_free(&bc);
  hs_buf_free(&bf);
  hs_buf_free(&bq);
  free(x);
}

int main(void) {
  check_metric(HS_METRIC_L2, 6000, 32, 1);
  check_metric(HS_METRIC_L2SQ, 5000, 24, 2);
  check_metric(HS_METRIC_COSINE, 6000, 48, 3);
  check_metric(HS_METRIC_L1, 5000, 16, 4);
  /* inner product keeps no scan codes (no error bound) */
  {
    float x[64 * 4];
    uint64_t st = 9;
    for (size_t i = 0; i < 64 * 4; i++) x[i] = (float)gauss(&st);
    hs_buf a, b;
    hs_vidx *va = build_open(x, 64, 4, HS_METRIC_IP, HS_QUANT_NONE, HS_VIDX_SCAN_CODES_AUTO, &a);
    hs_vidx *vb = build_open(x, 64, 4, HS_METRIC_IP, HS_QUANT_NONE, HS_VIDX_SCAN_CODES_NONE, &b);
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    hs_vidx_free(va);
    hs_vidx_free(vb);
    hs_buf_free(&a);
    hs_buf_free(&b);
  }
  return hs_test_finish("test_vidx_scan");
}
