/*
 * encoding_rle.c — the RLE/bit-packed hybrid (levels, dictionary indices,
 * RLE booleans), legacy BIT_PACKED levels, and PLAIN booleans.
 *
 * Hybrid layout (Encodings.md): a sequence of runs, each led by a ULEB128
 * header. Header & 1 == 1: a bit-packed run of (header >> 1) groups of 8
 * values, (header >> 1) * bit_width bytes. Header & 1 == 0: an RLE run of
 * (header >> 1) copies of one value stored in ceil(bit_width / 8) bytes,
 * little-endian.
 *
 * Decoders demand the bytes for every value they return but accept a final
 * bit-packed run whose padding (values beyond n) was cut short, and ignore
 * any bytes after the n-th value: writers pad and page sizes round up.
 */
#include <string.h>

#include "encoding_internal.h"

int hs_bit_width(uint64_t max_value) {
  return max_value == 0 ? 0 : 64 - __builtin_clzll(max_value);
}

/* Values per chunk when levels are decoded through a u32 scratch. */
#define HS_LEVEL_CHUNK 512

/* Decode n values into out32 (when levels is false) or out16. Shared so
 * that both outputs get the same validation; the `levels` branch is
 * loop-invariant. */
static hs_status rle_decode(const uint8_t *buf, size_t len, int bw, uint32_t *out32, int16_t *out16,
                            size_t n, size_t *consumed, hs_error *err, const char *what) {
  size_t pos = 0, done = 0;
  const size_t value_bytes = ((size_t)bw + 7) / 8;
  const uint64_t max_value = bw == 32 ? UINT32_MAX : (((uint64_t)1 << bw) - 1);
  while (done < n) {
    if (pos >= len && bw == 0) {
      /* Width 0 carries no information: some writers omit the runs. */
      if (out16) {
        memset(out16 + done, 0, (n - done) * sizeof *out16);
      } else {
        memset(out32 + done, 0, (n - done) * sizeof *out32);
      }
      done = n;
      break;
    }
    size_t header_pos = pos;
    uint64_t header;
    if (!hs_varint_read(buf, len, &pos, &header) || header > UINT32_MAX) {
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "%s: truncated or invalid run header at byte %zu (%zu of %zu values "
                          "decoded)",
                          what, header_pos, done, n);
    }
    size_t want = n - done;
    if (header & 1) {
      size_t count = (size_t)(header >> 1) * 8;
      size_t run_bytes = (size_t)(header >> 1) * (size_t)bw;
      size_t take = count < want ? count : want;
      size_t need = 0;
      hs_packed_bytes(take, bw, &need); /* take < 2^35, bw <= 32: no overflow */
      size_t avail = len - pos;
      if (need > avail) {
        return hs_error_set(err, HS_ERR_CORRUPT,
                            "%s: bit-packed run at byte %zu needs %zu bytes, %zu remain", what,
                            header_pos, need, avail);
      }
      if (!out16) {
        hs_unpack_u32(buf + pos, avail, bw, out32 + done, take);
      } else {
        uint32_t tmp[HS_LEVEL_CHUNK];
        size_t off = 0;
        for (size_t left = take; left > 0;) {
          size_t c = left < HS_LEVEL_CHUNK ? left : HS_LEVEL_CHUNK;
          /* c is a multiple of 8 except for the last chunk. */
          size_t o = off / 8 * (size_t)bw;
          hs_unpack_u32(buf + pos + o, avail - o, bw, tmp, c);
          for (size_t i = 0; i < c; i++) out16[done + off + i] = (int16_t)tmp[i];
          off += c;
          left -= c;
        }
      }
      done += take;
      pos += run_bytes < avail ? run_bytes : avail;
    } else {
      size_t count = (size_t)(header >> 1);
      if (value_bytes > len - pos) {
        return hs_error_set(err, HS_ERR_CORRUPT,
                            "%s: RLE run at byte %zu needs a %zu-byte value, %zu remain", what,
                            header_pos, value_bytes, len - pos);
      }
      uint64_t v = 0;
      for (size_t i = 0; i < value_bytes; i++) v |= (uint64_t)buf[pos + i] << (8 * i);
      pos += value_bytes;
      if (v > max_value) {
        return hs_error_set(err, HS_ERR_CORRUPT,
                            "%s: RLE run at byte %zu repeats %llu, wider than %d bits", what,
                            header_pos, (unsigned long long)v, bw);
      }
      size_t take = count < want ? count : want;
      if (out16) {
        int16_t x = (int16_t)v;
        for (size_t i = 0; i < take; i++) out16[done + i] = x;
      } else if (v == 0) {
        memset(out32 + done, 0, take * sizeof *out32);
      } else {
        uint32_t x = (uint32_t)v;
        for (size_t i = 0; i < take; i++) out32[done + i] = x;
      }
      done += take;
    }
  }
  if (consumed) *consumed = pos;
  return HS_OK;
}

