/*
 * ipc_schema.c — Arrow IPC Schema messages (Schema.fbs, Message.fbs) to and
 * from ArrowSchema, with a minimal FlatBuffers writer and a bounded reader.
 *
 * FlatBuffers in brief (what this file relies on): a buffer starts with a
 * uint32 offset to the root table. A table starts with an int32 `soffset`;
 * its vtable lives at table - soffset and holds uint16 vtable size, uint16
 * table size, then one uint16 per field slot (offset of the field inside
 * the table; 0 = absent, use the default). A field that refers to another
 * object (table, string, vector) holds a uint32 added to the field's own
 * position, so references always point forward. Strings and vectors start
 * with a uint32 count; strings are NUL terminated; a vector of tables holds
 * uint32 references. A union field occupies two slots: a uint8 type tag and
 * the reference to the member table. Scalars are little endian and aligned
 * to their size.
 *
 * Writer: objects are laid out front to back. Each table is written with
 * its vtable just before it and placeholder references; the objects those
 * refer to are written afterwards and the placeholders patched, which keeps
 * every reference pointing forward without the usual back-to-front builder.
 * Every scalar is written explicitly (no default elision): simpler, and all
 * readers accept it.
 *
 * Reader: every position is checked against the message length before it
 * is read; references must land inside the buffer; vector counts are
 * checked against the bytes left. Shared sub-objects (a hostile DAG) cannot
 * blow up: the number of nodes is bounded by len / 4 and the bytes copied
 * out by len. The decoded tree is built in an arena (so error paths only
 * reset the arena) and deep-copied into an owned schema at the end, which
 * also keeps metadata containing NUL bytes intact.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "ipc.h"

/* Same bound as hs_arrow_schema_copy: root = 0, each child or dictionary +1. */
#define IPC_DEPTH_MAX 64
#define IPC_PATH_MAX 256

/* Type union tags (Schema.fbs `union Type`). */
enum {
  T_NULL = 1,
  T_INT = 2,
  T_FLOAT = 3,
  T_BINARY = 4,
  T_UTF8 = 5,
  T_BOOL = 6,
  T_DECIMAL = 7,
  T_DATE = 8,
  T_TIME = 9,
  T_TIMESTAMP = 10,
  T_INTERVAL = 11,
  T_LIST = 12,
  T_STRUCT = 13,
  T_UNION = 14,
  T_FIXED_BINARY = 15,
  T_FIXED_LIST = 16,
  T_MAP = 17,
  T_DURATION = 18,
  T_LARGE_BINARY = 19,
  T_LARGE_UTF8 = 20,
  T_LARGE_LIST = 21
};

/* Field slots (Schema.fbs `table Field`; the union takes two). */
enum { F_NAME, F_NULLABLE, F_TYPE_TYPE, F_TYPE, F_DICTIONARY, F_CHILDREN, F_METADATA, F_SLOTS };
enum { MSG_VERSION, MSG_HEADER_TYPE, MSG_HEADER, MSG_BODY_LENGTH, MSG_SLOTS };
enum { SCH_ENDIANNESS, SCH_FIELDS, SCH_METADATA, SCH_SLOTS };
enum { HEADER_SCHEMA = 1, METADATA_V5 = 4 };

/* A field path for messages: "a.b.item". Truncated silently when long. */
typedef struct ipc_path {
  char text[IPC_PATH_MAX];
  size_t len;
} ipc_path;

static size_t path_push(ipc_path *p, const char *name, size_t name_len) {
  size_t saved = p->len;
  if (p->len > 0 && p->len + 1 < sizeof p->text) p->text[p->len++] = '.';
  size_t room = sizeof p->text - 1 - p->len;
  if (name_len > room) name_len = room;
  memcpy(p->text + p->len, name, name_len);
  p->len += name_len;
  p->text[p->len] = '\0';
  return saved;
}

static void path_pop(ipc_path *p, size_t saved) {
  p->len = saved;
  p->text[saved] = '\0';
}

/* ================================================================ writer */

typedef struct fb_writer {
  hs_buf buf;
  bool ok; /* false after any allocation failure */
} fb_writer;

static void fb_pad(fb_writer *w, size_t align) {
  while (w->ok && w->buf.len % align != 0) w->ok = hs_buf_append_byte(&w->buf, 0);
}

static void fb_put(fb_writer *w, const void *src, size_t n) {
  if (w->ok) w->ok = hs_buf_append(&w->buf, src, n);
}

static void fb_put_u16(fb_writer *w, uint16_t v) {
  uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
  fb_put(w, b, 2);
}

static void fb_put_u32(fb_writer *w, uint32_t v) {
  uint8_t b[4];
  hs_store_u32le(b, v);
  fb_put(w, b, 4);
}

/* Point the reference stored at `at` to `target` (which lies after it). */
static void fb_patch(fb_writer *w, size_t at, size_t target) {
  if (w->ok) hs_store_u32le(w->buf.data + at, (uint32_t)(target - at));
}

#define FB_SLOTS_MAX 8

/* A table being written: scalars and reference placeholders per slot. */
typedef struct fb_table {
  int n_slots;
  uint8_t size[FB_SLOTS_MAX]; /* 0 = absent */
  uint64_t value[FB_SLOTS_MAX];
  size_t at[FB_SLOTS_MAX]; /* after fb_table_write: where each field went */
} fb_table;

static void fb_table_init(fb_table *t, int n_slots) {
  memset(t, 0, sizeof *t);
  t->n_slots = n_slots;
}

static void fb_table_scalar(fb_table *t, int slot, uint8_t size, uint64_t value) {
  t->size[slot] = size;
  t->value[slot] = value;
}

/* A reference slot, patched later with fb_patch(w, t->at[slot], target). */
static void fb_table_ref(fb_table *t, int slot) {
  fb_table_scalar(t, slot, 4, 0);
}

/* Write vtable then table; returns the table's position. Fields are placed
 * largest first so that each is aligned to its size (the table starts on an
 * 8-byte boundary). */
