/*
 * encoding_bitpack.c — bit-unpacking and bit-packing kernels, the hot loop
 * of RLE/bit-packed levels, dictionary indices and DELTA_BINARY_PACKED.
 *
 * Unpacking works 8 values (one group, `bw` bytes) at a time with one
 * function per bit width, so the shifts and masks are compile-time
 * constants. The fast kernels read each value with one unaligned 64-bit
 * load (two for widths over 56), which may touch up to 8 bytes past the
 * group; they are used only while that many bytes remain in the input. The
 * tail goes through a zero-padded copy, so no kernel ever reads beyond
 * `avail`.
 */
#include <string.h>

#include "encoding_internal.h"

#if defined(__GNUC__)
#define HS_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define HS_ALWAYS_INLINE inline
#endif

/* Full unrolling of the 8-value loops turns every shift and offset into
 * an immediate; -O2 alone does not unroll. */
#define HS_UNROLL8 _Pragma("GCC unroll 8")

static HS_ALWAYS_INLINE uint64_t load_u64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* One group of 8 values of width bw (<= 32); reads in[0 .. bw + 8). */
static HS_ALWAYS_INLINE void unpack8_u32(const uint8_t *in, uint32_t *out, const int bw) {
  const uint64_t mask = bw == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bw) - 1);
  HS_UNROLL8
  for (int i = 0; i < 8; i++) {
    const int bit = i * bw;
    out[i] = (uint32_t)((load_u64(in + bit / 8) >> (bit % 8)) & mask);
  }
}

/* One group of 8 values of width bw (<= 64); reads in[0 .. bw + 8). */
static HS_ALWAYS_INLINE void unpack8_u64(const uint8_t *in, uint64_t *out, const int bw) {
  const uint64_t mask = bw == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bw) - 1);
  HS_UNROLL8
  for (int i = 0; i < 8; i++) {
    const int bit = i * bw;
    const int sh = bit % 8;
    uint64_t v = load_u64(in + bit / 8) >> sh;
    if (sh + bw > 64) v |= load_u64(in + bit / 8 + 8) << (64 - sh);
    out[i] = v & mask;
  }
}

typedef void (*unpack32_fn)(const uint8_t *in, uint32_t *out, size_t groups);
typedef void (*unpack64_fn)(const uint8_t *in, uint64_t *out, size_t groups);

#define HS_DEF_UNPACK32(N)                                                          \
  static void unpack32_##N(const uint8_t *in, uint32_t *out, size_t groups) {       \
    for (size_t g = 0; g < groups; g++, in += N, out += 8) unpack8_u32(in, out, N); \
  }
#define HS_DEF_UNPACK64(N)                                                          \
  static void unpack64_##N(const uint8_t *in, uint64_t *out, size_t groups) {       \
    for (size_t g = 0; g < groups; g++, in += N, out += 8) unpack8_u64(in, out, N); \
  }

/* clang-format off */
#define HS_REPEAT_1_32(M)                                                        \
  M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14)    \
  M(15) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) M(24) M(25) M(26) M(27) \
  M(28) M(29) M(30) M(31) M(32)
#define HS_REPEAT_33_64(M)                                                        \
  M(33) M(34) M(35) M(36) M(37) M(38) M(39) M(40) M(41) M(42) M(43) M(44) M(45) \
  M(46) M(47) M(48) M(49) M(50) M(51) M(52) M(53) M(54) M(55) M(56) M(57) M(58) \
  M(59) M(60) M(61) M(62) M(63) M(64)
/* clang-format on */

HS_REPEAT_1_32(HS_DEF_UNPACK32)
HS_REPEAT_1_32(HS_DEF_UNPACK64)
HS_REPEAT_33_64(HS_DEF_UNPACK64)

#define HS_REF32(N) unpack32_##N,
#define HS_REF64(N) unpack64_##N,
static const unpack32_fn unpack32_table[33] = {NULL, HS_REPEAT_1_32(HS_REF32)};
static const unpack64_fn unpack64_table[65] = {NULL,
                                               HS_REPEAT_1_32(HS_REF64) HS_REPEAT_33_64(HS_REF64)};

