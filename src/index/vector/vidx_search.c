/*
 * vidx_search.c — top-k search of an opened vector index: unfiltered graph
 * search, a planner that picks an exact scan of the allowed rows or a
 * filter-aware traversal from a cost model (also exact for small unfiltered
 * indexes), and the exact fallback that guarantees min(k, allowed indexed
 * rows) answers.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vidx_internal.h"

/* Default ef_search is max(k, HS_VIDX_DEFAULT_EF) (README.md, "Defaults"),
 * times HS_VIDX_PQ_EF_FACTOR for PQ indexes (their coarse distances need a
 * wider beam: README.md, "Quantized traversal"). */
#define HS_VIDX_DEFAULT_EF 64u
#define HS_VIDX_PQ_EF_FACTOR 4u

/* The two-hop walk (README.md, "Filtered search") under a filter of
 * selectivity s keeps ef at s >= HOP_FULL_SEL and widens it by
 * (HOP_FULL_SEL / s)^HOP_BOOST_EXP (at most HOP_BOOST_MAX) below (recall
 * falls steeply under 6-7 %: 200K x 128, 0.92 at 5.5 % with ef; 100K x 384,
 * 0.941 / 0.946 at 6.5 / 7 % with 2 m and (0.065 / s)^5; with this beam
 * >= 0.959 at 6.5-9 % there and >= 0.98 at 6.3-7.9 % on three 128-d
 * builds; its cost falls continuously to the plain walk's at 7.5 %, the
 * exact scan's rising to meet it at ~6.5-7 %); its second hop gathers up
 * to m fresh allowed nodes per expansion at s >= HOP_WIDE_SEL and up to 2 m
 * at s <= HOP_WIDE_SEL - HOP_WIDE_RAMP, linearly between (recall@10, 128-d,
 * at 6 % / 7 %: 0.939 / 0.945 with m, 0.969 / 0.986 with 2 m; 384-d at
 * 10 %: 0.939 with m, 0.987 with 2 m; a wider beam bought less for more). It is planned only
 * between HOP_MIN_SEL and HOP_MAX_SEL (recall below 0.95 outside on the calibration set: too few
 * allowed nodes at two hops below, the second hop truncated to m above, where the dense walk costs
 * as little). */
#define HS_VIDX_HOP_FULL_SEL 0.075
#define HS_VIDX_HOP_WIDE_SEL 0.13
#define HS_VIDX_HOP_WIDE_RAMP 0.03
#define HS_VIDX_HOP_MIN_SEL 0.05
#define HS_VIDX_HOP_MAX_SEL 0.30
#define HS_VIDX_HOP_BOOST_EXP 5.0
#define HS_VIDX_HOP_BOOST_MAX 4.0

/* The planner's cost model (README.md, "Filtered search": what each
 * constant is and how it was measured on this machine), in nanoseconds.
 *   exact scan of c rows:  c * (EXACT_ROW + EXACT_DIM * dim)
 *   graph walk, ef:        V(ef) * (WALK_NODE + WALK_DIM * dim) nodes
 *                          scored, V(ef) = WALK_V0 + WALK_V1 * ef
 *   dense filter, sel s:   V(ef) / s^DENSE_EXP nodes (at most the
 *                          partition), each with one bit test more
 *   two-hop walk, sel s:   V(ef * boost(s)) nodes, each with the link
 *                          blocks of its filtered-out neighbours read:
 *                          times (1 + HOP_LINK * (1 - s)) */
/* The exact-scan constants were refitted on 2026-12-06 on the 2-vCPU Intel
 * Xeon (AVX-512) box, where a random row costs its cache lines from DRAM
 * (~190 ns a line, ~16 in flight): float32 rows ~30 ns at dim 128 (was
 * 0.125 per dim, measured on the AMD EPYC box at 17-21 ns), SQ8 codes 20 us
 * + ~20 ns a row (was 2 us + 11.6 ns); README.md "Filtered search". */
#define HS_PLAN_EXACT_ROW 5.0
#define HS_PLAN_EXACT_DIM 0.2
#define HS_PLAN_WALK_NODE 40.0
#define HS_PLAN_WALK_DIM 0.25
#define HS_PLAN_WALK_V0 300.0
#define HS_PLAN_WALK_V1 14.0
#define HS_PLAN_TEST 2.0
#define HS_PLAN_DENSE_EXP 0.7
#define HS_PLAN_HOP_LINK 0.8
/* ... times 1 + HOP_WIDE * (width - 1) for a second hop wider than m
 * (hop_width; 2 m measured +5-20 % at 6-10 % on 128-d rows, +50 % at 10 %
 * on 384-d ones) */
#define HS_PLAN_HOP_WIDE 0.15
/* An exact scan of SQ8 codes (README.md "Scan codes"): c rows at
 * CODE_ROW + CODE_DIM * dim, plus CODE_FIXED for the query table, the sort
 * of the kept candidates and the float32 re-rank of about k of them. */
#define HS_PLAN_CODE_ROW 5.0
#define HS_PLAN_CODE_DIM 0.115
#define HS_PLAN_CODE_FIXED 20000.0
/* A coarse scan (README.md "Coarse code scan"): the same fixed cost, c rows
 * at CODE_ROW + CODE4_DIM * dim (half the bytes, but the same bitset walk and
 * a selection: measured 0.82-0.88x the SQ8 scan's CPU time at 5,000-10,000
 * random rows of 200K x 128 on the AMD box), and its COARSE_KEEP candidates'
 * SQ8 codes at the SQ8 row cost. */
#define HS_PLAN_CODE4_DIM 0.0875
/* A coarse scan keeps the max(COARSE_KEEP_K * k, COARSE_KEEP_MIN) best rows
 * by 4-bit distance for the SQ8 pass (recall@10 0.985-0.992 at 1-9 % on
 * 200K x 128 with 64 kept, limited by the SQ8 order there, which the float32
 * re-rank fixes; 256 kept cost 0.08x more in their selection), and runs only
 * from COARSE_MIN_ROWS allowed rows (below, the proved scan costs about as
 * little). */
#define HS_COARSE_KEEP_K 8u
#define HS_COARSE_KEEP_MIN 96u
#define HS_COARSE_MIN_ROWS 2048u

static inline bool scan_by_codes(const hs_vidx *x);

typedef enum plan_kind { PLAN_EXACT, PLAN_DENSE, PLAN_HOP } plan_kind;
/* How the exact plan reads the allowed rows: float32 rows, SQ8 codes with a
 * proved re-rank (both exact), or a coarse pass over 4-bit codes first
 * (approximate: filtered searches only). */
typedef enum scan_kind { SCAN_FLOAT, SCAN_CODES, SCAN_COARSE } scan_kind;

/* HS_VIDX_PLAN=exact|coarse|dense|hop forces a plan (benchmarks,
 * calibration; exact: the proved scans only, coarse: the coarse scan where
 * the index and machine have it); read once. */
static pthread_once_t plan_once = PTHREAD_ONCE_INIT;
static int plan_forced = -1, scan_forced = -1;
static void plan_env(void) {
  const char *e = getenv("HS_VIDX_PLAN");
  if (e == NULL) return;
  if (strcmp(e, "exact") == 0) plan_forced = PLAN_EXACT, scan_forced = SCAN_CODES;
  if (strcmp(e, "coarse") == 0) plan_forced = PLAN_EXACT, scan_forced = SCAN_COARSE;
  if (strcmp(e, "dense") == 0) plan_forced = PLAN_DENSE;
  if (strcmp(e, "hop") == 0) plan_forced = PLAN_HOP;
}

/* HS_VIDX_PQ_RERANK=N sets PQ's default re-rank count (benchmarks,
 * calibration: README.md "Quantized traversal"); read once. */
static pthread_once_t rerank_once = PTHREAD_ONCE_INIT;
static uint32_t rerank_forced;
static void rerank_env(void) {
  const char *e = getenv("HS_VIDX_PQ_RERANK");
  long v = e != NULL ? strtol(e, NULL, 10) : 0;
  rerank_forced = v > 0 && v < (1L << 30) ? (uint32_t)v : 0;
}

/* PQ's default re-rank: the best max(RERANK_K * k, RERANK_MIN) by code
 * distance. */
static size_t pq_rerank(uint32_t k) {
  pthread_once(&rerank_once, rerank_env);
  if (rerank_forced) return rerank_forced;
  size_t r = HS_VIDX_PQ_RERANK_K * (size_t)k;
  return r > HS_VIDX_PQ_RERANK_MIN ? r : HS_VIDX_PQ_RERANK_MIN;
}

uint32_t hs_vidx_pq_rerank(uint32_t k) {
  size_t r = pq_rerank(k);
  return r > UINT32_MAX ? UINT32_MAX : (uint32_t)r;
}

/* Nodes an unfiltered walk of one partition of `part_n` nodes scores. */
static double walk_visits(double ef, double part_n) {
  double v = HS_PLAN_WALK_V0 + HS_PLAN_WALK_V1 * ef;
  return v < part_n ? v : part_n;
}

/* The two-hop walk's ef factor at selectivity sel. */
static double hop_boost(double sel) {
  if (sel >= HS_VIDX_HOP_FULL_SEL) return 1.0;
  double b = pow(HS_VIDX_HOP_FULL_SEL / sel, HS_VIDX_HOP_BOOST_EXP);
  return b < HS_VIDX_HOP_BOOST_MAX ? b : HS_VIDX_HOP_BOOST_MAX;
}

/* The two-hop walk's second-hop cap at selectivity sel, in units of m
 * (1 to 2: HOP_WIDE_SEL above). */
static double hop_width(double sel) {
  double w = 1.0 + (HS_VIDX_HOP_WIDE_SEL - sel) / HS_VIDX_HOP_WIDE_RAMP;
  return w < 1.0 ? 1.0 : (w > 2.0 ? 2.0 : w);
}

/* Estimated cost of an exact scan of c rows over float32 rows, and over
 * SQ8 codes (infinite when the index has none for scans). */
