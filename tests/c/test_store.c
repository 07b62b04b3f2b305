/*
 * test_store.c — the object-store interface (src/io/store.h) on local
 * paths and file:// URIs: get / get_range / get_ranges / head / exists
 * (missing is HS_ERR_NOT_FOUND, a range past the end HS_ERR_CORRUPT), put
 * (replace, parents created), put_if_absent raced by 8 threads (exactly one
 * wins, no temporaries left), put_if_match (a stale etag loses; 8 racing
 * conditional writers from one etag: one wins; no lock file left), put_many
 * (all or nothing), delete, mkdirs, list (non-recursive and recursive
 * against a brute-force record of a random tree); URI parsing (bucket
 * rules, "." and ".." segments, file:// hosts) and hs_store_join; the
 * option registry (unknown keys named, longest prefix wins, path
 * boundaries); S3 option resolution from the environment and a temporary
 * ~/.aws pair (AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE, profiles,
 * the s3 sub-section, precedence, defaults, a rewritten file re-read);
 * custom sources and sinks (file.c) round trip. No network: S3 locations
 * are only resolved. Runs under ASan too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hs_test.h"
#include "hyperstream.h"
#include "io/io.h"
#include "io/store.h"
#include "io/store_internal.h"

static char root[256];

static char *at(const char *rel) { /* "<root>/<rel>", static buffers in turn */
  static char bufs[8][1024];
  static int next;
  char *b = bufs[next++ % 8];
  snprintf(b, sizeof bufs[0], "%s/%s", root, rel);
  return b;
}

static char *file_uri(const char *rel) {
  static char bufs[4][1100];
  static int next;
  char *b = bufs[next++ % 4];
  snprintf(b, sizeof bufs[0], "file://%s/%s", root, rel);
  return b;
}

static bool contains(const char *hay, const char *needle) {
  return strstr(hay, needle) != NULL;
}

/* ------------------------------------------------------------ basics */

static void test_put_get(const char *uri, const char *plain) {
  hs_error err = {0};
  const char *text = "hello, store";
  CHECK_OK(hs_store_put(uri, text, strlen(text), &err), &err);
  hs_buf b;
  hs_buf_init(&b);
  hs_object_info info, head;
  CHECK_OK(hs_store_get(uri, 1 << 20, &b, &info, &err), &err);
  CHECK(b.len == strlen(text) && memcmp(b.data, text, b.len) == 0);
  CHECK_EQ_INT(info.size, strlen(text));
  CHECK(info.mtime_ms > 0);
  CHECK_OK(hs_store_head(plain, &head, &err), &err); /* the same object by its plain path */
  CHECK(strcmp(head.etag, info.etag) == 0 && head.size == info.size);
  bool exists = false;
  CHECK_OK(hs_store_exists(uri, &exists, &err), &err);
  CHECK(exists);

  /* replace: new bytes, new etag */
  CHECK_OK(hs_store_put(uri, "x", 1, &err), &err);
  hs_object_info again;
  CHECK_OK(hs_store_head(uri, &again, &err), &err);
  CHECK(again.size == 1 && strcmp(again.etag, info.etag) != 0);

  /* appended, capped */
  b.len = 0;
  hs_buf_append(&b, "ab", 2);
  CHECK_OK(hs_store_get(uri, 10, &b, NULL, &err), &err);
  CHECK(b.len == 3 && memcmp(b.data, "abx", 3) == 0);
  hs_error e2 = {0};
  CHECK_OK(hs_store_put(uri, text, strlen(text), &err), &err);
  CHECK_EQ_INT(hs_store_get(uri, 4, &b, NULL, &e2), HS_ERR_CORRUPT);
  CHECK(b.len == 3); /* nothing appended on failure */

  /* ranges */
  char dst[8] = {0};
  CHECK_OK(hs_store_get_range(uri, 7, 5, dst, &err), &err);
  CHECK(memcmp(dst, "store", 5) == 0);
  CHECK_OK(hs_store_get_range(uri, strlen(text), 0, dst, &err), &err);
  e2 = (hs_error){0};
  CHECK_EQ_INT(hs_store_get_range(uri, 8, 5, dst, &e2), HS_ERR_CORRUPT);
  CHECK(contains(e2.message, "past the end"));
  e2 = (hs_error){0};
  CHECK_EQ_INT(hs_store_get_range(uri, UINT64_MAX, 2, dst, &e2), HS_ERR_CORRUPT);

  /* delete; a second delete is fine; then everything says missing */
  CHECK_OK(hs_store_delete(uri, &err), &err);
  CHECK_OK(hs_store_delete(uri, &err), &err);
  CHECK_OK(hs_store_exists(uri, &exists, &err), &err);
  CHECK(!exists);
  e2 = (hs_error){0};
  CHECK_EQ_INT(hs_store_head(uri, &head, &e2), HS_ERR_NOT_FOUND);
  e2 = (hs_error){0};
  CHECK_EQ_INT(hs_store_get(uri, 100, &b, NULL, &e2), HS_ERR_NOT_FOUND);
  CHECK(contains(e2.message, plain));
  e2 = (hs_error){0};
  CHECK_EQ_INT(hs_store_get_range(uri, 0, 1, dst, &e2), HS_ERR_NOT_FOUND);
  hs_buf_free(&b);

  /* a folder is not an object */
  CHECK_OK(hs_store_mkdirs(at("afolder/x/y"), &err), &err);
  struct stat sb;
  CHECK(stat(at("afolder/x/y"), &sb) == 0 && S_ISDIR(sb.st_mode));
  e2 = (hs_error){0};
  CHECK_EQ_INT(hs_store_head(at("afolder"), &head, &e2), HS_ERR_IO);
  e2 = (hs_error){0};
  CHECK(hs_store_exists(at("afolder"), &exists, &e2) == HS_ERR_IO);
}

