/*
 * vec.c — reference-counted blobs, vectors and chunks: allocation, sharing,
 * gather (take), slice, concat, row hashing and comparison.
 *
 * A vector's memory lives in blobs; the vector only holds references.
 * Gathers and slices of string columns copy the 16-byte views, never the
 * bytes, and take references to the source's blobs instead. Arrow import
 * and export are in vec_arrow.c.
 */
#include <math.h>
#include <string.h>

#include "vec.h"
#include "vec_internal.h"

/* ------------------------------------------------------------------ blobs */

void hs_sql_blob_ref(hs_sql_blob *b) {
  if (b != NULL) __atomic_fetch_add(&b->refs, 1, __ATOMIC_RELAXED);
}

void hs_sql_blob_unref(hs_sql_blob *b) {
  if (b != NULL && __atomic_fetch_sub(&b->refs, 1, __ATOMIC_ACQ_REL) == 1) b->release(b);
}

/* Heap blobs: the header padded to 32 bytes so data is 16-byte aligned
 * (hs_sql_i128, hs_sql_interval). */
#define BLOB_HEADER 32
_Static_assert(sizeof(hs_sql_blob) <= BLOB_HEADER, "blob header fits its padding");

static void heap_blob_release(hs_sql_blob *b) {
  hs_free(b);
}

/* A heap blob whose data is zeroed or left as malloc gives it (for
 * builders that write every byte). */
static hs_sql_blob *blob_new(size_t size, bool zero) {
  size_t total;
  if (size > HS_ALLOC_BYTES_MAX || !hs_add_size(size, BLOB_HEADER, &total)) return NULL;
  hs_sql_blob *b = zero ? hs_calloc(1, total) : hs_malloc(total);
  if (b == NULL) return NULL;
  b->refs = 1;
  b->release = heap_blob_release;
  return b;
}

hs_sql_blob *hs_sql_blob_new(size_t size) {
  return blob_new(size, true);
}

void *hs_sql_blob_data(hs_sql_blob *b) {
  return b != NULL ? (uint8_t *)b + BLOB_HEADER : NULL;
}

/* ---------------------------------------------------------------- vectors */

size_t hs_sql_vec_width(hs_sql_type t) {
  switch (t.id) {
  case HS_SQL_BOOL: return 1;
  case HS_SQL_INT32:
  case HS_SQL_DATE: return 4;
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ:
  case HS_SQL_FLOAT64: return 8;
  case HS_SQL_NUMERIC: return sizeof(hs_sql_i128);
  case HS_SQL_INTERVAL: return sizeof(hs_sql_interval);
  case HS_SQL_TEXT:
  case HS_SQL_BYTEA:
  case HS_SQL_SPARSEVEC:
  case HS_SQL_BIT: return sizeof(hs_sql_str);
  case HS_SQL_VECTOR:
  case HS_SQL_HALFVEC: return t.a > 0 ? (size_t)t.a * sizeof(float) : 0;
  default: return 0;
  }
}

static hs_sql_blob **vec_refs(const hs_sql_vec *v) {
  return v->n_refs <= HS_SQL_VEC_REFS_INLINE ? (hs_sql_blob **)v->refs_inline : v->refs_heap;
}

/* Add `b` to v's references, taking over the caller's reference (dropped
 * when v already holds b). On OOM the reference is dropped too. */
hs_status hs_sql_vec_adopt(hs_sql_vec *v, hs_sql_blob *b, hs_error *err) {
  if (b == NULL) return HS_OK;
  hs_sql_blob **refs = vec_refs(v);
  for (int32_t i = 0; i < v->n_refs; i++) {
    if (refs[i] == b) {
      hs_sql_blob_unref(b);
      return HS_OK;
    }
  }
  if (v->n_refs < HS_SQL_VEC_REFS_INLINE) {
    v->refs_inline[v->n_refs++] = b;
    return HS_OK;
  }
  if (v->n_refs >= v->refs_cap) {
    int32_t cap = v->refs_cap < 8 ? 8 : v->refs_cap * 2;
    if (cap > (1 << 24)) {
      hs_sql_blob_unref(b);
      return hs_error_set(err, HS_ERR_NOMEM, "vector holds too many memory blocks");
    }
    hs_sql_blob **heap = hs_realloc(v->refs_heap, (size_t)cap * sizeof *heap);
    if (heap == NULL) {
      hs_sql_blob_unref(b);
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory (vector references)");
    }
    if (v->n_refs == HS_SQL_VEC_REFS_INLINE) {
      memcpy(heap, v->refs_inline, sizeof v->refs_inline);
    }
    v->refs_heap = heap;
    v->refs_cap = cap;
  } else if (v->n_refs == HS_SQL_VEC_REFS_INLINE) {
    memcpy(v->refs_heap, v->refs_inline, sizeof v->refs_inline);
  }
  v->refs_heap[v->n_refs++] = b;
  return HS_OK;
}

