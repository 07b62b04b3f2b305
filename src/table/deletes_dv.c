/*
 * deletes_dv.c — Iceberg v3 deletion vectors (deletes.h): Puffin
 * "deletion-vector-v1" blobs parsed, read from a Puffin file by the
 * manifest entry's offset and size, serialized, and written as a Puffin
 * file of one blob per data file.
 *
 * Blob layout (puffin-spec.md): u32 big-endian L = 4 + |vector|, magic
 * D1 D3 39 64, the vector, u32 big-endian CRC-32 (zlib) of magic + vector.
 * The vector is Roaring's 64-bit portable format: u64 little-endian bucket
 * count, then per bucket a u32 little-endian key (the high 32 bits of the
 * positions) and a 32-bit portable Roaring bitmap (the low 32 bits).
 *
 * CRoaring 0.2.66's roaring_bitmap_portable_deserialize_safe only stays
 * inside the buffer; it trusts sortedness, cardinalities and run bounds,
 * and does not say how many bytes a bitmap took. So each 32-bit bitmap is
 * walked here first (roaring32_walk): its length found and every invariant
 * of RoaringFormatSpec checked; only then does CRoaring deserialize it.
 * Java's writer emits a bucket for every key up to the highest (empty ones
 * between), so an empty bucket with a key > 0 is accepted; a non-empty
 * one is HS_ERR_UNSUPPORTED (our bitmaps are 32-bit).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../io/io.h"
#include "../io/store.h"
#include "deletes.h"

#define DV_MAGIC "\xD1\xD3\x39\x64"
#define PUFFIN_MAGIC "PFA1"
#define COOKIE_NO_RUN 12346u
#define COOKIE_RUN 12347u
#define NO_OFFSET_THRESHOLD 4u
#define ARRAY_MAX 4096u
#define BITSET_BYTES 8192u

static uint32_t load_u32be(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static void store_u32be(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}
static uint16_t load_u16le(const uint8_t *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}

/* zlib's crc32 over any length (its length argument is a uInt). */
static uint32_t crc32_of(const uint8_t *p, size_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  while (n > 0) {
    uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
    c = crc32(c, p, k);
    p += k;
    n -= k;
  }
  return (uint32_t)c;
}

/* Walk one 32-bit portable Roaring bitmap at p[0..len): *used its length,
 * *card its cardinality. Every check of the format is made (`where` names
 * the bucket in messages). */
