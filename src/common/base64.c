/*
 * base64.c — RFC 4648 base64 (standard alphabet, '=' padding).
 *
 * Used for the "ARROW:schema" key-value metadata that pyarrow stores in
 * Parquet footers: its value is base64 of an Arrow IPC Schema message. The
 * decoder reads untrusted footer bytes, so it is strict and bounded: the
 * input length must be a multiple of 4, only alphabet characters may appear
 * before at most two trailing '=', and the unused low bits of the last
 * quantum must be zero (the canonical form every encoder produces), so each
 * byte string has exactly one accepted encoding. Output size is computed
 * from the input length before anything is appended.
 */
#include "common.h"

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool hs_base64_encode(const uint8_t *src, size_t n, hs_buf *out) {
  size_t groups = n / 3 + (n % 3 != 0), bytes;
  if (!hs_mul_size(groups, 4, &bytes) || !hs_buf_reserve(out, bytes)) return false;
  if (bytes == 0) return true; /* out->data may be NULL */
  uint8_t *o = out->data + out->len;
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8 | src[i + 2];
    *o++ = (uint8_t)b64_alphabet[v >> 18];
    *o++ = (uint8_t)b64_alphabet[(v >> 12) & 63];
    *o++ = (uint8_t)b64_alphabet[(v >> 6) & 63];
    *o++ = (uint8_t)b64_alphabet[v & 63];
  }
  if (n - i == 1) {
    uint32_t v = (uint32_t)src[i] << 16;
    *o++ = (uint8_t)b64_alphabet[v >> 18];
    *o++ = (uint8_t)b64_alphabet[(v >> 12) & 63];
    *o++ = '=';
    *o++ = '=';
  } else if (n - i == 2) {
    uint32_t v = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8;
    *o++ = (uint8_t)b64_alphabet[v >> 18];
    *o++ = (uint8_t)b64_alphabet[(v >> 12) & 63];
    *o++ = (uint8_t)b64_alphabet[(v >> 6) & 63];
    *o++ = '=';
  }
  out->len += bytes;
  return true;
}

/* Value of one alphabet character, or -1. */
static int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

hs_status hs_base64_decode(const char *src, size_t n, hs_buf *out, hs_error *err) {
  if (src == NULL && n > 0) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "base64: NULL input");
  }
  if (n % 4 != 0) {
    return hs_error_set(err, HS_ERR_CORRUPT, "base64: length %zu is not a multiple of 4", n);
  }
  if (n == 0) return HS_OK;
  size_t pad = 0;
  if (src[n - 1] == '=') pad = (n > 1 && src[n - 2] == '=') ? 2 : 1;
  size_t bytes = n / 4 * 3 - pad;
  if (!hs_buf_reserve(out, bytes)) {
    return hs_error_set(err, HS_ERR_NOMEM, "base64: out of memory (%zu bytes)", bytes);
  }
  uint8_t *o = out->data + out->len;
  for (size_t i = 0; i < n; i += 4) {
    bool last = i + 4 == n;
    size_t nchars = last ? 4 - pad : 4;
    uint32_t v = 0;
    for (size_t j = 0; j < 4; j++) {
      int d = 0;
      if (j < nchars) {
        d = b64_value(src[i + j]);
        if (d < 0) {
          return hs_error_set(err, HS_ERR_CORRUPT, "base64: invalid character 0x%02x at offset %zu",
                              (unsigned)(uint8_t)src[i + j], i + j);
        }
      }
      v = v << 6 | (uint32_t)d;
    }
    /* Padding leaves 4 (pad 2) or 2 (pad 1) unused bits that must be zero. */
    if (last && ((pad == 2 && (v & 0xFFFF) != 0) || (pad == 1 && (v & 0xFF) != 0))) {
      return hs_error_set(err, HS_ERR_CORRUPT, "base64: non-canonical final quantum at offset %zu",
                          i);
    }
    *o++ = (uint8_t)(v >> 16);
    if (nchars > 2) *o++ = (uint8_t)(v >> 8);
    if (nchars > 3) *o++ = (uint8_t)v;
  }
  out->len += bytes;
  return HS_OK;
}
