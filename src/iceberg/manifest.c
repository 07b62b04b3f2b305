/*
 * manifest.c — Iceberg manifests (spec "Manifests"): the Avro schema of
 * manifest_entry/data_file with every field id, the writer (entries ->
 * Avro container with the spec's header metadata, plus the manifest-list
 * summary: counts and partition field summaries) and the reader (any
 * writer's field order and optional fields, resolved by name; inheritance
 * of snapshot id, sequence numbers and v3 first_row_id).
 *
 * The partition struct (field 102) is derived from the partition spec: one
 * optional field per spec field, named as the spec field, field-id = the
 * partition field id (1000+), Avro type from the transform's result type.
 * The reader takes partition types from the file's own Avro schema, so it
 * needs neither the table schema nor the spec to decode tuples.
 */
#include "manifest.h"

#include <pthread.h>
#include <string.h>

#include "iceberg_internal.h"

/* ------------------------------------------------------ Avro helpers */

hs_avro_value *hs_ice_av_record(hs_arena *arena, const hs_avro_node *node) {
  hs_avro_value *rec = hs_arena_alloc(arena, sizeof *rec);
  if (rec == NULL) return NULL;
  rec->type = HS_AVRO_RECORD;
  if (node->n_fields == 0) return rec;
  hs_avro_value *items = hs_arena_alloc(arena, node->n_fields * sizeof *items);
  if (items == NULL) return NULL;
  for (size_t i = 0; i < node->n_fields; i++) {
    const hs_avro_node *t = node->fields[i].type;
    items[i].type = t->type;
    if (t->type != HS_AVRO_UNION) continue;
    for (size_t b = 0; b < t->n_branches; b++) {
      if (t->branches[b]->type != HS_AVRO_NULL) continue;
      hs_avro_value *nv = hs_arena_alloc(arena, sizeof *nv);
      if (nv == NULL) return NULL;
      nv->type = HS_AVRO_NULL;
      items[i].u.branch.branch = (uint32_t)b;
      items[i].u.branch.value = nv;
      break;
    }
  }
  rec->u.list.items = items;
  rec->u.list.count = node->n_fields;
  return rec;
}

hs_status hs_ice_av_set(hs_arena *arena, const hs_avro_node *node, hs_avro_value *rec,
                        const char *name, hs_avro_value v, hs_error *err) {
  int64_t i = hs_avro_node_field_index(node, name);
  if (i < 0) return hs_error_set(err, HS_ERR_INTERNAL, "manifest schema: no field '%s'", name);
  const hs_avro_node *t = node->fields[i].type;
  if (t->type != HS_AVRO_UNION) {
    rec->u.list.items[i] = v;
    return HS_OK;
  }
  for (size_t b = 0; b < t->n_branches; b++) {
    if (t->branches[b]->type != v.type) continue;
    hs_avro_value *inner = hs_arena_memdup(arena, &v, sizeof v);
    if (inner == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest: out of memory");
    rec->u.list.items[i].type = HS_AVRO_UNION;
    rec->u.list.items[i].u.branch.branch = (uint32_t)b;
    rec->u.list.items[i].u.branch.value = inner;
    return HS_OK;
  }
  return hs_error_set(err, HS_ERR_INTERNAL, "manifest schema: field '%s' has no %s branch", name,
                      hs_avro_type_name(v.type));
}

const hs_avro_value *hs_ice_av_get(const hs_avro_node *node, const hs_avro_value *rec,
                                   const char *name, const hs_avro_node **type_out) {
  if (node == NULL || rec == NULL || node->type != HS_AVRO_RECORD) return NULL;
  int64_t i = hs_avro_node_field_index(node, name);
  if (i < 0 || (size_t)i >= rec->u.list.count) return NULL;
  const hs_avro_node *t = node->fields[i].type;
  const hs_avro_value *v = &rec->u.list.items[i];
  if (v->type == HS_AVRO_UNION) {
    if (v->u.branch.branch >= t->n_branches) return NULL;
    t = t->branches[v->u.branch.branch];
    v = v->u.branch.value;
  }
  if (v == NULL || v->type == HS_AVRO_NULL) return NULL;
  if (type_out != NULL) *type_out = t;
  return v;
}

hs_status hs_ice_av_get_long(const hs_avro_node *node, const hs_avro_value *rec, const char *name,
                             const char *what, int64_t *out, bool *has, hs_error *err) {
  const hs_avro_value *v = hs_ice_av_get(node, rec, name, NULL);
  if (has != NULL) *has = false;
  if (v == NULL) {
    if (has != NULL) return HS_OK;
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: missing %s", what, name);
  }
  if (v->type == HS_AVRO_INT)
    *out = v->u.i32;
  else if (v->type == HS_AVRO_LONG)
    *out = v->u.i64;
  else
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: %s is %s, not an integer", what, name,
                        hs_avro_type_name(v->type));
  if (has != NULL) *has = true;
  return HS_OK;
}

hs_status hs_ice_av_get_bytes(const hs_avro_node *node, const hs_avro_value *rec, const char *name,
                              const char *what, bool required, hs_arena *arena, const uint8_t **out,
                              size_t *len, hs_error *err) {
  const hs_avro_value *v = hs_ice_av_get(node, rec, name, NULL);
  *out = NULL;
  *len = 0;
  if (v == NULL) {
    if (!required) return HS_OK;
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: missing %s", what, name);
  }
  if (v->type != HS_AVRO_STRING && v->type != HS_AVRO_BYTES && v->type != HS_AVRO_FIXED)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: %s is %s, not bytes", what, name,
                        hs_avro_type_name(v->type));
  char *p = hs_arena_strndup(arena, (const char *)v->u.bytes.data, v->u.bytes.len);
  if (p == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
  *out = (const uint8_t *)p;
  *len = v->u.bytes.len;
  return HS_OK;
}

bool hs_ice_parse_i64(const uint8_t *p, size_t len, int64_t *out) {
  size_t i = 0;
  bool neg = false;
  if (len > 0 && p[0] == '-') {
    neg = true;
    i = 1;
  }
  if (i == len || len - i > 19) return false;
  uint64_t v = 0;
  for (; i < len; i++) {
    if (p[i] < '0' || p[i] > '9') return false;
    v = v * 10 + (uint64_t)(p[i] - '0');
  }
  if (v > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) return false;
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return true;
}

/* ---------------------------------------------------- partition types */

hs_status hs_iceberg_partition_types(const hs_iceberg_schema *schema,
                                     const hs_iceberg_partition_spec *spec, hs_arena *arena,
                                     hs_iceberg_type **out, hs_error *err) {
  *out = NULL;
  if (spec->n_fields == 0) return HS_OK;
  hs_iceberg_type *types = hs_arena_alloc(arena, spec->n_fields * sizeof *types);
  if (types == NULL) return hs_error_set(err, HS_ERR_NOMEM, "partition types: out of memory");
  for (size_t i = 0; i < spec->n_fields; i++) {
    const hs_iceberg_partition_field *pf = &spec->fields[i];
    if (pf->transform.kind == HS_ICE_T_UNKNOWN)
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "partition field '%s': unknown transform '%s'",
                          pf->name, pf->transform.text ? pf->transform.text : "?");
    int32_t sid = pf->n_source_ids > 0 ? pf->source_ids[0] : pf->source_id;
    if (pf->n_source_ids > 1)
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "partition field '%s': multi-argument transforms", pf->name);
    const hs_iceberg_type *src = hs_iceberg_schema_find(schema, sid, NULL);
    if (src == NULL)
      return hs_error_set(err, HS_ERR_SCHEMA, "partition field '%s': source id %d not in schema",
                          pf->name, (int)sid);
    hs_status st = hs_iceberg_transform_result_type(&pf->transform, src, &types[i], err);
    if (st != HS_OK) {
      hs_error_prefix(err, "partition field '%s': ", pf->name);
      return st;
    }
  }
  *out = types;
  return HS_OK;
}

/* Bytes of a decimal(P, S) fixed: the fewest that hold 10^P - 1 signed. */
static int32_t decimal_fixed_size(int32_t precision) {
  static const int32_t max_prec[17] = {0,  2,  4,  6,  9,  11, 14, 16, 18,
                                       21, 23, 26, 28, 31, 33, 35, 38};
  for (int32_t n = 1; n <= 16; n++)
    if (precision <= max_prec[n]) return n;
  return 16;
}

