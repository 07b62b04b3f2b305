/*
 * rowdelta.c — row-level changes in one commit (hs_table_change_rows):
 * delete the rows matching filters and append new rows, as one snapshot.
 * Deletes, updates, upserts and merges of the Python API are this one
 * operation with different inputs (python/hyperstreamdb/_changes.py).
 *
 *  1. Begin a transaction (src/table/txn.h) and plan the snapshot the
 *     change was decided on (the read plan every reader uses: its live-row
 *     sets say which rows are already deleted).
 *  2. Mark: each delete filter runs as a filtered scan of that plan whose
 *     matching rows (live rows only; scalar indexes narrow, the filter is
 *     always evaluated on the rows) are collected per data file as a
 *     bitmap instead of being read.
 *  3. Write, by the table's mode property (Iceberg's write.delete.mode,
 *     write.update.mode, write.merge.mode; merge-on-read by default):
 *       - merge-on-read, format v2: one position-delete file per partition
 *         of the touched data files (the new positions only);
 *       - merge-on-read, format v3: one deletion vector per touched data
 *         file, holding its old deletes and the new ones (at most one
 *         vector per data file: the old one is removed in the same
 *         commit, the other vectors of its Puffin file stay live);
 *       - copy-on-write: each touched data file is rewritten without its
 *         deleted rows (a scan of the plan with the marks as deletes) and
 *         removed.
 *     Appended rows go through the append's schema check and clustered
 *     writer (partition spec and sort order of the table).
 *  4. Commit once; the transaction validates against commits made since
 *     the planned snapshot (a data file the change deletes from, or
 *     rewrites, removed meanwhile is HS_ERR_CONFLICT) and retries lost
 *     races. Nothing written is left behind on failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/parallel.h"
#include "../table/deletes.h"
#include "../table/deletes_cache.h"
#include "../table/deletes_eq.h"
#include "../table/lineage.h"
#include "../table/schema_map.h"
#include "../table/timetravel.h"
#include "../table/txn.h"
#include "scan.h"

typedef struct delta {
  hs_table *t;
  hs_txn *txn;
  hs_table_plan plan;
  bool planned;
  roaring_bitmap_t **marked; /* per plan file: rows this change deletes (NULL: none) */
  hs_arena arena;
  char **written; /* files this change wrote (removed unless committed) */
  size_t n_written;
  int32_t schema_id;
  bool merge_all;  /* merge_position_deletes: every file with >= 2 position delete files */
  uint8_t *select; /* merges: per key row, whether its source row is appended (NULL: all) */
  size_t n_select;
  hs_row_change_result res;
} delta;

