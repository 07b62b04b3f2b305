/*
 * resolve.c — decoding datums, with Avro schema resolution.
 *
 * A datum is always read with the schema it was written with (`writer`) and
 * shaped into the schema the caller wants (`reader`): records are matched by
 * field NAME (so manifests written by another Iceberg version read fine),
 * missing reader fields take their defaults, unknown writer fields are
 * skipped, numbers are promoted (int→long→float→double), string and bytes
 * interchange, enums map by symbol, unions pick the first matching branch.
 * When reader == writer this is the plain decoder.
 *
 * Bounds: lengths and counts are checked against the bytes remaining before
 * allocating; items that encode to zero bytes are capped per datum; nesting
 * is capped (recursive named types could otherwise recurse without end).
 */
#include <inttypes.h>
#include <string.h>

#include "avro_internal.h"

typedef struct dec {
  const uint8_t *buf;
  size_t len, pos;
  hs_arena *arena;
  size_t zero_items;
  hs_error *err;
} dec;

static hs_status corrupt(dec *d, size_t at, const char *what) {
  return hs_error_set(d->err, HS_ERR_CORRUPT, "avro: %s at byte %zu", what, at);
}

static hs_status nomem(dec *d) {
  return hs_error_set(d->err, HS_ERR_NOMEM, "avro: out of memory decoding at byte %zu", d->pos);
}

/* ------------------------------------------------------ type matching */

static bool is_named(hs_avro_type t) {
  return t == HS_AVRO_RECORD || t == HS_AVRO_ENUM || t == HS_AVRO_FIXED;
}

static const char *short_name(const hs_avro_node *n) {
  const char *dot = strrchr(n->fullname, '.');
  return dot ? dot + 1 : n->fullname;
}

/* Whether a non-union writer type can be read as non-union reader type,
 * looking only at the top level. Records match regardless of their names. */
static bool shallow_match(const hs_avro_node *w, const hs_avro_node *r) {
  if (w->type == r->type) return w->type != HS_AVRO_FIXED || w->fixed_size == r->fixed_size;
  switch (w->type) {
  case HS_AVRO_INT:
    return r->type == HS_AVRO_LONG || r->type == HS_AVRO_FLOAT || r->type == HS_AVRO_DOUBLE;
  case HS_AVRO_LONG: return r->type == HS_AVRO_FLOAT || r->type == HS_AVRO_DOUBLE;
  case HS_AVRO_FLOAT: return r->type == HS_AVRO_DOUBLE;
  case HS_AVRO_STRING: return r->type == HS_AVRO_BYTES;
  case HS_AVRO_BYTES: return r->type == HS_AVRO_STRING;
  default: return false;
  }
}

/* The reader union branch for non-union writer `w`: first an identical type
 * (same name for named types), then any branch it resolves to; -1 if none. */
static int64_t pick_branch(const hs_avro_node *w, const hs_avro_node *ru) {
  for (size_t i = 0; i < ru->n_branches; i++) {
    const hs_avro_node *b = ru->branches[i];
    if (b == w) return (int64_t)i;
    if (b->type != w->type) continue;
    if (!is_named(w->type) || strcmp(short_name(b), short_name(w)) == 0) return (int64_t)i;
  }
  for (size_t i = 0; i < ru->n_branches; i++)
    if (shallow_match(w, ru->branches[i])) return (int64_t)i;
  return -1;
}

/* ---------------------------------------------------------- primitives */

static hs_status read_long(dec *d, int64_t *out) {
  return hs_avro_read_long(d->buf, d->len, &d->pos, out, d->err);
}

static hs_status need(dec *d, size_t n) {
  if (n > d->len - d->pos) {
    return hs_error_set(d->err, HS_ERR_CORRUPT, "avro: %zu bytes needed at byte %zu, %zu remain", n,
                        d->pos, d->len - d->pos);
  }
  return HS_OK;
}

/* Length-prefixed bytes, copied into the arena with a NUL after them. */
static hs_status read_bytes(dec *d, const uint8_t **data, size_t *len) {
  int64_t n;
  size_t at = d->pos;
  hs_status st = read_long(d, &n);
  if (st != HS_OK) return st;
  if (n < 0) return corrupt(d, at, "negative length");
  if ((st = need(d, (size_t)n)) != HS_OK) return st;
  uint8_t *p = hs_arena_alloc(d->arena, (size_t)n + 1);
  if (p == NULL) return nomem(d);
  memcpy(p, d->buf + d->pos, (size_t)n);
  d->pos += (size_t)n;
  *data = p;
  *len = (size_t)n;
  return HS_OK;
}

