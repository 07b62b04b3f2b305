/*
 * test_write_parallel.c — the Parquet writer's fast paths:
 *  - columns encoded on worker threads give the same bytes as a serial
 *    writer (HS_THREADS=1 vs 4), for whole row groups in one batch (direct
 *    mode), for row groups filled by several batches, with nulls, strings,
 *    booleans, variable and fixed-size lists, every codec we pool;
 *  - the dictionary probe: unique columns drop the dictionary, repetitive
 *    ones (including a 2K-distinct random column whose first 16K values are
 *    far from unique) keep it, booleans use it through the 1-byte map;
 *  - typed min/max statistics against a brute-force scan;
 *  - vectors of 24 values (repetition levels emitted per row without being
 *    stored) with a stretch of null rows that forces the stored path
 *    mid-page.
 * Every file is read back through our reader and compared value by value
 * with the source arrays. HS_TEST_ROWS scales the row count down (ASan).
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "hyperstream.h"
#include "parquet/parquet.h"

enum { C_ID, C_F64, C_STR, C_BOOL, C_MID, C_LIST, C_VEC, C_FB1, C_V24, C_N };
static const char *k_fmt[C_N] = {"l", "g", "u", "b", "l", "+l", "+w:4", "w:1", "+w:24"};
static const char *k_name[C_N] = {"id", "price", "cat", "flag", "mid", "lst", "vec", "fb1", "v24"};

static int64_t n_rows;
static uint8_t *valid;        /* nulls in price, cat, lst */
static int64_t *v_id, *v_mid; /* unique; 2000 distinct random */
static double *v_f64;
static int32_t *s_off;
static char *s_data;
static uint8_t *v_bool, *v_fb1; /* fb1: fixed_size_binary[1], 'a'..'e' */
static int32_t *l_off, *l_vals;
static float *vec_vals, *v24_vals; /* v24: null rows in [n/2, n/2 + 50) */
static uint8_t *v24_valid;

typedef struct tarr {
  struct ArrowArray a;
  const void *bufs[3];
  struct ArrowArray *kids[1];
} tarr;

static void noop_release(struct ArrowArray *a) {
  a->release = NULL;
}

static tarr cols[C_N], kid_list, kid_vec, kid_v24;
static struct ArrowArray *col_ptrs[C_N];

static void tarr_make(tarr *t, int64_t len, int nb, const void *v0, const void *v1,
                      const void *v2) {
  memset(t, 0, sizeof(*t));
  t->bufs[0] = v0;
  t->bufs[1] = v1;
  t->bufs[2] = v2;
  t->a.length = len;
  t->a.null_count = v0 ? -1 : 0;
  t->a.n_buffers = nb;
  t->a.buffers = t->bufs;
  t->a.release = noop_release;
}

static bool is_valid(int64_t i) {
  return (valid[i >> 3] >> (i & 7)) & 1;
}

