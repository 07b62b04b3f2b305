/*
 * column_stats.c — running min/max statistics of the column-chunk writer
 * (writer_internal.h): per page and per chunk, in physical form, ordered by
 * the column's sort order (hs_wstat_cmp); NaNs are left out and zeros are
 * written as Parquet asks (-0.0 for a minimum, +0.0 for a maximum).
 *
 * Fixed-width integers, floats and 1-byte values (booleans) are scanned
 * with typed loops; everything else (FLBA, decimals, half floats, byte
 * arrays) goes through hs_wstat_cmp.
 */
#include <string.h>

#include "writer_internal.h"

void hs_wstat_free(hs_wstat *s) {
  hs_buf_free(&s->min);
  hs_buf_free(&s->max);
  s->has = false;
}

static bool buf_set(hs_buf *b, const void *p, size_t n) {
  b->len = 0;
  return hs_buf_append(b, p, n);
}

/* Merge a candidate [mn, mx] into `s`. */
bool hs_wstat_merge(hs_wstat *s, hs_wsort sort, const uint8_t *mn, size_t mnl, const uint8_t *mx,
                    size_t mxl) {
  if (!s->has) {
    s->has = true;
    return buf_set(&s->min, mn, mnl) && buf_set(&s->max, mx, mxl);
  }
  if (hs_wstat_cmp(sort, mn, mnl, s->min.data, s->min.len) < 0 && !buf_set(&s->min, mn, mnl))
    return false;
  if (hs_wstat_cmp(sort, mx, mxl, s->max.data, s->max.len) > 0 && !buf_set(&s->max, mx, mxl))
    return false;
  return true;
}

/* Typed min/max: NaNs (x != x) are skipped by finding the first ordered
 * value and then comparing only with `<` / `>`, which are false for NaN.
 * Four independent lanes keep the loop free of a serial dependency (the
 * compiler may vectorise it); min and max do not depend on the order. */
#define MINMAX_LOOP(T)                                                          \
  do {                                                                          \
    const T *v = (const T *)(const void *)f;                                    \
    int64_t k = 0;                                                              \
    while (k < nv && v[k] != v[k]) k++;                                         \
    if (k == nv) return true;                                                   \
    T l0 = v[k], l1 = l0, l2 = l0, l3 = l0, h0 = l0, h1 = l0, h2 = l0, h3 = l0; \
    for (k++; k + 4 <= nv; k += 4) {                                            \
      T x0 = v[k], x1 = v[k + 1], x2 = v[k + 2], x3 = v[k + 3];                 \
      l0 = x0 < l0 ? x0 : l0;                                                   \
      l1 = x1 < l1 ? x1 : l1;                                                   \
      l2 = x2 < l2 ? x2 : l2;                                                   \
      l3 = x3 < l3 ? x3 : l3;                                                   \
      h0 = x0 > h0 ? x0 : h0;                                                   \
      h1 = x1 > h1 ? x1 : h1;                                                   \
      h2 = x2 > h2 ? x2 : h2;                                                   \
      h3 = x3 > h3 ? x3 : h3;                                                   \
    }                                                                           \
    for (; k < nv; k++) {                                                       \
      l0 = v[k] < l0 ? v[k] : l0;                                               \
      h0 = v[k] > h0 ? v[k] : h0;                                               \
    }                                                                           \
    l0 = l1 < l0 ? l1 : l0;                                                     \
    l2 = l3 < l2 ? l3 : l2;                                                     \
    l0 = l2 < l0 ? l2 : l0;                                                     \
    h0 = h1 > h0 ? h1 : h0;                                                     \
    h2 = h3 > h2 ? h3 : h2;                                                     \
    h0 = h2 > h0 ? h2 : h0;                                                     \
    uint8_t a[sizeof(T)], b[sizeof(T)];                                         \
    memcpy(a, &l0, sizeof(T));                                                  \
    memcpy(b, &h0, sizeof(T));                                                  \
    return hs_wstat_merge(s, sort, a, sizeof(T), b, sizeof(T));                 \
  } while (0)

#if defined(__SSE2__)
#include <emmintrin.h>
/* Floats and doubles on x86-64 (SSE2 is baseline): minps/maxps compute
 * exactly `x < m ? x : m` / `x > m ? x : m`, so NaNs are skipped as in the
 * scalar loop once the accumulators start from an ordered value. Vectors
 * (embeddings) spend most of their statistics time here. */
static bool minmax_f32_sse(hs_wstat *s, hs_wsort sort, const float *v, int64_t nv) {
  int64_t k = 0;
  while (k < nv && v[k] != v[k]) k++;
  if (k == nv) return true;
  float lo = v[k], hi = v[k];
  __m128 l0 = _mm_set1_ps(lo), l1 = l0, h0 = l0, h1 = l0;
  for (k++; k + 8 <= nv; k += 8) {
    __m128 a = _mm_loadu_ps(v + k), b = _mm_loadu_ps(v + k + 4);
    l0 = _mm_min_ps(a, l0);
    l1 = _mm_min_ps(b, l1);
    h0 = _mm_max_ps(a, h0);
    h1 = _mm_max_ps(b, h1);
  }
  float lv[8], hv[8];
  _mm_storeu_ps(lv, l0);
  _mm_storeu_ps(lv + 4, l1);
  _mm_storeu_ps(hv, h0);
  _mm_storeu_ps(hv + 4, h1);
  for (int i = 0; i < 8; i++) {
    lo = lv[i] < lo ? lv[i] : lo;
    hi = hv[i] > hi ? hv[i] : hi;
  }
  for (; k < nv; k++) {
    lo = v[k] < lo ? v[k] : lo;
    hi = v[k] > hi ? v[k] : hi;
  }
  uint8_t a[4], b[4];
  memcpy(a, &lo, 4);
  memcpy(b, &hi, 4);
  return hs_wstat_merge(s, sort, a, 4, b, 4);
}

