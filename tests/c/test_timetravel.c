/*
 * test_timetravel.c — time travel on tables: snapshot as of a time (the
 * snapshot log, errors before the first), tags and branches (resolution,
 * duplicates, unknown names listing the refs), rollback (ancestors only,
 * a no-op onto the current snapshot, history flags, appends after it,
 * survival across reopen, a stale handle retrying over a newer version,
 * SIGKILL at every step of its commit), and tables other writers named
 * ("NNNNN-<uuid>.metadata.json": newest number wins, ties by
 * last-updated-ms, read-only) and static metadata files; tags created by
 * one process while another appends (ref commits retry, nothing lost);
 * hostile metadata (a parent cycle, a log naming a missing snapshot).
 *
 * Driver modes for tests/python/test_timetravel.py:
 *   HS_TT_SCRIPT="append 10;sleep 3;tag v1 0;rollback 1;..." with
 *   HS_TT_TABLE=<dir> (created; HS_TT_FORMAT=2|3): runs the operations
 *   (K = index of an appended snapshot, -1 the current one), printing
 *   "op <i> ok <snapshot id or -1>" or "op <i> err <hs_status number> <message>",
 *   then the dump below.
 *   HS_TT_READ=<table dir or a .metadata.json path>: opens it (folder with
 *   hs_table_open, file with hs_table_open_metadata), then the dump and
 *   "readonly <0|1>" (whether a commit is refused as unsupported).
 * The dump prints "metadata", "current", per snapshot "snapshot <id>
 * <parent> <timestamp-ms> <rows>" (and, with HS_TT_OUT=<dir>, writes the
 * scan of that snapshot to <dir>/<id>.parquet), "history <ts> <id>
 * <parent> <0|1>", "ref <name> <id> tag|branch", and "asof <ms> <id|-1>"
 * for times around every snapshot-log entry.
 */
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "io/fs.h"
#include "table/table.h"
#include "table/timetravel.h"

/* ------------------------------------------------------------ helpers */

/* Schema {id: int64 not null, name: utf8}. */
static void make_schema(struct ArrowSchema *s) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, 2, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[0], "l", "id", 0, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[1], "u", "name", ARROW_FLAG_NULLABLE, 0, &e), &e);
}

/* One batch: id = first .., name "r<id>" (null when id % 5 == 0). */
static hs_status append_rows(hs_table *t, int64_t first, int64_t n, int64_t *snap, hs_error *e) {
  int64_t *ids = hs_malloc((size_t)n * sizeof *ids);
  int32_t *offs = hs_malloc((size_t)(n + 1) * sizeof *offs);
  uint8_t *valid = hs_calloc((size_t)n / 8 + 1, 1);
  char *data = hs_malloc((size_t)n * 24 + 1);
  int64_t nulls = 0;
  offs[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    ids[i] = first + i;
    int len = 0;
    if (ids[i] % 5 == 0) {
      nulls++;
    } else {
      valid[i / 8] |= (uint8_t)(1u << (i % 8));
      len = snprintf(data + offs[i], 24, "r%lld", (long long)ids[i]);
    }
    offs[i + 1] = offs[i] + len;
  }
  struct ArrowArray cols[2], batch;
  memset(cols, 0, sizeof cols);
  hs_status st = hs_arrow_array_make_primitive(&cols[0], n, ids, NULL, 0, e);
  if (st == HS_OK) st = hs_arrow_array_make_binary(&cols[1], n, offs, data, valid, nulls, e);
  if (st == HS_OK) st = hs_arrow_array_make_struct(&batch, n, cols, 2, NULL, 0, e);
  if (st != HS_OK) return st;
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArrayStream stream;
  if ((st = hs_arrow_stream_from_batches(&s, &batch, 1, &stream, e)) != HS_OK) return st;
  return hs_table_append(t, &stream, snap, e);
}

/* Rows of snapshot `snap` (-1 current), or -1 on a failed scan. */
static int64_t count_rows(hs_table *t, int64_t snap, hs_error *e) {
  struct ArrowArrayStream st;
  if (hs_table_scan(t, snap, NULL, 0, &st, e) != HS_OK) return -1;
  struct ArrowSchema schema;
  struct ArrowArray *b = NULL;
  size_t nb = 0;
  hs_status rc = hs_arrow_stream_collect(&st, &schema, &b, &nb, e);
  st.release(&st);
  if (rc != HS_OK) return -1;
  int64_t n = 0;
  for (size_t i = 0; i < nb; i++) n += b[i].length;
  hs_arrow_batches_free(b, nb);
  schema.release(&schema);
  return n;
}

