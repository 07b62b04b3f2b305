/*
 * vec_arrow.c — Arrow C Data Interface in and out of SQL chunks.
 *
 * Import borrows what already has the executor's layout (int32, int64,
 * float64, decimal128, date32, timestamp[us], fixed_size_list<float32>)
 * and converts the rest (bit-packed booleans and validity, narrower
 * integers, float32/float16, other time units, dictionaries). Borrowed
 * columns hold a reference to one blob owning the moved-in batch. Null
 * rows of a borrowed column must hold zeros (vec.h): when a producer left
 * something else there the column is copied and the slots zeroed.
 *
 * Export lends fixed-width data the same way (the Arrow array keeps a share
 * of the vector alive through a keepalive) and builds what Arrow lays out
 * differently (bitmaps, offsets, float32, month_day_nano intervals, the
 * text of sparsevec and bit).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fn_vector.h"
#include "vec.h"
#include "vec_internal.h"

/* ------------------------------------------------------------ batch blob */

typedef struct arrow_blob {
  hs_sql_blob hdr;
  struct ArrowArray arr;
} arrow_blob;

static void arrow_blob_release(hs_sql_blob *b) {
  arrow_blob *a = (arrow_blob *)b;
  if (a->arr.release != NULL) a->arr.release(&a->arr);
  hs_free(a);
}

/* --------------------------------------------------------------- import */

typedef struct import_ctx {
  hs_sql_blob *keep; /* the batch */
  const char *name;  /* column name for messages */
  hs_error *err;
} import_ctx;

static hs_status bad(import_ctx *x, hs_status st, const char *what) {
  return hs_error_set(x->err, st, "arrow column \"%s\": %s", x->name, what);
}

static const void *buffer(const struct ArrowArray *a, int64_t i) {
  return a->n_buffers > i && a->buffers != NULL ? a->buffers[i] : NULL;
}

/* Byte b of a bitmap as eight 0/1 bytes (LSB first), for unpacking. */
#define SPREAD(b)                                                                           \
  ((uint64_t)((b)&1) | (uint64_t)(((b) >> 1) & 1) << 8 | (uint64_t)(((b) >> 2) & 1) << 16 | \
   (uint64_t)(((b) >> 3) & 1) << 24 | (uint64_t)(((b) >> 4) & 1) << 32 |                    \
   (uint64_t)(((b) >> 5) & 1) << 40 | (uint64_t)(((b) >> 6) & 1) << 48 |                    \
   (uint64_t)(((b) >> 7) & 1) << 56)
#define SPREAD4(n) SPREAD(n), SPREAD(n + 1), SPREAD(n + 2), SPREAD(n + 3)
#define SPREAD16(n) SPREAD4(n), SPREAD4(n + 4), SPREAD4(n + 8), SPREAD4(n + 12)
#define SPREAD64(n) SPREAD16(n), SPREAD16(n + 16), SPREAD16(n + 32), SPREAD16(n + 48)
static const uint64_t spread_bits[256] = {SPREAD64(0), SPREAD64(64), SPREAD64(128), SPREAD64(192)};

/* Eight validity bytes (any nonzero = valid) packed into one bitmap byte. */
static inline uint8_t pack_bytes(const uint8_t *p) {
  uint64_t x;
  memcpy(&x, p, 8);
  x |= x >> 4;
  x |= x >> 2;
  x |= x >> 1;
  x &= 0x0101010101010101ull;
  return (uint8_t)((x * 0x0102040810204080ull) >> 56);
}

/* Validity bytes of rows [pos, pos + n) of `a` into a new blob, or *valid
 * NULL when no row is null. */
static hs_status import_validity(import_ctx *x, const struct ArrowArray *a, int64_t pos, int64_t n,
                                 hs_sql_vec *v) {
  const uint8_t *bits = buffer(a, 0);
  v->valid = NULL;
  if (bits == NULL || a->null_count == 0 || n == 0) return HS_OK;
  hs_sql_blob *b = hs_sql_blob_new((size_t)n);
  if (b == NULL) return bad(x, HS_ERR_NOMEM, "out of memory (validity)");
  uint8_t *valid = hs_sql_blob_data(b);
  int64_t nulls = 0;
  int64_t i = 0;
  /* Byte-aligned runs eight rows at a time. */
  for (; i < n && ((pos + i) & 7) != 0; i++) {
    int64_t j = pos + i;
    valid[i] = (bits[j >> 3] >> (j & 7)) & 1;
    nulls += !valid[i];
  }
  for (; i + 8 <= n; i += 8) {
    uint8_t byte = bits[(pos + i) >> 3];
    memcpy(valid + i, &spread_bits[byte], 8);
    nulls += 8 - __builtin_popcount(byte);
  }
  for (; i < n; i++) {
    int64_t j = pos + i;
    valid[i] = (bits[j >> 3] >> (j & 7)) & 1;
    nulls += !valid[i];
  }
  if (nulls == 0) {
    hs_sql_blob_unref(b);
    return HS_OK;
  }
  hs_status st = hs_sql_vec_adopt(v, b, x->err);
  if (st == HS_OK) v->valid = valid;
  return st;
}

/* Borrow n rows of width w at p from the batch; copy them instead when
 * p is misaligned for `align` or a null row holds nonzero bytes. */
