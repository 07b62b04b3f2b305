/*
 * page_read.c — decoding what is inside one decompressed page: repetition
 * and definition levels, dictionary pages, and the value section in every
 * encoding we read (PLAIN, PLAIN_DICTIONARY/RLE_DICTIONARY, RLE booleans,
 * DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY,
 * BYTE_STREAM_SPLIT). Values are appended to the chunk's accumulator in the
 * layout column.h promises: fixed-width values densely packed, byte arrays
 * as int32 offsets + data.
 *
 * The bytes are untrusted. Counts are checked against the bytes available
 * before allocating wherever the encoding bounds them (PLAIN); elsewhere the
 * count comes from the page header, which column_read.c has already bounded
 * by the chunk's value count. Dictionary indices are range-checked.
 */
#include <string.h>

#include "encoding.h"
#include "page_read.h"

void hs_pq_dict_free(hs_pq_dict *dict) {
  hs_buf_free(&dict->values);
  hs_buf_free(&dict->offsets);
  hs_buf_free(&dict->data);
  dict->present = false;
  dict->n = 0;
}

void hs_pq_acc_free(hs_pq_acc *acc) {
  hs_buf_free(&acc->def);
  hs_buf_free(&acc->rep);
  hs_buf_free(&acc->values);
  hs_buf_free(&acc->offsets);
  hs_buf_free(&acc->data);
  acc->n_levels = 0;
  acc->n_values = 0;
}

static hs_status nomem(hs_error *err, const hs_pq_page_ctx *ctx, const char *what) {
  return hs_error_set(err, HS_ERR_NOMEM, "out of memory for %s", what);
}

hs_status hs_pq_acc_init_offsets(hs_pq_acc *acc, hs_error *err) {
  if (acc->offsets.len > 0) return HS_OK;
  int32_t zero = 0;
  if (!hs_buf_append(&acc->offsets, &zero, sizeof zero)) {
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory for byte array offsets");
  }
  return HS_OK;
}

/* Room for n more entries of `width` bytes at the end of `b`. */
static uint8_t *buf_reserve_n(hs_buf *b, size_t n, size_t width) {
  size_t bytes;
  if (!hs_mul_size(n, width, &bytes) || bytes > HS_ALLOC_BYTES_MAX) return NULL;
  /* At least one byte, so that the result is never NULL + 0. */
  if (!hs_buf_reserve(b, bytes ? bytes : 1)) return NULL;
  return b->data + b->len;
}

/* ------------------------------------------------------------- levels */

/* Levels wider than max_level would mislead assembly (e.g. a rep level that
 * names a list that does not exist), so they are rejected here. */
static hs_status levels_check(const int16_t *lv, size_t n, int16_t max_level, hs_error *err) {
  int16_t worst = 0;
  for (size_t i = 0; i < n; i++) worst = lv[i] > worst ? lv[i] : worst;
  if (worst > max_level) {
    return hs_error_set(err, HS_ERR_CORRUPT, "level %d exceeds the maximum %d", worst, max_level);
  }
  return HS_OK;
}

hs_status hs_pq_levels_decode_v1(int32_t encoding, int16_t max_level, const uint8_t *buf,
                                 size_t len, size_t n, hs_buf *levels, size_t *consumed,
                                 hs_error *err) {
  int bw = hs_bit_width((uint64_t)max_level);
  int16_t *dst = (int16_t *)buf_reserve_n(levels, n, sizeof(int16_t));
  if (dst == NULL && n > 0) return hs_error_set(err, HS_ERR_NOMEM, "out of memory for levels");
  hs_status st;
  if (encoding == HS_PQ_ENC_RLE) {
    if (len < 4) return hs_error_set(err, HS_ERR_CORRUPT, "level length prefix truncated");
    uint32_t rle_len = hs_load_u32le(buf);
    if (rle_len > len - 4) {
      return hs_error_set(err, HS_ERR_CORRUPT, "levels claim %u bytes, %zu remain", rle_len,
                          len - 4);
    }
    st = hs_rle_decode_levels(buf + 4, rle_len, bw, dst, n, NULL, err);
    *consumed = 4 + (size_t)rle_len;
  } else if (encoding == HS_PQ_ENC_BIT_PACKED) {
    st = hs_bitpacked_legacy_decode_levels(buf, len, bw, dst, n, consumed, err);
  } else {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "level encoding %s",
                        hs_pq_encoding_name(encoding));
  }
  if (st != HS_OK) return st;
  st = levels_check(dst, n, max_level, err);
  if (st != HS_OK) return st;
  levels->len += n * sizeof(int16_t);
  return HS_OK;
}

