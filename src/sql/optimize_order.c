/*
 * optimize_order.c — the order of inner joins, chosen from row estimates
 * (hs_sql_optimize_join_order, called by hs_sql_optimize after filters
 * have moved down and before join keys are extracted).
 *
 * A region is a tree of inner joins without keys yet (what FROM lists and
 * JOIN ... ON bind to; their conditions are conjuncts of the joins'
 * predicates after filter push-down). Its leaves (scans, possibly under
 * their pushed filters, or anything else) are joined again greedily:
 *
 *  - each leaf's rows are estimated: a table scan's from its snapshot's
 *    total-records summary (no data read), times the selectivity of its
 *    filter: range conjuncts on one column (BETWEEN, or < and >= ...
 *    against constants) meet in one range, taken as its share of the
 *    column's [min, max] over the manifests' bounds (estimate_bounds.c:
 *    numbers, dates, timestamps; values assumed uniform); other conjuncts
 *    get a default (equality 0.05, range 0.33 without bounds, LIKE 0.1, ...);
 *  - the largest leaf starts (the fact table: it is probed, never built);
 *  - then, among the leaves an equality conjunct connects to what is
 *    joined so far, the one whose join and the best connected join after
 *    it give the fewest estimated rows in all joins next (a look-ahead of
 *    one: TPC-H Q7's supplier, filtered only by the nation joined after
 *    it, goes before the larger orders), assuming key/foreign-key joins:
 *    joining a smaller side keeps the larger side's rows times the smaller
 *    side's filter selectivity. A leaf connected by no equality comes last
 *    (a cross product only when nothing else is left);
 *  - the hash table is built on the smaller estimated side.
 *
 * Each conjunct goes to the first join where all its columns are
 * available; join_keys (optimize.c) then turns equalities into hash keys.
 * A projection above restores the region's column order, so nothing above
 * changes. Regions with a volatile conjunct keep their order (the
 * number of evaluations would change), as do regions of more than 64
 * leaves. EXPLAIN shows the estimates.
 *
 * Last of all (hs_sql_optimize_semi_sides, after columns are pruned), a
 * hash semi or anti join whose outer side is estimated at under a quarter
 * of the inner (a correlated EXISTS over a large table, TPC-H Q21) has
 * its inputs swapped: the hash table is built on the outer rows, the inner
 * ones probe it and mark what they match (HS_SJ_RSEMI / HS_SJ_RANTI,
 * op_join.c), and the marked (or unmarked) outer rows come out at the end.
 */
#include <math.h>
#include <string.h>

#include "bind_internal.h"
#include "bind.h"

#define MAX_LEAVES 64

typedef struct ord {
  hs_sql_plan_ctx *pc;
  hs_error *err;
} ord;

typedef struct leaf {
  hs_sql_plan *p;
  int32_t off; /* first column in the region's output */
  double est;  /* estimated rows */
  double sel;  /* est / rows before its filters (1 without) */
} leaf;

typedef struct cond {
  hs_sql_expr *e; /* over the region's output columns */
  uint64_t mask;  /* leaves it references */
  bool placed;
} cond;

typedef struct region {
  leaf v[MAX_LEAVES];
  int32_t n;
  cond *c;
  int32_t nc, capc;
  int32_t ncols;
  bool skip;
} region;

static hs_status nomem(ord *o) {
  return hs_error_set(o->err, HS_ERR_NOMEM, "out of memory while ordering joins");
}

static bool is_region_join(const hs_sql_plan *p) {
  return p != NULL && p->kind == HS_SP_JOIN && p->join.type == HS_SJ_INNER &&
         p->join.method == HS_SJM_NL && p->join.n_keys == 0;
}

static hs_sql_expr *remap(ord *o, const hs_sql_expr *e, const int32_t *map, int32_t shift) {
  return hs_sql_expr_remap(&o->pc->arena, e, map, shift);
}

/* ---------------------------------------------------------- estimates */

static bool is_const(const hs_sql_expr *e) {
  return e->kind == HS_SX_CONST || e->kind == HS_SX_PARAM ||
         (e->kind == HS_SX_CAST && e->n_args == 1 && is_const(e->args[0]));
}

/* The column a comparison side reads, casts looked through, or -1. */
static int32_t col_of(const hs_sql_expr *e) {
  while (e->kind == HS_SX_CAST && e->n_args == 1) e = e->args[0];
  return e->kind == HS_SX_COL ? e->col : -1;
}

