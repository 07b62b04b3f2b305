/*
 * test_delta_gather.c — random access into DELTA_BINARY_PACKED streams
 * (hs_delta_dir_build, hs_delta_cursor in encoding_delta.c) against the
 * whole-stream decoder: INT32 and INT64 streams of random block sizes and
 * miniblock counts (as parquet-mr, parquet-cpp and odd writers make them),
 * wrapping deltas, wider bit widths than needed, garbage in the padding of
 * the last miniblock, empty and 1-value streams, selections of every
 * density in increasing and in random order. Then damaged streams (bytes
 * changed, cut short, a directory used on bytes it was not built from):
 * an error or a value, never a read outside the buffer (run under ASan;
 * inputs are copied to exact-size heap blocks).
 */
#include <limits.h>

#include "hs_test.h"
#include "parquet/encoding.h"
#include "parquet/encoding_internal.h"

static uint64_t g_rng = 20261130;

static uint64_t rnd(uint64_t n) {
  return n ? hs_test_rand(&g_rng) % n : 0;
}

static uint8_t *dup_exact(const uint8_t *p, size_t n) {
  uint8_t *d = hs_malloc(n ? n : 1);
  if (n) memcpy(d, p, n);
  return d;
}

/* Encode v[0..n) with any block size and miniblock count (the library's
 * encoder always writes 128 / 4). is32: deltas modulo 2^32. extra_bits:
 * widen every miniblock that many bits past what it needs (capped at the
 * type's width). The last miniblock is padded with garbage values, or cut
 * to the bytes its values need when `cut_last`. */
static void encode_any(const int64_t *v, size_t n, bool is32, size_t bs, size_t mbc, int extra_bits,
                       bool cut_last, hs_buf *out) {
  size_t vpm = bs / mbc;
  int wmax = is32 ? 32 : 64;
  hs_varint_write(out, bs);
  hs_varint_write(out, mbc);
  hs_varint_write(out, n);
  hs_varint_write(out, hs_zigzag_encode(n ? (is32 ? (int32_t)v[0] : v[0]) : 0));
  uint64_t *u = hs_malloc(bs * sizeof *u);
  int64_t *d = hs_malloc(bs * sizeof *d);
  for (size_t start = 1; start < n; start += bs) {
    size_t count = n - start < bs ? n - start : bs;
    for (size_t i = 0; i < count; i++) {
      size_t k = start + i;
      d[i] = is32 ? (int32_t)((uint32_t)v[k] - (uint32_t)v[k - 1])
                  : (int64_t)((uint64_t)v[k] - (uint64_t)v[k - 1]);
    }
    int64_t md = d[0];
    for (size_t i = 1; i < count; i++) md = d[i] < md ? d[i] : md;
    for (size_t i = 0; i < bs; i++) {
      u[i] = i < count ? (is32 ? (uint32_t)((uint32_t)d[i] - (uint32_t)md)
                               : (uint64_t)d[i] - (uint64_t)md)
                       : 0;
    }
    hs_varint_write(out, hs_zigzag_encode(md));
    size_t used = (count + vpm - 1) / vpm;
    uint8_t widths[1024];
    for (size_t m = 0; m < mbc; m++) {
      uint64_t all = 0;
      for (size_t i = 0; m < used && i < vpm; i++) all |= u[m * vpm + i];
      int w = hs_bit_width(all) + extra_bits;
      widths[m] =
          (uint8_t)(m < used ? (uint64_t)(w > wmax ? wmax : w) : rnd(256)); /* unused: any */
    }
    hs_buf_append(out, widths, mbc);
    for (size_t m = 0; m < used; m++) {
      int w = widths[m];
      uint64_t mask = w == 64 ? ~0ull : ((1ull << w) - 1);
      for (size_t i = 0; i < vpm; i++) {
        if (m * vpm + i >= count) u[m * vpm + i] = hs_test_rand(&g_rng) & mask; /* padding */
      }
      size_t bytes = vpm / 8 * (size_t)w;
      bool last = start + bs >= n && m + 1 == used;
      size_t keep = bytes;
      if (last && cut_last) hs_packed_bytes(count - m * vpm, w, &keep);
      hs_buf_reserve(out, bytes);
      memset(out->data + out->len, 0, bytes);
      hs_pack_u64(u + m * vpm, vpm, w, out->data + out->len);
      out->len += keep;
    }
  }
  hs_free(u);
  hs_free(d);
}

