/*
 * test_deletes.c — delete-file codecs (src/table/deletes.h): deletion-vector
 * blobs (round trips of random bitmaps, every single-byte corruption and
 * truncation of a blob refused, hand-built vectors with a valid CRC that
 * break one rule each), Puffin files of DVs read back by offset, and
 * position-delete files (ours, and files written here directly with the
 * Parquet writer in the spec's shape or broken: no field ids, a `row`
 * column, a NULL, a negative pos, a missing column, a wrong type) read
 * back against the rows written. The Python test (tests/python/
 * test_delete_files.py) holds the outside oracles: pyarrow, pyroaring,
 * pyiceberg.
 */
#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "table/deletes.h"

static uint64_t rng = 0x5eed0014;

/* ------------------------------------------------------------ bitmaps */

/* A random bitmap of one of several shapes, values below 2^31. */
static roaring_bitmap_t *random_bitmap(int shape) {
  roaring_bitmap_t *r = roaring_bitmap_create();
  uint64_t n = hs_test_rand(&rng) % 2000;
  switch (shape % 6) {
  case 0: break; /* empty */
  case 1: roaring_bitmap_add(r, (uint32_t)(hs_test_rand(&rng) % (1u << 31))); break;
  case 2: /* sparse over the whole range */
    for (uint64_t i = 0; i < n; i++) roaring_bitmap_add(r, (uint32_t)(hs_test_rand(&rng) >> 33));
    break;
  case 3: /* dense runs */
    for (int k = 0; k < 5; k++) {
      uint32_t s = (uint32_t)(hs_test_rand(&rng) % (1u << 24));
      roaring_bitmap_add_range(r, s, s + 1 + hs_test_rand(&rng) % 200000);
    }
    break;
  case 4: /* bitset containers: half of a few chunks */
    for (int k = 0; k < 3; k++) {
      uint32_t base = (uint32_t)(hs_test_rand(&rng) % 30000) << 16;
      for (uint32_t i = 0; i < 65536; i += 2) roaring_bitmap_add(r, base + i);
    }
    break;
  case 5: /* the top of the 31-bit range, and 0 */
    roaring_bitmap_add(r, 0);
    roaring_bitmap_add_range(r, (1u << 31) - 1000, 1u << 31);
    break;
  }
  return r;
}

static bool parse_ok(const uint8_t *p, size_t n, roaring_bitmap_t **out, hs_status *st_out) {
  hs_error err = {0};
  hs_status st = hs_table_dv_parse(p, n, out, &err);
  if (st_out) *st_out = st;
  if (st != HS_OK && err.message[0] == '\0') {
    fprintf(stderr, "error without a message\n");
    CHECK(false);
  }
  return st == HS_OK;
}

static void test_dv_round_trip(void) {
  for (int i = 0; i < 120; i++) {
    roaring_bitmap_t *r = random_bitmap(i);
    hs_buf b;
    hs_buf_init(&b);
    hs_error err = {0};
    CHECK_OK(hs_table_dv_serialize(r, &b, &err), &err);
    roaring_bitmap_t *back = NULL;
    CHECK(parse_ok(b.data, b.len, &back, NULL));
    CHECK(back != NULL && roaring_bitmap_equals(r, back));
    /* Layout: length, magic, count (1, or 0 when empty), key 0. */
    CHECK(b.len >= 20);
    uint32_t L = (uint32_t)b.data[0] << 24 | b.data[1] << 16 | b.data[2] << 8 | b.data[3];
    CHECK_EQ_INT(L, b.len - 8);
    CHECK(memcmp(b.data + 4, "\xD1\xD3\x39\x64", 4) == 0);
    CHECK_EQ_INT(hs_load_u64le(b.data + 8), roaring_bitmap_is_empty(r) ? 0 : 1);
    uint32_t crc = (uint32_t)crc32(0, b.data + 4, L);
    const uint8_t *c = b.data + b.len - 4;
    CHECK_EQ_INT(crc, (uint32_t)c[0] << 24 | c[1] << 16 | c[2] << 8 | c[3]);
    roaring_bitmap_free(back);
    roaring_bitmap_free(r);
    hs_buf_free(&b);
  }
}

/* Every byte of a small blob replaced by every other value: none parses
 * (the length field, magic and CRC cover every byte). Every truncation and
 * every appended byte fails too. */
static void test_dv_corruption(void) {
  roaring_bitmap_t *r = roaring_bitmap_create();
  roaring_bitmap_add_many(r, 5, (const uint32_t[]){1, 7, 1000, 70000, 123456789});
  roaring_bitmap_add_range(r, 200, 300);
  hs_buf b;
  hs_buf_init(&b);
  hs_error err = {0};
  CHECK_OK(hs_table_dv_serialize(r, &b, &err), &err);
  uint8_t *m = malloc(b.len + 1);
  int accepted = 0, tried = 0;
  for (size_t i = 0; i < b.len; i++) {
    for (int v = 0; v < 256; v++) {
      if (v == b.data[i]) continue;
      memcpy(m, b.data, b.len);
      m[i] = (uint8_t)v;
      roaring_bitmap_t *x = NULL;
      hs_status st;
      tried++;
      if (parse_ok(m, b.len, &x, &st)) {
        accepted++;
        roaring_bitmap_free(x);
      } else {
        CHECK(st == HS_ERR_CORRUPT);
      }
    }
  }
  CHECK_EQ_INT(accepted, 0);
  CHECK(tried > 10000);
  for (size_t n = 0; n < b.len; n++) {
    memcpy(m, b.data, n);
    roaring_bitmap_t *x = NULL;
    CHECK(!parse_ok(m, n, &x, NULL));
  }
  memcpy(m, b.data, b.len);
  m[b.len] = 0;
  roaring_bitmap_t *x = NULL;
  CHECK(!parse_ok(m, b.len + 1, &x, NULL));
  free(m);
  hs_buf_free(&b);
  roaring_bitmap_free(r);
}

