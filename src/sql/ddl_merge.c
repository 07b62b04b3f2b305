/*
 * ddl_merge.c — PostgreSQL 15's MERGE as one row change on the key path:
 *
 *   MERGE INTO target [AS t] USING source [AS s] ON t.k1 = e1 [AND t.k2 = e2 ...]
 *     WHEN MATCHED [AND cond] THEN UPDATE SET c = expr, ... | DELETE | DO NOTHING
 *     WHEN NOT MATCHED [AND cond] THEN INSERT [(cols)] VALUES (...) | DO NOTHING
 *
 * ON must be equalities of target columns (the keys) to expressions of the
 * source; other conditions belong in a WHEN's AND. Decided on one snapshot
 * `sid` of the target:
 *
 *   1. one SELECT in the SQL engine joins the source with the target at
 *      that snapshot (hs_snapshot('target', sid): the engine's join, so an
 *      index on the key serves it) — a LEFT JOIN from the source when a
 *      NOT MATCHED clause exists, else an inner one — and gives per joined
 *      row the first WHEN clause that applies (clauses in order, as
 *      PostgreSQL takes them), the target's key and columns, and each
 *      clause's values; with window counts per target key of the joined
 *      rows, the rows a clause updates or deletes, and (from the source)
 *      the source rows with that key;
 *   2. the checks PostgreSQL makes: a target row updated or deleted by two
 *      source rows is "MERGE command cannot affect row a second time"
 *      (per key: changed rows x source rows > joined rows); and ours: the
 *      key path deletes every live row of a changed key, so target rows
 *      sharing a key must all change or none (changed x source < joined is
 *      refused);
 *   3. one commit (hs_table_change_rows, `write.merge.mode`) deletes the
 *      target rows of the changed keys and appends the updated and inserted
 *      rows, each value assigned to its column's type as INSERT does.
 *   A conflicting concurrent commit re-runs 1-3 on the newer snapshot.
 *
 * In a v3 table an updated row keeps its `_row_id` (read through the
 * table relation's hidden lineage column) and inherits the commit's
 * sequence number; inserted rows get new ids.
 *
 * One row of int64 "count": rows updated, deleted and inserted. Not done:
 * tables with columns SQL
 * cannot read (lists, structs: refused; use t.merge), WHEN NOT MATCHED BY
 * SOURCE (PostgreSQL 17; our parser is 15's), RETURNING.
 */
#include <pg_query.h>
#include <stdio.h>
#include <string.h>

#include "../table/lineage.h"
#include "ddl.h"
#include "exec.h"
#include "vec.h"

enum { MERGE_ATTEMPTS = 6, MERGE_CLAUSES_MAX = 64, MERGE_KEYS_MAX = 16 };

/* The result's leading columns: clause number (1-based; 0: none),
 * per target key: changed rows, joined rows, source rows; whether the
 * row's source key has a NULL; then the keys. */
enum { R_ACTION, R_CHANGED, R_JOINED, R_NSRC, R_SRCNULL, R_KEYS };

typedef enum mc_kind { MC_UPDATE, MC_DELETE, MC_INSERT, MC_NOTHING } mc_kind;

typedef struct mclause {
  bool matched;
  mc_kind kind;
  json_t *cond; /* may be NULL */
  int32_t pos;
  size_t n_vals;
  json_t **vals;  /* UPDATE: SET expressions; INSERT: VALUES */
  int32_t *tcols; /* each value's target column */
  int32_t first;  /* the result column of vals[0] */
  int64_t *sel;   /* a chunk's rows this clause takes */
  int64_t n_sel;
} mclause;

typedef struct mplan {
  const char *table, *talias, *salias;
  json_t *source, *on;
  int32_t nk;
  int32_t keys[MERGE_KEYS_MAX];     /* target columns */
  json_t *src_keys[MERGE_KEYS_MAX]; /* their source expressions */
  mclause *cl;
  size_t ncl;
  bool not_matched, changes, updates;
  bool unique_inserts;       /* INSERT ... ON CONFLICT: rows to insert must not share a key */
  const char *verb;          /* "MERGE", "UPDATE ... FROM", "ON CONFLICT DO UPDATE", ... */
  struct ArrowSchema schema; /* the target's */
  int32_t n_tcols;
  hs_sql_type *ttypes;
  const char **tnames;
  int32_t tcol_first; /* the result column of target column 0 (updates) */
  bool lineage;       /* v3: updated rows keep their _row_id (the result column after the
                         target's columns), every appended row has the two lineage columns */
} mplan;

static const char *jstr(json_t *o, const char *k) {
  return json_string_value(json_object_get(o, k));
}

static const char *alias_of(json_t *rel) {
  return jstr(json_object_get(rel, "alias"), "aliasname");
}

/* The names of a ColumnRef: 1 or 2 plain fields; else 0. */
static int colref_names(json_t *e, const char **qual, const char **col) {
  json_t *f = json_object_get(json_object_get(e, "ColumnRef"), "fields");
  size_t n = json_array_size(f);
  const char *a = jstr(json_object_get(json_array_get(f, 0), "String"), "sval");
  const char *b = jstr(json_object_get(json_array_get(f, 1), "String"), "sval");
  if (n == 1 && a != NULL) return *qual = NULL, *col = a, 1;
  if (n == 2 && a != NULL && b != NULL) return *qual = a, *col = b, 2;
  return 0;
}

static int32_t tcol_of(const mplan *p, const char *name) {
  for (int32_t j = 0; j < p->n_tcols; j++)
    if (strcmp(p->tnames[j], name) == 0) return j;
  return -1;
}

/* Is `e` a reference to a target column? *col gets its index. */
static bool target_ref(const mplan *p, json_t *e, int32_t *col) {
  const char *q, *c;
  int n = colref_names(e, &q, &c);
  if (n == 0 || (n == 2 && strcmp(q, p->talias) != 0)) return false;
  *col = tcol_of(p, c);
  return *col >= 0;
}

static int32_t refers_to(json_t *j, const char *qual, int depth);

/* AND of `n` nodes (borrowed) as a new node; the node itself when n = 1. */
static json_t *and_of(json_t *const *nodes, size_t n) {
  if (n == 1) return json_incref(nodes[0]);
  json_t *args = json_array();
  for (size_t i = 0; i < n && args != NULL; i++) json_array_append(args, nodes[i]);
  return json_pack("{s:{s:s,s:o,s:i}}", "BoolExpr", "boolop", "AND_EXPR", "args", args, "location",
                   -1);
}

/* ON: the key equalities. With `rest` (UPDATE ... FROM's WHERE), the
 * conjuncts that are not key equalities go to *rest (a new array) and
 * the keys' conjuncts to *keys, instead of being refused. */
