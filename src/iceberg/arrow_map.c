/*
 * arrow_map.c — mapping between Arrow schemas (C Data Interface format
 * strings) and Iceberg schemas.
 *
 * Arrow -> Iceberg, exact cases: int8/16/32 and uint8/16 -> int; int64 and
 * uint32 -> long; float16 and float32 -> float (float16 widens exactly);
 * double; (large_)string -> string; (large_)binary -> binary; w:16 with
 * extension "arrow.uuid" -> uuid, other w:N -> fixed[N]; d:P,S (P <= 38) ->
 * decimal; date32 -> date; time32[s|ms] and time64[us] -> time;
 * timestamp[s|ms|us] -> timestamp, or timestamptz when a zone is set;
 * timestamp[ns] -> timestamp_ns / timestamptz_ns (v3 only); null -> unknown
 * (v3 only); (large_)list -> list; struct; map.
 * Lossy cases, accepted only with allow_lossy: uint64 -> long (values above
 * INT64_MAX cannot be stored), date64 -> date (time of day dropped),
 * time64[ns] -> time (sub-microsecond dropped), timestamp[ns] -> timestamp
 * in v2 tables (sub-microsecond dropped), fixed_size_list of non-float32 ->
 * list (the fixed size is forgotten).
 * Vectors: fixed_size_list<float32, D> -> list<float>; the dimension D is
 * reported so the caller stores it as table property
 * "hyperstream.vector.<list field id>.dimension", and schema_to_arrow turns
 * such a list back into +w:D.
 * Struct field names (top level included) must be unique, case-sensitively:
 * a duplicate is HS_ERR_SCHEMA naming it.
 * Iceberg -> Arrow uses the canonical forms (int32, int64, string "u",
 * binary "z", timestamps in us or ns with zone "UTC" for tz types).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg_internal.h"

void hs_iceberg_vector_dim_property(int32_t field_id, char out[64]) {
  snprintf(out, 64, "%s%d%s", HS_ICEBERG_VECTOR_DIM_PREFIX, field_id, HS_ICEBERG_VECTOR_DIM_SUFFIX);
}

typedef struct from_ctx {
  const hs_iceberg_from_arrow_options *opts;
  hs_arena *arena;
  hs_error *err;
  bool use_file_ids; /* every node carries PARQUET:field_id */
  int32_t next_id, max_id;
  hs_iceberg_vector_dim *vectors;
  size_t n_vectors, cap_vectors;
} from_ctx;

/* Do all nodes below `s` (not `s` itself) carry a field id? */
static bool all_have_ids(const struct ArrowSchema *s, int depth) {
  if (depth > HS_ICE_TYPE_DEPTH_MAX) return false;
  for (int64_t i = 0; i < s->n_children; i++) {
    const struct ArrowSchema *ch = s->children[i];
    bool is_entries = s->format != NULL && strcmp(s->format, "+m") == 0;
    if (!is_entries && hs_arrow_field_id(ch) < 0) return false;
    if (!all_have_ids(ch, depth + 1)) return false;
  }
  return true;
}

static hs_status take_id(from_ctx *c, const struct ArrowSchema *s, int32_t *out) {
  int32_t id = c->use_file_ids ? hs_arrow_field_id(s) : c->next_id++;
  if (id < 0 || c->next_id < 0)
    return hs_error_set(c->err, HS_ERR_SCHEMA, "field '%s': no usable field id",
                        s->name ? s->name : "");
  if (id > c->max_id) c->max_id = id;
  *out = id;
  return HS_OK;
}

static hs_status lossy(from_ctx *c, const char *path, const char *what) {
  if (c->opts->allow_lossy) return HS_OK;
  return hs_error_set(c->err, HS_ERR_SCHEMA, "field '%s': %s is lossy in Iceberg (allow_lossy)",
                      path, what);
}

static hs_status map_type(from_ctx *c, const struct ArrowSchema *s, const char *path, int depth,
                          int32_t self_id, hs_iceberg_type *out);

