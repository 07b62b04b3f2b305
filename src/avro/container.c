/*
 * container.c — Avro object container files: writer and reader.
 *
 * Layout (Avro spec, "Object Container Files"):
 *   "Obj" 0x01 | metadata map<bytes> (avro.schema, avro.codec, user keys)
 *   | 16-byte sync marker | blocks of (long count, long size, data, sync)*
 * The codec applies to each block's data; "deflate" is raw RFC 1951
 * (zlib with negative window bits), which is what every implementation
 * writes. Iceberg keeps its own metadata (schema, partition-spec,
 * format-version, content) in the header map, so the reader exposes every
 * key and the writer accepts any user key that does not start with "avro.".
 *
 * Reader invariants: every block is checked for length and trailing sync
 * before any datum of it is decoded; a block must be consumed exactly by
 * its datums; inflated blocks are capped (HS_AVRO_BLOCK_BYTES_MAX); any
 * failure is sticky and names the byte offset of the block.
 */
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <zlib.h>

#include "avro_internal.h"

/* Largest decompressed block we accept. Manifests hold a few MB at most. */
#define HS_AVRO_BLOCK_BYTES_MAX ((size_t)1 << 28)

static const uint8_t avro_magic[4] = {'O', 'b', 'j', 1};

/* ----------------------------------------------------------- deflate */

static voidpf z_alloc(voidpf opaque, uInt items, uInt size) {
  (void)opaque;
  return hs_calloc(items, size);
}

static void z_free(voidpf opaque, voidpf p) {
  (void)opaque;
  hs_free(p);
}

hs_status hs_avro_deflate(const uint8_t *src, size_t len, int level, hs_buf *out, hs_error *err) {
  z_stream z;
  memset(&z, 0, sizeof z);
  z.zalloc = z_alloc;
  z.zfree = z_free;
  if (deflateInit2(&z, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    return hs_error_set(err, HS_ERR_NOMEM, "avro: deflateInit2 failed");
  if (len > UINT32_MAX) {
    deflateEnd(&z);
    return hs_error_set(err, HS_ERR_INVALID_ARG, "avro: block too large to deflate");
  }
  uLong bound = deflateBound(&z, (uLong)len);
  if (!hs_buf_reserve(out, bound)) {
    deflateEnd(&z);
    return hs_error_set(err, HS_ERR_NOMEM, "avro: out of memory deflating");
  }
  z.next_in = (Bytef *)src;
  z.avail_in = (uInt)len;
  z.next_out = out->data + out->len;
  z.avail_out = (uInt)bound;
  int rc = deflate(&z, Z_FINISH);
  if (rc == Z_STREAM_END) out->len += bound - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END)
    return hs_error_set(err, HS_ERR_INTERNAL, "avro: deflate failed (%d)", rc);
  return HS_OK;
}

hs_status hs_avro_inflate(const uint8_t *src, size_t len, size_t out_max, hs_buf *out,
                          hs_error *err) {
  z_stream z;
  memset(&z, 0, sizeof z);
  z.zalloc = z_alloc;
  z.zfree = z_free;
  if (inflateInit2(&z, -15) != Z_OK)
    return hs_error_set(err, HS_ERR_NOMEM, "avro: inflateInit2 failed");
  z.next_in = (Bytef *)src;
  z.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
  hs_status st = HS_OK;
  for (;;) {
    size_t room = len < 4096 ? 16384 : len * 4;
    if (room > out_max - out->len + 1) room = out_max - out->len + 1;
    if (!hs_buf_reserve(out, room)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "avro: out of memory inflating");
      break;
    }
    z.next_out = out->data + out->len;
    z.avail_out = (uInt)(out->cap - out->len > UINT32_MAX ? UINT32_MAX : out->cap - out->len);
    uInt before = z.avail_out;
    int rc = inflate(&z, Z_NO_FLUSH);
    out->len += before - z.avail_out;
    if (out->len > out_max) {
      st =
          hs_error_set(err, HS_ERR_CORRUPT, "avro: deflate block inflates past %zu bytes", out_max);
      break;
    }
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && z.avail_in == 0) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "avro: deflate data truncated");
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "avro: invalid deflate data (%s)",
                        z.msg ? z.msg : "zlib error");
      break;
    }
  }
  inflateEnd(&z);
  return st;
}

