/*
 * sidx_build.h — private to the scalar index builder (inverted_build.c,
 * inverted_sort.c): a column's non-null values as order-preserving keys
 * with their rows, and their sort into (key, row) order.
 *
 * Memory: keys (8 bytes per row for numeric columns, the value bytes plus
 * an 8-byte offset for strings), rows (4), and while sorting about 16 more
 * bytes per row; all owned by the structs and freed by their _free calls.
 */
#ifndef HS_INDEX_SIDX_BUILD_H
#define HS_INDEX_SIDX_BUILD_H

#include "sidx_internal.h"

/* A column's non-null values in row order. Width 8 (every numeric type):
 * `k64` holds the keys as native integers (the big-endian key's value), so
 * sorting and delta coding never touch bytes; other widths: `keys` holds
 * the key bytes (width 0: variable, with n + 1 offsets in `offs`). */
typedef struct hs_sidx_keyset {
  uint16_t width;
  hs_buf keys;
  uint64_t *offs;
  uint64_t *k64;
  uint32_t *rows; /* ascending */
  uint32_t n;
} hs_sidx_keyset;

hs_status hs_sidx_keyset_init(hs_sidx_keyset *ks, uint16_t width, uint64_t total, hs_error *err);
void hs_sidx_keyset_free(hs_sidx_keyset *ks);
/* Encode the non-null values of one chunk (rows counted from `base`); the
 * rows of NULLs go to `nulls`. */
hs_status hs_sidx_keyset_add_chunk(hs_sidx_keyset *ks, const hs_arrow_type *t, hs_sidx_key_type kt,
                                   const struct ArrowArray *a, uint32_t base,
                                   roaring_bitmap_t *nulls, hs_error *err);

/* Key i's bytes (width != 8). */
static inline const uint8_t *hs_sidx_keyset_get(const hs_sidx_keyset *ks, uint32_t i, size_t *len) {
  if (ks->width != 0) {
    *len = ks->width;
    return ks->keys.data + (size_t)i * ks->width;
  }
  *len = (size_t)(ks->offs[i + 1] - ks->offs[i]);
  /* Only empty keys: no key bytes at all (data NULL; NULL + 0 is UB). */
  return ks->keys.data != NULL ? ks->keys.data + ks->offs[i] : (const uint8_t *)"";
}

/* The keys in (key, row) order: perm[p] is the key index at sorted
 * position p; for width 8 sk[p] = k64[perm[p]]; `distinct` runs of equal
 * keys, [gstart[g], gstart[g + 1]) (gstart may be NULL until
 * hs_sidx_sorted_groups). */
typedef struct hs_sidx_sorted {
  uint32_t *perm;
  uint64_t *sk;
  uint32_t *gstart;
  uint32_t distinct;
} hs_sidx_sorted;

hs_status hs_sidx_keyset_sort(const hs_sidx_keyset *ks, hs_sidx_sorted *out, hs_error *err);
/* Fill s->gstart if it is NULL. */
hs_status hs_sidx_sorted_groups(const hs_sidx_keyset *ks, hs_sidx_sorted *s, hs_error *err);
void hs_sidx_sorted_free(hs_sidx_sorted *s);

#endif /* HS_INDEX_SIDX_BUILD_H */
