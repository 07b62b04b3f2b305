/*
 * deletes_eq.c — equality delete files (deletes_eq.h): the delete file's
 * key columns read through the schema map (schema_map.h: by field id,
 * else by name), each row encoded as one normalized key and kept in an
 * open-addressing hash set (MurmurHash3 of the key bytes); a data file's
 * key columns are read the same way and every row whose key is in a set
 * is added to the deleted positions.
 *
 * Key encoding, per key column in the key's field order: one tag byte
 * (0 NULL, 1 value), then for a value: boolean 1 byte; int, long, date,
 * time, timestamps 8 bytes (int64 little-endian, the Iceberg unit);
 * float and double 8 bytes of the double's bits (NaN canonical, -0.0
 * kept apart from 0.0, as Java's Double.compare); decimal 16 bytes
 * (unscaled, two's complement); string, binary, uuid, fixed a 4-byte
 * length and the bytes. The column types are fixed by the schema, so the
 * encoding is unambiguous.
 *
 * hs_table_eqdel_write is the other side, for our own writers: key rows
 * into a Parquet file stamped with the key fields' ids, and its manifest
 * record.
 */
#include "deletes_eq.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../arrow/arrow.h"
#include "../io/store.h"
#include "../parquet/parquet.h"
#include "schema_map.h"

/* Key bytes a delete file may expand to: this plus 32 x its size. Tests
 * lower the base with HS_EQDEL_KEY_BYTES_BASE (bytes) to reach the refusal
 * without 64 MiB of keys. */
#define EQDEL_KEY_BYTES_BASE ((size_t)64 << 20)

static size_t key_bytes_base(void) {
  const char *e = getenv("HS_EQDEL_KEY_BYTES_BASE");
  char *end = NULL;
  unsigned long long v = e != NULL ? strtoull(e, &end, 10) : 0;
  return e != NULL && end != e && *end == '\0' ? (size_t)v : EQDEL_KEY_BYTES_BASE;
}

typedef struct int_entry {
  int64_t key;
  uint32_t slot; /* index + 1 in slots; 0: empty */
} int_entry;

typedef struct eq_slot {
  const uint8_t *key; /* arena; NULL: empty slot */
  uint32_t len;
  uint32_t hash;
  bool hit; /* a data-file row matched it (hs_table_eqdel_match) */
} eq_slot;

struct hs_table_eqdel {
  hs_arena arena;
  char *path;
  size_t n;
  int32_t *ids;
  hs_iceberg_type *types; /* per key column (primitives: no arena pointers kept) */
  eq_slot *slots;         /* hs_malloc'd, cap a power of two */
  size_t cap, count;
  /* A blocked Bloom filter of the keys' hashes (two bits in one word, ~16
   * bits a key), so that the rows no key matches (most of them) skip the
   * table's cache miss; NULL: none (every lookup probes). */
  uint64_t *filter;
  size_t filter_mask; /* words - 1 */
  size_t key_bytes, key_bytes_max;
  /* One integer-family key column (int, long, date, time, timestamps):
   * the same keys by value (open addressing on the int64, slot index + 1
   * per entry, 0 empty), so that a data file's int32 / int64 column is
   * matched without encoding and hashing key bytes per row (int_build);
   * NULL: not built, every lookup goes through the byte keys. */
  bool ibuilt;
  struct int_entry *ints; /* NULL: the range's bitmap answers */
  size_t imask;
  int64_t imin, imax; /* the keys' range */
  /* A narrow range (at most 64 bits a key): bit v - imin set for each key,
   * per word the keys before it, and the keys' slots in value order. */
  uint64_t *ibits;
  uint32_t *irank, *iorder;
  /* A set made by from_arrow_ints: no byte keys (slots NULL); the keys are
   * numbered 0..count-1 (their rank in the bitmap, or the table's order)
   * and ihit has a byte per key. */
  uint8_t *ihit;
  uint32_t inull; /* slot index + 1 of the NULL key (a loaded file's), 0: none */
  /* Sets from rows in memory (hs_table_eqdel_from_arrow): per source row,
   * the slot of its key (-1: a NULL in the key, which matches nothing). */
  int64_t *row_slot;
  size_t n_rows;
};

/* ------------------------------------------------------------ helpers */

static bool key_type_ok(hs_iceberg_type_id id) {
  switch (id) {
  case HS_ICE_BOOLEAN:
  case HS_ICE_INT:
  case HS_ICE_LONG:
  case HS_ICE_FLOAT:
  case HS_ICE_DOUBLE:
  case HS_ICE_DECIMAL:
  case HS_ICE_DATE:
  case HS_ICE_TIME:
  case HS_ICE_TIMESTAMP:
  case HS_ICE_TIMESTAMPTZ:
  case HS_ICE_TIMESTAMP_NS:
  case HS_ICE_TIMESTAMPTZ_NS:
  case HS_ICE_STRING:
  case HS_ICE_UUID:
  case HS_ICE_FIXED:
  case HS_ICE_BINARY: return true;
  default: return false;
  }
}

/* The top-level field `id` of `schema`, checked to be a usable key. */
static hs_status key_field(const hs_iceberg_schema *schema, int32_t id,
                           const hs_iceberg_field **out, hs_error *err) {
  *out = NULL;
  const hs_iceberg_type *root = &schema->root;
  for (size_t i = 0; i < root->n_fields; i++) {
    if (root->fields[i].id != id) continue;
    const hs_iceberg_field *f = &root->fields[i];
    if (!key_type_ok(f->type.id)) {
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "equality field '%s' (id %d) of type %s cannot be an equality key here",
                          f->name, (int)id, hs_iceberg_type_name(f->type.id));
    }
    *out = f;
    return HS_OK;
  }
  const hs_iceberg_field *nested = NULL;
  if (hs_iceberg_schema_find(schema, id, &nested) != NULL) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "equality field id %d is nested: only top-level columns are read as "
                        "equality keys",
                        (int)id);
  }
  return hs_error_set(err, HS_ERR_SCHEMA, "equality field id %d is not in the table schema",
                      (int)id);
}

/* A schema of just the key fields (shallow copies of `schema`'s fields,
 * array in `a`). */
static hs_status key_schema(const hs_iceberg_schema *schema, const int32_t *ids, size_t n,
                            hs_arena *a, hs_iceberg_schema *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  out->schema_id = schema->schema_id;
  out->root.id = HS_ICE_STRUCT;
  hs_iceberg_field *fields = hs_arena_alloc(a, (n ? n : 1) * sizeof *fields);
  if (fields == NULL) return hs_error_set(err, HS_ERR_NOMEM, "equality deletes: out of memory");
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < i; k++) {
      if (ids[k] == ids[i])
        return hs_error_set(err, HS_ERR_CORRUPT, "equality field id %d is listed twice",
                            (int)ids[i]);
    }
    const hs_iceberg_field *f = NULL;
    hs_status st = key_field(schema, ids[i], &f, err);
    if (st != HS_OK) return st;
    fields[i] = *f;
  }
  out->root.fields = fields;
  out->root.n_fields = n;
  return HS_OK;
}