/* A constant as a number in the units of a column of type `ct` (days,
 * microseconds, the numeric value); false when the units differ. */
static bool const_num(const hs_sql_expr *e, hs_sql_type ct, double *out) {
  if (e->kind != HS_SX_CONST || e->value.is_null) return false;
  hs_sql_tid c = ct.id, v = e->value.type.id;
  bool same = (c == HS_SQL_DATE && v == HS_SQL_DATE) ||
              ((c == HS_SQL_TIMESTAMP || c == HS_SQL_TIMESTAMPTZ) &&
               (v == HS_SQL_TIMESTAMP || v == HS_SQL_TIMESTAMPTZ)) ||
              (hs_sql_type_is_numeric(c) && hs_sql_type_is_numeric(v));
  if (!same) return false;
  switch (v) {
  case HS_SQL_INT32:
  case HS_SQL_DATE: *out = (double)e->value.v.i32; return true;
  case HS_SQL_INT64:
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: *out = (double)e->value.v.i64; return true;
  case HS_SQL_FLOAT64: *out = e->value.v.f64; return isfinite(*out);
  case HS_SQL_NUMERIC: *out = (double)e->value.v.dec / pow(10.0, e->value.type.b); return true;
  default: return false;
  }
}

/* Is e `col op constant` (either order) over a column of the table scan
 * `scan`? *dir: -1 an upper bound (<, <=), +1 a lower one (>, >=). */
static bool range_term(const hs_sql_expr *e, const hs_sql_plan *scan, int32_t *col, int *dir,
                       double *v) {
  if (scan == NULL || e->kind != HS_SX_FUNC || e->fn == NULL || e->n_args != 2) return false;
  const char *f = e->fn->name;
  int d;
  if (strcmp(f, "<") == 0 || strcmp(f, "<=") == 0)
    d = -1;
  else if (strcmp(f, ">") == 0 || strcmp(f, ">=") == 0)
    d = 1;
  else
    return false;
  int32_t c = col_of(e->args[0]);
  const hs_sql_expr *k = e->args[1];
  if (c < 0) {
    c = col_of(e->args[1]);
    k = e->args[0];
    d = -d; /* const < col: a lower bound */
  }
  if (c < 0 || c >= scan->scan.n_columns || c >= scan->n_cols || !const_num(k, scan->types[c], v))
    return false;
  *col = c, *dir = d;
  return true;
}

static double selectivity(const hs_sql_expr *e, const hs_sql_plan *scan);

/* The conjuncts of an AND: range conjuncts on one column of a table scan
 * meet in one range, whose share of the column's [min, max] (manifest
 * bounds: estimate_bounds.c) is the selectivity, values taken as uniform;
 * other conjuncts (and ranges on columns without bounds) multiply their
 * defaults. */
static double and_selectivity(const hs_sql_expr *e, const hs_sql_plan *scan) {
  double s = 1;
  bool *done = hs_calloc((size_t)e->n_args, sizeof(bool));
  if (done == NULL) scan = NULL;
  for (int32_t i = 0; i < e->n_args; i++) {
    int32_t c;
    int d;
    double v;
    if (done != NULL && done[i]) continue;
    if (!range_term(e->args[i], scan, &c, &d, &v)) {
      s *= selectivity(e->args[i], scan);
      continue;
    }
    double lo = -INFINITY, hi = INFINITY;
    int32_t terms = 0;
    for (int32_t j = i; j < e->n_args; j++) {
      int32_t cj;
      int dj;
      double vj;
      if (done[j] || !range_term(e->args[j], scan, &cj, &dj, &vj) || cj != c) continue;
      done[j] = true;
      terms++;
      if (dj > 0 && vj > lo) lo = vj;
      if (dj < 0 && vj < hi) hi = vj;
    }
    double mn, mx;
    if (!hs_sql_column_range(scan->scan.rel, scan->scan.snapshot_id, scan->scan.columns[c], &mn,
                             &mx)) {
      for (int32_t t = 0; t < terms; t++) s *= 0.33;
      continue;
    }
    hs_sql_tid ct = scan->types[c].id;
    double g = (ct == HS_SQL_INT32 || ct == HS_SQL_INT64 || ct == HS_SQL_DATE) ? 1 : 0;
    double l = lo > mn ? lo : mn, h = hi < mx ? hi : mx;
    double frac = h < l ? 0 : (mx - mn + g > 0 ? (h - l + g) / (mx - mn + g) : 1);
    if (frac > 1) frac = 1;
    if (frac < 0.001) frac = 0.001;
    s *= frac;
  }
  hs_free(done);
  return s;
}

