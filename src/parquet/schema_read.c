/*
 * schema_read.c — turns the depth-first Parquet schema of a file footer into
 * the reader's tree (reader_internal.h): validates the element list, derives
 * each leaf's max definition and repetition levels, and maps every field to
 * an Arrow type.
 *
 * Lists follow parquet-format LogicalTypes.md: the standard 3-level form
 * (LIST group > repeated group > element) and the backward-compatibility
 * rules for 2-level lists (the repeated field is the element when it is a
 * primitive, a group of several fields, or a one-field group named "array"
 * or "<list>_tuple"). Maps are MAP / MAP_KEY_VALUE groups over a repeated
 * key/value group; a repeated field without annotation is a list of
 * required elements. Nothing here trusts the footer: child counts, depth and
 * the leaf count against every row group are checked before use.
 */
#include <stdio.h>
#include <string.h>

#include "../arrow/ipc.h"
#include "reader_internal.h"

typedef struct schema_ctx {
  const hs_pq_file_metadata *md;
  hs_arena *arena;
  hs_error *err;
  /* Per schema element. */
  uint32_t *end;          /* one past the last element of the subtree */
  int32_t *leaves_before; /* number of leaves preceding the element (n + 1 entries) */
  int16_t *def, *rep;
  int32_t *parent;
  /* Fixed-size list columns: JSON {"name": size, ...}, may be NULL. */
  const uint8_t *fixed_json;
  uint32_t fixed_json_len;
} schema_ctx;

/* ---------------------------------------------------------- validation */

/* Walk the subtree at `i` (depth `depth`), filling end/def/rep/parent. */
static hs_status scan_element(schema_ctx *c, uint32_t i, int depth) {
  const hs_pq_file_metadata *md = c->md;
  const hs_pq_schema_element *e = &md->schema[i];
  if (depth > HS_PQ_SCHEMA_DEPTH_MAX) {
    return hs_error_set(c->err, HS_ERR_CORRUPT, "schema: nesting deeper than %d at element %u",
                        HS_PQ_SCHEMA_DEPTH_MAX, i);
  }
  if (e->name == NULL) {
    return hs_error_set(c->err, HS_ERR_CORRUPT, "schema: element %u has no name", i);
  }
  if (i > 0) {
    int32_t p = c->parent[i];
    bool optional = e->has_repetition && e->repetition != HS_PQ_REQUIRED;
    if (!e->has_repetition) {
      return hs_error_set(c->err, HS_ERR_CORRUPT, "schema: field '%s' has no repetition", e->name);
    }
    c->def[i] = (int16_t)(c->def[p] + (optional ? 1 : 0));
    c->rep[i] = (int16_t)(c->rep[p] + (e->repetition == HS_PQ_REPEATED ? 1 : 0));
  }
  if (e->num_children < 0) {
    return hs_error_set(c->err, HS_ERR_CORRUPT, "schema: field '%s' has %d children", e->name,
                        (int)e->num_children);
  }
  uint32_t next = i + 1;
  if (e->num_children == 0 && i > 0) {
    if (!e->has_type) {
      return hs_error_set(c->err, HS_ERR_UNSUPPORTED,
                          "schema: field '%s' is an empty group (no children, no type)", e->name);
    }
    if (e->type == HS_PQ_FIXED_LEN_BYTE_ARRAY && e->type_length <= 0) {
      return hs_error_set(c->err, HS_ERR_CORRUPT,
                          "schema: FIXED_LEN_BYTE_ARRAY field '%s' has type_length %d", e->name,
                          (int)e->type_length);
    }
    if ((uint32_t)e->type > HS_PQ_FIXED_LEN_BYTE_ARRAY) {
      return hs_error_set(c->err, HS_ERR_CORRUPT, "schema: field '%s' has unknown type %d", e->name,
                          (int)e->type);
    }
  }
  if ((uint32_t)e->num_children > md->n_schema - next) {
    return hs_error_set(c->err, HS_ERR_CORRUPT,
                        "schema: field '%s' claims %d children but only %u elements remain",
                        e->name, (int)e->num_children, md->n_schema - next);
  }
  for (int32_t k = 0; k < e->num_children; k++) {
    if (next >= md->n_schema) {
      return hs_error_set(c->err, HS_ERR_CORRUPT,
                          "schema: field '%s' claims %d children but the schema ends", e->name,
                          (int)e->num_children);
    }
    c->parent[next] = (int32_t)i;
    hs_status st = scan_element(c, next, depth + 1);
    if (st != HS_OK) return st;
    next = c->end[next];
  }
  c->end[i] = next;
  return HS_OK;
}

