/*
 * inverted_read.c — opens a scalar index file (a Puffin file) with bounded
 * range reads and answers predicates with Roaring bitmaps of row positions.
 *
 * Reads, in order: the 12-byte Puffin tail and the JSON footer (open); a
 * column's 64-byte header, key table and directory (column open, checked so
 * that every later offset is known to be in range); then, per query, only
 * the bitmaps or SORTED blocks that the predicate's key range touches.
 *
 * A predicate becomes an interval of keys (lo, hi), each end inclusive,
 * exclusive or open, after an exact conversion of the query value into the
 * column's key space (bound_make). DICT: the entries in the interval are
 * contiguous, so their bitmaps are one range read and one union. SORTED:
 * blocks entirely inside the interval contribute their block bitmap; the
 * (at most two) boundary blocks are read whole and searched.
 */
#include <jansson.h>
#include <math.h>

#include "sidx_internal.h"

/* ---------------------------------------------------------------- file */

static hs_status parse_footer(hs_sidx_file *f, const char *json, size_t len, uint64_t footer_start,
                              hs_error *err) {
  const char *name = hs_source_name(f->src);
  json_error_t jerr;
  json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: Puffin footer JSON: %s at byte %d", name,
                        jerr.text, jerr.position);
  hs_status st = HS_OK;
  json_t *blobs = json_object_get(root, "blobs");
  if (!json_is_array(blobs)) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: Puffin footer has no blobs list", name);
    goto done;
  }
  size_t n = json_array_size(blobs);
  f->blobs = hs_calloc(n + 1, sizeof *f->blobs);
  if (f->blobs == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "%s: %zu blobs", name, n);
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    json_t *b = json_array_get(blobs, i);
    json_t *type = json_object_get(b, "type"), *off = json_object_get(b, "offset");
    json_t *length = json_object_get(b, "length"), *props = json_object_get(b, "properties");
    if (!json_is_string(type) || !json_is_integer(off) || !json_is_integer(length) ||
        !json_is_array(json_object_get(b, "fields")) ||
        !json_is_integer(json_object_get(b, "snapshot-id")) ||
        !json_is_integer(json_object_get(b, "sequence-number"))) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "%s: Puffin blob %zu lacks a required field", name, i);
      goto done;
    }
    json_int_t o = json_integer_value(off), l = json_integer_value(length);
    if (o < 4 || l < 0 || (uint64_t)o > footer_start || (uint64_t)l > footer_start - (uint64_t)o) {
      st =
          hs_error_set(err, HS_ERR_CORRUPT, "%s: Puffin blob %zu at %lld+%lld is outside the blobs",
                       name, i, (long long)o, (long long)l);
      goto done;
    }
    if (strcmp(json_string_value(type), HS_SIDX_BLOB_TYPE) != 0) continue; /* not ours */
    if (json_object_get(b, "compression-codec") != NULL) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: compressed index blob %zu", name, i);
      goto done;
    }
    if (f->n_blobs >= HS_SIDX_COLUMNS_MAX) {
      st = hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: over %d indexed columns", name,
                        HS_SIDX_COLUMNS_MAX);
      goto done;
    }
    json_t *col = json_object_get(props, "column");
    if (!json_is_string(col)) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "%s: index blob %zu names no column", name, i);
      goto done;
    }
    for (size_t k = 0; k < f->n_blobs; k++)
      if (strcmp(f->blobs[k].column, json_string_value(col)) == 0) {
        st = hs_error_set(err, HS_ERR_CORRUPT, "%s: column %s indexed twice", name,
                          f->blobs[k].column);
        goto done;
      }
    hs_sidx_blob_ref *r = &f->blobs[f->n_blobs];
    r->column = hs_strdup(json_string_value(col));
    if (r->column == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "%s: footer", name);
      goto done;
    }
    r->offset = (uint64_t)o;
    r->length = (uint64_t)l;
    f->n_blobs++;
    if ((st = hs_index_binding_get(props, name, &r->bind, &r->bind_path, err)) != HS_OK) goto done;
  }
done:
  json_decref(root);
  return st;
}

hs_status hs_sidx_file_open(hs_source *src, hs_sidx_file **out, hs_error *err) {
  if (src == NULL || out == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scalar index: open without a source");
  const char *name = hs_source_name(src);
  uint64_t size = hs_source_size(src);
  if (size < 8 + HS_PUFFIN_FOOTER_TAIL)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: %" PRIu64 " bytes is too small for Puffin", name,
                        size);
  uint8_t head[4], tail[HS_PUFFIN_FOOTER_TAIL];
  hs_status st = hs_source_read(src, 0, 4, head, err);
  if (st == HS_OK) st = hs_source_read(src, size - sizeof tail, sizeof tail, tail, err);
  if (st != HS_OK) return st;
  if (memcmp(head, HS_PUFFIN_MAGIC, 4) != 0 || memcmp(tail + 8, HS_PUFFIN_MAGIC, 4) != 0)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: not a Puffin file (magic)", name);
  uint32_t plen = hs_load_u32le(tail), flags = hs_load_u32le(tail + 4);
  if (flags & 1) return hs_error_set(err, HS_ERR_UNSUPPORTED, "%s: compressed Puffin footer", name);
  if (plen > HS_PUFFIN_FOOTER_MAX || (uint64_t)plen + 8 + HS_PUFFIN_FOOTER_TAIL > size)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: Puffin footer of %u bytes in a %" PRIu64 "-byte file", name, plen,
                        size);
  uint64_t footer_start = size - HS_PUFFIN_FOOTER_TAIL - plen - 4;
  uint8_t fmagic[4];
  if ((st = hs_source_read(src, footer_start, 4, fmagic, err)) != HS_OK) return st;
  if (memcmp(fmagic, HS_PUFFIN_MAGIC, 4) != 0)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: no magic at footer offset %" PRIu64, name,
                        footer_start);
  char *json = hs_malloc((size_t)plen + 1);
  hs_sidx_file *f = hs_calloc(1, sizeof *f);
  if (json == NULL || f == NULL) {
    hs_free(json);
    hs_free(f);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: footer", name);
  }
  f->src = src;
  hs_source_ref(src);
  st = hs_source_read(src, footer_start + 4, plen, json, err);
  if (st == HS_OK) st = parse_footer(f, json, plen, footer_start, err);
  hs_free(json);
  if (st != HS_OK) {
    hs_sidx_file_free(f);
    return st;
  }
  *out = f;
  return HS_OK;
}

