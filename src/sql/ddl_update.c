/*
 * ddl_update.c — UPDATE t SET c = expr [, (c2, c3) = (e2, e3)] [WHERE cond]
 * as one row change (hs_table_change_rows), decided on one snapshot:
 *
 *   1. the rows the WHERE matches are read by the table's own filtered scan
 *      (the WHERE text is the scan's filter, and then the change's delete
 *      filter: the same parser and evaluator pick the same rows), with every
 *      column and, in a v3 table, `_row_id`;
 *   2. the SET expressions run in the SQL engine over those rows, seeing the
 *      values from before the update (PostgreSQL's semantics), with the
 *      session's other relations and parameters ($n) available to them:
 *        SELECT e1, e2, ..., __pos FROM __rows AS t ORDER BY __pos
 *      where __rows is the rows read (an in-memory relation; its alias is
 *      the table's name, so `t.c` is the row's column while a subquery's
 *      FROM t reads the whole table) and __pos their order; each result is
 *      assigned to its column's type as INSERT does (hs_sql_ddl_assign);
 *   3. one commit deletes the rows (the filter, at that snapshot) and
 *      appends them with the SET columns replaced — columns not set travel
 *      as the scan read them, whatever their type; a v3 row keeps its
 *      `_row_id` and inherits the new sequence number.
 *   A concurrent commit that conflicts (HS_ERR_CONFLICT) re-runs 1-3 on the
 *   newer snapshot, a few times.
 *
 * One row of int64 "count": rows updated. Refused before anything is
 * written, with the position: RETURNING, WITH, a table alias, SET c =
 * DEFAULT, (a, b) = (SELECT ...), c[1] / c.f targets, a column named twice,
 * parameters in the WHERE. UPDATE ... FROM (a join) runs as a MERGE
 * (ddl_merge.c, hs_sql_ddl_update_from).
 */
#include <stdio.h>
#include <string.h>

#include "../table/lineage.h"
#include "ddl.h"
#include "exec.h"
#include "vec.h"

enum { UPDATE_ATTEMPTS = 6 };

static const char *jstr(json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}

hs_status hs_sql_ddl_set_items(json_t *list, const struct ArrowSchema *ts, const char *table,
                               hs_sql_set_item *items, size_t n, int32_t *pos, hs_error *err) {
  for (size_t i = 0; i < n; i++) {
    json_t *rt = json_object_get(json_array_get(list, i), "ResTarget");
    hs_sql_set_item *it = &items[i];
    it->col = jstr(rt, "name");
    it->val = json_object_get(rt, "val");
    it->pos = *pos = hs_sql_ddl_pos(rt);
    if (it->col == NULL || it->val == NULL)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "at position %d: UPDATE: SET needs a column",
                          *pos);
    if (json_object_get(rt, "indirection") != NULL)
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "at position %d: UPDATE of a part of column \"%s\" (c[i] or c.field) "
                          "is not supported; assign the whole column",
                          *pos, it->col);
    json_t *multi = json_object_get(it->val, "MultiAssignRef");
    if (multi != NULL) {
      json_t *args =
          json_object_get(json_object_get(json_object_get(multi, "source"), "RowExpr"), "args");
      json_int_t k = json_integer_value(json_object_get(multi, "colno"));
      json_int_t want = json_integer_value(json_object_get(multi, "ncolumns"));
      if (args == NULL)
        return hs_error_set(err, HS_ERR_UNSUPPORTED,
                            "at position %d: UPDATE ... SET (a, b) = (SELECT ...) is not "
                            "supported; write one assignment per column",
                            *pos);
      if ((json_int_t)json_array_size(args) != want || k < 1 || k > want)
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "at position %d: number of columns does not match number of values",
                            *pos);
      it->val = json_array_get(args, (size_t)k - 1);
    }
    if (json_object_get(it->val, "SetToDefault") != NULL)
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "at position %d: SET \"%s\" = DEFAULT is not supported (columns have "
                          "no defaults; write NULL or a value)",
                          *pos, it->col);
    it->tcol = -1;
    for (int64_t c = 0; c < ts->n_children && it->tcol < 0; c++)
      if (hs_lineage_of_name(ts->children[c]->name) == HS_LINEAGE_NONE &&
          strcmp(ts->children[c]->name, it->col) == 0)
        it->tcol = (int32_t)c;
    if (it->tcol < 0)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "at position %d: column \"%s\" of relation \"%s\" does not exist", *pos,
                          it->col, table);
    for (size_t j = 0; j < i; j++)
      if (items[j].tcol == it->tcol)
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "at position %d: multiple assignments to same column \"%s\"", *pos,
                            it->col);
  }
  *pos = 0;
  return HS_OK;
}