/* ---------------------------------------------------------- Arrow types */

static bool is_list_annot(const hs_pq_schema_element *e) {
  return e->logical.kind == HS_PQ_LT_LIST ||
         (e->logical.kind == HS_PQ_LT_NONE && e->has_converted && e->converted == HS_PQ_CT_LIST);
}

static bool is_map_annot(const hs_pq_schema_element *e) {
  return e->logical.kind == HS_PQ_LT_MAP ||
         (e->logical.kind == HS_PQ_LT_NONE && e->has_converted &&
          (e->converted == HS_PQ_CT_MAP || e->converted == HS_PQ_CT_MAP_KEY_VALUE));
}

static bool decimal_of(const hs_pq_schema_element *e, int32_t *precision, int32_t *scale) {
  if (e->logical.kind == HS_PQ_LT_DECIMAL) {
    *precision = e->logical.decimal_precision;
    *scale = e->logical.decimal_scale;
  } else if (e->logical.kind == HS_PQ_LT_NONE && e->has_converted &&
             e->converted == HS_PQ_CT_DECIMAL) {
    *precision = e->precision;
    *scale = e->scale;
  } else {
    return false;
  }
  /* decimal128 holds 38 digits; wider decimals read as their physical type. */
  return *precision >= 1 && *precision <= 38 && *scale >= 0 && *scale <= *precision;
}