void hs_sidx_file_free(hs_sidx_file *f) {
  if (f == NULL) return;
  for (size_t i = 0; i < f->n_blobs; i++) {
    hs_free(f->blobs[i].column);
    hs_free(f->blobs[i].bind_path);
  }
  hs_free(f->blobs);
  hs_source_unref(f->src);
  hs_free(f);
}

size_t hs_sidx_file_column_count(const hs_sidx_file *f) {
  return f != NULL ? f->n_blobs : 0;
}

const hs_index_binding *hs_sidx_file_blob(const hs_sidx_file *f, size_t i, uint64_t *offset,
                                          uint64_t *length) {
  if (f == NULL || i >= f->n_blobs) return NULL;
  *offset = f->blobs[i].offset;
  *length = f->blobs[i].length;
  return &f->blobs[i].bind;
}

const char *hs_sidx_file_column_name(const hs_sidx_file *f, size_t i) {
  return f != NULL && i < f->n_blobs ? f->blobs[i].column : NULL;
}

/* -------------------------------------------------------------- column */

/* Structure checks that queries rely on: directory offsets in range and
 * ordered, keys (DICT: strictly increasing; SORTED: block minima and maxima
 * non-decreasing). */
static hs_status column_check_dir(const hs_sidx_column *c, hs_error *err) {
  const hs_sidx_header *h = &c->h;
  const hs_sidx_keys *k = &c->keys;
  const char *name = c->name;
  if (h->layout == HS_SIDX_LAYOUT_DICT) {
    uint64_t prev = 0;
    for (uint64_t i = 0; i <= h->n_entries; i++) {
      uint64_t o = hs_load_u64le(c->dir + i * 8);
      if ((i == 0 && o != 0) || (i > 0 && o <= prev) || o > h->data_len ||
          (i == h->n_entries && o != h->data_len))
        return hs_error_set(err, HS_ERR_CORRUPT,
                            "index column %s: bitmap offset %" PRIu64 " is %" PRIu64, name, i, o);
      prev = o;
    }
    for (uint32_t i = 1; i < h->n_entries; i++) {
      size_t la, lb;
      const uint8_t *a = hs_sidx_keys_get(k, i - 1, &la), *b = hs_sidx_keys_get(k, i, &lb);
      if (hs_sidx_key_cmp(a, la, b, lb) >= 0)
        return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: values not sorted at entry %u",
                            name, i);
    }
    return HS_OK;
  }
  for (uint32_t i = 0; i < h->n_entries; i++) {
    const uint8_t *e = c->dir + (size_t)i * HS_SIDX_DIR_SORTED_ENTRY;
    uint64_t o = hs_load_u64le(e), end = i + 1 < h->n_entries ? hs_load_u64le(e + 16) : h->data_len;
    uint32_t count = hs_load_u32le(e + 8), blen = hs_load_u32le(e + 12);
    uint64_t fixed = c->h.key_width ? (uint64_t)count * c->h.key_width : (uint64_t)count * 4 + 4;
    bool lossy = (h->flags & HS_SIDX_FLAG_LOSSY) != 0;
    if (lossy)
      fixed = 0; /* the block is its bitmap, exactly */
    else if (h->flags & HS_SIDX_FLAG_PACKED)
      fixed = 4; /* the rest is checked when bound */
    else
      fixed += (uint64_t)count * 4;
    if ((i == 0 && o != 0) || end < o || end > h->data_len || count == 0 || count > h->block_rows ||
        (count != h->block_rows && i + 1 != h->n_entries) || (uint64_t)blen + fixed > end - o ||
        (lossy && (uint64_t)blen != end - o))
      return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: block %u directory entry", name,
                          i);
    size_t la, lb;
    const uint8_t *mn = hs_sidx_keys_get(k, 2 * i, &la), *mx = hs_sidx_keys_get(k, 2 * i + 1, &lb);
    if (hs_sidx_key_cmp(mn, la, mx, lb) > 0)
      return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: block %u min above max", name, i);
    if (i > 0) {
      size_t lp;
      const uint8_t *pmx = hs_sidx_keys_get(k, 2 * i - 1, &lp);
      if (hs_sidx_key_cmp(pmx, lp, mn, la) > 0)
        return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: block %u out of order", name, i);
    }
  }
  uint64_t pairs =
      h->n_entries == 0
          ? 0
          : (uint64_t)(h->n_entries - 1) * h->block_rows +
                hs_load_u32le(c->dir + (size_t)(h->n_entries - 1) * HS_SIDX_DIR_SORTED_ENTRY + 8);
  if (pairs != (uint64_t)h->row_count - h->null_count)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "index column %s: %" PRIu64 " pairs for %u non-null rows", name, pairs,
                        h->row_count - h->null_count);
  return HS_OK;
}

