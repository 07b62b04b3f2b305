/*
 * schema.c — Avro schema JSON to a node tree and back.
 *
 * The point of this file is fidelity: every attribute the model does not
 * name (Iceberg's field-id, element-id, key-id, value-id, adjust-to-utc,
 * aliases, order, ...) is kept as JSON on its node or field and written back
 * in place, so a manifest schema survives a read/write cycle byte-for-byte
 * in meaning. Named types are resolved to full names (namespace rules of the
 * spec) and references point at the defining node, so recursive schemas form
 * a graph; serialization defines each named type once, at its first use.
 */
#include <string.h>

#include "avro_internal.h"

static const char *const type_names[] = {"null",   "boolean", "int",    "long",   "float",
                                         "double", "bytes",   "string", "record", "enum",
                                         "array",  "map",     "union",  "fixed"};

const char *hs_avro_type_name(hs_avro_type type) {
  if ((unsigned)type < sizeof type_names / sizeof type_names[0]) return type_names[type];
  return "?";
}

static bool primitive_from_name(const char *s, hs_avro_type *out) {
  for (int t = HS_AVRO_NULL; t <= HS_AVRO_STRING; t++) {
    if (strcmp(s, type_names[t]) == 0) {
      *out = (hs_avro_type)t;
      return true;
    }
  }
  return false;
}

/* ------------------------------------------------------------- parsing */

typedef struct named_entry {
  struct named_entry *next;
  hs_avro_node *node;
} named_entry;

typedef struct parse_ctx {
  hs_avro_schema *schema;
  hs_error *err;
  named_entry *named;
  char path[256];
  size_t path_len;
} parse_ctx;

/* Append a path component; returns the previous length to restore. */
static size_t path_push(parse_ctx *c, const char *fmt, const char *s, size_t i) {
  size_t mark = c->path_len;
  size_t room = sizeof c->path - c->path_len;
  int n = s != NULL ? snprintf(c->path + c->path_len, room, fmt, s)
                    : snprintf(c->path + c->path_len, room, fmt, i);
  if (n > 0) c->path_len = (size_t)n >= room ? sizeof c->path - 1 : c->path_len + (size_t)n;
  return mark;
}

static void path_pop(parse_ctx *c, size_t mark) {
  c->path_len = mark;
  c->path[mark] = '\0';
}

static hs_status fail(parse_ctx *c, hs_status st, const char *what) {
  return hs_error_set(c->err, st, "avro schema at %s: %s", c->path, what);
}

static hs_status nomem(parse_ctx *c) {
  return fail(c, HS_ERR_NOMEM, "out of memory");
}

static const char *arena_str(parse_ctx *c, const char *s) {
  return hs_arena_strndup(&c->schema->arena, s, strlen(s));
}

/* Hold a reference to `j` for the schema's lifetime. */
static bool keep(parse_ctx *c, json_t *j) {
  return json_array_append(c->schema->keep, j) == 0;
}

static bool valid_name_part(const char *s, size_t n) {
  if (n == 0) return false;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    bool alpha = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
    if (!alpha && !(i > 0 && ch >= '0' && ch <= '9')) return false;
  }
  return true;
}

static bool valid_fullname(const char *s) {
  const char *p = s;
  for (;;) {
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    if (!valid_name_part(p, n)) return false;
    if (!dot) return true;
    p = dot + 1;
  }
}

static hs_avro_node *named_find(parse_ctx *c, const char *fullname) {
  for (named_entry *e = c->named; e; e = e->next)
    if (strcmp(e->node->fullname, fullname) == 0) return e->node;
  return NULL;
}

/* Resolve a type name used as a reference, per the spec: a name without a
 * dot is first looked up in the enclosing namespace. */
static hs_avro_node *named_lookup(parse_ctx *c, const char *name, const char *ns) {
  if (strchr(name, '.') == NULL && ns != NULL && ns[0] != '\0') {
    char buf[512];
    int n = snprintf(buf, sizeof buf, "%s.%s", ns, name);
    if (n > 0 && (size_t)n < sizeof buf) {
      hs_avro_node *hit = named_find(c, buf);
      if (hit) return hit;
    }
  }
  return named_find(c, name);
}

