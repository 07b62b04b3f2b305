/*
 * s3_http.c — S3 requests over libcurl: addressing (path-style or
 * virtual-hosted), SigV4 signing (curl's CURLOPT_AWS_SIGV4), a pool of
 * easy handles that keeps connections alive between calls, bounded bodies,
 * retries with jittered exponential backoff, and messages built from S3's
 * error documents.
 *
 * Payload hashing: every request carries "x-amz-content-sha256:
 * UNSIGNED-PAYLOAD", which curl (7.88 on) signs as the payload hash
 * instead of hashing the body; bodies are still checked by TCP/TLS, and
 * lengths by Content-Length both ways.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "s3_internal.h"

#define S3_POOL_MAX 64
#define S3_MULTI_POOL_MAX 4
#define S3_INFLIGHT_MAX HS_S3_BATCH_MAX
#define S3_BACKOFF_BASE_MS 50
#define S3_BACKOFF_CAP_MS 2000

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static bool g_ready;
static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static CURL *g_easy[S3_POOL_MAX];
static size_t g_easy_n;
static CURLM *g_multi[S3_MULTI_POOL_MAX];
static size_t g_multi_n;

static void global_init(void) {
  g_ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

static bool ready(hs_error *err, const char *uri) {
  pthread_once(&g_once, global_init);
  if (!g_ready) hs_error_set(err, HS_ERR_INTERNAL, "%s: libcurl failed to initialize", uri);
  return g_ready;
}

/* Easy handles keep their live connections across curl_easy_reset, so a
 * handle taken from the pool usually talks over a warm connection. */
static CURL *easy_get(void) {
  CURL *e = NULL;
  pthread_mutex_lock(&g_pool_mu);
  if (g_easy_n > 0) e = g_easy[--g_easy_n];
  pthread_mutex_unlock(&g_pool_mu);
  return e != NULL ? e : curl_easy_init();
}

static void easy_put(CURL *e) {
  if (e == NULL) return;
  pthread_mutex_lock(&g_pool_mu);
  if (g_easy_n < S3_POOL_MAX) {
    g_easy[g_easy_n++] = e;
    e = NULL;
  }
  pthread_mutex_unlock(&g_pool_mu);
  if (e != NULL) curl_easy_cleanup(e);
}

/* A multi handle owns the connection cache its transfers use. */
static CURLM *multi_get(void) {
  CURLM *m = NULL;
  pthread_mutex_lock(&g_pool_mu);
  if (g_multi_n > 0) m = g_multi[--g_multi_n];
  pthread_mutex_unlock(&g_pool_mu);
  if (m == NULL && (m = curl_multi_init()) != NULL) {
    curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, (long)S3_INFLIGHT_MAX);
  }
  return m;
}

static void multi_put(CURLM *m) {
  if (m == NULL) return;
  pthread_mutex_lock(&g_pool_mu);
  if (g_multi_n < S3_MULTI_POOL_MAX) {
    g_multi[g_multi_n++] = m;
    m = NULL;
  }
  pthread_mutex_unlock(&g_pool_mu);
  if (m != NULL) curl_multi_cleanup(m);
}

/* ------------------------------------------------------------ encoding */

bool hs_s3_encode(hs_buf *b, const char *s, bool keep_slash) {
  static const char hex[] = "0123456789ABCDEF";
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned char c = *p;
    bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/');
    if (plain) {
      if (!hs_buf_append_byte(b, c)) return false;
    } else {
      char t[3] = {'%', hex[c >> 4], hex[c & 15]};
      if (!hs_buf_append(b, t, 3)) return false;
    }
  }
  return true;
}

/* The request URL into r->url (owned). An http:// endpoint needs
 * cfg->allow_http (HS_ERR_INVALID_ARG otherwise); no scheme means https. */
