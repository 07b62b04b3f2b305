/*
 * test_table.c — the table layer: create/append/scan round trips, time
 * travel, reopen with a lagging or missing version hint, clear errors for
 * missing/corrupt metadata, schema mismatches and manifest entries that
 * escape the table folder; concurrency (4 processes x 25 appends, none
 * lost or duplicated); crash safety (a writer SIGKILLed at every step of
 * the commit path, many times: the table always opens, scans, and holds
 * every acknowledged append).
 *
 * Driver mode for tests/python/test_table_commit.py: with
 * HS_TABLE_DRIVER=<dir> (and HS_TABLE_FORMAT=2|3, HS_TABLE_APPENDS=N) it
 * creates a table at <dir>, appends N batches and prints, per snapshot,
 * "snapshot <id> <ids our scan returns, comma separated>", then
 * "metadata <path of the latest metadata json>".
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "hs_table_fixture3.h"
#include "io/fs.h"
#include "table/table.h"

/* A stream of `n_batches` batches of `rows` rows starting at id `first`. */
static void make_stream(struct ArrowArrayStream *out, int64_t first, int64_t rows,
                        size_t n_batches) {
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArray *b = hs_calloc(n_batches ? n_batches : 1, sizeof *b);
  for (size_t i = 0; i < n_batches; i++) make_batch(&b[i], first + (int64_t)i * rows, rows);
  CHECK_OK(hs_arrow_stream_from_batches(&s, b, n_batches, out, &e), &e);
  hs_free(b);
}

static hs_status append_rows(hs_table *t, int64_t first, int64_t rows, int64_t *snap, hs_error *e) {
  struct ArrowArrayStream st;
  make_stream(&st, first, rows, 1);
  return hs_table_append(t, &st, snap, e);
}

/* Scan snapshot `snap` and return its ids (hs_malloc'd) in *ids; checks
 * that every column agrees with the id formula. */
static hs_status scan_ids(hs_table *t, int64_t snap, int64_t **ids, size_t *n, hs_error *e) {
  struct ArrowArrayStream st;
  *ids = NULL;
  *n = 0;
  hs_status rc = hs_table_scan(t, snap, NULL, 0, &st, e);
  if (rc != HS_OK) return rc;
  struct ArrowSchema schema;
  struct ArrowArray *batches = NULL;
  size_t nb = 0;
  rc = hs_arrow_stream_collect(&st, &schema, &batches, &nb, e);
  st.release(&st);
  if (rc != HS_OK) return rc;
  size_t total = 0;
  for (size_t i = 0; i < nb; i++) total += (size_t)batches[i].length;
  int64_t *v = hs_malloc((total ? total : 1) * sizeof *v);
  size_t k = 0;
  for (size_t i = 0; i < nb; i++) {
    const struct ArrowArray *b = &batches[i];
    const struct ArrowArray *c0 = b->children[0], *c1 = b->children[1], *c2 = b->children[2];
    const int64_t *idv = c0->buffers[1];
    const double *xv = c2->buffers[1];
    const int32_t *off = c1->buffers[1];
    const char *str = c1->buffers[2];
    for (int64_t r = 0; r < b->length; r++) {
      int64_t id = idv[c0->offset + r];
      v[k++] = id;
      if (xv[c2->offset + r] != (double)id * 0.5) rc = HS_ERR_INTERNAL;
      bool valid = hs_arrow_is_valid(c1, r);
      if (valid != (id % 7 != 0)) rc = HS_ERR_INTERNAL;
      if (valid) {
        char want[24];
        int len = snprintf(want, sizeof want, "n%lld", (long long)id);
        int32_t a = off[c1->offset + r], z = off[c1->offset + r + 1];
        if (z - a != len || memcmp(str + a, want, (size_t)len) != 0) rc = HS_ERR_INTERNAL;
      }
    }
  }
  if (rc != HS_OK) hs_error_set(e, rc, "scan: a column value does not match its id");
  hs_arrow_batches_free(batches, nb);
  schema.release(&schema);
  *ids = v;
  *n = k;
  return rc;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static char *temp_dir(void) {
  char tmpl[] = "/tmp/hs_table_XXXXXX";
  char *d = mkdtemp(tmpl);
  return d ? hs_strdup(d) : NULL;
}

static void rm_rf(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "rm -rf %s failed\n", dir);
}

