/*
 * test_maintenance.c — hs_table_remove_orphan_files (src/table/orphans.c):
 * junk under data/ (nested too) and index/ is listed by a dry run and then
 * removed; every snapshot still scans completely; links, files outside the
 * three folders and files newer than the cut-off stay; an unreadable
 * manifest list stops the call with nothing removed. hs_table_expire_snapshots
 * (src/table/expire.c): a dry run changes nothing; the current snapshot, a
 * tagged one and the last N stay, the others' manifest lists go, time travel
 * to them is NOT_FOUND. The floor (HS_ORPHAN_MIN_AGE_MS) keeps young files
 * unless HS_ORPHAN_FORCE. Racing (issue 12): an append blocked at the
 * publish lock whose data file a sweep removed fails cleanly with nothing
 * committed; an index file that vanished is not registered; forked writers
 * and two maintainers (forced sweeps at cut-off now, expiry) lose no
 * acknowledged append and report no error. Runs under ASan too.
 * (tests/python/test_maintenance.py checks both against pyiceberg's view of
 * the table; tests/python/test_maintenance_race.py races them.)
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hs_test.h"
#include "hs_table_fixture3.h"
#include "table/table.h"

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f == NULL) return;
  fputs(text, f);
  fclose(f);
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t scan_rows(hs_table *t, int64_t snap) {
  hs_error e = {0};
  struct ArrowArrayStream st;
  CHECK_OK(hs_table_scan(t, snap, NULL, 0, &st, &e), &e);
  int64_t n = 0;
  for (;;) {
    struct ArrowArray b;
    CHECK_EQ_INT(st.get_next(&st, &b), 0);
    if (b.release == NULL) break;
    n += b.length;
    b.release(&b);
  }
  st.release(&st);
  return n;
}

static bool listed(const hs_table_orphan_file *f, size_t n, const char *path) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(f[i].path, path) == 0) return true;
  return false;
}

static void append_n(hs_table *t, int64_t first, int64_t n, int64_t *snap) {
  hs_error e = {0};
  struct ArrowArray b;
  make_batch(&b, first, n);
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArrayStream st;
  CHECK_OK(hs_arrow_stream_from_batches(&s, &b, 1, &st, &e), &e);
  CHECK_OK(hs_table_append(t, &st, snap, &e), &e);
}

static void test_expire(void) {
  char tmpl[] = "/tmp/hs_expire_XXXXXX";
  char *root = mkdtemp(tmpl);
  CHECK(root != NULL);
  if (root == NULL) return;
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, NULL, &t, &e), &e);
  s.release(&s);
  int64_t snaps[5];
  for (int i = 0; i < 5; i++) append_n(t, i * 100, 100, &snaps[i]);
  CHECK_OK(hs_table_create_tag(t, "keep", snaps[1], -1, &e), &e);
  int64_t *ids = NULL;
  size_t n_ids = 0, n_files = 0;
  hs_table_orphan_file *files = NULL;
  int64_t cut = now_ms() + 3600 * 1000;
  for (int dry = 1; dry >= 0; dry--) {
    CHECK_OK(hs_table_expire_snapshots(t, cut, 2, dry, &ids, &n_ids, &files, &n_files, &e), &e);
    CHECK_EQ_INT(n_ids, 2); /* s0 and s2: s1 is tagged, s3 and s4 the last two */
    CHECK(n_ids == 2 && ids[0] == snaps[0] && ids[1] == snaps[2]);
    CHECK_EQ_INT(n_files, 2); /* their manifest lists; manifests and data are shared */
    for (size_t i = 0; i < n_files; i++) {
      CHECK(strstr(files[i].path, "/metadata/snap-") != NULL);
      CHECK_EQ_INT(access(files[i].path, F_OK) == 0, dry);
    }
    hs_free(ids);
    hs_free(files);
    if (dry) { /* a dry run changed nothing */
      CHECK_EQ_INT(t->meta.n_snapshots, 5);
      CHECK_EQ_INT(scan_rows(t, snaps[0]), 100);
    }
  }
  CHECK_EQ_INT(t->meta.n_snapshots, 3);
  struct ArrowArrayStream st;
  CHECK_EQ_INT(hs_table_scan(t, snaps[0], NULL, 0, &st, &e), HS_ERR_NOT_FOUND);
  CHECK_EQ_INT(scan_rows(t, snaps[1]), 200);
  CHECK_EQ_INT(scan_rows(t, -1), 500);
  /* nothing more to expire */
  CHECK_OK(hs_table_expire_snapshots(t, cut, 2, 0, &ids, &n_ids, &files, &n_files, &e), &e);
  CHECK(n_ids == 0 && ids == NULL && n_files == 0 && files == NULL);
  hs_table_free(t);
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", root);
}

