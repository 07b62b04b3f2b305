/*
 * index_validate.c — hs_table_validate_indexes: every registered index of
 * a snapshot's data files checked as a reader would use it, and harder:
 * the index file opens, each blob's bytes match its recorded CRC-32C (read
 * again, never answered from the per-process verified set), the blob is
 * bound to the data file the registry names (path, size, footer CRC), and
 * its contents pass the format's own full check (scalar: every bitmap and
 * every row once, hs_sidx_file_validate; vector: hs_vidx_validate). Each
 * failure is one problem record; nothing is repaired (a rebuild is
 * drop_index + add_index, or a build after the entry is dropped).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../index/index.h"
#include "../io/store.h"
#include "table.h"
#include "vector_index.h"

typedef struct problems {
  hs_table_index_problem *v;
  size_t n, cap;
} problems;

static hs_status add(problems *p, const char *data_file, const char *index_file, const char *column,
                     hs_error *err, const char *fmt, ...) {
  if (p->n == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 8;
    hs_table_index_problem *nv = hs_realloc(p->v, cap * sizeof *nv);
    if (nv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "validate indexes: out of memory");
    p->v = nv;
    p->cap = cap;
  }
  char msg[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  hs_table_index_problem *q = &p->v[p->n];
  q->data_file = hs_strdup(data_file);
  q->index_file = hs_strdup(index_file ? index_file : "");
  q->column = hs_strdup(column ? column : "");
  q->message = hs_strdup(msg);
  p->n++;
  if (q->data_file == NULL || q->index_file == NULL || q->column == NULL || q->message == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "validate indexes: out of memory");
  return HS_OK;
}

void hs_table_index_problems_free(hs_table_index_problem *v, size_t n) {
  for (size_t i = 0; v != NULL && i < n; i++) {
    hs_free(v[i].data_file);
    hs_free(v[i].index_file);
    hs_free(v[i].column);
    hs_free(v[i].message);
  }
  hs_free(v);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The blob of `column` in scalar index file f: its index, or -1. */
static long scalar_blob(const hs_sidx_file *f, const char *column) {
  for (size_t i = 0; f != NULL && i < hs_sidx_file_column_count(f); i++)
    if (strcmp(hs_sidx_file_column_name(f, i), column) == 0) return (long)i;
  return -1;
}

/* The checks common to both kinds: checksum, then binding. false: a
 * problem was recorded (or *st set on running out of memory). */
static bool blob_ok(problems *p, hs_source *src, const hs_table_index_entry *e, const char *ipath,
                    const char *column, uint64_t off, uint64_t len, const hs_index_binding *b,
                    uint64_t size, uint32_t crc, hs_status *st, hs_error *err) {
  hs_error local = {0};
  char why[384];
  if (!b->has_crc) {
    *st = add(p, e->data_file, ipath, column, err,
              "the blob records no checksum (written by an older version): rebuild the index");
    return false;
  }
  if (hs_index_blob_check(src, off, len, b->blob_crc32c, true, &local) != HS_OK) {
    *st = add(p, e->data_file, ipath, column, err, "%s", local.message);
    return false;
  }
  if (!hs_index_binding_matches(b, e->data_file, size, true, crc, why, sizeof why)) {
    *st = add(p, e->data_file, ipath, column, err, "%s", why);
    return false;
  }
  return true;
}