/* A blob around `vec` (the 64-bit portable vector), CRC computed. */
static void blob_of(const uint8_t *vec, size_t n, hs_buf *out) {
  out->len = 0;
  uint8_t h[8] = {(uint8_t)((n + 4) >> 24),
                  (uint8_t)((n + 4) >> 16),
                  (uint8_t)((n + 4) >> 8),
                  (uint8_t)(n + 4),
                  0xD1,
                  0xD3,
                  0x39,
                  0x64};
  hs_buf_append(out, h, 8);
  hs_buf_append(out, vec, n);
  uint32_t c = (uint32_t)crc32(0, out->data + 4, (uInt)(n + 4));
  uint8_t t[4] = {(uint8_t)(c >> 24), (uint8_t)(c >> 16), (uint8_t)(c >> 8), (uint8_t)c};
  hs_buf_append(out, t, 4);
}

static void put_u32(hs_buf *b, uint32_t v) {
  uint8_t x[4];
  hs_store_u32le(x, v);
  hs_buf_append(b, x, 4);
}
static void put_u64(hs_buf *b, uint64_t v) {
  uint8_t x[8];
  hs_store_u64le(x, v);
  hs_buf_append(b, x, 8);
}
static void put_u16(hs_buf *b, uint16_t v) {
  uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
  hs_buf_append(b, x, 2);
}
static void put_bitmap(hs_buf *b, const roaring_bitmap_t *r) {
  size_t n = roaring_bitmap_portable_size_in_bytes(r);
  hs_buf_reserve(b, n);
  roaring_bitmap_portable_serialize(r, (char *)b->data + b->len);
  b->len += n;
}

static hs_status parse_vec(const hs_buf *vec, roaring_bitmap_t **out, char *msg, size_t cap) {
  hs_buf blob;
  hs_buf_init(&blob);
  blob_of(vec->data, vec->len, &blob);
  hs_error err = {0};
  *out = NULL;
  hs_status st = hs_table_dv_parse(blob.data, blob.len, out, &err);
  if (msg) snprintf(msg, cap, "%s", err.message);
  if (st != HS_OK) CHECK(err.message[0] != '\0');
  hs_buf_free(&blob);
  return st;
}

/* Vectors with a valid length and CRC that break one rule each. */
static void test_dv_crafted(void) {
  roaring_bitmap_t *one = roaring_bitmap_create(), *empty = roaring_bitmap_create();
  roaring_bitmap_add(one, 42);
  hs_buf v;
  hs_buf_init(&v);
  roaring_bitmap_t *out = NULL;
  char msg[HS_ERROR_MESSAGE_MAX];

  /* Zero buckets: the empty set. */
  put_u64(&v, 0);
  CHECK_OK(parse_vec(&v, &out, msg, sizeof msg), NULL);
  CHECK(out != NULL && roaring_bitmap_is_empty(out));
  roaring_bitmap_free(out);

  /* A huge bucket count: refused before any allocation. */
  for (int k = 0; k < 3; k++) {
    uint64_t counts[3] = {UINT64_MAX, (uint64_t)1 << 62, 2};
    v.len = 0;
    put_u64(&v, counts[k]);
    put_u32(&v, 0);
    put_bitmap(&v, one);
    CHECK(parse_vec(&v, &out, msg, sizeof msg) == HS_ERR_CORRUPT);
    CHECK(strstr(msg, "bucket") != NULL);
  }

  /* Key 0 then an empty key 1 (Java writes empty buckets): fine. */
  v.len = 0;
  put_u64(&v, 2);
  put_u32(&v, 0);
  put_bitmap(&v, one);
  put_u32(&v, 1);
  put_bitmap(&v, empty);
  CHECK_OK(parse_vec(&v, &out, msg, sizeof msg), NULL);
  CHECK(out != NULL && roaring_bitmap_get_cardinality(out) == 1 &&
        roaring_bitmap_contains(out, 42));
  roaring_bitmap_free(out);

  /* A non-empty key 1: positions >= 2^32, unsupported. */
  v.len = 0;
  put_u64(&v, 2);
  put_u32(&v, 0);
  put_bitmap(&v, one);
  put_u32(&v, 1);
  put_bitmap(&v, one);
  CHECK(parse_vec(&v, &out, msg, sizeof msg) == HS_ERR_UNSUPPORTED);
  CHECK(strstr(msg, "2^32") != NULL);

  /* Keys duplicated, unsorted; a negative (MSB) key. */
  uint32_t keys[3][2] = {{0, 0}, {1, 0}, {0, 0x80000000u}};
  for (int k = 0; k < 3; k++) {
    v.len = 0;
    put_u64(&v, 2);
    put_u32(&v, keys[k][0]);
    put_bitmap(&v, empty);
    put_u32(&v, keys[k][1]);
    put_bitmap(&v, empty);
    CHECK(parse_vec(&v, &out, msg, sizeof msg) == HS_ERR_CORRUPT);
    CHECK(strstr(msg, "key") != NULL);
  }

  /* Trailing bytes after the last bucket. */
  v.len = 0;
  put_u64(&v, 1);
  put_u32(&v, 0);
  put_bitmap(&v, one);
  hs_buf_append_byte(&v, 0);
  CHECK(parse_vec(&v, &out, msg, sizeof msg) == HS_ERR_CORRUPT);
  CHECK(strstr(msg, "after the last bucket") != NULL);

  /* A bucket whose bitmap is cut short. */
  v.len = 0;
  put_u64(&v, 1);
  put_u32(&v, 0);
  put_bitmap(&v, one);
  v.len -= 1;
  CHECK(parse_vec(&v, &out, msg, sizeof msg) == HS_ERR_CORRUPT);

  /* 32-bit bitmaps breaking the Roaring format, each with a valid CRC. */
  /* Unknown cookie. */
  v.len = 0;
  put_u64(&v, 1);
  put_u32(&v, 0);
  put_u32(&v, 99999);
  put_u32(&v, 0);
  CHECK(parse_vec(&v, &out, msg, sizeof msg) == HS_ERR_CORRUPT);
  CHECK(strstr(msg, "cookie") != NULL);
  /* No-run cookie, one array container of 3 values, unsorted. */
  v.len = 0;
  put_u64(&v, 1);
  put_u32(&v, 0);
  put_u32(&v, 12346);
  put_u32(&v, 1);
  put_u16(&v, 0);
  put_u16(&v, 2);         /* cardinality - 1 */
  put_u32(&v, 8 + 4 + 4); /* offset of the container */
  put_u16(&v, 5);
  put_u16(&v, 3);
  put_u16(&v, 9);
  CHECK(parse_vec(&v, &out, msg, sizeof msg) == HS_ERR_CORRUPT);
  CHECK(strstr(msg, "not sorted") != NULL);
  /* The same, sorted: accepted, {3, 5, 9}. */
  v.data[v.len - 6] = 3;
  v.data[v.len - 4] = 5;
  CHECK_OK(parse_vec(&v, &out, msg, sizeof msg), NULL);
  CHECK(out != NULL && roaring_bitmap_get_cardinality(out) == 3 && roaring_bitmap_contains(out, 9));
  roaring_bitmap_free(out);
  /* Wrong container offset. */
  v.data[8 + 4 + 12] = 17;
  CHECK(parse_vec(&v, &out, msg, sizeof msg) == HS_ERR_CORRUPT);
  CHECK(strstr(msg, "offset") != NULL);
  /* Run cookie, one run container: runs overlapping; then a count that
   * disagrees with the header. */
  for (int k = 0; k < 3; k++) {
    v.len = 0;
    put_u64(&v, 1);
    put_u32(&v, 0);
    put_u32(&v, 12347);        /* 1 container */
    hs_buf_append_byte(&v, 1); /* run flags */
    put_u16(&v, 0);
    put_u16(&v, k == 1 ? 5 : 19); /* cardinality - 1 */
    put_u16(&v, 2);               /* runs */
    put_u16(&v, 10);
    put_u16(&v, 9); /* 10..19 */
    put_u16(&v, k == 0 ? 15 : (k == 2 ? 65530 : 30));
    put_u16(&v, 9); /* 15..24 overlaps; 65530..65539 leaves the container */
    CHECK(parse_vec(&v, &out, msg, sizeof msg) == HS_ERR_CORRUPT);
  }
  /* Bitset container whose popcount disagrees with the header. */
  v.len = 0;
  put_u64(&v, 1);
  put_u32(&v, 0);
  put_u32(&v, 12346);
  put_u32(&v, 1);
  put_u16(&v, 0);
  put_u16(&v, 5000 - 1);
  put_u32(&v, 16);
  for (int i = 0; i < 1024; i++) put_u64(&v, i < 78 ? UINT64_MAX : 0); /* 4992 bits */
  CHECK(parse_vec(&v, &out, msg, sizeof msg) == HS_ERR_CORRUPT);
  CHECK(strstr(msg, "bitset") != NULL);
  /* Too many containers. */
  v.len = 0;
  put_u64(&v, 1);
  put_u32(&v, 0);
  put_u32(&v, 12346);
  put_u32(&v, 70000);
  CHECK(parse_vec(&v, &out, msg, sizeof msg) == HS_ERR_CORRUPT);

  hs_buf_free(&v);
  roaring_bitmap_free(one);
  roaring_bitmap_free(empty);
}

