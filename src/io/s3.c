/*
 * s3.c — the S3 backend (store_internal.h): whole and ranged GETs (many
 * ranges at once, nearby ones of an object coalesced), HEAD, PUT,
 * conditional PUTs (If-None-Match: *, If-Match), DELETE, ListObjectsV2 with
 * continuation, and sources over them. Multipart uploads (past one 8 MiB
 * part, 4 parts at once) and the sink are s3_upload.c; the HTTP side
 * (signing, retries, errors) s3_http.c; the XML side s3_xml.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_internal.h"

#define S3_COALESCE_GAP ((uint64_t)64 << 10)   /* ranges closer than this share a GET */
#define S3_COALESCED_MAX ((size_t)16 << 20)    /* a shared GET fetches at most this */
#define S3_LIST_PAGE_MAX ((size_t)32 << 20)    /* one ListObjectsV2 answer */
#define S3_WRITE_THROUGH_MAX ((size_t)1 << 20) /* PUTs this small are kept in the cache */

/* -------------------------------------------------------------- reads */

static hs_status s3_head(const hs_store_loc *loc, hs_object_info *info, hs_error *err) {
  hs_s3_req r;
  hs_s3_req_init(&r, loc, "HEAD", "HEAD");
  hs_status st = hs_s3_perform(&r, err);
  if (st == HS_OK) {
    memset(info, 0, sizeof *info);
    info->size = r.content_length > 0 ? (uint64_t)r.content_length : 0;
    info->mtime_ms = r.mtime_ms;
    snprintf(info->etag, sizeof info->etag, "%s", r.etag);
    hs_s3_cache_head_put(loc, info);
  } else if (st == HS_ERR_NOT_FOUND) {
    hs_s3_cache_forget(loc);
  }
  hs_s3_req_free(&r);
  return st;
}

static hs_status s3_get(const hs_store_loc *loc, size_t max_bytes, hs_buf *out,
                        hs_object_info *info, hs_error *err) {
  hs_object_info seen;
  if (hs_s3_cache_get_whole(loc, max_bytes, out, &seen)) {
    if (info != NULL) *info = seen;
    return HS_OK;
  }
  hs_s3_req r;
  hs_s3_req_init(&r, loc, "GET", "GET");
  r.out = out;
  r.out_max = max_bytes;
  hs_status st = hs_s3_perform(&r, err);
  if (st == HS_OK && info != NULL) {
    memset(info, 0, sizeof *info);
    info->size = r.got;
    info->mtime_ms = r.mtime_ms;
    snprintf(info->etag, sizeof info->etag, "%s", r.etag);
  }
  hs_s3_req_free(&r);
  return st;
}

/* A ranged GET of [offset, offset + len) into dst, set up but not run. */
static void range_req(hs_s3_req *r, const hs_store_loc *loc, uint64_t offset, size_t len, void *dst,
                      char *range_hdr, size_t cap) {
  hs_s3_req_init(r, loc, "GET range", "GET");
  snprintf(range_hdr, cap, "Range: bytes=%llu-%llu", (unsigned long long)offset,
           (unsigned long long)(offset + len - 1));
  r->hdr[0] = range_hdr;
  r->dst = dst;
  r->dst_len = len;
  r->accept[0] = 416;
}

/* After a ranged GET: all of it, or HS_ERR_CORRUPT (the object is shorter). */
static hs_status range_check(const hs_s3_req *r, uint64_t offset, size_t len, hs_error *err) {
  if (r->status == 416 || r->got != len || (r->status == 200 && offset != 0)) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: GET range: %zu bytes at offset %llu are past the end of the object "
                        "(%ld, %zu bytes came)",
                        r->loc->uri, len, (unsigned long long)offset, r->status, r->got);
  }
  return HS_OK;
}

static hs_status s3_get_range(const hs_store_loc *loc, uint64_t offset, size_t len, void *dst,
                              hs_error *err) {
  if (len == 0) {
    hs_object_info info;
    hs_status st = s3_head(loc, &info, err);
    if (st == HS_OK && offset > info.size) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "%s: GET range: offset %llu is past the end (%llu)",
                        loc->uri, (unsigned long long)offset, (unsigned long long)info.size);
    }
    return st;
  }
  hs_s3_req r;
  char hdr[96];
  range_req(&r, loc, offset, len, dst, hdr, sizeof hdr);
  hs_status st = hs_s3_perform(&r, err);
  if (st == HS_OK) st = range_check(&r, offset, len, err);
  hs_s3_req_free(&r);
  return st;
}

