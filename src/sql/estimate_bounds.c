/*
 * estimate_bounds.c — the value range of a table column, for the row
 * estimates that order joins (optimize_order.c): the smallest lower and
 * the largest upper bound over the snapshot's live data files, from the
 * Iceberg manifests' single-value bounds (spec Appendix D). No data is
 * read, and the file plan is the one the scan uses (cached per process),
 * read through the statement's shared table handle (hs_sql_rel_peek), so
 * the bounds come from the version bound and no second open is paid.
 *
 * Numbers, dates and timestamps only, as doubles in the SQL layer's units:
 * int/long as is, decimals their value (unscaled / 10^scale), dates days
 * and timestamps microseconds since 1970-01-01. Any file without both
 * bounds of the column, a bound of an unexpected length or a column not
 * in the current schema: unknown (false).
 */
#include <math.h>
#include <string.h>

#include "../table/table.h"
#include "bind.h"

/* A single-value bound of Iceberg type `t` as a double; false if unknown. */
static bool bound_value(const hs_iceberg_type *t, const uint8_t *b, size_t len, double *out) {
  if (b == NULL) return false;
  switch (t->id) {
  case HS_ICE_INT:
  case HS_ICE_DATE: {
    if (len != 4) return false;
    uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    *out = (double)(int32_t)u;
    return true;
  }
  case HS_ICE_LONG:
  case HS_ICE_TIMESTAMP:
  case HS_ICE_TIMESTAMPTZ: {
    if (len != 8) return false;
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--) u = u << 8 | b[i];
    *out = (double)(int64_t)u;
    return true;
  }
  case HS_ICE_FLOAT: {
    if (len != 4) return false;
    float f;
    memcpy(&f, b, 4); /* little-endian hosts only, as the rest of the reader */
    *out = (double)f;
    return isfinite(*out);
  }
  case HS_ICE_DOUBLE: {
    if (len != 8) return false;
    memcpy(out, b, 8);
    return isfinite(*out);
  }
  case HS_ICE_DECIMAL: {
    if (len == 0 || len > 16) return false;
    __int128 v = (b[0] & 0x80) ? -1 : 0; /* big-endian two's complement */
    for (size_t i = 0; i < len; i++) v = (__int128)((unsigned __int128)v << 8) | b[i];
    *out = (double)v / pow(10.0, t->scale);
    return true;
  }
  default: return false;
  }
}

bool hs_sql_column_range(const hs_sql_rel *rel, int64_t snapshot_id, const char *column, double *lo,
                         double *hi) {
  if (rel == NULL || rel->uri == NULL || column == NULL) return false;
  hs_table *t = hs_sql_rel_peek(rel), *own = NULL;
  if (t == NULL && hs_table_open(rel->uri, &own, NULL) != HS_OK) return false;
  if (t == NULL) t = own;
  bool ok = false;
  const hs_iceberg_schema *s = hs_iceberg_metadata_schema(&t->meta, t->meta.current_schema_id);
  const hs_iceberg_field *f = NULL;
  for (size_t i = 0; s != NULL && i < s->root.n_fields && f == NULL; i++)
    if (strcmp(s->root.fields[i].name, column) == 0) f = &s->root.fields[i];
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  if (f != NULL && hs_table_plan_files(t, snapshot_id, &plan, NULL) == HS_OK && plan.n_files > 0) {
    double l = INFINITY, h = -INFINITY;
    ok = true;
    for (size_t i = 0; ok && i < plan.n_files; i++) {
      const hs_iceberg_data_file *df = plan.files[i].data_file;
      if (hs_table_plan_file_live(&plan.files[i]) <= 0) continue;
      const hs_iceberg_column_metrics *m = NULL;
      for (size_t k = 0; k < df->n_metrics && m == NULL; k++)
        if (df->metrics[k].field_id == f->id) m = &df->metrics[k];
      double a, b;
      ok = m != NULL && bound_value(&f->type, m->lower, m->lower_len, &a) &&
           bound_value(&f->type, m->upper, m->upper_len, &b) && a <= b;
      if (ok) {
        if (a < l) l = a;
        if (b > h) h = b;
      }
    }
    if (ok && l <= h) {
      *lo = l;
      *hi = h;
    } else {
      ok = false;
    }
  }
  hs_table_plan_free(&plan);
  hs_table_free(own);
  return ok;
}
