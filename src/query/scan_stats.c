/*
 * scan_stats.c — statistics for the scan's pruning (scan.h): Iceberg
 * manifest bounds, null/NaN counts and partition values of a data file, and
 * Parquet column-chunk statistics of a row group, converted exactly into
 * hs_expr_stats of the column's own Arrow type (or left unknown). Split
 * out of scan.c, unchanged.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_internal.h"
#include "scan.h"
/* ------------------------------------------------------- scalar helpers */

static int cmp_scalar(const hs_expr_col *col, const hs_expr_scalar *a, const hs_expr_scalar *b) {
  switch (col->dom) {
  case HS_DOM_I64: return a->i64 < b->i64 ? -1 : a->i64 > b->i64;
  case HS_DOM_U64: return a->u64 < b->u64 ? -1 : a->u64 > b->u64;
  case HS_DOM_F64: return hs_expr_cmp_f64(a->f64, b->f64);
  case HS_DOM_DEC: {
    hs_i128 x, y;
    memcpy(&x, a->dec, 16);
    memcpy(&y, b->dec, 16);
    return x < y ? -1 : x > y;
  }
  case HS_DOM_BYTES: {
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->bytes, b->bytes, n) : 0;
    if (c != 0) return c < 0 ? -1 : 1;
    return a->len < b->len ? -1 : a->len > b->len;
  }
  case HS_DOM_BOOL: return (int)a->b - (int)b->b;
  }
  return 0;
}

static void dec_from_i128(hs_i128 v, hs_expr_scalar *out) {
  memcpy(out->dec, &v, 16);
}

/* Big-endian two's complement (1..16 bytes) to a 128-bit integer. */
static bool dec_from_be(const uint8_t *p, size_t n, hs_expr_scalar *out) {
  if (n == 0 || n > 16) return false;
  unsigned __int128 u = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
  for (size_t i = 0; i < n; i++) u = (u << 8) | p[i];
  dec_from_i128((hs_i128)u, out);
  return true;
}

/* --------------------------------------------- Iceberg bounds -> scalars */

/* Value `v` of Iceberg type `it` as a scalar of Arrow type `at`; false when
 * it cannot be represented exactly (then nothing is assumed). */
static bool ice_scalar(const hs_iceberg_type *it, const hs_arrow_type *at,
                       const hs_iceberg_value *v, hs_expr_scalar *out) {
  memset(out, 0, sizeof *out);
  switch (at->id) {
  case HS_AT_INT8:
  case HS_AT_INT16:
  case HS_AT_INT32:
  case HS_AT_INT64:
    if (it->id != HS_ICE_INT && it->id != HS_ICE_LONG) return false;
    out->i64 = v->i64;
    return true;
  case HS_AT_DATE32:
    if (it->id != HS_ICE_DATE) return false;
    out->i64 = v->i64;
    return true;
  case HS_AT_TIMESTAMP: {
    bool us = it->id == HS_ICE_TIMESTAMP || it->id == HS_ICE_TIMESTAMPTZ;
    bool ns = it->id == HS_ICE_TIMESTAMP_NS || it->id == HS_ICE_TIMESTAMPTZ_NS;
    if (!((us && at->unit == HS_UNIT_US) || (ns && at->unit == HS_UNIT_NS))) return false;
    out->i64 = v->i64;
    return true;
  }
  case HS_AT_FLOAT32:
  case HS_AT_FLOAT64:
    if ((it->id != HS_ICE_FLOAT && it->id != HS_ICE_DOUBLE) || isnan(v->f64)) return false;
    if (at->id == HS_AT_FLOAT32 && it->id != HS_ICE_FLOAT) return false;
    out->f64 = v->f64;
    return true;
  case HS_AT_DECIMAL128:
    if (it->id != HS_ICE_DECIMAL || it->scale != at->scale) return false;
    dec_from_i128((hs_i128)(((unsigned __int128)(uint64_t)v->dec_hi << 64) | v->dec_lo), out);
    return true;
  case HS_AT_STRING:
  case HS_AT_LARGE_STRING:
    if (it->id != HS_ICE_STRING) return false;
    out->bytes = v->bytes;
    out->len = v->len;
    return true;
  case HS_AT_BINARY:
  case HS_AT_LARGE_BINARY:
    if (it->id != HS_ICE_BINARY) return false;
    out->bytes = v->bytes;
    out->len = v->len;
    return true;
  case HS_AT_BOOL:
    if (it->id != HS_ICE_BOOLEAN) return false;
    out->b = v->b;
    return true;
  default: return false;
  }
}