static hs_status remember(delta *d, const char *path, hs_error *err) {
  char **nv = hs_realloc(d->written, (d->n_written + 1) * sizeof *nv);
  if (nv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
  d->written = nv;
  if ((nv[d->n_written] = hs_strdup(path)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
  d->n_written++;
  return HS_OK;
}

/* ---------------------------------------------------------------- marks */

static hs_status mark_rows(void *ctx, size_t plan_index, const char *path, const int64_t *rows,
                           size_t n, hs_error *err) {
  delta *d = ctx;
  if (plan_index >= d->plan.n_files)
    return hs_error_set(err, HS_ERR_INTERNAL, "row change: rows of an unplanned file %s", path);
  roaring_bitmap_t **bm = &d->marked[plan_index];
  if (*bm == NULL && (*bm = roaring_bitmap_create()) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
  for (size_t i = 0; i < n; i++) {
    if (rows[i] < 0 || rows[i] > (int64_t)UINT32_MAX)
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: row %lld beyond 2^32", path,
                          (long long)rows[i]);
    if (roaring_bitmap_add_checked(*bm, (uint32_t)rows[i])) d->res.rows_deleted++;
  }
  return HS_OK;
}

/* Every live row of every file (a delete without a filter). */
static hs_status mark_all(delta *d, hs_error *err) {
  for (size_t i = 0; i < d->plan.n_files; i++) {
    const hs_table_plan_file *f = &d->plan.files[i];
    int64_t rows = f->data_file->record_count;
    if (rows <= 0) continue;
    roaring_bitmap_t *all = roaring_bitmap_create();
    if (all == NULL) return hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
    roaring_bitmap_add_range(all, 0, (uint64_t)rows);
    if (f->deleted != NULL) roaring_bitmap_andnot_inplace(all, f->deleted);
    if (d->marked[i] != NULL) {
      d->res.rows_deleted += (int64_t)roaring_bitmap_andnot_cardinality(all, d->marked[i]);
      roaring_bitmap_or_inplace(d->marked[i], all);
      roaring_bitmap_free(all);
    } else {
      d->res.rows_deleted += (int64_t)roaring_bitmap_get_cardinality(all);
      d->marked[i] = all;
    }
  }
  return HS_OK;
}

static hs_status mark_where(delta *d, const char *filter, hs_error *err) {
  if (filter == NULL || filter[strspn(filter, " \t\r\n")] == '\0') return mark_all(d, err);
  /* rows_from_index false: the filter is evaluated on every candidate. */
  hs_scan_hooks hooks = {.on_rows = mark_rows, .ctx = d, .plan = &d->plan};
  return hs_table_scan_rows(d->t, d->plan.snapshot_id, filter, &hooks, NULL, NULL, err);
}

/* Add `bm` to file i's marks; returns how many rows were not marked yet. */
static int64_t add_marks(delta *d, size_t i, roaring_bitmap_t **bm) {
  if (*bm == NULL || roaring_bitmap_is_empty(*bm)) return 0;
  int64_t added;
  if (d->marked[i] == NULL) {
    added = (int64_t)roaring_bitmap_get_cardinality(*bm);
    d->marked[i] = *bm;
    *bm = NULL;
  } else {
    added = (int64_t)roaring_bitmap_andnot_cardinality(*bm, d->marked[i]);
    roaring_bitmap_or_inplace(d->marked[i], *bm);
  }
  d->res.rows_deleted += added;
  return added;
}

static void free_bitmaps(roaring_bitmap_t **bms, size_t n) {
  for (size_t i = 0; bms != NULL && i < n; i++)
    if (bms[i] != NULL) roaring_bitmap_free(bms[i]);
  hs_free(bms);
}

static bool nonempty(const roaring_bitmap_t *bm) {
  return bm != NULL && !roaring_bitmap_is_empty(bm);
}

/* A filter scan's rows collected per plan file (collect_where). */
typedef struct collect_ctx {
  const delta *d;
  roaring_bitmap_t **bms;
  roaring_bitmap_t *const *only; /* NULL: every file; else files with rows here */
} collect_ctx;

static bool collect_keep(void *ctx, size_t plan_index, const char *path, int64_t size) {
  (void)path;
  (void)size;
  const collect_ctx *c = ctx;
  return c->only == NULL || (plan_index < c->d->plan.n_files && nonempty(c->only[plan_index]));
}

static hs_status collect_rows(void *ctx, size_t plan_index, const char *path, const int64_t *rows,
                              size_t n, hs_error *err) {
  collect_ctx *c = ctx;
  if (plan_index >= c->d->plan.n_files)
    return hs_error_set(err, HS_ERR_INTERNAL, "row change: rows of an unplanned file %s", path);
  roaring_bitmap_t **bm = &c->bms[plan_index];
  if (*bm == NULL && (*bm = roaring_bitmap_create()) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
  for (size_t i = 0; i < n; i++) {
    if (rows[i] < 0 || rows[i] > (int64_t)UINT32_MAX)
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: row %lld beyond 2^32", path,
                          (long long)rows[i]);
    roaring_bitmap_add(*bm, (uint32_t)rows[i]);
  }
  return HS_OK;
}

/* The live rows of each planned file (only those files with rows in
 * `only`, when given) that satisfy `filter` (NULL or blank: every live
 * row), into the hs_calloc'd *out (one bitmap or NULL per file). */
static hs_status collect_where(delta *d, const char *filter, roaring_bitmap_t *const *only,
                               roaring_bitmap_t ***out, hs_error *err) {
  size_t n = d->plan.n_files;
  roaring_bitmap_t **bms = hs_calloc(n ? n : 1, sizeof *bms);
  if ((*out = bms) == NULL) return hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
  if (filter != NULL && filter[strspn(filter, " \t\r\n")] != '\0') {
    collect_ctx c = {.d = d, .bms = bms, .only = only};
    /* rows_from_index false: the filter is evaluated on every candidate. */
    hs_scan_hooks hooks = {
        .keep_file = collect_keep, .on_rows = collect_rows, .ctx = &c, .plan = &d->plan};
    return hs_table_scan_rows(d->t, d->plan.snapshot_id, filter, &hooks, NULL, NULL, err);
  }
  for (size_t i = 0; i < n; i++) {
    const hs_table_plan_file *f = &d->plan.files[i];
    if (f->data_file->record_count <= 0 || (only != NULL && !nonempty(only[i]))) continue;
    if ((bms[i] = roaring_bitmap_create()) == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
    roaring_bitmap_add_range(bms[i], 0, (uint64_t)f->data_file->record_count);
    if (f->deleted != NULL) roaring_bitmap_andnot_inplace(bms[i], f->deleted);
  }
  return HS_OK;
}

/* One data file's key matches (match_keys, a worker each). */
typedef struct key_match {
  const delta *d;
  hs_table_eqdel *set;
  const hs_iceberg_schema *schema;
  roaring_bitmap_t *const *only; /* NULL: every file with live rows; else these rows only */
  roaring_bitmap_t **found;      /* per plan file (NULL: not matched) */
  hs_status *st;                 /* per plan file */
  hs_error *errs;                /* per plan file */
} key_match;

static void match_files(void *ctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  key_match *k = ctx;
  for (size_t i = begin; i < end; i++) {
    const hs_table_plan_file *f = &k->d->plan.files[i];
    k->st[i] = HS_OK;
    if (hs_table_plan_file_live(f) <= 0) continue;
    if (k->only != NULL && !nonempty(k->only[i])) continue;
    roaring_bitmap_t *skip = NULL; /* the rows outside `only` */
    if (k->only != NULL &&
        (skip = roaring_bitmap_flip(k->only[i], 0, (uint64_t)f->data_file->record_count)) == NULL) {
      k->st[i] = hs_error_set(&k->errs[i], HS_ERR_NOMEM, "row change: out of memory");
      continue;
    }
    if ((k->found[i] = roaring_bitmap_create()) == NULL) {
      k->st[i] = hs_error_set(&k->errs[i], HS_ERR_NOMEM, "row change: out of memory");
    } else {
      k->st[i] = hs_table_eqdel_match(k->set, f->path, k->schema, skip ? skip : f->deleted,
                                      k->found[i], &k->errs[i]);
    }
    if (skip != NULL) roaring_bitmap_free(skip);
  }
}

/* The live rows (within `only` when given) whose key equals a key of
 * `set`, per plan file, matched in parallel: *found (hs_calloc'd). */
static hs_status match_keys(const delta *d, hs_table_eqdel *set, const hs_iceberg_schema *schema,
                            roaring_bitmap_t *const *only, roaring_bitmap_t ***found,
                            hs_error *err) {
  size_t nf = d->plan.n_files;
  key_match k = {.d = d, .set = set, .schema = schema, .only = only};
  k.found = hs_calloc(nf ? nf : 1, sizeof *k.found);
  k.st = hs_calloc(nf ? nf : 1, sizeof *k.st);
  k.errs = hs_calloc(nf ? nf : 1, sizeof *k.errs);
  *found = k.found;
  hs_status st = HS_OK;
  if (k.found == NULL || k.st == NULL || k.errs == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
  if (st == HS_OK && hs_table_eqdel_count(set) > 0 && nf > 0)
    hs_parallel_for(nf, 1, 0, match_files, &k);
  for (size_t i = 0; st == HS_OK && i < nf; i++) {
    if (k.st[i] == HS_OK) continue;
    if (err != NULL) *err = k.errs[i];
    st = k.st[i];
  }
  hs_free(k.st);
  hs_free(k.errs);
  return st;
}

/* Key matching (upserts, merges): the live rows whose key columns equal a
 * key row (hs_row_change.keys) are found in each data file's key columns
 * with a hash set of the keys (deletes_eq.c), rows already deleted left
 * out, and marked unless keep_matched (only those satisfying key_where
 * when given: a second match over those rows tells which key rows hit
 * one); with delete_unmatched the live rows matching no key (and
 * satisfying unmatched_filter) are marked too. Which key rows are to be
 * appended (append_select) is decided here, into d->select. */
static hs_status mark_keys(delta *d, const hs_row_change *c, hs_error *err) {
  hs_table *t = d->t;
  size_t n = c->n_key_columns, nf = d->plan.n_files;
  int32_t *ids = hs_malloc((n ? n : 1) * sizeof *ids);
  if (ids == NULL) return hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
  hs_status st = HS_OK;
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    ids[i] =
        c->key_columns[i] != NULL ? hs_table_current_field_id(&t->meta, c->key_columns[i]) : -1;
    if (ids[i] < 0)
      st = hs_error_set(err, HS_ERR_SCHEMA, "%s: key column '%s' is not in the table",
                        t->metadata_path, c->key_columns[i] ? c->key_columns[i] : "(null)");
  }
  const hs_iceberg_schema *schema = hs_iceberg_metadata_schema(&t->meta, d->schema_id);
  if (st == HS_OK && schema == NULL)
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: no current schema", t->metadata_path);
  size_t n_rows = 0;
  for (size_t b = 0; b < c->n_keys_batches; b++) n_rows += (size_t)c->keys[b].length;
  bool where = c->key_where != NULL && c->key_where[strspn(c->key_where, " \t\r\n")] != '\0';
  uint8_t *hit = NULL, *hit_w = NULL; /* per key row */
  hs_table_eqdel *set = NULL, *set_w = NULL;
  roaring_bitmap_t **found = NULL, **w = NULL, **found_w = NULL, **unmatched = NULL, **f_ok = NULL;
  if (st == HS_OK &&
      ((hit = hs_calloc(n_rows + 1, 1)) == NULL || (hit_w = hs_calloc(n_rows + 1, 1)) == NULL))
    st = hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
  if (st == HS_OK)
    st = hs_table_eqdel_from_arrow(ids, n, schema, c->keys_schema, c->keys, c->n_keys_batches, &set,
                                   err);
  if (st == HS_OK) st = match_keys(d, set, schema, NULL, &found, err);
  if (st == HS_OK) hs_table_eqdel_hits(set, hit);
  if (st == HS_OK && !where) memcpy(hit_w, hit, n_rows);
  if (st == HS_OK && where &&
      (!c->keep_matched || c->key_matched_where != NULL ||
       (c->append_select & HS_APPEND_MATCHED))) {
    st = collect_where(d, c->key_where, found, &w, err);
    for (size_t i = 0; st == HS_OK && i < nf; i++)
      if (w[i] != NULL && found[i] != NULL) roaring_bitmap_and_inplace(w[i], found[i]);
    /* which key rows hit a row satisfying key_where: a second match */
    if (st == HS_OK)
      st = hs_table_eqdel_from_arrow(ids, n, schema, c->keys_schema, c->keys, c->n_keys_batches,
                                     &set_w, err);
    if (st == HS_OK) st = match_keys(d, set_w, schema, w, &found_w, err);
    if (st == HS_OK) hs_table_eqdel_hits(set_w, hit_w);
  }
  if (st == HS_OK && c->delete_unmatched) {
    bool filt = c->unmatched_filter != NULL &&
                c->unmatched_filter[strspn(c->unmatched_filter, " \t\r\n")] != '\0';
    st = collect_where(d, NULL, NULL, &unmatched, err);
    for (size_t i = 0; st == HS_OK && i < nf; i++)
      if (unmatched[i] != NULL && found[i] != NULL)
        roaring_bitmap_andnot_inplace(unmatched[i], found[i]);
    if (st == HS_OK && filt) st = collect_where(d, c->unmatched_filter, unmatched, &f_ok, err);
    for (size_t i = 0; st == HS_OK && filt && i < nf; i++) {
      if (unmatched[i] == NULL) continue;
      if (f_ok[i] != NULL)
        roaring_bitmap_and_inplace(unmatched[i], f_ok[i]);
      else
        roaring_bitmap_clear(unmatched[i]);
    }
  }
  for (size_t i = 0; st == HS_OK && i < nf; i++) {
    if (!c->keep_matched) d->res.rows_matched_deleted += add_marks(d, i, where ? &w[i] : &found[i]);
    if (unmatched != NULL) (void)add_marks(d, i, &unmatched[i]);
  }
  if (st == HS_OK && c->key_matched != NULL) memcpy(c->key_matched, hit, n_rows);
  if (st == HS_OK && c->key_matched_where != NULL) memcpy(c->key_matched_where, hit_w, n_rows);
  if (st == HS_OK && c->append_select != 0) {
    for (size_t r = 0; r < n_rows; r++)
      hit[r] = ((c->append_select & HS_APPEND_MATCHED) && hit_w[r]) ||
               ((c->append_select & HS_APPEND_UNMATCHED) && !hit[r]);
    d->select = hit;
    d->n_select = n_rows;
    hit = NULL;
  }
  free_bitmaps(found, nf);
  free_bitmaps(w, nf);
  free_bitmaps(found_w, nf);
  free_bitmaps(unmatched, nf);
  free_bitmaps(f_ok, nf);
  hs_table_eqdel_free(set);
  hs_table_eqdel_free(set_w);
  hs_free(hit);
  hs_free(hit_w);
  hs_free(ids);
  return st;
}

/* ------------------------------------------------------ append selection */

/* The rows of a source stream whose byte in `keep` is set (one byte per
 * source row, in stream order): appends[0] of a merge. */
typedef struct select_stream {
  struct ArrowArrayStream in;
  struct ArrowSchema schema; /* the input's (for the filter) */
  const uint8_t *keep;
  size_t n_keep, row;
  uint64_t *bits;
  size_t cap_bits;
  char msg[HS_ERROR_MESSAGE_MAX + 16];
} select_stream;

static int select_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  select_stream *x = s->private_data;
  return x->in.get_schema(&x->in, out);
}

static int select_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  select_stream *x = s->private_data;
  for (;;) {
    struct ArrowArray a;
    memset(&a, 0, sizeof a);
    int rc = x->in.get_next(&x->in, &a);
    if (rc != 0) {
      const char *m = x->in.get_last_error ? x->in.get_last_error(&x->in) : NULL;
      snprintf(x->msg, sizeof x->msg, "%s", m ? m : "the source stream failed");
      return rc;
    }
    if (a.release == NULL) {
      if (x->row != x->n_keep) {
        snprintf(x->msg, sizeof x->msg, "merge: the source has %zu rows, its keys %zu", x->row,
                 x->n_keep);
        return EINVAL;
      }
      *out = a;
      return 0;
    }
    size_t len = (size_t)a.length;
    if (len > x->n_keep - x->row) {
      a.release(&a);
      snprintf(x->msg, sizeof x->msg, "merge: the source has more rows than its %zu keys",
               x->n_keep);
      return EINVAL;
    }
    size_t words = (len + 63) / 64;
    if (words > x->cap_bits) {
      uint64_t *nb = hs_realloc(x->bits, words * sizeof *nb);
      if (nb == NULL) {
        a.release(&a);
        snprintf(x->msg, sizeof x->msg, "merge: out of memory");
        return ENOMEM;
      }
      x->bits = nb;
      x->cap_bits = words;
    }
    memset(x->bits, 0, words * sizeof *x->bits);
    int64_t kept = 0;
    for (size_t r = 0; r < len; r++)
      if (x->keep[x->row + r]) {
        x->bits[r / 64] |= (uint64_t)1 << (r % 64);
        kept++;
      }
    x->row += len;
    if ((size_t)kept == len) {
      *out = a;
      return 0;
    }
    if (kept == 0) {
      a.release(&a);
      continue;
    }
    hs_error e;
    memset(&e, 0, sizeof e);
    hs_status st = hs_arrow_array_filter(&x->schema, &a, x->bits, kept, out, &e);
    a.release(&a);
    if (st != HS_OK) {
      snprintf(x->msg, sizeof x->msg, "merge: %s", e.message);
      return EINVAL;
    }
    return 0;
  }
}

static const char *select_last_error(struct ArrowArrayStream *s) {
  select_stream *x = s->private_data;
  return x->msg[0] ? x->msg : NULL;
}

static void select_release(struct ArrowArrayStream *s) {
  select_stream *x = s->private_data;
  if (x != NULL) {
    if (x->in.release != NULL) x->in.release(&x->in);
    hs_arrow_schema_release(&x->schema);
    hs_free(x->bits);
    hs_free(x);
  }
  s->release = NULL;
}

/* Wrap *s (moved in) to keep only the rows d->select names. */
static hs_status select_wrap(const delta *d, struct ArrowArrayStream *s, hs_error *err) {
  select_stream *x = hs_calloc(1, sizeof *x);
  if (x == NULL) return hs_error_set(err, HS_ERR_NOMEM, "merge: out of memory");
  x->in = *s;
  s->release = NULL;
  x->keep = d->select;
  x->n_keep = d->n_select;
  if (x->in.get_schema(&x->in, &x->schema) != 0) {
    const char *m = x->in.get_last_error ? x->in.get_last_error(&x->in) : NULL;
    hs_status st = hs_error_set(err, HS_ERR_INVALID_ARG,
                                "merge: the source stream has no schema: %s", m ? m : "no message");
    x->in.release(&x->in);
    hs_free(x);
    return st;
  }
  s->get_schema = select_get_schema;
  s->get_next = select_get_next;
  s->get_last_error = select_last_error;
  s->release = select_release;
  s->private_data = x;
  return HS_OK;
}

/* --------------------------------------------------------------- appends */

static hs_status schema_recheck(const hs_table *t, void *ctx, hs_error *err) {
  const delta *d = ctx;
  if (t->meta.current_schema_id != d->schema_id)
    return hs_error_set(err, HS_ERR_SCHEMA,
                        "%s: the table schema changed during the change (schema id %d -> %d)",
                        t->metadata_path, (int)d->schema_id, (int)t->meta.current_schema_id);
  return HS_OK;
}

/* Write `stream` (consumed) as data files of the change. */
static hs_status append_stream(delta *d, struct ArrowArrayStream *stream, int64_t *rows,
                               hs_error *err) {
  hs_table *t = d->t;
  const hs_iceberg_schema *schema = hs_iceberg_metadata_schema(&t->meta, d->schema_id);
  const hs_iceberg_partition_spec *spec = NULL;
  const hs_iceberg_sort_order *order = NULL;
  for (size_t i = 0; i < t->meta.n_specs; i++)
    if (t->meta.specs[i].spec_id == t->meta.default_spec_id) spec = &t->meta.specs[i];
  for (size_t i = 0; t->meta.has_default_sort_order_id && i < t->meta.n_sort_orders; i++)
    if (t->meta.sort_orders[i].order_id == t->meta.default_sort_order_id)
      order = &t->meta.sort_orders[i];
  struct ArrowSchema in, stamped;
  memset(&in, 0, sizeof in);
  memset(&stamped, 0, sizeof stamped);
  hs_status st = HS_OK;
  if (schema == NULL || spec == NULL)
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: no current schema or default partition spec",
                      t->metadata_path);
  if (st == HS_OK && stream->get_schema(stream, &in) != 0) {
    const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "row change: input stream has no schema: %s",
                      m ? m : "no message");
  }
  if (st == HS_OK) st = hs_table_append_schema(t, schema, &in, &stamped, err);
  hs_iceberg_data_file *files = NULL;
  size_t n = 0;
  if (st == HS_OK)
    st = hs_table_write_clustered(t, schema, spec, order, &stamped, stream, &d->arena, &files, &n,
                                  err);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    st = remember(d, files[i].file_path, err);
    *rows += files[i].record_count;
  }
  if (st == HS_OK && n > 0) st = hs_txn_add_files(d->txn, files, n, spec->spec_id, err);
  if (st == HS_OK) d->res.files_added += (int64_t)n;
  hs_arrow_schema_release(&stamped);
  hs_arrow_schema_release(&in);
  if (stream->release != NULL) stream->release(stream);
  return st;
}

