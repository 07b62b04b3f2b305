/*
 * index_config.c — which columns a table indexes, and how: the table
 * property "hyperstream.indexes", a JSON list
 *   [{"column": "category", "field-id": 3, "kind": "bitmap", "params": {}}, ...]
 * "field-id" is the Iceberg field the entry indexes: a renamed column keeps
 * its configuration (loaded under the current schema's name), and an entry
 * whose field the current schema no longer has (a dropped column) is
 * ignored: not listed, not built, and left out when the configuration is
 * next committed. Entries without "field-id" (written before it was
 * recorded) configure the current schema's column of that name.
 * Changed only by metadata-only commits (hs_table_commit_metadata: the
 * exclusive publish, the edit re-applied to the winner's version after a
 * lost race), so every handle, process and the CLI agree on it.
 *
 * Kinds and the scalar layout (src/index/scalar/README.md) they map to:
 *   inverted, scalar   AUTO   (DICT when values repeat, else SORTED)
 *   bitmap             DICT   (one Roaring bitmap per distinct value)
 *   btree, sorted      SORTED (sorted (value, row) pairs in blocks)
 *   hnsw, ivf_hnsw, ivf_hnsw_sq8, ivf_pq   vector kinds (list or fixed-size
 *                      list columns): params mapped onto hs_vector_index_options
 *                      (names and aliases as the Python API's), built by
 *                      hs_table_build_vector_indexes (src/table/vector_index.c)
 * Scalar params: {"block_rows": N} (SORTED block size, 64..1048576) and
 * {"lossy": true} (SORTED blocks keep only their min/max and row bitmap:
 * ~2 B/row, answers re-checked on the data; src/index/scalar/README.md
 * "Lossy blocks"); anything else is refused so a typo does not silently do
 * nothing.
 *
 * Dropping an index removes its configuration and the column from every
 * registry entry in one commit; the index files stay on disk as orphans
 * (another column may share the file; unreferenced files are for a later
 * remove_orphan_files, like replaced metadata versions).
 */
#include <ctype.h>
#include <jansson.h>
#include <string.h>

#include "../index/index.h"
#include "table.h"

#define CONFIG_PROPERTY "hyperstream.indexes"
#define BLOCK_ROWS_MIN 64
#define BLOCK_ROWS_MAX (1 << 20)

typedef struct kind_def {
  const char *name;
  int layout; /* hs_sidx_layout; -1: vector */
} kind_def;

static const kind_def KINDS[] = {
    {"inverted", HS_SIDX_LAYOUT_AUTO},
    {"scalar", HS_SIDX_LAYOUT_AUTO},
    {"bitmap", HS_SIDX_LAYOUT_DICT},
    {"btree", HS_SIDX_LAYOUT_SORTED},
    {"sorted", HS_SIDX_LAYOUT_SORTED},
    {"hnsw", -1},
    {"ivf_hnsw", -1},
    {"ivf_hnsw_sq8", -1},
    {"ivf_pq", -1},
};
#define N_KINDS (sizeof KINDS / sizeof KINDS[0])
#define KIND_LIST                                                                           \
  "inverted, scalar, bitmap, btree, sorted (scalar); hnsw, ivf_hnsw, ivf_hnsw_sq8, ivf_pq " \
  "(vector)"

static const kind_def *kind_find(const char *name) {
  for (size_t i = 0; i < N_KINDS; i++)
    if (strcmp(KINDS[i].name, name) == 0) return &KINDS[i];
  return NULL;
}

/* Vector params (names and aliases as python/hyperstreamdb/_vector_search.py
 * accepts them) into hs_table_build_vector_indexes options; `metric` is
 * borrowed from `params`. */