#define FORCE HS_ORPHAN_FORCE

/* Names in `dir` starting with `prefix`, into v (at most cap); the count. */
static size_t names(const char *dir, const char *prefix, char (*v)[256], size_t cap) {
  DIR *d = opendir(dir);
  size_t n = 0;
  if (d == NULL) return 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strncmp(de->d_name, prefix, strlen(prefix)) == 0) {
      if (n < cap) snprintf(v[n], sizeof v[n], "%s", de->d_name);
      n++;
    }
  closedir(d);
  return n;
}

typedef struct append_job {
  hs_table *t;
  int64_t first;
  hs_status st;
  hs_error err;
} append_job;

static void *append_thread(void *arg) {
  append_job *j = arg;
  struct ArrowArray b;
  make_batch(&b, j->first, 10);
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArrayStream st;
  j->st = hs_arrow_stream_from_batches(&s, &b, 1, &st, &j->err);
  if (j->st == HS_OK) j->st = hs_table_append(j->t, &st, NULL, &j->err);
  return NULL;
}

/* An append waits at the publish lock a sweep holds; round 0: nothing is
 * removed meanwhile and it commits once the lock is released; round 1: its
 * data file is removed meanwhile and it fails before publishing. Then an
 * index registration naming a vanished index file is refused. */
static void test_recheck(void) {
  char tmpl[] = "/tmp/hs_recheck_XXXXXX";
  char *root = mkdtemp(tmpl);
  CHECK(root != NULL);
  if (root == NULL) return;
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, NULL, &t, &e), &e);
  s.release(&s);
  append_n(t, 0, 100, NULL);
  char ddir[4200], mdir[4200];
  snprintf(ddir, sizeof ddir, "%s/data", root);
  snprintf(mdir, sizeof mdir, "%s/metadata", root);
  static char before[64][256], after[64][256];
  for (int round = 0; round < 2; round++) {
    hs_table *w = NULL;
    CHECK_OK(hs_table_open(root, &w, &e), &e);
    size_t n_data = names(ddir, "", before, 64);
    size_t n_lists = names(mdir, "snap-", after, 64);
    int64_t version = w->version;
    int fd = -1;
    CHECK_OK(hs_table_publish_lock(t, true, &fd, &e), &e);
    append_job job = {.t = w, .first = 1000 + round * 100};
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, append_thread, &job), 0);
    for (int i = 0; i < 10000 && names(mdir, "snap-", after, 64) == n_lists; i++) usleep(1000);
    CHECK(names(mdir, "snap-", after, 64) > n_lists); /* its list is written: it waits */
    usleep(20000);
    if (round == 1) { /* the sweep takes the new data file */
      size_t m = names(ddir, "", after, 64);
      int removed = 0;
      for (size_t i = 0; i < m && i < 64; i++) {
        bool old = false;
        for (size_t k = 0; k < n_data && k < 64; k++) old = old || strcmp(after[i], before[k]) == 0;
        char path[4600];
        snprintf(path, sizeof path, "%s/%s", ddir, after[i]);
        if (!old && strstr(after[i], ".parquet") != NULL) removed += unlink(path) == 0;
      }
      CHECK_EQ_INT(removed, 1);
    }
    hs_table_publish_unlock(fd);
    CHECK_EQ_INT(pthread_join(th, NULL), 0);
    if (round == 0) {
      CHECK_OK(job.st, &job.err);
    } else {
      CHECK_EQ_INT(job.st, HS_ERR_IO);
      CHECK(strstr(job.err.message, "was removed before the commit published") != NULL);
      CHECK(strstr(job.err.message, "nothing was committed") != NULL);
      CHECK_OK(hs_table_load_latest(w, &e), &e);
      CHECK_EQ_INT(w->version, version);                      /* nothing published */
      CHECK_EQ_INT(names(mdir, "snap-", after, 64), n_lists); /* its list removed */
      CHECK_EQ_INT(names(mdir, ".tmp", after, 64), 0);
    }
    hs_table_free(w);
  }
  CHECK_OK(hs_table_load_latest(t, &e), &e);
  CHECK_EQ_INT(scan_rows(t, -1), 110);

  /* an index build's file that vanished before registration */
  size_t m = names(ddir, "", after, 64);
  CHECK(m > 0);
  char data[4600], gone[4300];
  snprintf(data, sizeof data, "%s/%s", ddir, after[0]);
  snprintf(gone, sizeof gone, "%s/index/gone.puffin", root);
  struct stat sb;
  CHECK_EQ_INT(stat(data, &sb), 0);
  char *cols[] = {"id"};
  int32_t fids[] = {1};
  hs_table_index_entry en = {.data_file = data,
                             .file_size = (int64_t)sb.st_size,
                             .index_file = gone,
                             .columns = cols,
                             .n_columns = 1,
                             .field_ids = fids};
  int64_t version = t->version;
  CHECK_EQ_INT(hs_table_index_register(t, &en, 1, &e), HS_ERR_IO);
  CHECK(strstr(e.message, "gone.puffin") != NULL && strstr(e.message, "removed before") != NULL);
  CHECK_OK(hs_table_load_latest(t, &e), &e);
  CHECK_EQ_INT(t->version, version);
  hs_table_free(t);
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", root);
}

