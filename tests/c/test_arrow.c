/*
 * test_arrow.c — tests of the Arrow C Data Interface helpers: format
 * parsing, owned schema/array build-release cycles (run under ASan with
 * leak detection to prove release frees everything exactly once), the
 * metadata encoding, deep copies, validation failures with their field
 * paths, and the stream protocol including release mid-way.
 */
#include <string.h>

#include "arrow/arrow.h"
#include "hs_test.h"

/* ------------------------------------------------------------- helpers */

/* CHECK_OK tests its error pointer for NULL; passing &e directly makes gcc's
 * -Waddress fire, so route it through a function. */
static hs_error *errp(hs_error *e) {
  return e;
}

static int32_t *i32s(int64_t n, int32_t start) {
  int32_t *v = hs_malloc((size_t)(n ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = start + (int32_t)i;
  return v;
}

static int32_t *offsets_of(const int32_t *o, int n) {
  int32_t *v = hs_malloc((size_t)n * sizeof *v);
  memcpy(v, o, (size_t)n * sizeof *v);
  return v;
}

/* An int32 array 0..n-1 (no nulls). */
static void make_i32(struct ArrowArray *a, int64_t n) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_array_make_primitive(a, n, i32s(n, 0), NULL, 0, &e), errp(&e));
}

/* A list<int32> array of 3 lists over 6 child values: [0,1] [] [2,3,4,5]. */
static void make_list(struct ArrowSchema *s, struct ArrowArray *a) {
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+l", "col", ARROW_FLAG_NULLABLE, 1, &e), errp(&e));
  CHECK_OK(hs_arrow_schema_init(s->children[0], "i", "item", ARROW_FLAG_NULLABLE, 0, &e), errp(&e));
  CHECK_OK(hs_arrow_array_init(a, 2, 1, &e), errp(&e));
  static const int32_t offs[] = {0, 2, 2, 6};
  hs_arrow_array_set_buffer(a, 1, offsets_of(offs, 4));
  a->length = 3;
  make_i32(a->children[0], 6);
}

static int keepalive_calls;
static void count_keepalive(void *data) {
  keepalive_calls += *(int *)data;
}

/* ------------------------------------------------------------- formats */

