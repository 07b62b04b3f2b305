/*
 * compress.c — Parquet page codecs over the system libraries: snappy,
 * gzip (zlib), zstd, lz4 (raw blocks and Hadoop framing).
 *
 * Every decompressor writes into a caller buffer of exactly the page
 * header's uncompressed size and fails when the stream would produce more
 * or fewer bytes, so a lying header can neither overflow nor leave
 * uninitialised bytes behind.
 *
 * Codec notes:
 *  - GZIP accepts gzip and zlib headers (zlib auto-detection) and several
 *    concatenated gzip members, which some writers emit; writes gzip.
 *  - LZ4 (codec 5) is historically ambiguous: parquet-mr wrote Hadoop's
 *    framing (big-endian u32 uncompressed size, then big-endian u32
 *    compressed size + raw LZ4 block, repeated), older parquet-cpp wrote a
 *    bare LZ4 block. We try the framing and fall back to a bare block when
 *    it does not account for the input exactly, as parquet-cpp does.
 *  - ZSTD writes at level 1 by default, as pyarrow does. Compression
 *    contexts are kept in a small process-wide pool (at most
 *    ZSTD_POOL_MAX idle ones of at most 8 MB each) and reused,
 *    so a writer does not allocate and fault in a fresh context's tables
 *    for every page.
 *  - BROTLI through libbrotli (quality 1 by default when writing).
 *  - LZO is not supported.
 */
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "compress.h"
#include "metadata.h"

#define HS_ZSTD_LEVEL_DEFAULT 1

static hs_status size_mismatch(hs_error *err, const char *codec, size_t got, size_t want) {
  return hs_error_set(err, HS_ERR_CORRUPT,
                      "%s: decompressed size %zu does not match the page header's %zu", codec, got,
                      want);
}

static hs_status too_large(hs_error *err, const char *codec, size_t want) {
  return hs_error_set(err, HS_ERR_CORRUPT, "%s: decompressed size exceeds the page header's %zu",
                      codec, want);
}

bool hs_pq_codec_supported(int32_t codec) {
  switch (codec) {
  case HS_PQ_CODEC_UNCOMPRESSED:
  case HS_PQ_CODEC_SNAPPY:
  case HS_PQ_CODEC_GZIP:
  case HS_PQ_CODEC_LZ4:
  case HS_PQ_CODEC_ZSTD:
  case HS_PQ_CODEC_BROTLI:
  case HS_PQ_CODEC_LZ4_RAW: return true;
  default: return false;
  }
}

/* ---------------------------------------------------------- decompress */

static hs_status snappy_decompress(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
                                   hs_error *err) {
  size_t ulen;
  if (snappy_uncompressed_length((const char *)src, src_len, &ulen) != SNAPPY_OK) {
    return hs_error_set(err, HS_ERR_CORRUPT, "SNAPPY: invalid stream header (%zu bytes)", src_len);
  }
  if (ulen != dst_len) return size_mismatch(err, "SNAPPY", ulen, dst_len);
  if (dst_len == 0) return HS_OK;
  size_t out_len = dst_len;
  if (snappy_uncompress((const char *)src, src_len, (char *)dst, &out_len) != SNAPPY_OK) {
    return hs_error_set(err, HS_ERR_CORRUPT, "SNAPPY: corrupt compressed data (%zu bytes)",
                        src_len);
  }
  if (out_len != dst_len) return size_mismatch(err, "SNAPPY", out_len, dst_len);
  return HS_OK;
}

static bool all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (p[i]) return false;
  }
  return true;
}