/* Copy every member of `obj` not listed in `known` into a new object; NULL
 * result (and HS_OK) when none remain. */
static hs_status collect_attrs(parse_ctx *c, json_t *obj, const char *const *known, json_t **out) {
  *out = NULL;
  const char *key;
  json_t *val;
  json_object_foreach(obj, key, val) {
    bool skip = false;
    for (const char *const *k = known; *k; k++)
      if (strcmp(*k, key) == 0) skip = true;
    if (skip) continue;
    if (*out == NULL) {
      *out = json_object();
      if (*out == NULL || !keep(c, *out)) {
        json_decref(*out);
        *out = NULL;
        return nomem(c);
      }
      json_decref(*out); /* `keep` holds it */
    }
    if (json_object_set(*out, key, val) != 0) return nomem(c);
  }
  return HS_OK;
}

static hs_status parse_type(parse_ctx *c, json_t *j, const char *ns, int depth, hs_avro_node **out);

static hs_avro_node *node_new(parse_ctx *c, hs_avro_type type) {
  hs_avro_node *n = hs_arena_alloc(&c->schema->arena, sizeof *n);
  if (n) n->type = type;
  return n;
}

static hs_status get_opt_string(parse_ctx *c, json_t *obj, const char *key, const char **out) {
  *out = NULL;
  json_t *v = json_object_get(obj, key);
  if (v == NULL) return HS_OK;
  if (!json_is_string(v)) {
    size_t m = path_push(c, ".%s", key, 0);
    hs_status st = fail(c, HS_ERR_SCHEMA, "expected a string");
    path_pop(c, m);
    return st;
  }
  *out = arena_str(c, json_string_value(v));
  return *out ? HS_OK : nomem(c);
}

/* Apply logicalType to a node of a primitive or fixed type. A logical type
 * that does not fit its underlying type is kept verbatim but not interpreted
 * (the spec says such annotations are ignored). */
static hs_status parse_logical(parse_ctx *c, json_t *obj, hs_avro_node *n, bool *decimal_ok) {
  *decimal_ok = false;
  json_t *lt = json_object_get(obj, "logicalType");
  if (lt == NULL) return HS_OK;
  if (!json_is_string(lt)) return fail(c, HS_ERR_SCHEMA, "logicalType must be a string");
  const char *s = json_string_value(lt);
  n->logical_name = arena_str(c, s);
  if (n->logical_name == NULL) return nomem(c);
  hs_avro_type t = n->type;
  n->logical = HS_AVRO_LOGICAL_OTHER;
  if (strcmp(s, "date") == 0 && t == HS_AVRO_INT) n->logical = HS_AVRO_LOGICAL_DATE;
  if (strcmp(s, "time-millis") == 0 && t == HS_AVRO_INT) n->logical = HS_AVRO_LOGICAL_TIME_MILLIS;
  if (strcmp(s, "time-micros") == 0 && t == HS_AVRO_LONG) n->logical = HS_AVRO_LOGICAL_TIME_MICROS;
  if (strcmp(s, "timestamp-millis") == 0 && t == HS_AVRO_LONG)
    n->logical = HS_AVRO_LOGICAL_TIMESTAMP_MILLIS;
  if (strcmp(s, "timestamp-micros") == 0 && t == HS_AVRO_LONG)
    n->logical = HS_AVRO_LOGICAL_TIMESTAMP_MICROS;
  if (strcmp(s, "uuid") == 0 &&
      (t == HS_AVRO_STRING || (t == HS_AVRO_FIXED && n->fixed_size == 16)))
    n->logical = HS_AVRO_LOGICAL_UUID;
  if (strcmp(s, "decimal") == 0 && (t == HS_AVRO_BYTES || t == HS_AVRO_FIXED)) {
    json_t *p = json_object_get(obj, "precision"), *sc = json_object_get(obj, "scale");
    json_int_t pv = json_is_integer(p) ? json_integer_value(p) : 0;
    json_int_t sv = sc == NULL ? 0 : json_is_integer(sc) ? json_integer_value(sc) : -1;
    if (pv > 0 && pv <= INT32_MAX && sv >= 0 && sv <= pv) {
      n->logical = HS_AVRO_LOGICAL_DECIMAL;
      n->precision = (int32_t)pv;
      n->scale = (int32_t)sv;
      *decimal_ok = true;
    }
  }
  return HS_OK;
}

