/*
 * plan.c — scan planning: the live data files of a snapshot with their
 * manifest metadata (partition tuple, spec id, column metrics), for readers
 * that prune files before opening them (src/query/scan.c).
 *
 * Same walk as hs_table_scan's: manifest list, then each data manifest
 * (entries inherit snapshot ids and sequence numbers from the list entry),
 * keeping ADDED and EXISTING DATA entries whose path resolves inside the
 * table folder (README invariant I6). Everything the plan holds lives in its
 * own arena, so it stays valid after the table handle refreshes or is freed.
 *
 * Plans are cached per process by manifest list (see "plan cache" below),
 * and the manifests they are made of by path and stamp
 * (plan_manifests.c): a new snapshot's plan parses only its new manifests.
 *
 * Also here: the table's Parquet write properties (Iceberg's names: row
 * group limit, page size, compression codec and level) for appends.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/fs.h"
#include "../io/store.h"
#include "plan_deletes.h"
#include "plan_manifests.h"
#include "table.h"

static hs_status plan_push(hs_table_plan *p, size_t *cap, const hs_table_plan_file *f,
                           hs_error *err) {
  if (p->n_files == *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    hs_table_plan_file *nv = hs_realloc(p->files, nc * sizeof *nv);
    if (nv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
    p->files = nv;
    *cap = nc;
  }
  p->files[p->n_files++] = *f;
  return HS_OK;
}

/* The manifest is the one its list entry describes: its length and (v2
 * and later, where the counts are required) its added and existing file
 * and row counts. A manifest replaced by another one, or damaged into
 * another valid one, would otherwise plan the wrong files silently. */
static hs_status manifest_counts_check(const hs_table *t, const hs_iceberg_manifest_file *mf,
                                       size_t len, const hs_iceberg_manifest *man, hs_error *err) {
  if (mf->manifest_length > 0 && (int64_t)len != mf->manifest_length)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: %zu bytes, but the manifest list records %lld (replaced or damaged?)",
                        mf->manifest_path, len, (long long)mf->manifest_length);
  if (t->meta.format_version < 2) return HS_OK;
  int64_t files[2] = {0, 0}, rows[2] = {0, 0}; /* added, existing */
  for (size_t k = 0; k < man->n_entries; k++) {
    const hs_iceberg_manifest_entry *e = &man->entries[k];
    int w = e->status == HS_ICE_ENTRY_ADDED ? 0 : e->status == HS_ICE_ENTRY_EXISTING ? 1 : -1;
    if (w < 0) continue;
    files[w]++;
    if (__builtin_add_overflow(rows[w], e->data_file.record_count, &rows[w])) rows[w] = -1;
  }
  if (files[0] != mf->added_files_count || files[1] != mf->existing_files_count ||
      rows[0] != mf->added_rows_count || rows[1] != mf->existing_rows_count)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: holds %lld added and %lld existing files (%lld and %lld rows), but "
                        "the manifest list records %d and %d (%lld and %lld rows): replaced or "
                        "damaged?",
                        mf->manifest_path, (long long)files[0], (long long)files[1],
                        (long long)rows[0], (long long)rows[1], mf->added_files_count,
                        mf->existing_files_count, (long long)mf->added_rows_count,
                        (long long)mf->existing_rows_count);
  return HS_OK;
}

/* A snapshot's summary totals, where it records them, against its plan:
 * a manifest list replaced by another snapshot's plans other files. */
static hs_status summary_check(const hs_table *t, const hs_iceberg_snapshot *snap,
                               const hs_table_plan *p, hs_error *err) {
  int64_t want_files = -1, want_rows = -1;
  for (size_t i = 0; i < snap->n_summary; i++) {
    const char *k = snap->summary[i].key, *v = snap->summary[i].value;
    if (k == NULL || v == NULL) continue;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (end == v || *end != '\0' || n < 0) continue;
    if (strcmp(k, "total-data-files") == 0) want_files = n;
    if (strcmp(k, "total-records") == 0) want_rows = n;
  }
  int64_t rows = 0;
  for (size_t i = 0; i < p->n_files; i++) rows += p->files[i].data_file->record_count;
  if ((want_files >= 0 && want_files != (int64_t)p->n_files) ||
      (want_rows >= 0 && want_rows != rows))
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: snapshot %lld records %lld data files and %lld rows, but its manifest "
                        "list %s plans %zu files and %lld rows (replaced or damaged?)",
                        t->metadata_path, (long long)snap->snapshot_id, (long long)want_files,
                        (long long)want_rows, snap->manifest_list, p->n_files, (long long)rows);
  return HS_OK;
}