static hs_status read_number(dec *d, const hs_avro_node *w, const hs_avro_node *r,
                             hs_avro_value *out) {
  int64_t l = 0;
  double x = 0;
  size_t at = d->pos;
  hs_status st;
  if (w->type == HS_AVRO_INT || w->type == HS_AVRO_LONG) {
    if ((st = read_long(d, &l)) != HS_OK) return st;
    if (w->type == HS_AVRO_INT && (l < INT32_MIN || l > INT32_MAX))
      return corrupt(d, at, "int out of 32-bit range");
    x = (double)l;
  } else if (w->type == HS_AVRO_FLOAT) {
    if ((st = need(d, 4)) != HS_OK) return st;
    uint32_t bits = hs_load_u32le(d->buf + d->pos);
    float f;
    memcpy(&f, &bits, 4);
    d->pos += 4;
    x = f;
  } else {
    if ((st = need(d, 8)) != HS_OK) return st;
    uint64_t bits = hs_load_u64le(d->buf + d->pos);
    memcpy(&x, &bits, 8);
    d->pos += 8;
  }
  out->type = r->type;
  switch (r->type) {
  case HS_AVRO_INT: out->u.i32 = (int32_t)l; break;
  case HS_AVRO_LONG: out->u.i64 = l; break;
  case HS_AVRO_FLOAT: out->u.f32 = (float)x; break;
  default: out->u.f64 = x; break;
  }
  return HS_OK;
}

/* ------------------------------------------------------------ compound */

static hs_status decode(dec *d, const hs_avro_node *w, const hs_avro_node *r, int depth,
                        hs_avro_value *out);

/* A growable heap vector of values, moved into the arena when complete, so
 * that many small blocks do not cost quadratic arena space. */
typedef struct vec {
  hs_avro_value *v;
  hs_avro_map_entry *e;
  size_t n, cap;
} vec;

static bool vec_grow(vec *x, size_t extra, bool entries) {
  size_t want;
  if (!hs_add_size(x->n, extra, &want)) return false;
  if (want <= x->cap) return true;
  size_t cap = x->cap ? x->cap : 4;
  while (cap < want) cap *= 2;
  size_t elem = entries ? sizeof *x->e : sizeof *x->v;
  size_t bytes;
  if (!hs_mul_size(cap, elem, &bytes)) return false;
  void *p = hs_realloc(entries ? (void *)x->e : (void *)x->v, bytes);
  if (p == NULL) return false;
  if (entries)
    x->e = p;
  else
    x->v = p;
  x->cap = cap;
  return true;
}