static hs_status vector_options(const char *column, const char *kind, json_t *params,
                                hs_vector_index_options *o, hs_error *err) {
  hs_vector_index_options_init(o);
  if (strcmp(kind, "hnsw") == 0) o->partitions = 1;
  if (strcmp(kind, "ivf_hnsw_sq8") == 0) o->quantizer = "sq8";
  if (strcmp(kind, "ivf_pq") == 0) o->quantizer = "pq";
  static const struct {
    const char *name, *as;
  } names[] = {{"metric", "metric"},
               {"m", "m"},
               {"M", "m"},
               {"ef_construction", "ef_construction"},
               {"efConstruction", "ef_construction"},
               {"ef", "ef_construction"},
               {"partitions", "partitions"},
               {"num_partitions", "partitions"},
               {"nlist", "partitions"},
               {"pq_m", "pq_m"},
               {"num_sub_vectors", "pq_m"},
               {"threads", "threads"}};
  const char *key;
  json_t *v;
  json_object_foreach(params, key, v) {
    const char *as = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && as == NULL; i++)
      if (strcmp(names[i].name, key) == 0) as = names[i].as;
    if (as == NULL)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "index on '%s': unknown %s parameter '%s' (metric, m, ef_construction, "
                          "partitions, pq_m, threads)",
                          column, kind, key);
    if (strcmp(as, "metric") == 0) {
      if (!json_is_string(v))
        return hs_error_set(err, HS_ERR_INVALID_ARG, "index on '%s': metric must be a string",
                            column);
      o->metric = json_string_value(v);
      continue;
    }
    json_int_t n = json_is_integer(v) ? json_integer_value(v) : -1;
    if (n < 0 || n > UINT32_MAX || (strcmp(as, "partitions") == 0 && o->partitions == 1 && n > 1))
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "index on '%s': %s=%s is not valid for a %s index", column, key,
                          json_is_integer(v) ? "a value out of range" : "not an integer", kind);
    uint32_t u = (uint32_t)n;
    if (strcmp(as, "m") == 0)
      o->m = u;
    else if (strcmp(as, "ef_construction") == 0)
      o->ef_construction = u;
    else if (strcmp(as, "partitions") == 0)
      o->partitions = u;
    else if (strcmp(as, "pq_m") == 0)
      o->pq_m = u;
    else
      o->threads = u;
  }
  return HS_OK;
}

/* Check scalar params; *block_rows and *lossy from them. */
static hs_status params_check(const char *column, json_t *params, int layout, uint32_t *block_rows,
                              bool *lossy, hs_error *err) {
  *block_rows = 0;
  *lossy = false;
  if (layout < 0) return HS_OK; /* vector params belong to the vector index code */
  const char *key;
  json_t *v;
  json_object_foreach(params, key, v) {
    if (strcmp(key, "lossy") == 0) {
      if (!json_is_boolean(v))
        return hs_error_set(err, HS_ERR_INVALID_ARG, "index on '%s': lossy must be true or false",
                            column);
      if (layout == HS_SIDX_LAYOUT_DICT && json_is_true(v))
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "index on '%s': lossy applies to btree/sorted/inverted, not bitmap",
                            column);
      *lossy = json_is_true(v);
      continue;
    }
    if (strcmp(key, "block_rows") != 0)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "index on '%s': unknown parameter '%s' (a scalar index takes only "
                          "block_rows and lossy)",
                          column, key);
    json_int_t n = json_is_integer(v) ? json_integer_value(v) : -1;
    if (n < BLOCK_ROWS_MIN || n > BLOCK_ROWS_MAX)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "index on '%s': block_rows must be an integer in [%d, %d]", column,
                          BLOCK_ROWS_MIN, BLOCK_ROWS_MAX);
    if (layout == HS_SIDX_LAYOUT_DICT)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "index on '%s': block_rows applies to btree/sorted/inverted, not bitmap",
                          column);
    *block_rows = (uint32_t)n;
  }
  return HS_OK;
}

