/*
 * test_vidx.c — the per-data-file vector index against brute force:
 * recall@10 at default settings for L2, IP, cosine and L1 on clustered
 * data; filtered search at selectivities 0.1%..50% with random,
 * cluster-correlated and anti-correlated filters (exactly min(k, matches)
 * rows, recall >= 0.95); serialize -> open (memory and file) -> same
 * answers; deterministic single-threaded builds; null/NaN rows left out;
 * truncated and flipped bytes refused as corrupt. HS_TEST_SMALL=1 (and
 * any ASan build) shrinks the data.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/common.h"
#include "hs_test.h"
#include "index/vector/vidx.h"

#define DIM 32
#define CLUSTERS 50
#define K 10

static size_t N = 20000;
static size_t NQ = 100;

static double gauss(uint64_t *st) {
  double u = ((double)(hs_test_rand(st) >> 11) + 1.0) / 9007199254740993.0;
  double v = (double)(hs_test_rand(st) >> 11) / 9007199254740992.0;
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Clustered rows: CLUSTERS gaussian blobs; cluster[i] is row i's blob. */
static void make_data(float *x, uint32_t *cluster, size_t n, uint64_t seed) {
  uint64_t st = seed;
  float centers[CLUSTERS][DIM];
  for (int c = 0; c < CLUSTERS; c++)
    for (int j = 0; j < DIM; j++) centers[c][j] = (float)gauss(&st);
  for (size_t i = 0; i < n; i++) {
    uint32_t c = (uint32_t)(hs_test_rand(&st) % CLUSTERS);
    if (cluster) cluster[i] = c;
    for (int j = 0; j < DIM; j++) x[i * DIM + j] = centers[c][j] + 0.35f * (float)gauss(&st);
  }
}

static float true_dist(hs_metric m, const float *a, const float *b) {
  float d = NAN;
  hs_distance_f32(m, a, b, DIM, &d, NULL);
  return d;
}

/* Brute force top-k over rows allowed (NULL: all) and indexable. */
static uint32_t brute(hs_metric m, const float *x, size_t n, const float *q,
                      const roaring_bitmap_t *allowed, uint32_t k, uint32_t *out) {
  uint32_t got = 0;
  float *best = malloc(k * sizeof *best);
  for (size_t i = 0; i < n; i++) {
    if (allowed && !roaring_bitmap_contains(allowed, (uint32_t)i)) continue;
    float d = true_dist(m, q, x + i * DIM);
    if (isnan(d)) continue;
    uint32_t pos = got < k ? got++ : k;
    if (pos == k && !(d < best[k - 1])) continue;
    if (pos == k) pos = k - 1;
    while (pos > 0 && best[pos - 1] > d) {
      best[pos] = best[pos - 1];
      out[pos] = out[pos - 1];
      pos--;
    }
    best[pos] = d;
    out[pos] = (uint32_t)i;
  }
  free(best);
  return got;
}

static double overlap(const uint32_t *truth, uint32_t nt, const hs_vidx_hit *h, uint32_t nh) {
  uint32_t same = 0;
  for (uint32_t i = 0; i < nt; i++)
    for (uint32_t j = 0; j < nh; j++)
      if (h[j].row == truth[i]) {
        same++;
        break;
      }
  return nt ? (double)same / nt : 1.0;
}

/* Sorted by (distance, row), distances exact, rows allowed. */
static int hits_sane(hs_metric m, const float *x, const float *q, const hs_vidx_hit *h, uint32_t n,
                     const roaring_bitmap_t *allowed) {
  for (uint32_t i = 0; i < n; i++) {
    float d = true_dist(m, q, x + (size_t)h[i].row * DIM);
    if (fabsf(d - h[i].distance) > 1e-4f * (1.0f + fabsf(d))) return 0;
    if (allowed && !roaring_bitmap_contains(allowed, h[i].row)) return 0;
    if (i > 0 && (h[i].distance < h[i - 1].distance ||
                  (h[i].distance == h[i - 1].distance && h[i].row <= h[i - 1].row)))
      return 0;
  }
  return 1;
}

static hs_vidx *open_mem(hs_buf *b) {
  hs_source *src;
  hs_vidx *x = NULL;
  hs_error err = {0};
  CHECK_OK(hs_source_open_memory(b->data, b->len, "mem", &src, &err), &err);
  CHECK_OK(hs_vidx_open(src, 0, b->len, &x, &err), &err);
  hs_source_unref(src);
  return x;
}

static hs_vidx *build_open(const float *x, size_t n, hs_metric m, uint32_t threads, hs_buf *b) {
  hs_vidx_params p;
  hs_vidx_params_default(&p);
  p.metric = m;
  p.threads = threads;
  hs_error err = {0};
  hs_buf_init(b);
  CHECK_OK(hs_vidx_build(x, n, DIM, NULL, &p, b, &err), &err);
  hs_vidx *v = open_mem(b);
  if (v) CHECK_OK(hs_vidx_validate(v, &err), &err);
  return v;
}

static void test_recall(const float *x, const float *qs) {
  const hs_metric metrics[] = {HS_METRIC_L2, HS_METRIC_IP, HS_METRIC_COSINE, HS_METRIC_L1};
  for (int mi = 0; mi < 4; mi++) {
    hs_buf b;
    int64_t t0 = hs_now_ns();
    hs_vidx *v = build_open(x, N, metrics[mi], 0, &b);
    double build_s = (hs_now_ns() - t0) / 1e9;
    if (!v) continue;
    CHECK_EQ_INT(hs_vidx_indexed_count(v), N);
    double recall = 0;
    int sane = 1;
    t0 = hs_now_ns();
    for (size_t qi = 0; qi < NQ; qi++) {
      hs_vidx_hit h[K];
      uint32_t nh = 0;
      hs_error err = {0};
      CHECK_OK(hs_vidx_search(v, qs + qi * DIM, K, NULL, NULL, h, &nh, &err), &err);
      CHECK_EQ_INT(nh, K);
      uint32_t truth[K];
      uint32_t nt = brute(metrics[mi], x, N, qs + qi * DIM, NULL, K, truth);
      recall += overlap(truth, nt, h, nh);
      sane &= hits_sane(metrics[mi], x, qs + qi * DIM, h, nh, NULL);
    }
    recall /= NQ;
    printf("  %-6s build %.2fs, recall@10 %.4f (%zu queries incl. brute force %.1f ms)\n",
           hs_metric_name(metrics[mi]), build_s, recall, NQ, (hs_now_ns() - t0) / 1e6);
    CHECK(recall >= 0.95);
    CHECK(sane);
    hs_vidx_free(v);
    hs_buf_free(&b);
  }
}

/* Filters: random, correlated (the query's cluster first) and
 * anti-correlated (the query's cluster last), at several selectivities. */
