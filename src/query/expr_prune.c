/*
 * expr_prune.c — may a set of rows described only by per-column statistics
 * (min, max, null and NaN counts) satisfy a filter?
 *
 * Each node yields the set of truth values its rows could take, a subset
 * of {TRUE, FALSE, UNKNOWN}, computed from its children by the three-valued
 * truth tables; a leaf derives it from the column's bounds. The filter may
 * match only if TRUE is in the root's set. Every step over-approximates
 * (a value is dropped from a set only when the statistics exclude it), so
 * pruning never removes rows that could match: callers still evaluate the
 * filter on whatever survives.
 */
#include <math.h>
#include <string.h>

#include "expr_internal.h"

enum { PT = 1, PF = 2, PU = 4, PALL = 7 };

void hs_expr_stats_init(hs_expr_stats *s) {
  memset(s, 0, sizeof(*s));
  s->null_count = -1;
  s->nan_count = -1;
  s->row_count = -1;
}

static bool all_null(const hs_expr_stats *s) {
  return s->row_count >= 0 && s->null_count >= 0 && s->null_count >= s->row_count;
}

static int leaf_cmp(const hs_expr *e, const hs_expr_node *n, const hs_expr_stats *s) {
  const hs_expr_col *col = &e->cols[n->field];
  int nulls = s->null_count != 0 ? PU : 0;
  if (all_null(s)) return PU;
  if (!s->has_bounds) return PT | PF | nulls;
  int cmin = hs_expr_cmp_scalar(col, &s->min, &n->lit);
  int cmax;
  if (col->dom == HS_DOM_F64 && s->nan_count != 0) {
    hs_expr_scalar nan = s->max;
    nan.f64 = NAN; /* NaN sorts above every number, and statistics ignore it */
    cmax = hs_expr_cmp_scalar(col, &nan, &n->lit);
  } else {
    cmax = hs_expr_cmp_scalar(col, &s->max, &n->lit);
  }
  static const unsigned op_mask[] = {2, 5, 1, 3, 4, 6}; /* as in expr_eval.c */
  int r = nulls;
  for (int c = cmin; c <= cmax; c++) r |= (op_mask[n->op] >> (c + 1)) & 1 ? PT : PF;
  if (cmin > cmax) r |= PT | PF; /* inconsistent bounds: assume anything */
  return r;
}

/* Literal prefix of a LIKE pattern (up to the first wildcard). */
static size_t like_prefix(const hs_expr_node *n, uint8_t *buf, size_t cap) {
  size_t k = 0;
  for (size_t i = 0; i < n->pat_len && k < cap; i++) {
    uint8_t ch = n->pat[i];
    if (ch == '%' || ch == '_') break;
    if (n->escape >= 0 && ch == (uint8_t)n->escape && i + 1 < n->pat_len) ch = n->pat[++i];
    buf[k++] = ch;
  }
  return k;
}

static int leaf_like(const hs_expr_node *n, const hs_expr_stats *s) {
  int nulls = s->null_count != 0 ? PU : 0;
  if (all_null(s)) return PU;
  uint8_t pre[256];
  size_t k = like_prefix(n, pre, sizeof(pre));
  bool may_match = true;
  if (s->has_bounds && k > 0) {
    /* Matches start with `pre`: they lie in [pre, pre + 0xFF...]. */
    size_t lmin = s->min.len < k ? s->min.len : k, lmax = s->max.len < k ? s->max.len : k;
    int c1 = lmin ? memcmp(s->min.bytes, pre, lmin) : 0;
    if (c1 == 0 && lmin < k) c1 = -1; /* shorter prefix sorts first */
    int c2 = lmax ? memcmp(s->max.bytes, pre, lmax) : 0;
    if (c2 == 0 && lmax < k) c2 = -1;
    may_match = c1 <= 0 && c2 >= 0;
  }
  int r = nulls;
  if (n->negated)
    r |= PT | (may_match ? PF : 0);
  else
    r |= PF | (may_match ? PT : 0);
  return r;
}

