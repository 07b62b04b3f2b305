/*
 * encoding_internal.h — private to the encoding_*.c files: ULEB128 varints,
 * zigzag, and the bit-packing kernels shared by the RLE hybrid and the
 * DELTA_BINARY_PACKED codecs.
 *
 * Bit packing here is Parquet's: values packed LSB first, little-endian,
 * in groups of 8 values (a group of bit width w is exactly w bytes).
 */
#ifndef HS_PARQUET_ENCODING_INTERNAL_H
#define HS_PARQUET_ENCODING_INTERNAL_H

#include "encoding.h"

/* The kernels load little-endian words with memcpy. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "HyperStreamDB's Parquet encodings assume a little-endian host"
#endif

/* Read a ULEB128 varint of at most 64 bits at buf[*pos], bounded by len.
 * Advances *pos. False when truncated or longer than 10 bytes / 64 bits. */
static inline bool hs_varint_read(const uint8_t *buf, size_t len, size_t *pos, uint64_t *out) {
  uint64_t v = 0;
  size_t p = *pos;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p >= len) return false;
    uint8_t b = buf[p++];
    if (shift == 63 && (b & 0x7e)) return false; /* bits beyond 64 */
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *pos = p;
      *out = v;
      return true;
    }
  }
  return false;
}

/* Append a ULEB128 varint. False on OOM. */
static inline bool hs_varint_write(hs_buf *out, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  while (v >= 0x80) {
    tmp[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  tmp[n++] = (uint8_t)v;
  return hs_buf_append(out, tmp, n);
}

static inline uint64_t hs_zigzag_encode(int64_t v) {
  return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t hs_zigzag_decode(uint64_t v) {
  return (int64_t)((v >> 1) ^ (~(v & 1) + 1));
}

/* Unpack `count` values of bit width `bw` (0..32) starting at a group
 * boundary of `in`. Requires ceil(count * bw / 8) <= avail; reads nothing
 * at or beyond in + avail. */
void hs_unpack_u32(const uint8_t *in, size_t avail, int bw, uint32_t *out, size_t count);
/* The same for bit widths 0..64 into 64-bit values. */
void hs_unpack_u64(const uint8_t *in, size_t avail, int bw, uint64_t *out, size_t count);

/* Pack `count` values (each < 2^bw, bw 0..64) into ceil(count*bw/8) bytes
 * at `out`, which must be zeroed by the caller. */
void hs_pack_u32(const uint32_t *in, size_t count, int bw, uint8_t *out);
void hs_pack_u64(const uint64_t *in, size_t count, int bw, uint8_t *out);

/* Bytes for `count` values of `bw` bits, rounded up; false on overflow. */
static inline bool hs_packed_bytes(size_t count, int bw, size_t *out) {
  size_t bits;
  if (!hs_mul_size(count, (size_t)bw, &bits)) return false;
  *out = bits / 8 + (bits % 8 != 0);
  return true;
}

#endif /* HS_PARQUET_ENCODING_INTERNAL_H */