/* ------------------------------------------------- DV read from a file */

static char dir[256];

static void test_dv_read(void) {
  /* A Puffin-like file written by hand: junk, blob, junk. */
  roaring_bitmap_t *r = random_bitmap(3);
  hs_buf f;
  hs_buf_init(&f);
  hs_buf_append(&f, "PFA1junk", 8);
  hs_error err = {0};
  CHECK_OK(hs_table_dv_serialize(r, &f, &err), &err);
  size_t blen = f.len - 8;
  hs_buf_append(&f, "tail", 4);
  char path[512];
  snprintf(path, sizeof path, "%s/hand.puffin", dir);
  hs_test_spill(path, (const char *)f.data, f.len);
  roaring_bitmap_t *back = NULL;
  CHECK_OK(hs_table_dv_read(path, 8, (int64_t)blen, -1, &back, &err), &err);
  CHECK(back != NULL && roaring_bitmap_equals(back, r));
  roaring_bitmap_free(back);
  back = NULL;
  CHECK_OK(hs_table_dv_read(path, 8, (int64_t)blen, (int64_t)roaring_bitmap_get_cardinality(r),
                            &back, &err),
           &err);
  roaring_bitmap_free(back);
  /* Wrong cardinality, offset, length; past the end; negative. */
  int64_t bad[][3] = {{8, (int64_t)blen, (int64_t)roaring_bitmap_get_cardinality(r) + 1},
                      {9, (int64_t)blen, -1},
                      {8, (int64_t)blen - 1, -1},
                      {8, (int64_t)f.len, -1},
                      {-1, 10, -1},
                      {8, -5, -1},
                      {(int64_t)f.len + 1, 0, -1}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hs_error e = {0};
    back = NULL;
    CHECK(hs_table_dv_read(path, bad[i][0], bad[i][1], bad[i][2], &back, &e) == HS_ERR_CORRUPT);
    CHECK(back == NULL);
    CHECK(strstr(e.message, path) != NULL);
  }
  /* A FIFO and a folder in its place: an error at once, never a wait. */
  char fifo[512];
  snprintf(fifo, sizeof fifo, "%s/fifo.puffin", dir);
  CHECK(mkfifo(fifo, 0600) == 0);
  hs_error e = {0};
  CHECK(hs_table_dv_read(fifo, 4, 20, -1, &back, &e) != HS_OK);
  CHECK(strstr(e.message, "fifo.puffin") != NULL);
  memset(&e, 0, sizeof e);
  CHECK(hs_table_dv_read(dir, 4, 20, -1, &back, &e) != HS_OK);
  memset(&e, 0, sizeof e);
  snprintf(fifo, sizeof fifo, "%s/missing.puffin", dir);
  CHECK(hs_table_dv_read(fifo, 4, 20, -1, &back, &e) == HS_ERR_NOT_FOUND);
  roaring_bitmap_free(r);
  hs_buf_free(&f);
}

/* --------------------------------------------------- position deletes */

typedef struct posdel_rows {
  char **paths;
  int64_t *pos;
  size_t n, cap;
  size_t calls;
  int fail_after; /* >= 0: the callback fails at this call */
} posdel_rows;

static hs_status collect(void *ctx, const char *data_file, const int64_t *pos, size_t n,
                         hs_error *err) {
  posdel_rows *c = ctx;
  if (c->fail_after >= 0 && (int)c->calls == c->fail_after)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "stop here");
  c->calls++;
  CHECK(n > 0);
  for (size_t i = 0; i < n; i++) {
    if (c->n == c->cap) {
      c->cap = c->cap ? 2 * c->cap : 256;
      c->paths = realloc(c->paths, c->cap * sizeof *c->paths);
      c->pos = realloc(c->pos, c->cap * sizeof *c->pos);
    }
    c->paths[c->n] = strdup(data_file);
    c->pos[c->n++] = pos[i];
  }
  return HS_OK;
}

