/*
 * orphans.c — hs_table_remove_orphan_files: reclaim the files of a table
 * folder that no metadata reaches any more.
 *
 * Where orphans come from: a writer that crashed or lost before publishing
 * (its data file, manifests, temporary metadata), an index build that was
 * never registered, indexes dropped or re-configured (their Puffin files),
 * registries replaced by later ones. Readers never see them (README
 * invariant I4); they only cost disk.
 *
 * Order matters for a table other processes write at the same time:
 *   1. list the candidates (regular files under data/, index/, metadata/,
 *      recursively through hs_store_list; symbolic links and other folders
 *      are never touched),
 *   2. then load the latest metadata and collect what it reaches,
 *   3. take the publish lock exclusively (below); if versions were published
 *      since 2, add what the latest reaches (only its new manifest lists and
 *      manifests are read),
 *   4. remove the listed files that are unreachable AND last modified before
 *      `older_than_ms`, then release the lock.
 * Metadata versions newer than the loaded one and version-hint.text are
 * always kept.
 *
 * Commits in flight. Their files are unreachable until they publish. Two
 * defences: (a) the floor, HS_ORPHAN_MIN_AGE_MS (1 hour): without
 * HS_ORPHAN_FORCE the cut-off is never later than now minus the floor, so
 * only a commit whose files were last written over an hour before it
 * publishes can lose one (Iceberg's default margin, 3 days, stays the
 * callers' default); (b) the publish lock: every publish (commit.c,
 * partition.c, refs.c) holds flock(LOCK_SH) on metadata/ while it re-checks
 * the files it wrote (hs_table_publish_check) and links the version; steps
 * 3-4 hold LOCK_EX. A sweep therefore either removes a writer's file before
 * the writer's check (the commit fails cleanly: "... was removed before the
 * commit published ...; nothing was committed") or runs after the publish
 * and finds the version in step 3. With HS_ORPHAN_FORCE and a cut-off of
 * now, writers may fail, but no version ever names a missing file.
 *
 * On object storage (s3://) there is no lock: LIST gives each object's
 * LastModified, which the cut-off is compared with, and the floor is the
 * defence against commits in flight (as for Iceberg's deleteOrphanFiles on
 * S3). An object listed without a LastModified is never taken. Forcing a
 * young cut-off while others write may remove a file of a commit in
 * flight, which then publishes a version naming it: don't.
 *
 * Another maintainer. expire_snapshots publishes a version without the
 * expired snapshots, then deletes their files; a walk of the older version
 * meets a missing manifest list or manifest. That is not an error: when a
 * newer version exists the walk is redone on it (bounded), and only a file
 * missing from the latest version stops the call.
 *
 * Reachable: the current metadata file and every metadata-log entry; for
 * every snapshot its manifest list, the list's manifests and every file any
 * manifest entry names (whatever its status: a DELETED entry's file may
 * still be read by a snapshot that expired from this metadata but not from
 * an older one); Iceberg statistics files; the current index registry and
 * the registries of the metadata-log versions; the index files the current
 * registry names. A recorded path that does not resolve inside the folder,
 * or a manifest that cannot be read, stops the whole call before anything is
 * removed: an incomplete reachable set must never delete data.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../io/fs.h"
#include "../io/store.h"
#include "../parquet/parquet.h"
#include "table.h"

#define ORPHAN_DEPTH_MAX 16 /* data/ partition folders nest one per field */

void hs_table_file_set_free(hs_table_file_set *s) {
  for (size_t i = 0; i < s->n; i++) hs_free(s->paths[i]);
  hs_free(s->paths);
  memset(s, 0, sizeof *s);
}

/* Takes ownership of `p` (hs_malloc'd), also on failure. */
static hs_status strset_add_owned(hs_table_file_set *s, char *p, hs_error *err) {
  if (p == NULL) return hs_error_set(err, HS_ERR_NOMEM, "reachable files: out of memory");
  if (s->n == s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 64;
    char **nv = hs_realloc(s->paths, nc * sizeof *nv);
    if (nv == NULL) {
      hs_free(p);
      return hs_error_set(err, HS_ERR_NOMEM, "reachable files: out of memory");
    }
    s->paths = nv;
    s->cap = nc;
  }
  s->paths[s->n++] = p;
  s->sorted = false;
  return HS_OK;
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort and drop repeats (once; adding again un-sorts). */
static void strset_sort(hs_table_file_set *s) {
  if (s->sorted) return;
  if (s->n > 1) qsort(s->paths, s->n, sizeof *s->paths, str_cmp);
  size_t w = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (w > 0 && strcmp(s->paths[w - 1], s->paths[i]) == 0) {
      hs_free(s->paths[i]);
      continue;
    }
    s->paths[w++] = s->paths[i];
  }
  s->n = w;
  s->sorted = true;
}

