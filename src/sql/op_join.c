/*
 * op_join.c — the JOIN operator (HS_SP_JOIN): hash join, nested loop and
 * index nested loop, for every join type (inner, left, right, full, semi,
 * anti and NOT IN's null-aware anti).
 *
 * One engine runs all three methods. A "build" side (the right input, all
 * of it for HASH and NL; for INDEX_NL the right table's rows whose indexed
 * key is one of the current left chunk's keys) is held as one chunk with
 * its key vectors and, for hashing, a chained hash table over its row ids
 * (head[] per bucket, a link per row holding the next row of the chain
 * and a 32-bit tag of the row's hash so that most non-matching chain
 * entries are skipped without comparing keys; row ids are row + 1, 0 ends
 * a chain). Probing fetches buckets, links and keys of rows ahead while it
 * compares the current one: a large build side is all cache misses. The left input streams
 * through: per left chunk its keys are evaluated and hashed once, then
 * candidate pairs (left row, build row) with equal keys are collected at
 * most JOIN_CHUNK_ROWS at a time; the residual predicate (over the left
 * columns followed by the right ones) filters them, and the survivors are
 * what "matched" means for every join type. The cursor (left row, chain
 * position) survives between calls, so one left row with many matches
 * spreads over several output chunks.
 *
 * After a left chunk's pairs: LEFT/FULL emit its unmatched rows with NULL
 * right columns, SEMI its matched rows, ANTI its unmatched ones (each left
 * row at most once, in input order). After the whole left input:
 * RIGHT/FULL emit the build rows no pair matched, with NULL left columns.
 *
 * Keys: NULL never matches (SQL "="). Both sides' keys have one type (the
 * binder casts them); integer keys of different widths and numeric keys
 * of different scales are compared by value all the same. Floats follow
 * PostgreSQL's "=": -0 = 0 and NaN = NaN.
 *
 * NOT IN (HS_SJ_ANTI_NULLAWARE): a left row is kept when no right row is
 * equal to it or possibly equal (equal in every key where both are
 * non-NULL): so with one key, a NULL on the right removes every row, and a
 * NULL left key is kept only when the right side is empty. With a
 * condition (a correlated NOT IN) only the right rows passing it count,
 * which takes a nested loop over every pair.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ------------------------------------------------------------- helpers */

static hs_status oom(hs_error *err, const char *what) {
  return hs_error_set(err, HS_ERR_NOMEM, "out of memory in join (%s)", what);
}

static hs_status check_cancel(join_state *st, hs_error *err) {
  if (!hs_sql_exec_cancelled(st->x, err)) return HS_OK;
  if (err != NULL && err->status != HS_OK) return err->status;
  return hs_error_set(err, HS_ERR_INVALID_ARG, "query cancelled");
}

static void *alloc_array(int64_t n, size_t width) {
  size_t bytes;
  if (n < 0 || !hs_mul_size((size_t)n, width, &bytes)) return NULL;
  return hs_calloc(bytes == 0 ? 1 : bytes, 1);
}

/* A zeroed array for the hash table, on huge pages where it is large:
 * probes touch it at random, so 4 KB pages would make TLB misses too. */
static void *alloc_table(int64_t n, size_t width) {
  size_t bytes;
  if (n < 0 || !hs_mul_size((size_t)n, width, &bytes)) return NULL;
  if (bytes == 0) bytes = 1;
  void *p = hs_malloc(bytes);
  if (p == NULL) return NULL;
  hs_mem_advise_huge(p, bytes);
  memset(p, 0, bytes);
  return p;
}

static int64_t vec_bytes(const hs_sql_vec *v) {
  int64_t bytes = v->n * (int64_t)hs_sql_vec_width(v->type) + (v->valid != NULL ? v->n : 0);
  if (hs_sql_type_is_string(v->type.id) && v->data != NULL) {
    const hs_sql_str *s = (const hs_sql_str *)v->data;
    for (int64_t i = 0; i < v->n; i++) bytes += s[i].len;
  }
  return bytes;
}

static inline uint64_t fmix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

static inline uint64_t mix_in(uint64_t h, uint64_t x) {
  return fmix64((h ^ x) * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull);
}

static uint64_t bytes_hash(const char *p, uint32_t n, uint64_t h) {
  h ^= (uint64_t)n * 0x9E3779B97F4A7C15ull;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    memcpy(&w, p, n);
    h = (h ^ w) * 0x94d049bb133111ebull;
    h ^= h >> 29;
  }
  return fmix64(h);
}

static inline int64_t int_at(const void *d, int w, int64_t i) {
  return w == 4 ? (int64_t)((const int32_t *)d)[i] : ((const int64_t *)d)[i];
}

static inline uint64_t f64_key(double v) {
  if (v == 0) return 0; /* -0 = 0 */
  if (isnan(v)) return 0x7ff8000000000000ull;
  uint64_t u;
  memcpy(&u, &v, 8);
  return u;
}

/* A numeric brought to the common scale; false on overflow (then it
 * equals nothing on the other side, whose values fit 38 digits there). */
static inline bool num_at(const hs_sql_vec *v, int64_t i, hs_sql_i128 mul, hs_sql_i128 *out) {
  hs_sql_i128 d = ((const hs_sql_i128 *)v->data)[i];
  if (mul == 1) {
    *out = d;
    return true;
  }
  return !__builtin_mul_overflow(d, mul, out);
}

static bool int_like(hs_sql_tid id, int *width) {
  switch (id) {
  case HS_SQL_INT32:
  case HS_SQL_DATE: *width = 4; return true;
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: *width = 8; return true;
  default: return false;
  }
}

static hs_sql_i128 pow10_i128(int e) {
  hs_sql_i128 r = 1;
  for (int k = 0; k < e; k++) r *= 10;
  return r;
}

/* Hash rows [0, n) of the keys (h[] seeded here) and flag NULL keys. */
static void hash_keys(const join_state *st, const hs_sql_vec *keys, bool left, int64_t n,
                      uint64_t *h, uint8_t *null_key) {
  for (int64_t i = 0; i < n; i++) h[i] = 0x2545F4914F6CDD1Dull;
  memset(null_key, 0, (size_t)n);
  for (int32_t k = 0; k < st->n_keys; k++) {
    const keydesc *kd = &st->kd[k];
    const hs_sql_vec *v = &keys[k];
    if (v->type.id == HS_SQL_NULLTYPE) {
      memset(null_key, 1, (size_t)n);
      continue;
    }
    if (v->valid != NULL)
      for (int64_t i = 0; i < n; i++) null_key[i] |= (uint8_t)!v->valid[i];
    switch (kd->kind) {
    case KEY_INT: {
      int w = left ? kd->lwidth : kd->rwidth;
      if (w == 4) {
        const int32_t *d = (const int32_t *)v->data;
        for (int64_t i = 0; i < n; i++) h[i] = mix_in(h[i], (uint64_t)(int64_t)d[i]);
      } else {
        const int64_t *d = (const int64_t *)v->data;
        for (int64_t i = 0; i < n; i++) h[i] = mix_in(h[i], (uint64_t)d[i]);
      }
      break;
    }
    case KEY_BOOL: {
      const uint8_t *d = (const uint8_t *)v->data;
      for (int64_t i = 0; i < n; i++) h[i] = mix_in(h[i], d[i] != 0);
      break;
    }
    case KEY_F64: {
      const double *d = (const double *)v->data;
      for (int64_t i = 0; i < n; i++) h[i] = mix_in(h[i], f64_key(d[i]));
      break;
    }
    case KEY_STR: {
      const hs_sql_str *d = (const hs_sql_str *)v->data;
      for (int64_t i = 0; i < n; i++) h[i] = bytes_hash(d[i].ptr, d[i].len, h[i]);
      break;
    }
    case KEY_NUM: {
      hs_sql_i128 mul = left ? kd->lmul : kd->rmul;
      for (int64_t i = 0; i < n; i++) {
        hs_sql_i128 d;
        if (!num_at(v, i, mul, &d)) d = ((const hs_sql_i128 *)v->data)[i];
        unsigned __int128 u = (unsigned __int128)d;
        h[i] = mix_in(mix_in(h[i], (uint64_t)u), (uint64_t)(u >> 64));
      }
      break;
    }
    case KEY_GENERIC:
      for (int64_t i = 0; i < n; i++) h[i] = hs_sql_vec_hash(v, i, h[i]);
      break;
    }
  }
}

