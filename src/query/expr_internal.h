/*
 * expr_internal.h — the bound expression tree shared by the parser
 * (expr_parse.c), literal handling (expr_literal.c), the evaluator
 * (expr_eval.c) and statistics pruning (expr_prune.c). Private to
 * src/query/.
 *
 * Binding turns every literal into the physical domain of the column it is
 * compared with, as a "fixed point" q plus a flag for a positive fraction
 * below one: the literal 2.5 against an integer column is q = 2, frac =
 * true, so `v < 2.5` is decided exactly by comparing v with q and breaking
 * ties by frac. A literal outside the type's range saturates (sat = -1:
 * below every value, +1: above every value). Comparisons are therefore
 * exact for every pairing of literal and column type.
 */
#ifndef HS_QUERY_EXPR_INTERNAL_H
#define HS_QUERY_EXPR_INTERNAL_H

#include "expr.h"

__extension__ typedef __int128 hs_i128;

/* Physical comparison domains. */
typedef enum hs_expr_domain {
  HS_DOM_I64,   /* signed ints, dates, timestamps: `width` bytes, signed */
  HS_DOM_U64,   /* unsigned ints */
  HS_DOM_F64,   /* float32 (width 4) and float64 */
  HS_DOM_DEC,   /* decimal128, scale in type.scale */
  HS_DOM_BYTES, /* string and binary, 32- or 64-bit offsets (width 4 or 8) */
  HS_DOM_BOOL   /* bit-packed booleans */
} hs_expr_domain;

/* What binding knows about one column of the schema. */
typedef struct hs_expr_col {
  bool bound; /* filled in (the expression uses this field) */
  const char *name;
  hs_arrow_type type;
  hs_expr_domain dom;
  int width; /* bytes per value (offset width for BYTES) */
} hs_expr_col;

/* A literal as parsed, before it meets a column. */
typedef enum hs_expr_lit_kind {
  HS_LIT_NULL,
  HS_LIT_BOOL,
  HS_LIT_NUM,  /* text: numeric literal ("12", "-2.5e3", "NaN", "-Infinity") */
  HS_LIT_STR,  /* text: untyped string, takes the column's type */
  HS_LIT_DATE, /* secs: midnight of the day, UTC */
  HS_LIT_TS    /* secs + nanos since the epoch, UTC */
} hs_expr_lit_kind;

typedef struct hs_expr_lit {
  hs_expr_lit_kind kind;
  int32_t pos; /* 1-based position in the filter, 0 if unknown */
  bool b;
  const char *text; /* NUM, STR (arena) */
  size_t len;
  int64_t secs;
  int32_t nanos;
} hs_expr_lit;

/* A literal bound to a column's domain (see the file comment). */
typedef struct hs_expr_bound {
  int sat;
  bool frac;
  int64_t i;
  uint64_t u;
  double f;
  hs_i128 d;
  const uint8_t *bytes;
  size_t len;
  bool b;
} hs_expr_bound;

typedef enum hs_expr_node_kind {
  HS_N_AND,
  HS_N_OR,
  HS_N_NOT,
  HS_N_CMP,      /* column op literal */
  HS_N_ISNULL,   /* column IS NULL (negated: IS NOT NULL) */
  HS_N_LIKE,     /* column LIKE pattern (negated: NOT LIKE) */
  HS_N_CONST,    /* tv: 1 TRUE, 0 FALSE, -1 unknown */
  HS_N_BOOLTEST, /* kid IS [NOT] TRUE/FALSE/UNKNOWN: which = 1, 0, -1 */
  HS_N_IN        /* column IN (in->vals): NOT IN is NOT over it */
} hs_expr_node_kind;

/* One value of an IN list, bound to the column, with its text as written. */
typedef struct hs_expr_inval {
  hs_expr_bound b;
  const char *text;
} hs_expr_inval;

/* An IN list (x IN (a, b, ...), or an OR of equalities on one column, which
 * parsing folds into it): the literals bound once, sorted in the column's
 * order (floats: NaN last, -0.0 = 0.0) and deduplicated. Literals no value
 * can equal (saturated, or with a fraction against an integer or decimal
 * column) are dropped. `has_null`: the list had a NULL, so a non-null value
 * not in it is UNKNOWN rather than FALSE (PostgreSQL). `keys`: a dense copy
 * of the values for the evaluator's binary search (int64_t, uint64_t,
 * double or hs_i128 by domain; NULL for strings and booleans, which search
 * `vals`). */
