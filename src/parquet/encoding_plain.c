/*
 * encoding_plain.c — PLAIN byte arrays (4-byte little-endian length, then
 * the bytes) and BYTE_STREAM_SPLIT (byte k of every value stored together
 * in stream k) for any value width.
 *
 * Byte arrays decode straight into Arrow offsets + data; the data buffer is
 * reserved once up front (the values cannot hold more bytes than the page),
 * so the loop is a bounds check and a memcpy per value.
 */
#include <string.h>

#include "encoding_internal.h"

hs_status hs_plain_decode_byte_array(const uint8_t *buf, size_t len, size_t n, int32_t *offsets,
                                     hs_buf *data, size_t *consumed, hs_error *err) {
  /* Every value has a 4-byte length, so n is bounded by the page. */
  if (n > len / 4) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "PLAIN byte arrays: %zu values cannot fit in %zu bytes", n, len);
  }
  if (!hs_buf_reserve(data, len - 4 * n)) {
    return hs_error_set(err, HS_ERR_NOMEM, "PLAIN byte arrays: out of memory (%zu bytes)", len);
  }
  /* Invariant: len - pos >= 4 * (n - i) at the top of the loop, so every
   * length prefix is present and the value bytes total <= len - 4n, the
   * space reserved above. */
  size_t pos = 0;
  int64_t off = offsets[0];
  for (size_t i = 0; i < n; i++) {
    uint32_t l = hs_load_u32le(buf + pos);
    pos += 4;
    size_t room = len - pos - 4 * (n - i - 1);
    if (l > room) {
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "PLAIN byte arrays: value %zu of %zu at byte %zu has length %u, only "
                          "%zu bytes remain for it",
                          i, n, pos - 4, l, room);
    }
    off += l;
    if (off > INT32_MAX) {
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "PLAIN byte arrays: more than 2^31-1 bytes of values in one batch");
    }
    if (l > 0) memcpy(data->data + data->len, buf + pos, l);
    data->len += l;
    pos += l;
    offsets[i + 1] = (int32_t)off;
  }
  if (consumed) *consumed = pos;
  return HS_OK;
}

hs_status hs_plain_encode_byte_array(const int32_t *offsets, const uint8_t *data, size_t n,
                                     hs_buf *out, hs_error *err) {
  size_t total = 0;
  if (n > 0) {
    if (offsets[n] < offsets[0]) {
      return hs_error_set(err, HS_ERR_INVALID_ARG, "PLAIN byte arrays: offsets decrease");
    }
    total = (size_t)(offsets[n] - offsets[0]);
  }
  if (!hs_buf_reserve(out, total + 4 * n)) {
    return hs_error_set(err, HS_ERR_NOMEM, "PLAIN byte arrays: out of memory (%zu values)", n);
  }
  for (size_t i = 0; i < n; i++) {
    int32_t l = offsets[i + 1] - offsets[i];
    if (l < 0) {
      return hs_error_set(err, HS_ERR_INVALID_ARG, "PLAIN byte arrays: offset %zu decreases", i);
    }
    hs_store_u32le(out->data + out->len, (uint32_t)l);
    if (l > 0) memcpy(out->data + out->len + 4, data + offsets[i], (size_t)l);
    out->len += 4 + (size_t)l;
  }
  return HS_OK;
}

/* ---------------------------------------------------- BYTE_STREAM_SPLIT */

/* Width-specialised transposes: each value is assembled in a register
 * from its W stream bytes and stored at once (decode), or split with
 * shifts (encode); with W constant the compiler vectorises these loops. */
