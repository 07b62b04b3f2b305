/*
 * inverted_format.c — the byte-level pieces shared by the builder and the
 * reader of scalar inverted indexes: the blob header, Arrow type to key
 * type, key tables (view, comparison, binary search) and CRoaring's
 * portable bitmap format.
 *
 * CRoaring 0.2.66's roaring_bitmap_portable_deserialize_safe only checks
 * that it stays inside the buffer: it trusts sortedness, cardinalities and
 * run bounds, and later operations on a bitmap that breaks those invariants
 * misbehave. So every bitmap read from a file is first checked here, byte
 * by byte, against the format (RoaringFormatSpec) and against the data
 * file's row count.
 */
#include "sidx_internal.h"

#define ROARING_COOKIE_NO_RUN 12346u
#define ROARING_COOKIE_RUN 12347u
#define ROARING_NO_OFFSET_THRESHOLD 4u
#define ROARING_ARRAY_MAX 4096u
#define ROARING_BITSET_BYTES 8192u

/* -------------------------------------------------------------- header */

void hs_sidx_header_write(const hs_sidx_header *h, uint8_t out[HS_SIDX_HEADER_BYTES]) {
  memset(out, 0, HS_SIDX_HEADER_BYTES);
  memcpy(out, (h->flags & HS_SIDX_FLAG_LOSSY) ? HS_SIDX_MAGIC_LOSSY : HS_SIDX_MAGIC, 4);
  out[4] = h->layout;
  out[5] = h->key_type;
  out[6] = (uint8_t)h->key_width;
  out[7] = (uint8_t)(h->key_width >> 8);
  hs_store_u32le(out + 8, h->row_count);
  hs_store_u32le(out + 12, h->null_count);
  hs_store_u32le(out + 16, h->n_entries);
  hs_store_u32le(out + 20, h->block_rows);
  hs_store_u32le(out + 24, (uint32_t)h->decimal_scale);
  hs_store_u32le(out + 28, h->flags);
  hs_store_u64le(out + 32, h->null_len);
  hs_store_u64le(out + 40, h->keys_len);
  hs_store_u64le(out + 48, h->dir_len);
  hs_store_u64le(out + 56, h->data_len);
}

hs_status hs_sidx_header_parse(const uint8_t *p, uint64_t blob_len, hs_sidx_header *h,
                               const char *column, hs_error *err) {
  bool v2 = blob_len >= HS_SIDX_HEADER_BYTES && memcmp(p, HS_SIDX_MAGIC_LOSSY, 4) == 0;
  if (blob_len < HS_SIDX_HEADER_BYTES || (!v2 && memcmp(p, HS_SIDX_MAGIC, 4) != 0))
    return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: blob is not an inverted index",
                        column);
  h->layout = p[4];
  h->key_type = p[5];
  h->key_width = (uint16_t)(p[6] | p[7] << 8);
  h->row_count = hs_load_u32le(p + 8);
  h->null_count = hs_load_u32le(p + 12);
  h->n_entries = hs_load_u32le(p + 16);
  h->block_rows = hs_load_u32le(p + 20);
  h->decimal_scale = (int32_t)hs_load_u32le(p + 24);
  h->null_len = hs_load_u64le(p + 32);
  h->keys_len = hs_load_u64le(p + 40);
  h->dir_len = hs_load_u64le(p + 48);
  h->data_len = hs_load_u64le(p + 56);
  h->flags = hs_load_u32le(p + 28);
  if ((!v2 && (h->flags & ~HS_SIDX_FLAG_PACKED) != 0) || (v2 && h->flags != HS_SIDX_FLAG_LOSSY) ||
      (h->flags != 0 && h->layout != HS_SIDX_LAYOUT_SORTED))
    return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: unknown header flags 0x%x", column,
                        h->flags);
  uint16_t want_width;
  switch (h->key_type) {
  case HS_SIDX_KT_BOOL: want_width = 1; break;
  case HS_SIDX_KT_INT:
  case HS_SIDX_KT_UINT:
  case HS_SIDX_KT_FLOAT: want_width = 8; break;
  case HS_SIDX_KT_BYTES: want_width = 0; break;
  case HS_SIDX_KT_DECIMAL: want_width = 16; break;
  case HS_SIDX_KT_FIXED: want_width = h->key_width ? h->key_width : 1; break;
  default:
    return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: unknown key type %u", column,
                        h->key_type);
  }
  if (h->key_width != want_width)
    return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: key width %u for key type %u",
                        column, h->key_width, h->key_type);
  if (h->key_type == HS_SIDX_KT_DECIMAL ? (h->decimal_scale < 0 || h->decimal_scale > 38)
                                        : h->decimal_scale != 0)
    return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: decimal scale %d", column,
                        (int)h->decimal_scale);
  if (h->layout == HS_SIDX_LAYOUT_DICT) {
    if (h->block_rows != 0)
      return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: block size in a DICT index",
                          column);
  } else if (h->layout == HS_SIDX_LAYOUT_SORTED) {
    if (h->block_rows == 0 || h->block_rows > HS_SIDX_BLOCK_ROWS_MAX)
      return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: block size %u", column,
                          h->block_rows);
  } else {
    return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: unknown layout %u", column,
                        h->layout);
  }
  if (h->null_count > h->row_count || h->n_entries > h->row_count - h->null_count)
    return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: %u nulls and %u entries in %u rows",
                        column, h->null_count, h->n_entries, h->row_count);
  /* Sections are back to back and end at the blob's end. */
  uint64_t rest = blob_len - HS_SIDX_HEADER_BYTES;
  const uint64_t lens[4] = {h->null_len, h->keys_len, h->dir_len, h->data_len};
  for (int i = 0; i < 4; i++) {
    if (lens[i] > rest)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "index column %s: section %d (%" PRIu64 " bytes) overruns the blob",
                          column, i, lens[i]);
    rest -= lens[i];
  }
  if (rest != 0)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "index column %s: %" PRIu64 " bytes after the last section", column, rest);
  /* The directory's size is fixed by the entry count. */
  uint64_t dir_want = h->layout == HS_SIDX_LAYOUT_DICT
                          ? ((uint64_t)h->n_entries + 1) * 8
                          : (uint64_t)h->n_entries * HS_SIDX_DIR_SORTED_ENTRY;
  if (h->dir_len != dir_want)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "index column %s: directory of %" PRIu64 " bytes for %u entries", column,
                        h->dir_len, h->n_entries);
  return HS_OK;
}