static hs_status gzip_decompress(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
                                 hs_error *err) {
  if (src_len > UINT_MAX || dst_len > UINT_MAX) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "GZIP: page of %zu bytes is too large", dst_len);
  }
  uint8_t dummy;
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, 15 + 32) != Z_OK) { /* +32: detect gzip or zlib header */
    return hs_error_set(err, HS_ERR_NOMEM, "GZIP: cannot initialise zlib");
  }
  zs.next_in = (Bytef *)src;
  zs.avail_in = (uInt)src_len;
  zs.next_out = dst_len ? dst : &dummy;
  zs.avail_out = (uInt)dst_len;
  hs_status st = HS_OK;
  for (;;) {
    int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      /* Another gzip member may follow; zero padding may too. */
      if (zs.avail_in == 0 || all_zero(zs.next_in, zs.avail_in)) break;
      if (inflateReset(&zs) != Z_OK) {
        st = hs_error_set(err, HS_ERR_INTERNAL, "GZIP: inflateReset failed");
        break;
      }
      continue;
    }
    if (rc == Z_OK) continue; /* progress was made */
    if (rc == Z_BUF_ERROR && zs.avail_in > 0) {
      st = too_large(err, "GZIP", dst_len);
    } else if (rc == Z_BUF_ERROR) {
      st = hs_error_set(err, HS_ERR_CORRUPT,
                        "GZIP: truncated stream after %zu of %zu input bytes (%zu bytes out)",
                        src_len - zs.avail_in, src_len, dst_len - zs.avail_out);
    } else {
      st = hs_error_set(err, HS_ERR_CORRUPT, "GZIP: corrupt stream at input byte %zu: %s",
                        src_len - zs.avail_in, zs.msg ? zs.msg : "inflate failed");
    }
    break;
  }
  size_t produced = dst_len - zs.avail_out;
  inflateEnd(&zs);
  if (st == HS_OK && produced != dst_len) return size_mismatch(err, "GZIP", produced, dst_len);
  return st;
}

/* Decompression contexts, kept like the compression ones (below): the
 * one-shot ZSTD_decompress creates and frees a context per call, and a page
 * read paid that allocation (a ~160 KB workspace, freshly faulted in) for
 * every page. At most ZSTD_DPOOL_MAX idle contexts are kept. */
#define ZSTD_DPOOL_MAX 16
static pthread_mutex_t zstd_dpool_lock = PTHREAD_MUTEX_INITIALIZER;
static ZSTD_DCtx *zstd_dpool[ZSTD_DPOOL_MAX];
static int zstd_dpool_n;

static ZSTD_DCtx *zstd_dctx_get(void) {
  ZSTD_DCtx *d = NULL;
  pthread_mutex_lock(&zstd_dpool_lock);
  if (zstd_dpool_n > 0) d = zstd_dpool[--zstd_dpool_n];
  pthread_mutex_unlock(&zstd_dpool_lock);
  return d ? d : ZSTD_createDCtx();
}

static void zstd_dctx_put(ZSTD_DCtx *d) {
  pthread_mutex_lock(&zstd_dpool_lock);
  if (zstd_dpool_n < ZSTD_DPOOL_MAX) {
    zstd_dpool[zstd_dpool_n++] = d;
    d = NULL;
  }
  pthread_mutex_unlock(&zstd_dpool_lock);
  ZSTD_freeDCtx(d); /* accepts NULL */
}

static hs_status zstd_decompress(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
                                 hs_error *err) {
  uint8_t dummy;
  ZSTD_DCtx *dc = zstd_dctx_get();
  if (dc == NULL) {
    return hs_error_set(err, HS_ERR_NOMEM, "ZSTD: out of memory for a decompression context");
  }
  size_t r = ZSTD_decompressDCtx(dc, dst_len ? dst : &dummy, dst_len, src, src_len);
  zstd_dctx_put(dc);
  if (ZSTD_isError(r)) {
    if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall) return too_large(err, "ZSTD", dst_len);
    return hs_error_set(err, HS_ERR_CORRUPT, "ZSTD: %s (%zu compressed bytes)",
                        ZSTD_getErrorName(r), src_len);
  }
  if (r != dst_len) return size_mismatch(err, "ZSTD", r, dst_len);
  return HS_OK;
}

