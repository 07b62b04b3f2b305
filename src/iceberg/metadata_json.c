/*
 * metadata_json.c — table metadata JSON (spec "Table Metadata", appendix C
 * "Table Metadata and Snapshots"): parse into the arena model and write back.
 *
 * Accepted: format versions 2 and 3 with the fields v2 makes required, and
 * v1 documents that already carry the v2 lists (schemas, partition-specs);
 * older v1 metadata with only "schema"/"partition-spec" is refused as
 * unsupported. Cross references are checked (current schema, default spec,
 * default sort order, current snapshot and refs name existing entries) so
 * that later layers can look them up without re-checking. Unknown top-level
 * and snapshot keys are kept as JSON text and written back.
 */
#include <string.h>

#include "iceberg_internal.h"

static hs_status snapshot_parse(hs_ice_ctx *c, json_t *v, hs_iceberg_snapshot *s) {
  static const char *const known[] = {
      "snapshot-id", "parent-snapshot-id", "sequence-number", "timestamp-ms", "manifest-list",
      "summary",     "schema-id",          "first-row-id",    "added-rows",   NULL};
  if (!json_is_object(v)) return hs_ice_fail(c, NULL, "a snapshot must be an object");
  bool has_ml;
  hs_status st = hs_ice_get_i64(c, v, "snapshot-id", &s->snapshot_id, NULL);
  if (st == HS_OK)
    st = hs_ice_get_i64(c, v, "parent-snapshot-id", &s->parent_snapshot_id,
                        &s->has_parent_snapshot_id);
  if (st == HS_OK)
    st = hs_ice_get_i64(c, v, "sequence-number", &s->sequence_number, &s->has_sequence_number);
  if (st == HS_OK && !s->has_sequence_number && c->format_version >= 2)
    st = hs_ice_fail(c, "sequence-number", "required field is missing");
  if (st == HS_OK) st = hs_ice_get_i64(c, v, "timestamp-ms", &s->timestamp_ms, NULL);
  if (st == HS_OK) st = hs_ice_get_str(c, v, "manifest-list", &s->manifest_list, &has_ml);
  if (st == HS_OK && !has_ml && c->format_version >= 2)
    st = hs_ice_fail(c, "manifest-list", "required field is missing");
  if (st == HS_OK) st = hs_ice_get_i32(c, v, "schema-id", &s->schema_id, &s->has_schema_id);
  if (st == HS_OK)
    st = hs_ice_get_i64(c, v, "first-row-id", &s->first_row_id, &s->has_first_row_id);
  if (st == HS_OK) st = hs_ice_get_i64(c, v, "added-rows", &s->added_rows, &s->has_added_rows);
  if (st == HS_OK) st = hs_ice_keep_unknown(c, v, known, &s->extra);
  if (st != HS_OK) return st;
  json_t *sum = json_object_get(v, "summary");
  if (sum == NULL) {
    if (c->format_version >= 2) return hs_ice_fail(c, "summary", "required field is missing");
    return HS_OK;
  }
  size_t mark = hs_ice_push_key(c, "summary");
  st = hs_ice_get_string_map(c, sum, &s->summary, &s->n_summary);
  if (st == HS_OK && c->format_version >= 2 && json_object_get(sum, "operation") == NULL)
    st = hs_ice_fail(c, "operation", "required field is missing");
  hs_ice_pop(c, mark);
  return st;
}

static hs_status ref_parse(hs_ice_ctx *c, const char *name, json_t *v, hs_iceberg_ref *r) {
  if (!json_is_object(v)) return hs_ice_fail(c, NULL, "a ref must be an object");
  const char *type;
  r->name = hs_arena_strndup(c->arena, name, strlen(name));
  if (r->name == NULL) return hs_ice_nomem(c);
  hs_status st = hs_ice_get_i64(c, v, "snapshot-id", &r->snapshot_id, NULL);
  if (st == HS_OK) st = hs_ice_get_str(c, v, "type", &type, NULL);
  if (st == HS_OK && strcmp(type, "tag") != 0 && strcmp(type, "branch") != 0)
    st = hs_ice_fail(c, "type", "'%.40s' is not branch or tag", type);
  if (st != HS_OK) return st;
  r->is_tag = type[0] == 't';
  st = hs_ice_get_i32(c, v, "min-snapshots-to-keep", &r->min_snapshots_to_keep,
                      &r->has_min_snapshots_to_keep);
  if (st == HS_OK)
    st = hs_ice_get_i64(c, v, "max-snapshot-age-ms", &r->max_snapshot_age_ms,
                        &r->has_max_snapshot_age_ms);
  if (st == HS_OK)
    st = hs_ice_get_i64(c, v, "max-ref-age-ms", &r->max_ref_age_ms, &r->has_max_ref_age_ms);
  if (st == HS_OK && r->is_tag && (r->has_min_snapshots_to_keep || r->has_max_snapshot_age_ms))
    st = hs_ice_fail(c, NULL, "tags cannot have snapshot retention (branch-only fields)");
  return st;
}

