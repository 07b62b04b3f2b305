/*
 * ddl.c — statements that change tables or indexes rather than read them,
 * each mapped onto the table layer's operations:
 *
 *   CREATE TABLE name (col type [NOT NULL], ...)   hs_table_create under the session root
 *       [PARTITION BY LIST|RANGE (...)] [WITH (...)]  partition spec, format, properties
 *                                                     (ddl_table_opts.c)
 *   CREATE TABLE name AS SELECT ...                 create, then append the rows
 *   INSERT INTO t [(cols)] VALUES ... | SELECT ...  one append (one snapshot)
 *       ... ON CONFLICT (k) DO UPDATE | DO NOTHING   a MERGE (ddl_merge.c)
 *   CREATE INDEX [name] ON t [USING m] (col [opclass]) [WITH (...)]
 *       btree (default) -> a "scalar" index (layout chosen from the data),
 *       hash -> "bitmap", hnsw -> "hnsw", ivfflat -> "ivf_hnsw" (lists =
 *       IVF partitions); opclasses vector_l2_ops / vector_ip_ops /
 *       vector_cosine_ops / vector_l1_ops choose the metric; WITH (m,
 *       ef_construction, lists). The index is configured (so later appends
 *       are indexed by the background build) and built now.
 *   DROP INDEX [IF EXISTS] t_col_idx               drop the index of column col of table t
 *   DELETE, ALTER TABLE, ALTER TABLE RENAME COLUMN  ddl_change.c
 *   UPDATE                                          ddl_update.c
 *   MERGE                                           ddl_merge.c
 *
 * Indexes have no names of their own here: an index is the index of its
 * column, and its name is PostgreSQL's default, <table>_<column>_idx.
 * INSERT, CREATE TABLE AS: one row with the int64 column "count".
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "ddl.h"

static const char *jstr(json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}

int32_t hs_sql_ddl_pos(json_t *o) {
  json_t *l = json_object_get(o, "location");
  return json_is_integer(l) && json_integer_value(l) >= 0 ? (int32_t)json_integer_value(l) + 1 : 0;
}

static const char *last_name(json_t *list) {
  size_t n = json_array_size(list);
  if (n == 0) return NULL;
  json_t *s = json_object_get(json_array_get(list, n - 1), "String");
  return s != NULL ? jstr(s, "sval") : NULL;
}

hs_status hs_sql_ddl_count_stream(int64_t n, struct ArrowArrayStream *out, hs_error *err) {
  hs_sql_type t = hs_sql_type_of(HS_SQL_INT64);
  hs_sql_chunk c = {0};
  hs_status st = hs_sql_chunk_init(&c, 1, 1, err);
  if (st == HS_OK) st = hs_sql_vec_alloc(&c.cols[0], t, 1, false, err);
  if (st == HS_OK) ((int64_t *)hs_sql_vec_mut_data(&c.cols[0]))[0] = n;
  struct ArrowSchema schema;
  struct ArrowArray batch;
  memset(&schema, 0, sizeof schema);
  memset(&batch, 0, sizeof batch);
  const char *names[1] = {"count"};
  if (st == HS_OK) st = hs_sql_schema_to_arrow(&t, names, 1, &schema, err);
  if (st == HS_OK) st = hs_sql_chunk_to_arrow(&c, &batch, err);
  hs_sql_chunk_release(&c);
  if (st != HS_OK) {
    hs_arrow_schema_release(&schema);
    return st;
  }
  return hs_arrow_stream_from_batches(&schema, &batch, 1, out, err);
}

hs_status hs_sql_ddl_type_of(json_t *tn, hs_sql_type *out, int32_t *pos, hs_error *err) {
  const char *name = last_name(json_object_get(tn, "names"));
  *pos = hs_sql_ddl_pos(tn);
  if (name == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "at position %d: malformed type", *pos);
  int32_t mods[4];
  int n = 0;
  size_t i;
  json_t *m;
  json_array_foreach(json_object_get(tn, "typmods"), i, m) {
    json_t *c = json_object_get(m, "A_Const");
    json_t *iv = c != NULL ? json_object_get(json_object_get(c, "ival"), "ival") : NULL;
    if (c == NULL || n >= 4)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "at position %d: type modifiers must be integers", *pos);
    int64_t x = iv != NULL ? json_integer_value(iv) : 0;
    if (x < 0 || x > 1000000)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "at position %d: type modifier out of range",
                          *pos);
    mods[n++] = (int32_t)x;
  }
  if (json_array_size(json_object_get(tn, "arrayBounds")) > 0)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "at position %d: array columns are not supported",
                        *pos);
  char why[160] = "";
  if (!hs_sql_type_from_name(name, mods, n, out, why, sizeof why))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "at position %d: %s", *pos,
                        why[0] ? why : "unknown type");
  return HS_OK;
}

static hs_status table_path(hs_sql_session *s, const char *name, int32_t pos, char **out,
                            hs_error *err) {
  const char *root = hs_sql_session_root(s);
  if (root == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "at position %d: CREATE TABLE needs a session with a root folder "
                        "(hdb.connect(\"./lake\") or hyperstream sql --root DIR)",
                        pos);
  for (const char *p = name; *p; p++)
    if (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20 || (p == name && *p == '.'))
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "at position %d: '%s' is not a usable table name", pos, name);
  size_t n = strlen(root) + strlen(name) + 2;
  char *path = hs_malloc(n);
  if (path == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  snprintf(path, n, "%s/%s", root, name);
  *out = path;
  return HS_OK;
}

/* Append `chunks` (columns in table order, already of the table's types)
 * to `t`, whose Arrow schema is `schema`. */