static void test_type_parse(void) {
  static const struct {
    const char *format;
    hs_arrow_type_id id;
    int width;
  } simple[] = {
      {"n", HS_AT_NA, -1},
      {"b", HS_AT_BOOL, 0},
      {"c", HS_AT_INT8, 1},
      {"C", HS_AT_UINT8, 1},
      {"s", HS_AT_INT16, 2},
      {"S", HS_AT_UINT16, 2},
      {"i", HS_AT_INT32, 4},
      {"I", HS_AT_UINT32, 4},
      {"l", HS_AT_INT64, 8},
      {"L", HS_AT_UINT64, 8},
      {"e", HS_AT_FLOAT16, 2},
      {"f", HS_AT_FLOAT32, 4},
      {"g", HS_AT_FLOAT64, 8},
      {"z", HS_AT_BINARY, -1},
      {"Z", HS_AT_LARGE_BINARY, -1},
      {"u", HS_AT_STRING, -1},
      {"U", HS_AT_LARGE_STRING, -1},
      {"tdD", HS_AT_DATE32, 4},
      {"tdm", HS_AT_DATE64, 8},
      {"tts", HS_AT_TIME32, 4},
      {"ttm", HS_AT_TIME32, 4},
      {"ttu", HS_AT_TIME64, 8},
      {"ttn", HS_AT_TIME64, 8},
      {"tDs", HS_AT_DURATION, 8},
      {"tDn", HS_AT_DURATION, 8},
      {"+l", HS_AT_LIST, -1},
      {"+L", HS_AT_LARGE_LIST, -1},
      {"+s", HS_AT_STRUCT, -1},
      {"+m", HS_AT_MAP, -1},
      /* Valid Arrow formats we do not model, and garbage. */
      {"", HS_AT_OTHER, -1},
      {"ii", HS_AT_OTHER, -1},
      {"x", HS_AT_OTHER, -1},
      {"tiM", HS_AT_OTHER, -1},
      {"tdx", HS_AT_OTHER, -1},
      {"ts", HS_AT_OTHER, -1},
      {"tsu", HS_AT_OTHER, -1}, /* the colon is mandatory */
      {"+ud:0,1", HS_AT_OTHER, -1},
      {"+r", HS_AT_OTHER, -1},
      {"vu", HS_AT_OTHER, -1},
      {"+vl", HS_AT_OTHER, -1},
      {"+", HS_AT_OTHER, -1},
  };
  for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
    hs_arrow_type t;
    hs_error e = {0};
    CHECK_OK(hs_arrow_type_parse(simple[i].format, &t, &e), errp(&e));
    if (t.id != simple[i].id) fprintf(stderr, "format '%s'\n", simple[i].format);
    CHECK_EQ_INT(t.id, simple[i].id);
    CHECK_EQ_INT(hs_arrow_type_byte_width(&t), simple[i].width);
  }

  hs_arrow_type t;
  hs_error e = {0};
  CHECK_OK(hs_arrow_type_parse("ttu", &t, &e), errp(&e));
  CHECK_EQ_INT(t.unit, HS_UNIT_US);
  CHECK_OK(hs_arrow_type_parse("tss:", &t, &e), errp(&e));
  CHECK_EQ_INT(t.id, HS_AT_TIMESTAMP);
  CHECK_EQ_INT(t.unit, HS_UNIT_S);
  CHECK(strcmp(t.timezone, "") == 0);
  CHECK_OK(hs_arrow_type_parse("tsn:Europe/Paris", &t, &e), errp(&e));
  CHECK_EQ_INT(t.id, HS_AT_TIMESTAMP);
  CHECK_EQ_INT(t.unit, HS_UNIT_NS);
  CHECK(strcmp(t.timezone, "Europe/Paris") == 0);
  CHECK_OK(hs_arrow_type_parse("tsm:+07:30", &t, &e), errp(&e));
  CHECK_EQ_INT(t.unit, HS_UNIT_MS);
  CHECK(strcmp(t.timezone, "+07:30") == 0);
  CHECK_EQ_INT(hs_arrow_type_byte_width(&t), 8);

  CHECK_OK(hs_arrow_type_parse("w:42", &t, &e), errp(&e));
  CHECK_EQ_INT(t.id, HS_AT_FIXED_BINARY);
  CHECK_EQ_INT(t.width, 42);
  CHECK_EQ_INT(hs_arrow_type_byte_width(&t), 42);
  CHECK_OK(hs_arrow_type_parse("+w:768", &t, &e), errp(&e));
  CHECK_EQ_INT(t.id, HS_AT_FIXED_LIST);
  CHECK_EQ_INT(t.width, 768);
  CHECK_EQ_INT(hs_arrow_type_byte_width(&t), -1);

  CHECK_OK(hs_arrow_type_parse("d:19,10", &t, &e), errp(&e));
  CHECK_EQ_INT(t.id, HS_AT_DECIMAL128);
  CHECK_EQ_INT(t.precision, 19);
  CHECK_EQ_INT(t.scale, 10);
  CHECK_EQ_INT(hs_arrow_type_byte_width(&t), 16);
  CHECK_OK(hs_arrow_type_parse("d:38,-2,128", &t, &e), errp(&e));
  CHECK_EQ_INT(t.id, HS_AT_DECIMAL128);
  CHECK_EQ_INT(t.precision, 38);
  CHECK_EQ_INT(t.scale, -2);
  CHECK_OK(hs_arrow_type_parse("d:40,2,256", &t, &e), errp(&e));
  CHECK_EQ_INT(t.id, HS_AT_OTHER);

  static const char *const malformed[] = {"w:",     "w:0",    "w:-3",       "w:12x",        "+w:",
                                          "+w:a",   "d:",     "d:5",        "d:0,1",        "d:5,",
                                          "d:39,2", "d:5,2,", "d:5,2,128x", "w:99999999999"};
  for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
    hs_error me = {0};
    hs_status st = hs_arrow_type_parse(malformed[i], &t, &me);
    if (st != HS_ERR_SCHEMA) fprintf(stderr, "format '%s' not refused\n", malformed[i]);
    CHECK_EQ_INT(st, HS_ERR_SCHEMA);
    CHECK(strstr(me.message, malformed[i]) != NULL);
  }
  CHECK_EQ_INT(hs_arrow_type_parse(NULL, &t, NULL), HS_ERR_INVALID_ARG);
}

/* ------------------------------------------------------------- schemas */

