/*
 * test_fs_sync.c — sync sets (src/io/fs_sync.c), on the io_uring and on
 * threads (HS_IO_URING=0), the same checks both ways: many files and
 * directories synced in one set (more than the ring's 32 slots in
 * flight), reuse after a wait, a failing sync named in the error with the
 * call that failed and the others still waited for, a missing directory
 * refused at once, a set freed with syncs in flight, and a forked child
 * syncing through its own ring while the parent's is pooled. The commit
 * protocol on top of it is tested by test_table / test_txn and the crash
 * tests. Runs under ASan too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hs_test.h"
#include "io/fs_sync.h"

static char root[256];

static int make_file(int i, const char *tag) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s-%d", root, tag, i);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    char buf[1000];
    memset(buf, 'a' + i % 26, sizeof buf);
    if (write(fd, buf, (size_t)(100 + i * 10) % sizeof buf) < 0) {
      close(fd);
      return -1;
    }
  }
  return fd;
}

static void test_many(const char *tag) {
  enum { N = 70 };
  int fds[N];
  hs_error err = {0};
  hs_fs_syncs *s = hs_fs_syncs_new();
  CHECK(s != NULL);
  if (s == NULL) return;
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < N; i++) {
      fds[i] = make_file(i, tag);
      CHECK(fds[i] >= 0);
      CHECK_OK(hs_fs_syncs_add_file(s, fds[i], tag, &err), &err);
      if (i % 10 == 0) CHECK_OK(hs_fs_syncs_add_dir(s, root, &err), &err);
    }
    CHECK_OK(hs_fs_syncs_wait(s, &err), &err);
    CHECK_OK(hs_fs_syncs_wait(s, &err), &err); /* nothing left: still fine */
    for (int i = 0; i < N; i++) close(fds[i]);
  }
  hs_fs_syncs_free(s);
}

static void test_errors(const char *tag) {
  hs_error err = {0};
  hs_fs_syncs *s = hs_fs_syncs_new();
  CHECK(s != NULL);
  if (s == NULL) return;
  int good = make_file(1, tag);
  int bad = make_file(2, tag);
  close(bad); /* a descriptor that is not open: EBADF from the sync */
  CHECK_OK(hs_fs_syncs_add_file(s, good, "first-good", &err), &err);
  CHECK_OK(hs_fs_syncs_add_file(s, bad, "the-bad-one", &err), &err);
  CHECK_OK(hs_fs_syncs_add_file(s, good, "second-good", &err), &err);
  hs_status st = hs_fs_syncs_wait(s, &err);
  CHECK_EQ_INT(st, HS_ERR_IO);
  CHECK(strstr(err.message, "the-bad-one") != NULL);
  CHECK(strstr(err.message, "fdatasync") != NULL);
  /* usable again after a failed wait */
  hs_error err2 = {0};
  CHECK_OK(hs_fs_syncs_add_file(s, good, "again", &err2), &err2);
  CHECK_OK(hs_fs_syncs_wait(s, &err2), &err2);
  /* a directory that does not exist: refused when added */
  char missing[512];
  snprintf(missing, sizeof missing, "%s/no-such-dir", root);
  hs_error err3 = {0};
  CHECK_EQ_INT(hs_fs_syncs_add_dir(s, missing, &err3), HS_ERR_IO);
  CHECK(strstr(err3.message, "no-such-dir") != NULL);
  /* freed with syncs in flight: waits for them */
  for (int i = 0; i < 5; i++) CHECK_OK(hs_fs_syncs_add_file(s, good, "inflight", &err2), &err2);
  CHECK_OK(hs_fs_syncs_add_dir(s, root, &err2), &err2);
  hs_fs_syncs_free(s);
  hs_fs_syncs_free(NULL);
  close(good);
}

static void test_fork(void) {
  hs_fs_syncs *s = hs_fs_syncs_new(); /* the parent's ring goes to the pool */
  hs_fs_syncs_free(s);
  pid_t pid = fork();
  if (pid == 0) {
    hs_error err = {0};
    int fd = make_file(7, "child");
    hs_fs_syncs *c = hs_fs_syncs_new();
    int ok = c != NULL && fd >= 0 && hs_fs_syncs_add_file(c, fd, "child", &err) == HS_OK &&
             hs_fs_syncs_add_dir(c, root, &err) == HS_OK && hs_fs_syncs_wait(c, &err) == HS_OK;
    hs_fs_syncs_free(c);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  /* and the parent's pooled ring still works */
  hs_error err = {0};
  int fd = make_file(8, "parent");
  s = hs_fs_syncs_new();
  CHECK(s != NULL);
  if (s == NULL) return;
  CHECK_OK(hs_fs_syncs_add_file(s, fd, "parent", &err), &err);
  CHECK_OK(hs_fs_syncs_wait(s, &err), &err);
  hs_fs_syncs_free(s);
  close(fd);
}

int main(void) {
  snprintf(root, sizeof root, "/tmp/hs_test_fs_sync_XXXXXX");
  if (mkdtemp(root) == NULL) return 1;
  alarm(60);
  unsetenv("HS_IO_URING");
  printf("test_fs_sync: io_uring %s\n", hs_fs_syncs_uring() ? "in use" : "unavailable: threads");
  test_many("ring");
  test_errors("ring");
  test_fork();
  setenv("HS_IO_URING", "0", 1);
  CHECK(!hs_fs_syncs_uring());
  test_many("threads");
  test_errors("threads");
  test_fork();
  unsetenv("HS_IO_URING");
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
  return hs_test_finish("test_fs_sync");
}
