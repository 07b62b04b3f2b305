/*
 * op_join_index.c — the index nested loop of the join operator (op_join.c):
 * whether a join can run as one, the run-time choice between index lookups
 * and hashing, and the lookups themselves (the left chunk's distinct keys
 * as an IN list in a filtered scan of the right table, which the table's
 * scalar index answers). See src/sql/README.md, "Joins".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_join_internal.h"

/* ------------------------------------------------- index nested loop */

/* The filter text of an index lookup; `ok` false once an append failed. */
typedef struct fbuf {
  hs_buf b;
  bool ok;  /* false: out of memory */
  bool bad; /* a value the filter language cannot state (a NUL in text, year past 9999) */
} fbuf;

static void put(fbuf *f, const void *p, size_t n) {
  if (f->ok && !hs_buf_append(&f->b, p, n)) f->ok = false;
}
static void putc_(fbuf *f, char c) {
  if (f->ok && !hs_buf_append_byte(&f->b, (uint8_t)c)) f->ok = false;
}
static void putf(fbuf *f, const char *fmt, ...) HS_PRINTF(2, 3);
static void putf(fbuf *f, const char *fmt, ...) {
  char tmp[96];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof tmp)
    f->ok = false;
  else
    put(f, tmp, (size_t)n);
}

/* `s` quoted with `q`, doubling any `q` inside (SQL identifiers and strings). */
static void put_quoted(fbuf *f, const char *s, size_t n, char q) {
  putc_(f, q);
  for (size_t k = 0; k < n; k++) {
    if (s[k] == q) putc_(f, q);
    putc_(f, s[k]);
  }
  putc_(f, q);
}

/* An integer in decimal (a batch of keys: thousands of these per lookup,
 * so not through vsnprintf). */
static void put_int(fbuf *f, int64_t v) {
  char d[24];
  int n = sizeof d;
  uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
  do {
    d[--n] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u != 0);
  if (v < 0) d[--n] = '-';
  put(f, d + n, sizeof d - (size_t)n);
}