hs_status hs_sidx_key_type_of(const hs_arrow_type *t, hs_sidx_key_type *kt, uint16_t *width,
                              hs_error *err) {
  switch (t->id) {
  case HS_AT_BOOL: *kt = HS_SIDX_KT_BOOL, *width = 1; return HS_OK;
  case HS_AT_INT8:
  case HS_AT_INT16:
  case HS_AT_INT32:
  case HS_AT_INT64:
  case HS_AT_DATE32:
  case HS_AT_DATE64:
  case HS_AT_TIME32:
  case HS_AT_TIME64:
  case HS_AT_TIMESTAMP:
  case HS_AT_DURATION: *kt = HS_SIDX_KT_INT, *width = 8; return HS_OK;
  case HS_AT_UINT8:
  case HS_AT_UINT16:
  case HS_AT_UINT32:
  case HS_AT_UINT64: *kt = HS_SIDX_KT_UINT, *width = 8; return HS_OK;
  case HS_AT_FLOAT32:
  case HS_AT_FLOAT64: *kt = HS_SIDX_KT_FLOAT, *width = 8; return HS_OK;
  case HS_AT_STRING:
  case HS_AT_LARGE_STRING:
  case HS_AT_BINARY:
  case HS_AT_LARGE_BINARY: *kt = HS_SIDX_KT_BYTES, *width = 0; return HS_OK;
  case HS_AT_FIXED_BINARY:
    if (t->width <= 0 || t->width > 65535) break;
    *kt = HS_SIDX_KT_FIXED, *width = (uint16_t)t->width;
    return HS_OK;
  case HS_AT_DECIMAL128: *kt = HS_SIDX_KT_DECIMAL, *width = 16; return HS_OK;
  default: break;
  }
  return hs_error_set(err, HS_ERR_UNSUPPORTED, "scalar index: unsupported column type %d",
                      (int)t->id);
}

/* ---------------------------------------------------------------- keys */