hs_status hs_sidx_column_open(hs_sidx_file *f, const char *name, hs_sidx_column **out,
                              hs_error *err) {
  if (f == NULL || name == NULL || out == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scalar index: column open");
  const hs_sidx_blob_ref *r = NULL;
  for (size_t i = 0; i < f->n_blobs && r == NULL; i++)
    if (strcmp(f->blobs[i].column, name) == 0) r = &f->blobs[i];
  if (r == NULL)
    return hs_error_set(err, HS_ERR_NOT_FOUND, "%s: no index for column %s", hs_source_name(f->src),
                        name);
  hs_sidx_column *c = hs_calloc(1, sizeof *c);
  if (c == NULL || (c->name = hs_strdup(name)) == NULL) {
    hs_free(c);
    return hs_error_set(err, HS_ERR_NOMEM, "index column %s", name);
  }
  c->src = f->src;
  hs_source_ref(c->src);
  hs_buf_init(&c->scratch);
  hs_buf_init(&c->unpacked);
  c->blob_off = r->offset;
  c->blob_len = r->length;
  c->bind = r->bind;
  uint8_t hdr[HS_SIDX_HEADER_BYTES];
  hs_status st = HS_OK;
  if (r->bind_path != NULL && (c->bind_path = hs_strdup(r->bind_path)) == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "index column %s", name);
    goto fail;
  }
  c->bind.data_file = c->bind_path;
  /* The whole blob against its recorded checksum, before any of it is
   * trusted (once per file version and process: binding.h). */
  if (c->bind.has_crc && (st = hs_index_blob_verify(c->src, c->blob_off, c->blob_len,
                                                    c->bind.blob_crc32c, err)) != HS_OK) {
    hs_error_prefix(err, "index column %s: ", name);
    goto fail;
  }
  if (c->blob_len < HS_SIDX_HEADER_BYTES) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "index column %s: blob of %" PRIu64 " bytes", name,
                      c->blob_len);
    goto fail;
  }
  if ((st = hs_source_read(c->src, c->blob_off, sizeof hdr, hdr, err)) != HS_OK) goto fail;
  if ((st = hs_sidx_header_parse(hdr, c->blob_len, &c->h, name, err)) != HS_OK) goto fail;
  uint64_t meta_len = c->h.keys_len + c->h.dir_len;
  c->meta = hs_malloc((size_t)meta_len + 1);
  if (c->meta == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "index column %s: directory of %" PRIu64 " bytes", name,
                      meta_len);
    goto fail;
  }
  uint64_t meta_off = c->blob_off + HS_SIDX_HEADER_BYTES + c->h.null_len;
  if ((st = hs_source_read(c->src, meta_off, (size_t)meta_len, c->meta, err)) != HS_OK) goto fail;
  c->dir = c->meta + c->h.keys_len;
  c->data_off = meta_off + meta_len;
  uint32_t nkeys = c->h.layout == HS_SIDX_LAYOUT_DICT ? c->h.n_entries : 2 * c->h.n_entries;
  if ((st = hs_sidx_keys_bind(&c->keys, c->meta, (size_t)c->h.keys_len, nkeys, c->h.key_width,
                              err)) != HS_OK) {
    hs_error_prefix(err, "index column %s: ", name);
    goto fail;
  }
  if ((st = column_check_dir(c, err)) != HS_OK) goto fail;
  *out = c;
  return HS_OK;
fail:
  hs_sidx_column_free(c);
  return st;
}

void hs_sidx_column_free(hs_sidx_column *c) {
  if (c == NULL) return;
  hs_source_unref(c->src);
  hs_free(c->name);
  hs_free(c->bind_path);
  hs_free(c->meta);
  hs_buf_free(&c->scratch);
  hs_buf_free(&c->unpacked);
  hs_free(c);
}

const hs_index_binding *hs_sidx_column_binding(const hs_sidx_column *c) {
  return &c->bind;
}

uint32_t hs_sidx_column_row_count(const hs_sidx_column *c) {
  return c->h.row_count;
}
bool hs_sidx_column_exact(const hs_sidx_column *c) {
  return (c->h.flags & HS_SIDX_FLAG_LOSSY) == 0;
}

hs_sidx_layout hs_sidx_column_layout(const hs_sidx_column *c) {
  return (hs_sidx_layout)c->h.layout;
}
uint32_t hs_sidx_column_entry_count(const hs_sidx_column *c) {
  return c->h.n_entries;
}

/* ------------------------------------------------------- shared reads */

hs_status hs_sidx_column_view(hs_sidx_column *c, uint64_t off, uint64_t len, const uint8_t **p,
                              hs_error *err) {
  hs_status st = hs_source_view(c->src, off, (size_t)len, &c->scratch, p, err);
  if (st != HS_OK) hs_error_prefix(err, "index column %s: ", c->name);
  return st;
}

hs_sidx_block hs_sidx_block_at(const hs_sidx_column *c, uint32_t i) {
  const uint8_t *e = c->dir + (size_t)i * HS_SIDX_DIR_SORTED_ENTRY;
  hs_sidx_block r;
  r.off = hs_load_u64le(e);
  uint64_t end = i + 1 < c->h.n_entries ? hs_load_u64le(e + 16) : c->h.data_len;
  r.len = end - r.off;
  r.count = hs_load_u32le(e + 8);
  r.bitmap_len = hs_load_u32le(e + 12);
  r.index = i;
  return r;
}

/* A packed block (README "Packed blocks"): 8-byte keys as bit-packed
 * deltas from the previous key, the first from the block minimum (other
 * keys as a plain key table), rows
 * as bit-packed ranks into the block bitmap's sorted rows. */
hs_status hs_sidx_packed_parse(const hs_sidx_column *c, const hs_sidx_block *r, const uint8_t *p,
                               hs_sidx_packed *out, hs_error *err) {
  uint32_t n = r->count, w = c->h.key_width;
  const uint8_t *q = p + r->bitmap_len;
  uint64_t avail = r->len - r->bitmap_len - 4; /* >= 0: checked at open */
  unsigned kb = q[0] & ~HS_SIDX_KEYS_SPARSE, rb = q[1];
  bool sparse = (q[0] & HS_SIDX_KEYS_SPARSE) != 0;
  uint64_t rank_bytes = ((uint64_t)n * rb + 7) / 8, mask_bytes = sparse ? ((uint64_t)n + 7) / 8 : 0;
  uint64_t n_packed = n;
  bool bad_mask = false;
  if (sparse && mask_bytes <= avail) { /* count the non-zero deltas; spare mask bits must be 0 */
    n_packed = 0;
    for (uint64_t i = 0; i < mask_bytes; i++) n_packed += (uint64_t)__builtin_popcount(q[4 + i]);
    bad_mask = (n % 8) != 0 && (q[4 + mask_bytes - 1] >> (n % 8)) != 0;
  }
  uint64_t key_bytes = w == 8 ? mask_bytes + (n_packed * kb + 7) / 8
                              : (rank_bytes <= avail ? avail - rank_bytes : 0);
  if (q[2] != 0 || q[3] != 0 || rb > 32 || (w == 8 ? kb > 64 : (kb != 0 || sparse)) ||
      (sparse && (kb == 0 || mask_bytes > avail || bad_mask)) || rank_bytes > avail ||
      key_bytes > avail - rank_bytes || key_bytes + rank_bytes != avail)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "index column %s: packed block %u: bad widths (keys %u, ranks %u bits)",
                        c->name, r->index, kb, rb);
  out->key_bits = kb;
  out->rank_bits = rb;
  out->sparse = sparse;
  out->mask = q + 4;
  out->keys = q + 4 + mask_bytes;
  out->keys_len = (size_t)(key_bytes - mask_bytes);
  out->ranks = q + 4 + key_bytes;
  out->ranks_len = (size_t)rank_bytes;
  return HS_OK;
}