static void test_filtered(const float *x, const uint32_t *cluster, const float *qs,
                          const uint32_t *qcluster) {
  /* auto path (exact scan below max(2048, n/32) rows), then the graph
   * traversal forced where the default would use it (above n/32) */
  const double sels[] = {0.001, 0.01, 0.1, 0.5, 0.04, 0.1, 0.25, 0.5};
  const char *kinds[] = {"random", "correlated", "anti"};
  hs_buf b;
  hs_vidx *v = build_open(x, N, HS_METRIC_L2, 0, &b);
  if (!v) return;
  uint64_t st = 99;
  size_t nq = NQ / 2 ? NQ / 2 : 1;
  uint32_t *order = malloc(N * sizeof *order);
  for (int s = 0; s < 8; s++) {
    /* s >= 4: the same filters through the graph traversal (forced), where
     * the default could choose it: at least 500 allowed rows (the small
     * ASan data set has too few rows for the 4% filter; measured there:
     * 0.94-0.96, a regime the default answers by exact scan) */
    if (s >= 4 && sels[s] * N < 500) continue;
    hs_vidx_search_params sp = {.exact_rows = s >= 4 ? 1 : 0};
    for (int kind = 0; kind < 3; kind++) {
      double recall = 0;
      int exact_count = 1, sane = 1;
      for (size_t qi = 0; qi < nq; qi++) {
        const float *q = qs + qi * DIM;
        size_t want = (size_t)(sels[s] * N);
        if (want == 0) want = 1;
        roaring_bitmap_t *allowed = roaring_bitmap_create();
        if (kind == 0) {
          for (size_t i = 0; i < N; i++) order[i] = (uint32_t)i;
          for (size_t i = 0; i < want; i++) { /* partial Fisher-Yates */
            size_t j = i + hs_test_rand(&st) % (N - i);
            uint32_t t = order[i];
            order[i] = order[j];
            order[j] = t;
          }
        } else {
          /* rank rows by cluster: query's cluster first (or last) */
          size_t w = 0;
          uint32_t qc = qcluster[qi];
          for (int pass = 0; pass < 2; pass++)
            for (size_t i = 0; i < N; i++) {
              int mine = cluster[i] == qc;
              if ((kind == 1) == (pass == 0) ? mine : !mine) order[w++] = (uint32_t)i;
            }
        }
        for (size_t i = 0; i < want; i++) roaring_bitmap_add(allowed, order[i]);
        hs_vidx_hit h[K];
        uint32_t nh = 0;
        hs_error err = {0};
        CHECK_OK(hs_vidx_search(v, q, K, &sp, allowed, h, &nh, &err), &err);
        { /* the same allow-set as row words: the same answers */
          size_t nw = (N + 63) / 64 + (qi & 1); /* longer than the rows, or exact */
          uint64_t *words = calloc(nw, sizeof *words);
          for (size_t i = 0; i < want; i++) words[order[i] >> 6] |= 1ull << (order[i] & 63);
          hs_vidx_hit h2[K];
          uint32_t nh2 = 0;
          CHECK_OK(hs_vidx_search_bits(v, q, K, &sp, words, nw, h2, &nh2, &err), &err);
          CHECK(nh2 == nh);
          for (uint32_t i = 0; i < nh && i < nh2; i++)
            CHECK(h2[i].row == h[i].row && h2[i].distance == h[i].distance);
          /* a shorter bitset allows only the rows it covers */
          CHECK_OK(hs_vidx_search_bits(v, q, K, &sp, words, 1, h2, &nh2, &err), &err);
          for (uint32_t i = 0; i < nh2; i++) CHECK(h2[i].row < 64);
          free(words);
        }
        uint32_t truth[K];
        uint32_t nt = brute(HS_METRIC_L2, x, N, q, allowed, K, truth);
        exact_count &= nh == (want < K ? want : K) && nt == nh;
        recall += overlap(truth, nt, h, nh);
        sane &= hits_sane(HS_METRIC_L2, x, q, h, nh, allowed);
        roaring_bitmap_free(allowed);
      }
      recall /= nq;
      printf("  filter %-10s %5.1f%% %s: recall %.4f\n", kinds[kind], sels[s] * 100,
             s >= 4 ? "graph" : "auto ", recall);
      CHECK(exact_count);
      CHECK(sane);
      CHECK(recall >= 0.95);
    }
  }
  free(order);
  hs_vidx_free(v);
  hs_buf_free(&b);
}

static void test_roundtrip_and_determinism(const float *x, const float *qs) {
  size_t n = N < 3000 ? N : 3000;
  hs_buf a, b2;
  hs_vidx *va = build_open(x, n, HS_METRIC_COSINE, 1, &a);
  hs_vidx *vb = build_open(x, n, HS_METRIC_COSINE, 1, &b2);
  CHECK(a.len == b2.len && memcmp(a.data, b2.data, a.len) == 0);
  /* the same bytes through a file source answer the same */
  char path[] = "/tmp/test_vidx_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  CHECK(write(fd, a.data, a.len) == (ssize_t)a.len);
  close(fd);
  hs_source *src;
  hs_vidx *vf = NULL;
  hs_error err = {0};
  CHECK_OK(hs_source_open_file(path, &src, &err), &err);
  CHECK_OK(hs_vidx_open(src, 0, a.len, &vf, &err), &err);
  hs_source_unref(src);
  unlink(path);
  int same = va && vb && vf;
  for (size_t qi = 0; same && qi < 20; qi++) {
    hs_vidx_hit h1[K], h2[K];
    uint32_t n1, n2;
    CHECK_OK(hs_vidx_search(va, qs + qi * DIM, K, NULL, NULL, h1, &n1, &err), &err);
    CHECK_OK(hs_vidx_search(vf, qs + qi * DIM, K, NULL, NULL, h2, &n2, &err), &err);
    same &= n1 == n2 && memcmp(h1, h2, n1 * sizeof *h1) == 0;
  }
  CHECK(same);
  hs_vidx_free(va);
  hs_vidx_free(vb);
  hs_vidx_free(vf);

  /* An index stored inside a larger file (a Puffin blob) opens at its
   * offset and answers the same. */
  {
    size_t pad = 100;
    uint8_t *big = malloc(a.len + 2 * pad);
    memset(big, 0xAB, a.len + 2 * pad);
    memcpy(big + pad, a.data, a.len);
    hs_source *bs;
    hs_vidx *vo = NULL;
    CHECK_OK(hs_source_open_memory(big, a.len + 2 * pad, "blob", &bs, &err), &err);
    CHECK_OK(hs_vidx_open(bs, pad, a.len, &vo, &err), &err);
    hs_vidx *past = NULL;
    CHECK(hs_vidx_open(bs, pad, a.len + 2 * pad, &past, NULL) == HS_ERR_CORRUPT && !past);
    hs_source_unref(bs);
    if (vo != NULL) {
      hs_vidx_hit h1[K];
      uint32_t n1 = 0;
      CHECK_OK(hs_vidx_search(vo, qs, K, NULL, NULL, h1, &n1, &err), &err);
      CHECK_EQ_INT(n1, K);
      hs_vidx_free(vo);
    }
    free(big);
  }
  /* Corruption: every truncation point tried is refused as corrupt. */
  hs_vidx *v;
  size_t cuts[] = {0, 7, 64, 127, 128, 200, a.len / 3, a.len / 2, a.len - 1};
  int refused = 1;
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    hs_source *s2;
    hs_source_open_memory(a.data, cuts[i], "cut", &s2, NULL);
    hs_error e2 = {0};
    refused &= hs_vidx_open(s2, 0, cuts[i], &v, &e2) == HS_ERR_CORRUPT && v == NULL;
    hs_source_unref(s2);
  }
  CHECK(refused);
  /* Flipped bytes inside the header or a section: refused (checksums). */
  uint64_t st = 5;
  uint8_t *copy = malloc(a.len);
  refused = 1;
  for (int t = 0; t < 200; t++) {
    memcpy(copy, a.data, a.len);
    size_t pos;
    do {
      pos = hs_test_rand(&st) % a.len;
    } while (pos >= 124 && pos < 128); /* spare header bytes are still covered */
    copy[pos] ^= (uint8_t)(1u << (hs_test_rand(&st) % 8));
    /* padding between sections is not covered: skip positions there */
    int in_section = pos < 128 + 6 * 32;
    for (uint32_t s = 0; s < 6 && !in_section; s++) {
      const uint8_t *e = a.data + 128 + 32 * s;
      uint64_t off = hs_load_u64le(e + 8), len = hs_load_u64le(e + 16);
      in_section = pos >= off && pos < off + len;
    }
    if (!in_section) continue;
    hs_source *s2;
    hs_source_open_memory(copy, a.len, "flip", &s2, NULL);
    hs_error e2 = {0};
    hs_status r = hs_vidx_open(s2, 0, a.len, &v, &e2);
    if (r != HS_ERR_CORRUPT && r != HS_ERR_UNSUPPORTED) {
      refused = 0;
      fprintf(stderr, "flip at %zu: %s\n", pos, hs_status_str(r));
      hs_vidx_free(v);
    }
    hs_source_unref(s2);
  }
  CHECK(refused);
  free(copy);
  hs_buf_free(&a);
  hs_buf_free(&b2);
}

