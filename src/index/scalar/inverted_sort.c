/*
 * inverted_sort.c — the scalar index builder's keys and their sort
 * (sidx_build.h). Numeric keys are native uint64 values sorted by an MSD
 * radix sort over only the bits in which they differ (max - min); bytes of
 * width 1 (booleans) by a counting sort; other byte keys by grouping equal
 * values in a hash table while they repeat (then only one key per group
 * is compared), else a merge sort. Every sort is stable, so equal keys keep
 * row order: the pairs end up in (key, row) order.
 */
#include "sidx_build.h"

hs_status hs_sidx_keyset_init(hs_sidx_keyset *ks, uint16_t width, uint64_t total, hs_error *err) {
  memset(ks, 0, sizeof *ks);
  ks->width = width;
  hs_buf_init(&ks->keys);
  ks->rows = hs_malloc((size_t)(total + 1) * sizeof *ks->rows);
  bool ok = ks->rows != NULL;
  if (width == 8)
    ok = ok && (ks->k64 = hs_malloc((size_t)(total + 1) * sizeof *ks->k64)) != NULL;
  else if (width == 0)
    ok = ok && (ks->offs = hs_calloc((size_t)total + 2, sizeof *ks->offs)) != NULL;
  else
    ok = ok && hs_buf_reserve(&ks->keys, (size_t)total * width + 1);
  if (!ok) {
    hs_sidx_keyset_free(ks);
    return hs_error_set(err, HS_ERR_NOMEM, "scalar index: keys of %" PRIu64 " rows", total);
  }
  return HS_OK;
}

void hs_sidx_keyset_free(hs_sidx_keyset *ks) {
  hs_buf_free(&ks->keys);
  hs_free(ks->offs);
  hs_free(ks->k64);
  hs_free(ks->rows);
  memset(ks, 0, sizeof *ks);
}

static hs_status keyset_push(hs_sidx_keyset *ks, const uint8_t *key, size_t len, uint32_t row,
                             hs_error *err) {
  if (!hs_buf_append(&ks->keys, key, len))
    return hs_error_set(err, HS_ERR_NOMEM, "scalar index: key bytes");
  ks->rows[ks->n] = row;
  if (ks->width == 0) ks->offs[ks->n + 1] = ks->keys.len;
  ks->n++;
  return HS_OK;
}

/* Width-8 keys of one chunk: one tight loop per physical type. */
#define HS_SIDX_FILL(EXPR)                                    \
  for (int64_t i = 0; i < a->length; i++) {                   \
    int64_t j = i + a->offset;                                \
    if (valid != NULL && !((valid[j >> 3] >> (j & 7)) & 1)) { \
      roaring_bitmap_add(nulls, base + (uint32_t)i);          \
      continue;                                               \
    }                                                         \
    k[n] = (EXPR);                                            \
    r[n++] = base + (uint32_t)i;                              \
  }

static void add_chunk_u64(hs_sidx_keyset *ks, int bw, hs_sidx_key_type kt,
                          const struct ArrowArray *a, uint32_t base, roaring_bitmap_t *nulls) {
  const uint8_t *valid = a->n_buffers > 0 && a->null_count != 0 ? a->buffers[0] : NULL;
  const void *vals = a->buffers[1];
  uint64_t *k = ks->k64;
  uint32_t *r = ks->rows, n = ks->n;
  if (kt == HS_SIDX_KT_FIXED) { /* 8-byte fixed binary: memcmp order is big-endian order */
    HS_SIDX_FILL(hs_sidx_load_u64be((const uint8_t *)vals + j * 8))
  } else if (kt == HS_SIDX_KT_FLOAT) {
    if (bw == 4) {
      HS_SIDX_FILL(hs_sidx_float_bits((double)((const float *)vals)[j]))
    } else {
      HS_SIDX_FILL(hs_sidx_float_bits(((const double *)vals)[j]))
    }
  } else if (kt == HS_SIDX_KT_UINT) {
    if (bw == 1) {
      HS_SIDX_FILL((uint64_t)((const uint8_t *)vals)[j])
    } else if (bw == 2) {
      HS_SIDX_FILL((uint64_t)((const uint16_t *)vals)[j])
    } else if (bw == 4) {
      HS_SIDX_FILL((uint64_t)((const uint32_t *)vals)[j])
    } else {
      HS_SIDX_FILL(((const uint64_t *)vals)[j])
    }
  } else {
    if (bw == 1) {
      HS_SIDX_FILL(hs_sidx_int_bits(((const int8_t *)vals)[j]))
    } else if (bw == 2) {
      HS_SIDX_FILL(hs_sidx_int_bits(((const int16_t *)vals)[j]))
    } else if (bw == 4) {
      HS_SIDX_FILL(hs_sidx_int_bits(((const int32_t *)vals)[j]))
    } else {
      HS_SIDX_FILL(hs_sidx_int_bits(((const int64_t *)vals)[j]))
    }
  }
  ks->n = n;
}
#undef HS_SIDX_FILL