static hs_status build_url(hs_s3_req *r, hs_error *err) {
  const hs_store_config *cfg = r->loc->cfg;
  if (r->plain_url != NULL) {
    hs_free(r->url);
    if ((r->url = hs_strdup(r->plain_url)) == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "%s: %s: out of memory", r->loc->uri, r->op);
    return HS_OK;
  }
  hs_buf u;
  hs_buf_init(&u);
  bool ok = true;
  if (cfg->endpoint[0] != '\0') {
    const char *ep = cfg->endpoint;
    if (strncasecmp(ep, "http://", 7) == 0 && !cfg->allow_http) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "%s: %s: endpoint %s is plain http:// (unencrypted): set allow_http "
                          "to use it, or use an https:// endpoint",
                          r->loc->uri, r->op, ep);
    }
    size_t n = strlen(ep);
    while (n > 0 && ep[n - 1] == '/') n--;
    const char *sep = strstr(ep, "://");
    size_t scheme_len = sep != NULL && (size_t)(sep - ep) < n ? (size_t)(sep - ep) + 3 : 0;
    if (scheme_len == 0) ok = ok && hs_buf_printf(&u, "https://");
    if (cfg->virtual_hosted) {
      ok = ok && hs_buf_append(&u, ep, scheme_len) &&
           hs_buf_printf(&u, "%s.%.*s", r->loc->bucket, (int)(n - scheme_len), ep + scheme_len);
    } else {
      ok = ok && hs_buf_append(&u, ep, n) && hs_buf_printf(&u, "/%s", r->loc->bucket);
    }
  } else {
    const char *region = cfg->region[0] ? cfg->region : "us-east-1";
    ok = ok && hs_buf_printf(&u, "https://%s.s3.%s.amazonaws.com", r->loc->bucket, region);
  }
  if (!r->bucket_only) {
    ok = ok && hs_buf_append_byte(&u, '/') && hs_s3_encode(&u, r->loc->key, true);
  } else if (cfg->virtual_hosted || cfg->endpoint[0] == '\0') {
    ok = ok && hs_buf_append_byte(&u, '/');
  }
  if (r->query != NULL) ok = ok && hs_buf_printf(&u, "?%s", r->query);
  ok = ok && hs_buf_append_byte(&u, '\0');
  if (!ok) {
    hs_buf_free(&u);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: %s: out of memory", r->loc->uri, r->op);
  }
  hs_free(r->url);
  r->url = (char *)hs_buf_detach(&u);
  return HS_OK;
}

/* ----------------------------------------------------------- callbacks */

static long response_code(hs_s3_req *r) {
  long code = 0;
  curl_easy_getinfo((CURL *)r->easy, CURLINFO_RESPONSE_CODE, &code);
  return code;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud) {
  hs_s3_req *r = ud;
  size_t n = size * nmemb;
  long code = response_code(r);
  if ((code < 200 || code >= 300) && r->plain_url == NULL) { /* error document: keep its head */
    size_t room = HS_S3_ERRBODY_MAX - r->errbody.len;
    hs_buf_append(&r->errbody, p, n < room ? n : room);
    return n;
  }
  if (r->dst != NULL) {
    if (n > r->dst_len - r->got) {
      r->too_big = true;
      return 0;
    }
    memcpy(r->dst + r->got, p, n);
  } else if (r->out != NULL) {
    if (n > r->out_max - r->got) {
      r->too_big = true;
      return 0;
    }
    if (r->got == 0) { /* one allocation for a body of announced length */
      curl_off_t cl = -1;
      curl_easy_getinfo((CURL *)r->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
      if (cl > 0 && (uint64_t)cl <= r->out_max) hs_buf_reserve(r->out, (size_t)cl);
    }
    if (!hs_buf_append(r->out, p, n)) return 0;
  }
  r->got += n;
  return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud) {
  hs_s3_req *r = ud;
  size_t n = size * nmemb;
  if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) { /* a new response (after 100 Continue) */
    r->etag[0] = '\0';
    r->total_size = -1;
    return n;
  }
  if (n > 14 && strncasecmp(p, "content-range:", 14) == 0) { /* bytes a-b/total */
    const char *slash = memchr(p, '/', n);
    if (slash != NULL && slash + 1 < p + n && slash[1] >= '0' && slash[1] <= '9') {
      char num[24];
      size_t k = 0;
      for (const char *c = slash + 1; c < p + n && *c >= '0' && *c <= '9' && k < 19; c++)
        num[k++] = *c;
      num[k] = '\0';
      r->total_size = k < 19 ? strtoll(num, NULL, 10) : -1;
    }
    return n;
  }
  if (n > 5 && strncasecmp(p, "etag:", 5) == 0) {
    const char *v = p + 5, *end = p + n;
    while (v < end && (*v == ' ' || *v == '\t' || *v == '"')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '"'))
      end--;
    size_t len = (size_t)(end - v);
    if (len >= sizeof r->etag) len = sizeof r->etag - 1;
    memcpy(r->etag, v, len);
    r->etag[len] = '\0';
  }
  return n;
}

