/*
 * distance.c — scalar reference kernels, runtime dispatch and the public
 * distance functions (one-to-one, batch, float16/int8 storage, bit-packed,
 * sparse). The SIMD variants live in distance_avx2.c, distance_avx512.c and
 * distance_neon.c;
 * each must agree with the scalar kernels here up to float rounding, which
 * tests/c/test_distance.c checks on every level the CPU supports.
 *
 * The scalar kernels are the definition: one float32 accumulator, in index
 * order, as pgvector sums. Metric-level formulas (sqrt, negation, the
 * cosine quotient and its clamp) are applied here, once, in double, so
 * every SIMD level shares them.
 */
#include "distance.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

/* Defined in distance_avx2.c / distance_avx512.c / distance_neon.c: NULL
 * when the file was built without the instruction set (other targets). */
const hs_distance_kernels *hs_distance_kernels_avx2(void);
const hs_distance_kernels *hs_distance_kernels_avx512(void);
const hs_distance_kernels *hs_distance_kernels_neon(void);

/* ------------------------------------------------------ scalar kernels */

static float scalar_l2sq_f32(const float *a, const float *b, size_t n) {
  float s = 0.0f;
  for (size_t i = 0; i < n; i++) {
    float d = a[i] - b[i];
    s += d * d;
  }
  return s;
}