static void put_numeric(fbuf *f, hs_sql_i128 v, int scale) {
  char digits[48];
  int nd = 0;
  bool neg = v < 0;
  unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
  do {
    digits[nd++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u != 0);
  while (nd <= scale && nd < (int)sizeof digits) digits[nd++] = '0';
  if (neg) putc_(f, '-');
  for (int k = nd - 1; k >= 0; k--) {
    putc_(f, digits[k]);
    if (k == scale && scale > 0) putc_(f, '.');
  }
}

/* A date (days) or timestamp (microseconds, UTC) as a quoted ISO literal. */
static void put_time(fbuf *f, int64_t v, bool date_only) {
  int64_t days = v, rem = 0;
  if (!date_only) {
    days = v / 86400000000LL;
    rem = v % 86400000000LL;
    if (rem < 0) {
      rem += 86400000000LL;
      days--;
    }
  }
  int64_t y;
  int m, d;
  hs_civil_from_days(days, &y, &m, &d);
  if (y < 1 || y > 9999) f->bad = true;
  putf(f, "'%04lld-%02d-%02d", (long long)y, m, d);
  if (!date_only) {
    int64_t secs = rem / 1000000;
    putf(f, " %02d:%02d:%02d.%06dZ", (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60),
         (int)(rem % 1000000));
  }
  putc_(f, '\'');
}

/* Key types an IN list of the filter language states exactly. */
static bool index_key_type_ok(hs_sql_tid id) {
  switch (id) {
  case HS_SQL_BOOL:
  case HS_SQL_INT32:
  case HS_SQL_INT64:
  case HS_SQL_NUMERIC:
  case HS_SQL_TEXT:
  case HS_SQL_DATE:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: return true;
  default: return false;
  }
}

static void put_value(fbuf *f, const hs_sql_vec *v, int64_t i) {
  switch (v->type.id) {
  case HS_SQL_BOOL: putf(f, "%s", ((const uint8_t *)v->data)[i] ? "true" : "false"); break;
  case HS_SQL_INT32: put_int(f, ((const int32_t *)v->data)[i]); break;
  case HS_SQL_INT64: put_int(f, ((const int64_t *)v->data)[i]); break;
  case HS_SQL_NUMERIC: put_numeric(f, ((const hs_sql_i128 *)v->data)[i], v->type.b); break;
  case HS_SQL_TEXT: {
    hs_sql_str s = ((const hs_sql_str *)v->data)[i];
    if (s.len > 0 && memchr(s.ptr, '\0', s.len) != NULL) f->bad = true;
    put_quoted(f, s.ptr, s.len, '\'');
    break;
  }
  case HS_SQL_DATE: put_time(f, ((const int32_t *)v->data)[i], true); break;
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: put_time(f, ((const int64_t *)v->data)[i], false); break;
  default: f->bad = true; break;
  }
}

static _Thread_local const hs_sql_vec *sort_vec;

static int cmp_rows(const void *a, const void *b) {
  return hs_sql_vec_cmp(sort_vec, *(const int64_t *)a, sort_vec, *(const int64_t *)b);
}

/* Read the right table's rows whose index column is one of the current
 * left chunk's keys (the right SCAN's own columns, filter and snapshot
 * kept) and make them the build side. */
hs_status hs_sql_join_index_build(join_state *st, bool *cannot, hs_error *err) {
  const hs_sql_plan *scan = st->p->kids[1];
  const hs_sql_vec *kv = &st->pr.keys[st->ix_key];
  const int64_t n = st->pr.rows.n;
  hs_status s = HS_OK;
  fbuf f;
  hs_buf_init(&f.b);
  size_t n_chunks = 0, cap_chunks = 0;
  hs_sql_chunk *chunks = NULL;
  int64_t *rows = hs_sql_join_alloc(n, 8);
  if (rows == NULL) return hs_sql_join_oom(err, "index lookup");
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++)
    if (hs_sql_vec_valid(kv, i)) rows[m++] = i;
  sort_vec = kv;
  qsort(rows, (size_t)m, sizeof *rows, cmp_rows);
  int64_t u = 0; /* distinct */
  for (int64_t k = 0; k < m; k++)
    if (u == 0 || hs_sql_vec_cmp(kv, rows[u - 1], kv, rows[k]) != 0) rows[u++] = rows[k];
  if (u > 0 && st->table == NULL) s = hs_sql_rel_open(scan->scan.rel, &st->table, err);

  for (int64_t k0 = 0; k0 < u && s == HS_OK; k0 += JOIN_INDEX_KEYS_PER_SCAN) {
    int64_t k1 = k0 + JOIN_INDEX_KEYS_PER_SCAN < u ? k0 + JOIN_INDEX_KEYS_PER_SCAN : u;
    f.b.len = 0;
    f.ok = true;
    f.bad = false;
    if (scan->scan.filter != NULL && scan->scan.filter[0] != '\0') {
      put(&f, "(", 1);
      put(&f, scan->scan.filter, strlen(scan->scan.filter));
      put(&f, ") AND ", 6);
    }
    put_quoted(&f, st->ix_column, strlen(st->ix_column), '"');
    put(&f, " IN (", 5);
    for (int64_t k = k0; k < k1; k++) {
      if (k > k0) put(&f, ", ", 2);
      put_value(&f, kv, rows[k]);
    }
    put(&f, ")", 2); /* with the NUL */
    if (f.bad) {
      *cannot = true;
      break;
    }
    if (!f.ok) {
      s = hs_sql_join_oom(err, "index lookup");
      break;
    }
    hs_scan_options opts;
    hs_scan_options_init(&opts);
    opts.snapshot_id = st->ix_snapshot;
    opts.columns = scan->scan.n_columns > 0 ? (const char *const *)scan->scan.columns : NULL;
    opts.n_columns = (size_t)scan->scan.n_columns;
    opts.filter = (const char *)f.b.data;
    struct ArrowArrayStream stream = {0};
    s = hs_table_scan_query(st->table, &opts, &stream, err);
    if (s == HS_ERR_INVALID_ARG || s == HS_ERR_UNSUPPORTED) {
      /* the filter did not parse or bind: the keys go through a hash instead */
      if (err != NULL) memset(err, 0, sizeof *err);
      s = HS_OK;
      *cannot = true;
      break;
    }
    if (s != HS_OK) break;
    st->ix_scans++;
    st->ix_keys += k1 - k0;
    struct ArrowSchema schema = {0};
    int rc = stream.get_schema(&stream, &schema);
    while (rc == 0 && s == HS_OK) {
      struct ArrowArray batch = {0};
      rc = stream.get_next(&stream, &batch);
      if (rc != 0 || batch.release == NULL) break;
      if (n_chunks == cap_chunks) {
        size_t nc = cap_chunks ? cap_chunks * 2 : 8;
        hs_sql_chunk *g = hs_realloc(chunks, nc * sizeof *g);
        if (g == NULL) {
          batch.release(&batch);
          s = hs_sql_join_oom(err, "index lookup");
          break;
        }
        chunks = g;
        cap_chunks = nc;
      }
      memset(&chunks[n_chunks], 0, sizeof chunks[n_chunks]);
      s = hs_sql_chunk_from_arrow(&schema, &batch, NULL, 0, &chunks[n_chunks], err);
      if (s != HS_OK) break;
      st->ix_rows += chunks[n_chunks].n;
      n_chunks++;
    }
    if (rc != 0 && s == HS_OK) {
      const char *why = stream.get_last_error ? stream.get_last_error(&stream) : NULL;
      s = hs_error_set(err, hs_status_of_errno(rc), "index nested loop join: scan of %s: %s",
                       scan->scan.rel->name ? scan->scan.rel->name : "table",
                       why ? why : "read failed");
    }
    hs_scan_stats ss;
    hs_scan_index_stats is;
    if (hs_scan_stats_get(&stream, &ss, NULL) == HS_OK) st->ix_files_read += ss.files_read;
    if (hs_scan_index_stats_get(&stream, &is, NULL) == HS_OK)
      st->ix_files_indexed += is.files_indexed;
    if (schema.release) schema.release(&schema);
    if (stream.release) stream.release(&stream);
    if (s == HS_OK) s = hs_sql_join_check_cancel(st, err);
  }
  hs_free(rows);
  hs_buf_free(&f.b);
  if (s != HS_OK || *cannot) {
    for (size_t c = 0; c < n_chunks; c++) hs_sql_chunk_release(&chunks[c]);
    hs_free(chunks);
    return s;
  }
  return hs_sql_join_build(st, chunks, n_chunks, err);
}

