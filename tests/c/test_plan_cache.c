/*
 * test_plan_cache.c — the per-process cache of scan plans (src/table/plan.c):
 * a second plan of a snapshot borrows the first one's, plans of different
 * snapshots never mix, a lent plan outlives its table handle and the
 * cache's eviction, and a manifest changed on disk (size or mtime) is read
 * again instead of being answered from the cache. Plans of new snapshots
 * are incremental (src/table/plan_manifests.c): each parses only the
 * manifests its snapshot added, the others served parsed, and plans the
 * same files as a plan made with every manifest parsed afresh.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "hs_table_fixture.h"
#include "table/plan_manifests.h"
#include "table/table.h"

/* Sum of the planned files' record counts: the rows a snapshot holds. */
static int64_t plan_rows(const hs_table_plan *p) {
  int64_t n = 0;
  for (size_t i = 0; i < p->n_files; i++) n += p->files[i].data_file->record_count;
  return n;
}

/* The paths of the data manifests (metadata/ files ending .avro that are not a
 * snapshot's manifest list) into out[], at most cap; returns the count. */
static int list_manifests(const char *root, char out[][4096], int cap) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%.1000s/metadata", root);
  DIR *d = opendir(dir);
  if (d == NULL) return 0;
  int k = 0;
  struct dirent *de;
  while (k < cap && (de = readdir(d)) != NULL) {
    size_t n = strlen(de->d_name);
    if (n > 5 && strcmp(de->d_name + n - 5, ".avro") == 0 && strncmp(de->d_name, "snap-", 5) != 0)
      snprintf(out[k++], 4096, "%s/%.255s", dir, de->d_name);
  }
  closedir(d);
  return k;
}

int main(void) {
  hs_error e = {0};
  char *root = hs_test_temp_root("plancache");
  CHECK(root != NULL);
  if (root == NULL) return hs_test_finish("test_plan_cache");
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options to;
  hs_table_options_init(&to);
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, &to, &t, &e), &e);
  s.release(&s);
  if (t == NULL) return hs_test_finish("test_plan_cache");

  /* Twelve snapshots of 10, 20, ... rows: more than the cache holds. Each
   * one's plan, made right after its append, parses only the manifest the
   * append wrote (one per append); the earlier ones are served parsed. */
  int64_t snaps[12];
  for (int i = 0; i < 12; i++) {
    snaps[i] = append_rows(t, (int64_t)i * 10, 10);
    uint64_t parsed0, served0, parsed1, served1;
    hs_plan_manifest_stats(&parsed0, &served0);
    hs_table_plan p;
    CHECK_OK(hs_table_plan_files(t, -1, &p, &e), &e);
    hs_plan_manifest_stats(&parsed1, &served1);
    CHECK_EQ_INT(p.n_files, i + 1);
    CHECK_EQ_INT(plan_rows(&p), (int64_t)(i + 1) * 10);
    CHECK_EQ_INT((int64_t)(parsed1 - parsed0), 1);
    CHECK_EQ_INT((int64_t)(served1 - served0), i);
    hs_table_plan_free(&p);
  }

  /* The same snapshot twice: the second plan borrows the first's. */
  hs_table_plan a, b;
  CHECK_OK(hs_table_plan_files(t, -1, &a, &e), &e);
  CHECK_OK(hs_table_plan_files(t, -1, &b, &e), &e);
  CHECK_EQ_INT(a.n_files, 12);
  CHECK_EQ_INT(plan_rows(&a), 120);
  CHECK(a.shared != NULL && a.shared == b.shared);
  CHECK(a.files != b.files); /* each borrower has its own array */
  CHECK_EQ_INT(a.snapshot_id, snaps[11]);
  for (size_t i = 0; i < a.n_files && i < b.n_files; i++)
    CHECK(strcmp(a.files[i].path, b.files[i].path) == 0);
  hs_table_plan_free(&b);

  /* Every snapshot, twice around: each plan holds exactly its own files,
   * hits or misses alike, while `a` stays lent through the evictions. */
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 12; i++) {
      hs_table_plan p;
      CHECK_OK(hs_table_plan_files(t, snaps[i], &p, &e), &e);
      CHECK_EQ_INT(p.snapshot_id, snaps[i]);
      CHECK_EQ_INT(p.n_files, i + 1);
      CHECK_EQ_INT(plan_rows(&p), (int64_t)(i + 1) * 10);
      hs_table_plan_free(&p);
    }

  /* A lent plan outlives its table handle (ASan watches the reads). */
  hs_table_free(t);
  t = NULL;
  size_t total = 0;
  for (size_t i = 0; i < a.n_files; i++) total += strlen(a.files[i].path);
  CHECK(total > 0);
  CHECK_EQ_INT(plan_rows(&a), 120);
  hs_table_plan_free(&a);
  hs_table_plan_free(&a); /* freeing twice is safe */

  /* Manifests rewritten in place are read again: damaged, the plan fails;
   * restored (same bytes, a later mtime), it plans again. Every manifest
   * is damaged, so the current snapshot's certainly are. */
  CHECK_OK(hs_table_open(root, &t, &e), &e);
  static char man[64][4096];
  char *orig[64] = {0};
  size_t len[64] = {0};
  int n_man = list_manifests(root, man, 64);
  CHECK(n_man > 0);
  bool read_all = n_man > 0;
  for (int i = 0; i < n_man; i++) {
    orig[i] = hs_test_slurp(man[i], &len[i]);
    read_all = read_all && orig[i] != NULL && len[i] > 16;
  }
  CHECK(read_all);
  if (t != NULL && read_all) {
    CHECK_OK(hs_table_plan_files(t, -1, &a, &e), &e);
    hs_table_plan_free(&a);
    for (int i = 0; i < n_man; i++) hs_test_spill(man[i], orig[i], len[i] / 2);
    hs_error e2 = {0};
    hs_table_plan bad;
    CHECK(hs_table_plan_files(t, -1, &bad, &e2) != HS_OK);
    CHECK(e2.message[0] != 0);
    hs_table_plan_free(&bad);
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    for (int i = 0; i < n_man; i++) hs_test_spill(man[i], orig[i], len[i]);
    CHECK_OK(hs_table_plan_files(t, -1, &a, &e), &e);
    CHECK_EQ_INT(a.n_files, 12);
    CHECK_EQ_INT(plan_rows(&a), 120);
    hs_table_plan_free(&a);
  }
  for (int i = 0; i < n_man; i++) free(orig[i]);
  hs_table_free(t);
  free(root);
  return hs_test_finish("test_plan_cache");
}
