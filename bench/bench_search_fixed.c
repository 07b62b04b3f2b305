/*
 * bench_search_fixed.c — where one vector search's fixed cost goes, on an
 * existing table (e.g. the one bench/bench_search_fetch.py builds), one
 * thread, no Python: p50 in microseconds of
 *
 *   refresh   hs_table_refresh of the open, unchanged table (the freshness
 *             check every query pays);
 *   search0   hs_table_vector_search with no columns (plan, index, graph);
 *   ids       the same returning "id";
 *   all       the same returning every column (vectors included);
 *   all+ref   refresh then all: what one Table.search costs in C;
 *   vidx      hs_vidx_search alone on the table's own index of the first
 *             data file (what the graph walk costs without the table).
 *
 *   bench_search_fixed TABLE_DIR [column=emb] [queries=2000] [dim=64] [mode]
 *
 * (mode: one of the names above, to time only it, e.g. under perf).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arrow/arrow.h"
#include "common/common.h"
#include "hyperstream.h"
#include "query/vector_search.h"
#include "table/schema_map.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int dcmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static uint64_t rnd(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

enum { MODE_REFRESH, MODE_NONE, MODE_IDS, MODE_ALL, MODE_ALL_REFRESH, MODE_VIDX, N_MODES };
static const char *const MODE_NAME[] = {"refresh", "search0", "ids", "all", "all+refresh", "vidx"};

/* The table's prepared index of its first data file (NULL: none). */
static const hs_vidx *first_index(hs_table *t, const char *column, size_t dim, hs_vs_prep **prep) {
  hs_error err = {0};
  struct ArrowSchema s;
  if (hs_table_read_schema_arrow(t, -1, &s, &err) != HS_OK) return NULL;
  int32_t fid = -1;
  for (int64_t i = 0; i < s.n_children; i++)
    if (strcmp(s.children[i]->name, column) == 0) fid = hs_arrow_field_id(s.children[i]);
  hs_arrow_schema_release(&s);
  if (hs_vs_prep_acquire(t, -1, column, fid, HS_METRIC_L2, dim, false, false, NULL, 0, prep,
                         &err) != HS_OK)
    return NULL;
  const hs_vs_indexed *ix = hs_vs_prep_indexed(*prep);
  return ix->n > 0 ? ix->vx[0] : NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s TABLE_DIR [column=emb] [queries=2000] [dim=64]\n", argv[0]);
    return 2;
  }
  const char *column = argc > 2 ? argv[2] : "emb";
  size_t nq = argc > 3 ? strtoul(argv[3], NULL, 10) : 2000;
  size_t dim = argc > 4 ? strtoul(argv[4], NULL, 10) : 64;
  hs_table *t = NULL;
  hs_error err = {0};
  if (hs_table_open(argv[1], &t, &err) != HS_OK) {
    fprintf(stderr, "open: %s\n", err.message);
    return 1;
  }
  float *q = hs_malloc(nq * dim * sizeof *q);
  double *ts = hs_malloc(nq * sizeof *ts);
  if (q == NULL || ts == NULL) return 1;
  uint64_t seed = 1;
  for (size_t i = 0; i < nq * dim; i++) q[i] = (float)((double)(rnd(&seed) >> 11) / 9e15 - 0.5);
  const char *ids[] = {"id"};
  const char *only = argc > 5 ? argv[5] : NULL;
  for (int mode = 0; mode < N_MODES; mode++) {
    if (only != NULL && strcmp(only, MODE_NAME[mode]) != 0) continue;
    hs_vector_search_options o;
    hs_vector_search_options_init(&o);
    o.column = column;
    o.k = 10;
    if (mode == MODE_NONE) o.n_columns = 0, o.columns = ids;
    if (mode == MODE_IDS) o.n_columns = 1, o.columns = ids;
    hs_vs_prep *prep = NULL;
    const hs_vidx *vx = mode == MODE_VIDX ? first_index(t, column, dim, &prep) : NULL;
    if (mode == MODE_VIDX && vx == NULL) {
      fprintf(stderr, "vidx: the table has no vector index on '%s'\n", column);
      return 1;
    }
    hs_vidx_search_params sp;
    memset(&sp, 0, sizeof sp);
    hs_vidx_hit hits[10];
    for (size_t i = 0; i < nq + 20; i++) {
      double a = now_us();
      hs_status st = HS_OK;
      if (mode == MODE_VIDX) {
        uint32_t nh = 0;
        st = hs_vidx_search(vx, q + (i % nq) * dim, 10, &sp, NULL, hits, &nh, &err);
        if (st == HS_OK && i >= 20) ts[i - 20] = now_us() - a;
        if (st == HS_OK) continue;
      }
      if (mode == MODE_REFRESH || mode == MODE_ALL_REFRESH) st = hs_table_refresh(t, &err);
      if (st == HS_OK && mode != MODE_REFRESH && mode != MODE_VIDX) {
        struct ArrowArrayStream s;
        st = hs_table_vector_search(t, &o, q + (i % nq) * dim, dim, &s, NULL, &err);
        if (st == HS_OK) s.release(&s);
      }
      if (st != HS_OK) {
        fprintf(stderr, "%s: %s\n", MODE_NAME[mode], err.message);
        return 1;
      }
      if (i >= 20) ts[i - 20] = now_us() - a;
    }
    hs_vs_prep_release(prep);
    qsort(ts, nq, sizeof *ts, dcmp);
    printf("%-12s p50 %8.2f us  p10 %8.2f us\n", MODE_NAME[mode], ts[nq / 2], ts[nq / 10]);
  }
  hs_free(q);
  hs_free(ts);
  hs_table_free(t);
  return 0;
}