/* Arrow format of a leaf; always succeeds (falls back to the physical type). */
static void leaf_format(const hs_pq_schema_element *e, char *out, size_t cap, bool *is_null) {
  const hs_pq_logical *lt = &e->logical;
  hs_pq_logical_kind k = lt->kind == HS_PQ_LT_OTHER ? HS_PQ_LT_NONE : lt->kind;
  int ct = (k == HS_PQ_LT_NONE && e->has_converted) ? (int)e->converted : -1;
  int32_t p, s;
  *is_null = false;
  if (k == HS_PQ_LT_UNKNOWN) {
    *is_null = true;
    snprintf(out, cap, "n");
    return;
  }
  if (decimal_of(e, &p, &s) && e->type != HS_PQ_BOOLEAN && e->type != HS_PQ_FLOAT &&
      e->type != HS_PQ_DOUBLE && e->type != HS_PQ_INT96) {
    snprintf(out, cap, "d:%d,%d", (int)p, (int)s);
    return;
  }
  const char *f = NULL;
  switch (e->type) {
  case HS_PQ_BOOLEAN: f = "b"; break;
  case HS_PQ_INT32:
    f = "i";
    if (k == HS_PQ_LT_INTEGER) {
      bool sg = lt->int_is_signed;
      if (lt->int_bit_width == 8) f = sg ? "c" : "C";
      if (lt->int_bit_width == 16) f = sg ? "s" : "S";
      if (lt->int_bit_width == 32) f = sg ? "i" : "I";
    } else if (k == HS_PQ_LT_DATE || ct == HS_PQ_CT_DATE) {
      f = "tdD";
    } else if ((k == HS_PQ_LT_TIME && lt->unit == HS_PQ_MILLIS) || ct == HS_PQ_CT_TIME_MILLIS) {
      f = "ttm";
    } else if (ct == HS_PQ_CT_INT_8) {
      f = "c";
    } else if (ct == HS_PQ_CT_UINT_8) {
      f = "C";
    } else if (ct == HS_PQ_CT_INT_16) {
      f = "s";
    } else if (ct == HS_PQ_CT_UINT_16) {
      f = "S";
    } else if (ct == HS_PQ_CT_UINT_32) {
      f = "I";
    }
    break;
  case HS_PQ_INT64:
    f = "l";
    if (k == HS_PQ_LT_INTEGER) {
      if (lt->int_bit_width == 64 && !lt->int_is_signed) f = "L";
    } else if (k == HS_PQ_LT_TIME) {
      if (lt->unit == HS_PQ_MICROS) f = "ttu";
      if (lt->unit == HS_PQ_NANOS) f = "ttn";
    } else if (k == HS_PQ_LT_TIMESTAMP) {
      const char *u = lt->unit == HS_PQ_MILLIS ? "m" : lt->unit == HS_PQ_MICROS ? "u" : "n";
      snprintf(out, cap, "ts%s:%s", u, lt->is_adjusted_to_utc ? "UTC" : "");
      return;
    } else if (ct == HS_PQ_CT_UINT_64) {
      f = "L";
    } else if (ct == HS_PQ_CT_TIME_MICROS) {
      f = "ttu";
    } else if (ct == HS_PQ_CT_TIMESTAMP_MILLIS) {
      f = "tsm:UTC";
    } else if (ct == HS_PQ_CT_TIMESTAMP_MICROS) {
      f = "tsu:UTC";
    }
    break;
  case HS_PQ_INT96: f = "tsn:"; break;
  case HS_PQ_FLOAT: f = "f"; break;
  case HS_PQ_DOUBLE: f = "g"; break;
  case HS_PQ_BYTE_ARRAY:
    f = "z";
    if (k == HS_PQ_LT_STRING || k == HS_PQ_LT_ENUM || k == HS_PQ_LT_JSON || ct == HS_PQ_CT_UTF8 ||
        ct == HS_PQ_CT_ENUM || ct == HS_PQ_CT_JSON) {
      f = "u";
    }
    break;
  case HS_PQ_FIXED_LEN_BYTE_ARRAY:
    if (k == HS_PQ_LT_FLOAT16 && e->type_length == 2) {
      f = "e";
      break;
    }
    snprintf(out, cap, "w:%d", (int)e->type_length);
    return;
  }
  snprintf(out, cap, "%s", f ? f : "z");
}

/* ----------------------------------------------------------- tree build */

static hs_pq_node *node_new(schema_ctx *c, hs_pq_node_kind kind, uint32_t e, int16_t slot_rep,
                            int16_t slot_def, int32_t n_children) {
  hs_pq_node *n = hs_arena_alloc(c->arena, sizeof *n);
  if (n == NULL) return NULL;
  n->kind = kind;
  n->elem = &c->md->schema[e];
  n->name = n->elem->name;
  n->has_field_id = n->elem->has_field_id;
  n->field_id = n->elem->field_id;
  n->slot_rep = slot_rep;
  n->slot_def = slot_def;
  n->valid_def = c->def[e];
  n->first_leaf = c->leaves_before[e];
  n->leaf_end = c->leaves_before[c->end[e]];
  n->leaf = -1;
  n->n_children = n_children;
  if (n_children > 0) {
    n->children = hs_arena_alloc(c->arena, sizeof(hs_pq_node *) * (size_t)n_children);
    if (n->children == NULL) return NULL;
  }
  return n;
}

static hs_status oom(schema_ctx *c) {
  return hs_error_set(c->err, HS_ERR_NOMEM, "schema: out of memory building the schema tree");
}

static hs_status build_node(schema_ctx *c, uint32_t e, int16_t slot_rep, int16_t slot_def,
                            bool as_element, hs_pq_node **out);

/* A list node over repeated field `r` whose element is element `el`
 * (el == r for 2-level lists, where the repeated field is the element). */
