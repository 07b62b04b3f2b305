/*
 * exec.c — the operator tree of a statement, pulled chunk by chunk.
 *
 * One hs_sql_op per plan node, built bottom-up by the kind's open function
 * (op_*.c). Operators call their kids through hs_sql_op_next, which counts
 * rows and time for EXPLAIN ANALYZE. The root's chunks leave as Arrow
 * batches through an ArrowArrayStream that owns the whole statement.
 * Memory reservations are counted against the statement's limit; the
 * cancel flag is checked between chunks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "exec.h"

void hs_sql_plan_ctx_free(hs_sql_plan_ctx *ctx) {
  if (ctx == NULL) return;
  for (hs_sql_rel *r = ctx->opened; r != NULL; r = r->next_opened) hs_sql_rel_close(r, r->table);
  hs_arena_reset(&ctx->arena);
  if (ctx->json != NULL) json_decref(ctx->json);
  if (ctx->base_release != NULL) ctx->base_release(ctx->base);
  hs_free(ctx);
}

hs_status hs_sql_rel_open(const hs_sql_rel *rel, hs_table **out, hs_error *err) {
  /* operators open from the exec's thread, but take atomically anyway */
  *out = __atomic_exchange_n(&((hs_sql_rel *)rel)->table, NULL, __ATOMIC_ACQ_REL);
  if (*out != NULL) return HS_OK;
  if (rel->uri == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s is not a table", rel->name);
  return hs_table_open(rel->uri, out, err);
}

void hs_sql_rel_close(const hs_sql_rel *rel, hs_table *t) {
  if (t == NULL) return;
  if (rel != NULL && rel->give_back != NULL)
    rel->give_back(rel->owner, t);
  else
    hs_table_free(t);
}

hs_table *hs_sql_rel_peek(const hs_sql_rel *rel) {
  return __atomic_load_n(&rel->table, __ATOMIC_ACQUIRE);
}

typedef struct shared_res {
  bool done;
  hs_sql_chunk *chunks;
  size_t n;
} shared_res;

struct hs_sql_exec {
  hs_sql_plan_ctx *pctx;
  hs_sql_plan *root_plan;
  hs_sql_op *root;
  hs_sql_exec_opts o;
  hs_sql_evalctx ectx;
  int64_t mem_used; /* atomic */
  shared_res *shared;
  /* every op built, for freeing and EXPLAIN */
  hs_sql_op **ops;
  size_t n_ops, cap_ops;
  char last_error[HS_ERROR_MESSAGE_MAX];
  hs_status last_status;
  bool analyze; /* EXPLAIN ANALYZE: time next() calls */
};

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

const hs_sql_evalctx *hs_sql_exec_evalctx(const hs_sql_exec *x) {
  return &x->ectx;
}

bool hs_sql_exec_analyzing(const hs_sql_exec *x) {
  return x->analyze;
}

hs_status hs_sql_exec_reserve(hs_sql_exec *x, int64_t bytes, const char *what, hs_error *err) {
  int64_t used = __atomic_add_fetch(&x->mem_used, bytes, __ATOMIC_RELAXED);
  if (bytes > 0 && x->o.memory_limit > 0 && used > x->o.memory_limit) {
    __atomic_sub_fetch(&x->mem_used, bytes, __ATOMIC_RELAXED);
    return hs_error_set(err, HS_ERR_NOMEM,
                        "query memory limit of %lld bytes exceeded in %s; raise it with "
                        "SET memory_limit = '8GB'",
                        (long long)x->o.memory_limit, what);
  }
  return HS_OK;
}

bool hs_sql_exec_cancelled(const hs_sql_exec *x, hs_error *err) {
  if (x->o.cancel != NULL && *x->o.cancel) {
    hs_error_set(err, HS_ERR_INVALID_ARG, "query cancelled");
    return true;
  }
  return false;
}

const char *hs_sql_exec_setting(const hs_sql_exec *x, const char *name) {
  for (size_t i = x->o.n_settings; i-- > 0;)
    if (strcmp(x->o.settings[i].name, name) == 0) return x->o.settings[i].value;
  return NULL;
}