hs_status hs_rle_decode_u32(const uint8_t *buf, size_t len, int bit_width, uint32_t *out, size_t n,
                            size_t *consumed, hs_error *err) {
  if (bit_width < 0 || bit_width > 32) {
    return hs_error_set(err, HS_ERR_CORRUPT, "RLE: bit width %d is outside 0..32", bit_width);
  }
  return rle_decode(buf, len, bit_width, out, NULL, n, consumed, err, "RLE");
}

hs_status hs_rle_decode_levels(const uint8_t *buf, size_t len, int bit_width, int16_t *out,
                               size_t n, size_t *consumed, hs_error *err) {
  if (bit_width < 0 || bit_width > 16) {
    return hs_error_set(err, HS_ERR_CORRUPT, "RLE levels: bit width %d is outside 0..16",
                        bit_width);
  }
  return rle_decode(buf, len, bit_width, NULL, out, n, consumed, err, "RLE levels");
}

hs_status hs_bitpacked_legacy_decode_levels(const uint8_t *buf, size_t len, int bit_width,
                                            int16_t *out, size_t n, size_t *consumed,
                                            hs_error *err) {
  if (bit_width < 0 || bit_width > 16) {
    return hs_error_set(err, HS_ERR_CORRUPT, "BIT_PACKED levels: bit width %d is outside 0..16",
                        bit_width);
  }
  size_t need;
  if (!hs_packed_bytes(n, bit_width, &need) || need > len) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "BIT_PACKED levels: %zu values of %d bits need more than the %zu bytes "
                        "present",
                        n, bit_width, len);
  }
  /* MSB first: value i occupies bits [i*w, (i+1)*w) counting from the top
   * bit of byte 0. */
  size_t bit = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t v = 0;
    for (int b = 0; b < bit_width; b++, bit++) {
      v = (v << 1) | ((buf[bit / 8] >> (7 - bit % 8)) & 1);
    }
    out[i] = (int16_t)v;
  }
  if (consumed) *consumed = need;
  return HS_OK;
}

/* ------------------------------------------------------------- encoding */

/* Append one bit-packed run of the values [start, start + count), padded
 * with zeros to a multiple of 8. */
static bool emit_packed(const uint32_t *values, size_t count, int bw, hs_buf *out) {
  while (count > 0) {
    /* A header is a 32-bit varint: at most 2^31 - 1 groups per run. */
    size_t groups = (count + 7) / 8;
    if (groups > ((size_t)1 << 30)) groups = (size_t)1 << 30;
    size_t take = groups * 8 < count ? groups * 8 : count;
    size_t bytes = groups * (size_t)bw;
    if (!hs_varint_write(out, ((uint64_t)groups << 1) | 1)) return false;
    if (!hs_buf_reserve(out, bytes)) return false;
    memset(out->data + out->len, 0, bytes);
    hs_pack_u32(values, take, bw, out->data + out->len);
    out->len += bytes;
    values += take;
    count -= take;
  }
  return true;
}

static bool emit_rle(uint32_t value, size_t count, int bw, hs_buf *out) {
  size_t value_bytes = ((size_t)bw + 7) / 8;
  while (count > 0) {
    size_t take = count < ((size_t)1 << 30) ? count : ((size_t)1 << 30);
    uint8_t v[4];
    hs_store_u32le(v, value);
    if (!hs_varint_write(out, (uint64_t)take << 1) || !hs_buf_append(out, v, value_bytes)) {
      return false;
    }
    count -= take;
  }
  return true;
}

/* Runs of >= 8 equal values become RLE runs; everything else goes into
 * bit-packed runs. A bit-packed run can only be padded at the very end of
 * the stream, so before an RLE run the pending literals are completed to a
 * multiple of 8 with the run's own first values (as parquet-mr and Arrow
 * do); if that leaves fewer than 8, the run stays literal. */
static hs_status rle_encode(const uint32_t *v, size_t n, int bw, hs_buf *out, hs_error *err) {
  size_t lit_start = 0, i = 0;
  while (i < n) {
    size_t r = 1;
    while (i + r < n && v[i + r] == v[i]) r++;
    if (r >= 8) {
      size_t pending = i - lit_start;
      size_t pad = (8 - pending % 8) % 8;
      if (r - pad >= 8) {
        if (pending + pad > 0 && !emit_packed(v + lit_start, pending + pad, bw, out)) goto oom;
        if (!emit_rle(v[i], r - pad, bw, out)) goto oom;
        i += r;
        lit_start = i;
        continue;
      }
    }
    i += r;
  }
  if (n > lit_start && !emit_packed(v + lit_start, n - lit_start, bw, out)) goto oom;
  return HS_OK;
oom:
  return hs_error_set(err, HS_ERR_NOMEM, "RLE encode: out of memory (%zu values)", n);
}