static void rows_free(posdel_rows *c) {
  for (size_t i = 0; i < c->n; i++) free(c->paths[i]);
  free(c->paths);
  free(c->pos);
  memset(c, 0, sizeof *c);
}

/* How a hand-written file deviates from the spec's shape. */
typedef struct shape {
  bool no_ids;      /* no reserved ids (our writer assigns 1..n): read by name */
  bool row_column;  /* a third column `row` (struct<id: long>), ignored */
  bool reversed;    /* pos before file_path, other names (found by id) */
  bool nullable;    /* optional columns (pyarrow's default) */
  int64_t null_at;  /* >= 0: pos NULL at this row (needs nullable) */
  int64_t negative; /* >= 0: pos -1 at this row */
  bool int32_pos;   /* pos as int32: wrong type */
  bool no_pos;      /* pos column missing */
  bool wrong_ids;   /* ids present but not the reserved ones */
} shape;

static void set_id(struct ArrowSchema *s, int32_t id) {
  char v[16];
  snprintf(v, sizeof v, "%d", (int)id);
  const char *k[1] = {"PARQUET:field_id"}, *vv[1] = {v};
  hs_arrow_schema_set_metadata(s, k, vv, 1, NULL);
}

/* Write rows (paths[i], pos[i]) as a Parquet file in shape `sh`, batches of
 * `batch` rows. */
static void write_posdel(const char *path, char **paths, const int64_t *pos, size_t n,
                         const shape *sh, size_t batch) {
  hs_error err = {0};
  int nc = 2 - (sh->no_pos ? 1 : 0) + (sh->row_column ? 1 : 0);
  struct ArrowSchema s;
  CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, nc, &err), &err);
  int ip = sh->reversed ? 1 : 0, iq = sh->reversed ? 0 : 1;
  if (sh->no_pos) ip = 0;
  int64_t fl = sh->nullable ? ARROW_FLAG_NULLABLE : 0;
  hs_arrow_schema_init(s.children[ip], "u", sh->reversed ? "the_path" : "file_path", fl, 0, &err);
  if (!sh->no_pos)
    hs_arrow_schema_init(s.children[iq], sh->int32_pos ? "i" : "l", sh->reversed ? "p" : "pos", fl,
                         0, &err);
  if (sh->row_column) {
    /* Our writer has no structs; pyarrow's `row` struct is in the Python
     * test. */
    struct ArrowSchema *rc = s.children[nc - 1];
    hs_arrow_schema_init(rc, "l", "row", ARROW_FLAG_NULLABLE, 0, &err);
    if (!sh->no_ids) set_id(rc, HS_DELETE_ROW_ID);
  }
  if (!sh->no_ids) {
    set_id(s.children[ip], sh->wrong_ids ? 1 : HS_DELETE_FILE_PATH_ID);
    if (!sh->no_pos) set_id(s.children[iq], sh->wrong_ids ? 2 : HS_DELETE_POS_ID);
  }
  hs_parquet_write_options po;
  hs_parquet_write_options_init(&po);
  po.row_group_rows_max = 3000;
  po.page_bytes_max = 4096;
  hs_parquet_writer *w = NULL;
  CHECK_OK(hs_parquet_writer_open(path, &s, &po, &w, &err), &err);
  for (size_t b0 = 0; w != NULL && b0 < n; b0 += batch) {
    size_t m = n - b0 < batch ? n - b0 : batch, bytes = 0;
    for (size_t i = 0; i < m; i++) bytes += strlen(paths[b0 + i]);
    int32_t *off = hs_malloc((m + 1) * 4);
    char *data = hs_malloc(bytes + 1);
    off[0] = 0;
    for (size_t i = 0; i < m; i++) {
      size_t l = strlen(paths[b0 + i]);
      memcpy(data + off[i], paths[b0 + i], l);
      off[i + 1] = off[i] + (int32_t)l;
    }
    struct ArrowArray ch[3];
    memset(ch, 0, sizeof ch);
    CHECK_OK(hs_arrow_array_make_binary(&ch[ip], (int64_t)m, off, data, NULL, 0, &err), &err);
    if (!sh->no_pos) {
      uint8_t *valid = NULL;
      int64_t nulls = 0;
      void *vals;
      if (sh->int32_pos) {
        int32_t *v = hs_malloc(m * 4);
        for (size_t i = 0; i < m; i++) v[i] = (int32_t)pos[b0 + i];
        vals = v;
      } else {
        int64_t *v = hs_malloc(m * 8);
        for (size_t i = 0; i < m; i++) v[i] = (int64_t)(b0 + i) == sh->negative ? -1 : pos[b0 + i];
        vals = v;
      }
      if (sh->null_at >= (int64_t)b0 && sh->null_at < (int64_t)(b0 + m)) {
        valid = hs_malloc(m / 8 + 1);
        memset(valid, 0xFF, m / 8 + 1);
        size_t j = (size_t)sh->null_at - b0;
        valid[j / 8] &= (uint8_t) ~(1u << (j % 8));
        nulls = 1;
      }
      CHECK_OK(hs_arrow_array_make_primitive(&ch[iq], (int64_t)m, vals, valid, nulls, &err), &err);
    }
    if (sh->row_column) {
      int64_t *v = hs_calloc(m, 8);
      hs_arrow_array_make_primitive(&ch[nc - 1], (int64_t)m, v, NULL, 0, &err);
    }
    struct ArrowArray top;
    CHECK_OK(hs_arrow_array_make_struct(&top, (int64_t)m, ch, nc, NULL, 0, &err), &err);
    CHECK_OK(hs_parquet_writer_write(w, &top, &err), &err);
    top.release(&top);
  }
  CHECK_OK(hs_parquet_writer_close(w, &err), &err);
  hs_parquet_writer_free(w);
  s.release(&s);
}

