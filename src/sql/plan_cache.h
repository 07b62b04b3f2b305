/*
 * plan_cache.h — a session's bound and optimized SELECT plans by
 * statement text and parameter types (plan_cache.c has what keys and
 * invalidates an entry). Private to src/sql/.
 *
 * Ownership: the cache owns its templates; each run gets a context of its
 * own (hs_sql_plan_ctx_free frees it as any statement's, and lets go of
 * its template), so a run may outlive the entry and the cache.
 */
#ifndef HS_SQL_PLAN_CACHE_H
#define HS_SQL_PLAN_CACHE_H

#include "exec.h"

typedef struct hs_sql_plan_cache hs_sql_plan_cache;

/* What a statement's plan is looked up by. */
typedef struct hs_sql_plan_key {
  const char *sql; /* the text, `len` bytes */
  size_t len;
  const hs_sql_value *params; /* their types only */
  int32_t n_params;
  uint64_t env; /* the optimizer's environment switches, as bits */
  uint64_t gen; /* the session's relations generation (names -> relations) */
} hs_sql_plan_key;

typedef struct hs_sql_plan_cache_stats {
  int64_t hits, misses, puts, invalidations;
  int64_t entries; /* held now */
} hs_sql_plan_cache_stats;

/* A new cache, or NULL (HS_SQL_PLAN_CACHE=0 in the environment, or no
 * memory): then every statement binds. */
hs_sql_plan_cache *hs_sql_plan_cache_new(void);
void hs_sql_plan_cache_free(hs_sql_plan_cache *c); /* accepts NULL */
hs_sql_plan_cache_stats hs_sql_plan_cache_get_stats(const hs_sql_plan_cache *c);

/* A handle on table relation `rel` at its latest version (the session's
 * idle handle refreshed, or a new open), which hs_sql_rel_close gives back. */
typedef hs_status (*hs_sql_plan_acquire_fn)(const hs_sql_rel *rel, hs_table **out, hs_error *err);

/* The cached plan of `k` for one run: true with *pctx (the caller's, to
 * free or hand to an exec) holding a copy of the plan, *plan, whose table
 * relations hold handles from `acquire` that match the stamps taken when
 * it was planned. false: not cached, or a table changed (the entry is
 * dropped); bind the statement. */
bool hs_sql_plan_cache_get(hs_sql_plan_cache *c, const hs_sql_plan_key *k,
                           hs_sql_plan_acquire_fn acquire, hs_sql_plan_ctx **pctx,
                           hs_sql_plan **plan);

/* Keep the freshly bound and optimized plan *plan (in *pctx, whose table
 * relations still hold their handles) for `k`, unless it may not be kept
 * (pctx->no_cache, ...; then *pctx and *plan stay as they are). When kept,
 * the cache takes *pctx and *plan and replaces them with a run's copy.
 * An error (out of memory after the cache took them) leaves both NULL. */
hs_status hs_sql_plan_cache_put(hs_sql_plan_cache *c, const hs_sql_plan_key *k,
                                hs_sql_plan_ctx **pctx, hs_sql_plan **plan, hs_error *err);

/* A stamp of what a plan over table `t` depends on (uuid, schema id,
 * format version, index configuration and registry; with_snapshot: and the
 * current snapshot). */
uint64_t hs_sql_plan_cache_stamp(const hs_table *t, bool with_snapshot);

#endif /* HS_SQL_PLAN_CACHE_H */
