/*
 * deletes_pos.c — Iceberg v2 position-delete files (deletes.h): the
 * streaming reader and the writer.
 *
 * Reader: the footer's top-level columns are matched by field id
 * (2147483546 file_path, 2147483545 pos), by name ("file_path", "pos")
 * only when no top-level column carries either reserved id (files of
 * writers that leave ids out or assign their own); the
 * `row` column, or any other, is never read. Both columns are checked on
 * the footer (file_path a flat BYTE_ARRAY, pos a flat INT64 without a
 * logical type other than signed 64-bit integer) and again on the Arrow
 * batches, then streamed HS_POSDEL_BATCH_ROWS rows at a time: each run of
 * equal paths in a batch goes to the callback with its positions borrowed
 * from the batch's value buffer (no copy).
 *
 * Writer: groups sorted by path bytes (the spec's sort order, which is
 * what Java's and pyiceberg's comparators give for the paths one table
 * records), each group's bitmap iterated in ascending order into batches
 * of HS_POSDEL_BATCH_ROWS rows; metrics from the written footer with full
 * (untruncated) bounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../arrow/arrow.h"
#include "deletes.h"

/* ------------------------------------------------------------- reader */

/* Index of the schema element after the subtree rooted at `i`, or
 * md->n_schema + 1 when the tree is malformed (the footer parser checks it,
 * this only stays in bounds). */
static uint32_t subtree_end(const hs_pq_file_metadata *md, uint32_t i) {
  uint64_t pending = 1;
  while (pending > 0) {
    if (i >= md->n_schema) return md->n_schema + 1;
    int32_t k = md->schema[i].num_children;
    pending = pending - 1 + (k > 0 ? (uint64_t)k : 0);
    i++;
  }
  return i;
}

typedef struct posdel_cols {
  const hs_pq_schema_element *path, *pos;
} posdel_cols;

/* Top-level columns matched by field id (by_id) or by name. */
static hs_status match_columns(const hs_pq_file_metadata *md, const char *name, bool by_id,
                               posdel_cols *c, hs_error *err) {
  memset(c, 0, sizeof *c);
  int32_t top = md->schema[0].num_children;
  uint32_t i = 1;
  for (int32_t k = 0; k < top && i < md->n_schema; k++, i = subtree_end(md, i)) {
    const hs_pq_schema_element *e = &md->schema[i];
    bool is_path, is_pos;
    if (by_id) {
      is_path = e->has_field_id && e->field_id == HS_DELETE_FILE_PATH_ID;
      is_pos = e->has_field_id && e->field_id == HS_DELETE_POS_ID;
    } else {
      is_path = strcmp(e->name, "file_path") == 0;
      is_pos = strcmp(e->name, "pos") == 0;
    }
    if ((is_path && c->path != NULL) || (is_pos && c->pos != NULL))
      return hs_error_set(err, HS_ERR_CORRUPT, "position delete file %s: two '%s' columns", name,
                          is_path ? "file_path" : "pos");
    if (is_path) c->path = e;
    if (is_pos) c->pos = e;
  }
  return HS_OK;
}

/* By field id; by name when no top-level column carries either reserved
 * id (files without field ids, or with ids a writer assigned itself). */
