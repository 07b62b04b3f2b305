/*
 * binary.c — the Avro binary encoding: zigzag varints, the encoder, datum
 * validation, skipping, and the plain-JSON view of values.
 *
 * Decoding with schema resolution lives in resolve.c; both follow the same
 * bounds discipline: every length and count read from the input is checked
 * against the bytes remaining before anything is allocated or copied.
 */
#include <inttypes.h>
#include <string.h>

#include "avro_internal.h"

/* -------------------------------------------------------------- varints */

hs_status hs_avro_read_long(const uint8_t *buf, size_t len, size_t *pos, int64_t *out,
                            hs_error *err) {
  uint64_t v = 0;
  size_t p = *pos;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p >= len)
      return hs_error_set(err, HS_ERR_CORRUPT, "avro: varint truncated at byte %zu", *pos);
    uint8_t b = buf[p++];
    if (shift == 63 && (b & 0x7e) != 0)
      return hs_error_set(err, HS_ERR_CORRUPT, "avro: varint overflows 64 bits at byte %zu", *pos);
    v |= (uint64_t)(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = (int64_t)((v >> 1) ^ (~(v & 1) + 1));
      *pos = p;
      return HS_OK;
    }
  }
  return hs_error_set(err, HS_ERR_CORRUPT, "avro: varint longer than 10 bytes at byte %zu", *pos);
}

bool hs_avro_write_long(hs_buf *out, int64_t v) {
  uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
  uint8_t tmp[10];
  size_t n = 0;
  do {
    uint8_t b = (uint8_t)(z & 0x7f);
    z >>= 7;
    tmp[n++] = (uint8_t)(b | (z ? 0x80 : 0));
  } while (z);
  return hs_buf_append(out, tmp, n);
}

/* ----------------------------------------------------------- validation */

static hs_status validate(const hs_avro_node *n, const hs_avro_value *v, int depth, hs_error *err) {
  if (depth > HS_AVRO_VALUE_DEPTH_MAX)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "avro value: nested too deeply");
  if (v->type != n->type) {
    return hs_error_set(err, HS_ERR_SCHEMA, "avro value: a %s where the schema has %s",
                        hs_avro_type_name(v->type), hs_avro_type_name(n->type));
  }
  hs_status st;
  switch (n->type) {
  case HS_AVRO_BYTES:
  case HS_AVRO_STRING:
    if (v->u.bytes.data == NULL && v->u.bytes.len != 0)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "avro value: %s without data",
                          hs_avro_type_name(n->type));
    return HS_OK;
  case HS_AVRO_FIXED:
    if (v->u.bytes.len != n->fixed_size || (v->u.bytes.data == NULL && n->fixed_size)) {
      return hs_error_set(err, HS_ERR_SCHEMA, "avro value: fixed %s needs %zu bytes, has %zu",
                          n->fullname, n->fixed_size, v->u.bytes.len);
    }
    return HS_OK;
  case HS_AVRO_ENUM:
    if (v->u.symbol >= n->n_symbols)
      return hs_error_set(err, HS_ERR_SCHEMA, "avro value: enum %s index %u out of range",
                          n->fullname, v->u.symbol);
    return HS_OK;
  case HS_AVRO_RECORD:
    if (v->u.list.count != n->n_fields) {
      return hs_error_set(err, HS_ERR_SCHEMA, "avro value: record %s has %zu fields, value %zu",
                          n->fullname, n->n_fields, v->u.list.count);
    }
    for (size_t i = 0; i < n->n_fields; i++) {
      if ((st = validate(n->fields[i].type, &v->u.list.items[i], depth + 1, err)) != HS_OK)
        return ((void)hs_error_prefix(err, "%s.%s: ", n->fullname, n->fields[i].name), st);
    }
    return HS_OK;
  case HS_AVRO_ARRAY:
    for (size_t i = 0; i < v->u.list.count; i++) {
      if ((st = validate(n->items, &v->u.list.items[i], depth + 1, err)) != HS_OK)
        return ((void)hs_error_prefix(err, "[%zu]: ", i), st);
    }
    return HS_OK;
  case HS_AVRO_MAP:
    for (size_t i = 0; i < v->u.map.count; i++) {
      if (v->u.map.entries[i].key == NULL)
        return hs_error_set(err, HS_ERR_INVALID_ARG, "avro value: map key %zu is NULL", i);
      if ((st = validate(n->items, &v->u.map.entries[i].value, depth + 1, err)) != HS_OK)
        return ((void)hs_error_prefix(err, "[\"%s\"]: ", v->u.map.entries[i].key), st);
    }
    return HS_OK;
  case HS_AVRO_UNION:
    if (v->u.branch.branch >= n->n_branches || v->u.branch.value == NULL)
      return hs_error_set(err, HS_ERR_SCHEMA, "avro value: union branch %u of %zu",
                          v->u.branch.branch, n->n_branches);
    return validate(n->branches[v->u.branch.branch], v->u.branch.value, depth + 1, err);
  default: return HS_OK;
  }
}

