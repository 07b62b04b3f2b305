/*
 * op_join.c — the JOIN operator (HS_SP_JOIN): hash join, nested loop and
 * index nested loop, for every join type (inner, left, right, full, semi,
 * anti and NOT IN's null-aware anti).
 *
 * One engine runs all three methods (the index lookups themselves are in
 * op_join_index.c). A "build" side (the right input, all
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_join_internal.h"

/* ------------------------------------------------------------- helpers */

hs_status hs_sql_join_oom(hs_error *err, const char *what) {
  return hs_error_set(err, HS_ERR_NOMEM, "out of memory in join (%s)", what);
}

hs_status hs_sql_join_check_cancel(join_state *st, hs_error *err) {
  if (!hs_sql_exec_cancelled(st->x, err)) return HS_OK;
  if (err != NULL && err->status != HS_OK) return err->status;
  return hs_error_set(err, HS_ERR_INVALID_ARG, "query cancelled");
}

void *hs_sql_join_alloc(int64_t n, size_t width) {
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

int64_t hs_sql_join_vec_bytes(const hs_sql_vec *v) {
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
hs_status hs_sql_join_build(join_state *st, hs_sql_chunk *chunks, size_t n_chunks, hs_error *err) {
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
    parts = hs_sql_join_alloc((int64_t)n_live, sizeof(hs_sql_vec));
    if (parts == NULL) {
      s = hs_sql_join_oom(err, "build");
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
  for (int32_t c = 0; c < st->nr && n > 0; c++) bytes += hs_sql_join_vec_bytes(&b->rows.cols[c]);
  if (st->n_keys > 0 && n > 0) {
    uint64_t buckets = 1;
    while (buckets < (uint64_t)n * 2) buckets <<= 1;
    b->mask = buckets - 1;
    bytes += (int64_t)(buckets * 4 + (uint64_t)n * 9);
  }
  bool track = st->type == HS_SJ_RIGHT || st->type == HS_SJ_FULL || st->type == HS_SJ_RSEMI ||
               st->type == HS_SJ_RANTI;
  if (track) bytes += n;
  s = hs_sql_exec_reserve(st->x, bytes, "hash join", err);
  if (s != HS_OK) goto done;
  b->reserved = bytes;
  if (track) {
    b->matched = hs_sql_join_alloc(n, 1);
    if (b->matched == NULL) {
      s = hs_sql_join_oom(err, "build");
      goto done;
    }
  }
  if (st->n_keys == 0 && st->rpred != NULL && n > 0) { /* NL: the rows passing rpred */
    uint8_t *fail = hs_sql_join_alloc(n, 1);
    b->pass = hs_sql_join_alloc(n, 8);
    if (fail == NULL || b->pass == NULL) {
      hs_free(fail);
      s = hs_sql_join_oom(err, "build");
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
  b->keys = hs_sql_join_alloc(st->n_keys, sizeof(hs_sql_vec));
  if (b->keys == NULL) {
    s = hs_sql_join_oom(err, "build");
    goto done;
  }
  for (int32_t k = 0; k < st->n_keys; k++) {
    s = hs_sql_eval(st->p->join.right_keys[k], &b->rows, ctx, &b->keys[k], err);
    if (s != HS_OK) goto done;
  }
  uint64_t *h = hs_sql_join_alloc(n, 8);
  b->head = alloc_table((int64_t)b->mask + 1, 4);
  b->link = alloc_table(n, sizeof(join_link));
  b->null_key = hs_sql_join_alloc(n, 1);
  if (h == NULL || b->head == NULL || b->link == NULL || b->null_key == NULL) {
    hs_free(h);
    s = hs_sql_join_oom(err, "hash table");
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
  pr->matched = hs_sql_join_alloc(cap, 1);
  if (st->n_keys > 0 || st->lpred != NULL) pr->null_key = hs_sql_join_alloc(cap, 1);
  if (st->n_keys > 0) {
    pr->hash = hs_sql_join_alloc(cap, 8);
    pr->first = hs_sql_join_alloc(cap, 4);
    if (pr->keys == NULL) pr->keys = hs_sql_join_alloc(st->n_keys, sizeof(hs_sql_vec));
  }
  pr->cap = cap;
  if (pr->matched == NULL || ((st->n_keys > 0 || st->lpred != NULL) && pr->null_key == NULL) ||
      (st->n_keys > 0 && (pr->hash == NULL || pr->first == NULL || pr->keys == NULL))) {
    pr->cap = 0;
    return hs_sql_join_oom(err, "probe");
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
  int32_t roff = st->build_only ? 0 : st->nl; /* where the right columns go */
  for (int32_t c = 0; !st->build_only && c < st->nl && s == HS_OK; c++) {
    if (lsel == NULL)
      s = hs_sql_vec_alloc(&out->cols[c], p->types[c], n, true, err);
    else if (left_increasing && is_identity(lsel, n, st->pr.rows.n))
      s = hs_sql_vec_share(&out->cols[c], &st->pr.rows.cols[c], err);
    else
      s = hs_sql_vec_take(&out->cols[c], &st->pr.rows.cols[c], lsel, n, err);
  }
  for (int32_t c = 0; (st->out_right || st->build_only) && c < st->nr && s == HS_OK; c++) {
    if (rsel == NULL)
      s = hs_sql_vec_alloc(&out->cols[roff + c], p->types[roff + c], n, true, err);
    else
      s = hs_sql_vec_take(&out->cols[roff + c], &st->b.rows.cols[c], rsel, n, err);
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

/* After the left input: the build rows no pair matched (RIGHT, FULL,
 * RANTI), or those some pair matched (RSEMI). */
static hs_status emit_unmatched_build(join_state *st, hs_sql_chunk *out, hs_error *err) {
  const join_build *b = &st->b;
  int64_t m = 0;
  bool want = st->type == HS_SJ_RSEMI;
  while (st->fe < b->n && m < JOIN_CHUNK_ROWS) {
    int64_t j = st->fe++;
    if ((b->matched[j] != 0) == want) st->cr[m++] = j;
  }
  if (m == 0) return HS_OK;
  return emit(st, NULL, false, st->cr, m, out, err);
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

/* PH_BUILD: decide the index nested loop, or drain and hash the right
 * side; then PH_PROBE, or PH_DONE when no row can come out. */
static hs_status build_phase(hs_sql_op *op, join_state *st, hs_error *err) {
  hs_status s;
  st->phase = PH_PROBE;
  if (st->method == HS_SJM_INDEX_NL) {
    s = hs_sql_join_index_decide(st, op, err);
    if (s != HS_OK) return s;
    note_stats(op);
    if (st->method == HS_SJM_INDEX_NL) return HS_OK;
  }
  hs_sql_chunk *chunks = NULL;
  size_t n_chunks = 0;
  s = hs_sql_op_drain(op->kids[1], &chunks, &n_chunks, err);
  if (s != HS_OK) return s;
  s = hs_sql_join_build(st, chunks, n_chunks, err);
  if (s != HS_OK) return s;
  note_stats(op);
  /* Nothing can come out of the left side. */
  if (st->b.n == 0 && (st->type == HS_SJ_INNER || st->type == HS_SJ_SEMI ||
                       st->type == HS_SJ_RIGHT || st->build_only))
    st->phase = PH_DONE;
  if (st->type == HS_SJ_ANTI_NULLAWARE && !st->na_nl && st->n_keys == 1 && st->b.has_null_key)
    st->phase = PH_DONE;
  return HS_OK;
}

hs_status hs_sql_join_build_phase(hs_sql_op *op, hs_error *err) {
  join_state *st = op->state;
  return st->phase == PH_BUILD ? build_phase(op, st, err) : HS_OK;
}

bool hs_sql_join_done(const hs_sql_op *op) {
  const join_state *st = op->state;
  return st->phase == PH_DONE;
}

hs_status hs_sql_join_probe_one(join_state *st, hs_sql_chunk *in, hs_sql_join_emit to, void *ctx,
                                hs_error *err) {
  join_probe *pr = &st->pr;
  hs_status s = probe_start(st, in, err);
  if (s == HS_OK) s = probe_heads(st, err);
  while (s == HS_OK) {
    if (pr->i < pr->rows.n) {
      if (st->method == HS_SJM_NL)
        fill_nl(st);
      else
        fill_hash(st);
    }
    if (st->nc > 0) {
      hs_sql_chunk out = {0};
      s = process_pairs(st, &out, err);
      if (s == HS_OK && out.n > 0) s = to(ctx, &out, err);
      hs_sql_chunk_release(&out);
      continue;
    }
    if (pr->i < pr->rows.n) continue;
    while (s == HS_OK && st->type != HS_SJ_INNER && st->type != HS_SJ_RIGHT && !st->build_only) {
      hs_sql_chunk out = {0};
      s = emit_left_rows(st, &out, err);
      bool more = out.n > 0;
      if (s == HS_OK && more) s = to(ctx, &out, err);
      hs_sql_chunk_release(&out);
      if (!more) break;
    }
    break;
  }
  probe_release(st, false);
  return s;
}

void hs_sql_join_probe_release(join_state *st) {
  probe_release(st, true);
}

static hs_status join_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  join_state *st = op->state;
  hs_status s = HS_OK;
  for (;;) {
    switch (st->phase) {
    case PH_BUILD: {
      s = build_phase(op, st, err);
      if (s != HS_OK) return s;
      continue;
    }
    case PH_PROBE: {
      join_probe *pr = &st->pr;
      if (!pr->active) {
        s = hs_sql_join_check_cancel(st, err);
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
          s = hs_sql_join_index_build(st, &cannot, err);
          if (s == HS_OK && cannot) { /* hash the whole right side from now on */
            st->method = HS_SJM_HASH;
            st->ix_unstatable = true;
            build_release(st);
            hs_sql_chunk *chunks = NULL;
            size_t n_chunks = 0;
            s = hs_sql_op_drain(op->kids[1], &chunks, &n_chunks, err);
            if (s == HS_OK) s = hs_sql_join_build(st, chunks, n_chunks, err);
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
      if (st->type != HS_SJ_INNER && st->type != HS_SJ_RIGHT && !st->build_only) {
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
  hs_sql_rel_close(st->p->kids[1]->scan.rel, st->table);
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
/* AND of v[0..n) (n >= 1), each moved by delta; NULL on OOM. */
static const hs_sql_expr *and_of(hs_arena *a, const hs_sql_expr **v, int32_t n, int32_t delta) {
  if (n == 1) return delta == 0 ? v[0] : hs_sql_expr_remap(a, v[0], NULL, delta);
  hs_sql_expr *e = hs_arena_alloc(a, sizeof *e);
  if (e == NULL) return NULL;
  e->kind = HS_SX_AND;
  e->type = hs_sql_type_of(HS_SQL_BOOL);
  e->pos = v[0]->pos;
  e->args = hs_arena_alloc(a, sizeof(hs_sql_expr *) * (size_t)n);
  if (e->args == NULL) return NULL;
  e->n_args = n;
  for (int32_t i = 0; i < n; i++)
    if ((e->args[i] = delta == 0 ? (hs_sql_expr *)v[i] : hs_sql_expr_remap(a, v[i], NULL, delta)) ==
        NULL)
      return NULL;
  return e;
}

/* Split the condition into its left-only and right-only conjuncts and the
 * rest (what needs both sides, or calls a volatile function). */
static hs_status split_pred(join_state *st, hs_error *err) {
  if (st->pred == NULL || st->type == HS_SJ_ANTI_NULLAWARE) return HS_OK;
  int32_t n = count_conj(st->pred), nl = 0, nr = 0, nm = 0, k = 0;
  const hs_sql_expr **v = hs_arena_alloc(&st->ar, sizeof(hs_sql_expr *) * (size_t)n * 4);
  if (v == NULL) return hs_sql_join_oom(err, "open");
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
  if (nl > 0 && (st->lpred = and_of(&st->ar, lv, nl, 0)) == NULL)
    return hs_sql_join_oom(err, "open");
  if (nr > 0 && (st->rpred = and_of(&st->ar, rv, nr, -st->nl)) == NULL)
    return hs_sql_join_oom(err, "open");
  st->pred = nm > 0 ? and_of(&st->ar, mv, nm, 0) : NULL;
  if (nm > 0 && st->pred == NULL) return hs_sql_join_oom(err, "open");
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
  st->kd = hs_sql_join_alloc(st->n_keys, sizeof(keydesc));
  if (st->kd == NULL) return hs_sql_join_oom(err, "open");
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
  if (st == NULL) return hs_sql_join_oom(err, "open");
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
  st->build_only = st->type == HS_SJ_RSEMI || st->type == HS_SJ_RANTI;
  if (st->build_only && st->n_keys == 0) {
    s = hs_error_set(err, HS_ERR_INTERNAL, "a swapped semi/anti join needs keys");
    goto fail;
  }
  int32_t want = st->out_right ? st->nl + st->nr : st->build_only ? st->nr : st->nl;
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
  if (st->method == HS_SJM_INDEX_NL && !hs_sql_join_index_ok(st)) {
    st->method = HS_SJM_HASH;
    st->ix_fallback = true;
  }
  st->pred_cols = hs_calloc((size_t)(st->nl + st->nr) + 1, 1);
  st->cl = hs_sql_join_alloc(JOIN_CHUNK_ROWS, 8);
  st->cr = hs_sql_join_alloc(JOIN_CHUNK_ROWS, 8);
  st->sel = hs_sql_join_alloc(JOIN_CHUNK_ROWS, 8);
  if (st->pred_cols == NULL || st->cl == NULL || st->cr == NULL || st->sel == NULL) {
    s = hs_sql_join_oom(err, "open");
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
  /* (a probe row of a swapped semi join marks every build row it matches) */
  st->first_only = !st->out_right && !st->build_only && st->pred == NULL;
  st->phase = PH_BUILD;
  note_stats(op);
  return HS_OK;
fail:
  join_free(op);
  op->next = NULL;
  op->free = NULL;
  return s;
}
