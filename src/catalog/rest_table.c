/*
 * rest_table.c — tables of a REST catalog: open (load), create, refresh
 * and the publish step of every commit (hs_table_catalog_ops, table.h),
 * installed into the table layer as hs_table_catalog_hooks when a catalog
 * is connected (rest_api.c).
 *
 * A catalog table is an ordinary hs_table whose root is the metadata's
 * `location`: data files, manifests and manifest lists are written there
 * by the table layer as for any table; only the pointer to the current
 * metadata lives in the catalog, which writes the metadata files itself
 * ("NNNNN-<uuid>.metadata.json") from the updates we send.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/store.h"
#include "../table/timetravel.h"
#include "catalog.h"

typedef struct rest_table {
  hs_rest_catalog *cat; /* a reference */
  char *ns, *name;      /* "a.b", "t" */
  char *what_load, *what_commit;
  int64_t fresh_ns; /* monotonic time of the last load or commit; 0: none */
  int repairs;      /* nested repair commits in progress (keep_theirs) */
} rest_table;

static void rest_table_free(void *p) {
  rest_table *r = p;
  if (r == NULL) return;
  hs_rest_catalog_unref(r->cat);
  hs_free(r->ns);
  hs_free(r->name);
  hs_free(r->what_load);
  hs_free(r->what_commit);
  hs_free(r);
}

/* "a.b.t" into namespace "a.b" and name "t". */
static hs_status split_ident(const char *uri, const char *ident, char **ns, char **name,
                             hs_error *err) {
  *ns = *name = NULL;
  const char *dot = strrchr(ident, '.');
  if (dot == NULL || dot == ident || dot[1] == '\0' || strstr(ident, "..") != NULL ||
      ident[0] == '.')
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: '%s' is not a table identifier: want \"namespace.table\" after '#'",
                        uri, ident);
  *ns = hs_malloc((size_t)(dot - ident) + 1);
  *name = hs_strdup(dot + 1);
  if (*ns == NULL || *name == NULL) {
    hs_free(*ns);
    hs_free(*name);
    *ns = *name = NULL;
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
  }
  memcpy(*ns, ident, (size_t)(dot - ident));
  (*ns)[dot - ident] = '\0';
  return HS_OK;
}

static bool table_path(hs_buf *b, const char *ns, const char *name) {
  return hs_buf_printf(b, "namespaces/") && hs_rest_encode_namespace(b, ns) &&
         hs_buf_printf(b, "/tables/") && hs_rest_encode_segment(b, name) &&
         hs_buf_append_byte(b, 0);
}

/* The context of the table a rest:// URI names: its catalog (found or
 * connected by hs_rest_catalog_find; the context holds that reference),
 * namespace, name and the words its errors use. *ident points into uri. */
static hs_status open_ctx(const char *uri, const char **ident_out, rest_table **out,
                          hs_error *err) {
  *out = NULL;
  hs_rest_catalog *cat = NULL;
  const char *ident = NULL;
  hs_status st = hs_rest_catalog_find(uri, &cat, &ident, err);
  if (st != HS_OK) return st;
  *ident_out = ident;
  rest_table *r = hs_calloc(1, sizeof *r);
  if (r == NULL) {
    hs_rest_catalog_unref(cat);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
  }
  r->cat = cat;
  st = split_ident(uri, ident, &r->ns, &r->name, err);
  if (st == HS_OK) {
    size_t n = strlen(ident) + 32;
    r->what_load = hs_malloc(n);
    r->what_commit = hs_malloc(n);
    if (r->what_load == NULL || r->what_commit == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
    } else {
      snprintf(r->what_load, n, "load table %s", ident);
      snprintf(r->what_commit, n, "commit to table %s", ident);
    }
  }
  if (st != HS_OK) {
    rest_table_free(r);
    return st;
  }
  *out = r;
  return HS_OK;
}

/* The NNNNN of ".../NNNNN-<uuid>.metadata.json" (or vN), else 0. */
static int64_t version_of(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (base[0] == 'v') base++;
  int64_t v = 0;
  for (int i = 0; base[i] >= '0' && base[i] <= '9' && i < 18; i++) v = v * 10 + (base[i] - '0');
  return v;
}

