/*
 * s3.c — the S3 backend (store_internal.h): whole and ranged GETs (many
 * ranges at once, nearby ones of an object coalesced), HEAD, PUT (multipart
 * past one 8 MiB part, 4 parts at once), conditional PUTs (If-None-Match: *, If-Match),
 * DELETE, ListObjectsV2 with continuation, and sources and sinks over
 * them. The HTTP side (signing, retries, errors) is s3_http.c; the XML
 * side s3_xml.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_internal.h"

#define S3_PART_BYTES ((size_t)8 << 20)      /* multipart past this; the part size */
#define S3_COALESCE_GAP ((uint64_t)64 << 10) /* ranges closer than this share a GET */
#define S3_COALESCED_MAX ((size_t)16 << 20)  /* a shared GET fetches at most this */
#define S3_LIST_PAGE_MAX ((size_t)32 << 20)  /* one ListObjectsV2 answer */
#define S3_SMALL_BODY_MAX ((size_t)1 << 20)  /* CreateMultipartUpload & co answers */
#define S3_PARTS_IN_FLIGHT 4                 /* UploadParts of one object at once */
#define S3_PARTS_MAX 10000                   /* S3's limit */
#define S3_ETAG_CAP 96                       /* one part's ETag (as hs_s3_req.etag) */

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
  }
  hs_s3_req_free(&r);
  return st;
}

static hs_status s3_get(const hs_store_loc *loc, size_t max_bytes, hs_buf *out,
                        hs_object_info *info, hs_error *err) {
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

/* An upload id's query value, encoded, into q (owned). */
static hs_status upload_query(const hs_store_loc *loc, const char *fmt_part, int part,
                              const char *upload_id, char **q, hs_error *err) {
  hs_buf b;
  hs_buf_init(&b);
  bool ok = (fmt_part == NULL || hs_buf_printf(&b, fmt_part, part)) &&
            hs_buf_printf(&b, "uploadId=") && hs_s3_encode(&b, upload_id, false) &&
            hs_buf_append_byte(&b, '\0');
  if (!ok) {
    hs_buf_free(&b);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", loc->uri);
  }
  *q = (char *)hs_buf_detach(&b);
  return HS_OK;
}

/* A multipart upload in progress: its id and the parts' ETags, part i's
 * at etags.data[(i - 1) * S3_ETAG_CAP] (parts may finish in any order). */
typedef struct s3_upload {
  char upload_id[1024];
  hs_buf etags;
  int parts; /* part numbers handed out */
} s3_upload;

static hs_status upload_begin(const hs_store_loc *loc, s3_upload *u, hs_error *err) {
  memset(u, 0, sizeof *u);
  hs_buf_init(&u->etags);
  hs_buf body;
  hs_buf_init(&body);
  hs_s3_req r;
  hs_s3_req_init(&r, loc, "CreateMultipartUpload", "POST");
  r.query = "uploads=";
  r.out = &body;
  r.out_max = S3_SMALL_BODY_MAX;
  hs_status st = hs_s3_perform(&r, err);
  hs_s3_span doc = {(const char *)body.data, body.len};
  if (st == HS_OK && !hs_s3_xml_text(doc, "UploadId", u->upload_id, sizeof u->upload_id)) {
    st = hs_error_set(err, HS_ERR_IO, "%s: CreateMultipartUpload: no UploadId in the answer",
                      loc->uri);
  }
  hs_s3_req_free(&r);
  hs_buf_free(&body);
  return st;
}

/* Set up (not run) UploadPart number u->parts + 1 of data[0..len) in *r,
 * its query owned in *q; *number is the part's number. */
static hs_status part_req(const hs_store_loc *loc, s3_upload *u, const void *data, size_t len,
                          hs_s3_req *r, char **q, int *number, hs_error *err) {
  static const char empty[S3_ETAG_CAP];
  if (u->parts >= S3_PARTS_MAX) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: UploadPart: more than %d parts of %zu bytes",
                        loc->uri, S3_PARTS_MAX, S3_PART_BYTES);
  }
  int part = u->parts + 1;
  hs_status st = upload_query(loc, "partNumber=%d&", part, u->upload_id, q, err);
  if (st != HS_OK) return st;
  if (!hs_buf_append(&u->etags, empty, sizeof empty)) {
    hs_free(*q);
    *q = NULL;
    return hs_error_set(err, HS_ERR_NOMEM, "%s: UploadPart: out of memory", loc->uri);
  }
  put_req(r, loc, "UploadPart", data, len);
  r->query = *q;
  u->parts = part;
  *number = part;
  return HS_OK;
}

