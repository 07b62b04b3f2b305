/*
 * test_distance.c — every distance kernel at every SIMD level this CPU
 * supports against the scalar reference, on random vectors of many
 * dimensions (tails of every length), plus pgvector edge cases: zero
 * vectors, NaN, inf, values whose squares overflow, float16/int8 storage,
 * bit-packed and sparse vectors, and the metric-name parser.
 */
#include <float.h>
#include <math.h>

#include "hs_test.h"
#include "index/vector/distance.h"

static const size_t dims[] = {0, 1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100, 768, 1536};
#define N_DIMS (sizeof dims / sizeof dims[0])
#define DIM_MAX 1536

static uint64_t rng = 42;

static float rand_f(void) {
  return (float)((double)(hs_test_rand(&rng) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* Reordered float sums differ from the in-order reference by at most about
 * n * eps * (sum of |terms|); the bound below is generous in n. */
static int close_to(double got, double want, double magnitude) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= 1e-5 * magnitude + 1e-6;
}

static void test_levels_against_scalar(void) {
  static float a[DIM_MAX], b[DIM_MAX];
  static uint64_t wa[DIM_MAX / 8], wb[DIM_MAX / 8];
  const hs_distance_kernels *ref = hs_distance_kernels_for(HS_SIMD_SCALAR);
  CHECK(ref != NULL);
  for (int lv = 0; lv < HS_SIMD_LEVEL_COUNT; lv++) {
    const hs_distance_kernels *k = hs_distance_kernels_for((hs_simd_level)lv);
    if (k == NULL) {
      printf("level %s: not supported here, skipped\n", hs_simd_level_name((hs_simd_level)lv));
      continue;
    }
    printf("level %s: checking\n", hs_simd_level_name((hs_simd_level)lv));
    CHECK_EQ_INT(k->level, lv);
    for (size_t d = 0; d < N_DIMS; d++) {
      size_t n = dims[d];
      for (int rep = 0; rep < 5; rep++) {
        double mag_sq = 0, mag_ab = 0, mag_l1 = 0, mag_aa = 0, mag_bb = 0;
        float scale = rep == 4 ? 1000.0f : 1.0f;
        for (size_t i = 0; i < n; i++) {
          a[i] = rand_f() * scale;
          b[i] = rand_f() * scale;
          double df = (double)a[i] - b[i];
          mag_sq += df * df;
          mag_ab += fabs((double)a[i] * b[i]);
          mag_l1 += fabs(df);
          mag_aa += (double)a[i] * a[i];
          mag_bb += (double)b[i] * b[i];
        }
        CHECK(close_to(k->l2sq_f32(a, b, n), ref->l2sq_f32(a, b, n), mag_sq));
        CHECK(close_to(k->dot_f32(a, b, n), ref->dot_f32(a, b, n), mag_ab));
        CHECK(close_to(k->l1_f32(a, b, n), ref->l1_f32(a, b, n), mag_l1));
        float p[3], q[3];
        k->cosine_parts_f32(a, b, n, p);
        ref->cosine_parts_f32(a, b, n, q);
        CHECK(close_to(p[0], q[0], mag_ab));
        CHECK(close_to(p[1], q[1], mag_aa));
        CHECK(close_to(p[2], q[2], mag_bb));
        /* Against a double-precision formula too: the reference itself. */
        CHECK(close_to(ref->l2sq_f32(a, b, n), mag_sq, mag_sq));
        size_t words = n / 8 + 1 > DIM_MAX / 8 ? DIM_MAX / 8 : n / 8 + 1;
        for (size_t i = 0; i < words; i++) {
          wa[i] = hs_test_rand(&rng);
          wb[i] = rep == 1 ? wa[i] : hs_test_rand(&rng) & hs_test_rand(&rng);
        }
        CHECK_EQ_INT(k->hamming_u64(wa, wb, words), ref->hamming_u64(wa, wb, words));
        uint64_t c1[2], c2[2];
        k->jaccard_counts_u64(wa, wb, words, c1);
        ref->jaccard_counts_u64(wa, wb, words, c2);
        CHECK_EQ_INT(c1[0], c2[0]);
        CHECK_EQ_INT(c1[1], c2[1]);
      }
    }
    /* Every tail length of every level's unrolled loops (n mod 32). */
    for (size_t n = 0; n <= 80; n++) {
      double mag = 0;
      for (size_t i = 0; i < n; i++) {
        a[i] = rand_f();
        b[i] = rand_f();
        mag += fabs((double)a[i]) + fabs((double)b[i]);
      }
      CHECK(close_to(k->l2sq_f32(a, b, n), ref->l2sq_f32(a, b, n), 4 * mag));
      CHECK(close_to(k->dot_f32(a, b, n), ref->dot_f32(a, b, n), mag));
      CHECK(close_to(k->l1_f32(a, b, n), ref->l1_f32(a, b, n), mag));
      for (size_t w = 0; w < n && w < DIM_MAX / 8; w++) wa[w] = hs_test_rand(&rng);
      CHECK_EQ_INT(k->hamming_u64(wa, wa + 1, n / 2), ref->hamming_u64(wa, wa + 1, n / 2));
    }
    /* Edge values: same result class (NaN, inf, exact) at every level. */
    for (size_t d = 0; d < N_DIMS; d++) {
      size_t n = dims[d];
      if (n == 0) continue;
      for (size_t i = 0; i < n; i++) a[i] = b[i] = 0.0f;
      CHECK(k->l2sq_f32(a, b, n) == 0.0f);
      a[n / 2] = NAN;
      CHECK(isnan(k->l2sq_f32(a, b, n)) && isnan(k->dot_f32(a, b, n)) && isnan(k->l1_f32(a, b, n)));
      a[n / 2] = INFINITY;
      CHECK(isinf(k->l2sq_f32(a, b, n)) && isinf(k->l1_f32(a, b, n)));
      CHECK(isnan(k->dot_f32(a, b, n))); /* inf * 0 */
      a[n / 2] = 3e38f;
      b[n / 2] = -3e38f;
      CHECK(isinf(k->l2sq_f32(a, b, n))); /* square overflows float32, as pgvector */
      CHECK(close_to(k->l1_f32(a, b, n), INFINITY, 0));
      a[n / 2] = b[n / 2] = 0.0f;
    }
  }
}

static void test_public_semantics(void) {
  hs_error err = {0};
  float a[4] = {1, 2, 3, 4}, b[4] = {4, 3, 2, 1}, z[4] = {0, 0, 0, 0}, out[3];
  CHECK(fabsf(hs_distance_l2_f32(a, b, 4) - sqrtf(20.0f)) < 1e-6f);
  CHECK(hs_distance_l2sq_f32(a, b, 4) == 20.0f);
  CHECK(hs_distance_ip_f32(a, b, 4) == -20.0f);
  CHECK(hs_distance_l1_f32(a, b, 4) == 8.0f);
  CHECK(fabsf(hs_distance_cosine_f32(a, b, 4) - (1.0f - 20.0f / 30.0f)) < 1e-6f);
  /* pgvector: cosine with a zero vector is NaN; identical vectors give 0,
   * opposite ones 2 even when rounding would overshoot (clamped). */
  CHECK(isnan(hs_distance_cosine_f32(z, a, 4)));
  CHECK(isnan(hs_distance_cosine_f32(z, z, 4)));
  CHECK(hs_distance_cosine_f32(a, a, 4) >= 0.0f && hs_distance_cosine_f32(a, a, 4) < 1e-6f);
  float na[2] = {1.1f, 1.1f}, nb[2] = {-1.1f, -1.1f};
  CHECK(hs_distance_cosine_f32(na, nb, 2) == 2.0f);
  CHECK(hs_distance_l2_f32(a, b, 0) == 0.0f);

  /* Batch equals one-to-one for every float metric. */
  float rows[3 * 4] = {4, 3, 2, 1, 0, 0, 0, 0, 1, 2, 3, 4};
  for (int m = 0; m < HS_METRIC_COUNT; m++) {
    hs_status st = hs_distance_f32_batch((hs_metric)m, a, rows, 3, 4, out, &err);
    if (m == HS_METRIC_HAMMING || m == HS_METRIC_JACCARD) {
      CHECK_EQ_INT(st, HS_ERR_INVALID_ARG);
      err.status = HS_OK;
      continue;
    }
    CHECK_EQ_INT(st, HS_OK);
    for (int i = 0; i < 3; i++) {
      float one;
      CHECK_OK(hs_distance_f32((hs_metric)m, a, rows + i * 4, 4, &one, &err), &err);
      CHECK((isnan(one) && isnan(out[i])) || fabsf(one - out[i]) <= 1e-5f * (1 + fabsf(one)));
    }
  }

  hs_metric m;
  CHECK_OK(hs_metric_parse("<=>", &m, &err), &err);
  CHECK_EQ_INT(m, HS_METRIC_COSINE);
  CHECK_OK(hs_metric_parse("inner_product", &m, &err), &err);
  CHECK_EQ_INT(m, HS_METRIC_IP);
  CHECK_EQ_INT(hs_metric_parse("manhattan?", &m, &err), HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "manhattan?") != NULL);
}

static void test_storage_variants(void) {
  hs_error err = {0};
  /* float16 conversion: exact values, specials, rounding, overflow. */
  CHECK(hs_f16_to_f32(0x3c00) == 1.0f);
  CHECK(hs_f16_to_f32(0xc000) == -2.0f);
  CHECK(hs_f16_to_f32(0x7bff) == 65504.0f);
  CHECK(hs_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
  CHECK(isinf(hs_f16_to_f32(0x7c00)) && isnan(hs_f16_to_f32(0x7e00)));
  CHECK_EQ_INT(hs_f32_to_f16(1.0f), 0x3c00);
  CHECK_EQ_INT(hs_f32_to_f16(65504.0f), 0x7bff);
  CHECK_EQ_INT(hs_f32_to_f16(65520.0f), 0x7c00);
  CHECK_EQ_INT(hs_f32_to_f16(ldexpf(1.0f, -24)), 0x0001);
  CHECK_EQ_INT(hs_f32_to_f16(-0.0f), 0x8000);
  for (uint32_t h = 0; h < 0x10000; h++) { /* every finite half round-trips */
    if ((h & 0x7c00) == 0x7c00) continue;
    if (hs_f32_to_f16(hs_f16_to_f32((uint16_t)h)) != h) {
      CHECK_EQ_INT(hs_f32_to_f16(hs_f16_to_f32((uint16_t)h)), h);
      break;
    }
  }
  /* Storage batches equal the float32 batch on the converted rows. */
  enum { N = 5, D = 300 };
  static float q[D], rf[N * D], want[N], got[N];
  static uint16_t rh[N * D];
  static int8_t ri[N * D];
  for (size_t i = 0; i < D; i++) q[i] = rand_f();
  const hs_metric ms[] = {HS_METRIC_L2, HS_METRIC_L2SQ, HS_METRIC_IP, HS_METRIC_COSINE,
                          HS_METRIC_L1};
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < N * D; i++) {
      if (pass == 0) {
        rh[i] = hs_f32_to_f16(rand_f() * 4);
        rf[i] = hs_f16_to_f32(rh[i]);
      } else {
        ri[i] = (int8_t)(hs_test_rand(&rng) & 0xff);
        rf[i] = (float)ri[i];
      }
    }
    for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
      CHECK_OK(hs_distance_f32_batch(ms[k], q, rf, N, D, want, &err), &err);
      if (pass == 0) {
        CHECK_OK(hs_distance_f16_batch(ms[k], q, rh, N, D, got, &err), &err);
      } else {
        CHECK_OK(hs_distance_i8_batch(ms[k], q, ri, N, D, got, &err), &err);
      }
      for (int i = 0; i < N; i++) CHECK(fabsf(got[i] - want[i]) <= 1e-4f * (1 + fabsf(want[i])));
    }
  }
  CHECK_EQ_INT(hs_distance_i8_batch(HS_METRIC_HAMMING, q, ri, N, D, got, &err), HS_ERR_INVALID_ARG);
}