/* ------------------------------------------------------------- writer */

struct hs_avro_writer {
  const hs_avro_schema *schema;
  hs_buf *out;
  hs_sink *sink;
  hs_avro_codec codec;
  int level;
  uint8_t sync[HS_AVRO_SYNC_BYTES];
  hs_buf block; /* encoded datums of the open block */
  size_t block_count;
  size_t block_bytes_target, block_count_max;
  hs_buf scratch; /* block header and compressed data */
  hs_status failed;
};

static hs_status w_emit(hs_avro_writer *w, const void *p, size_t n, hs_error *err) {
  if (w->sink) return hs_sink_write(w->sink, p, n, err);
  if (!hs_buf_append(w->out, p, n)) return hs_error_set(err, HS_ERR_NOMEM, "avro: out of memory");
  return HS_OK;
}

static bool put_str(hs_buf *b, const void *p, size_t n) {
  return hs_avro_write_long(b, (int64_t)n) && hs_buf_append(b, p, n);
}

static void make_sync(hs_avro_writer *w) {
  uint64_t s = (uint64_t)hs_now_ns() ^ (uint64_t)(uintptr_t)w;
  for (int i = 0; i < 2; i++) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    hs_store_u64le(w->sync + 8 * i, z ^ (z >> 31));
  }
}

hs_status hs_avro_writer_open(const hs_avro_schema *schema, const hs_avro_writer_options *opts,
                              hs_buf *buf, hs_sink *sink, hs_avro_writer **out, hs_error *err) {
  *out = NULL;
  hs_avro_writer_options none = {0};
  if (opts == NULL) opts = &none;
  if (schema == NULL || (buf == NULL) == (sink == NULL))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "avro writer: need a schema and one of buf/sink");
  if (opts->codec != HS_AVRO_CODEC_NULL && opts->codec != HS_AVRO_CODEC_DEFLATE)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "avro writer: unknown codec %d", (int)opts->codec);
  for (size_t i = 0; i < opts->n_meta; i++) {
    if (opts->meta[i].key == NULL || strncmp(opts->meta[i].key, "avro.", 5) == 0)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "avro writer: metadata key %zu is missing or reserved (avro.*)", i);
  }
  hs_avro_writer *w = hs_calloc(1, sizeof *w);
  if (w == NULL) return hs_error_set(err, HS_ERR_NOMEM, "avro writer: out of memory");
  w->schema = schema;
  w->out = buf;
  w->sink = sink;
  w->codec = opts->codec;
  w->level = opts->deflate_level;
  w->block_bytes_target = opts->block_bytes_target ? opts->block_bytes_target : 65536;
  w->block_count_max = opts->block_count_max;
  if (opts->sync)
    memcpy(w->sync, opts->sync, HS_AVRO_SYNC_BYTES);
  else
    make_sync(w);

  char *json = NULL;
  hs_status st = opts->schema_json != NULL ? HS_OK : hs_avro_schema_to_json(schema, &json, err);
  const char *sj = opts->schema_json != NULL ? opts->schema_json : json;
  hs_buf *h = &w->scratch;
  if (st == HS_OK) {
    const char *codec = w->codec == HS_AVRO_CODEC_DEFLATE ? "deflate" : "null";
    bool ok = hs_buf_append(h, avro_magic, 4) && hs_avro_write_long(h, (int64_t)opts->n_meta + 2) &&
              put_str(h, "avro.schema", 11) && put_str(h, sj, strlen(sj)) &&
              put_str(h, "avro.codec", 10) && put_str(h, codec, strlen(codec));
    for (size_t i = 0; ok && i < opts->n_meta; i++) {
      ok = put_str(h, opts->meta[i].key, strlen(opts->meta[i].key)) &&
           put_str(h, opts->meta[i].value, opts->meta[i].len);
    }
    ok = ok && hs_avro_write_long(h, 0) && hs_buf_append(h, w->sync, HS_AVRO_SYNC_BYTES);
    st = ok ? w_emit(w, h->data, h->len, err)
            : hs_error_set(err, HS_ERR_NOMEM, "avro writer: out of memory writing the header");
  }
  hs_free(json);
  h->len = 0;
  if (st != HS_OK) {
    hs_avro_writer_free(w);
    return st;
  }
  *out = w;
  return HS_OK;
}

