/*
 * vector_search.h — internals of hs_table_vector_search (vector_search.c,
 * vector_search_topk.c): the bounded top-k heap every query keeps and the
 * global order of hits.
 *
 * A hit is (distance, file ordinal, row position). Its order is total:
 * distance ascending, then the data file's ordinal in the snapshot's plan
 * (manifest order), then the row position in that file, so ties between
 * duplicate vectors resolve the same way on every run and every front end.
 * Distances are never NaN here (such rows do not match).
 */
#ifndef HS_QUERY_VECTOR_SEARCH_H
#define HS_QUERY_VECTOR_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/common.h"

typedef struct hs_vs_hit {
  float distance;
  uint32_t file; /* ordinal of the data file in the snapshot's plan */
  int64_t row;   /* file-wide row position */
} hs_vs_hit;

/* a < b in the global order. */
static inline bool hs_vs_hit_less(const hs_vs_hit *a, const hs_vs_hit *b) {
  if (a->distance != b->distance) return a->distance < b->distance;
  if (a->file != b->file) return a->file < b->file;
  return a->row < b->row;
}

/* The k smallest hits pushed so far: a max-heap of at most k hits, its
 * array grown on demand (memory: min(k, pushed) hits). Owned; free with
 * hs_vs_topk_free. */
typedef struct hs_vs_topk {
  hs_vs_hit *h;
  size_t n, cap;
  size_t k;
} hs_vs_topk;

void hs_vs_topk_init(hs_vs_topk *t, size_t k);
void hs_vs_topk_free(hs_vs_topk *t);
/* True once k hits are kept (a new hit must then beat the worst, h[0]). */
static inline bool hs_vs_topk_full(const hs_vs_topk *t) {
  return t->n == t->k;
}
/* Offer a hit; false only when the array cannot grow (out of memory). */
bool hs_vs_topk_push(hs_vs_topk *t, const hs_vs_hit *hit);
/* Sort the kept hits ascending in place (the heap is consumed: t->h[0..n)
 * becomes the answer). */
void hs_vs_topk_sort(hs_vs_topk *t);

#endif /* HS_QUERY_VECTOR_SEARCH_H */