hs_status hs_table_eqdel_schema(const hs_iceberg_metadata *m, const int32_t *ids, size_t n,
                                hs_arena *arena, hs_iceberg_schema *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  out->root.id = HS_ICE_STRUCT;
  out->schema_id = m->current_schema_id;
  hs_iceberg_field *fields = hs_arena_alloc(arena, (n ? n : 1) * sizeof *fields);
  if (fields == NULL) return hs_error_set(err, HS_ERR_NOMEM, "equality deletes: out of memory");
  for (size_t i = 0; i < n; i++) {
    const hs_iceberg_field *best = NULL;
    int32_t best_schema = INT32_MIN;
    for (size_t s = 0; s < m->n_schemas; s++) {
      const hs_iceberg_type *root = &m->schemas[s].root;
      for (size_t k = 0; k < root->n_fields; k++) {
        if (root->fields[k].id == ids[i] && m->schemas[s].schema_id >= best_schema) {
          best = &root->fields[k];
          best_schema = m->schemas[s].schema_id;
        }
      }
    }
    if (best == NULL) {
      return hs_error_set(err, HS_ERR_SCHEMA,
                          "equality field id %d is not a top-level field of any schema",
                          (int)ids[i]);
    }
    fields[i] = *best;
  }
  out->root.fields = fields;
  out->root.n_fields = n;
  return HS_OK;
}

/* The schema map's context for the key schema (names for files without
 * field ids; initial-defaults when `defaults`). */
static hs_status ctx_of(const hs_iceberg_schema *ks, bool defaults, hs_colmap_ctx *c,
                        hs_error *err) {
  memset(c, 0, sizeof *c);
  size_t n = ks->root.n_fields;
  c->ids = hs_calloc(n + 1, sizeof *c->ids);
  c->names = hs_calloc(n + 1, sizeof *c->names);
  c->defaults = hs_calloc(n + 1, sizeof *c->defaults);
  bool ok = c->ids != NULL && c->names != NULL && c->defaults != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    const hs_iceberg_field *f = &ks->root.fields[i];
    c->ids[i] = f->id;
    c->n = i + 1;
    ok = (c->names[i] = hs_strdup(f->name)) != NULL;
    if (ok && defaults && f->initial_default != NULL && strcmp(f->initial_default, "null") != 0)
      ok = (c->defaults[i] = hs_strdup(f->initial_default)) != NULL;
  }
  if (ok) return HS_OK;
  hs_colmap_ctx_free(c);
  return hs_error_set(err, HS_ERR_NOMEM, "equality deletes: out of memory");
}

/* Append value v of type t (tag byte first) to `key`. */
static bool key_append(hs_buf *key, const hs_iceberg_type *t, const hs_iceberg_value *v) {
  if (v->is_null) return hs_buf_append_byte(key, 0);
  if (!hs_buf_append_byte(key, 1)) return false;
  uint8_t b[16];
  switch (t->id) {
  case HS_ICE_BOOLEAN: return hs_buf_append_byte(key, v->b ? 1 : 0);
  case HS_ICE_FLOAT:
  case HS_ICE_DOUBLE: {
    double d = isnan(v->f64) ? NAN : v->f64;
    uint64_t bits;
    memcpy(&bits, &d, 8);
    if (isnan(d)) bits = UINT64_C(0x7ff8000000000000);
    hs_store_u64le(b, bits);
    return hs_buf_append(key, b, 8);
  }
  case HS_ICE_DECIMAL:
    hs_store_u64le(b, v->dec_lo);
    hs_store_u64le(b + 8, (uint64_t)v->dec_hi);
    return hs_buf_append(key, b, 16);
  case HS_ICE_STRING:
  case HS_ICE_UUID:
  case HS_ICE_FIXED:
  case HS_ICE_BINARY:
    hs_store_u32le(b, (uint32_t)v->len);
    return hs_buf_append(key, b, 4) && (v->len == 0 || hs_buf_append(key, v->bytes, v->len));
  default: /* int, long, date, time, timestamps */
    hs_store_u64le(b, (uint64_t)v->i64);
    return hs_buf_append(key, b, 8);
  }
}

static uint32_t key_hash(const uint8_t *p, size_t len) {
  return hs_murmur3_x86_32(p, len, 0x9747b28cu);
}

static inline uint64_t filter_bits(uint32_t h) {
  return (UINT64_C(1) << (h & 63)) | (UINT64_C(1) << ((h >> 6) & 63));
}

static inline size_t filter_word(const hs_table_eqdel *d, uint32_t h) {
  return (size_t)((h * 0x9E3779B1u) >> 12) & d->filter_mask;
}

/* Whether a key of hash h may be in the set (false: surely not). */
static inline bool filter_may(const hs_table_eqdel *d, uint32_t h) {
  if (d->filter == NULL) return true;
  uint64_t m = filter_bits(h);
  return (d->filter[filter_word(d, h)] & m) == m;
}

/* Build the filter once every key is in (no filter when it cannot be allocated). */
static void filter_build(hs_table_eqdel *d) {
  size_t words = 1;
  while (words * 4 < d->count && words < ((size_t)1 << 20)) words *= 2; /* 16 bits a key */
  d->filter = hs_calloc(words, sizeof *d->filter);
  if (d->filter == NULL) return;
  d->filter_mask = words - 1;
  for (size_t i = 0; i < d->cap; i++) {
    if (d->slots[i].key == NULL) continue;
    uint32_t h = d->slots[i].hash;
    d->filter[filter_word(d, h)] |= filter_bits(h);
  }
}