hs_status hs_sidx_keys_bind(hs_sidx_keys *k, const uint8_t *p, size_t len, uint32_t n,
                            uint16_t width, hs_error *err) {
  k->p = p;
  k->len = len;
  k->n = n;
  k->width = width;
  k->heap = NULL;
  if (width != 0) {
    if ((uint64_t)n * width != len)
      return hs_error_set(err, HS_ERR_CORRUPT, "key table: %zu bytes for %u keys of %u bytes", len,
                          n, width);
    return HS_OK;
  }
  uint64_t offs = ((uint64_t)n + 1) * 4;
  if (offs > len)
    return hs_error_set(err, HS_ERR_CORRUPT, "key table: %zu bytes cannot hold %u offsets", len,
                        n + 1);
  k->heap = p + offs;
  uint64_t heap_len = len - offs;
  uint32_t prev = 0;
  for (uint64_t i = 0; i <= n; i++) {
    uint32_t o = hs_load_u32le(p + i * 4);
    if ((i == 0 && o != 0) || o < prev || o > heap_len)
      return hs_error_set(err, HS_ERR_CORRUPT, "key table: offset %" PRIu64 " is %u", i, o);
    prev = o;
  }
  if (prev != heap_len)
    return hs_error_set(err, HS_ERR_CORRUPT, "key table: keys end at %u of %" PRIu64, prev,
                        heap_len);
  return HS_OK;
}

