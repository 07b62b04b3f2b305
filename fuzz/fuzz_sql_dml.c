/*
 * fuzz_sql_dml.c — libFuzzer target: arbitrary SQL text against a session
 * whose root holds a real table, so that the statements that change rows
 * (UPDATE, MERGE, DELETE, INSERT, ALTER TABLE: src/sql/ddl_update.c,
 * ddl_merge.c, ddl_change.c, ddl.c) run all the way to their commits. Any
 * crash, leak, hang or sanitizer report is a bug; SQL errors are expected.
 * The table is created fresh (a few rows of the common column types, NULLs
 * included) every 32 inputs, so it stays small whatever the inputs write.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hyperstream.h"

static hs_sql_session *session;
static char root[64];
static unsigned runs;

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static void run(const char *sql) {
  struct ArrowArrayStream out;
  hs_error err = {0};
  int32_t pos = 0;
  if (hs_sql_execute(session, sql, NULL, NULL, &out, &pos, &err) != HS_OK) return;
  struct ArrowArray b;
  for (int i = 0; i < 8 && out.get_next(&out, &b) == 0 && b.release != NULL; i++) b.release(&b);
  out.release(&out);
}

static void cleanup(void) {
  hs_sql_session_free(session);
  session = NULL;
  if (root[0] != '\0') nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A new session over a new table t (and u, a second one for MERGE). */
static void fresh(void) {
  if (root[0] == '\0') atexit(cleanup);
  hs_sql_session_free(session);
  session = NULL;
  if (root[0] != '\0') nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  snprintf(root, sizeof root, "/tmp/hs_fuzz_sql_dml_XXXXXX");
  if (mkdtemp(root) == NULL || hs_sql_session_new(root, &session, NULL) != HS_OK) abort();
  hs_sql_set_memory_limit(session, (int64_t)256 << 20);
  run("CREATE TABLE t (id bigint, k int, v double precision, s text, b boolean)");
  run("INSERT INTO t VALUES (1, 1, 0.5, 'a', true), (2, NULL, 'NaN', 'b', false), "
      "(3, 2, 'Infinity', NULL, NULL), (4, 2, -1.5, '', true), (5, -1, NULL, 'it''s', false)");
  run("INSERT INTO t VALUES (6, 7, 2.5, 'c', true), (NULL, 3, 1, 'n', NULL)");
  run("CREATE TABLE u (id bigint, k int, s text)");
  run("INSERT INTO u VALUES (2, 20, 'x'), (6, NULL, 'y'), (9, 90, NULL), (NULL, 1, 'z')");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (session == NULL || runs++ % 32 == 0) fresh();
  if (size > 4096) return 0;
  char *sql = malloc(size + 1);
  if (sql == NULL) return 0;
  memcpy(sql, data, size);
  sql[size] = '\0';
  run(sql);
  free(sql);
  return 0;
}