bool hs_table_file_set_has(hs_table_file_set *s, const char *path) {
  strset_sort(s);
  return s->n > 0 && bsearch(&path, s->paths, s->n, sizeof *s->paths, str_cmp) != NULL;
}

/* A path recorded in metadata, resolved inside the folder, into `s`. */
static hs_status reach(const hs_table *t, hs_table_file_set *s, const char *recorded,
                       const char *what, hs_error *err) {
  char *path = NULL;
  hs_status st = hs_table_resolve_path(t, recorded, what, &path, err);
  if (st != HS_OK) return st;
  return strset_add_owned(s, path, err);
}

typedef struct manifest_ref {
  char *path;                            /* resolved; NULL once handed to the set */
  const hs_iceberg_manifest_file *entry; /* its manifest-list entry (lists arena) */
} manifest_ref;

static int mref_cmp(const void *a, const void *b) {
  return strcmp(((const manifest_ref *)a)->path, ((const manifest_ref *)b)->path);
}

/* Whether `path` is in `known` (sorted once the walk starts; may be NULL):
 * the result of an earlier, complete walk of an older version. */
static bool known_has(hs_table_file_set *known, const char *path) {
  return known != NULL && known->n > 0 && hs_table_file_set_has(known, path);
}

/* Every snapshot's manifest list, then every distinct manifest once (many
 * snapshots share most of theirs) and each of its entries' files. Lists and
 * manifests in `known` are skipped: a complete earlier walk reached them and
 * everything in them (files never change). A list or manifest enters `s`
 * only after it was read. */
static hs_status reach_snapshots(const hs_table *t, hs_table_file_set *known, hs_table_file_set *s,
                                 hs_error *err) {
  const hs_iceberg_metadata *m = &t->meta;
  hs_arena lists, one;
  hs_arena_init(&lists);
  hs_arena_init(&one);
  hs_buf buf;
  hs_buf_init(&buf);
  manifest_ref *refs = NULL;
  size_t n = 0, cap = 0;
  hs_status st = HS_OK;
  for (size_t i = 0; st == HS_OK && i < m->n_snapshots; i++) {
    const hs_iceberg_snapshot *snap = &m->snapshots[i];
    if (snap->manifest_list == NULL) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: snapshot %lld lists manifests inline (format v1); only manifest "
                        "lists are followed",
                        t->metadata_path, (long long)snap->snapshot_id);
      break;
    }
    char *lpath = NULL;
    if ((st = hs_table_resolve_path(t, snap->manifest_list, "manifest list", &lpath, err)) != HS_OK)
      break;
    if (known_has(known, lpath)) {
      hs_free(lpath);
      continue;
    }
    hs_iceberg_manifest_list list;
    buf.len = 0;
    st = hs_table_read_avro(t, snap->manifest_list, "manifest list", &buf, err);
    if (st == HS_OK &&
        (st = hs_iceberg_manifest_list_read(buf.data, buf.len, &lists, &list, err)) != HS_OK)
      hs_error_prefix(err, "%s: ", snap->manifest_list);
    if (st == HS_OK) {
      st = strset_add_owned(s, lpath, err);
    } else {
      hs_free(lpath);
    }
    for (size_t k = 0; st == HS_OK && k < list.n_files; k++) {
      if (n == cap) {
        size_t nc = cap ? cap * 2 : 64;
        manifest_ref *nv = hs_realloc(refs, nc * sizeof *nv);
        if (nv == NULL) {
          st = hs_error_set(err, HS_ERR_NOMEM, "reachable files: out of memory");
          break;
        }
        refs = nv;
        cap = nc;
      }
      refs[n].entry = &list.files[k];
      st = hs_table_resolve_path(t, list.files[k].manifest_path, "manifest", &refs[n].path, err);
      if (st != HS_OK) hs_error_prefix(err, "%s: ", snap->manifest_list);
      if (st == HS_OK) n++;
    }
  }
  if (st == HS_OK && n > 1) qsort(refs, n, sizeof *refs, mref_cmp);
  const char *prev = NULL;
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    const char *path = refs[i].path;
    if (prev != NULL && strcmp(prev, path) == 0) continue; /* shared by several snapshots */
    prev = path;
    if (known_has(known, path)) continue;
    const hs_iceberg_manifest_file *mf = refs[i].entry;
    hs_iceberg_manifest man;
    hs_arena_reset(&one);
    buf.len = 0;
    st = hs_table_read_avro(t, mf->manifest_path, "manifest", &buf, err);
    if (st == HS_OK &&
        (st = hs_iceberg_manifest_read(buf.data, buf.len, mf, &one, &man, err)) != HS_OK)
      hs_error_prefix(err, "%s: ", mf->manifest_path);
    for (size_t k = 0; st == HS_OK && k < man.n_entries; k++) {
      if (s->live_entries_only && man.entries[k].status == HS_ICE_ENTRY_DELETED) continue;
      char what[64];
      snprintf(what, sizeof what, "manifest entry %zu", k);
      st = reach(t, s, man.entries[k].data_file.file_path, what, err);
      if (st != HS_OK) hs_error_prefix(err, "%s: ", mf->manifest_path);
    }
    /* a copy: refs[i] keeps its own (what `prev` points at) until the end */
    if (st == HS_OK) st = strset_add_owned(s, hs_strdup(path), err);
  }
  for (size_t i = 0; i < n; i++) hs_free(refs[i].path);
  hs_free(refs);
  hs_buf_free(&buf);
  hs_arena_reset(&one);
  hs_arena_reset(&lists);
  return st;
}

