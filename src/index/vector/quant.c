/*
 * quant.c — SQ8 and PQ quantizers (see quant.h for the contract).
 *
 * SQ8 stores per dimension a minimum and a step ((max - min) / 255); code
 * c stands for min + c * step. A query is folded into per-dimension arrays
 * once, so the distance to a code is one pass of multiply-adds over the
 * bytes widened to floats (AVX2 / AVX-512 through target attributes, a
 * scalar loop otherwise):
 *   L2:  sum (a_d - w_d c_d)^2   with a = q - min, w = step
 *   L1:  sum |a_d - w_d c_d|
 *   IP:  cst - sum w_d c_d       with w = q * step, cst = -sum q * min
 * PQ splits a vector into m sub-vectors of dim/m floats, each replaced by
 * the index of its nearest of ksub (<= 256) centroids trained by k-means;
 * the query table holds the metric's partial distance of each query
 * sub-vector to each centroid (m x 256 floats, entries past ksub repeat
 * entry c mod ksub), and a code's distance is the sum of m lookups.
 */
#include "quant.h"

#include <math.h>
#include <string.h>

#include "common/parallel.h"
#include "kmeans.h"
#include "vq_block.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HS_QUANT_X86 1
#endif

#define MAGIC "HSQ1"
#define VERSION 1
#define HEADER 20
#define CHECKSUM_SEED 0x48535131u
#define PQ_TRAIN_MAX 65536
#define KSUB_MAX 256

struct hs_quant {
  hs_quant_kind kind;
  hs_metric metric;
  uint32_t dim, threads;
  float *vmin, *step; /* SQ8 */
  uint32_t m, ksub, dsub;
  float *cent;   /* PQ: m x ksub x dsub */
  float *packed; /* PQ: per sub-space, hs_vq_pack of its ksub centroids */
};

struct hs_quant_query {
  const hs_quant *q;
  float *a, *w, cst; /* SQ8 */
  float *table;      /* PQ: m x 256 */
  /* SQ8 folded for 4-bit codes (hs_quant_query_sq4): a4 = a - 7.5 w,
   * w4 = 16 w, padded with zeros to a multiple of 32 dimensions */
  float *a4, *w4, cst4;
};

static bool float_metric(hs_metric m) {
  return m == HS_METRIC_L2 || m == HS_METRIC_L2SQ || m == HS_METRIC_IP || m == HS_METRIC_COSINE ||
         m == HS_METRIC_L1;
}

static size_t packed_stride(const hs_quant *q) {
  return hs_vq_packed_floats(q->ksub, q->dsub);
}

void hs_quant_free(hs_quant *q) {
  if (q == NULL) return;
  hs_free(q->vmin);
  hs_free(q->step);
  hs_free(q->cent);
  hs_free(q->packed);
  hs_free(q);
}

hs_quant_kind hs_quant_kind_of(const hs_quant *q) {
  return q->kind;
}
size_t hs_quant_code_size(const hs_quant *q) {
  return q->kind == HS_QUANT_SQ8 ? q->dim : q->m;
}
size_t hs_quant_dim(const hs_quant *q) {
  return q->dim;
}
hs_metric hs_quant_metric(const hs_quant *q) {
  return q->metric;
}
uint32_t hs_quant_pq_m(const hs_quant *q) {
  return q->kind == HS_QUANT_PQ ? q->m : 0;
}

/* Allocates the arrays of q's kind from its dim / m / ksub. */
static bool alloc_arrays(hs_quant *q) {
  if (q->kind == HS_QUANT_SQ8) {
    q->vmin = hs_malloc(q->dim * sizeof(float));
    q->step = hs_malloc(q->dim * sizeof(float));
    return q->vmin != NULL && q->step != NULL;
  }
  q->dsub = q->dim / q->m;
  q->cent = hs_malloc((size_t)q->ksub * q->dim * sizeof(float));
  q->packed = hs_malloc(q->m * packed_stride(q) * sizeof(float));
  return q->cent != NULL && q->packed != NULL;
}

static void pack_pq(hs_quant *q) {
  for (uint32_t j = 0; j < q->m; j++)
    hs_vq_pack(q->cent + (size_t)j * q->ksub * q->dsub, q->ksub, q->dsub,
               q->packed + j * packed_stride(q));
}

/* ------------------------------------------------------------ training */

static uint32_t default_m(uint32_t dim) {
  uint32_t cap = dim / 8 ? dim / 8 : 1;
  for (uint32_t m = cap; m > 1; m--)
    if (dim % m == 0) return m;
  return 1;
}

typedef struct pq_train_ctx {
  const float *sample;
  size_t ns;
  hs_quant *q;
  uint64_t seed;
  hs_status *status;
  hs_error *errs;
} pq_train_ctx;