static double exact_cost_float(const hs_vidx *x, uint64_t c) {
  return (double)c * (HS_PLAN_EXACT_ROW + HS_PLAN_EXACT_DIM * x->dim);
}
static double exact_cost_codes(const hs_vidx *x, uint64_t c) {
  if (!scan_by_codes(x)) return INFINITY;
  return HS_PLAN_CODE_FIXED + (double)c * (HS_PLAN_CODE_ROW + HS_PLAN_CODE_DIM * x->dim);
}
static uint32_t coarse_keep(uint32_t k) {
  uint64_t c = (uint64_t)HS_COARSE_KEEP_K * k;
  return c > HS_COARSE_KEEP_MIN ? (c > UINT32_MAX ? UINT32_MAX : (uint32_t)c) : HS_COARSE_KEEP_MIN;
}
/* A coarse scan of c rows (infinite where it does not run: unfiltered,
 * below COARSE_MIN_ROWS or 8 keeps, no SQ8 codes, no AVX-512). */
static double exact_cost_coarse(const hs_vidx *x, uint64_t c, uint32_t k, bool filtered) {
  const uint32_t keep = coarse_keep(k);
  if (!filtered || !scan_by_codes(x) || !hs_quant_sq4_fast() || c < HS_COARSE_MIN_ROWS ||
      c < 8 * (uint64_t)keep || __atomic_load_n(&x->codes4_state, __ATOMIC_ACQUIRE) == 2)
    return INFINITY;
  return HS_PLAN_CODE_FIXED + (double)c * (HS_PLAN_CODE_ROW + HS_PLAN_CODE4_DIM * x->dim) +
         (double)keep * (HS_PLAN_CODE_ROW + HS_PLAN_CODE_DIM * x->dim);
}
/* How the exact scan of c rows reads them: the cheapest model (coarse only
 * when `coarse` allows it). */
static scan_kind exact_scan_kind(const hs_vidx *x, uint64_t c, uint32_t k, bool filtered,
                                 bool coarse) {
  pthread_once(&plan_once, plan_env);
  double f = exact_cost_float(x, c), q = exact_cost_codes(x, c);
  double r = coarse && scan_forced != SCAN_CODES ? exact_cost_coarse(x, c, k, filtered) : INFINITY;
  if (coarse && scan_forced == SCAN_COARSE && r < INFINITY) return SCAN_COARSE;
  if (r < q && r < f) return SCAN_COARSE;
  return q < f ? SCAN_CODES : SCAN_FLOAT;
}

/* Estimated cost of a plan for c allowed of n indexed rows. */
static double plan_cost(const hs_vidx *x, plan_kind kind, uint64_t c, uint32_t k, uint32_t ef,
                        uint32_t np, bool filtered) {
  const double dim = x->dim, sel = (double)c / x->n;
  const double part_n = (double)x->n / (x->n_parts ? x->n_parts : 1);
  if (kind == PLAN_EXACT) { /* the same for a lean index (vectors read from the
                             * file): the plan, hence the answer, does not
                             * depend on how the index is stored */
    double f = exact_cost_float(x, c), q = exact_cost_codes(x, c);
    double r = exact_cost_coarse(x, c, k, filtered);
    q = q < f ? q : f;
    return r < q ? r : q;
  }
  double node = HS_PLAN_WALK_NODE + HS_PLAN_WALK_DIM * dim + (c < x->n ? HS_PLAN_TEST : 0);
  if (kind == PLAN_HOP) {
    double v = walk_visits(ef * hop_boost(sel), part_n);
    return np * v * node * (1.0 + HS_PLAN_HOP_LINK * (1.0 - sel)) *
           (1.0 + HS_PLAN_HOP_WIDE * (hop_width(sel) - 1.0));
  }
  double v = walk_visits(ef, part_n);
  if (c < x->n) v /= pow(sel, HS_PLAN_DENSE_EXP);
  if (v > part_n) v = part_n;
  return np * v * node;
}

/* The cheapest plan that keeps recall (README.md, "Filtered search"). */
static plan_kind plan_choose(const hs_vidx *x, uint64_t c, uint32_t k, bool filtered, uint32_t ef,
                             uint32_t np, bool allow_exact) {
  pthread_once(&plan_once, plan_env);
  if (plan_forced >= 0 && (allow_exact || plan_forced != PLAN_EXACT) &&
      (filtered || plan_forced != PLAN_HOP))
    return (plan_kind)plan_forced;
  plan_kind best = PLAN_DENSE;
  double cost = plan_cost(x, PLAN_DENSE, c, k, ef, np, filtered);
  if (filtered && (double)c >= HS_VIDX_HOP_MIN_SEL * x->n &&
      (double)c <= HS_VIDX_HOP_MAX_SEL * x->n) {
    double h = plan_cost(x, PLAN_HOP, c, k, ef, np, filtered);
    if (h < cost) {
      best = PLAN_HOP;
      cost = h;
    }
  }
  if (allow_exact && plan_cost(x, PLAN_EXACT, c, k, ef, np, filtered) <= cost) return PLAN_EXACT;
  return best;
}

float hs_vidx_report(hs_metric m, float d) {
  switch (m) {
  case HS_METRIC_L2: return sqrtf(d);
  case HS_METRIC_COSINE: {
    float c = 1.0f + d; /* d = -cos on normalised vectors */
    return c < 0.0f ? 0.0f : (c > 2.0f ? 2.0f : c);
  }
  default: return d;
  }
}

static hs_vidx_scratch *scratch_get(hs_vidx *x) {
  pthread_mutex_lock(&x->mu);
  hs_vidx_scratch *s = x->pool;
  if (s != NULL) x->pool = s->next;
  pthread_mutex_unlock(&x->mu);
  if (s != NULL) return s;
  s = hs_calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  bool ok = hs_hnsw_scratch_init(&s->hs, x->n);
  s->q = hs_calloc(x->vdim, sizeof *s->q); /* IP: q[dim] stays 0 */
  s->probe = hs_malloc((size_t)x->n_parts * sizeof *s->probe);
  s->probe_d = hs_malloc((size_t)x->n_parts * sizeof *s->probe_d);
  s->ids = hs_malloc((size_t)x->fetch_batch * sizeof *s->ids);
  if (x->lean) s->vbuf = hs_malloc((size_t)x->fetch_batch * x->vdim * sizeof *s->vbuf);
  if (!ok || s->q == NULL || s->probe == NULL || s->probe_d == NULL || s->ids == NULL ||
      (x->lean && s->vbuf == NULL)) {
    if (ok) hs_hnsw_scratch_free(&s->hs);
    hs_free(s->ids);
    hs_free(s->vbuf);
    hs_free(s->q);
    hs_free(s->probe);
    hs_free(s->probe_d);
    hs_free(s);
    return NULL;
  }
  return s;
}

static void scratch_put(hs_vidx *x, hs_vidx_scratch *s) {
  pthread_mutex_lock(&x->mu);
  s->next = x->pool;
  x->pool = s;
  pthread_mutex_unlock(&x->mu);
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t c = need < 64 ? 64 : need * 2;
  void *q = hs_realloc(*p, c * elem);
  if (q == NULL) return false;
  *p = q;
  *cap = c;
  return true;
}

static inline bool hit_less(hs_vidx_hit a, hs_vidx_hit b) {
  return a.distance < b.distance || (a.distance == b.distance && a.row < b.row);
}

static int hit_cmp(const void *a, const void *b) {
  hs_vidx_hit x = *(const hs_vidx_hit *)a, y = *(const hs_vidx_hit *)b;
  return hit_less(x, y) ? -1 : (hit_less(y, x) ? 1 : 0);
}

static int cand_cmp_approx(const void *a, const void *b) {
  const hs_hnsw_cand *x = a, *y = b;
  if (x->d < y->d) return -1;
  if (x->d > y->d) return 1;
  return (x->id > y->id) - (x->id < y->id);
}

static inline bool cand_less(hs_hnsw_cand a, hs_hnsw_cand b) {
  return a.d < b.d || (a.d == b.d && a.id < b.id);
}

/* NAME(h, &n, cap, v): offer v to a bounded max-heap h[0, n) of the `cap`
 * best elements of type T by LESS (the worst on top, replaced when v beats
 * it). One definition for the top-k hits and a code scan's candidates. */
#define HS_BOUNDED_HEAP_OFFER(NAME, T, LESS)                \
  static void NAME(T *h, uint32_t *n, uint32_t cap, T v) {  \
    uint32_t i;                                             \
    if (*n < cap) { /* sift up from the new leaf */         \
      i = (*n)++;                                           \
      while (i > 0) {                                       \
        uint32_t p = (i - 1) / 2;                           \
        if (!LESS(h[p], v)) break;                          \
        h[i] = h[p];                                        \
        i = p;                                              \
      }                                                     \
      h[i] = v;                                             \
      return;                                               \
    }                                                       \
    if (!LESS(v, h[0])) return;                             \
    i = 0; /* sift down from the replaced top */            \
    for (;;) {                                              \
      uint32_t l = 2 * i + 1, b;                            \
      if (l >= *n) break;                                   \
      b = (l + 1 < *n && LESS(h[l], h[l + 1])) ? l + 1 : l; \
      if (!LESS(v, h[b])) break;                            \
      h[i] = h[b];                                          \
      i = b;                                                \
    }                                                       \
    h[i] = v;                                               \
  }

HS_BOUNDED_HEAP_OFFER(topk_offer, hs_vidx_hit, hit_less)
HS_BOUNDED_HEAP_OFFER(cand_offer, hs_hnsw_cand, cand_less)

/* Sort a max-heap of candidates (cand_offer's) ascending in place: the
 * order qsort with cand_cmp_approx gives (a total order), without a call
 * per comparison (a code scan sorts its ~100 kept candidates per query). */
