/*
 * rest_api.c — the public catalog calls of include/hyperstream.h
 * ("Catalogs"): connect (options, token, GET /v1/config), namespaces,
 * table lists and drops. Opening and creating tables is rest_table.c,
 * reached through hs_table_open / hs_table_create.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "catalog.h"

static char *dup_n(const char *s, size_t n) {
  char *d = hs_malloc(n + 1);
  if (d != NULL) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

static const char *kv_get(const hs_iceberg_kv *kv, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(kv[i].key, key) == 0) return kv[i].value;
  return NULL;
}

static bool http_url(const char *s) {
  return strncasecmp(s, "http://", 7) == 0 || strncasecmp(s, "https://", 8) == 0;
}

/* The catalog's config into c (prefix, uri): defaults, then what the
 * client set, then overrides. */
static hs_status apply_config(hs_rest_catalog *c, const char *client_prefix, hs_error *err) {
  hs_buf path, body;
  hs_buf_init(&path);
  hs_buf_init(&body);
  bool ok = hs_buf_printf(&path, "config");
  if (c->warehouse != NULL)
    ok = ok && hs_buf_printf(&path, "?warehouse=") && hs_rest_encode_segment(&path, c->warehouse);
  ok = ok && hs_buf_append_byte(&path, 0);
  hs_status st = ok ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", c->uri);
  long status = 0;
  if (st == HS_OK)
    st = hs_rest_call(c, "GET", (const char *)path.data, false, NULL, 0, "GET /v1/config", true,
                      &body, &status, err);
  if (st == HS_OK && status != 200) st = hs_rest_fail(c, "GET /v1/config", status, &body, err);
  hs_arena a;
  hs_arena_init(&a);
  hs_rest_config cfg;
  if (st == HS_OK) {
    st = hs_rest_parse_config((const char *)body.data, body.len, &a, &cfg, err);
    if (st != HS_OK) hs_error_prefix(err, "%s: GET /v1/config: ", c->uri);
  }
  if (st == HS_OK) {
    const char *prefix = kv_get(cfg.overrides, cfg.n_overrides, "prefix");
    if (prefix == NULL) prefix = client_prefix;
    if (prefix == NULL) prefix = kv_get(cfg.defaults, cfg.n_defaults, "prefix");
    const char *uri = kv_get(cfg.overrides, cfg.n_overrides, "uri");
    if (prefix != NULL) {
      while (*prefix == '/') prefix++;
      size_t n = strlen(prefix);
      while (n > 0 && prefix[n - 1] == '/') n--;
      char *p = dup_n(prefix, n);
      if (p == NULL)
        st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", c->uri);
      else {
        hs_free(c->prefix);
        c->prefix = p;
      }
    }
    if (st == HS_OK && uri != NULL) {
      if (!http_url(uri)) {
        st = hs_error_set(err, HS_ERR_CORRUPT,
                          "%s: GET /v1/config: override uri '%s' is not "
                          "an http(s) URL",
                          c->uri, uri);
      } else {
        size_t n = strlen(uri);
        while (n > 0 && uri[n - 1] == '/') n--;
        char *b = dup_n(uri, n);
        if (b == NULL)
          st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", c->uri);
        else {
          hs_free(c->base);
          c->base = b;
        }
      }
    }
  }
  hs_arena_reset(&a);
  hs_buf_free(&path);
  hs_buf_free(&body);
  return st;
}