/* Groups whose fast kernel stays inside avail: group g reads up to
 * (g + 1) * bw + 8 bytes. */
static size_t fast_groups(size_t avail, int bw, size_t groups) {
  if (avail < 8 + (size_t)bw) return 0;
  size_t g = (avail - 8) / (size_t)bw;
  return g < groups ? g : groups;
}

void hs_unpack_u32(const uint8_t *in, size_t avail, int bw, uint32_t *out, size_t count) {
  if (bw == 0) {
    memset(out, 0, count * sizeof *out);
    return;
  }
  size_t groups = count / 8;
  size_t fast = fast_groups(avail, bw, groups);
  unpack32_table[bw](in, out, fast);
  in += fast * (size_t)bw;
  avail -= fast * (size_t)bw;
  out += fast * 8;
  count -= fast * 8;
  /* Tail: copy each remaining group into a zero-padded scratch. */
  uint8_t tmp[32 + 8];
  uint32_t vals[8];
  while (count > 0) {
    size_t take = count < 8 ? count : 8;
    size_t n = avail < (size_t)bw ? avail : (size_t)bw;
    memset(tmp, 0, sizeof tmp);
    memcpy(tmp, in, n);
    unpack32_table[bw](tmp, vals, 1);
    memcpy(out, vals, take * sizeof *out);
    in += n;
    avail -= n;
    out += take;
    count -= take;
  }
}

void hs_unpack_u64(const uint8_t *in, size_t avail, int bw, uint64_t *out, size_t count) {
  if (bw == 0) {
    memset(out, 0, count * sizeof *out);
    return;
  }
  size_t groups = count / 8;
  size_t fast = fast_groups(avail, bw, groups);
  unpack64_table[bw](in, out, fast);
  in += fast * (size_t)bw;
  avail -= fast * (size_t)bw;
  out += fast * 8;
  count -= fast * 8;
  uint8_t tmp[64 + 16];
  uint64_t vals[8];
  while (count > 0) {
    size_t take = count < 8 ? count : 8;
    size_t n = avail < (size_t)bw ? avail : (size_t)bw;
    memset(tmp, 0, sizeof tmp);
    memcpy(tmp, in, n);
    unpack64_table[bw](tmp, vals, 1);
    memcpy(out, vals, take * sizeof *out);
    in += n;
    avail -= n;
    out += take;
    count -= take;
  }
}

/* Packing: OR each value into the zeroed output byte by byte. Encoders are
 * not the read path; this favours obviously-correct over clever. */
static HS_ALWAYS_INLINE void pack_one(uint8_t *out, size_t bitpos, uint64_t v, int bw) {
  size_t byte = bitpos / 8;
  int sh = (int)(bitpos % 8);
  out[byte++] |= (uint8_t)(v << sh);
  for (int written = 8 - sh; written < bw; written += 8) out[byte++] |= (uint8_t)(v >> written);
}

/* 32-bit values: a 64-bit accumulator, stored 32 bits at a time (the
 * writer's dictionary indices and levels). The same bytes as pack_one
 * into a zeroed output, for values that fit in bw bits. */
void hs_pack_u32(const uint32_t *in, size_t count, int bw, uint8_t *out) {
  if (bw == 0) return;
  uint64_t mask = bw == 32 ? 0xffffffffu : ((uint64_t)1 << bw) - 1, acc = 0;
  int bits = 0;
  for (size_t i = 0; i < count; i++) {
    acc |= ((uint64_t)in[i] & mask) << bits;
    bits += bw;
    if (bits >= 32) {
      hs_store_u32le(out, (uint32_t)acc);
      out += 4;
      acc >>= 32;
      bits -= 32;
    }
  }
  for (; bits > 0; bits -= 8, acc >>= 8) *out++ |= (uint8_t)acc;
}

void hs_pack_u64(const uint64_t *in, size_t count, int bw, uint8_t *out) {
  if (bw == 0) return;
  for (size_t i = 0; i < count; i++) pack_one(out, i * (size_t)bw, in[i], bw);
}
