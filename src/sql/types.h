/*
 * types.h — the SQL layer's logical types and their values.
 *
 * Every column and expression has an hs_sql_type. Types follow PostgreSQL
 * (and pgvector) by name; their physical layout inside the executor is
 * fixed per type (see vec.h):
 *
 *   BOOL         uint8_t 0/1          boolean
 *   INT32        int32_t              integer (smallint/int2 columns read as this)
 *   INT64        int64_t              bigint
 *   FLOAT64      double               double precision; real/float4 columns read as
 *                                     this and go back out as float32 (`width` 4)
 *   NUMERIC      hs_i128 scaled       numeric(p, s): value = d / 10^s; p <= 38
 *   TEXT         hs_sql_str view      text, varchar, char (UTF-8)
 *   BYTEA        hs_sql_str view      bytea / binary
 *   DATE         int32_t              days since 1970-01-01
 *   TIMESTAMP    int64_t              microseconds since 1970-01-01, no zone
 *   TIMESTAMPTZ  int64_t              microseconds since 1970-01-01 UTC
 *   INTERVAL     hs_sql_interval      months, days, microseconds (PostgreSQL's)
 *   VECTOR       float[dim]           pgvector vector(dim); `dim` 0 = not yet known
 *   HALFVEC      float[dim]           pgvector halfvec (held as float32, rounded to half)
 *   SPARSEVEC    hs_sql_str view      pgvector sparsevec: the canonical bytes of
 *                                     hs_sql_sparse (dim, nnz, indices, values)
 *   BIT          hs_sql_str view      bit(n): `dim` bits, packed MSB first
 *   NULLTYPE     (no data)            the type of a bare NULL before it meets another
 *
 * The bytes of the two pgvector byte-string types (native byte order, no
 * alignment: read them with memcpy; see hs_sql_sparse_header / hs_sql_bit_len):
 *   SPARSEVEC  int32 dim, int32 nnz, int32 indices[nnz] (0-based, strictly
 *              increasing, < dim), float values[nnz] (nonzero); 8 + 8 * nnz bytes
 *   BIT        int32 nbits, then (nbits + 7) / 8 bytes, MSB first, the unused
 *              low bits of the last byte zero; 4 + (nbits + 7) / 8 bytes
 *              (like PostgreSQL's varbit: a bit(n) value needs no typmod to
 *              know its length)
 * Exported to Arrow both are text ("u") as psql prints them: sparsevec as
 * "{1:1.5,3:2}/5" (1-based indices), bit as '0'/'1' characters.
 *
 * Ownership: plain values; nothing to free.
 */
#ifndef HS_SQL_TYPES_H
#define HS_SQL_TYPES_H

#include <string.h>

#include "../arrow/arrow.h"
#include "../common/common.h"

__extension__ typedef __int128 hs_sql_i128;

typedef enum hs_sql_tid {
  HS_SQL_NULLTYPE = 0,
  HS_SQL_BOOL,
  HS_SQL_INT32,
  HS_SQL_INT64,
  HS_SQL_FLOAT64,
  HS_SQL_NUMERIC,
  HS_SQL_TEXT,
  HS_SQL_BYTEA,
  HS_SQL_DATE,
  HS_SQL_TIMESTAMP,
  HS_SQL_TIMESTAMPTZ,
  HS_SQL_INTERVAL,
  HS_SQL_VECTOR,
  HS_SQL_HALFVEC,
  HS_SQL_SPARSEVEC,
  HS_SQL_BIT,
  HS_SQL_TID_COUNT
} hs_sql_tid;

typedef struct hs_sql_type {
  hs_sql_tid id;
  int32_t a; /* NUMERIC: precision (1..38); VECTOR/HALFVEC/SPARSEVEC: dim (0: any);
                BIT: bits (0: any); FLOAT64: Arrow width on output (4 or 8, 0 = 8);
                INTERVAL: PostgreSQL's fields mask, INTERVAL '90' DAY (0: all fields) */
  int32_t b; /* NUMERIC: scale (0..a) */
} hs_sql_type;

/* A string or byte string: borrowed bytes (kept alive by the owner of the
 * vector or value holding it). Not NUL-terminated. */
typedef struct hs_sql_str {
  const char *ptr;
  uint32_t len;
} hs_sql_str;

typedef struct hs_sql_interval {
  int32_t months;
  int32_t days;
  int64_t micros;
} hs_sql_interval;

/* A single value (constants, parameters, aggregate results). `is_null`
 * first; the member used is the type's (vec.h table). Bytes of TEXT,
 * BYTEA, SPARSEVEC and BIT, and the floats of vectors, are borrowed from
 * whoever built the value (for constants: the plan's arena). */
typedef struct hs_sql_value {
  hs_sql_type type;
  bool is_null;
  union {
    bool b;
    int32_t i32; /* INT32, DATE */
    int64_t i64; /* INT64, TIMESTAMP, TIMESTAMPTZ */
    double f64;
    hs_sql_i128 dec; /* NUMERIC: scaled by 10^type.b */
    hs_sql_str s;    /* TEXT, BYTEA, SPARSEVEC, BIT */
    hs_sql_interval iv;
    const float *vec; /* VECTOR, HALFVEC: type.a floats */
  } v;
} hs_sql_value;

