/*
 * s3_prefetch.c — hs_store_prefetch on S3: bring ranges of many objects
 * into the object cache (s3_cache.c) with one parallel wave of ranged
 * GETs, so that the readers that follow (a manifest reader per manifest, a
 * Puffin reader per index file, a Parquet reader per data file, each
 * asking for its bytes one read at a time) find them there and a cold
 * query pays one round trip per wave instead of one per read.
 *
 * An object whose HEAD the cache holds is fetched with If-Match (a changed
 * object answers 412 and is forgotten); one not seen yet is fetched
 * without, and the answer (Content-Range's total, ETag, Last-Modified)
 * becomes its cached HEAD, as a source open's tail GET does. Ranges are
 * widened to whole cache blocks (S3 clips a range past the end); ranges
 * already held are not fetched. Every answer that is not 200/206 (404,
 * 412, 416) and every failed request is dropped: prefetching is never an
 * error, the read that needs the bytes fetches them itself and words the
 * error. Owns nothing after it returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_internal.h"

typedef struct pf_job {
  hs_s3_req req;
  hs_buf body;
  size_t item;
  bool known, tail;    /* a cached HEAD (info) was used; a suffix range */
  bool exact;          /* the bytes asked for only: kept as a fragment */
  hs_object_info info; /* when known */
  uint64_t lo;         /* the range asked for starts here (not for tail) */
  char range[80], cond[128];
} pf_job;

/* The objects' order: by endpoint, bucket, key. */
static int loc_cmp(const hs_store_loc *x, const hs_store_loc *y) {
  int c = strcmp(x->cfg->endpoint, y->cfg->endpoint);
  if (c == 0) c = strcmp(x->bucket, y->bucket);
  return c != 0 ? c : strcmp(x->key, y->key);
}

/* One GET to plan: [lo, hi) of locs[item] (tail: its last hi bytes). */
typedef struct pf_span {
  const hs_store_loc *loc;
  size_t item;
  bool tail, exact;
  uint64_t lo, hi;
} pf_span;