/* The default partition count (partitions = 0): one graph below 4M rows
 * (README.md "Defaults": at 1M x 128 one graph beat two 500K graphs by
 * 1.29x single-query QPS at recall 0.95), then partitions of <= 2M rows. */
static void test_default_partitions(void) {
  CHECK_EQ_INT(hs_vidx_default_partitions(0), 1);
  CHECK_EQ_INT(hs_vidx_default_partitions(20000), 1);
  CHECK_EQ_INT(hs_vidx_default_partitions(1000000), 1);
  CHECK_EQ_INT(hs_vidx_default_partitions(2000000), 1);
  CHECK_EQ_INT(hs_vidx_default_partitions(3999999), 1);
  CHECK_EQ_INT(hs_vidx_default_partitions(4000000), 2);
  CHECK_EQ_INT(hs_vidx_default_partitions(4000001), 3);
  CHECK_EQ_INT(hs_vidx_default_partitions(10000000), 5);
}

/* Built in place (ROWS, VECTORS, a fixed layer 0 and CODES inside the
 * output buffer) or apart and copied (the output's length not 4-byte
 * aligned): the same bytes, appended after what the buffer held. */
static void test_build_in_place(const float *x) {
  size_t n = N < 3000 ? N : 3000;
  const struct {
    hs_metric metric;
    hs_quant_kind kind;
    uint32_t partitions;
  } cases[] = {{HS_METRIC_L2, HS_QUANT_NONE, 0},
               {HS_METRIC_L2, HS_QUANT_SQ8, 0},
               {HS_METRIC_IP, HS_QUANT_PQ, 3},
               {HS_METRIC_COSINE, HS_QUANT_NONE, 2}};
  int same = 1;
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    hs_vidx_params p;
    hs_vidx_params_default(&p);
    p.metric = cases[ci].metric;
    p.quant.kind = cases[ci].kind;
    p.partitions = cases[ci].partitions;
    p.threads = 1;
    hs_buf b[3];
    const size_t pre[3] = {0, 4, 3}; /* in place, in place after a prefix, apart */
    for (int i = 0; i < 3; i++) {
      hs_buf_init(&b[i]);
      CHECK(hs_buf_append(&b[i], "PFA1", pre[i]) || pre[i] == 0);
      CHECK_OK(hs_vidx_build(x, n, DIM, NULL, &p, &b[i], NULL), NULL);
    }
    /* huge-page advice off (HS_HUGEPAGES=0): the same bytes */
    hs_buf nohuge;
    hs_buf_init(&nohuge);
    setenv("HS_HUGEPAGES", "0", 1);
    CHECK_OK(hs_vidx_build(x, n, DIM, NULL, &p, &nohuge, NULL), NULL);
    unsetenv("HS_HUGEPAGES");
    same &= nohuge.len == b[0].len && memcmp(nohuge.data, b[0].data, b[0].len) == 0;
    hs_buf_free(&nohuge);
    for (int i = 1; i < 3; i++)
      same &= b[i].len - pre[i] == b[0].len &&
              memcmp(b[i].data + pre[i], b[0].data, b[0].len) == 0 &&
              memcmp(b[i].data, "PFA1", pre[i]) == 0;
    hs_vidx *v = open_mem(&b[0]);
    hs_error err = {0};
    if (v != NULL) CHECK_OK(hs_vidx_validate(v, &err), &err);
    hs_vidx_free(v);
    for (int i = 0; i < 3; i++) hs_buf_free(&b[i]);
  }
  CHECK(same);
  /* the advice is a hint on any range: NULL, short, unaligned, large */
  hs_mem_advise_huge(NULL, 1u << 24);
  uint8_t *big = hs_malloc((9u << 20) + 3);
  CHECK(big != NULL);
  if (big != NULL) {
    hs_mem_advise_huge(big, 100);
    hs_mem_advise_huge(big + 3, 9u << 20);
    memset(big, 7, (9u << 20) + 3);
    CHECK(big[0] == 7 && big[9u << 20] == 7);
    hs_free(big);
  }
}

/* IVF: 8 partitions, one graph each; every partition probed gives the
 * recall of one graph, a filter still gets exactly min(k, matches). */