static inline size_t int_home(int64_t v, size_t mask) {
  return (size_t)(((uint64_t)v * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & mask;
}

/* Whether keys of type `id` are encoded as one int64 (key_append's
 * default case). */
static bool int_family(hs_iceberg_type_id id) {
  return id == HS_ICE_INT || id == HS_ICE_LONG || id == HS_ICE_DATE || id == HS_ICE_TIME ||
         id == HS_ICE_TIMESTAMP || id == HS_ICE_TIMESTAMPTZ || id == HS_ICE_TIMESTAMP_NS ||
         id == HS_ICE_TIMESTAMPTZ_NS;
}

/* The by-value index of a one-column integer-family set (none when it
 * cannot be allocated: the byte keys still answer). A narrow range of keys
 * (at most 64 bits a key) is a bitmap with ranks, whose misses and hits
 * touch a few cache lines; a wider one an open-addressing table. */
static void int_build(hs_table_eqdel *d) {
  if (d->n != 1 || !int_family(d->types[0].id) || d->count == 0 || d->count >= UINT32_MAX / 4)
    return;
  d->imin = INT64_MAX;
  d->imax = INT64_MIN;
  for (size_t i = 0; i < d->cap; i++) {
    const eq_slot *s = &d->slots[i];
    if (s->key == NULL) continue;
    if (s->len == 1 && s->key[0] == 0) { /* the NULL key */
      d->inull = (uint32_t)i + 1;
      continue;
    }
    int64_t v = (int64_t)hs_load_u64le(s->key + 1);
    if (v < d->imin) d->imin = v;
    if (v > d->imax) d->imax = v;
  }
  if (d->imin > d->imax) { /* only the NULL key */
    d->ibuilt = true;
    return;
  }
  uint64_t span = (uint64_t)d->imax - (uint64_t)d->imin; /* bits - 1 */
  if (span / 64 <= d->count) {
    size_t words = (size_t)(span / 64 + 1);
    d->ibits = hs_calloc(words, sizeof *d->ibits);
    d->irank = hs_malloc(words * sizeof *d->irank);
    d->iorder = hs_malloc(d->count * sizeof *d->iorder);
    if (d->ibits == NULL || d->irank == NULL || d->iorder == NULL) return;
    for (size_t i = 0; i < d->cap; i++) {
      const eq_slot *s = &d->slots[i];
      if (s->key == NULL || s->len == 1) continue;
      uint64_t o = hs_load_u64le(s->key + 1) - (uint64_t)d->imin;
      d->ibits[o >> 6] |= UINT64_C(1) << (o & 63);
    }
    uint32_t before = 0;
    for (size_t w = 0; w < words; w++) {
      d->irank[w] = before;
      before += (uint32_t)__builtin_popcountll(d->ibits[w]);
    }
    for (size_t i = 0; i < d->cap; i++) {
      const eq_slot *s = &d->slots[i];
      if (s->key == NULL || s->len == 1) continue;
      uint64_t o = hs_load_u64le(s->key + 1) - (uint64_t)d->imin;
      uint64_t below = d->ibits[o >> 6] & ((UINT64_C(1) << (o & 63)) - 1);
      d->iorder[d->irank[o >> 6] + (uint32_t)__builtin_popcountll(below)] = (uint32_t)i;
    }
    d->ibuilt = true;
    return;
  }
  size_t cap = 16;
  while (cap < d->count * 2) cap *= 2;
  if ((d->ints = hs_calloc(cap, sizeof *d->ints)) == NULL) return;
  d->imask = cap - 1;
  for (size_t i = 0; i < d->cap; i++) {
    const eq_slot *s = &d->slots[i];
    if (s->key == NULL || s->len == 1) continue;
    int64_t v = (int64_t)hs_load_u64le(s->key + 1);
    size_t j = int_home(v, d->imask);
    while (d->ints[j].slot != 0) j = (j + 1) & d->imask;
    d->ints[j] = (int_entry){.key = v, .slot = (uint32_t)i + 1};
  }
  d->ibuilt = true;
}

/* The number of integer key v (-1: not in the set): its slot index, or
 * for a set without byte keys its index in ihit. */
static inline int64_t int_find(const hs_table_eqdel *d, int64_t v) {
  if (v < d->imin || v > d->imax) return -1;
  if (d->ints == NULL) {
    uint64_t o = (uint64_t)v - (uint64_t)d->imin;
    uint64_t w = d->ibits[o >> 6];
    if (((w >> (o & 63)) & 1) == 0) return -1;
    uint64_t below = w & ((UINT64_C(1) << (o & 63)) - 1);
    uint32_t rank = d->irank[o >> 6] + (uint32_t)__builtin_popcountll(below);
    return d->iorder != NULL ? (int64_t)d->iorder[rank] : (int64_t)rank;
  }
  for (size_t j = int_home(v, d->imask);; j = (j + 1) & d->imask) {
    const int_entry *e = &d->ints[j];
    if (e->slot == 0) return -1;
    if (e->key == v) return (int64_t)e->slot - 1;
  }
}

/* Remember that key number k matched (data files are matched concurrently). */
static inline void int_hit(const hs_table_eqdel *d, int64_t k) {
  if (d->ihit != NULL)
    __atomic_store_n(&d->ihit[k], 1, __ATOMIC_RELAXED);
  else
    __atomic_store_n(&d->slots[k].hit, true, __ATOMIC_RELAXED);
}

static const eq_slot *set_find(const hs_table_eqdel *d, const uint8_t *p, size_t len, uint32_t h) {
  if (d->cap == 0) return NULL;
  size_t mask = d->cap - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const eq_slot *s = &d->slots[i];
    if (s->key == NULL) return NULL;
    if (s->hash == h && s->len == len && memcmp(s->key, p, len) == 0) return s;
  }
}

static hs_status set_grow(hs_table_eqdel *d, hs_error *err) {
  size_t nc = d->cap ? d->cap * 2 : 1024;
  eq_slot *ns = hs_calloc(nc, sizeof *ns);
  if (ns == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < d->cap; i++) {
    if (d->slots[i].key == NULL) continue;
    size_t j = d->slots[i].hash & (nc - 1);
    while (ns[j].key != NULL) j = (j + 1) & (nc - 1);
    ns[j] = d->slots[i];
  }
  hs_free(d->slots);
  d->slots = ns;
  d->cap = nc;
  return HS_OK;
}

/* Add key p (if new); *at (when not NULL): its slot's index, valid until
 * the set grows. */
static hs_status set_insert(hs_table_eqdel *d, const uint8_t *p, size_t len, size_t *at,
                            hs_error *err) {
  uint32_t h = key_hash(p, len);
  const eq_slot *had = set_find(d, p, len, h);
  if (had != NULL) {
    if (at != NULL) *at = (size_t)(had - d->slots);
    return HS_OK;
  }
  if ((d->count + 1) * 2 > d->cap) {
    hs_status st = set_grow(d, err);
    if (st != HS_OK) return st;
  }
  d->key_bytes += len + sizeof(eq_slot) * 2;
  if (d->key_bytes > d->key_bytes_max) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "its keys expand past %zu bytes (%zu distinct so far): refused",
                        d->key_bytes_max, d->count);
  }
  uint8_t *k = hs_arena_memdup(&d->arena, p, len ? len : 1);
  if (k == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  size_t mask = d->cap - 1, i = h & mask;
  while (d->slots[i].key != NULL) i = (i + 1) & mask;
  d->slots[i] = (eq_slot){.key = k, .len = (uint32_t)len, .hash = h};
  d->count++;
  if (at != NULL) *at = i;
  return HS_OK;
}

static hs_status set_add(hs_table_eqdel *d, const uint8_t *p, size_t len, hs_error *err) {
  return set_insert(d, p, len, NULL, err);
}

/* ------------------------------------------------------ reading a file */

/* Whether a column read as Arrow type `at` holds values of Iceberg type
 * `t` (as hs_table_column_value reads them): a file column of another
 * type (a string where the field is a long, a decimal of another scale)
 * would turn into wrong keys, so it is refused instead. */