/* Make a LoadTableResult `t`'s metadata (`a` taken over on success). */
static hs_status adopt_answer(hs_table *t, const char *location, hs_arena *a,
                              const hs_iceberg_metadata *meta, hs_error *err) {
  const char *path = hs_table_strip_file_scheme(location);
  if (t->metadata_path != NULL && strcmp(t->metadata_path, path) == 0) {
    hs_arena_reset(a); /* unchanged: keep what we hold */
    return HS_OK;
  }
  return hs_table_metadata_adopt(t, path, version_of(path), a, meta, err);
}

/* A new table handle for a LoadTableResult. */
static hs_status table_from_answer(const char *uri, const hs_buf *body, rest_table *ctx,
                                   hs_table **out, hs_error *err);

static const hs_table_catalog_ops rest_ops;

static hs_status rest_load(hs_table *t, hs_error *err) {
  rest_table *r = t->catalog_ctx;
  hs_buf path, body;
  hs_buf_init(&path);
  hs_buf_init(&body);
  hs_status st = table_path(&path, r->ns, r->name)
                     ? HS_OK
                     : hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", r->cat->uri);
  long status = 0;
  if (st == HS_OK)
    st = hs_rest_call(r->cat, "GET", (const char *)path.data, true, NULL, 0, r->what_load, true,
                      &body, &status, err);
  if (st == HS_OK && status != 200) st = hs_rest_fail(r->cat, r->what_load, status, &body, err);
  if (st == HS_OK) {
    hs_arena a;
    hs_arena_init(&a);
    const char *loc = NULL;
    hs_iceberg_metadata meta;
    hs_store_option *cfg = NULL;
    size_t n_cfg = 0;
    st = hs_rest_parse_load((const char *)body.data, body.len, &a, &loc, &meta, &cfg, &n_cfg, err);
    if (st != HS_OK) hs_error_prefix(err, "%s: %s: ", r->cat->uri, r->what_load);
    /* Vended storage configuration (short-lived credentials) anew. */
    if (st == HS_OK && n_cfg > 0 && meta.location != NULL)
      st = hs_rest_catalog_configure_storage(r->cat, meta.location, cfg, n_cfg, err);
    if (st == HS_OK) st = adopt_answer(t, loc, &a, &meta, err);
    if (st == HS_OK) r->fresh_ns = hs_now_ns();
    hs_arena_reset(&a);
  }
  hs_buf_free(&path);
  hs_buf_free(&body);
  return st;
}

/* hs_table_refresh: the catalog's max_staleness_ms after our last load or
 * commit keeps what we hold. */
static hs_status rest_refresh(hs_table *t, hs_error *err) {
  rest_table *r = t->catalog_ctx;
  long bound = r->cat->max_staleness_ms;
  if (bound > 0 && r->fresh_ns > 0 && hs_now_ns() - r->fresh_ns < (int64_t)bound * 1000000)
    return HS_OK;
  return rest_load(t, err);
}

/* The snapshots `m` adds to `old` (hs_malloc'd ids; *n 0: none). */
static int64_t *added_ids(const hs_iceberg_metadata *old, const hs_iceberg_metadata *m, size_t *n) {
  *n = 0;
  int64_t *ids = hs_malloc((m->n_snapshots + 1) * sizeof *ids);
  if (ids == NULL) return NULL;
  for (size_t i = 0; i < m->n_snapshots; i++)
    if (hs_iceberg_metadata_snapshot(old, m->snapshots[i].snapshot_id) == NULL)
      ids[(*n)++] = m->snapshots[i].snapshot_id;
  return ids;
}

#define REPAIRS_MAX 8

static hs_status rest_commit(hs_table *t, const hs_iceberg_metadata *old,
                             const hs_iceberg_metadata *m, bool *won, hs_error *err);

/* After a commit of ours that changed an index property: another
 * writer's registration or configuration our commit replaced is merged
 * back and committed (rest_merge.c). Best effort: our commit already
 * happened, so a failure here leaves at worst an index unregistered
 * (reads stay exact, unindexed), never a failed commit. */
