/*
 * split.c — scans cut into splits for distributed engines (the JVM
 * connectors, java/): hs_table_plan_splits, hs_table_scan_split, and the
 * plan restriction hs_table_vector_search_split uses (vector_search.c).
 *
 * A split is a set of data files of one snapshot's plan, named by path.
 * The driver plans once (the same manifest, partition and column-bound
 * pruning as hs_table_scan_query: planning runs that scan's open with a
 * keep_file hook that records each surviving file and keeps none); each
 * worker plans the same snapshot again and keeps only its files, so a
 * split's scan is the full scan's pipeline (index candidates, deletes,
 * row-group and page pruning) over fewer files. Paths are matched exactly:
 * both sides resolve them from the same metadata.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/common.h"
#include "../index/scalar/sidx_internal.h"
#include "scan.h"

/* ------------------------------------------------------------ restrict */

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

hs_status hs_scan_plan_restrict(hs_table_plan *plan, const char *const *paths, size_t n,
                                hs_error *err) {
  const char **want = hs_malloc((n ? n : 1) * sizeof *want);
  bool *seen = hs_calloc(n ? n : 1, sizeof *seen);
  if (want == NULL || seen == NULL) {
    hs_free(want);
    hs_free(seen);
    return hs_error_set(err, HS_ERR_NOMEM, "split: out of memory");
  }
  hs_status st = HS_OK;
  for (size_t i = 0; i < n; i++) {
    if (paths[i] == NULL) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "split: path %zu is NULL", i);
      break;
    }
    want[i] = paths[i];
  }
  if (st == HS_OK) {
    qsort(want, n, sizeof *want, str_cmp);
    size_t kept = 0;
    for (size_t f = 0; f < plan->n_files; f++) {
      const char *key = plan->files[f].path;
      const char **hit = n ? bsearch(&key, want, n, sizeof *want, str_cmp) : NULL;
      if (hit == NULL) continue;
      seen[hit - want] = true;
      plan->files[kept++] = plan->files[f];
    }
    plan->n_files = kept;
    for (size_t i = 0; i < n; i++) {
      if (!seen[i] && (i == 0 || strcmp(want[i], want[i - 1]) != 0)) {
        st = hs_error_set(err, HS_ERR_NOT_FOUND,
                          "split: '%s' is not a data file of snapshot %lld (plan the splits "
                          "of that snapshot on the driver and pin its id)",
                          want[i], (long long)plan->snapshot_id);
        break;
      }
    }
  }
  hs_free(want);
  hs_free(seen);
  return st;
}

/* ------------------------------------------------------------------ plan */

typedef struct plan_ctx {
  const hs_table_plan *plan;
  hs_scan_split *v;
  size_t n, cap;
  bool filtered; /* files are opened: on_cand records them */
  bool oom;
} plan_ctx;

static hs_scan_split *split_add(plan_ctx *c, size_t plan_index, const char *path,
                                int64_t file_size) {
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 16;
    hs_scan_split *nv = hs_realloc(c->v, cap * sizeof *nv);
    if (nv == NULL) return NULL;
    c->v = nv;
    c->cap = cap;
  }
  const hs_table_plan_file *pf = &c->plan->files[plan_index];
  hs_scan_split *s = &c->v[c->n];
  memset(s, 0, sizeof *s);
  if ((s->path = hs_strdup(path)) == NULL) return NULL;
  s->plan_index = (int64_t)plan_index;
  s->file_size_in_bytes = file_size;
  s->record_count = pf->data_file->record_count;
  s->rows_deleted = pf->n_deleted;
  s->rows_candidate = -1;
  c->n++;
  return s;
}

/* keep_file hook. Without a filter: record the surviving file and keep
 * none (nothing is opened). With one: keep it, on_cand records it. */
static bool record_file(void *ctx, size_t plan_index, const char *path, int64_t file_size) {
  plan_ctx *c = ctx;
  if (c->oom) return false;
  if (c->filtered) return true;
  if (split_add(c, plan_index, path, file_size) == NULL) c->oom = true;
  return false;
}