static void cand_heap_sort(hs_hnsw_cand *h, uint32_t n) {
  for (uint32_t end = n; end > 1;) {
    hs_hnsw_cand v = h[--end]; /* the leaf that replaces the top */
    h[end] = h[0];
    uint32_t i = 0;
    for (;;) {
      uint32_t l = 2 * i + 1, b;
      if (l >= end) break;
      b = (l + 1 < end && cand_less(h[l], h[l + 1])) ? l + 1 : l;
      if (!cand_less(v, h[b])) break;
      h[i] = h[b];
      i = b;
    }
    h[i] = v;
  }
}

/* The exact reported distance of one indexed row, whose stored vector is v. */
static inline hs_vidx_hit hit_from(const hs_vidx *x, const hs_distance_kernels *kern,
                                   const float *q, uint32_t local, const float *v) {
  if (x->metric == HS_METRIC_IP) return (hs_vidx_hit){x->rows[local], -kern->dot_f32(q, v, x->dim)};
  float d = hs_hnsw_dist(kern, x->g.space, q, v, x->dim);
  return (hs_vidx_hit){x->rows[local], hs_vidx_report(x->metric, d)};
}

static inline hs_vidx_hit hit_of(const hs_vidx *x, const hs_distance_kernels *kern, const float *q,
                                 uint32_t local) {
  return hit_from(x, kern, q, local, x->g.vectors + (size_t)local * x->vdim);
}

/* SQ8, not IP: a lower bound of the reported exact distance of a row whose
 * approximate (code) distance is `approx`. That is the exact distance to the
 * decoded row x', and |x - x'| <= x->sq8_err_* for every indexed row (codes
 * round to the nearest of 256 levels between the rows' own min and max), so
 * by the triangle inequality (cosine: Cauchy-Schwarz, |q| = 1) the exact
 * distance is at least this (less float-sum slack). Candidates are re-ranked
 * in approximate order and the re-rank stops at the first whose bound
 * exceeds the k-th exact distance: the answers of a whole-beam re-rank, with
 * about k reads (README.md, "Memory of a quantized index"). */
static inline float sq8_lower_bound(const hs_vidx *x, float approx) {
  float slack = 2e-7f * (float)x->dim, r;
  switch (x->metric) {
  case HS_METRIC_L2SQ:
  case HS_METRIC_L2:
    r = sqrtf(approx > 0 ? approx : 0) * (1 - slack) - x->sq8_err_l2;
    if (x->metric == HS_METRIC_L2) return r;
    return r > 0 ? r * r : 0;
  case HS_METRIC_COSINE: return 1.0f + approx - x->sq8_err_l2 - slack;
  case HS_METRIC_L1: return approx * (1 - slack) - x->sq8_err_l1;
  default: return -INFINITY;
  }
}

#define EXACT_AHEAD 8
/* Candidates ahead whose float32 rows a code scan's re-rank prefetches. */
#define RERANK_AHEAD 6
#ifndef CODES_AHEAD
#define CODES_AHEAD 24
#endif

bool hs_vidx_reads_add(hs_vidx_reads *r, uint64_t off, size_t len) {
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 256;
    uint64_t *o = hs_realloc(r->off, cap * sizeof *o);
    if (o == NULL) return false;
    r->off = o;
    size_t *l = hs_realloc(r->len, cap * sizeof *l);
    if (l == NULL) return false;
    r->len = l;
    r->cap = cap;
  }
  r->off[r->n] = off;
  r->len[r->n++] = len;
  return true;
}

void hs_vidx_reads_free(hs_vidx_reads *r) {
  if (r == NULL) return;
  hs_free(r->off);
  hs_free(r->len);
  memset(r, 0, sizeof *r);
}

/* The rows a lean index on an object store is about to read, in one wave
 * (io.h); under hs_vidx_search_reads only noted. */
static void rows_ahead(const hs_vidx *x, hs_vidx_scratch *s, const uint64_t *offs,
                       const size_t *lens, size_t m) {
  if (s->collect == NULL) {
    hs_source_prefetch(x->src, offs, lens, m);
    return;
  }
  for (size_t i = 0; i < m; i++)
    if (!hs_vidx_reads_add(s->collect, offs[i], lens[i])) return; /* best effort */
}

/* Offer the rows s->ids[0, cnt) (cnt <= fetch_batch) to the top-k. A lean
 * index reads their vectors from the file first, one pread per run of
 * consecutive ids, into s->vbuf: nothing is mapped, so the float32 section
 * never becomes part of the resident set. */
static hs_status offer_ids(const hs_vidx *x, hs_vidx_scratch *s, const hs_distance_kernels *kern,
                           const float *q, uint32_t cnt, hs_vidx_hit *hits, uint32_t *n, uint32_t k,
                           hs_error *err) {
  if (!x->lean) {
    /* rows of a filtered scan are scattered: each is prefetched whole
     * EXACT_AHEAD rows before it is scored */
    const size_t rb = (size_t)x->vdim * sizeof(float);
    for (uint32_t i = 0; i < cnt; i++) {
      if (i + EXACT_AHEAD < cnt) {
        hs_prefetch_span(x->g.vectors + (size_t)s->ids[i + EXACT_AHEAD] * x->vdim, rb);
      }
      topk_offer(hits, n, k, hit_of(x, kern, q, s->ids[i]));
    }
    return HS_OK;
  }
  const size_t per = (size_t)x->vdim * sizeof(float);
  if (hs_source_is_remote(x->src)) { /* the rows of this batch in one wave (io.h) */
    uint64_t offs[256];
    size_t lens[256];
    size_t m = 0;
    for (uint32_t i = 0; i < cnt && m < 256; i++) {
      offs[m] = x->vec_off + (uint64_t)s->ids[i] * per;
      lens[m++] = per;
    }
    hs_source_prefetch(x->src, offs, lens, m);
  }
  for (uint32_t i = 0; i < cnt;) {
    uint32_t j = i + 1;
    while (j < cnt && s->ids[j] == s->ids[j - 1] + 1) j++;
    hs_status st = hs_source_read_unmapped(x->src, x->vec_off + (uint64_t)s->ids[i] * per,
                                           (j - i) * per, s->vbuf + (size_t)i * x->vdim, err);
    if (st != HS_OK) {
      hs_error_prefix(err, "vidx search: re-ranking vectors: ");
      return st;
    }
    i = j;
  }
  for (uint32_t i = 0; i < cnt; i++)
    topk_offer(hits, n, k, hit_from(x, kern, q, s->ids[i], s->vbuf + (size_t)i * x->vdim));
  return HS_OK;
}

static inline bool local_of_row(const hs_vidx *x, uint32_t row, uint32_t *local) {
  if (x->rows_identity) {
    *local = row;
    return row < x->n;
  }
  size_t lo = 0, hi = x->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (x->sorted_rows[mid] < row)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < x->n && x->sorted_rows[lo] == row) {
    *local = x->sorted_local[lo];
    return true;
  }
  return false;
}

/* A lean index on an object store: the vectors an exact scan of the
 * allowed rows (all when neither is set) will read, fetched together first
 * instead of a round trip per batch (at most 8192 rows' ranges; the rest as
 * they come); under hs_vidx_search_reads only noted. The allowed rows are a
 * roaring bitmap or row words. */
static void prefetch_rows(const hs_vidx *x, hs_vidx_scratch *s, const roaring_bitmap_t *allowed,
                          const uint64_t *words, size_t nwords) {
  const size_t per = (size_t)x->vdim * sizeof(float);
  if (allowed == NULL &&
      words == NULL) { /* the section, in 4 MiB pieces (a prefetch stops at 64 MiB) */
    enum { PIECES = 16 };
    const uint64_t piece = (uint64_t)4 << 20, all = (uint64_t)x->n * per;
    uint64_t offs[PIECES];
    size_t lens[PIECES], m = 0;
    for (uint64_t at = 0; at < all && m < PIECES; at += piece, m++) {
      offs[m] = x->vec_off + at;
      lens[m] = (size_t)(all - at < piece ? all - at : piece);
    }
    rows_ahead(x, s, offs, lens, m);
    return;
  }
  enum { MAX_ROWS = 8192 };
  uint64_t *offs = hs_malloc(MAX_ROWS * sizeof *offs);
  size_t *lens = hs_malloc(MAX_ROWS * sizeof *lens);
  size_t m = 0;
  if (words != NULL) {
    size_t nw = nwords < x->row_words ? nwords : x->row_words;
    for (size_t w = 0; offs != NULL && lens != NULL && w < nw && m < MAX_ROWS; w++) {
      uint64_t b = words[w] & x->indexed_bits[w];
      while (b != 0 && m < MAX_ROWS) {
        uint32_t row = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(b)), local;
        b &= b - 1;
        if (!local_of_row(x, row, &local)) continue;
        offs[m] = x->vec_off + (uint64_t)local * per;
        lens[m++] = per;
      }
    }
  } else {
    roaring_uint32_iterator_t *it = roaring_create_iterator(allowed);
    while (offs != NULL && lens != NULL && it != NULL && it->has_value && m < MAX_ROWS) {
      uint32_t local;
      if (local_of_row(x, it->current_value, &local)) {
        offs[m] = x->vec_off + (uint64_t)local * per;
        lens[m++] = per;
      }
      roaring_advance_uint32_iterator(it);
    }
    if (it != NULL) roaring_free_uint32_iterator(it);
  }
  if (m > 0) rows_ahead(x, s, offs, lens, m);
  hs_free(offs);
  hs_free(lens);
}

/* Whether exact scans may read SQ8 codes (README.md "Scan codes"): the
 * index has SQ8 codes (its walk's or scan codes) and the metric has an
 * error bound (not inner product). */
static inline bool scan_by_codes(const hs_vidx *x) {
  return x->quant != NULL && hs_quant_kind_of(x->quant) == HS_QUANT_SQ8 &&
         x->metric != HS_METRIC_IP;
}

/* Where an exact scan's batches of allowed local ids go: float32 rows
 * into the top-k (qq NULL), or SQ8 codes into a bounded max-heap of the
 * `cap` best approximate distances (s->all), re-ranked afterwards. */