static hs_status register_named(parse_ctx *c, json_t *obj, hs_avro_node *n, const char *ns,
                                const char **inner_ns) {
  hs_status st;
  json_t *name = json_object_get(obj, "name");
  if (!json_is_string(name)) return fail(c, HS_ERR_SCHEMA, "named type needs a string \"name\"");
  n->name = arena_str(c, json_string_value(name));
  if (n->name == NULL) return nomem(c);
  if ((st = get_opt_string(c, obj, "namespace", &n->namespace_)) != HS_OK) return st;
  if ((st = get_opt_string(c, obj, "doc", &n->doc)) != HS_OK) return st;
  const char *eff_ns = n->namespace_ ? n->namespace_ : ns;
  if (strchr(n->name, '.') != NULL || eff_ns == NULL || eff_ns[0] == '\0') {
    n->fullname = n->name;
  } else {
    size_t a = strlen(eff_ns), b = strlen(n->name);
    char *f = hs_arena_alloc(&c->schema->arena, a + b + 2);
    if (f == NULL) return nomem(c);
    memcpy(f, eff_ns, a);
    f[a] = '.';
    memcpy(f + a + 1, n->name, b + 1);
    n->fullname = f;
  }
  if (!valid_fullname(n->fullname)) return fail(c, HS_ERR_SCHEMA, "invalid type name");
  hs_avro_type prim;
  if (primitive_from_name(n->fullname, &prim))
    return fail(c, HS_ERR_SCHEMA, "a named type may not redefine a primitive type name");
  if (named_find(c, n->fullname) != NULL) {
    return hs_error_set(c->err, HS_ERR_SCHEMA, "avro schema at %s: type \"%s\" is defined twice",
                        c->path, n->fullname);
  }
  named_entry *e = hs_arena_alloc(&c->schema->arena, sizeof *e);
  if (e == NULL) return nomem(c);
  e->node = n;
  e->next = c->named;
  c->named = e;
  /* The namespace of a fullname is everything before its last dot. */
  const char *dot = strrchr(n->fullname, '.');
  *inner_ns =
      dot ? hs_arena_strndup(&c->schema->arena, n->fullname, (size_t)(dot - n->fullname)) : "";
  return *inner_ns ? HS_OK : nomem(c);
}

