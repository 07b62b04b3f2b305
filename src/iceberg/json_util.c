/*
 * json_util.c — the path-tracking parse context and strict typed getters
 * over jansson values used by every Iceberg JSON codec.
 *
 * Strictness is the point: an integer field must be a JSON integer in range
 * (no 1.0, no "1"), a string a JSON string, and a JSON null is treated as
 * absent (writers such as pyiceberg emit null for unset optional fields).
 * Every error names the JSON path of the offending value.
 */
#include <stdio.h>
#include <string.h>

#include "iceberg_internal.h"

static size_t push(hs_ice_ctx *c, const char *fmt, const char *s, size_t i) {
  size_t mark = c->plen;
  size_t room = sizeof c->path - c->plen;
  int n = s != NULL ? snprintf(c->path + c->plen, room, fmt, s)
                    : snprintf(c->path + c->plen, room, fmt, i);
  if (n < 0) n = 0;
  c->plen += (size_t)n < room ? (size_t)n : room - 1;
  return mark;
}

size_t hs_ice_push_key(hs_ice_ctx *c, const char *key) {
  return push(c, c->plen == 0 ? "%s" : ".%s", key, 0);
}

size_t hs_ice_push_index(hs_ice_ctx *c, size_t i) {
  return push(c, "[%zu]", NULL, i);
}

void hs_ice_pop(hs_ice_ctx *c, size_t mark) {
  c->plen = mark;
  c->path[mark] = '\0';
}

hs_status hs_ice_fail(hs_ice_ctx *c, const char *key, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *root = c->plen == 0 && key == NULL ? "(root)" : c->path;
  const char *dot = key != NULL && c->plen > 0 ? "." : "";
  return hs_error_set(c->err, HS_ERR_CORRUPT, "%s%s%s: %s", root, dot, key != NULL ? key : "", msg);
}

hs_status hs_ice_nomem(hs_ice_ctx *c) {
  return hs_error_set(c->err, HS_ERR_NOMEM, "out of memory parsing Iceberg metadata at %s",
                      c->plen ? c->path : "(root)");
}

static const char *json_kind(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER: return "an integer";
  case JSON_REAL: return "a real number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  default: return "null";
  }
}

/* The member, or NULL when missing or JSON null; fails when required. */
static hs_status member(hs_ice_ctx *c, json_t *o, const char *key, bool *has, json_t **out) {
  json_t *v = json_object_get(o, key);
  if (v != NULL && json_is_null(v)) v = NULL;
  *out = v;
  if (has != NULL) *has = v != NULL;
  if (v == NULL && has == NULL) return hs_ice_fail(c, key, "required field is missing");
  return HS_OK;
}

hs_status hs_ice_get_i64(hs_ice_ctx *c, json_t *o, const char *key, int64_t *out, bool *has) {
  json_t *v;
  hs_status st = member(c, o, key, has, &v);
  if (st != HS_OK || v == NULL) return st;
  if (!json_is_integer(v)) return hs_ice_fail(c, key, "expected an integer, got %s", json_kind(v));
  *out = (int64_t)json_integer_value(v);
  return HS_OK;
}

hs_status hs_ice_get_i32(hs_ice_ctx *c, json_t *o, const char *key, int32_t *out, bool *has) {
  int64_t v = 0;
  bool h = false;
  hs_status st = hs_ice_get_i64(c, o, key, &v, has != NULL ? &h : NULL);
  if (has != NULL) *has = h;
  if (st != HS_OK || (has != NULL && !h)) return st;
  if (v < INT32_MIN || v > INT32_MAX)
    return hs_ice_fail(c, key, "integer %lld out of 32-bit range", (long long)v);
  *out = (int32_t)v;
  return HS_OK;
}

hs_status hs_ice_get_bool(hs_ice_ctx *c, json_t *o, const char *key, bool *out, bool *has) {
  json_t *v;
  hs_status st = member(c, o, key, has, &v);
  if (st != HS_OK || v == NULL) return st;
  if (!json_is_boolean(v)) return hs_ice_fail(c, key, "expected a boolean, got %s", json_kind(v));
  *out = json_is_true(v);
  return HS_OK;
}

hs_status hs_ice_get_str(hs_ice_ctx *c, json_t *o, const char *key, const char **out, bool *has) {
  json_t *v;
  *out = NULL;
  hs_status st = member(c, o, key, has, &v);
  if (st != HS_OK || v == NULL) return st;
  if (!json_is_string(v)) return hs_ice_fail(c, key, "expected a string, got %s", json_kind(v));
  *out = hs_arena_strndup(c->arena, json_string_value(v), json_string_length(v));
  return *out != NULL ? HS_OK : hs_ice_nomem(c);
}