static char *temp_dir(void) {
  char tmpl[] = "/tmp/hs_tt_XXXXXX";
  char *d = mkdtemp(tmpl);
  return d ? hs_strdup(d) : NULL;
}

static void rm_rf(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "rm -rf %s failed\n", dir);
}

/* snprintf into a path buffer; an overlong path aborts the test. */
static void pathf(char *out, size_t cap, const char *fmt, ...) HS_PRINTF(3, 4);
static void pathf(char *out, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out, cap, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= cap) {
    fprintf(stderr, "path too long\n");
    exit(1);
  }
}

static void sleep_ms(int ms) {
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
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

static bool has(const hs_error *e, const char *text) {
  bool ok = strstr(e->message, text) != NULL;
  if (!ok) fprintf(stderr, "message lacks '%s': %s\n", text, e->message);
  return ok;
}

/* --------------------------------------------------------------- tests */

/* Three appends a few ms apart: ids s[0..2]; the table stays open. */
static hs_table *three_appends(const char *root, int64_t s[3]) {
  hs_error e = {0};
  hs_table *t = create_table(root, 2);
  if (t == NULL) return NULL;
  for (int i = 0; i < 3; i++) {
    if (i) sleep_ms(3);
    CHECK_OK(append_rows(t, i * 100, 10 + i, &s[i], &e), &e);
  }
  return t;
}

static void test_as_of(void) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  pathf(root, sizeof root, "%s/t", dir);
  int64_t s[3];
  hs_table *t = three_appends(root, s);
  if (t == NULL) return;
  CHECK_EQ_INT(t->meta.n_snapshot_log, 3);
  for (size_t i = 0; i < 3; i++) {
    int64_t ts = t->meta.snapshot_log[i].timestamp_ms, got = 0;
    CHECK_OK(hs_table_snapshot_at(t, ts, &got, &e), &e);
    CHECK_EQ_INT(got, s[i]);
    CHECK_OK(hs_table_snapshot_at(t, ts + 1, &got, &e), &e);
    CHECK_EQ_INT(got, s[i]);
    if (i > 0) {
      CHECK_OK(hs_table_snapshot_at(t, ts - 1, &got, &e), &e);
      CHECK_EQ_INT(got, s[i - 1]);
    }
  }
  int64_t got = 0;
  CHECK_OK(hs_table_snapshot_at(t, INT64_MAX / 2, &got, &e), &e);
  CHECK_EQ_INT(got, s[2]);
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_table_snapshot_at(t, 1704067200000LL, &got, &e2), HS_ERR_NOT_FOUND);
  CHECK_EQ_INT(got, -1);
  CHECK(has(&e2, "no snapshot at or before 2024-01-01T00:00:00Z; the first is"));
  hs_error e3 = {0};
  CHECK_EQ_INT(hs_table_snapshot_at(t, t->meta.snapshot_log[0].timestamp_ms - 1, &got, &e3),
               HS_ERR_NOT_FOUND);
  char want[64];
  snprintf(want, sizeof want, "the first is %lld at", (long long)s[0]);
  CHECK(has(&e3, want));
  /* An empty table. */
  char root2[4200];
  pathf(root2, sizeof root2, "%s/empty", dir);
  hs_table *t2 = create_table(root2, 3);
  hs_error e4 = {0};
  CHECK_EQ_INT(hs_table_snapshot_at(t2, 1, &got, &e4), HS_ERR_NOT_FOUND);
  CHECK(has(&e4, "has no snapshots"));
  hs_table_history_entry *h = NULL;
  size_t nh = 9;
  CHECK_OK(hs_table_history(t2, &h, &nh, &e), &e);
  CHECK(h == NULL && nh == 0);
  hs_table_free(t2);
  hs_table_free(t);
  rm_rf(dir);
  hs_free(dir);
}