hs_status hs_s3_get_range_if(const hs_store_loc *loc, const char *etag, uint64_t offset, size_t len,
                             void *dst, hs_error *err) {
  if (etag == NULL || etag[0] == '\0') return s3_get_range(loc, offset, len, dst, err);
  hs_s3_req r;
  char hdr[96], cond[128];
  range_req(&r, loc, offset, len, dst, hdr, sizeof hdr);
  snprintf(cond, sizeof cond, "If-Match: \"%s\"", etag);
  r.hdr[1] = cond;
  r.accept[1] = 412;
  hs_status st = hs_s3_perform(&r, err);
  if (st == HS_OK && r.status == 412) {
    hs_s3_cache_forget(loc);
    st = hs_error_set(err, HS_ERR_CONFLICT,
                      "%s: the object changed while it was being read (its ETag is no longer "
                      "\"%s\"); open the table again",
                      loc->uri, etag);
  } else if (st == HS_OK) {
    st = range_check(&r, offset, len, err);
  }
  hs_s3_req_free(&r);
  return st;
}

/* One GET of get_ranges: a span of one object covering ranges order[a..b). */
typedef struct s3_span_job {
  hs_s3_req req;
  uint64_t offset;
  size_t len;
  size_t a, b;
  uint8_t *tmp; /* owned when the span covers more than one range */
  char hdr[96];
} s3_span_job;

static bool same_object(const hs_store_loc *x, const hs_store_loc *y) {
  return x->cfg == y->cfg && strcmp(x->bucket, y->bucket) == 0 && strcmp(x->key, y->key) == 0;
}

/* Sort key of one range: which object, where. */
typedef struct s3_range_key {
  const hs_store_loc *loc;
  uint64_t offset;
  size_t idx;
} s3_range_key;

static int by_object_offset(const void *pa, const void *pb) {
  const s3_range_key *a = pa, *b = pb;
  int c = strcmp(a->loc->bucket, b->loc->bucket);
  if (c == 0) c = strcmp(a->loc->key, b->loc->key);
  if (c == 0) c = a->loc->cfg < b->loc->cfg ? -1 : a->loc->cfg > b->loc->cfg;
  if (c == 0) c = a->offset < b->offset ? -1 : a->offset > b->offset;
  return c != 0 ? c : (a->idx < b->idx ? -1 : a->idx > b->idx);
}

/* order[0..n) sorted by (object, offset). */
static bool sort_ranges(size_t *order, size_t n, const hs_store_loc *locs,
                        const hs_store_range *ranges) {
  s3_range_key *keys = hs_calloc(n ? n : 1, sizeof *keys);
  if (keys == NULL) return false;
  for (size_t i = 0; i < n; i++) {
    keys[i] = (s3_range_key){&locs[order[i]], ranges[order[i]].offset, order[i]};
  }
  qsort(keys, n, sizeof *keys, by_object_offset);
  for (size_t i = 0; i < n; i++) order[i] = keys[i].idx;
  hs_free(keys);
  return true;
}

/* One HEAD of get_ranges: an object with zero-length ranges zorder[a..b),
 * whose offsets must not pass its end (the largest is max_offset). */
typedef struct s3_head_job {
  hs_s3_req req;
  uint64_t max_offset;
} s3_head_job;

/* Ranges of length > 0 become (coalesced) ranged GETs; a zero-length range
 * reads nothing but, as in get_range, its offset must be at most the
 * object's size: each distinct object that has one is HEADed once, along
 * with the GETs. */