static void test_ivf(const float *x, const float *qs) {
  hs_vidx_params p;
  hs_vidx_params_default(&p);
  p.partitions = 8;
  hs_buf b;
  hs_buf_init(&b);
  hs_error err = {0};
  CHECK_OK(hs_vidx_build(x, N, DIM, NULL, &p, &b, &err), &err);
  hs_vidx *v = open_mem(&b);
  if (v == NULL) return;
  CHECK_OK(hs_vidx_validate(v, &err), &err);
  CHECK_EQ_INT(hs_vidx_partition_count(v), 8);
  const uint32_t probes[] = {8, 3};
  for (int pi = 0; pi < 2; pi++) {
    hs_vidx_search_params sp = {.nprobe = probes[pi]};
    double recall = 0, frecall = 0;
    int counts = 1, sane = 1;
    roaring_bitmap_t *odd = roaring_bitmap_create();
    for (uint32_t i = 1; i < N; i += 2) roaring_bitmap_add(odd, i);
    for (size_t qi = 0; qi < NQ; qi++) {
      hs_vidx_hit h[K];
      uint32_t nh, truth[K], nt;
      CHECK_OK(hs_vidx_search(v, qs + qi * DIM, K, &sp, NULL, h, &nh, &err), &err);
      nt = brute(HS_METRIC_L2, x, N, qs + qi * DIM, NULL, K, truth);
      recall += overlap(truth, nt, h, nh);
      counts &= nh == K;
      sane &= hits_sane(HS_METRIC_L2, x, qs + qi * DIM, h, nh, NULL);
      CHECK_OK(hs_vidx_search(v, qs + qi * DIM, K, &sp, odd, h, &nh, &err), &err);
      nt = brute(HS_METRIC_L2, x, N, qs + qi * DIM, odd, K, truth);
      frecall += overlap(truth, nt, h, nh);
      counts &= nh == K;
      sane &= hits_sane(HS_METRIC_L2, x, qs + qi * DIM, h, nh, odd);
    }
    roaring_bitmap_free(odd);
    printf("  ivf 8 partitions, nprobe %u: recall %.4f, odd rows %.4f\n", probes[pi], recall / NQ,
           frecall / NQ);
    CHECK(counts);
    CHECK(sane);
    if (probes[pi] == 8) CHECK(recall / NQ >= 0.95 && frecall / NQ >= 0.95);
  }
  hs_vidx_free(v);
  hs_buf_free(&b);
}

/* Quantized traversal (SQ8, PQ) with exact re-ranking: the answers carry
 * exact distances; SQ8 keeps recall, so does PQ at its defaults. */
static void test_quant(const float *x, const float *qs) {
  const struct {
    hs_quant_kind kind;
    hs_metric metric;
    double min_recall;
  } cases[] = {{HS_QUANT_SQ8, HS_METRIC_L2, 0.95},     {HS_QUANT_SQ8, HS_METRIC_IP, 0.95},
               {HS_QUANT_SQ8, HS_METRIC_COSINE, 0.95}, {HS_QUANT_SQ8, HS_METRIC_L1, 0.95},
               {HS_QUANT_PQ, HS_METRIC_L2, 0.90},      {HS_QUANT_PQ, HS_METRIC_IP, 0.90}};
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    hs_vidx_params p;
    hs_vidx_params_default(&p);
    p.metric = cases[ci].metric;
    p.quant.kind = cases[ci].kind;
    p.quant.pq_m = 0; /* the default: 4-d sub-spaces, ef_search x 4 */
    hs_buf b;
    hs_buf_init(&b);
    hs_error err = {0};
    CHECK_OK(hs_vidx_build(x, N, DIM, NULL, &p, &b, &err), &err);
    hs_vidx *v = open_mem(&b);
    if (v == NULL) {
      hs_buf_free(&b);
      continue;
    }
    CHECK_OK(hs_vidx_validate(v, &err), &err);
    CHECK(hs_vidx_quant_kind(v) == cases[ci].kind);
    double recall = 0;
    int sane = 1, counts = 1;
    for (size_t qi = 0; qi < NQ; qi++) {
      hs_vidx_hit h[K];
      uint32_t nh = 0, truth[K];
      CHECK_OK(hs_vidx_search(v, qs + qi * DIM, K, NULL, NULL, h, &nh, &err), &err);
      uint32_t nt = brute(cases[ci].metric, x, N, qs + qi * DIM, NULL, K, truth);
      recall += overlap(truth, nt, h, nh);
      sane &= hits_sane(cases[ci].metric, x, qs + qi * DIM, h, nh, NULL);
      counts &= nh == K;
    }
    /* forced traversal of a 3-row filter: the exact fallback answers */
    roaring_bitmap_t *three = roaring_bitmap_of(3, 1, (uint32_t)N / 2, (uint32_t)N - 1);
    hs_vidx_search_params forced = {.exact_rows = 1, .ef_search = 4};
    hs_vidx_hit h3[K];
    uint32_t n3 = 0;
    CHECK_OK(hs_vidx_search(v, qs, K, &forced, three, h3, &n3, &err), &err);
    CHECK_EQ_INT(n3, 3);
    roaring_bitmap_free(three);
    recall /= NQ;
    printf("  %s %-6s: recall@10 %.4f, %zu bytes\n", cases[ci].kind == HS_QUANT_SQ8 ? "sq8" : "pq ",
           hs_metric_name(cases[ci].metric), recall, b.len);
    CHECK(recall >= cases[ci].min_recall);
    CHECK(sane);
    CHECK(counts);
    hs_vidx_free(v);
    hs_buf_free(&b);
  }
}