static bool minmax_f64_sse(hs_wstat *s, hs_wsort sort, const double *v, int64_t nv) {
  int64_t k = 0;
  while (k < nv && v[k] != v[k]) k++;
  if (k == nv) return true;
  double lo = v[k], hi = v[k];
  __m128d l0 = _mm_set1_pd(lo), l1 = l0, h0 = l0, h1 = l0;
  for (k++; k + 4 <= nv; k += 4) {
    __m128d a = _mm_loadu_pd(v + k), b = _mm_loadu_pd(v + k + 2);
    l0 = _mm_min_pd(a, l0);
    l1 = _mm_min_pd(b, l1);
    h0 = _mm_max_pd(a, h0);
    h1 = _mm_max_pd(b, h1);
  }
  double lv[4], hv[4];
  _mm_storeu_pd(lv, l0);
  _mm_storeu_pd(lv + 2, l1);
  _mm_storeu_pd(hv, h0);
  _mm_storeu_pd(hv + 2, h1);
  for (int i = 0; i < 4; i++) {
    lo = lv[i] < lo ? lv[i] : lo;
    hi = hv[i] > hi ? hv[i] : hi;
  }
  for (; k < nv; k++) {
    lo = v[k] < lo ? v[k] : lo;
    hi = v[k] > hi ? v[k] : hi;
  }
  uint8_t a[8], b[8];
  memcpy(a, &lo, 8);
  memcpy(b, &hi, 8);
  return hs_wstat_merge(s, sort, a, 8, b, 8);
}
#endif

bool hs_wstat_add_fixed(hs_wstat *s, hs_wsort sort, const uint8_t *f, int64_t nv, size_t w) {
  switch (sort) {
  case HS_WSORT_I32:
    if (w == 4) MINMAX_LOOP(int32_t);
    break;
  case HS_WSORT_U32: MINMAX_LOOP(uint32_t);
  case HS_WSORT_I64: MINMAX_LOOP(int64_t);
  case HS_WSORT_U64: MINMAX_LOOP(uint64_t);
#if defined(__SSE2__)
  case HS_WSORT_FLOAT: return minmax_f32_sse(s, sort, (const float *)(const void *)f, nv);
  case HS_WSORT_DOUBLE: return minmax_f64_sse(s, sort, (const double *)(const void *)f, nv);
#else
  case HS_WSORT_FLOAT: MINMAX_LOOP(float);
  case HS_WSORT_DOUBLE: MINMAX_LOOP(double);
#endif
  case HS_WSORT_BYTES:
    if (w == 1) MINMAX_LOOP(uint8_t); /* booleans as 0/1 bytes: unsigned order */
    break;
  default: break;
  }
  /* Generic: FLBA, decimals, half floats, booleans (1 byte 0/1). */
  const uint8_t *lo = NULL, *hi = NULL;
  for (int64_t k = 0; k < nv; k++) {
    const uint8_t *x = f + (size_t)k * w;
    if (sort == HS_WSORT_FLOAT16 && hs_wstat_half_is_nan(x)) continue;
    if (lo == NULL) {
      lo = hi = x;
    } else if (hs_wstat_cmp(sort, x, w, lo, w) < 0) {
      lo = x;
    } else if (hs_wstat_cmp(sort, x, w, hi, w) > 0) {
      hi = x;
    }
  }
  return lo == NULL || hs_wstat_merge(s, sort, lo, w, hi, w);
}

bool hs_wstat_add_bytes(hs_wstat *s, const hs_wbytes *v, int64_t nv) {
  if (nv == 0) return true;
  const hs_wbytes *lo = &v[0], *hi = &v[0];
  for (int64_t k = 1; k < nv; k++) {
    if (hs_wstat_cmp(HS_WSORT_BYTES, v[k].p, v[k].len, lo->p, lo->len) < 0)
      lo = &v[k];
    else if (hs_wstat_cmp(HS_WSORT_BYTES, v[k].p, v[k].len, hi->p, hi->len) > 0)
      hi = &v[k];
  }
  return hs_wstat_merge(s, HS_WSORT_BYTES, lo->p, lo->len, hi->p, hi->len);
}

/* Parquet: a zero minimum is written -0.0 and a zero maximum +0.0. */
void hs_wstat_fix_zero(hs_wstat *s, hs_wsort sort) {
  if (!s->has) return;
  if (sort == HS_WSORT_FLOAT && s->min.len == 4) {
    float lo, hi;
    memcpy(&lo, s->min.data, 4);
    memcpy(&hi, s->max.data, 4);
    if (lo == 0.0f) lo = -0.0f;
    if (hi == 0.0f) hi = 0.0f;
    memcpy(s->min.data, &lo, 4);
    memcpy(s->max.data, &hi, 4);
  } else if (sort == HS_WSORT_DOUBLE && s->min.len == 8) {
    double lo, hi;
    memcpy(&lo, s->min.data, 8);
    memcpy(&hi, s->max.data, 8);
    if (lo == 0.0) lo = -0.0;
    if (hi == 0.0) hi = 0.0;
    memcpy(s->min.data, &lo, 8);
    memcpy(s->max.data, &hi, 8);
  } else if (sort == HS_WSORT_FLOAT16 && s->min.len == 2) {
    if ((s->min.data[0] | (s->min.data[1] & 0x7f)) == 0) s->min.data[1] = 0x80;
    if ((s->max.data[0] | (s->max.data[1] & 0x7f)) == 0) s->max.data[1] = 0x00;
  }
}