static size_t count_files(const char *dir) {
  char **names = NULL;
  size_t n = 0;
  if (hs_fs_list(dir, &names, &n, NULL) != HS_OK) return 0;
  hs_fs_names_free(names, n);
  return n;
}

static hs_table *create_table(const char *root, int format) {
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options o;
  hs_table_options_init(&o);
  o.format_version = format;
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, &o, &t, &e), &e);
  s.release(&s);
  return t;
}

/* ------------------------------------------------------------- tests */

static void test_round_trip(int format) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_table *t = create_table(root, format);
  if (t == NULL) return;
  CHECK_EQ_INT(hs_table_current_snapshot_id(t), -1);
  CHECK_EQ_INT(hs_table_version(t), 1);

  /* Empty table: schema, no rows. */
  int64_t *ids = NULL;
  size_t n = 0;
  CHECK_OK(scan_ids(t, -1, &ids, &n, &e), &e);
  CHECK_EQ_INT(n, 0);
  hs_free(ids);

  int64_t snaps[3];
  CHECK_OK(append_rows(t, 0, 100, &snaps[0], &e), &e);
  CHECK_OK(append_rows(t, 100, 50, &snaps[1], &e), &e);
  struct ArrowArrayStream two;
  make_stream(&two, 150, 1000, 3);
  CHECK_OK(hs_table_append(t, &two, &snaps[2], &e), &e);
  CHECK_EQ_INT(hs_table_version(t), 4);
  CHECK_EQ_INT(hs_table_current_snapshot_id(t), snaps[2]);

  /* Time travel: each snapshot holds exactly the rows appended so far. */
  const int64_t want_rows[3] = {100, 150, 3150};
  for (int i = 0; i < 3; i++) {
    CHECK_OK(scan_ids(t, snaps[i], &ids, &n, &e), &e);
    CHECK_EQ_INT(n, want_rows[i]);
    qsort(ids, n, sizeof *ids, cmp_i64);
    bool exact = true;
    for (size_t k = 0; k < n; k++) exact = exact && ids[k] == (int64_t)k;
    CHECK(exact);
    hs_free(ids);
  }
  hs_table_snapshot_info *info = NULL;
  CHECK_OK(hs_table_snapshots(t, &info, &n, &e), &e);
  CHECK_EQ_INT(n, 3);
  if (n == 3) {
    CHECK_EQ_INT(info[0].parent_snapshot_id, -1);
    CHECK_EQ_INT(info[1].parent_snapshot_id, snaps[0]);
    CHECK_EQ_INT(info[2].sequence_number, 3);
    CHECK_EQ_INT(info[2].added_records, 3000);
    CHECK_EQ_INT(info[2].total_records, 3150);
    CHECK_EQ_INT(info[2].total_data_files, 3);
    CHECK(strcmp(info[2].operation, "append") == 0);
  }
  hs_free(info);

  /* Projection. */
  struct ArrowArrayStream ps;
  const char *cols[] = {"x"};
  CHECK_OK(hs_table_scan(t, snaps[0], cols, 1, &ps, &e), &e);
  struct ArrowSchema psch;
  memset(&psch, 0, sizeof psch);
  CHECK(ps.get_schema(&ps, &psch) == 0);
  CHECK_EQ_INT(psch.n_children, 1);
  if (psch.release) psch.release(&psch);
  ps.release(&ps);
  CHECK_EQ_INT(hs_table_scan(t, 12345, NULL, 0, &ps, &e), HS_ERR_NOT_FOUND);
  e = (hs_error){0};

  /* Reopen: the hint lags (points at v1): probing finds v4. */
  char hint[4300];
  snprintf(hint, sizeof hint, "%s/metadata/version-hint.text", root);
  CHECK_OK(hs_fs_replace_file(hint, "1", 1, &e), &e);
  hs_table *t2 = NULL;
  CHECK_OK(hs_table_open(root, &t2, &e), &e);
  if (t2) {
    CHECK_EQ_INT(hs_table_version(t2), 4);
    CHECK_EQ_INT(hs_table_current_snapshot_id(t2), snaps[2]);
    hs_table_free(t2);
  }
  /* No hint at all, or garbage in it. */
  CHECK_OK(hs_fs_remove(hint, &e), &e);
  t2 = NULL;
  CHECK_OK(hs_table_open(root, &t2, &e), &e);
  if (t2) CHECK_EQ_INT(hs_table_version(t2), 4);
  hs_table_free(t2);
  CHECK_OK(hs_fs_replace_file(hint, "zz9", 3, &e), &e);
  t2 = NULL;
  CHECK_OK(hs_table_open(root, &t2, &e), &e);
  if (t2) CHECK_EQ_INT(hs_table_version(t2), 4);
  hs_table_free(t2);
  /* A hint beyond the last version (hand edited) falls back to a listing. */
  CHECK_OK(hs_fs_replace_file(hint, "9", 1, &e), &e);
  t2 = NULL;
  CHECK_OK(hs_table_open(root, &t2, &e), &e);
  if (t2) CHECK_EQ_INT(hs_table_version(t2), 4);
  hs_table_free(t2);

  /* Creating over an existing table is refused. */
  struct ArrowSchema s;
  make_schema(&s);
  t2 = NULL;
  CHECK_EQ_INT(hs_table_create(root, &s, NULL, &t2, &e), HS_ERR_INVALID_ARG);
  CHECK(strstr(e.message, "already exists") != NULL);
  e = (hs_error){0};
  s.release(&s);

  /* An empty stream commits nothing. */
  struct ArrowArrayStream empty;
  make_stream(&empty, 0, 0, 0);
  int64_t sid = 0;
  CHECK_OK(hs_table_append(t, &empty, &sid, &e), &e);
  CHECK_EQ_INT(sid, -1);
  CHECK_EQ_INT(hs_table_version(t), 4);
  hs_table_free(t);
  rm_rf(dir);
  hs_free(dir);
}

