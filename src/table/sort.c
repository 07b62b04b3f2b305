/*
 * sort.c — sort orders and the row machinery of clustered writes: reading
 * a top-level column's values as Iceberg values, the stable sort of rows
 * by a table sort order, gathering rows of several batches into one batch
 * (the "take" that splits a write into per-partition files), and
 * hs_table_set_sort_order (a metadata-only commit).
 *
 * Ordering follows the Iceberg spec ("Sorting"): nulls first or last per
 * key, independent of direction; floats in the total order
 * -NaN < -Infinity < -value < -0 < 0 < value < Infinity < NaN; strings and
 * binary by unsigned bytes (UTF-8 byte order is code point order).
 *
 * The take works on runs (batch, first row, count): rows that are
 * consecutive in one source batch are copied as one range, and the child of
 * a list column needs one run per parent run (its values are contiguous),
 * so a vector column is copied with one memcpy per run.
 */
#include <math.h>
#include <string.h>

#include "../arrow/arrow.h"
#include "lineage.h"
#include "table.h"

#define TAKE_DEPTH_MAX 64

/* ------------------------------------------------------------- columns */

hs_status hs_table_column_bind(const struct ArrowSchema *arrow, const hs_iceberg_schema *schema,
                               int32_t field_id, hs_table_column *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  const hs_iceberg_type *root = &schema->root;
  size_t idx = root->n_fields;
  for (size_t i = 0; i < root->n_fields; i++)
    if (root->fields[i].id == field_id) idx = i;
  if (idx == root->n_fields) {
    const hs_iceberg_field *f = NULL;
    return hs_iceberg_schema_find(schema, field_id, &f) != NULL
               ? hs_error_set(err, HS_ERR_UNSUPPORTED,
                              "field id %d: only top-level columns can be partitioned or sorted",
                              (int)field_id)
               : hs_error_set(err, HS_ERR_SCHEMA, "field id %d is not in the table schema",
                              (int)field_id);
  }
  const hs_iceberg_field *f = &root->fields[idx];
  if (f->type.id == HS_ICE_STRUCT || f->type.id == HS_ICE_LIST || f->type.id == HS_ICE_MAP) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "column '%s': a %s cannot be partitioned or sorted", f->name,
                        hs_iceberg_type_name(f->type.id));
  }
  /* A rewriter's stream may end with the v3 lineage columns (lineage.h). */
  if (arrow->n_children < 0 ||
      (size_t)arrow->n_children - hs_lineage_trailing(arrow) != root->n_fields) {
    return hs_error_set(err, HS_ERR_SCHEMA, "column '%s': Arrow schema has %lld columns, table %zu",
                        f->name, (long long)arrow->n_children, root->n_fields);
  }
  const struct ArrowSchema *child = arrow->children[idx];
  if (child->dictionary != NULL) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "column '%s': dictionary-encoded input cannot be partitioned or sorted",
                        f->name);
  }
  hs_status st = hs_arrow_type_parse(child->format, &out->at, err);
  if (st != HS_OK) return st;
  switch (out->at.id) {
  case HS_AT_NA:
  case HS_AT_BOOL:
  case HS_AT_INT8:
  case HS_AT_UINT8:
  case HS_AT_INT16:
  case HS_AT_UINT16:
  case HS_AT_INT32:
  case HS_AT_UINT32:
  case HS_AT_INT64:
  case HS_AT_UINT64:
  case HS_AT_FLOAT32:
  case HS_AT_FLOAT64:
  case HS_AT_BINARY:
  case HS_AT_LARGE_BINARY:
  case HS_AT_STRING:
  case HS_AT_LARGE_STRING:
  case HS_AT_FIXED_BINARY:
  case HS_AT_DECIMAL128:
  case HS_AT_DATE32:
  case HS_AT_DATE64:
  case HS_AT_TIME32:
  case HS_AT_TIME64:
  case HS_AT_TIMESTAMP: break;
  default:
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "column '%s': Arrow type '%s' cannot be partitioned or sorted", f->name,
                        child->format);
  }
  out->index = idx;
  out->it = &f->type;
  out->name = f->name;
  return HS_OK;
}

