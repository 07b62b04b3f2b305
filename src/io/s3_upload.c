/*
 * s3_upload.c — multipart uploads on the S3 backend (s3.c): a whole buffer
 * put as parts of HS_S3_PART_BYTES, S3_PARTS_IN_FLIGHT at once
 * (hs_s3_put_multipart), and the streaming sink (hs_s3_sink_open) whose
 * full part buffers upload in the background of the next writes.
 * CreateMultipartUpload, UploadPart, CompleteMultipartUpload (whose 200
 * answer may still carry an Error document) and, on failure,
 * AbortMultipartUpload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_internal.h"

#define S3_PARTS_IN_FLIGHT 4 /* UploadParts of one object at once */
#define S3_PARTS_MAX 10000   /* S3's limit */
#define S3_ETAG_CAP 96       /* one part's ETag (as hs_s3_req.etag) */

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
  r.out_max = HS_S3_SMALL_BODY_MAX;
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
                        loc->uri, S3_PARTS_MAX, HS_S3_PART_BYTES);
  }
  int part = u->parts + 1;
  hs_status st = upload_query(loc, "partNumber=%d&", part, u->upload_id, q, err);
  if (st != HS_OK) return st;
  if (!hs_buf_append(&u->etags, empty, sizeof empty)) {
    hs_free(*q);
    *q = NULL;
    return hs_error_set(err, HS_ERR_NOMEM, "%s: UploadPart: out of memory", loc->uri);
  }
  hs_s3_req_init(r, loc, "UploadPart", "PUT");
  r->body = data;
  r->body_len = len;
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
  r.out_max = HS_S3_SMALL_BODY_MAX;
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
hs_status hs_s3_put_multipart(const hs_store_loc *loc, const uint8_t *data, size_t len,
                              hs_error *err) {
  size_t n = (len + HS_S3_PART_BYTES - 1) / HS_S3_PART_BYTES;
  if (n > S3_PARTS_MAX) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: PUT: %zu bytes need %zu parts of %zu bytes, more than %d", loc->uri,
                        len, n, HS_S3_PART_BYTES, S3_PARTS_MAX);
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
    size_t at = made * HS_S3_PART_BYTES;
    size_t k = len - at < HS_S3_PART_BYTES ? len - at : HS_S3_PART_BYTES;
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

/* A sink: bytes gather in one of S3_PARTS_IN_FLIGHT part buffers of
 * HS_S3_PART_BYTES. A full one starts (or continues) a multipart upload: its
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
  hs_s3_obj *obj;
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
  hs_s3_obj_free(w->obj);
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
    size_t k = HS_S3_PART_BYTES - b->len < len ? HS_S3_PART_BYTES - b->len : len;
    if (!hs_buf_append(b, p, k)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", w->obj->uri);
      break;
    }
    p += k;
    len -= k;
    if (b->len == HS_S3_PART_BYTES) st = writer_submit(w, err);
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
    st = hs_s3_put(loc, b != NULL ? b->data : NULL, b != NULL ? b->len : 0, err);
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

hs_status hs_s3_sink_open(const hs_store_loc *loc, hs_sink **out, hs_error *err) {
  *out = NULL;
  hs_s3_cache_forget(loc);
  s3_writer *w = hs_calloc(1, sizeof *w);
  if (w == NULL || (w->obj = hs_s3_obj_new(loc)) == NULL) {
    hs_free(w);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", loc->uri);
  }
  w->fill = -1;
  hs_status st = hs_sink_open_custom(loc->uri, &s3_sink_ops, w, out, err);
  if (st != HS_OK) writer_free(w);
  return st;
}