static hs_status build(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op **out, hs_error *err);

hs_status hs_sql_exec_shared(hs_sql_exec *x, int32_t id, const hs_sql_chunk **chunks,
                             size_t *n_chunks, hs_error *err) {
  if (id < 0 || id >= x->o.n_shared)
    return hs_error_set(err, HS_ERR_INTERNAL, "sql: shared result %d out of range", id);
  shared_res *r = &x->shared[id];
  if (!r->done) {
    hs_sql_op *op = NULL;
    hs_status st = build(x, x->o.shared[id], &op, err);
    if (st != HS_OK) return st;
    st = hs_sql_op_drain(op, &r->chunks, &r->n, err);
    if (st != HS_OK) return st;
    r->done = true;
  }
  *chunks = r->chunks;
  *n_chunks = r->n;
  return HS_OK;
}

hs_status hs_sql_op_next(hs_sql_op *op, hs_sql_chunk *out, hs_error *err) {
  memset(out, 0, sizeof(*out));
  if (hs_sql_exec_cancelled(op->x, err)) return HS_ERR_INVALID_ARG;
  hs_status st;
  if (op->x->analyze) {
    int64_t t0 = now_ns();
    st = op->next(op, out, err);
    op->stats.ns += now_ns() - t0;
  } else {
    st = op->next(op, out, err);
  }
  op->stats.calls++;
  if (st != HS_OK) {
    hs_sql_chunk_release(out);
    return st;
  }
  if (out->n_cols != op->plan->n_cols && out->n > 0) {
    hs_sql_chunk_release(out);
    return hs_error_set(err, HS_ERR_INTERNAL, "sql: operator %d emitted %d columns, planned %d",
                        (int)op->plan->kind, out->n_cols, op->plan->n_cols);
  }
  op->stats.rows += out->n;
  return HS_OK;
}

hs_status hs_sql_op_drain(hs_sql_op *op, hs_sql_chunk **chunks, size_t *n_chunks, hs_error *err) {
  hs_sql_chunk *v = NULL;
  size_t n = 0, cap = 0;
  hs_status st = HS_OK;
  for (;;) {
    hs_sql_chunk c;
    st = hs_sql_op_next(op, &c, err);
    if (st != HS_OK) break;
    if (c.n == 0) {
      hs_sql_chunk_release(&c);
      break;
    }
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 8;
      hs_sql_chunk *g = hs_realloc(v, nc * sizeof(*g));
      if (g == NULL) {
        hs_sql_chunk_release(&c);
        st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
        break;
      }
      v = g, cap = nc;
    }
    hs_sql_chunk_move(&v[n++], &c);
  }
  if (st != HS_OK) {
    for (size_t i = 0; i < n; i++) hs_sql_chunk_release(&v[i]);
    hs_free(v);
    v = NULL, n = 0;
  }
  *chunks = v;
  *n_chunks = n;
  return st;
}

static hs_sql_op_open_fn open_fn(hs_sql_plan_kind k) {
  switch (k) {
  case HS_SP_SCAN: return hs_sql_op_scan_open;
  case HS_SP_VALUES: return hs_sql_op_values_open;
  case HS_SP_FILTER: return hs_sql_op_filter_open;
  case HS_SP_PROJECT: return hs_sql_op_project_open;
  case HS_SP_AGG: return hs_sql_op_agg_open;
  case HS_SP_SORT: return hs_sql_op_sort_open;
  case HS_SP_LIMIT: return hs_sql_op_limit_open;
  case HS_SP_JOIN: return hs_sql_op_join_open;
  case HS_SP_UNION: return hs_sql_op_union_open;
  case HS_SP_WINDOW: return hs_sql_op_window_open;
  case HS_SP_KNN: return hs_sql_op_knn_open;
  case HS_SP_SHARED: return hs_sql_op_shared_open;
  case HS_SP_EXPLAIN: return NULL;
  }
  return NULL;
}