/* a * m, saturated (a bound for values no Iceberg reader can represent). */
static int64_t scale_sat(int64_t a, int64_t m) {
  int64_t r;
  if (__builtin_mul_overflow(a, m, &r)) return a < 0 ? INT64_MIN : INT64_MAX;
  return r;
}

static int64_t floor_div(int64_t a, int64_t d) {
  int64_t q = a / d;
  return (a % d != 0 && a < 0) ? q - 1 : q;
}

void hs_table_column_value(const hs_table_column *c, const struct ArrowArray *batch, int64_t row,
                           hs_iceberg_value *v) {
  memset(v, 0, sizeof *v);
  if (c->at.id == HS_AT_NA) { /* also a column the batch lacks */
    v->is_null = true;
    return;
  }
  const struct ArrowArray *a = batch->children[c->index];
  int64_t i = row + batch->offset; /* struct child slot */
  if (!hs_arrow_is_valid(a, i)) {
    v->is_null = true;
    return;
  }
  int64_t j = i + a->offset;
  const uint8_t *d = a->buffers[1];
  switch (c->at.id) {
  case HS_AT_BOOL: v->b = (d[j >> 3] >> (j & 7)) & 1; break;
  case HS_AT_INT8: v->i64 = ((const int8_t *)d)[j]; break;
  case HS_AT_UINT8: v->i64 = d[j]; break;
  case HS_AT_INT16: v->i64 = ((const int16_t *)d)[j]; break;
  case HS_AT_UINT16: v->i64 = ((const uint16_t *)d)[j]; break;
  case HS_AT_INT32: v->i64 = ((const int32_t *)d)[j]; break;
  case HS_AT_UINT32: v->i64 = ((const uint32_t *)d)[j]; break;
  case HS_AT_INT64: v->i64 = ((const int64_t *)d)[j]; break;
  case HS_AT_UINT64: v->i64 = (int64_t)((const uint64_t *)d)[j]; break;
  case HS_AT_FLOAT32: v->f64 = ((const float *)d)[j]; break;
  case HS_AT_FLOAT64: v->f64 = ((const double *)d)[j]; break;
  case HS_AT_DECIMAL128:
    v->dec_lo = hs_load_u64le(d + 16 * j);
    v->dec_hi = (int64_t)hs_load_u64le(d + 16 * j + 8);
    break;
  case HS_AT_DATE32: v->i64 = ((const int32_t *)d)[j]; break;
  case HS_AT_DATE64: v->i64 = floor_div(((const int64_t *)d)[j], 86400000); break;
  case HS_AT_TIME32:
    v->i64 = scale_sat(((const int32_t *)d)[j], c->at.unit == HS_UNIT_S ? 1000000 : 1000);
    break;
  case HS_AT_TIME64: {
    int64_t x = ((const int64_t *)d)[j];
    v->i64 = c->at.unit == HS_UNIT_NS ? floor_div(x, 1000) : x;
    break;
  }
  case HS_AT_TIMESTAMP: {
    int64_t x = ((const int64_t *)d)[j];
    bool ns = c->it->id == HS_ICE_TIMESTAMP_NS || c->it->id == HS_ICE_TIMESTAMPTZ_NS;
    switch (c->at.unit) {
    case HS_UNIT_S: v->i64 = scale_sat(x, ns ? 1000000000 : 1000000); break;
    case HS_UNIT_MS: v->i64 = scale_sat(x, ns ? 1000000 : 1000); break;
    case HS_UNIT_US: v->i64 = ns ? scale_sat(x, 1000) : x; break;
    default: v->i64 = ns ? x : floor_div(x, 1000); break;
    }
    break;
  }
  case HS_AT_BINARY:
  case HS_AT_STRING: {
    const int32_t *off = (const int32_t *)d;
    v->bytes = (const uint8_t *)a->buffers[2] + off[j];
    v->len = (size_t)(off[j + 1] - off[j]);
    break;
  }
  case HS_AT_LARGE_BINARY:
  case HS_AT_LARGE_STRING: {
    const int64_t *off = (const int64_t *)d;
    v->bytes = (const uint8_t *)a->buffers[2] + off[j];
    v->len = (size_t)(off[j + 1] - off[j]);
    break;
  }
  case HS_AT_FIXED_BINARY:
    v->bytes = d + (size_t)j * (size_t)c->at.width;
    v->len = (size_t)c->at.width;
    break;
  default: v->is_null = true; break;
  }
}

