/*
 * optimize_join.c — choosing the index nested loop for joins
 * (hs_sql_optimize_join_index, called by hs_sql_optimize once filters
 * are in the scans and columns are pruned).
 *
 * A hash join whose right input is a SCAN of a table, joined on an
 * equality whose right side is a plain column of that table with a scalar
 * index, becomes HS_SJM_INDEX_NL on that column: the operator (op_join.c)
 * then reads the left side ahead and, when it is small next to the table
 * (a quarter of its rows, at most 100,000), looks its keys up through the
 * index instead of scanning the table; otherwise it hashes as before. So
 * the choice costs nothing when the left side turns out large, and no
 * estimate has to be right.
 *
 * A projection of plain columns over the scan (a subquery's select list)
 * is folded into the scan first. Inner joins whose LEFT input is the indexed table scan (and whose
 * right is not) have their inputs swapped first, with a projection restoring the column order, so
 * "FROM big JOIN small ON big.k = small.k" also gets the lookups. Only inner, left, semi and anti
 * joins qualify (right and full joins need every right row); the key types must be ones a filter
 * literal states exactly (bool, integers, numeric, text, date,
 * timestamps).
 */
#include <string.h>

#include "bind.h"
#include "op_join.h"

typedef struct jopt {
  hs_sql_plan_ctx *ctx;
  hs_error *err;
} jopt;

static bool key_type_ok(hs_sql_tid id) {
  switch (id) {
  case HS_SQL_BOOL:
  case HS_SQL_INT32:
  case HS_SQL_INT64:
  case HS_SQL_NUMERIC:
  case HS_SQL_TEXT:
  case HS_SQL_DATE:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: return true;
  default: return false;
  }
}

/* Does `column` of table relation `rel` have a scalar index on some data
 * file? (Errors opening the table say no: the scan reports them.) */
static bool has_scalar_index(const hs_sql_rel *rel, const char *column) {
  hs_table *t = hs_sql_rel_peek(rel), *own = NULL;
  if (t == NULL && hs_table_open(rel->uri, &own, NULL) != HS_OK) return false;
  if (t == NULL) t = own;
  hs_table_index_info *v = NULL;
  size_t n = 0;
  bool yes = false;
  if (hs_table_list_indexes(t, &v, &n, NULL) == HS_OK)
    for (size_t i = 0; i < n; i++)
      if (!v[i].is_vector && v[i].files_indexed > 0 && strcmp(v[i].column, column) == 0) yes = true;
  hs_table_index_info_free(v, n);
  hs_table_free(own);
  return yes;
}

static bool is_table_scan(const hs_sql_plan *p) {
  return p != NULL && p->kind == HS_SP_SCAN && p->scan.rel != NULL && p->scan.rel->uri != NULL &&
         p->scan.limit < 0 && p->scan.columns != NULL;
}

/* The indexed column of `scan` that key expressions keys[0..n) (over the
 * scan's output) name, with others[] the other side's keys; NULL if none. */
static const char *indexed_key(const hs_sql_plan *scan, hs_sql_expr **keys, hs_sql_expr **others,
                               int32_t n) {
  for (int32_t k = 0; k < n; k++) {
    const hs_sql_expr *e = keys[k];
    if (e->kind != HS_SX_COL || e->col < 0 || e->col >= scan->scan.n_columns) continue;
    if (!key_type_ok(e->type.id) || others[k]->type.id != e->type.id) continue;
    const char *name = scan->scan.columns[e->col];
    if (name != NULL && has_scalar_index(scan->scan.rel, name)) return name;
  }
  return NULL;
}

/* Swap the inputs of inner join *pp and put a projection above it that
 * gives the columns in their old order. */