/* Can this join run as an index nested loop? Sets ix_key / ix_column. */
bool hs_sql_join_index_ok(join_state *st) {
  const hs_sql_plan *p = st->p, *r = p->kids[1];
  if (p->join.index_column == NULL || r == NULL || r->kind != HS_SP_SCAN || r->scan.rel == NULL ||
      r->scan.rel->uri == NULL || r->scan.limit >= 0)
    return false;
  if (st->type != HS_SJ_INNER && st->type != HS_SJ_LEFT && st->type != HS_SJ_SEMI &&
      st->type != HS_SJ_ANTI)
    return false;
  for (int32_t k = 0; k < st->n_keys; k++) {
    const hs_sql_expr *e = p->join.right_keys[k];
    if (e->kind != HS_SX_COL || e->col < 0 || e->col >= r->n_cols) continue;
    const char *name = r->scan.n_columns > e->col && r->scan.columns != NULL
                           ? r->scan.columns[e->col]
                           : r->names[e->col];
    if (name == NULL || strcmp(name, p->join.index_column) != 0) continue;
    if (!index_key_type_ok(p->join.left_keys[k]->type.id) ||
        p->join.left_keys[k]->type.id != e->type.id)
      continue;
    st->ix_key = k;
    st->ix_column = name;
    return true;
  }
  return false;
}