/* Code points of UTF-8 bytes (continuation bytes not counted). */
static size_t utf8_len(const uint8_t *p, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += (p[i] & 0xC0) != 0x80;
  return k;
}

/* The truncation length of string/binary bounds for column `name`
 * (Iceberg's write.metadata.metrics.* properties; default truncate(16));
 * SIZE_MAX for "full". */
static size_t metrics_truncate(const hs_iceberg_metadata *meta, const char *name) {
  char key[512];
  snprintf(key, sizeof key, "write.metadata.metrics.column.%s", name);
  const char *mode = hs_iceberg_metadata_property(meta, key);
  if (mode == NULL) mode = hs_iceberg_metadata_property(meta, "write.metadata.metrics.default");
  if (mode == NULL) return 16;
  if (strcmp(mode, "full") == 0) return SIZE_MAX;
  long n = 0;
  if (sscanf(mode, "truncate(%ld)", &n) == 1 && n > 0) return (size_t)n;
  return 16;
}

/* An upper bound that may have been truncated is rounded up: for strings,
 * appending 0xFF (which valid UTF-8 never contains) gives a bound above
 * every string that starts with it; for binaries, no such byte exists and
 * the bound is dropped (false). Writers that increment the last character
 * (Java, pyiceberg, ours) already give a valid bound; this covers those
 * that only cut. */
static bool round_up_upper(const hs_arrow_type *at, size_t trunc, hs_arena *arena,
                           hs_expr_scalar *max, hs_error *err, hs_status *st) {
  bool is_string = at->id == HS_AT_STRING || at->id == HS_AT_LARGE_STRING;
  size_t cps = is_string ? utf8_len(max->bytes, max->len) : max->len;
  if (trunc == SIZE_MAX || cps < trunc) return true;
  if (!is_string) return false;
  uint8_t *p = hs_arena_alloc(arena, max->len + 1);
  if (p == NULL) {
    *st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    return false;
  }
  if (max->len) memcpy(p, max->bytes, max->len);
  p[max->len] = 0xFF;
  max->bytes = p;
  max->len++;
  return true;
}

/* Range [lo, hi] of source values (in the source's own unit: days for
 * dates, us or ns for timestamps) that partition value p of temporal
 * transform `t` stands for. false when unknown or out of range. */
static bool temporal_range(const hs_iceberg_transform *t, const hs_iceberg_type *src, int64_t p,
                           int64_t *lo, int64_t *hi) {
  if (p < -100000000 || p > 100000000) return false; /* keeps the arithmetic in range */
  int64_t per_day;                                   /* source units per day */
  switch (src->id) {
  case HS_ICE_DATE: per_day = 1; break;
  case HS_ICE_TIMESTAMP:
  case HS_ICE_TIMESTAMPTZ: per_day = 86400LL * 1000000; break;
  case HS_ICE_TIMESTAMP_NS:
  case HS_ICE_TIMESTAMPTZ_NS: per_day = 86400LL * 1000000000; break;
  default: return false;
  }
  int64_t d0, d1; /* days [d0, d1) */
  switch (t->kind) {
  case HS_ICE_T_YEAR:
    d0 = hs_days_from_civil(1970 + p, 1, 1), d1 = hs_days_from_civil(1971 + p, 1, 1);
    break;
  case HS_ICE_T_MONTH: {
    int64_t y = 1970 + (p >= 0 ? p / 12 : -((11 - p) / 12)), m = p - (y - 1970) * 12 + 1;
    d0 = hs_days_from_civil(y, m, 1);
    d1 = m == 12 ? hs_days_from_civil(y + 1, 1, 1) : hs_days_from_civil(y, m + 1, 1);
    break;
  }
  case HS_ICE_T_DAY: d0 = p, d1 = p + 1; break;
  case HS_ICE_T_HOUR:
    if (per_day == 1 || p < -2400000 || p > 2400000) return false;
    *lo = p * (per_day / 24);
    *hi = *lo + per_day / 24 - 1;
    return true;
  default: return false;
  }
  if (per_day > 1 && (d0 < -100000 || d1 > 100000)) return false; /* ns overflow beyond ~270 y */
  *lo = d0 * per_day;
  *hi = d1 * per_day - 1;
  return true;
}