int hs_sidx_key_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
  if (na == 8 && nb == 8) { /* numeric keys: one big-endian word each */
    uint64_t x = hs_sidx_load_u64be(a), y = hs_sidx_load_u64be(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  size_t m = na < nb ? na : nb;
  int c = m ? memcmp(a, b, m) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  return na < nb ? -1 : na > nb ? 1 : 0;
}

uint32_t hs_sidx_keys_lower_bound(const hs_sidx_keys *k, uint32_t first, uint32_t stride,
                                  uint32_t n, const uint8_t *probe, size_t probe_len, bool strict) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    size_t kl;
    const uint8_t *kp = hs_sidx_keys_get(k, first + mid * stride, &kl);
    int c = hs_sidx_key_cmp(kp, kl, probe, probe_len);
    if (c < 0 || (strict && c == 0))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* ------------------------------------------------------------- roaring */

/* Set bits [lo, hi] of words (hi < row_count: checked by the caller). */
static void words_set_range(uint64_t *words, uint64_t lo, uint64_t hi) {
  uint64_t w0 = lo >> 6, w1 = hi >> 6;
  uint64_t m0 = ~0ull << (lo & 63), m1 = ~0ull >> (63 - (hi & 63));
  if (w0 == w1) {
    words[w0] |= m0 & m1;
    return;
  }
  words[w0] |= m0;
  for (uint64_t w = w0 + 1; w < w1; w++) words[w] = ~0ull;
  words[w1] |= m1;
}

/* The check of hs_sidx_roaring_check; with words (row_count bits) not
 * NULL, each container's values are OR-ed into them as it is checked
 * (their state is unspecified when the check fails). */
/* The cookie, container count, run flags, (key, card - 1) pairs and
 * offsets of a portable bitmap, each checked to fit in len. */
static hs_status roaring_head(const uint8_t *p, size_t len, hs_sidx_roaring_view *v,
                              hs_error *err) {
  memset(v, 0, sizeof *v);
  v->p = p;
  v->len = len;
  if (len < 4) return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: %zu bytes", len);
  uint32_t cookie = hs_load_u32le(p);
  size_t pos = 4, n;
  bool offsets;
  if (cookie == ROARING_COOKIE_NO_RUN) {
    if (len < 8) return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: truncated container count");
    n = hs_load_u32le(p + 4);
    pos = 8;
    offsets = true;
    if (n > 65536) return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: %zu containers", n);
  } else if ((cookie & 0xFFFF) == ROARING_COOKIE_RUN) {
    n = (cookie >> 16) + 1;
    v->run_flags = p + pos;
    if ((n + 7) / 8 > len - pos)
      return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: truncated run flags");
    pos += (n + 7) / 8;
    offsets = n >= ROARING_NO_OFFSET_THRESHOLD;
  } else {
    return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: unknown cookie 0x%08x", cookie);
  }
  if (n * 4 > len - pos) return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: truncated keys");
  v->desc = p + pos;
  pos += n * 4;
  if (offsets) {
    if (n * 4 > len - pos) return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: truncated offsets");
    v->offs = p + pos;
    pos += n * 4;
  }
  v->n = (uint32_t)n;
  v->data = pos;
  return HS_OK;
}

static hs_status roaring_walk(const uint8_t *p, size_t len, uint32_t row_count, uint64_t *card,
                              uint64_t *words, hs_error *err) {
  *card = 0;
  hs_sidx_roaring_view head;
  hs_status st = roaring_head(p, len, &head, err);
  if (st != HS_OK) return st;
  size_t pos = head.data, n = head.n;
  const uint8_t *run_flags = head.run_flags, *desc = head.desc, *offs = head.offs;
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t key = (uint32_t)(desc[i * 4] | desc[i * 4 + 1] << 8);
    uint32_t c = (uint32_t)(desc[i * 4 + 2] | desc[i * 4 + 3] << 8) + 1;
    if (i > 0 && key <= (uint32_t)(desc[i * 4 - 4] | desc[i * 4 - 3] << 8))
      return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: container keys not increasing at %zu", i);
    if (offs != NULL && hs_load_u32le(offs + i * 4) != pos)
      return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: container %zu offset %u, expected %zu", i,
                          hs_load_u32le(offs + i * 4), pos);
    uint32_t max_low;
    if (run_flags != NULL && (run_flags[i / 8] >> (i % 8) & 1)) {
      if (len - pos < 2) return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: truncated run count");
      uint32_t runs = (uint32_t)(p[pos] | p[pos + 1] << 8);
      pos += 2;
      if ((size_t)runs * 4 > len - pos || runs == 0)
        return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: %u runs in container %zu", runs, i);
      uint32_t sum = 0, next_min = 0;
      for (uint32_t r = 0; r < runs; r++, pos += 4) {
        uint32_t start = (uint32_t)(p[pos] | p[pos + 1] << 8);
        uint32_t extra = (uint32_t)(p[pos + 2] | p[pos + 3] << 8);
        if (start < next_min || start + extra > 0xFFFF)
          return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: run %u of container %zu out of order",
                              r, i);
        next_min = start + extra + 1;
        sum += extra + 1;
      }
      if (sum != c)
        return hs_error_set(err, HS_ERR_CORRUPT,
                            "bitmap: container %zu runs hold %u values, header says %u", i, sum, c);
      max_low = next_min - 1;
      if (words != NULL && ((uint64_t)key << 16 | max_low) < row_count)
        for (uint32_t r = 0; r < runs; r++) {
          const uint8_t *q = p + pos - (size_t)(runs - r) * 4;
          uint64_t start = (uint64_t)key << 16 | (uint32_t)(q[0] | q[1] << 8);
          words_set_range(words, start, start + (uint32_t)(q[2] | q[3] << 8));
        }
    } else if (c > ROARING_ARRAY_MAX) {
      if (len - pos < ROARING_BITSET_BYTES)
        return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: truncated bitset container %zu", i);
      uint32_t bits = 0;
      max_low = 0;
      for (uint32_t w = 0; w < ROARING_BITSET_BYTES / 8; w++) {
        uint64_t word = hs_load_u64le(p + pos + w * 8);
        bits += (uint32_t)__builtin_popcountll(word);
        if (word) max_low = w * 64 + 63 - (uint32_t)__builtin_clzll(word);
      }
      if (bits != c)
        return hs_error_set(err, HS_ERR_CORRUPT,
                            "bitmap: bitset container %zu holds %u values, header says %u", i, bits,
                            c);
      if (words != NULL && ((uint64_t)key << 16 | max_low) < row_count) {
        /* the words below row_count (the container's higher bits are 0) */
        uint64_t w0 = (uint64_t)key * 1024, nw = ((uint64_t)row_count + 63) / 64;
        uint64_t cnt = nw - w0 < 1024 ? nw - w0 : 1024;
        for (uint64_t w = 0; w < cnt; w++) words[w0 + w] |= hs_load_u64le(p + pos + w * 8);
      }
      pos += ROARING_BITSET_BYTES;
    } else {
      if ((size_t)c * 2 > len - pos)
        return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: truncated array container %zu", i);
      uint32_t prev = 0;
      for (uint32_t j = 0; j < c; j++) {
        uint32_t v = (uint32_t)(p[pos + j * 2] | p[pos + j * 2 + 1] << 8);
        if (j > 0 && v <= prev)
          return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: array container %zu not sorted", i);
        prev = v;
      }
      max_low = prev;
      if (words != NULL && ((uint64_t)key << 16 | max_low) < row_count)
        for (uint32_t j = 0; j < c; j++) {
          uint32_t v = key << 16 | (uint32_t)(p[pos + j * 2] | p[pos + j * 2 + 1] << 8);
          words[v >> 6] |= 1ull << (v & 63);
        }
      pos += (size_t)c * 2;
    }
    if (((uint64_t)key << 16 | max_low) >= row_count)
      return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: row %" PRIu64 " past the %u rows",
                          (uint64_t)key << 16 | max_low, row_count);
    total += c;
  }
  if (pos != len) return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: %zu trailing bytes", len - pos);
  *card = total;
  return HS_OK;
}