/* IN: TRUE is possible when a listed value lies within [min, max]; a value
 * not listed is FALSE (UNKNOWN when the list has a NULL), possible unless
 * min = max = a listed value. */
static int leaf_in(const hs_expr *e, const hs_expr_node *n, const hs_expr_stats *s) {
  const hs_expr_col *col = &e->cols[n->field];
  const hs_expr_inlist *in = n->in;
  int nulls = s->null_count != 0 ? PU : 0, miss = in->has_null ? PU : PF;
  if (all_null(s)) return PU;
  if (in->n == 0) return nulls | miss;
  if (!s->has_bounds) return nulls | miss | PT;
  hs_expr_scalar hi = s->max;
  if (col->dom == HS_DOM_F64 && s->nan_count != 0) hi.f64 = NAN; /* as leaf_cmp */
  int64_t i = hs_expr_inlist_lower(col, in, &s->min);
  if (i >= in->n || hs_expr_cmp_scalar(col, &hi, &in->vals[i].b) < 0) return nulls | miss;
  bool single = hs_expr_cmp_scalar(col, &s->min, &in->vals[i].b) == 0 &&
                hs_expr_cmp_scalar(col, &hi, &in->vals[i].b) == 0;
  return nulls | PT | (single ? 0 : miss);
}

static int node_set(const hs_expr *e, const hs_expr_node *n, const hs_expr_stats *st) {
  switch (n->kind) {
  case HS_N_CONST: return n->tv > 0 ? PT : n->tv == 0 ? PF : PU;
  case HS_N_CMP: return leaf_cmp(e, n, &st[n->field]);
  case HS_N_LIKE: return leaf_like(n, &st[n->field]);
  case HS_N_IN: return leaf_in(e, n, &st[n->field]);
  case HS_N_ISNULL: {
    const hs_expr_stats *s = &st[n->field];
    int may_null = s->null_count != 0 ? 1 : 0, may_value = all_null(s) ? 0 : 1;
    if (n->negated) return (may_value ? PT : 0) | (may_null ? PF : 0);
    return (may_null ? PT : 0) | (may_value ? PF : 0);
  }
  case HS_N_NOT: {
    int k = node_set(e, n->kids[0], st);
    return (k & PU) | (k & PT ? PF : 0) | (k & PF ? PT : 0);
  }
  case HS_N_BOOLTEST: {
    int k = node_set(e, n->kids[0], st);
    int hit = n->which > 0 ? PT : n->which == 0 ? PF : PU;
    int r = 0;
    if (k & hit) r |= n->negated ? PF : PT;
    if (k & ~hit) r |= n->negated ? PT : PF;
    return r;
  }
  case HS_N_AND:
  case HS_N_OR: {
    /* OR is AND with TRUE and FALSE swapped. */
    const bool and = n->kind == HS_N_AND;
    int dom = and? PF : PT, unit = and? PT : PF; /* dominant and neutral values */
    int acc = unit;
    for (int i = 0; i < n->n_kids; i++) {
      int k = node_set(e, n->kids[i], st), r = 0;
      if ((acc & dom) || (k & dom)) r |= dom;
      if ((acc & unit) && (k & unit)) r |= unit;
      if (((acc & PU) && (k & (unit | PU))) || ((k & PU) && (acc & (unit | PU)))) r |= PU;
      acc = r;
    }
    return acc;
  }
  }
  return PALL;
}

hs_status hs_expr_may_match(const hs_expr *e, const hs_expr_stats *stats, int64_t n_stats,
                            bool *may_match, hs_error *err) {
  if (e == NULL || may_match == NULL || (stats == NULL && n_stats > 0)) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "filter: NULL argument");
  }
  for (int64_t i = 0; i < e->n_fields; i++) {
    if (e->cols[i].bound && i >= n_stats) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "filter: no statistics for column '%s' (field %lld)", e->cols[i].name,
                          (long long)i);
    }
  }
  *may_match = (node_set(e, e->root, stats) & PT) != 0;
  return HS_OK;
}