/* A whole packed block decoded into c->unpacked: [count keys of 8 bytes]
 * [count u32 rows][count u32 sorted]. */
static hs_status block_unpack(hs_sidx_column *c, const hs_sidx_block *r, const uint8_t *p,
                              hs_sidx_keys *keys, const uint8_t **rows, hs_error *err) {
  const char *name = c->name;
  uint32_t n = r->count, w = c->h.key_width;
  hs_sidx_packed L;
  hs_status st = hs_sidx_packed_parse(c, r, p, &L, err);
  if (st != HS_OK) return st;
  unsigned kb = L.key_bits, rb = L.rank_bits;
  bool sparse = L.sparse;
  c->unpacked.len = 0;
  if (!hs_buf_reserve(&c->unpacked, (size_t)n * 16))
    return hs_error_set(err, HS_ERR_NOMEM, "index column %s: block of %u rows", name, n);
  uint8_t *kout = c->unpacked.data, *rout = kout + (size_t)n * 8;
  uint32_t *sorted = (uint32_t *)(void *)(rout + (size_t)n * 4);
  if (w == 8) {
    size_t ml;
    uint64_t key = hs_sidx_load_u64be(hs_sidx_keys_get(&c->keys, 2 * r->index, &ml));
    const uint8_t *mask = L.mask, *packed = L.keys;
    size_t packed_bytes = L.keys_len;
    uint64_t at = 0;
    for (uint32_t j = 0; j < n; j++) {
      uint64_t d = 0;
      if (!sparse)
        d = hs_sidx_bits_at(packed, packed_bytes, j, kb);
      else if (mask[j / 8] >> (j % 8) & 1)
        d = hs_sidx_bits_at(packed, packed_bytes, at++, kb);
      if (d > UINT64_MAX - key)
        return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: packed block %u key %u wraps",
                            name, r->index, j);
      key += d;
      hs_sidx_store_u64be(kout + (size_t)j * 8, key);
    }
    st = hs_sidx_keys_bind(keys, kout, (size_t)n * 8, n, 8, err);
  } else {
    st = hs_sidx_keys_bind(keys, L.keys, L.keys_len, n, (uint16_t)w, err);
  }
  if (st != HS_OK) {
    hs_error_prefix(err, "index column %s packed block %u: ", name, r->index);
    return st;
  }
  roaring_bitmap_t *bm;
  if ((st = hs_sidx_roaring_load(p, r->bitmap_len, c->h.row_count, &bm, err)) != HS_OK) {
    hs_error_prefix(err, "index column %s block %u: ", name, r->index);
    return st;
  }
  uint64_t card = roaring_bitmap_get_cardinality(bm);
  if (card != n) {
    roaring_bitmap_free(bm);
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "index column %s: block %u bitmap holds %" PRIu64 " rows, not %u", name,
                        r->index, card, n);
  }
  roaring_bitmap_to_uint32_array(bm, sorted);
  roaring_bitmap_free(bm);
  for (uint32_t j = 0; j < n; j++) {
    uint64_t k = hs_sidx_bits_at(L.ranks, L.ranks_len, j, rb);
    if (k >= n)
      return hs_error_set(err, HS_ERR_CORRUPT,
                          "index column %s: packed block %u rank %" PRIu64 " of %u rows", name,
                          r->index, k, n);
    hs_store_u32le(rout + (size_t)j * 4, sorted[k]);
  }
  *rows = rout;
  return HS_OK;
}

/* Bind a whole block read at p: its key table and row array. */
hs_status hs_sidx_block_bind(hs_sidx_column *c, const hs_sidx_block *r, const uint8_t *p,
                             hs_sidx_keys *keys, const uint8_t **rows, hs_error *err) {
  if (c->h.flags & HS_SIDX_FLAG_LOSSY)
    return hs_error_set(err, HS_ERR_INTERNAL, "index column %s: lossy blocks hold no pairs",
                        c->name);
  if (c->h.flags & HS_SIDX_FLAG_PACKED) return block_unpack(c, r, p, keys, rows, err);
  size_t keys_len = (size_t)(r->len - r->bitmap_len - (uint64_t)r->count * 4);
  *rows = p + r->bitmap_len + keys_len;
  hs_status st =
      hs_sidx_keys_bind(keys, p + r->bitmap_len, keys_len, r->count, c->h.key_width, err);
  if (st != HS_OK) hs_error_prefix(err, "index column %s block at %" PRIu64 ": ", c->name, r->off);
  return st;
}

/* ------------------------------------------------------------- bounds */

typedef enum { B_KEY, B_OPEN, B_EMPTY } bound_state;

typedef struct kbound {
  bound_state state;
  bool incl;
  uint8_t buf[16];
  const uint8_t *p;
  size_t n;
} kbound;

/* Decimal bounds are 128-bit integers (gcc and clang on 64-bit hosts). */
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

#define TWO63 9223372036854775808.0
#define TWO64 18446744073709551616.0

static void bound_u64(kbound *b, uint64_t key_bits, bool incl) {
  hs_sidx_store_u64be(b->buf, key_bits);
  b->p = b->buf;
  b->n = 8;
  b->incl = incl;
  b->state = B_KEY;
}