/* Selectivities: ranges from column bounds where `scan` (the table scan
 * the predicate filters, or NULL) has them, else defaults in
 * PostgreSQL's spirit (no column statistics). */
static double selectivity(const hs_sql_expr *e, const hs_sql_plan *scan) {
  switch (e->kind) {
  case HS_SX_AND: return and_selectivity(e, scan);
  case HS_SX_OR: {
    double s = 0;
    for (int32_t i = 0; i < e->n_args; i++) s += selectivity(e->args[i], scan);
    return s < 1 ? s : 1;
  }
  case HS_SX_NOT: return 1 - selectivity(e->args[0], scan);
  case HS_SX_ISNULL: return e->negated ? 0.95 : 0.05;
  case HS_SX_LIKE: return e->negated ? 0.9 : 0.1;
  case HS_SX_IN: {
    double s = 0.05 * (double)(e->n_args - 1);
    if (s > 0.5) s = 0.5;
    return e->negated ? 1 - s : s;
  }
  case HS_SX_FUNC:
    if (e->fn != NULL && e->n_args == 2) {
      const char *f = e->fn->name;
      bool one_const = is_const(e->args[0]) != is_const(e->args[1]);
      if (strcmp(f, "=") == 0) return one_const ? 0.05 : 0.1;
      if (strcmp(f, "<>") == 0) return 0.95;
      if (strcmp(f, "<") == 0 || strcmp(f, "<=") == 0 || strcmp(f, ">") == 0 ||
          strcmp(f, ">=") == 0) {
        int32_t c;
        int d;
        double v;
        if (!range_term(e, scan, &c, &d, &v)) return 0.33;
        hs_sql_expr one = {.kind = HS_SX_AND, .n_args = 1}; /* its range alone */
        hs_sql_expr *arg = (hs_sql_expr *)e;
        one.args = &arg;
        return and_selectivity(&one, scan);
      }
    }
    return 0.5;
  default: return 0.5;
  }
}

/* Rows of table relation `rel` at `snapshot_id` from the snapshot
 * summary, or -1. */
static double table_rows(const hs_sql_rel *rel, int64_t snapshot_id) {
  hs_table *t = hs_sql_rel_peek(rel), *own = NULL;
  if (t == NULL && hs_table_open(rel->uri, &own, NULL) != HS_OK) return -1;
  if (t == NULL) t = own;
  int64_t want = snapshot_id >= 0 ? snapshot_id : hs_table_current_snapshot_id(t);
  double rows = want < 0 ? 0 : -1; /* no snapshot: an empty table */
  hs_table_snapshot_info *s = NULL;
  size_t n = 0;
  if (want >= 0 && hs_table_snapshots(t, &s, &n, NULL) == HS_OK)
    for (size_t i = 0; i < n; i++)
      if (s[i].snapshot_id == want && s[i].total_records >= 0) rows = (double)s[i].total_records;
  if (rows < 0 && want >= 0) {
    int64_t live = 0;
    if (hs_table_count_rows(t, want, &live, NULL, NULL, NULL) == HS_OK) rows = (double)live;
  }
  hs_free(s);
  hs_table_free(own);
  return rows;
}

#define UNKNOWN_ROWS 1000.0

