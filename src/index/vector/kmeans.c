/*
 * kmeans.c — sampled k-means++ / Lloyd k-means (see kmeans.h for the
 * contract and README.md for measurements).
 *
 * Parallel structure: every pass over points is an hs_parallel_for over
 * fixed chunks of CHUNK points; a chunk writes only its own slots (per
 * point outputs, one partial sum per chunk), and the caller reduces the
 * chunk sums in chunk order. Centroid sums are computed per cluster (in
 * parallel over clusters) from a counting sort of the assignment, so each
 * cluster's sum runs over its points in index order. The result therefore
 * does not depend on the thread count or on scheduling.
 */
#include "kmeans.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/parallel.h"
#include "vq_block.h"

#define CHUNK 1024
#define SEED_PER_K 16
/* Below this many multiply-adds a pass runs on the calling thread: starting
 * workers costs tens of microseconds. */
#define PARALLEL_MIN_WORK ((size_t)1 << 18)

/* ------------------------------------------------------------ helpers */

static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform double in [0, 1). */
static double rng_unit(uint64_t *s) {
  return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

static uint32_t pick_threads(uint32_t threads, size_t work) {
  if (work < PARALLEL_MIN_WORK) return 1;
  return threads == 0 ? hs_parallel_cores() : threads;
}

static void normalize(float *v, size_t dim) {
  double s = 0;
  for (size_t d = 0; d < dim; d++) s += (double)v[d] * v[d];
  if (!(s > 0) || !isfinite(s)) return;
  float inv = (float)(1.0 / sqrt(s));
  for (size_t d = 0; d < dim; d++) v[d] *= inv;
}

static bool metric_ok(hs_metric m) {
  return m == HS_METRIC_L2 || m == HS_METRIC_L2SQ || m == HS_METRIC_IP || m == HS_METRIC_COSINE ||
         m == HS_METRIC_L1;
}

/* --------------------------------------------------------- assignment */

/* Shared by hs_kmeans_assign and training. score[i] is the ranking value:
 * squared L2, -x.c, -x.c/|c| or L1. */
typedef struct assign_ctx {
  const float *points;
  size_t dim;
  const float *centroids;
  uint32_t k;
  hs_metric metric;
  const float *inv_norm; /* COSINE: 1/|c| (0 for a zero centroid) */
  const float *packed;   /* centroids packed for hs_vq_all, or NULL */
  const hs_distance_kernels *kern;
  uint32_t *assign;
  float *score;
  /* training only: previous assignment (changes counted per chunk) */
  const uint32_t *prev;
  size_t *chunk_changed;
  double *chunk_obj;
  double obj_offset; /* COSINE training: objective = 1 + score */
} assign_ctx;

static float score_of(const assign_ctx *c, const float *x, uint32_t j) {
  const float *cj = c->centroids + (size_t)j * c->dim;
  switch (c->metric) {
  case HS_METRIC_IP: return -c->kern->dot_f32(x, cj, c->dim);
  case HS_METRIC_COSINE: return -c->kern->dot_f32(x, cj, c->dim) * c->inv_norm[j];
  case HS_METRIC_L1: return c->kern->l1_f32(x, cj, c->dim);
  default: return c->kern->l2sq_f32(x, cj, c->dim);
  }
}

static void assign_range(void *vctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  const assign_ctx *c = vctx;
  size_t dim = c->dim;
  hs_vq_op op = c->metric == HS_METRIC_IP || c->metric == HS_METRIC_COSINE ? HS_VQ_DOT
                : c->metric == HS_METRIC_L1                                ? HS_VQ_L1
                                                                           : HS_VQ_L2SQ;
  for (size_t p = begin; p < end; p++) {
    const float *x = c->points + p * dim;
    float b;
    uint32_t a = 0;
    if (c->packed != NULL) { /* all k at once over the packed centroids */
      a = hs_vq_argmin(op, c->packed, c->k, dim, x, &b);
      if (!(b < INFINITY)) b = score_of(c, x, a); /* NaN/inf point: its true score */
    } else { /* no memory for the packed form: one kernel call per pair */
      b = score_of(c, x, 0);
      for (uint32_t j = 1; j < c->k; j++) {
        float s = score_of(c, x, j);
        if (s < b) b = s, a = j;
      }
    }
    /* Ties and NaN scores keep the lowest index, so a is always in range. */
    c->assign[p] = a;
    if (c->score != NULL) c->score[p] = b;
  }
  if (c->chunk_obj != NULL) {
    double obj = 0;
    size_t changed = 0;
    for (size_t p = begin; p < end; p++) {
      obj += (double)c->score[p] + c->obj_offset;
      changed += c->prev[p] != c->assign[p];
    }
    c->chunk_obj[begin / CHUNK] = obj;
    c->chunk_changed[begin / CHUNK] = changed;
  }
}

static float *inverse_norms(const float *centroids, uint32_t k, size_t dim) {
  float *inv = hs_malloc((size_t)k * sizeof(float));
  if (inv == NULL) return NULL;
  for (uint32_t j = 0; j < k; j++) {
    double s = 0;
    for (size_t d = 0; d < dim; d++) s += (double)centroids[j * dim + d] * centroids[j * dim + d];
    inv[j] = s > 0 && isfinite(s) ? (float)(1.0 / sqrt(s)) : 0.0f;
  }
  return inv;
}

/* The packed centroids (COSINE: scaled to unit length, so the dot ranks
 * by cosine), or NULL (no memory: the slow path still works). */
static float *make_packed(const float *centroids, uint32_t k, size_t dim, const float *inv_norm) {
  size_t floats = hs_vq_packed_floats(k, dim);
  if (floats > HS_ALLOC_BYTES_MAX / sizeof(float)) return NULL;
  if (getenv("HS_KMEANS_NOPACK") != NULL) return NULL; /* tests and measurement */
  float *packed = hs_malloc(floats * sizeof(float));
  if (packed == NULL) return NULL;
  if (inv_norm == NULL) {
    hs_vq_pack(centroids, k, dim, packed);
    return packed;
  }
  float *scaled = hs_malloc((size_t)k * dim * sizeof(float));
  if (scaled == NULL) {
    hs_free(packed);
    return NULL;
  }
  for (size_t j = 0; j < k; j++)
    for (size_t d = 0; d < dim; d++) scaled[j * dim + d] = centroids[j * dim + d] * inv_norm[j];
  hs_vq_pack(scaled, k, dim, packed);
  hs_free(scaled);
  return packed;
}

hs_status hs_kmeans_assign(const float *points, size_t n, size_t dim, const float *centroids,
                           uint32_t k, hs_metric metric, uint32_t threads, uint32_t *assign,
                           float *dist, hs_error *err) {
  if (k == 0 || dim == 0 || centroids == NULL || (n > 0 && (points == NULL || assign == NULL)))
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "kmeans assign: need k > 0 (got %u), dim > 0 (got %zu) and non-NULL "
                        "points, centroids and assign",
                        k, dim);
  if (!metric_ok(metric))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "kmeans assign: metric %s is not a float metric",
                        hs_metric_name(metric));
  if (n == 0) return HS_OK;
  float *inv = NULL;
  if (metric == HS_METRIC_COSINE && (inv = inverse_norms(centroids, k, dim)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "kmeans assign: out of memory for %u centroid norms", k);
  assign_ctx c = {.points = points,
                  .dim = dim,
                  .centroids = centroids,
                  .k = k,
                  .metric = metric,
                  .inv_norm = inv,
                  .packed = make_packed(centroids, k, dim, inv),
                  .kern = hs_distance_kernels_active(),
                  .assign = assign,
                  .score = dist};
  size_t work = n * (size_t)k * dim;
  hs_parallel_for(n, CHUNK, pick_threads(threads, work), assign_range, &c);
  if (dist != NULL) {
    for (size_t i = 0; i < n; i++) {
      switch (metric) {
      case HS_METRIC_L2: dist[i] = sqrtf(dist[i]); break;
      case HS_METRIC_COSINE:
        dist[i] =
            hs_distance_cosine_f32(points + i * dim, centroids + (size_t)assign[i] * dim, dim);
        break;
      default: /* the score is the distance */ break;
      }
    }
  }
  hs_free(inv);
  hs_free((void *)c.packed);
  return HS_OK;
}