static size_t on_send(char *p, size_t size, size_t nmemb, void *ud) {
  hs_s3_req *r = ud;
  size_t room = size * nmemb, left = r->body_len - r->sent;
  size_t n = left < room ? left : room;
  if (n > 0) memcpy(p, r->body + r->sent, n);
  r->sent += n;
  return n;
}

static int on_seek(void *ud, curl_off_t offset, int origin) {
  hs_s3_req *r = ud;
  if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > r->body_len) {
    return CURL_SEEKFUNC_CANTSEEK;
  }
  r->sent = (size_t)offset;
  return CURL_SEEKFUNC_OK;
}

/* ------------------------------------------------------------ counting */

/* hs_io_stats, as relaxed atomic counters (a snapshot need not be one
 * instant: each counter is exact on its own). */
enum {
  IO_REQ,
  IO_RT,
  IO_GET,
  IO_HEAD,
  IO_PUT,
  IO_POST,
  IO_DEL,
  IO_LIST,
  IO_RETRY,
  IO_IN,
  IO_OUT,
  IO_N
};
static uint64_t g_io[IO_N];

static void io_add(int which, uint64_t v) {
  __atomic_fetch_add(&g_io[which], v, __ATOMIC_RELAXED);
}

/* One finished try of r. */
static void io_count(const hs_s3_req *r) {
  const char *m = r->method;
  int kind = r->bucket_only && strcmp(m, "GET") == 0 ? IO_LIST
             : strcmp(m, "GET") == 0                 ? IO_GET
             : strcmp(m, "HEAD") == 0                ? IO_HEAD
             : strcmp(m, "PUT") == 0                 ? IO_PUT
             : strcmp(m, "DELETE") == 0              ? IO_DEL
                                                     : IO_POST;
  io_add(IO_REQ, 1);
  io_add(kind, 1);
  if (r->attempt > 0) io_add(IO_RETRY, 1);
  io_add(IO_IN, r->got + r->errbody.len); /* error documents too */
  io_add(IO_OUT, r->sent);
}

/* HS_S3_TRACE=1: every try to stderr as it starts, with the round trip it
 * opens ("alone", "wave") or shares ("in the wave"), to study a path's
 * dependent round trips (tests/python/test_s3_requests.py with HS_TEST_LOG
 * prints a cold query's trace). */
static void trace(const hs_s3_req *r, const char *how) {
  static int g_on = -1;
  int on = __atomic_load_n(&g_on, __ATOMIC_RELAXED);
  if (on < 0) {
    const char *v = getenv("HS_S3_TRACE");
    on = v != NULL && *v != '\0' && strcmp(v, "0") != 0;
    __atomic_store_n(&g_on, on, __ATOMIC_RELAXED);
  }
  if (!on) return;
  if (r == NULL)
    fprintf(stderr, "hs-s3: %s\n", how);
  else
    fprintf(stderr, "hs-s3: %s: %s %s%s%s\n", how, r->op, r->loc->key, r->hdr[0] ? " " : "",
            r->hdr[0] ? r->hdr[0] : "");
}

void hs_io_stats_get(hs_io_stats *out) {
  uint64_t v[IO_N];
  for (int i = 0; i < IO_N; i++) v[i] = __atomic_load_n(&g_io[i], __ATOMIC_RELAXED);
  out->requests = v[IO_REQ];
  out->round_trips = v[IO_RT];
  out->gets = v[IO_GET];
  out->heads = v[IO_HEAD];
  out->puts = v[IO_PUT];
  out->posts = v[IO_POST];
  out->deletes = v[IO_DEL];
  out->lists = v[IO_LIST];
  out->retries = v[IO_RETRY];
  out->bytes_read = v[IO_IN];
  out->bytes_written = v[IO_OUT];
}