static void test_schema_metadata(void) {
  struct ArrowSchema s;
  hs_error e = {0};
  CHECK_OK(hs_arrow_schema_init(&s, "i", "x", ARROW_FLAG_NULLABLE, 0, &e), errp(&e));
  CHECK(s.metadata == NULL);
  const char *keys[] = {"PARQUET:field_id", "", "unit"};
  const char *vals[] = {"7", "empty key", ""};
  CHECK_OK(hs_arrow_schema_set_metadata(&s, keys, vals, 3, &e), errp(&e));
  /* Layout: int32 count, then (int32 len, bytes) for each key and value. */
  int32_t n;
  memcpy(&n, s.metadata, 4);
  CHECK_EQ_INT(n, 3);
  int32_t klen;
  memcpy(&klen, s.metadata + 4, 4);
  CHECK_EQ_INT(klen, 16);
  CHECK(memcmp(s.metadata + 8, "PARQUET:field_id", 16) == 0);
  CHECK_EQ_INT(hs_arrow_metadata_size(s.metadata),
               4 + (4 + 16 + 4 + 1) + (4 + 0 + 4 + 9) + (4 + 4 + 4 + 0));
  int32_t len = -1;
  const char *v = hs_arrow_metadata_get(s.metadata, "PARQUET:field_id", &len);
  CHECK(v != NULL && len == 1 && v[0] == '7');
  v = hs_arrow_metadata_get(s.metadata, "", &len);
  CHECK(v != NULL && len == 9 && memcmp(v, "empty key", 9) == 0);
  v = hs_arrow_metadata_get(s.metadata, "unit", &len);
  CHECK(v != NULL && len == 0);
  CHECK(hs_arrow_metadata_get(s.metadata, "missing", &len) == NULL && len == 0);
  CHECK(hs_arrow_metadata_get(s.metadata, "PARQUET", &len) == NULL); /* prefix is no match */
  CHECK(hs_arrow_metadata_get(NULL, "x", &len) == NULL);

  /* Replacing frees the old blob (ASan checks), n == 0 clears. */
  const char *k2[] = {"a"}, *v2[] = {"b"};
  CHECK_OK(hs_arrow_schema_set_metadata(&s, k2, v2, 1, &e), errp(&e));
  CHECK(hs_arrow_metadata_get(s.metadata, "unit", NULL) == NULL);
  v = hs_arrow_metadata_get(s.metadata, "a", &len);
  CHECK(v != NULL && len == 1 && v[0] == 'b');
  CHECK_OK(hs_arrow_schema_set_metadata(&s, NULL, NULL, 0, &e), errp(&e));
  CHECK(s.metadata == NULL);
  CHECK_EQ_INT(hs_arrow_metadata_size(NULL), 0);
  s.release(&s);
  CHECK(s.release == NULL);

  /* Malformed blobs: negative count or lengths. */
  char bad[16];
  int32_t neg = -1, one = 1;
  memcpy(bad, &neg, 4);
  CHECK(hs_arrow_metadata_get(bad, "a", NULL) == NULL);
  CHECK_EQ_INT(hs_arrow_metadata_size(bad), -1);
  memcpy(bad, &one, 4);
  memcpy(bad + 4, &neg, 4);
  CHECK(hs_arrow_metadata_get(bad, "a", NULL) == NULL);
  CHECK_EQ_INT(hs_arrow_metadata_size(bad), -1);

  /* Only our own schemas take metadata. */
  struct ArrowSchema foreign;
  memset(&foreign, 0, sizeof foreign);
  CHECK_EQ_INT(hs_arrow_schema_set_metadata(&foreign, k2, v2, 1, NULL), HS_ERR_INVALID_ARG);
}

/* A schema made by "another producer": static strings, its own release. */
static int foreign_releases;
static void foreign_release(struct ArrowSchema *s) {
  for (int64_t i = 0; i < s->n_children; i++) {
    if (s->children[i]->release) s->children[i]->release(s->children[i]);
  }
  foreign_releases++;
  s->release = NULL;
}