static float scalar_dot_f32(const float *a, const float *b, size_t n) {
  float s = 0.0f;
  for (size_t i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

static float scalar_l1_f32(const float *a, const float *b, size_t n) {
  float s = 0.0f;
  for (size_t i = 0; i < n; i++) s += fabsf(a[i] - b[i]);
  return s;
}

static void scalar_cosine_parts_f32(const float *a, const float *b, size_t n, float out[3]) {
  float ab = 0.0f, aa = 0.0f, bb = 0.0f;
  for (size_t i = 0; i < n; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  out[0] = ab;
  out[1] = aa;
  out[2] = bb;
}

static uint64_t scalar_hamming_u64(const uint64_t *a, const uint64_t *b, size_t words) {
  uint64_t c = 0;
  for (size_t i = 0; i < words; i++) c += (uint64_t)__builtin_popcountll(a[i] ^ b[i]);
  return c;
}

static void scalar_jaccard_counts_u64(const uint64_t *a, const uint64_t *b, size_t words,
                                      uint64_t out[2]) {
  uint64_t inter = 0, uni = 0;
  for (size_t i = 0; i < words; i++) {
    inter += (uint64_t)__builtin_popcountll(a[i] & b[i]);
    uni += (uint64_t)__builtin_popcountll(a[i] | b[i]);
  }
  out[0] = inter;
  out[1] = uni;
}

static const hs_distance_kernels scalar_kernels = {
    .level = HS_SIMD_SCALAR,
    .l2sq_f32 = scalar_l2sq_f32,
    .dot_f32 = scalar_dot_f32,
    .l1_f32 = scalar_l1_f32,
    .cosine_parts_f32 = scalar_cosine_parts_f32,
    .hamming_u64 = scalar_hamming_u64,
    .jaccard_counts_u64 = scalar_jaccard_counts_u64,
};

/* ------------------------------------------------------------ dispatch */

static const hs_distance_kernels *active_kernels = &scalar_kernels;
static pthread_once_t dispatch_once = PTHREAD_ONCE_INIT;

const char *hs_simd_level_name(hs_simd_level level) {
  switch (level) {
  case HS_SIMD_SCALAR: return "scalar";
  case HS_SIMD_AVX2: return "avx2";
  case HS_SIMD_AVX512: return "avx512";
  case HS_SIMD_NEON: return "neon";
  default: return "unknown";
  }
}

const hs_distance_kernels *hs_distance_kernels_for(hs_simd_level level) {
  switch (level) {
  case HS_SIMD_SCALAR: return &scalar_kernels;
  case HS_SIMD_AVX2: return hs_distance_kernels_avx2();
  case HS_SIMD_AVX512: return hs_distance_kernels_avx512();
  case HS_SIMD_NEON: return hs_distance_kernels_neon();
  default: return NULL;
  }
}

/* Best level the CPU supports, capped by HS_SIMD (unknown values are
 * ignored: a typo must not silently slow every query, nor crash). */
static void dispatch_init(void) {
  int cap = HS_SIMD_LEVEL_COUNT - 1;
  const char *env = getenv("HS_SIMD");
  if (env != NULL) {
    for (int l = 0; l < HS_SIMD_LEVEL_COUNT; l++) {
      if (strcmp(env, hs_simd_level_name((hs_simd_level)l)) == 0) cap = l;
    }
  }
  for (int l = cap; l >= 0; l--) {
    const hs_distance_kernels *k = hs_distance_kernels_for((hs_simd_level)l);
    if (k != NULL) {
      active_kernels = k;
      return;
    }
  }
}

const hs_distance_kernels *hs_distance_kernels_active(void) {
  pthread_once(&dispatch_once, dispatch_init);
  return active_kernels;
}

/* ------------------------------------------------------------- metrics */

static const struct {
  const char *name, *op;
} metric_names[HS_METRIC_COUNT] = {
    [HS_METRIC_L2] = {"l2", "<->"},           [HS_METRIC_L2SQ] = {"l2sq", NULL},
    [HS_METRIC_IP] = {"ip", "<#>"},           [HS_METRIC_COSINE] = {"cosine", "<=>"},
    [HS_METRIC_L1] = {"l1", "<+>"},           [HS_METRIC_HAMMING] = {"hamming", "<~>"},
    [HS_METRIC_JACCARD] = {"jaccard", "<%>"},
};

hs_status hs_metric_parse(const char *name, hs_metric *out, hs_error *err) {
  if (name == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "metric: NULL name");
  if (strcmp(name, "inner_product") == 0 || strcmp(name, "dot") == 0) {
    *out = HS_METRIC_IP;
    return HS_OK;
  }
  if (strcmp(name, "euclidean") == 0) {
    *out = HS_METRIC_L2;
    return HS_OK;
  }
  for (int m = 0; m < HS_METRIC_COUNT; m++) {
    if (strcmp(name, metric_names[m].name) == 0 ||
        (metric_names[m].op != NULL && strcmp(name, metric_names[m].op) == 0)) {
      *out = (hs_metric)m;
      return HS_OK;
    }
  }
  return hs_error_set(err, HS_ERR_INVALID_ARG,
                      "metric '%s': expected l2, l2sq, ip, cosine, l1, hamming or jaccard", name);
}

const char *hs_metric_name(hs_metric metric) {
  return (unsigned)metric < HS_METRIC_COUNT ? metric_names[metric].name : "unknown";
}

/* pgvector: similarity = ab / sqrt(aa * bb) in double, NaN stays NaN (zero
 * vectors give 0/0), otherwise clamped to [-1, 1] against rounding. */
static float cosine_from_parts(double ab, double aa, double bb) {
  double sim = ab / sqrt(aa * bb);
  if (isnan(sim)) return NAN;
  if (sim > 1.0) sim = 1.0;
  if (sim < -1.0) sim = -1.0;
  return (float)(1.0 - sim);
}

float hs_distance_l2sq_f32(const float *a, const float *b, size_t dim) {
  return hs_distance_kernels_active()->l2sq_f32(a, b, dim);
}
float hs_distance_l2_f32(const float *a, const float *b, size_t dim) {
  return sqrtf(hs_distance_kernels_active()->l2sq_f32(a, b, dim));
}
float hs_distance_ip_f32(const float *a, const float *b, size_t dim) {
  return -hs_distance_kernels_active()->dot_f32(a, b, dim);
}
float hs_distance_l1_f32(const float *a, const float *b, size_t dim) {
  return hs_distance_kernels_active()->l1_f32(a, b, dim);
}
float hs_distance_cosine_f32(const float *a, const float *b, size_t dim) {
  float p[3];
  hs_distance_kernels_active()->cosine_parts_f32(a, b, dim, p);
  return cosine_from_parts(p[0], p[1], p[2]);
}

static bool metric_is_float(hs_metric m) {
  return m == HS_METRIC_L2 || m == HS_METRIC_L2SQ || m == HS_METRIC_IP || m == HS_METRIC_COSINE ||
         m == HS_METRIC_L1;
}

static hs_status not_float_metric(hs_metric m, hs_error *err) {
  return hs_error_set(err, HS_ERR_INVALID_ARG,
                      "metric %s: not defined on float vectors (use the bit-vector functions)",
                      hs_metric_name(m));
}

hs_status hs_distance_f32(hs_metric metric, const float *a, const float *b, size_t dim, float *out,
                          hs_error *err) {
  return hs_distance_f32_batch(metric, a, b, 1, dim, out, err);
}

hs_status hs_distance_f32_batch(hs_metric metric, const float *query, const float *rows, size_t n,
                                size_t dim, float *out, hs_error *err) {
  if (!metric_is_float(metric)) return not_float_metric(metric, err);
  const hs_distance_kernels *k = hs_distance_kernels_active();
  switch (metric) {
  case HS_METRIC_L2:
    for (size_t i = 0; i < n; i++) out[i] = sqrtf(k->l2sq_f32(query, rows + i * dim, dim));
    break;
  case HS_METRIC_L2SQ:
    for (size_t i = 0; i < n; i++) out[i] = k->l2sq_f32(query, rows + i * dim, dim);
    break;
  case HS_METRIC_IP:
    for (size_t i = 0; i < n; i++) out[i] = -k->dot_f32(query, rows + i * dim, dim);
    break;
  case HS_METRIC_L1:
    for (size_t i = 0; i < n; i++) out[i] = k->l1_f32(query, rows + i * dim, dim);
    break;
  default: { /* cosine: the query norm once, then dot and row norm per row */
    float qq = k->dot_f32(query, query, dim);
    for (size_t i = 0; i < n; i++) {
      const float *r = rows + i * dim;
      out[i] = cosine_from_parts(k->dot_f32(query, r, dim), qq, k->dot_f32(r, r, dim));
    }
    break;
  }
  }
  return HS_OK;
}

/* ------------------------------------------- float16 and int8 storage */

float hs_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13); /* inf or NaN (payload kept) */
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else {
    float f = ldexpf((float)man, -24); /* zero or subnormal: man * 2^-24 */
    memcpy(&bits, &f, sizeof bits);
    bits |= sign;
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t hs_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);  /* NaN */
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: inf */
  if (ax < 0x38800000u) {             /* below 2^-14: subnormal half, value / 2^-24 rounded */
    float m = fabsf(f) * 16777216.0f; /* exact: power-of-two scale */
    return (uint16_t)(sign | (uint16_t)nearbyintf(m)); /* ties-to-even in default mode */
  }
  uint32_t e = (ax >> 23) - 112, man = ax & 0x7fffffu;
  uint32_t h = (e << 10) | (man >> 13), rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* carry may bump the exponent */
  return (uint16_t)(sign | h);
}

/* Storage variants convert each row into a stack block of floats and reuse
 * the float32 kernels; blocks bound the stack use for any dim. */
#define HS_CONVERT_BLOCK 256

typedef void (*convert_fn)(const void *row, size_t start, size_t count, float *dst);

static void convert_f16(const void *row, size_t start, size_t count, float *dst) {
  const uint16_t *r = (const uint16_t *)row + start;
  for (size_t i = 0; i < count; i++) dst[i] = hs_f16_to_f32(r[i]);
}

static void convert_i8(const void *row, size_t start, size_t count, float *dst) {
  const int8_t *r = (const int8_t *)row + start;
  for (size_t i = 0; i < count; i++) dst[i] = (float)r[i];
}

static hs_status storage_batch(hs_metric metric, const float *query, const void *rows,
                               size_t elem_size, size_t n, size_t dim, convert_fn convert,
                               float *out, hs_error *err) {
  if (!metric_is_float(metric)) return not_float_metric(metric, err);
  const hs_distance_kernels *k = hs_distance_kernels_active();
  float buf[HS_CONVERT_BLOCK];
  float qq = metric == HS_METRIC_COSINE ? k->dot_f32(query, query, dim) : 0.0f;
  for (size_t i = 0; i < n; i++) {
    const uint8_t *row = (const uint8_t *)rows + i * dim * elem_size;
    float acc = 0.0f, rr = 0.0f;
    for (size_t s = 0; s < dim; s += HS_CONVERT_BLOCK) {
      size_t c = dim - s < HS_CONVERT_BLOCK ? dim - s : HS_CONVERT_BLOCK;
      convert(row, s, c, buf);
      switch (metric) {
      case HS_METRIC_L2:
      case HS_METRIC_L2SQ: acc += k->l2sq_f32(query + s, buf, c); break;
      case HS_METRIC_L1: acc += k->l1_f32(query + s, buf, c); break;
      default: /* IP, COSINE */
        acc += k->dot_f32(query + s, buf, c);
        if (metric == HS_METRIC_COSINE) rr += k->dot_f32(buf, buf, c);
        break;
      }
    }
    switch (metric) {
    case HS_METRIC_L2: out[i] = sqrtf(acc); break;
    case HS_METRIC_IP: out[i] = -acc; break;
    case HS_METRIC_COSINE: out[i] = cosine_from_parts(acc, qq, rr); break;
    default: out[i] = acc; break;
    }
  }
  return HS_OK;
}

hs_status hs_distance_f16_batch(hs_metric metric, const float *query, const uint16_t *rows,
                                size_t n, size_t dim, float *out, hs_error *err) {
  return storage_batch(metric, query, rows, sizeof(uint16_t), n, dim, convert_f16, out, err);
}

hs_status hs_distance_i8_batch(hs_metric metric, const float *query, const int8_t *rows, size_t n,
                               size_t dim, float *out, hs_error *err) {
  return storage_batch(metric, query, rows, sizeof(int8_t), n, dim, convert_i8, out, err);
}

/* ---------------------------------------------- bit-packed binary vectors */

uint64_t hs_distance_hamming_u64(const uint64_t *a, const uint64_t *b, size_t words) {
  return hs_distance_kernels_active()->hamming_u64(a, b, words);
}

/* pgvector: 1 - inter/union, and 1 (not NaN) when both are all zeros. */
static float jaccard_from_counts(uint64_t inter, uint64_t uni) {
  if (uni == 0) return 1.0f;
  return (float)(1.0 - (double)inter / (double)uni);
}

float hs_distance_jaccard_u64(const uint64_t *a, const uint64_t *b, size_t words) {
  uint64_t c[2];
  hs_distance_kernels_active()->jaccard_counts_u64(a, b, words, c);
  return jaccard_from_counts(c[0], c[1]);
}

/* Byte-packed: whole 8-byte words through the kernel (memcpy, since rows
 * need not be 8-byte aligned), the tail bytes one by one. */
static void bits_counts(const hs_distance_kernels *k, const uint8_t *a, const uint8_t *b,
                        size_t nbytes, bool jaccard, uint64_t out[2]) {
  uint64_t wa[32], wb[32];
  out[0] = out[1] = 0;
  size_t words = nbytes / 8;
  for (size_t s = 0; s < words; s += 32) {
    size_t c = words - s < 32 ? words - s : 32;
    memcpy(wa, a + s * 8, c * 8);
    memcpy(wb, b + s * 8, c * 8);
    if (jaccard) {
      uint64_t t[2];
      k->jaccard_counts_u64(wa, wb, c, t);
      out[0] += t[0];
      out[1] += t[1];
    } else {
      out[0] += k->hamming_u64(wa, wb, c);
    }
  }
  for (size_t i = words * 8; i < nbytes; i++) {
    if (jaccard) {
      out[0] += (uint64_t)__builtin_popcount((unsigned)(a[i] & b[i]));
      out[1] += (uint64_t)__builtin_popcount((unsigned)(a[i] | b[i]));
    } else {
      out[0] += (uint64_t)__builtin_popcount((unsigned)(a[i] ^ b[i]));
    }
  }
}

uint64_t hs_distance_hamming_u8(const uint8_t *a, const uint8_t *b, size_t nbytes) {
  uint64_t c[2];
  bits_counts(hs_distance_kernels_active(), a, b, nbytes, false, c);
  return c[0];
}

float hs_distance_jaccard_u8(const uint8_t *a, const uint8_t *b, size_t nbytes) {
  uint64_t c[2];
  bits_counts(hs_distance_kernels_active(), a, b, nbytes, true, c);
  return jaccard_from_counts(c[0], c[1]);
}

hs_status hs_distance_bits_batch(hs_metric metric, const uint8_t *query, const uint8_t *rows,
                                 size_t n, size_t nbytes, float *out, hs_error *err) {
  if (metric != HS_METRIC_HAMMING && metric != HS_METRIC_JACCARD) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "metric %s: not defined on bit vectors",
                        hs_metric_name(metric));
  }
  const hs_distance_kernels *k = hs_distance_kernels_active();
  bool jac = metric == HS_METRIC_JACCARD;
  for (size_t i = 0; i < n; i++) {
    uint64_t c[2];
    bits_counts(k, query, rows + i * nbytes, nbytes, jac, c);
    out[i] = jac ? jaccard_from_counts(c[0], c[1]) : (float)c[0];
  }
  return HS_OK;
}

