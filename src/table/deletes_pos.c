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
#include "table.h"

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

/* ------------------------------------------------------------- writer */

typedef struct sorted_group {
  const char *path;
  const roaring_bitmap_t *rows;
} sorted_group;

static int group_cmp(const void *a, const void *b) {
  return strcmp(((const sorted_group *)a)->path, ((const sorted_group *)b)->path);
}

/* The spec's schema with its field ids, as Arrow. */
static hs_status posdel_arrow_schema(struct ArrowSchema *s, hs_error *err) {
  char a[16], b[16];
  snprintf(a, sizeof a, "%d", HS_DELETE_FILE_PATH_ID);
  snprintf(b, sizeof b, "%d", HS_DELETE_POS_ID);
  const char *k[1] = {"PARQUET:field_id"}, *va[1] = {a}, *vb[1] = {b};
  hs_status st = hs_arrow_schema_init(s, "+s", "", 0, 2, err);
  if (st != HS_OK) return st;
  if ((st = hs_arrow_schema_init(s->children[0], "u", "file_path", 0, 0, err)) != HS_OK ||
      (st = hs_arrow_schema_set_metadata(s->children[0], k, va, 1, err)) != HS_OK ||
      (st = hs_arrow_schema_init(s->children[1], "l", "pos", 0, 0, err)) != HS_OK ||
      (st = hs_arrow_schema_set_metadata(s->children[1], k, vb, 1, err)) != HS_OK)
    s->release(s);
  return st;
}

/* One batch of at most m rows (and bytes_max path bytes) of the sorted
 * groups, from group *gi at its iterator `it` on (both advanced). */
static hs_status write_batch(hs_parquet_writer *w, const sorted_group *g, size_t n, size_t *gi,
                             roaring_uint32_iterator_t *it, int64_t m, size_t bytes_max,
                             hs_error *err) {
  int64_t *pos = hs_malloc((size_t)m * sizeof *pos);
  int32_t *off = hs_malloc(((size_t)m + 1) * sizeof *off);
  uint32_t *tmp = hs_malloc((size_t)m * sizeof *tmp);
  hs_buf data;
  hs_buf_init(&data);
  hs_status st = HS_OK;
  if (pos == NULL || off == NULL || tmp == NULL || !hs_buf_reserve(&data, bytes_max))
    st = hs_error_set(err, HS_ERR_NOMEM, "position delete file: out of memory");
  int64_t k = 0;
  if (st == HS_OK) off[0] = 0;
  while (st == HS_OK && k < m && *gi < n) {
    if (!it->has_value) {
      if (++*gi < n) roaring_init_iterator(g[*gi].rows, it);
      continue;
    }
    size_t plen = strlen(g[*gi].path);
    size_t room = (bytes_max - data.len) / (plen ? plen : 1);
    if (room == 0) break;
    uint32_t want = (uint32_t)((int64_t)room < m - k ? (int64_t)room : m - k);
    uint32_t got = roaring_read_uint32_iterator(it, tmp, want);
    for (uint32_t i = 0; i < got; i++) {
      pos[k + i] = tmp[i];
      hs_buf_append(&data, g[*gi].path, plen); /* reserved above */
      off[k + i + 1] = (int32_t)data.len;
    }
    k += got;
  }
  hs_free(tmp);
  if (st != HS_OK || k == 0) {
    hs_free(pos);
    hs_free(off);
    hs_buf_free(&data);
    return st;
  }
  struct ArrowArray ch[2], top;
  memset(ch, 0, sizeof ch);
  st = hs_arrow_array_make_binary(&ch[0], k, off, hs_buf_detach(&data), NULL, 0, err);
  if (st != HS_OK) {
    hs_free(pos);
    return st;
  }
  st = hs_arrow_array_make_primitive(&ch[1], k, pos, NULL, 0, err);
  if (st != HS_OK) {
    ch[0].release(&ch[0]);
    return st;
  }
  st = hs_arrow_array_make_struct(&top, k, ch, 2, NULL, 0, err);
  if (st != HS_OK) return st;
  st = hs_parquet_writer_write(w, &top, err);
  top.release(&top);
  return st;
}

