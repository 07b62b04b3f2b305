/*
 * test_schema_map.c — reading data files written under older schemas
 * (src/table/schema_map.c): the field-id map from wanted columns to a
 * file's columns (renamed, absent, promoted, mismatched, nested ids, files
 * without ids through the name mapping or names, initial-default refused)
 * and batch adaptation (int->long and float->double with nulls and
 * offsets, string <-> large_string offsets, decimal relabel, initial-defaults, NULL arrays of
 * strings, structs, fixed-size lists, booleans; a file with none of the columns). Every output
 * batch passes hs_arrow_array_validate. Also run under ASan/UBSan.
 */
#include <string.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "table/schema_map.h"

/* A schema node with an optional field id (-1: none). */
static void node(struct ArrowSchema *s, const char *fmt, const char *name, int id, int64_t nch) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, fmt, name, ARROW_FLAG_NULLABLE, nch, &e), &e);
  if (id >= 0) {
    char buf[16];
    snprintf(buf, sizeof buf, "%d", id);
    const char *k = "PARQUET:field_id", *v = buf;
    CHECK_OK(hs_arrow_schema_set_metadata(s, &k, &v, 1, &e), &e);
  }
}

/* The file: a int32 (1), f float (2), d decimal(5,2) (3), s string (4),
 * l list<int32> (6, element 7). With ids < 0, no field ids at all. */
static void file_schema(struct ArrowSchema *f, bool ids) {
  node(f, "+s", "", -1, 5);
  node(f->children[0], "i", "a", ids ? 1 : -1, 0);
  node(f->children[1], "f", "f", ids ? 2 : -1, 0);
  node(f->children[2], "d:5,2", "d", ids ? 3 : -1, 0);
  node(f->children[3], "u", "s", ids ? 4 : -1, 0);
  node(f->children[4], "+l", "l", ids ? 6 : -1, 1);
  node(f->children[4]->children[0], "i", "element", ids ? 7 : -1, 0);
}

/* Wanted: x long (1, renamed from a), f double (2), d decimal(9,2) (3),
 * n string (5, added), st struct<p: int> (8, added), w fixed_size_list[3]
 * float (10, added), b bool (12, added). */
static void want_schema(struct ArrowSchema *w) {
  node(w, "+s", "", -1, 7);
  node(w->children[0], "l", "x", 1, 0);
  node(w->children[1], "g", "f", 2, 0);
  node(w->children[2], "d:9,2", "d", 3, 0);
  node(w->children[3], "u", "n", 5, 0);
  node(w->children[4], "+s", "st", 8, 1);
  node(w->children[4]->children[0], "i", "p", 9, 0);
  node(w->children[5], "+w:3", "w", 10, 1);
  node(w->children[5]->children[0], "f", "item", 11, 0);
  node(w->children[6], "b", "b", 12, 0);
}

static hs_colmap_ctx ctx_of(char *mapping) {
  static int32_t ids[] = {1, 2, 3, 5, 8, 10, 12};
  static char *names[] = {"x", "f", "d", "n", "st", "w", "b"};
  static char *defaults[7];
  hs_colmap_ctx c = {.name_mapping = mapping, .n = 7, .ids = ids, .names = names};
  c.defaults = defaults;
  return c;
}

/* A primitive child: n values of `width` bytes from `vals`, validity from
 * `valid` (NULL: none), all copied. */
static void prim(struct ArrowArray *a, int64_t n, const void *vals, size_t width,
                 const uint8_t *valid, int64_t nulls) {
  hs_error e = {0};
  void *v = hs_malloc((size_t)n * width);
  memcpy(v, vals, (size_t)n * width);
  uint8_t *b = NULL;
  if (valid != NULL) {
    b = hs_malloc(((size_t)n + 7) / 8);
    memcpy(b, valid, ((size_t)n + 7) / 8);
  }
  CHECK_OK(hs_arrow_array_make_primitive(a, n, v, b, nulls, &e), &e);
}