/* ------------------------------------------------------------ seeding */

typedef struct seed_ctx {
  const float *x;
  size_t dim;
  const float *centre;
  float *d2;
  double *chunk_sum;
  const hs_distance_kernels *kern;
  const float *inv_norm_x; /* spherical: 1/|x| per point; NULL for L2 */
  bool init;
} seed_ctx;

static void seed_range(void *vctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  const seed_ctx *c = vctx;
  double s = 0;
  for (size_t i = begin; i < end; i++) {
    const float *x = c->x + i * c->dim;
    /* Spherical: squared L2 between the directions, 2 - 2 cos (the centre
     * is normalised), so long vectors do not dominate the sampling. */
    float d = c->inv_norm_x != NULL
                  ? 2.0f - 2.0f * c->kern->dot_f32(x, c->centre, c->dim) * c->inv_norm_x[i]
                  : c->kern->l2sq_f32(x, c->centre, c->dim);
    if (!(d >= 0)) d = 0; /* NaN points never attract a centre */
    if (c->init || d < c->d2[i]) c->d2[i] = d;
    s += c->d2[i];
  }
  c->chunk_sum[begin / CHUNK] = s;
}

/* k-means++: the first centre uniform, each next one drawn with probability
 * proportional to the squared distance to the nearest chosen centre. */
