/*
 * vidx_allow.c — the allow-set of a filtered search as a flat bitset over
 * the data file's rows (README.md "Filtered search"): what the graph walk
 * tests (one bit per scored node instead of a roaring lookup), what a
 * caller may pass directly (hs_vidx_search_bits), and the bitset of the
 * indexed rows that counts and scans it.
 *
 * A roaring allow-set is turned into the bitset through CRoaring's portable
 * serialization (the documented RoaringFormatSpec, the same in every
 * CRoaring version), decoded container by container: bitset containers are
 * copied, array and run containers set their values. That costs about the
 * bitmap's serialized size twice, not one call per allowed row.
 *
 * The bitsets cover the rows up to the last indexed one (bit_rows), not
 * the file's row_count: every test ANDs with indexed_bits, so words past
 * it are never read, and a header claiming 4 billion rows over a few
 * indexed ones costs no more than its indexed rows.
 *
 * Ownership: the bitsets live in the index (indexed_bits, built at open) or
 * in the per-query scratch (bits, ser); nothing here outlives a search.
 */
#include <string.h>

#include "vidx_internal.h"

hs_status hs_vidx_indexed_bits_init(hs_vidx *x, hs_error *err) {
  uint32_t last = 0;
  for (uint32_t i = 0; i < x->n; i++)
    if (x->rows[i] >= last) last = x->rows[i];
  x->bit_rows = x->n > 0 ? last + 1 : 0; /* rows[i] < row_count <= UINT32_MAX */
  x->row_words = (uint32_t)(((uint64_t)x->bit_rows + 63) / 64);
  x->indexed_bits = hs_calloc(x->row_words ? x->row_words : 1, sizeof *x->indexed_bits);
  if (x->indexed_bits == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "vidx: out of memory for the indexed-row bitset");
  for (uint32_t i = 0; i < x->n; i++) x->indexed_bits[x->rows[i] >> 6] |= 1ull << (x->rows[i] & 63);
  return HS_OK;
}

static uint64_t count_and(const uint64_t *a, const uint64_t *b, size_t w) {
  uint64_t c = 0;
  for (size_t i = 0; i < w; i++) c += (uint64_t)__builtin_popcountll(a[i] & b[i]);
  return c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The same with the POPCNT instruction: the portable build's
 * __builtin_popcountll is a libgcc call, ~5 us over a 200K-row set (a
 * filtered search counts its allow-set once). */
__attribute__((target("popcnt"))) static uint64_t count_and_popcnt(const uint64_t *a,
                                                                   const uint64_t *b, size_t w) {
  uint64_t c = 0;
  for (size_t i = 0; i < w; i++) c += (uint64_t)__builtin_popcountll(a[i] & b[i]);
  return c;
}
#endif

uint64_t hs_vidx_bits_count(const hs_vidx *x, const uint64_t *words, size_t nwords) {
  size_t w = nwords < x->row_words ? nwords : x->row_words;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_supports("popcnt")) return count_and_popcnt(words, x->indexed_bits, w);
#endif
  return count_and(words, x->indexed_bits, w);
}

static bool scratch_bits(const hs_vidx *x, hs_vidx_scratch *s) {
  if (s->bits != NULL) return true;
  s->bits = hs_malloc((size_t)(x->row_words ? x->row_words : 1) * sizeof *s->bits);
  return s->bits != NULL;
}

const uint64_t *hs_vidx_bits_pad(const hs_vidx *x, hs_vidx_scratch *s, const uint64_t *words,
                                 size_t nwords) {
  if (nwords >= x->row_words) return words;
  if (!scratch_bits(x, s)) return NULL;
  memcpy(s->bits, words, nwords * sizeof *words);
  memset(s->bits + nwords, 0, (x->row_words - nwords) * sizeof *words);
  return s->bits;
}

static inline uint32_t rd16(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}
static inline uint32_t rd32(const uint8_t *p) {
  return rd16(p) | rd16(p + 2) << 16;
}