/* Parse array member `key` of `root` into an arena array of `elem_size`
 * items with `fn` (which sees the path "key[i]"). */
typedef hs_status (*elem_parse_fn)(hs_ice_ctx *c, json_t *v, void *out);

static hs_status list_parse(hs_ice_ctx *c, json_t *root, const char *key, bool required,
                            size_t elem_size, elem_parse_fn fn, void **out, size_t *n) {
  json_t *a;
  bool has;
  *out = NULL;
  *n = 0;
  hs_status st = hs_ice_get_array(c, root, key, &a, required ? NULL : &has);
  if (st != HS_OK || a == NULL) return st;
  size_t count = json_array_size(a);
  uint8_t *items = hs_arena_alloc(c->arena, (count ? count : 1) * elem_size);
  if (items == NULL) return hs_ice_nomem(c);
  size_t mark = hs_ice_push_key(c, key);
  for (size_t i = 0; i < count; i++) {
    size_t m2 = hs_ice_push_index(c, i);
    st = fn(c, json_array_get(a, i), items + i * elem_size);
    hs_ice_pop(c, m2);
    if (st != HS_OK) break;
  }
  hs_ice_pop(c, mark);
  *out = items;
  *n = count;
  return st;
}

static hs_status schema_fn(hs_ice_ctx *c, json_t *v, void *out) {
  return hs_ice_schema_parse(c, v, out);
}
static hs_status spec_fn(hs_ice_ctx *c, json_t *v, void *out) {
  return hs_ice_spec_parse(c, v, out);
}
static hs_status order_fn(hs_ice_ctx *c, json_t *v, void *out) {
  return hs_ice_sort_order_parse(c, v, out);
}
static hs_status snapshot_fn(hs_ice_ctx *c, json_t *v, void *out) {
  return snapshot_parse(c, v, out);
}
static hs_status snaplog_fn(hs_ice_ctx *c, json_t *v, void *out) {
  hs_iceberg_snapshot_log_entry *e = out;
  if (!json_is_object(v)) return hs_ice_fail(c, NULL, "a snapshot-log entry must be an object");
  hs_status st = hs_ice_get_i64(c, v, "timestamp-ms", &e->timestamp_ms, NULL);
  return st == HS_OK ? hs_ice_get_i64(c, v, "snapshot-id", &e->snapshot_id, NULL) : st;
}
static hs_status metalog_fn(hs_ice_ctx *c, json_t *v, void *out) {
  hs_iceberg_metadata_log_entry *e = out;
  if (!json_is_object(v)) return hs_ice_fail(c, NULL, "a metadata-log entry must be an object");
  hs_status st = hs_ice_get_i64(c, v, "timestamp-ms", &e->timestamp_ms, NULL);
  return st == HS_OK ? hs_ice_get_str(c, v, "metadata-file", &e->metadata_file, NULL) : st;
}

static hs_status keep_opaque(hs_ice_ctx *c, json_t *root, const char *key, hs_iceberg_json *out) {
  json_t *v = json_object_get(root, key);
  *out = NULL;
  if (v == NULL || json_is_null(v)) return HS_OK;
  if (!json_is_array(v)) return hs_ice_fail(c, key, "expected an array");
  return hs_ice_keep_json(c, v, out);
}