static void test_schema_copy(void) {
  hs_error e = {0};
  struct ArrowSchema root;
  CHECK_OK(hs_arrow_schema_init(&root, "+s", "", 0, 2, &e), errp(&e));
  CHECK_OK(hs_arrow_schema_init(root.children[0], "+l", "tags", ARROW_FLAG_NULLABLE, 1, &e),
           errp(&e));
  CHECK_OK(hs_arrow_schema_init(root.children[0]->children[0], "u", "item", 2, 0, &e), errp(&e));
  /* Dictionary-encoded column: int32 indices into strings. */
  CHECK_OK(hs_arrow_schema_init(root.children[1], "i", "cat", ARROW_FLAG_NULLABLE, 0, &e),
           errp(&e));
  struct ArrowSchema dict;
  CHECK_OK(hs_arrow_schema_init(&dict, "u", NULL, 0, 0, &e), errp(&e));
  const char *k[] = {"dk"}, *v[] = {"dv"};
  CHECK_OK(hs_arrow_schema_set_metadata(&dict, k, v, 1, &e), errp(&e));
  CHECK_OK(hs_arrow_schema_set_dictionary(root.children[1], &dict, &e), errp(&e));
  CHECK(dict.release == NULL); /* moved */
  const char *k2[] = {"PARQUET:field_id"}, *v2[] = {"3"};
  CHECK_OK(hs_arrow_schema_set_metadata(root.children[0], k2, v2, 1, &e), errp(&e));

  struct ArrowSchema copy;
  CHECK_OK(hs_arrow_schema_copy(&root, &copy, &e), errp(&e));
  root.release(&root); /* the copy must not share anything */
  CHECK(root.release == NULL);
  CHECK(strcmp(copy.format, "+s") == 0 && strcmp(copy.name, "") == 0);
  CHECK_EQ_INT(copy.n_children, 2);
  struct ArrowSchema *tags = copy.children[0], *cat = copy.children[1];
  CHECK(strcmp(tags->format, "+l") == 0 && strcmp(tags->name, "tags") == 0);
  CHECK_EQ_INT(tags->flags, ARROW_FLAG_NULLABLE);
  CHECK(strcmp(tags->children[0]->format, "u") == 0);
  CHECK_EQ_INT(tags->children[0]->flags, 2);
  int32_t len;
  const char *fid = hs_arrow_metadata_get(tags->metadata, "PARQUET:field_id", &len);
  CHECK(fid != NULL && len == 1 && fid[0] == '3');
  CHECK(cat->dictionary != NULL);
  CHECK(strcmp(cat->dictionary->format, "u") == 0 && cat->dictionary->name == NULL);
  CHECK(hs_arrow_metadata_get(cat->dictionary->metadata, "dk", &len) != NULL && len == 2);

  /* Moving a child out (consumer side) and releasing it separately. */
  struct ArrowSchema moved = *copy.children[0];
  copy.children[0]->release = NULL;
  copy.release(&copy);
  CHECK(copy.release == NULL);
  CHECK(strcmp(moved.children[0]->name, "item") == 0);
  moved.release(&moved);

  /* Copy from a foreign producer's schema. */
  struct ArrowSchema fchild = {.format = "tsu:UTC", .name = "ts", .release = foreign_release};
  struct ArrowSchema *fchildren[] = {&fchild};
  struct ArrowSchema froot = {.format = "+s",
                              .name = "",
                              .n_children = 1,
                              .children = fchildren,
                              .release = foreign_release};
  CHECK_OK(hs_arrow_schema_copy(&froot, &copy, &e), errp(&e));
  CHECK(strcmp(copy.children[0]->format, "tsu:UTC") == 0);
  copy.release(&copy);
  froot.release(&froot);
  CHECK_EQ_INT(foreign_releases, 2);

  /* Broken input: a NULL child, a released source. */
  fchildren[0] = NULL;
  froot.release = foreign_release;
  hs_error e2 = {0};
  CHECK_EQ_INT(hs_arrow_schema_copy(&froot, &copy, &e2), HS_ERR_INVALID_ARG);
  CHECK(copy.release == NULL);
  froot.release = NULL;
  CHECK_EQ_INT(hs_arrow_schema_copy(&froot, &copy, NULL), HS_ERR_INVALID_ARG);

  /* A cycle is refused by the depth bound rather than recursing forever. */
  struct ArrowSchema cyc = {
      .format = "+l", .name = "loop", .n_children = 1, .release = foreign_release};
  struct ArrowSchema *cyc_children[] = {&cyc};
  cyc.children = cyc_children;
  hs_error e3 = {0};
  CHECK_EQ_INT(hs_arrow_schema_copy(&cyc, &copy, &e3), HS_ERR_UNSUPPORTED);
  CHECK(copy.release == NULL);

  CHECK_EQ_INT(hs_arrow_schema_init(&copy, NULL, "x", 0, 0, NULL), HS_ERR_INVALID_ARG);
  CHECK_EQ_INT(hs_arrow_schema_init(&copy, "i", "x", 0, -1, NULL), HS_ERR_INVALID_ARG);
}

/* -------------------------------------------------------------- arrays */

