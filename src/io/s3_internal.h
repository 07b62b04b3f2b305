/*
 * s3_internal.h — what the S3 backend's files share: the bounded XML
 * reading of S3 responses (s3_xml.c) that the request code (s3.c) uses.
 * Only s3*.c include this header.
 *
 * S3 answers in small, flat XML documents whose text never holds a raw
 * '<' (it is escaped), so an element is found by searching for its tags
 * inside the span of its parent; nothing here reads past the `len` it is
 * given, and every decoded string is bounded by its destination.
 */
#ifndef HS_IO_S3_INTERNAL_H
#define HS_IO_S3_INTERNAL_H

#include "store_internal.h"

struct curl_slist;

/* A span of bytes inside a response body (borrowed). */
typedef struct hs_s3_span {
  const char *p;
  size_t len;
} hs_s3_span;

/* The first element <tag>...</tag> (attributes allowed on the open tag,
 * "<tag/>" is an empty element) at or after *cursor inside `doc`: its
 * content in *inner, *cursor moved past its close tag. False when there
 * is none (or it is not closed). */
bool hs_s3_xml_next(hs_s3_span doc, size_t *cursor, const char *tag, hs_s3_span *inner);

/* The text of the first <tag> in `doc`, entity-decoded (&amp; &lt; &gt;
 * &quot; &apos; and numeric references) into out[0..cap) with a NUL.
 * False when the element is missing, malformed, or does not fit. */
bool hs_s3_xml_text(hs_s3_span doc, const char *tag, char *out, size_t cap);

/* Entity-decode src into an owned string (hs_free); NULL on a malformed
 * reference or out of memory. */
char *hs_s3_xml_decode_dup(hs_s3_span src);

/* "2024-01-02T03:04:05.678Z" as ms since the epoch; 0 when malformed. */
int64_t hs_s3_iso8601_ms(const char *s);

/* One page of a ListObjectsV2 answer, appended to `entries`. Names are the
 * keys with the first `prefix_len` bytes (the listed prefix) cut; a
 * CommonPrefixes entry is a folder (its trailing '/' cut). */
typedef struct hs_s3_list_acc {
  hs_store_entry *entries;
  size_t n, cap;
} hs_s3_list_acc;
hs_status hs_s3_parse_list_page(hs_s3_span doc, size_t prefix_len, hs_s3_list_acc *acc,
                                bool *truncated, char *next_token, size_t token_cap, hs_error *err);

/* -------------------------------------------------------- requests */
/* s3_http.c: one S3 request, its retries and its answer. A request is set
 * up by its caller (s3.c), performed alone (hs_s3_perform) or with others
 * at once (hs_s3_perform_many), then freed. */

#define HS_S3_ERRBODY_MAX ((size_t)64 << 10) /* error bodies kept for Code/Message */

typedef struct hs_s3_req {
  /* set by the caller (borrowed for the request's life) */
  const hs_store_loc *loc;
  const char *op;      /* names the operation in messages: "GET", "PUT", "LIST" */
  const char *method;  /* GET HEAD PUT POST DELETE */
  bool bucket_only;    /* address the bucket, not loc->key (ListObjectsV2) */
  const char *query;   /* canonical query string (sorted, encoded) or NULL */
  const char *hdr[6];  /* extra request headers ("Range: bytes=0-9"), NULL after the last */
  const uint8_t *body; /* PUT/POST body */
  size_t body_len;
  uint8_t *dst; /* a 2xx body goes into dst[0..dst_len) (exactly that much expected) */
  size_t dst_len;
  hs_buf *out; /* or is appended to out (at most out_max bytes; restored on failure) */
  size_t out_max;
  long accept[3]; /* non-2xx statuses that are answers, not errors (412, 404); 0 ends */
  /* Plain HTTP (http.c): the whole URL, sent unsigned with only hdr[] and
   * the body; every status is an answer (its body into dst/out), 5xx and
   * 429 retried; `unsafe`: not retried once it may have taken effect. */
  const char *plain_url;
  bool unsafe;
  /* the answer */
  long status;
  char etag[96];          /* without quotes */
  int64_t content_length; /* -1 when not sent */
  int64_t total_size;     /* a 206's Content-Range ".../SIZE"; -1 when not sent */
  int64_t mtime_ms;
  size_t got;   /* 2xx body bytes received */
  bool ok;      /* performed with an accepted status */
  bool started; /* sent (maybe partly) at least once */
  bool failed;  /* ended with an error status (nothing was changed) */
  bool unsure;  /* a try was retried after it may have taken effect (a reset or
                 * timeout once sent, a 5xx): a later 412 may be our own write */
  /* private to s3_http.c */
  bool too_big, again;
  size_t out_base, sent;
  hs_buf errbody;
  char *url;
  void *easy;
  struct curl_slist *headers;
  int attempt;
  char curl_err[256];
} hs_s3_req;