/* Random sorted rows over a few paths: (path, pos) ascending. */
static size_t random_rows(char ***paths_out, int64_t **pos_out) {
  size_t n_paths = 1 + hs_test_rand(&rng) % 5, n = 0, cap = 0;
  char **paths = NULL;
  int64_t *pos = NULL;
  for (size_t p = 0; p < n_paths; p++) {
    char name[128];
    snprintf(name, sizeof name, "/tables/t/data/%05zu-%llx.parquet", p,
             (unsigned long long)(hs_test_rand(&rng) & 0xFFFFFF));
    size_t k = hs_test_rand(&rng) % 9000;
    int64_t at = (int64_t)(hs_test_rand(&rng) % 100);
    for (size_t i = 0; i < k; i++) {
      if (n == cap) {
        cap = cap ? 2 * cap : 1024;
        paths = realloc(paths, cap * sizeof *paths);
        pos = realloc(pos, cap * sizeof *pos);
      }
      paths[n] = strdup(name);
      pos[n++] = at;
      at += 1 + (int64_t)(hs_test_rand(&rng) % (i % 2 ? 3 : 5000));
    }
  }
  *paths_out = paths;
  *pos_out = pos;
  return n;
}

static void free_rows(char **paths, int64_t *pos, size_t n) {
  for (size_t i = 0; i < n; i++) free(paths[i]);
  free(paths);
  free(pos);
}

static hs_status read_rows(const char *path, posdel_rows *got, hs_error *err) {
  memset(got, 0, sizeof *got);
  got->fail_after = -1;
  return hs_table_posdel_read(path, collect, got, err);
}

static void test_posdel_read_shapes(void) {
  char path[512];
  for (int round = 0; round < 12; round++) {
    char **paths;
    int64_t *pos;
    size_t n = random_rows(&paths, &pos);
    shape sh = {.null_at = -1, .negative = -1};
    sh.no_ids = round % 4 == 1;
    sh.row_column = round % 3 == 2;
    sh.reversed = round % 4 == 3;
    sh.nullable = round % 2 == 1;
    sh.wrong_ids = round % 6 == 4; /* ids of its own: found by name */
    snprintf(path, sizeof path, "%s/pd%d.parquet", dir, round);
    write_posdel(path, paths, pos, n, &sh, 1 + hs_test_rand(&rng) % 10000);
    posdel_rows got;
    hs_error err = {0};
    CHECK_OK(read_rows(path, &got, &err), &err);
    CHECK_EQ_INT(got.n, n);
    size_t bad = 0;
    for (size_t i = 0; i < n && i < got.n; i++)
      if (got.pos[i] != pos[i] || strcmp(got.paths[i], paths[i]) != 0) bad++;
    CHECK_EQ_INT(bad, 0);
    /* Calls: at least one per run of equal paths. */
    size_t runs = 0;
    for (size_t i = 0; i < n; i++)
      if (i == 0 || strcmp(paths[i], paths[i - 1]) != 0) runs++;
    CHECK(got.calls >= runs);
    CHECK(got.calls <= runs + n / HS_POSDEL_BATCH_ROWS + 64);
    rows_free(&got);
    /* A callback error stops the read and is returned. */
    if (n > 0) {
      memset(&got, 0, sizeof got);
      got.fail_after = 0;
      memset(&err, 0, sizeof err);
      CHECK(hs_table_posdel_read(path, collect, &got, &err) == HS_ERR_INVALID_ARG);
      CHECK(strstr(err.message, "stop here") != NULL);
      rows_free(&got);
    }
    free_rows(paths, pos, n);
  }
}

static void test_posdel_read_errors(void) {
  char path[512];
  char *paths[5] = {"/a", "/a", "/b", "/b", "/b"};
  int64_t pos[5] = {0, 1, 2, 3, 4};
  struct {
    shape sh;
    hs_status want;
    const char *says;
  } cases[] = {
      {{.null_at = 3, .negative = -1, .nullable = true}, HS_ERR_CORRUPT, "row 3: pos is NULL"},
      {{.null_at = -1, .negative = 2}, HS_ERR_CORRUPT, "row 2: negative pos"},
      {{.null_at = -1, .negative = -1, .int32_pos = true}, HS_ERR_CORRUPT, "not a long"},
      {{.null_at = -1, .negative = -1, .no_pos = true}, HS_ERR_CORRUPT, "no 'pos' column"},
      {{.null_at = -1, .negative = -1, .wrong_ids = true, .reversed = true},
       HS_ERR_CORRUPT,
       "nor by name"},
      {{.null_at = -1, .negative = -1, .no_ids = true, .reversed = true},
       HS_ERR_CORRUPT,
       "nor by name"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(path, sizeof path, "%s/bad%zu.parquet", dir, i);
    write_posdel(path, paths, pos, 5, &cases[i].sh, 2);
    posdel_rows got;
    hs_error err = {0};
    hs_status st = read_rows(path, &got, &err);
    CHECK_EQ_INT(st, cases[i].want);
    if (strstr(err.message, cases[i].says) == NULL || strstr(err.message, path) == NULL) {
      fprintf(stderr, "case %zu: %s\n", i, err.message);
      CHECK(false);
    }
    rows_free(&got);
  }
  /* Not Parquet, truncated, a FIFO, missing. */
  snprintf(path, sizeof path, "%s/bad0.parquet", dir);
  size_t n = 0;
  char *bytes = hs_test_slurp(path, &n);
  snprintf(path, sizeof path, "%s/trunc.parquet", dir);
  for (size_t cut = 0; bytes != NULL && cut < n; cut += 1 + cut / 3) {
    hs_test_spill(path, bytes, cut);
    posdel_rows got;
    hs_error err = {0};
    CHECK(read_rows(path, &got, &err) != HS_OK);
    CHECK(strstr(err.message, path) != NULL);
    rows_free(&got);
  }
  free(bytes);
  snprintf(path, sizeof path, "%s/fifo.parquet", dir);
  CHECK(mkfifo(path, 0600) == 0);
  posdel_rows got;
  hs_error err = {0};
  CHECK(read_rows(path, &got, &err) != HS_OK);
  CHECK(strstr(err.message, path) != NULL);
  rows_free(&got);
  snprintf(path, sizeof path, "%s/missing.parquet", dir);
  memset(&err, 0, sizeof err);
  CHECK(read_rows(path, &got, &err) == HS_ERR_NOT_FOUND);
  rows_free(&got);
}

/* ------------------------------------------------------------ writers */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static const hs_iceberg_column_metrics *metric(const hs_iceberg_data_file *df, int32_t id) {
  for (size_t i = 0; i < df->n_metrics; i++)
    if (df->metrics[i].field_id == id) return &df->metrics[i];
  return NULL;
}

/* n random groups with distinct random paths (some long, some sharing
 * prefixes so that byte order matters). */
static void random_groups(hs_table_delete_group *g, char **names, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char name[400];
    int kind = (int)(hs_test_rand(&rng) % 3);
    if (kind == 0)
      snprintf(name, sizeof name, "/t/data/%zu-%llx.parquet", n - i,
               (unsigned long long)hs_test_rand(&rng));
    else if (kind == 1)
      snprintf(name, sizeof name, "/t/data/%zu\xc3\xa9-%0200d.parquet", i, 7);
    else
      snprintf(name, sizeof name, "file:/t/data/Z%zu.parquet", i);
    names[i] = strdup(name);
    roaring_bitmap_t *r = random_bitmap(1 + (int)(hs_test_rand(&rng) % 5));
    if (roaring_bitmap_is_empty(r)) roaring_bitmap_add(r, (uint32_t)i);
    g[i].data_file = names[i];
    g[i].rows = r;
  }
}

