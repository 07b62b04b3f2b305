/*
 * arrow.h — helpers over the Arrow C Data Interface: owned schemas and
 * arrays with correct release callbacks, format-string parsing, the field
 * metadata encoding, a stream over a list of batches, and validation of
 * arrays we receive from outside.
 *
 * Ownership: hs_arrow_* constructors produce structures whose release
 * callback frees everything they own (children included). Buffers attached
 * with hs_arrow_array_set_buffer become owned (hs_free'd on release);
 * buffers attached with a keepalive are borrowed and the keepalive is
 * released instead (that is how a reader lends mmap'd pages).
 */
#ifndef HS_ARROW_H
#define HS_ARROW_H

#include "../common/common.h"

/* ------------------------------------------------------------------ types */

typedef enum hs_arrow_type_id {
  HS_AT_NA,                /* "n" */
  HS_AT_BOOL,              /* "b" */
  HS_AT_INT8,              /* "c" */
  HS_AT_UINT8,             /* "C" */
  HS_AT_INT16,             /* "s" */
  HS_AT_UINT16,            /* "S" */
  HS_AT_INT32,             /* "i" */
  HS_AT_UINT32,            /* "I" */
  HS_AT_INT64,             /* "l" */
  HS_AT_UINT64,            /* "L" */
  HS_AT_FLOAT16,           /* "e" */
  HS_AT_FLOAT32,           /* "f" */
  HS_AT_FLOAT64,           /* "g" */
  HS_AT_BINARY,            /* "z" */
  HS_AT_LARGE_BINARY,      /* "Z" */
  HS_AT_STRING,            /* "u" */
  HS_AT_LARGE_STRING,      /* "U" */
  HS_AT_FIXED_BINARY,      /* "w:N" (width) */
  HS_AT_DECIMAL128,        /* "d:P,S" (precision, scale) */
  HS_AT_DATE32,            /* "tdD" */
  HS_AT_DATE64,            /* "tdm" */
  HS_AT_TIME32,            /* "tts" / "ttm" (unit) */
  HS_AT_TIME64,            /* "ttu" / "ttn" (unit) */
  HS_AT_TIMESTAMP,         /* "ts{s,m,u,n}:TZ" (unit, timezone) */
  HS_AT_DURATION,          /* "tD{s,m,u,n}" */
  HS_AT_LIST,              /* "+l" */
  HS_AT_LARGE_LIST,        /* "+L" */
  HS_AT_FIXED_LIST,        /* "+w:N" (width = list size) */
  HS_AT_STRUCT,            /* "+s" */
  HS_AT_MAP,               /* "+m" */
  HS_AT_DICTIONARY_UNUSED, /* reserved */
  HS_AT_OTHER              /* anything else: unsupported */
} hs_arrow_type_id;

typedef enum hs_time_unit {
  HS_UNIT_S = 0,
  HS_UNIT_MS = 1,
  HS_UNIT_US = 2,
  HS_UNIT_NS = 3
} hs_time_unit;

typedef struct hs_arrow_type {
  hs_arrow_type_id id;
  int32_t width;        /* FIXED_BINARY bytes, FIXED_LIST size */
  int32_t precision;    /* DECIMAL128 */
  int32_t scale;        /* DECIMAL128 */
  hs_time_unit unit;    /* TIME32/64, TIMESTAMP, DURATION */
  const char *timezone; /* TIMESTAMP: points into the format string; "" if none */
} hs_arrow_type;

/* Parse an Arrow format string. Unknown formats give HS_AT_OTHER (HS_OK);
 * a known type with malformed parameters ("w:", "d:0,2", "w:-3") gives
 * HS_ERR_SCHEMA. A NULL format gives HS_ERR_INVALID_ARG. */
hs_status hs_arrow_type_parse(const char *format, hs_arrow_type *out, hs_error *err);

/* Bytes per value for fixed-width types (bool: 0 meaning bit-packed; -1 for
 * variable-width and nested types, and for NA, which has no data buffer). */
int hs_arrow_type_byte_width(const hs_arrow_type *t);
/* The buffers and children an array of `t` has (a struct: `n_fields`, its
 * schema's children), for kernels that rebuild arrays (filter.c,
 * concat.c): false for types they do not copy (decimal256, views, unions,
 * intervals: anything of no fixed width beyond the ones listed there). */
bool hs_arrow_type_layout(const hs_arrow_type *t, int64_t n_fields, int64_t *n_buffers,
                          int64_t *n_children);

/* --------------------------------------------------------------- schemas */

/* Initialise an owned schema node with copies of format and name (name may
 * be NULL) and room for n_children children (each allocated, released
 * with their parent). */
hs_status hs_arrow_schema_init(struct ArrowSchema *s, const char *format, const char *name,
                               int64_t flags, int64_t n_children, hs_error *err);
/* Replace the node's metadata with the given pairs (copied). */
hs_status hs_arrow_schema_set_metadata(struct ArrowSchema *s, const char *const *keys,
                                       const char *const *values, size_t n, hs_error *err);