static void fill(uint64_t seed) {
  uint64_t st = seed;
  int64_t n = n_rows;
  valid = calloc((size_t)n / 8 + 1, 1);
  v_bool = calloc((size_t)n / 8 + 1, 1);
  v_fb1 = malloc((size_t)n);
  v_id = malloc((size_t)n * 8);
  v_mid = malloc((size_t)n * 8);
  v_f64 = malloc((size_t)n * 8);
  s_off = malloc((size_t)(n + 1) * 4);
  s_data = malloc((size_t)n * 6);
  l_off = malloc((size_t)(n + 1) * 4);
  l_vals = malloc((size_t)n * 3 * 4);
  vec_vals = malloc((size_t)n * 4 * 4);
  v24_vals = malloc((size_t)n * 24 * 4);
  v24_valid = malloc((size_t)n / 8 + 1);
  memset(v24_valid, 0xff, (size_t)n / 8 + 1);
  int32_t so = 0, lo = 0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = hs_test_rand(&st);
    if (r % 11 != 0) valid[i >> 3] |= (uint8_t)(1 << (i & 7));
    if ((r >> 8) % 3 == 0) v_bool[i >> 3] |= (uint8_t)(1 << (i & 7));
    v_id[i] = i * 7 - 1000;
    v_fb1[i] = (uint8_t)('e' - (r >> 50) % 5);
    v_mid[i] = (int64_t)((r >> 16) % 2000) - 1000;
    v_f64[i] = (double)(int64_t)(r >> 11) / 9007199254740992.0 * 1000.0 - 3.0;
    if (i % 9973 == 5) v_f64[i] = NAN;
    s_off[i] = so;
    so += snprintf(s_data + so, 6, "c%u", (unsigned)((r >> 24) % 500));
    l_off[i] = lo;
    for (int k = 0; k < (int)((r >> 40) % 4); k++) l_vals[lo++] = (int32_t)(i + k);
    for (int k = 0; k < 4; k++) vec_vals[i * 4 + k] = (float)(i % 97) * 0.5f - (float)k;
    for (int k = 0; k < 24; k++)
      v24_vals[i * 24 + k] = (float)(int64_t)(hs_test_rand(&st) >> 40) * 1e-3f - 8000.0f;
    if (i % 7919 == 3) v24_vals[i * 24 + 5] = NAN;
    if (i >= n / 2 && i < n / 2 + 50) v24_valid[i >> 3] &= (uint8_t) ~(1 << (i & 7));
  }
  s_off[n] = so;
  l_off[n] = lo;
  tarr_make(&cols[C_ID], n, 2, NULL, v_id, NULL);
  tarr_make(&cols[C_F64], n, 2, valid, v_f64, NULL);
  tarr_make(&cols[C_STR], n, 3, valid, s_off, s_data);
  tarr_make(&cols[C_BOOL], n, 2, NULL, v_bool, NULL);
  tarr_make(&cols[C_MID], n, 2, NULL, v_mid, NULL);
  tarr_make(&cols[C_FB1], n, 2, NULL, v_fb1, NULL);
  tarr_make(&kid_list, lo, 2, NULL, l_vals, NULL);
  tarr_make(&cols[C_LIST], n, 2, valid, l_off, NULL);
  cols[C_LIST].kids[0] = &kid_list.a;
  cols[C_LIST].a.n_children = 1;
  cols[C_LIST].a.children = cols[C_LIST].kids;
  tarr_make(&kid_vec, n * 4, 2, NULL, vec_vals, NULL);
  tarr_make(&cols[C_VEC], n, 1, NULL, NULL, NULL);
  cols[C_VEC].kids[0] = &kid_vec.a;
  cols[C_VEC].a.n_children = 1;
  cols[C_VEC].a.children = cols[C_VEC].kids;
  tarr_make(&kid_v24, n * 24, 2, NULL, v24_vals, NULL);
  tarr_make(&cols[C_V24], n, 1, v24_valid, NULL, NULL);
  cols[C_V24].kids[0] = &kid_v24.a;
  cols[C_V24].a.n_children = 1;
  cols[C_V24].a.children = cols[C_V24].kids;
  for (int c = 0; c < C_N; c++) col_ptrs[c] = &cols[c].a;
}

static void make_schema(struct ArrowSchema *s) {
  hs_error err = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, C_N, &err), &err);
  for (int c = 0; c < C_N; c++) {
    int64_t flags =
        (c == C_F64 || c == C_STR || c == C_LIST || c == C_V24) ? ARROW_FLAG_NULLABLE : 0;
    int nk = (c == C_LIST || c == C_VEC || c == C_V24) ? 1 : 0;
    CHECK_OK(hs_arrow_schema_init(s->children[c], k_fmt[c], k_name[c], flags, nk, &err), &err);
    if (nk)
      CHECK_OK(hs_arrow_schema_init(s->children[c]->children[0], c == C_LIST ? "i" : "f", "item",
                                    c == C_LIST ? ARROW_FLAG_NULLABLE : 0, 0, &err),
               &err);
  }
}

