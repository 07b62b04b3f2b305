/*
 * refs.c — metadata-only commits that move or name snapshots: rollback to
 * an ancestor, new tags and branches. No data or manifest is written; the
 * commit publishes v{N+1}.metadata.json exclusively, like an append
 * (commit.c), and on a lost race re-reads the winner's version and
 * re-validates the change against it (a rollback target must still be an
 * ancestor of the then-current snapshot; a new ref name must still be
 * free).
 *
 * Iceberg semantics followed (spec "Snapshot References", Java
 * ManageSnapshots, pyiceberg ManageSnapshots): rollback sets the main
 * branch and current-snapshot-id to an ancestor of the current snapshot and
 * appends a snapshot-log entry stamped with the commit time (which is also
 * last-updated-ms); later snapshots stay in the metadata. Tags and branches
 * are new entries in "refs"; "main" is a branch that always exists once a
 * snapshot does.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../io/fs.h"
#include "timetravel.h"
#include "txn.h"

#define REF_NAME_BYTES_MAX 1024

bool hs_table_is_ancestor(const hs_iceberg_metadata *m, int64_t ancestor, int64_t of) {
  const hs_iceberg_snapshot *s = hs_iceberg_metadata_snapshot(m, of);
  /* At most n_snapshots steps: a parent cycle in hostile metadata ends here. */
  for (size_t steps = 0; s != NULL && steps <= m->n_snapshots; steps++) {
    if (s->snapshot_id == ancestor) return true;
    if (!s->has_parent_snapshot_id) return false;
    s = hs_iceberg_metadata_snapshot(m, s->parent_snapshot_id);
  }
  return false;
}

/* ------------------------------------------------- the commit */

/* An edit of `m`, a shallow copy of the latest version's metadata whose
 * arrays are shared with it: an edit replaces arrays (allocated from
 * `arena`), never writes through them. *changed = false: nothing to do. */
typedef hs_status (*ref_edit_fn)(const hs_table *t, hs_iceberg_metadata *m, hs_arena *arena,
                                 int64_t now_ms, const void *ctx, bool *changed, hs_error *err);

/* A ref edit as a transaction's metadata edit: the commit's time is
 * m->last_updated_ms (the txn sets it), which a rollback stamps on its
 * snapshot-log entry. */
typedef struct ref_txn_ctx {
  const hs_table *t;
  ref_edit_fn edit;
  const void *ctx;
} ref_txn_ctx;

static hs_status ref_txn_edit(const hs_iceberg_metadata *old, hs_iceberg_metadata *m, hs_arena *a,
                              void *vctx, bool *changed, hs_error *err) {
  (void)old;
  const ref_txn_ctx *c = vctx;
  *changed = true;
  return c->edit(c->t, m, a, m->last_updated_ms, c->ctx, changed, err);
}

/* Commit `edit` through the one commit path (txn.c): exclusive publish,
 * the edit re-applied (and so re-validated) on every lost race. */
static hs_status ref_commit(hs_table *t, const char *what, ref_edit_fn edit, const void *ctx,
                            hs_error *err) {
  hs_txn *x = NULL;
  hs_status st = hs_txn_begin(t, what, &x, err);
  if (st != HS_OK) return st;
  ref_txn_ctx c = {.t = t, .edit = edit, .ctx = ctx};
  hs_txn_set_edit(x, ref_txn_edit, &c, false);
  st = hs_txn_commit(x, NULL, NULL, err);
  hs_txn_free(x);
  return st;
}

/* ------------------------------------------------------- the edits */

/* Copy of m's refs with room for one more, in `arena`. */
static hs_iceberg_ref *refs_grown(const hs_iceberg_metadata *m, hs_arena *arena) {
  hs_iceberg_ref *r = hs_arena_alloc(arena, (m->n_refs + 1) * sizeof *r);
  if (r != NULL && m->n_refs) memcpy(r, m->refs, m->n_refs * sizeof *r);
  return r;
}

static const hs_iceberg_ref *find_ref(const hs_iceberg_metadata *m, const char *name) {
  for (size_t i = 0; i < m->n_refs; i++)
    if (strcmp(m->refs[i].name, name) == 0) return &m->refs[i];
  return NULL;
}

