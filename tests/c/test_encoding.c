/*
 * test_encoding.c — Parquet encodings: hand-made vectors from Encodings.md,
 * randomized encode/decode round trips over many sizes and bit widths,
 * extreme values, and truncation (every prefix of an encoding must decode
 * correctly or fail cleanly; run under ASan to catch over-reads — inputs are
 * copied to exact-size heap blocks for that reason).
 */
#include <limits.h>

#include "hs_test.h"
#include "parquet/encoding.h"

static const size_t k_sizes[] = {0, 1, 7, 8, 9, 127, 128, 129, 1000, 100000};
#define N_SIZES (sizeof k_sizes / sizeof k_sizes[0])

static uint64_t g_rng = 12345;

static uint8_t *dup_exact(const uint8_t *p, size_t n) {
  uint8_t *d = hs_malloc(n ? n : 1);
  if (n) memcpy(d, p, n);
  return d;
}

/* Values of `bw` bits in one of several shapes: random, runs, constant. */
static void fill_u32(uint32_t *v, size_t n, int bw, int shape) {
  uint64_t mask = bw == 32 ? 0xffffffffu : (((uint64_t)1 << bw) - 1);
  size_t i = 0;
  while (i < n) {
    uint32_t x = (uint32_t)(hs_test_rand(&g_rng) & mask);
    size_t run = 1;
    if (shape == 1) run = 1 + hs_test_rand(&g_rng) % 20;
    if (shape == 2) run = n;
    for (size_t k = 0; k < run && i < n; k++) v[i++] = x;
  }
}

/* ------------------------------------------------------------ RLE */

static void test_bit_width(void) {
  CHECK_EQ_INT(hs_bit_width(0), 0);
  CHECK_EQ_INT(hs_bit_width(1), 1);
  CHECK_EQ_INT(hs_bit_width(2), 2);
  CHECK_EQ_INT(hs_bit_width(255), 8);
  CHECK_EQ_INT(hs_bit_width(256), 9);
  CHECK_EQ_INT(hs_bit_width(UINT32_MAX), 32);
  CHECK_EQ_INT(hs_bit_width(UINT64_MAX), 64);
}

