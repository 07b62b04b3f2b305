/*
 * rest_parse.c — the Iceberg REST catalog's answers, parsed with bounds:
 * every body is at most HS_REST_ANSWER_MAX bytes (the caller's cap), JSON
 * through jansson (its nesting limit; duplicate keys refused), every
 * member checked for its type, counts bounded by the body's length, and
 * every error names the answer and the member. Used on whatever a server
 * sends (fuzz/fuzz_rest.c).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "catalog.h"

static json_t *load(const char *what, const char *body, size_t len, hs_error *err) {
  if (len > HS_REST_ANSWER_MAX) {
    hs_error_set(err, HS_ERR_CORRUPT, "%s: answer of %zu bytes is too large", what, len);
    return NULL;
  }
  json_error_t je;
  json_t *root = json_loadb(body != NULL ? body : "", len, JSON_REJECT_DUPLICATES, &je);
  if (root == NULL) {
    hs_error_set(err, HS_ERR_CORRUPT, "%s: not JSON: %s (line %d, column %d)", what, je.text,
                 je.line, je.column);
    return NULL;
  }
  if (!json_is_object(root)) {
    json_decref(root);
    hs_error_set(err, HS_ERR_CORRUPT, "%s: the answer is not a JSON object", what);
    return NULL;
  }
  return root;
}

static void copy_cut(char *dst, size_t cap, const char *s) {
  size_t n = strlen(s);
  if (n >= cap) n = cap - 1;
  memcpy(dst, s, n);
  dst[n] = '\0';
}

bool hs_rest_parse_error(const char *body, size_t len, hs_rest_error *out) {
  memset(out, 0, sizeof *out);
  if (body == NULL || len == 0 || len > HS_REST_ANSWER_MAX) return false;
  json_t *root = json_loadb(body, len, 0, NULL);
  if (root == NULL) return false;
  json_t *e = json_object_get(root, "error");
  bool ok = json_is_object(e);
  if (ok) {
    json_t *m = json_object_get(e, "message"), *t = json_object_get(e, "type"),
           *c = json_object_get(e, "code");
    if (json_is_string(m)) copy_cut(out->message, sizeof out->message, json_string_value(m));
    if (json_is_string(t)) copy_cut(out->type, sizeof out->type, json_string_value(t));
    if (json_is_integer(c)) out->code = (long)json_integer_value(c);
    ok = out->message[0] != '\0' || out->type[0] != '\0';
  }
  json_decref(root);
  return ok;
}

/* A JSON string map into an arena array. */
static hs_status string_map(const char *what, const char *key, json_t *o, hs_arena *a,
                            hs_iceberg_kv **out, size_t *n, hs_error *err) {
  *out = NULL;
  *n = 0;
  if (o == NULL || json_is_null(o)) return HS_OK;
  if (!json_is_object(o))
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: %s: not an object", what, key);
  size_t cnt = json_object_size(o);
  if (cnt == 0) return HS_OK;
  hs_iceberg_kv *kv = hs_arena_alloc(a, cnt * sizeof *kv);
  if (kv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
  const char *k;
  json_t *v;
  size_t i = 0;
  json_object_foreach(o, k, v) {
    if (!json_is_string(v))
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: %s.%s: not a string", what, key, k);
    kv[i].key = hs_arena_strndup(a, k, strlen(k));
    kv[i].value = hs_arena_strndup(a, json_string_value(v), json_string_length(v));
    if (kv[i].key == NULL || kv[i].value == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
    i++;
  }
  *out = kv;
  *n = i;
  return HS_OK;
}

hs_status hs_rest_parse_config(const char *body, size_t len, hs_arena *a, hs_rest_config *out,
                               hs_error *err) {
  static const char what[] = "catalog config";
  memset(out, 0, sizeof *out);
  json_t *root = load(what, body, len, err);
  if (root == NULL) return HS_ERR_CORRUPT;
  hs_status st = string_map(what, "defaults", json_object_get(root, "defaults"), a, &out->defaults,
                            &out->n_defaults, err);
  if (st == HS_OK)
    st = string_map(what, "overrides", json_object_get(root, "overrides"), a, &out->overrides,
                    &out->n_overrides, err);
  json_decref(root);
  return st;
}

hs_status hs_rest_parse_token(const char *body, size_t len, hs_arena *a, const char **token,
                              hs_error *err) {
  static const char what[] = "OAuth token answer";
  *token = NULL;
  json_t *root = load(what, body, len, err);
  if (root == NULL) return HS_ERR_CORRUPT;
  hs_status st = HS_OK;
  json_t *t = json_object_get(root, "access_token"), *ty = json_object_get(root, "token_type");
  if (!json_is_string(t) || json_string_length(t) == 0 || json_string_length(t) > 8192) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: access_token: missing, empty or too long", what);
  } else if (ty != NULL && !json_is_null(ty) &&
             (!json_is_string(ty) || strcasecmp(json_string_value(ty), "bearer") != 0)) {
    st = hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: token_type %s: only bearer tokens are used",
                      what, json_is_string(ty) ? json_string_value(ty) : "(not a string)");
  } else {
    const char *s = json_string_value(t);
    for (const char *p = s; *p && st == HS_OK; p++)
      if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
        st = hs_error_set(err, HS_ERR_CORRUPT, "%s: access_token holds a control character", what);
    if (st == HS_OK && (*token = hs_arena_strndup(a, s, json_string_length(t))) == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
  }
  json_decref(root);
  return st;
}

/* A namespace's levels (an array of non-empty strings without '.') joined
 * by '.' onto `b`. */
static hs_status dotted(const char *what, const char *key, json_t *levels, hs_buf *b,
                        hs_error *err) {
  if (!json_is_array(levels) || json_array_size(levels) == 0)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: %s: not a non-empty array of levels", what, key);
  size_t i;
  json_t *l;
  json_array_foreach(levels, i, l) {
    if (!json_is_string(l) || json_string_length(l) == 0)
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: %s[%zu]: not a non-empty string", what, key, i);
    const char *s = json_string_value(l);
    if (strchr(s, '.') != NULL || strlen(s) != json_string_length(l))
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "%s: %s[%zu]: level '%s' holds a '.' or NUL (dotted names cannot "
                          "name it)",
                          what, key, i, s);
    if ((i > 0 && !hs_buf_append_byte(b, '.')) || !hs_buf_append(b, s, strlen(s)))
      return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
  }
  return HS_OK;
}