typedef struct scan_sink {
  hs_quant_query *qq;
  uint32_t cap, n;
  uint64_t seen;
  bool coarse; /* score the 4-bit codes (x->codes4) instead */
  float thr;   /* coarse: rows at or above it are not kept */
} scan_sink;

/* Score the codes of s->ids[0, cnt) into the sink's heap, SCAN_BLOCK rows
 * a call (hs_quant_distance_gather: four rows at a time where it can);
 * each row's code is prefetched CODES_AHEAD rows before it is scored. */
#define SCAN_BLOCK 16u
static void offer_codes(const hs_vidx *x, hs_vidx_scratch *s, scan_sink *sk, uint32_t cnt) {
  const size_t cs = x->code_size;
  float d[SCAN_BLOCK];
  for (uint32_t i = 0; i < cnt && i < CODES_AHEAD; i++)
    hs_prefetch_span(x->codes + (size_t)s->ids[i] * cs, cs);
  for (uint32_t i = 0, nb; i < cnt; i += nb) {
    nb = cnt - i < SCAN_BLOCK ? cnt - i : SCAN_BLOCK;
    for (uint32_t j = i + CODES_AHEAD; j < i + nb + CODES_AHEAD && j < cnt; j++)
      hs_prefetch_span(x->codes + (size_t)s->ids[j] * cs, cs);
    hs_quant_distance_gather(sk->qq, x->codes, s->ids + i, nb, d);
    for (uint32_t j = 0; j < nb; j++) {
      if (sk->n == sk->cap && !(d[j] < s->all[0].d)) continue; /* most rows */
      cand_offer(s->all, &sk->n, sk->cap, (hs_hnsw_cand){d[j], s->ids[i + j]});
    }
  }
  sk->seen += cnt;
}

/* Move the `keep` best of c[0, n) (by cand_less) to c[0, keep), the
 * keep-th best at keep - 1 (Hoare's selection; 0 < keep < n). */
static void cand_select(hs_hnsw_cand *c, uint32_t n, uint32_t keep) {
  uint32_t lo = 0, hi = n - 1;
  while (lo < hi) {
    hs_hnsw_cand p = c[lo + (hi - lo) / 2];
    uint32_t i = lo, j = hi;
    while (i <= j) {
      while (cand_less(c[i], p)) i++;
      while (cand_less(p, c[j])) j--;
      if (i <= j) {
        hs_hnsw_cand t = c[i];
        c[i++] = c[j];
        c[j] = t;
        if (j == 0) break;
        j--;
      }
    }
    if (keep - 1 <= j && j < hi)
      hi = j;
    else if (keep - 1 >= i)
      lo = i;
    else
      break;
  }
}

/* The same over the 4-bit codes (one 64-byte line a 128-d row). The best
 * sk->cap rows are kept in s->all as a buffer of up to 2 cap below a
 * threshold (the cap-th best so far), cut back to cap by cand_select when
 * full: a bounded heap re-sifted on each of the ~cap (1 + ln(c / cap))
 * entries was a fifth of the scan. */
static void offer_codes4(const hs_vidx *x, hs_vidx_scratch *s, scan_sink *sk, uint32_t cnt) {
  const size_t cs = x->code4_size;
  float d[SCAN_BLOCK];
  for (uint32_t i = 0; i < cnt && i < CODES_AHEAD; i++)
    hs_prefetch_span(x->codes4 + (size_t)s->ids[i] * cs, cs);
  for (uint32_t i = 0, nb; i < cnt; i += nb) {
    nb = cnt - i < SCAN_BLOCK ? cnt - i : SCAN_BLOCK;
    for (uint32_t j = i + CODES_AHEAD; j < i + nb + CODES_AHEAD && j < cnt; j++)
      hs_prefetch_span(x->codes4 + (size_t)s->ids[j] * cs, cs);
    hs_quant_sq4_gather(sk->qq, x->codes4, s->ids + i, nb, d);
    for (uint32_t j = 0; j < nb; j++) {
      if (!(d[j] < sk->thr)) continue; /* most rows */
      s->all[sk->n++] = (hs_hnsw_cand){d[j], s->ids[i + j]};
      if (sk->n == 2 * sk->cap) {
        cand_select(s->all, sk->n, sk->cap);
        sk->n = sk->cap;
        sk->thr = s->all[sk->cap - 1].d;
      }
    }
  }
  sk->seen += cnt;
}

static hs_status flush_ids(const hs_vidx *x, hs_vidx_scratch *s, const hs_distance_kernels *kern,
                           const float *q, uint32_t cnt, hs_vidx_hit *hits, uint32_t *n, uint32_t k,
                           scan_sink *sk, hs_error *err) {
  if (sk->qq == NULL) return offer_ids(x, s, kern, q, cnt, hits, n, k, err);
  if (sk->coarse)
    offer_codes4(x, s, sk, cnt);
  else
    offer_codes(x, s, sk, cnt);
  return HS_OK;
}

/* Pass the allowed indexed rows (words, roaring, or every row when
 * neither), in row order, batch by batch to the sink. */
static hs_status scan_allowed(const hs_vidx *x, hs_vidx_scratch *s, const float *q, uint32_t k,
                              const roaring_bitmap_t *allowed, const uint64_t *words, size_t nwords,
                              scan_sink *sk, hs_vidx_hit *hits, uint32_t *n, hs_error *err) {
  const hs_distance_kernels *kern = hs_distance_kernels_active();
  const uint32_t batch = x->fetch_batch;
  hs_status st = HS_OK;
  if (words != NULL) { /* the set bits of words ∩ indexed, in row order */
    size_t nw = nwords < x->row_words ? nwords : x->row_words;
    uint32_t cnt = 0;
    for (size_t w = 0; w < nw && st == HS_OK; w++) {
      uint64_t b = words[w] & x->indexed_bits[w];
      while (b != 0 && st == HS_OK) {
        uint32_t row = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(b)), local;
        b &= b - 1;
        if (!local_of_row(x, row, &local)) continue;
        s->ids[cnt++] = local;
        if (cnt == batch) {
          st = flush_ids(x, s, kern, q, cnt, hits, n, k, sk, err);
          cnt = 0;
        }
      }
    }
    if (st == HS_OK && cnt > 0) st = flush_ids(x, s, kern, q, cnt, hits, n, k, sk, err);
    return st;
  }
  if (allowed == NULL) {
    for (uint32_t i = 0; i < x->n && st == HS_OK; i += batch) {
      uint32_t cnt = x->n - i < batch ? x->n - i : batch;
      for (uint32_t j = 0; j < cnt; j++) s->ids[j] = i + j;
      st = flush_ids(x, s, kern, q, cnt, hits, n, k, sk, err);
    }
    return st;
  }
  roaring_bitmap_t *both = roaring_bitmap_and(allowed, x->indexed);
  if (both == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
  roaring_uint32_iterator_t *it = roaring_create_iterator(both);
  if (it == NULL) {
    roaring_bitmap_free(both);
    return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
  }
  uint32_t buf[256], got, cnt = 0;
  while (st == HS_OK && (got = roaring_read_uint32_iterator(it, buf, 256)) > 0) {
    for (uint32_t j = 0; j < got && st == HS_OK; j++) {
      uint32_t local;
      if (!local_of_row(x, buf[j], &local)) continue;
      s->ids[cnt++] = local;
      if (cnt == batch) {
        st = flush_ids(x, s, kern, q, cnt, hits, n, k, sk, err);
        cnt = 0;
      }
    }
  }
  if (st == HS_OK && cnt > 0) st = flush_ids(x, s, kern, q, cnt, hits, n, k, sk, err);
  roaring_free_uint32_iterator(it);
  roaring_bitmap_free(both);
  return st;
}

/* Candidates an SQ8 code scan keeps for its re-rank: enough that the error
 * bound proves the answer almost always (README.md "Scan codes"). */
#define HS_SCAN_KEEP_K 8u
#define HS_SCAN_KEEP_MIN 96u

/* The re-rank of a code scan's kept candidates (s->all[0, sk->n), sorted
 * by approximate distance): float32 rows in that order until the k-th
 * exact distance is below the bound of the next candidate. *proved: no row
 * the scan dropped can enter the top-k either (its approximate distance is
 * at least the last kept one's). */
static hs_status rerank_codes(const hs_vidx *x, hs_vidx_scratch *s, const float *q, uint32_t k,
                              const scan_sink *sk, hs_vidx_hit *hits, uint32_t *n, bool *proved,
                              hs_error *err) {
  const hs_distance_kernels *kern = hs_distance_kernels_active();
  const uint32_t total = sk->n;
  if (x->lean && hs_source_is_remote(x->src)) { /* the first rows it reads in one wave (io.h) */
    size_t m = total < 4 * (size_t)k ? total : 4 * (size_t)k;
    uint64_t *offs = hs_malloc((m ? m : 1) * sizeof *offs);
    size_t *lens = hs_malloc((m ? m : 1) * sizeof *lens);
    const size_t per = (size_t)x->vdim * sizeof(float);
    for (size_t i = 0; offs != NULL && lens != NULL && i < m; i++) {
      offs[i] = x->vec_off + (uint64_t)s->all[i].id * per;
      lens[i] = per;
    }
    if (offs != NULL && lens != NULL) hs_source_prefetch(x->src, offs, lens, m);
    hs_free(offs);
    hs_free(lens);
  }
  *proved = false;
  const size_t rb = (size_t)x->vdim * sizeof(float);
  uint32_t pf = 0; /* candidates [0, pf) have their float32 rows prefetched */
  for (uint32_t i = 0, nb; i < total; i += nb) {
    nb = total - i < x->fetch_batch ? total - i : x->fetch_batch;
    if (*n == k) { /* one at a time, while one may still enter */
      if (sq8_lower_bound(x, s->all[i].d) > hits[0].distance) {
        *proved = true;
        return HS_OK;
      }
      nb = 1;
    } else if (nb > k - *n) {
      nb = k - *n; /* fill the top-k first */
    }
    /* one at a time is a row from memory each: the next RERANK_AHEAD
     * candidates' rows are fetched meanwhile (a few wasted at the end) */
    for (; !x->lean && pf < total && pf < i + nb + RERANK_AHEAD; pf++)
      hs_prefetch_span(x->g.vectors + (size_t)s->all[pf].id * x->vdim, rb);
    for (uint32_t j = 0; j < nb; j++) s->ids[j] = s->all[i + j].id;
    hs_status st = offer_ids(x, s, kern, q, nb, hits, n, k, err);
    if (st != HS_OK) return st;
  }
  /* every kept candidate re-ranked: the dropped ones are no closer than the
   * last kept (none dropped: nothing else to prove) */
  *proved = sk->seen == total ||
            (*n == k && total > 0 && sq8_lower_bound(x, s->all[total - 1].d) > hits[0].distance);
  return HS_OK;
}