/* Estimated rows of p; *base gets the rows before p's own filters. */
static double estimate(const hs_sql_plan *p, double *base) {
  double b = 0, r;
  if (p->est_rows >= 0 && p->kind != HS_SP_SCAN && p->kind != HS_SP_FILTER) {
    *base = p->est_rows >= 1 ? p->est_rows : 1; /* an earlier pass's (a reordered region) */
    return *base;
  }
  switch (p->kind) {
  case HS_SP_SCAN:
    if (p->scan.rel->uri != NULL) {
      r = table_rows(p->scan.rel, p->scan.snapshot_id);
      if (r < 0) r = UNKNOWN_ROWS;
    } else {
      r = 0;
      for (size_t i = 0; i < p->scan.rel->n_chunks; i++) r += (double)p->scan.rel->chunks[i].n;
    }
    b = r;
    if (p->scan.filter != NULL) r *= 0.25; /* pushed down already (a later pass): unknown */
    if (p->scan.limit >= 0 && (double)p->scan.limit < r) r = (double)p->scan.limit;
    break;
  case HS_SP_FILTER: {
    const hs_sql_plan *k = p->kids[0];
    r = estimate(k, &b);
    b = r;
    bool table = k->kind == HS_SP_SCAN && k->scan.rel->uri != NULL && k->scan.filter == NULL;
    r *= selectivity(p->pred, table ? k : NULL);
    break;
  }
  case HS_SP_VALUES: r = (double)p->values.n_rows; break;
  case HS_SP_PROJECT:
  case HS_SP_SORT:
  case HS_SP_WINDOW:
    r = estimate(p->kids[0], &b);
    if (p->kind == HS_SP_SORT && p->limit >= 0 && (double)p->limit < r) r = (double)p->limit;
    break;
  case HS_SP_LIMIT:
    r = estimate(p->kids[0], &b);
    if (p->limit >= 0 && (double)p->limit < r) r = (double)p->limit;
    break;
  case HS_SP_AGG:
    r = estimate(p->kids[0], &b);
    r = p->agg.n_keys == 0 ? 1 : r * 0.3;
    break;
  case HS_SP_JOIN: {
    double lb, rb;
    double l = estimate(p->kids[0], &lb), rr = estimate(p->kids[1], &rb);
    hs_sql_join_type t = p->join.type;
    if (t == HS_SJ_SEMI || t == HS_SJ_ANTI || t == HS_SJ_ANTI_NULLAWARE)
      r = l * 0.5;
    else if (t == HS_SJ_RSEMI || t == HS_SJ_RANTI)
      r = rr * 0.5;
    else if (t == HS_SJ_LEFT)
      r = l;
    else if (t == HS_SJ_RIGHT)
      r = rr;
    else if (t == HS_SJ_FULL)
      r = l + rr;
    else
      r = l > rr ? l : rr;
    break;
  }
  case HS_SP_UNION:
    r = 0;
    for (int32_t i = 0; i < p->n_many; i++) r += estimate(p->many[i], &b);
    break;
  case HS_SP_KNN: r = (double)p->knn.k; break;
  default: r = p->est_rows >= 0 ? p->est_rows : UNKNOWN_ROWS;
  }
  if (r < 1) r = 1;
  *base = b > r ? b : r;
  return r;
}

double hs_sql_estimate_rows(const hs_sql_plan *p) {
  double b;
  return estimate(p, &b);
}

/* ------------------------------------------------------------ regions */

static hs_status cond_add(ord *o, region *g, hs_sql_expr *e) {
  if (g->nc == g->capc) {
    int32_t nc = g->capc ? g->capc * 2 : 16;
    cond *c = hs_arena_alloc(&o->pc->arena, sizeof(*c) * (size_t)nc);
    if (c == NULL) return nomem(o);
    if (g->nc) memcpy(c, g->c, sizeof(*c) * (size_t)g->nc);
    g->c = c, g->capc = nc;
  }
  g->c[g->nc++] = (cond){e, 0, false};
  return HS_OK;
}

static hs_status conjuncts(ord *o, region *g, hs_sql_expr *e) {
  if (e == NULL) return HS_OK;
  if (e->kind == HS_SX_AND) {
    for (int32_t i = 0; i < e->n_args; i++) {
      hs_status st = conjuncts(o, g, e->args[i]);
      if (st != HS_OK) return st;
    }
    return HS_OK;
  }
  if (hs_sql_expr_has_volatile(e)) g->skip = true;
  return cond_add(o, g, e);
}

/* Leaves and conditions of the region rooted at p, whose output starts at
 * column `off` of the region's. */
static hs_status collect(ord *o, region *g, hs_sql_plan *p, int32_t off) {
  if (!is_region_join(p)) {
    if (g->n == MAX_LEAVES) {
      g->skip = true;
      return HS_OK;
    }
    g->v[g->n++] = (leaf){p, off, 0, 1};
    return HS_OK;
  }
  hs_status st = collect(o, g, p->kids[0], off);
  if (st == HS_OK) st = collect(o, g, p->kids[1], off + p->kids[0]->n_cols);
  if (st != HS_OK || p->pred == NULL) return st;
  hs_sql_expr *e = off > 0 ? remap(o, p->pred, NULL, off) : p->pred;
  return e == NULL ? nomem(o) : conjuncts(o, g, e);
}