static json_t *colref(const char *name) {
  return json_pack("{s:{s:[{s:{s:s}}],s:i}}", "ColumnRef", "fields", "String", "sval", name,
                   "location", -1);
}

/* SELECT e1, ..., en, pos FROM rows AS table ORDER BY pos (a SelectStmt
 * node): `rows` is the rows read, under a name of its own, so that the
 * expressions' `table.c` are theirs while a subquery's FROM table reads the
 * whole table, as in PostgreSQL. */
static json_t *set_select(const hs_sql_set_item *items, size_t n, const char *rows,
                          const char *table, const char *pos) {
  json_t *targets = json_array();
  for (size_t i = 0; i < n && targets != NULL; i++)
    json_array_append_new(targets, json_pack("{s:{s:O,s:i}}", "ResTarget", "val", items[i].val,
                                             "location", items[i].pos - 1));
  if (targets == NULL) return NULL;
  json_array_append_new(
      targets, json_pack("{s:{s:o,s:i}}", "ResTarget", "val", colref(pos), "location", -1));
  return json_pack("{s:{s:o,s:[{s:{s:s,s:b,s:s,s:{s:s},s:i}}],s:[{s:{s:o,s:s,s:s,s:i}}],s:s,s:s}}",
                   "SelectStmt", "targetList", targets, "fromClause", "RangeVar", "relname", rows,
                   "inh", 1, "relpersistence", "p", "alias", "aliasname", table, "location", -1,
                   "sortClause", "SortBy", "node", colref(pos), "sortby_dir", "SORTBY_DEFAULT",
                   "sortby_nulls", "SORTBY_NULLS_DEFAULT", "location", -1, "limitOption",
                   "LIMIT_OPTION_DEFAULT", "op", "SETOP_NONE");
}

/* The statement's lookup, with `rel` (the rows read) under the target's name. */
typedef struct rows_lookup {
  const hs_sql_bind_opts *bo;
  const hs_sql_rel *rel;
} rows_lookup;

