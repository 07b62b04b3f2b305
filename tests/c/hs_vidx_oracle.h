/*
 * hs_vidx_oracle.h — what the vector index tests check against
 * (test_vidx_scan.c, test_vidx_coarse.c): Gaussian test data and the float
 * brute-force top-k over an allow-set. Include after hs_test.h. Every
 * function is static inline, so a test that uses only some of them
 * compiles without warnings.
 */
#ifndef HS_VIDX_ORACLE_H
#define HS_VIDX_ORACLE_H

#include <math.h>

#include "hs_test.h"
#include "index/vector/distance.h"
#include "index/vector/vidx.h"

/* A standard normal draw (Box-Muller) from the test generator. */
static inline double gauss(uint64_t *st) {
  double u = ((double)(hs_test_rand(st) >> 11) + 1.0) / 9007199254740993.0;
  double v = (double)(hs_test_rand(st) >> 11) / 9007199254740992.0;
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Float brute force: the k best (distance, row) of the allowed rows. */
static inline uint32_t brute(hs_metric m, const float *x, size_t dim, const float *q,
                             const roaring_bitmap_t *r, uint32_t k, hs_vidx_hit *out) {
  uint32_t got = 0;
  roaring_uint32_iterator_t *it = roaring_create_iterator(r);
  for (; it->has_value; roaring_advance_uint32_iterator(it)) {
    uint32_t row = it->current_value;
    float d = NAN;
    hs_distance_f32(m, q, x + (size_t)row * dim, dim, &d, NULL);
    uint32_t pos = got < k ? got++ : k;
    if (pos == k && !(d < out[k - 1].distance)) continue;
    if (pos == k) pos = k - 1;
    while (pos > 0 && out[pos - 1].distance > d) {
      out[pos] = out[pos - 1];
      pos--;
    }
    out[pos] = (hs_vidx_hit){row, d};
  }
  roaring_free_uint32_iterator(it);
  return got;
}

#endif
