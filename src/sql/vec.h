/*
 * vec.h — columns and chunks: the executor's in-memory data.
 *
 * A vector is one column of up to HS_SQL_CHUNK_MAX... rows (no hard cap; a
 * chunk is what an operator emits at once, typically 2048-65536 rows) in
 * the fixed layout of its type (types.h):
 *   data: BOOL uint8_t[n] (0/1) | INT32, DATE int32_t[n] | INT64,
 *         TIMESTAMP, TIMESTAMPTZ int64_t[n] | FLOAT64 double[n] | NUMERIC
 *         hs_sql_i128[n] | INTERVAL hs_sql_interval[n] | TEXT, BYTEA,
 *         SPARSEVEC, BIT hs_sql_str[n] | VECTOR, HALFVEC float[n * dim]
 *         (dim = type.a) | NULLTYPE: NULL (every row is null).
 *   valid: NULL when no row is null, else uint8_t[n], 1 = value, 0 = NULL.
 *     The data slot of a null row holds some value of the type (zero), so
 *     kernels may compute on it and ignore the result.
 *
 * Memory is shared, never copied between operators: a vector holds
 * references to reference-counted blobs (hs_sql_blob) that keep its data,
 * validity and the bytes its strings point into alive. Slicing or passing a
 * column on is taking another reference. Vectors are immutable once built
 * (the builder of a vector may write into it until it hands it on).
 *
 * Ownership: hs_sql_vec and hs_sql_chunk are values whose references are
 * released by hs_sql_vec_release / hs_sql_chunk_release (both accept
 * zeroed structs, and leave them zeroed).
 */
#ifndef HS_SQL_VEC_H
#define HS_SQL_VEC_H

#include "types.h"

/* A reference-counted holder of memory. `release` frees the blob itself
 * (and whatever it holds) when the last reference goes. Counts are atomic:
 * blobs may be shared across threads. */
typedef struct hs_sql_blob hs_sql_blob;
struct hs_sql_blob {
  int64_t refs; /* atomic */
  void (*release)(hs_sql_blob *b);
};
void hs_sql_blob_ref(hs_sql_blob *b);   /* accepts NULL */
void hs_sql_blob_unref(hs_sql_blob *b); /* accepts NULL */

/* A blob of `size` bytes of zeroed heap memory (data at hs_sql_blob_data). */
hs_sql_blob *hs_sql_blob_new(size_t size);
void *hs_sql_blob_data(hs_sql_blob *b);

#define HS_SQL_VEC_REFS_INLINE 2

typedef struct hs_sql_vec {
  hs_sql_type type;
  int64_t n;
  const uint8_t *valid; /* NULL: no nulls */
  const void *data;
  /* Blobs this vector holds a reference to: refs_inline[0..n_refs) when
   * n_refs <= HS_SQL_VEC_REFS_INLINE, else refs_heap[0..n_refs). */
  int32_t n_refs;
  int32_t refs_cap;
  hs_sql_blob *refs_inline[HS_SQL_VEC_REFS_INLINE];
  hs_sql_blob **refs_heap;
} hs_sql_vec;

/* Make *v a new vector of `n` rows of type `t` with its own zeroed data
 * (and a validity array, all 0 = NULL, when `nullable`); the builder then
 * writes through hs_sql_vec_mut_data / hs_sql_vec_mut_valid. Strings built
 * by a kernel put their bytes in a blob of their own (hs_sql_vec_add_bytes)
 * and point into it. HS_ERR_NOMEM on failure (v left zeroed). */
hs_status hs_sql_vec_alloc(hs_sql_vec *v, hs_sql_type t, int64_t n, bool nullable, hs_error *err);
static inline void *hs_sql_vec_mut_data(hs_sql_vec *v) {
  return (void *)v->data;
}
static inline uint8_t *hs_sql_vec_mut_valid(hs_sql_vec *v) {
  return (uint8_t *)v->valid;
}

/* Give a vector built with hs_sql_vec_alloc(nullable=false) a validity
 * array (all 1 = valid), e.g. once a kernel meets its first null row. */
hs_status hs_sql_vec_make_nullable(hs_sql_vec *v, hs_error *err);

/* Reserve `bytes` bytes for string data owned by `v` and return where to
 * write them (NULL on OOM, with err set). Several calls make several
 * blobs; pointers stay valid for the life of the vector. */
char *hs_sql_vec_add_bytes(hs_sql_vec *v, size_t bytes, hs_error *err);

/* Add a reference to `b` to the vector (e.g. the input batch its strings
 * borrow from). */
