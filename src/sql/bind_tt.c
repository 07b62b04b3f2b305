/*
 * bind_tt.c — time travel in FROM, in a form PostgreSQL's grammar parses:
 *
 *   SELECT ... FROM hs_snapshot('docs', 4242) AS d       -- a snapshot id
 *   SELECT ... FROM hs_as_of('docs', '2026-01-01 00:00:00') -- a UTC time
 *   SELECT ... FROM hs_ref('docs', 'v1')                 -- a tag or branch
 *
 * The first argument names a relation (a table); the scan then reads that
 * snapshot. Unknown snapshots, times before the first snapshot and
 * unknown refs are errors naming them.
 */
#include <stdio.h>
#include <string.h>

#include "../query/expr_internal.h"
#include "bind_internal.h"

static hs_status str_arg(hs_sql_binder *b, json_t *arg, const char *fn, int k, const char **out,
                         int64_t *ival, bool want_int) {
  json_t *body;
  const char *t = hs_sql_json_type(arg, &body);
  int32_t pos = hs_sql_json_pos(body);
  if (t == NULL || strcmp(t, "A_Const") != 0)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s: argument %d must be a constant", fn,
                            k);
  json_t *v;
  if (want_int && (v = json_object_get(body, "ival")) != NULL) {
    json_t *iv = json_object_get(v, "ival");
    *ival = iv != NULL ? json_integer_value(iv) : 0;
    return HS_OK;
  }
  if (want_int && (v = json_object_get(body, "fval")) != NULL) {
    const char *f = json_string_value(json_object_get(v, "fval"));
    char *end = NULL;
    long long x = f != NULL ? strtoll(f, &end, 10) : 0;
    if (f == NULL || *end != '\0')
      return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s: argument %d must be an integer", fn,
                              k);
    *ival = x;
    return HS_OK;
  }
  if ((v = json_object_get(body, "sval")) != NULL) {
    *out = json_string_value(json_object_get(v, "sval"));
    if (*out == NULL) *out = "";
    if (!want_int) return HS_OK;
  }
  return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s: argument %d must be %s", fn, k,
                          want_int ? "an integer snapshot id" : "a string");
}

hs_status hs_sql_bind_time_travel(hs_sql_binder *b, json_t *range, json_t *call, int32_t pos,
                                  hs_sql_plan **out, hs_sql_scope *sc) {
  const char *fn = hs_sql_json_last_name(json_object_get(call, "funcname"));
  json_t *args = json_object_get(call, "args");
  if (fn == NULL ||
      (strcmp(fn, "hs_snapshot") != 0 && strcmp(fn, "hs_as_of") != 0 && strcmp(fn, "hs_ref") != 0))
    return hs_sql_bind_fail(b, HS_ERR_UNSUPPORTED, pos,
                            "table function %s is not supported (time travel: hs_snapshot, "
                            "hs_as_of, hs_ref)",
                            fn != NULL ? fn : "?");
  if (json_array_size(args) != 2)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s takes (table, %s)", fn,
                            strcmp(fn, "hs_snapshot") == 0 ? "snapshot id"
                            : strcmp(fn, "hs_as_of") == 0  ? "timestamp"
                                                           : "ref name");
  const char *table = NULL, *second = NULL;
  int64_t id = -1, dummy;
  hs_status st = str_arg(b, json_array_get(args, 0), fn, 1, &table, &dummy, false);
  if (st != HS_OK) return st;
  bool by_id = strcmp(fn, "hs_snapshot") == 0;
  if ((st = str_arg(b, json_array_get(args, 1), fn, 2, &second, &id, by_id)) != HS_OK) return st;
  hs_sql_rel *rel = NULL;
  hs_error lerr = {0};
  if ((st = b->o->lookup(b->o->lookup_ud, table, b->pc, &rel, &lerr)) != HS_OK)
    return hs_sql_bind_fail(b, st, pos, "%s", lerr.message);
  if (rel->uri == NULL)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s: %s is in-memory data, not a table", fn,
                            table);
  if (!by_id) {
    b->pc->no_cache = true; /* the ref or time resolves to a snapshot now */
    hs_table *t = NULL;
    hs_error terr = {0};
    if ((st = hs_table_open(rel->uri, &t, &terr)) != HS_OK)
      return hs_sql_bind_fail(b, st, pos, "%s", terr.message);
    if (strcmp(fn, "hs_ref") == 0) {
      st = hs_table_ref_snapshot(t, second, &id, &terr);
    } else {
      int64_t secs = 0;
      int32_t nanos = 0;
      if (!hs_expr_parse_timestamp(second, strlen(second), &secs, &nanos)) {
        hs_table_free(t);
        return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s: '%s' is not a timestamp", fn,
                                second);
      }
      st = hs_table_snapshot_at(t, secs * 1000 + nanos / 1000000, &id, &terr);
    }
    hs_table_free(t);
    if (st != HS_OK) return hs_sql_bind_fail(b, st, pos, "%s", terr.message);
  }
  if (id < 0)
    return hs_sql_bind_fail(b, HS_ERR_INVALID_ARG, pos, "%s: snapshot ids are positive", fn);
  hs_sql_plan *p = hs_sql_bind_plan(b, HS_SP_SCAN, rel->n_cols);
  if (p == NULL) return HS_ERR_NOMEM;
  p->pos = pos;
  p->scan.rel = rel;
  p->scan.snapshot_id = id;
  p->scan.columns = hs_arena_alloc(b->A, sizeof(char *) * (size_t)(rel->n_cols + 1));
  if (p->scan.columns == NULL) return hs_sql_bind_nomem(b);
  p->scan.n_columns = rel->n_cols;
  json_t *al = json_object_get(range, "alias");
  const char *alias = al != NULL ? json_string_value(json_object_get(al, "aliasname")) : NULL;
  memset(sc, 0, sizeof(*sc));
  for (int32_t i = 0; i < rel->n_cols; i++) {
    p->types[i] = rel->types[i];
    p->names[i] = rel->col_names[i];
    p->scan.columns[i] = rel->col_names[i];
    if ((st = hs_sql_scope_add(b, sc, alias != NULL ? alias : table, rel->col_names[i],
                               rel->types[i])) != HS_OK)
      return st;
    sc->cols[sc->n - 1].hidden = i >= rel->n_cols - rel->n_hidden;
  }
  *out = p;
  return HS_OK;
}