static void test_basics(void) {
  test_put_get(at("p/q/plain.txt"), at("p/q/plain.txt"));
  test_put_get(file_uri("u/v/uri.txt"), at("u/v/uri.txt"));
  char lh[1200];
  snprintf(lh, sizeof lh, "file://localhost%s/lh.txt", root);
  hs_error err = {0};
  CHECK_OK(hs_store_put(lh, "l", 1, &err), &err);
  CHECK(access(at("lh.txt"), F_OK) == 0);
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_store_put("file://somehost/x", "l", 1, &e2), HS_ERR_INVALID_ARG);
  CHECK(contains(e2.message, "file://somehost/x"));
  e2 = (hs_error){0};
  CHECK_EQ_INT(hs_store_put("", "l", 1, &e2), HS_ERR_INVALID_ARG);
}

static void test_get_ranges(void) {
  hs_error err = {0};
  enum { FILES = 3, SIZE = 5000, RANGES = 60 };
  uint8_t data[FILES][SIZE];
  char uris[FILES][1100];
  uint64_t seed = 7;
  for (int f = 0; f < FILES; f++) {
    for (int i = 0; i < SIZE; i++) data[f][i] = (uint8_t)hs_test_rand(&seed);
    char rel[64];
    snprintf(rel, sizeof rel, "ranges/f%d.bin", f);
    snprintf(uris[f], sizeof uris[f], "%s", f == 1 ? file_uri(rel) : at(rel));
    CHECK_OK(hs_store_put(uris[f], data[f], SIZE, &err), &err);
  }
  hs_store_range r[RANGES];
  uint8_t out[RANGES][100];
  int which[RANGES];
  for (int i = 0; i < RANGES; i++) {
    which[i] = (int)(hs_test_rand(&seed) % FILES);
    if (i % 4 == 1) which[i] = which[i - 1]; /* runs of one file */
    size_t len = (size_t)(hs_test_rand(&seed) % 100);
    r[i] = (hs_store_range){uris[which[i]], hs_test_rand(&seed) % (SIZE - len), len, out[i]};
  }
  CHECK_OK(hs_store_get_ranges(r, RANGES, &err), &err);
  int bad = 0;
  for (int i = 0; i < RANGES; i++)
    bad += memcmp(out[i], data[which[i]] + r[i].offset, r[i].len) != 0;
  CHECK_EQ_INT(bad, 0);
  r[RANGES / 2].offset = SIZE - 1;
  r[RANGES / 2].len = 2;
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_store_get_ranges(r, RANGES, &e2), HS_ERR_CORRUPT);
  /* a bad S3 URI among them fails before anything is read (no network) */
  r[RANGES / 2] = (hs_store_range){"s3://Bad_Bucket/k", 0, 1, out[0]};
  e2 = (hs_error){0};
  CHECK_EQ_INT(hs_store_get_ranges(r, RANGES, &e2), HS_ERR_INVALID_ARG);
  CHECK(contains(e2.message, "s3://Bad_Bucket/k"));
  CHECK_OK(hs_store_get_ranges(r, 0, &err), &err);
}

/* ----------------------------------------------------- conditional puts */

typedef struct racer {
  const char *uri;
  const char *etag; /* put_if_match when set */
  int id;
  bool won;
  hs_status st;
} racer;

static pthread_barrier_t g_barrier;

static void *race(void *arg) {
  racer *r = arg;
  char payload[64];
  int n = snprintf(payload, sizeof payload, "writer %d", r->id);
  hs_error err = {0};
  pthread_barrier_wait(&g_barrier);
  if (r->etag != NULL) {
    r->st = hs_store_put_if_match(r->uri, payload, (size_t)n, r->etag, &r->won, &err);
  } else {
    r->st = hs_store_put_if_absent(r->uri, payload, (size_t)n, &r->won, &err);
  }
  if (r->st != HS_OK) fprintf(stderr, "racer %d: %s\n", r->id, err.message);
  return NULL;
}

/* 8 threads; returns the winner's id (-1 unless exactly one won). */
static int run_race(const char *uri, const char *etag) {
  enum { N = 8 };
  racer rs[N];
  pthread_t th[N];
  pthread_barrier_init(&g_barrier, NULL, N);
  for (int i = 0; i < N; i++) {
    rs[i] = (racer){.uri = uri, .etag = etag, .id = i};
    pthread_create(&th[i], NULL, race, &rs[i]);
  }
  int wins = 0, winner = -1;
  for (int i = 0; i < N; i++) {
    pthread_join(th[i], NULL);
    CHECK_OK(rs[i].st, (hs_error *)NULL);
    if (rs[i].won) wins++, winner = i;
  }
  pthread_barrier_destroy(&g_barrier);
  CHECK_EQ_INT(wins, 1);
  return wins == 1 ? winner : -1;
}

static bool content_is(const char *uri, const char *want) {
  hs_buf b;
  hs_buf_init(&b);
  bool ok = hs_store_get(uri, 1 << 20, &b, NULL, NULL) == HS_OK && b.len == strlen(want) &&
            memcmp(b.data, want, b.len) == 0;
  hs_buf_free(&b);
  return ok;
}