static hs_status append_chunks(hs_table *t, const struct ArrowSchema *schema, hs_sql_chunk *chunks,
                               size_t n, int64_t *rows, hs_error *err) {
  struct ArrowArray *batches = n ? hs_calloc(n, sizeof(*batches)) : NULL;
  if (n > 0 && batches == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  hs_status st = HS_OK;
  size_t made = 0;
  *rows = 0;
  for (; made < n && st == HS_OK; made++) {
    st = hs_sql_chunk_to_arrow(&chunks[made], &batches[made], err);
    *rows += chunks[made].n;
  }
  struct ArrowSchema sc;
  memset(&sc, 0, sizeof sc);
  if (st == HS_OK) st = hs_arrow_schema_copy(schema, &sc, err);
  if (st != HS_OK) {
    hs_arrow_batches_free(batches, made);
    return st;
  }
  struct ArrowArrayStream stream;
  st = hs_arrow_stream_from_batches(&sc, batches, n, &stream, err);
  hs_free(batches);
  if (st != HS_OK) return st;
  return hs_table_append(t, &stream, NULL, err);
}

hs_status hs_sql_ddl_run(const hs_sql_bind_opts *bo, hs_sql_plan *plan, hs_sql_chunk **chunks,
                         size_t *n, hs_sql_exec **x, hs_error *err) {
  hs_sql_exec_opts o;
  memset(&o, 0, sizeof o);
  o.params = bo->params;
  o.n_params = bo->n_params;
  o.cancel = bo->cancel;
  o.memory_limit = bo->memory_limit;
  o.settings = bo->settings;
  o.n_settings = bo->n_settings;
  hs_status st = hs_sql_exec_new(NULL, plan, &o, x, err);
  if (st != HS_OK) return st;
  return hs_sql_exec_collect(*x, chunks, n, err);
}

void hs_sql_ddl_free_chunks(hs_sql_chunk *c, size_t n) {
  for (size_t i = 0; i < n; i++) hs_sql_chunk_release(&c[i]);
  hs_free(c);
}

hs_status hs_sql_ddl_assign(const hs_sql_vec *v, hs_sql_type to, const char *column,
                            hs_sql_vec *out, hs_error *err) {
  if (hs_sql_type_eq(v->type, to)) return hs_sql_vec_share(out, v, err);
  if (v->type.id == HS_SQL_NULLTYPE) return hs_sql_vec_alloc(out, to, v->n, true, err);
  if (!hs_sql_cast_exists(v->type, to)) {
    char a[64], b[64];
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "column \"%s\" is of type %s but expression is of type %s", column,
                        hs_sql_type_name(to, a, sizeof a), hs_sql_type_name(v->type, b, sizeof b));
  }
  return hs_sql_cast_vec(v, to, 0, out, err);
}