/* Take manifest `mf` parsed (plan_manifests.c), held by the plan. */
static hs_status take_manifest(const hs_table *t, const hs_iceberg_manifest_file *mf, hs_buf *buf,
                               hs_table_plan *p, hs_plan_manifest **out, hs_error *err) {
  hs_plan_manifest **nh = hs_realloc(p->held, (p->n_held + 1) * sizeof *nh);
  if (nh == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
  p->held = nh;
  hs_status st = hs_plan_manifest_get(t, mf, buf, out, err);
  if (st == HS_OK) p->held[p->n_held++] = *out;
  return st;
}

/* Entries of one data manifest into the plan. */
static hs_status plan_manifest(const hs_table *t, const hs_iceberg_manifest_file *mf, hs_buf *buf,
                               hs_table_plan *p, size_t *cap, hs_error *err) {
  hs_plan_manifest *m = NULL;
  hs_status st = take_manifest(t, mf, buf, p, &m, err);
  if (st != HS_OK) return st;
  const hs_iceberg_manifest *man = &m->man;
  p->n_manifests++;
  /* Paths first: an entry escaping the table folder is named as such even
   * when the manifest's length also disagrees with its list entry. */
  for (size_t k = 0; k < man->n_entries; k++) {
    const hs_iceberg_manifest_entry *e = &man->entries[k];
    if (e->status == HS_ICE_ENTRY_DELETED || e->data_file.content != HS_ICE_CONTENT_DATA) continue;
    hs_table_plan_file f = {.data_file = &e->data_file,
                            .spec_id = mf->partition_spec_id,
                            .data_seq = e->has_sequence_number ? e->sequence_number : 0};
    if ((st = hs_plan_manifest_entry_path(t, m, k, &p->arena, &f.path, err)) != HS_OK) return st;
    if ((st = plan_push(p, cap, &f, err)) != HS_OK) return st;
  }
  return manifest_counts_check(t, mf, m->len, man, err);
}

/* Live delete entries of one delete manifest into *d (grown). */
static hs_status plan_delete_manifest(const hs_table *t, const hs_iceberg_manifest_file *mf,
                                      hs_buf *buf, hs_table_plan *p, hs_table_plan_delete **d,
                                      size_t *n, size_t *cap, hs_error *err) {
  hs_plan_manifest *m = NULL;
  hs_status st = take_manifest(t, mf, buf, p, &m, err);
  if (st != HS_OK) return st;
  const hs_iceberg_manifest *man = &m->man;
  p->n_delete_manifests++;
  if ((st = manifest_counts_check(t, mf, m->len, man, err)) != HS_OK) return st;
  for (size_t k = 0; k < man->n_entries; k++) {
    const hs_iceberg_manifest_entry *e = &man->entries[k];
    if (e->status == HS_ICE_ENTRY_DELETED) continue;
    if (e->data_file.content != HS_ICE_CONTENT_POSITION_DELETES &&
        e->data_file.content != HS_ICE_CONTENT_EQUALITY_DELETES)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "%s: manifest entry %zu: a data file (%s) in a delete manifest",
                          mf->manifest_path, k, e->data_file.file_path);
    hs_table_plan_delete x = {
        .e = e, .spec_id = mf->partition_spec_id, .manifest = m->manifest_path};
    if ((st = hs_plan_manifest_entry_path(t, m, k, &p->arena, &x.path, err)) != HS_OK) return st;
    if (*n == *cap) {
      size_t nc = *cap ? *cap * 2 : 16;
      hs_table_plan_delete *nv = hs_realloc(*d, nc * sizeof *nv);
      if (nv == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
      *d = nv;
      *cap = nc;
    }
    (*d)[(*n)++] = x;
  }
  return HS_OK;
}

/* ------------------------------------------------------------ plan cache
 *
 * A snapshot's plan depends only on its manifest list and the manifests it
 * names, all written once under fresh names. Planning reads and parses
 * them (each manifest's Avro schema is JSON): ~1 ms of a 2.5 ms indexed
 * point query at 8 files. Plans of manifest lists are kept, keyed by
 * (resolved path and hs_fs_stamp; each manifest's stamp is checked
 * again on every hit), and lent: a lent plan copies the file array
 * and points into the cached arena, which lives until the last borrower
 * frees its plan. Entries not lent are evicted least recently used first. */
#define PC_MAX 8

/* A file a cached plan was read from, as it was then. */
typedef struct pc_dep {
  char *path;
  hs_fs_stamp stamp;
} pc_dep;

typedef struct hs_plan_shared {
  char *key;
  hs_fs_stamp stamp;
  pc_dep *deps; /* its manifests: checked on every hit */
  size_t n_deps;
  hs_table_plan plan; /* the master copy */
  int refs;           /* borrowers, + 1 while in the cache */
  uint64_t used_at;
} hs_plan_shared;

static pthread_mutex_t pc_mu = PTHREAD_MUTEX_INITIALIZER;
static hs_plan_shared *pc[PC_MAX];
static uint64_t pc_tick;

static void deps_free(pc_dep *d, size_t n) {
  for (size_t i = 0; d != NULL && i < n; i++) hs_free(d[i].path);
  hs_free(d);
}

/* The stamp of a local file or a store object (a HEAD; plans of anything
 * else are not cached). */
static bool file_stamp(const char *path, hs_fs_stamp *st) {
  return (path[0] == '/' || hs_store_is_remote(path)) && hs_store_stamp_of(path, st);
}

/* Record manifest `recorded` in *deps (grown); false: not a local file. */
static bool deps_add(const hs_table *t, const char *recorded, pc_dep **deps, size_t *n) {
  char *path = NULL;
  hs_error e;
  memset(&e, 0, sizeof e);
  if (hs_table_resolve_path(t, recorded, "manifest", &path, &e) != HS_OK) return false;
  pc_dep d = {.path = path};
  pc_dep *nd = hs_realloc(*deps, (*n + 1) * sizeof *nd);
  if (!file_stamp(path, &d.stamp) || nd == NULL) {
    if (nd != NULL) *deps = nd;
    hs_free(path);
    return false;
  }
  *deps = nd;
  (*deps)[(*n)++] = d;
  return true;
}

/* Record manifest m (already stamped when it was taken) in *deps. */
static bool deps_add_manifest(const hs_plan_manifest *m, pc_dep **deps, size_t *n) {
  if (!m->stamped) return false;
  char *path = hs_malloc(strlen(m->resolved) + 1);
  pc_dep *nd = path != NULL ? hs_realloc(*deps, (*n + 1) * sizeof *nd) : NULL;
  if (nd == NULL) {
    hs_free(path);
    return false;
  }
  strcpy(path, m->resolved);
  *deps = nd;
  (*deps)[(*n)++] = (pc_dep){.path = path, .stamp = m->stamp};
  return true;
}

static bool deps_unchanged(const hs_plan_shared *e) {
  for (size_t i = 0; i < e->n_deps; i++) {
    hs_fs_stamp now;
    if (!file_stamp(e->deps[i].path, &now) || !hs_fs_stamp_equal(&now, &e->deps[i].stamp))
      return false;
  }
  return true;
}

static void bitmaps_free(hs_table_plan *p) {
  for (size_t i = 0; i < p->n_bitmaps; i++) roaring_bitmap_free(p->bitmaps[i]);
  hs_free(p->bitmaps);
  p->bitmaps = NULL;
  p->n_bitmaps = 0;
}

static void held_free(hs_table_plan *p) {
  for (size_t i = 0; i < p->n_held; i++) hs_plan_manifest_unref(p->held[i]);
  hs_free(p->held);
  p->held = NULL;
  p->n_held = 0;
}

static void shared_free(hs_plan_shared *e) {
  deps_free(e->deps, e->n_deps);
  bitmaps_free(&e->plan);
  held_free(&e->plan);
  hs_free(e->plan.files);
  hs_arena_reset(&e->plan.arena);
  hs_free(e->key);
  hs_free(e);
}

static void shared_unref(hs_plan_shared *e) {
  pthread_mutex_lock(&pc_mu);
  bool last = --e->refs == 0;
  pthread_mutex_unlock(&pc_mu);
  if (last) shared_free(e);
}

/* Fill *out as a borrower of e (a reference already taken). */
static hs_status plan_lend(hs_plan_shared *e, hs_table_plan *out, hs_error *err) {
  out->snapshot_id = e->plan.snapshot_id;
  out->n_manifests = e->plan.n_manifests;
  out->n_delete_manifests = e->plan.n_delete_manifests;
  out->n_delete_files = e->plan.n_delete_files;
  out->n_deleted = e->plan.n_deleted;
  out->shared = e;
  if (e->plan.n_files == 0) return HS_OK;
  out->files = hs_malloc(e->plan.n_files * sizeof *out->files);
  if (out->files == NULL) return hs_error_set(err, HS_ERR_NOMEM, "scan plan: out of memory");
  memcpy(out->files, e->plan.files, e->plan.n_files * sizeof *out->files);
  out->n_files = e->plan.n_files;
  return HS_OK;
}

/* The cache key of a manifest list: its resolved local path and stamp. */
static char *pc_key(const hs_table *t, const char *list, hs_fs_stamp *stamp) {
  char *path = NULL;
  hs_error e;
  memset(&e, 0, sizeof e);
  if (hs_table_resolve_path(t, list, "manifest list", &path, &e) != HS_OK) return NULL;
  if (!file_stamp(path, stamp)) {
    hs_free(path);
    return NULL;
  }
  return path;
}

static hs_plan_shared *pc_take(const char *key, const hs_fs_stamp *stamp) {
  hs_plan_shared *hit = NULL;
  pthread_mutex_lock(&pc_mu);
  for (int i = 0; i < PC_MAX && hit == NULL; i++) {
    hs_plan_shared *e = pc[i];
    if (e != NULL && hs_fs_stamp_equal(&e->stamp, stamp) && strcmp(e->key, key) == 0) {
      e->refs++;
      e->used_at = ++pc_tick;
      hit = e;
    }
  }
  pthread_mutex_unlock(&pc_mu);
  if (hit != NULL && !deps_unchanged(hit)) { /* a manifest was rewritten: plan afresh */
    shared_unref(hit);
    hit = NULL;
  }
  return hit;
}

/* Move a freshly made plan into the cache (taking `key`) and make *p a
 * borrower of it; when no slot is free (or memory is short) *p simply
 * stays the caller's own. */
static void pc_put(char *key, const hs_fs_stamp *stamp, pc_dep *deps, size_t n_deps,
                   hs_table_plan *p) {
  hs_plan_shared *e = hs_calloc(1, sizeof *e);
  hs_table_plan_file *copy = p->n_files ? hs_malloc(p->n_files * sizeof *copy) : NULL;
  if (e == NULL || (p->n_files > 0 && copy == NULL)) {
    hs_free(e);
    hs_free(copy);
    hs_free(key);
    deps_free(deps, n_deps);
    return;
  }
  e->deps = deps;
  e->n_deps = n_deps;
  if (copy != NULL) memcpy(copy, p->files, p->n_files * sizeof *copy);
  e->key = key;
  e->stamp = *stamp;
  e->plan = *p;
  e->refs = 2; /* the cache and the caller */
  hs_plan_shared *gone = NULL;
  bool kept = false;
  pthread_mutex_lock(&pc_mu);
  int slot = -1;
  for (int i = 0; i < PC_MAX; i++) {
    if (pc[i] == NULL) {
      slot = i;
      break;
    }
    if (pc[i]->refs == 1 && (slot < 0 || pc[i]->used_at < pc[slot]->used_at)) slot = i;
  }
  if (slot >= 0) {
    gone = pc[slot];
    e->used_at = ++pc_tick;
    pc[slot] = e;
    kept = true;
  }
  pthread_mutex_unlock(&pc_mu);
  if (gone != NULL) shared_unref(gone);
  if (!kept) {
    hs_free(copy);
    hs_free(key);
    deps_free(deps, n_deps);
    hs_free(e);
    return;
  }
  hs_arena_init(&p->arena); /* now the cache's, with the bitmaps and manifests */
  p->bitmaps = NULL;
  p->n_bitmaps = 0;
  p->held = NULL;
  p->n_held = 0;
  p->files = copy;
  p->shared = e;
}

/* Manifests a prefetch fetches whole (the object cache serves whole reads
 * up to this size; larger ones are read directly). */
#define PLAN_PREFETCH_MANIFEST_MAX ((int64_t)1 << 20)

/* On an object store, every manifest of the list in one parallel wave
 * (hs_store_prefetch) before they are read one by one: a cold plan costs
 * the manifest list and one round trip, not one per manifest. */
static void prefetch_manifests(const hs_table *t, const hs_iceberg_manifest_list *list) {
  if (!t->remote || list->n_files < 2) return;
  hs_store_prefetch_item *items = hs_calloc(list->n_files, sizeof *items);
  char **paths = hs_calloc(list->n_files, sizeof *paths);
  size_t n = 0;
  for (size_t i = 0; items != NULL && paths != NULL && i < list->n_files; i++) {
    const hs_iceberg_manifest_file *mf = &list->files[i];
    int64_t len = mf->manifest_length;
    if (len > PLAN_PREFETCH_MANIFEST_MAX ||
        hs_table_resolve_path(t, mf->manifest_path, "manifest", &paths[n], NULL) != HS_OK)
      continue;
    /* The recorded length, else the tail a source open would read. */
    items[n] = (hs_store_prefetch_item){paths[n], 0, len > 0 ? (size_t)len : (size_t)128 << 10,
                                        len <= 0, false};
    n++;
  }
  if (items != NULL && paths != NULL) (void)hs_store_prefetch(items, n);
  for (size_t i = 0; paths != NULL && i < n; i++) hs_free(paths[i]);
  hs_free(paths);
  hs_free(items);
}

hs_status hs_table_plan_files(const hs_table *t, int64_t snapshot_id, hs_table_plan *out,
                              hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_arena_init(&out->arena);
  out->snapshot_id = -1;
  const hs_iceberg_snapshot *snap = NULL;
  if (snapshot_id == -1) {
    snap = hs_table_current(t);
  } else if ((snap = hs_iceberg_metadata_snapshot(&t->meta, snapshot_id)) == NULL) {
    return hs_error_set(err, HS_ERR_NOT_FOUND, "%s: no snapshot %lld", t->metadata_path,
                        (long long)snapshot_id);
  }
  if (snap == NULL) return HS_OK; /* no snapshot yet: no files */
  out->snapshot_id = snap->snapshot_id;
  if (snap->manifest_list == NULL) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: snapshot %lld has no manifest list (v1)",
                        t->metadata_path, (long long)snap->snapshot_id);
  }
  hs_fs_stamp kstamp;
  char *key = pc_key(t, snap->manifest_list, &kstamp);
  hs_plan_shared *hit = key != NULL ? pc_take(key, &kstamp) : NULL;
  if (hit != NULL) {
    hs_free(key);
    hs_status st = plan_lend(hit, out, err);
    if (st == HS_OK) st = summary_check(t, snap, out, err);
    if (st != HS_OK) hs_table_plan_free(out);
    return st;
  }
  pc_dep *deps = NULL;
  size_t n_deps = 0;
  hs_buf buf;
  hs_buf_init(&buf);
  size_t cap = 0;
  hs_iceberg_manifest_list list;
  memset(&list, 0, sizeof list);
  /* A cold plan of a table on object storage: the version's index stream
   * first (the list, manifests and footers that follow in one GET). */
  if (t->remote && snapshot_id == -1) hs_table_stream_load(t);
  hs_status st = hs_table_read_avro(t, snap->manifest_list, "manifest list", &buf, err);
  if (st == HS_OK) {
    st = hs_iceberg_manifest_list_read(buf.data, buf.len, &out->arena, &list, err);
    if (st != HS_OK) hs_error_prefix(err, "%s: ", snap->manifest_list);
  }
  if (st == HS_OK) prefetch_manifests(t, &list);
  hs_table_plan_delete *dels = NULL;
  size_t n_dels = 0, dels_cap = 0;
  for (size_t i = 0; st == HS_OK && i < list.n_files; i++) {
    const hs_iceberg_manifest_file *mf = &list.files[i];
    if (mf->content == HS_ICE_MANIFEST_DELETES)
      st = plan_delete_manifest(t, mf, &buf, out, &dels, &n_dels, &dels_cap, err);
    else
      st = plan_manifest(t, mf, &buf, out, &cap, err);
    if (st == HS_OK && key != NULL &&
        !deps_add_manifest(out->held[out->n_held - 1], &deps, &n_deps)) {
      hs_free(key); /* not cacheable */
      key = NULL;
    }
  }
  hs_buf_free(&buf);
  if (st == HS_OK) st = summary_check(t, snap, out, err);
  /* Delete files are written once too; a cached plan checks their stamps
   * as it does its manifests'. */
  for (size_t i = 0; st == HS_OK && key != NULL && i < n_dels; i++) {
    if (!deps_add(t, dels[i].e->data_file.file_path, &deps, &n_deps)) {
      hs_free(key);
      key = NULL;
    }
  }
  if (st == HS_OK) st = hs_table_plan_deletes(t, snap, out, dels, n_dels, err);
  hs_free(dels);
  if (st != HS_OK || key == NULL) {
    hs_free(key);
    deps_free(deps, n_deps);
    if (st != HS_OK) hs_table_plan_free(out);
    return st;
  }
  pc_put(key, &kstamp, deps, n_deps, out);
  return st;
}