static void fill(int64_t *v, size_t n, int shape, bool is32) {
  /* The walk of shape 1 stays within +-2^61 (no signed overflow). */
  int64_t x = (int64_t)(hs_test_rand(&g_rng) >> 3) - ((int64_t)1 << 60);
  for (size_t i = 0; i < n; i++) {
    uint64_t r = hs_test_rand(&g_rng);
    switch (shape) {
    case 0: v[i] = (int64_t)r; break;                      /* full range: wraps */
    case 1: v[i] = x += (int64_t)(r % 2001) - 1000; break; /* small deltas */
    case 2: v[i] = (i % 2) ? INT64_MIN : INT64_MAX; break; /* extreme deltas */
    case 3: v[i] = (int64_t)i * 1000; break;               /* constant delta */
    case 4: v[i] = (int64_t)(r % 1250000); break;          /* shuffled ids */
    default: v[i] = 42; break;                             /* all width 0 */
    }
    if (is32) v[i] = (int32_t)(uint32_t)(uint64_t)v[i];
    if (is32 && shape == 2) v[i] = (i % 2) ? INT32_MIN : INT32_MAX;
  }
}

/* Value i of the stream as the full decoder gives it, as 64 bits. */
static uint64_t want_at(bool is32, const int32_t *o32, const int64_t *o64, size_t i) {
  return is32 ? (uint64_t)(uint32_t)o32[i] : (uint64_t)o64[i];
}

static uint64_t got_as(bool is32, uint64_t x) {
  return is32 ? (uint64_t)(uint32_t)x : x;
}