static hs_status roaring32_walk(const uint8_t *p, size_t len, const char *where, size_t *used,
                                uint64_t *card, hs_error *err) {
  if (len < 4) return hs_error_set(err, HS_ERR_CORRUPT, "%s: truncated bitmap cookie", where);
  uint32_t cookie = hs_load_u32le(p);
  size_t pos = 4, n;
  const uint8_t *run_flags = NULL;
  bool offsets;
  if (cookie == COOKIE_NO_RUN) {
    if (len < 8) return hs_error_set(err, HS_ERR_CORRUPT, "%s: truncated container count", where);
    n = hs_load_u32le(p + 4);
    pos = 8;
    offsets = true;
    if (n > 65536) return hs_error_set(err, HS_ERR_CORRUPT, "%s: %zu containers", where, n);
  } else if ((cookie & 0xFFFF) == COOKIE_RUN) {
    n = (cookie >> 16) + 1;
    if ((n + 7) / 8 > len - pos)
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: truncated run flags", where);
    run_flags = p + pos;
    pos += (n + 7) / 8;
    offsets = n >= NO_OFFSET_THRESHOLD;
  } else {
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: unknown bitmap cookie 0x%08x", where, cookie);
  }
  if (n * 4 > len - pos)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: truncated container headers", where);
  const uint8_t *desc = p + pos;
  pos += n * 4;
  const uint8_t *offs = NULL;
  if (offsets && n > 0) {
    if (n * 4 > len - pos)
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: truncated container offsets", where);
    offs = p + pos;
    pos += n * 4;
  }
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t key = load_u16le(desc + i * 4), c = (uint32_t)load_u16le(desc + i * 4 + 2) + 1;
    if (i > 0 && key <= load_u16le(desc + i * 4 - 4))
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: container keys not increasing at container %zu",
                          where, i);
    if (offs != NULL && hs_load_u32le(offs + i * 4) != pos)
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: container %zu offset %u, expected %zu", where,
                          i, hs_load_u32le(offs + i * 4), pos);
    if (run_flags != NULL && (run_flags[i / 8] >> (i % 8) & 1)) {
      if (len - pos < 2)
        return hs_error_set(err, HS_ERR_CORRUPT, "%s: truncated run count of container %zu", where,
                            i);
      uint32_t runs = load_u16le(p + pos);
      pos += 2;
      if (runs == 0 || (size_t)runs * 4 > len - pos)
        return hs_error_set(err, HS_ERR_CORRUPT, "%s: %u runs in container %zu (%zu bytes left)",
                            where, runs, i, len - pos);
      uint32_t sum = 0, next_min = 0;
      for (uint32_t r = 0; r < runs; r++, pos += 4) {
        uint32_t start = load_u16le(p + pos), extra = load_u16le(p + pos + 2);
        if (start < next_min || start + extra > 0xFFFF)
          return hs_error_set(err, HS_ERR_CORRUPT,
                              "%s: run %u of container %zu overlaps or leaves the container", where,
                              r, i);
        next_min = start + extra + 1;
        sum += extra + 1;
      }
      if (sum != c)
        return hs_error_set(err, HS_ERR_CORRUPT,
                            "%s: container %zu runs hold %u values, its header says %u", where, i,
                            sum, c);
    } else if (c > ARRAY_MAX) {
      if (len - pos < BITSET_BYTES)
        return hs_error_set(err, HS_ERR_CORRUPT, "%s: truncated bitset container %zu", where, i);
      uint32_t bits = 0;
      for (uint32_t w = 0; w < BITSET_BYTES / 8; w++)
        bits += (uint32_t)__builtin_popcountll(hs_load_u64le(p + pos + w * 8));
      pos += BITSET_BYTES;
      if (bits != c)
        return hs_error_set(err, HS_ERR_CORRUPT,
                            "%s: bitset container %zu holds %u values, its header says %u", where,
                            i, bits, c);
    } else {
      if ((size_t)c * 2 > len - pos)
        return hs_error_set(err, HS_ERR_CORRUPT, "%s: truncated array container %zu", where, i);
      for (uint32_t j = 1; j < c; j++)
        if (load_u16le(p + pos + j * 2) <= load_u16le(p + pos + j * 2 - 2))
          return hs_error_set(err, HS_ERR_CORRUPT, "%s: array container %zu not sorted", where, i);
      pos += (size_t)c * 2;
    }
    total += c;
  }
  *used = pos;
  *card = total;
  return HS_OK;
}

