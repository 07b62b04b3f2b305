/*
 * test_vidx_lean.c — quantized vector indexes opened from a file keep the
 * float32 vectors out of memory ("lean": read with pread for re-ranking and
 * exact scans, src/index/vector/README.md "Memory of a quantized index").
 * For SQ8 (L2, IP, cosine, L1) and PQ (L2, IP) on clustered random data:
 *   * the same bytes opened from memory (vectors mapped, the old path),
 *     from a file (lean) and from a file with HS_VIDX_RESIDENT=1 answer
 *     identically (rows and distances bit for bit) for unfiltered queries,
 *     partial re-ranking, filter-aware traversal and exact filtered scans;
 *   * the default re-rank (SQ8: stopped by the quantizer's error bound)
 *     answers exactly as re-ranking the whole beam;
 *   * every reported distance equals brute force (hs_distance_f32 on the
 *     original rows) and answers are sorted; recall@10 against brute force
 *     stays above a floor;
 *   * a flipped byte in the float32 section: refused at open from memory,
 *     accepted at a lean open and then reported by hs_vidx_validate.
 * HS_TEST_SMALL=1 (and ASan builds) shrink the data.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "hs_test.h"
#include "index/vector/vidx.h"

#define DIM 24
#define CLUSTERS 20
#define K 10

static size_t N = 4000;
static size_t NQ = 40;

static double gauss(uint64_t *st) {
  double u = ((double)(hs_test_rand(st) >> 11) + 1.0) / 9007199254740993.0;
  double v = (double)(hs_test_rand(st) >> 11) / 9007199254740992.0;
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static float true_dist(hs_metric m, const float *a, const float *b) {
  float d = NAN;
  hs_distance_f32(m, a, b, DIM, &d, NULL);
  return d;
}

/* The k-th smallest true distance over the allowed rows (NULL: all). */
static float kth_dist(hs_metric m, const float *x, const float *q,
                      const roaring_bitmap_t *allowed) {
  float best[K];
  uint32_t got = 0;
  for (size_t i = 0; i < N; i++) {
    if (allowed && !roaring_bitmap_contains(allowed, (uint32_t)i)) continue;
    float d = true_dist(m, q, x + i * DIM);
    uint32_t pos = got < K ? got++ : K;
    if (pos == K && !(d < best[K - 1])) continue;
    if (pos == K) pos = K - 1;
    while (pos > 0 && best[pos - 1] > d) {
      best[pos] = best[pos - 1];
      pos--;
    }
    best[pos] = d;
  }
  return got ? best[got - 1] : INFINITY;
}

static hs_vidx *open_src(hs_source *src, size_t len) {
  hs_vidx *v = NULL;
  hs_error err = {0};
  CHECK_OK(hs_vidx_open(src, 0, len, &v, &err), &err);
  hs_source_unref(src);
  return v;
}

/* The offset of section `id` in index bytes (header 128, 32-byte entries). */
static uint64_t section_offset(const uint8_t *b, uint32_t id) {
  uint32_t ns = hs_load_u32le(b + 56);
  for (uint32_t i = 0; i < ns; i++)
    if (hs_load_u32le(b + 128 + 32 * i) == id) return hs_load_u64le(b + 128 + 32 * i + 8);
  return 0;
}

static void write_file(const char *path, const uint8_t *d, size_t len) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL && fwrite(d, 1, len, f) == len);
  if (f) fclose(f);
}

