/*
 * fuzz_sql.c — libFuzzer target: arbitrary SQL text through the whole SQL
 * layer (libpg_query parse, bind, optimize, execute) over two small
 * in-memory relations covering the common column types, reading at most a
 * few batches of each result. Any crash, leak, hang or sanitizer report is
 * a bug; SQL errors are expected. Statements that write (CREATE TABLE,
 * INSERT) fail: the session has no root and no tables.
 */
#include <stdlib.h>
#include <string.h>

#include "hyperstream.h"
#include "arrow/arrow.h"

static hs_sql_session *session;

static void *dup(const void *p, size_t n) {
  void *q = hs_malloc(n);
  if (q != NULL) memcpy(q, p, n);
  return q;
}

/* A relation of n rows: id int64, k int32 (with NULLs), v double (NaN, inf),
 * s text (with NULLs), b bool. */
static void add_relation(const char *name, int n) {
  struct ArrowSchema schema;
  static const char *const fmts[] = {"l", "i", "g", "u", "b"};
  static const char *const names[] = {"id", "k", "v", "s", "b"};
  hs_arrow_schema_init(&schema, "+s", "", 0, 5, NULL);
  for (int i = 0; i < 5; i++)
    hs_arrow_schema_init(schema.children[i], fmts[i], names[i], ARROW_FLAG_NULLABLE, 0, NULL);
  int64_t *id = hs_malloc(sizeof(int64_t) * (size_t)n);
  int32_t *k = hs_malloc(sizeof(int32_t) * (size_t)n);
  double *v = hs_malloc(sizeof(double) * (size_t)n);
  int32_t *off = hs_malloc(sizeof(int32_t) * (size_t)(n + 1));
  char *data = hs_malloc((size_t)n * 4 + 1);
  uint8_t *kvalid = hs_calloc((size_t)(n + 7) / 8, 1), *svalid = hs_calloc((size_t)(n + 7) / 8, 1);
  uint8_t *bits = hs_calloc((size_t)(n + 7) / 8, 1);
  int nk = 0, ns = 0;
  off[0] = 0;
  for (int i = 0; i < n; i++) {
    id[i] = i - 2;
    k[i] = (i * 7) % 5 - 1;
    v[i] = i % 6 == 0 ? __builtin_nan("") : i % 6 == 1 ? __builtin_inf() : i * 0.5 - 3;
    if (i % 4 != 3) kvalid[i / 8] |= (uint8_t)(1 << (i % 8)), nk++;
    if (i % 5 != 4) svalid[i / 8] |= (uint8_t)(1 << (i % 8)), ns++;
    if (i % 3 == 0) bits[i / 8] |= (uint8_t)(1 << (i % 8));
    int len = i % 4;
    for (int c = 0; c < len; c++) data[off[i] + c] = (char)('a' + (i + c) % 3);
    off[i + 1] = off[i] + len;
  }
  struct ArrowArray kids[5], batch;
  hs_arrow_array_make_primitive(&kids[0], n, id, NULL, 0, NULL);
  hs_arrow_array_make_primitive(&kids[1], n, k, kvalid, n - nk, NULL);
  hs_arrow_array_make_primitive(&kids[2], n, v, NULL, 0, NULL);
  hs_arrow_array_make_binary(&kids[3], n, off, data, svalid, n - ns, NULL);
  hs_arrow_array_make_primitive(&kids[4], n, bits, NULL, 0, NULL);
  hs_arrow_array_make_struct(&batch, n, kids, 5, NULL, 0, NULL);
  struct ArrowArrayStream stream;
  hs_arrow_stream_from_batches(&schema, &batch, 1, &stream, NULL);
  hs_sql_register_stream(session, name, &stream, NULL);
  (void)dup;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (session == NULL) {
    hs_sql_session_new(NULL, &session, NULL);
    hs_sql_set_memory_limit(session, (int64_t)256 << 20);
    add_relation("t", 12);
    add_relation("u", 5);
  }
  if (size > 4096) return 0;
  char *sql = malloc(size + 1);
  if (sql == NULL) return 0;
  memcpy(sql, data, size);
  sql[size] = '\0';
  struct ArrowArrayStream out;
  hs_error err = {0};
  int32_t pos = 0;
  if (hs_sql_execute(session, sql, NULL, NULL, &out, &pos, &err) == HS_OK) {
    struct ArrowSchema sc;
    if (out.get_schema(&out, &sc) == 0) sc.release(&sc);
    for (int i = 0; i < 8; i++) {
      struct ArrowArray a;
      if (out.get_next(&out, &a) != 0 || a.release == NULL) break;
      a.release(&a);
    }
    out.release(&out);
  }
  free(sql);
  return 0;
}