hs_status hs_avro_writer_flush(hs_avro_writer *w, hs_error *err) {
  if (w->failed != HS_OK)
    return hs_error_set(err, w->failed, "avro writer: an earlier write failed");
  if (w->block_count == 0) return HS_OK;
  hs_buf *h = &w->scratch;
  h->len = 0;
  const uint8_t *data = w->block.data;
  size_t size = w->block.len;
  hs_buf packed;
  hs_buf_init(&packed);
  hs_status st = HS_OK;
  if (w->codec == HS_AVRO_CODEC_DEFLATE) {
    st = hs_avro_deflate(w->block.data, w->block.len, w->level, &packed, err);
    data = packed.data;
    size = packed.len;
  }
  if (st == HS_OK) {
    bool ok =
        hs_avro_write_long(h, (int64_t)w->block_count) && hs_avro_write_long(h, (int64_t)size);
    st = ok ? w_emit(w, h->data, h->len, err) : hs_error_set(err, HS_ERR_NOMEM, "avro: no memory");
  }
  if (st == HS_OK && size) st = w_emit(w, data, size, err);
  if (st == HS_OK) st = w_emit(w, w->sync, HS_AVRO_SYNC_BYTES, err);
  hs_buf_free(&packed);
  if (st != HS_OK) {
    w->failed = st;
    return st;
  }
  w->block.len = 0;
  w->block_count = 0;
  return HS_OK;
}

hs_status hs_avro_writer_append(hs_avro_writer *w, const hs_avro_value *datum, hs_error *err) {
  if (w->failed != HS_OK)
    return hs_error_set(err, w->failed, "avro writer: an earlier write failed");
  /* A datum that does not fit the schema leaves the block untouched
   * (hs_avro_encode rolls back), so it is not a sticky failure. */
  hs_status st = hs_avro_encode(hs_avro_schema_root(w->schema), datum, &w->block, err);
  if (st != HS_OK) return st;
  w->block_count++;
  if (w->block.len >= w->block_bytes_target ||
      (w->block_count_max && w->block_count >= w->block_count_max))
    return hs_avro_writer_flush(w, err);
  return HS_OK;
}

hs_status hs_avro_writer_close(hs_avro_writer *w, hs_error *err) {
  if (w == NULL) return HS_OK;
  hs_status st = hs_avro_writer_flush(w, err);
  hs_avro_writer_free(w);
  return st;
}

void hs_avro_writer_free(hs_avro_writer *w) {
  if (w == NULL) return;
  hs_buf_free(&w->block);
  hs_buf_free(&w->scratch);
  hs_free(w);
}

/* ------------------------------------------------------------- reader */

struct hs_avro_reader {
  const uint8_t *data;
  size_t len;
  size_t pos; /* next block header */
  hs_avro_schema *writer_schema;
  const hs_avro_schema *reader_schema;
  hs_avro_codec codec;
  uint8_t sync[HS_AVRO_SYNC_BYTES];
  hs_avro_meta_entry *meta;
  size_t n_meta;
  hs_arena keys; /* NUL-terminated copies of metadata keys */
  size_t datum_min_bytes;

  const uint8_t *block; /* data of the current block (file or `inflated`) */
  size_t block_len, block_pos, block_offset;
  int64_t block_left;
  hs_buf inflated;
  hs_status failed;
};

static hs_status r_long(hs_avro_reader *r, int64_t *out, hs_error *err) {
  return hs_avro_read_long(r->data, r->len, &r->pos, out, err);
}

/* Writer schemas of recently read containers, shared by reference: the
 * files of one table (manifests, manifest lists) carry the same schema
 * JSON, whose parse was the largest part of opening one. A parsed schema
 * is never changed, so one copy serves every reader; entries are matched
 * by their exact bytes and the least recently used one is replaced. */
#define SCHEMA_CACHE_MAX 8
#define SCHEMA_CACHE_BYTES ((size_t)64 << 10) /* larger schemas are parsed each time */

