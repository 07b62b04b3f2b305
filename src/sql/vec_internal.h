/*
 * vec_internal.h — helpers shared by vec.c and vec_arrow.c (not part of
 * the SQL layer's interface).
 */
#ifndef HS_SQL_VEC_INTERNAL_H
#define HS_SQL_VEC_INTERNAL_H

#include "vec.h"

/* Add `b` to v's references, taking over the caller's reference (dropped
 * when v already holds b, and on failure). */
hs_status hs_sql_vec_adopt(hs_sql_vec *v, hs_sql_blob *b, hs_error *err);
/* Take a reference to every blob src holds. */
hs_status hs_sql_vec_hold_all(hs_sql_vec *dst, const hs_sql_vec *src, hs_error *err);
/* A 64-bit hash of n bytes. */
uint64_t hs_sql_hash_bytes(const void *p, size_t n, uint64_t seed);

#endif /* HS_SQL_VEC_INTERNAL_H */
