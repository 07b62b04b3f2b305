/*
 * func_tables.h — the per-file tables of functions and aggregates that
 * func.c and agg.c search. Private to src/sql/. Each fn_*.c file defines
 * one table and its length; adding a function is adding a row there.
 */
#ifndef HS_SQL_FUNC_TABLES_H
#define HS_SQL_FUNC_TABLES_H

#include "func.h"

extern const hs_sql_fn hs_sql_fns_arith[]; /* fn_arith.c: + - * / % unary -, comparisons, math */
extern const size_t hs_sql_fns_arith_n;
extern const hs_sql_fn hs_sql_fns_string[]; /* fn_string.c: || lower upper length substr ... */
extern const size_t hs_sql_fns_string_n;
extern const hs_sql_fn hs_sql_fns_time[]; /* fn_time.c: extract date_trunc + - on dates ... */
extern const size_t hs_sql_fns_time_n;
extern const hs_sql_fn hs_sql_fns_vector[]; /* fn_vector.c: <-> <#> <=> <+> <~> <%> ... */
extern const size_t hs_sql_fns_vector_n;

extern const hs_sql_agg hs_sql_aggs_basic[]; /* agg.c: count sum avg min max stddev ... */
extern const size_t hs_sql_aggs_basic_n;
extern const hs_sql_agg hs_sql_aggs_vector[]; /* fn_vector.c: avg(vector) sum(vector) */
extern const size_t hs_sql_aggs_vector_n;

/* LIKE matching for HS_SX_LIKE (fn_string.c): does s match pattern p
 * ('%' any run, '_' one UTF-8 character, `escape` (-1: none) quotes the
 * next character)? `icase`: ILIKE (ASCII and UTF-8 simple case folding). */
bool hs_sql_like(const char *s, size_t n, const char *p, size_t pn, int escape, bool icase);

#endif /* HS_SQL_FUNC_TABLES_H */
