/*
 * fuzz_decoders.c — libFuzzer target for every Parquet value/level decoder
 * and every decompressor.
 *
 * Input layout: byte 0 picks the decoder, byte 1 a parameter (bit width,
 * value width or codec), bytes 2..3 the value count n (little-endian, so
 * at most 65535), the rest is the encoded data. Output buffers are sized
 * exactly so ASan flags any overrun; a successful decode is re-encoded
 * where an encoder exists and must decode back to the same values.
 */
#include <string.h>

#include "parquet/compress.h"
#include "parquet/encoding.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
  F_RLE_U32,
  F_RLE_LEVELS,
  F_LEGACY_LEVELS,
  F_DICT,
  F_BOOL,
  F_PLAIN_BA,
  F_DELTA_I32,
  F_DELTA_I64,
  F_DELTA_LENGTH,
  F_DELTA_BA,
  F_DELTA_BA_FIXED,
  F_BSS,
  F_DECOMPRESS,
  F_COUNT
};

static void *must(void *p) {
  if (!p) __builtin_trap();
  return p;
}

/* Re-encode u32 values and check they decode back unchanged. */
static void check_rle(const uint32_t *v, size_t n, int bw) {
  hs_buf b;
  hs_buf_init(&b);
  if (hs_rle_encode_u32(v, n, bw, &b, NULL) != HS_OK) __builtin_trap();
  uint32_t *o = must(hs_malloc(n * sizeof *o + 1));
  if (hs_rle_decode_u32(b.data, b.len, bw, o, n, NULL, NULL) != HS_OK) __builtin_trap();
  if (n && memcmp(o, v, n * sizeof *o) != 0) __builtin_trap();
  hs_free(o);
  hs_buf_free(&b);
}

static void byte_arrays(int which, const uint8_t *p, size_t len, size_t n) {
  int32_t *off = must(hs_malloc((n + 1) * sizeof *off));
  hs_buf d;
  hs_buf_init(&d);
  off[0] = 0;
  size_t used;
  hs_status st;
  switch (which) {
  case F_PLAIN_BA: st = hs_plain_decode_byte_array(p, len, n, off, &d, &used, NULL); break;
  case F_DELTA_LENGTH: st = hs_delta_length_decode(p, len, n, off, &d, &used, NULL); break;
  default: st = hs_delta_byte_array_decode(p, len, n, off, &d, &used, NULL); break;
  }
  if (st == HS_OK) {
    if (used > len || off[n] != (int32_t)d.len) __builtin_trap();
    for (size_t i = 0; i < n; i++) {
      if (off[i + 1] < off[i]) __builtin_trap();
    }
    /* Round trip through the matching encoder. */
    hs_buf e, d2;
    hs_buf_init(&e);
    hs_buf_init(&d2);
    int32_t *off2 = must(hs_malloc((n + 1) * sizeof *off2));
    off2[0] = 0;
    hs_status s1, s2;
    switch (which) {
    case F_PLAIN_BA:
      s1 = hs_plain_encode_byte_array(off, d.data, n, &e, NULL);
      s2 = hs_plain_decode_byte_array(e.data, e.len, n, off2, &d2, NULL, NULL);
      break;
    case F_DELTA_LENGTH:
      s1 = hs_delta_length_encode(off, d.data, n, &e, NULL);
      s2 = hs_delta_length_decode(e.data, e.len, n, off2, &d2, NULL, NULL);
      break;
    default:
      s1 = hs_delta_byte_array_encode(off, d.data, n, &e, NULL);
      s2 = hs_delta_byte_array_decode(e.data, e.len, n, off2, &d2, NULL, NULL);
      break;
    }
    if (s1 != HS_OK || s2 != HS_OK) __builtin_trap();
    if (memcmp(off, off2, (n + 1) * sizeof *off) != 0) __builtin_trap();
    if (d.len != d2.len || (d.len && memcmp(d.data, d2.data, d.len) != 0)) __builtin_trap();
    hs_free(off2);
    hs_buf_free(&e);
    hs_buf_free(&d2);
  }
  hs_buf_free(&d);
  hs_free(off);
}

/* Random access through a delta directory (row gather of delta pages):
 * when the directory builds, every value it reaches is readable and, where
 * the decoder gave values (`o`, n of them, 32- or 64-bit), the same. */
