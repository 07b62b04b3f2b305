/*
 * index_plan.c — a bound filter as bitmap operations over the scalar
 * indexes (src/index) of one data file.
 *
 * Every node yields two candidate sets: T ⊇ rows where the node is TRUE,
 * F ⊇ rows where it is FALSE (SQL three-valued logic: a row may be in
 * neither, when the node is UNKNOWN). NULL stands for "all rows". Leaves an
 * index answers exactly give exact sets (a comparison: T = the index answer,
 * F = non-null rows minus T; IS NULL: T = null rows, F = non-null rows);
 * anything else gives T = F = all rows. Then
 *   AND: T = T1 ∩ T2, F = F1 ∪ F2;   OR: T = T1 ∪ T2, F = F1 ∩ F2;
 *   NOT: T = F1, F = T1.
 * Each rule maps supersets to supersets, so the root's T is always a
 * superset of the matching rows: an index may only narrow, and NOT over an
 * inexact child stays "all rows" rather than complementing a guess.
 * Only the sets an ancestor uses are computed (the root needs T; NOT
 * swaps), and a pair of comparisons under one AND that bound the same
 * column from both sides (BETWEEN) is one range query. Under AND the
 * ranges come last and are left as "all rows" once the candidates so far
 * are at most 1/64 of the file: the scan re-checks the whole filter on the
 * candidates anyway, and materializing `price < 100` costs its whole answer
 * (10M rows: `category = 'cat0003' AND price < 100.0` 4.5 -> 2.2 ms).
 * Lossy columns (hs_sidx_column_exact false: SORTED blocks without keys)
 * answer supersets: their comparisons give T = the answer and F = all rows
 * (F = non-null − T would be a subset), and `<>`, NOT LIKE give T = all.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../common/verify_switch.h"
#include "../io/fs.h"
#include "../io/store.h"
#include "expr_internal.h"
#include "index_plan.h"

/* ------------------------------------------ opened-column cache
 *
 * Opening an index column reads the Puffin footer, the blob header and the
 * value directory, so opened columns are kept for later queries in this
 * process, keyed by (path, hs_fs_stamp, column): index files
 * are written once under fresh names and never changed in place, so a
 * cached column is the file's content. A column keeps scratch buffers
 * while it answers, so an entry is lent to one query at a time (busy);
 * a query that finds only busy copies opens its own, which then joins the
 * cache. Busy entries are never evicted; otherwise the least recently used
 * goes first. Each entry holds the index file open (one descriptor). */
#define IC_MAX 64

typedef struct ic_entry {
  char *path, *column;
  hs_fs_stamp stamp;
  hs_sidx_column *col; /* NULL: empty slot */
  bool busy;
  uint64_t used_at;
} ic_entry;

static pthread_mutex_t ic_mu = PTHREAD_MUTEX_INITIALIZER;
static ic_entry ic_cache[IC_MAX];
static uint64_t ic_tick;

/* A cached, idle column of (path, column, stamp), now lent (busy). */
static hs_sidx_column *ic_take(const char *path, const char *column, const hs_fs_stamp *stamp) {
  hs_sidx_column *col = NULL;
  pthread_mutex_lock(&ic_mu);
  for (size_t i = 0; i < IC_MAX && col == NULL; i++) {
    ic_entry *e = &ic_cache[i];
    if (e->col != NULL && !e->busy && hs_fs_stamp_equal(&e->stamp, stamp) &&
        strcmp(e->path, path) == 0 && strcmp(e->column, column) == 0) {
      e->busy = true;
      e->used_at = ++ic_tick;
      col = e->col;
    }
  }
  pthread_mutex_unlock(&ic_mu);
  return col;
}

/* Put a freshly opened column into the cache, lent (busy); false when no
 * slot is free of a busy entry or memory ran out (the caller keeps it). */
