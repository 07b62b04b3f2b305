/*
 * hnsw.c — HNSW graph construction and search (Malkov & Yashunin): random
 * levels with multiplier 1/ln(m), heuristic neighbour selection, 2m links
 * on layer 0, parallel insertion with a spin lock per node, filter-aware
 * traversal on layer 0. See hnsw.h for the layout.
 */
#include "hnsw.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/parallel.h"

/* ---------------------------------------------------------------- heaps */

/* Max-heap on d (worst result on top). */
static void maxheap_push(hs_hnsw_cand *h, size_t *n, hs_hnsw_cand c) {
  size_t i = (*n)++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!(h[p].d < c.d)) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = c;
}

static void maxheap_pop(hs_hnsw_cand *h, size_t *n) {
  hs_hnsw_cand last = h[--(*n)];
  size_t i = 0, len = *n;
  for (;;) {
    size_t l = 2 * i + 1, best;
    if (l >= len) break;
    best = (l + 1 < len && h[l + 1].d > h[l].d) ? l + 1 : l;
    if (!(h[best].d > last.d)) break;
    h[i] = h[best];
    i = best;
  }
  if (len > 0) h[i] = last;
}

/* Min-heap on d (closest candidate on top). */
static void minheap_push(hs_hnsw_cand *h, size_t *n, hs_hnsw_cand c) {
  size_t i = (*n)++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!(h[p].d > c.d)) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = c;
}

static void minheap_pop(hs_hnsw_cand *h, size_t *n) {
  hs_hnsw_cand last = h[--(*n)];
  size_t i = 0, len = *n;
  for (;;) {
    size_t l = 2 * i + 1, best;
    if (l >= len) break;
    best = (l + 1 < len && h[l + 1].d < h[l].d) ? l + 1 : l;
    if (!(h[best].d < last.d)) break;
    h[i] = h[best];
    i = best;
  }
  if (len > 0) h[i] = last;
}