static void test_refs_and_rollback(void) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  pathf(root, sizeof root, "%s/t", dir);
  int64_t s[3];
  hs_table *t = three_appends(root, s);
  if (t == NULL) return;
  int64_t got = 0;
  CHECK_OK(hs_table_ref_snapshot(t, "main", &got, &e), &e);
  CHECK_EQ_INT(got, s[2]);

  /* Tags and branches. */
  CHECK_OK(hs_table_create_tag(t, "v1", s[0], 86400000, &e), &e);
  CHECK_OK(hs_table_create_branch(t, "dev", -1, &e), &e);
  CHECK_EQ_INT(hs_table_version(t), 6);
  hs_error e1 = {0};
  CHECK_EQ_INT(hs_table_create_tag(t, "dev", s[1], -1, &e1), HS_ERR_INVALID_ARG);
  CHECK(has(&e1, "a branch of that name already exists"));
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_table_create_tag(t, "x", 12345, -1, &e2), HS_ERR_NOT_FOUND);
  CHECK(has(&e2, "no snapshot 12345"));
  hs_error e3 = {0};
  CHECK_EQ_INT(hs_table_create_branch(t, "", -1, &e3), HS_ERR_INVALID_ARG);
  CHECK_EQ_INT(hs_table_version(t), 6);
  CHECK_OK(hs_table_ref_snapshot(t, "v1", &got, &e), &e);
  CHECK_EQ_INT(got, s[0]);
  CHECK_OK(hs_table_ref_snapshot(t, "dev", &got, &e), &e);
  CHECK_EQ_INT(got, s[2]);
  hs_error e4 = {0};
  CHECK_EQ_INT(hs_table_ref_snapshot(t, "nope", &got, &e4), HS_ERR_NOT_FOUND);
  CHECK(has(&e4, "no tag or branch named 'nope'; refs are: main, v1, dev"));
  hs_table_ref_info *refs = NULL;
  size_t nr = 0;
  CHECK_OK(hs_table_refs(t, &refs, &nr, &e), &e);
  CHECK_EQ_INT(nr, 3);
  if (nr == 3) {
    CHECK(refs[1].is_tag && refs[1].max_ref_age_ms == 86400000 && !refs[2].is_tag);
    CHECK(!refs[0].is_tag && refs[0].snapshot_id == s[2]);
  }
  hs_free(refs);
  CHECK_EQ_INT(count_rows(t, s[0], &e), 10);

  /* Rollback to the first snapshot. */
  int64_t log_before = (int64_t)t->meta.n_snapshot_log;
  CHECK_OK(hs_table_rollback_to_snapshot(t, s[0], &e), &e);
  CHECK_EQ_INT(hs_table_current_snapshot_id(t), s[0]);
  CHECK_EQ_INT(hs_table_version(t), 7);
  CHECK_EQ_INT(t->meta.n_snapshot_log, log_before + 1);
  CHECK_EQ_INT(t->meta.n_snapshots, 3);
  CHECK_EQ_INT(t->meta.n_metadata_log, 6);
  CHECK_EQ_INT(t->meta.snapshot_log[t->meta.n_snapshot_log - 1].timestamp_ms,
               t->meta.last_updated_ms);
  CHECK_OK(hs_table_ref_snapshot(t, "main", &got, &e), &e);
  CHECK_EQ_INT(got, s[0]);
  CHECK_EQ_INT(count_rows(t, -1, &e), 10);
  CHECK_EQ_INT(count_rows(t, s[2], &e), 10 + 11 + 12);
  /* A time before the rollback still reads what was current then. */
  CHECK_OK(hs_table_snapshot_at(t, t->meta.snapshot_log[2].timestamp_ms, &got, &e), &e);
  CHECK(got == s[2] ||
        t->meta.snapshot_log[3].timestamp_ms == t->meta.snapshot_log[2].timestamp_ms);
  hs_table_history_entry *h = NULL;
  size_t nh = 0;
  CHECK_OK(hs_table_history(t, &h, &nh, &e), &e);
  CHECK_EQ_INT(nh, 4);
  if (nh == 4) {
    CHECK(h[0].is_current_ancestor && !h[1].is_current_ancestor && !h[2].is_current_ancestor);
    CHECK(h[3].is_current_ancestor && h[3].snapshot_id == s[0] && h[3].parent_snapshot_id == -1);
    CHECK_EQ_INT(h[2].parent_snapshot_id, s[1]);
  }
  hs_free(h);

  /* Not an ancestor any more; unknown; onto the current one (no commit). */
  hs_error e5 = {0};
  CHECK_EQ_INT(hs_table_rollback_to_snapshot(t, s[2], &e5), HS_ERR_INVALID_ARG);
  CHECK(has(&e5, "not an ancestor of the current snapshot"));
  hs_error e6 = {0};
  CHECK_EQ_INT(hs_table_rollback_to_snapshot(t, 777, &e6), HS_ERR_NOT_FOUND);
  CHECK_OK(hs_table_rollback_to_snapshot(t, s[0], &e), &e);
  CHECK_EQ_INT(hs_table_version(t), 7);

  /* An append after the rollback builds on s[0]; refs survive. */
  int64_t s3 = 0;
  CHECK_OK(append_rows(t, 1000, 5, &s3, &e), &e);
  const hs_iceberg_snapshot *cur = hs_table_current(t);
  CHECK(cur != NULL && cur->has_parent_snapshot_id && cur->parent_snapshot_id == s[0]);
  CHECK_EQ_INT(count_rows(t, -1, &e), 15);
  CHECK_OK(hs_table_ref_snapshot(t, "v1", &got, &e), &e);
  CHECK_EQ_INT(got, s[0]);

  /* A stale handle: its rollback is re-validated on the latest version. */
  hs_table *stale = NULL;
  CHECK_OK(hs_table_open(root, &stale, &e), &e);
  int64_t s4 = 0;
  CHECK_OK(append_rows(t, 2000, 4, &s4, &e), &e);
  CHECK_OK(hs_table_rollback_to_snapshot(stale, s3, &e), &e);
  CHECK_EQ_INT(hs_table_version(stale), hs_table_version(t) + 1);
  CHECK_EQ_INT(hs_table_current_snapshot_id(stale), s3);
  hs_error e7 = {0};
  CHECK_EQ_INT(hs_table_rollback_to_snapshot(t, s[1], &e7), HS_ERR_INVALID_ARG);
  hs_table_free(stale);

  /* Reopen: everything is in the metadata. */
  hs_table_free(t);
  t = NULL;
  CHECK_OK(hs_table_open(root, &t, &e), &e);
  if (t != NULL) {
    CHECK_EQ_INT(hs_table_current_snapshot_id(t), s3);
    CHECK_EQ_INT(t->meta.n_snapshots, 5);
    CHECK_OK(hs_table_ref_snapshot(t, "dev", &got, &e), &e);
    CHECK_EQ_INT(got, s[2]);
    CHECK_EQ_INT(count_rows(t, s4, &e), 19);
  }
  hs_table_free(t);
  rm_rf(dir);
  hs_free(dir);
}

