/*
 * gzip.c — bounded whole-buffer gzip inflate and deflate (zlib), for
 * gzip-compressed Iceberg metadata. Inflation stops as soon as the output
 * would pass the caller's cap, so a small file that claims gigabytes costs
 * at most the cap in memory.
 */
#include "gzip.h"

#include <limits.h>
#include <string.h>
#include <zlib.h>

bool hs_gzip_is_gzip(const uint8_t *data, size_t len) {
  return len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

/* zlib counts in uInt: feed and drain in chunks it can hold. */
enum { CHUNK = 1 << 20 };

hs_status hs_gzip_inflate(const uint8_t *in, size_t len, size_t max_out, const char *what,
                          hs_buf *out, hs_error *err) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) { /* 16: gzip wrapper only */
    return hs_error_set(err, HS_ERR_NOMEM, "%s: cannot start gzip decompression", what);
  }
  size_t start = out->len, used = 0;
  hs_status st = HS_OK;
  int members = 0;
  for (;;) {
    /* One member: from `used` until Z_STREAM_END. */
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      if (zs.avail_in == 0) {
        size_t left = len - used;
        if (left == 0) {
          st = hs_error_set(err, HS_ERR_CORRUPT,
                            "%s: gzip stream truncated (%zu compressed bytes, member %d "
                            "unfinished)",
                            what, len, members + 1);
          goto done;
        }
        zs.next_in = (Bytef *)(in + used);
        zs.avail_in = (uInt)(left < CHUNK ? left : CHUNK);
        used += zs.avail_in;
      }
      size_t produced = out->len - start;
      if (produced >= max_out) {
        /* At the cap: does anything follow? Inflate one byte into a scratch slot. */
        uint8_t probe;
        zs.next_out = &probe;
        zs.avail_out = 1;
        rc = inflate(&zs, Z_NO_FLUSH);
        if (zs.avail_out == 0) {
          st = hs_error_set(err, HS_ERR_CORRUPT,
                            "%s: gzip data inflates to more than %zu bytes (the limit; a "
                            "decompression bomb?)",
                            what, max_out);
          goto done;
        }
      } else {
        size_t room = max_out - produced;
        if (room > CHUNK) room = CHUNK;
        if (!hs_buf_reserve(out, room)) {
          st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory inflating gzip data", what);
          goto done;
        }
        zs.next_out = out->data + out->len;
        zs.avail_out = (uInt)room;
        rc = inflate(&zs, Z_NO_FLUSH);
        out->len += room - zs.avail_out;
      }
      if (rc == Z_BUF_ERROR && zs.avail_in == 0) continue; /* needs more input */
      if (rc != Z_OK && rc != Z_STREAM_END) {
        st = hs_error_set(err, HS_ERR_CORRUPT, "%s: gzip data is damaged (%s, after %zu bytes)",
                          what, zs.msg ? zs.msg : "inflate failed", out->len - start);
        goto done;
      }
    }
    members++;
    /* Unconsumed input of this chunk belongs to what follows. */
    used -= zs.avail_in;
    if (used == len) break;
    if (!hs_gzip_is_gzip(in + used, len - used)) {
      st = hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: %zu bytes of trailing garbage after gzip member %d", what, len - used,
                        members);
      goto done;
    }
    inflateReset(&zs);
    zs.avail_in = 0;
  }
done:
  inflateEnd(&zs);
  if (st != HS_OK) out->len = start;
  return st;
}

hs_status hs_gzip_deflate(const uint8_t *in, size_t len, const char *what, hs_buf *out,
                          hs_error *err) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return hs_error_set(err, HS_ERR_NOMEM, "%s: cannot start gzip compression", what);
  }
  size_t start = out->len, used = 0;
  hs_status st = HS_OK;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (zs.avail_in == 0 && used < len) {
      size_t left = len - used;
      zs.next_in = (Bytef *)(in + used);
      zs.avail_in = (uInt)(left < CHUNK ? left : CHUNK);
      used += zs.avail_in;
    }
    if (!hs_buf_reserve(out, CHUNK)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory compressing", what);
      break;
    }
    zs.next_out = out->data + out->len;
    zs.avail_out = CHUNK;
    rc = deflate(&zs, used == len && zs.avail_in == 0 ? Z_FINISH : Z_NO_FLUSH);
    out->len += CHUNK - zs.avail_out;
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      st = hs_error_set(err, HS_ERR_IO, "%s: gzip compression failed (%d)", what, rc);
      break;
    }
  }
  deflateEnd(&zs);
  if (st != HS_OK) out->len = start;
  return st;
}