/* ------------------------------------------------------------- sorting */

typedef struct sort_ctx {
  const hs_table_sort_key *keys;
  size_t n_keys;
  const struct ArrowArray *batches;
} sort_ctx;

static int row_cmp(const sort_ctx *s, const hs_table_row *x, const hs_table_row *y) {
  for (size_t k = 0; k < s->n_keys; k++) {
    const hs_table_sort_key *key = &s->keys[k];
    hs_iceberg_value a, b;
    hs_table_column_value(&key->col, &s->batches[x->batch], x->row, &a);
    hs_table_column_value(&key->col, &s->batches[y->batch], y->row, &b);
    if (a.is_null || b.is_null) {
      if (a.is_null && b.is_null) continue;
      return (a.is_null == key->nulls_first) ? -1 : 1;
    }
    int c = hs_iceberg_value_cmp(key->col.it, &a, &b);
    if (c != 0) return key->descending ? -c : c;
  }
  return 0;
}

/* Bottom-up merge sort (stable): runs of width w from src merged into dst. */
hs_status hs_table_sort_rows(const hs_table_sort_key *keys, size_t n_keys,
                             const struct ArrowArray *batches, hs_table_row *rows, size_t n,
                             hs_error *err) {
  if (n_keys == 0 || n < 2) return HS_OK;
  size_t bytes;
  if (!hs_mul_size(n, sizeof *rows, &bytes))
    return hs_error_set(err, HS_ERR_NOMEM, "sort: %zu rows overflow", n);
  hs_table_row *tmp = hs_malloc(bytes);
  if (tmp == NULL) return hs_error_set(err, HS_ERR_NOMEM, "sort: out of memory (%zu rows)", n);
  sort_ctx s = {keys, n_keys, batches};
  /* Insertion sort of blocks of 16 first: fewer passes, cheap on short runs. */
  const size_t block = 16;
  for (size_t lo = 0; lo < n; lo += block) {
    size_t hi = lo + block < n ? lo + block : n;
    for (size_t i = lo + 1; i < hi; i++) {
      hs_table_row r = rows[i];
      size_t j = i;
      while (j > lo && row_cmp(&s, &rows[j - 1], &r) > 0) {
        rows[j] = rows[j - 1];
        j--;
      }
      rows[j] = r;
    }
  }
  hs_table_row *src = rows, *dst = tmp;
  for (size_t w = block; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, k = lo;
      /* Already in order: copy through. */
      if (mid < hi && row_cmp(&s, &src[mid - 1], &src[mid]) <= 0) {
        memcpy(dst + lo, src + lo, (hi - lo) * sizeof *src);
        continue;
      }
      while (i < mid && j < hi) dst[k++] = row_cmp(&s, &src[j], &src[i]) < 0 ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    hs_table_row *t = src;
    src = dst;
    dst = t;
  }
  if (src != rows) memcpy(rows, src, n * sizeof *rows);
  hs_free(tmp);
  return HS_OK;
}