static hs_status decode_blocks(dec *d, const hs_avro_node *w, const hs_avro_node *r, int depth,
                               hs_avro_value *out) {
  bool is_map = w->type == HS_AVRO_MAP;
  size_t item_min = hs_avro_node_min_bytes(w->items, 0) + is_map;
  vec x = {0};
  hs_status st = HS_OK;
  for (;;) {
    int64_t count, bytes = -1;
    size_t at = d->pos;
    if ((st = read_long(d, &count)) != HS_OK) break;
    if (count == 0) break;
    if (count < 0) {
      if (count == INT64_MIN) {
        st = corrupt(d, at, "bad block count");
        break;
      }
      count = -count;
      if ((st = read_long(d, &bytes)) != HS_OK) break;
      if (bytes < 0 || (uint64_t)bytes > d->len - d->pos) {
        st = corrupt(d, at, "block byte size exceeds the bytes left");
        break;
      }
    }
    if (item_min == 0) {
      d->zero_items += (size_t)count;
      if ((uint64_t)count > HS_AVRO_ZERO_SIZE_ITEMS_MAX ||
          d->zero_items > HS_AVRO_ZERO_SIZE_ITEMS_MAX) {
        st = corrupt(d, at, "too many zero-size items");
        break;
      }
    } else if ((uint64_t)count > (d->len - d->pos) / item_min) {
      st = corrupt(d, at, "block item count exceeds the bytes left");
      break;
    }
    if (!vec_grow(&x, (size_t)count, is_map)) {
      st = nomem(d);
      break;
    }
    size_t start = d->pos;
    for (int64_t i = 0; i < count && st == HS_OK; i++) {
      if (is_map) {
        hs_avro_map_entry *e = &x.e[x.n];
        memset(e, 0, sizeof *e);
        const uint8_t *k;
        st = read_bytes(d, &k, &e->key_len);
        e->key = (const char *)k;
        if (st == HS_OK) st = decode(d, w->items, r->items, depth + 1, &e->value);
      } else {
        memset(&x.v[x.n], 0, sizeof x.v[0]);
        st = decode(d, w->items, r->items, depth + 1, &x.v[x.n]);
      }
      if (st == HS_OK) x.n++;
    }
    if (st != HS_OK) break;
    if (bytes >= 0 && d->pos - start != (size_t)bytes) {
      st = corrupt(d, at, "block byte size does not match its items");
      break;
    }
  }
  if (st == HS_OK) {
    out->type = r->type;
    size_t elem = is_map ? sizeof *x.e : sizeof *x.v;
    void *p = hs_arena_memdup(d->arena, is_map ? (void *)x.e : (void *)x.v, x.n * elem);
    if (p == NULL) {
      st = nomem(d);
    } else if (is_map) {
      out->u.map.entries = p;
      out->u.map.count = x.n;
    } else {
      out->u.list.items = p;
      out->u.list.count = x.n;
    }
  }
  hs_free(x.v);
  hs_free(x.e);
  return st;
}

static hs_status decode_record(dec *d, const hs_avro_node *w, const hs_avro_node *r, int depth,
                               hs_avro_value *out) {
  hs_status st;
  hs_avro_value *vals = hs_arena_alloc(d->arena, r->n_fields * sizeof *vals + 1);
  if (vals == NULL) return nomem(d);
  out->type = HS_AVRO_RECORD;
  out->u.list.items = vals;
  out->u.list.count = r->n_fields;
  if (w == r) {
    for (size_t i = 0; i < w->n_fields; i++)
      if ((st = decode(d, w->fields[i].type, r->fields[i].type, depth + 1, &vals[i])) != HS_OK)
        return st;
    return HS_OK;
  }
  /* Writer order drives the bytes; each field lands in its reader slot. A
   * slot left with type NULL and no writer field is filled from defaults. */
  bool filled_small[64] = {false};
  bool *filled = r->n_fields <= 64 ? filled_small : hs_arena_alloc(d->arena, r->n_fields);
  if (filled == NULL) return nomem(d);
  for (size_t i = 0; i < w->n_fields; i++) {
    int64_t k = hs_avro_node_field_index(r, w->fields[i].name);
    if (k < 0) {
      st = hs_avro_skip(w->fields[i].type, d->buf, d->len, &d->pos, d->err);
    } else {
      st = decode(d, w->fields[i].type, r->fields[k].type, depth + 1, &vals[k]);
      filled[k] = true;
    }
    if (st != HS_OK) return st;
  }
  for (size_t k = 0; k < r->n_fields; k++) {
    if (filled[k]) continue;
    const hs_avro_field *f = &r->fields[k];
    if (f->default_json == NULL) {
      return hs_error_set(d->err, HS_ERR_SCHEMA,
                          "avro: reader field %s.%s is missing from the data and has no default",
                          r->fullname, f->name);
    }
    if ((st = hs_avro_value_from_json(f->type, f->default_json, d->arena, &vals[k], d->err)) !=
        HS_OK)
      return ((void)hs_error_prefix(d->err, "default of %s.%s: ", r->fullname, f->name), st);
  }
  return HS_OK;
}