static void test_errors(void) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200], path[4300];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_table *t = NULL;

  /* Not a table. */
  CHECK_EQ_INT(hs_table_open(root, &t, &e), HS_ERR_NOT_FOUND);
  CHECK(strstr(e.message, root) != NULL);
  e = (hs_error){0};

  t = create_table(root, 2);
  if (t == NULL) return;
  CHECK_OK(append_rows(t, 0, 10, NULL, &e), &e);

  /* Schema mismatch: a different column type; nothing is written. */
  snprintf(path, sizeof path, "%s/data", root);
  size_t files_before = count_files(path);
  struct ArrowSchema bad;
  CHECK_OK(hs_arrow_schema_init(&bad, "+s", "", 0, 1, &e), &e);
  CHECK_OK(hs_arrow_schema_init(bad.children[0], "i", "id", 0, 0, &e), &e);
  struct ArrowArrayStream bs;
  CHECK_OK(hs_arrow_stream_from_batches(&bad, NULL, 0, &bs, &e), &e);
  CHECK_EQ_INT(hs_table_append(t, &bs, NULL, &e), HS_ERR_SCHEMA);
  CHECK(strstr(e.message, "schema") != NULL);
  CHECK(bs.release == NULL);
  e = (hs_error){0};
  CHECK_EQ_INT(count_files(path), files_before);
  CHECK_EQ_INT(hs_table_version(t), 2);

  /* A manifest entry that points outside the table folder. */
  const hs_iceberg_snapshot *snap = hs_table_current(t);
  hs_buf buf;
  hs_buf_init(&buf);
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_manifest_list list;
  CHECK_OK(hs_table_read_avro(t, snap->manifest_list, "list", &buf, &e), &e);
  CHECK_OK(hs_iceberg_manifest_list_read(buf.data, buf.len, &a, &list, &e), &e);
  if (list.n_files == 1) {
    const hs_iceberg_manifest_file *mf = &list.files[0];
    buf.len = 0;
    hs_iceberg_manifest man;
    CHECK_OK(hs_table_read_avro(t, mf->manifest_path, "manifest", &buf, &e), &e);
    CHECK_OK(hs_iceberg_manifest_read(buf.data, buf.len, mf, &a, &man, &e), &e);
    const char *escapes[] = {"%s/data/../../outside.parquet", "/etc/passwd",
                             "%s/../t2/data/x.parquet", "data/relative.parquet"};
    for (size_t k = 0; k < sizeof escapes / sizeof *escapes && man.n_entries == 1; k++) {
      char evil[4400];
      snprintf(evil, sizeof evil, escapes[k], root);
      hs_iceberg_manifest_entry ent = man.entries[0];
      ent.data_file.file_path = evil;
      ent.has_snapshot_id = false;
      ent.has_sequence_number = false;
      ent.has_file_sequence_number = false;
      hs_iceberg_manifest_writer_options mo = {.format_version = 2,
                                               .schema = hs_iceberg_metadata_schema(&t->meta, 0),
                                               .spec = &t->meta.specs[0],
                                               .snapshot_id = snap->snapshot_id,
                                               .sequence_number = 1};
      hs_buf out;
      hs_buf_init(&out);
      hs_iceberg_manifest_writer *w = NULL;
      CHECK_OK(hs_iceberg_manifest_writer_open(&mo, &out, NULL, &w, &e), &e);
      CHECK_OK(hs_iceberg_manifest_writer_add(w, &ent, &e), &e);
      CHECK_OK(hs_iceberg_manifest_writer_close(w, NULL, NULL, &e), &e);
      char *mpath = NULL;
      CHECK_OK(hs_table_resolve_path(t, mf->manifest_path, "m", &mpath, &e), &e);
      CHECK_OK(hs_fs_replace_file(mpath, out.data, out.len, &e), &e);
      hs_free(mpath);
      hs_buf_free(&out);
      struct ArrowArrayStream st;
      CHECK_EQ_INT(hs_table_scan(t, -1, NULL, 0, &st, &e), HS_ERR_CORRUPT);
      CHECK(strstr(e.message, "outside the table folder") != NULL);
      CHECK(strstr(e.message, evil) != NULL);
      e = (hs_error){0};
    }
  }
  hs_buf_free(&buf);
  hs_arena_reset(&a);
  hs_table_free(t);

  /* A truncated data file: the scan fails naming it (on a fresh table:
   * the manifest above now escapes). */
  rm_rf(dir);
  CHECK(mkdir(dir, 0700) == 0);
  t = create_table(root, 2);
  if (t == NULL) return;
  CHECK_OK(append_rows(t, 0, 10, NULL, &e), &e);
  {
    snprintf(path, sizeof path, "%s/data", root);
    char **names = NULL;
    size_t nn = 0;
    CHECK_OK(hs_fs_list(path, &names, &nn, &e), &e);
    char f[4400] = "";
    if (nn == 1) {
      snprintf(f, sizeof f, "%s/%s", path, names[0]);
      CHECK(truncate(f, 100) == 0);
    }
    hs_fs_names_free(names, nn);
    struct ArrowArrayStream st;
    hs_status rc = hs_table_scan(t, -1, NULL, 0, &st, &e);
    if (rc == HS_OK) {
      struct ArrowArray b;
      memset(&b, 0, sizeof b);
      CHECK(st.get_next(&st, &b) != 0);
      const char *m = st.get_last_error(&st);
      CHECK(m != NULL && f[0] && strstr(m, f) != NULL);
      hs_arrow_array_release(&b);
      st.release(&st);
    } else {
      CHECK(f[0] && strstr(e.message, f) != NULL);
    }
    e = (hs_error){0};
  }
  hs_table_free(t);

  /* Corrupt latest metadata: the error names the file. */
  snprintf(path, sizeof path, "%s/metadata/v3.metadata.json", root);
  CHECK_OK(hs_fs_write_file(path, "{\"format-version\": 2,", 21, &e), &e);
  t = NULL;
  CHECK_EQ_INT(hs_table_open(root, &t, &e), HS_ERR_CORRUPT);
  CHECK(strstr(e.message, "v3.metadata.json") != NULL);
  e = (hs_error){0};
  rm_rf(dir);
  hs_free(dir);
}