/* on_cand hook: a file with a candidate row is a split, with its candidates. */
static hs_status record_cand(void *ctx, size_t plan_index, const char *path,
                             const roaring_bitmap_t *cand, bool exact, int64_t rows,
                             hs_error *err) {
  plan_ctx *c = ctx;
  if (rows <= 0) return HS_OK; /* nothing can match: no split, no task */
  const hs_table_plan_file *pf = &c->plan->files[plan_index];
  hs_scan_split *s = split_add(c, plan_index, path, pf->data_file->file_size_in_bytes);
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "plan splits: out of memory");
  s->rows_candidate = rows;
  if (cand != NULL) {
    size_t n = roaring_bitmap_portable_size_in_bytes(cand);
    if ((s->candidates = hs_malloc(n ? n : 1)) == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "plan splits: out of memory");
    s->candidates_size = roaring_bitmap_portable_serialize(cand, (char *)s->candidates);
    s->candidates_exact = exact ? 1 : 0;
  }
  return HS_OK;
}

void hs_scan_splits_free(hs_scan_split *splits, size_t n) {
  if (splits == NULL) return;
  for (size_t i = 0; i < n; i++) {
    hs_free(splits[i].path);
    hs_free(splits[i].candidates);
  }
  hs_free(splits);
}

static bool filter_given(const char *f) {
  if (f == NULL) return false;
  for (; *f; f++)
    if (*f != ' ' && *f != '\t' && *f != '\r' && *f != '\n') return true;
  return false;
}

hs_status hs_table_plan_splits(hs_table *table, const hs_scan_options *opts, hs_scan_split **out,
                               size_t *n_out, int64_t *snapshot_id, hs_error *err) {
  if (out == NULL || n_out == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "plan splits: NULL output");
  *out = NULL;
  *n_out = 0;
  hs_scan_options o;
  hs_scan_options_init(&o);
  if (opts != NULL) {
    o.snapshot_id = opts->snapshot_id;
    o.filter = opts->filter;
  }
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  hs_status st = hs_table_plan_files(table, o.snapshot_id, &plan, err);
  if (st != HS_OK) return st;
  o.snapshot_id = plan.snapshot_id;
  plan_ctx c = {.plan = &plan, .filtered = filter_given(o.filter)};
  hs_scan_hooks hooks = {
      .keep_file = record_file, .on_cand = record_cand, .ctx = &c, .plan = &plan};
  if (c.filtered) { /* the files are opened as the scan runs; it emits nothing */
    st = hs_table_scan_rows(table, plan.snapshot_id, o.filter, &hooks, "plan splits", NULL, err);
  } else {
    struct ArrowArrayStream s;
    memset(&s, 0, sizeof s);
    st = hs_table_scan_query_hooked(table, &o, &hooks, &s, err);
    if (s.release != NULL) s.release(&s);
  }
  if (st == HS_OK && c.oom) st = hs_error_set(err, HS_ERR_NOMEM, "plan splits: out of memory");
  if (snapshot_id != NULL) *snapshot_id = plan.snapshot_id;
  hs_table_plan_free(&plan);
  if (st != HS_OK) {
    hs_scan_splits_free(c.v, c.n);
    return st;
  }
  *out = c.v;
  *n_out = c.n;
  return HS_OK;
}

/* ------------------------------------------------------------------ scan */