/* Are the (non-NULL) keys of left row i and build row j equal? */
static inline bool keys_eq(const keydesc *kds, int32_t n_keys, const hs_sql_vec *lk, int64_t i,
                           const hs_sql_vec *rk, int64_t j) {
  for (int32_t k = 0; k < n_keys; k++) {
    const keydesc *kd = &kds[k];
    const hs_sql_vec *a = &lk[k], *b = &rk[k];
    switch (kd->kind) {
    case KEY_INT:
      if (int_at(a->data, kd->lwidth, i) != int_at(b->data, kd->rwidth, j)) return false;
      break;
    case KEY_BOOL:
      if ((((const uint8_t *)a->data)[i] != 0) != (((const uint8_t *)b->data)[j] != 0))
        return false;
      break;
    case KEY_F64: {
      double x = ((const double *)a->data)[i], y = ((const double *)b->data)[j];
      if (!(x == y || (isnan(x) && isnan(y)))) return false;
      break;
    }
    case KEY_STR: {
      hs_sql_str x = ((const hs_sql_str *)a->data)[i], y = ((const hs_sql_str *)b->data)[j];
      if (x.len != y.len || (x.len > 0 && memcmp(x.ptr, y.ptr, x.len) != 0)) return false;
      break;
    }
    case KEY_NUM: {
      hs_sql_i128 x, y;
      if (!num_at(a, i, kd->lmul, &x) || !num_at(b, j, kd->rmul, &y) || x != y) return false;
      break;
    }
    case KEY_GENERIC:
      if (hs_sql_vec_cmp(a, i, b, j) != 0) return false;
      break;
    }
  }
  return true;
}

/* NOT IN: could left row i equal build row j (equal wherever both keys
 * are non-NULL)? */
static bool keys_maybe_eq(const join_state *st, int64_t i, int64_t j) {
  for (int32_t k = 0; k < st->n_keys; k++) {
    const hs_sql_vec *a = &st->pr.keys[k], *b = &st->b.keys[k];
    if (!hs_sql_vec_valid(a, i) || !hs_sql_vec_valid(b, j)) continue;
    if (!keys_eq(&st->kd[k], 1, &a[0], i, &b[0], j)) return false;
  }
  return true;
}

/* ------------------------------------------------------- build side */

static void build_release(join_state *st) {
  join_build *b = &st->b;
  hs_sql_chunk_release(&b->rows);
  if (b->keys != NULL)
    for (int32_t k = 0; k < st->n_keys; k++) hs_sql_vec_release(&b->keys[k]);
  hs_free(b->keys);
  hs_free(b->head);
  hs_free(b->link);
  hs_free(b->matched);
  hs_free(b->null_key);
  hs_free(b->pass);
  if (b->reserved != 0) hs_sql_exec_reserve(st->x, -b->reserved, "join", NULL);
  memset(b, 0, sizeof *b);
}

/* fail[i] |= 1 where `e` (over `rows`) is not TRUE. */
static hs_status side_fail(join_state *st, const hs_sql_expr *e, const hs_sql_chunk *rows,
                           uint8_t *fail, hs_error *err) {
  hs_sql_vec v = {0};
  hs_status s = hs_sql_eval(e, rows, hs_sql_exec_evalctx(st->x), &v, err);
  if (s != HS_OK) return s;
  const uint8_t *d = v.data, *valid = v.valid;
  if (v.type.id != HS_SQL_BOOL || d == NULL)
    memset(fail, 1, (size_t)rows->n);
  else
    for (int64_t i = 0; i < rows->n; i++)
      fail[i] |= (uint8_t) !(d[i] && (valid == NULL || valid[i]));
  hs_sql_vec_release(&v);
  return HS_OK;
}

/* Make the build side from chunks[0..n_chunks) (released here, array
 * included, on every return). */
static hs_status build_from_chunks(join_state *st, hs_sql_chunk *chunks, size_t n_chunks,
                                   hs_error *err) {
  join_build *b = &st->b;
  hs_status s = HS_OK;
  int64_t n = 0;
  size_t n_live = 0;
  for (size_t c = 0; c < n_chunks; c++) {
    n += chunks[c].n;
    if (chunks[c].n > 0) n_live++;
  }
  hs_sql_vec *parts = NULL;
  if (n > JOIN_BUILD_ROWS_MAX) {
    s = hs_error_set(err, HS_ERR_UNSUPPORTED,
                     "join: the build side has %lld rows (at most %lld are supported)",
                     (long long)n, (long long)JOIN_BUILD_ROWS_MAX);
    goto done;
  }
  b->n = n;
  s = hs_sql_chunk_init(&b->rows, st->nr, n, err);
  if (s != HS_OK) goto done;
  if (n > 0) {
    parts = alloc_array((int64_t)n_live, sizeof(hs_sql_vec));
    if (parts == NULL) {
      s = oom(err, "build");
      goto done;
    }
    for (int32_t c = 0; c < st->nr; c++) {
      if (n_live == 1) {
        for (size_t k = 0; k < n_chunks; k++)
          if (chunks[k].n > 0) s = hs_sql_vec_share(&b->rows.cols[c], &chunks[k].cols[c], err);
      } else {
        size_t m = 0;
        for (size_t k = 0; k < n_chunks; k++)
          if (chunks[k].n > 0) parts[m++] = chunks[k].cols[c];
        s = hs_sql_vec_concat(&b->rows.cols[c], parts, m, err);
      }
      if (s != HS_OK) goto done;
      /* Drop the parts' column now to keep the peak near one copy. */
      for (size_t k = 0; k < n_chunks; k++)
        if (chunks[k].n > 0) hs_sql_vec_release(&chunks[k].cols[c]);
    }
  }
  int64_t bytes = 0;
  for (int32_t c = 0; c < st->nr && n > 0; c++) bytes += vec_bytes(&b->rows.cols[c]);
  if (st->n_keys > 0 && n > 0) {
    uint64_t buckets = 1;
    while (buckets < (uint64_t)n * 2) buckets <<= 1;
    b->mask = buckets - 1;
    bytes += (int64_t)(buckets * 4 + (uint64_t)n * 9);
  }
  if (st->type == HS_SJ_RIGHT || st->type == HS_SJ_FULL) bytes += n;
  s = hs_sql_exec_reserve(st->x, bytes, "hash join", err);
  if (s != HS_OK) goto done;
  b->reserved = bytes;
  if (st->type == HS_SJ_RIGHT || st->type == HS_SJ_FULL) {
    b->matched = alloc_array(n, 1);
    if (b->matched == NULL) {
      s = oom(err, "build");
      goto done;
    }
  }
  if (st->n_keys == 0 && st->rpred != NULL && n > 0) { /* NL: the rows passing rpred */
    uint8_t *fail = alloc_array(n, 1);
    b->pass = alloc_array(n, 8);
    if (fail == NULL || b->pass == NULL) {
      hs_free(fail);
      s = oom(err, "build");
      goto done;
    }
    s = side_fail(st, st->rpred, &b->rows, fail, err);
    for (int64_t j = 0; j < n && s == HS_OK; j++)
      if (!fail[j]) b->pass[b->n_pass++] = j;
    hs_free(fail);
    if (s != HS_OK) goto done;
  }
  if (st->n_keys == 0 || n == 0) goto done;

  const hs_sql_evalctx *ctx = hs_sql_exec_evalctx(st->x);
  b->keys = alloc_array(st->n_keys, sizeof(hs_sql_vec));
  if (b->keys == NULL) {
    s = oom(err, "build");
    goto done;
  }
  for (int32_t k = 0; k < st->n_keys; k++) {
    s = hs_sql_eval(st->p->join.right_keys[k], &b->rows, ctx, &b->keys[k], err);
    if (s != HS_OK) goto done;
  }
  uint64_t *h = alloc_array(n, 8);
  b->head = alloc_table((int64_t)b->mask + 1, 4);
  b->link = alloc_table(n, sizeof(join_link));
  b->null_key = alloc_array(n, 1);
  if (h == NULL || b->head == NULL || b->link == NULL || b->null_key == NULL) {
    hs_free(h);
    s = oom(err, "hash table");
    goto done;
  }
  hash_keys(st, b->keys, false, n, h, b->null_key);
  for (int64_t j = 0; j < n && !b->has_null_key; j++) b->has_null_key = b->null_key[j] != 0;
  /* Rows failing the right-only condition never match: not in the table. */
  if (st->rpred != NULL && (s = side_fail(st, st->rpred, &b->rows, b->null_key, err)) != HS_OK) {
    hs_free(h);
    goto done;
  }
  /* Insert last row first so that chains list rows in input order. */
  for (int64_t j = n - 1; j >= 0; j--) {
    b->link[j].tag = (uint32_t)(h[j] >> 32);
    if (b->null_key[j]) continue;
    uint64_t bucket = h[j] & b->mask;
    b->link[j].next = b->head[bucket];
    b->head[bucket] = (uint32_t)(j + 1);
  }
  hs_free(h);
done:
  hs_free(parts);
  for (size_t c = 0; c < n_chunks; c++) hs_sql_chunk_release(&chunks[c]);
  hs_free(chunks);
  if (s == HS_OK) st->build_rows_total += n;
  return s;
}

