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

/* Parse and check the stream header; *pos: the first block. */
static hs_status delta_header(const uint8_t *buf, size_t len, size_t *pos, uint64_t *block_size,
                              uint64_t *mb_count, uint64_t *total, uint64_t *first, hs_error *err) {
  uint64_t first_zz;
  if (!hs_varint_read(buf, len, pos, block_size) || !hs_varint_read(buf, len, pos, mb_count) ||
      !hs_varint_read(buf, len, pos, total) || !hs_varint_read(buf, len, pos, &first_zz)) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BINARY_PACKED: truncated or invalid header (%zu bytes)", len);
  }
  if (*block_size == 0 || *block_size % 128 != 0 || *block_size > HS_DELTA_BLOCK_MAX ||
      *mb_count == 0 || *block_size % *mb_count != 0 || (*block_size / *mb_count) % 32 != 0) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BINARY_PACKED: invalid block size %llu with %llu miniblocks",
                        (unsigned long long)*block_size, (unsigned long long)*mb_count);
  }
  *first = (uint64_t)hs_zigzag_decode(first_zz);
  return HS_OK;
}

/* Decode n values into out32 or out64 (exactly one is not NULL). */
static hs_status delta_decode(const uint8_t *buf, size_t len, int32_t *out32, int64_t *out64,
                              size_t n, size_t *consumed, hs_error *err) {
  size_t pos = 0;
  uint64_t block_size, mb_count, total, prev;
  hs_status hst = delta_header(buf, len, &pos, &block_size, &mb_count, &total, &prev, err);
  if (hst != HS_OK) return hst;
  if (total < n) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BINARY_PACKED: stream holds %llu values, %zu expected",
                        (unsigned long long)total, n);
  }
  const size_t vpm = (size_t)(block_size / mb_count);
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

/* ------------------------------------------------------ random access
 *
 * A directory (encoding.h) records per miniblock where its deltas start,
 * their width and the value its first delta applies to; value i is then
 * that running value plus the deltas in front of i in its miniblock.
 * Building it costs one pass that sums the deltas (no values stored); a
 * cursor then unpacks only a miniblock's prefix: one or two cache lines
 * for the usual 32-delta miniblocks, where a per-block directory had to
 * sum up to three miniblocks in front and parse the block header first.
 */

/* Unpack c (<= HS_DELTA_SEG) deltas of bit width bw at buf[pos], a group
 * boundary; false when the stream ends first. */
static bool delta_unpack(const uint8_t *buf, size_t len, size_t pos, int bw, size_t c,
                         uint64_t *out) {
  size_t need = 0;
  if (pos > len || !hs_packed_bytes(c, bw, &need) || need > len - pos) return false;
  hs_unpack_u64(buf + pos, len - pos, bw, out, c);
  return true;
}

/* *run += the c deltas (min_delta + packed value) at buf[pos]; false when
 * the stream ends first. */
static bool delta_sum(const uint8_t *buf, size_t len, size_t pos, int bw, size_t c,
                      uint64_t min_delta, uint64_t *run) {
  uint64_t sum = (uint64_t)c * min_delta;
  if (pos > len) return false;
  if (bw > 0) {
    uint64_t chunk[HS_DELTA_SEG];
    for (size_t off = 0; off < c; off += HS_DELTA_SEG) {
      size_t k = c - off < HS_DELTA_SEG ? c - off : HS_DELTA_SEG;
      if (!delta_unpack(buf, len, pos + off / 8 * (size_t)bw, bw, k, chunk)) return false;
      for (size_t i = 0; i < k; i++) sum += chunk[i];
    }
  }
  *run += sum;
  return true;
}

/* The header of the block at buf[*pos]: min delta and one bit width per
 * miniblock; *pos moves to its first miniblock. */