/* Look up `key` in an Arrow metadata blob; returns a pointer into it and its
 * length, or NULL when absent. Bounds are checked against the blob's own
 * lengths. */
const char *hs_arrow_metadata_get(const char *metadata, const char *key, int32_t *value_len);
/* The node's "PARQUET:field_id" when it is a decimal in [0, INT32_MAX],
 * else -1 (absent or malformed). */
int32_t hs_arrow_field_id(const struct ArrowSchema *s);
/* Deep copy into an owned schema. */
hs_status hs_arrow_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *dst,
                               hs_error *err);
/* Same formats, names and children, recursively (flags and metadata are
 * not compared): whether batches of `b` may be emitted under schema `a`.
 * Nesting deeper than 64 levels compares unequal. */
bool hs_arrow_schema_same_shape(const struct ArrowSchema *a, const struct ArrowSchema *b);
/* The same without names: arrays of `b` are arrays of `a` (a list's child
 * named "item" or "element"). */
bool hs_arrow_schema_same_layout(const struct ArrowSchema *a, const struct ArrowSchema *b);
/* `full` (a struct schema) projected to the children named names[0..n), in
 * that order, as an owned struct schema in *out (deep copies). A name
 * `full` lacks gives HS_ERR_NOT_FOUND with *missing set to its index and
 * `err` left for the caller to word; *out is then released. */
hs_status hs_arrow_schema_project(const struct ArrowSchema *full, const char *const *names,
                                  size_t n, struct ArrowSchema *out, size_t *missing,
                                  hs_error *err);

/* Total size in bytes of an Arrow metadata blob (0 for NULL), or -1 when a
 * count or length in it is negative or the total overflows. */
int64_t hs_arrow_metadata_size(const char *metadata);
/* Move `dict` (any producer's schema) into owned schema `s` as its
 * dictionary; `dict->release` is set to NULL (moved). A previous dictionary
 * is released. `s` must come from hs_arrow_schema_init/copy. On failure
 * `dict` is left untouched. */
hs_status hs_arrow_schema_set_dictionary(struct ArrowSchema *s, struct ArrowSchema *dict,
                                         hs_error *err);
/* Release if not already released; accepts NULL. */
static inline void hs_arrow_schema_release(struct ArrowSchema *s) {
  if (s != NULL && s->release != NULL) s->release(s);
}

/* ---------------------------------------------------------------- arrays */

/* Initialise an owned array node with n_buffers NULL buffers and n_children
 * allocated (zeroed, release NULL) children. */
hs_status hs_arrow_array_init(struct ArrowArray *a, int64_t n_buffers, int64_t n_children,
                              hs_error *err);
/* Attach an owned buffer (freed with hs_free on release). An owned buffer
 * already in slot i is freed. `a` must come from hs_arrow_array_init and
 * 0 <= i < n_buffers (asserted; otherwise `owned` is freed and ignored). */
void hs_arrow_array_set_buffer(struct ArrowArray *a, int64_t i, void *owned);
/* Attach a borrowed buffer; the array keeps a reference via `keepalive`
 * (called once on release with `keepalive_data`). Only one keepalive per
 * node: a second call replaces nothing and simply chains both.
 * keepalive_release may be NULL when another keepalive of this node already
 * covers the buffer. On failure (OOM) the keepalive is called at once and
 * the slot is left unchanged. */
hs_status hs_arrow_array_set_borrowed(struct ArrowArray *a, int64_t i, const void *borrowed,
                                      void (*keepalive_release)(void *), void *keepalive_data,
                                      hs_error *err);

/* Move `dict` into owned array `a` as its dictionary (dict->release is set
 * to NULL). A previous dictionary is released. On failure `dict` is left
 * untouched. */
hs_status hs_arrow_array_set_dictionary(struct ArrowArray *a, struct ArrowArray *dict,
                                        hs_error *err);
/* Release if not already released; accepts NULL. */
static inline void hs_arrow_array_release(struct ArrowArray *a) {
  if (a != NULL && a->release != NULL) a->release(a);
}

/* Small builders. Ownership of every pointer argument passes to the callee
 * on every return, success or failure (on failure they are freed or
 * released), so callers never clean up after a failed call.
 *
 * A fixed-width (or boolean) array: buffers {validity, values}.
 * null_count: -1 when unknown; must be 0 when validity is NULL. */
hs_status hs_arrow_array_make_primitive(struct ArrowArray *out, int64_t length,
                                        const void *values_owned, uint8_t *validity_owned_or_NULL,
                                        int64_t null_count, hs_error *err);
/* A binary/string array ("z"/"u" with int32 offsets, "Z"/"U" with int64):
 * buffers {validity, offsets (length + 1 entries), data}. */
hs_status hs_arrow_array_make_binary(struct ArrowArray *out, int64_t length, void *offsets_owned,
                                     void *data_owned, uint8_t *validity_owned_or_NULL,
                                     int64_t null_count, hs_error *err);
/* A struct array over `n_children` children moved in from `children[i]`
 * (each children[i].release is set to NULL). buffers {validity}. */