/* Write rows in batches of `batch_rows` (a struct view over slices). */
static hs_status write_file(const char *path, const hs_parquet_write_options *o, int64_t batch_rows,
                            hs_error *err) {
  struct ArrowSchema s;
  make_schema(&s);
  hs_parquet_writer *w = NULL;
  hs_status st = hs_parquet_writer_open(path, &s, o, &w, err);
  for (int64_t at = 0; st == HS_OK && at < n_rows; at += batch_rows) {
    int64_t m = n_rows - at < batch_rows ? n_rows - at : batch_rows;
    struct ArrowArray b;
    const void *no_bufs[1] = {NULL};
    memset(&b, 0, sizeof(b));
    b.length = m;
    b.offset = at; /* children are whole arrays: the struct offset slices them */
    b.n_buffers = 1;
    b.buffers = no_bufs;
    b.n_children = C_N;
    b.children = col_ptrs;
    b.release = noop_release;
    st = hs_parquet_writer_write(w, &b, err);
  }
  if (st == HS_OK) st = hs_parquet_writer_close(w, err);
  hs_parquet_writer_free(w);
  s.release(&s);
  return st;
}

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)n + 1);
  *len = fread(b, 1, (size_t)n, f);
  fclose(f);
  return b;
}

/* Read the file back and compare every value with the source arrays. */
static void verify(const char *path) {
  hs_error err = {0};
  hs_parquet_reader *r = NULL;
  CHECK_OK(hs_parquet_reader_open(path, &r, &err), &err);
  if (!r) return;
  hs_parquet_read_options ro;
  hs_parquet_read_options_init(&ro);
  struct ArrowArrayStream in;
  struct ArrowSchema sch;
  struct ArrowArray *bs = NULL;
  size_t nb = 0;
  CHECK_OK(hs_parquet_reader_stream(r, &ro, &in, &err), &err);
  CHECK_OK(hs_arrow_stream_collect(&in, &sch, &bs, &nb, &err), &err);
  in.release(&in);
  int64_t row = 0, bad = 0;
  for (size_t b = 0; b < nb; b++) {
    struct ArrowArray *a = &bs[b];
    for (int64_t i = 0; i < a->length; i++, row++) {
      int64_t g = row;
      const struct ArrowArray *c;
      c = a->children[C_ID];
      bad += ((const int64_t *)c->buffers[1])[c->offset + i] != v_id[g];
      c = a->children[C_MID];
      bad += ((const int64_t *)c->buffers[1])[c->offset + i] != v_mid[g];
      c = a->children[C_F64];
      bad += hs_arrow_is_valid(c, i) != is_valid(g);
      if (is_valid(g)) {
        double x = ((const double *)c->buffers[1])[c->offset + i];
        bad += isnan(v_f64[g]) ? !isnan(x) : x != v_f64[g];
      }
      c = a->children[C_STR];
      bad += hs_arrow_is_valid(c, i) != is_valid(g);
      if (is_valid(g)) {
        const int32_t *o = (const int32_t *)c->buffers[1] + c->offset;
        int32_t len = o[i + 1] - o[i];
        bad += len != s_off[g + 1] - s_off[g] ||
               memcmp((const char *)c->buffers[2] + o[i], s_data + s_off[g], (size_t)len) != 0;
      }
      c = a->children[C_BOOL];
      bad += hs_arrow_is_valid(c, i) != true;
      int64_t j = c->offset + i;
      bad += (((const uint8_t *)c->buffers[1])[j >> 3] >> (j & 7) & 1) !=
             ((v_bool[g >> 3] >> (g & 7)) & 1);
      c = a->children[C_LIST];
      bad += hs_arrow_is_valid(c, i) != is_valid(g);
      if (is_valid(g)) {
        const int32_t *o = (const int32_t *)c->buffers[1] + c->offset;
        const struct ArrowArray *k = c->children[0];
        bad += o[i + 1] - o[i] != l_off[g + 1] - l_off[g];
        for (int32_t e = 0; e < o[i + 1] - o[i] && e < l_off[g + 1] - l_off[g]; e++)
          bad += ((const int32_t *)k->buffers[1])[k->offset + o[i] + e] != l_vals[l_off[g] + e];
      }
      c = a->children[C_FB1];
      bad += ((const uint8_t *)c->buffers[1])[c->offset + i] != v_fb1[g];
      c = a->children[C_V24];
      bool v24 = (v24_valid[g >> 3] >> (g & 7)) & 1;
      bad += hs_arrow_is_valid(c, i) != v24;
      if (v24) {
        const struct ArrowArray *kv = c->children[0];
        for (int e = 0; e < 24; e++) {
          float x = ((const float *)kv->buffers[1])[kv->offset + (c->offset + i) * 24 + e];
          float y = v24_vals[g * 24 + e];
          bad += !(x == y || (isnan(x) && isnan(y)));
        }
      }
      c = a->children[C_VEC];
      const struct ArrowArray *k = c->children[0];
      for (int e = 0; e < 4; e++)
        bad += ((const float *)k->buffers[1])[k->offset + (c->offset + i) * 4 + e] !=
               vec_vals[g * 4 + e];
    }
  }
  CHECK_EQ_INT(row, n_rows);
  CHECK_EQ_INT(bad, 0);
  hs_arrow_batches_free(bs, nb);
  if (sch.release) sch.release(&sch);
  hs_parquet_reader_free(r);
}

