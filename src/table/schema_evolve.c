/*
 * schema_evolve.c — evolving a table's schema from our API
 * (hs_table_update_schema): add, rename, drop and widen top-level columns,
 * any number of them in ONE metadata-only commit (hs_table_commit_metadata:
 * the exclusive publish, the changes re-applied to the winner's version
 * after a lost race). The result is what Iceberg's spec and pyiceberg's
 * UpdateSchema make: a new schema with the next schema-id, new fields ids
 * above last-column-id, current-schema-id moved to it; data files are
 * never rewritten (readers match columns by field id: schema_map.c).
 *
 *   add     a new optional (or, v3 with a default, required) column; v3
 *           defaults are both initial-default (what older files read as)
 *           and write-default; v2 refuses a default. fixed_size_list<float>
 *           columns become vector columns (the dimension property), as an
 *           append would make them.
 *   rename  the field keeps its id (indexes and old files follow it).
 *   drop    refused for a source of the current partition spec or sort
 *           order and for identifier fields; the column's registered
 *           indexes are dropped in the same commit (its configuration is
 *           ignored once its field is gone: index_config.c).
 *   update  type widening only: int -> long, float -> double,
 *           decimal(P,S) -> decimal(P',S) with P' > P (the spec's allowed
 *           promotions); doc may change too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_map.h"
#include "table.h"

typedef struct evolve_ctx {
  hs_table *t;
  const hs_table_schema_change *changes;
  size_t n;
} evolve_ctx;

static hs_iceberg_field *find_field(hs_iceberg_field *f, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (f[i].name != NULL && strcmp(f[i].name, name) == 0) return &f[i];
  return NULL;
}

static bool id_in_spec(const hs_iceberg_partition_spec *s, int32_t id) {
  for (size_t i = 0; s != NULL && i < s->n_fields; i++) {
    const hs_iceberg_partition_field *f = &s->fields[i];
    if (f->n_source_ids == 0 && f->source_id == id) return true;
    for (size_t k = 0; k < f->n_source_ids; k++)
      if (f->source_ids[k] == id) return true;
  }
  return false;
}

static bool id_in_order(const hs_iceberg_sort_order *o, int32_t id) {
  for (size_t i = 0; o != NULL && i < o->n_fields; i++) {
    const hs_iceberg_sort_field *f = &o->fields[i];
    if (f->n_source_ids == 0 && f->source_id == id) return true;
    for (size_t k = 0; k < f->n_source_ids; k++)
      if (f->source_ids[k] == id) return true;
  }
  return false;
}

/* The one field of struct schema `arrow` as an Iceberg field with ids from
 * *next_id (advanced past the ids it used); vector columns into *vecs. */
static hs_status field_from_arrow(const struct ArrowSchema *arrow, int32_t format_version,
                                  int32_t *next_id, hs_arena *a, hs_iceberg_field *out,
                                  hs_iceberg_vector_dim **vecs, size_t *n_vecs, hs_error *err) {
  if (arrow == NULL || arrow->release == NULL || arrow->format == NULL ||
      strcmp(arrow->format, "+s") != 0 || arrow->n_children != 1)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "the type must be a struct of one field");
  hs_iceberg_from_arrow_options fo = {.format_version = format_version, .next_id = *next_id};
  hs_iceberg_schema s;
  int32_t last = 0;
  hs_status st = hs_iceberg_schema_from_arrow(arrow, &fo, a, &s, &last, vecs, n_vecs, err);
  if (st != HS_OK) return st;
  if (s.root.n_fields != 1)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "the type must be a struct of one field");
  *out = s.root.fields[0];
  *next_id = last + 1;
  return HS_OK;
}

static bool decimal_widens(const hs_iceberg_type *from, const hs_iceberg_type *to) {
  return from->id == HS_ICE_DECIMAL && to->id == HS_ICE_DECIMAL && from->scale == to->scale &&
         to->precision >= from->precision;
}

