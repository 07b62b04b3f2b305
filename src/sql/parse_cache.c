/*
 * parse_cache.c — a session's parse trees by statement text, so a
 * statement run again (a `$n`-parameterized query with new parameters, a
 * dashboard's query) skips libpg_query's parse and the JSON load, about
 * half of a small statement's fixed cost.
 *
 * What is cached is the parse tree only: a pure function of the text. Every
 * run still binds against the tables as they are now (current schema and
 * snapshot) and its own parameters, so a cached entry can never give stale
 * columns or rows. The tree is shared read-only: a statement holds a
 * reference (jansson's counts are atomic) and keeps whatever the binder adds
 * in its own array (hs_sql_bind_keep), never in the tree.
 *
 * HS_PARSE_CACHE_N entries, the least recently used replaced; texts over
 * HS_PARSE_CACHE_MAX_TEXT bytes are not kept. Not thread-safe: the
 * session's (one statement at a time). HS_SQL_PARSE_CACHE=0 turns it off
 * (comparisons, tests).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bind.h"

#define HS_PARSE_CACHE_N 32
#define HS_PARSE_CACHE_MAX_TEXT 65536

typedef struct entry {
  char *sql;
  size_t len;
  uint64_t hash;
  json_t *root;
  uint64_t used; /* the cache's clock at the last hit */
} entry;

struct hs_sql_parse_cache {
  entry e[HS_PARSE_CACHE_N];
  uint64_t clock;
};

static uint64_t text_hash(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return h;
}

hs_sql_parse_cache *hs_sql_parse_cache_new(void) {
  const char *env = getenv("HS_SQL_PARSE_CACHE");
  if (env != NULL && strcmp(env, "0") == 0) return NULL;
  return hs_calloc(1, sizeof(hs_sql_parse_cache));
}

void hs_sql_parse_cache_free(hs_sql_parse_cache *c) {
  if (c == NULL) return;
  for (size_t i = 0; i < HS_PARSE_CACHE_N; i++) {
    hs_free(c->e[i].sql);
    if (c->e[i].root != NULL) json_decref(c->e[i].root);
  }
  hs_free(c);
}

void *hs_sql_parse_cache_get(hs_sql_parse_cache *c, const char *sql, size_t len) {
  if (c == NULL || len > HS_PARSE_CACHE_MAX_TEXT) return NULL;
  uint64_t h = text_hash(sql, len);
  for (size_t i = 0; i < HS_PARSE_CACHE_N; i++) {
    entry *e = &c->e[i];
    if (e->root != NULL && e->hash == h && e->len == len && memcmp(e->sql, sql, len) == 0) {
      e->used = ++c->clock;
      return json_incref(e->root);
    }
  }
  return NULL;
}

void hs_sql_parse_cache_put(hs_sql_parse_cache *c, const char *sql, size_t len, void *root) {
  if (c == NULL || root == NULL || len > HS_PARSE_CACHE_MAX_TEXT) return;
  entry *v = &c->e[0];
  for (size_t i = 0; i < HS_PARSE_CACHE_N; i++) {
    if (c->e[i].root == NULL) {
      v = &c->e[i];
      break;
    }
    if (c->e[i].used < v->used) v = &c->e[i];
  }
  char *copy = hs_malloc(len + 1);
  if (copy == NULL) return; /* not cached: the next run parses again */
  memcpy(copy, sql, len);
  copy[len] = '\0';
  hs_free(v->sql);
  if (v->root != NULL) json_decref(v->root);
  v->sql = copy;
  v->len = len;
  v->hash = text_hash(sql, len);
  v->root = json_incref((json_t *)root);
  v->used = ++c->clock;
}