hs_status hs_pq_levels_decode_v2(int16_t max_level, const uint8_t *buf, size_t len, size_t n,
                                 hs_buf *levels, hs_error *err) {
  int bw = hs_bit_width((uint64_t)max_level);
  int16_t *dst = (int16_t *)buf_reserve_n(levels, n, sizeof(int16_t));
  if (dst == NULL && n > 0) return hs_error_set(err, HS_ERR_NOMEM, "out of memory for levels");
  hs_status st = hs_rle_decode_levels(buf, len, bw, dst, n, NULL, err);
  if (st == HS_OK) st = levels_check(dst, n, max_level, err);
  if (st != HS_OK) return st;
  levels->len += n * sizeof(int16_t);
  return HS_OK;
}

/* ---------------------------------------------------------- dictionary */

hs_status hs_pq_dict_decode(const hs_pq_page_ctx *ctx, int32_t encoding, const uint8_t *buf,
                            size_t len, int64_t n, hs_error *err) {
  hs_pq_dict *d = ctx->dict;
  hs_pq_dict_free(d);
  if (encoding != HS_PQ_ENC_PLAIN && encoding != HS_PQ_ENC_PLAIN_DICTIONARY) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "dictionary page encoding %s",
                        hs_pq_encoding_name(encoding));
  }
  if (n < 0) {
    return hs_error_set(err, HS_ERR_CORRUPT, "dictionary of %lld entries", (long long)n);
  }
  size_t cnt = (size_t)n;
  hs_pq_type type = ctx->desc->type;
  hs_status st = HS_OK;
  if (type == HS_PQ_BYTE_ARRAY) {
    /* Each entry carries at least its 4-byte length. */
    if (cnt > len / 4) goto too_many;
    /* PLAIN byte arrays never hold more bytes than the page; reserving
     * them all up front keeps the decoder's writes inside the buffer even
     * when a hostile length swallows the rest of the page. */
    if (!hs_buf_reserve(&d->data, len)) return nomem(err, ctx, "dictionary");
    int32_t *offs = (int32_t *)buf_reserve_n(&d->offsets, cnt + 1, sizeof(int32_t));
    if (offs == NULL) return nomem(err, ctx, "dictionary");
    offs[0] = 0;
    st = hs_plain_decode_byte_array(buf, len, cnt, offs, &d->data, NULL, err);
    if (st != HS_OK) goto fail;
    d->offsets.len = (cnt + 1) * sizeof(int32_t);
  } else if (type == HS_PQ_BOOLEAN) {
    if (cnt / 8 > len) goto too_many;
    uint8_t *dst = buf_reserve_n(&d->values, cnt, 1);
    if (dst == NULL && cnt > 0) return nomem(err, ctx, "dictionary");
    st = hs_plain_decode_bool(buf, len, dst, cnt, NULL, err);
    if (st != HS_OK) goto fail;
    d->values.len = cnt;
  } else {
    size_t w = (size_t)ctx->width;
    if (w == 0 || cnt > len / w) goto too_many;
    uint8_t *dst = buf_reserve_n(&d->values, cnt, w);
    if (dst == NULL && cnt > 0) return nomem(err, ctx, "dictionary");
    if (cnt > 0) memcpy(dst, buf, cnt * w);
    d->values.len = cnt * w;
  }
  d->n = n;
  d->present = true;
  return HS_OK;
