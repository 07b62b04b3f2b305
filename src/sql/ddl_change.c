/*
 * ddl_change.c — SQL statements that change a table's rows or columns,
 * mapped onto the table layer's row changes and schema evolution:
 *
 *   DELETE FROM t USING s WHERE t.k = s.k  the MERGE of WHEN MATCHED THEN DELETE
 *                                          (ddl_merge.c)
 *   DELETE FROM t [WHERE cond]             hs_table_change_rows: the WHERE is the
 *                                          change's filter (the same parser and
 *                                          semantics as every filter), one commit;
 *                                          no WHERE deletes every row
 *   ALTER TABLE t ADD [COLUMN] c type      hs_table_update_schema, every
 *               , DROP [COLUMN] [IF EXISTS] c          command of the statement in
 *               , ALTER [COLUMN] c [SET DATA] TYPE type  one metadata-only commit
 *   ALTER TABLE t RENAME [COLUMN] a TO b
 *
 * Each answers one row of int64 "count": rows deleted, or 0. What has no
 * mapping (USING, RETURNING, parameters in a DELETE's WHERE, DEFAULT or
 * NOT NULL on an added column, other ALTER commands) is refused with its
 * position before anything is written.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "ddl.h"
#include "vec.h"

static const char *jstr(json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}

/* The smallest "location" in a parse subtree (-1: none); *param: the
 * subtree holds a ParamRef. */
static int64_t min_location(json_t *j, bool *param) {
  int64_t best = -1;
  if (json_is_object(j)) {
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v) {
      if (strcmp(k, "ParamRef") == 0) *param = true;
      int64_t m = strcmp(k, "location") == 0 && json_is_integer(v) ? json_integer_value(v)
                                                                   : min_location(v, param);
      if (m >= 0 && (best < 0 || m < best)) best = m;
    }
  } else if (json_is_array(j)) {
    size_t i;
    json_t *v;
    json_array_foreach(j, i, v) {
      int64_t m = min_location(v, param);
      if (m >= 0 && (best < 0 || m < best)) best = m;
    }
  }
  return best;
}

/* The text of a DELETE's WHERE condition: from after the WHERE keyword
 * before the condition's first token to the statement's end (WHERE is a
 * DELETE's last clause once RETURNING is refused), in `A`. */
const char *hs_sql_ddl_where_text(const char *sql, json_t *where, const char *verb, hs_arena *A,
                                  int32_t *pos, hs_error *err) {
  bool param = false;
  int64_t at = min_location(where, &param);
  size_t n = strlen(sql);
  if (param)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "at position %lld: parameters are not supported in %s's WHERE (it is "
                        "the table change's filter; write the values)",
                        (long long)at + 1, verb),
           NULL;
  /* back over blanks and opening parentheses to the keyword */
  int64_t i = at < 0 || (size_t)at > n ? -1 : at;
  while (i > 0 && (isspace((unsigned char)sql[i - 1]) || sql[i - 1] == '(')) i--;
  if (i < 5 || strncasecmp(sql + i - 5, "where", 5) != 0 ||
      (i > 5 && (isalnum((unsigned char)sql[i - 6]) || sql[i - 6] == '_')))
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "at position %lld: could not find the text of the WHERE condition "
                        "(write it without comments before it)",
                        (long long)at + 1),
           NULL;
  size_t end = n;
  while (end > (size_t)i && (isspace((unsigned char)sql[end - 1]) || sql[end - 1] == ';')) end--;
  *pos = (int32_t)i + 1;
  const char *t = hs_arena_strndup(A, sql + i, end - (size_t)i);
  if (t == NULL) hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  return t;
}

/* The table relation `rel` names, opened (its handle taken from the
 * statement's lookup); *r for hs_sql_rel_close. */
hs_status hs_sql_ddl_open_target(const hs_sql_bind_opts *bo, hs_sql_plan_ctx *pc, json_t *rel,
                                 const char *verb, bool alias_ok, hs_sql_rel **r, hs_table **t,
                                 int32_t *pos, hs_error *err) {
  const char *name = jstr(rel, "relname");
  *pos = hs_sql_ddl_pos(rel);
  if (name == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "%s needs a table name", verb);
  if (!alias_ok && json_object_get(rel, "alias") != NULL)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "at position %d: %s does not take a table alias (name columns plainly)",
                        *pos, verb);
  hs_status st = bo->lookup(bo->lookup_ud, name, pc, r, err);
  if (st == HS_OK && (*r)->uri == NULL)
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "at position %d: %s is in-memory data; %s changes tables", *pos, name, verb);
  if (st == HS_OK) st = hs_sql_rel_open(*r, t, err);
  return st;
}