hs_status hs_avro_value_validate(const hs_avro_node *node, const hs_avro_value *value,
                                 hs_error *err) {
  return validate(node, value, 0, err);
}

/* -------------------------------------------------------------- encoder */

static bool put_bytes(hs_buf *out, const uint8_t *p, size_t n) {
  return hs_avro_write_long(out, (int64_t)n) && hs_buf_append(out, p, n);
}

/* Precondition: validate() accepted (n, v). */
static bool encode(const hs_avro_node *n, const hs_avro_value *v, hs_buf *out) {
  uint8_t tmp[8];
  switch (n->type) {
  case HS_AVRO_NULL: return true;
  case HS_AVRO_BOOLEAN: return hs_buf_append_byte(out, v->u.boolean ? 1 : 0);
  case HS_AVRO_INT: return hs_avro_write_long(out, v->u.i32);
  case HS_AVRO_LONG: return hs_avro_write_long(out, v->u.i64);
  case HS_AVRO_FLOAT: {
    uint32_t bits;
    memcpy(&bits, &v->u.f32, 4);
    hs_store_u32le(tmp, bits);
    return hs_buf_append(out, tmp, 4);
  }
  case HS_AVRO_DOUBLE: {
    uint64_t bits;
    memcpy(&bits, &v->u.f64, 8);
    hs_store_u64le(tmp, bits);
    return hs_buf_append(out, tmp, 8);
  }
  case HS_AVRO_BYTES:
  case HS_AVRO_STRING: return put_bytes(out, v->u.bytes.data, v->u.bytes.len);
  case HS_AVRO_FIXED: return hs_buf_append(out, v->u.bytes.data, v->u.bytes.len);
  case HS_AVRO_ENUM: return hs_avro_write_long(out, v->u.symbol);
  case HS_AVRO_RECORD:
    for (size_t i = 0; i < n->n_fields; i++)
      if (!encode(n->fields[i].type, &v->u.list.items[i], out)) return false;
    return true;
  case HS_AVRO_ARRAY:
    /* One block holding every item, then the terminating empty block. */
    if (v->u.list.count && !hs_avro_write_long(out, (int64_t)v->u.list.count)) return false;
    for (size_t i = 0; i < v->u.list.count; i++)
      if (!encode(n->items, &v->u.list.items[i], out)) return false;
    return hs_avro_write_long(out, 0);
  case HS_AVRO_MAP:
    if (v->u.map.count && !hs_avro_write_long(out, (int64_t)v->u.map.count)) return false;
    for (size_t i = 0; i < v->u.map.count; i++) {
      const hs_avro_map_entry *e = &v->u.map.entries[i];
      if (!put_bytes(out, (const uint8_t *)e->key, e->key_len)) return false;
      if (!encode(n->items, &e->value, out)) return false;
    }
    return hs_avro_write_long(out, 0);
  case HS_AVRO_UNION:
    return hs_avro_write_long(out, v->u.branch.branch) &&
           encode(n->branches[v->u.branch.branch], v->u.branch.value, out);
  }
  return false;
}

hs_status hs_avro_encode(const hs_avro_node *node, const hs_avro_value *value, hs_buf *out,
                         hs_error *err) {
  hs_status st = validate(node, value, 0, err);
  if (st != HS_OK) return st;
  size_t mark = out->len;
  if (!encode(node, value, out)) {
    out->len = mark;
    return hs_error_set(err, HS_ERR_NOMEM, "avro: out of memory encoding a datum");
  }
  return HS_OK;
}

/* ----------------------------------------------------------------- skip */

typedef struct skipper {
  const uint8_t *buf;
  size_t len, pos;
  size_t zero_items;
  hs_error *err;
} skipper;

