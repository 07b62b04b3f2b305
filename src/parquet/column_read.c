/*
 * column_read.c — reading one column chunk into hs_pq_leaf_data (column.h).
 *
 * A chunk is a run of pages: an optional dictionary page, then data pages
 * (v1 or v2), each preceded by a Thrift page header. This file locates the
 * chunk, walks its pages, checks page CRCs, decompresses into a reused
 * scratch buffer and hands the page body to page_read.c, which appends
 * levels and values to an accumulator. Row selection happens here: pages
 * that hold none of the selected rows are skipped without being read past
 * their header (or at all, with an offset index), and the rows kept from the
 * pages that are decoded are compacted in place.
 *
 * Every offset and size comes from the file and is checked against the
 * chunk's byte range, which is checked against the file size; page value
 * counts are bounded by the chunk's num_values before anything is
 * allocated for them.
 *
 * Implicit levels (hs_pq_column_read_lazy, reader_internal.h): a whole-chunk
 * read keeps no definition levels while every one is max_def, and no
 * repetition levels while every record has the same number of levels; each
 * page's levels are decoded into scratch, checked and dropped. The first
 * page that breaks the pattern stores every level from then on (the earlier
 * ones are regenerated). For a column without nulls, or a fixed-size list
 * of vectors, this saves two or four bytes per value and the per-level work
 * downstream.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../common/verify_switch.h"
#include "chunk_memo.h"
#include "column.h"
#include "compress.h"
#include "page_read.h"
#include "reader_internal.h"

/* Page CRCs are checked, except in fuzz builds (scripts/build.sh fuzz
 * instruments the library with SanitizerCoverage; FUZZING_BUILD_MODE_-
 * UNSAFE_FOR_PRODUCTION is the usual flag for the same): random inputs
 * almost never carry a right CRC, and would otherwise stop there instead
 * of reaching the decompressors and decoders. */
#if defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
#define CR_CHECK_CRC 0
#elif defined(__has_feature)
#if __has_feature(coverage_sanitizer)
#define CR_CHECK_CRC 0
#endif
#endif
#ifndef CR_CHECK_CRC
#define CR_CHECK_CRC 1
#endif

int hs_pq_leaf_value_width(const hs_pq_leaf_desc *d) {
  switch (d->type) {
  case HS_PQ_BOOLEAN: return 1;
  case HS_PQ_INT32: return 4;
  case HS_PQ_INT64: return 8;
  case HS_PQ_INT96: return 12;
  case HS_PQ_FLOAT: return 4;
  case HS_PQ_DOUBLE: return 8;
  case HS_PQ_FIXED_LEN_BYTE_ARRAY: return d->type_length;
  case HS_PQ_BYTE_ARRAY: return -1;
  }
  return -1;
}

void hs_pq_leaf_data_free(hs_pq_leaf_data *d) {
  if (d == NULL) return;
  hs_free(d->def);
  hs_free(d->rep);
  hs_buf_free(&d->values);
  hs_free(d->offsets);
  hs_buf_free(&d->data);
  memset(d, 0, sizeof *d);
}

/* State of one hs_pq_column_read call. */
typedef struct hs_cr {
  hs_source *src;
  const hs_pq_leaf_desc *desc;
  const char *path;
  int32_t codec;
  uint64_t chunk_start, chunk_end; /* byte range of the chunk in the file */
  int64_t num_values;              /* levels the chunk holds (metadata) */
  hs_arena arena;                  /* page header statistics; reset per page */
  hs_buf hdr_view, body_view;      /* copies, when the source cannot lend bytes */
  hs_buf unz;                      /* decompressed page, reused */
  hs_buf idx;                      /* dictionary indices, reused */
  hs_pq_dict dict;
  hs_pq_cached *dict_ref; /* ctx.dict lent by the page cache, or NULL */
  hs_pq_page_ctx ctx;
  hs_pq_acc acc;
  bool data_seen; /* a data page was met: no dictionary page may follow */
  /* The dictionary is decoded only when the first data page is, so a read
   * that skips every page reads no dictionary either. dict_check: a
   * dictionary page may start at dict_at (found by the walk, or expected
   * before the first page an offset index lists). */
  bool dict_check, dict_seen;
  uint64_t dict_at;
  /* Row selection (sel == NULL: every row). */
  const int64_t *sel;
  size_t n_sel, sel_i; /* sel[sel_i] is the first selected row not yet passed */
  int64_t cur_row;     /* row of the last level decoded or skipped; -1 before any */
  int64_t levels_seen; /* levels in pages decoded or skipped */
  int64_t n_rows;
  int64_t pages_read, pages_skipped;
  int64_t pages_gathered;   /* of pages_read: rows read in place (cr_page_gather) */
  bool gather;              /* the fast path is allowed (HS_PQ_GATHER=0 turns it off) */
  int64_t gather_dense_div; /* flat pages with > 1/div of their rows selected are decoded */
  /* Implicit levels (see the top of the file). While def_lazy, acc.def
   * holds only the page being checked; likewise acc.rep while rep_lazy.
   * rep_period: levels per record (0 until the first page shows it);
   * page_rows: records in the last page checked while rep_lazy. */
  bool def_lazy, rep_lazy;
  int64_t rep_period;
  int64_t page_rows;
  /* Direct pages (cr_direct_ok): bytes of levels in front of the values of
   * the last v1 page decompressed into place, the guess for the next. */
  size_t direct_pre;
  bool pooled;    /* a selection read: scratch from and back to the pool */
  bool has_stamp; /* a file source: its stamp as opened (caches, verified pages) */
  hs_fs_stamp stamp;
  /* The chunk's memo (chunk_memo.h), when read through the file's and its
   * offset index is the one read by: headers, checks, decompressed pages,
   * dictionary and derived objects kept between reads. */
  hs_pq_chunk_memo *memo;
} hs_cr;

/* Scratch buffers kept between chunk reads: the decompressed page (unz),
 * dictionary indices (idx) and, for reads with a row selection, the
 * buffers a page is decoded into before only its selected rows are kept.
 * Fresh megabyte buffers for every chunk cost a page fault per 4 KiB
 * touched and, with several reader threads, serialize them on the address
 * space (mmap/munmap of large allocations): a selective query decodes
 * ~40 such chunks. At most CR_POOL_MAX buffers of at most CR_POOL_BUF_MAX
 * bytes, CR_POOL_BYTES in all, are kept; the rest are freed as before.
 * Whole-chunk reads do not use it: their buffers are handed to Arrow, and
 * pinning scratch there cost a full scan 25 % more page faults. */
#define CR_POOL_MAX 16
#define CR_POOL_BUF_MAX ((size_t)8 << 20)
#define CR_POOL_BYTES ((size_t)48 << 20)

static pthread_mutex_t cr_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_buf cr_pool[CR_POOL_MAX];
static int cr_pool_n;
static size_t cr_pool_bytes;

/* *b (empty, never allocated) takes a pooled buffer, if any. */
static void cr_pool_take(hs_buf *b) {
  pthread_mutex_lock(&cr_pool_lock);
  if (cr_pool_n > 0) {
    *b = cr_pool[--cr_pool_n];
    cr_pool_bytes -= b->cap;
  }
  pthread_mutex_unlock(&cr_pool_lock);
  b->len = 0;
}

/* Return *b's allocation to the pool (or free it); *b is left empty. */
static void cr_pool_give(hs_buf *b) {
  if (b->data == NULL) return;
  if (b->cap <= CR_POOL_BUF_MAX) {
    pthread_mutex_lock(&cr_pool_lock);
    bool kept = cr_pool_n < CR_POOL_MAX && cr_pool_bytes + b->cap <= CR_POOL_BYTES;
    if (kept) {
      cr_pool[cr_pool_n++] = *b;
      cr_pool_bytes += b->cap;
    }
    pthread_mutex_unlock(&cr_pool_lock);
    if (kept) {
      hs_buf_init(b);
      return;
    }
  }
  hs_buf_free(b);
}

/* Move *b into *out; when b's allocation is much larger than its bytes (a
 * page's worth holding a few selected rows), *out gets an exact copy and
 * the allocation goes back to the pool. false: out of memory (b kept). */
static bool cr_pool_fit(hs_buf *b, hs_buf *out) {
  hs_buf_init(out);
  if (b->data == NULL || b->cap <= 2 * b->len + 65536) {
    *out = *b;
    hs_buf_init(b);
    return true;
  }
  if (!hs_buf_append(out, b->data, b->len)) return false;
  cr_pool_give(b);
  return true;
}