hs_status hs_ice_get_array(hs_ice_ctx *c, json_t *o, const char *key, json_t **out, bool *has) {
  hs_status st = member(c, o, key, has, out);
  if (st != HS_OK || *out == NULL) return st;
  if (!json_is_array(*out))
    return hs_ice_fail(c, key, "expected an array, got %s", json_kind(*out));
  return HS_OK;
}

hs_status hs_ice_get_i32_list(hs_ice_ctx *c, json_t *o, const char *key, int32_t **out, size_t *n,
                              bool *has) {
  json_t *a;
  *out = NULL;
  *n = 0;
  hs_status st = hs_ice_get_array(c, o, key, &a, has);
  if (st != HS_OK || a == NULL) return st;
  size_t count = json_array_size(a);
  /* Count is bounded by the parsed document, which is already in memory. */
  int32_t *ids = hs_arena_alloc(c->arena, (count ? count : 1) * sizeof *ids);
  if (ids == NULL) return hs_ice_nomem(c);
  for (size_t i = 0; i < count; i++) {
    json_t *v = json_array_get(a, i);
    if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
        json_integer_value(v) > INT32_MAX)
      return hs_ice_fail(c, key, "element %zu is not a 32-bit integer", i);
    ids[i] = (int32_t)json_integer_value(v);
  }
  *out = ids;
  *n = count;
  return HS_OK;
}

hs_status hs_ice_keep_json(hs_ice_ctx *c, json_t *v, hs_iceberg_json *out) {
  char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  if (text == NULL) return hs_ice_nomem(c);
  *out = hs_arena_strndup(c->arena, text, strlen(text));
  free(text); /* jansson allocates with its own (default: libc) allocator */
  return *out != NULL ? HS_OK : hs_ice_nomem(c);
}

hs_status hs_ice_keep_unknown(hs_ice_ctx *c, json_t *o, const char *const *known,
                              hs_iceberg_json_kvs *extra) {
  extra->items = NULL;
  extra->n = 0;
  size_t n_unknown = 0;
  const char *key;
  json_t *v;
  json_object_foreach(o, key, v) {
    bool is_known = false;
    for (const char *const *k = known; *k != NULL && !is_known; k++) is_known = !strcmp(*k, key);
    if (!is_known) n_unknown++;
  }
  if (n_unknown == 0) return HS_OK;
  extra->items = hs_arena_alloc(c->arena, n_unknown * sizeof *extra->items);
  if (extra->items == NULL) return hs_ice_nomem(c);
  json_object_foreach(o, key, v) {
    bool is_known = false;
    for (const char *const *k = known; *k != NULL && !is_known; k++) is_known = !strcmp(*k, key);
    if (is_known) continue;
    hs_iceberg_json_kv *kv = &extra->items[extra->n++];
    kv->key = hs_arena_strndup(c->arena, key, strlen(key));
    if (kv->key == NULL) return hs_ice_nomem(c);
    hs_status st = hs_ice_keep_json(c, v, &kv->value);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

hs_status hs_ice_get_string_map(hs_ice_ctx *c, json_t *o, hs_iceberg_kv **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (!json_is_object(o)) return hs_ice_fail(c, NULL, "expected an object, got %s", json_kind(o));
  size_t count = json_object_size(o);
  if (count == 0) return HS_OK;
  hs_iceberg_kv *kvs = hs_arena_alloc(c->arena, count * sizeof *kvs);
  if (kvs == NULL) return hs_ice_nomem(c);
  const char *key;
  json_t *v;
  size_t i = 0;
  json_object_foreach(o, key, v) {
    if (!json_is_string(v))
      return hs_ice_fail(c, key, "expected a string value, got %s", json_kind(v));
    kvs[i].key = hs_arena_strndup(c->arena, key, strlen(key));
    kvs[i].value = hs_arena_strndup(c->arena, json_string_value(v), json_string_length(v));
    if (kvs[i].key == NULL || kvs[i].value == NULL) return hs_ice_nomem(c);
    i++;
  }
  *out = kvs;
  *n = i;
  return HS_OK;
}

json_t *hs_ice_json_from_text(hs_iceberg_json text, hs_error *err) {
  json_error_t jerr;
  json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);
  if (v == NULL)
    hs_error_set(err, HS_ERR_INVALID_ARG, "kept JSON value is not valid JSON: %s", jerr.text);
  return v;
}

hs_status hs_ice_put_extra(json_t *o, const hs_iceberg_json_kvs *extra, hs_error *err) {
  for (size_t i = 0; i < extra->n; i++) {
    json_t *v = hs_ice_json_from_text(extra->items[i].value, err);
    if (v == NULL) return err != NULL ? err->status : HS_ERR_INVALID_ARG;
    if (json_object_set_new(o, extra->items[i].key, v) != 0)
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory writing '%s'", extra->items[i].key);
  }
  return HS_OK;
}
