/*
 * s3_pack.c — hs_store_pack / hs_store_unpack on S3: ranges of many
 * objects, with the HEAD answer (size, mtime, ETag) each was read under,
 * serialised into one buffer, and such a buffer loaded back into the
 * process's object cache (s3_cache.c) as if those ranges had just been
 * fetched. The table layer stores one per metadata version (the index
 * stream, src/table/stream.c): a cold reader GETs it once and the manifest
 * list, manifests, registry, index heads and footers, and data footers a
 * query reads next are all cache hits instead of three or four waves.
 *
 * An item of length 0 with `tail` set stands for every block of its object
 * the cache holds (what a reader just read of it: a lean vector index
 * open reads all but the float32 vectors).
 *
 * Format (little endian): "HSPK", u32 version (1), u32 segment count, then
 * per segment: u16 URI length, URI, u64 object size, i64 mtime (ms), u8
 * ETag length, ETag, u64 offset, u32 length, the bytes; then a u32 CRC-32C
 * of everything before it and "HSPK" again. Segments are whole cache
 * blocks (offset a multiple of HS_S3_CACHE_BLOCK; the end one too or the
 * object's end), so every byte loaded lands in a block.
 *
 * Why loading is safe: the bytes are of objects written once (a stream
 * names only manifests, data, delete and index files), each tagged with
 * the ETag it was read under; a segment whose object the cache already
 * holds under another HEAD is skipped (that HEAD is newer than the pack),
 * and any byte read later that the pack did not bring is fetched with
 * If-Match on the pack's ETag, so a replaced object is the usual "changed
 * while it was being read" error, never a mix. Parsing takes untrusted
 * bytes: every length is checked against what is left (fuzz_index_stream).
 * Owns nothing after it returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_internal.h"

#define PACK_MAGIC "HSPK"
#define PACK_VERSION 1u
#define PACK_SEGMENTS_MAX 65536u

static void put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* One range to pack: [lo, hi) of locs[item], whole blocks. */
typedef struct pk_span {
  size_t item;
  hs_object_info info;
  uint64_t lo, hi;
} pk_span;

