/*
 * test_writer.c — the Parquet writer: every supported Arrow type, nulls and
 * sliced arrays, lists and fixed-size lists, every codec, data page v1/v2,
 * each encoding override, dictionary fallback (PLAIN, or DELTA for integers),
 * v2 pages stored uncompressed when the codec hardly helps, tiny pages and row groups,
 * page CRCs. Files are read back through our reader and compared value by
 * value; the footer is checked for statistics and page indexes.
 * (Differential checks against pyarrow and DuckDB live in tests/python.)
 */
#include <math.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "hyperstream.h"
#include "parquet/compress.h"
#include "parquet/metadata.h"
#include "parquet/parquet.h"

#define N 2000

/* ----------------------------------------------------- array fixtures */

typedef struct tarr {
  struct ArrowArray a;
  const void *bufs[3];
  struct ArrowArray *kids[1];
} tarr;

static void noop_release(struct ArrowArray *a) {
  a->release = NULL;
}

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

enum {
  C_I8,
  C_U16,
  C_I32,
  C_U32,
  C_I64,
  C_U64,
  C_F16,
  C_F32,
  C_F64,
  C_BOOL,
  C_STR,
  C_LSTR,
  C_BIN,
  C_FBIN,
  C_D32,
  C_D64,
  C_T32,
  C_T64,
  C_TS,
  C_TSN,
  C_DEC5,
  C_DEC20,
  C_LIST,
  C_FSL,
  C_COUNT
};

static const char *k_fmt[C_COUNT] = {
    "c", "S",   "i",   "I",   "l",   "L",   "e",       "f",    "g",     "b",      "u",  "U",
    "z", "w:3", "tdD", "tdm", "tts", "ttu", "tss:UTC", "tsn:", "d:5,2", "d:20,2", "+l", "+w:4"};
static const char *k_name[C_COUNT] = {"i8",  "u16", "i32", "u32", "i64",  "u64",   "f16", "f32",
                                      "f64", "b",   "s",   "ls",  "bin",  "fb",    "d32", "d64",
                                      "t32", "t64", "ts",  "tsn", "dec5", "dec20", "lst", "vec"};

/* Source data (N + 8 rows; batches are slices of it). */
static uint8_t valid[(N + 8) / 8 + 1];
static int8_t v_i8[N + 8];
static uint16_t v_u16[N + 8];
static int32_t v_i32[N + 8];
static uint32_t v_u32[N + 8];
static int64_t v_i64[N + 8];
static uint64_t v_u64[N + 8];
static uint16_t v_f16[N + 8];
static float v_f32[N + 8];
static double v_f64[N + 8];
static uint8_t v_bool[(N + 8) / 8 + 1];
static int32_t s_off[N + 9];
static int64_t ls_off[N + 9];
static char s_data[(N + 8) * 8];
static uint8_t v_fb[(N + 8) * 3];
static int32_t v_d32[N + 8];
static int64_t v_d64[N + 8];
static int32_t v_t32[N + 8];
static int64_t v_t64[N + 8];
static uint8_t v_dec[(N + 8) * 16];
static int32_t l_off[N + 9];
static int32_t l_vals[(N + 8) * 3];
static uint8_t l_valid[((N + 8) * 3) / 8 + 1];
static float fsl_vals[(N + 8) * 4];

static tarr cols[C_COUNT], kid_list, kid_fsl;
static struct ArrowArray *col_ptrs[C_COUNT];

static bool row_valid(int64_t i) {
  return (valid[i >> 3] >> (i & 7)) & 1;
}

static void fill_data(uint64_t seed) {
  uint64_t st = seed;
  memset(valid, 0, sizeof(valid));
  memset(v_bool, 0, sizeof(v_bool));
  memset(l_valid, 0, sizeof(l_valid));
  int32_t so = 0, lo = 0;
  for (int64_t i = 0; i < N + 8; i++) {
    uint64_t r = hs_test_rand(&st);
    if (r % 7 != 0) valid[i >> 3] |= (uint8_t)(1 << (i & 7));
    if ((r >> 8) & 1) v_bool[i >> 3] |= (uint8_t)(1 << (i & 7));
    v_i8[i] = (int8_t)(r >> 16);
    v_u16[i] = (uint16_t)(r >> 20);
    v_i32[i] = (int32_t)(i % 100) - 50;
    v_u32[i] = (uint32_t)(r >> 24);
    v_i64[i] = (int64_t)(r >> 1) - (int64_t)(r >> 2);
    v_u64[i] = r;
    v_f16[i] = (uint16_t)(0x3c00 + (i % 64)); /* 1.0 .. */
    v_f32[i] = i % 50 == 0 ? NAN : (float)((int64_t)(i % 31) - 15) / 4.0f;
    v_f64[i] = (double)(r % 100000) / 7.0;
    s_off[i] = so;
    ls_off[i] = so;
    int len = (int)(r % 7);
    for (int k = 0; k < len; k++) s_data[so++] = (char)('a' + (r >> (8 + 3 * k)) % 5);
    for (int k = 0; k < 3; k++) v_fb[i * 3 + k] = (uint8_t)(r >> (40 + 8 * k));
    v_d32[i] = (int32_t)(i - 1000);
    v_d64[i] = (int64_t)(i - 1000) * 86400000;
    v_t32[i] = (int32_t)(i % 86400);
    v_t64[i] = (int64_t)i * 1000003;
    int64_t dv = (int64_t)(r % 2000001) - 1000000; /* fits decimal(5..) when scaled? keep < 10^5 */
    dv %= 100000;
    for (int k = 0; k < 16; k++)
      v_dec[i * 16 + k] = (uint8_t)((uint64_t)dv >> (k < 8 ? 8 * k : 63));
    if (dv < 0)
      for (int k = 8; k < 16; k++) v_dec[i * 16 + k] = 0xff;
    else
      for (int k = 8; k < 16; k++) v_dec[i * 16 + k] = 0;
    l_off[i] = lo;
    int ll = (int)(r % 4);
    for (int k = 0; k < ll; k++) {
      l_vals[lo] = (int32_t)(i * 10 + k);
      if ((r >> (50 + k)) % 5 != 0) l_valid[lo >> 3] |= (uint8_t)(1 << (lo & 7));
      lo++;
    }
    for (int k = 0; k < 4; k++) fsl_vals[i * 4 + k] = (float)hs_test_rand(&st) / 1e19f;
  }
  s_off[N + 8] = so;
  ls_off[N + 8] = so;
  l_off[N + 8] = lo;
}