static hs_status s3_get_ranges(const hs_store_loc *locs, const hs_store_range *ranges, size_t n,
                               hs_error *err) {
  size_t *order = hs_calloc(n ? n : 1, sizeof *order);
  size_t *zorder = hs_calloc(n ? n : 1, sizeof *zorder);
  s3_span_job *jobs = hs_calloc(n ? n : 1, sizeof *jobs);
  s3_head_job *heads = NULL;
  hs_s3_req **reqs = hs_calloc(n ? n : 1, sizeof *reqs); /* spans + heads <= n */
  hs_status st = HS_OK;
  size_t n_jobs = 0, n_order = 0, n_zero = 0, n_heads = 0;
  if (order == NULL || zorder == NULL || jobs == NULL || reqs == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "GET ranges: out of memory for %zu ranges", n);
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    if (ranges[i].len > 0) {
      order[n_order++] = i;
    } else {
      zorder[n_zero++] = i;
    }
  }
  if (!sort_ranges(order, n_order, locs, ranges) || !sort_ranges(zorder, n_zero, locs, ranges) ||
      (n_zero > 0 && (heads = hs_calloc(n_zero, sizeof *heads)) == NULL)) {
    st = hs_error_set(err, HS_ERR_NOMEM, "GET ranges: out of memory for %zu ranges", n);
    goto done;
  }
  for (size_t i = 0; i < n_zero; i++) { /* sorted: the largest offset of an object comes last */
    size_t k = zorder[i];
    if (n_heads > 0 && same_object(heads[n_heads - 1].req.loc, &locs[k])) {
      heads[n_heads - 1].max_offset = ranges[k].offset;
      continue;
    }
    s3_head_job *h = &heads[n_heads++];
    hs_s3_req_init(&h->req, &locs[k], "HEAD", "HEAD");
    h->max_offset = ranges[k].offset;
  }
  for (size_t i = 0; i < n_order;) {
    size_t k = order[i];
    uint64_t lo = ranges[k].offset, hi = lo + ranges[k].len;
    size_t j = i + 1;
    while (j < n_order) {
      size_t q = order[j];
      uint64_t qlo = ranges[q].offset, qhi = qlo + ranges[q].len;
      if (!same_object(&locs[k], &locs[q]) || qlo > hi + S3_COALESCE_GAP) break;
      uint64_t nhi = qhi > hi ? qhi : hi;
      if (nhi - lo > S3_COALESCED_MAX) break;
      hi = nhi;
      j++;
    }
    s3_span_job *job = &jobs[n_jobs];
    job->offset = lo;
    job->len = (size_t)(hi - lo);
    job->a = i;
    job->b = j;
    void *dst = ranges[k].dst;
    if (j - i > 1) {
      if ((job->tmp = hs_malloc(job->len)) == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "%s: GET ranges: out of memory", locs[k].uri);
        goto done;
      }
      dst = job->tmp;
    }
    range_req(&job->req, &locs[k], lo, job->len, dst, job->hdr, sizeof job->hdr);
    reqs[n_jobs++] = &job->req;
    i = j;
  }
  for (size_t i = 0; i < n_heads; i++) reqs[n_jobs + i] = &heads[i].req;
  st = hs_s3_perform_many(reqs, n_jobs + n_heads, 0, err);
  for (size_t i = 0; st == HS_OK && i < n_heads; i++) {
    const hs_s3_req *h = &heads[i].req;
    uint64_t size = h->content_length > 0 ? (uint64_t)h->content_length : 0;
    if (heads[i].max_offset > size) {
      st = hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: GET ranges: a 0-byte range at offset %llu is past the end (%llu)",
                        h->loc->uri, (unsigned long long)heads[i].max_offset,
                        (unsigned long long)size);
    }
  }
  for (size_t i = 0; st == HS_OK && i < n_jobs; i++) {
    s3_span_job *job = &jobs[i];
    st = range_check(&job->req, job->offset, job->len, err);
    for (size_t x = job->a; st == HS_OK && job->tmp != NULL && x < job->b; x++) {
      const hs_store_range *rg = &ranges[order[x]];
      memcpy(rg->dst, job->tmp + (rg->offset - job->offset), rg->len);
    }
  }
done:
  for (size_t i = 0; jobs != NULL && i < n_jobs; i++) {
    hs_s3_req_free(&jobs[i].req);
    hs_free(jobs[i].tmp);
  }
  for (size_t i = 0; i < n_heads; i++) hs_s3_req_free(&heads[i].req);
  hs_free(heads);
  hs_free(zorder);
  hs_free(order);
  hs_free(jobs);
  hs_free(reqs);
  return st;
}

/* ------------------------------------------------------------ writes */

static void put_req(hs_s3_req *r, const hs_store_loc *loc, const char *op, const void *data,
                    size_t len) {
  hs_s3_req_init(r, loc, op, "PUT");
  r->body = data;
  r->body_len = len;
}

hs_status hs_s3_put(const hs_store_loc *loc, const void *data, size_t len, hs_error *err) {
  hs_s3_cache_forget(loc);
  if (len > HS_S3_PART_BYTES) return hs_s3_put_multipart(loc, data, len, err);
  hs_s3_req r;
  put_req(&r, loc, "PUT", data, len);
  hs_status st = hs_s3_perform(&r, err);
  /* Written once and often read next (a manifest list by the next commit,
   * a data file's footer by its index build): kept, under the ETag the
   * PUT answered (the cache takes small objects of names not reused). */
  if (st == HS_OK && r.etag[0] != '\0' && len <= S3_WRITE_THROUGH_MAX) {
    hs_object_info info = {.size = len};
    snprintf(info.etag, sizeof info.etag, "%s", r.etag);
    hs_s3_cache_head_put(loc, &info);
    hs_s3_cache_put_range(loc, &info, 0, data, len);
  }
  hs_s3_req_free(&r);
  return st;
}