static bool ic_put(const char *path, const char *column, const hs_fs_stamp *stamp,
                   hs_sidx_column *col) {
  char *p = hs_strdup(path), *c = hs_strdup(column);
  ic_entry *e = NULL;
  pthread_mutex_lock(&ic_mu);
  for (size_t i = 0; p != NULL && c != NULL && i < IC_MAX; i++) {
    ic_entry *v = &ic_cache[i];
    if (v->col == NULL) {
      e = v;
      break;
    }
    if (!v->busy && (e == NULL || v->used_at < e->used_at)) e = v;
  }
  hs_sidx_column *old = NULL;
  char *op = NULL, *oc = NULL;
  if (e != NULL) {
    old = e->col;
    op = e->path;
    oc = e->column;
    *e = (ic_entry){p, c, *stamp, col, true, ++ic_tick};
    p = c = NULL;
  }
  pthread_mutex_unlock(&ic_mu);
  hs_sidx_column_free(old);
  hs_free(op);
  hs_free(oc);
  hs_free(p);
  hs_free(c);
  return e != NULL;
}

/* Give back a lent column; `drop`: evict it (it failed a check). */
static void ic_give_back(hs_sidx_column *col, bool drop) {
  hs_sidx_column *f = NULL;
  char *p = NULL, *c = NULL;
  pthread_mutex_lock(&ic_mu);
  for (size_t i = 0; i < IC_MAX; i++) {
    ic_entry *e = &ic_cache[i];
    if (e->col == col && e->busy) {
      e->busy = false;
      if (drop) {
        f = e->col;
        p = e->path;
        c = e->column;
        *e = (ic_entry){0};
      }
      break;
    }
  }
  pthread_mutex_unlock(&ic_mu);
  hs_sidx_column_free(f);
  hs_free(p);
  hs_free(c);
}

typedef struct plan_ctx {
  const hs_expr *e;
  hs_sidx_file **files;  /* per field: opened index file (or NULL) */
  hs_sidx_column **cols; /* per field: opened column (or NULL) */
  bool *tried;           /* per field: open attempted */
  bool *lent;            /* per field: cols[i] is lent by the cache */
  const char *const *paths;
  const char *const *names; /* per field: its name in the index file; NULL: the filter's */
  size_t n_paths;
  const hs_index_plan_data *data; /* the data file the blobs must be bound to; NULL: unchecked */
  hs_index_plan_report *rep;
} plan_ctx;

/* snprintf into a fixed buffer, truncating long paths and reasons. */
static void say(char *dst, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, cap, fmt, ap);
  va_end(ap);
}

/* Count an index column left unused, keeping the first reason. */
static void reject(plan_ctx *c, size_t i, const char *why) {
  if (c->rep == NULL) return;
  if (c->rep->rejected++ == 0)
    say(c->rep->why, sizeof c->rep->why, "index %s ignored for data file %s: %s",
        hs_index_short_path(c->paths[i]),
        c->data != NULL ? hs_index_short_path(c->data->path) : "?", why);
}

/* te / fe: t / f is exactly the TRUE / FALSE rows, not only a superset
 * (NULL with the flag: exactly all rows). False whenever unsure. */
typedef struct sets {
  roaring_bitmap_t *t, *f; /* NULL: all rows */
  bool te, fe;
} sets;

static void sets_free(sets *s) {
  if (s->t) roaring_bitmap_free(s->t);
  if (s->f) roaring_bitmap_free(s->f);
  s->t = s->f = NULL;
  s->te = s->fe = false;
}

/* Whether an exact index column's answers for `ec` are the filter's own
 * TRUE rows, so the scan may skip re-checking them: integers, decimals,
 * strings and booleans. Floats are left to the re-check (NaN and -0.0 are
 * where an index and an evaluator could part). */
static bool exact_domain(hs_sidx_column *col, const hs_expr_col *ec) {
  return hs_sidx_column_exact(col) && ec->dom != HS_DOM_F64;
}

static hs_status nomem(hs_error *err) {
  return hs_error_set(err, HS_ERR_NOMEM, "index plan: out of memory");
}

/* c->cols[i] if its blob is bound to the data file being read, else
 * nothing (the column is handed back or freed now, and reported). */