static void build_columns(int64_t len) {
  tarr_make(&cols[C_I8], len, 2, valid, v_i8, NULL);
  tarr_make(&cols[C_U16], len, 2, NULL, v_u16, NULL);
  tarr_make(&cols[C_I32], len, 2, NULL, v_i32, NULL);
  tarr_make(&cols[C_U32], len, 2, valid, v_u32, NULL);
  tarr_make(&cols[C_I64], len, 2, valid, v_i64, NULL);
  tarr_make(&cols[C_U64], len, 2, NULL, v_u64, NULL);
  tarr_make(&cols[C_F16], len, 2, valid, v_f16, NULL);
  tarr_make(&cols[C_F32], len, 2, valid, v_f32, NULL);
  tarr_make(&cols[C_F64], len, 2, NULL, v_f64, NULL);
  tarr_make(&cols[C_BOOL], len, 2, valid, v_bool, NULL);
  tarr_make(&cols[C_STR], len, 3, valid, s_off, s_data);
  tarr_make(&cols[C_LSTR], len, 3, NULL, ls_off, s_data);
  tarr_make(&cols[C_BIN], len, 3, valid, s_off, s_data);
  tarr_make(&cols[C_FBIN], len, 2, valid, v_fb, NULL);
  tarr_make(&cols[C_D32], len, 2, valid, v_d32, NULL);
  tarr_make(&cols[C_D64], len, 2, NULL, v_d64, NULL);
  tarr_make(&cols[C_T32], len, 2, NULL, v_t32, NULL);
  tarr_make(&cols[C_T64], len, 2, valid, v_t64, NULL);
  tarr_make(&cols[C_TS], len, 2, valid, v_t64, NULL);
  tarr_make(&cols[C_TSN], len, 2, NULL, v_t64, NULL);
  tarr_make(&cols[C_DEC5], len, 2, valid, v_dec, NULL);
  tarr_make(&cols[C_DEC20], len, 2, NULL, v_dec, NULL);
  tarr_make(&kid_list, l_off[N + 8], 2, l_valid, l_vals, NULL);
  tarr_make(&cols[C_LIST], len, 2, valid, l_off, NULL);
  cols[C_LIST].a.n_children = 1;
  cols[C_LIST].kids[0] = &kid_list.a;
  cols[C_LIST].a.children = cols[C_LIST].kids;
  tarr_make(&kid_fsl, (N + 8) * 4, 2, NULL, fsl_vals, NULL);
  tarr_make(&cols[C_FSL], len, 1, NULL, NULL, NULL);
  cols[C_FSL].a.n_children = 1;
  cols[C_FSL].kids[0] = &kid_fsl.a;
  cols[C_FSL].a.children = cols[C_FSL].kids;
  for (int c = 0; c < C_COUNT; c++) col_ptrs[c] = &cols[c].a;
}

static void make_batch(struct ArrowArray *b, const void **bufs, int64_t offset, int64_t len,
                       int ncols) {
  memset(b, 0, sizeof(*b));
  bufs[0] = NULL;
  b->length = len;
  b->offset = offset;
  b->n_buffers = 1;
  b->buffers = bufs;
  b->n_children = ncols;
  b->children = col_ptrs;
  b->release = noop_release;
}

static void make_schema(struct ArrowSchema *s, int ncols) {
  hs_error err = {0};
  CHECK_OK(hs_arrow_schema_init(s, "+s", "", 0, ncols, &err), &err);
  for (int c = 0; c < ncols; c++) {
    int64_t flags = (c == C_U16 || c == C_I32 || c == C_U64 || c == C_F64 || c == C_LSTR ||
                     c == C_D64 || c == C_T32 || c == C_TSN || c == C_DEC20 || c == C_FSL)
                        ? 0
                        : ARROW_FLAG_NULLABLE;
    int nk = (c == C_LIST || c == C_FSL) ? 1 : 0;
    CHECK_OK(hs_arrow_schema_init(s->children[c], k_fmt[c], k_name[c], flags, nk, &err), &err);
    if (c == C_LIST)
      CHECK_OK(hs_arrow_schema_init(s->children[c]->children[0], "i", "item", ARROW_FLAG_NULLABLE,
                                    0, &err),
               &err);
    if (c == C_FSL)
      CHECK_OK(hs_arrow_schema_init(s->children[c]->children[0], "f", "item", 0, 0, &err), &err);
  }
}

/* ------------------------------------------------------- verification */

static bool col_nullable(int c) {
  return !(c == C_U16 || c == C_I32 || c == C_U64 || c == C_F64 || c == C_LSTR || c == C_D64 ||
           c == C_T32 || c == C_TSN || c == C_DEC20 || c == C_FSL);
}

/* Expected integer value of source row i for the integer-like columns and
 * the byte width the reader returns them in (0 = not an integer column). */
static int expect_int(int c, int64_t i, int64_t *v) {
  switch (c) {
  case C_I8: *v = v_i8[i]; return 1;
  case C_U16: *v = v_u16[i]; return 2;
  case C_I32: *v = v_i32[i]; return 4;
  case C_U32: *v = v_u32[i]; return -4;
  case C_I64: *v = v_i64[i]; return 8;
  case C_U64: *v = (int64_t)v_u64[i]; return 8;
  case C_D32: *v = v_d32[i]; return 4;
  case C_D64: *v = v_d64[i] / 86400000; return 4;      /* read back as date32 days */
  case C_T32: *v = (int64_t)v_t32[i] * 1000; return 4; /* seconds became ms */
  case C_T64: *v = v_t64[i]; return 8;
  case C_TS: *v = v_t64[i] * 1000; return 8;
  case C_TSN: *v = v_t64[i]; return 8;
  default: return 0;
  }
}