static bool reads_as(const hs_arrow_type *at, const hs_iceberg_type *t) {
  if (at->id == HS_AT_NA) return true; /* all NULL */
  switch (t->id) {
  case HS_ICE_BOOLEAN: return at->id == HS_AT_BOOL;
  case HS_ICE_INT:
  case HS_ICE_LONG:
    return at->id == HS_AT_INT8 || at->id == HS_AT_UINT8 || at->id == HS_AT_INT16 ||
           at->id == HS_AT_UINT16 || at->id == HS_AT_INT32 || at->id == HS_AT_UINT32 ||
           at->id == HS_AT_INT64;
  case HS_ICE_FLOAT:
  case HS_ICE_DOUBLE: return at->id == HS_AT_FLOAT32 || at->id == HS_AT_FLOAT64;
  case HS_ICE_DECIMAL: return at->id == HS_AT_DECIMAL128 && at->scale == t->scale;
  case HS_ICE_DATE: return at->id == HS_AT_DATE32 || at->id == HS_AT_DATE64;
  case HS_ICE_TIME: return at->id == HS_AT_TIME32 || at->id == HS_AT_TIME64;
  case HS_ICE_TIMESTAMP:
  case HS_ICE_TIMESTAMPTZ:
  case HS_ICE_TIMESTAMP_NS:
  case HS_ICE_TIMESTAMPTZ_NS: return at->id == HS_AT_TIMESTAMP;
  case HS_ICE_STRING:
  case HS_ICE_BINARY:
    return at->id == HS_AT_STRING || at->id == HS_AT_LARGE_STRING || at->id == HS_AT_BINARY ||
           at->id == HS_AT_LARGE_BINARY;
  case HS_ICE_UUID: return at->id == HS_AT_FIXED_BINARY && at->width == 16;
  case HS_ICE_FIXED: return at->id == HS_AT_FIXED_BINARY && at->width == t->length;
  default: return false;
  }
}

/* Called per batch: `cols` (n, bound to the batch's children in key
 * order), the batch and the file position of its first row. */
typedef hs_status (*batch_fn)(void *ctx, const hs_table_column *cols, const struct ArrowArray *b,
                              int64_t first_row, hs_error *err);

/* Read the columns of key schema `ks` from `path`, batch by batch. With
 * `is_delete` every key column must be in the file; otherwise absent ones
 * read as NULL or their initial-default. `what` names the file's role. */
static hs_status read_columns(const char *path, const uint8_t *buf, size_t buf_len,
                              const char *what, const hs_iceberg_schema *ks, bool is_delete,
                              batch_fn fn, void *fn_ctx, hs_error *err) {
  size_t n = ks->root.n_fields;
  hs_colmap_ctx ctx;
  hs_colmap map;
  memset(&map, 0, sizeof map);
  struct ArrowSchema want, file;
  memset(&want, 0, sizeof want);
  memset(&file, 0, sizeof file);
  struct ArrowArrayStream stream;
  memset(&stream, 0, sizeof stream);
  hs_parquet_reader *r = NULL;
  hs_table_column *cols = hs_calloc(n + 1, sizeof *cols);
  hs_status st = cols != NULL ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  if (st == HS_OK)
    st = ctx_of(ks, !is_delete, &ctx, err);
  else
    memset(&ctx, 0, sizeof ctx);
  if (st == HS_OK) st = hs_iceberg_schema_to_arrow(ks, NULL, &want, err);
  if (st == HS_OK)
    st = buf != NULL ? hs_parquet_reader_open_buffer(buf, buf_len, path, &r, err)
                     : hs_parquet_reader_open(path, &r, err);
  if (st == HS_OK) st = hs_parquet_reader_schema(r, &file, err);
  if (st == HS_OK) st = hs_colmap_build(&ctx, &want, &file, false, path, &map, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    const hs_iceberg_field *f = &ks->root.fields[i];
    if (is_delete && (map.conv[i] == HS_COLMAP_NULLS || map.conv[i] == HS_COLMAP_DEFAULT)) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "has no column for equality field '%s' (id %d)",
                        f->name, (int)f->id);
      break;
    }
    const struct ArrowSchema *oc = map.out.children[i];
    if (oc->dictionary != NULL) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s' is dictionary-encoded", f->name);
      break;
    }
    if ((st = hs_arrow_type_parse(oc->format, &cols[i].at, err)) != HS_OK) break;
    cols[i].index = i;
    cols[i].it = &f->type;
    cols[i].name = f->name;
    if (!reads_as(&cols[i].at, &f->type)) {
      st = hs_error_set(err, HS_ERR_SCHEMA,
                        "column '%s' (field id %d) is stored as Arrow '%s', which does not read "
                        "as %s",
                        f->name, (int)f->id, oc->format, hs_iceberg_type_name(f->type.id));
    }
  }
  if (st == HS_OK) {
    hs_parquet_read_options ro;
    hs_parquet_read_options_init(&ro);
    ro.columns = (const char *const *)map.read;
    ro.n_columns = map.n_read;
    st = hs_parquet_reader_stream(r, &ro, &stream, err);
  }
  int64_t row = 0;
  while (st == HS_OK) {
    struct ArrowArray in, b;
    memset(&in, 0, sizeof in);
    int rc = stream.get_next(&stream, &in);
    if (rc != 0) {
      const char *m = stream.get_last_error(&stream);
      st = hs_error_set(err, hs_status_of_errno(rc), "%s", m ? m : "read failed");
      break;
    }
    if (in.release == NULL) break;
    if (map.identity) {
      b = in;
    } else if ((st = hs_colmap_apply(&map, &in, &b, err)) != HS_OK) {
      break;
    }
    if (b.n_children != (int64_t)n) {
      st = hs_error_set(err, HS_ERR_INTERNAL, "a batch of %lld columns, %zu keys",
                        (long long)b.n_children, n);
    } else {
      st = fn(fn_ctx, cols, &b, row, err);
    }
    row += b.length;
    b.release(&b);
  }
  if (stream.release != NULL) stream.release(&stream);
  hs_parquet_reader_free(r);
  hs_colmap_free(&map);
  hs_colmap_ctx_free(&ctx);
  hs_arrow_schema_release(&want);
  hs_arrow_schema_release(&file);
  hs_free(cols);
  if (st != HS_OK) hs_error_prefix(err, "%s %s: ", what, path);
  return st;
}

/* ------------------------------------------------------------- loading */

typedef struct load_ctx {
  hs_table_eqdel *d;
  hs_buf key;
} load_ctx;