static hs_status build(hs_sql_exec *x, const hs_sql_plan *p, hs_sql_op **out, hs_error *err) {
  *out = NULL;
  hs_sql_op *op = hs_calloc(1, sizeof(*op));
  if (op == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  if (x->n_ops == x->cap_ops) {
    size_t nc = x->cap_ops ? x->cap_ops * 2 : 16;
    hs_sql_op **g = hs_realloc(x->ops, nc * sizeof(*g));
    if (g == NULL) {
      hs_free(op);
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    }
    x->ops = g, x->cap_ops = nc;
  }
  x->ops[x->n_ops++] = op;
  op->plan = p;
  op->x = x;
  hs_status st = HS_OK;
  /* KNN reads its table itself; its kid (if any) is for EXPLAIN only */
  if (p->kind != HS_SP_KNN) {
    for (int i = 0; i < 2 && st == HS_OK; i++)
      if (p->kids[i] != NULL) st = build(x, p->kids[i], &op->kids[i], err);
  }
  if (st == HS_OK && p->n_many > 0) {
    op->many = hs_calloc((size_t)p->n_many, sizeof(*op->many));
    if (op->many == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    for (int32_t i = 0; i < p->n_many && st == HS_OK; i++)
      st = build(x, p->many[i], &op->many[i], err);
    op->n_many = p->n_many;
  }
  if (st != HS_OK) return st;
  hs_sql_op_open_fn f = open_fn(p->kind);
  if (f == NULL)
    return hs_error_set(err, HS_ERR_INTERNAL, "sql: no operator for plan kind %d", (int)p->kind);
  st = f(x, p, op, err);
  if (st != HS_OK) return st;
  *out = op;
  return HS_OK;
}

hs_status hs_sql_exec_new(hs_sql_plan_ctx *pctx, hs_sql_plan *root, const hs_sql_exec_opts *o,
                          hs_sql_exec **out, hs_error *err) {
  *out = NULL;
  hs_sql_exec *x = hs_calloc(1, sizeof(*x));
  if (x == NULL) {
    hs_sql_plan_ctx_free(pctx);
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  }
  x->pctx = pctx; /* NULL: the caller keeps the plan */
  x->root_plan = root;
  x->analyze = root->kind == HS_SP_EXPLAIN && root->explain.analyze;
  x->o = *o;
  x->ectx.params = o->params;
  x->ectx.n_params = o->n_params;
  x->ectx.cancel = (const volatile int *)o->cancel;
  if (o->n_shared > 0) {
    x->shared = hs_calloc((size_t)o->n_shared, sizeof(*x->shared));
    if (x->shared == NULL) {
      hs_sql_exec_free(x);
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    }
  }
  hs_sql_plan *run = root->kind == HS_SP_EXPLAIN ? root->kids[0] : root;
  hs_status st = build(x, run, &x->root, err);
  if (st != HS_OK) {
    hs_sql_exec_free(x);
    return st;
  }
  *out = x;
  return HS_OK;
}

void hs_sql_exec_free(hs_sql_exec *x) {
  if (x == NULL) return;
  for (size_t i = x->n_ops; i-- > 0;) {
    hs_sql_op *op = x->ops[i];
    if (op->free != NULL) op->free(op);
    hs_free(op->many);
    hs_free(op);
  }
  hs_free(x->ops);
  for (int32_t i = 0; i < x->o.n_shared && x->shared != NULL; i++) {
    for (size_t j = 0; j < x->shared[i].n; j++) hs_sql_chunk_release(&x->shared[i].chunks[j]);
    hs_free(x->shared[i].chunks);
  }
  hs_free(x->shared);
  hs_sql_plan_ctx_free(x->pctx);
  hs_free(x);
}

hs_status hs_sql_exec_collect(hs_sql_exec *x, hs_sql_chunk **chunks, size_t *n, hs_error *err) {
  return hs_sql_op_drain(x->root, chunks, n, err);
}

hs_status hs_sql_exec_run(hs_sql_exec *x, hs_error *err) {
  for (;;) {
    hs_sql_chunk c;
    hs_status st = hs_sql_op_next(x->root, &c, err);
    if (st != HS_OK) return st;
    int64_t n = c.n;
    hs_sql_chunk_release(&c);
    if (n == 0) return HS_OK;
  }
}

/* ------------------------------------------------------------- EXPLAIN */

static const char *kind_name(const hs_sql_plan *p) {
  switch (p->kind) {
  case HS_SP_SCAN:
    return p->scan.rel != NULL && p->scan.rel->uri != NULL ? "TableScan" : "MemoryScan";
  case HS_SP_VALUES: return "Values";
  case HS_SP_FILTER: return "Filter";
  case HS_SP_PROJECT: return "Project";
  case HS_SP_AGG: return p->agg.n_aggs == 0 ? "HashDistinct" : "HashAggregate";
  case HS_SP_SORT: return p->limit >= 0 ? "TopN" : "Sort";
  case HS_SP_LIMIT: return "Limit";
  case HS_SP_JOIN:
    return p->join.method == HS_SJM_HASH       ? "HashJoin"
           : p->join.method == HS_SJM_INDEX_NL ? "IndexNestedLoopJoin"
                                               : "NestedLoopJoin";
  case HS_SP_UNION: return "UnionAll";
  case HS_SP_WINDOW: return "Window";
  case HS_SP_KNN: return "VectorTopK";
  case HS_SP_SHARED: return "Shared";
  case HS_SP_EXPLAIN: return "Explain";
  }
  return "?";
}

static const char *join_name(hs_sql_join_type t) {
  static const char *names[] = {"inner",
                                "left",
                                "right",
                                "full",
                                "semi",
                                "anti",
                                "anti (NOT IN)",
                                "semi (hash on the outer side)",
                                "anti (hash on the outer side)"};
  return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

static void put(hs_buf *b, const char *s) {
  hs_buf_append(b, s, strlen(s));
}

static void put_expr(hs_buf *b, const hs_sql_expr *e, const hs_sql_plan *input) {
  const char *const *names = input != NULL ? (const char *const *)input->names : NULL;
  hs_error ignore = {0};
  if (hs_sql_expr_to_string(e, names, b, &ignore) != HS_OK) put(b, "?");
}

/* The columns a node's expressions refer to: its input's (joins: left
 * then right, which the binder lays out in the join's own output). */
static const hs_sql_plan *input_of(const hs_sql_plan *p) {
  if (p->kind == HS_SP_JOIN) return p;
  return p->kids[0];
}

static void explain_node(hs_buf *b, const hs_sql_plan *p, const hs_sql_op *op, int depth,
                         bool analyze) {
  for (int i = 0; i < depth; i++) put(b, "  ");
  put(b, depth ? "-> " : "");
  put(b, kind_name(p));
  char tmp[256];
  const hs_sql_plan *in = input_of(p);
  switch (p->kind) {
  case HS_SP_SCAN:
  case HS_SP_KNN:
    snprintf(tmp, sizeof tmp, " %s", p->scan.rel != NULL ? p->scan.rel->name : "?");
    put(b, tmp);
    if (p->scan.snapshot_id >= 0) {
      snprintf(tmp, sizeof tmp, " at snapshot %lld", (long long)p->scan.snapshot_id);
      put(b, tmp);
    }
    put(b, " columns=[");
    for (int32_t i = 0; i < p->scan.n_columns; i++) {
      if (i) put(b, ", ");
      put(b, p->scan.columns[i]);
    }
    put(b, "]");
    if (p->kind == HS_SP_KNN) {
      snprintf(tmp, sizeof tmp, " vector=%s metric=%s k=%lld", p->knn.column, p->knn.metric,
               (long long)p->knn.k);
      put(b, tmp);
    }
    if (p->scan.filter != NULL) {
      put(b, " filter=(");
      put(b, p->scan.filter);
      put(b, ")");
    }
    if (p->scan.limit >= 0) {
      snprintf(tmp, sizeof tmp, " limit=%lld", (long long)p->scan.limit);
      put(b, tmp);
    }
    break;
  case HS_SP_FILTER:
    put(b, " ");
    put_expr(b, p->pred, in);
    break;
  case HS_SP_PROJECT:
    put(b, " ");
    for (int32_t i = 0; i < p->n_cols; i++) {
      if (i) put(b, ", ");
      put_expr(b, p->project.exprs[i], in);
      if (p->names[i] != NULL) {
        put(b, " AS ");
        put(b, p->names[i]);
      }
    }
    break;
  case HS_SP_AGG:
    put(b, " keys=[");
    for (int32_t i = 0; i < p->agg.n_keys; i++) {
      if (i) put(b, ", ");
      put_expr(b, p->agg.keys[i], in);
    }
    put(b, "]");
    if (p->agg.n_aggs > 0) {
      put(b, " aggregates=[");
      for (int32_t i = 0; i < p->agg.n_aggs; i++) {
        const hs_sql_aggcall *a = &p->agg.aggs[i];
        if (i) put(b, ", ");
        put(b, a->m.agg != NULL ? a->m.agg->name : "?");
        put(b, a->distinct ? "(DISTINCT " : "(");
        if (a->n_args == 0) put(b, "*");
        for (int32_t k = 0; k < a->n_args; k++) {
          if (k) put(b, ", ");
          put_expr(b, a->args[k], in);
        }
        put(b, ")");
      }
      put(b, "]");
    }
    break;
  case HS_SP_SORT:
    put(b, " ");
    for (int32_t i = 0; i < p->sort.n_keys; i++) {
      if (i) put(b, ", ");
      put_expr(b, p->sort.keys[i].expr, in);
      put(b, p->sort.keys[i].desc ? " DESC" : "");
      put(b, p->sort.keys[i].nulls_first != p->sort.keys[i].desc
                 ? (p->sort.keys[i].nulls_first ? " NULLS FIRST" : " NULLS LAST")
                 : "");
    }
    if (p->limit >= 0) {
      snprintf(tmp, sizeof tmp, " limit=%lld", (long long)p->limit);
      put(b, tmp);
    }
    if (p->offset > 0) {
      snprintf(tmp, sizeof tmp, " offset=%lld", (long long)p->offset);
      put(b, tmp);
    }
    break;
  case HS_SP_LIMIT:
    snprintf(tmp, sizeof tmp, " %lld offset %lld", (long long)p->limit, (long long)p->offset);
    put(b, tmp);
    break;
  case HS_SP_JOIN:
    put(b, " ");
    put(b, join_name(p->join.type));
    if (p->join.n_keys > 0) {
      put(b, " on ");
      for (int32_t i = 0; i < p->join.n_keys; i++) {
        if (i) put(b, " AND ");
        put_expr(b, p->join.left_keys[i], p->kids[0]);
        put(b, " = ");
        put_expr(b, p->join.right_keys[i], p->kids[1]);
      }
    }
    if (p->pred != NULL) {
      /* over the left columns then the right ones (a semi or anti join
       * outputs only the left: its own names do not cover the right) */
      int32_t nl = p->kids[0]->n_cols, nr = p->kids[1]->n_cols;
      const char **both = hs_malloc(sizeof(char *) * (size_t)(nl + nr + 1));
      put(b, " residual ");
      if (both == NULL) {
        put(b, "?");
      } else {
        for (int32_t i = 0; i < nl; i++) both[i] = p->kids[0]->names[i];
        for (int32_t i = 0; i < nr; i++) both[nl + i] = p->kids[1]->names[i];
        hs_error ignore = {0};
        if (hs_sql_expr_to_string(p->pred, both, b, &ignore) != HS_OK) put(b, "?");
        hs_free(both);
      }
    }
    if (p->join.method == HS_SJM_INDEX_NL && p->join.index_column != NULL) {
      put(b, " index on ");
      put(b, p->join.index_column);
    }
    break;
  default: break;
  }
  if (p->est_rows >= 0) {
    snprintf(tmp, sizeof tmp, " (est. %.0f rows)", p->est_rows);
    put(b, tmp);
  }
  if (analyze && op != NULL) {
    snprintf(tmp, sizeof tmp, " [rows=%lld time=%.3f ms]", (long long)op->stats.rows,
             (double)op->stats.ns / 1e6);
    put(b, tmp);
    if (op->stats.note[0]) {
      put(b, " [");
      put(b, op->stats.note);
      put(b, "]");
    }
  } else if (op != NULL && op->stats.note[0]) {
    put(b, " [");
    put(b, op->stats.note);
    put(b, "]");
  }
  put(b, "\n");
  for (int i = 0; i < 2; i++)
    if (p->kids[i] != NULL)
      explain_node(b, p->kids[i], op != NULL && p->kind != HS_SP_KNN ? op->kids[i] : NULL,
                   depth + 1, analyze);
  for (int32_t i = 0; i < p->n_many; i++)
    explain_node(b, p->many[i], op != NULL && op->many != NULL ? op->many[i] : NULL, depth + 1,
                 analyze);
}

static hs_status explain(const hs_sql_plan *root, const hs_sql_op *op, bool analyze, char **out,
                         hs_error *err) {
  hs_buf b;
  hs_buf_init(&b);
  explain_node(&b, root, op, 0, analyze);
  hs_buf_append(&b, "", 1);
  if (b.data == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  *out = (char *)b.data;
  return HS_OK;
}

hs_status hs_sql_exec_explain(hs_sql_exec *x, bool analyze, char **out, hs_error *err) {
  hs_sql_plan *run = x->root_plan->kind == HS_SP_EXPLAIN ? x->root_plan->kids[0] : x->root_plan;
  return explain(run, x->root, analyze, out, err);
}

hs_status hs_sql_plan_explain(const hs_sql_plan *root, char **out, hs_error *err) {
  return explain(root, NULL, false, out, err);
}

/* -------------------------------------------------------------- stream */

typedef struct stream_priv {
  hs_sql_exec *x;
  bool done;
  hs_error err;
} stream_priv;

static int s_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  stream_priv *sp = s->private_data;
  const hs_sql_plan *p = sp->x->root_plan;
  hs_error err = {0};
  hs_status st = hs_sql_schema_to_arrow(p->types, p->names, p->n_cols, out, &err);
  if (st != HS_OK) {
    sp->err = err;
    return hs_status_errno(st);
  }
  return 0;
}

static int s_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  stream_priv *sp = s->private_data;
  memset(out, 0, sizeof(*out));
  if (sp->err.status != HS_OK) return hs_status_errno(sp->err.status);
  if (sp->done) return 0; /* out->release == NULL: the end */
  for (;;) {
    hs_sql_chunk c;
    hs_error err = {0};
    hs_status st = hs_sql_op_next(sp->x->root, &c, &err);
    if (st != HS_OK) {
      sp->err = err;
      return hs_status_errno(st);
    }
    if (c.n == 0) {
      hs_sql_chunk_release(&c);
      sp->done = true;
      return 0;
    }
    st = hs_sql_chunk_to_arrow(&c, out, &err);
    hs_sql_chunk_release(&c);
    if (st != HS_OK) {
      sp->err = err;
      return hs_status_errno(st);
    }
    return 0;
  }
}

static const char *s_last_error(struct ArrowArrayStream *s) {
  stream_priv *sp = s->private_data;
  return sp->err.status != HS_OK ? sp->err.message : NULL;
}

static void s_release(struct ArrowArrayStream *s) {
  stream_priv *sp = s->private_data;
  if (sp != NULL) {
    hs_sql_exec_free(sp->x);
    hs_free(sp);
  }
  s->release = NULL;
}

hs_status hs_sql_exec_stream(hs_sql_exec *x, struct ArrowArrayStream *out, hs_error *err) {
  stream_priv *sp = hs_calloc(1, sizeof(*sp));
  if (sp == NULL) {
    hs_sql_exec_free(x);
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  }
  sp->x = x;
  out->get_schema = s_get_schema;
  out->get_next = s_get_next;
  out->get_last_error = s_last_error;
  out->release = s_release;
  out->private_data = sp;
  return HS_OK;
}