static size_t fb_table_write(fb_writer *w, fb_table *t) {
  uint16_t field_off[FB_SLOTS_MAX] = {0};
  size_t cursor = 4; /* after the soffset */
  for (uint8_t sz = 8; sz >= 1; sz /= 2) {
    for (int i = 0; i < t->n_slots; i++) {
      if (t->size[i] != sz) continue;
      cursor = (cursor + sz - 1) / sz * sz;
      field_off[i] = (uint16_t)cursor;
      cursor += sz;
    }
  }
  size_t table_size = (cursor + 3) / 4 * 4;
  uint8_t body[64] = {0};
  assert(table_size <= sizeof body); /* at most 7 slots of <= 8 bytes in our tables */
  fb_pad(w, 2);
  size_t vt = w->buf.len;
  fb_put_u16(w, (uint16_t)(4 + 2 * t->n_slots));
  fb_put_u16(w, (uint16_t)table_size);
  for (int i = 0; i < t->n_slots; i++) fb_put_u16(w, field_off[i]);
  fb_pad(w, 8);
  size_t pos = w->buf.len;
  hs_store_u32le(body, (uint32_t)(pos - vt)); /* vtable = table - soffset */
  for (int i = 0; i < t->n_slots; i++) {
    for (uint8_t b = 0; b < t->size[i]; b++) {
      body[field_off[i] + b] = (uint8_t)(t->value[i] >> (8 * b));
    }
    t->at[i] = pos + field_off[i];
  }
  fb_put(w, body, table_size);
  return pos;
}

static size_t fb_string(fb_writer *w, const char *s, size_t n) {
  fb_pad(w, 4);
  size_t pos = w->buf.len;
  fb_put_u32(w, (uint32_t)n);
  fb_put(w, s, n);
  fb_put(w, "", 1);
  return pos;
}

/* A vector of n references (zeroed); element i is at pos + 4 + 4 * i. */
static size_t fb_ref_vector(fb_writer *w, size_t n) {
  fb_pad(w, 4);
  size_t pos = w->buf.len;
  fb_put_u32(w, (uint32_t)n);
  for (size_t i = 0; i < n && w->ok; i++) fb_put_u32(w, 0);
  return pos;
}

typedef struct ipc_encoder {
  fb_writer w;
  int64_t next_dictionary_id;
  ipc_path path;
  hs_error *err;
} ipc_encoder;