static inline uint32_t u16le(const uint8_t *p) {
  return (uint32_t)(p[0] | p[1] << 8);
}

hs_status hs_sidx_roaring_view_init(const uint8_t *p, size_t len, hs_sidx_roaring_view *v,
                                    hs_error *err) {
  hs_status st = roaring_head(p, len, v, err);
  if (st != HS_OK) return st;
  uint64_t card = 0;
  for (uint32_t i = 0; i < v->n; i++) card += u16le(v->desc + (size_t)i * 4 + 2) + 1;
  v->card = card;
  return HS_OK;
}

hs_status hs_sidx_roaring_select(const hs_sidx_roaring_view *v, uint64_t k, uint32_t *value,
                                 hs_error *err) {
  const uint8_t *p = v->p;
  size_t pos = v->data;
  for (uint32_t i = 0; i < v->n; i++) {
    uint32_t key = u16le(v->desc + (size_t)i * 4), c = u16le(v->desc + (size_t)i * 4 + 2) + 1;
    bool run = v->run_flags != NULL && (v->run_flags[i / 8] >> (i % 8) & 1);
    if (v->offs != NULL) pos = hs_load_u32le(v->offs + (size_t)i * 4);
    if (pos > v->len) break;
    size_t avail = v->len - pos;
    if (k >= c) { /* past this container */
      k -= c;
      if (v->offs != NULL) continue;
      if (run && avail < 2) break;
      pos += run ? 2 + (size_t)u16le(p + pos) * 4
                 : (c > ROARING_ARRAY_MAX ? ROARING_BITSET_BYTES : (size_t)c * 2);
      continue;
    }
    int64_t low = -1;
    if (run) {
      uint32_t runs = avail >= 2 ? u16le(p + pos) : 0;
      if ((size_t)runs * 4 > avail - 2 || runs == 0) break;
      for (uint32_t r = 0; r < runs && low < 0; r++) {
        const uint8_t *q = p + pos + 2 + (size_t)r * 4;
        uint32_t start = u16le(q), n = u16le(q + 2) + 1;
        if (k < n)
          low = start + k <= 0xFFFF ? (int64_t)(start + k) : INT64_MAX;
        else
          k -= n;
      }
    } else if (c > ROARING_ARRAY_MAX) {
      if (avail < ROARING_BITSET_BYTES) break;
      for (uint32_t w = 0; w < ROARING_BITSET_BYTES / 8 && low < 0; w++) {
        uint64_t word = hs_load_u64le(p + pos + (size_t)w * 8);
        uint64_t bits = (uint64_t)__builtin_popcountll(word);
        if (k < bits) {
          for (; k > 0; k--) word &= word - 1;
          low = (int64_t)w * 64 + __builtin_ctzll(word);
        } else {
          k -= bits;
        }
      }
    } else {
      if ((size_t)c * 2 > avail) break;
      low = u16le(p + pos + (size_t)k * 2);
    }
    if (low < 0 || low > 0xFFFF) break;
    *value = key << 16 | (uint32_t)low;
    return HS_OK;
  }
  return hs_error_set(err, HS_ERR_CORRUPT, "bitmap: no value of rank %" PRIu64 " in its bytes", k);
}

hs_status hs_sidx_roaring_check(const uint8_t *p, size_t len, uint32_t row_count, uint64_t *card,
                                hs_error *err) {
  return roaring_walk(p, len, row_count, card, NULL, err);
}

hs_status hs_sidx_roaring_or_words(const uint8_t *p, size_t len, uint32_t row_count,
                                   uint64_t *words, hs_error *err) {
  uint64_t card;
  return roaring_walk(p, len, row_count, &card, words, err);
}

