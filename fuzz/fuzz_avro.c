/*
 * fuzz_avro.c — libFuzzer target for the Avro container reader and codec.
 *
 * Opens the input as an object container file and reads every datum, then
 * re-encodes each datum with the writer schema and checks that it decodes
 * to the same bytes again (the encoder and decoder must agree on anything
 * the decoder accepts). The writer schema is re-serialized and re-parsed as
 * well. Any crash, leak, hang or sanitizer report is a bug; errors are fine.
 * Crash inputs are kept in fuzz/regress/avro/.
 */
#include <stdlib.h>
#include <string.h>

#include "avro/avro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hs_avro_reader *r = NULL;
  if (hs_avro_reader_open(data, size, NULL, &r, NULL) != HS_OK) return 0;

  /* The writer schema survives serialization. */
  char *json = NULL;
  if (hs_avro_schema_to_json(hs_avro_reader_writer_schema(r), &json, NULL) == HS_OK) {
    hs_avro_schema *again = NULL;
    if (hs_avro_schema_parse(json, strlen(json), &again, NULL) != HS_OK) abort();
    hs_avro_schema_free(again);
  }
  hs_free(json);

  const hs_avro_node *root = hs_avro_reader_datum_schema(r);
  hs_arena arena;
  hs_arena_init(&arena);
  hs_buf enc;
  hs_buf_init(&enc);
  hs_buf enc2;
  hs_buf_init(&enc2);
  bool has = true;
  while (has) {
    hs_avro_value v, back;
    if (hs_avro_reader_next(r, &arena, &v, &has, NULL) != HS_OK || !has) break;
    enc.len = 0;
    if (hs_avro_encode(root, &v, &enc, NULL) != HS_OK) abort();
    size_t pos = 0;
    if (hs_avro_decode(root, NULL, enc.data, enc.len, &pos, &arena, &back, NULL) != HS_OK) abort();
    if (pos != enc.len) abort();
    enc2.len = 0;
    if (hs_avro_encode(root, &back, &enc2, NULL) != HS_OK) abort();
    if (enc2.len != enc.len || (enc.len && memcmp(enc.data, enc2.data, enc.len) != 0)) abort();
    json_t *j = NULL;
    (void)hs_avro_value_to_json(root, &v, &j, NULL); /* may fail: strings need not be UTF-8 */
    json_decref(j);
    hs_arena_reset(&arena);
  }
  hs_arena_reset(&arena);
  hs_buf_free(&enc);
  hs_buf_free(&enc2);
  hs_avro_reader_free(r);
  return 0;
}