/* Zero the request and set its location, operation and method. */
void hs_s3_req_init(hs_s3_req *r, const hs_store_loc *loc, const char *op, const char *method);
/* Release what the request holds (accepts a request never performed). */
void hs_s3_req_free(hs_s3_req *r);

/* Perform with retries (jittered exponential backoff on 5xx, 429, resets,
 * timeouts and truncated bodies; up to cfg->max_retries more tries). HS_OK
 * when the final status is 2xx or in `accept` (r->status tells which);
 * otherwise the error names loc->uri, the operation, the status and the
 * S3 Code/Message. */
hs_status hs_s3_perform(hs_s3_req *r, hs_error *err);
/* Perform reqs[0..n) concurrently (at most max_in_flight at a time, up to
 * HS_S3_BATCH_MAX; 0: HS_S3_BATCH_DEFAULT), each with its retries; after the first failure none
 * starts, those in flight finish, and that failure is returned.
 * reqs[i]->ok tells which completed. */
hs_status hs_s3_perform_many(hs_s3_req **reqs, size_t n, size_t max_in_flight, hs_error *err);

/* Requests run together over one curl multi handle, driven by the caller
 * (perform_many; a sink's parts, which upload while it fills the next).
 * First tries share the multi handle; a try that must be retried is
 * retried alone, blocking, with its backoff. A finished request gives its
 * easy handle back at once. */
#define HS_S3_BATCH_MAX 256
/* Writes and listings run at most this many at once; read waves of ranged
 * GETs (s3_prefetch.c) run 64 (up to HS_S3_BATCH_MAX), so that the candidate
 * rows of a search or a filtered scan are one round trip, not one per 16. */
#define HS_S3_BATCH_DEFAULT 16
typedef struct hs_s3_batch {
  void *multi;
  size_t limit, running;
  size_t wave;                     /* first tries started in the current round trip */
  hs_s3_req *att[HS_S3_BATCH_MAX]; /* the requests in flight */
} hs_s3_batch;
hs_status hs_s3_batch_init(hs_s3_batch *b, size_t max_in_flight, const char *uri, hs_error *err);
/* Start r's first try; b->running must be below b->limit. */
hs_status hs_s3_batch_start(hs_s3_batch *b, hs_s3_req *r, hs_error *err);
/* Move the transfers on (waiting for one to finish when `block`): *done is
 * a request that finished, with its outcome returned (HS_OK, or its error
 * in err), or NULL when none has (yet, or nothing runs). */
hs_status hs_s3_batch_step(hs_s3_batch *b, bool block, hs_s3_req **done, hs_error *err);
/* Cut off whatever still runs and release the multi handle. */
void hs_s3_batch_end(hs_s3_batch *b);

/* Append s percent-encoded the S3 way (unreserved kept, '/' kept when
 * keep_slash, uppercase hex). False on out of memory. */
bool hs_s3_encode(hs_buf *b, const char *s, bool keep_slash);

/* Tests only: create the bucket loc->bucket (PUT /bucket). */
hs_status hs_s3_create_bucket(const hs_store_loc *loc, hs_error *err);

/* ------------------------------------------ objects, puts (s3.c, s3_upload.c) */

#define HS_S3_PART_BYTES ((size_t)8 << 20)     /* multipart past this; the part size */
#define HS_S3_SMALL_BODY_MAX ((size_t)1 << 20) /* CreateMultipartUpload & co answers */

/* A location that outlives the call that resolved it (copies of the URI,
 * key and configuration; owned by whoever made it). */
typedef struct hs_s3_obj {
  hs_store_loc loc;
  hs_store_config cfg;
  char *uri, *key;
  hs_object_info info; /* sources: the HEAD answer it was opened with */
} hs_s3_obj;
/* NULL on out of memory. */
hs_s3_obj *hs_s3_obj_new(const hs_store_loc *loc);
void hs_s3_obj_free(hs_s3_obj *o); /* NULL is fine */

/* PUT data[0..len) (multipart past HS_S3_PART_BYTES). */
hs_status hs_s3_put(const hs_store_loc *loc, const void *data, size_t len, hs_error *err);
/* s3_upload.c: data[0..len) as a multipart upload, parts uploaded in
 * parallel from the caller's buffer (nothing copied); aborted on failure. */
hs_status hs_s3_put_multipart(const hs_store_loc *loc, const uint8_t *data, size_t len,
                              hs_error *err);
/* s3_upload.c: a sink writing loc (one PUT when it stays under a part,
 * a background multipart upload past it). */
