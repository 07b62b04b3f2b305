/*
 * scan.c — reading a snapshot: plan its data files from the manifest list
 * and manifests (live DATA entries only; every recorded path must lie
 * inside the table folder), then stream the files' batches one file after
 * another through the Parquet reader.
 *
 * Columns are those of the read schema (schema_map.h: the snapshot's own
 * schema for a snapshot named by id, else the current one), matched to
 * each file's columns by field id: renamed columns are found, added ones
 * read as NULL, int/float/decimal columns are promoted. The output types
 * are the first data file's own where it holds a column unpromoted (so
 * batches come out as the reader produces them), the schema's otherwise;
 * every later file must read as those, else the stream fails naming that
 * file. A snapshot without files yields the read schema (projected) and no
 * batches.
 */
#include <stdio.h>
#include <string.h>

#include "../arrow/arrow.h"
#include "../parquet/parquet.h"
#include "lineage.h"
#include "schema_map.h"
#include "table.h"

typedef struct scan_state {
  hs_table_plan plan; /* the snapshot's files and their live rows */
  bool planned;
  size_t *order; /* plan indices of the files read (some row live), in plan order */
  size_t n_files, next_file;
  int64_t *live;  /* the open file's live rows when some are deleted */
  char **columns; /* NULL: all */
  size_t n_columns;
  struct ArrowSchema schema; /* the output schema */
  struct ArrowSchema want;   /* the read schema, projected */
  hs_colmap_ctx ctx;
  hs_colmap map; /* the open file's columns -> output columns */
  struct ArrowArrayStream inner;
  bool inner_open;
  hs_error error;
} scan_state;

static void names_free(char **v, size_t n) {
  for (size_t i = 0; v != NULL && i < n; i++) hs_free(v[i]);
  hs_free(v);
}

static void state_free(scan_state *s) {
  if (s == NULL) return;
  if (s->inner_open && s->inner.release) s->inner.release(&s->inner);
  hs_arrow_schema_release(&s->schema);
  hs_arrow_schema_release(&s->want);
  hs_colmap_ctx_free(&s->ctx);
  hs_colmap_free(&s->map);
  if (s->planned) hs_table_plan_free(&s->plan);
  hs_free(s->order);
  hs_free(s->live);
  names_free(s->columns, s->n_columns);
  hs_free(s);
}

/* Open file i as the inner stream, its columns mapped by field id onto
 * the output schema; the first file (no output schema yet) fixes it. */
static hs_status open_file(scan_state *s, size_t i, hs_error *err) {
  const hs_table_plan_file *pf = &s->plan.files[s->order[i]];
  const char *path = pf->path;
  hs_parquet_reader *r = NULL;
  hs_status st = hs_parquet_reader_open(path, &r, err);
  if (st == HS_OK)
    st = hs_table_data_file_check(path, hs_parquet_reader_metadata(r),
                                  pf->data_file->file_size_in_bytes, pf->data_file->record_count,
                                  err);
  if (st != HS_OK) {
    hs_parquet_reader_free(r);
    return st;
  }
  struct ArrowSchema full;
  memset(&full, 0, sizeof full);
  hs_colmap_free(&s->map);
  st = hs_parquet_reader_schema(r, &full, err);
  if (st == HS_OK && s->schema.release == NULL) {
    hs_colmap first;
    st = hs_colmap_build(&s->ctx, &s->want, &full, false, path, &first, err);
    if (st == HS_OK) {
      s->schema = first.out;
      memset(&first.out, 0, sizeof first.out);
      hs_colmap_free(&first);
    }
  }
  if (st == HS_OK) st = hs_colmap_build(&s->ctx, &s->schema, &full, true, path, &s->map, err);
  if (st == HS_OK) { /* what v3 row lineage inherits (lineage.h) */
    s->map.lin->first_row_id = pf->data_file->has_first_row_id ? pf->data_file->first_row_id : -1;
    s->map.lin->data_seq = pf->data_seq;
  }
  hs_arrow_schema_release(&full);
  hs_parquet_read_options ro;
  hs_parquet_read_options_init(&ro);
  ro.columns = (const char *const *)s->map.read;
  ro.n_columns = s->map.n_read;
  /* Deleted rows are never read: the reader's row selection takes the live
   * ones (only the pages holding them are decoded). */
  size_t n_live = 0;
  hs_free(s->live);
  s->live = NULL;
  if (st == HS_OK && pf->deleted != NULL &&
      (st = hs_table_plan_live_rows(pf, &s->live, &n_live, err)) == HS_OK) {
    ro.rows = s->live;
    ro.n_rows = n_live;
  }
  if (st == HS_OK) st = hs_parquet_reader_stream(r, &ro, &s->inner, err);
  hs_parquet_reader_free(r);
  if (st != HS_OK) return st;
  s->inner_open = true;
  return HS_OK;
}

static int scan_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out) {
  scan_state *s = st->private_data;
  return hs_status_errno(hs_arrow_schema_copy(&s->schema, out, &s->error));
}