/* Is the object at loc now exactly data[0..len)? Asked after a conditional
 * PUT was refused on a retry whose earlier try may have landed. HEAD first
 * (a different size settles it), then a GET of at most len bytes. *missing
 * when there is no object. */
static hs_status holds_our_bytes(const hs_store_loc *loc, const char *op, const void *data,
                                 size_t len, bool *same, bool *missing, hs_error *err) {
  *same = *missing = false;
  hs_s3_req h;
  hs_s3_req_init(&h, loc, "HEAD", "HEAD");
  h.accept[0] = 404;
  hs_status st = hs_s3_perform(&h, err);
  bool sized = st == HS_OK && h.status != 404 && h.content_length == (int64_t)len;
  if (st == HS_OK) *missing = h.status == 404;
  hs_s3_req_free(&h);
  if (st != HS_OK) {
    hs_error_prefix(err, "%s: checking whether a retried %s landed: ", loc->uri, op);
    return st;
  }
  if (!sized) return HS_OK;
  hs_buf body;
  hs_buf_init(&body);
  hs_error ge = {0};
  hs_s3_req g;
  hs_s3_req_init(&g, loc, "GET", "GET");
  g.out = &body;
  g.out_max = len;
  g.accept[0] = 404;
  st = hs_s3_perform(&g, &ge);
  if (st == HS_OK) {
    *missing = g.status == 404;
    *same = g.status != 404 && body.len == len && (len == 0 || memcmp(body.data, data, len) == 0);
  } else if (st == HS_ERR_CORRUPT) { /* replaced by something larger since the HEAD */
    st = HS_OK;
  } else {
    st = hs_error_set(err, st, "%s: checking whether a retried %s landed: %s", loc->uri, op,
                      ge.message);
  }
  hs_s3_req_free(&g);
  hs_buf_free(&body);
  return st;
}

/* A conditional PUT answered 412 or 409 after a try whose outcome is unknown
 * (r->unsure): the refusal may be of our own write, applied by that try
 * whose answer was lost. Settled by the object's bytes: ours → won. */
static hs_status settle_refused_retry(const hs_store_loc *loc, const hs_s3_req *r, const void *data,
                                      size_t len, bool *won, hs_error *err) {
  if (!r->unsure || (r->status != 412 && r->status != 409)) return HS_OK;
  bool same = false, missing = false;
  hs_status st = holds_our_bytes(loc, r->op, data, len, &same, &missing, err);
  if (st != HS_OK) return st;
  if (same) {
    *won = true;
  } else if (missing && r->status == 409) {
    /* "a conditional PUT is in flight" and nothing there yet: maybe ours. */
    return hs_error_set(err, HS_ERR_IO,
                        "%s: %s: outcome unknown: a try's answer was lost, the retry got 409 "
                        "ConditionalRequestConflict and the object is not there (yet)",
                        loc->uri, r->op);
  }
  return HS_OK;
}

/* If-None-Match: *. *won false when the object exists (412) or another
 * conditional PUT of it is in flight (409). A retry after a try whose
 * answer was lost (reset, timeout, 5xx) that then gets 412/409 may be
 * refused by our own earlier write: the object is read back, and when it
 * holds exactly `data` (same size, same bytes) *won is true. (So a rival
 * that wrote the very same bytes also counts as us: the published content
 * is what we meant either way.) */
static hs_status s3_put_if_absent(const hs_store_loc *loc, const void *data, size_t len, bool *won,
                                  hs_error *err) {
  hs_s3_cache_forget(loc);
  *won = false;
  hs_s3_req r;
  put_req(&r, loc, "PUT if absent", data, len);
  r.hdr[0] = "If-None-Match: *";
  r.accept[0] = 412; /* PreconditionFailed: it exists */
  r.accept[1] = 409; /* ConditionalRequestConflict: another such PUT is in flight */
  hs_status st = hs_s3_perform(&r, err);
  if (st == HS_OK) *won = r.status >= 200 && r.status < 300;
  if (st == HS_OK && !*won) st = settle_refused_retry(loc, &r, data, len, won, err);
  hs_s3_req_free(&r);
  return st;
}

/* If-Match: "etag". *won false when the object changed (412), is gone
 * (404) or a concurrent conditional PUT conflicts (409). As in
 * put_if_absent, a 412/409 on a retry after a try whose answer was lost is
 * checked against the object's bytes: exactly `data` → *won true. */
