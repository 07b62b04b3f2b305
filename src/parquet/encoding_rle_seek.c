/*
 * encoding_rle_seek.c — random access into an RLE/bit-packed hybrid stream
 * (hs_rle_cursor, encoding.h): the value at position i, and how many values
 * before i equal a given one, without decoding the positions in between.
 *
 * The cursor walks run headers only (a varint each) and moves forward;
 * inside a bit-packed run position i sits at bit (i - run start) * width of
 * the run's bytes. Every byte read is inside (buf, len): a run whose bytes
 * are cut short by the end of the stream is usable up to its last complete
 * value, and asking for a position past it is HS_ERR_CORRUPT.
 */
#include <string.h>

#include "encoding_internal.h"

void hs_rle_cursor_init(hs_rle_cursor *c, const uint8_t *buf, size_t len, int bit_width) {
  memset(c, 0, sizeof *c);
  c->buf = buf;
  c->len = len;
  c->bw = bit_width;
}

static hs_status cur_corrupt(const hs_rle_cursor *c, int64_t i, hs_error *err, const char *why) {
  return hs_error_set(err, HS_ERR_CORRUPT,
                      "RLE/bit-packed stream: value %lld: %s (byte %zu of %zu)", (long long)i, why,
                      c->pos, c->len);
}

/* Make the current run the one holding position i (i >= run_start). */
static hs_status cur_seek(hs_rle_cursor *c, int64_t i, hs_error *err) {
  if (i < c->run_start) return cur_corrupt(c, i, err, "cursor moved backwards");
  while (i >= c->run_end) {
    c->run_start = c->run_end;
    if (c->pos >= c->len) {
      if (c->bw == 0) { /* width 0 carries no information: runs may be omitted */
        c->packed = false;
        c->value = 0;
        c->run_end = INT64_MAX;
        continue;
      }
      return cur_corrupt(c, i, err, "the stream ends before it");
    }
    uint64_t h;
    if (!hs_varint_read(c->buf, c->len, &c->pos, &h) || h > UINT32_MAX) {
      return cur_corrupt(c, i, err, "truncated or invalid run header");
    }
    size_t avail = c->len - c->pos;
    if (h & 1) {
      uint64_t groups = h >> 1, bytes = groups * (uint64_t)c->bw;
      c->packed = true;
      c->data = c->buf + c->pos;
      c->data_len = bytes < avail ? (size_t)bytes : avail;
      c->pos += c->data_len;
      c->run_end = c->run_start + (int64_t)(groups * 8);
    } else {
      size_t vb = ((size_t)c->bw + 7) / 8;
      if (vb > avail) return cur_corrupt(c, i, err, "RLE run value truncated");
      uint64_t v = 0;
      for (size_t k = 0; k < vb; k++) v |= (uint64_t)c->buf[c->pos + k] << (8 * k);
      c->pos += vb;
      if (c->bw < 32 && v >> c->bw) return cur_corrupt(c, i, err, "RLE run value too wide");
      c->packed = false;
      c->value = (uint32_t)v;
      c->run_end = c->run_start + (int64_t)(h >> 1);
    }
  }
  return HS_OK;
}

/* Bits [bit, bit + bw) of a packed run, bounds-checked. */
static bool packed_get(const hs_rle_cursor *c, uint64_t bit, uint32_t *out) {
  uint64_t end = bit + (uint64_t)c->bw;
  if (end > (uint64_t)c->data_len * 8) return false;
  if (c->bw == 0) {
    *out = 0;
    return true;
  }
  size_t b0 = (size_t)(bit / 8), nb = (size_t)((end + 7) / 8) - b0; /* <= 5 */
  uint64_t w = 0;
  for (size_t k = 0; k < nb; k++) w |= (uint64_t)c->data[b0 + k] << (8 * k);
  w >>= bit % 8;
  *out = (uint32_t)(w & ((c->bw == 32) ? 0xffffffffu : ((1u << c->bw) - 1)));
  return true;
}

hs_status hs_rle_cursor_get(hs_rle_cursor *c, int64_t i, uint32_t *out, hs_error *err) {
  hs_status st = cur_seek(c, i, err);
  if (st != HS_OK) return st;
  if (!c->packed) {
    *out = c->value;
    return HS_OK;
  }
  if (!packed_get(c, (uint64_t)(i - c->run_start) * (uint64_t)c->bw, out)) {
    return cur_corrupt(c, i, err, "bit-packed run cut short");
  }
  return HS_OK;
}

/* Set bits in [from, to) of d (to <= 8 * bytes available, checked by the
 * caller). */
static int64_t bits_count(const uint8_t *d, uint64_t from, uint64_t to) {
  int64_t n = 0;
  while (from < to && from % 64 != 0) {
    n += (d[from / 8] >> (from % 8)) & 1;
    from++;
  }
  for (; from + 64 <= to; from += 64) {
    uint64_t w;
    memcpy(&w, d + from / 8, 8);
    n += __builtin_popcountll(w);
  }
  for (; from < to; from++) n += (d[from / 8] >> (from % 8)) & 1;
  return n;
}

hs_status hs_rle_cursor_count_to(hs_rle_cursor *c, int64_t i, uint32_t value, int64_t *out,
                                 hs_error *err) {
  if (i < c->count_pos) return cur_corrupt(c, i, err, "cursor moved backwards");
  while (c->count_pos < i) {
    int64_t p = c->count_pos;
    hs_status st = cur_seek(c, p, err);
    if (st != HS_OK) return st;
    int64_t e = i < c->run_end ? i : c->run_end;
    if (!c->packed) {
      c->count += c->value == value ? e - p : 0;
    } else {
      uint64_t a = (uint64_t)(p - c->run_start), b = (uint64_t)(e - c->run_start);
      if (b * (uint64_t)c->bw > (uint64_t)c->data_len * 8) {
        return cur_corrupt(c, e - 1, err, "bit-packed run cut short");
      }
      if (c->bw == 1) {
        int64_t ones = bits_count(c->data, a, b);
        c->count += value == 1 ? ones : value == 0 ? (int64_t)(b - a) - ones : 0;
      } else {
        for (uint64_t k = a; k < b; k++) {
          uint32_t v = 0;
          packed_get(c, k * (uint64_t)c->bw, &v); /* in bounds: checked above */
          c->count += v == value;
        }
      }
    }
    c->count_pos = e;
  }
  *out = c->count;
  return HS_OK;
}