static void test_bits(void) {
  hs_error err = {0};
  /* pgvector: hamming(101, 011) = 2, jaccard = 2/3, jaccard(000, 000) = 1. */
  uint8_t a = 0x5, b = 0x3, z = 0;
  CHECK_EQ_INT(hs_distance_hamming_u8(&a, &b, 1), 2);
  CHECK(fabsf(hs_distance_jaccard_u8(&a, &b, 1) - 2.0f / 3.0f) < 1e-7f);
  CHECK(hs_distance_jaccard_u8(&z, &z, 1) == 1.0f);
  CHECK(hs_distance_jaccard_u8(&a, &a, 1) == 0.0f);
  /* Byte-packed at odd lengths and offsets equals the bit-by-bit count. */
  static uint8_t buf[3 * 77 + 1];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)hs_test_rand(&rng);
  for (size_t nb = 0; nb <= 77; nb += 11) {
    const uint8_t *q = buf + 1, *rows = buf + 1 + nb; /* unaligned on purpose */
    float out[2];
    CHECK_OK(hs_distance_bits_batch(HS_METRIC_HAMMING, q, rows, 2, nb, out, &err), &err);
    float jout[2];
    CHECK_OK(hs_distance_bits_batch(HS_METRIC_JACCARD, q, rows, 2, nb, jout, &err), &err);
    for (int r = 0; r < 2; r++) {
      uint64_t x = 0, in = 0, un = 0;
      for (size_t i = 0; i < nb * 8; i++) {
        int p = (q[i / 8] >> (i % 8)) & 1, s = (rows[r * nb + i / 8] >> (i % 8)) & 1;
        x += (uint64_t)(p ^ s);
        in += (uint64_t)(p & s);
        un += (uint64_t)(p | s);
      }
      CHECK(out[r] == (float)x);
      CHECK(fabsf(jout[r] - (un ? (float)(1.0 - (double)in / (double)un) : 1.0f)) < 1e-7f);
    }
  }
  uint64_t w1[2] = {~0ull, 0}, w2[2] = {0, ~0ull};
  CHECK_EQ_INT(hs_distance_hamming_u64(w1, w2, 2), 128);
  CHECK(hs_distance_jaccard_u64(w1, w2, 2) == 1.0f);
  float o;
  CHECK_EQ_INT(hs_distance_bits_batch(HS_METRIC_L2, &a, &b, 1, 1, &o, &err), HS_ERR_INVALID_ARG);
}