static void pq_train_range(void *vctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  const pq_train_ctx *c = vctx;
  hs_quant *q = c->q;
  for (size_t j = begin; j < end; j++) {
    float *sub = hs_malloc(c->ns * q->dsub * sizeof(float));
    if (sub == NULL) {
      c->status[j] = hs_error_set(&c->errs[j], HS_ERR_NOMEM,
                                  "PQ training: out of memory for sub-space %zu", j);
      continue;
    }
    for (size_t i = 0; i < c->ns; i++)
      memcpy(sub + i * q->dsub, c->sample + i * q->dim + j * q->dsub, q->dsub * sizeof(float));
    hs_kmeans_params kp = {.k = q->ksub,
                           .iterations = 25,
                           .sample = (uint32_t)c->ns,
                           .seed = c->seed + j,
                           .threads = 1,
                           .metric = HS_METRIC_L2SQ};
    float *cent = NULL;
    uint32_t k = 0;
    c->status[j] = hs_kmeans_train(sub, c->ns, q->dsub, &kp, &cent, &k, &c->errs[j]);
    if (c->status[j] == HS_OK) {
      memcpy(q->cent + j * q->ksub * q->dsub, cent, (size_t)k * q->dsub * sizeof(float));
      hs_free(cent);
    }
    hs_free(sub);
  }
}

static hs_status train_pq(hs_quant *q, const float *points, size_t n, const hs_quant_params *p,
                          hs_error *err) {
  size_t ns = n < PQ_TRAIN_MAX ? n : PQ_TRAIN_MAX;
  float *sample = NULL;
  const float *x = points;
  if (ns < n) { /* selection sampling: uniform, in order, no index array */
    sample = hs_malloc(ns * q->dim * sizeof(float));
    if (sample == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "PQ training: out of memory for %zu samples", ns);
    uint64_t rng = p->seed ^ 0x5051ull;
    size_t kept = 0;
    for (size_t i = 0; i < n && kept < ns; i++) {
      uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      if ((double)(z >> 11) * 0x1.0p-53 * (double)(n - i) < (double)(ns - kept))
        memcpy(sample + kept++ * q->dim, points + i * q->dim, q->dim * sizeof(float));
    }
    x = sample;
  }
  hs_status *status = hs_calloc(q->m, sizeof(hs_status));
  hs_error *errs = hs_calloc(q->m, sizeof(hs_error));
  hs_status st = HS_OK;
  if (status == NULL || errs == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "PQ training: out of memory");
  } else {
    pq_train_ctx c = {
        .sample = x, .ns = ns, .q = q, .seed = p->seed, .status = status, .errs = errs};
    uint32_t threads = ns * q->dim * q->ksub < ((size_t)1 << 20) ? 1 : p->threads;
    hs_parallel_for(q->m, 1, threads, pq_train_range, &c);
    for (uint32_t j = 0; j < q->m && st == HS_OK; j++)
      if (status[j] != HS_OK) {
        st = hs_error_set(err, status[j], "%s", errs[j].message);
      }
  }
  hs_free(status);
  hs_free(errs);
  hs_free(sample);
  if (st == HS_OK) pack_pq(q);
  return st;
}

hs_status hs_quant_train(const float *points, size_t n, size_t dim, hs_metric metric,
                         const hs_quant_params *p, hs_quant **out, hs_error *err) {
  if (points == NULL || p == NULL || out == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "quantizer training: NULL argument");
  if (n == 0 || dim == 0 || dim > HS_QUANT_DIM_MAX)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "quantizer training: need n > 0 (got %zu) and 0 < dim <= %d (got %zu)", n,
                        HS_QUANT_DIM_MAX, dim);
  if (!float_metric(metric))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "quantizer training: metric %s is not supported",
                        hs_metric_name(metric));
  if (p->kind != HS_QUANT_SQ8 && p->kind != HS_QUANT_PQ)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "quantizer training: kind %d is not SQ8 or PQ",
                        (int)p->kind);
  uint32_t m = p->kind == HS_QUANT_PQ ? (p->pq_m ? p->pq_m : default_m((uint32_t)dim)) : 0;
  if (p->kind == HS_QUANT_PQ && (m > dim || dim % m != 0))
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "quantizer training: PQ m = %u does not divide dim %zu", m, dim);
  if (n > SIZE_MAX / dim / sizeof(float))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "quantizer training: %zu x %zu overflows", n, dim);
  for (size_t i = 0; i < n * dim; i++)
    if (!isfinite(points[i]))
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "quantizer training: row %zu component %zu is not finite", i / dim,
                          i % dim);
  hs_quant *q = hs_calloc(1, sizeof *q);
  if (q == NULL) return hs_error_set(err, HS_ERR_NOMEM, "quantizer training: out of memory");
  q->kind = p->kind;
  q->metric = metric;
  q->dim = (uint32_t)dim;
  q->threads = p->threads;
  q->m = m;
  q->ksub = n < KSUB_MAX ? (uint32_t)n : KSUB_MAX;
  if (!alloc_arrays(q)) {
    hs_quant_free(q);
    return hs_error_set(err, HS_ERR_NOMEM, "quantizer training: out of memory (dim %zu)", dim);
  }
  if (q->kind == HS_QUANT_SQ8) {
    for (size_t d = 0; d < dim; d++) {
      float lo = points[d], hi = points[d];
      for (size_t i = 1; i < n; i++) {
        float v = points[i * dim + d];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
      q->vmin[d] = lo;
      q->step[d] = (float)(((double)hi - lo) / 255.0);
    }
  } else {
    hs_status st = train_pq(q, points, n, p, err);
    if (st != HS_OK) {
      hs_quant_free(q);
      return st;
    }
  }
  *out = q;
  return HS_OK;
}