void hs_io_stats_reset(void) {
  for (int i = 0; i < IO_N; i++) __atomic_store_n(&g_io[i], 0, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------- attempts */

/* Set up r->easy for one attempt. */
static hs_status prepare(hs_s3_req *r, hs_error *err) {
  const hs_store_config *cfg = r->loc->cfg;
  CURL *e = r->easy;
  if (r->url == NULL) {
    hs_status st = build_url(r, err);
    if (st != HS_OK) return st;
  }
  curl_easy_reset(e);
  curl_slist_free_all(r->headers);
  r->headers = NULL;
  r->status = 0;
  r->etag[0] = '\0';
  r->content_length = -1;
  r->total_size = -1;
  r->mtime_ms = 0;
  r->got = 0;
  r->sent = 0;
  r->too_big = false;
  r->ok = false;
  r->failed = false;
  r->started = true;
  r->errbody.len = 0;
  r->curl_err[0] = '\0';
  if (r->out != NULL) r->out->len = r->out_base;

  char sigv4[128];
  snprintf(sigv4, sizeof sigv4, "aws:amz:%s:s3", cfg->region[0] ? cfg->region : "us-east-1");
  bool ok = true;
  struct curl_slist *h = NULL, *t;
#define ADD_HEADER(s) \
  ((t = curl_slist_append(h, (s))) != NULL ? (h = t, true) : (ok = false, false))
  bool plain = r->plain_url != NULL;
  if (!plain) ADD_HEADER("x-amz-content-sha256: UNSIGNED-PAYLOAD");
  ADD_HEADER("Expect:"); /* no 100-continue round trip */
  if (!plain && cfg->session_token[0] != '\0') {
    char tok[2100];
    snprintf(tok, sizeof tok, "x-amz-security-token: %s", cfg->session_token);
    ADD_HEADER(tok);
  }
  for (size_t i = 0; i < sizeof r->hdr / sizeof r->hdr[0] && r->hdr[i] != NULL; i++) {
    ADD_HEADER(r->hdr[i]);
  }
  bool sends = strcmp(r->method, "PUT") == 0 || strcmp(r->method, "POST") == 0;
  if (sends && !plain) ADD_HEADER("Content-Type: application/octet-stream");
#undef ADD_HEADER
  r->headers = h;
  if (!ok) return hs_error_set(err, HS_ERR_NOMEM, "%s: %s: out of memory", r->loc->uri, r->op);

  curl_easy_setopt(e, CURLOPT_URL, r->url);
  curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L); /* keys with "." and ".." segments */
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  if (!plain) {
    curl_easy_setopt(e, CURLOPT_AWS_SIGV4, sigv4);
    curl_easy_setopt(e, CURLOPT_USERNAME, cfg->access_key);
    curl_easy_setopt(e, CURLOPT_PASSWORD, cfg->secret_key);
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->curl_err);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
  curl_easy_setopt(e, CURLOPT_FILETIME, 1L);
  if (cfg->request_timeout_ms > 0) curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, cfg->request_timeout_ms);
  if (cfg->connect_timeout_ms > 0) {
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, cfg->connect_timeout_ms);
  }
  if (strcmp(r->method, "HEAD") == 0) {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (strcmp(r->method, "PUT") == 0) {
    curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->body_len);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, on_send);
    curl_easy_setopt(e, CURLOPT_READDATA, r);
    curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, on_seek);
    curl_easy_setopt(e, CURLOPT_SEEKDATA, r);
  } else if (strcmp(r->method, "POST") == 0) {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body_len ? (const char *)r->body : "");
  } else if (strcmp(r->method, "GET") != 0) {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
  }
  return HS_OK;
}

typedef enum { S3_DONE, S3_RETRY, S3_FAIL } s3_outcome;

static bool accepted(const hs_s3_req *r) {
  if (r->status >= 200 && r->status < 300) return true;
  if (r->plain_url != NULL && r->status >= 100) return true; /* every status is an answer */
  for (size_t i = 0; i < sizeof r->accept / sizeof r->accept[0] && r->accept[i] != 0; i++) {
    if (r->accept[i] == r->status) return true;
  }
  return false;
}