static bool has_dict(const hs_pq_file_metadata *md, int col) {
  for (uint32_t g = 0; g < md->n_row_groups; g++)
    if (!md->row_groups[g].columns[col].meta_data.has_dictionary_page_offset) return false;
  return md->n_row_groups > 0;
}

static void check_meta(const char *path) {
  hs_error err = {0};
  hs_parquet_reader *r = NULL;
  CHECK_OK(hs_parquet_reader_open(path, &r, &err), &err);
  if (!r) return;
  const hs_pq_file_metadata *md = hs_parquet_reader_metadata(r);
  /* Probe: unique ids and random doubles drop the dictionary (when the
   * chunk is big enough to be judged); 500 strings, 2000 ints and the
   * 1-byte values (direct map) keep it; booleans are always PLAIN. */
  if (md->row_groups[0].num_rows >= 16384 + 8) {
    CHECK(!has_dict(md, C_ID));
    CHECK(!has_dict(md, C_F64));
  }
  CHECK(has_dict(md, C_STR));
  CHECK(has_dict(md, C_MID));
  CHECK(has_dict(md, C_FB1));
  CHECK(!has_dict(md, C_BOOL));
  /* Statistics against brute force, per row group (C_ID, C_MID, C_F64). */
  int64_t first = 0;
  for (uint32_t g = 0; g < md->n_row_groups; g++) {
    int64_t nr = md->row_groups[g].num_rows;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    double flo = INFINITY, fhi = -INFINITY;
    uint8_t blo = 255, bhi = 0;
    for (int64_t i = first; i < first + nr; i++) {
      blo = v_fb1[i] < blo ? v_fb1[i] : blo;
      bhi = v_fb1[i] > bhi ? v_fb1[i] : bhi;
      lo = v_mid[i] < lo ? v_mid[i] : lo;
      hi = v_mid[i] > hi ? v_mid[i] : hi;
      if (is_valid(i) && !isnan(v_f64[i])) {
        flo = v_f64[i] < flo ? v_f64[i] : flo;
        fhi = v_f64[i] > fhi ? v_f64[i] : fhi;
      }
    }
    const hs_pq_statistics *sm = &md->row_groups[g].columns[C_MID].meta_data.statistics;
    const hs_pq_statistics *sf = &md->row_groups[g].columns[C_F64].meta_data.statistics;
    const hs_pq_statistics *si = &md->row_groups[g].columns[C_ID].meta_data.statistics;
    CHECK(sm->has_min_value && sm->has_max_value && sf->has_min_value && si->has_max_value);
    if (sm->has_min_value && sm->has_max_value) {
      CHECK_EQ_INT((int64_t)hs_load_u64le(sm->min_value.data), lo);
      CHECK_EQ_INT((int64_t)hs_load_u64le(sm->max_value.data), hi);
    }
    if (sf->has_min_value && sf->has_max_value) {
      double a, b;
      memcpy(&a, sf->min_value.data, 8);
      memcpy(&b, sf->max_value.data, 8);
      CHECK(a == flo && b == fhi);
    }
    if (si->has_min_value && si->has_max_value) {
      CHECK_EQ_INT((int64_t)hs_load_u64le(si->min_value.data), v_id[first]);
      CHECK_EQ_INT((int64_t)hs_load_u64le(si->max_value.data), v_id[first + nr - 1]);
    }
    /* Float statistics of the 24-value vectors (SSE path), NaNs skipped. */
    float vlo = INFINITY, vhi = -INFINITY;
    for (int64_t i = first; i < first + nr; i++) {
      if (!((v24_valid[i >> 3] >> (i & 7)) & 1)) continue;
      for (int e = 0; e < 24; e++) {
        float x = v24_vals[i * 24 + e];
        if (x != x) continue;
        vlo = x < vlo ? x : vlo;
        vhi = x > vhi ? x : vhi;
      }
    }
    const hs_pq_statistics *sv = &md->row_groups[g].columns[C_V24].meta_data.statistics;
    CHECK(sv->has_min_value && sv->has_max_value);
    if (sv->has_min_value && sv->has_max_value && sv->min_value.len == 4) {
      float a, b;
      memcpy(&a, sv->min_value.data, 4);
      memcpy(&b, sv->max_value.data, 4);
      CHECK(a == vlo && b == vhi);
    }
    const hs_pq_statistics *sb = &md->row_groups[g].columns[C_FB1].meta_data.statistics;
    CHECK(sb->has_min_value && sb->has_max_value);
    if (sb->has_min_value && sb->has_max_value && sb->min_value.len == 1 && sb->max_value.len == 1)
      CHECK(sb->min_value.data[0] == blo && sb->max_value.data[0] == bhi);
    first += nr;
  }
  hs_parquet_reader_free(r);
}