static void test_nulls_and_edges(void) {
  enum { n = 300 };
  float *x = malloc(n * DIM * sizeof *x);
  make_data(x, NULL, n, 7);
  uint8_t valid[(n + 7) / 8];
  memset(valid, 0xFF, sizeof valid);
  for (int i = 0; i < n; i += 10) valid[i / 8] &= (uint8_t) ~(1u << (i % 8)); /* nulls */
  x[5 * DIM + 3] = NAN;
  x[7 * DIM] = INFINITY;
  memset(x + 9 * DIM, 0, DIM * sizeof *x); /* zero: no cosine */
  hs_vidx_params p;
  hs_vidx_params_default(&p);
  p.metric = HS_METRIC_COSINE;
  hs_buf b;
  hs_buf_init(&b);
  hs_error err = {0};
  CHECK_OK(hs_vidx_build(x, n, DIM, valid, &p, &b, &err), &err);
  hs_vidx *v = open_mem(&b);
  if (v) {
    CHECK_EQ_INT(hs_vidx_indexed_count(v), n - 30 - 3);
    CHECK_EQ_INT(hs_vidx_row_count(v), n);
    CHECK_OK(hs_vidx_validate(v, &err), &err);
    hs_vidx_hit h[n];
    uint32_t nh;
    CHECK_OK(hs_vidx_search(v, x + DIM, n, NULL, NULL, h, &nh, &err), &err);
    CHECK_EQ_INT(nh, n - 33); /* k above the count: every indexed row */
    int clean = 1;
    for (uint32_t i = 0; i < nh; i++)
      clean &= h[i].row % 10 != 0 && h[i].row != 5 && h[i].row != 7 && h[i].row != 9;
    CHECK(clean);
    /* bad input */
    float bad[DIM];
    memcpy(bad, x + DIM, sizeof bad);
    bad[2] = NAN;
    CHECK(hs_vidx_search(v, bad, K, NULL, NULL, h, &nh, NULL) == HS_ERR_INVALID_ARG);
    CHECK(hs_vidx_search(v, x + DIM, 0, NULL, NULL, h, &nh, NULL) == HS_ERR_INVALID_ARG);
    memset(bad, 0, sizeof bad);
    CHECK(hs_vidx_search(v, bad, K, NULL, NULL, h, &nh, NULL) == HS_ERR_INVALID_ARG);
    /* a filter of only unindexed rows answers nothing */
    roaring_bitmap_t *only_null = roaring_bitmap_of(3, 0, 10, 5);
    CHECK_OK(hs_vidx_search(v, x + DIM, K, NULL, only_null, h, &nh, &err), &err);
    CHECK_EQ_INT(nh, 0);
    roaring_bitmap_free(only_null);
    hs_vidx_free(v);
  }
  hs_buf_free(&b);
  /* empty and single-row indexes */
  for (size_t rows = 0; rows <= 1; rows++) {
    hs_buf_init(&b);
    CHECK_OK(hs_vidx_build(x + DIM, rows, DIM, NULL, NULL, &b, &err), &err);
    v = open_mem(&b);
    if (v) {
      CHECK_OK(hs_vidx_validate(v, &err), &err);
      hs_vidx_hit h[K];
      uint32_t nh = 99;
      CHECK_OK(hs_vidx_search(v, x, K, NULL, NULL, h, &nh, &err), &err);
      CHECK_EQ_INT(nh, rows);
      hs_vidx_free(v);
    }
    hs_buf_free(&b);
  }
  /* bad parameters */
  hs_buf_init(&b);
  p.metric = HS_METRIC_HAMMING;
  CHECK(hs_vidx_build(x, n, DIM, NULL, &p, &b, NULL) == HS_ERR_INVALID_ARG);
  p.metric = HS_METRIC_L2;
  CHECK(hs_vidx_build(x, n, 0, NULL, &p, &b, NULL) == HS_ERR_INVALID_ARG);
  p.m = 1;
  CHECK(hs_vidx_build(x, n, DIM, NULL, &p, &b, NULL) == HS_ERR_INVALID_ARG);
  CHECK(b.len == 0);
  hs_buf_free(&b);
  free(x);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HS_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define HS_TEST_UNDER_ASAN 1
#endif

/* The small indexes of the fuzz seeds (fuzz/corpus/vidx/seed_NN.vidx):
 * seed i built with the given layer-0 layout. Seeds 00-08 were written by
 * the version-1 writer (fixed layer 0) and are kept as they are: the
 * reader must go on reading them. 09-11 are version 2 (compact layer 0).
 * 00-11 have no scan codes (written before them); 12 is a float32 index
 * with scan codes (version 1, fixed layer 0, SQ8 codes beside it). */
#define N_SEEDS 13
static void seed_build(size_t i, hs_vidx_links links, hs_buf *b) {
  const struct {
    size_t n, dim;
    hs_metric metric;
    uint32_t m, partitions;
    hs_quant_kind quant;
  } shapes[N_SEEDS] = {
      {0, 3, HS_METRIC_L2, 2, 0, HS_QUANT_NONE},    {1, 3, HS_METRIC_IP, 2, 0, HS_QUANT_NONE},
      {12, 4, HS_METRIC_L2, 2, 0, HS_QUANT_NONE},   {40, 3, HS_METRIC_COSINE, 4, 0, HS_QUANT_NONE},
      {30, 2, HS_METRIC_L1, 3, 0, HS_QUANT_NONE},   {64, 2, HS_METRIC_L2SQ, 2, 0, HS_QUANT_NONE},
      {40, 4, HS_METRIC_L2, 3, 3, HS_QUANT_NONE},   {30, 4, HS_METRIC_IP, 2, 0, HS_QUANT_SQ8},
      {30, 4, HS_METRIC_IP, 2, 2, HS_QUANT_PQ},     {50, 4, HS_METRIC_L2, 3, 2, HS_QUANT_SQ8},
      {40, 4, HS_METRIC_COSINE, 2, 0, HS_QUANT_PQ}, {30, 3, HS_METRIC_L1, 2, 0, HS_QUANT_NONE},
      {40, 4, HS_METRIC_L2, 3, 0, HS_QUANT_NONE}};
  float x[64 * 4];
  uint64_t st = 3;
  for (size_t j = 0; j < 64 * 4; j++) x[j] = (float)gauss(&st);
  uint8_t valid[8];
  memset(valid, 0xB7, sizeof valid);
  hs_vidx_params p;
  hs_vidx_params_default(&p);
  p.metric = shapes[i].metric;
  p.m = shapes[i].m;
  p.ef_construction = 8;
  p.threads = 1;
  p.partitions = shapes[i].partitions;
  p.quant.kind = shapes[i].quant;
  p.quant.pq_m = 2;
  p.links = links;
  p.scan_codes = i < 12 ? HS_VIDX_SCAN_CODES_NONE : HS_VIDX_SCAN_CODES_AUTO;
  hs_buf_init(b);
  CHECK_OK(hs_vidx_build(x, shapes[i].n, shapes[i].dim, i == 4 ? valid : NULL, &p, b, NULL), NULL);
}

static hs_vidx_links seed_links(size_t i) {
  return i < 9 || i == 12 ? HS_VIDX_LINKS_FIXED : HS_VIDX_LINKS_COMPACT;
}
static uint32_t seed_version(size_t i) {
  return i < 9 || i == 12 ? 1 : 2;
}

/* HS_VIDX_SEED_DIR=dir: write the seeds there. */
static void write_seeds(const char *dir) {
  for (size_t i = 0; i < N_SEEDS; i++) {
    hs_buf b;
    seed_build(i, seed_links(i), &b);
    char path[512];
    snprintf(path, sizeof path, "%s/seed_%02zu.vidx", dir, i);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL && fwrite(b.data, 1, b.len, f) == b.len);
    if (f) fclose(f);
    hs_buf_free(&b);
  }
}

static uint32_t hs_test_crc32(const uint8_t *d, size_t len) {
  return (uint32_t)crc32(0L, d, (uInt)len);
}

/* Rewrite every checksum (sections, table, header) to match the bytes, so a
 * structural corruption reaches the checks behind them. */
static void fix_checksums(uint8_t *d, size_t size) {
  uint32_t ns = hs_load_u32le(d + 56);
  for (uint32_t i = 0; i < ns; i++) {
    uint8_t *e = d + 128 + 32 * i;
    uint64_t off = hs_load_u64le(e + 8), len = hs_load_u64le(e + 16);
    if (off > size || len > size - off) continue;
    hs_store_u32le(e + 4, hs_test_crc32(d + off, (size_t)len));
  }
  hs_store_u32le(d + 60, hs_test_crc32(d + 128, 32 * (size_t)ns));
  hs_store_u32le(d + 124, hs_test_crc32(d, 124));
}

/* The LINKS0 section (id 4) of an index: its offset and length. */
static void links0_section(const hs_buf *b, uint64_t *off, uint64_t *len) {
  uint32_t ns = hs_load_u32le(b->data + 56);
  *off = *len = 0;
  for (uint32_t i = 0; i < ns; i++) {
    const uint8_t *e = b->data + 128 + 32 * i;
    if (hs_load_u32le(e) == 4) {
      *off = hs_load_u64le(e + 8);
      *len = hs_load_u64le(e + 16);
    }
  }
}