static hs_status s3_put_if_match(const hs_store_loc *loc, const void *data, size_t len,
                                 const char *etag, bool *won, hs_error *err) {
  hs_s3_cache_forget(loc);
  *won = false;
  char hdr[128];
  if (strlen(etag) > 96 || strchr(etag, '"') != NULL || strchr(etag, '\n') != NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: PUT if match: malformed etag", loc->uri);
  }
  snprintf(hdr, sizeof hdr, "If-Match: \"%s\"", etag);
  hs_s3_req r;
  put_req(&r, loc, "PUT if match", data, len);
  r.hdr[0] = hdr;
  r.accept[0] = 412; /* changed */
  r.accept[1] = 404; /* gone */
  r.accept[2] = 409; /* a concurrent conditional PUT */
  hs_status st = hs_s3_perform(&r, err);
  if (st == HS_OK) *won = r.status >= 200 && r.status < 300;
  if (st == HS_OK && !*won) st = settle_refused_retry(loc, &r, data, len, won, err);
  hs_s3_req_free(&r);
  return st;
}

static hs_status s3_del(const hs_store_loc *loc, hs_error *err) {
  hs_s3_cache_forget(loc);
  hs_s3_req r;
  hs_s3_req_init(&r, loc, "DELETE", "DELETE");
  r.accept[0] = 404;
  hs_status st = hs_s3_perform(&r, err);
  hs_s3_req_free(&r);
  return st;
}

static hs_status s3_put_many(const hs_store_loc *locs, const hs_store_put_item *items, size_t n,
                             hs_error *err) {
  for (size_t i = 0; i < n; i++) hs_s3_cache_forget(&locs[i]);
  hs_s3_req *rs = hs_calloc(n ? n : 1, sizeof *rs);
  hs_s3_req **ptrs = hs_calloc(n ? n : 1, sizeof *ptrs);
  bool *big_done = hs_calloc(n ? n : 1, sizeof *big_done);
  hs_status st = HS_OK;
  size_t m = 0;
  if (rs == NULL || ptrs == NULL || big_done == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "PUT many: out of memory for %zu objects", n);
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    put_req(&rs[i], &locs[i], "PUT", items[i].data, items[i].len);
    if (items[i].len <= HS_S3_PART_BYTES) ptrs[m++] = &rs[i];
  }
  st = hs_s3_perform_many(ptrs, m, 0, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) { /* large ones: multipart, one by one */
    if (items[i].len <= HS_S3_PART_BYTES) continue;
    st = hs_s3_put_multipart(&locs[i], items[i].data, items[i].len, err);
    big_done[i] = st == HS_OK;
  }
  if (st != HS_OK) {
    for (size_t i = 0; i < n; i++) {
      /* Cut-off transfers may have landed too: only a refused one surely did not. */
      if ((rs[i].started && !rs[i].failed) || big_done[i]) s3_del(&locs[i], NULL);
    }
  }
done:
  for (size_t i = 0; rs != NULL && i < n; i++) hs_s3_req_free(&rs[i]);
  hs_free(rs);
  hs_free(ptrs);
  hs_free(big_done);
  return st;
}

static hs_status s3_mkdirs(const hs_store_loc *loc, hs_error *err) {
  (void)loc;
  (void)err;
  return HS_OK;
}

hs_status hs_s3_create_bucket(const hs_store_loc *loc, hs_error *err) {
  hs_s3_req r;
  hs_s3_req_init(&r, loc, "CreateBucket", "PUT");
  r.bucket_only = true;
  hs_status st = hs_s3_perform(&r, err);
  hs_s3_req_free(&r);
  return st;
}

/* -------------------------------------------------------------- lists */

static int by_name(const void *a, const void *b) {
  return strcmp(((const hs_store_entry *)a)->name, ((const hs_store_entry *)b)->name);
}

/* LIST the keys under dir/ (or, when `raw`, the keys starting with dir's
 * key itself, named relative to its folder) as entries. */