/* ------------------------------------------------------------ encoding */

static uint8_t sq8_level(float x, float lo, float step) {
  if (!(step > 0)) return 0;
  float v = (x - lo) / step;
  if (!(v > 0)) return 0; /* also NaN */
  if (v >= 255.0f) return 255;
  return (uint8_t)(v + 0.5f);
}

typedef struct encode_ctx {
  const hs_quant *q;
  const float *points;
  uint8_t *codes;
} encode_ctx;

static void encode_range(void *vctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  const encode_ctx *c = vctx;
  const hs_quant *q = c->q;
  for (size_t i = begin; i < end; i++) {
    const float *x = c->points + i * q->dim;
    if (q->kind == HS_QUANT_SQ8) {
      uint8_t *code = c->codes + i * q->dim;
      for (uint32_t d = 0; d < q->dim; d++) code[d] = sq8_level(x[d], q->vmin[d], q->step[d]);
      continue;
    }
    uint8_t *code = c->codes + i * q->m;
    for (uint32_t j = 0; j < q->m; j++) {
      float score;
      uint32_t best = hs_vq_argmin(HS_VQ_L2SQ, q->packed + j * packed_stride(q), q->ksub, q->dsub,
                                   x + j * q->dsub, &score);
      code[j] = (uint8_t)best;
    }
  }
}

void hs_quant_encode(const hs_quant *q, const float *points, size_t n, uint8_t *codes) {
  encode_ctx c = {.q = q, .points = points, .codes = codes};
  size_t work = n * q->dim * (q->kind == HS_QUANT_PQ ? q->ksub : 1);
  uint32_t threads = work < ((size_t)1 << 20) ? 1 : q->threads;
  hs_parallel_for(n, 256, threads, encode_range, &c);
}

void hs_quant_decode(const hs_quant *q, const uint8_t *code, float *out) {
  if (q->kind == HS_QUANT_SQ8) {
    for (uint32_t d = 0; d < q->dim; d++) out[d] = q->vmin[d] + q->step[d] * (float)code[d];
    return;
  }
  for (uint32_t j = 0; j < q->m; j++) {
    uint32_t c = code[j] % q->ksub;
    memcpy(out + j * q->dsub, q->cent + ((size_t)j * q->ksub + c) * q->dsub,
           q->dsub * sizeof(float));
  }
}

/* ------------------------------------------------------------- queries */

hs_status hs_quant_query_make(const hs_quant *q, const float *query, hs_quant_query **out,
                              hs_error *err) {
  hs_quant_query *qq = hs_calloc(1, sizeof *qq);
  if (qq == NULL) return hs_error_set(err, HS_ERR_NOMEM, "quantizer query: out of memory");
  qq->q = q;
  bool ip = q->metric == HS_METRIC_IP || q->metric == HS_METRIC_COSINE;
  if (q->kind == HS_QUANT_SQ8) {
    qq->a = hs_malloc(q->dim * sizeof(float));
    qq->w = hs_malloc(q->dim * sizeof(float));
    if (qq->a == NULL || qq->w == NULL) {
      hs_quant_query_free(qq);
      return hs_error_set(err, HS_ERR_NOMEM, "quantizer query: out of memory (dim %u)", q->dim);
    }
    double cst = 0;
    for (uint32_t d = 0; d < q->dim; d++) {
      qq->a[d] = query[d] - q->vmin[d];
      qq->w[d] = ip ? query[d] * q->step[d] : q->step[d];
      cst -= (double)query[d] * q->vmin[d];
    }
    qq->cst = (float)cst;
  } else {
    qq->table = hs_malloc((size_t)q->m * KSUB_MAX * sizeof(float));
    if (qq->table == NULL) {
      hs_quant_query_free(qq);
      return hs_error_set(err, HS_ERR_NOMEM, "quantizer query: out of memory (m %u)", q->m);
    }
    hs_vq_op op = ip ? HS_VQ_DOT : q->metric == HS_METRIC_L1 ? HS_VQ_L1 : HS_VQ_L2SQ;
    for (uint32_t j = 0; j < q->m; j++) {
      float *t = qq->table + (size_t)j * KSUB_MAX;
      hs_vq_all(op, q->packed + j * packed_stride(q), q->ksub, q->dsub, query + j * q->dsub, t);
      for (uint32_t c = 0; c < q->ksub; c++)
        if (ip) t[c] = -t[c];
      for (uint32_t c = q->ksub; c < KSUB_MAX; c++) t[c] = t[c % q->ksub];
    }
  }
  *out = qq;
  return HS_OK;
}