static int span_cmp(const void *a, const void *b) {
  const pk_span *x = a, *y = b;
  if (x->item != y->item) return x->item < y->item ? -1 : 1;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static bool append_segment(hs_buf *out, const hs_store_loc *loc, const pk_span *s,
                           const uint8_t *bytes) {
  size_t ul = strlen(loc->uri), el = strlen(s->info.etag);
  if (ul > UINT16_MAX || el > UINT8_MAX || s->hi - s->lo > UINT32_MAX) return true; /* skipped */
  uint8_t h[2 + 8 + 8 + 1 + 8 + 4];
  put_u16(h, (uint16_t)ul);
  if (!hs_buf_append(out, h, 2) || !hs_buf_append(out, loc->uri, ul)) return false;
  put_u64(h, s->info.size);
  put_u64(h + 8, (uint64_t)s->info.mtime_ms);
  h[16] = (uint8_t)el;
  if (!hs_buf_append(out, h, 17) || !hs_buf_append(out, s->info.etag, el)) return false;
  put_u64(h, s->lo);
  put_u32(h + 8, (uint32_t)(s->hi - s->lo));
  return hs_buf_append(out, h, 12) && hs_buf_append(out, bytes, (size_t)(s->hi - s->lo));
}

/* Append `sp` to *spans (*cap doubled when full); false when out of memory. */
static bool span_push(pk_span **spans, size_t *ns, size_t *cap, pk_span sp) {
  if (*ns == *cap) {
    pk_span *g = hs_realloc(*spans, 2 * *cap * sizeof *g);
    if (g == NULL) return false;
    *spans = g;
    *cap *= 2;
  }
  (*spans)[(*ns)++] = sp;
  return true;
}

hs_status hs_s3_pack(const hs_store_loc *locs, const hs_store_prefetch_item *items, size_t n,
                     size_t max_bytes, hs_buf *out, size_t *n_segments, hs_error *err) {
  *n_segments = 0;
  /* What the cache lacks, in one wave; then every range is a cache read. */
  (void)hs_s3_prefetch(locs, items, n, HS_STORE_PREFETCH_MAX);
  size_t cap = n ? n : 1;
  pk_span *spans = hs_calloc(cap, sizeof *spans);
  if (spans == NULL) return hs_error_set(err, HS_ERR_NOMEM, "pack: out of memory");
  const uint64_t B = HS_S3_CACHE_BLOCK;
  size_t ns = 0;
  for (size_t i = 0; i < n; i++) {
    hs_object_info info;
    if ((items[i].len == 0 && !items[i].tail) || locs[i].cfg == NULL ||
        !hs_s3_cache_head_get(&locs[i], &info) || info.size == 0)
      continue; /* not fetched (missing, or no ETag): not packed */
    /* Items of one object share its first index, so they sort together. */
    size_t first = i;
    for (size_t k = 0; k < i; k++)
      if (strcmp(locs[k].uri, locs[i].uri) == 0) {
        first = k;
        break;
      }
    if (items[i].len == 0 && items[i].tail) { /* every block the cache holds */
      for (uint64_t k = 0; k * B < info.size; k++) {
        uint64_t lo = k * B, hi = lo + B < info.size ? lo + B : info.size;
        if (!hs_s3_cache_holds(&locs[i], &info, lo, hi - lo)) continue;
        if (!span_push(&spans, &ns, &cap, (pk_span){first, info, lo, hi})) break;
      }
      continue;
    }
    uint64_t lo, hi;
    if (items[i].tail) {
      lo = info.size > items[i].len ? info.size - items[i].len : 0;
      hi = info.size;
    } else {
      if (items[i].offset >= info.size) continue;
      lo = items[i].offset;
      hi = items[i].len < info.size - lo ? lo + items[i].len : info.size;
    }
    lo = lo / B * B;
    hi = (hi + B - 1) / B * B;
    if (hi > info.size) hi = info.size;
    if (!span_push(&spans, &ns, &cap, (pk_span){first, info, lo, hi})) break;
  }
  qsort(spans, ns, sizeof *spans, span_cmp);
  size_t w = 0;
  for (size_t i = 0; i < ns; i++) {
    if (w > 0 && spans[w - 1].item == spans[i].item && spans[i].lo <= spans[w - 1].hi) {
      if (spans[i].hi > spans[w - 1].hi) spans[w - 1].hi = spans[i].hi;
      continue;
    }
    spans[w++] = spans[i];
  }
  size_t base = out->len;
  uint8_t h[12];
  memcpy(h, PACK_MAGIC, 4);
  put_u32(h + 4, PACK_VERSION);
  put_u32(h + 8, 0);
  hs_status st =
      hs_buf_append(out, h, 12) ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "pack: out of memory");
  uint64_t total = 0;
  uint8_t *tmp = NULL;
  for (size_t i = 0; st == HS_OK && i < w && *n_segments < PACK_SEGMENTS_MAX; i++) {
    const pk_span *s = &spans[i];
    size_t len = (size_t)(s->hi - s->lo);
    if (total + len > max_bytes) continue; /* what fits, first items first */
    uint8_t *t = hs_realloc(tmp, len ? len : 1);
    if (t == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "pack: out of memory");
      break;
    }
    tmp = t;
    hs_error e = {0};
    /* Normally from the cache; a range it could not hold is fetched. */
    if (hs_s3_cache_read(&locs[s->item], &s->info, s->lo, len, tmp, &e) != HS_OK) continue;
    if (!append_segment(out, &locs[s->item], s, tmp)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "pack: out of memory");
      break;
    }
    total += len;
    (*n_segments)++;
  }
  hs_free(tmp);
  hs_free(spans);
  if (st == HS_OK) {
    put_u32(out->data + base + 8, (uint32_t)*n_segments);
    uint8_t f[8];
    put_u32(f, hs_crc32c_extend(0, out->data + base, out->len - base));
    memcpy(f + 4, PACK_MAGIC, 4);
    if (!hs_buf_append(out, f, 8)) st = hs_error_set(err, HS_ERR_NOMEM, "pack: out of memory");
  }
  if (st != HS_OK) out->len = base;
  return st;
}

/* One parsed segment (pointers into the pack). */
typedef struct pk_seg {
  const char *uri;
  size_t uri_len;
  hs_object_info info;
  uint64_t offset;
  const uint8_t *bytes;
  size_t len;
} pk_seg;

