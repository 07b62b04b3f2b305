/*
 * fn_vector.h — pgvector's types in SQL: text forms, casts and the value
 * layouts of VECTOR, HALFVEC, SPARSEVEC and BIT (fn_vector.c).
 *
 * For cast.c (helper A): every cast where `from` or `to` is one of these
 * four types goes through here —
 *   hs_sql_cast_text(s, n, to, ...)  -> hs_sql_vector_parse  (to is a vector type)
 *   hs_sql_cast_exists(from, to)     -> hs_sql_vector_cast_exists (either side is one)
 *   hs_sql_cast_vec(in, to, ...)     -> hs_sql_vector_cast_vec   (either side is one;
 *                                       TEXT <-> vector types included)
 * and a vector-typed value prints with hs_sql_vector_format (what psql shows).
 *
 * Value layouts (types.h lists the physical types):
 *   VECTOR   float[dim], every component finite, 1 <= dim <= 16000.
 *   HALFVEC  float[dim], every component exactly representable as IEEE
 *            binary16 and finite, 1 <= dim <= 16000.
 *   SPARSEVEC bytes: int32 dim, int32 nnz, uint32 index[nnz] (0-based,
 *            strictly increasing, < dim), float value[nnz] (finite, non-zero),
 *            native byte order, no padding: 8 + 8 * nnz bytes. The form is
 *            canonical (zeros dropped, indices sorted), so equal vectors have
 *            equal bytes and byte-wise hashing and equality are correct.
 *            1 <= dim <= 1e9, nnz <= 16000. The text form uses 1-based
 *            indices: '{1:1.5,3:2}/5'.
 *   BIT      int32 nbits, then ceil(nbits / 8) bytes, bit 0 the most
 *            significant bit of the first, unused low bits of the last byte
 *            zero (types.h: hs_sql_bit_len). A value knows its length, so a
 *            BIT column of type a == 0 (bit varying) may mix lengths.
 *
 * Dimensions of a column are fixed (type.a, VECTOR/HALFVEC data are
 * float[n * dim]); a kernel whose result dimension is only known at run
 * time (subvector with non-constant bounds, a cast to vector without a
 * typmod) produces a vector whose type.a is the run-time dimension, which
 * may differ from the bound type's 0.
 *
 * Errors are pgvector's messages ("expected 3 dimensions, not 4", "different
 * vector dimensions 3 and 4", "invalid input syntax for type vector: ..."),
 * prefixed with "at position N: " when pos > 0.
 */
#ifndef HS_SQL_FN_VECTOR_H
#define HS_SQL_FN_VECTOR_H

#include "func.h"

#define HS_SQL_VECTOR_MAX_DIM 16000
#define HS_SQL_SPARSEVEC_MAX_DIM 1000000000
#define HS_SQL_SPARSEVEC_MAX_NNZ 16000
#define HS_SQL_BIT_MAX_BITS (64 * 1024 * 1024)

/* Is `id` VECTOR, HALFVEC, SPARSEVEC or BIT? */
static inline bool hs_sql_type_is_pgvector(hs_sql_tid id) {
  return id == HS_SQL_VECTOR || id == HS_SQL_HALFVEC || id == HS_SQL_SPARSEVEC || id == HS_SQL_BIT;
}

/* Parse the text form s[0..n) (not NUL-terminated) as type `to` (one of the
 * four; to.a the typmod, 0 = none) into *out; floats and bytes live in
 * `arena`. The result's type has the literal's dimension in `a`: callers
 * must keep out->type (and give a CONST node that type), since a vector
 * value of type vector(0) cannot be materialized (hs_sql_vec_const fails
 * "cannot allocate a column of type vector").
 *   vector    '[1,2,3]'          halfvec '[1,2,3]' (rounded to half)
 *   sparsevec '{1:1.5,3:2}/5'    bit     '0101', 'b0101' or 'x5' (hex)  */
hs_status hs_sql_vector_parse(const char *s, size_t n, hs_sql_type to, int32_t pos, hs_arena *arena,
                              hs_sql_value *out, hs_error *err);

/* Append the text form of a non-null value of one of the four types (as
 * pgvector prints it: shortest round-trip floats, '[1,2.5,3]',
 * '{1:1.5,3:2}/5', '0101'). false on OOM. */
bool hs_sql_vector_format(const hs_sql_value *v, hs_buf *out);

/* The shortest text that reads back as `f` (PostgreSQL's float4 output:
 * "1.5", "1e+07", "1.234567e-05", "NaN", "Infinity") into buf (>= 16
 * bytes, NUL-terminated); returns its length. */
size_t hs_sql_float4_format(float f, char *buf);

/* Can `from` be cast to `to` (explicitly) when either is one of the four?
 * vector <-> halfvec <-> sparsevec, each to itself (typmod check), text <->
 * each, bit <-> bit(n). */
bool hs_sql_vector_cast_exists(hs_sql_type from, hs_sql_type to);

/* Cast every row of `in` to `to` into *out (zeroed), either side one of
 * the four (TEXT too, by parsing or printing). HS_ERR_INVALID_ARG naming
 * pos on a bad value ("expected 3 dimensions, not 4"). */
hs_status hs_sql_vector_cast_vec(const hs_sql_vec *in, hs_sql_type to, int32_t pos, hs_sql_vec *out,
                                 hs_error *err);

/* pgvector's distance (double, exactly what the <-> <#> <=> <+> kernels
 * give) between `query` (dim floats) and each row of the VECTOR vector
 * `rows` (of dimension dim) into out[0..rows->n); metric "l2", "ip"
 * (negative inner product), "cosine" or "l1". NULL rows get 0. */
hs_status hs_sql_vector_distances(const char *metric, const float *query, int32_t dim,
                                  const hs_sql_vec *rows, double *out, hs_error *err);

/* A sparse vector's fields read from its canonical bytes (false when the
 * bytes are not a valid canonical sparsevec). Pointers borrow s; they may
 * be unaligned: read them with memcpy. */
typedef struct hs_sql_sparse_view {
  int32_t dim;
  int32_t nnz;
  const unsigned char *indices; /* nnz uint32 */
  const unsigned char *values;  /* nnz float */
} hs_sql_sparse_view;
bool hs_sql_sparse_view_of(hs_sql_str s, hs_sql_sparse_view *out);

#endif /* HS_SQL_FN_VECTOR_H */
