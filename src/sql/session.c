/*
 * session.c — the public SQL API (hs_sql_* in include/hyperstream.h):
 * relations by name, settings, statements from text to result streams.
 *
 * Relations: registered table folders and in-memory data, then table
 * folders under the session root found by name. A table's columns are
 * read from its current schema at each statement (so schema changes made
 * by others are seen). Relations that are replaced or unregistered stay
 * alive until the session is freed, because streams of earlier statements
 * may still read them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../io/store.h"
#include "../table/lineage.h"
#include "bind.h"
#include "plan_cache.h"

#define REL_IDLE_MAX 4

typedef struct rel_entry {
  char *name;
  char *uri;            /* table folder, or NULL */
  hs_sql_chunk *chunks; /* in-memory */
  size_t n_chunks;
  /* columns (for tables: refreshed per statement into `A`) */
  hs_arena arena;
  hs_sql_rel rel;
  /* Tables: the columns of schema `cols_key` - 1 (schema id and format
   * version; 0: none yet), in `arena`, so that a statement on an unchanged
   * schema copies them instead of converting the schema again; under `mu`. */
  int64_t cols_key;
  hs_sql_rel cols;
  bool retired;
  /* Table handles no statement uses now, kept open for the next (which
   * refreshes one: a stat or two when nothing changed, and the handle's
   * caches — plan, registry, open files — stay warm). `mu` guards them:
   * statements end on the threads that free their streams. */
  pthread_mutex_t mu;
  hs_table *idle[REL_IDLE_MAX];
  size_t n_idle;
} rel_entry;

struct hs_sql_session {
  char *root;
  rel_entry **rels;
  size_t n_rels, cap_rels;
  hs_sql_setting *settings;
  size_t n_settings, cap_settings;
  volatile int cancel;
  int64_t memory_limit;
  hs_sql_parse_cache *parse_cache; /* SELECT parse trees by text (parse_cache.c), or NULL */
  hs_sql_plan_cache *plan_cache;   /* SELECT plans by text and parameter types, or NULL */
  uint64_t rels_gen;               /* bumped when a name may mean another relation (under mu) */
  pthread_mutex_t mu;
};

static void rel_free(rel_entry *r) {
  if (r == NULL) return;
  for (size_t i = 0; i < r->n_chunks; i++) hs_sql_chunk_release(&r->chunks[i]);
  hs_free(r->chunks);
  hs_arena_reset(&r->arena);
  for (size_t i = 0; i < r->n_idle; i++) hs_table_free(r->idle[i]);
  pthread_mutex_destroy(&r->mu);
  hs_free(r->name);
  hs_free(r->uri);
  hs_free(r);
}