static hs_status check_references(hs_ice_ctx *c, hs_iceberg_metadata *m) {
  if (hs_iceberg_metadata_schema(m, m->current_schema_id) == NULL)
    return hs_ice_fail(c, "current-schema-id", "no schema with id %d", m->current_schema_id);
  bool found = false;
  for (size_t i = 0; i < m->n_specs; i++) found |= m->specs[i].spec_id == m->default_spec_id;
  if (!found)
    return hs_ice_fail(c, "default-spec-id", "no partition spec with id %d", m->default_spec_id);
  found = !m->has_default_sort_order_id;
  for (size_t i = 0; i < m->n_sort_orders; i++)
    found |= m->sort_orders[i].order_id == m->default_sort_order_id;
  if (!found)
    return hs_ice_fail(c, "default-sort-order-id", "no sort order with id %d",
                       m->default_sort_order_id);
  if (m->has_current_snapshot_id && hs_iceberg_metadata_snapshot(m, m->current_snapshot_id) == NULL)
    return hs_ice_fail(c, "current-snapshot-id", "no snapshot with id %lld",
                       (long long)m->current_snapshot_id);
  for (size_t i = 0; i < m->n_refs; i++)
    if (hs_iceberg_metadata_snapshot(m, m->refs[i].snapshot_id) == NULL)
      return hs_ice_fail(c, "refs", "'%.80s' points at missing snapshot %lld", m->refs[i].name,
                         (long long)m->refs[i].snapshot_id);
  return HS_OK;
}

static hs_status metadata_parse(hs_ice_ctx *c, json_t *root, hs_iceberg_metadata *m) {
  static const char *const known[] = {"format-version",
                                      "table-uuid",
                                      "location",
                                      "last-sequence-number",
                                      "last-updated-ms",
                                      "last-column-id",
                                      "schemas",
                                      "current-schema-id",
                                      "partition-specs",
                                      "default-spec-id",
                                      "last-partition-id",
                                      "sort-orders",
                                      "default-sort-order-id",
                                      "properties",
                                      "current-snapshot-id",
                                      "snapshots",
                                      "snapshot-log",
                                      "metadata-log",
                                      "refs",
                                      "statistics",
                                      "partition-statistics",
                                      "encryption-keys",
                                      "next-row-id",
                                      NULL};
  if (!json_is_object(root)) return hs_ice_fail(c, NULL, "table metadata must be a JSON object");
  hs_status st = hs_ice_get_i32(c, root, "format-version", &m->format_version, NULL);
  if (st != HS_OK) return st;
  if (m->format_version < 1 || m->format_version > 3)
    return hs_ice_fail(c, "format-version", "unsupported format version %d (want 1, 2 or 3)",
                       m->format_version);
  c->format_version = m->format_version;
  bool v2 = m->format_version >= 2, has;
  if (!v2 && json_object_get(root, "schemas") == NULL)
    return hs_error_set(c->err, HS_ERR_UNSUPPORTED,
                        "format-version 1 metadata without \"schemas\" is not supported");
  if ((st = hs_ice_get_str(c, root, "table-uuid", &m->table_uuid, v2 ? NULL : &has)) != HS_OK ||
      (st = hs_ice_get_str(c, root, "location", &m->location, NULL)) != HS_OK ||
      (st = hs_ice_get_i64(c, root, "last-sequence-number", &m->last_sequence_number,
                           &m->has_last_sequence_number)) != HS_OK ||
      (st = hs_ice_get_i64(c, root, "last-updated-ms", &m->last_updated_ms, NULL)) != HS_OK ||
      (st = hs_ice_get_i32(c, root, "last-column-id", &m->last_column_id, NULL)) != HS_OK ||
      (st = hs_ice_get_i32(c, root, "current-schema-id", &m->current_schema_id, NULL)) != HS_OK ||
      (st = hs_ice_get_i32(c, root, "default-spec-id", &m->default_spec_id, NULL)) != HS_OK ||
      (st = hs_ice_get_i32(c, root, "last-partition-id", &m->last_partition_id,
                           &m->has_last_partition_id)) != HS_OK ||
      (st = hs_ice_get_i32(c, root, "default-sort-order-id", &m->default_sort_order_id,
                           &m->has_default_sort_order_id)) != HS_OK ||
      (st = hs_ice_get_i64(c, root, "current-snapshot-id", &m->current_snapshot_id,
                           &m->has_current_snapshot_id)) != HS_OK ||
      (st = hs_ice_get_i64(c, root, "next-row-id", &m->next_row_id, &m->has_next_row_id)) != HS_OK)
    return st;
  if (v2 && !m->has_last_sequence_number)
    return hs_ice_fail(c, "last-sequence-number", "required field is missing");
  if (v2 && !m->has_last_partition_id)
    return hs_ice_fail(c, "last-partition-id", "required field is missing");
  if (v2 && !m->has_default_sort_order_id)
    return hs_ice_fail(c, "default-sort-order-id", "required field is missing");
  if (m->format_version >= 3 && !m->has_next_row_id)
    return hs_ice_fail(c, "next-row-id", "required field is missing");
  /* -1 is how v1/v2 writers spell "no current snapshot". */
  if (m->has_current_snapshot_id && m->current_snapshot_id == -1)
    m->has_current_snapshot_id = false;

  if ((st = list_parse(c, root, "schemas", true, sizeof *m->schemas, schema_fn,
                       (void **)&m->schemas, &m->n_schemas)) != HS_OK ||
      (st = list_parse(c, root, "partition-specs", true, sizeof *m->specs, spec_fn,
                       (void **)&m->specs, &m->n_specs)) != HS_OK ||
      (st = list_parse(c, root, "sort-orders", v2, sizeof *m->sort_orders, order_fn,
                       (void **)&m->sort_orders, &m->n_sort_orders)) != HS_OK ||
      (st = list_parse(c, root, "snapshots", false, sizeof *m->snapshots, snapshot_fn,
                       (void **)&m->snapshots, &m->n_snapshots)) != HS_OK ||
      (st = list_parse(c, root, "snapshot-log", false, sizeof *m->snapshot_log, snaplog_fn,
                       (void **)&m->snapshot_log, &m->n_snapshot_log)) != HS_OK ||
      (st = list_parse(c, root, "metadata-log", false, sizeof *m->metadata_log, metalog_fn,
                       (void **)&m->metadata_log, &m->n_metadata_log)) != HS_OK)
    return st;

  json_t *props = json_object_get(root, "properties");
  if (props != NULL && !json_is_null(props)) {
    size_t mark = hs_ice_push_key(c, "properties");
    st = hs_ice_get_string_map(c, props, &m->properties, &m->n_properties);
    hs_ice_pop(c, mark);
    if (st != HS_OK) return st;
  }
  json_t *refs = json_object_get(root, "refs");
  if (refs != NULL && !json_is_null(refs)) {
    if (!json_is_object(refs)) return hs_ice_fail(c, "refs", "expected an object");
    m->n_refs = json_object_size(refs);
    m->refs = hs_arena_alloc(c->arena, (m->n_refs ? m->n_refs : 1) * sizeof *m->refs);
    if (m->refs == NULL) return hs_ice_nomem(c);
    size_t i = 0, mark = hs_ice_push_key(c, "refs");
    const char *name;
    json_t *rv;
    json_object_foreach(refs, name, rv) {
      size_t m2 = hs_ice_push_key(c, name);
      st = ref_parse(c, name, rv, &m->refs[i++]);
      hs_ice_pop(c, m2);
      if (st != HS_OK) break;
    }
    hs_ice_pop(c, mark);
    if (st != HS_OK) return st;
  }
  if ((st = keep_opaque(c, root, "statistics", &m->statistics)) != HS_OK ||
      (st = keep_opaque(c, root, "partition-statistics", &m->partition_statistics)) != HS_OK ||
      (st = keep_opaque(c, root, "encryption-keys", &m->encryption_keys)) != HS_OK ||
      (st = hs_ice_keep_unknown(c, root, known, &m->extra)) != HS_OK)
    return st;
  return check_references(c, m);
}