static hs_status build_list(schema_ctx *c, uint32_t e, uint32_t r, uint32_t el, int16_t slot_rep,
                            int16_t slot_def, hs_pq_node **out) {
  hs_pq_node *n = node_new(c, HS_PQ_NODE_LIST, e, slot_rep, slot_def, 1);
  if (n == NULL) return oom(c);
  n->elem_rep = c->rep[r];
  n->elem_def = c->def[r];
  snprintf(n->format, sizeof n->format, "+l");
  hs_status st = build_node(c, el, n->elem_rep, n->elem_def, el == r, &n->children[0]);
  if (st != HS_OK) return st;
  *out = n;
  return HS_OK;
}

static hs_status build_node(schema_ctx *c, uint32_t e, int16_t slot_rep, int16_t slot_def,
                            bool as_element, hs_pq_node **out) {
  const hs_pq_schema_element *el = &c->md->schema[e];
  hs_status st;
  if (el->repetition == HS_PQ_REPEATED && !as_element) {
    /* A bare repeated field: a non-null list of required elements. */
    st = build_list(c, e, e, e, slot_rep, slot_def, out);
    if (st == HS_OK) (*out)->valid_def = (int16_t)(c->def[e] - 1);
    return st;
  }
  bool nullable = !as_element && el->repetition == HS_PQ_OPTIONAL;
  if (el->num_children == 0) {
    bool is_null;
    hs_pq_node *n = node_new(c, HS_PQ_NODE_LEAF, e, slot_rep, slot_def, 0);
    if (n == NULL) return oom(c);
    leaf_format(el, n->format, sizeof n->format, &is_null);
    if (is_null) n->kind = HS_PQ_NODE_NULL;
    n->leaf = c->leaves_before[e];
    n->nullable = nullable || is_null;
    st = hs_arrow_type_parse(n->format, &n->atype, c->err);
    if (st != HS_OK) return st;
    *out = n;
    return HS_OK;
  }
  uint32_t r = e + 1; /* first child */
  const hs_pq_schema_element *rel = &c->md->schema[r];
  if (is_list_annot(el)) {
    if (el->num_children != 1 || rel->repetition != HS_PQ_REPEATED) {
      return hs_error_set(c->err, HS_ERR_UNSUPPORTED,
                          "schema: LIST field '%s' must have exactly one repeated child", el->name);
    }
    uint32_t elem_e = r + 1;
    size_t nlen = strlen(el->name);
    bool two_level =
        rel->num_children != 1 || strcmp(rel->name, "array") == 0 ||
        (strncmp(rel->name, el->name, nlen) == 0 && strcmp(rel->name + nlen, "_tuple") == 0);
    if (two_level) elem_e = r;
    st = build_list(c, e, r, elem_e, slot_rep, slot_def, out);
    if (st == HS_OK) (*out)->nullable = nullable;
    return st;
  }
  if (is_map_annot(el) && !(as_element && el->converted == HS_PQ_CT_MAP_KEY_VALUE)) {
    if (el->num_children != 1 || rel->repetition != HS_PQ_REPEATED || rel->num_children < 1 ||
        rel->num_children > 2) {
      return hs_error_set(c->err, HS_ERR_UNSUPPORTED,
                          "schema: MAP field '%s' must hold one repeated group of key and value",
                          el->name);
    }
    uint32_t key = r + 1;
    if (c->md->schema[key].repetition != HS_PQ_REQUIRED) {
      return hs_error_set(c->err, HS_ERR_UNSUPPORTED,
                          "schema: MAP field '%s': keys must be required", el->name);
    }
    if (rel->num_children == 1) {
      /* Keys only: read as a list of keys, as pyarrow does. */
      st = build_list(c, e, r, key, slot_rep, slot_def, out);
      if (st == HS_OK) (*out)->nullable = nullable;
      return st;
    }
    hs_pq_node *n = node_new(c, HS_PQ_NODE_MAP, e, slot_rep, slot_def, 1);
    if (n == NULL) return oom(c);
    n->nullable = nullable;
    n->elem_rep = c->rep[r];
    n->elem_def = c->def[r];
    snprintf(n->format, sizeof n->format, "+m");
    hs_pq_node *ent = node_new(c, HS_PQ_NODE_STRUCT, r, n->elem_rep, n->elem_def, 2);
    if (ent == NULL) return oom(c);
    ent->name = "entries";
    ent->has_field_id = false;
    snprintf(ent->format, sizeof ent->format, "+s");
    n->children[0] = ent;
    st = build_node(c, key, n->elem_rep, n->elem_def, false, &ent->children[0]);
    if (st == HS_OK)
      st = build_node(c, c->end[key], n->elem_rep, n->elem_def, false, &ent->children[1]);
    if (st != HS_OK) return st;
    *out = n;
    return HS_OK;
  }
  hs_pq_node *n = node_new(c, HS_PQ_NODE_STRUCT, e, slot_rep, slot_def, el->num_children);
  if (n == NULL) return oom(c);
  n->nullable = nullable;
  snprintf(n->format, sizeof n->format, "+s");
  uint32_t ch = r;
  for (int32_t k = 0; k < el->num_children; k++) {
    st = build_node(c, ch, slot_rep, slot_def, false, &n->children[k]);
    if (st != HS_OK) return st;
    ch = c->end[ch];
  }
  *out = n;
  return HS_OK;
}