/* Fill `out` (strings in `a`) from one JSON config item. */
static hs_status conf_from_json(json_t *item, size_t i, hs_arena *a, hs_table_index_conf *out,
                                hs_error *err) {
  json_t *col = json_object_get(item, "column"), *kind = json_object_get(item, "kind");
  json_t *params = json_object_get(item, "params");
  if (!json_is_string(col) || !json_is_string(kind) || (params && !json_is_object(params)))
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "table property " CONFIG_PROPERTY ": item %zu is malformed", i);
  const kind_def *k = kind_find(json_string_value(kind));
  if (k == NULL)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "table property " CONFIG_PROPERTY ": item %zu has unknown kind '%s'", i,
                        json_string_value(kind));
  out->column = hs_arena_strndup(a, json_string_value(col), json_string_length(col));
  out->kind = hs_arena_strndup(a, k->name, strlen(k->name));
  char *text = params ? json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  out->params = text ? hs_arena_strndup(a, text, strlen(text)) : hs_arena_strndup(a, "{}", 2);
  free(text); /* jansson's allocator */
  if (out->column == NULL || out->kind == NULL || out->params == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "index configuration: out of memory");
  json_t *fid = json_object_get(item, "field-id");
  if (fid != NULL &&
      (!json_is_integer(fid) || json_integer_value(fid) < 0 || json_integer_value(fid) > INT32_MAX))
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "table property " CONFIG_PROPERTY ": item %zu has a malformed field-id", i);
  out->field_id = fid != NULL ? (int32_t)json_integer_value(fid) : -1;
  out->layout = k->layout;
  hs_status st = HS_OK;
  if (params != NULL)
    st = params_check(out->column, params, k->layout, &out->block_rows, &out->lossy, err);
  if (st != HS_OK) hs_error_prefix(err, "table property " CONFIG_PROPERTY ": ");
  return st == HS_OK ? HS_OK : HS_ERR_CORRUPT;
}

hs_status hs_table_index_config_load(const hs_iceberg_metadata *meta, hs_table_index_config *out,
                                     hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_arena_init(&out->arena);
  const char *text = hs_iceberg_metadata_property(meta, CONFIG_PROPERTY);
  if (text == NULL) return HS_OK;
  json_error_t je;
  json_t *root = json_loads(text, 0, &je);
  if (root == NULL || !json_is_array(root)) {
    json_decref(root);
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "table property " CONFIG_PROPERTY ": not a JSON list%s%s",
                        root == NULL ? ": " : "", root == NULL ? je.text : "");
  }
  size_t n = json_array_size(root);
  hs_status st = HS_OK;
  out->entries = hs_arena_alloc(&out->arena, (n ? n : 1) * sizeof *out->entries);
  if (out->entries == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "index configuration: out of memory");
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    hs_table_index_conf *c = &out->entries[out->n_entries];
    st = conf_from_json(json_array_get(root, i), i, &out->arena, c, err);
    if (st != HS_OK) break;
    if (c->field_id >= 0) { /* the field's current name; gone: ignored */
      const char *name = hs_table_current_field_name(meta, c->field_id);
      if (name == NULL) continue;
      if ((c->column = hs_arena_strndup(&out->arena, name, strlen(name))) == NULL)
        st = hs_error_set(err, HS_ERR_NOMEM, "index configuration: out of memory");
    } else {
      c->field_id = hs_table_current_field_id(meta, c->column);
    }
    if (st == HS_OK) out->n_entries++;
  }
  json_decref(root);
  if (st != HS_OK) hs_table_index_config_free(out);
  return st;
}

void hs_table_index_config_free(hs_table_index_config *c) {
  if (c == NULL) return;
  hs_arena_reset(&c->arena);
  memset(c, 0, sizeof *c);
}

const hs_table_index_conf *hs_table_index_config_find(const hs_table_index_config *c,
                                                      const char *column) {
  for (size_t i = 0; c != NULL && i < c->n_entries; i++)
    if (strcmp(c->entries[i].column, column) == 0) return &c->entries[i];
  return NULL;
}

/* ------------------------------------------------------------ editing */

typedef struct conf_edit {
  const hs_table *t;
  size_t n;
  const char *const *columns;
  const char *const *kinds; /* NULL: drop columns[0] (n == 1) */
  json_t *const *params;    /* add: the parsed params (borrowed) */
  bool found;               /* drop: the column was configured or registered */
} conf_edit;

/* Index of `column` among the edit's columns, or n. */
static size_t edit_find(const conf_edit *ce, const char *column) {
  for (size_t i = 0; i < ce->n; i++)
    if (strcmp(ce->columns[i], column) == 0) return i;
  return ce->n;
}

/* The configuration of `old` with the edit's columns replaced (add) or
 * removed (drop), in one commit. */