/* ----------------------------------------------------------- the writers */

static hs_status new_path(const hs_table *t, const char *suffix, char *out, size_t cap,
                          hs_error *err) {
  char uuid[37];
  hs_status st = hs_fs_uuid4(uuid, err);
  if (st == HS_OK) snprintf(out, cap, "%s/data/00000-0-%s-%s", t->root, uuid, suffix);
  return st;
}

/* How many position delete files may apply to one data file before a
 * change that deletes from it merges them: table property
 * hyperstream.delete.max-position-files (>= 1; 1: always merged). */
#define POSDEL_MAX_FILES_PROPERTY "hyperstream.delete.max-position-files"
enum { POSDEL_MAX_FILES_DEFAULT = 4 };

static hs_status posdel_max_files(const hs_table *t, uint32_t *out, hs_error *err) {
  *out = POSDEL_MAX_FILES_DEFAULT;
  const char *v = hs_iceberg_metadata_property(&t->meta, POSDEL_MAX_FILES_PROPERTY);
  if (v == NULL) return HS_OK;
  char *end = NULL;
  long long n = strtoll(v, &end, 10);
  if (end == v || *end != '\0' || n < 1 || n > 1000000)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: table property %s = '%s': not an integer from 1 to 1000000",
                        t->metadata_path, POSDEL_MAX_FILES_PROPERTY, v);
  *out = (uint32_t)n;
  return HS_OK;
}