hs_status hs_table_sort_keys(const hs_iceberg_sort_order *order, const struct ArrowSchema *arrow,
                             const hs_iceberg_schema *schema, hs_arena *arena,
                             hs_table_sort_key **out, hs_error *err) {
  *out = NULL;
  if (order == NULL || order->n_fields == 0) return HS_OK;
  hs_table_sort_key *keys = hs_arena_alloc(arena, order->n_fields * sizeof *keys);
  if (keys == NULL) return hs_error_set(err, HS_ERR_NOMEM, "sort order: out of memory");
  for (size_t i = 0; i < order->n_fields; i++) {
    const hs_iceberg_sort_field *f = &order->fields[i];
    if (f->transform.kind != HS_ICE_T_IDENTITY || f->n_source_ids != 0) {
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "sort order %d field %zu: only identity sort fields are applied",
                          (int)order->order_id, i);
    }
    hs_status st = hs_table_column_bind(arrow, schema, f->source_id, &keys[i].col, err);
    if (st != HS_OK) {
      hs_error_prefix(err, "sort order %d: ", (int)order->order_id);
      return st;
    }
    keys[i].descending = f->descending;
    keys[i].nulls_first = f->nulls_first;
  }
  *out = keys;
  return HS_OK;
}

/* ---------------------------------------------------------------- take */

typedef struct run {
  int64_t start, len; /* logical rows of the source array at this level */
  uint32_t batch;
} run;

static void copy_bits(uint8_t *dst, int64_t at, const uint8_t *src, int64_t from, int64_t n) {
  for (int64_t k = 0; k < n; k++) {
    int64_t s = from + k, d = at + k;
    if ((src[s >> 3] >> (s & 7)) & 1) {
      dst[d >> 3] |= (uint8_t)(1u << (d & 7));
    } else {
      dst[d >> 3] &= (uint8_t) ~(1u << (d & 7));
    }
  }
}

static uint8_t *alloc_bytes(size_t n, const char *what, hs_error *err) {
  uint8_t *p = hs_calloc(1, n ? n : 1);
  if (p == NULL) hs_error_set(err, HS_ERR_NOMEM, "take: %s: out of memory (%zu bytes)", what, n);
  return p;
}

static hs_status take_node(const struct ArrowSchema *s, const struct ArrowArray *const *arrs,
                           size_t n_arrs, const run *runs, size_t n_runs, int64_t n,
                           struct ArrowArray *out, int depth, hs_error *err);

/* Children of list-like nodes: the runs over the child arrays. */
static hs_status take_children(const struct ArrowSchema *s, const struct ArrowArray *const *arrs,
                               size_t n_arrs, int64_t child_index, const run *cruns, size_t n_runs,
                               int64_t n, struct ArrowArray *out, int depth, hs_error *err) {
  const struct ArrowArray **carrs = hs_calloc(n_arrs ? n_arrs : 1, sizeof *carrs);
  if (carrs == NULL) return hs_error_set(err, HS_ERR_NOMEM, "take: out of memory");
  for (size_t b = 0; b < n_arrs; b++) carrs[b] = arrs[b]->children[child_index];
  hs_status st = take_node(s->children[child_index], carrs, n_arrs, cruns, n_runs, n,
                           out->children[child_index], depth + 1, err);
  hs_free(carrs);
  return st;
}