static void free_groups(hs_table_delete_group *g, char **names, size_t n) {
  for (size_t i = 0; i < n; i++) {
    roaring_bitmap_free((roaring_bitmap_t *)g[i].rows);
    free(names[i]);
  }
}

static void test_posdel_write(void) {
  for (int round = 0; round < 8; round++) {
    size_t n = 1 + hs_test_rand(&rng) % 6;
    hs_table_delete_group g[8];
    char *names[8];
    random_groups(g, names, n);
    char path[512];
    snprintf(path, sizeof path, "%s/w%d-deletes.parquet", dir, round);
    hs_arena a;
    hs_arena_init(&a);
    hs_iceberg_data_file df;
    hs_error err = {0};
    CHECK_OK(hs_table_posdel_write(path, "file:/recorded/x.parquet", g, n, &a, &df, &err), &err);
    /* Expected rows: paths in byte order, positions ascending. */
    char *sorted[8];
    memcpy(sorted, names, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_str);
    posdel_rows got;
    CHECK_OK(read_rows(path, &got, &err), &err);
    size_t k = 0, bad = 0;
    uint64_t total = 0;
    uint32_t pmin = UINT32_MAX, pmax = 0;
    for (size_t i = 0; i < n; i++) {
      const roaring_bitmap_t *r = NULL;
      for (size_t j = 0; j < n; j++)
        if (g[j].data_file == sorted[i]) r = g[j].rows;
      uint64_t c = roaring_bitmap_get_cardinality(r);
      uint32_t *v = malloc(c * sizeof *v);
      roaring_bitmap_to_uint32_array(r, v);
      for (uint64_t x = 0; x < c; x++, k++)
        if (k >= got.n || got.pos[k] != v[x] || strcmp(got.paths[k], sorted[i]) != 0) bad++;
      if (c > 0 && v[0] < pmin) pmin = v[0];
      if (c > 0 && v[c - 1] > pmax) pmax = v[c - 1];
      total += c;
      free(v);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(got.n, total);
    rows_free(&got);
    CHECK_EQ_INT(df.content, HS_ICE_CONTENT_POSITION_DELETES);
    CHECK(strcmp(df.file_format, "PARQUET") == 0);
    CHECK(strcmp(df.file_path, "file:/recorded/x.parquet") == 0);
    CHECK_EQ_INT(df.record_count, total);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && sb.st_size == df.file_size_in_bytes);
    if (n == 1)
      CHECK(df.referenced_data_file != NULL && strcmp(df.referenced_data_file, names[0]) == 0);
    else
      CHECK(df.referenced_data_file == NULL);
    const hs_iceberg_column_metrics *mp = metric(&df, HS_DELETE_FILE_PATH_ID),
                                    *mq = metric(&df, HS_DELETE_POS_ID);
    CHECK(mp != NULL && mq != NULL);
    if (mp != NULL && mq != NULL) {
      CHECK(mp->has_value_count && mp->value_count == (int64_t)total);
      CHECK(mp->has_null_count && mp->null_count == 0);
      CHECK(mq->has_value_count && mq->value_count == (int64_t)total);
      /* Full (untruncated) path bounds, pos bounds as 8-byte little-endian. */
      CHECK(mp->lower != NULL && mp->lower_len == strlen(sorted[0]) &&
            memcmp(mp->lower, sorted[0], mp->lower_len) == 0);
      CHECK(mp->upper != NULL && mp->upper_len == strlen(sorted[n - 1]) &&
            memcmp(mp->upper, sorted[n - 1], mp->upper_len) == 0);
      CHECK(mq->lower != NULL && mq->lower_len == 8 && hs_load_u64le(mq->lower) == pmin);
      CHECK(mq->upper != NULL && mq->upper_len == 8 && hs_load_u64le(mq->upper) == pmax);
    }
    /* The same path again, duplicate groups, an empty group: refused, and
     * nothing left behind by the refused calls. */
    hs_error e = {0};
    CHECK(hs_table_posdel_write(path, "x", g, n, &a, &df, &e) == HS_ERR_INVALID_ARG);
    char p2[600];
    snprintf(p2, sizeof p2, "%s.dup", path);
    hs_table_delete_group two[2] = {g[0], g[0]};
    memset(&e, 0, sizeof e);
    CHECK(hs_table_posdel_write(p2, "x", two, 2, &a, &df, &e) == HS_ERR_INVALID_ARG);
    CHECK(access(p2, F_OK) != 0);
    roaring_bitmap_t *none = roaring_bitmap_create();
    hs_table_delete_group empty = {"/t/data/e.parquet", none};
    memset(&e, 0, sizeof e);
    CHECK(hs_table_posdel_write(p2, "x", &empty, 1, &a, &df, &e) == HS_ERR_INVALID_ARG);
    CHECK(access(p2, F_OK) != 0);
    roaring_bitmap_free(none);
    hs_arena_reset(&a);
    free_groups(g, names, n);
  }
}