static void seed_plusplus(const float *x, size_t s, size_t dim, uint32_t k, uint64_t *rng,
                          uint32_t threads, const float *inv_norm_x, float *centroids, float *d2,
                          double *chunk_sum) {
  size_t chunks = (s + CHUNK - 1) / CHUNK;
  seed_ctx c = {.x = x,
                .dim = dim,
                .d2 = d2,
                .chunk_sum = chunk_sum,
                .kern = hs_distance_kernels_active(),
                .inv_norm_x = inv_norm_x};
  size_t first = (size_t)(rng_unit(rng) * (double)s);
  if (first >= s) first = s - 1;
  memcpy(centroids, x + first * dim, dim * sizeof(float));
  if (inv_norm_x != NULL) normalize(centroids, dim);
  uint32_t t = pick_threads(threads, s * dim);
  for (uint32_t j = 1; j < k; j++) {
    c.centre = centroids + (size_t)(j - 1) * dim;
    c.init = j == 1;
    hs_parallel_for(s, CHUNK, t, seed_range, &c);
    double total = 0;
    for (size_t ch = 0; ch < chunks; ch++) total += chunk_sum[ch];
    size_t pick = s - 1;
    if (total > 0 && isfinite(total)) {
      double r = rng_unit(rng) * total;
      size_t ch = 0;
      while (ch + 1 < chunks && r >= chunk_sum[ch]) r -= chunk_sum[ch++];
      size_t i = ch * CHUNK, e = i + CHUNK < s ? i + CHUNK : s;
      pick = e - 1;
      for (; i < e; i++) {
        if (r < d2[i]) {
          pick = i;
          break;
        }
        r -= d2[i];
      }
    } else { /* every point sits on a centre (duplicates): any point */
      pick = (size_t)(rng_unit(rng) * (double)s);
      if (pick >= s) pick = s - 1;
    }
    memcpy(centroids + (size_t)j * dim, x + pick * dim, dim * sizeof(float));
    if (inv_norm_x != NULL) normalize(centroids + (size_t)j * dim, dim);
  }
}

/* ------------------------------------------------------------- update */

typedef struct update_ctx {
  const float *x;
  size_t dim;
  const size_t *start; /* k + 1 offsets into order */
  const uint32_t *order;
  float *centroids;
  double *scratch; /* threads x dim */
  bool spherical;
} update_ctx;