static hs_status bound_or_drop(plan_ctx *c, size_t i, hs_sidx_column **out) {
  *out = c->cols[i];
  if (c->data == NULL || c->cols[i] == NULL || hs_verify_skip_repeat()) return HS_OK;
  char why[384];
  const hs_index_binding *b = hs_sidx_column_binding(c->cols[i]);
  if (hs_index_binding_matches(b, c->data->path, c->data->size, true, c->data->footer_crc32c, why,
                               sizeof why))
    return HS_OK;
  reject(c, i, why);
  if (c->lent[i])
    ic_give_back(c->cols[i], false); /* the file is what it is: keep it cached */
  else
    hs_sidx_column_free(c->cols[i]);
  c->cols[i] = NULL;
  c->lent[i] = false;
  *out = NULL;
  return HS_OK;
}

/* The index column of field i, or NULL when it has none. */
static hs_status column_of(plan_ctx *c, int64_t i, hs_sidx_column **out, hs_error *err) {
  *out = NULL;
  if (i < 0 || (size_t)i >= c->n_paths || c->paths[i] == NULL) return HS_OK;
  if (c->tried[i]) {
    *out = c->cols[i];
    return HS_OK;
  }
  c->tried[i] = true;
  const char *name = c->names != NULL && c->names[i] != NULL ? c->names[i] : c->e->cols[i].name;
  hs_fs_stamp stamp;
  bool keyed = hs_store_stamp_of(c->paths[i], &stamp);
  if (keyed && (c->cols[i] = ic_take(c->paths[i], name, &stamp)) != NULL) {
    c->lent[i] = true;
    return bound_or_drop(c, (size_t)i, out);
  }
  if (!keyed) {
    reject(c, (size_t)i, "the index file is missing or not a regular file");
    return HS_OK;
  }
  hs_source *src = NULL;
  hs_status st = hs_store_is_remote(c->paths[i]) ? hs_store_source_open(c->paths[i], &src, err)
                                                 : hs_source_open_file(c->paths[i], &src, err);
  if (st == HS_OK) {
    st = hs_sidx_file_open(src, &c->files[i], err);
    hs_source_unref(src);
  }
  if (st == HS_OK) {
    st = hs_sidx_column_open(c->files[i], name, &c->cols[i], err);
  }
  if (st == HS_OK && keyed) c->lent[i] = ic_put(c->paths[i], name, &stamp, c->cols[i]);
  if (st != HS_OK && st != HS_ERR_NOMEM) {
    /* A missing, unreadable or corrupt index file only costs the
     * narrowing: the file is scanned with the filter alone. */
    reject(c, (size_t)i, err != NULL ? err->message : "unreadable");
    hs_sidx_column_free(c->cols[i]);
    c->cols[i] = NULL;
    if (err != NULL) memset(err, 0, sizeof *err);
    st = HS_OK;
  }
  if (st != HS_OK) {
    hs_error_prefix(err, "index %s: ", c->paths[i]);
    *out = c->cols[i];
    return st;
  }
  return bound_or_drop(c, (size_t)i, out);
}

/* A comparison's literal as an index value of the column's domain; *frac:
 * the literal lies strictly between v and v + 1 (expr_internal.h). */
static void cmp_value(const hs_expr_col *ec, const hs_expr_node *n, hs_sidx_value *v, bool *frac) {
  const hs_expr_bound *l = &n->lit;
  memset(v, 0, sizeof *v);
  *frac = false;
  switch (ec->dom) {
  case HS_DOM_I64:
    v->kind = HS_SIDX_INT;
    v->i = l->i;
    *frac = l->frac;
    break;
  case HS_DOM_U64:
    v->kind = HS_SIDX_UINT;
    v->u = l->u;
    *frac = l->frac;
    break;
  case HS_DOM_DEC: {
    v->kind = HS_SIDX_DECIMAL;
    unsigned __int128 u = (unsigned __int128)l->d;
    v->dec_hi = (int64_t)(uint64_t)(u >> 64);
    v->dec_lo = (uint64_t)u;
    *frac = l->frac;
    break;
  }
  case HS_DOM_F64:
    v->kind = HS_SIDX_DOUBLE;
    v->d = l->f;
    break;
  case HS_DOM_BYTES:
    v->kind = HS_SIDX_BYTES;
    v->bytes = l->bytes;
    v->n_bytes = l->len;
    break;
  case HS_DOM_BOOL:
    v->kind = HS_SIDX_BOOL;
    v->b = l->b;
    break;
  }
}