static inline hs_sql_type hs_sql_type_of(hs_sql_tid id) {
  hs_sql_type t = {id, 0, 0};
  return t;
}
static inline bool hs_sql_type_eq(hs_sql_type x, hs_sql_type y) {
  return x.id == y.id && x.a == y.a && x.b == y.b;
}
static inline bool hs_sql_type_is_int(hs_sql_tid id) {
  return id == HS_SQL_INT32 || id == HS_SQL_INT64;
}
static inline bool hs_sql_type_is_numeric(hs_sql_tid id) { /* int, float or numeric */
  return id == HS_SQL_INT32 || id == HS_SQL_INT64 || id == HS_SQL_FLOAT64 || id == HS_SQL_NUMERIC;
}
static inline bool hs_sql_type_is_string(hs_sql_tid id) { /* held as hs_sql_str */
  return id == HS_SQL_TEXT || id == HS_SQL_BYTEA || id == HS_SQL_SPARSEVEC || id == HS_SQL_BIT;
}
static inline bool hs_sql_type_is_vector(hs_sql_tid id) { /* held as float[dim] */
  return id == HS_SQL_VECTOR || id == HS_SQL_HALFVEC;
}

/* The header of a SPARSEVEC value (false when the bytes are too short or
 * their counts disagree with the length). */
static inline bool hs_sql_sparse_header(hs_sql_str s, int32_t *dim, int32_t *nnz) {
  if (s.len < 8) return false;
  memcpy(dim, s.ptr, 4);
  memcpy(nnz, s.ptr + 4, 4);
  return *dim >= 0 && *nnz >= 0 && *nnz <= *dim && (uint64_t)s.len == 8 + 8 * (uint64_t)*nnz;
}
/* Bits in a BIT value (-1 when the bytes disagree with their length). */
static inline int64_t hs_sql_bit_len(hs_sql_str s) {
  int32_t nbits;
  if (s.len < 4) return -1;
  memcpy(&nbits, s.ptr, 4);
  if (nbits < 0 || (uint64_t)s.len != 4 + ((uint64_t)nbits + 7) / 8) return -1;
  return nbits;
}

/* PostgreSQL's name of a type, e.g. "integer", "numeric(15,2)",
 * "vector(3)", into buf (always NUL-terminated); returns buf. */
const char *hs_sql_type_name(hs_sql_type t, char *buf, size_t cap);

/* The type named by a PostgreSQL type name as libpg_query spells it after
 * the "pg_catalog." prefix is dropped ("int4", "int8", "float8", "numeric",
 * "text", "varchar", "bool", "date", "timestamp", "timestamptz",
 * "interval", "vector", ...) with its typmods (mods[0..n_mods), -1 when
 * absent). false when the name is unknown or a typmod is out of range;
 * *why says so in PostgreSQL's words ("type \"x\" does not exist",
 * "NUMERIC precision 50 must be between 1 and 38"). "numeric" without a
 * typmod is NUMERIC a = 0 (unconstrained); "bit" without one is bit(1) as
 * in PostgreSQL, "varbit" is BIT a = 0; length limits of varchar(n),
 * char(n), varbit(n) and timestamp/interval precisions are not kept. */
bool hs_sql_type_from_name(const char *name, const int32_t *mods, int n_mods, hs_sql_type *out,
                           char *why, size_t why_len);

/* The SQL type of an Arrow field (format string and, for vectors, the
 * list size); false for types SQL cannot read (*why names it). Dictionary
 * fields take their value type. */
bool hs_sql_type_from_arrow(const struct ArrowSchema *field, hs_sql_type *out, char *why,
                            size_t why_len);

/* The Arrow format string a column of type `t` is exported as (static
 * storage): "b", "i", "l", "g" or "f", "d:p,s", "u", "z", "tdD",
 * "tsu:", "tsu:UTC", "tin", "+w:dim" (child "f"), ... */
const char *hs_sql_type_arrow_format(hs_sql_type t);

/* Implicit casts, as PostgreSQL applies them when resolving operators and
 * functions and when unifying CASE/COALESCE/UNION branches:
 * NULLTYPE -> anything; INT32 -> INT64 -> NUMERIC -> FLOAT64;
 * TEXT literal (unknown-typed string constant) -> any type by parsing;
 * DATE -> TIMESTAMP -> TIMESTAMPTZ; VECTOR(0) <-> VECTOR(n). A type's
 * typmods never block a cast to itself (numeric(5,2) -> numeric(7,1),
 * real -> double precision) except dimensions: vector(3) -> vector(4) is
 * not implicit (same for halfvec, sparsevec, bit). The TEXT literal case is
 * the binder's: it cannot be told from a text column here, so TEXT -> x is
 * false for every x but TEXT. */
bool hs_sql_type_implicit(hs_sql_type from, hs_sql_type to);

/* The common type of two branch types (CASE, COALESCE, UNION, IN lists,
 * comparison operands): false when none exists. NUMERICs (and integers
 * with them, as numeric(10,0)/(19,0)) widen to hold both: the larger
 * scale and the larger integer part, precision capped at 38; real with
 * double is double, real with an integer or numeric stays real (as in
 * PostgreSQL); vectors of two different dimensions have none (no
 * fixed-width layout holds both). */
bool hs_sql_type_common(hs_sql_type x, hs_sql_type y, hs_sql_type *out);

#endif /* HS_SQL_TYPES_H */