hs_status hs_table_dv_parse(const uint8_t *p, size_t len, roaring_bitmap_t **out, hs_error *err) {
  *out = NULL;
  if (len < 12)
    return hs_error_set(err, HS_ERR_CORRUPT, "deletion vector: %zu bytes, too short for a blob",
                        len);
  uint32_t L = load_u32be(p);
  if ((uint64_t)L + 8 != len)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "deletion vector: length field says %u bytes of magic and vector, the blob "
                        "holds %zu",
                        L, len - 8);
  if (memcmp(p + 4, DV_MAGIC, 4) != 0)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "deletion vector: bad magic %02x %02x %02x %02x (expected d1 d3 39 64)",
                        p[4], p[5], p[6], p[7]);
  uint32_t want = load_u32be(p + 4 + L), have = crc32_of(p + 4, L);
  if (want != have)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "deletion vector: CRC-32 mismatch (recorded %08x, computed %08x)", want,
                        have);
  const uint8_t *v = p + 8;
  size_t vlen = L - 4, pos = 8;
  if (vlen < 8) return hs_error_set(err, HS_ERR_CORRUPT, "deletion vector: truncated bucket count");
  uint64_t count = hs_load_u64le(v);
  /* A bucket is at least a key and an empty bitmap (4 + 8 bytes). */
  if (count > (vlen - 8) / 12)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "deletion vector: %llu buckets cannot fit in %zu bytes of vector",
                        (unsigned long long)count, vlen);
  const uint8_t *b0 = NULL;
  size_t b0_len = 0;
  uint64_t b0_card = 0;
  int64_t prev_key = -1, big_key = -1;
  for (uint64_t b = 0; b < count; b++) {
    if (vlen - pos < 4)
      return hs_error_set(err, HS_ERR_CORRUPT, "deletion vector: truncated key of bucket %llu",
                          (unsigned long long)b);
    uint32_t key = hs_load_u32le(v + pos);
    pos += 4;
    if ((int64_t)key <= prev_key)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "deletion vector: bucket keys not increasing (bucket %llu key %u after "
                          "%lld)",
                          (unsigned long long)b, key, (long long)prev_key);
    if (key > 0x7FFFFFFFu)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "deletion vector: bucket %llu key %u makes positions negative",
                          (unsigned long long)b, key);
    prev_key = key;
    char where[80];
    snprintf(where, sizeof where, "deletion vector: bucket %llu (key %u)", (unsigned long long)b,
             key);
    size_t used = 0;
    uint64_t card = 0;
    hs_status st = roaring32_walk(v + pos, vlen - pos, where, &used, &card, err);
    if (st != HS_OK) return st;
    if (key == 0) {
      b0 = v + pos;
      b0_len = used;
      b0_card = card;
    } else if (card > 0 && big_key < 0) {
      big_key = key;
    }
    pos += used;
  }
  if (pos != vlen)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "deletion vector: %zu bytes after the last bucket of the vector",
                        vlen - pos);
  if (big_key >= 0)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "deletion vector: positions at or above 2^32 (bucket key %lld): data files "
                        "of more than 2^32 rows are not supported",
                        (long long)big_key);
  roaring_bitmap_t *r = b0 != NULL
                            ? roaring_bitmap_portable_deserialize_safe((const char *)b0, b0_len)
                            : roaring_bitmap_create();
  if (r == NULL) return hs_error_set(err, HS_ERR_NOMEM, "deletion vector: out of memory");
  if (roaring_bitmap_get_cardinality(r) != b0_card) {
    roaring_bitmap_free(r);
    return hs_error_set(err, HS_ERR_INTERNAL,
                        "deletion vector: cardinality changed in deserialization");
  }
  *out = r;
  return HS_OK;
}

hs_status hs_table_dv_read(const char *path, int64_t offset, int64_t length, int64_t cardinality,
                           roaring_bitmap_t **out, hs_error *err) {
  *out = NULL;
  if (offset < 0 || length < 0 || length > HS_DV_BLOB_BYTES_MAX)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "deletion vector in %s at offset %lld: bad offset or length %lld", path,
                        (long long)offset, (long long)length);
  hs_source *src = NULL;
  hs_status st = hs_store_is_remote(path) ? hs_store_source_open(path, &src, err)
                                          : hs_source_open_file(path, &src, err);
  if (st != HS_OK) return st;
  uint64_t size = hs_source_size(src);
  if ((uint64_t)offset > size || (uint64_t)length > size - (uint64_t)offset) {
    hs_source_unref(src);
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "deletion vector in %s at offset %lld: %lld bytes past the end of the "
                        "%llu-byte file",
                        path, (long long)offset, (long long)length, (unsigned long long)size);
  }
  hs_buf scratch;
  hs_buf_init(&scratch);
  const uint8_t *p = NULL;
  st = hs_source_view(src, (uint64_t)offset, (size_t)length, &scratch, &p, err);
  if (st == HS_OK) st = hs_table_dv_parse(p, (size_t)length, out, err);
  if (st == HS_OK && cardinality >= 0 &&
      roaring_bitmap_get_cardinality(*out) != (uint64_t)cardinality) {
    st = hs_error_set(
        err, HS_ERR_CORRUPT, "deletion vector: holds %llu positions, its manifest entry says %lld",
        (unsigned long long)roaring_bitmap_get_cardinality(*out), (long long)cardinality);
    roaring_bitmap_free(*out);
    *out = NULL;
  }
  if (st != HS_OK && st != HS_ERR_NOMEM)
    hs_error_prefix(err, "deletion vector in %s at offset %lld: ", path, (long long)offset);
  hs_buf_free(&scratch);
  hs_source_unref(src);
  return st;
}