/* One raw LZ4 block of exactly dst_len bytes. */
static hs_status lz4_block(const char *codec, const uint8_t *src, size_t src_len, uint8_t *dst,
                           size_t dst_len, hs_error *err) {
  if (src_len > INT_MAX || dst_len > INT_MAX) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: block of %zu bytes is too large", codec,
                        src_len > dst_len ? src_len : dst_len);
  }
  uint8_t dummy;
  int r = LZ4_decompress_safe((const char *)src, dst_len ? (char *)dst : (char *)&dummy,
                              (int)src_len, (int)dst_len);
  if (r < 0) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: corrupt block, or decompressed size exceeds the page header's %zu",
                        codec, dst_len);
  }
  if ((size_t)r != dst_len) return size_mismatch(err, codec, (size_t)r, dst_len);
  return HS_OK;
}

static uint32_t load_u32be(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Hadoop framing: blocks of <u32 BE raw size> then chunks of <u32 BE
 * compressed size><LZ4 block> until the block's raw size is produced.
 * True only when the framing consumes src exactly and fills dst exactly. */
static bool lz4_hadoop(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len) {
  size_t in = 0, out = 0;
  if (src_len == 0) return false;
  while (in < src_len) {
    if (src_len - in < 8) return false;
    size_t raw = load_u32be(src + in);
    in += 4;
    if (raw > dst_len - out) return false;
    size_t block_end = out + raw;
    do {
      if (src_len - in < 4) return false;
      size_t clen = load_u32be(src + in);
      in += 4;
      if (clen > src_len - in || clen > INT_MAX) return false;
      size_t room = block_end - out;
      uint8_t dummy;
      int r = LZ4_decompress_safe((const char *)src + in, room ? (char *)dst + out : (char *)&dummy,
                                  (int)clen, (int)(room < INT_MAX ? room : INT_MAX));
      if (r < 0) return false;
      in += clen;
      out += (size_t)r;
      if (r == 0 && raw > 0) return false; /* no progress */
    } while (out < block_end);
  }
  return out == dst_len;
}

static hs_status lz4_hadoop_decompress(const uint8_t *src, size_t src_len, uint8_t *dst,
                                       size_t dst_len, hs_error *err) {
  if (lz4_hadoop(src, src_len, dst, dst_len)) return HS_OK;
  return lz4_block("LZ4", src, src_len, dst, dst_len, err);
}

/* Brotli: decoded in one call into the exact-size page buffer; output
 * that would overflow it, or a stream that ends short, is corrupt. */
static hs_status brotli_decompress(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
                                   hs_error *err) {
  BrotliDecoderState *st = BrotliDecoderCreateInstance(NULL, NULL, NULL);
  if (st == NULL) return hs_error_set(err, HS_ERR_NOMEM, "BROTLI: cannot create decoder");
  size_t in_left = src_len, out_left = dst_len;
  const uint8_t *in = src;
  uint8_t *out = dst;
  BrotliDecoderResult r = BrotliDecoderDecompressStream(st, &in_left, &in, &out_left, &out, NULL);
  BrotliDecoderDestroyInstance(st);
  if (r == BROTLI_DECODER_RESULT_SUCCESS && out_left == 0) return HS_OK;
  if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "BROTLI: decompressed size exceeds the page header's %zu", dst_len);
  }
  if (r == BROTLI_DECODER_RESULT_SUCCESS)
    return size_mismatch(err, "BROTLI", dst_len - out_left, dst_len);
  return hs_error_set(err, HS_ERR_CORRUPT, "BROTLI: invalid or truncated stream");
}

