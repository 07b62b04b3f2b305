/*
 * chunk_memo.c — per-chunk memos of an opened file (chunk_memo.h): made on
 * a chunk's first row selection, filled slot by slot by the reads, freed
 * with the file. Lock-free: every slot goes from empty to filled once by
 * compare-and-swap.
 */
#include <string.h>

#include "chunk_memo.h"
#include "page_read.h"

struct hs_pq_memo {
  uint32_t n_row_groups;
  int32_t n_leaves;
  _Atomic(hs_pq_chunk_memo *) *chunks; /* n_row_groups * n_leaves */
};

/* Bytes pinned by every memo of the process. */
static atomic_size_t memo_bytes;

bool hs_pq_memo_charge(size_t bytes) {
  size_t cur = atomic_load_explicit(&memo_bytes, memory_order_relaxed);
  do {
    if (bytes > HS_PQ_MEMO_BYTES - cur || cur > HS_PQ_MEMO_BYTES) return false;
  } while (!atomic_compare_exchange_weak_explicit(&memo_bytes, &cur, cur + bytes,
                                                  memory_order_relaxed, memory_order_relaxed));
  return true;
}

static void memo_uncharge(size_t bytes) {
  atomic_fetch_sub_explicit(&memo_bytes, bytes, memory_order_relaxed);
}

hs_pq_memo *hs_pq_memo_new(uint32_t n_row_groups, int32_t n_leaves) {
  size_t n;
  if (n_leaves <= 0 || !hs_mul_size(n_row_groups, (size_t)n_leaves, &n)) return NULL;
  hs_pq_memo *m = hs_calloc(1, sizeof *m);
  if (m == NULL) return NULL;
  m->chunks = hs_calloc(n ? n : 1, sizeof *m->chunks);
  if (m->chunks == NULL) {
    hs_free(m);
    return NULL;
  }
  m->n_row_groups = n_row_groups;
  m->n_leaves = n_leaves;
  return m;
}

static size_t chunk_bytes(uint32_t n_pages) {
  return sizeof(hs_pq_chunk_memo) +
         (size_t)n_pages * (sizeof(hs_pq_page_memo) + sizeof(hs_pq_page_location));
}

static void put_cached(_Atomic(hs_pq_cached *) *slot) {
  hs_pq_cached *c = atomic_load_explicit(slot, memory_order_acquire);
  if (c == NULL) return;
  memo_uncharge(hs_pq_cached_bytes(c));
  hs_pq_cache_put(c);
}

static void chunk_free(hs_pq_chunk_memo *c) {
  if (c == NULL) return;
  for (uint32_t p = 0; p < c->oi.n_pages; p++) {
    hs_pq_page_memo *pm = &c->pages[p];
    hs_pq_memo_bytes *b = atomic_load_explicit(&pm->unz, memory_order_acquire);
    if (b != NULL) {
      memo_uncharge(sizeof *b + b->len);
      hs_free(b);
    }
    put_cached(&pm->rowmap);
    put_cached(&pm->delta);
  }
  put_cached(&c->dict);
  memo_uncharge(chunk_bytes(c->oi.n_pages));
  hs_free(c->pages);
  hs_free(c->oi.page_locations);
  hs_free(c);
}

void hs_pq_memo_free(hs_pq_memo *m) {
  if (m == NULL) return;
  size_t n = (size_t)m->n_row_groups * (size_t)m->n_leaves;
  for (size_t i = 0; i < n; i++) chunk_free(atomic_load(&m->chunks[i]));
  hs_free(m->chunks);
  hs_free(m);
}

hs_pq_chunk_memo *hs_pq_memo_chunk(hs_pq_memo *m, uint32_t g, int32_t l,
                                   const hs_pq_offset_index *oi) {
  if (m == NULL || g >= m->n_row_groups || l < 0 || l >= m->n_leaves) return NULL;
  _Atomic(hs_pq_chunk_memo *) *slot = &m->chunks[(size_t)g * (size_t)m->n_leaves + (size_t)l];
  hs_pq_chunk_memo *c = atomic_load_explicit(slot, memory_order_acquire);
  if (c != NULL || oi == NULL || oi->n_pages == 0) return c;
  size_t bytes = chunk_bytes(oi->n_pages);
  if (!hs_pq_memo_charge(bytes)) return NULL;
  c = hs_calloc(1, sizeof *c);
  hs_pq_page_memo *pages = hs_calloc(oi->n_pages, sizeof *pages);
  hs_pq_page_location *loc = hs_malloc(oi->n_pages * sizeof *loc);
  if (c == NULL || pages == NULL || loc == NULL) {
    hs_free(c);
    hs_free(pages);
    hs_free(loc);
    memo_uncharge(bytes);
    return NULL;
  }
  memcpy(loc, oi->page_locations, oi->n_pages * sizeof *loc);
  c->oi.n_pages = oi->n_pages;
  c->oi.page_locations = loc;
  c->pages = pages;
  hs_pq_chunk_memo *none = NULL;
  if (!atomic_compare_exchange_strong_explicit(slot, &none, c, memory_order_acq_rel,
                                               memory_order_acquire)) {
    chunk_free(c); /* another thread's memo is there */
    return none;
  }
  return c;
}

bool hs_pq_memo_keep_cached(_Atomic(hs_pq_cached *) *slot, hs_pq_cached *c, size_t bytes) {
  if (c == NULL || atomic_load_explicit(slot, memory_order_relaxed) != NULL) return false;
  if (!hs_pq_memo_charge(bytes)) return false;
  hs_pq_cached *none = NULL;
  if (atomic_compare_exchange_strong_explicit(slot, &none, c, memory_order_acq_rel,
                                              memory_order_relaxed))
    return true;
  memo_uncharge(bytes);
  return false;
}

const hs_pq_memo_bytes *hs_pq_memo_keep_bytes(hs_pq_page_memo *pm, const uint8_t *data,
                                              size_t len) {
  hs_pq_memo_bytes *have = atomic_load_explicit(&pm->unz, memory_order_acquire);
  if (have != NULL) return have;
  if (len > HS_PQ_MEMO_PAGE_MAX || !hs_pq_memo_charge(sizeof *have + len)) return NULL;
  hs_pq_memo_bytes *b = hs_malloc(sizeof *b + (len ? len : 1));
  if (b == NULL) {
    memo_uncharge(sizeof *have + len);
    return NULL;
  }
  b->len = len;
  if (len > 0) memcpy(b->data, data, len);
  if (!atomic_compare_exchange_strong_explicit(&pm->unz, &have, b, memory_order_acq_rel,
                                               memory_order_acquire)) {
    memo_uncharge(sizeof *b + len);
    hs_free(b);
    return have;
  }
  return b;
}

void hs_pq_memo_keep_header(hs_pq_page_memo *pm, const hs_pq_page_header *ph, uint64_t body_off) {
  int empty = 0;
  if (!atomic_compare_exchange_strong_explicit(&pm->state, &empty, 1, memory_order_acquire,
                                               memory_order_relaxed))
    return;
  pm->ph = *ph;
  pm->ph.data_page.has_statistics = false;
  memset(&pm->ph.data_page.statistics, 0, sizeof pm->ph.data_page.statistics);
  pm->ph.data_page_v2.has_statistics = false;
  memset(&pm->ph.data_page_v2.statistics, 0, sizeof pm->ph.data_page_v2.statistics);
  pm->body_off = body_off;
  atomic_store_explicit(&pm->state, 2, memory_order_release);
}
