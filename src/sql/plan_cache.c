/*
 * plan_cache.c — a session's bound and optimized SELECT plans, by
 * statement text and parameter types, so a statement run again (a
 * `$n`-parameterized kNN query with a new vector, a dashboard's query)
 * skips parse, bind and optimize.
 *
 * What a plan depends on, and so what keys or invalidates an entry:
 *  - the text, the parameters' types (a parameter's type types the
 *    expressions; its value is read at run time: HS_SX_PARAM, the KNN
 *    node's query expression), the optimizer's switches in the
 *    environment (HS_SQL_JOIN_ORDER, HS_SQL_AGG_KEYS) and the session's
 *    relations by name (its generation: a register or unregister changes
 *    what a name means);
 *  - per table the plan reads, a stamp of its handle after the run's
 *    refresh: table uuid, current schema id, format version and the index
 *    configuration and registry properties (an index created, built or
 *    dropped, a column added or renamed, a table recreated all change it),
 *    and for plans with a join also the current snapshot (the join order
 *    and methods come from row estimates; a single-table plan has no such
 *    choice, so appends keep it and its runs read the new rows).
 * Settings (hnsw.ef_search, ivfflat.probes, memory_limit) are read by the
 * operators at run time from the run's own copy, so they key nothing.
 * Plans whose binding read more than that (hs_sql_plan_ctx.no_cache: a
 * subquery run while binding, LIMIT $1, hs_ref / hs_as_of) are not kept.
 *
 * A cached plan is a template: each run gets a copy of its nodes and of
 * its table relations (with the run's own table handles) in a fresh
 * context whose `base` holds a reference on the template; expressions,
 * names and the parse tree stay shared (operators never write to a plan).
 * So two streams of one text may be open at once, and an entry replaced
 * or dropped lives until its last run ends.
 *
 * HS_PLAN_CACHE_N entries, the least recently used replaced; texts over
 * HS_PLAN_CACHE_MAX_TEXT bytes are not kept. Not thread-safe: the
 * session's (one statement at a time); templates are released from any
 * thread (atomic counts). HS_SQL_PLAN_CACHE=0 turns it off.
 */
#include <stdlib.h>
#include <string.h>

#include "plan_cache.h"

#define HS_PLAN_CACHE_N 32
#define HS_PLAN_CACHE_MAX_TEXT 65536
#define HS_PLAN_CACHE_MAX_RELS 64

typedef struct tmpl {
  int64_t refs; /* atomic: the entry's and each live run's */
  hs_sql_plan_ctx *pctx;
  hs_sql_plan *plan;
} tmpl;

typedef struct dep {
  const hs_sql_rel *rel; /* the template's table relation (in its arena) */
  uint64_t stamp;
} dep;

typedef struct entry {
  char *sql;
  size_t len;
  uint64_t hash;
  hs_sql_type *ptypes;
  int32_t n_params;
  uint64_t env, gen;
  bool with_snapshot; /* the plan has a join: the stamps include the snapshot */
  tmpl *t;
  dep *deps;
  size_t n_deps;
  uint64_t used;
} entry;

struct hs_sql_plan_cache {
  entry e[HS_PLAN_CACHE_N];
  uint64_t clock;
  hs_sql_plan_cache_stats stats;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const uint8_t *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
  return h;
}

static uint64_t fnv_str(uint64_t h, const char *s) {
  if (s == NULL) return fnv(h, "\xff", 1); /* absent differs from empty */
  return fnv(h, s, strlen(s) + 1);
}