hs_status hs_pq_decompress(int32_t codec, const uint8_t *src, size_t src_len, uint8_t *dst,
                           size_t dst_len, hs_error *err) {
  switch (codec) {
  case HS_PQ_CODEC_UNCOMPRESSED:
    if (src_len != dst_len) return size_mismatch(err, "UNCOMPRESSED", src_len, dst_len);
    if (dst_len) memcpy(dst, src, dst_len);
    return HS_OK;
  case HS_PQ_CODEC_SNAPPY: return snappy_decompress(src, src_len, dst, dst_len, err);
  case HS_PQ_CODEC_GZIP: return gzip_decompress(src, src_len, dst, dst_len, err);
  case HS_PQ_CODEC_ZSTD: return zstd_decompress(src, src_len, dst, dst_len, err);
  case HS_PQ_CODEC_LZ4_RAW: return lz4_block("LZ4_RAW", src, src_len, dst, dst_len, err);
  case HS_PQ_CODEC_LZ4: return lz4_hadoop_decompress(src, src_len, dst, dst_len, err);
  case HS_PQ_CODEC_BROTLI: return brotli_decompress(src, src_len, dst, dst_len, err);
  case HS_PQ_CODEC_LZO: return hs_error_set(err, HS_ERR_UNSUPPORTED, "codec LZO is not supported");
  default: return hs_error_set(err, HS_ERR_UNSUPPORTED, "unknown compression codec %d", codec);
  }
}

/* ------------------------------------------------------------ compress */

static hs_status oom(hs_error *err, const char *codec, size_t n) {
  return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory compressing %zu bytes", codec, n);
}

static hs_status gzip_compress(int level, const uint8_t *src, size_t src_len, hs_buf *out,
                               hs_error *err) {
  if (src_len > UINT_MAX / 2) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "GZIP: page of %zu bytes is too large", src_len);
  }
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  /* +16: gzip header and trailer. */
  if (deflateInit2(&zs, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "GZIP: cannot initialise level %d", level);
  }
  size_t bound = deflateBound(&zs, (uLong)src_len);
  if (!hs_buf_reserve(out, bound)) {
    deflateEnd(&zs);
    return oom(err, "GZIP", src_len);
  }
  uint8_t dummy = 0;
  zs.next_in = src_len ? (Bytef *)src : &dummy;
  zs.avail_in = (uInt)src_len;
  zs.next_out = out->data + out->len;
  zs.avail_out = (uInt)bound;
  int rc = deflate(&zs, Z_FINISH);
  size_t produced = bound - zs.avail_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END)
    return hs_error_set(err, HS_ERR_INTERNAL, "GZIP: deflate failed (%d)", rc);
  out->len += produced;
  return HS_OK;
}

static hs_status lz4_compress_raw(const uint8_t *src, size_t src_len, hs_buf *out, size_t header,
                                  hs_error *err) {
  if (src_len > LZ4_MAX_INPUT_SIZE) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "LZ4: page of %zu bytes is too large", src_len);
  }
  int bound = LZ4_compressBound((int)src_len);
  if (!hs_buf_reserve(out, header + (size_t)bound)) return oom(err, "LZ4", src_len);
  char dummy = 0;
  int r = LZ4_compress_default(src_len ? (const char *)src : &dummy,
                               (char *)out->data + out->len + header, (int)src_len, bound);
  if (r <= 0) return hs_error_set(err, HS_ERR_INTERNAL, "LZ4: compression failed");
  if (header) {
    uint8_t *h = out->data + out->len;
    uint32_t v[2] = {(uint32_t)src_len, (uint32_t)r};
    for (int k = 0; k < 2; k++) {
      h[4 * k] = (uint8_t)(v[k] >> 24);
      h[4 * k + 1] = (uint8_t)(v[k] >> 16);
      h[4 * k + 2] = (uint8_t)(v[k] >> 8);
      h[4 * k + 3] = (uint8_t)v[k];
    }
  }
  out->len += header + (size_t)r;
  return HS_OK;
}

static hs_status brotli_compress(int level, const uint8_t *src, size_t src_len, hs_buf *out,
                                 hs_error *err) {
  size_t bound = BrotliEncoderMaxCompressedSize(src_len);
  if (bound == 0) bound = src_len + 1024;
  if (!hs_buf_reserve(out, bound)) return oom(err, "BROTLI", src_len);
  size_t n = bound;
  if (!BrotliEncoderCompress(level ? level : 1, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, src_len,
                             src, &n, out->data + out->len)) {
    return hs_error_set(err, HS_ERR_INTERNAL, "BROTLI: compression failed");
  }
  out->len += n;
  return HS_OK;
}

