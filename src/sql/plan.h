/*
 * plan.h — query plans and the operators that execute them.
 *
 * The binder (bind.c) builds a tree of hs_sql_plan nodes from a statement;
 * the optimizer (optimize.c) rewrites it in place (predicate and
 * projection pushdown into scans, index-backed top-k, join method, top-N,
 * constant folding); the executor (exec.c) instantiates one hs_sql_op per
 * node and pulls chunks from the root. Every node states its output
 * columns (types and names); expressions in a node refer to the columns of
 * its input (kids[0], or for joins the left columns followed by the right).
 *
 * Ownership: a plan and everything it points to (expressions, names,
 * constants) live in one arena (hs_sql_plan_ctx.arena), freed with the
 * statement. Operators own their run-time state and free it in `free`.
 */
#ifndef HS_SQL_PLAN_H
#define HS_SQL_PLAN_H

#include "../table/table.h"
#include "func.h"

typedef enum hs_sql_plan_kind {
  HS_SP_SCAN,    /* a table or registered relation */
  HS_SP_VALUES,  /* literal rows (VALUES, SELECT without FROM: one row, no columns) */
  HS_SP_FILTER,  /* rows of kid where pred is TRUE */
  HS_SP_PROJECT, /* exprs over kid's rows */
  HS_SP_AGG,     /* GROUP BY keys with aggregates; DISTINCT is an AGG with no aggregates */
  HS_SP_SORT,    /* ORDER BY; with limit >= 0 a top-N */
  HS_SP_LIMIT,   /* LIMIT / OFFSET */
  HS_SP_JOIN,    /* inner/left/right/full/semi/anti, hash or index nested loop or nested loop */
  HS_SP_UNION,   /* UNION ALL of kids (UNION = AGG over it) */
  HS_SP_WINDOW,  /* window functions appended to kid's columns */
  HS_SP_KNN,     /* index-backed vector top-k over a table (optimizer output) */
  HS_SP_SHARED,  /* a CTE or uncorrelated subquery result computed once and read by several */
  HS_SP_EXPLAIN, /* one TEXT column "plan" describing kids[0] (ANALYZE: after running it) */
} hs_sql_plan_kind;

typedef enum hs_sql_join_type {
  HS_SJ_INNER,
  HS_SJ_LEFT,
  HS_SJ_RIGHT,
  HS_SJ_FULL,
  HS_SJ_SEMI,           /* left rows with a match (EXISTS, IN); output: left columns */
  HS_SJ_ANTI,           /* left rows without a match (NOT EXISTS); output: left columns */
  HS_SJ_ANTI_NULLAWARE, /* NOT IN: no row if the right side has a NULL key */
  /* A semi / anti join with its inputs swapped so that the hash table is
   * built on the smaller side (optimize_order.c): RIGHT rows with / without
   * a match; output: right columns only. */
  HS_SJ_RSEMI,
  HS_SJ_RANTI
} hs_sql_join_type;

typedef enum hs_sql_join_method {
  HS_SJM_HASH,     /* build a hash table on the right, probe with the left */
  HS_SJM_INDEX_NL, /* per left key, the right table's scalar index gives matching rows */
  HS_SJM_NL        /* nested loop (no equality keys) */
} hs_sql_join_method;

/* A relation a SCAN reads: a table folder, or in-memory chunks that the
 * session owns (registered Arrow data, converted once). Column types and
 * names are the table's (bind time) or the chunks'. */
typedef struct hs_sql_rel {
  const char *name;
  const char *uri;            /* table folder, or NULL for in-memory chunks */
  const hs_sql_chunk *chunks; /* in-memory (session-owned) */
  size_t n_chunks;
  int32_t n_cols;
  const hs_sql_type *types;
  const char *const *col_names;
  /* The last n_hidden columns are read by name only, not expanded by *:
   * a v3 table's row lineage (_row_id, _last_updated_sequence_number). */
  int32_t n_hidden;
  /* The table handle the columns were read from (a table relation found
   * for this statement; else NULL): the statement opens each FROM item's
   * table once. The optimizer borrows it (hs_sql_rel_peek); the first
   * operator reading the table takes it (hs_sql_rel_open, which opens a
   * handle of its own for any later one); one nobody took is freed with
   * the plan context, which lists it in `opened`. */
  hs_table *table;
  struct hs_sql_rel *next_opened;
  /* Where a handle on this table goes when its user is done (the
   * session's idle handles, refreshed by the next statement); NULL: freed. */
  void (*give_back)(void *owner, hs_table *t);
  void *owner;
} hs_sql_rel;

typedef struct hs_sql_sortkey {
  hs_sql_expr *expr;
  bool desc;
  bool nulls_first; /* PostgreSQL default: NULLS LAST for ASC, FIRST for DESC */
} hs_sql_sortkey;

typedef struct hs_sql_aggcall {
  hs_sql_agg_match m;
  hs_sql_expr **args; /* over the AGG's input */
  int32_t n_args;
  bool distinct;       /* count(DISTINCT x) etc. */
  hs_sql_expr *filter; /* FILTER (WHERE ...) (may be NULL) */
} hs_sql_aggcall;

