/*
 * schema_json.c — JSON codec (spec appendix C) of schemas with nested
 * struct/list/map types, partition specs and sort orders.
 *
 * Parsing checks what the spec makes structural: every field, element, key
 * and value id is a 32-bit integer, nested types are objects with a known
 * "type", list/map ids are present, schema roots are structs, transforms
 * and sort directions are spelled as the spec spells them. Unknown keys on
 * fields and schemas are kept; on nested type objects they are dropped (no
 * writer we know emits any). Defaults are kept as JSON text: interpreting
 * them needs the type, and the table layer does that when it uses them.
 */
#include <string.h>

#include "iceberg_internal.h"

static hs_status type_parse(hs_ice_ctx *c, json_t *v, int depth, hs_iceberg_type *out);

static hs_status field_parse(hs_ice_ctx *c, json_t *v, int depth, hs_iceberg_field *f) {
  static const char *const known[] = {
      "id", "name", "required", "type", "doc", "initial-default", "write-default", NULL};
  if (!json_is_object(v)) return hs_ice_fail(c, NULL, "a field must be an object");
  hs_status st;
  if ((st = hs_ice_get_i32(c, v, "id", &f->id, NULL)) != HS_OK) return st;
  if ((st = hs_ice_get_str(c, v, "name", &f->name, NULL)) != HS_OK) return st;
  if ((st = hs_ice_get_bool(c, v, "required", &f->required, NULL)) != HS_OK) return st;
  bool has;
  if ((st = hs_ice_get_str(c, v, "doc", &f->doc, &has)) != HS_OK) return st;
  /* A default of JSON null is a real value here ("default is null"), so
   * keep it verbatim rather than treating null as absent. */
  json_t *d = json_object_get(v, "initial-default");
  if (d != NULL && (st = hs_ice_keep_json(c, d, &f->initial_default)) != HS_OK) return st;
  d = json_object_get(v, "write-default");
  if (d != NULL && (st = hs_ice_keep_json(c, d, &f->write_default)) != HS_OK) return st;
  if ((st = hs_ice_keep_unknown(c, v, known, &f->extra)) != HS_OK) return st;
  json_t *t = json_object_get(v, "type");
  if (t == NULL) return hs_ice_fail(c, "type", "required field is missing");
  size_t mark = hs_ice_push_key(c, "type");
  st = type_parse(c, t, depth + 1, &f->type);
  hs_ice_pop(c, mark);
  return st;
}

static hs_status struct_parse(hs_ice_ctx *c, json_t *v, int depth, hs_iceberg_type *out) {
  json_t *fields;
  hs_status st = hs_ice_get_array(c, v, "fields", &fields, NULL);
  if (st != HS_OK) return st;
  out->id = HS_ICE_STRUCT;
  out->n_fields = json_array_size(fields);
  out->fields = hs_arena_alloc(c->arena, (out->n_fields ? out->n_fields : 1) * sizeof *out->fields);
  if (out->fields == NULL) return hs_ice_nomem(c);
  size_t mark = hs_ice_push_key(c, "fields");
  for (size_t i = 0; i < out->n_fields && st == HS_OK; i++) {
    size_t m2 = hs_ice_push_index(c, i);
    st = field_parse(c, json_array_get(fields, i), depth, &out->fields[i]);
    hs_ice_pop(c, m2);
  }
  hs_ice_pop(c, mark);
  return st;
}

/* Parse the member `key` of `v` as a nested type into a new arena type. */
static hs_status child_parse(hs_ice_ctx *c, json_t *v, const char *key, int depth,
                             hs_iceberg_type **out) {
  json_t *t = json_object_get(v, key);
  if (t == NULL) return hs_ice_fail(c, key, "required field is missing");
  *out = hs_arena_alloc(c->arena, sizeof **out);
  if (*out == NULL) return hs_ice_nomem(c);
  size_t mark = hs_ice_push_key(c, key);
  hs_status st = type_parse(c, t, depth + 1, *out);
  hs_ice_pop(c, mark);
  return st;
}