static bool has_str(const char *const *v, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i], s) == 0) return true;
  return false;
}

/* The position delete files to merge into the new file of the group
 * whose members are in_group[] (partition of plan file `first`): every
 * file applied to a member, then, until nothing changes, every data file
 * of the partition such a file applies to joins (in_group) and its files
 * too, so that each removed file's positions are all restated. *rm holds
 * the recorded paths (hs_malloc'd array, borrowed strings). */
static hs_status merge_closure(const delta *d, size_t first, bool *in_group, const char ***rm,
                               size_t *n_rm, hs_error *err) {
  size_t cap = 0;
  *rm = NULL;
  *n_rm = 0;
  bool grew = true;
  while (grew) {
    grew = false;
    for (size_t k = 0; k < d->plan.n_files; k++) {
      const hs_table_plan_file *f = &d->plan.files[k];
      if (f->n_pos_files == 0) continue;
      if (!in_group[k]) {
        bool touches = false;
        for (uint32_t q = 0; !touches && q < f->n_pos_files; q++)
          touches = has_str(*rm, *n_rm, f->pos_files[q]);
        if (!touches || !hs_table_plan_same_partition(&d->plan.files[first], f)) continue;
        in_group[k] = true;
        grew = true;
      }
      for (uint32_t q = 0; q < f->n_pos_files; q++) {
        if (has_str(*rm, *n_rm, f->pos_files[q])) continue;
        if (*n_rm == cap) {
          cap = cap ? 2 * cap : 8;
          const char **nv = hs_realloc(*rm, cap * sizeof *nv);
          if (nv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
          *rm = nv;
        }
        (*rm)[(*n_rm)++] = f->pos_files[q];
        grew = true;
      }
    }
  }
  return HS_OK;
}

/* Whether plan file i gets a position delete file in this change: it has
 * new marks, or (merge_position_deletes) several position delete files. */
static bool posdel_touched(const delta *d, size_t i) {
  if (d->marked[i] != NULL && !roaring_bitmap_is_empty(d->marked[i])) return true;
  return d->merge_all && d->plan.files[i].n_pos_files >= 2;
}

/* Merge-on-read, v2: a position-delete file per (spec, partition) of the
 * touched data files, holding their new positions. When a touched file
 * already has `max` position delete files applied, the new file instead
 * restates every position of the partition's files those delete files
 * cover (old and new) and they are removed in the same commit, so that a
 * reader never combines more than `max` files for one data file. */
static hs_status write_position_deletes(delta *d, hs_error *err) {
  size_t n = d->plan.n_files;
  uint32_t max = POSDEL_MAX_FILES_DEFAULT;
  hs_status st = posdel_max_files(d->t, &max, err);
  bool *done = hs_calloc(n ? n : 1, 1);
  bool *in_group = hs_calloc(n ? n : 1, 1);
  hs_table_delete_group *g = hs_malloc((n ? n : 1) * sizeof *g);
  roaring_bitmap_t **full = hs_calloc(n ? n : 1, sizeof *full);
  if (st == HS_OK && (done == NULL || in_group == NULL || g == NULL || full == NULL))
    st = hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    if (done[i] || !posdel_touched(d, i)) continue;
    const hs_table_plan_file *fi = &d->plan.files[i];
    bool merge = d->merge_all;
    memset(in_group, 0, n);
    for (size_t j = i; j < n; j++) {
      if (done[j] || !posdel_touched(d, j)) continue;
      if (j != i && !hs_table_plan_same_partition(fi, &d->plan.files[j])) continue;
      done[j] = in_group[j] = true;
      merge |= d->plan.files[j].n_pos_files >= max;
      st = hs_txn_require_data_file(d->txn, d->plan.files[j].data_file->file_path, err);
      if (st != HS_OK) break;
    }
    const char **rm = NULL;
    size_t n_rm = 0;
    if (st == HS_OK && merge) st = merge_closure(d, i, in_group, &rm, &n_rm, err);
    size_t ng = 0;
    for (size_t j = 0; st == HS_OK && j < n; j++) {
      if (!in_group[j]) continue;
      const hs_table_plan_file *fj = &d->plan.files[j];
      const roaring_bitmap_t *rows = d->marked[j];
      if (merge && fj->deleted != NULL) {
        /* restated: its old positions (the plan's set, which may also hold
         * rows equality deletes remove: harmless) and the new ones */
        if ((full[j] = roaring_bitmap_copy(fj->deleted)) == NULL) {
          st = hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
          break;
        }
        if (rows != NULL) roaring_bitmap_or_inplace(full[j], rows);
        rows = full[j];
      }
      if (rows == NULL || roaring_bitmap_is_empty(rows)) continue;
      g[ng++] = (hs_table_delete_group){fj->data_file->file_path, rows};
    }
    for (size_t r = 0; st == HS_OK && r < n_rm; r++) {
      st = hs_txn_remove_file(d->txn, rm[r], err);
      d->res.delete_files_removed++;
    }
    hs_free(rm);
    char path[4200];
    if (st == HS_OK) st = new_path(d->t, "deletes.parquet", path, sizeof path, err);
    hs_iceberg_data_file df;
    memset(&df, 0, sizeof df);
    if (st == HS_OK) st = hs_table_posdel_write(path, path, g, ng, &d->arena, &df, err);
    /* the next plan takes its positions from memory, not from the file */
    if (st == HS_OK) hs_posdel_cache_put(path, df.file_size_in_bytes, g, ng);
    if (st == HS_OK) st = remember(d, path, err);
    if (st != HS_OK) break;
    df.partition = fi->data_file->partition;
    df.n_partition = fi->data_file->n_partition;
    st = hs_txn_add_files(d->txn, &df, 1, fi->spec_id, err);
    if (st == HS_OK) st = hs_txn_add_written_path(d->txn, path, err);
    d->res.delete_files_added++;
  }
  for (size_t j = 0; full != NULL && j < n; j++)
    if (full[j] != NULL) roaring_bitmap_free(full[j]);
  hs_free(full);
  hs_free(done);
  hs_free(in_group);
  hs_free(g);
  return st;
}