/* The "statistics-path" of every entry of an Iceberg statistics list. */
static hs_status reach_statistics(const hs_table *t, hs_iceberg_json list, const char *what,
                                  hs_table_file_set *s, hs_error *err) {
  if (list == NULL) return HS_OK;
  json_t *j = json_loads(list, JSON_DECODE_ANY, NULL);
  if (j == NULL || !json_is_array(j)) {
    json_decref(j);
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: %s is not a JSON list", t->metadata_path, what);
  }
  hs_status st = HS_OK;
  size_t i;
  json_t *e;
  json_array_foreach(j, i, e) {
    const char *p = json_string_value(json_object_get(e, "statistics-path"));
    if (p != NULL && (st = reach(t, s, p, what, err)) != HS_OK) break;
  }
  json_decref(j);
  return st;
}

/* A metadata-log version's index registry (the file only; its index files
 * are not kept alive by an old registry). A missing old version is fine. */
static hs_status reach_old_registry(const hs_table *t, const char *metadata_path,
                                    hs_table_file_set *s, hs_error *err) {
  hs_buf text;
  hs_buf_init(&text);
  hs_error e2 = {0};
  if (hs_table_metadata_bytes(metadata_path, &text, &e2) != HS_OK) {
    hs_buf_free(&text);
    bool exists = true;
    return hs_store_exists(metadata_path, &exists, NULL) == HS_OK && !exists
               ? HS_OK
               : hs_error_set(err, e2.status, "%s", e2.message);
  }
  hs_arena arena;
  hs_arena_init(&arena);
  hs_iceberg_metadata m;
  hs_status st = hs_iceberg_metadata_parse((const char *)text.data, text.len, &arena, &m, err);
  hs_buf_free(&text);
  if (st != HS_OK) {
    hs_error_prefix(err, "%s: ", metadata_path);
  } else {
    const char *reg = hs_iceberg_metadata_property(&m, "hyperstream.index-registry");
    if (reg != NULL) st = reach(t, s, reg, "index registry", err);
  }
  hs_arena_reset(&arena);
  return st;
}

/* What the loaded metadata reaches, into `s` (empty on entry). `known`
 * (NULL or the complete result of an earlier walk) lets the walk skip the
 * metadata-log versions, manifest lists and manifests it already holds. */
