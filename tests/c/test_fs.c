/*
 * test_fs.c — the deferred-durability primitives of src/io/fs.c that the
 * append commit stands on: hs_fs_create_unsynced (exclusive, content),
 * hs_fs_publish_prepare + hs_fs_publish_link (first writer wins, the loser
 * leaves the winner's bytes and no temporary), hs_fs_sync_group (files and
 * directories, errors naming the failing path, the size limit), the
 * Parquet writer's unsynced close (the file reads back), and
 * hs_fs_replace_hint (exchange over an existing hint, plain rename without
 * one; concurrent writers never let a reader see a missing, empty or
 * malformed hint; no temporaries left), and that no path hangs or reads
 * as "exists" when it cannot be looked up (issue 12): hs_fs_probe tells
 * missing from an error and names the cause (a name too long, a file where
 * a folder should be, a symlink loop); FIFOs, folders and devices are
 * refused by every read open without blocking; a table opened at such
 * paths is an error at once (an alarm fails the test if anything hangs).
 * Runs under ASan too.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_table_fixture3.h"
#include "hs_test.h"
#include "hyperstream.h"
#include "io/fs.h"
#include "io/io.h"
#include "parquet/parquet.h"

static char root[256];

static void path_of(char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s", root, name);
}

static bool read_text(const char *path, char *out, size_t cap) {
  hs_buf b;
  hs_buf_init(&b);
  bool ok = hs_fs_read_file(path, cap - 1, &b, NULL) == HS_OK;
  if (ok) {
    memcpy(out, b.data, b.len);
    out[b.len] = '\0';
  }
  hs_buf_free(&b);
  return ok;
}

static size_t count_names(const char *dir) {
  char **names = NULL;
  size_t n = 0;
  if (hs_fs_list(dir, &names, &n, NULL) != HS_OK) return (size_t)-1;
  hs_fs_names_free(names, n);
  return n;
}

static void test_create_and_publish(void) {
  hs_error e = {0};
  char p[512], q[512], tmp[600], tmp2[600], text[64];
  path_of(p, sizeof p, "a.bin");
  int fd = -1;
  CHECK_OK(hs_fs_create_unsynced(p, "hello", 5, &fd, &e), &e);
  CHECK(fd >= 0);
  hs_fs_sync_item it = {.fd = fd, .path = p};
  CHECK_OK(hs_fs_sync_group(&it, 1, &e), &e);
  close(fd);
  CHECK(read_text(p, text, sizeof text) && strcmp(text, "hello") == 0);
  /* Exclusive: an existing name is an error naming it; the file stays. */
  e = (hs_error){0};
  CHECK(hs_fs_create_unsynced(p, "x", 1, &fd, &e) == HS_ERR_IO);
  CHECK(fd == -1 && strstr(e.message, "a.bin") != NULL);
  CHECK(read_text(p, text, sizeof text) && strcmp(text, "hello") == 0);
  e = (hs_error){0};

  /* Two writers prepare the same version; the first link wins. */
  path_of(q, sizeof q, "v2.metadata.json");
  int f1 = -1, f2 = -1;
  CHECK_OK(hs_fs_publish_prepare(q, "first", 5, tmp, sizeof tmp, &f1, &e), &e);
  CHECK_OK(hs_fs_publish_prepare(q, "second", 6, tmp2, sizeof tmp2, &f2, &e), &e);
  CHECK(strcmp(tmp, tmp2) != 0 && strncmp(tmp, root, strlen(root)) == 0);
  char dir[512];
  snprintf(dir, sizeof dir, "%s", root);
  hs_fs_sync_item items[3] = {
      {.fd = f1, .path = tmp}, {.fd = f2, .path = tmp2}, {.fd = -1, .path = dir}};
  CHECK_OK(hs_fs_sync_group(items, 3, &e), &e);
  close(f1);
  close(f2);
  bool won = false;
  CHECK_OK(hs_fs_publish_link(tmp, q, &won, &e), &e);
  CHECK(won);
  CHECK_OK(hs_fs_publish_link(tmp2, q, &won, &e), &e);
  CHECK(!won);
  CHECK(read_text(q, text, sizeof text) && strcmp(text, "first") == 0);
  CHECK(!hs_fs_exists(tmp) && !hs_fs_exists(tmp2));
  CHECK_EQ_INT((long long)count_names(root), 2); /* a.bin, v2.metadata.json */
  unlink(p);
  unlink(q);
}

