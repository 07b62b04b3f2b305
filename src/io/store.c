/*
 * store.c — the object-store interface (store.h): a URI resolved to its
 * backend (hs_store_resolve), then the call handed to that backend's table
 * (local.c, s3.c). Options and their resolution: store_config.c.
 *
 * URIs. "s3://bucket/key" is S3: the bucket 3-63 characters of [a-z0-9.-],
 * the key what follows the first '/' (empty for the bucket root); a key
 * with an empty first segment ("s3://b//k") or a "." / ".." segment is
 * refused, since S3 would store it literally while every path-minded
 * caller would read it as a different place. "file:///p" and
 * "file://localhost/p" are the local path "/p" (no percent-decoding:
 * names are taken as written); anything else is a local path as is.
 *
 * Calls that take several locations (get_ranges, put_many) split them by
 * backend and make one call per backend, so S3 requests still go out
 * concurrently.
 */
#include <string.h>

#include "store_internal.h"

hs_store_kind hs_store_kind_of(const char *uri) {
  return uri != NULL && strncmp(uri, "s3://", 5) == 0 ? HS_STORE_S3 : HS_STORE_LOCAL;
}

bool hs_store_is_remote(const char *uri) {
  return hs_store_kind_of(uri) != HS_STORE_LOCAL;
}

static const hs_store_backend *backend_of(hs_store_kind kind) {
  return kind == HS_STORE_S3 ? &hs_store_s3_backend : &hs_store_local_backend;
}

/* ------------------------------------------------------------ parsing */

static bool bucket_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

static hs_status parse_s3(const char *uri, hs_store_loc *loc, hs_error *err) {
  const char *b = uri + 5;
  const char *slash = strchr(b, '/');
  size_t blen = slash ? (size_t)(slash - b) : strlen(b);
  if (blen == 0) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: no bucket name (s3://bucket/key)", uri);
  }
  if (blen < 3 || blen > 63) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: bucket name of %zu characters (S3 allows 3 to 63)", uri, blen);
  }
  for (size_t i = 0; i < blen; i++) {
    if (!bucket_char(b[i])) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "%s: bucket name with '%c' (S3 allows a-z, 0-9, '.' and '-')", uri, b[i]);
    }
  }
  memcpy(loc->bucket, b, blen);
  loc->bucket[blen] = '\0';
  loc->key = slash ? slash + 1 : "";
  for (const char *seg = loc->key; *loc->key != '\0';) {
    const char *end = strchr(seg, '/');
    size_t n = end ? (size_t)(end - seg) : strlen(seg);
    if (n == 0 && seg == loc->key) {
      return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: the key starts with '/'", uri);
    }
    if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.')) {
      return hs_error_set(
          err, HS_ERR_INVALID_ARG,
          "%s: the key has a '%.*s' segment (keys name objects, not relative paths)", uri, (int)n,
          seg);
    }
    if (end == NULL) break;
    seg = end + 1;
  }
  return HS_OK;
}

static hs_status parse_local(const char *uri, hs_store_loc *loc, hs_error *err) {
  const char *p = uri;
  if (strncmp(uri, "file://", 7) == 0) {
    p = uri + 7;
    if (strncmp(p, "localhost/", 10) == 0) p += 9;
    if (p[0] != '/') {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "%s: a file URI names a local path (file:///path); hosts are not "
                          "supported",
                          uri);
    }
  }
  if (p[0] == '\0') return hs_error_set(err, HS_ERR_INVALID_ARG, "empty location");
  loc->path = p;
  return HS_OK;
}

hs_status hs_store_resolve(const char *uri, hs_store_loc *loc, hs_store_config *cfg,
                           hs_error *err) {
  memset(loc, 0, sizeof *loc);
  if (uri == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "no location (NULL URI)");
  loc->uri = uri;
  loc->kind = hs_store_kind_of(uri);
  if (loc->kind == HS_STORE_LOCAL) return parse_local(uri, loc, err);
  hs_status st = parse_s3(uri, loc, err);
  if (st == HS_OK) st = hs_store_config_resolve(uri, cfg, err);
  if (st == HS_OK) loc->cfg = cfg;
  return st;
}