/* A rollback killed at each step of its commit: the table opens at the old
 * or the new current snapshot, never anything else. */
static void test_rollback_crash(void) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  pathf(root, sizeof root, "%s/t", dir);
  int64_t s[3];
  hs_table *t = three_appends(root, s);
  if (t == NULL) return;
  hs_table_free(t);
  int seen_old = 0, seen_new = 0;
  for (int step = 1; step <= 4; step++) {
    pid_t pid = fork();
    if (pid == 0) {
      char v[16];
      snprintf(v, sizeof v, "%d", step);
      setenv("HS_TABLE_CRASH_STEP", v, 1);
      hs_table *c = NULL;
      hs_error ce = {0};
      if (hs_table_open(root, &c, &ce) != HS_OK) _exit(2);
      int64_t target = c->meta.snapshots[0].snapshot_id;
      if (hs_table_current_snapshot_id(c) == target) target = c->meta.snapshots[2].snapshot_id;
      /* Alternate: back to s[0], or (not an ancestor) refused. */
      hs_status rc = hs_table_rollback_to_snapshot(c, target, &ce);
      _exit(rc == HS_OK ? 0 : 3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    hs_table *r = NULL;
    CHECK_OK(hs_table_open(root, &r, &e), &e);
    if (r == NULL) continue;
    int64_t cur = hs_table_current_snapshot_id(r);
    CHECK(cur == s[0] || cur == s[2]);
    seen_old += cur == s[2];
    seen_new += cur == s[0];
    CHECK_EQ_INT(count_rows(r, -1, &e), cur == s[0] ? 10 : 33);
    hs_table_free(r);
  }
  CHECK(seen_new > 0 && seen_old > 0); /* step 1 kills before, 4 finishes */
  rm_rf(dir);
  hs_free(dir);
}

/* Rename our vN files to catalog-style names (v1 -> 00000-<uuid>) and drop
 * the hint. Returns the number of versions. */
static int64_t to_catalog_names(const char *root, char names[][128], int64_t max) {
  int64_t n = 0;
  for (int64_t v = 1; v <= max; v++) {
    char from[4200], to[4300];
    hs_table_version_path(root, v, from, sizeof from);
    if (!hs_fs_exists(from)) break;
    char uuid[37];
    hs_fs_uuid4(uuid, NULL);
    snprintf(names[v - 1], 128, "%05lld-%s.metadata.json", (long long)(v - 1), uuid);
    pathf(to, sizeof to, "%s/metadata/%s", root, names[v - 1]);
    CHECK(rename(from, to) == 0);
    n++;
  }
  char hint[4200];
  pathf(hint, sizeof hint, "%s/metadata/version-hint.text", root);
  unlink(hint);
  return n;
}

static void test_foreign_and_static(void) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  pathf(root, sizeof root, "%s/t", dir);
  int64_t s[3];
  hs_table *t = three_appends(root, s);
  if (t == NULL) return;
  hs_table_free(t);
  char names[8][128];
  int64_t nv = to_catalog_names(root, names, 8);
  CHECK_EQ_INT(nv, 4);

  t = NULL;
  CHECK_OK(hs_table_open(root, &t, &e), &e);
  if (t != NULL) {
    CHECK_EQ_INT(hs_table_version(t), 3);
    CHECK_EQ_INT(hs_table_current_snapshot_id(t), s[2]);
    CHECK(strstr(hs_table_metadata_location(t), names[3]) != NULL);
    CHECK_EQ_INT(count_rows(t, -1, &e), 33);
    CHECK_EQ_INT(count_rows(t, s[1], &e), 21);
    hs_error e1 = {0};
    CHECK_EQ_INT(append_rows(t, 500, 3, NULL, &e1), HS_ERR_UNSUPPORTED);
    CHECK(has(&e1, "catalog"));
    hs_error e2 = {0};
    CHECK_EQ_INT(hs_table_rollback_to_snapshot(t, s[0], &e2), HS_ERR_UNSUPPORTED);
    CHECK_OK(hs_table_refresh(t, &e), &e);
    CHECK_EQ_INT(hs_table_version(t), 3);
    hs_table_free(t);
  }
  /* A second file with the top number but an older last-updated-ms loses;
   * a newer one wins. */
  char src[4300], dst[4300];
  pathf(src, sizeof src, "%s/metadata/%s", root, names[1]);
  pathf(dst, sizeof dst, "%s/metadata/00003-zzzz.metadata.json", root);
  hs_buf b;
  hs_buf_init(&b);
  CHECK_OK(hs_fs_read_file(src, 1 << 20, &b, &e), &e);
  CHECK_OK(hs_fs_write_file(dst, b.data, b.len, &e), &e);
  hs_buf_free(&b);
  t = NULL;
  CHECK_OK(hs_table_open(root, &t, &e), &e);
  if (t != NULL) CHECK_EQ_INT(hs_table_current_snapshot_id(t), s[2]);
  hs_table_free(t);
  pathf(dst, sizeof dst, "%s/metadata/00004-a.metadata.json", root);
  CHECK(rename(src, dst) == 0); /* now the highest number: s[0]'s version */
  t = NULL;
  CHECK_OK(hs_table_open(root, &t, &e), &e);
  if (t != NULL) CHECK_EQ_INT(hs_table_current_snapshot_id(t), s[0]);
  hs_table_free(t);

  /* Static: one exact file, read-only, refresh keeps it. */
  pathf(src, sizeof src, "file://%s/metadata/%s", root, names[2]);
  t = NULL;
  CHECK_OK(hs_table_open_metadata(src, &t, &e), &e);
  if (t != NULL) {
    CHECK_EQ_INT(hs_table_current_snapshot_id(t), s[1]);
    CHECK_EQ_INT(hs_table_version(t), 2);
    CHECK_EQ_INT(count_rows(t, -1, &e), 21);
    CHECK_OK(hs_table_refresh(t, &e), &e);
    CHECK_EQ_INT(hs_table_current_snapshot_id(t), s[1]);
    hs_error e1 = {0};
    CHECK_EQ_INT(hs_table_create_tag(t, "x", -1, -1, &e1), HS_ERR_UNSUPPORTED);
    CHECK(has(&e1, "read-only"));
    hs_table_free(t);
  }
  pathf(src, sizeof src, "%s/metadata/%s", root, names[0]);
  t = NULL;
  CHECK_OK(hs_table_open_metadata(src, &t, &e), &e);
  if (t != NULL) {
    CHECK_EQ_INT(hs_table_current_snapshot_id(t), -1);
    CHECK_EQ_INT(count_rows(t, -1, &e), 0);
    hs_table_free(t);
  }
  /* Errors: a missing file, garbage, a folder that is not a table. */
  hs_error e1 = {0};
  t = NULL;
  pathf(src, sizeof src, "%s/metadata/nope.metadata.json", root);
  CHECK_EQ_INT(hs_table_open_metadata(src, &t, &e1), HS_ERR_NOT_FOUND);
  pathf(src, sizeof src, "%s/metadata/00009-bad.metadata.json", root);
  CHECK_OK(hs_fs_write_file(src, "{\"format-version\": 2", 20, &e), &e);
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_table_open_metadata(src, &t, &e2), HS_ERR_CORRUPT);
  CHECK(has(&e2, "00009-bad.metadata.json"));
  hs_error e3 = {0};
  CHECK_EQ_INT(hs_table_open(root, &t, &e3), HS_ERR_CORRUPT); /* the latest is corrupt */
  char empty[4200];
  pathf(empty, sizeof empty, "%s/empty/metadata", dir);
  CHECK_OK(hs_fs_mkdirs(empty, &e), &e);
  pathf(empty, sizeof empty, "%s/empty", dir);
  hs_error e4 = {0};
  CHECK_EQ_INT(hs_table_open(empty, &t, &e4), HS_ERR_NOT_FOUND);
  CHECK(has(&e4, "not a table"));
  pathf(empty, sizeof empty, "%s/none", dir);
  hs_error e5 = {0};
  CHECK(hs_table_open(empty, &t, &e5) != HS_OK);
  CHECK(t == NULL);
  rm_rf(dir);
  hs_free(dir);
}