/* Append the Avro type JSON of partition field `fid` of Iceberg type `t`. */
static hs_status partition_avro_type(const hs_iceberg_type *t, int32_t fid, hs_buf *b,
                                     hs_error *err) {
  bool ok;
  switch (t->id) {
  case HS_ICE_BOOLEAN: ok = hs_buf_printf(b, "\"boolean\""); break;
  case HS_ICE_INT: ok = hs_buf_printf(b, "\"int\""); break;
  case HS_ICE_LONG: ok = hs_buf_printf(b, "\"long\""); break;
  case HS_ICE_FLOAT: ok = hs_buf_printf(b, "\"float\""); break;
  case HS_ICE_DOUBLE: ok = hs_buf_printf(b, "\"double\""); break;
  case HS_ICE_DATE: ok = hs_buf_printf(b, "{\"type\":\"int\",\"logicalType\":\"date\"}"); break;
  case HS_ICE_TIME:
    ok = hs_buf_printf(b, "{\"type\":\"long\",\"logicalType\":\"time-micros\"}");
    break;
  case HS_ICE_TIMESTAMP:
  case HS_ICE_TIMESTAMPTZ:
    ok = hs_buf_printf(b,
                       "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\","
                       "\"adjust-to-utc\":%s}",
                       t->id == HS_ICE_TIMESTAMPTZ ? "true" : "false");
    break;
  case HS_ICE_TIMESTAMP_NS:
  case HS_ICE_TIMESTAMPTZ_NS:
    ok = hs_buf_printf(b,
                       "{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\","
                       "\"adjust-to-utc\":%s}",
                       t->id == HS_ICE_TIMESTAMPTZ_NS ? "true" : "false");
    break;
  case HS_ICE_STRING: ok = hs_buf_printf(b, "\"string\""); break;
  case HS_ICE_BINARY: ok = hs_buf_printf(b, "\"bytes\""); break;
  case HS_ICE_UUID:
    ok = hs_buf_printf(b,
                       "{\"type\":\"fixed\",\"name\":\"uuid_fixed_%d\",\"size\":16,"
                       "\"logicalType\":\"uuid\"}",
                       (int)fid);
    break;
  case HS_ICE_FIXED:
    ok = hs_buf_printf(b, "{\"type\":\"fixed\",\"name\":\"fixed_%d\",\"size\":%d}", (int)fid,
                       (int)t->length);
    break;
  case HS_ICE_DECIMAL:
    ok = hs_buf_printf(b,
                       "{\"type\":\"fixed\",\"name\":\"decimal_%d_%d_f%d\",\"size\":%d,"
                       "\"logicalType\":\"decimal\",\"precision\":%d,\"scale\":%d}",
                       (int)t->precision, (int)t->scale, (int)fid,
                       (int)decimal_fixed_size(t->precision), (int)t->precision, (int)t->scale);
    break;
  default:
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "partition type %s has no Avro form",
                        hs_iceberg_type_name(t->id));
  }
  return ok ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "manifest schema: out of memory");
}

/* Iceberg value -> Avro value of the partition field type. */
static hs_status partition_to_avro(const hs_iceberg_type *t, const hs_iceberg_value *v,
                                   hs_arena *arena, hs_avro_value *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  if (v->is_null) {
    out->type = HS_AVRO_NULL;
    return HS_OK;
  }
  switch (t->id) {
  case HS_ICE_BOOLEAN: out->type = HS_AVRO_BOOLEAN, out->u.boolean = v->b; break;
  case HS_ICE_INT:
  case HS_ICE_DATE:
    if (v->i64 < INT32_MIN || v->i64 > INT32_MAX)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "partition value %lld out of int range",
                          (long long)v->i64);
    out->type = HS_AVRO_INT, out->u.i32 = (int32_t)v->i64;
    break;
  case HS_ICE_LONG:
  case HS_ICE_TIME:
  case HS_ICE_TIMESTAMP:
  case HS_ICE_TIMESTAMPTZ:
  case HS_ICE_TIMESTAMP_NS:
  case HS_ICE_TIMESTAMPTZ_NS: out->type = HS_AVRO_LONG, out->u.i64 = v->i64; break;
  case HS_ICE_FLOAT: out->type = HS_AVRO_FLOAT, out->u.f32 = (float)v->f64; break;
  case HS_ICE_DOUBLE: out->type = HS_AVRO_DOUBLE, out->u.f64 = v->f64; break;
  case HS_ICE_STRING:
  case HS_ICE_BINARY:
  case HS_ICE_UUID:
  case HS_ICE_FIXED: {
    out->type = t->id == HS_ICE_STRING   ? HS_AVRO_STRING
                : t->id == HS_ICE_BINARY ? HS_AVRO_BYTES
                                         : HS_AVRO_FIXED;
    size_t want = t->id == HS_ICE_UUID ? 16 : (size_t)t->length;
    if (out->type == HS_AVRO_FIXED && v->len != want)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "partition value of %zu bytes for a %zu-byte type", v->len, want);
    out->u.bytes.data = v->len ? v->bytes : (const uint8_t *)"";
    out->u.bytes.len = v->len;
    break;
  }
  case HS_ICE_DECIMAL: {
    int32_t n = decimal_fixed_size(t->precision);
    uint8_t *p = hs_arena_alloc(arena, 16);
    if (p == NULL) return hs_error_set(err, HS_ERR_NOMEM, "partition: out of memory");
    uint8_t full[16];
    for (int i = 0; i < 8; i++) {
      full[7 - i] = (uint8_t)((uint64_t)v->dec_hi >> (8 * i));
      full[15 - i] = (uint8_t)(v->dec_lo >> (8 * i));
    }
    memcpy(p, full + 16 - n, (size_t)n);
    out->type = HS_AVRO_FIXED;
    out->u.bytes.data = p;
    out->u.bytes.len = (size_t)n;
    break;
  }
  default:
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "partition type %s", hs_iceberg_type_name(t->id));
  }
  return HS_OK;
}

/* ----------------------------------------------------- entry schema */

#define OPT(name, type, id) \
  "{\"name\":\"" name "\",\"type\":[\"null\"," type "],\"default\":null,\"field-id\":" #id "}"
#define REQ(name, type, id) "{\"name\":\"" name "\",\"type\":" type ",\"field-id\":" #id "}"
#define MAP(name, id, kid, vid, vtype)                                                       \
  OPT(name,                                                                                  \
      "{\"type\":\"array\",\"logicalType\":\"map\",\"items\":{\"type\":\"record\",\"name\":" \
      "\"k" #kid "_v" #vid                                                                   \
      "\",\"fields\":[" REQ("key", "\"int\"", kid) "," REQ("value", vtype, vid) "]}}",       \
      id)

static const char DATA_FILE_HEAD[] =
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":[" REQ("status", "\"int\"", 0) "," OPT(
        "snapshot_id", "\"long\"", 1) "," OPT("sequence_number", "\"long\"",
                                              3) "," OPT("file_sequence_number", "\"long\"", 4) ","
                                                 "{\"name\":\"data_file\",\"field-id\":2,\"type\":"
                                                 "{\"type\":\"record\",\"name\":\"r2\",\"fields\":"
                                                 "[" REQ("content", "\"int\"", 134) "," REQ(
                                                     "file_path", "\"string\"",
                                                     100) "," REQ("file_format", "\"string\"",
                                                                  101) ",{\"name\":\"partition\","
                                                                       "\"field-id\":102,"
                                                                       "\"type\":";

static const char DATA_FILE_TAIL[] =
    "}," REQ("record_count", "\"long\"", 103) "," REQ(
        "file_size_in_bytes", "\"long\"",
        104) "," MAP("column_sizes", 108, 117, 118, "\"long\"") "," MAP("value_counts", 109, 119, 120, "\"long\"") "," MAP("null_value_counts", 110, 121, 122, "\"long\"") "," MAP("nan_value_counts", 137, 138, 139, "\"long\"") "," MAP("lower_bounds", 125, 126, 127, "\"bytes\"") "," MAP("upper_bounds", 128, 129, 130, "\"bytes\"") "," OPT("key_metadata", "\"bytes\"", 131) "," OPT("split_offsets", "{\"type\":\"array\",\"items\":\"long\",\"element-id\":133}", 132) "," OPT("equality_ids", "{\"type\":\"array\",\"items\":\"int\",\"element-id\":136}", 135) "," OPT("sort_order_id", "\"int\"", 140);

