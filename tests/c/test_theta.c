/*
 * test_theta.c — src/index/theta_sketch.c and src/table/lineage.c's column
 * fill. MurmurHash3 x64_128 against vectors computed by Apache DataSketches'
 * Java MurmurHash3.hash (seeds 9001 and 0, inputs of 1..18, 29 and 40 bytes:
 * every tail length, one and two blocks); the seed hash DataSketches writes
 * for seed 9001 (0x93cc); exact-mode estimates equal a brute-force distinct
 * count of random values (with repeats and empty values, which are not
 * counted); estimation-mode estimates of 50,000 distinct values within 5 %
 * (3.2 standard errors at k = 4096); every serialization parses back with
 * the same estimate, and its truncations and bit flips are errors or valid
 * sketches, never a crash (also run under ASan/UBSan). The lineage fill:
 * stored values where non-null, else first_row_id + position (contiguous
 * or listed rows) or the data sequence number; no first_row_id: NULL; and
 * on a v3 table of three appends with deletion vectors (few deleted rows:
 * read whole and dropped per batch; most deleted: a row selection), every
 * scan path (hs_table_scan, the query scan unfiltered in 97-row batches and
 * filtered) gives each row _row_id = its id (appends assign ids in order)
 * and the sequence number of its append.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hs_table_fixture.h"
#include "hs_test.h"
#include "index/theta_sketch.h"
#include "table/lineage.h"

static const struct {
  size_t len;
  uint64_t h1, h2, h1_seed0;
} vectors[] = {
    {1, UINT64_C(0x07d0803c66013ec8), UINT64_C(0x927863c2eefd6912), UINT64_C(0x7ace5c908374fe16)},
    {2, UINT64_C(0x8a76f34b94ba228e), UINT64_C(0x93fe09f601ee2a70), UINT64_C(0xddf2dacce216c6f7)},
    {3, UINT64_C(0x6148d5f7e9fa9f31), UINT64_C(0xe244dcbd8bf37616), UINT64_C(0x6e3febcaf3b53dce)},
    {4, UINT64_C(0x8d622b39117ff3d3), UINT64_C(0xeedcd07f4e325306), UINT64_C(0x5e68331eda7ca11b)},
    {5, UINT64_C(0xf881d863407a2f28), UINT64_C(0x50a1f8380fcb893c), UINT64_C(0x6b8a68abd141edde)},
    {6, UINT64_C(0x49b74b8bcdcaf832), UINT64_C(0xef4f7964855ca44d), UINT64_C(0x0dd04b9a78e6c476)},
    {7, UINT64_C(0x1013feb799187bbd), UINT64_C(0x019c1e1081f09831), UINT64_C(0xe277ac6b700d5492)},
    {8, UINT64_C(0xbf8e21c08ba28952), UINT64_C(0x3875e7c73aff51c3), UINT64_C(0x8e6056328613078e)},
    {9, UINT64_C(0x117438b6b6525d3f), UINT64_C(0xd6eab8e8c9c5d67b), UINT64_C(0x7f01458a0eca6ff7)},
    {10, UINT64_C(0xf0a056ef7349be73), UINT64_C(0xd31944f3cb3438ab), UINT64_C(0xa77bdd6f04c8e2ea)},
    {11, UINT64_C(0x2f6042e0418a4ab7), UINT64_C(0xa86f67d3e0d2e949), UINT64_C(0xfcff2d713927dc62)},
    {12, UINT64_C(0xad8d785ba4c3267a), UINT64_C(0x3bc1d865119a254d), UINT64_C(0x773ae702e3a07475)},
    {13, UINT64_C(0xb2476d9924a8e364), UINT64_C(0xca2b5682bfac3a64), UINT64_C(0xf55fee097cc87161)},
    {14, UINT64_C(0xb8a30cd7993c5bb2), UINT64_C(0x7805efc0a17a8ae5), UINT64_C(0x285b77890a7fb45a)},
    {15, UINT64_C(0x3ec2f7d2537bde15), UINT64_C(0x8f98748b97693ee4), UINT64_C(0x44c1a5c6a4b8986b)},
    {16, UINT64_C(0xa64150397d8a946d), UINT64_C(0xb2973adb5a43cb26), UINT64_C(0x23d3b0ab94c30bfa)},
    {17, UINT64_C(0x92c3540ae3a7d54c), UINT64_C(0xd3fe284abe908955), UINT64_C(0x05d02b803709866c)},
    {18, UINT64_C(0x81f5cdb5c57a2c66), UINT64_C(0x703efdbb5f01f016), UINT64_C(0xe556a004d6f2f86a)},
    {29, UINT64_C(0x5fc30c98f922aa41), UINT64_C(0xa8c1beddaf64d97d), UINT64_C(0x63ae367942cff0f6)},
    {40, UINT64_C(0x8bf51a47bef9840d), UINT64_C(0xc23c13574e110caf), UINT64_C(0xcb25a36c7c3d8da5)},
};

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void roundtrip(hs_theta_sketch *s, double want) {
  hs_buf b;
  hs_buf_init(&b);
  hs_error e = {0};
  CHECK_OK(hs_theta_serialize(s, &b, &e), &e);
  double est = -1;
  int64_t n = -1, theta = 0;
  CHECK_OK(hs_theta_parse(b.data, b.len, &est, &n, &theta, &e), &e);
  CHECK(est == want);
  CHECK(theta == s->theta);
  /* Damage: every truncation and some bit flips are refused or valid. */
  for (size_t cut = 0; cut < b.len; cut += 1 + b.len / 64) {
    hs_error e2 = {0};
    CHECK(hs_theta_parse(b.data, cut, &est, &n, &theta, &e2) != HS_OK);
    CHECK(e2.message[0] != '\0');
  }
  for (size_t i = 0; i < b.len && i < 64; i++) {
    b.data[i] ^= 0x10;
    hs_error e2 = {0};
    if (hs_theta_parse(b.data, b.len, &est, &n, &theta, &e2) == HS_OK)
      CHECK(isfinite(est) && est >= 0);
    b.data[i] ^= 0x10;
  }
  hs_buf_free(&b);
}

