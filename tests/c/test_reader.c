/*
 * test_reader.c — the Parquet reader against the Apache conformance corpus
 * (every valid file streams, or fails for a listed reason; every bad or
 * encrypted file fails with a message and never crashes) and against the
 * small files in fuzz/corpus/reader/ for projection, pruning, row
 * selection, batch slicing, nested types and fixed-size lists. Exact values
 * against pyarrow are checked by the Python tests.
 */
#include <dirent.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "parquet/parquet.h"

#define CORPUS "fuzz/corpus/reader/"

/* Files in data/ that must fail, and why. */
static const char *const expected_failures[][2] = {
    {"datapage_v1-corrupt-checksum.parquet", "page CRC mismatch (deliberately corrupt)"},
    {"rle-dict-uncompressed-corrupt-checksum.parquet", "page CRC mismatch (deliberately corrupt)"},
    {"incorrect_map_schema.parquet", "map keys not required (pyarrow refuses too)"},
    {"large_string_map.brotli.parquet", "BROTLI codec is not supported"},
};

/* Files in bad_data/ that must read without error, and why that is right
 * (the intent recorded in parquet-testing's bad_data/README.md). */
static const struct {
  const char *name, *why;
  int64_t rows;
} bad_but_readable[] = {
    /* README: "dictionary index page uses rle encoding but 0 as rle
     * bit-width". A one-entry dictionary needs 0 bits per index: valid
     * data that crashed the Go reader (apache/arrow#43605); all 0. */
    {"ARROW-GH-43605.parquet", "dictionary indices with bit width 0 are valid", 21186},
};

/* Files in bad_data/ that must fail, with a word their message must carry. */
static const char *const bad_must_fail[][2] = {
    /* README: "repetition levels start with a 1 instead of 0". */
    {"ARROW-GH-45185.parquet", "repetition level"},
};

static const char *conformance_dir(void) {
  const char *d = getenv("HS_CONFORMANCE_DIR");
  return d ? d : "../shared/conformance/parquet-testing";
}

