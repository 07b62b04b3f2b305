/*
 * vector_search_score.c — exact scoring for hs_table_vector_search
 * (vector_search.h): a filtered scan projected to the vector column streams
 * the matching rows of the files without a usable index; each batch's
 * candidates (non-null vectors without null components, file and row from
 * hs_scan_batch_origin) are scored with the SIMD kernels and offered to
 * each query's bounded heap.
 *
 * Parallelism: with several files to score, the files are dealt round-robin
 * (by plan index) to one scan per core, each with its own heaps, merged at
 * the end (file-level parallelism: decoding dominates). With one file, one
 * query is split by rows and many queries go one per worker.
 */
#include <math.h>
#include <string.h>

#include "../common/parallel.h"
#include "../index/vector/distance.h"
#include "scan.h"
#include "vector_search.h"

/* Floats per scoring batch (rows = this / dim): bounds scan memory. */
#define VS_BATCH_FLOATS ((int64_t)1 << 21)
/* One query over fewer rows than this is scored on the calling thread. */
#define VS_PARALLEL_ROWS 8192

typedef struct vs_score {
  hs_metric metric;
  size_t dim, nq;
  const float *queries;
  hs_vs_topk *topk; /* nq heaps */
  /* The current batch's candidates: vector i at ptrs[i], row pos[i]. */
  const float **ptrs;
  int64_t *pos;
  size_t n, cap;
  bool contiguous; /* ptrs[i] == ptrs[0] + i * dim */
  float *conv;     /* float64 columns: the candidates converted, cap * dim floats */
  size_t conv_cap;
  uint32_t file;
  /* Scratch distances: one array of `cap` floats per worker. */
  float **dist;
  uint32_t threads;
  bool *oom; /* per worker */
  int64_t scored;
} vs_score;

static void distances(const vs_score *s, const float *q, size_t begin, size_t end, float *out) {
  if (s->contiguous) {
    hs_error e = {0};
    (void)hs_distance_f32_batch(s->metric, q, s->ptrs[0] + begin * s->dim, end - begin, s->dim,
                                out + begin, &e);
    return;
  }
  for (size_t i = begin; i < end; i++) {
    hs_error e = {0};
    (void)hs_distance_f32(s->metric, q, s->ptrs[i], s->dim, &out[i], &e);
  }
}

static bool push_all(const vs_score *s, hs_vs_topk *t, const float *d) {
  for (size_t i = 0; i < s->n; i++) {
    if (!isfinite(d[i])) continue; /* NaN/inf components, zero vectors under cosine */
    if (hs_vs_topk_full(t) && d[i] > t->h[0].distance) continue;
    hs_vs_hit h = {.distance = d[i], .file = s->file, .row = s->pos[i]};
    if (!hs_vs_topk_push(t, &h)) return false;
  }
  return true;
}

static void score_queries(void *ctx, size_t begin, size_t end, uint32_t worker) {
  vs_score *s = ctx;
  float *d = s->dist[worker];
  for (size_t q = begin; q < end; q++) {
    distances(s, s->queries + q * s->dim, 0, s->n, d);
    if (!push_all(s, &s->topk[q], d)) s->oom[worker] = true;
  }
}

static void score_rows(void *ctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  vs_score *s = ctx;
  distances(s, s->queries, begin, end, s->dist[0]);
}

static hs_status score_grow(vs_score *s, size_t n, hs_error *err) {
  if (n <= s->cap) return HS_OK;
  const float **np = hs_realloc(s->ptrs, n * sizeof *np);
  if (np != NULL) s->ptrs = np;
  int64_t *nr = np != NULL ? hs_realloc(s->pos, n * sizeof *nr) : NULL;
  if (nr != NULL) s->pos = nr;
  bool ok = np != NULL && nr != NULL;
  for (uint32_t w = 0; ok && w < (s->nq > 1 ? s->threads : 1); w++) {
    float *nd = hs_realloc(s->dist[w], n * sizeof *nd);
    if (nd == NULL)
      ok = false;
    else
      s->dist[w] = nd;
  }
  if (!ok) return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory (%zu rows)", n);
  s->cap = n;
  return HS_OK;
}