hs_status hs_sidx_roaring_from_words(const uint64_t *words, uint32_t row_count,
                                     roaring_bitmap_t **out, hs_error *err) {
  /* The portable format without runs (RoaringFormatSpec): cookie, count,
   * (key, card - 1) per container, offsets, then arrays of u16 (at most
   * 4096 values) or 1024-word bitsets. */
  const uint64_t nw = ((uint64_t)row_count + 63) / 64;
  const size_t chunks = (size_t)((nw + 1023) / 1024);
  size_t n = 0, data = 0;
  uint32_t *cards = hs_malloc((chunks ? chunks : 1) * sizeof *cards);
  if (cards == NULL) return hs_error_set(err, HS_ERR_NOMEM, "bitmap: %zu containers", chunks);
  for (size_t c = 0; c < chunks; c++) {
    uint64_t w0 = (uint64_t)c * 1024, w1 = w0 + 1024 < nw ? w0 + 1024 : nw;
    uint32_t k = 0;
    for (uint64_t w = w0; w < w1; w++) k += (uint32_t)__builtin_popcountll(words[w]);
    cards[c] = k;
    if (k == 0) continue;
    n++;
    data += k > ROARING_ARRAY_MAX ? ROARING_BITSET_BYTES : (size_t)k * 2;
  }
  size_t len = 8 + n * 8 + data;
  uint8_t *b = hs_malloc(len);
  if (b == NULL) {
    hs_free(cards);
    return hs_error_set(err, HS_ERR_NOMEM, "bitmap: %zu bytes", len);
  }
  hs_store_u32le(b, ROARING_COOKIE_NO_RUN);
  hs_store_u32le(b + 4, (uint32_t)n);
  size_t at = 8 + n * 8, i = 0;
  for (size_t c = 0; c < chunks; c++) {
    uint32_t k = cards[c];
    if (k == 0) continue;
    b[8 + i * 4] = (uint8_t)c;
    b[8 + i * 4 + 1] = (uint8_t)(c >> 8);
    b[8 + i * 4 + 2] = (uint8_t)(k - 1);
    b[8 + i * 4 + 3] = (uint8_t)((k - 1) >> 8);
    hs_store_u32le(b + 8 + n * 4 + i * 4, (uint32_t)at);
    uint64_t w0 = (uint64_t)c * 1024, w1 = w0 + 1024 < nw ? w0 + 1024 : nw;
    if (k > ROARING_ARRAY_MAX) {
      memset(b + at, 0, ROARING_BITSET_BYTES);
      for (uint64_t w = w0; w < w1; w++) hs_store_u64le(b + at + (w - w0) * 8, words[w]);
      at += ROARING_BITSET_BYTES;
    } else {
      for (uint64_t w = w0; w < w1; w++)
        for (uint64_t x = words[w]; x != 0; x &= x - 1) {
          uint32_t v = (uint32_t)((w - w0) * 64 + (uint64_t)__builtin_ctzll(x));
          b[at] = (uint8_t)v;
          b[at + 1] = (uint8_t)(v >> 8);
          at += 2;
        }
    }
    i++;
  }
  hs_free(cards);
  roaring_bitmap_t *r = roaring_bitmap_portable_deserialize_safe((const char *)b, len);
  hs_free(b);
  if (r == NULL) return hs_error_set(err, HS_ERR_NOMEM, "bitmap: deserialization failed");
  *out = r;
  return HS_OK;
}

hs_status hs_sidx_roaring_load(const uint8_t *p, size_t len, uint32_t row_count,
                               roaring_bitmap_t **out, hs_error *err) {
  uint64_t card;
  hs_status st = hs_sidx_roaring_check(p, len, row_count, &card, err);
  if (st != HS_OK) return st;
  roaring_bitmap_t *r = roaring_bitmap_portable_deserialize_safe((const char *)p, len);
  if (r == NULL) return hs_error_set(err, HS_ERR_NOMEM, "bitmap: deserialization failed");
  if (roaring_bitmap_get_cardinality(r) != card) {
    roaring_bitmap_free(r);
    return hs_error_set(err, HS_ERR_INTERNAL, "bitmap: cardinality changed in deserialization");
  }
  *out = r;
  return HS_OK;
}

hs_status hs_sidx_roaring_append(roaring_bitmap_t *r, hs_buf *out, hs_error *err) {
  roaring_bitmap_run_optimize(r);
  size_t n = roaring_bitmap_portable_size_in_bytes(r);
  if (!hs_buf_reserve(out, n)) return hs_error_set(err, HS_ERR_NOMEM, "bitmap: %zu bytes", n);
  size_t w = roaring_bitmap_portable_serialize(r, (char *)out->data + out->len);
  if (w != n) return hs_error_set(err, HS_ERR_INTERNAL, "bitmap: wrote %zu of %zu bytes", w, n);
  out->len += n;
  return HS_OK;
}