static int64_t load_int(const struct ArrowArray *a, int width, int64_t j) {
  const uint8_t *p = (const uint8_t *)a->buffers[1];
  j += a->offset;
  switch (width) {
  case 1: return ((const int8_t *)p)[j];
  case 2: return ((const uint16_t *)p)[j];
  case 4: return ((const int32_t *)p)[j];
  case -4: return ((const uint32_t *)p)[j];
  default: return ((const int64_t *)p)[j];
  }
}

static int mismatches;

static void note_mismatch(int c, int64_t row, const char *what) {
  if (mismatches++ < 10)
    fprintf(stderr, "mismatch: column %s row %lld: %s\n", k_name[c], (long long)row, what);
}

/* Compare one column of a read batch against source rows first.. */
static void verify_column(int c, const struct ArrowArray *a, int64_t first) {
  for (int64_t r = 0; r < a->length; r++) {
    int64_t i = first + r;
    bool ev = col_nullable(c) ? row_valid(i) : true;
    if (hs_arrow_is_valid(a, r) != ev) {
      note_mismatch(c, i, "validity");
      continue;
    }
    if (!ev) continue;
    int64_t want;
    int w = expect_int(c, i, &want);
    int64_t j = a->offset + r;
    if (w != 0) {
      if (load_int(a, w, r) != want) note_mismatch(c, i, "integer value");
      continue;
    }
    switch (c) {
    case C_F32: {
      float got = ((const float *)a->buffers[1])[j];
      if (!(got == v_f32[i] || (isnan(got) && isnan(v_f32[i])))) note_mismatch(c, i, "float");
      break;
    }
    case C_F64:
      if (((const double *)a->buffers[1])[j] != v_f64[i]) note_mismatch(c, i, "double");
      break;
    case C_F16:
      if (((const uint16_t *)a->buffers[1])[j] != v_f16[i]) note_mismatch(c, i, "half");
      break;
    case C_BOOL: {
      const uint8_t *b = (const uint8_t *)a->buffers[1];
      if (((b[j >> 3] >> (j & 7)) & 1) != ((v_bool[i >> 3] >> (i & 7)) & 1))
        note_mismatch(c, i, "bool");
      break;
    }
    case C_STR:
    case C_LSTR:
    case C_BIN: {
      /* large_string reads back as "U" (ARROW:schema restores it): 64-bit offsets. */
      int64_t b0, b1;
      if (c == C_LSTR) {
        const int64_t *o = (const int64_t *)a->buffers[1];
        b0 = o[j];
        b1 = o[j + 1];
      } else {
        const int32_t *o = (const int32_t *)a->buffers[1];
        b0 = o[j];
        b1 = o[j + 1];
      }
      const char *d = (const char *)a->buffers[2];
      if (b1 - b0 != s_off[i + 1] - s_off[i] ||
          memcmp(d + b0, s_data + s_off[i], (size_t)(b1 - b0)) != 0)
        note_mismatch(c, i, "bytes");
      break;
    }
    case C_FBIN:
      if (memcmp((const uint8_t *)a->buffers[1] + j * 3, v_fb + i * 3, 3) != 0)
        note_mismatch(c, i, "fixed binary");
      break;
    case C_DEC5:
    case C_DEC20:
      if (memcmp((const uint8_t *)a->buffers[1] + j * 16, v_dec + i * 16, 16) != 0)
        note_mismatch(c, i, "decimal");
      break;
    case C_LIST: {
      const int32_t *o = (const int32_t *)a->buffers[1];
      const struct ArrowArray *k = a->children[0];
      if (o[j + 1] - o[j] != l_off[i + 1] - l_off[i]) {
        note_mismatch(c, i, "list length");
        break;
      }
      for (int32_t e = 0; e < o[j + 1] - o[j]; e++) {
        int64_t src = l_off[i] + e, dst = o[j] + e;
        bool sv = (l_valid[src >> 3] >> (src & 7)) & 1;
        if (hs_arrow_is_valid(k, dst) != sv ||
            (sv && ((const int32_t *)k->buffers[1])[k->offset + dst] != l_vals[src]))
          note_mismatch(c, i, "list element");
      }
      break;
    }
    case C_FSL: {
      const struct ArrowArray *k = a->children[0];
      const float *f = (const float *)k->buffers[1];
      if (memcmp(f + k->offset + j * 4, fsl_vals + i * 4, 16) != 0) note_mismatch(c, i, "vector");
      break;
    }
    default: break;
    }
  }
}

/* Read `path` back and compare with source rows [first, first + n). */
static void verify_file(const char *path, int ncols, int64_t first, int64_t n) {
  hs_error err = {0};
  hs_parquet_reader *r = NULL;
  CHECK_OK(hs_parquet_reader_open(path, &r, &err), &err);
  if (!r) return;
  CHECK_EQ_INT(hs_parquet_reader_num_rows(r), n);
  struct ArrowArrayStream s;
  memset(&s, 0, sizeof(s));
  CHECK_OK(hs_parquet_reader_stream(r, NULL, &s, &err), &err);
  if (s.release == NULL) {
    hs_parquet_reader_free(r);
    return;
  }
  struct ArrowSchema sch;
  CHECK(s.get_schema(&s, &sch) == 0);
  CHECK_EQ_INT(sch.n_children, ncols);
  if (ncols > C_FSL) CHECK(strcmp(sch.children[C_FSL]->format, "+w:4") == 0);
  sch.release(&sch);
  int64_t row = first;
  mismatches = 0;
  for (;;) {
    struct ArrowArray b;
    memset(&b, 0, sizeof(b));
    if (s.get_next(&s, &b) != 0) {
      CHECK(!"get_next failed");
      fprintf(stderr, "%s\n", s.get_last_error(&s));
      break;
    }
    if (b.release == NULL) break;
    for (int c = 0; c < ncols && c < b.n_children; c++) verify_column(c, b.children[c], row);
    row += b.length;
    b.release(&b);
  }
  CHECK_EQ_INT(row - first, n);
  CHECK_EQ_INT(mismatches, 0);
  s.release(&s);
  hs_parquet_reader_free(r);
}