/* Exact T of a comparison, or *t = NULL with *exact false. */
static hs_status cmp_query(hs_sidx_column *col, const hs_expr_col *ec, const hs_expr_node *n,
                           roaring_bitmap_t **t, bool *exact, hs_error *err) {
  const hs_expr_bound *l = &n->lit;
  hs_sidx_value v;
  bool frac;
  cmp_value(ec, n, &v, &frac);
  hs_status st = HS_OK;
  *t = NULL;
  *exact = true;
  if (n->op == HS_CMP_NE && !hs_sidx_column_exact(col)) { /* non-null − a superset: no */
    *exact = false;
    return HS_OK;
  }
  bool fixed = ec->dom == HS_DOM_I64 || ec->dom == HS_DOM_U64 || ec->dom == HS_DOM_DEC;
  if (fixed && l->sat != 0) {
    /* Every value compares as -sat with the literal. */
    int c = -l->sat;
    bool yes = (n->op == HS_CMP_EQ && c == 0) || (n->op == HS_CMP_NE && c != 0) ||
               (n->op == HS_CMP_LT && c < 0) || (n->op == HS_CMP_LE && c <= 0) ||
               (n->op == HS_CMP_GT && c > 0) || (n->op == HS_CMP_GE && c >= 0);
    if (yes) return hs_sidx_column_is_not_null(col, t, err);
    *t = roaring_bitmap_create();
    return *t ? HS_OK : nomem(err);
  }
  /* With frac the literal lies strictly between q and q + 1 (see
   * expr_internal.h): v < lit is v <= q, v >= lit is v > q, = is empty. */
  switch (n->op) {
  case HS_CMP_EQ:
  case HS_CMP_NE:
    if (frac)
      *t = roaring_bitmap_create();
    else
      st = hs_sidx_column_equals(col, &v, t, err);
    if (st == HS_OK && *t == NULL) return nomem(err);
    if (st == HS_OK && n->op == HS_CMP_NE) {
      roaring_bitmap_t *nn = NULL;
      st = hs_sidx_column_is_not_null(col, &nn, err);
      if (st == HS_OK) {
        roaring_bitmap_andnot_inplace(nn, *t);
        roaring_bitmap_free(*t);
        *t = nn;
      }
    }
    break;
  case HS_CMP_LT: st = hs_sidx_column_range(col, NULL, false, &v, frac, t, err); break;
  case HS_CMP_LE: st = hs_sidx_column_range(col, NULL, false, &v, true, t, err); break;
  case HS_CMP_GT: st = hs_sidx_column_range(col, &v, false, NULL, false, t, err); break;
  case HS_CMP_GE: st = hs_sidx_column_range(col, &v, !frac, NULL, false, t, err); break;
  }
  if (st == HS_ERR_UNSUPPORTED) {
    if (*t) roaring_bitmap_free(*t);
    *t = NULL;
    *exact = false;
    if (err) memset(err, 0, sizeof *err);
    return HS_OK;
  }
  return st;
}

/* A LIKE pattern that is exactly "<prefix>%" (or no wildcard at all):
 * its prefix length, else -1. */
static ptrdiff_t like_prefix(const hs_expr_node *n, bool *whole) {
  *whole = false;
  for (size_t i = 0; i < n->pat_len; i++) {
    int ch = n->pat[i];
    if (n->escape >= 0 && ch == n->escape) return -1;
    if (ch == '_') return -1;
    if (ch == '%') return i + 1 == n->pat_len ? (ptrdiff_t)i : -1;
  }
  *whole = true;
  return (ptrdiff_t)n->pat_len;
}