static hs_status borrow(import_ctx *x, hs_sql_vec *v, const void *p, size_t w, size_t align) {
  bool copy = ((uintptr_t)p % align) != 0;
  if (!copy && v->valid != NULL) {
    const uint8_t *bytes = p;
    for (int64_t i = 0; i < v->n && !copy; i++) {
      if (v->valid[i]) continue;
      for (size_t k = 0; k < w; k++) {
        if (bytes[(size_t)i * w + k] != 0) {
          copy = true;
          break;
        }
      }
    }
  }
  if (!copy) {
    v->data = p;
    return hs_sql_vec_hold(v, x->keep, x->err);
  }
  hs_sql_blob *b = hs_sql_blob_new((size_t)v->n * w);
  if (b == NULL) return bad(x, HS_ERR_NOMEM, "out of memory (column copy)");
  uint8_t *d = hs_sql_blob_data(b);
  if (v->n > 0) memcpy(d, p, (size_t)v->n * w);
  if (v->valid != NULL) {
    for (int64_t i = 0; i < v->n; i++) {
      if (!v->valid[i]) memset(d + (size_t)i * w, 0, w);
    }
  }
  v->data = d;
  return hs_sql_vec_adopt(v, b, x->err);
}

/* New owned data for v (n rows of its type, zeroed). */
static void *own_data(import_ctx *x, hs_sql_vec *v) {
  size_t w = hs_sql_vec_width(v->type);
  hs_sql_blob *b = hs_sql_blob_new((size_t)v->n * w);
  if (b == NULL) {
    bad(x, HS_ERR_NOMEM, "out of memory (column)");
    return NULL;
  }
  void *d = hs_sql_blob_data(b);
  if (hs_sql_vec_adopt(v, b, x->err) != HS_OK) return NULL;
  v->data = d;
  return d;
}

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: renormalise */
      int e = -1;
      do {
        e++;
        man <<= 1;
      } while ((man & 0x400) == 0);
      bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = (int32_t)((x >> 23) & 0xff);
  uint32_t man = x & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
  int32_t e = exp - 127 + 15;
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    man |= 0x800000;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = (uint32_t)e << 10 | man >> 13, rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++; /* may carry into the exponent: fine */
  return (uint16_t)(sign | h);
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Timestamps/durations of `unit` to microseconds. */
static hs_status to_micros(import_ctx *x, hs_sql_vec *v, const int64_t *src, hs_time_unit unit) {
  if (unit == HS_UNIT_US) return HS_OK; /* caller borrows */
  int64_t *d = own_data(x, v);
  if (d == NULL) return HS_ERR_NOMEM;
  int64_t mul = unit == HS_UNIT_S ? 1000000 : 1000;
  for (int64_t i = 0; i < v->n; i++) {
    if (v->valid != NULL && !v->valid[i]) continue;
    if (unit == HS_UNIT_NS) {
      d[i] = floor_div(src[i], 1000);
    } else if (__builtin_mul_overflow(src[i], mul, &d[i])) {
      return bad(x, HS_ERR_SCHEMA, "timestamp out of range");
    }
  }
  return HS_OK;
}

/* Strings with offsets of type T (int32 or int64). */
#define IMPORT_OFFSETS(T)                                                         \
  do {                                                                            \
    const T *off_ = (const T *)buffer(a, 1) + pos;                                \
    for (int64_t i = 0; i < n; i++) {                                             \
      T lo_ = off_[i], hi_ = off_[i + 1];                                         \
      if (lo_ < 0 || hi_ < lo_ || (uint64_t)(hi_ - lo_) > UINT32_MAX) {           \
        return bad(x, HS_ERR_INVALID_ARG, "string offsets decrease or overflow"); \
      }                                                                           \
      s[i].ptr = chars + lo_;                                                     \
      s[i].len = (uint32_t)(hi_ - lo_);                                           \
    }                                                                             \
  } while (0)

static hs_status import_strings(import_ctx *x, const struct ArrowArray *a, const hs_arrow_type *at,
                                const char *format, int64_t pos, hs_sql_vec *v) {
  int64_t n = v->n;
  hs_sql_str *s = own_data(x, v);
  if (s == NULL) return HS_ERR_NOMEM;
  hs_status st = hs_sql_vec_hold(v, x->keep, x->err);
  if (st != HS_OK) return st;
  if (n == 0) return HS_OK;
  if (format[0] == 'v') { /* string/binary view: 16-byte views + variadic buffers */
    const uint8_t *views = buffer(a, 1);
    int64_t n_data = a->n_buffers - 3; /* validity, views, data..., sizes */
    if (views == NULL || n_data < 0)
      return bad(x, HS_ERR_INVALID_ARG, "string view buffers missing");
    const int64_t *sizes = buffer(a, a->n_buffers - 1);
    for (int64_t i = 0; i < n; i++) {
      const uint8_t *view = views + (size_t)(pos + i) * 16;
      int32_t len;
      memcpy(&len, view, 4);
      if (v->valid != NULL && !v->valid[i]) { /* a NULL row's view may be anything */
        s[i].ptr = "";
        continue;
      }
      if (len < 0) return bad(x, HS_ERR_INVALID_ARG, "negative string view length");
      if (len <= 12) {
        s[i].ptr = (const char *)view + 4;
      } else {
        int32_t bi, bo;
        memcpy(&bi, view + 8, 4);
        memcpy(&bo, view + 12, 4);
        const char *data = bi >= 0 && bi < n_data ? buffer(a, 2 + bi) : NULL;
        if (data == NULL || bo < 0 || (sizes != NULL && (int64_t)bo + len > sizes[bi])) {
          return bad(x, HS_ERR_INVALID_ARG, "string view points outside its data buffers");
        }
        s[i].ptr = data + bo;
      }
      s[i].len = (uint32_t)len;
    }
    return HS_OK;
  }
  if (at->id == HS_AT_FIXED_BINARY) {
    const char *chars = buffer(a, 1);
    if (chars == NULL) return bad(x, HS_ERR_INVALID_ARG, "data buffer missing");
    for (int64_t i = 0; i < n; i++) {
      s[i].ptr = chars + (size_t)(pos + i) * (size_t)at->width;
      s[i].len = (uint32_t)at->width;
    }
    return HS_OK;
  }
  const char *chars = buffer(a, 2);
  if (buffer(a, 1) == NULL) return bad(x, HS_ERR_INVALID_ARG, "offsets buffer missing");
  if (chars == NULL) chars = "";
  if (at->id == HS_AT_LARGE_STRING || at->id == HS_AT_LARGE_BINARY) {
    IMPORT_OFFSETS(int64_t);
  } else {
    IMPORT_OFFSETS(int32_t);
  }
  return HS_OK;
}