static void keep_theirs(hs_table *t, const hs_rest_base *base) {
  rest_table *r = t->catalog_ctx;
  if (r->repairs >= REPAIRS_MAX) return;
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_metadata m2;
  bool won = false;
  if (hs_rest_merge_theirs(t, base, &m2, &a)) {
    r->repairs++;
    (void)rest_commit(t, &t->meta, &m2, &won, NULL);
    r->repairs--;
  }
  hs_arena_reset(&a);
}

static hs_status rest_commit(hs_table *t, const hs_iceberg_metadata *old,
                             const hs_iceberg_metadata *m, bool *won, hs_error *err) {
  rest_table *r = t->catalog_ctx;
  *won = false;
  /* An index property change: what it began from, for keep_theirs (`old`
   * does not outlive the adoption of the answer). */
  hs_rest_base base;
  bool props = hs_rest_base_take(&base, t, old, m);
  hs_buf json, path, body;
  hs_buf_init(&json);
  hs_buf_init(&path);
  hs_buf_init(&body);
  size_t n_updates = 0;
  hs_status st = hs_rest_commit_body(old, m, &json, &n_updates, err);
  if (st != HS_OK) hs_error_prefix(err, "%s: %s: ", r->cat->uri, r->what_commit);
  if (st == HS_OK && n_updates == 0) {
    *won = true; /* nothing the catalog holds changes */
    goto done;
  }
  if (st == HS_OK && !table_path(&path, r->ns, r->name))
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", r->cat->uri);
  long status = 0;
  hs_error call_err = {0};
  hs_status cst = HS_OK;
  if (st == HS_OK)
    cst = hs_rest_call(r->cat, "POST", (const char *)path.data, true, (const char *)json.data,
                       json.len, r->what_commit, false, &body, &status, &call_err);
  if (st != HS_OK) goto done;
  if (cst == HS_OK && status == 200) {
    hs_arena a;
    hs_arena_init(&a);
    const char *loc = NULL;
    hs_iceberg_metadata meta;
    st = hs_rest_parse_load((const char *)body.data, body.len, &a, &loc, &meta, NULL, NULL, err);
    if (st != HS_OK) hs_error_prefix(err, "%s: %s: ", r->cat->uri, r->what_commit);
    /* Committed even if the answer does not parse: reload it instead. */
    *won = true;
    if (st == HS_OK) st = adopt_answer(t, loc, &a, &meta, err);
    if (st == HS_OK)
      r->fresh_ns = hs_now_ns();
    else if (rest_load(t, NULL) == HS_OK) {
      st = HS_OK;
      if (err != NULL) memset(err, 0, sizeof *err);
    }
    hs_arena_reset(&a);
    if (st == HS_OK && props) keep_theirs(t, &base);
  } else if (cst == HS_OK && status == 409) {
    *won = false; /* CommitFailedException: a requirement failed; reload and retry */
  } else if (cst != HS_OK || status >= 500) {
    /* The outcome is unknown (Iceberg: CommitStateUnknownException): look
     * (`old` and `m` point into what the reload replaces: ids first). */
    size_t n_ids = 0;
    int64_t *ids = added_ids(old, m, &n_ids);
    bool loaded = ids != NULL && rest_load(t, NULL) == HS_OK, all = loaded && n_ids > 0;
    for (size_t i = 0; all && i < n_ids; i++)
      all = hs_iceberg_metadata_snapshot(&t->meta, ids[i]) != NULL;
    bool none = loaded && n_ids > 0;
    for (size_t i = 0; none && i < n_ids; i++)
      none = hs_iceberg_metadata_snapshot(&t->meta, ids[i]) == NULL;
    hs_free(ids);
    if (all) {
      *won = true;
    } else if (none) {
      *won = false; /* our snapshot is not there: safe to retry on what is */
    } else {
      if (cst != HS_OK) {
        if (err != NULL) *err = call_err;
        st = cst;
      } else {
        st = hs_rest_fail(r->cat, r->what_commit, status, &body, err);
      }
      hs_error_prefix(err, "commit state unknown: ");
      *won = true; /* maybe applied: the transaction keeps every file it names */
    }
  } else {
    st = hs_rest_fail(r->cat, r->what_commit, status, &body, err);
  }
done:
  if (props) hs_rest_base_free(&base);
  hs_buf_free(&json);
  hs_buf_free(&path);
  hs_buf_free(&body);
  return st;
}

