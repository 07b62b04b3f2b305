/*
 * op_sort.c — ORDER BY: a full sort, or with a LIMIT a top-N that keeps
 * only limit + offset rows, and the stable row ordering the window
 * operator shares (op_sort.h).
 *
 * The sort drains its input, appending the evaluated sort keys to each
 * chunk as extra columns, then orders row indices with a stable merge
 * sort and emits the rows in chunks of HS_SORT_CHUNK through
 * hs_sql_chunk_take (strings keep pointing into the input's blobs).
 * Top-N compacts the buffered rows to the best limit + offset whenever
 * they pass twice that (and at least HS_SORT_CHUNK), so memory stays
 * O(limit + offset + chunk). The node applies its own OFFSET and LIMIT:
 * it emits rows [offset, offset + limit) of the order.
 *
 * Order: NULLs by the key's nulls_first (independent of DESC), NaN above
 * every number and equal to NaN, strings by bytes; ties keep input order.
 */
#include <math.h>
#include <string.h>

#include "op_sort.h"

#define HS_SORT_CHUNK 4096

/* ------------------------------------------------------------- ordering */

static inline int cmp_i128(hs_sql_i128 x, hs_sql_i128 y) {
  return x < y ? -1 : x > y ? 1 : 0;
}

static inline int cmp_f64(double x, double y) {
  if (x < y) return -1;
  if (x > y) return 1;
  if (x == y) return 0;
  bool xn = isnan(x), yn = isnan(y);
  return xn == yn ? 0 : xn ? 1 : -1;
}

static inline int cmp_bytes(hs_sql_str x, hs_sql_str y) {
  uint32_t m = x.len < y.len ? x.len : y.len;
  int c = m ? memcmp(x.ptr, y.ptr, m) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  return x.len < y.len ? -1 : x.len > y.len ? 1 : 0;
}

/* Non-null row a of v and row b of w (same type). The common types inline; the rest through vec.c.
 */
static inline int cmp_value(const hs_sql_vec *v, int64_t a, const hs_sql_vec *w, int64_t b) {
  switch (v->type.id) {
  case HS_SQL_BOOL: {
    const uint8_t *d = v->data, *e = w->data;
    return (int)d[a] - (int)e[b];
  }
  case HS_SQL_INT32:
  case HS_SQL_DATE: {
    const int32_t *d = v->data, *e = w->data;
    return d[a] < e[b] ? -1 : d[a] > e[b] ? 1 : 0;
  }
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: {
    const int64_t *d = v->data, *e = w->data;
    return d[a] < e[b] ? -1 : d[a] > e[b] ? 1 : 0;
  }
  case HS_SQL_FLOAT64: {
    const double *d = v->data, *e = w->data;
    return cmp_f64(d[a], e[b]);
  }
  case HS_SQL_NUMERIC: {
    const hs_sql_i128 *d = v->data, *e = w->data;
    return cmp_i128(d[a], e[b]);
  }
  case HS_SQL_TEXT:
  case HS_SQL_BYTEA: {
    const hs_sql_str *d = v->data, *e = w->data;
    return cmp_bytes(d[a], e[b]);
  }
  case HS_SQL_NULLTYPE: return 0;
  default: return hs_sql_vec_cmp(v, a, w, b);
  }
}

int hs_sql_sort_cmp(const hs_sql_sortcol *cols, int32_t n_cols, int64_t a, int64_t b) {
  for (int32_t k = 0; k < n_cols; k++) {
    const hs_sql_vec *v = cols[k].v;
    bool va = hs_sql_vec_valid(v, a), vb = hs_sql_vec_valid(v, b);
    if (!va || !vb) {
      if (va == vb) continue;
      int r = va ? -1 : 1; /* NULL after values... */
      return cols[k].nulls_first ? -r : r;
    }
    int r = cmp_value(v, a, v, b);
    if (r != 0) return cols[k].desc ? -r : r;
  }
  return 0;
}

/* The first key normalized to 64 bits (DuckDB-style key normalization):
 * an order-preserving image of the value, so most comparisons are one
 * integer compare. `exact`: equal images mean equal values (integers,
 * dates, timestamps, doubles, booleans); otherwise (strings by their first
 * 8 bytes, numerics by their high 64 bits) equal images fall back to the
 * full comparison. */