static hs_status list_keys(const hs_store_loc *dir, bool recursive, bool raw, hs_store_entry **out,
                           size_t *n_out, hs_error *err) {
  *out = NULL;
  *n_out = 0;
  size_t klen = strlen(dir->key);
  char *prefix = hs_malloc(klen + 2);
  char *token = hs_malloc(2048);
  hs_buf query, body;
  hs_buf_init(&query);
  hs_buf_init(&body);
  hs_s3_list_acc acc = {0};
  hs_status st = HS_OK;
  if (prefix == NULL || token == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: LIST: out of memory", dir->uri);
    goto done;
  }
  memcpy(prefix, dir->key, klen + 1);
  size_t strip = klen; /* names are relative to this much of the key */
  if (raw) {
    const char *slash = strrchr(prefix, '/');
    strip = slash != NULL ? (size_t)(slash - prefix) + 1 : 0;
  } else if (klen > 0 && prefix[klen - 1] != '/') {
    prefix[klen++] = '/';
    prefix[klen] = '\0';
    strip = klen;
  }
  token[0] = '\0';
  for (;;) {
    /* Parameters sorted by name: the canonical query SigV4 signs. */
    query.len = 0;
    bool ok = true;
    if (token[0] != '\0') {
      ok = hs_buf_printf(&query, "continuation-token=") && hs_s3_encode(&query, token, false) &&
           hs_buf_append_byte(&query, '&');
    }
    if (!recursive) ok = ok && hs_buf_printf(&query, "delimiter=%%2F&");
    ok = ok && hs_buf_printf(&query, "list-type=2&prefix=") &&
         hs_s3_encode(&query, prefix, false) && hs_buf_append_byte(&query, '\0');
    if (!ok) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: LIST: out of memory", dir->uri);
      break;
    }
    hs_s3_req r;
    hs_s3_req_init(&r, dir, "LIST", "GET");
    r.bucket_only = true;
    r.query = (const char *)query.data;
    body.len = 0;
    r.out = &body;
    r.out_max = S3_LIST_PAGE_MAX;
    st = hs_s3_perform(&r, err);
    hs_s3_req_free(&r);
    if (st != HS_OK) break;
    bool truncated = false;
    hs_s3_span doc = {(const char *)body.data, body.len};
    st = hs_s3_parse_list_page(doc, strip, &acc, &truncated, token, 2048, err);
    if (st != HS_OK) {
      hs_error_prefix(err, "%s: LIST: ", dir->uri);
      break;
    }
    if (!truncated) break;
  }
  if (st == HS_OK) {
    if (acc.n > 1) qsort(acc.entries, acc.n, sizeof *acc.entries, by_name);
    *out = acc.entries;
    *n_out = acc.n;
    acc.entries = NULL;
    acc.n = 0;
  }
done:
  for (size_t i = 0; i < acc.n; i++) hs_free(acc.entries[i].name);
  hs_free(acc.entries);
  hs_free(prefix);
  hs_free(token);
  hs_buf_free(&query);
  hs_buf_free(&body);
  return st;
}

static hs_status s3_list(const hs_store_loc *dir, bool recursive, hs_store_entry **out,
                         size_t *n_out, hs_error *err) {
  return list_keys(dir, recursive, false, out, n_out, err);
}

static hs_status s3_list_prefix(const hs_store_loc *loc, hs_store_entry **out, size_t *n_out,
                                hs_error *err) {
  return list_keys(loc, false, true, out, n_out, err);
}

/* One prefix of s3_list_prefixes: its first page's request and answer. */
typedef struct s3_list_job {
  hs_s3_req req;
  hs_buf query, body;
} s3_list_job;

