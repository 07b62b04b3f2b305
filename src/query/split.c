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
  bool oom;
} plan_ctx;

/* keep_file hook: record the surviving file, keep none (nothing is read). */
static bool record_file(void *ctx, size_t plan_index, const char *path, int64_t file_size) {
  plan_ctx *c = ctx;
  if (c->oom) return false;
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 16;
    hs_scan_split *nv = hs_realloc(c->v, cap * sizeof *nv);
    if (nv == NULL) {
      c->oom = true;
      return false;
    }
    c->v = nv;
    c->cap = cap;
  }
  const hs_table_plan_file *pf = &c->plan->files[plan_index];
  hs_scan_split *s = &c->v[c->n];
  if ((s->path = hs_strdup(path)) == NULL) {
    c->oom = true;
    return false;
  }
  s->plan_index = (int64_t)plan_index;
  s->file_size_in_bytes = file_size;
  s->record_count = pf->data_file->record_count;
  s->rows_deleted = pf->n_deleted;
  c->n++;
  return false;
}

void hs_scan_splits_free(hs_scan_split *splits, size_t n) {
  if (splits == NULL) return;
  for (size_t i = 0; i < n; i++) hs_free(splits[i].path);
  hs_free(splits);
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
  plan_ctx c = {.plan = &plan};
  hs_scan_hooks hooks = {.keep_file = record_file, .ctx = &c, .plan = &plan};
  struct ArrowArrayStream s;
  memset(&s, 0, sizeof s);
  st = hs_table_scan_query_hooked(table, &o, &hooks, &s, err);
  if (s.release != NULL) s.release(&s);
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