typedef struct hs_expr_inlist {
  int64_t n;
  bool has_null;
  hs_expr_inval *vals;
  void *keys;
} hs_expr_inlist;

typedef struct hs_expr_node hs_expr_node;
struct hs_expr_node {
  hs_expr_node_kind kind;
  int32_t pos;
  int64_t field; /* CMP, ISNULL, LIKE: top-level field index */
  hs_cmp_op op;  /* CMP */
  hs_expr_bound lit;
  const char *lit_text; /* CMP: literal as written, for hs_expr_to_string */
  bool negated;         /* ISNULL, LIKE, BOOLTEST */
  int tv;               /* CONST */
  int which;            /* BOOLTEST */
  const uint8_t *pat;   /* LIKE pattern (arena) */
  size_t pat_len;
  int escape;         /* LIKE escape byte, -1 for none */
  hs_expr_inlist *in; /* IN */
  hs_expr_node **kids;
  int n_kids;
};

struct hs_expr {
  hs_arena arena;
  hs_expr_node *root;
  int64_t n_fields;
  hs_expr_col *cols; /* n_fields entries */
  int depth;         /* height of the tree, root = 1 */
};

/* Deepest tree we accept: bounds the evaluator's scratch and recursion. */
#define HS_EXPR_DEPTH_MAX 256

/* Most values an IN list may hold. */
#define HS_EXPR_IN_MAX 100000

/* Fill col from an Arrow field; HS_ERR_UNSUPPORTED (message in why) for
 * types we cannot filter on. */
hs_status hs_expr_col_init(hs_expr_col *col, const struct ArrowSchema *field, char *why,
                           size_t why_len);

/* Bind `lit` to `col`'s domain. Failure: HS_ERR_INVALID_ARG with a message
 * in `why` (type mismatch, malformed literal). NULL literals are the
 * caller's business. Bytes of STR literals are borrowed from the lit. */
hs_status hs_expr_bind_literal(const hs_expr_col *col, const hs_expr_lit *lit, hs_expr_bound *out,
                               char *why, size_t why_len);

/* Parse the text of DATE '…' / TIMESTAMP '…' / a string cast to either
 * into lit (kind DATE or TS). false when malformed. */
bool hs_expr_parse_date(const char *s, size_t n, int64_t *secs);
bool hs_expr_parse_timestamp(const char *s, size_t n, int64_t *secs, int32_t *nanos);
/* Parse a boolean text as PostgreSQL does ('t', 'true', 'yes', 'on', '1', …). */
bool hs_expr_parse_bool(const char *s, size_t n, bool *out);
/* Is s[0..n) a numeric literal we can bind ("12", " -2.5e3 ", "NaN")? */
bool hs_expr_is_number(const char *s, size_t n);

/* Three-way comparison of a column value with a bound literal: -1, 0, 1
 * (value below, equal, above). The value comes as a scalar in the
 * column's domain; used by pruning. Floats: NaN equals NaN and is above
 * every number. */
int hs_expr_cmp_scalar(const hs_expr_col *col, const hs_expr_scalar *v, const hs_expr_bound *lit);
int hs_expr_cmp_f64(double a, double b);

/* Sort and deduplicate in->vals[0..in->n) for column `col` and build
 * in->keys (arena). false on out of memory. */
bool hs_expr_inlist_finish(hs_arena *arena, const hs_expr_col *col, hs_expr_inlist *in);
/* Is a bound literal one that some value of `col` may equal? (false for
 * saturated literals and fractions against integer / decimal columns.) */
bool hs_expr_lit_can_equal(const hs_expr_col *col, const hs_expr_bound *b);
/* Index of the first value of the list >= the column value v (pruning), 0..n. */
int64_t hs_expr_inlist_lower(const hs_expr_col *col, const hs_expr_inlist *in,
                             const hs_expr_scalar *v);

/* LIKE: does s match the pattern? '%' any run, '_' one UTF-8 character,
 * `escape` (-1 none) makes the next byte literal. The pattern was checked
 * at bind time (no trailing escape). */
bool hs_expr_like(const uint8_t *s, size_t n, const uint8_t *pat, size_t pat_len, int escape);

#endif /* HS_QUERY_EXPR_INTERNAL_H */
