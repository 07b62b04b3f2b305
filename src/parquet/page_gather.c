/*
 * page_gather.c — row-level random access inside one uncompressed page of a
 * flat column: only the selected rows' levels and values are read, straight
 * from the page bytes (a mapped file's pages are touched only where the
 * rows lie). column_read.c decides when a page qualifies (page_read.h,
 * hs_pq_gather_supported) and falls back to decoding the page otherwise.
 *
 * Random access needs a position -> bytes rule: PLAIN fixed-width values
 * (value v at v * width), PLAIN booleans (bit v), dictionary indices
 * (an RLE/bit-packed hybrid stream, walked by run headers with
 * hs_rle_cursor) and DELTA_BINARY_PACKED INT32/INT64 values (a directory
 * per miniblock, cached per page in page_cache.c, then the prefix of one
 * miniblock through hs_delta_cursor). Definition levels (max 1) are walked
 * the same way as dictionary indices; the
 * value index of a row is the count of non-null levels before it
 * (popcount inside bit-packed runs, one step per RLE run).
 *
 * Bytes are untrusted: every value read is bounds-checked, dictionary
 * indices against the dictionary. Positions past the last selected row are
 * not looked at, so damage there goes unnoticed (as for skipped pages).
 */
#include <string.h>

#include "chunk_memo.h"
#include "encoding.h"
#include "page_read.h"

bool hs_pq_gather_supported(const hs_pq_page_ctx *ctx, int32_t encoding) {
  const hs_pq_leaf_desc *d = ctx->desc;
  /* List leaves (page_gather_rep.c): one level of repetition, any nesting
   * of optional levels. */
  if (d->max_rep > 1 || (d->max_rep == 0 && d->max_def > 1)) return false;
  if (encoding == HS_PQ_ENC_PLAIN_DICTIONARY || encoding == HS_PQ_ENC_RLE_DICTIONARY) {
    return ctx->dict != NULL && ctx->dict->present;
  }
  if (encoding == HS_PQ_ENC_DELTA_BINARY_PACKED) {
    return d->type == HS_PQ_INT32 || d->type == HS_PQ_INT64;
  }
  if (encoding != HS_PQ_ENC_PLAIN) return false;
  return d->type == HS_PQ_BOOLEAN || (d->type != HS_PQ_BYTE_ARRAY && ctx->width > 0);
}

static hs_status gather_corrupt(hs_error *err, const char *what, int64_t row, long long v) {
  return hs_error_set(err, HS_ERR_CORRUPT, "row %lld of the page: %s (%lld)", (long long)row, what,
                      v);
}

hs_status hs_pq_gather_value(const hs_pq_page_ctx *ctx, const hs_pq_gather_page *pg,
                             hs_pq_gather_cursors *cur, int64_t row, int64_t v, hs_pq_acc *acc,
                             hs_error *err) {
  const hs_pq_leaf_desc *d = ctx->desc;
  size_t w = ctx->width > 0 ? (size_t)ctx->width : 0;
  if (pg->encoding == HS_PQ_ENC_DELTA_BINARY_PACKED) {
    uint64_t x;
    hs_status st = hs_delta_cursor_get(&cur->delta, v, &x, err);
    if (st != HS_OK) return st;
    uint32_t x32 = (uint32_t)x; /* INT32: the low half, as modulo-2^32 arithmetic gives */
    bool ok = d->type == HS_PQ_INT32 ? hs_buf_append(&acc->values, &x32, sizeof x32)
                                     : hs_buf_append(&acc->values, &x, sizeof x);
    return ok ? HS_OK : HS_ERR_NOMEM;
  }
  if (pg->encoding == HS_PQ_ENC_PLAIN) {
    if (d->type == HS_PQ_BOOLEAN) {
      if ((uint64_t)v / 8 >= pg->vlen) return gather_corrupt(err, "value past the page", row, v);
      uint8_t b = (uint8_t)((pg->vals[v / 8] >> (v % 8)) & 1);
      return hs_buf_append(&acc->values, &b, 1) ? HS_OK : HS_ERR_NOMEM;
    }
    if ((uint64_t)v >= pg->vlen / w) return gather_corrupt(err, "value past the page", row, v);
    return hs_buf_append(&acc->values, pg->vals + (size_t)v * w, w) ? HS_OK : HS_ERR_NOMEM;
  }
  uint32_t k;
  hs_status st = hs_rle_cursor_get(&cur->ix, v, &k, err);
  if (st != HS_OK) return st;
  const hs_pq_dict *dict = ctx->dict;
  if ((int64_t)k >= dict->n) return gather_corrupt(err, "dictionary index out of range", row, k);
  if (d->type != HS_PQ_BYTE_ARRAY) {
    return hs_buf_append(&acc->values, dict->values.data + (size_t)k * w, w) ? HS_OK : HS_ERR_NOMEM;
  }
  const int32_t *doff = (const int32_t *)(const void *)dict->offsets.data;
  int32_t a = doff[k], b = doff[k + 1];
  if ((size_t)(b - a) > (size_t)INT32_MAX - acc->data.len) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "more than 2 GiB of byte array data in one chunk");
  }
  if (b > a && !hs_buf_append(&acc->data, dict->data.data + a, (size_t)(b - a))) {
    return HS_ERR_NOMEM;
  }
  int32_t end = (int32_t)acc->data.len;
  return hs_buf_append(&acc->offsets, &end, sizeof end) ? HS_OK : HS_ERR_NOMEM;
}