/* -------------------------------------------------------- probe side */

/* Done with the current left chunk; its per-row arrays stay for the next
 * one unless `all` (allocating them per chunk was page faults). */
static void probe_release(join_state *st, bool all) {
  join_probe *pr = &st->pr;
  hs_sql_chunk_release(&pr->rows);
  if (pr->keys != NULL)
    for (int32_t k = 0; k < st->n_keys; k++) hs_sql_vec_release(&pr->keys[k]);
  pr->active = false;
  if (!all) return;
  hs_free(pr->keys);
  hs_free(pr->hash);
  hs_free(pr->first);
  hs_free(pr->null_key);
  hs_free(pr->matched);
  if (pr->reserved != 0) hs_sql_exec_reserve(st->x, -pr->reserved, "join", NULL);
  memset(pr, 0, sizeof *pr);
}

/* Room for n rows in the per-row arrays of the left chunk. */
static hs_status probe_reserve(join_state *st, int64_t n, hs_error *err) {
  join_probe *pr = &st->pr;
  if (n <= pr->cap && pr->matched != NULL) return HS_OK;
  int64_t cap = n > 2 * pr->cap ? n : 2 * pr->cap;
  int64_t bytes = cap * (st->n_keys > 0 ? 14 : 1);
  hs_status s = hs_sql_exec_reserve(st->x, bytes - pr->reserved, "join", err);
  if (s != HS_OK) return s;
  pr->reserved = bytes;
  hs_free(pr->matched);
  hs_free(pr->hash);
  hs_free(pr->first);
  hs_free(pr->null_key);
  pr->hash = NULL;
  pr->first = NULL;
  pr->null_key = NULL;
  pr->matched = alloc_array(cap, 1);
  if (st->n_keys > 0 || st->lpred != NULL) pr->null_key = alloc_array(cap, 1);
  if (st->n_keys > 0) {
    pr->hash = alloc_array(cap, 8);
    pr->first = alloc_array(cap, 4);
    if (pr->keys == NULL) pr->keys = alloc_array(st->n_keys, sizeof(hs_sql_vec));
  }
  pr->cap = cap;
  if (pr->matched == NULL || ((st->n_keys > 0 || st->lpred != NULL) && pr->null_key == NULL) ||
      (st->n_keys > 0 && (pr->hash == NULL || pr->first == NULL || pr->keys == NULL))) {
    pr->cap = 0;
    return oom(err, "probe");
  }
  return HS_OK;
}

/* Left rows failing the left-only condition never match (flagged in
 * null_key, so that no chain is walked for them). NOT IN never has one. */
static hs_status probe_filter(join_state *st, hs_error *err) {
  join_probe *pr = &st->pr;
  if (st->lpred == NULL) return HS_OK;
  if (st->n_keys == 0) memset(pr->null_key, 0, (size_t)pr->rows.n);
  return side_fail(st, st->lpred, &pr->rows, pr->null_key, err);
}

/* Make `in` (moved) the current left chunk. */
static hs_status probe_start(join_state *st, hs_sql_chunk *in, hs_error *err) {
  join_probe *pr = &st->pr;
  hs_sql_chunk_move(&pr->rows, in);
  pr->active = true;
  pr->i = pr->e = 0;
  pr->j = -1;
  int64_t n = pr->rows.n;
  hs_status s = probe_reserve(st, n, err);
  if (s != HS_OK) return s;
  memset(pr->matched, 0, (size_t)n);
  if (st->n_keys == 0) return probe_filter(st, err);
  const hs_sql_evalctx *ctx = hs_sql_exec_evalctx(st->x);
  for (int32_t k = 0; k < st->n_keys; k++) {
    s = hs_sql_eval(st->p->join.left_keys[k], &pr->rows, ctx, &pr->keys[k], err);
    if (s != HS_OK) return s;
  }
  hash_keys(st, pr->keys, true, n, pr->hash, pr->null_key);
  return probe_filter(st, err);
}

/* Collect candidate pairs of the current left chunk into cl/cr (up to
 * JOIN_CHUNK_ROWS), resuming at (pr->i, pr->j). */
static void fill_hash(join_state *st) {
  join_probe *pr = &st->pr;
  const join_build *b = &st->b;
  const int64_t n = pr->rows.n;
  if (b->head == NULL) { /* empty build side: nothing is equal */
    pr->i = n;
    return;
  }
  /* Rows ahead have their chain's first link and key fetched into cache
   * while this one is compared (the table is usually far larger than it). */
  const int64_t ahead = 16;
  const size_t kw = st->build_key_width;
  const char *kdata = (const char *)b->keys[0].data;
  while (pr->i < n) {
    const int64_t i = pr->i;
    if (i + ahead < n && pr->first[i + ahead] != 0) {
      uint32_t f = pr->first[i + ahead] - 1;
      __builtin_prefetch(&b->link[f]);
      if (kw != 0) __builtin_prefetch(kdata + (size_t)f * kw);
    }
    if (pr->j < 0) {
      if (st->first_only && pr->matched[i]) {
        pr->i++;
        continue;
      }
      pr->j = pr->first[i];
    }
    const uint32_t tag = (uint32_t)(pr->hash[i] >> 32);
    while (pr->j != 0) {
      if (st->nc == JOIN_CHUNK_ROWS) return;
      const int64_t j = pr->j - 1;
      pr->j = b->link[j].next;
      if (b->link[j].tag != tag || !keys_eq(st->kd, st->n_keys, pr->keys, i, b->keys, j)) continue;
      if (st->first_only) {
        pr->matched[i] = 1;
        pr->j = 0;
        break;
      }
      st->cl[st->nc] = i;
      st->cr[st->nc] = j;
      st->nc++;
    }
    pr->i++;
    pr->j = -1;
  }
}

/* The first chain link of every row of the current left chunk, fetched
 * with the buckets of rows ahead in flight. */