static void test_dv_write(void) {
  for (int round = 0; round < 8; round++) {
    size_t n = 1 + hs_test_rand(&rng) % 6;
    hs_table_delete_group g[8];
    char *names[8];
    random_groups(g, names, n);
    char path[512];
    snprintf(path, sizeof path, "%s/w%d-dv.puffin", dir, round);
    hs_arena a;
    hs_arena_init(&a);
    hs_iceberg_data_file dfs[8];
    hs_error err = {0};
    CHECK_OK(hs_table_dv_write(path, "/recorded/dv.puffin", g, n, &a, dfs, &err), &err);
    struct stat sb;
    CHECK(stat(path, &sb) == 0);
    for (size_t i = 0; i < n; i++) {
      CHECK_EQ_INT(dfs[i].content, HS_ICE_CONTENT_POSITION_DELETES);
      CHECK(strcmp(dfs[i].file_format, "PUFFIN") == 0);
      CHECK(strcmp(dfs[i].file_path, "/recorded/dv.puffin") == 0);
      CHECK(strcmp(dfs[i].referenced_data_file, names[i]) == 0);
      CHECK_EQ_INT(dfs[i].record_count, roaring_bitmap_get_cardinality(g[i].rows));
      CHECK_EQ_INT(dfs[i].file_size_in_bytes, sb.st_size);
      CHECK(dfs[i].has_content_offset && dfs[i].has_content_size_in_bytes);
      roaring_bitmap_t *back = NULL;
      CHECK_OK(hs_table_dv_read(path, dfs[i].content_offset, dfs[i].content_size_in_bytes,
                                dfs[i].record_count, &back, &err),
               &err);
      CHECK(back != NULL && roaring_bitmap_equals(back, g[i].rows));
      roaring_bitmap_free(back);
    }
    /* The Puffin frame: magic first and last, footer JSON as the spec says. */
    size_t len = 0;
    char *b = hs_test_slurp(path, &len);
    CHECK(b != NULL && len > 24 && memcmp(b, "PFA1", 4) == 0 &&
          memcmp(b + len - 4, "PFA1", 4) == 0);
    if (b != NULL && len > 24) {
      uint32_t flen = hs_load_u32le((const uint8_t *)b + len - 12);
      CHECK_EQ_INT(hs_load_u32le((const uint8_t *)b + len - 8), 0);
      CHECK(flen + 24 <= len && memcmp(b + len - 12 - flen - 4, "PFA1", 4) == 0);
      json_error_t je;
      json_t *root = json_loadb(b + len - 12 - flen, flen, 0, &je);
      CHECK(root != NULL);
      json_t *blobs = json_object_get(root, "blobs");
      CHECK_EQ_INT(json_array_size(blobs), n);
      for (size_t i = 0; i < n && i < json_array_size(blobs); i++) {
        json_t *o = json_array_get(blobs, i);
        json_t *pr = json_object_get(o, "properties");
        CHECK(strcmp(json_string_value(json_object_get(o, "type")), "deletion-vector-v1") == 0);
        CHECK(json_integer_value(json_array_get(json_object_get(o, "fields"), 0)) == 2147483645);
        CHECK(json_integer_value(json_object_get(o, "snapshot-id")) == -1);
        CHECK(json_integer_value(json_object_get(o, "sequence-number")) == -1);
        CHECK(json_integer_value(json_object_get(o, "offset")) == dfs[i].content_offset);
        CHECK(json_integer_value(json_object_get(o, "length")) == dfs[i].content_size_in_bytes);
        CHECK(json_object_get(o, "compression-codec") == NULL);
        CHECK(strcmp(json_string_value(json_object_get(pr, "referenced-data-file")), names[i]) ==
              0);
        char card[32];
        snprintf(card, sizeof card, "%llu",
                 (unsigned long long)roaring_bitmap_get_cardinality(g[i].rows));
        CHECK(strcmp(json_string_value(json_object_get(pr, "cardinality")), card) == 0);
      }
      json_decref(root);
    }
    free(b);
    /* Exists already: refused, the file untouched. */
    hs_error e = {0};
    CHECK(hs_table_dv_write(path, "x", g, n, &a, dfs, &e) != HS_OK);
    struct stat sb2;
    CHECK(stat(path, &sb2) == 0 && sb2.st_size == sb.st_size);
    hs_arena_reset(&a);
    free_groups(g, names, n);
  }
}

/* ------------------------------------------------------- driver mode */
/* `test_deletes CMD ARGS...` (tests/python/test_delete_files.py): one
 * codec call, its result as one JSON object on stdout, exit 0 (errors are
 * results too: {"error": status, "message": ...}).
 *   posdel-read FILE                    {"rows": [[path, pos], ...], "calls": n}
 *   posdel-write OUT RECORDED GROUPS    {"data_file": {...}}
 *   dv-write OUT RECORDED GROUPS        {"data_files": [{...}, ...]}
 *   dv-read FILE OFFSET LENGTH CARD     {"positions": [...]}
 *   dv-parse BLOBFILE                   {"positions": [...]}
 *   dv-serialize POSITIONS              {"blob": hex}
 * GROUPS is a JSON file {"path": [positions...], ...}; POSITIONS a JSON
 * file [positions...]. */

static int print_json(json_t *o) {
  char *t = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  if (t == NULL) return 1;
  puts(t);
  free(t);
  return 0;
}

static int print_error(hs_status st, const hs_error *err) {
  return print_json(json_pack("{s:s,s:s}", "error", hs_status_str(st), "message", err->message));
}

static hs_status drv_collect(void *ctx, const char *data_file, const int64_t *pos, size_t n,
                             hs_error *err) {
  json_t *rows = ctx;
  for (size_t i = 0; i < n; i++)
    json_array_append_new(rows, json_pack("[s,I]", data_file, (json_int_t)pos[i]));
  json_array_append_new(json_array_get(rows, 0), json_integer(1)); /* counts calls */
  return HS_OK;
}

static json_t *positions_of(const roaring_bitmap_t *r) {
  json_t *a = json_array();
  roaring_uint32_iterator_t it;
  roaring_init_iterator(r, &it);
  while (it.has_value) {
    json_array_append_new(a, json_integer(it.current_value));
    roaring_advance_uint32_iterator(&it);
  }
  return a;
}

static char *hex_of(const uint8_t *p, size_t n) {
  char *h = malloc(2 * n + 1);
  for (size_t i = 0; i < n; i++) snprintf(h + 2 * i, 3, "%02x", p[i]);
  h[2 * n] = 0;
  return h;
}