static void test_map_and_apply(void) {
  hs_error e = {0};
  struct ArrowSchema f, w;
  file_schema(&f, true);
  want_schema(&w);
  hs_colmap_ctx ctx = ctx_of(NULL);
  hs_colmap m;
  CHECK_OK(hs_colmap_build(&ctx, &w, &f, true, "file.parquet", &m, &e), &e);
  CHECK_EQ_INT(m.n, 7);
  CHECK_EQ_INT(m.n_read, 3);
  CHECK(!m.identity);
  CHECK(strcmp(m.read[0], "a") == 0 && strcmp(m.read[1], "f") == 0 && strcmp(m.read[2], "d") == 0);
  CHECK(strcmp(m.file_names[0], "a") == 0 && m.file_names[3] == NULL && m.file_names[6] == NULL);
  CHECK_EQ_INT(m.conv[0], HS_COLMAP_I32_I64);
  CHECK_EQ_INT(m.conv[1], HS_COLMAP_F32_F64);
  CHECK_EQ_INT(m.conv[2], HS_COLMAP_RELABEL);
  for (int i = 3; i < 7; i++) CHECK_EQ_INT(m.conv[i], HS_COLMAP_NULLS);
  CHECK(strcmp(m.out.children[0]->name, "x") == 0 && strcmp(m.out.children[0]->format, "l") == 0);
  CHECK(strcmp(m.out.children[2]->format, "d:9,2") == 0);

  /* A batch of 5 rows read as (a, f, d); a and f sliced at offset 1. */
  int32_t av[6] = {99, 1, -7, 0, 2147483647, -2147483647 - 1};
  uint8_t avalid[1] = {0x3B}; /* rows 0,1,3,4,5 valid (bit 2 null): a = 1, NULL, 0, max, min */
  float fv[6] = {0, 1.5f, -2.25f, 0, 3.0e38f, -0.0f};
  uint8_t fvalid[1] = {0x37}; /* bit 3 null */
  unsigned char dv[5 * 16];
  memset(dv, 0, sizeof dv);
  for (int i = 0; i < 5; i++) dv[i * 16] = (unsigned char)(10 * i + 1);
  struct ArrowArray in;
  CHECK_OK(hs_arrow_array_init(&in, 1, 3, &e), &e);
  in.length = 5;
  in.null_count = 0;
  prim(in.children[0], 6, av, 4, avalid, 1);
  prim(in.children[1], 6, fv, 4, fvalid, 1);
  prim(in.children[2], 5, dv, 16, NULL, 0);
  in.children[0]->offset = 1, in.children[0]->length = 5;
  in.children[1]->offset = 1, in.children[1]->length = 5;
  struct ArrowArray out;
  CHECK_OK(hs_colmap_apply(&m, &in, &out, &e), &e);
  CHECK(in.release == NULL);
  CHECK_OK(hs_arrow_array_validate(&m.out, &out, &e), &e);
  CHECK_EQ_INT(out.length, 5);
  CHECK_EQ_INT(out.n_children, 7);
  const struct ArrowArray *x = out.children[0];
  const int64_t *xv = x->buffers[1];
  int64_t want_x[5] = {1, 0, 0, 2147483647, -2147483647LL - 1};
  bool valid_x[5] = {true, false, true, true, true};
  for (int i = 0; i < 5; i++) {
    CHECK(hs_arrow_is_valid(x, i) == valid_x[i]);
    if (valid_x[i]) CHECK_EQ_INT(xv[x->offset + i], want_x[i]);
  }
  const struct ArrowArray *fo = out.children[1];
  const double *fd = fo->buffers[1];
  CHECK(hs_arrow_is_valid(fo, 0) && fd[0] == 1.5 && fd[1] == -2.25 && !hs_arrow_is_valid(fo, 2));
  CHECK(fd[3] == (double)3.0e38f && fd[4] == 0.0 && hs_arrow_is_valid(fo, 4));
  const unsigned char *dd = out.children[2]->buffers[1];
  for (int i = 0; i < 5; i++) CHECK_EQ_INT(dd[i * 16], 10 * i + 1);
  for (int c = 3; c < 7; c++) {
    const struct ArrowArray *n = out.children[c];
    CHECK_EQ_INT(n->length, 5);
    CHECK_EQ_INT(n->null_count, 5);
    for (int i = 0; i < 5; i++) CHECK(!hs_arrow_is_valid(n, i));
  }
  CHECK_EQ_INT(out.children[4]->children[0]->length, 5);  /* struct field */
  CHECK_EQ_INT(out.children[5]->children[0]->length, 15); /* 5 x 3 floats */
  out.release(&out);
  hs_colmap_free(&m);

  /* Relaxed: the file's types where unpromoted, the schema's otherwise. */
  CHECK_OK(hs_colmap_build(&ctx, &w, &f, false, "file.parquet", &m, &e), &e);
  CHECK(strcmp(m.out.children[0]->format, "l") == 0 && strcmp(m.out.children[3]->format, "u") == 0);
  hs_colmap_free(&m);
  w.release(&w);
  f.release(&f);
}