static char *arena_buf(hs_arena *a, const hs_buf *b) {
  return hs_arena_strndup(a, b->len ? (const char *)b->data : "", b->len);
}

static hs_status next_token(const char *what, json_t *root, hs_arena *a, const char **next,
                            hs_error *err) {
  *next = NULL;
  json_t *t = json_object_get(root, "next-page-token");
  if (t == NULL || json_is_null(t)) return HS_OK;
  if (!json_is_string(t) || json_string_length(t) > 4096)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: next-page-token: not a string", what);
  if (json_string_length(t) == 0) return HS_OK;
  if ((*next = hs_arena_strndup(a, json_string_value(t), json_string_length(t))) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
  return HS_OK;
}

static hs_status list_of(const char *what, const char *key, bool tables, const char *body,
                         size_t len, hs_arena *a, char ***names, size_t *n, const char **next,
                         hs_error *err) {
  *names = NULL;
  *n = 0;
  *next = NULL;
  json_t *root = load(what, body, len, err);
  if (root == NULL) return HS_ERR_CORRUPT;
  hs_status st = HS_OK;
  json_t *arr = json_object_get(root, key);
  hs_buf b;
  hs_buf_init(&b);
  size_t cnt = json_is_array(arr) ? json_array_size(arr) : 0;
  char **v = NULL;
  if (!json_is_array(arr)) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: %s: missing or not an array", what, key);
  } else if (cnt > 0 && (v = hs_arena_alloc(a, cnt * sizeof *v)) == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
  }
  for (size_t i = 0; st == HS_OK && i < cnt; i++) {
    json_t *e = json_array_get(arr, i);
    char at[64];
    snprintf(at, sizeof at, "%s[%zu]", key, i);
    b.len = 0;
    if (!tables) {
      st = dotted(what, at, e, &b, err);
    } else if (!json_is_object(e)) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "%s: %s: not an object", what, at);
    } else {
      json_t *name = json_object_get(e, "name");
      st = dotted(what, at, json_object_get(e, "namespace"), &b, err);
      if (st == HS_OK && (!json_is_string(name) || json_string_length(name) == 0 ||
                          strlen(json_string_value(name)) != json_string_length(name)))
        st = hs_error_set(err, HS_ERR_CORRUPT, "%s: %s.name: not a non-empty string", what, at);
      if (st == HS_OK && (!hs_buf_append_byte(&b, '.') ||
                          !hs_buf_append(&b, json_string_value(name), json_string_length(name))))
        st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
    }
    if (st == HS_OK && (v[i] = arena_buf(a, &b)) == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
  }
  if (st == HS_OK) st = next_token(what, root, a, next, err);
  hs_buf_free(&b);
  json_decref(root);
  if (st == HS_OK) {
    *names = v;
    *n = cnt;
  }
  return st;
}