/* Rows ahead whose bytes are prefetched while the current one is read: a
 * selective read touches a new cache line (often a new OS page) per row and
 * column, so the loads overlap instead of waiting in turn. Delta pages
 * prefetch their directory entry twice as far ahead, then the deltas. */
#define GATHER_AHEAD 8

/* Prefetch what reading value v (an estimate: exact without NULLs) needs. */
static void gather_prefetch(const hs_pq_page_ctx *ctx, const hs_pq_gather_page *pg,
                            const hs_pq_gather_cursors *cur, int64_t v, bool far) {
  if (v < 0) return;
  if (pg->encoding == HS_PQ_ENC_DELTA_BINARY_PACKED) {
    hs_delta_cursor_prefetch(&cur->delta, v, !far);
  } else if (far) {
    return;
  } else if (pg->encoding == HS_PQ_ENC_PLAIN) {
    size_t w = ctx->desc->type == HS_PQ_BOOLEAN ? 0 : (size_t)ctx->width;
    size_t at = w > 0 ? (size_t)v * w : (size_t)v / 8;
    if (at < pg->vlen) __builtin_prefetch(pg->vals + at);
  } else {
    const hs_rle_cursor *c = &cur->ix; /* dictionary indices in a bit-packed run */
    if (c->packed && v >= c->run_start && v < c->run_end) {
      size_t at = (size_t)(v - c->run_start) * (size_t)c->bw / 8;
      if (at < c->data_len) __builtin_prefetch(c->data + at);
    }
  }
}

static void delta_dir_free(void *p) {
  hs_delta_dir_free(p);
  hs_free(p);
}

/* The delta directory of the page's value stream: cached, or built (and
 * cached when the page has a file stamp). *ref is the caller's to put. */