static hs_status decode_enum(dec *d, const hs_avro_node *w, const hs_avro_node *r,
                             hs_avro_value *out) {
  int64_t i;
  size_t at = d->pos;
  hs_status st = read_long(d, &i);
  if (st != HS_OK) return st;
  if (i < 0 || (uint64_t)i >= w->n_symbols) return corrupt(d, at, "enum index out of range");
  out->type = HS_AVRO_ENUM;
  if (w == r) {
    out->u.symbol = (uint32_t)i;
    return HS_OK;
  }
  const char *sym = w->symbols[i];
  for (int pass = 0; pass < 2; pass++) {
    for (size_t k = 0; k < r->n_symbols; k++) {
      if (strcmp(r->symbols[k], sym) == 0) {
        out->u.symbol = (uint32_t)k;
        return HS_OK;
      }
    }
    if (r->enum_default == NULL) break;
    sym = r->enum_default;
  }
  return hs_error_set(d->err, HS_ERR_SCHEMA,
                      "avro: enum symbol %s at byte %zu unknown to reader %s", w->symbols[i], at,
                      r->fullname);
}

static hs_status decode(dec *d, const hs_avro_node *w, const hs_avro_node *r, int depth,
                        hs_avro_value *out) {
  if (depth > HS_AVRO_VALUE_DEPTH_MAX) return corrupt(d, d->pos, "datum nested too deeply");
  hs_status st;
  if (w->type == HS_AVRO_UNION) {
    int64_t i;
    size_t at = d->pos;
    if ((st = read_long(d, &i)) != HS_OK) return st;
    if (i < 0 || (uint64_t)i >= w->n_branches) return corrupt(d, at, "union index out of range");
    const hs_avro_node *wb = w->branches[i];
    if (r->type != HS_AVRO_UNION) return decode(d, wb, r, depth + 1, out);
    int64_t k = w == r ? i : pick_branch(wb, r);
    if (k < 0) {
      return hs_error_set(d->err, HS_ERR_SCHEMA,
                          "avro: union branch %s at byte %zu has no match in the reader union",
                          hs_avro_type_name(wb->type), at);
    }
    hs_avro_value *inner = hs_arena_alloc(d->arena, sizeof *inner);
    if (inner == NULL) return nomem(d);
    out->type = HS_AVRO_UNION;
    out->u.branch.branch = (uint32_t)k;
    out->u.branch.value = inner;
    return decode(d, wb, r->branches[k], depth + 1, inner);
  }
  if (r->type == HS_AVRO_UNION) {
    int64_t k = pick_branch(w, r);
    if (k < 0) {
      return hs_error_set(d->err, HS_ERR_SCHEMA, "avro: writer %s has no match in the reader union",
                          hs_avro_type_name(w->type));
    }
    hs_avro_value *inner = hs_arena_alloc(d->arena, sizeof *inner);
    if (inner == NULL) return nomem(d);
    out->type = HS_AVRO_UNION;
    out->u.branch.branch = (uint32_t)k;
    out->u.branch.value = inner;
    return decode(d, w, r->branches[k], depth + 1, inner);
  }
  if (!shallow_match(w, r)) {
    return hs_error_set(d->err, HS_ERR_SCHEMA, "avro: writer %s cannot be read as %s",
                        hs_avro_type_name(w->type), hs_avro_type_name(r->type));
  }
  switch (w->type) {
  case HS_AVRO_NULL: out->type = HS_AVRO_NULL; return HS_OK;
  case HS_AVRO_BOOLEAN:
    if ((st = need(d, 1)) != HS_OK) return st;
    if (d->buf[d->pos] > 1) return corrupt(d, d->pos, "boolean byte not 0 or 1");
    out->type = HS_AVRO_BOOLEAN;
    out->u.boolean = d->buf[d->pos++] == 1;
    return HS_OK;
  case HS_AVRO_INT:
  case HS_AVRO_LONG:
  case HS_AVRO_FLOAT:
  case HS_AVRO_DOUBLE: return read_number(d, w, r, out);
  case HS_AVRO_BYTES:
  case HS_AVRO_STRING:
    out->type = r->type;
    return read_bytes(d, &out->u.bytes.data, &out->u.bytes.len);
  case HS_AVRO_FIXED: {
    if ((st = need(d, w->fixed_size)) != HS_OK) return st;
    uint8_t *p = hs_arena_alloc(d->arena, w->fixed_size + 1);
    if (p == NULL) return nomem(d);
    memcpy(p, d->buf + d->pos, w->fixed_size);
    d->pos += w->fixed_size;
    out->type = HS_AVRO_FIXED;
    out->u.bytes.data = p;
    out->u.bytes.len = w->fixed_size;
    return HS_OK;
  }
  case HS_AVRO_ENUM: return decode_enum(d, w, r, out);
  case HS_AVRO_RECORD: return decode_record(d, w, r, depth, out);
  case HS_AVRO_ARRAY:
  case HS_AVRO_MAP: return decode_blocks(d, w, r, depth, out);
  default: return hs_error_set(d->err, HS_ERR_INTERNAL, "avro: unknown type in schema");
  }
}