static void test_rle_spec_vectors(void) {
  hs_error err_ = {0}, *err = &err_;
  /* Encodings.md: 0..7 bit-packed with width 3. */
  const uint8_t packed[] = {0x03, 0x88, 0xC6, 0xFA};
  uint32_t out[8];
  size_t used = 0;
  CHECK_OK(hs_rle_decode_u32(packed, sizeof packed, 3, out, 8, &used, err), err);
  for (uint32_t i = 0; i < 8; i++) CHECK_EQ_INT(out[i], i);
  CHECK_EQ_INT(used, 4);
  /* Same values, legacy BIT_PACKED (MSB first). */
  const uint8_t legacy[] = {0x05, 0x39, 0x77};
  int16_t lv[8];
  CHECK_OK(hs_bitpacked_legacy_decode_levels(legacy, sizeof legacy, 3, lv, 8, &used, err), err);
  for (int i = 0; i < 8; i++) CHECK_EQ_INT(lv[i], i);
  CHECK_EQ_INT(used, 3);
  /* An RLE run: 10 copies of 5 with width 3 (1 value byte). */
  const uint8_t run[] = {20, 5};
  uint32_t r[10];
  CHECK_OK(hs_rle_decode_u32(run, sizeof run, 3, r, 10, &used, err), err);
  for (int i = 0; i < 10; i++) CHECK_EQ_INT(r[i], 5);
  /* Value wider than the bit width is corrupt. */
  const uint8_t wide[] = {20, 9};
  CHECK(hs_rle_decode_u32(wide, sizeof wide, 3, r, 10, NULL, NULL) == HS_ERR_CORRUPT);
  /* Encoder: 10 copies become one RLE run; 0..7 one bit-packed group. */
  uint32_t ten[10] = {5, 5, 5, 5, 5, 5, 5, 5, 5, 5};
  hs_buf b;
  hs_buf_init(&b);
  CHECK_OK(hs_rle_encode_u32(ten, 10, 3, &b, err), err);
  CHECK(b.len == 2 && b.data[0] == 20 && b.data[1] == 5);
  b.len = 0;
  uint32_t seq[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK_OK(hs_rle_encode_u32(seq, 8, 3, &b, err), err);
  CHECK(b.len == 4 && memcmp(b.data, packed, 4) == 0);
  /* A value too wide for the encoder is refused. */
  b.len = 0;
  CHECK(hs_rle_encode_u32(seq, 8, 2, &b, NULL) == HS_ERR_INVALID_ARG);
  hs_buf_free(&b);
  /* Width 0 with no runs at all decodes zeros. */
  CHECK_OK(hs_rle_decode_u32(NULL, 0, 0, r, 10, &used, err), err);
  CHECK(r[0] == 0 && r[9] == 0);
}

/* Every prefix of an encoding: decode fails cleanly or yields the values. */
static void check_rle_prefixes(const hs_buf *enc, int bw, const uint32_t *want, size_t n) {
  uint32_t *out = hs_malloc(n * sizeof *out + 1);
  for (size_t cut = 0; cut < enc->len; cut++) {
    uint8_t *p = dup_exact(enc->data, cut);
    hs_error err_ = {0}, *err = &err_;
    size_t used = 0;
    hs_status st = hs_rle_decode_u32(p, cut, bw, out, n, &used, err);
    if (st == HS_OK) {
      CHECK(used <= cut);
      CHECK(memcmp(out, want, n * sizeof *out) == 0);
    } else {
      CHECK(st == HS_ERR_CORRUPT && err->message[0] != '\0');
    }
    hs_free(p);
  }
  hs_free(out);
}

static void test_rle_roundtrip(void) {
  for (size_t si = 0; si < N_SIZES; si++) {
    size_t n = k_sizes[si];
    uint32_t *v = hs_malloc(n * sizeof *v + 1);
    uint32_t *out = hs_malloc(n * sizeof *out + 1);
    int16_t *lv = hs_malloc(n * sizeof *lv + 1);
    int16_t *lout = hs_malloc(n * sizeof *lout + 1);
    for (int bw = 0; bw <= 32; bw++) {
      for (int shape = 0; shape < 3; shape++) {
        if (n == 100000 && bw % 5 != 0) continue; /* keep the big size quick */
        fill_u32(v, n, bw, shape);
        hs_buf b;
        hs_buf_init(&b);
        hs_error err_ = {0}, *err = &err_;
        CHECK_OK(hs_rle_encode_u32(v, n, bw, &b, err), err);
        /* Trailing garbage after the stream must be ignored. */
        size_t enc_len = b.len;
        hs_buf_append(&b, "\xff\xff\xff", 3);
        uint8_t *p = dup_exact(b.data, b.len);
        size_t used = 0;
        CHECK_OK(hs_rle_decode_u32(p, b.len, bw, out, n, &used, err), err);
        CHECK(n == 0 || memcmp(out, v, n * sizeof *v) == 0);
        CHECK(used <= enc_len);
        hs_free(p);
        b.len = enc_len;
        if (n <= 129 || (n == 1000 && bw % 7 == 0)) check_rle_prefixes(&b, bw, v, n);
        /* Levels: the same through int16. */
        if (bw <= 16) {
          for (size_t i = 0; i < n; i++) lv[i] = (int16_t)(v[i] & 0x7fff);
          int lbw = bw > 15 ? 15 : bw;
          b.len = 0;
          CHECK_OK(hs_rle_encode_levels(lv, n, lbw, &b, err), err);
          p = dup_exact(b.data, b.len);
          CHECK_OK(hs_rle_decode_levels(p, b.len, lbw, lout, n, &used, err), err);
          CHECK(n == 0 || memcmp(lout, lv, n * sizeof *lv) == 0);
          CHECK_EQ_INT(used, b.len);
          hs_free(p);
        }
        hs_buf_free(&b);
      }
    }
    hs_free(v);
    hs_free(out);
    hs_free(lv);
    hs_free(lout);
  }
}

/* Runs chosen to exercise the literal/RLE boundary: 7, 8, 9 repeats after
 * partial literal groups. */
static void test_rle_boundaries(void) {
  const size_t lits[] = {0, 1, 3, 7, 8, 9, 15};
  const size_t reps[] = {7, 8, 9, 10, 15, 16, 17, 100};
  for (size_t a = 0; a < sizeof lits / sizeof lits[0]; a++) {
    for (size_t r = 0; r < sizeof reps / sizeof reps[0]; r++) {
      uint32_t v[200];
      size_t n = 0;
      for (size_t i = 0; i < lits[a]; i++) v[n++] = (uint32_t)(i % 4);
      for (size_t i = 0; i < reps[r]; i++) v[n++] = 3;
      for (size_t i = 0; i < 5; i++) v[n++] = (uint32_t)i;
      hs_buf b;
      hs_buf_init(&b);
      hs_error err_ = {0}, *err = &err_;
      uint32_t out[200];
      CHECK_OK(hs_rle_encode_u32(v, n, 3, &b, err), err);
      CHECK_OK(hs_rle_decode_u32(b.data, b.len, 3, out, n, NULL, err), err);
      CHECK(memcmp(out, v, n * sizeof *v) == 0);
      hs_buf_free(&b);
    }
  }
}

static void test_dict_indices(void) {
  for (size_t si = 0; si < N_SIZES; si++) {
    size_t n = k_sizes[si];
    const uint32_t dict_sizes[] = {1, 2, 3, 100, 65536, 1u << 31};
    uint32_t *v = hs_malloc(n * sizeof *v + 1);
    uint32_t *out = hs_malloc(n * sizeof *v + 1);
    for (size_t d = 0; d < sizeof dict_sizes / sizeof dict_sizes[0]; d++) {
      for (size_t i = 0; i < n; i++) {
        v[i] = (uint32_t)(hs_test_rand(&g_rng) % dict_sizes[d]);
        if (i > 0 && hs_test_rand(&g_rng) % 2) v[i] = v[i - 1];
      }
      hs_buf b;
      hs_buf_init(&b);
      hs_error err_ = {0}, *err = &err_;
      CHECK_OK(hs_dict_indices_encode(v, n, dict_sizes[d], &b, err), err);
      CHECK_EQ_INT(b.data[0], hs_bit_width(dict_sizes[d] - 1));
      uint8_t *p = dup_exact(b.data, b.len);
      CHECK_OK(hs_dict_indices_decode(p, b.len, out, n, err), err);
      CHECK(n == 0 || memcmp(out, v, n * sizeof *v) == 0);
      hs_free(p);
      hs_buf_free(&b);
    }
    hs_free(v);
    hs_free(out);
  }
  uint32_t bad = 5;
  hs_buf b;
  hs_buf_init(&b);
  CHECK(hs_dict_indices_encode(&bad, 1, 5, &b, NULL) == HS_ERR_INVALID_ARG);
  const uint8_t wide[] = {33, 2, 0};
  uint32_t o;
  CHECK(hs_dict_indices_decode(wide, sizeof wide, &o, 1, NULL) == HS_ERR_CORRUPT);
  hs_buf_free(&b);
}

/* ------------------------------------------------------------ PLAIN */

static void test_plain_bool(void) {
  for (size_t si = 0; si < N_SIZES; si++) {
    size_t n = k_sizes[si];
    size_t bytes = n / 8 + 2;
    uint8_t *bits = hs_malloc(bytes);
    for (size_t i = 0; i < bytes; i++) bits[i] = (uint8_t)hs_test_rand(&g_rng);
    uint8_t *out = hs_malloc(n + 1);
    for (int64_t off = 0; off < 9; off++) {
      if (n + (size_t)off > (bytes * 8)) continue;
      hs_buf b;
      hs_buf_init(&b);
      hs_error err_ = {0}, *err = &err_;
      CHECK_OK(hs_plain_encode_bool_bits(bits, off, n, &b, err), err);
      CHECK_EQ_INT(b.len, (n + 7) / 8);
      uint8_t *p = dup_exact(b.data, b.len);
      size_t used = 0;
      CHECK_OK(hs_plain_decode_bool(p, b.len, out, n, &used, err), err);
      CHECK_EQ_INT(used, b.len);
      int bad = 0;
      for (size_t i = 0; i < n; i++) {
        size_t bit = i + (size_t)off;
        bad += out[i] != ((bits[bit / 8] >> (bit % 8)) & 1);
      }
      CHECK_EQ_INT(bad, 0);
      /* Padding bits of the last byte are zero. */
      if (n % 8) CHECK((b.data[b.len - 1] >> (n % 8)) == 0);
      if (b.len > 0) CHECK(hs_plain_decode_bool(p, b.len - 1, out, n, NULL, NULL) != HS_OK);
      hs_free(p);
      hs_buf_free(&b);
    }
    hs_free(bits);
    hs_free(out);
  }
}

/* Random byte arrays with shared prefixes, in Arrow layout. */
static void make_strings(size_t n, int32_t *offsets, hs_buf *data, size_t max_len) {
  hs_buf_init(data);
  offsets[0] = 0;
  for (size_t i = 0; i < n; i++) {
    size_t len = max_len ? hs_test_rand(&g_rng) % (max_len + 1) : 0;
    size_t keep = 0;
    if (i > 0 && hs_test_rand(&g_rng) % 2) {
      keep = (size_t)(offsets[i] - offsets[i - 1]);
      if (keep > len) keep = len;
    }
    for (size_t k = 0; k < len; k++) {
      uint8_t c =
          k < keep ? data->data[offsets[i - 1] + k] : (uint8_t)('a' + hs_test_rand(&g_rng) % 3);
      hs_buf_append_byte(data, c);
    }
    offsets[i + 1] = (int32_t)data->len;
  }
}

typedef hs_status (*ba_encode_fn)(const int32_t *, const uint8_t *, size_t, hs_buf *, hs_error *);
typedef hs_status (*ba_decode_fn)(const uint8_t *, size_t, size_t, int32_t *, hs_buf *, size_t *,
                                  hs_error *);

static void roundtrip_byte_arrays(const char *name, ba_encode_fn enc, ba_decode_fn dec) {
  for (size_t si = 0; si < N_SIZES; si++) {
    size_t n = k_sizes[si];
    const size_t max_lens[] = {0, 1, 10, 300};
    for (size_t m = 0; m < 4; m++) {
      int32_t *offsets = hs_malloc((n + 1) * sizeof *offsets);
      int32_t *got = hs_malloc((n + 1) * sizeof *got);
      hs_buf data;
      make_strings(n, offsets, &data, n == 100000 ? max_lens[m] / 10 : max_lens[m]);
      hs_buf b;
      hs_buf_init(&b);
      hs_error err_ = {0}, *err = &err_;
      CHECK_OK(enc(offsets, data.data, n, &b, err), err);
      size_t enc_len = b.len;
      hs_buf_append(&b, "\x07\x07", 2);
      uint8_t *p = dup_exact(b.data, b.len);
      /* Decode after existing bytes: offsets[0] is where appending starts. */
      hs_buf out;
      hs_buf_init(&out);
      hs_buf_append(&out, "xyz", 3);
      got[0] = 3;
      size_t used = 0;
      hs_status st = dec(p, b.len, n, got, &out, &used, err);
      CHECK_OK(st, err);
      if (st == HS_OK) {
        CHECK_EQ_INT(used, enc_len);
        CHECK_EQ_INT(out.len, data.len + 3);
        int bad = 0;
        for (size_t i = 0; i <= n; i++) bad += got[i] != offsets[i] + 3;
        CHECK_EQ_INT(bad, 0);
        CHECK(data.len == 0 || memcmp(out.data + 3, data.data, data.len) == 0);
      }
      hs_free(p);
      /* Truncations. */
      if (n <= 129 && m < 3) {
        for (size_t cut = 0; cut < enc_len; cut++) {
          p = dup_exact(b.data, cut);
          out.len = 0;
          got[0] = 0;
          hs_error e2_ = {0}, *e2 = &e2_;
          st = dec(p, cut, n, got, &out, &used, e2);
          if (st == HS_OK) {
            CHECK(used <= cut);
            CHECK(data.len == 0 || memcmp(out.data, data.data, data.len) == 0);
          } else {
            CHECK(e2->message[0] != '\0');
          }
          hs_free(p);
        }
      }
      if (hs_test_failures) fprintf(stderr, "  (%s, n=%zu, max_len=%zu)\n", name, n, max_lens[m]);
      hs_buf_free(&out);
      hs_buf_free(&b);
      hs_buf_free(&data);
      hs_free(offsets);
      hs_free(got);
    }
  }
}

static void test_byte_arrays(void) {
  roundtrip_byte_arrays("PLAIN", hs_plain_encode_byte_array, hs_plain_decode_byte_array);
  roundtrip_byte_arrays("DELTA_LENGTH", hs_delta_length_encode, hs_delta_length_decode);
  roundtrip_byte_arrays("DELTA_BYTE_ARRAY", hs_delta_byte_array_encode, hs_delta_byte_array_decode);
  /* A PLAIN length running past the page. */
  const uint8_t bad[] = {5, 0, 0, 0, 'a', 'b'};
  int32_t off[2] = {0, 0};
  hs_buf d;
  hs_buf_init(&d);
  CHECK(hs_plain_decode_byte_array(bad, sizeof bad, 1, off, &d, NULL, NULL) == HS_ERR_CORRUPT);
  /* The third length is cut: earlier values must not write past the space
   * reserved in a full buffer (fuzz regression). */
  const uint8_t cut3[] = {1, 0, 0, 0, 'a', 2, 0, 0, 0, 'b', 'c', 0};
  int32_t off3[4] = {0};
  hs_buf full;
  hs_buf_init(&full);
  hs_buf_reserve(&full, 10);
  memset(full.data, 'x', full.cap);
  full.len = full.cap;
  off3[0] = (int32_t)full.len;
  CHECK(hs_plain_decode_byte_array(cut3, sizeof cut3, 3, off3, &full, NULL, NULL) ==
        HS_ERR_CORRUPT);
  hs_buf_free(&full);
  /* Errors must survive a NULL hs_error (nested decoders add context). */
  const uint8_t zeros[8] = {0};
  CHECK(hs_delta_length_decode(zeros, sizeof zeros, 0, off, &d, NULL, NULL) == HS_ERR_CORRUPT);
  CHECK(hs_delta_byte_array_decode(zeros, sizeof zeros, 0, off, &d, NULL, NULL) == HS_ERR_CORRUPT);
  hs_buf_free(&d);
}

/* ------------------------------------------------------------ DELTA */

static void test_delta_spec_vectors(void) {
  hs_error err_ = {0}, *err = &err_;
  hs_buf b;
  hs_buf_init(&b);
  /* Example 1: 1 2 3 4 5 -> deltas all 1, min delta 1, widths 0. */
  const int32_t ex1[] = {1, 2, 3, 4, 5};
  const uint8_t ex1_enc[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0};
  CHECK_OK(hs_delta_binary_encode_i32(ex1, 5, &b, err), err);
  CHECK(b.len == sizeof ex1_enc && memcmp(b.data, ex1_enc, sizeof ex1_enc) == 0);
  int32_t out[8];
  size_t used = 0;
  CHECK_OK(hs_delta_binary_decode_i32(ex1_enc, sizeof ex1_enc, out, 5, &used, err), err);
  CHECK(memcmp(out, ex1, sizeof ex1) == 0);
  CHECK_EQ_INT(used, sizeof ex1_enc);
  /* Example 2: 7 5 3 1 2 3 4 5 -> min delta -2, relative 0 0 0 3 3 3 3,
   * width 2: one 8-byte miniblock. */
  const int32_t ex2[] = {7, 5, 3, 1, 2, 3, 4, 5};
  const uint8_t ex2_enc[] = {0x80, 0x01, 0x04, 0x08, 0x0E, 0x03, 0x02, 0, 0,
                             0,    0xC0, 0x3F, 0,    0,    0,    0,    0, 0};
  b.len = 0;
  CHECK_OK(hs_delta_binary_encode_i32(ex2, 8, &b, err), err);
  CHECK(b.len == sizeof ex2_enc && memcmp(b.data, ex2_enc, sizeof ex2_enc) == 0);
  CHECK_OK(hs_delta_binary_decode_i32(ex2_enc, sizeof ex2_enc, out, 8, &used, err), err);
  CHECK(memcmp(out, ex2, sizeof ex2) == 0);
  CHECK_EQ_INT(used, sizeof ex2_enc);
  /* Fewer values requested than the stream holds: consumed is still the
   * stream's end. */
  CHECK_OK(hs_delta_binary_decode_i32(ex2_enc, sizeof ex2_enc, out, 3, &used, err), err);
  CHECK_EQ_INT(used, sizeof ex2_enc);
  /* More values requested than the stream holds. */
  CHECK(hs_delta_binary_decode_i32(ex2_enc, sizeof ex2_enc, out, 9, NULL, NULL) == HS_ERR_CORRUPT);
  /* A block size that is not a multiple of 128. */
  const uint8_t bad_block[] = {0x40, 0x04, 0x01, 0x00};
  CHECK(hs_delta_binary_decode_i32(bad_block, sizeof bad_block, out, 1, NULL, NULL) ==
        HS_ERR_CORRUPT);
  /* Last miniblock cut short (padding missing) is tolerated. */
  CHECK_OK(hs_delta_binary_decode_i32(ex2_enc, 12, out, 8, &used, err), err);
  CHECK(memcmp(out, ex2, sizeof ex2) == 0);
  hs_buf_free(&b);
}

static void fill_i64(int64_t *v, size_t n, int shape) {
  int64_t x = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = hs_test_rand(&g_rng);
    switch (shape) {
    case 0: v[i] = (int64_t)r; break; /* full range */
    case 1:
      x += (int64_t)(r % 200) - 100;
      v[i] = x;
      break;                                               /* small deltas */
    case 2: v[i] = (i % 2) ? INT64_MIN : INT64_MAX; break; /* extreme deltas */
    case 3: v[i] = (int64_t)i * 1000; break;               /* constant delta */
    case 4: v[i] = (r % 3 == 0) ? INT64_MIN : (int64_t)(r % 5); break;
    default: v[i] = 42; break;
    }
  }
}