hs_status hs_arrow_array_make_struct(struct ArrowArray *out, int64_t length,
                                     struct ArrowArray *children, int64_t n_children,
                                     uint8_t *validity_owned_or_NULL, int64_t null_count,
                                     hs_error *err);

/* The rows of `a` (of schema `s`) whose bit is set in `keep` (bit i of
 * word i / 64 for logical row i < a->length; n_keep of them set) as a new
 * owned array *out (offset 0, buffers copied). Nested types recurse;
 * dictionary arrays are HS_ERR_UNSUPPORTED (filter.c). */
hs_status hs_arrow_array_filter(const struct ArrowSchema *s, const struct ArrowArray *a,
                                const uint64_t *keep, int64_t n_keep, struct ArrowArray *out,
                                hs_error *err);

/* `arrays[0..n)` (each of schema `s`, read at its own offset and length)
 * concatenated as a new owned array *out (offset 0, buffers copied; the
 * inputs are not touched). Nested types recurse; dictionary arrays, and
 * int32 offsets the total would overflow, are HS_ERR_UNSUPPORTED
 * (concat.c). */
hs_status hs_arrow_array_concat(const struct ArrowSchema *s, const struct ArrowArray *arrays,
                                size_t n, struct ArrowArray *out, hs_error *err);

/* Fewer, larger batches from a producer of small ones: each call of
 * hs_arrow_coalescer_next pulls batches from next(ctx, &b) (0 and
 * b.release == NULL at the end, an errno code on failure) until at least
 * rows_min rows are held or the producer ends, and hands them over as one
 * batch (hs_arrow_array_concat; a single batch as it came). Batches
 * concat cannot merge (dictionaries, int32 offset overflow) come out one by
 * one, unmerged. `merged` says whether the last batch was concatenated.
 * The coalescer owns what it holds until handed out; free releases it. */
typedef struct hs_arrow_coalescer {
  int64_t rows_min;
  struct ArrowArray *held;
  size_t n, cap, pos; /* held[pos .. n) not yet handed out */
  bool merged;
} hs_arrow_coalescer;
void hs_arrow_coalescer_init(hs_arrow_coalescer *c, int64_t rows_min);
/* 0 with the next batch in *out (out->release == NULL: the end), or the
 * producer's errno code (its message is the producer's), or an errno code
 * with `err` set (out of memory in the coalescer or concat). */
int hs_arrow_coalescer_next(hs_arrow_coalescer *c, const struct ArrowSchema *schema,
                            int (*next)(void *ctx, struct ArrowArray *out), void *ctx,
                            struct ArrowArray *out, hs_error *err);
/* Release what is held (after a failure), keeping the coalescer usable. */
void hs_arrow_coalescer_free_held(hs_arrow_coalescer *c);
/* Release everything; accepts NULL. */
void hs_arrow_coalescer_free(hs_arrow_coalescer *c);
/* Validate that `a` is structurally consistent with `s` (buffer counts,
 * offsets monotone and in range where readable, children lengths). Used on
 * arrays that arrive from outside before we trust them. Faults give
 * HS_ERR_INVALID_ARG naming the field path ("col.item") and the fault;
 * formats we do not model give HS_ERR_UNSUPPORTED. See validate.c for what
 * cannot be checked (buffer sizes, UTF-8). */
hs_status hs_arrow_array_validate(const struct ArrowSchema *s, const struct ArrowArray *a,
                                  hs_error *err);

/* Is row i valid (non-null) in array a (honouring a->offset)? */
static inline bool hs_arrow_is_valid(const struct ArrowArray *a, int64_t i) {
  const uint8_t *v = a->n_buffers > 0 ? (const uint8_t *)a->buffers[0] : NULL;
  if (v == NULL) return true;
  int64_t j = i + a->offset;
  return (v[j >> 3] >> (j & 7)) & 1;
}

/* ---------------------------------------------------------------- streams */

/* A stream over `n` batches (moved in: the stream owns them afterwards)
 * with `schema` (moved in). *out is owned by the caller. On failure the
 * inputs are released, so they are the stream's on every return. */
hs_status hs_arrow_stream_from_batches(struct ArrowSchema *schema, struct ArrowArray *batches,
                                       size_t n, struct ArrowArrayStream *out, hs_error *err);

/* Drain `s` (any producer's stream; not released here: the caller still
 * owns it): its schema into *schema_out and every batch, in order, into a
 * new array *batches_out of *n_out batches (hs_malloc'd; NULL when none).
 * The caller releases them, e.g. with hs_arrow_batches_free. On failure
 * nothing is returned and the stream's own message is in `err`. */
hs_status hs_arrow_stream_collect(struct ArrowArrayStream *s, struct ArrowSchema *schema_out,
                                  struct ArrowArray **batches_out, size_t *n_out, hs_error *err);
/* Release each of `n` batches and hs_free the array; accepts NULL. */
void hs_arrow_batches_free(struct ArrowArray *batches, size_t n);

#endif /* HS_ARROW_H */