/* The segment at *at, or an error naming what is wrong and where. */
static hs_status next_segment(const uint8_t *p, size_t end, size_t *at, const char *what, pk_seg *s,
                              hs_error *err) {
  size_t a = *at;
#define NEED(k, field)                                                                       \
  do {                                                                                       \
    if (end - a < (size_t)(k))                                                               \
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: truncated segment %s at byte %zu", what, \
                          field, a);                                                         \
  } while (0)
  NEED(2, "URI length");
  s->uri_len = (size_t)get_le(p + a, 2);
  a += 2;
  NEED(s->uri_len, "URI");
  s->uri = (const char *)p + a;
  a += s->uri_len;
  NEED(17, "object size, mtime and ETag length");
  memset(&s->info, 0, sizeof s->info);
  s->info.size = get_le(p + a, 8);
  s->info.mtime_ms = (int64_t)get_le(p + a + 8, 8);
  size_t el = p[a + 16];
  a += 17;
  NEED(el, "ETag");
  if (el == 0 || el >= sizeof s->info.etag)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: segment at byte %zu has an ETag of %zu bytes",
                        what, *at, el);
  memcpy(s->info.etag, p + a, el);
  a += el;
  NEED(12, "offset and length");
  s->offset = get_le(p + a, 8);
  s->len = (size_t)get_le(p + a + 8, 4);
  a += 12;
  NEED(s->len, "bytes");
  s->bytes = p + a;
  a += s->len;
#undef NEED
  if (s->offset > s->info.size || s->len > s->info.size - s->offset || s->uri_len == 0 ||
      s->offset % HS_S3_CACHE_BLOCK != 0 ||
      ((s->offset + s->len) % HS_S3_CACHE_BLOCK != 0 && s->offset + s->len != s->info.size))
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: segment at byte %zu: range %llu+%zu does not fit its object of %llu "
                        "bytes in whole blocks",
                        what, *at, (unsigned long long)s->offset, s->len,
                        (unsigned long long)s->info.size);
  *at = a;
  return HS_OK;
}

hs_status hs_store_pack_check(const uint8_t *data, size_t len, const char *what, size_t *n_segments,
                              hs_error *err) {
  *n_segments = 0;
  if (len < 20 || memcmp(data, PACK_MAGIC, 4) != 0 || memcmp(data + len - 4, PACK_MAGIC, 4) != 0)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: not a pack of object ranges (magic)", what);
  if (get_le(data + 4, 4) != PACK_VERSION)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: pack version %u (this build reads %u)", what,
                        (unsigned)get_le(data + 4, 4), PACK_VERSION);
  if (hs_crc32c_extend(0, data, len - 8) != (uint32_t)get_le(data + len - 8, 4))
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: checksum mismatch", what);
  size_t n = (size_t)get_le(data + 8, 4);
  if (n > PACK_SEGMENTS_MAX)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: %zu segments (at most %u)", what, n,
                        PACK_SEGMENTS_MAX);
  size_t at = 12, end = len - 8;
  for (size_t i = 0; i < n; i++) {
    pk_seg s;
    hs_status st = next_segment(data, end, &at, what, &s, err);
    if (st != HS_OK) return st;
  }
  if (at != end)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: %zu bytes after the last segment", what,
                        end - at);
  *n_segments = n;
  return HS_OK;
}

hs_status hs_s3_unpack(const uint8_t *data, size_t len, const char *what, size_t *n_loaded,
                       hs_error *err) {
  *n_loaded = 0;
  size_t n = 0;
  hs_status st = hs_store_pack_check(data, len, what, &n, err);
  if (st != HS_OK) return st;
  size_t at = 12, end = len - 8;
  char uri[2100];
  for (size_t i = 0; i < n; i++) {
    pk_seg s;
    if ((st = next_segment(data, end, &at, what, &s, err)) != HS_OK) return st;
    if (s.uri_len >= sizeof uri) continue;
    memcpy(uri, s.uri, s.uri_len);
    uri[s.uri_len] = '\0';
    hs_store_loc loc;
    hs_store_config cfg;
    if (hs_store_resolve(uri, &loc, &cfg, NULL) != HS_OK || loc.kind != HS_STORE_S3) continue;
    hs_object_info held;
    if (hs_s3_cache_head_get(&loc, &held)) {
      if (held.size != s.info.size || strcmp(held.etag, s.info.etag) != 0) continue; /* newer */
    } else {
      hs_s3_cache_head_put(&loc, &s.info);
    }
    hs_s3_cache_put_range(&loc, &s.info, s.offset, s.bytes, s.len);
    (*n_loaded)++;
  }
  return HS_OK;
}