/* Whether `from` may become `to` (Iceberg "Schema Evolution": int -> long,
 * float -> double, decimal(P,S) -> decimal(P',S), P' >= P); *same when equal. */
static bool promotion_allowed(const hs_iceberg_type *from, const hs_iceberg_type *to, bool *same) {
  *same = false;
  if (from->id == to->id && from->id != HS_ICE_DECIMAL && from->id != HS_ICE_FIXED &&
      from->id != HS_ICE_STRUCT && from->id != HS_ICE_LIST && from->id != HS_ICE_MAP &&
      from->id != HS_ICE_OTHER) {
    *same = true;
    return true;
  }
  if (from->id == HS_ICE_FIXED && to->id == HS_ICE_FIXED && from->length == to->length) {
    *same = true;
    return true;
  }
  if (decimal_widens(from, to)) {
    *same = from->precision == to->precision;
    return true;
  }
  return (from->id == HS_ICE_INT && to->id == HS_ICE_LONG) ||
         (from->id == HS_ICE_FLOAT && to->id == HS_ICE_DOUBLE);
}

static const char *type_text(const hs_iceberg_type *t, char *buf, size_t cap) {
  hs_buf b;
  hs_buf_init(&b);
  if (t->id == HS_ICE_STRUCT || t->id == HS_ICE_LIST || t->id == HS_ICE_MAP ||
      !hs_iceberg_type_format_primitive(t, &b)) {
    snprintf(buf, cap, "%s", hs_iceberg_type_name(t->id));
  } else {
    snprintf(buf, cap, "%.*s", (int)b.len, (const char *)b.data);
  }
  hs_buf_free(&b);
  return buf;
}