static void test_array_cycles(void) {
  hs_error e = {0};
  /* Many build/release cycles of a nested array; ASan reports any leak. */
  for (int round = 0; round < 50; round++) {
    struct ArrowSchema s;
    struct ArrowArray a;
    make_list(&s, &a);
    CHECK_OK(hs_arrow_array_validate(&s, &a, &e), errp(&e));
    a.release(&a);
    s.release(&s);
    CHECK(a.release == NULL && s.release == NULL);
  }

  /* Replacing an owned buffer frees the old one; borrowed buffers run their
   * keepalives exactly once, chained. */
  struct ArrowArray a;
  CHECK_OK(hs_arrow_array_init(&a, 3, 0, &e), errp(&e));
  CHECK(a.buffers != NULL && a.buffers[0] == NULL && a.n_buffers == 3);
  hs_arrow_array_set_buffer(&a, 1, hs_malloc(10));
  hs_arrow_array_set_buffer(&a, 1, hs_malloc(20));
  static const char page[] = "borrowed bytes";
  int one = 1, ten = 10, hundred = 100;
  keepalive_calls = 0;
  CHECK_OK(hs_arrow_array_set_borrowed(&a, 2, page, count_keepalive, &one, &e), errp(&e));
  CHECK_OK(hs_arrow_array_set_borrowed(&a, 0, page, count_keepalive, &ten, &e), errp(&e));
  CHECK_OK(hs_arrow_array_set_borrowed(&a, 1, page, count_keepalive, &hundred, &e), errp(&e));
  CHECK(a.buffers[2] == page && a.buffers[1] == page);
  CHECK_EQ_INT(keepalive_calls, 0);
  /* Moving the struct is a bitwise copy. */
  struct ArrowArray moved = a;
  a.release = NULL;
  moved.release(&moved);
  CHECK_EQ_INT(keepalive_calls, 111);

  /* Failing set_borrowed still honours the keepalive. */
  keepalive_calls = 0;
  CHECK_OK(hs_arrow_array_init(&a, 1, 0, &e), errp(&e));
  CHECK_EQ_INT(hs_arrow_array_set_borrowed(&a, 5, page, count_keepalive, &one, NULL),
               HS_ERR_INVALID_ARG);
  CHECK_EQ_INT(keepalive_calls, 1);
  a.release(&a);

  /* Builders: a struct of an int32 column and a string column, with a
   * dictionary-encoded third column. */
  struct ArrowArray cols[3];
  uint8_t *validity = hs_malloc(1);
  validity[0] = 0x5; /* rows 0 and 2 valid */
  CHECK_OK(hs_arrow_array_make_primitive(&cols[0], 3, i32s(3, 7), validity, 1, &e), errp(&e));
  static const int32_t soffs[] = {0, 3, 3, 8};
  char *chars = hs_malloc(8);
  memcpy(chars, "abcdefgh", 8);
  CHECK_OK(hs_arrow_array_make_binary(&cols[1], 3, offsets_of(soffs, 4), chars, NULL, 0, &e),
           errp(&e));
  int32_t *idx = i32s(3, 0);
  idx[2] = 1;
  CHECK_OK(hs_arrow_array_make_primitive(&cols[2], 3, idx, NULL, 0, &e), errp(&e));
  struct ArrowArray dict;
  static const int32_t doffs[] = {0, 1, 2};
  char *dchars = hs_malloc(2);
  memcpy(dchars, "xy", 2);
  CHECK_OK(hs_arrow_array_make_binary(&dict, 2, offsets_of(doffs, 3), dchars, NULL, 0, &e),
           errp(&e));
  CHECK_OK(hs_arrow_array_set_dictionary(&cols[2], &dict, &e), errp(&e));
  CHECK(dict.release == NULL);
  struct ArrowArray batch;
  CHECK_OK(hs_arrow_array_make_struct(&batch, 3, cols, 3, NULL, 0, &e), errp(&e));
  CHECK(cols[0].release == NULL && cols[1].release == NULL && cols[2].release == NULL);
  CHECK(!hs_arrow_is_valid(batch.children[0], 1) && hs_arrow_is_valid(batch.children[0], 2));
  CHECK_EQ_INT(((const int32_t *)batch.children[0]->buffers[1])[2], 9);

  struct ArrowSchema s, ds;
  CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 3, &e), errp(&e));
  CHECK_OK(hs_arrow_schema_init(s.children[0], "i", "n", ARROW_FLAG_NULLABLE, 0, &e), errp(&e));
  CHECK_OK(hs_arrow_schema_init(s.children[1], "u", "s", ARROW_FLAG_NULLABLE, 0, &e), errp(&e));
  CHECK_OK(hs_arrow_schema_init(s.children[2], "i", "d", ARROW_FLAG_NULLABLE, 0, &e), errp(&e));
  CHECK_OK(hs_arrow_schema_init(&ds, "u", NULL, 0, 0, &e), errp(&e));
  CHECK_OK(hs_arrow_schema_set_dictionary(s.children[2], &ds, &e), errp(&e));
  CHECK_OK(hs_arrow_array_validate(&s, &batch, &e), errp(&e));

  /* Sliced view via offset: still valid; index out of range is caught. */
  batch.offset = 1;
  batch.length = 2;
  CHECK_OK(hs_arrow_array_validate(&s, &batch, &e), errp(&e));
  batch.offset = 0;
  batch.length = 3;
  ((int32_t *)batch.children[2]->buffers[1])[1] = 2;
  hs_error ve = {0};
  CHECK_EQ_INT(hs_arrow_array_validate(&s, &batch, &ve), HS_ERR_INVALID_ARG);
  CHECK(strstr(ve.message, "'d'") != NULL && strstr(ve.message, "dictionary index 2") != NULL);
  batch.release(&batch);
  s.release(&s);

  /* Builders take ownership even when they fail (no leak under ASan). */
  struct ArrowArray bad;
  CHECK_EQ_INT(hs_arrow_array_make_primitive(&bad, -1, hs_malloc(4), hs_malloc(1), 0, NULL),
               HS_ERR_INVALID_ARG);
  CHECK(bad.release == NULL);
  CHECK_EQ_INT(hs_arrow_array_make_primitive(&bad, 4, hs_malloc(16), NULL, 2, NULL),
               HS_ERR_INVALID_ARG);
  CHECK_EQ_INT(hs_arrow_array_make_binary(&bad, 1, NULL, hs_malloc(3), NULL, 0, NULL),
               HS_ERR_INVALID_ARG);
  struct ArrowArray kids[2];
  make_i32(&kids[0], 2);
  memset(&kids[1], 0, sizeof kids[1]); /* released: refused, kids[0] freed */
  CHECK_EQ_INT(hs_arrow_array_make_struct(&bad, 2, kids, 2, NULL, 0, NULL), HS_ERR_INVALID_ARG);
  CHECK(kids[0].release == NULL);
  CHECK_EQ_INT(hs_arrow_array_init(&bad, -1, 0, NULL), HS_ERR_INVALID_ARG);
}

