/*
 * inverted_validate.c — hs_sidx_file_validate: checks every byte of every
 * inverted-index blob of a file, beyond what opening a column checks.
 *
 * Invariants (README.md, "Invariants"): keys are canonical for their type
 * (booleans 0/1; floats never -0.0 and only the one NaN); DICT bitmaps are
 * non-empty; SORTED blocks hold their keys in (key, row) order, their first
 * and last keys are the directory's min and max, their bitmap is exactly
 * their rows; and the value bitmaps (or block rows) and the null bitmap
 * partition [0, row_count): every row exactly once.
 */
#include "sidx_internal.h"

static bool key_canonical(const hs_sidx_header *h, const uint8_t *p, size_t n) {
  if (h->key_type == HS_SIDX_KT_BOOL) return n == 1 && p[0] <= 1;
  if (h->key_type == HS_SIDX_KT_FLOAT) {
    uint64_t u = hs_sidx_load_u64be(p), bits = (u >> 63) ? u & ~((uint64_t)1 << 63) : ~u;
    double d;
    memcpy(&d, &bits, 8);
    return hs_sidx_float_bits(d) == u;
  }
  return true;
}

/* Add rows of r to `seen`, failing when one was already there. */
static hs_status claim_bitmap(const hs_sidx_column *c, roaring_bitmap_t *seen,
                              const roaring_bitmap_t *r, const char *what, uint32_t i,
                              hs_error *err) {
  if (roaring_bitmap_intersect(seen, r))
    return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: %s %u claims a row twice", c->name,
                        what, i);
  roaring_bitmap_or_inplace(seen, r);
  return HS_OK;
}

static hs_status validate_dict(hs_sidx_column *c, roaring_bitmap_t *seen, hs_error *err) {
  const uint8_t *p;
  hs_status st = hs_sidx_column_view(c, c->data_off, c->h.data_len, &p, err);
  for (uint32_t i = 0; i < c->h.n_entries && st == HS_OK; i++) {
    size_t kl;
    const uint8_t *k = hs_sidx_keys_get(&c->keys, i, &kl);
    if (!key_canonical(&c->h, k, kl))
      return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: value %u is not canonical",
                          c->name, i);
    uint64_t s = hs_load_u64le(c->dir + (size_t)i * 8),
             e = hs_load_u64le(c->dir + (size_t)i * 8 + 8);
    roaring_bitmap_t *r;
    if ((st = hs_sidx_roaring_load(p + s, (size_t)(e - s), c->h.row_count, &r, err)) != HS_OK) {
      hs_error_prefix(err, "index column %s value %u at data byte %" PRIu64 ": ", c->name, i, s);
      return st;
    }
    if (roaring_bitmap_is_empty(r))
      st = hs_error_set(err, HS_ERR_CORRUPT, "index column %s: value %u has no rows", c->name, i);
    else
      st = claim_bitmap(c, seen, r, "value", i, err);
    roaring_bitmap_free(r);
  }
  return st;
}

/* A lossy block: its bitmap (exactly the block's bytes) holds `count` rows,
 * none claimed before; its min and max are canonical (their order was
 * checked at open). The keys of its rows are not stored, so not checked. */
static hs_status validate_lossy_block(hs_sidx_column *c, uint32_t b, roaring_bitmap_t *seen,
                                      hs_error *err) {
  hs_sidx_block r = hs_sidx_block_at(c, b);
  const uint8_t *p;
  hs_status st = hs_sidx_column_view(c, c->data_off + r.off, r.len, &p, err);
  if (st != HS_OK) return st;
  if (r.bitmap_len != r.len)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "index column %s: lossy block %u has %" PRIu64 " bytes past its bitmap",
                        c->name, b, r.len - r.bitmap_len);
  for (uint32_t k = 0; k < 2; k++) {
    size_t kl;
    const uint8_t *key = hs_sidx_keys_get(&c->keys, 2 * b + k, &kl);
    if (!key_canonical(&c->h, key, kl))
      return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: block %u %s is not canonical",
                          c->name, b, k ? "max" : "min");
  }
  roaring_bitmap_t *bm;
  if ((st = hs_sidx_roaring_load(p, r.bitmap_len, c->h.row_count, &bm, err)) != HS_OK) {
    hs_error_prefix(err, "index column %s block %u: ", c->name, b);
    return st;
  }
  if (roaring_bitmap_get_cardinality(bm) != r.count)
    st = hs_error_set(err, HS_ERR_CORRUPT,
                      "index column %s: block %u bitmap holds %" PRIu64 " rows, not %u", c->name, b,
                      roaring_bitmap_get_cardinality(bm), r.count);
  else
    st = claim_bitmap(c, seen, bm, "block", b, err);
  roaring_bitmap_free(bm);
  return st;
}