static int span_cmp(const void *a, const void *b) {
  const pf_span *x = a, *y = b;
  int c = loc_cmp(x->loc, y->loc);
  if (c != 0) return c;
  if (x->tail != y->tail) return x->tail ? 1 : -1;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Ranges of one object closer than this share a GET, up to SPAN_MAX. */
#define SPAN_GAP ((uint64_t)64 << 10)
#define SPAN_MAX ((uint64_t)16 << 20)
/* Exact ranges (rows, pages) merge only this close, up to a fragment. */
#define EXACT_GAP ((uint64_t)4 << 10)
#define EXACT_MAX ((uint64_t)HS_S3_CACHE_FRAG_MAX)

/* Set up jobs[*nj] for span sp (of object loc), or nothing when its bytes
 * are held. */
static void plan_span(const hs_store_loc *loc, const pf_span *sp, pf_job *jobs, size_t *nj,
                      uint64_t *budget) {
  uint64_t want = sp->tail ? sp->hi : sp->hi - sp->lo;
  if (want == 0 || !hs_s3_cache_keeps(loc)) return;
  const uint64_t B = HS_S3_CACHE_BLOCK;
  pf_job *j = &jobs[*nj];
  memset(j, 0, sizeof *j);
  j->item = sp->item;
  j->exact = sp->exact && !sp->tail;
  j->known = hs_s3_cache_head_get(loc, &j->info);
  if (j->known) {
    uint64_t size = j->info.size, lo, hi;
    if (sp->tail) {
      lo = size > sp->hi ? size - sp->hi : 0;
      hi = size;
    } else {
      if (sp->lo >= size) return;
      lo = sp->lo;
      hi = sp->hi < size ? sp->hi : size;
    }
    if (!sp->exact) {
      lo = lo / B * B;
      hi = (hi + B - 1) / B * B;
    }
    if (hi > size) hi = size;
    /* Merged ranges of which the cache holds the first or last blocks (an
     * index's small sections, from the index stream, before its codes):
     * fetch only what lies between. */
    while (!sp->exact && lo < hi && hs_s3_cache_holds(loc, &j->info, lo, hi - lo < B ? hi - lo : B))
      lo += B;
    while (!sp->exact && hi > lo &&
           hs_s3_cache_holds(loc, &j->info, (hi - 1) / B * B, hi - (hi - 1) / B * B))
      hi = (hi - 1) / B * B;
    if (hi <= lo || hs_s3_cache_holds(loc, &j->info, lo, hi - lo)) return;
    j->lo = lo;
    snprintf(j->range, sizeof j->range, "Range: bytes=%llu-%llu", (unsigned long long)lo,
             (unsigned long long)(hi - 1));
    snprintf(j->cond, sizeof j->cond, "If-Match: \"%s\"", j->info.etag);
    want = hi - lo;
  } else if (sp->tail) {
    j->tail = true;
    want = (sp->hi + B - 1) / B * B;
    snprintf(j->range, sizeof j->range, "Range: bytes=-%llu", (unsigned long long)want);
  } else {
    uint64_t lo = sp->exact ? sp->lo : sp->lo / B * B;
    uint64_t hi = sp->exact ? sp->hi : (sp->hi + B - 1) / B * B;
    j->lo = lo;
    want = hi - lo;
    snprintf(j->range, sizeof j->range, "Range: bytes=%llu-%llu", (unsigned long long)lo,
             (unsigned long long)(hi - 1));
  }
  if (*budget < want) return; /* what the cache lacks, counted */
  hs_s3_req_init(&j->req, loc, "GET prefetch", "GET");
  j->req.out_max = (size_t)want;
  j->req.hdr[0] = j->range;
  if (j->known) j->req.hdr[1] = j->cond;
  hs_buf_init(&j->body);
  j->req.out = &j->body;
  j->req.accept[0] = 404;
  j->req.accept[1] = 412;
  j->req.accept[2] = 416;
  *budget -= want;
  (*nj)++;
}

/* Keep what job j's answer brought. */
static void keep_answer(pf_job *j) {
  const hs_s3_req *r = &j->req;
  if (r->status == 412) {
    hs_s3_cache_forget(r->loc);
    return;
  }
  if ((r->status != 200 && r->status != 206) || r->etag[0] == '\0') return;
  uint64_t size = r->status == 200 ? j->body.len : (uint64_t)r->total_size;
  if (r->status == 206 && r->total_size < 0) return;
  hs_object_info info = j->info;
  if (!j->known) {
    memset(&info, 0, sizeof info);
    info.size = size;
    info.mtime_ms = r->mtime_ms;
    snprintf(info.etag, sizeof info.etag, "%s", r->etag);
    hs_s3_cache_head_put(r->loc, &info);
  } else if (strcmp(info.etag, r->etag) != 0 || info.size != size) {
    hs_s3_cache_forget(r->loc);
    return;
  }
  uint64_t start = r->status == 200 ? 0 : j->tail ? size - j->body.len : j->lo;
  if (start + j->body.len > size) return;
  if (j->exact && r->status == 206)
    hs_s3_cache_put_fragment(r->loc, &info, start, j->body.data, j->body.len);
  else
    hs_s3_cache_put_range(r->loc, &info, start, j->body.data, j->body.len);
}

/* GETs of a wave in flight at once: HS_S3_PREFETCH_INFLIGHT (1 to
 * HS_S3_BATCH_MAX; benchmarks) or PREFETCH_INFLIGHT. Read once. 64, not
 * 256: bench_s3_cold's 315-GET re-rank wave at 20 ms RTT took 1363 ms at
 * 256 (4 fewer counted RTs) and 470 ms at 64 (server and proxy on 2 cores
 * serving a new connection per request). */
#define PREFETCH_INFLIGHT 64
static size_t inflight(void) {
  static size_t v;
  size_t got = __atomic_load_n(&v, __ATOMIC_RELAXED);
  if (got != 0) return got;
  const char *e = getenv("HS_S3_PREFETCH_INFLIGHT");
  long x = e != NULL ? strtol(e, NULL, 10) : 0;
  got = x >= 1 && x <= HS_S3_BATCH_MAX ? (size_t)x : PREFETCH_INFLIGHT;
  __atomic_store_n(&v, got, __ATOMIC_RELAXED);
  return got;
}

struct hs_s3_pf {
  pf_job *jobs;
  hs_s3_req **reqs;
  size_t nj;
};

hs_s3_pf *hs_s3_pf_plan(const hs_store_loc *locs, const hs_store_prefetch_item *items, size_t n,
                        uint64_t max_bytes) {
  hs_s3_pf *pf = hs_calloc(1, sizeof *pf);
  pf_span *spans = hs_calloc(n ? n : 1, sizeof *spans);
  size_t ns = 0;
  uint64_t budget = max_bytes < HS_STORE_PREFETCH_MAX ? max_bytes : HS_STORE_PREFETCH_MAX;
  if (pf != NULL) {
    pf->jobs = hs_calloc(n ? n : 1, sizeof *pf->jobs);
    pf->reqs = hs_calloc(n ? n : 1, sizeof *pf->reqs);
  }
  if (pf == NULL || spans == NULL || pf->jobs == NULL || pf->reqs == NULL) {
    hs_free(spans);
    hs_s3_pf_finish(pf);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    if (items[i].len == 0 || locs[i].cfg == NULL) continue;
    bool exact = items[i].exact && !items[i].tail && items[i].len <= EXACT_MAX;
    spans[ns++] = (pf_span){&locs[i],
                            i,
                            items[i].tail,
                            exact,
                            items[i].tail ? 0 : items[i].offset,
                            items[i].tail ? items[i].len : items[i].offset + items[i].len};
  }
  /* Sorted by object, then offset: nearby ranges of one object merge into
   * one GET; an object's tails merge into the longest. */
  qsort(spans, ns, sizeof *spans, span_cmp);
  size_t w = 0;
  for (size_t i = 0; i < ns; i++) {
    pf_span *prev = w > 0 ? &spans[w - 1] : NULL;
    bool same = prev != NULL && prev->tail == spans[i].tail &&
                loc_cmp(&locs[prev->item], &locs[spans[i].item]) == 0;
    if (same && spans[i].tail) {
      if (spans[i].hi > prev->hi) prev->hi = spans[i].hi;
      continue;
    }
    uint64_t gap = prev != NULL && prev->exact && spans[i].exact ? EXACT_GAP : SPAN_GAP;
    uint64_t most = prev != NULL && prev->exact && spans[i].exact ? EXACT_MAX : SPAN_MAX;
    if (same && spans[i].lo <= prev->hi + gap &&
        (spans[i].hi > prev->hi ? spans[i].hi : prev->hi) - prev->lo <= most) {
      prev->exact = prev->exact && spans[i].exact;
      if (spans[i].hi > prev->hi) prev->hi = spans[i].hi;
      continue;
    }
    spans[w++] = spans[i];
  }
  for (size_t i = 0; i < w; i++)
    plan_span(&locs[spans[i].item], &spans[i], pf->jobs, &pf->nj, &budget);
  for (size_t k = 0; k < pf->nj; k++) pf->reqs[k] = &pf->jobs[k].req;
  hs_free(spans);
  return pf;
}

hs_s3_req **hs_s3_pf_reqs(const hs_s3_pf *pf, size_t *n) {
  *n = pf != NULL ? pf->nj : 0;
  return pf != NULL ? pf->reqs : NULL;
}

size_t hs_s3_pf_inflight(void) {
  return inflight();
}

size_t hs_s3_pf_finish(hs_s3_pf *pf) {
  if (pf == NULL) return 0;
  size_t nj = pf->nj;
  for (size_t k = 0; pf->jobs != NULL && k < nj; k++) {
    if (pf->jobs[k].req.ok) keep_answer(&pf->jobs[k]);
    hs_s3_req_free(&pf->jobs[k].req);
    hs_buf_free(&pf->jobs[k].body);
  }
  hs_free(pf->jobs);
  hs_free(pf->reqs);
  hs_free(pf);
  return nj;
}

size_t hs_s3_prefetch_missing(const hs_store_loc *locs, const hs_store_prefetch_item *items,
                              size_t n) {
  return hs_s3_pf_finish(hs_s3_pf_plan(locs, items, n, HS_STORE_PREFETCH_MAX)); /* none sent */
}

size_t hs_s3_prefetch(const hs_store_loc *locs, const hs_store_prefetch_item *items, size_t n,
                      uint64_t max_bytes) {
  hs_s3_pf *pf = hs_s3_pf_plan(locs, items, n, max_bytes);
  size_t nj = 0;
  hs_s3_req **reqs = hs_s3_pf_reqs(pf, &nj);
  if (nj > 0) {
    hs_error e = {0};
    (void)hs_s3_perform_many(reqs, nj, inflight(), &e); /* best effort: see the header */
  }
  return hs_s3_pf_finish(pf);
}