/* UploadPart `number` succeeded: its ETag, in its place. */
static hs_status part_done(const hs_store_loc *loc, s3_upload *u, int number, const hs_s3_req *r,
                           hs_error *err) {
  if (r->etag[0] == '\0') {
    return hs_error_set(err, HS_ERR_IO, "%s: UploadPart %d: no ETag in the answer", loc->uri,
                        number);
  }
  memcpy(u->etags.data + (size_t)(number - 1) * S3_ETAG_CAP, r->etag, S3_ETAG_CAP);
  return HS_OK;
}

static hs_status upload_complete(const hs_store_loc *loc, s3_upload *u, hs_error *err) {
  hs_buf doc;
  hs_buf_init(&doc);
  bool ok = hs_buf_printf(&doc, "<CompleteMultipartUpload>");
  for (int i = 0; ok && i < u->parts; i++) { /* in part order, however they finished */
    const char *etag = (const char *)u->etags.data + (size_t)i * S3_ETAG_CAP;
    ok = hs_buf_printf(&doc, "<Part><PartNumber>%d</PartNumber><ETag>\"%.*s\"</ETag></Part>", i + 1,
                       (int)strnlen(etag, S3_ETAG_CAP), etag);
  }
  ok = ok && hs_buf_printf(&doc, "</CompleteMultipartUpload>");
  char *q = NULL;
  hs_status st = ok ? upload_query(loc, NULL, 0, u->upload_id, &q, err)
                    : hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", loc->uri);
  if (st != HS_OK) {
    hs_buf_free(&doc);
    return st;
  }
  hs_buf body;
  hs_buf_init(&body);
  hs_s3_req r;
  hs_s3_req_init(&r, loc, "CompleteMultipartUpload", "POST");
  r.query = q;
  r.body = doc.data;
  r.body_len = doc.len;
  r.out = &body;
  r.out_max = S3_SMALL_BODY_MAX;
  st = hs_s3_perform(&r, err);
  /* S3 may answer 200 and still fail, with an Error document. */
  hs_s3_span answer = {(const char *)body.data, body.len};
  size_t cur = 0;
  hs_s3_span inner;
  if (st == HS_OK && hs_s3_xml_next(answer, &cur, "Error", &inner)) {
    char code[128] = "", msg[512] = "";
    hs_s3_xml_text(inner, "Code", code, sizeof code);
    hs_s3_xml_text(inner, "Message", msg, sizeof msg);
    st = hs_error_set(err, HS_ERR_IO, "%s: CompleteMultipartUpload failed: %s: %s", loc->uri, code,
                      msg);
  }
  hs_s3_req_free(&r);
  hs_buf_free(&body);
  hs_buf_free(&doc);
  hs_free(q);
  return st;
}

/* Best effort: the parts of a failed upload are dropped. */
static void upload_abort(const hs_store_loc *loc, s3_upload *u) {
  char *q = NULL;
  if (u->upload_id[0] != '\0' && upload_query(loc, NULL, 0, u->upload_id, &q, NULL) == HS_OK) {
    hs_s3_req r;
    hs_s3_req_init(&r, loc, "AbortMultipartUpload", "DELETE");
    r.query = q;
    r.accept[0] = 404;
    hs_s3_perform(&r, NULL);
    hs_s3_req_free(&r);
  }
  hs_free(q);
  hs_buf_free(&u->etags);
  u->upload_id[0] = '\0';
}

/* The parts of data[0..len), S3_PARTS_IN_FLIGHT at a time (they live in
 * the caller's buffer: nothing is copied). */