static hs_status apply_one(evolve_ctx *c, const hs_iceberg_metadata *old, hs_iceberg_metadata *m,
                           hs_arena *a, const hs_table_schema_change *ch, hs_iceberg_field *fields,
                           size_t *n_fields, size_t cap, int32_t *next_id, bool *registry_done,
                           hs_error *err) {
  const char *col = ch->column;
  if (col == NULL || *col == '\0') return hs_error_set(err, HS_ERR_INVALID_ARG, "no column name");
  if (strchr(col, '.') != NULL && find_field(fields, *n_fields, col) == NULL &&
      ch->op != HS_SCHEMA_ADD_COLUMN)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "column '%s': only top-level columns evolve here (nested fields do not)",
                        col);
  hs_iceberg_field *f = find_field(fields, *n_fields, col);
  const hs_iceberg_schema *cur = hs_iceberg_metadata_schema(old, old->current_schema_id);
  switch (ch->op) {
  case HS_SCHEMA_ADD_COLUMN: {
    if (f != NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s' already exists", col);
    if (*n_fields >= cap) return hs_error_set(err, HS_ERR_INTERNAL, "too many columns");
    hs_iceberg_field nf;
    hs_iceberg_vector_dim *vecs = NULL;
    size_t n_vecs = 0;
    hs_status st =
        field_from_arrow(ch->type, old->format_version, next_id, a, &nf, &vecs, &n_vecs, err);
    if (st != HS_OK) {
      hs_error_prefix(err, "column '%s': ", col);
      return st;
    }
    nf.name = hs_arena_strndup(a, col, strlen(col));
    nf.required = ch->required != 0;
    nf.doc = ch->doc != NULL ? hs_arena_strndup(a, ch->doc, strlen(ch->doc)) : NULL;
    nf.initial_default = NULL;
    nf.write_default = NULL;
    if (nf.name == NULL || (ch->doc != NULL && nf.doc == NULL))
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    if (ch->default_json != NULL) {
      if (old->format_version < 3)
        return hs_error_set(err, HS_ERR_UNSUPPORTED,
                            "column '%s': default values (initial-default, write-default) need "
                            "format version 3; this table is version %d",
                            col, (int)old->format_version);
      /* Only defaults every reader here can read back (schema_default.c). */
      uint8_t *bytes = NULL;
      size_t len = 0;
      st = hs_colmap_default_parse(ch->default_json, ch->type->children[0], &bytes, &len, err);
      hs_free(bytes);
      if (st != HS_OK) {
        hs_error_prefix(err, "column '%s': default %s: ", col, ch->default_json);
        return st;
      }
      nf.initial_default = hs_arena_strndup(a, ch->default_json, strlen(ch->default_json));
      nf.write_default = nf.initial_default;
      if (nf.initial_default == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    } else if (nf.required) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "column '%s': a required column needs a default (the rows written "
                          "before it have no value)%s",
                          col, old->format_version < 3 ? "; make it optional (format v2)" : "");
    }
    for (size_t i = 0; i < n_vecs; i++) {
      char key[64], val[24];
      hs_iceberg_vector_dim_property(vecs[i].field_id, key);
      snprintf(val, sizeof val, "%d", (int)vecs[i].dimension);
      /* hs_table_set_property keeps the pointers: copies in the arena */
      const char *k = hs_arena_strndup(a, key, strlen(key));
      const char *v = hs_arena_strndup(a, val, strlen(val));
      if (k == NULL || v == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      if ((st = hs_table_set_property(m, a, k, v, err)) != HS_OK) return st;
    }
    fields[(*n_fields)++] = nf;
    return HS_OK;
  }
  case HS_SCHEMA_RENAME_COLUMN: {
    if (f == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "no column '%s' to rename", col);
    const char *to = ch->new_name;
    if (to == NULL || *to == '\0')
      return hs_error_set(err, HS_ERR_INVALID_ARG, "rename of '%s': no new name", col);
    if (strcmp(to, col) == 0) return HS_OK;
    if (find_field(fields, *n_fields, to) != NULL)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "cannot rename '%s' to '%s': '%s' exists", col,
                          to, to);
    if ((f->name = hs_arena_strndup(a, to, strlen(to))) == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    return HS_OK;
  }
  case HS_SCHEMA_DROP_COLUMN: {
    if (f == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "no column '%s' to drop", col);
    const hs_iceberg_partition_spec *spec = NULL;
    for (size_t i = 0; i < old->n_specs; i++)
      if (old->specs[i].spec_id == old->default_spec_id) spec = &old->specs[i];
    const hs_iceberg_sort_order *order = NULL;
    for (size_t i = 0; old->has_default_sort_order_id && i < old->n_sort_orders; i++)
      if (old->sort_orders[i].order_id == old->default_sort_order_id) order = &old->sort_orders[i];
    if (id_in_spec(spec, f->id))
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "cannot drop column '%s': it is a source of the current partition spec "
                          "(change the spec first: set_partition_spec / update_spec)",
                          col);
    if (id_in_order(order, f->id))
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "cannot drop column '%s': it is a key of the current sort order "
                          "(change the order first: set_sort_order / replace_sort_order)",
                          col);
    for (size_t i = 0; cur != NULL && i < cur->n_identifier_field_ids; i++)
      if (cur->identifier_field_ids[i] == f->id)
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "cannot drop column '%s': it is an identifier field of the schema",
                            col);
    /* Its registered indexes go in the same commit. */
    bool changed = false;
    hs_status st = hs_table_index_registry_rewrite(c->t, *registry_done ? m : old, m, a, col, f->id,
                                                   NULL, 0, &changed, err);
    if (st != HS_OK) return st;
    if (changed) *registry_done = true;
    size_t k = (size_t)(f - fields);
    memmove(&fields[k], &fields[k + 1], (*n_fields - k - 1) * sizeof *fields);
    (*n_fields)--;
    return HS_OK;
  }
  case HS_SCHEMA_UPDATE_COLUMN: {
    if (f == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "no column '%s' to update", col);
    if (ch->type != NULL) {
      hs_iceberg_field nf;
      int32_t scratch = *next_id;
      hs_status st =
          field_from_arrow(ch->type, old->format_version, &scratch, a, &nf, NULL, NULL, err);
      if (st != HS_OK) {
        hs_error_prefix(err, "column '%s': ", col);
        return st;
      }
      bool same = false;
      char from[64], to[64];
      if (!promotion_allowed(&f->type, &nf.type, &same))
        return hs_error_set(err, HS_ERR_SCHEMA,
                            "cannot change column '%s' from %s to %s: Iceberg allows only int -> "
                            "long, float -> double and decimal(P,S) -> decimal(P',S) with P' > P",
                            col, type_text(&f->type, from, sizeof from),
                            type_text(&nf.type, to, sizeof to));
      if (!same) f->type = nf.type;
    }
    if (ch->doc != NULL && (f->doc = hs_arena_strndup(a, ch->doc, strlen(ch->doc))) == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    return HS_OK;
  }
  }
  return hs_error_set(err, HS_ERR_INVALID_ARG, "unknown schema change %d", (int)ch->op);
}

