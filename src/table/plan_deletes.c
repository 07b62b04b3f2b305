/*
 * plan_deletes.c — the live-row set of every planned data file: which of
 * the snapshot's delete files apply to which data file (the spec's "Scan
 * Planning" scope rules), decided once per plan, and the deleted positions
 * they add up to, as one Roaring bitmap per data file.
 *
 * Scope rules (apache/iceberg format/spec.md, "Scan Planning"):
 *  - a deletion vector applies to the data file named by its
 *    referenced_data_file when the data file's data sequence number is <=
 *    the vector's and both have the same partition (spec id and values);
 *  - a position delete file applies likewise (to the rows naming the data
 *    file; only to referenced_data_file when set), unless a deletion vector
 *    applies to that data file (a vector holds every earlier position
 *    delete of its file);
 *  - an equality delete file applies to data files whose data sequence
 *    number is strictly smaller, in the same partition, or to every data
 *    file when its spec is unpartitioned (a global delete).
 * Delete files naming data files that are not in the snapshot (dangling,
 * e.g. after a compaction) delete nothing. Positions at or past a file's
 * record count are ignored.
 *
 * The bitmaps are owned by the plan (hs_table_plan.bitmaps) and cached with
 * it (plan.c), so a later query of the same snapshot reads no delete file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../io/store.h"
#include "deletes.h"
#include "deletes_cache.h"
#include "deletes_eq.h"
#include "plan_deletes.h"

/* Two partition tuples of one spec (values of the same types) are equal:
 * nulls equal nulls; floats by their bits (the spec's note 3). */
static bool value_eq(const hs_iceberg_value *a, const hs_iceberg_value *b) {
  if (a->is_null || b->is_null) return a->is_null == b->is_null;
  return a->b == b->b && a->i64 == b->i64 && memcmp(&a->f64, &b->f64, sizeof a->f64) == 0 &&
         a->dec_hi == b->dec_hi && a->dec_lo == b->dec_lo && a->len == b->len &&
         (a->len == 0 || memcmp(a->bytes, b->bytes, a->len) == 0);
}

static bool same_partition(const hs_table_plan_file *f, int32_t spec_id,
                           const hs_iceberg_data_file *d) {
  if (f->spec_id != spec_id || f->data_file->n_partition != d->n_partition) return false;
  for (size_t i = 0; i < d->n_partition; i++)
    if (!value_eq(&f->data_file->partition[i], &d->partition[i])) return false;
  return true;
}

bool hs_table_plan_same_partition(const hs_table_plan_file *a, const hs_table_plan_file *b) {
  return same_partition(a, b->spec_id, b->data_file);
}

static bool spec_unpartitioned(const hs_table *t, int32_t spec_id) {
  for (size_t i = 0; i < t->meta.n_specs; i++)
    if (t->meta.specs[i].spec_id == spec_id) return t->meta.specs[i].n_fields == 0;
  return false; /* unknown spec: never global */
}

/* ------------------------------------------------------ path lookup */

typedef struct path_ref {
  const char *path;
  size_t index;
} path_ref;

typedef struct plan_index {
  hs_table_plan *p;
  path_ref *by_path; /* the files' resolved paths, sorted */
} plan_index;

static int path_ref_cmp(const void *a, const void *b) {
  return strcmp(((const path_ref *)a)->path, ((const path_ref *)b)->path);
}

/* The plan index of the data file at resolved `path`, or -1. */
static ssize_t find_path(const plan_index *ix, const char *path) {
  path_ref key = {.path = path};
  const path_ref *r = bsearch(&key, ix->by_path, ix->p->n_files, sizeof key, path_ref_cmp);
  return r != NULL ? (ssize_t)r->index : -1;
}

/* The data file a recorded path names, or -1 (not in the plan, or a path
 * outside the table: such a delete names no file of ours). */
