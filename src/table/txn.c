/*
 * txn.c — the one commit path of the table layer (see txn.h and
 * src/table/README.md, "The commit protocol").
 *
 * A transaction holds what it changes:
 *   - files added (data files, position/equality delete files, deletion
 *     vectors), already written by the caller: one new manifest per kind
 *     (data / deletes) and partition spec is written on the first attempt,
 *     its entries' snapshot id and sequence numbers null so that they are
 *     inherited from the manifest-list entry: the manifest is reused as is
 *     by every retry;
 *   - files removed, by recorded path: on every attempt each manifest of
 *     the current snapshot that holds one is rewritten (the removed entries
 *     DELETED with the new snapshot id, the others EXISTING with their
 *     snapshot id, sequence numbers and v3 first_row_id written
 *     explicitly; entries an older snapshot deleted are dropped); the other
 *     manifests are carried over unchanged;
 *   - a metadata edit (partition specs, sort orders, properties, refs,
 *     expiry), applied to each attempt's version.
 * Each attempt: [retry: back off, reload the latest version, the caller's
 * recheck], validation against the snapshots committed since the begin,
 * the manifest list, v{N+1}, one sync set (src/io/fs_sync.c), the link under the shared
 * publish lock, the hint, the new version adopted from memory (snapshot
 * commits without an edit) or read back.
 *
 * Validation (Iceberg's MergingSnapshotProducer / BaseRowDelta /
 * BaseRewriteFiles): the snapshots between the current one and the one
 * the transaction began on (parent chain) are read, their own ADDED and
 * DELETED manifest entries only:
 *   - a file this commit removes that one of them deleted: conflict
 *     (also caught by the rewrite step: a removed path must be live);
 *   - a data file this commit's deletes reference that one of them
 *     deleted: conflict (validateDataFilesExist);
 *   - with validate_no_new_deletes (replace, copy-on-write overwrite): a
 *     delete file added that may apply to a data file this commit removes
 *     (it references it, or it has no referenced file and the same
 *     partition spec, or an unpartitioned one: partitions are not compared,
 *     which may report a conflict that is not one but never misses one):
 *     conflict (validateNoNewDeletesForDataFiles);
 *   - a deletion vector added for a data file this commit adds a deletion
 *     vector for: conflict (one DV per data file; the writer merges the old
 *     DV into its own and removes the old one in the same commit);
 *   - a data file added for which the caller's conflict filter says yes
 *     (validateNoConflictingData).
 * When the chain does not lead back to the start (a rollback, or the start
 * expired), a commit that needs validation is a conflict. Appends and
 * metadata-only commits validate nothing (they always retry).
 */
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../io/fs.h"
#include "../io/fs_sync.h"
#include "../io/store.h"
#include "timetravel.h"
#include "txn.h"

/* Every ADOPT_REPARSE-th version a committing handle parses what it
 * published instead of adopting it (see adopt). */
#define ADOPT_REPARSE 16

typedef struct txn_written {
  const char *path; /* in x->arena */
  int fd;           /* caller's, -1 once synced or when none */
  bool syncing;     /* its fdatasync started in x->syncs */
} txn_written;

typedef struct txn_added {
  hs_iceberg_data_file file;
  int32_t spec_id;
} txn_added;

/* A manifest this transaction wrote: new (first attempt, kept) or
 * rewritten (per attempt). */
typedef struct txn_manifest {
  char path[4200];
  int fd;
  bool syncing; /* its fdatasync started in x->syncs */
  hs_iceberg_manifest_file mf;
} txn_manifest;

/* A removed path (ref: only its entry for that referenced data file, a
 * deletion vector among others in one Puffin file; NULL: every entry at
 * the path) and what the rewrite step found of it. */
typedef struct txn_removed {
  const char *path;
  const char *ref;
  int found; /* entries matched */
  hs_iceberg_content content;
  int32_t spec_id;
  /* a removed data file's partition tuple (x->arena), for the no-new-deletes
   * check; has_partition false: not copied (compared as "may match") */
  bool has_partition;
  hs_iceberg_value *partition;
  size_t n_partition;
} txn_removed;

struct hs_txn {
  hs_table *t;
  const char *what;
  hs_arena arena; /* the txn's own: copies of paths, added files */
  hs_table *pin;  /* the version begun on, kept while t is reloaded */
  int64_t start_snapshot_id, start_seq;
  int32_t schema_id;
  hs_txn_op op;
  int64_t snapshot_id;
  bool committed;
  bool outcome_unknown; /* a catalog commit that may have applied (see table.h) */

  txn_added *added;
  size_t n_added, cap_added;
  txn_written *written;
  size_t n_written, cap_written;
  txn_removed *removed; /* sorted by path at the first attempt */
  size_t n_removed, cap_removed;
  const char **required; /* data files referenced by this commit's deletes, sorted */
  size_t n_required, cap_required;
  const char **dv_targets; /* data files this commit adds a DV for, sorted */
  size_t n_dv_targets;
  bool sorted;

  bool no_new_deletes, no_new_deletes_set;
  bool no_conflicting_deletes; /* delete files added for `required` files conflict */
  hs_txn_conflict_fn conflicts;
  void *conflicts_ctx;
  hs_txn_recheck recheck;
  void *recheck_ctx;
  hs_table_metadata_edit edit;
  void *edit_ctx;
  bool edit_prefix;

  /* Local syncs started as files are written (sync_early), waited for
   * before the publish (sync_before_publish); NULL until the first. */
  hs_fs_syncs *syncs;

  txn_manifest *news; /* written on the first attempt */
  size_t n_news;
  bool news_written, news_synced;
  txn_manifest *rewrites; /* this attempt's */
  size_t n_rewrites;
  char list_path[4200];
  /* this attempt: a live DV of a data file this commit adds a DV for, not
   * removed by it (carry_manifests) */
  const char *dv_clash_path, *dv_clash_of;
};

static int cstr_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int removed_cmp(const void *a, const void *b) {
  return strcmp(((const txn_removed *)a)->path, ((const txn_removed *)b)->path);
}

static int removed_cmp_ref(const void *a, const void *b) {
  const txn_removed *x = a, *y = b;
  int c = strcmp(x->path, y->path);
  if (c != 0) return c;
  if (x->ref == NULL || y->ref == NULL) return (x->ref != NULL) - (y->ref != NULL);
  return strcmp(x->ref, y->ref);
}

static bool in_sorted(const char *const *v, size_t n, const char *s) {
  return n > 0 && s != NULL && bsearch(&s, v, n, sizeof *v, cstr_cmp) != NULL;
}

/* The removal matching the entry at `path` whose referenced data file is
 * `ref` (may be NULL), or NULL. */
static txn_removed *find_removed(hs_txn *x, const char *path, const char *ref) {
  if (x->n_removed == 0 || path == NULL) return NULL;
  txn_removed key = {.path = path};
  txn_removed *r = bsearch(&key, x->removed, x->n_removed, sizeof key, removed_cmp);
  if (r == NULL) return NULL;
  while (r > x->removed && strcmp(r[-1].path, path) == 0) r--;
  for (; r < x->removed + x->n_removed && strcmp(r->path, path) == 0; r++)
    if (r->ref == NULL || (ref != NULL && strcmp(r->ref, ref) == 0)) return r;
  return NULL;
}

static char *txn_str(hs_arena *a, const char *s) {
  return s ? hs_arena_strndup(a, s, strlen(s)) : NULL;
}

/* Grow arena-free array *v (hs_realloc) to hold one more of `size`. */
static bool grow(void **v, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return true;
  size_t c = *cap ? 2 * *cap : 8;
  void *nv = hs_realloc(*v, c * size);
  if (nv == NULL) return false;
  *v = nv;
  *cap = c;
  return true;
}

/* ------------------------------------------------------------ begin */

/* Bring `t` up to the latest version. Cheap when it already is: one probe
 * for v{N+1} (a stat), no read or parse of metadata we hold. Handles that
 * hold no version yet, or metadata named as catalogs write it, take the
 * full path (hint, probe, load) in table.c. */
static hs_status refresh(hs_table *t, hs_error *err) {
  char path[4200];
  bool exists = true;
  if (t->catalog == NULL && t->version >= 1 && !t->foreign_names && t->metadata_path != NULL &&
      hs_table_version_find(t, t->version + 1, path, sizeof path, &exists, NULL) == HS_OK &&
      !exists) {
    return HS_OK;
  }
  return hs_table_load_latest(t, err);
}

