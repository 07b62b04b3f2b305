/*
 * crc32c.c — CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * checksum of index blobs and of the data-file fingerprints they record.
 *
 * Two implementations with the same result: the SSE4.2 crc32 instruction
 * (8 bytes a step, chosen at run time on x86-64) and a portable
 * slicing-by-8 table walk (8 tables of 256 entries, built once). The
 * checksum of "123456789" is 0xE3069283 (tests/c/test_crc32c.c).
 */
#include <pthread.h>
#include <string.h>

#include "common.h"

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++)
      table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

static uint32_t crc_portable(uint32_t c, const uint8_t *p, size_t n) {
  pthread_once(&table_once, table_init);
  while (n >= 8) {
    uint32_t lo = hs_load_u32le(p) ^ c, hi = hs_load_u32le(p + 4);
    c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
        table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
        table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
  return c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t c, const uint8_t *p,
                                                            size_t n) {
  uint64_t c64 = c;
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, p, 8); /* x86 is little endian: the reflected CRC's byte order */
    c64 = __builtin_ia32_crc32di(c64, v);
    p += 8;
    n -= 8;
  }
  c = (uint32_t)c64;
  while (n-- > 0) c = __builtin_ia32_crc32qi(c, *p++);
  return c;
}
#endif

uint32_t hs_crc32c_extend(uint32_t crc, const void *data, size_t len) {
  const uint8_t *p = (const uint8_t *)data;
  uint32_t c = ~crc;
  if (len == 0) return crc;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static int have = -1; /* benign race: every thread computes the same value */
  if (have < 0) have = __builtin_cpu_supports("sse4.2") ? 1 : 0;
  if (have) return ~crc_sse42(c, p, len);
#endif
  return ~crc_portable(c, p, len);
}

uint32_t hs_crc32c_portable(uint32_t crc, const void *data, size_t len) {
  return len == 0 ? crc : ~crc_portable(~crc, (const uint8_t *)data, len);
}