static hs_status put_multipart(const hs_store_loc *loc, const uint8_t *data, size_t len,
                               hs_error *err) {
  size_t n = (len + S3_PART_BYTES - 1) / S3_PART_BYTES;
  if (n > S3_PARTS_MAX) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: PUT: %zu bytes need %zu parts of %zu bytes, more than %d", loc->uri,
                        len, n, S3_PART_BYTES, S3_PARTS_MAX);
  }
  hs_s3_req *rs = hs_calloc(n, sizeof *rs);
  hs_s3_req **ptrs = hs_calloc(n, sizeof *ptrs);
  char **qs = hs_calloc(n, sizeof *qs);
  size_t made = 0;
  s3_upload u;
  memset(&u, 0, sizeof u);
  hs_buf_init(&u.etags);
  hs_status st =
      rs == NULL || ptrs == NULL || qs == NULL
          ? hs_error_set(err, HS_ERR_NOMEM, "%s: PUT: out of memory for %zu parts", loc->uri, n)
          : upload_begin(loc, &u, err);
  for (; st == HS_OK && made < n; made++) {
    size_t at = made * S3_PART_BYTES;
    size_t k = len - at < S3_PART_BYTES ? len - at : S3_PART_BYTES;
    int number = 0;
    st = part_req(loc, &u, data + at, k, &rs[made], &qs[made], &number, err);
    if (st != HS_OK) break;
    ptrs[made] = &rs[made];
  }
  if (st == HS_OK) st = hs_s3_perform_many(ptrs, n, S3_PARTS_IN_FLIGHT, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) st = part_done(loc, &u, (int)i + 1, &rs[i], err);
  if (st == HS_OK) st = upload_complete(loc, &u, err);
  if (st != HS_OK) {
    upload_abort(loc, &u);
  } else {
    hs_buf_free(&u.etags);
  }
  for (size_t i = 0; i < made; i++) {
    hs_s3_req_free(&rs[i]);
    hs_free(qs[i]);
  }
  hs_free(rs);
  hs_free(ptrs);
  hs_free(qs);
  return st;
}

static hs_status s3_put(const hs_store_loc *loc, const void *data, size_t len, hs_error *err) {
  if (len > S3_PART_BYTES) return put_multipart(loc, data, len, err);
  hs_s3_req r;
  put_req(&r, loc, "PUT", data, len);
  hs_status st = hs_s3_perform(&r, err);
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
  hs_s3_req r;
  hs_s3_req_init(&r, loc, "DELETE", "DELETE");
  r.accept[0] = 404;
  hs_status st = hs_s3_perform(&r, err);
  hs_s3_req_free(&r);
  return st;
}