/* ------------------------------------------------------ sparse vectors */

hs_status hs_sparse_vec_validate(const hs_sparse_vec *v, hs_error *err) {
  if (v->nnz > 0 && (v->indices == NULL || v->values == NULL)) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "sparse vector: NULL indices or values");
  }
  if (v->nnz > v->dim) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "sparse vector: %zu entries exceed dim %u", v->nnz,
                        v->dim);
  }
  for (size_t i = 0; i < v->nnz; i++) {
    if (v->indices[i] >= v->dim) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "sparse vector: index %u at position %zu >= dim %u", v->indices[i], i,
                          v->dim);
    }
    if (i > 0 && v->indices[i] <= v->indices[i - 1]) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "sparse vector: indices not strictly increasing at position %zu", i);
    }
  }
  return HS_OK;
}

/* A merge over both index lists; each pair contributes once, in index
 * order, so the result equals the dense computation with float32 sums of
 * the non-zero terms. */
hs_status hs_distance_sparse(hs_metric metric, const hs_sparse_vec *a, const hs_sparse_vec *b,
                             float *out, hs_error *err) {
  if (!metric_is_float(metric)) return not_float_metric(metric, err);
  if (a->dim != b->dim) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "sparse vectors: different dimensions %u and %u",
                        a->dim, b->dim);
  }
  hs_status st = hs_sparse_vec_validate(a, err);
  if (st == HS_OK) st = hs_sparse_vec_validate(b, err);
  if (st != HS_OK) return st;
  float ab = 0.0f, aa = 0.0f, bb = 0.0f, l2 = 0.0f, l1 = 0.0f;
  size_t i = 0, j = 0;
  while (i < a->nnz || j < b->nnz) {
    float x = 0.0f, y = 0.0f;
    if (j >= b->nnz || (i < a->nnz && a->indices[i] < b->indices[j])) {
      x = a->values[i++];
    } else if (i >= a->nnz || b->indices[j] < a->indices[i]) {
      y = b->values[j++];
    } else { /* only shared indices enter the product: inf * implicit 0 is no NaN */
      x = a->values[i++];
      y = b->values[j++];
      ab += x * y;
    }
    float d = x - y;
    aa += x * x;
    bb += y * y;
    l2 += d * d;
    l1 += fabsf(d);
  }
  switch (metric) {
  case HS_METRIC_L2: *out = sqrtf(l2); break;
  case HS_METRIC_L2SQ: *out = l2; break;
  case HS_METRIC_IP: *out = -ab; break;
  case HS_METRIC_L1: *out = l1; break;
  default: *out = cosine_from_parts(ab, aa, bb); break;
  }
  return HS_OK;
}