hs_status hs_table_dv_serialize(const roaring_bitmap_t *bm, hs_buf *out, hs_error *err) {
  bool empty = roaring_bitmap_is_empty(bm);
  roaring_bitmap_t *c = empty ? NULL : roaring_bitmap_copy(bm);
  if (!empty && c == NULL) return hs_error_set(err, HS_ERR_NOMEM, "deletion vector: out of memory");
  if (c != NULL) roaring_bitmap_run_optimize(c);
  size_t bsz = c != NULL ? roaring_bitmap_portable_size_in_bytes(c) : 0;
  size_t vlen = 8 + (c != NULL ? 4 + bsz : 0);
  if (vlen + 4 > UINT32_MAX) {
    roaring_bitmap_free(c);
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "deletion vector: %zu bytes, too large", vlen);
  }
  size_t start = out->len;
  if (!hs_buf_reserve(out, vlen + 12)) {
    roaring_bitmap_free(c);
    return hs_error_set(err, HS_ERR_NOMEM, "deletion vector: out of memory (%zu bytes)", vlen);
  }
  uint8_t *p = out->data + start;
  store_u32be(p, (uint32_t)(vlen + 4));
  memcpy(p + 4, DV_MAGIC, 4);
  hs_store_u64le(p + 8, c != NULL ? 1 : 0);
  if (c != NULL) {
    hs_store_u32le(p + 16, 0);
    size_t w = roaring_bitmap_portable_serialize(c, (char *)p + 20);
    roaring_bitmap_free(c);
    if (w != bsz)
      return hs_error_set(err, HS_ERR_INTERNAL, "deletion vector: wrote %zu of %zu bytes", w, bsz);
  }
  store_u32be(p + 4 + vlen + 4, crc32_of(p + 4, vlen + 4));
  out->len = start + vlen + 12;
  return HS_OK;
}

/* --------------------------------------------------------------- writer */

static hs_status footer_json(const hs_table_delete_group *groups, size_t n, const int64_t *offs,
                             const int64_t *lens, hs_buf *out, hs_error *err) {
  json_t *root = json_object(), *blobs = json_array(), *props = json_object();
  bool ok = root != NULL && blobs != NULL && props != NULL &&
            json_object_set_new(props, "created-by",
                                json_string("hyperstreamdb " HS_VERSION_STRING)) == 0;
  for (size_t i = 0; ok && i < n; i++) {
    char card[32];
    snprintf(card, sizeof card, "%llu",
             (unsigned long long)roaring_bitmap_get_cardinality(groups[i].rows));
    json_t *b =
        json_pack("{s:s,s:[I],s:I,s:I,s:I,s:I,s:{s:s,s:s}}", "type", HS_DV_BLOB_TYPE, "fields",
                  (json_int_t)HS_ROW_POSITION_ID, "snapshot-id", (json_int_t)-1, "sequence-number",
                  (json_int_t)-1, "offset", (json_int_t)offs[i], "length", (json_int_t)lens[i],
                  "properties", "referenced-data-file", groups[i].data_file, "cardinality", card);
    ok = b != NULL && json_array_append_new(blobs, b) == 0;
  }
  ok = ok && json_object_set_new(root, "blobs", blobs) == 0;
  if (!ok) json_decref(blobs);
  ok = ok && json_object_set_new(root, "properties", props) == 0;
  if (!ok) json_decref(props);
  char *text = ok ? json_dumps(root, JSON_COMPACT) : NULL;
  json_decref(root);
  if (text == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "deletion vectors: footer JSON (bad UTF-8 in a path?)");
  ok = hs_buf_append(out, text, strlen(text));
  free(text);
  return ok ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "deletion vectors: out of memory");
}