/* Past every value on this side: a lower bound above all keys selects
 * nothing, an upper bound above all keys is open. */
static void bound_beyond(kbound *b, bool is_lower, bool above) {
  b->state = (is_lower == above) ? B_EMPTY : B_OPEN;
}

/* An integer column bounded by a double: round toward the inside. */
static void bound_from_double(kbound *b, double d, bool is_lower, bool incl, bool is_unsigned) {
  double lo_lim = is_unsigned ? 0.0 : -TWO63, hi_lim = is_unsigned ? TWO64 : TWO63;
  if (d != d || d >= hi_lim) {
    bound_beyond(b, is_lower, true); /* NaN sorts above every number */
    return;
  }
  if (d < lo_lim) {
    bound_beyond(b, is_lower, false);
    return;
  }
  double r = is_lower ? ceil(d) : floor(d);
  if (r != d) incl = true;
  if (r < lo_lim || r >= hi_lim) { /* e.g. -0.5 rounds up to 0 for unsigned: still inside */
    bound_beyond(b, is_lower, r >= hi_lim);
    return;
  }
  if (is_unsigned)
    bound_u64(b, (uint64_t)r, incl);
  else
    bound_u64(b, hs_sidx_int_bits((int64_t)r), incl);
}

/* A float column bounded by an integer that a double may not hold: d is
 * the nearest double; cmp is sign(d - v). */
static void bound_float_of_int(kbound *b, double d, int cmp, bool is_lower, bool incl) {
  if (cmp != 0) incl = is_lower ? cmp > 0 : cmp < 0;
  bound_u64(b, hs_sidx_float_bits(d), incl);
}

static hs_status bound_make(const hs_sidx_column *c, const hs_sidx_value *v, bool is_lower,
                            bool incl, kbound *b, hs_error *err) {
  b->incl = incl;
  if (v == NULL) {
    b->state = B_OPEN;
    return HS_OK;
  }
  switch ((hs_sidx_key_type)c->h.key_type) {
  case HS_SIDX_KT_BOOL:
    if (v->kind != HS_SIDX_BOOL) break;
    b->buf[0] = v->b ? 1 : 0;
    b->p = b->buf;
    b->n = 1;
    b->state = B_KEY;
    return HS_OK;
  case HS_SIDX_KT_INT:
    if (v->kind == HS_SIDX_INT) {
      bound_u64(b, hs_sidx_int_bits(v->i), incl);
    } else if (v->kind == HS_SIDX_UINT) {
      if (v->u > INT64_MAX)
        bound_beyond(b, is_lower, true);
      else
        bound_u64(b, hs_sidx_int_bits((int64_t)v->u), incl);
    } else if (v->kind == HS_SIDX_DOUBLE) {
      bound_from_double(b, v->d, is_lower, incl, false);
    } else {
      break;
    }
    return HS_OK;
  case HS_SIDX_KT_UINT:
    if (v->kind == HS_SIDX_INT) {
      if (v->i < 0)
        bound_beyond(b, is_lower, false);
      else
        bound_u64(b, (uint64_t)v->i, incl);
    } else if (v->kind == HS_SIDX_UINT) {
      bound_u64(b, v->u, incl);
    } else if (v->kind == HS_SIDX_DOUBLE) {
      bound_from_double(b, v->d, is_lower, incl, true);
    } else {
      break;
    }
    return HS_OK;
  case HS_SIDX_KT_FLOAT:
    if (v->kind == HS_SIDX_DOUBLE) {
      bound_u64(b, hs_sidx_float_bits(v->d), incl);
    } else if (v->kind == HS_SIDX_INT) {
      double d = (double)v->i;
      int cmp = d >= TWO63 ? 1 : (int64_t)d < v->i ? -1 : (int64_t)d > v->i ? 1 : 0;
      bound_float_of_int(b, d, cmp, is_lower, incl);
    } else if (v->kind == HS_SIDX_UINT) {
      double d = (double)v->u;
      int cmp = d >= TWO64 ? 1 : (uint64_t)d < v->u ? -1 : (uint64_t)d > v->u ? 1 : 0;
      bound_float_of_int(b, d, cmp, is_lower, incl);
    } else {
      break;
    }
    return HS_OK;
  case HS_SIDX_KT_DECIMAL: {
    i128 x;
    if (v->kind == HS_SIDX_DECIMAL) {
      x = (i128)((u128)(uint64_t)v->dec_hi << 64 | v->dec_lo);
    } else if (v->kind == HS_SIDX_INT || v->kind == HS_SIDX_UINT) {
      x = v->kind == HS_SIDX_INT ? (i128)v->i : (i128)v->u;
      for (int32_t s = 0; s < c->h.decimal_scale; s++) {
        if (__builtin_mul_overflow(x, (i128)10, &x)) {
          /* Beyond every decimal(38) value. */
          bound_beyond(b, is_lower, v->kind == HS_SIDX_UINT || v->i > 0);
          return HS_OK;
        }
      }
    } else {
      break;
    }
    u128 ux = (u128)x;
    for (int i = 15; i >= 0; i--) {
      b->buf[i] = (uint8_t)ux;
      ux >>= 8;
    }
    b->buf[0] ^= 0x80;
    b->p = b->buf;
    b->n = 16;
    b->state = B_KEY;
    return HS_OK;
  }
  case HS_SIDX_KT_BYTES:
  case HS_SIDX_KT_FIXED:
    if (v->kind != HS_SIDX_BYTES || (v->bytes == NULL && v->n_bytes > 0)) break;
    b->p = v->bytes;
    b->n = v->n_bytes;
    b->state = B_KEY;
    return HS_OK;
  }
  return hs_error_set(err, HS_ERR_UNSUPPORTED, "index column %s: value kind %d against key type %u",
                      c->name, (int)v->kind, c->h.key_type);
}

/* --------------------------------------------------------------- query */