void hs_quant_query_free(hs_quant_query *qq) {
  if (qq == NULL) return;
  hs_free(qq->a);
  hs_free(qq->w);
  hs_free(qq->table);
  hs_free(qq->a4);
  hs_free(qq->w4);
  hs_free(qq);
}

static float sq8_scalar(const hs_quant_query *qq, const uint8_t *code) {
  const hs_quant *q = qq->q;
  float s = 0;
  switch (q->metric) {
  case HS_METRIC_IP:
  case HS_METRIC_COSINE:
    for (uint32_t d = 0; d < q->dim; d++) s += qq->w[d] * (float)code[d];
    return qq->cst - s;
  case HS_METRIC_L1:
    for (uint32_t d = 0; d < q->dim; d++) s += fabsf(qq->a[d] - qq->w[d] * (float)code[d]);
    return s;
  default:
    for (uint32_t d = 0; d < q->dim; d++) {
      float t = qq->a[d] - qq->w[d] * (float)code[d];
      s += t * t;
    }
    return s;
  }
}

#ifdef HS_QUANT_X86
__attribute__((target("avx2,fma"))) static float sq8_avx2(const hs_quant_query *qq,
                                                          const uint8_t *code) {
  const hs_quant *q = qq->q;
  uint32_t dim = q->dim, d = 0;
  int mode = q->metric == HS_METRIC_IP || q->metric == HS_METRIC_COSINE ? 1
             : q->metric == HS_METRIC_L1                                ? 2
                                                                        : 0;
  __m256 acc = _mm256_setzero_ps();
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (; d + 8 <= dim; d += 8) {
    __m256 c =
        _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(code + d))));
    __m256 w = _mm256_loadu_ps(qq->w + d);
    if (mode == 1) {
      acc = _mm256_fmadd_ps(w, c, acc);
    } else {
      __m256 t = _mm256_fnmadd_ps(w, c, _mm256_loadu_ps(qq->a + d));
      acc = mode == 2 ? _mm256_add_ps(acc, _mm256_andnot_ps(sign, t)) : _mm256_fmadd_ps(t, t, acc);
    }
  }
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
  float s = _mm_cvtss_f32(h);
  for (; d < dim; d++) {
    float c = (float)code[d];
    if (mode == 1) {
      s += qq->w[d] * c;
    } else {
      float t = qq->a[d] - qq->w[d] * c;
      s += mode == 2 ? fabsf(t) : t * t;
    }
  }
  return mode == 1 ? qq->cst - s : s;
}
#endif

#ifdef HS_QUANT_X86
/* 16 components a step, two accumulators, the tail masked: about twice the
 * AVX2 kernel's rate (exact scans over codes, README.md "Scan codes"). */
__attribute__((target("avx512f"))) static float sq8_avx512(const hs_quant_query *qq,
                                                           const uint8_t *code) {
  const hs_quant *q = qq->q;
  const uint32_t dim = q->dim;
  const int mode = q->metric == HS_METRIC_IP || q->metric == HS_METRIC_COSINE ? 1
                   : q->metric == HS_METRIC_L1                                ? 2
                                                                              : 0;
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  uint32_t d = 0;
  for (; d < dim; d += 16) {
    __mmask16 m = dim - d >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (dim - d)) - 1u);
    __m128i raw;
    if (dim - d >= 16) {
      raw = _mm_loadu_si128((const __m128i *)(code + d));
    } else { /* the tail (AVX-512F has no masked byte load) */
      uint8_t tail[16] = {0};
      memcpy(tail, code + d, dim - d);
      raw = _mm_loadu_si128((const __m128i *)tail);
    }
    __m512 c = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(raw));
    __m512 w = _mm512_maskz_loadu_ps(m, qq->w + d);
    __m512 t;
    if (mode == 1) {
      t = _mm512_mul_ps(w, c);
    } else {
      t = _mm512_fnmadd_ps(w, c, _mm512_maskz_loadu_ps(m, qq->a + d));
      t = mode == 2 ? _mm512_abs_ps(t) : _mm512_mul_ps(t, t);
    }
    if ((d / 16) % 2 == 0)
      acc0 = _mm512_add_ps(acc0, t);
    else
      acc1 = _mm512_add_ps(acc1, t);
  }
  float s = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
  return mode == 1 ? qq->cst - s : s;
}
#endif

#ifdef HS_QUANT_X86
/* Squared L2 of a dimension that is a multiple of 16: no branch in the loop
 * (what an exact scan over codes spends its time in). */