/* Room for n converted float64 vectors. */
static hs_status conv_grow(vs_score *s, size_t n, hs_error *err) {
  size_t need;
  if (!hs_mul_size(n, s->dim, &need) || !hs_mul_size(need, sizeof(float), &need))
    return hs_error_set(err, HS_ERR_NOMEM, "vector search: batch too large");
  if (need <= s->conv_cap) return HS_OK;
  float *nc = hs_realloc(s->conv, need);
  if (nc == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  s->conv = nc;
  s->conv_cap = need;
  return HS_OK;
}

/* The candidates of scan batch `b` (struct of one vector child) with
 * origin `o`: non-null vectors without null components. */
static hs_status batch_candidates(vs_score *s, const hs_vs_column *col, const struct ArrowArray *b,
                                  const hs_scan_origin *o, hs_error *err) {
  s->n = 0;
  s->contiguous = col->fixed;
  if (b->n_children != 1 || b->children[0]->n_children != 1) {
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: column '%s' read with an unexpected shape",
                        o->path, col->name);
  }
  const struct ArrowArray *a = b->children[0], *v = a->children[0];
  if (v->n_buffers < 2 || (b->length > 0 && v->buffers[1] == NULL)) {
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: column '%s' has no values", o->path, col->name);
  }
  const float *vals = (const float *)v->buffers[1];
  const double *dvals = (const double *)v->buffers[1];
  const uint8_t *vvalid = v->null_count != 0 ? (const uint8_t *)v->buffers[0] : NULL;
  hs_status st = score_grow(s, (size_t)b->length, err);
  if (st == HS_OK && col->f64) st = conv_grow(s, (size_t)b->length, err);
  if (st != HS_OK) return st;
  for (int64_t r = 0; r < b->length; r++) {
    int64_t j = b->offset + r; /* index into the child `a` */
    int64_t pos = o->rows != NULL ? o->rows[r] : o->first + r;
    if (!hs_arrow_is_valid(a, j)) {
      s->contiguous = false;
      continue;
    }
    int64_t start, len;
    if (col->fixed) {
      start = (a->offset + j) * col->width;
      len = col->width;
    } else if (col->large) {
      const int64_t *off = (const int64_t *)a->buffers[1];
      start = off[a->offset + j];
      len = off[a->offset + j + 1] - start;
    } else {
      const int32_t *off = (const int32_t *)a->buffers[1];
      start = off[a->offset + j];
      len = off[a->offset + j + 1] - start;
    }
    if (len != (int64_t)s->dim) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "vector search: column '%s' has dimension %lld (row %lld of %s), the "
                          "query has dimension %zu",
                          col->name, (long long)len, (long long)pos, o->path, s->dim);
    }
    if (start < 0 || start + len > v->length) {
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: column '%s' row %lld: values out of range",
                          o->path, col->name, (long long)pos);
    }
    start += v->offset;
    if (vvalid != NULL) {
      bool any_null = false;
      for (int64_t e = start; e < start + len && !any_null; e++)
        any_null = !((vvalid[e >> 3] >> (e & 7)) & 1);
      if (any_null) {
        s->contiguous = false;
        continue;
      }
    }
    if (col->f64) {
      float *dst = s->conv + s->n * s->dim;
      for (int64_t e = 0; e < len; e++) dst[e] = (float)dvals[start + e];
      s->ptrs[s->n] = dst;
    } else {
      s->ptrs[s->n] = vals + start;
    }
    s->pos[s->n] = pos;
    if (s->n > 0 && s->ptrs[s->n] != s->ptrs[s->n - 1] + s->dim) s->contiguous = false;
    s->n++;
  }
  return HS_OK;
}

static hs_status score_batch(vs_score *s, hs_error *err) {
  if (s->n == 0) return HS_OK;
  s->scored += (int64_t)(s->n * s->nq);
  if (s->nq > 1) {
    hs_parallel_for(s->nq, 1, s->threads, score_queries, s);
  } else {
    if (s->n >= VS_PARALLEL_ROWS && s->threads > 1)
      hs_parallel_for(s->n, VS_PARALLEL_ROWS / 2, s->threads, score_rows, s);
    else
      distances(s, s->queries, 0, s->n, s->dist[0]);
    if (!push_all(s, &s->topk[0], s->dist[0])) s->oom[0] = true;
  }
  for (uint32_t w = 0; w < s->threads; w++)
    if (s->oom[w]) return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  return HS_OK;
}