/* One process appends while another creates tags at the current snapshot:
 * ref commits lose races to appends and retry; nothing is lost. */
static void test_concurrent_refs(void) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  pathf(root, sizeof root, "%s/t", dir);
  hs_table *t = create_table(root, 2);
  if (t == NULL) return;
  CHECK_OK(append_rows(t, 0, 3, NULL, &e), &e);
  hs_table_free(t);
  enum { N = 12 };
  pid_t kids[2];
  for (int k = 0; k < 2; k++) {
    if ((kids[k] = fork()) == 0) {
      hs_table *c = NULL;
      hs_error ce = {0};
      if (hs_table_open(root, &c, &ce) != HS_OK) _exit(2);
      for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        hs_status rc = k == 0 ? append_rows(c, 100 + i * 10, 10, NULL, &ce)
                              : hs_table_create_tag(c, name, -1, -1, &ce);
        if (rc != HS_OK) {
          fprintf(stderr, "child %d: %s\n", k, ce.message);
          _exit(3);
        }
      }
      hs_table_free(c);
      _exit(0);
    }
  }
  for (int k = 0; k < 2; k++) {
    int status = 0;
    waitpid(kids[k], &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  t = NULL;
  CHECK_OK(hs_table_open(root, &t, &e), &e);
  if (t != NULL) {
    CHECK_EQ_INT(hs_table_version(t), 2 + 2 * N);
    CHECK_EQ_INT(t->meta.n_snapshots, 1 + N);
    CHECK_EQ_INT(t->meta.n_refs, 1 + N);
    CHECK_EQ_INT(count_rows(t, -1, &e), 3 + 10 * N);
    /* Tags point at snapshots in commit order. */
    int64_t prev_seq = 0;
    for (int i = 0; i < N; i++) {
      char name[16];
      snprintf(name, sizeof name, "t%d", i);
      int64_t id = -1;
      CHECK_OK(hs_table_ref_snapshot(t, name, &id, &e), &e);
      const hs_iceberg_snapshot *s = hs_iceberg_metadata_snapshot(&t->meta, id);
      CHECK(s != NULL && s->sequence_number >= prev_seq);
      if (s != NULL) prev_seq = s->sequence_number;
    }
    hs_table_free(t);
  }
  rm_rf(dir);
  hs_free(dir);
}

/* Hostile metadata: a parent cycle and a log naming a missing snapshot. */
static void test_hostile_metadata(void) {
  hs_error e = {0};
  char *dir = temp_dir();
  char root[4200];
  pathf(root, sizeof root, "%s/t", dir);
  int64_t s[3];
  hs_table *t = three_appends(root, s);
  if (t == NULL) return;
  /* In memory only: s[0]'s parent becomes s[2] (a cycle). */
  t->meta.snapshots[0].has_parent_snapshot_id = true;
  t->meta.snapshots[0].parent_snapshot_id = s[2];
  CHECK(hs_table_is_ancestor(&t->meta, s[0], s[2]));
  CHECK(!hs_table_is_ancestor(&t->meta, 999, s[2]));
  hs_table_history_entry *h = NULL;
  size_t nh = 0;
  CHECK_OK(hs_table_history(t, &h, &nh, &e), &e);
  CHECK_EQ_INT(nh, 3);
  hs_free(h);
  t->meta.n_snapshot_log = 0; /* fall back to the (cyclic) ancestry */
  int64_t got = 0;
  hs_error e1 = {0};
  CHECK_EQ_INT(hs_table_snapshot_at(t, 5, &got, &e1), HS_ERR_NOT_FOUND);
  CHECK_OK(hs_table_load_version(t, hs_table_version(t), &e), &e);
  t->meta.snapshot_log[1].snapshot_id = 4242;
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_table_snapshot_at(t, t->meta.snapshot_log[1].timestamp_ms, &got, &e2),
               HS_ERR_NOT_FOUND);
  CHECK(has(&e2, "4242") && has(&e2, "has expired"));
  hs_table_free(t);
  rm_rf(dir);
  hs_free(dir);
}