hs_status hs_txn_begin(hs_table *t, const char *what, hs_txn **out, hs_error *err) {
  *out = NULL;
  if (t == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: no table", what);
  hs_status st = hs_table_check_writable(t, what, err);
  if (st != HS_OK) return st;
  if ((st = refresh(t, err)) != HS_OK) return st;
  hs_txn *x = hs_calloc(1, sizeof *x);
  if (x == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", what);
  hs_arena_init(&x->arena);
  x->t = t;
  x->what = what;
  const hs_iceberg_snapshot *cur = hs_table_current(t);
  x->start_snapshot_id = cur ? cur->snapshot_id : -1;
  x->start_seq = t->meta.has_last_sequence_number ? t->meta.last_sequence_number : 0;
  x->schema_id = t->meta.current_schema_id;
  x->snapshot_id = -1;
  *out = x;
  return HS_OK;
}

int64_t hs_txn_start_snapshot_id(const hs_txn *x) {
  return x->start_snapshot_id;
}
int64_t hs_txn_start_sequence_number(const hs_txn *x) {
  return x->start_seq;
}
void hs_txn_set_operation(hs_txn *x, hs_txn_op op) {
  x->op = op;
}
void hs_txn_set_start_snapshot(hs_txn *x, int64_t snapshot_id) {
  x->start_snapshot_id = snapshot_id;
}
void hs_txn_set_schema_id(hs_txn *x, int32_t schema_id) {
  x->schema_id = schema_id;
}

void hs_txn_validate_no_new_deletes(hs_txn *x, bool on) {
  x->no_new_deletes = on;
  x->no_new_deletes_set = true;
}

void hs_txn_validate_no_conflicting_deletes(hs_txn *x, bool on) {
  x->no_conflicting_deletes = on;
}

void hs_txn_set_conflict_filter(hs_txn *x, hs_txn_conflict_fn fn, void *ctx) {
  x->conflicts = fn;
  x->conflicts_ctx = ctx;
}

void hs_txn_set_recheck(hs_txn *x, hs_txn_recheck fn, void *ctx) {
  x->recheck = fn;
  x->recheck_ctx = ctx;
}

void hs_txn_set_edit(hs_txn *x, hs_table_metadata_edit edit, void *ctx, bool prefix_errors) {
  x->edit = edit;
  x->edit_ctx = ctx;
  x->edit_prefix = prefix_errors;
}

hs_status hs_txn_add_files(hs_txn *x, const hs_iceberg_data_file *files, size_t n, int32_t spec_id,
                           hs_error *err) {
  for (size_t i = 0; i < n; i++) {
    const hs_iceberg_data_file *f = &files[i];
    if (f->file_path == NULL || f->content > HS_ICE_CONTENT_EQUALITY_DELETES)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: added file %zu: no path or bad content",
                          x->what, i);
    if (f->content == HS_ICE_CONTENT_EQUALITY_DELETES && !f->has_equality_ids)
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "%s: equality delete file '%s' has no equality ids", x->what,
                          f->file_path);
    if (!grow((void **)&x->added, &x->cap_added, x->n_added, sizeof *x->added))
      return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
    x->added[x->n_added++] = (txn_added){.file = *f, .spec_id = spec_id};
    if (f->content == HS_ICE_CONTENT_POSITION_DELETES && f->referenced_data_file != NULL) {
      hs_status st = hs_txn_require_data_file(x, f->referenced_data_file, err);
      if (st != HS_OK) return st;
    }
  }
  x->sorted = false;
  return HS_OK;
}

/* Start the fdatasync of a file this commit will name, now that it is
 * written, so that it runs while the rest of the commit is built;
 * sync_before_publish waits for it. False when not started (an object,
 * or out of memory): sync_before_publish starts it then. */
static bool sync_early(hs_txn *x, int fd, const char *path) {
  if (fd < 0 || x->t->remote) return false;
  if (x->syncs == NULL && (x->syncs = hs_fs_syncs_new()) == NULL) return false;
  return hs_fs_syncs_add_file(x->syncs, fd, path, NULL) == HS_OK;
}

/* Every sync started so far has returned, its outcome dropped: before a
 * failed attempt closes descriptors the syncs were given. What is still
 * open is synced again by the next attempt's sync_before_publish. */
static void syncs_settle(hs_txn *x) {
  if (x->syncs == NULL) return;
  (void)hs_fs_syncs_wait(x->syncs, NULL);
  for (size_t i = 0; i < x->n_written; i++) x->written[i].syncing = false;
  for (size_t i = 0; i < x->n_news; i++) x->news[i].syncing = false;
  for (size_t i = 0; i < x->n_rewrites; i++) x->rewrites[i].syncing = false;
}

hs_status hs_txn_add_written(hs_txn *x, const char *path, int fd, hs_error *err) {
  char *p = txn_str(&x->arena, path);
  if (p == NULL || !grow((void **)&x->written, &x->cap_written, x->n_written, sizeof *x->written))
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
  x->written[x->n_written++] = (txn_written){.path = p, .fd = fd};
  x->written[x->n_written - 1].syncing = sync_early(x, fd, p);
  return HS_OK;
}

hs_status hs_txn_add_written_path(hs_txn *x, const char *path, hs_error *err) {
  if (hs_store_is_remote(path)) return hs_txn_add_written(x, path, -1, err); /* durable */
  int fd = -1;
  struct stat sb;
  hs_status st = hs_fs_open_read(path, &fd, &sb, err);
  if (st != HS_OK) return st;
  st = hs_txn_add_written(x, path, fd, err);
  if (st != HS_OK) close(fd);
  return st;
}

hs_status hs_txn_remove_file(hs_txn *x, const char *path, hs_error *err) {
  char *p = txn_str(&x->arena, path);
  if (p == NULL || !grow((void **)&x->removed, &x->cap_removed, x->n_removed, sizeof *x->removed))
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
  x->removed[x->n_removed++] = (txn_removed){.path = p};
  x->sorted = false;
  return HS_OK;
}

hs_status hs_txn_remove_dv(hs_txn *x, const char *path, const char *data_file, hs_error *err) {
  hs_status st = hs_txn_remove_file(x, path, err);
  if (st != HS_OK) return st;
  if ((x->removed[x->n_removed - 1].ref = txn_str(&x->arena, data_file)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
  return HS_OK;
}

hs_status hs_txn_require_data_file(hs_txn *x, const char *path, hs_error *err) {
  char *p = txn_str(&x->arena, path);
  if (p == NULL ||
      !grow((void **)&x->required, &x->cap_required, x->n_required, sizeof *x->required))
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
  x->required[x->n_required++] = p;
  x->sorted = false;
  return HS_OK;
}

/* Sort the removed/required sets, collect DV targets, refuse duplicates. */
static hs_status prepare_sets(hs_txn *x, hs_error *err) {
  if (x->sorted) return HS_OK;
  if (x->n_removed > 1) qsort(x->removed, x->n_removed, sizeof *x->removed, removed_cmp_ref);
  for (size_t i = 1; i < x->n_removed; i++)
    if (strcmp(x->removed[i - 1].path, x->removed[i].path) == 0 &&
        (x->removed[i - 1].ref == NULL || x->removed[i].ref == NULL ||
         strcmp(x->removed[i - 1].ref, x->removed[i].ref) == 0))
      return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: file '%s' removed twice", x->what,
                          x->removed[i].path);
  if (x->n_required > 1) qsort(x->required, x->n_required, sizeof *x->required, cstr_cmp);
  size_t n_dv = 0;
  for (size_t i = 0; i < x->n_added; i++)
    if (hs_iceberg_data_file_is_dv(&x->added[i].file) && x->added[i].file.referenced_data_file)
      n_dv++;
  hs_free(x->dv_targets);
  x->dv_targets = NULL;
  x->n_dv_targets = 0;
  if (n_dv > 0) {
    if ((x->dv_targets = hs_malloc(n_dv * sizeof *x->dv_targets)) == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
    for (size_t i = 0; i < x->n_added; i++)
      if (hs_iceberg_data_file_is_dv(&x->added[i].file) && x->added[i].file.referenced_data_file)
        x->dv_targets[x->n_dv_targets++] = x->added[i].file.referenced_data_file;
    qsort(x->dv_targets, n_dv, sizeof *x->dv_targets, cstr_cmp);
    for (size_t i = 1; i < n_dv; i++)
      if (strcmp(x->dv_targets[i - 1], x->dv_targets[i]) == 0)
        return hs_error_set(err, HS_ERR_INVALID_ARG,
                            "%s: two deletion vectors for data file '%s' in one commit", x->what,
                            x->dv_targets[i]);
  }
  x->sorted = true;
  return HS_OK;
}

static void remove_manifests(txn_manifest *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (v[i].fd >= 0) close(v[i].fd);
    v[i].fd = -1;
    if (v[i].path[0]) (void)hs_table_file_remove(v[i].path, NULL);
    v[i].path[0] = '\0';
  }
}

void hs_txn_free(hs_txn *x) {
  if (x == NULL) return;
  hs_fs_syncs_free(x->syncs); /* nothing in flight before the closes below */
  x->syncs = NULL;
  if (!x->committed) remove_manifests(x->news, x->n_news);
  for (size_t i = 0; i < x->n_news; i++)
    if (x->news[i].fd >= 0) close(x->news[i].fd);
  for (size_t i = 0; i < x->n_written; i++)
    if (x->written[i].fd >= 0) close(x->written[i].fd);
  hs_free(x->news);
  hs_free(x->rewrites);
  hs_free(x->added);
  hs_free(x->written);
  hs_free(x->removed);
  hs_free(x->required);
  hs_free(x->dv_targets);
  hs_arena_reset(&x->arena);
  hs_table_free(x->pin);
  hs_free(x);
}

/* ------------------------------------------------------ reload / pin */

/* Before the first retry reloads `t`, move the version the transaction
 * began on into x->pin: what the caller took from it (the schema its data
 * was written with, partition specs) must outlive the reload. Later
 * retries reload `t` alone. On a failed reload the handle gets its old
 * version back. */
static hs_status pin_and_reload(hs_txn *x, hs_error *err) {
  hs_table *t = x->t;
  if (x->pin != NULL) return hs_table_load_latest(t, err);
  if ((x->pin = hs_calloc(1, sizeof *x->pin)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
  hs_table *p = x->pin;
  p->arena = t->arena;
  p->meta = t->meta;
  p->metadata_path = t->metadata_path;
  p->version = t->version;
  hs_arena_init(&t->arena);
  memset(&t->meta, 0, sizeof t->meta);
  t->metadata_path = NULL;
  hs_status st = hs_table_load_latest(t, err);
  if (st != HS_OK) {
    hs_arena_reset(&t->arena);
    hs_free(t->metadata_path);
    t->arena = p->arena;
    t->meta = p->meta;
    t->metadata_path = p->metadata_path;
    t->version = p->version;
    t->meta_stamped = false;
    hs_arena_init(&p->arena);
    p->metadata_path = NULL;
    hs_free(p);
    x->pin = NULL;
  }
  return st;
}

/* The metadata the transaction began on (pinned or still t's). */
static const hs_iceberg_metadata *base_meta(const hs_txn *x) {
  return x->pin ? &x->pin->meta : &x->t->meta;
}

/* ------------------------------------------------------ small helpers */

static hs_status random_snapshot_id(int64_t *out, hs_error *err) {
  uint64_t r = 0;
  do {
    hs_status st = hs_fs_random_bytes(&r, sizeof r, err);
    if (st != HS_OK) return st;
    r &= (uint64_t)INT64_MAX;
  } while (r == 0);
  *out = (int64_t)r;
  return HS_OK;
}

static int64_t summary_int(const hs_iceberg_snapshot *s, const char *key) {
  for (size_t i = 0; s != NULL && i < s->n_summary; i++) {
    if (strcmp(s->summary[i].key, key) != 0) continue;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s->summary[i].value, &end, 10);
    if (errno != 0 || end == s->summary[i].value || *end != '\0' || v < 0) return -1;
    return (int64_t)v;
  }
  return -1;
}

static bool add_kv(hs_arena *a, hs_iceberg_kv *kv, size_t *n, const char *key, int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)v);
  kv[*n].key = key;
  kv[*n].value = hs_arena_strndup(a, buf, strlen(buf));
  if (kv[*n].value == NULL) return false;
  (*n)++;
  return true;
}