static void test_delta_roundtrip(void) {
  for (size_t si = 0; si < N_SIZES; si++) {
    size_t n = k_sizes[si];
    int64_t *v = hs_malloc(n * sizeof *v + 1);
    int64_t *o = hs_malloc(n * sizeof *o + 1);
    int32_t *v32 = hs_malloc(n * sizeof *v32 + 1);
    int32_t *o32 = hs_malloc(n * sizeof *o32 + 1);
    for (int shape = 0; shape < 6; shape++) {
      fill_i64(v, n, shape);
      hs_buf b;
      hs_buf_init(&b);
      hs_error err_ = {0}, *err = &err_;
      CHECK_OK(hs_delta_binary_encode_i64(v, n, &b, err), err);
      size_t enc_len = b.len;
      hs_buf_append(&b, "\x01\x02\x03", 3);
      uint8_t *p = dup_exact(b.data, b.len);
      size_t used = 0;
      CHECK_OK(hs_delta_binary_decode_i64(p, b.len, o, n, &used, err), err);
      CHECK(n == 0 || memcmp(o, v, n * sizeof *v) == 0);
      CHECK_EQ_INT(used, enc_len);
      hs_free(p);
      if (n <= 129) {
        for (size_t cut = 0; cut < enc_len; cut++) {
          p = dup_exact(b.data, cut);
          hs_status st = hs_delta_binary_decode_i64(p, cut, o, n, &used, NULL);
          if (st == HS_OK) CHECK(n == 0 || memcmp(o, v, n * sizeof *v) == 0);
          hs_free(p);
        }
      }
      /* INT32 with the same shapes truncated to 32 bits (wrapping). */
      for (size_t i = 0; i < n; i++) v32[i] = (int32_t)(uint32_t)(uint64_t)v[i];
      if (shape == 2) {
        for (size_t i = 0; i < n; i++) v32[i] = (i % 2) ? INT32_MIN : INT32_MAX;
      }
      b.len = 0;
      CHECK_OK(hs_delta_binary_encode_i32(v32, n, &b, err), err);
      p = dup_exact(b.data, b.len);
      CHECK_OK(hs_delta_binary_decode_i32(p, b.len, o32, n, &used, err), err);
      CHECK(n == 0 || memcmp(o32, v32, n * sizeof *v32) == 0);
      CHECK_EQ_INT(used, b.len);
      /* INT32 miniblock widths never exceed 32. */
      hs_free(p);
      if (n <= 129) {
        for (size_t cut = 0; cut < b.len; cut++) {
          p = dup_exact(b.data, cut);
          hs_status st = hs_delta_binary_decode_i32(p, cut, o32, n, &used, NULL);
          if (st == HS_OK) CHECK(n == 0 || memcmp(o32, v32, n * sizeof *v32) == 0);
          hs_free(p);
        }
      }
      hs_buf_free(&b);
    }
    hs_free(v);
    hs_free(o);
    hs_free(v32);
    hs_free(o32);
  }
}