static hs_status rows_lookup_fn(void *ud, const char *name, hs_sql_plan_ctx *pc, hs_sql_rel **out,
                                hs_error *err) {
  rows_lookup *u = ud;
  if (strcmp(name, u->rel->name) != 0) return u->bo->lookup(u->bo->lookup_ud, name, pc, out, err);
  hs_sql_rel *r = hs_arena_alloc(&pc->arena, sizeof(*r));
  if (r == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  *r = *u->rel;
  *out = r;
  return HS_OK;
}

/* The rows read (batches, consumed) as SQL chunks of the columns SQL
 * reads, plus an int64 column `posname` numbering them, into rel (in A). */
static hs_status rows_relation(const struct ArrowSchema *s, struct ArrowArray *batches, size_t nb,
                               const char *table, const char *posname, hs_arena *A, hs_sql_rel *rel,
                               hs_error *err) {
  int64_t nc = s->n_children;
  hs_sql_type *types = hs_arena_alloc(A, sizeof(*types) * (size_t)(nc + 1));
  const char **names = hs_arena_alloc(A, sizeof(*names) * (size_t)(nc + 1));
  int32_t *kept = hs_arena_alloc(A, sizeof(*kept) * (size_t)(nc + 1));
  hs_sql_chunk *chunks = hs_arena_alloc(A, sizeof(*chunks) * (nb ? nb : 1));
  if (types == NULL || names == NULL || kept == NULL || chunks == NULL) {
    hs_arrow_batches_free(batches, nb);
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  }
  int32_t k = 0;
  for (int64_t i = 0; i < nc; i++) {
    char why[160];
    if (hs_lineage_of_name(s->children[i]->name) != HS_LINEAGE_NONE ||
        !hs_sql_type_from_arrow(s->children[i], &types[k], why, sizeof why))
      continue; /* not visible to the SET expressions */
    names[k] = s->children[i]->name;
    kept[k++] = (int32_t)i;
  }
  types[k] = hs_sql_type_of(HS_SQL_INT64);
  names[k] = posname;
  memset(chunks, 0, sizeof(*chunks) * (nb ? nb : 1));
  memset(rel, 0, sizeof(*rel));
  rel->name = table;
  rel->chunks = chunks;
  rel->n_cols = k + 1;
  rel->types = types;
  rel->col_names = names;
  hs_status st = HS_OK;
  int64_t at = 0;
  size_t b = 0;
  for (; b < nb && st == HS_OK; b++) {
    hs_sql_chunk c = {0};
    int64_t len = batches[b].length;
    st = hs_sql_chunk_from_arrow(s, &batches[b], kept, k, &c, err); /* consumes the batch */
    if (st == HS_OK) st = hs_sql_chunk_init(&chunks[b], k + 1, len, err);
    for (int32_t j = 0; j < k && st == HS_OK; j++)
      st = hs_sql_vec_share(&chunks[b].cols[j], &c.cols[j], err);
    if (st == HS_OK) st = hs_sql_vec_alloc(&chunks[b].cols[k], types[k], len, false, err);
    if (st == HS_OK) {
      int64_t *p = hs_sql_vec_mut_data(&chunks[b].cols[k]);
      for (int64_t r = 0; r < len; r++) p[r] = at + r;
      at += len;
    }
    hs_sql_chunk_release(&c);
    rel->n_chunks = b + 1;
    if (st != HS_OK && batches[b].release != NULL) batches[b].release(&batches[b]);
  }
  for (; b < nb; b++)
    if (batches[b].release != NULL) batches[b].release(&batches[b]);
  return st;
}

static void rows_relation_free(hs_sql_rel *rel) {
  for (size_t i = 0; i < rel->n_chunks; i++) hs_sql_chunk_release((hs_sql_chunk *)&rel->chunks[i]);
  rel->n_chunks = 0;
}

/* The SET results (chunks of n_set + 1 columns, the last the row number)
 * assigned to their columns' types and exported as one struct array of
 * n rows, in row order. */
static hs_status set_values(const hs_sql_set_item *items, size_t n_set, const struct ArrowSchema *s,
                            hs_sql_chunk *chunks, size_t nc, int64_t n, struct ArrowArray *out,
                            hs_arena *A, int32_t *pos, hs_error *err) {
  hs_sql_type *types = hs_arena_alloc(A, sizeof(*types) * n_set);
  const char **names = hs_arena_alloc(A, sizeof(*names) * n_set);
  if (types == NULL || names == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (size_t j = 0; j < n_set; j++) {
    char why[160];
    names[j] = items[j].col;
    if (!hs_sql_type_from_arrow(s->children[items[j].tcol], &types[j], why, sizeof why))
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "at position %d: column \"%s\" cannot be set in SQL: %s (use "
                          "t.update(values=...) from Python)",
                          items[j].pos, items[j].col, why);
  }
  int64_t seen = 0;
  for (size_t c = 0; c < nc; c++) {
    const int64_t *p = chunks[c].cols[n_set].data;
    for (int64_t r = 0; r < chunks[c].n; r++)
      if (p[r] != seen++)
        return hs_error_set(err, HS_ERR_INTERNAL, "UPDATE: the SET values came out of order");
  }
  if (seen != n)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "UPDATE: the SET expressions gave %lld rows for %lld rows to update",
                        (long long)seen, (long long)n);
  struct ArrowSchema vs;
  memset(&vs, 0, sizeof vs);
  hs_status st = hs_sql_schema_to_arrow(types, names, (int32_t)n_set, &vs, err);
  for (size_t j = 0; j < n_set && st == HS_OK; j++)
    if (!hs_arrow_schema_same_layout(vs.children[j], s->children[items[j].tcol]))
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "at position %d: column \"%s\" (Arrow type %s) cannot be set in SQL (use "
                        "t.update(values=...) from Python)",
                        items[j].pos, items[j].col, s->children[items[j].tcol]->format);
  struct ArrowArray *arrs = st == HS_OK ? hs_calloc(nc ? nc : 1, sizeof(*arrs)) : NULL;
  if (st == HS_OK && arrs == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  size_t made = 0;
  for (; made < nc && st == HS_OK; made++) {
    hs_sql_chunk a = {0};
    st = hs_sql_chunk_init(&a, (int32_t)n_set, chunks[made].n, err);
    for (size_t j = 0; j < n_set && st == HS_OK; j++) {
      st = hs_sql_ddl_assign(&chunks[made].cols[j], types[j], items[j].col, &a.cols[j], err);
      if (st != HS_OK) *pos = items[j].pos;
    }
    if (st == HS_OK) st = hs_sql_chunk_to_arrow_as(&a, types, &arrs[made], err);
    hs_sql_chunk_release(&a);
    if (st != HS_OK) break;
  }
  if (st == HS_OK) st = hs_arrow_array_concat(&vs, arrs, made, out, err);
  if (arrs != NULL) hs_arrow_batches_free(arrs, made);
  hs_arrow_schema_release(&vs);
  return st;
}

/* The updated rows: `rows` (all rows read, one struct array; its children
 * moved out) with the SET columns from `vals` and, in a v3 table, a NULL
 * _last_updated_sequence_number. */
