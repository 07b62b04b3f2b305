/*
 * inverted_probe.c — point lookups of many keys at once in a SORTED column
 * (IN lists, the SQL index join's key batches): README.md "Point lookups".
 *
 * The probe keys come sorted and distinct. One cursor walks them together
 * with the blocks' (min, max) directory, galloping on both sides, so a
 * batch of K keys costs O(K log B) directory comparisons; a block that no
 * probe key falls into is never read. In a block that some do:
 *   plain blocks:  a galloping search in the block's key table, rows read
 *                  in place;
 *   packed blocks: 8-byte keys are delta decoded only up to the last probe
 *                  key, merged with the probes as they come out; other keys
 *                  are searched in their plain table; a match's row is its
 *                  rank (read in place) selected in the block bitmap,
 *                  which is not deserialized;
 *   lossy blocks, or blocks of one key: the block bitmap, as a range does.
 * Nothing is written to c->unpacked, so the column's bound-block state is
 * left alone.
 */
#include "sidx_internal.h"

/* x86-64: deltas of up to 7 bits are summed many at once while the
 * running key stays below the next probe. AVX-512 VBMI: 64 per test (eight
 * 8-delta chunks of kb bytes each, one per 64-bit lane: a byte permute, a
 * shift, a multishift into bytes and a sum of absolute differences).
 * BMI2: 16 or 8 per test (PDEP spreads eight deltas into the bytes of a
 * word, two multiplies sum them). Checked once; HS_SIMD=avx2 stops at
 * BMI2 and HS_SIMD=scalar keeps the portable loop (as src/arrow/filter.c). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#include <stdatomic.h>
#include <stdlib.h>
#define PROBE_X86 1
static atomic_int cpu_has; /* bit 0: checked; bit 1: BMI2; bit 2: AVX-512 VBMI */
static int cpu_check(void) {
  int h = atomic_load_explicit(&cpu_has, memory_order_relaxed);
  if (h == 0) {
    const char *cap = getenv("HS_SIMD");
    bool scalar = cap != NULL && strcmp(cap, "scalar") == 0;
    bool avx2 = cap != NULL && strcmp(cap, "avx2") == 0;
    h = 1 | (!scalar && __builtin_cpu_supports("bmi2") ? 2 : 0) |
        (!scalar && !avx2 && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512vbmi")
             ? 4
             : 0);
    atomic_store_explicit(&cpu_has, h, memory_order_relaxed);
  }
  return h;
}
static bool have_bmi2(void) {
  return (cpu_check() & 2) != 0;
}
static bool have_vbmi(void) {
  return (cpu_check() & 4) != 0;
}

/* 64 deltas of kb <= 7 bits a test, while their 64-byte load lies inside
 * q[0..len) and pairs [j, fast) hold them: lane i of a 512-bit register
 * takes bytes [i * kb, i * kb + 8) of the load (chunk i starts kb bytes
 * after chunk i - 1, at the same bit), shifted by the start bit; byte b of
 * a lane is then bits [b * kb, b * kb + 8) cut to kb bits, and the bytes
 * are summed (at most 64 x 127). */
#define PERM8(i, kb)                                                                          \
  (i) * (kb), (i) * (kb) + 1, (i) * (kb) + 2, (i) * (kb) + 3, (i) * (kb) + 4, (i) * (kb) + 5, \
      (i) * (kb) + 6, (i) * (kb) + 7
#define PERM(kb)                                                                        \
  {                                                                                     \
    PERM8(0, kb), PERM8(1, kb), PERM8(2, kb), PERM8(3, kb), PERM8(4, kb), PERM8(5, kb), \
        PERM8(6, kb), PERM8(7, kb)                                                      \
  }
#define CTL8(kb) 0, (kb), 2 * (kb), 3 * (kb), 4 * (kb), 5 * (kb), 6 * (kb), 7 * (kb)
#define CTL(kb) \
  { CTL8(kb), CTL8(kb), CTL8(kb), CTL8(kb), CTL8(kb), CTL8(kb), CTL8(kb), CTL8(kb) }
/* Per key width kb: the byte permute (lane i: bytes i * kb ...) and the
 * multishift's bit offsets (byte b of a lane: bit b * kb). */