static hs_status validate_block(hs_sidx_column *c, uint32_t b, roaring_bitmap_t *seen,
                                uint32_t *prev_row, hs_error *err) {
  if (c->h.flags & HS_SIDX_FLAG_LOSSY) return validate_lossy_block(c, b, seen, err);
  hs_sidx_block r = hs_sidx_block_at(c, b);
  const uint8_t *p, *rows;
  hs_sidx_keys keys;
  hs_status st = hs_sidx_column_view(c, c->data_off + r.off, r.len, &p, err);
  if (st == HS_OK) st = hs_sidx_block_bind(c, &r, p, &keys, &rows, err);
  if (st != HS_OK) return st;
  roaring_bitmap_t *bm;
  if ((st = hs_sidx_roaring_load(p, r.bitmap_len, c->h.row_count, &bm, err)) != HS_OK) {
    hs_error_prefix(err, "index column %s block %u: ", c->name, b);
    return st;
  }
  size_t mnl, mxl;
  const uint8_t *mn = hs_sidx_keys_get(&c->keys, 2 * b, &mnl);
  const uint8_t *mx = hs_sidx_keys_get(&c->keys, 2 * b + 1, &mxl);
  /* The pair before this block's first is the previous block's last. */
  const uint8_t *prev = NULL;
  size_t prevl = 0;
  if (b > 0) prev = hs_sidx_keys_get(&c->keys, 2 * b - 1, &prevl);
  for (uint32_t j = 0; j < r.count && st == HS_OK; j++) {
    size_t kl;
    const uint8_t *k = hs_sidx_keys_get(&keys, j, &kl);
    uint32_t row = hs_load_u32le(rows + (size_t)j * 4);
    int cmp = prev != NULL ? hs_sidx_key_cmp(prev, prevl, k, kl) : -1;
    if (!key_canonical(&c->h, k, kl) || cmp > 0 || (cmp == 0 && row <= *prev_row) ||
        (j == 0 && hs_sidx_key_cmp(k, kl, mn, mnl) != 0) ||
        (j + 1 == r.count && hs_sidx_key_cmp(k, kl, mx, mxl) != 0))
      st = hs_error_set(err, HS_ERR_CORRUPT, "index column %s: block %u pair %u out of order",
                        c->name, b, j);
    else if (row >= c->h.row_count || !roaring_bitmap_contains(bm, row) ||
             !roaring_bitmap_add_checked(seen, row))
      st = hs_error_set(err, HS_ERR_CORRUPT, "index column %s: block %u row %u", c->name, b, row);
    prev = k;
    prevl = kl;
    *prev_row = row;
  }
  if (st == HS_OK && roaring_bitmap_get_cardinality(bm) != r.count)
    st = hs_error_set(err, HS_ERR_CORRUPT, "index column %s: block %u bitmap holds other rows",
                      c->name, b);
  roaring_bitmap_free(bm);
  return st;
}

static hs_status validate_column(hs_sidx_file *f, const char *name, hs_error *err) {
  hs_sidx_column *c;
  hs_status st = hs_sidx_column_open(f, name, &c, err);
  if (st != HS_OK) return st;
  roaring_bitmap_t *seen;
  if ((st = hs_sidx_column_is_null(c, &seen, err)) != HS_OK) {
    hs_sidx_column_free(c);
    return st;
  }
  if (roaring_bitmap_get_cardinality(seen) != c->h.null_count)
    st = hs_error_set(err, HS_ERR_CORRUPT,
                      "index column %s: null bitmap holds %" PRIu64 " rows, header says %u", name,
                      roaring_bitmap_get_cardinality(seen), c->h.null_count);
  if (st == HS_OK && c->h.layout == HS_SIDX_LAYOUT_DICT) {
    st = validate_dict(c, seen, err);
  } else if (st == HS_OK) {
    uint32_t prev_row = 0;
    for (uint32_t b = 0; b < c->h.n_entries && st == HS_OK; b++)
      st = validate_block(c, b, seen, &prev_row, err);
  }
  if (st == HS_OK && roaring_bitmap_get_cardinality(seen) != c->h.row_count)
    st = hs_error_set(err, HS_ERR_CORRUPT, "index column %s: %" PRIu64 " of %u rows accounted for",
                      name, roaring_bitmap_get_cardinality(seen), c->h.row_count);
  roaring_bitmap_free(seen);
  hs_sidx_column_free(c);
  return st;
}

hs_status hs_sidx_file_validate(hs_sidx_file *f, hs_error *err) {
  if (f == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "scalar index validate: no file");
  /* Blobs must not overlap one another. */
  for (size_t i = 0; i < f->n_blobs; i++)
    for (size_t j = i + 1; j < f->n_blobs; j++) {
      const hs_sidx_blob_ref *a = &f->blobs[i], *b = &f->blobs[j];
      if (a->offset < b->offset + b->length && b->offset < a->offset + a->length)
        return hs_error_set(err, HS_ERR_CORRUPT, "%s: blobs of %s and %s overlap",
                            hs_source_name(f->src), a->column, b->column);
    }
  for (size_t i = 0; i < f->n_blobs; i++) {
    hs_status st = validate_column(f, f->blobs[i].column, err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}