hs_status hs_sidx_load_or(hs_sidx_column *c, const uint8_t *p, size_t len, roaring_bitmap_t *acc,
                          hs_error *err) {
  roaring_bitmap_t *r;
  hs_status st = hs_sidx_roaring_load(p, len, c->h.row_count, &r, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "index column %s: ", c->name);
    return st;
  }
  roaring_bitmap_lazy_or_inplace(acc, r, false);
  roaring_bitmap_free(r);
  return HS_OK;
}

/* Index of the first key (of n, stride/first as in lower_bound) that lies
 * past bound b seen as a lower bound (>= b, or > b when exclusive). */
static uint32_t first_at_or_after(const hs_sidx_keys *k, uint32_t first, uint32_t stride,
                                  uint32_t n, const kbound *b) {
  if (b->state == B_OPEN) return 0;
  return hs_sidx_keys_lower_bound(k, first, stride, n, b->p, b->n, !b->incl);
}
/* Index of the first key past bound b seen as an upper bound. */
static uint32_t first_past(const hs_sidx_keys *k, uint32_t first, uint32_t stride, uint32_t n,
                           const kbound *b) {
  if (b->state == B_OPEN) return n;
  return hs_sidx_keys_lower_bound(k, first, stride, n, b->p, b->n, b->incl);
}

/* Ranges of more dictionary entries than this are unioned into flat row
 * words (one pass over each list's bytes, one bitmap built at the end)
 * instead of a bitmap deserialized per list (README.md "Range answers"). */
#define HS_SIDX_WORDS_LISTS 8u

/* OR into acc the posting lists of dictionary entries ents[0..m)
 * (ascending), or with ents NULL of entries [i0, i0 + m): a contiguous
 * range is one view, a list one view per entry. */
static hs_status dict_or(hs_sidx_column *c, const uint32_t *ents, uint32_t i0, uint32_t m,
                         roaring_bitmap_t *acc, hs_error *err) {
  if (m == 0) return HS_OK;
  const uint8_t *span = NULL;
  uint64_t a = 0;
  hs_status st = HS_OK;
  if (ents == NULL) {
    a = hs_load_u64le(c->dir + (size_t)i0 * 8);
    uint64_t z = hs_load_u64le(c->dir + (size_t)(i0 + m) * 8);
    if ((st = hs_sidx_column_view(c, c->data_off + a, z - a, &span, err)) != HS_OK) return st;
  }
  uint64_t *words = NULL; /* many lists: one k-way union into row words */
  size_t nw = ((size_t)c->h.row_count + 63) / 64;
  if (m > HS_SIDX_WORDS_LISTS && (words = hs_calloc(nw ? nw : 1, sizeof *words)) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "index column %s: %zu row words", c->name, nw);
  for (uint32_t k = 0; k < m && st == HS_OK; k++) {
    uint32_t i = ents != NULL ? ents[k] : i0 + k;
    uint64_t s = hs_load_u64le(c->dir + (size_t)i * 8),
             e = hs_load_u64le(c->dir + (size_t)i * 8 + 8);
    const uint8_t *q = span != NULL ? span + (s - a) : NULL;
    if (q == NULL && (st = hs_sidx_column_view(c, c->data_off + s, e - s, &q, err)) != HS_OK) break;
    if (words == NULL) {
      st = hs_sidx_load_or(c, q, (size_t)(e - s), acc, err);
    } else if ((st = hs_sidx_roaring_or_words(q, (size_t)(e - s), c->h.row_count, words, err)) !=
               HS_OK) {
      hs_error_prefix(err, "index column %s: ", c->name);
    }
  }
  if (words == NULL) return st;
  roaring_bitmap_t *r = NULL;
  if (st == HS_OK && (st = hs_sidx_roaring_from_words(words, c->h.row_count, &r, err)) != HS_OK)
    hs_error_prefix(err, "index column %s: ", c->name);
  hs_free(words);
  if (st != HS_OK) return st;
  roaring_bitmap_lazy_or_inplace(acc, r, false);
  roaring_bitmap_free(r);
  return HS_OK;
}

/* A range of dictionary entries. Every non-null row is in exactly one
 * entry's posting list, so a range holding most entries is answered as
 * the non-null rows minus the entries outside it: `sel < 995` of 1,000
 * values unions 5 lists, not 995. */
static hs_status query_dict(hs_sidx_column *c, const kbound *lo, const kbound *hi,
                            roaring_bitmap_t *acc, hs_error *err) {
  uint32_t n = c->h.n_entries;
  uint32_t i0 = first_at_or_after(&c->keys, 0, 1, n, lo), i1 = first_past(&c->keys, 0, 1, n, hi);
  if (i0 >= i1) return HS_OK;
  uint32_t inside = i1 - i0;
  if (inside <= 8 || inside <= 2 * (n - inside)) return dict_or(c, NULL, i0, inside, acc, err);
  roaring_bitmap_t *rest = roaring_bitmap_create(), *nn = NULL;
  if (rest == NULL) return hs_error_set(err, HS_ERR_NOMEM, "index column %s: bitmap", c->name);
  hs_status st = dict_or(c, NULL, 0, i0, rest, err);
  if (st == HS_OK) st = dict_or(c, NULL, i1, n - i1, rest, err);
  if (st == HS_OK) st = hs_sidx_column_is_not_null(c, &nn, err);
  if (st == HS_OK) {
    roaring_bitmap_repair_after_lazy(rest);
    roaring_bitmap_andnot_inplace(nn, rest);
    roaring_bitmap_lazy_or_inplace(acc, nn, false);
    roaring_bitmap_free(nn);
  }
  roaring_bitmap_free(rest);
  return st;
}

