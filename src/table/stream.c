/*
 * stream.c — the index stream: per metadata version of a table on object
 * storage, one object beside it (`<metadata file>.hsis`) packing the bytes a
 * cold query reads after the metadata (README.md "Round trips of a cold
 * query, and the index stream"): the current snapshot's manifest list and
 * manifests whole, the index registry whole, every live data file's footer
 * (its tail and magic), and every registered index file's footer and head
 * (a small HNSW graph, IVF lists or a bitmap index whole). A reader GETs it
 * once and loads it into the object cache (io/ hs_store_unpack): the chain
 * manifest list -> manifests -> index files + data footers -> scalar
 * indexes, three or four waves, becomes one GET.
 *
 * Written after a commit won (txn.c calls hs_table_stream_write with the
 * version it just published; best effort: a failure only leaves the
 * version without one), for tables with an index registry. Its name is
 * derived from the metadata file's, so a reader needs no property and no
 * LIST, and only the winner of vN ever writes vN's. A missing, stale
 * (another table made anew at the URI: its header names another table
 * UUID, version or commit time) or damaged stream is ignored: the reads it
 * would have served are made as before, so a stream never changes an
 * answer, only the requests.
 *
 * Layout: "HSIS", u32 version (1), u64 metadata version, i64 the metadata's
 * last-updated-ms, i64 current snapshot id, i64 last-sequence-number, u16
 * table UUID length + UUID, u32 CRC-32C of these bytes, then the pack of
 * object ranges (io/s3_pack.c: its own checksum). Owns nothing after a
 * call returns but the process-wide memo of streams already tried.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/store.h"
#include "table.h"
#include "vector_index.h"

#define STREAM_MAGIC "HSIS"
#define STREAM_VERSION 1u
#define STREAM_SUFFIX ".hsis"
#define STREAM_REGISTRY_PROPERTY "hyperstream.index-registry"
/* What a stream holds at most (ranges), and what a reader accepts. */
#define STREAM_PACK_MAX ((size_t)48 << 20)
#define STREAM_BYTES_MAX ((size_t)64 << 20)
/* The ranges the search path prefetches (src/query/vector_search_index.c
 * VX_PREFETCH_TAIL / VX_PREFETCH_HEAD, vector_search_prep.c, plan.c): a
 * stream holding exactly those makes each of its prefetches a cache hit. */
#define STREAM_TAIL ((size_t)128 << 10)
#define STREAM_INDEX_HEAD ((size_t)256 << 10)
#define STREAM_INDEX_TAIL ((size_t)8 << 20)
#define STREAM_WHOLE ((size_t)8 << 20)

bool hs_table_stream_path(const hs_table *t, char *out, size_t cap) {
  if (t->metadata_path == NULL) return false;
  int n = snprintf(out, cap, "%s" STREAM_SUFFIX, t->metadata_path);
  return n > 0 && (size_t)n < cap;
}

bool hs_table_stream_name(const char *name) {
  size_t n = strlen(name), s = strlen(STREAM_SUFFIX);
  return n > s && strcmp(name + n - s, STREAM_SUFFIX) == 0;
}

static void put_le(uint8_t *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* The header binding a stream to t's loaded metadata. */
static bool header(const hs_table *t, hs_buf *out) {
  const hs_iceberg_metadata *m = &t->meta;
  const char *uuid = m->table_uuid != NULL ? m->table_uuid : "";
  size_t ul = strlen(uuid) < 64 ? strlen(uuid) : 64;
  uint8_t h[4 + 4 + 8 * 4 + 2 + 64 + 4];
  memcpy(h, STREAM_MAGIC, 4);
  put_le(h + 4, STREAM_VERSION, 4);
  put_le(h + 8, (uint64_t)t->version, 8);
  put_le(h + 16, (uint64_t)m->last_updated_ms, 8);
  put_le(h + 24, (uint64_t)hs_table_current_snapshot_id(t), 8);
  put_le(h + 32, (uint64_t)(m->has_last_sequence_number ? m->last_sequence_number : 0), 8);
  put_le(h + 40, ul, 2);
  memcpy(h + 42, uuid, ul);
  size_t n = 42 + ul;
  put_le(h + n, hs_crc32c_extend(0, h, n), 4);
  return hs_buf_append(out, h, n + 4);
}

/* Items list that grows (paths owned). */
typedef struct items {
  hs_store_prefetch_item *v;
  char **paths;
  size_t n, cap;
  bool oom;
} items;

static void items_add(items *l, const hs_table *t, const char *recorded, const char *what,
                      uint64_t off, size_t len, bool tail) {
  if (l->oom || recorded == NULL) return;
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    hs_store_prefetch_item *v = hs_realloc(l->v, cap * sizeof *v);
    char **p = v != NULL ? hs_realloc(l->paths, cap * sizeof *p) : NULL;
    if (v != NULL) l->v = v;
    if (p == NULL) {
      l->oom = true;
      return;
    }
    l->paths = p;
    l->cap = cap;
  }
  char *path = NULL;
  if (hs_table_resolve_path(t, recorded, what, &path, NULL) != HS_OK) return;
  l->paths[l->n] = path;
  l->v[l->n] = (hs_store_prefetch_item){path, off, len, tail, false};
  l->n++;
}

