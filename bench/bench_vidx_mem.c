/*
 * bench_vidx_mem.c — resident memory of an opened vector index file, with
 * QPS and recall, for float32 against quantized (SQ8/PQ) traversal.
 *
 *   bench_vidx_mem build BASE.npy N OUT.vidx [none|sq8|pq]
 *       index the first N rows of a float32 .npy (C order, 2-d) and write
 *       the index bytes to OUT.vidx
 *   bench_vidx_mem search - BASE.npy N NQ EF,EF,... FILE[:resident]...
 *       queries are rows N .. N + NQ of BASE.npy (not indexed), truth by
 *       brute force over the first N rows. Each FILE is opened as a file
 *       source (":resident": with HS_VIDX_RESIDENT=1; ":mem": read into
 *       anonymous memory and opened from there; ":huge": the same, 2 MB
 *       aligned and advised MADV_HUGEPAGE first), searched at every
 *       ef (one thread, one query at a time) and closed, in turn, for
 *       HS_BENCH_ROUNDS rounds (default 5): VmRSS growth over its open and
 *       queries, recall@10, best QPS.
 *
 * build: HS_BENCH_M=M sets the graph degree, HS_BENCH_PARTITIONS=P the IVF
 * partitions (0: the default), HS_BENCH_THREADS=T the build threads (1: a
 * deterministic graph), HS_BENCH_LINKS=fixed|compact the layer-0 layout
 * (default: compact for quantized indexes).
 * HS_BENCH_RERANK=R sets hs_vidx_search_params.rerank (0: the default).
 * HS_VIDX_RESIDENT=1 opens a quantized index the old way (float32 section
 * mapped and checksummed at open) for an A/B in the same binary.
 * HS_BENCH_METRIC=cosine (build and search) indexes with cosine; the truth
 * stays squared L2, which ranks alike only for unit rows (e.g. WordNet's
 * MiniLM embeddings): a hit counts when 2 * distance <= the k-th L2².
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/common.h"
#include "index/vector/vidx.h"

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, "VmRSS:", 6) == 0) v = strtol(line + 6, NULL, 10);
  if (f != NULL) fclose(f);
  return v;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Rows [first, first + n) of a 2-d float32 .npy; dim set. */
static float *load_npy(const char *path, size_t first, size_t n, size_t *dim) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  unsigned char h[10];
  if (fread(h, 1, 10, f) != 10) return NULL;
  size_t hl = (size_t)h[8] | (size_t)h[9] << 8;
  char *hdr = calloc(1, hl + 1);
  if (fread(hdr, 1, hl, f) != hl) return NULL;
  char *sh = strstr(hdr, "'shape': (");
  if (sh == NULL) return NULL;
  size_t rows = strtoul(sh + 10, &sh, 10);
  *dim = strtoul(sh + 1, NULL, 10);
  free(hdr);
  if (first + n > rows) return NULL;
  float *x = malloc(n * *dim * sizeof *x);
  fseek(f, (long)(10 + hl + first * *dim * 4), SEEK_SET);
  if (fread(x, sizeof *x, n * *dim, f) != n * *dim) return NULL;
  fclose(f);
  return x;
}