static hs_status conf_apply(const hs_iceberg_metadata *old, hs_iceberg_metadata *m, hs_arena *a,
                            void *vctx, bool *changed, hs_error *err) {
  conf_edit *ce = vctx;
  *changed = false;
  hs_table_index_config cur;
  hs_status st = hs_table_index_config_load(old, &cur, err);
  if (st != HS_OK) return st;
  bool all_same = ce->kinds != NULL, any_prev = false;
  for (size_t i = 0; i < ce->n; i++) {
    const hs_table_index_conf *prev = hs_table_index_config_find(&cur, ce->columns[i]);
    any_prev = any_prev || prev != NULL;
    char *ptext = ce->kinds && ce->params[i]
                      ? json_dumps(ce->params[i], JSON_COMPACT | JSON_SORT_KEYS)
                      : NULL;
    bool same = prev != NULL && ce->kinds != NULL && strcmp(prev->kind, ce->kinds[i]) == 0 &&
                strcmp(prev->params, ptext ? ptext : "{}") == 0;
    free(ptext);
    all_same = all_same && same;
  }
  json_t *list = json_array();
  if (list == NULL) {
    hs_table_index_config_free(&cur);
    return hs_error_set(err, HS_ERR_NOMEM, "index configuration: out of memory");
  }
  for (size_t i = 0; i < cur.n_entries; i++) {
    const hs_table_index_conf *c = &cur.entries[i];
    if (edit_find(ce, c->column) < ce->n) continue;
    json_t *p = json_loads(c->params, 0, NULL);
    json_t *item = json_pack("{s:s,s:s,s:o}", "column", c->column, "kind", c->kind, "params",
                             p ? p : json_object());
    if (item != NULL && c->field_id >= 0)
      json_object_set_new(item, "field-id", json_integer(c->field_id));
    json_array_append_new(list, item);
  }
  for (size_t i = 0; ce->kinds != NULL && i < ce->n; i++) {
    json_t *item = json_pack("{s:s,s:s,s:O}", "column", ce->columns[i], "kind", ce->kinds[i],
                             "params", ce->params[i]);
    int32_t fid = hs_table_current_field_id(old, ce->columns[i]);
    if (item != NULL && fid >= 0) json_object_set_new(item, "field-id", json_integer(fid));
    json_array_append_new(list, item);
  }
  if (all_same) { /* re-adding what is there: nothing to commit */
    hs_table_index_config_free(&cur);
    json_decref(list);
    return HS_OK;
  }
  /* Reconfigured (or dropped) columns' old index files no longer describe
   * their configuration: each rewrite starts from the previous one's. */
  bool reg_changed = false;
  const hs_iceberg_metadata *base = old;
  for (size_t i = 0; st == HS_OK && i < ce->n; i++) {
    bool one = false;
    st = hs_table_index_registry_rewrite(ce->t, base, m, a, ce->columns[i],
                                         hs_table_current_field_id(old, ce->columns[i]), NULL, 0,
                                         &one, err);
    if (one) base = m;
    reg_changed = reg_changed || one;
  }
  hs_table_index_config_free(&cur);
  if (ce->kinds == NULL) ce->found = any_prev || reg_changed;
  /* An empty list removes the property. */
  size_t n_list = json_array_size(list);
  char *text = st == HS_OK && n_list > 0 ? json_dumps(list, JSON_COMPACT) : NULL;
  json_decref(list);
  char *value = text ? hs_arena_strndup(a, text, strlen(text)) : NULL;
  free(text); /* jansson's allocator */
  if (st == HS_OK && n_list > 0 && value == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "index configuration: out of memory");
  if (st == HS_OK && (any_prev || ce->kinds != NULL))
    st = hs_table_set_property(m, a, CONFIG_PROPERTY, value, err);
  if (st == HS_OK) *changed = any_prev || ce->kinds != NULL || reg_changed;
  return st;
}

/* Find top-level `column` in the table's Arrow schema; its format. */
static hs_status column_format(hs_table *table, const char *column, char *fmt, size_t cap,
                               hs_error *err) {
  struct ArrowSchema s;
  hs_status st = hs_table_schema(table, &s, err);
  if (st != HS_OK) return st;
  st = HS_ERR_NOT_FOUND;
  for (int64_t i = 0; i < s.n_children; i++)
    if (strcmp(s.children[i]->name, column) == 0) {
      snprintf(fmt, cap, "%s", s.children[i]->format);
      st = HS_OK;
    }
  if (st != HS_OK) {
    char names[512] = "";
    for (int64_t i = 0; i < s.n_children && strlen(names) + 80 < sizeof names; i++)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
               s.children[i]->name);
    hs_error_set(err, HS_ERR_INVALID_ARG, "%s: no column '%s' to index; columns are: %s",
                 table->root, column, names);
    st = HS_ERR_INVALID_ARG;
  }
  s.release(&s);
  return st;
}