/* --------------------------------------------------- fixed-size lists */

/* Find "name": N in the flat JSON object of fixed-size list columns. The
 * writer emits keys without escapes; anything unexpected means "absent". */
static int64_t fixed_size_of(const schema_ctx *c, const char *name) {
  if (c->fixed_json == NULL) return -1;
  const char *p = (const char *)c->fixed_json, *endp = p + c->fixed_json_len;
  size_t nlen = strlen(name);
  while (p < endp) {
    if (*p != '"') {
      p++;
      continue;
    }
    const char *ks = ++p;
    while (p < endp && *p != '"') p++;
    if (p >= endp) return -1;
    size_t klen = (size_t)(p - ks);
    p++;
    while (p < endp && (*p == ' ' || *p == ':')) p++;
    int64_t v = 0;
    bool digits = false;
    while (p < endp && *p >= '0' && *p <= '9' && v < INT32_MAX) {
      v = v * 10 + (*p++ - '0');
      digits = true;
    }
    if (digits && klen == nlen && memcmp(ks, name, nlen) == 0) return v;
  }
  return -1;
}

static void apply_fixed_lists(schema_ctx *c, hs_pq_node *root) {
  for (int32_t i = 0; i < root->n_children; i++) {
    hs_pq_node *n = root->children[i];
    if (n->kind != HS_PQ_NODE_LIST || n->children[0]->kind != HS_PQ_NODE_LEAF) continue;
    int64_t size = fixed_size_of(c, n->name);
    if (size <= 0 || size > INT32_MAX) continue;
    n->kind = HS_PQ_NODE_FIXED_LIST;
    n->fixed_size = (int32_t)size;
    snprintf(n->format, sizeof n->format, "+w:%d", (int)size);
  }
}

/* ------------------------------------------------------ ARROW:schema */

/* Arrow writers (pyarrow, ours) store the schema they were given as
 * "ARROW:schema" (arrow/ipc.h). Where its type refines the Parquet-derived
 * one without changing the data layout, the node takes it:
 *   fixed-size list of a primitive   <- LIST of the same element type (each
 *                                       list is checked to hold N: a schema
 *                                       that lies about N fails the read)
 *   timestamp with a named time zone <- timestamp UTC of the same unit
 *   duration                         <- INT64 without annotation
 *   binary <-> string                (same offsets and bytes)
 * Refinements that need the values converted (large offsets, date64,
 * time32[s], timestamp[s]) are not applied: those columns keep their
 * Parquet-derived type. The message is untrusted: anything malformed,
 * unsupported or not matching the tree is ignored, never an error. */

