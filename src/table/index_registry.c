/*
 * index_registry.c — which scalar index file (src/index) covers which
 * column of which data file, recorded beside the Iceberg metadata.
 *
 * The registry is a JSON file metadata/index-registry-<uuid>.json:
 *   {"format-version": 1,
 *    "entries": [{"data-file": "<abs path>", "file-size": N,
 *                 "index-file": "<abs path>", "columns": ["a", "b"]}, ...]}
 * named by the table property "hyperstream.index-registry". It is never
 * rewritten in place: each change writes a new file (fsynced) and commits
 * the property through hs_table_commit_metadata (exclusive publish, retried
 * on lost races with the edit re-applied to the winner's registry), so a
 * registry is complete or absent, like every other metadata file.
 *
 * Entries are keyed by data file path and size, never by snapshot: a reader
 * at snapshot S plans S's data files and looks each one up, so it uses
 * exactly the indexes built for S's files — after appends, rollback and time
 * travel alike, with nothing to rewrite. Stock Iceberg readers ignore the
 * unknown property and the extra files.
 *
 * Readers treat the registry as a hint that may only narrow: a registry or
 * index file that is missing, malformed or outside the table makes the scan
 * read the data unindexed (query/index_plan.c, query/scan.c).
 *
 * Known limits: each commit rewrites the whole registry (entries for files
 * no snapshot references any more are kept, harmless); replaced registry
 * files and the index files of a build that failed before its commit are
 * left behind as unreferenced orphans (like old metadata versions).
 */
#include <jansson.h>
#include <string.h>

#include "../index/index.h"
#include "../io/fs.h"
#include "table.h"

#define REGISTRY_BYTES_MAX ((size_t)256 << 20)
#define REGISTRY_PROPERTY "hyperstream.index-registry"

void hs_table_index_registry_free(hs_table_index_registry *r) {
  if (r == NULL) return;
  hs_arena_reset(&r->arena);
  memset(r, 0, sizeof *r);
}

/* Parse registry JSON `buf` into `r` (strings in r->arena). */
static hs_status registry_parse(const char *what, const hs_buf *buf, hs_table_index_registry *r,
                                hs_error *err) {
  json_error_t je;
  json_t *root = json_loadb((const char *)buf->data, buf->len, 0, &je);
  if (root == NULL) return hs_error_set(err, HS_ERR_CORRUPT, "%s: not JSON: %s", what, je.text);
  hs_status st = HS_OK;
  json_t *ents = json_object_get(root, "entries");
  if (!json_is_object(root) || !json_is_array(ents)) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: no \"entries\" array", what);
    goto done;
  }
  size_t n = json_array_size(ents);
  r->entries = hs_arena_alloc(&r->arena, (n ? n : 1) * sizeof *r->entries);
  if (r->entries == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    json_t *e = json_array_get(ents, i);
    json_t *df = json_object_get(e, "data-file"), *sz = json_object_get(e, "file-size");
    json_t *ix = json_object_get(e, "index-file"), *cols = json_object_get(e, "columns");
    if (!json_is_string(df) || !json_is_integer(sz) || !json_is_string(ix) ||
        !json_is_array(cols)) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "%s: entry %zu is malformed", what, i);
      goto done;
    }
    hs_table_index_entry *out = &r->entries[i];
    out->data_file = hs_arena_strndup(&r->arena, json_string_value(df), json_string_length(df));
    out->index_file = hs_arena_strndup(&r->arena, json_string_value(ix), json_string_length(ix));
    out->file_size = (int64_t)json_integer_value(sz);
    out->n_columns = json_array_size(cols);
    out->columns = hs_arena_alloc(&r->arena, (out->n_columns + 1) * sizeof(char *));
    if (out->data_file == NULL || out->index_file == NULL || out->columns == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
      goto done;
    }
    for (size_t k = 0; k < out->n_columns; k++) {
      json_t *c = json_array_get(cols, k);
      if (!json_is_string(c)) {
        st = hs_error_set(err, HS_ERR_CORRUPT, "%s: entry %zu column %zu is not a string", what, i,
                          k);
        goto done;
      }
      out->columns[k] = hs_arena_strndup(&r->arena, json_string_value(c), json_string_length(c));
      if (out->columns[k] == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
        goto done;
      }
    }
    r->n_entries++;
  }