static hs_status take_node(const struct ArrowSchema *s, const struct ArrowArray *const *arrs,
                           size_t n_arrs, const run *runs, size_t n_runs, int64_t n,
                           struct ArrowArray *out, int depth, hs_error *err) {
  const char *name = s->name ? s->name : "";
  if (depth > TAKE_DEPTH_MAX) return hs_error_set(err, HS_ERR_UNSUPPORTED, "take: too deep");
  if (s->dictionary != NULL)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s': dictionary arrays", name);
  hs_arrow_type at;
  hs_status st = hs_arrow_type_parse(s->format, &at, err);
  if (st != HS_OK) return st;
  int64_t n_buffers, n_children = 0;
  switch (at.id) {
  case HS_AT_NA: n_buffers = 0; break;
  case HS_AT_BINARY:
  case HS_AT_LARGE_BINARY:
  case HS_AT_STRING:
  case HS_AT_LARGE_STRING: n_buffers = 3; break;
  case HS_AT_STRUCT:
    n_buffers = 1;
    n_children = s->n_children;
    break;
  case HS_AT_FIXED_LIST:
    n_buffers = 1;
    n_children = 1;
    break;
  case HS_AT_LIST:
  case HS_AT_LARGE_LIST:
  case HS_AT_MAP:
    n_buffers = 2;
    n_children = 1;
    break;
  default:
    if (hs_arrow_type_byte_width(&at) < 0 && at.id != HS_AT_BOOL)
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s': cannot gather Arrow type '%s'",
                          name, s->format);
    n_buffers = 2;
    break;
  }
  if (n_children != s->n_children)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': %lld children, expected %lld", name,
                        (long long)s->n_children, (long long)n_children);
  if ((st = hs_arrow_array_init(out, n_buffers, n_children, err)) != HS_OK) return st;
  out->length = n;
  out->offset = 0;
  out->null_count = 0;
  if (at.id == HS_AT_NA) {
    out->null_count = n;
    return HS_OK;
  }

  /* Validity. */
  bool any_nulls = false;
  for (size_t b = 0; b < n_arrs; b++)
    if (arrs[b]->n_buffers > 0 && arrs[b]->buffers[0] != NULL && arrs[b]->null_count != 0)
      any_nulls = true;
  if (any_nulls) {
    uint8_t *bits = alloc_bytes((size_t)(n + 7) / 8, "validity", err);
    if (bits == NULL) return HS_ERR_NOMEM;
    hs_arrow_array_set_buffer(out, 0, bits);
    int64_t at_row = 0, nulls = 0;
    for (size_t r = 0; r < n_runs; r++) {
      const struct ArrowArray *a = arrs[runs[r].batch];
      const uint8_t *v = a->buffers[0];
      if (v == NULL || a->null_count == 0) {
        for (int64_t k = 0; k < runs[r].len; k++)
          bits[(at_row + k) >> 3] |= (uint8_t)(1u << ((at_row + k) & 7));
      } else {
        copy_bits(bits, at_row, v, runs[r].start + a->offset, runs[r].len);
      }
      at_row += runs[r].len;
    }
    for (int64_t k = 0; k < n; k++) nulls += !((bits[k >> 3] >> (k & 7)) & 1);
    out->null_count = nulls;
  }

  switch (at.id) {
  case HS_AT_BOOL: {
    uint8_t *bits = alloc_bytes((size_t)(n + 7) / 8, name, err);
    if (bits == NULL) return HS_ERR_NOMEM;
    hs_arrow_array_set_buffer(out, 1, bits);
    int64_t at_row = 0;
    for (size_t r = 0; r < n_runs; r++) {
      const struct ArrowArray *a = arrs[runs[r].batch];
      copy_bits(bits, at_row, a->buffers[1], runs[r].start + a->offset, runs[r].len);
      at_row += runs[r].len;
    }
    return HS_OK;
  }
  case HS_AT_BINARY:
  case HS_AT_STRING:
  case HS_AT_LARGE_BINARY:
  case HS_AT_LARGE_STRING: {
    bool large = at.id == HS_AT_LARGE_BINARY || at.id == HS_AT_LARGE_STRING;
    size_t ow = large ? 8 : 4;
    uint64_t total = 0;
    for (size_t r = 0; r < n_runs; r++) {
      const struct ArrowArray *a = arrs[runs[r].batch];
      int64_t lo = runs[r].start + a->offset, hi = lo + runs[r].len;
      int64_t x =
          large ? ((const int64_t *)a->buffers[1])[lo] : ((const int32_t *)a->buffers[1])[lo];
      int64_t y =
          large ? ((const int64_t *)a->buffers[1])[hi] : ((const int32_t *)a->buffers[1])[hi];
      if (y < x)
        return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': offsets decrease", name);
      total += (uint64_t)(y - x);
    }
    if (!large && total > (uint64_t)INT32_MAX)
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "column '%s': %llu bytes in one partition batch exceed 32-bit offsets",
                          name, (unsigned long long)total);
    uint8_t *offs = alloc_bytes((size_t)(n + 1) * ow, name, err);
    uint8_t *data = offs ? alloc_bytes((size_t)total, name, err) : NULL;
    if (data == NULL) {
      hs_free(offs);
      return HS_ERR_NOMEM;
    }
    hs_arrow_array_set_buffer(out, 1, offs);
    hs_arrow_array_set_buffer(out, 2, data);
    int64_t at_row = 0, pos = 0;
    for (size_t r = 0; r < n_runs; r++) {
      const struct ArrowArray *a = arrs[runs[r].batch];
      int64_t lo = runs[r].start + a->offset, len = runs[r].len;
      const int32_t *o32 = a->buffers[1];
      const int64_t *o64 = a->buffers[1];
      int64_t first = large ? o64[lo] : o32[lo];
      for (int64_t k = 0; k <= len; k++) {
        int64_t v = pos + ((large ? o64[lo + k] : o32[lo + k]) - first);
        if (large) {
          ((int64_t *)offs)[at_row + k] = v;
        } else {
          ((int32_t *)offs)[at_row + k] = (int32_t)v;
        }
      }
      int64_t last = large ? o64[lo + len] : o32[lo + len];
      if (last > first)
        memcpy(data + pos, (const uint8_t *)a->buffers[2] + first, (size_t)(last - first));
      pos += last - first;
      at_row += len;
    }
    return HS_OK;
  }
  case HS_AT_STRUCT: {
    for (int64_t c = 0; c < n_children; c++) {
      run *cr = hs_malloc((n_runs ? n_runs : 1) * sizeof *cr);
      if (cr == NULL) return hs_error_set(err, HS_ERR_NOMEM, "take: out of memory");
      for (size_t r = 0; r < n_runs; r++) {
        cr[r] = runs[r];
        cr[r].start += arrs[runs[r].batch]->offset;
      }
      st = take_children(s, arrs, n_arrs, c, cr, n_runs, n, out, depth, err);
      hs_free(cr);
      if (st != HS_OK) return st;
    }
    return HS_OK;
  }
  case HS_AT_FIXED_LIST:
  case HS_AT_LIST:
  case HS_AT_LARGE_LIST:
  case HS_AT_MAP: {
    bool fixed = at.id == HS_AT_FIXED_LIST, large = at.id == HS_AT_LARGE_LIST;
    run *cr = hs_malloc((n_runs ? n_runs : 1) * sizeof *cr);
    uint8_t *offs = NULL;
    if (cr == NULL) return hs_error_set(err, HS_ERR_NOMEM, "take: out of memory");
    if (!fixed && (offs = alloc_bytes((size_t)(n + 1) * (large ? 8 : 4), name, err)) == NULL) {
      hs_free(cr);
      return HS_ERR_NOMEM;
    }
    if (offs != NULL) hs_arrow_array_set_buffer(out, 1, offs);
    int64_t at_row = 0, pos = 0;
    for (size_t r = 0; r < n_runs; r++) {
      const struct ArrowArray *a = arrs[runs[r].batch];
      int64_t lo = runs[r].start + a->offset;
      cr[r].batch = runs[r].batch;
      if (fixed) {
        cr[r].start = lo * at.width;
        cr[r].len = runs[r].len * at.width;
        continue;
      }
      const int32_t *o32 = a->buffers[1];
      const int64_t *o64 = a->buffers[1];
      int64_t first = large ? o64[lo] : o32[lo];
      for (int64_t k = 0; k <= runs[r].len; k++) {
        int64_t o = large ? o64[lo + k] : o32[lo + k];
        if (o < first) {
          hs_free(cr);
          return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': offsets decrease", name);
        }
        if (large) {
          ((int64_t *)offs)[at_row + k] = pos + (o - first);
        } else if (pos + (o - first) > INT32_MAX) {
          hs_free(cr);
          return hs_error_set(err, HS_ERR_UNSUPPORTED,
                              "column '%s': list values in one partition batch exceed 32-bit "
                              "offsets",
                              name);
        } else {
          ((int32_t *)offs)[at_row + k] = (int32_t)(pos + (o - first));
        }
      }
      int64_t last = large ? o64[lo + runs[r].len] : o32[lo + runs[r].len];
      cr[r].start = first;
      cr[r].len = last - first;
      pos += last - first;
      at_row += runs[r].len;
    }
    int64_t child_n = fixed ? n * at.width : pos;
    st = take_children(s, arrs, n_arrs, 0, cr, n_runs, child_n, out, depth, err);
    hs_free(cr);
    return st;
  }
  default: {
    size_t w = (size_t)hs_arrow_type_byte_width(&at);
    size_t bytes;
    if (!hs_mul_size((size_t)n, w, &bytes))
      return hs_error_set(err, HS_ERR_NOMEM, "column '%s': too large", name);
    uint8_t *vals = alloc_bytes(bytes, name, err);
    if (vals == NULL) return HS_ERR_NOMEM;
    hs_arrow_array_set_buffer(out, 1, vals);
    size_t at_byte = 0;
    for (size_t r = 0; r < n_runs; r++) {
      const struct ArrowArray *a = arrs[runs[r].batch];
      const uint8_t *src = a->buffers[1];
      size_t len = (size_t)runs[r].len * w;
      if (len) memcpy(vals + at_byte, src + (size_t)(runs[r].start + a->offset) * w, len);
      at_byte += len;
    }
    return HS_OK;
  }
  }
}