static hs_status parse_fields(parse_ctx *c, json_t *obj, hs_avro_node *n, const char *ns,
                              int depth) {
  static const char *const known[] = {"name", "type", "doc", "default", NULL};
  json_t *fields = json_object_get(obj, "fields");
  if (!json_is_array(fields)) return fail(c, HS_ERR_SCHEMA, "record needs a \"fields\" array");
  n->n_fields = json_array_size(fields);
  n->fields = hs_arena_alloc(&c->schema->arena, n->n_fields * sizeof *n->fields + 1);
  if (n->fields == NULL) return nomem(c);
  for (size_t i = 0; i < n->n_fields; i++) {
    size_t m = path_push(c, ".fields[%zu]", NULL, i);
    json_t *fj = json_array_get(fields, i);
    hs_avro_field *f = &n->fields[i];
    hs_status st = HS_OK;
    json_t *name = json_object_get(fj, "name");
    if (!json_is_object(fj)) {
      st = fail(c, HS_ERR_SCHEMA, "a field must be an object");
    } else if (!json_is_string(name) ||
               !valid_name_part(json_string_value(name), strlen(json_string_value(name)))) {
      st = fail(c, HS_ERR_SCHEMA, "a field needs a valid string \"name\"");
    } else if ((f->name = arena_str(c, json_string_value(name))) == NULL) {
      st = nomem(c);
    } else {
      for (size_t k = 0; k < i && st == HS_OK; k++)
        if (strcmp(n->fields[k].name, f->name) == 0)
          st = fail(c, HS_ERR_SCHEMA, "duplicate field name");
    }
    if (st == HS_OK) st = get_opt_string(c, fj, "doc", &f->doc);
    if (st == HS_OK) {
      json_t *def = json_object_get(fj, "default");
      if (def != NULL) {
        if (!keep(c, def)) st = nomem(c);
        f->default_json = def;
      }
    }
    if (st == HS_OK) st = collect_attrs(c, fj, known, &f->attrs);
    if (st == HS_OK) {
      json_t *tj = json_object_get(fj, "type");
      size_t m2 = path_push(c, ".type", NULL, 0);
      st = tj == NULL ? fail(c, HS_ERR_SCHEMA, "a field needs a \"type\"")
                      : parse_type(c, tj, ns, depth + 1, &f->type);
      path_pop(c, m2);
    }
    path_pop(c, m);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

static hs_status parse_enum(parse_ctx *c, json_t *obj, hs_avro_node *n) {
  json_t *syms = json_object_get(obj, "symbols");
  if (!json_is_array(syms)) return fail(c, HS_ERR_SCHEMA, "enum needs a \"symbols\" array");
  n->n_symbols = json_array_size(syms);
  n->symbols = hs_arena_alloc(&c->schema->arena, n->n_symbols * sizeof *n->symbols + 1);
  if (n->symbols == NULL) return nomem(c);
  for (size_t i = 0; i < n->n_symbols; i++) {
    json_t *s = json_array_get(syms, i);
    if (!json_is_string(s) || !valid_name_part(json_string_value(s), strlen(json_string_value(s))))
      return fail(c, HS_ERR_SCHEMA, "enum symbols must be valid names");
    n->symbols[i] = arena_str(c, json_string_value(s));
    if (n->symbols[i] == NULL) return nomem(c);
    for (size_t k = 0; k < i; k++)
      if (strcmp(n->symbols[k], n->symbols[i]) == 0)
        return fail(c, HS_ERR_SCHEMA, "duplicate enum symbol");
  }
  hs_status st = get_opt_string(c, obj, "default", &n->enum_default);
  if (st != HS_OK) return st;
  if (n->enum_default != NULL) {
    bool found = false;
    for (size_t i = 0; i < n->n_symbols; i++) found |= strcmp(n->symbols[i], n->enum_default) == 0;
    if (!found) return fail(c, HS_ERR_SCHEMA, "enum default is not one of its symbols");
  }
  return HS_OK;
}

static hs_status parse_object(parse_ctx *c, json_t *obj, const char *ns, int depth,
                              hs_avro_node **out) {
  static const char *const known_record[] = {"type", "name", "namespace", "doc", "fields", NULL};
  static const char *const known_enum[] = {"type",    "name",    "namespace", "doc",
                                           "symbols", "default", NULL};
  static const char *const known_fixed[] = {"type", "name",        "namespace", "doc",
                                            "size", "logicalType", NULL};
  static const char *const known_fixed_decimal[] = {
      "type", "name", "namespace", "doc", "size", "logicalType", "precision", "scale", NULL};
  static const char *const known_decimal[] = {"type", "logicalType", "precision", "scale", NULL};
  static const char *const known_plain[] = {"type", "logicalType", NULL};
  static const char *const known_array[] = {"type", "items", NULL};
  static const char *const known_map[] = {"type", "values", NULL};
  json_t *tj = json_object_get(obj, "type");
  if (tj == NULL) return fail(c, HS_ERR_SCHEMA, "object without \"type\"");
  if (!json_is_string(tj)) {
    /* {"type": {...}} or {"type": [...]}: the wrapper adds nothing. */
    size_t m = path_push(c, ".type", NULL, 0);
    hs_status st = parse_type(c, tj, ns, depth + 1, out);
    path_pop(c, m);
    return st;
  }
  const char *t = json_string_value(tj);
  hs_avro_type prim;
  hs_avro_node *n;
  hs_status st;
  bool decimal_ok = false;
  if (primitive_from_name(t, &prim)) {
    if ((n = node_new(c, prim)) == NULL) return nomem(c);
    if ((st = parse_logical(c, obj, n, &decimal_ok)) != HS_OK) return st;
    st = collect_attrs(c, obj, decimal_ok ? known_decimal : known_plain, &n->attrs);
  } else if (strcmp(t, "record") == 0 || strcmp(t, "error") == 0) {
    if ((n = node_new(c, HS_AVRO_RECORD)) == NULL) return nomem(c);
    const char *inner;
    if ((st = register_named(c, obj, n, ns, &inner)) != HS_OK) return st;
    if ((st = parse_fields(c, obj, n, inner, depth)) != HS_OK) return st;
    st = collect_attrs(c, obj, known_record, &n->attrs);
    /* "error" is kept so that it round-trips. */
    if (st == HS_OK && strcmp(t, "error") == 0) n->logical_name = "error";
  } else if (strcmp(t, "enum") == 0) {
    if ((n = node_new(c, HS_AVRO_ENUM)) == NULL) return nomem(c);
    const char *inner;
    if ((st = register_named(c, obj, n, ns, &inner)) != HS_OK) return st;
    if ((st = parse_enum(c, obj, n)) != HS_OK) return st;
    st = collect_attrs(c, obj, known_enum, &n->attrs);
  } else if (strcmp(t, "fixed") == 0) {
    if ((n = node_new(c, HS_AVRO_FIXED)) == NULL) return nomem(c);
    const char *inner;
    if ((st = register_named(c, obj, n, ns, &inner)) != HS_OK) return st;
    json_t *size = json_object_get(obj, "size");
    if (!json_is_integer(size) || json_integer_value(size) < 0 ||
        json_integer_value(size) > INT32_MAX)
      return fail(c, HS_ERR_SCHEMA, "fixed needs a non-negative integer \"size\"");
    n->fixed_size = (size_t)json_integer_value(size);
    if ((st = parse_logical(c, obj, n, &decimal_ok)) != HS_OK) return st;
    st = collect_attrs(c, obj, decimal_ok ? known_fixed_decimal : known_fixed, &n->attrs);
  } else if (strcmp(t, "array") == 0 || strcmp(t, "map") == 0) {
    bool is_array = t[0] == 'a';
    if ((n = node_new(c, is_array ? HS_AVRO_ARRAY : HS_AVRO_MAP)) == NULL) return nomem(c);
    const char *key = is_array ? "items" : "values";
    json_t *ij = json_object_get(obj, key);
    size_t m = path_push(c, ".%s", key, 0);
    st = ij == NULL ? fail(c, HS_ERR_SCHEMA, "missing")
                    : parse_type(c, ij, ns, depth + 1, &n->items);
    path_pop(c, m);
    if (st == HS_OK) st = collect_attrs(c, obj, is_array ? known_array : known_map, &n->attrs);
  } else {
    /* {"type": "some.Name"}: a reference in object form. */
    size_t m = path_push(c, ".type", NULL, 0);
    st = parse_type(c, tj, ns, depth + 1, out);
    path_pop(c, m);
    return st;
  }
  *out = n;
  return st;
}

static hs_status parse_type(parse_ctx *c, json_t *j, const char *ns, int depth,
                            hs_avro_node **out) {
  if (depth > HS_AVRO_SCHEMA_DEPTH_MAX)
    return fail(c, HS_ERR_UNSUPPORTED, "schema nested too deeply");
  if (json_is_string(j)) {
    const char *s = json_string_value(j);
    hs_avro_type prim;
    if (primitive_from_name(s, &prim)) {
      *out = node_new(c, prim);
      return *out ? HS_OK : nomem(c);
    }
    *out = named_lookup(c, s, ns);
    if (*out == NULL) {
      return hs_error_set(c->err, HS_ERR_SCHEMA, "avro schema at %s: unknown type name \"%s\"",
                          c->path, s);
    }
    return HS_OK;
  }
  if (json_is_object(j)) return parse_object(c, j, ns, depth, out);
  if (json_is_array(j)) {
    hs_avro_node *n = node_new(c, HS_AVRO_UNION);
    if (n == NULL) return nomem(c);
    n->n_branches = json_array_size(j);
    n->branches = hs_arena_alloc(&c->schema->arena, n->n_branches * sizeof *n->branches + 1);
    if (n->branches == NULL) return nomem(c);
    for (size_t i = 0; i < n->n_branches; i++) {
      size_t m = path_push(c, "[%zu]", NULL, i);
      hs_status st = parse_type(c, json_array_get(j, i), ns, depth + 1, &n->branches[i]);
      const hs_avro_node *b = n->branches[i];
      if (st == HS_OK && b->type == HS_AVRO_UNION)
        st = fail(c, HS_ERR_SCHEMA, "a union may not contain a union");
      for (size_t k = 0; k < i && st == HS_OK; k++) {
        const hs_avro_node *o = n->branches[k];
        bool named = b->fullname != NULL;
        if (o->type == b->type && (!named || strcmp(o->fullname, b->fullname) == 0))
          st = fail(c, HS_ERR_SCHEMA, "a union may not contain the same type twice");
      }
      path_pop(c, m);
      if (st != HS_OK) return st;
    }
    *out = n;
    return HS_OK;
  }
  return fail(c, HS_ERR_SCHEMA, "a type must be a string, object or array");
}

hs_status hs_avro_schema_parse(const char *json, size_t len, hs_avro_schema **out, hs_error *err) {
  *out = NULL;
  json_error_t jerr;
  json_t *root = json_loadb(json, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL) {
    return hs_error_set(err, HS_ERR_SCHEMA, "avro schema: invalid JSON at byte %d: %s",
                        jerr.position, jerr.text);
  }
  hs_avro_schema *s = hs_calloc(1, sizeof *s);
  if (s == NULL) {
    json_decref(root);
    return hs_error_set(err, HS_ERR_NOMEM, "avro schema: out of memory");
  }
  hs_arena_init(&s->arena);
  s->arena.block_bytes = 8192;
  s->refs = 1;
  s->keep = json_array();
  parse_ctx c = {.schema = s, .err = err, .path = "$", .path_len = 1};
  hs_status st = s->keep == NULL ? nomem(&c) : parse_type(&c, root, NULL, 0, &s->root);
  json_decref(root); /* attributes we kept hold their own references */
  if (st != HS_OK) {
    hs_avro_schema_free(s);
    return st;
  }
  *out = s;
  return HS_OK;
}

void hs_avro_schema_free(hs_avro_schema *schema) {
  if (schema == NULL || __atomic_sub_fetch(&schema->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
  json_decref(schema->keep);
  hs_arena_reset(&schema->arena);
  hs_free(schema);
}

const hs_avro_node *hs_avro_schema_root(const hs_avro_schema *schema) {
  return schema->root;
}

/* ------------------------------------------------------- serialization */

typedef struct emit_ctx {
  const hs_avro_node **done; /* named nodes already defined */
  size_t n_done, cap_done;
  bool oom;
} emit_ctx;

static bool emit_seen(emit_ctx *e, const hs_avro_node *n) {
  for (size_t i = 0; i < e->n_done; i++)
    if (e->done[i] == n) return true;
  return false;
}

static bool emit_mark(emit_ctx *e, const hs_avro_node *n) {
  if (e->n_done == e->cap_done) {
    size_t cap = e->cap_done ? e->cap_done * 2 : 16;
    const hs_avro_node **d = hs_realloc(e->done, cap * sizeof *d);
    if (d == NULL) return false;
    e->done = d;
    e->cap_done = cap;
  }
  e->done[e->n_done++] = n;
  return true;
}

/* Set obj[key] = val, consuming val; records OOM. */
static void put(emit_ctx *e, json_t *obj, const char *key, json_t *val) {
  if (val == NULL || json_object_set_new(obj, key, val) != 0) e->oom = true;
}

static void put_attrs(emit_ctx *e, json_t *obj, const json_t *attrs) {
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)attrs, key, val) {
    if (json_object_set(obj, key, val) != 0) e->oom = true;
  }
}

static json_t *emit(emit_ctx *e, const hs_avro_node *n, const char *ns);

static json_t *emit_named_head(emit_ctx *e, const hs_avro_node *n, const char *type, const char *ns,
                               const char **inner_ns) {
  json_t *o = json_object();
  if (o == NULL) return NULL;
  put(e, o, "type", json_string(type));
  put(e, o, "name", json_string(n->name));
  /* Write the namespace when given, or when the enclosing namespace at
   * this point would resolve the short name to a different full name. */
  const char *dot = strrchr(n->fullname, '.');
  size_t ns_len = dot ? (size_t)(dot - n->fullname) : 0;
  bool inherits =
      strchr(n->name, '.') != NULL ||
      (ns ? strlen(ns) == ns_len && strncmp(ns, n->fullname, ns_len) == 0 : ns_len == 0);
  if (n->namespace_ != NULL) {
    put(e, o, "namespace", json_string(n->namespace_));
  } else if (!inherits) {
    put(e, o, "namespace", json_stringn(n->fullname, ns_len));
  }
  if (n->doc) put(e, o, "doc", json_string(n->doc));
  *inner_ns = n->fullname; /* callers derive the prefix from here */
  return o;
}

static json_t *emit_body(emit_ctx *e, const hs_avro_node *n, const char *ns) {
  json_t *o;
  const char *inner;
  char nsbuf[512];
  switch (n->type) {
  case HS_AVRO_RECORD:
  case HS_AVRO_ENUM:
  case HS_AVRO_FIXED: {
    const char *tname = n->type == HS_AVRO_RECORD ? (n->logical_name ? "error" : "record")
                        : n->type == HS_AVRO_ENUM ? "enum"
                                                  : "fixed";
    o = emit_named_head(e, n, tname, ns, &inner);
    if (o == NULL) return NULL;
    const char *dot = strrchr(inner, '.');
    size_t nl = dot ? (size_t)(dot - inner) : 0;
    if (nl >= sizeof nsbuf) nl = sizeof nsbuf - 1;
    memcpy(nsbuf, inner, nl);
    nsbuf[nl] = '\0';
    if (n->type == HS_AVRO_RECORD) {
      json_t *fields = json_array();
      for (size_t i = 0; fields && i < n->n_fields; i++) {
        const hs_avro_field *f = &n->fields[i];
        json_t *fo = json_object();
        if (fo == NULL || json_array_append_new(fields, fo) != 0) {
          e->oom = true;
          break;
        }
        put(e, fo, "name", json_string(f->name));
        put(e, fo, "type", emit(e, f->type, nsbuf));
        if (f->doc) put(e, fo, "doc", json_string(f->doc));
        if (f->default_json) put(e, fo, "default", json_incref(f->default_json));
        if (f->attrs) put_attrs(e, fo, f->attrs);
      }
      put(e, o, "fields", fields);
    } else if (n->type == HS_AVRO_ENUM) {
      json_t *syms = json_array();
      for (size_t i = 0; syms && i < n->n_symbols; i++)
        if (json_array_append_new(syms, json_string(n->symbols[i])) != 0) e->oom = true;
      put(e, o, "symbols", syms);
      if (n->enum_default) put(e, o, "default", json_string(n->enum_default));
    } else {
      put(e, o, "size", json_integer((json_int_t)n->fixed_size));
    }
    break;
  }
  case HS_AVRO_ARRAY:
  case HS_AVRO_MAP:
    o = json_object();
    if (o == NULL) return NULL;
    put(e, o, "type", json_string(n->type == HS_AVRO_ARRAY ? "array" : "map"));
    put(e, o, n->type == HS_AVRO_ARRAY ? "items" : "values", emit(e, n->items, ns));
    break;
  case HS_AVRO_UNION:
    o = json_array();
    for (size_t i = 0; o && i < n->n_branches; i++)
      if (json_array_append_new(o, emit(e, n->branches[i], ns)) != 0) e->oom = true;
    return o;
  default:
    if (n->logical_name == NULL && n->attrs == NULL) return json_string(hs_avro_type_name(n->type));
    o = json_object();
    if (o == NULL) return NULL;
    put(e, o, "type", json_string(hs_avro_type_name(n->type)));
    break;
  }
  if (n->logical_name && n->type != HS_AVRO_RECORD) {
    put(e, o, "logicalType", json_string(n->logical_name));
    if (n->logical == HS_AVRO_LOGICAL_DECIMAL) {
      put(e, o, "precision", json_integer(n->precision));
      put(e, o, "scale", json_integer(n->scale));
    }
  }
  if (n->attrs) put_attrs(e, o, n->attrs);
  return o;
}

static json_t *emit(emit_ctx *e, const hs_avro_node *n, const char *ns) {
  if (n->fullname != NULL) {
    if (emit_seen(e, n)) return json_string(n->fullname);
    if (!emit_mark(e, n)) {
      e->oom = true;
      return NULL;
    }
  }
  return emit_body(e, n, ns);
}

hs_status hs_avro_node_to_json(const hs_avro_node *node, char **out, hs_error *err) {
  *out = NULL;
  emit_ctx e = {0};
  json_t *j = emit(&e, node, NULL);
  hs_free(e.done);
  char *s = (j && !e.oom) ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  json_decref(j);
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "avro schema: out of memory serializing");
  *out = hs_strdup(s);
  free(s); /* jansson's allocation, not ours */
  return *out ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "avro schema: out of memory serializing");
}