hs_status hs_sidx_keyset_add_chunk(hs_sidx_keyset *ks, const hs_arrow_type *t, hs_sidx_key_type kt,
                                   const struct ArrowArray *a, uint32_t base,
                                   roaring_bitmap_t *nulls, hs_error *err) {
  int bw = hs_arrow_type_byte_width(t);
  if (ks->width == 8) {
    add_chunk_u64(ks, bw, kt, a, base, nulls);
    return HS_OK;
  }
  const uint8_t *vals = a->n_buffers > 1 ? (const uint8_t *)a->buffers[1] : NULL;
  const uint8_t *data = a->n_buffers > 2 ? (const uint8_t *)a->buffers[2] : NULL;
  bool large = t->id == HS_AT_LARGE_STRING || t->id == HS_AT_LARGE_BINARY;
  if (kt == HS_SIDX_KT_BYTES && vals != NULL && a->length > 0) {
    /* The chunk's value bytes at most: one reservation instead of doublings. */
    int64_t o0 = a->offset, o1 = a->offset + a->length, s, e;
    s = large ? ((const int64_t *)vals)[o0] : ((const int32_t *)vals)[o0];
    e = large ? ((const int64_t *)vals)[o1] : ((const int32_t *)vals)[o1];
    if (s >= 0 && e > s && !hs_buf_reserve(&ks->keys, (size_t)(e - s)))
      return hs_error_set(err, HS_ERR_NOMEM, "scalar index: %" PRId64 " key bytes", e - s);
  }
  uint8_t key[16];
  for (int64_t i = 0; i < a->length; i++) {
    uint32_t row = base + (uint32_t)i;
    if (!hs_arrow_is_valid(a, i)) {
      roaring_bitmap_add(nulls, row);
      continue;
    }
    int64_t j = i + a->offset;
    const uint8_t *kp = key;
    size_t kl;
    switch (kt) {
    case HS_SIDX_KT_BOOL:
      key[0] = (uint8_t)((vals[j >> 3] >> (j & 7)) & 1);
      kl = 1;
      break;
    case HS_SIDX_KT_DECIMAL: {
      const uint8_t *le = vals + j * 16; /* little-endian two's complement */
      for (int b = 0; b < 16; b++) key[b] = le[15 - b];
      key[0] ^= 0x80;
      kl = 16;
      break;
    }
    case HS_SIDX_KT_FIXED:
      kp = vals + j * t->width;
      kl = (size_t)t->width;
      break;
    case HS_SIDX_KT_BYTES: {
      int64_t s, e;
      if (large) {
        s = ((const int64_t *)vals)[j];
        e = ((const int64_t *)vals)[j + 1];
      } else {
        s = ((const int32_t *)vals)[j];
        e = ((const int32_t *)vals)[j + 1];
      }
      if (s < 0 || e < s || (e > s && data == NULL))
        return hs_error_set(err, HS_ERR_INVALID_ARG, "scalar index: bad offsets at row %u", row);
      kp = e > s ? data + s : key;
      kl = (size_t)(e - s);
      break;
    }
    default:
      return hs_error_set(err, HS_ERR_INTERNAL, "scalar index: key type %d of width %u", (int)kt,
                          ks->width);
    }
    hs_status st = keyset_push(ks, kp, kl, row, err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

/* ------------------------------------------------------------- sorting */

static int bytes_cmp(const hs_sidx_keyset *ks, uint32_t a, uint32_t b) {
  size_t na, nb;
  const uint8_t *pa = hs_sidx_keyset_get(ks, a, &na), *pb = hs_sidx_keyset_get(ks, b, &nb);
  return hs_sidx_key_cmp(pa, na, pb, nb);
}

/* Stable merge sort of perm[0..n) by byte key. */
static void sort_merge(const hs_sidx_keyset *ks, uint32_t *perm, uint32_t *tmp, uint32_t n) {
  for (uint32_t w = 1; w < n; w *= 2) {
    for (uint32_t lo = 0; lo < n; lo += 2 * w) {
      uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      uint32_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        tmp[k++] = bytes_cmp(ks, perm[j], perm[i]) < 0 ? perm[j++] : perm[i++];
      while (i < mid) tmp[k++] = perm[i++];
      while (j < hi) tmp[k++] = perm[j++];
    }
    memcpy(perm, tmp, (size_t)n * sizeof *perm);
    if (w > n / 2) break;
  }
}

/* Byte keys with few distinct values: group equal keys with a hash table,
 * sort one representative per group, then place the pairs by a stable
 * counting sort over the groups' ranks: O(n + d log d) comparisons. Sets
 * perm and s->gstart; returns false (nothing set) when more than
 * max_distinct values show up or memory runs out. */
static bool sort_groups(const hs_sidx_keyset *ks, uint32_t *perm, uint32_t *tmp,
                        uint32_t max_distinct, hs_sidx_sorted *s) {
  uint32_t n = ks->n, cap = 16;
  while (cap < 2 * (uint64_t)max_distinct + 2) cap *= 2;
  uint32_t *slot = hs_calloc(cap, sizeof *slot); /* group + 1; 0: empty */
  uint32_t *group = hs_malloc(((size_t)n + 1) * sizeof *group);
  uint32_t *rep = hs_malloc(((size_t)max_distinct + 1) * sizeof *rep);
  uint32_t *start = hs_calloc((size_t)max_distinct + 2, sizeof *start);
  bool ok = slot != NULL && group != NULL && rep != NULL && start != NULL;
  uint32_t d = 0;
  for (uint32_t i = 0; ok && i < n; i++) {
    size_t len;
    const uint8_t *k = hs_sidx_keyset_get(ks, i, &len);
    uint32_t h = hs_murmur3_x86_32(k, len, 0x5eed) & (cap - 1);
    for (;; h = (h + 1) & (cap - 1)) {
      if (slot[h] == 0) {
        if (d == max_distinct) {
          ok = false;
          break;
        }
        rep[d] = i;
        slot[h] = ++d;
        group[i] = d - 1;
        break;
      }
      size_t rl;
      const uint8_t *rk = hs_sidx_keyset_get(ks, rep[slot[h] - 1], &rl);
      if (rl == len && memcmp(rk, k, len) == 0) {
        group[i] = slot[h] - 1;
        break;
      }
    }
  }
  if (ok) ok = (s->gstart = hs_malloc(((size_t)d + 1) * sizeof *s->gstart)) != NULL;
  if (ok) {
    sort_merge(ks, rep, tmp, d); /* the distinct keys, then each group's rank */
    uint32_t *rank = slot;       /* reuse: cap >= d */
    for (uint32_t r = 0; r < d; r++) rank[group[rep[r]]] = r;
    for (uint32_t i = 0; i < n; i++) group[i] = rank[group[i]];
    for (uint32_t i = 0; i < n; i++) start[group[i] + 1]++;
    for (uint32_t r = 0; r < d; r++) start[r + 1] += start[r];
    memcpy(s->gstart, start, ((size_t)d + 1) * sizeof *start);
    for (uint32_t i = 0; i < n; i++) perm[start[group[i]]++] = i; /* stable: row order */
    s->distinct = d;
  }
  hs_free(slot);
  hs_free(group);
  hs_free(rep);
  hs_free(start);
  return ok;
}

/* One-byte keys (booleans): a counting sort. */
static bool sort_bytes1(const hs_sidx_keyset *ks, uint32_t *perm, hs_sidx_sorted *s) {
  uint32_t count[257] = {0}, d = 0;
  const uint8_t *k = ks->keys.data;
  for (uint32_t i = 0; i < ks->n; i++) count[k[i] + 1]++;
  for (int v = 0; v < 256; v++) d += count[v + 1] != 0;
  if ((s->gstart = hs_malloc(((size_t)d + 1) * sizeof *s->gstart)) == NULL) return false;
  d = 0;
  for (int v = 0; v < 256; v++) {
    if (count[v + 1] != 0) s->gstart[d++] = count[v];
    count[v + 1] += count[v];
  }
  s->gstart[d] = ks->n;
  s->distinct = d;
  for (uint32_t i = 0; i < ks->n; i++) perm[count[k[i]]++] = i;
  return true;
}

/* Numeric keys: an MSD radix sort of (key, index) pairs. Each level
 * deals the pairs (stably) into up to 2^11 buckets by the top bits in
 * which their keys differ (max - min), then sorts each bucket the same way
 * — after the first level a bucket is small and in cache — with insertion
 * sort below 24 pairs. Buckets whose keys are all equal are done (already
 * in index order: every deal is stable). */
typedef struct kpair {
  uint64_t key;
  uint32_t idx;
} kpair;

static void sort_pairs(kpair *a, kpair *tmp, uint32_t n) {
  if (n < 24) {
    for (uint32_t i = 1; i < n; i++) {
      kpair x = a[i];
      uint32_t j = i;
      for (; j > 0 && a[j - 1].key > x.key; j--) a[j] = a[j - 1];
      a[j] = x;
    }
    return;
  }
  uint64_t mn = a[0].key, mx = a[0].key;
  for (uint32_t i = 1; i < n; i++) {
    mn = a[i].key < mn ? a[i].key : mn;
    mx = a[i].key > mx ? a[i].key : mx;
  }
  if (mn == mx) return;
  unsigned bits = hs_sidx_bit_width(mx - mn), db = hs_sidx_bit_width(n) - 2;
  if (db > 11) db = 11;
  if (db > bits) db = bits;
  unsigned shift = bits - db;
  uint32_t count[(1u << 11) + 1];
  memset(count, 0, ((size_t)(1u << db) + 1) * sizeof *count);
  for (uint32_t i = 0; i < n; i++) count[((a[i].key - mn) >> shift) + 1]++;
  for (uint32_t v = 0; v < (1u << db); v++) count[v + 1] += count[v];
  for (uint32_t i = 0; i < n; i++) tmp[count[(a[i].key - mn) >> shift]++] = a[i];
  memcpy(a, tmp, (size_t)n * sizeof *a);
  if (shift == 0) return;                             /* each bucket holds one key */
  for (uint32_t v = 0, lo = 0; v < (1u << db); v++) { /* count[v]: end of bucket v */
    uint32_t hi = count[v];
    if (hi - lo > 1) sort_pairs(a + lo, tmp + lo, hi - lo);
    lo = hi;
  }
}

/* The same MSD sort of plain uint64 values (the whole value is the key). */
static void sort_u64(uint64_t *a, uint64_t *tmp, uint32_t n) {
  if (n < 24) {
    for (uint32_t i = 1; i < n; i++) {
      uint64_t x = a[i];
      uint32_t j = i;
      for (; j > 0 && a[j - 1] > x; j--) a[j] = a[j - 1];
      a[j] = x;
    }
    return;
  }
  uint64_t mn = a[0], mx = a[0];
  for (uint32_t i = 1; i < n; i++) {
    mn = a[i] < mn ? a[i] : mn;
    mx = a[i] > mx ? a[i] : mx;
  }
  if (mn == mx) return;
  unsigned bits = hs_sidx_bit_width(mx - mn), db = hs_sidx_bit_width(n) - 2;
  if (db > 11) db = 11;
  if (db > bits) db = bits;
  unsigned shift = bits - db;
  uint32_t count[(1u << 11) + 1];
  memset(count, 0, ((size_t)(1u << db) + 1) * sizeof *count);
  for (uint32_t i = 0; i < n; i++) count[((a[i] - mn) >> shift) + 1]++;
  for (uint32_t v = 0; v < (1u << db); v++) count[v + 1] += count[v];
  for (uint32_t i = 0; i < n; i++) tmp[count[(a[i] - mn) >> shift]++] = a[i];
  memcpy(a, tmp, (size_t)n * sizeof *a);
  if (shift == 0) return;
  for (uint32_t v = 0, lo = 0; v < (1u << db); v++) {
    uint32_t hi = count[v];
    if (hi - lo > 1) sort_u64(a + lo, tmp + lo, hi - lo);
    lo = hi;
  }
}

/* Keys whose spread (max - min) and index fit in 64 bits together (ids,
 * timestamps) are sorted as single (key - min) << ib | index words: half
 * the bytes moved, and the word order is (key, index) order. Others as
 * (key, index) pairs. */
static bool sort_radix(const hs_sidx_keyset *ks, uint32_t *perm, hs_sidx_sorted *s) {
  uint32_t n = ks->n;
  const uint64_t *k = ks->k64;
  uint64_t mn = UINT64_MAX, mx = 0;
  for (uint32_t i = 0; i < n; i++) {
    mn = k[i] < mn ? k[i] : mn;
    mx = k[i] > mx ? k[i] : mx;
  }
  unsigned ib = n > 1 ? hs_sidx_bit_width(n - 1) : 1;
  if (n > 0 && hs_sidx_bit_width(mx - mn) + ib <= 64) {
    uint64_t *a = hs_malloc(((size_t)n + 1) * sizeof *a),
             *b = hs_malloc(((size_t)n + 1) * sizeof *b);
    if (a == NULL || b == NULL) {
      hs_free(a);
      hs_free(b);
      return false;
    }
    for (uint32_t i = 0; i < n; i++) a[i] = (k[i] - mn) << ib | i;
    sort_u64(a, b, n);
    uint64_t mask = ((uint64_t)1 << ib) - 1;
    for (uint32_t i = 0; i < n; i++) {
      perm[i] = (uint32_t)(a[i] & mask);
      s->sk[i] = (a[i] >> ib) + mn;
    }
    hs_free(a);
    hs_free(b);
    return true;
  }
  kpair *a = hs_malloc(((size_t)n + 1) * sizeof *a), *b = hs_malloc(((size_t)n + 1) * sizeof *b);
  if (a == NULL || b == NULL) {
    hs_free(a);
    hs_free(b);
    return false;
  }
  for (uint32_t i = 0; i < n; i++) {
    a[i].key = k[i];
    a[i].idx = i;
  }
  sort_pairs(a, b, n);
  for (uint32_t i = 0; i < n; i++) {
    perm[i] = a[i].idx;
    s->sk[i] = a[i].key;
  }
  hs_free(a);
  hs_free(b);
  return true;
}

hs_status hs_sidx_sorted_groups(const hs_sidx_keyset *ks, hs_sidx_sorted *s, hs_error *err) {
  if (s->gstart != NULL) return HS_OK;
  if ((s->gstart = hs_malloc(((size_t)s->distinct + 1) * sizeof *s->gstart)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "scalar index: %u values", s->distinct);
  uint32_t d = 0;
  for (uint32_t p = 0; p < ks->n; p++)
    if (p == 0 || (ks->width == 8 ? s->sk[p] != s->sk[p - 1]
                                  : bytes_cmp(ks, s->perm[p - 1], s->perm[p]) != 0))
      s->gstart[d++] = p;
  s->gstart[d] = ks->n;
  return HS_OK;
}

void hs_sidx_sorted_free(hs_sidx_sorted *s) {
  hs_free(s->perm);
  hs_free(s->sk);
  hs_free(s->gstart);
  memset(s, 0, sizeof *s);
}

hs_status hs_sidx_keyset_sort(const hs_sidx_keyset *ks, hs_sidx_sorted *s, hs_error *err) {
  memset(s, 0, sizeof *s);
  uint32_t n = ks->n, *tmp = NULL;
  bool ok = (s->perm = hs_malloc(((size_t)n + 1) * sizeof *s->perm)) != NULL;
  if (ok && ks->width == 8) {
    ok = (s->sk = hs_malloc(((size_t)n + 1) * sizeof *s->sk)) != NULL && sort_radix(ks, s->perm, s);
  } else if (ok && ks->width == 1) {
    ok = sort_bytes1(ks, s->perm, s);
  } else if (ok) {
    /* Grouping while values repeat: at most one distinct value per 16
     * rows (the DICT threshold), else a merge sort of every pair. */
    ok = (tmp = hs_malloc(((size_t)n + 1) * sizeof *tmp)) != NULL;
    if (ok && !sort_groups(ks, s->perm, tmp, n / 16 + 64, s)) {
      for (uint32_t i = 0; i < n; i++) s->perm[i] = i;
      sort_merge(ks, s->perm, tmp, n);
    }
  }
  hs_free(tmp);
  if (ok && s->gstart == NULL) { /* count the runs of equal keys (gstart: on demand) */
    for (uint32_t p = 0; p < n; p++)
      s->distinct += p == 0 || (ks->width == 8 ? s->sk[p] != s->sk[p - 1]
                                               : bytes_cmp(ks, s->perm[p - 1], s->perm[p]) != 0);
  }
  if (!ok) {
    hs_sidx_sorted_free(s);
    return hs_error_set(err, HS_ERR_NOMEM, "scalar index: sorting %u keys", n);
  }
  return HS_OK;
}