hs_status hs_iceberg_metadata_parse(const char *json, size_t len, hs_arena *arena,
                                    hs_iceberg_metadata *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  if (json == NULL && len > 0) return hs_error_set(err, HS_ERR_INVALID_ARG, "NULL metadata text");
  json_error_t jerr;
  /* Duplicate keys are rejected: which one wins differs between readers. */
  json_t *root = json_loadb(json != NULL ? json : "", len, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL)
    return hs_error_set(err, HS_ERR_CORRUPT, "metadata JSON: %s at line %d column %d (byte %d)",
                        jerr.text, jerr.line, jerr.column, jerr.position);
  hs_ice_ctx c = {.arena = arena, .err = err};
  hs_status st = metadata_parse(&c, root, out);
  json_decref(root);
  return st;
}

/* -------------------------------------------------------------- write */

static int set(json_t *o, const char *key, json_t *v) {
  return v == NULL ? -1 : json_object_set_new(o, key, v);
}

static int set_opaque(json_t *o, const char *key, hs_iceberg_json text, hs_error *err) {
  return text == NULL ? 0 : set(o, key, hs_ice_json_from_text(text, err));
}

static json_t *kv_object(const hs_iceberg_kv *kvs, size_t n) {
  json_t *o = json_object();
  for (size_t i = 0; o != NULL && i < n; i++)
    if (set(o, kvs[i].key, json_string(kvs[i].value)) != 0) {
      json_decref(o);
      return NULL;
    }
  return o;
}