/* Merge-on-read, v3: one deletion vector per touched data file holding all
 * its deletes; the file's old vector (if any) is removed in the same
 * commit (only that vector: others in its Puffin file stay live). */
static hs_status write_deletion_vectors(delta *d, hs_error *err) {
  size_t n = d->plan.n_files;
  roaring_bitmap_t **merged = hs_calloc(n ? n : 1, sizeof *merged);
  hs_table_delete_group *g = hs_malloc((n ? n : 1) * sizeof *g);
  size_t *gi = hs_malloc((n ? n : 1) * sizeof *gi);
  hs_status st = merged == NULL || g == NULL || gi == NULL
                     ? hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory")
                     : HS_OK;
  size_t ng = 0;
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    if (d->marked[i] == NULL || roaring_bitmap_is_empty(d->marked[i])) continue;
    const hs_table_plan_file *f = &d->plan.files[i];
    /* The vector holds every delete of the file: its old vector, its
     * position deletes and (harmlessly) rows equality deletes remove. */
    merged[i] = f->deleted != NULL ? roaring_bitmap_copy(f->deleted) : roaring_bitmap_create();
    if (merged[i] == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
      break;
    }
    roaring_bitmap_or_inplace(merged[i], d->marked[i]);
    gi[ng] = i;
    g[ng++] = (hs_table_delete_group){f->data_file->file_path, merged[i]};
    st = hs_txn_require_data_file(d->txn, f->data_file->file_path, err);
    if (st == HS_OK && f->dv_file != NULL) {
      st = hs_txn_remove_dv(d->txn, f->dv_file, f->data_file->file_path, err);
      d->res.delete_files_removed++;
    }
  }
  char path[4200];
  hs_iceberg_data_file *dfs = NULL;
  if (st == HS_OK && ng > 0) {
    dfs = hs_arena_alloc(&d->arena, ng * sizeof *dfs);
    if (dfs == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
  }
  if (st == HS_OK && ng > 0) st = new_path(d->t, "dv.puffin", path, sizeof path, err);
  if (st == HS_OK && ng > 0) st = hs_table_dv_write(path, path, g, ng, &d->arena, dfs, err);
  if (st == HS_OK && ng > 0) st = remember(d, path, err);
  for (size_t k = 0; st == HS_OK && k < ng; k++) {
    const hs_table_plan_file *f = &d->plan.files[gi[k]];
    dfs[k].partition = f->data_file->partition;
    dfs[k].n_partition = f->data_file->n_partition;
    st = hs_txn_add_files(d->txn, &dfs[k], 1, f->spec_id, err);
  }
  if (st == HS_OK && ng > 0) st = hs_txn_add_written_path(d->txn, path, err);
  if (st == HS_OK) d->res.delete_files_added += (int64_t)ng;
  for (size_t i = 0; merged != NULL && i < n; i++)
    if (merged[i] != NULL) roaring_bitmap_free(merged[i]);
  hs_free(merged);
  hs_free(g);
  hs_free(gi);
  return st;
}