typedef struct sort_ent {
  uint64_t k;
  int64_t row;
} sort_ent;

typedef struct ent_ctx {
  const hs_sql_sortcol *cols; /* compared on k ties */
  int32_t n_cols;
} ent_ctx;

static inline int ent_cmp(const ent_ctx *c, const sort_ent *a, const sort_ent *b) {
  if (a->k != b->k) return a->k < b->k ? -1 : 1;
  return c->n_cols > 0 ? hs_sql_sort_cmp(c->cols, c->n_cols, a->row, b->row) : 0;
}

static void merge_ent(const ent_ctx *c, sort_ent *a, sort_ent *tmp, int64_t n) {
  if (n <= 16) {
    for (int64_t i = 1; i < n; i++) {
      sort_ent x = a[i];
      int64_t j = i;
      while (j > 0 && ent_cmp(c, &a[j - 1], &x) > 0) {
        a[j] = a[j - 1];
        j--;
      }
      a[j] = x;
    }
    return;
  }
  int64_t h = n / 2;
  merge_ent(c, a, tmp, h);
  merge_ent(c, a + h, tmp + h, n - h);
  if (ent_cmp(c, &a[h - 1], &a[h]) <= 0) return;
  memcpy(tmp, a, (size_t)n * sizeof *a);
  int64_t i = 0, j = h, o = 0;
  while (i < h && j < n) {
    if (ent_cmp(c, &tmp[j], &tmp[i]) < 0)
      a[o++] = tmp[j++];
    else
      a[o++] = tmp[i++];
  }
  while (i < h) a[o++] = tmp[i++];
  while (j < n) a[o++] = tmp[j++];
}

