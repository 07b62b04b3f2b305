/*
 * func.h — the catalogue of operators, functions, casts and aggregates.
 *
 * Operators are functions named by their symbol ("+", "=", "<->", "||",
 * "~~" is LIKE's internal name and not used: LIKE is an expression kind).
 * Resolution follows PostgreSQL's rules in spirit: an exact match of the
 * argument types wins, else the candidate reachable by the fewest implicit
 * casts (types.h hs_sql_type_implicit); an untyped string literal
 * (is_unknown_literal) takes the type the candidate wants. The binder then
 * inserts CAST nodes so that kernels see exactly their declared argument
 * types.
 *
 * Files: func.c (registry and resolution), fn_arith.c (arithmetic,
 * comparison, math), fn_string.c (text functions), fn_time.c (dates,
 * timestamps, intervals), fn_vector.c (pgvector operators and functions),
 * cast.c (every cast), agg.c (aggregates).
 *
 * Ownership: descriptors are static; kernels write into a zeroed output
 * vector (hs_sql_vec_alloc) of the resolved return type.
 */
#ifndef HS_SQL_FUNC_H
#define HS_SQL_FUNC_H

#include "expr.h"

#define HS_SQL_FN_ARGS_MAX 8

/* A kernel: rows [0, n) of args[0..n_args) (all exactly of the resolved
 * argument types, each of n rows) into *out (zeroed; the kernel allocates it
 * with the resolved return type `ret`). Kernels set the output's validity
 * themselves (hs_sql_fn_strict_valid does it for strict functions: NULL in,
 * NULL out). `e` is the calling node (for its position in error messages
 * and its aux data). */
typedef hs_status (*hs_sql_kernel)(const hs_sql_expr *e, const hs_sql_vec *args, int32_t n_args,
                                   int64_t n, hs_sql_type ret, hs_sql_vec *out, hs_error *err);

/* Computes the return type from the (already cast) argument types, for
 * functions whose result depends on them (numeric precision, vector dim).
 * NULL: the descriptor's `ret`. false with *why when the arguments are
 * unacceptable (e.g. vectors of different dimensions known at bind time). */
typedef bool (*hs_sql_rettype)(const hs_sql_type *args, int32_t n_args, hs_sql_type *ret, char *why,
                               size_t why_len);

struct hs_sql_fn {
  const char *name;                    /* lower case */
  int32_t n_args;                      /* -1: variadic (all args of args[0]'s type) */
  hs_sql_tid args[HS_SQL_FN_ARGS_MAX]; /* declared argument type ids */
  hs_sql_tid ret;                      /* declared return type id */
  hs_sql_rettype rettype;              /* NULL: hs_sql_type_of(ret) or the first arg's params */
  hs_sql_kernel kernel;
  bool volatile_; /* random(), now(): never constant-folded */
};

/* A resolved call. */
typedef struct hs_sql_fn_match {
  const hs_sql_fn *fn;
  hs_sql_type ret;
  hs_sql_type cast_to[HS_SQL_FN_ARGS_MAX]; /* the type each argument must have */
} hs_sql_fn_match;

/* Resolve `name` (lower case) for arguments of types args[0..n): `unknown[i]`
 * says argument i is an untyped string literal (may be NULL). HS_OK with
 * *m filled, HS_ERR_NOT_FOUND when no function has that name ("function
 * foo(integer) does not exist"), HS_ERR_INVALID_ARG when the name exists
 * but no overload fits (the message lists the candidates). The message
 * goes to `err` without position (the binder adds it). */
hs_status hs_sql_fn_resolve(const char *name, const hs_sql_type *args, const bool *unknown,
                            int32_t n, hs_sql_fn_match *m, hs_error *err);

/* Does any function or operator have this name? (for "did you mean"). */
bool hs_sql_fn_exists(const char *name);

/* Names of all functions (for suggestions): *names static, *n set. */
void hs_sql_fn_names(const char *const **names, size_t *n);

/* Set out->valid so row i is valid iff every args[k] row i is valid
 * (out already allocated with n rows, nullable or not: made nullable when
 * some arg has nulls). The usual first step of a strict kernel. */
hs_status hs_sql_fn_strict_valid(const hs_sql_vec *args, int32_t n_args, hs_sql_vec *out,
                                 hs_error *err);

/* ----------------------------------------------------------------- casts */

/* Can `from` be cast to `to` explicitly (CAST / ::)? */
bool hs_sql_cast_exists(hs_sql_type from, hs_sql_type to);

/* Cast every row of `in` to `to` into *out (zeroed). Failures (a string
 * that does not parse, a value out of range, a vector of the wrong
 * dimension) are HS_ERR_INVALID_ARG naming the value and `pos`. */
hs_status hs_sql_cast_vec(const hs_sql_vec *in, hs_sql_type to, int32_t pos, hs_sql_vec *out,
                          hs_error *err);

/* Parse a string constant as type `to` (literals like '2024-01-01'::date,
 * '[1,2,3]'::vector, '{1:1.5,3:2}/5'::sparsevec, B'0101'). Bytes of the
 * result live in `arena`. */
hs_status hs_sql_cast_text(const char *s, size_t len, hs_sql_type to, int32_t pos, hs_arena *arena,
                           hs_sql_value *out, hs_error *err);

/* ------------------------------------------------------------ aggregates */

/* An aggregate keeps one fixed-size state per group in a state array the
 * hash aggregate owns (state_size bytes each, zeroed then `init`ed).
 * update: for rows [0, n) of the argument vectors, fold row i into
 * states + group[i] * state_size. merge: fold state `src` into `dst`
 * (parallel partial aggregation). final: write the group's result as row
 * `row` of `out` (allocated by the caller with the resolved return type,
 * nullable). Aggregates needing variable memory (count(DISTINCT) is done
 * by the planner as a pre-DISTINCT, string min/max, vector sums) keep it
 * in the `arena` passed to update (lives as long as the states). */
typedef struct hs_sql_agg hs_sql_agg;
struct hs_sql_agg {
  const char *name; /* lower case: count, sum, avg, min, max, stddev, ... */
  int32_t n_args;   /* 0 for count(*) */
  hs_sql_tid arg;   /* declared argument type id (HS_SQL_NULLTYPE: any) */
  hs_sql_rettype rettype;
  size_t state_size;
  void (*init)(void *state, hs_sql_type arg, hs_sql_type ret);
  hs_status (*update)(const hs_sql_agg *a, void *states, const uint32_t *group,
                      const hs_sql_vec *args, int64_t n, hs_arena *arena, hs_error *err);
  hs_status (*merge)(const hs_sql_agg *a, void *dst, const void *src, hs_arena *arena,
                     hs_error *err);
  hs_status (*final)(const hs_sql_agg *a, const void *state, hs_sql_type ret, hs_sql_vec *out,
                     int64_t row, hs_error *err);
};

typedef struct hs_sql_agg_match {
  const hs_sql_agg *agg;
  hs_sql_type ret;
  hs_sql_type cast_to; /* the type the argument must have */
} hs_sql_agg_match;

/* Resolve an aggregate call; HS_ERR_NOT_FOUND when `name` is not an
 * aggregate (so the binder tries scalar functions). */
hs_status hs_sql_agg_resolve(const char *name, const hs_sql_type *args, int32_t n,
                             hs_sql_agg_match *m, hs_error *err);
bool hs_sql_agg_exists(const char *name);

#endif /* HS_SQL_FUNC_H */