/* Initial-defaults: n string "hey", st... as int 7, w (id 10) as a date,
 * b bool true, d decimal(9,2) "-1.5"; a list default is refused, a value
 * that does not fit is corrupt. `f2` holds only column a (id 1). */
static void test_defaults(const struct ArrowSchema *f2) {
  hs_error e = {0};
  char *defs[7] = {NULL, NULL, "\"-1.5\"", "\"hey\"", "7", "\"2024-03-01\"", "true"};
  hs_colmap_ctx ctx = ctx_of(NULL);
  ctx.defaults = defs;
  struct ArrowSchema w;
  node(&w, "+s", "", -1, 5);
  node(w.children[0], "d:9,2", "d", 3, 0);
  node(w.children[1], "u", "n", 5, 0);
  node(w.children[2], "l", "st", 8, 0);
  node(w.children[3], "tdD", "w", 10, 0);
  node(w.children[4], "b", "b", 12, 0);
  hs_colmap m;
  CHECK_OK(hs_colmap_build(&ctx, &w, f2, true, "f5.parquet", &m, &e), &e);
  for (int i = 0; i < 5; i++) {
    CHECK_EQ_INT(m.conv[i], HS_COLMAP_DEFAULT);
    CHECK(m.file_names[i] != NULL && m.file_names[i][0] == 0); /* stats: unknown, not NULL */
  }
  struct ArrowArray in, out;
  CHECK_OK(hs_arrow_array_init(&in, 1, 1, &e), &e);
  in.length = 4;
  int64_t lv[4] = {1, 2, 3, 4};
  prim(in.children[0], 4, lv, 8, NULL, 0);
  CHECK_OK(hs_colmap_apply(&m, &in, &out, &e), &e);
  CHECK_OK(hs_arrow_array_validate(&m.out, &out, &e), &e);
  for (int r = 0; r < 4; r++) {
    __int128 dv;
    memcpy(&dv, (const uint8_t *)out.children[0]->buffers[1] + 16 * r, 16);
    CHECK(dv == -150);
    const int32_t *so = out.children[1]->buffers[1];
    CHECK(so[r + 1] - so[r] == 3 &&
          memcmp((const char *)out.children[1]->buffers[2] + so[r], "hey", 3) == 0);
    CHECK_EQ_INT(((const int64_t *)out.children[2]->buffers[1])[r], 7);
    CHECK_EQ_INT(((const int32_t *)out.children[3]->buffers[1])[r], 19783); /* 2024-03-01 */
    CHECK((((const uint8_t *)out.children[4]->buffers[1])[r / 8] >> (r % 8)) & 1);
    for (int c = 0; c < 5; c++) CHECK(hs_arrow_is_valid(out.children[c], r));
  }
  out.release(&out);
  hs_colmap_free(&m);
  w.release(&w);
  /* a list default is not read yet; an int default "x" does not fit */
  node(&w, "+s", "", -1, 1);
  node(w.children[0], "+l", "st", 8, 1);
  node(w.children[0]->children[0], "i", "element", 9, 0);
  defs[4] = "[1]";
  CHECK_EQ_INT(hs_colmap_build(&ctx, &w, f2, true, "f6.parquet", &m, &e), HS_ERR_UNSUPPORTED);
  CHECK(strstr(e.message, "f6.parquet") != NULL && strstr(e.message, "'st'") != NULL);
  w.release(&w);
  node(&w, "+s", "", -1, 1);
  node(w.children[0], "l", "st", 8, 0);
  defs[4] = "\"x\"";
  CHECK_EQ_INT(hs_colmap_build(&ctx, &w, f2, true, "f7.parquet", &m, &e), HS_ERR_CORRUPT);
  w.release(&w);
}