static const char DATA_FILE_V3[] = "," OPT("first_row_id", "\"long\"", 142) "," OPT(
    "referenced_data_file", "\"string\"",
    143) "," OPT("content_offset", "\"long\"", 144) "," OPT("content_size_in_bytes", "\"long\"",
                                                            145);

/* Parsed manifest_entry and manifest_file schemas, shared by every writer
 * of the process and keyed by their JSON text: a table's appends all use
 * the same ones, and parsing them was ~13% of a small append's
 * instructions. At most
 * SCHEMA_CACHE_MAX entries, never evicted or freed (a writer may hold one
 * while another thread looks up), so a pointer handed out stays valid; past
 * the limit each writer parses its own. Parsed schemas are read-only. */
#define SCHEMA_CACHE_MAX 32
static struct {
  char *json;
  size_t len;
  hs_avro_schema *schema;
  char *writer_json; /* hs_avro_schema_to_json(schema): a writer's header */
} schema_cache[SCHEMA_CACHE_MAX];
static size_t schema_cache_n;
static pthread_mutex_t schema_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static hs_avro_schema *schema_cache_find(const hs_buf *b, const char **writer_json) {
  hs_avro_schema *found = NULL;
  pthread_mutex_lock(&schema_cache_lock);
  for (size_t i = 0; i < schema_cache_n && found == NULL; i++)
    if (schema_cache[i].len == b->len && memcmp(schema_cache[i].json, b->data, b->len) == 0) {
      found = schema_cache[i].schema;
      *writer_json = schema_cache[i].writer_json;
    }
  pthread_mutex_unlock(&schema_cache_lock);
  return found;
}

/* Keep `schema` (parsed from `b`) in the cache: true when the cache now
 * owns it, false when it is full (the caller keeps ownership). */
static bool schema_cache_add(const hs_buf *b, hs_avro_schema *schema, const char **writer_json) {
  bool added = false;
  char *wj = NULL; /* serialized once here, not by every writer's header */
  hs_error ignored;
  memset(&ignored, 0, sizeof ignored);
  if (hs_avro_schema_to_json(schema, &wj, &ignored) != HS_OK) wj = NULL;
  pthread_mutex_lock(&schema_cache_lock);
  if (schema_cache_n < SCHEMA_CACHE_MAX) {
    char *copy = hs_malloc(b->len ? b->len : 1);
    if (copy != NULL) {
      if (b->len) memcpy(copy, b->data, b->len);
      schema_cache[schema_cache_n].json = copy;
      schema_cache[schema_cache_n].len = b->len;
      schema_cache[schema_cache_n].writer_json = wj;
      schema_cache[schema_cache_n++].schema = schema;
      *writer_json = wj;
      wj = NULL;
      added = true;
    }
  }
  pthread_mutex_unlock(&schema_cache_lock);
  hs_free(wj);
  return added;
}

hs_status hs_ice_avro_schema_cached(const hs_buf *json, hs_avro_schema **out, bool *shared,
                                    const char **writer_json, hs_error *err) {
  *shared = false;
  const char *wj = NULL;
  if ((*out = schema_cache_find(json, &wj)) != NULL) {
    *shared = true;
    if (writer_json != NULL) *writer_json = wj;
    return HS_OK;
  }
  hs_status st = hs_avro_schema_parse((const char *)json->data, json->len, out, err);
  if (st == HS_OK) *shared = schema_cache_add(json, *out, &wj);
  if (writer_json != NULL) *writer_json = *shared ? wj : NULL;
  return st;
}

/* Build the manifest_entry Avro schema for `types` (one per spec field).
 * *shared: *out belongs to the cache above (do not free it). */
static hs_status entry_schema_build(int32_t format_version, const hs_iceberg_partition_spec *spec,
                                    const hs_iceberg_type *types, hs_avro_schema **out,
                                    bool *shared, const char **writer_json, hs_error *err) {
  *shared = false;
  hs_buf b;
  hs_buf_init(&b);
  hs_status st = HS_OK;
  bool ok = hs_buf_append(&b, DATA_FILE_HEAD, sizeof DATA_FILE_HEAD - 1) &&
            hs_buf_printf(&b, "{\"type\":\"record\",\"name\":\"r102\",\"fields\":[");
  for (size_t i = 0; ok && i < spec->n_fields && st == HS_OK; i++) {
    const hs_iceberg_partition_field *pf = &spec->fields[i];
    json_t *name = json_string(pf->name ? pf->name : "");
    char *qs = name ? json_dumps(name, JSON_ENCODE_ANY) : NULL;
    json_decref(name);
    if (qs == NULL) {
      ok = false;
      break;
    }
    ok = hs_buf_printf(&b, "%s{\"name\":%s,\"type\":[\"null\",", i ? "," : "", qs);
    free(qs); /* jansson's allocation */
    if (ok) st = partition_avro_type(&types[i], pf->field_id, &b, err);
    if (st == HS_OK)
      ok = hs_buf_printf(&b, "],\"default\":null,\"field-id\":%d}", (int)pf->field_id);
  }
  if (st == HS_OK && ok)
    ok = hs_buf_printf(&b, "]}") && hs_buf_append(&b, DATA_FILE_TAIL, sizeof DATA_FILE_TAIL - 1) &&
         (format_version < 3 || hs_buf_append(&b, DATA_FILE_V3, sizeof DATA_FILE_V3 - 1)) &&
         hs_buf_printf(&b, "]}}]}");
  if (st == HS_OK && !ok) st = hs_error_set(err, HS_ERR_NOMEM, "manifest schema: out of memory");
  if (st == HS_OK) st = hs_ice_avro_schema_cached(&b, out, shared, writer_json, err);
  hs_buf_free(&b);
  return st;
}

/* ------------------------------------------------------------ writer */

/* Running summary of one partition field. */
typedef struct part_summary {
  bool contains_null, contains_nan, has_bounds;
  hs_iceberg_value lo, hi; /* bytes owned by the writer's arena */
} part_summary;

struct hs_iceberg_manifest_writer {
  hs_iceberg_manifest_writer_options opts;
  hs_avro_schema *schema;
  bool schema_shared;      /* schema is the cache's */
  const char *schema_json; /* its JSON, the cache's (NULL: the writer serializes it) */
  hs_avro_writer *avro;
  hs_buf *buf;
  hs_sink *sink;
  size_t start;     /* buf->len or sink offset at open */
  hs_arena keep;    /* summary bounds */
  hs_arena scratch; /* one entry's Avro values */
  hs_iceberg_type *types;
  part_summary *parts;
  int64_t counts_files[3], counts_rows[3]; /* by status */
  int64_t min_seq;
  bool has_min_seq;
};

void hs_iceberg_manifest_writer_free(hs_iceberg_manifest_writer *w) {
  if (w == NULL) return;
  hs_avro_writer_free(w->avro);
  if (!w->schema_shared) hs_avro_schema_free(w->schema);
  hs_arena_reset(&w->keep);
  hs_arena_reset(&w->scratch);
  hs_free(w);
}