static hs_status probe_heads(join_state *st, hs_error *err) {
  join_probe *pr = &st->pr;
  const join_build *b = &st->b;
  if (st->n_keys == 0 || b->head == NULL) return HS_OK;
  const int64_t n = pr->rows.n, ahead = 16;
  const uint64_t *h = pr->hash;
  for (int64_t i = 0; i < n; i++) {
    if (i + ahead < n) __builtin_prefetch(&b->head[h[i + ahead] & b->mask]);
    pr->first[i] = pr->null_key[i] ? 0 : b->head[h[i] & b->mask];
  }
  return HS_OK;
}

static void fill_nl(join_state *st) {
  join_probe *pr = &st->pr;
  const int64_t n = pr->rows.n;
  const int64_t *pass = st->b.pass;
  const int64_t nb = st->rpred != NULL ? st->b.n_pass : st->b.n;
  if (nb == 0) {
    pr->i = n;
    return;
  }
  while (pr->i < n && st->nc < JOIN_CHUNK_ROWS) {
    const int64_t i = pr->i;
    if (st->lpred != NULL && pr->null_key[i]) {
      pr->i++;
      pr->j = -1;
      continue;
    }
    if (st->first_only) {
      pr->matched[i] = 1;
      pr->i++;
      continue;
    }
    if (pr->j < 0) pr->j = 0;
    int64_t take = nb - pr->j;
    if (take > JOIN_CHUNK_ROWS - st->nc) take = JOIN_CHUNK_ROWS - st->nc;
    for (int64_t t = 0; t < take; t++) {
      st->cl[st->nc + t] = i;
      st->cr[st->nc + t] = pass != NULL ? pass[pr->j + t] : pr->j + t;
    }
    st->nc += take;
    pr->j += take;
    if (pr->j >= nb) {
      pr->i++;
      pr->j = -1;
    }
  }
}

/* ------------------------------------------------------------ output */

static bool is_identity(const int64_t *sel, int64_t n, int64_t of) {
  return n == of && (n == 0 || sel[n - 1] == n - 1); /* sel strictly increasing */
}

/* Rows (lsel[k], rsel[k]) as an output chunk; a NULL lsel / rsel makes that
 * side's columns NULL. `left_increasing`: lsel is strictly increasing. */
static hs_status emit(join_state *st, const int64_t *lsel, bool left_increasing,
                      const int64_t *rsel, int64_t n, hs_sql_chunk *out, hs_error *err) {
  const hs_sql_plan *p = st->p;
  hs_status s = hs_sql_chunk_init(out, p->n_cols, n, err);
  for (int32_t c = 0; c < st->nl && s == HS_OK; c++) {
    if (lsel == NULL)
      s = hs_sql_vec_alloc(&out->cols[c], p->types[c], n, true, err);
    else if (left_increasing && is_identity(lsel, n, st->pr.rows.n))
      s = hs_sql_vec_share(&out->cols[c], &st->pr.rows.cols[c], err);
    else
      s = hs_sql_vec_take(&out->cols[c], &st->pr.rows.cols[c], lsel, n, err);
  }
  for (int32_t c = 0; st->out_right && c < st->nr && s == HS_OK; c++) {
    if (rsel == NULL)
      s = hs_sql_vec_alloc(&out->cols[st->nl + c], p->types[st->nl + c], n, true, err);
    else
      s = hs_sql_vec_take(&out->cols[st->nl + c], &st->b.rows.cols[c], rsel, n, err);
  }
  if (s != HS_OK) hs_sql_chunk_release(out);
  return s;
}

/* Apply the residual to the pairs in cl/cr, record matches and, for the
 * joins that output pairs, emit the survivors. */
static hs_status process_pairs(join_state *st, hs_sql_chunk *out, hs_error *err) {
  int64_t n = st->nc;
  st->nc = 0;
  if (n == 0) return HS_OK;
  hs_status s = HS_OK;
  if (st->pred != NULL) {
    hs_sql_chunk joined = {0};
    s = hs_sql_chunk_init(&joined, st->nl + st->nr, n, err);
    for (int32_t c = 0; c < st->nl + st->nr && s == HS_OK; c++) {
      if (!st->pred_cols[c]) continue;
      if (c < st->nl)
        s = hs_sql_vec_take(&joined.cols[c], &st->pr.rows.cols[c], st->cl, n, err);
      else
        s = hs_sql_vec_take(&joined.cols[c], &st->b.rows.cols[c - st->nl], st->cr, n, err);
    }
    int64_t ns = 0;
    if (s == HS_OK)
      s = hs_sql_eval_select(st->pred, &joined, hs_sql_exec_evalctx(st->x), st->sel, &ns, err);
    hs_sql_chunk_release(&joined);
    if (s != HS_OK) return s;
    for (int64_t k = 0; k < ns; k++) {
      st->cl[k] = st->cl[st->sel[k]];
      st->cr[k] = st->cr[st->sel[k]];
    }
    n = ns;
  }
  if (st->na_nl) {
    for (int64_t k = 0; k < n; k++)
      if (keys_maybe_eq(st, st->cl[k], st->cr[k])) st->pr.matched[st->cl[k]] = 1;
  } else if (st->pr.matched != NULL) {
    for (int64_t k = 0; k < n; k++) st->pr.matched[st->cl[k]] = 1;
  }
  if (st->b.matched != NULL)
    for (int64_t k = 0; k < n; k++) st->b.matched[st->cr[k]] = 1;
  if (st->out_right && n > 0) s = emit(st, st->cl, false, st->cr, n, out, err);
  return s;
}

/* NOT IN: is unmatched left row i kept? */
static bool nullaware_keep(const join_state *st, int64_t i) {
  const join_build *b = &st->b;
  if (b->n == 0) return true;
  if (st->n_keys == 1) return !st->pr.null_key[i] && !b->has_null_key;
  if (!st->pr.null_key[i] && !b->has_null_key) return true;
  for (int64_t j = 0; j < b->n; j++) {
    if (!st->pr.null_key[i] && !b->null_key[j]) continue; /* exactly compared already */
    if (keys_maybe_eq(st, i, j)) return false;
  }
  return true;
}

/* After the current left chunk's pairs: the left rows each join type emits
 * on their own, up to JOIN_CHUNK_ROWS per call; *out->n == 0 at the end. */
static hs_status emit_left_rows(join_state *st, hs_sql_chunk *out, hs_error *err) {
  join_probe *pr = &st->pr;
  const int64_t n = pr->rows.n;
  int64_t m = 0;
  while (pr->e < n && m < JOIN_CHUNK_ROWS) {
    int64_t i = pr->e++;
    bool keep;
    switch (st->type) {
    case HS_SJ_LEFT:
    case HS_SJ_FULL:
    case HS_SJ_ANTI: keep = !pr->matched[i]; break;
    case HS_SJ_SEMI: keep = pr->matched[i]; break;
    case HS_SJ_ANTI_NULLAWARE:
      keep = !pr->matched[i] && (st->na_nl || nullaware_keep(st, i));
      break;
    default: keep = false; break;
    }
    if (keep) st->cl[m++] = i;
  }
  if (m == 0) return HS_OK;
  return emit(st, st->cl, true, NULL, m, out, err);
}

static hs_status emit_unmatched_build(join_state *st, hs_sql_chunk *out, hs_error *err) {
  const join_build *b = &st->b;
  int64_t m = 0;
  while (st->fe < b->n && m < JOIN_CHUNK_ROWS) {
    int64_t j = st->fe++;
    if (!b->matched[j]) st->cr[m++] = j;
  }
  if (m == 0) return HS_OK;
  return emit(st, NULL, false, st->cr, m, out, err);
}

/* ------------------------------------------------- index nested loop */

/* The filter text of an index lookup; `ok` false once an append failed. */
typedef struct fbuf {
  hs_buf b;
  bool ok;  /* false: out of memory */
  bool bad; /* a value the filter language cannot state (a NUL in text, year past 9999) */
} fbuf;