/* Make chunk `in` (n_in columns) fit a table of `n_tcols` columns of
 * types `ttypes`: column map[j] of `in` goes to table column j (-1: NULL). */
static hs_status shape_chunk(const hs_sql_chunk *in, const int32_t *map, const hs_sql_type *ttypes,
                             const char *const *tnames, int32_t n_tcols, hs_sql_chunk *out,
                             hs_error *err) {
  hs_status st = hs_sql_chunk_init(out, n_tcols, in->n, err);
  for (int32_t j = 0; j < n_tcols && st == HS_OK; j++) {
    if (map[j] < 0) {
      st = hs_sql_vec_alloc(&out->cols[j], ttypes[j], in->n, true, err);
      continue;
    }
    st = hs_sql_ddl_assign(&in->cols[map[j]], ttypes[j], tnames[j], &out->cols[j], err);
  }
  if (st != HS_OK) hs_sql_chunk_release(out);
  return st;
}

/* The SQL types of a table's Arrow schema (every column must be readable). */
static hs_status table_types(const struct ArrowSchema *schema, hs_arena *A, hs_sql_type **types,
                             const char ***names, hs_error *err) {
  int64_t n = schema->n_children;
  *types = hs_arena_alloc(A, sizeof(hs_sql_type) * (size_t)(n + 1));
  *names = hs_arena_alloc(A, sizeof(char *) * (size_t)(n + 1));
  if (*types == NULL || *names == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (int64_t i = 0; i < n; i++) {
    char why[160];
    if (!hs_sql_type_from_arrow(schema->children[i], &(*types)[i], why, sizeof why))
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "column \"%s\": %s; INSERT cannot write it",
                          schema->children[i]->name, why);
    (*names)[i] = schema->children[i]->name;
  }
  return HS_OK;
}