done:
  json_decref(root);
  return st;
}

static hs_status registry_index(hs_table_index_registry *r, hs_error *err);

hs_status hs_table_index_registry_load(const hs_table *t, const hs_iceberg_metadata *meta,
                                       hs_table_index_registry *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_arena_init(&out->arena);
  const char *rec = hs_iceberg_metadata_property(meta ? meta : &t->meta, REGISTRY_PROPERTY);
  if (rec == NULL) return HS_OK; /* no indexes */
  char *path = NULL;
  hs_status st = hs_table_resolve_path(t, rec, "index registry", &path, err);
  if (st != HS_OK) return st;
  hs_buf buf;
  hs_buf_init(&buf);
  st = hs_fs_read_file(path, REGISTRY_BYTES_MAX, &buf, err);
  if (st == HS_OK) st = registry_parse(path, &buf, out, err);
  if (st == HS_OK) st = registry_index(out, err);
  hs_buf_free(&buf);
  hs_free(path);
  if (st != HS_OK) hs_table_index_registry_free(out);
  return st;
}

/* Order of entries by data file, size, then position. */
static int key_cmp(const hs_table_index_entry *a, size_t ia, const char *file, int64_t size,
                   size_t ib) {
  int c = strcmp(a->data_file, file);
  if (c != 0) return c;
  if (a->file_size != size) return a->file_size < size ? -1 : 1;
  return ia < ib ? -1 : ia > ib;
}

/* r->order: entry indices sorted by key_cmp (a bottom-up merge sort, so
 * no comparator state outside the registry). */
static hs_status registry_index(hs_table_index_registry *r, hs_error *err) {
  size_t n = r->n_entries;
  if (n == 0) return HS_OK;
  size_t *a = hs_arena_alloc(&r->arena, n * sizeof *a);
  size_t *tmp = hs_malloc(n * sizeof *tmp);
  if (a == NULL || tmp == NULL) {
    hs_free(tmp);
    return hs_error_set(err, HS_ERR_NOMEM, "index registry: out of memory");
  }
  for (size_t i = 0; i < n; i++) a[i] = i;
  size_t *src = a, *dst = tmp;
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        const hs_table_index_entry *y = &r->entries[src[j]];
        dst[k++] = key_cmp(&r->entries[src[i]], src[i], y->data_file, y->file_size, src[j]) <= 0
                       ? src[i++]
                       : src[j++];
      }
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    size_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, n * sizeof *a);
  hs_free(tmp);
  r->order = a;
  return HS_OK;
}

