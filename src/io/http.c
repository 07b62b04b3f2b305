/*
 * http.c — hs_http_perform (http.h): a plain request through the S3
 * request machinery of s3_http.c (hs_s3_req with plain_url set: no
 * signing, no x-amz headers, every status an answer).
 */
#include <string.h>

#include "http.h"
#include "s3_internal.h"

#define HTTP_BODY_DEFAULT ((size_t)64 << 20)

hs_status hs_http_perform(const hs_http_request *rq, hs_buf *body, long *status, hs_error *err) {
  *status = 0;
  if (rq->url == NULL || rq->method == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: no URL or method",
                        rq->what ? rq->what : "http request");
  }
  hs_store_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.allow_http = true;
  cfg.request_timeout_ms = rq->timeout_ms > 0 ? rq->timeout_ms : 60000;
  cfg.connect_timeout_ms = rq->connect_timeout_ms > 0 ? rq->connect_timeout_ms : 10000;
  cfg.max_retries = rq->max_retries < 0 ? 3 : rq->max_retries;
  hs_store_loc loc;
  memset(&loc, 0, sizeof loc);
  loc.kind = HS_STORE_S3;
  loc.uri = rq->url;
  loc.key = "";
  loc.cfg = &cfg;
  hs_s3_req r;
  hs_s3_req_init(&r, &loc, rq->what ? rq->what : rq->method, rq->method);
  r.plain_url = rq->url;
  r.unsafe = !rq->idempotent;
  for (size_t i = 0; i < HS_HTTP_HEADERS_MAX && i < sizeof r.hdr / sizeof r.hdr[0]; i++)
    r.hdr[i] = rq->headers[i];
  r.body = rq->body;
  r.body_len = rq->body_len;
  r.out = body;
  r.out_max = rq->max_bytes ? rq->max_bytes : HTTP_BODY_DEFAULT;
  hs_status st = hs_s3_perform(&r, err);
  if (st == HS_OK) *status = r.status;
  hs_s3_req_free(&r);
  return st;
}