/* Which of a node's sets its parent uses. A set not wanted is left NULL
 * ("all rows", always a superset), so the root (T only) does not pay for F
 * sets (non-null rows minus T: nearly every row of a selective comparison)
 * unless a NOT asks for them. */
enum { WANT_T = 1, WANT_F = 2 };

static void sets_keep(sets *s, int want) {
  if (!(want & WANT_T)) {
    if (s->t != NULL) roaring_bitmap_free(s->t);
    s->t = NULL;
    s->te = false;
  }
  if (!(want & WANT_F)) {
    if (s->f != NULL) roaring_bitmap_free(s->f);
    s->f = NULL;
    s->fe = false;
  }
}

/* The sets of a leaf from t (owned), the index's answer for the leaf
 * (negated: for its negation, NOT LIKE). */
static hs_status leaf_sets(hs_sidx_column *col, const hs_expr_col *ec, roaring_bitmap_t *t,
                           bool neg, int want, sets *out, hs_error *err) {
  out->te = out->fe = false;
  if (!hs_sidx_column_exact(col)) { /* t ⊇ TRUE rows; FALSE rows unknown */
    if (neg) {
      roaring_bitmap_free(t);
      return HS_OK;
    }
    out->t = t;
    sets_keep(out, want);
    return HS_OK;
  }
  roaring_bitmap_t *nn = NULL;
  if (want & (neg ? WANT_T : WANT_F)) { /* FALSE: non-null and not TRUE */
    hs_status st = hs_sidx_column_is_not_null(col, &nn, err);
    if (st != HS_OK) {
      roaring_bitmap_free(t);
      return st;
    }
    roaring_bitmap_andnot_inplace(nn, t);
  }
  out->t = neg ? nn : t;
  out->f = neg ? t : nn;
  out->te = out->fe = exact_domain(col, ec);
  sets_keep(out, want);
  return HS_OK;
}

/* +1: the comparison bounds its column from below (>, >=), -1: from above
 * (<, <=), 0: neither (or a saturated literal, answered on its own). */
static int cmp_side(const plan_ctx *c, const hs_expr_node *n) {
  if (n->kind != HS_N_CMP || n->field < 0 || n->field >= c->e->n_fields) return 0;
  hs_expr_domain d = c->e->cols[n->field].dom;
  if ((d == HS_DOM_I64 || d == HS_DOM_U64 || d == HS_DOM_DEC) && n->lit.sat != 0) return 0;
  if (n->op == HS_CMP_GT || n->op == HS_CMP_GE) return 1;
  if (n->op == HS_CMP_LT || n->op == HS_CMP_LE) return -1;
  return 0;
}

/* Kids *lo and *hi of AND node n bounding the same column from below and
 * above (BETWEEN, a < x AND x <= b): one range query answers both; each
 * side alone would materialize everything above / below its bound. */
static bool range_pair(const plan_ctx *c, const hs_expr_node *n, int *lo, int *hi) {
  for (int i = 0; i < n->n_kids; i++) {
    int si = cmp_side(c, n->kids[i]);
    for (int j = i + 1; si != 0 && j < n->n_kids; j++) {
      if (cmp_side(c, n->kids[j]) == -si && n->kids[j]->field == n->kids[i]->field) {
        *lo = si > 0 ? i : j;
        *hi = si > 0 ? j : i;
        return true;
      }
    }
  }
  return false;
}