static hs_status import_column(import_ctx *x, const struct ArrowSchema *f,
                               const struct ArrowArray *a, int64_t rel, int64_t n, int depth,
                               hs_sql_vec *v);

/* Indices of type T into sel (-1 for a NULL row); false at the first out
 * of range, its row in *bad_row. */
#define READ_INDICES(T)                                    \
  do {                                                     \
    const T *ix_ = (const T *)raw + pos;                   \
    for (int64_t i = 0; i < n; i++) {                      \
      uint64_t u_ = (uint64_t)ix_[i]; /* negative: huge */ \
      if (valid != NULL && !valid[i]) {                    \
        sel[i] = -1;                                       \
      } else if (u_ >= (uint64_t)dict_len) {               \
        *bad_row = i;                                      \
        *bad_index = (int64_t)ix_[i];                      \
        return false;                                      \
      } else {                                             \
        sel[i] = (int64_t)u_;                              \
      }                                                    \
    }                                                      \
  } while (0)

static bool read_indices(hs_arrow_type_id id, const void *raw, int64_t pos, int64_t n,
                         const uint8_t *valid, int64_t dict_len, int64_t *sel, int64_t *bad_row,
                         int64_t *bad_index) {
  switch (id) {
  case HS_AT_INT8: READ_INDICES(int8_t); break;
  case HS_AT_UINT8: READ_INDICES(uint8_t); break;
  case HS_AT_INT16: READ_INDICES(int16_t); break;
  case HS_AT_UINT16: READ_INDICES(uint16_t); break;
  case HS_AT_INT32: READ_INDICES(int32_t); break;
  case HS_AT_UINT32: READ_INDICES(uint32_t); break;
  case HS_AT_INT64: READ_INDICES(int64_t); break;
  default: READ_INDICES(uint64_t); break;
  }
  return true;
}

/* Strings of an offsets dictionary ("u", "U", "z", "Z") gathered by sel
 * straight from its offsets: no view of every dictionary entry is built
 * (a dictionary may be much larger than the batch). */
#define GATHER_DICT(T)                                                                            \
  do {                                                                                            \
    const T *off_ = (const T *)buffer(da, 1) + da->offset;                                        \
    for (int64_t i = 0; i < n; i++) {                                                             \
      int64_t k_ = sel[i];                                                                        \
      s[i].ptr = "";                                                                              \
      if (k_ < 0 ||                                                                               \
          (dbits != NULL && !((dbits[(da->offset + k_) >> 3] >> ((da->offset + k_) & 7)) & 1))) { \
        continue; /* NULL: validity 0 */                                                          \
      }                                                                                           \
      T lo_ = off_[k_], hi_ = off_[k_ + 1];                                                       \
      if (lo_ < 0 || hi_ < lo_ || (uint64_t)(hi_ - lo_) > UINT32_MAX) {                           \
        return bad(x, HS_ERR_INVALID_ARG, "dictionary string offsets decrease");                  \
      }                                                                                           \
      s[i].ptr = chars + lo_;                                                                     \
      s[i].len = (uint32_t)(hi_ - lo_);                                                           \
      if (valid != NULL) valid[i] = 1;                                                            \
    }                                                                                             \
  } while (0)

static hs_status dict_strings(import_ctx *x, hs_sql_type t, const char *dformat,
                              const struct ArrowArray *da, const int64_t *sel, int64_t n,
                              hs_sql_vec *v) {
  const uint8_t *dbits = da->null_count != 0 ? buffer(da, 0) : NULL;
  bool nullable = dbits != NULL;
  for (int64_t i = 0; i < n && !nullable; i++) nullable = sel[i] < 0;
  hs_status st = hs_sql_vec_alloc(v, t, n, nullable, x->err);
  if (st == HS_OK) st = hs_sql_vec_hold(v, x->keep, x->err);
  if (st != HS_OK) return st;
  if (n == 0) return HS_OK;
  if (buffer(da, 1) == NULL) return bad(x, HS_ERR_INVALID_ARG, "dictionary offsets missing");
  const char *chars = buffer(da, 2) != NULL ? buffer(da, 2) : "";
  hs_sql_str *s = hs_sql_vec_mut_data(v);
  uint8_t *valid = hs_sql_vec_mut_valid(v);
  if (dformat[0] == 'U' || dformat[0] == 'Z') {
    GATHER_DICT(int64_t);
  } else {
    GATHER_DICT(int32_t);
  }
  return HS_OK;
}

/* A dictionary column: the indices read once (switch outside the loop),
 * then string dictionaries gathered straight from their offsets and any
 * other dictionary imported as a vector and gathered with hs_sql_vec_take. */