static hs_status on_keys(mplan *p, json_t *on, json_t **keys, json_t **rest, int32_t *pos,
                         hs_error *err) {
  json_t *and = json_object_get(on, "BoolExpr");
  const char *op = jstr(and, "boolop");
  json_t *single = json_array();
  json_t *list = single;
  if (and != NULL && op != NULL && strcmp(op, "AND_EXPR") == 0)
    list = json_object_get(and, "args");
  else
    json_array_append(single, on);
  hs_status st = HS_OK;
  size_t i;
  json_t *e;
  json_array_foreach(list, i, e) {
    json_t *x = json_object_get(e, "A_Expr");
    json_t *name = json_object_get(x, "name");
    const char *o = jstr(json_object_get(json_array_get(name, 0), "String"), "sval");
    *pos = hs_sql_ddl_pos(x != NULL ? x : e);
    int32_t lc = -1, rc = -1;
    bool l = x != NULL && target_ref(p, json_object_get(x, "lexpr"), &lc);
    bool r = x != NULL && target_ref(p, json_object_get(x, "rexpr"), &rc);
    bool key = x != NULL && o != NULL && strcmp(o, "=") == 0 && json_array_size(name) == 1 &&
               strcmp(jstr(x, "kind") ? jstr(x, "kind") : "", "AEXPR_OP") == 0 && l != r;
    if (key && rest != NULL) { /* a key: the other side must be the source's */
      key = refers_to(json_object_get(x, l ? "rexpr" : "lexpr"), p->talias, 0) == 0;
      for (int32_t k = 0; k < p->nk && key; k++) key = p->keys[k] != (l ? lc : rc);
    }
    if (!key && rest != NULL) {
      json_array_append(*rest, e);
      continue;
    }
    if (!key) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "at position %d: MERGE's ON must be equalities of target columns to "
                        "source expressions (%s.k = s.k [AND ...]); put other conditions in "
                        "WHEN ... AND",
                        *pos, p->talias);
      break;
    }
    if (p->nk == MERGE_KEYS_MAX) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED, "MERGE: at most %d key equalities in ON",
                        MERGE_KEYS_MAX);
      break;
    }
    p->keys[p->nk] = l ? lc : rc;
    p->src_keys[p->nk] = json_object_get(x, l ? "rexpr" : "lexpr");
    if (keys != NULL) json_array_append(*keys, e);
    for (int32_t k = 0; k < p->nk; k++)
      if (p->keys[k] == p->keys[p->nk])
        st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "at position %d: MERGE's ON names column \"%s\" twice", *pos,
                          p->tnames[p->keys[k]]);
    p->nk++;
  }
  json_decref(single);
  if (st == HS_OK) *pos = 0;
  return st;
}

/* The position of a ColumnRef `qual`.x in `j` (0: none). */
static int32_t refers_to(json_t *j, const char *qual, int depth) {
  const char *q, *c;
  if (depth > 200) return 0;
  if (json_object_get(j, "ColumnRef") != NULL && colref_names(j, &q, &c) == 2 &&
      strcmp(q, qual) == 0)
    return hs_sql_ddl_pos(json_object_get(j, "ColumnRef"));
  int32_t at = 0;
  const char *k;
  size_t i;
  json_t *v;
  if (json_is_object(j))
    json_object_foreach(j, k, v) if (at == 0) at = refers_to(v, qual, depth + 1);
  if (json_is_array(j)) json_array_foreach(j, i, v) if (at == 0) at = refers_to(v, qual, depth + 1);
  return at;
}

/* The WHEN clauses. */
static hs_status when_clauses(mplan *p, json_t *list, hs_arena *A, int32_t *pos, hs_error *err) {
  p->ncl = json_array_size(list);
  if (p->ncl == 0 || p->ncl > MERGE_CLAUSES_MAX)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "MERGE needs 1 to %d WHEN clauses",
                        MERGE_CLAUSES_MAX);
  p->cl = hs_arena_alloc(A, sizeof(*p->cl) * p->ncl);
  if (p->cl == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  memset(p->cl, 0, sizeof(*p->cl) * p->ncl);
  for (size_t i = 0; i < p->ncl; i++) {
    json_t *w = json_object_get(json_array_get(list, i), "MergeWhenClause");
    mclause *c = &p->cl[i];
    const char *cmd = jstr(w, "commandType");
    c->matched = json_is_true(json_object_get(w, "matched"));
    c->cond = json_object_get(w, "condition");
    c->pos = *pos = hs_sql_ddl_pos(w);
    c->kind = cmd == NULL                      ? MC_NOTHING
              : strcmp(cmd, "CMD_UPDATE") == 0 ? MC_UPDATE
              : strcmp(cmd, "CMD_DELETE") == 0 ? MC_DELETE
              : strcmp(cmd, "CMD_INSERT") == 0 ? MC_INSERT
                                               : MC_NOTHING;
    if (cmd == NULL || (c->kind == MC_NOTHING && strcmp(cmd, "CMD_NOTHING") != 0))
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "MERGE: WHEN ... THEN %s is not supported",
                          cmd != NULL ? cmd : "(none)");
    json_t *tl = json_object_get(w, "targetList");
    if (c->kind == MC_UPDATE) {
      c->n_vals = json_array_size(tl);
      hs_sql_set_item *it = hs_arena_alloc(A, sizeof(*it) * (c->n_vals ? c->n_vals : 1));
      c->vals = hs_arena_alloc(A, sizeof(json_t *) * (c->n_vals ? c->n_vals : 1));
      c->tcols = hs_arena_alloc(A, sizeof(int32_t) * (c->n_vals ? c->n_vals : 1));
      if (it == NULL || c->vals == NULL || c->tcols == NULL)
        return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      hs_status st = hs_sql_ddl_set_items(tl, &p->schema, p->table, it, c->n_vals, pos, err);
      if (st != HS_OK) return st;
      for (size_t j = 0; j < c->n_vals; j++) {
        c->vals[j] = it[j].val;
        c->tcols[j] = it[j].tcol;
      }
      p->updates = true;
    } else if (c->kind == MC_INSERT) {
      json_t *values = json_object_get(w, "values");
      c->n_vals = json_array_size(values);
      size_t n_cols = tl != NULL ? json_array_size(tl) : (size_t)p->n_tcols;
      if (values == NULL || c->n_vals == 0)
        return hs_error_set(err, HS_ERR_UNSUPPORTED,
                            "at position %d: MERGE ... INSERT DEFAULT VALUES is not supported "
                            "(write VALUES (...))",
                            c->pos);
      if (c->n_vals != n_cols)
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "at position %d: INSERT has %s expressions than target columns "
                            "(%zu vs %zu)",
                            c->pos, c->n_vals > n_cols ? "more" : "fewer", c->n_vals, n_cols);
      c->vals = hs_arena_alloc(A, sizeof(json_t *) * c->n_vals);
      c->tcols = hs_arena_alloc(A, sizeof(int32_t) * c->n_vals);
      if (c->vals == NULL || c->tcols == NULL)
        return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      for (size_t j = 0; j < c->n_vals; j++) {
        c->vals[j] = json_array_get(values, j);
        if (json_object_get(c->vals[j], "SetToDefault") != NULL)
          return hs_error_set(err, HS_ERR_UNSUPPORTED,
                              "at position %d: DEFAULT is not supported (columns have no "
                              "defaults; write NULL)",
                              hs_sql_ddl_pos(json_object_get(c->vals[j], "SetToDefault")));
        c->tcols[j] = (int32_t)j;
        if (tl == NULL) continue;
        json_t *rt = json_object_get(json_array_get(tl, j), "ResTarget");
        const char *name = jstr(rt, "name");
        *pos = hs_sql_ddl_pos(rt);
        c->tcols[j] = name != NULL ? tcol_of(p, name) : -1;
        if (c->tcols[j] < 0)
          return hs_error_set(err, HS_ERR_INVALID_ARG,
                              "at position %d: column \"%s\" of relation \"%s\" does not exist",
                              *pos, name != NULL ? name : "?", p->table);
        for (size_t k = 0; k < j; k++)
          if (c->tcols[k] == c->tcols[j])
            return hs_error_set(err, HS_ERR_INVALID_ARG,
                                "at position %d: column \"%s\" specified more than once", *pos,
                                name);
      }
    }
    if (c->matched ? c->kind == MC_INSERT : (c->kind == MC_UPDATE || c->kind == MC_DELETE))
      return hs_error_set(err, HS_ERR_INVALID_ARG, "at position %d: WHEN %sMATCHED cannot %s",
                          c->pos, c->matched ? "" : "NOT ",
                          c->kind == MC_INSERT ? "INSERT" : "UPDATE or DELETE");
    int32_t bad = c->matched ? 0 : refers_to(c->cond, p->talias, 0);
    for (size_t j = 0; !c->matched && j < c->n_vals && bad == 0; j++)
      bad = refers_to(c->vals[j], p->talias, 0);
    if (bad != 0) /* a NOT MATCHED row has no target row */
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "at position %d: invalid reference to FROM-clause entry for table "
                          "\"%s\" (WHEN NOT MATCHED sees only the source)",
                          *pos = bad, p->talias);
    for (size_t k = 0; k < i; k++)
      if (p->cl[k].matched == c->matched && p->cl[k].cond == NULL)
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "at position %d: unreachable WHEN clause specified after "
                            "unconditional WHEN clause",
                            c->pos);
    if (!c->matched) p->not_matched = true;
    if (c->kind == MC_UPDATE || c->kind == MC_DELETE) p->changes = true;
  }
  *pos = 0;
  return HS_OK;
}