static hs_status load_batch(void *ctx, const hs_table_column *cols, const struct ArrowArray *b,
                            int64_t first_row, hs_error *err) {
  (void)first_row;
  load_ctx *l = ctx;
  for (int64_t r = 0; r < b->length; r++) {
    l->key.len = 0;
    for (size_t i = 0; i < l->d->n; i++) {
      hs_iceberg_value v;
      hs_table_column_value(&cols[i], b, r, &v);
      if (!key_append(&l->key, &l->d->types[i], &v))
        return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    }
    hs_status st = set_add(l->d, l->key.data, l->key.len, err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

static hs_status eqdel_load(const char *path, const uint8_t *buf, size_t buf_len,
                            const int32_t *ids, size_t n, const hs_iceberg_schema *schema,
                            hs_table_eqdel **out, hs_error *err) {
  *out = NULL;
  if (n == 0 || ids == NULL) {
    return hs_error_set(err, HS_ERR_CORRUPT, "equality delete file %s: no equality field ids",
                        path);
  }
  hs_table_eqdel *d = hs_calloc(1, sizeof *d);
  if (d == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path);
  hs_arena_init(&d->arena);
  d->n = n;
  d->path = hs_arena_strndup(&d->arena, path, strlen(path));
  d->ids = hs_arena_memdup(&d->arena, ids, n * sizeof *ids);
  d->types = hs_arena_alloc(&d->arena, n * sizeof *d->types);
  hs_status st = HS_OK;
  if (d->path == NULL || d->ids == NULL || d->types == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path);
  hs_arena tmp;
  hs_arena_init(&tmp);
  hs_iceberg_schema ks;
  if (st == HS_OK && (st = key_schema(schema, ids, n, &tmp, &ks, err)) != HS_OK)
    hs_error_prefix(err, "equality delete file %s: ", path);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    d->types[i] = ks.root.fields[i].type;
    d->types[i].text = NULL;
    d->types[i].fields = NULL;
    d->types[i].element = d->types[i].key = d->types[i].value = NULL;
  }
  if (st == HS_OK) {
    struct stat sb;
    hs_object_info info;
    size_t size = buf != NULL ? buf_len
                  : hs_store_is_remote(path)
                      ? (hs_store_head(path, &info, NULL) == HS_OK ? (size_t)info.size : 0)
                  : stat(path, &sb) == 0 && sb.st_size > 0 ? (size_t)sb.st_size
                                                           : 0;
    d->key_bytes_max = key_bytes_base() + (size > SIZE_MAX / 64 ? SIZE_MAX / 2 : size * (size_t)32);
    load_ctx l = {.d = d};
    hs_buf_init(&l.key);
    st = read_columns(path, buf, buf_len, "equality delete file", &ks, true, load_batch, &l, err);
    hs_buf_free(&l.key);
  }
  if (st == HS_OK) {
    filter_build(d);
    int_build(d);
  }
  hs_arena_reset(&tmp);
  if (st != HS_OK) {
    hs_table_eqdel_free(d);
    return st;
  }
  *out = d;
  return HS_OK;
}

hs_status hs_table_eqdel_load(const char *path, const int32_t *ids, size_t n,
                              const hs_iceberg_schema *schema, hs_table_eqdel **out,
                              hs_error *err) {
  return eqdel_load(path, NULL, 0, ids, n, schema, out, err);
}

hs_status hs_table_eqdel_load_buffer(const char *name, const uint8_t *data, size_t len,
                                     const int32_t *ids, size_t n, const hs_iceberg_schema *schema,
                                     hs_table_eqdel **out, hs_error *err) {
  static const uint8_t empty[1];
  return eqdel_load(name, data != NULL ? data : empty, len, ids, n, schema, out, err);
}

void hs_table_eqdel_free(hs_table_eqdel *d) {
  if (d == NULL) return;
  hs_free(d->row_slot);
  hs_free(d->filter);
  hs_free(d->ints);
  hs_free(d->ibits);
  hs_free(d->irank);
  hs_free(d->iorder);
  hs_free(d->ihit);
  hs_free(d->slots);
  hs_arena_reset(&d->arena);
  hs_free(d);
}

size_t hs_table_eqdel_count(const hs_table_eqdel *d) {
  return d != NULL ? d->count : 0;
}

const int32_t *hs_table_eqdel_ids(const hs_table_eqdel *d, size_t *n) {
  *n = d != NULL ? d->n : 0;
  return d != NULL ? d->ids : NULL;
}

/* ------------------------------------------------------------ applying */

typedef struct apply_ctx {
  const hs_table_eqdel *const *d;
  size_t n_d;
  size_t **col_of; /* per key set: per key column, its index in the read columns */
  roaring_bitmap_t *deleted;
  const roaring_bitmap_t *skip; /* rows never matched (NULL: none) */
  hs_buf key;
} apply_ctx;

/* Whether a batch of column c is matched by value (apply_batch_int): one
 * key set with a by-value index and an integer-family column (a set
 * without byte keys is always matched so: see from_arrow_ints). */
static bool int_path(const apply_ctx *a, const hs_table_column *c, const struct ArrowArray *b,
                     int64_t first_row) {
  if (a->n_d != 1 || a->d[0] == NULL || !a->d[0]->ibuilt) return false;
  return int_family(c->it->id) && first_row >= 0 &&
         first_row + b->length <= (int64_t)UINT32_MAX + 1;
}

/* apply_batch by value: the column's values read straight from the
 * array, the matching rows collected and added to the bitmap in one call
 * per batch; a row in `skip` never matches (checked on a match only: most
 * rows match nothing). */
static hs_status apply_batch_int(apply_ctx *a, const hs_table_column *c, const struct ArrowArray *b,
                                 int64_t first_row, hs_error *err) {
  const hs_table_eqdel *d = a->d[0];
  const struct ArrowArray *arr = b->children[c->index];
  bool wide = c->at.id == HS_AT_INT64;
  uint32_t *hits = hs_malloc((size_t)(b->length ? b->length : 1) * sizeof *hits);
  if (hits == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  size_t n_hits = 0;
  int64_t base = b->offset + arr->offset;
  const uint8_t *data = arr->buffers[1];
  hs_arrow_type_id at = c->at.id;
  bool direct = at == HS_AT_INT64 || at == HS_AT_INT32 || at == HS_AT_DATE32;
  bool nullable = at == HS_AT_NA || (arr->null_count != 0 && arr->buffers[0] != NULL);
  int64_t null_key = d->inull ? (int64_t)d->inull - 1 : -1;
  for (int64_t r = 0; r < b->length; r++) {
    int64_t k;
    if (nullable && (at == HS_AT_NA || !hs_arrow_is_valid(arr, r + b->offset))) {
      k = null_key;
    } else if (direct) {
      int64_t v = wide ? ((const int64_t *)(const void *)data)[base + r]
                       : ((const int32_t *)(const void *)data)[base + r];
      k = int_find(d, v);
    } else { /* other integer widths, date64, times, timestamps: as the byte path reads them */
      hs_iceberg_value v;
      hs_table_column_value(c, b, r, &v);
      k = v.is_null ? null_key : int_find(d, v.i64);
    }
    if (k < 0) continue;
    uint32_t pos = (uint32_t)(first_row + r);
    if (a->skip != NULL && roaring_bitmap_contains(a->skip, pos)) continue;
    int_hit(d, k);
    hits[n_hits++] = pos;
  }
  if (n_hits > 0) roaring_bitmap_add_many(a->deleted, n_hits, hits);
  hs_free(hits);
  return HS_OK;
}

static hs_status apply_batch(void *ctx, const hs_table_column *cols, const struct ArrowArray *b,
                             int64_t first_row, hs_error *err) {
  apply_ctx *a = ctx;
  if (a->n_d == 1 && a->d[0] != NULL && int_path(a, &cols[a->col_of[0][0]], b, first_row))
    return apply_batch_int(a, &cols[a->col_of[0][0]], b, first_row, err);
  for (int64_t r = 0; r < b->length; r++) {
    int64_t pos = first_row + r;
    if (a->skip != NULL && pos <= (int64_t)UINT32_MAX &&
        roaring_bitmap_contains(a->skip, (uint32_t)pos))
      continue;
    for (size_t k = 0; k < a->n_d; k++) {
      const hs_table_eqdel *d = a->d[k];
      if (d == NULL || d->count == 0) continue;
      if (d->slots == NULL)
        return hs_error_set(err, HS_ERR_INTERNAL, "a key set without byte keys on the byte path");
      a->key.len = 0;
      for (size_t i = 0; i < d->n; i++) {
        hs_iceberg_value v;
        hs_table_column_value(&cols[a->col_of[k][i]], b, r, &v);
        if (!key_append(&a->key, &d->types[i], &v))
          return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      }
      uint32_t h = key_hash(a->key.data, a->key.len);
      const eq_slot *hit = filter_may(d, h) ? set_find(d, a->key.data, a->key.len, h) : NULL;
      if (hit == NULL) continue;
      __atomic_store_n(&((eq_slot *)hit)->hit, true, __ATOMIC_RELAXED); /* concurrent matches */
      if (pos > (int64_t)UINT32_MAX) {
        return hs_error_set(err, HS_ERR_UNSUPPORTED,
                            "row %lld: positions past 2^32 are not supported", (long long)pos);
      }
      roaring_bitmap_add(a->deleted, (uint32_t)pos);
      break;
    }
  }
  return HS_OK;
}

static hs_status eqdel_apply(const hs_table_eqdel *const *d, size_t n_d, const char *data_path,
                             const uint8_t *buf, size_t buf_len, const hs_iceberg_schema *schema,
                             const roaring_bitmap_t *skip, roaring_bitmap_t *deleted,
                             hs_error *err) {
  bool any = false;
  for (size_t k = 0; k < n_d; k++) any |= d[k] != NULL && d[k]->count > 0;
  if (!any) return HS_OK;
  /* The union of the key sets' field ids, in first-seen order. */
  size_t total = 0;
  for (size_t k = 0; k < n_d; k++) total += d[k] != NULL ? d[k]->n : 0;
  int32_t *ids = hs_calloc(total + 1, sizeof *ids);
  size_t **col_of = hs_calloc(n_d + 1, sizeof *col_of);
  size_t *slots = hs_calloc(total + 1, sizeof *slots);
  hs_status st = HS_OK;
  if (ids == NULL || col_of == NULL || slots == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "data file %s: out of memory", data_path);
  size_t n_ids = 0, used = 0;
  for (size_t k = 0; st == HS_OK && k < n_d; k++) {
    col_of[k] = slots + used;
    if (d[k] == NULL) continue;
    used += d[k]->n;
    for (size_t i = 0; i < d[k]->n; i++) {
      size_t j = 0;
      while (j < n_ids && ids[j] != d[k]->ids[i]) j++;
      if (j == n_ids) ids[n_ids++] = d[k]->ids[i];
      col_of[k][i] = j;
    }
  }
  hs_arena tmp;
  hs_arena_init(&tmp);
  hs_iceberg_schema ks;
  if (st == HS_OK && (st = key_schema(schema, ids, n_ids, &tmp, &ks, err)) != HS_OK)
    hs_error_prefix(err, "data file %s: ", data_path);
  /* Each key set's types must encode as the data file's columns do. */
  for (size_t k = 0; st == HS_OK && k < n_d; k++) {
    for (size_t i = 0; st == HS_OK && d[k] != NULL && i < d[k]->n; i++) {
      const hs_iceberg_type *t = &ks.root.fields[col_of[k][i]].type;
      const hs_iceberg_type *u = &d[k]->types[i];
      bool ints = (t->id == HS_ICE_INT || t->id == HS_ICE_LONG) &&
                  (u->id == HS_ICE_INT || u->id == HS_ICE_LONG);
      bool floats = (t->id == HS_ICE_FLOAT || t->id == HS_ICE_DOUBLE) &&
                    (u->id == HS_ICE_FLOAT || u->id == HS_ICE_DOUBLE);
      bool decs = t->id == HS_ICE_DECIMAL && u->id == HS_ICE_DECIMAL && t->scale == u->scale;
      if (!(t->id == u->id || ints || floats || decs)) {
        st = hs_error_set(err, HS_ERR_SCHEMA,
                          "data file %s: equality field id %d is %s in the read schema but %s in "
                          "delete file %s",
                          data_path, (int)d[k]->ids[i], hs_iceberg_type_name(t->id),
                          hs_iceberg_type_name(u->id), d[k]->path);
      } else if (t->id == HS_ICE_DECIMAL && !decs) {
        st = hs_error_set(err, HS_ERR_SCHEMA,
                          "data file %s: equality field id %d has scale %d, %d in delete file %s",
                          data_path, (int)d[k]->ids[i], (int)t->scale, (int)u->scale, d[k]->path);
      }
    }
  }
  if (st == HS_OK) {
    apply_ctx a = {.d = d, .n_d = n_d, .col_of = col_of, .deleted = deleted, .skip = skip};
    hs_buf_init(&a.key);
    st = read_columns(data_path, buf, buf_len, "data file", &ks, false, apply_batch, &a, err);
    hs_buf_free(&a.key);
  }
  hs_arena_reset(&tmp);
  hs_free(ids);
  hs_free(col_of);
  hs_free(slots);
  return st;
}

hs_status hs_table_eqdel_apply(const hs_table_eqdel *const *d, size_t n_d, const char *data_path,
                               const hs_iceberg_schema *schema, roaring_bitmap_t *deleted,
                               hs_error *err) {
  return eqdel_apply(d, n_d, data_path, NULL, 0, schema, NULL, deleted, err);
}

hs_status hs_table_eqdel_match(hs_table_eqdel *d, const char *data_path,
                               const hs_iceberg_schema *schema, const roaring_bitmap_t *skip,
                               roaring_bitmap_t *matched, hs_error *err) {
  const hs_table_eqdel *one[1] = {d};
  return eqdel_apply(one, 1, data_path, NULL, 0, schema, skip, matched, err);
}

/* hs_table_eqdel_from_arrow for one integer-family key column: the keys
 * numbered by value, without byte keys (slots NULL; apply_batch_int then
 * matches every data-file column of the field, whatever its width). */
static hs_status from_arrow_ints(hs_table_eqdel *d, const hs_table_column *c,
                                 const struct ArrowArray *batches, size_t n_batches, size_t rows,
                                 hs_error *err) {
  int64_t *vals = hs_malloc((rows ? rows : 1) * sizeof *vals);
  if (vals == NULL) return hs_error_set(err, HS_ERR_NOMEM, "keys: out of memory");
  d->imin = INT64_MAX;
  d->imax = INT64_MIN;
  size_t at = 0, valid = 0;
  for (size_t b = 0; b < n_batches; b++) {
    for (int64_t r = 0; r < batches[b].length; r++, at++) {
      hs_iceberg_value v;
      hs_table_column_value(c, &batches[b], r, &v);
      d->row_slot[at] = v.is_null ? -1 : 0; /* a NULL key matches nothing */
      if (v.is_null) continue;
      vals[at] = v.i64;
      valid++;
      if (v.i64 < d->imin) d->imin = v.i64;
      if (v.i64 > d->imax) d->imax = v.i64;
    }
  }
  size_t count = 0;
  hs_status st = HS_OK;
  uint64_t span = valid ? (uint64_t)d->imax - (uint64_t)d->imin : 0;
  if (valid == 0) {
    /* no keys: nothing matches */
  } else if (span / 64 <= valid) {
    size_t words = (size_t)(span / 64 + 1);
    d->ibits = hs_calloc(words, sizeof *d->ibits);
    d->irank = hs_malloc(words * sizeof *d->irank);
    if (d->ibits == NULL || d->irank == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "keys: out of memory");
    } else {
      for (size_t i = 0; i < rows; i++) {
        if (d->row_slot[i] < 0) continue;
        uint64_t o = (uint64_t)vals[i] - (uint64_t)d->imin;
        d->ibits[o >> 6] |= UINT64_C(1) << (o & 63);
      }
      uint32_t before = 0;
      for (size_t w = 0; w < words; w++) {
        d->irank[w] = before;
        before += (uint32_t)__builtin_popcountll(d->ibits[w]);
      }
      count = before;
      for (size_t i = 0; i < rows; i++)
        if (d->row_slot[i] >= 0) d->row_slot[i] = int_find(d, vals[i]);
    }
  } else {
    size_t cap = 16;
    while (cap < valid * 2) cap *= 2;
    if ((d->ints = hs_calloc(cap, sizeof *d->ints)) == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "keys: out of memory");
    } else {
      d->imask = cap - 1;
      for (size_t i = 0; i < rows; i++) {
        if (d->row_slot[i] < 0) continue;
        size_t j = int_home(vals[i], d->imask);
        while (d->ints[j].slot != 0 && d->ints[j].key != vals[i]) j = (j + 1) & d->imask;
        if (d->ints[j].slot == 0)
          d->ints[j] = (int_entry){.key = vals[i], .slot = (uint32_t)++count};
        d->row_slot[i] = (int64_t)d->ints[j].slot - 1;
      }
    }
  }
  hs_free(vals);
  if (st == HS_OK && (d->ihit = hs_calloc(count ? count : 1, 1)) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "keys: out of memory");
  d->count = count;
  d->ibuilt = st == HS_OK;
  return st;
}

hs_status hs_table_eqdel_from_arrow(const int32_t *ids, size_t n, const hs_iceberg_schema *schema,
                                    const struct ArrowSchema *s, const struct ArrowArray *batches,
                                    size_t n_batches, hs_table_eqdel **out, hs_error *err) {
  *out = NULL;
  if (n == 0 || ids == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "keys: no key columns");
  hs_table_eqdel *d = hs_calloc(1, sizeof *d);
  if (d == NULL) return hs_error_set(err, HS_ERR_NOMEM, "keys: out of memory");
  hs_arena_init(&d->arena);
  d->n = n;
  d->path = hs_arena_strndup(&d->arena, "keys", 4);
  d->ids = hs_arena_memdup(&d->arena, ids, n * sizeof *ids);
  d->types = hs_arena_alloc(&d->arena, n * sizeof *d->types);
  d->key_bytes_max = SIZE_MAX;
  size_t rows = 0;
  for (size_t b = 0; b < n_batches; b++) rows += (size_t)batches[b].length;
  d->row_slot = hs_malloc((rows ? rows : 1) * sizeof *d->row_slot);
  d->n_rows = rows;
  hs_table_column *cols = hs_calloc(n, sizeof *cols);
  hs_arena tmp;
  hs_arena_init(&tmp);
  hs_iceberg_schema ks;
  hs_status st =
      d->path == NULL || d->ids == NULL || d->types == NULL || d->row_slot == NULL || cols == NULL
          ? hs_error_set(err, HS_ERR_NOMEM, "keys: out of memory")
          : key_schema(schema, ids, n, &tmp, &ks, err);
  if (st == HS_OK && s->n_children != (int64_t)n)
    st = hs_error_set(err, HS_ERR_SCHEMA, "keys: %lld columns for %zu key fields",
                      (long long)s->n_children, n);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    d->types[i] = ks.root.fields[i].type;
    d->types[i].text = NULL;
    d->types[i].fields = NULL;
    d->types[i].element = d->types[i].key = d->types[i].value = NULL;
    st = hs_table_column_bind(s, &ks, ids[i], &cols[i], err);
  }
  bool ints = st == HS_OK && n == 1 && int_family(d->types[0].id) && rows < UINT32_MAX / 4;
  if (ints) st = from_arrow_ints(d, &cols[0], batches, n_batches, rows, err);
  hs_buf key;
  hs_buf_init(&key);
  /* Room for every row's key up front (when it can be had), so that no
   * slot moves and each row's slot is known once it is added. */
  hs_error ignored;
  memset(&ignored, 0, sizeof ignored);
  while (st == HS_OK && !ints && d->cap < 2 * rows && d->cap < ((size_t)1 << 31))
    if (set_grow(d, &ignored) != HS_OK) break;
  size_t cap0 = d->cap;
  size_t at = 0;
  for (size_t b = 0; st == HS_OK && !ints && b < n_batches; b++) {
    for (int64_t r = 0; st == HS_OK && r < batches[b].length; r++, at++) {
      key.len = 0;
      bool null = false;
      for (size_t i = 0; i < n && st == HS_OK; i++) {
        hs_iceberg_value v;
        hs_table_column_value(&cols[i], &batches[b], r, &v);
        null |= v.is_null;
        if (!key_append(&key, &d->types[i], &v))
          st = hs_error_set(err, HS_ERR_NOMEM, "keys: out of memory");
      }
      d->row_slot[at] = -1;
      if (st != HS_OK || null) continue; /* a NULL key matches nothing */
      size_t slot = 0;
      if ((st = set_insert(d, key.data, key.len, &slot, err)) != HS_OK) break;
      d->row_slot[at] = (int64_t)slot;
    }
  }
  /* Slots moved when the table grew: find every row's slot again. */
  at = 0;
  for (size_t b = 0; st == HS_OK && d->cap != cap0 && b < n_batches; b++) {
    for (int64_t r = 0; st == HS_OK && r < batches[b].length; r++, at++) {
      if (d->row_slot[at] < 0) continue;
      key.len = 0;
      for (size_t i = 0; i < n; i++) {
        hs_iceberg_value v;
        hs_table_column_value(&cols[i], &batches[b], r, &v);
        if (!key_append(&key, &d->types[i], &v))
          st = hs_error_set(err, HS_ERR_NOMEM, "keys: out of memory");
      }
      const eq_slot *sl = set_find(d, key.data, key.len, key_hash(key.data, key.len));
      d->row_slot[at] = sl != NULL ? (int64_t)(sl - d->slots) : -1;
    }
  }
  hs_buf_free(&key);
  hs_free(cols);
  hs_arena_reset(&tmp);
  if (st == HS_OK && !ints) {
    filter_build(d);
    int_build(d);
  }
  if (st != HS_OK) {
    hs_table_eqdel_free(d);
    return st;
  }
  *out = d;
  return HS_OK;
}