static hs_status s3_list_prefixes(const hs_store_loc *locs, size_t n, hs_store_entry **outs,
                                  size_t *n_outs, const hs_store_loc *glocs,
                                  hs_store_get_item *gets, size_t n_gets, const hs_store_loc *plocs,
                                  const hs_store_prefetch_item *pf, size_t n_pf, uint64_t pf_max,
                                  hs_error *err) {
  /* The prefetch's GETs (what the cache lacks of pf) ride in this wave. */
  hs_s3_pf *pp = n_pf > 0 ? hs_s3_pf_plan(plocs, pf, n_pf, pf_max) : NULL;
  size_t np = 0;
  hs_s3_req **preqs = hs_s3_pf_reqs(pp, &np);
  s3_list_job *jobs = hs_calloc(n + n_gets ? n + n_gets : 1, sizeof *jobs);
  hs_s3_req **reqs = hs_calloc(n + n_gets + np ? n + n_gets + np : 1, sizeof *reqs);
  hs_status st = HS_OK;
  if (jobs == NULL || reqs == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: LIST: out of memory", n ? locs[0].uri : "");
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    s3_list_job *j = &jobs[i];
    hs_buf_init(&j->query);
    hs_buf_init(&j->body);
    /* As list_keys's first page asks (parameters sorted by name). */
    if (!hs_buf_printf(&j->query, "delimiter=%%2F&list-type=2&prefix=") ||
        !hs_s3_encode(&j->query, locs[i].key, false) || !hs_buf_append_byte(&j->query, '\0')) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: LIST: out of memory", locs[i].uri);
      goto done;
    }
    hs_s3_req_init(&j->req, &locs[i], "LIST", "GET");
    j->req.bucket_only = true;
    j->req.query = (const char *)j->query.data;
    j->req.out = &j->body;
    j->req.out_max = S3_LIST_PAGE_MAX;
    reqs[i] = &j->req;
  }
  /* The whole GETs of the same wave (a 404 is an answer). */
  for (size_t k = 0; k < n_gets; k++) {
    s3_list_job *j = &jobs[n + k];
    hs_buf_init(&j->query);
    hs_buf_init(&j->body);
    hs_s3_req_init(&j->req, &glocs[k], "GET", "GET");
    j->req.out = gets[k].out;
    j->req.out_max = gets[k].max_bytes;
    j->req.accept[0] = 404;
    reqs[n + k] = &j->req;
  }
  for (size_t k = 0; k < np; k++) reqs[n + n_gets + k] = preqs[k];
  st = hs_s3_perform_many(reqs, n + n_gets + np, np > 0 ? hs_s3_pf_inflight() : 0, err);
  (void)hs_s3_pf_finish(pp); /* best effort (s3_prefetch.c) */
  pp = NULL;
  for (size_t k = 0; k < n_gets; k++) {
    const hs_s3_req *r = &jobs[n + k].req;
    gets[k].status = !r->ok ? HS_ERR_IO : r->status == 404 ? HS_ERR_NOT_FOUND : HS_OK;
    memset(&gets[k].info, 0, sizeof gets[k].info);
    if (gets[k].status == HS_OK) {
      gets[k].info.size = r->got;
      gets[k].info.mtime_ms = r->mtime_ms;
      snprintf(gets[k].info.etag, sizeof gets[k].info.etag, "%s", r->etag);
    }
  }
  /* Only a LIST failing fails the call. */
  bool lists_ok = true;
  for (size_t i = 0; i < n; i++) lists_ok = lists_ok && jobs[i].req.ok;
  if (st != HS_OK && lists_ok) {
    st = HS_OK;
    if (err != NULL) memset(err, 0, sizeof *err);
  }
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    const char *slash = strrchr(locs[i].key, '/');
    size_t strip = slash != NULL ? (size_t)(slash - locs[i].key) + 1 : 0;
    hs_s3_list_acc acc = {0};
    bool truncated = false;
    char token[2048];
    hs_s3_span doc = {(const char *)jobs[i].body.data, jobs[i].body.len};
    st = hs_s3_parse_list_page(doc, strip, &acc, &truncated, token, sizeof token, err);
    if (st != HS_OK) hs_error_prefix(err, "%s: LIST: ", locs[i].uri);
    if (st == HS_OK && truncated) { /* more than a page: this prefix again, every page */
      for (size_t k = 0; k < acc.n; k++) hs_free(acc.entries[k].name);
      hs_free(acc.entries);
      st = list_keys(&locs[i], false, true, &outs[i], &n_outs[i], err);
      continue;
    }
    if (st == HS_OK && acc.n > 1) qsort(acc.entries, acc.n, sizeof *acc.entries, by_name);
    if (st == HS_OK) {
      outs[i] = acc.entries;
      n_outs[i] = acc.n;
    } else {
      for (size_t k = 0; k < acc.n; k++) hs_free(acc.entries[k].name);
      hs_free(acc.entries);
    }
  }
  for (size_t i = 0; st != HS_OK && i < n; i++) {
    hs_store_entries_free(outs[i], n_outs[i]);
    outs[i] = NULL;
    n_outs[i] = 0;
  }
done:
  (void)hs_s3_pf_finish(pp);
  for (size_t i = 0; jobs != NULL && i < n + n_gets; i++) {
    hs_s3_req_free(&jobs[i].req);
    hs_buf_free(&jobs[i].query);
    hs_buf_free(&jobs[i].body);
  }
  hs_free(jobs);
  hs_free(reqs);
  return st;
}

/* ---------------------------------------------------- sources, sinks */

hs_s3_obj *hs_s3_obj_new(const hs_store_loc *loc) {
  hs_s3_obj *o = hs_calloc(1, sizeof *o);
  if (o == NULL) return NULL;
  o->cfg = *loc->cfg;
  o->uri = hs_strdup(loc->uri);
  o->key = hs_strdup(loc->key);
  if (o->uri == NULL || o->key == NULL) {
    hs_free(o->uri);
    hs_free(o->key);
    hs_free(o);
    return NULL;
  }
  o->loc = *loc;
  o->loc.uri = o->uri;
  o->loc.key = o->key;
  o->loc.path = NULL;
  o->loc.cfg = &o->cfg;
  return o;
}

