/*
 * encoding_delta.c — DELTA_BINARY_PACKED (INT32/INT64), DELTA_LENGTH_BYTE_ARRAY
 * and DELTA_BYTE_ARRAY (incremental / front coding), per Encodings.md.
 *
 * DELTA_BINARY_PACKED layout: header <block size> <miniblocks per block>
 * <total value count> <first value (zigzag)>, all ULEB128; then blocks of
 * <min delta (zigzag)> <one bit-width byte per miniblock> <miniblocks>. Each
 * miniblock holds (block size / miniblocks) values of (delta - min delta)
 * bit-packed; the last one with values is padded to full size, miniblocks
 * after the last value are absent although their width bytes are present.
 * Arithmetic wraps: modulo 2^32 for INT32, 2^64 for INT64.
 *
 * A decoder asked for n values may face a stream of more (total count >=
 * n); it still walks the remaining block headers so that *consumed is the
 * end of the whole stream, which DELTA_LENGTH_BYTE_ARRAY needs to find its
 * data.
 */
#include <string.h>

#include "encoding_internal.h"

/* Largest block size accepted: bounds per-block work, far above the 128
 * every known writer uses. */
#define HS_DELTA_BLOCK_MAX 65536
/* Values unpacked per step inside a miniblock (a multiple of 8). */
#define HS_DELTA_CHUNK 256

/* Decode n values into out32 or out64 (exactly one is not NULL). */
static hs_status delta_decode(const uint8_t *buf, size_t len, int32_t *out32, int64_t *out64,
                              size_t n, size_t *consumed, hs_error *err) {
  size_t pos = 0;
  uint64_t block_size, mb_count, total, first_zz;
  if (!hs_varint_read(buf, len, &pos, &block_size) || !hs_varint_read(buf, len, &pos, &mb_count) ||
      !hs_varint_read(buf, len, &pos, &total) || !hs_varint_read(buf, len, &pos, &first_zz)) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BINARY_PACKED: truncated or invalid header (%zu bytes)", len);
  }
  if (block_size == 0 || block_size % 128 != 0 || block_size > HS_DELTA_BLOCK_MAX ||
      mb_count == 0 || block_size % mb_count != 0 || (block_size / mb_count) % 32 != 0) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BINARY_PACKED: invalid block size %llu with %llu miniblocks",
                        (unsigned long long)block_size, (unsigned long long)mb_count);
  }
  if (total < n) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BINARY_PACKED: stream holds %llu values, %zu expected",
                        (unsigned long long)total, n);
  }
  const size_t vpm = (size_t)(block_size / mb_count);
  uint64_t prev = (uint64_t)hs_zigzag_decode(first_zz);
  size_t emitted = 0;
  if (n > 0) {
    if (out64) {
      out64[0] = (int64_t)prev;
    } else {
      out32[0] = (int32_t)(uint32_t)prev;
    }
    emitted = 1;
  }
  uint64_t left = total > 0 ? total - 1 : 0; /* deltas still to walk */
  uint64_t chunk[HS_DELTA_CHUNK];
  while (left > 0) {
    size_t block_pos = pos;
    uint64_t md_zz;
    if (!hs_varint_read(buf, len, &pos, &md_zz)) {
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "DELTA_BINARY_PACKED: truncated min delta at byte %zu", block_pos);
    }
    const uint64_t min_delta = (uint64_t)hs_zigzag_decode(md_zz);
    if (mb_count > len - pos) {
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "DELTA_BINARY_PACKED: truncated bit widths at byte %zu", pos);
    }
    const uint8_t *widths = buf + pos;
    pos += (size_t)mb_count;
    for (size_t m = 0; m < mb_count && left > 0; m++) {
      int bw = widths[m];
      if (bw > 64) {
        return hs_error_set(err, HS_ERR_CORRUPT,
                            "DELTA_BINARY_PACKED: miniblock bit width %d at byte %zu is over 64",
                            bw, block_pos);
      }
      size_t mb_bytes = vpm / 8 * (size_t)bw;
      size_t in_mb = left < vpm ? (size_t)left : vpm;
      size_t to_emit = n - emitted < in_mb ? n - emitted : in_mb;
      size_t avail = len - pos;
      size_t need = 0;
      hs_packed_bytes(to_emit, bw, &need);
      /* Every miniblock but the stream's last must be complete. */
      if (need > avail || (left > in_mb && mb_bytes > avail)) {
        return hs_error_set(err, HS_ERR_CORRUPT,
                            "DELTA_BINARY_PACKED: miniblock at byte %zu needs %zu bytes, %zu "
                            "remain",
                            pos, left > in_mb ? mb_bytes : need, avail);
      }
      for (size_t off = 0; off < to_emit; off += HS_DELTA_CHUNK) {
        size_t c = to_emit - off < HS_DELTA_CHUNK ? to_emit - off : HS_DELTA_CHUNK;
        size_t o = off / 8 * (size_t)bw;
        hs_unpack_u64(buf + pos + o, avail - o, bw, chunk, c);
        if (out64) {
          uint64_t *dst = (uint64_t *)(out64 + emitted);
          for (size_t i = 0; i < c; i++) {
            prev += min_delta + chunk[i];
            dst[i] = prev;
          }
        } else {
          uint32_t p32 = (uint32_t)prev, md32 = (uint32_t)min_delta;
          uint32_t *dst = (uint32_t *)(out32 + emitted);
          for (size_t i = 0; i < c; i++) {
            p32 += md32 + (uint32_t)chunk[i];
            dst[i] = p32;
          }
          prev = p32;
        }
        emitted += c;
      }
      pos += mb_bytes < avail ? mb_bytes : avail;
      left -= in_mb;
    }
  }
  if (consumed) *consumed = pos;
  return HS_OK;
}