/* Check one add: kind known (case-insensitive), column present with a
 * fitting type, params valid. *kd and *params (owned) on HS_OK. */
static hs_status add_check(hs_table *table, const char *column, const char *kind,
                           const char *params_json, const kind_def **kd, json_t **params,
                           hs_error *err) {
  *params = NULL;
  if (column == NULL || kind == NULL || column[0] == '\0')
    return hs_error_set(err, HS_ERR_INVALID_ARG, "add index: no table, column or kind");
  char lower[32];
  size_t kl = strlen(kind);
  if (kl >= sizeof lower) kl = sizeof lower - 1;
  for (size_t i = 0; i < kl; i++) lower[i] = (char)tolower((unsigned char)kind[i]);
  lower[kl] = '\0';
  const kind_def *k = kind_find(lower);
  if (k == NULL || strlen(kind) != kl)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "index on '%s': unknown kind '%s' (kinds: %s)",
                        column, kind, KIND_LIST);
  char fmt[64];
  hs_status st = column_format(table, column, fmt, sizeof fmt, err);
  if (st != HS_OK) return st;
  if (k->layout < 0 && strncmp(fmt, "+w:", 3) != 0 && strcmp(fmt, "+l") != 0 &&
      strcmp(fmt, "+L") != 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "index on '%s': a %s index needs a vector column (a list or fixed-size "
                        "list of floats), and '%s' has Arrow format '%s'",
                        column, k->name, column, fmt);
  if (k->layout >= 0 && (fmt[0] == '+' || strcmp(fmt, "e") == 0 || strcmp(fmt, "n") == 0))
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "index on '%s': a %s index needs a scalar column, and '%s' has Arrow "
                        "format '%s' (for vectors use kind 'hnsw', 'ivf_hnsw', 'ivf_hnsw_sq8' "
                        "or 'ivf_pq')",
                        column, k->name, column, fmt);
  json_error_t je;
  json_t *p = params_json && params_json[0] ? json_loads(params_json, 0, &je) : json_object();
  if (p == NULL || !json_is_object(p)) {
    json_decref(p);
    return hs_error_set(err, HS_ERR_INVALID_ARG, "index on '%s': params must be a JSON object",
                        column);
  }
  uint32_t block_rows;
  bool lossy;
  st = params_check(column, p, k->layout, &block_rows, &lossy, err);
  hs_vector_index_options vo;
  if (st == HS_OK && k->layout < 0) st = vector_options(column, k->name, p, &vo, err);
  if (st != HS_OK) {
    json_decref(p);
    return st;
  }
  *kd = k;
  *params = p;
  return HS_OK;
}

hs_status hs_table_add_index(hs_table *table, const char *column, const char *kind,
                             const char *params_json, hs_error *err) {
  if (table == NULL || column == NULL || kind == NULL || column[0] == '\0')
    return hs_error_set(err, HS_ERR_INVALID_ARG, "add index: no table, column or kind");
  return hs_table_add_indexes(table, &column, &kind, &params_json, 1, err);
}

hs_status hs_table_add_indexes(hs_table *table, const char *const *columns,
                               const char *const *kinds, const char *const *params_json, size_t n,
                               hs_error *err) {
  if (table == NULL || (n > 0 && (columns == NULL || kinds == NULL)))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "add index: no table, column or kind");
  if (n == 0) return HS_OK;
  hs_status st = hs_table_refresh(table, err);
  if (st != HS_OK) return st;
  const char **names = hs_calloc(n, sizeof *names);
  json_t **params = hs_calloc(n, sizeof *params);
  if (names == NULL || params == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "add index: out of memory");
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    const kind_def *k = NULL;
    st = add_check(table, columns[i], kinds[i], params_json ? params_json[i] : NULL, &k, &params[i],
                   err);
    if (st == HS_OK) names[i] = k->name;
    for (size_t j = 0; st == HS_OK && j < i; j++)
      if (strcmp(columns[j], columns[i]) == 0)
        st =
            hs_error_set(err, HS_ERR_INVALID_ARG, "add index: column '%s' named twice", columns[i]);
  }
  if (st == HS_OK) {
    conf_edit ce = {table, n, columns, names, params, false};
    st =
        hs_table_commit_metadata(table, n == 1 ? "add index" : "add indexes", conf_apply, &ce, err);
  }
  for (size_t i = 0; params != NULL && i < n; i++) json_decref(params[i]);
  hs_free(params);
  hs_free((void *)names);
  return st;
}

