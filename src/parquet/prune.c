/*
 * prune.c — row-group pruning by column-chunk statistics.
 *
 * A row group is skipped only when its statistics prove that no row can
 * satisfy "column op value". Safety rules, from parquet.thrift:
 *  - min_value/max_value (fields 5, 6) follow the column's sort order and
 *    are preferred; the deprecated min/max (fields 1, 2) were written with
 *    signed comparison and are used only for types whose order is signed
 *    (BOOLEAN, signed integers, FLOAT, DOUBLE), never for unsigned integers
 *    or byte arrays.
 *  - Types with no usable order here (INT96, decimals, FLOAT16, intervals)
 *    never prune.
 *  - Float statistics containing NaN never prune (writers disagree on
 *    whether NaN takes part in min/max).
 *  - Truncated byte-array statistics stay valid bounds (min rounds down,
 *    max rounds up), so they may be used as they are.
 * Numbers are compared as long double, which holds every int64 and uint64
 * exactly, so mixed int/double predicates cannot round the wrong way.
 */
#include <math.h>
#include <string.h>

#include "reader_internal.h"

typedef enum stat_order {
  ORDER_NONE,
  ORDER_SIGNED,
  ORDER_UNSIGNED,
  ORDER_FLOAT,
  ORDER_BYTES
} stat_order;

static stat_order order_of(const hs_pq_node *n) {
  const hs_pq_schema_element *e = n->elem;
  if (n->atype.id == HS_AT_DECIMAL128 || n->atype.id == HS_AT_FLOAT16) return ORDER_NONE;
  switch (e->type) {
  case HS_PQ_BOOLEAN: return ORDER_SIGNED;
  case HS_PQ_INT32:
  case HS_PQ_INT64:
    switch (n->atype.id) {
    case HS_AT_UINT8:
    case HS_AT_UINT16:
    case HS_AT_UINT32:
    case HS_AT_UINT64: return ORDER_UNSIGNED;
    default: return ORDER_SIGNED;
    }
  case HS_PQ_FLOAT:
  case HS_PQ_DOUBLE: return ORDER_FLOAT;
  case HS_PQ_BYTE_ARRAY: return ORDER_BYTES;
  case HS_PQ_FIXED_LEN_BYTE_ARRAY:
    if (e->has_converted && e->converted == HS_PQ_CT_INTERVAL) return ORDER_NONE;
    return ORDER_BYTES;
  case HS_PQ_INT96: return ORDER_NONE;
  }
  return ORDER_NONE;
}

/* Decode a numeric statistic; false when its length does not fit. */
static bool stat_number(const hs_pq_node *n, stat_order order, hs_pq_bytes b, long double *out) {
  switch (n->elem->type) {
  case HS_PQ_BOOLEAN:
    if (b.len != 1) return false;
    *out = b.data[0] ? 1 : 0;
    return true;
  case HS_PQ_INT32:
    if (b.len != 4) return false;
    *out = order == ORDER_UNSIGNED ? (long double)hs_load_u32le(b.data)
                                   : (long double)(int32_t)hs_load_u32le(b.data);
    return true;
  case HS_PQ_INT64:
    if (b.len != 8) return false;
    *out = order == ORDER_UNSIGNED ? (long double)hs_load_u64le(b.data)
                                   : (long double)(int64_t)hs_load_u64le(b.data);
    return true;
  case HS_PQ_FLOAT: {
    if (b.len != 4) return false;
    float f;
    uint32_t u = hs_load_u32le(b.data);
    memcpy(&f, &u, 4);
    *out = f;
    return !isnan(f);
  }
  case HS_PQ_DOUBLE: {
    if (b.len != 8) return false;
    double d;
    uint64_t u = hs_load_u64le(b.data);
    memcpy(&d, &u, 8);
    *out = d;
    return !isnan(d);
  }
  default: return false;
  }
}

static int cmp_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  size_t m = alen < blen ? alen : blen;
  int c = m ? memcmp(a, b, m) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  return alen < blen ? -1 : alen > blen ? 1 : 0;
}