static void items_free(items *l) {
  for (size_t i = 0; i < l->n; i++) hs_free(l->paths[i]);
  hs_free(l->paths);
  hs_free(l->v);
}

static bool tried_before(const char *path, int64_t ms);

hs_status hs_table_stream_write(hs_table *t, size_t *n_segments, hs_error *err) {
  if (n_segments != NULL) *n_segments = 0;
  const hs_iceberg_snapshot *snap = hs_table_current(t);
  const char *reg = hs_iceberg_metadata_property(&t->meta, STREAM_REGISTRY_PROPERTY);
  char path[4300];
  if (!t->remote || t->catalog != NULL || snap == NULL || snap->manifest_list == NULL ||
      reg == NULL || !hs_table_stream_path(t, path, sizeof path))
    return HS_OK; /* nothing a stream would save */
  items l = {0};
  hs_buf buf;
  hs_buf_init(&buf);
  hs_arena a;
  hs_arena_init(&a);
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  hs_table_index_registry r;
  memset(&r, 0, sizeof r);
  bool have_reg = false;
  /* Whole: the manifest list, its manifests, the registry. */
  items_add(&l, t, snap->manifest_list, "manifest list", 0, STREAM_WHOLE, true);
  items_add(&l, t, reg, "index registry", 0, STREAM_WHOLE, true);
  hs_iceberg_manifest_list list;
  memset(&list, 0, sizeof list);
  hs_status st = hs_table_read_avro(t, snap->manifest_list, "manifest list", &buf, err);
  if (st == HS_OK) st = hs_iceberg_manifest_list_read(buf.data, buf.len, &a, &list, err);
  for (size_t i = 0; st == HS_OK && i < list.n_files; i++)
    items_add(
        &l, t, list.files[i].manifest_path, "manifest", 0,
        list.files[i].manifest_length > 0 ? (size_t)list.files[i].manifest_length : STREAM_WHOLE,
        true);
  if (st == HS_OK) st = hs_table_plan_files(t, -1, &plan, err);
  if (st == HS_OK) st = hs_table_index_registry_load(t, NULL, &r, err);
  have_reg = st == HS_OK;
  /* Data footers (and magic); index footers and heads. */
  for (size_t i = 0; st == HS_OK && i < plan.n_files; i++) {
    items_add(&l, t, plan.files[i].path, "data file", 0, STREAM_TAIL, true);
    items_add(&l, t, plan.files[i].path, "data file", 0, 4, false);
  }
  /* Index files: heads and footers of all in one wave first; then each
   * vector index opened here as a reader opens it (a quantized one lean:
   * all but its float32 vectors) and what that read packed; a scalar
   * index's tail, whole when small. */
  bool *live = r.n_entries ? hs_calloc(r.n_entries, sizeof *live) : NULL;
  if (r.n_entries && live == NULL) l.oom = true;
  for (size_t e = 0; st == HS_OK && live != NULL && e < r.n_entries; e++) {
    for (size_t i = 0; i < plan.n_files && !live[e]; i++)
      live[e] = strcmp(plan.files[i].path, r.entries[e].data_file) == 0;
    if (!live[e]) continue;
    items_add(&l, t, r.entries[e].index_file, "index file", 0, STREAM_TAIL, true);
    items_add(&l, t, r.entries[e].index_file, "index file", 0, STREAM_INDEX_HEAD, false);
  }
  if (st == HS_OK && !l.oom) (void)hs_store_prefetch(l.v, l.n);
  for (size_t e = 0; st == HS_OK && live != NULL && e < r.n_entries; e++) {
    const hs_table_index_entry *en = &r.entries[e];
    if (!live[e]) continue;
    bool vector = false;
    char *ip = NULL;
    if (hs_table_resolve_path(t, en->index_file, "index file", &ip, NULL) != HS_OK) continue;
    for (size_t c = 0; !vector && c < en->n_columns; c++) {
      hs_vidx *vx = NULL;
      hs_error ve = {0};
      vector = hs_table_vector_index_open(ip, en->columns[c], &vx, &ve) == HS_OK;
      hs_vidx_free(vx);
    }
    hs_free(ip);
    if (vector)
      items_add(&l, t, en->index_file, "index file", 0, 0, true); /* what the open read */
    else
      items_add(&l, t, en->index_file, "index file", 0, STREAM_INDEX_TAIL, true);
  }
  hs_free(live);
  if (st == HS_OK && l.oom) st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path);
  size_t n = 0;
  buf.len = 0;
  if (st == HS_OK && !header(t, &buf))
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path);
  if (st == HS_OK) st = hs_store_pack(l.v, l.n, STREAM_PACK_MAX, &buf, &n, err);
  if (st == HS_OK && n > 0) st = hs_store_put(path, buf.data, buf.len, err);
  /* This process's cache holds what the stream packs: never fetch it. */
  if (st == HS_OK && n > 0) (void)tried_before(path, t->meta.last_updated_ms);
  if (st == HS_OK && n_segments != NULL) *n_segments = n;
  if (have_reg) hs_table_index_registry_free(&r);
  hs_table_plan_free(&plan);
  hs_arena_reset(&a);
  hs_buf_free(&buf);
  items_free(&l);
  return st;
}

