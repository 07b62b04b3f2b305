/*
 * row_delta.c — hs_table_commit_row_delta: the public form of a row-level
 * commit (include/hyperstream.h, "Tables: row-level commits"), one
 * transaction (txn.c) that adds data files and delete files and removes
 * files by recorded path.
 *
 * Data files are described from their Parquet footers under the current
 * schema (as an append's are). A delete file takes the partition spec and
 * tuple of the data file it names (partition_of, else its
 * referenced_data_file), found among the live files of the current
 * snapshot: a named data file that is not live there was removed by a
 * commit since the caller read the table (HS_ERR_CONFLICT). Without one,
 * the current spec must be unpartitioned (a global delete). A data file
 * added to a partitioned table gets the tuple its rows give under the
 * current spec (hs_table_partition_of_file: one tuple per file).
 */
#include <string.h>

#include "txn.h"

static hs_txn_op op_of(hs_table_operation op) {
  switch (op) {
  case HS_TABLE_OP_APPEND: return HS_TXN_OP_APPEND;
  case HS_TABLE_OP_OVERWRITE: return HS_TXN_OP_OVERWRITE;
  case HS_TABLE_OP_DELETE: return HS_TXN_OP_DELETE;
  case HS_TABLE_OP_REPLACE: return HS_TXN_OP_REPLACE;
  default: return HS_TXN_OP_AUTO;
  }
}

static const hs_table_plan_file *plan_find(const hs_table_plan *p, const char *recorded) {
  for (size_t i = 0; i < p->n_files; i++)
    if (strcmp(p->files[i].data_file->file_path, recorded) == 0) return &p->files[i];
  return NULL;
}

/* A path the commit records must lie under the table folder (I6). */
static hs_status check_inside(const hs_table *t, const char *path, const char *what,
                              hs_error *err) {
  char *resolved = NULL;
  hs_status st = hs_table_resolve_path(t, path, what, &resolved, err);
  hs_free(resolved);
  return st;
}