static void cr_free(hs_cr *r) {
  hs_arena_reset(&r->arena);
  hs_buf_free(&r->hdr_view);
  hs_buf_free(&r->body_view);
  hs_pq_dict_free(&r->dict);
  hs_pq_cache_put(r->dict_ref);
  if (r->pooled) { /* what cr_finish did not hand out */
    cr_pool_give(&r->unz);
    cr_pool_give(&r->idx);
    cr_pool_give(&r->acc.values);
    cr_pool_give(&r->acc.data);
    cr_pool_give(&r->acc.def);
  }
  hs_buf_free(&r->unz);
  hs_buf_free(&r->idx);
  hs_pq_acc_free(&r->acc);
}

static hs_status cr_corrupt_at(hs_cr *r, uint64_t off, hs_error *err, const char *what) {
  return hs_error_set(err, HS_ERR_CORRUPT, "column %s: page at offset %llu: %s", r->path,
                      (unsigned long long)off, what);
}

/* Parse the page header at `off`. Headers have no length prefix, so the
 * view starts small and grows (up to the end of the chunk) until the parser
 * is satisfied; *body_off receives the offset of the page body, which is
 * checked to lie inside the chunk. */
static hs_status cr_header(hs_cr *r, uint64_t off, hs_pq_page_header *ph, uint64_t *body_off,
                           hs_error *err) {
  if (off >= r->chunk_end) return cr_corrupt_at(r, off, err, "page header past the chunk's end");
  uint64_t avail = r->chunk_end - off;
  size_t win = avail < 1024 ? (size_t)avail : 1024;
  for (;;) {
    const uint8_t *p;
    hs_status st = hs_source_view(r->src, off, win, &r->hdr_view, &p, err);
    if (st != HS_OK) return st;
    hs_error e;
    e.status = HS_OK;
    e.message[0] = '\0';
    hs_arena_reset(&r->arena);
    size_t used = 0;
    memset(ph, 0, sizeof *ph);
    st = hs_pq_page_header_parse(p, win, &r->arena, ph, &used, &e);
    if (st == HS_OK) {
      *body_off = off + used;
      break;
    }
    if (win == avail) {
      return hs_error_set(err, st, "column %s: page header at offset %llu: %s", r->path,
                          (unsigned long long)off, e.message);
    }
    win = win > avail / 8 ? (size_t)avail : win * 8;
  }
  if (ph->compressed_page_size < 0 || ph->uncompressed_page_size < 0) {
    return cr_corrupt_at(r, off, err, "negative page size");
  }
  if ((uint64_t)ph->compressed_page_size > r->chunk_end - *body_off) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "column %s: page at offset %llu: %d bytes overrun the chunk ending at %llu",
                        r->path, (unsigned long long)off, ph->compressed_page_size,
                        (unsigned long long)r->chunk_end);
  }
  return HS_OK;
}

/* View the page body and check its CRC (CRC-32 of the bytes as stored,
 * i.e. compressed, after the header; README.md "Page checksums"). A page
 * of a file source is checked once per process and file version: the
 * verified set (page_cache.c) remembers it, so a row gather that reads a
 * few rows of the page next query costs a lookup, not the page's bytes. */
static hs_status cr_body(hs_cr *r, uint64_t off, const hs_pq_page_header *ph, uint64_t body_off,
                         hs_pq_page_memo *pm, const uint8_t **body, hs_error *err) {
  static const uint8_t empty[1];
  size_t len = (size_t)ph->compressed_page_size;
  *body = empty;
  if (len > 0) {
    hs_status st = hs_source_view(r->src, body_off, len, &r->body_view, body, err);
    if (st != HS_OK) return st;
  }
  if (CR_CHECK_CRC && ph->has_crc && !hs_verify_skip_repeat()) {
    if (pm != NULL && atomic_load_explicit(&pm->verified, memory_order_acquire)) return HS_OK;
    const hs_fs_stamp *sp = r->has_stamp ? &r->stamp : NULL;
    uint32_t want = (uint32_t)ph->crc;
    if (hs_pq_page_verified(sp, off, (uint32_t)len, want)) {
      if (pm != NULL) atomic_store_explicit(&pm->verified, true, memory_order_release);
      return HS_OK;
    }
    uint32_t crc = hs_pq_crc32(0, *body, len);
    if (crc != want) {
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "column %s: %s page at offset %llu: page CRC mismatch (the header "
                          "stores %08x, the page's %zu bytes give %08x): the file is damaged",
                          r->path, ph->type == HS_PQ_DICTIONARY_PAGE ? "dictionary" : "data",
                          (unsigned long long)off, want, len, crc);
    }
    hs_pq_page_mark_verified(sp, off, (uint32_t)len, want);
    if (pm != NULL) atomic_store_explicit(&pm->verified, true, memory_order_release);
  }
  return HS_OK;
}

/* Decompress `src` into the reused scratch buffer when the chunk is
 * compressed; otherwise lend `src` itself. */
static hs_status cr_inflate(hs_cr *r, const uint8_t *src, size_t src_len, size_t dst_len,
                            const uint8_t **out, size_t *out_len, hs_error *err) {
  if (r->codec == HS_PQ_CODEC_UNCOMPRESSED || dst_len == 0) {
    *out = src;
    *out_len = r->codec == HS_PQ_CODEC_UNCOMPRESSED ? src_len : 0;
    return HS_OK;
  }
  r->unz.len = 0;
  if (!hs_buf_reserve(&r->unz, dst_len)) {
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory for a %zu-byte page", dst_len);
  }
  hs_status st = hs_pq_decompress(r->codec, src, src_len, r->unz.data, dst_len, err);
  if (st != HS_OK) return st;
  *out = r->unz.data;
  *out_len = dst_len;
  return HS_OK;
}

static hs_status cr_dict_page(hs_cr *r, uint64_t off, const hs_pq_page_header *ph,
                              const uint8_t *body, hs_error *err) {
  if (!ph->has_dictionary_page) return cr_corrupt_at(r, off, err, "no dictionary page header");
  const uint8_t *p = NULL;
  size_t plen = 0;
  hs_status st = cr_inflate(r, body, (size_t)ph->compressed_page_size,
                            (size_t)ph->uncompressed_page_size, &p, &plen, err);
  if (st == HS_OK) {
    st = hs_pq_dict_decode(&r->ctx, ph->dictionary_page.encoding, p, plen,
                           ph->dictionary_page.num_values, err);
  }
  if (st != HS_OK) {
    {
      hs_error_prefix(err, "column %s: dictionary page at offset %llu: ", r->path,
                      (unsigned long long)off);
      return st;
    }
  }
  r->pages_read++;
  return HS_OK;
}

/* Levels (n) in a data page header, or -1 when the header is malformed. */
static int64_t page_levels(const hs_pq_page_header *ph) {
  if (ph->type == HS_PQ_DATA_PAGE && ph->has_data_page) return ph->data_page.num_values;
  if (ph->type == HS_PQ_DATA_PAGE_V2 && ph->has_data_page_v2) return ph->data_page_v2.num_values;
  return -1;
}

/* Rows in a data page when the header tells: a flat v1 page has one row
 * per level; a v2 page counts its rows and starts at a row boundary. */
static int64_t page_rows(const hs_cr *r, const hs_pq_page_header *ph) {
  if (ph->type == HS_PQ_DATA_PAGE_V2) return ph->data_page_v2.num_rows;
  if (r->desc->max_rep == 0) return ph->data_page.num_values;
  return -1;
}

static hs_status cr_check_levels(hs_cr *r, uint64_t off, int64_t n, hs_error *err) {
  if (n < 0) return cr_corrupt_at(r, off, err, "malformed data page header");
  if (n > r->num_values - r->levels_seen) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "column %s: page at offset %llu: %lld values overrun the chunk's %lld",
                        r->path, (unsigned long long)off, (long long)n, (long long)r->num_values);
  }
  return HS_OK;
}

/* Store `count` repetition levels of the fixed pattern (a record every
 * `period` levels, max_rep 1) at dst. */
static void rep_pattern_fill(int16_t *dst, int64_t count, int64_t period) {
  for (int64_t i = 0; i < count; i += period) {
    int64_t e = count - i < period ? count - i : period;
    dst[i] = 0;
    for (int64_t j = 1; j < e; j++) dst[i + j] = 1;
  }
}