static void test_mismatches(void) {
  hs_error e = {0};
  struct ArrowSchema f;
  file_schema(&f, true);
  hs_colmap_ctx ctx = ctx_of(NULL);
  hs_colmap m;
  /* id 1 wanted as a string: fixed mode refuses, relaxed keeps the file's int */
  struct ArrowSchema w;
  node(&w, "+s", "", -1, 1);
  node(w.children[0], "u", "x", 1, 0);
  hs_status st = hs_colmap_build(&ctx, &w, &f, true, "f1.parquet", &m, &e);
  CHECK_EQ_INT(st, HS_ERR_SCHEMA);
  CHECK(strstr(e.message, "f1.parquet") != NULL && strstr(e.message, "'x'") != NULL);
  CHECK_OK(hs_colmap_build(&ctx, &w, &f, false, "f1.parquet", &m, &e), &e);
  CHECK(strcmp(m.out.children[0]->format, "i") == 0 && strcmp(m.out.children[0]->name, "x") == 0);
  hs_colmap_free(&m);
  w.release(&w);
  /* a nested field id that differs: refused, never read under a wrong name */
  node(&w, "+s", "", -1, 1);
  node(w.children[0], "+l", "l", 6, 1);
  node(w.children[0]->children[0], "i", "element", 70, 0);
  CHECK_EQ_INT(hs_colmap_build(&ctx, &w, &f, true, "f2.parquet", &m, &e), HS_ERR_SCHEMA);
  hs_arrow_schema_release(w.children[0]->children[0]);
  node(w.children[0]->children[0], "i", "element", 7, 0);
  CHECK_OK(hs_colmap_build(&ctx, &w, &f, true, "f2.parquet", &m, &e), &e);
  CHECK(m.identity && m.conv[0] == HS_COLMAP_PASS && strcmp(m.read[0], "l") == 0);
  hs_colmap_free(&m);
  w.release(&w);
  /* narrowing is not a promotion: long in the file, int wanted */
  struct ArrowSchema f2;
  node(&f2, "+s", "", -1, 1);
  node(f2.children[0], "l", "a", 1, 0);
  node(&w, "+s", "", -1, 1);
  node(w.children[0], "i", "a", 1, 0);
  CHECK_EQ_INT(hs_colmap_build(&ctx, &w, &f2, true, "f3.parquet", &m, &e), HS_ERR_SCHEMA);
  w.release(&w);
  /* absent columns with an initial-default read it (v3) */
  test_defaults(&f2);
  node(&w, "+s", "", -1, 1);
  node(w.children[0], "u", "n", 5, 0);
  /* no wanted column in the file: its first column gives the row count */
  CHECK_OK(hs_colmap_build(&ctx, &w, &f2, true, "f4.parquet", &m, &e), &e);
  CHECK_EQ_INT(m.n_read, 1);
  CHECK(strcmp(m.read[0], "a") == 0 && m.src[0] == -1);
  struct ArrowArray in, out;
  CHECK_OK(hs_arrow_array_init(&in, 1, 1, &e), &e);
  in.length = 3;
  int64_t lv[3] = {1, 2, 3};
  prim(in.children[0], 3, lv, 8, NULL, 0);
  CHECK_OK(hs_colmap_apply(&m, &in, &out, &e), &e);
  CHECK_OK(hs_arrow_array_validate(&m.out, &out, &e), &e);
  CHECK_EQ_INT(out.length, 3);
  CHECK_EQ_INT(out.children[0]->null_count, 3);
  out.release(&out);
  hs_colmap_free(&m);
  w.release(&w);
  f2.release(&f2);
  f.release(&f);
}

