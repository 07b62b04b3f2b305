/*
 * vector_index.c — building and opening the vector indexes of a table's
 * data files (vector_index.h, hs_table_build_vector_indexes).
 *
 * Per data file of the current snapshot without an index for the column:
 *  1. read the column (fixed_size_list or list of float32/float64) into
 *     one row-major float32 array with a validity bitmap (row i = data file
 *     row i; null rows are zeros, left out by the index);
 *  2. hs_vidx_build (src/index/vector: IVF + HNSW, optional SQ8/PQ);
 *  3. write <root>/index/<uuid>.puffin: "PFA1", the blob, "PFA1", the JSON
 *     footer (one blob of type "hyperstream-vidx-v1" with its column,
 *     metric, dimension and row count), the footer length, flags and
 *     "PFA1" (Iceberg's Puffin layout, as the scalar indexes write it);
 *     the file and its directory are fsynced;
 * then every new file is registered in one metadata-only commit
 * (hs_table_index_register). A file whose build fails fails the call;
 * files written before it are left unregistered (orphans that
 * remove_orphan_files collects), never half-registered.
 */
#include "vector_index.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/fs.h"
#include "../io/store.h"

#define PUFFIN_MAGIC "PFA1"
#define PUFFIN_TAIL 12                         /* footer length, flags, magic */
#define PUFFIN_FOOTER_MAX ((uint64_t)16 << 20) /* a footer is a few hundred bytes */

void hs_vector_index_options_init(hs_vector_index_options *opts) {
  memset(opts, 0, sizeof *opts);
}

/* ------------------------------------------------------- read vectors */

typedef struct vectors {
  float *v; /* n * dim */
  uint8_t *valid;
  size_t n, cap, dim; /* dim 0 until the first non-null list row */
} vectors;