static char *arena_str(hs_arena *a, const char *s) {
  return s ? hs_arena_strndup(a, s, strlen(s)) : NULL;
}

static const hs_iceberg_partition_spec *spec_of(const hs_iceberg_metadata *m, int32_t id) {
  for (size_t i = 0; i < m->n_specs; i++)
    if (m->specs[i].spec_id == id) return &m->specs[i];
  return NULL;
}

/* Read the manifest `mf` names (entries inherit from it) into *out. */
static hs_status read_manifest(const hs_table *t, const hs_iceberg_manifest_file *mf, hs_arena *a,
                               hs_iceberg_manifest *out, hs_error *err) {
  hs_buf buf;
  hs_buf_init(&buf);
  hs_status st = hs_table_read_avro(t, mf->manifest_path, "manifest", &buf, err);
  if (st == HS_OK) {
    st = hs_iceberg_manifest_read(buf.data, buf.len, mf, a, out, err);
    if (st != HS_OK) hs_error_prefix(err, "%s: ", mf->manifest_path);
  }
  hs_buf_free(&buf);
  return st;
}

static hs_status read_list(const hs_table *t, const hs_iceberg_snapshot *s, hs_arena *a,
                           hs_iceberg_manifest_list *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_buf buf;
  hs_buf_init(&buf);
  hs_status st = hs_table_read_avro(t, s->manifest_list, "manifest list", &buf, err);
  if (st == HS_OK) {
    st = hs_iceberg_manifest_list_read(buf.data, buf.len, a, out, err);
    if (st != HS_OK) hs_error_prefix(err, "%s: ", s->manifest_list);
  }
  hs_buf_free(&buf);
  return st;
}

/* Write `entries` as one manifest of `content`/`spec` to a fresh
 * metadata/<uuid>-m<k>.avro (unsynced), into *out. */
static hs_status write_manifest(hs_txn *x, const hs_iceberg_metadata *m,
                                hs_iceberg_manifest_content content,
                                const hs_iceberg_partition_spec *spec,
                                const hs_iceberg_manifest_entry *entries, size_t n, int64_t seq,
                                int k, txn_manifest *out, hs_arena *a, hs_error *err) {
  const hs_iceberg_schema *schema = hs_iceberg_metadata_schema(m, m->current_schema_id);
  out->path[0] = '\0';
  out->fd = -1;
  out->syncing = false;
  if (schema == NULL)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: no current schema", x->t->metadata_path);
  hs_iceberg_manifest_writer_options mo = {.format_version = m->format_version,
                                           .content = content,
                                           .schema = schema,
                                           .spec = spec,
                                           .snapshot_id = x->snapshot_id,
                                           .sequence_number = seq};
  hs_buf buf;
  hs_buf_init(&buf);
  hs_iceberg_manifest_writer *w = NULL;
  hs_status st = hs_iceberg_manifest_writer_open(&mo, &buf, NULL, &w, err);
  for (size_t i = 0; st == HS_OK && i < n; i++)
    st = hs_iceberg_manifest_writer_add(w, &entries[i], err);
  if (st == HS_OK) {
    st = hs_iceberg_manifest_writer_close(w, &out->mf, a, err);
  } else {
    hs_iceberg_manifest_writer_free(w);
  }
  char uuid[37];
  if (st == HS_OK) st = hs_fs_uuid4(uuid, err);
  if (st == HS_OK) {
    snprintf(out->path, sizeof out->path, "%s/metadata/%s-m%d.avro", x->t->root, uuid, k);
    /* Local: synced with the others before the publish; an object is
     * durable once put. */
    st = x->t->remote ? hs_store_put(out->path, buf.data, buf.len, err)
                      : hs_fs_create_unsynced(out->path, buf.data, buf.len, &out->fd, err);
    if (st != HS_OK) out->path[0] = '\0';
    if (st == HS_OK) out->syncing = sync_early(x, out->fd, out->path);
  }
  hs_buf_free(&buf);
  out->mf.manifest_path = out->path;
  return st;
}

/* The first attempt writes one manifest per (kind, spec) of the added
 * files, entries inheriting snapshot id and sequence numbers. v3 data files
 * without first_row_id get fresh row ids from the snapshot's first-row-id,
 * those a replace writes too. TODO(row lineage): a compaction should carry
 * each row's _row_id and _last_updated_sequence_number into the files it
 * writes (as columns, or first_row_id when a file keeps one run of ids). */
static hs_status write_news(hs_txn *x, int64_t seq, hs_error *err) {
  if (x->news_written || x->n_added == 0) return HS_OK;
  const hs_iceberg_metadata *m = base_meta(x);
  hs_status st = HS_OK;
  hs_iceberg_manifest_entry *es = hs_malloc(x->n_added * sizeof *es);
  bool *done = hs_calloc(x->n_added, sizeof *done);
  x->news = hs_calloc(x->n_added, sizeof *x->news);
  if (es == NULL || done == NULL || x->news == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
  for (size_t i = 0; st == HS_OK && i < x->n_added; i++) {
    if (done[i]) continue;
    bool del = x->added[i].file.content != HS_ICE_CONTENT_DATA;
    int32_t spec_id = x->added[i].spec_id;
    size_t n = 0;
    for (size_t j = i; j < x->n_added; j++) {
      bool dj = x->added[j].file.content != HS_ICE_CONTENT_DATA;
      if (done[j] || dj != del || x->added[j].spec_id != spec_id) continue;
      memset(&es[n], 0, sizeof es[n]);
      es[n].status = HS_ICE_ENTRY_ADDED;
      es[n++].data_file = x->added[j].file;
      done[j] = true;
    }
    const hs_iceberg_partition_spec *spec = spec_of(m, spec_id);
    if (spec == NULL) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: no partition spec %d in %s", x->what,
                        (int)spec_id, x->t->metadata_path);
      break;
    }
    txn_manifest *tm = &x->news[x->n_news];
    st = write_manifest(x, m, del ? HS_ICE_MANIFEST_DELETES : HS_ICE_MANIFEST_DATA, spec, es, n,
                        seq, (int)x->n_news, tm, &x->arena, err);
    if (tm->path[0]) x->n_news++;
  }
  hs_free(es);
  hs_free(done);
  if (st == HS_OK) x->news_written = true;
  return st;
}

/* ------------------------------------------------------ rewrite step */

/* Keep removed data file `f`'s partition tuple in r (x->arena). */
static void copy_partition(hs_txn *x, txn_removed *r, const hs_iceberg_data_file *f) {
  hs_iceberg_value *v =
      f->n_partition ? hs_arena_alloc(&x->arena, f->n_partition * sizeof *v) : NULL;
  if (f->n_partition && v == NULL) return;
  for (size_t i = 0; i < f->n_partition; i++) {
    v[i] = f->partition[i];
    if (v[i].bytes != NULL && v[i].len > 0) {
      uint8_t *b = hs_arena_alloc(&x->arena, v[i].len);
      if (b == NULL) return;
      memcpy(b, v[i].bytes, v[i].len);
      v[i].bytes = b;
    }
  }
  r->partition = v;
  r->n_partition = f->n_partition;
  r->has_partition = true;
}

typedef struct attempt_stats {
  int64_t removed_data_files, removed_records, removed_bytes;
  int64_t removed_delete_files, removed_pos_files, removed_eq_files, removed_dvs;
  int64_t removed_pos_deletes, removed_eq_deletes;
} attempt_stats;

/* The manifest list entries of the new snapshot other than the new
 * manifests: the current snapshot's, with each manifest that holds a
 * removed file rewritten (x->rewrites). */