static void put(fbuf *f, const void *p, size_t n) {
  if (f->ok && !hs_buf_append(&f->b, p, n)) f->ok = false;
}
static void putc_(fbuf *f, char c) {
  if (f->ok && !hs_buf_append_byte(&f->b, (uint8_t)c)) f->ok = false;
}
static void putf(fbuf *f, const char *fmt, ...) HS_PRINTF(2, 3);
static void putf(fbuf *f, const char *fmt, ...) {
  char tmp[96];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof tmp)
    f->ok = false;
  else
    put(f, tmp, (size_t)n);
}

/* `s` quoted with `q`, doubling any `q` inside (SQL identifiers and strings). */
static void put_quoted(fbuf *f, const char *s, size_t n, char q) {
  putc_(f, q);
  for (size_t k = 0; k < n; k++) {
    if (s[k] == q) putc_(f, q);
    putc_(f, s[k]);
  }
  putc_(f, q);
}

static void put_numeric(fbuf *f, hs_sql_i128 v, int scale) {
  char digits[48];
  int nd = 0;
  bool neg = v < 0;
  unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
  do {
    digits[nd++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u != 0);
  while (nd <= scale && nd < (int)sizeof digits) digits[nd++] = '0';
  if (neg) putc_(f, '-');
  for (int k = nd - 1; k >= 0; k--) {
    putc_(f, digits[k]);
    if (k == scale && scale > 0) putc_(f, '.');
  }
}

/* A date (days) or timestamp (microseconds, UTC) as a quoted ISO literal. */
static void put_time(fbuf *f, int64_t v, bool date_only) {
  int64_t days = v, rem = 0;
  if (!date_only) {
    days = v / 86400000000LL;
    rem = v % 86400000000LL;
    if (rem < 0) {
      rem += 86400000000LL;
      days--;
    }
  }
  int64_t y;
  int m, d;
  hs_civil_from_days(days, &y, &m, &d);
  if (y < 1 || y > 9999) f->bad = true;
  putf(f, "'%04lld-%02d-%02d", (long long)y, m, d);
  if (!date_only) {
    int64_t secs = rem / 1000000;
    putf(f, " %02d:%02d:%02d.%06dZ", (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60),
         (int)(rem % 1000000));
  }
  putc_(f, '\'');
}

/* Key types an IN list of the filter language states exactly. */
static bool index_key_type_ok(hs_sql_tid id) {
  switch (id) {
  case HS_SQL_BOOL:
  case HS_SQL_INT32:
  case HS_SQL_INT64:
  case HS_SQL_NUMERIC:
  case HS_SQL_TEXT:
  case HS_SQL_DATE:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: return true;
  default: return false;
  }
}

static void put_value(fbuf *f, const hs_sql_vec *v, int64_t i) {
  switch (v->type.id) {
  case HS_SQL_BOOL: putf(f, "%s", ((const uint8_t *)v->data)[i] ? "true" : "false"); break;
  case HS_SQL_INT32: putf(f, "%d", ((const int32_t *)v->data)[i]); break;
  case HS_SQL_INT64: putf(f, "%lld", (long long)((const int64_t *)v->data)[i]); break;
  case HS_SQL_NUMERIC: put_numeric(f, ((const hs_sql_i128 *)v->data)[i], v->type.b); break;
  case HS_SQL_TEXT: {
    hs_sql_str s = ((const hs_sql_str *)v->data)[i];
    if (s.len > 0 && memchr(s.ptr, '\0', s.len) != NULL) f->bad = true;
    put_quoted(f, s.ptr, s.len, '\'');
    break;
  }
  case HS_SQL_DATE: put_time(f, ((const int32_t *)v->data)[i], true); break;
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: put_time(f, ((const int64_t *)v->data)[i], false); break;
  default: f->bad = true; break;
  }
}

static _Thread_local const hs_sql_vec *sort_vec;

static int cmp_rows(const void *a, const void *b) {
  return hs_sql_vec_cmp(sort_vec, *(const int64_t *)a, sort_vec, *(const int64_t *)b);
}

/* Read the right table's rows whose index column is one of the current
 * left chunk's keys (the right SCAN's own columns, filter and snapshot
 * kept) and make them the build side. */
static hs_status index_build(join_state *st, bool *cannot, hs_error *err) {
  const hs_sql_plan *scan = st->p->kids[1];
  const hs_sql_vec *kv = &st->pr.keys[st->ix_key];
  const int64_t n = st->pr.rows.n;
  hs_status s = HS_OK;
  fbuf f;
  hs_buf_init(&f.b);
  size_t n_chunks = 0, cap_chunks = 0;
  hs_sql_chunk *chunks = NULL;
  int64_t *rows = alloc_array(n, 8);
  if (rows == NULL) return oom(err, "index lookup");
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++)
    if (hs_sql_vec_valid(kv, i)) rows[m++] = i;
  sort_vec = kv;
  qsort(rows, (size_t)m, sizeof *rows, cmp_rows);
  int64_t u = 0; /* distinct */
  for (int64_t k = 0; k < m; k++)
    if (u == 0 || hs_sql_vec_cmp(kv, rows[u - 1], kv, rows[k]) != 0) rows[u++] = rows[k];
  if (u > 0 && st->table == NULL) s = hs_table_open(scan->scan.rel->uri, &st->table, err);

  for (int64_t k0 = 0; k0 < u && s == HS_OK; k0 += JOIN_INDEX_KEYS_PER_SCAN) {
    int64_t k1 = k0 + JOIN_INDEX_KEYS_PER_SCAN < u ? k0 + JOIN_INDEX_KEYS_PER_SCAN : u;
    f.b.len = 0;
    f.ok = true;
    f.bad = false;
    if (scan->scan.filter != NULL && scan->scan.filter[0] != '\0') {
      put(&f, "(", 1);
      put(&f, scan->scan.filter, strlen(scan->scan.filter));
      put(&f, ") AND ", 6);
    }
    put_quoted(&f, st->ix_column, strlen(st->ix_column), '"');
    put(&f, " IN (", 5);
    for (int64_t k = k0; k < k1; k++) {
      if (k > k0) put(&f, ", ", 2);
      put_value(&f, kv, rows[k]);
    }
    put(&f, ")", 2); /* with the NUL */
    if (f.bad) {
      *cannot = true;
      break;
    }
    if (!f.ok) {
      s = oom(err, "index lookup");
      break;
    }
    hs_scan_options opts;
    hs_scan_options_init(&opts);
    opts.snapshot_id = st->ix_snapshot;
    opts.columns = scan->scan.n_columns > 0 ? (const char *const *)scan->scan.columns : NULL;
    opts.n_columns = (size_t)scan->scan.n_columns;
    opts.filter = (const char *)f.b.data;
    struct ArrowArrayStream stream = {0};
    s = hs_table_scan_query(st->table, &opts, &stream, err);
    if (s == HS_ERR_INVALID_ARG || s == HS_ERR_UNSUPPORTED) {
      /* the filter did not parse or bind: the keys go through a hash instead */
      if (err != NULL) memset(err, 0, sizeof *err);
      s = HS_OK;
      *cannot = true;
      break;
    }
    if (s != HS_OK) break;
    st->ix_scans++;
    st->ix_keys += k1 - k0;
    struct ArrowSchema schema = {0};
    int rc = stream.get_schema(&stream, &schema);
    while (rc == 0 && s == HS_OK) {
      struct ArrowArray batch = {0};
      rc = stream.get_next(&stream, &batch);
      if (rc != 0 || batch.release == NULL) break;
      if (n_chunks == cap_chunks) {
        size_t nc = cap_chunks ? cap_chunks * 2 : 8;
        hs_sql_chunk *g = hs_realloc(chunks, nc * sizeof *g);
        if (g == NULL) {
          batch.release(&batch);
          s = oom(err, "index lookup");
          break;
        }
        chunks = g;
        cap_chunks = nc;
      }
      memset(&chunks[n_chunks], 0, sizeof chunks[n_chunks]);
      s = hs_sql_chunk_from_arrow(&schema, &batch, NULL, 0, &chunks[n_chunks], err);
      if (s != HS_OK) break;
      st->ix_rows += chunks[n_chunks].n;
      n_chunks++;
    }
    if (rc != 0 && s == HS_OK) {
      const char *why = stream.get_last_error ? stream.get_last_error(&stream) : NULL;
      s = hs_error_set(err, hs_status_of_errno(rc), "index nested loop join: scan of %s: %s",
                       scan->scan.rel->name ? scan->scan.rel->name : "table",
                       why ? why : "read failed");
    }
    hs_scan_stats ss;
    hs_scan_index_stats is;
    if (hs_scan_stats_get(&stream, &ss, NULL) == HS_OK) st->ix_files_read += ss.files_read;
    if (hs_scan_index_stats_get(&stream, &is, NULL) == HS_OK)
      st->ix_files_indexed += is.files_indexed;
    if (schema.release) schema.release(&schema);
    if (stream.release) stream.release(&stream);
    if (s == HS_OK) s = check_cancel(st, err);
  }
  hs_free(rows);
  hs_buf_free(&f.b);
  if (s != HS_OK || *cannot) {
    for (size_t c = 0; c < n_chunks; c++) hs_sql_chunk_release(&chunks[c]);
    hs_free(chunks);
    return s;
  }
  return build_from_chunks(st, chunks, n_chunks, err);
}