/* LSD radix sort of exact images (stable), skipping bytes all keys share. */
static void radix_ent(sort_ent *a, sort_ent *tmp, int64_t n) {
  static const int B = 8;
  int64_t(*cnt)[256] = hs_calloc(B, sizeof *cnt);
  if (cnt == NULL) {
    ent_ctx none = {NULL, 0};
    merge_ent(&none, a, tmp, n);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = a[i].k;
    for (int b = 0; b < B; b++) cnt[b][(k >> (8 * b)) & 255]++;
  }
  sort_ent *src = a, *dst = tmp;
  for (int b = 0; b < B; b++) {
    if (cnt[b][(a[0].k >> (8 * b)) & 255] == n) continue; /* one byte value: no move */
    int64_t pos[256], sum = 0;
    for (int d = 0; d < 256; d++) {
      pos[d] = sum;
      sum += cnt[b][d];
    }
    for (int64_t i = 0; i < n; i++) dst[pos[(src[i].k >> (8 * b)) & 255]++] = src[i];
    sort_ent *t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
  hs_free(cnt);
}

#define SIGN64 0x8000000000000000ull

static inline uint64_t norm_f64(double f) {
  if (f != f) return UINT64_MAX; /* NaN above everything */
  if (f == 0.0) f = 0.0;         /* -0.0 */
  uint64_t u;
  memcpy(&u, &f, sizeof u);
  return (u & SIGN64) ? ~u : u | SIGN64;
}

/* Bytes [off, off + 7) of s (zero padded) over the remaining length
 * clipped to 8: order-preserving among strings that share their first
 * `off` bytes; equal images with a clipped length under 8 are equal
 * strings, and with 8 need the next 7 bytes. */
static inline uint64_t norm_str(hs_sql_str s, uint32_t off) {
  uint64_t k = 0;
  uint32_t rem = s.len > off ? s.len - off : 0;
  uint32_t m = rem < 7 ? rem : 7;
  const uint8_t *p = (const uint8_t *)s.ptr + off;
  for (uint32_t i = 0; i < m; i++) k |= (uint64_t)p[i] << (56 - 8 * i);
  return k | (rem < 8 ? rem : 8);
}

/* What equal images mean. */
typedef enum norm_kind {
  NORM_EXACT,  /* equal values */
  NORM_DEEPER, /* equal so far: compare the next level of the same key */
  NORM_NONE    /* no image: order by full comparison */
} norm_kind;

/* Normalized images (level `level` of the key) of rows e[i].row, i < n,
 * of v (all non-null). */
static norm_kind normalize(const hs_sql_vec *v, sort_ent *e, int64_t n, int32_t level) {
  switch (v->type.id) {
  case HS_SQL_BOOL: {
    const uint8_t *d = v->data;
    for (int64_t i = 0; i < n; i++) e[i].k = d[e[i].row];
    return NORM_EXACT;
  }
  case HS_SQL_INT32:
  case HS_SQL_DATE: {
    const int32_t *d = v->data;
    for (int64_t i = 0; i < n; i++) e[i].k = (uint64_t)(int64_t)d[e[i].row] ^ SIGN64;
    return NORM_EXACT;
  }
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: {
    const int64_t *d = v->data;
    for (int64_t i = 0; i < n; i++) e[i].k = (uint64_t)d[e[i].row] ^ SIGN64;
    return NORM_EXACT;
  }
  case HS_SQL_FLOAT64: {
    const double *d = v->data;
    for (int64_t i = 0; i < n; i++) e[i].k = norm_f64(d[e[i].row]);
    return NORM_EXACT;
  }
  case HS_SQL_NUMERIC: { /* signed high half, then unsigned low half */
    const hs_sql_i128 *d = v->data;
    if (level == 0) {
      for (int64_t i = 0; i < n; i++) e[i].k = (uint64_t)(d[e[i].row] >> 64) ^ SIGN64;
      return NORM_DEEPER;
    }
    for (int64_t i = 0; i < n; i++) e[i].k = (uint64_t)d[e[i].row];
    return NORM_EXACT;
  }
  case HS_SQL_TEXT:
  case HS_SQL_BYTEA: {
    const hs_sql_str *d = v->data;
    uint32_t off = (uint32_t)level * 7;
    for (int64_t i = 0; i < n; i++) e[i].k = norm_str(d[e[i].row], off);
    return NORM_DEEPER;
  }
  default:
    for (int64_t i = 0; i < n; i++) e[i].k = 0;
    return NORM_NONE;
  }
}

/* Does a run of equal images at this level need the next level? */
static inline bool run_deeper(hs_sql_tid id, int32_t level, uint64_t k) {
  if (id == HS_SQL_NUMERIC) return level == 0;
  return (k & 0xff) == 8; /* strings: 8+ bytes remain */
}

typedef struct sorter {
  const hs_sql_sortcol *cols;
  int32_t nc;
  int64_t *perm;
  sort_ent *e, *tmp; /* n entries each, used at the same positions as perm */
  int64_t *scratch;
  int32_t *diff; /* optional: per position, the first key differing from the row before */
} sorter;

/* Sort perm[lo, hi) by keys d.. (rows here are equal on keys before d,
 * and on the levels of key d before `level`): key d's NULLs moved to
 * their end (stably), the rest by image; runs of equal images then
 * sorted by the key's next level or by the next key, recursively. The
 * value block and the NULL block sit at their final positions in perm, e
 * and tmp alike, so recursion into one never touches the other. */
static void sort_seg(const sorter *S, int32_t d, int64_t lo, int64_t hi, int32_t level) {
  if (hi - lo < 2 || d >= S->nc) return;
  const hs_sql_sortcol *c0 = &S->cols[d];
  const hs_sql_vec *v = c0->v;
  int64_t *perm = S->perm;
  sort_ent *e = S->e;
  int64_t nn = 0;
  bool has_nulls = level == 0 && (v->valid != NULL || v->type.id == HS_SQL_NULLTYPE);
  if (has_nulls)
    for (int64_t i = lo; i < hi; i++) nn += !hs_sql_vec_valid(v, perm[i]);
  int64_t nv = hi - lo - nn;
  int64_t vlo = c0->nulls_first ? lo + nn : lo, nlo = c0->nulls_first ? lo : lo + nv;
  int64_t iv = vlo, in = lo;
  for (int64_t i = lo; i < hi; i++) {
    int64_t r = perm[i];
    if (has_nulls && !hs_sql_vec_valid(v, r))
      S->scratch[in++] = r;
    else
      e[iv++].row = r;
  }
  if (S->diff != NULL && nn > 0 && nv > 0) S->diff[vlo > nlo ? vlo : nlo] = d;
  norm_kind kind = NORM_EXACT;
  if (nv > 1) {
    kind = normalize(v, e + vlo, nv, level);
    if (c0->desc)
      for (int64_t i = vlo; i < vlo + nv; i++) e[i].k = ~e[i].k;
    ent_ctx ctx = {S->cols + d, kind == NORM_NONE ? S->nc - d : 0};
    if (kind != NORM_NONE && nv >= 256)
      radix_ent(e + vlo, S->tmp + vlo, nv);
    else
      merge_ent(&ctx, e + vlo, S->tmp + vlo, nv);
  }
  memcpy(perm + nlo, S->scratch + lo, (size_t)nn * sizeof *perm);
  for (int64_t i = vlo; i < vlo + nv; i++) perm[i] = e[i].row;
  if (nn > 1) sort_seg(S, d + 1, nlo, nlo + nn, 0);
  if (nv < 2) return;
  if (kind == NORM_NONE) { /* a full comparison ordered the ties; find where keys change */
    for (int64_t i = vlo + 1; S->diff != NULL && i < vlo + nv; i++) {
      int32_t k = d;
      while (k < S->nc && hs_sql_sort_cmp(S->cols + k, 1, perm[i - 1], perm[i]) == 0) k++;
      if (k < S->nc) S->diff[i] = k;
    }
    return;
  }
  if (kind == NORM_EXACT && d + 1 == S->nc && S->diff == NULL) return;
  for (int64_t i = vlo; i < vlo + nv;) {
    int64_t j = i + 1;
    while (j < vlo + nv && e[j].k == e[i].k) j++;
    if (S->diff != NULL && i > vlo) S->diff[i] = d;
    if (j - i > 1) {
      uint64_t k = c0->desc ? ~e[i].k : e[i].k;
      if (kind == NORM_DEEPER && run_deeper(v->type.id, level, k))
        sort_seg(S, d, i, j, level + 1);
      else
        sort_seg(S, d + 1, i, j, 0);
    }
    i = j;
  }
}

hs_status hs_sql_sort_perm(const hs_sql_sortcol *cols, int32_t n_cols, int64_t n, int64_t *perm,
                           int32_t *diff, hs_error *err) {
  if (n <= 0) return HS_OK;
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  if (diff != NULL) {
    for (int64_t i = 0; i < n; i++) diff[i] = n_cols;
    diff[0] = 0;
  }
  if (n_cols == 0 || n < 2) return HS_OK;
  sort_ent *e = hs_malloc((size_t)n * 2 * sizeof *e);
  int64_t *scratch = hs_malloc((size_t)n * sizeof *scratch);
  if (e == NULL || scratch == NULL) {
    hs_free(e);
    hs_free(scratch);
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory sorting %lld rows", (long long)n);
  }
  sorter S = {cols, n_cols, perm, e, e + n, scratch, diff};
  sort_seg(&S, 0, 0, n, 0);
  hs_free(e);
  hs_free(scratch);
  return HS_OK;
}

/* ------------------------------------------------------------- helpers */

int64_t hs_sql_chunk_bytes(const hs_sql_chunk *c) {
  int64_t total = 0;
  for (int32_t k = 0; k < c->n_cols; k++) {
    const hs_sql_vec *v = &c->cols[k];
    total += (int64_t)hs_sql_vec_width(v->type) * v->n + (v->valid ? v->n : 0);
    if (hs_sql_type_is_string(v->type.id) && v->data != NULL) {
      const hs_sql_str *s = v->data;
      for (int64_t i = 0; i < v->n; i++) total += s[i].len;
    }
  }
  return total;
}

hs_status hs_sql_op_check_cancel(hs_sql_exec *x, hs_error *err) {
  if (!hs_sql_exec_cancelled(x, err)) return HS_OK;
  hs_error_set(err, HS_ERR_INVALID_ARG, "query cancelled");
  return err != NULL && err->status != HS_OK ? err->status : HS_ERR_INVALID_ARG;
}

/* ------------------------------------------------------------ operator */

typedef struct sort_state {
  hs_sql_exec *x;
  int32_t n_out;  /* output columns (the input's) */
  int32_t n_keys; /* key columns appended after them */
  int64_t keep;   /* top-N: limit + offset rows kept (-1: all) */
  int64_t offset;
  int64_t limit;     /* -1: none */
  hs_sql_chunk *buf; /* buffered chunks (output columns then keys) */
  size_t n_buf, cap_buf;
  int64_t buf_rows;
  int64_t buf_bytes;  /* reserved for the buffered chunks */
  int64_t perm_bytes; /* reserved for perm */
  bool thr;           /* top-N: buf[0] holds the best `keep` rows so far, in order */
  int64_t reserved;
  /* emission */
  bool built;
  hs_sql_chunk all;
  int64_t *perm;
  int64_t n_perm;
  int64_t pos, end;
} sort_state;

static hs_status reserve(sort_state *s, int64_t bytes, hs_error *err) {
  hs_status st = hs_sql_exec_reserve(s->x, bytes, "sort", err);
  if (st == HS_OK) s->reserved += bytes;
  return st;
}

/* Concatenate the buffered chunks into s->all (buffer emptied). */
static hs_status concat_buf(sort_state *s, hs_error *err) {
  int32_t nc = s->n_out + s->n_keys;
  hs_sql_chunk_release(&s->all);
  if (s->n_buf == 1) {
    hs_sql_chunk_move(&s->all, &s->buf[0]);
    s->n_buf = 0;
    return HS_OK;
  }
  /* the parts and their concatenation live side by side for a moment */
  int64_t extra = s->buf_bytes;
  hs_status st = reserve(s, extra, err);
  if (st != HS_OK) return st;
  st = hs_sql_chunk_init(&s->all, nc, s->buf_rows, err);
  if (st != HS_OK) return st;
  s->all.n = s->buf_rows;
  hs_sql_vec *parts = hs_malloc((s->n_buf ? s->n_buf : 1) * sizeof *parts);
  if (parts == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in sort");
  for (int32_t k = 0; k < nc && st == HS_OK; k++) {
    for (size_t i = 0; i < s->n_buf; i++) parts[i] = s->buf[i].cols[k];
    hs_sql_vec_release(&s->all.cols[k]);
    st = hs_sql_vec_concat(&s->all.cols[k], parts, s->n_buf, err);
  }
  hs_free(parts);
  for (size_t i = 0; i < s->n_buf; i++) hs_sql_chunk_release(&s->buf[i]);
  s->n_buf = 0;
  hs_sql_exec_reserve(s->x, -extra, "sort", NULL);
  s->reserved -= extra;
  return st;
}

/* Order s->all into s->perm (n_perm rows: all, or the best `keep`). */
static hs_status order_all(const hs_sql_plan *p, sort_state *s, hs_error *err) {
  int64_t n = s->all.n;
  hs_free(s->perm);
  s->perm = NULL;
  s->n_perm = 0;
  hs_sql_exec_reserve(s->x, -s->perm_bytes, "sort", NULL);
  s->reserved -= s->perm_bytes;
  s->perm_bytes = 0;
  if (n == 0) return HS_OK;
  /* perm stays; the sort's own buffers (48 bytes a row) only while it runs */
  int64_t scratch = n * (int64_t)(2 * sizeof(uint64_t) * 2 + sizeof(int64_t));
  hs_status st = reserve(s, n * (int64_t)sizeof *s->perm + scratch, err);
  if (st != HS_OK) return st;
  s->perm_bytes = n * (int64_t)sizeof *s->perm;
  s->perm = hs_malloc((size_t)n * sizeof *s->perm);
  if (s->perm == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in sort");
  hs_sql_sortcol cols[64];
  hs_sql_sortcol *c = s->n_keys <= 64 ? cols : hs_malloc((size_t)s->n_keys * sizeof *c);
  if (c == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in sort");
  for (int32_t k = 0; k < s->n_keys; k++) {
    c[k].v = &s->all.cols[s->n_out + k];
    c[k].desc = p->sort.keys[k].desc;
    c[k].nulls_first = p->sort.keys[k].nulls_first;
  }
  st = hs_sql_sort_perm(c, s->n_keys, n, s->perm, NULL, err);
  hs_sql_exec_reserve(s->x, -scratch, "sort", NULL);
  s->reserved -= scratch;
  if (c != cols) hs_free(c);
  if (st != HS_OK) return st;
  s->n_perm = s->keep >= 0 && s->keep < n ? s->keep : n;
  return HS_OK;
}

/* Top-N: replace the buffer by its best `keep` rows. */
static hs_status compact(const hs_sql_plan *p, sort_state *s, hs_error *err) {
  hs_status st = concat_buf(s, err);
  if (st == HS_OK) st = order_all(p, s, err);
  if (st != HS_OK) return st;
  hs_sql_chunk kept = {0};
  st = hs_sql_chunk_take(&kept, &s->all, s->perm, s->n_perm, err);
  if (st != HS_OK) return st;
  hs_sql_chunk_release(&s->all);
  /* the kept rows are a prefix of the order: their order is kept too */
  s->buf[0] = kept;
  s->n_buf = 1;
  s->buf_rows = kept.n;
  s->thr = s->keep > 0 && kept.n == s->keep;
  /* what the dropped rows held goes back to the statement */
  int64_t bytes = hs_sql_chunk_bytes(&kept);
  hs_sql_exec_reserve(s->x, bytes - s->buf_bytes, "sort", NULL);
  s->reserved += bytes - s->buf_bytes;
  s->buf_bytes = bytes;
  return HS_OK;
}

/* Top-N: does row i of chunk a sort before row j of chunk b (sort keys
 * after the n_out output columns)? */
static bool before(const hs_sql_plan *p, const sort_state *s, const hs_sql_chunk *a, int64_t i,
                   const hs_sql_chunk *b, int64_t j) {
  for (int32_t k = 0; k < s->n_keys; k++) {
    const hs_sql_vec *v = &a->cols[s->n_out + k], *w = &b->cols[s->n_out + k];
    bool va = hs_sql_vec_valid(v, i), vb = hs_sql_vec_valid(w, j);
    int r;
    if (!va || !vb) {
      if (va == vb) continue;
      r = va ? -1 : 1;
      if (p->sort.keys[k].nulls_first) r = -r;
    } else {
      r = cmp_value(v, i, w, j);
      if (p->sort.keys[k].desc) r = -r;
    }
    if (r != 0) return r < 0;
  }
  return false; /* a tie arriving later sorts after */
}

/* Top-N with `keep` rows in hand: only rows that beat the last of them
 * can enter; *in becomes those rows (n may drop to 0). */
static hs_status prefilter(const hs_sql_plan *p, sort_state *s, hs_sql_chunk *in, hs_error *err) {
  const hs_sql_chunk *kept = &s->buf[0];
  int64_t t = kept->n - 1, n = in->n, m = 0;
  int64_t *sel = hs_malloc((size_t)(n > 0 ? n : 1) * sizeof *sel);
  if (sel == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory in sort");
  for (int64_t i = 0; i < n; i++)
    if (before(p, s, in, i, kept, t)) sel[m++] = i;
  hs_status st = HS_OK;
  if (m < n) {
    hs_sql_chunk few = {0};
    st = hs_sql_chunk_take(&few, in, sel, m, err);
    if (st == HS_OK) {
      hs_sql_chunk_release(in);
      hs_sql_chunk_move(in, &few);
    }
  }
  hs_free(sel);
  return st;
}

static hs_status push_chunk(const hs_sql_plan *p, sort_state *s, hs_sql_chunk *in, hs_error *err) {
  const hs_sql_evalctx *ctx = hs_sql_exec_evalctx(s->x);
  hs_sql_chunk ext = {0};
  hs_status st = hs_sql_chunk_init(&ext, s->n_out + s->n_keys, in->n, err);
  if (st != HS_OK) return st;
  ext.n = in->n;
  for (int32_t k = 0; k < s->n_out && st == HS_OK; k++) {
    hs_sql_vec_release(&ext.cols[k]);
    st = hs_sql_vec_share(&ext.cols[k], &in->cols[k], err);
  }
  for (int32_t k = 0; k < s->n_keys && st == HS_OK; k++) {
    hs_sql_vec_release(&ext.cols[s->n_out + k]);
    st = hs_sql_eval(p->sort.keys[k].expr, in, ctx, &ext.cols[s->n_out + k], err);
  }
  if (st == HS_OK && s->thr) st = prefilter(p, s, &ext, err);
  if (st == HS_OK && ext.n == 0) {
    hs_sql_chunk_release(&ext);
    return HS_OK;
  }
  int64_t bytes = st == HS_OK ? hs_sql_chunk_bytes(&ext) : 0;
  if (st == HS_OK) st = reserve(s, bytes, err);
  if (st == HS_OK) s->buf_bytes += bytes;
  if (st == HS_OK && s->n_buf == s->cap_buf) {
    size_t cap = s->cap_buf ? s->cap_buf * 2 : 16;
    hs_sql_chunk *nb = hs_realloc(s->buf, cap * sizeof *nb);
    if (nb == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "out of memory in sort");
    else {
      s->buf = nb;
      s->cap_buf = cap;
    }
  }
  if (st != HS_OK) {
    hs_sql_chunk_release(&ext);
    return st;
  }
  int64_t rows = ext.n;
  hs_sql_chunk_move(&s->buf[s->n_buf++], &ext);
  s->buf_rows += rows;
  if (s->keep >= 0) {
    int64_t limit = s->keep * 2 > HS_SORT_CHUNK ? s->keep * 2 : HS_SORT_CHUNK;
    if (s->buf_rows > limit) return compact(p, s, err);
  }
  return HS_OK;
}

static hs_status build(hs_sql_op *op, sort_state *s, hs_error *err) {
  const hs_sql_plan *p = op->plan;
  hs_status st = HS_OK;
  if (s->keep != 0) {
    for (;;) {
      st = hs_sql_op_check_cancel(s->x, err);
      if (st != HS_OK) return st;
      hs_sql_chunk in = {0};
      st = hs_sql_op_next(op->kids[0], &in, err);
      if (st != HS_OK) return st;
      if (in.n == 0) {
        hs_sql_chunk_release(&in);
        break;
      }
      st = push_chunk(p, s, &in, err);
      hs_sql_chunk_release(&in);
      if (st != HS_OK) return st;
    }
  }
  if (s->n_buf > 0) {
    st = concat_buf(s, err);
    if (st == HS_OK) st = order_all(p, s, err);
    if (st != HS_OK) return st;
  }
  s->pos = s->offset < s->n_perm ? s->offset : s->n_perm;
  s->end = s->n_perm;
  if (s->limit >= 0 && s->limit < s->end - s->pos) s->end = s->pos + s->limit;
  s->built = true;
  return HS_OK;
}

static hs_status sort_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  sort_state *s = op->state;
  if (!s->built) {
    hs_status st = build(op, s, err);
    if (st != HS_OK) return st;
  }
  if (s->pos >= s->end) return hs_sql_chunk_init(out, s->n_out, 0, err);
  int64_t len = s->end - s->pos;
  if (len > HS_SORT_CHUNK) len = HS_SORT_CHUNK;
  hs_sql_chunk view = s->all;
  view.n_cols = s->n_out; /* the keys are not output */
  hs_status st = hs_sql_chunk_take(out, &view, s->perm + s->pos, len, err);
  if (st != HS_OK) return st;
  s->pos += len;
  return HS_OK;
}

static void sort_free(hs_sql_op *op) {
  sort_state *s = op->state;
  if (s == NULL) return;
  for (size_t i = 0; i < s->n_buf; i++) hs_sql_chunk_release(&s->buf[i]);
  hs_free(s->buf);
  hs_sql_chunk_release(&s->all);
  hs_free(s->perm);
  if (s->reserved) hs_sql_exec_reserve(s->x, -s->reserved, "sort", NULL);
  hs_free(s);
  op->state = NULL;
}

hs_status hs_sql_op_sort_open(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op *op, hs_error *err) {
  sort_state *s = hs_calloc(1, sizeof *s);
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory opening sort");
  s->x = x;
  s->n_out = p->n_cols;
  s->n_keys = p->sort.n_keys;
  s->limit = p->limit;
  s->offset = p->offset > 0 ? p->offset : 0;
  s->keep = -1;
  if (p->limit >= 0) {
    if (__builtin_add_overflow(p->limit, s->offset, &s->keep) || s->keep > (INT64_C(1) << 40))
      s->keep = -1; /* as good as unlimited: a plain sort */
  }
  op->state = s;
  op->next = sort_next;
  op->free = sort_free;
  return HS_OK;
}