/* Write source rows [first, first + n) in batches of `batch` rows. */
static hs_status write_file(const char *path, const hs_parquet_write_options *o, int ncols,
                            int64_t first, int64_t n, int64_t batch, hs_error *err) {
  struct ArrowSchema s;
  make_schema(&s, ncols);
  build_columns(N + 8);
  hs_parquet_writer *w = NULL;
  hs_status st = hs_parquet_writer_open(path, &s, o, &w, err);
  for (int64_t at = first; st == HS_OK && at < first + n; at += batch) {
    struct ArrowArray b;
    const void *bufs[1];
    int64_t len = batch < first + n - at ? batch : first + n - at;
    make_batch(&b, bufs, at, len, ncols);
    st = hs_parquet_writer_write(w, &b, err);
  }
  if (st == HS_OK) st = hs_parquet_writer_close(w, err);
  hs_parquet_writer_free(w);
  s.release(&s);
  return st;
}

static const hs_pq_file_metadata *open_md(const char *path, hs_parquet_reader **r) {
  hs_error err = {0};
  *r = NULL;
  CHECK_OK(hs_parquet_reader_open(path, r, &err), &err);
  return *r ? hs_parquet_reader_metadata(*r) : NULL;
}

/* ------------------------------------------------------- page CRCs */

/* hs_pq_crc32 (carry-less multiplication where the CPU has it) against
 * zlib's crc32 on every length 0..300 at four alignments, continued, and
 * on large buffers. */
static void test_crc32(void) {
  static uint8_t buf[(1 << 20) + 64];
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < sizeof buf; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    buf[i] = (uint8_t)x;
  }
  CHECK(hs_pq_crc32(0, "123456789", 9) == 0xCBF43926u);
  int bad = 0;
  for (size_t n = 0; n <= 300; n++)
    for (size_t a = 0; a < 4; a++) {
      uint32_t seed = (uint32_t)(n * 2654435761u);
      bad += hs_pq_crc32(seed, buf + a, n) != hs_pq_crc32_portable(seed, buf + a, n);
      bad += hs_pq_crc32(hs_pq_crc32(0, buf + a, n), buf + a + n, 200) !=
             hs_pq_crc32_portable(0, buf + a, n + 200);
    }
  for (size_t n = 1000; n < sizeof buf - 64; n = n * 3 + 17)
    bad += hs_pq_crc32(7, buf + n % 61, n) != hs_pq_crc32_portable(7, buf + n % 61, n);
  CHECK_EQ_INT(bad, 0);
}

/* Read `path` whole (rows NULL) or a selection; the stream's error, if
 * any, into msg. */
static hs_status read_back(const char *path, const int64_t *rows, size_t n_rows, char *msg,
                           size_t cap) {
  hs_error err = {0};
  hs_parquet_reader *r = NULL;
  msg[0] = '\0';
  hs_status st = hs_parquet_reader_open(path, &r, &err);
  hs_parquet_read_options o;
  hs_parquet_read_options_init(&o);
  o.rows = rows;
  o.n_rows = n_rows;
  struct ArrowArrayStream s;
  memset(&s, 0, sizeof s);
  if (st == HS_OK) st = hs_parquet_reader_stream(r, &o, &s, &err);
  if (st != HS_OK) snprintf(msg, cap, "%s", err.message);
  while (st == HS_OK) {
    struct ArrowArray b;
    memset(&b, 0, sizeof b);
    if (s.get_next(&s, &b) != 0) {
      snprintf(msg, cap, "%s", s.get_last_error(&s));
      st = HS_ERR_CORRUPT;
      break;
    }
    if (b.release == NULL) break;
    b.release(&b);
  }
  if (s.release) s.release(&s);
  hs_parquet_reader_free(r);
  return st;
}

/* Pages written with the default options carry the CRC of their bytes as
 * stored (dictionary pages, data pages v1 and v2, raw or compressed); a
 * flipped byte in a page is HS_ERR_CORRUPT naming the file, row group,
 * column, page offset and both CRCs -- for whole reads and for row
 * selections (gathered in place when the page is raw). */
static void test_page_crc(const char *dir) {
  static const hs_codec codecs[] = {HS_CODEC_UNCOMPRESSED, HS_CODEC_ZSTD};
  for (int v = 1; v <= 2; v++)
    for (int k = 0; k < 2; k++) {
      char path[512];
      snprintf(path, sizeof(path), "%s/crc_v%d_%d.parquet", dir, v, k);
      hs_parquet_write_options o;
      hs_parquet_write_options_init(&o);
      CHECK(o.write_page_crc == 1);
      o.data_page_version = v;
      o.compression = codecs[k];
      o.page_bytes_max = 4096;
      hs_error err = {0};
      CHECK_OK(write_file(path, &o, C_COUNT, 0, N, 700, &err), &err);
      verify_file(path, C_COUNT, 0, N);
      FILE *f = fopen(path, "rb");
      if (f == NULL) continue;
      static uint8_t file[1 << 20];
      size_t len = fread(file, 1, sizeof file, f);
      fclose(f);
      hs_parquet_reader *r;
      const hs_pq_file_metadata *md = open_md(path, &r);
      if (md == NULL) continue;
      /* Walk every chunk's pages: each has a CRC, and it is right. */
      int pages = 0, dict_pages = 0, wrong = 0;
      uint64_t flip_at = 0, flip_page = 0;
      hs_arena arena;
      hs_arena_init(&arena);
      for (uint32_t g = 0; g < md->n_row_groups; g++)
        for (uint32_t c = 0; c < md->row_groups[g].n_columns; c++) {
          const hs_pq_column_meta *m = &md->row_groups[g].columns[c].meta_data;
          uint64_t off = (uint64_t)(m->has_dictionary_page_offset ? m->dictionary_page_offset
                                                                  : m->data_page_offset);
          uint64_t end = off + (uint64_t)m->total_compressed_size;
          while (off < end && off < len) {
            hs_pq_page_header ph;
            size_t used = 0;
            hs_error pe = {0};
            if (hs_pq_page_header_parse(file + off, len - off, &arena, &ph, &used, &pe) != HS_OK) {
              wrong++;
              break;
            }
            size_t body = (size_t)ph.compressed_page_size;
            pages++;
            dict_pages += ph.type == HS_PQ_DICTIONARY_PAGE;
            wrong += !ph.has_crc || (uint32_t)ph.crc != hs_pq_crc32(0, file + off + used, body);
            if (c == C_I64 && flip_at == 0 && ph.type != HS_PQ_DICTIONARY_PAGE && body > 8) {
              flip_page = off;
              flip_at = off + used + body / 2;
            }
            off += used + body;
          }
        }
      hs_arena_reset(&arena);
      hs_parquet_reader_free(r);
      CHECK(pages > 20 && dict_pages > 0);
      CHECK_EQ_INT(wrong, 0);
      CHECK(flip_at > 0);
      if (flip_at == 0) continue;
      file[flip_at] ^= 0x10;
      f = fopen(path, "wb");
      if (f == NULL) continue;
      CHECK(fwrite(file, 1, len, f) == len);
      fclose(f);
      int64_t rows[N / 3 + 1];
      size_t n = 0;
      for (int64_t i = 0; i < N; i += 3) rows[n++] = i;
      for (int sel = 0; sel < 2; sel++) {
        char msg[1024], at[64];
        CHECK(read_back(path, sel ? rows : NULL, sel ? n : 0, msg, sizeof msg) == HS_ERR_CORRUPT);
        snprintf(at, sizeof at, "page at offset %llu", (unsigned long long)flip_page);
        CHECK(strncmp(msg, path, strlen(path)) == 0);
        CHECK(strstr(msg, "row group 0: column i64: data page") != NULL);
        CHECK(strstr(msg, at) != NULL && strstr(msg, "page CRC mismatch") != NULL);
        if (strstr(msg, "page CRC mismatch") == NULL) fprintf(stderr, "got: %s\n", msg);
      }
    }
}