static bool cow_keep(void *ctx, size_t plan_index, const char *path, int64_t size) {
  (void)path;
  (void)size;
  const delta *d = ctx;
  return plan_index < d->plan.n_files && d->marked[plan_index] != NULL &&
         !roaring_bitmap_is_empty(d->marked[plan_index]);
}

/* Copy-on-write: the touched files' surviving rows written again (a scan
 * of the plan whose deletes include the marks), the files removed. */
static hs_status rewrite_files(delta *d, hs_error *err) {
  size_t n = d->plan.n_files;
  hs_table_plan view = d->plan; /* borrowed: never freed as a plan */
  view.shared = NULL;
  view.bitmaps = NULL;
  view.n_bitmaps = 0;
  view.files = hs_malloc((n ? n : 1) * sizeof *view.files);
  roaring_bitmap_t **own = hs_calloc(n ? n : 1, sizeof *own);
  hs_status st = view.files == NULL || own == NULL
                     ? hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory")
                     : HS_OK;
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    view.files[i] = d->plan.files[i];
    if (!cow_keep(d, i, NULL, 0)) continue;
    own[i] = d->plan.files[i].deleted != NULL ? roaring_bitmap_copy(d->plan.files[i].deleted)
                                              : roaring_bitmap_create();
    if (own[i] == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
      break;
    }
    roaring_bitmap_or_inplace(own[i], d->marked[i]);
    view.files[i].deleted = own[i];
    view.files[i].n_deleted = (int64_t)roaring_bitmap_get_cardinality(own[i]);
    st = hs_txn_remove_file(d->txn, d->plan.files[i].data_file->file_path, err);
    d->res.files_removed++;
  }
  /* v3: the kept rows keep their _row_id and _last_updated_sequence_number
   * (lineage.h: read with the columns, written back under their ids). */
  const char **cols = NULL;
  size_t n_cols = 0;
  if (st == HS_OK) st = hs_lineage_scan_columns(d->t, d->plan.snapshot_id, &cols, &n_cols, err);
  if (st == HS_OK) {
    hs_scan_options so;
    hs_scan_options_init(&so);
    so.snapshot_id = d->plan.snapshot_id;
    so.columns = cols;
    so.n_columns = n_cols;
    hs_scan_hooks hooks = {.keep_file = cow_keep, .ctx = d, .plan = &view};
    struct ArrowArrayStream s;
    st = hs_table_scan_query_hooked(d->t, &so, &hooks, &s, err);
    int64_t kept = 0;
    if (st == HS_OK) st = append_stream(d, &s, &kept, err); /* consumes s */
  }
  for (size_t i = 0; own != NULL && i < n; i++)
    if (own[i] != NULL) roaring_bitmap_free(own[i]);
  hs_free(own);
  hs_free(view.files);
  hs_free(cols);
  return st;
}