hs_status hs_avro_decode(const hs_avro_node *writer, const hs_avro_node *reader, const uint8_t *buf,
                         size_t len, size_t *pos, hs_arena *arena, hs_avro_value *out,
                         hs_error *err) {
  if (*pos > len) return hs_error_set(err, HS_ERR_INVALID_ARG, "avro: position past the buffer");
  memset(out, 0, sizeof *out);
  dec d = {.buf = buf, .len = len, .pos = *pos, .arena = arena, .err = err};
  hs_status st = decode(&d, writer, reader ? reader : writer, 0, out);
  if (st == HS_OK) *pos = d.pos;
  return st;
}

/* ------------------------------------------------------ JSON defaults */

/* Decode one UTF-8 code point; returns bytes used or 0 when malformed. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
  if (n == 0) return 0;
  if (s[0] < 0x80) {
    *cp = s[0];
    return 1;
  }
  size_t len = (s[0] & 0xe0) == 0xc0   ? 2
               : (s[0] & 0xf0) == 0xe0 ? 3
               : (s[0] & 0xf8) == 0xf0 ? 4
                                       : 0;
  if (len == 0 || len > n) return 0;
  uint32_t v = s[0] & (0x7f >> len);
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    v = v << 6 | (s[i] & 0x3f);
  }
  *cp = v;
  return len;
}

static hs_status from_json(const hs_avro_node *n, const json_t *j, hs_arena *arena, int depth,
                           hs_avro_value *out, hs_error *err) {
  if (depth > HS_AVRO_VALUE_DEPTH_MAX)
    return hs_error_set(err, HS_ERR_SCHEMA, "avro default: nested too deeply");
  memset(out, 0, sizeof *out);
  out->type = n->type;
  hs_status st;
  switch (n->type) {
  case HS_AVRO_NULL:
    if (json_is_null(j)) return HS_OK;
    break;
  case HS_AVRO_BOOLEAN:
    if (!json_is_boolean(j)) break;
    out->u.boolean = json_is_true(j);
    return HS_OK;
  case HS_AVRO_INT:
    if (!json_is_integer(j) || json_integer_value(j) < INT32_MIN ||
        json_integer_value(j) > INT32_MAX)
      break;
    out->u.i32 = (int32_t)json_integer_value(j);
    return HS_OK;
  case HS_AVRO_LONG:
    if (!json_is_integer(j)) break;
    out->u.i64 = (int64_t)json_integer_value(j);
    return HS_OK;
  case HS_AVRO_FLOAT:
  case HS_AVRO_DOUBLE:
    if (!json_is_number(j)) break;
    if (n->type == HS_AVRO_FLOAT)
      out->u.f32 = (float)json_number_value(j);
    else
      out->u.f64 = json_number_value(j);
    return HS_OK;
  case HS_AVRO_STRING: {
    if (!json_is_string(j)) break;
    size_t len = json_string_length(j);
    out->u.bytes.data = hs_arena_memdup(arena, json_string_value(j), len + 1);
    out->u.bytes.len = len;
    if (out->u.bytes.data == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "avro default: no memory");
    return HS_OK;
  }
  case HS_AVRO_BYTES:
  case HS_AVRO_FIXED: {
    /* Bytes in JSON: each code point 0..255 is one byte. */
    if (!json_is_string(j)) break;
    const unsigned char *s = (const unsigned char *)json_string_value(j);
    size_t len = json_string_length(j), n_out = 0;
    uint8_t *p = hs_arena_alloc(arena, len + 1);
    if (p == NULL) return hs_error_set(err, HS_ERR_NOMEM, "avro default: no memory");
    for (size_t i = 0; i < len;) {
      uint32_t cp;
      size_t used = utf8_next(s + i, len - i, &cp);
      if (used == 0 || cp > 255)
        return hs_error_set(err, HS_ERR_SCHEMA, "avro default: bytes must be code points 0-255");
      p[n_out++] = (uint8_t)cp;
      i += used;
    }
    if (n->type == HS_AVRO_FIXED && n_out != n->fixed_size)
      return hs_error_set(err, HS_ERR_SCHEMA, "avro default: fixed %s needs %zu bytes, has %zu",
                          n->fullname, n->fixed_size, n_out);
    out->u.bytes.data = p;
    out->u.bytes.len = n_out;
    return HS_OK;
  }
  case HS_AVRO_ENUM:
    if (!json_is_string(j)) break;
    for (size_t i = 0; i < n->n_symbols; i++) {
      if (strcmp(n->symbols[i], json_string_value(j)) == 0) {
        out->u.symbol = (uint32_t)i;
        return HS_OK;
      }
    }
    return hs_error_set(err, HS_ERR_SCHEMA, "avro default: \"%s\" is not a symbol of enum %s",
                        json_string_value(j), n->fullname);
  case HS_AVRO_RECORD: {
    if (!json_is_object(j)) break;
    hs_avro_value *vals = hs_arena_alloc(arena, n->n_fields * sizeof *vals + 1);
    if (vals == NULL) return hs_error_set(err, HS_ERR_NOMEM, "avro default: no memory");
    for (size_t i = 0; i < n->n_fields; i++) {
      const hs_avro_field *f = &n->fields[i];
      const json_t *fj = json_object_get(j, f->name);
      if (fj == NULL) fj = f->default_json;
      if (fj == NULL)
        return hs_error_set(err, HS_ERR_SCHEMA, "avro default: record %s lacks field %s",
                            n->fullname, f->name);
      if ((st = from_json(f->type, fj, arena, depth + 1, &vals[i], err)) != HS_OK) return st;
    }
    out->u.list.items = vals;
    out->u.list.count = n->n_fields;
    return HS_OK;
  }
  case HS_AVRO_ARRAY: {
    if (!json_is_array(j)) break;
    size_t cnt = json_array_size(j);
    hs_avro_value *vals = hs_arena_alloc(arena, cnt * sizeof *vals + 1);
    if (vals == NULL) return hs_error_set(err, HS_ERR_NOMEM, "avro default: no memory");
    for (size_t i = 0; i < cnt; i++)
      if ((st = from_json(n->items, json_array_get(j, i), arena, depth + 1, &vals[i], err)) !=
          HS_OK)
        return st;
    out->u.list.items = vals;
    out->u.list.count = cnt;
    return HS_OK;
  }
  case HS_AVRO_MAP: {
    if (!json_is_object(j)) break;
    size_t cnt = json_object_size(j), i = 0;
    hs_avro_map_entry *es = hs_arena_alloc(arena, cnt * sizeof *es + 1);
    if (es == NULL) return hs_error_set(err, HS_ERR_NOMEM, "avro default: no memory");
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)j, key, val) {
      es[i].key_len = strlen(key);
      es[i].key = hs_arena_strndup(arena, key, es[i].key_len);
      if (es[i].key == NULL) return hs_error_set(err, HS_ERR_NOMEM, "avro default: no memory");
      if ((st = from_json(n->items, val, arena, depth + 1, &es[i].value, err)) != HS_OK) return st;
      i++;
    }
    out->u.map.entries = es;
    out->u.map.count = i;
    return HS_OK;
  }
  case HS_AVRO_UNION: {
    /* The spec ties a union default to its first branch; we accept a later
     * branch too, as some writers put the default of "null" last. */
    hs_avro_value *inner = hs_arena_alloc(arena, sizeof *inner);
    if (inner == NULL) return hs_error_set(err, HS_ERR_NOMEM, "avro default: no memory");
    for (size_t b = 0; b < n->n_branches; b++) {
      hs_error local = {0};
      if (from_json(n->branches[b], j, arena, depth + 1, inner, &local) == HS_OK) {
        out->u.branch.branch = (uint32_t)b;
        out->u.branch.value = inner;
        return HS_OK;
      }
    }
    return hs_error_set(err, HS_ERR_SCHEMA, "avro default: fits no branch of the union");
  }
  }
  return hs_error_set(err, HS_ERR_SCHEMA, "avro default: JSON does not fit type %s",
                      hs_avro_type_name(n->type));
}