/* ------------------------------------------------ the SELECT, as text */

/* The SELECT is written as SQL with placeholders (__hs_pN: a column
 * reference, or a FROM item) for the statement's own parse nodes, parsed,
 * and the nodes spliced in, so they keep their positions in `sql`. */
typedef struct tmpl {
  hs_buf b;
  json_t **nodes; /* borrowed */
  size_t n, cap;
  bool oom;
} tmpl;

static void put(tmpl *t, const char *s) {
  if (!hs_buf_append(&t->b, s, strlen(s))) t->oom = true;
}

static void put_ident(tmpl *t, const char *s) {
  put(t, "\"");
  for (; *s; s++) {
    char c[3] = {*s, *s == '"' ? '"' : '\0', '\0'};
    put(t, c);
  }
  put(t, "\"");
}

static void put_col(tmpl *t, const char *qual, const char *col) {
  put_ident(t, qual);
  put(t, ".");
  put_ident(t, col);
}

/* A placeholder for node `n` (borrowed). */
static void put_node(tmpl *t, json_t *n) {
  char name[32];
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 64;
    json_t **nn = hs_realloc(t->nodes, cap * sizeof(*nn));
    if (nn == NULL) {
      t->oom = true;
      return;
    }
    t->nodes = nn, t->cap = cap;
  }
  snprintf(name, sizeof name, "__hs_p%zu", t->n);
  t->nodes[t->n++] = n;
  put(t, name);
}

/* WHEN c1 THEN r1 ... for the clauses, "matched" read from the first key. */
static void put_case(tmpl *t, const mplan *p, const int64_t *results) {
  put(t, "CASE");
  for (size_t i = 0; i < p->ncl; i++) {
    put(t, " WHEN (");
    put_col(t, p->talias, p->tnames[p->keys[0]]);
    put(t, p->cl[i].matched ? " IS NOT NULL" : " IS NULL");
    if (p->cl[i].cond != NULL) {
      put(t, ") AND (");
      put_node(t, p->cl[i].cond);
    }
    char r[32];
    snprintf(r, sizeof r, ") THEN %lld", (long long)results[i]);
    put(t, r);
  }
  put(t, " ELSE 0 END");
}

static void put_keys(tmpl *t, const mplan *p) {
  for (int32_t k = 0; k < p->nk; k++) {
    if (k) put(t, ", ");
    put_col(t, p->talias, p->tnames[p->keys[k]]);
  }
}

