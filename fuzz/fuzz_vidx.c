/*
 * fuzz_vidx.c — libFuzzer target for vector index files
 * (src/index/vector/vidx_*.c). The input is opened twice over a memory
 * source: as given, and with every checksum rewritten to match (section
 * CRCs, table CRC, header CRC), so that mutations reach the structural
 * checks behind the checksums instead of stopping at them. Whatever open
 * accepts is validated and searched (unfiltered, with a small and a large
 * filter, k from 1 to past the row count) whatever validate said. Nothing
 * may crash, leak or hang. Seeds: fuzz/corpus/vidx/ (small indexes written
 * by HS_VIDX_SEED_DIR=fuzz/corpus/vidx build/<dir>/test_vidx: 00-08 format
 * version 1, fixed layer 0; 09-11 version 2, compact layer 0); crashes found:
 * fuzz/regress/vidx/.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "index/vector/vidx.h"
#include "index/vector/vidx_internal.h"

static void search_all(const hs_vidx *x) {
  uint32_t dim = hs_vidx_dim(x);
  if (dim > 4096) return;
  float *q = calloc(dim, sizeof *q);
  if (q == NULL) return;
  for (uint32_t j = 0; j < dim; j++) q[j] = (float)(j % 7) - 2.5f;
  hs_vidx_hit hits[64];
  uint32_t n;
  roaring_bitmap_t *few = roaring_bitmap_of(3, 0, 2, 5);
  roaring_bitmap_t *many = roaring_bitmap_create();
  roaring_bitmap_add_range(many, 1, 1000);
  hs_vidx_search_params forced = {.ef_search = 8, .nprobe = 2, .exact_rows = 1};
  const uint32_t ks[] = {1, 10, 64};
  for (int i = 0; i < 3; i++) {
    hs_vidx_search(x, q, ks[i], NULL, NULL, hits, &n, NULL);
    hs_vidx_search(x, q, ks[i], NULL, few, hits, &n, NULL);
    hs_vidx_search(x, q, ks[i], &forced, many, hits, &n, NULL);
    hs_vidx_search(x, q, ks[i], &forced, NULL, hits, &n, NULL);
  }
  roaring_bitmap_free(few);
  roaring_bitmap_free(many);
  free(q);
}

static void open_search(const uint8_t *data, size_t size) {
  hs_source *src;
  if (hs_source_open_memory(data, size, "fuzz", &src, NULL) != HS_OK) return;
  hs_vidx *x;
  if (hs_vidx_open(src, 0, size, &x, NULL) == HS_OK) {
    hs_vidx_validate(x, NULL);
    search_all(x);
    hs_vidx_free(x);
  }
  hs_source_unref(src);
}

/* Rewrite every checksum of a copy to match its bytes (bounds-checked:
 * entries pointing outside the input are left alone). */
static void fix_checksums(uint8_t *d, size_t size) {
  if (size < HS_VIDX_HEADER_LEN) return;
  uint32_t ns = hs_load_u32le(d + HS_VIDX_H_SECTIONS);
  if (ns > HS_VIDX_S_MAX) ns = HS_VIDX_S_MAX;
  if ((size_t)ns * HS_VIDX_SECTION_ENTRY_LEN > size - HS_VIDX_HEADER_LEN) return;
  uint8_t *table = d + HS_VIDX_HEADER_LEN;
  for (uint32_t i = 0; i < ns; i++) {
    uint8_t *e = table + i * HS_VIDX_SECTION_ENTRY_LEN;
    uint64_t off = hs_load_u64le(e + 8), len = hs_load_u64le(e + 16);
    if (off > size || len > size - off || len > UINT32_MAX) continue;
    hs_store_u32le(e + 4, (uint32_t)crc32(0L, d + off, (uInt)len));
  }
  hs_store_u32le(d + HS_VIDX_H_TABLE_CRC,
                 (uint32_t)crc32(0L, table, (uInt)(ns * HS_VIDX_SECTION_ENTRY_LEN)));
  hs_store_u32le(d + HS_VIDX_H_CRC, (uint32_t)crc32(0L, d, HS_VIDX_H_CRC));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  open_search(data, size);
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) return 0;
  memcpy(copy, data, size);
  fix_checksums(copy, size);
  open_search(copy, size);
  free(copy);
  return 0;
}