static void test_sync_group_errors(void) {
  hs_error e = {0};
  char missing[512], p[512];
  path_of(missing, sizeof missing, "no-such-dir");
  path_of(p, sizeof p, "b.bin");
  int fd = -1;
  CHECK_OK(hs_fs_create_unsynced(p, "b", 1, &fd, &e), &e);
  /* The failing item is named; the others still ran (the file is fine). */
  hs_fs_sync_item items[3] = {
      {.fd = fd, .path = p}, {.fd = -1, .path = missing}, {.fd = -1, .path = root}};
  CHECK(hs_fs_sync_group(items, 3, &e) == HS_ERR_IO);
  CHECK(strstr(e.message, "no-such-dir") != NULL);
  close(fd);
  /* A closed descriptor: fdatasync fails, naming the file. */
  hs_fs_sync_item bad = {.fd = fd, .path = p};
  e = (hs_error){0};
  CHECK(hs_fs_sync_group(&bad, 1, &e) == HS_ERR_IO);
  CHECK(strstr(e.message, "b.bin") != NULL && strstr(e.message, "fdatasync") != NULL);
  hs_fs_sync_item many[9];
  for (int i = 0; i < 9; i++) many[i] = (hs_fs_sync_item){.fd = -1, .path = root};
  e = (hs_error){0};
  CHECK(hs_fs_sync_group(many, 9, &e) == HS_ERR_INVALID_ARG);
  e = (hs_error){0};
  CHECK_OK(hs_fs_sync_group(many, 8, &e), &e);
  CHECK_OK(hs_fs_sync_group(NULL, 0, &e), &e);
  unlink(p);
}

static void test_parquet_unsynced_close(void) {
  hs_error e = {0};
  enum { N = 1000 };
  struct ArrowSchema s;
  struct ArrowArray a;
  make_schema(&s);
  make_batch(&a, 5, N);
  char p[512];
  path_of(p, sizeof p, "d.parquet");
  hs_parquet_write_options o;
  hs_parquet_write_options_init(&o);
  hs_parquet_writer *w = NULL;
  CHECK_OK(hs_parquet_writer_open(p, &s, &o, &w, &e), &e);
  CHECK_OK(hs_parquet_writer_write(w, &a, &e), &e);
  int fd = -1;
  CHECK_OK(hs_parquet_writer_close_unsynced(w, &fd, &e), &e);
  hs_parquet_writer_free(w); /* after a successful close the file stays */
  CHECK(fd >= 0);
  hs_fs_sync_item it = {.fd = fd, .path = p};
  CHECK_OK(hs_fs_sync_group(&it, 1, &e), &e);
  close(fd);
  /* Every id reads back. */
  hs_parquet_reader *r = NULL;
  CHECK_OK(hs_parquet_reader_open(p, &r, &e), &e);
  if (r) {
    hs_parquet_read_options ro;
    hs_parquet_read_options_init(&ro);
    struct ArrowArrayStream in;
    CHECK_OK(hs_parquet_reader_stream(r, &ro, &in, &e), &e);
    int64_t rows = 0, sum = 0;
    for (;;) {
      struct ArrowArray b;
      CHECK_EQ_INT(in.get_next(&in, &b), 0);
      if (b.release == NULL) break;
      const int64_t *ids = b.children[0]->buffers[1];
      for (int64_t i = 0; i < b.length; i++) sum += ids[b.children[0]->offset + i];
      rows += b.length;
      b.release(&b);
    }
    in.release(&in);
    CHECK_EQ_INT(rows, N);
    CHECK_EQ_INT(sum, (int64_t)N * 5 + (int64_t)N * (N - 1) / 2);
    hs_parquet_reader_free(r);
  }
  unlink(p);
  a.release(&a);
  s.release(&s);
}

typedef struct hint_job {
  const char *path;
  int first, count, step;
  int bad; /* reader: observations that were not a positive integer */
  volatile int *stop;
} hint_job;

static void *hint_writer(void *arg) {
  hint_job *j = arg;
  char num[24];
  for (int i = 0; i < j->count; i++) {
    int n = snprintf(num, sizeof num, "%d", j->first + i * j->step);
    if (hs_fs_replace_hint(j->path, num, (size_t)n, NULL) != HS_OK) j->bad++;
  }
  return NULL;
}

static void *hint_reader(void *arg) {
  hint_job *j = arg;
  while (!*j->stop) {
    char text[64];
    if (!read_text(j->path, text, sizeof text)) {
      j->bad++;
      continue;
    }
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || v <= 0) j->bad++;
  }
  return NULL;
}

