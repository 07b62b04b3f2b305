/*
 * types.c — Iceberg primitive type strings (spec appendix C: "int",
 * "decimal(9,2)", "fixed[16]", "geometry(srid:4326)") and schema walks.
 *
 * Parsing is exact: a name must match completely, numbers are plain decimal
 * digits without sign, and parameters are range-checked (decimal precision
 * 1..38, 0 <= scale <= precision; fixed length 1..2^31-1). The spec allows
 * "decimal(9, 2)" with a space, so whitespace around the comma is accepted;
 * the canonical form written back has none.
 */
#include <stdio.h>
#include <string.h>

#include "iceberg.h"

static const struct {
  const char *name;
  hs_iceberg_type_id id;
} simple_types[] = {
    {"boolean", HS_ICE_BOOLEAN},
    {"int", HS_ICE_INT},
    {"long", HS_ICE_LONG},
    {"float", HS_ICE_FLOAT},
    {"double", HS_ICE_DOUBLE},
    {"date", HS_ICE_DATE},
    {"time", HS_ICE_TIME},
    {"timestamp", HS_ICE_TIMESTAMP},
    {"timestamptz", HS_ICE_TIMESTAMPTZ},
    {"timestamp_ns", HS_ICE_TIMESTAMP_NS},
    {"timestamptz_ns", HS_ICE_TIMESTAMPTZ_NS},
    {"string", HS_ICE_STRING},
    {"uuid", HS_ICE_UUID},
    {"binary", HS_ICE_BINARY},
    {"unknown", HS_ICE_UNKNOWN},
    {"variant", HS_ICE_VARIANT},
};

const char *hs_iceberg_type_name(hs_iceberg_type_id id) {
  for (size_t i = 0; i < sizeof simple_types / sizeof simple_types[0]; i++)
    if (simple_types[i].id == id) return simple_types[i].name;
  switch (id) {
  case HS_ICE_DECIMAL: return "decimal";
  case HS_ICE_FIXED: return "fixed";
  case HS_ICE_GEOMETRY: return "geometry";
  case HS_ICE_GEOGRAPHY: return "geography";
  case HS_ICE_STRUCT: return "struct";
  case HS_ICE_LIST: return "list";
  case HS_ICE_MAP: return "map";
  default: return "other";
  }
}

/* Parse unsigned decimal digits at *p (at least one, value <= max). */
static bool parse_uint(const char **p, int64_t max, int64_t *out) {
  const char *s = *p;
  int64_t v = 0;
  if (*s < '0' || *s > '9') return false;
  while (*s >= '0' && *s <= '9') {
    v = v * 10 + (*s - '0');
    if (v > max) return false;
    s++;
  }
  *p = s;
  *out = v;
  return true;
}

static void skip_spaces(const char **p) {
  while (**p == ' ') (*p)++;
}

hs_status hs_iceberg_type_parse_primitive(const char *s, bool keep_unknown, hs_arena *arena,
                                          hs_iceberg_type *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < sizeof simple_types / sizeof simple_types[0]; i++) {
    if (strcmp(s, simple_types[i].name) == 0) {
      out->id = simple_types[i].id;
      return HS_OK;
    }
  }
  if (strncmp(s, "decimal(", 8) == 0) {
    const char *p = s + 8;
    int64_t prec, scale;
    skip_spaces(&p);
    if (!parse_uint(&p, 38, &prec)) goto bad_decimal;
    skip_spaces(&p);
    if (*p++ != ',') goto bad_decimal;
    skip_spaces(&p);
    if (!parse_uint(&p, 38, &scale)) goto bad_decimal;
    skip_spaces(&p);
    if (*p++ != ')' || *p != '\0' || prec < 1 || scale > prec) goto bad_decimal;
    out->id = HS_ICE_DECIMAL;
    out->precision = (int32_t)prec;
    out->scale = (int32_t)scale;
    return HS_OK;
  bad_decimal:
    return hs_error_set(err, HS_ERR_SCHEMA,
                        "bad decimal type '%.80s' (want decimal(P,S), 1 <= P <= 38, S <= P)", s);
  }
  if (strncmp(s, "fixed[", 6) == 0) {
    const char *p = s + 6;
    int64_t len;
    if (!parse_uint(&p, INT32_MAX, &len) || len < 1 || *p++ != ']' || *p != '\0')
      return hs_error_set(err, HS_ERR_SCHEMA, "bad fixed type '%.80s' (want fixed[L], L >= 1)", s);
    out->id = HS_ICE_FIXED;
    out->length = (int32_t)len;
    return HS_OK;
  }
  hs_iceberg_type_id id = HS_ICE_OTHER;
  if (strcmp(s, "geometry") == 0 || strncmp(s, "geometry(", 9) == 0) id = HS_ICE_GEOMETRY;
  if (strcmp(s, "geography") == 0 || strncmp(s, "geography(", 10) == 0) id = HS_ICE_GEOGRAPHY;
  if (id == HS_ICE_OTHER && !keep_unknown)
    return hs_error_set(err, HS_ERR_SCHEMA, "unknown type '%.80s'", s);
  out->id = id;
  out->text = hs_arena_strndup(arena, s, strlen(s));
  if (out->text == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory (type string)");
  return HS_OK;
}