/* Map the children of a struct-like node into out->fields. */
static hs_status map_struct(from_ctx *c, const struct ArrowSchema *s, const char *path, int depth,
                            hs_iceberg_type *out) {
  out->id = HS_ICE_STRUCT;
  out->n_fields = (size_t)s->n_children;
  out->fields = hs_arena_alloc(c->arena, (out->n_fields ? out->n_fields : 1) * sizeof *out->fields);
  if (out->fields == NULL) return hs_error_set(c->err, HS_ERR_NOMEM, "out of memory (schema)");
  hs_status st = HS_OK;
  /* Ids for this level first, then nested levels: top-level columns get
   * 1..n as Iceberg's reference implementations number them. */
  for (size_t i = 0; i < out->n_fields && st == HS_OK; i++) {
    const struct ArrowSchema *ch = s->children[i];
    hs_iceberg_field *f = &out->fields[i];
    f->name = hs_arena_strndup(c->arena, ch->name ? ch->name : "", ch->name ? strlen(ch->name) : 0);
    if (f->name == NULL) return hs_error_set(c->err, HS_ERR_NOMEM, "out of memory (schema)");
    f->required = !(ch->flags & ARROW_FLAG_NULLABLE);
    /* Iceberg names are case-sensitive and unique within a struct: a
     * duplicate makes the column ambiguous and other readers refuse the
     * metadata. */
    for (size_t j = 0; j < i; j++)
      if (strcmp(out->fields[j].name, f->name) == 0) {
        if (*path == '\0')
          return hs_error_set(c->err, HS_ERR_SCHEMA, "duplicate column name '%s'", f->name);
        return hs_error_set(c->err, HS_ERR_SCHEMA, "field '%s': duplicate field name '%s'", path,
                            f->name);
      }
    st = take_id(c, ch, &f->id);
  }
  for (size_t i = 0; i < out->n_fields && st == HS_OK; i++) {
    char sub[256];
    snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", out->fields[i].name);
    st = map_type(c, s->children[i], sub, depth + 1, out->fields[i].id, &out->fields[i].type);
  }
  return st;
}

static hs_status add_vector(from_ctx *c, int32_t id, int32_t dim) {
  if (c->n_vectors == c->cap_vectors) {
    size_t cap = c->cap_vectors ? 2 * c->cap_vectors : 4;
    hs_iceberg_vector_dim *v = hs_arena_alloc(c->arena, cap * sizeof *v);
    if (v == NULL) return hs_error_set(c->err, HS_ERR_NOMEM, "out of memory (vectors)");
    if (c->n_vectors) memcpy(v, c->vectors, c->n_vectors * sizeof *v);
    c->vectors = v;
    c->cap_vectors = cap;
  }
  c->vectors[c->n_vectors++] = (hs_iceberg_vector_dim){id, dim};
  return HS_OK;
}

static hs_iceberg_type *new_type(from_ctx *c) {
  hs_iceberg_type *t = hs_arena_alloc(c->arena, sizeof *t);
  if (t == NULL) hs_error_set(c->err, HS_ERR_NOMEM, "out of memory (schema)");
  return t;
}

