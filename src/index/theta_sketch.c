/*
 * theta_sketch.c — KMV Theta sketch with DataSketches' hash and compact
 * serialization (theta_sketch.h). MurmurHash3 x64_128 is written from the
 * algorithm's description (Austin Appleby, public domain): 16-byte blocks
 * as two little-endian 64-bit lanes mixed with c1/c2 and rotations, a 1-15
 * byte tail, the length xored in, then fmix64 on both halves.
 */
#include "theta_sketch.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t rotl64(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

static inline uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= UINT64_C(0xff51afd7ed558ccd);
  k ^= k >> 33;
  k *= UINT64_C(0xc4ceb9fe1a85ec53);
  k ^= k >> 33;
  return k;
}

void hs_murmur3_x64_128(const void *data, size_t len, uint64_t seed, uint64_t out[2]) {
  const uint8_t *p = data;
  const uint64_t c1 = UINT64_C(0x87c37b91114253d5), c2 = UINT64_C(0x4cf5ad432745937f);
  uint64_t h1 = seed, h2 = seed;
  size_t nblocks = len / 16;
  for (size_t i = 0; i < nblocks; i++) {
    uint64_t k1 = hs_load_u64le(p + 16 * i), k2 = hs_load_u64le(p + 16 * i + 8);
    k1 *= c1;
    k1 = rotl64(k1, 31);
    k1 *= c2;
    h1 ^= k1;
    h1 = rotl64(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729;
    k2 *= c2;
    k2 = rotl64(k2, 33);
    k2 *= c1;
    h2 ^= k2;
    h2 = rotl64(h2, 31);
    h2 += h1;
    h2 = h2 * 5 + 0x38495ab5;
  }
  const uint8_t *tail = p + 16 * nblocks;
  size_t rem = len & 15;
  uint64_t k1 = 0, k2 = 0;
  for (size_t i = rem; i > 8; i--) k2 ^= (uint64_t)tail[i - 1] << (8 * (i - 9));
  if (rem > 8) {
    k2 *= c2;
    k2 = rotl64(k2, 33);
    k2 *= c1;
    h2 ^= k2;
  }
  for (size_t i = rem < 8 ? rem : 8; i > 0; i--) k1 ^= (uint64_t)tail[i - 1] << (8 * (i - 1));
  if (rem > 0) {
    k1 *= c1;
    k1 = rotl64(k1, 31);
    k1 *= c2;
    h1 ^= k1;
  }
  h1 ^= (uint64_t)len;
  h2 ^= (uint64_t)len;
  h1 += h2;
  h2 += h1;
  h1 = fmix64(h1);
  h2 = fmix64(h2);
  h1 += h2;
  h2 += h1;
  out[0] = h1;
  out[1] = h2;
}

uint16_t hs_theta_seed_hash(uint64_t seed) {
  uint8_t b[8];
  hs_store_u64le(b, seed);
  uint64_t h[2];
  hs_murmur3_x64_128(b, 8, 0, h);
  return (uint16_t)(h[0] & 0xffff);
}

hs_status hs_theta_init(hs_theta_sketch *s, uint32_t k, hs_error *err) {
  memset(s, 0, sizeof *s);
  if (k < 16 || k > (1u << 26) || (k & (k - 1)) != 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "theta sketch: nominal entries %u is not a power of two in 16..2^26", k);
  s->k = k;
  s->theta = HS_THETA_MAX;
  s->cap = 64;
  s->slots = hs_calloc(s->cap, sizeof *s->slots);
  if (s->slots == NULL) return hs_error_set(err, HS_ERR_NOMEM, "theta sketch: out of memory");
  return HS_OK;
}

void hs_theta_free(hs_theta_sketch *s) {
  if (s == NULL) return;
  hs_free(s->slots);
  memset(s, 0, sizeof *s);
}

static size_t slot_of(uint64_t h, size_t cap) {
  return (size_t)(h * UINT64_C(0x9e3779b97f4a7c15) >> 7) & (cap - 1);
}

/* Insert into a table with room (no growth). Returns whether it was new. */
static bool put(uint64_t *slots, size_t cap, uint64_t h) {
  for (size_t i = slot_of(h, cap);; i = (i + 1) & (cap - 1)) {
    if (slots[i] == h) return false;
    if (slots[i] == 0) {
      slots[i] = h;
      return true;
    }
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The kept hashes, sorted increasing, as a fresh array. */
static uint64_t *sorted(const hs_theta_sketch *s, hs_error *err) {
  uint64_t *v = hs_malloc((s->used ? s->used : 1) * sizeof *v);
  if (v == NULL) {
    hs_error_set(err, HS_ERR_NOMEM, "theta sketch: out of memory");
    return NULL;
  }
  size_t n = 0;
  for (size_t i = 0; i < s->cap; i++)
    if (s->slots[i] != 0) v[n++] = s->slots[i];
  qsort(v, n, sizeof *v, cmp_u64);
  return v;
}

/* Rebuild the table from v[0..n) at capacity `cap`. */
static hs_status rebuild(hs_theta_sketch *s, const uint64_t *v, size_t n, size_t cap,
                         hs_error *err) {
  uint64_t *slots = hs_calloc(cap, sizeof *slots);
  if (slots == NULL) return hs_error_set(err, HS_ERR_NOMEM, "theta sketch: out of memory");
  for (size_t i = 0; i < n; i++) put(slots, cap, v[i]);
  hs_free(s->slots);
  s->slots = slots;
  s->cap = cap;
  s->used = n;
  return HS_OK;
}

/* Keep the k smallest hashes; theta becomes the (k+1)-th smallest. */
static hs_status trim(hs_theta_sketch *s, hs_error *err) {
  if (s->used <= s->k) return HS_OK;
  uint64_t *v = sorted(s, err);
  if (v == NULL) return HS_ERR_NOMEM;
  s->theta = (int64_t)v[s->k];
  hs_status st = rebuild(s, v, s->k, s->cap, err);
  hs_free(v);
  return st;
}

hs_status hs_theta_update(hs_theta_sketch *s, const void *data, size_t len, hs_error *err) {
  if (len == 0) return HS_OK;
  uint64_t h[2];
  hs_murmur3_x64_128(data, len, HS_THETA_SEED, h);
  uint64_t v = h[0] >> 1;
  if (v == 0 || v >= (uint64_t)s->theta) return HS_OK;
  if (!put(s->slots, s->cap, v)) return HS_OK;
  s->used++;
  if (s->used * 4 > s->cap * 3) { /* 3/4 full */
    if (s->used > 2 * (size_t)s->k) return trim(s, err);
    uint64_t *sv = sorted(s, err);
    if (sv == NULL) return HS_ERR_NOMEM;
    hs_status st = rebuild(s, sv, s->used, s->cap * 2, err);
    hs_free(sv);
    return st;
  }
  return HS_OK;
}

double hs_theta_estimate(const hs_theta_sketch *s) {
  size_t n = s->used > s->k ? s->k : s->used;
  if (s->used <= s->k && s->theta == HS_THETA_MAX) return (double)n;
  /* Trimmed: theta is the (k+1)-th smallest of what was kept; when the
   * table still holds more than k, the estimate is of its k smallest. */
  if (s->used > s->k) {
    /* Not trimmed yet: compute as trim would (callers serialize first). */
    uint64_t *v = sorted(s, NULL);
    if (v == NULL) return -1;
    double est = (double)s->k / ((double)v[s->k] / 9223372036854775807.0);
    hs_free(v);
    return est;
  }
  return (double)n / ((double)s->theta / 9223372036854775807.0);
}

/* DataSketches' preamble flags. */
#define FLAG_READ_ONLY 2
#define FLAG_EMPTY 4
#define FLAG_COMPACT 8
#define FLAG_ORDERED 16
#define FLAG_SINGLE_ITEM 32

hs_status hs_theta_serialize(hs_theta_sketch *s, hs_buf *out, hs_error *err) {
  hs_status st = trim(s, err);
  if (st != HS_OK) return st;
  uint64_t *v = sorted(s, err);
  if (v == NULL) return HS_ERR_NOMEM;
  size_t n = s->used;
  bool exact = s->theta == HS_THETA_MAX;
  int pre = n == 0 && exact ? 1 : n == 1 && exact ? 1 : exact ? 2 : 3;
  uint8_t h[24];
  memset(h, 0, sizeof h);
  h[0] = (uint8_t)pre;
  h[1] = 3; /* serial version */
  h[2] = 3; /* family: compact */
  h[5] = FLAG_READ_ONLY | FLAG_COMPACT | FLAG_ORDERED;
  if (n == 0 && exact) h[5] |= FLAG_EMPTY;
  if (n == 1 && exact) h[5] |= FLAG_SINGLE_ITEM;
  /* An empty sketch carries no seed hash (DataSketches writes 0). */
  uint16_t sh = n == 0 && exact ? 0 : hs_theta_seed_hash(HS_THETA_SEED);
  h[6] = (uint8_t)(sh & 0xff);
  h[7] = (uint8_t)(sh >> 8);
  if (pre >= 2) {
    hs_store_u32le(h + 8, (uint32_t)n);
    float p = 1.0f;
    uint32_t pb;
    memcpy(&pb, &p, 4);
    hs_store_u32le(h + 12, pb);
  }
  if (pre == 3) hs_store_u64le(h + 16, (uint64_t)s->theta);
  bool ok = hs_buf_append(out, h, (size_t)pre * 8);
  for (size_t i = 0; ok && i < n; i++) {
    uint8_t b[8];
    hs_store_u64le(b, v[i]);
    ok = hs_buf_append(out, b, 8);
  }
  hs_free(v);
  return ok ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "theta sketch: out of memory");
}

hs_status hs_theta_parse(const uint8_t *p, size_t len, double *estimate, int64_t *retained,
                         int64_t *theta, hs_error *err) {
  if (len < 8) return hs_error_set(err, HS_ERR_CORRUPT, "theta sketch: %zu bytes", len);
  int pre = p[0] & 0x3f;
  uint8_t flags = p[5];
  if (p[1] != 3)
    return hs_error_set(err, HS_ERR_CORRUPT, "theta sketch: serial version %d, not 3", p[1]);
  if (p[2] != 3)
    return hs_error_set(err, HS_ERR_CORRUPT, "theta sketch: family %d, not compact (3)", p[2]);
  if (pre < 1 || pre > 3 || len < (size_t)pre * 8)
    return hs_error_set(err, HS_ERR_CORRUPT, "theta sketch: %d preamble longs in %zu bytes", pre,
                        len);
  if ((flags & 1) != 0)
    return hs_error_set(err, HS_ERR_CORRUPT, "theta sketch: big-endian sketches are not read");
  uint16_t sh = (uint16_t)(p[6] | (p[7] << 8));
  int64_t n = 0, th = HS_THETA_MAX;
  if (pre == 1) {
    n = (flags & FLAG_EMPTY) != 0 ? 0 : (flags & FLAG_SINGLE_ITEM) != 0 ? 1 : -1;
    if (n < 0)
      return hs_error_set(err, HS_ERR_CORRUPT, "theta sketch: one preamble long, not empty or one");
  } else {
    n = (int64_t)hs_load_u32le(p + 8);
    if (pre == 3) th = (int64_t)hs_load_u64le(p + 16);
  }
  if (n > 0 && sh != hs_theta_seed_hash(HS_THETA_SEED))
    return hs_error_set(err, HS_ERR_CORRUPT, "theta sketch: seed hash %04x is not seed %d's", sh,
                        HS_THETA_SEED);
  if (th <= 0 || (uint64_t)n > (len - (size_t)pre * 8) / 8 || len != (size_t)pre * 8 + 8 * n)
    return hs_error_set(err, HS_ERR_CORRUPT, "theta sketch: %lld entries, theta %lld in %zu bytes",
                        (long long)n, (long long)th, len);
  for (int64_t i = 0; i < n; i++) {
    uint64_t h = hs_load_u64le(p + pre * 8 + 8 * i);
    if (h == 0 || h >= (uint64_t)th)
      return hs_error_set(err, HS_ERR_CORRUPT, "theta sketch: entry %lld not in (0, theta)",
                          (long long)i);
  }
  *retained = n;
  *theta = th;
  *estimate = th == HS_THETA_MAX ? (double)n : (double)n / ((double)th / 9223372036854775807.0);
  return HS_OK;
}