static int build(int argc, char **argv) {
  if (argc < 5) return 2;
  size_t n = strtoul(argv[3], NULL, 10), dim;
  float *x = load_npy(argv[2], 0, n, &dim);
  if (x == NULL) {
    fprintf(stderr, "cannot read %s\n", argv[2]);
    return 1;
  }
  hs_vidx_params p;
  hs_vidx_params_default(&p);
  if (argc > 5 && strcmp(argv[5], "sq8") == 0) p.quant.kind = HS_QUANT_SQ8;
  if (argc > 5 && strcmp(argv[5], "pq") == 0) p.quant.kind = HS_QUANT_PQ;
  if (getenv("HS_BENCH_METRIC") &&
      hs_metric_parse(getenv("HS_BENCH_METRIC"), &p.metric, NULL) != HS_OK)
    return 2;
  if (getenv("HS_BENCH_M")) p.m = (uint32_t)atoi(getenv("HS_BENCH_M"));
  if (getenv("HS_BENCH_PARTITIONS")) p.partitions = (uint32_t)atoi(getenv("HS_BENCH_PARTITIONS"));
  if (getenv("HS_BENCH_THREADS")) p.threads = (uint32_t)atoi(getenv("HS_BENCH_THREADS"));
  const char *links = getenv("HS_BENCH_LINKS");
  if (links != NULL && strcmp(links, "fixed") == 0) p.links = HS_VIDX_LINKS_FIXED;
  if (links != NULL && strcmp(links, "compact") == 0) p.links = HS_VIDX_LINKS_COMPACT;
  hs_buf b;
  hs_buf_init(&b);
  hs_error err = {0};
  double t0 = now();
  if (hs_vidx_build(x, n, dim, NULL, &p, &b, &err) != HS_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  FILE *f = fopen(argv[4], "wb");
  fwrite(b.data, 1, b.len, f);
  fclose(f);
  printf("built %zu x %zu in %.1f s: %zu bytes\n", n, dim, now() - t0, b.len);
  return 0;
}

static int search(int argc, char **argv) {
  if (argc < 8) return 2;
  size_t n = strtoul(argv[4], NULL, 10), nq = strtoul(argv[5], NULL, 10), dim;
  const uint32_t k = 10;
  const bool cosine = getenv("HS_BENCH_METRIC") && strcmp(getenv("HS_BENCH_METRIC"), "cosine") == 0;
  float *q = load_npy(argv[3], n, nq, &dim);
  if (q == NULL) {
    fprintf(stderr, "cannot read queries\n");
    return 1;
  }
  /* truth: the k-th smallest squared L2 distance per query (top-k by
   * insertion), streamed over the base */
  float *best_d = malloc(nq * k * sizeof *best_d), *kth = malloc(nq * sizeof *kth);
  for (size_t i = 0; i < nq * k; i++) best_d[i] = 3e38f;
  size_t chunk = 20000;
  for (size_t s = 0; s < n; s += chunk) {
    size_t c = n - s < chunk ? n - s : chunk, dd;
    float *x = load_npy(argv[3], s, c, &dd);
    for (size_t qi = 0; qi < nq; qi++) {
      float *b = best_d + qi * k;
      for (size_t i = 0; i < c; i++) {
        float dist = hs_distance_l2sq_f32(q + qi * dim, x + i * dim, dim);
        if (dist >= b[k - 1]) continue;
        size_t j = k - 1;
        while (j > 0 && b[j - 1] > dist) {
          b[j] = b[j - 1];
          j--;
        }
        b[j] = dist;
      }
    }
    free(x);
  }
  for (size_t qi = 0; qi < nq; qi++) kth[qi] = best_d[qi * k + k - 1];
  free(best_d);
  /* configs: FILE or FILE:resident, each opened, searched at every ef and
   * closed in turn, for `rounds` rounds (best QPS kept; VmRSS deltas are
   * over the VmRSS before that open, with nothing else open) */
  int nc = argc - 7, rounds = getenv("HS_BENCH_ROUNDS") ? atoi(getenv("HS_BENCH_ROUNDS")) : 5;
  size_t n_ef = 0;
  uint32_t efs[16];
  for (char *e = argv[6]; *e && n_ef < 16;) {
    efs[n_ef++] = (uint32_t)strtoul(e, &e, 10);
    if (*e == ',') e++;
  }
  double *best = calloc((size_t)nc * n_ef, sizeof *best),
         *rec = calloc((size_t)nc * n_ef, sizeof *rec);
  long *rss_open = calloc((size_t)nc, sizeof *rss_open), *rss_q = calloc((size_t)nc, sizeof *rss_q);
  hs_vidx_hit hits[10];
  for (int round = 0; round < rounds; round++) {
    for (int ci = 0; ci < nc; ci++) {
      char path[1024];
      snprintf(path, sizeof path, "%s", argv[7 + ci]);
      char *colon = strstr(path, ":resident");
      if (colon != NULL) *colon = 0;
      /* FILE:mem / FILE:huge: the file read into anonymous memory (huge:
       * 2 MB aligned, MADV_HUGEPAGE before it is touched), opened from there */
      char *mem = strstr(path, ":mem"), *huge = strstr(path, ":huge");
      if (mem != NULL) *mem = 0;
      if (huge != NULL) *huge = 0;
      if (colon != NULL)
        setenv("HS_VIDX_RESIDENT", "1", 1);
      else
        unsetenv("HS_VIDX_RESIDENT");
      long r0 = rss_kb();
      hs_error err = {0};
      hs_source *src;
      hs_vidx *v;
      uint8_t *membuf = NULL;
      size_t memlen = 0, maplen = 0;
      if (mem != NULL || huge != NULL) {
        FILE *mf = fopen(path, "rb");
        fseek(mf, 0, SEEK_END);
        memlen = (size_t)ftell(mf);
        fseek(mf, 0, SEEK_SET);
        maplen = (memlen + (4u << 20)) & ~(size_t)((2u << 20) - 1);
        uint8_t *raw = mmap(NULL, maplen + (2u << 20), PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        membuf = (uint8_t *)(((uintptr_t)raw + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
        if (huge != NULL) madvise(membuf, maplen, MADV_HUGEPAGE);
        if (fread(membuf, 1, memlen, mf) != memlen) return 1;
        fclose(mf);
      }
      if ((membuf != NULL ? hs_source_open_memory(membuf, memlen, path, &src, &err)
                          : hs_source_open_file(path, &src, &err)) != HS_OK ||
          hs_vidx_open(src, 0, hs_source_size(src), &v, &err) != HS_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
      }
      hs_source_unref(src);
      rss_open[ci] = rss_kb() - r0;
      if (huge != NULL && round == 0) {
        FILE *sf = fopen("/proc/self/smaps_rollup", "r");
        char line[256];
        while (sf != NULL && fgets(line, sizeof line, sf) != NULL)
          if (strncmp(line, "AnonHugePages:", 14) == 0) printf("huge: %s", line);
        if (sf != NULL) fclose(sf);
      }
      for (size_t a = 0; a < n_ef; a++) {
        hs_vidx_search_params sp = {0};
        sp.ef_search = efs[a];
        if (getenv("HS_BENCH_RERANK")) sp.rerank = (uint32_t)atoi(getenv("HS_BENCH_RERANK"));
        size_t good = 0;
        double t0 = now();
        for (size_t qi = 0; qi < nq; qi++) {
          uint32_t nh;
          if (hs_vidx_search(v, q + qi * dim, k, &sp, NULL, hits, &nh, &err) != HS_OK) {
            fprintf(stderr, "%s\n", err.message);
            return 1;
          }
          for (uint32_t j = 0; j < nh; j++)
            if ((cosine ? 2 * hits[j].distance : hits[j].distance * hits[j].distance) <=
                kth[qi] * (1 + 1e-5f) + (cosine ? 1e-6f : 0))
              good++;
        }
        double qps = nq / (now() - t0);
        if (qps > best[ci * n_ef + a]) best[ci * n_ef + a] = qps;
        rec[ci * n_ef + a] = (double)good / (nq * k);
      }
      rss_q[ci] = rss_kb() - r0;
      if (round == rounds - 1) {
        double t0 = now();
        hs_status vs = hs_vidx_validate(v, &err);
        printf("%s: validate %s in %.3f s\n", argv[7 + ci], vs == HS_OK ? "ok" : err.message,
               now() - t0);
      }
      hs_vidx_free(v);
      if (membuf != NULL) munmap(membuf, maplen); /* the unaligned head stays mapped */
    }
  }
  for (int ci = 0; ci < nc; ci++) {
    printf("%s: VmRSS after open +%ld kB, after the queries +%ld kB\n", argv[7 + ci], rss_open[ci],
           rss_q[ci]);
    for (size_t a = 0; a < n_ef; a++)
      printf("  ef=%u recall=%.4f qps=%.0f (best of %d)\n", efs[a], rec[ci * n_ef + a],
             best[ci * n_ef + a], rounds);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "build") == 0) return build(argc, argv);
  if (argc > 1 && strcmp(argv[1], "search") == 0) return search(argc, argv);
  fprintf(stderr, "usage: see bench/bench_vidx_mem.c\n");
  return 2;
}