/* Bounds implied by partition field `pf` with value `pv` for a column of
 * Iceberg type `src` / Arrow type `at`. *known false when none. Sets
 * *all_null when the partition value is null under identity. */
static void partition_bounds(const hs_iceberg_partition_field *pf, const hs_iceberg_type *src,
                             const hs_arrow_type *at, const hs_iceberg_value *pv, bool *known,
                             bool *all_null, hs_expr_scalar *lo, hs_expr_scalar *hi,
                             hs_arena *arena) {
  *known = false;
  *all_null = false;
  const hs_iceberg_transform *t = &pf->transform;
  if (pv->is_null) {
    /* identity, truncate and temporal transforms map exactly the null
     * source values to null */
    *all_null = t->kind == HS_ICE_T_IDENTITY || t->kind == HS_ICE_T_TRUNCATE ||
                t->kind == HS_ICE_T_YEAR || t->kind == HS_ICE_T_MONTH || t->kind == HS_ICE_T_DAY ||
                t->kind == HS_ICE_T_HOUR;
    return;
  }
  if (t->kind == HS_ICE_T_IDENTITY) {
    *known = ice_scalar(src, at, pv, lo) && ice_scalar(src, at, pv, hi);
    return;
  }
  if (t->kind == HS_ICE_T_TRUNCATE && (src->id == HS_ICE_INT || src->id == HS_ICE_LONG)) {
    if (!ice_scalar(src, at, pv, lo)) return;
    *hi = *lo;
    if (pv->i64 > INT64_MAX - t->param) return;
    hi->i64 = pv->i64 + t->param - 1;
    *known = true;
    return;
  }
  if (t->kind == HS_ICE_T_TRUNCATE && src->id == HS_ICE_STRING) {
    if (!ice_scalar(src, at, pv, lo)) return;
    *hi = *lo;
    if (utf8_len(pv->bytes, pv->len) >= (size_t)t->param) {
      uint8_t *p = hs_arena_alloc(arena, pv->len + 1);
      if (p == NULL) return; /* nothing assumed */
      if (pv->len) memcpy(p, pv->bytes, pv->len);
      p[pv->len] = 0xFF; /* above every value with this prefix (see round_up_upper) */
      hi->bytes = p;
      hi->len = pv->len + 1;
    }
    *known = true;
    return;
  }
  if (t->kind == HS_ICE_T_YEAR || t->kind == HS_ICE_T_MONTH || t->kind == HS_ICE_T_DAY ||
      t->kind == HS_ICE_T_HOUR) {
    int64_t a, b;
    hs_iceberg_value va = {0}, vb = {0};
    if (!temporal_range(t, src, pv->i64, &a, &b)) return;
    va.i64 = a;
    vb.i64 = b;
    *known = ice_scalar(src, at, &va, lo) && ice_scalar(src, at, &vb, hi);
  }
}

/* Iceberg field ids are positive: 0 counts as none here. */
static int32_t arrow_field_id(const struct ArrowSchema *f) {
  int32_t id = hs_arrow_field_id(f);
  return id > 0 ? id : -1;
}