static int32_t load_i32_native(const char *p) {
  int32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* Write a [KeyValue] vector for an Arrow C metadata blob and patch `at`. */
static hs_status encode_metadata(ipc_encoder *e, const char *metadata, size_t at) {
  if (hs_arrow_metadata_size(metadata) < 0) {
    return hs_error_set(e->err, HS_ERR_INVALID_ARG, "arrow ipc encode: field '%s': bad metadata",
                        e->path.text);
  }
  int32_t n = load_i32_native(metadata);
  size_t vec = fb_ref_vector(&e->w, (size_t)n);
  fb_patch(&e->w, at, vec);
  const char *p = metadata + 4;
  for (int32_t i = 0; i < n && e->w.ok; i++) {
    int32_t klen = load_i32_native(p);
    const char *k = p + 4;
    int32_t vlen = load_i32_native(k + klen);
    const char *v = k + klen + 4;
    p = v + vlen;
    fb_table t;
    fb_table_init(&t, 2);
    fb_table_ref(&t, 0);
    fb_table_ref(&t, 1);
    size_t kv = fb_table_write(&e->w, &t);
    fb_patch(&e->w, vec + 4 + 4 * (size_t)i, kv);
    fb_patch(&e->w, t.at[0], fb_string(&e->w, k, (size_t)klen));
    fb_patch(&e->w, t.at[1], fb_string(&e->w, v, (size_t)vlen));
  }
  return HS_OK;
}

static uint16_t ipc_unit(hs_time_unit u) {
  return (uint16_t)u; /* SECOND..NANOSECOND */
}

/* Fill a type table for `ty`; returns the union tag, or 0 when unsupported.
 * `tz_slot` is set when slot 1 is the timezone reference (TIMESTAMP). */
static uint8_t encode_type_table(const hs_arrow_type *ty, const struct ArrowSchema *s, fb_table *t,
                                 bool *tz_ref) {
  *tz_ref = false;
  fb_table_init(t, 0);
  switch (ty->id) {
  case HS_AT_NA: return T_NULL;
  case HS_AT_BOOL: return T_BOOL;
  case HS_AT_INT8:
  case HS_AT_UINT8:
  case HS_AT_INT16:
  case HS_AT_UINT16:
  case HS_AT_INT32:
  case HS_AT_UINT32:
  case HS_AT_INT64:
  case HS_AT_UINT64: {
    int k = ty->id - HS_AT_INT8; /* signed/unsigned pairs of 8, 16, 32, 64 bits */
    fb_table_init(t, 2);
    fb_table_scalar(t, 0, 4, (uint64_t)(8u << (k / 2)));
    fb_table_scalar(t, 1, 1, k % 2 == 0);
    return T_INT;
  }
  case HS_AT_FLOAT16:
  case HS_AT_FLOAT32:
  case HS_AT_FLOAT64:
    fb_table_init(t, 1);
    fb_table_scalar(t, 0, 2, (uint64_t)(ty->id - HS_AT_FLOAT16)); /* HALF, SINGLE, DOUBLE */
    return T_FLOAT;
  case HS_AT_BINARY: return T_BINARY;
  case HS_AT_LARGE_BINARY: return T_LARGE_BINARY;
  case HS_AT_STRING: return T_UTF8;
  case HS_AT_LARGE_STRING: return T_LARGE_UTF8;
  case HS_AT_FIXED_BINARY:
    fb_table_init(t, 1);
    fb_table_scalar(t, 0, 4, (uint32_t)ty->width);
    return T_FIXED_BINARY;
  case HS_AT_DECIMAL128:
    fb_table_init(t, 3);
    fb_table_scalar(t, 0, 4, (uint32_t)ty->precision);
    fb_table_scalar(t, 1, 4, (uint32_t)ty->scale);
    fb_table_scalar(t, 2, 4, 128);
    return T_DECIMAL;
  case HS_AT_DATE32:
  case HS_AT_DATE64:
    fb_table_init(t, 1);
    fb_table_scalar(t, 0, 2, ty->id == HS_AT_DATE64); /* DAY = 0, MILLISECOND = 1 */
    return T_DATE;
  case HS_AT_TIME32:
  case HS_AT_TIME64:
    fb_table_init(t, 2);
    fb_table_scalar(t, 0, 2, ipc_unit(ty->unit));
    fb_table_scalar(t, 1, 4, ty->id == HS_AT_TIME32 ? 32 : 64);
    return T_TIME;
  case HS_AT_TIMESTAMP:
    fb_table_init(t, 2);
    fb_table_scalar(t, 0, 2, ipc_unit(ty->unit));
    if (ty->timezone[0] != '\0') {
      fb_table_ref(t, 1);
      *tz_ref = true;
    }
    return T_TIMESTAMP;
  case HS_AT_DURATION:
    fb_table_init(t, 1);
    fb_table_scalar(t, 0, 2, ipc_unit(ty->unit));
    return T_DURATION;
  case HS_AT_LIST: return T_LIST;
  case HS_AT_LARGE_LIST: return T_LARGE_LIST;
  case HS_AT_FIXED_LIST:
    fb_table_init(t, 1);
    fb_table_scalar(t, 0, 4, (uint32_t)ty->width);
    return T_FIXED_LIST;
  case HS_AT_STRUCT: return T_STRUCT;
  case HS_AT_MAP:
    fb_table_init(t, 1);
    fb_table_scalar(t, 0, 1, (s->flags & ARROW_FLAG_MAP_KEYS_SORTED) != 0);
    return T_MAP;
  default: return 0;
  }
}

/* Children a type must have: -1 any number, else exactly that many. */
static int expected_children(hs_arrow_type_id id) {
  switch (id) {
  case HS_AT_LIST:
  case HS_AT_LARGE_LIST:
  case HS_AT_FIXED_LIST:
  case HS_AT_MAP: return 1;
  case HS_AT_STRUCT: return -1;
  default: return 0;
  }
}

static hs_status encode_field(ipc_encoder *e, const struct ArrowSchema *s, size_t at, int depth);

/* Write the [Field] vector for s's children and patch `at`. */
static hs_status encode_children(ipc_encoder *e, const struct ArrowSchema *s, size_t at,
                                 int depth) {
  if (s->n_children > 0 && s->children == NULL) {
    return hs_error_set(e->err, HS_ERR_INVALID_ARG, "arrow ipc encode: field '%s': NULL children",
                        e->path.text);
  }
  size_t vec = fb_ref_vector(&e->w, (size_t)s->n_children);
  fb_patch(&e->w, at, vec);
  for (int64_t i = 0; i < s->n_children; i++) {
    hs_status st = encode_field(e, s->children[i], vec + 4 + 4 * (size_t)i, depth + 1);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

static hs_status encode_field(ipc_encoder *e, const struct ArrowSchema *s, size_t at, int depth) {
  if (s == NULL || s->release == NULL || s->format == NULL) {
    return hs_error_set(e->err, HS_ERR_INVALID_ARG,
                        "arrow ipc encode: field '%s': child missing or released", e->path.text);
  }
  const char *name = s->name != NULL ? s->name : "";
  size_t saved = path_push(&e->path, name, strlen(name));
  hs_status st = HS_OK;
  if (depth > IPC_DEPTH_MAX) {
    st = hs_error_set(e->err, HS_ERR_UNSUPPORTED,
                      "arrow ipc encode: field '%s' nested deeper than %d", e->path.text,
                      IPC_DEPTH_MAX);
    goto done;
  }
  /* A dictionary-encoded field: its type is the dictionary's value type,
   * its own format the index type. */
  const struct ArrowSchema *value = s->dictionary != NULL ? s->dictionary : s;
  hs_arrow_type ty, index_ty;
  if (value->release == NULL || value->format == NULL) {
    st = hs_error_set(e->err, HS_ERR_INVALID_ARG,
                      "arrow ipc encode: field '%s': dictionary released", e->path.text);
    goto done;
  }
  if ((st = hs_arrow_type_parse(value->format, &ty, e->err)) != HS_OK) goto done;
  if (s->dictionary != NULL) {
    if ((st = hs_arrow_type_parse(s->format, &index_ty, e->err)) != HS_OK) goto done;
    if (index_ty.id < HS_AT_INT8 || index_ty.id > HS_AT_UINT64) {
      st = hs_error_set(e->err, HS_ERR_SCHEMA,
                        "arrow ipc encode: field '%s': dictionary index format '%s' is not an "
                        "integer",
                        e->path.text, s->format);
      goto done;
    }
  }
  fb_table type_table;
  bool tz_ref;
  uint8_t tag = encode_type_table(&ty, value, &type_table, &tz_ref);
  if (tag == 0) {
    st = hs_error_set(e->err, HS_ERR_UNSUPPORTED,
                      "arrow ipc encode: field '%s': format '%s' is not supported", e->path.text,
                      value->format);
    goto done;
  }
  int want = expected_children(ty.id);
  if (want >= 0 && value->n_children != want) {
    st = hs_error_set(e->err, HS_ERR_SCHEMA,
                      "arrow ipc encode: field '%s': format '%s' needs %d children, has %lld",
                      e->path.text, value->format, want, (long long)value->n_children);
    goto done;
  }
  if (ty.id == HS_AT_MAP) {
    const struct ArrowSchema *entries = value->children != NULL ? value->children[0] : NULL;
    if (entries == NULL || entries->format == NULL || strcmp(entries->format, "+s") != 0 ||
        entries->n_children != 2) {
      st = hs_error_set(e->err, HS_ERR_SCHEMA,
                        "arrow ipc encode: field '%s': map entries must be a struct of 2 fields",
                        e->path.text);
      goto done;
    }
  }

  fb_table field;
  fb_table_init(&field, F_SLOTS);
  fb_table_ref(&field, F_NAME);
  fb_table_scalar(&field, F_NULLABLE, 1, (s->flags & ARROW_FLAG_NULLABLE) != 0);
  fb_table_scalar(&field, F_TYPE_TYPE, 1, tag);
  fb_table_ref(&field, F_TYPE);
  if (s->dictionary != NULL) fb_table_ref(&field, F_DICTIONARY);
  fb_table_ref(&field, F_CHILDREN);
  if (s->metadata != NULL) fb_table_ref(&field, F_METADATA);
  size_t pos = fb_table_write(&e->w, &field);
  fb_patch(&e->w, at, pos);
  fb_patch(&e->w, field.at[F_NAME], fb_string(&e->w, name, strlen(name)));

  size_t type_pos = fb_table_write(&e->w, &type_table);
  fb_patch(&e->w, field.at[F_TYPE], type_pos);
  if (tz_ref) {
    fb_patch(&e->w, type_table.at[1], fb_string(&e->w, ty.timezone, strlen(ty.timezone)));
  }

  if (s->dictionary != NULL) {
    fb_table dict, index;
    fb_table_init(&dict, 4);
    fb_table_scalar(&dict, 0, 8, (uint64_t)e->next_dictionary_id++);
    fb_table_ref(&dict, 1);
    fb_table_scalar(&dict, 2, 1, (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0);
    fb_table_scalar(&dict, 3, 2, 0); /* DenseArray */
    size_t dict_pos = fb_table_write(&e->w, &dict);
    fb_patch(&e->w, field.at[F_DICTIONARY], dict_pos);
    bool unused;
    encode_type_table(&index_ty, s, &index, &unused);
    fb_patch(&e->w, dict.at[1], fb_table_write(&e->w, &index));
  }

  if ((st = encode_children(e, value, field.at[F_CHILDREN], depth)) != HS_OK) goto done;
  if (s->metadata != NULL) st = encode_metadata(e, s->metadata, field.at[F_METADATA]);
done:
  path_pop(&e->path, saved);
  return st;
}

hs_status hs_arrow_ipc_schema_encode(const struct ArrowSchema *schema, hs_buf *out, hs_error *err) {
  if (schema == NULL || out == NULL || schema->release == NULL || schema->format == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "arrow ipc encode: NULL or released schema");
  }
  if (strcmp(schema->format, "+s") != 0) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "arrow ipc encode: top-level format '%s' is not a struct ('+s')",
                        schema->format);
  }
  ipc_encoder e;
  memset(&e, 0, sizeof e);
  hs_buf_init(&e.w.buf);
  e.w.ok = true;
  e.err = err;

  fb_put_u32(&e.w, 0); /* root reference */
  fb_table msg;
  fb_table_init(&msg, MSG_SLOTS);
  fb_table_scalar(&msg, MSG_VERSION, 2, METADATA_V5);
  fb_table_scalar(&msg, MSG_HEADER_TYPE, 1, HEADER_SCHEMA);
  fb_table_ref(&msg, MSG_HEADER);
  fb_table_scalar(&msg, MSG_BODY_LENGTH, 8, 0);
  fb_patch(&e.w, 0, fb_table_write(&e.w, &msg));

  fb_table sch;
  fb_table_init(&sch, SCH_SLOTS);
  fb_table_scalar(&sch, SCH_ENDIANNESS, 2, 0); /* Little */
  fb_table_ref(&sch, SCH_FIELDS);
  if (schema->metadata != NULL) fb_table_ref(&sch, SCH_METADATA);
  fb_patch(&e.w, msg.at[MSG_HEADER], fb_table_write(&e.w, &sch));

  hs_status st = encode_children(&e, schema, sch.at[SCH_FIELDS], 0);
  if (st == HS_OK && schema->metadata != NULL) {
    st = encode_metadata(&e, schema->metadata, sch.at[SCH_METADATA]);
  }
  fb_pad(&e.w, 8);
  if (st == HS_OK && !e.w.ok) {
    st = hs_error_set(err, HS_ERR_NOMEM, "arrow ipc encode: out of memory");
  }
  if (st == HS_OK && e.w.buf.len > (size_t)INT32_MAX) {
    st = hs_error_set(err, HS_ERR_UNSUPPORTED, "arrow ipc encode: schema message too large");
  }
  if (st == HS_OK) {
    uint8_t prefix[8];
    hs_store_u32le(prefix, 0xFFFFFFFFu);
    hs_store_u32le(prefix + 4, (uint32_t)e.w.buf.len);
    size_t old_len = out->len;
    if (!hs_buf_append(out, prefix, 8) || !hs_buf_append(out, e.w.buf.data, e.w.buf.len)) {
      out->len = old_len;
      st = hs_error_set(err, HS_ERR_NOMEM, "arrow ipc encode: out of memory");
    }
  }
  hs_buf_free(&e.w.buf);
  return st;
}

/* ================================================================ reader */

typedef struct fb_reader {
  const uint8_t *buf;
  size_t len;
  size_t base;       /* offset of buf inside the message, for messages */
  size_t nodes_left; /* fields and dictionaries still allowed */
  size_t bytes_left; /* string bytes still allowed to be copied */
  hs_arena arena;    /* the decoded tree */
  ipc_path path;
  hs_error *err;
} fb_reader;

typedef struct fb_tab {
  size_t pos; /* table start */
  size_t vt;  /* vtable start */
  uint16_t vt_size;
  uint16_t size;
} fb_tab;

static uint16_t ld16(const uint8_t *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}

static hs_status corrupt(fb_reader *r, size_t at, const char *what) {
  return hs_error_set(r->err, HS_ERR_CORRUPT, "arrow ipc schema: %s at byte %zu%s%s%s", what,
                      r->base + at, r->path.len ? " (field '" : "", r->path.text,
                      r->path.len ? "')" : "");
}

static hs_status fb_tab_at(fb_reader *r, size_t pos, fb_tab *t) {
  if (pos > r->len || r->len - pos < 4) return corrupt(r, pos, "table out of bounds");
  int64_t vt = (int64_t)pos - (int32_t)hs_load_u32le(r->buf + pos);
  if (vt < 0 || (uint64_t)vt > r->len - 4) return corrupt(r, pos, "vtable out of bounds");
  t->pos = pos;
  t->vt = (size_t)vt;
  t->vt_size = ld16(r->buf + t->vt);
  t->size = ld16(r->buf + t->vt + 2);
  if (t->vt_size < 4 || t->vt_size % 2 != 0 || t->vt_size > r->len - t->vt) {
    return corrupt(r, t->vt, "bad vtable size");
  }
  if (t->size < 4 || t->size > r->len - pos) return corrupt(r, pos, "bad table size");
  return HS_OK;
}

/* Position of field `slot` of `size` bytes, or 0 when absent. */
static hs_status fb_field(fb_reader *r, const fb_tab *t, int slot, size_t size, size_t *at) {
  *at = 0;
  size_t entry = 4 + 2 * (size_t)slot;
  if (entry + 2 > t->vt_size) return HS_OK;
  uint16_t off = ld16(r->buf + t->vt + entry);
  if (off == 0) return HS_OK;
  if (off < 4 || off + size > t->size) return corrupt(r, t->pos, "field outside its table");
  *at = t->pos + off;
  return HS_OK;
}

static hs_status fb_scalar(fb_reader *r, const fb_tab *t, int slot, size_t size, int64_t dflt,
                           int64_t *out) {
  size_t at;
  hs_status st = fb_field(r, t, slot, size, &at);
  *out = dflt;
  if (st != HS_OK || at == 0) return st;
  const uint8_t *p = r->buf + at;
  switch (size) {
  case 1: *out = (int8_t)p[0]; break;
  case 2: *out = (int16_t)ld16(p); break;
  case 4: *out = (int32_t)hs_load_u32le(p); break;
  default: *out = (int64_t)hs_load_u64le(p); break;
  }
  return HS_OK;
}

/* Follow the uint32 reference stored at `at` (4 readable bytes); the target
 * must have at least 4 bytes. */
static hs_status fb_deref(fb_reader *r, size_t at, size_t *target) {
  uint64_t t = (uint64_t)at + hs_load_u32le(r->buf + at);
  if (t > r->len || r->len - t < 4) return corrupt(r, at, "reference out of bounds");
  *target = (size_t)t;
  return HS_OK;
}

/* Follow the reference in `slot`; *target = 0 when absent. */
static hs_status fb_ref(fb_reader *r, const fb_tab *t, int slot, size_t *target) {
  size_t at;
  hs_status st = fb_field(r, t, slot, 4, &at);
  *target = 0;
  if (st != HS_OK || at == 0) return st;
  return fb_deref(r, at, target);
}

/* The table in `slot`; when absent, *sub reads as all defaults. */
static hs_status fb_sub_table(fb_reader *r, const fb_tab *t, int slot, fb_tab *sub, bool *present) {
  size_t target;
  memset(sub, 0, sizeof *sub);
  hs_status st = fb_ref(r, t, slot, &target);
  *present = st == HS_OK && target != 0;
  if (!*present) return st;
  return fb_tab_at(r, target, sub);
}

/* The string in `slot` (not copied); *s = NULL when absent. */
static hs_status fb_str(fb_reader *r, const fb_tab *t, int slot, const char **s, size_t *n) {
  size_t target;
  *s = NULL;
  *n = 0;
  hs_status st = fb_ref(r, t, slot, &target);
  if (st != HS_OK || target == 0) return st;
  uint32_t count = hs_load_u32le(r->buf + target);
  if (count > r->len - target - 4) return corrupt(r, target, "string longer than the message");
  *s = (const char *)r->buf + target + 4;
  *n = count;
  return HS_OK;
}

/* A vector of references in `slot`: *first = position of element 0. */
static hs_status fb_vec(fb_reader *r, const fb_tab *t, int slot, size_t *first, size_t *count) {
  size_t target;
  *first = 0;
  *count = 0;
  hs_status st = fb_ref(r, t, slot, &target);
  if (st != HS_OK || target == 0) return st;
  uint32_t n = hs_load_u32le(r->buf + target);
  if (n > (r->len - target - 4) / 4) return corrupt(r, target, "vector longer than the message");
  *first = target + 4;
  *count = n;
  return HS_OK;
}

static hs_status fb_vec_table(fb_reader *r, size_t first, size_t i, fb_tab *out) {
  size_t target = 0;
  hs_status st = fb_deref(r, first + 4 * i, &target);
  return st != HS_OK ? st : fb_tab_at(r, target, out);
}

static void arena_schema_release(struct ArrowSchema *s) {
  s->release = NULL;
}

static hs_status out_of_memory(fb_reader *r) {
  return hs_error_set(r->err, HS_ERR_NOMEM, "arrow ipc schema: out of memory");
}

/* Copy n bytes into the arena as a C string, charged to the byte budget. */
static hs_status rd_dup(fb_reader *r, const char *s, size_t n, char **out) {
  if (n > r->bytes_left) return corrupt(r, 0, "strings exceed the message size (shared objects?)");
  r->bytes_left -= n;
  *out = hs_arena_strndup(&r->arena, s, n);
  return *out != NULL ? HS_OK : out_of_memory(r);
}

/* Give node n zeroed arena children, charged to the node budget. */
static hs_status rd_children(fb_reader *r, struct ArrowSchema *node, size_t n) {
  if (n > r->nodes_left) {
    return corrupt(r, 0, "more fields than the message can hold (shared objects?)");
  }
  r->nodes_left -= n;
  node->n_children = (int64_t)n;
  node->children = NULL;
  if (n == 0) return HS_OK;
  size_t bytes = n * (sizeof(struct ArrowSchema) + sizeof(struct ArrowSchema *));
  uint8_t *mem = hs_arena_alloc(&r->arena, bytes);
  if (mem == NULL) return out_of_memory(r);
  struct ArrowSchema *kids = (struct ArrowSchema *)mem;
  struct ArrowSchema **ptrs = (struct ArrowSchema **)(kids + n);
  for (size_t i = 0; i < n; i++) {
    ptrs[i] = &kids[i];
    kids[i].release = arena_schema_release;
  }
  node->children = ptrs;
  return HS_OK;
}

static void put_i32_native(uint8_t *p, int32_t v) {
  memcpy(p, &v, sizeof v);
}

/* A [KeyValue] vector as an Arrow C metadata blob (NULL when absent/empty). */
static hs_status rd_metadata(fb_reader *r, const fb_tab *t, int slot, const char **out) {
  size_t first, n;
  *out = NULL;
  hs_status st = fb_vec(r, t, slot, &first, &n);
  if (st != HS_OK || n == 0) return st;
  size_t total = 4;
  for (int pass = 0; pass < 2; pass++) {
    uint8_t *blob = NULL, *p = NULL;
    if (pass == 1) {
      if (total > (size_t)INT32_MAX || total - 4 > r->bytes_left) {
        return corrupt(r, first, "metadata exceeds the message size (shared objects?)");
      }
      r->bytes_left -= total - 4;
      blob = hs_arena_alloc(&r->arena, total);
      if (blob == NULL) return out_of_memory(r);
      put_i32_native(blob, (int32_t)n);
      p = blob + 4;
    }
    for (size_t i = 0; i < n; i++) {
      fb_tab kv;
      const char *k, *v;
      size_t kl, vl;
      if ((st = fb_vec_table(r, first, i, &kv)) != HS_OK) return st;
      if ((st = fb_str(r, &kv, 0, &k, &kl)) != HS_OK) return st;
      if ((st = fb_str(r, &kv, 1, &v, &vl)) != HS_OK) return st;
      if (pass == 0) {
        total += 8 + kl + vl; /* each <= len, n <= len / 4: no overflow */
        if (total > (size_t)INT32_MAX) {
          return corrupt(r, first, "metadata larger than 2 GiB");
        }
        continue;
      }
      put_i32_native(p, (int32_t)kl);
      if (kl) memcpy(p + 4, k, kl);
      p += 4 + kl;
      put_i32_native(p, (int32_t)vl);
      if (vl) memcpy(p + 4, v, vl);
      p += 4 + vl;
    }
    if (pass == 1) *out = (const char *)blob;
  }
  return HS_OK;
}

static hs_status unsupported(fb_reader *r, const char *what, int64_t v) {
  return hs_error_set(r->err, HS_ERR_UNSUPPORTED,
                      "arrow ipc schema: field '%s': %s (%lld) is not supported", r->path.text,
                      what, (long long)v);
}

static hs_status bad_value(fb_reader *r, const fb_tab *t, const char *what, int64_t v) {
  return hs_error_set(r->err, HS_ERR_CORRUPT,
                      "arrow ipc schema: field '%s': invalid %s %lld at byte %zu", r->path.text,
                      what, (long long)v, r->base + t->pos);
}

static hs_status rd_unit(fb_reader *r, const fb_tab *tt, int64_t dflt, char *unit) {
  int64_t u;
  hs_status st = fb_scalar(r, tt, 0, 2, dflt, &u);
  if (st != HS_OK) return st;
  if (u < 0 || u > 3) return bad_value(r, tt, "time unit", u);
  *unit = "smun"[u];
  return HS_OK;
}

/* Int table → "c", "C", "s", ... */
static hs_status rd_int_format(fb_reader *r, const fb_tab *tt, char *fmt) {
  int64_t bits, is_signed;
  hs_status st;
  if ((st = fb_scalar(r, tt, 0, 4, 0, &bits)) != HS_OK) return st;
  if ((st = fb_scalar(r, tt, 1, 1, 0, &is_signed)) != HS_OK) return st;
  const char *letters = is_signed ? "csil" : "CSIL";
  int k = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : bits == 64 ? 3 : -1;
  if (k < 0) return bad_value(r, tt, "integer bit width", bits);
  fmt[0] = letters[k];
  fmt[1] = '\0';
  return HS_OK;
}

/* The C format string of type `tag` with table `tt` (arena-allocated into
 * *format) and the number of children it needs (-1 = any). */
static hs_status rd_type(fb_reader *r, int64_t tag, const fb_tab *tt, char **format, int *want) {
  char fmt[48];
  const char *tz = "";
  size_t tz_len = 0;
  int64_t a, b, c;
  char unit;
  hs_status st = HS_OK;
  *want = 0;
  switch (tag) {
  case T_NULL: strcpy(fmt, "n"); break;
  case T_INT: st = rd_int_format(r, tt, fmt); break;
  case T_FLOAT:
    if ((st = fb_scalar(r, tt, 0, 2, 0, &a)) != HS_OK) return st;
    if (a < 0 || a > 2) return bad_value(r, tt, "float precision", a);
    snprintf(fmt, sizeof fmt, "%c", "efg"[a]);
    break;
  case T_BINARY: strcpy(fmt, "z"); break;
  case T_UTF8: strcpy(fmt, "u"); break;
  case T_BOOL: strcpy(fmt, "b"); break;
  case T_LARGE_BINARY: strcpy(fmt, "Z"); break;
  case T_LARGE_UTF8: strcpy(fmt, "U"); break;
  case T_DECIMAL:
    if ((st = fb_scalar(r, tt, 0, 4, 0, &a)) != HS_OK) return st;
    if ((st = fb_scalar(r, tt, 1, 4, 0, &b)) != HS_OK) return st;
    if ((st = fb_scalar(r, tt, 2, 4, 128, &c)) != HS_OK) return st;
    if (c != 128) return unsupported(r, "decimal bit width", c);
    if (a < 1 || a > 38) return bad_value(r, tt, "decimal128 precision", a);
    if (b < -1000 || b > 1000) return bad_value(r, tt, "decimal scale", b);
    snprintf(fmt, sizeof fmt, "d:%d,%d", (int)a, (int)b);
    break;
  case T_DATE:
    if ((st = fb_scalar(r, tt, 0, 2, 1, &a)) != HS_OK) return st;
    if (a != 0 && a != 1) return bad_value(r, tt, "date unit", a);
    strcpy(fmt, a == 0 ? "tdD" : "tdm");
    break;
  case T_TIME:
    if ((st = rd_unit(r, tt, 1, &unit)) != HS_OK) return st;
    if ((st = fb_scalar(r, tt, 1, 4, 32, &a)) != HS_OK) return st;
    if (a != ((unit == 's' || unit == 'm') ? 32 : 64)) return bad_value(r, tt, "time bit width", a);
    snprintf(fmt, sizeof fmt, "tt%c", unit);
    break;
  case T_TIMESTAMP:
    if ((st = rd_unit(r, tt, 0, &unit)) != HS_OK) return st;
    if ((st = fb_str(r, tt, 1, &tz, &tz_len)) != HS_OK) return st;
    if (tz == NULL) tz = "";
    if (memchr(tz, '\0', tz_len) != NULL) return bad_value(r, tt, "timezone (NUL byte)", 0);
    snprintf(fmt, sizeof fmt, "ts%c:", unit);
    break;
  case T_DURATION:
    if ((st = rd_unit(r, tt, 1, &unit)) != HS_OK) return st;
    snprintf(fmt, sizeof fmt, "tD%c", unit);
    break;
  case T_FIXED_BINARY:
    if ((st = fb_scalar(r, tt, 0, 4, 0, &a)) != HS_OK) return st;
    if (a < 0) return bad_value(r, tt, "fixed-size binary width", a);
    if (a == 0) return unsupported(r, "fixed-size binary width", a);
    snprintf(fmt, sizeof fmt, "w:%d", (int)a);
    break;
  case T_LIST:
    strcpy(fmt, "+l");
    *want = 1;
    break;
  case T_LARGE_LIST:
    strcpy(fmt, "+L");
    *want = 1;
    break;
  case T_FIXED_LIST:
    if ((st = fb_scalar(r, tt, 0, 4, 0, &a)) != HS_OK) return st;
    if (a < 0) return bad_value(r, tt, "fixed-size list size", a);
    snprintf(fmt, sizeof fmt, "+w:%d", (int)a);
    *want = 1;
    break;
  case T_STRUCT:
    strcpy(fmt, "+s");
    *want = -1;
    break;
  case T_MAP:
    strcpy(fmt, "+m");
    *want = 1;
    break;
  case 0: return bad_value(r, tt, "type tag", tag);
  default: return unsupported(r, "Arrow type tag", tag);
  }
  if (st != HS_OK) return st;
  size_t fl = strlen(fmt);
  if (tz_len > r->bytes_left) return corrupt(r, tt->pos, "timezone exceeds the message size");
  r->bytes_left -= tz_len;
  char *s = hs_arena_alloc(&r->arena, fl + tz_len + 1);
  if (s == NULL) return out_of_memory(r);
  memcpy(s, fmt, fl);
  if (tz_len) memcpy(s + fl, tz, tz_len);
  *format = s;
  return HS_OK;
}

static hs_status decode_field(fb_reader *r, const fb_tab *ft, struct ArrowSchema *node, int depth);

/* Decode the n fields of vector `first` into node's (already allocated)
 * children. */
static hs_status decode_children(fb_reader *r, struct ArrowSchema *node, size_t first, size_t n,
                                 int depth) {
  for (size_t i = 0; i < n; i++) {
    fb_tab ft;
    hs_status st = fb_vec_table(r, first, i, &ft);
    if (st == HS_OK) st = decode_field(r, &ft, node->children[i], depth + 1);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

static hs_status decode_field(fb_reader *r, const fb_tab *ft, struct ArrowSchema *node, int depth) {
  const char *name;
  size_t name_len;
  hs_status st = fb_str(r, ft, F_NAME, &name, &name_len);
  if (st != HS_OK) return st;
  if (name == NULL) name = "";
  size_t saved = path_push(&r->path, name, name_len);
  if (depth > IPC_DEPTH_MAX) {
    st = unsupported(r, "nesting depth", depth);
    goto done;
  }
  if (memchr(name, '\0', name_len) != NULL) {
    st = unsupported(r, "field name with a NUL byte at", (int64_t)(strlen(name)));
    goto done;
  }
  char *name_copy;
  if ((st = rd_dup(r, name, name_len, &name_copy)) != HS_OK) goto done;
  node->name = name_copy;

  int64_t nullable, tag;
  if ((st = fb_scalar(r, ft, F_NULLABLE, 1, 0, &nullable)) != HS_OK) goto done;
  if ((st = fb_scalar(r, ft, F_TYPE_TYPE, 1, 0, &tag)) != HS_OK) goto done;
  tag &= 0xFF;
  fb_tab tt, dt;
  bool has_type, has_dict;
  if ((st = fb_sub_table(r, ft, F_TYPE, &tt, &has_type)) != HS_OK) goto done;
  if ((st = fb_sub_table(r, ft, F_DICTIONARY, &dt, &has_dict)) != HS_OK) goto done;
  char *format = NULL;
  int want;
  (void)has_type; /* an absent type table reads as all defaults */
  if ((st = rd_type(r, tag, &tt, &format, &want)) != HS_OK) goto done;

  size_t first, n;
  if ((st = fb_vec(r, ft, F_CHILDREN, &first, &n)) != HS_OK) goto done;
  if (want >= 0 && n != (size_t)want) {
    st = hs_error_set(r->err, HS_ERR_CORRUPT,
                      "arrow ipc schema: field '%s': type '%s' needs %d children, has %zu",
                      r->path.text, format, want, n);
    goto done;
  }

  struct ArrowSchema *value = node; /* the node that carries the value type */
  node->flags = nullable ? ARROW_FLAG_NULLABLE : 0;
  if (has_dict) {
    if (depth + 1 > IPC_DEPTH_MAX) {
      st = unsupported(r, "nesting depth", depth + 1);
      goto done;
    }
    fb_tab it;
    bool has_index;
    int64_t ordered;
    char index_fmt[2] = "i";
    if ((st = fb_sub_table(r, &dt, 1, &it, &has_index)) != HS_OK) goto done;
    if (has_index && (st = rd_int_format(r, &it, index_fmt)) != HS_OK) goto done;
    if ((st = fb_scalar(r, &dt, 2, 1, 0, &ordered)) != HS_OK) goto done;
    char *index_copy;
    if ((st = rd_dup(r, index_fmt, 1, &index_copy)) != HS_OK) goto done;
    node->format = index_copy;
    if (ordered) node->flags |= ARROW_FLAG_DICTIONARY_ORDERED;
    if (r->nodes_left == 0) {
      st = corrupt(r, dt.pos, "more fields than the message can hold (shared objects?)");
      goto done;
    }
    r->nodes_left--;
    value = hs_arena_alloc(&r->arena, sizeof *value);
    if (value == NULL) {
      st = out_of_memory(r);
      goto done;
    }
    value->release = arena_schema_release;
    value->flags = ARROW_FLAG_NULLABLE;
    node->dictionary = value;
    depth++;
  }
  if ((st = rd_children(r, value, n)) != HS_OK) goto done;
  value->format = format;
  if (tag == T_MAP) {
    int64_t sorted;
    if ((st = fb_scalar(r, &tt, 0, 1, 0, &sorted)) != HS_OK) goto done;
    if (sorted) value->flags |= ARROW_FLAG_MAP_KEYS_SORTED;
  }
  if ((st = decode_children(r, value, first, n, depth)) != HS_OK) goto done;
  if (tag == T_MAP) {
    const struct ArrowSchema *entries = value->children[0];
    if (strcmp(entries->format, "+s") != 0 || entries->n_children != 2) {
      st = hs_error_set(r->err, HS_ERR_CORRUPT,
                        "arrow ipc schema: field '%s': map entries are not a struct of 2 fields",
                        r->path.text);
      goto done;
    }
  }
  st = rd_metadata(r, ft, F_METADATA, &node->metadata);
done:
  path_pop(&r->path, saved);
  return st;
}

static hs_status decode_message(fb_reader *r, struct ArrowSchema *root) {
  if (r->len < 8) return corrupt(r, 0, "message shorter than 8 bytes");
  size_t msg_pos = 0;
  fb_tab msg, sch;
  bool present;
  int64_t header_type, endianness;
  hs_status st = fb_deref(r, 0, &msg_pos);
  if (st == HS_OK) st = fb_tab_at(r, msg_pos, &msg);
  if (st == HS_OK) st = fb_scalar(r, &msg, MSG_HEADER_TYPE, 1, 0, &header_type);
  if (st != HS_OK) return st;
  if ((header_type & 0xFF) != HEADER_SCHEMA) {
    return hs_error_set(r->err, HS_ERR_UNSUPPORTED,
                        "arrow ipc schema: message header type %d is not a Schema",
                        (int)(header_type & 0xFF));
  }
  if ((st = fb_sub_table(r, &msg, MSG_HEADER, &sch, &present)) != HS_OK) return st;
  if (!present) return corrupt(r, msg_pos, "Schema message without a schema");
  if ((st = fb_scalar(r, &sch, SCH_ENDIANNESS, 2, 0, &endianness)) != HS_OK) return st;
  if (endianness == 1) {
    return hs_error_set(r->err, HS_ERR_UNSUPPORTED, "arrow ipc schema: big-endian schema");
  }
  if (endianness != 0) return bad_value(r, &sch, "endianness", endianness);
  size_t first, n;
  if ((st = fb_vec(r, &sch, SCH_FIELDS, &first, &n)) != HS_OK) return st;
  root->format = "+s";
  root->name = "";
  root->release = arena_schema_release;
  if ((st = rd_children(r, root, n)) != HS_OK) return st;
  if ((st = decode_children(r, root, first, n, 0)) != HS_OK) return st;
  return rd_metadata(r, &sch, SCH_METADATA, &root->metadata);
}

hs_status hs_arrow_ipc_schema_decode(const uint8_t *buf, size_t len, struct ArrowSchema *out,
                                     hs_error *err) {
  if (out == NULL || (buf == NULL && len > 0)) {
    if (out != NULL) memset(out, 0, sizeof *out);
    return hs_error_set(err, HS_ERR_INVALID_ARG, "arrow ipc schema: NULL argument");
  }
  memset(out, 0, sizeof *out);
  /* Encapsulation: 0xFFFFFFFF + int32 length (0.15+), or int32 length. */
  size_t body;
  if (len >= 8 && hs_load_u32le(buf) == 0xFFFFFFFFu) {
    body = 8;
  } else if (len >= 4) {
    body = 4;
  } else {
    return hs_error_set(err, HS_ERR_CORRUPT, "arrow ipc schema: %zu bytes is too short", len);
  }
  int32_t mlen = (int32_t)hs_load_u32le(buf + body - 4);
  if (mlen <= 0 || (size_t)mlen > len - body) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "arrow ipc schema: metadata length %d at byte %zu exceeds the %zu bytes "
                        "available",
                        mlen, body - 4, len - body);
  }
  fb_reader r;
  memset(&r, 0, sizeof r);
  r.buf = buf + body;
  r.len = (size_t)mlen;
  r.base = body;
  r.nodes_left = r.len / 4 + 2;
  r.bytes_left = r.len;
  r.err = err;
  hs_arena_init(&r.arena);
  struct ArrowSchema root;
  memset(&root, 0, sizeof root);
  hs_status st = decode_message(&r, &root);
  if (st == HS_OK) st = hs_arrow_schema_copy(&root, out, err);
  hs_arena_reset(&r.arena);
  return st;
}