static hs_status swap_inner(jopt *o, hs_sql_plan **pp) {
  hs_arena *a = &o->ctx->arena;
  hs_sql_plan *j = *pp;
  int32_t nl = j->kids[0]->n_cols, nr = j->kids[1]->n_cols;
  hs_sql_plan *s = hs_arena_memdup(a, j, sizeof *j);
  hs_sql_plan *proj = hs_sql_plan_new(o->ctx, HS_SP_PROJECT, j->n_cols);
  hs_sql_expr **exprs = hs_arena_alloc(a, sizeof(hs_sql_expr *) * (size_t)(j->n_cols + 1));
  hs_sql_type *types = hs_arena_alloc(a, sizeof(hs_sql_type) * (size_t)(j->n_cols + 1));
  const char **names = hs_arena_alloc(a, sizeof(char *) * (size_t)(j->n_cols + 1));
  if (s == NULL || proj == NULL || exprs == NULL || types == NULL || names == NULL)
    return hs_error_set(o->err, HS_ERR_NOMEM, "out of memory");
  s->kids[0] = j->kids[1];
  s->kids[1] = j->kids[0];
  s->join.left_keys = j->join.right_keys;
  s->join.right_keys = j->join.left_keys;
  s->types = types;
  s->names = names;
  for (int32_t i = 0; i < nr; i++) types[i] = j->types[nl + i], names[i] = j->names[nl + i];
  for (int32_t i = 0; i < nl; i++) types[nr + i] = j->types[i], names[nr + i] = j->names[i];
  if (j->pred != NULL && (s->pred = hs_sql_expr_swap_sides(a, j->pred, nl, nr)) == NULL)
    return hs_error_set(o->err, HS_ERR_NOMEM, "out of memory");
  for (int32_t i = 0; i < j->n_cols; i++) {
    hs_sql_expr *c = hs_sql_expr_new(a, HS_SX_COL, j->types[i], j->pos);
    if (c == NULL) return hs_error_set(o->err, HS_ERR_NOMEM, "out of memory");
    c->col = i < nl ? nr + i : i - nl;
    exprs[i] = c;
    proj->types[i] = j->types[i];
    proj->names[i] = j->names[i];
  }
  proj->pos = j->pos;
  proj->est_rows = j->est_rows;
  proj->kids[0] = s;
  proj->project.exprs = exprs;
  *pp = proj;
  return HS_OK;
}

/* A projection of distinct plain columns over a table scan as one scan
 * reading those columns in that order (what `x IN (SELECT k FROM t)`
 * binds to); NULL when `p` is not one. */
static hs_sql_plan *merged_scan(jopt *o, const hs_sql_plan *p) {
  if (p == NULL || p->kind != HS_SP_PROJECT || !is_table_scan(p->kids[0]) || p->n_cols <= 0)
    return NULL;
  const hs_sql_plan *scan = p->kids[0];
  for (int32_t i = 0; i < p->n_cols; i++) {
    const hs_sql_expr *e = p->project.exprs[i];
    if (e->kind != HS_SX_COL || e->col < 0 || e->col >= scan->scan.n_columns) return NULL;
    for (int32_t j = 0; j < i; j++)
      if (p->project.exprs[j]->col == e->col) return NULL;
  }
  hs_arena *a = &o->ctx->arena;
  hs_sql_plan *m = hs_arena_memdup(a, scan, sizeof *scan);
  const char **cols = hs_arena_alloc(a, sizeof(char *) * (size_t)p->n_cols);
  if (m == NULL || cols == NULL) return NULL;
  for (int32_t i = 0; i < p->n_cols; i++) cols[i] = scan->scan.columns[p->project.exprs[i]->col];
  m->n_cols = p->n_cols;
  m->types = p->types;
  m->names = p->names;
  m->scan.columns = cols;
  m->scan.n_columns = p->n_cols;
  return m;
}

static hs_status visit(jopt *o, hs_sql_plan **pp) {
  hs_sql_plan *p = *pp;
  hs_status st;
  for (int i = 0; i < 2; i++)
    if (p->kids[i] != NULL && (st = visit(o, &p->kids[i])) != HS_OK) return st;
  for (int32_t i = 0; i < p->n_many; i++)
    if ((st = visit(o, &p->many[i])) != HS_OK) return st;
  if (p->kind != HS_SP_JOIN || p->join.method != HS_SJM_HASH || p->join.n_keys <= 0) return HS_OK;
  hs_sql_join_type t = p->join.type;
  if (t != HS_SJ_INNER && t != HS_SJ_LEFT && t != HS_SJ_SEMI && t != HS_SJ_ANTI) return HS_OK;
  const char *col = NULL;
  if (is_table_scan(p->kids[1])) {
    col = indexed_key(p->kids[1], p->join.right_keys, p->join.left_keys, p->join.n_keys);
  } else {
    hs_sql_plan *m = merged_scan(o, p->kids[1]);
    if (m != NULL &&
        (col = indexed_key(m, p->join.right_keys, p->join.left_keys, p->join.n_keys)) != NULL)
      p->kids[1] = m;
  }
  if (col == NULL && t == HS_SJ_INNER && is_table_scan(p->kids[0]) && !is_table_scan(p->kids[1])) {
    const char *lcol =
        indexed_key(p->kids[0], p->join.left_keys, p->join.right_keys, p->join.n_keys);
    if (lcol == NULL) return HS_OK;
    if ((st = swap_inner(o, pp)) != HS_OK) return st;
    p = (*pp)->kids[0];
    col = lcol;
  }
  if (col == NULL) return HS_OK;
  p->join.method = HS_SJM_INDEX_NL;
  p->join.index_column = col;
  return HS_OK;
}

hs_status hs_sql_optimize_join_index(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err) {
  jopt o = {ctx, err};
  return visit(&o, root);
}