static void bss_decode_2(const uint8_t *in, uint8_t *out, size_t n) {
  const uint8_t *s0 = in, *s1 = in + n;
  for (size_t i = 0; i < n; i++) {
    uint16_t v = (uint16_t)(s0[i] | s1[i] << 8);
    memcpy(out + 2 * i, &v, 2);
  }
}
static void bss_decode_4(const uint8_t *in, uint8_t *out, size_t n) {
  const uint8_t *s0 = in, *s1 = in + n, *s2 = in + 2 * n, *s3 = in + 3 * n;
  for (size_t i = 0; i < n; i++) {
    uint32_t v =
        (uint32_t)s0[i] | (uint32_t)s1[i] << 8 | (uint32_t)s2[i] << 16 | (uint32_t)s3[i] << 24;
    memcpy(out + 4 * i, &v, 4);
  }
}
static void bss_decode_8(const uint8_t *in, uint8_t *out, size_t n) {
  const uint8_t *s[8];
  for (int k = 0; k < 8; k++) s[k] = in + (size_t)k * n;
  for (size_t i = 0; i < n; i++) {
    uint64_t v = (uint64_t)s[0][i] | (uint64_t)s[1][i] << 8 | (uint64_t)s[2][i] << 16 |
                 (uint64_t)s[3][i] << 24 | (uint64_t)s[4][i] << 32 | (uint64_t)s[5][i] << 40 |
                 (uint64_t)s[6][i] << 48 | (uint64_t)s[7][i] << 56;
    memcpy(out + 8 * i, &v, 8);
  }
}
static void bss_encode_2(const uint8_t *in, uint8_t *out, size_t n) {
  uint8_t *s0 = out, *s1 = out + n;
  for (size_t i = 0; i < n; i++) {
    s0[i] = in[2 * i];
    s1[i] = in[2 * i + 1];
  }
}
static void bss_encode_4(const uint8_t *in, uint8_t *out, size_t n) {
  uint8_t *s0 = out, *s1 = out + n, *s2 = out + 2 * n, *s3 = out + 3 * n;
  for (size_t i = 0; i < n; i++) {
    uint32_t v;
    memcpy(&v, in + 4 * i, 4);
    s0[i] = (uint8_t)v;
    s1[i] = (uint8_t)(v >> 8);
    s2[i] = (uint8_t)(v >> 16);
    s3[i] = (uint8_t)(v >> 24);
  }
}
static void bss_encode_8(const uint8_t *in, uint8_t *out, size_t n) {
  uint8_t *s[8];
  for (int k = 0; k < 8; k++) s[k] = out + (size_t)k * n;
  for (size_t i = 0; i < n; i++) {
    uint64_t v;
    memcpy(&v, in + 8 * i, 8);
    for (int k = 0; k < 8; k++) s[k][i] = (uint8_t)(v >> (8 * k));
  }
}

/* Values per block in the generic path: keeps the W output streams'
 * cache lines hot while walking them. */
#define HS_BSS_BLOCK 256

static void bss_decode_any(const uint8_t *in, uint8_t *out, size_t n, size_t w) {
  for (size_t b = 0; b < n; b += HS_BSS_BLOCK) {
    size_t e = b + HS_BSS_BLOCK < n ? b + HS_BSS_BLOCK : n;
    for (size_t k = 0; k < w; k++) {
      const uint8_t *s = in + k * n;
      for (size_t i = b; i < e; i++) out[i * w + k] = s[i];
    }
  }
}

static void bss_encode_any(const uint8_t *in, uint8_t *out, size_t n, size_t w) {
  for (size_t b = 0; b < n; b += HS_BSS_BLOCK) {
    size_t e = b + HS_BSS_BLOCK < n ? b + HS_BSS_BLOCK : n;
    for (size_t k = 0; k < w; k++) {
      uint8_t *s = out + k * n;
      for (size_t i = b; i < e; i++) s[i] = in[i * w + k];
    }
  }
}

hs_status hs_byte_stream_split_decode(const uint8_t *buf, size_t len, int width, uint8_t *out,
                                      size_t n, hs_error *err) {
  size_t need;
  if (width <= 0 || !hs_mul_size(n, (size_t)width, &need)) {
    return hs_error_set(err, HS_ERR_CORRUPT, "BYTE_STREAM_SPLIT: invalid width %d for %zu values",
                        width, n);
  }
  if (need != len) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "BYTE_STREAM_SPLIT: %zu values of %d bytes need %zu bytes, page has %zu", n,
                        width, need, len);
  }
  if (n == 0) return HS_OK;
  switch (width) {
  case 1: memcpy(out, buf, n); break;
  case 2: bss_decode_2(buf, out, n); break;
  case 4: bss_decode_4(buf, out, n); break;
  case 8: bss_decode_8(buf, out, n); break;
  default: bss_decode_any(buf, out, n, (size_t)width); break;
  }
  return HS_OK;
}

hs_status hs_byte_stream_split_encode(const uint8_t *values, size_t n, int width, hs_buf *out,
                                      hs_error *err) {
  size_t bytes;
  if (width <= 0 || !hs_mul_size(n, (size_t)width, &bytes)) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "BYTE_STREAM_SPLIT: invalid width %d", width);
  }
  if (bytes == 0) return HS_OK;
  if (!hs_buf_reserve(out, bytes)) {
    return hs_error_set(err, HS_ERR_NOMEM, "BYTE_STREAM_SPLIT: out of memory (%zu bytes)", bytes);
  }
  uint8_t *o = out->data + out->len;
  switch (width) {
  case 1: memcpy(o, values, n); break;
  case 2: bss_encode_2(values, o, n); break;
  case 4: bss_encode_4(values, o, n); break;
  case 8: bss_encode_8(values, o, n); break;
  default: bss_encode_any(values, o, n, (size_t)width); break;
  }
  out->len += bytes;
  return HS_OK;
}
