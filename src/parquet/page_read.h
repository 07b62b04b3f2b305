/*
 * page_read.h — private to column_read.c and page_read.c: decoding the
 * contents of one (already decompressed) page into the growing output of a
 * column chunk.
 *
 * column_read.c owns the chunk-level work (locating pages, CRCs,
 * decompression, page skipping, row selection); page_read.c owns what is
 * inside a page (levels, value encodings, dictionaries). The split keeps
 * each file about one thought.
 */
#ifndef HS_PARQUET_PAGE_READ_H
#define HS_PARQUET_PAGE_READ_H

#include "column.h"
#include "encoding.h"
#include <stdatomic.h>

#include "../io/fs.h"

/* A decoded dictionary: `n` entries, fixed width in `values` (n * width
 * bytes, BOOLEAN one byte per entry) or BYTE_ARRAY as n + 1 int32 offsets
 * into `data`. */
typedef struct hs_pq_dict {
  bool present;
  int64_t n;
  hs_buf values;
  hs_buf offsets;
  hs_buf data;
} hs_pq_dict;

/* Output of a chunk while its pages are decoded. Buffers grow with the
 * pages actually decoded, so a hostile count in metadata costs nothing
 * until a page really produces that many levels.
 *  - def/rep: int16 per level, used only when max_def/max_rep > 0.
 *  - values: fixed-width values; offsets (int32, n_values + 1 entries once
 *    the first BYTE_ARRAY value is added, offsets[0] == 0) and data. */
typedef struct hs_pq_acc {
  int64_t n_levels;
  hs_buf def;
  hs_buf rep;
  int64_t n_values;
  hs_buf values;
  hs_buf offsets;
  hs_buf data;
} hs_pq_acc;

/* What a page decoder needs to know about its column. Errors from page
 * decoders do not name the column: column_read.c prefixes column and
 * offset. */
typedef struct hs_pq_page_ctx {
  const hs_pq_leaf_desc *desc;
  int width; /* hs_pq_leaf_value_width(desc) */
  hs_pq_dict *dict;
  hs_buf *idx; /* uint32 scratch for dictionary indices, reused */
} hs_pq_page_ctx;

void hs_pq_dict_free(hs_pq_dict *dict);
void hs_pq_acc_free(hs_pq_acc *acc);

/* Make sure acc->offsets holds its leading 0 (BYTE_ARRAY columns). */
hs_status hs_pq_acc_init_offsets(hs_pq_acc *acc, hs_error *err);

/* Decode a dictionary page body (PLAIN values; `encoding` must be PLAIN or
 * PLAIN_DICTIONARY) of `n` entries into ctx->dict, replacing any earlier
 * one. `n` is checked against `len` before anything is allocated. */
hs_status hs_pq_dict_decode(const hs_pq_page_ctx *ctx, int32_t encoding, const uint8_t *buf,
                            size_t len, int64_t n, hs_error *err);

/* Decode `n` levels (0..max_level, bit width from max_level) of a data
 * page v1 in `encoding` (RLE with its 4-byte length prefix, or legacy
 * BIT_PACKED) and append them to `levels` (int16). *consumed receives the
 * bytes used, prefix included. A level above max_level is HS_ERR_CORRUPT. */
hs_status hs_pq_levels_decode_v1(int32_t encoding, int16_t max_level, const uint8_t *buf,
                                 size_t len, size_t n, hs_buf *levels, size_t *consumed,
                                 hs_error *err);

/* Decode `n` levels of a data page v2 (RLE, no prefix, within `len`
 * bytes) and append them to `levels`; checked as above. */
hs_status hs_pq_levels_decode_v2(int16_t max_level, const uint8_t *buf, size_t len, size_t n,
                                 hs_buf *levels, hs_error *err);

/* Decode the `n` non-null values of a page's value section (buf, len) in
 * `encoding` and append them to acc (values, or offsets + data). Does not
 * touch the level counts. */
hs_status hs_pq_values_decode(const hs_pq_page_ctx *ctx, int32_t encoding, const uint8_t *buf,
                              size_t len, size_t n, hs_pq_acc *acc, hs_error *err);

/* ------------------------------------------ row gather (page_gather.c) */

/* An uncompressed data page of a flat column (or, with rep set, of a list
 * leaf: page_gather_rep.c), split into its parts. */
typedef struct hs_pq_gather_page {
  const uint8_t *def; /* definition levels, hybrid stream without prefix */
  size_t def_len;     /* (unused when max_def == 0) */
  const uint8_t *rep; /* repetition levels (max_rep 1), likewise */
  size_t rep_len;
  int32_t encoding; /* of the values */
  const uint8_t *vals;
  size_t vlen;
  int64_t n_levels; /* the page's level count (bounds its value count) */
  /* Where the page lies, for the delta directory cache: the file's stamp
   * (NULL for a source that has none: the directory is built per call)
   * and the offset of the page header in the file. */
  const hs_fs_stamp *stamp;
  uint64_t offset;
  /* The page's memo (chunk_memo.h), or NULL: a row map or delta
   * directory found there is used without a cache lookup, one looked up
   * or built is left there, and so is whether a list page starts a row. */
  struct hs_pq_page_memo *memo;
} hs_pq_gather_page;

/* True when rows of a page in `encoding` can be read one at a time: a flat
 * column (max_rep 0, max_def <= 1) with PLAIN fixed-width or boolean
 * values, dictionary indices with the chunk's dictionary loaded, or
 * DELTA_BINARY_PACKED INT32/INT64 values (through a delta directory). */
bool hs_pq_gather_supported(const hs_pq_page_ctx *ctx, int32_t encoding);

/* Append the definition levels (max_def > 0) and values of the page's rows
 * rows[j] - base (j < k; strictly increasing, inside the page) to acc, read
 * directly from the page bytes; *n_values receives the values appended.
 * Does not touch acc's level and value counts. */