/* ------------------------------------------------------------- tests */

static void test_defaults(const char *dir) {
  char path[512];
  snprintf(path, sizeof(path), "%s/all_types.parquet", dir);
  hs_parquet_write_options o;
  hs_parquet_write_options_init(&o);
  hs_error err = {0};
  CHECK_OK(write_file(path, &o, C_COUNT, 3, N, 700, &err), &err);
  verify_file(path, C_COUNT, 3, N);
  hs_parquet_reader *r;
  const hs_pq_file_metadata *md = open_md(path, &r);
  if (md) {
    CHECK_EQ_INT(md->n_row_groups, 1);
    CHECK_EQ_INT(md->n_column_orders, C_COUNT);
    const hs_pq_column_chunk *cc = &md->row_groups[0].columns[C_I32];
    CHECK(cc->has_column_index && cc->has_offset_index);
    CHECK(cc->meta_data.has_dictionary_page_offset);
    CHECK(cc->meta_data.statistics.has_min_value);
    CHECK_EQ_INT((int32_t)hs_load_u32le(cc->meta_data.statistics.min_value.data), -50);
    CHECK_EQ_INT((int32_t)hs_load_u32le(cc->meta_data.statistics.max_value.data), 49);
    bool kv = false;
    for (uint32_t i = 0; i < md->n_key_value_metadata; i++)
      if (strcmp(md->key_value_metadata[i].key, "hyperstream:fixed_size_list") == 0) kv = true;
    CHECK(kv);
  }
  hs_parquet_reader_free(r);
}

static void test_options(const char *dir) {
  static const hs_codec codecs[] = {HS_CODEC_UNCOMPRESSED, HS_CODEC_SNAPPY, HS_CODEC_GZIP,
                                    HS_CODEC_ZSTD, HS_CODEC_LZ4_RAW};
  char path[512];
  for (int v = 1; v <= 2; v++)
    for (size_t k = 0; k < sizeof(codecs) / sizeof(codecs[0]); k++) {
      snprintf(path, sizeof(path), "%s/opt_v%d_c%d.parquet", dir, v, (int)codecs[k]);
      hs_parquet_write_options o;
      hs_parquet_write_options_init(&o);
      o.data_page_version = v;
      o.compression = codecs[k];
      o.page_bytes_max = 512;     /* many pages */
      o.row_group_rows_max = 333; /* several row groups, sliced batches */
      o.write_page_crc = k % 2;
      o.dictionary_bytes_max = 64; /* fallback */
      hs_error err = {0};
      CHECK_OK(write_file(path, &o, C_COUNT, 5, N - 5, 250, &err), &err);
      verify_file(path, C_COUNT, 5, N - 5);
    }
}

/* Batches larger than a row group: full row groups are written column by
 * column straight to the file (pages drained early), the rest buffered. */
static void test_direct(const char *dir) {
  char path[512];
  for (int v = 1; v <= 2; v++) {
    snprintf(path, sizeof(path), "%s/direct_v%d.parquet", dir, v);
    hs_parquet_write_options o;
    hs_parquet_write_options_init(&o);
    o.data_page_version = v;
    o.row_group_rows_max = 400;
    o.page_bytes_max = 300;
    hs_error err = {0};
    CHECK_OK(write_file(path, &o, C_COUNT, 1, N, 1500, &err), &err);
    verify_file(path, C_COUNT, 1, N);
    hs_parquet_reader *r;
    const hs_pq_file_metadata *md = open_md(path, &r);
    if (md) {
      CHECK_EQ_INT(md->n_row_groups, 5);
      /* The vector column gave up its dictionary: no dictionary page. */
      CHECK(!md->row_groups[0].columns[C_FSL].meta_data.has_dictionary_page_offset);
    }
    hs_parquet_reader_free(r);
  }
}