/* The sets of `a AND b`, a bounding a column from below and b from above. */
static hs_status range_sets(plan_ctx *c, const hs_expr_node *a, const hs_expr_node *b, int want,
                            sets *out, hs_error *err) {
  out->t = out->f = NULL;
  out->te = out->fe = false;
  hs_sidx_column *col = NULL;
  hs_status st = column_of(c, a->field, &col, err);
  if (st != HS_OK || col == NULL) return st;
  const hs_expr_col *ec = &c->e->cols[a->field];
  hs_sidx_value lo, hi;
  bool lo_frac, hi_frac;
  cmp_value(ec, a, &lo, &lo_frac);
  cmp_value(ec, b, &hi, &hi_frac);
  /* As cmp_query: > q (frac or not) and >= q without frac; < q with frac is <= q. */
  bool lo_incl = a->op == HS_CMP_GE && !lo_frac;
  bool hi_incl = b->op == HS_CMP_LE || hi_frac;
  roaring_bitmap_t *t = NULL;
  st = hs_sidx_column_range(col, &lo, lo_incl, &hi, hi_incl, &t, err);
  if (st == HS_ERR_UNSUPPORTED) { /* not narrowed */
    if (t) roaring_bitmap_free(t);
    if (err) memset(err, 0, sizeof *err);
    return HS_OK;
  }
  if (st != HS_OK) {
    if (t) roaring_bitmap_free(t);
    return st;
  }
  /* On one column, a non-null row fails the pair iff it is outside the
   * range (each side is TRUE or FALSE for it): F = non-null − T. */
  return leaf_sets(col, ec, t, false, want, out, err);
}

/* Whether candidates t (NULL: all rows) are few enough next to the rows
 * of the file that comparison `k`'s own answer is not worth materializing:
 * at most 1/64 of the rows (the scan re-checks every candidate anyway). */
static bool few_rows(plan_ctx *c, const hs_expr_node *k, const roaring_bitmap_t *t) {
  if (t == NULL || k->field < 0) return false;
  hs_sidx_column *col = NULL;
  hs_error e;
  memset(&e, 0, sizeof e);
  if (column_of(c, k->field, &col, &e) != HS_OK || col == NULL) return false;
  return roaring_bitmap_get_cardinality(t) * 64 <= (uint64_t)hs_sidx_column_row_count(col);
}

/* T and F of `x IN (list)`: T = one k-way union of the values' posting
 * lists (hs_sidx_column_in); F = non-null rows − T, or nothing at all when
 * the list has a NULL (a value not listed is then UNKNOWN). */
static hs_status in_sets(hs_sidx_column *col, const hs_expr_col *ec, const hs_expr_node *n,
                         int want, sets *out, hs_error *err) {
  const hs_expr_inlist *in = n->in;
  hs_sidx_value *vs = hs_malloc(sizeof *vs * (size_t)(in->n + 1));
  if (vs == NULL) return nomem(err);
  for (int64_t i = 0; i < in->n; i++) {
    hs_expr_node leaf;
    memset(&leaf, 0, sizeof leaf);
    leaf.lit = in->vals[i].b;
    bool frac;
    cmp_value(ec, &leaf, &vs[i], &frac);
  }
  roaring_bitmap_t *t = NULL;
  hs_status st = hs_sidx_column_in(col, vs, (size_t)in->n, &t, err);
  hs_free(vs);
  if (st == HS_ERR_UNSUPPORTED) { /* not narrowed */
    if (t) roaring_bitmap_free(t);
    if (err) memset(err, 0, sizeof *err);
    return HS_OK;
  }
  if (st != HS_OK) return st;
  if (!in->has_null) return leaf_sets(col, ec, t, false, want, out, err);
  out->t = t;
  if ((want & WANT_F) && (out->f = roaring_bitmap_create()) == NULL) {
    sets_free(out);
    return nomem(err);
  }
  /* TRUE: the listed values; FALSE: never (a value not listed is UNKNOWN). */
  out->te = out->fe = exact_domain(col, ec);
  sets_keep(out, want);
  return HS_OK;
}