/* The current page (its n levels alone in `lv`) broke an implicit pattern:
 * store the n_levels earlier levels in front of it. */
static hs_status cr_levels_unlazy(hs_cr *r, hs_buf *lv, int64_t n, bool is_rep, hs_error *err) {
  size_t before = (size_t)r->acc.n_levels;
  if (before == 0) return HS_OK; /* nothing implicit yet: lv holds all there is */
  if (!hs_buf_reserve(lv, before * sizeof(int16_t))) {
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory for %zu levels", before + (size_t)n);
  }
  int16_t *d = (int16_t *)(void *)lv->data;
  memmove(d + before, d, (size_t)n * sizeof(int16_t));
  if (is_rep) {
    rep_pattern_fill(d, (int64_t)before, r->rep_period > 0 ? r->rep_period : 1);
  } else {
    for (size_t i = 0; i < before; i++) d[i] = r->desc->max_def;
  }
  lv->len = (before + (size_t)n) * sizeof(int16_t);
  return HS_OK;
}

/* A row selection of a list leaf keeps its levels implicit while every page
 * is gathered with the same number of levels a row, all defined (a vector
 * column): the first page that is not stores every level from then on;
 * its n levels (0: none) are the last stored. */
static hs_status cr_sel_unlazy(hs_cr *r, int64_t n, hs_error *err) {
  hs_status st = HS_OK;
  if (r->rep_lazy) {
    r->rep_lazy = false;
    st = cr_levels_unlazy(r, &r->acc.rep, n, true, err);
  }
  if (st == HS_OK && r->def_lazy) {
    r->def_lazy = false;
    st = cr_levels_unlazy(r, &r->acc.def, n, false, err);
  }
  return st;
}

static hs_status cr_def_unlazy(hs_cr *r, int64_t n, hs_error *err) {
  r->def_lazy = false;
  return cr_levels_unlazy(r, &r->acc.def, n, false, err);
}

/* While rep_lazy: drop the page's repetition levels (alone in acc.rep)
 * when they continue the pattern, counting its records; otherwise store
 * every level from now on. The first page fixes the period: the distance
 * from its first level (a record start) to the next record start. */
static hs_status cr_rep_page(hs_cr *r, int64_t n, hs_error *err) {
  hs_pq_acc *a = &r->acc;
  const int16_t *rep = (const int16_t *)(void *)a->rep.data;
  int64_t k = r->rep_period;
  if (k == 0 && a->n_levels == 0 && rep[0] == 0) {
    for (int64_t i = 1; i < n && k == 0; i++) k = rep[i] == 0 ? i : 0;
  }
  bool ok = k > 0;
  int64_t rows = 0;
  if (ok) {
    int64_t ph = a->n_levels % k;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
      bad |= rep[i] != (ph != 0);
      rows += ph == 0;
      ph = ph + 1 == k ? 0 : ph + 1;
    }
    ok = bad == 0;
  }
  if (!ok) {
    r->rep_lazy = false;
    return cr_levels_unlazy(r, &a->rep, n, true, err);
  }
  r->rep_period = k;
  r->page_rows = rows;
  a->rep.len = 0;
  return HS_OK;
}

/* Direct pages: a compressed page of PLAIN fixed-width values (not
 * BOOLEAN, which is bit-packed) of a flat column, read whole, is
 * decompressed straight into the values it appends to instead of into
 * scratch and copied from there. A v2 page's values are compressed alone.
 * A v1 page starts with its definition levels, of a length known only
 * once decompressed: the page goes `direct_pre` bytes (the last page's
 * level bytes: every page of a column without nulls encodes its levels
 * alike) in front of the values' end, over the previous page's last values,
 * which are saved and put back after the levels are decoded; a wrong guess
 * costs a memmove of the values into place. */
#define CR_DIRECT_PRE_MAX 64

static bool cr_direct_ok(const hs_cr *r, int32_t enc) {
  hs_pq_type t = r->desc->type;
  return enc == HS_PQ_ENC_PLAIN && r->sel == NULL && !r->pooled &&
         r->codec != HS_PQ_CODEC_UNCOMPRESSED && r->desc->max_rep == 0 && r->ctx.width > 0 &&
         t != HS_PQ_BOOLEAN && t != HS_PQ_BYTE_ARRAY;
}

/* Room for `bytes` at acc.values' end minus `pre`, within the capacity
 * reserved already (growing a chunk-sized buffer for a guess's few bytes
 * would double it): false means take the scratch path. */
static bool cr_direct_room(hs_cr *r, size_t pre, size_t bytes) {
  hs_buf *v = &r->acc.values;
  if (pre > CR_DIRECT_PRE_MAX || v->len < pre || bytes < pre) return false;
  if (v->len - pre + bytes <= v->cap) return true;
  return v->len == 0 && hs_buf_reserve(v, bytes); /* nothing reserved yet */
}

/* Decode one data page body into the accumulator (levels, then values). */
static hs_status cr_data_page_decode(hs_cr *r, const hs_pq_page_header *ph, const uint8_t *body,
                                     int64_t n, hs_error *err) {
  int16_t max_def = r->desc->max_def, max_rep = r->desc->max_rep;
  hs_pq_acc *a = &r->acc;
  size_t csize = (size_t)ph->compressed_page_size;
  const uint8_t *vals = NULL;
  size_t vlen = 0;
  int32_t enc;
  hs_status st;
  bool direct = false; /* the values are in place at acc.values' end */
  if (ph->type == HS_PQ_DATA_PAGE) {
    enc = ph->data_page.encoding;
    const uint8_t *p = NULL;
    size_t plen = 0, pos = 0, used = 0;
    size_t usize = (size_t)ph->uncompressed_page_size, pre = 0;
    uint8_t saved[CR_DIRECT_PRE_MAX];
    uint8_t *dst = NULL;
    if (n > 0 && usize > 0 && cr_direct_ok(r, enc) && cr_direct_room(r, r->direct_pre, usize)) {
      pre = r->direct_pre;
      dst = a->values.data + a->values.len - pre;
      memcpy(saved, dst, pre);
      st = hs_pq_decompress(r->codec, body, csize, dst, usize, err);
      if (st != HS_OK) {
        memcpy(dst, saved, pre);
        return st;
      }
      p = dst;
      plen = usize;
    } else {
      st = cr_inflate(r, body, csize, usize, &p, &plen, err);
      if (st != HS_OK) return st;
    }
    if (max_rep > 0 && n > 0) {
      st = hs_pq_levels_decode_v1(ph->data_page.repetition_level_encoding, max_rep, p, plen,
                                  (size_t)n, &a->rep, &used, err);
      if (st != HS_OK) {
        hs_error_prefix(err, "repetition levels: ");
        return st;
      }
      pos += used;
    }
    if (max_def > 0 && n > 0) {
      st = hs_pq_levels_decode_v1(ph->data_page.definition_level_encoding, max_def, p + pos,
                                  plen - pos, (size_t)n, &a->def, &used, err);
      if (st != HS_OK) {
        hs_error_prefix(err, "definition levels: ");
        return st;
      }
      pos += used;
    }
    vals = p + pos;
    vlen = plen - pos;
    if (dst != NULL) { /* levels decoded: values into place, saved bytes back */
      uint8_t *want = a->values.data + a->values.len;
      if (vals != want) memmove(want, vals, vlen);
      memcpy(dst, saved, pre);
      r->direct_pre = pos;
      vals = want;
      direct = true;
    }
  } else {
    enc = ph->data_page_v2.encoding;
    int64_t rl = ph->data_page_v2.repetition_levels_byte_length;
    int64_t dl = ph->data_page_v2.definition_levels_byte_length;
    if (rl < 0 || dl < 0 || rl + dl > (int64_t)csize ||
        rl + dl > (int64_t)ph->uncompressed_page_size) {
      return hs_error_set(err, HS_ERR_CORRUPT, "level lengths %lld + %lld exceed the page",
                          (long long)rl, (long long)dl);
    }
    /* v2 levels are never compressed and carry no length prefix. */
    if (max_rep > 0 && n > 0) {
      st = hs_pq_levels_decode_v2(max_rep, body, (size_t)rl, (size_t)n, &a->rep, err);
      if (st != HS_OK) {
        hs_error_prefix(err, "repetition levels: ");
        return st;
      }
    }
    if (max_def > 0 && n > 0) {
      st = hs_pq_levels_decode_v2(max_def, body + rl, (size_t)dl, (size_t)n, &a->def, err);
      if (st != HS_OK) {
        hs_error_prefix(err, "definition levels: ");
        return st;
      }
    }
    const uint8_t *comp = body + rl + dl;
    size_t clen = csize - (size_t)(rl + dl);
    size_t ulen = (size_t)ph->uncompressed_page_size - (size_t)(rl + dl);
    if (ph->data_page_v2.is_compressed && n > 0 && ulen > 0 && cr_direct_ok(r, enc) &&
        cr_direct_room(r, 0, ulen)) {
      uint8_t *dst = a->values.data + a->values.len;
      st = hs_pq_decompress(r->codec, comp, clen, dst, ulen, err);
      if (st != HS_OK) return st;
      vals = dst;
      vlen = ulen;
      direct = true;
    } else if (ph->data_page_v2.is_compressed) {
      st = cr_inflate(r, comp, clen, ulen, &vals, &vlen, err);
      if (st != HS_OK) return st;
    } else {
      vals = comp;
      vlen = clen;
    }
  }
  size_t nn = (size_t)n;
  if (max_def > 0 && n > 0) {
    /* This page's levels are the last n stored. */
    const int16_t *def = (const int16_t *)(void *)(a->def.data + a->def.len) - n;
    nn = 0;
    for (int64_t i = 0; i < n; i++) nn += def[i] == max_def;
    if (r->def_lazy) {
      st = nn == (size_t)n ? (a->def.len = 0, HS_OK) : cr_def_unlazy(r, n, err);
      if (st != HS_OK) return st;
    }
  }
  if (max_rep > 0 && n > 0 && r->rep_lazy) {
    st = cr_rep_page(r, n, err);
    if (st != HS_OK) return st;
  }
  if (direct) { /* what hs_pq_values_decode checks of PLAIN fixed width */
    size_t w = (size_t)r->ctx.width;
    if (nn > vlen / w) {
      return hs_error_set(err, HS_ERR_CORRUPT, "%zu PLAIN values do not fit in %zu bytes", nn,
                          vlen);
    }
    a->values.len += nn * w;
  } else {
    st = hs_pq_values_decode(&r->ctx, enc, vals, vlen, nn, a, err);
    if (st != HS_OK) return st;
  }
  a->n_levels += n;
  a->n_values += (int64_t)nn;
  return HS_OK;
}