static void update_range(void *vctx, size_t begin, size_t end, uint32_t worker) {
  const update_ctx *c = vctx;
  double *sum = c->scratch + (size_t)worker * c->dim;
  for (size_t j = begin; j < end; j++) {
    size_t a = c->start[j], b = c->start[j + 1];
    if (a == b) continue; /* empty: repaired by the caller */
    memset(sum, 0, c->dim * sizeof(double));
    for (size_t i = a; i < b; i++) {
      const float *p = c->x + (size_t)c->order[i] * c->dim;
      for (size_t d = 0; d < c->dim; d++) sum[d] += p[d];
    }
    float *cj = c->centroids + j * c->dim;
    double inv = 1.0 / (double)(b - a);
    for (size_t d = 0; d < c->dim; d++) cj[d] = (float)(sum[d] * inv);
    if (c->spherical) normalize(cj, c->dim);
  }
}

/* ------------------------------------------------------------ training */

typedef struct train_state {
  float *sample; /* owned copy, or NULL when training on the input */
  float *d;      /* per point: seeding D^2, then assignment score */
  uint32_t *assign, *order;
  size_t *start, *chunk_changed;
  double *chunk_sum, *scratch;
} train_state;

static void train_state_free(train_state *t) {
  hs_free(t->sample);
  hs_free(t->d);
  hs_free(t->assign);
  hs_free(t->order);
  hs_free(t->start);
  hs_free(t->chunk_changed);
  hs_free(t->chunk_sum);
  hs_free(t->scratch);
}

/* Empty clusters take, one by one, the farthest point of the currently
 * largest cluster (counts updated as points move). */
static uint32_t repair_empty(const float *x, size_t dim, uint32_t k, float *centroids,
                             const size_t *start, const uint32_t *order, float *score,
                             size_t *count, bool spherical) {
  uint32_t repairs = 0;
  for (uint32_t j = 0; j < k; j++) {
    if (count[j] != 0) continue;
    uint32_t big = 0;
    for (uint32_t l = 1; l < k; l++)
      if (count[l] > count[big]) big = l;
    if (count[big] < 2) break; /* cannot happen with sample >= k */
    size_t far = SIZE_MAX;
    for (size_t i = start[big]; i < start[big + 1]; i++) {
      uint32_t p = order[i];
      if (score[p] == -INFINITY) continue; /* already moved */
      if (far == SIZE_MAX || score[p] > score[order[far]]) far = i;
    }
    if (far == SIZE_MAX) break;
    uint32_t p = order[far];
    score[p] = -INFINITY;
    memcpy(centroids + (size_t)j * dim, x + (size_t)p * dim, dim * sizeof(float));
    if (spherical) normalize(centroids + (size_t)j * dim, dim);
    count[big]--;
    count[j] = 1;
    repairs++;
  }
  return repairs;
}

