/*
 * fuzz_quant.c — libFuzzer target for serialized quantizers
 * (src/index/vector/quant.c, hs_quant_parse). Each input is parsed twice:
 * as given (exercising the length, header and checksum checks) and with
 * its last four bytes replaced by the right checksum (so the fuzzer gets
 * past the checksum to the field checks). Whatever parses must serialize
 * back to exactly the input bytes (the format is canonical), encode and
 * decode a vector, build a query table and score codes of every byte
 * value without crashing, leaking or reading out of bounds. Seeds:
 * fuzz/corpus/quant/ (SQ8 and PQ quantizers written by the trainer);
 * crashes found: fuzz/regress/quant/.
 */
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "index/vector/quant.h"

static void exercise(const uint8_t *data, size_t size) {
  hs_quant *q = NULL;
  if (hs_quant_parse(data, size, &q, NULL) != HS_OK) return;
  hs_buf b;
  hs_buf_init(&b);
  if (hs_quant_serialize(q, &b, NULL) != HS_OK || b.len != size || memcmp(b.data, data, size))
    abort(); /* parse accepted bytes that it would not write */
  hs_buf_free(&b);
  size_t dim = hs_quant_dim(q), cs = hs_quant_code_size(q);
  float *v = malloc(dim * sizeof(float)), *out = malloc(dim * sizeof(float));
  uint8_t *codes = malloc(cs * 3);
  if (v == NULL || out == NULL || codes == NULL) abort();
  for (size_t d = 0; d < dim; d++) v[d] = (float)(d % 7) - 3.0f;
  hs_quant_encode(q, v, 1, codes);
  memset(codes + cs, 0xFF, cs);
  for (size_t i = 0; i < cs; i++) codes[2 * cs + i] = (uint8_t)(i * 37);
  hs_quant_decode(q, codes + cs, out);
  hs_quant_query *qq = NULL;
  if (hs_quant_query_make(q, v, &qq, NULL) == HS_OK) {
    float dists[3];
    hs_quant_distance_batch(qq, codes, 3, dists);
    (void)hs_quant_distance(qq, codes + cs);
    hs_quant_query_free(qq);
  }
  free(v);
  free(out);
  free(codes);
  hs_quant_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  exercise(data, size);
  if (size >= 4 && size <= ((size_t)1 << 20)) {
    uint8_t *fixed = malloc(size);
    if (fixed == NULL) return 0;
    memcpy(fixed, data, size);
    hs_store_u32le(fixed + size - 4, hs_murmur3_x86_32(fixed, size - 4, 0x48535131u));
    exercise(fixed, size);
    free(fixed);
  }
  return 0;
}