/* Advance the selection cursor past rows before `first`; true when a
 * selected row lies in [first, last]. */
static bool cr_sel_any(hs_cr *r, int64_t first, int64_t last) {
  while (r->sel_i < r->n_sel && r->sel[r->sel_i] < first) r->sel_i++;
  return r->sel_i < r->n_sel && r->sel[r->sel_i] <= last;
}

/* Move values [from, to) of the accumulator down to index `dst`. */
static void acc_move_values(hs_pq_acc *a, int width, int64_t from, int64_t to, int64_t dst) {
  if (from == dst || from == to) return;
  if (width > 0) {
    size_t w = (size_t)width;
    memmove(a->values.data + (size_t)dst * w, a->values.data + (size_t)from * w,
            (size_t)(to - from) * w);
    return;
  }
  /* Byte arrays: shift the bytes, then rewrite the offsets in increasing
   * order; each offset is read before any write can reach it (dst < from). */
  int32_t *off = (int32_t *)(void *)a->offsets.data;
  int32_t base = off[from], end = off[to], wpos = off[dst];
  memmove(a->data.data + wpos, a->data.data + base, (size_t)(end - base));
  for (int64_t k = 0; k < to - from; k++) {
    int32_t src_end = off[from + k + 1];
    off[dst + k + 1] = wpos + (src_end - base);
  }
}

/* cr_page_rows with a selection, for a flat column (one level a row): only
 * the page's selected rows are visited (plus one pass over the definition
 * levels up to the last of them when the column has nulls); their levels
 * and values are compacted in place, runs of consecutive values moved at
 * once. *lw and *vw receive the ends of the kept levels and values. */
static void cr_page_rows_flat(hs_cr *r, int64_t lv_base, int64_t v_base, int64_t *lw_out,
                              int64_t *vw_out) {
  hs_pq_acc *a = &r->acc;
  int16_t max_def = r->desc->max_def;
  int16_t *def = (int16_t *)(void *)a->def.data;
  int width = r->ctx.width;
  int64_t n = a->n_levels - lv_base, base = r->cur_row + 1;
  int64_t lw = lv_base, vw = v_base, run = v_base, run_end = v_base;
  int64_t lc = lv_base, vc = v_base; /* vc: the value index of level lc */
  while (r->sel_i < r->n_sel && r->sel[r->sel_i] < base) r->sel_i++;
  for (; r->sel_i < r->n_sel && r->sel[r->sel_i] < base + n; r->sel_i++) {
    int64_t i = lv_base + (r->sel[r->sel_i] - base);
    bool valid = true;
    if (max_def > 0) {
      for (; lc < i; lc++) vc += def[lc] == max_def;
      valid = def[i] == max_def;
      def[lw] = def[i]; /* lw <= i: levels not yet read are never written */
    } else {
      vc = v_base + (i - lv_base);
    }
    lw++;
    if (!valid) continue;
    if (vc != run_end) { /* a gap: move the run kept so far down */
      acc_move_values(a, width, run, run_end, vw);
      vw += run_end - run;
      run = vc;
    }
    run_end = vc + 1;
  }
  acc_move_values(a, width, run, run_end, vw);
  vw += run_end - run;
  r->n_rows += lw - lv_base;
  r->cur_row += n;
  *lw_out = lw;
  *vw_out = vw;
}

/* After a page's levels and values were appended from level `lv_base` and
 * value `v_base` on: count its rows, and with a selection keep only the
 * selected rows' levels and values, compacted in place. */
static void cr_page_rows(hs_cr *r, int64_t lv_base, int64_t v_base) {
  hs_pq_acc *a = &r->acc;
  int16_t max_def = r->desc->max_def, max_rep = r->desc->max_rep;
  int16_t *def = (int16_t *)(void *)a->def.data, *rep = (int16_t *)(void *)a->rep.data;
  int64_t end = a->n_levels;
  if (r->sel == NULL) {
    if (max_rep == 0) {
      r->n_rows += end - lv_base;
      r->cur_row += end - lv_base;
    } else if (r->rep_lazy) {
      r->n_rows += r->page_rows;
      r->cur_row += r->page_rows;
      r->page_rows = 0;
    } else {
      int64_t rows = 0;
      for (int64_t i = lv_base; i < end; i++) rows += rep[i] == 0;
      r->n_rows += rows;
      r->cur_row += rows;
    }
    return;
  }
  int width = r->ctx.width;
  int64_t lw = lv_base, vr = v_base, vw = v_base, run = v_base;
  bool keep = false;
  if (max_rep == 0) { /* flat: level i is row cur_row + 1 + (i - lv_base) */
    cr_page_rows_flat(r, lv_base, v_base, &lw, &vw);
    end = lv_base; /* the loop below has nothing left to do */
  }
  for (int64_t i = lv_base; i < end; i++) {
    int16_t d = max_def > 0 ? def[i] : 0;
    if (max_rep == 0 || rep[i] == 0) {
      r->cur_row++;
      bool k = cr_sel_any(r, r->cur_row, r->cur_row);
      if (k != keep) {
        if (keep) {
          acc_move_values(a, width, run, vr, vw);
          vw += vr - run;
        }
        run = vr;
        keep = k;
      }
      r->n_rows += k;
    }
    if (keep) {
      if (max_def > 0) def[lw] = d;
      if (max_rep > 0) rep[lw] = rep[i];
      lw++;
    }
    vr += d == max_def;
  }
  if (keep) {
    acc_move_values(a, width, run, vr, vw);
    vw += vr - run;
  }
  a->n_levels = lw;
  a->n_values = vw;
  if (max_def > 0) a->def.len = (size_t)lw * sizeof(int16_t);
  if (max_rep > 0) a->rep.len = (size_t)lw * sizeof(int16_t);
  if (width > 0) {
    a->values.len = (size_t)vw * (size_t)width;
  } else if (a->offsets.len > 0) {
    a->offsets.len = (size_t)(vw + 1) * sizeof(int32_t);
    a->data.len = (size_t)((int32_t *)(void *)a->offsets.data)[vw];
  }
}