static const uint8_t vbmi_perm[8][64] = {PERM(0), PERM(1), PERM(2), PERM(3),
                                         PERM(4), PERM(5), PERM(6), PERM(7)};
static const uint8_t vbmi_ctl[8][64] = {CTL(0), CTL(1), CTL(2), CTL(3),
                                        CTL(4), CTL(5), CTL(6), CTL(7)};
#undef PERM8
#undef PERM
#undef CTL8
#undef CTL

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static uint32_t chunks_vbmi(
    const uint8_t *q, size_t len, unsigned kb, uint32_t j, uint32_t fast, uint64_t *key,
    uint64_t want) {
  const __m512i P = _mm512_loadu_si512(vbmi_perm[kb]), C = _mm512_loadu_si512(vbmi_ctl[kb]);
  const __m512i M = _mm512_set1_epi8((char)((1u << kb) - 1)), Z = _mm512_setzero_si512();
  uint64_t k = *key, pos = (uint64_t)j * kb;
  for (; fast >= 64 && j <= fast - 64 && (pos >> 3) + 64 <= len;
       j += 64, pos += 64 * (uint64_t)kb) {
    __m512i raw = _mm512_loadu_si512(q + (pos >> 3));
    __m512i lanes =
        _mm512_srl_epi64(_mm512_permutexvar_epi8(P, raw), _mm_cvtsi64_si128((long long)(pos & 7)));
    __m512i fields = _mm512_and_si512(_mm512_multishift_epi64_epi8(C, lanes), M);
    uint64_t sum = (uint64_t)_mm512_reduce_add_epi64(_mm512_sad_epu8(fields, Z)), k64;
    if (__builtin_add_overflow(k, sum, &k64) || k64 >= want) break;
    k = k64;
  }
  *key = k;
  return j;
}

/* dense_advance's eight-at-a-time loop for kb <= 7 (pairs [j, fast) lie
 * where an 8-byte load fits): returns the first chunk that reaches want. */
__attribute__((target("bmi2"))) static uint32_t chunks_pdep(const uint8_t *q, unsigned kb,
                                                            uint32_t j, uint32_t fast,
                                                            uint64_t *key, uint64_t want) {
  const uint64_t spread = 0x0101010101010101ull * (((uint64_t)1 << kb) - 1);
  const uint64_t lanes = 0x00FF00FF00FF00FFull;
  uint64_t k = *key, pos = (uint64_t)j * kb;
#define PDEP_BYTES(at) _pdep_u64(hs_load_u64le(q + ((at) >> 3)) >> ((at)&7), spread)
  for (; fast >= 16 && j <= fast - 16; j += 16, pos += 16 * (uint64_t)kb) { /* two loads a test */
    uint64_t b0 = PDEP_BYTES(pos), b1 = PDEP_BYTES(pos + 8 * (uint64_t)kb);
    uint64_t s = (b0 & lanes) + ((b0 >> 8) & lanes) + (b1 & lanes) + ((b1 >> 8) & lanes);
    uint64_t sum = (s * 0x0001000100010001ull) >> 48, k16; /* 16 x 127 fits the lanes */
    if (__builtin_add_overflow(k, sum, &k16) || k16 >= want) break;
    k = k16;
  }
  for (; fast >= 8 && j <= fast - 8; j += 8, pos += 8 * (uint64_t)kb) {
    uint64_t b = PDEP_BYTES(pos);
    uint64_t s = (b & lanes) + ((b >> 8) & lanes); /* four 16-bit sums <= 254 */
    uint64_t sum = (s * 0x0001000100010001ull) >> 48, k8;
    if (__builtin_add_overflow(k, sum, &k8) || k8 >= want) break;
    k = k8;
  }
#undef PDEP_BYTES
  *key = k;
  return j;
}
#endif

/* First i in [from, n) whose key (k's key first + i * stride) is >= the
 * probe (strict: >), n if none: exponential steps from `from`, then a
 * binary search of the last step. */