/* Grow the validity bitmap from x->cap to `cap` rows (new bits zero). */
static hs_status valid_grow(vectors *x, size_t cap, hs_error *err) {
  size_t old = x->cap ? x->cap / 8 + 1 : 0, now = cap / 8 + 1;
  if (now <= old && x->valid != NULL) return HS_OK;
  uint8_t *nb = hs_realloc(x->valid, now);
  if (nb == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vector index: out of memory");
  memset(nb + old, 0, now - old);
  x->valid = nb;
  return HS_OK;
}

static hs_status vec_reserve(vectors *x, size_t rows, size_t dim, hs_error *err) {
  hs_status st = HS_OK;
  if (rows <= x->cap) return HS_OK;
  size_t cap = x->cap ? x->cap : 1024;
  while (cap < rows) cap *= 2;
  size_t bytes;
  if (!hs_mul_size(cap, dim, &bytes) || !hs_mul_size(bytes, sizeof(float), &bytes))
    return hs_error_set(err, HS_ERR_NOMEM, "vector index: too many rows");
  float *nv = hs_realloc(x->v, bytes);
  if (nv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vector index: out of memory");
  x->v = nv;
  if ((st = valid_grow(x, cap, err)) != HS_OK) return st;
  x->cap = cap;
  return HS_OK;
}

/* Append batch `b` (struct of the one vector column) to `x`. */
static hs_status vec_append(vectors *x, const struct ArrowSchema *field, const struct ArrowArray *b,
                            const char *path, hs_error *err) {
  const struct ArrowArray *a = b->children[0], *v = a->children[0];
  hs_arrow_type at;
  hs_status st = hs_arrow_type_parse(field->format, &at, err);
  if (st != HS_OK) return st;
  bool f64 = strcmp(field->children[0]->format, "g") == 0;
  const uint8_t *vvalid = v->null_count != 0 ? (const uint8_t *)v->buffers[0] : NULL;
  for (int64_t r = 0; r < b->length; r++) {
    int64_t j = b->offset + r, start = 0, len = 0, row = (int64_t)x->n;
    bool ok = hs_arrow_is_valid(a, j);
    if (ok) {
      if (at.id == HS_AT_FIXED_LIST) {
        start = (a->offset + j) * at.width;
        len = at.width;
      } else if (at.id == HS_AT_LARGE_LIST) {
        const int64_t *off = (const int64_t *)a->buffers[1];
        start = off[a->offset + j];
        len = off[a->offset + j + 1] - start;
      } else {
        const int32_t *off = (const int32_t *)a->buffers[1];
        start = off[a->offset + j];
        len = off[a->offset + j + 1] - start;
      }
      if (start < 0 || len < 0 || start + len > v->length)
        return hs_error_set(err, HS_ERR_CORRUPT, "%s: row %lld: list out of range", path,
                            (long long)row);
      if (x->dim == 0 && len > 0) x->dim = (size_t)len;
      if ((size_t)len != x->dim)
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "vector index: %s row %lld has dimension %lld, earlier rows %zu", path,
                            (long long)row, (long long)len, x->dim);
      start += v->offset;
      for (int64_t e = start; vvalid != NULL && ok && e < start + len; e++)
        ok = (vvalid[e >> 3] >> (e & 7)) & 1;
    }
    if (x->dim == 0) { /* no vector seen yet: remember nulls only */
      if (x->n + 1 > x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 1024;
        if ((st = valid_grow(x, cap, err)) != HS_OK) return st;
        x->cap = cap;
      }
      x->n++;
      continue;
    }
    if (x->v == NULL) { /* first vector: allocate for the rows so far */
      size_t bytes;
      if (!hs_mul_size(x->cap ? x->cap : 1, x->dim * sizeof(float), &bytes) ||
          (x->v = hs_calloc(1, bytes)) == NULL)
        return hs_error_set(err, HS_ERR_NOMEM, "vector index: out of memory");
      if (x->cap == 0) {
        if ((st = valid_grow(x, 1, err)) != HS_OK) return st;
        x->cap = 1;
      }
    }
    if ((st = vec_reserve(x, x->n + 1, x->dim, err)) != HS_OK) return st;
    float *dst = x->v + x->n * x->dim;
    if (ok) {
      for (int64_t e = 0; e < len; e++)
        dst[e] = f64 ? (float)((const double *)v->buffers[1])[start + e]
                     : ((const float *)v->buffers[1])[start + e];
      x->valid[x->n / 8] |= (uint8_t)(1u << (x->n % 8));
    } else {
      memset(dst, 0, x->dim * sizeof *dst);
    }
    x->n++;
  }
  return HS_OK;
}

static hs_status read_vectors(const char *path, const char *column, vectors *x, hs_error *err) {
  memset(x, 0, sizeof *x);
  hs_parquet_reader *rd = NULL;
  hs_status st = hs_parquet_reader_open(path, &rd, err);
  if (st != HS_OK) return st;
  hs_parquet_read_options ro;
  hs_parquet_read_options_init(&ro);
  ro.columns = &column;
  ro.n_columns = 1;
  ro.batch_rows_max = 16384;
  struct ArrowArrayStream stream;
  memset(&stream, 0, sizeof stream);
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  st = hs_parquet_reader_stream(rd, &ro, &stream, err);
  if (st == HS_OK && stream.get_schema(&stream, &schema) != 0)
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: no schema", path);
  while (st == HS_OK) {
    struct ArrowArray b;
    int rc = stream.get_next(&stream, &b);
    if (rc != 0) {
      const char *m = stream.get_last_error(&stream);
      st = hs_error_set(err, hs_status_of_errno(rc), "%s: %s", path, m ? m : "read failed");
      break;
    }
    if (b.release == NULL) break;
    st = vec_append(x, schema.children[0], &b, path, err);
    b.release(&b);
  }
  if (st == HS_OK && x->n > UINT32_MAX)
    st = hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: more than 2^32 rows", path);
  if (schema.release != NULL) schema.release(&schema);
  if (stream.release != NULL) stream.release(&stream);
  hs_parquet_reader_free(rd);
  return st;
}

/* ------------------------------------------------------------ Puffin */

/* `file` holds the magic and the index blob after it (built there in place);
 * the rest of the Puffin file is appended to it and the whole written once:
 * the index is never copied. */
static hs_status puffin_write(const hs_table *t, const char *data_path, const char *column,
                              int32_t field_id, hs_metric metric, size_t dim, size_t rows,
                              hs_buf *file, char **path_out, hs_error *err) {
  const size_t blob_len = file->len - 4;
  hs_index_binding bind;
  hs_status bst = hs_table_data_file_binding(t, data_path, &bind, err);
  if (bst != HS_OK) return bst;
  json_t *root =
      json_pack("{s:[{s:s,s:[],s:i,s:i,s:I,s:I,s:{s:s,s:s,s:s,s:s}}],s:{s:s}}", "blobs", "type",
                HS_VIDX_BLOB_TYPE, "fields", "snapshot-id", -1, "sequence-number", -1, "offset",
                (json_int_t)4, "length", (json_int_t)blob_len, "properties", "column", column,
                "metric", hs_metric_name(metric), "dim", "", "row-count", "", "properties",
                "created-by", "hyperstreamdb");
  if (root == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vector index: footer");
  json_t *b0 = json_array_get(json_object_get(root, "blobs"), 0);
  json_t *props = json_object_get(b0, "properties");
  char num[32];
  snprintf(num, sizeof num, "%zu", dim);
  json_object_set_new(props, "dim", json_string(num));
  snprintf(num, sizeof num, "%zu", rows);
  json_object_set_new(props, "row-count", json_string(num));
  if (field_id > 0) json_array_append_new(json_object_get(b0, "fields"), json_integer(field_id));
  if ((bst = hs_index_binding_put(&bind, props, err)) != HS_OK ||
      (bst = hs_index_binding_put_crc(file->data + 4, blob_len, props, err)) != HS_OK) {
    json_decref(root);
    return bst;
  }
  char *footer = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
  json_decref(root);
  if (footer == NULL) return hs_error_set(err, HS_ERR_NOMEM, "vector index: footer");
  size_t flen = strlen(footer);
  uint8_t tail[PUFFIN_TAIL];
  hs_store_u32le(tail, (uint32_t)flen);
  hs_store_u32le(tail + 4, 0); /* flags: footer not compressed */
  memcpy(tail + 8, PUFFIN_MAGIC, 4);
  hs_status st = HS_OK;
  if (!hs_buf_append(file, PUFFIN_MAGIC, 4) || !hs_buf_append(file, footer, flen) ||
      !hs_buf_append(file, tail, sizeof tail))
    st = hs_error_set(err, HS_ERR_NOMEM, "vector index: out of memory");
  free(footer);
  char uuid[37];
  if (st == HS_OK) st = hs_fs_uuid4(uuid, err);
  size_t cap = strlen(t->root) + 64;
  char *dir = hs_malloc(cap), *p = hs_malloc(cap);
  if (st == HS_OK && (dir == NULL || p == NULL))
    st = hs_error_set(err, HS_ERR_NOMEM, "vector index: out of memory");
  if (st == HS_OK) {
    snprintf(dir, cap, "%s/index", t->root);
    snprintf(p, cap, "%s/index/%s.puffin", t->root, uuid);
    st = hs_table_file_write(dir, p, file->data, file->len, err); /* durable on return */
  }
  hs_free(dir);
  if (st != HS_OK) {
    hs_free(p);
    return st;
  }
  *path_out = p;
  return HS_OK;
}

/* Find the blob of `column` in the Puffin footer of `src`. */
static hs_status puffin_find(hs_source *src, const char *path, const char *column, uint64_t *off,
                             uint64_t *len, hs_index_binding *bind, char **bind_path,
                             hs_error *err) {
  uint64_t size = hs_source_size(src);
  uint8_t tail[PUFFIN_TAIL];
  if (size < 8 + PUFFIN_TAIL)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: too small for a Puffin file", path);
  hs_status st = hs_source_read(src, size - PUFFIN_TAIL, PUFFIN_TAIL, tail, err);
  if (st != HS_OK) return st;
  uint64_t flen = hs_load_u32le(tail);
  if (memcmp(tail + 8, PUFFIN_MAGIC, 4) != 0 || hs_load_u32le(tail + 4) != 0 ||
      flen > PUFFIN_FOOTER_MAX || flen + PUFFIN_TAIL + 8 > size)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: bad Puffin footer", path);
  char *text = hs_malloc((size_t)flen + 4);
  if (text == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: footer", path);
  st = hs_source_read(src, size - PUFFIN_TAIL - flen - 4, (size_t)flen + 4, text, err);
  if (st == HS_OK && memcmp(text, PUFFIN_MAGIC, 4) != 0)
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: no Puffin footer magic", path);
  json_t *root = NULL;
  if (st == HS_OK) {
    json_error_t je;
    root = json_loadb(text + 4, (size_t)flen, 0, &je);
    if (root == NULL) st = hs_error_set(err, HS_ERR_CORRUPT, "%s: footer JSON: %s", path, je.text);
  }
  hs_free(text);
  bool found = false;
  json_t *blobs = root != NULL ? json_object_get(root, "blobs") : NULL;
  for (size_t i = 0; st == HS_OK && !found && i < json_array_size(blobs); i++) {
    json_t *b = json_array_get(blobs, i);
    const char *type = json_string_value(json_object_get(b, "type"));
    const char *col =
        json_string_value(json_object_get(json_object_get(b, "properties"), "column"));
    json_t *o = json_object_get(b, "offset"), *l = json_object_get(b, "length");
    if (type == NULL || strcmp(type, HS_VIDX_BLOB_TYPE) != 0 || col == NULL ||
        strcmp(col, column) != 0)
      continue;
    if (!json_is_integer(o) || !json_is_integer(l) || json_integer_value(o) < 4 ||
        json_integer_value(l) < 0 ||
        (uint64_t)json_integer_value(o) + (uint64_t)json_integer_value(l) >
            size - PUFFIN_TAIL - flen - 4) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "%s: blob %zu out of range", path, i);
      break;
    }
    *off = (uint64_t)json_integer_value(o);
    *len = (uint64_t)json_integer_value(l);
    found = true;
    st = hs_index_binding_get(json_object_get(b, "properties"), path, bind, bind_path, err);
  }
  json_decref(root);
  if (st == HS_OK && !found)
    st = hs_error_set(err, HS_ERR_NOT_FOUND, "%s: no vector index of column '%s'", path, column);
  return st;
}

hs_status hs_table_vector_index_locate(hs_source *src, const char *name, const char *column,
                                       uint64_t *off, uint64_t *len, hs_index_binding *bind,
                                       char **bind_path, hs_error *err) {
  memset(bind, 0, sizeof *bind);
  *bind_path = NULL;
  return puffin_find(src, name, column, off, len, bind, bind_path, err);
}

hs_status hs_table_vector_index_open_source(hs_source *src, const char *name, const char *column,
                                            hs_vidx **out, hs_error *err) {
  *out = NULL;
  uint64_t off = 0, len = 0;
  hs_index_binding bind;
  memset(&bind, 0, sizeof bind);
  char *bind_path = NULL;
  hs_status st = puffin_find(src, name, column, &off, &len, &bind, &bind_path, err);
  /* The blob's sections carry their own checksums, checked by
   * hs_vidx_open (src/index/vector/README.md); the recorded crc32c of the
   * whole blob is checked by validation. */
  if (st == HS_OK) st = hs_vidx_open(src, off, len, out, err);
  if (st == HS_OK && (st = hs_vidx_set_binding(*out, &bind, err)) != HS_OK) {
    hs_vidx_free(*out);
    *out = NULL;
  }
  hs_free(bind_path);
  return st;
}

hs_status hs_table_vector_index_open(const char *index_path, const char *column, hs_vidx **out,
                                     hs_error *err) {
  *out = NULL;
  hs_source *src = NULL;
  hs_status st = hs_store_is_remote(index_path) ? hs_store_source_open(index_path, &src, err)
                                                : hs_source_open_file(index_path, &src, err);
  if (st == HS_OK) st = hs_table_vector_index_open_source(src, index_path, column, out, err);
  hs_source_unref(src);
  return st;
}

hs_status hs_table_vector_index_open_reads(const char *index_path, const char *column,
                                           hs_vidx_reads *out, hs_error *err) {
  hs_source *src = NULL;
  hs_status st = hs_store_is_remote(index_path) ? hs_store_source_open(index_path, &src, err)
                                                : hs_source_open_file(index_path, &src, err);
  uint64_t off = 0, len = 0;
  hs_index_binding bind;
  char *bind_path = NULL;
  if (st == HS_OK)
    st = hs_table_vector_index_locate(src, index_path, column, &off, &len, &bind, &bind_path, err);
  if (st == HS_OK) st = hs_vidx_open_reads(src, off, len, out, err);
  hs_free(bind_path);
  hs_source_unref(src);
  return st;
}

/* ------------------------------------------------------------- build */

static hs_status parse_options(const hs_vector_index_options *o, hs_vidx_params *p, hs_error *err) {
  hs_vidx_params_default(p);
  if (o == NULL) return HS_OK;
  if (o->metric != NULL) {
    hs_status st = hs_metric_parse(o->metric, &p->metric, err);
    if (st != HS_OK) return st;
    if (p->metric == HS_METRIC_HAMMING || p->metric == HS_METRIC_JACCARD)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "vector index: metric '%s' is for bit vectors, not float vectors",
                          o->metric);
  }
  if (o->m) p->m = o->m;
  if (o->ef_construction) p->ef_construction = o->ef_construction;
  p->partitions = o->partitions;
  p->threads = o->threads;
  p->quant.threads = o->threads;
  p->quant.pq_m = o->pq_m;
  const char *q = o->quantizer;
  if (q == NULL || q[0] == 0 || strcmp(q, "none") == 0)
    p->quant.kind = HS_QUANT_NONE;
  else if (strcmp(q, "sq8") == 0)
    p->quant.kind = HS_QUANT_SQ8;
  else if (strcmp(q, "pq") == 0)
    p->quant.kind = HS_QUANT_PQ;
  else
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "vector index: quantizer '%s'; expected none, sq8 or pq", q);
  return HS_OK;
}