hs_status hs_table_dv_write(const char *path, const char *recorded,
                            const hs_table_delete_group *groups, size_t n, hs_arena *a,
                            hs_iceberg_data_file *dfs, hs_error *err) {
  if (n == 0) return hs_error_set(err, HS_ERR_INVALID_ARG, "deletion vectors %s: no groups", path);
  for (size_t i = 0; i < n; i++)
    if (groups[i].data_file == NULL || groups[i].rows == NULL ||
        roaring_bitmap_is_empty(groups[i].rows))
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "deletion vectors %s: group %zu has no data file or no rows", path, i);
  int64_t *offs = hs_calloc(n, 2 * sizeof *offs);
  if (offs == NULL) return hs_error_set(err, HS_ERR_NOMEM, "deletion vectors: out of memory");
  int64_t *lens = offs + n;
  hs_buf file;
  hs_buf_init(&file);
  hs_status st = hs_buf_append(&file, PUFFIN_MAGIC, 4)
                     ? HS_OK
                     : hs_error_set(err, HS_ERR_NOMEM, "deletion vectors: out of memory");
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    offs[i] = (int64_t)file.len;
    st = hs_table_dv_serialize(groups[i].rows, &file, err);
    lens[i] = (int64_t)file.len - offs[i];
  }
  size_t fstart = 0;
  if (st == HS_OK) {
    if (!hs_buf_append(&file, PUFFIN_MAGIC, 4))
      st = hs_error_set(err, HS_ERR_NOMEM, "deletion vectors: out of memory");
    fstart = file.len;
  }
  if (st == HS_OK) st = footer_json(groups, n, offs, lens, &file, err);
  if (st == HS_OK) {
    uint8_t tail[12];
    size_t flen = file.len - fstart;
    hs_store_u32le(tail, (uint32_t)flen);
    hs_store_u32le(tail + 4, 0); /* flags: footer not compressed */
    memcpy(tail + 8, PUFFIN_MAGIC, 4);
    if (flen > INT32_MAX || !hs_buf_append(&file, tail, sizeof tail))
      st = hs_error_set(err, HS_ERR_NOMEM, "deletion vectors: footer of %zu bytes", flen);
  }
  int fd = -1;
  bool remote = hs_store_is_remote(path);
  if (st == HS_OK && remote) { /* one PUT, refused where an object is: durable on return */
    bool won = false;
    st = hs_store_put_if_absent(path, file.data, file.len, &won, err);
    if (st == HS_OK && !won)
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "deletion vectors %s: already exists", path);
  } else if (st == HS_OK) {
    st = hs_fs_create_unsynced(path, file.data, file.len, &fd, err);
  }
  if (fd >= 0 && close(fd) != 0) {
    st = hs_fs_path_error(err, HS_ERR_IO, path, "cannot close", errno);
    unlink(path);
  }
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    hs_iceberg_data_file *d = &dfs[i];
    memset(d, 0, sizeof *d);
    d->content = HS_ICE_CONTENT_POSITION_DELETES;
    d->file_path = hs_arena_strndup(a, recorded, strlen(recorded));
    d->file_format = "PUFFIN";
    d->referenced_data_file = hs_arena_strndup(a, groups[i].data_file, strlen(groups[i].data_file));
    d->record_count = (int64_t)roaring_bitmap_get_cardinality(groups[i].rows);
    d->file_size_in_bytes = (int64_t)file.len;
    d->has_content_offset = true;
    d->content_offset = offs[i];
    d->has_content_size_in_bytes = true;
    d->content_size_in_bytes = lens[i];
    if (d->file_path == NULL || d->referenced_data_file == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "deletion vectors: out of memory");
      (void)(remote ? hs_store_delete(path, NULL) : hs_fs_remove(path, NULL));
    }
  }
  hs_buf_free(&file);
  hs_free(offs);
  return st;
}