static hs_status skip_n(skipper *s, size_t n) {
  if (n > s->len - s->pos)
    return hs_error_set(s->err, HS_ERR_CORRUPT, "avro: %zu bytes needed at byte %zu, %zu remain", n,
                        s->pos, s->len - s->pos);
  s->pos += n;
  return HS_OK;
}

static hs_status skip_len(skipper *s) {
  int64_t n;
  size_t at = s->pos;
  hs_status st = hs_avro_read_long(s->buf, s->len, &s->pos, &n, s->err);
  if (st != HS_OK) return st;
  if (n < 0) return hs_error_set(s->err, HS_ERR_CORRUPT, "avro: negative length at byte %zu", at);
  return skip_n(s, (size_t)n);
}

static hs_status skip(skipper *s, const hs_avro_node *n, int depth);

/* Arrays and maps: blocks of (count, items); a negative count is followed
 * by the block's byte size, which lets us jump over it. */
static hs_status skip_blocks(skipper *s, const hs_avro_node *n, int depth) {
  size_t item_min = hs_avro_node_min_bytes(n->items, 0) + (n->type == HS_AVRO_MAP);
  for (;;) {
    int64_t count;
    size_t at = s->pos;
    hs_status st = hs_avro_read_long(s->buf, s->len, &s->pos, &count, s->err);
    if (st != HS_OK) return st;
    if (count == 0) return HS_OK;
    if (count < 0) {
      int64_t bytes;
      if ((st = hs_avro_read_long(s->buf, s->len, &s->pos, &bytes, s->err)) != HS_OK) return st;
      if (count == INT64_MIN || bytes < 0)
        return hs_error_set(s->err, HS_ERR_CORRUPT, "avro: bad block header at byte %zu", at);
      if ((st = skip_n(s, (size_t)bytes)) != HS_OK) return st;
      continue;
    }
    if (item_min == 0) {
      s->zero_items += (size_t)count;
      if ((uint64_t)count > HS_AVRO_ZERO_SIZE_ITEMS_MAX ||
          s->zero_items > HS_AVRO_ZERO_SIZE_ITEMS_MAX)
        return hs_error_set(s->err, HS_ERR_CORRUPT, "avro: too many empty items at byte %zu", at);
    } else if ((uint64_t)count > (s->len - s->pos) / item_min) {
      return hs_error_set(s->err, HS_ERR_CORRUPT,
                          "avro: block of %" PRId64 " items at byte %zu exceeds the %zu bytes left",
                          count, at, s->len - s->pos);
    }
    for (int64_t i = 0; i < count; i++) {
      if (n->type == HS_AVRO_MAP && (st = skip_len(s)) != HS_OK) return st;
      if ((st = skip(s, n->items, depth + 1)) != HS_OK) return st;
    }
  }
}

static hs_status skip(skipper *s, const hs_avro_node *n, int depth) {
  if (depth > HS_AVRO_VALUE_DEPTH_MAX)
    return hs_error_set(s->err, HS_ERR_CORRUPT, "avro: datum nested too deeply at byte %zu",
                        s->pos);
  int64_t v;
  hs_status st;
  switch (n->type) {
  case HS_AVRO_NULL: return HS_OK;
  case HS_AVRO_BOOLEAN: return skip_n(s, 1);
  case HS_AVRO_INT:
  case HS_AVRO_LONG:
  case HS_AVRO_ENUM: return hs_avro_read_long(s->buf, s->len, &s->pos, &v, s->err);
  case HS_AVRO_FLOAT: return skip_n(s, 4);
  case HS_AVRO_DOUBLE: return skip_n(s, 8);
  case HS_AVRO_BYTES:
  case HS_AVRO_STRING: return skip_len(s);
  case HS_AVRO_FIXED: return skip_n(s, n->fixed_size);
  case HS_AVRO_RECORD:
    for (size_t i = 0; i < n->n_fields; i++)
      if ((st = skip(s, n->fields[i].type, depth + 1)) != HS_OK) return st;
    return HS_OK;
  case HS_AVRO_ARRAY:
  case HS_AVRO_MAP: return skip_blocks(s, n, depth);
  case HS_AVRO_UNION: {
    size_t at = s->pos;
    if ((st = hs_avro_read_long(s->buf, s->len, &s->pos, &v, s->err)) != HS_OK) return st;
    if (v < 0 || (uint64_t)v >= n->n_branches)
      return hs_error_set(s->err, HS_ERR_CORRUPT, "avro: union index %" PRId64 " at byte %zu", v,
                          at);
    return skip(s, n->branches[v], depth + 1);
  }
  }
  return hs_error_set(s->err, HS_ERR_INTERNAL, "avro: unknown type in schema");
}