hs_status hs_catalog_connect(const char *uri, const hs_catalog_option *opts, size_t n,
                             hs_error *err) {
  if (uri == NULL || !hs_table_is_catalog_uri(uri) || strchr(uri, '#') != NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: not a catalog URI (want rest://host:port[/path] or rests://...)",
                        uri ? uri : "(null)");
  bool tls = strncmp(uri, "rests://", 8) == 0;
  const char *rest = uri + (tls ? 8 : 7);
  size_t rn = strlen(rest);
  while (rn > 0 && rest[rn - 1] == '/') rn--;
  if (rn == 0 || rest[0] == '/')
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: no host in the catalog URI", uri);
  hs_rest_catalog *c = hs_calloc(1, sizeof *c);
  if (c == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
  pthread_mutex_init(&c->mu, NULL);
  c->refs = 1;
  c->timeout_ms = 60000;
  hs_status st = HS_OK;
  size_t ul = (size_t)(rest - uri) + rn;
  c->uri = dup_n(uri, ul);
  c->base = hs_malloc(rn + 9);
  c->prefix = hs_strdup("");
  if (c->uri == NULL || c->base == NULL || c->prefix == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
  } else {
    snprintf(c->base, rn + 9, "%s://%.*s", tls ? "https" : "http", (int)rn, rest);
  }
  const char *client_prefix = NULL, *oauth = NULL;
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    const char *k = opts[i].key, *v = opts[i].value;
    char **slot = NULL;
    if (k == NULL || v == NULL) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: option %zu: no key or value", uri, i);
      break;
    }
    if (strcmp(k, "warehouse") == 0)
      slot = &c->warehouse;
    else if (strcmp(k, "token") == 0)
      slot = &c->token;
    else if (strcmp(k, "credential") == 0)
      slot = &c->credential;
    else if (strcmp(k, "scope") == 0)
      slot = &c->scope;
    else if (strcmp(k, "prefix") == 0)
      client_prefix = v;
    else if (strcmp(k, "oauth2-server-uri") == 0)
      oauth = v;
    else if (strcmp(k, "timeout_ms") == 0 || strcmp(k, "max_staleness_ms") == 0) {
      bool timeout = k[0] == 't';
      char *end = NULL;
      long t = strtol(v, &end, 10);
      if (end == v || *end != '\0' || t < (timeout ? 1 : 0))
        st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: %s '%s': not a %s number", uri, k, v,
                          timeout ? "positive" : "non-negative");
      else if (timeout)
        c->timeout_ms = t;
      else
        c->max_staleness_ms = t;
    } else if (strncmp(k, "storage.", 8) == 0 && k[8] != '\0') {
      hs_store_option *v2 = hs_realloc(c->storage, (c->n_storage + 1) * sizeof *v2);
      if (v2 == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
      } else {
        c->storage = v2;
        char *kk = hs_strdup(k + 8), *vv = hs_strdup(v);
        c->storage[c->n_storage++] = (hs_store_option){kk, vv};
        if (kk == NULL || vv == NULL)
          st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
      }
    } else {
      st = hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: unknown catalog option '%s' (known: warehouse, token, credential, "
                        "scope, prefix, oauth2-server-uri, timeout_ms, max_staleness_ms, "
                        "storage.<object-store option>)",
                        uri, k);
    }
    if (slot != NULL) {
      hs_free(*slot);
      if ((*slot = hs_strdup(v)) == NULL)
        st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
    }
    for (const char *p = v; st == HS_OK && *p; p++)
      if ((unsigned char)*p < 0x20)
        st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: option %s holds a control character", uri,
                          k);
  }
  if (st == HS_OK && c->credential != NULL && strchr(c->credential, ':') == NULL)
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: credential must be \"client_id:client_secret\"",
                      uri);
  if (st == HS_OK) {
    if (oauth != NULL && !http_url(oauth))
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: oauth2-server-uri '%s' is not http(s)", uri,
                        oauth);
    size_t on = oauth ? strlen(oauth) + 1 : strlen(c->base) + 20;
    if (st == HS_OK && (c->oauth_url = hs_malloc(on)) == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
    if (st == HS_OK) {
      if (oauth)
        memcpy(c->oauth_url, oauth, on);
      else
        snprintf(c->oauth_url, on, "%s/v1/oauth/tokens", c->base);
    }
  }
  /* Storage options are checked now (unknown keys, bad values) by
   * registering them for the warehouse when it is a location, else for
   * every s3:// location (each table's own location gets them too). */
  if (st == HS_OK && c->n_storage > 0)
    st = hs_rest_catalog_configure_storage(
        c, c->warehouse && strstr(c->warehouse, "://") ? c->warehouse : "s3://", NULL, 0, err);
  if (st == HS_OK) st = hs_rest_catalog_auth(c, err);
  if (st == HS_OK) st = apply_config(c, client_prefix, err);
  if (st == HS_OK) st = hs_rest_catalog_register(c, err);
  if (st != HS_OK) {
    hs_rest_catalog_unref(c);
    return st;
  }
  hs_table_set_catalog_hooks(&hs_rest_table_hooks);
  return HS_OK;
}