static json_t *snapshot_to_json(const hs_iceberg_snapshot *s, hs_error *err) {
  json_t *o = json_object();
  if (o == NULL) return NULL;
  int bad = set(o, "snapshot-id", json_integer(s->snapshot_id));
  if (s->has_parent_snapshot_id)
    bad |= set(o, "parent-snapshot-id", json_integer(s->parent_snapshot_id));
  if (s->has_sequence_number) bad |= set(o, "sequence-number", json_integer(s->sequence_number));
  bad |= set(o, "timestamp-ms", json_integer(s->timestamp_ms));
  if (s->manifest_list != NULL) bad |= set(o, "manifest-list", json_string(s->manifest_list));
  if (s->summary != NULL || s->n_summary > 0)
    bad |= set(o, "summary", kv_object(s->summary, s->n_summary));
  if (s->has_schema_id) bad |= set(o, "schema-id", json_integer(s->schema_id));
  if (s->has_first_row_id) bad |= set(o, "first-row-id", json_integer(s->first_row_id));
  if (s->has_added_rows) bad |= set(o, "added-rows", json_integer(s->added_rows));
  if (bad || hs_ice_put_extra(o, &s->extra, err) != HS_OK) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static json_t *ref_to_json(const hs_iceberg_ref *r) {
  json_t *o = json_object();
  if (o == NULL) return NULL;
  int bad = set(o, "snapshot-id", json_integer(r->snapshot_id));
  bad |= set(o, "type", json_string(r->is_tag ? "tag" : "branch"));
  if (r->has_min_snapshots_to_keep)
    bad |= set(o, "min-snapshots-to-keep", json_integer(r->min_snapshots_to_keep));
  if (r->has_max_snapshot_age_ms)
    bad |= set(o, "max-snapshot-age-ms", json_integer(r->max_snapshot_age_ms));
  if (r->has_max_ref_age_ms) bad |= set(o, "max-ref-age-ms", json_integer(r->max_ref_age_ms));
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Build array member `key` from n items with `fn`; 0 on success. */
#define PUT_LIST(o, key, items, n, expr)                        \
  do {                                                          \
    json_t *arr_ = json_array();                                \
    bad |= set(o, key, arr_);                                   \
    for (size_t i = 0; arr_ != NULL && i < (n); i++) {          \
      json_t *e_ = (expr);                                      \
      bad |= e_ == NULL ? -1 : json_array_append_new(arr_, e_); \
    }                                                           \
  } while (0)

/* With `fast`, the history lists hold HS_ICE_FAST_MARKER (metadata_fast.c
 * writes them); snapshots only when hs_ice_fast_snapshots_ok. */
static json_t *metadata_to_json(const hs_iceberg_metadata *m, bool fast, hs_error *err) {
  json_t *o = json_object();
  if (o == NULL) return NULL;
  int bad = set(o, "format-version", json_integer(m->format_version));
  if (m->table_uuid != NULL) bad |= set(o, "table-uuid", json_string(m->table_uuid));
  bad |= set(o, "location", json_string(m->location != NULL ? m->location : ""));
  if (m->has_last_sequence_number)
    bad |= set(o, "last-sequence-number", json_integer(m->last_sequence_number));
  bad |= set(o, "last-updated-ms", json_integer(m->last_updated_ms));
  bad |= set(o, "last-column-id", json_integer(m->last_column_id));
  PUT_LIST(o, "schemas", m->schemas, m->n_schemas, hs_ice_schema_to_json(&m->schemas[i], err));
  bad |= set(o, "current-schema-id", json_integer(m->current_schema_id));
  PUT_LIST(o, "partition-specs", m->specs, m->n_specs, hs_ice_spec_to_json(&m->specs[i], err));
  bad |= set(o, "default-spec-id", json_integer(m->default_spec_id));
  if (m->has_last_partition_id)
    bad |= set(o, "last-partition-id", json_integer(m->last_partition_id));
  bad |= set(o, "properties", kv_object(m->properties, m->n_properties));
  if (m->has_current_snapshot_id)
    bad |= set(o, "current-snapshot-id", json_integer(m->current_snapshot_id));
  if (fast && hs_ice_fast_snapshots_ok(m)) {
    bad |= set(o, "snapshots", json_integer(HS_ICE_FAST_MARKER));
  } else {
    PUT_LIST(o, "snapshots", m->snapshots, m->n_snapshots, snapshot_to_json(&m->snapshots[i], err));
  }
  if (fast) {
    bad |= set(o, "snapshot-log", json_integer(HS_ICE_FAST_MARKER));
    bad |= set(o, "metadata-log", json_integer(HS_ICE_FAST_MARKER));
  } else {
    PUT_LIST(o, "snapshot-log", m->snapshot_log, m->n_snapshot_log,
             json_pack("{s:I,s:I}", "timestamp-ms", (json_int_t)m->snapshot_log[i].timestamp_ms,
                       "snapshot-id", (json_int_t)m->snapshot_log[i].snapshot_id));
    PUT_LIST(o, "metadata-log", m->metadata_log, m->n_metadata_log,
             json_pack("{s:I,s:s}", "timestamp-ms", (json_int_t)m->metadata_log[i].timestamp_ms,
                       "metadata-file", m->metadata_log[i].metadata_file));
  }
  PUT_LIST(o, "sort-orders", m->sort_orders, m->n_sort_orders,
           hs_ice_sort_order_to_json(&m->sort_orders[i], err));
  if (m->has_default_sort_order_id)
    bad |= set(o, "default-sort-order-id", json_integer(m->default_sort_order_id));
  json_t *refs = json_object();
  bad |= set(o, "refs", refs);
  for (size_t i = 0; refs != NULL && i < m->n_refs; i++)
    bad |= set(refs, m->refs[i].name, ref_to_json(&m->refs[i]));
  bad |= set_opaque(o, "statistics", m->statistics, err);
  bad |= set_opaque(o, "partition-statistics", m->partition_statistics, err);
  bad |= set_opaque(o, "encryption-keys", m->encryption_keys, err);
  if (m->has_next_row_id) bad |= set(o, "next-row-id", json_integer(m->next_row_id));
  if (bad || hs_ice_put_extra(o, &m->extra, err) != HS_OK) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static int dump_cb(const char *buffer, size_t size, void *data) {
  return hs_buf_append(data, buffer, size) ? 0 : -1;
}

static hs_status write_impl(const hs_iceberg_metadata *m, bool fast, hs_buf *out, bool *declined,
                            hs_error *err) {
  json_t *root = metadata_to_json(m, fast, err);
  if (root == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory writing table metadata");
  hs_buf tree;
  hs_buf_init(&tree);
  hs_buf *dst = fast ? &tree : out;
  size_t before = dst->len;
  int rc = json_dump_callback(root, dump_cb, dst, JSON_INDENT(2));
  json_decref(root);
  hs_status st = HS_OK;
  if (rc != 0) {
    dst->len = before;
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory serializing table metadata");
  } else if (fast) {
    st = hs_ice_fast_splice(m, (const char *)tree.data, tree.len, out, declined, err);
  }
  hs_buf_free(&tree);
  return st;
}

hs_status hs_ice_metadata_write_tree(const hs_iceberg_metadata *m, hs_buf *out, hs_error *err) {
  return write_impl(m, false, out, NULL, err);
}

hs_status hs_iceberg_metadata_write(const hs_iceberg_metadata *m, hs_buf *out, hs_error *err) {
  if (m == NULL || out == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "NULL argument");
  for (size_t i = 0; i < m->n_refs; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(m->refs[i].name, m->refs[j].name) == 0)
        return hs_error_set(err, HS_ERR_INVALID_ARG, "duplicate ref name '%.80s'", m->refs[i].name);
  /* The history lists as text (metadata_fast.c), the rest as a tree. */
  bool declined = false;
  hs_status st = write_impl(m, true, out, &declined, err);
  if (st == HS_OK && declined) st = write_impl(m, false, out, NULL, err);
  return st;
}

/* ------------------------------------------------------------ lookups */

const hs_iceberg_schema *hs_iceberg_metadata_schema(const hs_iceberg_metadata *m, int32_t id) {
  for (size_t i = 0; i < m->n_schemas; i++)
    if (m->schemas[i].schema_id == id) return &m->schemas[i];
  return NULL;
}

const hs_iceberg_snapshot *hs_iceberg_metadata_snapshot(const hs_iceberg_metadata *m, int64_t id) {
  for (size_t i = 0; i < m->n_snapshots; i++)
    if (m->snapshots[i].snapshot_id == id) return &m->snapshots[i];
  return NULL;
}

const char *hs_iceberg_metadata_property(const hs_iceberg_metadata *m, const char *key) {
  for (size_t i = 0; i < m->n_properties; i++)
    if (strcmp(m->properties[i].key, key) == 0) return m->properties[i].value;
  return NULL;
}
