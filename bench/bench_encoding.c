/*
 * bench_encoding.c — throughput of the decoder hot loops: RLE/bit-packed
 * dictionary indices and levels at several bit widths, DELTA_BINARY_PACKED,
 * BYTE_STREAM_SPLIT and PLAIN byte arrays. Prints values per second, so
 * kernels can be compared before and after a change (build RelWithDebInfo
 * or Release; run on a quiet machine).
 */
#include <stdio.h>
#include <string.h>

#include "parquet/encoding.h"

#define N (1u << 20)

static uint64_t rng = 99;
static uint32_t next_rand(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng >> 33);
}

static void report(const char *what, int64_t ns, size_t values, int reps) {
  double per_s = (double)values * reps / ((double)ns / 1e9);
  printf("%-34s %8.1f M values/s\n", what, per_s / 1e6);
}

static void bench_rle(int bw, int run_len) {
  uint32_t *v = hs_malloc(N * sizeof *v), *o = hs_malloc(N * sizeof *o);
  uint32_t mask = bw == 32 ? 0xffffffffu : ((1u << bw) - 1);
  for (size_t i = 0; i < N; i++)
    v[i] = (run_len > 1 && i % (size_t)run_len) ? v[i - 1] : next_rand() & mask;
  hs_buf b;
  hs_buf_init(&b);
  hs_rle_encode_u32(v, N, bw, &b, NULL);
  const int reps = 50;
  int64_t t0 = hs_now_ns();
  for (int r = 0; r < reps; r++) hs_rle_decode_u32(b.data, b.len, bw, o, N, NULL, NULL);
  int64_t t1 = hs_now_ns();
  char name[64];
  snprintf(name, sizeof name, "rle u32 bw=%d run=%d", bw, run_len);
  report(name, t1 - t0, N, reps);
  if (memcmp(o, v, N * sizeof *v) != 0) printf("  MISMATCH\n");
  hs_buf_free(&b);
  hs_free(v);
  hs_free(o);
}

static void bench_levels(int bw) {
  int16_t *v = hs_malloc(N * sizeof *v), *o = hs_malloc(N * sizeof *o);
  for (size_t i = 0; i < N; i++) v[i] = (int16_t)(next_rand() & ((1u << bw) - 1));
  hs_buf b;
  hs_buf_init(&b);
  hs_rle_encode_levels(v, N, bw, &b, NULL);
  const int reps = 50;
  int64_t t0 = hs_now_ns();
  for (int r = 0; r < reps; r++) hs_rle_decode_levels(b.data, b.len, bw, o, N, NULL, NULL);
  int64_t t1 = hs_now_ns();
  char name[64];
  snprintf(name, sizeof name, "rle levels bw=%d", bw);
  report(name, t1 - t0, N, reps);
  hs_buf_free(&b);
  hs_free(v);
  hs_free(o);
}

static void bench_delta(void) {
  int64_t *v = hs_malloc(N * sizeof *v), *o = hs_malloc(N * sizeof *o);
  int64_t x = 0;
  for (size_t i = 0; i < N; i++) v[i] = x += next_rand() % 1000;
  hs_buf b;
  hs_buf_init(&b);
  hs_delta_binary_encode_i64(v, N, &b, NULL);
  const int reps = 20;
  int64_t t0 = hs_now_ns();
  for (int r = 0; r < reps; r++) hs_delta_binary_decode_i64(b.data, b.len, o, N, NULL, NULL);
  int64_t t1 = hs_now_ns();
  report("delta i64 (10-bit deltas)", t1 - t0, N, reps);
  hs_buf_free(&b);
  hs_free(v);
  hs_free(o);
}

static void bench_bss(int width) {
  size_t bytes = (size_t)N * (size_t)width;
  uint8_t *v = hs_malloc(bytes), *o = hs_malloc(bytes);
  for (size_t i = 0; i < bytes; i++) v[i] = (uint8_t)next_rand();
  const int reps = 20;
  int64_t t0 = hs_now_ns();
  for (int r = 0; r < reps; r++) hs_byte_stream_split_decode(v, bytes, width, o, N, NULL);
  int64_t t1 = hs_now_ns();
  char name[64];
  snprintf(name, sizeof name, "byte_stream_split decode w=%d", width);
  report(name, t1 - t0, N, reps);
  hs_free(v);
  hs_free(o);
}

static void bench_plain_ba(void) {
  hs_buf page;
  hs_buf_init(&page);
  for (size_t i = 0; i < N; i++) {
    uint8_t l[4] = {8, 0, 0, 0};
    hs_buf_append(&page, l, 4);
    hs_buf_append(&page, "abcdefgh", 8);
  }
  int32_t *off = hs_malloc((N + 1) * sizeof *off);
  hs_buf data;
  hs_buf_init(&data);
  const int reps = 20;
  int64_t t0 = hs_now_ns();
  for (int r = 0; r < reps; r++) {
    data.len = 0;
    off[0] = 0;
    hs_plain_decode_byte_array(page.data, page.len, N, off, &data, NULL, NULL);
  }
  int64_t t1 = hs_now_ns();
  report("plain byte_array (8 bytes)", t1 - t0, N, reps);
  hs_buf_free(&page);
  hs_buf_free(&data);
  hs_free(off);
}

int main(void) {
  const int widths[] = {1, 2, 3, 5, 8, 12, 16, 20, 32};
  for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) bench_rle(widths[i], 1);
  bench_rle(8, 16);
  bench_levels(1);
  bench_levels(3);
  bench_delta();
  bench_bss(4);
  bench_bss(8);
  bench_bss(16);
  bench_plain_ba();
  return 0;
}