static hs_status reachable(const hs_table *t, hs_table_file_set *known, hs_table_file_set *s,
                           hs_error *err) {
  const hs_iceberg_metadata *m = &t->meta;
  hs_status st = strset_add_owned(s, hs_strdup(t->metadata_path), err);
  for (size_t i = 0; st == HS_OK && i < m->n_metadata_log; i++) {
    char *p = NULL;
    st = hs_table_resolve_path(t, m->metadata_log[i].metadata_file, "metadata-log", &p, err);
    if (st == HS_OK && known_has(known, p)) {
      hs_free(p);
      continue;
    }
    if (st == HS_OK && (st = reach_old_registry(t, p, s, err)) != HS_OK) hs_free(p);
    if (st == HS_OK) st = strset_add_owned(s, p, err);
  }
  if (st == HS_OK) st = reach_snapshots(t, known, s, err);
  if (st == HS_OK) st = reach_statistics(t, m->statistics, "statistics", s, err);
  if (st == HS_OK)
    st = reach_statistics(t, m->partition_statistics, "partition-statistics", s, err);
  const char *reg = hs_iceberg_metadata_property(m, "hyperstream.index-registry");
  if (st == HS_OK && reg != NULL) st = reach(t, s, reg, "index registry", err);
  /* An index file lives while a data file it covers does (entries of files
   * that expired snapshots took away are kept in the registry, harmlessly). */
  hs_table_index_registry r;
  memset(&r, 0, sizeof r);
  if (st == HS_OK) st = hs_table_index_registry_load(t, NULL, &r, err);
  if (st == HS_OK) strset_sort(s);
  size_t n_data = s->n; /* lookups below see only what was reached so far */
  for (size_t i = 0; st == HS_OK && i < r.n_entries; i++) {
    const char *df = r.entries[i].data_file;
    if (bsearch(&df, s->paths, n_data, sizeof *s->paths, str_cmp) != NULL || known_has(known, df))
      st = reach(t, s, r.entries[i].index_file, "index registry entry", err);
  }
  hs_table_index_registry_free(&r);
  if (st == HS_OK) strset_sort(s);
  return st;
}

hs_status hs_table_reachable(hs_table *t, hs_table_file_set *out, hs_error *err) {
  bool live_only = out->live_entries_only;
  memset(out, 0, sizeof *out);
  out->live_entries_only = live_only;
  hs_status st = reachable(t, NULL, out, err);
  if (st != HS_OK) hs_table_file_set_free(out);
  out->live_entries_only = live_only;
  return st;
}

bool hs_table_newer_version_exists(const hs_table *t) {
  char path[4200];
  bool exists = false;
  /* Any name of v{N+1} (plain or gzip); a probe error counts as "exists". */
  return t->version >= 1 &&
         (hs_table_version_find(t, t->version + 1, path, sizeof path, &exists, NULL) != HS_OK ||
          exists);
}

/* A walk meets a missing file when another process expired its snapshot
 * (published a newer version, then deleted the files): walk the newer
 * version instead. Each retry needs a newer version, so the bound is only
 * reached by a table committed to faster than it can be walked. */
#define REACH_RETRIES_MAX 64

hs_status hs_table_reachable_latest(hs_table *t, hs_table_file_set *out, hs_error *err) {
  hs_status st = hs_table_load_latest(t, err);
  for (int i = 0; st == HS_OK; i++) {
    st = hs_table_reachable(t, out, err);
    if (st != HS_ERR_NOT_FOUND || i == REACH_RETRIES_MAX || !hs_table_newer_version_exists(t))
      break;
    st = hs_table_load_latest(t, err);
  }
  return st;
}

/* Add to `live` (the complete result of earlier walks, or empty) what the
 * latest metadata reaches, retrying on newer versions as above. `live`
 * only grows: a superset of the latest's reachable files is what the
 * sweep may keep. Loads the latest first. */
static hs_status reach_into(hs_table *t, hs_table_file_set *live, hs_error *err) {
  hs_status st = hs_table_load_latest(t, err);
  for (int i = 0; st == HS_OK; i++) {
    strset_sort(live);
    hs_table_file_set add = {0};
    st = reachable(t, live, &add, err);
    if (st == HS_OK) {
      for (size_t k = 0; st == HS_OK && k < add.n; k++) {
        st = strset_add_owned(live, add.paths[k], err);
        add.paths[k] = NULL;
      }
      for (size_t k = 0; k < add.n; k++) hs_free(add.paths[k]);
      hs_free(add.paths);
      if (st == HS_OK) strset_sort(live);
      return st;
    }
    hs_table_file_set_free(&add); /* a partial walk is never used */
    if (st != HS_ERR_NOT_FOUND || i == REACH_RETRIES_MAX || !hs_table_newer_version_exists(t))
      break;
    st = hs_table_load_latest(t, err);
  }
  return st;
}

/* ------------------------------------------------------ publish lock */