hs_status hs_table_build_vector_indexes(hs_table *table, const char *column,
                                        const hs_vector_index_options *opts, int64_t *files_built,
                                        hs_error *err) {
  if (files_built != NULL) *files_built = 0;
  if (column == NULL || column[0] == 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "build vector indexes: no column given");
  hs_vidx_params p;
  hs_status st = parse_options(opts, &p, err);
  if (st != HS_OK) return st;
  struct ArrowSchema ts;
  if ((st = hs_table_schema(table, &ts, err)) != HS_OK) return st;
  const struct ArrowSchema *f = NULL;
  for (int64_t i = 0; i < ts.n_children; i++)
    if (strcmp(ts.children[i]->name, column) == 0) f = ts.children[i];
  hs_arrow_type at;
  hs_error local = {0};
  bool vec = f != NULL && f->n_children == 1 &&
             hs_arrow_type_parse(f->format, &at, &local) == HS_OK &&
             (at.id == HS_AT_FIXED_LIST || at.id == HS_AT_LIST || at.id == HS_AT_LARGE_LIST) &&
             (strcmp(f->children[0]->format, "f") == 0 || strcmp(f->children[0]->format, "g") == 0);
  int32_t fid = f != NULL ? hs_arrow_field_id(f) : -1;
  if (f == NULL) {
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "build vector indexes: no column '%s'", column);
  } else if (!vec) {
    st = hs_error_set(err, HS_ERR_SCHEMA,
                      "build vector indexes: column '%s' has Arrow type '%s', not a float vector",
                      column, f->format);
  }
  ts.release(&ts);
  if (st != HS_OK) return st;
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  hs_table_index_registry reg;
  memset(&reg, 0, sizeof reg);
  st = hs_table_plan_files(table, -1, &plan, err);
  if (st == HS_OK) st = hs_table_index_registry_load(table, NULL, &reg, err);
  hs_table_index_entry *add = hs_calloc(plan.n_files + 1, sizeof *add);
  char **paths = hs_calloc(plan.n_files + 1, sizeof *paths);
  char **names = hs_calloc(plan.n_files + 1, sizeof *names); /* per entry: the file's own name */
  int32_t fids[1] = {fid};
  size_t n_add = 0;
  if (st == HS_OK && (add == NULL || paths == NULL || names == NULL))
    st = hs_error_set(err, HS_ERR_NOMEM, "build vector indexes: out of memory");
  for (size_t i = 0; st == HS_OK && i < plan.n_files; i++) {
    const hs_table_plan_file *pf = &plan.files[i];
    int64_t size = pf->data_file->file_size_in_bytes;
    if (hs_table_index_lookup_field(&reg, pf->path, size, column, fid, NULL) != NULL) continue;
    /* Read by field id: a column renamed since the file was written has its
     * old name there (the index's blob and registry entry carry that name
     * and the field id); a file without the field gets no index. */
    char *fname = NULL;
    st = hs_table_data_file_column(pf->path, fid, column, &fname, err);
    if (st != HS_OK || fname == NULL) {
      if (st != HS_OK) hs_error_prefix(err, "build vector index of %s: ", pf->path);
      continue;
    }
    vectors x;
    st = read_vectors(pf->path, fname, &x, err);
    hs_buf blob;
    hs_buf_init(&blob);
    if (st == HS_OK && x.dim == 0) { /* only nulls: nothing to index */
      hs_free(x.v);
      hs_free(x.valid);
      hs_free(fname);
      continue;
    }
    /* The Puffin file's magic, then the index built after it (in place), and
     * the decoded column freed before the file is finished. */
    if (st == HS_OK && !hs_buf_append(&blob, PUFFIN_MAGIC, 4))
      st = hs_error_set(err, HS_ERR_NOMEM, "vector index: out of memory");
    if (st == HS_OK) st = hs_vidx_build(x.v, x.n, x.dim, x.valid, &p, &blob, err);
    hs_free(x.v);
    hs_free(x.valid);
    x.v = NULL;
    x.valid = NULL;
    if (st == HS_OK)
      st = puffin_write(table, pf->path, fname, fid, p.metric, x.dim, x.n, &blob, &paths[n_add],
                        err);
    if (st == HS_OK) {
      names[n_add] = fname;
      fname = NULL;
      add[n_add] = (hs_table_index_entry){.data_file = (char *)pf->path,
                                          .file_size = size,
                                          .index_file = paths[n_add],
                                          .columns = &names[n_add],
                                          .field_ids = fids,
                                          .n_columns = 1};
      n_add++;
    } else {
      hs_error_prefix(err, "build vector index of %s: ", pf->path);
    }
    hs_buf_free(&blob);
    hs_free(x.v);
    hs_free(x.valid);
    hs_free(fname);
  }
  if (st == HS_OK && n_add > 0) st = hs_table_index_register(table, add, n_add, err);
  if (st == HS_OK && files_built != NULL) *files_built = (int64_t)n_add;
  for (size_t i = 0; paths != NULL && i < n_add; i++) {
    hs_free(paths[i]);
    hs_free(names[i]);
  }
  hs_free(paths);
  hs_free(names);
  hs_free(add);
  hs_table_index_registry_free(&reg);
  hs_table_plan_free(&plan);
  return st;
}
