/*
 * index_registry.c — which scalar index file (src/index) covers which
 * column of which data file, recorded beside the Iceberg metadata.
 *
 * The registry is a JSON file metadata/index-registry-<uuid>.json:
 *   {"format-version": 1,
 *    "entries": [{"data-file": "<abs path>", "file-size": N,
 *                 "index-file": "<abs path>", "columns": ["a", "b"],
 *                 "field-ids": [1, 2]}, ...]}
 * "columns" are the data file's own column names (the names the index
 * file's blobs carry), "field-ids" their Iceberg field ids: readers find an
 * index by the field id of the column they filter or search, whatever its
 * current name, so a rename keeps it. Entries without "field-ids" (written
 * before they were recorded) answer only under their name, and only where
 * the data file's column of that name is the read schema's field.
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
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "../common/merge3.h"
#include "../common/parallel.h"
#include "../index/index.h"
#include "../io/fs.h"
#include "../io/store.h"
#include "table.h"

#define REGISTRY_BYTES_MAX ((size_t)256 << 20)
#define REGISTRY_PROPERTY "hyperstream.index-registry"

/* Parsed registries kept per process: a registry file is written once
 * under a fresh name, so its parse is reused while the file's stamp
 * (hs_fs_stamp_of: device, inode, size, mtime) is unchanged, and a query
 * does not parse JSON again. Entries are lent by reference count; an
 * evicted entry is freed when its last borrower lets go. */
#define RC_MAX 8

typedef struct rc_entry {
  char *path;
  hs_fs_stamp stamp;
  hs_table_index_registry reg; /* owns its arena */
  int refs;                    /* borrowers, plus one while in the cache */
  uint64_t used_at;
} rc_entry;

static pthread_mutex_t rc_mu = PTHREAD_MUTEX_INITIALIZER;
static rc_entry *rc_cache[RC_MAX];
static uint64_t rc_tick;

static void rc_unref(rc_entry *e) {
  pthread_mutex_lock(&rc_mu);
  bool last = --e->refs == 0;
  pthread_mutex_unlock(&rc_mu);
  if (!last) return;
  hs_arena_reset(&e->reg.arena);
  hs_free(e->path);
  hs_free(e);
}

/* Lend the cached parse of (path, stamp) to *out; false when there is none. */
static bool rc_take(const char *path, const hs_fs_stamp *stamp, hs_table_index_registry *out) {
  rc_entry *hit = NULL;
  pthread_mutex_lock(&rc_mu);
  for (size_t i = 0; i < RC_MAX && hit == NULL; i++) {
    rc_entry *e = rc_cache[i];
    if (e != NULL && hs_fs_stamp_equal(&e->stamp, stamp) && strcmp(e->path, path) == 0) {
      hit = e;
      e->refs++;
      e->used_at = ++rc_tick;
    }
  }
  pthread_mutex_unlock(&rc_mu);
  if (hit == NULL) return false;
  out->entries = hit->reg.entries;
  out->n_entries = hit->reg.n_entries;
  out->order = hit->reg.order;
  out->shared = hit;
  return true;
}

/* Move the fresh parse *r into the cache and lend it back through *r. On
 * failure (out of memory) *r stays the caller's own. */
static void rc_put(const char *path, const hs_fs_stamp *stamp, hs_table_index_registry *r) {
  rc_entry *e = hs_calloc(1, sizeof *e);
  char *p = hs_strdup(path);
  if (e == NULL || p == NULL) {
    hs_free(e);
    hs_free(p);
    return;
  }
  *e = (rc_entry){.path = p, .stamp = *stamp, .reg = *r, .refs = 2};
  rc_entry *old = NULL;
  pthread_mutex_lock(&rc_mu);
  size_t slot = 0;
  for (size_t i = 0; i < RC_MAX; i++) {
    if (rc_cache[i] == NULL) {
      slot = i;
      break;
    }
    if (rc_cache[i]->used_at < rc_cache[slot]->used_at) slot = i;
  }
  old = rc_cache[slot];
  e->used_at = ++rc_tick;
  rc_cache[slot] = e;
  pthread_mutex_unlock(&rc_mu);
  if (old != NULL) rc_unref(old);
  hs_arena_init(&r->arena);
  r->shared = e;
}

void hs_table_index_registry_free(hs_table_index_registry *r) {
  if (r == NULL) return;
  if (r->shared != NULL) rc_unref(r->shared);
  hs_arena_reset(&r->arena);
  memset(r, 0, sizeof *r);
}

/* Parse registry JSON `buf` into `r` (strings in r->arena). */
static hs_status registry_parse(const char *what, const hs_buf *buf, hs_table_index_registry *r,
                                hs_error *err);
static hs_status registry_index(hs_table_index_registry *r, hs_error *err);

