/*
 * hash.c — MurmurHash3 x86_32 (Austin Appleby's public-domain algorithm),
 * written from its description: 4-byte little-endian blocks mixed with
 * constants c1/c2 and rotations, a tail of 1-3 bytes, then the fmix32
 * finaliser over the length. Iceberg's bucket transform (spec appendix B)
 * is this hash with seed 0.
 */
#include "common.h"

static inline uint32_t rotl32(uint32_t x, int r) {
  return (x << r) | (x >> (32 - r));
}

uint32_t hs_murmur3_x86_32(const void *data, size_t len, uint32_t seed) {
  const uint8_t *p = (const uint8_t *)data;
  const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
  uint32_t h = seed;
  size_t nblocks = len / 4;
  for (size_t i = 0; i < nblocks; i++) {
    uint32_t k = hs_load_u32le(p + 4 * i);
    k *= c1;
    k = rotl32(k, 15);
    k *= c2;
    h ^= k;
    h = rotl32(h, 13);
    h = h * 5 + 0xe6546b64u;
  }
  const uint8_t *tail = p + 4 * nblocks;
  size_t rem = len & 3;
  uint32_t k = 0;
  if (rem >= 3) k ^= (uint32_t)tail[2] << 16;
  if (rem >= 2) k ^= (uint32_t)tail[1] << 8;
  if (rem >= 1) {
    k ^= tail[0];
    k *= c1;
    k = rotl32(k, 15);
    k *= c2;
    h ^= k;
  }
  /* The length is mixed in modulo 2^32, as the reference does. */
  h ^= (uint32_t)len;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}
