/*
 * test_compress.c — page codecs: round trips for every supported codec over
 * several sizes and data shapes, exact-size enforcement (one byte more or
 * less than the real size is corrupt), corrupt and truncated inputs (must
 * fail cleanly, never crash), and the format variants readers meet in the
 * wild: concatenated gzip members, zlib-wrapped deflate, Hadoop-framed LZ4
 * with several blocks, and bare LZ4 blocks under codec LZ4.
 */
#include <lz4.h>
#include <zlib.h>

#include "hs_test.h"
#include "parquet/compress.h"
#include "parquet/metadata.h"

static uint64_t g_rng = 777;

static const int32_t k_codecs[] = {
    HS_PQ_CODEC_UNCOMPRESSED, HS_PQ_CODEC_SNAPPY,  HS_PQ_CODEC_GZIP,  HS_PQ_CODEC_ZSTD,
    HS_PQ_CODEC_LZ4,          HS_PQ_CODEC_LZ4_RAW, HS_PQ_CODEC_BROTLI};
#define N_CODECS (sizeof k_codecs / sizeof k_codecs[0])

static uint8_t *dup_exact(const uint8_t *p, size_t n) {
  uint8_t *d = hs_malloc(n ? n : 1);
  if (n) memcpy(d, p, n);
  return d;
}

static void fill(uint8_t *p, size_t n, int shape) {
  for (size_t i = 0; i < n; i++) {
    switch (shape) {
    case 0: p[i] = (uint8_t)hs_test_rand(&g_rng); break;
    case 1: p[i] = (uint8_t)(i / 100); break;
    default: p[i] = (uint8_t) "parquet "[i % 8]; break;
    }
  }
}

static void test_roundtrips(void) {
  const size_t sizes[] = {0, 1, 7, 100, 4096, 100000, 1 << 20};
  for (size_t c = 0; c < N_CODECS; c++) {
    int32_t codec = k_codecs[c];
    CHECK(hs_pq_codec_supported(codec));
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      for (int shape = 0; shape < 3; shape++) {
        size_t n = sizes[s];
        uint8_t *src = hs_malloc(n + 1);
        fill(src, n, shape);
        hs_buf b;
        hs_buf_init(&b);
        hs_error e = {0}, *err = &e;
        CHECK_OK(hs_pq_compress(codec, 0, src, n, &b, err), err);
        uint8_t *comp = dup_exact(b.data, b.len);
        uint8_t *dst = hs_malloc(n + 2);
        CHECK_OK(hs_pq_decompress(codec, comp, b.len, dst, n, err), err);
        CHECK(n == 0 || memcmp(dst, src, n) == 0);
        /* The wrong size either way is corrupt. */
        hs_error e2 = {0};
        hs_status st = hs_pq_decompress(codec, comp, b.len, dst, n + 1, &e2);
        CHECK(st == HS_ERR_CORRUPT);
        if (st == HS_ERR_CORRUPT && codec != HS_PQ_CODEC_LZ4 && codec != HS_PQ_CODEC_LZ4_RAW) {
          CHECK(strstr(e2.message, "does not match the page header's") != NULL);
        }
        if (n > 0) {
          hs_error e3 = {0};
          CHECK(hs_pq_decompress(codec, comp, b.len, dst, n - 1, &e3) == HS_ERR_CORRUPT);
          CHECK(e3.message[0] != '\0');
        }
        /* Truncated inputs fail cleanly (a few cut points). */
        if (n > 0 && codec != HS_PQ_CODEC_UNCOMPRESSED) {
          for (size_t cut = 0; cut < b.len; cut += 1 + b.len / 16) {
            uint8_t *p = dup_exact(b.data, cut);
            CHECK(hs_pq_decompress(codec, p, cut, dst, n, NULL) != HS_OK);
            hs_free(p);
          }
        }
        /* Levels pass through. */
        if (codec == HS_PQ_CODEC_ZSTD || codec == HS_PQ_CODEC_GZIP) {
          b.len = 0;
          CHECK_OK(hs_pq_compress(codec, 9, src, n, &b, err), err);
          CHECK_OK(hs_pq_decompress(codec, b.data, b.len, dst, n, err), err);
          CHECK(n == 0 || memcmp(dst, src, n) == 0);
        }
        hs_free(comp);
        hs_free(dst);
        hs_free(src);
        hs_buf_free(&b);
      }
    }
  }
}

/* Random byte flips in compressed data: any status, no crash (ASan). */
static void test_corrupt(void) {
  const size_t n = 50000;
  uint8_t *src = hs_malloc(n), *dst = hs_malloc(n);
  fill(src, n, 1);
  for (size_t c = 0; c < N_CODECS; c++) {
    hs_buf b;
    hs_buf_init(&b);
    CHECK_OK(hs_pq_compress(k_codecs[c], 0, src, n, &b, NULL), (hs_error *)NULL);
    for (int trial = 0; trial < 200; trial++) {
      uint8_t *p = dup_exact(b.data, b.len);
      for (int k = 0; k < 3; k++) p[hs_test_rand(&g_rng) % b.len] ^= (uint8_t)(1 + trial % 255);
      hs_error e = {0};
      hs_status st = hs_pq_decompress(k_codecs[c], p, b.len, dst, n, &e);
      CHECK(st == HS_OK || (st == HS_ERR_CORRUPT && e.message[0] != '\0'));
      hs_free(p);
    }
    hs_buf_free(&b);
  }
  /* Pure garbage. */
  uint8_t junk[64];
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)hs_test_rand(&g_rng);
  for (size_t c = 1; c < N_CODECS; c++) {
    CHECK(hs_pq_decompress(k_codecs[c], junk, sizeof junk, dst, n, NULL) != HS_OK);
  }
  hs_free(src);
  hs_free(dst);
}

