/*
 * bench_scalar_index.c — measures the two layouts of the scalar inverted
 * index (src/index/scalar/README.md) on 1M-row int64 columns of 1K, 64K
 * and 1M distinct values (uniform, random order): build time, index size,
 * and the time of range queries selecting 0.1%, 1%, 10% and 50% of the
 * rows and of an equality query, all from an in-memory index file (so the
 * numbers are CPU cost: decoding and unioning bitmaps, not I/O).
 *
 *   bench_scalar_index [ROWS]     (default 1000000)
 *
 * Prints one line per (distinct, layout, block size); SORTED is the
 * unpacked block layout, PACKED the default packed one.
 */
#include <stdio.h>
#include <stdlib.h>

#include "arrow/arrow.h"
#include "index/index.h"

static double ms_since(int64_t t0) {
  return (double)(hs_now_ns() - t0) / 1e6;
}

static void run(uint32_t rows, uint32_t distinct, hs_sidx_layout layout, uint32_t block, bool plain,
                bool lossy) {
  uint64_t s = 12345;
  int64_t *vals = hs_malloc((size_t)rows * 8);
  for (uint32_t i = 0; i < rows; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    vals[i] = (int64_t)((s >> 33) % distinct);
  }
  struct ArrowArray a;
  struct ArrowSchema sc;
  hs_arrow_array_make_primitive(&a, rows, vals, NULL, 0, NULL);
  hs_arrow_schema_init(&sc, "l", "x", 2, 0, NULL);
  hs_sidx_column_options o = {layout, block, plain, lossy};
  hs_buf file;
  hs_buf_init(&file);
  hs_sidx_builder *b;
  hs_error err = {0};
  int64_t t0 = hs_now_ns();
  hs_sidx_builder_create(&b, &err);
  if (hs_sidx_builder_add_column(b, &sc, 1, &a, 1, &o, &err) != HS_OK ||
      hs_sidx_builder_finish(b, &file, &err) != HS_OK) {
    fprintf(stderr, "build: %s\n", err.message);
    exit(1);
  }
  double build_ms = ms_since(t0);
  hs_sidx_builder_free(b);

  hs_source *src;
  hs_sidx_file *f;
  hs_sidx_column *c;
  hs_source_open_memory(file.data, file.len, "bench", &src, &err);
  t0 = hs_now_ns();
  hs_sidx_file_open(src, &f, &err);
  if (hs_sidx_column_open(f, "x", &c, &err) != HS_OK) {
    fprintf(stderr, "open: %s\n", err.message);
    exit(1);
  }
  double open_ms = ms_since(t0);
  static const double sel[] = {0.001, 0.01, 0.1, 0.5};
  double q_ms[5];
  for (int k = 0; k < 5; k++) {
    hs_sidx_value lo = {.kind = HS_SIDX_INT, .i = distinct / 4};
    hs_sidx_value hi = {.kind = HS_SIDX_INT,
                        .i = k < 4 ? distinct / 4 + (int64_t)(sel[k] * distinct) : distinct / 4};
    int reps = 5;
    t0 = hs_now_ns();
    uint64_t card = 0;
    for (int r = 0; r < reps; r++) {
      roaring_bitmap_t *out;
      if (hs_sidx_column_range(c, &lo, true, &hi, k == 4, &out, &err) != HS_OK) exit(1);
      card = roaring_bitmap_get_cardinality(out);
      roaring_bitmap_free(out);
    }
    (void)card;
    q_ms[k] = ms_since(t0) / reps;
  }
  printf(
      "distinct %8u  %-6s block %5u  build %7.1f ms  size %6.2f MB (%5.2f B/row)  open %6.2f ms"
      "  range 0.1%% %7.2f  1%% %7.2f  10%% %7.2f  50%% %7.2f ms  eq %6.3f ms\n",
      distinct,
      layout == HS_SIDX_LAYOUT_DICT ? "DICT"
      : lossy                       ? "LOSSY"
      : plain                       ? "SORTED"
                                    : "PACKED",
      block, build_ms, (double)file.len / 1e6, (double)file.len / rows, open_ms, q_ms[0], q_ms[1],
      q_ms[2], q_ms[3], q_ms[4]);
  fflush(stdout);
  hs_sidx_column_free(c);
  hs_sidx_file_free(f);
  hs_source_unref(src);
  hs_buf_free(&file);
  hs_arrow_array_release(&a);
  hs_arrow_schema_release(&sc);
}

int main(int argc, char **argv) {
  uint32_t rows = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000u;
  static const uint32_t distincts[] = {1000, 65536, 1000000};
  for (int d = 0; d < 3; d++) {
    run(rows, distincts[d], HS_SIDX_LAYOUT_DICT, 0, false, false);
    run(rows, distincts[d], HS_SIDX_LAYOUT_SORTED, 4096, true, false); /* unpacked blocks */
    run(rows, distincts[d], HS_SIDX_LAYOUT_SORTED, 1024, false, false);
    run(rows, distincts[d], HS_SIDX_LAYOUT_SORTED, 4096, false, false);
    run(rows, distincts[d], HS_SIDX_LAYOUT_SORTED, 16384, false, false);
    run(rows, distincts[d], HS_SIDX_LAYOUT_SORTED, 512, false, true); /* lossy blocks */
    run(rows, distincts[d], HS_SIDX_LAYOUT_SORTED, 1024, false, true);
  }
  return 0;
}