static void test_hint(void) {
  hs_error e = {0};
  char p[600], text[64], sub[512];
  path_of(sub, sizeof sub, "meta");
  CHECK_OK(hs_fs_mkdirs(sub, &e), &e);
  snprintf(p, sizeof p, "%s/version-hint.text", sub);
  CHECK_OK(hs_fs_replace_hint(p, "1", 1, &e), &e); /* no old hint: rename */
  CHECK(read_text(p, text, sizeof text) && strcmp(text, "1") == 0);
  CHECK_OK(hs_fs_replace_hint(p, "12", 2, &e), &e); /* over an old one */
  CHECK(read_text(p, text, sizeof text) && strcmp(text, "12") == 0);
  CHECK_OK(hs_fs_replace_hint(p, "7", 1, &e), &e); /* shorter: no stale tail */
  CHECK(read_text(p, text, sizeof text) && strcmp(text, "7") == 0);
  CHECK_EQ_INT((long long)count_names(sub), 1);

  int rounds = getenv("HS_TEST_FS_HINT_ROUNDS") ? atoi(getenv("HS_TEST_FS_HINT_ROUNDS")) : 300;
  volatile int stop = 0;
  hint_job w1 = {.path = p, .first = 1, .count = rounds, .step = 2, .stop = &stop};
  hint_job w2 = {.path = p, .first = 2, .count = rounds, .step = 2, .stop = &stop};
  hint_job rd = {.path = p, .stop = &stop};
  pthread_t t1, t2, tr;
  CHECK(pthread_create(&tr, NULL, hint_reader, &rd) == 0);
  CHECK(pthread_create(&t1, NULL, hint_writer, &w1) == 0);
  CHECK(pthread_create(&t2, NULL, hint_writer, &w2) == 0);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  stop = 1;
  pthread_join(tr, NULL);
  CHECK_EQ_INT(w1.bad + w2.bad, 0);
  CHECK_EQ_INT(rd.bad, 0); /* never missing, empty or torn */
  CHECK(read_text(p, text, sizeof text));
  long last = strtol(text, NULL, 10);
  CHECK(last == 2L * rounds - 1 || last == 2L * rounds); /* one writer's last */
  CHECK_EQ_INT((long long)count_names(sub), 1);          /* no temporaries left */
  unlink(p);
  rmdir(sub);
}

static void check_msg(const hs_error *e, const char *want) {
  if (strstr(e->message, want) == NULL)
    fprintf(stderr, "message: %s\n  want: %s\n", e->message, want);
  CHECK(strstr(e->message, want) != NULL);
}

static void test_probe(void) {
  char path[4400], file[512];
  hs_error e = {0};
  bool exists = true;
  path_of(path, sizeof path, "nothing");
  CHECK_OK(hs_fs_probe(path, &exists, &e), &e);
  CHECK(!exists);
  path_of(file, sizeof file, "plain");
  CHECK_OK(hs_fs_write_file(file, "x", 1, &e), &e);
  CHECK_OK(hs_fs_probe(file, &exists, &e), &e);
  CHECK(exists);
  /* below a regular file: ENOTDIR, once counted as "exists" */
  snprintf(path, sizeof path, "%s/metadata/v1.metadata.json", file);
  CHECK(hs_fs_exists(path)); /* the conservative answer stays */
  CHECK_EQ_INT(hs_fs_probe(path, &exists, &e), HS_ERR_IO);
  CHECK(!exists);
  check_msg(&e, path);
  char want[600];
  snprintf(want, sizeof want, "%s is a file, not a folder", file);
  check_msg(&e, want);
  /* a symlink loop */
  char loop[512];
  path_of(loop, sizeof loop, "loop");
  CHECK(symlink("loop", loop) == 0);
  snprintf(path, sizeof path, "%s/v1.metadata.json", loop);
  e = (hs_error){0};
  CHECK_EQ_INT(hs_fs_probe(path, &exists, &e), HS_ERR_IO);
  snprintf(want, sizeof want, "%s is a symbolic link loop", loop);
  check_msg(&e, want);
  /* a name too long: the name is in the message */
  char name[301];
  memset(name, 'x', 300);
  name[300] = '\0';
  path_of(path, sizeof path, name);
  e = (hs_error){0};
  CHECK_EQ_INT(hs_fs_probe(path, &exists, &e), HS_ERR_IO);
  snprintf(want, sizeof want, "the name '%s' is too long (300 bytes, the limit is 255)", name);
  check_msg(&e, want);
  /* a path too long as a whole (every name fits) */
  int n = snprintf(path, sizeof path, "%s", root);
  while (n < 4300) n += snprintf(path + n, sizeof path - (size_t)n, "/%.100s", name);
  e = (hs_error){0};
  CHECK_EQ_INT(hs_fs_probe(path, &exists, &e), HS_ERR_IO);
  check_msg(&e, "the path is too long");
  unlink(loop);
  unlink(file);
}