static void test_conditional(void) {
  hs_error err = {0};
  for (int round = 0; round < 20; round++) {
    char rel[64];
    snprintf(rel, sizeof rel, "race/r%d/commit.json", round);
    const char *uri = round % 2 ? file_uri(rel) : at(rel);
    int w = run_race(uri, NULL);
    char want[64];
    snprintf(want, sizeof want, "writer %d", w);
    CHECK(w >= 0 && content_is(uri, want));
    char dir[64];
    snprintf(dir, sizeof dir, "race/r%d", round);
    hs_store_entry *e = NULL;
    size_t n = 0;
    CHECK_OK(hs_store_list(at(dir), false, &e, &n, &err), &err);
    CHECK(n == 1 && strcmp(e[0].name, "commit.json") == 0); /* no temporaries */
    hs_store_entries_free(e, n);
    bool won = true;
    CHECK_OK(hs_store_put_if_absent(uri, "late", 4, &won, &err), &err);
    CHECK(!won && content_is(uri, want));
  }

  const char *uri = at("match/obj");
  hs_object_info v1, v2;
  CHECK_OK(hs_store_put(uri, "one", 3, &err), &err);
  CHECK_OK(hs_store_head(uri, &v1, &err), &err);
  bool won = false;
  CHECK_OK(hs_store_put_if_match(uri, "two", 3, v1.etag, &won, &err), &err);
  CHECK(won && content_is(uri, "two"));
  CHECK_OK(hs_store_head(uri, &v2, &err), &err);
  CHECK(strcmp(v1.etag, v2.etag) != 0);
  CHECK_OK(hs_store_put_if_match(uri, "three", 5, v1.etag, &won, &err), &err); /* stale */
  CHECK(!won && content_is(uri, "two"));
  CHECK_OK(hs_store_put_if_match(at("match/missing"), "x", 1, v2.etag, &won, &err), &err);
  CHECK(!won && access(at("match/missing"), F_OK) != 0);
  CHECK_OK(hs_store_put_if_match(at("nofolder/missing"), "x", 1, v2.etag, &won, &err), &err);
  CHECK(!won);
  for (int round = 0; round < 10; round++) { /* 8 writers from one etag: one wins */
    hs_object_info cur;
    CHECK_OK(hs_store_head(uri, &cur, &err), &err);
    int w = run_race(uri, cur.etag);
    char want[64];
    snprintf(want, sizeof want, "writer %d", w);
    CHECK(w >= 0 && content_is(uri, want));
  }
  CHECK(access(at("match/obj.lock"), F_OK) != 0);
  hs_store_entry *e = NULL;
  size_t n = 0;
  CHECK_OK(hs_store_list(at("match"), false, &e, &n, &err), &err);
  CHECK_EQ_INT(n, 1);
  hs_store_entries_free(e, n);
}

static void test_put_many(void) {
  hs_error err = {0};
  enum { N = 21 };
  hs_store_put_item items[N];
  char names[N][1100], bodies[N][32];
  for (int i = 0; i < N; i++) {
    char rel[64];
    snprintf(rel, sizeof rel, "many/d%d/f%02d", i % 3, i);
    snprintf(names[i], sizeof names[i], "%s", i % 2 ? file_uri(rel) : at(rel));
    snprintf(bodies[i], sizeof bodies[i], "body %d", i);
    items[i] = (hs_store_put_item){names[i], bodies[i], strlen(bodies[i])};
  }
  CHECK_OK(hs_store_put_many(items, N, &err), &err);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += !content_is(names[i], bodies[i]);
  CHECK_EQ_INT(bad, 0);

  /* all or nothing: one name exists already; the others are not left */
  for (int i = 0; i < N; i++) {
    char rel[64];
    snprintf(rel, sizeof rel, "many2/d%d/f%02d", i % 3, i);
    snprintf(names[i], sizeof names[i], "%s", at(rel));
  }
  CHECK_OK(hs_store_put(names[13], "old", 3, &err), &err);
  hs_error e2 = {0};
  CHECK(hs_store_put_many(items, N, &e2) == HS_ERR_IO);
  CHECK(contains(e2.message, names[13]));
  int left = 0;
  for (int i = 0; i < N; i++) left += i != 13 && access(names[i], F_OK) == 0;
  CHECK_EQ_INT(left, 0);
  CHECK(content_is(names[13], "old"));
  CHECK_OK(hs_store_put_many(items, 0, &err), &err);
}