static void merge_text(tmpl *t, const mplan *p, int64_t sid) {
  int64_t results[MERGE_CLAUSES_MAX];
  put(t, "SELECT CAST(");
  for (size_t i = 0; i < p->ncl; i++) results[i] = (int64_t)i + 1;
  put_case(t, p, results);
  put(t, " AS int)");
  if (p->changes || p->unique_inserts) {
    for (size_t i = 0; i < p->ncl; i++)
      results[i] = p->cl[i].kind == MC_UPDATE || p->cl[i].kind == MC_DELETE;
    put(t, ", CAST(sum(");
    put_case(t, p, results);
    put(t, ") OVER (PARTITION BY ");
    put_keys(t, p);
    put(t, ") AS bigint), CAST(count(*) OVER (PARTITION BY ");
    put_keys(t, p);
    put(t, ") AS bigint), ");
    put_col(t, p->salias, "__hs_nsrc");
  } else {
    put(t, ", CAST(0 AS bigint), CAST(0 AS bigint), CAST(0 AS bigint)");
  }
  put(t, ", CAST(CASE WHEN ");
  for (int32_t k = 0; k < p->nk; k++) {
    put(t, k ? " OR (" : "(");
    put_node(t, p->src_keys[k]);
    put(t, ") IS NULL");
  }
  put(t, " THEN 1 ELSE 0 END AS int)");
  for (int32_t k = 0; k < p->nk; k++) {
    put(t, ", ");
    put_col(t, p->talias, p->tnames[p->keys[k]]);
  }
  for (int32_t j = 0; p->updates && j < p->n_tcols; j++) {
    put(t, ", ");
    put_col(t, p->talias, p->tnames[j]);
  }
  if (p->updates && p->lineage) {
    put(t, ", ");
    put_col(t, p->talias, HS_LINEAGE_ROW_ID);
  }
  for (size_t i = 0; i < p->ncl; i++)
    for (size_t j = 0; j < p->cl[i].n_vals; j++) {
      put(t, ", ");
      put_node(t, p->cl[i].vals[j]);
    }
  put(t, " FROM ");
  if (p->changes || p->unique_inserts) { /* the source with its rows per key */
    put(t, "(SELECT ");
    put_ident(t, p->salias);
    put(t, ".*, count(*) OVER (PARTITION BY ");
    for (int32_t k = 0; k < p->nk; k++) {
      if (k) put(t, ", ");
      put_node(t, p->src_keys[k]);
    }
    put(t, ") AS __hs_nsrc FROM ");
    put_node(t, p->source);
    put(t, ") AS ");
    put_ident(t, p->salias);
  } else {
    put_node(t, p->source);
  }
  put(t, p->not_matched ? " LEFT JOIN " : " JOIN ");
  if (sid >= 0) { /* the target as of the snapshot the change is decided on */
    put(t, "hs_snapshot('");
    for (const char *s = p->table; *s; s++) put(t, *s == '\'' ? "''" : (char[2]){*s, 0});
    char sn[32];
    snprintf(sn, sizeof sn, "', %lld)", (long long)sid);
    put(t, sn);
  } else { /* no snapshot yet: no rows */
    put_ident(t, p->table);
  }
  put(t, " AS ");
  put_ident(t, p->talias);
  put(t, " ON ");
  put_node(t, p->on);
}

/* The placeholder index of a ColumnRef or RangeVar "__hs_pN"; -1: none. */
static long placeholder(json_t *v) {
  const char *name = NULL, *q;
  if (json_object_get(v, "ColumnRef") != NULL && colref_names(v, &q, &name) != 1) name = NULL;
  if (name == NULL) name = jstr(json_object_get(v, "RangeVar"), "relname");
  if (name == NULL || strncmp(name, "__hs_p", 6) != 0) return -1;
  return strtol(name + 6, NULL, 10);
}

/* The template's own positions removed (they index another text), then
 * the placeholders replaced by the statement's nodes. */
static void strip_locations(json_t *j, int depth) {
  if (depth > 200) return;
  if (json_is_object(j)) {
    json_object_del(j, "location");
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v) strip_locations(v, depth + 1);
  } else if (json_is_array(j)) {
    size_t i;
    json_t *v;
    json_array_foreach(j, i, v) strip_locations(v, depth + 1);
  }
}

static void splice(json_t *j, const tmpl *t, int depth) {
  if (depth > 200) return;
  if (json_is_object(j)) {
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(j, tmp, k, v) {
      long i = placeholder(v);
      if (i >= 0 && (size_t)i < t->n)
        json_object_set(j, k, t->nodes[i]);
      else
        splice(v, t, depth + 1);
    }
  } else if (json_is_array(j)) {
    size_t n = json_array_size(j);
    for (size_t i = 0; i < n; i++) {
      json_t *v = json_array_get(j, i);
      long x = placeholder(v);
      if (x >= 0 && (size_t)x < t->n)
        json_array_set(j, i, t->nodes[x]);
      else
        splice(v, t, depth + 1);
    }
  }
}

/* The SelectStmt node (a new reference) of the merge's SELECT at `sid`. */
static hs_status merge_select(const mplan *p, int64_t sid, json_t **out, hs_error *err) {
  tmpl t;
  memset(&t, 0, sizeof t);
  hs_buf_init(&t.b);
  merge_text(&t, p, sid);
  if (!hs_buf_append_byte(&t.b, 0)) t.oom = true;
  if (t.oom) {
    hs_buf_free(&t.b);
    hs_free(t.nodes);
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  }
  PgQueryParseResult r = pg_query_parse((const char *)t.b.data);
  hs_status st = HS_OK;
  json_t *root = NULL;
  if (r.error != NULL || r.parse_tree == NULL) {
    st = hs_error_set(err, HS_ERR_INTERNAL, "MERGE: its SELECT did not parse: %s",
                      r.error != NULL && r.error->message ? r.error->message : "no tree");
  } else {
    json_error_t jerr;
    root = json_loads(r.parse_tree, 0, &jerr);
    if (root == NULL) st = hs_error_set(err, HS_ERR_INTERNAL, "MERGE: %s", jerr.text);
  }
  pg_query_free_parse_result(r);
  hs_buf_free(&t.b);
  json_t *node = json_object_get(json_array_get(json_object_get(root, "stmts"), 0), "stmt");
  if (st == HS_OK && node == NULL) st = hs_error_set(err, HS_ERR_INTERNAL, "MERGE: no SELECT");
  if (st == HS_OK) {
    strip_locations(node, 0);
    splice(node, &t, 0);
    *out = json_incref(node);
  }
  json_decref(root);
  hs_free(t.nodes);
  return st;
}

/* ------------------------------------------------------ the results */

/* Rows `sel` of result columns cols[0..n) (-1: NULLs), assigned to
 * types[0..n) (columns names[0..n)), as one Arrow batch. */
static hs_status take_rows(const hs_sql_chunk *c, const int32_t *cols, int32_t n,
                           const hs_sql_type *types, const char *const *names, const int64_t *sel,
                           int64_t n_sel, struct ArrowArray *out, hs_error *err) {
  hs_sql_chunk view = {0}, took = {0}, typed = {0};
  hs_status st = hs_sql_chunk_init(&view, n, c->n, err);
  for (int32_t j = 0; j < n && st == HS_OK; j++)
    st = cols[j] >= 0
             ? hs_sql_vec_share(&view.cols[j], &c->cols[cols[j]], err)
             : hs_sql_vec_alloc(&view.cols[j], hs_sql_type_of(HS_SQL_NULLTYPE), c->n, true, err);
  if (st == HS_OK) st = hs_sql_chunk_take(&took, &view, sel, n_sel, err);
  if (st == HS_OK) st = hs_sql_chunk_init(&typed, n, n_sel, err);
  for (int32_t j = 0; j < n && st == HS_OK; j++)
    st = hs_sql_ddl_assign(&took.cols[j], types[j], names[j], &typed.cols[j], err);
  if (st == HS_OK) st = hs_sql_chunk_to_arrow_as(&typed, types, out, err);
  hs_sql_chunk_release(&view);
  hs_sql_chunk_release(&took);
  hs_sql_chunk_release(&typed);
  return st;
}