hs_status hs_table_drop_index(hs_table *table, const char *column, hs_error *err) {
  if (table == NULL || column == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "drop index: no table or column");
  conf_edit ce = {table, 1, &column, NULL, NULL, false};
  hs_status st = hs_table_commit_metadata(table, "drop index", conf_apply, &ce, err);
  if (st == HS_OK && !ce.found)
    return hs_error_set(err, HS_ERR_NOT_FOUND, "%s: column '%s' has no index", table->root, column);
  return st;
}

/* ----------------------------------------------------------- listing */

static hs_status info_push(hs_table_index_info **v, size_t *n, const char *column, const char *kind,
                           const char *params, int is_vector, hs_error *err) {
  hs_table_index_info *nv = hs_realloc(*v, (*n + 1) * sizeof *nv);
  if (nv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "list indexes: out of memory");
  *v = nv;
  hs_table_index_info *o = &nv[*n];
  memset(o, 0, sizeof *o);
  o->column = hs_strdup(column);
  o->kind = hs_strdup(kind);
  o->params = hs_strdup(params);
  o->is_vector = is_vector;
  (*n)++;
  if (o->column == NULL || o->kind == NULL || o->params == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "list indexes: out of memory");
  return HS_OK;
}

void hs_table_index_info_free(hs_table_index_info *v, size_t n) {
  for (size_t i = 0; v != NULL && i < n; i++) {
    hs_free(v[i].column);
    hs_free(v[i].kind);
    hs_free(v[i].params);
  }
  hs_free(v);
}

static bool info_has(const hs_table_index_info *v, size_t n, const char *column) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i].column, column) == 0) return true;
  return false;
}

hs_status hs_table_list_indexes(hs_table *table, hs_table_index_info **out, size_t *n_out,
                                hs_error *err) {
  *out = NULL;
  *n_out = 0;
  if (table == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "list indexes: no table");
  hs_table_index_config conf;
  memset(&conf, 0, sizeof conf);
  hs_table_index_registry reg;
  memset(&reg, 0, sizeof reg);
  hs_table_plan plan;
  memset(&plan, 0, sizeof plan);
  hs_table_index_info *v = NULL;
  size_t n = 0;
  hs_status st = hs_table_refresh(table, err);
  if (st == HS_OK) st = hs_table_index_config_load(&table->meta, &conf, err);
  if (st == HS_OK) st = hs_table_index_registry_load(table, NULL, &reg, err);
  if (st == HS_OK) st = hs_table_plan_files(table, -1, &plan, err);
  for (size_t i = 0; st == HS_OK && i < conf.n_entries; i++) {
    const hs_table_index_conf *c = &conf.entries[i];
    st = info_push(&v, &n, c->column, c->kind, c->params, c->layout < 0, err);
  }
  /* Columns registered without configuration (hs_table_build_indexes),
   * under their current names; a dropped field's are not listed. */
  for (size_t e = 0; st == HS_OK && e < reg.n_entries; e++)
    for (size_t k = 0; st == HS_OK && k < reg.entries[e].n_columns; k++) {
      const hs_table_index_entry *re = &reg.entries[e];
      const char *name = re->field_ids[k] >= 0
                             ? hs_table_current_field_name(&table->meta, re->field_ids[k])
                             : re->columns[k];
      if (name != NULL && !info_has(v, n, name))
        st = info_push(&v, &n, name, "unconfigured", "{}", 0, err);
    }
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    v[i].files_total = (int64_t)plan.n_files;
    int32_t fid = hs_table_current_field_id(&table->meta, v[i].column);
    for (size_t f = 0; f < plan.n_files; f++)
      if (hs_table_index_lookup_field(&reg, plan.files[f].path,
                                      plan.files[f].data_file->file_size_in_bytes, v[i].column, fid,
                                      NULL) != NULL)
        v[i].files_indexed++;
  }
  hs_table_plan_free(&plan);
  hs_table_index_registry_free(&reg);
  hs_table_index_config_free(&conf);
  if (st != HS_OK) {
    hs_table_index_info_free(v, n);
    return st;
  }
  *out = v;
  *n_out = n;
  return HS_OK;
}