static hs_status map_type(from_ctx *c, const struct ArrowSchema *s, const char *path, int depth,
                          int32_t self_id, hs_iceberg_type *out) {
  hs_arrow_type at;
  memset(out, 0, sizeof *out);
  if (depth > HS_ICE_TYPE_DEPTH_MAX)
    return hs_error_set(c->err, HS_ERR_SCHEMA, "field '%s': nested too deeply", path);
  hs_status st = hs_arrow_type_parse(s->format, &at, c->err);
  if (st != HS_OK) return st;
  bool v3 = c->opts->format_version >= 3;
  switch (at.id) {
  case HS_AT_BOOL: out->id = HS_ICE_BOOLEAN; return HS_OK;
  case HS_AT_INT8:
  case HS_AT_UINT8:
  case HS_AT_INT16:
  case HS_AT_UINT16:
  case HS_AT_INT32: out->id = HS_ICE_INT; return HS_OK;
  case HS_AT_UINT32:
  case HS_AT_INT64: out->id = HS_ICE_LONG; return HS_OK;
  case HS_AT_UINT64: out->id = HS_ICE_LONG; return lossy(c, path, "uint64 -> long");
  case HS_AT_FLOAT16:
  case HS_AT_FLOAT32: out->id = HS_ICE_FLOAT; return HS_OK;
  case HS_AT_FLOAT64: out->id = HS_ICE_DOUBLE; return HS_OK;
  case HS_AT_STRING:
  case HS_AT_LARGE_STRING: out->id = HS_ICE_STRING; return HS_OK;
  case HS_AT_BINARY:
  case HS_AT_LARGE_BINARY: out->id = HS_ICE_BINARY; return HS_OK;
  case HS_AT_FIXED_BINARY: {
    int32_t len;
    const char *ext = hs_arrow_metadata_get(s->metadata, "ARROW:extension:name", &len);
    if (at.width == 16 && ext != NULL && len == 10 && memcmp(ext, "arrow.uuid", 10) == 0) {
      out->id = HS_ICE_UUID;
    } else {
      out->id = HS_ICE_FIXED;
      out->length = at.width;
    }
    return HS_OK;
  }
  case HS_AT_DECIMAL128:
    if (at.precision < 1 || at.precision > 38 || at.scale < 0 || at.scale > at.precision)
      return hs_error_set(c->err, HS_ERR_SCHEMA, "field '%s': decimal(%d,%d) has no Iceberg form",
                          path, at.precision, at.scale);
    out->id = HS_ICE_DECIMAL;
    out->precision = at.precision;
    out->scale = at.scale;
    return HS_OK;
  case HS_AT_DATE32: out->id = HS_ICE_DATE; return HS_OK;
  case HS_AT_DATE64: out->id = HS_ICE_DATE; return lossy(c, path, "date64 -> date");
  case HS_AT_TIME32: out->id = HS_ICE_TIME; return HS_OK;
  case HS_AT_TIME64:
    out->id = HS_ICE_TIME;
    return at.unit == HS_UNIT_NS ? lossy(c, path, "time64[ns] -> time (us)") : HS_OK;
  case HS_AT_TIMESTAMP: {
    bool tz = at.timezone != NULL && at.timezone[0] != '\0';
    if (at.unit == HS_UNIT_NS && v3) {
      out->id = tz ? HS_ICE_TIMESTAMPTZ_NS : HS_ICE_TIMESTAMP_NS;
      return HS_OK;
    }
    out->id = tz ? HS_ICE_TIMESTAMPTZ : HS_ICE_TIMESTAMP;
    return at.unit == HS_UNIT_NS ? lossy(c, path, "timestamp[ns] in a v2 table") : HS_OK;
  }
  case HS_AT_NA:
    if (!v3)
      return hs_error_set(c->err, HS_ERR_SCHEMA, "field '%s': null type needs format v3", path);
    out->id = HS_ICE_UNKNOWN;
    return HS_OK;
  case HS_AT_LIST:
  case HS_AT_LARGE_LIST:
  case HS_AT_FIXED_LIST: {
    if (s->n_children != 1)
      return hs_error_set(c->err, HS_ERR_SCHEMA, "field '%s': list without one child", path);
    const struct ArrowSchema *ch = s->children[0];
    out->id = HS_ICE_LIST;
    out->element_required = !(ch->flags & ARROW_FLAG_NULLABLE);
    if ((st = take_id(c, ch, &out->element_id)) != HS_OK) return st;
    if ((out->element = new_type(c)) == NULL) return HS_ERR_NOMEM;
    char sub[256];
    snprintf(sub, sizeof sub, "%s.element", path);
    if ((st = map_type(c, ch, sub, depth + 1, out->element_id, out->element)) != HS_OK) return st;
    if (at.id != HS_AT_FIXED_LIST) return HS_OK;
    if (ch->format != NULL && strcmp(ch->format, "f") == 0) return add_vector(c, self_id, at.width);
    return lossy(c, path, "fixed_size_list of non-float32 -> list");
  }
  case HS_AT_STRUCT: return map_struct(c, s, path, depth, out);
  case HS_AT_MAP: {
    const struct ArrowSchema *e = s->n_children == 1 ? s->children[0] : NULL;
    if (e == NULL || e->n_children != 2)
      return hs_error_set(c->err, HS_ERR_SCHEMA, "field '%s': map without key/value entries", path);
    out->id = HS_ICE_MAP;
    out->value_required = !(e->children[1]->flags & ARROW_FLAG_NULLABLE);
    if ((st = take_id(c, e->children[0], &out->key_id)) != HS_OK ||
        (st = take_id(c, e->children[1], &out->value_id)) != HS_OK)
      return st;
    if ((out->key = new_type(c)) == NULL || (out->value = new_type(c)) == NULL) return HS_ERR_NOMEM;
    char sub[256];
    snprintf(sub, sizeof sub, "%s.key", path);
    if ((st = map_type(c, e->children[0], sub, depth + 1, out->key_id, out->key)) != HS_OK)
      return st;
    snprintf(sub, sizeof sub, "%s.value", path);
    return map_type(c, e->children[1], sub, depth + 1, out->value_id, out->value);
  }
  default:
    return hs_error_set(c->err, HS_ERR_SCHEMA, "field '%s': Arrow type '%.40s' has no Iceberg form",
                        path, s->format);
  }
}

