/*
 * schema_default.c — v3 initial-default values for columns a data file
 * lacks (schema_map.h): the field's JSON single-value serialization
 * (Iceberg spec, Appendix D) parsed into one value of the column's Arrow
 * type, and a constant array of it per batch.
 *
 * Read: boolean, int, long, float, double, string, decimal (a JSON string
 * with exactly the scale's digits or fewer), date ("YYYY-MM-DD"). Other
 * types with a default are HS_ERR_UNSUPPORTED naming the column, never
 * NULLs in place of the default.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_map.h"

static hs_status unsupported(const struct ArrowSchema *type, const char *json, hs_error *err) {
  return hs_error_set(err, HS_ERR_UNSUPPORTED,
                      "column '%s': initial-default %s of type '%s' is not read yet",
                      type->name ? type->name : "", json, type->format);
}

static hs_status bad(const struct ArrowSchema *type, const char *json, hs_error *err) {
  return hs_error_set(err, HS_ERR_CORRUPT, "column '%s': initial-default %s does not fit type '%s'",
                      type->name ? type->name : "", json, type->format);
}

/* "-12.3" with `scale` digits after the point into an unscaled 128-bit
 * integer; false when malformed, too precise or out of range. */
static bool decimal_parse(const char *s, int scale, __int128 *out) {
  bool neg = *s == '-';
  if (*s == '-' || *s == '+') s++;
  unsigned __int128 v = 0;
  int digits = 0, frac = -1;
  for (; *s; s++) {
    if (*s == '.' && frac < 0) {
      frac = 0;
      continue;
    }
    if (*s < '0' || *s > '9' || ++digits > 38) return false;
    if (frac >= 0 && ++frac > scale) return false;
    v = v * 10 + (unsigned)(*s - '0');
  }
  if (digits == 0) return false;
  for (int k = frac < 0 ? 0 : frac; k < scale; k++) v *= 10;
  *out = neg ? -(__int128)v : (__int128)v;
  return true;
}

hs_status hs_colmap_default_parse(const char *json, const struct ArrowSchema *type, uint8_t **bytes,
                                  size_t *len, hs_error *err) {
  *bytes = NULL;
  *len = 0;
  json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
  if (v == NULL) return bad(type, json, err);
  hs_arrow_type at;
  hs_status st = hs_arrow_type_parse(type->format, &at, NULL);
  uint8_t buf[16];
  size_t n = 0;
  const char *text = NULL;
  if (st != HS_OK) {
    st = unsupported(type, json, err);
  } else {
    switch (at.id) {
    case HS_AT_BOOL:
      if (!json_is_boolean(v)) st = bad(type, json, err);
      buf[0] = json_is_true(v);
      n = 1;
      break;
    case HS_AT_INT32:
    case HS_AT_INT64: {
      json_int_t x = json_is_integer(v) ? json_integer_value(v) : 0;
      if (!json_is_integer(v) || (at.id == HS_AT_INT32 && (x < INT32_MIN || x > INT32_MAX))) {
        st = bad(type, json, err);
      } else if (at.id == HS_AT_INT32) {
        int32_t y = (int32_t)x;
        memcpy(buf, &y, n = 4);
      } else {
        int64_t y = (int64_t)x;
        memcpy(buf, &y, n = 8);
      }
      break;
    }
    case HS_AT_FLOAT32:
    case HS_AT_FLOAT64: {
      if (!json_is_number(v)) {
        st = bad(type, json, err);
        break;
      }
      double d = json_number_value(v);
      if (at.id == HS_AT_FLOAT32) {
        float f = (float)d;
        memcpy(buf, &f, n = 4);
      } else {
        memcpy(buf, &d, n = 8);
      }
      break;
    }
    case HS_AT_DECIMAL128: {
      __int128 x = 0;
      if (!json_is_string(v) || !decimal_parse(json_string_value(v), at.scale, &x))
        st = bad(type, json, err);
      memcpy(buf, &x, n = 16);
      break;
    }
    case HS_AT_DATE32: {
      int y, m, d;
      char extra;
      if (!json_is_string(v) ||
          sscanf(json_string_value(v), "%d-%d-%d%c", &y, &m, &d, &extra) != 3 || m < 1 || m > 12 ||
          d < 1 || d > hs_civil_days_in_month(y, m)) {
        st = bad(type, json, err);
        break;
      }
      int32_t days = (int32_t)hs_days_from_civil(y, m, d);
      memcpy(buf, &days, n = 4);
      break;
    }
    case HS_AT_STRING:
    case HS_AT_LARGE_STRING:
      if (!json_is_string(v))
        st = bad(type, json, err);
      else
        text = json_string_value(v), n = json_string_length(v);
      break;
    default: st = unsupported(type, json, err);
    }
  }
  if (st == HS_OK) {
    *bytes = hs_malloc(n ? n : 1);
    if (*bytes == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    else if (n)
      memcpy(*bytes, text != NULL ? (const void *)text : buf, n);
    *len = n;
  }
  json_decref(v);
  return st;
}

hs_status hs_colmap_default_array(const struct ArrowSchema *type, const uint8_t *bytes, size_t len,
                                  int64_t length, struct ArrowArray *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  size_t n = (size_t)length;
  hs_arrow_type at;
  hs_status st = hs_arrow_type_parse(type->format, &at, err);
  if (st != HS_OK) return st;
  if (at.id == HS_AT_STRING || at.id == HS_AT_LARGE_STRING) {
    bool large = at.id == HS_AT_LARGE_STRING;
    void *offs = hs_malloc((n + 1) * (large ? 8 : 4));
    uint8_t *data = hs_malloc(n * len + 1);
    if (offs == NULL || data == NULL || (!large && n * len > INT32_MAX)) {
      hs_free(offs);
      hs_free(data);
      return hs_error_set(err, HS_ERR_NOMEM, "scan: default strings too large");
    }
    for (size_t i = 0; i <= n; i++) {
      if (large)
        ((int64_t *)offs)[i] = (int64_t)(i * len);
      else
        ((int32_t *)offs)[i] = (int32_t)(i * len);
      if (i < n && len) memcpy(data + i * len, bytes, len);
    }
    return hs_arrow_array_make_binary(out, length, offs, data, NULL, 0, err);
  }
  if (at.id == HS_AT_BOOL) {
    uint8_t *bits = hs_malloc((n + 7) / 8 + 1);
    if (bits == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    memset(bits, bytes[0] ? 0xFF : 0, (n + 7) / 8 + 1);
    return hs_arrow_array_make_primitive(out, length, bits, NULL, 0, err);
  }
  uint8_t *vals = hs_malloc(n * len + 1);
  if (vals == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  for (size_t i = 0; i < n; i++) memcpy(vals + i * len, bytes, len);
  return hs_arrow_array_make_primitive(out, length, vals, NULL, 0, err);
}