static int32_t leaf_of(const region *g, int32_t col) {
  for (int32_t i = g->n - 1; i >= 0; i--)
    if (col >= g->v[i].off) return i;
  return 0;
}

static uint64_t mask_of(const region *g, const hs_sql_expr *e) {
  uint64_t m = 0;
  if (e->kind == HS_SX_COL && e->col >= 0 && e->col < g->ncols) m |= 1ull << leaf_of(g, e->col);
  for (int32_t i = 0; i < e->n_args; i++) m |= mask_of(g, e->args[i]);
  return m;
}

/* Is c an equality between something of `a` and something of `b`? */
static bool joins(const region *g, const cond *c, uint64_t a, uint64_t b) {
  const hs_sql_expr *e = c->e;
  if (e->kind != HS_SX_FUNC || e->n_args != 2 || e->fn == NULL || strcmp(e->fn->name, "=") != 0)
    return false;
  uint64_t l = mask_of(g, e->args[0]), r = mask_of(g, e->args[1]);
  if (l == 0 || r == 0) return false;
  return ((l & ~a) == 0 && (r & ~b) == 0) || ((l & ~b) == 0 && (r & ~a) == 0);
}

/* Leaf j joined to the set `in` (estimate cur, selectivity cur_sel):
 * the rows estimated after it; *conn: an equality connects them. */
static double step(const region *g, uint64_t in, int32_t j, double cur, double cur_sel,
                   bool *conn) {
  bool c = false;
  for (int32_t k = 0; k < g->nc && !c; k++)
    c = !g->c[k].placed && joins(g, &g->c[k], in, 1ull << j);
  const leaf *l = &g->v[j];
  double est = c ? (l->est <= cur ? cur * l->sel : l->est * cur_sel) : cur * l->est;
  *conn = c;
  return est < 1 ? 1 : est;
}

/* The next leaf to join to the set `in` (estimate cur, selectivity
 * cur_sel): connected by an equality, then the fewest rows made by it and
 * by the best connected leaf after it (a look-ahead of one: a dimension
 * that filters only through the next one, TPC-H Q7's supplier then its
 * nation, is worth joining before a larger unfiltered one), then the
 * fewest rows made by it. */
static int32_t pick(const region *g, uint64_t in, double cur, double cur_sel, double *est_out) {
  int32_t best = -1;
  double best_est = 0, best_cost = 0;
  bool best_conn = false;
  for (int32_t j = 0; j < g->n; j++) {
    if (in & (1ull << j)) continue;
    bool conn;
    double est = step(g, in, j, cur, cur_sel, &conn);
    double cost = est, next = -1;
    uint64_t in2 = in | (1ull << j);
    for (int32_t k = 0; conn && k < g->n; k++) {
      bool c2;
      if (in2 & (1ull << k)) continue;
      double e2 = step(g, in2, k, est, cur_sel * g->v[j].sel, &c2);
      if (c2 && (next < 0 || e2 < next)) next = e2;
    }
    if (next >= 0) cost += next;
    const leaf *l = &g->v[j];
    bool better =
        best < 0 || (conn && !best_conn) ||
        (conn == best_conn &&
         (cost < best_cost ||
          (cost == best_cost && (est < best_est || (est == best_est && l->est < g->v[best].est)))));
    if (better) best = j, best_est = est, best_cost = cost, best_conn = conn;
  }
  *est_out = best_est;
  return best;
}

/* A JOIN of left and right (inner, conditions later) with its columns. */
static hs_sql_plan *join_of(ord *o, hs_sql_plan *l, hs_sql_plan *r, int32_t pos) {
  hs_sql_plan *j = hs_sql_plan_new(o->pc, HS_SP_JOIN, l->n_cols + r->n_cols);
  if (j == NULL) return NULL;
  j->kids[0] = l, j->kids[1] = r;
  j->pos = pos;
  j->join.type = HS_SJ_INNER;
  j->join.method = HS_SJM_NL;
  for (int32_t i = 0; i < l->n_cols; i++) j->types[i] = l->types[i], j->names[i] = l->names[i];
  for (int32_t i = 0; i < r->n_cols; i++)
    j->types[l->n_cols + i] = r->types[i], j->names[l->n_cols + i] = r->names[i];
  return j;
}