static ssize_t find_recorded(const hs_table *t, const plan_index *ix, const char *recorded) {
  char *path = NULL;
  hs_error e;
  memset(&e, 0, sizeof e);
  if (hs_table_resolve_path(t, recorded, "delete", &path, &e) != HS_OK) return -1;
  ssize_t i = find_path(ix, path);
  hs_free(path);
  return i;
}

/* ------------------------------------------------------ per-file sets */

typedef struct file_dels {
  roaring_bitmap_t *bm;
  bool has_dv;
  const char **pos; /* recorded paths of the position delete files applied (hs_malloc'd) */
  uint32_t n_pos, cap_pos;
} file_dels;

/* Note position delete file `recorded` as applied to `fd`. */
static hs_status note_pos_file(file_dels *fd, const char *recorded, hs_error *err) {
  if (fd->n_pos == fd->cap_pos) {
    uint32_t cap = fd->cap_pos ? 2 * fd->cap_pos : 4;
    const char **nv = hs_realloc(fd->pos, cap * sizeof *nv);
    if (nv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
    fd->pos = nv;
    fd->cap_pos = cap;
  }
  fd->pos[fd->n_pos++] = recorded;
  return HS_OK;
}

static hs_status bm_of(file_dels *fd, hs_error *err) {
  if (fd->bm == NULL && (fd->bm = roaring_bitmap_create()) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
  return HS_OK;
}

/* Position deletes of one file, distributed to the data files they name. */
typedef struct posdel_ctx {
  const hs_table *t;
  const plan_index *ix;
  file_dels *fds;
  const hs_table_plan_delete *d;
  bool *counted; /* per data file: this delete file already counted */
} posdel_ctx;

/* One data file's positions in the delete file (from the cache, or just
 * read): added to its set when the delete applies to it (scope: sequence
 * number, partition, no vector). Positions past its rows are cut later. */
static hs_status apply_target(void *vctx, const char *data_file, const roaring_bitmap_t *rows,
                              hs_error *err) {
  posdel_ctx *c = vctx;
  ssize_t ti = find_recorded(c->t, c->ix, data_file);
  if (ti < 0) return HS_OK;
  const hs_table_plan_file *f = &c->ix->p->files[ti];
  if (f->data_seq > c->d->e->sequence_number ||
      !same_partition(f, c->d->spec_id, &c->d->e->data_file) || c->fds[ti].has_dv)
    return HS_OK;
  if (f->data_file->record_count > (int64_t)UINT32_MAX + 1)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: deletes of data file %s, which has %lld rows (more than 2^32 rows "
                        "per file are not supported)",
                        c->d->path, data_file, (long long)f->data_file->record_count);
  file_dels *fd = &c->fds[ti];
  hs_status st = bm_of(fd, err);
  if (st != HS_OK) return st;
  roaring_bitmap_or_inplace(fd->bm, rows);
  if (!c->counted[ti]) {
    c->counted[ti] = true;
    c->ix->p->files[ti].n_delete_files++;
    st = note_pos_file(fd, c->d->e->data_file.file_path, err);
  }
  return st;
}

/* A delete file's positions per data file, as read (a cache miss). */
typedef struct posdel_collect {
  hs_table_delete_group *g; /* rows: owned bitmaps; data_file: owned copies */
  size_t n, cap;
  uint32_t *buf;
  size_t cap_buf;
} posdel_collect;

static hs_status collect_run(void *vctx, const char *data_file, const int64_t *pos, size_t n,
                             hs_error *err) {
  posdel_collect *c = vctx;
  size_t gi = c->n;
  if (c->n > 0 && strcmp(c->g[c->n - 1].data_file, data_file) == 0) gi = c->n - 1;
  for (size_t i = 0; gi == c->n && i + 1 < c->n; i++)
    if (strcmp(c->g[i].data_file, data_file) == 0) gi = i;
  if (gi == c->n) {
    if (c->n == c->cap) {
      size_t cap = c->cap ? 2 * c->cap : 4;
      hs_table_delete_group *ng = hs_realloc(c->g, cap * sizeof *ng);
      if (ng == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
      c->g = ng;
      c->cap = cap;
    }
    char *p = hs_strdup(data_file);
    roaring_bitmap_t *bm = p != NULL ? roaring_bitmap_create() : NULL;
    if (bm == NULL) {
      hs_free(p);
      return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
    }
    c->g[c->n++] = (hs_table_delete_group){p, bm};
  }
  if (n > c->cap_buf) {
    uint32_t *nb = hs_realloc(c->buf, n * sizeof *nb);
    if (nb == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
    c->buf = nb;
    c->cap_buf = n;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (pos[i] >= 0 && pos[i] <= (int64_t)UINT32_MAX) c->buf[k++] = (uint32_t)pos[i];
  roaring_bitmap_add_many((roaring_bitmap_t *)c->g[gi].rows, k, c->buf);
  return HS_OK;
}

static void collect_free(posdel_collect *c) {
  for (size_t i = 0; i < c->n; i++) {
    hs_free((char *)c->g[i].data_file);
    roaring_bitmap_free((roaring_bitmap_t *)c->g[i].rows);
  }
  hs_free(c->g);
  hs_free(c->buf);
}

/* Apply position delete file d (its contents from the process's cache, or
 * read, then cached). */
static hs_status apply_position_file(posdel_ctx *c, hs_error *err) {
  const hs_table_plan_delete *d = c->d;
  int64_t size = d->e->data_file.file_size_in_bytes;
  hs_status st = HS_OK;
  if (size > 0 && hs_posdel_cache_apply(d->path, size, apply_target, c, &st, err)) return st;
  posdel_collect col;
  memset(&col, 0, sizeof col);
  st = hs_table_posdel_read(d->path, collect_run, &col, err);
  if (st == HS_OK && size > 0) hs_posdel_cache_put(d->path, size, col.g, col.n);
  for (size_t i = 0; st == HS_OK && i < col.n; i++)
    st = apply_target(c, col.g[i].data_file, col.g[i].rows, err);
  collect_free(&col);
  return st;
}

static bool format_is(const hs_iceberg_data_file *d, const char *want) {
  if (d->file_format == NULL) return false;
  const char *a = d->file_format;
  for (; *a && *want; a++, want++) {
    char x = *a >= 'a' && *a <= 'z' ? (char)(*a - 'a' + 'A') : *a;
    if (x != *want) return false;
  }
  return *a == *want;
}

/* A delete file must have the size its manifest entry records: one
 * truncated, or replaced by another table's, would otherwise be read as
 * other deletes (a Puffin truncated after its vectors still parses; a
 * position delete file naming other paths deletes nothing). */
static hs_status delete_size_check(const hs_table_plan_delete *d, hs_error *err) {
  const hs_iceberg_data_file *df = &d->e->data_file;
  int64_t size = -1;
  if (df->file_size_in_bytes <= 0) return HS_OK;
  if (hs_store_is_remote(d->path)) { /* an object: its HEAD */
    hs_object_info info;
    if (hs_store_head(d->path, &info, NULL) != HS_OK) return HS_OK; /* the reader names it */
    size = (int64_t)info.size;
  } else {
    struct stat sb;
    if (stat(d->path, &sb) != 0 || !S_ISREG(sb.st_mode))
      return HS_OK; /* the reader names a missing or odd file */
    size = (int64_t)sb.st_size;
  }
  if (size == df->file_size_in_bytes) return HS_OK;
  return hs_error_set(err, HS_ERR_CORRUPT,
                      "%s: delete file %s: %lld bytes, but its manifest entry records %lld (the "
                      "file was replaced or damaged)",
                      d->manifest, df->file_path, (long long)size,
                      (long long)df->file_size_in_bytes);
}

/* Deletion vectors first (they decide which position delete files are
 * ignored), then position delete files, then equality deletes. */
static hs_status apply_dvs(const hs_table *t, const plan_index *ix, file_dels *fds,
                           const hs_table_plan_delete *d, size_t n, hs_error *err) {
  for (size_t k = 0; k < n; k++) {
    const hs_iceberg_data_file *df = &d[k].e->data_file;
    if (!hs_iceberg_data_file_is_dv(df)) continue;
    if (df->referenced_data_file == NULL || !df->has_content_offset ||
        !df->has_content_size_in_bytes)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "%s: deletion vector %s lacks referenced_data_file, content_offset or "
                          "content_size_in_bytes",
                          d[k].manifest, df->file_path);
    ssize_t ti = find_recorded(t, ix, df->referenced_data_file);
    if (ti < 0) continue; /* dangling */
    hs_table_plan_file *f = &ix->p->files[ti];
    if (f->data_seq > d[k].e->sequence_number || !same_partition(f, d[k].spec_id, df)) continue;
    if (fds[ti].has_dv)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "%s: two deletion vectors apply to data file %s (the second in %s)",
                          d[k].manifest, df->referenced_data_file, df->file_path);
    roaring_bitmap_t *bm = NULL;
    hs_status st = delete_size_check(&d[k], err);
    if (st == HS_OK)
      st = hs_table_dv_read(d[k].path, df->content_offset, df->content_size_in_bytes,
                            df->record_count, &bm, err);
    if (st != HS_OK) return st;
    if (fds[ti].bm != NULL) roaring_bitmap_free(fds[ti].bm); /* position deletes read before */
    fds[ti].bm = bm;
    fds[ti].n_pos = 0;
    fds[ti].has_dv = true;
    f->n_delete_files++;
    f->dv_file = df->file_path; /* in the plan's arena, as the entry */
  }
  return HS_OK;
}

static hs_status apply_position_files(const hs_table *t, const plan_index *ix, file_dels *fds,
                                      const hs_table_plan_delete *d, size_t n, hs_error *err) {
  bool *counted = NULL;
  hs_status st = HS_OK;
  for (size_t k = 0; st == HS_OK && k < n; k++) {
    const hs_iceberg_data_file *df = &d[k].e->data_file;
    if (df->content != HS_ICE_CONTENT_POSITION_DELETES || hs_iceberg_data_file_is_dv(df)) continue;
    if (!format_is(df, "PARQUET")) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: position delete file %s is %s; only Parquet delete files are read",
                        d[k].manifest, df->file_path, df->file_format ? df->file_format : "?");
      break;
    }
    if (df->referenced_data_file != NULL) { /* skip a file whose one target is out of scope */
      ssize_t ti = find_recorded(t, ix, df->referenced_data_file);
      if (ti < 0 || fds[ti].has_dv) continue;
    }
    if (counted == NULL && (counted = hs_calloc(ix->p->n_files ? ix->p->n_files : 1, 1)) == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
    else if (ix->p->n_files > 0)
      memset(counted, 0, ix->p->n_files);
    posdel_ctx c = {.t = t, .ix = ix, .fds = fds, .d = &d[k], .counted = counted};
    if (st == HS_OK) st = delete_size_check(&d[k], err);
    if (st == HS_OK) st = apply_position_file(&c, err);
  }
  hs_free(counted);
  return st;
}

static hs_status apply_equality(const hs_table *t, const hs_iceberg_schema *schema,
                                const plan_index *ix, file_dels *fds, const hs_table_plan_delete *d,
                                size_t n, hs_error *err) {
  size_t n_eq = 0;
  for (size_t k = 0; k < n; k++)
    if (d[k].e->data_file.content == HS_ICE_CONTENT_EQUALITY_DELETES) n_eq++;
  if (n_eq == 0) return HS_OK;
  /* The key fields typed as their newest schema has them (a field dropped
   * or promoted since the delete was written still matches). */
  size_t n_ids = 0;
  for (size_t k = 0; k < n; k++)
    if (d[k].e->data_file.content == HS_ICE_CONTENT_EQUALITY_DELETES)
      n_ids += d[k].e->data_file.n_equality_ids;
  int32_t *ids = hs_malloc((n_ids ? n_ids : 1) * sizeof *ids);
  if (ids == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
  size_t u = 0;
  for (size_t k = 0; k < n; k++) {
    const hs_iceberg_data_file *df = &d[k].e->data_file;
    if (df->content != HS_ICE_CONTENT_EQUALITY_DELETES) continue;
    for (size_t j = 0; j < df->n_equality_ids; j++) {
      bool seen = false;
      for (size_t q = 0; q < u && !seen; q++) seen = ids[q] == df->equality_ids[j];
      if (!seen) ids[u++] = df->equality_ids[j];
    }
  }
  hs_arena karena;
  hs_arena_init(&karena);
  hs_iceberg_schema kschema;
  hs_status kst = hs_table_eqdel_schema(&t->meta, ids, u, &karena, &kschema, err);
  hs_free(ids);
  if (kst != HS_OK) {
    hs_arena_reset(&karena);
    return kst;
  }
  schema = &kschema;
  hs_table_eqdel **sets = hs_calloc(n, sizeof *sets); /* loaded lazily, by delete index */
  const hs_table_eqdel **use = hs_malloc(n_eq * sizeof *use);
  hs_status st = sets == NULL || use == NULL
                     ? hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory")
                     : HS_OK;
  bool *global = st == HS_OK ? hs_calloc(n, 1) : NULL;
  if (st == HS_OK && global == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
  for (size_t k = 0; st == HS_OK && k < n; k++) global[k] = spec_unpartitioned(t, d[k].spec_id);
  for (size_t i = 0; st == HS_OK && i < ix->p->n_files; i++) {
    hs_table_plan_file *f = &ix->p->files[i];
    size_t nu = 0;
    for (size_t k = 0; st == HS_OK && k < n; k++) {
      const hs_iceberg_data_file *df = &d[k].e->data_file;
      if (df->content != HS_ICE_CONTENT_EQUALITY_DELETES) continue;
      if (f->data_seq >= d[k].e->sequence_number) continue;
      if (!global[k] && !same_partition(f, d[k].spec_id, df)) continue;
      if (!format_is(df, "PARQUET")) {
        st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "%s: equality delete file %s is %s; only Parquet delete files are read",
                          d[k].manifest, df->file_path, df->file_format ? df->file_format : "?");
        break;
      }
      if (!df->has_equality_ids || df->n_equality_ids == 0) {
        st = hs_error_set(err, HS_ERR_CORRUPT, "%s: equality delete file %s has no equality_ids",
                          d[k].manifest, df->file_path);
        break;
      }
      if (sets[k] == NULL)
        st = hs_table_eqdel_load(d[k].path, df->equality_ids, df->n_equality_ids, schema, &sets[k],
                                 err);
      if (st == HS_OK) use[nu++] = sets[k];
    }
    if (st != HS_OK || nu == 0) continue;
    if ((st = bm_of(&fds[i], err)) != HS_OK) break;
    st = hs_table_eqdel_apply(use, nu, f->path, schema, fds[i].bm, err);
    f->n_delete_files += (uint32_t)nu;
  }
  for (size_t k = 0; sets != NULL && k < n; k++) hs_table_eqdel_free(sets[k]);
  hs_free(sets);
  hs_free(use);
  hs_free(global);
  hs_arena_reset(&karena);
  return st;
}

hs_status hs_table_plan_deletes(const hs_table *t, const hs_iceberg_snapshot *snap,
                                hs_table_plan *p, const hs_table_plan_delete *d, size_t n,
                                hs_error *err) {
  p->n_delete_files = (int64_t)n;
  if (n == 0 || p->n_files == 0) return HS_OK;
  plan_index ix = {.p = p};
  file_dels *fds = hs_calloc(p->n_files, sizeof *fds);
  ix.by_path = hs_malloc(p->n_files * sizeof *ix.by_path);
  if (fds == NULL || ix.by_path == NULL) {
    hs_free(fds);
    hs_free(ix.by_path);
    return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
  }
  for (size_t i = 0; i < p->n_files; i++) ix.by_path[i] = (path_ref){p->files[i].path, i};
  qsort(ix.by_path, p->n_files, sizeof *ix.by_path, path_ref_cmp);
  const hs_iceberg_schema *schema = hs_iceberg_metadata_schema(&t->meta, snap->schema_id);
  if (schema == NULL) schema = hs_iceberg_metadata_schema(&t->meta, t->meta.current_schema_id);
  hs_status st = apply_dvs(t, &ix, fds, d, n, err);
  if (st == HS_OK) st = apply_position_files(t, &ix, fds, d, n, err);
  if (st == HS_OK) st = apply_equality(t, schema, &ix, fds, d, n, err);
  size_t n_bm = 0;
  for (size_t i = 0; i < p->n_files; i++) n_bm += fds[i].bm != NULL;
  if (st == HS_OK && n_bm > 0 && (p->bitmaps = hs_calloc(n_bm, sizeof *p->bitmaps)) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
  for (size_t i = 0; st == HS_OK && i < p->n_files; i++) {
    if (fds[i].n_pos == 0) continue;
    const char **v = hs_arena_alloc(&p->arena, fds[i].n_pos * sizeof *v);
    if (v == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
      break;
    }
    memcpy(v, fds[i].pos, fds[i].n_pos * sizeof *v);
    p->files[i].pos_files = v;
    p->files[i].n_pos_files = fds[i].n_pos;
  }
  for (size_t i = 0; i < p->n_files; i++) {
    hs_free(fds[i].pos);
    roaring_bitmap_t *bm = fds[i].bm;
    if (bm == NULL) continue;
    if (st != HS_OK) {
      roaring_bitmap_free(bm);
      continue;
    }
    int64_t rows = p->files[i].data_file->record_count;
    if (rows < 0) rows = 0;
    roaring_bitmap_remove_range(bm, (uint64_t)rows, (uint64_t)UINT32_MAX + 1);
    roaring_bitmap_run_optimize(bm);
    p->bitmaps[p->n_bitmaps++] = bm;
    uint64_t c = roaring_bitmap_get_cardinality(bm);
    if (c > 0) {
      p->files[i].deleted = bm;
      p->files[i].n_deleted = (int64_t)c;
      p->n_deleted += (int64_t)c;
    }
  }
  hs_free(fds);
  hs_free(ix.by_path);
  return st;
}

hs_status hs_table_plan_live_rows(const hs_table_plan_file *f, int64_t **rows, size_t *n,
                                  hs_error *err) {
  *rows = NULL;
  *n = 0;
  int64_t total = f->data_file->record_count;
  int64_t live = total - f->n_deleted;
  if (live <= 0) return HS_OK;
  int64_t *v = hs_malloc((size_t)live * sizeof *v);
  if (v == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory for live rows", f->path);
  size_t k = 0;
  roaring_uint32_iterator_t *it = f->deleted ? roaring_create_iterator(f->deleted) : NULL;
  int64_t next_del = it != NULL && it->has_value ? (int64_t)it->current_value : total;
  for (int64_t r = 0; r < total; r++) {
    if (r == next_del) {
      roaring_advance_uint32_iterator(it);
      next_del = it->has_value ? (int64_t)it->current_value : total;
      continue;
    }
    v[k++] = r;
  }
  if (it != NULL) roaring_free_uint32_iterator(it);
  *rows = v;
  *n = k;
  return HS_OK;
}

hs_status hs_table_count_rows(hs_table *table, int64_t snapshot_id, int64_t *rows, int64_t *deleted,
                              int64_t *delete_files, hs_error *err) {
  hs_table_plan p;
  hs_status st = hs_table_plan_files(table, snapshot_id, &p, err);
  int64_t n = 0;
  for (size_t i = 0; st == HS_OK && i < p.n_files; i++) n += hs_table_plan_file_live(&p.files[i]);
  if (st == HS_OK) {
    *rows = n;
    if (deleted != NULL) *deleted = p.n_deleted;
    if (delete_files != NULL) *delete_files = p.n_delete_files;
  }
  hs_table_plan_free(&p);
  return st;
}