hs_status hs_sql_vec_hold(hs_sql_vec *v, hs_sql_blob *b, hs_error *err);

/* *dst = a new reference to the same column (dst must be zeroed). */
hs_status hs_sql_vec_share(hs_sql_vec *dst, const hs_sql_vec *src, hs_error *err);

void hs_sql_vec_release(hs_sql_vec *v);

/* Is row i valid (not NULL)? */
static inline bool hs_sql_vec_valid(const hs_sql_vec *v, int64_t i) {
  return v->type.id != HS_SQL_NULLTYPE && (v->valid == NULL || v->valid[i]);
}

/* Bytes per row of the data array (0 for NULLTYPE; dim * 4 for vectors). */
size_t hs_sql_vec_width(hs_sql_type t);

/* A vector of `n` copies of `value` (a constant broadcast). */
hs_status hs_sql_vec_const(hs_sql_vec *v, const hs_sql_value *value, int64_t n, hs_error *err);

/* Row i of v as a value (strings and vectors borrowed from v). */
void hs_sql_vec_get(const hs_sql_vec *v, int64_t i, hs_sql_value *out);

/* New vector of rows sel[0..n_sel) of src (a gather; indices < src->n,
 * may repeat; sel[i] = -1 gives a NULL row). Strings keep pointing into
 * src's blobs (dst references them). */
hs_status hs_sql_vec_take(hs_sql_vec *dst, const hs_sql_vec *src, const int64_t *sel, int64_t n_sel,
                          hs_error *err);

/* New vector of rows [off, off + len) of src, sharing its memory. */
hs_status hs_sql_vec_slice(hs_sql_vec *dst, const hs_sql_vec *src, int64_t off, int64_t len,
                           hs_error *err);

/* Concatenate vs[0..n) (all of one type) into one vector. Types that
 * differ only in what does not change the layout are accepted and widen
 * (numeric precision, real/double, bit and sparsevec typmods); a NUMERIC
 * scale or vector dimension that differs is HS_ERR_INTERNAL. */
hs_status hs_sql_vec_concat(hs_sql_vec *dst, const hs_sql_vec *vs, size_t n, hs_error *err);

/* Hash of row i (NULLs hash alike), combined into seed; equal values hash
 * equal across vectors of the same type (INT32 and INT64 of equal value
 * too, and FLOAT64 -0.0 / 0.0, NaN / NaN). */
uint64_t hs_sql_vec_hash(const hs_sql_vec *v, int64_t i, uint64_t seed);
/* The same for rows [off, off + n) at once: h[i] = hs_sql_vec_hash(v,
 * off + i, h[i]) (seed h[i] with a constant first; call once per key
 * column to hash a composite key). One type switch, then a tight loop. */
void hs_sql_vec_hash_rows(const hs_sql_vec *v, int64_t off, int64_t n, uint64_t *h);

/* Compare row i of a with row j of b (same type), for sorting and grouping:
 * NULL equal to NULL and above every value (PostgreSQL's default NULLS
 * LAST for ASC); NaN equal to NaN and above every number; strings by
 * bytes (collation-free). Returns <0, 0, >0. */
int hs_sql_vec_cmp(const hs_sql_vec *a, int64_t i, const hs_sql_vec *b, int64_t j);

/* ------------------------------------------------------------------ chunks */

typedef struct hs_sql_chunk {
  int64_t n;      /* rows; 0 at end of stream */
  int32_t n_cols; /* columns */
  hs_sql_vec *cols;
} hs_sql_chunk;

/* Allocate `n_cols` zeroed columns for `n` rows. */
hs_status hs_sql_chunk_init(hs_sql_chunk *c, int32_t n_cols, int64_t n, hs_error *err);
void hs_sql_chunk_release(hs_sql_chunk *c);
/* Move: *dst = *src, src zeroed. */
void hs_sql_chunk_move(hs_sql_chunk *dst, hs_sql_chunk *src);
/* The rows sel[0..n_sel) of every column. */
hs_status hs_sql_chunk_take(hs_sql_chunk *dst, const hs_sql_chunk *src, const int64_t *sel,
                            int64_t n_sel, hs_error *err);

/* ---------------------------------------------------- Arrow in and out */