/* The conditions whose leaves are all in `in`, not placed yet, remapped
 * through pos[] and ANDed (NULL when none); *fail on out of memory. */
static hs_sql_expr *take_conds(ord *o, region *g, uint64_t in, const int32_t *pos, bool *fail) {
  hs_sql_expr **v = hs_arena_alloc(&o->pc->arena, sizeof(*v) * (size_t)(g->nc + 1));
  int32_t n = 0;
  if (v == NULL) {
    *fail = true;
    return NULL;
  }
  for (int32_t k = 0; k < g->nc; k++) {
    cond *c = &g->c[k];
    if (c->placed || (c->mask & ~in) != 0) continue;
    if ((v[n] = remap(o, c->e, pos, 0)) == NULL) {
      *fail = true;
      return NULL;
    }
    c->placed = true;
    n++;
  }
  if (n <= 1) return n == 1 ? v[0] : NULL;
  hs_sql_expr *a =
      hs_sql_expr_new(&o->pc->arena, HS_SX_AND, hs_sql_type_of(HS_SQL_BOOL), v[0]->pos);
  if (a == NULL) {
    *fail = true;
    return NULL;
  }
  a->args = v;
  a->n_args = n;
  return a;
}

static hs_status reorder(ord *o, hs_sql_plan **pp) {
  hs_sql_plan *root = *pp;
  region *g = hs_arena_alloc(&o->pc->arena, sizeof *g);
  if (g == NULL) return nomem(o);
  memset(g, 0, sizeof *g);
  g->ncols = root->n_cols;
  hs_status st = collect(o, g, root, 0);
  if (st != HS_OK || g->skip || g->n < 2) return st;
  for (int32_t k = 0; k < g->nc; k++) g->c[k].mask = mask_of(g, g->c[k].e);
  for (int32_t i = 0; i < g->n; i++) {
    double base = 0;
    g->v[i].est = estimate(g->v[i].p, &base);
    g->v[i].sel = base > 0 ? g->v[i].est / base : 1;
  }
  int32_t first = 0;
  for (int32_t i = 1; i < g->n; i++)
    if (g->v[i].est > g->v[first].est) first = i;
  int32_t *pos = hs_arena_alloc(&o->pc->arena, sizeof(int32_t) * (size_t)(g->ncols + 1));
  int32_t *npos = hs_arena_alloc(&o->pc->arena, sizeof(int32_t) * (size_t)(g->ncols + 1));
  if (pos == NULL || npos == NULL) return nomem(o);
  for (int32_t c = 0; c < g->ncols; c++) pos[c] = -1;
  const leaf *f = &g->v[first];
  for (int32_t c = 0; c < f->p->n_cols; c++) pos[f->off + c] = c;
  hs_sql_plan *tree = f->p;
  uint64_t in = 1ull << first;
  double cur = f->est, cur_sel = f->sel;
  bool same = first == 0, fail = false;
  for (int32_t step = 1; step < g->n; step++) {
    double est = 0;
    int32_t j = pick(g, in, cur, cur_sel, &est);
    const leaf *l = &g->v[j];
    bool tree_left = l->est <= cur; /* build on the smaller side */
    same = same && j == step && tree_left;
    hs_sql_plan *jn =
        tree_left ? join_of(o, tree, l->p, root->pos) : join_of(o, l->p, tree, root->pos);
    if (jn == NULL) return nomem(o);
    int32_t nt = tree->n_cols, nj = l->p->n_cols;
    for (int32_t c = 0; c < g->ncols; c++) {
      if (pos[c] >= 0) {
        npos[c] = tree_left ? pos[c] : nj + pos[c];
      } else if (c >= l->off && c < l->off + nj) {
        npos[c] = tree_left ? nt + (c - l->off) : c - l->off;
      } else {
        npos[c] = -1;
      }
    }
    memcpy(pos, npos, sizeof(int32_t) * (size_t)g->ncols);
    in |= 1ull << j;
    jn->pred = take_conds(o, g, in, pos, &fail);
    if (fail) return nomem(o);
    jn->est_rows = est;
    cur = est;
    cur_sel *= l->sel;
    tree = jn;
  }
  if (same) return HS_OK; /* the order found is the written one */
  hs_sql_plan *proj = hs_sql_plan_new(o->pc, HS_SP_PROJECT, root->n_cols);
  hs_sql_expr **exprs = hs_arena_alloc(&o->pc->arena, sizeof(*exprs) * (size_t)(root->n_cols + 1));
  if (proj == NULL || exprs == NULL) return nomem(o);
  for (int32_t c = 0; c < root->n_cols; c++) {
    hs_sql_expr *e = hs_sql_expr_new(&o->pc->arena, HS_SX_COL, root->types[c], root->pos);
    if (e == NULL) return nomem(o);
    e->col = pos[c];
    exprs[c] = e;
    proj->types[c] = root->types[c];
    proj->names[c] = root->names[c];
  }
  proj->pos = root->pos;
  proj->est_rows = cur;
  proj->kids[0] = tree;
  proj->project.exprs = exprs;
  *pp = proj;
  return HS_OK;
}