/* Data pages read by row gather in this process (hs_parquet_pages_gathered). */
static atomic_llong cr_pages_gathered;

long long hs_parquet_pages_gathered(void) {
  return atomic_load_explicit(&cr_pages_gathered, memory_order_relaxed);
}

/* The selection fast path (page_gather.c): an uncompressed page of a flat
 * column whose values can be addressed by position gives up only its
 * selected rows, read from the page bytes; nothing else of the page is
 * decoded or copied. *done: the page was handled (else decode it whole;
 * malformed level lengths are left to that path to report). */
/* Flat pages with more than 1/HS_PQ_GATHER_DENSE_DIV of their rows selected
 * are decoded whole rather than gathered (HS_PQ_GATHER_DENSE_DIV in the
 * environment overrides it; 0 gathers every page). */
#ifndef HS_PQ_GATHER_DENSE_DIV
#define HS_PQ_GATHER_DENSE_DIV 8
#endif

/* Decompressed bytes of a page for the gather (into scratch, or kept in
 * the page's memo: a small compressed page is decompressed once). false:
 * the bytes do not decompress (left to the decode path to report). */
static bool cr_gather_inflate(hs_cr *r, hs_pq_page_memo *pm, const uint8_t *src, size_t src_len,
                              size_t dst_len, const uint8_t **out, size_t *out_len) {
  const hs_pq_memo_bytes *kept =
      pm != NULL ? atomic_load_explicit(&pm->unz, memory_order_acquire) : NULL;
  if (kept != NULL) {
    *out = kept->data;
    *out_len = kept->len;
    return true;
  }
  hs_error ignored = {0};
  if (cr_inflate(r, src, src_len, dst_len, out, out_len, &ignored) != HS_OK) return false;
  if (pm != NULL && r->codec != HS_PQ_CODEC_UNCOMPRESSED &&
      (kept = hs_pq_memo_keep_bytes(pm, *out, *out_len)) != NULL) {
    *out = kept->data;
    *out_len = kept->len;
  }
  return true;
}

static hs_status cr_page_gather(hs_cr *r, uint64_t off, const hs_pq_page_header *ph,
                                const uint8_t *body, int64_t n, hs_pq_page_memo *pm, bool *done,
                                hs_error *err) {
  *done = false;
  const hs_pq_leaf_desc *d = r->desc;
  if (r->sel == NULL || !r->gather || n <= 0) return HS_OK;
  if (d->max_rep > 1 || (d->max_rep == 0 && d->max_def > 1)) return HS_OK;
  /* List leaves: v2 pages only (they start at row boundaries). */
  if (d->max_rep == 1 && ph->type != HS_PQ_DATA_PAGE_V2) return HS_OK;
  /* A flat page with many of its rows selected is decoded whole: value by
   * value, a gather costs several times a decode's per-value work (TPC-H
   * Q1's 98 % of lineitem went through gathers at 1.5 s, 5x DuckDB). */
  if (d->max_rep == 0 && r->gather_dense_div > 0) {
    int64_t base = r->cur_row + 1;
    size_t i = r->sel_i, j = i;
    while (j < r->n_sel && r->sel[j] < base + n) j++;
    if ((int64_t)(j - i) * r->gather_dense_div > n) return HS_OK;
  }
  size_t csize = (size_t)ph->compressed_page_size, pos = 0;
  hs_pq_gather_page pg;
  memset(&pg, 0, sizeof pg);
  /* A compressed page is decompressed (into the reused scratch buffer) and
   * then gathered from: a few rows of a zstd delta page of 100K ids cost
   * its decompression, not the decode of every value into the batch. A page
   * that does not decompress is left to the decode path to report. */
  if (ph->type == HS_PQ_DATA_PAGE) {
    if (r->codec != HS_PQ_CODEC_UNCOMPRESSED) {
      if (!hs_pq_gather_supported(&r->ctx, ph->data_page.encoding)) return HS_OK;
      size_t plen = 0;
      if (!cr_gather_inflate(r, pm, body, csize, (size_t)ph->uncompressed_page_size, &body, &plen))
        return HS_OK;
      csize = plen;
    }
    pg.encoding = ph->data_page.encoding;
    if (d->max_def > 0) {
      if (ph->data_page.definition_level_encoding != HS_PQ_ENC_RLE || csize < 4) return HS_OK;
      uint32_t dl = hs_load_u32le(body);
      if (dl > csize - 4) return HS_OK;
      pg.def = body + 4;
      pg.def_len = dl;
      pos = 4 + (size_t)dl;
    }
  } else {
    int64_t rl = ph->data_page_v2.repetition_levels_byte_length;
    int64_t dl = ph->data_page_v2.definition_levels_byte_length;
    if (rl < 0 || dl < 0 || rl + dl > (int64_t)csize) return HS_OK;
    pg.encoding = ph->data_page_v2.encoding;
    pg.rep = body;
    pg.rep_len = (size_t)rl;
    pg.def = body + rl;
    pg.def_len = (size_t)dl;
    pos = (size_t)(rl + dl);
    pg.vals = body + pos;
    pg.vlen = csize - pos;
    /* v2: the levels are stored raw, only the values are compressed. */
    if (ph->data_page_v2.is_compressed && r->codec != HS_PQ_CODEC_UNCOMPRESSED) {
      if (!hs_pq_gather_supported(&r->ctx, pg.encoding)) return HS_OK;
      if (rl + dl > (int64_t)ph->uncompressed_page_size) return HS_OK;
      const uint8_t *v = NULL;
      size_t vlen = 0;
      if (!cr_gather_inflate(r, pm, body + pos, csize - pos,
                             (size_t)ph->uncompressed_page_size - (size_t)(rl + dl), &v, &vlen))
        return HS_OK;
      pg.vals = v;
      pg.vlen = vlen;
    }
  }
  if (ph->type == HS_PQ_DATA_PAGE) {
    pg.vals = body + pos;
    pg.vlen = csize - pos;
  }
  if (!hs_pq_gather_supported(&r->ctx, pg.encoding)) return HS_OK;
  pg.n_levels = n;
  pg.stamp = r->has_stamp ? &r->stamp : NULL;
  pg.offset = off;
  pg.memo = pm;
  int64_t base = r->cur_row + 1;
  while (r->sel_i < r->n_sel && r->sel[r->sel_i] < base) r->sel_i++;
  if (d->max_rep == 1) { /* page_gather_rep.c */
    hs_pq_gather_rep_out go;
    int64_t rows = ph->data_page_v2.num_rows;
    hs_status st = hs_pq_page_gather_rep(&r->ctx, &pg, r->sel + r->sel_i, r->n_sel - r->sel_i, base,
                                         rows, r->rep_lazy ? r->rep_period : -1, &r->acc, &go, err);
    if (st != HS_OK || go.declined) return st;
    if (go.implicit) {
      r->rep_period = go.stride; /* levels left implicit: the pattern holds */
    } else if (go.rows_taken > 0) {
      st = cr_sel_unlazy(r, go.n_levels, err); /* this page's are stored: the earlier ones too */
      if (st != HS_OK) return st;
    }
    r->acc.n_levels += go.n_levels;
    r->acc.n_values += go.n_values;
    r->n_rows += (int64_t)go.rows_taken;
    r->cur_row += rows;
    r->sel_i += go.rows_taken;
    *done = true;
    return HS_OK;
  }
  size_t j = r->sel_i;
  while (j < r->n_sel && r->sel[j] < base + n) j++;
  int64_t nv = 0;
  hs_status st =
      hs_pq_page_gather(&r->ctx, &pg, r->sel + r->sel_i, j - r->sel_i, base, &r->acc, &nv, err);
  if (st != HS_OK) return st;
  int64_t k = (int64_t)(j - r->sel_i);
  r->acc.n_levels += k;
  r->acc.n_values += nv;
  r->n_rows += k;
  r->cur_row += n;
  r->sel_i = j;
  *done = true;
  return HS_OK;
}

static void dict_free(void *p) {
  hs_pq_dict_free(p);
  hs_free(p);
}

/* Move the freshly decoded r->dict into the page cache and read it from
 * there (ctx.dict). */