typedef struct batches {
  struct ArrowArray *a;
  size_t n, cap;
} batches;

static hs_status batches_add(batches *b, struct ArrowArray *a, hs_error *err) {
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 8;
    struct ArrowArray *na = hs_realloc(b->a, cap * sizeof(*na));
    if (na == NULL) {
      a->release(a);
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    }
    b->a = na, b->cap = cap;
  }
  b->a[b->n++] = *a;
  return HS_OK;
}

/* One result chunk: checks, then its keys and new rows. */
static hs_status merge_chunk(mplan *p, const hs_sql_chunk *c, batches *keys, batches *rows,
                             int64_t *count, int64_t *sel_keys, hs_error *err) {
  const int32_t *action = c->cols[R_ACTION].data;
  const int64_t *changed = c->cols[R_CHANGED].data, *joined = c->cols[R_JOINED].data,
                *nsrc = c->cols[R_NSRC].data;
  const int32_t *srcnull = c->cols[R_SRCNULL].data;
  int64_t nkeys = 0;
  for (size_t i = 0; i < p->ncl; i++) p->cl[i].n_sel = 0;
  for (int64_t r = 0; r < c->n; r++) {
    if (action[r] <= 0) continue;
    mclause *cl = &p->cl[action[r] - 1];
    cl->sel[cl->n_sel++] = r;
    if (cl->kind == MC_NOTHING) continue;
    (*count)++;
    if (cl->kind == MC_INSERT) {
      if (p->unique_inserts && nsrc[r] > 1 && srcnull[r] == 0)
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "%s: two rows to insert have the same conflict key (PostgreSQL "
                            "would %s): remove the duplicates",
                            p->verb,
                            p->changes ? "refuse to affect the row a second time"
                                       : "insert the first and skip the others");
      continue;
    }
    sel_keys[nkeys++] = r;
    if (changed[r] * nsrc[r] > joined[r])
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "%s command cannot affect row a second time (a target row matched "
                          "more than one source row: make the source's keys unique)",
                          p->verb);
    if (changed[r] * nsrc[r] < joined[r])
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "%s: target rows sharing a key would change only in part (the "
                          "change replaces rows by key: give the target unique keys, or make "
                          "the conditions the same for them)",
                          p->verb);
  }
  int32_t cols[4096 + 2];
  hs_sql_type types[MERGE_KEYS_MAX];
  const char *names[MERGE_KEYS_MAX];
  hs_status st = HS_OK;
  if (nkeys > 0) {
    for (int32_t k = 0; k < p->nk; k++) {
      cols[k] = R_KEYS + k;
      types[k] = p->ttypes[p->keys[k]];
      names[k] = p->tnames[p->keys[k]];
    }
    struct ArrowArray a;
    st = take_rows(c, cols, p->nk, types, names, sel_keys, nkeys, &a, err);
    if (st == HS_OK) st = batches_add(keys, &a, err);
  }
  int32_t n_out = p->n_tcols + (p->lineage ? 2 : 0);
  for (size_t i = 0; i < p->ncl && st == HS_OK; i++) {
    mclause *cl = &p->cl[i];
    if (cl->n_sel == 0 || (cl->kind != MC_UPDATE && cl->kind != MC_INSERT)) continue;
    for (int32_t j = 0; j < n_out; j++) cols[j] = cl->kind == MC_UPDATE ? p->tcol_first + j : -1;
    for (size_t v = 0; v < cl->n_vals; v++) cols[cl->tcols[v]] = cl->first + (int32_t)v;
    if (p->lineage) cols[p->n_tcols + 1] = -1; /* modified: inherits the commit's sequence */
    struct ArrowArray a;
    st = take_rows(c, cols, n_out, p->ttypes, p->tnames, cl->sel, cl->n_sel, &a, err);
    if (st == HS_OK) st = batches_add(rows, &a, err);
  }
  return st;
}

/* The target's columns; each must be one SQL reads and writes back as it is. */
static hs_status target_columns(mplan *p, hs_table *t, hs_arena *A, hs_error *err) {
  hs_status st = hs_table_schema(t, &p->schema, err);
  if (st != HS_OK) return st;
  int64_t n = p->schema.n_children;
  if (n > 4000) return hs_error_set(err, HS_ERR_UNSUPPORTED, "MERGE: too many columns");
  p->n_tcols = (int32_t)n;
  p->ttypes = hs_arena_alloc(A, sizeof(hs_sql_type) * (size_t)(n + 3));
  p->tnames = hs_arena_alloc(A, sizeof(char *) * (size_t)(n + 3));
  if (p->ttypes == NULL || p->tnames == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (int64_t i = 0; i < n; i++) {
    const struct ArrowSchema *f = p->schema.children[i];
    char why[160];
    p->tnames[i] = f->name;
    if (!hs_sql_type_from_arrow(f, &p->ttypes[i], why, sizeof why))
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "MERGE: column \"%s\": %s (tables with such columns merge through "
                          "t.merge(source, on=...) from Python)",
                          f->name, why);
    struct ArrowSchema one;
    memset(&one, 0, sizeof one);
    st = hs_sql_schema_to_arrow(&p->ttypes[i], &p->tnames[i], 1, &one, err);
    bool same = st == HS_OK && hs_arrow_schema_same_layout(one.children[0], f);
    hs_arrow_schema_release(&one);
    if (st != HS_OK) return st;
    if (!same)
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "MERGE: column \"%s\" (Arrow type %s) cannot be written by SQL (use "
                          "t.merge(source, on=...) from Python)",
                          f->name, f->format);
  }
  p->lineage = t->meta.format_version >= 3;
  p->ttypes[n] = p->ttypes[n + 1] = hs_sql_type_of(HS_SQL_INT64);
  p->tnames[n] = HS_LINEAGE_ROW_ID;
  p->tnames[n + 1] = HS_LINEAGE_SEQ;
  return HS_OK;
}

/* The merge's SELECT at `sid`, bound and optimized: *node (its parse
 * tree, which the plan's names point into) and *pc (the plan's context)
 * are the caller's to free, on every return. */