hs_status hs_pq_page_gather(const hs_pq_page_ctx *ctx, const hs_pq_gather_page *pg,
                            const int64_t *rows, size_t k, int64_t base, hs_pq_acc *acc,
                            int64_t *n_values, hs_error *err);

/* A list leaf's page (max_rep 1, data page v2 with page_rows rows): append
 * the repetition and definition levels and the values of the selected rows
 * rows[j] - base (rows[0..n_sel) strictly increasing, >= base; those below
 * base + page_rows are the page's) to acc. out->declined: the page does
 * not start a row or does not hold page_rows rows; nothing was appended
 * (decode it). Does not touch acc's level and value counts.
 * implicit_period >= 0 lets the levels stay implicit (reader_internal.h,
 * hs_pq_lazy_levels): when every row of the page holds the same number of
 * levels, all defined, and that number is implicit_period (or it is 0:
 * none fixed yet), only the values are appended and out->implicit is set,
 * out->stride the levels per row. -1: always store the levels. */
typedef struct hs_pq_gather_rep_out {
  bool declined;
  bool implicit;     /* no levels appended (see above) */
  int64_t stride;    /* levels per row when implicit */
  size_t rows_taken; /* of rows[], the page's */
  int64_t n_levels, n_values;
} hs_pq_gather_rep_out;

hs_status hs_pq_page_gather_rep(const hs_pq_page_ctx *ctx, const hs_pq_gather_page *pg,
                                const int64_t *rows, size_t n_sel, int64_t base, int64_t page_rows,
                                int64_t implicit_period, hs_pq_acc *acc, hs_pq_gather_rep_out *out,
                                hs_error *err);

/* Positioned readers of a page's values (dictionary indices or deltas),
 * shared by the flat and the list gather. */
typedef struct hs_pq_gather_cursors {
  hs_rle_cursor ix;
  hs_delta_cursor delta;
  bool has_delta; /* delta set up (a delta page with a selected value) */
} hs_pq_gather_cursors;

typedef struct hs_pq_cached hs_pq_cached;

/* Set up cur for pg's value encoding; a delta page's directory comes from
 * the page's memo or the page cache (*dref: the caller's to put, NULL when
 * the memo lends it; built only when `any`). */
hs_status hs_pq_gather_cursors_init(const hs_pq_page_ctx *ctx, const hs_pq_gather_page *pg,
                                    hs_pq_gather_cursors *cur, hs_pq_cached **dref, bool any,
                                    hs_error *err);

/* Append value v (of row `row`, for messages) of the page to acc. */
hs_status hs_pq_gather_value(const hs_pq_page_ctx *ctx, const hs_pq_gather_page *pg,
                             hs_pq_gather_cursors *cur, int64_t row, int64_t v, hs_pq_acc *acc,
                             hs_error *err);

/* ---------------------------------------------- page cache (page_cache.c)
 *
 * Objects derived from a page's bytes -- DELTA_BINARY_PACKED block
 * directories (encoding.h) and decoded dictionaries -- kept per process so
 * that repeated selections of a kept-open (or reopened) file do not derive
 * them again: keyed by (file stamp, page offset, length of the bytes,
 * kind), least recently used evicted beyond HS_PQ_PAGE_CACHE_BYTES.
 * Thread-safe; an object handed out stays valid until given back even if
 * it is evicted meanwhile. Cached objects are read-only. */
#define HS_PQ_PAGE_CACHE_BYTES ((size_t)64 << 20)

enum {
  HS_PQ_CACHED_DELTA_DIR = 1,
  HS_PQ_CACHED_DICT = 2,
  HS_PQ_CACHED_OFFSET_INDEX = 3, /* a chunk's parsed offset index (reader.c) */
  HS_PQ_CACHED_ROW_MAP = 4       /* a list page's row starts (page_gather_rep.c) */
};

typedef struct hs_pq_cached hs_pq_cached;

/* The cached entry of the key with a reference for the caller, or NULL
 * (also when stamp is NULL: sources without a file are never cached). */
hs_pq_cached *hs_pq_cache_find(const hs_fs_stamp *stamp, uint64_t offset, size_t len, int kind);
/* Hand `obj` (`bytes` of memory, freed with free_obj) to the cache under
 * the key, and return its entry with a reference for the caller: an entry
 * another thread added meanwhile (obj is then freed), or one kept outside
 * the cache when stamp is NULL or obj is too large. NULL only when out of
 * memory (obj freed). */
hs_pq_cached *hs_pq_cache_add(const hs_fs_stamp *stamp, uint64_t offset, size_t len, int kind,
                              void *obj, size_t bytes, void (*free_obj)(void *));
void *hs_pq_cached_obj(const hs_pq_cached *c);
/* The bytes an entry is charged (its object's and its own). */
size_t hs_pq_cached_bytes(const hs_pq_cached *c);
void hs_pq_cache_put(hs_pq_cached *c); /* give a reference back; accepts NULL */
/* Drop every cached object (those handed out live on until put), and
 * forget every verified page. */
void hs_pq_cache_clear(void);

/* Pages whose CRC was checked (README.md "Page checksums"): a bounded
 * set keyed by (file stamp, page header offset, stored page length, stored
 * CRC). A page may be forgotten at any time (it is then verified again);
 * stamp NULL is never found and never stored. Thread-safe. */
bool hs_pq_page_verified(const hs_fs_stamp *stamp, uint64_t offset, uint32_t len, uint32_t crc);
void hs_pq_page_mark_verified(const hs_fs_stamp *stamp, uint64_t offset, uint32_t len,
                              uint32_t crc);

#endif /* HS_PARQUET_PAGE_READ_H */