/* The index's 4-bit codes, made from its SQ8 codes on first use (once,
 * under the index's mutex: ~n * dim bytes read, 8-24 ms for the first
 * query at 200K x 128);
 * false when out of memory (the index then keeps the SQ8 scan). */
static bool codes4_ready(const hs_vidx *x) {
  int st = __atomic_load_n(&x->codes4_state, __ATOMIC_ACQUIRE);
  if (st != 0) return st == 1;
  hs_vidx *mx = (hs_vidx *)x; /* made once, then read-only */
  pthread_mutex_lock(&mx->mu);
  if (mx->codes4_state == 0) {
    size_t rs = hs_quant_sq4_size(x->quant);
    uint8_t *mem = rs ? hs_malloc((size_t)x->n * rs + 64) : NULL;
    if (mem != NULL) {
      hs_mem_advise_huge(mem, (size_t)x->n * rs + 64);         /* searched at random */
      uint8_t *at = mem + ((64 - ((uintptr_t)mem & 63)) & 63); /* rows on cache lines */
      hs_quant_sq4_derive(x->quant, x->codes, x->n, at);
      mx->codes4_mem = mem;
      mx->codes4 = at;
      mx->code4_size = rs;
    }
    __atomic_store_n(&mx->codes4_state, mem != NULL ? 1 : 2, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&mx->mu);
  return __atomic_load_n(&x->codes4_state, __ATOMIC_ACQUIRE) == 1;
}

/* A coarse scan (README.md "Coarse code scan"): every allowed row scored
 * on its 4-bit code, the best coarse_keep(k) by that kept, those scored on
 * their SQ8 codes into the usual candidates and re-ranked on float32 by
 * the SQ8 bound (proved among the kept only: the answer is approximate,
 * min(k, allowed) rows with exact distances). */
static hs_status coarse_search(const hs_vidx *x, hs_vidx_scratch *s, const float *q, uint32_t k,
                               const roaring_bitmap_t *allowed, const uint64_t *words,
                               size_t nwords, hs_vidx_hit *hits, uint32_t *n_hits, hs_error *err) {
  uint32_t n = 0;
  scan_sink sk = {NULL, coarse_keep(k), 0, 0, true, INFINITY};
  if (!grow((void **)&s->all, &s->all_cap, 2 * (size_t)sk.cap, sizeof *s->all))
    return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
  hs_status st = hs_quant_query_make(x->quant, q, &sk.qq, err);
  if (st == HS_OK) st = hs_quant_query_sq4(sk.qq, err);
  if (st == HS_OK) st = scan_allowed(x, s, q, k, allowed, words, nwords, &sk, hits, &n, err);
  if (st == HS_OK && !grow((void **)&s->cids, &s->cids_cap, sk.n, sizeof *s->cids))
    st = hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
  if (st != HS_OK) {
    hs_quant_query_free(sk.qq);
    return st;
  }
  if (sk.n > sk.cap) cand_select(s->all, sk.n, sk.cap);
  const uint32_t kept = sk.n < sk.cap ? sk.n : sk.cap;
  for (uint32_t i = 0; i < kept; i++) s->cids[i] = s->all[i].id;
  /* the kept rows' SQ8 codes, in local id order (fewer page crossings) */
  scan_sink s8 = {
      sk.qq, k * HS_SCAN_KEEP_K > HS_SCAN_KEEP_MIN ? k * HS_SCAN_KEEP_K : HS_SCAN_KEEP_MIN,
      0,     0,
      false, INFINITY};
  for (uint32_t i = 0, nb; i < kept; i += nb) {
    nb = kept - i < x->fetch_batch ? kept - i : x->fetch_batch;
    memcpy(s->ids, s->cids + i, nb * sizeof *s->ids);
    offer_codes(x, s, &s8, nb);
  }
  hs_quant_query_free(sk.qq);
  s8.qq = NULL;
  cand_heap_sort(s->all, s8.n);
  bool proved = false;
  st = rerank_codes(x, s, q, k, &s8, hits, &n, &proved, err);
  if (st != HS_OK) return st;
  qsort(hits, n, sizeof *hits, hit_cmp);
  *n_hits = n;
  return HS_OK;
}

/* ------------------------------------------- PQ scan of a filter's rows */

/* A filter's allowed rows on a PQ index (README.md "IVF-PQ lists",
 * "Filtered PQ scan"): where the exact plan would score more of them on
 * float32 than this re-ranks, their PQ codes are scored instead, the best
 * max(PQ_SCAN_K * k, PQ_SCAN_MIN) kept and those re-ranked exactly. PQ has
 * no error bound (unlike SQ8's code scan), so this is approximate, like
 * every PQ search; what it saves is rows read: on an object store a
 * float32 scan of 300 allowed rows was 300 ranged GETs (five waves of 64),
 * the codes of the lists holding them are a few contiguous ranges and the
 * re-ranked rows one wave. HS_VIDX_PQ_SCAN_RERANK=N overrides the count
 * (calibration); read once. */
#define HS_VIDX_PQ_SCAN_K 6u
#define HS_VIDX_PQ_SCAN_MIN 48u

static pthread_once_t pq_scan_once = PTHREAD_ONCE_INIT;
static uint32_t pq_scan_forced;
static void pq_scan_env(void) {
  const char *e = getenv("HS_VIDX_PQ_SCAN_RERANK");
  long v = e != NULL ? strtol(e, NULL, 10) : 0;
  pq_scan_forced = v > 0 && v < (1L << 30) ? (uint32_t)v : 0;
}

static uint32_t pq_scan_rerank(uint32_t k) {
  pthread_once(&pq_scan_once, pq_scan_env);
  if (pq_scan_forced) return pq_scan_forced;
  uint64_t r = (uint64_t)HS_VIDX_PQ_SCAN_K * k;
  r = r > HS_VIDX_PQ_SCAN_MIN ? r : HS_VIDX_PQ_SCAN_MIN;
  return r > UINT32_MAX ? UINT32_MAX : (uint32_t)r;
}

/* Whether a filtered exact plan over cnt allowed rows scans the PQ codes. */
static bool pq_scan_applies(const hs_vidx *x, uint64_t cnt, uint32_t k, bool filtered) {
  return filtered && x->quant_kind == HS_QUANT_PQ && !x->walk_float && x->quant != NULL &&
         x->codes != NULL && cnt > pq_scan_rerank(k);
}

/* The allowed indexed rows' local ids, ascending by row (*out owned). */
static hs_status allowed_locals(const hs_vidx *x, const roaring_bitmap_t *allowed,
                                const uint64_t *words, size_t nwords, uint32_t **out, size_t *n,
                                hs_error *err) {
  *out = NULL;
  *n = 0;
  uint32_t *v = hs_malloc(((size_t)x->n + 1) * sizeof *v);
  if (v == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
  size_t m = 0;
  if (words != NULL) {
    size_t nw = nwords < x->row_words ? nwords : x->row_words;
    for (size_t w = 0; w < nw; w++) {
      uint64_t b = words[w] & x->indexed_bits[w];
      while (b != 0) {
        uint32_t row = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(b)), local;
        b &= b - 1;
        if (local_of_row(x, row, &local) && m < x->n) v[m++] = local;
      }
    }
  } else {
    roaring_uint32_iterator_t *it = roaring_create_iterator(allowed);
    if (it == NULL) {
      hs_free(v);
      return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
    }
    uint32_t buf[256], got;
    while ((got = roaring_read_uint32_iterator(it, buf, 256)) > 0)
      for (uint32_t j = 0; j < got; j++) {
        uint32_t local;
        if (local_of_row(x, buf[j], &local) && m < x->n) v[m++] = local;
      }
    roaring_free_uint32_iterator(it);
  }
  *out = v;
  *n = m;
  return HS_OK;
}

/* At most this many ranged GETs (by default: hs_vidx_search_params.
 * scan_ranges) a partial index's PQ scan reads the allowed rows' codes with: the rows' codes
 * (code_size bytes each) at the smallest gaps between them are merged into one range, the largest
 * PQ_SCAN_RANGES - 1 gaps left out. 300 allowed rows of bench_s3_cold's
 * two files in 2 x 24 ranges, one wave with the freshness LIST (README.md
 * "Filtered PQ scan"). */
#define HS_VIDX_PQ_SCAN_RANGES 24u

static int u32_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* The CODES ranges (offsets in the source) covering local ids ids[0, n)
 * of a partial index, at most HS_VIDX_PQ_SCAN_RANGES, appended to r. */
static hs_status pq_scan_ranges(const hs_vidx *x, const uint32_t *ids, size_t n, uint32_t most,
                                hs_vidx_reads *r, hs_error *err) {
  if (n == 0) return HS_OK;
  if (most == 0) most = HS_VIDX_PQ_SCAN_RANGES;
  uint32_t *v = hs_malloc(n * sizeof *v), *gap = hs_malloc(n * sizeof *gap);
  if (v == NULL || gap == NULL) {
    hs_free(v);
    hs_free(gap);
    return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
  }
  memcpy(v, ids, n * sizeof *v);
  qsort(v, n, sizeof *v, u32_cmp);
  size_t ng = 0;
  for (size_t i = 1; i < n; i++) gap[ng++] = v[i] - v[i - 1];
  /* gaps of at least `cut` rows stay open: the largest RANGES - 1 */
  uint32_t cut = 0;
  if (most == 1) {
    cut = UINT32_MAX;
  } else if (ng >= most) {
    qsort(gap, ng, sizeof *gap, u32_cmp);
    cut = gap[ng - (most - 1)];
  }
  const uint64_t base = x->sec_off[HS_VIDX_S_CODES], cs = x->code_size;
  size_t open = 0; /* gaps left open (ties with `cut` merge once the ranges are spent) */
  hs_status st = HS_OK;
  for (size_t i = 0, j; i < n && st == HS_OK; i = j) {
    for (j = i + 1; j < n; j++) {
      uint32_t g = v[j] - v[j - 1];
      if (cut == 0 ? g > 1 : (g >= cut && open < most - 1)) {
        open++;
        break;
      }
    }
    if (!hs_vidx_reads_add(r, base + (uint64_t)v[i] * cs,
                           (size_t)((uint64_t)(v[j - 1] - v[i] + 1) * cs)))
      st = hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
  }
  hs_free(v);
  hs_free(gap);
  return st;
}

/* The codes of local ids ids[0, n): x->codes' where the index holds them
 * all, else (a partial index) read from the source into *own (fetched
 * together first: at most HS_VIDX_PQ_SCAN_RANGES ranges, one wave), so
 * that code i is at (*base)[i * code_size] (*base NULL: x->codes by id).
 * Under hs_vidx_search_parts_reads the ranges are only noted (*collected). */
static hs_status pq_scan_codes(const hs_vidx *x, hs_vidx_scratch *s, const uint32_t *ids, size_t n,
                               uint32_t most, uint8_t **own, const uint8_t **base, bool *collected,
                               hs_error *err) {
  *collected = false;
  *own = NULL;
  *base = NULL;
  if (!x->partial) return HS_OK;
  hs_vidx_reads need = {0};
  hs_vidx_reads *r = s->collect_parts != NULL ? s->collect_parts : &need;
  hs_status st = pq_scan_ranges(x, ids, n, most, r, err);
  if (st == HS_OK && s->collect_parts != NULL) {
    *collected = true;
    return HS_OK;
  }
  if (st == HS_OK && need.n > 0) hs_source_prefetch(x->src, need.off, need.len, need.n);
  hs_vidx_reads_free(&need);
  const size_t cs = x->code_size;
  uint8_t *c = st == HS_OK ? hs_malloc(n * cs + 1) : NULL;
  if (st == HS_OK && c == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    st = hs_source_read_unmapped(x->src, x->sec_off[HS_VIDX_S_CODES] + (uint64_t)ids[i] * cs, cs,
                                 c + i * cs, err);
    if (st != HS_OK) hs_error_prefix(err, "vidx search: PQ codes: ");
  }
  if (st != HS_OK) {
    hs_free(c);
    return st;
  }
  *own = c;
  *base = c;
  return HS_OK;
}

/* The PQ scan of a filter's allowed rows (pq_scan_applies): codes scored,
 * the best re-ranked exactly (a share of a budget over several indexes
 * when sp->rerank_share is set). The modes as for the walk: the lists'
 * ranges, the candidates, or the re-ranked rows' ranges only. */
static hs_status pq_scan(const hs_vidx *x, hs_vidx_scratch *s, const float *q, uint32_t k,
                         const hs_vidx_search_params *sp, const roaring_bitmap_t *allowed,
                         const uint64_t *words, size_t nwords, hs_vidx_hit *hits, uint32_t *n_hits,
                         hs_error *err) {
  *n_hits = 0;
  uint32_t *ids = NULL;
  size_t n = 0;
  hs_status st = allowed_locals(x, allowed, words, nwords, &ids, &n, err);
  bool collected = false;
  uint8_t *own = NULL;
  const uint8_t *base = NULL;
  if (st == HS_OK)
    st = pq_scan_codes(x, s, ids, n, sp ? sp->scan_ranges : 0, &own, &base, &collected, err);
  if (st != HS_OK || collected) {
    hs_free(ids);
    return st;
  }
  const bool share = sp && sp->rerank_share;
  uint32_t keep = share ? sp->rerank_share : pq_scan_rerank(k);
  if (keep > n) keep = (uint32_t)n;
  scan_sink sk = {NULL, keep, 0, 0, false, INFINITY};
  if (!grow((void **)&s->all, &s->all_cap, keep ? keep : 1, sizeof *s->all))
    st = hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
  if (st == HS_OK) st = hs_quant_query_make(x->quant, q, &sk.qq, err);
  if (base == NULL) { /* every code in x->codes */
    for (size_t i = 0; st == HS_OK && keep > 0 && i < n; i += x->fetch_batch) {
      uint32_t cnt = (uint32_t)(n - i < x->fetch_batch ? n - i : x->fetch_batch);
      memcpy(s->ids, ids + i, cnt * sizeof *ids);
      offer_codes(x, s, &sk, cnt);
    }
  } else { /* the rows' codes in order in `base`: the same distances (quant.h) */
    uint32_t at[SCAN_BLOCK];
    float d[SCAN_BLOCK];
    for (size_t i = 0, nb; st == HS_OK && keep > 0 && i < n; i += nb) {
      nb = n - i < SCAN_BLOCK ? n - i : SCAN_BLOCK;
      for (size_t j = 0; j < nb; j++) at[j] = (uint32_t)(i + j);
      hs_quant_distance_gather(sk.qq, base, at, nb, d);
      for (size_t j = 0; j < nb; j++)
        if (sk.n < sk.cap || d[j] < s->all[0].d)
          cand_offer(s->all, &sk.n, sk.cap, (hs_hnsw_cand){d[j], ids[i + j]});
    }
  }
  hs_quant_query_free(sk.qq);
  hs_free(own);
  hs_free(ids);
  if (st != HS_OK) return st;
  cand_heap_sort(s->all, sk.n);
  const uint32_t total = sk.n;
  if (s->cands != NULL) { /* hs_vidx_search_cands: the approximate distances only */
    hs_vidx_cands *o = s->cands;
    o->applies = true;
    o->rerank = pq_scan_rerank(k);
    o->scan = true;
    if (!grow((void **)&o->approx, &o->cap, total, sizeof *o->approx))
      return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
    for (uint32_t i = 0; i < total; i++) o->approx[i] = s->all[i].d;
    o->n = total;
    return HS_OK;
  }
  if (x->lean && hs_source_is_remote(x->src)) { /* their rows in one wave (io.h) */
    const size_t per = (size_t)x->vdim * sizeof(float);
    uint64_t *offs = hs_malloc(((size_t)total + 1) * sizeof *offs);
    size_t *lens = hs_malloc(((size_t)total + 1) * sizeof *lens);
    for (uint32_t i = 0; offs != NULL && lens != NULL && i < total; i++) {
      offs[i] = x->vec_off + (uint64_t)s->all[i].id * per;
      lens[i] = per;
    }
    if (offs != NULL && lens != NULL) rows_ahead(x, s, offs, lens, total);
    hs_free(offs);
    hs_free(lens);
  }
  if (s->collect != NULL) return HS_OK; /* hs_vidx_search_reads: the ranges only */
  const hs_distance_kernels *kern = hs_distance_kernels_active();
  uint32_t nh = 0;
  for (uint32_t i = 0, nb; i < total; i += nb) {
    nb = total - i < x->fetch_batch ? total - i : x->fetch_batch;
    for (uint32_t j = 0; j < nb; j++) s->ids[j] = s->all[i + j].id;
    st = offer_ids(x, s, kern, q, nb, hits, &nh, k, err);
    if (st != HS_OK) return st;
  }
  qsort(hits, nh, sizeof *hits, hit_cmp);
  *n_hits = nh;
  return HS_OK;
}

/* Exact top-k over the allowed indexed rows (every indexed row when
 * allowed is NULL): over the SQ8 codes with a bounded float32 re-rank when
 * `how` is SCAN_CODES (the same answers), else over the float32 rows;
 * SCAN_COARSE: coarse_search (approximate). */
static hs_status exact_search(const hs_vidx *x, hs_vidx_scratch *s, const float *q, uint32_t k,
                              const roaring_bitmap_t *allowed, const uint64_t *words, size_t nwords,
                              scan_kind how, hs_vidx_hit *hits, uint32_t *n_hits, hs_error *err) {
  uint32_t n = 0;
  scan_sink sk = {NULL, 0, 0, 0, false, INFINITY};
  if (s->cands != NULL) { /* hs_vidx_search_cands: an exact scan has none to share */
    s->cands->applies = false;
    s->cands->n = 0;
    *n_hits = 0;
    return HS_OK;
  }
  if (s->collect_parts != NULL) { /* reads no list */
    *n_hits = 0;
    return HS_OK;
  }
  if (s->collect != NULL) { /* hs_vidx_search_reads: the ranges only (of every allowed row) */
    if (x->lean && hs_source_is_remote(x->src)) prefetch_rows(x, s, allowed, words, nwords);
    *n_hits = 0;
    return HS_OK;
  }
  if (how == SCAN_COARSE && scan_by_codes(x) && codes4_ready(x))
    return coarse_search(x, s, q, k, allowed, words, nwords, hits, n_hits, err);
  if (how != SCAN_FLOAT && scan_by_codes(x)) {
    sk.cap = k * HS_SCAN_KEEP_K > HS_SCAN_KEEP_MIN ? k * HS_SCAN_KEEP_K : HS_SCAN_KEEP_MIN;
    if (!grow((void **)&s->all, &s->all_cap, sk.cap, sizeof *s->all))
      return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
    hs_status st = hs_quant_query_make(x->quant, q, &sk.qq, err);
    if (st != HS_OK) return st;
    st = scan_allowed(x, s, q, k, allowed, words, nwords, &sk, hits, &n, err);
    hs_quant_query_free(sk.qq);
    sk.qq = NULL;
    bool proved = false;
    if (st == HS_OK) {
      cand_heap_sort(s->all, sk.n);
      st = rerank_codes(x, s, q, k, &sk, hits, &n, &proved, err);
    }
    if (st != HS_OK) return st;
    if (proved) {
      qsort(hits, n, sizeof *hits, hit_cmp);
      *n_hits = n;
      return HS_OK;
    }
    n = 0; /* not proved (rare): the float32 scan */
  }
  /* The rows it will read, in one wave (io.h). */
  if (x->lean && hs_source_is_remote(x->src)) prefetch_rows(x, s, allowed, words, nwords);
  hs_status st = scan_allowed(x, s, q, k, allowed, words, nwords, &sk, hits, &n, err);
  if (st != HS_OK) return st;
  qsort(hits, n, sizeof *hits, hit_cmp);
  *n_hits = n;
  return HS_OK;
}

/* The partitions to visit: the nprobe nearest centroids. */
static uint32_t choose_probes(const hs_vidx *x, hs_vidx_scratch *s, const float *q,
                              uint32_t nprobe) {
  if (x->n_parts == 1 || x->centroids == NULL) {
    s->probe[0] = 0;
    return 1;
  }
  const hs_distance_kernels *kern = hs_distance_kernels_active();
  for (uint32_t p = 0; p < x->n_parts; p++) {
    s->probe[p] = p;
    s->probe_d[p] = hs_hnsw_dist(kern, x->g.space, q, x->centroids + (size_t)p * x->vdim, x->vdim);
  }
  if (nprobe > x->n_parts) nprobe = x->n_parts;
  for (uint32_t i = 0; i < nprobe; i++) { /* partial selection sort */
    uint32_t best = i;
    for (uint32_t j = i + 1; j < x->n_parts; j++)
      if (s->probe_d[j] < s->probe_d[best]) best = j;
    float td = s->probe_d[i];
    uint32_t tp = s->probe[i];
    s->probe_d[i] = s->probe_d[best];
    s->probe[i] = s->probe[best];
    s->probe_d[best] = td;
    s->probe[best] = tp;
  }
  return nprobe;
}

/* Whether a probed list of a PQ index is scanned flat instead of walked:
 * when the cost model's walk would score every node of it anyway
 * (walk_visits at ef reaches the list's size). The flat scan scores every
 * node, so it finds a superset of what the walk reaches (the same when the
 * graph is connected), and it needs the codes only, not the links: a
 * partial index then reads a probed list's codes, one range (README.md
 * "IVF-PQ lists"). The same rule wherever the index lives. */
static bool part_flat(const hs_vidx *x, const hs_hnsw_part *p, uint32_t ef) {
  return x->quant_kind == HS_QUANT_PQ && !x->walk_float &&
         (double)p->count <= HS_PLAN_WALK_V0 + HS_PLAN_WALK_V1 * (double)ef;
}

/* The best ef allowed nodes of list `p` by code distance (a walk that
 * reaches every node keeps the same), in s->flat; SIZE_MAX when out of
 * memory. */
static size_t flat_scan(const hs_vidx *x, hs_vidx_scratch *s, const hs_hnsw_part *p,
                        const hs_quant_query *qq, uint32_t ef, const hs_hnsw_filter *f,
                        hs_hnsw_cand **out) {
  if (ef == 0) ef = 1;
  if (!grow((void **)&s->flat, &s->flat_cap, ef, sizeof *s->flat)) return SIZE_MAX;
  const size_t cs = x->code_size;
  uint32_t n = 0;
  for (uint32_t i = p->start; i < p->start + p->count; i++) {
    if (f != NULL) {
      uint32_t r = f->rows != NULL ? f->rows[i] : i;
      if (!((f->bits[r >> 6] >> (r & 63)) & 1)) continue;
    }
    float d = hs_quant_distance(qq, x->codes + (size_t)i * cs);
    if (n == ef && !(d < s->flat[0].d)) continue;
    cand_offer(s->flat, &n, ef, (hs_hnsw_cand){d, i});
  }
  *out = s->flat;
  return n;
}

/* A partial index: the probed lists' codes (and the graph when one is
 * walked) loaded, fetched together first (one wave: io.h); under
 * hs_vidx_search_parts_reads only noted (*collected). */
static hs_status parts_ready(const hs_vidx *x, hs_vidx_scratch *s, uint32_t np, uint32_t ef,
                             bool *collected, hs_error *err) {
  *collected = false;
  if (!x->partial) return HS_OK;
  hs_vidx_reads need = {0};
  hs_vidx_reads *r = s->collect_parts != NULL ? s->collect_parts : &need;
  for (uint32_t i = 0; i < np; i++) {
    const hs_hnsw_part *part = &x->parts[s->probe[i]];
    if (!hs_vidx_part_missing(x, s->probe[i], !part_flat(x, part, ef), r)) {
      hs_vidx_reads_free(&need);
      return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
    }
  }
  if (s->collect_parts != NULL) {
    *collected = true;
    return HS_OK;
  }
  if (need.n > 0) hs_source_prefetch(x->src, need.off, need.len, need.n);
  hs_vidx_reads_free(&need);
  for (uint32_t i = 0; i < np; i++) {
    const hs_hnsw_part *part = &x->parts[s->probe[i]];
    hs_status st = hs_vidx_part_load((hs_vidx *)x, s->probe[i], !part_flat(x, part, ef), err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

/* The allow-set of one search: a roaring bitmap or caller words (at most
 * one set; neither: every row). */
typedef struct allow_in {
  const roaring_bitmap_t *r;
  const uint64_t *words;
  size_t nwords;
} allow_in;

static hs_status search_in(const hs_vidx *x, hs_vidx_scratch *s, uint32_t k,
                           const hs_vidx_search_params *sp, allow_in a, hs_vidx_hit *hits,
                           uint32_t *n_hits, hs_error *err) {
  const float *q = s->q;
  uint64_t cnt = a.r       ? roaring_bitmap_and_cardinality(a.r, x->indexed)
                 : a.words ? hs_vidx_bits_count(x, a.words, a.nwords)
                           : x->n;
  if (cnt == 0) {
    *n_hits = 0;
    return HS_OK;
  }
  uint32_t want = cnt < k ? (uint32_t)cnt : k;
  if (cnt == x->n) a = (allow_in){NULL, NULL, 0}; /* allows every indexed row */
  const bool filtered = a.r != NULL || a.words != NULL;
  uint32_t ef = sp && sp->ef_search ? sp->ef_search : HS_VIDX_DEFAULT_EF;
  if (!(sp && sp->ef_search) && x->quant_kind == HS_QUANT_PQ) ef *= HS_VIDX_PQ_EF_FACTOR;
  if (ef < k) ef = k;
  /* Wider than every row is every row (hs_hnsw_search clamps again to the
   * partition): ef_search = 10^9 costs what ef_search = n does. */
  if (ef > x->n) ef = x->n;
  uint32_t nprobe = sp && sp->nprobe ? sp->nprobe : (x->n_parts < 8 ? x->n_parts : 8);
  if (nprobe > x->n_parts) nprobe = x->n_parts;
  /* exact_rows set: the caller's threshold decides exact vs walk (tests);
   * else the cost model (README.md, "Filtered search"). */
  bool forced = sp && sp->exact_rows;
  if (forced && filtered && cnt <= sp->exact_rows)
    return exact_search(x, s, q, k, a.r, a.words, a.nwords,
                        exact_scan_kind(x, cnt, k, filtered, false), hits, n_hits, err);
  plan_kind plan = plan_choose(x, cnt, k, filtered, ef, nprobe, !forced);
  if (plan == PLAN_EXACT && pq_scan_applies(x, cnt, k, filtered))
    return pq_scan(x, s, q, k, sp, a.r, a.words, a.nwords, hits, n_hits, err);
  if (plan == PLAN_EXACT)
    return exact_search(x, s, q, k, a.r, a.words, a.nwords,
                        exact_scan_kind(x, cnt, k, filtered, true), hits, n_hits, err);
  /* the two-hop walk gathers at most m fresh allowed nodes per expansion
   * (ACORN-1's truncation), up to 2 m at 10 % and below (hop_width;
   * README.md "Filtered search") */
  hs_hnsw_filter filter = {NULL, x->rows_identity ? NULL : x->rows, plan == PLAN_HOP,
                           (uint32_t)(x->m * hop_width((double)cnt / x->n) + 0.5)};
  hs_hnsw_filter *f = NULL;
  if (filtered) {
    filter.bits =
        a.words ? hs_vidx_bits_pad(x, s, a.words, a.nwords) : hs_vidx_bits_from_roaring(x, s, a.r);
    if (filter.bits == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
    f = &filter;
  }
  if (f != NULL && f->two_hop) { /* fewer allowed nodes scored: a wider beam keeps recall */
    double e = ef * hop_boost((double)cnt / x->n);
    ef = e >= (double)x->n ? x->n : (uint32_t)e;
  }
  uint32_t np = choose_probes(x, s, q, nprobe);
  bool collected = false;
  hs_status pst = parts_ready(x, s, np, ef, &collected, err);
  if (pst != HS_OK || collected) {
    *n_hits = 0;
    return pst;
  }
  hs_quant_query *qq = NULL;
  if (x->quant != NULL && !x->walk_float) { /* scan codes are not walked */
    hs_status st = hs_quant_query_make(x->quant, q, &qq, err);
    if (st != HS_OK) return st;
  }
  size_t total = 0;
  for (uint32_t i = 0; i < np; i++) {
    hs_hnsw_cand *c;
    const hs_hnsw_part *part = &x->parts[s->probe[i]];
    size_t got = qq && part_flat(x, part, ef) ? flat_scan(x, s, part, qq, ef, f, &c)
                 : qq ? hs_hnsw_search_quant(&x->g, part, q, qq, ef, f, &s->hs, &c)
                      : hs_hnsw_search(&x->g, part, q, ef, f, &s->hs, &c);
    if (got == SIZE_MAX) {
      hs_quant_query_free(qq);
      return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
    }
    if (!grow((void **)&s->all, &s->all_cap, total + got, sizeof *s->all)) {
      hs_quant_query_free(qq);
      return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
    }
    if (got > 0) memcpy(s->all + total, c, got * sizeof *c); /* s->all may still be NULL */
    total += got;
  }
  bool quantized = qq != NULL;
  hs_quant_query_free(qq); /* the approximate distances are in s->all */
  if (total < want && pq_scan_applies(x, cnt, k, filtered))
    return pq_scan(x, s, q, k, sp, a.r, a.words, a.nwords, hits, n_hits, err);
  if (total < want)
    return exact_search(x, s, q, k, a.r, a.words, a.nwords,
                        exact_scan_kind(x, cnt, k, filtered, false), hits, n_hits, err);
  uint32_t n = 0;
  const hs_distance_kernels *kern = hs_distance_kernels_active();
  if (quantized) { /* re-rank the best `rerank` approximate candidates exactly */
    const bool share = sp && sp->rerank_share && x->quant_kind == HS_QUANT_PQ;
    size_t rerank = share                          ? sp->rerank_share
                    : sp && sp->rerank             ? sp->rerank
                    : x->quant_kind == HS_QUANT_PQ ? pq_rerank(k)
                                                   : total;
    bool bounded =
        !(sp && sp->rerank) && x->quant_kind == HS_QUANT_SQ8 && x->metric != HS_METRIC_IP;
    if (rerank < k && !share) rerank = k;
    if (rerank < total || bounded || s->cands != NULL) {
      qsort(s->all, total, sizeof *s->all, cand_cmp_approx);
      if (rerank < total) total = rerank;
    }
    if (s->cands != NULL) { /* hs_vidx_search_cands: the approximate distances only */
      hs_vidx_cands *o = s->cands;
      o->applies = x->quant_kind == HS_QUANT_PQ;
      o->rerank = (uint32_t)rerank;
      if (o->applies && !grow((void **)&o->approx, &o->cap, total, sizeof *o->approx))
        return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
      for (size_t i = 0; o->applies && i < total; i++) o->approx[i] = s->all[i].d;
      o->n = o->applies ? total : 0;
      *n_hits = 0;
      return HS_OK;
    }
    if (x->lean && hs_source_is_remote(x->src)) { /* their rows in one wave (io.h) */
      size_t m =
          total < (bounded ? 4 * (size_t)k : 8192) ? total : (bounded ? 4 * (size_t)k : 8192);
      uint64_t *offs = hs_malloc((m ? m : 1) * sizeof *offs);
      size_t *lens = hs_malloc((m ? m : 1) * sizeof *lens);
      const size_t per = (size_t)x->vdim * sizeof(float);
      for (size_t i = 0; offs != NULL && lens != NULL && i < m; i++) {
        offs[i] = x->vec_off + (uint64_t)s->all[i].id * per;
        lens[i] = per;
      }
      if (offs != NULL && lens != NULL) rows_ahead(x, s, offs, lens, m);
      hs_free(offs);
      hs_free(lens);
    }
    if (s->collect != NULL) { /* hs_vidx_search_reads: the ranges only */
      *n_hits = 0;
      return HS_OK;
    }
    for (size_t i = 0, nb; i < total; i += nb) {
      nb = total - i < x->fetch_batch ? total - i : x->fetch_batch;
      if (bounded && n == k) { /* one at a time, while one may still enter */
        if (sq8_lower_bound(x, s->all[i].d) > hits[0].distance) break;
        nb = 1;
      } else if (bounded && nb > k - n) {
        nb = k - n; /* fill the top-k first */
      }
      for (uint32_t j = 0; j < nb; j++) s->ids[j] = s->all[i + j].id;
      hs_status st = offer_ids(x, s, kern, q, (uint32_t)nb, hits, &n, k, err);
      if (st != HS_OK) return st;
    }
    qsort(hits, n, sizeof *hits, hit_cmp);
    *n_hits = n;
    return HS_OK;
  }
  if (s->cands != NULL) {
    s->cands->applies = false;
    s->cands->n = 0;
    *n_hits = 0;
    return HS_OK;
  }
  for (size_t i = 0; i < total; i++) {
    uint32_t id = s->all[i].id;
    hs_vidx_hit h = x->metric == HS_METRIC_IP
                        ? hit_of(x, kern, q, id)
                        : (hs_vidx_hit){x->rows[id], hs_vidx_report(x->metric, s->all[i].d)};
    topk_offer(hits, &n, k, h);
  }
  qsort(hits, n, sizeof *hits, hit_cmp);
  *n_hits = n;
  return HS_OK;
}

/* What a search_impl call produces besides hits: nothing (a search), the
 * re-ranked rows' ranges, the probed lists' ranges, or the candidates. */
typedef struct search_mode {
  hs_vidx_reads *rows, *parts;
  hs_vidx_cands *cands;
} search_mode;

static hs_status search_impl(const hs_vidx *x, const float *query, uint32_t k,
                             const hs_vidx_search_params *sp, allow_in a, hs_vidx_hit *hits,
                             uint32_t *n_hits, search_mode mode, hs_error *err) {
  if (n_hits != NULL) *n_hits = 0;
  if (x == NULL || query == NULL || hits == NULL || n_hits == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx search: missing index, query or output");
  if (k == 0) return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx search: k must be at least 1");
  double norm = 0;
  for (uint32_t j = 0; j < x->dim; j++) {
    if (!isfinite(query[j]))
      return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx search: query component %u is not finite",
                          j);
    norm += (double)query[j] * query[j];
  }
  if (x->metric == HS_METRIC_COSINE && !(norm > 0 && isfinite(norm)))
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "vidx search: a zero query has no cosine distance (NaN to every row)");
  if (x->n == 0) return HS_OK;
  /* Never more answers than indexed rows: k bounds the top-k heap, the beam
   * and the re-rank below, so a huge k costs what k = n does (the same
   * answers), and `hits` needs room for min(k, n) only. */
  if (k > x->n) k = x->n;
  hs_vidx *mx = (hs_vidx *)x; /* the scratch pool is the only mutable part */
  hs_vidx_scratch *s = scratch_get(mx);
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vidx search: out of memory");
  if (x->metric == HS_METRIC_COSINE) {
    double inv = 1.0 / sqrt(norm);
    for (uint32_t j = 0; j < x->dim; j++) s->q[j] = (float)(query[j] * inv);
  } else {
    memcpy(s->q, query, (size_t)x->dim * sizeof *s->q);
  }
  s->collect = mode.rows;
  s->collect_parts = mode.parts;
  s->cands = mode.cands;
  hs_status st = search_in(x, s, k, sp, a, hits, n_hits, err);
  s->collect = NULL;
  s->collect_parts = NULL;
  s->cands = NULL;
  scratch_put(mx, s);
  return st;
}

hs_status hs_vidx_search(const hs_vidx *x, const float *query, uint32_t k,
                         const hs_vidx_search_params *sp, const roaring_bitmap_t *allowed,
                         hs_vidx_hit *hits, uint32_t *n_hits, hs_error *err) {
  return search_impl(x, query, k, sp, (allow_in){allowed, NULL, 0}, hits, n_hits, (search_mode){0},
                     err);
}

hs_status hs_vidx_search_reads(const hs_vidx *x, const float *query, uint32_t k,
                               const hs_vidx_search_params *sp, const roaring_bitmap_t *allowed,
                               hs_vidx_reads *out, hs_error *err) {
  if (out == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx search reads: missing output");
  if (x == NULL || !x->lean || !hs_source_is_remote(x->src)) return HS_OK; /* reads nothing */
  /* hits: the collecting search stops before it scores a row */
  hs_vidx_hit none[1];
  uint32_t n = 0;
  return search_impl(x, query, k, sp, (allow_in){allowed, NULL, 0}, none, &n,
                     (search_mode){out, NULL, NULL}, err);
}

hs_status hs_vidx_search_parts_reads(const hs_vidx *x, const float *query, uint32_t k,
                                     const hs_vidx_search_params *sp,
                                     const roaring_bitmap_t *allowed, hs_vidx_reads *out,
                                     hs_error *err) {
  if (out == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx search parts reads: missing output");
  if (x == NULL || !x->partial) return HS_OK; /* loads nothing */
  hs_vidx_hit none[1];
  uint32_t n = 0;
  return search_impl(x, query, k, sp, (allow_in){allowed, NULL, 0}, none, &n,
                     (search_mode){NULL, out, NULL}, err);
}

void hs_vidx_cands_free(hs_vidx_cands *c) {
  if (c == NULL) return;
  hs_free(c->approx);
  memset(c, 0, sizeof *c);
}

hs_status hs_vidx_search_cands(const hs_vidx *x, const float *query, uint32_t k,
                               const hs_vidx_search_params *sp, const roaring_bitmap_t *allowed,
                               hs_vidx_cands *out, hs_error *err) {
  if (out == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx search cands: no output");
  out->n = 0;
  out->applies = false;
  out->rerank = 0;
  out->scan = false;
  if (x == NULL || x->quant_kind != HS_QUANT_PQ) return HS_OK;
  hs_vidx_hit none[1];
  uint32_t n = 0;
  out->applies = true; /* unless the search takes a path without PQ candidates */
  hs_status st = search_impl(x, query, k, sp, (allow_in){allowed, NULL, 0}, none, &n,
                             (search_mode){NULL, NULL, out}, err);
  if (st != HS_OK || x->n == 0) {
    out->applies = false;
    out->n = 0;
  }
  return st;
}

hs_status hs_vidx_search_bits(const hs_vidx *x, const float *query, uint32_t k,
                              const hs_vidx_search_params *sp, const uint64_t *words, size_t nwords,
                              hs_vidx_hit *hits, uint32_t *n_hits, hs_error *err) {
  if (words == NULL && nwords > 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "vidx search: %zu allow-set words at NULL",
                        nwords);
  static const uint64_t none = 0;
  return search_impl(x, query, k, sp, (allow_in){NULL, words ? words : &none, nwords}, hits, n_hits,
                     (search_mode){0}, err);
}