static int scan_get_next(struct ArrowArrayStream *st, struct ArrowArray *out) {
  scan_state *s = st->private_data;
  memset(out, 0, sizeof *out);
  if (s->error.status != HS_OK) return hs_status_errno(s->error.status);
  for (;;) {
    if (s->inner_open) {
      int rc = s->inner.get_next(&s->inner, out);
      if (rc != 0) {
        const char *m = s->inner.get_last_error(&s->inner);
        hs_error_set(&s->error, hs_status_of_errno(rc), "%s: %s",
                     s->plan.files[s->order[s->next_file - 1]].path, m ? m : "read failed");
        return rc;
      }
      if (out->release != NULL && !s->map.identity) {
        if (s->live != NULL) { /* the batch's positions in the file (row lineage) */
          s->map.lin->rows = s->live + *s->map.rows_in;
          s->map.lin->set = true;
        }
        struct ArrowArray a;
        if (hs_colmap_apply(&s->map, out, &a, &s->error) != HS_OK) {
          hs_error_prefix(&s->error, "%s: ", s->plan.files[s->order[s->next_file - 1]].path);
          return hs_status_errno(s->error.status);
        }
        *out = a;
      }
      if (out->release != NULL) return 0;
      s->inner.release(&s->inner);
      s->inner_open = false;
    }
    if (s->next_file == s->n_files) return 0; /* end: out->release == NULL */
    size_t i = s->next_file++;
    hs_status rc = open_file(s, i, &s->error);
    if (rc != HS_OK) return hs_status_errno(rc);
  }
}

static const char *scan_last_error(struct ArrowArrayStream *st) {
  scan_state *s = st->private_data;
  return s->error.status != HS_OK ? s->error.message : NULL;
}

static void scan_release(struct ArrowArrayStream *st) {
  if (st == NULL || st->release == NULL) return;
  state_free(st->private_data);
  st->release = NULL;
  st->private_data = NULL;
}

static hs_status push_name(char ***v, size_t *n, size_t *cap, const char *name, hs_error *err) {
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 8;
    char **nv = hs_realloc(*v, nc * sizeof *nv);
    if (nv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    *v = nv;
    *cap = nc;
  }
  if (((*v)[*n] = hs_strdup(name)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  (*n)++;
  return HS_OK;
}

/* Plan: the data files of snapshot `snap` with their live rows, in
 * manifest-list order (plan.c: the one plan every reader uses). */
static hs_status plan_files(const hs_table *t, const hs_iceberg_snapshot *snap, scan_state *s,
                            hs_error *err) {
  hs_status st = hs_table_plan_files(t, snap->snapshot_id, &s->plan, err);
  if (st != HS_OK) return st;
  s->planned = true;
  /* Files whose every row is deleted are not opened. */
  s->order = hs_malloc((s->plan.n_files ? s->plan.n_files : 1) * sizeof *s->order);
  if (s->order == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  for (size_t i = 0; i < s->plan.n_files; i++)
    if (hs_table_plan_file_live(&s->plan.files[i]) > 0) s->order[s->n_files++] = i;
  return HS_OK;
}

/* The read schema projected to `columns` into s->want. */
static hs_status table_schema_projected(hs_table *t, int64_t snapshot_id, scan_state *s,
                                        hs_error *err) {
  struct ArrowSchema full;
  hs_status st = hs_table_read_schema_arrow(t, snapshot_id, &full, err);
  if (st == HS_OK)
    st = hs_lineage_schema_add(t, (const char *const *)s->columns, s->n_columns, NULL, &full, err);
  if (st == HS_OK) st = hs_colmap_ctx_init(t, hs_table_read_schema(t, snapshot_id), &s->ctx, err);
  if (st != HS_OK || s->columns == NULL) {
    if (st == HS_OK)
      s->want = full;
    else
      hs_arrow_schema_release(&full);
    return st;
  }
  st = hs_arrow_schema_init(&s->want, "+s", "", 0, (int64_t)s->n_columns, err);
  for (size_t i = 0; st == HS_OK && i < s->n_columns; i++) {
    int64_t k = 0;
    while (k < full.n_children && strcmp(full.children[k]->name, s->columns[i]) != 0) k++;
    if (k == full.n_children) {
      st = hs_error_set(err, HS_ERR_NOT_FOUND, "%s: no column '%s'", t->metadata_path,
                        s->columns[i]);
      break;
    }
    hs_arrow_schema_release(s->want.children[i]);
    st = hs_arrow_schema_copy(full.children[k], s->want.children[i], err);
  }
  full.release(&full);
  return st;
}

hs_status hs_table_scan(hs_table *table, int64_t snapshot_id, const char *const *columns,
                        size_t n_columns, struct ArrowArrayStream *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  const hs_iceberg_snapshot *snap = NULL;
  if (snapshot_id == -1) {
    snap = hs_table_current(table);
  } else if ((snap = hs_iceberg_metadata_snapshot(&table->meta, snapshot_id)) == NULL) {
    return hs_error_set(err, HS_ERR_NOT_FOUND, "%s: no snapshot %lld", table->metadata_path,
                        (long long)snapshot_id);
  }
  scan_state *s = hs_calloc(1, sizeof *s);
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  hs_status st = HS_OK;
  if (columns != NULL) {
    size_t cap = 0;
    for (size_t i = 0; st == HS_OK && i < n_columns; i++)
      st = push_name(&s->columns, &s->n_columns, &cap, columns[i], err);
    if (st == HS_OK && n_columns == 0) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "scan: an empty column list");
    }
  }
  if (st == HS_OK) st = table_schema_projected(table, snapshot_id, s, err);
  if (st == HS_OK && snap != NULL) st = plan_files(table, snap, s, err);
  if (st == HS_OK && s->n_files > 0) {
    /* The first file fixes the output schema; its stream stays open. */
    st = open_file(s, 0, err);
    s->next_file = 1;
  } else if (st == HS_OK) {
    st = hs_arrow_schema_copy(&s->want, &s->schema, err);
  }
  if (st != HS_OK) {
    state_free(s);
    return st;
  }
  out->get_schema = scan_get_schema;
  out->get_next = scan_get_next;
  out->get_last_error = scan_last_error;
  out->release = scan_release;
  out->private_data = s;
  return HS_OK;
}