/* ---------------------------------------------------------- validation */

/* Expect validation to fail with `status` and a message containing both
 * `path` and `fault`. */
static void expect_invalid(const struct ArrowSchema *s, const struct ArrowArray *a,
                           hs_status status, const char *path, const char *fault, int line) {
  hs_error e = {0};
  hs_status st = hs_arrow_array_validate(s, a, errp(&e));
  bool ok = st == status && strstr(e.message, path) != NULL && strstr(e.message, fault) != NULL;
  if (!ok) fprintf(stderr, "line %d: got %d '%s'\n", line, (int)st, e.message);
  CHECK(ok);
}
#define EXPECT_INVALID(s, a, path, fault) \
  expect_invalid((s), (a), HS_ERR_INVALID_ARG, (path), (fault), __LINE__)

static void test_validate_offsets(void) {
  struct ArrowSchema s;
  struct ArrowArray a;
  make_list(&s, &a);
  int32_t *offs = (int32_t *)a.buffers[1];

  offs[2] = 1; /* 0 2 1 6: decreasing */
  EXPECT_INVALID(&s, &a, "'col'", "offsets decrease at index 2");
  offs[2] = 2;
  offs[3] = 7; /* past the 6 child values */
  EXPECT_INVALID(&s, &a, "'col'", "last offset 7 exceeds the child length 6");
  offs[3] = 6;
  offs[0] = -1;
  EXPECT_INVALID(&s, &a, "'col'", "negative");
  offs[0] = 0;
  /* With offset 1 only offsets[1..3] are read: a bad offsets[0] is fine. */
  offs[0] = 5;
  a.offset = 1;
  a.length = 2;
  hs_error e = {0};
  CHECK_OK(hs_arrow_array_validate(&s, &a, &e), errp(&e));
  offs[0] = 0;
  a.offset = 0;
  a.length = 3;

  /* Faults in the child are reported with the child's path. */
  a.children[0]->null_count = 1; /* but no validity buffer */
  EXPECT_INVALID(&s, &a, "'col.item'", "no validity buffer");
  a.children[0]->null_count = 0;
  const void *values = a.children[0]->buffers[1];
  a.children[0]->buffers[1] = NULL;
  EXPECT_INVALID(&s, &a, "'col.item'", "values buffer is NULL");
  a.children[0]->buffers[1] = values;
  a.children[0]->n_buffers = 3;
  EXPECT_INVALID(&s, &a, "'col.item'", "has 3 buffers");
  a.children[0]->n_buffers = 2;

  /* Header faults. */
  a.length = -1;
  EXPECT_INVALID(&s, &a, "'col'", "negative length");
  a.length = 3;
  a.null_count = 4;
  EXPECT_INVALID(&s, &a, "'col'", "null_count 4");
  a.null_count = -1; /* unknown is allowed */
  CHECK_OK(hs_arrow_array_validate(&s, &a, &e), errp(&e));
  a.null_count = 0;
  a.n_children = 0;
  EXPECT_INVALID(&s, &a, "'col'", "array has 0 children");
  a.n_children = 1;

  a.buffers[1] = NULL;
  EXPECT_INVALID(&s, &a, "'col'", "offsets buffer is NULL");
  a.buffers[1] = offs;
  /* An unnamed child is named by its index. */
  struct ArrowSchema *item = s.children[0];
  const char *saved_name = item->name;
  item->name = NULL;
  a.children[0]->length = -2;
  EXPECT_INVALID(&s, &a, "'col[0]'", "negative length");
  a.children[0]->length = 6;
  item->name = saved_name;
  CHECK_OK(hs_arrow_array_validate(&s, &a, &e), errp(&e));
  a.release(&a);
  s.release(&s);

  /* Strings: offsets into data of unknown size; only monotony and NULLs. */
  struct ArrowSchema ss;
  struct ArrowArray sa;
  CHECK_OK(hs_arrow_schema_init(&ss, "+s", "", 0, 1, &e), errp(&e));
  CHECK_OK(hs_arrow_schema_init(ss.children[0], "U", "name", 2, 0, &e), errp(&e));
  int64_t *loffs = hs_malloc(3 * sizeof *loffs);
  loffs[0] = 0, loffs[1] = 4, loffs[2] = 3;
  struct ArrowArray col;
  CHECK_OK(hs_arrow_array_make_binary(&col, 2, loffs, hs_malloc(4), NULL, 0, &e), errp(&e));
  CHECK_OK(hs_arrow_array_make_struct(&sa, 2, &col, 1, NULL, 0, &e), errp(&e));
  EXPECT_INVALID(&ss, &sa, "'name'", "offsets decrease at index 2 (3 < 4)");
  loffs[2] = 4;
  CHECK_OK(hs_arrow_array_validate(&ss, &sa, &e), errp(&e));
  sa.length = 3; /* struct longer than its child */
  EXPECT_INVALID(&ss, &sa, "<root>", "child 0 has length 2, needs at least 3");
  sa.length = 2;
  hs_arrow_array_set_buffer(sa.children[0], 2, NULL);
  EXPECT_INVALID(&ss, &sa, "'name'", "data buffer is NULL but offsets span 4 bytes");
  sa.release(&sa);
  ss.release(&ss);

  /* Fixed-size list: the child needs (offset + length) * width values. */
  struct ArrowSchema fs;
  struct ArrowArray fa;
  CHECK_OK(hs_arrow_schema_init(&fs, "+w:4", "embedding", 2, 1, &e), errp(&e));
  CHECK_OK(hs_arrow_schema_init(fs.children[0], "f", "item", 0, 0, &e), errp(&e));
  CHECK_OK(hs_arrow_array_init(&fa, 1, 1, &e), errp(&e));
  fa.length = 3;
  CHECK_OK(hs_arrow_array_make_primitive(fa.children[0], 12, hs_malloc(48), NULL, 0, &e), errp(&e));
  CHECK_OK(hs_arrow_array_validate(&fs, &fa, &e), errp(&e));
  fa.offset = 1;
  EXPECT_INVALID(&fs, &fa, "'embedding'", "child 0 has length 12, needs at least 16");
  fa.offset = 0;
  fa.n_buffers = 2;
  EXPECT_INVALID(&fs, &fa, "'embedding'", "has 2 buffers");
  fa.n_buffers = 1;
  fa.release(&fa);
  fs.release(&fs);

  /* Map entries must be a 2-field struct; unsupported types are named. */
  struct ArrowSchema ms;
  struct ArrowArray ma;
  CHECK_OK(hs_arrow_schema_init(&ms, "+m", "m", 2, 1, &e), errp(&e));
  CHECK_OK(hs_arrow_schema_init(ms.children[0], "i", "entries", 0, 0, &e), errp(&e));
  CHECK_OK(hs_arrow_array_init(&ma, 2, 1, &e), errp(&e));
  make_i32(ma.children[0], 0);
  EXPECT_INVALID(&ms, &ma, "'m'", "map entries must be a struct");
  ma.release(&ma);
  ms.release(&ms);

  struct ArrowSchema us;
  CHECK_OK(hs_arrow_schema_init(&us, "+ud:0,1", "u", 2, 0, &e), errp(&e));
  make_i32(&a, 1);
  expect_invalid(&us, &a, HS_ERR_UNSUPPORTED, "'u'", "not supported", __LINE__);
  us.release(&us);
  CHECK_OK(hs_arrow_schema_init(&us, "w:0", "fx", 2, 0, &e), errp(&e));
  expect_invalid(&us, &a, HS_ERR_SCHEMA, "'fx'", "malformed", __LINE__);
  us.release(&us);
  CHECK_OK(hs_arrow_schema_init(&us, "i", "x", 2, 0, &e), errp(&e));
  struct ArrowArray released = a;
  released.release = NULL;
  EXPECT_INVALID(&us, &released, "'x'", "released");
  a.release(&a);
  us.release(&us);
}