/* -------------------------------------------------------------- lists */

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_list(void) {
  hs_error err = {0};
  enum { FILES = 120 };
  /* The record of what the test makes: files (relative to tree/) and the
   * top-level folders. */
  char *files[FILES];
  char *top[FILES + 8];
  size_t n_files = 0, n_top = 0;
  uint64_t seed = 42;
  static const char *const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_-.";
  while (n_files < FILES) {
    char rel[256] = "";
    int depth = (int)(hs_test_rand(&seed) % 4);
    size_t len = 0;
    for (int d = 0; d <= depth; d++) {
      int nl = 1 + (int)(hs_test_rand(&seed) % 3);
      if (d > 0) rel[len++] = '/';
      for (int k = 0; k < nl; k++) rel[len++] = alphabet[hs_test_rand(&seed) % 26]; /* letters */
      if (d == depth && hs_test_rand(&seed) % 2)
        rel[len++] = alphabet[26 + hs_test_rand(&seed) % 13];
      rel[len] = '\0';
    }
    /* a name already used as a folder (or a file used as one) is skipped */
    bool clash = false;
    for (size_t i = 0; i < n_files && !clash; i++) {
      size_t a = strlen(files[i]), b = strlen(rel);
      clash = strcmp(files[i], rel) == 0 ||
              (a < b && strncmp(files[i], rel, a) == 0 && rel[a] == '/') ||
              (b < a && strncmp(files[i], rel, b) == 0 && files[i][b] == '/');
    }
    if (clash) continue;
    char tree_rel[300];
    snprintf(tree_rel, sizeof tree_rel, "tree/%s", rel);
    hs_error e = {0};
    CHECK_OK(hs_store_put(at(tree_rel), rel, strlen(rel), &e), &e);
    files[n_files++] = strdup(rel);
  }
  /* an empty folder, a symbolic link (not an object) */
  CHECK_OK(hs_store_mkdirs(at("tree/zz_empty/inner"), &err), &err);
  CHECK(symlink(at("tree"), at("tree/zz_link")) == 0);
  /* brute force: the top level is every first segment, once */
  char *tops[FILES + 1];
  size_t n_tops = 0;
  for (size_t i = 0; i < n_files; i++) tops[n_tops++] = files[i];
  for (size_t i = 0; i < n_tops; i++) {
    const char *slash = strchr(tops[i], '/');
    top[n_top++] = slash ? strndup(tops[i], (size_t)(slash - tops[i])) : strdup(tops[i]);
  }
  top[n_top++] = strdup("zz_empty");
  qsort(top, n_top, sizeof *top, str_cmp);
  size_t w = 0;
  for (size_t i = 0; i < n_top; i++) {
    if (w > 0 && strcmp(top[w - 1], top[i]) == 0) {
      free(top[i]);
      continue;
    }
    top[w++] = top[i];
  }
  n_top = w;
  qsort(files, n_files, sizeof *files, str_cmp);

  hs_store_entry *e = NULL;
  size_t n = 0;
  CHECK_OK(hs_store_list(at("tree"), false, &e, &n, &err), &err);
  CHECK_EQ_INT(n, n_top);
  int bad = 0;
  for (size_t i = 0; i < n && i < n_top; i++) {
    bad += strcmp(e[i].name, top[i]) != 0;
    bool is_dir = false;
    for (size_t k = 0; k < n_files; k++)
      is_dir |= strncmp(files[k], top[i], strlen(top[i])) == 0 && files[k][strlen(top[i])] == '/';
    if (strcmp(top[i], "zz_empty") == 0) is_dir = true;
    bad += e[i].is_dir != is_dir;
    if (!is_dir) bad += e[i].info.size != strlen(top[i]) || e[i].info.etag[0] == '\0';
  }
  CHECK_EQ_INT(bad, 0);
  hs_store_entries_free(e, n);

  /* recursive, by URI with a trailing '/': files only, relative names */
  char dir_uri[1200];
  snprintf(dir_uri, sizeof dir_uri, "%s/", file_uri("tree"));
  CHECK_OK(hs_store_list(dir_uri, true, &e, &n, &err), &err);
  CHECK_EQ_INT(n, n_files);
  bad = 0;
  for (size_t i = 0; i < n && i < n_files; i++) {
    bad += strcmp(e[i].name, files[i]) != 0 || e[i].is_dir;
    bad += e[i].info.size != strlen(files[i]);
    hs_object_info h;
    char tree_rel[300];
    snprintf(tree_rel, sizeof tree_rel, "tree/%s", files[i]);
    bad += hs_store_head(at(tree_rel), &h, NULL) != HS_OK || strcmp(h.etag, e[i].info.etag) != 0;
  }
  CHECK_EQ_INT(bad, 0);
  hs_store_entries_free(e, n);

  CHECK_OK(hs_store_list(at("no/such/folder"), true, &e, &n, &err), &err);
  CHECK(n == 0 && e == NULL);
  CHECK_OK(hs_store_list(at("no/such/folder"), false, &e, &n, &err), &err);
  CHECK(n == 0 && e == NULL);
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_store_list(at("lh.txt"), false, &e, &n, &e2), HS_ERR_IO); /* a file */
  for (size_t i = 0; i < n_files; i++) free(files[i]);
  for (size_t i = 0; i < n_top; i++) free(top[i]);
}

/* ----------------------------------------------------- URIs and join */

