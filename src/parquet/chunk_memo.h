/*
 * chunk_memo.h — private to the reader: what row selections of one opened
 * file keep per column chunk between reads (chunk_memo.c).
 *
 * A search fetches ten rows of every column per query from a file that
 * stays open between queries (hs_parquet_reader_open_shared, the prepared
 * search's readers). Without a memo each fetch parsed the header of every
 * page it touched, looked up the page's CRC in the verified set, its row
 * map or delta directory and the chunk's dictionary in the page cache (a
 * mutex and a hash each), decompressed a compressed page (the `id` column's
 * zstd delta page, 4 KB, every query) and re-checked the chunk's offset
 * index entry by entry. Those are functions of the file's bytes, which never
 * change under an open file (Iceberg writes files once; a file replaced
 * under its name has another stamp and is opened afresh), so the first read
 * keeps them here and later reads take them without a lock:
 *
 *  - the chunk's offset index, checked against the chunk once;
 *  - whether its data pages are stored raw (reader.c's chunk_pages_raw);
 *  - the chunk's decoded dictionary (a page-cache reference), or that it
 *    has none;
 *  - per page of the offset index: the parsed header (statistics dropped)
 *    and where the body starts; that its CRC was checked; its decompressed
 *    bytes when it is compressed and small (HS_PQ_MEMO_PAGE_MAX); its row
 *    map or delta directory (a page-cache reference).
 *
 * Every slot is filled once (compare-and-swap; a thread that loses the race
 * frees its own copy) and read with acquire loads, so readers on several
 * threads share one memo. Pinned bytes (decompressed pages, referenced
 * cache objects) are charged to one process-wide budget
 * (HS_PQ_MEMO_BYTES); past it a read simply does the work again, as
 * without a memo. Only files with a stamp (hs_source_stamp: local files
 * and object-store objects) get one; memory sources read as before.
 * Ownership: the file (reader.c) owns its memo, which owns
 * its chunk memos and their references; all are freed with the file.
 */
#ifndef HS_PARQUET_CHUNK_MEMO_H
#define HS_PARQUET_CHUNK_MEMO_H

#include <stdatomic.h>

#include "metadata.h"
#include "parquet.h"

/* Largest page whose decompressed bytes a memo keeps, and the bytes all
 * memos of the process may pin (decompressed pages and the cache objects
 * they hold references to). */
#define HS_PQ_MEMO_PAGE_MAX ((size_t)256 << 10)
#define HS_PQ_MEMO_BYTES ((size_t)64 << 20)

typedef struct hs_pq_cached hs_pq_cached;

/* Decompressed bytes of a page (what the gather reads instead of the
 * stored bytes). */
typedef struct hs_pq_memo_bytes {
  size_t len;
  uint8_t data[];
} hs_pq_memo_bytes;

typedef struct hs_pq_page_memo {
  atomic_int state;                /* 0: empty, 1: being written, 2: ph and body_off hold */
  hs_pq_page_header ph;            /* has_statistics false: the memo keeps no arena */
  uint64_t body_off;               /* where the page body starts in the file */
  atomic_bool verified;            /* the body's CRC was checked */
  _Atomic(hs_pq_memo_bytes *) unz; /* decompressed bytes, or NULL */
  atomic_int starts_row;           /* list page: 0 unknown, 1 its first level starts a row, 2 not */
  _Atomic(hs_pq_cached *) rowmap;  /* the list page's row map, or NULL */
  _Atomic(hs_pq_cached *) delta;   /* the delta page's directory, or NULL */
} hs_pq_page_memo;

typedef struct hs_pq_chunk_memo {
  hs_pq_offset_index oi; /* owned copy of the chunk's offset index */
  atomic_bool oi_checked;
  atomic_int raw;        /* 0: unknown, 1: pages stored raw, 2: not */
  atomic_int dict_state; /* 0: unknown, 1: no dictionary page, 2: dict holds it */
  _Atomic(hs_pq_cached *) dict;
  hs_pq_page_memo *pages; /* oi.n_pages */
} hs_pq_chunk_memo;

/* One file's memos: a slot per (row group, leaf). */
typedef struct hs_pq_memo hs_pq_memo;

hs_pq_memo *hs_pq_memo_new(uint32_t n_row_groups, int32_t n_leaves);
void hs_pq_memo_free(hs_pq_memo *m);

/* The chunk memo of (g, l), made from `oi` (copied) on first use; NULL when
 * out of memory or when the memo budget is spent (read without one). */
hs_pq_chunk_memo *hs_pq_memo_chunk(hs_pq_memo *m, uint32_t g, int32_t l,
                                   const hs_pq_offset_index *oi);

/* Charge `bytes` to the process-wide budget: false (nothing charged) when
 * it would pass HS_PQ_MEMO_BYTES. */
bool hs_pq_memo_charge(size_t bytes);

/* Keep `c` (a reference the caller gives up, charged `bytes`) in *slot if
 * it is empty and the budget allows: true when kept (the memo's now);
 * false leaves the reference the caller's. */
bool hs_pq_memo_keep_cached(_Atomic(hs_pq_cached *) *slot, hs_pq_cached *c, size_t bytes);

/* Keep decompressed bytes (a copy of data[0..len)) for page memo `pm`;
 * the kept bytes (pm's, valid while the memo lives), or NULL when not kept
 * (too large, over budget or out of memory). */
const hs_pq_memo_bytes *hs_pq_memo_keep_bytes(hs_pq_page_memo *pm, const uint8_t *data, size_t len);

/* Record the page header parsed at a page memo's page (statistics are
 * dropped); a no-op when it is held already or being written. */
void hs_pq_memo_keep_header(hs_pq_page_memo *pm, const hs_pq_page_header *ph, uint64_t body_off);

#endif /* HS_PARQUET_CHUNK_MEMO_H */