/* ------------------------------------------------------- concurrency */

#define WRITERS 4
#define APPENDS_EACH 25
#define ROWS_EACH 7

static void test_concurrency(void) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_table *t = create_table(root, 2);
  if (t == NULL) return;
  hs_table_free(t);
  pid_t pids[WRITERS];
  for (int w = 0; w < WRITERS; w++) {
    pids[w] = fork();
    if (pids[w] == 0) {
      hs_table *mine = NULL;
      hs_error ce = {0};
      if (hs_table_open(root, &mine, &ce) != HS_OK) _exit(2);
      for (int i = 0; i < APPENDS_EACH; i++) {
        int64_t first = ((int64_t)w * APPENDS_EACH + i) * ROWS_EACH;
        if (append_rows(mine, first, ROWS_EACH, NULL, &ce) != HS_OK) {
          fprintf(stderr, "writer %d append %d: %s\n", w, i, ce.message);
          _exit(3);
        }
      }
      hs_table_free(mine);
      _exit(0);
    }
  }
  for (int w = 0; w < WRITERS; w++) {
    int status = 0;
    waitpid(pids[w], &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  t = NULL;
  CHECK_OK(hs_table_open(root, &t, &e), &e);
  if (t == NULL) return;
  CHECK_EQ_INT(t->meta.n_snapshots, WRITERS * APPENDS_EACH);
  CHECK_EQ_INT(hs_table_version(t), WRITERS * APPENDS_EACH + 1);
  int64_t *ids = NULL;
  size_t n = 0;
  CHECK_OK(scan_ids(t, -1, &ids, &n, &e), &e);
  CHECK_EQ_INT(n, WRITERS * APPENDS_EACH * ROWS_EACH);
  qsort(ids, n, sizeof *ids, cmp_i64);
  bool exact = true;
  for (size_t k = 0; k < n; k++) exact = exact && ids[k] == (int64_t)k;
  CHECK(exact);
  hs_free(ids);
  /* Sequence numbers 1..100 and a parent chain through every snapshot. */
  hs_table_snapshot_info *info = NULL;
  CHECK_OK(hs_table_snapshots(t, &info, &n, &e), &e);
  bool chain = true;
  for (size_t k = 0; k < n; k++) {
    chain = chain && info[k].sequence_number == (int64_t)k + 1;
    if (k > 0) chain = chain && info[k].parent_snapshot_id == info[k - 1].snapshot_id;
  }
  CHECK(chain);
  hs_free(info);
  hs_table_free(t);
  rm_rf(dir);
  hs_free(dir);
}

/* ------------------------------------------------------- crash safety */

#define CRASH_ROWS 5

/* One run: a child appends batches (ids base + k*CRASH_ROWS..) until it
 * kills itself at commit step `step` (when step > 0) or the parent kills it
 * after `kill_after_us` (when > 0); after each acknowledged append it writes
 * k to a pipe. Adds the acknowledged appends to *acks_total. */
static void crash_run(const char *root, int step, int kill_after_us, int *acks_total) {
  hs_error e = {0};
  int fds[2];
  if (pipe(fds) != 0) return;
  hs_table *t = NULL;
  CHECK_OK(hs_table_open(root, &t, &e), &e);
  if (t == NULL) return;
  int64_t base = 0;
  size_t have = 0;
  int64_t *before = NULL;
  CHECK_OK(scan_ids(t, -1, &before, &have, &e), &e);
  for (size_t i = 0; i < have; i++)
    if (before[i] + 1 > base) base = before[i] + 1;
  hs_free(before);
  hs_table_free(t);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    char s[16];
    snprintf(s, sizeof s, "%d", step);
    setenv("HS_TABLE_CRASH_STEP", s, 1);
    hs_table *mine = NULL;
    hs_error ce = {0};
    if (hs_table_open(root, &mine, &ce) != HS_OK) _exit(2);
    for (int64_t k = 0;; k++) {
      if (append_rows(mine, base + k * CRASH_ROWS, CRASH_ROWS, NULL, &ce) != HS_OK) _exit(3);
      if (write(fds[1], &k, sizeof k) != (ssize_t)sizeof k) _exit(4);
    }
  }
  close(fds[1]);
  if (kill_after_us > 0) {
    usleep((useconds_t)kill_after_us);
    kill(pid, SIGKILL);
  }
  int64_t acked = -1, k;
  while (read(fds[0], &k, sizeof k) == (ssize_t)sizeof k) acked = k;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  /* The table opens and scans; every acknowledged append is there, and at
   * most the one in flight besides; no row twice. */
  t = NULL;
  CHECK_OK(hs_table_open(root, &t, &e), &e);
  if (t == NULL) return;
  int64_t *ids = NULL;
  size_t n = 0;
  CHECK_OK(scan_ids(t, -1, &ids, &n, &e), &e);
  qsort(ids, n, sizeof *ids, cmp_i64);
  size_t want_min = (size_t)base + (size_t)(acked + 1) * CRASH_ROWS;
  CHECK(n == want_min || n == want_min + CRASH_ROWS);
  bool exact = true;
  for (size_t i = 0; i < n; i++) exact = exact && ids[i] == (int64_t)i;
  CHECK(exact);
  hs_free(ids);
  hs_table_free(t);
  *acks_total += (int)(acked + 1);
}