static hs_status carry_manifests(hs_txn *x, const hs_iceberg_manifest_list *prev, int64_t seq,
                                 hs_arena *a, hs_iceberg_manifest_file *out, size_t *n_out,
                                 attempt_stats *stats, hs_error *err) {
  hs_table *t = x->t;
  *n_out = 0;
  for (size_t i = 0; i < x->n_removed; i++) x->removed[i].found = 0;
  x->dv_clash_path = x->dv_clash_of = NULL;
  hs_status st = HS_OK;
  for (size_t i = 0; st == HS_OK && i < prev->n_files; i++) {
    const hs_iceberg_manifest_file *mf = &prev->files[i];
    bool live = mf->added_files_count + mf->existing_files_count > 0;
    /* Iceberg's MergingSnapshotProducer: a manifest left with DELETED
     * entries only is listed by the snapshot that deleted them, and no
     * later one (else each merge of delete files leaves one behind). */
    if (!live && mf->deleted_files_count > 0 && mf->added_files_count == 0 &&
        mf->existing_files_count == 0 && t->meta.format_version >= 2)
      continue;
    bool dvs = x->n_dv_targets > 0 && mf->content == HS_ICE_MANIFEST_DELETES;
    bool may_hold = (x->n_removed > 0 || dvs) && live;
    if (!may_hold) {
      out[(*n_out)++] = *mf;
      continue;
    }
    hs_arena ma;
    hs_arena_init(&ma);
    hs_iceberg_manifest man;
    st = read_manifest(t, mf, &ma, &man, err);
    size_t hits = 0;
    for (size_t e = 0; st == HS_OK && e < man.n_entries; e++) {
      const hs_iceberg_manifest_entry *en = &man.entries[e];
      if (en->status == HS_ICE_ENTRY_DELETED) continue;
      if (find_removed(x, en->data_file.file_path, en->data_file.referenced_data_file)) {
        hits++;
      } else if (dvs && hs_iceberg_data_file_is_dv(&en->data_file) &&
                 in_sorted(x->dv_targets, x->n_dv_targets, en->data_file.referenced_data_file)) {
        /* At most one DV per data file: the writer merges the live one into
         * its own and removes it in the same commit. Reported after the
         * validation (a DV committed concurrently is a conflict). */
        if (x->dv_clash_path == NULL) {
          x->dv_clash_path = txn_str(&x->arena, en->data_file.file_path);
          x->dv_clash_of = txn_str(&x->arena, en->data_file.referenced_data_file);
        }
      }
    }
    if (st != HS_OK || hits == 0) {
      if (st == HS_OK) out[(*n_out)++] = *mf;
      hs_arena_reset(&ma);
      continue;
    }
    hs_iceberg_manifest_entry *es = hs_malloc(man.n_entries * sizeof *es);
    size_t n = 0;
    if (es == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
    for (size_t e = 0; st == HS_OK && e < man.n_entries; e++) {
      hs_iceberg_manifest_entry en = man.entries[e];
      if (en.status == HS_ICE_ENTRY_DELETED) continue; /* an older snapshot's deletion */
      txn_removed *r = find_removed(x, en.data_file.file_path, en.data_file.referenced_data_file);
      if (r != NULL) {
        const hs_iceberg_data_file *f = &en.data_file;
        r->found++;
        r->content = f->content;
        r->spec_id = mf->partition_spec_id;
        if (!r->has_partition && f->content == HS_ICE_CONTENT_DATA) copy_partition(x, r, f);
        if (f->content == HS_ICE_CONTENT_DATA) {
          stats->removed_data_files++;
          stats->removed_records += f->record_count;
        } else {
          stats->removed_delete_files++;
          if (f->content == HS_ICE_CONTENT_EQUALITY_DELETES) {
            stats->removed_eq_files++;
            stats->removed_eq_deletes += f->record_count;
          } else {
            if (hs_iceberg_data_file_is_dv(f))
              stats->removed_dvs++;
            else
              stats->removed_pos_files++;
            stats->removed_pos_deletes += f->record_count;
          }
        }
        stats->removed_bytes += f->file_size_in_bytes;
        en.status = HS_ICE_ENTRY_DELETED;
        en.has_snapshot_id = true;
        en.snapshot_id = x->snapshot_id;
      } else {
        en.status = HS_ICE_ENTRY_EXISTING;
      }
      /* written explicitly: the rewritten manifest is listed with this
       * snapshot's sequence number */
      en.has_sequence_number = en.has_file_sequence_number = true;
      if (!man.entries[e].has_snapshot_id) {
        en.has_snapshot_id = true;
        en.snapshot_id = mf->added_snapshot_id;
      }
      es[n++] = en;
    }
    if (st == HS_OK && man.format_version < 2) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: %s: rewriting a v1 manifest", x->what,
                        mf->manifest_path);
    }
    const hs_iceberg_partition_spec *spec = spec_of(&t->meta, mf->partition_spec_id);
    if (st == HS_OK && spec == NULL)
      st = hs_error_set(err, HS_ERR_CORRUPT, "%s: manifest %s: no partition spec %d",
                        t->metadata_path, mf->manifest_path, (int)mf->partition_spec_id);
    if (st == HS_OK) {
      txn_manifest *tm = &x->rewrites[x->n_rewrites];
      st = write_manifest(x, &t->meta, mf->content, spec, es, n, seq, (int)(100 + x->n_rewrites),
                          tm, a, err);
      if (tm->path[0]) x->n_rewrites++;
      if (st == HS_OK) {
        /* the list entry keeps nothing inherited: every entry is explicit */
        out[*n_out] = tm->mf;
        out[*n_out].manifest_path = tm->path;
        (*n_out)++;
      }
    }
    hs_free(es);
    hs_arena_reset(&ma);
  }
  return st;
}

/* After validation (whose messages name the concurrent commit): every
 * removed path must have been found live by carry_manifests. */
static hs_status check_removed_found(hs_txn *x, int64_t snapshot_id, hs_error *err) {
  if (x->dv_clash_path != NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: %s: data file '%s' already has deletion vector '%s' (snapshot %lld): "
                        "merge it into the new one and remove it in the same commit",
                        x->t->root, x->what, x->dv_clash_of ? x->dv_clash_of : "", x->dv_clash_path,
                        (long long)snapshot_id);
  for (size_t i = 0; i < x->n_removed; i++) {
    const txn_removed *r = &x->removed[i];
    if (r->found == 0)
      return hs_error_set(err, HS_ERR_CONFLICT,
                          "%s: %s: file '%s'%s%s%s is not live in the current snapshot %lld "
                          "(removed by a concurrent commit, or never in the table); nothing was "
                          "committed",
                          x->t->root, x->what, r->path, r->ref ? " (its deletion vector of '" : "",
                          r->ref ? r->ref : "", r->ref ? "')" : "", (long long)snapshot_id);
  }
  return HS_OK;
}

/* --------------------------------------------------------- validation */

static bool needs_validation(const hs_txn *x) {
  if (x->n_removed > 0 || x->n_required > 0 || x->conflicts != NULL || x->n_dv_targets > 0)
    return true;
  return false;
}

static hs_txn_op resolve_op(const hs_txn *x);

static bool validate_deletes(const hs_txn *x) {
  if (x->no_new_deletes_set) return x->no_new_deletes;
  /* the resolved operation: a copy-on-write row change commits as AUTO and
   * is an OVERWRITE (removes data files, adds their rewrites) */
  hs_txn_op op = resolve_op(x);
  return op == HS_TXN_OP_REPLACE || op == HS_TXN_OP_OVERWRITE;
}

/* With no_conflicting_deletes: may delete file `f` apply to a data file
 * this commit's deletes reference? Returns that file (or a placeholder when
 * the delete file names no one data file: maybe), NULL when not. */
static const char *delete_hits_required(const hs_txn *x, const hs_iceberg_data_file *f) {
  if (!x->no_conflicting_deletes || x->n_required == 0) return NULL;
  if (f->referenced_data_file != NULL)
    return in_sorted(x->required, x->n_required, f->referenced_data_file) ? f->referenced_data_file
                                                                          : NULL;
  /* v2 manifests do not record referenced_data_file: a position delete
   * file whose file_path bounds are equal names one data file (as Iceberg's
   * ContentFileUtil.referencedDataFile reads it) */
  for (size_t i = 0; f->content == HS_ICE_CONTENT_POSITION_DELETES && i < f->n_metrics; i++) {
    const hs_iceberg_column_metrics *m = &f->metrics[i];
    if (m->field_id != 2147483546 /* file_path */) continue;
    if (m->lower == NULL || m->upper == NULL || m->lower_len != m->upper_len ||
        memcmp(m->lower, m->upper, m->lower_len) != 0)
      break;
    for (size_t r = 0; r < x->n_required; r++)
      if (strlen(x->required[r]) == m->lower_len &&
          memcmp(x->required[r], m->lower, m->lower_len) == 0)
        return x->required[r];
    return NULL;
  }
  return "(any: the delete file names no one data file)";
}

/* Does delete file `f` (of spec `spec_id`, unpartitioned or not) maybe
 * apply to a data file this commit removes? */
/* Same partition (the delete's manifest's partition types)? Unknown types
 * or tuples compare as equal: a false conflict, never a missed one. */
static bool same_partition(const txn_removed *r, const hs_iceberg_data_file *f,
                           const hs_iceberg_manifest *man) {
  if (!r->has_partition || r->n_partition != f->n_partition ||
      man->n_partition_types != f->n_partition)
    return true;
  for (size_t i = 0; i < f->n_partition; i++) {
    const hs_iceberg_value *a = &r->partition[i], *b = &f->partition[i];
    if (a->is_null != b->is_null) return false;
    if (!a->is_null && hs_iceberg_value_cmp(&man->partition_types[i], a, b) != 0) return false;
  }
  return true;
}

static const txn_removed *delete_hits_removed(hs_txn *x, const hs_iceberg_data_file *f,
                                              int32_t spec_id, bool unpartitioned,
                                              const hs_iceberg_manifest *man) {
  if (f->referenced_data_file != NULL) {
    txn_removed *r = find_removed(x, f->referenced_data_file, NULL);
    return r && r->found && r->content == HS_ICE_CONTENT_DATA ? r : NULL;
  }
  for (size_t i = 0; i < x->n_removed; i++) {
    const txn_removed *r = &x->removed[i];
    if (r->found == 0 || r->content != HS_ICE_CONTENT_DATA) continue;
    /* a delete in an unpartitioned spec applies to every data file */
    if (unpartitioned || (r->spec_id == spec_id && same_partition(r, f, man))) return r;
  }
  return NULL;
}

static const char *op_of(const hs_iceberg_snapshot *s) {
  for (size_t i = 0; i < s->n_summary; i++)
    if (strcmp(s->summary[i].key, "operation") == 0) return s->summary[i].value;
  return "?";
}

/* The changes snapshot `s` made (its own manifests' ADDED and DELETED
 * entries) against this commit. */