void hs_s3_obj_free(hs_s3_obj *o) {
  if (o == NULL) return;
  hs_free(o->uri);
  hs_free(o->key);
  hs_free(o);
}

static hs_status source_read(void *impl, uint64_t offset, size_t len, void *dst, hs_error *err) {
  hs_s3_obj *o = impl;
  return hs_s3_cache_read(&o->loc, &o->info, offset, len, dst, err);
}

static void source_close(void *impl) {
  hs_s3_obj_free(impl);
}

static const hs_source_ops s3_source_ops = {source_read, source_close};

/* Open an object not seen yet with a GET of its last S3_TAIL_BYTES
 * (a small object whole) instead of a HEAD: Parquet and Puffin footers sit
 * there, manifests fit whole, so the first read needs no request of its
 * own. The answer's Content-Range gives the size, its ETag the identity;
 * the bytes go into the object cache. Falls back to a HEAD when the
 * server answers otherwise (416 on an empty object, no Content-Range). */
#define S3_TAIL_BYTES ((size_t)128 << 10)
static hs_status open_by_tail(const hs_store_loc *loc, hs_object_info *info, hs_error *err) {
  hs_buf tail;
  hs_buf_init(&tail);
  hs_s3_req r;
  char range[64];
  hs_s3_req_init(&r, loc, "GET tail", "GET");
  snprintf(range, sizeof range, "Range: bytes=-%zu", S3_TAIL_BYTES);
  r.hdr[0] = range;
  r.out = &tail;
  r.out_max = S3_TAIL_BYTES;
  r.accept[0] = 416;
  hs_error e = {0};
  hs_status st = hs_s3_perform(&r, &e);
  bool whole = st == HS_OK && r.status == 200;
  bool part =
      st == HS_OK && r.status == 206 && r.total_size >= 0 && (uint64_t)r.total_size >= tail.len;
  if ((whole || part) && r.etag[0] != '\0') {
    memset(info, 0, sizeof *info);
    info->size = whole ? tail.len : (uint64_t)r.total_size;
    info->mtime_ms = r.mtime_ms;
    snprintf(info->etag, sizeof info->etag, "%s", r.etag);
    hs_s3_cache_head_put(loc, info);
    hs_s3_cache_put_range(loc, info, info->size - tail.len, tail.data, tail.len);
  } else if (st == HS_ERR_NOT_FOUND) {
    hs_error_set(err, st, "%s", e.message);
  } else {
    st = s3_head(loc, info, err);
  }
  hs_s3_req_free(&r);
  hs_buf_free(&tail);
  return st;
}

/* A HEAD answer for a stamp (objects stamped are written once and read
 * next): the cached one, or the tail GET's. */
static hs_status s3_head_cached(const hs_store_loc *loc, hs_object_info *info, hs_error *err) {
  return hs_s3_cache_head_get(loc, info) ? HS_OK : open_by_tail(loc, info, err);
}

static hs_status s3_source_open(const hs_store_loc *loc, hs_source **out, hs_error *err) {
  *out = NULL;
  hs_object_info info;
  /* Objects read by sources are written once: a HEAD seen is still true. */
  hs_status st = s3_head_cached(loc, &info, err);
  if (st != HS_OK) return st;
  hs_s3_obj *o = hs_s3_obj_new(loc);
  if (o == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", loc->uri);
  o->info = info;
  st = hs_source_open_custom(loc->uri, &info, &s3_source_ops, o, out, err);
  if (st != HS_OK) hs_s3_obj_free(o);
  return st;
}

const hs_store_backend hs_store_s3_backend = {
    .get = s3_get,
    .get_range = s3_get_range,
    .get_ranges = s3_get_ranges,
    .head = s3_head,
    .head_cached = s3_head_cached,
    .put = hs_s3_put,
    .put_if_absent = s3_put_if_absent,
    .put_if_match = s3_put_if_match,
    .put_many = s3_put_many,
    .del = s3_del,
    .mkdirs = s3_mkdirs,
    .list = s3_list,
    .list_prefix = s3_list_prefix,
    .list_prefixes = s3_list_prefixes,
    .prefetch = hs_s3_prefetch,
    .prefetch_missing = hs_s3_prefetch_missing,
    .pack = hs_s3_pack,
    .unpack = hs_s3_unpack,
    .source_open = s3_source_open,
    .sink_open = hs_s3_sink_open,
};