static hs_status import_dictionary(import_ctx *x, const struct ArrowSchema *f,
                                   const struct ArrowArray *a, int64_t pos, int64_t n, int depth,
                                   hs_sql_vec *v) {
  const struct ArrowArray *da = a->dictionary;
  const struct ArrowSchema *df = f->dictionary;
  if (da == NULL || df->format == NULL) return bad(x, HS_ERR_INVALID_ARG, "dictionary missing");
  if (da->offset < 0 || da->length < 0) return bad(x, HS_ERR_INVALID_ARG, "bad dictionary");
  hs_arrow_type it;
  if (hs_arrow_type_parse(f->format, &it, x->err) != HS_OK) return HS_ERR_SCHEMA;
  int64_t *sel = hs_malloc((size_t)(n > 0 ? n : 1) * sizeof *sel);
  if (sel == NULL) return bad(x, HS_ERR_NOMEM, "out of memory (dictionary indices)");
  hs_sql_vec idx = {0}, dict = {0};
  idx.n = n;
  hs_status st = import_validity(x, a, pos, n, &idx);
  const void *raw = buffer(a, 1);
  if (st == HS_OK && raw == NULL && n > 0) st = bad(x, HS_ERR_INVALID_ARG, "indices missing");
  int64_t bad_row = 0, bad_index = 0;
  if (st == HS_OK && n > 0 &&
      !read_indices(it.id, raw, pos, n, idx.valid, da->length, sel, &bad_row, &bad_index)) {
    char msg[96];
    snprintf(msg, sizeof msg, "dictionary index %lld out of range at row %lld",
             (long long)bad_index, (long long)bad_row);
    st = bad(x, HS_ERR_INVALID_ARG, msg);
  }
  hs_sql_vec_release(&idx);
  if (st == HS_OK) {
    const char *d = df->format;
    hs_sql_type t;
    char why[256];
    if (!hs_sql_type_from_arrow(f, &t, why, sizeof why)) {
      st = hs_error_set(x->err, HS_ERR_UNSUPPORTED, "%s", why);
    } else if (df->dictionary == NULL && d[1] == '\0' && strchr("uUzZ", d[0]) != NULL) {
      st = dict_strings(x, t, d, da, sel, n, v);
    } else {
      st = import_column(x, df, da, 0, da->length, depth + 1, &dict);
      if (st == HS_OK) st = hs_sql_vec_take(v, &dict, sel, n, x->err);
      hs_sql_vec_release(&dict);
    }
  }
  hs_free(sel);
  if (st != HS_OK) hs_sql_vec_release(v);
  return st;
}

static hs_status import_vector(import_ctx *x, const struct ArrowArray *a, int64_t pos,
                               hs_sql_vec *v) {
  int64_t dim = v->type.a, n = v->n;
  if (a->n_children != 1 || a->children == NULL || a->children[0] == NULL) {
    return bad(x, HS_ERR_INVALID_ARG, "fixed_size_list without its child");
  }
  const struct ArrowArray *c = a->children[0];
  int64_t start, end;
  if (__builtin_mul_overflow(pos, dim, &start) ||
      __builtin_add_overflow(start, c->offset, &start) ||
      __builtin_mul_overflow(pos + n, dim, &end) || c->offset < 0 || c->length < end) {
    return bad(x, HS_ERR_INVALID_ARG, "vector child too short");
  }
  if (n == 0) return hs_sql_vec_hold(v, x->keep, x->err);
  const void *vals = buffer(c, 1);
  if (vals == NULL) return bad(x, HS_ERR_INVALID_ARG, "vector values missing");
  const uint8_t *cbits = buffer(c, 0);
  if (cbits != NULL && c->null_count != 0) {
    for (int64_t i = 0; i < n; i++) {
      if (v->valid != NULL && !v->valid[i]) continue;
      for (int64_t k = 0; k < dim; k++) {
        int64_t j = start + i * dim + k;
        if (!((cbits[j >> 3] >> (j & 7)) & 1)) {
          char msg[96];
          snprintf(msg, sizeof msg, "NULL element %lld in the vector of row %lld", (long long)k,
                   (long long)i);
          return bad(x, HS_ERR_SCHEMA, msg);
        }
      }
    }
  }
  if (v->type.id == HS_SQL_VECTOR) {
    return borrow(x, v, (const float *)vals + start, (size_t)dim * 4, 4);
  }
  float *d = own_data(x, v);
  if (d == NULL) return HS_ERR_NOMEM;
  const uint16_t *h = (const uint16_t *)vals + start;
  for (int64_t i = 0; i < n * dim; i++) d[i] = half_to_float(h[i]);
  if (v->valid != NULL) {
    for (int64_t i = 0; i < n; i++) {
      if (!v->valid[i]) memset(d + i * dim, 0, (size_t)dim * 4);
    }
  }
  return HS_OK;
}

/* Convert values of C type S to the vector's type D. */
#define WIDEN(S, D)                                   \
  do {                                                \
    const S *s_ = (const S *)raw + pos;               \
    D *d_ = own_data(x, v);                           \
    if (d_ == NULL) return HS_ERR_NOMEM;              \
    for (int64_t i = 0; i < n; i++) d_[i] = (D)s_[i]; \
    if (v->valid != NULL) {                           \
      for (int64_t i = 0; i < n; i++) {               \
        if (!v->valid[i]) d_[i] = 0;                  \
      }                                               \
    }                                                 \
  } while (0)