/* Set rows [lo, hi] (inclusive) of `bits`, clipped to the rows it covers. */
static void set_range(uint64_t *bits, uint32_t bit_rows, uint64_t lo, uint64_t hi) {
  if (lo >= bit_rows) return;
  if (hi >= bit_rows) hi = bit_rows - 1;
  uint32_t a = (uint32_t)(lo >> 6), b = (uint32_t)(hi >> 6);
  uint64_t ma = ~0ull << (lo & 63), mb = ~0ull >> (63 - (hi & 63));
  if (a == b) {
    bits[a] |= ma & mb;
    return;
  }
  bits[a] |= ma;
  for (uint32_t i = a + 1; i < b; i++) bits[i] = ~0ull;
  bits[b] |= mb;
}

const uint64_t *hs_vidx_bits_from_roaring(const hs_vidx *x, hs_vidx_scratch *s,
                                          const roaring_bitmap_t *r) {
  if (!scratch_bits(x, s)) return NULL;
  size_t need = roaring_bitmap_portable_size_in_bytes(r);
  if (need > s->ser_cap) {
    uint8_t *p = hs_realloc(s->ser, need);
    if (p == NULL) return NULL;
    s->ser = p;
    s->ser_cap = need;
  }
  size_t len = roaring_bitmap_portable_serialize(r, (char *)s->ser);
  uint64_t *bits = s->bits;
  memset(bits, 0, (size_t)x->row_words * sizeof *bits);
  const uint8_t *p = s->ser, *end = s->ser + len;
  /* RoaringFormatSpec: cookie 12347 (run containers present; size in the
   * high half, then a run bitset) or 12346 (then a u32 size); key and
   * cardinality - 1 per container; offsets (12346, or 12347 with at least 4
   * containers); then the containers. */
  if (len < 4) return bits;
  uint32_t cookie = rd32(p), size;
  const uint8_t *runs = NULL;
  p += 4;
  if ((cookie & 0xFFFF) == 12347) {
    size = (cookie >> 16) + 1;
    runs = p;
    p += (size + 7) / 8;
  } else if (cookie == 12346) {
    if (end - p < 4) return bits;
    size = rd32(p);
    p += 4;
  } else {
    return NULL; /* not a format this decoder knows: the caller keeps roaring */
  }
  const uint8_t *desc = p;
  p += (size_t)size * 4;
  if (runs == NULL || size >= 4) p += (size_t)size * 4; /* offsets */
  for (uint32_t i = 0; i < size && p <= end; i++) {
    uint32_t base = rd16(desc + 4 * i) << 16, card = rd16(desc + 4 * i + 2) + 1;
    bool run = runs != NULL && (runs[i / 8] >> (i % 8)) & 1;
    if (run) {
      if (end - p < 2) return NULL;
      uint32_t nr = rd16(p);
      p += 2;
      if ((size_t)(end - p) < (size_t)nr * 4) return NULL;
      for (uint32_t j = 0; j < nr; j++, p += 4)
        set_range(bits, x->bit_rows, (uint64_t)base + rd16(p),
                  (uint64_t)base + rd16(p) + rd16(p + 2));
    } else if (card > 4096) {
      if ((size_t)(end - p) < 8192) return NULL;
      if (base < x->bit_rows) {
        uint32_t w0 = base >> 6, nw = x->row_words - w0 < 1024 ? x->row_words - w0 : 1024;
        memcpy(bits + w0, p, (size_t)nw * 8); /* little-endian words, as the spec's */
      }
      p += 8192;
    } else {
      if ((size_t)(end - p) < (size_t)card * 2) return NULL;
      for (uint32_t j = 0; j < card; j++, p += 2) {
        uint32_t v = base + rd16(p);
        if (v < x->bit_rows) bits[v >> 6] |= 1ull << (v & 63);
      }
    }
  }
  /* a copied bitset container may carry rows past bit_rows in its last word */
  if (x->bit_rows & 63) bits[x->row_words - 1] &= ~0ull >> (64 - (x->bit_rows & 63));
  return bits;
}
