/*
 * binding.c — index blobs bound to their data file and checksummed
 * (binding.h). The verified set is a fixed table of (stamp, offset, length,
 * crc) keys, open addressing over 4096 slots; when full, a probe window's
 * first slot is overwritten (forgetting only costs a re-verification).
 */
#include "binding.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/verify_switch.h"

hs_status hs_index_binding_put(const hs_index_binding *b, json_t *props, hs_error *err) {
  if (b == NULL || b->data_file == NULL) return HS_OK;
  char size[24], crc[12];
  snprintf(size, sizeof size, "%" PRIu64, b->data_file_size);
  snprintf(crc, sizeof crc, "%08" PRIx32, b->footer_crc32c);
  if (json_object_set_new(props, "data-file", json_string(b->data_file)) != 0 ||
      json_object_set_new(props, "data-file-size", json_string(size)) != 0 ||
      json_object_set_new(props, "data-file-footer-crc32c", json_string(crc)) != 0)
    return hs_error_set(err, HS_ERR_NOMEM, "index blob properties: out of memory");
  return HS_OK;
}

hs_status hs_index_binding_put_crc(const uint8_t *blob, size_t len, json_t *props, hs_error *err) {
  char crc[12];
  snprintf(crc, sizeof crc, "%08" PRIx32, hs_crc32c_extend(0, blob, len));
  if (json_object_set_new(props, "crc32c", json_string(crc)) != 0)
    return hs_error_set(err, HS_ERR_NOMEM, "index blob properties: out of memory");
  return HS_OK;
}

/* An 8-digit lowercase hex string. */
static bool parse_hex32(const char *s, uint32_t *out) {
  if (s == NULL || strlen(s) != 8) return false;
  uint32_t v = 0;
  for (int i = 0; i < 8; i++) {
    char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | (uint32_t)d;
  }
  *out = v;
  return true;
}

static bool parse_u64(const char *s, uint64_t *out) {
  if (s == NULL || *s == '\0' || strlen(s) > 20) return false;
  uint64_t v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9') return false;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
      return false;
  }
  *out = v;
  return true;
}

hs_status hs_index_binding_get(const json_t *props, const char *what, hs_index_binding *out,
                               char **data_file_copy, hs_error *err) {
  memset(out, 0, sizeof *out);
  if (data_file_copy != NULL) *data_file_copy = NULL;
  if (!json_is_object(props)) return HS_OK;
  const json_t *crc = json_object_get(props, "crc32c");
  if (crc != NULL) {
    if (!parse_hex32(json_string_value(crc), &out->blob_crc32c))
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: blob property crc32c is not 8 hex digits",
                          what);
    out->has_crc = true;
  }
  const json_t *df = json_object_get(props, "data-file");
  if (df == NULL) return HS_OK;
  const char *path = json_string_value(df);
  if (path == NULL || *path == '\0' || strlen(path) > 4096 ||
      !parse_u64(json_string_value(json_object_get(props, "data-file-size")),
                 &out->data_file_size) ||
      !parse_hex32(json_string_value(json_object_get(props, "data-file-footer-crc32c")),
                   &out->footer_crc32c))
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: blob properties data-file, data-file-size and "
                        "data-file-footer-crc32c are malformed",
                        what);
  if (data_file_copy != NULL) {
    if ((*data_file_copy = hs_strdup(path)) == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
    path = *data_file_copy;
  }
  out->data_file = path;
  return HS_OK;
}

bool hs_index_binding_matches(const hs_index_binding *b, const char *data_path, uint64_t size,
                              bool footer_known, uint32_t footer_crc, char *why, size_t cap) {
  if (b->data_file == NULL) {
    snprintf(why, cap, "the index records no data file (built by an older version; rebuild it)");
    return false;
  }
  if (!b->has_crc) {
    snprintf(why, cap, "the index records no checksum");
    return false;
  }
  size_t n = strlen(data_path), r = strlen(b->data_file);
  bool tail = n > r && data_path[n - r - 1] == '/' && strcmp(data_path + n - r, b->data_file) == 0;
  if (!tail && strcmp(data_path, b->data_file) != 0) {
    snprintf(why, cap, "the index was built for data file %.200s", b->data_file);
    return false;
  }
  if (b->data_file_size != size) {
    snprintf(why, cap, "the index was built for a data file of %" PRIu64 " bytes, not %" PRIu64,
             b->data_file_size, size);
    return false;
  }
  if (footer_known && b->footer_crc32c != footer_crc) {
    snprintf(why, cap,
             "the data file's footer checksum is %08" PRIx32 ", the index was built for %08" PRIx32,
             footer_crc, b->footer_crc32c);
    return false;
  }
  return true;
}

/* ------------------------------------------------------ verified set */

#define VS_SLOTS 4096
#define VS_PROBE 8