static hs_status type_parse(hs_ice_ctx *c, json_t *v, int depth, hs_iceberg_type *out) {
  memset(out, 0, sizeof *out);
  if (depth > HS_ICE_TYPE_DEPTH_MAX)
    return hs_ice_fail(c, NULL, "types nested deeper than %d levels", HS_ICE_TYPE_DEPTH_MAX);
  if (json_is_string(v)) {
    hs_error sub = {0};
    hs_status st =
        hs_iceberg_type_parse_primitive(json_string_value(v), false, c->arena, out, &sub);
    if (st == HS_ERR_NOMEM) return hs_ice_nomem(c);
    if (st == HS_OK) return HS_OK;
    /* Unknown names are refused ("strin" must not become a column nobody
     * can read); geometry/geography keep their parameter text. */
    return hs_ice_fail(c, NULL, "%s", sub.message);
  }
  if (!json_is_object(v)) return hs_ice_fail(c, NULL, "a type must be a string or an object");
  const char *kind;
  hs_status st = hs_ice_get_str(c, v, "type", &kind, NULL);
  if (st != HS_OK) return st;
  if (strcmp(kind, "struct") == 0) return struct_parse(c, v, depth, out);
  if (strcmp(kind, "list") == 0) {
    out->id = HS_ICE_LIST;
    if ((st = hs_ice_get_i32(c, v, "element-id", &out->element_id, NULL)) != HS_OK) return st;
    if ((st = hs_ice_get_bool(c, v, "element-required", &out->element_required, NULL)) != HS_OK)
      return st;
    return child_parse(c, v, "element", depth, &out->element);
  }
  if (strcmp(kind, "map") == 0) {
    out->id = HS_ICE_MAP;
    if ((st = hs_ice_get_i32(c, v, "key-id", &out->key_id, NULL)) != HS_OK) return st;
    if ((st = hs_ice_get_i32(c, v, "value-id", &out->value_id, NULL)) != HS_OK) return st;
    if ((st = hs_ice_get_bool(c, v, "value-required", &out->value_required, NULL)) != HS_OK)
      return st;
    if ((st = child_parse(c, v, "key", depth, &out->key)) != HS_OK) return st;
    return child_parse(c, v, "value", depth, &out->value);
  }
  return hs_ice_fail(c, "type", "unknown nested type '%.80s' (want struct, list or map)", kind);
}

hs_status hs_ice_schema_parse(hs_ice_ctx *c, json_t *v, hs_iceberg_schema *out) {
  static const char *const known[] = {"type", "schema-id", "identifier-field-ids", "fields", NULL};
  memset(out, 0, sizeof *out);
  if (!json_is_object(v)) return hs_ice_fail(c, NULL, "a schema must be an object");
  const char *kind;
  hs_status st = hs_ice_get_str(c, v, "type", &kind, NULL);
  if (st != HS_OK) return st;
  if (strcmp(kind, "struct") != 0)
    return hs_ice_fail(c, "type", "a schema must be a struct, got '%.80s'", kind);
  bool has_id;
  if ((st = hs_ice_get_i32(c, v, "schema-id", &out->schema_id, &has_id)) != HS_OK) return st;
  if (!has_id && c->format_version >= 2)
    return hs_ice_fail(c, "schema-id", "required field is missing");
  if ((st = hs_ice_get_i32_list(c, v, "identifier-field-ids", &out->identifier_field_ids,
                                &out->n_identifier_field_ids, &out->has_identifier_field_ids)) !=
      HS_OK)
    return st;
  if ((st = hs_ice_keep_unknown(c, v, known, &out->extra)) != HS_OK) return st;
  return struct_parse(c, v, 0, &out->root);
}

static hs_status transform_get(hs_ice_ctx *c, json_t *v, hs_iceberg_transform *t) {
  const char *s;
  hs_status st = hs_ice_get_str(c, v, "transform", &s, NULL);
  if (st != HS_OK) return st;
  /* Unknown transforms are kept: v3 readers must accept and ignore them. */
  st = hs_iceberg_transform_parse(s, true, c->arena, t, NULL);
  return st == HS_OK ? HS_OK : hs_ice_nomem(c);
}