static hs_status query_sorted(hs_sidx_column *c, const kbound *lo, const kbound *hi,
                              roaring_bitmap_t *acc, hs_error *err) {
  uint32_t n = c->h.n_entries;
  /* Candidate blocks: max >= lo and min <= hi. */
  uint32_t b0 = first_at_or_after(&c->keys, 1, 2, n, lo), b1 = first_past(&c->keys, 0, 2, n, hi);
  hs_status st = HS_OK;
  for (uint32_t b = b0; b < b1 && st == HS_OK; b++) {
    hs_sidx_block r = hs_sidx_block_at(c, b);
    size_t ln, lx;
    const uint8_t *mn = hs_sidx_keys_get(&c->keys, 2 * b, &ln);
    const uint8_t *mx = hs_sidx_keys_get(&c->keys, 2 * b + 1, &lx);
    bool lo_in = lo->state == B_OPEN || hs_sidx_key_cmp(mn, ln, lo->p, lo->n) > (lo->incl ? -1 : 0);
    bool hi_in = hi->state == B_OPEN || hs_sidx_key_cmp(mx, lx, hi->p, hi->n) < (hi->incl ? 1 : 0);
    const uint8_t *p;
    if ((lo_in && hi_in) || (c->h.flags & HS_SIDX_FLAG_LOSSY)) { /* lossy: all its rows */
      if ((st = hs_sidx_column_view(c, c->data_off + r.off, r.bitmap_len, &p, err)) == HS_OK)
        st = hs_sidx_load_or(c, p, r.bitmap_len, acc, err);
      continue;
    }
    hs_sidx_keys keys;
    const uint8_t *rows;
    if ((st = hs_sidx_column_view(c, c->data_off + r.off, r.len, &p, err)) != HS_OK) break;
    if ((st = hs_sidx_block_bind(c, &r, p, &keys, &rows, err)) != HS_OK) break;
    uint32_t j0 = first_at_or_after(&keys, 0, 1, r.count, lo);
    uint32_t j1 = first_past(&keys, 0, 1, r.count, hi);
    for (uint32_t j = j0; j < j1; j++) {
      uint32_t row = hs_load_u32le(rows + (size_t)j * 4);
      if (row >= c->h.row_count)
        return hs_error_set(err, HS_ERR_CORRUPT, "index column %s: row %u past %u rows", c->name,
                            row, c->h.row_count);
      roaring_bitmap_add(acc, row);
    }
  }
  return st;
}

static hs_status query_range_keys(hs_sidx_column *c, const kbound *lo, const kbound *hi,
                                  roaring_bitmap_t *acc, hs_error *err) {
  if (lo->state == B_EMPTY || hi->state == B_EMPTY) return HS_OK;
  if (lo->state == B_KEY && hi->state == B_KEY) {
    int cmp = hs_sidx_key_cmp(lo->p, lo->n, hi->p, hi->n);
    if (cmp > 0 || (cmp == 0 && !(lo->incl && hi->incl))) return HS_OK;
  }
  return c->h.layout == HS_SIDX_LAYOUT_DICT ? query_dict(c, lo, hi, acc, err)
                                            : query_sorted(c, lo, hi, acc, err);
}

static hs_status finish_query(hs_status st, roaring_bitmap_t *acc, roaring_bitmap_t **out) {
  if (st != HS_OK) {
    roaring_bitmap_free(acc);
    return st;
  }
  roaring_bitmap_repair_after_lazy(acc);
  *out = acc;
  return HS_OK;
}