static hs_status s3_put_many(const hs_store_loc *locs, const hs_store_put_item *items, size_t n,
                             hs_error *err) {
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
    if (items[i].len <= S3_PART_BYTES) ptrs[m++] = &rs[i];
  }
  st = hs_s3_perform_many(ptrs, m, 0, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) { /* large ones: multipart, one by one */
    if (items[i].len <= S3_PART_BYTES) continue;
    st = put_multipart(&locs[i], items[i].data, items[i].len, err);
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

static hs_status s3_list(const hs_store_loc *dir, bool recursive, hs_store_entry **out,
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
  if (klen > 0 && prefix[klen - 1] != '/') {
    prefix[klen++] = '/';
    prefix[klen] = '\0';
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
    st = hs_s3_parse_list_page(doc, klen, &acc, &truncated, token, 2048, err);
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

/* ---------------------------------------------------- sources, sinks */

/* A location that outlives the call that resolved it. */
typedef struct s3_obj {
  hs_store_loc loc;
  hs_store_config cfg;
  char *uri, *key;
} s3_obj;

static s3_obj *obj_new(const hs_store_loc *loc) {
  s3_obj *o = hs_calloc(1, sizeof *o);
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

static void obj_free(s3_obj *o) {
  if (o == NULL) return;
  hs_free(o->uri);
  hs_free(o->key);
  hs_free(o);
}

static hs_status source_read(void *impl, uint64_t offset, size_t len, void *dst, hs_error *err) {
  s3_obj *o = impl;
  return s3_get_range(&o->loc, offset, len, dst, err);
}

static void source_close(void *impl) {
  obj_free(impl);
}

static const hs_source_ops s3_source_ops = {source_read, source_close};

static hs_status s3_source_open(const hs_store_loc *loc, hs_source **out, hs_error *err) {
  *out = NULL;
  hs_object_info info;
  hs_status st = s3_head(loc, &info, err);
  if (st != HS_OK) return st;
  s3_obj *o = obj_new(loc);
  if (o == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", loc->uri);
  st = hs_source_open_custom(loc->uri, &info, &s3_source_ops, o, out, err);
  if (st != HS_OK) obj_free(o);
  return st;
}

/* A sink: bytes gather in one of S3_PARTS_IN_FLIGHT part buffers of
 * S3_PART_BYTES. A full one starts (or continues) a multipart upload: its
 * UploadPart runs in the background of the next writes (the batch moves on
 * at every write, without waiting) while another buffer fills; when all
 * are busy the write waits for a part to finish. So at most
 * S3_PARTS_IN_FLIGHT parts are buffered. Close PUTs what never filled a
 * part in one go, or uploads the rest, waits for every part and completes
 * the upload with the ETags in part order. */
typedef struct s3_slot {
  hs_buf buf;
  hs_s3_req req;
  char *query;
  int number; /* the part's number while it uploads; 0 when free */
} s3_slot;

typedef struct s3_writer {
  s3_obj *obj;
  s3_slot slot[S3_PARTS_IN_FLIGHT];
  int fill; /* the slot being filled; -1 when none */
  s3_upload up;
  hs_s3_batch batch;
  bool uploading;
  hs_status failed; /* a part failed: the sink only aborts now */
} s3_writer;

static void slot_release(s3_slot *sl) {
  hs_s3_req_free(&sl->req);
  memset(&sl->req, 0, sizeof sl->req);
  hs_free(sl->query);
  sl->query = NULL;
  sl->number = 0;
  sl->buf.len = 0;
}

static void writer_free(s3_writer *w) {
  hs_s3_batch_end(&w->batch); /* cuts off parts still uploading */
  for (int i = 0; i < S3_PARTS_IN_FLIGHT; i++) {
    slot_release(&w->slot[i]);
    hs_buf_free(&w->slot[i].buf);
  }
  hs_buf_free(&w->up.etags);
  obj_free(w->obj);
  hs_free(w);
}

/* Move the uploads on (waiting for one to end when `block`); a part that
 * ended frees its slot. *ended tells whether one did. */
static hs_status writer_step(s3_writer *w, bool block, bool *ended, hs_error *err) {
  *ended = false;
  if (!w->uploading || w->batch.running == 0) return HS_OK;
  hs_s3_req *done = NULL;
  hs_status st = hs_s3_batch_step(&w->batch, block, &done, err);
  for (int i = 0; done != NULL && i < S3_PARTS_IN_FLIGHT; i++) {
    s3_slot *sl = &w->slot[i];
    if (&sl->req != done) continue;
    if (st == HS_OK) st = part_done(&w->obj->loc, &w->up, sl->number, &sl->req, err);
    slot_release(sl);
    *ended = true;
  }
  if (st != HS_OK && w->failed == HS_OK) w->failed = st;
  return st;
}

/* A slot to fill: a free one, waiting for an upload to end when none is. */
static hs_status writer_take_slot(s3_writer *w, hs_error *err) {
  for (;;) {
    for (int i = 0; i < S3_PARTS_IN_FLIGHT; i++) {
      if (w->slot[i].number == 0) {
        w->fill = i;
        return HS_OK;
      }
    }
    bool ended = false;
    hs_status st = writer_step(w, true, &ended, err);
    if (st != HS_OK) return st;
    if (!ended) {
      return hs_error_set(err, HS_ERR_INTERNAL, "%s: UploadPart: no part buffer came free",
                          w->obj->uri);
    }
  }
}

/* Start uploading the slot being filled (the upload begins with the first). */
static hs_status writer_submit(s3_writer *w, hs_error *err) {
  const hs_store_loc *loc = &w->obj->loc;
  s3_slot *sl = &w->slot[w->fill];
  hs_status st = HS_OK;
  if (!w->uploading) {
    st = upload_begin(loc, &w->up, err);
    if (st == HS_OK) st = hs_s3_batch_init(&w->batch, S3_PARTS_IN_FLIGHT, loc->uri, err);
    if (st != HS_OK) return st;
    w->uploading = true;
  }
  st = part_req(loc, &w->up, sl->buf.data, sl->buf.len, &sl->req, &sl->query, &sl->number, err);
  if (st == HS_OK) st = hs_s3_batch_start(&w->batch, &sl->req, err);
  if (st != HS_OK) {
    slot_release(sl);
    return st;
  }
  w->fill = -1;
  return HS_OK;
}

static hs_status writer_failed(s3_writer *w, hs_error *err) {
  return hs_error_set(err, w->failed, "%s: an earlier part of the upload failed", w->obj->uri);
}

static hs_status sink_write(void *impl, const void *data, size_t len, hs_error *err) {
  s3_writer *w = impl;
  if (w->failed != HS_OK) return writer_failed(w, err);
  const uint8_t *p = data;
  hs_status st = HS_OK;
  while (st == HS_OK && len > 0) {
    if (w->fill < 0 && (st = writer_take_slot(w, err)) != HS_OK) break;
    hs_buf *b = &w->slot[w->fill].buf;
    size_t k = S3_PART_BYTES - b->len < len ? S3_PART_BYTES - b->len : len;
    if (!hs_buf_append(b, p, k)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", w->obj->uri);
      break;
    }
    p += k;
    len -= k;
    if (b->len == S3_PART_BYTES) st = writer_submit(w, err);
  }
  for (bool ended = true; st == HS_OK && ended;) st = writer_step(w, false, &ended, err);
  if (st != HS_OK && w->failed == HS_OK) w->failed = st;
  return st;
}

static void sink_abort(void *impl) {
  s3_writer *w = impl;
  hs_s3_batch_end(&w->batch); /* no part lands after the abort */
  if (w->uploading) upload_abort(&w->obj->loc, &w->up);
  writer_free(w);
}

static hs_status sink_close(void *impl, hs_error *err) {
  s3_writer *w = impl;
  const hs_store_loc *loc = &w->obj->loc;
  hs_status st = w->failed != HS_OK ? writer_failed(w, err) : HS_OK;
  if (st == HS_OK && !w->uploading) {
    const hs_buf *b = w->fill >= 0 ? &w->slot[w->fill].buf : NULL;
    st = s3_put(loc, b != NULL ? b->data : NULL, b != NULL ? b->len : 0, err);
    if (st == HS_OK) {
      writer_free(w);
      return st;
    }
  }
  if (st == HS_OK && w->fill >= 0 && w->slot[w->fill].buf.len > 0) st = writer_submit(w, err);
  bool ended = false;
  while (st == HS_OK && w->batch.running > 0) st = writer_step(w, true, &ended, err);
  if (st == HS_OK) st = upload_complete(loc, &w->up, err);
  if (st != HS_OK) {
    sink_abort(w);
    return st;
  }
  writer_free(w);
  return st;
}

static const hs_sink_ops s3_sink_ops = {sink_write, sink_close, sink_abort};

static hs_status s3_sink_open(const hs_store_loc *loc, hs_sink **out, hs_error *err) {
  *out = NULL;
  s3_writer *w = hs_calloc(1, sizeof *w);
  if (w == NULL || (w->obj = obj_new(loc)) == NULL) {
    hs_free(w);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", loc->uri);
  }
  w->fill = -1;
  hs_status st = hs_sink_open_custom(loc->uri, &s3_sink_ops, w, out, err);
  if (st != HS_OK) writer_free(w);
  return st;
}

const hs_store_backend hs_store_s3_backend = {
    .get = s3_get,
    .get_range = s3_get_range,
    .get_ranges = s3_get_ranges,
    .head = s3_head,
    .put = s3_put,
    .put_if_absent = s3_put_if_absent,
    .put_if_match = s3_put_if_match,
    .put_many = s3_put_many,
    .del = s3_del,
    .mkdirs = s3_mkdirs,
    .list = s3_list,
    .source_open = s3_source_open,
    .sink_open = s3_sink_open,
};