static const hs_table_catalog_ops rest_ops = {
    .load = rest_load, .refresh = rest_refresh, .commit = rest_commit, .release = rest_table_free};

static hs_status table_from_answer(const char *uri, const hs_buf *body, rest_table *ctx,
                                   hs_table **out, hs_error *err) {
  *out = NULL;
  hs_arena a;
  hs_arena_init(&a);
  const char *loc = NULL;
  hs_iceberg_metadata meta;
  hs_store_option *cfg = NULL;
  size_t n_cfg = 0;
  hs_status st =
      hs_rest_parse_load((const char *)body->data, body->len, &a, &loc, &meta, &cfg, &n_cfg, err);
  if (st != HS_OK) hs_error_prefix(err, "%s: %s: ", uri, ctx->what_load);
  hs_table *t = NULL;
  if (st == HS_OK && (meta.location == NULL || meta.location[0] == '\0'))
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: %s: the metadata has no location", uri,
                      ctx->what_load);
  if (st == HS_OK) st = hs_rest_catalog_configure_storage(ctx->cat, meta.location, cfg, n_cfg, err);
  if (st == HS_OK) st = hs_table_alloc(hs_table_strip_file_scheme(meta.location), &t, err);
  if (st == HS_OK) st = adopt_answer(t, loc, &a, &meta, err);
  if (st == HS_OK) {
    /* Data files go to <location>/data (a catalog made the folder, maybe not data/). */
    char *data = hs_store_join(t->root, "data");
    st = data != NULL ? hs_store_mkdirs(data, err)
                      : hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
    hs_free(data);
  }
  hs_arena_reset(&a);
  if (st != HS_OK) {
    hs_table_free(t);
    return st;
  }
  t->catalog = &rest_ops;
  t->catalog_ctx = ctx;
  ctx->fresh_ns = hs_now_ns();
  *out = t;
  return HS_OK;
}

static hs_status rest_open(const char *uri, hs_table **out, hs_error *err) {
  *out = NULL;
  const char *ident = NULL;
  rest_table *ctx = NULL;
  hs_status st = open_ctx(uri, &ident, &ctx, err);
  if (st != HS_OK) return st;
  hs_rest_catalog *cat = ctx->cat;
  hs_buf path, body;
  hs_buf_init(&path);
  hs_buf_init(&body);
  long status = 0;
  if (!table_path(&path, ctx->ns, ctx->name))
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
  if (st == HS_OK)
    st = hs_rest_call(cat, "GET", (const char *)path.data, true, NULL, 0, ctx->what_load, true,
                      &body, &status, err);
  if (st == HS_OK && status != 200) st = hs_rest_fail(cat, ctx->what_load, status, &body, err);
  if (st == HS_OK) st = table_from_answer(uri, &body, ctx, out, err);
  if (st != HS_OK) rest_table_free(ctx);
  hs_buf_free(&path);
  hs_buf_free(&body);
  return st;
}

/* The create request: name, schema, spec, order and properties of the
 * table layer's version 1 (hs_table_initial_metadata), as our metadata
 * writer spells them. */
static hs_status create_body(const char *uri, const char *name, const hs_iceberg_metadata *m,
                             hs_buf *out, json_t **sent_fields, hs_error *err) {
  hs_buf b;
  hs_buf_init(&b);
  hs_status st = hs_iceberg_metadata_write(m, &b, err);
  json_t *j = st == HS_OK ? json_loadb((const char *)b.data, b.len, 0, NULL) : NULL;
  hs_buf_free(&b);
  if (st != HS_OK) return st;
  if (j == NULL) return hs_error_set(err, HS_ERR_INTERNAL, "%s: create: metadata JSON", uri);
  json_t *schema = json_array_get(json_object_get(j, "schemas"), 0);
  json_t *spec = json_array_get(json_object_get(j, "partition-specs"), 0);
  json_t *order = NULL;
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(j, "sort-orders"), i, e) {
    json_t *id = json_object_get(e, "order-id");
    if (json_is_integer(id) && json_integer_value(id) == m->default_sort_order_id) order = e;
  }
  json_t *props = json_deep_copy(json_object_get(j, "properties"));
  if (props == NULL) props = json_object();
  char fv[8];
  snprintf(fv, sizeof fv, "%d", (int)m->format_version);
  json_object_set_new(props, "format-version", json_string(fv));
  json_t *req = json_pack("{s:s,s:O,s:b}", "name", name, "schema", schema, "stage-create", 0);
  if (req != NULL && spec != NULL) json_object_set(req, "partition-spec", spec);
  if (req != NULL && order != NULL) json_object_set(req, "write-order", order);
  if (req != NULL) json_object_set_new(req, "properties", props);
  char *text = req != NULL ? json_dumps(req, JSON_COMPACT) : NULL;
  if (text == NULL || !hs_buf_append(out, text, strlen(text)))
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
  *sent_fields = json_incref(json_object_get(schema, "fields"));
  free(text);
  json_decref(req);
  json_decref(j);
  return st;
}

