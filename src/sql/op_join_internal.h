/*
 * op_join_internal.h — the join operator's state, shared by op_join.c (hash
 * join, nested loop, output), op_join_index.c (index nested loop) and
 * op_join_par.c (probes on pipeline workers). Private to those files.
 */
#ifndef HS_SQL_OP_JOIN_INTERNAL_H
#define HS_SQL_OP_JOIN_INTERNAL_H

#include "plan.h"

/* Rows per output chunk (and candidate pairs per residual evaluation). */
#define JOIN_CHUNK_ROWS 8192
/* Row ids are 32-bit in the hash table (0 ends a chain). */
#define JOIN_BUILD_ROWS_MAX ((int64_t)UINT32_MAX - 1)
/* Values per index lookup (the filter language takes 100,000 per IN list). */
#define JOIN_INDEX_KEYS_PER_SCAN 32768
/* Left rows an index nested loop takes at most (else it hashes). */
#define JOIN_INDEX_LEFT_MAX 100000

typedef enum key_kind { KEY_INT, KEY_BOOL, KEY_F64, KEY_STR, KEY_NUM, KEY_GENERIC } key_kind;

typedef struct keydesc {
  key_kind kind;
  int lwidth, rwidth;     /* KEY_INT: bytes per value on each side (4 or 8) */
  hs_sql_i128 lmul, rmul; /* KEY_NUM: factors bringing both sides to one scale */
  hs_sql_tid lid, rid;    /* type ids (messages) */
} keydesc;

/* A build row's chain link and a 32-bit tag of its hash (one load). */
typedef struct join_link {
  uint32_t next; /* next row + 1 of the chain, 0 = end */
  uint32_t tag;
} join_link;

/* The build side: rows, keys, hash table. */
typedef struct join_build {
  hs_sql_chunk rows;
  hs_sql_vec *keys; /* n_keys */
  int64_t n;
  uint32_t *head;  /* mask + 1 buckets: first row + 1 of the chain, 0 = empty */
  join_link *link; /* n */
  uint64_t mask;
  uint8_t *matched;  /* RIGHT/FULL: n */
  uint8_t *null_key; /* n: some key is NULL (or the right-only condition fails) */
  int64_t *pass;     /* NL with a right-only condition: the rows passing it */
  int64_t n_pass;
  bool has_null_key; /* some row has a NULL key */
  int64_t reserved;  /* bytes reserved with hs_sql_exec_reserve */
} join_build;

/* The current left chunk. */
typedef struct join_probe {
  bool active;
  hs_sql_chunk rows;
  hs_sql_vec *keys; /* n_keys */
  uint64_t *hash;
  uint32_t *first; /* HASH: head of row i's bucket (0 for NULL keys) */
  uint8_t *null_key;
  uint8_t *matched;
  int64_t i;   /* next row to pair */
  int64_t j;   /* HASH: chain position of row i (-1: not started); NL: next build row */
  int64_t e;   /* post-pairs cursor */
  int64_t cap; /* rows the per-row arrays hold */
  int64_t reserved;
} join_probe;

enum { PH_BUILD, PH_PROBE, PH_FINAL, PH_DONE };

typedef struct join_state {
  hs_sql_exec *x;
  const hs_sql_plan *p;
  hs_sql_join_type type;
  hs_sql_join_method method;
  int32_t nl, nr, n_keys;
  keydesc *kd;
  const hs_sql_expr *pred;
  bool *pred_cols; /* nl + nr: which joined columns pred reads */
  /* The condition's conjuncts over one side only, evaluated once per row of
   * that side instead of per pair (columns of their side; may be NULL);
   * `pred` keeps the rest. */
  const hs_sql_expr *lpred, *rpred;
  hs_arena ar;     /* their copies */
  bool out_right;  /* output has right columns (not SEMI/ANTI) */
  bool build_only; /* RSEMI/RANTI: output is the build rows (right columns) only */
  bool first_only; /* SEMI/ANTI without residual: the first equal key decides */
  bool na_nl;      /* NOT IN with a condition: nested loop, keys compared per pair */
  join_build b;
  join_probe pr;
  int64_t *cl, *cr, *sel; /* JOIN_CHUNK_ROWS each */
  int64_t nc;
  int phase;
  int64_t fe; /* PH_FINAL cursor */
  /* INDEX_NL */
  int32_t ix_key;        /* the key the right table's index answers */
  const char *ix_column; /* its column name */
  hs_table *table;
  hs_sql_chunk *pend; /* left chunks read ahead while deciding, replayed first */
  size_t n_pend, pend_pos;
  int64_t pend_reserved;
  int64_t ix_left_max; /* left rows above which hashing the right side wins */
  int64_t ix_snapshot; /* every lookup reads this snapshot (-1: the table has none) */
  int64_t ix_scans, ix_keys, ix_rows, ix_files_read, ix_files_indexed;
  bool ix_fallback;   /* INDEX_NL planned but not possible: hashing instead */
  bool ix_gave_up;    /* INDEX_NL planned, but the left side was too large for it */
  bool ix_unstatable; /* INDEX_NL given up: a key the filter language cannot state */
  int64_t build_rows_total;
  size_t build_key_width; /* bytes per row of the first build key (prefetch; 0: none) */
} join_state;

/* op_join.c */
hs_status hs_sql_join_oom(hs_error *err, const char *what);
hs_status hs_sql_join_check_cancel(join_state *st, hs_error *err);
/* A zeroed array of n entries of `width` bytes (NULL on overflow or OOM). */
void *hs_sql_join_alloc(int64_t n, size_t width);
/* Bytes a vector holds (data, validity, string bytes), for accounting. */
int64_t hs_sql_join_vec_bytes(const hs_sql_vec *v);
/* Make the build side from chunks[0..n_chunks) (released here, array
 * included, on every return). */
hs_status hs_sql_join_build(join_state *st, hs_sql_chunk *chunks, size_t n_chunks, hs_error *err);

/* Parallel probes (op_join_par.c, for pipe.c). */
typedef hs_status (*hs_sql_join_emit)(void *ctx, hs_sql_chunk *out, hs_error *err);
/* Run the build phase now if it has not run (the serial order: a join
 * builds before it pulls its left side). */
hs_status hs_sql_join_build_phase(hs_sql_op *op, hs_error *err);
/* After the build: can no row come out (empty build side of an inner or
 * semi join, a NULL under NOT IN)? Then the left side is never pulled. */
bool hs_sql_join_done(const hs_sql_op *op);
/* Probe with one left chunk (moved in) on st's probe state and pair
 * buffers, emitting every output chunk it gives in the serial order. */
hs_status hs_sql_join_probe_one(join_state *st, hs_sql_chunk *in, hs_sql_join_emit to, void *ctx,
                                hs_error *err);
/* Free st's probe state (its arrays and reservation). */
void hs_sql_join_probe_release(join_state *st);

/* op_join_index.c */
/* Can this join run as an index nested loop? Sets ix_key / ix_column. */
bool hs_sql_join_index_ok(join_state *st);
/* Read the left side ahead and choose lookups or hashing (st->method). */
hs_status hs_sql_join_index_decide(join_state *st, hs_sql_op *op, hs_error *err);
/* The right table's rows for the current left chunk's keys as the build
 * side; *cannot when a key cannot be stated (then nothing is built). */
hs_status hs_sql_join_index_build(join_state *st, bool *cannot, hs_error *err);

#endif /* HS_SQL_OP_JOIN_INTERNAL_H */