static void test_uris(void) {
  CHECK(hs_store_kind_of("s3://bucket/k") == HS_STORE_S3);
  CHECK(hs_store_kind_of("/data/t") == HS_STORE_LOCAL);
  CHECK(hs_store_kind_of("file:///data/t") == HS_STORE_LOCAL);
  CHECK(hs_store_is_remote("s3://bucket"));
  CHECK(!hs_store_is_remote("relative/path"));

  hs_store_loc loc;
  hs_store_config cfg;
  hs_error err = {0};
  CHECK_OK(hs_store_resolve("s3://my-bucket.v2/tables/t1/data/a.parquet", &loc, &cfg, &err), &err);
  CHECK(loc.kind == HS_STORE_S3 && strcmp(loc.bucket, "my-bucket.v2") == 0);
  CHECK(strcmp(loc.key, "tables/t1/data/a.parquet") == 0 && loc.cfg == &cfg);
  CHECK_OK(hs_store_resolve("s3://abc", &loc, &cfg, &err), &err);
  CHECK(strcmp(loc.bucket, "abc") == 0 && strcmp(loc.key, "") == 0);
  CHECK_OK(hs_store_resolve("s3://abc/", &loc, &cfg, &err), &err);
  CHECK(strcmp(loc.key, "") == 0);
  CHECK_OK(hs_store_resolve("s3://abc/a..b/c.", &loc, &cfg, &err), &err); /* not segments */
  CHECK_OK(hs_store_resolve("file:///x/y", &loc, &cfg, &err), &err);
  CHECK(loc.kind == HS_STORE_LOCAL && strcmp(loc.path, "/x/y") == 0);
  CHECK_OK(hs_store_resolve("rel/y", &loc, &cfg, &err), &err);
  CHECK(strcmp(loc.path, "rel/y") == 0);

  char b63[80], b64[80];
  snprintf(b63, sizeof b63, "s3://%.63s/k",
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  snprintf(b64, sizeof b64, "s3://%.64s/k",
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  CHECK_OK(hs_store_resolve(b63, &loc, &cfg, &err), &err);
  const char *const bad[] = {"s3://",
                             "s3:///key",
                             "s3://ab/key",
                             b64,
                             "s3://Bucket/key",
                             "s3://buck_et/k",
                             "s3://b!b/k",
                             "s3://bucket/../x",
                             "s3://bucket/a/../b",
                             "s3://bucket/a/..",
                             "s3://bucket/./a",
                             "s3://bucket//a"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    hs_error e = {0};
    hs_status st = hs_store_resolve(bad[i], &loc, &cfg, &e);
    CHECK_EQ_INT(st, HS_ERR_INVALID_ARG);
    if (st != HS_ERR_INVALID_ARG || !contains(e.message, bad[i])) {
      fprintf(stderr, "  for %s: %s\n", bad[i], e.message);
      CHECK(contains(e.message, bad[i]));
    }
  }

  static const char *const joins[][3] = {
      {"s3://b/t", "data/x", "s3://b/t/data/x"},
      {"s3://b/t/", "/data/x", "s3://b/t/data/x"},
      {"s3://b", "k", "s3://b/k"},
      {"s3://", "b", "s3://b"},
      {"/a/b", "c", "/a/b/c"},
      {"/a/b//", "//c", "/a/b/c"},
      {"/", "c", "/c"},
      {"", "c", "c"},
      {"file:///", "x", "file:///x"},
      {"file:///a", "x/", "file:///a/x/"},
      {"rel", "x", "rel/x"},
  };
  for (size_t i = 0; i < sizeof joins / sizeof *joins; i++) {
    char *j = hs_store_join(joins[i][0], joins[i][1]);
    CHECK(j != NULL && strcmp(j, joins[i][2]) == 0);
    if (j != NULL && strcmp(j, joins[i][2]) != 0)
      fprintf(stderr, "  join(%s, %s) = %s\n", joins[i][0], joins[i][1], j);
    hs_free(j);
  }
  CHECK(hs_store_join(NULL, "x") == NULL);
}

/* ------------------------------------------------------------- options */

static const char *const k_env[] = {
    "AWS_ACCESS_KEY_ID",           "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
    "AWS_DEFAULT_REGION",          "AWS_ENDPOINT_URL_S3",   "AWS_ENDPOINT_URL",  "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"};

static void env_clear(void) {
  for (size_t i = 0; i < sizeof k_env / sizeof *k_env; i++) unsetenv(k_env[i]);
  setenv("HOME", at("home"), 1); /* never the real ~/.aws */
}

static hs_store_config resolved(const char *uri) {
  hs_store_config cfg;
  memset(&cfg, 0, sizeof cfg);
  hs_error err = {0};
  CHECK_OK(hs_store_config_resolve(uri, &cfg, &err), &err);
  return cfg;
}

static void test_configure(void) {
  env_clear();
  hs_error err = {0};
  hs_store_option bad_key[] = {{"region", "eu-west-1"}, {"aws_regoin", "x"}};
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_store_configure("s3://bucket-a", bad_key, 2, &e2), HS_ERR_INVALID_ARG);
  CHECK(contains(e2.message, "'aws_regoin'") && contains(e2.message, "s3://bucket-a"));
  CHECK(strcmp(resolved("s3://bucket-a/k").region, "us-east-1") == 0); /* nothing registered */
  hs_store_option bad_bool[] = {{"allow_http", "maybe"}};
  e2 = (hs_error){0};
  CHECK_EQ_INT(hs_store_configure("s3://bucket-a", bad_bool, 1, &e2), HS_ERR_INVALID_ARG);
  CHECK(contains(e2.message, "allow_http"));
  hs_store_option bad_num[] = {{"max_retries", "5x"}};
  e2 = (hs_error){0};
  CHECK_EQ_INT(hs_store_configure("s3://bucket-a", bad_num, 1, &e2), HS_ERR_INVALID_ARG);
  char longv[200];
  memset(longv, 'k', sizeof longv - 1);
  longv[sizeof longv - 1] = '\0';
  hs_store_option too_long[] = {{"s3.access-key-id", longv}};
  e2 = (hs_error){0};
  CHECK_EQ_INT(hs_store_configure("s3://bucket-a", too_long, 1, &e2), HS_ERR_INVALID_ARG);
  CHECK(!contains(e2.message, longv)); /* values are never echoed */

  hs_store_option a[] = {{"region", "eu-west-1"},
                         {"aws_access_key_id", "AKIA_A"},
                         {"aws_secret_access_key", "secret-a"},
                         {"s3.path-style-access", "true"},
                         {"request_timeout_ms", "1234"},
                         {"max_retries", "0"}};
  hs_store_option t[] = {{"s3.region", "ap-south-1"},
                         {"s3.endpoint", "http://127.0.0.1:9000"},
                         {"connect_timeout_ms", "77"}};
  CHECK_OK(hs_store_configure("s3://bucket-a", a, 6, &err), &err);
  CHECK_OK(hs_store_configure("s3://bucket-a/tables", t, 3, &err), &err);
  hs_store_config c = resolved("s3://bucket-a/tables/t1/metadata/v1.metadata.json");
  CHECK(strcmp(c.region, "ap-south-1") == 0 && strcmp(c.endpoint, "http://127.0.0.1:9000") == 0);
  CHECK(c.allow_http && !c.virtual_hosted && c.connect_timeout_ms == 77);
  CHECK(c.request_timeout_ms == 30000 && c.max_retries == 5); /* the longest prefix alone */
  CHECK(c.access_key[0] == '\0');
  c = resolved("s3://bucket-a/other/x");
  CHECK(strcmp(c.region, "eu-west-1") == 0 && strcmp(c.access_key, "AKIA_A") == 0);
  CHECK(strcmp(c.secret_key, "secret-a") == 0 && !c.virtual_hosted && !c.allow_http);
  CHECK(c.request_timeout_ms == 1234 && c.max_retries == 0 && c.connect_timeout_ms == 5000);
  c = resolved("s3://bucket-a/tablesX/k"); /* not at a path boundary */
  CHECK(strcmp(c.region, "eu-west-1") == 0);
  c = resolved("s3://bucket-ab/k");
  CHECK(strcmp(c.region, "us-east-1") == 0 && c.access_key[0] == '\0');

  /* replacing a prefix's options; removing them */
  hs_store_option a2[] = {{"aws_region", "eu-north-1"}, {"virtual_hosted_style_request", "yes"}};
  CHECK_OK(hs_store_configure("s3://bucket-a", a2, 2, &err), &err);
  c = resolved("s3://bucket-a/k");
  CHECK(strcmp(c.region, "eu-north-1") == 0 && c.access_key[0] == '\0' && c.virtual_hosted);
  CHECK_OK(hs_store_configure("s3://bucket-a", NULL, 0, &err), &err);
  CHECK_OK(hs_store_configure("s3://bucket-a/tables", NULL, 0, &err), &err);
  c = resolved("s3://bucket-a/tables/k");
  CHECK(strcmp(c.region, "us-east-1") == 0 && c.endpoint[0] == '\0');
}

static void write_text(const char *path, const char *text) {
  hs_test_spill(path, text, strlen(text));
}

static void test_resolution(void) {
  env_clear();
  hs_error err = {0};
  /* defaults */
  hs_store_config c = resolved("s3://bucket/k");
  CHECK(strcmp(c.region, "us-east-1") == 0 && strcmp(c.profile, "default") == 0);
  CHECK(c.access_key[0] == '\0' && c.endpoint[0] == '\0' && !c.allow_http && c.virtual_hosted);
  CHECK(c.request_timeout_ms == 30000 && c.connect_timeout_ms == 5000 && c.max_retries == 5);

  /* the files, through HOME */
  CHECK_OK(hs_store_mkdirs(at("home/.aws"), &err), &err);
  write_text(at("home/.aws/credentials"),
             "[default]\naws_access_key_id = HOMEKEY\naws_secret_access_key = homesecret\n");
  c = resolved("s3://bucket/k");
  CHECK(strcmp(c.access_key, "HOMEKEY") == 0 && strcmp(c.secret_key, "homesecret") == 0);

  /* the files named by the environment win over HOME's */
  write_text(at("creds.ini"),
             "# comment\n[default]\naws_access_key_id=DEFKEY\naws_secret_access_key = defsecret\n"
             "aws_session_token = deftoken\n\n[dev]\r\naws_access_key_id = DEVKEY\r\n"
             "  aws_secret_access_key   =   devsecret  \r\n[other]\naws_access_key_id = NO\n");
  write_text(at("config.ini"),
             "[default]\nregion = eu-central-1\n; comment\n[profile dev]\nregion = us-west-2\n"
             "endpoint_url = https://global.example\ns3 =\n  endpoint_url = http://minio:9000\n"
             "  addressing_style = path\nmax_attempts = 3\n[dev]\nregion = wrong\n");
  setenv("AWS_SHARED_CREDENTIALS_FILE", at("creds.ini"), 1);
  setenv("AWS_CONFIG_FILE", at("config.ini"), 1);
  c = resolved("s3://bucket/k");
  CHECK(strcmp(c.access_key, "DEFKEY") == 0 && strcmp(c.secret_key, "defsecret") == 0);
  CHECK(strcmp(c.session_token, "deftoken") == 0 && strcmp(c.region, "eu-central-1") == 0);
  CHECK(c.endpoint[0] == '\0' && c.virtual_hosted && !c.allow_http);

  setenv("AWS_PROFILE", "dev", 1);
  c = resolved("s3://bucket/k");
  CHECK(strcmp(c.profile, "dev") == 0 && strcmp(c.access_key, "DEVKEY") == 0);
  CHECK(strcmp(c.secret_key, "devsecret") == 0 && c.session_token[0] == '\0');
  CHECK(strcmp(c.region, "us-west-2") == 0 && strcmp(c.endpoint, "http://minio:9000") == 0);
  CHECK(c.allow_http && !c.virtual_hosted);

  /* a profile the files lack: nothing from them */
  setenv("AWS_PROFILE", "absent", 1);
  c = resolved("s3://bucket/k");
  CHECK(c.access_key[0] == '\0' && strcmp(c.region, "us-east-1") == 0);
  setenv("AWS_PROFILE", "dev", 1);

  /* the environment over the files; credentials as one unit */
  setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
  c = resolved("s3://bucket/k"); /* a key id without a secret is no credential */
  CHECK(strcmp(c.access_key, "DEVKEY") == 0);
  setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
  setenv("AWS_DEFAULT_REGION", "sa-east-1", 1);
  setenv("AWS_ENDPOINT_URL", "https://env.example", 1);
  c = resolved("s3://bucket/k");
  CHECK(strcmp(c.access_key, "ENVKEY") == 0 && strcmp(c.secret_key, "envsecret") == 0);
  CHECK(c.session_token[0] == '\0' && strcmp(c.region, "sa-east-1") == 0);
  CHECK(strcmp(c.endpoint, "https://env.example") == 0 && !c.allow_http && !c.virtual_hosted);
  setenv("AWS_SESSION_TOKEN", "envtoken", 1);
  setenv("AWS_REGION", "ca-central-1", 1);
  setenv("AWS_ENDPOINT_URL_S3", "http://s3env:9000", 1);
  c = resolved("s3://bucket/k");
  CHECK(strcmp(c.session_token, "envtoken") == 0 && strcmp(c.region, "ca-central-1") == 0);
  CHECK(strcmp(c.endpoint, "http://s3env:9000") == 0 && c.allow_http);

  /* registered options over the environment; a registered profile picks
   * its file credentials over the environment's */
  hs_store_option o[] = {{"s3.access-key-id", "REGKEY"},
                         {"s3.secret-access-key", "regsecret"},
                         {"region", "me-south-1"},
                         {"allow_http", "false"}};
  CHECK_OK(hs_store_configure("s3://bucket", o, 4, &err), &err);
  c = resolved("s3://bucket/k");
  CHECK(strcmp(c.access_key, "REGKEY") == 0 && c.session_token[0] == '\0');
  CHECK(strcmp(c.region, "me-south-1") == 0 && !c.allow_http);
  CHECK(strcmp(c.endpoint, "http://s3env:9000") == 0);
  hs_store_option p[] = {{"profile", "default"}};
  CHECK_OK(hs_store_configure("s3://bucket", p, 1, &err), &err);
  c = resolved("s3://bucket/k");
  CHECK(strcmp(c.profile, "default") == 0 && strcmp(c.access_key, "DEFKEY") == 0);
  CHECK(strcmp(c.session_token, "deftoken") == 0 && strcmp(c.region, "ca-central-1") == 0);
  CHECK_OK(hs_store_configure("s3://bucket", NULL, 0, &err), &err);

  /* a rewritten file is read again */
  env_clear();
  setenv("AWS_CONFIG_FILE", at("config.ini"), 1);
  CHECK(strcmp(resolved("s3://bucket/k").region, "eu-central-1") == 0);
  write_text(at("config.ini"), "[default]\nregion = af-south-1\n\n");
  CHECK(strcmp(resolved("s3://bucket/k").region, "af-south-1") == 0);
  /* an unreadable configuration file is an error naming it, never ignored */
  setenv("AWS_CONFIG_FILE", at("home"), 1); /* a folder */
  hs_store_config cfg;
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_store_config_resolve("s3://bucket/k", &cfg, &e2), HS_ERR_IO);
  CHECK(contains(e2.message, at("home")));
  env_clear();
}