/* source-id (single-argument transform) or source-ids (v3 multi-argument). */
static hs_status sources_get(hs_ice_ctx *c, json_t *v, int32_t *id, int32_t **ids, size_t *n) {
  bool has_one, has_many;
  hs_status st = hs_ice_get_i32(c, v, "source-id", id, &has_one);
  if (st != HS_OK) return st;
  if ((st = hs_ice_get_i32_list(c, v, "source-ids", ids, n, &has_many)) != HS_OK) return st;
  if (!has_one && !has_many) return hs_ice_fail(c, "source-id", "required field is missing");
  if (has_one && has_many) {
    *ids = NULL; /* both written: source-id wins, as single-argument transforms need */
    *n = 0;
  }
  if (!has_one && has_many && *n == 0)
    return hs_ice_fail(c, "source-ids", "must name at least one source column");
  return HS_OK;
}

hs_status hs_ice_spec_parse(hs_ice_ctx *c, json_t *v, hs_iceberg_partition_spec *out) {
  memset(out, 0, sizeof *out);
  if (!json_is_object(v)) return hs_ice_fail(c, NULL, "a partition spec must be an object");
  hs_status st = hs_ice_get_i32(c, v, "spec-id", &out->spec_id, NULL);
  json_t *fields;
  if (st == HS_OK) st = hs_ice_get_array(c, v, "fields", &fields, NULL);
  if (st != HS_OK) return st;
  out->n_fields = json_array_size(fields);
  out->fields = hs_arena_alloc(c->arena, (out->n_fields ? out->n_fields : 1) * sizeof *out->fields);
  if (out->fields == NULL) return hs_ice_nomem(c);
  size_t mark = hs_ice_push_key(c, "fields");
  for (size_t i = 0; i < out->n_fields && st == HS_OK; i++) {
    size_t m2 = hs_ice_push_index(c, i);
    json_t *f = json_array_get(fields, i);
    hs_iceberg_partition_field *pf = &out->fields[i];
    if (!json_is_object(f)) {
      st = hs_ice_fail(c, NULL, "a partition field must be an object");
    } else {
      st = sources_get(c, f, &pf->source_id, &pf->source_ids, &pf->n_source_ids);
      if (st == HS_OK) st = hs_ice_get_i32(c, f, "field-id", &pf->field_id, &pf->has_field_id);
      if (st == HS_OK && !pf->has_field_id && c->format_version >= 2)
        st = hs_ice_fail(c, "field-id", "required field is missing");
      if (st == HS_OK) st = hs_ice_get_str(c, f, "name", &pf->name, NULL);
      if (st == HS_OK) st = transform_get(c, f, &pf->transform);
    }
    hs_ice_pop(c, m2);
  }
  hs_ice_pop(c, mark);
  return st;
}

hs_status hs_ice_sort_order_parse(hs_ice_ctx *c, json_t *v, hs_iceberg_sort_order *out) {
  memset(out, 0, sizeof *out);
  if (!json_is_object(v)) return hs_ice_fail(c, NULL, "a sort order must be an object");
  hs_status st = hs_ice_get_i32(c, v, "order-id", &out->order_id, NULL);
  json_t *fields;
  if (st == HS_OK) st = hs_ice_get_array(c, v, "fields", &fields, NULL);
  if (st != HS_OK) return st;
  out->n_fields = json_array_size(fields);
  out->fields = hs_arena_alloc(c->arena, (out->n_fields ? out->n_fields : 1) * sizeof *out->fields);
  if (out->fields == NULL) return hs_ice_nomem(c);
  size_t mark = hs_ice_push_key(c, "fields");
  for (size_t i = 0; i < out->n_fields && st == HS_OK; i++) {
    size_t m2 = hs_ice_push_index(c, i);
    json_t *f = json_array_get(fields, i);
    hs_iceberg_sort_field *sf = &out->fields[i];
    const char *dir = NULL, *nulls = NULL;
    if (!json_is_object(f)) {
      st = hs_ice_fail(c, NULL, "a sort field must be an object");
    } else {
      st = transform_get(c, f, &sf->transform);
      if (st == HS_OK) st = sources_get(c, f, &sf->source_id, &sf->source_ids, &sf->n_source_ids);
      if (st == HS_OK) st = hs_ice_get_str(c, f, "direction", &dir, NULL);
      if (st == HS_OK) st = hs_ice_get_str(c, f, "null-order", &nulls, NULL);
    }
    if (st == HS_OK) {
      if (strcmp(dir, "asc") != 0 && strcmp(dir, "desc") != 0)
        st = hs_ice_fail(c, "direction", "'%.40s' is not asc or desc", dir);
      else if (strcmp(nulls, "nulls-first") != 0 && strcmp(nulls, "nulls-last") != 0)
        st = hs_ice_fail(c, "null-order", "'%.40s' is not nulls-first or nulls-last", nulls);
      sf->descending = st == HS_OK && strcmp(dir, "desc") == 0;
      sf->nulls_first = st == HS_OK && strcmp(nulls, "nulls-first") == 0;
    }
    hs_ice_pop(c, m2);
  }
  hs_ice_pop(c, mark);
  return st;
}