/* Whether the catalog kept our field ids (Iceberg's catalogs assign fresh
 * ids, level by level as we do): the vector dimension properties name
 * fields by id. */
static bool same_fields(const hs_table *t, json_t *sent) {
  hs_buf b;
  hs_buf_init(&b);
  bool same = false;
  if (hs_iceberg_metadata_write(&t->meta, &b, NULL) == HS_OK) {
    json_t *j = json_loadb((const char *)b.data, b.len, 0, NULL);
    json_t *cur = NULL;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(j, "schemas"), i, e) {
      json_t *id = json_object_get(e, "schema-id");
      if (json_is_integer(id) && json_integer_value(id) == t->meta.current_schema_id) cur = e;
    }
    same = cur != NULL && sent != NULL && json_equal(json_object_get(cur, "fields"), sent);
    json_decref(j);
  }
  hs_buf_free(&b);
  return same;
}

static hs_status rest_create(const char *uri, const struct ArrowSchema *schema,
                             const hs_table_options *opts, hs_table **out, hs_error *err) {
  *out = NULL;
  const char *ident = NULL;
  rest_table *ctx = NULL;
  hs_status st = open_ctx(uri, &ident, &ctx, err);
  if (st != HS_OK) return st;
  hs_rest_catalog *cat = ctx->cat;
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_metadata m;
  hs_buf json, path, body;
  hs_buf_init(&json);
  hs_buf_init(&path);
  hs_buf_init(&body);
  json_t *sent = NULL;
  char what[600];
  snprintf(what, sizeof what, "create table %s", ident);
  st = hs_table_initial_metadata(uri, schema, opts, &a, &m, err);
  if (st == HS_OK) {
    m.location = "(catalog)"; /* the catalog chooses it */
    st = create_body(uri, ctx->name, &m, &json, &sent, err);
  }
  if (st == HS_OK &&
      !(hs_buf_printf(&path, "namespaces/") && hs_rest_encode_namespace(&path, ctx->ns) &&
        hs_buf_printf(&path, "/tables") && hs_buf_append_byte(&path, 0)))
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
  long status = 0;
  if (st == HS_OK)
    st = hs_rest_call(cat, "POST", (const char *)path.data, true, (const char *)json.data, json.len,
                      what, false, &body, &status, err);
  if (st == HS_OK && status != 200) st = hs_rest_fail(cat, what, status, &body, err);
  hs_table *t = NULL;
  if (st == HS_OK && (st = table_from_answer(uri, &body, ctx, &t, err)) == HS_OK) ctx = NULL;
  if (st == HS_OK && !same_fields(t, sent)) {
    bool vectors = false;
    for (size_t i = 0; i < m.n_properties; i++)
      vectors = vectors || strncmp(m.properties[i].key, HS_ICEBERG_VECTOR_DIM_PREFIX,
                                   strlen(HS_ICEBERG_VECTOR_DIM_PREFIX)) == 0;
    if (vectors)
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: the catalog renumbered the schema's field ids, and the vector "
                        "dimension properties name fields by id: the table was created but "
                        "its vector columns are not marked",
                        uri);
  }
  json_decref(sent);
  hs_buf_free(&json);
  hs_buf_free(&path);
  hs_buf_free(&body);
  hs_arena_reset(&a);
  rest_table_free(ctx);
  if (st != HS_OK) {
    hs_table_free(t);
    return st;
  }
  *out = t;
  return HS_OK;
}

const hs_table_catalog_hooks hs_rest_table_hooks = {.open = rest_open, .create = rest_create};