hs_status hs_table_index_registry_parse(const char *what, const uint8_t *data, size_t len,
                                        hs_table_index_registry *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_arena_init(&out->arena);
  hs_buf buf = {.data = (uint8_t *)data, .len = len, .cap = len};
  hs_status st = registry_parse(what, &buf, out, err);
  if (st == HS_OK) st = registry_index(out, err);
  if (st != HS_OK) hs_table_index_registry_free(out);
  return st;
}

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
    out->field_ids = hs_arena_alloc(&r->arena, (out->n_columns + 1) * sizeof(int32_t));
    if (out->data_file == NULL || out->index_file == NULL || out->columns == NULL ||
        out->field_ids == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
      goto done;
    }
    json_t *fids = json_object_get(e, "field-ids");
    if (fids != NULL && (!json_is_array(fids) || json_array_size(fids) != out->n_columns)) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "%s: entry %zu has malformed field-ids", what, i);
      goto done;
    }
    for (size_t k = 0; k < out->n_columns; k++) {
      json_t *fid = fids != NULL ? json_array_get(fids, k) : NULL;
      if (fid != NULL && (!json_is_integer(fid) || json_integer_value(fid) < -1 ||
                          json_integer_value(fid) > INT32_MAX)) {
        st = hs_error_set(err, HS_ERR_CORRUPT, "%s: entry %zu field id %zu is malformed", what, i,
                          k);
        goto done;
      }
      out->field_ids[k] = fid != NULL ? (int32_t)json_integer_value(fid) : -1;
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

static hs_status registry_load_named(const hs_table *t, const char *rec,
                                     hs_table_index_registry *out, hs_error *err);

hs_status hs_table_index_registry_load(const hs_table *t, const hs_iceberg_metadata *meta,
                                       hs_table_index_registry *out, hs_error *err) {
  return registry_load_named(
      t, hs_iceberg_metadata_property(meta ? meta : &t->meta, REGISTRY_PROPERTY), out, err);
}

/* The registry file `rec` (the property's value as recorded; NULL: none). */
static hs_status registry_load_named(const hs_table *t, const char *rec,
                                     hs_table_index_registry *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_arena_init(&out->arena);
  if (rec == NULL) return HS_OK; /* no indexes */
  char *path = NULL;
  hs_status st = hs_table_resolve_path(t, rec, "index registry", &path, err);
  if (st != HS_OK) return st;
  hs_fs_stamp stamp;
  bool keyed = hs_store_stamp_of(path, &stamp);
  if (keyed && rc_take(path, &stamp, out)) {
    hs_free(path);
    return HS_OK;
  }
  hs_buf buf;
  hs_buf_init(&buf);
  st = hs_table_file_read(path, REGISTRY_BYTES_MAX, &buf, err);
  if (st == HS_OK) st = registry_parse(path, &buf, out, err);
  if (st == HS_OK) st = registry_index(out, err);
  hs_buf_free(&buf);
  /* Cached only if the file read is the one stamped (not replaced since). */
  hs_fs_stamp after;
  if (st == HS_OK && keyed && hs_store_stamp_of(path, &after) && hs_fs_stamp_equal(&stamp, &after))
    rc_put(path, &stamp, out);
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

const char *hs_table_index_lookup_field(const hs_table_index_registry *r, const char *data_file,
                                        int64_t file_size, const char *column, int32_t field_id,
                                        const char **stored) {
  if (stored != NULL) *stored = NULL;
  if (r == NULL || r->n_entries == 0) return NULL;
  size_t lo = 0, hi = r->n_entries;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (key_cmp(&r->entries[r->order[mid]], r->order[mid], data_file, file_size, SIZE_MAX) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  while (lo-- > 0) { /* later entries win, as in hs_table_index_lookup */
    const hs_table_index_entry *e = &r->entries[r->order[lo]];
    if (e->file_size != file_size || strcmp(e->data_file, data_file) != 0) break;
    for (size_t k = 0; k < e->n_columns; k++) {
      int32_t id = e->field_ids != NULL ? e->field_ids[k] : -1;
      bool hit = id >= 0 ? field_id >= 0 && id == field_id
                         : column != NULL && strcmp(e->columns[k], column) == 0;
      if (hit) {
        if (stored != NULL) *stored = e->columns[k];
        return e->index_file;
      }
    }
  }
  return NULL;
}

int32_t hs_table_current_field_id(const hs_iceberg_metadata *meta, const char *name) {
  const hs_iceberg_schema *s = hs_iceberg_metadata_schema(meta, meta->current_schema_id);
  for (size_t i = 0; s != NULL && name != NULL && i < s->root.n_fields; i++)
    if (strcmp(s->root.fields[i].name, name) == 0) return s->root.fields[i].id;
  return -1;
}

const char *hs_table_current_field_name(const hs_iceberg_metadata *meta, int32_t id) {
  const hs_iceberg_schema *s = hs_iceberg_metadata_schema(meta, meta->current_schema_id);
  for (size_t i = 0; s != NULL && id >= 0 && i < s->root.n_fields; i++)
    if (s->root.fields[i].id == id) return s->root.fields[i].name;
  return NULL;
}

/* ------------------------------------------------------------ building */

static json_t *entry_json(const hs_table_index_entry *e, const char *drop_column,
                          int32_t drop_field_id) {
  json_t *o = json_object(), *cols = json_array(), *fids = json_array();
  if (o == NULL || cols == NULL || fids == NULL) {
    json_decref(o);
    json_decref(cols);
    json_decref(fids);
    return NULL;
  }
  bool any_fid = false;
  for (size_t k = 0; k < e->n_columns; k++) {
    int32_t id = e->field_ids != NULL ? e->field_ids[k] : -1;
    bool drop = id >= 0 ? drop_field_id >= 0 && id == drop_field_id
                        : drop_column != NULL && strcmp(e->columns[k], drop_column) == 0;
    if (drop) continue;
    json_array_append_new(cols, json_string(e->columns[k]));
    json_array_append_new(fids, json_integer(id));
    any_fid = any_fid || id >= 0;
  }
  if (json_array_size(cols) == 0) { /* every column dropped: no entry */
    json_decref(o);
    json_decref(cols);
    json_decref(fids);
    return json_null();
  }
  json_object_set_new(o, "data-file", json_string(e->data_file));
  json_object_set_new(o, "file-size", json_integer(e->file_size));
  json_object_set_new(o, "index-file", json_string(e->index_file));
  json_object_set_new(o, "columns", cols);
  if (any_fid)
    json_object_set_new(o, "field-ids", fids);
  else
    json_decref(fids);
  return o;
}

hs_status hs_table_set_property(hs_iceberg_metadata *m, hs_arena *a, const char *key,
                                const char *value, hs_error *err) {
  size_t n = m->n_properties;
  hs_iceberg_kv *props = hs_arena_alloc(a, (n + 1) * sizeof *props);
  if (props == NULL) return hs_error_set(err, HS_ERR_NOMEM, "set property %s: out of memory", key);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strcmp(m->properties[i].key, key) != 0) props[k++] = m->properties[i];
  if (value != NULL) {
    props[k].key = key;
    props[k].value = value;
    k++;
  }
  m->properties = props;
  m->n_properties = k;
  return HS_OK;
}

static hs_status registry_publish(const hs_table *t, json_t *root, hs_iceberg_metadata *m,
                                  hs_arena *a, bool *changed, hs_error *err);

hs_status hs_table_index_registry_rewrite(const hs_table *t, const hs_iceberg_metadata *old,
                                          hs_iceberg_metadata *m, hs_arena *a,
                                          const char *drop_column, int32_t drop_field_id,
                                          const hs_table_index_entry *add, size_t n_add,
                                          bool *changed, hs_error *err) {
  *changed = false;
  hs_table_index_registry cur;
  hs_status st = hs_table_index_registry_load(t, old, &cur, err);
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
  bool any = n_add > 0;
  for (size_t i = 0; i < cur.n_entries; i++) {
    json_t *e = entry_json(&cur.entries[i], drop_column, drop_field_id);
    if (e == NULL || json_is_null(e) ||
        json_array_size(json_object_get(e, "columns")) != cur.entries[i].n_columns)
      any = true;
    if (e != NULL && !json_is_null(e))
      json_array_append_new(ents, e);
    else
      json_decref(e);
  }
  for (size_t i = 0; i < n_add; i++) json_array_append_new(ents, entry_json(&add[i], NULL, -1));
  hs_table_index_registry_free(&cur);
  if (!any) {
    json_decref(root);
    return HS_OK;
  }
  return registry_publish(t, root, m, a, changed, err);
}

/* Write registry document `root` (taken) as a new file under t's metadata
 * folder and point m's property at it (*changed then true). */
static hs_status registry_publish(const hs_table *t, json_t *root, hs_iceberg_metadata *m,
                                  hs_arena *a, bool *changed, hs_error *err) {
  char *text = json_dumps(root, JSON_COMPACT);
  json_decref(root);
  if (text == NULL) return hs_error_set(err, HS_ERR_NOMEM, "index registry: out of memory");
  hs_status st;
  char uuid[37];
  char *path = NULL;
  st = hs_fs_uuid4(uuid, err);
  if (st == HS_OK) {
    size_t cap = strlen(t->root) + 80;
    path = hs_arena_alloc(a, cap);
    if (path == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "index registry: out of memory");
    else
      snprintf(path, cap, "%s/metadata/index-registry-%s.json", t->root, uuid);
  }
  if (st == HS_OK) st = hs_table_file_write(NULL, path, text, strlen(text), err);
  free(text); /* jansson's allocator */
  if (st == HS_OK) st = hs_table_set_property(m, a, REGISTRY_PROPERTY, path, err);
  if (st == HS_OK) *changed = true;
  return st;
}

/* ------------------------------------------------- three-way merge */

/* Entry identity: the index file and the data file (path, size) it covers. */
static int ident_cmp(const hs_table_index_entry *a, const hs_table_index_entry *b) {
  int c = strcmp(a->index_file, b->index_file);
  if (c == 0) c = strcmp(a->data_file, b->data_file);
  if (c == 0) c = (a->file_size > b->file_size) - (a->file_size < b->file_size);
  return c;
}

static int ident_qsort(const void *x, const void *y) {
  return ident_cmp(*(const hs_table_index_entry *const *)x,
                   *(const hs_table_index_entry *const *)y);
}

/* r's entries sorted by identity (hs_malloc'd; NULL with n 0). */
static const hs_table_index_entry **ident_sorted(const hs_table_index_registry *r, bool *ok) {
  *ok = true;
  if (r->n_entries == 0) return NULL;
  const hs_table_index_entry **v = hs_malloc(r->n_entries * sizeof *v);
  if (v == NULL) {
    *ok = false;
    return NULL;
  }
  for (size_t i = 0; i < r->n_entries; i++) v[i] = &r->entries[i];
  qsort(v, r->n_entries, sizeof *v, ident_qsort);
  return v;
}

static const hs_table_index_entry *ident_find(const hs_table_index_entry **v, size_t n,
                                              const hs_table_index_entry *e) {
  const hs_table_index_entry *const *hit = n ? bsearch(&e, v, n, sizeof *v, ident_qsort) : NULL;
  return hit ? *hit : NULL;
}

static bool same_columns(const hs_table_index_entry *a, const hs_table_index_entry *b) {
  if (a->n_columns != b->n_columns) return false;
  for (size_t k = 0; k < a->n_columns; k++) {
    int32_t fa = a->field_ids ? a->field_ids[k] : -1, fb = b->field_ids ? b->field_ids[k] : -1;
    if (fa != fb || strcmp(a->columns[k], b->columns[k]) != 0) return false;
  }
  return true;
}

/* The three registries for common/merge3.h: entries in file order, looked
 * up through their identity-sorted views. */
typedef struct merge_lists {
  const hs_table_index_registry *r[3];
  const hs_table_index_entry **sorted[3];
  json_t *out;
} merge_lists;

static const void *merge_at(void *ctx, int list, size_t i) {
  return &((merge_lists *)ctx)->r[list]->entries[i];
}

static const void *merge_find(void *ctx, int list, const void *e) {
  merge_lists *ml = ctx;
  return ident_find(ml->sorted[list], ml->r[list]->n_entries, e);
}

static bool merge_same(void *ctx, const void *a, const void *b) {
  (void)ctx;
  return same_columns(a, b);
}

static bool merge_emit(void *ctx, const void *e) {
  json_t *j = entry_json(e, NULL, -1);
  return j != NULL && json_array_append_new(((merge_lists *)ctx)->out, j) == 0;
}

hs_status hs_table_index_registry_merge3(const hs_table *t, const char *base, const char *theirs,
                                         hs_iceberg_metadata *m, hs_arena *a, bool *changed,
                                         hs_error *err) {
  *changed = false;
  hs_table_index_registry rb, rt, ro;
  memset(&rt, 0, sizeof rt);
  memset(&ro, 0, sizeof ro);
  hs_status st = registry_load_named(t, base, &rb, err);
  if (st == HS_OK) st = registry_load_named(t, theirs, &rt, err);
  if (st == HS_OK) st = hs_table_index_registry_load(t, m, &ro, err);
  bool ok_b = true, ok_t = true, ok_o = true;
  const hs_table_index_entry **vb = NULL, **vt = NULL, **vo = NULL;
  json_t *root = NULL, *ents = NULL;
  if (st == HS_OK) {
    vb = ident_sorted(&rb, &ok_b);
    vt = ident_sorted(&rt, &ok_t);
    vo = ident_sorted(&ro, &ok_o);
    root = json_object();
    ents = json_array();
    if (!ok_b || !ok_t || !ok_o || root == NULL || ents == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "index registry: out of memory");
  }
  merge_lists ml = {{&rb, &rt, &ro}, {vb, vt, vo}, ents};
  hs_merge3 mg = {.ctx = &ml,
                  .n = {rb.n_entries, rt.n_entries, ro.n_entries},
                  .at = merge_at,
                  .find = merge_find,
                  .same = merge_same,
                  .emit = merge_emit};
  int any = st == HS_OK ? hs_merge3_run(&mg) : 0;
  if (any < 0) st = hs_error_set(err, HS_ERR_NOMEM, "index registry: out of memory");
  hs_free(vb);
  hs_free(vt);
  hs_free(vo);
  hs_table_index_registry_free(&rb);
  hs_table_index_registry_free(&rt);
  hs_table_index_registry_free(&ro);
  if (st == HS_OK && any == 1) {
    json_object_set_new(root, "format-version", json_integer(1));
    json_object_set_new(root, "entries", ents);
    return registry_publish(t, root, m, a, changed, err);
  }
  json_decref(ents);
  json_decref(root);
  return st;
}

typedef struct reg_add {
  const hs_table *t;
  hs_table_index_entry *add;
  size_t n_add;
  /* Configured builds: keep only columns whose configuration at commit
   * time still has the kind the index was built for. */
  const hs_table_index_spec *specs;
  size_t n_specs;
  bool configured;
} reg_add;

/* Metadata edit: the winner's registry plus our entries, as a new file. */
static hs_status registry_edit(const hs_iceberg_metadata *old, hs_iceberg_metadata *m, hs_arena *a,
                               void *ctx, bool *changed, hs_error *err) {
  reg_add *rq = ctx;
  hs_table_index_entry *add = rq->add;
  size_t n_add = rq->n_add;
  hs_table_index_config conf;
  memset(&conf, 0, sizeof conf);
  if (rq->configured) {
    hs_status st = hs_table_index_config_load(old, &conf, err);
    if (st != HS_OK) return st;
    /* Filtered copies in the edit's arena (the request stays intact for
     * a retry against another winner). */
    hs_table_index_entry *kept = hs_arena_alloc(a, (n_add ? n_add : 1) * sizeof *kept);
    if (kept == NULL) {
      hs_table_index_config_free(&conf);
      return hs_error_set(err, HS_ERR_NOMEM, "index registry: out of memory");
    }
    size_t n_kept = 0;
    for (size_t i = 0; i < n_add; i++) {
      hs_table_index_entry e = add[i];
      e.columns = hs_arena_alloc(a, (e.n_columns ? e.n_columns : 1) * sizeof(char *));
      e.field_ids = hs_arena_alloc(a, (e.n_columns ? e.n_columns : 1) * sizeof(int32_t));
      if (e.columns == NULL || e.field_ids == NULL) {
        hs_table_index_config_free(&conf);
        return hs_error_set(err, HS_ERR_NOMEM, "index registry: out of memory");
      }
      e.n_columns = 0;
      for (size_t k = 0; k < add[i].n_columns; k++) {
        /* Matched by field id (the column may be renamed meanwhile). */
        const char *col = add[i].columns[k];
        int32_t fid = add[i].field_ids != NULL ? add[i].field_ids[k] : -1;
        const hs_table_index_conf *c = NULL;
        for (size_t j = 0; j < conf.n_entries; j++)
          if (fid >= 0 ? conf.entries[j].field_id == fid : strcmp(conf.entries[j].column, col) == 0)
            c = &conf.entries[j];
        const char *kind = NULL;
        for (size_t s = 0; s < rq->n_specs; s++)
          if (fid >= 0 ? rq->specs[s].field_id == fid : strcmp(rq->specs[s].column, col) == 0)
            kind = rq->specs[s].kind;
        if (c != NULL && kind != NULL && strcmp(c->kind, kind) == 0) {
          e.field_ids[e.n_columns] = fid;
          e.columns[e.n_columns++] = add[i].columns[k];
        }
      }
      if (e.n_columns > 0) kept[n_kept++] = e;
    }
    add = kept;
    n_add = n_kept;
    hs_table_index_config_free(&conf);
    if (n_add == 0) {
      *changed = false;
      return HS_OK;
    }
  }
  return hs_table_index_registry_rewrite(rq->t, old, m, a, NULL, -1, add, n_add, changed, err);
}

hs_status hs_table_index_register(hs_table *t, const hs_table_index_entry *add, size_t n,
                                  hs_error *err) {
  if (n == 0) return HS_OK;
  reg_add rq = {t, (hs_table_index_entry *)add, n, NULL, 0, false};
  return hs_table_commit_metadata(t, "register indexes", registry_edit, &rq, err);
}

/* A data file's columns, in memory: borrowed per-column chunk lists. */
typedef struct col_arrays {
  size_t nc, n_chunks;
  const struct ArrowSchema **fields;
  const struct ArrowArray **col_chunks;
  struct ArrowArray *chunks; /* nc * n_chunks shallow copies (borrowed buffers) */
} col_arrays;

static void col_arrays_free(col_arrays *ca) {
  hs_free(ca->fields);
  hs_free(ca->col_chunks);
  hs_free(ca->chunks);
  memset(ca, 0, sizeof *ca);
}

/* ca over `nc` fields and the children `child[c]` of each of n_b struct
 * batches (shallow copies: the batches keep ownership). */
static hs_status col_arrays_make(col_arrays *ca, size_t nc, const struct ArrowSchema *const *fields,
                                 const size_t *child, const struct ArrowArray *batches, size_t n_b,
                                 hs_error *err) {
  memset(ca, 0, sizeof *ca);
  ca->nc = nc;
  ca->n_chunks = n_b;
  ca->fields = hs_malloc((nc ? nc : 1) * sizeof *ca->fields);
  ca->col_chunks = hs_malloc((nc ? nc : 1) * sizeof *ca->col_chunks);
  ca->chunks = hs_malloc((nc ? nc : 1) * (n_b ? n_b : 1) * sizeof *ca->chunks);
  if (ca->fields == NULL || ca->col_chunks == NULL || ca->chunks == NULL) {
    col_arrays_free(ca);
    return hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
  }
  for (size_t c = 0; c < nc; c++) {
    for (size_t i = 0; i < n_b; i++) ca->chunks[c * n_b + i] = *batches[i].children[child[c]];
    ca->col_chunks[c] = ca->chunks + c * n_b;
    ca->fields[c] = fields[c];
  }
  return HS_OK;
}

/* Build the index of ca's columns (options from copts by column name) and
 * write it as a new fsynced <root>/index/<uuid>.puffin; its path in
 * *index_path (arena). */
static hs_status build_write(const hs_table *t, const char *data_path, const col_arrays *ca,
                             char **cols, const hs_sidx_column_options *copts, size_t n_cols,
                             uint32_t threads, hs_arena *arena, char **index_path, hs_error *err) {
  hs_sidx_builder *b = NULL;
  hs_buf out;
  hs_buf_init(&out);
  hs_index_binding bind;
  hs_status st = hs_table_data_file_binding(t, data_path, &bind, err);
  if (st == HS_OK) st = hs_sidx_builder_create(&b, err);
  if (st == HS_OK) st = hs_sidx_builder_bind(b, &bind, err);
  hs_sidx_column_options *o = NULL;
  if (st == HS_OK && ca->nc > 0 && (o = hs_calloc(ca->nc, sizeof *o)) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
  for (size_t c = 0; st == HS_OK && c < ca->nc; c++)
    for (size_t k = 0; copts != NULL && k < n_cols; k++)
      if (strcmp(cols[k], ca->fields[c]->name) == 0) o[c] = copts[k];
  if (st == HS_OK)
    st = hs_sidx_builder_add_columns(b, ca->nc, ca->fields, NULL, ca->col_chunks, ca->n_chunks, o,
                                     threads, err);
  hs_free(o);
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
      st = hs_table_file_write(dir, p, out.data, out.len, err);
      *index_path = p;
    }
  }
  hs_buf_free(&out);
  hs_sidx_builder_free(b);
  return st;
}

/* Read `cols` of data file `path` and write their index as a new fsynced
 * <root>/index/<uuid>.puffin; its path in *index_path (arena). */
static hs_status build_one(const hs_table *t, const char *path, char **cols,
                           const hs_sidx_column_options *copts, size_t n_cols, uint32_t threads,
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
  struct ArrowArray *batches = NULL;
  size_t n_b = 0;
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
  /* Per column: borrowed shallow copies of each batch's child; all
   * columns built at once on `threads` threads. */
  size_t nc = st == HS_OK && schema.n_children > 0 ? (size_t)schema.n_children : 0;
  col_arrays ca;
  memset(&ca, 0, sizeof ca);
  size_t *child = hs_malloc((nc ? nc : 1) * sizeof *child);
  if (st == HS_OK && child == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
  for (size_t c = 0; st == HS_OK && c < nc; c++) child[c] = c;
  if (st == HS_OK)
    st = col_arrays_make(&ca, nc, (const struct ArrowSchema *const *)schema.children, child,
                         batches, n_b, err);
  hs_free(child);
  if (st == HS_OK)
    st = build_write(t, path, &ca, cols, copts, n_cols, threads, arena, index_path, err);
  if (st != HS_OK) hs_error_prefix(err, "build index of %s: ", path);
  col_arrays_free(&ca);
  for (size_t i = 0; i < n_b; i++) batches[i].release(&batches[i]);
  hs_free(batches);
  if (schema.release != NULL) schema.release(&schema);
  if (stream.release != NULL) stream.release(&stream);
  hs_parquet_reader_free(rd);
  return st;
}

/* Index `cols` of an append's data file from its kept batches. Only when
 * every column's Arrow format in the batches equals the format the file
 * reads back as (its footer's schema, cheap: the file was just written):
 * then the values, hence the keys and the index bytes, are the same as a
 * build from the file. *used is false (and nothing written) otherwise. */
static hs_status build_kept(const hs_table *t, const hs_table_appended *k, char **cols,
                            const hs_sidx_column_options *copts, size_t n_cols, uint32_t threads,
                            hs_arena *arena, char **index_path, bool *used, hs_error *err) {
  *used = false;
  if (k->n_batches == 0 || k->schema.release == NULL) return HS_OK;
  hs_parquet_reader *rd = NULL;
  hs_error rerr = {0};
  if (hs_parquet_reader_open(k->data_path, &rd, &rerr) != HS_OK) return HS_OK; /* read path */
  struct ArrowSchema fs;
  memset(&fs, 0, sizeof fs);
  bool ok = hs_parquet_reader_schema(rd, &fs, &rerr) == HS_OK;
  hs_parquet_reader_free(rd);
  size_t *child = hs_malloc((n_cols ? n_cols : 1) * sizeof *child);
  const struct ArrowSchema **fields = hs_malloc((n_cols ? n_cols : 1) * sizeof *fields);
  ok = ok && child != NULL && fields != NULL;
  for (size_t c = 0; ok && c < n_cols; c++) {
    const struct ArrowSchema *in = NULL, *file = NULL;
    for (int64_t i = 0; i < k->schema.n_children; i++)
      if (strcmp(k->schema.children[i]->name, cols[c]) == 0) {
        in = k->schema.children[i];
        child[c] = (size_t)i;
      }
    for (int64_t i = 0; i < fs.n_children; i++)
      if (strcmp(fs.children[i]->name, cols[c]) == 0) file = fs.children[i];
    ok = in != NULL && file != NULL && in->n_children == 0 && file->n_children == 0 &&
         in->dictionary == NULL && strcmp(in->format, file->format) == 0;
    fields[c] = in;
  }
  /* Struct batches as the Parquet writer saw them: rows are the children's
   * rows only when the struct has no offset and its length is theirs. */
  for (size_t i = 0; ok && i < k->n_batches; i++) {
    const struct ArrowArray *bt = &k->batches[i];
    ok = bt->n_children == k->schema.n_children && bt->offset == 0;
    for (size_t c = 0; ok && c < n_cols; c++) ok = bt->children[child[c]]->length == bt->length;
  }
  hs_status st = HS_OK;
  if (ok) {
    col_arrays ca;
    st = col_arrays_make(&ca, n_cols, fields, child, k->batches, k->n_batches, err);
    if (st == HS_OK) {
      st = build_write(t, k->data_path, &ca, cols, copts, n_cols, threads, arena, index_path, err);
      col_arrays_free(&ca);
    }
    if (st != HS_OK) hs_error_prefix(err, "build index of %s: ", k->data_path);
    *used = true;
  }
  hs_free(child);
  hs_free(fields);
  hs_arrow_schema_release(&fs);
  return st;
}

/* One data file to index: the specs it lacks, and the outcome. */
typedef struct build_job {
  const char *path;
  int64_t size;
  char **cols;   /* job arena; the current names, then the file's own (job_map) */
  int32_t *fids; /* per column: its field id (-1: by name) */
  hs_sidx_column_options *copts;
  size_t n_cols;
  hs_arena arena; /* index path */
  char *index_path;
  const hs_table_appended *kept; /* build from its batches when they fit */
  hs_status st;
  hs_error err;
} build_job;

typedef struct build_ctx {
  const hs_table *t;
  build_job *jobs;
  size_t n_jobs;
  pthread_mutex_t mu; /* serializes progress calls and `done` */
  int64_t done;
  atomic_int cancelled;
  hs_table_index_progress_fn progress;
  void *progress_ctx;
  uint32_t col_threads; /* per file: its columns are built on this many threads */
} build_ctx;

/* Data file `path`'s Arrow schema (caller releases) and whether any of its
 * top-level columns carries a field id (else columns match by name). */
static hs_status file_schema(const char *path, struct ArrowSchema *fs, bool *any_ids,
                             hs_error *err) {
  memset(fs, 0, sizeof *fs);
  hs_parquet_reader *rd = NULL;
  hs_status st = hs_parquet_reader_open(path, &rd, err);
  if (st != HS_OK) return st;
  st = hs_parquet_reader_schema(rd, fs, err);
  hs_parquet_reader_free(rd);
  if (st != HS_OK) return st;
  *any_ids = false;
  for (int64_t i = 0; i < fs->n_children; i++)
    *any_ids = *any_ids || hs_arrow_field_id(fs->children[i]) >= 0;
  return HS_OK;
}

hs_status hs_table_data_file_column(const char *path, int32_t field_id, const char *name,
                                    char **out, hs_error *err) {
  *out = NULL;
  struct ArrowSchema fs;
  bool any_ids;
  hs_status st = file_schema(path, &fs, &any_ids, err);
  if (st != HS_OK) return st;
  const char *found = NULL;
  for (int64_t i = 0; i < fs.n_children && found == NULL; i++) {
    const struct ArrowSchema *c = fs.children[i];
    if (any_ids && field_id >= 0 ? hs_arrow_field_id(c) == field_id
                                 : name != NULL && strcmp(c->name, name) == 0)
      found = c->name;
  }
  if (found != NULL && (*out = hs_strdup(found)) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path);
  hs_arrow_schema_release(&fs);
  return st;
}

/* The job's columns as the data file names them: matched by field id (a
 * column renamed since the file was written is read under its old name; a
 * column the file lacks, added later or a dropped name re-added, is left
 * out of this file's index). A file without field ids is read by name. */
static hs_status job_map(build_job *job, hs_error *err) {
  struct ArrowSchema fs;
  bool any_ids;
  hs_status st = file_schema(job->path, &fs, &any_ids, err);
  if (st != HS_OK) return st;
  size_t m = 0;
  for (size_t k = 0; st == HS_OK && k < job->n_cols; k++) {
    const char *name = job->cols[k];
    if (any_ids && job->fids[k] >= 0) {
      name = NULL;
      for (int64_t i = 0; i < fs.n_children && name == NULL; i++)
        if (hs_arrow_field_id(fs.children[i]) == job->fids[k]) name = fs.children[i]->name;
      if (name == NULL) continue; /* not in this file */
    }
    char *c = hs_arena_strndup(&job->arena, name, strlen(name));
    if (c == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
    job->cols[m] = c;
    job->fids[m] = job->fids[k];
    job->copts[m] = job->copts[k];
    m++;
  }
  job->n_cols = m;
  hs_arrow_schema_release(&fs);
  return st;
}

static void build_worker(void *vctx, size_t begin, size_t end, uint32_t worker) {
  (void)worker;
  build_ctx *c = vctx;
  for (size_t j = begin; j < end; j++) {
    build_job *job = &c->jobs[j];
    if (atomic_load(&c->cancelled)) {
      job->st = HS_ERR_INVALID_ARG; /* not built; not an error of its own */
      job->err.status = HS_OK;
      continue;
    }
    bool used = false;
    job->st = job_map(job, &job->err);
    if (job->st == HS_OK && job->n_cols == 0) used = true; /* nothing of it in this file */
    if (job->st == HS_OK && !used && job->kept != NULL)
      job->st = build_kept(c->t, job->kept, job->cols, job->copts, job->n_cols, c->col_threads,
                           &job->arena, &job->index_path, &used, &job->err);
    if (job->st == HS_OK && !used)
      job->st = build_one(c->t, job->path, job->cols, job->copts, job->n_cols, c->col_threads,
                          &job->arena, &job->index_path, &job->err);
    pthread_mutex_lock(&c->mu);
    c->done++;
    if (c->progress != NULL && c->progress(c->progress_ctx, c->done, (int64_t)c->n_jobs) != 0)
      atomic_store(&c->cancelled, 1);
    pthread_mutex_unlock(&c->mu);
  }
}

static hs_status index_build(hs_table *t, const hs_table_index_spec *specs, size_t n,
                             bool configured, uint32_t threads, hs_table_index_progress_fn progress,
                             void *progress_ctx, const hs_table_appended *const *appended,
                             size_t n_appended, int64_t *files_built, hs_error *err);

hs_status hs_table_index_build(hs_table *t, const hs_table_index_spec *specs, size_t n,
                               bool configured, uint32_t threads,
                               hs_table_index_progress_fn progress, void *progress_ctx,
                               int64_t *files_built, hs_error *err) {
  return index_build(t, specs, n, configured, threads, progress, progress_ctx, NULL, 0, files_built,
                     err);
}

hs_status hs_table_index_build_appended(hs_table *t, const hs_table_index_spec *specs, size_t n,
                                        bool configured, uint32_t threads,
                                        const hs_table_appended *const *appended, size_t n_appended,
                                        int64_t *files_built, hs_error *err) {
  if (appended == NULL && n_appended > 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "build indexes: no appends");
  for (size_t i = 0; i < n_appended; i++)
    if (appended[i] == NULL || appended[i]->data_path == NULL)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "build indexes: append %zu is empty", i);
  if (n_appended == 0) {
    if (files_built != NULL) *files_built = 0;
    return HS_OK;
  }
  return index_build(t, specs, n, configured, threads, NULL, NULL, appended, n_appended,
                     files_built, err);
}

/* The build over the current snapshot's files, or with `appended` over
 * those appends' files only (kept batches used where they fit). */
static hs_status index_build(hs_table *t, const hs_table_index_spec *specs, size_t n,
                             bool configured, uint32_t threads, hs_table_index_progress_fn progress,
                             void *progress_ctx, const hs_table_appended *const *appended,
                             size_t n_appended, int64_t *files_built, hs_error *err) {
  if (files_built != NULL) *files_built = 0;
  hs_status st = hs_table_refresh(t, err);
  if (st != HS_OK) return st;
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  hs_table_index_registry reg;
  memset(&reg, 0, sizeof reg);
  build_ctx c;
  memset(&c, 0, sizeof c);
  c.t = t;
  c.progress = progress;
  c.progress_ctx = progress_ctx;
  atomic_init(&c.cancelled, 0);
  hs_table_index_entry *add = NULL;
  size_t n_add = 0;
  if (appended == NULL) st = hs_table_plan_files(t, -1, &plan, err);
  size_t n_files = appended != NULL ? n_appended : plan.n_files;
  if (st == HS_OK) st = hs_table_index_registry_load(t, NULL, &reg, err);
  if (st == HS_OK && (c.jobs = hs_calloc(n_files + 1, sizeof *c.jobs)) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
  for (size_t f = 0; st == HS_OK && f < n_files; f++) {
    build_job *job = &c.jobs[c.n_jobs];
    hs_arena_init(&job->arena);
    if (appended != NULL) {
      bool dup = false; /* the same file twice: built once */
      for (size_t g = 0; g < f; g++)
        dup = dup || strcmp(appended[g]->data_path, appended[f]->data_path) == 0;
      if (dup) continue;
      job->path = appended[f]->data_path;
      job->size = appended[f]->file_size;
      job->kept = appended[f];
    } else {
      job->path = plan.files[f].path;
      job->size = plan.files[f].data_file->file_size_in_bytes;
    }
    job->cols = hs_arena_alloc(&job->arena, n * sizeof(char *));
    job->fids = hs_arena_alloc(&job->arena, n * sizeof(int32_t));
    job->copts = hs_arena_alloc(&job->arena, n * sizeof *job->copts);
    if (job->cols == NULL || job->fids == NULL || job->copts == NULL) {
      hs_arena_reset(&job->arena);
      st = hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
      break;
    }
    for (size_t i = 0; i < n; i++) {
      if (hs_table_index_lookup_field(&reg, job->path, job->size, specs[i].column,
                                      specs[i].field_id, NULL) != NULL)
        continue;
      job->fids[job->n_cols] = specs[i].field_id;
      job->cols[job->n_cols] = (char *)specs[i].column;
      job->copts[job->n_cols].layout = (hs_sidx_layout)specs[i].layout;
      job->copts[job->n_cols].block_rows = specs[i].block_rows;
      job->copts[job->n_cols].lossy = specs[i].lossy;
      job->n_cols++;
    }
    if (job->n_cols == 0)
      hs_arena_reset(&job->arena);
    else
      c.n_jobs++;
  }
  if (st == HS_OK && c.n_jobs > 0) {
    if (progress != NULL && progress(progress_ctx, 0, (int64_t)c.n_jobs) != 0)
      atomic_store(&c.cancelled, 1);
    pthread_mutex_init(&c.mu, NULL);
    /* Fewer files than threads (an append's own file): split the columns too. */
    uint32_t th = threads != 0 ? threads : hs_parallel_cores();
    c.col_threads = c.n_jobs >= th ? 1 : th / (uint32_t)c.n_jobs;
    hs_parallel_for(c.n_jobs, 1, threads, build_worker, &c);
    pthread_mutex_destroy(&c.mu);
    if ((add = hs_calloc(c.n_jobs, sizeof *add)) == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
  }
  /* Register what was built; then report the first failure. */
  const build_job *failed = NULL;
  for (size_t j = 0; st == HS_OK && j < c.n_jobs; j++) {
    build_job *job = &c.jobs[j];
    if (job->st != HS_OK) {
      if (failed == NULL && job->err.status != HS_OK) failed = job;
      continue;
    }
    if (job->n_cols == 0 || job->index_path == NULL) continue; /* none of its columns in the file */
    hs_table_index_entry *e = &add[n_add++];
    e->data_file = (char *)job->path;
    e->file_size = job->size;
    e->index_file = job->index_path;
    e->columns = job->cols;
    e->field_ids = job->fids;
    e->n_columns = job->n_cols;
  }
  if (st == HS_OK && n_add > 0) {
    reg_add rq = {t, add, n_add, specs, n, configured};
    st = hs_table_commit_metadata(t, "register indexes", registry_edit, &rq, err);
  }
  if (st == HS_OK && files_built != NULL) *files_built = (int64_t)n_add;
  if (st == HS_OK && failed != NULL) {
    *err = failed->err;
    st = failed->st;
    hs_error_prefix(err, "%zu of %zu index files built; ", n_add, c.n_jobs);
  }
  if (st == HS_OK && atomic_load(&c.cancelled))
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "build indexes: cancelled after %zu of %zu files (those are registered)",
                      n_add, c.n_jobs);
  for (size_t j = 0; c.jobs != NULL && j < c.n_jobs; j++) hs_arena_reset(&c.jobs[j].arena);
  hs_free(c.jobs);
  hs_free(add);
  hs_table_index_registry_free(&reg);
  hs_table_plan_free(&plan);
  return st;
}

hs_status hs_table_build_indexes(hs_table *table, const char *const *columns, size_t n,
                                 hs_error *err) {
  if (table == NULL || n == 0 || columns == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "build indexes: no table or columns");
  hs_table_index_spec *specs = hs_calloc(n, sizeof *specs);
  if (specs == NULL) return hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
  hs_status st = HS_OK;
  for (size_t i = 0; i < n; i++) {
    if (columns[i] == NULL) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "build indexes: column %zu is NULL", i);
      break;
    }
    specs[i].column = columns[i];
    specs[i].field_id = hs_table_current_field_id(&table->meta, columns[i]);
    specs[i].layout = HS_SIDX_LAYOUT_AUTO;
  }
  if (st == HS_OK) st = hs_table_index_build(table, specs, n, false, 0, NULL, NULL, NULL, err);
  hs_free(specs);
  return st;
}
