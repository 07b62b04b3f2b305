/*
 * thrift.c — the Thrift compact protocol: a bounded, non-allocating reader
 * and an appending writer (see thrift.h for the contracts).
 *
 * Wire format in brief: integers are zigzag ULEB128 varints (i8 is one raw
 * byte, double eight little-endian bytes); a field header is one byte
 * (id delta << 4 | type) or, when the delta does not fit 1..15, the type
 * byte followed by the id as a zigzag varint; bool fields carry their value
 * in the type nibble; lists and sets start with (size << 4 | elem type),
 * size 15 meaning a varint size follows; maps start with a varint size and,
 * when non-empty, a (key type << 4 | value type) byte.
 */
#include "thrift.h"

#include <string.h>

/* ------------------------------------------------------------------ reader */

void hs_thrift_reader_init(hs_thrift_reader *r, const uint8_t *buf, size_t len, hs_error *err) {
  r->buf = buf;
  r->len = buf ? len : 0;
  r->pos = 0;
  r->depth = 0;
  r->status = HS_OK;
  r->err = err;
}

hs_status hs_thrift_fail(hs_thrift_reader *r, const char *what, const char *reason) {
  if (r->status != HS_OK) return r->status;
  r->status = HS_ERR_CORRUPT;
  return hs_error_set(r->err, HS_ERR_CORRUPT, "thrift: at byte %zu: %s: %s", r->pos,
                      what ? what : "value", reason);
}

static size_t hs_thrift_left(const hs_thrift_reader *r) {
  return r->len - r->pos;
}

static hs_status hs_thrift_varint(hs_thrift_reader *r, uint64_t *out, const char *what) {
  if (r->status != HS_OK) return r->status;
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 70; shift += 7) {
    if (r->pos >= r->len) return hs_thrift_fail(r, what, "varint runs past the end");
    uint8_t b = r->buf[r->pos++];
    if (shift == 63 && (b & 0x7e) != 0) return hs_thrift_fail(r, what, "varint overflows 64 bits");
    v |= (uint64_t)(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return HS_OK;
    }
  }
  return hs_thrift_fail(r, what, "varint longer than 10 bytes");
}