static hs_status do_insert(hs_sql_session *s, const hs_sql_bind_opts *bo, const char *sql,
                           json_t *body, struct ArrowArrayStream *out, int32_t *pos,
                           hs_error *err) {
  json_t *rel = json_object_get(body, "relation");
  const char *name = jstr(rel, "relname");
  *pos = hs_sql_ddl_pos(rel);
  if (json_object_get(body, "returningList") != NULL)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "at position %d: INSERT ... RETURNING is not supported", *pos);
  hs_sql_plan_ctx *pctx = hs_calloc(1, sizeof(*pctx));
  if (pctx == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  hs_arena_init(&pctx->arena);
  hs_sql_rel *r = NULL;
  hs_status st = bo->lookup(bo->lookup_ud, name != NULL ? name : "", pctx, &r, err);
  hs_table *t = NULL;
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  hs_sql_type *ttypes = NULL;
  const char **tnames = NULL;
  if (st == HS_OK && r->uri == NULL)
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "at position %d: %s is in-memory data; INSERT writes tables", *pos, name);
  if (st == HS_OK) st = hs_sql_rel_open(r, &t, err);
  if (st == HS_OK) st = hs_table_schema(t, &schema, err);
  if (st == HS_OK) st = table_types(&schema, &pctx->arena, &ttypes, &tnames, err);
  int32_t n_tcols = (int32_t)schema.n_children;
  int32_t *map =
      st == HS_OK ? hs_arena_alloc(&pctx->arena, sizeof(int32_t) * (size_t)(n_tcols + 1)) : NULL;
  if (st == HS_OK && map == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  json_t *cols = json_object_get(body, "cols");
  int32_t n_given = cols != NULL ? (int32_t)json_array_size(cols) : n_tcols;
  if (st == HS_OK) {
    for (int32_t j = 0; j < n_tcols; j++) map[j] = cols != NULL ? -1 : j;
    for (int32_t k = 0; cols != NULL && k < n_given && st == HS_OK; k++) {
      json_t *rt = json_object_get(json_array_get(cols, (size_t)k), "ResTarget");
      const char *cn = jstr(rt, "name");
      int32_t j = -1;
      for (int32_t c = 0; c < n_tcols && cn != NULL; c++)
        if (strcmp(tnames[c], cn) == 0) j = c;
      if (j < 0) {
        *pos = hs_sql_ddl_pos(rt);
        st = hs_error_set(err, HS_ERR_INVALID_ARG,
                          "at position %d: column \"%s\" of relation \"%s\" does not exist", *pos,
                          cn != NULL ? cn : "?", name);
      } else if (map[j] >= 0) {
        *pos = hs_sql_ddl_pos(rt);
        st = hs_error_set(err, HS_ERR_INVALID_ARG,
                          "at position %d: column \"%s\" specified more than once", *pos, cn);
      } else {
        map[j] = k;
      }
    }
  }
  if (st == HS_OK && json_object_get(body, "onConflictClause") != NULL) { /* a MERGE */
    hs_sql_rel_close(r, t);
    t = NULL;
    st = hs_sql_ddl_insert_on_conflict(bo, sql, body, tnames, ttypes, (size_t)n_tcols, out, pos,
                                       err);
    hs_arrow_schema_release(&schema);
    hs_sql_plan_ctx_free(pctx);
    return st;
  }
  hs_sql_plan *plan = NULL;
  json_t *sel = json_object_get(body, "selectStmt");
  if (st == HS_OK && sel == NULL)
    st = hs_error_set(err, HS_ERR_UNSUPPORTED, "INSERT ... DEFAULT VALUES is not supported");
  if (st == HS_OK) {
    *pos = 0;
    st = hs_sql_bind_query_node(sql, sel, bo, pctx, &plan, pos, err);
  }
  if (st == HS_OK && plan->n_cols != n_given)
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "INSERT has %s expressions than target columns (%d vs %d)",
                      plan->n_cols > n_given ? "more" : "fewer", plan->n_cols, n_given);
  hs_sql_exec *x = NULL;
  hs_sql_chunk *chunks = NULL, *shaped = NULL;
  size_t n = 0;
  if (st == HS_OK) st = hs_sql_ddl_run(bo, plan, &chunks, &n, &x, err);
  if (st == HS_OK && n > 0 && (shaped = hs_calloc(n, sizeof(*shaped))) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  size_t made = 0;
  for (; made < n && st == HS_OK; made++)
    st = shape_chunk(&chunks[made], map, ttypes, tnames, n_tcols, &shaped[made], err);
  if (st != HS_OK && made > 0) made--; /* the failed one was released by shape_chunk */
  int64_t rows = 0;
  if (st == HS_OK) st = append_chunks(t, &schema, shaped, n, &rows, err);
  hs_sql_ddl_free_chunks(shaped, made);
  hs_sql_ddl_free_chunks(chunks, n);
  hs_sql_exec_free(x);
  hs_arrow_schema_release(&schema);
  hs_sql_rel_close(r, t);
  hs_sql_plan_ctx_free(pctx);
  if (st != HS_OK) {
    if (*pos == 0) *pos = hs_sql_ddl_pos(rel);
    return st;
  }
  (void)s;
  return hs_sql_ddl_count_stream(rows, out, err);
}