hs_status hs_avro_value_from_json(const hs_avro_node *node, const json_t *json, hs_arena *arena,
                                  hs_avro_value *out, hs_error *err) {
  return from_json(node, json, arena, 0, out, err);
}

/* ------------------------------------------------- up-front resolution */

typedef struct check_ctx {
  const hs_avro_node **pairs; /* (writer, reader) record pairs in progress or done */
  size_t n, cap;
  hs_arena scratch;
  hs_error *err;
} check_ctx;

static hs_status check(check_ctx *c, const hs_avro_node *w, const hs_avro_node *r, int depth) {
  if (depth > HS_AVRO_SCHEMA_DEPTH_MAX * 2)
    return hs_error_set(c->err, HS_ERR_UNSUPPORTED, "avro resolution: schemas nested too deeply");
  hs_status st;
  if (w->type == HS_AVRO_UNION) {
    /* A writer branch the reader cannot take is an error only for datums
     * that use it; at least one branch must resolve. */
    hs_error *saved = c->err;
    for (size_t i = 0; i < w->n_branches; i++) {
      hs_error local = {0};
      c->err = &local;
      st = check(c, w->branches[i], r, depth + 1);
      c->err = saved;
      if (st == HS_OK) return HS_OK;
    }
    if (w->n_branches == 0) return HS_OK;
    return check(c, w->branches[0], r, depth + 1); /* report the first failure */
  }
  if (r->type == HS_AVRO_UNION) {
    int64_t k = pick_branch(w, r);
    if (k < 0)
      return hs_error_set(c->err, HS_ERR_SCHEMA, "avro resolution: writer %s matches no branch",
                          hs_avro_type_name(w->type));
    return check(c, w, r->branches[k], depth + 1);
  }
  if (!shallow_match(w, r)) {
    return hs_error_set(c->err, HS_ERR_SCHEMA,
                        "avro resolution: writer %s%s%s cannot be read as %s",
                        hs_avro_type_name(w->type), w->fullname ? " " : "",
                        w->fullname ? w->fullname : "", hs_avro_type_name(r->type));
  }
  if (w->type == HS_AVRO_ARRAY || w->type == HS_AVRO_MAP)
    return check(c, w->items, r->items, depth + 1);
  if (w->type != HS_AVRO_RECORD) return HS_OK;
  for (size_t i = 0; i + 1 < c->n; i += 2)
    if (c->pairs[i] == w && c->pairs[i + 1] == r) return HS_OK;
  if (c->n + 2 > c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    const hs_avro_node **p = hs_realloc(c->pairs, cap * sizeof *p);
    if (p == NULL) return hs_error_set(c->err, HS_ERR_NOMEM, "avro resolution: no memory");
    c->pairs = p;
    c->cap = cap;
  }
  c->pairs[c->n++] = w;
  c->pairs[c->n++] = r;
  for (size_t k = 0; k < r->n_fields; k++) {
    const hs_avro_field *rf = &r->fields[k];
    int64_t i = hs_avro_node_field_index(w, rf->name);
    if (i >= 0) {
      if ((st = check(c, w->fields[i].type, rf->type, depth + 1)) != HS_OK)
        return ((void)hs_error_prefix(c->err, "field %s.%s: ", r->fullname, rf->name), st);
      continue;
    }
    if (rf->default_json == NULL) {
      return hs_error_set(c->err, HS_ERR_SCHEMA,
                          "avro resolution: reader field %s.%s is not written and has no default",
                          r->fullname, rf->name);
    }
    hs_avro_value tmp;
    if ((st = from_json(rf->type, rf->default_json, &c->scratch, 0, &tmp, c->err)) != HS_OK)
      return ((void)hs_error_prefix(c->err, "field %s.%s: ", r->fullname, rf->name), st);
  }
  return HS_OK;
}

hs_status hs_avro_resolve_check(const hs_avro_node *writer, const hs_avro_node *reader,
                                hs_error *err) {
  check_ctx c = {.err = err};
  hs_arena_init(&c.scratch);
  c.scratch.block_bytes = 4096;
  hs_status st = check(&c, writer, reader, 0);
  hs_free(c.pairs);
  hs_arena_reset(&c.scratch);
  return st;
}