static void run_case(const char *dir, const char *label, hs_codec codec, int64_t rg_rows,
                     int64_t batch_rows) {
  char p1[512], p4[512];
  snprintf(p1, sizeof p1, "%s/%s_t1.parquet", dir, label);
  snprintf(p4, sizeof p4, "%s/%s_t4.parquet", dir, label);
  hs_parquet_write_options o;
  hs_parquet_write_options_init(&o);
  o.compression = codec;
  o.row_group_rows_max = rg_rows;
  o.page_bytes_max = 64 << 10; /* several pages per chunk */
  hs_error err = {0};
  setenv("HS_THREADS", "1", 1);
  CHECK_OK(write_file(p1, &o, batch_rows, &err), &err);
  setenv("HS_THREADS", "4", 1);
  CHECK_OK(write_file(p4, &o, batch_rows, &err), &err);
  unsetenv("HS_THREADS");
  size_t n1 = 0, n4 = 0;
  uint8_t *b1 = slurp(p1, &n1), *b4 = slurp(p4, &n4);
  CHECK(b1 && b4 && n1 == n4 && n1 > 0 && memcmp(b1, b4, n1) == 0);
  if (!(b1 && b4 && n1 == n4 && memcmp(b1, b4, n1) == 0))
    fprintf(stderr, "  %s: serial %zu bytes, parallel %zu bytes differ\n", label, n1, n4);
  free(b1);
  free(b4);
  verify(p4);
  check_meta(p4);
  unlink(p1);
  unlink(p4);
}

int main(void) {
  const char *env = getenv("HS_TEST_ROWS");
  n_rows = env && atoll(env) > 0 ? atoll(env) : 60000;
  fill(20261130);
  char dir[] = "/tmp/hs_test_write_parallel_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  /* Direct mode: one batch holds whole row groups. */
  run_case(dir, "direct_zstd", HS_CODEC_ZSTD, n_rows / 2 + 1, n_rows);
  /* Row groups filled by several batches (the table append's shape). */
  run_case(dir, "accum_zstd", HS_CODEC_ZSTD, n_rows, n_rows / 5 + 3);
  run_case(dir, "accum_none", HS_CODEC_UNCOMPRESSED, n_rows, n_rows / 3 + 1);
  run_case(dir, "accum_snappy", HS_CODEC_SNAPPY, n_rows / 3, n_rows / 4 + 7);
  /* Small batches stay serial; the output must not care either way. */
  run_case(dir, "small", HS_CODEC_ZSTD, n_rows, 1000);
  rmdir(dir);
  return hs_test_finish("test_write_parallel");
}
