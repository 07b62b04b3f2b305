/*
 * test_gzip.c — src/io/gzip.c: random buffers round trip through
 * hs_gzip_deflate / hs_gzip_inflate and match zlib's own one-shot
 * uncompress of the same stream (the oracle); the output cap is exact
 * (cap == length passes, length - 1 is the "decompression bomb" error, and
 * the output buffer is left as it was); every truncated prefix, a flipped
 * CRC or length byte and trailing garbage are HS_ERR_CORRUPT; concatenated
 * members inflate to the concatenation. Also run under ASan/UBSan.
 */
#include <string.h>
#include <zlib.h>

#include "hs_test.h"
#include "io/gzip.h"

static uint64_t rng = 7;
static uint32_t next(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng >> 33);
}

static void fill(uint8_t *p, size_t n, int kind) {
  for (size_t i = 0; i < n; i++)
    p[i] = kind == 0 ? (uint8_t)next() : kind == 1 ? (uint8_t) "{\"a\": 1, }"[next() % 10] : 'x';
}

int main(void) {
  size_t sizes[] = {0, 1, 2, 100, 4095, 65536, (1u << 20) + 17, (3u << 20) + 5};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    for (int kind = 0; kind < 3; kind++) {
      size_t n = sizes[si];
      uint8_t *src = malloc(n + 1);
      fill(src, n, kind);
      hs_buf gz, out;
      hs_buf_init(&gz);
      hs_buf_init(&out);
      hs_error e = {0};
      CHECK_OK(hs_gzip_deflate(src, n, "src", &gz, &e), &e);
      CHECK(hs_gzip_is_gzip(gz.data, gz.len));
      /* the oracle: zlib's own inflate of the same stream */
      z_stream zs;
      memset(&zs, 0, sizeof zs);
      uint8_t *ref = malloc(n + 1);
      CHECK(inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK);
      zs.next_in = gz.data;
      zs.avail_in = (uInt)gz.len;
      zs.next_out = ref;
      zs.avail_out = (uInt)(n + 1);
      CHECK(inflate(&zs, Z_FINISH) == Z_STREAM_END);
      CHECK(zs.total_out == n && memcmp(ref, src, n) == 0);
      inflateEnd(&zs);
      free(ref);
      /* ours, with the cap exactly at the length */
      CHECK_OK(hs_gzip_inflate(gz.data, gz.len, n, "gz", &out, &e), &e);
      CHECK(out.len == n && (n == 0 || memcmp(out.data, src, n) == 0));
      if (n > 0) {
        out.len = 3; /* kept as it was on failure */
        hs_error e2 = {0};
        CHECK_EQ_INT(hs_gzip_inflate(gz.data, gz.len, n - 1, "gz", &out, &e2), HS_ERR_CORRUPT);
        CHECK(strstr(e2.message, "decompression bomb") != NULL);
        CHECK(out.len == 3);
      }
      /* truncated prefixes (all for small streams, a sample for large) */
      size_t step = gz.len < 400 ? 1 : gz.len / 97 + 1;
      for (size_t cut = 0; cut < gz.len; cut += step) {
        hs_buf b;
        hs_buf_init(&b);
        hs_error e3 = {0};
        CHECK_EQ_INT(hs_gzip_inflate(gz.data, cut, n + 10, "cut", &b, &e3), HS_ERR_CORRUPT);
        CHECK(b.len == 0 && strncmp(e3.message, "cut: ", 5) == 0);
        hs_buf_free(&b);
      }
      /* a damaged CRC or length, trailing garbage */
      for (size_t back = 1; back <= 8; back++) {
        gz.data[gz.len - back] ^= 0x10;
        hs_buf b;
        hs_buf_init(&b);
        hs_error e4 = {0};
        CHECK_EQ_INT(hs_gzip_inflate(gz.data, gz.len, n + 10, "crc", &b, &e4), HS_ERR_CORRUPT);
        gz.data[gz.len - back] ^= 0x10;
        hs_buf_free(&b);
      }
      hs_buf g2 = gz;
      hs_buf_init(&gz);
      CHECK(hs_buf_append(&gz, g2.data, g2.len) && hs_buf_append(&gz, "xy", 2));
      hs_buf b;
      hs_buf_init(&b);
      hs_error e5 = {0};
      CHECK_EQ_INT(hs_gzip_inflate(gz.data, gz.len, n + 10, "tail", &b, &e5), HS_ERR_CORRUPT);
      CHECK(strstr(e5.message, "trailing garbage") != NULL);
      /* two members: the concatenation */
      gz.len = 0;
      CHECK(hs_buf_append(&gz, g2.data, g2.len) && hs_buf_append(&gz, g2.data, g2.len));
      b.len = 0;
      CHECK_OK(hs_gzip_inflate(gz.data, gz.len, 2 * n, "two", &b, &e5), &e5);
      CHECK(b.len == 2 * n &&
            (n == 0 || (memcmp(b.data, src, n) == 0 && memcmp(b.data + n, src, n) == 0)));
      hs_buf_free(&b);
      hs_buf_free(&g2);
      hs_buf_free(&gz);
      hs_buf_free(&out);
      free(src);
    }
  }
  /* not gzip at all */
  hs_buf b;
  hs_buf_init(&b);
  hs_error e = {0};
  CHECK(!hs_gzip_is_gzip((const uint8_t *)"{}", 2));
  CHECK_EQ_INT(hs_gzip_inflate((const uint8_t *)"\x1f\x8bzzzzzzzzzzzz", 14, 100, "bad", &b, &e),
               HS_ERR_CORRUPT);
  hs_buf_free(&b);
  return hs_test_finish("test_gzip");
}
