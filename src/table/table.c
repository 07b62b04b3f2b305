/*
 * table.c — opening and creating tables: finding the latest committed
 * metadata version, loading it, resolving the paths it records (refusing
 * any that escape the table folder), the snapshot listing, and the crash
 * test hook. The commit protocol is in commit.c, reading in scan.c.
 *
 * Finding the latest version: version-hint.text is only a hint (it is
 * written after a publish and may lag or be missing after a crash), so we
 * start at the hinted N (1 when the hint is absent or unreadable) and probe
 * vN+1, vN+2, ... until a name is missing. Versions are published in order
 * by exclusive create, so the first gap ends the chain. A hint that points
 * past the last published version (never written by us) falls back to a
 * directory listing.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../io/fs.h"
#include "../io/gzip.h"
#include "../io/store.h"
#include "table.h"
#include "timetravel.h"

void hs_table_options_init(hs_table_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->format_version = 2;
}

/* ------------------------------------------------- files of any store */

hs_status hs_table_file_read(const char *path, size_t max_bytes, hs_buf *out, hs_error *err) {
  if (hs_store_is_remote(path)) return hs_store_get(path, max_bytes, out, NULL, err);
  return hs_fs_read_file(path, max_bytes, out, err);
}

hs_status hs_table_file_write(const char *dir, const char *path, const void *data, size_t len,
                              hs_error *err) {
  if (hs_store_is_remote(path)) return hs_store_put(path, data, len, err);
  hs_status st = dir != NULL ? hs_fs_mkdirs(dir, err) : HS_OK;
  return st == HS_OK ? hs_fs_write_file(path, data, len, err) : st;
}

hs_status hs_table_file_exists(const char *path, bool *exists, hs_error *err) {
  if (hs_store_is_remote(path)) return hs_store_exists(path, exists, err);
  return hs_fs_probe(path, exists, err);
}

hs_status hs_table_file_remove(const char *path, hs_error *err) {
  if (hs_store_is_remote(path)) return hs_store_delete(path, err);
  return hs_fs_remove(path, err);
}

hs_status hs_table_file_list(const char *dir, char ***names_out, size_t *n_out, hs_error *err) {
  if (!hs_store_is_remote(dir)) return hs_fs_list(dir, names_out, n_out, err);
  *names_out = NULL;
  *n_out = 0;
  hs_store_entry *es = NULL;
  size_t n = 0, k = 0;
  hs_status st = hs_store_list(dir, false, &es, &n, err);
  /* A missing folder lists empty: "not found" here is the bucket, which a
   * "no table yet" must not hide. */
  if (st == HS_ERR_NOT_FOUND && err != NULL) err->status = HS_ERR_IO;
  if (st == HS_ERR_NOT_FOUND) st = HS_ERR_IO;
  if (st != HS_OK) return st;
  char **names = hs_calloc(n ? n : 1, sizeof *names);
  if (names == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", dir);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    if (es[i].is_dir) continue;
    if ((names[k++] = hs_strdup(es[i].name)) == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", dir);
  }
  hs_store_entries_free(es, n);
  if (st != HS_OK) {
    hs_fs_names_free(names, k);
    return st;
  }
  *names_out = names;
  *n_out = k;
  return HS_OK;
}

/* The names a version's metadata file may have: ours and Iceberg Java's
 * plain one, Java's gzip one (write.metadata.compression-codec=gzip) and
 * the older gzip name Java still reads. */
static const char *const VERSION_SUFFIX[] = {".metadata.json", ".gz.metadata.json",
                                             ".metadata.json.gz"};
enum { N_VERSION_SUFFIX = 3 };

static bool version_path_named(const char *root, int64_t version, int which, char *out,
                               size_t cap) {
  int n =
      snprintf(out, cap, "%s/metadata/v%lld%s", root, (long long)version, VERSION_SUFFIX[which]);
  return n > 0 && (size_t)n < cap;
}

bool hs_table_version_path(const char *root, int64_t version, char *out, size_t cap) {
  return version_path_named(root, version, 0, out, cap);
}

int64_t hs_table_version_of_name(const char *name) {
  if (name[0] != 'v' || name[1] < '1' || name[1] > '9') return -1;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(name + 1, &end, 10);
  if (errno != 0) return -1;
  for (int i = 0; i < N_VERSION_SUFFIX; i++)
    if (strcmp(end, VERSION_SUFFIX[i]) == 0) return (int64_t)v;
  return -1;
}

/* What an open's version probe reads in the wave of its LISTs, before it
 * knows the answer (an object store): version N's metadata file under its
 * plain name, and that file's index stream (stream.c). Used when the probe
 * finds N is the latest under that name; dropped otherwise. */
typedef struct hs_spec_read {
  char meta_path[4200], stream_path[4300];
  hs_buf meta, stream;
  hs_object_info meta_info;
  hs_status stream_st;
  bool have_meta, have_stream;
} hs_spec_read;

static void spec_init(hs_spec_read *sp) {
  memset(sp, 0, sizeof *sp);
  hs_buf_init(&sp->meta);
  hs_buf_init(&sp->stream);
}

static void spec_free(hs_spec_read *sp) {
  hs_buf_free(&sp->meta);
  hs_buf_free(&sp->stream);
}

/* Which of the versions' names exist (here[k * N_VERSION_SUFFIX + i] for
 * versions[k] and VERSION_SUFFIX[i]), on an object store: one LIST of the
 * prefix "v<N>" per version instead of a HEAD per name, all of them in one
 * parallel wave. */
static hs_status versions_listed(const hs_table *t, const int64_t *versions, size_t n, bool *here,
                                 hs_store_get_item *gets, size_t n_gets,
                                 const hs_store_prefetch_item *pf, size_t n_pf, uint64_t pf_max,
                                 hs_error *err) {
  char prefix[2][4200];
  const char *prefixes[2];
  hs_store_entry *es[2] = {NULL, NULL};
  size_t ne[2] = {0, 0};
  if (n > 2) return hs_error_set(err, HS_ERR_INTERNAL, "%s: too many versions listed", t->root);
  for (size_t k = 0; k < n; k++) {
    int w =
        snprintf(prefix[k], sizeof prefix[k], "%s/metadata/v%lld", t->root, (long long)versions[k]);
    if (w <= 0 || (size_t)w >= sizeof prefix[k]) {
      return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: path too long", t->root);
    }
    prefixes[k] = prefix[k];
  }
  hs_status st =
      hs_store_list_prefixes_wave(prefixes, n, es, ne, gets, n_gets, pf, n_pf, pf_max, err);
  /* No such keys list empty: "not found" is the bucket (as in
   * hs_table_file_list), which a "no table yet" must not hide. */
  if (st == HS_ERR_NOT_FOUND && err != NULL) err->status = HS_ERR_IO;
  if (st == HS_ERR_NOT_FOUND) st = HS_ERR_IO;
  if (st != HS_OK) return st;
  char name[64];
  for (size_t k = 0; k < n; k++) {
    for (int i = 0; i < N_VERSION_SUFFIX; i++) {
      snprintf(name, sizeof name, "v%lld%s", (long long)versions[k], VERSION_SUFFIX[i]);
      bool *h = &here[k * N_VERSION_SUFFIX + (size_t)i];
      *h = false;
      for (size_t x = 0; x < ne[k] && !*h; x++)
        *h = !es[k][x].is_dir && strcmp(es[k][x].name, name) == 0;
    }
    hs_store_entries_free(es[k], ne[k]);
  }
  return HS_OK;
}

/* hs_table_version_find's choice among the names: listed[i] for an object
 * store (versions_listed), a probe per name for a local folder. */
static hs_status version_pick(const hs_table *t, int64_t version, const bool *listed, char *out,
                              size_t cap, bool *exists, hs_error *err) {
  *exists = false;
  char path[4200];
  for (int i = 0; i < N_VERSION_SUFFIX; i++) {
    if (!version_path_named(t->root, version, i, path, sizeof path) || strlen(path) >= cap) {
      return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: path too long", t->root);
    }
    bool here = listed[i];
    if (!t->remote) {
      hs_status st = hs_table_file_exists(path, &here, err);
      if (st != HS_OK) return st;
    }
    if (!here) continue;
    if (*exists) {
      /* Two files claim the same version: which one is the table? */
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "%s and %s: two metadata files for version %lld (a plain and a "
                          "gzip one); remove the one that is not the table's",
                          out, path, (long long)version);
    }
    *exists = true;
    memcpy(out, path, strlen(path) + 1);
  }
  if (!*exists && cap > 0) {
    version_path_named(t->root, version, 0, out, cap); /* for messages */
  }
  return HS_OK;
}