void hs_catalog_names_free(char **names, size_t n) {
  if (names == NULL) return;
  for (size_t i = 0; i < n; i++) hs_free(names[i]);
  hs_free(names);
}

/* GET every page of a list; tables: of namespace `ns`, else namespaces under it. */
static hs_status list_all(const char *uri, const char *ns, bool tables, char ***names_out,
                          size_t *n_out, hs_error *err) {
  *names_out = NULL;
  *n_out = 0;
  hs_rest_catalog *c = NULL;
  hs_status st = hs_rest_catalog_find(uri, &c, NULL, err);
  if (st != HS_OK) return st;
  char what[600];
  snprintf(what, sizeof what, tables ? "list tables of %s" : "list namespaces%s%s",
           tables ? ns : (ns && *ns ? " under " : ""), tables ? "" : (ns ? ns : ""));
  if (tables && (ns == NULL || *ns == '\0')) {
    hs_rest_catalog_unref(c);
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: list tables: no namespace", uri);
  }
  char **all = NULL;
  size_t n = 0, cap = 0;
  hs_buf path, body;
  hs_buf_init(&path);
  hs_buf_init(&body);
  char *token = NULL;
  for (int page = 0; st == HS_OK && page < 100000; page++) {
    path.len = 0;
    body.len = 0;
    bool ok = true;
    if (tables) {
      ok = hs_buf_printf(&path, "namespaces/") && hs_rest_encode_namespace(&path, ns) &&
           hs_buf_printf(&path, "/tables");
    } else {
      ok = hs_buf_printf(&path, "namespaces");
      if (ns != NULL && *ns)
        ok = ok && hs_buf_printf(&path, "?parent=") && hs_rest_encode_namespace(&path, ns);
    }
    if (token != NULL)
      ok = ok && hs_buf_printf(&path, "%cpageToken=", strchr((char *)path.data, '?') ? '&' : '?') &&
           hs_rest_encode_segment(&path, token);
    ok = ok && hs_buf_append_byte(&path, 0);
    if (!ok) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
      break;
    }
    long status = 0;
    st = hs_rest_call(c, "GET", (const char *)path.data, true, NULL, 0, what, true, &body, &status,
                      err);
    if (st == HS_OK && status != 200) st = hs_rest_fail(c, what, status, &body, err);
    if (st != HS_OK) break;
    hs_arena a;
    hs_arena_init(&a);
    char **names = NULL;
    size_t k = 0;
    const char *next = NULL;
    st = tables
             ? hs_rest_parse_tables((const char *)body.data, body.len, &a, &names, &k, &next, err)
             : hs_rest_parse_namespaces((const char *)body.data, body.len, &a, &names, &k, &next,
                                        err);
    if (st != HS_OK) hs_error_prefix(err, "%s: %s: ", uri, what);
    if (st == HS_OK && n + k > cap) {
      size_t nc = (n + k) * 2 + 8;
      char **v = hs_realloc(all, nc * sizeof *v);
      if (v == NULL)
        st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
      else {
        all = v;
        cap = nc;
      }
    }
    for (size_t i = 0; st == HS_OK && i < k; i++) {
      if ((all[n] = hs_strdup(names[i])) == NULL)
        st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
      else
        n++;
    }
    hs_free(token);
    token = next != NULL && st == HS_OK ? hs_strdup(next) : NULL;
    hs_arena_reset(&a);
    if (token == NULL) break;
  }
  hs_free(token);
  hs_buf_free(&path);
  hs_buf_free(&body);
  hs_rest_catalog_unref(c);
  if (st != HS_OK) {
    hs_catalog_names_free(all, n);
    return st;
  }
  *names_out = all;
  *n_out = n;
  return HS_OK;
}

hs_status hs_catalog_list_namespaces(const char *uri, const char *parent, char ***names_out,
                                     size_t *n_out, hs_error *err) {
  return list_all(uri, parent, false, names_out, n_out, err);
}

