/*
 * fuzz_scalar_index.c — libFuzzer target for scalar inverted index files
 * (src/index/scalar/): the input is opened as a Puffin index file over a
 * memory source, validated, and every indexed column is opened and asked
 * a fixed set of queries (equals, in, open and closed ranges of each value
 * kind, is [not] null, prefixes), whatever validate said. The input's
 * bytes also go, as one bitmap, to the portable-bitmap checker; a bitmap
 * it accepts must deserialize to the same cardinality. Nothing may crash,
 * leak or hang. In a file that validates, no answer of any column (exact or
 * lossy: format-2 blobs whose SORTED blocks hold only min/max and bitmap)
 * may hold a NULL row or a row past row_count (abort otherwise). Seeds:
 * fuzz/corpus/scalar_index/ (index files written by the builder, seed_lossy_*
 * the lossy ones); crashes found: fuzz/regress/scalar_index/.
 */
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "index/scalar/sidx_internal.h"

/* With `valid`: an answer must avoid NULL rows and stay below row_count. */
static void answer_check(hs_sidx_column *c, roaring_bitmap_t *r, bool valid) {
  if (valid) {
    roaring_bitmap_t *nulls = NULL;
    if (hs_sidx_column_is_null(c, &nulls, NULL) != HS_OK) abort();
    if (roaring_bitmap_intersect(r, nulls)) abort();
    if (!roaring_bitmap_is_empty(r) && roaring_bitmap_maximum(r) >= hs_sidx_column_row_count(c))
      abort();
    roaring_bitmap_free(nulls);
  }
  roaring_bitmap_free(r);
}

static void query_all(hs_sidx_column *c, bool valid) {
  (void)hs_sidx_column_exact(c);
  static const uint8_t bytes[] = {'a', 'b', 0xFF, 0};
  hs_sidx_value v[6];
  memset(v, 0, sizeof v);
  v[0].kind = HS_SIDX_INT, v[0].i = 3;
  v[1].kind = HS_SIDX_UINT, v[1].u = UINT64_MAX;
  v[2].kind = HS_SIDX_DOUBLE, v[2].d = 2.5;
  v[3].kind = HS_SIDX_BYTES, v[3].bytes = bytes, v[3].n_bytes = 2;
  v[4].kind = HS_SIDX_BOOL, v[4].b = true;
  v[5].kind = HS_SIDX_DECIMAL, v[5].dec_lo = 100;
  roaring_bitmap_t *r;
  for (int i = 0; i < 6; i++) {
    if (hs_sidx_column_equals(c, &v[i], &r, NULL) == HS_OK) answer_check(c, r, valid);
    if (hs_sidx_column_range(c, &v[i], true, NULL, false, &r, NULL) == HS_OK)
      answer_check(c, r, valid);
    if (hs_sidx_column_range(c, NULL, false, &v[i], false, &r, NULL) == HS_OK)
      answer_check(c, r, valid);
  }
  if (hs_sidx_column_in(c, v, 6, &r, NULL) == HS_OK) answer_check(c, r, valid);
  if (hs_sidx_column_range(c, NULL, false, NULL, false, &r, NULL) == HS_OK)
    answer_check(c, r, valid);
  if (hs_sidx_column_is_null(c, &r, NULL) == HS_OK) roaring_bitmap_free(r);
  if (hs_sidx_column_is_not_null(c, &r, NULL) == HS_OK) roaring_bitmap_free(r);
  if (hs_sidx_column_prefix(c, bytes, 1, &r, NULL) == HS_OK) answer_check(c, r, valid);
  if (hs_sidx_column_prefix(c, bytes + 2, 1, &r, NULL) == HS_OK) answer_check(c, r, valid);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  roaring_bitmap_t *bm;
  if (hs_sidx_roaring_load(data, size, UINT32_MAX, &bm, NULL) == HS_OK) roaring_bitmap_free(bm);

  hs_source *src;
  if (hs_source_open_memory(data, size, "fuzz", &src, NULL) != HS_OK) return 0;
  hs_sidx_file *f;
  if (hs_sidx_file_open(src, &f, NULL) == HS_OK) {
    bool valid = hs_sidx_file_validate(f, NULL) == HS_OK;
    for (size_t i = 0; i < hs_sidx_file_column_count(f); i++) {
      hs_sidx_column *c;
      if (hs_sidx_column_open(f, hs_sidx_file_column_name(f, i), &c, NULL) != HS_OK) continue;
      query_all(c, valid);
      hs_sidx_column_free(c);
    }
    hs_sidx_file_free(f);
  }
  hs_source_unref(src);
  return 0;
}