static void test_hash(void) {
  for (size_t v = 0; v < sizeof vectors / sizeof *vectors; v++) {
    uint8_t b[64];
    size_t len = vectors[v].len;
    for (size_t i = 0; i < len; i++) b[i] = (uint8_t)(i * 7 + len);
    uint64_t h[2];
    hs_murmur3_x64_128(b, len, 9001, h);
    CHECK(h[0] == vectors[v].h1 && h[1] == vectors[v].h2);
    hs_murmur3_x64_128(b, len, 0, h);
    CHECK(h[0] == vectors[v].h1_seed0);
  }
  CHECK(hs_theta_seed_hash(9001) == 0x93cc);
}

static void test_counts(void) {
  uint64_t rng = 3;
  int sizes[] = {0, 1, 2, 100, 3000, 4096, 4097, 9000, 50000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    int distinct = sizes[si];
    hs_theta_sketch s;
    hs_error e = {0};
    CHECK_OK(hs_theta_init(&s, HS_THETA_NOMINAL_DEFAULT, &e), &e);
    /* values: random 8-byte keys drawn from `distinct` ones, each at least
     * once, plus empty values (not counted) */
    uint64_t *keys = malloc(((size_t)distinct + 1) * sizeof *keys);
    for (int i = 0; i < distinct; i++) keys[i] = hs_test_rand(&rng);
    for (int i = 0; i < distinct; i++) {
      CHECK_OK(hs_theta_update(&s, &keys[i], 8, &e), &e);
      uint64_t again = keys[hs_test_rand(&rng) % (uint64_t)distinct];
      CHECK_OK(hs_theta_update(&s, &again, 8, &e), &e);
      if (i % 50 == 0) CHECK_OK(hs_theta_update(&s, "", 0, &e), &e);
    }
    qsort(keys, (size_t)distinct, sizeof *keys, cmp_u64);
    int truth = 0;
    for (int i = 0; i < distinct; i++) truth += i == 0 || keys[i] != keys[i - 1];
    double est = hs_theta_estimate(&s);
    if (truth <= HS_THETA_NOMINAL_DEFAULT)
      CHECK(est == (double)truth);
    else
      CHECK(fabs(est - truth) <= 0.05 * truth);
    roundtrip(&s, hs_theta_estimate(&s));
    free(keys);
    hs_theta_free(&s);
  }
  hs_theta_sketch s;
  hs_error e = {0};
  CHECK(hs_theta_init(&s, 1000, &e) == HS_ERR_INVALID_ARG);
}

