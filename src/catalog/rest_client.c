/*
 * rest_client.c — connected REST catalogs and their calls: the registry
 * of catalogs by URI, bearer tokens (given, or fetched with OAuth2 client
 * credentials from the token endpoint the spec describes), one call over
 * io/http.h, and the catalog's ErrorModel turned into an hs_error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"

/* ------------------------------------------------------------ registry */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static hs_rest_catalog **g_cats;
static size_t g_n, g_cap;

static void catalog_free(hs_rest_catalog *c) {
  pthread_mutex_destroy(&c->mu);
  hs_free(c->uri);
  hs_free(c->base);
  hs_free(c->prefix);
  hs_free(c->warehouse);
  hs_free(c->token);
  hs_free(c->credential);
  hs_free(c->scope);
  hs_free(c->oauth_url);
  for (size_t i = 0; i < c->n_storage; i++) {
    hs_free((char *)c->storage[i].key);
    hs_free((char *)c->storage[i].value);
  }
  hs_free(c->storage);
  hs_free(c);
}

hs_status hs_rest_catalog_configure_storage(const hs_rest_catalog *c, const char *location,
                                            const hs_store_option *vended, size_t n_vended,
                                            hs_error *err) {
  size_t n = c->n_storage;
  for (size_t i = 0; i < n_vended; i++)
    n += hs_store_option_known(vended[i].key) || strcmp(vended[i].key, "client.region") == 0;
  if (n == 0) return HS_OK;
  hs_store_option *all = hs_malloc(n * sizeof *all);
  if (all == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "%s: storage options: out of memory", c->uri);
  size_t k = c->n_storage;
  if (k > 0) memcpy(all, c->storage, k * sizeof *all);
  for (size_t i = 0; i < n_vended; i++) {
    if (hs_store_option_known(vended[i].key))
      all[k++] = vended[i];
    else if (strcmp(vended[i].key, "client.region") == 0)
      all[k++] = (hs_store_option){"s3.region", vended[i].value};
  }
  hs_status st = hs_store_configure(location, all, k, err);
  hs_free(all);
  if (st != HS_OK)
    hs_error_prefix(err,
                    n_vended > 0 ? "%s: storage options (with the table's config the catalog "
                                   "sent): "
                                 : "%s: storage options: ",
                    c->uri);
  return st;
}

void hs_rest_catalog_unref(hs_rest_catalog *c) {
  if (c == NULL) return;
  pthread_mutex_lock(&g_mu);
  bool last = --c->refs == 0;
  pthread_mutex_unlock(&g_mu);
  if (last) catalog_free(c);
}

hs_status hs_rest_catalog_register(hs_rest_catalog *c, hs_error *err) {
  pthread_mutex_lock(&g_mu);
  hs_rest_catalog *old = NULL;
  for (size_t i = 0; i < g_n; i++)
    if (strcmp(g_cats[i]->uri, c->uri) == 0) {
      old = g_cats[i];
      g_cats[i] = c;
      break;
    }
  if (old == NULL) {
    if (g_n == g_cap) {
      size_t cap = g_cap ? 2 * g_cap : 4;
      hs_rest_catalog **v = hs_realloc(g_cats, cap * sizeof *v);
      if (v == NULL) {
        pthread_mutex_unlock(&g_mu);
        return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", c->uri);
      }
      g_cats = v;
      g_cap = cap;
    }
    g_cats[g_n++] = c;
  }
  bool last = old != NULL && --old->refs == 0;
  pthread_mutex_unlock(&g_mu);
  if (last) catalog_free(old);
  return HS_OK;
}