static void test_encodings(const char *dir) {
  static const char *names[] = {"i32", "i64", "f32", "f64", "s",     "bin",
                                "u32", "fb",  "ls",  "lst", "dec20", "f16"};
  static const hs_encoding encs[] = {
      HS_ENCODING_DELTA_BINARY_PACKED, HS_ENCODING_DELTA_BINARY_PACKED,
      HS_ENCODING_BYTE_STREAM_SPLIT, HS_ENCODING_BYTE_STREAM_SPLIT,
      HS_ENCODING_DELTA_LENGTH_BYTE_ARRAY, HS_ENCODING_DELTA_BYTE_ARRAY, HS_ENCODING_PLAIN,
      HS_ENCODING_BYTE_STREAM_SPLIT, HS_ENCODING_RLE_DICTIONARY, HS_ENCODING_DELTA_BINARY_PACKED,
      /* FIXED_LEN_BYTE_ARRAY columns */
      HS_ENCODING_DELTA_BYTE_ARRAY, HS_ENCODING_DELTA_BYTE_ARRAY};
  for (int v = 1; v <= 2; v++) {
    char path[512];
    snprintf(path, sizeof(path), "%s/enc_v%d.parquet", dir, v);
    hs_parquet_write_options o;
    hs_parquet_write_options_init(&o);
    o.data_page_version = v;
    o.page_bytes_max = 1000;
    o.encoding_columns = names;
    o.encodings = encs;
    o.n_encodings = sizeof(names) / sizeof(names[0]);
    hs_error err = {0};
    CHECK_OK(write_file(path, &o, C_COUNT, 0, N, N, &err), &err);
    verify_file(path, C_COUNT, 0, N);
    hs_parquet_reader *r;
    const hs_pq_file_metadata *md = open_md(path, &r);
    if (md) {
      /* FLBA columns really are DELTA_BYTE_ARRAY. */
      static const int flba[] = {C_F16, C_DEC20};
      for (int f = 0; f < 2; f++) {
        const hs_pq_column_meta *m = &md->row_groups[0].columns[flba[f]].meta_data;
        bool delta = false;
        for (uint32_t k = 0; k < m->n_encodings; k++)
          delta |= m->encodings[k] == HS_PQ_ENC_DELTA_BYTE_ARRAY;
        CHECK(m->type == HS_PQ_FIXED_LEN_BYTE_ARRAY && delta);
      }
    }
    hs_parquet_reader_free(r);
  }
  /* Invalid override: DELTA_BINARY_PACKED on a string column. */
  hs_parquet_write_options o;
  hs_parquet_write_options_init(&o);
  static const char *bad_name[] = {"s"};
  static const hs_encoding bad_enc[] = {HS_ENCODING_DELTA_BINARY_PACKED};
  o.encoding_columns = bad_name;
  o.encodings = bad_enc;
  o.n_encodings = 1;
  hs_error err = {0};
  char path[512];
  snprintf(path, sizeof(path), "%s/bad_enc.parquet", dir);
  CHECK_EQ_INT(write_file(path, &o, C_COUNT, 0, 10, 10, &err), HS_ERR_INVALID_ARG);
  CHECK(access(path, F_OK) != 0);
}

static void test_errors(const char *dir) {
  char path[512];
  snprintf(path, sizeof(path), "%s/unsupported.parquet", dir);
  struct ArrowSchema s;
  hs_error err = {0};
  CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 1, &err), &err);
  CHECK_OK(hs_arrow_schema_init(s.children[0], "+m", "m", 0, 0, &err), &err);
  hs_parquet_writer *w = NULL;
  CHECK_EQ_INT(hs_parquet_writer_open(path, &s, NULL, &w, &err), HS_ERR_UNSUPPORTED);
  CHECK(strstr(err.message, "'m'") != NULL);
  CHECK(w == NULL);
  s.release(&s);
  hs_parquet_writer_free(NULL);

  /* A writer freed without close removes its file. */
  make_schema(&s, 3);
  memset(&err, 0, sizeof(err));
  CHECK_OK(hs_parquet_writer_open(path, &s, NULL, &w, &err), &err);
  CHECK(access(path, F_OK) == 0);
  hs_parquet_writer_free(w);
  CHECK(access(path, F_OK) != 0);
  s.release(&s);
}

/* Dictionary-encoded columns (top level or as a list element) are refused:
 * writing their indices would silently lose the values. */
static void test_dictionary_refused(const char *dir) {
  char path[512];
  snprintf(path, sizeof(path), "%s/dict.parquet", dir);
  for (int nested = 0; nested <= 1; nested++) {
    struct ArrowSchema s, dict;
    hs_error err = {0};
    CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 2, &err), &err);
    CHECK_OK(hs_arrow_schema_init(s.children[0], "i", "ok", ARROW_FLAG_NULLABLE, 0, &err), &err);
    struct ArrowSchema *target = s.children[1];
    if (nested) {
      CHECK_OK(hs_arrow_schema_init(s.children[1], "+l", "cat", ARROW_FLAG_NULLABLE, 1, &err),
               &err);
      target = s.children[1]->children[0];
      CHECK_OK(hs_arrow_schema_init(target, "c", "item", ARROW_FLAG_NULLABLE, 0, &err), &err);
    } else {
      CHECK_OK(hs_arrow_schema_init(target, "c", "cat", ARROW_FLAG_NULLABLE, 0, &err), &err);
    }
    CHECK_OK(hs_arrow_schema_init(&dict, "u", NULL, ARROW_FLAG_NULLABLE, 0, &err), &err);
    CHECK_OK(hs_arrow_schema_set_dictionary(target, &dict, &err), &err);
    hs_parquet_writer *w = NULL;
    memset(&err, 0, sizeof(err));
    CHECK_EQ_INT(hs_parquet_writer_open(path, &s, NULL, &w, &err), HS_ERR_UNSUPPORTED);
    CHECK(w == NULL);
    CHECK(strstr(err.message, nested ? "'cat.list.element'" : "'cat'") != NULL);
    CHECK(strstr(err.message, "dictionary-encoded") != NULL);
    CHECK(strstr(err.message, "'u'") != NULL);
    CHECK(access(path, F_OK) != 0);
    s.release(&s);
  }
}

/* The table writer's layout: data page v2, INT32/INT64 columns that give
 * up their dictionary as DELTA_BINARY_PACKED, and pages the codec shrinks
 * by less than compress_min_saving_pct stored uncompressed. Every v2 page
 * is walked: a page marked uncompressed has equal sizes; a compressed one
 * saved at least the percentage on its values (levels are never
 * compressed in v2); both kinds occur. */