static hs_status merge_plan(mplan *p, const hs_sql_bind_opts *bo, const char *sql, int64_t sid,
                            json_t **node, hs_sql_plan_ctx **pc, hs_sql_plan **plan, int32_t *pos,
                            hs_error *err) {
  *node = NULL;
  *pc = NULL;
  hs_status st = merge_select(p, sid, node, err);
  if (st == HS_OK && (*pc = hs_sql_ddl_ctx_new()) == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  if (st == HS_OK) st = hs_sql_bind_query_node(sql, *node, bo, *pc, plan, pos, err);
  return st;
}

/* One attempt at the table's current snapshot. */
static hs_status merge_once(mplan *p, const hs_sql_bind_opts *bo, const char *sql, hs_table *t,
                            int64_t *count, int32_t *pos, hs_error *err) {
  *count = 0;
  int64_t sid = hs_table_current_snapshot_id(t);
  json_t *node;
  hs_sql_plan_ctx *pc;
  hs_sql_plan *plan = NULL;
  hs_sql_exec *x = NULL;
  hs_sql_chunk *chunks = NULL;
  size_t nc = 0;
  hs_status st = merge_plan(p, bo, sql, sid, &node, &pc, &plan, pos, err);
  if (st == HS_OK) st = hs_sql_ddl_run(bo, plan, &chunks, &nc, &x, err);
  *pos = 0;
  int64_t most = 1;
  for (size_t i = 0; i < nc; i++) most = chunks[i].n > most ? chunks[i].n : most;
  int64_t *sel = st == HS_OK ? hs_malloc(sizeof(int64_t) * (size_t)most * (p->ncl + 1)) : NULL;
  if (st == HS_OK && sel == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < p->ncl && sel != NULL; i++) p->cl[i].sel = sel + most * (int64_t)(i + 1);
  batches keys = {0}, rows = {0};
  for (size_t i = 0; i < nc && st == HS_OK; i++)
    st = merge_chunk(p, &chunks[i], &keys, &rows, count, sel, err);
  hs_free(sel);
  hs_sql_ddl_free_chunks(chunks, nc);
  hs_sql_exec_free(x);
  hs_sql_plan_ctx_free(pc);
  json_decref(node);
  struct ArrowSchema ks, rs;
  memset(&ks, 0, sizeof ks);
  memset(&rs, 0, sizeof rs);
  const char *knames[MERGE_KEYS_MAX];
  for (int32_t k = 0; k < p->nk; k++) knames[k] = p->tnames[p->keys[k]];
  size_t missing = 0;
  if (st == HS_OK && keys.n > 0)
    st = hs_arrow_schema_project(&p->schema, knames, (size_t)p->nk, &ks, &missing, err);
  struct ArrowArrayStream app;
  memset(&app, 0, sizeof app);
  if (st == HS_OK && rows.n > 0) {
    static const char *const lin[2] = {HS_LINEAGE_ROW_ID, HS_LINEAGE_SEQ};
    st = hs_arrow_schema_copy(&p->schema, &rs, err);
    if (st == HS_OK && p->lineage) st = hs_lineage_schema_add(t, lin, 2, NULL, &rs, err);
    if (st == HS_OK) {
      st = hs_arrow_stream_from_batches(&rs, rows.a, rows.n, &app, err);
      rows.n = 0; /* the stream's now, or released */
    } else if (rs.release != NULL) {
      hs_arrow_schema_release(&rs);
    }
  }
  if (st == HS_OK && (keys.n > 0 || app.release != NULL)) {
    hs_row_change c;
    memset(&c, 0, sizeof c);
    c.what = "MERGE";
    c.snapshot_id = sid;
    c.mode_property = "write.merge.mode";
    c.key_columns = knames;
    c.n_key_columns = keys.n > 0 ? (size_t)p->nk : 0;
    c.keys_schema = keys.n > 0 ? &ks : NULL;
    c.keys = keys.a;
    c.n_keys_batches = keys.n;
    if (app.release != NULL) c.appends = &app, c.n_appends = 1;
    hs_row_change_result res;
    memset(&res, 0, sizeof res);
    st = hs_table_change_rows(t, &c, &res, err);
  } else if (app.release != NULL) {
    app.release(&app);
  }
  hs_arrow_batches_free(keys.a, keys.n);
  hs_arrow_batches_free(rows.a, rows.n);
  if (ks.release != NULL) hs_arrow_schema_release(&ks);
  return st;
}

/* EXPLAIN: the plan of the SELECT a merge runs at `sid`, as text rows. */
static hs_status merge_explain(mplan *p, const hs_sql_bind_opts *bo, const char *sql, int64_t sid,
                               struct ArrowArrayStream *out, int32_t *pos, hs_error *err) {
  json_t *node;
  hs_sql_plan_ctx *pc;
  hs_sql_plan *plan = NULL;
  char *text = NULL;
  hs_status st = merge_plan(p, bo, sql, sid, &node, &pc, &plan, pos, err);
  if (st == HS_OK) st = hs_sql_plan_explain(plan, &text, err);
  if (st == HS_OK) st = hs_sql_text_stream("QUERY PLAN", text, out, err);
  hs_free(text);
  hs_sql_plan_ctx_free(pc);
  json_decref(node);
  return st;
}

/* MERGE (whens: its WHEN clauses, cond: its ON) or UPDATE ... FROM / DELETE
 * ... USING (whens NULL: cond is the WHERE, split into the key equalities
 * and one WHEN MATCHED AND <the rest> THEN UPDATE SET <set_list>, or DELETE
 * when set_list is NULL); `explain`: the plan instead of the change. */
static hs_status merge_run(const hs_sql_bind_opts *bo, const char *sql, json_t *rel, json_t *source,
                           json_t *cond, json_t *whens, json_t *set_list, const char *verb,
                           bool unique_inserts, bool explain, struct ArrowArrayStream *out,
                           int32_t *pos, hs_error *err) {
  hs_sql_plan_ctx *pc = hs_sql_ddl_ctx_new();
  if (pc == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  mplan p;
  memset(&p, 0, sizeof p);
  p.verb = verb;
  p.unique_inserts = unique_inserts;
  p.table = jstr(rel, "relname");
  p.talias = alias_of(rel) != NULL ? alias_of(rel) : p.table;
  p.source = source;
  p.on = cond;
  json_t *src = json_object_get(p.source, "RangeVar");
  if (src == NULL) src = json_object_get(p.source, "RangeSubselect");
  p.salias = alias_of(src) != NULL ? alias_of(src) : jstr(src, "relname");
  hs_sql_rel *r = NULL;
  hs_table *t = NULL;
  json_t *keys = NULL, *rest = NULL, *on = NULL, *when = NULL;
  hs_status st = hs_sql_ddl_open_target(bo, pc, rel, verb, true, &r, &t, pos, err);
  if (st == HS_OK && (p.salias == NULL || p.on == NULL))
    st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                      whens != NULL ? "at position %d: MERGE's USING must be a table or a "
                                      "subquery with an alias"
                                    : "at position %d: UPDATE ... FROM takes one table or "
                                      "subquery with an alias, and a WHERE joining it",
                      *pos);
  if (st == HS_OK && strcmp(p.salias, p.talias) == 0)
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "at position %d: %s's source and target are both named \"%s\" (give "
                      "one an alias)",
                      *pos, verb, p.talias);
  if (st == HS_OK) st = target_columns(&p, t, &pc->arena, err);
  if (st == HS_OK && whens == NULL) { /* UPDATE ... FROM: keys from the WHERE */
    keys = json_array();
    rest = json_array();
    if (keys == NULL || rest == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    if (st == HS_OK) st = on_keys(&p, p.on, &keys, &rest, pos, err);
    if (st == HS_OK && p.nk == 0)
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s needs WHERE %s.k = %s.k equalities joining the target to the source",
                        verb, p.talias, p.salias);
    json_t *kn[MERGE_KEYS_MAX], *rn[256];
    size_t nr = json_array_size(rest);
    if (st == HS_OK && nr > 256)
      st = hs_error_set(err, HS_ERR_UNSUPPORTED, "UPDATE ... FROM: too many conditions");
    for (size_t i = 0; st == HS_OK && i < (size_t)p.nk; i++) kn[i] = json_array_get(keys, i);
    for (size_t i = 0; st == HS_OK && i < nr; i++) rn[i] = json_array_get(rest, i);
    if (st == HS_OK) {
      on = and_of(kn, (size_t)p.nk);
      json_t *c = nr > 0 ? and_of(rn, nr) : NULL;
      /* UPDATE ... FROM sets; DELETE ... USING (no SET list) deletes */
      json_t *mw = set_list != NULL
                       ? json_pack("{s:b,s:s,s:O}", "matched", 1, "commandType", "CMD_UPDATE",
                                   "targetList", set_list)
                       : json_pack("{s:b,s:s}", "matched", 1, "commandType", "CMD_DELETE");
      if (mw != NULL && c != NULL) json_object_set_new(mw, "condition", c);
      when = json_pack("[{s:o}]", "MergeWhenClause", mw);
      if (on == NULL || when == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      p.on = on;
      whens = when;
    }
  } else if (st == HS_OK) {
    st = on_keys(&p, p.on, NULL, NULL, pos, err);
  }
  if (st == HS_OK) st = when_clauses(&p, whens, &pc->arena, pos, err);
  /* the result columns: R_KEYS + keys, the target's columns, the values */
  int32_t at = R_KEYS + p.nk;
  p.tcol_first = at;
  if (p.updates) at += p.n_tcols + (p.lineage ? 1 : 0);
  for (size_t i = 0; st == HS_OK && i < p.ncl; i++) {
    p.cl[i].first = at;
    at += (int32_t)p.cl[i].n_vals;
  }
  int64_t count = 0;
  if (st == HS_OK && explain) {
    st = merge_explain(&p, bo, sql, hs_table_current_snapshot_id(t), out, pos, err);
    explain = st == HS_OK; /* the stream is made: no count stream below */
  }
  for (int attempt = 0; st == HS_OK && !explain; attempt++) {
    st = merge_once(&p, bo, sql, t, &count, pos, err);
    if (st != HS_ERR_CONFLICT || attempt + 1 >= MERGE_ATTEMPTS) break;
    if (err != NULL) memset(err, 0, sizeof *err);
    st = hs_table_refresh(t, err);
  }
  if (p.schema.release != NULL) hs_arrow_schema_release(&p.schema);
  hs_sql_rel_close(r, t);
  hs_sql_plan_ctx_free(pc);
  json_decref(keys);
  json_decref(rest);
  json_decref(on);
  json_decref(when);
  if (st != HS_OK || explain) return st;
  *pos = 0;
  return hs_sql_ddl_count_stream(count, out, err);
}

hs_status hs_sql_ddl_merge(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                           struct ArrowArrayStream *out, int32_t *pos, hs_error *err) {
  if (json_object_get(body, "withClause") != NULL)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "WITH ... MERGE is not supported");
  if (json_object_get(body, "returningList") != NULL)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "MERGE ... RETURNING is not supported");
  return merge_run(bo, sql, json_object_get(body, "relation"),
                   json_object_get(body, "sourceRelation"), json_object_get(body, "joinCondition"),
                   json_object_get(body, "mergeWhenClauses"), NULL, "MERGE", false, false, out, pos,
                   err);
}