/* ------------------------------------------------------------- driver */

static void dump(hs_table *t, const char *out_dir) {
  hs_error e = {0};
  printf("metadata %s\n", hs_table_metadata_location(t));
  printf("current %lld\n", (long long)hs_table_current_snapshot_id(t));
  for (size_t i = 0; i < t->meta.n_snapshots; i++) {
    const hs_iceberg_snapshot *s = &t->meta.snapshots[i];
    long long rows = -1;
    if (out_dir != NULL) {
      char path[4200];
      pathf(path, sizeof path, "%s/%lld.parquet", out_dir, (long long)s->snapshot_id);
      struct ArrowArrayStream st;
      hs_status rc = hs_table_scan(t, s->snapshot_id, NULL, 0, &st, &e);
      if (rc == HS_OK) rc = hs_parquet_write_stream(path, &st, NULL, &e);
      if (rc != HS_OK) printf("scanerror %lld %s\n", (long long)s->snapshot_id, e.message);
      memset(&e, 0, sizeof e);
    } else {
      rows = (long long)count_rows(t, s->snapshot_id, &e);
    }
    printf("snapshot %lld %lld %lld %lld\n", (long long)s->snapshot_id,
           s->has_parent_snapshot_id ? (long long)s->parent_snapshot_id : -1LL,
           (long long)s->timestamp_ms, rows);
  }
  hs_table_history_entry *h = NULL;
  size_t nh = 0;
  if (hs_table_history(t, &h, &nh, &e) == HS_OK) {
    for (size_t i = 0; i < nh; i++) {
      printf("history %lld %lld %lld %d\n", (long long)h[i].made_current_at_ms,
             (long long)h[i].snapshot_id, (long long)h[i].parent_snapshot_id,
             h[i].is_current_ancestor);
    }
  }
  hs_table_ref_info *r = NULL;
  size_t nr = 0;
  if (hs_table_refs(t, &r, &nr, &e) == HS_OK) {
    for (size_t i = 0; i < nr; i++) {
      int64_t id = -1;
      hs_table_ref_snapshot(t, r[i].name, &id, NULL);
      printf("ref %s %lld %s\n", r[i].name, (long long)id, r[i].is_tag ? "tag" : "branch");
    }
  }
  hs_free(r);
  /* Times around every log entry, and before the first. */
  for (size_t i = 0; i < nh; i++) {
    for (int64_t d = -1; d <= 1; d++) {
      int64_t at = h[i].made_current_at_ms + d, id = -1;
      (void)hs_table_snapshot_at(t, at, &id, NULL);
      printf("asof %lld %lld\n", (long long)at, (long long)id);
    }
  }
  hs_free(h);
}

