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

/* Non-null rows a, b of v. The common types inline; the rest through vec.c. */
static inline int cmp_value(const hs_sql_vec *v, int64_t a, int64_t b) {
  switch (v->type.id) {
  case HS_SQL_BOOL: {
    const uint8_t *d = v->data;
    return (int)d[a] - (int)d[b];
  }
  case HS_SQL_INT32:
  case HS_SQL_DATE: {
    const int32_t *d = v->data;
    return d[a] < d[b] ? -1 : d[a] > d[b] ? 1 : 0;
  }
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: {
    const int64_t *d = v->data;
    return d[a] < d[b] ? -1 : d[a] > d[b] ? 1 : 0;
  }
  case HS_SQL_FLOAT64: {
    const double *d = v->data;
    return cmp_f64(d[a], d[b]);
  }
  case HS_SQL_NUMERIC: {
    const hs_sql_i128 *d = v->data;
    return cmp_i128(d[a], d[b]);
  }
  case HS_SQL_TEXT:
  case HS_SQL_BYTEA: {
    const hs_sql_str *d = v->data;
    return cmp_bytes(d[a], d[b]);
  }
  case HS_SQL_NULLTYPE: return 0;
  default: return hs_sql_vec_cmp(v, a, v, b);
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
    int r = cmp_value(v, a, b);
    if (r != 0) return cols[k].desc ? -r : r;
  }
  return 0;
}

/* Stable merge sort of idx[0..n) with tmp[0..n) as scratch; short runs by
 * insertion. */
static void merge_sort(const hs_sql_sortcol *cols, int32_t nc, int64_t *idx, int64_t *tmp,
                       int64_t n) {
  if (n <= 16) {
    for (int64_t i = 1; i < n; i++) {
      int64_t x = idx[i], j = i;
      while (j > 0 && hs_sql_sort_cmp(cols, nc, idx[j - 1], x) > 0) {
        idx[j] = idx[j - 1];
        j--;
      }
      idx[j] = x;
    }
    return;
  }
  int64_t h = n / 2;
  merge_sort(cols, nc, idx, tmp, h);
  merge_sort(cols, nc, idx + h, tmp + h, n - h);
  if (hs_sql_sort_cmp(cols, nc, idx[h - 1], idx[h]) <= 0) return; /* already in order */
  memcpy(tmp, idx, (size_t)n * sizeof *idx);
  int64_t i = 0, j = h, o = 0;
  while (i < h && j < n) {
    if (hs_sql_sort_cmp(cols, nc, tmp[j], tmp[i]) < 0)
      idx[o++] = tmp[j++];
    else
      idx[o++] = tmp[i++];
  }
  while (i < h) idx[o++] = tmp[i++];
  while (j < n) idx[o++] = tmp[j++];
}

/* One non-null int64-like key without nulls, ascending or descending: sort
 * (key, row) pairs, which keeps the comparisons free of indirection. */
typedef struct kv64 {
  int64_t k;
  int64_t row;
} kv64;

static void merge_kv(kv64 *a, kv64 *tmp, int64_t n) {
  if (n <= 16) {
    for (int64_t i = 1; i < n; i++) {
      kv64 x = a[i];
      int64_t j = i;
      while (j > 0 && a[j - 1].k > x.k) {
        a[j] = a[j - 1];
        j--;
      }
      a[j] = x;
    }
    return;
  }
  int64_t h = n / 2;
  merge_kv(a, tmp, h);
  merge_kv(a + h, tmp + h, n - h);
  if (a[h - 1].k <= a[h].k) return;
  memcpy(tmp, a, (size_t)n * sizeof *a);
  int64_t i = 0, j = h, o = 0;
  while (i < h && j < n) {
    if (tmp[j].k < tmp[i].k)
      a[o++] = tmp[j++];
    else
      a[o++] = tmp[i++];
  }
  while (i < h) a[o++] = tmp[i++];
  while (j < n) a[o++] = tmp[j++];
}

static bool sort_fast64(const hs_sql_sortcol *c, int64_t n, int64_t *perm, hs_error *err,
                        hs_status *st) {
  const hs_sql_vec *v = c->v;
  if (v->valid != NULL) return false;
  hs_sql_tid id = v->type.id;
  bool is32 = id == HS_SQL_INT32 || id == HS_SQL_DATE;
  bool is64 = id == HS_SQL_INT64 || id == HS_SQL_TIMESTAMP || id == HS_SQL_TIMESTAMPTZ;
  if (!is32 && !is64) return false;
  kv64 *a = hs_malloc((size_t)n * 2 * sizeof *a);
  if (a == NULL) {
    *st = hs_error_set(err, HS_ERR_NOMEM, "out of memory sorting %lld rows", (long long)n);
    return true;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t k = is32 ? ((const int32_t *)v->data)[i] : ((const int64_t *)v->data)[i];
    /* descending: ~k reverses the order without overflow */
    a[i].k = c->desc ? ~k : k;
    a[i].row = i;
  }
  merge_kv(a, a + n, n);
  for (int64_t i = 0; i < n; i++) perm[i] = a[i].row;
  hs_free(a);
  *st = HS_OK;
  return true;
}

hs_status hs_sql_sort_perm(const hs_sql_sortcol *cols, int32_t n_cols, int64_t n, int64_t *perm,
                           hs_error *err) {
  if (n <= 0) return HS_OK;
  hs_status st;
  if (n_cols == 1 && sort_fast64(&cols[0], n, perm, err, &st)) return st;
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  if (n_cols == 0 || n < 2) return HS_OK;
  int64_t *tmp = hs_malloc((size_t)n * sizeof *tmp);
  if (tmp == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory sorting %lld rows", (long long)n);
  merge_sort(cols, n_cols, perm, tmp, n);
  hs_free(tmp);
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
  hs_status st = hs_sql_chunk_init(&s->all, nc, s->buf_rows, err);
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
  return st;
}

/* Order s->all into s->perm (n_perm rows: all, or the best `keep`). */
static hs_status order_all(const hs_sql_plan *p, sort_state *s, hs_error *err) {
  int64_t n = s->all.n;
  hs_free(s->perm);
  s->perm = NULL;
  s->n_perm = 0;
  if (n == 0) return HS_OK;
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
  hs_status st = hs_sql_sort_perm(c, s->n_keys, n, s->perm, err);
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
  return HS_OK;
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
  if (st == HS_OK) st = reserve(s, hs_sql_chunk_bytes(&ext), err);
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
  hs_sql_chunk_move(&s->buf[s->n_buf++], &ext);
  s->buf_rows += in->n;
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