static hs_status check_entry(const hs_table *t, const hs_table_index_entry *e, problems *p,
                             hs_error *err) {
  uint64_t size = 0;
  uint32_t crc = 0;
  hs_error local = {0};
  if (hs_table_data_file_footer(e->data_file, &size, &crc, &local) != HS_OK)
    return add(p, e->data_file, e->index_file, NULL, err, "the data file cannot be read: %s",
               local.message);
  char *ipath = NULL;
  if (hs_table_resolve_path(t, e->index_file, "index registry", &ipath, &local) != HS_OK)
    return add(p, e->data_file, e->index_file, NULL, err, "%s", local.message);
  hs_source *src = NULL;
  hs_sidx_file *f = NULL;
  hs_status st = HS_OK;
  if ((hs_store_is_remote(ipath) ? hs_store_source_open(ipath, &src, &local)
                                 : hs_source_open_file(ipath, &src, &local)) != HS_OK) {
    st = add(p, e->data_file, ipath, NULL, err, "%s", local.message);
    goto done;
  }
  bool scalar_ok = hs_sidx_file_open(src, &f, &local) == HS_OK, any_scalar = false;
  hs_error open_err = local;
  for (size_t c = 0; st == HS_OK && c < e->n_columns; c++) {
    const char *col = e->columns[c];
    long bi = scalar_blob(f, col);
    if (bi >= 0) {
      uint64_t off = 0, len = 0;
      const hs_index_binding *b = hs_sidx_file_blob(f, (size_t)bi, &off, &len);
      any_scalar = blob_ok(p, src, e, ipath, col, off, len, b, size, crc, &st, err) || any_scalar;
      continue;
    }
    uint64_t off = 0, len = 0;
    hs_index_binding b;
    char *bpath = NULL;
    memset(&local, 0, sizeof local);
    if (hs_table_vector_index_locate(src, ipath, col, &off, &len, &b, &bpath, &local) != HS_OK) {
      st = add(p, e->data_file, ipath, col, err, "%s",
               !scalar_ok ? open_err.message : local.message);
    } else if (blob_ok(p, src, e, ipath, col, off, len, &b, size, crc, &st, err)) {
      hs_vidx *x = NULL;
      memset(&local, 0, sizeof local);
      if (hs_vidx_open(src, off, len, &x, &local) != HS_OK || hs_vidx_validate(x, &local) != HS_OK)
        st = add(p, e->data_file, ipath, col, err, "%s", local.message);
      hs_vidx_free(x);
    }
    hs_free(bpath);
  }
  memset(&local, 0, sizeof local);
  if (st == HS_OK && any_scalar && hs_sidx_file_validate(f, &local) != HS_OK)
    st = add(p, e->data_file, ipath, NULL, err, "%s", local.message);
done:
  hs_sidx_file_free(f);
  hs_source_unref(src);
  hs_free(ipath);
  return st;
}

hs_status hs_table_validate_indexes(hs_table *t, int64_t snapshot_id, hs_table_index_problem **out,
                                    size_t *n_out, int64_t *checked, hs_error *err) {
  *out = NULL;
  *n_out = 0;
  if (checked != NULL) *checked = 0;
  hs_status st = hs_table_refresh(t, err);
  if (st != HS_OK) return st;
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  hs_table_index_registry reg;
  memset(&reg, 0, sizeof reg);
  problems p = {0};
  const char **paths = NULL;
  st = hs_table_plan_files(t, snapshot_id, &plan, err);
  if (st == HS_OK) st = hs_table_index_registry_load(t, NULL, &reg, err);
  if (st == HS_OK && (paths = hs_malloc((plan.n_files + 1) * sizeof *paths)) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "validate indexes: out of memory");
  for (size_t i = 0; st == HS_OK && i < plan.n_files; i++) paths[i] = plan.files[i].path;
  if (st == HS_OK) qsort(paths, plan.n_files, sizeof *paths, cmp_str);
  for (size_t i = 0; st == HS_OK && i < reg.n_entries; i++) {
    const hs_table_index_entry *e = &reg.entries[i];
    if (e->n_columns == 0 ||
        bsearch(&e->data_file, paths, plan.n_files, sizeof *paths, cmp_str) == NULL)
      continue; /* a file of another snapshot, or an emptied entry */
    st = check_entry(t, e, &p, err);
    if (checked != NULL) *checked += (int64_t)e->n_columns;
  }
  hs_free(paths);
  hs_table_index_registry_free(&reg);
  hs_table_plan_free(&plan);
  if (st != HS_OK) {
    hs_table_index_problems_free(p.v, p.n);
    return st;
  }
  *out = p.v;
  *n_out = p.n;
  return HS_OK;
}