void hs_table_eqdel_hits(const hs_table_eqdel *d, uint8_t *hits) {
  for (size_t r = 0; d != NULL && r < d->n_rows; r++)
    hits[r] = d->row_slot[r] >= 0 &&
              (d->ihit != NULL ? __atomic_load_n(&d->ihit[d->row_slot[r]], __ATOMIC_RELAXED) != 0
                               : __atomic_load_n(&d->slots[d->row_slot[r]].hit, __ATOMIC_RELAXED));
}

hs_status hs_table_eqdel_apply_buffer(const hs_table_eqdel *const *d, size_t n_d, const char *name,
                                      const uint8_t *data, size_t len,
                                      const hs_iceberg_schema *schema, roaring_bitmap_t *deleted,
                                      hs_error *err) {
  static const uint8_t empty[1];
  return eqdel_apply(d, n_d, name, data != NULL ? data : empty, len, schema, NULL, deleted, err);
}

/* ------------------------------------------------------------- writing */

/* The write schema: the key schema's Arrow form, with the large string /
 * binary variants where the input has them; anything else must be the
 * key schema's format exactly. */
static hs_status write_schema(const char *path, const hs_iceberg_schema *ks,
                              const struct ArrowSchema *in, struct ArrowSchema *out,
                              hs_error *err) {
  memset(out, 0, sizeof *out);
  size_t n = ks->root.n_fields;
  if (in->format == NULL || strcmp(in->format, "+s") != 0 || in->n_children != (int64_t)n) {
    return hs_error_set(err, HS_ERR_SCHEMA,
                        "equality delete file %s: the rows must be a struct of the %zu key "
                        "columns, not '%s' of %lld",
                        path, n, in->format ? in->format : "", (long long)in->n_children);
  }
  struct ArrowSchema want;
  hs_status st = hs_iceberg_schema_to_arrow(ks, NULL, &want, err);
  if (st != HS_OK) return st;
  st = hs_arrow_schema_init(out, "+s", "", 0, (int64_t)n, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    const struct ArrowSchema *w = want.children[i], *c = in->children[i];
    const char *f = c->format ? c->format : "";
    bool large = (strcmp(w->format, "u") == 0 && strcmp(f, "U") == 0) ||
                 (strcmp(w->format, "z") == 0 && strcmp(f, "Z") == 0);
    if (!large && strcmp(w->format, f) != 0) {
      st = hs_error_set(err, HS_ERR_SCHEMA,
                        "equality delete file %s: column %zu ('%s') is Arrow '%s'; key field "
                        "'%s' (id %d) is written as '%s'",
                        path, i, c->name ? c->name : "", f, ks->root.fields[i].name,
                        (int)ks->root.fields[i].id, w->format);
      break;
    }
    if (c->dictionary != NULL) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "equality delete file %s: column %zu is dictionary-encoded", path, i);
      break;
    }
    hs_arrow_schema_release(out->children[i]);
    if (!large) {
      st = hs_arrow_schema_copy(w, out->children[i], err);
      continue;
    }
    st = hs_arrow_schema_init(out->children[i], f, w->name, w->flags, 0, err);
    char id[16];
    snprintf(id, sizeof id, "%d", (int)ks->root.fields[i].id);
    const char *k = "PARQUET:field_id", *v = id;
    if (st == HS_OK) st = hs_arrow_schema_set_metadata(out->children[i], &k, &v, 1, err);
  }
  hs_arrow_schema_release(&want);
  if (st != HS_OK) hs_arrow_schema_release(out);
  return st;
}