/* -------------------------------------------------------------- streams */

static void make_stream(struct ArrowArrayStream *st, size_t n) {
  hs_error e = {0};
  struct ArrowSchema s;
  CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 1, &e), errp(&e));
  CHECK_OK(hs_arrow_schema_init(s.children[0], "i", "v", 2, 0, &e), errp(&e));
  struct ArrowArray batches[4];
  for (size_t i = 0; i < n; i++) {
    struct ArrowArray col;
    CHECK_OK(
        hs_arrow_array_make_primitive(&col, (int64_t)i + 1, i32s((int64_t)i + 1, 100), NULL, 0, &e),
        errp(&e));
    CHECK_OK(hs_arrow_array_make_struct(&batches[i], (int64_t)i + 1, &col, 1, NULL, 0, &e),
             errp(&e));
  }
  CHECK_OK(hs_arrow_stream_from_batches(&s, batches, n, st, &e), errp(&e));
  CHECK(s.release == NULL);
  for (size_t i = 0; i < n; i++) CHECK(batches[i].release == NULL);
}

static void test_stream(void) {
  struct ArrowArrayStream st;
  make_stream(&st, 3);
  struct ArrowSchema s1, s2;
  CHECK_EQ_INT(st.get_schema(&st, &s1), 0);
  CHECK_EQ_INT(st.get_schema(&st, &s2), 0); /* each call is a fresh copy */
  CHECK(s1.children[0] != s2.children[0]);
  CHECK(strcmp(s1.children[0]->name, "v") == 0);
  CHECK(st.get_last_error(&st) == NULL);
  s2.release(&s2);
  for (int i = 0; i < 3; i++) {
    struct ArrowArray b;
    CHECK_EQ_INT(st.get_next(&st, &b), 0);
    CHECK(b.release != NULL);
    CHECK_EQ_INT(b.length, i + 1);
    hs_error e = {0};
    CHECK_OK(hs_arrow_array_validate(&s1, &b, &e), errp(&e));
    b.release(&b);
  }
  for (int i = 0; i < 2; i++) { /* end of stream, repeatedly */
    struct ArrowArray b;
    CHECK_EQ_INT(st.get_next(&st, &b), 0);
    CHECK(b.release == NULL);
  }
  st.release(&st);
  CHECK(st.release == NULL);
  s1.release(&s1); /* schemas outlive the stream */

  /* Release mid-way: the batches not handed out are freed (ASan). */
  make_stream(&st, 4);
  struct ArrowArray b;
  CHECK_EQ_INT(st.get_next(&st, &b), 0);
  st.release(&st);
  CHECK_EQ_INT(b.length, 1); /* a batch handed out survives the stream */
  b.release(&b);

  /* Released before anything was read; and an empty stream. */
  make_stream(&st, 2);
  st.release(&st);
  make_stream(&st, 0);
  CHECK_EQ_INT(st.get_next(&st, &b), 0);
  CHECK(b.release == NULL);
  st.release(&st);

  /* Collect drains in order and leaves the stream to its owner. */
  make_stream(&st, 4);
  struct ArrowSchema cs;
  struct ArrowArray *batches;
  size_t n;
  hs_error e = {0};
  CHECK_OK(hs_arrow_stream_collect(&st, &cs, &batches, &n, &e), errp(&e));
  CHECK_EQ_INT(n, 4);
  for (size_t i = 0; i < n; i++) {
    CHECK_EQ_INT(batches[i].length, (int64_t)i + 1);
    CHECK_EQ_INT(((const int32_t *)batches[i].children[0]->buffers[1])[i], 100 + (int32_t)i);
  }
  CHECK(st.release != NULL);
  st.release(&st);
  hs_arrow_batches_free(batches, n);
  cs.release(&cs);
  hs_arrow_batches_free(NULL, 0);

  /* Bad inputs to from_batches are released, not leaked. */
  struct ArrowSchema s;
  CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 0, &e), errp(&e));
  struct ArrowArray bs[2];
  CHECK_OK(hs_arrow_array_make_struct(&bs[0], 0, NULL, 0, NULL, 0, &e), errp(&e));
  memset(&bs[1], 0, sizeof bs[1]);
  CHECK_EQ_INT(hs_arrow_stream_from_batches(&s, bs, 2, &st, NULL), HS_ERR_INVALID_ARG);
  CHECK(s.release == NULL && bs[0].release == NULL && st.release == NULL);
}