hs_status hs_rest_parse_namespaces(const char *body, size_t len, hs_arena *a, char ***names,
                                   size_t *n, const char **next, hs_error *err) {
  return list_of("list namespaces answer", "namespaces", false, body, len, a, names, n, next, err);
}

hs_status hs_rest_parse_tables(const char *body, size_t len, hs_arena *a, char ***names, size_t *n,
                               const char **next, hs_error *err) {
  return list_of("list tables answer", "identifiers", true, body, len, a, names, n, next, err);
}

/* LoadTableResult.config: string to string, bounded. */
static hs_status load_config(json_t *cfg, hs_arena *a, hs_store_option **out, size_t *n,
                             hs_error *err) {
  static const char what[] = "load table answer: config";
  if (cfg == NULL || json_is_null(cfg)) return HS_OK;
  if (!json_is_object(cfg)) return hs_error_set(err, HS_ERR_CORRUPT, "%s: not an object", what);
  size_t m = json_object_size(cfg);
  if (m > HS_REST_CONFIG_MAX)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: %zu entries (at most %d)", what, m,
                        HS_REST_CONFIG_MAX);
  if (m == 0) return HS_OK;
  hs_store_option *v = hs_arena_alloc(a, m * sizeof *v);
  if (v == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
  const char *k;
  json_t *val;
  size_t i = 0;
  json_object_foreach(cfg, k, val) {
    if (!json_is_string(val) || strlen(json_string_value(val)) != json_string_length(val))
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: the value of '%.100s' is not a string", what,
                          k);
    v[i].key = hs_arena_strndup(a, k, strlen(k));
    v[i].value = hs_arena_strndup(a, json_string_value(val), json_string_length(val));
    if (v[i].key == NULL || v[i].value == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
    i++;
  }
  *out = v;
  *n = i;
  return HS_OK;
}

hs_status hs_rest_parse_load(const char *body, size_t len, hs_arena *a, const char **location,
                             hs_iceberg_metadata *meta, hs_store_option **config, size_t *n_config,
                             hs_error *err) {
  static const char what[] = "load table answer";
  *location = NULL;
  memset(meta, 0, sizeof *meta);
  if (config != NULL) {
    *config = NULL;
    *n_config = 0;
  }
  json_t *root = load(what, body, len, err);
  if (root == NULL) return HS_ERR_CORRUPT;
  hs_status st = HS_OK;
  if (config != NULL) st = load_config(json_object_get(root, "config"), a, config, n_config, err);
  json_t *loc = json_object_get(root, "metadata-location"), *md = json_object_get(root, "metadata");
  char *text = NULL;
  if (st != HS_OK) {
    /* the config error is set */
  } else if (!json_is_string(loc) || json_string_length(loc) == 0 ||
             strlen(json_string_value(loc)) != json_string_length(loc)) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: metadata-location: missing or not a string", what);
  } else if (!json_is_object(md)) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: metadata: missing or not an object", what);
  } else if ((text = json_dumps(md, JSON_COMPACT)) == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
  } else {
    *location = hs_arena_strndup(a, json_string_value(loc), json_string_length(loc));
    if (*location == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
    if (st == HS_OK) st = hs_iceberg_metadata_parse(text, strlen(text), a, meta, err);
    if (st != HS_OK) hs_error_prefix(err, "%s: metadata: ", what);
  }
  free(text);
  json_decref(root);
  return st;
}