bool hs_iceberg_type_format_primitive(const hs_iceberg_type *t, hs_buf *out) {
  switch (t->id) {
  case HS_ICE_DECIMAL: return hs_buf_printf(out, "decimal(%d,%d)", t->precision, t->scale);
  case HS_ICE_FIXED: return hs_buf_printf(out, "fixed[%d]", t->length);
  case HS_ICE_GEOMETRY:
  case HS_ICE_GEOGRAPHY:
  case HS_ICE_OTHER: {
    const char *s = t->text != NULL ? t->text : hs_iceberg_type_name(t->id);
    return hs_buf_append(out, s, strlen(s));
  }
  default: {
    const char *s = hs_iceberg_type_name(t->id);
    return hs_buf_append(out, s, strlen(s));
  }
  }
}

static const hs_iceberg_type *find_in(const hs_iceberg_type *t, int32_t id,
                                      const hs_iceberg_field **field_out) {
  switch (t->id) {
  case HS_ICE_STRUCT:
    for (size_t i = 0; i < t->n_fields; i++) {
      const hs_iceberg_field *f = &t->fields[i];
      if (f->id == id) {
        *field_out = f;
        return &f->type;
      }
      const hs_iceberg_type *r = find_in(&f->type, id, field_out);
      if (r != NULL) return r;
    }
    return NULL;
  case HS_ICE_LIST:
    if (t->element_id == id) return t->element;
    return find_in(t->element, id, field_out);
  case HS_ICE_MAP: {
    if (t->key_id == id) return t->key;
    if (t->value_id == id) return t->value;
    const hs_iceberg_type *r = find_in(t->key, id, field_out);
    return r != NULL ? r : find_in(t->value, id, field_out);
  }
  default: return NULL;
  }
}

const hs_iceberg_type *hs_iceberg_schema_find(const hs_iceberg_schema *s, int32_t id,
                                              const hs_iceberg_field **field_out) {
  const hs_iceberg_field *f = NULL;
  const hs_iceberg_type *t = find_in(&s->root, id, &f);
  if (field_out != NULL) *field_out = (t != NULL && f != NULL && f->id == id) ? f : NULL;
  return t;
}

static int32_t max32(int32_t a, int32_t b) {
  return a > b ? a : b;
}

int32_t hs_iceberg_type_max_id(const hs_iceberg_type *t) {
  int32_t m = 0;
  switch (t->id) {
  case HS_ICE_STRUCT:
    for (size_t i = 0; i < t->n_fields; i++)
      m = max32(m, max32(t->fields[i].id, hs_iceberg_type_max_id(&t->fields[i].type)));
    return m;
  case HS_ICE_LIST: return max32(t->element_id, hs_iceberg_type_max_id(t->element));
  case HS_ICE_MAP:
    m = max32(t->key_id, t->value_id);
    m = max32(m, hs_iceberg_type_max_id(t->key));
    return max32(m, hs_iceberg_type_max_id(t->value));
  default: return 0;
  }
}