/* hs_table_version_find, and on an object store `get` (NULL: none) and
 * the prefetch of pf[0, n_pf) in the same wave as its LIST. */
static hs_status version_find_get(const hs_table *t, int64_t version, char *out, size_t cap,
                                  bool *exists, hs_store_get_item *get,
                                  const hs_store_prefetch_item *pf, size_t n_pf, uint64_t pf_max,
                                  hs_error *err) {
  *exists = false;
  bool listed[N_VERSION_SUFFIX] = {false};
  if (t->remote) {
    hs_status st = versions_listed(t, &version, 1, listed, get, get != NULL, pf, n_pf, pf_max, err);
    if (st != HS_OK) return st;
  }
  return version_pick(t, version, listed, out, cap, exists, err);
}

hs_status hs_table_version_find(const hs_table *t, int64_t version, char *out, size_t cap,
                                bool *exists, hs_error *err) {
  *exists = false;
  bool listed[N_VERSION_SUFFIX] = {false};
  if (t->remote) {
    hs_status st = versions_listed(t, &version, 1, listed, NULL, 0, NULL, 0, 0, err);
    if (st != HS_OK) return st;
  }
  return version_pick(t, version, listed, out, cap, exists, err);
}

bool hs_table_metadata_gzip(const hs_iceberg_metadata *m) {
  const char *c = hs_iceberg_metadata_property(m, "write.metadata.compression-codec");
  return c != NULL && strcasecmp(c, "gzip") == 0;
}

hs_status hs_table_next_version(const hs_table *t, const hs_iceberg_metadata *m, hs_buf *out,
                                char *path, size_t cap, hs_error *err) {
  /* The codec is the one the base version asks for, so that every writer
   * racing for v{N+1} (all read the same vN) picks the same name and the
   * exclusive link still lets exactly one win. (Iceberg Java takes it from
   * the new metadata: a commit that switches the codec is written in the
   * old one here, the next in the new one; both read everywhere.) */
  bool gz = t->version >= 1 ? hs_table_metadata_gzip(&t->meta) : hs_table_metadata_gzip(m);
  if (!version_path_named(t->root, t->version + 1, gz ? 1 : 0, path, cap)) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: path too long", t->root);
  }
  hs_buf json;
  hs_buf_init(&json);
  hs_status st = hs_iceberg_metadata_write(m, gz ? &json : out, err);
  if (st == HS_OK && gz) st = hs_gzip_deflate(json.data, json.len, path, out, err);
  hs_buf_free(&json);
  return st;
}

const hs_iceberg_snapshot *hs_table_current(const hs_table *t) {
  if (!t->meta.has_current_snapshot_id) return NULL;
  return hs_iceberg_metadata_snapshot(&t->meta, t->meta.current_snapshot_id);
}

int64_t hs_table_current_snapshot_id(const hs_table *table) {
  const hs_iceberg_snapshot *s = table ? hs_table_current(table) : NULL;
  return s ? s->snapshot_id : -1;
}

const char *hs_table_metadata_location(const hs_table *table) {
  return table->metadata_path;
}

int64_t hs_table_version(const hs_table *table) {
  return table->version;
}

void hs_table_crash_point(void) {
  static long counter;
  const char *v = getenv("HS_TABLE_CRASH_STEP");
  if (v == NULL || *v == '\0') return;
  long step = strtol(v, NULL, 10);
  if (step > 0 && ++counter == step) raise(SIGKILL);
}

/* ------------------------------------------------------------- loading */

hs_status hs_table_load_version(hs_table *t, int64_t version, hs_error *err) {
  char path[4200];
  bool exists = false;
  hs_status st = hs_table_version_find(t, version, path, sizeof path, &exists, err);
  if (st != HS_OK) return st;
  return hs_table_load_file(t, path, version, err);
}

const char *hs_table_strip_file_scheme(const char *uri) {
  if (strncmp(uri, "file://", 7) == 0) return uri + 7;
  if (strncmp(uri, "file:", 5) == 0) return uri + 5;
  return uri;
}

/* hs_table_metadata_bytes, and for an object its size and ETag as the GET
 * answered them into *info (info->etag[0] stays '\0' for a local file). */
static hs_status metadata_bytes_given(const char *path, hs_spec_read *given, hs_buf *out,
                                      hs_object_info *info, hs_error *err) {
  hs_buf raw;
  hs_buf_init(&raw);
  memset(info, 0, sizeof *info);
  hs_status st = HS_OK;
  if (given != NULL) { /* read with the version probe (hs_spec_read) */
    raw = given->meta;
    hs_buf_init(&given->meta);
    *info = given->meta_info;
  } else {
    st = hs_store_is_remote(path)
             ? hs_store_get(path, HS_TABLE_METADATA_BYTES_MAX, &raw, info, err)
             : hs_table_file_read(path, HS_TABLE_METADATA_BYTES_MAX, &raw, err);
  }
  /* Gzip by its magic, whatever the name (JSON never starts with 0x1f). */
  if (st == HS_OK && hs_gzip_is_gzip(raw.data, raw.len)) {
    st = hs_gzip_inflate(raw.data, raw.len, HS_TABLE_METADATA_BYTES_MAX, path, out, err);
    hs_buf_free(&raw);
    return st;
  }
  if (st == HS_OK && out->len == 0) {
    hs_buf_free(out);
    *out = raw;
    return HS_OK;
  }
  if (st == HS_OK && !hs_buf_append(out, raw.data, raw.len))
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path);
  hs_buf_free(&raw);
  return st;
}