static hs_status check_snapshot(hs_txn *x, const hs_iceberg_snapshot *s, hs_error *err) {
  hs_table *t = x->t;
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_manifest_list list;
  hs_status st = read_list(t, s, &a, &list, err);
  bool check_deletes = validate_deletes(x) && x->n_removed > 0;
  for (size_t i = 0; st == HS_OK && i < list.n_files; i++) {
    const hs_iceberg_manifest_file *mf = &list.files[i];
    if (mf->added_snapshot_id != s->snapshot_id) continue;
    if (mf->added_files_count == 0 && mf->deleted_files_count == 0) continue;
    bool dels = mf->content == HS_ICE_MANIFEST_DELETES;
    if (!dels && mf->deleted_files_count == 0 && x->conflicts == NULL) continue;
    bool check_required = x->no_conflicting_deletes && x->n_required > 0;
    if (dels && mf->deleted_files_count == 0 && !check_deletes && x->n_dv_targets == 0 &&
        !check_required)
      continue;
    hs_iceberg_manifest man;
    st = read_manifest(t, mf, &a, &man, err);
    const hs_iceberg_partition_spec *spec = spec_of(&t->meta, mf->partition_spec_id);
    bool unpart = spec == NULL || spec->n_fields == 0;
    for (size_t e = 0; st == HS_OK && e < man.n_entries; e++) {
      const hs_iceberg_manifest_entry *en = &man.entries[e];
      const hs_iceberg_data_file *f = &en->data_file;
      if (!en->has_snapshot_id || en->snapshot_id != s->snapshot_id) continue;
      if (en->status == HS_ICE_ENTRY_DELETED) {
        if (find_removed(x, f->file_path, f->referenced_data_file) != NULL)
          st = hs_error_set(err, HS_ERR_CONFLICT,
                            "%s: %s: file '%s' was removed by concurrent snapshot %lld (%s); "
                            "nothing was committed",
                            t->root, x->what, f->file_path, (long long)s->snapshot_id, op_of(s));
        else if (!dels && in_sorted(x->required, x->n_required, f->file_path))
          st = hs_error_set(err, HS_ERR_CONFLICT,
                            "%s: %s: data file '%s', which this commit's deletes reference, was "
                            "removed by concurrent snapshot %lld (%s); nothing was committed",
                            t->root, x->what, f->file_path, (long long)s->snapshot_id, op_of(s));
        continue;
      }
      if (en->status != HS_ICE_ENTRY_ADDED) continue;
      if (!dels && x->conflicts != NULL && x->conflicts(x->conflicts_ctx, f)) {
        st = hs_error_set(err, HS_ERR_CONFLICT,
                          "%s: %s: data file '%s' added by concurrent snapshot %lld (%s) "
                          "conflicts with this commit; nothing was committed",
                          t->root, x->what, f->file_path, (long long)s->snapshot_id, op_of(s));
        continue;
      }
      if (!dels) continue;
      const txn_removed *r =
          check_deletes ? delete_hits_removed(x, f, mf->partition_spec_id, unpart, &man) : NULL;
      const char *hit = NULL;
      if (r != NULL) {
        st = hs_error_set(err, HS_ERR_CONFLICT,
                          "%s: %s: delete file '%s' added by concurrent snapshot %lld (%s) may "
                          "apply to data file '%s' that this commit replaces; nothing was "
                          "committed",
                          t->root, x->what, f->file_path, (long long)s->snapshot_id, op_of(s),
                          r->path);
      } else if ((hit = delete_hits_required(x, f)) != NULL) {
        st = hs_error_set(err, HS_ERR_CONFLICT,
                          "%s: %s: delete file '%s' added by concurrent snapshot %lld (%s) may "
                          "delete rows of data file '%s' that this commit deletes from; nothing "
                          "was committed",
                          t->root, x->what, f->file_path, (long long)s->snapshot_id, op_of(s), hit);
      } else if (hs_iceberg_data_file_is_dv(f) &&
                 in_sorted(x->dv_targets, x->n_dv_targets, f->referenced_data_file)) {
        st = hs_error_set(err, HS_ERR_CONFLICT,
                          "%s: %s: concurrent snapshot %lld (%s) added a deletion vector for data "
                          "file '%s' too; nothing was committed",
                          t->root, x->what, (long long)s->snapshot_id, op_of(s),
                          f->referenced_data_file);
      }
    }
  }
  hs_arena_reset(&a);
  return st;
}

static hs_status validate_since_start(hs_txn *x, hs_error *err) {
  if (!needs_validation(x)) return HS_OK;
  hs_table *t = x->t;
  const hs_iceberg_metadata *m = &t->meta;
  const hs_iceberg_snapshot *s = hs_table_current(t);
  size_t steps = 0;
  hs_status st = HS_OK;
  while (st == HS_OK && s != NULL && s->snapshot_id != x->start_snapshot_id) {
    if (steps++ > m->n_snapshots)
      return hs_error_set(err, HS_ERR_CORRUPT, "%s: the snapshots' parents form a cycle",
                          t->metadata_path);
    st = check_snapshot(x, s, err);
    s = s->has_parent_snapshot_id ? hs_iceberg_metadata_snapshot(m, s->parent_snapshot_id) : NULL;
  }
  if (st == HS_OK && s == NULL && x->start_snapshot_id != -1) {
    const hs_iceberg_snapshot *cur = hs_table_current(t);
    st = hs_error_set(err, HS_ERR_CONFLICT,
                      "%s: %s: snapshot %lld, which this commit began on, is no longer an "
                      "ancestor of the current snapshot %lld (rolled back or expired "
                      "concurrently); nothing was committed",
                      t->root, x->what, (long long)x->start_snapshot_id,
                      (long long)(cur ? cur->snapshot_id : -1));
  }
  return st;
}

/* -------------------------------------------- publish: registry files */

/* The files edited metadata `m` names that `old` did not and that the edit
 * wrote (or an index build before it): a new index registry and the index
 * files of its new entries, resolved, into *out (hs_malloc'd strings and
 * array; *n_out 0 when the registry did not change). The publish re-checks
 * them under the publish lock (orphans.c), so that an index file an orphan
 * sweep took is never registered. */
static hs_status registry_files(hs_table *t, const hs_iceberg_metadata *old,
                                const hs_iceberg_metadata *m, char ***out, size_t *n_out,
                                hs_error *err) {
  *out = NULL;
  *n_out = 0;
  const char *was = hs_iceberg_metadata_property(old, "hyperstream.index-registry");
  const char *now = hs_iceberg_metadata_property(m, "hyperstream.index-registry");
  if (now == NULL || (was != NULL && strcmp(was, now) == 0)) return HS_OK;
  hs_table_index_registry ro, rn;
  memset(&ro, 0, sizeof ro);
  memset(&rn, 0, sizeof rn);
  hs_status st = hs_table_index_registry_load(t, old, &ro, err);
  if (st == HS_OK) st = hs_table_index_registry_load(t, m, &rn, err);
  const char **had = NULL;
  char **v = NULL;
  size_t n = 0;
  if (st == HS_OK) {
    had = hs_malloc((ro.n_entries ? ro.n_entries : 1) * sizeof *had);
    v = hs_malloc((rn.n_entries + 1) * sizeof *v);
    if (had == NULL || v == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "commit: out of memory");
  }
  if (st == HS_OK) {
    for (size_t i = 0; i < ro.n_entries; i++) had[i] = ro.entries[i].index_file;
    if (ro.n_entries > 1) qsort(had, ro.n_entries, sizeof *had, cstr_cmp);
    if ((st = hs_table_resolve_path(t, now, "index registry", &v[n], err)) == HS_OK) n++;
  }
  for (size_t i = 0; st == HS_OK && i < rn.n_entries; i++) {
    const char *f = rn.entries[i].index_file;
    if (ro.n_entries > 0 && bsearch(&f, had, ro.n_entries, sizeof *had, cstr_cmp) != NULL) continue;
    if ((st = hs_table_resolve_path(t, f, "index registry entry", &v[n], err)) == HS_OK) n++;
  }
  hs_free(had);
  hs_table_index_registry_free(&ro);
  hs_table_index_registry_free(&rn);
  if (st != HS_OK) {
    for (size_t i = 0; i < n; i++) hs_free(v[i]);
    hs_free(v);
    return st;
  }
  *out = v;
  *n_out = n;
  return HS_OK;
}

/* --------------------------------------------------- publish: adopt */

/* Make `m`, just published as version t->version + 1 at `path`, the
 * handle's metadata without reading and parsing it back (that parse was
 * the largest per-append cost once a table has a history). `m` shares
 * everything but its grown arrays and the new snapshot with the handle's
 * metadata, which lives in t->arena; those arrays and the strings they
 * point at outside t->arena are copied into t->arena. Superseded arrays
 * stay in the arena until the next parse: every ADOPT_REPARSE-th version
 * is parsed from disk instead, which compacts it. On any failure the
 * version is parsed from disk as before. */
static hs_status adopt(hs_table *t, const hs_iceberg_metadata *m, const char *path, hs_error *err) {
  int64_t v = t->version + 1;
  if (v % ADOPT_REPARSE == 0 || m->n_snapshots == 0 || m->n_metadata_log == 0 ||
      m->n_snapshot_log == 0 || m->n_refs == 0)
    return hs_table_load_version(t, v, err);
  hs_arena *ar = &t->arena;
  hs_iceberg_metadata n = *m;
  n.snapshots = hs_arena_memdup(ar, m->snapshots, m->n_snapshots * sizeof *m->snapshots);
  n.snapshot_log =
      hs_arena_memdup(ar, m->snapshot_log, m->n_snapshot_log * sizeof *m->snapshot_log);
  n.metadata_log =
      hs_arena_memdup(ar, m->metadata_log, m->n_metadata_log * sizeof *m->metadata_log);
  n.refs = hs_arena_memdup(ar, m->refs, m->n_refs * sizeof *m->refs);
  char *mpath = hs_strdup(path);
  bool ok = n.snapshots && n.snapshot_log && n.metadata_log && n.refs && mpath;
  hs_iceberg_snapshot *s = ok ? &n.snapshots[n.n_snapshots - 1] : NULL;
  if (ok) {
    s->manifest_list = arena_str(ar, s->manifest_list);
    hs_iceberg_kv *kv = hs_arena_alloc(ar, (s->n_summary + 1) * sizeof *kv);
    ok = s->manifest_list && kv;
    for (size_t i = 0; ok && i < s->n_summary; i++) {
      kv[i].key = arena_str(ar, s->summary[i].key);
      kv[i].value = arena_str(ar, s->summary[i].value);
      ok = kv[i].key && kv[i].value;
    }
    s->summary = kv;
    hs_iceberg_metadata_log_entry *ml = &n.metadata_log[n.n_metadata_log - 1];
    ml->metadata_file = ok ? arena_str(ar, ml->metadata_file) : NULL;
    ok = ok && ml->metadata_file;
  }
  if (!ok) {
    hs_free(mpath);
    return hs_table_load_version(t, v, err);
  }
  t->meta = n;
  hs_free(t->metadata_path);
  t->metadata_path = mpath;
  t->version = v;
  /* Stamped (local: one stat; the inode is the temporary's, written
   * once) so that the next refresh sees its own version unchanged instead
   * of reading and parsing it again; an object is not (a HEAD per commit):
   * its next refresh reads it. */
  t->meta_stamped = !t->remote && hs_store_stamp_of(path, &t->meta_stamp);
  return HS_OK;
}