hs_status hs_table_take(const struct ArrowSchema *schema, const struct ArrowArray *batches,
                        const hs_table_row *rows, size_t n, struct ArrowArray *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  size_t n_batches = 0;
  for (size_t i = 0; i < n; i++)
    if ((size_t)rows[i].batch + 1 > n_batches) n_batches = (size_t)rows[i].batch + 1;
  run *runs = hs_malloc((n ? n : 1) * sizeof *runs);
  const struct ArrowArray **arrs = hs_calloc(n_batches ? n_batches : 1, sizeof *arrs);
  if (runs == NULL || arrs == NULL) {
    hs_free(runs);
    hs_free(arrs);
    return hs_error_set(err, HS_ERR_NOMEM, "take: out of memory (%zu rows)", n);
  }
  for (size_t b = 0; b < n_batches; b++) arrs[b] = &batches[b];
  size_t n_runs = 0;
  for (size_t i = 0; i < n; i++) {
    run *last = n_runs ? &runs[n_runs - 1] : NULL;
    if (last && last->batch == rows[i].batch && last->start + last->len == rows[i].row) {
      last->len++;
    } else {
      runs[n_runs++] = (run){.start = rows[i].row, .len = 1, .batch = rows[i].batch};
    }
  }
  hs_status st = take_node(schema, arrs, n_batches, runs, n_runs, (int64_t)n, out, 0, err);
  if (st != HS_OK) hs_arrow_array_release(out);
  hs_free(runs);
  hs_free(arrs);
  return st;
}