static hs_status find_columns(const hs_pq_file_metadata *md, const char *name, posdel_cols *c,
                              hs_error *err) {
  memset(c, 0, sizeof *c);
  if (md->n_schema == 0 || md->schema[0].num_children <= 0)
    return hs_error_set(err, HS_ERR_CORRUPT, "position delete file %s: no columns", name);
  hs_status st = match_columns(md, name, true, c, err);
  bool by_name = st == HS_OK && c->path == NULL && c->pos == NULL;
  if (by_name) st = match_columns(md, name, false, c, err);
  if (st != HS_OK) return st;
  if (c->path == NULL || c->pos == NULL)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "position delete file %s: no '%s' column (field id %d%s)", name,
                        c->path == NULL ? "file_path" : "pos",
                        c->path == NULL ? HS_DELETE_FILE_PATH_ID : HS_DELETE_POS_ID,
                        by_name ? ", nor by name: no column has either reserved field id" : "");
  const hs_pq_schema_element *p = c->path, *q = c->pos;
  bool path_ok = p->num_children <= 0 && p->has_type && p->type == HS_PQ_BYTE_ARRAY &&
                 !(p->has_repetition && p->repetition == HS_PQ_REPEATED) &&
                 (p->logical.kind == HS_PQ_LT_NONE || p->logical.kind == HS_PQ_LT_STRING ||
                  p->logical.kind == HS_PQ_LT_OTHER);
  bool pos_ok = q->num_children <= 0 && q->has_type && q->type == HS_PQ_INT64 &&
                !(q->has_repetition && q->repetition == HS_PQ_REPEATED) &&
                (q->logical.kind == HS_PQ_LT_NONE ||
                 (q->logical.kind == HS_PQ_LT_INTEGER && q->logical.int_bit_width == 64 &&
                  q->logical.int_is_signed)) &&
                (!q->has_converted || q->converted == HS_PQ_CT_INT_64);
  if (!path_ok)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "position delete file %s: column '%s' (file_path) is not a string", name,
                        p->name);
  if (!pos_ok)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "position delete file %s: column '%s' (pos) is not a long", name, q->name);
  if (p == q || strcmp(p->name, q->name) == 0)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "position delete file %s: file_path and pos share the name '%s'", name,
                        p->name);
  return HS_OK;
}

static bool is_string_format(const char *f, bool *wide) {
  if (f == NULL) return false;
  *wide = strcmp(f, "U") == 0 || strcmp(f, "Z") == 0;
  return *wide || strcmp(f, "u") == 0 || strcmp(f, "z") == 0;
}

/* One batch: path column `pc`, pos column `qc` (children of the struct
 * batch), `first` the file row of its row 0. */
static hs_status read_batch(const struct ArrowArray *pc, bool wide, const struct ArrowArray *qc,
                            int64_t n, int64_t first, const char *name, hs_buf *cur,
                            hs_table_posdel_fn fn, void *ctx, hs_error *err) {
  if (pc->length < n || qc->length < n || pc->n_buffers < 3 || qc->n_buffers < 2 ||
      pc->buffers[1] == NULL || qc->buffers[1] == NULL)
    return hs_error_set(err, HS_ERR_INTERNAL,
                        "position delete file %s: malformed batch at row %lld", name,
                        (long long)first);
  const int64_t *pos = (const int64_t *)qc->buffers[1] + qc->offset;
  const uint8_t *data = pc->buffers[2];
  const int32_t *o32 = wide ? NULL : (const int32_t *)pc->buffers[1] + pc->offset;
  const int64_t *o64 = wide ? (const int64_t *)pc->buffers[1] + pc->offset : NULL;
  for (int64_t i = 0; i < n; i++) {
    if (!hs_arrow_is_valid(qc, i) || !hs_arrow_is_valid(pc, i))
      return hs_error_set(err, HS_ERR_CORRUPT, "position delete file %s: row %lld: %s is NULL",
                          name, (long long)(first + i),
                          hs_arrow_is_valid(pc, i) ? "pos" : "file_path");
    if (pos[i] < 0)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "position delete file %s: row %lld: negative pos %lld", name,
                          (long long)(first + i), (long long)pos[i]);
  }
  int64_t start = 0;
  while (start < n) {
    int64_t s0 = wide ? o64[start] : o32[start], e0 = wide ? o64[start + 1] : o32[start + 1];
    if (s0 < 0 || e0 < s0 || (e0 > s0 && data == NULL))
      return hs_error_set(err, HS_ERR_INTERNAL, "position delete file %s: row %lld: bad offsets",
                          name, (long long)(first + start));
    size_t plen = (size_t)(e0 - s0);
    const uint8_t *pp = data + s0;
    if (memchr(pp, 0, plen) != NULL)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "position delete file %s: row %lld: file_path holds a NUL byte", name,
                          (long long)(first + start));
    int64_t end = start + 1;
    while (end < n) {
      int64_t s1 = wide ? o64[end] : o32[end], e1 = wide ? o64[end + 1] : o32[end + 1];
      if (e1 - s1 != (int64_t)plen || memcmp(data + s1, pp, plen) != 0) break;
      end++;
    }
    cur->len = 0;
    if (!hs_buf_append(cur, pp, plen) || !hs_buf_append_byte(cur, 0))
      return hs_error_set(err, HS_ERR_NOMEM, "position delete file %s: out of memory", name);
    hs_status st = fn(ctx, (const char *)cur->data, pos + start, (size_t)(end - start), err);
    if (st != HS_OK) return st;
    start = end;
  }
  return HS_OK;
}