/* ------------------------------------------------- custom source, sink */

typedef struct mem_impl {
  const uint8_t *bytes;
  size_t len;
  int reads, closes;
} mem_impl;

static hs_status mem_read(void *impl, uint64_t offset, size_t len, void *dst, hs_error *err) {
  mem_impl *m = impl;
  m->reads++;
  if (offset + len > m->len) return hs_error_set(err, HS_ERR_INTERNAL, "read past the end");
  memcpy(dst, m->bytes + offset, len);
  return HS_OK;
}

static void mem_close(void *impl) {
  ((mem_impl *)impl)->closes++;
}

typedef struct rec_impl {
  hs_buf got;
  size_t chunks[64];
  int n_chunks, closes, aborts;
} rec_impl;

static hs_status rec_write(void *impl, const void *data, size_t len, hs_error *err) {
  rec_impl *r = impl;
  if (r->n_chunks < 64) r->chunks[r->n_chunks] = len;
  r->n_chunks++;
  if (!hs_buf_append(&r->got, data, len)) return hs_error_set(err, HS_ERR_NOMEM, "oom");
  return HS_OK;
}

static hs_status rec_close(void *impl, hs_error *err) {
  ((rec_impl *)impl)->closes++;
  return HS_OK;
}

static void rec_abort(void *impl) {
  ((rec_impl *)impl)->aborts++;
}