hs_status hs_table_publish_lock(const hs_table *t, bool exclusive, int *fd_out, hs_error *err) {
  *fd_out = -1;
  if (t->remote) return HS_OK; /* no locks on object storage: unlocked, as without flock */
  char dir[4200];
  if ((size_t)snprintf(dir, sizeof dir, "%s/metadata", t->root) >= sizeof dir)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: path too long", t->root);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return hs_error_set(err, HS_ERR_IO, "%s: cannot open the folder to lock it: %s", dir,
                        strerror(errno));
  while (flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0) {
    int e = errno;
    if (e == EINTR) continue;
    close(fd);
    /* A file system without flock: publish unlocked (the writer's re-check
     * and the sweep's age floor still hold; only the check-to-link window
     * is unguarded). */
    if (e == ENOLCK || e == EOPNOTSUPP || e == EINVAL) return HS_OK;
    return hs_error_set(err, HS_ERR_IO, "%s: cannot lock the folder: %s", dir, strerror(e));
  }
  *fd_out = fd;
  return HS_OK;
}

void hs_table_publish_unlock(int fd) {
  if (fd >= 0) close(fd); /* closing the only descriptor releases the flock */
}

hs_status hs_table_publish_check(const char *what, const char *const *paths, size_t n,
                                 hs_error *err) {
  for (size_t i = 0; i < n; i++) {
    if (paths[i] == NULL || paths[i][0] == '\0') continue;
    /* Objects: a sweep of a table on object storage takes no lock and
     * relies on the age floor (see above), so a check here would not
     * close the window; a HEAD each would be the commit's cost. */
    if (hs_store_is_remote(paths[i])) continue;
    struct stat sb;
    if (stat(paths[i], &sb) == 0 && S_ISREG(sb.st_mode)) continue;
    if (errno == ENOENT || errno == 0)
      return hs_error_set(err, HS_ERR_IO,
                          "%s: %s, written by this commit, was removed before the commit "
                          "published (by remove_orphan_files with force, or a cut-off younger "
                          "than the commit?); nothing was committed",
                          what, paths[i]);
    return hs_error_set(err, HS_ERR_IO,
                        "%s: %s, written by this commit, cannot be checked before publishing: "
                        "%s; nothing was committed",
                        what, paths[i], strerror(errno));
  }
  return HS_OK;
}

typedef struct candidates {
  hs_table_orphan_file *v;
  size_t n, cap;
} candidates;

static void candidates_free(candidates *c) {
  for (size_t i = 0; i < c->n; i++) hs_free((char *)c->v[i].path);
  hs_free(c->v);
}

/* The regular files below folder `dir`, recursively (hs_store_list: no
 * symbolic link is followed or listed), into `c`. Files more than
 * ORPHAN_DEPTH_MAX folders below `dir` are not ours. A missing `dir` (no
 * index/ yet) lists nothing. */
static hs_status list_dir(const char *dir, candidates *c, hs_error *err) {
  hs_store_entry *e = NULL;
  size_t n = 0;
  hs_status st = hs_store_list(dir, true, &e, &n, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    int depth = 0;
    for (const char *p = e[i].name; *p; p++) depth += *p == '/';
    if (e[i].is_dir || depth > ORPHAN_DEPTH_MAX) continue;
    char *p = hs_store_join(dir, e[i].name);
    if (p == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "remove orphan files: out of memory");
      break;
    }
    if (c->n == c->cap) {
      size_t nc = c->cap ? c->cap * 2 : 64;
      hs_table_orphan_file *nv = hs_realloc(c->v, nc * sizeof *nv);
      if (nv == NULL) {
        hs_free(p);
        st = hs_error_set(err, HS_ERR_NOMEM, "remove orphan files: out of memory");
        break;
      }
      c->v = nv;
      c->cap = nc;
    }
    c->v[c->n++] = (hs_table_orphan_file){
        .path = p, .size = (int64_t)e[i].info.size, .mtime_ms = e[i].info.mtime_ms};
  }
  hs_store_entries_free(e, n);
  return st;
}

/* version-hint.text, metadata versions newer than the one loaded, and
 * the index streams (stream.c) of the loaded version and newer ones (an
 * older version's is a cache nobody reads: removable). */
static bool always_kept(const hs_table *t, const char *path) {
  size_t rl = strlen(t->root);
  if (strncmp(path, t->root, rl) != 0 || strncmp(path + rl, "/metadata/", 10) != 0) return false;
  const char *name = path + rl + 10;
  if (strcmp(name, "version-hint.text") == 0) return true;
  if (hs_table_stream_name(name)) { /* an index stream: the loaded version's and newer ones' */
    char base[256];
    size_t n = strlen(name) - strlen(".hsis");
    if (n >= sizeof base) return false;
    memcpy(base, name, n);
    base[n] = '\0';
    return hs_table_version_of_name(base) >= t->version;
  }
  return hs_table_version_of_name(name) > t->version; /* "vN[.gz].metadata.json" exactly */
}