static void test_layout(const char *dir) {
  char path[512];
  snprintf(path, sizeof(path), "%s/layout.parquet", dir);
  hs_parquet_write_options o;
  hs_parquet_write_options_init(&o);
  o.data_page_version = 2;
  o.delta_fallback = 1;
  o.compress_min_saving_pct = 12;
  o.page_bytes_max = 2000;
  o.dictionary_bytes_max = 64; /* every column falls back */
  hs_error err = {0};
  CHECK_OK(write_file(path, &o, C_COUNT, 2, N, 900, &err), &err);
  verify_file(path, C_COUNT, 2, N);
  size_t n = 0;
  char *bytes = hs_test_slurp(path, &n);
  hs_parquet_reader *r;
  const hs_pq_file_metadata *md = open_md(path, &r);
  CHECK(bytes != NULL && md != NULL);
  int raw_pages = 0, z_pages = 0;
  hs_arena a;
  hs_arena_init(&a);
  for (uint32_t g = 0; md && bytes && g < md->n_row_groups; g++)
    for (int c = 0; c < C_COUNT; c++) {
      const hs_pq_column_meta *m = &md->row_groups[g].columns[c].meta_data;
      bool delta = false;
      for (uint32_t k = 0; k < m->n_encodings; k++)
        delta |= m->encodings[k] == HS_PQ_ENC_DELTA_BINARY_PACKED;
      if (c == C_I32 || c == C_I64 || c == C_D64) CHECK(delta);
      if (c == C_F64 || c == C_STR) CHECK(!delta);
      int64_t at = m->has_dictionary_page_offset ? m->dictionary_page_offset : m->data_page_offset;
      int64_t end = at + m->total_compressed_size;
      while (at < end && end <= (int64_t)n) {
        hs_pq_page_header ph;
        size_t used = 0;
        if (hs_pq_page_header_parse((const uint8_t *)bytes + at, (size_t)(end - at), &a, &ph, &used,
                                    &err) != HS_OK) {
          CHECK_OK(err.status, &err);
          break;
        }
        if (ph.type == HS_PQ_DATA_PAGE_V2) {
          int64_t lv = ph.data_page_v2.definition_levels_byte_length +
                       ph.data_page_v2.repetition_levels_byte_length;
          int64_t vraw = ph.uncompressed_page_size - lv, vz = ph.compressed_page_size - lv;
          if (ph.data_page_v2.is_compressed) {
            CHECK(vz * 100 <= vraw * 88);
            z_pages++;
            CHECK(c != C_BOOL); /* booleans are never compressed */
          } else {
            CHECK_EQ_INT(ph.compressed_page_size, ph.uncompressed_page_size);
            raw_pages++;
          }
        } else {
          CHECK(ph.type == HS_PQ_DICTIONARY_PAGE);
        }
        at += (int64_t)used + ph.compressed_page_size;
      }
      CHECK_EQ_INT(at, end);
    }
  CHECK(raw_pages > 0 && z_pages > 0);
  hs_arena_reset(&a);
  hs_parquet_reader_free(r);
  free(bytes);
  /* Out of range. */
  o.compress_min_saving_pct = 101;
  CHECK_EQ_INT(write_file(path, &o, C_COUNT, 0, 10, 10, &err), HS_ERR_INVALID_ARG);
}

static void test_empty(const char *dir) {
  char path[512];
  snprintf(path, sizeof(path), "%s/empty.parquet", dir);
  hs_error err = {0};
  CHECK_OK(write_file(path, NULL, C_COUNT, 0, 0, 1, &err), &err);
  verify_file(path, C_COUNT, 0, 0);
}

/* Struct columns: s = struct<a: int32 (nullable), in: struct<b: string>
 * (nullable), c: int64 (required)> (nullable), NULLs at every level, the
 * struct array sliced (its offset applies to every member), written in
 * batches and row groups of odd sizes; read back value by value. */