static void test_open_never_blocks(void) {
  char fifo[512], dir[512], file[512];
  hs_error e = {0};
  path_of(fifo, sizeof fifo, "fifo");
  CHECK(mkfifo(fifo, 0644) == 0);
  hs_buf b;
  hs_buf_init(&b);
  CHECK_EQ_INT(hs_fs_read_file(fifo, 1 << 20, &b, &e), HS_ERR_IO);
  check_msg(&e, "not a regular file (a FIFO)");
  check_msg(&e, fifo);
  hs_source *src = NULL;
  e = (hs_error){0};
  CHECK_EQ_INT(hs_source_open_file(fifo, &src, &e), HS_ERR_IO);
  CHECK(src == NULL);
  check_msg(&e, "(a FIFO)");
  path_of(dir, sizeof dir, "adir");
  CHECK_OK(hs_fs_mkdirs(dir, &e), &e);
  e = (hs_error){0};
  CHECK_EQ_INT(hs_fs_read_file(dir, 1 << 20, &b, &e), HS_ERR_IO);
  check_msg(&e, "(a folder)");
  e = (hs_error){0};
  CHECK_EQ_INT(hs_source_open_file("/dev/zero", &src, &e), HS_ERR_IO);
  check_msg(&e, "(a device)");
  e = (hs_error){0};
  path_of(file, sizeof file, "missing");
  CHECK_EQ_INT(hs_fs_read_file(file, 1 << 20, &b, &e), HS_ERR_NOT_FOUND);
  /* a regular file opens (then can be made blocking) and reads whole */
  path_of(file, sizeof file, "regular");
  CHECK_OK(hs_fs_write_file(file, "hello", 5, &e), &e);
  int fd = -1;
  struct stat sb;
  CHECK_OK(hs_fs_open_read(file, &fd, &sb, &e), &e);
  CHECK(fd >= 0 && sb.st_size == 5);
  CHECK(hs_fs_set_blocking(fd) && (fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
  if (fd >= 0) close(fd);
  CHECK_OK(hs_fs_read_file(file, 1 << 20, &b, &e), &e);
  CHECK(b.len == 5 && memcmp(b.data, "hello", 5) == 0);
  CHECK_OK(hs_source_open_file(file, &src, &e), &e);
  CHECK(src != NULL && hs_source_size(src) == 5);
  hs_source_unref(src);
  hs_buf_free(&b);
  unlink(file);
  unlink(fifo);
  rmdir(dir);
}

/* Opening a table at paths where the version probe once looped forever. */
static void test_table_open_errors(void) {
  char path[4400], t[512], md[600], want[700];
  hs_error e = {0};
  hs_table *tb = NULL;
  /* a regular file */
  path_of(t, sizeof t, "afile");
  CHECK_OK(hs_fs_write_file(t, "x", 1, &e), &e);
  CHECK_EQ_INT(hs_table_open(t, &tb, &e), HS_ERR_INVALID_ARG);
  snprintf(want, sizeof want, "%s is a file, not a table folder", t);
  check_msg(&e, want);
  unlink(t);
  /* metadata/ is a regular file */
  path_of(t, sizeof t, "tmeta");
  snprintf(md, sizeof md, "%s/metadata", t);
  CHECK_OK(hs_fs_mkdirs(t, &e), &e);
  CHECK_OK(hs_fs_write_file(md, "x", 1, &e), &e);
  e = (hs_error){0};
  CHECK_EQ_INT(hs_table_open(t, &tb, &e), HS_ERR_IO);
  snprintf(want, sizeof want, "%s is a file, not a folder", md);
  check_msg(&e, want);
  unlink(md);
  /* metadata/ is a symlink loop */
  CHECK(symlink("metadata", md) == 0);
  e = (hs_error){0};
  CHECK_EQ_INT(hs_table_open(t, &tb, &e), HS_ERR_IO);
  check_msg(&e, "symbolic link loop");
  unlink(md);
  rmdir(t);
  /* a name too long */
  char name[301];
  memset(name, 'y', 300);
  name[300] = '\0';
  path_of(path, sizeof path, name);
  e = (hs_error){0};
  CHECK_EQ_INT(hs_table_open(path, &tb, &e), HS_ERR_INVALID_ARG);
  snprintf(want, sizeof want, "the name '%s' is too long", name);
  check_msg(&e, want);
  /* missing is still "not found" (a table is created on first write) */
  path_of(path, sizeof path, "none");
  e = (hs_error){0};
  CHECK_EQ_INT(hs_table_open(path, &tb, &e), HS_ERR_NOT_FOUND);
  CHECK(tb == NULL);
}

int main(void) {
  snprintf(root, sizeof root, "/tmp/hs_test_fs_XXXXXX");
  if (mkdtemp(root) == NULL) return 1;
  test_create_and_publish();
  test_sync_group_errors();
  test_parquet_unsynced_close();
  test_hint();
  alarm(60); /* none of these may hang: the alarm fails the test instead */
  test_probe();
  test_open_never_blocks();
  test_table_open_errors();
  alarm(0);
  rmdir(root);
  return hs_test_finish("test_fs");
}