static void test_files_without_ids(void) {
  hs_error e = {0};
  struct ArrowSchema f, w;
  file_schema(&f, false);
  node(&w, "+s", "", -1, 2);
  node(w.children[0], "l", "x", 1, 0);
  node(w.children[1], "g", "f", 2, 0);
  hs_colmap m;
  /* names of the read schema: "x" is not in the file, "f" is */
  hs_colmap_ctx ctx = ctx_of(NULL);
  CHECK_OK(hs_colmap_build(&ctx, &w, &f, true, "old.parquet", &m, &e), &e);
  CHECK(m.file_names[0] == NULL && m.conv[0] == HS_COLMAP_NULLS);
  CHECK(m.file_names[1] != NULL && strcmp(m.file_names[1], "f") == 0);
  hs_colmap_free(&m);
  /* the name mapping says "a" was field 1 */
  char mapping[] =
      "[{\"field-id\": 1, \"names\": [\"a\", \"x\"]}, {\"field-id\": 2, \"names\": [\"f\"]}]";
  ctx = ctx_of(mapping);
  CHECK_OK(hs_colmap_build(&ctx, &w, &f, true, "old.parquet", &m, &e), &e);
  CHECK(m.file_names[0] != NULL && strcmp(m.file_names[0], "a") == 0);
  CHECK_EQ_INT(m.conv[0], HS_COLMAP_I32_I64);
  hs_colmap_free(&m);
  w.release(&w);
  f.release(&f);
}

/* String offsets: a sliced "u" column read as "U" and back, nulls kept. */
static void test_offsets(void) {
  hs_error e = {0};
  for (int dir = 0; dir < 2; dir++) {
    const char *from = dir == 0 ? "u" : "U", *to = dir == 0 ? "U" : "u";
    struct ArrowSchema f, w;
    node(&f, "+s", "", -1, 1);
    node(f.children[0], from, "s", 4, 0);
    node(&w, "+s", "", -1, 1);
    node(w.children[0], to, "s", 4, 0);
    hs_colmap_ctx ctx = ctx_of(NULL);
    hs_colmap m;
    CHECK_OK(hs_colmap_build(&ctx, &w, &f, true, "s.parquet", &m, &e), &e);
    CHECK_EQ_INT(m.conv[0], HS_COLMAP_OFFSETS);
    /* values "xx", NULL, "abc", "", "z": the batch is rows 1..4 */
    const char *text = "xxabcz";
    int64_t o64[6] = {0, 2, 2, 5, 5, 6};
    size_t w8 = dir == 0 ? 4 : 8;
    uint8_t *offs = hs_malloc(6 * w8), *data = hs_malloc(6), *valid = hs_malloc(1);
    for (int i = 0; i < 6; i++) {
      int32_t o32 = (int32_t)o64[i];
      memcpy(offs + i * w8, dir == 0 ? (const void *)&o32 : (const void *)&o64[i], w8);
    }
    memcpy(data, text, 6);
    valid[0] = 0x1D; /* row 1 null */
    struct ArrowArray in, out;
    CHECK_OK(hs_arrow_array_init(&in, 1, 1, &e), &e);
    in.length = 4;
    CHECK_OK(hs_arrow_array_make_binary(in.children[0], 5, offs, data, valid, 1, &e), &e);
    in.children[0]->offset = 1;
    in.children[0]->length = 4;
    CHECK_OK(hs_colmap_apply(&m, &in, &out, &e), &e);
    CHECK_OK(hs_arrow_array_validate(&m.out, &out, &e), &e);
    const struct ArrowArray *c = out.children[0];
    const char *want[4] = {NULL, "abc", "", "z"};
    for (int r = 0; r < 4; r++) {
      CHECK(hs_arrow_is_valid(c, r) == (want[r] != NULL));
      int64_t a =
          dir == 0 ? ((const int64_t *)c->buffers[1])[r] : ((const int32_t *)c->buffers[1])[r];
      int64_t b = dir == 0 ? ((const int64_t *)c->buffers[1])[r + 1]
                           : ((const int32_t *)c->buffers[1])[r + 1];
      if (want[r] != NULL)
        CHECK(b - a == (int64_t)strlen(want[r]) &&
              memcmp((const char *)c->buffers[2] + a, want[r], (size_t)(b - a)) == 0);
    }
    out.release(&out);
    hs_colmap_free(&m);
    /* relaxed (choosing the output): the file's own width is kept */
    CHECK_OK(hs_colmap_build(&ctx, &w, &f, false, "s.parquet", &m, &e), &e);
    CHECK(m.conv[0] == HS_COLMAP_PASS && strcmp(m.out.children[0]->format, from) == 0);
    hs_colmap_free(&m);
    w.release(&w);
    f.release(&f);
  }
}

int main(void) {
  test_offsets();
  test_map_and_apply();
  test_mismatches();
  test_files_without_ids();
  return hs_test_finish("test_schema_map");
}