hs_status hs_sql_vec_hold(hs_sql_vec *v, hs_sql_blob *b, hs_error *err) {
  if (b == NULL) return HS_OK;
  hs_sql_blob_ref(b);
  return hs_sql_vec_adopt(v, b, err);
}

/* Take references to every blob src holds. */
hs_status hs_sql_vec_hold_all(hs_sql_vec *dst, const hs_sql_vec *src, hs_error *err) {
  hs_sql_blob **refs = vec_refs(src);
  for (int32_t i = 0; i < src->n_refs; i++) {
    hs_status st = hs_sql_vec_hold(dst, refs[i], err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

/* For a gather of src's strings: references to the blobs its bytes may
 * live in, i.e. every blob but the one that is just src's own array of
 * views (from hs_sql_vec_alloc: a heap blob whose data is src->data; kernels
 * put string bytes in blobs of their own), so that a few rows taken from a
 * large column do not pin its view array. */
static hs_status hold_string_bytes(hs_sql_vec *dst, const hs_sql_vec *src, hs_error *err) {
  hs_sql_blob **refs = vec_refs(src);
  for (int32_t i = 0; i < src->n_refs; i++) {
    if (refs[i]->release == heap_blob_release && hs_sql_blob_data(refs[i]) == src->data) continue;
    hs_status st = hs_sql_vec_hold(dst, refs[i], err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

void hs_sql_vec_release(hs_sql_vec *v) {
  if (v == NULL) return;
  hs_sql_blob **refs = vec_refs(v);
  for (int32_t i = 0; i < v->n_refs; i++) hs_sql_blob_unref(refs[i]);
  hs_free(v->refs_heap);
  memset(v, 0, sizeof *v);
}

static hs_status too_big(hs_error *err, int64_t n, hs_sql_type t) {
  char name[64];
  return hs_error_set(err, HS_ERR_NOMEM, "vector of %lld rows of %s is too large", (long long)n,
                      hs_sql_type_name(t, name, sizeof name));
}

/* hs_sql_vec_alloc, the memory zeroed only when `zero` (take and concat
 * write every byte of data and validity themselves). */
static hs_status vec_alloc(hs_sql_vec *v, hs_sql_type t, int64_t n, bool nullable, bool zero,
                           hs_error *err) {
  memset(v, 0, sizeof *v);
  if (n < 0 || (uint64_t)n > HS_ALLOC_BYTES_MAX) return too_big(err, n, t);
  v->type = t;
  v->n = n;
  if (t.id == HS_SQL_NULLTYPE) return HS_OK;
  size_t w = hs_sql_vec_width(t), data_bytes, total;
  if (w == 0) {
    char name[64];
    memset(v, 0, sizeof *v);
    return hs_error_set(err, HS_ERR_INVALID_ARG, "cannot allocate a column of type %s",
                        hs_sql_type_name(t, name, sizeof name));
  }
  if (!hs_mul_size((size_t)n, w, &data_bytes) || !hs_add_size(data_bytes, 15, &data_bytes)) {
    memset(v, 0, sizeof *v);
    return too_big(err, n, t);
  }
  data_bytes &= ~(size_t)15;
  if (!hs_add_size(data_bytes, nullable ? (size_t)n : 0, &total) || total > HS_ALLOC_BYTES_MAX) {
    memset(v, 0, sizeof *v);
    return too_big(err, n, t);
  }
  hs_sql_blob *b = blob_new(total, zero);
  if (b == NULL) {
    memset(v, 0, sizeof *v);
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory (%zu bytes for a column)", total);
  }
  uint8_t *mem = hs_sql_blob_data(b);
  v->data = mem;
  v->valid = nullable ? mem + data_bytes : NULL;
  v->refs_inline[0] = b;
  v->n_refs = 1;
  return HS_OK;
}

hs_status hs_sql_vec_alloc(hs_sql_vec *v, hs_sql_type t, int64_t n, bool nullable, hs_error *err) {
  return vec_alloc(v, t, n, nullable, true, err);
}

hs_status hs_sql_vec_make_nullable(hs_sql_vec *v, hs_error *err) {
  if (v->valid != NULL || v->type.id == HS_SQL_NULLTYPE) return HS_OK;
  hs_sql_blob *b = hs_sql_blob_new((size_t)v->n);
  if (b == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory (validity of a column)");
  uint8_t *valid = hs_sql_blob_data(b);
  memset(valid, 1, (size_t)v->n);
  hs_status st = hs_sql_vec_adopt(v, b, err);
  if (st != HS_OK) return st;
  v->valid = valid;
  return HS_OK;
}

char *hs_sql_vec_add_bytes(hs_sql_vec *v, size_t bytes, hs_error *err) {
  hs_sql_blob *b = hs_sql_blob_new(bytes);
  if (b == NULL) {
    hs_error_set(err, HS_ERR_NOMEM, "out of memory (%zu bytes of strings)", bytes);
    return NULL;
  }
  char *p = hs_sql_blob_data(b);
  if (hs_sql_vec_adopt(v, b, err) != HS_OK) return NULL;
  return p;
}

hs_status hs_sql_vec_share(hs_sql_vec *dst, const hs_sql_vec *src, hs_error *err) {
  memset(dst, 0, sizeof *dst);
  dst->type = src->type;
  dst->n = src->n;
  dst->valid = src->valid;
  dst->data = src->data;
  hs_status st = hs_sql_vec_hold_all(dst, src, err);
  if (st != HS_OK) hs_sql_vec_release(dst);
  return st;
}

void hs_sql_vec_get(const hs_sql_vec *v, int64_t i, hs_sql_value *out) {
  memset(out, 0, sizeof *out);
  out->type = v->type;
  out->is_null = !hs_sql_vec_valid(v, i);
  if (out->is_null) return;
  switch (v->type.id) {
  case HS_SQL_BOOL: out->v.b = ((const uint8_t *)v->data)[i] != 0; break;
  case HS_SQL_INT32:
  case HS_SQL_DATE: out->v.i32 = ((const int32_t *)v->data)[i]; break;
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: out->v.i64 = ((const int64_t *)v->data)[i]; break;
  case HS_SQL_FLOAT64: out->v.f64 = ((const double *)v->data)[i]; break;
  case HS_SQL_NUMERIC:
    memcpy(&out->v.dec, (const hs_sql_i128 *)v->data + i, sizeof out->v.dec);
    break;
  case HS_SQL_INTERVAL: out->v.iv = ((const hs_sql_interval *)v->data)[i]; break;
  case HS_SQL_TEXT:
  case HS_SQL_BYTEA:
  case HS_SQL_SPARSEVEC:
  case HS_SQL_BIT: out->v.s = ((const hs_sql_str *)v->data)[i]; break;
  case HS_SQL_VECTOR:
  case HS_SQL_HALFVEC: out->v.vec = (const float *)v->data + (size_t)i * (size_t)v->type.a; break;
  default: out->is_null = true; break;
  }
}

/* The bytes of value `x` of a fixed-width type into slot `dst` (w bytes). */
static void value_bytes(const hs_sql_value *x, void *dst, size_t w) {
  switch (x->type.id) {
  case HS_SQL_BOOL: *(uint8_t *)dst = x->v.b ? 1 : 0; break;
  case HS_SQL_INT32:
  case HS_SQL_DATE: memcpy(dst, &x->v.i32, 4); break;
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: memcpy(dst, &x->v.i64, 8); break;
  case HS_SQL_FLOAT64: memcpy(dst, &x->v.f64, 8); break;
  case HS_SQL_NUMERIC: memcpy(dst, &x->v.dec, sizeof x->v.dec); break;
  case HS_SQL_INTERVAL: memcpy(dst, &x->v.iv, sizeof x->v.iv); break;
  case HS_SQL_VECTOR:
  case HS_SQL_HALFVEC:
    if (x->v.vec != NULL) memcpy(dst, x->v.vec, w);
    break;
  default: break;
  }
}

hs_status hs_sql_vec_const(hs_sql_vec *v, const hs_sql_value *value, int64_t n, hs_error *err) {
  hs_sql_type t = value->type;
  if (t.id == HS_SQL_NULLTYPE) return hs_sql_vec_alloc(v, t, n, false, err);
  hs_status st = hs_sql_vec_alloc(v, t, n, value->is_null, err);
  if (st != HS_OK || value->is_null) return st; /* null: zeroed data, validity all 0 */
  size_t w = hs_sql_vec_width(t);
  uint8_t *data = hs_sql_vec_mut_data(v);
  if (hs_sql_type_is_string(t.id)) {
    hs_sql_str s = value->v.s;
    char *bytes = hs_sql_vec_add_bytes(v, s.len, err);
    if (bytes == NULL) {
      hs_sql_vec_release(v);
      return HS_ERR_NOMEM;
    }
    if (s.len > 0) memcpy(bytes, s.ptr, s.len);
    hs_sql_str *out = (hs_sql_str *)data;
    for (int64_t i = 0; i < n; i++) out[i] = (hs_sql_str){bytes, s.len};
    return HS_OK;
  }
  if (n == 0) return HS_OK;
  value_bytes(value, data, w);
  /* Doubling copies: log2(n) memcpy calls. */
  size_t done = w, total = (size_t)n * w;
  while (done < total) {
    size_t m = done < total - done ? done : total - done;
    memcpy(data + done, data, m);
    done += m;
  }
  return HS_OK;
}

/* ------------------------------------------------------------ take/slice */

#define GATHER(T)                                             \
  do {                                                        \
    const T *s_ = (const T *)src->data;                       \
    T *d_ = (T *)out;                                         \
    if (has_neg) {                                            \
      for (int64_t i = 0; i < n_sel; i++) {                   \
        int64_t k_ = sel[i];                                  \
        if (k_ >= 0) {                                        \
          d_[i] = s_[k_];                                     \
        } else {                                              \
          memset(&d_[i], 0, sizeof(T));                       \
        }                                                     \
      }                                                       \
    } else {                                                  \
      for (int64_t i = 0; i < n_sel; i++) d_[i] = s_[sel[i]]; \
    }                                                         \
  } while (0)

typedef struct {
  uint64_t lo, hi;
} u128_words;

hs_status hs_sql_vec_take(hs_sql_vec *dst, const hs_sql_vec *src, const int64_t *sel, int64_t n_sel,
                          hs_error *err) {
  memset(dst, 0, sizeof *dst);
  if (n_sel < 0) return hs_error_set(err, HS_ERR_INVALID_ARG, "take: negative row count");
  bool has_neg = false;
  for (int64_t i = 0; i < n_sel; i++) {
    if (sel[i] < 0 || sel[i] >= src->n) {
      if (sel[i] != -1) {
        return hs_error_set(err, HS_ERR_INTERNAL, "take: row %lld of a %lld-row vector",
                            (long long)sel[i], (long long)src->n);
      }
      has_neg = true;
    }
  }
  if (src->type.id == HS_SQL_NULLTYPE) return hs_sql_vec_alloc(dst, src->type, n_sel, false, err);
  hs_status st = vec_alloc(dst, src->type, n_sel, src->valid != NULL || has_neg, false, err);
  if (st != HS_OK) return st;
  void *out = hs_sql_vec_mut_data(dst);
  size_t w = hs_sql_vec_width(src->type);
  switch (w) {
  case 1: GATHER(uint8_t); break;
  case 4: GATHER(uint32_t); break;
  case 8: GATHER(uint64_t); break;
  case 16: GATHER(u128_words); break;
  default: {
    const uint8_t *s = src->data;
    uint8_t *d = out;
    for (int64_t i = 0; i < n_sel; i++) {
      if (sel[i] >= 0) {
        memcpy(d + (size_t)i * w, s + (size_t)sel[i] * w, w);
      } else {
        memset(d + (size_t)i * w, 0, w);
      }
    }
  }
  }
  uint8_t *valid = hs_sql_vec_mut_valid(dst);
  if (valid != NULL) {
    const uint8_t *sv = src->valid;
    if (sv != NULL && !has_neg) {
      for (int64_t i = 0; i < n_sel; i++) valid[i] = sv[sel[i]];
    } else if (sv != NULL) {
      for (int64_t i = 0; i < n_sel; i++) valid[i] = sel[i] >= 0 ? sv[sel[i]] : 0;
    } else {
      for (int64_t i = 0; i < n_sel; i++) valid[i] = sel[i] >= 0;
    }
  }
  if (hs_sql_type_is_string(src->type.id)) {
    if (has_neg) { /* null rows: an empty string, not a NULL pointer */
      hs_sql_str *d = out;
      for (int64_t i = 0; i < n_sel; i++) {
        if (sel[i] < 0) d[i].ptr = "";
      }
    }
    st = hold_string_bytes(dst, src, err);
    if (st != HS_OK) hs_sql_vec_release(dst);
  }
  return st;
}

hs_status hs_sql_vec_slice(hs_sql_vec *dst, const hs_sql_vec *src, int64_t off, int64_t len,
                           hs_error *err) {
  memset(dst, 0, sizeof *dst);
  if (off < 0 || len < 0 || off > src->n || len > src->n - off) {
    return hs_error_set(err, HS_ERR_INTERNAL, "slice [%lld, +%lld) of a %lld-row vector",
                        (long long)off, (long long)len, (long long)src->n);
  }
  hs_status st = hs_sql_vec_share(dst, src, err);
  if (st != HS_OK) return st;
  dst->n = len;
  if (dst->data != NULL)
    dst->data = (const uint8_t *)src->data + (size_t)off * hs_sql_vec_width(src->type);
  if (dst->valid != NULL) dst->valid = src->valid + off;
  return HS_OK;
}

hs_status hs_sql_vec_concat(hs_sql_vec *dst, const hs_sql_vec *vs, size_t n, hs_error *err) {
  memset(dst, 0, sizeof *dst);
  if (n == 0) return hs_error_set(err, HS_ERR_INTERNAL, "concat of no vectors");
  hs_sql_type t = vs[0].type;
  int64_t total = 0;
  bool nullable = false;
  for (size_t k = 0; k < n; k++) {
    hs_sql_type u = vs[k].type;
    /* One physical layout: same scale for NUMERIC, same dimension for
     * vectors; what only labels the values (numeric precision, real vs
     * double, bit/sparsevec typmods) may differ and widens. */
    bool same = u.id == t.id && hs_sql_vec_width(u) == hs_sql_vec_width(t) &&
                (t.id != HS_SQL_NUMERIC || u.b == t.b);
    if (same && !hs_sql_type_eq(u, t)) {
      if (t.id == HS_SQL_NUMERIC) {
        t.a = t.a == 0 || u.a == 0 ? 0 : (t.a > u.a ? t.a : u.a);
      } else if (!hs_sql_type_is_vector(t.id)) {
        t.a = 0;
      }
    }
    if (!same) {
      char a[64], b[64];
      return hs_error_set(err, HS_ERR_INTERNAL, "concat of %s and %s vectors",
                          hs_sql_type_name(t, a, sizeof a),
                          hs_sql_type_name(vs[k].type, b, sizeof b));
    }
    if (__builtin_add_overflow(total, vs[k].n, &total)) return too_big(err, total, t);
    if (vs[k].valid != NULL) nullable = true;
  }
  if (n == 1) return hs_sql_vec_share(dst, &vs[0], err);
  hs_status st = vec_alloc(dst, t, total, nullable, false, err);
  if (st != HS_OK || t.id == HS_SQL_NULLTYPE) return st;
  size_t w = hs_sql_vec_width(t);
  uint8_t *data = hs_sql_vec_mut_data(dst), *valid = hs_sql_vec_mut_valid(dst);
  int64_t at = 0;
  for (size_t k = 0; k < n; k++) {
    const hs_sql_vec *v = &vs[k];
    if (v->n > 0) memcpy(data + (size_t)at * w, v->data, (size_t)v->n * w);
    if (valid != NULL && v->n > 0) {
      if (v->valid != NULL) {
        memcpy(valid + at, v->valid, (size_t)v->n);
      } else {
        memset(valid + at, 1, (size_t)v->n);
      }
    }
    at += v->n;
    if (hs_sql_type_is_string(t.id)) {
      st = hold_string_bytes(dst, v, err);
      if (st != HS_OK) {
        hs_sql_vec_release(dst);
        return st;
      }
    }
  }
  return HS_OK;
}

/* ------------------------------------------------------------ hash, cmp */

static inline uint64_t mix64(uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  return x;
}

static inline uint64_t combine(uint64_t seed, uint64_t v) {
  return mix64(seed * 0x9E3779B97F4A7C15ull + v + 0x632BE59BD9B4E019ull);
}

__extension__ typedef unsigned __int128 u128;

/* Multiply-fold: the 128-bit product's halves xor-ed (wyhash's mixer). */
static inline uint64_t mum(uint64_t a, uint64_t b) {
  u128 r = (u128)a * b;
  return (uint64_t)r ^ (uint64_t)(r >> 64);
}
static inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static inline uint64_t load32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

#define K0 0xa0761d6478bd642full
#define K1 0xe7037ed1a0b428dbull
#define K2 0x8ebc6af09c88c6e3ull

/* Short inputs are read as (possibly overlapping) first and last words, so
 * no byte loop and no memcpy call; the length is mixed in. */
uint64_t hs_sql_hash_bytes(const void *p, size_t n, uint64_t seed) {
  const uint8_t *s = p;
  uint64_t h = seed ^ K0, a, b;
  if (n <= 16) {
    if (n >= 8) {
      a = load64(s);
      b = load64(s + n - 8);
    } else if (n >= 4) {
      a = load32(s);
      b = load32(s + n - 4);
    } else if (n > 0) {
      a = (uint64_t)s[0] << 16 | (uint64_t)s[n >> 1] << 8 | s[n - 1];
      b = 0;
    } else {
      a = b = 0;
    }
  } else {
    size_t i = n;
    while (i > 16) {
      h = mum(load64(s) ^ K1, load64(s + 8) ^ h);
      s += 16;
      i -= 16;
    }
    a = load64(s + i - 16);
    b = load64(s + i - 8);
  }
  return mum(K1 ^ n, mum(a ^ K1, b ^ h));
}

static inline uint64_t double_bits(double d) {
  if (d == 0.0) d = 0.0; /* -0.0 */
  if (isnan(d)) return 0x7ff8000000000000ull;
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

static inline uint32_t float_bits(float f) {
  if (f == 0.0f) f = 0.0f;
  if (isnan(f)) return 0x7fc00000u;
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

#define USECS_PER_DAY INT64_C(86400000000)

/* PostgreSQL compares intervals by their span with months of 30 days. */
static inline hs_sql_i128 interval_span(hs_sql_interval iv) {
  return (hs_sql_i128)iv.micros + (hs_sql_i128)iv.days * USECS_PER_DAY +
         (hs_sql_i128)iv.months * 30 * USECS_PER_DAY;
}

#define NULL_HASH 0x5bd1e9955bd1e995ull

uint64_t hs_sql_vec_hash(const hs_sql_vec *v, int64_t i, uint64_t seed) {
  if (!hs_sql_vec_valid(v, i)) return combine(seed, NULL_HASH);
  switch (v->type.id) {
  case HS_SQL_BOOL: return combine(seed, ((const uint8_t *)v->data)[i]);
  case HS_SQL_INT32:
  case HS_SQL_DATE: return combine(seed, (uint64_t)(int64_t)((const int32_t *)v->data)[i]);
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: return combine(seed, (uint64_t)((const int64_t *)v->data)[i]);
  case HS_SQL_FLOAT64: return combine(seed, double_bits(((const double *)v->data)[i]));
  case HS_SQL_NUMERIC: {
    hs_sql_i128 d;
    memcpy(&d, (const hs_sql_i128 *)v->data + i, sizeof d);
    return combine(combine(seed, (uint64_t)d), (uint64_t)(d >> 64));
  }
  case HS_SQL_INTERVAL: {
    hs_sql_i128 d = interval_span(((const hs_sql_interval *)v->data)[i]);
    return combine(combine(seed, (uint64_t)d), (uint64_t)(d >> 64));
  }
  case HS_SQL_TEXT:
  case HS_SQL_BYTEA:
  case HS_SQL_SPARSEVEC:
  case HS_SQL_BIT: {
    hs_sql_str s = ((const hs_sql_str *)v->data)[i];
    return hs_sql_hash_bytes(s.ptr, s.len, seed);
  }
  case HS_SQL_VECTOR:
  case HS_SQL_HALFVEC: {
    int32_t dim = v->type.a;
    const float *f = (const float *)v->data + (size_t)i * (size_t)dim;
    uint64_t h = seed ^ (uint64_t)dim;
    for (int32_t k = 0; k + 1 < dim; k += 2) {
      h = combine(h, (uint64_t)float_bits(f[k]) | (uint64_t)float_bits(f[k + 1]) << 32);
    }
    if (dim & 1) h = combine(h, float_bits(f[dim - 1]));
    return h;
  }
  default: return combine(seed, NULL_HASH);
  }
}

/* h[i] = combine(h[i], KEY(row)) over a typed array, NULL rows alike. */
#define HASH_ROWS(T, KEY)                                               \
  do {                                                                  \
    const T *d_ = (const T *)v->data + off;                             \
    if (valid == NULL) {                                                \
      for (int64_t i = 0; i < n; i++) h[i] = combine(h[i], KEY(d_[i])); \
    } else {                                                            \
      for (int64_t i = 0; i < n; i++) {                                 \
        h[i] = combine(h[i], valid[i] ? KEY(d_[i]) : NULL_HASH);        \
      }                                                                 \
    }                                                                   \
  } while (0)
#define KEY_U8(x) ((uint64_t)(x))
#define KEY_I32(x) ((uint64_t)(int64_t)(x))
#define KEY_I64(x) ((uint64_t)(x))
#define KEY_F64(x) double_bits(x)

void hs_sql_vec_hash_rows(const hs_sql_vec *v, int64_t off, int64_t n, uint64_t *h) {
  if (v->type.id == HS_SQL_NULLTYPE) {
    for (int64_t i = 0; i < n; i++) h[i] = combine(h[i], NULL_HASH);
    return;
  }
  const uint8_t *valid = v->valid != NULL ? v->valid + off : NULL;
  switch (v->type.id) {
  case HS_SQL_BOOL: HASH_ROWS(uint8_t, KEY_U8); return;
  case HS_SQL_INT32:
  case HS_SQL_DATE: HASH_ROWS(int32_t, KEY_I32); return;
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: HASH_ROWS(int64_t, KEY_I64); return;
  case HS_SQL_FLOAT64: HASH_ROWS(double, KEY_F64); return;
  case HS_SQL_TEXT:
  case HS_SQL_BYTEA:
  case HS_SQL_SPARSEVEC:
  case HS_SQL_BIT: {
    const hs_sql_str *d = (const hs_sql_str *)v->data + off;
    for (int64_t i = 0; i < n; i++) {
      h[i] = valid == NULL || valid[i] ? hs_sql_hash_bytes(d[i].ptr, d[i].len, h[i])
                                       : combine(h[i], NULL_HASH);
    }
    return;
  }
  default:
    for (int64_t i = 0; i < n; i++) h[i] = hs_sql_vec_hash(v, off + i, h[i]);
    return;
  }
}

#define CMP3(x, y) (((x) > (y)) - ((x) < (y)))

static inline int cmp_double(double x, double y) {
  if (x < y) return -1;
  if (x > y) return 1;
  if (x == y) return 0;
  bool nx = isnan(x), ny = isnan(y);
  return (int)nx - (int)ny; /* NaN above every number, equal to NaN */
}

static inline int cmp_bytes(hs_sql_str x, hs_sql_str y) {
  uint32_t m = x.len < y.len ? x.len : y.len;
  int c = m > 0 ? memcmp(x.ptr, y.ptr, m) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  return CMP3(x.len, y.len);
}

static int cmp_floats(const float *x, int32_t nx, const float *y, int32_t ny) {
  int32_t m = nx < ny ? nx : ny;
  for (int32_t k = 0; k < m; k++) {
    int c = cmp_double(x[k], y[k]);
    if (c != 0) return c;
  }
  return CMP3(nx, ny);
}

/* pgvector's sparsevec order: values in index order (an absent index is
 * 0), then dimensions. Malformed bytes order by bytes. */
static int cmp_sparse(hs_sql_str x, hs_sql_str y) {
  int32_t dx, nx, dy, ny;
  if (!hs_sql_sparse_header(x, &dx, &nx) || !hs_sql_sparse_header(y, &dy, &ny)) {
    return cmp_bytes(x, y);
  }
  const char *ix = x.ptr + 8, *vx = x.ptr + 8 + 4 * (size_t)nx;
  const char *iy = y.ptr + 8, *vy = y.ptr + 8 + 4 * (size_t)ny;
  int32_t m = nx < ny ? nx : ny;
  for (int32_t k = 0; k < m; k++) {
    int32_t a, b;
    float fa, fb;
    memcpy(&a, ix + 4 * (size_t)k, 4);
    memcpy(&b, iy + 4 * (size_t)k, 4);
    memcpy(&fa, vx + 4 * (size_t)k, 4);
    memcpy(&fb, vy + 4 * (size_t)k, 4);
    if (a < b) return fa < 0 ? -1 : 1; /* x has a value where y has 0 */
    if (a > b) return fb < 0 ? 1 : -1;
    int c = cmp_double(fa, fb);
    if (c != 0) return c;
  }
  if (nx > m) {
    int32_t a;
    float fa;
    memcpy(&a, ix + 4 * (size_t)m, 4);
    memcpy(&fa, vx + 4 * (size_t)m, 4);
    if (a < dy) return fa < 0 ? -1 : 1;
  } else if (ny > m) {
    int32_t b;
    float fb;
    memcpy(&b, iy + 4 * (size_t)m, 4);
    memcpy(&fb, vy + 4 * (size_t)m, 4);
    if (b < dx) return fb < 0 ? 1 : -1;
  }
  return CMP3(dx, dy);
}

/* PostgreSQL's bit order: the bits as bytes, then the lengths. */
static int cmp_bit(hs_sql_str x, hs_sql_str y) {
  int64_t lx = hs_sql_bit_len(x), ly = hs_sql_bit_len(y);
  if (lx < 0 || ly < 0) return cmp_bytes(x, y);
  hs_sql_str bx = {x.ptr + 4, x.len - 4}, by = {y.ptr + 4, y.len - 4};
  uint32_t m = bx.len < by.len ? bx.len : by.len;
  int c = m > 0 ? memcmp(bx.ptr, by.ptr, m) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  return CMP3(lx, ly);
}

int hs_sql_vec_cmp(const hs_sql_vec *a, int64_t i, const hs_sql_vec *b, int64_t j) {
  bool va = hs_sql_vec_valid(a, i), vb = hs_sql_vec_valid(b, j);
  if (!va || !vb) return (int)!va - (int)!vb; /* NULL above every value */
  switch (a->type.id) {
  case HS_SQL_BOOL: return CMP3(((const uint8_t *)a->data)[i], ((const uint8_t *)b->data)[j]);
  case HS_SQL_INT32:
  case HS_SQL_DATE: return CMP3(((const int32_t *)a->data)[i], ((const int32_t *)b->data)[j]);
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ:
    return CMP3(((const int64_t *)a->data)[i], ((const int64_t *)b->data)[j]);
  case HS_SQL_FLOAT64:
    return cmp_double(((const double *)a->data)[i], ((const double *)b->data)[j]);
  case HS_SQL_NUMERIC: {
    hs_sql_i128 x, y;
    memcpy(&x, (const hs_sql_i128 *)a->data + i, sizeof x);
    memcpy(&y, (const hs_sql_i128 *)b->data + j, sizeof y);
    return CMP3(x, y);
  }
  case HS_SQL_INTERVAL: {
    hs_sql_i128 x = interval_span(((const hs_sql_interval *)a->data)[i]);
    hs_sql_i128 y = interval_span(((const hs_sql_interval *)b->data)[j]);
    return CMP3(x, y);
  }
  case HS_SQL_TEXT:
  case HS_SQL_BYTEA:
    return cmp_bytes(((const hs_sql_str *)a->data)[i], ((const hs_sql_str *)b->data)[j]);
  case HS_SQL_SPARSEVEC:
    return cmp_sparse(((const hs_sql_str *)a->data)[i], ((const hs_sql_str *)b->data)[j]);
  case HS_SQL_BIT:
    return cmp_bit(((const hs_sql_str *)a->data)[i], ((const hs_sql_str *)b->data)[j]);
  case HS_SQL_VECTOR:
  case HS_SQL_HALFVEC:
    return cmp_floats((const float *)a->data + (size_t)i * (size_t)a->type.a, a->type.a,
                      (const float *)b->data + (size_t)j * (size_t)b->type.a, b->type.a);
  default: return 0;
  }
}

/* ----------------------------------------------------------------- chunks */

hs_status hs_sql_chunk_init(hs_sql_chunk *c, int32_t n_cols, int64_t n, hs_error *err) {
  memset(c, 0, sizeof *c);
  if (n_cols < 0 || n < 0) return hs_error_set(err, HS_ERR_INVALID_ARG, "chunk_init: bad sizes");
  if (n_cols > 0) {
    c->cols = hs_calloc((size_t)n_cols, sizeof *c->cols);
    if (c->cols == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory (chunk columns)");
  }
  c->n_cols = n_cols;
  c->n = n;
  return HS_OK;
}

void hs_sql_chunk_release(hs_sql_chunk *c) {
  if (c == NULL) return;
  for (int32_t k = 0; k < c->n_cols && c->cols != NULL; k++) hs_sql_vec_release(&c->cols[k]);
  hs_free(c->cols);
  memset(c, 0, sizeof *c);
}

void hs_sql_chunk_move(hs_sql_chunk *dst, hs_sql_chunk *src) {
  *dst = *src;
  memset(src, 0, sizeof *src);
}

hs_status hs_sql_chunk_take(hs_sql_chunk *dst, const hs_sql_chunk *src, const int64_t *sel,
                            int64_t n_sel, hs_error *err) {
  hs_status st = hs_sql_chunk_init(dst, src->n_cols, n_sel, err);
  for (int32_t k = 0; st == HS_OK && k < src->n_cols; k++) {
    st = hs_sql_vec_take(&dst->cols[k], &src->cols[k], sel, n_sel, err);
  }
  if (st != HS_OK) hs_sql_chunk_release(dst);
  return st;
}