hs_status hs_table_commit_row_delta(hs_table *t, const hs_table_row_delta *d,
                                    int64_t *snapshot_id_out, hs_error *err) {
  if (snapshot_id_out) *snapshot_id_out = -1;
  if (t == NULL || d == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "row delta: no table or no change");
  if ((d->n_add_data_files && d->add_data_files == NULL) ||
      (d->n_add_delete_files && d->add_delete_files == NULL) ||
      (d->n_remove_files && d->remove_files == NULL))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "row delta: a count without its array");
  const char *what = "row delta";
  hs_txn *x = NULL;
  hs_status st = hs_txn_begin(t, what, &x, err);
  if (st != HS_OK) return st;
  hs_arena a;
  hs_arena_init(&a);
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  bool planned = false;
  if (d->has_base_snapshot_id) hs_txn_set_start_snapshot(x, d->base_snapshot_id);
  hs_txn_set_operation(x, op_of(d->operation));
  if (d->validate_no_new_deletes >= 0)
    hs_txn_validate_no_new_deletes(x, d->validate_no_new_deletes);

  const hs_iceberg_metadata *m = &t->meta; /* the begin's version: the txn keeps it */
  const hs_iceberg_schema *schema = hs_iceberg_metadata_schema(m, m->current_schema_id);
  const hs_iceberg_partition_spec *spec = NULL;
  for (size_t i = 0; i < m->n_specs; i++)
    if (m->specs[i].spec_id == m->default_spec_id) spec = &m->specs[i];
  if (schema == NULL || spec == NULL) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: no current schema or default partition spec",
                      t->metadata_path);
    goto done;
  }
  for (size_t i = 0; st == HS_OK && i < d->n_add_data_files; i++) {
    const char *p = d->add_data_files[i];
    if (p == NULL) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: data file %zu has no path", what, i);
      break;
    }
    if ((st = check_inside(t, p, "row delta data file", err)) != HS_OK) break;
    /* A partitioned table's file: the tuple its rows give. */
    hs_iceberg_value *tuple = NULL;
    if ((st = hs_table_partition_of_file(schema, spec, p, &a, &tuple, err)) != HS_OK) {
      hs_error_prefix(err, "%s: %s: ", t->root, what);
      break;
    }
    hs_iceberg_data_file df;
    hs_iceberg_data_file_options dfo = {
        .schema = schema, .file_path = p, .partition = tuple, .n_partition = spec->n_fields};
    st = hs_iceberg_data_file_from_parquet_path(p, &dfo, &a, &df, err);
    if (st == HS_OK) st = hs_txn_add_files(x, &df, 1, spec->spec_id, err);
    if (st == HS_OK) st = hs_txn_add_written_path(x, p, err);
  }
  for (size_t i = 0; st == HS_OK && i < d->n_add_delete_files; i++) {
    const hs_table_delete_file *in = &d->add_delete_files[i];
    if (in->path == NULL || (in->content != 1 && in->content != 2) || in->record_count < 0 ||
        in->file_size_in_bytes < 0) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: delete file %zu: needs a path, content 1 or 2 and counts", what, i);
      break;
    }
    bool dv = in->file_format != NULL && strcmp(in->file_format, "PUFFIN") == 0;
    if (dv && (in->content != 1 || in->referenced_data_file == NULL || m->format_version < 3)) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: deletion vector '%s': position deletes of one referenced data file, "
                        "in a v3 table",
                        what, in->path);
      break;
    }
    if (in->content == 2 && (in->n_equality_ids == 0 || in->equality_ids == NULL)) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: equality delete file '%s' has no equality ids", what, in->path);
      break;
    }
    if ((st = check_inside(t, in->path, "row delta delete file", err)) != HS_OK) break;
    hs_iceberg_data_file f;
    memset(&f, 0, sizeof f);
    f.content =
        in->content == 1 ? HS_ICE_CONTENT_POSITION_DELETES : HS_ICE_CONTENT_EQUALITY_DELETES;
    f.file_path = in->path;
    f.file_format = in->file_format ? in->file_format : "PARQUET";
    f.record_count = in->record_count;
    f.file_size_in_bytes = in->file_size_in_bytes;
    f.referenced_data_file = in->referenced_data_file;
    if (dv) {
      f.has_content_offset = f.has_content_size_in_bytes = true;
      f.content_offset = in->content_offset;
      f.content_size_in_bytes = in->content_size_in_bytes;
    }
    if (in->content == 2) {
      f.has_equality_ids = true;
      f.equality_ids = (int32_t *)in->equality_ids;
      f.n_equality_ids = in->n_equality_ids;
    }
    int32_t spec_id = spec->spec_id;
    const char *of = in->partition_of ? in->partition_of : in->referenced_data_file;
    if (of != NULL) {
      if (!planned) {
        if ((st = hs_table_plan_files(t, -1, &plan, err)) != HS_OK) break;
        planned = true;
      }
      const hs_table_plan_file *pf = plan_find(&plan, of);
      if (pf == NULL) {
        st = hs_error_set(err, HS_ERR_CONFLICT,
                          "%s: %s: data file '%s' that delete file '%s' names is not live in "
                          "the current snapshot; nothing was committed",
                          t->root, what, of, in->path);
        break;
      }
      f.partition = pf->data_file->partition;
      f.n_partition = pf->data_file->n_partition;
      spec_id = pf->spec_id;
      if (in->referenced_data_file == NULL && in->content == 1)
        st = hs_txn_require_data_file(x, of, err);
    } else if (spec->n_fields > 0) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: delete file '%s' names no data file, and the table is partitioned: "
                        "set partition_of",
                        what, in->path);
    }
    if (st == HS_OK) st = hs_txn_add_files(x, &f, 1, spec_id, err);
    if (st == HS_OK) st = hs_txn_add_written_path(x, in->path, err);
  }
  for (size_t i = 0; st == HS_OK && i < d->n_remove_files; i++) {
    if (d->remove_files[i] == NULL)
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: removed file %zu has no path", what, i);
    else
      st = hs_txn_remove_file(x, d->remove_files[i], err);
  }
  for (size_t i = 0; st == HS_OK && i < d->n_remove_dvs; i++) {
    if (d->remove_dvs == NULL || d->remove_dv_of == NULL || d->remove_dvs[i] == NULL ||
        d->remove_dv_of[i] == NULL)
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: removed deletion vector %zu: no path", what,
                        i);
    else
      st = hs_txn_remove_dv(x, d->remove_dvs[i], d->remove_dv_of[i], err);
  }
  if (st == HS_OK) st = hs_txn_commit(x, snapshot_id_out, NULL, err);
done:
  hs_txn_free(x);
  if (planned) hs_table_plan_free(&plan);
  hs_arena_reset(&a);
  return st;
}
