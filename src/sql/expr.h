/*
 * expr.h — bound, typed scalar expressions of the SQL layer and their
 * vectorized evaluation over chunks.
 *
 * The binder (bind.c) turns libpg_query's parse tree into these nodes:
 * every node has its result type, every column reference is an index into
 * the input chunk of the operator that evaluates it, every operator and
 * function call has been resolved to an hs_sql_fn (func.h) with implicit
 * casts inserted as explicit CAST nodes. Nothing is looked up at run time.
 *
 * Semantics are PostgreSQL's (see README.md): three-valued logic, NULL in
 * -> NULL out for strict functions, integer overflow and division by zero
 * are errors (HS_ERR_INVALID_ARG "integer out of range", "division by
 * zero"), NaN equal to NaN and above every number, strings compared by
 * bytes.
 *
 * Ownership: nodes live in the arena of the plan that holds them
 * (plan.h); they are immutable after binding, so many threads may
 * evaluate one tree at once, each with its own hs_sql_evalctx.
 */
#ifndef HS_SQL_EXPR_H
#define HS_SQL_EXPR_H

#include "vec.h"

typedef struct hs_sql_fn hs_sql_fn;

typedef enum hs_sql_expr_kind {
  HS_SX_COL,      /* col: input column index */
  HS_SX_CONST,    /* value */
  HS_SX_PARAM,    /* param: $n as 0-based index; value taken from the context */
  HS_SX_FUNC,     /* fn(args): every operator and function, incl. comparisons */
  HS_SX_CAST,     /* args[0] cast to type (explicit or implicit) */
  HS_SX_AND,      /* args[0..n) (n >= 2), three-valued */
  HS_SX_OR,       /* args[0..n) (n >= 2), three-valued */
  HS_SX_NOT,      /* args[0] */
  HS_SX_ISNULL,   /* args[0] IS NULL (negated: IS NOT NULL) */
  HS_SX_BOOLTEST, /* args[0] IS [NOT] TRUE/FALSE/UNKNOWN: which 1/0/-1, negated */
  HS_SX_CASE,     /* CASE WHEN args[2i] THEN args[2i+1] ... ELSE args[n-1] (has_else) */
  HS_SX_COALESCE, /* first non-null of args[0..n) */
  HS_SX_NULLIF,   /* NULLIF(args[0], args[1]) (uses fn: the "=" of the common type) */
  HS_SX_IN,       /* args[0] IN (args[1..n)), negated: NOT IN; fn: the "=" used */
  HS_SX_LIKE,     /* args[0] [NOT] [I]LIKE args[1] [ESCAPE args[2]]: negated, icase */
  HS_SX_GREATEST, /* GREATEST/LEAST(args): which = 1 greatest, -1 least */
} hs_sql_expr_kind;

typedef struct hs_sql_expr hs_sql_expr;
struct hs_sql_expr {
  hs_sql_expr_kind kind;
  hs_sql_type type; /* result type */
  int32_t pos;      /* 1-based position in the SQL text (0: none) */
  int32_t col;      /* COL */
  int32_t param;    /* PARAM */
  hs_sql_value value;
  const hs_sql_fn *fn; /* FUNC, NULLIF, IN */
  bool negated;        /* ISNULL, BOOLTEST, IN, LIKE */
  bool icase;          /* LIKE: ILIKE */
  bool has_else;       /* CASE */
  int32_t which;       /* BOOLTEST, GREATEST */
  hs_sql_expr **args;
  int32_t n_args;
  void *aux; /* per-node data bound once (e.g. a compiled IN set), owned by the plan arena */
};

/* Run-time state one evaluating thread passes in. */
typedef struct hs_sql_evalctx {
  const hs_sql_value *params; /* $1.. values, n_params of them */
  int32_t n_params;
  const volatile int *cancel; /* non-zero: stop with "query cancelled" (may be NULL) */
  hs_arena *scratch;          /* per-chunk scratch, reset by the caller (may be NULL) */
} hs_sql_evalctx;

/* Evaluate `e` over the rows of `in`; *out (zeroed) receives in->n rows of
 * e->type. Errors (overflow, division by zero, a bad cast) name the
 * expression's position. */
hs_status hs_sql_eval(const hs_sql_expr *e, const hs_sql_chunk *in, const hs_sql_evalctx *ctx,
                      hs_sql_vec *out, hs_error *err);

/* Evaluate a boolean `e` over `in` and give the rows where it is TRUE as
 * increasing indices: sel (caller-allocated, in->n entries), *n_sel. */
hs_status hs_sql_eval_select(const hs_sql_expr *e, const hs_sql_chunk *in,
                             const hs_sql_evalctx *ctx, int64_t *sel, int64_t *n_sel,
                             hs_error *err);

/* Evaluate an expression without column references (constant folding,
 * LIMIT counts, literals) to a value whose borrowed bytes live in `arena`. */
hs_status hs_sql_eval_const(const hs_sql_expr *e, const hs_sql_evalctx *ctx, hs_arena *arena,
                            hs_sql_value *out, hs_error *err);

/* Does `e` reference no column (and no volatile function)? */
bool hs_sql_expr_is_const(const hs_sql_expr *e);

/* Does `e` reference a parameter ($n) anywhere? (NULL: no) */
bool hs_sql_expr_has_param(const hs_sql_expr *e);

/* Does `e` call a volatile function anywhere (random(), ...)? */
bool hs_sql_expr_has_volatile(const hs_sql_expr *e);

/* A copy of `e` in `arena` with every column reference c replaced by
 * map[c] (or c + shift when map is NULL); NULL when out of memory. */
hs_sql_expr *hs_sql_expr_remap(hs_arena *arena, const hs_sql_expr *e, const int32_t *map,
                               int32_t shift);

/* A copy of `e` over a join's (left nl, right nr) columns made to read
 * them as (right, left): the predicate of the join with its inputs swapped. */
hs_sql_expr *hs_sql_expr_swap_sides(hs_arena *arena, const hs_sql_expr *e, int32_t nl, int32_t nr);

/* A node constructor in `arena` (kind, type, pos set; the rest zeroed). */
hs_sql_expr *hs_sql_expr_new(hs_arena *arena, hs_sql_expr_kind kind, hs_sql_type type, int32_t pos);

/* A cast node of `e` to `t` (e itself when it already has type t).
 * HS_ERR_INVALID_ARG "cannot cast type x to y" when no cast exists. */
hs_status hs_sql_expr_cast(hs_arena *arena, hs_sql_expr *e, hs_sql_type t, hs_sql_expr **out,
                           hs_error *err);

/* Render for EXPLAIN (column names from names[], may be NULL: "#i"). */
hs_status hs_sql_expr_to_string(const hs_sql_expr *e, const char *const *names, hs_buf *out,
                                hs_error *err);

#endif /* HS_SQL_EXPR_H */