static int run_script(const char *root, const char *script) {
  const char *fv = getenv("HS_TT_FORMAT");
  hs_table *t = create_table(root, fv ? atoi(fv) : 2);
  if (t == NULL) return 1;
  int64_t snaps[4096];
  size_t n_snaps = 0;
  int64_t next_id = 0;
  char *copy = hs_strdup(script);
  char *save = NULL;
  int i = 0;
  for (char *op = strtok_r(copy, ";", &save); op != NULL; op = strtok_r(NULL, ";", &save), i++) {
    char verb[32] = "", name[256] = "";
    long long a = 0;
    hs_error e = {0};
    hs_status rc = HS_OK;
    int64_t id = -1;
    if (sscanf(op, "%31s", verb) != 1) continue;
    if (strcmp(verb, "append") == 0 && sscanf(op, "%*s %lld", &a) == 1) {
      rc = append_rows(t, next_id, a, &id, &e);
      next_id += a;
      if (rc == HS_OK && n_snaps < 4096) snaps[n_snaps++] = id;
    } else if (strcmp(verb, "sleep") == 0 && sscanf(op, "%*s %lld", &a) == 1) {
      sleep_ms((int)a);
    } else if (strcmp(verb, "rollback") == 0 && sscanf(op, "%*s %lld", &a) == 1) {
      id = a < 0 || (size_t)a >= n_snaps ? -1 : snaps[a];
      rc = hs_table_rollback_to_snapshot(t, id, &e);
    } else if ((strcmp(verb, "tag") == 0 || strcmp(verb, "branch") == 0) &&
               sscanf(op, "%*s %255s %lld", name, &a) == 2) {
      id = a < 0 || (size_t)a >= n_snaps ? -1 : snaps[a];
      rc = verb[0] == 't' ? hs_table_create_tag(t, name, id, -1, &e)
                          : hs_table_create_branch(t, name, id, &e);
    } else {
      fprintf(stderr, "bad op '%s'\n", op);
      hs_free(copy);
      hs_table_free(t);
      return 1;
    }
    if (rc == HS_OK) {
      printf("op %d ok %lld\n", i, (long long)id);
    } else {
      printf("op %d err %d %s\n", i, (int)rc, e.message);
    }
  }
  hs_free(copy);
  dump(t, getenv("HS_TT_OUT"));
  hs_table_free(t);
  return 0;
}