hs_status hs_table_remove_orphan_files(hs_table *table, int64_t older_than_ms, int flags,
                                       hs_table_orphan_file **files, size_t *n_files,
                                       hs_error *err) {
  *files = NULL;
  *n_files = 0;
  if (table->is_static || table->foreign_names || table->catalog != NULL)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: remove_orphan_files needs a table this library commits to (this "
                        "metadata is %s); ask the catalog that owns it",
                        table->metadata_path,
                        table->is_static ? "opened as one static file"
                        : table->catalog ? "in a REST catalog: other engines commit to it "
                                           "without our publish lock"
                                         : "named by a catalog");
  bool dry_run = (flags & HS_ORPHAN_DRY_RUN) != 0;
  if ((flags & HS_ORPHAN_FORCE) == 0) { /* the floor: see HS_ORPHAN_MIN_AGE_MS */
    int64_t floor = hs_table_wall_ms() - HS_ORPHAN_MIN_AGE_MS;
    if (older_than_ms > floor) older_than_ms = floor;
  }
  candidates c = {0};
  static const char *const k_dirs[] = {"data", "index", "metadata"};
  hs_status st = HS_OK;
  for (size_t i = 0; st == HS_OK && i < sizeof k_dirs / sizeof *k_dirs; i++) {
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", table->root, k_dirs[i]);
    st = list_dir(dir, &c, err);
  }
  /* After listing (see above): the walk, unlocked, then under the lock
   * whatever versions were published meanwhile (usually none; only their
   * new manifest lists and manifests are read). While the lock is held no
   * version can be published, so the set covers the latest until the last
   * unlink. A dry run removes nothing and takes no lock. */
  hs_table_file_set live = {0};
  int lock_fd = -1;
  if (st == HS_OK) st = reach_into(table, &live, err);
  if (st == HS_OK && !dry_run) st = hs_table_publish_lock(table, true, &lock_fd, err);
  if (st == HS_OK && hs_table_newer_version_exists(table)) st = reach_into(table, &live, err);
  bool *orphan = st == HS_OK && c.n > 0 ? hs_malloc(c.n * sizeof *orphan) : NULL;
  if (st == HS_OK && c.n > 0 && orphan == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "remove orphan files: out of memory");
  size_t n = 0, bytes = 0;
  for (size_t i = 0; st == HS_OK && i < c.n; i++) {
    const hs_table_orphan_file *f = &c.v[i];
    /* a remote object whose age the listing did not give is kept */
    bool aged = f->mtime_ms < older_than_ms && (f->mtime_ms > 0 || !table->remote);
    orphan[i] = aged && !always_kept(table, f->path) && !hs_table_file_set_has(&live, f->path);
    if (orphan[i]) {
      n++;
      bytes += strlen(f->path) + 1;
    }
  }
  hs_table_file_set_free(&live);
  hs_table_orphan_file *out = NULL;
  if (st == HS_OK && n > 0) {
    out = hs_malloc(n * sizeof *out + bytes);
    if (out == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "remove orphan files: out of memory");
  }
  if (st == HS_OK && n > 0) { /* one allocation: the records, then their paths */
    char *strings = (char *)(out + n);
    for (size_t i = 0, j = 0; i < c.n; i++) {
      if (!orphan[i]) continue;
      size_t len = strlen(c.v[i].path) + 1;
      memcpy(strings, c.v[i].path, len);
      out[j] = c.v[i];
      out[j++].path = strings;
      strings += len;
    }
  }
  hs_free(orphan);
  candidates_free(&c);
  for (size_t i = 0; st == HS_OK && !dry_run && i < n; i++) {
    hs_error e = {0};
    if (hs_store_delete(out[i].path, &e) != HS_OK)
      st = hs_error_set(err, e.status, "cannot remove orphan file: %s (%zu of %zu removed)",
                        e.message, i, n);
  }
  hs_table_publish_unlock(lock_fd);
  /* kept open data files (parquet.h) would hold the removed files' space */
  if (!dry_run && n > 0) hs_parquet_file_cache_clear();
  if (st != HS_OK) {
    hs_free(out);
    return st;
  }
  *files = out;
  *n_files = n;
  return HS_OK;
}