/* UPDATE ... FROM and DELETE ... USING: one FROM item (`key`) joined by the
 * WHERE; `set_list` NULL deletes. */
static hs_status join_change(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                             const char *key, const char *verb, json_t *set_list, bool explain,
                             struct ArrowArrayStream *out, int32_t *pos, hs_error *err) {
  json_t *from = json_object_get(body, key);
  if (json_array_size(from) != 1)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s takes one table or subquery (join the others inside a subquery)", verb);
  return merge_run(bo, sql, json_object_get(body, "relation"), json_array_get(from, 0),
                   json_object_get(body, "whereClause"), NULL, set_list, verb, false, explain, out,
                   pos, err);
}

hs_status hs_sql_ddl_update_from(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                                 struct ArrowArrayStream *out, int32_t *pos, hs_error *err) {
  return join_change(bo, sql, body, "fromClause", "UPDATE ... FROM",
                     json_object_get(body, "targetList"), false, out, pos, err);
}

/* A ColumnRef qual.col (a new node). */
static json_t *qual_col(const char *qual, const char *col) {
  return json_pack("{s:{s:[{s:{s:s}},{s:{s:s}}],s:i}}", "ColumnRef", "fields", "String", "sval",
                   qual, "String", "sval", col, "location", -1);
}

/* CAST(e AS <t>) as a parse node (consumes e), the type name written by
 * hs_sql_type_name and parsed back; NULL when it does not parse. */
static json_t *cast_to(json_t *e, hs_sql_type t) {
  char name[96], text[160];
  hs_sql_type_name(t, name, sizeof name);
  snprintf(text, sizeof text, "SELECT CAST(NULL AS %s)", name);
  PgQueryParseResult r = pg_query_parse(text);
  json_t *root = r.error == NULL && r.parse_tree != NULL ? json_loads(r.parse_tree, 0, NULL) : NULL;
  pg_query_free_parse_result(r);
  json_t *sel = json_object_get(
      json_object_get(json_object_get(json_array_get(json_object_get(root, "stmts"), 0), "stmt"),
                      "SelectStmt"),
      "targetList");
  json_t *tn = json_object_get(
      json_object_get(json_object_get(json_object_get(json_array_get(sel, 0), "ResTarget"), "val"),
                      "TypeCast"),
      "typeName");
  json_t *out = tn != NULL ? json_pack("{s:{s:o,s:O,s:i}}", "TypeCast", "arg", e, "typeName", tn,
                                       "location", -1)
                           : NULL;
  if (tn == NULL) json_decref(e);
  json_decref(root);
  return out;
}