static bool is_ts_utc(const char *f) {
  return strncmp(f, "ts", 2) == 0 && f[2] != '\0' && f[3] == ':' && f[4] != '\0';
}

static void refine_node(hs_pq_node *n, const struct ArrowSchema *a, int depth) {
  if (a == NULL || a->format == NULL || a->dictionary != NULL || depth > HS_PQ_SCHEMA_DEPTH_MAX)
    return;
  const char *f = a->format, *have = n->format;
  switch (n->kind) {
  case HS_PQ_NODE_STRUCT:
    if (strcmp(f, "+s") != 0 || a->n_children != n->n_children) return;
    for (int32_t i = 0; i < n->n_children; i++)
      if (a->children[i] && a->children[i]->name &&
          strcmp(a->children[i]->name, n->children[i]->name) == 0)
        refine_node(n->children[i], a->children[i], depth + 1);
    return;
  case HS_PQ_NODE_MAP:
    if (strcmp(f, "+m") == 0 && a->n_children == 1)
      refine_node(n->children[0], a->children[0], depth + 1);
    return;
  case HS_PQ_NODE_LIST:
    if (a->n_children != 1) return;
    if (strcmp(f, "+l") == 0 || strcmp(f, "+L") == 0) {
      if (f[1] == 'L') snprintf(n->format, sizeof n->format, "+L");
      refine_node(n->children[0], a->children[0], depth + 1);
    } else if (strncmp(f, "+w:", 3) == 0 && n->children[0]->kind == HS_PQ_NODE_LEAF &&
               a->children[0] && a->children[0]->format &&
               strcmp(a->children[0]->format, n->children[0]->format) == 0) {
      int size = 0;
      const char *p = f + 3;
      while (*p >= '0' && *p <= '9' && size < 100000000) size = size * 10 + (*p++ - '0');
      if (*p != '\0' || size <= 0) return;
      n->kind = HS_PQ_NODE_FIXED_LIST;
      n->fixed_size = size;
      snprintf(n->format, sizeof n->format, "+w:%d", size);
      refine_node(n->children[0], a->children[0], depth + 1);
    }
    return;
  case HS_PQ_NODE_FIXED_LIST:
    if (a->n_children == 1) refine_node(n->children[0], a->children[0], depth + 1);
    return;
  case HS_PQ_NODE_LEAF: break;
  default: return;
  }
  bool ok = (strcmp(have, "l") == 0 && strncmp(f, "tD", 2) == 0 && f[2] != '\0' && f[3] == '\0') ||
            ((strcmp(have, "u") == 0 || strcmp(have, "z") == 0) &&
             (strcmp(f, "u") == 0 || strcmp(f, "z") == 0 || strcmp(f, "U") == 0 ||
              strcmp(f, "Z") == 0)) ||
            (is_ts_utc(have) && is_ts_utc(f) && have[2] == f[2]);
  if (!ok || strlen(f) >= sizeof n->format) return;
  hs_arrow_type t;
  if (hs_arrow_type_parse(f, &t, NULL) != HS_OK) return;
  snprintf(n->format, sizeof n->format, "%s", f);
  (void)hs_arrow_type_parse(n->format, &n->atype, NULL); /* timezone points into format */
}

static void apply_arrow_schema(const hs_pq_file_metadata *md, hs_pq_node *root) {
  const hs_pq_key_value *kv = NULL;
  for (uint32_t i = 0; i < md->n_key_value_metadata; i++) {
    const hs_pq_key_value *k = &md->key_value_metadata[i];
    if (k->key && k->has_value && strcmp(k->key, HS_ARROW_IPC_SCHEMA_KEY) == 0) kv = k;
  }
  if (kv == NULL || kv->value.len == 0) return;
  hs_buf raw;
  hs_buf_init(&raw);
  struct ArrowSchema a;
  memset(&a, 0, sizeof a);
  if (hs_base64_decode((const char *)kv->value.data, kv->value.len, &raw, NULL) == HS_OK &&
      hs_arrow_ipc_schema_decode(raw.data, raw.len, &a, NULL) == HS_OK &&
      a.n_children == root->n_children) {
    bool names = true;
    for (int32_t i = 0; i < root->n_children && names; i++)
      names = a.children[i]->name && strcmp(a.children[i]->name, root->children[i]->name) == 0;
    if (names) refine_node(root, &a, 0);
  }
  if (a.release) a.release(&a);
  hs_buf_free(&raw);
}