static hs_status edit_rollback(const hs_table *t, hs_iceberg_metadata *m, hs_arena *arena,
                               int64_t now_ms, const void *ctx, bool *changed, hs_error *err) {
  int64_t id = *(const int64_t *)ctx;
  if (hs_iceberg_metadata_snapshot(m, id) == NULL) {
    return hs_error_set(err, HS_ERR_NOT_FOUND, "%s: rollback: no snapshot %lld", t->metadata_path,
                        (long long)id);
  }
  if (!m->has_current_snapshot_id) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: rollback: the table has no current snapshot",
                        t->metadata_path);
  }
  int64_t cur = m->current_snapshot_id;
  if (cur == id) {
    *changed = false; /* already there: nothing to commit */
    return HS_OK;
  }
  if (!hs_table_is_ancestor(m, id, cur)) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: cannot roll back to snapshot %lld: it is not an ancestor of the "
                        "current snapshot %lld (read it by id, tag or time instead)",
                        t->metadata_path, (long long)id, (long long)cur);
  }
  hs_iceberg_ref *refs = refs_grown(m, arena);
  hs_iceberg_snapshot_log_entry *log = hs_arena_alloc(arena, (m->n_snapshot_log + 1) * sizeof *log);
  if (refs == NULL || log == NULL) {
    return hs_error_set(err, HS_ERR_NOMEM, "rollback: out of memory");
  }
  bool have_main = false;
  for (size_t i = 0; i < m->n_refs; i++) {
    if (strcmp(refs[i].name, "main") == 0) {
      refs[i].snapshot_id = id;
      refs[i].is_tag = false;
      have_main = true;
    }
  }
  size_t n_refs = m->n_refs;
  if (!have_main) {
    memset(&refs[n_refs], 0, sizeof refs[0]);
    refs[n_refs].name = "main";
    refs[n_refs++].snapshot_id = id;
  }
  if (m->n_snapshot_log) memcpy(log, m->snapshot_log, m->n_snapshot_log * sizeof *log);
  log[m->n_snapshot_log] =
      (hs_iceberg_snapshot_log_entry){.timestamp_ms = now_ms, .snapshot_id = id};
  m->refs = refs;
  m->n_refs = n_refs;
  m->snapshot_log = log;
  m->n_snapshot_log++;
  m->current_snapshot_id = id;
  return HS_OK;
}

typedef struct ref_ctx {
  const char *name;
  int64_t snapshot_id; /* -1: current */
  bool is_tag;
  int64_t max_ref_age_ms; /* < 0: unset */
} ref_ctx;

static hs_status edit_create_ref(const hs_table *t, hs_iceberg_metadata *m, hs_arena *arena,
                                 int64_t now_ms, const void *vctx, bool *changed, hs_error *err) {
  (void)now_ms;
  (void)changed;
  const ref_ctx *c = vctx;
  const char *kind = c->is_tag ? "tag" : "branch";
  const hs_iceberg_ref *have = find_ref(m, c->name);
  if (have != NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: create %s '%s': a %s of that name already exists (snapshot %lld)",
                        t->metadata_path, kind, c->name, have->is_tag ? "tag" : "branch",
                        (long long)have->snapshot_id);
  }
  int64_t id = c->snapshot_id;
  if (id == -1) {
    if (!m->has_current_snapshot_id) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "%s: create %s '%s': the table has no current snapshot", t->metadata_path,
                          kind, c->name);
    }
    id = m->current_snapshot_id;
  }
  if (hs_iceberg_metadata_snapshot(m, id) == NULL) {
    return hs_error_set(err, HS_ERR_NOT_FOUND, "%s: create %s '%s': no snapshot %lld",
                        t->metadata_path, kind, c->name, (long long)id);
  }
  hs_iceberg_ref *refs = refs_grown(m, arena);
  char *name = hs_arena_strndup(arena, c->name, strlen(c->name));
  if (refs == NULL || name == NULL) return hs_error_set(err, HS_ERR_NOMEM, "ref: out of memory");
  hs_iceberg_ref *r = &refs[m->n_refs];
  memset(r, 0, sizeof *r);
  r->name = name;
  r->snapshot_id = id;
  r->is_tag = c->is_tag;
  if (c->max_ref_age_ms > 0) {
    r->has_max_ref_age_ms = true;
    r->max_ref_age_ms = c->max_ref_age_ms;
  }
  m->refs = refs;
  m->n_refs++;
  return HS_OK;
}

/* ------------------------------------------------------- public API */

hs_status hs_table_rollback_to_snapshot(hs_table *table, int64_t snapshot_id, hs_error *err) {
  if (table == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "rollback: no table");
  return ref_commit(table, "rollback", edit_rollback, &snapshot_id, err);
}

static hs_status create_ref(hs_table *table, const char *name, int64_t snapshot_id, bool is_tag,
                            int64_t max_ref_age_ms, hs_error *err) {
  const char *what = is_tag ? "create tag" : "create branch";
  if (table == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: no table", what);
  size_t len = name ? strlen(name) : 0;
  if (len == 0 || len > REF_NAME_BYTES_MAX) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: a ref name must have 1 to %d bytes", what,
                        REF_NAME_BYTES_MAX);
  }
  if (snapshot_id < -1) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s '%s': snapshot id %lld", what, name,
                        (long long)snapshot_id);
  }
  ref_ctx c = {
      .name = name, .snapshot_id = snapshot_id, .is_tag = is_tag, .max_ref_age_ms = max_ref_age_ms};
  return ref_commit(table, what, edit_create_ref, &c, err);
}

hs_status hs_table_create_tag(hs_table *table, const char *name, int64_t snapshot_id,
                              int64_t max_ref_age_ms, hs_error *err) {
  return create_ref(table, name, snapshot_id, true, max_ref_age_ms, err);
}

hs_status hs_table_create_branch(hs_table *table, const char *name, int64_t snapshot_id,
                                 hs_error *err) {
  return create_ref(table, name, snapshot_id, false, -1, err);
}