static hs_status cr_dict_share(hs_cr *r, const hs_fs_stamp *stamp, size_t len, hs_error *err) {
  hs_pq_dict *d = hs_malloc(sizeof *d);
  if (d == NULL) return HS_OK; /* keep our own */
  *d = r->dict;
  memset(&r->dict, 0, sizeof r->dict);
  size_t bytes = d->values.cap + d->offsets.cap + d->data.cap;
  r->dict_ref = hs_pq_cache_add(stamp, r->dict_at, len, HS_PQ_CACHED_DICT, d, bytes, dict_free);
  if (r->dict_ref == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "column %s: out of memory for its dictionary", r->path);
  r->ctx.dict = hs_pq_cached_obj(r->dict_ref);
  return HS_OK;
}

/* Read the dictionary page at r->dict_at, if there is one, once. A
 * selective read of a file takes the decoded dictionary from the page
 * cache (page_read.h), and leaves the one it decodes there: for a few
 * rows, decompressing and decoding a large dictionary (a price column's
 * 100,000 doubles) costs more than the rows themselves. */
static hs_status cr_dict_load(hs_cr *r, hs_error *err) {
  if (!r->dict_check) return HS_OK;
  r->dict_check = false;
  /* The chunk's memo knows it has no dictionary page, or lends it. */
  hs_pq_chunk_memo *memo = r->memo;
  int known = memo != NULL ? atomic_load_explicit(&memo->dict_state, memory_order_acquire) : 0;
  if (known == 1) return HS_OK;
  if (known == 2) {
    r->ctx.dict = hs_pq_cached_obj(atomic_load_explicit(&memo->dict, memory_order_acquire));
    r->pages_read++;
    return HS_OK;
  }
  hs_pq_page_header ph;
  uint64_t body_off;
  const uint8_t *body;
  hs_status st = cr_header(r, r->dict_at, &ph, &body_off, err);
  if (st != HS_OK) return st;
  if (ph.type != HS_PQ_DICTIONARY_PAGE) {
    if (memo != NULL) atomic_store_explicit(&memo->dict_state, 1, memory_order_release);
    return HS_OK;
  }
  const hs_fs_stamp *sp = r->sel != NULL && r->has_stamp ? &r->stamp : NULL;
  size_t len = (size_t)ph.compressed_page_size;
  r->dict_ref = hs_pq_cache_find(sp, r->dict_at, len, HS_PQ_CACHED_DICT);
  if (r->dict_ref != NULL) {
    r->ctx.dict = hs_pq_cached_obj(r->dict_ref);
    r->pages_read++;
  } else {
    st = cr_body(r, r->dict_at, &ph, body_off, NULL, &body, err);
    if (st == HS_OK) st = cr_dict_page(r, r->dict_at, &ph, body, err);
    if (st == HS_OK) {
      hs_source_release(r->src, r->dict_at, (size_t)(body_off - r->dict_at) + len);
    }
    if (st == HS_OK && sp != NULL && r->dict.present) st = cr_dict_share(r, sp, len, err);
  }
  if (st == HS_OK && memo != NULL && r->dict_ref != NULL &&
      hs_pq_memo_keep_cached(&memo->dict, r->dict_ref, hs_pq_cached_bytes(r->dict_ref))) {
    r->dict_ref = NULL; /* the memo's reference now; ctx.dict stays valid while it lives */
    atomic_store_explicit(&memo->dict_state, 2, memory_order_release);
  }
  return st;
}

/* Read, check and decode the data page whose header was parsed at `off`.
 * `ph` is copied first: loading the dictionary reuses the header arena. */
static hs_status cr_data_page(hs_cr *r, uint64_t off, const hs_pq_page_header *ph_in,
                              uint64_t body_off, hs_pq_page_memo *pm, hs_error *err) {
  hs_pq_page_header copy = *ph_in;
  const hs_pq_page_header *ph = &copy;
  int64_t n = page_levels(ph);
  hs_status st = cr_check_levels(r, off, n, err);
  if (st != HS_OK) return st;
  if (n > 0) {
    st = cr_dict_load(r, err);
    if (st != HS_OK) return st;
  }
  const uint8_t *body;
  st = cr_body(r, off, ph, body_off, pm, &body, err);
  if (st != HS_OK) return st;
  int64_t lv_base = r->acc.n_levels, v_base = r->acc.n_values;
  bool gathered = false;
  st = cr_page_gather(r, off, ph, body, n, pm, &gathered, err);
  /* A selection compacts a decoded page's levels: they must be stored. */
  if (st == HS_OK && !gathered && r->sel != NULL) st = cr_sel_unlazy(r, 0, err);
  if (st == HS_OK && !gathered) st = cr_data_page_decode(r, ph, body, n, err);
  if (st != HS_OK) {
    {
      hs_error_prefix(err, "column %s: page at offset %llu: ", r->path, (unsigned long long)off);
      return st;
    }
  }
  r->data_seen = true;
  r->levels_seen += n;
  r->pages_read++;
  if (gathered) {
    r->pages_gathered++;
    atomic_fetch_add_explicit(&cr_pages_gathered, 1, memory_order_relaxed);
  } else {
    cr_page_rows(r, lv_base, v_base);
  }
  /* Everything read from the page was copied out: a mapped file need not
   * keep it resident (a large chunk would otherwise stay mapped whole). A
   * gathered page is not released: only the selected rows' bytes were
   * touched, and the release (a TLB shootdown on every core the process
   * runs on, then page faults to map the page again next query) cost more
   * than the gather itself (README.md "Row gather"). */
  if (!gathered)
    hs_source_release(r->src, off, (size_t)(body_off - off) + (size_t)ph->compressed_page_size);
  return HS_OK;
}

/* parquet-mr up to 1.2.8 left the dictionary page header out of
 * total_compressed_size (PARQUET-816, IMPALA-694), so a chunk that starts
 * with a dictionary page may run up to that header's size past its declared
 * end. We cannot see the writer version here, so the allowance applies to
 * every such chunk; it is small and never reaches past the file. */
enum { HS_PQ_DICT_HEADER_SLACK = 100 };

static void cr_dict_slack(hs_cr *r) {
  uint64_t size = hs_source_size(r->src);
  uint64_t room = size - r->chunk_end; /* chunk_end <= size (cr_locate) */
  r->chunk_end += room < HS_PQ_DICT_HEADER_SLACK ? room : HS_PQ_DICT_HEADER_SLACK;
}

/* Walk the chunk page by page from its start. */
static hs_status cr_read_sequential(hs_cr *r, hs_error *err) {
  uint64_t off = r->chunk_start;
  while (r->levels_seen < r->num_values) {
    if (off >= r->chunk_end) {
      return hs_error_set(
          err, HS_ERR_CORRUPT, "column %s: chunk ends at offset %llu after %lld of its %lld values",
          r->path, (unsigned long long)off, (long long)r->levels_seen, (long long)r->num_values);
    }
    hs_pq_page_header ph;
    uint64_t body_off;
    hs_status st = cr_header(r, off, &ph, &body_off, err);
    if (st != HS_OK) return st;
    uint64_t next = body_off + (uint64_t)ph.compressed_page_size;
    if (ph.type == HS_PQ_DICTIONARY_PAGE && off == r->chunk_start) cr_dict_slack(r);
    if (ph.type == HS_PQ_DICTIONARY_PAGE) {
      if (r->data_seen || r->dict_seen) {
        return cr_corrupt_at(r, off, err, "dictionary page after the chunk's first page");
      }
      r->dict_seen = true;
      r->dict_check = true;
      r->dict_at = off;
    } else if (ph.type == HS_PQ_DATA_PAGE || ph.type == HS_PQ_DATA_PAGE_V2) {
      int64_t n = page_levels(&ph);
      st = cr_check_levels(r, off, n, err);
      if (st != HS_OK) return st;
      if (r->sel != NULL) {
        int64_t rows = page_rows(r, &ph);
        bool skip = rows >= 0 ? !cr_sel_any(r, r->cur_row + 1, r->cur_row + rows)
                              : !cr_sel_any(r, r->cur_row, INT64_MAX);
        if (skip) {
          r->data_seen = true;
          r->levels_seen += n;
          if (rows > 0) r->cur_row += rows;
          r->pages_skipped++;
          off = next;
          continue;
        }
      }
      st = cr_data_page(r, off, &ph, body_off, NULL, err);
    }
    /* Index pages and page types we do not know carry nothing to decode. */
    if (st != HS_OK) return st;
    off = next;
  }
  return HS_OK;
}