hs_status hs_iceberg_schema_from_arrow(const struct ArrowSchema *arrow,
                                       const hs_iceberg_from_arrow_options *opts, hs_arena *arena,
                                       hs_iceberg_schema *out, int32_t *last_id_out,
                                       hs_iceberg_vector_dim **vectors, size_t *n_vectors,
                                       hs_error *err) {
  memset(out, 0, sizeof *out);
  if (arrow == NULL || opts == NULL || arrow->format == NULL || strcmp(arrow->format, "+s") != 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "schema_from_arrow needs a struct (+s) schema");
  from_ctx c = {
      .opts = opts, .arena = arena, .err = err, .next_id = opts->next_id > 0 ? opts->next_id : 1};
  c.use_file_ids = arrow->n_children > 0 && all_have_ids(arrow, 0);
  hs_status st = map_struct(&c, arrow, "", 0, &out->root);
  if (st != HS_OK) return st;
  if (last_id_out != NULL) *last_id_out = c.max_id;
  if (vectors != NULL) *vectors = c.vectors;
  if (n_vectors != NULL) *n_vectors = c.n_vectors;
  return HS_OK;
}

/* ------------------------------------------------------ Iceberg -> Arrow */

static int32_t vector_dim(const hs_iceberg_metadata *m, int32_t id) {
  if (m == NULL) return -1;
  char key[64];
  hs_iceberg_vector_dim_property(id, key);
  const char *v = hs_iceberg_metadata_property(m, key);
  if (v == NULL) return -1;
  char *end;
  long d = strtol(v, &end, 10);
  return (*end == '\0' && d >= 1 && d <= INT32_MAX) ? (int32_t)d : -1;
}

static hs_status to_arrow(const hs_iceberg_type *t, const char *name, int32_t id, bool nullable,
                          const hs_iceberg_metadata *m, int depth, struct ArrowSchema *out,
                          hs_error *err);

static hs_status set_id(struct ArrowSchema *s, int32_t id, bool uuid, hs_error *err) {
  char idbuf[16];
  snprintf(idbuf, sizeof idbuf, "%d", id);
  const char *keys[2] = {"PARQUET:field_id", "ARROW:extension:name"};
  const char *vals[2] = {idbuf, "arrow.uuid"};
  return hs_arrow_schema_set_metadata(s, keys, vals, uuid ? 2 : 1, err);
}