hs_status hs_delta_binary_decode_i32(const uint8_t *buf, size_t len, int32_t *out, size_t n,
                                     size_t *consumed, hs_error *err) {
  return delta_decode(buf, len, out, NULL, n, consumed, err);
}

hs_status hs_delta_binary_decode_i64(const uint8_t *buf, size_t len, int64_t *out, size_t n,
                                     size_t *consumed, hs_error *err) {
  return delta_decode(buf, len, NULL, out, n, consumed, err);
}

/* ------------------------------------------------------------- encoding */

#define HS_DELTA_BLOCK 128
#define HS_DELTA_MINIBLOCKS 4
#define HS_DELTA_VPM (HS_DELTA_BLOCK / HS_DELTA_MINIBLOCKS)

/* Encode n values given as 64-bit; `is32` selects modulo-2^32 deltas. */
static hs_status delta_encode(const int32_t *v32, const int64_t *v64, size_t n, hs_buf *out,
                              hs_error *err) {
  const bool is32 = v32 != NULL;
#define HS_VAL(i) (is32 ? (int64_t)v32[i] : v64[i])
  int64_t first = n > 0 ? HS_VAL(0) : 0;
  if (!hs_varint_write(out, HS_DELTA_BLOCK) || !hs_varint_write(out, HS_DELTA_MINIBLOCKS) ||
      !hs_varint_write(out, n) || !hs_varint_write(out, hs_zigzag_encode(first))) {
    goto oom;
  }
  for (size_t start = 1; start < n; start += HS_DELTA_BLOCK) {
    size_t count = n - start < HS_DELTA_BLOCK ? n - start : HS_DELTA_BLOCK;
    int64_t d[HS_DELTA_BLOCK];
    uint64_t u[HS_DELTA_BLOCK] = {0};
    for (size_t i = 0; i < count; i++) {
      size_t k = start + i;
      if (is32) {
        d[i] = (int32_t)((uint32_t)v32[k] - (uint32_t)v32[k - 1]);
      } else {
        d[i] = (int64_t)((uint64_t)v64[k] - (uint64_t)v64[k - 1]);
      }
    }
    int64_t md = d[0];
    for (size_t i = 1; i < count; i++) md = d[i] < md ? d[i] : md;
    for (size_t i = 0; i < count; i++) {
      u[i] = is32 ? (uint32_t)((uint32_t)d[i] - (uint32_t)md) : (uint64_t)d[i] - (uint64_t)md;
    }
    uint8_t widths[HS_DELTA_MINIBLOCKS] = {0};
    size_t used = (count + HS_DELTA_VPM - 1) / HS_DELTA_VPM;
    for (size_t m = 0; m < used; m++) {
      uint64_t all = 0;
      for (size_t i = 0; i < HS_DELTA_VPM; i++) all |= u[m * HS_DELTA_VPM + i];
      widths[m] = (uint8_t)hs_bit_width(all);
    }
    if (!hs_varint_write(out, hs_zigzag_encode(md)) ||
        !hs_buf_append(out, widths, HS_DELTA_MINIBLOCKS)) {
      goto oom;
    }
    for (size_t m = 0; m < used; m++) {
      size_t bytes = HS_DELTA_VPM / 8 * widths[m];
      if (!hs_buf_reserve(out, bytes)) goto oom;
      memset(out->data + out->len, 0, bytes);
      hs_pack_u64(u + m * HS_DELTA_VPM, HS_DELTA_VPM, widths[m], out->data + out->len);
      out->len += bytes;
    }
  }
#undef HS_VAL
  return HS_OK;
oom:
  return hs_error_set(err, HS_ERR_NOMEM, "DELTA_BINARY_PACKED encode: out of memory");
}