/* Can this join run as an index nested loop? Sets ix_key / ix_column. */
static bool index_nl_ok(join_state *st) {
  const hs_sql_plan *p = st->p, *r = p->kids[1];
  if (p->join.index_column == NULL || r == NULL || r->kind != HS_SP_SCAN || r->scan.rel == NULL ||
      r->scan.rel->uri == NULL || r->scan.limit >= 0)
    return false;
  if (st->type != HS_SJ_INNER && st->type != HS_SJ_LEFT && st->type != HS_SJ_SEMI &&
      st->type != HS_SJ_ANTI)
    return false;
  for (int32_t k = 0; k < st->n_keys; k++) {
    const hs_sql_expr *e = p->join.right_keys[k];
    if (e->kind != HS_SX_COL || e->col < 0 || e->col >= r->n_cols) continue;
    const char *name = r->scan.n_columns > e->col && r->scan.columns != NULL
                           ? r->scan.columns[e->col]
                           : r->names[e->col];
    if (name == NULL || strcmp(name, p->join.index_column) != 0) continue;
    if (!index_key_type_ok(p->join.left_keys[k]->type.id) ||
        p->join.left_keys[k]->type.id != e->type.id)
      continue;
    st->ix_key = k;
    st->ix_column = name;
    return true;
  }
  return false;
}

/* ---------------------------------------------------------- operator */

/* The next left chunk: those read ahead first, then the left input. */
static hs_status next_left(join_state *st, hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  if (st->pend_pos < st->n_pend) {
    hs_sql_chunk_move(out, &st->pend[st->pend_pos++]);
    return HS_OK;
  }
  return hs_sql_op_next(op->kids[0], out, err);
}

/* Live rows of the right table's snapshot (-1: unknown). */
static int64_t table_rows(hs_table *t, int64_t snapshot_id) {
  hs_table_snapshot_info *v = NULL;
  size_t n = 0;
  int64_t rows = -1;
  if (snapshot_id < 0) snapshot_id = hs_table_current_snapshot_id(t);
  if (snapshot_id < 0) return 0;
  if (hs_table_snapshots(t, &v, &n, NULL) != HS_OK) return -1;
  for (size_t i = 0; i < n; i++)
    if (v[i].snapshot_id == snapshot_id) rows = v[i].total_records;
  hs_free(v);
  return rows;
}

/* An index nested loop pays one filtered scan per JOIN_INDEX_KEYS_PER_SCAN
 * left keys; hashing pays a scan of the whole right table. Read the left
 * side ahead up to a bound (a quarter of the right table's rows, at most
 * JOIN_INDEX_LEFT_MAX): if it ends first, look its keys up through the
 * index as one chunk; else hash the right side and replay what was read. */
static hs_status index_decide(join_state *st, hs_sql_op *op, hs_error *err) {
  const hs_sql_plan *scan = st->p->kids[1];
  hs_status s = hs_table_open(scan->scan.rel->uri, &st->table, err);
  if (s != HS_OK) return s;
  st->ix_snapshot = scan->scan.snapshot_id >= 0 ? scan->scan.snapshot_id
                                                : hs_table_current_snapshot_id(st->table);
  int64_t right = table_rows(st->table, st->ix_snapshot);
  st->ix_left_max = right < 0 ? JOIN_INDEX_LEFT_MAX / 10 : right / 4;
  if (st->ix_left_max > JOIN_INDEX_LEFT_MAX) st->ix_left_max = JOIN_INDEX_LEFT_MAX;
  int64_t rows = 0;
  size_t cap = 0;
  bool ended = false;
  while (rows <= st->ix_left_max) {
    hs_sql_chunk in = {0};
    s = hs_sql_op_next(op->kids[0], &in, err);
    if (s != HS_OK) return s;
    if (in.n == 0) {
      hs_sql_chunk_release(&in);
      ended = true;
      break;
    }
    int64_t bytes = 0;
    for (int32_t c = 0; c < in.n_cols; c++) bytes += vec_bytes(&in.cols[c]);
    s = hs_sql_exec_reserve(st->x, bytes, "join", err);
    if (s == HS_OK) st->pend_reserved += bytes;
    if (s == HS_OK && st->n_pend == cap) {
      size_t nc = cap ? cap * 2 : 8;
      hs_sql_chunk *g = hs_realloc(st->pend, nc * sizeof *g);
      if (g == NULL)
        s = oom(err, "read ahead");
      else
        st->pend = g, cap = nc;
    }
    if (s != HS_OK) {
      hs_sql_chunk_release(&in);
      return s;
    }
    rows += in.n;
    hs_sql_chunk_move(&st->pend[st->n_pend++], &in);
  }
  if (!ended) {
    st->method = HS_SJM_HASH;
    st->ix_gave_up = true;
    return HS_OK;
  }
  if (st->n_pend > 1) { /* one chunk: its keys go to the index together */
    hs_sql_chunk all = {0};
    s = hs_sql_chunk_init(&all, st->nl, rows, err);
    hs_sql_vec *parts = s == HS_OK ? alloc_array((int64_t)st->n_pend, sizeof(hs_sql_vec)) : NULL;
    if (s == HS_OK && parts == NULL) s = oom(err, "read ahead");
    for (int32_t c = 0; c < st->nl && s == HS_OK; c++) {
      for (size_t k = 0; k < st->n_pend; k++) parts[k] = st->pend[k].cols[c];
      s = hs_sql_vec_concat(&all.cols[c], parts, st->n_pend, err);
    }
    hs_free(parts);
    if (s != HS_OK) {
      hs_sql_chunk_release(&all);
      return s;
    }
    for (size_t k = 0; k < st->n_pend; k++) hs_sql_chunk_release(&st->pend[k]);
    hs_sql_chunk_move(&st->pend[0], &all);
    st->n_pend = 1;
  }
  return HS_OK;
}