/* ---------------------------------------------------------- to JSON */

static json_t *nomem_json(json_t *partial, hs_error *err, const char *what) {
  json_decref(partial);
  hs_error_set(err, HS_ERR_NOMEM, "out of memory writing %s", what);
  return NULL;
}

/* jansson's *_set_new steal the value even on failure, so a chain of sets
 * needs only one check at the end: count failures. */
static int set(json_t *o, const char *key, json_t *v) {
  return v == NULL ? -1 : json_object_set_new(o, key, v);
}

static json_t *type_to_json(const hs_iceberg_type *t, hs_error *err);

static json_t *field_to_json(const hs_iceberg_field *f, hs_error *err) {
  json_t *o = json_object();
  if (o == NULL) return nomem_json(NULL, err, "a field");
  int bad = set(o, "id", json_integer(f->id));
  bad |= set(o, "name", json_string(f->name));
  bad |= set(o, "required", json_boolean(f->required));
  json_t *t = type_to_json(&f->type, err);
  if (t == NULL) {
    json_decref(o);
    return NULL;
  }
  bad |= set(o, "type", t);
  if (f->doc != NULL) bad |= set(o, "doc", json_string(f->doc));
  if (f->initial_default != NULL)
    bad |= set(o, "initial-default", hs_ice_json_from_text(f->initial_default, err));
  if (f->write_default != NULL)
    bad |= set(o, "write-default", hs_ice_json_from_text(f->write_default, err));
  if (bad || hs_ice_put_extra(o, &f->extra, err) != HS_OK) return nomem_json(o, err, "a field");
  return o;
}

static json_t *type_to_json(const hs_iceberg_type *t, hs_error *err) {
  if (t->id < HS_ICE_STRUCT) {
    hs_buf b;
    hs_buf_init(&b);
    if (!hs_iceberg_type_format_primitive(t, &b) || !hs_buf_append_byte(&b, 0)) {
      hs_buf_free(&b);
      return nomem_json(NULL, err, "a type");
    }
    json_t *s = json_string((const char *)b.data);
    hs_buf_free(&b);
    return s != NULL ? s : nomem_json(NULL, err, "a type");
  }
  json_t *o = json_object();
  if (o == NULL) return nomem_json(NULL, err, "a type");
  int bad = 0;
  if (t->id == HS_ICE_STRUCT) {
    json_t *a = json_array();
    bad |= set(o, "type", json_string("struct"));
    bad |= set(o, "fields", a);
    for (size_t i = 0; a != NULL && i < t->n_fields; i++) {
      json_t *f = field_to_json(&t->fields[i], err);
      if (f == NULL) {
        json_decref(o);
        return NULL;
      }
      bad |= json_array_append_new(a, f);
    }
  } else if (t->id == HS_ICE_LIST) {
    json_t *e = type_to_json(t->element, err);
    bad |= set(o, "type", json_string("list"));
    bad |= set(o, "element-id", json_integer(t->element_id));
    bad |= set(o, "element", e);
    bad |= set(o, "element-required", json_boolean(t->element_required));
  } else {
    json_t *k = type_to_json(t->key, err);
    json_t *v = k != NULL ? type_to_json(t->value, err) : NULL;
    bad |= set(o, "type", json_string("map"));
    bad |= set(o, "key-id", json_integer(t->key_id));
    bad |= set(o, "key", k);
    bad |= set(o, "value-id", json_integer(t->value_id));
    bad |= set(o, "value", v);
    bad |= set(o, "value-required", json_boolean(t->value_required));
  }
  return bad ? nomem_json(o, err, "a type") : o;
}