typedef struct cached_schema {
  char *json; /* hs_malloc'd copy; NULL: empty entry */
  size_t len;
  hs_avro_schema *schema; /* one reference held by the cache */
  uint64_t used_at;
} cached_schema;

static pthread_mutex_t schema_mu = PTHREAD_MUTEX_INITIALIZER;
static cached_schema schema_cache[SCHEMA_CACHE_MAX];
static uint64_t schema_tick;

static hs_status writer_schema(const uint8_t *json, size_t len, hs_avro_schema **out,
                               hs_error *err) {
  *out = NULL;
  if (len > SCHEMA_CACHE_BYTES) return hs_avro_schema_parse((const char *)json, len, out, err);
  pthread_mutex_lock(&schema_mu);
  for (int i = 0; i < SCHEMA_CACHE_MAX; i++) {
    cached_schema *c = &schema_cache[i];
    if (c->json != NULL && c->len == len && memcmp(c->json, json, len) == 0) {
      __atomic_add_fetch(&c->schema->refs, 1, __ATOMIC_ACQ_REL);
      c->used_at = ++schema_tick;
      *out = c->schema;
      break;
    }
  }
  pthread_mutex_unlock(&schema_mu);
  if (*out != NULL) return HS_OK;
  hs_status st = hs_avro_schema_parse((const char *)json, len, out, err);
  if (st != HS_OK) return st;
  char *copy = hs_malloc(len ? len : 1);
  if (copy == NULL) return HS_OK; /* not cached: still parsed */
  memcpy(copy, json, len);
  hs_avro_schema *gone = NULL;
  char *gone_json = NULL;
  pthread_mutex_lock(&schema_mu);
  int slot = 0;
  for (int i = 0; i < SCHEMA_CACHE_MAX; i++) {
    if (schema_cache[i].json == NULL) {
      slot = i;
      break;
    }
    if (schema_cache[i].used_at < schema_cache[slot].used_at) slot = i;
  }
  cached_schema *c = &schema_cache[slot];
  gone = c->schema;
  gone_json = c->json;
  __atomic_add_fetch(&(*out)->refs, 1, __ATOMIC_ACQ_REL);
  *c = (cached_schema){.json = copy, .len = len, .schema = *out, .used_at = ++schema_tick};
  pthread_mutex_unlock(&schema_mu);
  hs_avro_schema_free(gone);
  hs_free(gone_json);
  return HS_OK;
}