/* Rows [rel, rel + n) of array `a` (relative to a->offset) of field `f`. */
static hs_status import_column(import_ctx *x, const struct ArrowSchema *f,
                               const struct ArrowArray *a, int64_t rel, int64_t n, int depth,
                               hs_sql_vec *v) {
  memset(v, 0, sizeof *v);
  if (depth > 4) return bad(x, HS_ERR_UNSUPPORTED, "dictionaries nested too deep");
  if (f == NULL || a == NULL || f->format == NULL) return bad(x, HS_ERR_INVALID_ARG, "missing");
  char why[256];
  hs_sql_type t;
  if (!hs_sql_type_from_arrow(f, &t, why, sizeof why)) {
    return hs_error_set(x->err, HS_ERR_UNSUPPORTED, "%s", why);
  }
  if (a->offset < 0 || a->length < 0 || rel < 0 || n < 0 || a->length - rel < n) {
    return bad(x, HS_ERR_INVALID_ARG, "array shorter than its batch");
  }
  int64_t pos = a->offset + rel;
  if (f->dictionary != NULL) return import_dictionary(x, f, a, pos, n, depth, v);
  v->type = t;
  v->n = n;
  if (t.id == HS_SQL_NULLTYPE) return HS_OK;
  hs_status st = import_validity(x, a, pos, n, v);
  if (st != HS_OK) return st;
  const char *fmt = f->format;
  if (t.id == HS_SQL_INTERVAL && fmt[1] == 'i') { /* "tin", "tiM", "tiD" */
    const uint8_t *raw = buffer(a, 1);
    hs_sql_interval *d = own_data(x, v);
    if (d == NULL) return HS_ERR_NOMEM;
    if (n > 0 && raw == NULL) return bad(x, HS_ERR_INVALID_ARG, "values missing");
    for (int64_t i = 0; i < n; i++) {
      if (v->valid != NULL && !v->valid[i]) continue;
      if (fmt[2] == 'n') {
        const uint8_t *e = raw + (size_t)(pos + i) * 16;
        int64_t nanos;
        memcpy(&d[i].months, e, 4);
        memcpy(&d[i].days, e + 4, 4);
        memcpy(&nanos, e + 8, 8);
        d[i].micros = floor_div(nanos, 1000);
      } else if (fmt[2] == 'M') {
        memcpy(&d[i].months, raw + (size_t)(pos + i) * 4, 4);
      } else {
        int32_t ms;
        memcpy(&d[i].days, raw + (size_t)(pos + i) * 8, 4);
        memcpy(&ms, raw + (size_t)(pos + i) * 8 + 4, 4);
        d[i].micros = (int64_t)ms * 1000;
      }
    }
    return HS_OK;
  }
  hs_arrow_type at = {0};
  if (fmt[0] != 'v' && hs_arrow_type_parse(fmt, &at, x->err) != HS_OK) return HS_ERR_SCHEMA;
  if (hs_sql_type_is_string(t.id)) return import_strings(x, a, &at, fmt, pos, v);
  if (hs_sql_type_is_vector(t.id)) return import_vector(x, a, pos, v);
  const void *raw = buffer(a, 1);
  if (n > 0 && raw == NULL) return bad(x, HS_ERR_INVALID_ARG, "values buffer missing");
  if (n == 0) return hs_sql_vec_hold(v, x->keep, x->err); /* data NULL is fine for 0 rows */
  switch (at.id) {
  case HS_AT_BOOL: {
    uint8_t *d = own_data(x, v);
    if (d == NULL) return HS_ERR_NOMEM;
    const uint8_t *bits = raw;
    for (int64_t i = 0; i < n; i++) {
      int64_t j = pos + i;
      d[i] = (bits[j >> 3] >> (j & 7)) & 1;
    }
    if (v->valid != NULL) {
      for (int64_t i = 0; i < n; i++) d[i] &= v->valid[i];
    }
    return HS_OK;
  }
  case HS_AT_INT8: WIDEN(int8_t, int32_t); return HS_OK;
  case HS_AT_UINT8: WIDEN(uint8_t, int32_t); return HS_OK;
  case HS_AT_INT16: WIDEN(int16_t, int32_t); return HS_OK;
  case HS_AT_UINT16: WIDEN(uint16_t, int32_t); return HS_OK;
  case HS_AT_UINT32: WIDEN(uint32_t, int64_t); return HS_OK;
  case HS_AT_UINT64: WIDEN(uint64_t, hs_sql_i128); return HS_OK;
  case HS_AT_FLOAT32: WIDEN(float, double); return HS_OK;
  case HS_AT_FLOAT16: {
    double *d = own_data(x, v);
    if (d == NULL) return HS_ERR_NOMEM;
    const uint16_t *h = (const uint16_t *)raw + pos;
    for (int64_t i = 0; i < n; i++) {
      d[i] = (v->valid == NULL || v->valid[i]) ? half_to_float(h[i]) : 0.0;
    }
    return HS_OK;
  }
  case HS_AT_INT32:
  case HS_AT_DATE32: return borrow(x, v, (const int32_t *)raw + pos, 4, 4);
  case HS_AT_INT64:
  case HS_AT_FLOAT64: return borrow(x, v, (const int64_t *)raw + pos, 8, 8);
  case HS_AT_DECIMAL128: return borrow(x, v, (const uint8_t *)raw + (size_t)pos * 16, 16, 16);
  case HS_AT_DATE64: {
    int32_t *d = own_data(x, v);
    if (d == NULL) return HS_ERR_NOMEM;
    const int64_t *ms = (const int64_t *)raw + pos;
    for (int64_t i = 0; i < n; i++) {
      if (v->valid != NULL && !v->valid[i]) continue;
      int64_t days = floor_div(ms[i], 86400000);
      if (days < INT32_MIN || days > INT32_MAX) return bad(x, HS_ERR_SCHEMA, "date out of range");
      d[i] = (int32_t)days;
    }
    return HS_OK;
  }
  case HS_AT_TIMESTAMP:
    if (at.unit == HS_UNIT_US) return borrow(x, v, (const int64_t *)raw + pos, 8, 8);
    return to_micros(x, v, (const int64_t *)raw + pos, at.unit);
  case HS_AT_DURATION: {
    hs_sql_vec us = {.type = hs_sql_type_of(HS_SQL_INT64), .n = n, .valid = v->valid};
    const int64_t *src = (const int64_t *)raw + pos;
    if (at.unit != HS_UNIT_US) {
      st = to_micros(x, &us, src, at.unit);
      if (st == HS_OK) src = us.data;
    }
    hs_sql_interval *d = st == HS_OK ? own_data(x, v) : NULL;
    if (d != NULL) {
      for (int64_t i = 0; i < n; i++) {
        d[i].micros = (v->valid == NULL || v->valid[i]) ? src[i] : 0;
      }
    }
    us.valid = NULL;
    hs_sql_vec_release(&us);
    return st != HS_OK ? st : d == NULL ? HS_ERR_NOMEM : HS_OK;
  }
  default: return bad(x, HS_ERR_UNSUPPORTED, "type not supported");
  }
}