/* Judge a finished attempt; *cc is what curl returned for it. */
static s3_outcome judge(hs_s3_req *r, CURLcode cc) {
  CURL *e = r->easy;
  io_count(r);
  r->status = response_code(r);
  curl_off_t cl = -1;
  curl_easy_getinfo(e, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
  r->content_length = cl;
  curl_off_t ft = -1;
  if (curl_easy_getinfo(e, CURLINFO_FILETIME_T, &ft) == CURLE_OK && ft > 0) {
    r->mtime_ms = (int64_t)ft * 1000;
  }
  if (cc != CURLE_OK) {
    if (r->too_big) return S3_FAIL;
    switch (cc) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      r->unsure = true; /* sent, maybe applied, the answer lost */
      return r->unsafe ? S3_FAIL : S3_RETRY;
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR: return S3_RETRY; /* nothing was sent */
    default: return S3_FAIL;
    }
  }
  if (r->status == 429) return S3_RETRY; /* throttled: not applied */
  if (r->status >= 500) {                /* a proxy's 5xx may hide the server's 2xx */
    r->unsure = true;
    if (r->unsafe) { /* plain: the answer, not retried */
      r->ok = true;
      return S3_DONE;
    }
    return S3_RETRY;
  }
  if (!accepted(r)) {
    r->failed = r->status >= 400;
    return S3_FAIL;
  }
  /* S3 sizes every HEAD and GET answer: one without Content-Length was cut
   * short in its headers (curl takes a connection closed mid-headers as the
   * end of them), and would read as an empty object. */
  bool reads = strcmp(r->op, "HEAD") == 0 || strcmp(r->op, "GET") == 0 ||
               strcmp(r->op, "GET range") == 0; /* objects (a LIST may be chunked) */
  if (r->status >= 200 && r->status < 300 && reads && cl < 0 && r->plain_url == NULL) {
    r->unsure = true;
    return S3_RETRY;
  }
  bool body_2xx = r->status >= 200 && r->status < 300 && strcmp(r->method, "HEAD") != 0;
  if (body_2xx && cl >= 0 && r->got != (uint64_t)cl) { /* truncated (after a 2xx) */
    r->unsure = true;
    return S3_RETRY;
  }
  r->ok = true;
  return S3_DONE;
}

/* The S3 error document's Code and Message, when there is one. */
static void error_fields(const hs_s3_req *r, char *code, size_t ccap, char *msg, size_t mcap) {
  hs_s3_span doc = {(const char *)r->errbody.data, r->errbody.len};
  code[0] = msg[0] = '\0';
  if (doc.len > 0) {
    if (!hs_s3_xml_text(doc, "Code", code, ccap)) code[0] = '\0';
    if (!hs_s3_xml_text(doc, "Message", msg, mcap)) msg[0] = '\0';
  }
}

static hs_status fail(hs_s3_req *r, CURLcode cc, hs_error *err) {
  const char *uri = r->loc->uri;
  if (r->too_big) {
    return r->dst != NULL
               ? hs_error_set(err, HS_ERR_CORRUPT, "%s: %s: the answer is longer than %zu bytes",
                              uri, r->op, r->dst_len)
               : hs_error_set(err, HS_ERR_CORRUPT, "%s: %s: the object is larger than %zu bytes",
                              uri, r->op, r->out_max);
  }
  if (cc == CURLE_PARTIAL_FILE) {
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: %s: body truncated: %s (after %d tries)", uri,
                        r->op, r->curl_err[0] ? r->curl_err : curl_easy_strerror(cc),
                        r->attempt + 1);
  }
  if (cc != CURLE_OK) {
    return hs_error_set(err, HS_ERR_IO, "%s: %s failed: %s%s%s (after %d tries)", uri, r->op,
                        curl_easy_strerror(cc), r->curl_err[0] ? ": " : "", r->curl_err,
                        r->attempt + 1);
  }
  if (r->status >= 200 && r->status < 300) { /* truncated every time */
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: %s: body truncated: %zu of %lld bytes (after %d tries)", uri, r->op,
                        r->got, (long long)r->content_length, r->attempt + 1);
  }
  char code[128], msg[512];
  error_fields(r, code, sizeof code, msg, sizeof msg);
  if (strcmp(code, "NoSuchBucket") == 0) {
    return hs_error_set(err, HS_ERR_NOT_FOUND, "%s: %s failed: bucket %s does not exist", uri,
                        r->op, r->loc->bucket);
  }
  hs_status st = r->status == 404 ? HS_ERR_NOT_FOUND : HS_ERR_IO;
  if (code[0] == '\0' && r->status == 404) snprintf(code, sizeof code, "NoSuchKey");
  if (code[0] == '\0' && r->status == 403 && msg[0] == '\0') /* a HEAD's answer has no body */
    snprintf(msg, sizeof msg, "access denied (wrong credentials, or no permission?)");
  return hs_error_set(err, st, "%s: %s failed: %ld%s%s%s%s", uri, r->op, r->status,
                      code[0] ? " " : "", code, msg[0] ? ": " : "", msg);
}