static void note_stats(hs_sql_op *op) {
  join_state *st = op->state;
  char *note = op->stats.note;
  size_t cap = sizeof op->stats.note;
  if (st->method == HS_SJM_INDEX_NL)
    snprintf(note, cap,
             "index on %s: %lld lookups of %lld keys, %lld rows fetched, %lld of %lld files "
             "answered by the index",
             st->ix_column, (long long)st->ix_scans, (long long)st->ix_keys, (long long)st->ix_rows,
             (long long)st->ix_files_indexed, (long long)st->ix_files_read);
  else if (st->ix_unstatable)
    snprintf(note, cap, "hash: %lld build rows (a key an index lookup cannot state)",
             (long long)st->build_rows_total);
  else if (st->ix_gave_up)
    snprintf(note, cap, "hash: %lld build rows (left side over %lld rows: no index lookups)",
             (long long)st->build_rows_total, (long long)st->ix_left_max);
  else
    snprintf(note, cap, "%s: %lld build rows%s", st->method == HS_SJM_HASH ? "hash" : "nested loop",
             (long long)st->build_rows_total,
             st->ix_fallback ? " (no usable index for an index nested loop)" : "");
}

static hs_status join_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  join_state *st = op->state;
  hs_status s = HS_OK;
  for (;;) {
    switch (st->phase) {
    case PH_BUILD: {
      st->phase = PH_PROBE;
      if (st->method == HS_SJM_INDEX_NL) {
        s = index_decide(st, op, err);
        if (s != HS_OK) return s;
        note_stats(op);
        if (st->method == HS_SJM_INDEX_NL) continue;
      }
      hs_sql_chunk *chunks = NULL;
      size_t n_chunks = 0;
      s = hs_sql_op_drain(op->kids[1], &chunks, &n_chunks, err);
      if (s != HS_OK) return s;
      s = build_from_chunks(st, chunks, n_chunks, err);
      if (s != HS_OK) return s;
      note_stats(op);
      /* Nothing can come out of the left side. */
      if (st->b.n == 0 &&
          (st->type == HS_SJ_INNER || st->type == HS_SJ_SEMI || st->type == HS_SJ_RIGHT))
        st->phase = PH_DONE;
      if (st->type == HS_SJ_ANTI_NULLAWARE && !st->na_nl && st->n_keys == 1 && st->b.has_null_key)
        st->phase = PH_DONE;
      continue;
    }
    case PH_PROBE: {
      join_probe *pr = &st->pr;
      if (!pr->active) {
        s = check_cancel(st, err);
        if (s != HS_OK) return s;
        hs_sql_chunk in = {0};
        s = next_left(st, op, &in, err);
        if (s != HS_OK) return s;
        if (in.n == 0) {
          hs_sql_chunk_release(&in);
          st->phase = PH_FINAL;
          continue;
        }
        s = probe_start(st, &in, err);
        if (s == HS_OK && st->method == HS_SJM_INDEX_NL) {
          bool cannot = false;
          build_release(st);
          s = index_build(st, &cannot, err);
          if (s == HS_OK && cannot) { /* hash the whole right side from now on */
            st->method = HS_SJM_HASH;
            st->ix_unstatable = true;
            build_release(st);
            hs_sql_chunk *chunks = NULL;
            size_t n_chunks = 0;
            s = hs_sql_op_drain(op->kids[1], &chunks, &n_chunks, err);
            if (s == HS_OK) s = build_from_chunks(st, chunks, n_chunks, err);
          }
          note_stats(op);
        }
        if (s == HS_OK) s = probe_heads(st, err);
        if (s != HS_OK) return s;
      }
      if (pr->i < pr->rows.n) {
        if (st->method == HS_SJM_NL)
          fill_nl(st);
        else
          fill_hash(st);
      }
      if (st->nc > 0) {
        s = process_pairs(st, out, err);
        if (s != HS_OK || out->n > 0) return s;
        continue;
      }
      if (pr->i < pr->rows.n) continue;
      if (st->type != HS_SJ_INNER && st->type != HS_SJ_RIGHT) {
        s = emit_left_rows(st, out, err);
        if (s != HS_OK || out->n > 0) return s;
      }
      probe_release(st, false);
      continue;
    }
    case PH_FINAL:
      if (st->b.matched != NULL) {
        s = emit_unmatched_build(st, out, err);
        if (s != HS_OK || out->n > 0) return s;
      }
      st->phase = PH_DONE;
      continue;
    default: out->n = 0; return HS_OK;
    }
  }
}

static void join_free(hs_sql_op *op) {
  join_state *st = op->state;
  if (st == NULL) return;
  probe_release(st, true);
  build_release(st);
  hs_table_free(st->table);
  for (size_t c = st->pend_pos; c < st->n_pend; c++) hs_sql_chunk_release(&st->pend[c]);
  hs_free(st->pend);
  if (st->pend_reserved != 0) hs_sql_exec_reserve(st->x, -st->pend_reserved, "join", NULL);
  hs_free(st->kd);
  hs_free(st->pred_cols);
  hs_arena_reset(&st->ar);
  hs_free(st->cl);
  hs_free(st->cr);
  hs_free(st->sel);
  hs_free(st);
  op->state = NULL;
}

/* Which sides' columns `e` reads (1 left, 2 right) and 4 if it calls a
 * volatile function (then it stays per pair). */
static int sides_of(const hs_sql_expr *e, int32_t nl) {
  int m = 0;
  if (e->kind == HS_SX_COL) m |= e->col < nl ? 1 : 2;
  if (e->kind == HS_SX_FUNC && e->fn != NULL && e->fn->volatile_) m |= 4;
  for (int32_t a = 0; a < e->n_args; a++) m |= sides_of(e->args[a], nl);
  return m;
}

static int32_t count_conj(const hs_sql_expr *e) {
  if (e->kind != HS_SX_AND) return 1;
  int32_t n = 0;
  for (int32_t a = 0; a < e->n_args; a++) n += count_conj(e->args[a]);
  return n;
}

static void list_conj(const hs_sql_expr *e, const hs_sql_expr **v, int32_t *n) {
  if (e->kind != HS_SX_AND) {
    v[(*n)++] = e;
    return;
  }
  for (int32_t a = 0; a < e->n_args; a++) list_conj(e->args[a], v, n);
}

/* A copy of `e` with column references moved by `delta`. */
static hs_sql_expr *copy_shift(hs_arena *a, const hs_sql_expr *e, int32_t delta) {
  hs_sql_expr *c = hs_arena_memdup(a, e, sizeof *e);
  if (c == NULL) return NULL;
  if (c->kind == HS_SX_COL) c->col += delta;
  if (e->n_args > 0) {
    c->args = hs_arena_alloc(a, sizeof(hs_sql_expr *) * (size_t)e->n_args);
    if (c->args == NULL) return NULL;
    for (int32_t i = 0; i < e->n_args; i++)
      if ((c->args[i] = copy_shift(a, e->args[i], delta)) == NULL) return NULL;
  }
  return c;
}

/* AND of v[0..n) (n >= 1), each moved by delta; NULL on OOM. */
static const hs_sql_expr *and_of(hs_arena *a, const hs_sql_expr **v, int32_t n, int32_t delta) {
  if (n == 1) return delta == 0 ? v[0] : copy_shift(a, v[0], delta);
  hs_sql_expr *e = hs_arena_alloc(a, sizeof *e);
  if (e == NULL) return NULL;
  e->kind = HS_SX_AND;
  e->type = hs_sql_type_of(HS_SQL_BOOL);
  e->pos = v[0]->pos;
  e->args = hs_arena_alloc(a, sizeof(hs_sql_expr *) * (size_t)n);
  if (e->args == NULL) return NULL;
  e->n_args = n;
  for (int32_t i = 0; i < n; i++)
    if ((e->args[i] = delta == 0 ? (hs_sql_expr *)v[i] : copy_shift(a, v[i], delta)) == NULL)
      return NULL;
  return e;
}

/* Split the condition into its left-only and right-only conjuncts and the
 * rest (what needs both sides, or calls a volatile function). */