__attribute__((target("avx512f"))) static float sq8_l2_avx512_16(const hs_quant_query *qq,
                                                                 const uint8_t *code) {
  const uint32_t dim = qq->q->dim;
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  uint32_t d = 0;
  for (; d + 32 <= dim; d += 32) {
    __m512 c0 =
        _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(code + d))));
    __m512 c1 =
        _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(code + d + 16))));
    __m512 t0 = _mm512_fnmadd_ps(_mm512_loadu_ps(qq->w + d), c0, _mm512_loadu_ps(qq->a + d));
    __m512 t1 =
        _mm512_fnmadd_ps(_mm512_loadu_ps(qq->w + d + 16), c1, _mm512_loadu_ps(qq->a + d + 16));
    acc0 = _mm512_fmadd_ps(t0, t0, acc0);
    acc1 = _mm512_fmadd_ps(t1, t1, acc1);
  }
  if (d < dim) {
    __m512 c0 =
        _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(code + d))));
    __m512 t0 = _mm512_fnmadd_ps(_mm512_loadu_ps(qq->w + d), c0, _mm512_loadu_ps(qq->a + d));
    acc0 = _mm512_fmadd_ps(t0, t0, acc0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}
#endif

#ifdef HS_QUANT_X86
/* sq8_l2_avx512_16 over four rows at once, each summed in the same order
 * (two accumulators, even and odd 16-component steps): the same distances
 * bit for bit, with the query's terms loaded once and four independent
 * chains in flight. */
__attribute__((target("avx512f"))) static void sq8_l2_avx512_16x4(const hs_quant_query *qq,
                                                                  const uint8_t *const r[4],
                                                                  float out[4]) {
  const uint32_t dim = qq->q->dim;
  __m512 e[4], o[4];
  for (int i = 0; i < 4; i++) e[i] = o[i] = _mm512_setzero_ps();
  uint32_t d = 0;
  for (; d + 32 <= dim; d += 32) {
    const __m512 w0 = _mm512_loadu_ps(qq->w + d), a0 = _mm512_loadu_ps(qq->a + d);
    const __m512 w1 = _mm512_loadu_ps(qq->w + d + 16), a1 = _mm512_loadu_ps(qq->a + d + 16);
    for (int i = 0; i < 4; i++) {
      __m512 c0 =
          _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(r[i] + d))));
      __m512 c1 = _mm512_cvtepi32_ps(
          _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(r[i] + d + 16))));
      __m512 t0 = _mm512_fnmadd_ps(w0, c0, a0), t1 = _mm512_fnmadd_ps(w1, c1, a1);
      e[i] = _mm512_fmadd_ps(t0, t0, e[i]);
      o[i] = _mm512_fmadd_ps(t1, t1, o[i]);
    }
  }
  if (d < dim) {
    const __m512 w0 = _mm512_loadu_ps(qq->w + d), a0 = _mm512_loadu_ps(qq->a + d);
    for (int i = 0; i < 4; i++) {
      __m512 c0 =
          _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(r[i] + d))));
      __m512 t0 = _mm512_fnmadd_ps(w0, c0, a0);
      e[i] = _mm512_fmadd_ps(t0, t0, e[i]);
    }
  }
  for (int i = 0; i < 4; i++) out[i] = _mm512_reduce_add_ps(_mm512_add_ps(e[i], o[i]));
}
#endif

void hs_quant_distance_gather(const hs_quant_query *qq, const uint8_t *codes, const uint32_t *ids,
                              uint32_t n, float *out) {
  const size_t cs = hs_quant_code_size(qq->q);
  const hs_quant_distance_fn f = hs_quant_distance_kernel(qq);
  uint32_t i = 0;
#ifdef HS_QUANT_X86
  if (f == sq8_l2_avx512_16)
    for (; i + 4 <= n; i += 4) {
      const uint8_t *r[4] = {codes + ids[i] * cs, codes + ids[i + 1] * cs, codes + ids[i + 2] * cs,
                             codes + ids[i + 3] * cs};
      sq8_l2_avx512_16x4(qq, r, out + i);
    }
#endif
  for (; i < n; i++) out[i] = f(qq, codes + ids[i] * cs);
}

static float pq_distance(const hs_quant_query *qq, const uint8_t *code) {
  const float *t = qq->table;
  uint32_t m = qq->q->m, j = 0;
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (; j + 4 <= m; j += 4, t += 4 * KSUB_MAX) {
    s0 += t[code[j]];
    s1 += t[KSUB_MAX + code[j + 1]];
    s2 += t[2 * KSUB_MAX + code[j + 2]];
    s3 += t[3 * KSUB_MAX + code[j + 3]];
  }
  for (; j < m; j++, t += KSUB_MAX) s0 += t[code[j]];
  return (s0 + s1) + (s2 + s3);
}