#define SN 700
static void test_structs(const char *dir) {
  char path[512];
  snprintf(path, sizeof(path), "%s/structs.parquet", dir);
  static uint8_t s_valid[SN / 8 + 2], a_valid[SN / 8 + 2], in_valid[SN / 8 + 2];
  static int32_t a_vals[SN], b_off[SN + 1];
  static int64_t c_vals[SN];
  static char b_data[SN * 4];
  memset(s_valid, 0, sizeof s_valid);
  memset(a_valid, 0, sizeof a_valid);
  memset(in_valid, 0, sizeof in_valid);
  int32_t bo = 0;
  for (int i = 0; i < SN; i++) {
    if (i % 7 != 3) s_valid[i / 8] |= (uint8_t)(1u << (i % 8));
    if (i % 5 != 1) a_valid[i / 8] |= (uint8_t)(1u << (i % 8));
    if (i % 3 != 2) in_valid[i / 8] |= (uint8_t)(1u << (i % 8));
    a_vals[i] = i * 3 - 100;
    c_vals[i] = (int64_t)i * 1000003;
    b_off[i] = bo;
    int len = i % 4;
    for (int k = 0; k < len; k++) b_data[bo++] = (char)('a' + (i + k) % 26);
  }
  b_off[SN] = bo;
  hs_error err = {0};
  struct ArrowSchema sch;
  CHECK_OK(hs_arrow_schema_init(&sch, "+s", "", 0, 1, &err), &err);
  struct ArrowSchema *st = sch.children[0];
  hs_arrow_schema_release(st);
  CHECK_OK(hs_arrow_schema_init(st, "+s", "s", ARROW_FLAG_NULLABLE, 3, &err), &err);
  hs_arrow_schema_release(st->children[0]);
  CHECK_OK(hs_arrow_schema_init(st->children[0], "i", "a", ARROW_FLAG_NULLABLE, 0, &err), &err);
  hs_arrow_schema_release(st->children[1]);
  CHECK_OK(hs_arrow_schema_init(st->children[1], "+s", "in", ARROW_FLAG_NULLABLE, 1, &err), &err);
  hs_arrow_schema_release(st->children[1]->children[0]);
  CHECK_OK(
      hs_arrow_schema_init(st->children[1]->children[0], "u", "b", ARROW_FLAG_NULLABLE, 0, &err),
      &err);
  hs_arrow_schema_release(st->children[2]);
  CHECK_OK(hs_arrow_schema_init(st->children[2], "l", "c", 0, 0, &err), &err);

  /* Members start at row 0; the struct arrays are sliced by `off`. */
  const int64_t off = 11, n = SN - 40;
  tarr a, b, in, c, sa;
  tarr_make(&a, SN, 2, a_valid, a_vals, NULL);
  tarr_make(&b, SN, 3, NULL, b_off, b_data);
  tarr_make(&in, SN, 1, in_valid, NULL, NULL);
  in.a.n_children = 1;
  in.kids[0] = &b.a;
  in.a.children = in.kids;
  tarr_make(&c, SN, 2, NULL, c_vals, NULL);
  struct ArrowArray *skids[3] = {&a.a, &in.a, &c.a};
  tarr_make(&sa, n, 1, s_valid, NULL, NULL);
  sa.a.offset = off;
  sa.a.n_children = 3;
  sa.a.children = skids;

  hs_parquet_write_options o;
  hs_parquet_write_options_init(&o);
  o.row_group_rows_max = 97;
  o.page_bytes_max = 300;
  hs_parquet_writer *w = NULL;
  CHECK_OK(hs_parquet_writer_open(path, &sch, &o, &w, &err), &err);
  for (int64_t at = 0; w != NULL && at < n; at += 61) {
    int64_t len = n - at < 61 ? n - at : 61;
    struct ArrowArray *top[1] = {&sa.a};
    struct ArrowArray batch;
    memset(&batch, 0, sizeof batch);
    const void *bb[1] = {NULL};
    batch.offset = at;
    batch.length = len;
    batch.n_buffers = 1;
    batch.buffers = bb;
    batch.n_children = 1;
    batch.children = top;
    batch.release = noop_release;
    CHECK_OK(hs_parquet_writer_write(w, &batch, &err), &err);
  }
  CHECK_OK(hs_parquet_writer_close(w, &err), &err);
  hs_parquet_writer_free(w);
  sch.release(&sch);

  hs_parquet_reader *r = NULL;
  CHECK_OK(hs_parquet_reader_open(path, &r, &err), &err);
  if (r == NULL) return;
  CHECK_EQ_INT(hs_parquet_reader_num_rows(r), n);
  struct ArrowArrayStream rs;
  CHECK_OK(hs_parquet_reader_stream(r, NULL, &rs, &err), &err);
  int64_t row = 0, bad = 0;
  for (;;) {
    struct ArrowArray bt;
    memset(&bt, 0, sizeof bt);
    if (rs.get_next(&rs, &bt) != 0 || bt.release == NULL) break;
    const struct ArrowArray *S = bt.children[0];
    CHECK_EQ_INT(S->n_children, 3);
    for (int64_t i = 0; i < bt.length; i++, row++) {
      int64_t src = off + row; /* member row */
      bool sv = (s_valid[src / 8] >> (src % 8)) & 1;
      if (hs_arrow_is_valid(S, i) != sv) bad++;
      if (!sv) continue;
      const struct ArrowArray *A = S->children[0], *IN = S->children[1], *C = S->children[2];
      int64_t j = S->offset + i;
      bool av = (a_valid[src / 8] >> (src % 8)) & 1;
      if (hs_arrow_is_valid(A, j) != av) bad++;
      if (av && ((const int32_t *)A->buffers[1])[A->offset + j] != a_vals[src]) bad++;
      if (((const int64_t *)C->buffers[1])[C->offset + j] != c_vals[src]) bad++;
      bool iv = (in_valid[src / 8] >> (src % 8)) & 1;
      if (hs_arrow_is_valid(IN, j) != iv) bad++;
      if (!iv) continue;
      const struct ArrowArray *B = IN->children[0];
      int64_t k = IN->offset + j + B->offset;
      const int32_t *bo2 = (const int32_t *)B->buffers[1];
      int32_t len = bo2[k + 1] - bo2[k];
      if (len != b_off[src + 1] - b_off[src] ||
          memcmp((const char *)B->buffers[2] + bo2[k], b_data + b_off[src], (size_t)len) != 0)
        bad++;
    }
    bt.release(&bt);
  }
  CHECK_EQ_INT(row, n);
  CHECK_EQ_INT(bad, 0);
  rs.release(&rs);
  hs_parquet_reader_free(r);

  /* A list inside a struct is refused, naming the member. */
  CHECK_OK(hs_arrow_schema_init(&sch, "+s", "", 0, 1, &err), &err);
  hs_arrow_schema_release(sch.children[0]);
  CHECK_OK(hs_arrow_schema_init(sch.children[0], "+s", "s", ARROW_FLAG_NULLABLE, 1, &err), &err);
  hs_arrow_schema_release(sch.children[0]->children[0]);
  CHECK_OK(
      hs_arrow_schema_init(sch.children[0]->children[0], "+l", "xs", ARROW_FLAG_NULLABLE, 1, &err),
      &err);
  hs_arrow_schema_release(sch.children[0]->children[0]->children[0]);
  CHECK_OK(hs_arrow_schema_init(sch.children[0]->children[0]->children[0], "i", "item",
                                ARROW_FLAG_NULLABLE, 0, &err),
           &err);
  w = NULL;
  CHECK_EQ_INT(hs_parquet_writer_open(path, &sch, NULL, &w, &err), HS_ERR_UNSUPPORTED);
  CHECK(strstr(err.message, "'s.xs'") != NULL);
  CHECK(w == NULL);
  sch.release(&sch);
}

int main(void) {
  char dir[] = "/tmp/hs_test_writer_XXXXXX";
  if (mkdtemp(dir) == NULL) return 1;
  fill_data(42);
  test_defaults(dir);
  test_options(dir);
  test_direct(dir);
  test_encodings(dir);
  test_errors(dir);
  test_dictionary_refused(dir);
  test_layout(dir);
  test_empty(dir);
  test_structs(dir);
  test_crc32();
  test_page_crc(dir);
  if (getenv("HS_KEEP_FILES") == NULL) {
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  } else {
    printf("files kept in %s\n", dir);
  }
  return hs_test_finish("test_writer");
}