/* Live rows of the right table's snapshot (-1: unknown). */
static int64_t table_rows(hs_table *t, int64_t snapshot_id) {
  hs_table_snapshot_info *v = NULL;
  size_t n = 0;
  int64_t rows = -1;
  if (snapshot_id < 0) snapshot_id = hs_table_current_snapshot_id(t);
  if (snapshot_id < 0) return 0;
  if (hs_table_snapshots(t, &v, &n, NULL) != HS_OK) return -1;
  for (size_t i = 0; i < n; i++)
    if (v[i].snapshot_id == snapshot_id) rows = v[i].total_records;
  hs_free(v);
  return rows;
}

/* An index nested loop pays one filtered scan per JOIN_INDEX_KEYS_PER_SCAN
 * left keys; hashing pays a scan of the whole right table. Read the left
 * side ahead up to a bound (a quarter of the right table's rows, at most
 * JOIN_INDEX_LEFT_MAX): if it ends first, look its keys up through the
 * index as one chunk; else hash the right side and replay what was read. */
hs_status hs_sql_join_index_decide(join_state *st, hs_sql_op *op, hs_error *err) {
  const hs_sql_plan *scan = st->p->kids[1];
  hs_status s = hs_sql_rel_open(scan->scan.rel, &st->table, err);
  if (s != HS_OK) return s;
  st->ix_snapshot = scan->scan.snapshot_id >= 0 ? scan->scan.snapshot_id
                                                : hs_table_current_snapshot_id(st->table);
  int64_t right = table_rows(st->table, st->ix_snapshot);
  st->ix_left_max = right < 0 ? JOIN_INDEX_LEFT_MAX / 10 : right / 4;
  if (st->ix_left_max > JOIN_INDEX_LEFT_MAX) st->ix_left_max = JOIN_INDEX_LEFT_MAX;
  int64_t rows = 0;
  size_t cap = 0;
  bool ended = false;
  while (rows <= st->ix_left_max) {
    hs_sql_chunk in = {0};
    s = hs_sql_op_next(op->kids[0], &in, err);
    if (s != HS_OK) return s;
    if (in.n == 0) {
      hs_sql_chunk_release(&in);
      ended = true;
      break;
    }
    int64_t bytes = 0;
    for (int32_t c = 0; c < in.n_cols; c++) bytes += hs_sql_join_vec_bytes(&in.cols[c]);
    s = hs_sql_exec_reserve(st->x, bytes, "join", err);
    if (s == HS_OK) st->pend_reserved += bytes;
    if (s == HS_OK && st->n_pend == cap) {
      size_t nc = cap ? cap * 2 : 8;
      hs_sql_chunk *g = hs_realloc(st->pend, nc * sizeof *g);
      if (g == NULL)
        s = hs_sql_join_oom(err, "read ahead");
      else
        st->pend = g, cap = nc;
    }
    if (s != HS_OK) {
      hs_sql_chunk_release(&in);
      return s;
    }
    rows += in.n;
    hs_sql_chunk_move(&st->pend[st->n_pend++], &in);
  }
  if (!ended) {
    st->method = HS_SJM_HASH;
    st->ix_gave_up = true;
    return HS_OK;
  }
  if (st->n_pend > 1) { /* one chunk: its keys go to the index together */
    hs_sql_chunk all = {0};
    s = hs_sql_chunk_init(&all, st->nl, rows, err);
    hs_sql_vec *parts =
        s == HS_OK ? hs_sql_join_alloc((int64_t)st->n_pend, sizeof(hs_sql_vec)) : NULL;
    if (s == HS_OK && parts == NULL) s = hs_sql_join_oom(err, "read ahead");
    for (int32_t c = 0; c < st->nl && s == HS_OK; c++) {
      for (size_t k = 0; k < st->n_pend; k++) parts[k] = st->pend[k].cols[c];
      s = hs_sql_vec_concat(&all.cols[c], parts, st->n_pend, err);
    }
    hs_free(parts);
    if (s != HS_OK) {
      hs_sql_chunk_release(&all);
      return s;
    }
    for (size_t k = 0; k < st->n_pend; k++) hs_sql_chunk_release(&st->pend[k]);
    hs_sql_chunk_move(&st->pend[0], &all);
    st->n_pend = 1;
  }
  return HS_OK;
}