/* ------------------------------------------------------ the snapshot */

static hs_txn_op resolve_op(const hs_txn *x) {
  if (x->op != HS_TXN_OP_AUTO) return x->op;
  bool data = false, dels = false;
  for (size_t i = 0; i < x->n_added; i++) {
    if (x->added[i].file.content == HS_ICE_CONTENT_DATA)
      data = true;
    else
      dels = true;
  }
  if (data && !dels && x->n_removed == 0) return HS_TXN_OP_APPEND;
  if (!data) return HS_TXN_OP_DELETE;
  return HS_TXN_OP_OVERWRITE;
}

static const char *op_name(hs_txn_op op) {
  switch (op) {
  case HS_TXN_OP_APPEND: return "append";
  case HS_TXN_OP_DELETE: return "delete";
  case HS_TXN_OP_REPLACE: return "replace";
  default: return "overwrite";
  }
}

/* The new snapshot's summary (Java's SnapshotSummary keys). */
static hs_status build_summary(hs_txn *x, const hs_iceberg_snapshot *cur,
                               const hs_iceberg_manifest_file *files, size_t n_files,
                               const attempt_stats *rs, hs_arena *a, hs_iceberg_snapshot *snap,
                               hs_error *err) {
  int64_t add_data = 0, add_records = 0, add_bytes = 0, add_del = 0, add_pos_files = 0,
          add_eq_files = 0, add_dvs = 0, add_pos = 0, add_eq = 0;
  for (size_t i = 0; i < x->n_added; i++) {
    const hs_iceberg_data_file *f = &x->added[i].file;
    add_bytes += f->file_size_in_bytes;
    if (f->content == HS_ICE_CONTENT_DATA) {
      add_data++;
      add_records += f->record_count;
    } else if (f->content == HS_ICE_CONTENT_EQUALITY_DELETES) {
      add_del++;
      add_eq_files++;
      add_eq += f->record_count;
    } else {
      add_del++;
      if (hs_iceberg_data_file_is_dv(f))
        add_dvs++;
      else
        add_pos_files++;
      add_pos += f->record_count;
    }
  }
  int64_t total_records = 0, total_data = 0, total_del = 0;
  for (size_t i = 0; i < n_files; i++) {
    if (files[i].content == HS_ICE_MANIFEST_DATA) {
      total_records += files[i].added_rows_count + files[i].existing_rows_count;
      total_data += files[i].added_files_count + files[i].existing_files_count;
    } else {
      total_del += files[i].added_files_count + files[i].existing_files_count;
    }
  }
  hs_iceberg_kv *sum = hs_arena_alloc(a, 40 * sizeof *sum);
  if (sum == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
  size_t ns = 0;
  sum[ns].key = "operation";
  sum[ns++].value = op_name(resolve_op(x));
  bool ok = true;
#define KV(key, v, cond)                                \
  do {                                                  \
    if (ok && (cond)) ok = add_kv(a, sum, &ns, key, v); \
  } while (0)
  KV("added-data-files", add_data, add_data > 0);
  KV("deleted-data-files", rs->removed_data_files, rs->removed_data_files > 0);
  KV("added-delete-files", add_del, add_del > 0);
  KV("added-equality-delete-files", add_eq_files, add_eq_files > 0);
  KV("added-position-delete-files", add_pos_files, add_pos_files > 0);
  KV("added-dvs", add_dvs, add_dvs > 0);
  KV("removed-delete-files", rs->removed_delete_files, rs->removed_delete_files > 0);
  KV("removed-equality-delete-files", rs->removed_eq_files, rs->removed_eq_files > 0);
  KV("removed-position-delete-files", rs->removed_pos_files, rs->removed_pos_files > 0);
  KV("removed-dvs", rs->removed_dvs, rs->removed_dvs > 0);
  KV("added-records", add_records, add_records > 0 || x->n_removed == 0);
  KV("deleted-records", rs->removed_records, rs->removed_records > 0);
  KV("added-files-size", add_bytes, true);
  KV("removed-files-size", rs->removed_bytes, rs->removed_bytes > 0);
  KV("added-position-deletes", add_pos, add_pos > 0);
  KV("removed-position-deletes", rs->removed_pos_deletes, rs->removed_pos_deletes > 0);
  KV("added-equality-deletes", add_eq, add_eq > 0);
  KV("removed-equality-deletes", rs->removed_eq_deletes, rs->removed_eq_deletes > 0);
  KV("changed-partition-count", x->n_added + (int64_t)x->n_removed, true);
  KV("total-records", total_records, true);
  int64_t prev_size = summary_int(cur, "total-files-size");
  int64_t size = (prev_size < 0 ? 0 : prev_size) + add_bytes - rs->removed_bytes;
  KV("total-files-size", size < 0 ? 0 : size, cur == NULL || prev_size >= 0);
  KV("total-data-files", total_data, true);
  KV("total-delete-files", total_del, true);
  int64_t prev_pos = summary_int(cur, "total-position-deletes");
  int64_t prev_eq = summary_int(cur, "total-equality-deletes");
  int64_t pos = (prev_pos < 0 ? 0 : prev_pos) + add_pos - rs->removed_pos_deletes;
  int64_t eq = (prev_eq < 0 ? 0 : prev_eq) + add_eq - rs->removed_eq_deletes;
  KV("total-position-deletes", pos < 0 ? 0 : pos, true);
  KV("total-equality-deletes", eq < 0 ? 0 : eq, true);
#undef KV
  if (!ok) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
  snap->summary = sum;
  snap->n_summary = ns;
  return HS_OK;
}

/* ------------------------------------------------------- one attempt */

/* Make durable what v{N+1} names and v{N+1} itself: the caller's
 * unsynced files and their folders, the new manifests (first attempt
 * only), this attempt's rewritten manifests and manifest list, metadata/
 * (their entries) and the metadata temporary. The files' syncs started
 * when each was written (sync_early; here those that did not); the
 * folders' start here, after the last entry in them was made. All run
 * side by side (one io_uring, fs_sync.c) and nothing is published until
 * every one returned (I4). */
static hs_status sync_before_publish(hs_txn *x, int list_fd, bool list_syncing, int tmp_fd,
                                     const char *tmp, hs_error *err) {
  if (x->syncs == NULL && (x->syncs = hs_fs_syncs_new()) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
  hs_fs_syncs *s = x->syncs;
  hs_status st = HS_OK;
  char(*dirs)[4200] = hs_malloc((x->n_written + 1) * sizeof *dirs);
  if (dirs == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
  size_t nd = 0;
  for (size_t i = 0; st == HS_OK && i < x->n_written; i++) {
    if (x->written[i].fd < 0) continue;
    if (!x->written[i].syncing)
      st = hs_fs_syncs_add_file(s, x->written[i].fd, x->written[i].path, err);
    const char *slash = strrchr(x->written[i].path, '/');
    size_t len = slash ? (size_t)(slash - x->written[i].path) : 0;
    if (st != HS_OK || len == 0 || len >= sizeof dirs[0]) continue;
    bool seen = false;
    for (size_t d = 0; d < nd && !seen; d++)
      seen = strncmp(dirs[d], x->written[i].path, len) == 0 && dirs[d][len] == '\0';
    if (seen) continue;
    memcpy(dirs[nd], x->written[i].path, len);
    dirs[nd][len] = '\0';
    st = hs_fs_syncs_add_dir(s, dirs[nd++], err);
  }
  for (size_t i = 0; st == HS_OK && i < x->n_news; i++)
    if (x->news[i].fd >= 0 && !x->news[i].syncing)
      st = hs_fs_syncs_add_file(s, x->news[i].fd, x->news[i].path, err);
  for (size_t i = 0; st == HS_OK && i < x->n_rewrites; i++)
    if (x->rewrites[i].fd >= 0 && !x->rewrites[i].syncing)
      st = hs_fs_syncs_add_file(s, x->rewrites[i].fd, x->rewrites[i].path, err);
  if (st == HS_OK && list_fd >= 0 && !list_syncing)
    st = hs_fs_syncs_add_file(s, list_fd, x->list_path, err);
  char mdir[4200];
  snprintf(mdir, sizeof mdir, "%s/metadata", x->t->root);
  if (st == HS_OK) st = hs_fs_syncs_add_dir(s, mdir, err);
  if (st == HS_OK && tmp != NULL) st = hs_fs_syncs_add_file(s, tmp_fd, tmp, err);
  hs_table_crash_point(); /* killed with the syncs in flight: nothing is named yet */
  /* Wait even after a failed start: nothing may still be in flight when
   * the descriptors are closed. */
  hs_status ws = hs_fs_syncs_wait(s, st == HS_OK ? err : NULL);
  if (st == HS_OK) st = ws;
  hs_free(dirs);
  if (st != HS_OK) return st;
  /* Durable now: a retry syncs only its own list, rewrites and metadata. */
  for (size_t i = 0; i < x->n_written; i++) {
    if (x->written[i].fd >= 0) close(x->written[i].fd);
    x->written[i].fd = -1;
    x->written[i].syncing = false;
  }
  for (size_t i = 0; i < x->n_news; i++) {
    if (x->news[i].fd >= 0) close(x->news[i].fd);
    x->news[i].fd = -1;
    x->news[i].syncing = false;
  }
  for (size_t i = 0; i < x->n_rewrites; i++) {
    if (x->rewrites[i].fd >= 0) close(x->rewrites[i].fd);
    x->rewrites[i].fd = -1;
    x->rewrites[i].syncing = false;
  }
  return HS_OK;
}

/* The link of `tmp` to `path` (v{N+1}) under the shared publish lock,
 * after checking that every file this version names anew is still there
 * (an orphan sweep with a young cut-off may have taken one); a vanished
 * one fails the commit with nothing published (the temporary is removed
 * either way). */
static hs_status publish_checked(hs_txn *x, const hs_iceberg_metadata *old,
                                 const hs_iceberg_metadata *m, const char *tmp, const char *path,
                                 bool *won, hs_error *err) {
  *won = false;
  char **reg = NULL;
  size_t n_reg = 0;
  hs_status st = HS_OK;
  if (x->edit != NULL) st = registry_files(x->t, old, m, &reg, &n_reg, err);
  int lock_fd = -1;
  if (st == HS_OK) st = hs_table_publish_lock(x->t, false, &lock_fd, err);
  for (size_t i = 0; st == HS_OK && i < x->n_written; i++)
    st = hs_table_publish_check(x->what, &x->written[i].path, 1, err);
  for (size_t i = 0; st == HS_OK && i < x->n_added; i++) {
    const char *p = x->added[i].file.file_path;
    if (p[0] == '/') st = hs_table_publish_check(x->what, &p, 1, err);
  }
  for (size_t i = 0; st == HS_OK && i < x->n_news; i++) {
    const char *p = x->news[i].path;
    st = hs_table_publish_check(x->what, &p, 1, err);
  }
  for (size_t i = 0; st == HS_OK && i < x->n_rewrites; i++) {
    const char *p = x->rewrites[i].path;
    st = hs_table_publish_check(x->what, &p, 1, err);
  }
  if (st == HS_OK && x->list_path[0]) {
    const char *p = x->list_path;
    st = hs_table_publish_check(x->what, &p, 1, err);
  }
  if (st == HS_OK) st = hs_table_publish_check(x->what, (const char *const *)reg, n_reg, err);
  if (st == HS_OK) st = hs_table_publish_check(x->what, &tmp, 1, err);
  if (st == HS_OK) {
    st = hs_fs_publish_link(tmp, path, won, err);
  } else {
    (void)hs_fs_remove(tmp, NULL);
  }
  hs_table_publish_unlock(lock_fd);
  for (size_t i = 0; i < n_reg; i++) hs_free(reg[i]);
  hs_free(reg);
  return st;
}

/* A metadata-only version: under the shared publish lock, the files the
 * edit names anew (a new index registry and its index files) re-checked,
 * then the exclusive publish of `json` as `path`. */
static hs_status publish_metadata_only(hs_txn *x, const hs_iceberg_metadata *old,
                                       const hs_iceberg_metadata *m, const hs_buf *json,
                                       const char *path, bool *won, hs_error *err) {
  *won = false;
  char **reg = NULL;
  size_t n_reg = 0;
  int lock_fd = -1;
  hs_status st = registry_files(x->t, old, m, &reg, &n_reg, err);
  if (st == HS_OK) st = hs_table_publish_lock(x->t, false, &lock_fd, err);
  if (st == HS_OK) st = hs_table_publish_check(x->what, (const char *const *)reg, n_reg, err);
  if (st == HS_OK)
    st = x->t->remote ? hs_store_put_if_absent(path, json->data, json->len, won, err)
                      : hs_fs_publish_exclusive(path, json->data, json->len, won, err);
  hs_table_publish_unlock(lock_fd);
  for (size_t i = 0; i < n_reg; i++) hs_free(reg[i]);
  hs_free(reg);
  return st;
}

static bool has_snapshot_change(const hs_txn *x) {
  return x->n_added > 0 || x->n_removed > 0;
}

/* One attempt against the loaded version of x->t. *won: published;
 * *noop: the edit changed nothing and there is no snapshot to commit. */
static hs_status attempt(hs_txn *x, int attempt_no, bool *won, bool *noop, hs_error *err) {
  hs_table *t = x->t;
  const hs_iceberg_metadata *old = &t->meta;
  *won = false;
  *noop = false;
  hs_arena a;
  hs_arena_init(&a);
  hs_buf buf;
  hs_buf_init(&buf);
  hs_status st = HS_OK;
  char uuid[37];
  char tmp[4300];
  tmp[0] = '\0';
  int list_fd = -1, tmp_fd = -1;
  bool list_syncing = false;
  x->list_path[0] = '\0';
  x->n_rewrites = 0;
  bool snap_change = has_snapshot_change(x);
  int64_t now = hs_table_wall_ms();
  if (now < old->last_updated_ms) now = old->last_updated_ms;
  hs_iceberg_metadata m = *old;
  m.last_updated_ms = now;

  if (x->edit != NULL) {
    bool changed = false;
    st = x->edit(old, &m, &a, x->edit_ctx, &changed, err);
    if (st != HS_OK && x->edit_prefix) hs_error_prefix(err, "%s: %s: ", t->root, x->what);
    if (st != HS_OK) goto done;
    if (!changed && !snap_change) {
      *noop = true;
      goto done;
    }
    m.last_updated_ms = now;
  } else if (!snap_change) {
    *noop = true;
    goto done;
  }

  if (snap_change) {
    if ((st = prepare_sets(x, err)) != HS_OK) goto done;
    if (x->snapshot_id < 0 && (st = random_snapshot_id(&x->snapshot_id, err)) != HS_OK) goto done;
    /* Snapshot ids must be unique in the table. */
    while (hs_iceberg_metadata_snapshot(old, x->snapshot_id) != NULL)
      if ((st = random_snapshot_id(&x->snapshot_id, err)) != HS_OK) goto done;
    const hs_iceberg_snapshot *cur = hs_table_current(t);
    int64_t seq = (old->has_last_sequence_number ? old->last_sequence_number : 0) + 1;
    if ((st = write_news(x, seq, err)) != HS_OK) goto done;
    hs_table_crash_point();

    hs_iceberg_manifest_list prev;
    memset(&prev, 0, sizeof prev);
    if (cur != NULL) {
      if ((st = hs_table_read_avro(t, cur->manifest_list, "manifest list", &buf, err)) != HS_OK) {
        /* Gone because a newer version expired that snapshot (expire.c
         * publishes, then deletes): a lost race like any other, retried on
         * the newer version. */
        if (st == HS_ERR_NOT_FOUND && hs_table_newer_version_exists(t)) st = HS_OK;
        goto done;
      }
      st = hs_iceberg_manifest_list_read(buf.data, buf.len, &a, &prev, err);
      if (st != HS_OK) {
        hs_error_prefix(err, "%s: ", cur->manifest_list);
        goto done;
      }
      prev.snapshot_id = cur->snapshot_id;
      buf.len = 0;
    }
    size_t n_files = x->n_news + prev.n_files;
    hs_iceberg_manifest_file *files = hs_arena_alloc(&a, (n_files + 1) * sizeof *files);
    hs_free(x->rewrites);
    x->rewrites = prev.n_files ? hs_calloc(prev.n_files, sizeof *x->rewrites) : NULL;
    if (files == NULL || (prev.n_files && x->rewrites == NULL)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
      goto done;
    }
    for (size_t i = 0; i < x->n_news; i++) {
      files[i] = x->news[i].mf;
      files[i].manifest_path = x->news[i].path;
      files[i].added_snapshot_id = x->snapshot_id;
      files[i].sequence_number = seq;
      files[i].min_sequence_number = seq;
      files[i].has_first_row_id = false;
    }
    attempt_stats rs;
    memset(&rs, 0, sizeof rs);
    size_t n_carried = 0;
    st = carry_manifests(x, &prev, seq, &a, files + x->n_news, &n_carried, &rs, err);
    /* Validation needs what the rewrite found of the removed files (kind,
     * spec, partition); its conflicts are reported before "not live". */
    if (st == HS_OK) st = validate_since_start(x, err);
    if (st == HS_OK) st = check_removed_found(x, cur ? cur->snapshot_id : -1, err);
    if (st != HS_OK) goto done;
    n_files = x->n_news + n_carried;
    for (size_t i = x->n_news; i < n_files; i++) {
      /* rewritten ones: added by this snapshot */
      for (size_t r = 0; r < x->n_rewrites; r++)
        if (files[i].manifest_path == x->rewrites[r].path) {
          files[i].added_snapshot_id = x->snapshot_id;
          files[i].sequence_number = seq;
          files[i].has_first_row_id = false;
        }
    }
    hs_table_crash_point();
    int64_t first_row_id = old->has_next_row_id ? old->next_row_id : 0;
    hs_iceberg_manifest_list_options lo = {.format_version = old->format_version,
                                           .snapshot_id = x->snapshot_id,
                                           .has_parent_snapshot_id = cur != NULL,
                                           .parent_snapshot_id = cur ? cur->snapshot_id : 0,
                                           .sequence_number = seq,
                                           .first_row_id = first_row_id};
    int64_t assigned = 0;
    st = hs_iceberg_manifest_list_write(&lo, files, n_files, &buf, NULL, &assigned, err);
    if (st != HS_OK) goto done;
    if ((st = hs_fs_uuid4(uuid, err)) != HS_OK) goto done;
    snprintf(x->list_path, sizeof x->list_path, "%s/metadata/snap-%lld-%d-%s.avro", t->root,
             (long long)x->snapshot_id, attempt_no, uuid);
    st = t->remote ? hs_store_put(x->list_path, buf.data, buf.len, err)
                   : hs_fs_create_unsynced(x->list_path, buf.data, buf.len, &list_fd, err);
    if (st != HS_OK) {
      x->list_path[0] = '\0';
      goto done;
    }
    list_syncing = sync_early(x, list_fd, x->list_path);
    hs_table_crash_point();

    hs_iceberg_snapshot snap;
    memset(&snap, 0, sizeof snap);
    snap.snapshot_id = x->snapshot_id;
    snap.has_parent_snapshot_id = cur != NULL;
    snap.parent_snapshot_id = cur ? cur->snapshot_id : 0;
    snap.has_sequence_number = true;
    snap.sequence_number = seq;
    snap.timestamp_ms = now;
    snap.manifest_list = x->list_path;
    snap.has_schema_id = true;
    snap.schema_id = x->schema_id;
    if (old->format_version >= 3) {
      snap.has_first_row_id = true;
      snap.first_row_id = first_row_id;
      snap.has_added_rows = true;
      snap.added_rows = assigned;
    }
    if ((st = build_summary(x, cur, files, n_files, &rs, &a, &snap, err)) != HS_OK) goto done;

    /* The new metadata: grown arrays over `m` (the edit's result). */
    const hs_iceberg_metadata *base = &m;
    hs_iceberg_snapshot *snaps = hs_arena_alloc(&a, (base->n_snapshots + 1) * sizeof *snaps);
    hs_iceberg_snapshot_log_entry *slog =
        hs_arena_alloc(&a, (base->n_snapshot_log + 1) * sizeof *slog);
    hs_iceberg_ref *refs = hs_arena_alloc(&a, (base->n_refs + 1) * sizeof *refs);
    if (!snaps || !slog || !refs) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
      goto done;
    }
    if (base->n_snapshots) memcpy(snaps, base->snapshots, base->n_snapshots * sizeof *snaps);
    snaps[base->n_snapshots] = snap;
    if (base->n_snapshot_log) memcpy(slog, base->snapshot_log, base->n_snapshot_log * sizeof *slog);
    slog[base->n_snapshot_log] =
        (hs_iceberg_snapshot_log_entry){.timestamp_ms = now, .snapshot_id = x->snapshot_id};
    bool have_main = false;
    if (base->n_refs) memcpy(refs, base->refs, base->n_refs * sizeof *refs);
    size_t n_refs = base->n_refs;
    for (size_t i = 0; i < n_refs; i++) {
      if (strcmp(refs[i].name, "main") == 0) {
        refs[i].snapshot_id = x->snapshot_id;
        refs[i].is_tag = false;
        have_main = true;
      }
    }
    if (!have_main) {
      memset(&refs[n_refs], 0, sizeof refs[0]);
      refs[n_refs].name = "main";
      refs[n_refs++].snapshot_id = x->snapshot_id;
    }
    m.snapshots = snaps;
    m.n_snapshots++;
    m.snapshot_log = slog;
    m.n_snapshot_log++;
    m.refs = refs;
    m.n_refs = n_refs;
    m.has_last_sequence_number = true;
    m.last_sequence_number = seq;
    m.has_current_snapshot_id = true;
    m.current_snapshot_id = x->snapshot_id;
    if (old->format_version >= 3) {
      m.has_next_row_id = true;
      m.next_row_id = first_row_id + assigned;
    }
  }

  /* metadata-log: the version this one replaces, the last 100 kept. */
  size_t keep = old->n_metadata_log;
  size_t skip = keep >= HS_TABLE_METADATA_LOG_MAX ? keep - (HS_TABLE_METADATA_LOG_MAX - 1) : 0;
  m.metadata_log = hs_arena_alloc(&a, (keep - skip + 1) * sizeof *m.metadata_log);
  if (m.metadata_log == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", x->what);
    goto done;
  }
  m.n_metadata_log = keep - skip;
  if (m.n_metadata_log)
    memcpy(m.metadata_log, old->metadata_log + skip, m.n_metadata_log * sizeof *m.metadata_log);
  m.metadata_log[m.n_metadata_log++] = (hs_iceberg_metadata_log_entry){
      .timestamp_ms = old->last_updated_ms, .metadata_file = t->metadata_path};
  if (t->catalog != NULL) {
    /* A catalog table's publish: what the version names made durable
     * (local files: one sync set; objects already are), then the
     * catalog's commit, which adopts the committed metadata into t on a
     * win (`old` and `m` are not used after it). A refusal because the
     * table changed (*won false) retries like a lost link. */
    hs_table_crash_point();
    if (snap_change && !t->remote &&
        (st = sync_before_publish(x, list_fd, list_syncing, -1, NULL, err)) != HS_OK)
      goto done;
    st = t->catalog->commit(t, old, &m, won, err);
    if (st != HS_OK && *won) x->outcome_unknown = true; /* maybe applied: keep every file */
    goto done;
  }
  buf.len = 0;
  char path[4200]; /* v{N+1}, plain or gzip as the table asks (table.c) */
  if ((st = hs_table_next_version(t, &m, &buf, path, sizeof path, err)) != HS_OK) goto done;
  if (!snap_change || t->remote) {
    /* Nothing written but the version itself (or, on object storage,
     * everything else already durable: there is no lock, the conditional
     * PUT of v{N+1} is the arbiter): its temporary is made, synced
     * and linked inside the shared publish lock (hs_fs_publish_exclusive),
     * so a forced orphan sweep cannot take it from under the commit. */
    hs_table_crash_point();
    st = publish_metadata_only(x, old, &m, &buf, path, won, err);
  } else {
    st = hs_fs_publish_prepare(path, buf.data, buf.len, tmp, sizeof tmp, &tmp_fd, err);
    if (st != HS_OK) {
      tmp[0] = '\0';
      goto done;
    }
    if ((st = sync_before_publish(x, list_fd, list_syncing, tmp_fd, tmp, err)) != HS_OK) goto done;
    hs_table_crash_point();
    st = publish_checked(x, old, &m, tmp, path, won, err);
    tmp[0] = '\0'; /* removed by the link, or by publish_checked */
  }
  if (st != HS_OK) goto done;
  if (*won) {
    hs_table_crash_point();
    char hint[4200], num[24];
    snprintf(hint, sizeof hint, "%s/metadata/version-hint.text", t->root);
    int n = snprintf(num, sizeof num, "%lld", (long long)(t->version + 1));
    /* a hint: best effort */
    (void)(t->remote ? hs_store_put(hint, num, (size_t)n, NULL)
                     : hs_fs_replace_hint(hint, num, (size_t)n, NULL));
    hs_table_crash_point();
    /* Adopt the version we wrote (a failure only leaves the handle stale).
     * An edit may have replaced arrays adopt does not copy: read it. */
    if (snap_change && x->edit == NULL)
      (void)adopt(t, &m, path, NULL);
    else
      (void)hs_table_load_version(t, t->version + 1, NULL);
    /* The new version's index stream (stream.c; best effort). */
    if (t->remote && strcmp(t->metadata_path != NULL ? t->metadata_path : "", path) == 0)
      (void)hs_table_stream_write(t, NULL, NULL);
  }

done:
  syncs_settle(x); /* a failed attempt may leave syncs of its files in flight */
  if (list_fd >= 0) close(list_fd);
  if (tmp_fd >= 0) close(tmp_fd);
  if (tmp[0] != '\0') (void)hs_fs_remove(tmp, NULL);
  if (!*won) {
    if (x->list_path[0] != '\0') (void)hs_table_file_remove(x->list_path, NULL);
    x->list_path[0] = '\0';
    remove_manifests(x->rewrites, x->n_rewrites);
    x->n_rewrites = 0;
  } else {
    for (size_t i = 0; i < x->n_rewrites; i++)
      if (x->rewrites[i].fd >= 0) close(x->rewrites[i].fd);
  }
  hs_buf_free(&buf);
  hs_arena_reset(&a);
  return st;
}

hs_status hs_txn_commit(hs_txn *x, int64_t *snapshot_id_out, bool *committed, hs_error *err) {
  if (snapshot_id_out) *snapshot_id_out = -1;
  if (committed) *committed = false;
  if (x->committed)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: transaction already committed", x->what);
  hs_status st = HS_OK;
  for (int n = 0;; n++) {
    if (n == HS_TXN_ATTEMPTS_MAX) {
      st = hs_error_set(err, HS_ERR_IO, "%s: %s: commit lost %d races in a row; giving up",
                        x->t->root, x->what, HS_TXN_ATTEMPTS_MAX);
      break;
    }
    if (n > 0) {
      hs_table_backoff(n);
      if ((st = pin_and_reload(x, err)) != HS_OK) break;
      if (x->recheck != NULL && (st = x->recheck(x->t, x->recheck_ctx, err)) != HS_OK) break;
    }
    bool won = false, noop = false;
    st = attempt(x, n, &won, &noop, err);
    if (st != HS_OK && x->outcome_unknown) { /* an error, but maybe committed */
      x->committed = true;
      if (committed) *committed = true;
      if (snapshot_id_out && has_snapshot_change(x)) *snapshot_id_out = x->snapshot_id;
    }
    if (st != HS_OK || noop) break;
    if (won) {
      x->committed = true;
      if (committed) *committed = true;
      if (snapshot_id_out && has_snapshot_change(x)) *snapshot_id_out = x->snapshot_id;
      break;
    }
  }
  return st;
}

/* ------------------------------------------ metadata-only commits */

hs_status hs_table_commit_metadata(hs_table *t, const char *what, hs_table_metadata_edit edit,
                                   void *ctx, hs_error *err) {
  hs_txn *x = NULL;
  hs_status st = hs_txn_begin(t, what, &x, err);
  if (st != HS_OK) return st;
  hs_txn_set_edit(x, edit, ctx, true);
  st = hs_txn_commit(x, NULL, NULL, err);
  hs_txn_free(x);
  return st;
}