too_many:
  return hs_error_set(err, HS_ERR_CORRUPT, "dictionary claims %lld entries in a %zu-byte page",
                      (long long)n, len);
fail:
  hs_pq_dict_free(d);
  return st;
}

/* --------------------------------------------------------------- values */

/* The error for a page whose indices reach past the dictionary: names the
 * largest, as the check before the gather did. */
static hs_status dict_out_of_range(const uint32_t *idx, size_t n, int64_t dict_n, hs_error *err) {
  uint32_t top = 0;
  for (size_t i = 0; i < n; i++) top = idx[i] > top ? idx[i] : top;
  return hs_error_set(err, HS_ERR_CORRUPT,
                      "dictionary index %u out of range (dictionary has %lld entries)", top,
                      (long long)dict_n);
}

static hs_status dict_gather(const hs_pq_page_ctx *ctx, const uint8_t *buf, size_t len, size_t n,
                             hs_pq_acc *acc, hs_error *err) {
  const hs_pq_dict *d = ctx->dict;
  if (d == NULL || !d->present) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "dictionary-encoded page but the chunk has no dictionary page");
  }
  uint32_t *idx = (uint32_t *)buf_reserve_n(ctx->idx, n, sizeof(uint32_t));
  if (idx == NULL) return nomem(err, ctx, "dictionary indices");
  hs_status st = hs_dict_indices_decode(buf, len, idx, n, err);
  if (st != HS_OK) return st;
  if (ctx->desc->type == HS_PQ_BYTE_ARRAY) {
    /* One pass over the indices both checks them and finds the largest. */
    uint32_t top = 0;
    for (size_t i = 0; i < n; i++) top = idx[i] > top ? idx[i] : top;
    if ((int64_t)top >= d->n) return dict_out_of_range(idx, n, d->n, err);
    const int32_t *doff = (const int32_t *)d->offsets.data;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += (size_t)(doff[idx[i] + 1] - doff[idx[i]]);
    if (total > (size_t)INT32_MAX - acc->data.len) {
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "more than 2 GiB of byte array data in one chunk");
    }
    int32_t *offs = (int32_t *)buf_reserve_n(&acc->offsets, n, sizeof(int32_t));
    if (offs == NULL || !hs_buf_reserve(&acc->data, total)) return nomem(err, ctx, "values");
    offs = (int32_t *)(acc->offsets.data + acc->offsets.len) - 1;
    uint8_t *out = acc->data.data;
    int32_t pos = offs[0];
    for (size_t i = 0; i < n; i++) {
      int32_t a = doff[idx[i]], b = doff[idx[i] + 1];
      if (b != a) memcpy(out + pos, d->data.data + a, (size_t)(b - a)); /* all-empty: NULL bufs */
      pos += b - a;
      offs[i + 1] = pos;
    }
    acc->data.len = (size_t)pos;
    acc->offsets.len += n * sizeof(int32_t);
    return HS_OK;
  }
  size_t w = (size_t)ctx->width;
  uint8_t *dst = buf_reserve_n(&acc->values, n, w);
  if (dst == NULL) return nomem(err, ctx, "values");
  const uint8_t *src = d->values.data;
  /* The range check rides along the gather instead of a pass of its own:
   * an index past the dictionary reads entry 0 (branch-free select) and
   * sets `bad`, and the page fails after the loop (the values written are
   * not kept: acc->values.len is not advanced). Constant-size copies let
   * the compiler emit plain loads and stores. d->n >= 1 here: a present
   * dictionary with indices to gather has entries or every index is bad. */
  const uint32_t nd = d->n > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)d->n;
  if (nd == 0) return dict_out_of_range(idx, n, d->n, err);
  uint32_t bad = 0;
  switch (w) {
  case 1:
    for (size_t i = 0; i < n; i++) {
      uint32_t k = idx[i], ok = k < nd;
      bad |= ok ^ 1u;
      dst[i] = src[ok ? k : 0];
    }
    break;
  case 4:
    for (size_t i = 0; i < n; i++) {
      uint32_t k = idx[i], ok = k < nd;
      bad |= ok ^ 1u;
      memcpy(dst + 4 * i, src + 4 * (size_t)(ok ? k : 0), 4);
    }
    break;
  case 8:
    for (size_t i = 0; i < n; i++) {
      uint32_t k = idx[i], ok = k < nd;
      bad |= ok ^ 1u;
      memcpy(dst + 8 * i, src + 8 * (size_t)(ok ? k : 0), 8);
    }
    break;
  default:
    for (size_t i = 0; i < n; i++) {
      uint32_t k = idx[i], ok = k < nd;
      bad |= ok ^ 1u;
      memcpy(dst + w * i, src + w * (size_t)(ok ? k : 0), w);
    }
    break;
  }
  if (bad) return dict_out_of_range(idx, n, d->n, err);
  acc->values.len += n * w;
  return HS_OK;
}