static uint32_t keys_gallop(const hs_sidx_keys *k, uint32_t first, uint32_t stride, uint32_t from,
                            uint32_t n, const hs_sidx_kview *probe, bool strict) {
  uint64_t lo = from, hi = from, step = 1;
  while (hi < n) {
    size_t kl;
    const uint8_t *kp = hs_sidx_keys_get(k, first + (uint32_t)hi * stride, &kl);
    int c = hs_sidx_key_cmp(kp, kl, probe->p, probe->n);
    if (!(c < 0 || (strict && c == 0))) break;
    lo = hi + 1;
    hi = hi + step < n ? hi + step : n;
    step *= 2;
  }
  /* the answer is in [lo, hi]: key hi (when < n) is past the probe */
  return (uint32_t)lo + hs_sidx_keys_lower_bound(k, first + (uint32_t)lo * stride, stride,
                                                 (uint32_t)(hi - lo), probe->p, probe->n, strict);
}

/* First i in [from, n) with ks[i] >= key (strict: >), n if none. */
static size_t probes_gallop(const hs_sidx_kview *ks, size_t from, size_t n, const uint8_t *key,
                            size_t key_len, bool strict) {
  size_t lo = from, hi = from, step = 1;
  while (hi < n) {
    int c = hs_sidx_key_cmp(ks[hi].p, ks[hi].n, key, key_len);
    if (!(c < 0 || (strict && c == 0))) break;
    lo = hi + 1;
    hi = n - hi > step ? hi + step : n;
    step *= 2;
  }
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = hs_sidx_key_cmp(ks[mid].p, ks[mid].n, key, key_len);
    if (c < 0 || (strict && c == 0))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Rows of a block's matching pairs, by position in the block. */
typedef struct rows_of {
  hs_sidx_column *c;
  const hs_sidx_block *r;
  const uint8_t *plain;     /* plain blocks: count u32 rows */
  const hs_sidx_packed *pk; /* packed blocks: ranks into the bitmap */
  const uint8_t *bitmap;
  bool have_view;
  hs_sidx_roaring_view view;
  roaring_bitmap_t *acc;
} rows_of;

static hs_status add_row(rows_of *o, uint32_t j, hs_error *err) {
  hs_sidx_column *c = o->c;
  uint32_t row;
  if (o->plain != NULL) {
    row = hs_load_u32le(o->plain + (size_t)j * 4);
  } else {
    if (!o->have_view) {
      hs_status st = hs_sidx_roaring_view_init(o->bitmap, o->r->bitmap_len, &o->view, err);
      if (st == HS_OK && o->view.card != o->r->count)
        st = hs_error_set(err, HS_ERR_CORRUPT, "bitmap holds %" PRIu64 " rows, not %u",
                          o->view.card, o->r->count);
      if (st != HS_OK) {
        hs_error_prefix(err, "index column %s block %u: ", c->name, o->r->index);
        return st;
      }
      o->have_view = true;
    }
    uint64_t k = hs_sidx_bits_at(o->pk->ranks, o->pk->ranks_len, j, o->pk->rank_bits);
    if (k >= o->r->count)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "index column %s: packed block %u rank %" PRIu64 " of %u rows", c->name,
                          o->r->index, k, o->r->count);
    hs_status st = hs_sidx_roaring_select(&o->view, k, &row, err);
    if (st != HS_OK) {
      hs_error_prefix(err, "index column %s block %u: ", c->name, o->r->index);
      return st;
    }
  }
  if (row >= c->h.row_count)
    return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: row %u past %u rows", c->name, row,
                        c->h.row_count);
  roaring_bitmap_add(o->acc, row);
  return HS_OK;
}

/* Probes ks[0..m) in a key table of the block's pairs (in key order). */
static hs_status search_table(rows_of *o, const hs_sidx_keys *keys, const hs_sidx_kview *ks,
                              size_t m, hs_error *err) {
  uint32_t n = keys->n, j = 0;
  for (size_t t = 0; t < m && j < n; t++) {
    j = keys_gallop(keys, 0, 1, j, n, &ks[t], false);
    for (; j < n; j++) {
      size_t kl;
      const uint8_t *kp = hs_sidx_keys_get(keys, j, &kl);
      if (hs_sidx_key_cmp(kp, kl, ks[t].p, ks[t].n) != 0) break;
      hs_status st = add_row(o, j, err);
      if (st != HS_OK) return st;
    }
  }
  return HS_OK;
}

/* Dense deltas: from pair j on, add each pair's delta to *key until it
 * reaches `want`; returns that pair (*key its key), or n. *wrap: a sum
 * past 2^64 (a damaged block). One unaligned load per delta while 8 bytes
 * fit, the checked bit reader for the last few. */