/* Record the path of plan file `file` (once); *searched counts files. */
hs_status hs_vs_files_set(hs_vs_files *f, size_t file, const char *path, int64_t *searched,
                          hs_error *err) {
  if (file < f->n && f->paths[file] != NULL) return HS_OK;
  if (file >= f->n) {
    char **np = hs_realloc(f->paths, (file + 1) * sizeof *np);
    if (np == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
    for (size_t i = f->n; i <= file; i++) np[i] = NULL;
    f->paths = np;
    f->n = file + 1;
  }
  if ((f->paths[file] = hs_strdup(path)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  if (searched != NULL) (*searched)++;
  return HS_OK;
}

void hs_vs_files_free(hs_vs_files *f) {
  for (size_t i = 0; i < f->n; i++) hs_free(f->paths[i]);
  hs_free(f->paths);
}

/* One scan of the exact pass: the plan files without a usable index
 * whose plan index is `w` modulo `nw`, scored into its own heaps. */
typedef struct vs_slice {
  hs_table *table;
  const hs_vector_search_options *o;
  const hs_vs_column *col;
  const hs_vs_indexed *ix;
  const hs_table_plan *plan;
  size_t w, nw;
  vs_score s;
  hs_vs_files files;
  hs_vector_search_stats stats;
  hs_status st;
  hs_error err;
} vs_slice;

static bool keep_slice(void *ctx, size_t plan_index, const char *path, int64_t size) {
  (void)path;
  (void)size;
  const vs_slice *sl = ctx;
  const hs_vs_indexed *ix = sl->ix;
  if (plan_index < ix->n && ix->vx[plan_index] != NULL) return false; /* through its index */
  return plan_index % sl->nw == sl->w;
}

/* Stream the slice's scan, scoring each batch. */
static hs_status score_slice(vs_slice *sl, hs_error *err) {
  vs_score *s = &sl->s;
  hs_scan_options so;
  hs_scan_options_init(&so);
  so.snapshot_id = sl->o->snapshot_id;
  so.columns = &sl->col->name;
  so.n_columns = 1;
  so.filter = sl->o->filter;
  int64_t rows = VS_BATCH_FLOATS / (int64_t)(s->dim ? s->dim : 1);
  so.batch_rows_max = rows < 256 ? 256 : rows;
  struct ArrowArrayStream st;
  hs_scan_hooks hooks = {.keep_file = keep_slice,
                         .ctx = sl,
                         .plan = sl->plan,
                         .reg = sl->ix->have_reg ? &sl->ix->reg : NULL};
  hs_status rc = hs_table_scan_query_hooked(sl->table, &so, &hooks, &st, err);
  if (rc != HS_OK) return rc;
  for (;;) {
    struct ArrowArray b;
    int e = st.get_next(&st, &b);
    if (e != 0) {
      const char *m = st.get_last_error(&st);
      rc = hs_error_set(err, hs_status_of_errno(e), "%s", m ? m : "vector search: scan failed");
      break;
    }
    if (b.release == NULL) break;
    hs_scan_origin org;
    rc = hs_scan_batch_origin(&st, &org, err);
    if (rc == HS_OK && org.file > UINT32_MAX)
      rc = hs_error_set(err, HS_ERR_UNSUPPORTED, "vector search: too many data files");
    if (rc == HS_OK)
      rc = hs_vs_files_set(&sl->files, org.file, org.path, &sl->stats.files_searched, err);
    if (rc == HS_OK) rc = batch_candidates(s, sl->col, &b, &org, err);
    s->file = (uint32_t)org.file;
    if (rc == HS_OK) rc = score_batch(s, err);
    b.release(&b);
    if (rc != HS_OK) break;
  }
  hs_scan_stats ss;
  hs_error local = {0};
  if (hs_scan_stats_get(&st, &ss, &local) == HS_OK) {
    sl->stats.files_planned = ss.files_planned;
    sl->stats.rows_matched += ss.rows_matched;
  }
  st.release(&st);
  sl->stats.rows_scored = s->scored;
  return rc;
}

static void slice_worker(void *ctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  vs_slice *slices = ctx;
  for (size_t i = begin; i < end; i++) slices[i].st = score_slice(&slices[i], &slices[i].err);
}

/* Set up a slice's scorer: `threads` workers inside it, its own heaps
 * unless `topk` is given. */
static hs_status slice_init(vs_slice *sl, hs_metric metric, const float *queries, size_t nq,
                            size_t dim, uint32_t threads, hs_vs_topk *topk, size_t k,
                            hs_error *err) {
  vs_score *s = &sl->s;
  s->metric = metric;
  s->dim = dim;
  s->nq = nq;
  s->queries = queries;
  s->threads = threads;
  s->topk = topk != NULL ? topk : hs_calloc(nq, sizeof *s->topk);
  s->dist = hs_calloc(threads, sizeof *s->dist);
  s->oom = hs_calloc(threads, sizeof *s->oom);
  if (s->topk == NULL || s->dist == NULL || s->oom == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  for (size_t q = 0; topk == NULL && q < nq; q++) hs_vs_topk_init(&s->topk[q], k);
  return HS_OK;
}

static void slice_free(vs_slice *sl, bool own_topk) {
  vs_score *s = &sl->s;
  for (size_t q = 0; own_topk && s->topk != NULL && q < s->nq; q++) hs_vs_topk_free(&s->topk[q]);
  if (own_topk) hs_free(s->topk);
  for (uint32_t w = 0; s->dist != NULL && w < s->threads; w++) hs_free(s->dist[w]);
  hs_free(s->dist);
  hs_free(s->oom);
  hs_free(s->ptrs);
  hs_free(s->pos);
  hs_free(s->conv);
  hs_vs_files_free(&sl->files);
}

hs_status hs_vs_score_exact(hs_table *table, const hs_vector_search_options *o,
                            const hs_vs_column *col, hs_metric metric, const float *queries,
                            size_t nq, size_t dim, const hs_vs_indexed *ix,
                            const hs_table_plan *plan, hs_vs_topk *topk, hs_vs_files *files,
                            hs_vector_search_stats *stats, hs_error *err) {
  size_t n_exact = 0;
  for (size_t i = 0; i < plan->n_files; i++) n_exact += !(i < ix->n && ix->vx[i] != NULL);
  if (n_exact == 0 && plan->n_files > 0) { /* every file through its index: no scan to set up */
    stats->files_planned = (int64_t)plan->n_files;
    return HS_OK;
  }
  uint32_t cores = hs_parallel_cores();
  size_t nw = n_exact < cores ? n_exact : cores;
  if (nw == 0) nw = 1;
  vs_slice *sl = hs_calloc(nw, sizeof *sl);
  if (sl == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
  hs_status st = HS_OK;
  for (size_t w = 0; w < nw; w++) {
    sl[w] =
        (vs_slice){.table = table, .o = o, .col = col, .ix = ix, .plan = plan, .w = w, .nw = nw};
    /* One slice: it scores into the caller's heaps with every core;
     * several: each its own heaps on one core. */
    uint32_t threads = nw > 1 ? 1 : (nq > 1 && cores > nq ? (uint32_t)nq : cores);
    if (st == HS_OK)
      st = slice_init(&sl[w], metric, queries, nq, dim, threads, nw > 1 ? NULL : topk, (size_t)o->k,
                      err);
  }
  if (st == HS_OK && nw == 1) {
    st = score_slice(&sl[0], err);
  } else if (st == HS_OK) {
    hs_parallel_for(nw, 1, (uint32_t)nw, slice_worker, sl);
    for (size_t w = 0; st == HS_OK && w < nw; w++)
      if (sl[w].st != HS_OK) st = hs_error_set(err, sl[w].st, "%s", sl[w].err.message);
    for (size_t w = 0; st == HS_OK && w < nw; w++) /* merge the heaps */
      for (size_t q = 0; st == HS_OK && q < nq; q++)
        for (size_t i = 0; i < sl[w].s.topk[q].n; i++)
          if (!hs_vs_topk_push(&topk[q], &sl[w].s.topk[q].h[i])) {
            st = hs_error_set(err, HS_ERR_NOMEM, "vector search: out of memory");
            break;
          }
  }
  for (size_t w = 0; w < nw; w++) {
    stats->files_planned = sl[w].stats.files_planned;
    stats->files_searched += sl[w].stats.files_searched;
    stats->rows_matched += sl[w].stats.rows_matched;
    stats->rows_scored += sl[w].stats.rows_scored;
    for (size_t f = 0; st == HS_OK && f < sl[w].files.n; f++)
      if (sl[w].files.paths[f] != NULL)
        st = hs_vs_files_set(files, f, sl[w].files.paths[f], NULL, err);
    slice_free(&sl[w], nw > 1);
  }
  hs_free(sl);
  return st;
}