hs_status hs_rest_catalog_find(const char *uri, hs_rest_catalog **out, const char **ident,
                               hs_error *err) {
  *out = NULL;
  const char *hash = strchr(uri, '#');
  size_t n = hash ? (size_t)(hash - uri) : strlen(uri);
  while (n > 0 && uri[n - 1] == '/') n--;
  if (ident) *ident = hash ? hash + 1 : "";
  pthread_mutex_lock(&g_mu);
  for (size_t i = 0; i < g_n; i++)
    if (strlen(g_cats[i]->uri) == n && strncmp(g_cats[i]->uri, uri, n) == 0) {
      *out = g_cats[i];
      g_cats[i]->refs++;
      break;
    }
  pthread_mutex_unlock(&g_mu);
  if (*out == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%.*s: no catalog connected under this URI (hs_catalog_connect, or "
                        "Python's hdb.connect(\"%.*s\", warehouse=...))",
                        (int)n, uri, (int)n, uri);
  return HS_OK;
}

/* ------------------------------------------------------------ encoding */

static bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

bool hs_rest_encode_segment(hs_buf *b, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (unreserved(*p)) {
      if (!hs_buf_append_byte(b, *p)) return false;
    } else {
      char t[3] = {'%', hex[*p >> 4], hex[*p & 15]};
      if (!hs_buf_append(b, t, 3)) return false;
    }
  }
  return true;
}

bool hs_rest_encode_namespace(hs_buf *b, const char *dotted) {
  char *copy = hs_strdup(dotted);
  if (copy == NULL) return false;
  bool ok = true;
  char *save = NULL;
  int i = 0;
  for (char *lv = strtok_r(copy, ".", &save); lv && ok; lv = strtok_r(NULL, ".", &save), i++)
    ok = (i == 0 || hs_buf_append(b, "%1F", 3)) && hs_rest_encode_segment(b, lv);
  hs_free(copy);
  return ok;
}

/* ---------------------------------------------------------------- auth */

/* A new token by client credentials into c->token (under c->mu). */
static hs_status fetch_token(hs_rest_catalog *c, hs_error *err) {
  const char *colon = strchr(c->credential, ':');
  const char *id = c->credential, *secret = colon ? colon + 1 : c->credential;
  size_t id_len = colon ? (size_t)(colon - c->credential) : 0;
  hs_buf form, answer;
  hs_buf_init(&form);
  hs_buf_init(&answer);
  char *idz = hs_malloc(id_len + 1);
  bool ok = idz != NULL;
  if (ok) {
    memcpy(idz, id, id_len);
    idz[id_len] = '\0';
  }
  ok = ok && hs_buf_printf(&form, "grant_type=client_credentials&client_id=") &&
       hs_rest_encode_segment(&form, idz) && hs_buf_printf(&form, "&client_secret=") &&
       hs_rest_encode_segment(&form, secret) && hs_buf_printf(&form, "&scope=") &&
       hs_rest_encode_segment(&form, c->scope ? c->scope : "catalog");
  hs_free(idz);
  if (!ok) {
    hs_buf_free(&form);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", c->uri);
  }
  hs_http_request rq = {
      .method = "POST",
      .url = c->oauth_url,
      .what = "OAuth token (client credentials)",
      .headers = {"Content-Type: application/x-www-form-urlencoded", "Accept: application/json"},
      .body = form.data,
      .body_len = form.len,
      .max_bytes = 1 << 20,
      .idempotent = true,
      .timeout_ms = c->timeout_ms,
      .max_retries = -1};
  long status = 0;
  hs_status st = hs_http_perform(&rq, &answer, &status, err);
  if (st == HS_OK && (status < 200 || status >= 300)) {
    /* The token endpoint answers with OAuthError ({"error", "error_description"})
     * or the catalog's ErrorModel. */
    hs_rest_error e;
    char detail[900] = "";
    if (hs_rest_parse_error((const char *)answer.data, answer.len, &e)) {
      snprintf(detail, sizeof detail, ": %s: %s", e.type, e.message);
    } else if (answer.len > 0) {
      snprintf(detail, sizeof detail, ": %.*s", (int)(answer.len < 300 ? answer.len : 300),
               (const char *)answer.data);
    }
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "%s: OAuth token (client credentials) refused by %s: HTTP %ld%s", c->uri,
                      c->oauth_url, status, detail);
  } else if (st == HS_OK) {
    hs_arena a;
    hs_arena_init(&a);
    const char *tok = NULL;
    st = hs_rest_parse_token((const char *)answer.data, answer.len, &a, &tok, err);
    if (st == HS_OK) {
      char *t = hs_strdup(tok);
      if (t == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", c->uri);
      } else {
        hs_free(c->token);
        c->token = t;
      }
    } else {
      hs_error_prefix(err, "%s: ", c->uri);
    }
    hs_arena_reset(&a);
  }
  hs_buf_free(&form);
  hs_buf_free(&answer);
  return st;
}