const char *hs_table_index_lookup(const hs_table_index_registry *r, const char *data_file,
                                  int64_t file_size, const char *column) {
  if (r == NULL || r->n_entries == 0) return NULL;
  /* Bisect to just past the file's last entry, then walk back: later
   * entries win (a rebuilt index is appended after the old one). */
  size_t lo = 0, hi = r->n_entries;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (key_cmp(&r->entries[r->order[mid]], r->order[mid], data_file, file_size, SIZE_MAX) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  while (lo-- > 0) {
    const hs_table_index_entry *e = &r->entries[r->order[lo]];
    if (e->file_size != file_size || strcmp(e->data_file, data_file) != 0) break;
    for (size_t k = 0; k < e->n_columns; k++)
      if (strcmp(e->columns[k], column) == 0) return e->index_file;
  }
  return NULL;
}

/* ------------------------------------------------------------ building */

typedef struct reg_add {
  const hs_table *t;
  const hs_table_index_entry *add;
  size_t n_add;
} reg_add;

static json_t *entry_json(const hs_table_index_entry *e) {
  json_t *o = json_object(), *cols = json_array();
  if (o == NULL || cols == NULL) {
    json_decref(o);
    json_decref(cols);
    return NULL;
  }
  for (size_t k = 0; k < e->n_columns; k++) json_array_append_new(cols, json_string(e->columns[k]));
  json_object_set_new(o, "data-file", json_string(e->data_file));
  json_object_set_new(o, "file-size", json_integer(e->file_size));
  json_object_set_new(o, "index-file", json_string(e->index_file));
  json_object_set_new(o, "columns", cols);
  return o;
}

/* Metadata edit: the winner's registry plus our entries, as a new file. */
static hs_status registry_edit(const hs_iceberg_metadata *old, hs_iceberg_metadata *m, hs_arena *a,
                               void *ctx, bool *changed, hs_error *err) {
  const reg_add *rq = ctx;
  hs_table_index_registry cur;
  hs_status st = hs_table_index_registry_load(rq->t, old, &cur, err);
  if (st != HS_OK) return st;
  json_t *root = json_object(), *ents = json_array();
  if (root == NULL || ents == NULL) {
    json_decref(root);
    json_decref(ents);
    hs_table_index_registry_free(&cur);
    return hs_error_set(err, HS_ERR_NOMEM, "index registry: out of memory");
  }
  json_object_set_new(root, "format-version", json_integer(1));
  json_object_set_new(root, "entries", ents);
  for (size_t i = 0; i < cur.n_entries; i++)
    json_array_append_new(ents, entry_json(&cur.entries[i]));
  for (size_t i = 0; i < rq->n_add; i++) json_array_append_new(ents, entry_json(&rq->add[i]));
  hs_table_index_registry_free(&cur);
  char *text = json_dumps(root, JSON_COMPACT);
  json_decref(root);
  if (text == NULL) return hs_error_set(err, HS_ERR_NOMEM, "index registry: out of memory");
  char uuid[37];
  char *path = NULL;
  st = hs_fs_uuid4(uuid, err);
  if (st == HS_OK) {
    size_t cap = strlen(rq->t->root) + 80;
    path = hs_arena_alloc(a, cap);
    if (path == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "index registry: out of memory");
    else
      snprintf(path, cap, "%s/metadata/index-registry-%s.json", rq->t->root, uuid);
  }
  if (st == HS_OK) st = hs_fs_write_file(path, text, strlen(text), err);
  free(text); /* jansson's allocator */
  if (st != HS_OK) return st;
  /* Properties: a copy with ours replaced or added. */
  size_t n = old->n_properties;
  hs_iceberg_kv *props = hs_arena_alloc(a, (n + 1) * sizeof *props);
  if (props == NULL) return hs_error_set(err, HS_ERR_NOMEM, "index registry: out of memory");
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strcmp(old->properties[i].key, REGISTRY_PROPERTY) != 0) props[k++] = old->properties[i];
  props[k].key = REGISTRY_PROPERTY;
  props[k].value = path;
  m->properties = props;
  m->n_properties = k + 1;
  *changed = true;
  return HS_OK;
}

hs_status hs_table_index_register(hs_table *t, const hs_table_index_entry *add, size_t n,
                                  hs_error *err) {
  if (n == 0) return HS_OK;
  reg_add rq = {t, add, n};
  return hs_table_commit_metadata(t, "register indexes", registry_edit, &rq, err);
}

/* Read `cols` of data file `path` and write their index as a new fsynced
 * <root>/index/<uuid>.puffin; its path in *index_path (arena). */
