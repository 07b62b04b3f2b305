/*
 * compress.h — page compression codecs: snappy, gzip, zstd, lz4_raw and
 * Hadoop-framed LZ4 (codec LZ4, with raw-block fallback as parquet-cpp
 * does). Decompression is bounded by the page's declared uncompressed size.
 */
#ifndef HS_PARQUET_COMPRESS_H
#define HS_PARQUET_COMPRESS_H

#include "../common/common.h"

/* True when `codec` (Parquet CompressionCodec value) can be decoded. */
bool hs_pq_codec_supported(int32_t codec);

/* Decompress src into dst, which must receive exactly dst_len bytes; a
 * different decompressed size is HS_ERR_CORRUPT. */
hs_status hs_pq_decompress(int32_t codec, const uint8_t *src, size_t src_len, uint8_t *dst,
                           size_t dst_len, hs_error *err);

/* Compress src and append to out. level 0 means the codec's default. */
hs_status hs_pq_compress(int32_t codec, int level, const uint8_t *src, size_t src_len, hs_buf *out,
                         hs_error *err);

/* PageHeader.crc (page_crc.c): zlib's crc32 of data[0..len) continuing
 * `crc` (0 to start), so hs_pq_crc32(hs_pq_crc32(0, a, n), b, m) is the CRC
 * of a then b; carry-less multiplication where the CPU has it.
 * hs_pq_crc32_portable is zlib's alone (tests compare the two). */
uint32_t hs_pq_crc32(uint32_t crc, const void *data, size_t len);
uint32_t hs_pq_crc32_portable(uint32_t crc, const void *data, size_t len);

#endif /* HS_PARQUET_COMPRESS_H */