hs_status hs_scan_file_stats(const hs_iceberg_metadata *meta, const hs_iceberg_schema *schema,
                             const hs_iceberg_partition_spec *spec,
                             const struct ArrowSchema *fields, const bool *used,
                             const hs_iceberg_data_file *df, hs_arena *arena, hs_expr_stats *stats,
                             hs_error *err) {
  hs_status st = HS_OK;
  for (int64_t i = 0; i < fields->n_children; i++) {
    hs_expr_stats *s = &stats[i];
    hs_expr_stats_init(s);
    if (used != NULL && !used[i]) continue;
    const struct ArrowSchema *f = fields->children[i];
    s->row_count = df->record_count >= 0 ? df->record_count : -1;
    int32_t id = arrow_field_id(f);
    const hs_iceberg_field *ifield = NULL;
    const hs_iceberg_type *it = id > 0 ? hs_iceberg_schema_find(schema, id, &ifield) : NULL;
    hs_arrow_type at;
    if (it == NULL || hs_arrow_type_parse(f->format, &at, NULL) != HS_OK) continue;
    hs_expr_col col;
    char why[8];
    if (hs_expr_col_init(&col, f, why, sizeof why) != HS_OK) continue;
    const hs_iceberg_column_metrics *m = NULL;
    for (size_t k = 0; k < df->n_metrics; k++)
      if (df->metrics[k].field_id == id) m = &df->metrics[k];
    if (m != NULL) {
      if (m->has_null_count) s->null_count = m->null_count;
      if (m->has_nan_count) s->nan_count = m->nan_count;
      hs_iceberg_value lo, hi;
      if (m->lower != NULL && m->upper != NULL &&
          hs_iceberg_value_from_bytes(it, m->lower, m->lower_len, &lo, NULL) == HS_OK &&
          hs_iceberg_value_from_bytes(it, m->upper, m->upper_len, &hi, NULL) == HS_OK &&
          ice_scalar(it, &at, &lo, &s->min) && ice_scalar(it, &at, &hi, &s->max)) {
        s->has_bounds = true;
        if (col.dom == HS_DOM_BYTES) {
          size_t trunc = metrics_truncate(meta, f->name ? f->name : "");
          s->has_bounds = round_up_upper(&at, trunc, arena, &s->max, err, &st);
          if (st != HS_OK) return st;
        }
      }
    }
    /* Partition values: each spec field over this source narrows further. */
    for (size_t p = 0; spec != NULL && p < spec->n_fields && p < df->n_partition; p++) {
      const hs_iceberg_partition_field *pf = &spec->fields[p];
      if (pf->n_source_ids > 0 || pf->source_id != id) continue;
      bool known, all_null;
      hs_expr_scalar lo, hi;
      partition_bounds(pf, it, &at, &df->partition[p], &known, &all_null, &lo, &hi, arena);
      if (all_null) {
        s->null_count = s->row_count >= 0 ? s->row_count : s->null_count;
        continue;
      }
      if (!known) continue;
      if (pf->transform.kind == HS_ICE_T_IDENTITY) s->null_count = 0;
      if (!s->has_bounds) {
        s->min = lo, s->max = hi, s->has_bounds = true;
      } else {
        if (cmp_scalar(&col, &lo, &s->min) > 0) s->min = lo;
        if (cmp_scalar(&col, &hi, &s->max) < 0) s->max = hi;
      }
    }
  }
  return HS_OK;
}

/* ------------------------------------------- Parquet statistics -> scalars */

static bool pq_unit(const hs_pq_schema_element *e, hs_time_unit *out) {
  if (e->logical.kind == HS_PQ_LT_TIMESTAMP) {
    *out = e->logical.unit == HS_PQ_MILLIS   ? HS_UNIT_MS
           : e->logical.unit == HS_PQ_MICROS ? HS_UNIT_US
                                             : HS_UNIT_NS;
    return true;
  }
  if (e->has_converted && e->converted == HS_PQ_CT_TIMESTAMP_MILLIS) return *out = HS_UNIT_MS, true;
  if (e->has_converted && e->converted == HS_PQ_CT_TIMESTAMP_MICROS) return *out = HS_UNIT_US, true;
  return false;
}

static int32_t pq_scale(const hs_pq_schema_element *e) {
  return e->logical.kind == HS_PQ_LT_DECIMAL ? e->logical.decimal_scale : e->scale;
}

/* One statistic as a scalar of Arrow type `at`. `typed` says the bytes
 * come from min_value/max_value (the column's own sort order); the
 * deprecated min/max were compared signed and serve signed types only. */
