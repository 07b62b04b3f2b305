/*
 * fn_vector_internal.h — helpers shared by fn_vector.c and
 * fn_vector_text.c (private to those files).
 */
#ifndef HS_SQL_FN_VECTOR_INTERNAL_H
#define HS_SQL_FN_VECTOR_INTERNAL_H

#include "fn_vector.h"

/* hs_error_set with "at position N: " in front when pos > 0. */
hs_status hs_sql_vector_error(hs_error *err, hs_status st, int32_t pos, const char *fmt, ...)
    HS_PRINTF(4, 5);
/* "vector must have at least 1 dimension" / "... cannot have more than N dimensions" */
hs_status hs_sql_vector_check_dim(int64_t dim, hs_sql_tid id, int32_t pos, hs_error *err);
/* "expected 3 dimensions, not 4" when typmod > 0 and differs from dim */
hs_status hs_sql_vector_check_typmod(int32_t typmod, int64_t dim, int32_t pos, hs_error *err);

#endif /* HS_SQL_FN_VECTOR_INTERNAL_H */
