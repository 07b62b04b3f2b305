/*
 * encoding.h — Parquet value and level encodings (bounded decoders, encoders).
 *
 * Decoders read only inside (buf, len), decode exactly `n` values or fail with
 * HS_ERR_CORRUPT naming the encoding and the reason; `*consumed` (when not
 * NULL) receives the bytes used. Encoders append to an hs_buf.
 *
 * Byte arrays are decoded into Arrow layout: the caller passes `offsets`
 * with room for n + 1 entries whose offsets[0] is already set (the current
 * length of `data`), and the decoder appends the bytes to `data` and fills
 * offsets[1..n]. Offsets are int32 (Arrow "u"/"z"): exceeding 2^31-1 bytes
 * is an error.
 */
#ifndef HS_PARQUET_ENCODING_H
#define HS_PARQUET_ENCODING_H

#include "../common/common.h"

/* ------------------------------------------------ RLE / bit-packed hybrid */

/* Decode `n` values of `bit_width` (0..32) from an RLE/bit-packed hybrid run
 * sequence with no length prefix. A stream that ends early is an error. */
hs_status hs_rle_decode_u32(const uint8_t *buf, size_t len, int bit_width, uint32_t *out, size_t n,
                            size_t *consumed, hs_error *err);
/* Levels (bit_width 0..16) as int16. */
hs_status hs_rle_decode_levels(const uint8_t *buf, size_t len, int bit_width, int16_t *out,
                               size_t n, size_t *consumed, hs_error *err);
/* Legacy BIT_PACKED levels (MSB-first, deprecated encoding 4). */
hs_status hs_bitpacked_legacy_decode_levels(const uint8_t *buf, size_t len, int bit_width,
                                            int16_t *out, size_t n, size_t *consumed,
                                            hs_error *err);
/* Encode as RLE/bit-packed hybrid, no length prefix. */
hs_status hs_rle_encode_u32(const uint32_t *values, size_t n, int bit_width, hs_buf *out,
                            hs_error *err);
hs_status hs_rle_encode_levels(const int16_t *levels, size_t n, int bit_width, hs_buf *out,
                               hs_error *err);

/* Random access into a hybrid stream (no length prefix), forward only
 * (encoding_rle_seek.c): run headers are walked, values between the
 * positions asked for are not decoded. Bounded by (buf, len); a position
 * the stream does not reach is HS_ERR_CORRUPT. Borrows buf. */
typedef struct hs_rle_cursor {
  const uint8_t *buf;
  size_t len, pos; /* pos: next run header */
  int bw;
  int64_t run_start, run_end; /* positions of the current run */
  bool packed;
  uint32_t value;      /* RLE run's value */
  const uint8_t *data; /* bit-packed run's bytes */
  size_t data_len;
  int64_t count_pos, count; /* hs_rle_cursor_count_to's progress */
} hs_rle_cursor;

void hs_rle_cursor_init(hs_rle_cursor *c, const uint8_t *buf, size_t len, int bit_width);
/* The value at position i; i never below an earlier call's. */
hs_status hs_rle_cursor_get(hs_rle_cursor *c, int64_t i, uint32_t *out, hs_error *err);
/* How many of the values at positions [0, i) equal `value` (fast for bit
 * width 1: popcount); i never below an earlier call's. May be interleaved
 * with hs_rle_cursor_get at positions >= the last i counted to. */
hs_status hs_rle_cursor_count_to(hs_rle_cursor *c, int64_t i, uint32_t value, int64_t *out,
                                 hs_error *err);

/* Bits needed to represent max_value (0 for 0). */
int hs_bit_width(uint64_t max_value);

/* Dictionary indices in a data page: one byte of bit width, then RLE. */
hs_status hs_dict_indices_decode(const uint8_t *buf, size_t len, uint32_t *out, size_t n,
                                 hs_error *err);
hs_status hs_dict_indices_encode(const uint32_t *indices, size_t n, uint32_t dict_size, hs_buf *out,
                                 hs_error *err);

/* ------------------------------------------------------------------ PLAIN */

/* Booleans: bit-packed LSB first; output one byte (0/1) per value. */
hs_status hs_plain_decode_bool(const uint8_t *buf, size_t len, uint8_t *out, size_t n,
                               size_t *consumed, hs_error *err);
/* Booleans from Arrow bitmap: `bits` with bit offset `bit_offset`. */
hs_status hs_plain_encode_bool_bits(const uint8_t *bits, int64_t bit_offset, size_t n, hs_buf *out,
                                    hs_error *err);
/* Length-prefixed byte arrays. */
hs_status hs_plain_decode_byte_array(const uint8_t *buf, size_t len, size_t n, int32_t *offsets,
                                     hs_buf *data, size_t *consumed, hs_error *err);
/* Encode n byte arrays given Arrow offsets (n + 1 entries) and data. */
hs_status hs_plain_encode_byte_array(const int32_t *offsets, const uint8_t *data, size_t n,
                                     hs_buf *out, hs_error *err);
/* Fixed-width values (INT32/INT64/FLOAT/DOUBLE/INT96/FLBA) are plain memcpy:
 * callers check len >= n * width themselves. */

/* ------------------------------------------------------------------ DELTA */

hs_status hs_delta_binary_decode_i32(const uint8_t *buf, size_t len, int32_t *out, size_t n,
                                     size_t *consumed, hs_error *err);
