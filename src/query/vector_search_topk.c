/*
 * vector_search_topk.c — the bounded max-heap of hits (vector_search.h).
 */
#include <stdlib.h>

#include "vector_search.h"

void hs_vs_topk_init(hs_vs_topk *t, size_t k) {
  t->h = NULL;
  t->n = t->cap = 0;
  t->k = k;
}

void hs_vs_topk_free(hs_vs_topk *t) {
  if (t == NULL) return;
  hs_free(t->h);
  t->h = NULL;
  t->n = t->cap = 0;
}

static void sift_down(hs_vs_hit *h, size_t n, size_t i) {
  hs_vs_hit x = h[i];
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && hs_vs_hit_less(&h[c], &h[c + 1])) c++;
    if (!hs_vs_hit_less(&x, &h[c])) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

bool hs_vs_topk_push(hs_vs_topk *t, const hs_vs_hit *hit) {
  if (t->k == 0) return true;
  if (t->n == t->k) { /* full: replace the worst when the new hit beats it */
    if (!hs_vs_hit_less(hit, &t->h[0])) return true;
    t->h[0] = *hit;
    sift_down(t->h, t->n, 0);
    return true;
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    if (cap > t->k) cap = t->k;
    hs_vs_hit *nh = hs_realloc(t->h, cap * sizeof *nh);
    if (nh == NULL) return false;
    t->h = nh;
    t->cap = cap;
  }
  size_t i = t->n++;
  while (i > 0) { /* sift up */
    size_t p = (i - 1) / 2;
    if (!hs_vs_hit_less(&t->h[p], hit)) break;
    t->h[i] = t->h[p];
    i = p;
  }
  t->h[i] = *hit;
  return true;
}

void hs_vs_topk_sort(hs_vs_topk *t) {
  /* Heap sort: repeatedly move the maximum to the end. */
  for (size_t n = t->n; n > 1; n--) {
    hs_vs_hit x = t->h[0];
    t->h[0] = t->h[n - 1];
    t->h[n - 1] = x;
    sift_down(t->h, n - 1, 0);
  }
}