/* The streams this process tried (loaded, missing or refused), by name and
 * the metadata's commit time: each is fetched at most once. */
#define TRIED_MAX 64
static pthread_mutex_t tried_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  char *path;
  int64_t updated_ms;
} tried[TRIED_MAX];
static size_t tried_at;
static hs_table_stream_stats g_stats;

/* Whether (path, ms) was tried; marks it when not. */
static bool tried_before(const char *path, int64_t ms) {
  pthread_mutex_lock(&tried_mu);
  for (size_t i = 0; i < TRIED_MAX; i++)
    if (tried[i].path != NULL && tried[i].updated_ms == ms && strcmp(tried[i].path, path) == 0) {
      pthread_mutex_unlock(&tried_mu);
      return true;
    }
  hs_free(tried[tried_at].path);
  tried[tried_at].path = hs_strdup(path);
  tried[tried_at].updated_ms = ms;
  tried_at = (tried_at + 1) % TRIED_MAX;
  pthread_mutex_unlock(&tried_mu);
  return false;
}

hs_status hs_table_stream_parse(const hs_table *t, const uint8_t *data, size_t len,
                                const char *what, bool load, size_t *n_segments, hs_error *err) {
  *n_segments = 0;
  if (len < 46 || memcmp(data, STREAM_MAGIC, 4) != 0)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: not an index stream (magic)", what);
  if (get_le(data + 4, 4) != STREAM_VERSION)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: index stream version %u (this build reads %u)", what,
                        (unsigned)get_le(data + 4, 4), STREAM_VERSION);
  size_t ul = (size_t)get_le(data + 40, 2);
  if (ul > 64 || len < 46 + ul)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: truncated header", what);
  size_t hn = 42 + ul;
  if (hs_crc32c_extend(0, data, hn) != (uint32_t)get_le(data + hn, 4))
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: header checksum mismatch", what);
  if (t != NULL) {
    hs_buf want;
    hs_buf_init(&want);
    bool same = header(t, &want) && want.len == hn + 4 && memcmp(want.data, data, hn) == 0;
    hs_buf_free(&want);
    if (!same)
      return hs_error_set(err, HS_ERR_CONFLICT,
                          "%s: written for another version of the table (stale)", what);
  }
  return load ? hs_store_unpack(data + hn + 4, len - hn - 4, what, n_segments, err)
              : hs_store_pack_check(data + hn + 4, len - hn - 4, what, n_segments, err);
}

bool hs_table_stream_seen(const char *path) {
  pthread_mutex_lock(&tried_mu);
  bool seen = false;
  for (size_t i = 0; i < TRIED_MAX && !seen; i++)
    seen = tried[i].path != NULL && strcmp(tried[i].path, path) == 0;
  pthread_mutex_unlock(&tried_mu);
  return seen;
}

bool hs_table_stream_wanted(const hs_table *t, char *path, size_t cap) {
  return t->remote && t->catalog == NULL && hs_table_current(t) != NULL &&
         hs_iceberg_metadata_property(&t->meta, STREAM_REGISTRY_PROPERTY) != NULL &&
         hs_table_stream_path(t, path, cap) && !tried_before(path, t->meta.last_updated_ms);
}

size_t hs_table_stream_max_bytes(void) {
  return STREAM_BYTES_MAX;
}

void hs_table_stream_take(const hs_table *t, const char *path, const hs_buf *bytes, hs_status got) {
  hs_error e = {0};
  size_t n = 0;
  hs_status st = got;
  if (st == HS_OK) st = hs_table_stream_parse(t, bytes->data, bytes->len, path, true, &n, &e);
  pthread_mutex_lock(&tried_mu);
  if (st == HS_OK) {
    g_stats.loaded++;
    g_stats.segments += (int64_t)n;
    g_stats.bytes += (int64_t)bytes->len;
  } else if (st == HS_ERR_NOT_FOUND) {
    g_stats.missing++;
  } else {
    g_stats.refused++;
    if (got != HS_OK) snprintf(e.message, sizeof e.message, "%.200s: not read", path);
    snprintf(g_stats.last_refusal, sizeof g_stats.last_refusal, "%.200s", e.message);
  }
  pthread_mutex_unlock(&tried_mu);
}

void hs_table_stream_load(const hs_table *t) {
  char path[4300];
  if (!hs_table_stream_wanted(t, path, sizeof path)) return;
  hs_buf buf;
  hs_buf_init(&buf);
  hs_error e = {0};
  hs_status st = hs_store_get(path, STREAM_BYTES_MAX, &buf, NULL, &e);
  hs_table_stream_take(t, path, &buf, st);
  hs_buf_free(&buf);
}

void hs_table_stream_stats_get(hs_table_stream_stats *out, bool reset) {
  pthread_mutex_lock(&tried_mu);
  *out = g_stats;
  if (reset) memset(&g_stats, 0, sizeof g_stats);
  pthread_mutex_unlock(&tried_mu);
}