static json_t *data_file_json(const hs_iceberg_data_file *d) {
  json_t *o =
      json_pack("{s:i,s:s,s:s,s:I,s:I}", "content", (int)d->content, "file_path", d->file_path,
                "file_format", d->file_format, "record_count", (json_int_t)d->record_count,
                "file_size_in_bytes", (json_int_t)d->file_size_in_bytes);
  json_object_set_new(o, "referenced_data_file",
                      d->referenced_data_file ? json_string(d->referenced_data_file) : json_null());
  if (d->has_content_offset)
    json_object_set_new(o, "content_offset", json_integer(d->content_offset));
  if (d->has_content_size_in_bytes)
    json_object_set_new(o, "content_size_in_bytes", json_integer(d->content_size_in_bytes));
  json_t *m = json_object();
  for (size_t i = 0; i < d->n_metrics; i++) {
    const hs_iceberg_column_metrics *c = &d->metrics[i];
    json_t *x = json_object();
    if (c->has_value_count) json_object_set_new(x, "value_count", json_integer(c->value_count));
    if (c->has_null_count) json_object_set_new(x, "null_count", json_integer(c->null_count));
    if (c->lower) {
      char *h = hex_of(c->lower, c->lower_len);
      json_object_set_new(x, "lower", json_string(h));
      free(h);
    }
    if (c->upper) {
      char *h = hex_of(c->upper, c->upper_len);
      json_object_set_new(x, "upper", json_string(h));
      free(h);
    }
    char k[16];
    snprintf(k, sizeof k, "%d", (int)c->field_id);
    json_object_set_new(m, k, x);
  }
  json_object_set_new(o, "metrics", m);
  return o;
}

static roaring_bitmap_t *bitmap_of(json_t *a) {
  roaring_bitmap_t *r = roaring_bitmap_create();
  for (size_t i = 0; i < json_array_size(a); i++)
    roaring_bitmap_add(r, (uint32_t)json_integer_value(json_array_get(a, i)));
  return r;
}

static int driver(int argc, char **argv) {
  const char *cmd = argv[1];
  hs_error err = {0};
  hs_status st;
  json_error_t je;
  if (strcmp(cmd, "posdel-read") == 0 && argc == 3) {
    json_t *rows = json_array();
    json_array_append_new(rows, json_array()); /* slot 0: one entry per call */
    st = hs_table_posdel_read(argv[2], drv_collect, rows, &err);
    if (st != HS_OK) {
      json_decref(rows);
      return print_error(st, &err);
    }
    size_t calls = json_array_size(json_array_get(rows, 0));
    json_array_remove(rows, 0);
    return print_json(json_pack("{s:o,s:I}", "rows", rows, "calls", (json_int_t)calls));
  }
  if ((strcmp(cmd, "posdel-write") == 0 || strcmp(cmd, "dv-write") == 0) && argc == 5) {
    json_t *spec = json_load_file(argv[4], 0, &je);
    if (spec == NULL) return 1;
    size_t n = json_object_size(spec), i = 0;
    hs_table_delete_group *g = calloc(n ? n : 1, sizeof *g);
    const char *key;
    json_t *val;
    json_object_foreach(spec, key, val) {
      g[i].data_file = key;
      g[i++].rows = bitmap_of(val);
    }
    hs_arena a;
    hs_arena_init(&a);
    hs_iceberg_data_file *dfs = calloc(n ? n : 1, sizeof *dfs);
    bool pos = cmd[0] == 'p';
    st = pos ? hs_table_posdel_write(argv[2], argv[3], g, n, &a, dfs, &err)
             : hs_table_dv_write(argv[2], argv[3], g, n, &a, dfs, &err);
    int rc;
    if (st != HS_OK) {
      rc = print_error(st, &err);
    } else if (pos) {
      rc = print_json(json_pack("{s:o}", "data_file", data_file_json(&dfs[0])));
    } else {
      json_t *l = json_array();
      for (i = 0; i < n; i++) json_array_append_new(l, data_file_json(&dfs[i]));
      rc = print_json(json_pack("{s:o}", "data_files", l));
    }
    for (i = 0; i < n; i++) roaring_bitmap_free((roaring_bitmap_t *)g[i].rows);
    free(g);
    free(dfs);
    hs_arena_reset(&a);
    json_decref(spec);
    return rc;
  }
  if (strcmp(cmd, "dv-read") == 0 && argc == 6) {
    roaring_bitmap_t *r = NULL;
    st = hs_table_dv_read(argv[2], atoll(argv[3]), atoll(argv[4]), atoll(argv[5]), &r, &err);
    if (st != HS_OK) return print_error(st, &err);
    json_t *o = json_pack("{s:o}", "positions", positions_of(r));
    roaring_bitmap_free(r);
    return print_json(o);
  }
  if (strcmp(cmd, "dv-parse") == 0 && argc == 3) {
    size_t n = 0;
    char *b = hs_test_slurp(argv[2], &n);
    if (b == NULL) return 1;
    roaring_bitmap_t *r = NULL;
    st = hs_table_dv_parse((const uint8_t *)b, n, &r, &err);
    free(b);
    if (st != HS_OK) return print_error(st, &err);
    json_t *o = json_pack("{s:o}", "positions", positions_of(r));
    roaring_bitmap_free(r);
    return print_json(o);
  }
  if (strcmp(cmd, "dv-serialize") == 0 && argc == 3) {
    json_t *a = json_load_file(argv[2], 0, &je);
    if (a == NULL) return 1;
    roaring_bitmap_t *r = bitmap_of(a);
    json_decref(a);
    hs_buf b;
    hs_buf_init(&b);
    st = hs_table_dv_serialize(r, &b, &err);
    roaring_bitmap_free(r);
    if (st != HS_OK) return print_error(st, &err);
    char *h = hex_of(b.data, b.len);
    hs_buf_free(&b);
    json_t *o = json_pack("{s:s}", "blob", h);
    free(h);
    return print_json(o);
  }
  fprintf(stderr, "usage: see the driver-mode comment in tests/c/test_deletes.c\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc > 1) return driver(argc, argv);
  snprintf(dir, sizeof dir, "/tmp/hs_test_deletes_XXXXXX");
  if (mkdtemp(dir) == NULL) return 1;
  test_dv_round_trip();
  test_dv_corruption();
  test_dv_crafted();
  test_dv_read();
  test_posdel_read_shapes();
  test_posdel_read_errors();
  test_posdel_write();
  test_dv_write();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return hs_test_finish("test_deletes");
}
