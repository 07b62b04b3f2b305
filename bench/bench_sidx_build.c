/*
 * bench_sidx_build.c — where the time of building a data file's scalar
 * indexes goes: for each Parquet file given, read its columns (our reader,
 * as the table's index build does), then build one inverted index per
 * column (layout AUTO) and the Puffin file; repeated REPS times, medians.
 *
 *   bench_sidx_build [--reps N] [--column NAME] FILE.parquet...
 *
 * Prints per column: build ms summed over the files (median over reps),
 * then the read ms and the Puffin assembly ms.  Issue 4's table shape:
 * write it with bench/bench_index_size.py's batches() and pass the files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow.h"
#include "index/index.h"
#include "hyperstream.h"

#define MAX_COLS 64
#define MAX_REPS 64

static int dcmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, dcmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what, const hs_error *err) {
  fprintf(stderr, "%s: %s\n", what, err->message);
  exit(1);
}

int main(int argc, char **argv) {
  int reps = 5, first = 1;
  const char *only = NULL; /* --column: build just this one */
  while (first + 1 < argc && argv[first][0] == '-') {
    if (strcmp(argv[first], "--reps") == 0)
      reps = atoi(argv[first + 1]);
    else if (strcmp(argv[first], "--column") == 0)
      only = argv[first + 1];
    else
      break;
    first += 2;
  }
  if (reps < 1 || reps > MAX_REPS || first >= argc) {
    fprintf(stderr, "usage: bench_sidx_build [--reps N] [--column NAME] FILE.parquet...\n");
    return 2;
  }
  static double col_ms[MAX_COLS][MAX_REPS], read_ms[MAX_REPS], fin_ms[MAX_REPS];
  char *names[MAX_COLS] = {0};
  int64_t n_cols = 0;
  hs_error err = {0};
  for (int r = 0; r < reps; r++) {
    for (int f = first; f < argc; f++) {
      int64_t t0 = hs_now_ns();
      hs_parquet_reader *rd;
      if (hs_parquet_reader_open(argv[f], &rd, &err) != HS_OK) die(argv[f], &err);
      hs_parquet_read_options ro;
      hs_parquet_read_options_init(&ro);
      struct ArrowArrayStream s;
      struct ArrowSchema sc;
      if (hs_parquet_reader_stream(rd, &ro, &s, &err) != HS_OK) die(argv[f], &err);
      if (s.get_schema(&s, &sc) != 0) die("schema", &err);
      struct ArrowArray *bat = NULL;
      size_t nb = 0;
      for (;;) {
        struct ArrowArray a;
        if (s.get_next(&s, &a) != 0) {
          fprintf(stderr, "%s: %s\n", argv[f], s.get_last_error(&s));
          return 1;
        }
        if (a.release == NULL) break;
        bat = realloc(bat, (nb + 1) * sizeof *bat);
        bat[nb++] = a;
      }
      read_ms[r] += (double)(hs_now_ns() - t0) / 1e6;
      if (sc.n_children > MAX_COLS) return 2;
      n_cols = sc.n_children;
      struct ArrowArray *chunks = malloc((nb ? nb : 1) * sizeof *chunks);
      hs_sidx_builder *b;
      if (hs_sidx_builder_create(&b, &err) != HS_OK) die("builder", &err);
      for (int64_t c = 0; c < sc.n_children; c++) {
        if (names[c] == NULL) names[c] = strdup(sc.children[c]->name);
        if (only != NULL && strcmp(only, names[c]) != 0) continue;
        for (size_t i = 0; i < nb; i++) chunks[i] = *bat[i].children[c];
        t0 = hs_now_ns();
        if (hs_sidx_builder_add_column(b, sc.children[c], -1, chunks, nb, NULL, &err) != HS_OK)
          die(names[c], &err);
        col_ms[c][r] += (double)(hs_now_ns() - t0) / 1e6;
      }
      hs_buf out;
      hs_buf_init(&out);
      t0 = hs_now_ns();
      if (hs_sidx_builder_finish(b, &out, &err) != HS_OK) die("finish", &err);
      fin_ms[r] += (double)(hs_now_ns() - t0) / 1e6;
      hs_buf_free(&out);
      hs_sidx_builder_free(b);
      free(chunks);
      for (size_t i = 0; i < nb; i++) bat[i].release(&bat[i]);
      free(bat);
      sc.release(&sc);
      s.release(&s);
      hs_parquet_reader_free(rd);
    }
  }
  double total = 0;
  printf("%d files, %d reps (median ms, summed over files):\n", argc - first, reps);
  for (int64_t c = 0; c < n_cols; c++) {
    double m = median(col_ms[c], reps);
    total += m;
    printf("  build %-12s %8.1f\n", names[c], m);
    free(names[c]);
  }
  printf("  build all      %8.1f\n  read (parquet) %8.1f\n  puffin finish  %8.1f\n", total,
         median(read_ms, reps), median(fin_ms, reps));
  return 0;
}