static hs_status metadata_bytes(const char *path, hs_buf *out, hs_object_info *info,
                                hs_error *err) {
  return metadata_bytes_given(path, NULL, out, info, err);
}

hs_status hs_table_metadata_bytes(const char *path, hs_buf *out, hs_error *err) {
  hs_object_info info;
  return metadata_bytes(path, out, &info, err);
}

static hs_status metadata_read_given(const char *path, hs_spec_read *given, hs_arena *arena,
                                     hs_iceberg_metadata *meta, hs_object_info *info,
                                     hs_error *err) {
  hs_buf text;
  hs_buf_init(&text);
  hs_status st = metadata_bytes_given(path, given, &text, info, err);
  if (st == HS_OK) {
    st = hs_iceberg_metadata_parse((const char *)text.data, text.len, arena, meta, err);
    if (st != HS_OK) hs_error_prefix(err, "%s: ", path);
  }
  hs_buf_free(&text);
  return st;
}

static hs_status metadata_read(const char *path, hs_arena *arena, hs_iceberg_metadata *meta,
                               hs_object_info *info, hs_error *err) {
  return metadata_read_given(path, NULL, arena, meta, info, err);
}

hs_status hs_table_metadata_read(const char *path, hs_arena *arena, hs_iceberg_metadata *meta,
                                 hs_error *err) {
  hs_object_info info;
  return metadata_read(path, arena, meta, &info, err);
}

/* t->location_alias for the metadata just adopted (table.h). Costs a
 * realpath only when the recorded location differs from the root as text. */
static hs_status location_alias(hs_table *t, hs_error *err) {
  if (t->remote) return HS_OK; /* URIs compare as text */
  const char *loc = t->meta.location ? hs_table_strip_file_scheme(t->meta.location) : "";
  size_t n = strlen(loc);
  while (n > 1 && loc[n - 1] == '/') n--;
  size_t rl = strlen(t->root);
  if (loc[0] != '/' || n >= HS_TABLE_ROOT_MAX || (n == rl && strncmp(loc, t->root, n) == 0)) {
    hs_free(t->location_alias);
    t->location_alias = NULL;
    return HS_OK;
  }
  const char *a = t->location_alias;
  if (a != NULL && strlen(a) == n && strncmp(a, loc, n) == 0) return HS_OK; /* as before */
  hs_free(t->location_alias);
  t->location_alias = NULL;
  char text[HS_TABLE_ROOT_MAX];
  memcpy(text, loc, n);
  text[n] = '\0';
  char *real = realpath(text, NULL);
  bool same = real != NULL && strcmp(real, t->root) == 0;
  free(real);
  /* Elsewhere (a copied table): recorded paths stay refused by I6. */
  if (!same) return HS_OK;
  if ((t->location_alias = hs_strdup(text)) == NULL) {
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", t->root);
  }
  return HS_OK;
}

hs_status hs_table_metadata_adopt(hs_table *t, const char *path, int64_t version, hs_arena *arena,
                                  const hs_iceberg_metadata *meta, hs_error *err) {
  char *mpath = hs_strdup(path);
  if (mpath == NULL) {
    hs_arena_reset(arena);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", path);
  }
  hs_arena_reset(&t->arena);
  hs_free(t->metadata_path);
  t->arena = *arena;
  hs_arena_init(arena);
  t->meta = *meta;
  t->metadata_path = mpath;
  t->version = version;
  t->meta_stamped = false; /* hs_table_load_file stamps it */
  return location_alias(t, err);
}

/* A "vN.metadata.json" whose metadata-log (when it keeps one) does not end
 * at version N - 1 is not version N of this table: another version's file
 * copied over it, say. Hadoop-style names ("v2.metadata.json",
 * "v2.gz.metadata.json"), as Iceberg's Hadoop tables and we write them. */
static hs_status check_version_log(const char *path, int64_t version,
                                   const hs_iceberg_metadata *meta, hs_error *err) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (version < 2 || hs_table_version_of_name(base) != version) return HS_OK;
  /* Writers keep at least the one previous file (Iceberg: at least 1 of
   * write.metadata.previous-versions-max; we keep 100). */
  if (meta->n_metadata_log == 0)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: version %lld records no previous metadata file: this file is not "
                        "version %lld of the table (the first version's file copied over it?)",
                        path, (long long)version, (long long)version);
  const char *prev = meta->metadata_log[meta->n_metadata_log - 1].metadata_file;
  const char *pb = prev != NULL ? strrchr(prev, '/') : NULL;
  pb = pb ? pb + 1 : (prev ? prev : "");
  char stem[40];
  snprintf(stem, sizeof stem, "v%lld.", (long long)(version - 1));
  if (strncmp(pb, stem, strlen(stem)) == 0 && hs_table_version_of_name(pb) == version - 1)
    return HS_OK;
  return hs_error_set(err, HS_ERR_CORRUPT,
                      "%s: its metadata-log ends at %s, not at version %lld: this file is not "
                      "version %lld of the table (another version's file copied over it?)",
                      path, pb, (long long)(version - 1), (long long)version);
}

/* hs_table_load_file, with what the version probe read beside its LISTs
 * (sp NULL, or for another name: read as usual). */
static hs_status load_file_spec(hs_table *t, const char *path, int64_t version, hs_spec_read *sp,
                                hs_error *err) {
  bool mine = sp != NULL && sp->have_meta && strcmp(sp->meta_path, path) == 0;
  hs_arena arena;
  hs_arena_init(&arena);
  hs_iceberg_metadata meta;
  hs_object_info info;
  hs_status st = metadata_read_given(path, mine ? sp : NULL, &arena, &meta, &info, err);
  if (st == HS_OK) st = check_version_log(path, version, &meta, err);
  if (st != HS_OK) {
    hs_arena_reset(&arena);
    return st;
  }
  st = hs_table_metadata_adopt(t, path, version, &arena, &meta, err);
  /* An object's stamp from the GET that read it (a HEAD would be another
   * request: vN names are never cached); a local file's by stat. */
  t->meta_stamped =
      st == HS_OK && (info.etag[0] != '\0' ? hs_store_stamp_from_info(path, &info, &t->meta_stamp)
                                           : hs_store_stamp_of(path, &t->meta_stamp));
  /* The version's index stream, read in the same wave (stream.c). */
  char spath[4300];
  if (st == HS_OK && mine && sp->have_stream && hs_table_stream_wanted(t, spath, sizeof spath)) {
    if (strcmp(spath, sp->stream_path) == 0)
      hs_table_stream_take(t, spath, &sp->stream, sp->stream_st);
    else
      hs_table_stream_load(t);
  }
  return st;
}