static int cand_cmp(const void *a, const void *b) {
  const hs_hnsw_cand *x = a, *y = b;
  if (x->d < y->d) return -1;
  if (x->d > y->d) return 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* -------------------------------------------------------------- scratch */

bool hs_hnsw_scratch_init(hs_hnsw_scratch *s, uint32_t n) {
  memset(s, 0, sizeof *s);
  s->tags = hs_calloc(n ? n : 1, sizeof *s->tags);
  s->n_tags = n;
  s->cand_cap = s->res_cap = 256;
  s->cand = hs_malloc(s->cand_cap * sizeof *s->cand);
  s->res = hs_malloc(s->res_cap * sizeof *s->res);
  if (s->tags == NULL || s->cand == NULL || s->res == NULL) {
    hs_hnsw_scratch_free(s);
    return false;
  }
  return true;
}

void hs_hnsw_scratch_free(hs_hnsw_scratch *s) {
  hs_free(s->tags);
  hs_free(s->cand);
  hs_free(s->res);
  memset(s, 0, sizeof *s);
}

static void scratch_new_query(hs_hnsw_scratch *s) {
  if (++s->gen == 0) { /* wrapped: clear once every 2^32 queries */
    memset(s->tags, 0, (size_t)s->n_tags * sizeof *s->tags);
    s->gen = 1;
  }
}

/* Room for `need` more entries in the candidate heap (and ef in results). */
static bool scratch_room(hs_hnsw_scratch *s, size_t n_cand, size_t need, size_t ef) {
  if (n_cand + need > s->cand_cap) {
    size_t cap = (n_cand + need) * 2;
    hs_hnsw_cand *c = hs_realloc(s->cand, cap * sizeof *c);
    if (c == NULL) return false;
    s->cand = c;
    s->cand_cap = cap;
  }
  if (ef + 1 > s->res_cap) {
    hs_hnsw_cand *r = hs_realloc(s->res, (ef + 1) * sizeof *r);
    if (r == NULL) return false;
    s->res = r;
    s->res_cap = ef + 1;
  }
  return true;
}

/* --------------------------------------------------------------- search */

typedef struct node_locks {
  atomic_flag *f; /* NULL: read-only graph, no locking */
} node_locks;

static inline void lock_node(const node_locks *l, uint32_t i) {
  if (l->f != NULL)
    while (atomic_flag_test_and_set_explicit(&l->f[i], memory_order_acquire)) {
    }
}
static inline void unlock_node(const node_locks *l, uint32_t i) {
  if (l->f != NULL) atomic_flag_clear_explicit(&l->f[i], memory_order_release);
}

/* The neighbours of i at `level`: borrowed in place when unlocked, copied
 * into `buf` under the node's lock otherwise. Count clamped to capacity.
 * `compact` (a constant at each call site) says layer 0 is compact (g->off0),
 * so the fixed-layout walk compiles to the same code as before the compact
 * layout existed. */
static inline __attribute__((always_inline)) const uint32_t *neighbours(
    const hs_hnsw_graph *g, const node_locks *l, uint32_t i, uint32_t level, uint32_t *buf,
    uint32_t *count, bool compact) {
  if (compact && level == 0) return hs_hnsw_neighbours_ro(g, i, level, buf, count);
  const uint32_t *blk = hs_hnsw_links(g, i, level);
  uint32_t cap = level ? g->m : g->m0;
  if (l->f == NULL) {
    uint32_t c = blk[0];
    *count = c < cap ? c : cap;
    return blk + 1;
  }
  lock_node(l, i);
  uint32_t c = blk[0] < cap ? blk[0] : cap;
  memcpy(buf, blk + 1, c * sizeof *buf);
  unlock_node(l, i);
  *count = c;
  return buf;
}

static inline bool allowed(const hs_hnsw_filter *f, uint32_t id) {
  if (f == NULL) return true;
  uint32_t r = f->rows != NULL ? f->rows[id] : id;
  return (f->bits[r >> 6] >> (r & 63)) & 1;
}

typedef struct search_ctx {
  const hs_hnsw_graph *g;
  const hs_distance_kernels *k;
  const float *q;
  uint32_t lo, hi;          /* the partition's id range */
  const hs_quant_query *qq; /* traverse on codes when set */
} search_ctx;

static inline float dist_to(const search_ctx *c, uint32_t id) {
  if (c->qq != NULL) return hs_quant_distance(c->qq, c->g->codes + (size_t)id * c->g->code_size);
  return hs_hnsw_dist(c->k, c->g->space, c->q, c->g->vectors + (size_t)id * c->g->dim, c->g->dim);
}

/* How many fresh neighbours ahead of the one being scored have their rows
 * prefetched (README.md "Search loop"). */
#define PREFETCH_AHEAD 4
/* How many filtered-out neighbours ahead the two-hop walk prefetches the
 * link block of (README.md "Filtered search"). */
#define HOP_AHEAD 4

/* Every cache line of row `id` (vector, or code when quantized). */
static inline void prefetch_row(const search_ctx *c, uint32_t id, size_t bytes) {
  const char *p = c->qq != NULL ? (const char *)(c->g->codes + (size_t)id * c->g->code_size)
                                : (const char *)(c->g->vectors + (size_t)id * c->g->dim);
  hs_prefetch_span(p, bytes);
}

/* Greedy descent on one upper layer. */
static uint32_t greedy(const search_ctx *c, const node_locks *l, uint32_t cur, float *cur_d,
                       uint32_t level) {
  uint32_t buf[HS_HNSW_MAX_M * 2];
  bool changed = true;
  while (changed) {
    changed = false;
    uint32_t cnt;
    const uint32_t *nb = neighbours(c->g, l, cur, level, buf, &cnt, false); /* level >= 1 */
    for (uint32_t j = 0; j < cnt; j++) {
      uint32_t id = nb[j];
      if (id < c->lo || id >= c->hi || c->g->levels[id] < level) continue;
      float d = dist_to(c, id);
      if (d < *cur_d) {
        *cur_d = d;
        cur = id;
        changed = true;
      }
    }
  }
  return cur;
}

/* Offer node `id` at distance d to the beam: kept when the results are
 * not full or it beats the worst; a node that becomes the closest
 * candidate is expanded next, so its links are fetched now. */
static inline __attribute__((always_inline)) void beam_offer(const hs_hnsw_graph *g,
                                                             hs_hnsw_scratch *s, size_t *n_cand,
                                                             size_t *n_res, uint32_t ef, float d,
                                                             uint32_t id, uint32_t level,
                                                             bool compact) {
  if (*n_res >= ef && d >= s->res[0].d) return;
  minheap_push(s->cand, n_cand, (hs_hnsw_cand){d, id});
  if (s->cand[0].id == id)
    __builtin_prefetch(compact ? hs_hnsw_links_addr(g, id, level) : hs_hnsw_links(g, id, level));
  maxheap_push(s->res, n_res, (hs_hnsw_cand){d, id});
  if (*n_res > ef) maxheap_pop(s->res, n_res);
}

/* beam_offer for the dense filtered walk: a node is a candidate whether
 * or not it is allowed (the walk goes through it), a result only when it
 * is. */
static inline __attribute__((always_inline)) void beam_offer_dense(
    const hs_hnsw_graph *g, hs_hnsw_scratch *s, size_t *n_cand, size_t *n_res, uint32_t ef, float d,
    uint32_t id, uint32_t level, bool compact, bool ok) {
  if (*n_res >= ef && d >= s->res[0].d) return;
  minheap_push(s->cand, n_cand, (hs_hnsw_cand){d, id});
  if (s->cand[0].id == id)
    __builtin_prefetch(compact ? hs_hnsw_links_addr(g, id, level) : hs_hnsw_links(g, id, level));
  if (!ok) return;
  maxheap_push(s->res, n_res, (hs_hnsw_cand){d, id});
  if (*n_res > ef) maxheap_pop(s->res, n_res);
}

/* Beam search of one layer from `ep`; results in s->res (max-heap) and
 * their count returned; 0 with *oom set when the heaps could not grow.
 * Prefetches: whole rows PREFETCH_AHEAD fresh neighbours ahead (unfiltered;
 * the filtered walk: the next neighbour's first line), and the link block of
 * a node that becomes the closest candidate (expanded next; as hnswlib
 * does). README.md "Search loop" has the measurements. */
static inline __attribute__((always_inline)) size_t search_layer_t(
    const search_ctx *c, const node_locks *l, uint32_t ep, float ep_d, uint32_t ef, uint32_t level,
    const hs_hnsw_filter *f, hs_hnsw_scratch *s, bool *oom, bool compact) {
  uint32_t buf[HS_HNSW_MAX_M * 2], buf2[HS_HNSW_MAX_M * 2];
  const hs_hnsw_graph *g = c->g;
  size_t n_cand = 0, n_res = 0;
  scratch_new_query(s);
  const uint32_t gen = s->gen;
  if (!scratch_room(s, 0, 1, ef)) {
    *oom = true;
    return 0;
  }
  s->tags[ep] = gen;
  minheap_push(s->cand, &n_cand, (hs_hnsw_cand){ep_d, ep});
  if (allowed(f, ep)) maxheap_push(s->res, &n_res, (hs_hnsw_cand){ep_d, ep});
  while (n_cand > 0) {
    hs_hnsw_cand cur = s->cand[0];
    if (n_res >= ef && cur.d > s->res[0].d) break;
    minheap_pop(s->cand, &n_cand);
    uint32_t cnt;
    const uint32_t *nb = neighbours(g, l, cur.id, level, buf, &cnt, compact);
    if (!scratch_room(s, n_cand, cnt, ef)) {
      *oom = true;
      return 0;
    }
    if (f == NULL || !f->two_hop) {
      /* Unfiltered: the unvisited neighbours first, then their distances,
       * each row prefetched whole PREFETCH_AHEAD rows before it is scored
       * (the same visits and pushes, in the same order, as one pass). A
       * dense filter walks the same way with the bitmap test inline: only
       * what enters the results differs. */
      uint32_t fresh[HS_HNSW_MAX_M * 2], nf = 0;
      for (uint32_t j = 0; j < cnt; j++) {
        uint32_t id = nb[j];
        if (id < c->lo || id >= c->hi || s->tags[id] == gen || (level > 0 && g->levels[id] < level))
          continue;
        s->tags[id] = gen;
        fresh[nf++] = id;
      }
      const size_t rb = c->qq != NULL ? g->code_size : (size_t)g->dim * sizeof(float);
      for (uint32_t t = 0; t < nf && t < PREFETCH_AHEAD; t++) prefetch_row(c, fresh[t], rb);
      for (uint32_t t = 0; t < nf; t++) {
        uint32_t id = fresh[t];
        if (t + PREFETCH_AHEAD < nf) prefetch_row(c, fresh[t + PREFETCH_AHEAD], rb);
        if (f == NULL)
          beam_offer(g, s, &n_cand, &n_res, ef, dist_to(c, id), id, level, compact);
        else
          beam_offer_dense(g, s, &n_cand, &n_res, ef, dist_to(c, id), id, level, compact,
                           allowed(f, id));
      }
      continue;
    }
    /* Two hops (ACORN-style): the unvisited allowed neighbours, then the
     * allowed neighbours of the filtered-out ones (a filtered-out node seen
     * at two hops stays unvisited: it may still be stepped through when it
     * turns up as a direct neighbour) while fewer than hop_cap are held,
     * then scored
     * like the unfiltered loop (rows prefetched ahead). Link blocks of the
     * filtered-out neighbours are prefetched while the list is gathered. */
    uint32_t fresh[HS_HNSW_MAX_M * 4], nf = 0, hop[HS_HNSW_MAX_M * 2], nh = 0;
    const uint32_t cap = f->hop_cap && f->hop_cap < HS_HNSW_MAX_M * 4 ? f->hop_cap
                         : 2 * g->m0 < HS_HNSW_MAX_M * 4              ? 2 * g->m0
                                                                      : HS_HNSW_MAX_M * 4;
    for (uint32_t j = 0; j < cnt; j++) {
      uint32_t id = nb[j];
      if (id < c->lo || id >= c->hi || s->tags[id] == gen || (level > 0 && g->levels[id] < level))
        continue;
      s->tags[id] = gen;
      if (allowed(f, id)) {
        fresh[nf++] = id; /* direct links are always kept: cap bounds the second hop */
      } else {
        hop[nh++] = id;
      }
    }
    /* Link blocks of the filtered-out neighbours, HOP_AHEAD ahead of the
     * one being read: the second hop usually stops after a few of them
     * (cap reached), so prefetching all of them read lines never used. */
    for (uint32_t t = 0; t < nh && t < HOP_AHEAD && nf < cap; t++)
      __builtin_prefetch(compact ? hs_hnsw_links_addr(g, hop[t], level)
                                 : hs_hnsw_links(g, hop[t], level));
    for (uint32_t t = 0; t < nh && nf < cap; t++) {
      if (t + HOP_AHEAD < nh)
        __builtin_prefetch(compact ? hs_hnsw_links_addr(g, hop[t + HOP_AHEAD], level)
                                   : hs_hnsw_links(g, hop[t + HOP_AHEAD], level));
      uint32_t cnt2;
      const uint32_t *nb2 = neighbours(g, l, hop[t], level, buf2, &cnt2, compact);
      for (uint32_t u = 0; u < cnt2 && nf < cap; u++) {
        uint32_t id2 = nb2[u];
        /* the bit first: it is in cache, the tag mostly is not */
        if (id2 < c->lo || id2 >= c->hi || !allowed(f, id2) || s->tags[id2] == gen ||
            (level > 0 && g->levels[id2] < level))
          continue;
        s->tags[id2] = gen;
        fresh[nf++] = id2;
      }
    }
    if (!scratch_room(s, n_cand, nf, ef)) {
      *oom = true;
      return 0;
    }
    const size_t rb = c->qq != NULL ? g->code_size : (size_t)g->dim * sizeof(float);
    for (uint32_t t = 0; t < nf && t < PREFETCH_AHEAD; t++) prefetch_row(c, fresh[t], rb);
    for (uint32_t t = 0; t < nf; t++) {
      uint32_t id = fresh[t];
      if (t + PREFETCH_AHEAD < nf) prefetch_row(c, fresh[t + PREFETCH_AHEAD], rb);
      beam_offer(g, s, &n_cand, &n_res, ef, dist_to(c, id), id, level, compact);
    }
  }
  return n_res;
}

/* The fixed-layout walk (every build, float32 searches) and the compact
 * layer-0 walk, compiled separately. */
static size_t search_layer(const search_ctx *c, const node_locks *l, uint32_t ep, float ep_d,
                           uint32_t ef, uint32_t level, const hs_hnsw_filter *f, hs_hnsw_scratch *s,
                           bool *oom) {
  return search_layer_t(c, l, ep, ep_d, ef, level, f, s, oom, false);
}

static size_t search_layer_compact(const search_ctx *c, const node_locks *l, uint32_t ep,
                                   float ep_d, uint32_t ef, uint32_t level, const hs_hnsw_filter *f,
                                   hs_hnsw_scratch *s, bool *oom) {
  return search_layer_t(c, l, ep, ep_d, ef, level, f, s, oom, true);
}

static size_t search_impl(const hs_hnsw_graph *g, const hs_hnsw_part *p, const float *q,
                          const hs_quant_query *qq, uint32_t ef, const hs_hnsw_filter *filter,
                          hs_hnsw_scratch *s, hs_hnsw_cand **out) {
  *out = s->res;
  if (p->count == 0 || p->entry < p->start || p->entry - p->start >= p->count) return 0;
  /* A beam wider than the partition holds every node it reaches whatever
   * ef is: clamping gives the same candidates and bounds the result heap
   * by the partition, not by the caller's ef. */
  if (ef > p->count) ef = p->count;
  search_ctx c = {g, hs_distance_kernels_active(), q, p->start, p->start + p->count, qq};
  node_locks l = {NULL};
  uint32_t cur = p->entry;
  float cur_d = dist_to(&c, cur);
  uint32_t top = g->levels[cur];
  for (uint32_t lev = top; lev > 0; lev--) cur = greedy(&c, &l, cur, &cur_d, lev);
  bool oom = false;
  size_t n = g->off0 != NULL
                 ? search_layer_compact(&c, &l, cur, cur_d, ef ? ef : 1, 0, filter, s, &oom)
                 : search_layer(&c, &l, cur, cur_d, ef ? ef : 1, 0, filter, s, &oom);
  *out = s->res;
  return n;
}

size_t hs_hnsw_search(const hs_hnsw_graph *g, const hs_hnsw_part *p, const float *q, uint32_t ef,
                      const hs_hnsw_filter *filter, hs_hnsw_scratch *s, hs_hnsw_cand **out) {
  return search_impl(g, p, q, NULL, ef, filter, s, out);
}

size_t hs_hnsw_search_quant(const hs_hnsw_graph *g, const hs_hnsw_part *p, const float *q,
                            const hs_quant_query *qq, uint32_t ef, const hs_hnsw_filter *filter,
                            hs_hnsw_scratch *s, hs_hnsw_cand **out) {
  return search_impl(g, p, q, qq, ef, filter, s, out);
}

/* ------------------------------------------------------------- building */

typedef struct build_ctx {
  hs_hnsw_graph *g;
  hs_hnsw_part *part;
  const hs_hnsw_build_params *bp;
  const hs_distance_kernels *k;
  node_locks locks;
  pthread_mutex_t entry_mu;
  hs_hnsw_scratch *scratch; /* per worker */
  hs_hnsw_cand **work;      /* per worker: ef_construction + m0 + 1 */
  atomic_int failed;
} build_ctx;

static inline float vdist(const build_ctx *b, uint32_t x, uint32_t y) {
  const hs_hnsw_graph *g = b->g;
  return hs_hnsw_dist(b->k, g->space, g->vectors + (size_t)x * g->dim,
                      g->vectors + (size_t)y * g->dim, g->dim);
}

/* Heuristic selection: c[0..n) sorted by distance to the base; keep a
 * candidate only when it is closer to the base than to every kept one.
 * Fewer than `max` candidates are all kept, unpruned (as hnswlib does): the
 * first nodes of a layer and the sparse top layers stay densely linked,
 * which keeps the greedy descent out of wrong clusters (README.md).
 * Kept candidates are moved to the front; returns how many. */
static uint32_t select_heuristic(const build_ctx *b, hs_hnsw_cand *c, size_t n, uint32_t max) {
  if (n < max) return (uint32_t)n;
  uint32_t kept = 0;
  for (size_t i = 0; i < n && kept < max; i++) {
    bool good = true;
    for (uint32_t j = 0; j < kept; j++) {
      if (vdist(b, c[i].id, c[j].id) < c[i].d) {
        good = false;
        break;
      }
    }
    if (good) c[kept++] = c[i];
  }
  return kept;
}

/* Add `add` to the links of `to` at `level`, pruning with the heuristic
 * when the block is full. */
static void link_to(build_ctx *b, uint32_t to, uint32_t add, uint32_t level, hs_hnsw_cand *tmp) {
  hs_hnsw_graph *g = b->g;
  uint32_t cap = level ? g->m : g->m0;
  lock_node(&b->locks, to);
  uint32_t *blk = hs_hnsw_links(g, to, level);
  uint32_t cnt = blk[0];
  for (uint32_t j = 0; j < cnt; j++) {
    if (blk[1 + j] == add) {
      unlock_node(&b->locks, to);
      return;
    }
  }
  if (cnt < cap) {
    blk[1 + cnt] = add;
    blk[0] = cnt + 1;
  } else {
    for (uint32_t j = 0; j < cnt; j++)
      tmp[j] = (hs_hnsw_cand){vdist(b, to, blk[1 + j]), blk[1 + j]};
    tmp[cnt] = (hs_hnsw_cand){vdist(b, to, add), add};
    qsort(tmp, cnt + 1, sizeof *tmp, cand_cmp);
    uint32_t kept = select_heuristic(b, tmp, cnt + 1, cap);
    for (uint32_t j = 0; j < kept; j++) blk[1 + j] = tmp[j].id;
    blk[0] = kept;
  }
  unlock_node(&b->locks, to);
}

static void insert_node(build_ctx *b, uint32_t i, uint32_t worker) {
  hs_hnsw_graph *g = b->g;
  hs_hnsw_part *p = b->part;
  hs_hnsw_scratch *s = &b->scratch[worker];
  hs_hnsw_cand *work = b->work[worker];
  uint32_t level = g->levels[i];
  pthread_mutex_lock(&b->entry_mu);
  uint32_t entry = p->entry, max_level = p->max_level;
  bool raises = level > max_level;
  if (!raises) pthread_mutex_unlock(&b->entry_mu);

  search_ctx c = {g, b->k, g->vectors + (size_t)i * g->dim, p->start, p->start + p->count, NULL};
  uint32_t cur = entry;
  float cur_d = dist_to(&c, cur);
  for (uint32_t lev = max_level; lev > level; lev--) cur = greedy(&c, &b->locks, cur, &cur_d, lev);
  for (uint32_t lev = (level < max_level ? level : max_level) + 1; lev-- > 0;) {
    bool oom = false;
    size_t n = search_layer(&c, &b->locks, cur, cur_d, b->bp->ef_construction, lev, NULL, s, &oom);
    if (oom) {
      atomic_store(&b->failed, 1);
      break;
    }
    memcpy(work, s->res, n * sizeof *work);
    qsort(work, n, sizeof *work, cand_cmp);
    /* the node itself can be reached through a neighbour's fresh link */
    size_t w = 0;
    for (size_t j = 0; j < n; j++)
      if (work[j].id != i) work[w++] = work[j];
    n = w;
    if (n == 0) continue;
    cur = work[0].id;
    cur_d = work[0].d;
    uint32_t kept = select_heuristic(b, work, n, g->m);
    lock_node(&b->locks, i);
    uint32_t *blk = hs_hnsw_links(g, i, lev);
    for (uint32_t j = 0; j < kept; j++) blk[1 + j] = work[j].id;
    blk[0] = kept;
    unlock_node(&b->locks, i);
    hs_hnsw_cand *tmp = work + b->bp->ef_construction + 1;
    for (uint32_t j = 0; j < kept; j++) link_to(b, blk[1 + j], i, lev, tmp);
  }
  if (raises) {
    p->entry = i;
    p->max_level = level;
    pthread_mutex_unlock(&b->entry_mu);
  }
}

/* ------------------------------------------------------ connectivity */

/* Marks in `seen` every node of the partition reachable on layer 0 from
 * `from` that is not marked yet (breadth first, `queue` has room for the
 * partition). */
static void mark_reachable(const hs_hnsw_graph *g, const hs_hnsw_part *p, uint32_t from,
                           uint8_t *seen, uint32_t *queue) {
  uint32_t head = 0, tail = 0;
  if (seen[from - p->start]) return;
  seen[from - p->start] = 1;
  queue[tail++] = from;
  while (head < tail) {
    const uint32_t *blk = hs_hnsw_links(g, queue[head++], 0);
    uint32_t cnt = blk[0] < g->m0 ? blk[0] : g->m0;
    for (uint32_t j = 0; j < cnt; j++) {
      uint32_t id = blk[1 + j];
      if (id < p->start || id - p->start >= p->count || seen[id - p->start]) continue;
      seen[id - p->start] = 1;
      queue[tail++] = id;
    }
  }
}

/* Breadth first from the entry: seen, depth (UINT32_MAX: not reached) and
 * wit[y], the in-links of y from nodes one level closer to the entry.
 * Returns how many nodes were reached. */
static uint32_t levels_from_entry(const hs_hnsw_graph *g, const hs_hnsw_part *p, uint8_t *seen,
                                  uint32_t *depth, uint32_t *wit, uint32_t *queue) {
  const uint32_t n = p->count;
  memset(seen, 0, n);
  memset(wit, 0, (size_t)n * sizeof *wit);
  for (uint32_t i = 0; i < n; i++) depth[i] = UINT32_MAX;
  uint32_t head = 0, tail = 0;
  seen[p->entry - p->start] = 1;
  depth[p->entry - p->start] = 0;
  queue[tail++] = p->entry;
  while (head < tail) {
    uint32_t x = queue[head++];
    uint32_t dx = depth[x - p->start];
    const uint32_t *blk = hs_hnsw_links(g, x, 0);
    uint32_t cnt = blk[0] < g->m0 ? blk[0] : g->m0;
    for (uint32_t j = 0; j < cnt; j++) {
      uint32_t id = blk[1 + j];
      if (id < p->start || id - p->start >= n) continue;
      uint32_t y = id - p->start;
      if (!seen[y]) {
        seen[y] = 1;
        depth[y] = dx + 1;
        queue[tail++] = id;
      }
      if (depth[y] == dx + 1) wit[y]++;
    }
  }
  return tail;
}

/* Heuristic pruning (link_to) can drop the last in-link of a node: it then
 * stays in the graph but no search reaches it, and ef >= n misses it. After
 * the build, every node that layer 0 does not reach from the entry gets an
 * in-link from its nearest reachable node (found by a search from the
 * entry): appended when that node has room, else replacing one of its
 * links whose target stays reachable without it. A round starts with the
 * levels of a breadth-first walk from the entry; a link v -> t may go only
 * when t keeps an in-link from a node one level closer (wit[t], counted
 * without v -> t itself), so by induction on the level every node reached
 * at the round's start stays reached, and what the new links reach only
 * adds (links into nodes reached during the round are never given up).
 * Rounds repeat until the walk reaches every node (README.md,
 * "Connectivity"). Returns false when out of memory. */
static bool repair_part(build_ctx *b, hs_hnsw_part *p, hs_hnsw_scratch *s, hs_hnsw_cand *work) {
  hs_hnsw_graph *g = b->g;
  const uint32_t n = p->count;
  if (n < 2) return true;
  uint8_t *seen = hs_calloc(n, 1);
  uint32_t *depth = hs_malloc((size_t)n * sizeof *depth);
  uint32_t *wit = hs_malloc((size_t)n * sizeof *wit), *queue = hs_malloc((size_t)n * sizeof *queue);
  bool ok = seen != NULL && depth != NULL && wit != NULL && queue != NULL;
  node_locks none = {NULL};
  for (int round = 0; ok && round < 32; round++) {
    uint32_t reached = levels_from_entry(g, p, seen, depth, wit, queue);
    if (reached == n) break;
    for (uint32_t u = p->start; u < p->start + n && ok; u++) {
      if (seen[u - p->start]) continue;
      search_ctx c = {g, b->k, g->vectors + (size_t)u * g->dim, p->start, p->start + n, NULL};
      bool oom = false;
      size_t nr = search_layer(&c, &none, p->entry, dist_to(&c, p->entry), b->bp->ef_construction,
                               0, NULL, s, &oom);
      if (oom) {
        ok = false;
        break;
      }
      memcpy(work, s->res, nr * sizeof *work);
      qsort(work, nr, sizeof *work, cand_cmp);
      /* the nearest reachable nodes first, then (none could take a link)
       * every reachable node of the partition in id order */
      for (size_t r = 0; r < nr + n; r++) {
        uint32_t v = r < nr ? work[r].id : p->start + (uint32_t)(r - nr);
        if (v == u || !seen[v - p->start]) continue;
        uint32_t *blk = hs_hnsw_links(g, v, 0);
        uint32_t cnt = blk[0] < g->m0 ? blk[0] : g->m0, slot = cnt;
        if (cnt == g->m0) { /* full: give up a link whose target stays reached */
          uint32_t dv = depth[v - p->start], best = 0;
          slot = g->m0 + 1;
          for (uint32_t j = cnt; j-- > 0;) {
            uint32_t t = blk[1 + j];
            if (t < p->start || t - p->start >= n) continue;
            uint32_t y = t - p->start, dt = depth[y];
            if (dt == UINT32_MAX || dt == 0) continue; /* reached this round, or the entry */
            uint32_t others = wit[y] - (dv != UINT32_MAX && dv + 1 == dt ? 1u : 0u);
            if (others > best) {
              best = others;
              slot = j;
            }
          }
          if (slot > g->m0) continue; /* no link of v can go: try the next */
          uint32_t y = blk[1 + slot] - p->start;
          if (dv != UINT32_MAX && dv + 1 == depth[y]) wit[y]--;
        } else {
          blk[0] = cnt + 1;
        }
        blk[1 + slot] = u;
        mark_reachable(g, p, u, seen, queue);
        break;
      }
    }
  }
  hs_free(seen);
  hs_free(depth);
  hs_free(wit);
  hs_free(queue);
  return ok;
}

static void insert_range(void *ctx, size_t begin, size_t end, uint32_t worker) {
  build_ctx *b = ctx;
  for (size_t j = begin; j < end; j++) insert_node(b, b->part->start + 1 + (uint32_t)j, worker);
}

static uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void hs_hnsw_build_free(hs_hnsw_graph *g) {
  hs_free((void *)g->levels);
  hs_free(g->links0);
  hs_free(g->upper);
  hs_free((void *)g->upper_off);
  g->levels = NULL;
  g->links0 = g->upper = NULL;
  g->upper_off = NULL;
}

/* Node i's level: floor(-ln(u) / ln(m)), u in (0, 1] from the seed. */
static uint32_t draw_level(uint64_t seed, uint32_t i, double ml) {
  double u = ((double)(mix64(seed ^ ((uint64_t)i * 0xD1B54A32D192ED03ull)) >> 11) + 1.0) /
             9007199254740993.0; /* (0, 1] */
  double lv = floor(-log(u) * ml);
  return lv > HS_HNSW_MAX_LEVEL ? HS_HNSW_MAX_LEVEL : (uint32_t)lv;
}

uint64_t hs_hnsw_upper_blocks(uint32_t n, uint32_t m, uint64_t seed) {
  const double ml = 1.0 / log((double)m);
  uint64_t blocks = 0;
  for (uint32_t i = 0; i < n; i++) blocks += draw_level(seed, i, ml);
  return blocks;
}

hs_status hs_hnsw_build(hs_hnsw_graph *g, hs_hnsw_part *parts, uint32_t n_parts,
                        const hs_hnsw_build_params *bp, hs_error *err) {
  const uint32_t n = g->n;
  if (g->m < 2 || g->m > HS_HNSW_MAX_M || g->m0 < g->m || g->m0 > 2 * HS_HNSW_MAX_M)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "hnsw: m %u outside [2, %u]", g->m, HS_HNSW_MAX_M);
  uint8_t *levels = hs_malloc(n ? n : 1);
  uint32_t *upper_off = hs_malloc((n ? n : 1) * sizeof *upper_off);
  g->levels = levels;
  g->upper_off = upper_off;
  g->upper = NULL;
  if (bp->links0 != NULL) {
    g->links0 = bp->links0;
    memset(g->links0, 0, (size_t)n * (1 + g->m0) * sizeof *g->links0);
  } else {
    g->links0 = hs_calloc((size_t)(n ? n : 1) * (1 + g->m0), sizeof *g->links0);
  }
  if (levels == NULL || upper_off == NULL || g->links0 == NULL) goto oom;
  const double ml = 1.0 / log((double)g->m);
  uint64_t blocks = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t l = draw_level(bp->seed, i, ml);
    levels[i] = (uint8_t)l;
    upper_off[i] = (uint32_t)blocks;
    blocks += l;
  }
  if (blocks > UINT32_MAX / 2) goto oom;
  g->upper_blocks = blocks;
  g->upper = hs_calloc((size_t)(blocks ? blocks : 1) * (1 + g->m), sizeof *g->upper);
  if (g->upper == NULL) goto oom;

  uint32_t threads = bp->threads ? bp->threads : hs_parallel_cores();
  /* hs_parallel_for runs at most this many workers: scratch for more would
   * be allocated and never used. */
  if (threads > HS_HNSW_THREADS_MAX) threads = HS_HNSW_THREADS_MAX;
  build_ctx b;
  memset(&b, 0, sizeof b);
  b.g = g;
  b.bp = bp;
  b.k = hs_distance_kernels_active();
  b.locks.f = hs_calloc(n ? n : 1, sizeof(atomic_flag));
  b.scratch = hs_calloc(threads, sizeof *b.scratch);
  b.work = hs_calloc(threads, sizeof *b.work);
  atomic_init(&b.failed, 0);
  bool ok = b.locks.f != NULL && b.scratch != NULL && b.work != NULL;
  for (uint32_t i = 0; i < n && b.locks.f != NULL; i++) atomic_flag_clear(&b.locks.f[i]);
  for (uint32_t t = 0; ok && t < threads; t++) {
    ok = hs_hnsw_scratch_init(&b.scratch[t], n);
    b.work[t] = hs_malloc(((size_t)bp->ef_construction + 2 + g->m0) * sizeof **b.work);
    ok = ok && b.work[t] != NULL;
  }
  if (ok) {
    pthread_mutex_init(&b.entry_mu, NULL);
    for (uint32_t pi = 0; pi < n_parts; pi++) {
      hs_hnsw_part *p = &parts[pi];
      if (p->count == 0) {
        p->entry = p->start;
        p->max_level = 0;
        continue;
      }
      p->entry = p->start;
      p->max_level = levels[p->start];
      b.part = p;
      hs_parallel_for(p->count - 1, 32, threads, insert_range, &b);
      if (atomic_load(&b.failed) == 0 && !repair_part(&b, p, &b.scratch[0], b.work[0]))
        atomic_store(&b.failed, 1);
    }
    pthread_mutex_destroy(&b.entry_mu);
    ok = atomic_load(&b.failed) == 0;
  }
  for (uint32_t t = 0; b.scratch != NULL && t < threads; t++) {
    hs_hnsw_scratch_free(&b.scratch[t]);
    if (b.work) hs_free(b.work[t]);
  }
  hs_free(b.scratch);
  hs_free(b.work);
  hs_free(b.locks.f);
  if (!ok) goto oom;
  return HS_OK;
oom:
  if (bp->links0 != NULL) g->links0 = NULL; /* the caller's */
  hs_hnsw_build_free(g);
  return hs_error_set(err, HS_ERR_NOMEM, "hnsw: out of memory building a graph of %u nodes", n);
}