hs_sql_plan_ctx *hs_sql_ddl_ctx_new(void) {
  hs_sql_plan_ctx *pc = hs_calloc(1, sizeof(*pc));
  if (pc != NULL) hs_arena_init(&pc->arena);
  return pc;
}

hs_status hs_sql_ddl_delete(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                            struct ArrowArrayStream *out, int32_t *pos, hs_error *err) {
  static const char *const refused[] = {"returningList", "withClause"};
  static const char *const words[] = {"DELETE ... RETURNING", "WITH ... DELETE"};
  for (size_t i = 0; i < 2; i++)
    if (json_object_get(body, refused[i]) != NULL)
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "%s is not supported (write the condition in WHERE)", words[i]);
  if (json_object_get(body, "usingClause") != NULL) /* a join: MERGE's machinery */
    return hs_sql_ddl_delete_using(bo, sql, body, out, pos, err);
  hs_sql_plan_ctx *pc = hs_sql_ddl_ctx_new();
  if (pc == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  hs_sql_rel *r = NULL;
  hs_table *t = NULL;
  hs_status st = hs_sql_ddl_open_target(bo, pc, json_object_get(body, "relation"), "DELETE", false,
                                        &r, &t, pos, err);
  json_t *where = json_object_get(body, "whereClause");
  const char *cond = "";
  if (st == HS_OK && where != NULL) {
    cond = hs_sql_ddl_where_text(sql, where, "a DELETE", &pc->arena, pos, err);
    if (cond == NULL) st = HS_ERR_UNSUPPORTED;
  }
  hs_row_change_result res;
  memset(&res, 0, sizeof res);
  if (st == HS_OK) {
    hs_row_change c;
    memset(&c, 0, sizeof c);
    c.what = "DELETE";
    c.snapshot_id = -1;
    c.deletes = &cond;
    c.n_deletes = 1;
    c.mode_property = "write.delete.mode";
    st = hs_table_change_rows(t, &c, &res, err);
  }
  hs_sql_rel_close(r, t);
  hs_sql_plan_ctx_free(pc);
  if (st != HS_OK) return st;
  *pos = 0;
  return hs_sql_ddl_count_stream(res.rows_deleted, out, err);
}

/* One ALTER TABLE command as a schema change; an added or retyped
 * column's one-child Arrow schema goes to *type (released by the caller). */
static hs_status alter_cmd(json_t *cmd, hs_table_schema_change *c, struct ArrowSchema *type,
                           int32_t *pos, hs_error *err) {
  const char *sub = jstr(cmd, "subtype");
  json_t *def = json_object_get(json_object_get(cmd, "def"), "ColumnDef");
  memset(c, 0, sizeof *c);
  if (sub != NULL && strcmp(sub, "AT_DropColumn") == 0) {
    c->op = HS_SCHEMA_DROP_COLUMN;
    c->column = jstr(cmd, "name");
    return c->column != NULL ? HS_OK
                             : hs_error_set(err, HS_ERR_INVALID_ARG, "DROP COLUMN: no name");
  }
  bool add = sub != NULL && strcmp(sub, "AT_AddColumn") == 0;
  bool retype = sub != NULL && strcmp(sub, "AT_AlterColumnType") == 0;
  if (!add && !retype)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "ALTER TABLE %s is not supported (ADD COLUMN, DROP COLUMN, ALTER COLUMN "
                        "TYPE and RENAME COLUMN are)",
                        sub != NULL ? sub : "(unknown command)");
  if (def == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "ALTER TABLE: no column definition");
  *pos = hs_sql_ddl_pos(def);
  size_t i;
  json_t *k;
  json_array_foreach(json_object_get(def, "constraints"), i, k) {
    const char *ct = jstr(json_object_get(k, "Constraint"), "contype");
    if (ct != NULL && strcmp(ct, "CONSTR_NULL") == 0) continue;
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "at position %d: %s on an added column is not supported (columns are "
                        "added optional, without a default)",
                        *pos, ct != NULL ? ct + 7 : "a constraint");
  }
  hs_sql_type ty;
  hs_status st = hs_sql_ddl_type_of(json_object_get(def, "typeName"), &ty, pos, err);
  const char *name = add ? jstr(def, "colname") : jstr(cmd, "name");
  if (st == HS_OK && name == NULL) st = hs_error_set(err, HS_ERR_INVALID_ARG, "no column name");
  if (st == HS_OK) st = hs_sql_schema_to_arrow(&ty, &name, 1, type, err);
  if (st != HS_OK) return st;
  c->op = add ? HS_SCHEMA_ADD_COLUMN : HS_SCHEMA_UPDATE_COLUMN;
  c->column = name;
  c->type = type;
  return HS_OK;
}