/* Forked: 3 writers x RACE_APPENDS appends of 10 rows, two maintainers
 * sweeping (forced: every unreachable file older than 20 ms) and expiring
 * (all but the last 2) in a loop until the writers are done. A maintainer
 * exits 1 on any error; a writer reports its acknowledged appends through
 * its exit status and fails only with the re-check's error. Every
 * acknowledged row is there exactly once, nothing else. */
#define RACE_WRITERS 3
#define RACE_APPENDS 25

static void test_race(void) {
  char tmpl[] = "/tmp/hs_race_XXXXXX";
  char *root = mkdtemp(tmpl);
  CHECK(root != NULL);
  if (root == NULL) return;
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, NULL, &t, &e), &e);
  s.release(&s);
  hs_table_free(t);
  pid_t wp[RACE_WRITERS], mp[2];
  for (int w = 0; w < RACE_WRITERS; w++) {
    if ((wp[w] = fork()) == 0) {
      hs_table *h = NULL;
      hs_error e2 = {0};
      if (hs_table_open(root, &h, &e2) != HS_OK) {
        fprintf(stderr, "writer %d: open: %s\n", w, e2.message);
        _exit(255);
      }
      int acked = 0;
      uint64_t bits = 0; /* which appends were acknowledged, into a file */
      for (int k = 0; k < RACE_APPENDS; k++) {
        struct ArrowArray b;
        make_batch(&b, (int64_t)w * 100000 + k * 10, 10);
        struct ArrowSchema s2;
        make_schema(&s2);
        struct ArrowArrayStream st;
        hs_status rc = hs_arrow_stream_from_batches(&s2, &b, 1, &st, &e2);
        if (rc == HS_OK) rc = hs_table_append(h, &st, NULL, &e2);
        if (rc == HS_OK) {
          acked++;
          bits |= 1ull << k;
        } else if (strstr(e2.message, "removed before the commit published") == NULL) {
          fprintf(stderr, "writer %d: %s\n", w, e2.message);
          _exit(254);
        }
      }
      char path[4300];
      snprintf(path, sizeof path, "%s/acked-%d", root, w);
      FILE *f = fopen(path, "w");
      if (f == NULL || fprintf(f, "%llu\n", (unsigned long long)bits) < 0 || fclose(f) != 0)
        _exit(253);
      hs_table_free(h);
      _exit(acked);
    }
  }
  for (int m = 0; m < 2; m++) {
    if ((mp[m] = fork()) == 0) {
      hs_table *h = NULL;
      hs_error e2 = {0};
      if (hs_table_open(root, &h, &e2) != HS_OK) _exit(1);
      for (;;) {
        hs_table_orphan_file *f = NULL;
        int64_t *ids = NULL;
        size_t n = 0, n_ids = 0;
        if (hs_table_remove_orphan_files(h, now_ms() - 20, FORCE, &f, &n, &e2) != HS_OK) {
          fprintf(stderr, "maintainer %d: remove_orphan_files: %s\n", m, e2.message);
          _exit(1);
        }
        hs_free(f);
        if (hs_table_expire_snapshots(h, now_ms() + 1000, 2, 0, &ids, &n_ids, &f, &n, &e2) !=
            HS_OK) {
          fprintf(stderr, "maintainer %d: expire_snapshots: %s\n", m, e2.message);
          _exit(1);
        }
        hs_free(ids);
        hs_free(f);
        usleep(2000); /* let some appends through */
      }
    }
  }
  int acked = 0;
  for (int w = 0; w < RACE_WRITERS; w++) {
    int status = 0;
    CHECK_EQ_INT(waitpid(wp[w], &status, 0), wp[w]);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) <= RACE_APPENDS);
    acked += WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  }
  for (int m = 0; m < 2; m++) { /* still running: no error so far */
    int status = 0;
    CHECK_EQ_INT(waitpid(mp[m], &status, WNOHANG), 0);
    kill(mp[m], SIGKILL);
    waitpid(mp[m], &status, 0);
  }
  CHECK(acked >= 1); /* the race let appends through (how many depends on timing) */
  CHECK_OK(hs_table_open(root, &t, &e), &e);
  /* every acknowledged append's rows, nothing else, each once */
  struct ArrowArrayStream st;
  CHECK_OK(hs_table_scan(t, -1, NULL, 0, &st, &e), &e);
  static unsigned char seen[RACE_WRITERS][RACE_APPENDS * 10];
  memset(seen, 0, sizeof seen);
  int64_t rows = 0;
  for (;;) {
    struct ArrowArray b;
    CHECK_EQ_INT(st.get_next(&st, &b), 0);
    if (b.release == NULL) break;
    const int64_t *id = (const int64_t *)b.children[0]->buffers[1] + b.children[0]->offset;
    for (int64_t i = 0; i < b.length; i++) {
      int64_t w = id[i] / 100000, k = id[i] % 100000;
      CHECK(w >= 0 && w < RACE_WRITERS && k >= 0 && k < RACE_APPENDS * 10);
      if (w >= 0 && w < RACE_WRITERS && k >= 0 && k < RACE_APPENDS * 10) seen[w][k]++;
    }
    rows += b.length;
    b.release(&b);
  }
  st.release(&st);
  for (int w = 0; w < RACE_WRITERS; w++) {
    char path[4300];
    snprintf(path, sizeof path, "%s/acked-%d", root, w);
    FILE *f = fopen(path, "r");
    unsigned long long bits = 0;
    CHECK(f != NULL && fscanf(f, "%llu", &bits) == 1);
    if (f != NULL) fclose(f);
    for (int k = 0; k < RACE_APPENDS * 10; k++) CHECK_EQ_INT(seen[w][k], (bits >> (k / 10)) & 1);
  }
  CHECK_EQ_INT(rows, acked * 10);
  printf("race: %d of %d appends acknowledged\n", acked, RACE_WRITERS * RACE_APPENDS);
  hs_table_free(t);
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", root);
}