hs_status hs_delta_binary_decode_i64(const uint8_t *buf, size_t len, int64_t *out, size_t n,
                                     size_t *consumed, hs_error *err);
/* Encode with block size 128, 4 miniblocks of 32 (as parquet-mr does). */
hs_status hs_delta_binary_encode_i32(const int32_t *values, size_t n, hs_buf *out, hs_error *err);
hs_status hs_delta_binary_encode_i64(const int64_t *values, size_t n, hs_buf *out, hs_error *err);

/* Random access into a DELTA_BINARY_PACKED stream (page_gather.c). A
 * directory records, per miniblock, where its packed deltas start in the
 * stream, their bit width and the value before its first delta (and per
 * block the min delta); hs_delta_dir_build makes one in a pass that sums
 * the deltas, checking the whole stream as the decoder does (bit widths,
 * truncation) and that it holds at most `total_max` values (the page's
 * value count). Every miniblock has its width byte in the stream, so the
 * directory is at most ~16 bytes per byte of input. The directory owns its
 * arrays (hs_delta_dir_free) and borrows nothing: it describes the bytes it
 * was built from, which the caller passes again to a cursor. */
typedef struct hs_delta_mb {
  uint64_t value;  /* the value its first delta applies to */
  uint32_t offset; /* of its packed deltas in the stream */
  uint8_t bw;      /* their bit width (<= 64) */
} hs_delta_mb;

typedef struct hs_delta_dir {
  uint32_t block_size, mb_count;
  uint64_t total; /* values in the stream */
  uint64_t first; /* value 0 */
  size_t n_blocks, n_mb;
  uint64_t *min_delta; /* per block */
  hs_delta_mb *mb;     /* per miniblock holding deltas, in stream order */
  size_t end;          /* bytes the stream takes */
} hs_delta_dir;

hs_status hs_delta_dir_build(const uint8_t *buf, size_t len, uint64_t total_max, hs_delta_dir *out,
                             hs_error *err);
void hs_delta_dir_free(hs_delta_dir *dir); /* accepts NULL */
/* Heap bytes the directory holds, with its struct (cache accounting). */
size_t hs_delta_dir_bytes(const hs_delta_dir *dir);

/* Deltas unpacked per step inside a miniblock (a multiple of 8). */
#define HS_DELTA_SEG 256

/* Values of a stream through its directory: value i costs unpacking the
 * deltas in front of it in its miniblock (at most HS_DELTA_SEG at a time),
 * and a later position among those already unpacked costs nothing. Values
 * are 64-bit, wrapping modulo 2^64 (an INT32 column takes the low 32 bits:
 * the same as its modulo-2^32 arithmetic). Borrows the directory and the
 * bytes, which must be the ones it was built from; every read is still
 * bounded by len. */
typedef struct hs_delta_cursor {
  const hs_delta_dir *dir;
  const uint8_t *buf;
  size_t len;
  int64_t seg_first; /* position of seg[0]; -1: none unpacked */
  size_t seg_n;
  uint64_t seg[HS_DELTA_SEG];
} hs_delta_cursor;

void hs_delta_cursor_init(hs_delta_cursor *c, const hs_delta_dir *dir, const uint8_t *buf,
                          size_t len);
/* Value i (0 <= i < total) into *out; damage found on the way (or a
 * position outside the stream) is HS_ERR_CORRUPT. */
hs_status hs_delta_cursor_get(hs_delta_cursor *c, int64_t i, uint64_t *out, hs_error *err);
/* Hint that value i will be asked for soon: `data` false fetches its
 * directory entry into the cache, true (a few values later, once the entry
 * is there) its packed deltas. Positions outside the stream are ignored. */
void hs_delta_cursor_prefetch(const hs_delta_cursor *c, int64_t i, bool data);

hs_status hs_delta_length_decode(const uint8_t *buf, size_t len, size_t n, int32_t *offsets,
                                 hs_buf *data, size_t *consumed, hs_error *err);
hs_status hs_delta_length_encode(const int32_t *offsets, const uint8_t *data, size_t n, hs_buf *out,
                                 hs_error *err);

/* DELTA_BYTE_ARRAY (prefix lengths + suffixes). */
hs_status hs_delta_byte_array_decode(const uint8_t *buf, size_t len, size_t n, int32_t *offsets,
                                     hs_buf *data, size_t *consumed, hs_error *err);
hs_status hs_delta_byte_array_encode(const int32_t *offsets, const uint8_t *data, size_t n,
                                     hs_buf *out, hs_error *err);
/* FIXED_LEN_BYTE_ARRAY under DELTA_BYTE_ARRAY: output n * width bytes. */
hs_status hs_delta_byte_array_decode_fixed(const uint8_t *buf, size_t len, size_t n, int width,
                                           uint8_t *out, size_t *consumed, hs_error *err);

/* ------------------------------------------------------- BYTE_STREAM_SPLIT */

/* `width` bytes per value (2, 4, 8 or a FLBA width). Input must be exactly
 * n * width bytes long (the page's value section). */
hs_status hs_byte_stream_split_decode(const uint8_t *buf, size_t len, int width, uint8_t *out,
                                      size_t n, hs_error *err);
hs_status hs_byte_stream_split_encode(const uint8_t *values, size_t n, int width, hs_buf *out,
                                      hs_error *err);

#endif /* HS_PARQUET_ENCODING_H */