/* Does the table have a top-level column `name`? */
static bool has_column(hs_table *t, const char *name) {
  struct ArrowSchema s;
  memset(&s, 0, sizeof s);
  if (hs_table_schema(t, &s, NULL) != HS_OK) return false;
  bool yes = false;
  for (int64_t i = 0; i < s.n_children && !yes; i++)
    yes = s.children[i]->name != NULL && strcmp(s.children[i]->name, name) == 0;
  s.release(&s);
  return yes;
}

hs_status hs_sql_ddl_alter(const hs_sql_bind_opts *bo, json_t *body, struct ArrowArrayStream *out,
                           int32_t *pos, hs_error *err) {
  const char *obj = jstr(body, "objtype");
  if (obj != NULL && strcmp(obj, "OBJECT_TABLE") != 0)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "ALTER %s is not supported (ALTER TABLE is)",
                        obj + 7);
  json_t *cmds = json_object_get(body, "cmds");
  size_t n = json_array_size(cmds);
  if (n == 0 || n > 1000) return hs_error_set(err, HS_ERR_INVALID_ARG, "ALTER TABLE: no commands");
  hs_sql_plan_ctx *pc = hs_sql_ddl_ctx_new();
  hs_table_schema_change *ch = hs_calloc(n, sizeof(*ch));
  struct ArrowSchema *types = hs_calloc(n, sizeof(*types));
  hs_sql_rel *r = NULL;
  hs_table *t = NULL;
  hs_status st = pc != NULL && ch != NULL && types != NULL
                     ? hs_sql_ddl_open_target(bo, pc, json_object_get(body, "relation"),
                                              "ALTER TABLE", false, &r, &t, pos, err)
                     : hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  size_t m = 0;
  for (size_t i = 0; i < n && st == HS_OK; i++) {
    json_t *cmd = json_object_get(json_array_get(cmds, i), "AlterTableCmd");
    st = alter_cmd(cmd, &ch[m], &types[m], pos, err);
    if (st != HS_OK) break;
    /* IF EXISTS / IF NOT EXISTS: skip what is already so */
    bool missing_ok = json_is_true(json_object_get(cmd, "missing_ok"));
    bool exists = has_column(t, ch[m].column);
    if (missing_ok && ((ch[m].op == HS_SCHEMA_DROP_COLUMN && !exists) ||
                       (ch[m].op == HS_SCHEMA_ADD_COLUMN && exists))) {
      if (types[m].release != NULL) types[m].release(&types[m]);
      memset(&types[m], 0, sizeof types[m]);
      continue;
    }
    m++;
  }
  if (st == HS_OK && m > 0) st = hs_table_update_schema(t, ch, m, err);
  for (size_t i = 0; i < n && types != NULL; i++)
    if (types[i].release != NULL) types[i].release(&types[i]);
  hs_free(types);
  hs_free(ch);
  hs_sql_rel_close(r, t);
  hs_sql_plan_ctx_free(pc);
  if (st != HS_OK) return st;
  *pos = 0;
  return hs_sql_ddl_count_stream(0, out, err);
}

hs_status hs_sql_ddl_rename(const hs_sql_bind_opts *bo, json_t *body, struct ArrowArrayStream *out,
                            int32_t *pos, hs_error *err) {
  const char *what = jstr(body, "renameType");
  if (what == NULL || strcmp(what, "OBJECT_COLUMN") != 0)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "RENAME of %s is not supported (ALTER TABLE t RENAME COLUMN a TO b is)",
                        what != NULL && strlen(what) > 7 ? what + 7 : "this object");
  hs_table_schema_change c;
  memset(&c, 0, sizeof c);
  c.op = HS_SCHEMA_RENAME_COLUMN;
  c.column = jstr(body, "subname");
  c.new_name = jstr(body, "newname");
  if (c.column == NULL || c.new_name == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "RENAME COLUMN needs the old and new names");
  hs_sql_plan_ctx *pc = hs_sql_ddl_ctx_new();
  if (pc == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  hs_sql_rel *r = NULL;
  hs_table *t = NULL;
  hs_status st = hs_sql_ddl_open_target(bo, pc, json_object_get(body, "relation"), "ALTER TABLE",
                                        false, &r, &t, pos, err);
  if (st == HS_OK) st = hs_table_update_schema(t, &c, 1, err);
  hs_sql_rel_close(r, t);
  hs_sql_plan_ctx_free(pc);
  if (st != HS_OK) return st;
  *pos = 0;
  return hs_sql_ddl_count_stream(0, out, err);
}