static hs_status read_header(hs_avro_reader *r, hs_error *err) {
  if (r->len < 4 || memcmp(r->data, avro_magic, 4) != 0)
    return hs_error_set(err, HS_ERR_CORRUPT, "avro: not an object container file (bad magic)");
  r->pos = 4;
  size_t cap = 0;
  hs_status st;
  for (;;) {
    int64_t count, bytes;
    size_t at = r->pos;
    if ((st = r_long(r, &count, err)) != HS_OK) return st;
    if (count == 0) break;
    if (count < 0) {
      if (count == INT64_MIN)
        return hs_error_set(err, HS_ERR_CORRUPT, "avro: bad metadata block at byte %zu", at);
      count = -count;
      if ((st = r_long(r, &bytes, err)) != HS_OK) return st;
    }
    /* Each entry is at least two length bytes. */
    if ((uint64_t)count > (r->len - r->pos) / 2)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "avro: metadata count %" PRId64 " at byte %zu exceeds the file", count,
                          at);
    size_t want = r->n_meta + (size_t)count;
    if (want > cap) {
      cap = want * 2;
      hs_avro_meta_entry *m = hs_realloc(r->meta, cap * sizeof *m);
      if (m == NULL) return hs_error_set(err, HS_ERR_NOMEM, "avro: out of memory");
      r->meta = m;
    }
    for (int64_t i = 0; i < count; i++) {
      int64_t kl, vl;
      size_t kat = r->pos;
      if ((st = r_long(r, &kl, err)) != HS_OK) return st;
      if (kl < 0 || (uint64_t)kl > r->len - r->pos)
        return hs_error_set(err, HS_ERR_CORRUPT, "avro: metadata key at byte %zu overruns", kat);
      const char *key = hs_arena_strndup(&r->keys, (const char *)r->data + r->pos, (size_t)kl);
      if (key == NULL) return hs_error_set(err, HS_ERR_NOMEM, "avro: out of memory");
      r->pos += (size_t)kl;
      size_t vat = r->pos;
      if ((st = r_long(r, &vl, err)) != HS_OK) return st;
      if (vl < 0 || (uint64_t)vl > r->len - r->pos)
        return hs_error_set(err, HS_ERR_CORRUPT, "avro: metadata value at byte %zu overruns", vat);
      r->meta[r->n_meta].key = key;
      r->meta[r->n_meta].value = r->data + r->pos;
      r->meta[r->n_meta].len = (size_t)vl;
      r->n_meta++;
      r->pos += (size_t)vl;
    }
  }
  if (r->len - r->pos < HS_AVRO_SYNC_BYTES)
    return hs_error_set(err, HS_ERR_CORRUPT, "avro: header truncated before the sync marker");
  memcpy(r->sync, r->data + r->pos, HS_AVRO_SYNC_BYTES);
  r->pos += HS_AVRO_SYNC_BYTES;

  size_t n;
  const uint8_t *codec = hs_avro_reader_meta_get(r, "avro.codec", &n);
  if (codec == NULL || (n == 4 && memcmp(codec, "null", 4) == 0)) {
    r->codec = HS_AVRO_CODEC_NULL;
  } else if (n == 7 && memcmp(codec, "deflate", 7) == 0) {
    r->codec = HS_AVRO_CODEC_DEFLATE;
  } else {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "avro: codec \"%.*s\" is not supported",
                        (int)(n > 32 ? 32 : n), (const char *)codec);
  }
  const uint8_t *schema = hs_avro_reader_meta_get(r, "avro.schema", &n);
  if (schema == NULL) return hs_error_set(err, HS_ERR_CORRUPT, "avro: header has no avro.schema");
  if ((st = writer_schema(schema, n, &r->writer_schema, err)) != HS_OK)
    return ((void)hs_error_prefix(err, "avro.schema: "), st);
  return HS_OK;
}

hs_status hs_avro_reader_open(const uint8_t *data, size_t len, const hs_avro_schema *reader_schema,
                              hs_avro_reader **out, hs_error *err) {
  *out = NULL;
  hs_avro_reader *r = hs_calloc(1, sizeof *r);
  if (r == NULL) return hs_error_set(err, HS_ERR_NOMEM, "avro reader: out of memory");
  r->data = data;
  r->len = data ? len : 0;
  r->reader_schema = reader_schema;
  hs_arena_init(&r->keys);
  r->keys.block_bytes = 4096;
  hs_status st = read_header(r, err);
  if (st == HS_OK && reader_schema != NULL) {
    st = hs_avro_resolve_check(hs_avro_schema_root(r->writer_schema),
                               hs_avro_schema_root(reader_schema), err);
  }
  if (st != HS_OK) {
    hs_avro_reader_free(r);
    return st;
  }
  r->datum_min_bytes = hs_avro_node_min_bytes(hs_avro_schema_root(r->writer_schema), 0);
  *out = r;
  return HS_OK;
}

void hs_avro_reader_free(hs_avro_reader *r) {
  if (r == NULL) return;
  hs_avro_schema_free(r->writer_schema);
  hs_free(r->meta);
  hs_arena_reset(&r->keys);
  hs_buf_free(&r->inflated);
  hs_free(r);
}

const hs_avro_schema *hs_avro_reader_writer_schema(const hs_avro_reader *r) {
  return r->writer_schema;
}

const hs_avro_node *hs_avro_reader_datum_schema(const hs_avro_reader *r) {
  return hs_avro_schema_root(r->reader_schema ? r->reader_schema : r->writer_schema);
}

hs_avro_codec hs_avro_reader_codec(const hs_avro_reader *r) {
  return r->codec;
}

size_t hs_avro_reader_meta_count(const hs_avro_reader *r) {
  return r->n_meta;
}

const hs_avro_meta_entry *hs_avro_reader_meta_at(const hs_avro_reader *r, size_t i) {
  return i < r->n_meta ? &r->meta[i] : NULL;
}