hs_status hs_sql_ddl_insert_on_conflict(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                                        const char *const *tnames, const hs_sql_type *ttypes,
                                        size_t n_tcols, struct ArrowArrayStream *out, int32_t *pos,
                                        hs_error *err) {
  json_t *oc = json_object_get(body, "onConflictClause");
  json_t *rel = json_object_get(body, "relation");
  const char *action = jstr(oc, "action");
  bool update = action != NULL && strcmp(action, "ONCONFLICT_UPDATE") == 0;
  json_t *elems = json_object_get(json_object_get(oc, "infer"), "indexElems");
  *pos = hs_sql_ddl_pos(oc);
  if (json_array_size(elems) == 0 || json_array_size(elems) > MERGE_KEYS_MAX)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "at position %d: name the conflict columns (ON CONFLICT (id) DO ...): "
                        "tables have no unique constraints to infer them from",
                        *pos);
  if (json_object_get(body, "returningList") != NULL || json_object_get(body, "withClause"))
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "INSERT ... ON CONFLICT with RETURNING or WITH is not supported");
  const char *talias = alias_of(rel) != NULL ? alias_of(rel) : jstr(rel, "relname");
  json_t *cols = json_object_get(body, "cols");
  size_t nc = cols != NULL ? json_array_size(cols) : n_tcols;
  /* the rows to insert as "excluded", named as the INSERT's columns */
  json_t *colnames = json_array(), *ins_cols = json_array(), *ins_vals = json_array();
  json_t *keys = json_array();
  for (size_t i = 0; i < nc && colnames != NULL && talias != NULL; i++) {
    const char *c = cols != NULL
                        ? jstr(json_object_get(json_array_get(cols, i), "ResTarget"), "name")
                        : tnames[i];
    if (c == NULL) continue;
    json_array_append_new(colnames, json_pack("{s:{s:s}}", "String", "sval", c));
    json_array_append_new(ins_cols,
                          json_pack("{s:{s:s,s:i}}", "ResTarget", "name", c, "location", -1));
    json_array_append_new(ins_vals, qual_col("excluded", c));
  }
  hs_status st = HS_OK;
  size_t i;
  json_t *e;
  json_array_foreach(elems, i, e) {
    const char *k = jstr(json_object_get(e, "IndexElem"), "name");
    size_t tc = 0;
    while (k != NULL && tc < n_tcols && strcmp(tnames[tc], k) != 0) tc++;
    if (k != NULL && tc == n_tcols) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG,
                        "at position %d: column \"%s\" named in ON CONFLICT does not exist", *pos,
                        k);
      break;
    }
    if (k == NULL || talias == NULL) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "at position %d: conflict targets are plain column names", *pos);
      break;
    }
    json_array_append_new(
        keys, json_pack("{s:{s:s,s:[{s:{s:s}}],s:o,s:o,s:i}}", "A_Expr", "kind", "AEXPR_OP", "name",
                        "String", "sval", "=", "lexpr", qual_col(talias, k), "rexpr",
                        cast_to(qual_col("excluded", k), ttypes[tc]), "location", -1));
  }
  json_t *source = json_pack("{s:{s:O,s:{s:s,s:O}}}", "RangeSubselect", "subquery",
                             json_object_get(body, "selectStmt"), "alias", "aliasname", "excluded",
                             "colnames", colnames);
  json_t *kn[MERGE_KEYS_MAX];
  size_t nk = json_array_size(keys);
  for (size_t k = 0; k < nk; k++) kn[k] = json_array_get(keys, k);
  json_t *on = nk > 0 ? and_of(kn, nk) : NULL;
  json_t *matched = update ? json_pack("{s:b,s:s,s:O}", "matched", 1, "commandType", "CMD_UPDATE",
                                       "targetList", json_object_get(oc, "targetList"))
                           : json_pack("{s:b,s:s}", "matched", 1, "commandType", "CMD_NOTHING");
  json_t *where = json_object_get(oc, "whereClause");
  if (matched != NULL && where != NULL) json_object_set(matched, "condition", where);
  json_t *whens =
      json_pack("[{s:o},{s:{s:s,s:O,s:O}}]", "MergeWhenClause", matched, "MergeWhenClause",
                "commandType", "CMD_INSERT", "targetList", ins_cols, "values", ins_vals);
  if (st == HS_OK && (source == NULL || on == NULL || whens == NULL))
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  if (st == HS_OK)
    st = merge_run(bo, sql, rel, source, on, whens, NULL,
                   update ? "ON CONFLICT DO UPDATE" : "ON CONFLICT DO NOTHING", true, false, out,
                   pos, err);
  json_decref(colnames);
  json_decref(ins_cols);
  json_decref(ins_vals);
  json_decref(keys);
  json_decref(source);
  json_decref(on);
  json_decref(whens);
  return st;
}

hs_status hs_sql_ddl_delete_using(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                                  struct ArrowArrayStream *out, int32_t *pos, hs_error *err) {
  return join_change(bo, sql, body, "usingClause", "DELETE ... USING", NULL, false, out, pos, err);
}

bool hs_sql_explain_is_merge(void *explain_body) {
  json_t *q = json_object_get(explain_body, "query");
  return json_object_get(q, "MergeStmt") != NULL ||
         json_object_get(json_object_get(q, "UpdateStmt"), "fromClause") != NULL ||
         json_object_get(json_object_get(q, "DeleteStmt"), "usingClause") != NULL;
}

hs_status hs_sql_ddl_explain_merge(const hs_sql_bind_opts *bo, const char *sql, json_t *body,
                                   struct ArrowArrayStream *out, int32_t *pos, hs_error *err) {
  size_t i;
  json_t *o;
  json_array_foreach(json_object_get(body, "options"), i, o) {
    const char *dn = jstr(json_object_get(o, "DefElem"), "defname");
    if (dn != NULL && strcmp(dn, "analyze") == 0)
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "EXPLAIN ANALYZE of a statement that changes rows is not supported "
                          "(EXPLAIN shows its plan without running it)");
  }
  json_t *q = json_object_get(body, "query");
  json_t *m = json_object_get(q, "MergeStmt");
  if (m != NULL)
    return merge_run(bo, sql, json_object_get(m, "relation"), json_object_get(m, "sourceRelation"),
                     json_object_get(m, "joinCondition"), json_object_get(m, "mergeWhenClauses"),
                     NULL, "MERGE", false, true, out, pos, err);
  json_t *u = json_object_get(q, "UpdateStmt");
  if (u != NULL)
    return join_change(bo, sql, u, "fromClause", "UPDATE ... FROM",
                       json_object_get(u, "targetList"), true, out, pos, err);
  return join_change(bo, sql, json_object_get(q, "DeleteStmt"), "usingClause", "DELETE ... USING",
                     NULL, true, out, pos, err);
}