/* Open `d` (a modified copy) from memory: its status and message. */
static hs_status open_bytes(const uint8_t *d, size_t len, hs_error *e) {
  hs_source *s;
  hs_vidx *v = NULL;
  hs_source_open_memory(d, len, "bytes", &s, NULL);
  hs_status r = hs_vidx_open(s, 0, len, &v, e);
  hs_source_unref(s);
  hs_vidx_free(v);
  return r;
}

/* Layer-0 layouts: a compact layer 0 (version 2; the default of quantized
 * indexes) holds the same graph as fixed blocks (version 1): the same
 * answers bit for bit, in fewer bytes. Version-1 files (the committed fuzz
 * seeds) still open, and the version-1 writer is unchanged (byte-identical
 * rebuilds). Corrupt compact files are refused with a message naming the
 * compact layer 0. */
static void test_link_layouts(const float *x, const float *qs) {
  size_t n = N < 5000 ? N : 5000;
  const struct {
    hs_quant_kind kind;
    hs_metric metric;
    uint32_t partitions;
  } cases[] = {{HS_QUANT_SQ8, HS_METRIC_L2, 0},
               {HS_QUANT_PQ, HS_METRIC_IP, 3},
               {HS_QUANT_NONE, HS_METRIC_COSINE, 0}};
  hs_error err = {0};
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    hs_buf fb, cb, ab;
    hs_vidx_params p;
    hs_vidx_params_default(&p);
    p.metric = cases[ci].metric;
    p.quant.kind = cases[ci].kind;
    p.partitions = cases[ci].partitions;
    p.threads = 1;
    hs_buf_init(&fb);
    hs_buf_init(&cb);
    hs_buf_init(&ab);
    p.links = HS_VIDX_LINKS_FIXED;
    CHECK_OK(hs_vidx_build(x, n, DIM, NULL, &p, &fb, &err), &err);
    p.links = HS_VIDX_LINKS_COMPACT;
    CHECK_OK(hs_vidx_build(x, n, DIM, NULL, &p, &cb, &err), &err);
    p.links = HS_VIDX_LINKS_AUTO;
    CHECK_OK(hs_vidx_build(x, n, DIM, NULL, &p, &ab, &err), &err);
    CHECK_EQ_INT(hs_load_u32le(fb.data + 8), 1);
    CHECK_EQ_INT(hs_load_u32le(cb.data + 8), 2);
    CHECK_EQ_INT(hs_load_u32le(cb.data + 76), 3); /* ids of 3 bytes below 2^24 nodes */
    /* AUTO: compact exactly when quantized */
    const hs_buf *want = cases[ci].kind != HS_QUANT_NONE ? &cb : &fb;
    CHECK(ab.len == want->len && memcmp(ab.data, want->data, ab.len) == 0);
    uint64_t foff, flen, coff, clen;
    links0_section(&fb, &foff, &flen);
    links0_section(&cb, &coff, &clen);
    printf("  layer 0 %s %-6s: fixed %llu bytes, compact %llu (%.2f), mean degree %.2f of %u\n",
           cases[ci].kind == HS_QUANT_SQ8  ? "sq8"
           : cases[ci].kind == HS_QUANT_PQ ? "pq "
                                           : "f32",
           hs_metric_name(cases[ci].metric), (unsigned long long)flen, (unsigned long long)clen,
           (double)clen / (double)flen, (double)hs_load_u64le(cb.data + 80) / (double)n, 2 * p.m);
    CHECK(clen < flen / 2 + (n + 1) * 4);
    hs_vidx *vf = open_mem(&fb), *vc = open_mem(&cb);
    if (vf == NULL || vc == NULL) {
      hs_vidx_free(vf);
      hs_vidx_free(vc);
      hs_buf_free(&fb);
      hs_buf_free(&cb);
      hs_buf_free(&ab);
      continue;
    }
    CHECK_OK(hs_vidx_validate(vf, &err), &err);
    CHECK_OK(hs_vidx_validate(vc, &err), &err);
    roaring_bitmap_t *half = roaring_bitmap_create();
    for (uint32_t i = 0; i < n; i += 2) roaring_bitmap_add(half, i);
    hs_vidx_search_params forced = {.exact_rows = 1};
    int same = 1;
    for (size_t qi = 0; qi < 40 && qi < NQ; qi++) {
      hs_vidx_hit h1[K], h2[K];
      uint32_t n1 = 0, n2 = 0;
      CHECK_OK(hs_vidx_search(vf, qs + qi * DIM, K, NULL, NULL, h1, &n1, &err), &err);
      CHECK_OK(hs_vidx_search(vc, qs + qi * DIM, K, NULL, NULL, h2, &n2, &err), &err);
      same &= n1 == n2 && memcmp(h1, h2, n1 * sizeof *h1) == 0;
      CHECK_OK(hs_vidx_search(vf, qs + qi * DIM, K, &forced, half, h1, &n1, &err), &err);
      CHECK_OK(hs_vidx_search(vc, qs + qi * DIM, K, &forced, half, h2, &n2, &err), &err);
      same &= n1 == n2 && memcmp(h1, h2, n1 * sizeof *h1) == 0;
    }
    CHECK(same);
    roaring_bitmap_free(half);
    hs_vidx_free(vf);
    hs_vidx_free(vc);

    if (ci == 0) { /* corrupt compact files */
      uint8_t *c = malloc(cb.len);
      /* truncated anywhere: refused */
      size_t cuts[] = {100,
                       128,
                       300,
                       (size_t)coff + 4,
                       (size_t)(coff + clen / 2),
                       (size_t)(coff + clen - 1),
                       cb.len - 1};
      int refused = 1;
      for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        hs_error e2 = {0};
        refused &= open_bytes(cb.data, cuts[i], &e2) == HS_ERR_CORRUPT;
      }
      CHECK(refused);
      /* offsets out of order, too many links for one node, a wrong total,
       * a bad id width, a compact layer 0 claimed by version 1: refused
       * even with every checksum rewritten, naming what is wrong */
      const char *what[] = {"compact layer 0: node",    "compact layer 0: node",
                            "compact layer 0: offsets", "layer-0 id width",
                            "layer-0 id width",         "ids of 3 bytes"};
      for (int t = 0; t < 6; t++) {
        memcpy(c, cb.data, cb.len);
        uint8_t *off0 = c + coff;
        if (t == 0) hs_store_u32le(off0 + 4 * 7, hs_load_u32le(off0 + 4 * 8) + 1);
        if (t == 1) hs_store_u32le(off0 + 4 * 8, hs_load_u32le(off0 + 4 * 7) + 2 * p.m + 1);
        if (t == 2) hs_store_u32le(off0 + 4 * n, hs_load_u32le(off0 + 4 * n) - 1);
        if (t == 3) hs_store_u32le(c + 76, 5);
        if (t == 4) hs_store_u32le(c + 8, 1);
        if (t == 5) hs_store_u64le(c + 80, 9ull * n * 2 * p.m);
        fix_checksums(c, cb.len);
        hs_error e2 = {0};
        hs_status r = open_bytes(c, cb.len, &e2);
        CHECK(r == HS_ERR_CORRUPT);
        if (strstr(e2.message, what[t]) == NULL) {
          fprintf(stderr, "corruption %d: %s\n", t, e2.message);
          CHECK(0);
        }
      }
      /* a neighbour id moved outside the graph: open accepts it (search
       * skips ids outside the partition), validate names it, search
       * stays in bounds */
      memcpy(c, cb.data, cb.len);
      uint8_t *id0 = c + coff + 4 * (n + 1);
      id0[0] = id0[1] = id0[2] = 0xFF;
      fix_checksums(c, cb.len);
      hs_source *s;
      hs_vidx *v = NULL;
      hs_source_open_memory(c, cb.len, "bad id", &s, NULL);
      CHECK_OK(hs_vidx_open(s, 0, cb.len, &v, &err), &err);
      hs_source_unref(s);
      if (v != NULL) {
        hs_error e2 = {0};
        CHECK(hs_vidx_validate(v, &e2) == HS_ERR_CORRUPT && strstr(e2.message, "outside") != NULL);
        hs_vidx_hit h[K];
        uint32_t nh = 0;
        CHECK_OK(hs_vidx_search(v, qs, K, NULL, NULL, h, &nh, &err), &err);
        CHECK_EQ_INT(nh, K);
        hs_vidx_free(v);
      }
      free(c);
    }
    hs_buf_free(&fb);
    hs_buf_free(&cb);
    hs_buf_free(&ab);
  }

  /* The committed seeds: 00-08 are version-1 files (some written before
   * the graph rule of ae16e17, so not rebuilt byte for byte), 09-11 version
   * 2, rebuilt byte for byte; each opens, validates and answers. */
  int seeds = 0;
  for (size_t i = 0; i < N_SEEDS; i++) {
    char path[64];
    snprintf(path, sizeof path, "fuzz/corpus/vidx/seed_%02zu.vidx", i);
    FILE *f = fopen(path, "rb");
    if (f == NULL) continue; /* not run from the source tree */
    uint8_t buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    seeds++;
    hs_buf b;
    seed_build(i, seed_links(i), &b);
    if (i >= 9) CHECK(b.len == len && memcmp(b.data, buf, len) == 0);
    CHECK_EQ_INT(hs_load_u32le(buf + 8), seed_version(i));
    hs_source *s;
    hs_vidx *v = NULL;
    hs_source_open_memory(buf, len, path, &s, NULL);
    CHECK_OK(hs_vidx_open(s, 0, len, &v, &err), &err);
    hs_source_unref(s);
    if (v != NULL) {
      CHECK_OK(hs_vidx_validate(v, &err), &err);
      float q[4] = {0.5f, -0.25f, 1.0f, 0.125f};
      hs_vidx_hit h[K];
      uint32_t nh = 0;
      CHECK_OK(hs_vidx_search(v, q, K, NULL, NULL, h, &nh, &err), &err);
      CHECK(nh == (hs_vidx_indexed_count(v) < K ? hs_vidx_indexed_count(v) : K));
    }
    hs_vidx_free(v);
    hs_buf_free(&b);
  }
  printf("  layer 0: %d committed seed files read\n", seeds);
}