void hs_table_plan_free(hs_table_plan *p) {
  if (p == NULL) return;
  bitmaps_free(p); /* a borrower holds none */
  held_free(p);
  hs_free(p->files);
  hs_arena_reset(&p->arena);
  p->files = NULL;
  p->n_files = 0;
  if (p->shared != NULL) shared_unref(p->shared);
  p->shared = NULL;
}

/* Iceberg's codec names (write.parquet.compression-codec), matched without
 * regard to case. "lz4" is LZ4_RAW as Iceberg's Java writer (parquet-mr's
 * Lz4RawCodec) and pyarrow write it; the legacy Hadoop-framed LZ4 is not
 * written by anyone current. */
static const struct {
  const char *name;
  hs_codec codec;
} k_codecs[] = {{"uncompressed", HS_CODEC_UNCOMPRESSED},
                {"none", HS_CODEC_UNCOMPRESSED},
                {"snappy", HS_CODEC_SNAPPY},
                {"gzip", HS_CODEC_GZIP},
                {"zstd", HS_CODEC_ZSTD},
                {"lz4", HS_CODEC_LZ4_RAW},
                {"lz4_raw", HS_CODEC_LZ4_RAW},
                {"brotli", HS_CODEC_BROTLI}};

static bool name_eq(const char *a, const char *b) {
  for (; *a && *b; a++, b++) {
    char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
    if (x != *b) return false;
  }
  return *a == *b;
}