/* ---------------------------------------------------------------- commit */

static hs_status mode_of(const hs_table *t, const char *property, bool *cow, hs_error *err) {
  *cow = false;
  const char *v = property != NULL ? hs_iceberg_metadata_property(&t->meta, property) : NULL;
  if (v == NULL || strcasecmp(v, "merge-on-read") == 0) return HS_OK;
  if (strcasecmp(v, "copy-on-write") == 0) {
    *cow = true;
    return HS_OK;
  }
  return hs_error_set(err, HS_ERR_INVALID_ARG,
                      "%s: table property %s = '%s': not 'merge-on-read' or 'copy-on-write'",
                      t->metadata_path, property, v);
}

/* validateNoConflictingData with the change's delete filters as the
 * conflict filter: they were evaluated on the snapshot the change began
 * on, so a data file appended since then whose manifest metrics (column
 * bounds, null counts) do not prove that none of its rows matches one of
 * them makes the change stale. An empty filter, a filter that does not
 * bind, or statistics that cannot be read: every added file conflicts. */
typedef struct conflict_filter {
  const hs_table *t; /* its meta is the version being validated against */
  int32_t schema_id;
  struct ArrowSchema rs; /* the read schema the filters are bound to */
  hs_expr **exprs;
  size_t n_exprs;
  bool all; /* every added data file conflicts */
  hs_expr_stats *stats;
  hs_arena scratch;
} conflict_filter;

static void conflict_filter_init(conflict_filter *cf, const delta *d, const hs_row_change *c) {
  memset(cf, 0, sizeof *cf);
  cf->t = d->t;
  cf->schema_id = d->schema_id;
  hs_arena_init(&cf->scratch);
  hs_error e = {0};
  cf->all = true;
  if (c->n_key_columns > 0) return; /* key matches: any appended file may hold a key */
  if (hs_table_read_schema_arrow(d->t, d->plan.snapshot_id, &cf->rs, &e) != HS_OK) return;
  size_t nf = cf->rs.n_children > 0 ? (size_t)cf->rs.n_children : 1;
  cf->exprs = hs_calloc(c->n_deletes ? c->n_deletes : 1, sizeof *cf->exprs);
  cf->stats = hs_malloc(nf * sizeof *cf->stats);
  if (cf->exprs == NULL || cf->stats == NULL) return;
  for (size_t i = 0; i < c->n_deletes; i++) {
    const char *f = c->deletes[i];
    if (f == NULL || f[strspn(f, " \t\r\n")] == '\0') return; /* every row */
    if (hs_expr_parse(f, &cf->rs, &cf->exprs[i], NULL, &e) != HS_OK) return;
    cf->n_exprs++;
  }
  cf->all = false;
}

static void conflict_filter_free(conflict_filter *cf) {
  for (size_t i = 0; cf->exprs != NULL && i < cf->n_exprs; i++) hs_expr_free(cf->exprs[i]);
  hs_free(cf->exprs);
  hs_free(cf->stats);
  if (cf->rs.release != NULL) cf->rs.release(&cf->rs);
  hs_arena_reset(&cf->scratch);
}

static bool added_conflicts(void *ctx, const hs_iceberg_data_file *added) {
  conflict_filter *cf = ctx;
  if (cf->all) return true;
  const hs_iceberg_schema *schema = hs_iceberg_metadata_schema(&cf->t->meta, cf->schema_id);
  if (schema == NULL) return true;
  bool may = false;
  for (size_t i = 0; !may && i < cf->n_exprs; i++) {
    hs_error e = {0};
    hs_status st = hs_scan_file_stats(&cf->t->meta, schema, NULL, &cf->rs, NULL, added,
                                      &cf->scratch, cf->stats, &e);
    if (st == HS_OK) st = hs_expr_may_match(cf->exprs[i], cf->stats, cf->rs.n_children, &may, &e);
    hs_arena_reset(&cf->scratch);
    if (st != HS_OK) may = true;
  }
  return may;
}