static hs_status walk(plan_ctx *c, const hs_expr_node *n, int depth, int want, sets *out,
                      hs_error *err) {
  out->t = out->f = NULL;
  out->te = out->fe = false;
  if (depth > HS_EXPR_DEPTH_MAX) return HS_OK;
  hs_status st = HS_OK;
  switch (n->kind) {
  case HS_N_CONST:
    if (n->tv != 1 && (out->t = roaring_bitmap_create()) == NULL) return nomem(err);
    if (n->tv != 0 && (out->f = roaring_bitmap_create()) == NULL) {
      sets_free(out);
      return nomem(err);
    }
    out->te = out->fe = true;
    return HS_OK;
  case HS_N_NOT: {
    sets k;
    int kw = ((want & WANT_T) ? WANT_F : 0) | ((want & WANT_F) ? WANT_T : 0);
    st = walk(c, n->kids[0], depth + 1, kw, &k, err);
    out->t = k.f;
    out->f = k.t;
    out->te = k.fe;
    out->fe = k.te;
    return st;
  }
  case HS_N_AND:
  case HS_N_OR: {
    bool is_and = n->kind == HS_N_AND;
    int plo = -1, phi = -1;
    if (is_and) range_pair(c, n, &plo, &phi);
    bool first = true;
    /* Under AND, ranges go last (pass 1) and are skipped once the rows
     * so far are few: materializing `price < 100` costs its whole answer
     * (10 % of the file), re-checking it on the candidates costs only them. */
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < n->n_kids; i++) {
        if (i == plo || i == phi) {
          if (i != (plo < phi ? plo : phi)) continue; /* the pair is answered once */
        }
        bool ranged = is_and && (i == plo || i == phi || cmp_side(c, n->kids[i]) != 0);
        if (ranged != (pass == 1)) continue;
        if (ranged && !first && few_rows(c, n->kids[i], out->t)) {
          if (out->f != NULL) roaring_bitmap_free(out->f); /* F ∪ all rows */
          out->f = NULL;
          out->te = out->fe = false; /* T not narrowed by this kid: a superset */
          continue;
        }
        sets k;
        st = i == plo || i == phi ? range_sets(c, n->kids[plo], n->kids[phi], want, &k, err)
                                  : walk(c, n->kids[i], depth + 1, want, &k, err);
        if (st != HS_OK) {
          sets_free(out);
          return st;
        }
        if (first) {
          *out = k;
          first = false;
          continue;
        }
        /* narrowing side (intersect; NULL = identity) and widening side
         * (union; NULL absorbs). */
        roaring_bitmap_t **nar = is_and ? &out->t : &out->f, **wid = is_and ? &out->f : &out->t;
        roaring_bitmap_t *kn = is_and ? k.t : k.f, *kw = is_and ? k.f : k.t;
        /* Intersection and union of exact sets are exact; anything else not. */
        bool both_t = out->te && k.te, both_f = out->fe && k.fe;
        out->te = both_t;
        out->fe = both_f;
        if (*nar == NULL)
          *nar = kn;
        else if (kn != NULL) {
          roaring_bitmap_and_inplace(*nar, kn);
          roaring_bitmap_free(kn);
        }
        if (*wid != NULL && kw != NULL) {
          roaring_bitmap_or_inplace(*wid, kw);
          roaring_bitmap_free(kw);
        } else {
          if (*wid) roaring_bitmap_free(*wid);
          if (kw) roaring_bitmap_free(kw);
          *wid = NULL;
        }
      }
    return HS_OK;
  }
  case HS_N_CMP:
  case HS_N_ISNULL:
  case HS_N_LIKE:
  case HS_N_IN: {
    hs_sidx_column *col = NULL;
    if ((st = column_of(c, n->field, &col, err)) != HS_OK || col == NULL) return st;
    const hs_expr_col *ec = &c->e->cols[n->field];
    if (n->kind == HS_N_IN) return in_sets(col, ec, n, want, out, err);
    roaring_bitmap_t *t = NULL;
    bool exact = false;
    if (n->kind == HS_N_ISNULL) {
      roaring_bitmap_t *isn = NULL, *nn = NULL;
      int w_isn = n->negated ? WANT_F : WANT_T, w_nn = n->negated ? WANT_T : WANT_F;
      if (want & w_isn) st = hs_sidx_column_is_null(col, &isn, err);
      if (st == HS_OK && (want & w_nn)) st = hs_sidx_column_is_not_null(col, &nn, err);
      if (st != HS_OK) {
        if (isn) roaring_bitmap_free(isn);
        if (nn) roaring_bitmap_free(nn);
        return st;
      }
      out->t = n->negated ? nn : isn;
      out->f = n->negated ? isn : nn;
      return HS_OK;
    }
    if (n->kind == HS_N_CMP) {
      st = cmp_query(col, ec, n, &t, &exact, err);
    } else if (ec->dom == HS_DOM_BYTES) {
      bool whole = false;
      ptrdiff_t p = like_prefix(n, &whole);
      if (p >= 0) {
        exact = true;
        if (whole) {
          hs_sidx_value v;
          memset(&v, 0, sizeof v);
          v.kind = HS_SIDX_BYTES;
          v.bytes = n->pat;
          v.n_bytes = n->pat_len;
          st = hs_sidx_column_equals(col, &v, &t, err);
        } else {
          st = hs_sidx_column_prefix(col, n->pat, (size_t)p, &t, err);
        }
        if (st == HS_ERR_UNSUPPORTED) {
          if (err) memset(err, 0, sizeof *err);
          st = HS_OK;
          exact = false;
        }
      }
    }
    if (st != HS_OK || !exact) {
      if (t) roaring_bitmap_free(t);
      return st;
    }
    return leaf_sets(col, ec, t, n->kind == HS_N_LIKE && n->negated, want, out, err);
  }
  case HS_N_BOOLTEST: return HS_OK; /* not narrowed */
  }
  return HS_OK;
}

