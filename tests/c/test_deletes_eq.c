/*
 * test_deletes_eq.c — equality deletes (src/table/deletes_eq.c) against a
 * brute-force matcher: random data files and delete files over small
 * domains (so keys collide), NULLs in both, duplicate delete rows, one-
 * and multi-column keys, int data files read under a long field (the
 * promotion a delete written after it must match), float files under a
 * double field, NaN / -0.0, a column the data file lacks (NULL, or a v3
 * initial-default), several key sets applied at once, a file without
 * field ids (parquet-testing's alltypes_plain) matched by name; errors: a delete file without a key
 * column, a field id no schema has, a nested or unsupported key type, a missing and a truncated
 * file, each naming the file. Half the rounds write their delete files with hs_table_eqdel_write
 * (its manifest record checked), and its refusals leave nothing behind.
 */
#include <math.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "table/deletes_eq.h"

enum { K_I32, K_I64, K_STR, K_F32, K_F64, K_BIN };

typedef struct tcol {
  const char *name;
  int id;   /* -1: no field id */
  int kind; /* K_* */
} tcol;

/* Values of one column: ints, doubles or strings; null flags. */
typedef struct tvals {
  int64_t *iv;
  double *dv;
  const char **sv;
  bool *null;
} tvals;

static const char *STRS[] = {"", "a", "b", "cc", "ddd", "\xc3\xa9t\xc3\xa9"};
static const double DBL[] = {0.0, -0.0, 1.5, -2.25, NAN, 1e300, 3.0};

static void gen(uint64_t *rng, int kind, size_t n, tvals *v, int null_pct) {
  v->iv = calloc(n + 1, sizeof *v->iv);
  v->dv = calloc(n + 1, sizeof *v->dv);
  v->sv = calloc(n + 1, sizeof *v->sv);
  v->null = calloc(n + 1, sizeof *v->null);
  for (size_t i = 0; i < n; i++) {
    v->null[i] = (int)(hs_test_rand(rng) % 100) < null_pct;
    uint64_t r = hs_test_rand(rng);
    switch (kind) {
    case K_I32:
    case K_I64: v->iv[i] = (int64_t)(r % 9) - 3; break;
    case K_STR: v->sv[i] = STRS[r % 6]; break;
    default: v->dv[i] = DBL[r % 7]; break;
    }
    if (kind == K_I64 && r % 50 == 0) v->iv[i] = INT64_C(1) << 40; /* not an int32 */
    if (kind == K_F32 && DBL[r % 7] == 1e300) v->dv[i] = 0.1f;     /* fits a float */
  }
}

static void tvals_free(tvals *v) {
  free(v->iv);
  free(v->dv);
  free(v->sv);
  free(v->null);
}

static void set_id(struct ArrowSchema *s, int id) {
  hs_error e = {0};
  if (id < 0) return;
  char buf[16];
  snprintf(buf, sizeof buf, "%d", id);
  const char *k = "PARQUET:field_id", *val = buf;
  CHECK_OK(hs_arrow_schema_set_metadata(s, &k, &val, 1, &e), &e);
}

/* The columns as one batch *b of schema *s (both owned by the caller). */
static void make_batch(const tcol *cols, const tvals *vals, size_t nc, size_t rows,
                       struct ArrowSchema *out_s, struct ArrowArray *out_b) {
  hs_error e = {0};
  struct ArrowSchema s;
  CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, (int64_t)nc, &e), &e);
  struct ArrowArray *arr = calloc(nc, sizeof *arr);
  for (size_t c = 0; c < nc; c++) {
    static const char *fmt[] = {"i", "l", "u", "f", "g", "z"};
    CHECK_OK(hs_arrow_schema_init(s.children[c], fmt[cols[c].kind], cols[c].name,
                                  ARROW_FLAG_NULLABLE, 0, &e),
             &e);
    set_id(s.children[c], cols[c].id);
    uint8_t *valid = hs_calloc(rows / 8 + 1, 1);
    int64_t nulls = 0;
    for (size_t i = 0; i < rows; i++) {
      if (vals[c].null[i])
        nulls++;
      else
        valid[i / 8] |= (uint8_t)(1u << (i % 8));
    }
    if (cols[c].kind == K_STR || cols[c].kind == K_BIN) {
      int32_t *off = hs_malloc((rows + 1) * sizeof *off);
      size_t total = 0;
      for (size_t i = 0; i < rows; i++) total += vals[c].null[i] ? 0 : strlen(vals[c].sv[i]);
      char *data = hs_malloc(total + 1);
      off[0] = 0;
      for (size_t i = 0; i < rows; i++) {
        size_t l = vals[c].null[i] ? 0 : strlen(vals[c].sv[i]);
        memcpy(data + off[i], vals[c].null[i] ? "" : vals[c].sv[i], l);
        off[i + 1] = off[i] + (int32_t)l;
      }
      CHECK_OK(hs_arrow_array_make_binary(&arr[c], (int64_t)rows, off, data, valid, nulls, &e), &e);
      continue;
    }
    size_t w = cols[c].kind == K_I32 || cols[c].kind == K_F32 ? 4 : 8;
    uint8_t *p = hs_calloc(rows + 1, w);
    for (size_t i = 0; i < rows; i++) {
      int32_t i32 = (int32_t)vals[c].iv[i];
      float f32 = (float)vals[c].dv[i];
      if (cols[c].kind == K_I32) memcpy(p + 4 * i, &i32, 4);
      if (cols[c].kind == K_I64) memcpy(p + 8 * i, &vals[c].iv[i], 8);
      if (cols[c].kind == K_F32) memcpy(p + 4 * i, &f32, 4);
      if (cols[c].kind == K_F64) memcpy(p + 8 * i, &vals[c].dv[i], 8);
    }
    CHECK_OK(hs_arrow_array_make_primitive(&arr[c], (int64_t)rows, p, valid, nulls, &e), &e);
  }
  CHECK_OK(hs_arrow_array_make_struct(out_b, (int64_t)rows, arr, (int64_t)nc, NULL, 0, &e), &e);
  *out_s = s;
  free(arr);
}