hs_status hs_table_load_file(hs_table *t, const char *path, int64_t version, hs_error *err) {
  return load_file_spec(t, path, version, NULL, err);
}

static hs_status highest_listed(const hs_table *t, int64_t *out, hs_error *err) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/metadata", t->root);
  int64_t best = 0;
  char **names = NULL;
  size_t n = 0;
  hs_status st = hs_table_file_list(dir, &names, &n, err);
  if (st != HS_OK) return st;
  for (size_t i = 0; i < n; i++) {
    int64_t v = hs_table_version_of_name(names[i]);
    if (v > best) best = v;
  }
  hs_fs_names_free(names, n);
  *out = best;
  return HS_OK;
}

static int64_t read_hint(const hs_table *t) {
  char path[4200];
  snprintf(path, sizeof path, "%s/metadata/version-hint.text", t->root);
  hs_buf b;
  hs_buf_init(&b);
  int64_t v = -1;
  if (hs_table_file_read(path, 64, &b, NULL) == HS_OK && b.len > 0) {
    char s[65];
    memcpy(s, b.data, b.len);
    s[b.len] = '\0';
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    while (*end == '\n' || *end == '\r' || *end == ' ') end++;
    if (errno == 0 && *end == '\0' && x > 0) v = (int64_t)x;
  }
  hs_buf_free(&b);
  return v;
}

/* Whether version v's metadata file exists (its name into path[cap]); an
 * error (a name too long, a symlink loop, a file where a folder should be)
 * is never "exists". */
static hs_status version_exists(const hs_table *t, int64_t v, bool *exists, char *path, size_t cap,
                                hs_error *err) {
  return hs_table_version_find(t, v, path, cap, exists, err);
}

/* Steps the probe takes from the hint before it lists the folder instead
 * (a hint that far behind was not written by a live writer), and again
 * after the listing before it gives up (only a writer committing faster
 * than the probe could keep it going). */
#define PROBE_STEPS_MAX 10000

/* The latest version (the probe below), into *v, and the name its file was
 * found under into path[cap] (so that loading it needs no second probe);
 * *foreign when the table has no vN files (catalog-named metadata). */
static hs_status latest_version(hs_table *t, int64_t *v_out, bool *foreign, char *path, size_t cap,
                                hs_spec_read *sp, hs_error *err) {
  *foreign = false;
  int64_t v = read_hint(t);
  if (v < 1) v = 1;
  /* Never go back behind what this handle already saw. */
  if (t->version > v) v = t->version;
  bool exists = false, listed_once = false;
  char next[4200];
  hs_status st = HS_OK;
  if (t->remote) {
    /* vN and v(N+1) in one wave: the usual answer (the hint is right) in
     * one round trip instead of two. */
    int64_t pair[2] = {v, v + 1};
    bool listed[2 * N_VERSION_SUFFIX];
    bool more = false;
    /* With them, what the usual answer will read next: vN's metadata
     * file under its plain name and its index stream (stream.c; skipped
     * when this process tried that name already). */
    hs_store_get_item gets[2];
    size_t n_gets = 0;
    if (sp != NULL && version_path_named(t->root, v, 0, sp->meta_path, sizeof sp->meta_path)) {
      gets[n_gets++] = (hs_store_get_item){
          .uri = sp->meta_path, .max_bytes = HS_TABLE_METADATA_BYTES_MAX, .out = &sp->meta};
      int w = snprintf(sp->stream_path, sizeof sp->stream_path, "%s.hsis", sp->meta_path);
      if (w > 0 && (size_t)w < sizeof sp->stream_path && !hs_table_stream_seen(sp->stream_path))
        gets[n_gets++] = (hs_store_get_item){
            .uri = sp->stream_path, .max_bytes = hs_table_stream_max_bytes(), .out = &sp->stream};
    }
    st = versions_listed(t, pair, 2, listed, gets, n_gets, NULL, 0, 0, err);
    if (st == HS_OK && n_gets > 0) {
      sp->have_meta = gets[0].status == HS_OK;
      sp->meta_info = gets[0].info;
      sp->have_stream = n_gets > 1;
      sp->stream_st = n_gets > 1 ? gets[1].status : HS_ERR_IO;
    }
    if (st != HS_OK || (st = version_pick(t, v, listed, path, cap, &exists, err)) != HS_OK ||
        (st = version_pick(t, v + 1, listed + N_VERSION_SUFFIX, next, sizeof next, &more, err)) !=
            HS_OK)
      return st;
    if (exists && !more) {
      *v_out = v;
      return HS_OK;
    }
  } else {
    st = version_exists(t, v, &exists, path, cap, err);
  }
  if (st != HS_OK) return st;
  if (!exists) {
    int64_t listed = 0;
    if ((st = highest_listed(t, &listed, err)) != HS_OK) return st;
    if (listed < 1) {
      *foreign = true;
      return HS_OK;
    }
    v = listed;
    listed_once = true;
    if ((st = version_exists(t, v, &exists, path, cap, err)) != HS_OK) return st;
  }
  for (int steps = 0;; steps++) {
    if (steps == PROBE_STEPS_MAX) {
      int64_t listed = 0;
      if (listed_once || (st = highest_listed(t, &listed, err)) != HS_OK || listed <= v) {
        if (st != HS_OK) return st;
        return hs_error_set(err, HS_ERR_IO,
                            "%s/metadata: the version probe did not end after %d steps (at v%lld)",
                            t->root, PROBE_STEPS_MAX, (long long)v);
      }
      v = listed;
      listed_once = true;
      steps = 0;
      if ((st = version_exists(t, v, &exists, path, cap, err)) != HS_OK) return st;
    }
    if ((st = version_exists(t, v + 1, &exists, next, sizeof next, err)) != HS_OK) return st;
    if (!exists) break;
    if (strlen(next) >= cap)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: path too long", next);
    memcpy(path, next, strlen(next) + 1);
    v++;
  }
  *v_out = v;
  return HS_OK;
}

/* Whether t holds version v as it is on disk (the same stamp). */
static bool loaded_unchanged(const hs_table *t, int64_t v) {
  if (v != t->version || t->metadata_path == NULL || !t->meta_stamped) return false;
  hs_fs_stamp now;
  return hs_store_stamp_of(t->metadata_path, &now) && hs_fs_stamp_equal(&now, &t->meta_stamp);
}

hs_status hs_table_load_latest(hs_table *t, hs_error *err) {
  if (t->catalog != NULL) return t->catalog->load(t, err); /* the catalog's pointer */
  int64_t v = 0;
  bool foreign = false;
  char path[4200];
  hs_spec_read sp;
  spec_init(&sp);
  hs_status st = latest_version(t, &v, &foreign, path, sizeof path, &sp, err);
  /* No vN: metadata named as catalogs write it (foreign.c), else not a table. */
  if (st == HS_OK)
    st = foreign ? hs_table_load_foreign(t, err) : load_file_spec(t, path, v, &sp, err);
  spec_free(&sp);
  return st;
}