hs_status hs_avro_skip(const hs_avro_node *writer, const uint8_t *buf, size_t len, size_t *pos,
                       hs_error *err) {
  if (*pos > len) return hs_error_set(err, HS_ERR_INVALID_ARG, "avro: position past the buffer");
  skipper s = {.buf = buf, .len = len, .pos = *pos, .err = err};
  hs_status st = skip(&s, writer, 0);
  if (st == HS_OK) *pos = s.pos;
  return st;
}

/* ------------------------------------------------------------ JSON view */

static json_t *hex_string(const uint8_t *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  size_t cap;
  if (!hs_mul_size(n, 2, &cap)) return NULL;
  char *s = hs_malloc(cap + 1);
  if (s == NULL) return NULL;
  for (size_t i = 0; i < n; i++) {
    s[2 * i] = digits[p[i] >> 4];
    s[2 * i + 1] = digits[p[i] & 15];
  }
  json_t *j = json_stringn(s, cap);
  hs_free(s);
  return j;
}

static json_t *to_json(const hs_avro_node *n, const hs_avro_value *v, int depth) {
  if (depth > HS_AVRO_VALUE_DEPTH_MAX) return NULL;
  json_t *o;
  switch (n->type) {
  case HS_AVRO_NULL: return json_null();
  case HS_AVRO_BOOLEAN: return json_boolean(v->u.boolean);
  case HS_AVRO_INT: return json_integer(v->u.i32);
  case HS_AVRO_LONG: return json_integer(v->u.i64);
  case HS_AVRO_FLOAT: return json_real(v->u.f32);
  case HS_AVRO_DOUBLE: return json_real(v->u.f64);
  case HS_AVRO_STRING: return json_stringn((const char *)v->u.bytes.data, v->u.bytes.len);
  case HS_AVRO_BYTES:
  case HS_AVRO_FIXED: return hex_string(v->u.bytes.data, v->u.bytes.len);
  case HS_AVRO_ENUM: return json_string(n->symbols[v->u.symbol]);
  case HS_AVRO_RECORD:
    o = json_object();
    for (size_t i = 0; o && i < n->n_fields; i++) {
      if (json_object_set_new(o, n->fields[i].name,
                              to_json(n->fields[i].type, &v->u.list.items[i], depth + 1)) != 0) {
        json_decref(o);
        return NULL;
      }
    }
    return o;
  case HS_AVRO_ARRAY:
    o = json_array();
    for (size_t i = 0; o && i < v->u.list.count; i++) {
      if (json_array_append_new(o, to_json(n->items, &v->u.list.items[i], depth + 1)) != 0) {
        json_decref(o);
        return NULL;
      }
    }
    return o;
  case HS_AVRO_MAP:
    o = json_object();
    for (size_t i = 0; o && i < v->u.map.count; i++) {
      const hs_avro_map_entry *e = &v->u.map.entries[i];
      if (json_object_setn_new(o, e->key, e->key_len, to_json(n->items, &e->value, depth + 1)) !=
          0) {
        json_decref(o);
        return NULL;
      }
    }
    return o;
  case HS_AVRO_UNION: return to_json(n->branches[v->u.branch.branch], v->u.branch.value, depth + 1);
  }
  return NULL;
}

hs_status hs_avro_value_to_json(const hs_avro_node *node, const hs_avro_value *value, json_t **out,
                                hs_error *err) {
  *out = NULL;
  hs_status st = validate(node, value, 0, err);
  if (st != HS_OK) return st;
  *out = to_json(node, value, 0);
  if (*out == NULL)
    return hs_error_set(err, HS_ERR_SCHEMA,
                        "avro value: cannot convert to JSON (out of memory or invalid UTF-8)");
  return HS_OK;
}

const hs_avro_value *hs_avro_record_get(const hs_avro_node *schema, const hs_avro_value *record,
                                        const char *name) {
  int64_t i = hs_avro_node_field_index(schema, name);
  if (i < 0 || record->type != HS_AVRO_RECORD || (size_t)i >= record->u.list.count) return NULL;
  return &record->u.list.items[i];
}
