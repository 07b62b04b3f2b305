/*
 * fuzz_dv.c — libFuzzer target: Iceberg delete files as the table layer
 * reads them (src/table/deletes.h). An input starting with "PAR1" is a
 * position-delete Parquet file, streamed through hs_table_posdel_read_reader
 * (every callback's positions must be >= 0); an input starting with 0xFF
 * is the vector alone (64-bit portable Roaring), framed here with a valid
 * length, magic and CRC so that mutations reach the bitmap checks instead
 * of the CRC (seeds *.vec); any other input is one deletion-vector-v1 blob
 * for hs_table_dv_parse, whose
 * bitmap, when accepted, must survive serialize + parse unchanged. Errors
 * are expected but must say what; any crash, leak, hang or sanitizer report
 * is a bug.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "table/deletes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static hs_status check_run(void *ctx, const char *data_file, const int64_t *pos, size_t n,
                           hs_error *err) {
  size_t *rows = ctx;
  if (n == 0 || data_file == NULL) __builtin_trap();
  for (size_t i = 0; i < n; i++)
    if (pos[i] < 0) __builtin_trap(); /* the reader refuses negative positions */
  *rows += n;
  return HS_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hs_error err = {0};
  if (size >= 4 && memcmp(data, "PAR1", 4) == 0) {
    hs_parquet_reader *r = NULL;
    if (hs_parquet_reader_open_buffer(data, size, "fuzz.parquet", &r, &err) != HS_OK) return 0;
    size_t rows = 0;
    if (hs_table_posdel_read_reader(r, "fuzz.parquet", check_run, &rows, &err) == HS_OK) {
      if ((int64_t)rows != hs_parquet_reader_num_rows(r)) __builtin_trap();
    } else if (err.message[0] == '\0') {
      __builtin_trap(); /* an error must say what */
    }
    hs_parquet_reader_free(r);
    return 0;
  }
  uint8_t *framed = NULL;
  if (size >= 1 && data[0] == 0xFF) {
    size_t n = size - 1;
    framed = malloc(n + 12);
    if (framed == NULL) return 0;
    uint32_t L = (uint32_t)n + 4;
    framed[0] = (uint8_t)(L >> 24), framed[1] = (uint8_t)(L >> 16);
    framed[2] = (uint8_t)(L >> 8), framed[3] = (uint8_t)L;
    memcpy(framed + 4, "\xD1\xD3\x39\x64", 4);
    memcpy(framed + 8, data + 1, n);
    uint32_t c = (uint32_t)crc32(0L, framed + 4, (uInt)L);
    framed[8 + n] = (uint8_t)(c >> 24), framed[9 + n] = (uint8_t)(c >> 16);
    framed[10 + n] = (uint8_t)(c >> 8), framed[11 + n] = (uint8_t)c;
    data = framed;
    size = n + 12;
  }
  roaring_bitmap_t *bm = NULL;
  hs_status st = hs_table_dv_parse(data, size, &bm, &err);
  free(framed);
  if (st != HS_OK) {
    if (err.message[0] == '\0' || bm != NULL) __builtin_trap();
    return 0;
  }
  /* An accepted bitmap is a valid one: every operation works on it. */
  uint64_t card = roaring_bitmap_get_cardinality(bm);
  uint64_t seen = 0;
  roaring_uint32_iterator_t it;
  roaring_init_iterator(bm, &it);
  uint32_t prev = 0;
  while (it.has_value) {
    if (seen > 0 && it.current_value <= prev) __builtin_trap();
    if (!roaring_bitmap_contains(bm, it.current_value)) __builtin_trap();
    prev = it.current_value;
    seen++;
    roaring_advance_uint32_iterator(&it);
  }
  if (seen != card) __builtin_trap();
  hs_buf b;
  hs_buf_init(&b);
  roaring_bitmap_t *again = NULL;
  if (hs_table_dv_serialize(bm, &b, &err) != HS_OK ||
      hs_table_dv_parse(b.data, b.len, &again, &err) != HS_OK || !roaring_bitmap_equals(bm, again))
    __builtin_trap();
  roaring_bitmap_free(again);
  hs_buf_free(&b);
  roaring_bitmap_free(bm);
  return 0;
}