#define ZSTD_POOL_MAX 16
#define ZSTD_POOL_CTX_BYTES_MAX (8u << 20)
static pthread_mutex_t zstd_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static ZSTD_CCtx *zstd_pool[ZSTD_POOL_MAX];
static int zstd_pool_n;

static ZSTD_CCtx *zstd_cctx_get(void) {
  ZSTD_CCtx *c = NULL;
  pthread_mutex_lock(&zstd_pool_lock);
  if (zstd_pool_n > 0) c = zstd_pool[--zstd_pool_n];
  pthread_mutex_unlock(&zstd_pool_lock);
  return c ? c : ZSTD_createCCtx();
}

static void zstd_cctx_put(ZSTD_CCtx *c) {
  if (ZSTD_sizeof_CCtx(c) > ZSTD_POOL_CTX_BYTES_MAX) { /* high levels: not kept */
    ZSTD_freeCCtx(c);
    return;
  }
  pthread_mutex_lock(&zstd_pool_lock);
  if (zstd_pool_n < ZSTD_POOL_MAX) {
    zstd_pool[zstd_pool_n++] = c;
    c = NULL;
  }
  pthread_mutex_unlock(&zstd_pool_lock);
  ZSTD_freeCCtx(c); /* accepts NULL */
}

static hs_status zstd_compress(int level, const uint8_t *src, size_t src_len, hs_buf *out,
                               hs_error *err) {
  size_t bound = ZSTD_compressBound(src_len);
  if (!hs_buf_reserve(out, bound)) return oom(err, "ZSTD", src_len);
  ZSTD_CCtx *cc = zstd_cctx_get();
  if (cc == NULL) return oom(err, "ZSTD", src_len);
  size_t r = ZSTD_compressCCtx(cc, out->data + out->len, bound, src, src_len,
                               level ? level : HS_ZSTD_LEVEL_DEFAULT);
  zstd_cctx_put(cc);
  if (ZSTD_isError(r)) return hs_error_set(err, HS_ERR_INTERNAL, "ZSTD: %s", ZSTD_getErrorName(r));
  out->len += r;
  return HS_OK;
}

hs_status hs_pq_compress(int32_t codec, int level, const uint8_t *src, size_t src_len, hs_buf *out,
                         hs_error *err) {
  switch (codec) {
  case HS_PQ_CODEC_UNCOMPRESSED:
    if (src_len && !hs_buf_append(out, src, src_len)) return oom(err, "UNCOMPRESSED", src_len);
    return HS_OK;
  case HS_PQ_CODEC_SNAPPY: {
    size_t bound = snappy_max_compressed_length(src_len);
    if (!hs_buf_reserve(out, bound)) return oom(err, "SNAPPY", src_len);
    size_t n = bound;
    char dummy = 0;
    if (snappy_compress(src_len ? (const char *)src : &dummy, src_len, (char *)out->data + out->len,
                        &n) != SNAPPY_OK) {
      return hs_error_set(err, HS_ERR_INTERNAL, "SNAPPY: compression failed");
    }
    out->len += n;
    return HS_OK;
  }
  case HS_PQ_CODEC_GZIP: return gzip_compress(level, src, src_len, out, err);
  case HS_PQ_CODEC_ZSTD: return zstd_compress(level, src, src_len, out, err);
  case HS_PQ_CODEC_LZ4_RAW: return lz4_compress_raw(src, src_len, out, 0, err);
  case HS_PQ_CODEC_LZ4: return lz4_compress_raw(src, src_len, out, 8, err);
  case HS_PQ_CODEC_BROTLI: return brotli_compress(level, src, src_len, out, err);
  case HS_PQ_CODEC_LZO: return hs_error_set(err, HS_ERR_UNSUPPORTED, "codec LZO is not supported");
  default: return hs_error_set(err, HS_ERR_UNSUPPORTED, "unknown compression codec %d", codec);
  }
}