static void test_crash(void) {
  const char *env = getenv("HS_TABLE_CRASH_RUNS");
  int runs = env ? atoi(env) : 200;
  char *dir = temp_dir();
  char root[4200];
  snprintf(root, sizeof root, "%s/t", dir);
  hs_table *t = create_table(root, 2);
  if (t == NULL) return;
  hs_table_free(t);
  uint64_t rng = 42;
  int acks = 0;
  /* Steps per append: 1 batch + data + manifest + list + publish + hint +
   * done = 7; steps up to 24 kill inside the first four appends, at every
   * point of the commit path. */
  for (int r = 0; r < runs; r++) {
    /* Odd runs: a timed kill at a random moment (the child may be anywhere,
     * inside the Parquet writer, an fsync or link(2)). */
    if (r % 2 == 1) {
      crash_run(root, 0, 200 + (int)(hs_test_rand(&rng) % 60000), &acks);
    } else {
      crash_run(root, 1 + (int)(hs_test_rand(&rng) % 24), 0, &acks);
    }
  }
  printf("crash: %d runs, %d acknowledged appends survived\n", runs, acks);
  rm_rf(dir);
  hs_free(dir);
}

/* ------------------------------------------------------------- driver */

static int driver(const char *root) {
  hs_error e = {0};
  const char *fv = getenv("HS_TABLE_FORMAT");
  const char *na = getenv("HS_TABLE_APPENDS");
  int format = fv ? atoi(fv) : 2, appends = na ? atoi(na) : 3;
  hs_table *t = create_table(root, format);
  if (t == NULL) return 1;
  int64_t first = 0;
  for (int i = 0; i < appends; i++) {
    int64_t rows = 10 + 37 * i;
    if (append_rows(t, first, rows, NULL, &e) != HS_OK) {
      fprintf(stderr, "append: %s\n", e.message);
      return 1;
    }
    first += rows;
  }
  for (size_t s = 0; s < t->meta.n_snapshots; s++) {
    int64_t *ids = NULL;
    size_t n = 0;
    if (scan_ids(t, t->meta.snapshots[s].snapshot_id, &ids, &n, &e) != HS_OK) {
      fprintf(stderr, "scan: %s\n", e.message);
      return 1;
    }
    printf("snapshot %lld ", (long long)t->meta.snapshots[s].snapshot_id);
    for (size_t k = 0; k < n; k++) printf("%s%lld", k ? "," : "", (long long)ids[k]);
    printf("\n");
    hs_free(ids);
  }
  printf("metadata %s\n", hs_table_metadata_location(t));
  hs_table_free(t);
  return 0;
}