/* Replace t->root by its real path (every symlink resolved), so that a
 * table reached through a linked parent folder has one root and every
 * containment check compares resolved paths (I6). A root that does not
 * exist yet (a table created on first write) keeps its lexical form until
 * hs_table_create has made it. Anything but a folder is an error. */
static hs_status root_resolve(hs_table *t, hs_error *err) {
  if (t->remote) return HS_OK; /* no links in an object store */
  char *real = realpath(t->root, NULL);
  if (real == NULL) {
    int e = errno;
    if (e == ENOENT) return HS_OK;
    return hs_fs_path_error(err, e == ENOMEM ? HS_ERR_NOMEM : HS_ERR_IO, t->root,
                            "cannot open the table folder", e);
  }
  struct stat sb;
  hs_status st = HS_OK;
  if (stat(real, &sb) != 0) {
    st = hs_fs_path_error(err, HS_ERR_IO, t->root, "cannot open the table folder", errno);
  } else if (!S_ISDIR(sb.st_mode)) {
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s is %s, not a table folder", t->root,
                      hs_fs_kind_name(sb.st_mode));
  } else if (strlen(real) >= HS_TABLE_ROOT_MAX) {
    st = hs_error_set(err, HS_ERR_INVALID_ARG,
                      "%s: the table folder's real path is too long (%zu bytes, the limit is %d)",
                      t->root, strlen(real), HS_TABLE_ROOT_MAX - 1);
  } else if (strcmp(real, t->root) != 0) {
    char *copy = hs_strdup(real);
    if (copy == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", t->root);
    } else {
      hs_free(t->root);
      t->root = copy;
    }
  }
  free(real);
  return st;
}

static hs_status table_new(const char *uri, hs_table **out, hs_error *err) {
  *out = NULL;
  if (uri == NULL || *uri == '\0') {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "table: empty uri");
  }
  if (strncmp(uri, "file://", 7) == 0) uri += 7; /* "file:x" stays a relative name here */
  bool remote = hs_store_is_remote(uri);
  if (!remote && strstr(uri, "://") != NULL) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: unsupported scheme (tables are local paths, file:// or s3:// URIs)",
                        uri);
  }
  hs_buf root;
  hs_buf_init(&root);
  bool ok = true;
  const char *full = uri;
  if (remote) {
    /* "s3://bucket" then the key's components, normalised as a path's. */
    const char *b = uri + 5, *slash = strchr(b, '/');
    size_t bl = slash ? (size_t)(slash - b) : strlen(b);
    ok = hs_buf_append(&root, uri, 5 + bl);
    uri = b + bl;
  } else if (uri[0] != '/') {
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) == NULL) {
      return hs_error_set(err, HS_ERR_IO, "%s: cannot get the working directory: %s", uri,
                          strerror(errno));
    }
    ok = hs_buf_printf(&root, "%s/", cwd);
  }
  /* Normalise: drop empty and "." components; ".." is refused (a table
   * location must be plain so that the containment check is lexical). */
  const char *p = uri;
  while (ok && *p) {
    while (*p == '/') p++;
    const char *q = p;
    while (*q && *q != '/') q++;
    size_t n = (size_t)(q - p);
    if (n == 2 && p[0] == '.' && p[1] == '.') {
      hs_buf_free(&root);
      return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: '..' is not allowed in a table path", full);
    }
    if (n > NAME_MAX) {
      hs_buf_free(&root);
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "%.600s%s: the name '%.300s%s' is too long (%zu bytes, the limit is %d)",
                          full, strlen(full) > 600 ? "..." : "", p, n > 300 ? "..." : "", n,
                          (int)NAME_MAX);
    }
    if (n > 0 && !(n == 1 && p[0] == '.')) {
      if (root.len == 0 || root.data[root.len - 1] != '/') ok = hs_buf_append_byte(&root, '/');
      ok = ok && hs_buf_append(&root, p, n);
    }
    p = q;
  }
  if (ok && root.len == 0) ok = hs_buf_append_byte(&root, '/');
  while (ok && !remote && root.len > 1 && root.data[root.len - 1] == '/') root.len--;
  if (ok && root.len >= HS_TABLE_ROOT_MAX) {
    size_t len = root.len;
    hs_buf_free(&root);
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "table path too long (%zu bytes, the limit is %d): %.200s...", len,
                        HS_TABLE_ROOT_MAX - 1, full);
  }
  ok = ok && hs_buf_append_byte(&root, 0);
  hs_table *t = ok ? hs_calloc(1, sizeof *t) : NULL;
  if (t == NULL) {
    hs_buf_free(&root);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", full);
  }
  t->root = (char *)hs_buf_detach(&root);
  t->remote = remote;
  hs_arena_init(&t->arena);
  /* The bucket name (and the options) checked as every store call will. */
  hs_status vst = remote ? hs_store_validate(t->root, err) : HS_OK;
  if (vst != HS_OK) {
    hs_table_free(t);
    return vst;
  }
  hs_status st = root_resolve(t, err);
  if (st != HS_OK) {
    hs_table_free(t);
    return st;
  }
  *out = t;
  return HS_OK;
}

/* ------------------------------------------------- catalog tables */

/* Set once by the catalog layer (src/catalog/), read by every open. */
static const hs_table_catalog_hooks *_Atomic g_catalog_hooks;

void hs_table_set_catalog_hooks(const hs_table_catalog_hooks *hooks) {
  g_catalog_hooks = hooks;
}

bool hs_table_is_catalog_uri(const char *uri) {
  return uri != NULL && (strncmp(uri, "rest://", 7) == 0 || strncmp(uri, "rests://", 8) == 0);
}

static hs_status no_catalog(const char *uri, hs_error *err) {
  return hs_error_set(err, HS_ERR_INVALID_ARG,
                      "%s: no catalog connected for this URI (hs_catalog_connect, or Python's "
                      "hdb.connect(\"rest://host:port\", ...))",
                      uri);
}

static hs_status catalog_open(const char *uri, hs_table **out, hs_error *err) {
  const hs_table_catalog_hooks *h = g_catalog_hooks;
  return h != NULL ? h->open(uri, out, err) : no_catalog(uri, err);
}

static hs_status catalog_create(const char *uri, const struct ArrowSchema *schema,
                                const hs_table_options *opts, hs_table **out, hs_error *err) {
  const hs_table_catalog_hooks *h = g_catalog_hooks;
  return h != NULL ? h->create(uri, schema, opts, out, err) : no_catalog(uri, err);
}