char *hs_store_join(const char *base, const char *rel) {
  if (base == NULL || rel == NULL) return NULL;
  size_t keep = 0; /* never strip the slashes of "scheme://" */
  const char *scheme = strstr(base, "://");
  if (scheme != NULL) keep = (size_t)(scheme - base) + 3;
  size_t bl = strlen(base);
  while (bl > keep && base[bl - 1] == '/') bl--;
  while (*rel == '/') rel++;
  size_t rl = strlen(rel);
  /* "s3://" + "b" is "s3://b", "file:///" + "x" "file:///x", "/" + "x"
   * "/x", "" + "x" "x". */
  bool sep = bl > keep || base[keep] == '/';
  size_t total;
  if (!hs_add_size(bl, rl, &total) || !hs_add_size(total, 2, &total)) return NULL;
  char *out = hs_malloc(total);
  if (out == NULL) return NULL;
  memcpy(out, base, bl);
  size_t n = bl;
  if (sep) out[n++] = '/';
  memcpy(out + n, rel, rl);
  out[n + rl] = '\0';
  return out;
}

hs_status hs_store_validate(const char *uri, hs_error *err) {
  hs_store_loc loc;
  hs_store_config cfg;
  return hs_store_resolve(uri, &loc, &cfg, err);
}

/* ------------------------------------------------------- single calls */

/* Resolve `uri` into `loc` (and `cfg`, which S3 locations point at). */
#define RESOLVE(uri)                                        \
  hs_store_loc loc;                                         \
  hs_store_config cfg;                                      \
  hs_status st_ = hs_store_resolve((uri), &loc, &cfg, err); \
  if (st_ != HS_OK) return st_;                             \
  const hs_store_backend *be = backend_of(loc.kind)

hs_status hs_store_get(const char *uri, size_t max_bytes, hs_buf *out, hs_object_info *info,
                       hs_error *err) {
  hs_object_info scratch;
  RESOLVE(uri);
  return be->get(&loc, max_bytes, out, info ? info : &scratch, err);
}

hs_status hs_store_get_range(const char *uri, uint64_t offset, size_t len, void *dst,
                             hs_error *err) {
  RESOLVE(uri);
  return be->get_range(&loc, offset, len, dst, err);
}

hs_status hs_store_head(const char *uri, hs_object_info *info, hs_error *err) {
  RESOLVE(uri);
  return be->head(&loc, info, err);
}

hs_status hs_store_exists(const char *uri, bool *exists, hs_error *err) {
  *exists = false;
  hs_object_info info;
  hs_error e = {0};
  hs_status st = hs_store_head(uri, &info, &e);
  if (st == HS_ERR_NOT_FOUND) return HS_OK;
  if (st != HS_OK) return hs_error_set(err, st, "%s", e.message);
  *exists = true;
  return HS_OK;
}

hs_status hs_store_put(const char *uri, const void *data, size_t len, hs_error *err) {
  RESOLVE(uri);
  return be->put(&loc, data, len, err);
}

hs_status hs_store_put_if_absent(const char *uri, const void *data, size_t len, bool *won,
                                 hs_error *err) {
  *won = false;
  RESOLVE(uri);
  return be->put_if_absent(&loc, data, len, won, err);
}