static uint32_t dense_advance(const hs_sidx_packed *pk, uint32_t j, uint32_t n, uint64_t *key,
                              uint64_t want, bool *wrap) {
  const unsigned kb = pk->key_bits;
  const uint8_t *q = pk->keys;
  const size_t len = pk->keys_len;
  uint64_t k = *key;
  if (kb == 0) return k >= want ? j : n;
  uint32_t fast = 0;
  if (kb <= 56 && len >= 8) {
    uint64_t f = (uint64_t)(len - 8) * 8 / kb + 1;
    fast = f < n ? (uint32_t)f : n;
  }
  const uint64_t mask = kb == 64 ? UINT64_MAX : ((uint64_t)1 << kb) - 1;
  bool chunked = false;
#ifdef PROBE_X86
  if (kb <= 7 && have_vbmi()) j = chunks_vbmi(q, len, kb, j, fast, &k, want);
  if (kb <= 7 && have_bmi2()) {
    j = chunks_pdep(q, kb, j, fast, &k, want);
    chunked = true;
  }
#endif
  uint64_t pos = (uint64_t)j * kb;
  /* Eight deltas summed at a time (independent loads and adds; 8 x 2^56
   * cannot wrap) while their sum stays below the probe. */
  for (; !chunked && fast >= 8 && j <= fast - 8; j += 8, pos += 8 * (uint64_t)kb) {
    uint64_t sum = 0, k8;
    for (unsigned u = 0; u < 8; u++) {
      uint64_t at = pos + u * (uint64_t)kb;
      sum += (hs_load_u64le(q + (at >> 3)) >> (at & 7)) & mask;
    }
    if (__builtin_add_overflow(k, sum, &k8) || k8 >= want) break;
    k = k8;
  }
  for (; j < fast; j++, pos += kb) {
    uint64_t d = (hs_load_u64le(q + (pos >> 3)) >> (pos & 7)) & mask;
    if (__builtin_add_overflow(k, d, &k)) break;
    if (k >= want) {
      *key = k;
      return j;
    }
  }
  if (j < fast) {
    *wrap = true;
    return j;
  }
  for (; j < n; j++) {
    if (__builtin_add_overflow(k, hs_sidx_bits_at(q, len, j, kb), &k)) {
      *wrap = true;
      return j;
    }
    if (k >= want) {
      *key = k;
      return j;
    }
  }
  *key = k;
  return n;
}

/* Sparse deltas (a mask bit per pair, then the non-zero deltas), as
 * dense_advance; *at counts the non-zero deltas before pair j. */
static uint32_t sparse_advance(const hs_sidx_packed *pk, uint32_t j, uint32_t n, uint64_t *key,
                               uint64_t want, uint64_t *at, bool *wrap) {
  uint64_t k = *key;
  for (; j < n; j++) {
    if (pk->mask[j / 8] >> (j % 8) & 1 &&
        __builtin_add_overflow(k, hs_sidx_bits_at(pk->keys, pk->keys_len, (*at)++, pk->key_bits),
                               &k)) {
      *wrap = true;
      return j;
    }
    if (k >= want) break;
  }
  *key = k;
  return j;
}

/* Probes ks[0..m) among a packed block's 8-byte keys: the deltas are
 * summed from the block minimum and the running key merged with the
 * probes, stopping after the last probe. */
static hs_status merge_deltas(rows_of *o, const uint8_t *min_key, const hs_sidx_kview *ks, size_t m,
                              hs_error *err) {
  const hs_sidx_packed *pk = o->pk;
  const uint32_t n = o->r->count;
  size_t t = 0;
  while (t < m && ks[t].n != 8) t++; /* an 8-byte key table: other lengths match nothing */
  if (t == m) return HS_OK;
  uint64_t want = hs_sidx_load_u64be(ks[t].p), key = hs_sidx_load_u64be(min_key), at = 0;
  bool wrap = false;
  for (uint32_t j = 0; j < n; j++) {
    j = pk->sparse ? sparse_advance(pk, j, n, &key, want, &at, &wrap)
                   : dense_advance(pk, j, n, &key, want, &wrap);
    if (wrap)
      return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: packed block %u key %u wraps",
                          o->c->name, o->r->index, j);
    if (j == n) break;
    while (key > want) { /* pair j is past this probe */
      do t++;
      while (t < m && ks[t].n != 8);
      if (t == m) return HS_OK;
      want = hs_sidx_load_u64be(ks[t].p);
    }
    if (key == want) {
      hs_status st = add_row(o, j, err);
      if (st != HS_OK) return st;
    }
  }
  return HS_OK;
}