static void write_file(const char *path, const tcol *cols, const tvals *vals, size_t nc,
                       size_t rows) {
  hs_error e = {0};
  struct ArrowSchema s;
  struct ArrowArray b;
  make_batch(cols, vals, nc, rows, &s, &b);
  hs_parquet_write_options wo;
  hs_parquet_write_options_init(&wo);
  wo.row_group_rows_max = 700; /* several row groups, batches */
  hs_parquet_writer *w = NULL;
  CHECK_OK(hs_parquet_writer_open(path, &s, &wo, &w, &e), &e);
  if (w != NULL) {
    CHECK_OK(hs_parquet_writer_write(w, &b, &e), &e);
    CHECK_OK(hs_parquet_writer_close(w, &e), &e);
    hs_parquet_writer_free(w);
  }
  b.release(&b);
  s.release(&s);
}

/* The same rows through hs_table_eqdel_write (as two batches and an empty
 * one), its manifest record checked. */
static void write_eqdel(const char *path, const tcol *cols, const tvals *vals, size_t nc,
                        size_t rows, const int32_t *ids, const hs_iceberg_schema *schema) {
  hs_error e = {0};
  struct ArrowSchema s, s2, s3;
  struct ArrowArray b[3];
  size_t half = rows / 2;
  tvals second[4];
  for (size_t c = 0; c < nc; c++) {
    second[c] =
        (tvals){vals[c].iv + half, vals[c].dv + half, vals[c].sv + half, vals[c].null + half};
  }
  make_batch(cols, vals, nc, half, &s, &b[0]);
  make_batch(cols, second, nc, rows - half, &s2, &b[1]);
  make_batch(cols, vals, nc, 0, &s3, &b[2]);
  s2.release(&s2);
  s3.release(&s3);
  struct ArrowArrayStream st;
  CHECK_OK(hs_arrow_stream_from_batches(&s, b, 3, &st, &e), &e);
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_data_file df;
  CHECK_OK(
      hs_table_eqdel_write(path, "file:/recorded/x.parquet", ids, nc, schema, &st, &a, &df, &e),
      &e);
  CHECK(st.release == NULL); /* consumed */
  CHECK_EQ_INT(df.content, HS_ICE_CONTENT_EQUALITY_DELETES);
  CHECK(df.has_equality_ids && df.n_equality_ids == nc);
  for (size_t i = 0; i < nc && df.equality_ids != NULL; i++)
    CHECK_EQ_INT(df.equality_ids[i], ids[i]);
  CHECK_EQ_INT(df.record_count, rows);
  CHECK(df.file_path != NULL && strcmp(df.file_path, "file:/recorded/x.parquet") == 0);
  CHECK(df.file_format != NULL && strcmp(df.file_format, "PARQUET") == 0);
  CHECK(df.file_size_in_bytes > 0);
  CHECK_EQ_INT(df.n_metrics, nc);
  for (size_t i = 0; i < df.n_metrics; i++) {
    size_t nulls = 0;
    for (size_t c = 0; c < nc; c++) {
      if (ids[c] != df.metrics[i].field_id) continue;
      for (size_t r = 0; r < rows; r++) nulls += vals[c].null[r];
      CHECK(df.metrics[i].has_null_count && df.metrics[i].null_count == (int64_t)nulls);
    }
  }
  hs_arena_reset(&a);
}