void hs_table_free(hs_table *table) {
  if (table == NULL) return;
  if (table->aux_free != NULL) table->aux_free(table->aux);
  if (table->catalog != NULL && table->catalog->release != NULL)
    table->catalog->release(table->catalog_ctx);
  hs_arena_reset(&table->arena);
  hs_free(table->metadata_path);
  hs_free(table->location_alias);
  hs_free(table->root);
  hs_free(table);
}

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* How long before a full check the metadata folder's last change must lie
 * for its stamp to be trusted (meta_dir_settled): a folder's times come
 * from the kernel's coarse clock (a tick, ~1-10 ms), so a change in the
 * same tick as the check could leave the stamp as the check saw it; one
 * well before the check cannot be followed by a change that does. */
#define DIR_SETTLE_NS ((int64_t)1000000000)

/* The stamp of t's metadata folder, and whether it is settled (its last
 * change at least DIR_SETTLE_NS before now by the wall clock). */
static bool meta_dir_stamp(const hs_table *t, hs_table_dir_stamp *out, bool *settled) {
  char dir[4200];
  int n = snprintf(dir, sizeof dir, "%s/metadata", t->root);
  struct stat sb;
  if (n <= 0 || (size_t)n >= sizeof dir || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return false;
  out->dev = (uint64_t)sb.st_dev;
  out->ino = (uint64_t)sb.st_ino;
  out->size = (int64_t)sb.st_size;
  out->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
  out->ctime_ns = (int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
  int64_t last = out->mtime_ns > out->ctime_ns ? out->mtime_ns : out->ctime_ns;
  *settled = now_ns - last >= DIR_SETTLE_NS;
  return true;
}

static bool dir_stamp_equal(const hs_table_dir_stamp *a, const hs_table_dir_stamp *b) {
  return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
         a->ctime_ns == b->ctime_ns;
}

hs_status hs_table_open(const char *uri, hs_table **out, hs_error *err) {
  if (hs_table_is_catalog_uri(uri)) return catalog_open(uri, out, err);
  hs_table *t = NULL;
  hs_status st = table_new(uri, &t, err);
  if (st != HS_OK) return st;
  if ((st = hs_table_load_latest(t, err)) != HS_OK) {
    hs_table_free(t);
    return st;
  }
  t->fresh_at_ns = mono_ns();
  *out = t;
  return HS_OK;
}

hs_status hs_table_alloc(const char *uri, hs_table **out, hs_error *err) {
  return table_new(uri, out, err);
}

void hs_table_set_staleness_ms(hs_table *table, int64_t ms) {
  if (table == NULL) return;
  table->staleness_ns = ms > 0 ? (ms > INT64_MAX / 1000000 ? INT64_MAX : ms * 1000000) : 0;
}

/* A refresh, cheapest first (README "Finding the latest version"):
 *  1. within the handle's staleness bound: nothing;
 *  2. a local table whose metadata folder has the stamp the last full check
 *     saw (settled) and whose loaded metadata file is unchanged: nothing
 *     was added, removed or renamed in metadata/ since, so no v(N+1) and
 *     no new hint — two stats;
 *  3. the full check: hint, v(N+1) probes, the loaded file's stamp; a
 *     newer or changed version is loaded as an open would. */
hs_status hs_table_refresh(hs_table *table, hs_error *err) {
  return hs_table_refresh_prefetch(table, NULL, 0, 0, err);
}

hs_status hs_table_refresh_prefetch(hs_table *table, const hs_store_prefetch_item *pf, size_t n_pf,
                                    uint64_t pf_max, hs_error *err) {
  if (table->is_static) return HS_OK; /* one fixed metadata file */
  if (table->catalog != NULL)
    return table->catalog->refresh != NULL ? table->catalog->refresh(table, err)
                                           : table->catalog->load(table, err);
  int64_t now = mono_ns();
  bool plain = !table->foreign_names && table->version > 0;
  if (plain && table->staleness_ns > 0 && now - table->fresh_at_ns < table->staleness_ns)
    return HS_OK;
  /* An object store: versions are published in order by conditional
   * create, so no v(N+1) means the loaded vN (written once) is the latest:
   * one LIST, no hint. */
  if (plain && table->remote && table->metadata_path != NULL) {
    bool next = true;
    char path[4200], spath[4300];
    /* The loaded version's index stream (stream.c), not fetched yet: in
     * the same wave, so a cold query's freshness check costs no extra
     * round trip for it. */
    bool want = hs_table_stream_wanted(table, spath, sizeof spath);
    hs_buf sbuf;
    hs_buf_init(&sbuf);
    hs_store_get_item g = {.uri = spath, .max_bytes = hs_table_stream_max_bytes(), .out = &sbuf};
    hs_status vst = version_find_get(table, table->version + 1, path, sizeof path, &next,
                                     want ? &g : NULL, pf, n_pf, pf_max, NULL);
    if (vst == HS_OK && !next) {
      if (want) hs_table_stream_take(table, spath, &sbuf, g.status);
      hs_buf_free(&sbuf);
      table->fresh_at_ns = now;
      return HS_OK;
    }
    hs_buf_free(&sbuf);
  }
  hs_table_dir_stamp dir;
  bool settled = false, have_dir = plain && !table->remote && meta_dir_stamp(table, &dir, &settled);
  if (have_dir && table->meta_dir_settled && dir_stamp_equal(&dir, &table->meta_dir) &&
      loaded_unchanged(table, table->version)) {
    table->fresh_at_ns = now;
    return HS_OK;
  }
  /* vN files are written once: the loaded one, still the latest and
   * unchanged, need not be read and parsed again (a query refreshes). */
  int64_t v = 0;
  bool foreign = false, probed = false;
  char path[4200];
  hs_status st = HS_OK;
  if (!(plain &&
        (probed = latest_version(table, &v, &foreign, path, sizeof path, NULL, err) == HS_OK) &&
        !foreign && loaded_unchanged(table, v))) {
    if (err != NULL) memset(err, 0, sizeof *err);
    /* The probe found the latest file: load it without probing again. */
    st = probed && !foreign ? hs_table_load_file(table, path, v, err)
                            : hs_table_load_latest(table, err);
  }
  /* The folder as it was before the check: a change after that stat shows
   * as another stamp next time (when settled). */
  table->meta_dir_settled = st == HS_OK && have_dir && settled && table->meta_stamped;
  if (table->meta_dir_settled) table->meta_dir = dir;
  if (st == HS_OK) table->fresh_at_ns = now;
  return st;
}

/* ----------------------------------------------------------- creating */

int64_t hs_table_wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void hs_table_backoff(int attempt) {
  enum { BACKOFF_MS_MAX = 50 };
  uint32_t r = 0;
  (void)hs_fs_random_bytes(&r, sizeof r, NULL);
  int64_t cap_ms = attempt < 6 ? (int64_t)1 << attempt : BACKOFF_MS_MAX;
  if (cap_ms > BACKOFF_MS_MAX) cap_ms = BACKOFF_MS_MAX;
  int64_t us = (int64_t)(r % (uint32_t)(cap_ms * 1000)) + 100;
  struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

hs_status hs_table_initial_metadata(const char *uri, const struct ArrowSchema *schema,
                                    const hs_table_options *opts, hs_arena *arena,
                                    hs_iceberg_metadata *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_table_options defaults;
  if (opts == NULL) {
    hs_table_options_init(&defaults);
    opts = &defaults;
  }
  if (opts->format_version != 2 && opts->format_version != 3) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: format version %d: must be 2 or 3", uri,
                        opts->format_version);
  }
  if (schema == NULL || schema->release == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "%s: no schema", uri);
  }
  hs_status st = HS_OK;
  hs_iceberg_metadata m;
  memset(&m, 0, sizeof m);
  hs_iceberg_schema *s = hs_arena_alloc(arena, sizeof *s);
  hs_iceberg_partition_spec *spec = hs_arena_alloc(arena, sizeof *spec);
  hs_iceberg_sort_order *order = hs_arena_alloc(arena, sizeof *order);
  char *uuid = hs_arena_alloc(arena, 37);
  if (s == NULL || spec == NULL || order == NULL || uuid == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
  memset(spec, 0, sizeof *spec);
  memset(order, 0, sizeof *order);
  hs_iceberg_from_arrow_options fo = {.format_version = opts->format_version, .next_id = 1};
  int32_t last_id = 0;
  hs_iceberg_vector_dim *vecs = NULL;
  size_t n_vecs = 0;
  st = hs_iceberg_schema_from_arrow(schema, &fo, arena, s, &last_id, &vecs, &n_vecs, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "%s: schema: ", uri);
    return st;
  }
  s->schema_id = 0;
  if ((st = hs_fs_uuid4(uuid, err)) != HS_OK) return st;

  size_t n_props = opts->n_properties + n_vecs;
  hs_iceberg_kv *props = n_props ? hs_arena_alloc(arena, n_props * sizeof *props) : NULL;
  if (n_props && props == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", uri);
  for (size_t i = 0; i < opts->n_properties; i++) {
    props[i].key = opts->property_keys[i];
    props[i].value = opts->property_values[i];
  }
  for (size_t i = 0; i < n_vecs; i++) {
    char key[64], val[24];
    hs_iceberg_vector_dim_property(vecs[i].field_id, key);
    snprintf(val, sizeof val, "%d", (int)vecs[i].dimension);
    props[opts->n_properties + i].key = hs_arena_strndup(arena, key, strlen(key));
    props[opts->n_properties + i].value = hs_arena_strndup(arena, val, strlen(val));
  }

  m.format_version = opts->format_version;
  m.table_uuid = uuid;
  m.has_last_sequence_number = true;
  m.last_sequence_number = 0;
  m.last_updated_ms = hs_table_wall_ms();
  m.last_column_id = last_id;
  m.schemas = s;
  m.n_schemas = 1;
  m.current_schema_id = 0;
  m.specs = spec;
  m.n_specs = 1;
  m.default_spec_id = 0;
  m.has_last_partition_id = true;
  m.last_partition_id = 999;
  m.sort_orders = order;
  m.n_sort_orders = 1;
  m.has_default_sort_order_id = true;
  m.default_sort_order_id = 0;
  m.properties = props;
  m.n_properties = n_props;
  if (opts->format_version >= 3) {
    m.has_next_row_id = true;
    m.next_row_id = 0;
  }
  /* The spec and sort order asked for, by the same edits as later changes;
   * the spec becomes spec 0 (no unpartitioned spec before it). */
  if (opts->n_partition_fields > 0) {
    hs_iceberg_metadata base = m;
    st = hs_table_spec_edit_apply(&base, &m, arena, opts->partition_fields,
                                  opts->n_partition_fields, err);
    if (st != HS_OK) {
      hs_error_prefix(err, "%s: partition spec: ", uri);
      return st;
    }
    if (m.n_specs == 2 && m.specs[0].n_fields == 0) {
      m.specs = &m.specs[1];
      m.n_specs = 1;
      m.specs[0].spec_id = 0;
      m.default_spec_id = 0;
    }
  }
  if (opts->n_sort_columns > 0) {
    hs_iceberg_metadata base = m;
    st = hs_table_order_edit_apply(&base, &m, arena, opts->sort_columns, opts->sort_ascending,
                                   opts->sort_nulls_first, opts->n_sort_columns, err);
    if (st != HS_OK) {
      hs_error_prefix(err, "%s: sort order: ", uri);
      return st;
    }
  }
  *out = m;
  return HS_OK;
}

hs_status hs_table_create(const char *uri, const struct ArrowSchema *schema,
                          const hs_table_options *opts, hs_table **out, hs_error *err) {
  *out = NULL;
  if (hs_table_is_catalog_uri(uri)) return catalog_create(uri, schema, opts, out, err);
  hs_table *t = NULL;
  hs_status st = table_new(uri, &t, err);
  if (st != HS_OK) return st;

  hs_arena arena;
  hs_arena_init(&arena);
  hs_buf json;
  hs_buf_init(&json);
  char dir[4200], path[4200];
  hs_iceberg_metadata m;
  if ((st = hs_table_initial_metadata(uri, schema, opts, &arena, &m, err)) != HS_OK) goto done;
  /* The folders (only now: a refused spec or order leaves none behind), so
   * that the location recorded is the resolved root. */
  snprintf(dir, sizeof dir, "%s/data", t->root);
  if (!t->remote && (st = hs_fs_mkdirs(dir, err)) != HS_OK) goto done;
  snprintf(dir, sizeof dir, "%s/metadata", t->root);
  if (!t->remote && (st = hs_fs_mkdirs(dir, err)) != HS_OK) goto done;
  if ((st = root_resolve(t, err)) != HS_OK) goto done;
  m.location = t->root;
  /* v1 in the codec the properties ask for (write.metadata.compression-codec). */
  if ((st = hs_table_next_version(t, &m, &json, path, sizeof path, err)) != HS_OK) goto done;
  bool won = false, there = false;
  char other[4200];
  if ((st = hs_table_version_find(t, 1, other, sizeof other, &there, err)) != HS_OK) goto done;
  /* Exclusive: link(2) of a synced temporary, or S3's If-None-Match PUT. */
  if (!there &&
      (st = t->remote ? hs_store_put_if_absent(path, json.data, json.len, &won, err)
                      : hs_fs_publish_exclusive(path, json.data, json.len, &won, err)) != HS_OK)
    goto done;
  if (!won) {
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: a table already exists here (%s)", t->root,
                      there ? other : path);
    goto done;
  }
  snprintf(path, sizeof path, "%s/metadata/version-hint.text", t->root);
  /* a hint: best effort */
  (void)(t->remote ? hs_store_put(path, "1", 1, NULL) : hs_fs_replace_file(path, "1", 1, NULL));
  st = hs_table_load_version(t, 1, err);

done:
  hs_buf_free(&json);
  hs_arena_reset(&arena);
  if (st != HS_OK) {
    hs_table_free(t);
    return st;
  }
  *out = t;
  return HS_OK;
}

