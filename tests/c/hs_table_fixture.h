/*
 * hs_table_fixture.h — the four-column test table shared by C tests that
 * index and filter tables (test_index_plan.c, test_index_api.c): schema,
 * deterministic rows with nulls in two columns, and one-call appends.
 * Include after hs_test.h. Every function is static inline, so a test
 * that uses only some of them compiles without warnings.
 */
#ifndef HS_TABLE_FIXTURE_H
#define HS_TABLE_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "arrow/arrow.h"
#include "hs_test.h"

/* Schema {id: int64 not null, name: utf8, x: double, k: int32}. */
static inline void make_schema(struct ArrowSchema *s) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, 4, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[0], "l", "id", 0, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[1], "u", "name", ARROW_FLAG_NULLABLE, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[2], "g", "x", ARROW_FLAG_NULLABLE, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[3], "i", "k", ARROW_FLAG_NULLABLE, 0, &e), &e);
}

/* Rows id = first .. first+n-1; name "n<id % 37>" (null when id % 7 == 0);
 * x = (id % 50) * 0.5 (null when id % 11 == 0); k = id % 13. */
static inline void make_batch(struct ArrowArray *out, int64_t first, int64_t n) {
  hs_error e = {0};
  int64_t *ids = hs_malloc((size_t)n * sizeof *ids);
  double *xs = hs_malloc((size_t)n * sizeof *xs);
  int32_t *ks = hs_malloc((size_t)n * sizeof *ks);
  int32_t *offs = hs_malloc((size_t)(n + 1) * sizeof *offs);
  uint8_t *valid = hs_calloc((size_t)(n + 7) / 8 + 1, 1);
  uint8_t *xvalid = hs_calloc((size_t)(n + 7) / 8 + 1, 1);
  char *data = hs_malloc((size_t)n * 24 + 1);
  int64_t nulls = 0, xnulls = 0;
  offs[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t id = first + i;
    ids[i] = id;
    ks[i] = (int32_t)(id % 13);
    xs[i] = (double)(id % 50) * 0.5;
    if (id % 11 == 0)
      xnulls++;
    else
      xvalid[i / 8] |= (uint8_t)(1u << (i % 8));
    int len = 0;
    if (id % 7 == 0) {
      nulls++;
    } else {
      valid[i / 8] |= (uint8_t)(1u << (i % 8));
      len = snprintf(data + offs[i], 24, "n%lld", (long long)(id % 37));
    }
    offs[i + 1] = offs[i] + len;
  }
  struct ArrowArray cols[4];
  memset(cols, 0, sizeof cols);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[0], n, ids, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_binary(&cols[1], n, offs, data, valid, nulls, &e), &e);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[2], n, xs, xvalid, xnulls, &e), &e);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[3], n, ks, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_struct(out, n, cols, 4, NULL, 0, &e), &e);
}

static inline int64_t append_rows(hs_table *t, int64_t first, int64_t n) {
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  struct ArrowArray *b = hs_calloc(1, sizeof *b);
  make_batch(b, first, n);
  struct ArrowArrayStream st;
  CHECK_OK(hs_arrow_stream_from_batches(&s, b, 1, &st, &e), &e);
  hs_free(b);
  int64_t snap = -1;
  CHECK_OK(hs_table_append(t, &st, &snap, &e), &e);
  return snap;
}

#endif /* HS_TABLE_FIXTURE_H */