hs_status hs_s3_sink_open(const hs_store_loc *loc, hs_sink **out, hs_error *err);

/* s3.c: a ranged GET of [offset, offset + len) into dst, exactly that
 * much, sent with If-Match: etag unless etag is empty; an object changed
 * since (412) is HS_ERR_CONFLICT naming it. */
hs_status hs_s3_get_range_if(const hs_store_loc *loc, const char *etag, uint64_t offset, size_t len,
                             void *dst, hs_error *err);

/* -------------------------------------------------- the cache (s3_cache.c) */

/* A HEAD answer kept for loc (true), or none. */
bool hs_s3_cache_head_get(const hs_store_loc *loc, hs_object_info *info);
/* Keep a HEAD answer (one without an ETag is not kept). */
void hs_s3_cache_head_put(const hs_store_loc *loc, const hs_object_info *info);
/* The whole object appended to out from the cache, when its HEAD and every
 * block are there (objects read whole that a source or stamp has seen:
 * manifests, registries); false (out unchanged) otherwise. */
bool hs_s3_cache_get_whole(const hs_store_loc *loc, size_t max_bytes, hs_buf *out,
                           hs_object_info *info);
/* Keep the aligned blocks that data[0..len), the bytes at `offset` of the
 * object described by info (a HEAD just kept), covers whole. */
void hs_s3_cache_put_range(const hs_store_loc *loc, const hs_object_info *info, uint64_t offset,
                           const uint8_t *data, size_t len);
/* The cache's block size: prefetched ranges are widened to it. */
#define HS_S3_CACHE_BLOCK ((uint64_t)64 << 10)
/* Keep data[0..len) (len <= HS_S3_CACHE_FRAG_MAX), the bytes at `offset`
 * of the object described by info, as a fragment: reads inside it are
 * served from it (an exact prefetch's ranges, not widened to blocks). */
#define HS_S3_CACHE_FRAG_MAX ((size_t)1 << 20)
void hs_s3_cache_put_fragment(const hs_store_loc *loc, const hs_object_info *info, uint64_t offset,
                              const uint8_t *data, size_t len);
/* Whether loc's bytes may be kept at all (blocks are on, and the name is
 * not one a table writes again). */
bool hs_s3_cache_keeps(const hs_store_loc *loc);
/* Whether [offset, offset + len) of the object described by info (its
 * cached HEAD) is held: every block of it, or one fragment. */
bool hs_s3_cache_holds(const hs_store_loc *loc, const hs_object_info *info, uint64_t offset,
                       uint64_t len);
/* Forget loc (we are about to write or delete it). */
void hs_s3_cache_forget(const hs_store_loc *loc);
/* Read [offset, offset + len) of the object described by info (its HEAD)
 * through the block cache; misses are ranged GETs with If-Match. */
hs_status hs_s3_cache_read(const hs_store_loc *loc, const hs_object_info *info, uint64_t offset,
                           size_t len, void *dst, hs_error *err);

/* s3_prefetch.c: the backend's prefetch (store.h hs_store_prefetch). */
size_t hs_s3_prefetch_missing(const hs_store_loc *locs, const hs_store_prefetch_item *items,
                              size_t n);
size_t hs_s3_prefetch(const hs_store_loc *locs, const hs_store_prefetch_item *items, size_t n,
                      uint64_t max_bytes);
/* hs_s3_prefetch in three steps, for a caller that runs its GETs in a
 * wave of its own requests (a version probe's LISTs, s3.c): plan (NULL
 * when out of memory: nothing to fetch), the requests to perform
 * (hs_s3_perform_many, at most hs_s3_pf_inflight at once), then finish:
 * what came back goes into the object cache, everything is freed, the
 * number of GETs planned is returned. */
typedef struct hs_s3_pf hs_s3_pf;
hs_s3_pf *hs_s3_pf_plan(const hs_store_loc *locs, const hs_store_prefetch_item *items, size_t n,
                        uint64_t max_bytes);
hs_s3_req **hs_s3_pf_reqs(const hs_s3_pf *pf, size_t *n);
size_t hs_s3_pf_inflight(void);
size_t hs_s3_pf_finish(hs_s3_pf *pf); /* accepts NULL */
/* s3_pack.c: the backend's pack and unpack (store.h hs_store_pack). */
hs_status hs_s3_pack(const hs_store_loc *locs, const hs_store_prefetch_item *items, size_t n,
                     size_t max_bytes, hs_buf *out, size_t *n_segments, hs_error *err);
hs_status hs_s3_unpack(const uint8_t *data, size_t len, const char *what, size_t *n_loaded,
                       hs_error *err);

#endif /* HS_IO_S3_INTERNAL_H */