hs_status hs_rest_catalog_auth(hs_rest_catalog *c, hs_error *err) {
  if (c->credential == NULL) return HS_OK;
  pthread_mutex_lock(&c->mu);
  hs_status st = fetch_token(c, err);
  pthread_mutex_unlock(&c->mu);
  return st;
}

/* --------------------------------------------------------------- calls */

hs_status hs_rest_call(hs_rest_catalog *c, const char *method, const char *path, bool prefixed,
                       const char *json, size_t len, const char *what, bool idempotent,
                       hs_buf *answer, long *status, hs_error *err) {
  hs_buf url;
  hs_buf_init(&url);
  bool ok = hs_buf_printf(&url, "%s/v1/", c->base);
  if (prefixed && c->prefix[0]) ok = ok && hs_buf_printf(&url, "%s/", c->prefix);
  ok = ok && hs_buf_printf(&url, "%s", path) && hs_buf_append_byte(&url, 0);
  if (!ok) {
    hs_buf_free(&url);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", c->uri);
  }
  size_t base_len = answer->len;
  hs_status st = HS_OK;
  for (int tries = 0;; tries++) {
    char auth[8300] = "";
    pthread_mutex_lock(&c->mu);
    if (c->token != NULL) snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
    pthread_mutex_unlock(&c->mu);
    hs_http_request rq = {.method = method,
                          .url = (const char *)url.data,
                          .what = what,
                          .headers = {"Accept: application/json"},
                          .body = json,
                          .body_len = len,
                          .max_bytes = HS_REST_ANSWER_MAX,
                          .idempotent = idempotent,
                          .timeout_ms = c->timeout_ms,
                          .max_retries = -1};
    size_t h = 1;
    if (json != NULL) rq.headers[h++] = "Content-Type: application/json";
    if (auth[0]) rq.headers[h++] = auth;
    answer->len = base_len;
    st = hs_http_perform(&rq, answer, status, err);
    if (st != HS_OK) hs_error_prefix(err, "%s: %s: ", c->uri, what);
    /* An expired token: one fresh one, one more try. */
    if (st == HS_OK && *status == 401 && c->credential != NULL && tries == 0) {
      if ((st = hs_rest_catalog_auth(c, err)) != HS_OK) break;
      continue;
    }
    break;
  }
  hs_buf_free(&url);
  return st;
}

hs_status hs_rest_fail(const hs_rest_catalog *c, const char *what, long status, const hs_buf *body,
                       hs_error *err) {
  hs_rest_error e;
  char detail[1000] = "";
  if (hs_rest_parse_error((const char *)body->data, body->len, &e)) {
    snprintf(detail, sizeof detail, ": %s%s%s", e.type, e.type[0] && e.message[0] ? ": " : "",
             e.message);
  } else if (body->len > 0) {
    size_t n = body->len < 200 ? body->len : 200;
    bool text = true;
    for (size_t i = 0; i < n && text; i++) text = body->data[i] >= 0x20 && body->data[i] < 0x7f;
    if (text) snprintf(detail, sizeof detail, ": %.*s", (int)n, (const char *)body->data);
  }
  hs_status st = HS_ERR_IO;
  const char *hint = "";
  switch (status) {
  case 404: st = HS_ERR_NOT_FOUND; break;
  case 409: st = HS_ERR_CONFLICT; break;
  case 401:
  case 403:
    st = HS_ERR_INVALID_ARG;
    hint = " (not authorized: check token= / credential=)";
    break;
  case 400:
  case 406:
  case 422: st = HS_ERR_INVALID_ARG; break;
  default: break;
  }
  return hs_error_set(err, st, "%s: %s: HTTP %ld%s%s", c->uri, what, status, detail, hint);
}