typedef enum hs_sql_winfn {
  HS_SW_ROW_NUMBER,
  HS_SW_RANK,
  HS_SW_DENSE_RANK,
  HS_SW_AGG, /* an aggregate over the frame */
  /* Ranking-like: the partition's size and peer groups (int8 / float8). */
  HS_SW_NTILE,        /* ntile(agg.args[0] buckets) */
  HS_SW_PERCENT_RANK, /* (rank - 1) / (partition rows - 1), 0 for one row */
  HS_SW_CUME_DIST,    /* rows up to the current peer group's end / partition rows */
  /* Value functions: agg.args[0] at another row of the partition; the
   * result type is agg.m.ret. */
  HS_SW_LAG,         /* args[1] (default 1) rows before; else args[2] (default NULL) */
  HS_SW_LEAD,        /* args[1] rows after; else args[2] */
  HS_SW_FIRST_VALUE, /* the frame's first row */
  HS_SW_LAST_VALUE,  /* the frame's last row (the peer group's end with ORDER BY) */
  HS_SW_NTH_VALUE    /* the frame's args[1]-th row, NULL past the frame */
} hs_sql_winfn;

typedef struct hs_sql_wincall {
  hs_sql_winfn fn;
  hs_sql_aggcall agg; /* HS_SW_AGG */
  hs_sql_expr **partition;
  int32_t n_partition;
  hs_sql_sortkey *order;
  int32_t n_order;
  /* Frame: PostgreSQL's default (RANGE UNBOUNDED PRECEDING .. CURRENT ROW
   * with ORDER BY, the whole partition without). `whole` forces the latter. */
  bool whole;
} hs_sql_wincall;

typedef struct hs_sql_plan hs_sql_plan;
struct hs_sql_plan {
  hs_sql_plan_kind kind;
  int32_t pos; /* where the node starts in the SQL text (errors, EXPLAIN) */
  /* Output columns. */
  int32_t n_cols;
  hs_sql_type *types;
  const char **names;
  hs_sql_plan *kids[2]; /* UNION: kids[] is `many` */
  hs_sql_plan **many;
  int32_t n_many;
  double est_rows; /* optimizer's estimate (-1 unknown) */

  struct { /* SCAN and KNN */
    hs_sql_rel *rel;
    int64_t snapshot_id;  /* -1: current */
    const char **columns; /* the table's columns read, in output order */
    int32_t n_columns;
    char *filter;  /* pushed-down filter in the filter language (NULL: none) */
    int64_t limit; /* pushed-down limit (-1: none) */
  } scan;
  struct {               /* VALUES */
    hs_sql_expr ***rows; /* rows[r][c] constant expressions */
    int64_t n_rows;
  } values;
  hs_sql_expr *pred; /* FILTER; JOIN residual condition (may be NULL) */
  struct {           /* PROJECT */
    hs_sql_expr **exprs;
  } project;
  struct { /* AGG: output = keys then aggregates */
    hs_sql_expr **keys;
    int32_t n_keys;
    hs_sql_aggcall *aggs;
    int32_t n_aggs;
  } agg;
  struct { /* SORT */
    hs_sql_sortkey *keys;
    int32_t n_keys;
  } sort;
  int64_t limit;  /* SORT (top-N), LIMIT: -1 none */
  int64_t offset; /* SORT, LIMIT */
  struct {        /* JOIN: output = left columns then right (SEMI/ANTI: left only) */
    hs_sql_join_type type;
    hs_sql_join_method method;
    hs_sql_expr **left_keys;  /* over the left input */
    hs_sql_expr **right_keys; /* over the right input */
    int32_t n_keys;
    const char *index_column; /* INDEX_NL: the right table's indexed key column */
  } join;
  struct { /* WINDOW: output = kid's columns then one per call */
    hs_sql_wincall *calls;
    int32_t n_calls;
  } window;
  struct {              /* KNN: output = scan.columns then "distance" if `with_distance` */
    const char *column; /* vector column */
    float *query;
    int32_t dim;
    const char *metric; /* "l2", "ip", "cosine", "l1" */
    int64_t k;
    bool with_distance;
  } knn;
  struct {      /* SHARED */
    int32_t id; /* index into the statement's shared results */
  } shared;
  struct { /* EXPLAIN */
    bool analyze;
  } explain;
};

/* Statement-wide planning state. */
typedef struct hs_sql_plan_ctx {
  hs_arena arena;
  const char *sql; /* the statement text (for positions) */
  void *json;      /* the parse tree (json_t) the plan's names point into; freed with the arena */
  hs_sql_rel *opened; /* relations whose `table` the context frees (if not taken) */
  /* The plan depends on more than the text, the parameter types and the
   * tables' schemas and indexes (a subquery run while binding, a LIMIT $1,
   * a ref resolved to a snapshot): the plan cache must not keep it. */
  bool no_cache;
  /* A run of a cached plan (plan_cache.c): its nodes are a copy in `arena`,
   * the rest (expressions, names, the parse tree) is the cached template's,
   * which `base_release(base)` lets go when this context is freed. */
  void *base;
  void (*base_release)(void *base);
} hs_sql_plan_ctx;

