/*
 * bench_sidx_points.c — IN lists of many values on one index file
 * (src/index/scalar/README.md, "Point lookups"): the shape of an SQL index
 * join's key batch against one data file of a large table, whose unique
 * int64 ids are ROWS values drawn from [0, ROWS * SPREAD) (issue 4's id
 * column in a file of a table SPREAD files large), indexed as packed
 * SORTED blocks. Each query is KEYS values drawn from the same range (so
 * ~1/SPREAD of them present), sorted as the filter parser hands them over.
 *
 *   bench_sidx_points [ROWS [SPREAD [KEYS [REPS]]]]   (250000 8 1000 200)
 *
 * Prints the median and minimum microseconds per hs_sidx_column_in call
 * and the rows found; HS_SIMD=avx2 / scalar select the narrower kernels.
 */
#include <stdio.h>
#include <stdlib.h>

#include "arrow/arrow.h"
#include "index/index.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = ((const hs_sidx_value *)a)->i, y = ((const hs_sidx_value *)b)->i;
  return x < y ? -1 : x > y;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  uint32_t rows = argc > 1 ? (uint32_t)atol(argv[1]) : 250000;
  uint64_t spread = argc > 2 ? (uint64_t)atol(argv[2]) : 8;
  size_t keys = argc > 3 ? (size_t)atol(argv[3]) : 1000;
  int reps = argc > 4 ? atoi(argv[4]) : 200;
  if (rows == 0 || spread == 0 || keys == 0 || reps <= 0) return 2;
  /* unique ids: a random subset of [0, rows * spread), in random order */
  uint64_t range = (uint64_t)rows * spread;
  uint8_t *taken = calloc(range, 1);
  int64_t *vals = hs_malloc((size_t)rows * 8); /* owned by the array */
  for (uint32_t i = 0; i < rows;) {
    uint64_t v = next() % range;
    if (!taken[v]) taken[v] = 1, vals[i++] = (int64_t)v;
  }
  free(taken);
  struct ArrowArray a;
  struct ArrowSchema sc;
  hs_error err = {0};
  hs_arrow_array_make_primitive(&a, rows, vals, NULL, 0, NULL);
  hs_arrow_schema_init(&sc, "l", "id", 2, 0, NULL);
  hs_sidx_column_options o = {HS_SIDX_LAYOUT_SORTED, 0, false, false};
  hs_buf file;
  hs_buf_init(&file);
  hs_sidx_builder *b;
  hs_sidx_builder_create(&b, &err);
  if (hs_sidx_builder_add_column(b, &sc, 1, &a, 1, &o, &err) != HS_OK ||
      hs_sidx_builder_finish(b, &file, &err) != HS_OK) {
    fprintf(stderr, "build: %s\n", err.message);
    return 1;
  }
  hs_sidx_builder_free(b);
  hs_source *src;
  hs_sidx_file *f;
  hs_sidx_column *c;
  hs_source_open_memory(file.data, file.len, "bench", &src, &err);
  if (hs_sidx_file_open(src, &f, &err) != HS_OK ||
      hs_sidx_column_open(f, "id", &c, &err) != HS_OK) {
    fprintf(stderr, "open: %s\n", err.message);
    return 1;
  }
  hs_sidx_value *vs = calloc(keys, sizeof *vs);
  double *us = malloc(sizeof *us * (size_t)reps);
  uint64_t found = 0;
  for (int r = 0; r < reps; r++) {
    for (size_t i = 0; i < keys; i++) vs[i].kind = HS_SIDX_INT, vs[i].i = (int64_t)(next() % range);
    qsort(vs, keys, sizeof *vs, cmp_i64);
    roaring_bitmap_t *out = NULL;
    int64_t t0 = hs_now_ns();
    if (hs_sidx_column_in(c, vs, keys, &out, &err) != HS_OK) {
      fprintf(stderr, "in: %s\n", err.message);
      return 1;
    }
    us[r] = (double)(hs_now_ns() - t0) / 1e3;
    found += roaring_bitmap_get_cardinality(out);
    roaring_bitmap_free(out);
  }
  qsort(us, (size_t)reps, sizeof *us, cmp_d);
  printf("rows %u spread %llu keys %zu: median %.1f us, min %.1f us, %.1f rows found a query\n",
         rows, (unsigned long long)spread, keys, us[reps / 2], us[0], (double)found / reps);
  hs_sidx_column_free(c);
  hs_sidx_file_free(f);
  hs_source_unref(src);
  hs_buf_free(&file);
  hs_arrow_array_release(&a);
  hs_arrow_schema_release(&sc);
  free(vs);
  free(us);
  return 0;
}