/* ---------------------------------------------------- set_sort_order */

typedef struct order_req {
  const char *const *columns;
  const int *ascending, *nulls_first;
  size_t n;
} order_req;

static bool orders_equal(const hs_iceberg_sort_order *a, const hs_iceberg_sort_order *b) {
  if (a->n_fields != b->n_fields) return false;
  for (size_t i = 0; i < a->n_fields; i++) {
    const hs_iceberg_sort_field *x = &a->fields[i], *y = &b->fields[i];
    if (x->transform.kind != y->transform.kind || x->transform.param != y->transform.param ||
        x->source_id != y->source_id || x->n_source_ids || y->n_source_ids ||
        x->descending != y->descending || x->nulls_first != y->nulls_first)
      return false;
  }
  return true;
}

static hs_status order_edit(const hs_iceberg_metadata *old, hs_iceberg_metadata *m, hs_arena *a,
                            void *ctx, bool *changed, hs_error *err) {
  const order_req *rq = ctx;
  const hs_iceberg_schema *schema = hs_iceberg_metadata_schema(old, old->current_schema_id);
  if (schema == NULL) return hs_error_set(err, HS_ERR_CORRUPT, "no current schema");
  hs_iceberg_sort_order want = {0};
  want.n_fields = rq->n;
  if (rq->n && (want.fields = hs_arena_alloc(a, rq->n * sizeof *want.fields)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "sort order: out of memory");
  for (size_t i = 0; i < rq->n; i++) {
    const char *col = rq->columns[i];
    const hs_iceberg_field *f = NULL;
    for (size_t k = 0; col && k < schema->root.n_fields; k++)
      if (strcmp(schema->root.fields[k].name, col) == 0) f = &schema->root.fields[k];
    if (f == NULL)
      return hs_error_set(err, HS_ERR_SCHEMA, "sort order: no column '%s'", col ? col : "(null)");
    if (f->type.id == HS_ICE_STRUCT || f->type.id == HS_ICE_LIST || f->type.id == HS_ICE_MAP)
      return hs_error_set(err, HS_ERR_SCHEMA, "sort order: column '%s' is a %s: not sortable", col,
                          hs_iceberg_type_name(f->type.id));
    for (size_t k = 0; k < i; k++)
      if (want.fields[k].source_id == f->id)
        return hs_error_set(err, HS_ERR_INVALID_ARG, "sort order: column '%s' given twice", col);
    hs_iceberg_sort_field *sf = &want.fields[i];
    sf->transform.kind = HS_ICE_T_IDENTITY;
    sf->source_id = f->id;
    sf->descending = rq->ascending ? !rq->ascending[i] : false;
    /* Iceberg's default: nulls first ascending, last descending. */
    sf->nulls_first = rq->nulls_first ? rq->nulls_first[i] != 0 : !sf->descending;
  }
  int32_t max_id = 0, reuse = -1;
  for (size_t i = 0; i < old->n_sort_orders; i++) {
    const hs_iceberg_sort_order *o = &old->sort_orders[i];
    if (o->order_id > max_id) max_id = o->order_id;
    if (orders_equal(o, &want) && (o->n_fields != 0 || o->order_id == 0)) reuse = o->order_id;
  }
  /* The unsorted order is always id 0 (spec). */
  if (rq->n == 0) reuse = 0;
  if (reuse >= 0) {
    bool have = false;
    for (size_t i = 0; i < old->n_sort_orders; i++) have |= old->sort_orders[i].order_id == reuse;
    if (have) {
      *changed = !old->has_default_sort_order_id || old->default_sort_order_id != reuse;
      m->has_default_sort_order_id = true;
      m->default_sort_order_id = reuse;
      return HS_OK;
    }
  }
  want.order_id = reuse >= 0 ? reuse : max_id + 1;
  hs_iceberg_sort_order *orders = hs_arena_alloc(a, (old->n_sort_orders + 1) * sizeof *orders);
  if (orders == NULL) return hs_error_set(err, HS_ERR_NOMEM, "sort order: out of memory");
  if (old->n_sort_orders) memcpy(orders, old->sort_orders, old->n_sort_orders * sizeof *orders);
  orders[old->n_sort_orders] = want;
  m->sort_orders = orders;
  m->n_sort_orders = old->n_sort_orders + 1;
  m->has_default_sort_order_id = true;
  m->default_sort_order_id = want.order_id;
  *changed = true;
  return HS_OK;
}

hs_status hs_table_set_sort_order(hs_table *table, const char *const *columns, const int *ascending,
                                  const int *nulls_first, size_t n, hs_error *err) {
  if (table == NULL || (n > 0 && columns == NULL))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "set_sort_order: no table or columns");
  order_req rq = {columns, ascending, nulls_first, n};
  return hs_table_commit_metadata(table, "set_sort_order", order_edit, &rq, err);
}

hs_status hs_table_order_edit_apply(const hs_iceberg_metadata *old, hs_iceberg_metadata *m,
                                    hs_arena *a, const char *const *columns, const int *ascending,
                                    const int *nulls_first, size_t n, hs_error *err) {
  order_req rq = {columns, ascending, nulls_first, n};
  bool changed = false;
  return order_edit(old, m, a, &rq, &changed, err);
}
