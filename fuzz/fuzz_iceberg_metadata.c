/*
 * fuzz_iceberg_metadata.c — libFuzzer target for the Iceberg table metadata
 * JSON codec: parse arbitrary bytes; whatever parses must serialize, parse
 * again and serialize to the same text (the writer is a fixed point), and
 * the current schema must map to Arrow or fail cleanly. Inputs that start
 * with the gzip magic (1f 8b) are inflated first, as gzip-compressed
 * metadata files ("vN.gz.metadata.json") are, under a small output cap.
 */
#include <stdlib.h>
#include <string.h>

#include "iceberg/iceberg.h"
#include "io/gzip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse_one(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (hs_gzip_is_gzip(data, size)) {
    hs_buf text;
    hs_buf_init(&text);
    hs_error err = {0};
    if (hs_gzip_inflate(data, size, (size_t)4 << 20, "fuzz", &text, &err) == HS_OK) {
      parse_one(text.data, text.len);
    } else if (text.len != 0) {
      abort(); /* a failed inflate leaves the output as it was */
    }
    hs_buf_free(&text);
    return 0;
  }
  parse_one(data, size);
  return 0;
}

static void parse_one(const uint8_t *data, size_t size) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_iceberg_metadata m;
  hs_error err = {0};
  if (hs_iceberg_metadata_parse((const char *)data, size, &arena, &m, &err) == HS_OK) {
    hs_buf a, b;
    hs_buf_init(&a);
    hs_buf_init(&b);
    if (hs_iceberg_metadata_write(&m, &a, &err) == HS_OK) {
      hs_iceberg_metadata m2;
      hs_error e2 = {0};
      if (hs_iceberg_metadata_parse((const char *)a.data, a.len, &arena, &m2, &e2) != HS_OK)
        abort(); /* we wrote something we cannot read */
      if (hs_iceberg_metadata_write(&m2, &b, &e2) != HS_OK || a.len != b.len ||
          memcmp(a.data, b.data, a.len) != 0)
        abort(); /* not a fixed point */
    }
    const hs_iceberg_schema *s = hs_iceberg_metadata_schema(&m, m.current_schema_id);
    struct ArrowSchema as;
    hs_error e3 = {0};
    if (s != NULL && hs_iceberg_schema_to_arrow(s, &m, &as, &e3) == HS_OK)
      hs_arrow_schema_release(&as);
    hs_buf_free(&a);
    hs_buf_free(&b);
  }
  hs_arena_reset(&arena);
}