static void delta_free(delta *d, bool committed) {
  for (size_t i = 0; d->marked != NULL && i < d->plan.n_files; i++)
    if (d->marked[i] != NULL) roaring_bitmap_free(d->marked[i]);
  hs_free(d->marked);
  if (d->planned) hs_table_plan_free(&d->plan);
  for (size_t i = 0; i < d->n_written; i++) {
    if (!committed) (void)hs_table_file_remove(d->written[i], NULL); /* local or object */
    hs_free(d->written[i]);
  }
  hs_free(d->written);
  hs_free(d->select);
  hs_txn_free(d->txn);
  hs_arena_reset(&d->arena);
}

hs_status hs_table_change_rows(hs_table *t, const hs_row_change *c, hs_row_change_result *out,
                               hs_error *err) {
  memset(out, 0, sizeof *out);
  out->snapshot_id = -1;
  delta d;
  memset(&d, 0, sizeof d);
  d.t = t;
  d.res.snapshot_id = -1; /* copied to *out: -1 unless a commit is made */
  hs_arena_init(&d.arena);
  bool committed = false;
  hs_status st = hs_table_check_writable(t, c->what != NULL ? c->what : "change", err);
  if (st == HS_OK) st = hs_txn_begin(t, c->what != NULL ? c->what : "change", &d.txn, err);
  int64_t sid = c->snapshot_id;
  /* A change decided on an older snapshot than the one it commits on is
   * refused (the caller re-runs it); validating the commits since then
   * instead would let it through when they do not touch its files. */
  if (st == HS_OK && sid >= 0 && sid != hs_txn_start_snapshot_id(d.txn))
    st = hs_error_set(err, HS_ERR_CONFLICT,
                      "%s: %s: the table changed after snapshot %lld was read (now %lld); run the "
                      "change again",
                      t->root, c->what != NULL ? c->what : "change", (long long)sid,
                      (long long)hs_txn_start_snapshot_id(d.txn));
  if (st == HS_OK) {
    d.schema_id = t->meta.current_schema_id;
    st = hs_table_plan_files(t, sid, &d.plan, err);
    d.planned = st == HS_OK;
  }
  if (st == HS_OK && (d.marked = hs_calloc(d.plan.n_files + 1, sizeof *d.marked)) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "row change: out of memory");
  for (size_t i = 0; st == HS_OK && i < c->n_deletes; i++) st = mark_where(&d, c->deletes[i], err);
  if (st == HS_OK && c->n_key_columns > 0 && c->keys != NULL) st = mark_keys(&d, c, err);
  bool cow = false;
  if (st == HS_OK) st = mode_of(t, c->mode_property, &cow, err);
  d.merge_all = c->merge_position_deletes && t->meta.format_version == 2;
  if (st == HS_OK && !d.merge_all && c->merge_position_deletes && t->meta.format_version != 2)
    st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                      "%s: merging position delete files is for format v2 tables (v3 keeps one "
                      "deletion vector per data file)",
                      t->root);
  if (st == HS_OK && c->merge_position_deletes &&
      (c->n_deletes > 0 || c->n_key_columns > 0 || c->n_appends > 0))
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "%s: merging position delete files is a change of its own (no deletes, "
                      "keys or appends with it)",
                      t->root);
  if (st == HS_OK && d.merge_all) {
    st = write_position_deletes(&d, err);
  } else if (st == HS_OK && d.res.rows_deleted > 0) {
    if (cow)
      st = rewrite_files(&d, err);
    else if (t->meta.format_version >= 3)
      st = write_deletion_vectors(&d, err);
    else
      st = write_position_deletes(&d, err);
  }
  if (st == HS_OK && c->append_select != 0 && c->n_appends > 1)
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: append_select takes one stream, not %zu",
                      t->root, c->n_appends);
  if (st == HS_OK && c->append_select != 0 && (c->n_key_columns == 0 || c->keys == NULL))
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: append_select needs key matching", t->root);
  for (size_t i = 0; i < c->n_appends; i++) { /* consumed, also after a failure */
    if (st == HS_OK && d.select != NULL) st = select_wrap(&d, &c->appends[i], err);
    if (st == HS_OK)
      st = append_stream(&d, &c->appends[i], &d.res.rows_added, err);
    else if (c->appends[i].release != NULL)
      c->appends[i].release(&c->appends[i]);
  }
  bool any = d.res.delete_files_added > 0 || d.res.files_added > 0 || d.res.files_removed > 0 ||
             d.res.delete_files_removed > 0;
  conflict_filter cf;
  memset(&cf, 0, sizeof cf);
  if (st == HS_OK && any) {
    /* merged delete files change no row: Iceberg's RewriteFiles */
    hs_txn_set_operation(d.txn, d.merge_all ? HS_TXN_OP_REPLACE : HS_TXN_OP_AUTO);
    hs_txn_set_schema_id(d.txn, d.schema_id);
    hs_txn_set_recheck(d.txn, schema_recheck, &d);
    if (c->n_deletes > 0 || c->n_key_columns > 0) {
      /* Serializable, as Iceberg's row deltas: a commit since the planned
       * snapshot that appended rows the filters may match, or added deletes for a data file this
       * change deletes from, is a conflict (the change is re-run on the
       * new snapshot); without it two updates of one row both append it,
       * and an update re-appends a row deleted meanwhile. */
      conflict_filter_init(&cf, &d, c);
      hs_txn_set_conflict_filter(d.txn, added_conflicts, &cf);
      hs_txn_validate_no_conflicting_deletes(d.txn, true);
    }
    int64_t snap = -1;
    st = hs_txn_commit(d.txn, &snap, &committed, err);
    if (committed) d.res.snapshot_id = snap;
  }
  if (st == HS_OK) *out = d.res;
  delta_free(&d, committed);
  conflict_filter_free(&cf);
  return st;
}
