/*
 * gzip.h — whole-buffer gzip (RFC 1952) for metadata files: Iceberg writers
 * compress table metadata with gzip when write.metadata.compression-codec
 * is "gzip" ("v3.gz.metadata.json", "NNNNN-<uuid>.gz.metadata.json", and
 * the older "v3.metadata.json.gz").
 */
#ifndef HS_IO_GZIP_H
#define HS_IO_GZIP_H

#include "../common/common.h"

/* Whether `data` starts with the gzip magic (1f 8b). */
bool hs_gzip_is_gzip(const uint8_t *data, size_t len);

/* Inflate the gzip stream `in` (one member or several concatenated, as
 * RFC 1952 allows) into `out` (appended). More than `max_out` inflated
 * bytes (a decompression bomb) is HS_ERR_CORRUPT; so is a truncated or
 * damaged stream (bad header, CRC or length) and trailing bytes after the
 * last member. `what` names the input in errors. On failure `out` is left
 * as it was. */
hs_status hs_gzip_inflate(const uint8_t *in, size_t len, size_t max_out, const char *what,
                          hs_buf *out, hs_error *err);

/* Deflate `in` into one gzip member appended to `out` (zlib's default level). */
hs_status hs_gzip_deflate(const uint8_t *in, size_t len, const char *what, hs_buf *out,
                          hs_error *err);

#endif /* HS_IO_GZIP_H */