int main(void) {
  test_expire();
  test_recheck();
  test_race();
  char tmpl[] = "/tmp/hs_orphans_XXXXXX";
  char *root = mkdtemp(tmpl);
  CHECK(root != NULL);
  if (root == NULL) return hs_test_finish("test_maintenance");
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, NULL, &t, &e), &e);
  s.release(&s);
  int64_t snaps[3];
  for (int i = 0; i < 3; i++) {
    struct ArrowArray b;
    make_batch(&b, i * 100, 100);
    struct ArrowSchema s2;
    make_schema(&s2);
    struct ArrowArrayStream st;
    CHECK_OK(hs_arrow_stream_from_batches(&s2, &b, 1, &st, &e), &e);
    CHECK_OK(hs_table_append(t, &st, &snaps[i], &e), &e);
  }
  char p[3][4200], nested[4200], link[4200], outside[4200];
  snprintf(p[0], sizeof p[0], "%s/data/junk.parquet", root);
  snprintf(p[1], sizeof p[1], "%s/index", root);
  mkdir(p[1], 0755);
  snprintf(p[1], sizeof p[1], "%s/index/junk.puffin", root);
  snprintf(nested, sizeof nested, "%s/data/k=1", root);
  mkdir(nested, 0755);
  snprintf(p[2], sizeof p[2], "%s/data/k=1/deep.parquet", root);
  for (int i = 0; i < 3; i++) put(p[i], "junk");
  snprintf(outside, sizeof outside, "%s/NOTES.txt", root);
  put(outside, "the user's");
  snprintf(link, sizeof link, "%s/data/link.parquet", root);
  CHECK_EQ_INT(symlink(outside, link), 0);

  hs_table_orphan_file *f = NULL;
  size_t n = 0;
  /* too young for a cut-off an hour ago */
  CHECK_OK(hs_table_remove_orphan_files(t, now_ms() - 3600 * 1000, 0, &f, &n, &e), &e);
  CHECK_EQ_INT(n, 0);
  CHECK(f == NULL);
  /* the floor: a later cut-off is moved back to an hour ago unless forced;
   * a dry run lists what the same call would remove */
  int64_t cut = now_ms() + 3600 * 1000;
  CHECK_OK(hs_table_remove_orphan_files(t, cut, 0, &f, &n, &e), &e);
  CHECK_EQ_INT(n, 0);
  CHECK_OK(hs_table_remove_orphan_files(t, cut, HS_ORPHAN_DRY_RUN, &f, &n, &e), &e);
  CHECK_EQ_INT(n, 0);
  for (int i = 0; i < 3; i++) CHECK(access(p[i], F_OK) == 0);
  /* dry run: exactly the three junk files, nothing removed */
  CHECK_OK(hs_table_remove_orphan_files(t, cut, FORCE | HS_ORPHAN_DRY_RUN, &f, &n, &e), &e);
  CHECK_EQ_INT(n, 3);
  for (int i = 0; i < 3; i++) CHECK(listed(f, n, p[i]) && access(p[i], F_OK) == 0);
  for (size_t i = 0; i < n; i++) CHECK_EQ_INT(f[i].size, 4);
  hs_free(f);
  CHECK_OK(hs_table_remove_orphan_files(t, cut, FORCE, &f, &n, &e), &e);
  CHECK_EQ_INT(n, 3);
  hs_free(f);
  for (int i = 0; i < 3; i++) CHECK(access(p[i], F_OK) != 0);
  CHECK(access(outside, F_OK) == 0 && access(link, F_OK) == 0);
  for (int i = 0; i < 3; i++) CHECK_EQ_INT(scan_rows(t, snaps[i]), (i + 1) * 100);
  CHECK_OK(hs_table_remove_orphan_files(t, cut, FORCE, &f, &n, &e), &e);
  CHECK_EQ_INT(n, 0);

  /* an unreadable manifest list: an error naming it, nothing removed */
  put(p[0], "junk");
  const hs_iceberg_snapshot *first = hs_iceberg_metadata_snapshot(&t->meta, snaps[0]);
  CHECK(first != NULL);
  char *ml = NULL;
  CHECK_OK(hs_table_resolve_path(t, first->manifest_list, "test", &ml, &e), &e);
  CHECK_EQ_INT(truncate(ml, 10), 0);
  CHECK(hs_table_remove_orphan_files(t, cut, FORCE, &f, &n, &e) != HS_OK);
  CHECK(strstr(e.message, strrchr(ml, '/') + 1) != NULL);
  CHECK(access(p[0], F_OK) == 0);
  hs_free(ml);
  hs_table_free(t);

  char cmd[4300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", root);
  return hs_test_finish("test_maintenance");
}