static hs_status build_one(const hs_table *t, const char *path, char **cols, size_t n_cols,
                           hs_arena *arena, char **index_path, hs_error *err) {
  hs_parquet_reader *rd = NULL;
  hs_status st = hs_parquet_reader_open(path, &rd, err);
  if (st != HS_OK) return st;
  hs_parquet_read_options ro;
  hs_parquet_read_options_init(&ro);
  ro.columns = (const char *const *)cols;
  ro.n_columns = n_cols;
  struct ArrowArrayStream stream;
  memset(&stream, 0, sizeof stream);
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  struct ArrowArray *batches = NULL, *chunks = NULL;
  size_t n_b = 0;
  hs_sidx_builder *b = NULL;
  hs_buf out;
  hs_buf_init(&out);
  st = hs_parquet_reader_stream(rd, &ro, &stream, err);
  if (st == HS_OK && stream.get_schema(&stream, &schema) != 0)
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: no schema", path);
  while (st == HS_OK) {
    struct ArrowArray a;
    int rc = stream.get_next(&stream, &a);
    if (rc != 0) {
      const char *m = stream.get_last_error(&stream);
      st = hs_error_set(err, hs_status_of_errno(rc), "%s: %s", path, m ? m : "read failed");
      break;
    }
    if (a.release == NULL) break;
    struct ArrowArray *nb = hs_realloc(batches, (n_b + 1) * sizeof *nb);
    if (nb == NULL) {
      a.release(&a);
      st = hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
      break;
    }
    batches = nb;
    batches[n_b++] = a;
  }
  if (st == HS_OK) st = hs_sidx_builder_create(&b, err);
  if (st == HS_OK && (chunks = hs_malloc((n_b ? n_b : 1) * sizeof *chunks)) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
  for (int64_t c = 0; st == HS_OK && c < schema.n_children; c++) {
    /* Borrowed shallow copies of each batch's child c. */
    for (size_t i = 0; i < n_b; i++) chunks[i] = *batches[i].children[c];
    st = hs_sidx_builder_add_column(b, schema.children[c], -1, chunks, n_b, NULL, err);
  }
  if (st == HS_OK) st = hs_sidx_builder_finish(b, &out, err);
  char uuid[37];
  if (st == HS_OK) st = hs_fs_uuid4(uuid, err);
  if (st == HS_OK) {
    size_t cap = strlen(t->root) + 64;
    char *dir = hs_arena_alloc(arena, cap), *p = hs_arena_alloc(arena, cap);
    if (dir == NULL || p == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
    } else {
      snprintf(dir, cap, "%s/index", t->root);
      snprintf(p, cap, "%s/index/%s.puffin", t->root, uuid);
      st = hs_fs_mkdirs(dir, err);
      if (st == HS_OK) st = hs_fs_write_file(p, out.data, out.len, err);
      *index_path = p;
    }
  }
  if (st != HS_OK) hs_error_prefix(err, "build index of %s: ", path);
  hs_buf_free(&out);
  hs_sidx_builder_free(b);
  hs_free(chunks);
  for (size_t i = 0; i < n_b; i++) batches[i].release(&batches[i]);
  hs_free(batches);
  if (schema.release != NULL) schema.release(&schema);
  if (stream.release != NULL) stream.release(&stream);
  hs_parquet_reader_free(rd);
  return st;
}

hs_status hs_table_build_indexes(hs_table *table, const char *const *columns, size_t n,
                                 hs_error *err) {
  if (table == NULL || n == 0 || columns == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "build indexes: no table or columns");
  for (size_t i = 0; i < n; i++)
    if (columns[i] == NULL)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "build indexes: column %zu is NULL", i);
  hs_status st = hs_table_refresh(table, err);
  if (st != HS_OK) return st;
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  hs_table_index_registry reg;
  memset(&reg, 0, sizeof reg);
  hs_arena arena;
  hs_arena_init(&arena);
  hs_table_index_entry *add = NULL;
  size_t n_add = 0;
  char **missing = hs_malloc(n * sizeof *missing);
  if (missing == NULL) return hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
  st = hs_table_plan_files(table, -1, &plan, err);
  if (st == HS_OK) st = hs_table_index_registry_load(table, NULL, &reg, err);
  if (st == HS_OK && (add = hs_calloc(plan.n_files + 1, sizeof *add)) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
  for (size_t f = 0; st == HS_OK && f < plan.n_files; f++) {
    const hs_table_plan_file *pf = &plan.files[f];
    int64_t size = pf->data_file->file_size_in_bytes;
    size_t n_miss = 0;
    for (size_t i = 0; i < n; i++)
      if (hs_table_index_lookup(&reg, pf->path, size, columns[i]) == NULL)
        missing[n_miss++] = (char *)columns[i];
    if (n_miss == 0) continue;
    hs_table_index_entry *e = &add[n_add];
    st = build_one(table, pf->path, missing, n_miss, &arena, &e->index_file, err);
    if (st != HS_OK) break;
    e->data_file = hs_arena_strndup(&arena, pf->path, strlen(pf->path));
    e->file_size = size;
    e->columns = hs_arena_alloc(&arena, n_miss * sizeof(char *));
    if (e->data_file == NULL || e->columns == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
      break;
    }
    for (size_t k = 0; k < n_miss; k++) e->columns[k] = missing[k];
    e->n_columns = n_miss;
    n_add++;
  }
  if (st == HS_OK) st = hs_table_index_register(table, add, n_add, err);
  hs_free(add);
  hs_free(missing);
  hs_table_index_registry_free(&reg);
  hs_table_plan_free(&plan);
  hs_arena_reset(&arena);
  return st;
}