static void test_sparse(void) {
  hs_error err = {0};
  /* Dense equivalents: a = [0,1,0,2,0], b = [3,0,0,4,5]. */
  uint32_t ia[] = {1, 3}, ib[] = {0, 3, 4};
  float va[] = {1, 2}, vb[] = {3, 4, 5};
  hs_sparse_vec sa = {ia, va, 2, 5}, sb = {ib, vb, 3, 5};
  float da[5] = {0, 1, 0, 2, 0}, db[5] = {3, 0, 0, 4, 5}, got, want;
  const hs_metric ms[] = {HS_METRIC_L2, HS_METRIC_L2SQ, HS_METRIC_IP, HS_METRIC_COSINE,
                          HS_METRIC_L1};
  for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
    CHECK_OK(hs_distance_sparse(ms[k], &sa, &sb, &got, &err), &err);
    CHECK_OK(hs_distance_f32(ms[k], da, db, 5, &want, &err), &err);
    CHECK(fabsf(got - want) <= 1e-6f * (1 + fabsf(want)));
  }
  /* pgvector: cosine('{}/2', '{1:1}/2') is NaN; disjoint supports give 1. */
  hs_sparse_vec empty = {NULL, NULL, 0, 5};
  CHECK_OK(hs_distance_sparse(HS_METRIC_COSINE, &empty, &sb, &got, &err), &err);
  CHECK(isnan(got));
  uint32_t i1 = 0, i2 = 1;
  float one = 1;
  hs_sparse_vec e1 = {&i1, &one, 1, 2}, e2 = {&i2, &one, 1, 2};
  CHECK_OK(hs_distance_sparse(HS_METRIC_COSINE, &e1, &e2, &got, &err), &err);
  CHECK(got == 1.0f);
  /* An inf entry against an implicit zero does not make the product NaN. */
  float inf = INFINITY;
  hs_sparse_vec ei = {&i1, &inf, 1, 2};
  CHECK_OK(hs_distance_sparse(HS_METRIC_IP, &ei, &e2, &got, &err), &err);
  CHECK(got == 0.0f);
  /* Invalid inputs are refused, naming the problem. */
  uint32_t bad[] = {3, 1};
  hs_sparse_vec sbad = {bad, va, 2, 5}, sdim = {ia, va, 2, 4};
  CHECK_EQ_INT(hs_distance_sparse(HS_METRIC_L2, &sbad, &sa, &got, &err), HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "increasing") != NULL);
  err.status = HS_OK;
  CHECK_EQ_INT(hs_distance_sparse(HS_METRIC_L2, &sa, &sdim, &got, &err), HS_ERR_INVALID_ARG);
  err.status = HS_OK;
  uint32_t big[] = {7};
  hs_sparse_vec sbig = {big, va, 1, 5};
  CHECK_EQ_INT(hs_sparse_vec_validate(&sbig, &err), HS_ERR_INVALID_ARG);
}

int main(void) {
  printf("active level: %s\n", hs_simd_level_name(hs_distance_kernels_active()->level));
  test_levels_against_scalar();
  test_public_semantics();
  test_storage_variants();
  test_bits();
  test_sparse();
  return hs_test_finish("test_distance");
}