json_t *hs_ice_schema_to_json(const hs_iceberg_schema *s, hs_error *err) {
  json_t *o = type_to_json(&s->root, err);
  if (o == NULL) return NULL;
  /* Spec order: type, schema-id, identifier-field-ids, fields. */
  json_t *fields = json_incref(json_object_get(o, "fields"));
  json_object_del(o, "fields");
  int bad = set(o, "schema-id", json_integer(s->schema_id));
  if (s->has_identifier_field_ids) {
    json_t *a = json_array();
    bad |= set(o, "identifier-field-ids", a);
    for (size_t i = 0; a != NULL && i < s->n_identifier_field_ids; i++)
      bad |= json_array_append_new(a, json_integer(s->identifier_field_ids[i]));
  }
  bad |= set(o, "fields", fields);
  if (bad || hs_ice_put_extra(o, &s->extra, err) != HS_OK) return nomem_json(o, err, "a schema");
  return o;
}

static int put_transform_sources(json_t *o, const hs_iceberg_transform *t, int32_t id,
                                 const int32_t *ids, size_t n) {
  hs_buf b;
  hs_buf_init(&b);
  int bad = !hs_iceberg_transform_format(t, &b) || !hs_buf_append_byte(&b, 0);
  if (!bad) bad |= set(o, "transform", json_string((const char *)b.data));
  hs_buf_free(&b);
  if (n == 0) return bad | set(o, "source-id", json_integer(id));
  json_t *a = json_array();
  bad |= set(o, "source-ids", a);
  for (size_t i = 0; a != NULL && i < n; i++) bad |= json_array_append_new(a, json_integer(ids[i]));
  return bad;
}

json_t *hs_ice_spec_to_json(const hs_iceberg_partition_spec *s, hs_error *err) {
  json_t *o = json_object(), *a = json_array();
  int bad = o == NULL || a == NULL;
  if (o != NULL) bad |= set(o, "spec-id", json_integer(s->spec_id));
  if (o != NULL) bad |= set(o, "fields", a);
  for (size_t i = 0; !bad && i < s->n_fields; i++) {
    const hs_iceberg_partition_field *pf = &s->fields[i];
    json_t *f = json_object();
    if (f == NULL || json_array_append_new(a, f) != 0) {
      bad = 1;
      break;
    }
    bad |= set(f, "name", json_string(pf->name));
    bad |=
        put_transform_sources(f, &pf->transform, pf->source_id, pf->source_ids, pf->n_source_ids);
    if (pf->has_field_id) bad |= set(f, "field-id", json_integer(pf->field_id));
  }
  return bad ? nomem_json(o, err, "a partition spec") : o;
}

json_t *hs_ice_sort_order_to_json(const hs_iceberg_sort_order *so, hs_error *err) {
  json_t *o = json_object(), *a = json_array();
  int bad = o == NULL || a == NULL;
  if (o != NULL) bad |= set(o, "order-id", json_integer(so->order_id));
  if (o != NULL) bad |= set(o, "fields", a);
  for (size_t i = 0; !bad && i < so->n_fields; i++) {
    const hs_iceberg_sort_field *sf = &so->fields[i];
    json_t *f = json_object();
    if (f == NULL || json_array_append_new(a, f) != 0) {
      bad = 1;
      break;
    }
    bad |=
        put_transform_sources(f, &sf->transform, sf->source_id, sf->source_ids, sf->n_source_ids);
    bad |= set(f, "direction", json_string(sf->descending ? "desc" : "asc"));
    bad |= set(f, "null-order", json_string(sf->nulls_first ? "nulls-first" : "nulls-last"));
  }
  return bad ? nomem_json(o, err, "a sort order") : o;
}