hs_status hs_store_put_if_match(const char *uri, const void *data, size_t len, const char *etag,
                                bool *won, hs_error *err) {
  *won = false;
  if (etag == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: no etag to match", uri);
  RESOLVE(uri);
  return be->put_if_match(&loc, data, len, etag, won, err);
}

hs_status hs_store_delete(const char *uri, hs_error *err) {
  RESOLVE(uri);
  return be->del(&loc, err);
}

hs_status hs_store_mkdirs(const char *uri, hs_error *err) {
  RESOLVE(uri);
  return be->mkdirs(&loc, err);
}

hs_status hs_store_list(const char *dir_uri, bool recursive, hs_store_entry **out, size_t *n_out,
                        hs_error *err) {
  *out = NULL;
  *n_out = 0;
  RESOLVE(dir_uri);
  return be->list(&loc, recursive, out, n_out, err);
}

hs_status hs_store_list_prefix(const char *uri_prefix, hs_store_entry **out, size_t *n_out,
                               hs_error *err) {
  *out = NULL;
  *n_out = 0;
  {
    RESOLVE(uri_prefix);
    if (be->list_prefix != NULL) return be->list_prefix(&loc, out, n_out, err);
  }
  /* The folder, filtered. */
  const char *slash = strrchr(uri_prefix, '/');
  if (slash == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: no folder to list", uri_prefix);
  }
  size_t dlen = (size_t)(slash - uri_prefix);
  char *dir = hs_malloc(dlen + 1);
  if (dir == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri_prefix);
  memcpy(dir, uri_prefix, dlen);
  dir[dlen] = '\0';
  hs_store_entry *all = NULL;
  size_t n = 0;
  hs_status st = hs_store_list(dlen > 0 ? dir : "/", false, &all, &n, err);
  hs_free(dir);
  if (st != HS_OK) return st;
  const char *base = slash + 1;
  size_t blen = strlen(base), k = 0;
  for (size_t i = 0; i < n; i++) {
    if (strncmp(all[i].name, base, blen) == 0) {
      all[k++] = all[i];
    } else {
      hs_free(all[i].name);
    }
  }
  *out = all;
  *n_out = k;
  return HS_OK;
}

void hs_store_entries_free(hs_store_entry *entries, size_t n) {
  if (entries == NULL) return;
  for (size_t i = 0; i < n; i++) hs_free(entries[i].name);
  hs_free(entries);
}

/* ----------------------------------------------------- batched calls */

/* Locations of a batch, resolved. S3 locations point at configs; one
 * config serves a run of locations with the same URI (the ranges of one
 * object). */
typedef struct batch {
  hs_store_loc *locs;
  hs_store_config *cfgs; /* one per S3 location at most */
  size_t *order;         /* indices, local ones first, then S3 ones */
  size_t n_local;
} batch;

static void batch_free(batch *b) {
  hs_free(b->locs);
  hs_free(b->cfgs);
  hs_free(b->order);
}

static hs_status batch_resolve(const char *const *uris, size_t n, batch *b, hs_error *err) {
  memset(b, 0, sizeof *b);
  size_t n_s3 = 0;
  for (size_t i = 0; i < n; i++) n_s3 += hs_store_kind_of(uris[i]) == HS_STORE_S3;
  b->locs = hs_calloc(n ? n : 1, sizeof *b->locs);
  b->order = hs_calloc(n ? n : 1, sizeof *b->order);
  b->cfgs = n_s3 ? hs_calloc(n_s3, sizeof *b->cfgs) : NULL;
  if (b->locs == NULL || b->order == NULL || (n_s3 && b->cfgs == NULL)) {
    batch_free(b);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", n ? uris[0] : "batch");
  }
  size_t used_cfg = 0, w = 0;
  for (size_t i = 0; i < n; i++) {
    hs_store_loc *l = &b->locs[i];
    bool same =
        i > 0 && uris[i] != NULL && uris[i - 1] != NULL && strcmp(uris[i], uris[i - 1]) == 0;
    if (same) {
      *l = b->locs[i - 1];
      l->uri = uris[i];
      size_t off = (size_t)(b->locs[i - 1].path ? b->locs[i - 1].path - uris[i - 1] : 0);
      if (l->path) l->path = uris[i] + off;
      if (l->kind == HS_STORE_S3) l->key = uris[i] + (size_t)(b->locs[i - 1].key - uris[i - 1]);
    } else {
      hs_store_config *cfg = hs_store_kind_of(uris[i]) == HS_STORE_S3 ? &b->cfgs[used_cfg++] : NULL;
      hs_store_config unused;
      hs_status st = hs_store_resolve(uris[i], l, cfg ? cfg : &unused, err);
      if (st != HS_OK) {
        batch_free(b);
        return st;
      }
    }
    if (l->kind == HS_STORE_LOCAL) b->order[w++] = i;
  }
  b->n_local = w;
  for (size_t i = 0; i < n; i++)
    if (b->locs[i].kind == HS_STORE_S3) b->order[w++] = i;
  return HS_OK;
}

hs_status hs_store_get_ranges(const hs_store_range *ranges, size_t n, hs_error *err) {
  if (n == 0) return HS_OK;
  const char **uris = hs_malloc(n * sizeof *uris);
  if (uris == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", ranges[0].uri);
  for (size_t i = 0; i < n; i++) uris[i] = ranges[i].uri;
  batch b;
  hs_status st = batch_resolve(uris, n, &b, err);
  hs_free(uris);
  if (st != HS_OK) return st;
  /* One backend: the ranges as given. Both: each backend its own. */
  hs_store_loc *locs = hs_malloc(n * sizeof *locs);
  hs_store_range *rs = hs_malloc(n * sizeof *rs);
  if (locs == NULL || rs == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    locs[i] = b.locs[b.order[i]];
    rs[i] = ranges[b.order[i]];
  }
  if (st == HS_OK && b.n_local > 0)
    st = hs_store_local_backend.get_ranges(locs, rs, b.n_local, err);
  if (st == HS_OK && b.n_local < n)
    st = hs_store_s3_backend.get_ranges(locs + b.n_local, rs + b.n_local, n - b.n_local, err);
  hs_free(locs);
  hs_free(rs);
  batch_free(&b);
  return st;
}

hs_status hs_store_list_prefixes(const char *const *uri_prefixes, size_t n, hs_store_entry **outs,
                                 size_t *n_outs, hs_error *err) {
  return hs_store_list_prefixes_get(uri_prefixes, n, outs, n_outs, NULL, 0, err);
}

hs_status hs_store_list_prefixes_get(const char *const *uri_prefixes, size_t n,
                                     hs_store_entry **outs, size_t *n_outs, hs_store_get_item *gets,
                                     size_t n_gets, hs_error *err) {
  return hs_store_list_prefixes_wave(uri_prefixes, n, outs, n_outs, gets, n_gets, NULL, 0, 0, err);
}

hs_status hs_store_list_prefixes_wave(const char *const *uri_prefixes, size_t n,
                                      hs_store_entry **outs, size_t *n_outs,
                                      hs_store_get_item *gets, size_t n_gets,
                                      const hs_store_prefetch_item *pf, size_t n_pf,
                                      uint64_t pf_max, hs_error *err) {
  for (size_t i = 0; i < n; i++) {
    outs[i] = NULL;
    n_outs[i] = 0;
  }
  for (size_t k = 0; k < n_gets; k++) gets[k].status = HS_ERR_IO;
  if (n == 0 && n_gets == 0) return HS_OK;
  batch b, g;
  memset(&b, 0, sizeof b);
  memset(&g, 0, sizeof g);
  hs_status st = n > 0 ? batch_resolve(uri_prefixes, n, &b, err) : HS_OK;
  if (st != HS_OK) return st;
  const char **guris = n_gets ? hs_malloc(n_gets * sizeof *guris) : NULL;
  bool together = n > 0 && b.n_local == 0 && hs_store_s3_backend.list_prefixes != NULL &&
                  (n_gets == 0 || guris != NULL);
  for (size_t k = 0; together && k < n_gets; k++) guris[k] = gets[k].uri;
  if (together && n_gets > 0) together = batch_resolve(guris, n_gets, &g, NULL) == HS_OK;
  if (together && n_gets > 0 && g.n_local > 0) {
    batch_free(&g);
    together = false;
  }
  hs_free(guris);
  /* The prefetch: its S3 items only (local files are mapped). */
  hs_store_prefetch_item *pits = NULL;
  const char **puris = NULL;
  size_t np = 0;
  batch p;
  memset(&p, 0, sizeof p);
  if (together && n_pf > 0 && (pits = hs_malloc(n_pf * sizeof *pits)) != NULL &&
      (puris = hs_malloc(n_pf * sizeof *puris)) != NULL) {
    for (size_t j = 0; j < n_pf; j++) {
      if (hs_store_kind_of(pf[j].uri) != HS_STORE_S3) continue;
      puris[np] = pf[j].uri;
      pits[np++] = pf[j];
    }
    if (np > 0 && batch_resolve(puris, np, &p, NULL) != HS_OK) np = 0;
  }
  if (together) {
    /* batch_resolve sorts local first: all S3 here, so order is kept. */
    st = hs_store_s3_backend.list_prefixes(b.locs, n, outs, n_outs, n_gets ? g.locs : NULL, gets,
                                           n_gets, np ? p.locs : NULL, pits, np, pf_max, err);
    if (n_gets > 0) batch_free(&g);
    if (np > 0) batch_free(&p);
    batch_free(&b);
    hs_free(pits);
    hs_free(puris);
    return st;
  }
  hs_free(pits);
  hs_free(puris);
  if (n > 0) batch_free(&b);
  for (size_t i = 0; st == HS_OK && i < n; i++)
    st = hs_store_list_prefix(uri_prefixes[i], &outs[i], &n_outs[i], err);
  for (size_t i = 0; st != HS_OK && i < n; i++) {
    hs_store_entries_free(outs[i], n_outs[i]);
    outs[i] = NULL;
    n_outs[i] = 0;
  }
  for (size_t k = 0; st == HS_OK && k < n_gets; k++) {
    hs_error e = {0};
    gets[k].status = hs_store_get(gets[k].uri, gets[k].max_bytes, gets[k].out, &gets[k].info, &e);
  }
  if (st == HS_OK && n_pf > 0) (void)hs_store_prefetch_max(pf, n_pf, pf_max);
  return st;
}

size_t hs_store_prefetch(const hs_store_prefetch_item *items, size_t n) {
  return hs_store_prefetch_max(items, n, HS_STORE_PREFETCH_MAX);
}

size_t hs_store_prefetch_max(const hs_store_prefetch_item *items, size_t n, uint64_t max_bytes) {
  if (n == 0 || hs_store_s3_backend.prefetch == NULL) return 0;
  size_t n_s3 = 0;
  for (size_t i = 0; i < n; i++) n_s3 += hs_store_kind_of(items[i].uri) == HS_STORE_S3;
  if (n_s3 == 0) return 0;
  const char **uris = hs_malloc(n_s3 * sizeof *uris);
  hs_store_prefetch_item *its = hs_malloc(n_s3 * sizeof *its);
  size_t w = 0, done = 0;
  for (size_t i = 0; uris != NULL && its != NULL && i < n; i++) {
    if (hs_store_kind_of(items[i].uri) != HS_STORE_S3) continue;
    uris[w] = items[i].uri;
    its[w++] = items[i];
  }
  batch b;
  if (uris != NULL && its != NULL && batch_resolve(uris, w, &b, NULL) == HS_OK) {
    done = hs_store_s3_backend.prefetch(b.locs, its, w, max_bytes);
    batch_free(&b);
  }
  hs_free(uris);
  hs_free(its);
  return done;
}

size_t hs_store_prefetch_missing(const hs_store_prefetch_item *items, size_t n) {
  if (n == 0 || hs_store_s3_backend.prefetch_missing == NULL) return 0;
  const char **uris = hs_malloc(n * sizeof *uris);
  hs_store_prefetch_item *its = hs_malloc(n * sizeof *its);
  size_t w = 0, missing = 0;
  for (size_t i = 0; uris != NULL && its != NULL && i < n; i++) {
    if (hs_store_kind_of(items[i].uri) != HS_STORE_S3) continue;
    uris[w] = items[i].uri;
    its[w++] = items[i];
  }
  batch b;
  if (uris == NULL || its == NULL) {
    missing = n; /* unknown: as if nothing were held */
  } else if (w > 0 && batch_resolve(uris, w, &b, NULL) == HS_OK) {
    missing = hs_store_s3_backend.prefetch_missing(b.locs, its, w);
    batch_free(&b);
  } else if (w > 0) {
    missing = w;
  }
  hs_free(uris);
  hs_free(its);
  return missing;
}

hs_status hs_store_pack(const hs_store_prefetch_item *items, size_t n, size_t max_bytes,
                        hs_buf *out, size_t *n_segments, hs_error *err) {
  *n_segments = 0;
  if (hs_store_s3_backend.pack == NULL) return HS_OK;
  size_t n_s3 = 0;
  for (size_t i = 0; i < n; i++) n_s3 += hs_store_kind_of(items[i].uri) == HS_STORE_S3;
  const char **uris = hs_malloc((n_s3 ? n_s3 : 1) * sizeof *uris);
  hs_store_prefetch_item *its = hs_malloc((n_s3 ? n_s3 : 1) * sizeof *its);
  size_t w = 0;
  for (size_t i = 0; uris != NULL && its != NULL && i < n; i++) {
    if (hs_store_kind_of(items[i].uri) != HS_STORE_S3) continue;
    uris[w] = items[i].uri;
    its[w++] = items[i];
  }
  hs_status st =
      uris != NULL && its != NULL ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "pack: out of memory");
  batch b;
  if (st == HS_OK && w > 0 && (st = batch_resolve(uris, w, &b, err)) == HS_OK) {
    st = hs_store_s3_backend.pack(b.locs, its, w, max_bytes, out, n_segments, err);
    batch_free(&b);
  }
  hs_free(uris);
  hs_free(its);
  return st;
}

hs_status hs_store_unpack(const uint8_t *data, size_t len, const char *what, size_t *n_loaded,
                          hs_error *err) {
  *n_loaded = 0;
  if (hs_store_s3_backend.unpack == NULL)
    return hs_store_pack_check(data, len, what, n_loaded, err);
  return hs_store_s3_backend.unpack(data, len, what, n_loaded, err);
}

hs_status hs_store_put_many(const hs_store_put_item *items, size_t n, hs_error *err) {
  if (n == 0) return HS_OK;
  const char **uris = hs_malloc(n * sizeof *uris);
  if (uris == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", items[0].uri);
  for (size_t i = 0; i < n; i++) uris[i] = items[i].uri;
  batch b;
  hs_status st = batch_resolve(uris, n, &b, err);
  hs_free(uris);
  if (st != HS_OK) return st;
  hs_store_loc *locs = hs_malloc(n * sizeof *locs);
  hs_store_put_item *its = hs_malloc(n * sizeof *its);
  if (locs == NULL || its == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    locs[i] = b.locs[b.order[i]];
    its[i] = items[b.order[i]];
  }
  bool local_done = false;
  if (st == HS_OK && b.n_local > 0) {
    st = hs_store_local_backend.put_many(locs, its, b.n_local, err);
    local_done = st == HS_OK;
  }
  if (st == HS_OK && b.n_local < n) {
    st = hs_store_s3_backend.put_many(locs + b.n_local, its + b.n_local, n - b.n_local, err);
    /* all or nothing: the local half goes again (best effort) */
    for (size_t i = 0; st != HS_OK && local_done && i < b.n_local; i++) {
      hs_store_local_backend.del(&locs[i], NULL);
    }
  }
  hs_free(locs);
  hs_free(its);
  batch_free(&b);
  return st;
}

/* ---------------------------------------------------- sources, sinks */

hs_status hs_store_source_open(const char *uri, hs_source **out, hs_error *err) {
  *out = NULL;
  RESOLVE(uri);
  return be->source_open(&loc, out, err);
}

hs_status hs_store_sink_open(const char *uri, hs_sink **out, hs_error *err) {
  *out = NULL;
  RESOLVE(uri);
  return be->sink_open(&loc, out, err);
}

static uint64_t fnv1a(const char *s) {
  uint64_t h = 14695981039346656037ull;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

bool hs_store_stamp_from_info(const char *uri, const hs_object_info *info, hs_fs_stamp *out) {
  if (!hs_store_is_remote(uri)) {
    hs_store_loc loc;
    hs_store_config unused;
    return hs_store_resolve(uri, &loc, &unused, NULL) == HS_OK && hs_fs_stamp_of(loc.path, out);
  }
  if (info == NULL || info->etag[0] == '\0') return false;
  /* The top bit of dev set: never equal to a local file's stamp. */
  out->dev = fnv1a(uri) | (1ull << 63);
  out->ino = fnv1a(info->etag);
  out->size = (int64_t)info->size;
  out->mtime_ns = info->mtime_ms * 1000000;
  return true;
}

static hs_status head_cached(const char *uri, hs_object_info *info, hs_error *err) {
  RESOLVE(uri);
  return be->head_cached != NULL ? be->head_cached(&loc, info, err) : be->head(&loc, info, err);
}

bool hs_store_stamp_of(const char *uri, hs_fs_stamp *out) {
  hs_object_info info;
  if (!hs_store_is_remote(uri)) return hs_store_stamp_from_info(uri, NULL, out);
  return head_cached(uri, &info, NULL) == HS_OK && hs_store_stamp_from_info(uri, &info, out);
}