static void delta_random_access(const uint8_t *p, size_t len, bool is32, const void *o, size_t n,
                                int param) {
  hs_delta_dir dir;
  if (hs_delta_dir_build(p, len, (uint64_t)n + (uint64_t)param, &dir, NULL) != HS_OK) return;
  hs_delta_cursor c;
  hs_delta_cursor_init(&c, &dir, p, len);
  uint64_t step = 1 + (uint64_t)param % 37;
  for (uint64_t i = 0; i < dir.total; i += step) {
    uint64_t x;
    if (hs_delta_cursor_get(&c, (int64_t)i, &x, NULL) != HS_OK) __builtin_trap();
    if (o != NULL && i < n) {
      uint64_t want = is32 ? (uint32_t)((const int32_t *)o)[i] : (uint64_t)((const int64_t *)o)[i];
      if ((is32 ? (uint32_t)x : x) != want) __builtin_trap();
    }
  }
  hs_delta_dir_free(&dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  int which = data[0] % F_COUNT;
  int param = data[1];
  size_t n = (size_t)data[2] | (size_t)data[3] << 8;
  /* Copy to an exact-size block so over-reads are caught. */
  size_t len = size - 4;
  uint8_t *p = must(hs_malloc(len ? len : 1));
  if (len) memcpy(p, data + 4, len);
  size_t used = 0;
  switch (which) {
  case F_RLE_U32:
  case F_DICT: {
    uint32_t *o = must(hs_malloc(n * sizeof *o + 1));
    int bw = param % 33;
    hs_status st = which == F_DICT ? hs_dict_indices_decode(p, len, o, n, NULL)
                                   : hs_rle_decode_u32(p, len, bw, o, n, &used, NULL);
    if (st == HS_OK && which == F_DICT) bw = len ? p[0] : 0;
    if (st == HS_OK) check_rle(o, n, bw);
    hs_free(o);
    break;
  }
  case F_RLE_LEVELS:
  case F_LEGACY_LEVELS: {
    int16_t *o = must(hs_malloc(n * sizeof *o + 1));
    int bw = param % 17;
    if (which == F_RLE_LEVELS) {
      hs_rle_decode_levels(p, len, bw, o, n, &used, NULL);
    } else {
      hs_bitpacked_legacy_decode_levels(p, len, bw, o, n, &used, NULL);
    }
    hs_free(o);
    break;
  }
  case F_BOOL: {
    uint8_t *o = must(hs_malloc(n + 1));
    hs_plain_decode_bool(p, len, o, n, &used, NULL);
    hs_free(o);
    break;
  }
  case F_PLAIN_BA:
  case F_DELTA_LENGTH:
  case F_DELTA_BA:
    /* Front coding can expand n-fold: keep each run's memory modest. */
    byte_arrays(which, p, len, which == F_DELTA_BA && n > 4096 ? 4096 : n);
    break;
  case F_DELTA_I32: {
    int32_t *o = must(hs_malloc(n * sizeof *o + 1));
    bool ok = hs_delta_binary_decode_i32(p, len, o, n, &used, NULL) == HS_OK;
    delta_random_access(p, len, true, ok ? o : NULL, n, param);
    if (ok) {
      hs_buf e;
      hs_buf_init(&e);
      int32_t *o2 = must(hs_malloc(n * sizeof *o2 + 1));
      if (used > len || hs_delta_binary_encode_i32(o, n, &e, NULL) != HS_OK ||
          hs_delta_binary_decode_i32(e.data, e.len, o2, n, NULL, NULL) != HS_OK ||
          (n && memcmp(o, o2, n * sizeof *o) != 0)) {
        __builtin_trap();
      }
      hs_free(o2);
      hs_buf_free(&e);
    }
    hs_free(o);
    break;
  }
  case F_DELTA_I64: {
    int64_t *o = must(hs_malloc(n * sizeof *o + 1));
    bool ok = hs_delta_binary_decode_i64(p, len, o, n, &used, NULL) == HS_OK;
    delta_random_access(p, len, false, ok ? o : NULL, n, param);
    if (ok) {
      hs_buf e;
      hs_buf_init(&e);
      int64_t *o2 = must(hs_malloc(n * sizeof *o2 + 1));
      if (used > len || hs_delta_binary_encode_i64(o, n, &e, NULL) != HS_OK ||
          hs_delta_binary_decode_i64(e.data, e.len, o2, n, NULL, NULL) != HS_OK ||
          (n && memcmp(o, o2, n * sizeof *o) != 0)) {
        __builtin_trap();
      }
      hs_free(o2);
      hs_buf_free(&e);
    }
    hs_free(o);
    break;
  }
  case F_DELTA_BA_FIXED: {
    int width = 1 + param % 32;
    uint8_t *o = must(hs_malloc(n * (size_t)width + 1));
    hs_delta_byte_array_decode_fixed(p, len, n, width, o, &used, NULL);
    hs_free(o);
    break;
  }
  case F_BSS: {
    int width = 1 + param % 16;
    size_t vals = len / (size_t)width;
    uint8_t *o = must(hs_malloc(len + 1));
    hs_byte_stream_split_decode(p, len, width, o, n, NULL); /* usually a size mismatch */
    if (hs_byte_stream_split_decode(p, vals * (size_t)width, width, o, vals, NULL) != HS_OK) {
      __builtin_trap();
    }
    hs_buf e;
    hs_buf_init(&e);
    if (hs_byte_stream_split_encode(o, vals, width, &e, NULL) != HS_OK ||
        (e.len && memcmp(e.data, p, e.len) != 0)) {
      __builtin_trap();
    }
    hs_buf_free(&e);
    hs_free(o);
    break;
  }
  case F_DECOMPRESS: {
    /* n is the page's declared uncompressed size (scaled up a little so
     * large-ratio codecs are reachable). */
    size_t dst_len = n * (size_t)(1 + (param >> 4));
    uint8_t *o = must(hs_malloc(dst_len + 1));
    int32_t codec = param % 8;
    if (hs_pq_decompress(codec, p, len, o, dst_len, NULL) == HS_OK &&
        hs_pq_codec_supported(codec)) {
      hs_buf e;
      hs_buf_init(&e);
      uint8_t *o2 = must(hs_malloc(dst_len + 1));
      if (hs_pq_compress(codec, 0, o, dst_len, &e, NULL) != HS_OK ||
          hs_pq_decompress(codec, e.data, e.len, o2, dst_len, NULL) != HS_OK ||
          (dst_len && memcmp(o, o2, dst_len) != 0)) {
        __builtin_trap();
      }
      hs_free(o2);
      hs_buf_free(&e);
    }
    hs_free(o);
    break;
  }
  default: break;
  }
  hs_free(p);
  return 0;
}