static hs_status split_pred(join_state *st, hs_error *err) {
  if (st->pred == NULL || st->type == HS_SJ_ANTI_NULLAWARE) return HS_OK;
  int32_t n = count_conj(st->pred), nl = 0, nr = 0, nm = 0, k = 0;
  const hs_sql_expr **v = hs_arena_alloc(&st->ar, sizeof(hs_sql_expr *) * (size_t)n * 4);
  if (v == NULL) return oom(err, "open");
  const hs_sql_expr **lv = v + n, **rv = v + 2 * n, **mv = v + 3 * n;
  list_conj(st->pred, v, &k);
  for (int32_t i = 0; i < k; i++) {
    int m = sides_of(v[i], st->nl);
    if (m == 1)
      lv[nl++] = v[i];
    else if (m == 2)
      rv[nr++] = v[i];
    else
      mv[nm++] = v[i];
  }
  if (nl > 0 && (st->lpred = and_of(&st->ar, lv, nl, 0)) == NULL) return oom(err, "open");
  if (nr > 0 && (st->rpred = and_of(&st->ar, rv, nr, -st->nl)) == NULL) return oom(err, "open");
  st->pred = nm > 0 ? and_of(&st->ar, mv, nm, 0) : NULL;
  if (nm > 0 && st->pred == NULL) return oom(err, "open");
  return HS_OK;
}

static bool mark_cols(const hs_sql_expr *e, bool *cols, int32_t n) {
  if (e == NULL) return true;
  if (e->kind == HS_SX_COL) {
    if (e->col < 0 || e->col >= n) return false;
    cols[e->col] = true;
  }
  for (int32_t a = 0; a < e->n_args; a++)
    if (!mark_cols(e->args[a], cols, n)) return false;
  return true;
}

static hs_status setup_keys(join_state *st, hs_error *err) {
  const hs_sql_plan *p = st->p;
  if (st->n_keys == 0) return HS_OK;
  st->kd = alloc_array(st->n_keys, sizeof(keydesc));
  if (st->kd == NULL) return oom(err, "open");
  for (int32_t k = 0; k < st->n_keys; k++) {
    hs_sql_type lt = p->join.left_keys[k]->type, rt = p->join.right_keys[k]->type;
    keydesc *kd = &st->kd[k];
    kd->lid = lt.id;
    kd->rid = rt.id;
    kd->lmul = kd->rmul = 1;
    int lw, rw;
    if (lt.id == HS_SQL_NULLTYPE || rt.id == HS_SQL_NULLTYPE) {
      kd->kind = KEY_GENERIC; /* every row NULL on that side: never compared */
    } else if (int_like(lt.id, &lw) && int_like(rt.id, &rw) &&
               (lt.id == rt.id || (hs_sql_type_is_int(lt.id) && hs_sql_type_is_int(rt.id)))) {
      kd->kind = KEY_INT;
      kd->lwidth = lw;
      kd->rwidth = rw;
    } else if (lt.id != rt.id) {
      char a[64], b[64];
      return hs_error_set(err, HS_ERR_INTERNAL, "join key %d compares %s with %s", (int)k + 1,
                          hs_sql_type_name(lt, a, sizeof a), hs_sql_type_name(rt, b, sizeof b));
    } else if (lt.id == HS_SQL_BOOL) {
      kd->kind = KEY_BOOL;
    } else if (lt.id == HS_SQL_FLOAT64) {
      kd->kind = KEY_F64;
    } else if (lt.id == HS_SQL_TEXT || lt.id == HS_SQL_BYTEA) {
      kd->kind = KEY_STR;
    } else if (lt.id == HS_SQL_NUMERIC && lt.b >= 0 && rt.b >= 0 && lt.b <= 38 && rt.b <= 38) {
      kd->kind = KEY_NUM;
      if (lt.b < rt.b) kd->lmul = pow10_i128(rt.b - lt.b);
      if (rt.b < lt.b) kd->rmul = pow10_i128(lt.b - rt.b);
    } else {
      kd->kind = KEY_GENERIC;
    }
  }
  switch (st->kd[0].kind) {
  case KEY_INT: st->build_key_width = (size_t)st->kd[0].rwidth; break;
  case KEY_BOOL: st->build_key_width = 1; break;
  case KEY_F64: st->build_key_width = 8; break;
  case KEY_STR: st->build_key_width = sizeof(hs_sql_str); break;
  case KEY_NUM: st->build_key_width = sizeof(hs_sql_i128); break;
  case KEY_GENERIC: st->build_key_width = 0; break;
  }
  return HS_OK;
}

hs_status hs_sql_op_join_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err) {
  if (p->kids[0] == NULL || p->kids[1] == NULL || op->kids[0] == NULL || op->kids[1] == NULL)
    return hs_error_set(err, HS_ERR_INTERNAL, "join without two inputs");
  join_state *st = hs_calloc(1, sizeof *st);
  if (st == NULL) return oom(err, "open");
  op->state = st;
  op->next = join_next;
  op->free = join_free;
  st->x = x;
  st->p = p;
  st->type = p->join.type;
  st->method = p->join.method;
  st->nl = p->kids[0]->n_cols;
  st->nr = p->kids[1]->n_cols;
  st->n_keys = p->join.n_keys;
  st->pred = p->pred;
  hs_arena_init(&st->ar);
  if (st->type == HS_SJ_ANTI_NULLAWARE && st->n_keys == 0) st->type = HS_SJ_ANTI;
  st->out_right = st->type == HS_SJ_INNER || st->type == HS_SJ_LEFT || st->type == HS_SJ_RIGHT ||
                  st->type == HS_SJ_FULL;
  hs_status s = HS_OK;
  int32_t want = st->out_right ? st->nl + st->nr : st->nl;
  if (p->n_cols != want) {
    s = hs_error_set(err, HS_ERR_INTERNAL, "join outputs %d columns, its inputs give %d",
                     (int)p->n_cols, (int)want);
    goto fail;
  }
  if (st->n_keys < 0 ||
      (st->n_keys > 0 && (p->join.left_keys == NULL || p->join.right_keys == NULL))) {
    s = hs_error_set(err, HS_ERR_INTERNAL, "join keys missing");
    goto fail;
  }
  /* A correlated NOT IN: a left row goes when some right row passing the
   * condition could equal it, NULL keys included; only a nested loop over
   * every pair sees them all. */
  st->na_nl = st->type == HS_SJ_ANTI_NULLAWARE && st->pred != NULL;
  s = setup_keys(st, err);
  if (s != HS_OK) goto fail;
  /* Equality keys make every method a hash join underneath; without keys
   * only the nested loop remains. */
  if (st->n_keys == 0) st->method = HS_SJM_NL;
  if (st->method == HS_SJM_NL && st->n_keys > 0) st->method = HS_SJM_HASH;
  if (st->na_nl) st->method = HS_SJM_NL;
  if (st->method == HS_SJM_INDEX_NL && !index_nl_ok(st)) {
    st->method = HS_SJM_HASH;
    st->ix_fallback = true;
  }
  st->pred_cols = hs_calloc((size_t)(st->nl + st->nr) + 1, 1);
  st->cl = alloc_array(JOIN_CHUNK_ROWS, 8);
  st->cr = alloc_array(JOIN_CHUNK_ROWS, 8);
  st->sel = alloc_array(JOIN_CHUNK_ROWS, 8);
  if (st->pred_cols == NULL || st->cl == NULL || st->cr == NULL || st->sel == NULL) {
    s = oom(err, "open");
    goto fail;
  }
  if (!mark_cols(st->pred, st->pred_cols, st->nl + st->nr)) {
    s = hs_error_set(err, HS_ERR_INTERNAL, "join condition reads a column past its inputs");
    goto fail;
  }
  s = split_pred(st, err);
  if (s != HS_OK) goto fail;
  memset(st->pred_cols, 0, (size_t)(st->nl + st->nr));
  mark_cols(st->pred, st->pred_cols, st->nl + st->nr); /* the rest only: fewer gathers */
  st->first_only = !st->out_right && st->pred == NULL;
  st->phase = PH_BUILD;
  note_stats(op);
  return HS_OK;
fail:
  join_free(op);
  op->next = NULL;
  op->free = NULL;
  return s;
}