hs_status hs_sql_chunk_from_arrow(const struct ArrowSchema *schema, struct ArrowArray *batch,
                                  const int32_t *cols, int32_t n_cols, hs_sql_chunk *out,
                                  hs_error *err) {
  memset(out, 0, sizeof *out);
  if (batch == NULL || batch->release == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "chunk_from_arrow: batch missing or released");
  }
  arrow_blob *keep = hs_malloc(sizeof *keep);
  if (keep == NULL) {
    batch->release(batch);
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory (arrow batch holder)");
  }
  keep->hdr.refs = 1;
  keep->hdr.release = arrow_blob_release;
  keep->arr = *batch;
  batch->release = NULL;
  const struct ArrowArray *b = &keep->arr;
  hs_status st = HS_OK;
  if (schema == NULL || schema->format == NULL || strcmp(schema->format, "+s") != 0 ||
      schema->n_children != b->n_children || b->length < 0 || b->offset < 0 ||
      (b->n_children > 0 && (schema->children == NULL || b->children == NULL))) {
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "chunk_from_arrow: batch is not a struct array of its schema");
  }
  if (cols == NULL) n_cols = st == HS_OK ? (int32_t)b->n_children : 0;
  if (st == HS_OK && n_cols < 0) st = hs_error_set(err, HS_ERR_INVALID_ARG, "negative n_cols");
  if (st == HS_OK) st = hs_sql_chunk_init(out, n_cols, b->length, err);
  for (int32_t k = 0; st == HS_OK && k < n_cols; k++) {
    int64_t c = cols != NULL ? cols[k] : k;
    if (c < 0 || c >= b->n_children) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "chunk_from_arrow: column %lld of %lld",
                        (long long)c, (long long)b->n_children);
      break;
    }
    const struct ArrowSchema *f = schema->children[c];
    import_ctx x = {&keep->hdr, f != NULL && f->name != NULL ? f->name : "", err};
    st = import_column(&x, f, b->children[c], b->offset, b->length, 0, &out->cols[k]);
  }
  hs_sql_blob_unref(&keep->hdr);
  if (st != HS_OK) hs_sql_chunk_release(out);
  return st;
}

/* --------------------------------------------------------------- export */

hs_status hs_sql_schema_to_arrow(const hs_sql_type *types, const char *const *names, int32_t n,
                                 struct ArrowSchema *out, hs_error *err) {
  hs_status st = hs_arrow_schema_init(out, "+s", "", 0, n, err);
  for (int32_t k = 0; st == HS_OK && k < n; k++) {
    const char *fmt = hs_sql_type_arrow_format(types[k]);
    if (fmt == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "no Arrow format for column %d", (int)k);
      break;
    }
    bool list = hs_sql_type_is_vector(types[k].id);
    if (list && types[k].a <= 0) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "column \"%s\": a %s without a dimension has no Arrow type (a "
                        "fixed_size_list needs its size)",
                        names != NULL && names[k] != NULL ? names[k] : "",
                        types[k].id == HS_SQL_VECTOR ? "vector" : "halfvec");
      break;
    }
    struct ArrowSchema *c = out->children[k];
    st = hs_arrow_schema_init(c, fmt, names != NULL ? names[k] : "", ARROW_FLAG_NULLABLE,
                              list ? 1 : 0, err);
    if (st == HS_OK && list) {
      st = hs_arrow_schema_init(c->children[0], types[k].id == HS_SQL_VECTOR ? "f" : "e", "item",
                                ARROW_FLAG_NULLABLE, 0, err);
    }
  }
  if (st != HS_OK) hs_arrow_schema_release(out);
  return st;
}

static void vec_keep_release(void *p) {
  hs_sql_vec_release(p);
  hs_free(p);
}