/* --------------------------------------------------------------- entry */

static hs_status build_leaves(schema_ctx *c, hs_pq_schema *out) {
  const hs_pq_file_metadata *md = c->md;
  int32_t n = c->leaves_before[md->n_schema];
  out->n_leaves = n;
  out->leaves = hs_arena_alloc(c->arena, sizeof(hs_pq_leaf_desc) * (size_t)(n > 0 ? n : 1));
  if (out->leaves == NULL) return oom(c);
  for (uint32_t i = 1; i < md->n_schema; i++) {
    const hs_pq_schema_element *e = &md->schema[i];
    if (e->num_children != 0) continue;
    hs_pq_leaf_desc *d = &out->leaves[c->leaves_before[i]];
    d->leaf_index = c->leaves_before[i];
    d->schema_index = (int32_t)i;
    d->elem = e;
    d->type = e->type;
    d->type_length = e->type == HS_PQ_INT96 ? 12 : e->type_length;
    d->max_def = c->def[i];
    d->max_rep = c->rep[i];
    /* Dotted path from the root's children down to the leaf. */
    size_t len = 0;
    for (int32_t p = (int32_t)i; p > 0; p = c->parent[p]) len += strlen(md->schema[p].name) + 1;
    char *path = hs_arena_alloc(c->arena, len + 1);
    if (path == NULL) return oom(c);
    size_t at = len - 1;
    path[at] = '\0';
    for (int32_t p = (int32_t)i; p > 0; p = c->parent[p]) {
      size_t l = strlen(md->schema[p].name);
      at -= l;
      memcpy(path + at, md->schema[p].name, l);
      if (at > 0) path[--at] = '.';
    }
    d->path = path;
  }
  return HS_OK;
}

static hs_status check_row_groups(schema_ctx *c, const hs_pq_schema *s) {
  const hs_pq_file_metadata *md = c->md;
  for (uint32_t g = 0; g < md->n_row_groups; g++) {
    const hs_pq_row_group *rg = &md->row_groups[g];
    if (rg->n_columns != (uint32_t)s->n_leaves) {
      return hs_error_set(c->err, HS_ERR_CORRUPT,
                          "row group %u has %u column chunks but the schema has %d leaf columns", g,
                          rg->n_columns, (int)s->n_leaves);
    }
    if (rg->num_rows < 0) {
      return hs_error_set(c->err, HS_ERR_CORRUPT, "row group %u has %lld rows", g,
                          (long long)rg->num_rows);
    }
    for (uint32_t k = 0; k < rg->n_columns; k++) {
      const hs_pq_column_chunk *cc = &rg->columns[k];
      const char *path = s->leaves[k].path;
      if (cc->is_encrypted) {
        return hs_error_set(c->err, HS_ERR_UNSUPPORTED,
                            "column '%s' is encrypted; decryption is not supported", path);
      }
      if (!cc->has_meta_data) {
        return hs_error_set(c->err, HS_ERR_CORRUPT,
                            "column '%s': row group %u has no column metadata", path, g);
      }
      if (cc->meta_data.type != s->leaves[k].type) {
        return hs_error_set(c->err, HS_ERR_CORRUPT,
                            "column '%s': row group %u chunk has type %s but the schema says %s",
                            path, g, hs_pq_type_name(cc->meta_data.type),
                            hs_pq_type_name(s->leaves[k].type));
      }
    }
  }
  return HS_OK;
}

