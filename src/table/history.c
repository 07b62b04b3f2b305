/*
 * history.c — resolving what to read and listing how the table got there:
 * a snapshot "as of" a time (the snapshot log), a tag or branch name, the
 * refs, and the history with is-current-ancestor flags.
 *
 * "As of" follows the snapshot log, as Iceberg's Java SnapshotUtil and
 * pyiceberg's snapshot_as_of_timestamp do: the last entry made at or
 * before the time names the snapshot that was current then. Because a
 * rollback appends an entry (it does not rewrite the log), a time between
 * an append and a later rollback still reads the appended snapshot: what a
 * reader saw at that time. A table without a log (other writers may omit
 * it) falls back to the current snapshot's ancestry by snapshot
 * timestamp.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timetravel.h"

/* "2024-01-01T00:00:00Z" (".123" before the Z when there are ms). */
static void format_utc(int64_t ms, char out[40]) {
  int64_t secs = ms / 1000, frac = ms % 1000;
  if (frac < 0) {
    frac += 1000;
    secs--;
  }
  time_t tt = (time_t)secs;
  struct tm tm;
  if (gmtime_r(&tt, &tm) == NULL) {
    snprintf(out, 40, "%lld ms", (long long)ms);
    return;
  }
  char base[32];
  strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
  if (frac) {
    snprintf(out, 40, "%s.%03dZ", base, (int)frac);
  } else {
    snprintf(out, 40, "%sZ", base);
  }
}

/* The newest ancestor of the current snapshot at or before `ts`; also the
 * oldest ancestor (for the error message). */
static const hs_iceberg_snapshot *ancestor_at(const hs_iceberg_metadata *m, int64_t ts,
                                              const hs_iceberg_snapshot **oldest) {
  const hs_iceberg_snapshot *s =
      m->has_current_snapshot_id ? hs_iceberg_metadata_snapshot(m, m->current_snapshot_id) : NULL;
  *oldest = NULL;
  for (size_t steps = 0; s != NULL && steps <= m->n_snapshots; steps++) {
    if (s->timestamp_ms <= ts) return s;
    *oldest = s;
    if (!s->has_parent_snapshot_id) break;
    s = hs_iceberg_metadata_snapshot(m, s->parent_snapshot_id);
  }
  return NULL;
}

hs_status hs_table_snapshot_at(const hs_table *table, int64_t timestamp_ms, int64_t *snapshot_id,
                               hs_error *err) {
  *snapshot_id = -1;
  const hs_iceberg_metadata *m = &table->meta;
  char when[40], first_when[40];
  format_utc(timestamp_ms, when);
  if (m->n_snapshot_log == 0) {
    const hs_iceberg_snapshot *oldest = NULL;
    const hs_iceberg_snapshot *s = ancestor_at(m, timestamp_ms, &oldest);
    if (s != NULL) {
      *snapshot_id = s->snapshot_id;
      return HS_OK;
    }
    if (oldest == NULL) {
      return hs_error_set(err, HS_ERR_NOT_FOUND,
                          "%s: no snapshot at or before %s: the table has no snapshots",
                          table->metadata_path, when);
    }
    format_utc(oldest->timestamp_ms, first_when);
    return hs_error_set(err, HS_ERR_NOT_FOUND,
                        "%s: no snapshot at or before %s; the first is %lld at %s",
                        table->metadata_path, when, (long long)oldest->snapshot_id, first_when);
  }
  /* The log is in commit order; scan from the newest entry back. */
  for (size_t i = m->n_snapshot_log; i-- > 0;) {
    const hs_iceberg_snapshot_log_entry *e = &m->snapshot_log[i];
    if (e->timestamp_ms > timestamp_ms) continue;
    if (hs_iceberg_metadata_snapshot(m, e->snapshot_id) == NULL) {
      char at[40];
      format_utc(e->timestamp_ms, at);
      return hs_error_set(err, HS_ERR_NOT_FOUND,
                          "%s: snapshot %lld, current at %s (as of %s), has expired",
                          table->metadata_path, (long long)e->snapshot_id, at, when);
    }
    *snapshot_id = e->snapshot_id;
    return HS_OK;
  }
  const hs_iceberg_snapshot_log_entry *first = &m->snapshot_log[0];
  format_utc(first->timestamp_ms, first_when);
  return hs_error_set(err, HS_ERR_NOT_FOUND,
                      "%s: no snapshot at or before %s; the first is %lld at %s",
                      table->metadata_path, when, (long long)first->snapshot_id, first_when);
}

