/*
 * test_refresh.c — hs_table_refresh skips re-reading the loaded metadata
 * file only while it is still the latest version and unchanged on disk
 * (src/table/table.c): a second handle sees every commit of the first,
 * a metadata file changed in place is read again (and a damaged one is
 * reported), and a handle that committed itself refreshes correctly;
 * once metadata/ has settled a refresh is two stats and still sees the
 * next commit; a staleness bound defers other handles' commits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_table_fixture.h"
#include "hs_test.h"
#include "table/table.h"

static size_t snapshots(const hs_table *t) {
  hs_error e = {0};
  hs_table_snapshot_info *s = NULL;
  size_t n = 0;
  CHECK_OK(hs_table_snapshots(t, &s, &n, &e), &e);
  hs_free(s);
  return n;
}

int main(void) {
  hs_error e = {0};
  char dir[] = "/tmp/hs_test_refresh_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char root[256];
  snprintf(root, sizeof root, "%s/t", dir);
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options to;
  hs_table_options_init(&to);
  hs_table *a = NULL, *b = NULL;
  CHECK_OK(hs_table_create(root, &s, &to, &a, &e), &e);
  s.release(&s);
  if (a == NULL) return hs_test_finish("test_refresh");
  append_rows(a, 0, 10);
  CHECK_OK(hs_table_open(root, &b, &e), &e);
  if (b == NULL) return hs_test_finish("test_refresh");

  /* Nothing new: refresh keeps the version; each commit of a shows in b. */
  for (int i = 0; i < 3; i++) {
    CHECK_OK(hs_table_refresh(b, &e), &e);
    CHECK_EQ_INT(snapshots(b), (size_t)i + 1);
    CHECK_EQ_INT(hs_table_current_snapshot_id(b), hs_table_current_snapshot_id(a));
    append_rows(a, 10 * (i + 1), 10);
  }
  CHECK_OK(hs_table_refresh(b, &e), &e);
  CHECK_EQ_INT(snapshots(b), 4);

  /* b commits itself, then refreshes: it holds what it wrote, then a's. */
  int64_t sb = append_rows(b, 100, 10);
  CHECK_OK(hs_table_refresh(b, &e), &e);
  CHECK_EQ_INT(hs_table_current_snapshot_id(b), sb);
  CHECK_EQ_INT(snapshots(b), 5);
  int64_t sa = append_rows(a, 200, 10);
  CHECK_OK(hs_table_refresh(b, &e), &e);
  CHECK_EQ_INT(hs_table_current_snapshot_id(b), sa);
  CHECK_EQ_INT(snapshots(b), 6);

  /* The current metadata file changed in place: read again, so damage is
   * reported instead of answered from memory; repaired, it loads. */
  CHECK_OK(hs_table_refresh(b, &e), &e);
  char *path = hs_strdup(b->metadata_path);
  size_t n = 0;
  char *orig = hs_test_slurp(path, &n);
  CHECK(orig != NULL && n > 10);
  if (orig != NULL && n > 10) {
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    hs_test_spill(path, "{\"format-version\": ", 19);
    hs_error e2 = {0};
    CHECK(hs_table_refresh(b, &e2) != HS_OK);
    CHECK(e2.message[0] != 0);
    nanosleep(&pause, NULL);
    hs_test_spill(path, orig, n);
    CHECK_OK(hs_table_refresh(b, &e), &e);
    CHECK_EQ_INT(snapshots(b), 6);
  }
  free(orig);
  hs_free(path);

  /* Settled: metadata/ unchanged for a second, a refresh is two stats (the
   * folder, the loaded file) and still sees the next commit. */
  struct timespec settle = {1, 100 * 1000 * 1000};
  nanosleep(&settle, NULL);
  CHECK_OK(hs_table_refresh(b, &e), &e); /* the full check records the folder */
  CHECK(b->meta_dir_settled);
  CHECK_OK(hs_table_refresh(b, &e), &e);
  CHECK_EQ_INT(snapshots(b), 6);
  int64_t s7 = append_rows(a, 300, 10);
  CHECK_OK(hs_table_refresh(b, &e), &e);
  CHECK_EQ_INT(hs_table_current_snapshot_id(b), s7);
  CHECK(!b->meta_dir_settled); /* just changed: the next refreshes check fully */
  nanosleep(&settle, NULL);
  CHECK_OK(hs_table_refresh(b, &e), &e);
  CHECK(b->meta_dir_settled);

  /* A staleness bound: within it nothing is checked, so a's commit shows
   * only once the bound is lifted; b's own commits show at once. */
  hs_table_set_staleness_ms(b, 3600 * 1000);
  CHECK_OK(hs_table_refresh(b, &e), &e);
  int64_t s8 = append_rows(a, 400, 10);
  CHECK_OK(hs_table_refresh(b, &e), &e);
  CHECK_EQ_INT(hs_table_current_snapshot_id(b), s7);
  int64_t s9 = append_rows(b, 500, 10);
  CHECK(s9 != s8);
  CHECK_OK(hs_table_refresh(b, &e), &e);
  CHECK_EQ_INT(hs_table_current_snapshot_id(b), s9);
  CHECK_EQ_INT(snapshots(b), 9);
  hs_table_set_staleness_ms(b, 0);
  append_rows(a, 600, 10);
  CHECK_OK(hs_table_refresh(b, &e), &e);
  CHECK_EQ_INT(hs_table_current_snapshot_id(b), hs_table_current_snapshot_id(a));
  CHECK_EQ_INT(snapshots(b), 10);
  hs_table_free(a);
  hs_table_free(b);
  return hs_test_finish("test_refresh");
}