static void test_lineage(void) {
  hs_error e = {0};
  int64_t vals[5] = {100, 0, 102, 0, 104};
  uint8_t valid = 0x15; /* rows 0, 2, 4 stored */
  const void *bufs[2] = {&valid, vals};
  struct ArrowArray stored = {.length = 5, .null_count = 2, .n_buffers = 2, .buffers = bufs};
  int64_t rows[5] = {3, 9, 10, 11, 40};
  hs_lineage_pos pos = {.first_row_id = 1000, .data_seq = 7, .rows = rows, .set = true};
  struct ArrowArray out;
  CHECK_OK(hs_lineage_column(HS_LINEAGE_ROW_ID_COL, &stored, &pos, 5, &out, &e), &e);
  const int64_t *o = out.buffers[1];
  CHECK(o[0] == 100 && o[1] == 1009 && o[2] == 102 && o[3] == 1011 && o[4] == 104);
  CHECK(out.null_count == 0);
  out.release(&out);
  CHECK_OK(hs_lineage_column(HS_LINEAGE_SEQ_COL, &stored, &pos, 5, &out, &e), &e);
  o = out.buffers[1];
  CHECK(o[0] == 100 && o[1] == 7 && o[3] == 7);
  out.release(&out);
  pos.rows = NULL;
  pos.first = 20;
  CHECK_OK(hs_lineage_column(HS_LINEAGE_ROW_ID_COL, NULL, &pos, 5, &out, &e), &e);
  o = out.buffers[1];
  for (int i = 0; i < 5; i++) CHECK(o[i] == 1020 + i);
  out.release(&out);
  pos.first_row_id = -1; /* no first_row_id: only stored values */
  CHECK_OK(hs_lineage_column(HS_LINEAGE_ROW_ID_COL, &stored, &pos, 5, &out, &e), &e);
  CHECK(out.null_count == 2);
  const uint8_t *ov = out.buffers[0];
  CHECK(ov != NULL && ov[0] == 0x15);
  out.release(&out);
}

/* Check every row of `st` (id, _row_id, _last_updated_sequence_number). */
static int64_t check_stream(struct ArrowArrayStream *st, const int64_t *seq_of_block) {
  int64_t rows = 0;
  for (;;) {
    struct ArrowArray b;
    CHECK(st->get_next(st, &b) == 0);
    if (b.release == NULL) break;
    CHECK(b.n_children == 3);
    const int64_t *id = (const int64_t *)b.children[0]->buffers[1] + b.children[0]->offset;
    const int64_t *rid = (const int64_t *)b.children[1]->buffers[1] + b.children[1]->offset;
    const int64_t *seq = (const int64_t *)b.children[2]->buffers[1] + b.children[2]->offset;
    CHECK(b.children[1]->null_count == 0 && b.children[2]->null_count == 0);
    for (int64_t i = 0; i < b.length; i++) {
      CHECK(rid[i] == id[i]);
      CHECK(seq[i] == seq_of_block[id[i] / 1000]);
    }
    rows += b.length;
    b.release(&b);
  }
  st->release(st);
  return rows;
}

static void test_table_scans(void) {
  char *root = hs_test_temp_root("lineage");
  hs_error e = {0};
  struct ArrowSchema s;
  make_schema(&s);
  hs_table_options o;
  hs_table_options_init(&o);
  o.format_version = 3;
  hs_table *t = NULL;
  CHECK_OK(hs_table_create(root, &s, &o, &t, &e), &e);
  s.release(&s);
  if (t == NULL) return;
  for (int k = 0; k < 3; k++) append_rows(t, 1000 * k, 1000);
  /* File 0: few rows deleted (k = 3: 1/13); file 1: most (id % 1000 >= 100). */
  const char *dels[] = {"id < 1000 AND k = 3", "id >= 1100 AND id < 2000"};
  hs_row_change c = {.what = "delete", .snapshot_id = -1, .deletes = dels, .n_deletes = 2};
  hs_row_change_result r;
  CHECK_OK(hs_table_change_rows(t, &c, &r, &e), &e);
  int64_t live = 3000 - r.rows_deleted;
  const int64_t seq[3] = {1, 2, 3};
  const char *cols[] = {"id", HS_LINEAGE_ROW_ID, HS_LINEAGE_SEQ};
  struct ArrowArrayStream st;
  CHECK_OK(hs_table_scan(t, -1, cols, 3, &st, &e), &e);
  CHECK(check_stream(&st, seq) == live);
  hs_scan_options so;
  hs_scan_options_init(&so);
  so.columns = cols;
  so.n_columns = 3;
  so.batch_rows_max = 97;
  CHECK_OK(hs_table_scan_query(t, &so, &st, &e), &e);
  CHECK(check_stream(&st, seq) == live);
  so.filter = "x > 3";
  CHECK_OK(hs_table_scan_query(t, &so, &st, &e), &e);
  CHECK(check_stream(&st, seq) > 0);
  so.filter = "_row_id > 3"; /* lineage filters (test_lineage_filters.py checks the rows) */
  CHECK_OK(hs_table_scan_query(t, &so, &st, &e), &e);
  int64_t above = check_stream(&st, seq);
  CHECK(above > 0 && above < live);
  hs_table_free(t);
  free(root);
}

int main(void) {
  test_hash();
  test_table_scans();
  test_counts();
  test_lineage();
  return hs_test_finish("test_theta");
}