static bool fields_equal(const hs_iceberg_field *a, size_t na, const hs_iceberg_field *b,
                         size_t nb) {
  if (na != nb) return false;
  for (size_t i = 0; i < na; i++) {
    if (a[i].id != b[i].id || strcmp(a[i].name, b[i].name) != 0 || a[i].required != b[i].required)
      return false;
    if (a[i].type.id != b[i].type.id || a[i].type.precision != b[i].type.precision ||
        a[i].type.scale != b[i].type.scale)
      return false;
    if ((a[i].doc == NULL) != (b[i].doc == NULL) || (a[i].doc && strcmp(a[i].doc, b[i].doc)))
      return false;
  }
  return true;
}

static hs_status evolve_edit(const hs_iceberg_metadata *old, hs_iceberg_metadata *m, hs_arena *a,
                             void *vctx, bool *changed, hs_error *err) {
  evolve_ctx *c = vctx;
  *changed = false;
  const hs_iceberg_schema *cur = hs_iceberg_metadata_schema(old, old->current_schema_id);
  if (cur == NULL) return hs_error_set(err, HS_ERR_CORRUPT, "no current schema");
  size_t n = cur->root.n_fields, cap = n + c->n + 1;
  hs_iceberg_field *fields = hs_arena_alloc(a, cap * sizeof *fields);
  hs_iceberg_schema *schemas = hs_arena_alloc(a, (old->n_schemas + 1) * sizeof *schemas);
  if (fields == NULL || schemas == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  if (n) memcpy(fields, cur->root.fields, n * sizeof *fields);
  int32_t next_id = old->last_column_id + 1;
  bool registry_done = false;
  for (size_t i = 0; i < c->n; i++) {
    hs_status st =
        apply_one(c, old, m, a, &c->changes[i], fields, &n, cap, &next_id, &registry_done, err);
    if (st != HS_OK) return st;
  }
  if (fields_equal(fields, n, cur->root.fields, cur->root.n_fields) && !registry_done) return HS_OK;
  int32_t max_id = -1;
  for (size_t i = 0; i < old->n_schemas; i++)
    if (old->schemas[i].schema_id > max_id) max_id = old->schemas[i].schema_id;
  memcpy(schemas, old->schemas, old->n_schemas * sizeof *schemas);
  hs_iceberg_schema *s = &schemas[old->n_schemas];
  *s = *cur;
  memset(&s->extra, 0, sizeof s->extra);
  s->schema_id = max_id + 1;
  s->root.fields = fields;
  s->root.n_fields = n;
  m->schemas = schemas;
  m->n_schemas = old->n_schemas + 1;
  m->current_schema_id = s->schema_id;
  if (next_id - 1 > m->last_column_id) m->last_column_id = next_id - 1;
  *changed = true;
  return HS_OK;
}

hs_status hs_table_update_schema(hs_table *table, const hs_table_schema_change *changes, size_t n,
                                 hs_error *err) {
  if (table == NULL || (n > 0 && changes == NULL))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "update schema: no table or changes");
  if (n == 0) return HS_OK;
  evolve_ctx c = {.t = table, .changes = changes, .n = n};
  return hs_table_commit_metadata(table, "update schema", evolve_edit, &c, err);
}