uint64_t hs_sql_plan_cache_stamp(const hs_table *t, bool with_snapshot) {
  const hs_iceberg_metadata *m = &t->meta;
  uint64_t h = 1469598103934665603ull;
  h = fnv_str(h, m->table_uuid);
  h = fnv(h, &m->current_schema_id, sizeof m->current_schema_id);
  h = fnv(h, &m->format_version, sizeof m->format_version);
  h = fnv_str(h, hs_iceberg_metadata_property(m, "hyperstream.indexes"));
  h = fnv_str(h, hs_iceberg_metadata_property(m, "hyperstream.index-registry"));
  if (with_snapshot) {
    int64_t sid = m->has_current_snapshot_id ? m->current_snapshot_id : -1;
    h = fnv(h, &sid, sizeof sid);
  }
  return h;
}

hs_sql_plan_cache *hs_sql_plan_cache_new(void) {
  const char *env = getenv("HS_SQL_PLAN_CACHE");
  if (env != NULL && strcmp(env, "0") == 0) return NULL;
  return hs_calloc(1, sizeof(hs_sql_plan_cache));
}

static void tmpl_release(void *p) {
  tmpl *t = p;
  if (t == NULL || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
  hs_sql_plan_ctx_free(t->pctx);
  hs_free(t);
}

static void entry_clear(entry *e) {
  hs_free(e->sql);
  hs_free(e->ptypes);
  hs_free(e->deps);
  tmpl_release(e->t);
  memset(e, 0, sizeof(*e));
}

void hs_sql_plan_cache_free(hs_sql_plan_cache *c) {
  if (c == NULL) return;
  for (size_t i = 0; i < HS_PLAN_CACHE_N; i++) entry_clear(&c->e[i]);
  hs_free(c);
}

hs_sql_plan_cache_stats hs_sql_plan_cache_get_stats(const hs_sql_plan_cache *c) {
  hs_sql_plan_cache_stats s = {0};
  if (c == NULL) return s;
  s = c->stats;
  for (size_t i = 0; i < HS_PLAN_CACHE_N; i++) s.entries += c->e[i].t != NULL;
  return s;
}

static bool key_matches(const entry *e, const hs_sql_plan_key *k, uint64_t h) {
  if (e->t == NULL || e->hash != h || e->len != k->len || e->n_params != k->n_params ||
      e->env != k->env || e->gen != k->gen || memcmp(e->sql, k->sql, k->len) != 0)
    return false;
  for (int32_t i = 0; i < k->n_params; i++)
    if (!hs_sql_type_eq(e->ptypes[i], k->params[i].type)) return false;
  return true;
}

/* ------------------------------------------------------------ copying */

typedef struct relmap {
  const hs_sql_rel *from[HS_PLAN_CACHE_MAX_RELS];
  hs_sql_rel *to[HS_PLAN_CACHE_MAX_RELS];
  size_t n;
} relmap;

/* A copy of the nodes of `p` in A (expressions and arrays shared), its
 * table relations replaced through `m`; NULL when out of memory. */
static hs_sql_plan *copy_nodes(hs_arena *A, const hs_sql_plan *p, const relmap *m, int depth) {
  if (depth > 10000) return NULL;
  hs_sql_plan *c = hs_arena_memdup(A, p, sizeof(*p));
  if (c == NULL) return NULL;
  for (int i = 0; i < 2; i++)
    if (p->kids[i] != NULL && (c->kids[i] = copy_nodes(A, p->kids[i], m, depth + 1)) == NULL)
      return NULL;
  if (p->n_many > 0) {
    c->many = hs_arena_alloc(A, sizeof(*c->many) * (size_t)p->n_many);
    if (c->many == NULL) return NULL;
    for (int32_t i = 0; i < p->n_many; i++)
      if ((c->many[i] = copy_nodes(A, p->many[i], m, depth + 1)) == NULL) return NULL;
  }
  if ((p->kind == HS_SP_SCAN || p->kind == HS_SP_KNN) && p->scan.rel != NULL)
    for (size_t i = 0; i < m->n; i++)
      if (m->from[i] == p->scan.rel) c->scan.rel = m->to[i];
  return c;
}

/* A run's context for template t: its nodes copied, relation i of
 * deps[0..n) given handle tables[i] (which the context then owns, also
 * on failure). */
static hs_status make_run(tmpl *t, const dep *deps, size_t n, hs_table **tables, const char *sql,
                          hs_sql_plan_ctx **pctx_out, hs_sql_plan **plan_out, hs_error *err) {
  hs_sql_plan_ctx *pc = hs_calloc(1, sizeof(*pc));
  if (pc == NULL) {
    for (size_t i = 0; i < n; i++) hs_sql_rel_close(deps[i].rel, tables[i]);
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  }
  hs_arena_init(&pc->arena);
  pc->sql = sql;
  __atomic_add_fetch(&t->refs, 1, __ATOMIC_ACQ_REL);
  pc->base = t;
  pc->base_release = tmpl_release;
  relmap m;
  m.n = 0;
  hs_status st = HS_OK;
  for (size_t i = 0; i < n; i++) {
    hs_sql_rel *r = hs_arena_memdup(&pc->arena, deps[i].rel, sizeof(hs_sql_rel));
    if (r == NULL) {
      for (size_t k = i; k < n; k++) hs_sql_rel_close(deps[k].rel, tables[k]);
      st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      break;
    }
    r->table = tables[i]; /* the context owns it from here */
    r->next_opened = pc->opened;
    pc->opened = r;
    m.from[m.n] = deps[i].rel;
    m.to[m.n++] = r;
  }
  hs_sql_plan *plan = st == HS_OK ? copy_nodes(&pc->arena, t->plan, &m, 0) : NULL;
  if (st == HS_OK && plan == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
  if (st != HS_OK) {
    hs_sql_plan_ctx_free(pc);
    return st;
  }
  *pctx_out = pc;
  *plan_out = plan;
  return HS_OK;
}

/* ------------------------------------------------------------ get/put */

bool hs_sql_plan_cache_get(hs_sql_plan_cache *c, const hs_sql_plan_key *k,
                           hs_sql_plan_acquire_fn acquire, hs_sql_plan_ctx **pctx,
                           hs_sql_plan **plan) {
  *pctx = NULL;
  *plan = NULL;
  if (c == NULL || k->len > HS_PLAN_CACHE_MAX_TEXT) return false;
  uint64_t h = fnv(1469598103934665603ull, k->sql, k->len);
  entry *e = NULL;
  for (size_t i = 0; i < HS_PLAN_CACHE_N && e == NULL; i++)
    if (key_matches(&c->e[i], k, h)) e = &c->e[i];
  if (e == NULL) {
    c->stats.misses++;
    return false;
  }
  /* the run's handles, refreshed: each table must still be as planned */
  hs_table *tables[HS_PLAN_CACHE_MAX_RELS];
  size_t got = 0;
  bool ok = true;
  for (; got < e->n_deps && ok; got++) {
    hs_error ignore = {0};
    tables[got] = NULL;
    ok = acquire(e->deps[got].rel, &tables[got], &ignore) == HS_OK &&
         hs_sql_plan_cache_stamp(tables[got], e->with_snapshot) == e->deps[got].stamp;
  }
  if (!ok) { /* changed (or gone: binding again says why) */
    for (size_t i = 0; i < got; i++) hs_sql_rel_close(e->deps[i].rel, tables[i]);
    entry_clear(e);
    c->stats.invalidations++;
    c->stats.misses++;
    return false;
  }
  hs_error err = {0};
  if (make_run(e->t, e->deps, e->n_deps, tables, k->sql, pctx, plan, &err) != HS_OK) {
    c->stats.misses++;
    return false; /* out of memory: binding again reports it */
  }
  e->used = ++c->clock;
  c->stats.hits++;
  return true;
}

static bool plan_has(const hs_sql_plan *p, hs_sql_plan_kind kind) {
  if (p->kind == kind) return true;
  for (int i = 0; i < 2; i++)
    if (p->kids[i] != NULL && plan_has(p->kids[i], kind)) return true;
  for (int32_t i = 0; i < p->n_many; i++)
    if (plan_has(p->many[i], kind)) return true;
  return false;
}

hs_status hs_sql_plan_cache_put(hs_sql_plan_cache *c, const hs_sql_plan_key *k,
                                hs_sql_plan_ctx **pctx, hs_sql_plan **plan, hs_error *err) {
  hs_sql_plan_ctx *pc = *pctx;
  if (c == NULL || pc == NULL || pc->no_cache || pc->base != NULL ||
      k->len > HS_PLAN_CACHE_MAX_TEXT || plan_has(*plan, HS_SP_SHARED))
    return HS_OK;
  /* every table relation must still hold the handle it was bound with */
  size_t n = 0;
  for (const hs_sql_rel *r = pc->opened; r != NULL; r = r->next_opened) {
    if (n == HS_PLAN_CACHE_MAX_RELS || hs_sql_rel_peek(r) == NULL) return HS_OK;
    n++;
  }
  bool with_snapshot = plan_has(*plan, HS_SP_JOIN);
  entry fresh;
  memset(&fresh, 0, sizeof fresh);
  fresh.sql = hs_malloc(k->len + 1);
  fresh.ptypes = hs_calloc((size_t)k->n_params + 1, sizeof(hs_sql_type));
  fresh.deps = hs_calloc(n + 1, sizeof(dep));
  fresh.t = hs_calloc(1, sizeof(tmpl));
  if (fresh.sql == NULL || fresh.ptypes == NULL || fresh.deps == NULL || fresh.t == NULL) {
    hs_free(fresh.sql);
    hs_free(fresh.ptypes);
    hs_free(fresh.deps);
    hs_free(fresh.t);
    return HS_OK; /* not cached: the next run binds again */
  }
  memcpy(fresh.sql, k->sql, k->len);
  fresh.sql[k->len] = '\0';
  fresh.len = k->len;
  fresh.hash = fnv(1469598103934665603ull, k->sql, k->len);
  for (int32_t i = 0; i < k->n_params; i++) fresh.ptypes[i] = k->params[i].type;
  fresh.n_params = k->n_params;
  fresh.env = k->env;
  fresh.gen = k->gen;
  fresh.with_snapshot = with_snapshot;
  /* the handles move from the template's relations to this run's */
  hs_table *tables[HS_PLAN_CACHE_MAX_RELS];
  size_t i = 0;
  for (hs_sql_rel *r = pc->opened; r != NULL; r = r->next_opened, i++) {
    tables[i] = __atomic_exchange_n(&r->table, NULL, __ATOMIC_ACQ_REL);
    fresh.deps[i].rel = r;
    fresh.deps[i].stamp = hs_sql_plan_cache_stamp(tables[i], with_snapshot);
  }
  fresh.n_deps = n;
  fresh.t->refs = 1; /* the entry's */
  fresh.t->pctx = pc;
  fresh.t->plan = *plan;
  pc->sql = NULL; /* the caller's text goes with its statement (only binding reads it) */
  hs_sql_plan_ctx *run = NULL;
  hs_sql_plan *run_plan = NULL;
  hs_status st = make_run(fresh.t, fresh.deps, n, tables, k->sql, &run, &run_plan, err);
  /* into the slot: an empty one, else the least recently used */
  entry *v = &c->e[0];
  for (size_t s = 0; s < HS_PLAN_CACHE_N; s++) {
    if (c->e[s].t == NULL) {
      v = &c->e[s];
      break;
    }
    if (c->e[s].used < v->used) v = &c->e[s];
  }
  entry_clear(v);
  *v = fresh;
  v->used = ++c->clock;
  c->stats.puts++;
  if (st != HS_OK) { /* no copy for this run: drop the entry (it held the plan) */
    entry_clear(v);
    *pctx = NULL;
    *plan = NULL;
    return st;
  }
  *pctx = run;
  *plan = run_plan;
  return HS_OK;
}