/* A producer whose get_next fails after one batch: collect reports the
 * producer's message and returns nothing. */
static int failing_calls;
static int failing_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out) {
  return hs_arrow_schema_init(out, "+s", "", 0, 0, NULL) == HS_OK ? 0 : 12;
}
static int failing_get_next(struct ArrowArrayStream *st, struct ArrowArray *out) {
  if (failing_calls++ == 0) return hs_arrow_array_init(out, 1, 0, NULL) == HS_OK ? 0 : 12;
  return 5; /* EIO */
}
static const char *failing_last_error(struct ArrowArrayStream *st) {
  return "disk on fire";
}
static void failing_release(struct ArrowArrayStream *st) {
  st->release = NULL;
}

static void test_collect_error(void) {
  struct ArrowArrayStream st = {failing_get_schema, failing_get_next, failing_last_error,
                                failing_release, NULL};
  struct ArrowSchema s;
  struct ArrowArray *batches = (struct ArrowArray *)&s;
  size_t n = 99;
  hs_error e = {0};
  CHECK_EQ_INT(hs_arrow_stream_collect(&st, &s, &batches, &n, &e), HS_ERR_IO);
  CHECK(strstr(e.message, "disk on fire") != NULL && strstr(e.message, "get_next") != NULL);
  CHECK(batches == NULL && n == 0 && s.release == NULL);
  st.release(&st);
}

int main(void) {
  test_type_parse();
  test_schema_metadata();
  test_schema_copy();
  test_array_cycles();
  test_validate_offsets();
  test_stream();
  test_collect_error();
  return hs_test_finish("test_arrow");
}
