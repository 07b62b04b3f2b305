/*
 * test_rowdelta_keys.c — hs_table_change_rows' merge flags from C (the
 * Python builder's tests, tests/python/test_merge_keys.py, check every
 * combination against DuckDB; this runs the C paths under the sanitizers
 * too): key_where with key_matched_where, delete_unmatched with a filter,
 * append_select picking matched-where and unmatched source rows; then
 * merge_position_deletes merging every data file's delete files in one
 * replace commit; and the refusals of bad combinations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs_test.h"
#include "hs_table_fixture.h"

static int64_t count(hs_table *t) {
  hs_error e = {0};
  int64_t rows = -1;
  CHECK_OK(hs_table_count_rows(t, -1, &rows, NULL, NULL, &e), &e);
  return rows;
}

/* Key rows id = first .. first+n-1 as one struct batch {id: int64}. */
static void make_keys(struct ArrowSchema *s, struct ArrowArray *a, int64_t first, int64_t n) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, 1, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[0], "l", "id", 0, 0, &e), &e);
  int64_t *ids = hs_malloc((size_t)n * sizeof *ids);
  for (int64_t i = 0; i < n; i++) ids[i] = first + i;
  struct ArrowArray col;
  memset(&col, 0, sizeof col);
  CHECK_OK(hs_arrow_array_make_primitive(&col, n, ids, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_struct(a, n, &col, 1, NULL, 0, &e), &e);
}

static void source_stream(struct ArrowArrayStream *st, int64_t first, int64_t n) {
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArray *b = hs_calloc(1, sizeof *b);
  make_batch(b, first, n);
  CHECK_OK(hs_arrow_stream_from_batches(&s, b, 1, st, &e), &e);
  hs_free(b);
}

int main(void) {
  char *root = hs_test_temp_root("rowdelta_keys");
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options o;
  hs_table_options_init(&o);
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, &o, &t, &e), &e);
  s.release(&s);
  if (t == NULL) return hs_test_finish("test_rowdelta_keys");
  append_rows(t, 0, 1000);
  append_rows(t, 1000, 1000);

  /* Source ids 1995..2004: 1995..1999 exist (k = id % 13 = 6..10), 2000..2004
   * are new. Update where k >= 8 (1997..1999), insert the new ones, delete
   * the unmatched table rows with id < 20. */
  struct ArrowSchema ks;
  struct ArrowArray ka;
  make_keys(&ks, &ka, 1995, 10);
  const char *kc[] = {"id"};
  uint8_t hit[10], hit_w[10];
  struct ArrowArrayStream src;
  source_stream(&src, 1995, 10);
  hs_row_change c = {.what = "merge",
                     .snapshot_id = -1,
                     .appends = &src,
                     .n_appends = 1,
                     .mode_property = "write.merge.mode",
                     .key_columns = kc,
                     .n_key_columns = 1,
                     .keys_schema = &ks,
                     .keys = &ka,
                     .n_keys_batches = 1,
                     .key_matched = hit,
                     .key_where = "k >= 8",
                     .key_matched_where = hit_w,
                     .delete_unmatched = 1,
                     .unmatched_filter = "id < 20",
                     .append_select = HS_APPEND_MATCHED | HS_APPEND_UNMATCHED};
  hs_row_change_result r;
  CHECK_OK(hs_table_change_rows(t, &c, &r, &e), &e);
  CHECK_EQ_INT(r.rows_deleted, 23);
  CHECK_EQ_INT(r.rows_matched_deleted, 3);
  CHECK_EQ_INT(r.rows_added, 8);
  for (int i = 0; i < 10; i++) {
    CHECK_EQ_INT(hit[i], i < 5);
    CHECK_EQ_INT(hit_w[i], i >= 2 && i < 5);
  }
  CHECK_EQ_INT(count(t), 2000 - 23 + 8);

  /* keep_matched, insert only: nothing deleted, the 5 new keys (2005..) added */
  struct ArrowArray ka2;
  struct ArrowSchema ks2;
  make_keys(&ks2, &ka2, 2000, 10);
  source_stream(&src, 2000, 10);
  hs_row_change c2 = {.what = "merge",
                      .snapshot_id = -1,
                      .appends = &src,
                      .n_appends = 1,
                      .key_columns = kc,
                      .n_key_columns = 1,
                      .keys_schema = &ks2,
                      .keys = &ka2,
                      .n_keys_batches = 1,
                      .key_matched = hit,
                      .keep_matched = 1,
                      .append_select = HS_APPEND_UNMATCHED};
  CHECK_OK(hs_table_change_rows(t, &c2, &r, &e), &e);
  CHECK_EQ_INT(r.rows_deleted, 0);
  CHECK_EQ_INT(r.rows_added, 5);
  CHECK_EQ_INT(count(t), 1985 + 5);

  /* Refusals: two streams with append_select; merging with other changes. */
  struct ArrowArrayStream two[2];
  source_stream(&two[0], 3000, 2);
  source_stream(&two[1], 3002, 2);
  c2.appends = two;
  c2.n_appends = 2;
  hs_error bad = {0};
  CHECK_EQ_INT(hs_table_change_rows(t, &c2, &r, &bad), HS_ERR_INVALID_ARG);
  CHECK(strstr(bad.message, "append_select") != NULL);
  const char *dels[] = {"id = 30"};
  hs_row_change c3 = {
      .what = "x", .snapshot_id = -1, .deletes = dels, .n_deletes = 1, .merge_position_deletes = 1};
  CHECK_EQ_INT(hs_table_change_rows(t, &c3, &r, &bad), HS_ERR_INVALID_ARG);
  CHECK_EQ_INT(count(t), 1990);

  /* Three deletes from both files, then one merge of their delete files. */
  const char *d1[] = {"id = 100 OR id = 1100"}, *d2[] = {"id = 101 OR id = 1101"},
             *d3[] = {"id = 102"};
  const char **ds[] = {d1, d2, d3};
  for (int i = 0; i < 3; i++) {
    hs_row_change cd = {.what = "delete", .snapshot_id = -1, .deletes = ds[i], .n_deletes = 1};
    CHECK_OK(hs_table_change_rows(t, &cd, &r, &e), &e);
  }
  int64_t before = count(t), files = 0;
  CHECK_OK(hs_table_count_rows(t, -1, &before, NULL, &files, &e), &e);
  hs_row_change cm = {.what = "rewrite", .snapshot_id = -1, .merge_position_deletes = 1};
  CHECK_OK(hs_table_change_rows(t, &cm, &r, &e), &e);
  CHECK(r.delete_files_removed >= 3);
  CHECK_EQ_INT(r.delete_files_added, 1);
  CHECK_EQ_INT(r.rows_deleted, 0);
  int64_t after = 0, files_after = 0;
  CHECK_OK(hs_table_count_rows(t, -1, &after, NULL, &files_after, &e), &e);
  CHECK_EQ_INT(after, before);
  CHECK_EQ_INT(files_after, files - r.delete_files_removed + 1);
  /* nothing left to merge: no commit */
  CHECK_OK(hs_table_change_rows(t, &cm, &r, &e), &e);
  CHECK_EQ_INT(r.snapshot_id, -1);

  ka.release(&ka);
  ks.release(&ks);
  ka2.release(&ka2);
  ks2.release(&ks2);
  hs_table_free(t);
  char *slash = strrchr(root, '/'); /* root is "<temp dir>/t": remove the temp dir */
  if (slash != NULL) {
    *slash = '\0';
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "rm -rf %s failed\n", root);
  }
  free(root);
  return hs_test_finish("test_rowdelta_keys");
}