static hs_status delta_block_header(const uint8_t *buf, size_t len, size_t *pos, uint64_t mb_count,
                                    uint64_t *min_delta, const uint8_t **widths, hs_error *err) {
  size_t at = *pos;
  uint64_t zz;
  if (at > len || !hs_varint_read(buf, len, pos, &zz)) {
    return hs_error_set(err, HS_ERR_CORRUPT, "DELTA_BINARY_PACKED: truncated min delta at byte %zu",
                        at);
  }
  if (mb_count > len - *pos) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BINARY_PACKED: truncated bit widths at byte %zu", *pos);
  }
  *min_delta = (uint64_t)hs_zigzag_decode(zz);
  *widths = buf + *pos;
  *pos += (size_t)mb_count;
  return HS_OK;
}

static hs_status delta_width_corrupt(hs_error *err, int bw, size_t block_pos) {
  return hs_error_set(err, HS_ERR_CORRUPT,
                      "DELTA_BINARY_PACKED: miniblock bit width %d at byte %zu is over 64", bw,
                      block_pos);
}

hs_status hs_delta_dir_build(const uint8_t *buf, size_t len, uint64_t total_max, hs_delta_dir *out,
                             hs_error *err) {
  memset(out, 0, sizeof *out);
  size_t pos = 0;
  uint64_t block_size, mb_count, total, run;
  hs_status st = delta_header(buf, len, &pos, &block_size, &mb_count, &total, &run, err);
  if (st != HS_OK) return st;
  if (total > total_max) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BINARY_PACKED: stream holds %llu values, the page at most %llu",
                        (unsigned long long)total, (unsigned long long)total_max);
  }
  if (len > UINT32_MAX) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "DELTA_BINARY_PACKED: stream of %zu bytes", len);
  }
  const size_t vpm = (size_t)(block_size / mb_count);
  uint64_t left = total > 0 ? total - 1 : 0; /* deltas */
  uint64_t n_blocks = left / block_size + (left % block_size != 0);
  uint64_t n_mb = left / vpm + (left % vpm != 0);
  /* A block takes at least 1 + mb_count bytes, so the directory is bounded
   * by the input before it is allocated. */
  size_t b_bytes, m_bytes;
  if (n_blocks > (len - pos) / (1 + mb_count) ||
      !hs_mul_size(n_blocks ? (size_t)n_blocks : 1, sizeof(uint64_t), &b_bytes) ||
      !hs_mul_size(n_mb ? (size_t)n_mb : 1, sizeof(hs_delta_mb), &m_bytes)) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BINARY_PACKED: %llu values need %llu blocks, %zu bytes remain",
                        (unsigned long long)total, (unsigned long long)n_blocks, len - pos);
  }
  uint64_t *mins = hs_malloc(b_bytes);
  hs_delta_mb *mbs = hs_malloc(m_bytes);
  if (mins == NULL || mbs == NULL) {
    hs_free(mins);
    hs_free(mbs);
    return hs_error_set(err, HS_ERR_NOMEM, "DELTA_BINARY_PACKED: out of memory for %llu blocks",
                        (unsigned long long)n_blocks);
  }
  out->first = run;
  size_t k = 0;
  for (uint64_t b = 0; b < n_blocks && st == HS_OK; b++) {
    size_t block_pos = pos;
    const uint8_t *widths = NULL;
    st = delta_block_header(buf, len, &pos, mb_count, &mins[b], &widths, err);
    for (size_t m = 0; st == HS_OK && m < mb_count && left > 0; m++) {
      int bw = widths[m];
      if (bw > 64) {
        st = delta_width_corrupt(err, bw, block_pos);
        break;
      }
      mbs[k++] = (hs_delta_mb){run, (uint32_t)pos, (uint8_t)bw};
      size_t mb_bytes = vpm / 8 * (size_t)bw;
      size_t in_mb = left < vpm ? (size_t)left : vpm;
      size_t avail = len - pos, need = 0;
      hs_packed_bytes(in_mb, bw, &need);
      /* Every miniblock but the stream's last must be complete. */
      if (need > avail || (left > in_mb && mb_bytes > avail) ||
          !delta_sum(buf, len, pos, bw, in_mb, mins[b], &run)) {
        st = hs_error_set(err, HS_ERR_CORRUPT,
                          "DELTA_BINARY_PACKED: miniblock at byte %zu needs %zu bytes, %zu remain",
                          pos, left > in_mb ? mb_bytes : need, avail);
        break;
      }
      pos += mb_bytes < avail ? mb_bytes : avail;
      left -= in_mb;
    }
  }
  if (st != HS_OK) {
    hs_free(mins);
    hs_free(mbs);
    return st;
  }
  out->block_size = (uint32_t)block_size;
  out->mb_count = (uint32_t)mb_count;
  out->total = total;
  out->n_blocks = (size_t)n_blocks;
  out->n_mb = k;
  out->min_delta = mins;
  out->mb = mbs;
  out->end = pos;
  return HS_OK;
}