static hs_status visit(ord *o, hs_sql_plan **pp) {
  hs_sql_plan *p = *pp;
  if (is_region_join(p)) {
    /* the leaves' own regions first (below outer joins, in subqueries) */
    region *g = hs_arena_alloc(&o->pc->arena, sizeof *g);
    if (g == NULL) return nomem(o);
    memset(g, 0, sizeof *g);
    g->ncols = p->n_cols;
    hs_status st = collect(o, g, p, 0);
    for (int32_t i = 0; st == HS_OK && i < g->n; i++) {
      hs_sql_plan *leafp = g->v[i].p;
      for (int k = 0; st == HS_OK && k < 2; k++)
        if (leafp->kids[k] != NULL) st = visit(o, &leafp->kids[k]);
      for (int32_t k = 0; st == HS_OK && k < leafp->n_many; k++) st = visit(o, &leafp->many[k]);
    }
    return st == HS_OK ? reorder(o, pp) : st;
  }
  hs_status st = HS_OK;
  for (int i = 0; st == HS_OK && i < 2; i++)
    if (p->kids[i] != NULL) st = visit(o, &p->kids[i]);
  for (int32_t i = 0; st == HS_OK && i < p->n_many; i++) st = visit(o, &p->many[i]);
  return st;
}

hs_status hs_sql_optimize_join_order(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err) {
  ord o = {ctx, err};
  return visit(&o, root);
}

/* ------------------------------------------------- semi join sides */

static hs_status semi_sides(ord *o, hs_sql_plan *p) {
  hs_status st = HS_OK;
  for (int i = 0; st == HS_OK && i < 2; i++)
    if (p->kids[i] != NULL) st = semi_sides(o, p->kids[i]);
  for (int32_t i = 0; st == HS_OK && i < p->n_many; i++) st = semi_sides(o, p->many[i]);
  if (st != HS_OK || p->kind != HS_SP_JOIN || p->join.method == HS_SJM_INDEX_NL ||
      p->join.n_keys <= 0 || (p->join.type != HS_SJ_SEMI && p->join.type != HS_SJ_ANTI))
    return st;
  double b, l = estimate(p->kids[0], &b), r = estimate(p->kids[1], &b);
  if (l * 4 > r) return HS_OK; /* the right side is the smaller one, or close */
  int32_t nl = p->kids[0]->n_cols, nr = p->kids[1]->n_cols;
  if (p->pred != NULL && (p->pred = hs_sql_expr_swap_sides(&o->pc->arena, p->pred, nl, nr)) == NULL)
    return nomem(o);
  hs_sql_plan *k = p->kids[0];
  p->kids[0] = p->kids[1];
  p->kids[1] = k;
  hs_sql_expr **lk = p->join.left_keys;
  p->join.left_keys = p->join.right_keys;
  p->join.right_keys = lk;
  p->join.type = p->join.type == HS_SJ_SEMI ? HS_SJ_RSEMI : HS_SJ_RANTI;
  p->est_rows = l * 0.5;
  return HS_OK; /* output columns (the old left's, now the right's) unchanged */
}

hs_status hs_sql_optimize_semi_sides(hs_sql_plan_ctx *ctx, hs_sql_plan **root, hs_error *err) {
  ord o = {ctx, err};
  return semi_sides(&o, *root);
}