static hs_status put_meta_json(json_t *j, const char *key, hs_avro_meta_entry *m, hs_arena *arena,
                               hs_error *err) {
  char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  json_decref(j);
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest metadata '%s'", key);
  char *copy = hs_arena_strndup(arena, s, strlen(s));
  free(s); /* jansson's allocation */
  if (copy == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest metadata '%s'", key);
  m->key = key;
  m->value = (const uint8_t *)copy;
  m->len = strlen(copy);
  return HS_OK;
}

static hs_status put_meta_int(int64_t v, const char *key, hs_avro_meta_entry *m, hs_arena *arena,
                              hs_error *err) {
  char tmp[32];
  int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
  char *copy = hs_arena_strndup(arena, tmp, (size_t)n);
  if (copy == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest metadata '%s'", key);
  m->key = key;
  m->value = (const uint8_t *)copy;
  m->len = (size_t)n;
  return HS_OK;
}

hs_status hs_iceberg_manifest_writer_open(const hs_iceberg_manifest_writer_options *opts,
                                          hs_buf *buf, hs_sink *sink,
                                          hs_iceberg_manifest_writer **out, hs_error *err) {
  *out = NULL;
  if (opts == NULL || opts->schema == NULL || opts->spec == NULL || (buf == NULL) == (sink == NULL))
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "manifest writer: schema, spec and one output needed");
  if (opts->format_version < 2 || opts->format_version > 3)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "manifest writer: format version %d",
                        (int)opts->format_version);
  /* v2+ requires a field-id on every partition field; a v1 spec without
   * them would give a manifest no reader (ours included) accepts. */
  for (size_t i = 0; i < opts->spec->n_fields; i++)
    if (!opts->spec->fields[i].has_field_id)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "manifest writer: partition field %zu ('%s') of spec %d has no "
                          "field-id, which format v%d requires",
                          i, opts->spec->fields[i].name ? opts->spec->fields[i].name : "",
                          (int)opts->spec->spec_id, (int)opts->format_version);
  hs_iceberg_manifest_writer *w = hs_calloc(1, sizeof *w);
  if (w == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest writer: out of memory");
  w->opts = *opts;
  w->buf = buf;
  w->sink = sink;
  w->start = buf ? buf->len : (size_t)hs_sink_offset(sink);
  hs_arena_init(&w->keep);
  hs_arena_init(&w->scratch);
  hs_status st = hs_iceberg_partition_types(opts->schema, opts->spec, &w->keep, &w->types, err);
  if (st == HS_OK && opts->spec->n_fields > 0) {
    w->parts = hs_arena_alloc(&w->keep, opts->spec->n_fields * sizeof *w->parts);
    if (w->parts == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "manifest writer: out of memory");
  }
  if (st == HS_OK)
    st = entry_schema_build(opts->format_version, opts->spec, w->types, &w->schema,
                            &w->schema_shared, &w->schema_json, err);
  hs_avro_meta_entry meta[6];
  if (st == HS_OK)
    st = put_meta_json(hs_ice_schema_to_json(opts->schema, err), "schema", &meta[0], &w->scratch,
                       err);
  if (st == HS_OK) {
    json_t *spec = hs_ice_spec_to_json(opts->spec, err);
    json_t *fields = spec ? json_incref(json_object_get(spec, "fields")) : NULL;
    json_decref(spec);
    st = put_meta_json(fields, "partition-spec", &meta[1], &w->scratch, err);
  }
  if (st == HS_OK)
    st = put_meta_int(opts->schema->schema_id, "schema-id", &meta[2], &w->scratch, err);
  if (st == HS_OK)
    st = put_meta_int(opts->spec->spec_id, "partition-spec-id", &meta[3], &w->scratch, err);
  if (st == HS_OK)
    st = put_meta_int(opts->format_version, "format-version", &meta[4], &w->scratch, err);
  if (st == HS_OK) {
    const char *c = opts->content == HS_ICE_MANIFEST_DELETES ? "deletes" : "data";
    meta[5] = (hs_avro_meta_entry){"content", (const uint8_t *)c, strlen(c)};
    hs_avro_writer_options ao = {0};
    ao.codec = HS_AVRO_CODEC_DEFLATE;
    ao.deflate_level = 1; /* Z_BEST_SPEED: lists and manifests are rewritten per commit */
    ao.meta = meta;
    ao.n_meta = 6;
    ao.sync = opts->sync;
    ao.schema_json = w->schema_json;
    st = hs_avro_writer_open(w->schema, &ao, buf, sink, &w->avro, err);
  }
  hs_arena_reset(&w->scratch);
  if (st != HS_OK) {
    hs_error_prefix(err, "manifest writer: ");
    hs_iceberg_manifest_writer_free(w);
    return st;
  }
  *out = w;
  return HS_OK;
}