/* Import child arrays of a struct batch (`schema`/`batch`, consumed on
 * every return, failure included: the chunk takes ownership of the batch
 * and releases it when its last column goes) as a chunk whose column i is
 * the batch's child cols[i] (cols NULL: every child in order, n_cols
 * ignored; a child may be named twice). The batch's own offset is honoured
 * (a sliced batch).
 *
 * Fixed-width columns (int32, int64, float64, decimal128, date32,
 * timestamp[us], fixed_size_list<float32>) are borrowed without a copy,
 * unless misaligned or a null row's slot is not zero (then copied with
 * the slots zeroed: the executor's null rows hold zero, see above);
 * validity bitmaps become bytes; strings point into the batch (utf8,
 * large_utf8, binary, large_binary, fixed_size_binary, and the string /
 * binary views "vu"/"vz"); dictionary columns are decoded (an index out of
 * range is HS_ERR_INVALID_ARG). Conversions: int8/int16/uint8/uint16 to
 * INT32, uint32 to INT64, uint64 to NUMERIC(20,0), float16 and float32 to
 * FLOAT64 (width 4), decimal128(p,s) to NUMERIC(p,s) (a scale outside
 * 0..p is refused), date64 to DATE (floor), timestamps of any unit to
 * microseconds (TIMESTAMPTZ when the field has a time zone, TIMESTAMP
 * otherwise; nanoseconds floor; an overflow is HS_ERR_SCHEMA), durations
 * and the interval types "tin"/"tiM"/"tiD" to INTERVAL (nanoseconds
 * floor), fixed_size_list<float32>[d] to VECTOR(d) and
 * fixed_size_list<float16>[d] to HALFVEC(d) (a NULL element in a non-null
 * vector is HS_ERR_SCHEMA), null "n" to NULLTYPE. Other types (lists,
 * structs, maps, time of day, ...) are HS_ERR_UNSUPPORTED naming the
 * column (types.h: hs_sql_type_from_arrow). Offsets of strings are checked
 * (non-decreasing); the rest of the batch is trusted: run
 * hs_arrow_array_validate first on arrays from outside. */
hs_status hs_sql_chunk_from_arrow(const struct ArrowSchema *schema, struct ArrowArray *batch,
                                  const int32_t *cols, int32_t n_cols, hs_sql_chunk *out,
                                  hs_error *err);

/* Export: the schema for columns of types[0..n) named names[0..n) (a
 * struct "+s", every child nullable), and a chunk as a struct ArrowArray
 * of that schema (the array holds references to the chunk's memory; the
 * chunk may be released at once). Formats (hs_sql_type_arrow_format):
 * BOOL "b" (bit-packed), INT32 "i", INT64 "l", FLOAT64 "g" or "f" (width
 * 4), NUMERIC "d:p,s" (unconstrained: "d:38,s"), TEXT "u", BYTEA "z", DATE
 * "tdD", TIMESTAMP "tsu:", TIMESTAMPTZ "tsu:UTC", INTERVAL "tin"
 * (month_day_nano: months, days, nanoseconds = micros * 1000; an interval
 * whose nanoseconds overflow is HS_ERR_UNSUPPORTED), VECTOR(d)
 * "+w:d" of float32 "f" named "item", HALFVEC(d) "+w:d" of float16 "e",
 * SPARSEVEC and BIT as text "u", the way psql prints them
 * ('{1:1.5,3:2}/5', '0101'), NULLTYPE "n". Fixed-width columns whose
 * layout Arrow shares (INT32, INT64, double FLOAT64, NUMERIC, DATE,
 * timestamps, VECTOR) are lent without a copy. A string column over 2 GiB
 * is HS_ERR_UNSUPPORTED. Note hs_arrow_array_validate does not model
 * "tin" (HS_ERR_UNSUPPORTED); everything else passes it. */
hs_status hs_sql_schema_to_arrow(const hs_sql_type *types, const char *const *names, int32_t n,
                                 struct ArrowSchema *out, hs_error *err);
hs_status hs_sql_chunk_to_arrow(const hs_sql_chunk *c, struct ArrowArray *out, hs_error *err);
/* The same, each column exported as types[k] — the types the schema was
 * made from, which a stream must keep to even when a kernel's output type
 * differs in a label: FLOAT64 goes out as float32 or float64 by types[k].a,
 * a NULLTYPE column as nulls of types[k]; a column whose layout differs
 * (another type, NUMERIC scale, vector dimension) is HS_ERR_INTERNAL. A
 * VECTOR/HALFVEC type without a dimension (a = 0) has no Arrow schema:
 * hs_sql_schema_to_arrow refuses it (HS_ERR_UNSUPPORTED). */
hs_status hs_sql_chunk_to_arrow_as(const hs_sql_chunk *c, const hs_sql_type *types,
                                   struct ArrowArray *out, hs_error *err);

#endif /* HS_SQL_VEC_H */