hs_status hs_table_posdel_read_reader(hs_parquet_reader *r, const char *name, hs_table_posdel_fn fn,
                                      void *ctx, hs_error *err) {
  const hs_pq_file_metadata *md = hs_parquet_reader_metadata(r);
  posdel_cols c;
  hs_status st = find_columns(md, name, &c, err);
  if (st != HS_OK) return st;
  const char *cols[2] = {c.path->name, c.pos->name};
  hs_parquet_read_options ro;
  hs_parquet_read_options_init(&ro);
  ro.columns = cols;
  ro.n_columns = 2;
  ro.batch_rows_max = HS_POSDEL_BATCH_ROWS;
  struct ArrowArrayStream stream;
  memset(&stream, 0, sizeof stream);
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  st = hs_parquet_reader_stream(r, &ro, &stream, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "position delete file %s: ", name);
    return st;
  }
  bool wide = false;
  if (stream.get_schema(&stream, &schema) != 0)
    st = hs_error_set(err, HS_ERR_CORRUPT, "position delete file %s: no schema", name);
  else if (schema.n_children != 2 || !is_string_format(schema.children[0]->format, &wide) ||
           schema.children[1]->format == NULL || strcmp(schema.children[1]->format, "l") != 0)
    st = hs_error_set(err, HS_ERR_CORRUPT,
                      "position delete file %s: file_path / pos read as %s / %s, not string / long",
                      name, schema.n_children == 2 ? schema.children[0]->format : "?",
                      schema.n_children == 2 ? schema.children[1]->format : "?");
  hs_buf cur;
  hs_buf_init(&cur);
  int64_t row = 0;
  while (st == HS_OK) {
    struct ArrowArray a;
    memset(&a, 0, sizeof a);
    int rc = stream.get_next(&stream, &a);
    if (rc != 0) {
      const char *m = stream.get_last_error(&stream);
      hs_status rs = hs_status_of_errno(rc);
      st = hs_error_set(err, rs == HS_OK ? HS_ERR_CORRUPT : rs, "position delete file %s: %s", name,
                        m ? m : "read failed");
      break;
    }
    if (a.release == NULL) break;
    if (a.n_children != 2 || a.length < 0 || a.length > HS_POSDEL_BATCH_ROWS * 2) {
      st = hs_error_set(err, HS_ERR_INTERNAL, "position delete file %s: malformed batch", name);
    } else {
      /* The struct's own offset shifts its children. */
      struct ArrowArray pc = *a.children[0], qc = *a.children[1];
      pc.offset += a.offset;
      qc.offset += a.offset;
      st = read_batch(&pc, wide, &qc, a.length, row, name, &cur, fn, ctx, err);
    }
    row += a.length;
    a.release(&a);
  }
  hs_buf_free(&cur);
  if (st == HS_OK && row != hs_parquet_reader_num_rows(r))
    st = hs_error_set(err, HS_ERR_CORRUPT, "position delete file %s: read %lld of %lld rows", name,
                      (long long)row, (long long)hs_parquet_reader_num_rows(r));
  if (schema.release != NULL) schema.release(&schema);
  stream.release(&stream);
  return st;
}

hs_status hs_table_posdel_read(const char *path, hs_table_posdel_fn fn, void *ctx, hs_error *err) {
  hs_parquet_reader *r = NULL;
  hs_status st = hs_parquet_reader_open(path, &r, err);
  if (st != HS_OK) {
    if (err != NULL && strstr(err->message, path) == NULL)
      hs_error_prefix(err, "position delete file %s: ", path);
    return st;
  }
  st = hs_table_posdel_read_reader(r, path, fn, ctx, err);
  hs_parquet_reader_free(r);
  return st;
}