hs_status hs_delta_binary_encode_i32(const int32_t *values, size_t n, hs_buf *out, hs_error *err) {
  return delta_encode(values, NULL, n, out, err);
}

hs_status hs_delta_binary_encode_i64(const int64_t *values, size_t n, hs_buf *out, hs_error *err) {
  return delta_encode(NULL, values, n, out, err);
}

/* ---------------------------------------------- DELTA_LENGTH_BYTE_ARRAY */

hs_status hs_delta_length_decode(const uint8_t *buf, size_t len, size_t n, int32_t *offsets,
                                 hs_buf *data, size_t *consumed, hs_error *err) {
  size_t p;
  /* Lengths land in offsets[1..n] and become running offsets in place. */
  hs_status st = delta_decode(buf, len, offsets + 1, NULL, n, &p, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "DELTA_LENGTH_BYTE_ARRAY lengths: ");
    return st;
  }
  int64_t off = offsets[0];
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    int32_t l = offsets[i + 1];
    if (l < 0 || (size_t)l > len - p - total) {
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "DELTA_LENGTH_BYTE_ARRAY: value %zu has length %d, %zu bytes remain", i,
                          l, len - p - total);
    }
    total += (size_t)l;
    off += l;
    if (off > INT32_MAX) {
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "DELTA_LENGTH_BYTE_ARRAY: more than 2^31-1 bytes of values in one batch");
    }
    offsets[i + 1] = (int32_t)off;
  }
  if (total > 0 && !hs_buf_append(data, buf + p, total)) {
    return hs_error_set(err, HS_ERR_NOMEM, "DELTA_LENGTH_BYTE_ARRAY: out of memory (%zu bytes)",
                        total);
  }
  if (consumed) *consumed = p + total;
  return HS_OK;
}

/* Lengths of n Arrow values as a scratch array (caller frees). */
static int32_t *lengths_of(const int32_t *offsets, size_t n, hs_error *err) {
  int32_t *lens = hs_malloc(n ? n * sizeof *lens : 1);
  if (!lens) {
    hs_error_set(err, HS_ERR_NOMEM, "out of memory for %zu lengths", n);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) lens[i] = offsets[i + 1] - offsets[i];
  return lens;
}

hs_status hs_delta_length_encode(const int32_t *offsets, const uint8_t *data, size_t n, hs_buf *out,
                                 hs_error *err) {
  int32_t *lens = lengths_of(offsets, n, err);
  if (!lens) return HS_ERR_NOMEM;
  hs_status st = delta_encode(lens, NULL, n, out, err);
  hs_free(lens);
  if (st != HS_OK) return st;
  size_t total = n ? (size_t)(offsets[n] - offsets[0]) : 0;
  if (total > 0 && !hs_buf_append(out, data + offsets[0], total)) {
    return hs_error_set(err, HS_ERR_NOMEM, "DELTA_LENGTH_BYTE_ARRAY: out of memory");
  }
  return HS_OK;
}

/* ------------------------------------------------------ DELTA_BYTE_ARRAY */

/* Decode the prefix lengths and suffix lengths (into `prefix` and `suffix`,
 * n each) and return in *data_pos where the suffix bytes begin. */
static hs_status dba_lengths(const uint8_t *buf, size_t len, size_t n, int32_t *prefix,
                             int32_t *suffix, size_t *data_pos, hs_error *err) {
  size_t p1, p2;
  hs_status st = delta_decode(buf, len, prefix, NULL, n, &p1, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "DELTA_BYTE_ARRAY prefix lengths: ");
    return st;
  }
  st = delta_decode(buf + p1, len - p1, suffix, NULL, n, &p2, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "DELTA_BYTE_ARRAY suffix lengths: ");
    return st;
  }
  *data_pos = p1 + p2;
  return HS_OK;
}