/* Open and stream every batch; returns the status, total rows in *rows. */
static hs_status stream_file(const char *path, const hs_parquet_read_options *opts, int64_t *rows,
                             char *msg, size_t msg_cap) {
  hs_error err = {0};
  hs_parquet_reader *r = NULL;
  struct ArrowArrayStream s;
  struct ArrowSchema schema;
  hs_status st = hs_parquet_reader_open(path, &r, &err);
  if (st == HS_OK) st = hs_parquet_reader_stream(r, opts, &s, &err);
  *rows = 0;
  if (st != HS_OK) {
    snprintf(msg, msg_cap, "%s", err.message);
    hs_parquet_reader_free(r);
    return st;
  }
  hs_parquet_reader_free(r); /* the stream must outlive the reader */
  if (s.get_schema(&s, &schema) != 0) {
    snprintf(msg, msg_cap, "get_schema: %s", s.get_last_error(&s));
    s.release(&s);
    return HS_ERR_INTERNAL;
  }
  for (;;) {
    struct ArrowArray a;
    int rc = s.get_next(&s, &a);
    if (rc != 0) {
      const char *e = s.get_last_error(&s);
      snprintf(msg, msg_cap, "%s", e ? e : "(no message)");
      st = e && e[0] ? HS_ERR_CORRUPT : HS_ERR_INTERNAL;
      break;
    }
    if (a.release == NULL) break;
    hs_error verr = {0};
    if (hs_arrow_array_validate(&schema, &a, &verr) != HS_OK) {
      snprintf(msg, msg_cap, "invalid batch: %s", verr.message);
      st = HS_ERR_INTERNAL;
      a.release(&a);
      break;
    }
    *rows += a.length;
    a.release(&a);
  }
  schema.release(&schema);
  s.release(&s);
  return st;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void test_conformance_data(void) {
  char dir[512], path[1024], msg[HS_ERROR_MESSAGE_MAX + 64];
  snprintf(dir, sizeof dir, "%s/data", conformance_dir());
  DIR *d = opendir(dir);
  if (d == NULL) {
    printf("skipping conformance: %s not found\n", dir);
    return;
  }
  struct dirent *e;
  int n_files = 0;
  while ((e = readdir(d)) != NULL) {
    bool encrypted = ends_with(e->d_name, ".parquet.encrypted");
    if (!ends_with(e->d_name, ".parquet") && !encrypted) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    int64_t rows;
    hs_status st = stream_file(path, NULL, &rows, msg, sizeof msg);
    const char *why = NULL;
    for (size_t i = 0; i < sizeof expected_failures / sizeof expected_failures[0]; i++) {
      if (strcmp(e->d_name, expected_failures[i][0]) == 0) why = expected_failures[i][1];
    }
    n_files++;
    if (encrypted || why) {
      if (st == HS_OK)
        fprintf(stderr, "%s: expected failure (%s)\n", e->d_name, why ? why : "encrypted");
      CHECK(st != HS_OK && st != HS_ERR_INTERNAL && msg[0] != '\0');
      /* Messages start with the file name. */
      CHECK(strncmp(msg, path, strlen(path)) == 0);
      /* A wrong page CRC names the row group, the column and both CRCs. */
      if (why != NULL && strstr(why, "CRC") != NULL) {
        CHECK(st == HS_ERR_CORRUPT && strstr(msg, "page CRC mismatch (the header stores ") &&
              strstr(msg, "row group 0: column ") && strstr(msg, "page at offset "));
      }
    } else {
      if (st != HS_OK) fprintf(stderr, "%s: %s\n", e->d_name, msg);
      CHECK(st == HS_OK);
    }
  }
  closedir(d);
  CHECK(n_files > 60);
}

static void test_bad_data(void) {
  char dir[512], path[1024], msg[HS_ERROR_MESSAGE_MAX + 64];
  snprintf(dir, sizeof dir, "%s/bad_data", conformance_dir());
  DIR *d = opendir(dir);
  if (d == NULL) return;
  struct dirent *e;
  size_t n_must_fail = 0;
  while ((e = readdir(d)) != NULL) {
    if (!ends_with(e->d_name, ".parquet")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    int64_t rows;
    msg[0] = '\0';
    hs_status st = stream_file(path, NULL, &rows, msg, sizeof msg);
    int readable = -1;
    for (size_t i = 0; i < sizeof bad_but_readable / sizeof bad_but_readable[0]; i++) {
      if (strcmp(e->d_name, bad_but_readable[i].name) == 0) readable = (int)i;
    }
    if (readable >= 0) {
      if (st != HS_OK)
        fprintf(stderr, "bad_data/%s (%s): %s\n", e->d_name, bad_but_readable[readable].why, msg);
      CHECK(st == HS_OK);
      CHECK_EQ_INT(rows, bad_but_readable[readable].rows);
      continue;
    }
    if (st == HS_OK)
      fprintf(stderr, "bad_data/%s: unexpectedly read %lld rows\n", e->d_name, (long long)rows);
    CHECK(st != HS_OK && msg[0] != '\0');
    for (size_t i = 0; i < sizeof bad_must_fail / sizeof bad_must_fail[0]; i++)
      if (strcmp(e->d_name, bad_must_fail[i][0]) == 0) {
        if (strstr(msg, bad_must_fail[i][1]) == NULL)
          fprintf(stderr, "bad_data/%s: message lacks '%s': %s\n", e->d_name, bad_must_fail[i][1],
                  msg);
        CHECK(strstr(msg, bad_must_fail[i][1]) != NULL);
        n_must_fail++;
      }
  }
  closedir(d);
  CHECK_EQ_INT(n_must_fail, sizeof bad_must_fail / sizeof bad_must_fail[0]);
}

/* Read all batches of `path` under `opts` into the column `col` as int64
 * values (int32/int64/uint32 columns), up to cap; returns the count. */
static int64_t read_ints(const char *path, const hs_parquet_read_options *opts, int col,
                         int64_t *out, int64_t cap, int *n_batches) {
  hs_error err = {0};
  hs_parquet_reader *r;
  struct ArrowArrayStream s;
  struct ArrowSchema schema;
  int64_t n = 0;
  *n_batches = 0;
  if (hs_parquet_reader_open(path, &r, &err) != HS_OK) return -1;
  if (hs_parquet_reader_stream(r, opts, &s, &err) != HS_OK) {
    hs_parquet_reader_free(r);
    return -1;
  }
  CHECK_EQ_INT(s.get_schema(&s, &schema), 0);
  for (;;) {
    struct ArrowArray a;
    if (s.get_next(&s, &a) != 0) {
      n = -1;
      break;
    }
    if (a.release == NULL) break;
    (*n_batches)++;
    const struct ArrowArray *c = a.children[col];
    const char *f = schema.children[col]->format;
    for (int64_t i = 0; i < c->length && n < cap; i++) {
      if (!hs_arrow_is_valid(c, i))
        out[n++] = -999;
      else if (f[0] == 'l')
        out[n++] = ((const int64_t *)c->buffers[1])[c->offset + i];
      else if (f[0] == 'I')
        out[n++] = ((const uint32_t *)c->buffers[1])[c->offset + i];
      else
        out[n++] = ((const int32_t *)c->buffers[1])[c->offset + i];
    }
    a.release(&a);
  }
  schema.release(&schema);
  s.release(&s);
  hs_parquet_reader_free(r);
  return n;
}

static void test_projection(void) {
  hs_error err = {0};
  hs_parquet_reader *r;
  CHECK_OK(hs_parquet_reader_open(CORPUS "flat.parquet", &r, &err), &err);
  if (err.status) return;
  CHECK_EQ_INT(hs_parquet_reader_num_rows(r), 6);
  CHECK_EQ_INT(hs_parquet_reader_num_row_groups(r), 2);
  CHECK(hs_parquet_reader_metadata(r)->n_row_groups == 2);
  struct ArrowSchema schema;
  CHECK_OK(hs_parquet_reader_schema(r, &schema, &err), &err);
  CHECK_EQ_INT(schema.n_children, 4);
  CHECK(strcmp(schema.children[2]->format, "u") == 0);
  CHECK(strcmp(schema.children[3]->format, "I") == 0);
  schema.release(&schema);

  const char *cols[] = {"u", "id"};
  hs_parquet_read_options o;
  hs_parquet_read_options_init(&o);
  o.columns = cols;
  o.n_columns = 2;
  struct ArrowArrayStream s;
  CHECK_OK(hs_parquet_reader_stream(r, &o, &s, &err), &err);
  CHECK_EQ_INT(s.get_schema(&s, &schema), 0);
  CHECK_EQ_INT(schema.n_children, 2);
  CHECK(strcmp(schema.children[0]->name, "u") == 0 && strcmp(schema.children[1]->name, "id") == 0);
  schema.release(&schema);
  s.release(&s);

  const char *bad[] = {"id", "nope"};
  o.columns = bad;
  hs_error e2 = {0};
  CHECK(hs_parquet_reader_stream(r, &o, &s, &e2) == HS_ERR_NOT_FOUND);
  CHECK(strncmp(e2.message, CORPUS "flat.parquet: ", strlen(CORPUS) + 14) == 0);
  CHECK(strstr(e2.message, "'nope'") != NULL && strstr(e2.message, "'id', 'x', 's', 'u'") != NULL);
  hs_parquet_reader_free(r);

  int64_t v[16];
  int nb;
  hs_parquet_read_options_init(&o);
  o.columns = cols;
  o.n_columns = 2;
  CHECK_EQ_INT(read_ints(CORPUS "flat.parquet", &o, 0, v, 16, &nb), 6);
  CHECK_EQ_INT(v[5], 4294967295LL);
  CHECK_EQ_INT(nb, 2);
  o.batch_rows_max = 2;
  CHECK_EQ_INT(read_ints(CORPUS "flat.parquet", &o, 1, v, 16, &nb), 6);
  CHECK_EQ_INT(nb, 4);
  CHECK_EQ_INT(v[4], 4);
}

static int64_t count_rgs(const char *col, hs_cmp_op op, hs_value value) {
  hs_error err = {0};
  hs_parquet_reader *r;
  int64_t n = -1;
  if (hs_parquet_reader_open(CORPUS "flat.parquet", &r, &err) != HS_OK) return -1;
  hs_stat_predicate p = {.column = col, .op = op, .value = value};
  hs_parquet_read_options o;
  hs_parquet_read_options_init(&o);
  o.predicates = &p;
  o.n_predicates = 1;
  if (hs_parquet_reader_count_row_groups(r, &o, &n, &err) != HS_OK) n = -(int64_t)err.status;
  hs_parquet_reader_free(r);
  return n;
}

static hs_value vi(int64_t x) {
  return (hs_value){.kind = HS_VALUE_INT64, .i64 = x};
}
static hs_value vd(double x) {
  return (hs_value){.kind = HS_VALUE_DOUBLE, .f64 = x};
}
static hs_value vs(const char *x) {
  return (hs_value){.kind = HS_VALUE_STRING, .str = x, .str_len = strlen(x)};
}

static void test_pruning(void) {
  /* Row groups: id 0..2 | 3..5; x 0..1 | 1.5..2.5; s a0..a2 | a3..a5; u 0..2 | 3..2^32-1. */
  CHECK_EQ_INT(count_rgs("id", HS_CMP_EQ, vi(4)), 1);
  CHECK_EQ_INT(count_rgs("id", HS_CMP_EQ, vi(9)), 0);
  CHECK_EQ_INT(count_rgs("id", HS_CMP_LT, vi(3)), 1);
  CHECK_EQ_INT(count_rgs("id", HS_CMP_LE, vi(3)), 2);
  CHECK_EQ_INT(count_rgs("id", HS_CMP_GT, vi(2)), 1);
  CHECK_EQ_INT(count_rgs("id", HS_CMP_GE, vi(2)), 2);
  CHECK_EQ_INT(count_rgs("id", HS_CMP_NE, vi(1)), 2);
  CHECK_EQ_INT(count_rgs("id", HS_CMP_GT, vd(2.5)), 1);
  CHECK_EQ_INT(count_rgs("x", HS_CMP_GT, vd(1.2)), 1);
  CHECK_EQ_INT(count_rgs("x", HS_CMP_EQ, vi(1)), 1);
  CHECK_EQ_INT(count_rgs("x", HS_CMP_EQ, vd(0.0 / 0.0)), 2); /* NaN never prunes */
  CHECK_EQ_INT(count_rgs("s", HS_CMP_EQ, vs("a4")), 1);
  CHECK_EQ_INT(count_rgs("s", HS_CMP_LT, vs("a")), 0);
  CHECK_EQ_INT(count_rgs("s", HS_CMP_EQ, vi(4)), 2); /* kind mismatch: keep */
  /* Unsigned order: 2^32-1 is the maximum, not -1. */
  CHECK_EQ_INT(count_rgs("u", HS_CMP_GT, vi(1000)), 1);
  CHECK_EQ_INT(count_rgs("u", HS_CMP_LT, vi(0)), 0);
  CHECK_EQ_INT(count_rgs("nope", HS_CMP_EQ, vi(1)), -HS_ERR_NOT_FOUND);

  /* The stream yields only the kept row group. */
  hs_stat_predicate p = {.column = "id", .op = HS_CMP_GE, .value = vi(4)};
  hs_parquet_read_options o;
  hs_parquet_read_options_init(&o);
  o.predicates = &p;
  o.n_predicates = 1;
  int64_t v[16];
  int nb;
  CHECK_EQ_INT(read_ints(CORPUS "flat.parquet", &o, 0, v, 16, &nb), 3);
  CHECK_EQ_INT(v[0], 3);
}

static void test_row_selection(void) {
  const int64_t rows[] = {0, 7, 29, 30, 31, 45, 59};
  hs_parquet_read_options o;
  hs_parquet_read_options_init(&o);
  o.rows = rows;
  o.n_rows = 7;
  int64_t v[16];
  int nb;
  CHECK_EQ_INT(read_ints(CORPUS "pageindex.parquet", &o, 0, v, 16, &nb), 7);
  for (int i = 0; i < 7; i++) CHECK_EQ_INT(v[i], rows[i]);
  o.batch_rows_max = 2;
  CHECK_EQ_INT(read_ints(CORPUS "pageindex.parquet", &o, 0, v, 16, &nb), 7);
  CHECK_EQ_INT(nb, 4);
  for (int i = 0; i < 7; i++) CHECK_EQ_INT(v[i], rows[i]);
  /* Only the second row group holds rows here. */
  const int64_t late[] = {40, 41};
  o.rows = late;
  o.n_rows = 2;
  hs_error err = {0};
  hs_parquet_reader *r;
  int64_t n = 0;
  CHECK_OK(hs_parquet_reader_open(CORPUS "pageindex.parquet", &r, &err), &err);
  CHECK_OK(hs_parquet_reader_count_row_groups(r, &o, &n, &err), &err);
  CHECK_EQ_INT(n, 1);
  const int64_t unsorted[] = {5, 3};
  o.rows = unsorted;
  hs_error e2 = {0};
  CHECK(hs_parquet_reader_count_row_groups(r, &o, &n, &e2) == HS_ERR_INVALID_ARG);
  hs_parquet_reader_free(r);
}

static void test_nested_and_fixed(void) {
  char msg[HS_ERROR_MESSAGE_MAX];
  int64_t rows;
  CHECK_EQ_INT(stream_file(CORPUS "nested.parquet", NULL, &rows, msg, sizeof msg), HS_OK);
  CHECK_EQ_INT(rows, 4);
  hs_error err = {0};
  hs_parquet_reader *r;
  struct ArrowSchema schema;
  CHECK_OK(hs_parquet_reader_open(CORPUS "nested.parquet", &r, &err), &err);
  CHECK_OK(hs_parquet_reader_schema(r, &schema, &err), &err);
  CHECK(strcmp(schema.children[0]->format, "+l") == 0);
  CHECK(strcmp(schema.children[1]->format, "+s") == 0);
  CHECK(strcmp(schema.children[2]->format, "+m") == 0);
  CHECK(strcmp(schema.children[2]->children[0]->name, "entries") == 0);
  CHECK(strcmp(schema.children[3]->children[0]->format, "+l") == 0);
  schema.release(&schema);
  hs_parquet_reader_free(r);

  CHECK_OK(hs_parquet_reader_open(CORPUS "fixedlist.parquet", &r, &err), &err);
  CHECK_OK(hs_parquet_reader_schema(r, &schema, &err), &err);
  CHECK(strcmp(schema.children[0]->format, "+w:3") == 0);
  schema.release(&schema);
  struct ArrowArrayStream s;
  CHECK_OK(hs_parquet_reader_stream(r, NULL, &s, &err), &err);
  struct ArrowArray a;
  CHECK_EQ_INT(s.get_next(&s, &a), 0);
  if (a.release) {
    const struct ArrowArray *fl = a.children[0], *el = fl->children[0];
    CHECK_EQ_INT(fl->length, 4);
    CHECK_EQ_INT(fl->null_count, 1);
    CHECK_EQ_INT(el->length, 12);
    CHECK(((const float *)el->buffers[1])[el->offset + 9] == 7.0f);
    a.release(&a);
  }
  s.release(&s);
  hs_parquet_reader_free(r);

  CHECK(stream_file(CORPUS "fixedlist_bad.parquet", NULL, &rows, msg, sizeof msg) ==
        HS_ERR_CORRUPT);
  CHECK(strstr(msg, "embedding") != NULL);
}

static void test_buffers(void) {
  hs_error err = {0};
  hs_parquet_reader *r = NULL;
  static const uint8_t junk[] = "PAR1 this is not a parquet file PAR1";
  CHECK(hs_parquet_reader_open_buffer(junk, sizeof junk - 1, "junk", &r, &err) != HS_OK);
  CHECK(r == NULL && strstr(err.message, "junk") == err.message);
  hs_error e2 = {0};
  CHECK(hs_parquet_reader_open_buffer(junk, 3, "tiny", &r, &e2) != HS_OK);
  hs_error e3 = {0};
  CHECK(hs_parquet_reader_open("/nonexistent/x.parquet", &r, &e3) != HS_OK);
  hs_parquet_reader_free(NULL);
}

/* A dictionary whose only value is the empty string has no bytes at all:
 * decoding must not touch its (NULL) data buffer. Written by our writer
 * (dictionary on by default), read back under the sanitizers. */
static void test_all_empty_strings(void) {
  const int64_t n = 5;
  hs_error e = {0};
  struct ArrowSchema schema;
  CHECK_OK(hs_arrow_schema_init(&schema, "+s", NULL, 0, 1, &e), &e);
  CHECK_OK(hs_arrow_schema_init(schema.children[0], "u", "s", 0, 0, &e), &e);
  int32_t *offs = hs_calloc((size_t)n + 1, sizeof(int32_t));
  struct ArrowArray col, batch;
  CHECK_OK(hs_arrow_array_make_binary(&col, n, offs, NULL, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_struct(&batch, n, &col, 1, NULL, 0, &e), &e);
  const char *path = "build/test_reader_all_empty.parquet";
  hs_parquet_writer *w = NULL;
  CHECK_OK(hs_parquet_writer_open(path, &schema, NULL, &w, &e), &e);
  if (w != NULL) {
    CHECK_OK(hs_parquet_writer_write(w, &batch, &e), &e);
    CHECK_OK(hs_parquet_writer_close(w, &e), &e);
    hs_parquet_writer_free(w);
  }
  batch.release(&batch);
  schema.release(&schema);
  hs_parquet_reader *r = NULL;
  CHECK_OK(hs_parquet_reader_open(path, &r, &e), &e);
  if (r != NULL) {
    struct ArrowArrayStream st;
    CHECK_OK(hs_parquet_reader_stream(r, NULL, &st, &e), &e);
    struct ArrowArray got;
    int64_t rows = 0;
    while (st.get_next(&st, &got) == 0 && got.release != NULL) {
      const int32_t *o = got.children[0]->buffers[1];
      for (int64_t i = 0; i <= got.length; i++) CHECK_EQ_INT(o[i], 0);
      rows += got.length;
      got.release(&got);
    }
    CHECK_EQ_INT(rows, n);
    st.release(&st);
    hs_parquet_reader_free(r);
  }
  remove(path);
}

int main(void) {
  test_conformance_data();
  test_bad_data();
  test_projection();
  test_pruning();
  test_row_selection();
  test_nested_and_fixed();
  test_buffers();
  test_all_empty_strings();
  return hs_test_finish("test_reader");
}