static hs_status do_create_table(hs_sql_session *s, json_t *body, struct ArrowArrayStream *out,
                                 int32_t *pos, hs_error *err) {
  json_t *rel = json_object_get(body, "relation");
  const char *name = jstr(rel, "relname");
  *pos = hs_sql_ddl_pos(rel);
  if (name == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "CREATE TABLE needs a name");
  json_t *elts = json_object_get(body, "tableElts");
  size_t n = json_array_size(elts);
  if (n == 0 || n > 10000)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "at position %d: CREATE TABLE needs columns",
                        *pos);
  if (json_object_get(body, "inhRelations") != NULL)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "at position %d: INHERITS is not supported", *pos);
  hs_arena A;
  hs_arena_init(&A);
  hs_table_options topts;
  int32_t opos = 0;
  hs_status ost = hs_sql_ddl_table_options(body, &A, &topts, &opos, err);
  if (ost != HS_OK) {
    hs_arena_reset(&A);
    if (opos > 0) *pos = opos;
    return ost;
  }
  hs_sql_type *types = hs_arena_alloc(&A, sizeof(*types) * n);
  const char **names = hs_arena_alloc(&A, sizeof(*names) * n);
  bool *notnull = hs_arena_alloc(&A, sizeof(bool) * n);
  hs_status st =
      types && names && notnull ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < n && st == HS_OK; i++) {
    json_t *cd = json_object_get(json_array_get(elts, i), "ColumnDef");
    if (cd == NULL) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "table constraints are not supported (only columns)");
      break;
    }
    names[i] = jstr(cd, "colname");
    for (size_t k = 0; k < i && st == HS_OK; k++)
      if (names[i] != NULL && strcmp(names[k], names[i]) == 0) {
        *pos = hs_sql_ddl_pos(cd);
        st = hs_error_set(err, HS_ERR_INVALID_ARG,
                          "at position %d: column \"%s\" specified more than once", *pos, names[i]);
      }
    if (st == HS_OK) st = hs_sql_ddl_type_of(json_object_get(cd, "typeName"), &types[i], pos, err);
    size_t ci;
    json_t *c;
    json_array_foreach(json_object_get(cd, "constraints"), ci, c) {
      const char *ct = jstr(json_object_get(c, "Constraint"), "contype");
      if (ct != NULL && strcmp(ct, "CONSTR_NOTNULL") == 0)
        notnull[i] = true;
      else if (ct != NULL && strcmp(ct, "CONSTR_NULL") == 0)
        notnull[i] = false;
      else if (ct != NULL && strcmp(ct, "CONSTR_PRIMARY") == 0)
        notnull[i] = true; /* not enforced as unique */
    }
  }
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  if (st == HS_OK) st = hs_sql_schema_to_arrow(types, names, (int32_t)n, &schema, err);
  for (size_t i = 0; i < n && st == HS_OK; i++)
    if (notnull[i]) schema.children[i]->flags &= ~ARROW_FLAG_NULLABLE;
  char *path = NULL;
  hs_table *t = NULL;
  if (st == HS_OK) st = table_path(s, name, *pos, &path, err);
  if (st == HS_OK) st = hs_table_create(path, &schema, &topts, &t, err);
  hs_table_free(t);
  hs_free(path);
  hs_arrow_schema_release(&schema);
  hs_arena_reset(&A);
  if (st != HS_OK) return st;
  return hs_sql_ddl_count_stream(0, out, err);
}