hs_status hs_index_plan_rows(const hs_expr *e, const char *const *paths, const char *const *names,
                             size_t n_paths, const hs_index_plan_data *data,
                             hs_index_plan_report *rep, roaring_bitmap_t **out, bool *exact,
                             hs_error *err) {
  *out = NULL;
  if (exact != NULL) *exact = false;
  if (e == NULL || e->root == NULL || paths == NULL || n_paths == 0) return HS_OK;
  plan_ctx c;
  memset(&c, 0, sizeof c);
  c.e = e;
  c.paths = paths;
  c.names = names;
  c.data = data;
  c.rep = rep;
  c.n_paths = n_paths < (size_t)e->n_fields ? n_paths : (size_t)e->n_fields;
  c.files = hs_calloc(c.n_paths + 1, sizeof *c.files);
  c.cols = hs_calloc(c.n_paths + 1, sizeof *c.cols);
  c.tried = hs_calloc(c.n_paths + 1, sizeof *c.tried);
  c.lent = hs_calloc(c.n_paths + 1, sizeof *c.lent);
  hs_status st = HS_OK;
  sets s = {NULL, NULL, false, false};
  if (c.files == NULL || c.cols == NULL || c.tried == NULL || c.lent == NULL) st = nomem(err);
  if (st == HS_OK) st = walk(&c, e->root, 1, WANT_T, &s, err);
  bool failed = st != HS_OK;
  if (st != HS_OK && st != HS_ERR_NOMEM) {
    /* A bitmap that fails its checks: no narrowing for this file. */
    if (rep != NULL && rep->rejected++ == 0)
      say(rep->why, sizeof rep->why, "an index of data file %s ignored: %s",
          data != NULL ? hs_index_short_path(data->path) : "?",
          err != NULL ? err->message : "corrupt");
    sets_free(&s);
    if (err != NULL) memset(err, 0, sizeof *err);
    st = HS_OK;
  }
  if (st == HS_OK) {
    if (exact != NULL) *exact = s.t != NULL && s.te;
    *out = s.t;
    s.t = NULL;
  }
  sets_free(&s);
  for (size_t i = 0; c.cols != NULL && i < c.n_paths; i++) {
    if (c.lent != NULL && c.lent[i])
      ic_give_back(c.cols[i], failed); /* a check failed: reopen next time */
    else
      hs_sidx_column_free(c.cols[i]);
  }
  for (size_t i = 0; c.files != NULL && i < c.n_paths; i++) hs_sidx_file_free(c.files[i]);
  hs_free(c.files);
  hs_free(c.cols);
  hs_free(c.tried);
  hs_free(c.lent);
  return st;
}