hs_status hs_sql_session_new(const char *root, hs_sql_session **out, hs_error *err) {
  *out = NULL;
  hs_sql_session *s = hs_calloc(1, sizeof(*s));
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  pthread_mutex_init(&s->mu, NULL);
  s->parse_cache = hs_sql_parse_cache_new(); /* NULL (off, or no memory): parse every time */
  s->plan_cache = hs_sql_plan_cache_new();   /* NULL (off, or no memory): bind every time */
  if (root != NULL) {
    struct stat sb;
    /* an object-store root (s3://bucket/prefix) has no folders to check:
     * its tables are found by listing their metadata/ below */
    if (!hs_store_is_remote(root) && (stat(root, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
      hs_sql_session_free(s);
      return hs_error_set(err, HS_ERR_NOT_FOUND, "sql: session root %s is not a folder", root);
    }
    s->root = hs_strdup(root);
    if (s->root == NULL) {
      hs_sql_session_free(s);
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    }
  }
  *out = s;
  return HS_OK;
}

void hs_sql_session_free(hs_sql_session *s) {
  if (s == NULL) return;
  hs_sql_plan_cache_free(s->plan_cache); /* before the relations its plans point into */
  for (size_t i = 0; i < s->n_rels; i++) rel_free(s->rels[i]);
  hs_free(s->rels);
  for (size_t i = 0; i < s->n_settings; i++) {
    hs_free((char *)s->settings[i].name);
    hs_free((char *)s->settings[i].value);
  }
  hs_free(s->settings);
  hs_free(s->root);
  hs_sql_parse_cache_free(s->parse_cache);
  pthread_mutex_destroy(&s->mu);
  hs_free(s);
}

const char *hs_sql_session_root(const hs_sql_session *s) {
  return s->root;
}

void hs_sql_cancel(hs_sql_session *s) {
  if (s != NULL) __atomic_store_n(&s->cancel, 1, __ATOMIC_RELAXED);
}

void hs_sql_set_memory_limit(hs_sql_session *s, int64_t bytes) {
  if (s != NULL) s->memory_limit = bytes > 0 ? bytes : 0;
}

static bool valid_name(const char *name) {
  if (name == NULL || name[0] == '\0' || strlen(name) > 255) return false;
  for (const char *p = name; *p; p++)
    if (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20) return false;
  return strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

static hs_status add_rel(hs_sql_session *s, rel_entry *r, hs_error *err) {
  for (size_t i = 0; i < s->n_rels; i++)
    if (!s->rels[i]->retired && strcmp(s->rels[i]->name, r->name) == 0) s->rels[i]->retired = true;
  s->rels_gen++; /* (under s->mu) */
  if (s->n_rels == s->cap_rels) {
    size_t nc = s->cap_rels ? s->cap_rels * 2 : 8;
    rel_entry **g = hs_realloc(s->rels, nc * sizeof(*g));
    if (g == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    s->rels = g, s->cap_rels = nc;
  }
  s->rels[s->n_rels++] = r;
  return HS_OK;
}

static rel_entry *rel_new(const char *name) {
  rel_entry *r = hs_calloc(1, sizeof(*r));
  if (r == NULL) return NULL;
  hs_arena_init(&r->arena);
  pthread_mutex_init(&r->mu, NULL);
  r->name = hs_strdup(name);
  if (r->name == NULL) {
    pthread_mutex_destroy(&r->mu);
    hs_free(r);
    return NULL;
  }
  return r;
}

/* Fill r->rel's columns from an Arrow struct schema (columns SQL cannot
 * read are left out). */
static hs_status rel_columns(rel_entry *r, hs_arena *A, hs_sql_rel *rel,
                             const struct ArrowSchema *schema, int32_t **kept, hs_error *err) {
  int64_t n = schema->n_children;
  hs_sql_type *types = hs_arena_alloc(A, sizeof(*types) * (size_t)(n + 1));
  const char **names = hs_arena_alloc(A, sizeof(*names) * (size_t)(n + 1));
  int32_t *idx = hs_arena_alloc(A, sizeof(*idx) * (size_t)(n + 1));
  if (types == NULL || names == NULL || idx == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  int32_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    const struct ArrowSchema *f = schema->children[i];
    char why[160];
    hs_sql_type t;
    if (!hs_sql_type_from_arrow(f, &t, why, sizeof why)) continue;
    names[k] =
        hs_arena_strndup(A, f->name != NULL ? f->name : "", f->name != NULL ? strlen(f->name) : 0);
    if (names[k] == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    types[k] = t;
    idx[k] = (int32_t)i;
    k++;
  }
  memset(rel, 0, sizeof(*rel));
  rel->name = hs_arena_strndup(A, r->name, strlen(r->name));
  rel->uri = r->uri != NULL ? hs_arena_strndup(A, r->uri, strlen(r->uri)) : NULL;
  if (rel->name == NULL || (r->uri != NULL && rel->uri == NULL))
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  rel->types = types;
  rel->col_names = names;
  rel->n_cols = k;
  if (kept != NULL) *kept = idx;
  return HS_OK;
}

static void rel_give_back(void *owner, hs_table *t) {
  rel_entry *r = owner;
  pthread_mutex_lock(&r->mu);
  if (r->n_idle < REL_IDLE_MAX) {
    r->idle[r->n_idle++] = t;
    t = NULL;
  }
  pthread_mutex_unlock(&r->mu);
  hs_table_free(t);
}

/* A handle on r's table at its latest version: an idle one refreshed, or
 * a new open. */
static hs_status rel_handle(rel_entry *r, hs_table **out, hs_error *err) {
  pthread_mutex_lock(&r->mu);
  hs_table *t = r->n_idle ? r->idle[--r->n_idle] : NULL;
  pthread_mutex_unlock(&r->mu);
  if (t != NULL) {
    hs_error rerr = {0};
    if (hs_table_refresh(t, &rerr) == HS_OK) {
      *out = t;
      return HS_OK;
    }
    hs_table_free(t); /* gone or damaged: a fresh open says why */
  }
  return hs_table_open(r->uri, out, err);
}

/* The plan cache's handles (plan_cache.h): a relation of a cached plan
 * came from rel_table_columns, so its owner is its entry. */
static hs_status rel_acquire(const hs_sql_rel *rel, hs_table **out, hs_error *err) {
  return rel_handle(rel->owner, out, err);
}

/* A table relation's current columns, into `rel` (built in A). With a
 * statement's context `pc`, rel keeps the handle (given back to r's idle
 * handles when the statement ends, unless an operator takes it);
 * without, it is closed. */
static hs_status rel_table_columns(rel_entry *r, hs_arena *A, hs_sql_plan_ctx *pc, hs_sql_rel *rel,
                                   hs_error *err) {
  hs_table *t = NULL;
  hs_status st = pc != NULL ? rel_handle(r, &t, err) : hs_table_open(r->uri, &t, err);
  if (st != HS_OK) return st;
  int64_t key = ((int64_t)t->meta.current_schema_id << 8 | t->meta.format_version) + 1;
  bool hit = false;
  if (pc != NULL) {
    pthread_mutex_lock(&r->mu);
    if (r->cols_key == key) *rel = r->cols, hit = true;
    pthread_mutex_unlock(&r->mu);
  }
  if (!hit) {
    struct ArrowSchema schema;
    memset(&schema, 0, sizeof schema);
    st = hs_table_schema(t, &schema, err);
    /* v3: the row lineage columns, readable by name (hidden from *) */
    static const char *const lineage[2] = {HS_LINEAGE_ROW_ID, HS_LINEAGE_SEQ};
    int64_t visible = schema.n_children;
    if (st == HS_OK && t->meta.format_version >= 3)
      st = hs_lineage_schema_add(t, lineage, 2, NULL, &schema, err);
    if (pc != NULL && st == HS_OK) { /* into the entry's arena, kept for the next statement */
      pthread_mutex_lock(&r->mu);
      st = rel_columns(r, &r->arena, &r->cols, &schema, NULL, err);
      if (st == HS_OK) {
        r->cols.n_hidden = (int32_t)(schema.n_children - visible);
        r->cols_key = key;
        *rel = r->cols;
      }
      pthread_mutex_unlock(&r->mu);
    } else if (st == HS_OK) {
      st = rel_columns(r, A, rel, &schema, NULL, err);
      if (st == HS_OK) rel->n_hidden = (int32_t)(schema.n_children - visible);
    }
    if (schema.release != NULL) hs_arrow_schema_release(&schema);
  }
  if (st == HS_OK && pc != NULL) {
    rel->table = t;
    rel->give_back = rel_give_back;
    rel->owner = r;
    rel->next_opened = pc->opened;
    pc->opened = rel;
  } else if (pc != NULL) {
    rel_give_back(r, t);
  } else {
    hs_table_free(t);
  }
  return st;
}

hs_status hs_sql_register_table(hs_sql_session *s, const char *name, const char *uri,
                                hs_error *err) {
  if (!valid_name(name))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "sql: '%s' is not a usable relation name",
                        name ? name : "");
  rel_entry *r = rel_new(name);
  if (r == NULL || (r->uri = hs_strdup(uri)) == NULL) {
    rel_free(r);
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  }
  hs_status st = rel_table_columns(r, &r->arena, NULL, &r->rel, err); /* checks it opens */
  if (st != HS_OK) {
    hs_error_prefix(err, "sql: registering %s: ", name);
    rel_free(r);
    return st;
  }
  pthread_mutex_lock(&s->mu);
  st = add_rel(s, r, err);
  pthread_mutex_unlock(&s->mu);
  if (st != HS_OK) rel_free(r);
  return st;
}

hs_status hs_sql_register_stream(hs_sql_session *s, const char *name,
                                 struct ArrowArrayStream *stream, hs_error *err) {
  if (!valid_name(name)) {
    if (stream->release != NULL) stream->release(stream);
    return hs_error_set(err, HS_ERR_INVALID_ARG, "sql: '%s' is not a usable relation name",
                        name ? name : "");
  }
  struct ArrowSchema schema;
  struct ArrowArray *batches = NULL;
  size_t n = 0;
  memset(&schema, 0, sizeof schema);
  hs_status st = hs_arrow_stream_collect(stream, &schema, &batches, &n, err);
  if (stream->release != NULL) stream->release(stream);
  if (st != HS_OK) return st;
  rel_entry *r = rel_new(name);
  int32_t *kept = NULL;
  if (r == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  if (st == HS_OK) st = rel_columns(r, &r->arena, &r->rel, &schema, &kept, err);
  if (st == HS_OK && n > 0 && (r->chunks = hs_calloc(n, sizeof(hs_sql_chunk))) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  size_t i = 0;
  for (; i < n && st == HS_OK; i++) {
    st = hs_arrow_array_validate(&schema, &batches[i], err);
    if (st == HS_OK)
      st = hs_sql_chunk_from_arrow(&schema, &batches[i], kept, r->rel.n_cols, &r->chunks[i], err);
    if (st == HS_OK) r->n_chunks = i + 1;
  }
  for (size_t j = i; j < n; j++)
    if (batches[j].release != NULL) batches[j].release(&batches[j]);
  if (st != HS_OK && i > 0 && batches[i - 1].release != NULL)
    batches[i - 1].release(&batches[i - 1]);
  hs_free(batches);
  hs_arrow_schema_release(&schema);
  if (st == HS_OK) {
    r->rel.chunks = r->chunks;
    r->rel.n_chunks = r->n_chunks;
    pthread_mutex_lock(&s->mu);
    st = add_rel(s, r, err);
    pthread_mutex_unlock(&s->mu);
  }
  if (st != HS_OK) {
    hs_error_prefix(err, "sql: registering %s: ", name);
    rel_free(r);
  }
  return st;
}

hs_status hs_sql_unregister(hs_sql_session *s, const char *name, hs_error *err) {
  pthread_mutex_lock(&s->mu);
  bool found = false;
  for (size_t i = 0; i < s->n_rels; i++)
    if (!s->rels[i]->retired && strcmp(s->rels[i]->name, name) == 0)
      s->rels[i]->retired = true, found = true;
  s->rels_gen++;
  pthread_mutex_unlock(&s->mu);
  if (!found) return hs_error_set(err, HS_ERR_NOT_FOUND, "sql: no relation named %s", name);
  return HS_OK;
}

/* ------------------------------------------------------------ lookup */

static hs_status lookup(void *ud, const char *name, hs_sql_plan_ctx *pc, hs_sql_rel **out,
                        hs_error *err) {
  hs_sql_session *s = ud;
  hs_arena *A = &pc->arena;
  rel_entry *found = NULL;
  pthread_mutex_lock(&s->mu);
  for (size_t i = s->n_rels; i-- > 0 && found == NULL;)
    if (!s->rels[i]->retired && strcmp(s->rels[i]->name, name) == 0) found = s->rels[i];
  for (size_t i = s->n_rels; i-- > 0 && found == NULL;) {
    /* case-insensitive, when unique */
    if (s->rels[i]->retired || strcasecmp(s->rels[i]->name, name) != 0) continue;
    found = s->rels[i];
  }
  pthread_mutex_unlock(&s->mu);
  hs_status st;
  if (found == NULL && s->root != NULL && valid_name(name)) {
    size_t need = strlen(s->root) + strlen(name) + 2;
    char *path = hs_malloc(need);
    if (path == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    snprintf(path, need, "%s/%s", s->root, name);
    struct stat sb;
    char meta[4096];
    snprintf(meta, sizeof meta, "%s/metadata", path);
    bool is_table;
    if (hs_store_is_remote(path)) {
      hs_store_entry *ents = NULL;
      size_t n_ents = 0;
      hs_error lerr = {0};
      st = hs_store_list(meta, false, &ents, &n_ents, &lerr);
      is_table = st == HS_OK && n_ents > 0;
      hs_store_entries_free(ents, n_ents);
      if (st != HS_OK && st != HS_ERR_NOT_FOUND) { /* a store failure is not "no such table" */
        hs_free(path);
        return hs_error_set(err, st, "sql: looking for table '%s': %s", name, lerr.message);
      }
    } else {
      is_table = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && stat(meta, &sb) == 0 &&
                 S_ISDIR(sb.st_mode);
    }
    if (is_table) {
      rel_entry *r = rel_new(name);
      if (r == NULL) {
        hs_free(path);
        return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      }
      r->uri = path;
      path = NULL;
      pthread_mutex_lock(&s->mu);
      st = add_rel(s, r, err);
      pthread_mutex_unlock(&s->mu);
      if (st != HS_OK) {
        rel_free(r);
        return st;
      }
      found = r;
    }
    hs_free(path);
  }
  if (found == NULL) {
    char names[512];
    size_t len = 0;
    names[0] = '\0';
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n_rels && len + 2 < sizeof names; i++) {
      if (s->rels[i]->retired) continue;
      int w = snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", s->rels[i]->name);
      if (w > 0) len += (size_t)w;
      if (len >= sizeof names) len = sizeof names - 1;
    }
    pthread_mutex_unlock(&s->mu);
    return hs_error_set(err, HS_ERR_NOT_FOUND, "relation \"%s\" does not exist%s%s%s", name,
                        len ? " (known: " : "", names, len ? ")" : "");
  }
  hs_sql_rel *rel = hs_arena_alloc(A, sizeof(*rel));
  if (rel == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  if (found->uri != NULL) {
    if ((st = rel_table_columns(found, A, pc, rel, err)) != HS_OK) {
      hs_error_prefix(err, "table %s: ", name);
      return st;
    }
  } else {
    *rel = found->rel; /* in-memory: session-owned and never changed */
  }
  *out = rel;
  return HS_OK;
}

/* ------------------------------------------------------------ settings */

static hs_status set_setting(hs_sql_session *s, const char *name, const char *value,
                             hs_error *err) {
  static const char *known[] = {
      "hnsw.ef_search",         "ivfflat.probes", "memory_limit",    "hnsw.iterative_scan",
      "ivfflat.iterative_scan", "search_path",    "client_encoding", "timezone",
      "statement_timeout"};
  bool ok = false;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) ok |= strcasecmp(known[i], name) == 0;
  if (!ok)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "unrecognized configuration parameter \"%s\" (known: hnsw.ef_search, "
                        "ivfflat.probes, memory_limit)",
                        name);
  if (strcasecmp(name, "memory_limit") == 0) {
    char *end = NULL;
    double v = strtod(value, &end);
    while (end != NULL && *end == ' ') end++;
    double mul = 1;
    if (end != NULL && *end) {
      if (strcasecmp(end, "kb") == 0)
        mul = 1024.0;
      else if (strcasecmp(end, "mb") == 0)
        mul = 1024.0 * 1024;
      else if (strcasecmp(end, "gb") == 0)
        mul = 1024.0 * 1024 * 1024;
      else if (strcasecmp(end, "tb") == 0)
        mul = 1024.0 * 1024 * 1024 * 1024;
      else if (strcasecmp(end, "b") != 0)
        return hs_error_set(err, HS_ERR_INVALID_ARG, "memory_limit: '%s' is not a size like '8GB'",
                            value);
    }
    if (!(v > 0) || v * mul > 9e18)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "memory_limit: '%s' is not a positive size",
                          value);
    s->memory_limit = (int64_t)(v * mul);
  }
  if (strcasecmp(name, "hnsw.ef_search") == 0 || strcasecmp(name, "ivfflat.probes") == 0) {
    char *end = NULL;
    long long v = strtoll(value, &end, 10);
    if (end == value || *end != '\0' || v < 1 || v > 100000)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "%s must be an integer between 1 and 100000, not '%s'", name, value);
  }
  for (size_t i = 0; i < s->n_settings; i++) {
    if (strcasecmp(s->settings[i].name, name) == 0) {
      char *v = hs_strdup(value);
      if (v == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      hs_free((char *)s->settings[i].value);
      s->settings[i].value = v;
      return HS_OK;
    }
  }
  if (s->n_settings == s->cap_settings) {
    size_t nc = s->cap_settings ? s->cap_settings * 2 : 8;
    hs_sql_setting *g = hs_realloc(s->settings, nc * sizeof(*g));
    if (g == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    s->settings = g, s->cap_settings = nc;
  }
  char *n = hs_strdup(name), *v = hs_strdup(value);
  if (n == NULL || v == NULL) {
    hs_free(n);
    hs_free(v);
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  }
  for (char *p = n; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
  s->settings[s->n_settings].name = n;
  s->settings[s->n_settings].value = v;
  s->n_settings++;
  return HS_OK;
}

/* --------------------------------------------------------- parameters */

static hs_status param_values(const struct ArrowSchema *schema, const struct ArrowArray *array,
                              hs_arena *arena, hs_sql_value **out, int32_t *n_out, hs_error *err) {
  *out = NULL;
  *n_out = 0;
  if (schema == NULL || array == NULL) return HS_OK;
  if (strcmp(schema->format, "+s") != 0 || array->length != 1 ||
      schema->n_children != array->n_children || schema->n_children > 1000)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "sql: parameters must be a struct array of one row");
  hs_status st = hs_arrow_array_validate(schema, array, err);
  if (st != HS_OK) return st;
  int64_t n = schema->n_children;
  hs_sql_value *v = hs_arena_alloc(arena, sizeof(*v) * (size_t)(n + 1));
  if (v == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (int64_t i = 0; i < n; i++) {
    /* import a copy of child i (shallow: the chunk does not own it) through a one-row chunk */
    const struct ArrowSchema *f = schema->children[i];
    const struct ArrowArray *a = array->children[i];
    char why[160];
    hs_sql_type t;
    if (!hs_sql_type_from_arrow(f, &t, why, sizeof why))
      return hs_error_set(err, HS_ERR_INVALID_ARG, "sql: parameter $%lld: %s", (long long)i + 1,
                          why);
    v[i].type = t;
    int64_t row = a->offset + array->offset;
    if (strcmp(f->format, "n") == 0 || !hs_arrow_is_valid(a, array->offset)) {
      v[i].is_null = true;
      continue;
    }
    const char *fmt = f->format;
    const void *buf = a->n_buffers > 1 ? a->buffers[1] : NULL;
    switch (fmt[0]) {
    case 'b': {
      const uint8_t *bits = buf;
      v[i].v.b = (bits[row >> 3] >> (row & 7)) & 1;
      break;
    }
    case 'c': v[i].v.i32 = ((const int8_t *)buf)[row]; break;
    case 'C': v[i].v.i32 = ((const uint8_t *)buf)[row]; break;
    case 's': v[i].v.i32 = ((const int16_t *)buf)[row]; break;
    case 'S': v[i].v.i32 = ((const uint16_t *)buf)[row]; break;
    case 'i': v[i].v.i32 = ((const int32_t *)buf)[row]; break;
    case 'I': v[i].v.i64 = ((const uint32_t *)buf)[row]; break;
    case 'l': v[i].v.i64 = ((const int64_t *)buf)[row]; break;
    case 'f': v[i].v.f64 = ((const float *)buf)[row]; break;
    case 'g': v[i].v.f64 = ((const double *)buf)[row]; break;
    case 'd': /* decimal128 (type_from_arrow accepted its precision and scale) */
      if (strchr(fmt, ',') != NULL &&
          (strchr(strchr(fmt, ',') + 1, ',') == NULL || strstr(fmt, ",128") != NULL)) {
        memcpy(&v[i].v.dec, (const uint8_t *)buf + 16 * row, 16);
        break;
      }
      goto unsupported;
    case 't':
      if (strcmp(fmt, "tdD") == 0) { /* date32: days, as DATE */
        v[i].v.i32 = ((const int32_t *)buf)[row];
        break;
      }
      if (strncmp(fmt, "tsu:", 4) == 0) { /* timestamp[us]: TIMESTAMP / TIMESTAMPTZ */
        v[i].v.i64 = ((const int64_t *)buf)[row];
        break;
      }
      goto unsupported;
    case 'U':
    case 'Z': { /* large strings */
      const int64_t *off = buf;
      const char *data = a->n_buffers > 2 ? a->buffers[2] : "";
      int64_t s0 = off[row], s1 = off[row + 1];
      if (s1 - s0 > UINT32_MAX - 1)
        return hs_error_set(err, HS_ERR_INVALID_ARG, "sql: parameter $%lld is too long",
                            (long long)i + 1);
      char *p = hs_arena_alloc(arena, (size_t)(s1 - s0) + 1); /* NUL-terminated copy */
      if (p == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      memcpy(p, data + s0, (size_t)(s1 - s0));
      p[s1 - s0] = '\0';
      v[i].v.s.ptr = p;
      v[i].v.s.len = (uint32_t)(s1 - s0);
      break;
    }
    case 'u':
    case 'z': {
      const int32_t *off = buf;
      const char *data = a->n_buffers > 2 ? a->buffers[2] : "";
      int32_t s0 = off[row], s1 = off[row + 1];
      char *p = hs_arena_alloc(arena, (size_t)(s1 - s0) + 1); /* NUL-terminated copy */
      if (p == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      memcpy(p, data + s0, (size_t)(s1 - s0));
      p[s1 - s0] = '\0';
      v[i].v.s.ptr = p;
      v[i].v.s.len = (uint32_t)(s1 - s0);
      break;
    }
    case '+':
      if (fmt[1] == 'w' && f->n_children == 1 && strcmp(f->children[0]->format, "f") == 0) {
        int32_t dim = t.a;
        const struct ArrowArray *c = a->children[0];
        const float *fl = (const float *)c->buffers[1] + c->offset + row * dim;
        float *p = hs_arena_memdup(arena, fl, sizeof(float) * (size_t)dim);
        if (p == NULL && dim > 0) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
        v[i].v.vec = p;
        break;
      }
      goto unsupported;
    default:
    unsupported:
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "sql: parameter $%lld has type '%s', not supported yet", (long long)i + 1,
                          fmt);
    }
  }
  *out = v;
  *n_out = (int32_t)n;
  return HS_OK;
}

/* ------------------------------------------------------------ results */

/* A stream of one TEXT column `name` with the lines of `text`. */
hs_status hs_sql_text_stream(const char *name, const char *text, struct ArrowArrayStream *out,
                             hs_error *err) {
  int64_t n = 0;
  for (const char *p = text; *p; p++) n += *p == '\n';
  if (text[0] && text[strlen(text) - 1] != '\n') n++;
  hs_sql_chunk c = {0};
  hs_sql_type t = hs_sql_type_of(HS_SQL_TEXT);
  hs_status st = hs_sql_chunk_init(&c, 1, n, err);
  if (st == HS_OK) st = hs_sql_vec_alloc(&c.cols[0], t, n, false, err);
  char *bytes = st == HS_OK ? hs_sql_vec_add_bytes(&c.cols[0], strlen(text) + 1, err) : NULL;
  if (st == HS_OK && bytes == NULL) st = HS_ERR_NOMEM;
  if (st == HS_OK) {
    memcpy(bytes, text, strlen(text) + 1);
    hs_sql_str *s = hs_sql_vec_mut_data(&c.cols[0]);
    const char *p = bytes;
    for (int64_t i = 0; i < n; i++) {
      const char *e = strchr(p, '\n');
      size_t len = e != NULL ? (size_t)(e - p) : strlen(p);
      s[i].ptr = p;
      s[i].len = (uint32_t)len;
      p += len + (e != NULL);
    }
  }
  struct ArrowSchema schema;
  struct ArrowArray batch;
  memset(&schema, 0, sizeof schema);
  memset(&batch, 0, sizeof batch);
  const char *names[1] = {name};
  if (st == HS_OK) st = hs_sql_schema_to_arrow(&t, names, 1, &schema, err);
  if (st == HS_OK && n > 0) st = hs_sql_chunk_to_arrow(&c, &batch, err);
  hs_sql_chunk_release(&c);
  if (st != HS_OK) {
    hs_arrow_schema_release(&schema);
    return st;
  }
  return hs_arrow_stream_from_batches(&schema, n > 0 ? &batch : NULL, n > 0 ? 1 : 0, out, err);
}

/* A stream of no columns and no rows. */
static hs_status empty_stream(struct ArrowArrayStream *out, hs_error *err) {
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  hs_status st = hs_sql_schema_to_arrow(NULL, NULL, 0, &schema, err);
  if (st != HS_OK) return st;
  return hs_arrow_stream_from_batches(&schema, NULL, 0, out, err);
}

/* Append the statement line holding `pos` and a caret under it. */
static void add_caret(hs_error *err, const char *sql, int32_t pos) {
  size_t len = strlen(sql);
  if (pos < 1 || (size_t)pos > len + 1) return;
  size_t at = (size_t)pos - 1, start = at, end = at;
  while (start > 0 && sql[start - 1] != '\n') start--;
  while (end < len && sql[end] != '\n') end++;
  size_t cur = strlen(err->message);
  size_t line_len = end - start;
  size_t col = at - start;
  if (line_len > 160) { /* a window around the position */
    size_t from = col > 80 ? col - 80 : 0;
    start += from;
    col -= from;
    line_len = line_len - from > 160 ? 160 : line_len - from;
  }
  int w = snprintf(err->message + cur, sizeof err->message - cur, "\n  %.*s\n  %*s^", (int)line_len,
                   sql + start, (int)col, "");
  (void)w;
}

/* The optimizer's switches in the environment, as the plan cache's key bits. */
static uint64_t env_bits(void) {
  static const char *const names[] = {"HS_SQL_JOIN_ORDER", "HS_SQL_AGG_KEYS"};
  uint64_t bits = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *v = getenv(names[i]);
    if (v != NULL && strcmp(v, "0") == 0) bits |= (uint64_t)1 << i;
  }
  return bits;
}

/* Run query plan `plan` (in `pctx`, which this takes) with parameters
 * pv[0..n_pv): rows into *out, or for EXPLAIN ANALYZE its text. */
static hs_status run_query(hs_sql_session *s, hs_sql_plan_ctx *pctx, hs_sql_plan *plan,
                           const hs_sql_value *pv, int32_t n_pv, struct ArrowArrayStream *out,
                           hs_error *err) {
  hs_arena *A = &pctx->arena;
  /* the statement keeps its own copies of params and settings, so the
   * exec can outlive later SET statements */
  hs_sql_value *params_copy = n_pv ? hs_arena_memdup(A, pv, sizeof(*pv) * (size_t)n_pv) : NULL;
  for (int32_t i = 0; i < n_pv && params_copy != NULL; i++) {
    if (params_copy[i].is_null) continue;
    if (hs_sql_type_is_string(params_copy[i].type.id))
      params_copy[i].v.s.ptr = hs_arena_memdup(A, pv[i].v.s.ptr, pv[i].v.s.len + 1);
    else if (hs_sql_type_is_vector(params_copy[i].type.id))
      params_copy[i].v.vec =
          hs_arena_memdup(A, pv[i].v.vec, sizeof(float) * (size_t)(pv[i].type.a + 1));
  }
  hs_sql_setting *set_copy =
      s->n_settings ? hs_arena_alloc(A, sizeof(*set_copy) * s->n_settings) : NULL;
  for (size_t i = 0; i < s->n_settings && set_copy != NULL; i++) {
    set_copy[i].name = hs_arena_strndup(A, s->settings[i].name, strlen(s->settings[i].name));
    set_copy[i].value = hs_arena_strndup(A, s->settings[i].value, strlen(s->settings[i].value));
  }
  hs_sql_exec_opts o;
  memset(&o, 0, sizeof o);
  o.params = params_copy;
  o.n_params = n_pv;
  o.cancel = &s->cancel;
  o.memory_limit = s->memory_limit;
  o.settings = set_copy;
  o.n_settings = s->n_settings;
  bool analyze = plan->kind == HS_SP_EXPLAIN && plan->explain.analyze;
  hs_sql_exec *x = NULL;
  hs_status st = hs_sql_exec_new(pctx, plan, &o, &x, err); /* the exec owns pctx now */
  if (st != HS_OK) return st;
  if (analyze) {
    st = hs_sql_exec_run(x, err);
    char *text = NULL;
    if (st == HS_OK) st = hs_sql_exec_explain(x, true, &text, err);
    if (st == HS_OK) st = hs_sql_text_stream("QUERY PLAN", text, out, err);
    hs_free(text);
    hs_sql_exec_free(x);
    return st;
  }
  return hs_sql_exec_stream(x, out, err);
}

hs_status hs_sql_execute(hs_sql_session *s, const char *sql,
                         const struct ArrowSchema *params_schema, const struct ArrowArray *params,
                         struct ArrowArrayStream *out, int32_t *error_pos, hs_error *err) {
  memset(out, 0, sizeof(*out));
  if (error_pos != NULL) *error_pos = 0;
  if (sql == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "sql: no statement");
  __atomic_store_n(&s->cancel, 0, __ATOMIC_RELAXED);
  hs_arena parena;
  hs_arena_init(&parena);
  hs_sql_value *pv = NULL;
  int32_t n_pv = 0;
  hs_status st = param_values(params_schema, params, &parena, &pv, &n_pv, err);
  if (st != HS_OK) {
    hs_arena_reset(&parena);
    return st;
  }
  /* a SELECT run before with parameters of the same types: its plan */
  hs_sql_plan_key key;
  memset(&key, 0, sizeof key);
  key.sql = sql;
  key.len = strlen(sql);
  key.params = pv;
  key.n_params = n_pv;
  key.env = s->plan_cache != NULL ? env_bits() : 0;
  pthread_mutex_lock(&s->mu);
  key.gen = s->rels_gen;
  pthread_mutex_unlock(&s->mu);
  hs_sql_plan_ctx *cached = NULL;
  hs_sql_plan *cached_plan = NULL;
  if (hs_sql_plan_cache_get(s->plan_cache, &key, rel_acquire, &cached, &cached_plan)) {
    if (cached_plan->kind == HS_SP_EXPLAIN && !cached_plan->explain.analyze) {
      char *text = NULL;
      st = hs_sql_plan_explain(cached_plan->kids[0], &text, err);
      if (st == HS_OK) st = hs_sql_text_stream("QUERY PLAN", text, out, err);
      hs_free(text);
      hs_sql_plan_ctx_free(cached);
    } else {
      st = run_query(s, cached, cached_plan, pv, n_pv, out, err);
    }
    hs_arena_reset(&parena);
    if (st != HS_OK) {
      if (out->release != NULL) out->release(out);
      hs_error_prefix(err, "sql: ");
    }
    return st;
  }
  hs_sql_bind_opts bo;
  memset(&bo, 0, sizeof bo);
  bo.lookup = lookup;
  bo.lookup_ud = s;
  bo.params = pv;
  bo.n_params = n_pv;
  bo.cancel = &s->cancel;
  bo.settings = s->settings;
  bo.n_settings = s->n_settings;
  bo.memory_limit = s->memory_limit;
  bo.parse_cache = s->parse_cache;
  hs_sql_stmt stmt;
  int32_t pos = 0;
  st = hs_sql_bind(sql, &bo, &stmt, &pos, err);
  if (st != HS_OK) {
    hs_arena_reset(&parena);
    if (error_pos != NULL) *error_pos = pos;
    add_caret(err, sql, pos);
    hs_error_prefix(err, "sql: ");
    return st;
  }
  switch (stmt.kind) {
  case HS_SQL_STMT_SET:
    st = set_setting(s, stmt.set_name, stmt.set_value, err);
    if (st == HS_OK) st = empty_stream(out, err);
    break;
  case HS_SQL_STMT_RESET:
    for (size_t i = 0; i < s->n_settings; i++) {
      if (stmt.set_name == NULL || strcasecmp(s->settings[i].name, stmt.set_name) == 0) {
        hs_free((char *)s->settings[i].name);
        hs_free((char *)s->settings[i].value);
        s->settings[i--] = s->settings[--s->n_settings];
      }
    }
    if (stmt.set_name == NULL || strcasecmp(stmt.set_name, "memory_limit") == 0)
      s->memory_limit = 0;
    st = empty_stream(out, err);
    break;
  case HS_SQL_STMT_QUERY:
  case HS_SQL_STMT_EXPLAIN: {
    /* kept for the next run of this text (binding may have found new
     * relations by name: the generation after it) */
    pthread_mutex_lock(&s->mu);
    key.gen = s->rels_gen;
    pthread_mutex_unlock(&s->mu);
    st = hs_sql_plan_cache_put(s->plan_cache, &key, &stmt.pctx, &stmt.plan, err);
    if (st != HS_OK) break;
    if (stmt.kind == HS_SQL_STMT_EXPLAIN && !stmt.plan->explain.analyze) {
      char *text = NULL;
      st = hs_sql_plan_explain(stmt.plan->kids[0], &text, err);
      if (st == HS_OK) st = hs_sql_text_stream("QUERY PLAN", text, out, err);
      hs_free(text);
      break; /* stmt.pctx (the run's copy, if cached) goes with the statement */
    }
    hs_sql_plan_ctx *pctx = stmt.pctx;
    stmt.pctx = NULL; /* run_query owns it now */
    st = run_query(s, pctx, stmt.plan, pv, n_pv, out, err);
    break;
  }
  case HS_SQL_STMT_OTHER:
    st = hs_sql_session_other(s, &bo, sql, stmt.other, stmt.json, out, &pos, err);
    if (st != HS_OK && error_pos != NULL) *error_pos = pos;
    break;
  }
  hs_sql_stmt_free(&stmt);
  hs_arena_reset(&parena);
  if (st != HS_OK) {
    if (out->release != NULL) out->release(out);
    if (pos > 0) add_caret(err, sql, pos);
    hs_error_prefix(err, "sql: ");
  }
  return st;
}