static hs_status to_arrow(const hs_iceberg_type *t, const char *name, int32_t id, bool nullable,
                          const hs_iceberg_metadata *m, int depth, struct ArrowSchema *out,
                          hs_error *err) {
  char fmt[32];
  const char *f = NULL;
  int64_t n_children = 0, flags = nullable ? ARROW_FLAG_NULLABLE : 0;
  int32_t dim = -1;
  if (depth > HS_ICE_TYPE_DEPTH_MAX)
    return hs_error_set(err, HS_ERR_SCHEMA, "field '%s': nested too deeply", name);
  switch (t->id) {
  case HS_ICE_BOOLEAN: f = "b"; break;
  case HS_ICE_INT: f = "i"; break;
  case HS_ICE_LONG: f = "l"; break;
  case HS_ICE_FLOAT: f = "f"; break;
  case HS_ICE_DOUBLE: f = "g"; break;
  case HS_ICE_DATE: f = "tdD"; break;
  case HS_ICE_TIME: f = "ttu"; break;
  case HS_ICE_TIMESTAMP: f = "tsu:"; break;
  case HS_ICE_TIMESTAMPTZ: f = "tsu:UTC"; break;
  case HS_ICE_TIMESTAMP_NS: f = "tsn:"; break;
  case HS_ICE_TIMESTAMPTZ_NS: f = "tsn:UTC"; break;
  case HS_ICE_STRING: f = "u"; break;
  case HS_ICE_BINARY: f = "z"; break;
  case HS_ICE_UUID: f = "w:16"; break;
  case HS_ICE_UNKNOWN: f = "n"; break;
  case HS_ICE_FIXED:
    snprintf(fmt, sizeof fmt, "w:%d", t->length);
    f = fmt;
    break;
  case HS_ICE_DECIMAL:
    snprintf(fmt, sizeof fmt, "d:%d,%d", t->precision, t->scale);
    f = fmt;
    break;
  case HS_ICE_STRUCT:
    f = "+s";
    n_children = (int64_t)t->n_fields;
    break;
  case HS_ICE_LIST:
    dim = t->element->id == HS_ICE_FLOAT ? vector_dim(m, id) : -1;
    if (dim > 0) snprintf(fmt, sizeof fmt, "+w:%d", dim);
    f = dim > 0 ? fmt : "+l";
    n_children = 1;
    break;
  case HS_ICE_MAP:
    f = "+m";
    n_children = 1;
    break;
  default:
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "field '%s': Iceberg type %s has no Arrow form",
                        name, t->text != NULL ? t->text : hs_iceberg_type_name(t->id));
  }
  hs_status st = hs_arrow_schema_init(out, f, name, flags, n_children, err);
  if (st != HS_OK) return st;
  if (id > 0) st = set_id(out, id, t->id == HS_ICE_UUID, err);
  if (t->id == HS_ICE_STRUCT) {
    for (size_t i = 0; i < t->n_fields && st == HS_OK; i++)
      st = to_arrow(&t->fields[i].type, t->fields[i].name, t->fields[i].id, !t->fields[i].required,
                    m, depth + 1, out->children[i], err);
  } else if (t->id == HS_ICE_LIST) {
    st = to_arrow(t->element, "element", t->element_id, !t->element_required, m, depth + 1,
                  out->children[0], err);
  } else if (t->id == HS_ICE_MAP && st == HS_OK) {
    struct ArrowSchema *e = out->children[0];
    st = hs_arrow_schema_init(e, "+s", "entries", 0, 2, err);
    if (st == HS_OK)
      st = to_arrow(t->key, "key", t->key_id, false, m, depth + 1, e->children[0], err);
    if (st == HS_OK)
      st = to_arrow(t->value, "value", t->value_id, !t->value_required, m, depth + 1,
                    e->children[1], err);
  }
  if (st != HS_OK) hs_arrow_schema_release(out);
  return st;
}

hs_status hs_iceberg_schema_to_arrow(const hs_iceberg_schema *s, const hs_iceberg_metadata *m,
                                     struct ArrowSchema *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  if (s == NULL || s->root.id != HS_ICE_STRUCT)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "schema_to_arrow needs a struct schema");
  return to_arrow(&s->root, "", 0, false, m, 0, out, err);
}