/* Byte-array decoders share one shape: offsets continue from the last one. */
typedef hs_status (*byte_array_fn)(const uint8_t *buf, size_t len, size_t n, int32_t *offsets,
                                   hs_buf *data, size_t *consumed, hs_error *err);

static hs_status byte_array_decode(const hs_pq_page_ctx *ctx, byte_array_fn fn, const uint8_t *buf,
                                   size_t len, size_t n, hs_pq_acc *acc, hs_error *err) {
  if (buf_reserve_n(&acc->offsets, n, sizeof(int32_t)) == NULL) {
    return nomem(err, ctx, "offsets");
  }
  int32_t *offs = (int32_t *)(acc->offsets.data + acc->offsets.len) - 1;
  hs_status st = fn(buf, len, n, offs, &acc->data, NULL, err);
  if (st != HS_OK) return st;
  acc->offsets.len += n * sizeof(int32_t);
  return HS_OK;
}

static hs_status bad_encoding(const hs_pq_page_ctx *ctx, int32_t encoding, hs_error *err) {
  return hs_error_set(err, HS_ERR_UNSUPPORTED, "encoding %s (%d) for type %s",
                      hs_pq_encoding_name(encoding), encoding, hs_pq_type_name(ctx->desc->type));
}

hs_status hs_pq_values_decode(const hs_pq_page_ctx *ctx, int32_t encoding, const uint8_t *buf,
                              size_t len, size_t n, hs_pq_acc *acc, hs_error *err) {
  hs_pq_type type = ctx->desc->type;
  size_t w = ctx->width > 0 ? (size_t)ctx->width : 0;
  if (n == 0) return HS_OK;
  if (type == HS_PQ_BYTE_ARRAY) {
    hs_status st = hs_pq_acc_init_offsets(acc, err);
    if (st != HS_OK) return st;
  }
  hs_status st;
  uint8_t *dst;
  switch (encoding) {
  case HS_PQ_ENC_PLAIN:
    if (type == HS_PQ_BYTE_ARRAY) {
      if (n > len / 4) goto short_page;
      /* At most len - 4n value bytes: reserving exactly that (not len) lets
       * the buffer come back from the block cache next read at its size. */
      if (!hs_buf_reserve(&acc->data, len - 4 * n)) return nomem(err, ctx, "values");
      return byte_array_decode(ctx, hs_plain_decode_byte_array, buf, len, n, acc, err);
    }
    if (type == HS_PQ_BOOLEAN) {
      if (n / 8 > len) goto short_page;
      dst = buf_reserve_n(&acc->values, n, 1);
      if (dst == NULL) return nomem(err, ctx, "values");
      st = hs_plain_decode_bool(buf, len, dst, n, NULL, err);
      if (st != HS_OK) return st;
      acc->values.len += n;
      return HS_OK;
    }
    /* Fixed width: the hot path for required numeric columns is this one
     * memcpy straight from the (decompressed) page into the output. */
    if (w == 0 || n > len / w) goto short_page;
    if (!hs_buf_append(&acc->values, buf, n * w)) return nomem(err, ctx, "values");
    return HS_OK;

  case HS_PQ_ENC_PLAIN_DICTIONARY:
  case HS_PQ_ENC_RLE_DICTIONARY: return dict_gather(ctx, buf, len, n, acc, err);

  case HS_PQ_ENC_RLE: {
    if (type != HS_PQ_BOOLEAN) return bad_encoding(ctx, encoding, err);
    if (len < 4) goto short_page;
    uint32_t rle_len = hs_load_u32le(buf);
    if (rle_len > len - 4) goto short_page;
    uint32_t *tmp = (uint32_t *)buf_reserve_n(ctx->idx, n, sizeof(uint32_t));
    dst = buf_reserve_n(&acc->values, n, 1);
    if (tmp == NULL || dst == NULL) return nomem(err, ctx, "values");
    st = hs_rle_decode_u32(buf + 4, rle_len, 1, tmp, n, NULL, err);
    if (st != HS_OK) return st;
    for (size_t i = 0; i < n; i++) dst[i] = (uint8_t)(tmp[i] & 1);
    acc->values.len += n;
    return HS_OK;
  }

  case HS_PQ_ENC_DELTA_BINARY_PACKED:
    if (type != HS_PQ_INT32 && type != HS_PQ_INT64) return bad_encoding(ctx, encoding, err);
    dst = buf_reserve_n(&acc->values, n, w);
    if (dst == NULL) return nomem(err, ctx, "values");
    /* acc->values holds only this column's width, so dst stays aligned. */
    st = type == HS_PQ_INT32
             ? hs_delta_binary_decode_i32(buf, len, (int32_t *)(void *)dst, n, NULL, err)
             : hs_delta_binary_decode_i64(buf, len, (int64_t *)(void *)dst, n, NULL, err);
    if (st != HS_OK) return st;
    acc->values.len += n * w;
    return HS_OK;

  case HS_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    if (type != HS_PQ_BYTE_ARRAY) return bad_encoding(ctx, encoding, err);
    return byte_array_decode(ctx, hs_delta_length_decode, buf, len, n, acc, err);

  case HS_PQ_ENC_DELTA_BYTE_ARRAY:
    if (type == HS_PQ_BYTE_ARRAY) {
      return byte_array_decode(ctx, hs_delta_byte_array_decode, buf, len, n, acc, err);
    }
    if (type != HS_PQ_FIXED_LEN_BYTE_ARRAY) return bad_encoding(ctx, encoding, err);
    dst = buf_reserve_n(&acc->values, n, w);
    if (dst == NULL) return nomem(err, ctx, "values");
    st = hs_delta_byte_array_decode_fixed(buf, len, n, (int)w, dst, NULL, err);
    if (st != HS_OK) return st;
    acc->values.len += n * w;
    return HS_OK;

  case HS_PQ_ENC_BYTE_STREAM_SPLIT:
    if (type == HS_PQ_BOOLEAN || type == HS_PQ_BYTE_ARRAY || w == 0) {
      return bad_encoding(ctx, encoding, err);
    }
    if (n > len / w) goto short_page;
    dst = buf_reserve_n(&acc->values, n, w);
    if (dst == NULL) return nomem(err, ctx, "values");
    st = hs_byte_stream_split_decode(buf, len, (int)w, dst, n, err);
    if (st != HS_OK) return st;
    acc->values.len += n * w;
    return HS_OK;

  default: return bad_encoding(ctx, encoding, err);
  }
short_page:
  return hs_error_set(err, HS_ERR_CORRUPT, "%zu %s values do not fit in %zu bytes", n,
                      hs_pq_encoding_name(encoding), len);
}
