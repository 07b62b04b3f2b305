/*
 * test_maintenance.c — hs_table_remove_orphan_files (src/table/orphans.c):
 * junk under data/ (nested too) and index/ is listed by a dry run and then
 * removed; every snapshot still scans completely; links, files outside the
 * three folders and files newer than the cut-off stay; an unreadable
 * manifest list stops the call with nothing removed. hs_table_expire_snapshots
 * (src/table/expire.c): a dry run changes nothing; the current snapshot, a
 * tagged one and the last N stay, the others' manifest lists go, time travel
 * to them is NOT_FOUND. Runs under ASan too. (tests/python/test_maintenance.py
 * checks both against pyiceberg's view of the table.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

int main(void) {
  test_expire();
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
  /* dry run: exactly the three junk files, nothing removed */
  int64_t cut = now_ms() + 3600 * 1000;
  CHECK_OK(hs_table_remove_orphan_files(t, cut, 1, &f, &n, &e), &e);
  CHECK_EQ_INT(n, 3);
  for (int i = 0; i < 3; i++) CHECK(listed(f, n, p[i]) && access(p[i], F_OK) == 0);
  for (size_t i = 0; i < n; i++) CHECK_EQ_INT(f[i].size, 4);
  hs_free(f);
  CHECK_OK(hs_table_remove_orphan_files(t, cut, 0, &f, &n, &e), &e);
  CHECK_EQ_INT(n, 3);
  hs_free(f);
  for (int i = 0; i < 3; i++) CHECK(access(p[i], F_OK) != 0);
  CHECK(access(outside, F_OK) == 0 && access(link, F_OK) == 0);
  for (int i = 0; i < 3; i++) CHECK_EQ_INT(scan_rows(t, snaps[i]), (i + 1) * 100);
  CHECK_OK(hs_table_remove_orphan_files(t, cut, 0, &f, &n, &e), &e);
  CHECK_EQ_INT(n, 0);

  /* an unreadable manifest list: an error naming it, nothing removed */
  put(p[0], "junk");
  const hs_iceberg_snapshot *first = hs_iceberg_metadata_snapshot(&t->meta, snaps[0]);
  CHECK(first != NULL);
  char *ml = NULL;
  CHECK_OK(hs_table_resolve_path(t, first->manifest_list, "test", &ml, &e), &e);
  CHECK_EQ_INT(truncate(ml, 10), 0);
  CHECK(hs_table_remove_orphan_files(t, cut, 0, &f, &n, &e) != HS_OK);
  CHECK(strstr(e.message, strrchr(ml, '/') + 1) != NULL);
  CHECK(access(p[0], F_OK) == 0);
  hs_free(ml);
  hs_table_free(t);

  char cmd[4300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", root);
  return hs_test_finish("test_maintenance");
}