static void run_case(const float *x, const float *qs, hs_quant_kind kind, hs_metric metric,
                     double min_recall) {
  hs_vidx_params p;
  hs_vidx_params_default(&p);
  p.metric = metric;
  p.quant.kind = kind;
  p.threads = 1;
  hs_buf b;
  hs_buf_init(&b);
  hs_error err = {0};
  CHECK_OK(hs_vidx_build(x, N, DIM, NULL, &p, &b, &err), &err);
  char path[] = "/tmp/test_vidx_lean_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  write_file(path, b.data, b.len);

  hs_source *s_mem, *s_file, *s_res;
  CHECK_OK(hs_source_open_memory(b.data, b.len, "mem", &s_mem, &err), &err);
  CHECK_OK(hs_source_open_file(path, &s_file, &err), &err);
  CHECK_OK(hs_source_open_file(path, &s_res, &err), &err);
  hs_vidx *vm = open_src(s_mem, b.len), *vf = open_src(s_file, b.len);
  setenv("HS_VIDX_RESIDENT", "1", 1);
  hs_vidx *vr = open_src(s_res, b.len);
  unsetenv("HS_VIDX_RESIDENT");
  if (vm == NULL || vf == NULL || vr == NULL) goto done;
  CHECK_OK(hs_vidx_validate(vf, &err), &err);

  /* a 30% random filter (traversal when forced) and a 1% one (exact scan) */
  roaring_bitmap_t *f30 = roaring_bitmap_create(), *f1 = roaring_bitmap_create();
  uint64_t st = 99;
  for (uint32_t i = 0; i < N; i++) {
    uint64_t r = hs_test_rand(&st) % 100;
    if (r < 30) roaring_bitmap_add(f30, i);
    if (r < 1) roaring_bitmap_add(f1, i);
  }
  const struct {
    hs_vidx_search_params sp;
    const roaring_bitmap_t *allowed;
  } modes[] = {{{0}, NULL},
               {{.rerank = K}, NULL},
               {{.ef_search = 16, .rerank = 2 * K}, NULL},
               {{.exact_rows = 1}, f30},
               {{0}, f1}};
  const size_t n_modes = sizeof modes / sizeof modes[0];
  int same = 1, exact = 1, sorted = 1, counts = 1, whole = 1;
  double recall = 0;
  for (size_t mi = 0; mi < n_modes; mi++) {
    for (size_t qi = 0; qi < NQ; qi++) {
      const float *q = qs + qi * DIM;
      hs_vidx_hit hm[K], hf[K], hr[K];
      uint32_t nm = 0, nf = 0, nr = 0;
      CHECK_OK(hs_vidx_search(vm, q, K, &modes[mi].sp, modes[mi].allowed, hm, &nm, &err), &err);
      CHECK_OK(hs_vidx_search(vf, q, K, &modes[mi].sp, modes[mi].allowed, hf, &nf, &err), &err);
      CHECK_OK(hs_vidx_search(vr, q, K, &modes[mi].sp, modes[mi].allowed, hr, &nr, &err), &err);
      same &= nm == nf && nm == nr && memcmp(hm, hf, nf * sizeof *hf) == 0 &&
              memcmp(hm, hr, nr * sizeof *hr) == 0;
      uint64_t allowed_n =
          modes[mi].allowed ? roaring_bitmap_get_cardinality(modes[mi].allowed) : N;
      counts &= nf == (allowed_n < K ? allowed_n : K);
      for (uint32_t i = 0; i < nf; i++) {
        float d = true_dist(metric, q, x + (size_t)hf[i].row * DIM);
        exact &= fabsf(d - hf[i].distance) <= 1e-4f * (1.0f + fabsf(d));
        if (modes[mi].allowed) exact &= roaring_bitmap_contains(modes[mi].allowed, hf[i].row);
        if (i > 0)
          sorted &= hf[i - 1].distance < hf[i].distance ||
                    (hf[i - 1].distance == hf[i].distance && hf[i - 1].row < hf[i].row);
      }
      if (mi == 0) { /* the default (SQ8: bounded re-rank) = re-ranking the whole beam */
        hs_vidx_search_params all = {.rerank = 1u << 20};
        hs_vidx_hit ha[K];
        uint32_t na = 0;
        CHECK_OK(hs_vidx_search(vf, q, K, &all, NULL, ha, &na, &err), &err);
        whole &= na == nf && memcmp(ha, hf, nf * sizeof *hf) == 0;
      }
      if (mi == 0) { /* recall@10 at the defaults: hits within the true k-th distance */
        float kth = kth_dist(metric, x, q, NULL);
        uint32_t good = 0;
        for (uint32_t i = 0; i < nf; i++) good += hf[i].distance <= kth + 1e-4f * (1 + fabsf(kth));
        recall += (double)good / K;
      }
    }
  }
  recall /= NQ;
  CHECK(same);
  CHECK(whole);
  CHECK(exact);
  CHECK(sorted);
  CHECK(counts);
  if (!(recall >= min_recall))
    fprintf(stderr, "kind %d metric %s: recall %.3f < %.2f\n", (int)kind, hs_metric_name(metric),
            recall, min_recall);
  CHECK(recall >= min_recall);
  roaring_bitmap_free(f30);
  roaring_bitmap_free(f1);

  /* hs_vidx_open_reads names every byte a lean open reads past the header
   * and section table: a file holding only those bytes (the rest zeroed)
   * opens, every section's checksum checked; none of them is in the
   * float32 section. A memory source (not lean) names that section too. */
  {
    hs_source *so;
    hs_vidx_reads r = {0};
    CHECK_OK(hs_source_open_file(path, &so, &err), &err);
    CHECK_OK(hs_vidx_open_reads(so, 0, b.len, &r, &err), &err);
    hs_source_unref(so);
    uint64_t v0 = section_offset(b.data, 2);
    uint64_t v1 = v0 + (uint64_t)N * (DIM + (metric == HS_METRIC_IP)) * sizeof(float);
    size_t head = 128 + 32 * (size_t)hs_load_u32le(b.data + 56);
    uint8_t *only = calloc(1, b.len);
    int inside = r.n >= 5, apart = 1;
    if (only != NULL) memcpy(only, b.data, head);
    for (size_t i = 0; i < r.n; i++) {
      inside &= r.off[i] >= head && r.off[i] + r.len[i] <= b.len;
      apart &= r.off[i] + r.len[i] <= v0 || r.off[i] >= v1;
      if (only != NULL && r.off[i] + r.len[i] <= b.len)
        memcpy(only + r.off[i], b.data + r.off[i], r.len[i]);
    }
    CHECK(inside);
    CHECK(apart);
    char path2[] = "/tmp/test_vidx_lean_XXXXXX";
    int fd2 = mkstemp(path2);
    CHECK(fd2 >= 0 && only != NULL);
    if (fd2 >= 0) close(fd2);
    if (fd2 >= 0 && only != NULL) {
      write_file(path2, only, b.len);
      hs_source *s2;
      CHECK_OK(hs_source_open_file(path2, &s2, &err), &err);
      hs_vidx *sparse = open_src(s2, b.len);
      CHECK(sparse != NULL && hs_vidx_indexed_count(sparse) == N);
      hs_vidx_free(sparse);
      unlink(path2);
    }
    free(only);
    hs_vidx_reads_free(&r);
    CHECK_OK(hs_source_open_memory(b.data, b.len, "mem", &so, &err), &err);
    CHECK_OK(hs_vidx_open_reads(so, 0, b.len, &r, &err), &err);
    hs_source_unref(so);
    int has_vec = 0;
    for (size_t i = 0; i < r.n; i++) has_vec |= r.off[i] == v0;
    CHECK(has_vec);
    hs_vidx_reads_free(&r);
  }

  /* a flipped byte in the float32 section */
  uint64_t voff = section_offset(b.data, 2);
  CHECK(voff > 0 && voff + 8 < b.len);
  if (voff > 0 && voff + 8 < b.len) {
    b.data[voff + 5] ^= 0x40;
    write_file(path, b.data, b.len);
    hs_source *s2;
    hs_vidx *bad = NULL;
    CHECK_OK(hs_source_open_memory(b.data, b.len, "flipped", &s2, &err), &err);
    CHECK(hs_vidx_open(s2, 0, b.len, &bad, NULL) == HS_ERR_CORRUPT && bad == NULL);
    hs_source_unref(s2);
    CHECK_OK(hs_source_open_file(path, &s2, &err), &err);
    bad = open_src(s2, b.len); /* lean: the section is not read at open */
    if (bad != NULL) {
      hs_error e2 = {0};
      CHECK(hs_vidx_validate(bad, &e2) == HS_ERR_CORRUPT);
      CHECK(strstr(e2.message, "section 2") != NULL);
      hs_vidx_free(bad);
    }
  }
done:
  unlink(path);
  hs_vidx_free(vm);
  hs_vidx_free(vf);
  hs_vidx_free(vr);
  hs_buf_free(&b);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HS_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define HS_TEST_UNDER_ASAN 1
#endif

int main(void) {
  const char *small = getenv("HS_TEST_SMALL");
#ifdef HS_TEST_UNDER_ASAN
  small = "1";
#endif
  if (small && *small && *small != '0') {
    N = 1500;
    NQ = 15;
  }
  uint64_t st = 7;
  float centers[CLUSTERS][DIM];
  for (int c = 0; c < CLUSTERS; c++)
    for (int j = 0; j < DIM; j++) centers[c][j] = (float)gauss(&st);
  float *x = malloc(N * DIM * sizeof *x), *qs = malloc(NQ * DIM * sizeof *qs);
  for (size_t i = 0; i < N; i++) {
    uint32_t c = (uint32_t)(hs_test_rand(&st) % CLUSTERS);
    for (int j = 0; j < DIM; j++) x[i * DIM + j] = centers[c][j] + 0.35f * (float)gauss(&st);
  }
  for (size_t i = 0; i < NQ; i++) {
    size_t r = hs_test_rand(&st) % N;
    for (int j = 0; j < DIM; j++) qs[i * DIM + j] = x[r * DIM + j] + 0.2f * (float)gauss(&st);
  }
  run_case(x, qs, HS_QUANT_SQ8, HS_METRIC_L2, 0.95);
  run_case(x, qs, HS_QUANT_SQ8, HS_METRIC_IP, 0.90);
  run_case(x, qs, HS_QUANT_SQ8, HS_METRIC_COSINE, 0.95);
  run_case(x, qs, HS_QUANT_SQ8, HS_METRIC_L1, 0.95);
  run_case(x, qs, HS_QUANT_PQ, HS_METRIC_L2, 0.90);
  run_case(x, qs, HS_QUANT_PQ, HS_METRIC_IP, 0.85);
  free(x);
  free(qs);
  return hs_test_finish("test_vidx_lean");
}
