/*
 * expire.c — hs_table_expire_snapshots: drop old snapshots from the table
 * metadata (Iceberg's ExpireSnapshots), then delete the files only they
 * reached.
 *
 * Kept: the current snapshot, every snapshot a tag or branch names, the
 * `retain_last` most recent snapshots of the current snapshot's ancestry
 * (the current one counts), and every snapshot committed at or after the
 * cut-off. The rest leave `snapshots` and the snapshot log in one
 * metadata-only commit (hs_table_commit_metadata: exclusive publish, the
 * choice re-made on the winner's version after a lost race). A kept
 * snapshot's parent may be among them: the spec allows expired parents.
 *
 * Files: what the metadata reached before the commit and no longer reaches
 * after it (hs_table_reachable, orphans.c) — the expired snapshots' manifest
 * lists, the manifests and data files no kept snapshot shares, and the index
 * files that covered only those data files. The walk after the commit
 * skips manifest entries of status DELETED: a data or delete file that a
 * kept snapshot removed (compaction, a replaced deletion vector) goes with
 * the last snapshot that read it, as in Iceberg. They were committed, so no
 * writer is still producing them and no age margin is needed; a reader still
 * planning an expired snapshot loses it, as in every Iceberg engine.
 *
 * Racing other maintainers and writers: the walks (before and after) are of
 * the latest version and are redone on a newer one when a file vanished
 * under them (another expiry published, then deleted; orphans.c). The
 * deleted files are unreachable from the latest version, which a writer
 * builds on (a writer that built on an older one loses the exclusive publish
 * and rebuilds), so no commit in flight needs them.
 */
#include <string.h>

#include "../io/store.h"
#include "../parquet/parquet.h"
#include "timetravel.h"

typedef struct expire_ctx {
  int64_t older_than_ms;
  int32_t retain_last;
  int64_t *expired; /* ids removed by the last attempt (hs_malloc'd) */
  size_t n_expired;
} expire_ctx;

static bool named_by_ref(const hs_iceberg_metadata *m, int64_t id) {
  for (size_t i = 0; i < m->n_refs; i++)
    if (m->refs[i].snapshot_id == id) return true;
  return false;
}

/* Whether snapshot `s` stays: see the file comment. */
static bool kept(const hs_iceberg_metadata *m, const hs_iceberg_snapshot *s, const expire_ctx *c) {
  if (s->timestamp_ms >= c->older_than_ms) return true;
  if (m->has_current_snapshot_id && s->snapshot_id == m->current_snapshot_id) return true;
  if (named_by_ref(m, s->snapshot_id)) return true;
  if (!m->has_current_snapshot_id) return false;
  /* within the first retain_last steps of the current ancestry (bounded:
   * a parent cycle in hostile metadata ends after n_snapshots steps) */
  const hs_iceberg_snapshot *a = hs_iceberg_metadata_snapshot(m, m->current_snapshot_id);
  for (int32_t k = 0; a != NULL && k < c->retain_last && (size_t)k <= m->n_snapshots; k++) {
    if (a->snapshot_id == s->snapshot_id) return true;
    if (!a->has_parent_snapshot_id) break;
    a = hs_iceberg_metadata_snapshot(m, a->parent_snapshot_id);
  }
  return false;
}

static hs_status expire_edit(const hs_iceberg_metadata *old, hs_iceberg_metadata *m, hs_arena *a,
                             void *vctx, bool *changed, hs_error *err) {
  expire_ctx *c = vctx;
  c->n_expired = 0;
  size_t n_keep = 0;
  for (size_t i = 0; i < old->n_snapshots; i++) n_keep += kept(old, &old->snapshots[i], c);
  *changed = n_keep < old->n_snapshots;
  if (!*changed) return HS_OK;
  size_t n_gone = old->n_snapshots - n_keep;
  hs_iceberg_snapshot *snaps = hs_arena_alloc(a, (n_keep ? n_keep : 1) * sizeof *snaps);
  hs_iceberg_snapshot_log_entry *log =
      hs_arena_alloc(a, (old->n_snapshot_log ? old->n_snapshot_log : 1) * sizeof *log);
  int64_t *gone = hs_realloc(c->expired, n_gone * sizeof *gone);
  if (snaps == NULL || log == NULL || gone == NULL) {
    if (gone != NULL) c->expired = gone;
    return hs_error_set(err, HS_ERR_NOMEM, "expire snapshots: out of memory");
  }
  c->expired = gone;
  size_t w = 0;
  for (size_t i = 0; i < old->n_snapshots; i++) {
    if (kept(old, &old->snapshots[i], c))
      snaps[w++] = old->snapshots[i];
    else
      c->expired[c->n_expired++] = old->snapshots[i].snapshot_id;
  }
  size_t wl = 0;
  for (size_t i = 0; i < old->n_snapshot_log; i++)
    if (hs_iceberg_metadata_snapshot(old, old->snapshot_log[i].snapshot_id) == NULL ||
        kept(old, hs_iceberg_metadata_snapshot(old, old->snapshot_log[i].snapshot_id), c))
      log[wl++] = old->snapshot_log[i];
  m->snapshots = snaps;
  m->n_snapshots = w;
  m->snapshot_log = log;
  m->n_snapshot_log = wl;
  /* Statistics of expired snapshots go with them (stats_list.c). */
  hs_status st =
      hs_table_statistics_drop(old->statistics, c->expired, c->n_expired, a, &m->statistics, err);
  if (st == HS_OK)
    st = hs_table_statistics_drop(old->partition_statistics, c->expired, c->n_expired, a,
                                  &m->partition_statistics, err);
  return st;
}