static int64_t hs_thrift_unzigzag(uint64_t v) {
  return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

hs_status hs_thrift_read_i64(hs_thrift_reader *r, int64_t *out, const char *what) {
  uint64_t v = 0;
  hs_status st = hs_thrift_varint(r, &v, what);
  if (st != HS_OK) return st;
  *out = hs_thrift_unzigzag(v);
  return HS_OK;
}

hs_status hs_thrift_read_i32(hs_thrift_reader *r, int32_t *out, const char *what) {
  int64_t v = 0;
  hs_status st = hs_thrift_read_i64(r, &v, what);
  if (st != HS_OK) return st;
  if (v < INT32_MIN || v > INT32_MAX) return hs_thrift_fail(r, what, "i32 out of range");
  *out = (int32_t)v;
  return HS_OK;
}

hs_status hs_thrift_read_i16(hs_thrift_reader *r, int16_t *out, const char *what) {
  int64_t v = 0;
  hs_status st = hs_thrift_read_i64(r, &v, what);
  if (st != HS_OK) return st;
  if (v < INT16_MIN || v > INT16_MAX) return hs_thrift_fail(r, what, "i16 out of range");
  *out = (int16_t)v;
  return HS_OK;
}

hs_status hs_thrift_read_i8(hs_thrift_reader *r, int8_t *out, const char *what) {
  if (r->status != HS_OK) return r->status;
  if (r->pos >= r->len) return hs_thrift_fail(r, what, "i8 runs past the end");
  *out = (int8_t)r->buf[r->pos++];
  return HS_OK;
}

hs_status hs_thrift_read_double(hs_thrift_reader *r, double *out, const char *what) {
  if (r->status != HS_OK) return r->status;
  if (hs_thrift_left(r) < 8) return hs_thrift_fail(r, what, "double runs past the end");
  uint64_t bits = hs_load_u64le(r->buf + r->pos);
  memcpy(out, &bits, sizeof *out);
  r->pos += 8;
  return HS_OK;
}

hs_status hs_thrift_read_binary(hs_thrift_reader *r, const uint8_t **data, uint32_t *len,
                                const char *what) {
  uint64_t n = 0;
  hs_status st = hs_thrift_varint(r, &n, what);
  if (st != HS_OK) return st;
  if (n > hs_thrift_left(r) || n > UINT32_MAX)
    return hs_thrift_fail(r, what, "binary length exceeds the bytes remaining");
  *data = r->buf + r->pos;
  *len = (uint32_t)n;
  r->pos += (size_t)n;
  return HS_OK;
}

hs_status hs_thrift_read_bool_elem(hs_thrift_reader *r, bool *out, const char *what) {
  int8_t b = 0;
  hs_status st = hs_thrift_read_i8(r, &b, what);
  if (st != HS_OK) return st;
  *out = b == HS_THRIFT_TRUE;
  return HS_OK;
}

/* Smallest number of bytes one element of `type` occupies on the wire. */
static size_t hs_thrift_min_size(uint8_t type) {
  return type == HS_THRIFT_DOUBLE ? 8 : 1;
}

hs_status hs_thrift_list_begin(hs_thrift_reader *r, uint8_t *elem_type, uint32_t *n,
                               const char *what) {
  int8_t b8 = 0;
  hs_status st = hs_thrift_read_i8(r, &b8, what);
  if (st != HS_OK) return st;
  uint8_t b = (uint8_t)b8;
  uint64_t size = b >> 4;
  uint8_t type = b & 0x0f;
  if (size == 15) {
    st = hs_thrift_varint(r, &size, what);
    if (st != HS_OK) return st;
  }
  if (size > 0 && (type == HS_THRIFT_STOP || type > HS_THRIFT_STRUCT))
    return hs_thrift_fail(r, what, "invalid list element type");
  if (type == HS_THRIFT_FALSE) type = HS_THRIFT_TRUE; /* both mean bool */
  if (size > hs_thrift_left(r) / hs_thrift_min_size(type))
    return hs_thrift_fail(r, what, "list size exceeds the bytes remaining");
  *elem_type = type;
  *n = (uint32_t)size;
  return HS_OK;
}

hs_status hs_thrift_map_begin(hs_thrift_reader *r, uint8_t *key_type, uint8_t *value_type,
                              uint32_t *n, const char *what) {
  uint64_t size = 0;
  hs_status st = hs_thrift_varint(r, &size, what);
  if (st != HS_OK) return st;
  *key_type = *value_type = HS_THRIFT_STOP;
  *n = 0;
  if (size == 0) return HS_OK;
  int8_t b8 = 0;
  st = hs_thrift_read_i8(r, &b8, what);
  if (st != HS_OK) return st;
  uint8_t kt = (uint8_t)b8 >> 4, vt = (uint8_t)b8 & 0x0f;
  if (kt == HS_THRIFT_STOP || kt > HS_THRIFT_STRUCT || vt == HS_THRIFT_STOP ||
      vt > HS_THRIFT_STRUCT)
    return hs_thrift_fail(r, what, "invalid map key or value type");
  if (kt == HS_THRIFT_FALSE) kt = HS_THRIFT_TRUE;
  if (vt == HS_THRIFT_FALSE) vt = HS_THRIFT_TRUE;
  size_t pair = hs_thrift_min_size(kt) + hs_thrift_min_size(vt);
  if (size > hs_thrift_left(r) / pair)
    return hs_thrift_fail(r, what, "map size exceeds the bytes remaining");
  *key_type = kt;
  *value_type = vt;
  *n = (uint32_t)size;
  return HS_OK;
}

hs_status hs_thrift_struct_begin(hs_thrift_reader *r, const char *what) {
  if (r->status != HS_OK) return r->status;
  if (r->depth >= HS_THRIFT_DEPTH_MAX) return hs_thrift_fail(r, what, "nesting too deep");
  r->depth++;
  return HS_OK;
}

void hs_thrift_struct_end(hs_thrift_reader *r) {
  if (r->depth > 0) r->depth--;
}

hs_status hs_thrift_field_next(hs_thrift_reader *r, int16_t *last_id, hs_thrift_field *f,
                               const char *what) {
  int8_t b8 = 0;
  hs_status st = hs_thrift_read_i8(r, &b8, what);
  if (st != HS_OK) return st;
  uint8_t b = (uint8_t)b8;
  uint8_t type = b & 0x0f;
  f->type = type;
  f->bool_value = false;
  f->id = 0;
  if (type == HS_THRIFT_STOP) return HS_OK;
  if (type > HS_THRIFT_STRUCT) return hs_thrift_fail(r, what, "invalid field type");
  uint8_t delta = b >> 4;
  if (delta != 0) {
    int32_t id = (int32_t)*last_id + delta;
    if (id > INT16_MAX) return hs_thrift_fail(r, what, "field id overflows i16");
    f->id = (int16_t)id;
  } else {
    st = hs_thrift_read_i16(r, &f->id, what);
    if (st != HS_OK) return st;
  }
  if (type == HS_THRIFT_TRUE || type == HS_THRIFT_FALSE) {
    f->bool_value = type == HS_THRIFT_TRUE;
    f->type = HS_THRIFT_TRUE;
  }
  *last_id = f->id;
  return HS_OK;
}

hs_status hs_thrift_skip(hs_thrift_reader *r, uint8_t type, const char *what) {
  if (r->status != HS_OK) return r->status;
  int64_t i64;
  int8_t i8;
  double d;
  const uint8_t *data;
  uint32_t n;
  uint8_t et, kt, vt;
  hs_status st;
  switch (type) {
  case HS_THRIFT_TRUE:
  case HS_THRIFT_FALSE: return HS_OK; /* value was in the field header */
  case HS_THRIFT_I8: return hs_thrift_read_i8(r, &i8, what);
  case HS_THRIFT_I16:
  case HS_THRIFT_I32:
  case HS_THRIFT_I64: return hs_thrift_read_i64(r, &i64, what);
  case HS_THRIFT_DOUBLE: return hs_thrift_read_double(r, &d, what);
  case HS_THRIFT_BINARY: return hs_thrift_read_binary(r, &data, &n, what);
  case HS_THRIFT_LIST:
  case HS_THRIFT_SET:
    st = hs_thrift_list_begin(r, &et, &n, what);
    if (st != HS_OK) return st;
    if ((st = hs_thrift_struct_begin(r, what)) != HS_OK) return st;
    for (uint32_t i = 0; i < n && st == HS_OK; i++) {
      /* Bool elements are one byte each, unlike bool fields. */
      st = et == HS_THRIFT_TRUE ? hs_thrift_read_i8(r, &i8, what) : hs_thrift_skip(r, et, what);
    }
    hs_thrift_struct_end(r);
    return st;
  case HS_THRIFT_MAP:
    st = hs_thrift_map_begin(r, &kt, &vt, &n, what);
    if (st != HS_OK) return st;
    if ((st = hs_thrift_struct_begin(r, what)) != HS_OK) return st;
    for (uint32_t i = 0; i < n && st == HS_OK; i++) {
      st = kt == HS_THRIFT_TRUE ? hs_thrift_read_i8(r, &i8, what) : hs_thrift_skip(r, kt, what);
      if (st == HS_OK)
        st = vt == HS_THRIFT_TRUE ? hs_thrift_read_i8(r, &i8, what) : hs_thrift_skip(r, vt, what);
    }
    hs_thrift_struct_end(r);
    return st;
  case HS_THRIFT_STRUCT: {
    if ((st = hs_thrift_struct_begin(r, what)) != HS_OK) return st;
    int16_t last = 0;
    hs_thrift_field f;
    for (;;) {
      st = hs_thrift_field_next(r, &last, &f, what);
      if (st != HS_OK || f.type == HS_THRIFT_STOP) break;
      st = hs_thrift_skip(r, f.type, what);
      if (st != HS_OK) break;
    }
    hs_thrift_struct_end(r);
    return st;
  }
  default: return hs_thrift_fail(r, what, "cannot skip an invalid type");
  }
}

static const char *hs_thrift_type_name(uint8_t type) {
  static const char *const names[] = {"stop",   "bool",   "bool", "i8",  "i16", "i32",   "i64",
                                      "double", "binary", "list", "set", "map", "struct"};
  return type <= HS_THRIFT_STRUCT ? names[type] : "invalid";
}

hs_status hs_thrift_field_expect(hs_thrift_reader *r, const hs_thrift_field *f, uint8_t type,
                                 const char *what) {
  if (r->status != HS_OK) return r->status;
  if (f->type == type) return HS_OK;
  /* A set is accepted where a list is expected: same wire layout. */
  if (type == HS_THRIFT_LIST && f->type == HS_THRIFT_SET) return HS_OK;
  r->status = HS_ERR_CORRUPT;
  return hs_error_set(r->err, HS_ERR_CORRUPT, "thrift: at byte %zu: %s: wire type %s, expected %s",
                      r->pos, what, hs_thrift_type_name(f->type), hs_thrift_type_name(type));
}

hs_status hs_thrift_field_bool(hs_thrift_reader *r, const hs_thrift_field *f, bool *out,
                               const char *what) {
  hs_status st = hs_thrift_field_expect(r, f, HS_THRIFT_TRUE, what);
  if (st == HS_OK) *out = f->bool_value;
  return st;
}

hs_status hs_thrift_field_i8(hs_thrift_reader *r, const hs_thrift_field *f, int8_t *out,
                             const char *what) {
  hs_status st = hs_thrift_field_expect(r, f, HS_THRIFT_I8, what);
  return st != HS_OK ? st : hs_thrift_read_i8(r, out, what);
}

hs_status hs_thrift_field_i16(hs_thrift_reader *r, const hs_thrift_field *f, int16_t *out,
                              const char *what) {
  hs_status st = hs_thrift_field_expect(r, f, HS_THRIFT_I16, what);
  return st != HS_OK ? st : hs_thrift_read_i16(r, out, what);
}

hs_status hs_thrift_field_i32(hs_thrift_reader *r, const hs_thrift_field *f, int32_t *out,
                              const char *what) {
  hs_status st = hs_thrift_field_expect(r, f, HS_THRIFT_I32, what);
  return st != HS_OK ? st : hs_thrift_read_i32(r, out, what);
}

hs_status hs_thrift_field_i64(hs_thrift_reader *r, const hs_thrift_field *f, int64_t *out,
                              const char *what) {
  hs_status st = hs_thrift_field_expect(r, f, HS_THRIFT_I64, what);
  return st != HS_OK ? st : hs_thrift_read_i64(r, out, what);
}

hs_status hs_thrift_field_binary(hs_thrift_reader *r, const hs_thrift_field *f,
                                 const uint8_t **data, uint32_t *len, const char *what) {
  hs_status st = hs_thrift_field_expect(r, f, HS_THRIFT_BINARY, what);
  return st != HS_OK ? st : hs_thrift_read_binary(r, data, len, what);
}

/* ------------------------------------------------------------------ writer */

void hs_thrift_writer_init(hs_thrift_writer *w, hs_buf *out) {
  w->out = out;
  w->depth = 0;
  w->failed = false;
  memset(w->last_id, 0, sizeof w->last_id);
}

hs_status hs_thrift_writer_finish(hs_thrift_writer *w, const char *what, hs_error *err) {
  if (w->failed || w->depth != 0)
    return hs_error_set(err, w->failed ? HS_ERR_NOMEM : HS_ERR_INTERNAL, "thrift: writing %s: %s",
                        what, w->failed ? "out of memory" : "unbalanced struct nesting");
  return HS_OK;
}

static void hs_thrift_put(hs_thrift_writer *w, const void *p, size_t n) {
  if (!w->failed && !hs_buf_append(w->out, p, n)) w->failed = true;
}

static void hs_thrift_put_byte(hs_thrift_writer *w, uint8_t b) {
  hs_thrift_put(w, &b, 1);
}

static void hs_thrift_put_varint(hs_thrift_writer *w, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  while (v >= 0x80) {
    tmp[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  tmp[n++] = (uint8_t)v;
  hs_thrift_put(w, tmp, n);
}

static uint64_t hs_thrift_zigzag(int64_t v) {
  return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static void hs_thrift_field_header(hs_thrift_writer *w, int16_t id, uint8_t type) {
  if (w->depth <= 0) {
    w->failed = true; /* a field outside any struct */
    return;
  }
  int16_t *last = &w->last_id[w->depth - 1];
  if (id > *last && id - *last <= 15) {
    hs_thrift_put_byte(w, (uint8_t)((id - *last) << 4 | type));
  } else {
    hs_thrift_put_byte(w, type);
    hs_thrift_put_varint(w, hs_thrift_zigzag(id));
  }
  *last = id;
}

void hs_thrift_write_struct_begin(hs_thrift_writer *w) {
  if (w->depth >= HS_THRIFT_DEPTH_MAX) {
    w->failed = true;
    return;
  }
  w->last_id[w->depth++] = 0;
}

void hs_thrift_write_struct_end(hs_thrift_writer *w) {
  hs_thrift_put_byte(w, HS_THRIFT_STOP);
  if (w->depth > 0) w->depth--;
}

void hs_thrift_write_field_bool(hs_thrift_writer *w, int16_t id, bool v) {
  hs_thrift_field_header(w, id, v ? HS_THRIFT_TRUE : HS_THRIFT_FALSE);
}

void hs_thrift_write_field_i8(hs_thrift_writer *w, int16_t id, int8_t v) {
  hs_thrift_field_header(w, id, HS_THRIFT_I8);
  hs_thrift_put_byte(w, (uint8_t)v);
}

void hs_thrift_write_field_i16(hs_thrift_writer *w, int16_t id, int16_t v) {
  hs_thrift_field_header(w, id, HS_THRIFT_I16);
  hs_thrift_put_varint(w, hs_thrift_zigzag(v));
}

void hs_thrift_write_field_i32(hs_thrift_writer *w, int16_t id, int32_t v) {
  hs_thrift_field_header(w, id, HS_THRIFT_I32);
  hs_thrift_put_varint(w, hs_thrift_zigzag(v));
}

void hs_thrift_write_field_i64(hs_thrift_writer *w, int16_t id, int64_t v) {
  hs_thrift_field_header(w, id, HS_THRIFT_I64);
  hs_thrift_put_varint(w, hs_thrift_zigzag(v));
}

void hs_thrift_write_field_binary(hs_thrift_writer *w, int16_t id, const void *data, size_t len) {
  hs_thrift_field_header(w, id, HS_THRIFT_BINARY);
  hs_thrift_write_binary(w, data, len);
}

void hs_thrift_write_field_string(hs_thrift_writer *w, int16_t id, const char *s) {
  hs_thrift_write_field_binary(w, id, s, strlen(s));
}

void hs_thrift_write_field_struct_begin(hs_thrift_writer *w, int16_t id) {
  hs_thrift_field_header(w, id, HS_THRIFT_STRUCT);
  hs_thrift_write_struct_begin(w);
}

void hs_thrift_write_field_list_begin(hs_thrift_writer *w, int16_t id, uint8_t elem_type,
                                      uint32_t n) {
  hs_thrift_field_header(w, id, HS_THRIFT_LIST);
  if (n < 15) {
    hs_thrift_put_byte(w, (uint8_t)(n << 4 | elem_type));
  } else {
    hs_thrift_put_byte(w, (uint8_t)(0xf0 | elem_type));
    hs_thrift_put_varint(w, n);
  }
}

void hs_thrift_write_i32(hs_thrift_writer *w, int32_t v) {
  hs_thrift_put_varint(w, hs_thrift_zigzag(v));
}

void hs_thrift_write_i64(hs_thrift_writer *w, int64_t v) {
  hs_thrift_put_varint(w, hs_thrift_zigzag(v));
}

void hs_thrift_write_binary(hs_thrift_writer *w, const void *data, size_t len) {
  hs_thrift_put_varint(w, len);
  if (len) hs_thrift_put(w, data, len);
}

void hs_thrift_write_bool_elem(hs_thrift_writer *w, bool v) {
  hs_thrift_put_byte(w, v ? HS_THRIFT_TRUE : HS_THRIFT_FALSE);
}