hs_status hs_table_posdel_write(const char *path, const char *recorded,
                                const hs_table_delete_group *groups, size_t n, hs_arena *a,
                                hs_iceberg_data_file *df, hs_error *err) {
  memset(df, 0, sizeof *df);
  if (n == 0 || recorded == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "position delete file %s: no groups", path);
  bool exists = false;
  hs_status st = hs_table_file_exists(path, &exists, err);
  if (st != HS_OK) return st;
  if (exists)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "position delete file %s: already exists", path);
  sorted_group *g = hs_malloc(n * sizeof *g);
  if (g == NULL) return hs_error_set(err, HS_ERR_NOMEM, "position delete file: out of memory");
  uint64_t total = 0;
  size_t longest = 0;
  for (size_t i = 0; i < n; i++) {
    if (groups[i].data_file == NULL || groups[i].rows == NULL ||
        roaring_bitmap_is_empty(groups[i].rows)) {
      hs_free(g);
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "position delete file %s: group %zu has no data file or no rows", path,
                          i);
    }
    g[i].path = groups[i].data_file;
    g[i].rows = groups[i].rows;
    total += roaring_bitmap_get_cardinality(groups[i].rows);
    size_t l = strlen(g[i].path);
    if (l > longest) longest = l;
  }
  qsort(g, n, sizeof *g, group_cmp);
  for (size_t i = 1; i < n; i++)
    if (strcmp(g[i - 1].path, g[i].path) == 0) {
      hs_error_set(err, HS_ERR_INVALID_ARG, "position delete file %s: two groups for %s", path,
                   g[i].path);
      hs_free(g);
      return HS_ERR_INVALID_ARG;
    }
  /* A batch's path bytes stay far below int32 offsets. */
  size_t bytes_max = (size_t)64 << 20;
  if (longest > bytes_max) {
    hs_free(g);
    return hs_error_set(err, HS_ERR_INVALID_ARG, "position delete file %s: a %zu-byte path", path,
                        longest);
  }
  struct ArrowSchema schema;
  st = posdel_arrow_schema(&schema, err);
  hs_parquet_write_options po;
  hs_parquet_write_options_init(&po);
  po.compression = HS_CODEC_ZSTD;
  po.delta_fallback = 1;
  hs_parquet_writer *w = NULL;
  if (st == HS_OK) {
    st = hs_parquet_writer_open(path, &schema, &po, &w, err);
    schema.release(&schema);
  }
  size_t gi = 0;
  roaring_uint32_iterator_t it;
  roaring_init_iterator(g[0].rows, &it);
  while (st == HS_OK && gi < n)
    st = write_batch(w, g, n, &gi, &it, HS_POSDEL_BATCH_ROWS, bytes_max, err);
  int fd = -1;
  if (st == HS_OK) st = hs_parquet_writer_close_unsynced(w, &fd, err);
  if (fd >= 0 && close(fd) != 0 && st == HS_OK) {
    st = hs_error_set(err, HS_ERR_IO, "position delete file %s: close failed", path);
    (void)hs_table_file_remove(path, NULL);
  }
  if (st == HS_OK) {
    hs_iceberg_field fields[2];
    memset(fields, 0, sizeof fields);
    fields[0].id = HS_DELETE_FILE_PATH_ID;
    fields[0].name = "file_path";
    fields[0].required = true;
    fields[0].type.id = HS_ICE_STRING;
    fields[1].id = HS_DELETE_POS_ID;
    fields[1].name = "pos";
    fields[1].required = true;
    fields[1].type.id = HS_ICE_LONG;
    hs_iceberg_schema schema_ice;
    memset(&schema_ice, 0, sizeof schema_ice);
    schema_ice.root.id = HS_ICE_STRUCT;
    schema_ice.root.fields = fields;
    schema_ice.root.n_fields = 2;
    hs_iceberg_data_file_options dfo = {
        .schema = &schema_ice, .file_path = recorded, .truncate_length = -1};
    /* metrics from the footer written (no read back: on S3 a HEAD and GETs) */
    st = hs_iceberg_data_file_from_parquet_writer(w, &dfo, a, df, err);
    if (st == HS_OK && (uint64_t)df->record_count != total)
      st = hs_error_set(err, HS_ERR_INTERNAL, "position delete file %s: %lld rows written of %llu",
                        path, (long long)df->record_count, (unsigned long long)total);
    if (st == HS_OK) {
      df->content = HS_ICE_CONTENT_POSITION_DELETES;
      if (n == 1) {
        df->referenced_data_file = hs_arena_strndup(a, g[0].path, strlen(g[0].path));
        if (df->referenced_data_file == NULL)
          st = hs_error_set(err, HS_ERR_NOMEM, "position delete file: out of memory");
      }
    }
    if (st != HS_OK) (void)hs_table_file_remove(path, NULL);
  }
  hs_parquet_writer_free(w); /* removes the file unless closed */
  hs_free(g);
  return st;
}