static hs_status summary_update(hs_iceberg_manifest_writer *w, size_t i, const hs_iceberg_value *v,
                                hs_error *err) {
  part_summary *s = &w->parts[i];
  const hs_iceberg_type *t = &w->types[i];
  if (v->is_null) {
    s->contains_null = true;
    return HS_OK;
  }
  if ((t->id == HS_ICE_FLOAT || t->id == HS_ICE_DOUBLE) && v->f64 != v->f64) {
    s->contains_nan = true;
    return HS_OK;
  }
  bool lo = !s->has_bounds || hs_iceberg_value_cmp(t, v, &s->lo) < 0;
  bool hi = !s->has_bounds || hs_iceberg_value_cmp(t, v, &s->hi) > 0;
  if (!lo && !hi) return HS_OK;
  hs_iceberg_value copy = *v;
  if (v->len > 0) {
    copy.bytes = hs_arena_memdup(&w->keep, v->bytes, v->len);
    if (copy.bytes == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest: out of memory");
  }
  if (lo) s->lo = copy;
  if (hi) s->hi = copy;
  s->has_bounds = true;
  return HS_OK;
}

/* Avro array of {key, value} records for one metric; null when no metric
 * carries it. `which`: 0 sizes, 1 values, 2 nulls, 3 nans, 4 lower, 5 upper. */
static hs_status metric_map(hs_iceberg_manifest_writer *w, const hs_avro_node *df_node,
                            hs_avro_value *df, const hs_iceberg_data_file *f, const char *name,
                            int which, hs_error *err) {
  size_t n = 0;
  for (size_t i = 0; i < f->n_metrics; i++) {
    const hs_iceberg_column_metrics *m = &f->metrics[i];
    bool has = which == 0   ? m->has_column_size
               : which == 1 ? m->has_value_count
               : which == 2 ? m->has_null_count
               : which == 3 ? m->has_nan_count
               : which == 4 ? m->lower != NULL
                            : m->upper != NULL;
    n += has;
  }
  if (n == 0) return HS_OK;
  int64_t fi = hs_avro_node_field_index(df_node, name);
  const hs_avro_node *u = df_node->fields[fi].type, *arr = u->branches[1], *kv = arr->items;
  hs_avro_value *items = hs_arena_alloc(&w->scratch, n * sizeof *items);
  if (items == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest: out of memory");
  size_t k = 0;
  for (size_t i = 0; i < f->n_metrics; i++) {
    const hs_iceberg_column_metrics *m = &f->metrics[i];
    hs_avro_value val = {0};
    bool has = true;
    switch (which) {
    case 0: has = m->has_column_size, val.type = HS_AVRO_LONG, val.u.i64 = m->column_size; break;
    case 1: has = m->has_value_count, val.type = HS_AVRO_LONG, val.u.i64 = m->value_count; break;
    case 2: has = m->has_null_count, val.type = HS_AVRO_LONG, val.u.i64 = m->null_count; break;
    case 3: has = m->has_nan_count, val.type = HS_AVRO_LONG, val.u.i64 = m->nan_count; break;
    default: {
      const uint8_t *p = which == 4 ? m->lower : m->upper;
      has = p != NULL;
      val.type = HS_AVRO_BYTES;
      val.u.bytes.data = p;
      val.u.bytes.len = which == 4 ? m->lower_len : m->upper_len;
    }
    }
    if (!has) continue;
    if (i > 0 && m->field_id <= f->metrics[i - 1].field_id)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "data file %s: metrics not sorted by field id",
                          f->file_path);
    hs_avro_value *kvs = hs_arena_alloc(&w->scratch, 2 * sizeof *kvs);
    if (kvs == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest: out of memory");
    kvs[0].type = HS_AVRO_INT;
    kvs[0].u.i32 = m->field_id;
    kvs[1] = val;
    items[k].type = HS_AVRO_RECORD;
    items[k].u.list.items = kvs;
    items[k].u.list.count = 2;
    k++;
  }
  (void)kv;
  hs_avro_value a = {.type = HS_AVRO_ARRAY};
  a.u.list.items = items;
  a.u.list.count = k;
  return hs_ice_av_set(&w->scratch, df_node, df, name, a, err);
}

#define LONGV(x) ((hs_avro_value){.type = HS_AVRO_LONG, .u.i64 = (x)})
#define INTV(x) ((hs_avro_value){.type = HS_AVRO_INT, .u.i32 = (x)})

static hs_avro_value strv(const char *s, hs_avro_type t) {
  hs_avro_value v = {.type = t};
  v.u.bytes.data = (const uint8_t *)(s ? s : "");
  v.u.bytes.len = s ? strlen(s) : 0;
  return v;
}

static hs_status entry_build(hs_iceberg_manifest_writer *w, const hs_iceberg_manifest_entry *e,
                             hs_avro_value **out, hs_error *err) {
  const hs_iceberg_data_file *f = &e->data_file;
  hs_arena *a = &w->scratch;
  const hs_avro_node *root = hs_avro_schema_root(w->schema);
  const hs_avro_node *df_node = root->fields[hs_avro_node_field_index(root, "data_file")].type;
  const hs_avro_node *p_node = df_node->fields[hs_avro_node_field_index(df_node, "partition")].type;
  hs_avro_value *rec = hs_ice_av_record(a, root), *df = hs_ice_av_record(a, df_node),
                *part = hs_ice_av_record(a, p_node);
  if (rec == NULL || df == NULL || part == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "manifest: out of memory");
  size_t np = w->opts.spec->n_fields;
  if (f->n_partition != np)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "data file %s: %zu partition values for %zu fields", f->file_path,
                        f->n_partition, np);
  hs_status st = HS_OK;
  for (size_t i = 0; i < np && st == HS_OK; i++) {
    hs_avro_value v;
    st = partition_to_avro(&w->types[i], &f->partition[i], a, &v, err);
    if (st == HS_OK && v.type != HS_AVRO_NULL)
      st = hs_ice_av_set(a, p_node, part, p_node->fields[i].name, v, err);
    if (st != HS_OK) hs_error_prefix(err, "data file %s: partition field %zu: ", f->file_path, i);
  }
  if (st != HS_OK) return st;
#define SET(node, r, name, v)                                      \
  do {                                                             \
    if (st == HS_OK) st = hs_ice_av_set(a, node, r, name, v, err); \
  } while (0)
  SET(root, rec, "status", INTV((int32_t)e->status));
  if (e->has_snapshot_id) SET(root, rec, "snapshot_id", LONGV(e->snapshot_id));
  if (e->has_sequence_number) SET(root, rec, "sequence_number", LONGV(e->sequence_number));
  if (e->has_file_sequence_number)
    SET(root, rec, "file_sequence_number", LONGV(e->file_sequence_number));
  SET(df_node, df, "content", INTV((int32_t)f->content));
  SET(df_node, df, "file_path", strv(f->file_path, HS_AVRO_STRING));
  SET(df_node, df, "file_format",
      strv(f->file_format ? f->file_format : "PARQUET", HS_AVRO_STRING));
  SET(df_node, df, "partition", *part);
  SET(df_node, df, "record_count", LONGV(f->record_count));
  SET(df_node, df, "file_size_in_bytes", LONGV(f->file_size_in_bytes));
  static const char *const maps[6] = {"column_sizes",     "value_counts", "null_value_counts",
                                      "nan_value_counts", "lower_bounds", "upper_bounds"};
  for (int m = 0; m < 6 && st == HS_OK; m++) st = metric_map(w, df_node, df, f, maps[m], m, err);
  if (f->key_metadata != NULL) {
    hs_avro_value v = {.type = HS_AVRO_BYTES};
    v.u.bytes.data = f->key_metadata;
    v.u.bytes.len = f->key_metadata_len;
    SET(df_node, df, "key_metadata", v);
  }
  if (f->has_split_offsets) {
    hs_avro_value v = {.type = HS_AVRO_ARRAY};
    hs_avro_value *it =
        f->n_split_offsets ? hs_arena_alloc(a, f->n_split_offsets * sizeof *it) : NULL;
    if (f->n_split_offsets && it == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest: OOM");
    for (size_t i = 0; i < f->n_split_offsets; i++) it[i] = LONGV(f->split_offsets[i]);
    v.u.list.items = it;
    v.u.list.count = f->n_split_offsets;
    SET(df_node, df, "split_offsets", v);
  }
  if (f->has_equality_ids) {
    hs_avro_value v = {.type = HS_AVRO_ARRAY};
    hs_avro_value *it =
        f->n_equality_ids ? hs_arena_alloc(a, f->n_equality_ids * sizeof *it) : NULL;
    if (f->n_equality_ids && it == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest: OOM");
    for (size_t i = 0; i < f->n_equality_ids; i++) it[i] = INTV(f->equality_ids[i]);
    v.u.list.items = it;
    v.u.list.count = f->n_equality_ids;
    SET(df_node, df, "equality_ids", v);
  }
  if (f->has_sort_order_id) SET(df_node, df, "sort_order_id", INTV(f->sort_order_id));
  if (w->opts.format_version >= 3) {
    if (f->has_first_row_id) SET(df_node, df, "first_row_id", LONGV(f->first_row_id));
    if (f->referenced_data_file)
      SET(df_node, df, "referenced_data_file", strv(f->referenced_data_file, HS_AVRO_STRING));
    if (f->has_content_offset) SET(df_node, df, "content_offset", LONGV(f->content_offset));
    if (f->has_content_size_in_bytes)
      SET(df_node, df, "content_size_in_bytes", LONGV(f->content_size_in_bytes));
  }
  SET(root, rec, "data_file", *df);
#undef SET
  *out = rec;
  return st;
}

hs_status hs_iceberg_manifest_writer_add(hs_iceberg_manifest_writer *w,
                                         const hs_iceberg_manifest_entry *e, hs_error *err) {
  if (e->status > HS_ICE_ENTRY_DELETED)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "manifest entry: status %d", (int)e->status);
  if (e->data_file.file_path == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "manifest entry: no file_path");
  hs_avro_value *rec = NULL;
  hs_status st = entry_build(w, e, &rec, err);
  if (st == HS_OK) st = hs_avro_writer_append(w->avro, rec, err);
  for (size_t i = 0; st == HS_OK && i < w->opts.spec->n_fields; i++)
    st = summary_update(w, i, &e->data_file.partition[i], err);
  hs_arena_reset(&w->scratch);
  if (st != HS_OK) return st;
  w->counts_files[e->status]++;
  w->counts_rows[e->status] += e->data_file.record_count;
  if (e->status != HS_ICE_ENTRY_DELETED) {
    int64_t seq = e->has_sequence_number ? e->sequence_number : w->opts.sequence_number;
    if (!w->has_min_seq || seq < w->min_seq) w->min_seq = seq;
    w->has_min_seq = true;
  }
  return HS_OK;
}

hs_status hs_iceberg_manifest_writer_close(hs_iceberg_manifest_writer *w,
                                           hs_iceberg_manifest_file *summary, hs_arena *arena,
                                           hs_error *err) {
  hs_status st = hs_avro_writer_close(w->avro, err);
  w->avro = NULL;
  if (st == HS_OK && summary != NULL) {
    memset(summary, 0, sizeof *summary);
    size_t end = w->buf ? w->buf->len : (size_t)hs_sink_offset(w->sink);
    summary->manifest_length = (int64_t)(end - w->start);
    summary->partition_spec_id = w->opts.spec->spec_id;
    summary->content = w->opts.content;
    summary->sequence_number = w->opts.sequence_number;
    summary->min_sequence_number = w->has_min_seq ? w->min_seq : w->opts.sequence_number;
    summary->added_snapshot_id = w->opts.snapshot_id;
    summary->added_files_count = (int32_t)w->counts_files[HS_ICE_ENTRY_ADDED];
    summary->existing_files_count = (int32_t)w->counts_files[HS_ICE_ENTRY_EXISTING];
    summary->deleted_files_count = (int32_t)w->counts_files[HS_ICE_ENTRY_DELETED];
    summary->added_rows_count = w->counts_rows[HS_ICE_ENTRY_ADDED];
    summary->existing_rows_count = w->counts_rows[HS_ICE_ENTRY_EXISTING];
    summary->deleted_rows_count = w->counts_rows[HS_ICE_ENTRY_DELETED];
    size_t np = w->opts.spec->n_fields;
    summary->has_partitions = true;
    summary->n_partitions = np;
    if (np > 0) {
      summary->partitions = hs_arena_alloc(arena, np * sizeof *summary->partitions);
      if (summary->partitions == NULL)
        st = hs_error_set(err, HS_ERR_NOMEM, "manifest summary: out of memory");
    }
    for (size_t i = 0; st == HS_OK && i < np; i++) {
      const part_summary *s = &w->parts[i];
      hs_iceberg_field_summary *fs = &summary->partitions[i];
      hs_iceberg_type_id id = w->types[i].id;
      fs->contains_null = s->contains_null;
      fs->has_contains_nan = id == HS_ICE_FLOAT || id == HS_ICE_DOUBLE;
      fs->contains_nan = s->contains_nan;
      if (!s->has_bounds) continue;
      for (int k = 0; k < 2 && st == HS_OK; k++) {
        hs_buf b;
        hs_buf_init(&b);
        st = hs_iceberg_value_to_bytes(&w->types[i], k ? &s->hi : &s->lo, &b, err);
        uint8_t *p = st == HS_OK ? hs_arena_memdup(arena, b.len ? b.data : (const uint8_t *)"",
                                                   b.len ? b.len : 1)
                                 : NULL;
        if (st == HS_OK && p == NULL)
          st = hs_error_set(err, HS_ERR_NOMEM, "manifest summary: out of memory");
        if (st == HS_OK && k == 0) fs->lower_bound = p, fs->lower_len = b.len;
        if (st == HS_OK && k == 1) fs->upper_bound = p, fs->upper_len = b.len;
        hs_buf_free(&b);
      }
    }
  }
  hs_iceberg_manifest_writer_free(w);
  return st;
}

/* ------------------------------------------------------------ reader */

/* Iceberg type of a partition field from its Avro type (nullable union
 * unwrapped). */
static hs_status avro_partition_type(const hs_avro_node *n, hs_iceberg_type *t, hs_error *err) {
  memset(t, 0, sizeof *t);
  if (n->type == HS_AVRO_UNION) {
    const hs_avro_node *inner = NULL;
    for (size_t b = 0; b < n->n_branches; b++)
      if (n->branches[b]->type != HS_AVRO_NULL) inner = n->branches[b];
    if (inner == NULL) {
      t->id = HS_ICE_UNKNOWN;
      return HS_OK;
    }
    n = inner;
  }
  bool utc = false;
  json_t *adj = n->attrs ? json_object_get(n->attrs, "adjust-to-utc") : NULL;
  if (adj != NULL) utc = json_is_true(adj);
  const char *ln = n->logical_name ? n->logical_name : "";
  switch (n->type) {
  case HS_AVRO_NULL: t->id = HS_ICE_UNKNOWN; break;
  case HS_AVRO_BOOLEAN: t->id = HS_ICE_BOOLEAN; break;
  case HS_AVRO_INT: t->id = n->logical == HS_AVRO_LOGICAL_DATE ? HS_ICE_DATE : HS_ICE_INT; break;
  case HS_AVRO_LONG:
    if (n->logical == HS_AVRO_LOGICAL_TIME_MICROS)
      t->id = HS_ICE_TIME;
    else if (n->logical == HS_AVRO_LOGICAL_TIMESTAMP_MICROS)
      t->id = utc ? HS_ICE_TIMESTAMPTZ : HS_ICE_TIMESTAMP;
    else if (strcmp(ln, "timestamp-nanos") == 0)
      t->id = utc ? HS_ICE_TIMESTAMPTZ_NS : HS_ICE_TIMESTAMP_NS;
    else
      t->id = HS_ICE_LONG;
    break;
  case HS_AVRO_FLOAT: t->id = HS_ICE_FLOAT; break;
  case HS_AVRO_DOUBLE: t->id = HS_ICE_DOUBLE; break;
  case HS_AVRO_STRING:
    t->id = n->logical == HS_AVRO_LOGICAL_UUID ? HS_ICE_UUID : HS_ICE_STRING;
    break;
  case HS_AVRO_BYTES:
  case HS_AVRO_FIXED:
    if (n->logical == HS_AVRO_LOGICAL_DECIMAL) {
      t->id = HS_ICE_DECIMAL;
      t->precision = n->precision;
      t->scale = n->scale;
    } else if (n->type == HS_AVRO_FIXED && n->logical == HS_AVRO_LOGICAL_UUID &&
               n->fixed_size == 16) {
      t->id = HS_ICE_UUID;
    } else if (n->type == HS_AVRO_FIXED) {
      t->id = HS_ICE_FIXED;
      t->length = (int32_t)n->fixed_size;
    } else {
      t->id = HS_ICE_BINARY;
    }
    break;
  default:
    return hs_error_set(err, HS_ERR_CORRUPT, "partition field of Avro type %s",
                        hs_avro_type_name(n->type));
  }
  return HS_OK;
}

static hs_status avro_to_partition_value(const hs_iceberg_type *t, const hs_avro_value *v,
                                         hs_arena *arena, hs_iceberg_value *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  if (v == NULL || v->type == HS_AVRO_NULL) {
    out->is_null = true;
    return HS_OK;
  }
  switch (v->type) {
  case HS_AVRO_BOOLEAN: out->b = v->u.boolean; break;
  case HS_AVRO_INT: out->i64 = v->u.i32; break;
  case HS_AVRO_LONG: out->i64 = v->u.i64; break;
  case HS_AVRO_FLOAT: out->f64 = v->u.f32; break;
  case HS_AVRO_DOUBLE: out->f64 = v->u.f64; break;
  case HS_AVRO_STRING:
  case HS_AVRO_BYTES:
  case HS_AVRO_FIXED:
    if (t->id == HS_ICE_DECIMAL) {
      size_t n = v->u.bytes.len;
      if (n == 0 || n > 16)
        return hs_error_set(err, HS_ERR_CORRUPT, "decimal partition value of %zu bytes", n);
      uint8_t full[16];
      memset(full, (v->u.bytes.data[0] & 0x80) ? 0xff : 0, 16);
      memcpy(full + 16 - n, v->u.bytes.data, n);
      uint64_t hi = 0, lo = 0;
      for (int i = 0; i < 8; i++) {
        hi = hi << 8 | full[i];
        lo = lo << 8 | full[8 + i];
      }
      out->dec_hi = (int64_t)hi;
      out->dec_lo = lo;
      break;
    }
    out->bytes = hs_arena_memdup(arena, v->u.bytes.len ? v->u.bytes.data : (const uint8_t *)"",
                                 v->u.bytes.len ? v->u.bytes.len : 1);
    if (out->bytes == NULL) return hs_error_set(err, HS_ERR_NOMEM, "partition: out of memory");
    out->len = v->u.bytes.len;
    break;
  default:
    return hs_error_set(err, HS_ERR_CORRUPT, "partition value of Avro type %s",
                        hs_avro_type_name(v->type));
  }
  return HS_OK;
}

/* The record node of field `name` in `node` (a nullable union unwrapped). */
static const hs_avro_node *record_field_node(const hs_avro_node *node, const char *name) {
  if (node == NULL || node->type != HS_AVRO_RECORD) return NULL;
  int64_t i = hs_avro_node_field_index(node, name);
  if (i < 0) return NULL;
  const hs_avro_node *t = node->fields[i].type;
  if (t->type == HS_AVRO_UNION)
    for (size_t b = 0; b < t->n_branches; b++)
      if (t->branches[b]->type == HS_AVRO_RECORD) return t->branches[b];
  return t->type == HS_AVRO_RECORD ? t : NULL;
}

/* Merge one metric map (array of {key, value} records, or an Avro map with
 * string keys) into the file's metrics. */
static hs_status read_metric_map(const hs_avro_node *df_node, const hs_avro_value *df,
                                 const char *name, int which, hs_iceberg_column_metrics **ms,
                                 size_t *n, size_t *cap, hs_arena *arena, hs_error *err) {
  const hs_avro_node *t = NULL;
  const hs_avro_value *v = hs_ice_av_get(df_node, df, name, &t);
  if (v == NULL) return HS_OK;
  if (v->type != HS_AVRO_ARRAY || t->items == NULL || t->items->type != HS_AVRO_RECORD)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s is not an array of key/value records", name);
  for (size_t i = 0; i < v->u.list.count; i++) {
    const hs_avro_value *kv = &v->u.list.items[i];
    int64_t key = 0, val = 0;
    hs_status st = hs_ice_av_get_long(t->items, kv, "key", name, &key, NULL, err);
    if (st != HS_OK) return st;
    if (key < INT32_MIN || key > INT32_MAX)
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: field id %lld", name, (long long)key);
    const uint8_t *bytes = NULL;
    size_t blen = 0;
    if (which >= 4)
      st = hs_ice_av_get_bytes(t->items, kv, "value", name, true, arena, &bytes, &blen, err);
    else
      st = hs_ice_av_get_long(t->items, kv, "value", name, &val, NULL, err);
    if (st != HS_OK) return st;
    hs_iceberg_column_metrics *m = NULL;
    for (size_t j = 0; j < *n; j++)
      if ((*ms)[j].field_id == (int32_t)key) m = &(*ms)[j];
    if (m == NULL) {
      if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        hs_iceberg_column_metrics *g = hs_realloc(*ms, nc * sizeof *g);
        if (g == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", name);
        *ms = g;
        *cap = nc;
      }
      m = &(*ms)[(*n)++];
      memset(m, 0, sizeof *m);
      m->field_id = (int32_t)key;
    }
    switch (which) {
    case 0: m->has_column_size = true, m->column_size = val; break;
    case 1: m->has_value_count = true, m->value_count = val; break;
    case 2: m->has_null_count = true, m->null_count = val; break;
    case 3: m->has_nan_count = true, m->nan_count = val; break;
    case 4: m->lower = bytes, m->lower_len = blen; break;
    default: m->upper = bytes, m->upper_len = blen; break;
    }
  }
  return HS_OK;
}

static int metrics_cmp(const void *a, const void *b) {
  int32_t x = ((const hs_iceberg_column_metrics *)a)->field_id;
  int32_t y = ((const hs_iceberg_column_metrics *)b)->field_id;
  return x < y ? -1 : x > y;
}

static hs_status read_long_list(const hs_avro_node *node, const hs_avro_value *rec,
                                const char *name, hs_arena *arena, bool *has, int64_t **out64,
                                int32_t **out32, size_t *n, hs_error *err) {
  const hs_avro_value *v = hs_ice_av_get(node, rec, name, NULL);
  *has = false;
  *n = 0;
  if (v == NULL) return HS_OK;
  if (v->type != HS_AVRO_ARRAY)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s is not an array", name);
  size_t cnt = v->u.list.count;
  int64_t *p64 = NULL;
  int32_t *p32 = NULL;
  if (cnt > 0) {
    if (out64) p64 = hs_arena_alloc(arena, cnt * sizeof *p64);
    if (out32) p32 = hs_arena_alloc(arena, cnt * sizeof *p32);
    if ((out64 && !p64) || (out32 && !p32))
      return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", name);
  }
  for (size_t i = 0; i < cnt; i++) {
    const hs_avro_value *it = &v->u.list.items[i];
    int64_t x;
    if (it->type == HS_AVRO_INT)
      x = it->u.i32;
    else if (it->type == HS_AVRO_LONG)
      x = it->u.i64;
    else
      return hs_error_set(err, HS_ERR_CORRUPT, "%s[%zu] is not an integer", name, i);
    if (p64) p64[i] = x;
    if (p32) {
      if (x < INT32_MIN || x > INT32_MAX)
        return hs_error_set(err, HS_ERR_CORRUPT, "%s[%zu] out of int range", name, i);
      p32[i] = (int32_t)x;
    }
  }
  if (out64) *out64 = p64;
  if (out32) *out32 = p32;
  *has = true;
  *n = cnt;
  return HS_OK;
}

typedef struct entry_nodes {
  const hs_avro_node *root, *df, *part;
  size_t n_part;
  const hs_iceberg_type *types;
} entry_nodes;

static hs_status read_entry(const entry_nodes *nodes, const hs_avro_value *rec, hs_arena *arena,
                            hs_iceberg_manifest_entry *e, hs_error *err) {
  memset(e, 0, sizeof *e);
  int64_t x = 0;
  hs_status st = hs_ice_av_get_long(nodes->root, rec, "status", "manifest entry", &x, NULL, err);
  if (st != HS_OK) return st;
  if (x < 0 || x > 2) return hs_error_set(err, HS_ERR_CORRUPT, "status %lld", (long long)x);
  e->status = (hs_iceberg_entry_status)x;
  st = hs_ice_av_get_long(nodes->root, rec, "snapshot_id", "manifest entry", &e->snapshot_id,
                          &e->has_snapshot_id, err);
  if (st == HS_OK)
    st = hs_ice_av_get_long(nodes->root, rec, "sequence_number", "manifest entry",
                            &e->sequence_number, &e->has_sequence_number, err);
  if (st == HS_OK)
    st = hs_ice_av_get_long(nodes->root, rec, "file_sequence_number", "manifest entry",
                            &e->file_sequence_number, &e->has_file_sequence_number, err);
  if (st != HS_OK) return st;
  const hs_avro_value *df = hs_ice_av_get(nodes->root, rec, "data_file", NULL);
  if (df == NULL || df->type != HS_AVRO_RECORD)
    return hs_error_set(err, HS_ERR_CORRUPT, "missing data_file");
  hs_iceberg_data_file *f = &e->data_file;
  const hs_avro_node *dn = nodes->df;
  bool has = false;
  st = hs_ice_av_get_long(dn, df, "content", "data_file", &x, &has, err);
  if (st != HS_OK) return st;
  if (has && (x < 0 || x > 2))
    return hs_error_set(err, HS_ERR_CORRUPT, "content %lld", (long long)x);
  f->content = has ? (hs_iceberg_content)x : HS_ICE_CONTENT_DATA;
  const uint8_t *p;
  size_t len;
  st = hs_ice_av_get_bytes(dn, df, "file_path", "data_file", true, arena, &p, &len, err);
  if (st != HS_OK) return st;
  f->file_path = (const char *)p;
  st = hs_ice_av_get_bytes(dn, df, "file_format", "data_file", true, arena, &p, &len, err);
  if (st != HS_OK) return st;
  f->file_format = (const char *)p;
  st = hs_ice_av_get_long(dn, df, "record_count", "data_file", &f->record_count, NULL, err);
  if (st == HS_OK)
    st = hs_ice_av_get_long(dn, df, "file_size_in_bytes", "data_file", &f->file_size_in_bytes, NULL,
                            err);
  if (st != HS_OK) return st;
  /* Partition tuple. */
  f->n_partition = nodes->n_part;
  if (nodes->n_part > 0) {
    f->partition = hs_arena_alloc(arena, nodes->n_part * sizeof *f->partition);
    if (f->partition == NULL) return hs_error_set(err, HS_ERR_NOMEM, "partition: out of memory");
    const hs_avro_value *pv = hs_ice_av_get(dn, df, "partition", NULL);
    if (pv == NULL || pv->type != HS_AVRO_RECORD || pv->u.list.count != nodes->n_part)
      return hs_error_set(err, HS_ERR_CORRUPT, "partition tuple missing");
    for (size_t i = 0; i < nodes->n_part; i++) {
      const hs_avro_value *fv = hs_ice_av_get(nodes->part, pv, nodes->part->fields[i].name, NULL);
      st = avro_to_partition_value(&nodes->types[i], fv, arena, &f->partition[i], err);
      if (st != HS_OK) {
        hs_error_prefix(err, "partition.%s: ", nodes->part->fields[i].name);
        return st;
      }
    }
  }
  /* Metrics. */
  static const char *const maps[6] = {"column_sizes",     "value_counts", "null_value_counts",
                                      "nan_value_counts", "lower_bounds", "upper_bounds"};
  hs_iceberg_column_metrics *ms = NULL;
  size_t n = 0, cap = 0;
  for (int m = 0; m < 6 && st == HS_OK; m++)
    st = read_metric_map(dn, df, maps[m], m, &ms, &n, &cap, arena, err);
  if (st == HS_OK && n > 0) {
    qsort(ms, n, sizeof *ms, metrics_cmp);
    f->metrics = hs_arena_memdup(arena, ms, n * sizeof *ms);
    if (f->metrics == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "metrics: out of memory");
    f->n_metrics = n;
  }
  hs_free(ms);
  if (st != HS_OK) return st;
  st = hs_ice_av_get_bytes(dn, df, "key_metadata", "data_file", false, arena, &f->key_metadata,
                           &f->key_metadata_len, err);
  if (st == HS_OK)
    st = read_long_list(dn, df, "split_offsets", arena, &f->has_split_offsets, &f->split_offsets,
                        NULL, &f->n_split_offsets, err);
  if (st == HS_OK)
    st = read_long_list(dn, df, "equality_ids", arena, &f->has_equality_ids, NULL, &f->equality_ids,
                        &f->n_equality_ids, err);
  if (st == HS_OK) {
    st = hs_ice_av_get_long(dn, df, "sort_order_id", "data_file", &x, &f->has_sort_order_id, err);
    if (st == HS_OK && f->has_sort_order_id) {
      if (x < INT32_MIN || x > INT32_MAX)
        return hs_error_set(err, HS_ERR_CORRUPT, "sort_order_id %lld", (long long)x);
      f->sort_order_id = (int32_t)x;
    }
  }
  if (st == HS_OK)
    st = hs_ice_av_get_long(dn, df, "first_row_id", "data_file", &f->first_row_id,
                            &f->has_first_row_id, err);
  if (st == HS_OK)
    st = hs_ice_av_get_bytes(dn, df, "referenced_data_file", "data_file", false, arena, &p, &len,
                             err);
  if (st == HS_OK) f->referenced_data_file = (const char *)p;
  if (st == HS_OK)
    st = hs_ice_av_get_long(dn, df, "content_offset", "data_file", &f->content_offset,
                            &f->has_content_offset, err);
  if (st == HS_OK)
    st = hs_ice_av_get_long(dn, df, "content_size_in_bytes", "data_file", &f->content_size_in_bytes,
                            &f->has_content_size_in_bytes, err);
  return st;
}

/* Parse the "schema" and "partition-spec" header metadata. */
static hs_status read_header(hs_avro_reader *r, hs_arena *arena, hs_iceberg_manifest *out,
                             hs_error *err) {
  size_t len;
  const uint8_t *v = hs_avro_reader_meta_get(r, "format-version", &len);
  int64_t x;
  out->format_version = 1;
  if (v != NULL && hs_ice_parse_i64(v, len, &x) && x >= 1 && x <= 3)
    out->format_version = (int32_t)x;
  v = hs_avro_reader_meta_get(r, "content", &len);
  out->content = v != NULL && len == 7 && memcmp(v, "deletes", 7) == 0 ? HS_ICE_MANIFEST_DELETES
                                                                       : HS_ICE_MANIFEST_DATA;
  v = hs_avro_reader_meta_get(r, "schema-id", &len);
  if (v != NULL && hs_ice_parse_i64(v, len, &x) && x >= INT32_MIN && x <= INT32_MAX) {
    out->has_schema_id = true;
    out->schema_id = (int32_t)x;
  }
  v = hs_avro_reader_meta_get(r, "partition-spec-id", &len);
  if (v != NULL && hs_ice_parse_i64(v, len, &x) && x >= INT32_MIN && x <= INT32_MAX)
    out->partition_spec_id = (int32_t)x;
  hs_ice_ctx c = {.arena = arena, .err = err, .format_version = out->format_version};
  hs_status st = HS_OK;
  v = hs_avro_reader_meta_get(r, "schema", &len);
  if (v != NULL) {
    json_t *j = json_loadb((const char *)v, len, JSON_REJECT_DUPLICATES, NULL);
    if (j == NULL) return hs_error_set(err, HS_ERR_CORRUPT, "metadata 'schema' is not JSON");
    hs_ice_push_key(&c, "schema");
    st = hs_ice_schema_parse(&c, j, &out->schema);
    json_decref(j);
    if (st != HS_OK) return st;
    out->has_schema = true;
  }
  v = hs_avro_reader_meta_get(r, "partition-spec", &len);
  out->spec.spec_id = out->partition_spec_id;
  if (v != NULL) {
    json_t *j = json_loadb((const char *)v, len, JSON_REJECT_DUPLICATES, NULL);
    if (j == NULL || !json_is_array(j)) {
      json_decref(j);
      return hs_error_set(err, HS_ERR_CORRUPT, "metadata 'partition-spec' is not a JSON array");
    }
    json_t *o = json_pack("{s:i,s:o}", "spec-id", (json_int_t)out->partition_spec_id, "fields", j);
    if (o == NULL) return hs_error_set(err, HS_ERR_NOMEM, "partition-spec: out of memory");
    c.plen = 0;
    hs_ice_push_key(&c, "partition-spec");
    st = hs_ice_spec_parse(&c, o, &out->spec);
    json_decref(o);
  }
  return st;
}

hs_status hs_iceberg_manifest_read(const uint8_t *data, size_t len,
                                   const hs_iceberg_manifest_file *from_list, hs_arena *arena,
                                   hs_iceberg_manifest *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_avro_reader *r = NULL;
  hs_status st = hs_avro_reader_open(data, len, NULL, &r, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "manifest: ");
    return st;
  }
  entry_nodes nodes = {0};
  nodes.root = hs_avro_reader_datum_schema(r);
  nodes.df = record_field_node(nodes.root, "data_file");
  nodes.part = record_field_node(nodes.df, "partition");
  if (nodes.df == NULL || nodes.part == NULL) {
    hs_avro_reader_free(r);
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "manifest: schema is not a manifest_entry with data_file.partition");
  }
  st = read_header(r, arena, out, err);
  nodes.n_part = nodes.part->n_fields;
  if (st == HS_OK && nodes.n_part > 0) {
    hs_iceberg_type *types = hs_arena_alloc(arena, nodes.n_part * sizeof *types);
    if (types == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "manifest: out of memory");
    for (size_t i = 0; st == HS_OK && i < nodes.n_part; i++) {
      st = avro_partition_type(nodes.part->fields[i].type, &types[i], err);
      if (st != HS_OK) hs_error_prefix(err, "partition.%s: ", nodes.part->fields[i].name);
    }
    nodes.types = types;
    out->partition_types = types;
    out->n_partition_types = nodes.n_part;
  }
  hs_arena scratch;
  hs_arena_init(&scratch);
  hs_iceberg_manifest_entry *es = NULL;
  size_t n = 0, cap = 0;
  int64_t next_row_id = from_list && from_list->has_first_row_id ? from_list->first_row_id : 0;
  while (st == HS_OK) {
    hs_avro_value v;
    bool has = false;
    st = hs_avro_reader_next(r, &scratch, &v, &has, err);
    if (st != HS_OK || !has) break;
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 64;
      hs_iceberg_manifest_entry *g = hs_realloc(es, nc * sizeof *g);
      if (g == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "manifest: out of memory");
        break;
      }
      es = g;
      cap = nc;
    }
    hs_iceberg_manifest_entry *e = &es[n];
    st = read_entry(&nodes, &v, arena, e, err);
    hs_arena_reset(&scratch);
    if (st != HS_OK) {
      hs_error_prefix(err, "manifest entry %zu: ", n);
      break;
    }
    n++;
    if (from_list == NULL) continue;
    /* Inheritance (spec "Sequence Number Inheritance", "Row Lineage"). */
    if (!e->has_snapshot_id) {
      e->has_snapshot_id = true;
      e->snapshot_id = from_list->added_snapshot_id;
    }
    bool v1 = out->format_version < 2;
    if (!e->has_sequence_number && (e->status == HS_ICE_ENTRY_ADDED || v1)) {
      e->has_sequence_number = true;
      e->sequence_number = v1 ? 0 : from_list->sequence_number;
    }
    if (!e->has_file_sequence_number && (e->status == HS_ICE_ENTRY_ADDED || v1)) {
      e->has_file_sequence_number = true;
      e->file_sequence_number = v1 ? 0 : from_list->sequence_number;
    }
    hs_iceberg_data_file *f = &e->data_file;
    if (out->format_version >= 3 && from_list->has_first_row_id &&
        out->content == HS_ICE_MANIFEST_DATA && e->status != HS_ICE_ENTRY_DELETED &&
        !f->has_first_row_id) {
      f->has_first_row_id = true;
      f->first_row_id = next_row_id;
      if (f->record_count > 0) next_row_id += f->record_count;
    }
  }
  hs_arena_reset(&scratch);
  hs_avro_reader_free(r);
  if (st == HS_OK && n > 0) {
    out->entries = hs_arena_memdup(arena, es, n * sizeof *es);
    if (out->entries == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "manifest: out of memory");
    out->n_entries = n;
  }
  hs_free(es);
  if (st != HS_OK) memset(out, 0, sizeof *out);
  return st;
}
