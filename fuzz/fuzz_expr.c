/*
 * fuzz_expr.c — libFuzzer target: parse and bind arbitrary filter text
 * against a fixed schema covering every column type we filter on, then
 * render, prune with made-up statistics and evaluate over a small batch.
 * Any crash, leak, hang or sanitizer report is a bug; parse errors are
 * expected.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/expr.h"

static struct ArrowSchema schema;
static struct ArrowArray batch;
static hs_expr_stats stats[9];

static void *dup(const void *p, size_t n) {
  void *q = hs_malloc(n);
  if (q != NULL) memcpy(q, p, n);
  return q;
}

static void setup(void) {
  static const char *const fmts[] = {"l", "i", "u", "g", "b", "tdD", "tsu:UTC", "d:10,2", "C"};
  static const char *const names[] = {"id", "age", "name",  "score", "flag",
                                      "d",  "ts",  "price", "Small"};
  hs_arrow_schema_init(&schema, "+s", "", 0, 9, NULL);
  for (int i = 0; i < 9; i++) {
    hs_arrow_schema_init(schema.children[i], fmts[i], names[i], ARROW_FLAG_NULLABLE, 0, NULL);
  }
  enum { N = 4 };
  struct ArrowArray k[9];
  int64_t i64[N] = {0, -1, 1, 1LL << 40};
  int32_t i32[N] = {0, -5, 7, 19723};
  double f[N] = {NAN, 1.5, -INFINITY, 0};
  uint8_t valid = 0x0B, flags = 0x05, u8[N] = {0, 255, 3, 4};
  __extension__ __int128 dec[N] = {0, -100, 250, 99};
  int32_t off[N + 1] = {0, 1, 3, 3, 6};
  hs_arrow_array_make_primitive(&k[0], N, dup(i64, sizeof(i64)), NULL, 0, NULL);
  hs_arrow_array_make_primitive(&k[1], N, dup(i32, sizeof(i32)), dup(&valid, 1), 1, NULL);
  hs_arrow_array_make_binary(&k[2], N, dup(off, sizeof(off)), dup("aabxyz", 6), dup(&valid, 1), 1,
                             NULL);
  hs_arrow_array_make_primitive(&k[3], N, dup(f, sizeof(f)), NULL, 0, NULL);
  hs_arrow_array_make_primitive(&k[4], N, dup(&flags, 1), dup(&valid, 1), 1, NULL);
  hs_arrow_array_make_primitive(&k[5], N, dup(i32, sizeof(i32)), NULL, 0, NULL);
  hs_arrow_array_make_primitive(&k[6], N, dup(i64, sizeof(i64)), dup(&valid, 1), 1, NULL);
  hs_arrow_array_make_primitive(&k[7], N, dup(dec, sizeof(dec)), NULL, 0, NULL);
  hs_arrow_array_make_primitive(&k[8], N, dup(u8, sizeof(u8)), NULL, 0, NULL);
  hs_arrow_array_make_struct(&batch, N, k, 9, NULL, 0, NULL);
  for (int i = 0; i < 9; i++) {
    hs_expr_stats_init(&stats[i]);
    stats[i].has_bounds = true;
    stats[i].null_count = i % 3 == 0 ? 0 : -1;
    stats[i].row_count = N;
    stats[i].min.i64 = -1, stats[i].max.i64 = 1LL << 40;
    stats[i].min.u64 = 0, stats[i].max.u64 = 255;
    stats[i].min.f64 = -1, stats[i].max.f64 = 2;
    stats[i].min.bytes = (const uint8_t *)"a", stats[i].min.len = 1;
    stats[i].max.bytes = (const uint8_t *)"xyz", stats[i].max.len = 3;
    stats[i].max.b = true;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int ready;
  if (!ready) setup(), ready = 1;
  if (size > 4096) return 0;
  char *text = hs_malloc(size + 1);
  if (text == NULL) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  hs_expr *e = NULL;
  int32_t pos = 0;
  hs_error err = {0};
  if (hs_expr_parse(text, &schema, &e, &pos, &err) == HS_OK) {
    char *s = NULL;
    if (hs_expr_to_string(e, &s, NULL) == HS_OK) hs_free(s);
    bool may = true;
    hs_expr_may_match(e, stats, 9, &may, NULL);
    uint64_t sel = 0;
    int64_t n = 0;
    hs_expr_eval(e, &batch, &sel, &n, NULL);
    if (n != __builtin_popcountll(sel)) abort();
    hs_expr_free(e);
  } else if (pos < 0 || (size_t)pos > size + 1) {
    abort();
  }
  hs_free(text);
  return 0;
}
