/*
 * fuzz_footer.c — libFuzzer target for the Parquet metadata parsers: the
 * same bytes go to the FileMetaData, PageHeader, ColumnIndex and
 * OffsetIndex parsers, to hs_pq_footer_read over a memory source (as a
 * whole file, after wrapping them as a footer between PAR1 magics), and,
 * when a footer parses, to its serializer and a re-parse, which must
 * succeed. Seeds: fuzz/corpus/footer/; crashes found: fuzz/regress/footer/
 * (replayed by tests/c/test_metadata.c).
 */
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "parquet/metadata.h"

static void fuzz_footer_read(const uint8_t *buf, size_t len) {
  hs_source *src;
  if (hs_source_open_memory(buf, len, "fuzz", &src, NULL) != HS_OK) return;
  hs_arena a;
  hs_arena_init(&a);
  hs_pq_file_metadata md;
  hs_pq_footer_read(src, &a, &md, NULL);
  hs_arena_reset(&a);
  hs_source_unref(src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hs_arena a;
  hs_arena_init(&a);
  hs_pq_file_metadata md;
  if (hs_pq_file_metadata_parse(data, size, &a, &md, NULL) == HS_OK) {
    hs_buf w;
    hs_buf_init(&w);
    if (hs_pq_file_metadata_write(&md, &w, NULL) == HS_OK) {
      hs_arena b;
      hs_arena_init(&b);
      hs_pq_file_metadata back;
      if (hs_pq_file_metadata_parse(w.data, w.len, &b, &back, NULL) != HS_OK) abort();
      hs_arena_reset(&b);
    }
    hs_buf_free(&w);
  }
  hs_pq_page_header ph;
  size_t used;
  if (hs_pq_page_header_parse(data, size, &a, &ph, &used, NULL) == HS_OK && used > size) abort();
  hs_pq_column_index ci;
  hs_pq_column_index_parse(data, size, &a, &ci, NULL);
  hs_pq_offset_index oi;
  hs_pq_offset_index_parse(data, size, &a, &oi, NULL);
  hs_arena_reset(&a);

  /* As a whole file, and wrapped as a footer. */
  fuzz_footer_read(data, size);
  uint8_t *file = hs_malloc(size + 12);
  if (file == NULL) return 0;
  memcpy(file, "PAR1", 4);
  if (size) memcpy(file + 4, data, size);
  hs_store_u32le(file + 4 + size, (uint32_t)size);
  memcpy(file + 8 + size, "PAR1", 4);
  fuzz_footer_read(file, size + 12);
  hs_free(file);
  return 0;
}