/* First rows may repeat: pyarrow writes empty data pages (no levels) whose
 * first row is the next page's; their row range is empty, so they are
 * skipped. */
static hs_status cr_check_offset_index(hs_cr *r, const hs_pq_offset_index *oi, int64_t rg_rows,
                                       hs_error *err) {
  if (oi->n_pages == 0 || oi->page_locations == NULL) {
    return hs_error_set(err, HS_ERR_CORRUPT, "column %s: offset index lists no pages", r->path);
  }
  for (uint32_t i = 0; i < oi->n_pages; i++) {
    const hs_pq_page_location *p = &oi->page_locations[i];
    const hs_pq_page_location *prev = i > 0 ? p - 1 : NULL;
    bool ok =
        p->offset >= 0 && (uint64_t)p->offset >= r->chunk_start &&
        (uint64_t)p->offset < r->chunk_end && p->first_row_index >= 0 &&
        p->first_row_index <= rg_rows &&
        (prev == NULL || (p->offset > prev->offset && p->first_row_index >= prev->first_row_index));
    if (!ok) {
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "column %s: offset index page %u (offset %lld, first row %lld) is out of "
                          "order or outside the chunk",
                          r->path, i, (long long)p->offset, (long long)p->first_row_index);
    }
  }
  return HS_OK;
}

/* Read only the pages the offset index says hold selected rows. The
 * dictionary page (which the index does not list) precedes the first data
 * page and is read before the first page that is decoded. */
static hs_status cr_read_indexed(hs_cr *r, const hs_pq_offset_index *oi, int64_t rg_rows,
                                 hs_error *err) {
  hs_pq_chunk_memo *memo = r->memo;
  hs_status st = HS_OK;
  if (memo == NULL || !atomic_load_explicit(&memo->oi_checked, memory_order_acquire)) {
    st = cr_check_offset_index(r, oi, rg_rows, err);
    if (st != HS_OK) return st;
    if (memo != NULL) atomic_store_explicit(&memo->oi_checked, true, memory_order_release);
  }
  if ((uint64_t)oi->page_locations[0].offset > r->chunk_start) {
    r->dict_check = true;
    r->dict_at = r->chunk_start;
  }
  const hs_pq_page_location *loc = oi->page_locations;
  for (uint32_t i = 0; i < oi->n_pages; i++) {
    /* The page holding the next selected row: the last one from i on that
     * starts at or before it (first rows are checked non-decreasing; an
     * empty page shares its first row with the next), found by bisection
     * (a vector column has hundreds of pages, a search ten rows). */
    while (r->sel_i < r->n_sel && r->sel[r->sel_i] < loc[i].first_row_index) r->sel_i++;
    if (r->sel_i == r->n_sel) {
      r->pages_skipped += oi->n_pages - i;
      break;
    }
    int64_t want = r->sel[r->sel_i];
    uint32_t lo = i, hi = oi->n_pages;
    while (hi - lo > 1) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (loc[mid].first_row_index <= want)
        lo = mid;
      else
        hi = mid;
    }
    r->pages_skipped += lo - i;
    i = lo;
    const hs_pq_page_location *p = &loc[i];
    hs_pq_page_header ph;
    uint64_t body_off;
    uint64_t off = (uint64_t)p->offset;
    hs_pq_page_memo *pm = memo != NULL ? &memo->pages[i] : NULL;
    if (pm != NULL && atomic_load_explicit(&pm->state, memory_order_acquire) == 2) {
      ph = pm->ph; /* parsed and checked by an earlier read */
      body_off = pm->body_off;
    } else {
      st = cr_header(r, off, &ph, &body_off, err);
      if (st != HS_OK) return st;
      if (ph.type != HS_PQ_DATA_PAGE && ph.type != HS_PQ_DATA_PAGE_V2) {
        return cr_corrupt_at(r, off, err, "the offset index points at a page that holds no data");
      }
      if (pm != NULL) hs_pq_memo_keep_header(pm, &ph, body_off);
    }
    r->cur_row = p->first_row_index - 1;
    st = cr_data_page(r, off, &ph, body_off, pm, err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

/* Check the chunk's metadata and find its byte range. */
static hs_status cr_locate(hs_cr *r, const hs_pq_column_chunk *cc, hs_error *err) {
  if (cc->is_encrypted) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "column %s is encrypted; decryption is not supported", r->path);
  }
  if (!cc->has_meta_data) {
    return hs_error_set(err, HS_ERR_CORRUPT, "column %s: column chunk has no metadata", r->path);
  }
  if (cc->file_path != NULL) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "column %s: chunk stored in another file (%s)",
                        r->path, cc->file_path);
  }
  const hs_pq_column_meta *m = &cc->meta_data;
  if (!hs_pq_codec_supported(m->codec)) {
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "column %s: compression codec %s (%d)", r->path,
                        hs_pq_codec_name(m->codec), m->codec);
  }
  if (m->type != r->desc->type) {
    return hs_error_set(err, HS_ERR_CORRUPT, "column %s: chunk type %s differs from schema type %s",
                        r->path, hs_pq_type_name(m->type), hs_pq_type_name(r->desc->type));
  }
  if (m->num_values < 0 || m->total_compressed_size < 0 || m->data_page_offset < 0) {
    return hs_error_set(err, HS_ERR_CORRUPT, "column %s: negative size or offset in metadata",
                        r->path);
  }
  /* Some writers store dictionary_page_offset 0 when there is none; a
   * dictionary page always precedes the data pages, so anything else is
   * ignored and the walk from data_page_offset still finds it. */
  int64_t start = m->data_page_offset;
  if (m->has_dictionary_page_offset && m->dictionary_page_offset > 0 &&
      m->dictionary_page_offset < start) {
    start = m->dictionary_page_offset;
  }
  uint64_t size = hs_source_size(r->src);
  if ((uint64_t)start > size || (uint64_t)m->total_compressed_size > size - (uint64_t)start) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "column %s: chunk at offset %lld of %lld bytes lies outside the "
                        "%llu-byte file",
                        r->path, (long long)start, (long long)m->total_compressed_size,
                        (unsigned long long)size);
  }
  r->chunk_start = (uint64_t)start;
  r->chunk_end = (uint64_t)start + (uint64_t)m->total_compressed_size;
  r->codec = m->codec;
  r->num_values = m->num_values;
  return HS_OK;
}

/* Reserve output for the whole chunk up front (no selection), trusting
 * num_values only as far as the chunk's bytes could hold: no encoding we
 * preallocate for packs more than 8 values per byte. */
static hs_status cr_prealloc(hs_cr *r, const hs_pq_column_meta *m, hs_error *err) {
  int64_t bytes = m->total_uncompressed_size > m->total_compressed_size ? m->total_uncompressed_size
                                                                        : m->total_compressed_size;
  int64_t n = r->num_values;
  if (bytes < INT64_MAX / 8 && n > bytes * 8) n = bytes * 8;
  size_t cnt = (size_t)n, lv, vb = 0;
  bool ok = hs_mul_size(cnt, sizeof(int16_t), &lv) &&
            (r->ctx.width <= 0 || hs_mul_size(cnt, (size_t)r->ctx.width, &vb));
  if (ok && r->desc->max_def > 0 && !r->def_lazy) ok = hs_buf_reserve(&r->acc.def, lv);
  if (ok && r->desc->max_rep > 0 && !r->rep_lazy) ok = hs_buf_reserve(&r->acc.rep, lv);
  if (ok && vb > 0) ok = hs_buf_reserve(&r->acc.values, vb);
  if (!ok) return hs_error_set(err, HS_ERR_NOMEM, "column %s: out of memory", r->path);
  return HS_OK;
}

static hs_status cr_check_selection(const hs_cr *r, const int64_t *rows, size_t n, int64_t rg_rows,
                                    hs_error *err) {
  for (size_t i = 0; i < n; i++) {
    if (rows[i] < 0 || rows[i] >= rg_rows || (i > 0 && rows[i] <= rows[i - 1])) {
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "column %s: row selection must be strictly increasing in [0, %lld); "
                          "entry %zu is %lld",
                          r->path, (long long)rg_rows, i, (long long)rows[i]);
    }
  }
  return HS_OK;
}

/* Hand the accumulated buffers to `out`; `lazy` (may be NULL when no level
 * was left implicit) receives what was. */