static uint64_t jitter_state(void) {
  static _Thread_local uint64_t s;
  if (s == 0) s = (uint64_t)hs_now_ns() ^ (uint64_t)(uintptr_t)&s;
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

/* Sleep before try number `attempt` + 1: uniform in [d/2, d], d = 50 ms
 * doubled per try, at most 2 s. */
static void backoff(int attempt) {
  long d = S3_BACKOFF_BASE_MS;
  for (int i = 0; i < attempt && d < S3_BACKOFF_CAP_MS; i++) d *= 2;
  if (d > S3_BACKOFF_CAP_MS) d = S3_BACKOFF_CAP_MS;
  long ms = d / 2 + (long)(jitter_state() % (uint64_t)(d / 2 + 1));
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

void hs_s3_req_init(hs_s3_req *r, const hs_store_loc *loc, const char *op, const char *method) {
  memset(r, 0, sizeof *r);
  r->loc = loc;
  r->op = op;
  r->method = method;
  r->content_length = -1;
  hs_buf_init(&r->errbody);
}

void hs_s3_req_free(hs_s3_req *r) {
  if (r->easy != NULL) easy_put(r->easy);
  r->easy = NULL;
  curl_slist_free_all(r->headers);
  r->headers = NULL;
  hs_buf_free(&r->errbody);
  hs_free(r->url);
  r->url = NULL;
}

static int max_retries(const hs_s3_req *r) {
  int m = r->loc->cfg->max_retries;
  return m < 0 ? 0 : m > 20 ? 20 : m;
}

/* Tries from r->attempt on, synchronously. */
static hs_status perform_from(hs_s3_req *r, hs_error *err) {
  if (r->easy == NULL && (r->easy = easy_get()) == NULL) {
    return hs_error_set(err, HS_ERR_NOMEM, "%s: %s: cannot create a curl handle", r->loc->uri,
                        r->op);
  }
  for (;; r->attempt++) {
    hs_status st = prepare(r, err);
    if (st != HS_OK) return st;
    io_add(IO_RT, 1);
    trace(r, "alone");
    CURLcode cc = curl_easy_perform(r->easy);
    s3_outcome o = judge(r, cc);
    if (o == S3_DONE) return HS_OK;
    if (o == S3_RETRY && r->plain_url != NULL && cc == CURLE_OK && r->attempt >= max_retries(r)) {
      r->ok = true; /* plain: the last 5xx or 429 is the answer */
      return HS_OK;
    }
    if (o == S3_FAIL || r->attempt >= max_retries(r)) {
      if (r->out != NULL) r->out->len = r->out_base;
      return fail(r, cc, err);
    }
    backoff(r->attempt);
  }
}

hs_status hs_s3_perform(hs_s3_req *r, hs_error *err) {
  if (!ready(err, r->loc->uri)) return HS_ERR_INTERNAL;
  if (r->out != NULL) r->out_base = r->out->len;
  r->attempt = 0;
  return perform_from(r, err);
}

/* ------------------------------------------------------------- batches */

hs_status hs_s3_batch_init(hs_s3_batch *b, size_t max_in_flight, const char *uri, hs_error *err) {
  memset(b, 0, sizeof *b);
  if (!ready(err, uri)) return HS_ERR_INTERNAL;
  b->limit = max_in_flight == 0
                 ? HS_S3_BATCH_DEFAULT
                 : (max_in_flight > HS_S3_BATCH_MAX ? HS_S3_BATCH_MAX : max_in_flight);
  if ((b->multi = multi_get()) == NULL) {
    return hs_error_set(err, HS_ERR_NOMEM, "%s: cannot create a curl multi handle", uri);
  }
  return HS_OK;
}

static void batch_detach(hs_s3_batch *b, hs_s3_req *r) {
  curl_multi_remove_handle((CURLM *)b->multi, (CURL *)r->easy);
  for (size_t i = 0; i < b->running; i++) {
    if (b->att[i] == r) {
      b->att[i] = b->att[--b->running];
      break;
    }
  }
}

hs_status hs_s3_batch_start(hs_s3_batch *b, hs_s3_req *r, hs_error *err) {
  if (b->running >= b->limit) {
    return hs_error_set(err, HS_ERR_INTERNAL, "%s: %s: batch full", r->loc->uri, r->op);
  }
  if (r->out != NULL) r->out_base = r->out->len;
  r->attempt = 0;
  if (r->easy == NULL && (r->easy = easy_get()) == NULL) {
    return hs_error_set(err, HS_ERR_NOMEM, "%s: %s: cannot create a curl handle", r->loc->uri,
                        r->op);
  }
  hs_status st = prepare(r, err);
  if (st != HS_OK) return st;
  curl_easy_setopt((CURL *)r->easy, CURLOPT_PRIVATE, (void *)r);
  if (curl_multi_add_handle((CURLM *)b->multi, r->easy) != CURLM_OK) {
    return hs_error_set(err, HS_ERR_INTERNAL, "%s: %s: curl_multi_add_handle failed", r->loc->uri,
                        r->op);
  }
  /* A new round trip when nothing else is in flight, or when as many
   * first tries as the batch runs at once have started since the last. */
  if (b->running == 0 || b->wave >= b->limit) {
    io_add(IO_RT, 1);
    b->wave = 0;
    trace(NULL, "wave");
  }
  trace(r, "  in the wave");
  b->wave++;
  b->att[b->running++] = r;
  return HS_OK;
}

/* A transfer of the batch ended: judge it, retry it alone when it must be
 * (with its backoff; rare: the server was busy), and hand its easy handle
 * back, so a long batch holds no more handles than it runs at once. */
static hs_status batch_finish(hs_s3_req *r, CURLcode cc, hs_error *err) {
  s3_outcome o = judge(r, cc);
  hs_status st = HS_OK;
  if (o == S3_RETRY && max_retries(r) > 0) {
    r->attempt = 1;
    backoff(0);
    st = perform_from(r, err);
  } else if (o != S3_DONE) {
    if (r->out != NULL) r->out->len = r->out_base;
    st = fail(r, cc, err);
  }
  easy_put(r->easy);
  r->easy = NULL;
  return st;
}

hs_status hs_s3_batch_step(hs_s3_batch *b, bool block, hs_s3_req **done, hs_error *err) {
  CURLM *m = b->multi;
  *done = NULL;
  for (bool moved = false;; moved = true) {
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(m, &left)) != NULL) {
      if (msg->msg != CURLMSG_DONE) continue;
      hs_s3_req *r = NULL;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
      CURLcode cc = msg->data.result;
      batch_detach(b, r);
      *done = r;
      return batch_finish(r, cc, err);
    }
    if (b->running == 0 || (moved && !block)) return HS_OK;
    int still = 0;
    CURLMcode mc = moved ? curl_multi_poll(m, NULL, 0, 1000, NULL) : CURLM_OK;
    if (mc == CURLM_OK) mc = curl_multi_perform(m, &still);
    if (mc != CURLM_OK) { /* what ran is cut off: the caller sees it unfinished */
      const char *uri = b->att[0]->loc->uri;
      while (b->running > 0) batch_detach(b, b->att[b->running - 1]);
      return hs_error_set(err, HS_ERR_IO, "%s: curl multi failed: %s", uri,
                          curl_multi_strerror(mc));
    }
  }
}

void hs_s3_batch_end(hs_s3_batch *b) {
  if (b->multi == NULL) return;
  while (b->running > 0) batch_detach(b, b->att[b->running - 1]);
  multi_put((CURLM *)b->multi);
  b->multi = NULL;
}

hs_status hs_s3_perform_many(hs_s3_req **reqs, size_t n, size_t max_in_flight, hs_error *err) {
  if (n == 0) return HS_OK;
  if (n == 1) return hs_s3_perform(reqs[0], err);
  hs_s3_batch b;
  hs_status st = hs_s3_batch_init(&b, max_in_flight, reqs[0]->loc->uri, err);
  if (st != HS_OK) return st;
  /* After a failure no more start, but those in flight finish: their
   * outcome is known (put_many deletes what landed). */
  size_t next = 0;
  while ((st == HS_OK && next < n) || b.running > 0) {
    while (st == HS_OK && next < n && b.running < b.limit)
      st = hs_s3_batch_start(&b, reqs[next++], err);
    if (b.running == 0) break;
    hs_s3_req *done = NULL;
    hs_status s = hs_s3_batch_step(&b, true, &done, err);
    if (s != HS_OK && st == HS_OK) st = s;
  }
  hs_s3_batch_end(&b);
  return st;
}