hs_status hs_table_eqdel_write(const char *path, const char *recorded, const int32_t *ids, size_t n,
                               const hs_iceberg_schema *schema, struct ArrowArrayStream *rows,
                               hs_arena *a, hs_iceberg_data_file *df, hs_error *err) {
  memset(df, 0, sizeof *df);
  hs_arena tmp;
  hs_arena_init(&tmp);
  hs_iceberg_schema ks;
  struct ArrowSchema in, ws;
  memset(&in, 0, sizeof in);
  memset(&ws, 0, sizeof ws);
  hs_parquet_writer *w = NULL;
  int64_t written = 0;
  bool exists = false;
  hs_status st = HS_OK;
  if (n == 0 || ids == NULL || recorded == NULL)
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "equality delete file %s: no equality field ids",
                      path);
  if (st == HS_OK && (st = key_schema(schema, ids, n, &tmp, &ks, err)) != HS_OK)
    hs_error_prefix(err, "equality delete file %s: ", path);
  if (st == HS_OK) st = hs_table_file_exists(path, &exists, err);
  if (st == HS_OK && exists)
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "equality delete file %s: already exists", path);
  if (st == HS_OK && rows->get_schema(rows, &in) != 0) {
    const char *m = rows->get_last_error(rows);
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "equality delete file %s: the rows' schema: %s",
                      path, m ? m : "failed");
  }
  if (st == HS_OK) st = write_schema(path, &ks, &in, &ws, err);
  hs_parquet_write_options po;
  hs_parquet_write_options_init(&po);
  po.compression = HS_CODEC_ZSTD;
  if (st == HS_OK) st = hs_parquet_writer_open(path, &ws, &po, &w, err);
  while (st == HS_OK) {
    struct ArrowArray b;
    memset(&b, 0, sizeof b);
    if (rows->get_next(rows, &b) != 0) {
      const char *m = rows->get_last_error(rows);
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "equality delete file %s: the rows: %s", path,
                        m ? m : "read failed");
      break;
    }
    if (b.release == NULL) break;
    if (b.n_children != (int64_t)n) {
      st = hs_error_set(err, HS_ERR_SCHEMA, "equality delete file %s: a batch of %lld columns",
                        path, (long long)b.n_children);
    } else if (b.length > 0) {
      st = hs_parquet_writer_write(w, &b, err);
      written += b.length;
    }
    b.release(&b);
  }
  int fd = -1;
  if (st == HS_OK) st = hs_parquet_writer_close_unsynced(w, &fd, err);
  if (fd >= 0 && close(fd) != 0 && st == HS_OK) {
    st = hs_error_set(err, HS_ERR_IO, "equality delete file %s: close failed", path);
    (void)hs_table_file_remove(path, NULL);
  }
  if (st == HS_OK) {
    hs_iceberg_data_file_options dfo = {.schema = &ks, .file_path = recorded};
    /* metrics from the footer written (no read back: on S3 a HEAD and GETs) */
    st = hs_iceberg_data_file_from_parquet_writer(w, &dfo, a, df, err);
    if (st == HS_OK && df->record_count != written)
      st = hs_error_set(err, HS_ERR_INTERNAL, "equality delete file %s: %lld rows of %lld", path,
                        (long long)df->record_count, (long long)written);
    if (st == HS_OK) {
      df->content = HS_ICE_CONTENT_EQUALITY_DELETES;
      df->has_equality_ids = true;
      df->n_equality_ids = n;
      if ((df->equality_ids = hs_arena_memdup(a, ids, n * sizeof *ids)) == NULL)
        st = hs_error_set(err, HS_ERR_NOMEM, "equality delete file %s: out of memory", path);
    }
    if (st != HS_OK) (void)hs_table_file_remove(path, NULL);
  }
  if (w != NULL) hs_parquet_writer_free(w); /* removes the file unless closed */
  hs_arrow_schema_release(&in);
  hs_arrow_schema_release(&ws);
  hs_arena_reset(&tmp);
  if (rows->release != NULL) rows->release(rows);
  return st;
}