bool hs_scan_pq_scalar(const hs_pq_schema_element *e, const hs_arrow_type *at, hs_pq_bytes b,
                       bool typed, hs_expr_scalar *out) {
  memset(out, 0, sizeof *out);
  if (!e->has_type) return false;
  hs_pq_type pt = e->type;
  switch (at->id) {
  case HS_AT_INT8:
  case HS_AT_INT16:
  case HS_AT_INT32:
  case HS_AT_DATE32:
    if (pt != HS_PQ_INT32 || b.len != 4) return false;
    out->i64 = (int32_t)hs_load_u32le(b.data);
    return true;
  case HS_AT_INT64:
    if (pt == HS_PQ_INT32 && b.len == 4) { /* an int column promoted to long */
      out->i64 = (int32_t)hs_load_u32le(b.data);
      return true;
    }
    if (pt != HS_PQ_INT64 || b.len != 8) return false;
    out->i64 = (int64_t)hs_load_u64le(b.data);
    return true;
  case HS_AT_UINT8:
  case HS_AT_UINT16:
  case HS_AT_UINT32:
    if (!typed || pt != HS_PQ_INT32 || b.len != 4) return false;
    out->u64 = hs_load_u32le(b.data);
    return true;
  case HS_AT_UINT64:
    if (!typed || pt != HS_PQ_INT64 || b.len != 8) return false;
    out->u64 = hs_load_u64le(b.data);
    return true;
  case HS_AT_TIMESTAMP: {
    hs_time_unit u;
    if (pt != HS_PQ_INT64 || b.len != 8 || !pq_unit(e, &u) || u != at->unit) return false;
    out->i64 = (int64_t)hs_load_u64le(b.data);
    return true;
  }
  case HS_AT_FLOAT32:
  case HS_AT_FLOAT64:
    if (pt == HS_PQ_FLOAT && b.len == 4) {
      float f;
      uint32_t u = hs_load_u32le(b.data);
      memcpy(&f, &u, 4);
      out->f64 = f;
    } else if (pt == HS_PQ_DOUBLE && b.len == 8 && at->id == HS_AT_FLOAT64) {
      uint64_t u = hs_load_u64le(b.data);
      memcpy(&out->f64, &u, 8);
    } else {
      return false;
    }
    return !isnan(out->f64);
  case HS_AT_DECIMAL128:
    if (pq_scale(e) != at->scale) return false;
    if (pt == HS_PQ_INT32 && b.len == 4) {
      dec_from_i128((int32_t)hs_load_u32le(b.data), out);
      return true;
    }
    if (pt == HS_PQ_INT64 && b.len == 8) {
      dec_from_i128((int64_t)hs_load_u64le(b.data), out);
      return true;
    }
    if (!typed || (pt != HS_PQ_BYTE_ARRAY && pt != HS_PQ_FIXED_LEN_BYTE_ARRAY)) return false;
    return dec_from_be(b.data, b.len, out);
  case HS_AT_STRING:
  case HS_AT_LARGE_STRING:
  case HS_AT_BINARY:
  case HS_AT_LARGE_BINARY:
    if (!typed || pt != HS_PQ_BYTE_ARRAY) return false;
    out->bytes = b.data;
    out->len = b.len;
    return true;
  case HS_AT_BOOL:
    if (pt != HS_PQ_BOOLEAN || b.len != 1) return false;
    out->b = b.data[0] != 0;
    return true;
  default: return false;
  }
}

/* Leaf index of top-level element `name` in the footer's flat schema, or
 * -1 when it is absent, a group, or the schema is malformed. */
int32_t hs_scan_pq_top_leaf(const hs_pq_file_metadata *md, const char *name,
                            const hs_pq_schema_element **elem) {
  if (md->n_schema == 0) return -1;
  uint32_t idx = 1;
  int32_t leaf = 0;
  for (int32_t c = 0; c < md->schema[0].num_children; c++) {
    if (idx >= md->n_schema) return -1;
    const hs_pq_schema_element *e = &md->schema[idx];
    if (strcmp(e->name, name) == 0) {
      *elem = e;
      return e->num_children == 0 ? leaf : -1;
    }
    /* Skip e's subtree: elements still to visit. */
    int64_t pending = 1;
    while (pending > 0) {
      if (idx >= md->n_schema) return -1;
      const hs_pq_schema_element *x = &md->schema[idx++];
      if (x->num_children < 0) return -1;
      pending += x->num_children - 1;
      if (x->num_children == 0) leaf++;
    }
  }
  return -1;
}