static void test_delta_fixed(void) {
  const int widths[] = {1, 4, 16};
  for (size_t si = 0; si < N_SIZES; si++) {
    size_t n = k_sizes[si];
    for (size_t w = 0; w < 3; w++) {
      int width = widths[w];
      size_t bytes = n * (size_t)width;
      uint8_t *vals = hs_malloc(bytes + 1);
      for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < width; k++) {
          /* Share a random-length prefix with the previous value. */
          bool same = i > 0 && k < (int)(hs_test_rand(&g_rng) % (size_t)(width + 1));
          vals[i * width + k] = same ? vals[(i - 1) * width + k] : (uint8_t)hs_test_rand(&g_rng);
        }
      }
      int32_t *offsets = hs_malloc((n + 1) * sizeof *offsets);
      for (size_t i = 0; i <= n; i++) offsets[i] = (int32_t)(i * (size_t)width);
      hs_buf b;
      hs_buf_init(&b);
      hs_error err_ = {0}, *err = &err_;
      CHECK_OK(hs_delta_byte_array_encode(offsets, vals, n, &b, err), err);
      uint8_t *p = dup_exact(b.data, b.len);
      uint8_t *out = hs_malloc(bytes + 1);
      size_t used = 0;
      CHECK_OK(hs_delta_byte_array_decode_fixed(p, b.len, n, width, out, &used, err), err);
      CHECK(bytes == 0 || memcmp(out, vals, bytes) == 0);
      CHECK_EQ_INT(used, b.len);
      if (n > 0) {
        CHECK(hs_delta_byte_array_decode_fixed(p, b.len, n, width + 1, out, NULL, NULL) ==
              HS_ERR_CORRUPT);
      }
      hs_free(p);
      hs_free(out);
      hs_free(offsets);
      hs_free(vals);
      hs_buf_free(&b);
    }
  }
}