hs_status hs_delta_byte_array_decode(const uint8_t *buf, size_t len, size_t n, int32_t *offsets,
                                     hs_buf *data, size_t *consumed, hs_error *err) {
  int32_t *prefix = hs_malloc(n ? n * sizeof *prefix : 1);
  if (!prefix) return hs_error_set(err, HS_ERR_NOMEM, "DELTA_BYTE_ARRAY: out of memory");
  size_t pos;
  /* Suffix lengths go to offsets[1..n], overwritten by offsets as we go. */
  hs_status st = dba_lengths(buf, len, n, prefix, offsets + 1, &pos, err);
  int64_t prev_start = offsets[0], prev_len = 0;
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    int32_t pl = prefix[i], sl = offsets[i + 1];
    if (pl < 0 || pl > prev_len || sl < 0 || (size_t)sl > len - pos) {
      st = hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BYTE_ARRAY: value %zu: prefix %d of a %lld-byte previous value, "
                        "suffix %d with %zu bytes remaining",
                        i, pl, (long long)prev_len, sl, len - pos);
      break;
    }
    int64_t start = prev_start + prev_len;
    int64_t end = start + pl + sl;
    if (end > INT32_MAX) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "DELTA_BYTE_ARRAY: more than 2^31-1 bytes of values in one batch");
      break;
    }
    if (!hs_buf_reserve(data, (size_t)pl + (size_t)sl)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "DELTA_BYTE_ARRAY: out of memory");
      break;
    }
    if (pl + sl > 0) {
      /* The previous value is the last thing appended to data. */
      uint8_t *dst = data->data + data->len;
      if (pl > 0) memcpy(dst, dst - prev_len, (size_t)pl);
      if (sl > 0) memcpy(dst + pl, buf + pos, (size_t)sl);
      data->len += (size_t)pl + (size_t)sl;
    }
    pos += (size_t)sl;
    offsets[i + 1] = (int32_t)end;
    prev_start = start;
    prev_len = pl + sl;
  }
  hs_free(prefix);
  if (st == HS_OK && consumed) *consumed = pos;
  return st;
}

hs_status hs_delta_byte_array_decode_fixed(const uint8_t *buf, size_t len, size_t n, int width,
                                           uint8_t *out, size_t *consumed, hs_error *err) {
  if (width <= 0) {
    return hs_error_set(err, HS_ERR_CORRUPT, "DELTA_BYTE_ARRAY: invalid width %d", width);
  }
  size_t bytes;
  if (!hs_mul_size(n ? n : 1, 2 * sizeof(int32_t), &bytes)) {
    return hs_error_set(err, HS_ERR_NOMEM, "DELTA_BYTE_ARRAY: %zu values is too many", n);
  }
  int32_t *prefix = hs_malloc(bytes);
  if (!prefix) return hs_error_set(err, HS_ERR_NOMEM, "DELTA_BYTE_ARRAY: out of memory");
  int32_t *suffix = prefix + n;
  size_t pos;
  hs_status st = dba_lengths(buf, len, n, prefix, suffix, &pos, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    int32_t pl = prefix[i], sl = suffix[i];
    if (pl < 0 || sl < 0 || (i == 0 && pl != 0) || (int64_t)pl + sl != width ||
        (size_t)sl > len - pos) {
      st = hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BYTE_ARRAY: value %zu: prefix %d + suffix %d is not the width %d "
                        "(or %zu bytes remain)",
                        i, pl, sl, width, len - pos);
      break;
    }
    uint8_t *dst = out + i * (size_t)width;
    if (pl > 0) memcpy(dst, dst - width, (size_t)pl);
    if (sl > 0) memcpy(dst + pl, buf + pos, (size_t)sl);
    pos += (size_t)sl;
  }
  hs_free(prefix);
  if (st == HS_OK && consumed) *consumed = pos;
  return st;
}

hs_status hs_delta_byte_array_encode(const int32_t *offsets, const uint8_t *data, size_t n,
                                     hs_buf *out, hs_error *err) {
  size_t bytes;
  if (!hs_mul_size(n ? n : 1, 2 * sizeof(int32_t), &bytes)) {
    return hs_error_set(err, HS_ERR_NOMEM, "DELTA_BYTE_ARRAY: %zu values is too many", n);
  }
  int32_t *prefix = hs_malloc(bytes);
  if (!prefix) return hs_error_set(err, HS_ERR_NOMEM, "DELTA_BYTE_ARRAY: out of memory");
  int32_t *suffix = prefix + n;
  for (size_t i = 0; i < n; i++) {
    int32_t l = offsets[i + 1] - offsets[i], p = 0;
    int32_t lim = i > 0 ? offsets[i] - offsets[i - 1] : 0;
    if (lim > l) lim = l;
    if (lim > 0) {
      const uint8_t *a = data + offsets[i - 1], *b = data + offsets[i];
      while (p < lim && a[p] == b[p]) p++;
    }
    prefix[i] = p;
    suffix[i] = l - p;
  }
  hs_status st = delta_encode(prefix, NULL, n, out, err);
  if (st == HS_OK) st = delta_encode(suffix, NULL, n, out, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    if (suffix[i] > 0 && !hs_buf_append(out, data + offsets[i] + prefix[i], (size_t)suffix[i])) {
      st = hs_error_set(err, HS_ERR_NOMEM, "DELTA_BYTE_ARRAY: out of memory");
    }
  }
  hs_free(prefix);
  return st;
}