/* Block b, whose key range [min, max] holds the probes ks[0..m) (m >= 1). */
static hs_status block_points(hs_sidx_column *c, uint32_t b, const hs_sidx_kview *ks, size_t m,
                              roaring_bitmap_t *acc, hs_error *err) {
  hs_sidx_block r = hs_sidx_block_at(c, b);
  size_t ln, lx;
  const uint8_t *mn = hs_sidx_keys_get(&c->keys, 2 * b, &ln);
  const uint8_t *mx = hs_sidx_keys_get(&c->keys, 2 * b + 1, &lx);
  const uint8_t *p;
  hs_status st;
  if ((c->h.flags & HS_SIDX_FLAG_LOSSY) || hs_sidx_key_cmp(mn, ln, mx, lx) == 0) {
    /* lossy: all its rows; one key (the probe): all its rows too */
    if ((st = hs_sidx_column_view(c, c->data_off + r.off, r.bitmap_len, &p, err)) != HS_OK)
      return st;
    return hs_sidx_load_or(c, p, r.bitmap_len, acc, err);
  }
  if ((st = hs_sidx_column_view(c, c->data_off + r.off, r.len, &p, err)) != HS_OK) return st;
  rows_of o = {.c = c, .r = &r, .bitmap = p, .acc = acc};
  hs_sidx_keys keys;
  if (!(c->h.flags & HS_SIDX_FLAG_PACKED)) {
    size_t keys_len = (size_t)(r.len - r.bitmap_len - (uint64_t)r.count * 4);
    o.plain = p + r.bitmap_len + keys_len;
    st = hs_sidx_keys_bind(&keys, p + r.bitmap_len, keys_len, r.count, c->h.key_width, err);
    if (st != HS_OK) {
      hs_error_prefix(err, "index column %s block %u: ", c->name, b);
      return st;
    }
    return search_table(&o, &keys, ks, m, err);
  }
  hs_sidx_packed pk;
  if ((st = hs_sidx_packed_parse(c, &r, p, &pk, err)) != HS_OK) return st;
  o.pk = &pk;
  if (c->h.key_width == 8) return merge_deltas(&o, mn, ks, m, err);
  st = hs_sidx_keys_bind(&keys, pk.keys, pk.keys_len, r.count, c->h.key_width, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "index column %s packed block %u: ", c->name, b);
    return st;
  }
  return search_table(&o, &keys, ks, m, err);
}

hs_status hs_sidx_sorted_points(hs_sidx_column *c, const hs_sidx_kview *ks, size_t n,
                                roaring_bitmap_t *acc, hs_error *err) {
  const uint32_t nb = c->h.n_entries;
  uint32_t b = 0;
  size_t i = 0;
  while (i < n && b < nb) {
    b = keys_gallop(&c->keys, 1, 2, b, nb, &ks[i], false); /* first block with max >= ks[i] */
    if (b >= nb) break;
    size_t ln, lx;
    const uint8_t *mn = hs_sidx_keys_get(&c->keys, 2 * b, &ln);
    const uint8_t *mx = hs_sidx_keys_get(&c->keys, 2 * b + 1, &lx);
    if (hs_sidx_key_cmp(ks[i].p, ks[i].n, mn, ln) < 0) { /* in no block: skip to this one */
      i = probes_gallop(ks, i, n, mn, ln, false);
      continue;
    }
    size_t j = probes_gallop(ks, i + 1, n, mx, lx, true); /* ks[i..j) lie in [min, max] */
    hs_status st = block_points(c, b, ks + i, j - i, acc, err);
    if (st != HS_OK) return st;
    /* a probe equal to this block's max may go on in the next block */
    i = hs_sidx_key_cmp(ks[j - 1].p, ks[j - 1].n, mx, lx) == 0 ? j - 1 : j;
    b++;
  }
  return HS_OK;
}