hs_quant_distance_fn hs_quant_distance_kernel(const hs_quant_query *qq) {
  if (qq->q->kind == HS_QUANT_PQ) return pq_distance;
#ifdef HS_QUANT_X86
  int level = hs_distance_kernels_active()->level;
  bool l2 = qq->q->metric != HS_METRIC_IP && qq->q->metric != HS_METRIC_COSINE &&
            qq->q->metric != HS_METRIC_L1;
  if (level >= HS_SIMD_AVX512 && l2 && qq->q->dim % 16 == 0) return sq8_l2_avx512_16;
  if (level >= HS_SIMD_AVX512) return sq8_avx512;
  if (level >= HS_SIMD_AVX2) return sq8_avx2;
#endif
  return sq8_scalar;
}

float hs_quant_distance(const hs_quant_query *qq, const uint8_t *code) {
  if (qq->q->kind == HS_QUANT_PQ) return pq_distance(qq, code);
#ifdef HS_QUANT_X86
  if (hs_distance_kernels_active()->level >= HS_SIMD_AVX2) return sq8_avx2(qq, code);
#endif
  return sq8_scalar(qq, code);
}

void hs_quant_distance_batch(const hs_quant_query *qq, const uint8_t *codes, size_t n, float *out) {
  size_t cs = hs_quant_code_size(qq->q);
  for (size_t i = 0; i < n; i++) out[i] = hs_quant_distance(qq, codes + i * cs);
}

/* ------------------------------------------------------ 4-bit codes */

/* The form of a metric's SQ8 distance: 0 squared L2, 1 inner product
 * (cst - sum w c), 2 L1. */
static int sq8_mode(const hs_quant *q) {
  return q->metric == HS_METRIC_IP || q->metric == HS_METRIC_COSINE ? 1
         : q->metric == HS_METRIC_L1                                ? 2
                                                                    : 0;
}

size_t hs_quant_sq4_size(const hs_quant *q) {
  return q->kind == HS_QUANT_SQ8 ? 16 * (size_t)((q->dim + 31) / 32) : 0;
}

void hs_quant_sq4_derive(const hs_quant *q, const uint8_t *codes, size_t n, uint8_t *out) {
  const size_t cs = q->dim, rs = hs_quant_sq4_size(q), full = q->dim / 32;
  for (size_t i = 0; i < n; i++) {
    const uint8_t *c = codes + i * cs;
    uint8_t *o = out + i * rs;
    for (size_t g = 0; g < full; g++) /* whole groups: a loop the compiler vectorizes */
      for (size_t j = 0; j < 16; j++)
        o[16 * g + j] = (uint8_t)((c[32 * g + j] >> 4) | (c[32 * g + 16 + j] & 0xF0));
    if (full * 32 == q->dim) continue;
    memset(o + 16 * full, 0, 16); /* the last group: dimensions past dim are 0 */
    for (uint32_t d = (uint32_t)(32 * full); d < q->dim; d++) {
      uint32_t j = d % 32;
      uint8_t v = (uint8_t)(c[d] >> 4);
      o[16 * full + (j & 15)] |= (uint8_t)(j < 16 ? v : v << 4);
    }
  }
}

bool hs_quant_sq4_fast(void) {
#ifdef HS_QUANT_X86
  return hs_distance_kernels_active()->level >= HS_SIMD_AVX512;
#else
  return false;
#endif
}

hs_status hs_quant_query_sq4(hs_quant_query *qq, hs_error *err) {
  const hs_quant *q = qq->q;
  if (q->kind != HS_QUANT_SQ8)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "quantizer query: 4-bit codes need SQ8");
  if (qq->a4 != NULL) return HS_OK;
  const size_t pd = 32 * (size_t)((q->dim + 31) / 32);
  qq->a4 = hs_calloc(pd, sizeof(float));
  qq->w4 = hs_calloc(pd, sizeof(float));
  if (qq->a4 == NULL || qq->w4 == NULL) {
    hs_free(qq->a4);
    hs_free(qq->w4);
    qq->a4 = qq->w4 = NULL;
    return hs_error_set(err, HS_ERR_NOMEM, "quantizer query: out of memory (dim %u)", q->dim);
  }
  double sw = 0;
  for (uint32_t d = 0; d < q->dim; d++) {
    qq->a4[d] = qq->a[d] - 7.5f * qq->w[d];
    qq->w4[d] = 16.0f * qq->w[d];
    sw += qq->w[d];
  }
  qq->cst4 = (float)(qq->cst - 7.5 * sw);
  return HS_OK;
}

float hs_quant_sq4_distance_ref(const hs_quant_query *qq, const uint8_t *code4) {
  const hs_quant *q = qq->q;
  const int mode = sq8_mode(q);
  float s = 0;
  for (uint32_t d = 0; d < q->dim; d++) {
    uint32_t g = d / 32, j = d % 32;
    uint8_t b = code4[16 * g + (j & 15)];
    float v = (float)(j < 16 ? b & 15 : b >> 4);
    if (mode == 1) {
      s += qq->w4[d] * v;
    } else {
      float t = qq->a4[d] - qq->w4[d] * v;
      s += mode == 2 ? fabsf(t) : t * t;
    }
  }
  return mode == 1 ? qq->cst4 - s : s;
}