hs_status hs_rle_encode_u32(const uint32_t *values, size_t n, int bit_width, hs_buf *out,
                            hs_error *err) {
  if (bit_width < 0 || bit_width > 32) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "RLE encode: bit width %d is outside 0..32",
                        bit_width);
  }
  uint32_t all = 0;
  for (size_t i = 0; i < n; i++) all |= values[i];
  if (hs_bit_width(all) > bit_width) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "RLE encode: a value needs more than %d bits",
                        bit_width);
  }
  return rle_encode(values, n, bit_width, out, err);
}

hs_status hs_rle_encode_levels(const int16_t *levels, size_t n, int bit_width, hs_buf *out,
                               hs_error *err) {
  if (bit_width < 0 || bit_width > 16) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "RLE encode levels: bit width %d is outside 0..16",
                        bit_width);
  }
  if (n == 0) return HS_OK;
  size_t bytes;
  if (!hs_mul_size(n, sizeof(uint32_t), &bytes)) {
    return hs_error_set(err, HS_ERR_NOMEM, "RLE encode levels: %zu levels is too many", n);
  }
  uint32_t *tmp = hs_malloc(bytes);
  if (!tmp) return hs_error_set(err, HS_ERR_NOMEM, "RLE encode levels: out of memory");
  for (size_t i = 0; i < n; i++) tmp[i] = (uint16_t)levels[i];
  hs_status st = hs_rle_encode_u32(tmp, n, bit_width, out, err);
  hs_free(tmp);
  return st;
}

hs_status hs_dict_indices_decode(const uint8_t *buf, size_t len, uint32_t *out, size_t n,
                                 hs_error *err) {
  if (len == 0) {
    if (n == 0) return HS_OK;
    return hs_error_set(err, HS_ERR_CORRUPT, "dictionary indices: empty page, %zu values", n);
  }
  int bw = buf[0];
  if (bw > 32) {
    return hs_error_set(err, HS_ERR_CORRUPT, "dictionary indices: bit width %d is over 32", bw);
  }
  return rle_decode(buf + 1, len - 1, bw, out, NULL, n, NULL, err, "dictionary indices");
}

hs_status hs_dict_indices_encode(const uint32_t *indices, size_t n, uint32_t dict_size, hs_buf *out,
                                 hs_error *err) {
  int bw = dict_size == 0 ? 0 : hs_bit_width(dict_size - 1);
  for (size_t i = 0; i < n; i++) {
    if (indices[i] >= dict_size) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "dictionary indices: index %u at %zu is outside a dictionary of %u",
                          indices[i], i, dict_size);
    }
  }
  if (!hs_buf_append_byte(out, (uint8_t)bw)) {
    return hs_error_set(err, HS_ERR_NOMEM, "dictionary indices: out of memory");
  }
  return rle_encode(indices, n, bw, out, err);
}

/* ------------------------------------------------------- PLAIN booleans */

hs_status hs_plain_decode_bool(const uint8_t *buf, size_t len, uint8_t *out, size_t n,
                               size_t *consumed, hs_error *err) {
  size_t need = n / 8 + (n % 8 != 0);
  if (need > len) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "PLAIN booleans: %zu values need %zu bytes, %zu present", n, need, len);
  }
  size_t full = n / 8;
  for (size_t b = 0; b < full; b++) {
    uint8_t x = buf[b];
    uint8_t *o = out + b * 8;
    for (int k = 0; k < 8; k++) o[k] = (x >> k) & 1;
  }
  for (size_t i = full * 8; i < n; i++) out[i] = (buf[i / 8] >> (i % 8)) & 1;
  if (consumed) *consumed = need;
  return HS_OK;
}

hs_status hs_plain_encode_bool_bits(const uint8_t *bits, int64_t bit_offset, size_t n, hs_buf *out,
                                    hs_error *err) {
  if (bit_offset < 0) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "PLAIN booleans: negative bit offset %lld",
                        (long long)bit_offset);
  }
  size_t bytes = n / 8 + (n % 8 != 0);
  if (bytes == 0) return HS_OK;
  if (!hs_buf_reserve(out, bytes)) {
    return hs_error_set(err, HS_ERR_NOMEM, "PLAIN booleans: out of memory (%zu values)", n);
  }
  uint8_t *o = out->data + out->len;
  const uint8_t *src = bits + bit_offset / 8;
  int sh = (int)(bit_offset % 8);
  if (sh == 0) {
    memcpy(o, src, bytes);
  } else {
    /* Output byte j takes bits sh..7 of src[j] and 0..sh-1 of src[j+1];
     * src[j+1] exists only while bit (j+1)*8 < n + sh. */
    for (size_t j = 0; j < bytes; j++) {
      unsigned v = (unsigned)src[j] >> sh;
      if ((j + 1) * 8 < n + (size_t)sh) v |= (unsigned)src[j + 1] << (8 - sh);
      o[j] = (uint8_t)v;
    }
  }
  if (n % 8) o[bytes - 1] &= (uint8_t)((1u << (n % 8)) - 1);
  out->len += bytes;
  return HS_OK;
}