static void test_custom(void) {
  hs_error err = {0};
  uint8_t bytes[3000];
  uint64_t seed = 3;
  for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (uint8_t)hs_test_rand(&seed);
  mem_impl m = {bytes, sizeof bytes, 0, 0};
  static const hs_source_ops mops = {mem_read, mem_close};
  hs_object_info info = {.size = sizeof bytes};
  hs_source *src = NULL;
  CHECK_OK(hs_source_open_custom("s3://bucket/obj", &info, &mops, &m, &src, &err), &err);
  CHECK(hs_source_size(src) == sizeof bytes && strcmp(hs_source_name(src), "s3://bucket/obj") == 0);
  CHECK(!hs_source_is_file(src));
  hs_fs_stamp stamp;
  CHECK(!hs_source_stamp(src, &stamp));
  uint8_t dst[100];
  CHECK_OK(hs_source_read(src, 100, 100, dst, &err), &err);
  CHECK(memcmp(dst, bytes + 100, 100) == 0 && m.reads == 1);
  CHECK_OK(hs_source_read_unmapped(src, 2900, 100, dst, &err), &err);
  CHECK(memcmp(dst, bytes + 2900, 100) == 0);
  hs_buf scratch;
  hs_buf_init(&scratch);
  const uint8_t *view = NULL;
  CHECK_OK(hs_source_view(src, 1000, 500, &scratch, &view, &err), &err);
  CHECK(view == scratch.data && memcmp(view, bytes + 1000, 500) == 0);
  int reads = m.reads;
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_source_read(src, 2999, 2, dst, &e2), HS_ERR_CORRUPT); /* checked before */
  CHECK(m.reads == reads && contains(e2.message, "s3://bucket/obj"));
  hs_source_ref(src);
  hs_source_unref(src);
  CHECK_EQ_INT(m.closes, 0);
  hs_source_unref(src);
  CHECK_EQ_INT(m.closes, 1);
  hs_buf_free(&scratch);

  /* sink: small writes gather into >= 1 MiB chunks; a big one goes through */
  static const hs_sink_ops sops = {rec_write, rec_close, rec_abort};
  rec_impl r;
  memset(&r, 0, sizeof r);
  hs_sink *sink = NULL;
  CHECK_OK(hs_sink_open_custom("s3://bucket/out", &sops, &r, &sink, &err), &err);
  enum { TOTAL = (7 << 20) / 2 };
  uint8_t *input = malloc(TOTAL + (2 << 20));
  for (size_t i = 0; i < TOTAL + (2 << 20); i++) input[i] = (uint8_t)(i * 31 + 7);
  size_t off = (3 << 20) / 2; /* nothing pending: straight through */
  CHECK_OK(hs_sink_write(sink, input, off, &err), &err);
  CHECK(r.n_chunks == 1 && r.chunks[0] == off);
  while (off < TOTAL) {
    size_t len = 1 + (size_t)(hs_test_rand(&seed) % 70000);
    if (len > TOTAL - off) len = TOTAL - off;
    CHECK_OK(hs_sink_write(sink, input + off, len, &err), &err);
    off += len;
  }
  CHECK_OK(hs_sink_write(sink, input + off, 2 << 20, &err), &err); /* joins what is pending */
  off += 2 << 20;
  CHECK(hs_sink_offset(sink) == off);
  CHECK_OK(hs_sink_close(sink, &err), &err);
  CHECK(r.got.len == off && memcmp(r.got.data, input, off) == 0);
  int small = 0;
  for (int i = 0; i + 1 < r.n_chunks && i < 64; i++) small += r.chunks[i] < (1u << 20);
  CHECK_EQ_INT(small, 0);
  CHECK(r.n_chunks >= 3 && r.closes == 1 && r.aborts == 0);
  hs_buf_free(&r.got);

  memset(&r, 0, sizeof r);
  CHECK_OK(hs_sink_open_custom("s3://bucket/out", &sops, &r, &sink, &err), &err);
  CHECK_OK(hs_sink_write(sink, input, 10, &err), &err);
  hs_sink_abort(sink);
  CHECK(r.closes == 0 && r.aborts == 1 && r.got.len == 0);
  memset(&r, 0, sizeof r);
  CHECK_OK(hs_sink_open_custom("s3://bucket/out", &sops, &r, &sink, &err), &err);
  int fd = 0;
  e2 = (hs_error){0};
  CHECK_EQ_INT(hs_sink_close_unsynced(sink, &fd, &e2), HS_ERR_UNSUPPORTED);
  CHECK(fd == -1 && r.aborts == 1 && r.closes == 0);
  hs_buf_free(&r.got);
  free(input);

  /* the local backend's own source and sink */
  hs_store_loc loc;
  hs_store_config cfg;
  CHECK_OK(hs_store_resolve(file_uri("sink/deep/out.bin"), &loc, &cfg, &err), &err);
  CHECK_OK(hs_store_local_backend.sink_open(&loc, &sink, &err), &err);
  if (sink != NULL) {
    CHECK_OK(hs_sink_write(sink, bytes, sizeof bytes, &err), &err);
    CHECK_OK(hs_sink_close(sink, &err), &err);
  }
  CHECK_OK(hs_store_local_backend.source_open(&loc, &src, &err), &err);
  if (src != NULL) {
    CHECK_OK(hs_source_read(src, 0, sizeof bytes, input = malloc(sizeof bytes), &err), &err);
    CHECK(memcmp(input, bytes, sizeof bytes) == 0);
    free(input);
    hs_source_unref(src);
  }
}

int main(void) {
  snprintf(root, sizeof root, "/tmp/hs_test_store_XXXXXX");
  if (mkdtemp(root) == NULL) return 1;
  test_basics();
  test_get_ranges();
  test_conditional();
  test_put_many();
  test_list();
  test_uris();
  test_configure();
  test_resolution();
  test_custom();
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (hs_test_failures == 0 && system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", root);
  return hs_test_finish("test_store");
}