#ifdef HS_QUANT_X86
/* Four rows of 4-bit codes: per 32-dimension group one 16-byte load, the
 * low nibbles are dimensions 0-15 and the high ones 16-31. */
__attribute__((target("avx512f"))) static void sq4_avx512_x4(const hs_quant_query *qq, int mode,
                                                             const uint8_t *const r[4],
                                                             float out[4]) {
  const uint32_t groups = (qq->q->dim + 31) / 32;
  const __m512i low = _mm512_set1_epi32(15);
  __m512 e[4], o[4];
  for (int i = 0; i < 4; i++) e[i] = o[i] = _mm512_setzero_ps();
  for (uint32_t g = 0; g < groups; g++) {
    const float *a = qq->a4 + 32 * g, *w = qq->w4 + 32 * g;
    const __m512 w0 = _mm512_loadu_ps(w), w1 = _mm512_loadu_ps(w + 16);
    const __m512 a0 = _mm512_loadu_ps(a), a1 = _mm512_loadu_ps(a + 16);
    for (int i = 0; i < 4; i++) {
      __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(r[i] + 16 * g)));
      __m512 c0 = _mm512_cvtepi32_ps(_mm512_and_si512(b, low));
      __m512 c1 = _mm512_cvtepi32_ps(_mm512_srli_epi32(b, 4));
      if (mode == 1) {
        e[i] = _mm512_fmadd_ps(w0, c0, e[i]);
        o[i] = _mm512_fmadd_ps(w1, c1, o[i]);
        continue;
      }
      __m512 t0 = _mm512_fnmadd_ps(w0, c0, a0), t1 = _mm512_fnmadd_ps(w1, c1, a1);
      if (mode == 2) {
        e[i] = _mm512_add_ps(e[i], _mm512_abs_ps(t0));
        o[i] = _mm512_add_ps(o[i], _mm512_abs_ps(t1));
      } else {
        e[i] = _mm512_fmadd_ps(t0, t0, e[i]);
        o[i] = _mm512_fmadd_ps(t1, t1, o[i]);
      }
    }
  }
  for (int i = 0; i < 4; i++) {
    float s = _mm512_reduce_add_ps(_mm512_add_ps(e[i], o[i]));
    out[i] = mode == 1 ? qq->cst4 - s : s;
  }
}
#endif

void hs_quant_sq4_gather(const hs_quant_query *qq, const uint8_t *codes4, const uint32_t *ids,
                         uint32_t n, float *out) {
  const size_t rs = hs_quant_sq4_size(qq->q);
  uint32_t i = 0;
#ifdef HS_QUANT_X86
  if (hs_quant_sq4_fast()) {
    const int mode = sq8_mode(qq->q);
    for (; i + 4 <= n; i += 4) {
      const uint8_t *r[4] = {codes4 + ids[i] * rs, codes4 + ids[i + 1] * rs,
                             codes4 + ids[i + 2] * rs, codes4 + ids[i + 3] * rs};
      sq4_avx512_x4(qq, mode, r, out + i);
    }
    for (; i < n; i++) { /* the tail: the same kernel, the row repeated */
      const uint8_t *r[4] = {codes4 + ids[i] * rs, codes4 + ids[i] * rs, codes4 + ids[i] * rs,
                             codes4 + ids[i] * rs};
      float t[4];
      sq4_avx512_x4(qq, mode, r, t);
      out[i] = t[0];
    }
  }
#endif
  for (; i < n; i++) out[i] = hs_quant_sq4_distance_ref(qq, codes4 + ids[i] * rs);
}

/* ------------------------------------------------------- serialization */

static bool put_u32(hs_buf *b, uint32_t v) {
  uint8_t t[4];
  hs_store_u32le(t, v);
  return hs_buf_append(b, t, 4);
}

static bool put_floats(hs_buf *b, const float *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &v[i], 4);
    if (!put_u32(b, u)) return false;
  }
  return true;
}

hs_status hs_quant_serialize(const hs_quant *q, hs_buf *out, hs_error *err) {
  size_t start = out->len;
  bool ok = hs_buf_append(out, MAGIC, 4) && put_u32(out, VERSION) && put_u32(out, q->kind) &&
            put_u32(out, q->metric) && put_u32(out, q->dim);
  if (q->kind == HS_QUANT_SQ8)
    ok = ok && put_floats(out, q->vmin, q->dim) && put_floats(out, q->step, q->dim);
  else
    ok = ok && put_u32(out, q->m) && put_u32(out, q->ksub) &&
         put_floats(out, q->cent, (size_t)q->ksub * q->dim);
  ok = ok && put_u32(out, hs_murmur3_x86_32(out->data + start, out->len - start, CHECKSUM_SEED));
  if (!ok) {
    out->len = start;
    return hs_error_set(err, HS_ERR_NOMEM, "quantizer serialize: out of memory");
  }
  return HS_OK;
}