static hs_status do_ctas(hs_sql_session *s, const hs_sql_bind_opts *bo, const char *sql,
                         json_t *body, struct ArrowArrayStream *out, int32_t *pos, hs_error *err) {
  json_t *into = json_object_get(body, "into");
  json_t *rel = json_object_get(into, "rel");
  const char *name = jstr(rel, "relname");
  *pos = hs_sql_ddl_pos(rel);
  if (name == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "CREATE TABLE AS needs a name");
  hs_sql_plan_ctx *pctx = hs_calloc(1, sizeof(*pctx));
  if (pctx == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  hs_arena_init(&pctx->arena);
  hs_sql_plan *plan = NULL;
  int32_t qpos = 0;
  hs_status st =
      hs_sql_bind_query_node(sql, json_object_get(body, "query"), bo, pctx, &plan, &qpos, err);
  if (st != HS_OK) *pos = qpos;
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  hs_sql_type *types = NULL;
  if (st == HS_OK) {
    types = hs_arena_alloc(&pctx->arena, sizeof(*types) * (size_t)(plan->n_cols + 1));
    if (types == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    for (int32_t i = 0; i < plan->n_cols && st == HS_OK; i++)
      types[i] =
          plan->types[i].id == HS_SQL_NULLTYPE ? hs_sql_type_of(HS_SQL_TEXT) : plan->types[i];
  }
  if (st == HS_OK) st = hs_sql_schema_to_arrow(types, plan->names, plan->n_cols, &schema, err);
  char *path = NULL;
  hs_table *t = NULL;
  if (st == HS_OK) st = table_path(s, name, *pos, &path, err);
  hs_sql_exec *x = NULL;
  hs_sql_chunk *chunks = NULL, *shaped = NULL;
  size_t n = 0;
  if (st == HS_OK) st = hs_sql_ddl_run(bo, plan, &chunks, &n, &x, err);
  if (st == HS_OK) st = hs_table_create(path, &schema, NULL, &t, err);
  int32_t *map = st == HS_OK
                     ? hs_arena_alloc(&pctx->arena, sizeof(int32_t) * (size_t)(plan->n_cols + 1))
                     : NULL;
  if (st == HS_OK && map == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (int32_t i = 0; st == HS_OK && i < plan->n_cols; i++) map[i] = i;
  if (st == HS_OK && n > 0 && (shaped = hs_calloc(n, sizeof(*shaped))) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  size_t made = 0;
  for (; made < n && st == HS_OK; made++)
    st = shape_chunk(&chunks[made], map, types, plan->names, plan->n_cols, &shaped[made], err);
  if (st != HS_OK && made > 0) made--;
  int64_t rows = 0;
  if (st == HS_OK && n > 0) st = append_chunks(t, &schema, shaped, n, &rows, err);
  hs_sql_ddl_free_chunks(shaped, made);
  hs_sql_ddl_free_chunks(chunks, n);
  hs_sql_exec_free(x);
  hs_table_free(t);
  hs_free(path);
  hs_arrow_schema_release(&schema);
  hs_sql_plan_ctx_free(pctx);
  if (st != HS_OK) return st;
  return hs_sql_ddl_count_stream(rows, out, err);
}

static const char *metric_of(const char *opclass) {
  if (opclass == NULL) return "l2";
  if (strstr(opclass, "cosine") != NULL) return "cosine";
  if (strstr(opclass, "_ip_") != NULL) return "ip";
  if (strstr(opclass, "l1") != NULL) return "l1";
  if (strstr(opclass, "l2") != NULL) return "l2";
  return NULL;
}

static hs_status do_create_index(hs_sql_session *s, const hs_sql_bind_opts *bo, json_t *body,
                                 struct ArrowArrayStream *out, int32_t *pos, hs_error *err) {
  (void)s;
  json_t *rel = json_object_get(body, "relation");
  const char *name = jstr(rel, "relname");
  *pos = hs_sql_ddl_pos(rel);
  const char *method = jstr(body, "accessMethod");
  json_t *params = json_object_get(body, "indexParams");
  if (json_array_size(params) != 1)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "at position %d: indexes are on one column", *pos);
  if (json_object_get(body, "whereClause") != NULL)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "at position %d: partial indexes are not supported", *pos);
  json_t *ie = json_object_get(json_array_get(params, 0), "IndexElem");
  const char *col = jstr(ie, "name");
  if (col == NULL)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "at position %d: expression indexes are not supported", *pos);
  const char *opclass = last_name(json_object_get(ie, "opclass"));
  bool vector = method != NULL && (strcmp(method, "hnsw") == 0 || strcmp(method, "ivfflat") == 0);
  const char *kind = method == NULL || strcmp(method, "btree") == 0 ? "scalar"
                     : strcmp(method, "hash") == 0                  ? "bitmap"
                     : strcmp(method, "hnsw") == 0                  ? "hnsw"
                     : strcmp(method, "ivfflat") == 0               ? "ivf_hnsw"
                                                                    : NULL;
  if (kind == NULL)
    return hs_error_set(
        err, HS_ERR_UNSUPPORTED,
        "at position %d: index method %s is not supported (btree, hash, hnsw, ivfflat)", *pos,
        method);
  const char *metric = vector ? metric_of(opclass) : NULL;
  if (vector && metric == NULL)
    return hs_error_set(
        err, HS_ERR_INVALID_ARG,
        "at position %d: operator class %s is not supported (vector_l2_ops, vector_ip_ops, "
        "vector_cosine_ops, vector_l1_ops)",
        *pos, opclass);
  hs_vector_index_options vo;
  hs_vector_index_options_init(&vo);
  vo.metric = metric;
  if (vector && strcmp(method, "hnsw") == 0) vo.partitions = 1;
  json_t *pj = json_object();
  if (pj == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  if (metric != NULL) json_object_set_new(pj, "metric", json_string(metric));
  size_t i;
  json_t *d;
  hs_status st = HS_OK;
  json_array_foreach(json_object_get(body, "options"), i, d) {
    json_t *de = json_object_get(d, "DefElem");
    const char *opt = jstr(de, "defname");
    json_t *arg = json_object_get(json_object_get(json_object_get(de, "arg"), "Integer"), "ival");
    int64_t v = json_is_integer(arg) ? json_integer_value(arg) : -1;
    if (opt == NULL || v < 1 || v > 1000000) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG,
                        "at position %d: WITH (%s = ...) needs a positive integer",
                        hs_sql_ddl_pos(de), opt != NULL ? opt : "?");
      break;
    }
    if (vector && strcmp(opt, "m") == 0) {
      vo.m = (uint32_t)v;
      json_object_set_new(pj, "m", json_integer(v));
    } else if (vector && strcmp(opt, "ef_construction") == 0) {
      vo.ef_construction = (uint32_t)v;
      json_object_set_new(pj, "ef_construction", json_integer(v));
    } else if (vector && strcmp(method, "ivfflat") == 0 && strcmp(opt, "lists") == 0) {
      vo.partitions = (uint32_t)v;
      json_object_set_new(pj, "partitions", json_integer(v));
    } else {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "at position %d: unknown index option %s for %s",
                        hs_sql_ddl_pos(de), opt, method != NULL ? method : "btree");
      break;
    }
  }
  char *pjs = st == HS_OK ? json_dumps(pj, JSON_COMPACT) : NULL;
  json_decref(pj);
  if (st != HS_OK) return st;
  hs_sql_rel *r = NULL;
  hs_sql_plan_ctx *pc = hs_calloc(1, sizeof(*pc));
  if (pc == NULL) {
    free(pjs); /* jansson's allocator */
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  }
  hs_arena_init(&pc->arena);
  hs_table *t = NULL;
  st = bo->lookup(bo->lookup_ud, name != NULL ? name : "", pc, &r, err);
  if (st == HS_OK && r->uri == NULL)
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "at position %d: %s is in-memory data; indexes are built on tables", *pos,
                      name);
  if (st == HS_OK) st = hs_sql_rel_open(r, &t, err);
  if (st == HS_OK) st = hs_table_add_index(t, col, kind, vector ? pjs : NULL, err);
  int64_t built = 0;
  if (st == HS_OK && vector) {
    st = hs_table_build_vector_indexes(t, col, &vo, &built, err);
  } else if (st == HS_OK) {
    const char *cols[1] = {col};
    hs_table_index_build_options bopt;
    memset(&bopt, 0, sizeof bopt);
    bopt.columns = cols;
    bopt.n_columns = 1;
    bopt.skip_vector = 1;
    st = hs_table_build_configured_indexes(t, &bopt, &built, err);
  }
  free(pjs);
  hs_sql_rel_close(r, t);
  hs_sql_plan_ctx_free(pc);
  if (st != HS_OK) return st;
  return hs_sql_ddl_count_stream(built, out, err);
}