/* Free a plan context and everything it owns (accepts NULL). */
void hs_sql_plan_ctx_free(hs_sql_plan_ctx *ctx);

/* A handle on table relation `rel` that the caller owns (hs_table_free):
 * the statement's own handle if no operator took it yet, else a new open. */
hs_status hs_sql_rel_open(const hs_sql_rel *rel, hs_table **out, hs_error *err);
/* Done with a handle from hs_sql_rel_open (accepts NULL): back to the
 * session's idle handles, or freed. */
void hs_sql_rel_close(const hs_sql_rel *rel, hs_table *t);
/* The statement's handle on `rel`, borrowed (NULL once an operator took
 * it, or for in-memory data): for planning, before operators run. */
hs_table *hs_sql_rel_peek(const hs_sql_rel *rel);

/* A new node in ctx->arena with n_cols output columns allocated. */
hs_sql_plan *hs_sql_plan_new(hs_sql_plan_ctx *ctx, hs_sql_plan_kind kind, int32_t n_cols);

/* ------------------------------------------------------------ execution */

typedef struct hs_sql_exec hs_sql_exec; /* one running statement (exec.c) */
typedef struct hs_sql_op hs_sql_op;

/* Per-operator counters for EXPLAIN ANALYZE. */
typedef struct hs_sql_opstats {
  int64_t rows;   /* rows emitted */
  int64_t calls;  /* next() calls */
  int64_t ns;     /* time inside next(), children included */
  char note[160]; /* what the operator did, e.g. "index on category: 1,204 candidates" */
} hs_sql_opstats;

struct hs_sql_op {
  const hs_sql_plan *plan;
  hs_sql_exec *x;
  hs_sql_op *kids[2];
  hs_sql_op **many; /* UNION */
  int32_t n_many;
  /* Produce the next chunk of plan->n_cols columns into *out (zeroed);
   * out->n == 0 means the end (then keep returning that). */
  hs_status (*next)(hs_sql_op *op, hs_sql_chunk *out, hs_error *err);
  void (*free)(hs_sql_op *op); /* frees state (not kids) */
  void *state;
  hs_sql_opstats stats;
};

/* The evaluation context of the running statement (params, cancel flag). */
const hs_sql_evalctx *hs_sql_exec_evalctx(const hs_sql_exec *x);
/* Is the statement an EXPLAIN ANALYZE (only then do operators time their
 * next() calls and write their notes: a clock read per call and an
 * snprintf per operator are a visible share of a ~40 us statement)? */
bool hs_sql_exec_analyzing(const hs_sql_exec *x);
/* Memory accounting against the statement's limit: reserve `bytes` (may
 * be negative to give back); HS_ERR_NOMEM "query memory limit of N bytes
 * exceeded in <what>; raise it with SET memory_limit = '8GB'" past it. */
hs_status hs_sql_exec_reserve(hs_sql_exec *x, int64_t bytes, const char *what, hs_error *err);
/* Non-zero once the statement is cancelled (check between chunks). */
bool hs_sql_exec_cancelled(const hs_sql_exec *x, hs_error *err);
/* The session setting `name` ("hnsw.ef_search", ...) or NULL. */
const char *hs_sql_exec_setting(const hs_sql_exec *x, const char *name);
/* Materialized result `id` of a SHARED node (computed on first use). */
hs_status hs_sql_exec_shared(hs_sql_exec *x, int32_t id, const hs_sql_chunk **chunks,
                             size_t *n_chunks, hs_error *err);

/* Operator constructors, one per kind (each in its own file): make *out
 * for `p` (kids already built by exec.c and passed in). */
typedef hs_status (*hs_sql_op_open_fn)(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op,
                                       hs_error *err);
hs_status hs_sql_op_scan_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err);
hs_status hs_sql_op_values_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err);
hs_status hs_sql_op_filter_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err);
hs_status hs_sql_op_project_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op,
                                 hs_error *err);
hs_status hs_sql_op_agg_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err);
hs_status hs_sql_op_sort_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err);
hs_status hs_sql_op_limit_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err);
hs_status hs_sql_op_join_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err);
hs_status hs_sql_op_union_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err);
hs_status hs_sql_op_window_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err);
hs_status hs_sql_op_knn_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err);
/* Is the vector search's float32 distance for `metric` (a KNN node's),
 * widened, the operators' double value exactly (ip, l1)? Then a KNN that
 * reads the distance needs no vector column for it (optimize.c's pruning). */
bool hs_sql_knn_search_distance_exact(const char *metric);
hs_status hs_sql_op_shared_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err);

/* Pull every chunk of `op` (used by blocking operators and SHARED). */
hs_status hs_sql_op_drain(hs_sql_op *op, hs_sql_chunk **chunks, size_t *n_chunks, hs_error *err);
/* Call op->next with timing and row counting (operators call their kids
 * through this, never kid->next directly). */
hs_status hs_sql_op_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err);

#endif /* HS_SQL_PLAN_H */