static hs_status read_floats(const uint8_t *p, size_t n, float *out, const char *field, bool nonneg,
                             hs_error *err) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u = hs_load_u32le(p + 4 * i);
    memcpy(&out[i], &u, 4);
    if (!isfinite(out[i]) || (nonneg && out[i] < 0))
      return hs_error_set(err, HS_ERR_CORRUPT, "quantizer: %s[%zu] is %g (must be finite%s)", field,
                          i, (double)out[i], nonneg ? " and >= 0" : "");
  }
  return HS_OK;
}

hs_status hs_quant_parse(const uint8_t *data, size_t len, hs_quant **out, hs_error *err) {
  if (data == NULL || len < HEADER + 4)
    return hs_error_set(err, HS_ERR_CORRUPT, "quantizer: truncated (%zu bytes, header needs %d)",
                        len, HEADER + 4);
  if (memcmp(data, MAGIC, 4) != 0)
    return hs_error_set(err, HS_ERR_CORRUPT, "quantizer: bad magic (not %s)", MAGIC);
  uint32_t version = hs_load_u32le(data + 4), kind = hs_load_u32le(data + 8),
           metric = hs_load_u32le(data + 12), dim = hs_load_u32le(data + 16);
  if (version != VERSION)
    return hs_error_set(err, HS_ERR_CORRUPT, "quantizer: version %u (only %d is known)", version,
                        VERSION);
  if (kind != HS_QUANT_SQ8 && kind != HS_QUANT_PQ)
    return hs_error_set(err, HS_ERR_CORRUPT, "quantizer: kind %u is not SQ8 (1) or PQ (2)", kind);
  if (metric >= HS_METRIC_COUNT || !float_metric((hs_metric)metric))
    return hs_error_set(err, HS_ERR_CORRUPT, "quantizer: metric %u is not a float metric", metric);
  if (dim == 0 || dim > HS_QUANT_DIM_MAX)
    return hs_error_set(err, HS_ERR_CORRUPT, "quantizer: dim %u out of range [1, %d]", dim,
                        HS_QUANT_DIM_MAX);
  uint32_t m = 0, ksub = 0;
  size_t body = HEADER;
  if (kind == HS_QUANT_SQ8) {
    body += (size_t)8 * dim;
  } else {
    if (len < HEADER + 12)
      return hs_error_set(err, HS_ERR_CORRUPT, "quantizer: truncated PQ header (%zu bytes)", len);
    m = hs_load_u32le(data + HEADER);
    ksub = hs_load_u32le(data + HEADER + 4);
    if (m == 0 || m > dim || dim % m != 0)
      return hs_error_set(err, HS_ERR_CORRUPT, "quantizer: PQ m = %u does not divide dim %u", m,
                          dim);
    if (ksub == 0 || ksub > KSUB_MAX)
      return hs_error_set(err, HS_ERR_CORRUPT, "quantizer: PQ ksub = %u out of range [1, %d]", ksub,
                          KSUB_MAX);
    body += 8 + (size_t)4 * ksub * dim; /* <= 8 + 4 * 256 * 65536: no overflow */
  }
  if (len != body + 4)
    return hs_error_set(err, HS_ERR_CORRUPT, "quantizer: %zu bytes, header says %zu", len,
                        body + 4);
  uint32_t want = hs_load_u32le(data + body);
  uint32_t got = hs_murmur3_x86_32(data, body, CHECKSUM_SEED);
  if (want != got)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "quantizer: checksum mismatch (stored %08x, data %08x)", want, got);
  hs_quant *q = hs_calloc(1, sizeof *q);
  if (q == NULL) return hs_error_set(err, HS_ERR_NOMEM, "quantizer: out of memory");
  q->kind = (hs_quant_kind)kind;
  q->metric = (hs_metric)metric;
  q->dim = dim;
  q->m = m;
  q->ksub = ksub;
  if (!alloc_arrays(q)) {
    hs_quant_free(q);
    return hs_error_set(err, HS_ERR_NOMEM, "quantizer: out of memory (dim %u)", dim);
  }
  hs_status st;
  if (kind == HS_QUANT_SQ8) {
    st = read_floats(data + HEADER, dim, q->vmin, "min", false, err);
    if (st == HS_OK)
      st = read_floats(data + HEADER + 4 * (size_t)dim, dim, q->step, "step", true, err);
  } else {
    st = read_floats(data + HEADER + 8, (size_t)ksub * dim, q->cent, "centroid", false, err);
    if (st == HS_OK) pack_pq(q);
  }
  if (st != HS_OK) {
    hs_quant_free(q);
    return st;
  }
  *out = q;
  return HS_OK;
}