hs_status hs_catalog_list_tables(const char *uri, const char *ns, char ***names_out, size_t *n_out,
                                 hs_error *err) {
  return list_all(uri, ns, true, names_out, n_out, err);
}

static bool good_ns(const char *ns) {
  if (ns == NULL || *ns == '\0' || *ns == '.' || ns[strlen(ns) - 1] == '.') return false;
  return strstr(ns, "..") == NULL;
}

hs_status hs_catalog_create_namespace(const char *uri, const char *ns, hs_error *err) {
  if (!good_ns(ns))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: create namespace: bad name '%s'", uri,
                        ns ? ns : "");
  hs_rest_catalog *c = NULL;
  hs_status st = hs_rest_catalog_find(uri, &c, NULL, err);
  if (st != HS_OK) return st;
  json_t *levels = json_array();
  char *copy = hs_strdup(ns), *save = NULL;
  for (char *lv = copy ? strtok_r(copy, ".", &save) : NULL; lv; lv = strtok_r(NULL, ".", &save))
    json_array_append_new(levels, json_string(lv));
  hs_free(copy);
  json_t *req = json_pack("{s:o,s:{}}", "namespace", levels, "properties");
  char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
  json_decref(req);
  char what[600];
  snprintf(what, sizeof what, "create namespace %s", ns);
  hs_buf body;
  hs_buf_init(&body);
  long status = 0;
  if (text == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
  if (st == HS_OK)
    st = hs_rest_call(c, "POST", "namespaces", true, text, strlen(text), what, false, &body,
                      &status, err);
  if (st == HS_OK && status != 200) st = hs_rest_fail(c, what, status, &body, err);
  free(text);
  hs_buf_free(&body);
  hs_rest_catalog_unref(c);
  return st;
}

static hs_status delete_call(const char *uri, const char *what, const char *ns, const char *name,
                             bool purge, hs_error *err) {
  hs_rest_catalog *c = NULL;
  hs_status st = hs_rest_catalog_find(uri, &c, NULL, err);
  if (st != HS_OK) return st;
  hs_buf path, body;
  hs_buf_init(&path);
  hs_buf_init(&body);
  bool ok = hs_buf_printf(&path, "namespaces/") && hs_rest_encode_namespace(&path, ns);
  if (name != NULL)
    ok = ok && hs_buf_printf(&path, "/tables/") && hs_rest_encode_segment(&path, name) &&
         (!purge || hs_buf_printf(&path, "?purgeRequested=true"));
  ok = ok && hs_buf_append_byte(&path, 0);
  long status = 0;
  if (!ok) st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
  if (st == HS_OK)
    st = hs_rest_call(c, "DELETE", (const char *)path.data, true, NULL, 0, what, true, &body,
                      &status, err);
  if (st == HS_OK && status != 200 && status != 204) st = hs_rest_fail(c, what, status, &body, err);
  hs_buf_free(&path);
  hs_buf_free(&body);
  hs_rest_catalog_unref(c);
  return st;
}

hs_status hs_catalog_drop_namespace(const char *uri, const char *ns, hs_error *err) {
  if (!good_ns(ns))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: drop namespace: bad name '%s'", uri,
                        ns ? ns : "");
  char what[600];
  snprintf(what, sizeof what, "drop namespace %s", ns);
  return delete_call(uri, what, ns, NULL, false, err);
}

hs_status hs_catalog_drop_table(const char *uri, const char *ident, int purge, hs_error *err) {
  const char *dot = ident ? strrchr(ident, '.') : NULL;
  if (dot == NULL || dot == ident || dot[1] == '\0')
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: drop table: '%s' is not \"namespace.table\"",
                        uri, ident ? ident : "");
  char *ns = dup_n(ident, (size_t)(dot - ident));
  if (ns == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
  hs_status st = HS_OK;
  if (!good_ns(ns))
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: drop table: bad namespace in '%s'", uri, ident);
  char what[600];
  snprintf(what, sizeof what, "drop table %s", ident);
  if (st == HS_OK) st = delete_call(uri, what, ns, dot + 1, purge, err);
  hs_free(ns);
  return st;
}
