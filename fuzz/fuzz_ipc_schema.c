/*
 * fuzz_ipc_schema.c — libFuzzer target for the Arrow IPC Schema decoder
 * (src/arrow/ipc_schema.c) and base64 (src/common/base64.c).
 *
 * The bytes go to hs_arrow_ipc_schema_decode; whatever decodes must encode,
 * and the encoding must decode again to a schema that encodes to the very
 * same bytes (our output is a fixed point). The same bytes, read as text,
 * go to the strict base64 decoder; what it accepts must re-encode to the
 * input exactly (one canonical encoding per byte string).
 * Seeds: fuzz/corpus/ipc_schema/ (pyarrow's schema.serialize() output);
 * crashes found: fuzz/regress/ipc_schema/ (replayed by
 * tests/c/test_ipc_schema.c).
 */
#include <stdlib.h>
#include <string.h>

#include "arrow/ipc.h"

static void fuzz_base64(const uint8_t *data, size_t size) {
  hs_buf raw, text;
  hs_buf_init(&raw);
  hs_buf_init(&text);
  if (hs_base64_decode((const char *)data, size, &raw, NULL) == HS_OK) {
    if (!hs_base64_encode(raw.data, raw.len, &text)) abort();
    if (text.len != size || (size > 0 && memcmp(text.data, data, size) != 0)) abort();
  }
  hs_buf_free(&raw);
  hs_buf_free(&text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_base64(data, size);
  struct ArrowSchema s, back;
  if (hs_arrow_ipc_schema_decode(data, size, &s, NULL) != HS_OK) {
    if (s.release != NULL) abort(); /* failure leaves *out released */
    return 0;
  }
  hs_buf a, b;
  hs_buf_init(&a);
  hs_buf_init(&b);
  if (hs_arrow_ipc_schema_encode(&s, &a, NULL) != HS_OK) abort();
  if (hs_arrow_ipc_schema_decode(a.data, a.len, &back, NULL) != HS_OK) abort();
  if (hs_arrow_ipc_schema_encode(&back, &b, NULL) != HS_OK) abort();
  if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) abort();
  hs_arrow_schema_release(&back);
  hs_arrow_schema_release(&s);
  hs_buf_free(&a);
  hs_buf_free(&b);
  return 0;
}