static hs_status delta_dir_get(const hs_pq_gather_page *pg, const hs_delta_dir **dir,
                               hs_pq_cached **ref, hs_error *err) {
  hs_pq_cached *kept =
      pg->memo != NULL ? atomic_load_explicit(&pg->memo->delta, memory_order_acquire) : NULL;
  if (kept != NULL) { /* the page's memo holds it (chunk_memo.h) */
    *ref = NULL;
    *dir = hs_pq_cached_obj(kept);
    return HS_OK;
  }
  *ref = hs_pq_cache_find(pg->stamp, pg->offset, pg->vlen, HS_PQ_CACHED_DELTA_DIR);
  if (*ref == NULL) {
    hs_delta_dir *d = hs_calloc(1, sizeof *d);
    if (d == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory for a delta directory");
    uint64_t total_max = pg->n_levels > 0 ? (uint64_t)pg->n_levels : 0;
    hs_status st = hs_delta_dir_build(pg->vals, pg->vlen, total_max, d, err);
    if (st != HS_OK) {
      hs_free(d);
      return st;
    }
    *ref = hs_pq_cache_add(pg->stamp, pg->offset, pg->vlen, HS_PQ_CACHED_DELTA_DIR, d,
                           hs_delta_dir_bytes(d), delta_dir_free);
    if (*ref == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory for a delta directory");
  }
  *dir = hs_pq_cached_obj(*ref);
  if (pg->memo != NULL && hs_pq_memo_keep_cached(&pg->memo->delta, *ref, hs_pq_cached_bytes(*ref)))
    *ref = NULL; /* the memo's reference now */
  return HS_OK;
}

hs_status hs_pq_gather_cursors_init(const hs_pq_page_ctx *ctx, const hs_pq_gather_page *pg,
                                    hs_pq_gather_cursors *cur, hs_pq_cached **dref, bool any,
                                    hs_error *err) {
  (void)ctx;
  memset(cur, 0, sizeof *cur);
  *dref = NULL;
  if (pg->encoding == HS_PQ_ENC_DELTA_BINARY_PACKED) {
    const hs_delta_dir *dir = NULL;
    /* Cheap for a page none of whose rows is a value: nothing to look up. */
    hs_status st = any ? delta_dir_get(pg, &dir, dref, err) : HS_OK;
    if (st != HS_OK) return st;
    if (dir != NULL) hs_delta_cursor_init(&cur->delta, dir, pg->vals, pg->vlen);
    cur->has_delta = dir != NULL;
  } else if (pg->encoding != HS_PQ_ENC_PLAIN) {
    if (pg->vlen < 1 || pg->vals[0] > 32) {
      return hs_error_set(err, HS_ERR_CORRUPT, "dictionary index bit width missing or > 32");
    }
    hs_rle_cursor_init(&cur->ix, pg->vals + 1, pg->vlen - 1, pg->vals[0]);
  }
  return HS_OK;
}

hs_status hs_pq_page_gather(const hs_pq_page_ctx *ctx, const hs_pq_gather_page *pg,
                            const int64_t *rows, size_t k, int64_t base, hs_pq_acc *acc,
                            int64_t *n_values, hs_error *err) {
  int16_t max_def = ctx->desc->max_def;
  hs_rle_cursor def;
  hs_pq_gather_cursors cur;
  memset(&def, 0, sizeof def);
  if (max_def > 0) hs_rle_cursor_init(&def, pg->def, pg->def_len, 1);
  hs_pq_cached *dref = NULL;
  hs_status st = hs_pq_gather_cursors_init(ctx, pg, &cur, &dref, k > 0, err);
  if (st != HS_OK) return st;
  if (ctx->desc->type == HS_PQ_BYTE_ARRAY) st = hs_pq_acc_init_offsets(acc, err);
  if (st == HS_OK && max_def > 0 && !hs_buf_reserve(&acc->def, k * sizeof(int16_t))) {
    st = HS_ERR_NOMEM;
  }
  int64_t nv = 0;
  bool delta = pg->encoding == HS_PQ_ENC_DELTA_BINARY_PACKED && cur.has_delta;
  int64_t nulls = 0; /* rows before the current one without a value */
  for (size_t j = 0; j < k && st == HS_OK; j++) {
    if (j + GATHER_AHEAD < k)
      gather_prefetch(ctx, pg, &cur, rows[j + GATHER_AHEAD] - base - nulls, false);
    if (delta && j + 2 * GATHER_AHEAD < k)
      gather_prefetch(ctx, pg, &cur, rows[j + 2 * GATHER_AHEAD] - base - nulls, true);
    int64_t row = rows[j] - base, v = row;
    bool valid = true;
    if (max_def > 0) {
      uint32_t lv = 0;
      st = hs_rle_cursor_count_to(&def, row, 1, &v, err);
      if (st == HS_OK) st = hs_rle_cursor_get(&def, row, &lv, err);
      if (st != HS_OK) break;
      int16_t l = (int16_t)lv;
      memcpy(acc->def.data + acc->def.len, &l, sizeof l);
      acc->def.len += sizeof l;
      valid = lv == 1;
    }
    nulls = row - v;
    if (!valid) continue;
    st = hs_pq_gather_value(ctx, pg, &cur, row, v, acc, err);
    nv++;
  }
  if (st == HS_ERR_NOMEM && (err == NULL || err->status != HS_ERR_NOMEM)) {
    st = hs_error_set(err, HS_ERR_NOMEM, "out of memory gathering %zu rows", k);
  }
  hs_pq_cache_put(dref);
  *n_values = nv;
  return st;
}
