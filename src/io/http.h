/*
 * http.h — plain HTTP(S) requests for services other than S3 (the Iceberg
 * REST catalog, src/catalog/), over the S3 backend's plumbing in
 * s3_http.c: its pool of kept-alive curl handles, bounded bodies, and
 * retries with jittered exponential backoff. One HTTP client in the
 * library, not two.
 *
 * Every HTTP status is an answer (the caller reads its body: a REST
 * service's error document); 5xx and 429 answers are retried first
 * (idempotent calls only for 5xx), and the last one is returned. Transport
 * failures (refused connection after the retries, timeouts, resets) are
 * HS_ERR_IO naming the URL and the call.
 *
 * Ownership: everything in the request is borrowed for the call; the
 * answer is appended to the caller's hs_buf.
 */
#ifndef HS_IO_HTTP_H
#define HS_IO_HTTP_H

#include "../common/common.h"

#define HS_HTTP_HEADERS_MAX 6

typedef struct hs_http_request {
  const char *method; /* "GET", "POST", "DELETE", "HEAD" */
  const char *url;    /* "http://127.0.0.1:8181/v1/config?warehouse=wh" */
  const char *what;   /* names the call in messages ("load table db.t") */
  /* Request headers ("Authorization: Bearer ..."), NULL after the last. */
  const char *headers[HS_HTTP_HEADERS_MAX];
  const void *body; /* POST body (borrowed) */
  size_t body_len;
  size_t max_bytes; /* a longer answer is HS_ERR_CORRUPT; 0: 64 MiB */
  /* False for calls that must not be sent twice (a commit): not retried
   * once sent (after a reset, a timeout or a 5xx), the answer returned. */
  bool idempotent;
  long timeout_ms;         /* whole request; 0: 60 s */
  long connect_timeout_ms; /* 0: 10 s */
  int max_retries;         /* more tries after the first; < 0: 3 */
} hs_http_request;

/* Perform `rq`: *status the final HTTP status, the answer's body appended
 * to `body` (whatever the status). */
hs_status hs_http_perform(const hs_http_request *rq, hs_buf *body, long *status, hs_error *err);

#endif /* HS_IO_HTTP_H */
