/*
 * hs_table_fixture3.h — the three-column test table shared by
 * test_table.c and test_scan.c: schema {id, name, x} and deterministic
 * rows with nulls in `name`. Include after hs_test.h. Static inline, so a
 * test that uses only one of them compiles without warnings.
 */
#ifndef HS_TABLE_FIXTURE3_H
#define HS_TABLE_FIXTURE3_H

#include <stdio.h>
#include <string.h>

#include "arrow/arrow.h"
#include "hs_test.h"

/* Schema {id: int64 not null, name: utf8, x: double}. */
static inline void make_schema(struct ArrowSchema *s) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, 3, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[0], "l", "id", 0, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[1], "u", "name", ARROW_FLAG_NULLABLE, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s->children[2], "g", "x", ARROW_FLAG_NULLABLE, 0, &e), &e);
}

/* Rows id = first .. first+n-1; name "n<id>" (null when id % 7 == 0);
 * x = id * 0.5. */
static inline void make_batch(struct ArrowArray *out, int64_t first, int64_t n) {
  hs_error e = {0};
  int64_t *ids = hs_malloc((size_t)n * sizeof *ids);
  double *xs = hs_malloc((size_t)n * sizeof *xs);
  int32_t *offs = hs_malloc((size_t)(n + 1) * sizeof *offs);
  uint8_t *valid = hs_calloc((size_t)(n + 7) / 8 + 1, 1);
  char *data = hs_malloc((size_t)n * 24 + 1);
  int64_t nulls = 0;
  offs[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t id = first + i;
    ids[i] = id;
    xs[i] = (double)id * 0.5;
    int len = 0;
    if (id % 7 == 0) {
      nulls++;
    } else {
      valid[i / 8] |= (uint8_t)(1u << (i % 8));
      len = snprintf(data + offs[i], 24, "n%lld", (long long)id);
    }
    offs[i + 1] = offs[i] + len;
  }
  struct ArrowArray cols[3];
  memset(cols, 0, sizeof cols);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[0], n, ids, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_binary(&cols[1], n, offs, data, valid, nulls, &e), &e);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[2], n, xs, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_struct(out, n, cols, 3, NULL, 0, &e), &e);
}

#endif /* HS_TABLE_FIXTURE3_H */
