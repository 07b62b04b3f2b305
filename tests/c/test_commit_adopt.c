/*
 * test_commit_adopt.c — a committing handle adopts the metadata it just
 * published instead of parsing it back (commit.c, adopt). After every
 * append, tag, partition-spec change and rollback, the committing handle's
 * metadata must serialize to exactly the bytes of a fresh handle that
 * parsed the published file, in format v2 and v3, across the periodic
 * re-parse; and its rows must match. Appends interleaved with a second
 * writer (the committing handle then lost a race or is stale) too.
 */
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "iceberg/iceberg.h"
#include "table/table.h"

static void make_schema(struct ArrowSchema *s) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, 2, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[0], "l", "id", 0, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[1], "g", "x", ARROW_FLAG_NULLABLE, 0, &e), &e);
}

static hs_status append_rows(hs_table *t, int64_t first, int64_t n, hs_error *e) {
  int64_t *ids = hs_malloc((size_t)n * sizeof *ids);
  double *xs = hs_malloc((size_t)n * sizeof *xs);
  for (int64_t i = 0; i < n; i++) {
    ids[i] = first + i;
    xs[i] = (double)(first + i) * 0.25;
  }
  struct ArrowArray cols[2], b;
  memset(cols, 0, sizeof cols);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[0], n, ids, NULL, 0, e), e);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[1], n, xs, NULL, 0, e), e);
  CHECK_OK(hs_arrow_array_make_struct(&b, n, cols, 2, NULL, 0, e), e);
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArrayStream st;
  CHECK_OK(hs_arrow_stream_from_batches(&s, &b, 1, &st, e), e);
  return hs_table_append(t, &st, NULL, e);
}

/* The handle's metadata, serialized, equals a fresh parse of its file. */
static void check_same(hs_table *t, const char *uri, const char *when) {
  hs_error e = {0};
  hs_table *f = NULL;
  CHECK_OK(hs_table_open(uri, &f, &e), &e);
  if (!f) return;
  hs_buf a, b;
  hs_buf_init(&a);
  hs_buf_init(&b);
  CHECK_OK(hs_iceberg_metadata_write(&t->meta, &a, &e), &e);
  CHECK_OK(hs_iceberg_metadata_write(&f->meta, &b, &e), &e);
  bool same = a.len == b.len && memcmp(a.data, b.data, a.len) == 0;
  CHECK(same);
  CHECK_EQ_INT(t->version, f->version);
  CHECK(strcmp(t->metadata_path, f->metadata_path) == 0);
  if (!same) fprintf(stderr, "  %s: adopted %zu bytes vs parsed %zu bytes\n", when, a.len, b.len);
  hs_buf_free(&a);
  hs_buf_free(&b);
  hs_table_free(f);
}

/* Rows and sum(id) of the current snapshot through handle t. */
static void check_rows(hs_table *t, int64_t rows, int64_t sum) {
  hs_error e = {0};
  struct ArrowArrayStream st;
  CHECK_OK(hs_table_scan(t, -1, NULL, 0, &st, &e), &e);
  struct ArrowSchema s;
  struct ArrowArray *bs = NULL;
  size_t nb = 0;
  CHECK_OK(hs_arrow_stream_collect(&st, &s, &bs, &nb, &e), &e);
  st.release(&st);
  int64_t r = 0, sm = 0;
  for (size_t i = 0; i < nb; i++) {
    const struct ArrowArray *id = bs[i].children[0];
    for (int64_t k = 0; k < bs[i].length; k++)
      sm += ((const int64_t *)id->buffers[1])[id->offset + k];
    r += bs[i].length;
  }
  CHECK_EQ_INT(r, rows);
  CHECK_EQ_INT(sm, sum);
  hs_arrow_batches_free(bs, nb);
  if (s.release) s.release(&s);
}

static void run(const char *dir, int format) {
  char uri[512];
  snprintf(uri, sizeof uri, "%s/t_v%d", dir, format);
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options o;
  hs_table_options_init(&o);
  o.format_version = format;
  hs_table *t = NULL, *other = NULL;
  CHECK_OK(hs_table_create(uri, &s, &o, &t, &e), &e);
  s.release(&s);
  if (!t) return;
  CHECK_OK(hs_table_open(uri, &other, &e), &e);
  int64_t rows = 0, sum = 0;
  char when[64];
  for (int i = 0; i < 40; i++) {
    int64_t n = 3 + i % 5, first = rows;
    if (i % 13 == 7 && other) {
      /* Another writer commits: t's next append loses the race once. */
      CHECK_OK(hs_table_refresh(other, &e), &e);
      CHECK_OK(append_rows(other, first, n, &e), &e);
    } else {
      CHECK_OK(append_rows(t, first, n, &e), &e);
    }
    rows += n;
    sum += n * first + n * (n - 1) / 2;
    if (i == 10) {
      CHECK_OK(hs_table_create_tag(t, "ten", t->meta.current_snapshot_id, -1, &e), &e);
    }
    if (i == 21) {
      hs_table_partition_field pf = {"id", "bucket[4]", NULL};
      CHECK_OK(hs_table_set_partition_spec(t, &pf, 1, &e), &e);
    }
    snprintf(when, sizeof when, "v%d append %d", format, i);
    /* t is stale right after the other writer's commit (by design). */
    check_same(i % 13 == 7 && other ? other : t, uri, when);
  }
  check_rows(t, rows, sum);
  /* Rollback to the tag, then append again: the adopted log and refs. */
  int64_t back = t->meta.snapshots[t->meta.n_snapshots / 2].snapshot_id;
  CHECK_OK(hs_table_rollback_to_snapshot(t, back, &e), &e);
  CHECK_OK(append_rows(t, 1000000, 4, &e), &e);
  check_same(t, uri, "after rollback");
  hs_table_free(other);
  hs_table_free(t);
}

int main(void) {
  char dir[] = "/tmp/hs_test_commit_adopt_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  run(dir, 2);
  run(dir, 3);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return hs_test_finish("test_commit_adopt");
}