hs_status hs_kmeans_train(const float *points, size_t n, size_t dim, const hs_kmeans_params *p,
                          float **centroids, uint32_t *k_out, hs_error *err) {
  if (p == NULL || centroids == NULL || k_out == NULL || points == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "kmeans train: NULL argument");
  if (n == 0 || dim == 0 || p->k == 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "kmeans train: need n > 0 (got %zu), dim > 0 (got %zu), k > 0 (got %u)", n,
                        dim, p->k);
  if (!metric_ok(p->metric))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "kmeans train: metric %s is not a float metric",
                        hs_metric_name(p->metric));
  if (n > UINT32_MAX)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "kmeans train: %zu points (at most 2^32-1; pass a sample)", n);
  uint32_t k = p->k < n ? p->k : (uint32_t)n;
  if (p->iterations > HS_KMEANS_ITERATIONS_MAX)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "kmeans train: iterations = %u outside [0, %u]",
                        p->iterations, HS_KMEANS_ITERATIONS_MAX);
  uint32_t iterations = p->iterations ? p->iterations : 20;
  uint64_t s64 = p->sample ? p->sample : (uint64_t)256 * k;
  if (s64 < k) s64 = k;
  if (s64 > n) s64 = n;
  size_t s = (size_t)s64, bytes;
  if (!hs_mul_size(s, dim, &bytes) || !hs_mul_size(bytes, sizeof(float), &bytes) ||
      bytes > HS_ALLOC_BYTES_MAX)
    return hs_error_set(err, HS_ERR_NOMEM, "kmeans train: sample of %zu x %zu floats too large", s,
                        dim);
  bool spherical = p->metric == HS_METRIC_IP || p->metric == HS_METRIC_COSINE;
  uint32_t threads = p->threads ? p->threads : hs_parallel_cores();
  /* per-thread scratch below; the pool runs at most this many and the
   * centroids do not depend on the thread count */
  if (threads > HS_KMEANS_THREADS_MAX) threads = HS_KMEANS_THREADS_MAX;
  uint64_t rng = p->seed ^ 0x6B6D65616E73ull; /* "kmeans" */

  train_state t;
  memset(&t, 0, sizeof t);
  size_t chunks = (s + CHUNK - 1) / CHUNK;
  float *c = hs_malloc((size_t)k * dim * sizeof(float));
  const float *x = points;
  if (s < n || p->metric == HS_METRIC_COSINE) t.sample = hs_malloc(bytes);
  t.d = hs_malloc(s * sizeof(float));
  t.assign = hs_malloc(s * sizeof(uint32_t));
  t.order = hs_malloc(s * sizeof(uint32_t));
  t.start = hs_calloc((size_t)k + 1, sizeof(size_t));
  t.chunk_changed = hs_malloc(chunks * sizeof(size_t));
  t.chunk_sum = hs_malloc(chunks * sizeof(double));
  t.scratch = hs_malloc((size_t)threads * dim * sizeof(double));
  size_t *count = hs_malloc(((size_t)k + 1) * sizeof(size_t));
  if (c == NULL || t.d == NULL || t.assign == NULL || t.order == NULL || t.start == NULL ||
      t.chunk_changed == NULL || t.chunk_sum == NULL || t.scratch == NULL || count == NULL ||
      ((s < n || p->metric == HS_METRIC_COSINE) && t.sample == NULL)) {
    hs_free(c);
    hs_free(count);
    train_state_free(&t);
    return hs_error_set(err, HS_ERR_NOMEM, "kmeans train: out of memory (%zu x %zu sample, k %u)",
                        s, dim, k);
  }
  if (t.sample != NULL) {
    if (s < n) { /* Knuth's algorithm S: each point kept with prob. needed/left */
      size_t kept = 0;
      for (size_t i = 0; i < n && kept < s; i++)
        if (rng_unit(&rng) * (double)(n - i) < (double)(s - kept))
          memcpy(t.sample + kept++ * dim, points + i * dim, dim * sizeof(float));
    } else {
      memcpy(t.sample, points, bytes);
    }
    if (p->metric == HS_METRIC_COSINE)
      for (size_t i = 0; i < s; i++) normalize(t.sample + i * dim, dim);
    x = t.sample;
  }

  /* k-means++ runs on a random subset of SEED_PER_K * k sample points:
   * each new centre costs one pass over the seeding points, and over a
   * large sample those k passes are memory-bound (measured on 50k x 128,
   * k 512: seeding 10 s of a 12 s run; on 8k points it fits in cache). */
  size_t ms = (size_t)SEED_PER_K * k < s ? (size_t)SEED_PER_K * k : s;
  const float *xs = x;
  float *seedbuf = ms < s ? hs_malloc(ms * dim * sizeof(float)) : NULL;
  if (seedbuf != NULL) { /* partial Fisher-Yates over indices (in order) */
    for (size_t i = 0; i < s; i++) t.order[i] = (uint32_t)i;
    for (size_t i = 0; i < ms; i++) {
      size_t j = i + (size_t)(rng_unit(&rng) * (double)(s - i));
      if (j >= s) j = s - 1;
      uint32_t tmp = t.order[i];
      t.order[i] = t.order[j];
      t.order[j] = tmp;
      memcpy(seedbuf + i * dim, x + (size_t)t.order[i] * dim, dim * sizeof(float));
    }
    xs = seedbuf;
  } else {
    ms = s; /* no memory for the subset: seed on the whole sample */
  }
  float *inv_x = NULL;
  if (spherical) {
    /* 1/|x| per seeding point, for the seeding distance (scratch: order). */
    inv_x = (float *)t.order;
    for (size_t i = 0; i < ms; i++) {
      double q = 0;
      for (size_t d = 0; d < dim; d++) q += (double)xs[i * dim + d] * xs[i * dim + d];
      inv_x[i] = q > 0 && isfinite(q) ? (float)(1.0 / sqrt(q)) : 0.0f;
    }
  }
  seed_plusplus(xs, ms, dim, k, &rng, threads, inv_x, c, t.d, t.chunk_sum);
  hs_free(seedbuf);

  hs_kmeans_stats st;
  memset(&st, 0, sizeof st);
  st.sample = (uint32_t)s;
  for (size_t i = 0; i < s; i++) t.assign[i] = UINT32_MAX;
  uint32_t t_assign = pick_threads(threads, s * (size_t)k * dim);
  uint32_t t_update = pick_threads(threads, s * dim);
  hs_status status = HS_OK;
  for (uint32_t it = 0; it < iterations; it++) {
    float *inv = NULL;
    if (p->metric == HS_METRIC_COSINE && (inv = inverse_norms(c, k, dim)) == NULL) {
      status = hs_error_set(err, HS_ERR_NOMEM, "kmeans train: out of memory");
      break;
    }
    /* Assignment reads the previous assignment and overwrites it chunk by
     * chunk: keep the previous one in `order` (rebuilt below anyway). */
    memcpy(t.order, t.assign, s * sizeof(uint32_t));
    assign_ctx a = {.points = x,
                    .dim = dim,
                    .centroids = c,
                    .k = k,
                    .metric = p->metric,
                    .inv_norm = inv,
                    .packed = make_packed(c, k, dim, inv),
                    .kern = hs_distance_kernels_active(),
                    .assign = t.assign,
                    .score = t.d,
                    .prev = t.order,
                    .chunk_changed = t.chunk_changed,
                    .chunk_obj = t.chunk_sum,
                    .obj_offset = p->metric == HS_METRIC_COSINE ? 1.0 : 0.0};
    hs_parallel_for(s, CHUNK, t_assign, assign_range, &a);
    hs_free(inv);
    hs_free((void *)a.packed);
    double obj = 0;
    size_t changed = 0;
    for (size_t ch = 0; ch < chunks; ch++) obj += t.chunk_sum[ch], changed += t.chunk_changed[ch];
    if (it < HS_KMEANS_TRACE_MAX) st.inertia[it] = obj;
    st.iterations = it + 1;
    if (changed == 0) break; /* converged: the update would change nothing */

    /* Counting sort of the points by cluster. */
    memset(count, 0, ((size_t)k + 1) * sizeof(size_t));
    for (size_t i = 0; i < s; i++) count[t.assign[i]]++;
    t.start[0] = 0;
    for (uint32_t j = 0; j < k; j++) t.start[j + 1] = t.start[j] + count[j];
    for (uint32_t j = 0; j <= k; j++) count[j] = t.start[j];
    for (size_t i = 0; i < s; i++) t.order[count[t.assign[i]]++] = (uint32_t)i;
    for (uint32_t j = 0; j < k; j++) count[j] = t.start[j + 1] - t.start[j];

    update_ctx u = {.x = x,
                    .dim = dim,
                    .start = t.start,
                    .order = t.order,
                    .centroids = c,
                    .scratch = t.scratch,
                    .spherical = spherical};
    hs_parallel_for(k, 1 + k / (8 * t_update), t_update, update_range, &u);
    st.empty_repairs += repair_empty(x, dim, k, c, t.start, t.order, t.d, count, spherical);
  }
  hs_free(count);
  train_state_free(&t);
  if (status != HS_OK) {
    hs_free(c);
    return status;
  }
  if (p->stats != NULL) *p->stats = st;
  *centroids = c;
  *k_out = k;
  return HS_OK;
}