hs_status hs_pq_schema_build(const hs_pq_file_metadata *md, hs_arena *arena, hs_pq_schema *out,
                             hs_error *err) {
  memset(out, 0, sizeof *out);
  if (md->n_schema == 0 || md->schema == NULL) {
    return hs_error_set(err, HS_ERR_CORRUPT, "schema: footer has no schema elements");
  }
  schema_ctx c = {.md = md, .arena = arena, .err = err};
  size_t n = md->n_schema;
  c.end = hs_arena_alloc(arena, sizeof(uint32_t) * n);
  c.leaves_before = hs_arena_alloc(arena, sizeof(int32_t) * (n + 1));
  c.def = hs_arena_alloc(arena, sizeof(int16_t) * n);
  c.rep = hs_arena_alloc(arena, sizeof(int16_t) * n);
  c.parent = hs_arena_alloc(arena, sizeof(int32_t) * n);
  if (!c.end || !c.leaves_before || !c.def || !c.rep || !c.parent) return oom(&c);
  hs_status st = scan_element(&c, 0, 0);
  if (st != HS_OK) return st;
  if (c.end[0] != md->n_schema) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "schema: root covers %u of %u elements (num_children inconsistent)",
                        c.end[0], md->n_schema);
  }
  c.leaves_before[0] = 0;
  for (uint32_t i = 0; i < n; i++) {
    bool leaf = i > 0 && md->schema[i].num_children == 0;
    c.leaves_before[i + 1] = c.leaves_before[i] + (leaf ? 1 : 0);
  }
  for (uint32_t i = 0; i < md->n_key_value_metadata; i++) {
    const hs_pq_key_value *kv = &md->key_value_metadata[i];
    if (kv->key && kv->has_value && strcmp(kv->key, "hyperstream:fixed_size_list") == 0) {
      c.fixed_json = kv->value.data;
      c.fixed_json_len = kv->value.len;
    }
  }
  st = build_leaves(&c, out);
  if (st != HS_OK) return st;
  st = check_row_groups(&c, out);
  if (st != HS_OK) return st;
  const hs_pq_schema_element *root = &md->schema[0];
  hs_pq_node *rn = node_new(&c, HS_PQ_NODE_STRUCT, 0, 0, 0, root->num_children);
  if (rn == NULL) return oom(&c);
  rn->name = "";
  rn->has_field_id = false;
  rn->valid_def = 0;
  snprintf(rn->format, sizeof rn->format, "+s");
  uint32_t ch = 1;
  for (int32_t k = 0; k < root->num_children; k++) {
    st = build_node(&c, ch, 0, 0, false, &rn->children[k]);
    if (st != HS_OK) return st;
    ch = c.end[ch];
  }
  apply_fixed_lists(&c, rn);
  apply_arrow_schema(md, rn);
  out->root = rn;
  return HS_OK;
}

const hs_pq_node *hs_pq_schema_find(const hs_pq_schema *schema, const char *name) {
  for (int32_t i = 0; i < schema->root->n_children; i++) {
    if (strcmp(schema->root->children[i]->name, name) == 0) return schema->root->children[i];
  }
  return NULL;
}

/* ------------------------------------------------------- Arrow export */

hs_status hs_pq_node_export_schema(const hs_pq_node *node, struct ArrowSchema *out, hs_error *err) {
  int64_t flags = node->nullable ? ARROW_FLAG_NULLABLE : 0;
  hs_status st = hs_arrow_schema_init(out, node->format, node->name, flags, node->n_children, err);
  if (st != HS_OK) return st;
  if (node->has_field_id) {
    char id[16];
    snprintf(id, sizeof id, "%d", (int)node->field_id);
    const char *key = "PARQUET:field_id";
    const char *val = id;
    st = hs_arrow_schema_set_metadata(out, &key, &val, 1, err);
  }
  for (int32_t i = 0; st == HS_OK && i < node->n_children; i++) {
    st = hs_pq_node_export_schema(node->children[i], out->children[i], err);
  }
  if (st != HS_OK) out->release(out);
  return st;
}