static hs_status updated_rows(const struct ArrowSchema *s, struct ArrowArray *rows,
                              const hs_sql_set_item *items, size_t n_set, struct ArrowArray *vals,
                              struct ArrowArray *out, hs_error *err) {
  int64_t nc = s->n_children, n = rows->length;
  struct ArrowArray *kids = hs_calloc((size_t)nc, sizeof(*kids));
  if (kids == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  hs_status st = HS_OK;
  for (int64_t i = 0; i < nc && st == HS_OK; i++) {
    struct ArrowArray *from = rows->children[i];
    for (size_t j = 0; j < n_set; j++)
      if (items[j].tcol == i) from = vals->children[j];
    if (hs_lineage_of_name(s->children[i]->name) == HS_LINEAGE_SEQ_COL) {
      int64_t *zero = hs_calloc((size_t)(n ? n : 1), sizeof(int64_t));
      uint8_t *none = hs_calloc((size_t)(n / 8 + 1), 1);
      if (zero == NULL || none == NULL) {
        hs_free(zero);
        hs_free(none);
        st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      } else {
        st = hs_arrow_array_make_primitive(&kids[i], n, zero, none, n, err);
      }
      continue;
    }
    kids[i] = *from; /* moved */
    from->release = NULL;
  }
  if (st == HS_OK) {
    st = hs_arrow_array_make_struct(out, n, kids, nc, NULL, 0, err); /* takes the children */
    hs_free(kids);
    return st;
  }
  hs_arrow_batches_free(kids, (size_t)nc);
  return st;
}

/* One attempt: read, compute, commit at the table's current snapshot. */
static hs_status update_once(const hs_sql_bind_opts *bo, const char *sql, json_t *set_list,
                             const char *table, hs_table *t, const char *cond, int64_t *count,
                             int32_t *pos, hs_error *err) {
  int64_t sid = hs_table_current_snapshot_id(t);
  *count = 0;
  if (sid < 0) return HS_OK; /* no snapshot: no rows */
  const char **cols = NULL;
  size_t n_cols = 0;
  hs_status st = hs_lineage_scan_columns(t, sid, &cols, &n_cols, err);
  if (st != HS_OK) return st;
  hs_scan_options so;
  hs_scan_options_init(&so);
  so.snapshot_id = sid;
  so.columns = cols;
  so.n_columns = n_cols;
  so.filter = cond;
  struct ArrowArrayStream in;
  struct ArrowSchema s;
  struct ArrowArray *batches = NULL, rows, vals, upd;
  size_t nb = 0;
  memset(&s, 0, sizeof s);
  memset(&rows, 0, sizeof rows);
  memset(&vals, 0, sizeof vals);
  memset(&upd, 0, sizeof upd);
  st = hs_table_scan_query(t, &so, &in, err);
  hs_free(cols);
  if (st != HS_OK) return st;
  st = hs_arrow_stream_collect(&in, &s, &batches, &nb, err);
  in.release(&in);
  if (st != HS_OK) return st;
  int64_t n = 0;
  for (size_t b = 0; b < nb; b++) n += batches[b].length;
  size_t n_set = json_array_size(set_list);
  hs_sql_plan_ctx *pc = hs_sql_ddl_ctx_new();
  hs_sql_set_item *items = pc != NULL ? hs_arena_alloc(&pc->arena, sizeof(*items) * n_set) : NULL;
  if (items == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  if (st == HS_OK) st = hs_sql_ddl_set_items(set_list, &s, table, items, n_set, pos, err);
  if (st != HS_OK || n == 0) {
    hs_arrow_batches_free(batches, nb);
    hs_arrow_schema_release(&s);
    hs_sql_plan_ctx_free(pc);
    return st;
  }
  /* a row-number column name no column has; the rows' relation name */
  char posname[64] = "__hs_update_row";
  for (int64_t i = 0, clash = 1; clash && i < 32; i++) {
    clash = 0;
    for (int64_t c = 0; c < s.n_children; c++)
      if (strcmp(s.children[c]->name, posname) == 0) clash = 1;
    if (clash) snprintf(posname, sizeof posname, "__hs_update_row_%lld", (long long)i);
  }
  const char *rows_name = "__hs_update_rows";
  st = hs_arrow_array_concat(&s, batches, nb, &rows, err);
  hs_sql_rel rel;
  memset(&rel, 0, sizeof rel);
  if (st == HS_OK) {
    st = rows_relation(&s, batches, nb, rows_name, posname, &pc->arena, &rel, err);
  } else {
    hs_arrow_batches_free(batches, nb);
    batches = NULL;
  }
  hs_free(batches);
  json_t *node = st == HS_OK ? set_select(items, n_set, rows_name, table, posname) : NULL;
  if (st == HS_OK && node == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  rows_lookup rl = {bo, &rel};
  hs_sql_bind_opts bo2 = *bo;
  bo2.lookup = rows_lookup_fn;
  bo2.lookup_ud = &rl;
  hs_sql_plan *plan = NULL;
  hs_sql_exec *x = NULL;
  hs_sql_chunk *chunks = NULL;
  size_t nc = 0;
  if (st == HS_OK) st = hs_sql_bind_query_node(sql, node, &bo2, pc, &plan, pos, err);
  if (st == HS_OK) st = hs_sql_ddl_run(&bo2, plan, &chunks, &nc, &x, err);
  if (st == HS_OK) st = set_values(items, n_set, &s, chunks, nc, n, &vals, &pc->arena, pos, err);
  hs_sql_ddl_free_chunks(chunks, nc);
  hs_sql_exec_free(x);
  rows_relation_free(&rel);
  if (st == HS_OK) st = updated_rows(&s, &rows, items, n_set, &vals, &upd, err);
  if (rows.release != NULL) rows.release(&rows);
  if (vals.release != NULL) vals.release(&vals);
  struct ArrowSchema us;
  memset(&us, 0, sizeof us);
  struct ArrowArrayStream app;
  memset(&app, 0, sizeof app);
  if (st == HS_OK) st = hs_arrow_schema_copy(&s, &us, err);
  if (st == HS_OK) {
    st = hs_arrow_stream_from_batches(&us, &upd, 1, &app, err);
  } else if (upd.release != NULL) {
    upd.release(&upd);
  }
  if (st == HS_OK) {
    *pos = 0;
    hs_row_change c;
    memset(&c, 0, sizeof c);
    c.what = "UPDATE";
    c.snapshot_id = sid;
    c.deletes = &cond;
    c.n_deletes = 1;
    c.appends = &app;
    c.n_appends = 1;
    c.mode_property = "write.update.mode";
    hs_row_change_result res;
    memset(&res, 0, sizeof res);
    st = hs_table_change_rows(t, &c, &res, err);
    if (st == HS_OK) *count = res.rows_deleted;
  }
  json_decref(node);
  hs_arrow_schema_release(&s);
  hs_sql_plan_ctx_free(pc);
  return st;
}

hs_status hs_sql_ddl_update(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                            struct ArrowArrayStream *out, int32_t *pos, hs_error *err) {
  static const char *const refused[] = {"returningList", "withClause"};
  static const char *const words[] = {"UPDATE ... RETURNING", "WITH ... UPDATE"};
  for (size_t i = 0; i < 2; i++)
    if (json_object_get(body, refused[i]) != NULL)
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "%s is not supported", words[i]);
  if (json_object_get(body, "fromClause") != NULL) /* a join: MERGE's machinery */
    return hs_sql_ddl_update_from(bo, sql, body, out, pos, err);
  json_t *set_list = json_object_get(body, "targetList");
  if (json_array_size(set_list) == 0 || json_array_size(set_list) > 100000)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "UPDATE needs SET column = value");
  hs_sql_plan_ctx *pc = hs_sql_ddl_ctx_new();
  if (pc == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  json_t *relnode = json_object_get(body, "relation");
  const char *table = jstr(relnode, "relname");
  hs_sql_rel *r = NULL;
  hs_table *t = NULL;
  hs_status st = hs_sql_ddl_open_target(bo, pc, relnode, "UPDATE", false, &r, &t, pos, err);
  json_t *where = json_object_get(body, "whereClause");
  const char *cond = "";
  if (st == HS_OK && where != NULL) {
    cond = hs_sql_ddl_where_text(sql, where, "an UPDATE", &pc->arena, pos, err);
    if (cond == NULL) st = HS_ERR_UNSUPPORTED;
  }
  int64_t count = 0;
  for (int attempt = 0; st == HS_OK; attempt++) {
    st = update_once(bo, sql, set_list, table, t, cond, &count, pos, err);
    if (st != HS_ERR_CONFLICT || attempt + 1 >= UPDATE_ATTEMPTS) break;
    if (err != NULL) memset(err, 0, sizeof *err);
    st = hs_table_refresh(t, err);
  }
  hs_sql_rel_close(r, t);
  hs_sql_plan_ctx_free(pc);
  if (st != HS_OK) return st;
  *pos = 0;
  return hs_sql_ddl_count_stream(count, out, err);
}