hs_status hs_avro_schema_to_json(const hs_avro_schema *schema, char **out, hs_error *err) {
  return hs_avro_node_to_json(schema->root, out, err);
}

/* -------------------------------------------------------------- lookups */

int64_t hs_avro_node_field_index(const hs_avro_node *record, const char *name) {
  if (record->type != HS_AVRO_RECORD) return -1;
  for (size_t i = 0; i < record->n_fields; i++)
    if (strcmp(record->fields[i].name, name) == 0) return (int64_t)i;
  return -1;
}

static hs_status attr_int(const json_t *attrs, const char *key, int64_t *out) {
  json_t *v = attrs ? json_object_get(attrs, key) : NULL;
  if (v == NULL) return HS_ERR_NOT_FOUND;
  if (!json_is_integer(v)) return HS_ERR_SCHEMA;
  *out = (int64_t)json_integer_value(v);
  return HS_OK;
}

hs_status hs_avro_field_attr_int(const hs_avro_field *field, const char *key, int64_t *out) {
  return attr_int(field->attrs, key, out);
}

hs_status hs_avro_node_attr_int(const hs_avro_node *node, const char *key, int64_t *out) {
  return attr_int(node->attrs, key, out);
}

size_t hs_avro_node_min_bytes(const hs_avro_node *n, int depth) {
  if (depth > 8) return 0; /* a lower bound: stopping early only under-estimates */
  switch (n->type) {
  case HS_AVRO_NULL: return 0;
  case HS_AVRO_FLOAT: return 4;
  case HS_AVRO_DOUBLE: return 8;
  case HS_AVRO_FIXED: return n->fixed_size;
  case HS_AVRO_RECORD: {
    size_t sum = 0;
    for (size_t i = 0; i < n->n_fields; i++) {
      size_t b = hs_avro_node_min_bytes(n->fields[i].type, depth + 1);
      if (!hs_add_size(sum, b, &sum)) return SIZE_MAX;
    }
    return sum;
  }
  default: return 1; /* a varint, a length or a count */
  }
}
