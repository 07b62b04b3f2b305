/*
 * test_crc32c.c — CRC-32C: the standard check value, the hardware and
 * portable paths agreeing on random buffers of every alignment and length,
 * and extension over a split equal to one pass.
 */
#include "common/common.h"
#include "hs_test.h"

int main(void) {
  CHECK_EQ_INT(hs_crc32c_extend(0, "123456789", 9), 0xE3069283u);
  CHECK_EQ_INT(hs_crc32c_portable(0, "123456789", 9), 0xE3069283u);
  CHECK_EQ_INT(hs_crc32c_extend(0, "", 0), 0);
  uint8_t buf[4096 + 16];
  uint64_t rng = 12;
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)hs_test_rand(&rng);
  for (int round = 0; round < 2000; round++) {
    size_t off = hs_test_rand(&rng) % 16, len = hs_test_rand(&rng) % 4096;
    uint32_t a = hs_crc32c_extend(0, buf + off, len), b = hs_crc32c_portable(0, buf + off, len);
    CHECK_EQ_INT(a, b);
    size_t cut = len ? hs_test_rand(&rng) % len : 0;
    uint32_t c = hs_crc32c_extend(hs_crc32c_extend(0, buf + off, cut), buf + off + cut, len - cut);
    CHECK_EQ_INT(a, c);
  }
  /* A single flipped bit always changes the checksum. */
  uint32_t base = hs_crc32c_extend(0, buf, 1000);
  for (int bit = 0; bit < 8000; bit += 37) {
    buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    CHECK(hs_crc32c_extend(0, buf, 1000) != base);
    buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
  }
  return hs_test_finish("test_crc32c");
}