/* -------------------------------------------------------------- paths */

/* Whether `p` is `base` (length n) or below it: a local path, or a
 * store URI below a store URI. */
static bool under(const char *p, const char *base, size_t n) {
  bool uri = hs_store_is_remote(base);
  if (uri ? !hs_store_is_remote(p) : p[0] != '/') return false;
  return strncmp(p, base, n) == 0 && (n == 1 || p[n] == '/');
}

hs_status hs_table_resolve_path(const hs_table *t, const char *recorded, const char *what,
                                char **out, hs_error *err) {
  *out = NULL;
  if (recorded == NULL) {
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: %s: no path", t->metadata_path, what);
  }
  const char *p = hs_table_strip_file_scheme(recorded);
  size_t rl = strlen(t->root), skip = rl;
  bool inside = under(p, t->root, rl);
  if (!inside && t->location_alias != NULL) { /* recorded through a linked parent folder */
    skip = strlen(t->location_alias);
    inside = under(p, t->location_alias, skip);
  }
  if (inside) {
    /* Every component after the root must be a plain name. */
    const char *c = p + skip;
    while (inside && *c) {
      if (*c == '/') c++;
      const char *e = c;
      while (*e && *e != '/') e++;
      size_t n = (size_t)(e - c);
      if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) {
        inside = false;
      }
      c = e;
    }
  }
  if (!inside) {
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: %s: path '%s' is outside the table folder %s",
                        t->metadata_path, what, recorded, t->root);
  }
  size_t tail = strlen(p + skip);
  char *s = hs_malloc(rl + tail + 1);
  if (s == NULL) return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory", recorded);
  memcpy(s, t->root, rl);
  memcpy(s + rl, p + skip, tail + 1);
  *out = s;
  return HS_OK;
}