static hs_status do_drop(hs_sql_session *s, const hs_sql_bind_opts *bo, json_t *body,
                         struct ArrowArrayStream *out, int32_t *pos, hs_error *err) {
  (void)s;
  const char *type = jstr(body, "removeType");
  bool missing_ok = json_is_true(json_object_get(body, "missing_ok"));
  if (type == NULL || strcmp(type, "OBJECT_INDEX") != 0)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "only DROP INDEX is supported (drop a table by removing its folder)");
  json_t *objs = json_object_get(body, "objects");
  if (json_array_size(objs) != 1)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "DROP INDEX one index at a time");
  const char *iname =
      last_name(json_object_get(json_object_get(json_array_get(objs, 0), "List"), "items"));
  if (iname == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "DROP INDEX needs a name");
  /* <table>_<column>_idx: try every split point */
  size_t n = strlen(iname);
  if (n < 6 || strcmp(iname + n - 4, "_idx") != 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "index \"%s\" does not exist; indexes are named <table>_<column>_idx",
                        iname);
  hs_status st = HS_ERR_NOT_FOUND;
  for (size_t cut = 1; cut + 5 < n && st == HS_ERR_NOT_FOUND; cut++) {
    if (iname[cut] != '_') continue;
    char table[256], col[256];
    if (cut >= sizeof table || n - 4 - cut - 1 >= sizeof col) continue;
    memcpy(table, iname, cut);
    table[cut] = '\0';
    memcpy(col, iname + cut + 1, n - 4 - cut - 1);
    col[n - 4 - cut - 1] = '\0';
    hs_sql_plan_ctx *pc = hs_calloc(1, sizeof(*pc));
    if (pc == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    hs_arena_init(&pc->arena);
    hs_sql_rel *r = NULL;
    hs_error lerr = {0};
    if (bo->lookup(bo->lookup_ud, table, pc, &r, &lerr) == HS_OK && r->uri != NULL) {
      hs_table *t = NULL;
      hs_error terr = {0};
      if (hs_sql_rel_open(r, &t, &terr) == HS_OK) {
        hs_status d = hs_table_drop_index(t, col, &terr);
        if (d == HS_OK)
          st = HS_OK;
        else if (d != HS_ERR_NOT_FOUND)
          st = hs_error_set(err, d, "%s", terr.message);
        hs_sql_rel_close(r, t);
      }
    }
    hs_sql_plan_ctx_free(pc);
  }
  if (st == HS_ERR_NOT_FOUND) {
    if (missing_ok) return hs_sql_ddl_count_stream(0, out, err);
    return hs_error_set(err, HS_ERR_NOT_FOUND,
                        "index \"%s\" does not exist (indexes are named <table>_<column>_idx)",
                        iname);
  }
  if (st != HS_OK) return st;
  *pos = 0;
  return hs_sql_ddl_count_stream(1, out, err);
}