/* A positive decimal integer property, or 0 when unset or malformed. */
static long long int_property(const hs_table *t, const char *key) {
  const char *v = hs_iceberg_metadata_property(&t->meta, key);
  char *end = NULL;
  long long n = v != NULL ? strtoll(v, &end, 10) : 0;
  return v != NULL && end != v && *end == 0 && n > 0 ? n : 0;
}

void hs_table_parquet_options(const hs_table *t, hs_parquet_write_options *po) {
  /* Page layout (README.md "Data page layout"): data page v2, integer
   * columns without a dictionary DELTA_BINARY_PACKED, and pages the codec
   * shrinks by less than 1/8 stored uncompressed, where indexed reads take
   * single rows in place. hyperstream.parquet.page-version = 1 writes v1
   * pages, PLAIN fallback and every page compressed instead. */
  const char *pv = hs_iceberg_metadata_property(&t->meta, "hyperstream.parquet.page-version");
  bool v1 = pv != NULL && strcmp(pv, "1") == 0;
  /* Any other value than 1 or 2 becomes page version 0, which the append
   * refuses naming the property (commit.c). */
  po->data_page_version = v1 ? 1 : pv == NULL || strcmp(pv, "2") == 0 ? 2 : 0;
  po->delta_fallback = !v1;
  po->compress_min_saving_pct = v1 ? 0 : 12;
  long long n = int_property(t, "write.parquet.row-group-limit");
  if (n > 0) po->row_group_rows_max = (int64_t)n;
  /* Iceberg's page size property (uncompressed bytes per data page). */
  n = int_property(t, "write.parquet.page-size-bytes");
  if (n > 0) po->page_bytes_max = (int64_t)n;
  /* List leaves (vector columns) get 64 KiB pages unless the property
   * sets every column's: a search's fetch finds a row's levels by walking
   * its page's repetition runs (parquet/ "Row gather"), two runs a row. */
  po->list_page_bytes_max = n > 0 ? 0 : (int64_t)64 << 10;
  /* Codec and level. An unknown codec name becomes (hs_codec)-1, which the
   * append refuses with a message naming the property (commit.c) rather
   * than silently writing another codec. */
  const char *v = hs_iceberg_metadata_property(&t->meta, "write.parquet.compression-codec");
  if (v != NULL) {
    po->compression = (hs_codec)-1;
    for (size_t i = 0; i < sizeof k_codecs / sizeof k_codecs[0]; i++)
      if (name_eq(v, k_codecs[i].name)) po->compression = k_codecs[i].codec;
  }
  /* The level means what the codec's library says; unset, 0 or malformed is
   * the codec's default, and values above the codec's maximum (zstd 22,
   * gzip 9, brotli 11) are clamped to it. Snappy and lz4 have no level. */
  n = int_property(t, "write.parquet.compression-level");
  long long top = po->compression == HS_CODEC_GZIP     ? 9
                  : po->compression == HS_CODEC_BROTLI ? 11
                                                       : 22;
  if (n > top) n = top;
  if (n > 0) po->compression_level = (int)n;
}
