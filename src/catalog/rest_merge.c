/*
 * rest_merge.c — keeping a concurrent writer's index properties when our
 * commit replaced them (REST catalogs).
 *
 * Our index configuration ("hyperstream.indexes", inline JSON) and index
 * registry ("hyperstream.index-registry", the name of a registry file) are
 * table properties, and the Iceberg REST protocol has no requirement that
 * guards a property: `set-properties` is last-writer-wins. When another
 * writer commits between our load and our commit, a property we set may
 * replace the value that writer had just committed — a lost index
 * registration or configuration. (A folder table cannot lose one: its
 * exclusive publish of v{N+1} refuses a stale base, and the edit is
 * re-applied to the winner.)
 *
 * The catalog's answer shows it: the version before ours in the answer's
 * metadata-log is not the one our change began from. Then we read that
 * version (theirs) and merge three ways — base (what we began from),
 * theirs, ours (what we committed): ours less what theirs removed from
 * base, with theirs' version of what only theirs changed, plus what
 * theirs added that ours lacks — and the caller commits the merge, which
 * checks its own predecessor the same way. Entries are keyed by field id
 * (configuration; the column name when none is recorded) and by index and
 * data file (registry: hs_table_index_registry_merge3).
 */
#include <jansson.h>
#include <string.h>

#include "../common/merge3.h"
#include "../table/timetravel.h"
#include "catalog.h"

#define CONFIG_PROPERTY "hyperstream.indexes"
#define REGISTRY_PROPERTY "hyperstream.index-registry"

static bool same_text(const char *a, const char *b) {
  return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static char *dup_or_null(const char *s) {
  return s ? hs_strdup(s) : NULL;
}

bool hs_rest_base_take(hs_rest_base *b, const hs_table *t, const hs_iceberg_metadata *old,
                       const hs_iceberg_metadata *m) {
  memset(b, 0, sizeof *b);
  const char *ro = hs_iceberg_metadata_property(old, REGISTRY_PROPERTY);
  const char *co = hs_iceberg_metadata_property(old, CONFIG_PROPERTY);
  bool changes = !same_text(ro, hs_iceberg_metadata_property(m, REGISTRY_PROPERTY)) ||
                 !same_text(co, hs_iceberg_metadata_property(m, CONFIG_PROPERTY));
  if (!changes || t->metadata_path == NULL) return false;
  b->path = hs_strdup(t->metadata_path);
  b->reg = dup_or_null(ro);
  b->conf = dup_or_null(co);
  if (b->path == NULL || (ro && b->reg == NULL) || (co && b->conf == NULL)) {
    hs_rest_base_free(b);
    return false; /* out of memory: no repair, as before */
  }
  return true;
}

void hs_rest_base_free(hs_rest_base *b) {
  hs_free(b->path);
  hs_free(b->reg);
  hs_free(b->conf);
  memset(b, 0, sizeof *b);
}

/* A configuration entry's key: its field id, else its column name. */
static bool conf_same_key(json_t *a, json_t *b) {
  json_t *fa = json_object_get(a, "field-id"), *fb = json_object_get(b, "field-id");
  if (json_is_integer(fa) && json_is_integer(fb))
    return json_integer_value(fa) == json_integer_value(fb);
  const char *ca = json_string_value(json_object_get(a, "column"));
  const char *cb = json_string_value(json_object_get(b, "column"));
  return ca != NULL && cb != NULL && strcmp(ca, cb) == 0;
}

static json_t *conf_parse(const char *text) {
  json_t *j = text ? json_loads(text, 0, NULL) : json_array();
  if (j != NULL && !json_is_array(j)) {
    json_decref(j);
    j = NULL;
  }
  return j;
}

typedef struct conf_lists {
  json_t *list[3], *out;
} conf_lists;

static const void *conf_at(void *ctx, int list, size_t i) {
  return json_array_get(((conf_lists *)ctx)->list[list], i);
}

static const void *conf_find(void *ctx, int list, const void *e) {
  json_t *l = ((conf_lists *)ctx)->list[list];
  for (size_t i = 0; i < json_array_size(l); i++)
    if (conf_same_key(json_array_get(l, i), (json_t *)e)) return json_array_get(l, i);
  return NULL;
}

static bool conf_same(void *ctx, const void *a, const void *b) {
  (void)ctx;
  return json_equal((json_t *)a, (json_t *)b);
}

static bool conf_emit(void *ctx, const void *e) {
  return json_array_append(((conf_lists *)ctx)->out, (json_t *)e) == 0;
}

const char *hs_rest_conf_merge3(const char *base, const char *theirs, const char *ours,
                                hs_arena *a) {
  conf_lists c = {{conf_parse(base), conf_parse(theirs), conf_parse(ours)}, json_array()};
  const char *text = NULL;
  if (c.list[0] != NULL && c.list[1] != NULL && c.list[2] != NULL && c.out != NULL) {
    hs_merge3 m = {
        .ctx = &c,
        .n = {json_array_size(c.list[0]), json_array_size(c.list[1]), json_array_size(c.list[2])},
        .at = conf_at,
        .find = conf_find,
        .same = conf_same,
        .emit = conf_emit};
    char *s = hs_merge3_run(&m) == 1 ? json_dumps(c.out, JSON_COMPACT) : NULL;
    if (s != NULL) text = hs_arena_strndup(a, s, strlen(s));
    free(s); /* jansson's allocator */
  }
  for (int k = 0; k < 3; k++) json_decref(c.list[k]);
  json_decref(c.out);
  return text;
}

bool hs_rest_merge_theirs(hs_table *t, const hs_rest_base *base, hs_iceberg_metadata *m2,
                          hs_arena *a) {
  const hs_iceberg_metadata *cur = &t->meta;
  if (cur->n_metadata_log == 0) return false;
  const char *pred =
      hs_table_strip_file_scheme(cur->metadata_log[cur->n_metadata_log - 1].metadata_file);
  if (strcmp(pred, hs_table_strip_file_scheme(base->path)) == 0) return false; /* nobody between */
  hs_iceberg_metadata theirs;
  if (hs_table_metadata_read(pred, a, &theirs, NULL) != HS_OK) return false;
  *m2 = *cur;
  bool need = false, changed = false;
  const char *treg = hs_iceberg_metadata_property(&theirs, REGISTRY_PROPERTY);
  if (!same_text(treg, base->reg) &&
      hs_table_index_registry_merge3(t, base->reg, treg, m2, a, &changed, NULL) == HS_OK)
    need = changed;
  const char *tconf = hs_iceberg_metadata_property(&theirs, CONFIG_PROPERTY);
  if (!same_text(tconf, base->conf)) {
    const char *merged = hs_rest_conf_merge3(base->conf, tconf,
                                             hs_iceberg_metadata_property(cur, CONFIG_PROPERTY), a);
    if (merged != NULL && hs_table_set_property(m2, a, CONFIG_PROPERTY, merged, NULL) == HS_OK)
      need = true;
  }
  return need;
}