hs_status hs_table_ref_snapshot(const hs_table *table, const char *name, int64_t *snapshot_id,
                                hs_error *err) {
  *snapshot_id = -1;
  if (name == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "ref: no name");
  const hs_iceberg_metadata *m = &table->meta;
  for (size_t i = 0; i < m->n_refs; i++) {
    if (strcmp(m->refs[i].name, name) != 0) continue;
    if (hs_iceberg_metadata_snapshot(m, m->refs[i].snapshot_id) == NULL) {
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: %s '%s' points at missing snapshot %lld",
                          table->metadata_path, m->refs[i].is_tag ? "tag" : "branch", name,
                          (long long)m->refs[i].snapshot_id);
    }
    *snapshot_id = m->refs[i].snapshot_id;
    return HS_OK;
  }
  /* Tables written before refs existed (v1) still have a current main. */
  if (strcmp(name, "main") == 0 && m->has_current_snapshot_id) {
    *snapshot_id = m->current_snapshot_id;
    return HS_OK;
  }
  hs_buf names;
  hs_buf_init(&names);
  bool ok = true;
  for (size_t i = 0; ok && i < m->n_refs; i++) {
    ok = hs_buf_printf(&names, "%s%s", i ? ", " : "", m->refs[i].name);
  }
  if (ok && m->n_refs == 0) ok = hs_buf_printf(&names, "(none)");
  ok = ok && hs_buf_append_byte(&names, 0);
  hs_status st =
      hs_error_set(err, HS_ERR_NOT_FOUND, "%s: no tag or branch named '%s'; refs are: %s",
                   table->metadata_path, name, ok ? (const char *)names.data : "?");
  hs_buf_free(&names);
  return st;
}

hs_status hs_table_refs(const hs_table *table, hs_table_ref_info **out, size_t *n_out,
                        hs_error *err) {
  *out = NULL;
  *n_out = 0;
  const hs_iceberg_metadata *m = &table->meta;
  if (m->n_refs == 0) return HS_OK;
  hs_table_ref_info *v = hs_calloc(m->n_refs, sizeof *v);
  if (v == NULL) return hs_error_set(err, HS_ERR_NOMEM, "refs: out of memory");
  for (size_t i = 0; i < m->n_refs; i++) {
    const hs_iceberg_ref *r = &m->refs[i];
    v[i].name = r->name;
    v[i].snapshot_id = r->snapshot_id;
    v[i].is_tag = r->is_tag;
    v[i].max_ref_age_ms = r->has_max_ref_age_ms ? r->max_ref_age_ms : -1;
    v[i].max_snapshot_age_ms = r->has_max_snapshot_age_ms ? r->max_snapshot_age_ms : -1;
    v[i].min_snapshots_to_keep = r->has_min_snapshots_to_keep ? r->min_snapshots_to_keep : -1;
  }
  *out = v;
  *n_out = m->n_refs;
  return HS_OK;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

hs_status hs_table_history(const hs_table *table, hs_table_history_entry **out, size_t *n_out,
                           hs_error *err) {
  *out = NULL;
  *n_out = 0;
  const hs_iceberg_metadata *m = &table->meta;
  size_t n = m->n_snapshot_log;
  if (n == 0) return HS_OK;
  hs_table_history_entry *v = hs_calloc(n, sizeof *v);
  /* The current snapshot's ancestors, sorted, looked up per entry. */
  int64_t *anc = hs_calloc(m->n_snapshots + 1, sizeof *anc);
  if (v == NULL || anc == NULL) {
    hs_free(v);
    hs_free(anc);
    return hs_error_set(err, HS_ERR_NOMEM, "history: out of memory");
  }
  size_t n_anc = 0;
  const hs_iceberg_snapshot *s =
      m->has_current_snapshot_id ? hs_iceberg_metadata_snapshot(m, m->current_snapshot_id) : NULL;
  while (s != NULL && n_anc < m->n_snapshots) {
    anc[n_anc++] = s->snapshot_id;
    s = s->has_parent_snapshot_id ? hs_iceberg_metadata_snapshot(m, s->parent_snapshot_id) : NULL;
  }
  qsort(anc, n_anc, sizeof *anc, cmp_i64);
  for (size_t i = 0; i < n; i++) {
    const hs_iceberg_snapshot_log_entry *e = &m->snapshot_log[i];
    const hs_iceberg_snapshot *es = hs_iceberg_metadata_snapshot(m, e->snapshot_id);
    v[i].made_current_at_ms = e->timestamp_ms;
    v[i].snapshot_id = e->snapshot_id;
    v[i].parent_snapshot_id = es && es->has_parent_snapshot_id ? es->parent_snapshot_id : -1;
    v[i].is_current_ancestor = bsearch(&e->snapshot_id, anc, n_anc, sizeof *anc, cmp_i64) != NULL;
  }
  hs_free(anc);
  *out = v;
  *n_out = n;
  return HS_OK;
}