const uint8_t *hs_avro_reader_meta_get(const hs_avro_reader *r, const char *key, size_t *len) {
  /* The last occurrence wins, as in a map. */
  for (size_t i = r->n_meta; i-- > 0;) {
    if (strcmp(r->meta[i].key, key) == 0) {
      *len = r->meta[i].len;
      return r->meta[i].value;
    }
  }
  *len = 0;
  return NULL;
}

/* Load the next non-empty block; *has is false at a clean end of file. */
static hs_status next_block(hs_avro_reader *r, bool *has, hs_error *err) {
  for (;;) {
    if (r->pos == r->len) {
      *has = false;
      return HS_OK;
    }
    size_t at = r->pos;
    int64_t count, size;
    hs_status st = r_long(r, &count, err);
    if (st == HS_OK) st = r_long(r, &size, err);
    if (st != HS_OK) return ((void)hs_error_prefix(err, "block at byte %zu: ", at), st);
    if (count < 0 || size < 0)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "avro: block at byte %zu has a negative count or size", at);
    if ((uint64_t)size > r->len - r->pos || r->len - r->pos - (size_t)size < HS_AVRO_SYNC_BYTES)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "avro: block at byte %zu is truncated (%" PRId64
                          " bytes + sync, %zu left)",
                          at, size, r->len - r->pos);
    const uint8_t *data = r->data + r->pos;
    size_t end = r->pos + (size_t)size;
    if (memcmp(r->data + end, r->sync, HS_AVRO_SYNC_BYTES) != 0)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "avro: sync marker mismatch at byte %zu (block at byte %zu)", end, at);
    r->pos = end + HS_AVRO_SYNC_BYTES;
    if (count == 0) continue;
    r->block_offset = at;
    if (r->codec == HS_AVRO_CODEC_DEFLATE) {
      r->inflated.len = 0;
      if ((st = hs_avro_inflate(data, (size_t)size, HS_AVRO_BLOCK_BYTES_MAX, &r->inflated, err)) !=
          HS_OK)
        return ((void)hs_error_prefix(err, "block at byte %zu: ", at), st);
      r->block = r->inflated.data;
      r->block_len = r->inflated.len;
    } else {
      r->block = data;
      r->block_len = (size_t)size;
    }
    /* Every datum takes at least datum_min_bytes; datums of zero bytes
     * (a null schema) are capped so that a count cannot spin forever. */
    bool too_many = r->datum_min_bytes ? (uint64_t)count > r->block_len / r->datum_min_bytes
                                       : (uint64_t)count > HS_AVRO_ZERO_SIZE_ITEMS_MAX;
    if (too_many)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "avro: block at byte %zu claims %" PRId64 " datums in %zu bytes", at,
                          count, r->block_len);
    r->block_pos = 0;
    r->block_left = count;
    *has = true;
    return HS_OK;
  }
}

hs_status hs_avro_reader_next(hs_avro_reader *r, hs_arena *arena, hs_avro_value *out, bool *has,
                              hs_error *err) {
  *has = false;
  if (r->failed != HS_OK)
    return hs_error_set(err, r->failed, "avro reader: an earlier read failed");
  hs_status st = HS_OK;
  if (r->block_left == 0) {
    bool more;
    st = next_block(r, &more, err);
    if (st != HS_OK || !more) {
      r->failed = st;
      return st;
    }
  }
  const hs_avro_node *w = hs_avro_schema_root(r->writer_schema);
  const hs_avro_node *rd = r->reader_schema ? hs_avro_schema_root(r->reader_schema) : NULL;
  st = hs_avro_decode(w, rd, r->block, r->block_len, &r->block_pos, arena, out, err);
  if (st == HS_OK && --r->block_left == 0 && r->block_pos != r->block_len) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "avro: %zu bytes after the last datum",
                      r->block_len - r->block_pos);
  }
  if (st != HS_OK) {
    r->failed = st;
    return ((void)hs_error_prefix(err, "block at byte %zu%s: ", r->block_offset,
                                  r->codec == HS_AVRO_CODEC_DEFLATE ? " (offsets inflated)" : ""),
            st);
  }
  *has = true;
  return HS_OK;
}