static hs_status cr_finish(hs_cr *r, hs_pq_leaf_data *out, hs_pq_lazy_levels *lazy, hs_error *err) {
  hs_pq_acc *a = &r->acc;
  if (r->pooled) { /* pooled page-sized buffers: hand out exact copies */
    hs_buf def;
    bool ok = r->desc->type == HS_PQ_BYTE_ARRAY ? cr_pool_fit(&a->data, &out->data)
                                                : cr_pool_fit(&a->values, &out->values);
    if (ok && r->desc->max_def > 0 && cr_pool_fit(&a->def, &def)) {
      a->def = def;
    } else if (r->desc->max_def > 0) {
      ok = false;
    }
    if (!ok) return hs_error_set(err, HS_ERR_NOMEM, "column %s: out of memory", r->path);
  }
  if (r->desc->type == HS_PQ_BYTE_ARRAY) {
    hs_status st = hs_pq_acc_init_offsets(a, err);
    if (st != HS_OK) return st;
    out->offsets = (int32_t *)(void *)hs_buf_detach_fit(&a->offsets);
    if (!r->pooled) {
      out->data = a->data;
      hs_buf_init(&a->data);
    }
  } else if (!r->pooled) {
    out->values = a->values;
    hs_buf_init(&a->values);
  }
  out->n_levels = a->n_levels;
  out->n_values = a->n_values;
  if (r->desc->max_def > 0 && !r->def_lazy) out->def = (int16_t *)(void *)hs_buf_detach(&a->def);
  if (r->desc->max_rep > 0 && !r->rep_lazy) out->rep = (int16_t *)(void *)hs_buf_detach(&a->rep);
  out->n_rows = r->n_rows;
  out->pages_read = r->pages_read;
  out->pages_skipped = r->pages_skipped;
  out->pages_gathered = r->pages_gathered;
  if (lazy == NULL) return HS_OK;
  memset(lazy, 0, sizeof *lazy);
  lazy->def_all_max = r->desc->max_def > 0 && r->def_lazy;
  if (r->desc->max_rep > 0 && r->rep_lazy) {
    /* A period only describes whole records; otherwise store the levels. */
    lazy->rep_period = r->rep_period;
    if (r->rep_period == 0 || a->n_levels % r->rep_period != 0) {
      hs_pq_lazy_levels rep_only = {.def_all_max = false, .rep_period = r->rep_period};
      lazy->rep_period = 0;
      return hs_pq_lazy_levels_materialize(out, r->desc, &rep_only, err);
    }
  }
  return HS_OK;
}

hs_status hs_pq_lazy_levels_materialize(hs_pq_leaf_data *d, const hs_pq_leaf_desc *desc,
                                        hs_pq_lazy_levels *lazy, hs_error *err) {
  size_t n = (size_t)d->n_levels, bytes;
  if (!hs_mul_size(n ? n : 1, sizeof(int16_t), &bytes)) bytes = SIZE_MAX;
  if (lazy->def_all_max && d->def == NULL && desc->max_def > 0) {
    d->def = bytes == SIZE_MAX ? NULL : hs_malloc(bytes);
    if (d->def == NULL) goto nomem;
    for (size_t i = 0; i < n; i++) d->def[i] = desc->max_def;
  }
  lazy->def_all_max = false;
  if (d->rep == NULL && desc->max_rep > 0) {
    d->rep = bytes == SIZE_MAX ? NULL : hs_malloc(bytes);
    if (d->rep == NULL) goto nomem;
    rep_pattern_fill(d->rep, (int64_t)n, lazy->rep_period > 0 ? lazy->rep_period : 1);
  }
  lazy->rep_period = 0;
  return HS_OK;
nomem:
  return hs_error_set(err, HS_ERR_NOMEM, "column %s: out of memory for %zu levels",
                      desc->path ? desc->path : "?", n);
}

static hs_status column_read(hs_source *src, const hs_pq_column_chunk *cc,
                             const hs_pq_leaf_desc *desc, int64_t rg_rows,
                             const hs_pq_offset_index *oi, hs_pq_chunk_memo *memo,
                             const int64_t *rows, size_t n_rows, hs_pq_leaf_data *out,
                             hs_pq_lazy_levels *lazy, hs_error *err) {
  memset(out, 0, sizeof *out);
  if (lazy != NULL) memset(lazy, 0, sizeof *lazy);
  hs_cr r;
  memset(&r, 0, sizeof r);
  r.src = src;
  r.desc = desc;
  r.path = desc->path != NULL ? desc->path : "?";
  r.cur_row = -1;
  r.has_stamp = hs_source_stamp(src, &r.stamp);
  /* The memo's pages are those of its own offset index. */
  r.memo = memo != NULL && rows != NULL && oi == &memo->oi ? memo : NULL;
  const char *g = getenv("HS_PQ_GATHER");
  r.gather = g == NULL || strcmp(g, "0") != 0;
  const char *dd = getenv("HS_PQ_GATHER_DENSE_DIV");
  r.gather_dense_div = dd != NULL ? atoll(dd) : HS_PQ_GATHER_DENSE_DIV;
  hs_arena_init(&r.arena);
  r.ctx.desc = desc;
  r.ctx.width = hs_pq_leaf_value_width(desc);
  r.ctx.dict = &r.dict;
  r.ctx.idx = &r.idx;
  if (desc->max_def < 0 || desc->max_rep < 0 ||
      (desc->type != HS_PQ_BYTE_ARRAY && r.ctx.width <= 0)) {
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "column %s: bad leaf (value width %d, max levels %d/%d)", r.path,
                        r.ctx.width, desc->max_def, desc->max_rep);
  }
  if (rows != NULL) { /* whole-chunk reads: plain malloc/free was measured cheaper */
    r.pooled = true;
    cr_pool_take(&r.unz);
    cr_pool_take(&r.idx);
    cr_pool_take(desc->type == HS_PQ_BYTE_ARRAY ? &r.acc.data : &r.acc.values);
    if (desc->max_def > 0) cr_pool_take(&r.acc.def);
  }
  /* Implicit levels for whole-chunk reads, and for selections of a list
   * leaf while its pages are gathered with implicit levels (cr_sel_unlazy):
   * a decoded page's selected levels are compacted in place, so they are
   * stored. */
  bool sel_lazy = lazy != NULL && rows != NULL && desc->max_rep == 1 && r.gather;
  r.def_lazy = lazy != NULL && (rows == NULL || sel_lazy) && desc->max_def > 0;
  r.rep_lazy = lazy != NULL && (rows == NULL || sel_lazy) && desc->max_rep == 1;
  hs_status st = cr_locate(&r, cc, err);
  if (st == HS_OK && rows != NULL) st = cr_check_selection(&r, rows, n_rows, rg_rows, err);
  if (st == HS_OK && rows != NULL) {
    r.sel = rows;
    r.n_sel = n_rows;
    if (oi != NULL) {
      st = cr_read_indexed(&r, oi, rg_rows, err);
    } else {
      st = cr_read_sequential(&r, err);
    }
  } else if (st == HS_OK) {
    st = cr_prealloc(&r, &cc->meta_data, err);
    if (st == HS_OK) st = cr_read_sequential(&r, err);
  }
  if (st == HS_OK) st = cr_finish(&r, out, lazy, err);
  cr_free(&r);
  if (st != HS_OK) hs_pq_leaf_data_free(out);
  return st;
}

hs_status hs_pq_column_read(hs_source *src, const hs_pq_column_chunk *cc,
                            const hs_pq_leaf_desc *desc, int64_t rg_rows,
                            const hs_pq_offset_index *oi, const int64_t *rows, size_t n_rows,
                            hs_pq_leaf_data *out, hs_error *err) {
  return column_read(src, cc, desc, rg_rows, oi, NULL, rows, n_rows, out, NULL, err);
}

hs_status hs_pq_column_read_lazy(hs_source *src, const hs_pq_column_chunk *cc,
                                 const hs_pq_leaf_desc *desc, int64_t rg_rows,
                                 const hs_pq_offset_index *oi, hs_pq_chunk_memo *memo,
                                 const int64_t *rows, size_t n_rows, hs_pq_leaf_data *out,
                                 hs_pq_lazy_levels *lazy, hs_error *err) {
  return column_read(src, cc, desc, rg_rows, oi, memo, rows, n_rows, out, lazy, err);
}