/* Files in `before` that `after` lacks, with their sizes, into one
 * allocation as hs_table_remove_orphan_files returns them. Files already
 * gone (any failure of the HEAD: nothing there to remove) are left out. */
static hs_status files_dropped(hs_table_file_set *before, hs_table_file_set *after,
                               hs_table_orphan_file **out, size_t *n_out, hs_error *err) {
  *out = NULL;
  *n_out = 0;
  size_t n = 0, bytes = 0;
  hs_object_info *info = before->n ? hs_malloc(before->n * sizeof *info) : NULL;
  bool *dropped = before->n ? hs_calloc(before->n, sizeof *dropped) : NULL;
  if (before->n > 0 && (info == NULL || dropped == NULL)) {
    hs_free(info);
    hs_free(dropped);
    return hs_error_set(err, HS_ERR_NOMEM, "expire snapshots: out of memory");
  }
  for (size_t i = 0; i < before->n; i++)
    if (!hs_table_file_set_has(after, before->paths[i]) &&
        hs_store_head(before->paths[i], &info[i], NULL) == HS_OK) {
      dropped[i] = true;
      n++;
      bytes += strlen(before->paths[i]) + 1;
    }
  hs_table_orphan_file *f = n ? hs_malloc(n * sizeof *f + bytes) : NULL;
  if (f == NULL) {
    hs_free(info);
    hs_free(dropped);
    return n == 0 ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "expire snapshots: out of memory");
  }
  char *strings = (char *)(f + n);
  size_t j = 0;
  for (size_t i = 0; i < before->n && j < n; i++) {
    if (!dropped[i]) continue;
    const char *p = before->paths[i];
    size_t len = strlen(p) + 1;
    memcpy(strings, p, len);
    f[j++] = (hs_table_orphan_file){
        .path = strings, .size = (int64_t)info[i].size, .mtime_ms = info[i].mtime_ms};
    strings += len;
  }
  hs_free(info);
  hs_free(dropped);
  *out = f;
  *n_out = j;
  return HS_OK;
}

hs_status hs_table_expire_snapshots(hs_table *table, int64_t older_than_ms, int32_t retain_last,
                                    int dry_run, int64_t **expired, size_t *n_expired,
                                    hs_table_orphan_file **files, size_t *n_files, hs_error *err) {
  *expired = NULL;
  *n_expired = 0;
  *files = NULL;
  *n_files = 0;
  hs_status st = hs_table_check_writable(table, "expire snapshots", err);
  expire_ctx c = {.older_than_ms = older_than_ms, .retain_last = retain_last < 1 ? 1 : retain_last};
  hs_table_file_set before = {0}, after = {.live_entries_only = true};
  /* Walks of the latest version tolerate files another process's expiry
   * deleted under them (hs_table_reachable_latest walks the newer version). */
  if (st == HS_OK) st = hs_table_reachable_latest(table, &before, err);
  for (int attempt = 0; st == HS_OK && dry_run; attempt++) {
    /* the edit on a copy; the reachable set of the copy, the table untouched */
    hs_arena a;
    hs_arena_init(&a);
    hs_iceberg_metadata saved = table->meta, m = table->meta;
    bool changed = false;
    st = expire_edit(&saved, &m, &a, &c, &changed, err);
    if (st == HS_OK) {
      table->meta = m; /* unchanged when nothing expires */
      st = hs_table_reachable(table, &after, err);
      table->meta = saved;
    }
    hs_arena_reset(&a);
    /* a file of this version vanished: another expiry; redo on the newer one */
    if (st != HS_ERR_NOT_FOUND || attempt == 64 || !hs_table_newer_version_exists(table)) break;
    hs_table_file_set_free(&before);
    st = hs_table_reachable_latest(table, &before, err);
  }
  if (st == HS_OK && !dry_run) {
    st = hs_table_commit_metadata(table, "expire snapshots", expire_edit, &c, err);
    if (st == HS_OK) st = hs_table_reachable_latest(table, &after, err);
  }
  if (st == HS_OK) st = files_dropped(&before, &after, files, n_files, err);
  hs_table_file_set_free(&before);
  hs_table_file_set_free(&after);
  for (size_t i = 0; st == HS_OK && !dry_run && i < *n_files; i++) {
    hs_error e = {0};
    if (hs_store_delete((*files)[i].path, &e) != HS_OK)
      st = hs_error_set(err, e.status,
                        "cannot remove a file of an expired snapshot: %s (the snapshots are "
                        "expired; remove_orphan_files removes the rest later)",
                        e.message);
  }
  /* kept open data files (parquet.h) would hold the removed files' space */
  if (!dry_run && *n_files > 0) hs_parquet_file_cache_clear();
  if (st != HS_OK) {
    hs_free(c.expired);
    hs_free(*files);
    *files = NULL;
    *n_files = 0;
    return st;
  }
  *expired = c.expired;
  *n_expired = c.n_expired;
  if (c.n_expired == 0) {
    hs_free(c.expired);
    *expired = NULL;
  }
  return HS_OK;
}