/* ------------------------------------------------------ BYTE_STREAM_SPLIT */

static void test_byte_stream_split(void) {
  /* Spec shape: two floats -> four streams of two bytes. */
  const uint8_t vals[8] = {0xA0, 0xA1, 0xA2, 0xA3, 0xB0, 0xB1, 0xB2, 0xB3};
  const uint8_t split[8] = {0xA0, 0xB0, 0xA1, 0xB1, 0xA2, 0xB2, 0xA3, 0xB3};
  hs_buf b;
  hs_buf_init(&b);
  hs_error err_ = {0}, *err = &err_;
  CHECK_OK(hs_byte_stream_split_encode(vals, 2, 4, &b, err), err);
  CHECK(b.len == 8 && memcmp(b.data, split, 8) == 0);
  uint8_t out8[8];
  CHECK_OK(hs_byte_stream_split_decode(split, 8, 4, out8, 2, err), err);
  CHECK(memcmp(out8, vals, 8) == 0);
  CHECK(hs_byte_stream_split_decode(split, 7, 4, out8, 2, NULL) == HS_ERR_CORRUPT);
  hs_buf_free(&b);
  const int widths[] = {1, 2, 3, 4, 5, 8, 12, 16};
  for (size_t si = 0; si < N_SIZES; si++) {
    size_t n = k_sizes[si];
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
      size_t bytes = n * (size_t)widths[w];
      uint8_t *v = hs_malloc(bytes + 1), *o = hs_malloc(bytes + 1);
      for (size_t i = 0; i < bytes; i++) v[i] = (uint8_t)hs_test_rand(&g_rng);
      hs_buf_init(&b);
      CHECK_OK(hs_byte_stream_split_encode(v, n, widths[w], &b, err), err);
      CHECK_EQ_INT(b.len, bytes);
      /* Stream k holds byte k of every value. */
      if (n > 1 && widths[w] > 1) CHECK(b.data[n] == v[1]);
      uint8_t *p = dup_exact(b.data, b.len);
      CHECK_OK(hs_byte_stream_split_decode(p, b.len, widths[w], o, n, err), err);
      CHECK(bytes == 0 || memcmp(o, v, bytes) == 0);
      hs_free(p);
      hs_free(v);
      hs_free(o);
      hs_buf_free(&b);
    }
  }
}

int main(void) {
  test_bit_width();
  test_rle_spec_vectors();
  test_rle_roundtrip();
  test_rle_boundaries();
  test_dict_indices();
  test_plain_bool();
  test_byte_arrays();
  test_delta_spec_vectors();
  test_delta_roundtrip();
  test_delta_fixed();
  test_byte_stream_split();
  return hs_test_finish("test_encoding");
}