/* Unbounded work (issue 12, item 7): sizes from the caller are bounded by
 * the index before anything is allocated. k and ef_search far above the
 * rows give exactly the answers of k = ef = n (hits need room for n only);
 * so does the filtered traversal's widened ef. Build parameters above
 * their ranges are refused naming them; threads above the pool are
 * clamped (the same index). Header counts that the blob cannot hold are
 * refused before allocating. */
static void test_limits(const float *x) {
  enum { n = 600 };
  hs_buf b;
  hs_buf_init(&b);
  hs_error err = {0};
  hs_vidx_params p;
  hs_vidx_params_default(&p);
  p.threads = 1;
  CHECK_OK(hs_vidx_build(x, n, DIM, NULL, &p, &b, &err), &err);
  hs_vidx *v = open_mem(&b);
  if (v) {
    hs_vidx_hit *h1 = malloc(n * sizeof *h1), *h2 = malloc(n * sizeof *h2);
    uint32_t n1 = 0, n2 = 0;
    hs_vidx_search_params all = {.ef_search = n}, huge = {.ef_search = UINT32_MAX};
    CHECK_OK(hs_vidx_search(v, x + 3 * DIM, n, &all, NULL, h1, &n1, &err), &err);
    CHECK_OK(hs_vidx_search(v, x + 3 * DIM, UINT32_MAX, &huge, NULL, h2, &n2, &err), &err);
    CHECK_EQ_INT(n1, n);
    CHECK_EQ_INT(n2, n1);
    CHECK(memcmp(h1, h2, n1 * sizeof *h1) == 0);
    /* filtered traversal (forced): ef widened from UINT32_MAX stays bounded */
    roaring_bitmap_t *half = roaring_bitmap_create();
    for (uint32_t r = 0; r < n; r += 2) roaring_bitmap_add(half, r);
    all.exact_rows = huge.exact_rows = 1;
    CHECK_OK(hs_vidx_search(v, x + 5 * DIM, n, &all, half, h1, &n1, &err), &err);
    CHECK_OK(hs_vidx_search(v, x + 5 * DIM, UINT32_MAX, &huge, half, h2, &n2, &err), &err);
    CHECK_EQ_INT(n1, n / 2);
    CHECK_EQ_INT(n2, n1);
    CHECK(memcmp(h1, h2, n1 * sizeof *h1) == 0);
    roaring_bitmap_free(half);
    free(h1);
    free(h2);
    hs_vidx_free(v);
  }
  /* build parameters: refused above their ranges (nothing appended) */
  size_t len0 = b.len;
  hs_vidx_params bad = p;
  bad.ef_construction = HS_VIDX_EF_CONSTRUCTION_MAX + 1;
  err = (hs_error){0};
  CHECK(hs_vidx_build(x, n, DIM, NULL, &bad, &b, &err) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "ef_construction") != NULL);
  bad = p;
  bad.partitions = HS_VIDX_PARTITIONS_MAX + 1;
  err = (hs_error){0};
  CHECK(hs_vidx_build(x, n, DIM, NULL, &bad, &b, &err) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "partitions") != NULL);
  bad = p;
  bad.m = 1000000000u;
  err = (hs_error){0};
  CHECK(hs_vidx_build(x, n, DIM, NULL, &bad, &b, &err) == HS_ERR_INVALID_ARG);
  CHECK(strstr(err.message, "m = 1000000000") != NULL);
  CHECK_EQ_INT(b.len, len0);
  /* threads far above the pool's 256: clamped, a valid index built
   * without per-thread scratch for 2^32 workers (it used to fail, out of
   * memory, after allocating scratch for millions of threads) */
  bad = p;
  bad.threads = UINT32_MAX;
  hs_buf t;
  hs_buf_init(&t);
  CHECK_OK(hs_vidx_build(x, n, DIM, NULL, &bad, &t, &err), &err);
  v = open_mem(&t);
  if (v) {
    CHECK_OK(hs_vidx_validate(v, &err), &err);
    CHECK_EQ_INT(hs_vidx_indexed_count(v), n);
    hs_vidx_free(v);
  }
  hs_buf_free(&t);
  /* header counts the blob cannot hold: corrupt, refused before allocating
   * (checksums rewritten so that the count checks are reached) */
  const struct {
    uint32_t off; /* header field (vidx_internal.h) */
    uint64_t value;
    int wide;
  } lies[] = {
      {28, 0xFFFFFFF0u, 0}, /* indexed count (with the row count below) */
      {44, 0xFFFFFFFFu, 0}, /* partitions */
      {36, 0xFFFFFFFFu, 0}, /* m0 */
      {16, 0xFFFFFFFFu, 0}, /* dim */
      {64, 1ull << 40, 1},  /* upper blocks */
      {52, 0xFFFFFFFFu, 0}, /* code size */
  };
  for (size_t i = 0; i < sizeof lies / sizeof *lies; i++) {
    uint8_t *c = malloc(len0);
    memcpy(c, b.data, len0);
    if (lies[i].wide)
      hs_store_u64le(c + lies[i].off, lies[i].value);
    else
      hs_store_u32le(c + lies[i].off, (uint32_t)lies[i].value);
    if (lies[i].off == 28) hs_store_u32le(c + 24, 0xFFFFFFF0u);
    fix_checksums(c, len0);
    hs_error e = {0};
    hs_status st = open_bytes(c, len0, &e);
    CHECK(st == HS_ERR_CORRUPT);
    if (st != HS_ERR_CORRUPT) fprintf(stderr, "  header field at %u: %s\n", lies[i].off, e.message);
    free(c);
  }
  hs_buf_free(&b);
}