/* {id: int64, <name>: <list format><float32>} with `n` columns (a third
 * repeats "id" when n == 3). */
static void vec_schema(struct ArrowSchema *s, const char *list_format, const char *name,
                       int64_t flags, int n) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, n, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[0], "l", "id", ARROW_FLAG_NULLABLE, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[1], list_format, name, flags, 1, &e), &e);
  CHECK_OK(
      hs_arrow_schema_init(s->children[1]->children[0], "f", "element", ARROW_FLAG_NULLABLE, 0, &e),
      &e);
  if (n == 3)
    CHECK_OK(hs_arrow_schema_init(s->children[2], "l", "id", ARROW_FLAG_NULLABLE, 0, &e), &e);
}

/* Issue 12: a vector column's dimension is part of the schema check, a
 * misfit names the column and both types, duplicate names are refused by
 * create and append; nothing is written by a refused append. The checks
 * run before any batch is read, so schema-only streams do. */
static void test_schema_checks(void) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200], data[4300];
  snprintf(root, sizeof root, "%s/v", dir);
  snprintf(data, sizeof data, "%s/data", root);
  struct ArrowSchema s;
  vec_schema(&s, "+w:8", "emb", 0, 2);
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, NULL, &t, &e), &e);
  s.release(&s);
  if (t == NULL) return;
  static const struct {
    const char *format;
    int64_t flags;
    const char *want;
  } bad[] = {
      {"+w:9", 0,
       "column 'emb': table has fixed_size_list<float32, 8> not null, data has "
       "fixed_size_list<float32, 9> not null (vector dimensions differ)"},
      {"+w:7", ARROW_FLAG_NULLABLE,
       "column 'emb': table has fixed_size_list<float32, 8> not null, data has "
       "fixed_size_list<float32, 7>"},
      {"+l", 0,
       "column 'emb': table has fixed_size_list<float32, 8> not null, data has "
       "list<float32> not null (a vector column takes fixed-size lists"},
      {"+w:8", ARROW_FLAG_NULLABLE,
       "column 'emb': table has fixed_size_list<float32, 8> not "
       "null, data has fixed_size_list<float32, 8> (the table's "
       "column is required"},
  };
  int64_t version = hs_table_version(t);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    vec_schema(&s, bad[i].format, "emb", bad[i].flags, 2);
    struct ArrowArrayStream st;
    CHECK_OK(hs_arrow_stream_from_batches(&s, NULL, 0, &st, &e), &e); /* moves s */
    e = (hs_error){0};
    CHECK_EQ_INT(hs_table_append(t, &st, NULL, &e), HS_ERR_SCHEMA);
    if (strstr(e.message, bad[i].want) == NULL)
      fprintf(stderr, "append %s: %s\n  want: %s\n", bad[i].format, e.message, bad[i].want);
    CHECK(strstr(e.message, bad[i].want) != NULL);
    CHECK_EQ_INT(count_files(data), 0);
    CHECK_EQ_INT(hs_table_version(t), version);
  }
  /* the right type still appends (no batches: nothing to commit) */
  vec_schema(&s, "+w:8", "emb", 0, 2);
  struct ArrowArrayStream ok;
  CHECK_OK(hs_arrow_stream_from_batches(&s, NULL, 0, &ok, &e), &e);
  CHECK_OK(hs_table_append(t, &ok, NULL, &e), &e);
  /* a duplicate column in an append */
  vec_schema(&s, "+w:8", "emb", 0, 3);
  struct ArrowArrayStream dup;
  CHECK_OK(hs_arrow_stream_from_batches(&s, NULL, 0, &dup, &e), &e);
  e = (hs_error){0};
  CHECK_EQ_INT(hs_table_append(t, &dup, NULL, &e), HS_ERR_SCHEMA);
  CHECK(strstr(e.message, "duplicate column name 'id'") != NULL);
  hs_table_free(t);

  /* create: duplicate top-level and nested names */
  snprintf(root, sizeof root, "%s/d", dir);
  vec_schema(&s, "+w:8", "id", 0, 2);
  e = (hs_error){0};
  CHECK_EQ_INT(hs_table_create(root, &s, NULL, &t, &e), HS_ERR_SCHEMA);
  CHECK(strstr(e.message, "duplicate column name 'id'") != NULL);
  s.release(&s);
  CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 1, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s.children[0], "+s", "st", ARROW_FLAG_NULLABLE, 2, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s.children[0]->children[0], "i", "x", 0, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s.children[0]->children[1], "u", "x", 0, 0, &e), &e);
  e = (hs_error){0};
  CHECK_EQ_INT(hs_table_create(root, &s, NULL, &t, &e), HS_ERR_SCHEMA);
  CHECK(strstr(e.message, "field 'st': duplicate field name 'x'") != NULL);
  s.release(&s);
  char meta[4300];
  snprintf(meta, sizeof meta, "%s/metadata/v1.metadata.json", root);
  CHECK(access(meta, F_OK) != 0);
  rm_rf(dir);
  hs_free(dir);
}

int main(void) {
  const char *drv = getenv("HS_TABLE_DRIVER");
  if (drv != NULL) return driver(drv);
  test_round_trip(2);
  test_round_trip(3);
  test_errors();
  test_schema_checks();
  test_concurrency();
  test_crash();
  return hs_test_finish("test_table");
}