/* `path`, reached through the link `link` (a prefix of it), must resolve
 * inside the root. */
static hs_status check_link_target(const hs_table *t, const char *path, const char *link,
                                   const char *what, hs_error *err) {
  bool whole = strcmp(path, link) == 0;
  char *real = realpath(path, NULL);
  if (real == NULL) {
    int e = errno;
    if (e != ENOENT) return hs_fs_path_error(err, HS_ERR_IO, path, "cannot resolve", e);
    char target[4200];
    ssize_t k = readlink(link, target, sizeof target - 1);
    target[k > 0 ? k : 0] = '\0';
    return hs_error_set(err, HS_ERR_NOT_FOUND,
                        "%s: %s is a symbolic link to %s, which does not exist", what, link,
                        target);
  }
  size_t rl = strlen(t->root);
  hs_status st = HS_OK;
  if (!(strncmp(real, t->root, rl) == 0 && (rl == 1 || real[rl] == '/'))) {
    if (whole) {
      st = hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: %s is a symbolic link to %s, which is outside the table folder %s",
                        what, path, real, t->root);
    } else {
      st = hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: %s leads through the symbolic link %s to %s, which is outside the "
                        "table folder %s",
                        what, path, link, real, t->root);
    }
  }
  free(real);
  return st;
}

hs_status hs_table_check_links(const hs_table *t, const char *path, const char *what,
                               hs_error *err) {
  if (t->remote) return HS_OK; /* objects, no links */
  size_t rl = strlen(t->root), n = strlen(path);
  char buf[4200];
  /* Only what hs_table_resolve_path returned: a path below the root. */
  if (n <= rl + 1 || n >= sizeof buf || !under(path, t->root, rl)) return HS_OK;
  memcpy(buf, path, n + 1);
  for (size_t i = rl + 1; i <= n; i++) {
    if (i < n && buf[i] != '/') continue;
    buf[i] = '\0';
    struct stat sb;
    if (lstat(buf, &sb) != 0) {
      int e = errno;
      if (e == ENOENT) return HS_OK; /* missing: its open says so */
      return hs_fs_path_error(err, HS_ERR_IO, path, "cannot look up", e);
    }
    if (S_ISLNK(sb.st_mode)) return check_link_target(t, path, buf, what, err);
    if (i < n) buf[i] = '/';
  }
  return HS_OK;
}

hs_status hs_table_read_avro(const hs_table *t, const char *recorded, const char *what, hs_buf *out,
                             hs_error *err) {
  char *path = NULL;
  hs_status st = hs_table_resolve_path(t, recorded, what, &path, err);
  if (st != HS_OK) return st;
  st = hs_table_check_links(t, path, what, err); /* its errors name `what` */
  if (st == HS_OK) {
    st = hs_table_file_read(path, HS_TABLE_MANIFEST_BYTES_MAX, out, err);
    if (st != HS_OK) hs_error_prefix(err, "%s: ", what);
  }
  hs_free(path);
  return st;
}

/* ---------------------------------------------------------- snapshots */

static int64_t summary_int(const hs_iceberg_snapshot *s, const char *key) {
  for (size_t i = 0; i < s->n_summary; i++) {
    if (strcmp(s->summary[i].key, key) != 0) continue;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s->summary[i].value, &end, 10);
    if (errno != 0 || end == s->summary[i].value || *end != '\0') return -1;
    return (int64_t)v;
  }
  return -1;
}

hs_status hs_table_snapshots(const hs_table *table, hs_table_snapshot_info **out, size_t *n_out,
                             hs_error *err) {
  *out = NULL;
  *n_out = 0;
  size_t n = table->meta.n_snapshots;
  if (n == 0) return HS_OK;
  hs_table_snapshot_info *v = hs_calloc(n, sizeof *v);
  if (v == NULL) return hs_error_set(err, HS_ERR_NOMEM, "snapshots: out of memory");
  for (size_t i = 0; i < n; i++) {
    const hs_iceberg_snapshot *s = &table->meta.snapshots[i];
    v[i].snapshot_id = s->snapshot_id;
    v[i].parent_snapshot_id = s->has_parent_snapshot_id ? s->parent_snapshot_id : -1;
    v[i].sequence_number = s->has_sequence_number ? s->sequence_number : 0;
    v[i].timestamp_ms = s->timestamp_ms;
    v[i].added_records = summary_int(s, "added-records");
    v[i].total_records = summary_int(s, "total-records");
    v[i].added_data_files = summary_int(s, "added-data-files");
    v[i].total_data_files = summary_int(s, "total-data-files");
    for (size_t k = 0; k < s->n_summary; k++) {
      if (strcmp(s->summary[k].key, "operation") == 0) {
        snprintf(v[i].operation, sizeof v[i].operation, "%s", s->summary[k].value);
      }
    }
  }
  *out = v;
  *n_out = n;
  return HS_OK;
}

hs_status hs_table_schema(hs_table *table, struct ArrowSchema *out, hs_error *err) {
  const hs_iceberg_schema *s =
      hs_iceberg_metadata_schema(&table->meta, table->meta.current_schema_id);
  if (s == NULL) {
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: no current schema", table->metadata_path);
  }
  return hs_iceberg_schema_to_arrow(s, &table->meta, out, err);
}