void hs_delta_dir_free(hs_delta_dir *dir) {
  if (dir == NULL) return;
  hs_free(dir->min_delta);
  hs_free(dir->mb);
  memset(dir, 0, sizeof *dir);
}

size_t hs_delta_dir_bytes(const hs_delta_dir *dir) {
  return sizeof *dir + dir->n_blocks * sizeof(uint64_t) + dir->n_mb * sizeof(hs_delta_mb);
}

void hs_delta_cursor_init(hs_delta_cursor *c, const hs_delta_dir *dir, const uint8_t *buf,
                          size_t len) {
  c->dir = dir;
  c->buf = buf;
  c->len = len;
  c->seg_first = -1;
  c->seg_n = 0;
}

hs_status hs_delta_cursor_get(hs_delta_cursor *c, int64_t i, uint64_t *out, hs_error *err) {
  const hs_delta_dir *d = c->dir;
  if (i < 0 || (uint64_t)i >= d->total) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BINARY_PACKED: value %lld asked of a stream of %llu", (long long)i,
                        (unsigned long long)d->total);
  }
  if (i == 0) {
    *out = d->first;
    return HS_OK;
  }
  if (c->seg_first >= 0 && i >= c->seg_first && (uint64_t)(i - c->seg_first) < c->seg_n) {
    *out = c->seg[i - c->seg_first];
    return HS_OK;
  }
  const size_t vpm = d->block_size / d->mb_count;
  uint64_t delta = (uint64_t)i - 1;
  size_t m = (size_t)(delta / vpm), j = (size_t)(delta % vpm);
  const hs_delta_mb *e = &d->mb[m]; /* m < n_mb: i < total */
  uint64_t min_delta = d->min_delta[delta / d->block_size], run = e->value;
  /* Whole segments in front of j (miniblocks of more than HS_DELTA_SEG). */
  size_t lo = j / HS_DELTA_SEG * HS_DELTA_SEG;
  if (lo > 0 && !delta_sum(c->buf, c->len, e->offset, e->bw, lo, min_delta, &run)) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BINARY_PACKED: miniblock at byte %u is truncated", e->offset);
  }
  /* This segment's prefix up to j, rounded up to a group of 8 but not past
   * the stream's last delta. */
  size_t n = (j - lo + 8) & ~(size_t)7;
  uint64_t left = d->total - 1 - (delta - (j - lo));
  if (n > left) n = (size_t)left;
  if (e->bw == 0) {
    for (size_t k = 0; k < n; k++) c->seg[k] = 0;
  } else if (!delta_unpack(c->buf, c->len, e->offset + lo / 8 * e->bw, e->bw, n, c->seg)) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "DELTA_BINARY_PACKED: miniblock at byte %u is truncated", e->offset);
  }
  for (size_t k = 0; k < n; k++) c->seg[k] = run += min_delta + c->seg[k];
  c->seg_first = (int64_t)(1 + delta - (j - lo));
  c->seg_n = n;
  *out = c->seg[j - lo];
  return HS_OK;
}

void hs_delta_cursor_prefetch(const hs_delta_cursor *c, int64_t i, bool data) {
  const hs_delta_dir *d = c->dir;
  if (i <= 0 || (uint64_t)i >= d->total) return;
  const size_t vpm = d->block_size / d->mb_count;
  uint64_t delta = (uint64_t)i - 1;
  const hs_delta_mb *e = &d->mb[delta / vpm];
  if (!data) {
    __builtin_prefetch(e);
    return;
  }
  size_t at = e->offset + (size_t)(delta % vpm % HS_DELTA_SEG / 8 * e->bw);
  if (at < c->len) __builtin_prefetch(c->buf + at);
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