hs_status hs_table_scan_split(hs_table *table, const hs_scan_options *opts,
                              const char *const *paths, size_t n_paths,
                              struct ArrowArrayStream *out, hs_error *err) {
  if (paths == NULL && n_paths > 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan split: NULL paths with a count");
  hs_scan_options o;
  hs_scan_options_init(&o);
  if (opts != NULL) o = *opts;
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  hs_status st = hs_table_plan_files(table, o.snapshot_id, &plan, err);
  if (st == HS_OK) st = hs_scan_plan_restrict(&plan, paths, n_paths, err);
  hs_scan_hooks hooks = {.plan = &plan};
  if (st == HS_OK) st = hs_table_scan_query_hooked(table, &o, &hooks, out, err);
  hs_table_plan_free(&plan);
  return st;
}

/* The candidates of each file of a restricted plan (by its index there). */
typedef struct given_ctx {
  roaring_bitmap_t **cand;
  bool *exact;
  size_t n;
} given_ctx;

static const roaring_bitmap_t *given_cand(void *ctx, size_t plan_index, bool *exact) {
  given_ctx *g = ctx;
  if (plan_index >= g->n) return NULL;
  *exact = g->exact[plan_index];
  return g->cand[plan_index];
}

static void given_free(void *ctx) {
  given_ctx *g = ctx;
  if (g == NULL) return;
  for (size_t f = 0; f < g->n; f++)
    if (g->cand[f] != NULL) roaring_bitmap_free(g->cand[f]); /* 0.2.66: not NULL-safe */
  hs_free(g->cand);
  hs_free(g->exact);
  hs_free(g);
}

hs_status hs_table_scan_split_rows(hs_table *table, const hs_scan_options *opts,
                                   const hs_scan_split *splits, size_t n,
                                   struct ArrowArrayStream *out, hs_error *err) {
  if (splits == NULL && n > 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scan split: NULL splits with a count");
  hs_scan_options o;
  hs_scan_options_init(&o);
  if (opts != NULL) o = *opts;
  const char **paths = hs_malloc((n ? n : 1) * sizeof *paths);
  if (paths == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan split: out of memory");
  for (size_t i = 0; i < n; i++) paths[i] = splits[i].path;
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  given_ctx *gp = hs_calloc(1, sizeof *gp);
  if (gp == NULL) {
    hs_free(paths);
    return hs_error_set(err, HS_ERR_NOMEM, "scan split: out of memory");
  }
  given_ctx g = {0};
  hs_status st = hs_table_plan_files(table, o.snapshot_id, &plan, err);
  if (st == HS_OK) st = hs_scan_plan_restrict(&plan, paths, n, err);
  hs_free(paths);
  if (st == HS_OK && plan.n_files > 0) {
    g.n = plan.n_files;
    g.cand = hs_calloc(g.n, sizeof *g.cand);
    g.exact = hs_calloc(g.n, sizeof *g.exact);
    if (g.cand == NULL || g.exact == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "scan split: out of memory");
  }
  /* Each split's candidates, checked (untrusted bytes) against its file. */
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    const hs_scan_split *sp = &splits[i];
    if (sp->candidates == NULL) continue;
    if (o.filter == NULL || !filter_given(o.filter)) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG,
                        "scan split: '%s' has candidate rows but the scan has no filter", sp->path);
      break;
    }
    size_t f = 0;
    while (f < plan.n_files && strcmp(plan.files[f].path, sp->path) != 0) f++;
    if (f == plan.n_files) continue; /* a duplicate path: restrict kept one */
    int64_t rows = plan.files[f].data_file->record_count;
    if (rows != sp->record_count || rows < 0 || rows > (int64_t)UINT32_MAX) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG,
                        "scan split: the candidates of '%s' were planned for %lld rows, the "
                        "snapshot's file has %lld",
                        sp->path, (long long)sp->record_count, (long long)rows);
      break;
    }
    if (g.cand[f] != NULL) continue;
    st = hs_sidx_roaring_load(sp->candidates, sp->candidates_size, (uint32_t)rows, &g.cand[f], err);
    if (st != HS_OK) {
      hs_error_prefix(err, "scan split: candidates of '%s': ", sp->path);
      break;
    }
    g.exact[f] = sp->candidates_exact != 0;
  }
  *gp = g;
  hs_scan_hooks hooks = {
      .plan = &plan, .given_cand = given_cand, .cand_ctx = gp, .cand_free = given_free};
  /* On success the stream owns gp (cand_free at its release). */
  if (st == HS_OK) st = hs_table_scan_query_hooked(table, &o, &hooks, out, err);
  if (st != HS_OK) given_free(gp);
  hs_table_plan_free(&plan);
  return st;
}