/* The brute-force value equality: NULL = NULL, ints as int64, doubles as
 * Java's Double.compare == 0 (NaN = NaN, -0.0 != 0.0), floats through
 * float, strings by bytes. */
static bool same(int kind_a, const tvals *a, size_t i, int kind_b, const tvals *b, size_t j) {
  if (a->null[i] || b->null[j]) return a->null[i] && b->null[j];
  if (kind_a == K_STR) return strcmp(a->sv[i], b->sv[j]) == 0;
  if (kind_a == K_I32 || kind_a == K_I64) return a->iv[i] == b->iv[j];
  double x = kind_a == K_F32 ? (double)(float)a->dv[i] : a->dv[i];
  double y = kind_b == K_F32 ? (double)(float)b->dv[j] : b->dv[j];
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

/* An Iceberg schema of fields (name, id, type) in `a`. */
static hs_iceberg_schema make_schema(hs_arena *a, const char *const *names, const int *ids,
                                     const hs_iceberg_type_id *types, size_t n) {
  hs_iceberg_schema s;
  memset(&s, 0, sizeof s);
  s.root.id = HS_ICE_STRUCT;
  s.root.fields = hs_arena_alloc(a, n * sizeof *s.root.fields);
  s.root.n_fields = n;
  for (size_t i = 0; i < n; i++) {
    s.root.fields[i].id = ids[i];
    s.root.fields[i].name = names[i];
    s.root.fields[i].type.id = types[i];
  }
  return s;
}

/* Table fields: a long (1), s string (2), b long (3), d double (4),
 * c int (5: no data file has it). */
static const char *const F_NAMES[] = {"a", "s", "b", "d", "c"};
static const int F_IDS[] = {1, 2, 3, 4, 5};
static const hs_iceberg_type_id F_TYPES[] = {HS_ICE_LONG, HS_ICE_STRING, HS_ICE_LONG, HS_ICE_DOUBLE,
                                             HS_ICE_INT};

static char dir[256];

static void path_of(char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s.parquet", dir, name);
}

/* One randomized round: a data file (a as int32 or int64, d as float or
 * double, with or without field ids), 1-3 delete files on random key
 * column subsets, compared with the brute-force matcher. */
static void round_random(uint64_t *rng, int round, const hs_iceberg_schema *schema) {
  hs_error e = {0};
  bool ids = true; /* our writer stamps ids on every file (1..n when not given) */
  (void)round;
  size_t rows = 200 + hs_test_rand(rng) % 2500;
  tcol dc[4] = {{"a", ids ? 1 : -1, round % 2 ? K_I32 : K_I64},
                {"s", ids ? 2 : -1, K_STR},
                {"b", ids ? 3 : -1, K_I64},
                {"d", ids ? 4 : -1, round % 3 == 0 ? K_F32 : K_F64}};
  tvals dv[4];
  for (int c = 0; c < 4; c++) gen(rng, dc[c].kind, rows, &dv[c], 10);
  char data_path[512];
  path_of(data_path, sizeof data_path, "data");
  write_file(data_path, dc, dv, 4, rows);

  size_t n_d = 1 + hs_test_rand(rng) % 3;
  hs_table_eqdel *sets[3] = {0};
  int key_cols[3][4];
  size_t n_key[3], n_del[3];
  tvals delv[3][4];
  for (size_t k = 0; k < n_d; k++) {
    /* A random non-empty subset of the four columns, in random order. */
    int perm[4] = {0, 1, 2, 3};
    for (int i = 3; i > 0; i--) {
      int j = (int)(hs_test_rand(rng) % (uint64_t)(i + 1)), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    n_key[k] = 1 + hs_test_rand(rng) % 3;
    n_del[k] = hs_test_rand(rng) % 40;
    tcol kc[4];
    int32_t kid[4];
    for (size_t i = 0; i < n_key[k]; i++) {
      int c = perm[i];
      key_cols[k][i] = c;
      /* Delete files are written after the promotion: long and double. */
      int kind = dc[c].kind == K_I32 ? K_I64 : dc[c].kind == K_F32 ? K_F64 : dc[c].kind;
      kc[i] = (tcol){F_NAMES[c], ids ? F_IDS[c] : -1, kind};
      kid[i] = F_IDS[c];
      gen(rng, kind, n_del[k], &delv[k][i], 15);
      /* Floats the data file holds as float: delete values that are floats. */
      for (size_t r = 0; dc[c].kind == K_F32 && r < n_del[k]; r++)
        delv[k][i].dv[r] = (double)(float)delv[k][i].dv[r];
      /* Half the delete rows copy a data row's value (hits); duplicates follow. */
      for (size_t r = 0; r < n_del[k]; r++) {
        if (hs_test_rand(rng) % 2 == 0) continue;
        size_t src = hs_test_rand(rng) % rows;
        delv[k][i].null[r] = dv[c].null[src];
        delv[k][i].iv[r] = dv[c].iv[src] > INT32_MAX && dc[c].kind == K_I32 ? 0 : dv[c].iv[src];
        delv[k][i].dv[r] = dc[c].kind == K_F32 ? (double)(float)dv[c].dv[src] : dv[c].dv[src];
        delv[k][i].sv[r] = dv[c].sv[src];
      }
    }
    /* Whole rows of the data file, repeated: duplicates of real keys. */
    for (size_t r = 0; r + 1 < n_del[k]; r += 7) {
      size_t src = hs_test_rand(rng) % rows;
      for (size_t rep = 0; rep < 2; rep++) {
        for (size_t i = 0; i < n_key[k]; i++) {
          int c = key_cols[k][i];
          delv[k][i].null[r + rep] = dv[c].null[src];
          delv[k][i].iv[r + rep] = dv[c].iv[src];
          delv[k][i].dv[r + rep] =
              dc[c].kind == K_F32 ? (double)(float)dv[c].dv[src] : dv[c].dv[src];
          delv[k][i].sv[r + rep] = dv[c].sv[src];
        }
      }
    }
    char dp[512], name[32];
    snprintf(name, sizeof name, "del%zu", k);
    path_of(dp, sizeof dp, name);
    if (round % 2 == 0)
      write_eqdel(dp, kc, delv[k], n_key[k], n_del[k], kid, schema);
    else
      write_file(dp, kc, delv[k], n_key[k], n_del[k]);
    CHECK_OK(hs_table_eqdel_load(dp, kid, n_key[k], schema, &sets[k], &e), &e);
    unlink(dp); /* loaded; the next round writes it again */
    if (sets[k] == NULL) return;
    CHECK(hs_table_eqdel_count(sets[k]) <= n_del[k]);
  }
  roaring_bitmap_t *got = roaring_bitmap_create();
  CHECK_OK(
      hs_table_eqdel_apply((const hs_table_eqdel *const *)sets, n_d, data_path, schema, got, &e),
      &e);
  roaring_bitmap_t *want = roaring_bitmap_create();
  for (size_t row = 0; row < rows; row++) {
    bool del = false;
    for (size_t k = 0; k < n_d && !del; k++) {
      for (size_t r = 0; r < n_del[k] && !del; r++) {
        bool all = true;
        for (size_t i = 0; i < n_key[k] && all; i++) {
          int c = key_cols[k][i];
          int kk = dc[c].kind == K_I32 ? K_I64 : dc[c].kind == K_F32 ? K_F64 : dc[c].kind;
          all = same(dc[c].kind, &dv[c], row, kk, &delv[k][i], r);
        }
        del = all;
      }
    }
    if (del) roaring_bitmap_add(want, (uint32_t)row);
  }
  bool eq = roaring_bitmap_equals(got, want);
  CHECK(eq);
  if (!eq) {
    fprintf(stderr, "round %d: %llu deleted, %llu expected (%zu rows, %zu key sets)\n", round,
            (unsigned long long)roaring_bitmap_get_cardinality(got),
            (unsigned long long)roaring_bitmap_get_cardinality(want), rows, n_d);
  }
  roaring_bitmap_free(got);
  roaring_bitmap_free(want);
  for (size_t k = 0; k < n_d; k++) {
    hs_table_eqdel_free(sets[k]);
    for (size_t i = 0; i < n_key[k]; i++) tvals_free(&delv[k][i]);
  }
  for (int c = 0; c < 4; c++) tvals_free(&dv[c]);
}

/* Field c (id 5) is in no data file: NULL keys delete every row; with a
 * v3 initial-default of 7, key 7 does and NULL does not. */
static void test_absent_column(hs_arena *a) {
  hs_error e = {0};
  uint64_t rng = 7;
  tcol dc[1] = {{"a", 1, K_I64}};
  tvals dv[1];
  gen(&rng, K_I64, 100, &dv[0], 0);
  char data_path[512], del_null[512], del_7[512];
  path_of(data_path, sizeof data_path, "absent_data");
  path_of(del_null, sizeof del_null, "absent_null");
  path_of(del_7, sizeof del_7, "absent_7");
  write_file(data_path, dc, dv, 1, 100);
  tcol kc[1] = {{"c", 5, K_I32}};
  tvals kv[1];
  gen(&rng, K_I32, 1, &kv[0], 0);
  kv[0].null[0] = true;
  write_file(del_null, kc, kv, 1, 1);
  kv[0].null[0] = false;
  kv[0].iv[0] = 7;
  write_file(del_7, kc, kv, 1, 1);
  int32_t id = 5;
  hs_iceberg_schema s = make_schema(a, F_NAMES, F_IDS, F_TYPES, 5);
  hs_table_eqdel *dn = NULL, *d7 = NULL;
  CHECK_OK(hs_table_eqdel_load(del_null, &id, 1, &s, &dn, &e), &e);
  CHECK_OK(hs_table_eqdel_load(del_7, &id, 1, &s, &d7, &e), &e);
  roaring_bitmap_t *got = roaring_bitmap_create();
  CHECK_OK(hs_table_eqdel_apply((const hs_table_eqdel *const *)&dn, 1, data_path, &s, got, &e), &e);
  CHECK_EQ_INT(roaring_bitmap_get_cardinality(got), 100);
  roaring_bitmap_clear(got);
  CHECK_OK(hs_table_eqdel_apply((const hs_table_eqdel *const *)&d7, 1, data_path, &s, got, &e), &e);
  CHECK_EQ_INT(roaring_bitmap_get_cardinality(got), 0);
  /* v3: c has initial-default 7. */
  hs_iceberg_schema s3 = make_schema(a, F_NAMES, F_IDS, F_TYPES, 5);
  s3.root.fields[4].initial_default = "7";
  CHECK_OK(hs_table_eqdel_apply((const hs_table_eqdel *const *)&d7, 1, data_path, &s3, got, &e),
           &e);
  CHECK_EQ_INT(roaring_bitmap_get_cardinality(got), 100);
  roaring_bitmap_clear(got);
  CHECK_OK(hs_table_eqdel_apply((const hs_table_eqdel *const *)&dn, 1, data_path, &s3, got, &e),
           &e);
  CHECK_EQ_INT(roaring_bitmap_get_cardinality(got), 0);
  roaring_bitmap_free(got);
  hs_table_eqdel_free(dn);
  hs_table_eqdel_free(d7);
  tvals_free(&dv[0]);
  tvals_free(&kv[0]);
}

#define EXPECT_ERR(call, want, needle)       \
  do {                                       \
    memset(&e, 0, sizeof e);                 \
    hs_status st_ = (call);                  \
    expect_error(st_, (want), &e, (needle)); \
  } while (0)

static void expect_error(hs_status got, hs_status want, const hs_error *e, const char *needle) {
  CHECK_EQ_INT(got, want);
  CHECK(strstr(e->message, needle) != NULL);
  if (strstr(e->message, needle) == NULL) fprintf(stderr, "message: %s\n", e->message);
}

static void test_errors(hs_arena *a) {
  hs_error e = {0};
  uint64_t rng = 11;
  hs_iceberg_schema s = make_schema(a, F_NAMES, F_IDS, F_TYPES, 5);
  char p[512];
  path_of(p, sizeof p, "err_del");
  tcol kc[1] = {{"s", 2, K_STR}};
  tvals kv[1];
  gen(&rng, K_STR, 10, &kv[0], 0);
  write_file(p, kc, kv, 1, 10);
  tvals_free(&kv[0]);
  hs_table_eqdel *d = NULL;
  int32_t id_a = 1, id_s = 2, id_missing = 99, dup[2] = {2, 2};
  /* The key column is not in the delete file. */
  EXPECT_ERR(hs_table_eqdel_load(p, &id_a, 1, &s, &d, &e), HS_ERR_CORRUPT, p);
  CHECK(strstr(e.message, "'a'") != NULL);
  CHECK(d == NULL);
  EXPECT_ERR(hs_table_eqdel_load(p, &id_missing, 1, &s, &d, &e), HS_ERR_SCHEMA, p);
  EXPECT_ERR(hs_table_eqdel_load(p, dup, 2, &s, &d, &e), HS_ERR_CORRUPT, "twice");
  EXPECT_ERR(hs_table_eqdel_load(p, &id_s, 0, &s, &d, &e), HS_ERR_CORRUPT, p);
  /* The file's column for field 1 (a long) is a string: refused, not read as keys. */
  char ps[512];
  path_of(ps, sizeof ps, "err_type");
  tcol sc[1] = {{"a", 1, K_STR}};
  tvals sv[1];
  gen(&rng, K_STR, 10, &sv[0], 0);
  write_file(ps, sc, sv, 1, 10);
  tvals_free(&sv[0]);
  EXPECT_ERR(hs_table_eqdel_load(ps, &id_a, 1, &s, &d, &e), HS_ERR_SCHEMA, "stored as Arrow 'u'");
  CHECK(strstr(e.message, ps) != NULL);
  /* A nested field and a type that cannot be a key. */
  hs_iceberg_schema sn = make_schema(a, F_NAMES, F_IDS, F_TYPES, 5);
  sn.root.fields[1].type.id = HS_ICE_STRUCT;
  hs_iceberg_field *inner = hs_arena_alloc(a, sizeof *inner);
  inner->id = 77;
  inner->name = "x";
  inner->type.id = HS_ICE_INT;
  sn.root.fields[1].type.fields = inner;
  sn.root.fields[1].type.n_fields = 1;
  int32_t id_inner = 77;
  EXPECT_ERR(hs_table_eqdel_load(p, &id_inner, 1, &sn, &d, &e), HS_ERR_UNSUPPORTED, "nested");
  EXPECT_ERR(hs_table_eqdel_load(p, &id_s, 1, &sn, &d, &e), HS_ERR_UNSUPPORTED, "'s'");
  /* Keys that expand past the bound (here 0 + 32 x the file's size: 3,000
   * distinct 1,000-byte strings that compress well) are refused. */
  {
    size_t nb = 3000;
    char *big = malloc(nb * 1001);
    tcol bc[1] = {{"s", 2, K_STR}};
    tvals bv[1];
    gen(&rng, K_STR, nb, &bv[0], 0);
    for (size_t i = 0; i < nb; i++) {
      char *q = big + i * 1001;
      memset(q, 'x', 1000);
      snprintf(q + 990, 11, "%010zu", i);
      bv[0].sv[i] = q;
    }
    char pb[512];
    path_of(pb, sizeof pb, "big_keys");
    write_file(pb, bc, bv, 1, nb);
    setenv("HS_EQDEL_KEY_BYTES_BASE", "0", 1);
    EXPECT_ERR(hs_table_eqdel_load(pb, &id_s, 1, &s, &d, &e), HS_ERR_CORRUPT, "expand past");
    CHECK(strstr(e.message, pb) != NULL);
    CHECK(d == NULL);
    unsetenv("HS_EQDEL_KEY_BYTES_BASE");
    CHECK_OK(hs_table_eqdel_load(pb, &id_s, 1, &s, &d, &e), &e); /* under the real bound */
    CHECK_EQ_INT(hs_table_eqdel_count(d), nb);
    hs_table_eqdel_free(d);
    d = NULL;
    tvals_free(&bv[0]);
    free(big);
  }
  /* Missing and truncated files. */
  char missing[512];
  path_of(missing, sizeof missing, "no_such_file");
  memset(&e, 0, sizeof e);
  CHECK(hs_table_eqdel_load(missing, &id_s, 1, &s, &d, &e) != HS_OK);
  CHECK(strstr(e.message, missing) != NULL);
  size_t len = 0;
  char *bytes = hs_test_slurp(p, &len);
  char trunc[512];
  path_of(trunc, sizeof trunc, "truncated");
  FILE *f = fopen(trunc, "wb");
  if (f != NULL && bytes != NULL) {
    fwrite(bytes, 1, len - 9, f);
    fclose(f);
  }
  free(bytes);
  memset(&e, 0, sizeof e);
  CHECK(hs_table_eqdel_load(trunc, &id_s, 1, &s, &d, &e) != HS_OK);
  CHECK(strstr(e.message, trunc) != NULL);
  CHECK(d == NULL);
  /* Applying to a missing data file names it. */
  CHECK_OK(hs_table_eqdel_load(p, &id_s, 1, &s, &d, &e), &e);
  roaring_bitmap_t *bm = roaring_bitmap_create();
  memset(&e, 0, sizeof e);
  CHECK(hs_table_eqdel_apply((const hs_table_eqdel *const *)&d, 1, missing, &s, bm, &e) != HS_OK);
  CHECK(strstr(e.message, missing) != NULL);
  /* A read schema where the key is another type. */
  hs_iceberg_schema sl = make_schema(a, F_NAMES, F_IDS, F_TYPES, 5);
  sl.root.fields[1].type.id = HS_ICE_LONG;
  EXPECT_ERR(hs_table_eqdel_apply((const hs_table_eqdel *const *)&d, 1, p, &sl, bm, &e),
             HS_ERR_SCHEMA, "delete file");
  /* A data file whose column for the key is another type. */
  hs_table_eqdel *da = NULL;
  char pa[512];
  path_of(pa, sizeof pa, "err_del_a");
  tcol ac[1] = {{"a", 1, K_I64}};
  tvals av[1];
  gen(&rng, K_I64, 4, &av[0], 0);
  write_file(pa, ac, av, 1, 4);
  tvals_free(&av[0]);
  CHECK_OK(hs_table_eqdel_load(pa, &id_a, 1, &s, &da, &e), &e);
  EXPECT_ERR(hs_table_eqdel_apply((const hs_table_eqdel *const *)&da, 1, ps, &s, bm, &e),
             HS_ERR_SCHEMA, ps);
  hs_table_eqdel_free(da);
  roaring_bitmap_free(bm);
  hs_table_eqdel_free(d);
  hs_table_eqdel_free(NULL);
  /* The writer: an existing path, a column of another type, a wrong column
   * count; nothing is left behind, and the stream is consumed every time. */
  hs_arena wa;
  hs_arena_init(&wa);
  hs_iceberg_data_file df;
  struct ArrowSchema ws;
  struct ArrowArray wb;
  struct ArrowArrayStream stream;
  tcol strc[1] = {{"s", 2, K_STR}}, intc[1] = {{"s", 2, K_I32}};
  tvals wv[1];
  gen(&rng, K_STR, 5, &wv[0], 20);
  make_batch(strc, wv, 1, 5, &ws, &wb);
  CHECK_OK(hs_arrow_stream_from_batches(&ws, &wb, 1, &stream, &e), &e);
  EXPECT_ERR(hs_table_eqdel_write(p, "x", &id_s, 1, &s, &stream, &wa, &df, &e), HS_ERR_INVALID_ARG,
             "already exists");
  CHECK(stream.release == NULL);
  char wp[512];
  path_of(wp, sizeof wp, "written");
  make_batch(intc, wv, 1, 5, &ws, &wb);
  CHECK_OK(hs_arrow_stream_from_batches(&ws, &wb, 1, &stream, &e), &e);
  EXPECT_ERR(hs_table_eqdel_write(wp, "x", &id_s, 1, &s, &stream, &wa, &df, &e), HS_ERR_SCHEMA,
             "'s' (id 2)");
  CHECK(access(wp, F_OK) != 0);
  make_batch(strc, wv, 1, 5, &ws, &wb);
  CHECK_OK(hs_arrow_stream_from_batches(&ws, &wb, 1, &stream, &e), &e);
  int32_t two[2] = {2, 1};
  EXPECT_ERR(hs_table_eqdel_write(wp, "x", two, 2, &s, &stream, &wa, &df, &e), HS_ERR_SCHEMA,
             "2 key columns");
  CHECK(access(wp, F_OK) != 0);
  tvals_free(&wv[0]);
  hs_arena_reset(&wa);
}

/* hs_table_eqdel_schema: the newest schema holding the field gives its type. */
static void test_schema_pick(hs_arena *a) {
  hs_error e = {0};
  hs_iceberg_metadata m;
  memset(&m, 0, sizeof m);
  hs_iceberg_schema schemas[2];
  schemas[0] = make_schema(a, F_NAMES, F_IDS, F_TYPES, 5);
  schemas[0].schema_id = 0;
  schemas[0].root.fields[0].type.id = HS_ICE_INT;
  /* Schema 1: a promoted to long, c dropped. */
  schemas[1] = make_schema(a, F_NAMES, F_IDS, F_TYPES, 4);
  schemas[1].schema_id = 1;
  m.schemas = schemas;
  m.n_schemas = 2;
  m.current_schema_id = 1;
  int32_t ids[2] = {5, 1};
  hs_iceberg_schema out;
  CHECK_OK(hs_table_eqdel_schema(&m, ids, 2, a, &out, &e), &e);
  CHECK_EQ_INT(out.root.n_fields, 2);
  CHECK_EQ_INT(out.root.fields[0].type.id, HS_ICE_INT);
  CHECK_EQ_INT(out.root.fields[1].type.id, HS_ICE_LONG);
  int32_t bad = 42;
  memset(&e, 0, sizeof e);
  CHECK_EQ_INT(hs_table_eqdel_schema(&m, &bad, 1, a, &out, &e), HS_ERR_SCHEMA);
}

/* A file without field ids (parquet-testing's alltypes_plain.parquet, from
 * Impala) is matched by the schema's names: as a data file and as a delete
 * file. Its values, as pyarrow reads them: id [4,5,6,7,2,3,0,1], int_col
 * and string_col [0,1,0,1,...] (string_col binary), double_col [0.0, 10.1,
 * ...]. */
static void test_no_field_ids(hs_arena *a) {
  hs_error e = {0};
  const char *dir_c = getenv("HS_CONFORMANCE_DIR");
  char data[1024];
  snprintf(data, sizeof data, "%s/data/alltypes_plain.parquet",
           dir_c ? dir_c : "../shared/conformance/parquet-testing");
  CHECK(access(data, R_OK) == 0);
  if (access(data, R_OK) != 0) {
    fprintf(stderr, "missing %s (HS_CONFORMANCE_DIR)\n", data);
    return;
  }
  static const char *const names[] = {"id", "int_col", "string_col", "double_col"};
  static const int ids[] = {101, 102, 103, 104};
  static const hs_iceberg_type_id types[] = {HS_ICE_LONG, HS_ICE_LONG, HS_ICE_BINARY,
                                             HS_ICE_DOUBLE};
  hs_iceberg_schema s = make_schema(a, names, ids, types, 4);
  /* (int_col, string_col) = (1, "1"): rows 1, 3, 5, 7; (1, "0") matches none. */
  tcol kc[2] = {{"int_col", 102, K_I64}, {"string_col", 103, K_BIN}};
  tvals kv[2];
  uint64_t rng = 3;
  gen(&rng, K_I64, 2, &kv[0], 0);
  gen(&rng, K_BIN, 2, &kv[1], 0);
  kv[0].iv[0] = 1, kv[1].sv[0] = "1";
  kv[0].iv[1] = 1, kv[1].sv[1] = "0";
  char p[512];
  path_of(p, sizeof p, "noid_del");
  int32_t k2[2] = {102, 103};
  write_eqdel(p, kc, kv, 2, 2, k2, &s);
  hs_table_eqdel *d = NULL, *self = NULL, *byid = NULL;
  CHECK_OK(hs_table_eqdel_load(p, k2, 2, &s, &d, &e), &e);
  roaring_bitmap_t *bm = roaring_bitmap_create();
  CHECK_OK(hs_table_eqdel_apply((const hs_table_eqdel *const *)&d, 1, data, &s, bm, &e), &e);
  uint32_t want[] = {1, 3, 5, 7};
  roaring_bitmap_t *w = roaring_bitmap_of_ptr(4, want);
  CHECK(roaring_bitmap_equals(bm, w));
  /* The file as a delete file of its own double_col: both values, every row. */
  int32_t kd = 104, kid = 101;
  CHECK_OK(hs_table_eqdel_load(data, &kd, 1, &s, &self, &e), &e);
  CHECK_EQ_INT(hs_table_eqdel_count(self), 2);
  roaring_bitmap_clear(bm);
  CHECK_OK(hs_table_eqdel_apply((const hs_table_eqdel *const *)&self, 1, data, &s, bm, &e), &e);
  CHECK_EQ_INT(roaring_bitmap_get_cardinality(bm), 8);
  /* ids 6 and 0 (an int32 column read under a long field): rows 2 and 6. */
  tcol ic[1] = {{"id", 101, K_I64}};
  tvals iv[1];
  gen(&rng, K_I64, 2, &iv[0], 0);
  iv[0].iv[0] = 6, iv[0].iv[1] = 0;
  unlink(p);
  write_eqdel(p, ic, iv, 1, 2, &kid, &s);
  CHECK_OK(hs_table_eqdel_load(p, &kid, 1, &s, &byid, &e), &e);
  roaring_bitmap_clear(bm);
  const hs_table_eqdel *both[2] = {byid, d};
  CHECK_OK(hs_table_eqdel_apply(both, 2, data, &s, bm, &e), &e);
  uint32_t want2[] = {1, 2, 3, 5, 6, 7};
  roaring_bitmap_t *w2 = roaring_bitmap_of_ptr(6, want2);
  CHECK(roaring_bitmap_equals(bm, w2));
  roaring_bitmap_free(w);
  roaring_bitmap_free(w2);
  roaring_bitmap_free(bm);
  hs_table_eqdel_free(d);
  hs_table_eqdel_free(self);
  hs_table_eqdel_free(byid);
  for (int i = 0; i < 2; i++) tvals_free(&kv[i]);
  tvals_free(&iv[0]);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/hs_test_eqdel_XXXXXX");
  if (mkdtemp(dir) == NULL) return 1;
  hs_arena a;
  hs_arena_init(&a);
  hs_iceberg_schema schema = make_schema(&a, F_NAMES, F_IDS, F_TYPES, 5);
  uint64_t rng = 20261202;
  int rounds = getenv("HS_EQDEL_ROUNDS") ? atoi(getenv("HS_EQDEL_ROUNDS")) : 150;
  for (int r = 0; r < rounds; r++) round_random(&rng, r, &schema);
  test_absent_column(&a);
  test_errors(&a);
  test_schema_pick(&a);
  test_no_field_ids(&a);
  hs_arena_reset(&a);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return hs_test_finish("test_deletes_eq");
}