/* Given cmp(min, v) and cmp(max, v) in {-1, 0, 1}, can a value in
 * [min, max] satisfy "x op v"? */
static bool range_may_match(hs_cmp_op op, int cmin, int cmax) {
  switch (op) {
  case HS_CMP_EQ: return cmin <= 0 && cmax >= 0;
  case HS_CMP_NE: return !(cmin == 0 && cmax == 0);
  case HS_CMP_LT: return cmin < 0;
  case HS_CMP_LE: return cmin <= 0;
  case HS_CMP_GT: return cmax > 0;
  case HS_CMP_GE: return cmax >= 0;
  }
  return true;
}

static int cmp_ld(long double a, long double b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

static bool chunk_may_match(const hs_pq_node *n, const hs_pq_row_group *rg,
                            const hs_stat_predicate *p) {
  const hs_pq_column_chunk *cc = &rg->columns[n->leaf];
  if (!cc->has_meta_data || !cc->meta_data.has_statistics) return true;
  const hs_pq_statistics *s = &cc->meta_data.statistics;
  stat_order order = order_of(n);
  hs_pq_bytes mn, mx;
  if (s->has_min_value && s->has_max_value) {
    mn = s->min_value;
    mx = s->max_value;
  } else if (s->has_min && s->has_max && (order == ORDER_SIGNED || order == ORDER_FLOAT)) {
    mn = s->min;
    mx = s->max;
  } else {
    /* No bounds: a chunk of only nulls satisfies no comparison. */
    return !(s->has_null_count && rg->num_rows > 0 && s->null_count == rg->num_rows &&
             cc->meta_data.num_values == rg->num_rows);
  }
  if (order == ORDER_NONE) return true;
  if (order == ORDER_BYTES) {
    if (p->value.kind != HS_VALUE_STRING || (p->value.str == NULL && p->value.str_len > 0)) {
      return true;
    }
    const uint8_t *v = (const uint8_t *)p->value.str;
    int cmin = cmp_bytes(mn.data, mn.len, v, p->value.str_len);
    int cmax = cmp_bytes(mx.data, mx.len, v, p->value.str_len);
    return range_may_match(p->op, cmin, cmax);
  }
  long double lo, hi, v;
  if (p->value.kind == HS_VALUE_INT64) {
    v = (long double)p->value.i64;
  } else if (p->value.kind == HS_VALUE_DOUBLE) {
    if (isnan(p->value.f64)) return true;
    v = (long double)p->value.f64;
  } else {
    return true;
  }
  if (!stat_number(n, order, mn, &lo) || !stat_number(n, order, mx, &hi)) return true;
  if (lo > hi) return true; /* inconsistent statistics: trust nothing */
  return range_may_match(p->op, cmp_ld(lo, v), cmp_ld(hi, v));
}

hs_status hs_pq_prune_row_group(const hs_pq_schema *schema, const hs_pq_row_group *rg,
                                const hs_stat_predicate *preds, size_t n_preds, bool *keep,
                                hs_error *err) {
  *keep = true;
  for (size_t i = 0; i < n_preds; i++) {
    const hs_stat_predicate *p = &preds[i];
    if (p->column == NULL) {
      return hs_error_set(err, HS_ERR_INVALID_ARG, "predicate %zu has no column", i);
    }
    const hs_pq_node *n = hs_pq_schema_find(schema, p->column);
    if (n == NULL) {
      return hs_error_set(err, HS_ERR_NOT_FOUND, "predicate column '%s' not found", p->column);
    }
    if (n->kind != HS_PQ_NODE_LEAF) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "predicate column '%s' is not a top-level primitive column", p->column);
    }
    if ((uint32_t)p->op > HS_CMP_GE) {
      return hs_error_set(err, HS_ERR_INVALID_ARG, "predicate on '%s' has unknown operator %d",
                          p->column, (int)p->op);
    }
    if (!chunk_may_match(n, rg, p)) {
      *keep = false;
      return HS_OK;
    }
  }
  return HS_OK;
}