/* ---------------------------------------------------------- building */

hs_status hs_table_build_configured_indexes(hs_table *table,
                                            const hs_table_index_build_options *opts,
                                            int64_t *files_built, hs_error *err) {
  if (files_built != NULL) *files_built = 0;
  if (table == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "build indexes: no table");
  hs_table_index_build_options defaults;
  memset(&defaults, 0, sizeof defaults);
  if (opts == NULL) opts = &defaults;
  hs_status st = hs_table_refresh(table, err);
  hs_table_index_config conf;
  memset(&conf, 0, sizeof conf);
  if (st == HS_OK) st = hs_table_index_config_load(&table->meta, &conf, err);
  if (st != HS_OK) return st;
  hs_table_index_spec *specs = hs_calloc(conf.n_entries + 1, sizeof *specs);
  size_t n = 0;
  if (specs == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "build indexes: out of memory");
  for (size_t i = 0; st == HS_OK && opts->columns != NULL && i < opts->n_columns; i++) {
    const hs_table_index_conf *c = hs_table_index_config_find(&conf, opts->columns[i]);
    if (c == NULL)
      st = hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: column '%s' has no configured index (add one first)", table->root,
                        opts->columns[i]);
    else if (c->layout < 0 && opts->skip_vector)
      st = hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: column '%s' has a %s index, and this build skips vector indexes",
                        table->root, c->column, c->kind);
  }
  for (size_t i = 0; st == HS_OK && i < conf.n_entries; i++) {
    const hs_table_index_conf *c = &conf.entries[i];
    bool wanted = opts->columns == NULL;
    for (size_t k = 0; !wanted && k < opts->n_columns; k++)
      wanted = strcmp(opts->columns[k], c->column) == 0;
    if (!wanted || c->layout < 0) continue;
    specs[n].column = c->column;
    specs[n].field_id = c->field_id;
    specs[n].kind = c->kind;
    specs[n].layout = c->layout;
    specs[n].block_rows = c->block_rows;
    specs[n].lossy = c->lossy;
    n++;
  }
  if (st == HS_OK && n > 0 && opts->appended != NULL)
    st = hs_table_index_build_appended(table, specs, n, true, opts->threads, opts->appended,
                                       opts->n_appended, files_built, err);
  else if (st == HS_OK && n > 0)
    st = hs_table_index_build(table, specs, n, true, opts->threads, opts->progress,
                              opts->progress_ctx, files_built, err);
  /* Vector kinds: the vector index builder, one column at a time; all are
   * attempted, the first failure is returned (after a scalar one). */
  for (size_t i = 0; !opts->skip_vector && i < conf.n_entries; i++) {
    const hs_table_index_conf *c = &conf.entries[i];
    bool wanted = opts->columns == NULL;
    for (size_t k = 0; !wanted && k < opts->n_columns; k++)
      wanted = strcmp(opts->columns[k], c->column) == 0;
    if (!wanted || c->layout >= 0) continue;
    json_t *params = json_loads(c->params, 0, NULL);
    hs_vector_index_options vo;
    hs_error verr = {0};
    int64_t nv = 0;
    hs_status vst = params
                        ? vector_options(c->column, c->kind, params, &vo, &verr)
                        : hs_error_set(&verr, HS_ERR_CORRUPT, "index on '%s': params", c->column);
    if (vst == HS_OK && vo.threads == 0) vo.threads = opts->threads;
    if (vst == HS_OK) vst = hs_table_build_vector_indexes(table, c->column, &vo, &nv, &verr);
    json_decref(params);
    if (vst == HS_OK && files_built != NULL) *files_built += nv;
    if (vst != HS_OK && st == HS_OK) {
      *err = verr;
      st = vst;
    }
  }
  hs_free(specs);
  hs_table_index_config_free(&conf);
  return st;
}