static void test_random_access(void) {
  static const size_t shapes[][2] = {{128, 1}, {128, 2},  {128, 4},  {256, 8}, {384, 3},
                                     {512, 4}, {1152, 4}, {1024, 1}, {128, 4}, {128, 4}};
  static const size_t sizes[] = {0, 1, 2, 3, 33, 128, 129, 130, 1000, 4097, 20000};
  int runs = 0;
  for (int trial = 0; trial < 400; trial++) {
    hs_error err_ = {0}, *err = &err_;
    bool is32 = trial % 2 == 0;
    size_t n = trial < 22 ? sizes[trial / 2] : sizes[rnd(sizeof sizes / sizeof sizes[0])];
    if (trial >= 22 && rnd(3) == 0) n = rnd(50000);
    const size_t *sh = shapes[rnd(sizeof shapes / sizeof shapes[0])];
    int shape = (int)rnd(6);
    int extra = rnd(4) == 0 ? (int)rnd(70) : 0;
    bool cut_last = rnd(2) == 0;
    int64_t *v = hs_malloc(n * sizeof *v + 8);
    fill(v, n, shape, is32);
    hs_buf b;
    hs_buf_init(&b);
    encode_any(v, n, is32, sh[0], sh[1], extra, cut_last, &b);
    uint8_t *p = dup_exact(b.data, b.len);
    int64_t *o64 = hs_malloc(n * sizeof *o64 + 8);
    int32_t *o32 = hs_malloc(n * sizeof *o32 + 8);
    size_t used = 0;
    hs_status st = is32 ? hs_delta_binary_decode_i32(p, b.len, o32, n, &used, err)
                        : hs_delta_binary_decode_i64(p, b.len, o64, n, &used, err);
    CHECK_OK(st, err);
    for (size_t i = 0; st == HS_OK && i < n; i++) {
      if (want_at(is32, o32, o64, i) != (is32 ? (uint64_t)(uint32_t)v[i] : (uint64_t)v[i])) {
        CHECK(!"the test encoder and the decoder disagree");
        break;
      }
    }
    hs_delta_dir dir;
    CHECK_OK(hs_delta_dir_build(p, b.len, n, &dir, err), err);
    CHECK_EQ_INT(dir.total, n);
    CHECK_EQ_INT(dir.end, used);
    if (n > 0) {
      hs_delta_dir tight;
      CHECK(hs_delta_dir_build(p, b.len, n - 1, &tight, NULL) == HS_ERR_CORRUPT);
    }
    /* Increasing selections of every density. */
    static const uint64_t every[] = {1, 2, 3, 31, 200, 5000};
    for (size_t e = 0; e < sizeof every / sizeof every[0]; e++) {
      hs_delta_cursor c;
      hs_delta_cursor_init(&c, &dir, p, b.len);
      int bad = 0;
      for (size_t i = 0; i < n; i++) {
        if (rnd(every[e]) != 0) continue;
        uint64_t x = 0;
        st = hs_delta_cursor_get(&c, (int64_t)i, &x, err);
        if (st != HS_OK || got_as(is32, x) != want_at(is32, o32, o64, i)) bad++;
      }
      CHECK_EQ_INT(bad, 0);
      runs++;
    }
    /* Any order (repeats and backwards steps restart their block). */
    hs_delta_cursor c;
    hs_delta_cursor_init(&c, &dir, p, b.len);
    int bad = 0;
    for (int k = 0; n > 0 && k < 300; k++) {
      size_t i = (size_t)rnd(n);
      uint64_t x = 0;
      st = hs_delta_cursor_get(&c, (int64_t)i, &x, err);
      if (st != HS_OK || got_as(is32, x) != want_at(is32, o32, o64, i)) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    uint64_t x;
    CHECK(hs_delta_cursor_get(&c, (int64_t)n, &x, NULL) == HS_ERR_CORRUPT);
    CHECK(hs_delta_cursor_get(&c, -1, &x, NULL) == HS_ERR_CORRUPT);
    hs_delta_dir_free(&dir);
    hs_free(p);
    hs_free(v);
    hs_free(o64);
    hs_free(o32);
    hs_buf_free(&b);
  }
  CHECK(runs > 0);
}

/* Damaged streams: an error (HS_ERR_CORRUPT with a message) or values,
 * never a crash or a read outside the buffer. */
static void test_damaged(void) {
  for (int trial = 0; trial < 300; trial++) {
    bool is32 = trial % 2 == 1;
    size_t n = 1 + (size_t)rnd(trial < 150 ? 300 : 5000);
    int64_t *v = hs_malloc(n * sizeof *v);
    fill(v, n, (int)rnd(6), is32);
    hs_buf b;
    hs_buf_init(&b);
    encode_any(v, n, is32, trial % 3 ? 128 : 256, trial % 3 ? 4 : 2, 0, false, &b);
    uint8_t *orig = dup_exact(b.data, b.len);
    size_t len = b.len;
    int how = (int)rnd(3);
    if (how == 0) {
      len = (size_t)rnd(b.len); /* cut short */
    } else {
      for (int f = 0, flips = 1 + (int)rnd(4); f < flips; f++) {
        b.data[rnd(b.len)] = (uint8_t)hs_test_rand(&g_rng);
      }
    }
    uint8_t *p = dup_exact(b.data, len);
    hs_error err = {0};
    hs_delta_dir dir;
    hs_status st = hs_delta_dir_build(p, len, n + rnd(3), &dir, &err);
    if (st != HS_OK) {
      CHECK_EQ_INT(st, HS_ERR_CORRUPT);
      CHECK(strstr(err.message, "DELTA_BINARY_PACKED") != NULL);
    } else {
      hs_delta_cursor c;
      hs_delta_cursor_init(&c, &dir, p, len);
      for (uint64_t i = 0; i < dir.total + 2; i += 1 + rnd(40)) {
        uint64_t x;
        (void)hs_delta_cursor_get(&c, (int64_t)i, &x, NULL);
      }
      hs_delta_dir_free(&dir);
    }
    /* A directory of the intact stream over damaged bytes (what a stale
     * cache entry would do): still bounded by the buffer. */
    if (hs_delta_dir_build(orig, b.len, n, &dir, NULL) == HS_OK) {
      hs_delta_cursor c;
      hs_delta_cursor_init(&c, &dir, p, len);
      for (uint64_t i = 0; i < dir.total; i += 1 + rnd(40)) {
        uint64_t x;
        (void)hs_delta_cursor_get(&c, (int64_t)i, &x, NULL);
      }
      hs_delta_dir_free(&dir);
    }
    hs_free(p);
    hs_free(orig);
    hs_free(v);
    hs_buf_free(&b);
  }
  /* Hand-made: a bit width over 64, more values than the page holds, more
   * blocks than the bytes can carry. */
  hs_buf b;
  hs_buf_init(&b);
  int64_t v[300];
  for (int i = 0; i < 300; i++) v[i] = i * 7;
  encode_any(v, 300, false, 128, 4, 0, false, &b);
  hs_delta_dir dir;
  hs_error err = {0};
  CHECK_OK(hs_delta_dir_build(b.data, b.len, 300, &dir, &err), &err);
  size_t first_widths = dir.mb[0].offset - 4; /* the block's 4 width bytes */
  hs_delta_dir_free(&dir);
  b.data[first_widths] = 65;
  CHECK(hs_delta_dir_build(b.data, b.len, 300, &dir, &err) == HS_ERR_CORRUPT);
  CHECK(strstr(err.message, "over 64") != NULL);
  err = (hs_error){0};
  const uint8_t many[] = {0x80, 0x01, 0x04, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x00};
  CHECK(hs_delta_dir_build(many, sizeof many, UINT64_MAX, &dir, &err) == HS_ERR_CORRUPT);
  CHECK(strstr(err.message, "blocks") != NULL);
  err = (hs_error){0};
  CHECK(hs_delta_dir_build(many, sizeof many, 10, &dir, &err) == HS_ERR_CORRUPT);
  CHECK(strstr(err.message, "at most 10") != NULL);
  CHECK(hs_delta_dir_build(many, 3, 10, &dir, &err) == HS_ERR_CORRUPT);
  hs_buf_free(&b);
}

int main(void) {
  test_random_access();
  test_damaged();
  return hs_test_finish("test_delta_gather");
}