static int read_table(const char *path) {
  hs_error e = {0};
  hs_table *t = NULL;
  size_t len = strlen(path);
  bool file = len > 14 && strcmp(path + len - 14, ".metadata.json") == 0;
  hs_status rc = file ? hs_table_open_metadata(path, &t, &e) : hs_table_open(path, &t, &e);
  if (rc != HS_OK) {
    fprintf(stderr, "open: %s\n", e.message);
    return 1;
  }
  dump(t, getenv("HS_TT_OUT"));
  /* Tables other writers named, and static ones, refuse every commit. */
  hs_error we = {0};
  hs_status wrc = hs_table_create_tag(t, "probe", -1, -1, &we);
  printf("readonly %d\n", wrc == HS_ERR_UNSUPPORTED);
  hs_table_free(t);
  return 0;
}

int main(void) {
  const char *script = getenv("HS_TT_SCRIPT");
  if (script != NULL) {
    const char *root = getenv("HS_TT_TABLE");
    return root ? run_script(root, script) : 2;
  }
  const char *rd = getenv("HS_TT_READ");
  if (rd != NULL) return read_table(rd);
  test_as_of();
  test_refs_and_rollback();
  test_rollback_crash();
  test_foreign_and_static();
  test_concurrent_refs();
  test_hostile_metadata();
  return hs_test_finish("test_timetravel");
}