static void test_gzip_variants(void) {
  const size_t n = 30000;
  uint8_t *src = hs_malloc(n), *dst = hs_malloc(n);
  fill(src, n, 2);
  src[0] = 'A';
  src[n - 1] = 'Z';
  hs_error e = {0}, *err = &e;
  /* Two members, each a separate gzip stream of half the page. */
  hs_buf b;
  hs_buf_init(&b);
  CHECK_OK(hs_pq_compress(HS_PQ_CODEC_GZIP, 0, src, n / 2, &b, err), err);
  CHECK_OK(hs_pq_compress(HS_PQ_CODEC_GZIP, 0, src + n / 2, n - n / 2, &b, err), err);
  CHECK(b.data[0] == 0x1f && b.data[1] == 0x8b);
  uint8_t *p = dup_exact(b.data, b.len);
  CHECK_OK(hs_pq_decompress(HS_PQ_CODEC_GZIP, p, b.len, dst, n, err), err);
  CHECK(memcmp(dst, src, n) == 0);
  hs_free(p);
  /* Trailing zero padding is tolerated; trailing junk is not. */
  hs_buf_append(&b, "\0\0\0", 3);
  CHECK_OK(hs_pq_decompress(HS_PQ_CODEC_GZIP, b.data, b.len, dst, n, err), err);
  b.data[b.len - 1] = 7;
  CHECK(hs_pq_decompress(HS_PQ_CODEC_GZIP, b.data, b.len, dst, n, NULL) == HS_ERR_CORRUPT);
  /* zlib (RFC 1950) wrapping is accepted too. */
  uLongf zlen = compressBound(n);
  uint8_t *z = hs_malloc(zlen);
  CHECK(compress2(z, &zlen, src, n, 6) == Z_OK);
  CHECK_OK(hs_pq_decompress(HS_PQ_CODEC_GZIP, z, zlen, dst, n, err), err);
  CHECK(memcmp(dst, src, n) == 0);
  hs_free(z);
  hs_buf_free(&b);
  hs_free(src);
  hs_free(dst);
}

static void put_be32(hs_buf *b, uint32_t v) {
  uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  hs_buf_append(b, x, 4);
}

/* Append one raw LZ4 block of src. */
static int lz4_raw(hs_buf *b, const uint8_t *src, size_t n) {
  int bound = LZ4_compressBound((int)n);
  hs_buf_reserve(b, (size_t)bound);
  int r = LZ4_compress_default((const char *)src, (char *)b->data + b->len, (int)n, bound);
  b->len += (size_t)r;
  return r;
}

static void test_lz4_variants(void) {
  const size_t n = 20000;
  uint8_t *src = hs_malloc(n), *dst = hs_malloc(n);
  fill(src, n, 1);
  hs_error e = {0}, *err = &e;
  /* Hadoop framing: block 1 holds two chunks, block 2 one chunk. */
  hs_buf b, tmp;
  hs_buf_init(&b);
  hs_buf_init(&tmp);
  size_t cuts[] = {0, 5000, 12000, n};
  put_be32(&b, 12000);
  for (int k = 0; k < 3; k++) {
    if (k == 2) put_be32(&b, (uint32_t)(n - 12000));
    tmp.len = 0;
    int r = lz4_raw(&tmp, src + cuts[k], cuts[k + 1] - cuts[k]);
    put_be32(&b, (uint32_t)r);
    hs_buf_append(&b, tmp.data, tmp.len);
  }
  uint8_t *p = dup_exact(b.data, b.len);
  CHECK_OK(hs_pq_decompress(HS_PQ_CODEC_LZ4, p, b.len, dst, n, err), err);
  CHECK(memcmp(dst, src, n) == 0);
  hs_free(p);
  /* A bare block under codec LZ4 (old parquet-cpp). */
  tmp.len = 0;
  lz4_raw(&tmp, src, n);
  p = dup_exact(tmp.data, tmp.len);
  memset(dst, 0, n);
  CHECK_OK(hs_pq_decompress(HS_PQ_CODEC_LZ4, p, tmp.len, dst, n, err), err);
  CHECK(memcmp(dst, src, n) == 0);
  hs_free(p);
  /* Our own LZ4 output is Hadoop-framed. */
  b.len = 0;
  CHECK_OK(hs_pq_compress(HS_PQ_CODEC_LZ4, 0, src, n, &b, err), err);
  CHECK(b.len > 8 && b.data[0] == 0 && b.data[1] == 0 && b.data[2] == (n >> 8) &&
        b.data[3] == (n & 0xff));
  hs_buf_free(&b);
  hs_buf_free(&tmp);
  hs_free(src);
  hs_free(dst);
}

static void test_unsupported(void) {
  uint8_t x[4] = {1, 2, 3, 4}, d[4];
  hs_error e = {0};
  CHECK(!hs_pq_codec_supported(HS_PQ_CODEC_LZO));
  CHECK(!hs_pq_codec_supported(99));
  CHECK(hs_pq_decompress(HS_PQ_CODEC_LZO, x, 4, d, 4, &e) == HS_ERR_UNSUPPORTED);
  CHECK(strstr(e.message, "LZO") != NULL);
  CHECK(hs_pq_decompress(-1, x, 4, d, 4, NULL) == HS_ERR_UNSUPPORTED);
  hs_buf b;
  hs_buf_init(&b);
  CHECK(hs_pq_compress(HS_PQ_CODEC_LZO, 0, x, 4, &b, NULL) == HS_ERR_UNSUPPORTED);
  hs_buf_free(&b);
}

int main(void) {
  test_roundtrips();
  test_corrupt();
  test_gzip_variants();
  test_lz4_variants();
  test_unsupported();
  return hs_test_finish("test_compress");
}