hs_status hs_sql_session_other(hs_sql_session *s, const hs_sql_bind_opts *bo, const char *sql,
                               const char *kind, void *json, struct ArrowArrayStream *out,
                               int32_t *pos, hs_error *err) {
  json_t *body = json;
  *pos = 0;
  if (strcmp(kind, "InsertStmt") == 0) return do_insert(s, bo, sql, body, out, pos, err);
  if (strcmp(kind, "CreateStmt") == 0) return do_create_table(s, body, out, pos, err);
  if (strcmp(kind, "CreateTableAsStmt") == 0) return do_ctas(s, bo, sql, body, out, pos, err);
  if (strcmp(kind, "IndexStmt") == 0) return do_create_index(s, bo, body, out, pos, err);
  if (strcmp(kind, "DropStmt") == 0) return do_drop(s, bo, body, out, pos, err);
  if (strcmp(kind, "DeleteStmt") == 0) return hs_sql_ddl_delete(bo, sql, body, out, pos, err);
  if (strcmp(kind, "AlterTableStmt") == 0) return hs_sql_ddl_alter(bo, body, out, pos, err);
  if (strcmp(kind, "RenameStmt") == 0) return hs_sql_ddl_rename(bo, body, out, pos, err);
  if (strcmp(kind, "UpdateStmt") == 0) return hs_sql_ddl_update(bo, sql, body, out, pos, err);
  if (strcmp(kind, "MergeStmt") == 0) return hs_sql_ddl_merge(bo, sql, body, out, pos, err);
  if (strcmp(kind, "ExplainStmt") == 0)
    return hs_sql_ddl_explain_merge(bo, sql, body, out, pos, err);
  static const struct {
    const char *node, *words;
  } names[] = {{"TransactionStmt", "BEGIN/COMMIT (every statement commits on its own)"}};
  const char *words = kind;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i].node, kind) == 0) words = names[i].words;
  return hs_error_set(err, HS_ERR_UNSUPPORTED, "%s statements are not supported yet", words);
}