typedef struct vs_key {
  hs_fs_stamp stamp;
  uint64_t off, len;
  uint32_t crc;
  bool used;
} vs_key;

static pthread_mutex_t vs_mu = PTHREAD_MUTEX_INITIALIZER;
static vs_key vs[VS_SLOTS];

static size_t vs_hash(const vs_key *k) {
  uint64_t h = k->stamp.ino * 0x9E3779B97F4A7C15ull ^ k->stamp.dev ^ (uint64_t)k->stamp.mtime_ns ^
               k->off * 0xBF58476D1CE4E5B9ull ^ (uint64_t)k->stamp.size;
  return (size_t)(h ^ (h >> 29)) % VS_SLOTS;
}

static bool vs_same(const vs_key *a, const vs_key *b) {
  return a->used && hs_fs_stamp_equal(&a->stamp, &b->stamp) && a->off == b->off &&
         a->len == b->len && a->crc == b->crc;
}

static bool vs_has(const vs_key *k) {
  size_t h = vs_hash(k);
  bool found = false;
  pthread_mutex_lock(&vs_mu);
  for (size_t i = 0; i < VS_PROBE && !found; i++) found = vs_same(&vs[(h + i) % VS_SLOTS], k);
  pthread_mutex_unlock(&vs_mu);
  return found;
}

static void vs_put(const vs_key *k) {
  size_t h = vs_hash(k), at = h;
  pthread_mutex_lock(&vs_mu);
  for (size_t i = 0; i < VS_PROBE; i++)
    if (!vs[(h + i) % VS_SLOTS].used) {
      at = (h + i) % VS_SLOTS;
      break;
    }
  vs[at] = *k;
  vs[at].used = true;
  pthread_mutex_unlock(&vs_mu);
}

void hs_index_verified_clear(void) {
  pthread_mutex_lock(&vs_mu);
  memset(vs, 0, sizeof vs);
  pthread_mutex_unlock(&vs_mu);
}

hs_status hs_index_blob_verify(hs_source *src, uint64_t off, uint64_t len, uint32_t crc,
                               hs_error *err) {
  return hs_index_blob_check(src, off, len, crc, false, err);
}

hs_status hs_index_blob_check(hs_source *src, uint64_t off, uint64_t len, uint32_t crc, bool force,
                              hs_error *err) {
  vs_key k = {.off = off, .len = len, .crc = crc};
  bool keyed = hs_source_stamp(src, &k.stamp);
  if (keyed && !force && (hs_verify_skip_repeat() || vs_has(&k))) return HS_OK;
  if (off > hs_source_size(src) || len > hs_source_size(src) - off)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: index blob at %" PRIu64 "+%" PRIu64 " is past the end of the file",
                        hs_source_name(src), off, len);
  const uint64_t piece = 1u << 20;
  uint8_t *buf = hs_malloc((size_t)(len < piece ? (len ? len : 1) : piece));
  if (buf == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", hs_source_name(src));
  uint32_t c = 0;
  hs_status st = HS_OK;
  for (uint64_t at = 0; st == HS_OK && at < len; at += piece) {
    size_t n = (size_t)(len - at < piece ? len - at : piece);
    st = hs_source_read_unmapped(src, off + at, n, buf, err);
    if (st == HS_OK) c = hs_crc32c_extend(c, buf, n);
  }
  hs_free(buf);
  if (st != HS_OK) return st;
  if (c != crc)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: index blob at offset %" PRIu64 " (%" PRIu64
                        " bytes) has checksum %08" PRIx32 ", its footer says %08" PRIx32,
                        hs_source_name(src), off, len, c, crc);
  if (keyed) vs_put(&k);
  return HS_OK;
}

const char *hs_index_short_path(const char *p) {
  const char *last = strrchr(p, '/');
  if (last == NULL || last == p) return p;
  const char *q = last - 1;
  while (q > p && *q != '/') q--;
  return *q == '/' ? q + 1 : p;
}

/* ------------------------------------------------------ rejections */

static pthread_mutex_t rj_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rj_count;
static char rj_last[320];

void hs_index_rejection_note(const char *why) {
  pthread_mutex_lock(&rj_mu);
  rj_count++;
  snprintf(rj_last, sizeof rj_last, "%s", why != NULL ? why : "");
  pthread_mutex_unlock(&rj_mu);
}

uint64_t hs_index_rejections(char *last, size_t cap) {
  pthread_mutex_lock(&rj_mu);
  uint64_t n = rj_count;
  if (last != NULL && cap > 0) { /* every read asks (Python's warning): no snprintf */
    size_t k = strnlen(rj_last, cap - 1);
    memcpy(last, rj_last, k);
    last[k] = '\0';
  }
  pthread_mutex_unlock(&rj_mu);
  return n;
}