static hs_status new_acc(const hs_sidx_column *c, roaring_bitmap_t **out, roaring_bitmap_t **acc,
                         hs_error *err) {
  if (c == NULL || out == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scalar index query: NULL argument");
  *acc = roaring_bitmap_create();
  if (*acc == NULL) return hs_error_set(err, HS_ERR_NOMEM, "index column %s: bitmap", c->name);
  return HS_OK;
}

hs_status hs_sidx_column_range(hs_sidx_column *c, const hs_sidx_value *lo, bool lo_inclusive,
                               const hs_sidx_value *hi, bool hi_inclusive, roaring_bitmap_t **out,
                               hs_error *err) {
  roaring_bitmap_t *acc;
  hs_status st = new_acc(c, out, &acc, err);
  if (st != HS_OK) return st;
  kbound l, h;
  st = bound_make(c, lo, true, lo_inclusive, &l, err);
  if (st == HS_OK) st = bound_make(c, hi, false, hi_inclusive, &h, err);
  if (st == HS_OK) st = query_range_keys(c, &l, &h, acc, err);
  return finish_query(st, acc, out);
}

hs_status hs_sidx_column_equals(hs_sidx_column *c, const hs_sidx_value *v, roaring_bitmap_t **out,
                                hs_error *err) {
  if (v == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "scalar index equals: NULL value");
  return hs_sidx_column_range(c, v, true, v, true, out, err);
}

/* Bounds of one IN value (lower and upper: the same key). */
typedef struct in_bound {
  kbound l, h;
} in_bound;

static int in_bound_cmp(const void *a, const void *b) {
  const in_bound *x = *(const in_bound *const *)a, *y = *(const in_bound *const *)b;
  bool kx = x->l.state == B_KEY, ky = y->l.state == B_KEY;
  if (!kx || !ky) return (int)ky - (int)kx; /* keys first */
  return hs_sidx_key_cmp(x->l.p, x->l.n, y->l.p, y->l.n);
}

/* A value whose bounds are one key, both inclusive (every exact
 * conversion; a cross-kind value that no key equals is not one). */
static bool in_point(const in_bound *v) {
  return v->l.state == B_KEY && v->h.state == B_KEY && v->l.incl && v->h.incl &&
         hs_sidx_key_cmp(v->l.p, v->l.n, v->h.p, v->h.n) == 0;
}

/* The dictionary entries equal to ks[0..n) (sorted, distinct): one
 * galloping walk of the key table; their lists OR-ed as one union. */
static hs_status dict_points(hs_sidx_column *c, const hs_sidx_kview *ks, size_t n,
                             roaring_bitmap_t *acc, hs_error *err) {
  uint32_t ne = c->h.n_entries, e = 0, m = 0;
  uint32_t *ents = hs_malloc(sizeof *ents * (n + 1));
  if (ents == NULL) return hs_error_set(err, HS_ERR_NOMEM, "index column %s: IN list", c->name);
  for (size_t i = 0; i < n && e < ne; i++) {
    uint32_t step = 1, lo = e, hi = e; /* gallop: first entry >= ks[i] */
    size_t kl = 0;
    while (hi < ne) {
      const uint8_t *kp = hs_sidx_keys_get(&c->keys, hi, &kl);
      if (hs_sidx_key_cmp(kp, kl, ks[i].p, ks[i].n) >= 0) break;
      lo = hi + 1;
      hi = ne - hi > step ? hi + step : ne;
      step = step < (1u << 30) ? step * 2 : step;
    }
    e = lo + hs_sidx_keys_lower_bound(&c->keys, lo, 1, hi - lo, ks[i].p, ks[i].n, false);
    if (e < ne) {
      const uint8_t *kp = hs_sidx_keys_get(&c->keys, e, &kl);
      if (hs_sidx_key_cmp(kp, kl, ks[i].p, ks[i].n) == 0) ents[m++] = e++;
    }
  }
  hs_status st = dict_or(c, ents, 0, m, acc, err);
  hs_free(ents);
  return st;
}

/* One union of the values' posting lists (README.md "Point lookups"): the
 * values that are one key each are sorted and deduplicated once, then
 * found by one merge with the column's directory (DICT: the key table;
 * SORTED: the blocks' ranges, and inside a block only what the keys need:
 * inverted_probe.c). Other values (a cross-kind value that no key equals,
 * or beyond the type) go through the range path, one each. */
hs_status hs_sidx_column_in(hs_sidx_column *c, const hs_sidx_value *vs, size_t n,
                            roaring_bitmap_t **out, hs_error *err) {
  roaring_bitmap_t *acc;
  hs_status st = new_acc(c, out, &acc, err);
  if (st != HS_OK) return st;
  if (vs == NULL && n > 0) st = hs_error_set(err, HS_ERR_INVALID_ARG, "scalar index in: no values");
  in_bound *bs = st == HS_OK ? hs_malloc(sizeof *bs * (n + 1)) : NULL;
  in_bound **order = bs != NULL ? hs_malloc(sizeof *order * (n + 1)) : NULL;
  hs_sidx_kview *ks = order != NULL ? hs_malloc(sizeof *ks * (n + 1)) : NULL;
  if (st == HS_OK && ks == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "index column %s: IN list of %zu values", c->name, n);
  size_t np = 0; /* point values, at the front of order */
  bool sorted = true;
  for (size_t i = 0; i < n && st == HS_OK; i++) {
    st = bound_make(c, &vs[i], true, true, &bs[i].l, err);
    if (st == HS_OK) st = bound_make(c, &vs[i], false, true, &bs[i].h, err);
    if (st != HS_OK) break;
    if (!in_point(&bs[i])) {
      st = query_range_keys(c, &bs[i].l, &bs[i].h, acc, err);
      continue;
    }
    if (np > 0 && hs_sidx_key_cmp(order[np - 1]->l.p, order[np - 1]->l.n, bs[i].l.p, bs[i].l.n) > 0)
      sorted = false;
    order[np++] = &bs[i];
  }
  if (st == HS_OK && !sorted) qsort(order, np, sizeof *order, in_bound_cmp);
  size_t u = 0; /* distinct */
  for (size_t i = 0; i < np && st == HS_OK; i++) {
    const kbound *k = &order[i]->l;
    if (u == 0 || hs_sidx_key_cmp(ks[u - 1].p, ks[u - 1].n, k->p, k->n) != 0)
      ks[u++] = (hs_sidx_kview){k->p, k->n};
  }
  if (st == HS_OK && u > 0)
    st = c->h.layout == HS_SIDX_LAYOUT_DICT ? dict_points(c, ks, u, acc, err)
                                            : hs_sidx_sorted_points(c, ks, u, acc, err);
  hs_free(ks);
  hs_free(order);
  hs_free(bs);
  return finish_query(st, acc, out);
}

hs_status hs_sidx_column_prefix(hs_sidx_column *c, const uint8_t *prefix, size_t n,
                                roaring_bitmap_t **out, hs_error *err) {
  if (c != NULL && c->h.key_type != HS_SIDX_KT_BYTES && c->h.key_type != HS_SIDX_KT_FIXED)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "index column %s: prefix on a non-string column",
                        c->name);
  if (prefix == NULL && n > 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scalar index prefix: NULL prefix");
  roaring_bitmap_t *acc;
  hs_status st = new_acc(c, out, &acc, err);
  if (st != HS_OK) return st;
  /* [prefix, successor): the successor drops trailing 0xFF bytes and
   * increments the last other byte; none means open above. */
  uint8_t *succ = hs_malloc(n + 1);
  if (succ == NULL) {
    roaring_bitmap_free(acc);
    return hs_error_set(err, HS_ERR_NOMEM, "scalar index prefix");
  }
  if (n) memcpy(succ, prefix, n);
  size_t m = n;
  while (m > 0 && succ[m - 1] == 0xFF) m--;
  kbound l = {.state = B_KEY, .incl = true, .p = prefix, .n = n};
  kbound h = {.state = m ? B_KEY : B_OPEN, .incl = false, .p = succ, .n = m};
  if (m) succ[m - 1]++;
  st = query_range_keys(c, &l, &h, acc, err);
  hs_free(succ);
  return finish_query(st, acc, out);
}

hs_status hs_sidx_column_is_null(hs_sidx_column *c, roaring_bitmap_t **out, hs_error *err) {
  if (c == NULL || out == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "scalar index query: NULL argument");
  const uint8_t *p;
  hs_status st = hs_sidx_column_view(c, c->blob_off + HS_SIDX_HEADER_BYTES, c->h.null_len, &p, err);
  if (st != HS_OK) return st;
  st = hs_sidx_roaring_load(p, (size_t)c->h.null_len, c->h.row_count, out, err);
  if (st != HS_OK) hs_error_prefix(err, "index column %s nulls: ", c->name);
  return st;
}

hs_status hs_sidx_column_is_not_null(hs_sidx_column *c, roaring_bitmap_t **out, hs_error *err) {
  roaring_bitmap_t *nulls;
  hs_status st = hs_sidx_column_is_null(c, &nulls, err);
  if (st != HS_OK) return st;
  roaring_bitmap_flip_inplace(nulls, 0, c->h.row_count);
  *out = nulls;
  return HS_OK;
}