/* Roaring allow-sets of every container kind (array, bitset, run), across
 * container boundaries, with rows past the file's and a row count that is
 * not a multiple of 64, give the walk the same rows as the same set passed
 * as words (vidx_allow.c decodes the portable serialization); null rows
 * make the index's rows differ from local ids. */
static void test_allow_forms(void) {
  const size_t n = getenv("HS_TEST_SMALL") || N < 20000 ? 3001 : 70001, dim = 4;
  float *x = malloc(n * dim * sizeof *x);
  uint8_t *valid = calloc((n + 7) / 8, 1);
  uint64_t st = 77;
  for (size_t i = 0; i < n * dim; i++) x[i] = (float)gauss(&st);
  for (size_t i = 0; i < n; i++)
    if (i % 97 != 5) valid[i / 8] |= (uint8_t)(1u << (i % 8));
  hs_vidx_params p;
  hs_vidx_params_default(&p);
  p.m = 4;
  p.ef_construction = 16;
  hs_buf b;
  hs_buf_init(&b);
  hs_error err = {0};
  CHECK_OK(hs_vidx_build(x, n, dim, valid, &p, &b, &err), &err);
  hs_vidx *v = open_mem(&b);
  const size_t nw = (n + 63) / 64;
  uint64_t *words = malloc(nw * sizeof *words);
  for (int kind = 0; v != NULL && kind < 5; kind++) {
    roaring_bitmap_t *r = roaring_bitmap_create();
    memset(words, 0, nw * sizeof *words);
    for (size_t i = 0; i < n; i++) {
      bool on = kind == 0   ? i % 50 == 3                     /* sparse: arrays */
                : kind == 1 ? hs_test_rand(&st) % 3 != 0      /* dense: bitsets */
                : kind == 2 ? (i >= n / 3 && i < n - 7)       /* ranges: runs */
                : kind == 3 ? (i / 64) % 2 == 0 || i % 7 == 0 /* mixed */
                            : i == n - 1;                     /* the last row alone */
      if (!on) continue;
      roaring_bitmap_add(r, (uint32_t)i);
      words[i >> 6] |= 1ull << (i & 63);
    }
    roaring_bitmap_add_range(r, n, n + 100); /* past the rows: allow nothing */
    roaring_bitmap_run_optimize(r);
    hs_vidx_search_params sp = {.exact_rows = 1}; /* the walk: the decoded bitset */
    for (int qi = 0; qi < 5; qi++) {
      float q[4];
      for (size_t j = 0; j < dim; j++) q[j] = (float)gauss(&st);
      hs_vidx_hit h1[K], h2[K];
      uint32_t n1 = 0, n2 = 0;
      CHECK_OK(hs_vidx_search(v, q, K, &sp, r, h1, &n1, &err), &err);
      CHECK_OK(hs_vidx_search_bits(v, q, K, &sp, words, nw, h2, &n2, &err), &err);
      CHECK(n1 == n2 && n1 > 0);
      for (uint32_t i = 0; i < n1 && i < n2; i++) {
        CHECK(h1[i].row == h2[i].row && h1[i].distance == h2[i].distance);
        CHECK(roaring_bitmap_contains(r, h1[i].row) && h1[i].row % 97 != 5);
      }
    }
    roaring_bitmap_free(r);
  }
  free(words);
  free(x);
  free(valid);
  hs_vidx_free(v);
  hs_buf_free(&b);
}

int main(void) {
  if (getenv("HS_VIDX_SEED_DIR")) {
    write_seeds(getenv("HS_VIDX_SEED_DIR"));
    return hs_test_finish("test_vidx (seeds)");
  }
  const char *small = getenv("HS_TEST_SMALL");
#ifdef HS_TEST_UNDER_ASAN
  small = "1"; /* sanitizers run ~10x slower: a smaller data set */
#endif
  if (small && *small && *small != '0') {
    N = 2500;
    NQ = 30;
  }
  float *x = malloc(N * DIM * sizeof *x);
  uint32_t *cluster = malloc(N * sizeof *cluster);
  make_data(x, cluster, N, 1);
  /* queries: data rows plus noise (their cluster known) */
  float *qs = malloc(NQ * DIM * sizeof *qs);
  uint32_t *qc = malloc(NQ * sizeof *qc);
  uint64_t st = 12345;
  for (size_t i = 0; i < NQ; i++) {
    size_t r = hs_test_rand(&st) % N;
    qc[i] = cluster[r];
    for (int j = 0; j < DIM; j++) qs[i * DIM + j] = x[r * DIM + j] + 0.2f * (float)gauss(&st);
  }
  test_recall(x, qs);
  test_filtered(x, cluster, qs, qc);
  test_allow_forms();
  test_roundtrip_and_determinism(x, qs);
  test_default_partitions();
  test_link_layouts(x, qs);
  test_build_in_place(x);
  test_ivf(x, qs);
  test_quant(x, qs);
  test_nulls_and_edges();
  test_limits(x);
  free(x);
  free(cluster);
  free(qs);
  free(qc);
  return hs_test_finish("test_vidx");
}