/* Lend v->data as buffer `slot` of arr (a share of v is kept alive). */
static hs_status lend(struct ArrowArray *arr, int64_t slot, const hs_sql_vec *v, hs_error *err) {
  if (v->data == NULL) { /* no rows (an imported empty column): a real buffer all the same */
    void *p = hs_calloc(1, 16);
    if (p == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory (export)");
    hs_arrow_array_set_buffer(arr, slot, p);
    return HS_OK;
  }
  hs_sql_vec *keep = hs_malloc(sizeof *keep);
  if (keep == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory (export)");
  hs_status st = hs_sql_vec_share(keep, v, err);
  if (st != HS_OK) {
    hs_free(keep);
    return st;
  }
  return hs_arrow_array_set_borrowed(arr, slot, v->data, vec_keep_release, keep, err);
}

/* The validity bitmap of v (NULL when no row is null). */
static hs_status export_validity(const hs_sql_vec *v, struct ArrowArray *arr, hs_error *err) {
  arr->null_count = 0;
  if (v->type.id == HS_SQL_NULLTYPE) {
    arr->null_count = v->n;
    return HS_OK;
  }
  if (v->valid == NULL) return HS_OK;
  int64_t n = v->n, nulls = 0;
  uint8_t *bits = hs_calloc((size_t)(n + 7) / 8 + 1, 1);
  if (bits == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory (validity)");
  int64_t i = 0, set = 0;
  for (; i + 8 <= n; i += 8) {
    uint8_t byte = pack_bytes(v->valid + i);
    bits[i >> 3] = byte;
    set += __builtin_popcount(byte);
  }
  for (; i < n; i++) {
    uint8_t ok = v->valid[i] != 0;
    bits[i >> 3] |= (uint8_t)(ok << (i & 7));
    set += ok;
  }
  nulls = n - set;
  arr->null_count = nulls;
  hs_arrow_array_set_buffer(arr, 0, bits);
  return HS_OK;
}

/* The text of row i of a SPARSEVEC or BIT column into b, as psql prints it
 * (fn_vector.c); false on OOM or bytes that are not such a value. */
static bool text_of(const hs_sql_vec *v, int64_t i, hs_buf *b) {
  hs_sql_value x;
  hs_sql_vec_get(v, i, &x);
  if (v->type.id == HS_SQL_BIT ? hs_sql_bit_len(x.v.s) < 0
                               : !hs_sql_sparse_header(x.v.s, &(int32_t){0}, &(int32_t){0})) {
    return false;
  }
  return hs_sql_vector_format(&x, b);
}

static hs_status export_strings(const hs_sql_vec *v, struct ArrowArray *arr, hs_error *err) {
  int64_t n = v->n;
  int32_t *offs = hs_malloc((size_t)(n + 1) * sizeof *offs);
  if (offs == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory (string offsets)");
  offs[0] = 0;
  const hs_sql_str *s = v->data;
  uint8_t *chars = NULL;
  if (v->type.id == HS_SQL_TEXT || v->type.id == HS_SQL_BYTEA) {
    /* Sized first, then one copy per row. */
    uint64_t total = 0;
    for (int64_t i = 0; i < n; i++) total += v->valid == NULL || v->valid[i] ? s[i].len : 0;
    if (total > INT32_MAX) {
      hs_free(offs);
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "column of %llu bytes of strings exceeds Arrow's 2 GiB string array",
                          (unsigned long long)total);
    }
    chars = hs_malloc((size_t)total + 1);
    if (chars == NULL) {
      hs_free(offs);
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory (strings)");
    }
    size_t at = 0;
    for (int64_t i = 0; i < n; i++) {
      if ((v->valid == NULL || v->valid[i]) && s[i].len > 0) {
        memcpy(chars + at, s[i].ptr, s[i].len);
        at += s[i].len;
      }
      offs[i + 1] = (int32_t)at;
    }
  } else { /* SPARSEVEC, BIT: their text */
    hs_buf b;
    hs_buf_init(&b);
    for (int64_t i = 0; i < n; i++) {
      if (hs_sql_vec_valid(v, i)) {
        bool ok = text_of(v, i, &b);
        if (!ok || b.len > INT32_MAX) {
          hs_free(offs);
          hs_buf_free(&b);
          return hs_error_set(err, ok ? HS_ERR_UNSUPPORTED : HS_ERR_NOMEM,
                              "row %lld: cannot export the value as text", (long long)i);
        }
      }
      offs[i + 1] = (int32_t)b.len;
    }
    if (b.data == NULL && !hs_buf_reserve(&b, 1)) {
      hs_free(offs);
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory (strings)");
    }
    chars = hs_buf_detach(&b);
  }
  hs_arrow_array_set_buffer(arr, 1, offs);
  hs_arrow_array_set_buffer(arr, 2, chars);
  return HS_OK;
}

/* Column v as Arrow; `as` is its type in the schema (the same but for the
 * width of FLOAT64, which follows `as`). */
static hs_status export_column(const hs_sql_vec *v, hs_sql_type as, struct ArrowArray *arr,
                               hs_error *err) {
  hs_sql_tid id = v->type.id;
  int64_t n = v->n;
  int64_t n_buffers =
      id == HS_SQL_NULLTYPE                                                                   ? 0
      : hs_sql_type_is_vector(id)                                                             ? 1
      : id == HS_SQL_TEXT || id == HS_SQL_BYTEA || id == HS_SQL_SPARSEVEC || id == HS_SQL_BIT ? 3
                                                                                              : 2;
  hs_status st = hs_arrow_array_init(arr, n_buffers, hs_sql_type_is_vector(id) ? 1 : 0, err);
  if (st != HS_OK) return st;
  arr->length = n;
  st = export_validity(v, arr, err);
  if (st != HS_OK || id == HS_SQL_NULLTYPE) return st;
  switch (id) {
  case HS_SQL_BOOL: {
    uint8_t *bits = hs_calloc((size_t)(n + 7) / 8 + 1, 1);
    if (bits == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory (booleans)");
    const uint8_t *d = v->data;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) bits[i >> 3] = pack_bytes(d + i);
    for (; i < n; i++) bits[i >> 3] |= (uint8_t)((d[i] != 0) << (i & 7));
    hs_arrow_array_set_buffer(arr, 1, bits);
    return HS_OK;
  }
  case HS_SQL_FLOAT64:
    if (as.a == 4) {
      float *f = hs_malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
      if (f == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory (float32)");
      const double *d = v->data;
      for (int64_t i = 0; i < n; i++) f[i] = (float)d[i];
      hs_arrow_array_set_buffer(arr, 1, f);
      return HS_OK;
    }
    return lend(arr, 1, v, err);
  case HS_SQL_INT32:
  case HS_SQL_INT64:
  case HS_SQL_NUMERIC:
  case HS_SQL_DATE:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: return lend(arr, 1, v, err);
  case HS_SQL_INTERVAL: {
    uint8_t *m = hs_calloc((size_t)(n > 0 ? n : 1), 16);
    if (m == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory (intervals)");
    const hs_sql_interval *d = v->data;
    for (int64_t i = 0; i < n; i++) {
      int64_t nanos;
      if (!hs_sql_vec_valid(v, i)) continue;
      if (__builtin_mul_overflow(d[i].micros, 1000, &nanos)) {
        hs_free(m);
        return hs_error_set(err, HS_ERR_UNSUPPORTED,
                            "row %lld: interval of %lld microseconds overflows Arrow's "
                            "month_day_nano",
                            (long long)i, (long long)d[i].micros);
      }
      memcpy(m + (size_t)i * 16, &d[i].months, 4);
      memcpy(m + (size_t)i * 16 + 4, &d[i].days, 4);
      memcpy(m + (size_t)i * 16 + 8, &nanos, 8);
    }
    hs_arrow_array_set_buffer(arr, 1, m);
    return HS_OK;
  }
  case HS_SQL_TEXT:
  case HS_SQL_BYTEA:
  case HS_SQL_SPARSEVEC:
  case HS_SQL_BIT: return export_strings(v, arr, err);
  case HS_SQL_VECTOR:
  case HS_SQL_HALFVEC: {
    int64_t dim = v->type.a;
    if (dim <= 0) return hs_error_set(err, HS_ERR_INTERNAL, "vector column without a dimension");
    struct ArrowArray *c = arr->children[0];
    st = hs_arrow_array_init(c, 2, 0, err);
    if (st != HS_OK) return st;
    c->length = n * dim;
    c->null_count = 0;
    if (id == HS_SQL_VECTOR) {
      if (n == 0) {
        float *f = hs_malloc(sizeof *f);
        if (f == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory (vectors)");
        hs_arrow_array_set_buffer(c, 1, f);
        return HS_OK;
      }
      return lend(c, 1, v, err);
    }
    uint16_t *h = hs_malloc((size_t)(n * dim > 0 ? n * dim : 1) * 2);
    if (h == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory (halfvec)");
    const float *f = v->data;
    for (int64_t i = 0; i < n * dim; i++) h[i] = float_to_half(f[i]);
    hs_arrow_array_set_buffer(c, 1, h);
    return HS_OK;
  }
  default: return hs_error_set(err, HS_ERR_INTERNAL, "cannot export a column of this type");
  }
}

/* Column k (v) exported under schema type `as`: an all-NULL column of
 * NULLTYPE becomes nulls of `as`; otherwise the layouts must agree. */
static hs_status export_column_as(const hs_sql_vec *v, int32_t k, hs_sql_type as,
                                  struct ArrowArray *arr, hs_error *err) {
  hs_sql_type t = v->type;
  if (t.id == HS_SQL_NULLTYPE && as.id != HS_SQL_NULLTYPE) {
    hs_sql_vec nulls;
    if (hs_sql_type_is_vector(as.id) && as.a <= 0) {
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "column %d: a vector without a dimension",
                          (int)k);
    }
    hs_status st = hs_sql_vec_alloc(&nulls, as, v->n, true, err);
    if (st == HS_OK) st = export_column(&nulls, as, arr, err);
    hs_sql_vec_release(&nulls);
    return st;
  }
  bool same = t.id == as.id;
  if (same && t.id == HS_SQL_NUMERIC) same = t.b == as.b;
  if (same && hs_sql_type_is_vector(t.id)) same = t.a == as.a;
  if (!same) {
    char a[64], b[64];
    return hs_error_set(err, HS_ERR_INTERNAL, "column %d is %s where the result's schema has %s",
                        (int)k, hs_sql_type_name(t, a, sizeof a),
                        hs_sql_type_name(as, b, sizeof b));
  }
  return export_column(v, as, arr, err);
}

hs_status hs_sql_chunk_to_arrow(const hs_sql_chunk *c, struct ArrowArray *out, hs_error *err) {
  return hs_sql_chunk_to_arrow_as(c, NULL, out, err);
}

hs_status hs_sql_chunk_to_arrow_as(const hs_sql_chunk *c, const hs_sql_type *types,
                                   struct ArrowArray *out, hs_error *err) {
  hs_status st = hs_arrow_array_init(out, 1, c->n_cols, err);
  if (st != HS_OK) return st;
  out->length = c->n;
  out->null_count = 0;
  for (int32_t k = 0; st == HS_OK && k < c->n_cols; k++) {
    if (c->cols[k].n != c->n) {
      st = hs_error_set(err, HS_ERR_INTERNAL, "column %d has %lld rows in a chunk of %lld", (int)k,
                        (long long)c->cols[k].n, (long long)c->n);
      break;
    }
    const hs_sql_vec *v = &c->cols[k];
    st = types != NULL ? export_column_as(v, k, types[k], out->children[k], err)
                       : export_column(v, v->type, out->children[k], err);
  }
  if (st != HS_OK) hs_arrow_array_release(out);
  return st;
}