void hs_scan_row_group_stats(const hs_pq_file_metadata *md, uint32_t rg,
                             const struct ArrowSchema *fields, hs_expr_stats *stats) {
  hs_scan_row_group_stats_names(md, rg, fields, NULL, stats);
}

void hs_scan_row_group_stats_names(const hs_pq_file_metadata *md, uint32_t rg,
                                   const struct ArrowSchema *fields, const char *const *names,
                                   hs_expr_stats *stats) {
  const hs_pq_row_group *g = rg < md->n_row_groups ? &md->row_groups[rg] : NULL;
  for (int64_t i = 0; i < fields->n_children; i++) {
    hs_expr_stats *s = &stats[i];
    hs_expr_stats_init(s);
    if (g == NULL) continue;
    s->row_count = g->num_rows;
    const struct ArrowSchema *f = fields->children[i];
    const hs_pq_schema_element *e = NULL;
    if (names != NULL && names[i] == NULL) { /* absent from the file: every row NULL */
      s->null_count = g->num_rows;
      continue;
    }
    const char *fname = names != NULL ? names[i] : f->name;
    int32_t leaf = fname ? hs_scan_pq_top_leaf(md, fname, &e) : -1;
    if (leaf < 0 || (uint32_t)leaf >= g->n_columns || !g->columns[leaf].has_meta_data) continue;
    const hs_pq_column_meta *cm = &g->columns[leaf].meta_data;
    if (!cm->has_statistics) continue;
    const hs_pq_statistics *ps = &cm->statistics;
    if (ps->has_null_count && ps->null_count >= 0) s->null_count = ps->null_count;
    hs_arrow_type at;
    if (hs_arrow_type_parse(f->format, &at, NULL) != HS_OK) continue;
    if (ps->has_min_value && ps->has_max_value) {
      s->has_bounds = hs_scan_pq_scalar(e, &at, ps->min_value, true, &s->min) &&
                      hs_scan_pq_scalar(e, &at, ps->max_value, true, &s->max);
    } else if (ps->has_min && ps->has_max) {
      s->has_bounds = hs_scan_pq_scalar(e, &at, ps->min, false, &s->min) &&
                      hs_scan_pq_scalar(e, &at, ps->max, false, &s->max);
    }
  }
}

/* ------------------------------------------------------ v3 row lineage */

void hs_scan_lineage_stats(bool row_id, int64_t first_row_id, int64_t data_seq, int64_t first,
                           int64_t end, bool stored, hs_expr_stats *s) {
  int64_t rows = end - first;
  /* What a row whose stored value is NULL (or a file without the column)
   * inherits: first_row_id + position, or the entry's data sequence number;
   * NULL without a first_row_id. */
  bool inherits = row_id ? first_row_id >= 0 : data_seq >= 0;
  hs_expr_scalar lo, hi;
  memset(&lo, 0, sizeof lo);
  memset(&hi, 0, sizeof hi);
  lo.i64 = row_id ? first_row_id + first : data_seq;
  hi.i64 = row_id ? first_row_id + (rows > 0 ? end - 1 : first) : data_seq;
  if (!stored) {
    hs_expr_stats_init(s);
    s->row_count = rows;
    s->null_count = inherits ? 0 : rows;
    if (inherits && rows > 0) {
      s->has_bounds = true;
      s->min = lo;
      s->max = hi;
    }
    return;
  }
  /* Stored values stand where non-null; a NULL inherits. */
  if (s->null_count == 0 || !inherits) return;
  bool all_null = s->null_count >= 0 && s->null_count == rows;
  s->null_count = 0;
  if (all_null) {
    s->has_bounds = rows > 0;
    s->min = lo;
    s->max = hi;
  } else if (s->has_bounds) {
    if (lo.i64 < s->min.i64) s->min = lo;
    if (hi.i64 > s->max.i64) s->max = hi;
  }
}
