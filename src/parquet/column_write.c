/*
 * column_write.c — the column-chunk writer: Arrow rows of one leaf become
 * definition/repetition levels and densely packed physical values, which
 * are cut into pages at row boundaries once a page holds page_bytes_max
 * bytes of (plain-equivalent) values.
 *
 * Values are dictionary-encoded by default: an open-addressing hash table
 * of entry indices over the PLAIN-encoded dictionary, which is also the
 * dictionary page body. When the dictionary passes dictionary_bytes_max the
 * pages written so far keep their indices and the rest of the chunk is
 * PLAIN (as parquet-mr and Arrow do). If the dictionary already looks
 * hopeless when the first page fills up (high-entropy floats, unique
 * strings), that page is rewritten PLAIN and no dictionary page is written;
 * later chunks of the column then start without one. The first
 * HS_WDICT_PROBE values of a chunk are a cheaper first test: when nearly
 * all of them are distinct the dictionary goes before a page is full.
 *
 * Fixed-width values that need no conversion are read straight from the
 * Arrow buffer; everything else goes through one scratch buffer per
 * mini-batch, so memory stays bounded by one page plus the chunk output.
 *
 * Cheap paths: the definition levels of a page without nulls are not
 * stored (def_implicit) and become one RLE run; statistics of dictionary-
 * encoded byte arrays look at each distinct entry once per page.
 */
#include <string.h>

#include "compress.h"
#include "encoding.h"
#include "writer_internal.h"

#define MINIBATCH_ROWS_MAX 65536

static int phys_width_of(const hs_wleaf *l) {
  switch (l->type) {
  case HS_PQ_BOOLEAN: return 1; /* one byte (0/1) per value until the page is packed */
  case HS_PQ_INT32:
  case HS_PQ_FLOAT: return 4;
  case HS_PQ_INT64:
  case HS_PQ_DOUBLE: return 8;
  case HS_PQ_FIXED_LEN_BYTE_ARRAY: return l->type_length;
  default: return 0;
  }
}

static hs_status oom(const hs_wcol *c, hs_error *err) {
  return hs_error_set(err, HS_ERR_NOMEM, "column '%s': out of memory while writing",
                      c->leaf->dotted);
}

/* Vectors: full fixed-size lists of at least HS_WREP_IMPLICIT_MIN values,
 * one level of repetition. */
static bool rep_implicit_ok(const hs_wleaf *l) {
  return l->list_kind == HS_WLIST_FIXED && l->list_size >= HS_WREP_IMPLICIT_MIN && l->max_rep == 1;
}

/* The writer's scratch buffer of pool role `r` (write_pool.c). */
static hs_buf *wcol_role_buf(hs_wcol *c, int r) {
  switch (r) {
  case HS_WBUF_PAGES: return &c->pages;
  case HS_WBUF_VALS: return &c->vals;
  case HS_WBUF_ENC: return &c->enc;
  case HS_WBUF_BODY: return &c->body;
  case HS_WBUF_IDX: return &c->idx;
  case HS_WBUF_GATHER: return &c->gather;
  case HS_WBUF_DEF: return &c->def;
  case HS_WBUF_REP: return &c->rep;
  case HS_WBUF_LV32: return &c->lv32;
  case HS_WBUF_VIDX: return &c->vidx;
  default: return &c->dict_vals;
  }
}

hs_status hs_wcol_init(hs_wcol *c, const hs_wleaf *leaf, const hs_wopts *o, hs_error *err) {
  memset(c, 0, sizeof(*c));
  c->leaf = leaf;
  c->o = o;
  c->phys_width = phys_width_of(leaf);
  c->dict_on = leaf->encoding == HS_ENCODING_DEFAULT;
  c->def_implicit = leaf->max_def > 0;
  c->rep_implicit = rep_implicit_ok(leaf);
  c->page_serial = 1;
  for (int r = 0; r < HS_WBUF_ROLES; r++) hs_wpool_take(r, wcol_role_buf(c, r));
  if (leaf->list_kind == HS_WLIST_NONE && c->phys_width > 0)
    c->est_row_bytes = c->phys_width;
  else if (leaf->list_kind == HS_WLIST_FIXED && c->phys_width > 0)
    c->est_row_bytes = (int64_t)c->phys_width * (leaf->list_size > 0 ? leaf->list_size : 1);
  return HS_OK;
}

void hs_wcol_free(hs_wcol *c) {
  if (c == NULL) return;
  for (int r = 0; r < HS_WBUF_ROLES; r++) hs_wpool_give(r, wcol_role_buf(c, r));
  hs_buf *bufs[] = {&c->hdr, &c->dict_page, &c->pi_bytes};
  for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) hs_buf_free(bufs[i]);
  hs_wstat_free(&c->page_stat);
  hs_wstat_free(&c->chunk_stat);
  hs_free(c->table);
  hs_free(c->hashes);
  hs_free(c->offs);
  hs_free(c->stamps);
  hs_free(c->page_list);
  memset(c, 0, sizeof(*c));
}

static void dict_clear(hs_wcol *c) {
  c->dict_n = 0;
  c->dict_vals.len = 0;
  c->dict_probed = false;
  if (c->table) memset(c->table, 0, (size_t)c->table_cap * sizeof(uint32_t));
  if (c->phys_width == 1) memset(c->byte_map, 0, sizeof(c->byte_map));
}

void hs_wcol_reset(hs_wcol *c) {
  c->pages.len = 0;
  c->pages_drained = 0;
  c->dict_page.len = 0;
  c->pi_bytes.len = 0;
  c->n_pages = 0;
  c->chunk_rows = c->chunk_levels = c->chunk_nulls = 0;
  c->uncompressed_bytes = c->compressed_bytes = 0;
  c->chunk_stat.has = false;
  c->chunk_minmax_bad = false;
  c->used_plain = c->used_dict = c->used_other = false;
  dict_clear(c);
  c->dict_used = false;
  c->dict_on = c->leaf->encoding == HS_ENCODING_DEFAULT && !c->dict_hopeless;
}

/* ------------------------------------------------------------ levels */

static bool has_nulls(const struct ArrowArray *a) {
  return a->n_buffers > 0 && a->buffers[0] != NULL && a->null_count != 0;
}

static inline int64_t list_offset(const struct ArrowArray *a, int kind, int32_t size, int64_t r) {
  int64_t j = a->offset + r;
  if (kind == HS_WLIST) return ((const int32_t *)a->buffers[1])[j];
  if (kind == HS_WLIST_LARGE) return ((const int64_t *)a->buffers[1])[j];
  return j * size;
}

/* Store the page's implicit definition levels (all max_def) so that levels
 * that are not max can follow. */
static bool def_materialize(hs_wcol *c) {
  size_t n = (size_t)c->page_levels;
  c->def_implicit = false;
  c->def.len = 0;
  if (!hs_buf_reserve(&c->def, n * 2 + 2)) return false;
  int16_t *d = (int16_t *)(void *)c->def.data;
  for (size_t i = 0; i < n; i++) d[i] = c->leaf->max_def;
  c->def.len = n * 2;
  return true;
}

/* Store the page's implicit repetition levels (0, 1, 1, ... per row) so
 * that rows of another shape can follow. */
static bool rep_materialize(hs_wcol *c) {
  size_t sz = (size_t)c->leaf->list_size, n = (size_t)c->page_rows * sz;
  c->rep_implicit = false;
  c->rep.len = 0;
  if (!hs_buf_reserve(&c->rep, n * 2 + 2)) return false;
  int16_t *r = (int16_t *)(void *)c->rep.data;
  for (size_t i = 0; i < n; i++) r[i] = i % sz != 0;
  c->rep.len = n * 2;
  return true;
}

/* build_levels for a leaf inside structs (l->n_struct levels): the
 * definition level of a row counts the nullable levels defined above the
 * first null one; only rows defined down to the leaf have a value, at the
 * row's position plus every struct's offset. */
static hs_status struct_levels(hs_wcol *c, const struct ArrowArray *arr, int64_t s, int64_t m,
                               const struct ArrowArray **va, bool *contig, int64_t *vstart,
                               int64_t *nv, hs_error *err) {
  const hs_wleaf *l = c->leaf;
  const struct ArrowArray *node[HS_WSTRUCT_DEPTH_MAX + 1];
  int64_t shift[HS_WSTRUCT_DEPTH_MAX + 1];
  uint32_t ns = l->n_struct;
  bool nulls = false;
  node[0] = arr;
  shift[0] = 0;
  for (uint32_t k = 0; k < ns; k++) {
    const struct ArrowArray *p = node[k];
    if (p->n_children <= l->struct_child[k] || p->children == NULL ||
        p->children[l->struct_child[k]] == NULL)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': struct array without its member",
                          l->dotted);
    nulls |= has_nulls(p);
    node[k + 1] = p->children[l->struct_child[k]];
    shift[k + 1] = shift[k] + p->offset;
    if (node[k + 1]->length < s + m + shift[k + 1])
      return hs_error_set(err, HS_ERR_INVALID_ARG,
                          "column '%s': struct member shorter than its struct", l->dotted);
  }
  const struct ArrowArray *leaf = node[ns];
  nulls |= has_nulls(leaf);
  *va = leaf;
  int16_t maxd = l->max_def;
  int16_t *d = NULL;
  if (maxd > 0 && (nulls || !c->def_implicit)) {
    if (c->def_implicit && !def_materialize(c)) return oom(c, err);
    if (!hs_buf_reserve(&c->def, (size_t)m * 2)) return oom(c, err);
    d = (int16_t *)(void *)(c->def.data + c->def.len);
    c->def.len += (size_t)m * 2;
  }
  if (!nulls) {
    for (int64_t i = 0; d && i < m; i++) d[i] = maxd;
    *contig = true;
    *vstart = s + shift[ns];
    *nv = m;
  } else {
    c->vidx.len = 0;
    if (!hs_buf_reserve(&c->vidx, (size_t)m * 8)) return oom(c, err);
    int64_t *p = (int64_t *)(void *)c->vidx.data, k = 0;
    for (int64_t i = 0; i < m; i++) {
      int16_t lv = 0;
      bool defined = true;
      for (uint32_t j = 0; j <= ns && defined; j++) {
        bool nullable = j < ns ? l->struct_nullable[j] : l->elem_nullable;
        bool v = hs_arrow_is_valid(node[j], s + i + shift[j]);
        if (!v && !nullable)
          return hs_error_set(err, HS_ERR_SCHEMA, "column '%s': null in non-nullable field",
                              l->dotted);
        if (!v)
          defined = false;
        else
          lv = (int16_t)(lv + nullable);
      }
      if (d) d[i] = lv;
      if (defined) p[k++] = s + i + shift[ns];
    }
    *contig = false;
    *nv = k;
  }
  c->page_levels += m;
  c->page_rows += m;
  return HS_OK;
}

/* Append levels for rows [s, s+m) of `arr` and find their non-null values:
 * either the contiguous positions [*vstart, *vstart + *nv) of *va, or the
 * *nv positions written to c->vidx (*contig false). Positions are logical
 * (va->offset not added). */
static hs_status build_levels(hs_wcol *c, const struct ArrowArray *arr, int64_t s, int64_t m,
                              const struct ArrowArray **va, bool *contig, int64_t *vstart,
                              int64_t *nv, hs_error *err) {
  const hs_wleaf *l = c->leaf;
  int16_t maxd = l->max_def;
  if (l->n_struct > 0) return struct_levels(c, arr, s, m, va, contig, vstart, nv, err);
  if (l->list_kind == HS_WLIST_NONE) {
    *va = arr;
    bool nulls = has_nulls(arr);
    int16_t *d = NULL;
    if (maxd > 0 && (nulls || !c->def_implicit)) {
      if (c->def_implicit && !def_materialize(c)) return oom(c, err);
      if (!hs_buf_reserve(&c->def, (size_t)m * 2)) return oom(c, err);
      d = (int16_t *)(c->def.data + c->def.len);
      c->def.len += (size_t)m * 2;
    }
    if (!nulls) {
      for (int64_t i = 0; d && i < m; i++) d[i] = 1;
      *contig = true;
      *vstart = s;
      *nv = m;
    } else {
      if (maxd == 0)
        for (int64_t i = 0; i < m; i++)
          if (!hs_arrow_is_valid(arr, s + i))
            return hs_error_set(err, HS_ERR_SCHEMA, "column '%s': null in non-nullable field",
                                l->dotted);
      c->vidx.len = 0;
      if (!hs_buf_reserve(&c->vidx, (size_t)m * 8)) return oom(c, err);
      int64_t *p = (int64_t *)c->vidx.data, k = 0;
      for (int64_t i = 0; i < m; i++) {
        bool v = hs_arrow_is_valid(arr, s + i);
        if (d) d[i] = v;
        if (v) p[k++] = s + i;
      }
      *contig = false;
      *nv = k;
    }
    c->page_levels += m;
    c->page_rows += m;
    return HS_OK;
  }

  /* Lists: def = fn (empty), fn + 1 (null element), max (value); 0 = null list. */
  const struct ArrowArray *child = arr->children[0];
  *va = child;
  int kind = l->list_kind;
  int32_t sz = l->list_size;
  int64_t first = list_offset(arr, kind, sz, s), last = list_offset(arr, kind, sz, s + m);
  if (last < first)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': list offsets decrease", l->dotted);
  size_t cap = (size_t)(m + (last - first));
  int16_t fn = l->field_nullable;
  bool lnulls = has_nulls(arr), enulls = has_nulls(child);
  if (kind == HS_WLIST_FIXED && sz > 0 && !lnulls && !enulls && (c->def_implicit || maxd == 0)) {
    /* Full fixed-size lists without nulls (vectors): every def level is
     * max, so only the repetition levels are written, and not even those
     * while they stay implicit (rep_implicit). */
    if (!c->rep_implicit) {
      if (!hs_buf_reserve(&c->rep, (size_t)(last - first) * 2 + 2)) return oom(c, err);
      int16_t *r = (int16_t *)(void *)(c->rep.data + c->rep.len);
      for (int64_t i = 0; i < m; i++) {
        r[i * sz] = 0;
        for (int32_t j = 1; j < sz; j++) r[i * sz + j] = 1;
      }
      c->rep.len += (size_t)(last - first) * 2;
    }
    c->page_levels += last - first;
    c->page_rows += m;
    *contig = true;
    *vstart = first;
    *nv = last - first;
    return HS_OK;
  }
  if (c->def_implicit && !def_materialize(c)) return oom(c, err);
  if (c->rep_implicit && !rep_materialize(c)) return oom(c, err);
  if (!hs_buf_reserve(&c->def, cap * 2) || !hs_buf_reserve(&c->rep, cap * 2)) return oom(c, err);
  int16_t *d = (int16_t *)(c->def.data + c->def.len);
  int16_t *r = (int16_t *)(c->rep.data + c->rep.len);
  size_t k = 0;
  int64_t vals = 0;
  int64_t *p = NULL;
  if (lnulls || enulls) {
    c->vidx.len = 0;
    if (!hs_buf_reserve(&c->vidx, (size_t)(last - first) * 8)) return oom(c, err);
    p = (int64_t *)c->vidx.data;
  }
  int64_t b = first;
  for (int64_t i = 0; i < m; i++) {
    int64_t e = list_offset(arr, kind, sz, s + i + 1);
    if (e < b || e > last)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': bad list offsets at row %lld",
                          l->dotted, (long long)(s + i));
    if (lnulls && !hs_arrow_is_valid(arr, s + i)) {
      if (!fn)
        return hs_error_set(err, HS_ERR_SCHEMA, "column '%s': null list in non-nullable field",
                            l->dotted);
      d[k] = 0;
      r[k++] = 0;
    } else if (e == b) {
      d[k] = fn;
      r[k++] = 0;
    } else if (!enulls) {
      for (int64_t j = b; j < e; j++) {
        d[k] = maxd;
        r[k++] = 1;
        if (p) p[vals] = j;
        vals++;
      }
      r[k - (size_t)(e - b)] = 0;
    } else {
      for (int64_t j = b; j < e; j++) {
        bool v = hs_arrow_is_valid(child, j);
        if (!v && !l->elem_nullable)
          return hs_error_set(err, HS_ERR_SCHEMA, "column '%s': null in non-nullable element",
                              l->dotted);
        d[k] = v ? maxd : (int16_t)(maxd - 1);
        r[k++] = j == b ? 0 : 1;
        if (v) p[vals++] = j;
      }
    }
    b = e;
  }
  c->def.len += k * 2;
  c->rep.len += k * 2;
  c->page_levels += (int64_t)k;
  c->page_rows += m;
  *contig = p == NULL;
  *vstart = first;
  *nv = vals;
  return HS_OK;
}

/* ------------------------------------------------------------ gather */

/* Convert the selected values to physical form. Fixed width: *fixed points
 * at nv * phys_width bytes (possibly straight into the Arrow buffer).
 * BYTE_ARRAY: *ba points at nv views into the Arrow data buffer. */
static hs_status gather(hs_wcol *c, const struct ArrowArray *va, bool contig, int64_t vstart,
                        int64_t nv, const uint8_t **fixed, const hs_wbytes **ba, hs_error *err) {
  const hs_wleaf *l = c->leaf;
  const int64_t *pos = (const int64_t *)c->vidx.data;
  int64_t base = va->offset;
#define POS(k) ((contig ? vstart + (k) : pos[k]) + base)
  if (nv == 0) {
    *fixed = NULL;
    *ba = NULL;
    return HS_OK;
  }
  if (va->n_buffers < 2 || va->buffers[1] == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': missing values buffer", l->dotted);
  const uint8_t *src = (const uint8_t *)va->buffers[1];
  size_t w = (size_t)c->phys_width;
  c->gather.len = 0;

  if (l->conv == HS_WCONV_BINARY || l->conv == HS_WCONV_LARGE_BINARY) {
    if (va->n_buffers < 3)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': missing data buffer", l->dotted);
    /* The C data interface lets a zero-size buffer be NULL (all values empty). */
    static const uint8_t no_bytes[1];
    bool no_data = va->buffers[2] == NULL;
    const uint8_t *data = no_data ? no_bytes : (const uint8_t *)va->buffers[2];
    if (!hs_buf_reserve(&c->gather, (size_t)nv * sizeof(hs_wbytes))) return oom(c, err);
    hs_wbytes *out = (hs_wbytes *)c->gather.data;
    for (int64_t k = 0; k < nv; k++) {
      int64_t j = POS(k), b, e;
      if (l->conv == HS_WCONV_BINARY) {
        b = ((const int32_t *)src)[j];
        e = ((const int32_t *)src)[j + 1];
      } else {
        b = ((const int64_t *)src)[j];
        e = ((const int64_t *)src)[j + 1];
      }
      if (e < b || e - b > INT32_MAX)
        return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': bad value length at %lld",
                            l->dotted, (long long)j);
      if (no_data && e != b)
        return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': missing data buffer", l->dotted);
      out[k].p = no_data ? data : data + b;
      out[k].len = (uint32_t)(e - b);
    }
    *ba = out;
    *fixed = NULL;
    return HS_OK;
  }

  if (l->conv == HS_WCONV_COPY && contig) {
    *fixed = src + (size_t)(vstart + base) * w;
    *ba = NULL;
    return HS_OK;
  }
  if (!hs_buf_reserve(&c->gather, (size_t)nv * w)) return oom(c, err);
  uint8_t *o = c->gather.data;
  int32_t *o32 = (int32_t *)(void *)o;
  int64_t *o64 = (int64_t *)(void *)o;
  switch (l->conv) {
  case HS_WCONV_COPY:
    if (w == 4)
      for (int64_t k = 0; k < nv; k++) memcpy(o + k * 4, src + POS(k) * 4, 4);
    else if (w == 8)
      for (int64_t k = 0; k < nv; k++) memcpy(o + k * 8, src + POS(k) * 8, 8);
    else
      for (int64_t k = 0; k < nv; k++) memcpy(o + (size_t)k * w, src + (size_t)POS(k) * w, w);
    break;
  case HS_WCONV_I8:
    for (int64_t k = 0; k < nv; k++) o32[k] = ((const int8_t *)src)[POS(k)];
    break;
  case HS_WCONV_U8:
    for (int64_t k = 0; k < nv; k++) o32[k] = ((const uint8_t *)src)[POS(k)];
    break;
  case HS_WCONV_I16:
    for (int64_t k = 0; k < nv; k++) o32[k] = ((const int16_t *)src)[POS(k)];
    break;
  case HS_WCONV_U16:
    for (int64_t k = 0; k < nv; k++) o32[k] = ((const uint16_t *)src)[POS(k)];
    break;
  case HS_WCONV_DATE64:
    for (int64_t k = 0; k < nv; k++) {
      int64_t ms = ((const int64_t *)src)[POS(k)];
      int64_t days = ms / 86400000 - (ms % 86400000 < 0);
      o32[k] = (int32_t)days;
    }
    break;
  case HS_WCONV_MUL1000_I32:
    for (int64_t k = 0; k < nv; k++)
      o32[k] = (int32_t)((uint32_t)((const int32_t *)src)[POS(k)] * 1000u);
    break;
  case HS_WCONV_MUL1000_I64:
    for (int64_t k = 0; k < nv; k++)
      o64[k] = (int64_t)((uint64_t)((const int64_t *)src)[POS(k)] * 1000u);
    break;
  case HS_WCONV_DECIMAL:
    for (int64_t k = 0; k < nv; k++) {
      const uint8_t *v = src + (size_t)POS(k) * 16;
      uint8_t *d = o + (size_t)k * w;
      for (size_t b = 0; b < w; b++) d[b] = v[w - 1 - b];
    }
    break;
  case HS_WCONV_BOOL:
    for (int64_t k = 0; k < nv; k++) {
      int64_t j = POS(k);
      o[k] = (src[j >> 3] >> (j & 7)) & 1;
    }
    break;
  default: return hs_error_set(err, HS_ERR_INTERNAL, "column '%s': bad conversion", l->dotted);
  }
#undef POS
  c->gather.len = (size_t)nv * w;
  *fixed = o;
  *ba = NULL;
  return HS_OK;
}

/* -------------------------------------------------------- dictionary */

static inline uint32_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return (uint32_t)x;
}

static uint32_t hash_bytes(const uint8_t *p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xff51afd7ed558ccdull);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  /* The 0-7 byte tail in at most two overlapping loads (n is hashed too). */
  size_t r = n - i;
  uint64_t t = 0;
  if (r >= 4)
    t = (uint64_t)hs_load_u32le(p + i) | (uint64_t)hs_load_u32le(p + n - 4) << 32;
  else if (r > 0)
    t = (uint64_t)p[i] | (uint64_t)p[i + r / 2] << 8 | (uint64_t)p[n - 1] << 16;
  return mix64(h ^ t);
}

static inline uint32_t hash_fixed(const uint8_t *p, size_t w) {
  if (w == 4) return mix64(hs_load_u32le(p));
  if (w == 8) return mix64(hs_load_u64le(p));
  return hash_bytes(p, w);
}

static bool dict_grow_table(hs_wcol *c) {
  uint32_t cap = c->table_cap ? c->table_cap * 2 : 1024;
  uint32_t *t = hs_calloc(cap, sizeof(uint32_t));
  if (!t) return false;
  uint32_t mask = cap - 1;
  for (uint32_t e = 0; e < c->dict_n; e++) {
    uint32_t i = c->hashes[e] & mask;
    while (t[i]) i = (i + 1) & mask;
    t[i] = e + 1;
  }
  hs_free(c->table);
  c->table = t;
  c->table_cap = cap;
  return true;
}

static bool dict_reserve_entry(hs_wcol *c) {
  if ((uint64_t)(c->dict_n + 1) * 2 > c->table_cap && !dict_grow_table(c)) return false;
  if (c->dict_n == c->dict_cap) {
    uint32_t cap = c->dict_cap ? c->dict_cap * 2 : 1024;
    uint32_t *h = hs_realloc(c->hashes, (size_t)cap * sizeof(uint32_t));
    if (!h) return false;
    c->hashes = h;
    if (c->phys_width == 0) {
      uint32_t *o = hs_realloc(c->offs, (size_t)cap * sizeof(uint32_t));
      if (!o) return false;
      c->offs = o;
      o = hs_realloc(c->stamps, (size_t)cap * sizeof(uint32_t));
      if (!o) return false;
      c->stamps = o;
    }
    c->dict_cap = cap;
  }
  return true;
}

/* Equality of two w-byte values, without a library call for the common
 * widths (the hash table's hot loop). */
static inline bool fixed_eq(const uint8_t *a, const uint8_t *b, size_t w) {
  if (w == 8) return hs_load_u64le(a) == hs_load_u64le(b);
  if (w == 4) return hs_load_u32le(a) == hs_load_u32le(b);
  return memcmp(a, b, w) == 0;
}

static inline bool bytes_eq(const uint8_t *a, const uint8_t *b, size_t n) {
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8)
      if (hs_load_u64le(a + i) != hs_load_u64le(b + i)) return false;
    return hs_load_u64le(a + n - 8) == hs_load_u64le(b + n - 8); /* may overlap */
  }
  if (n >= 4)
    return hs_load_u32le(a) == hs_load_u32le(b) &&
           hs_load_u32le(a + n - 4) == hs_load_u32le(b + n - 4);
  return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

/* 1-byte values (BOOLEAN as 0/1 bytes): a direct map, entries in order of
 * first appearance exactly as the hash table would number them. */
static hs_status dict_add_byte(hs_wcol *c, const uint8_t *f, int64_t nv, hs_error *err) {
  uint32_t *out = (uint32_t *)(c->idx.data + c->idx.len);
  for (int64_t k = 0; k < nv; k++) {
    uint8_t e = c->byte_map[f[k]];
    if (e == 0) {
      if (!dict_reserve_entry(c) || !hs_buf_append(&c->dict_vals, &f[k], 1)) return oom(c, err);
      c->hashes[c->dict_n] = 0;
      e = (uint8_t)++c->dict_n;
      c->byte_map[f[k]] = e;
    }
    out[k] = (uint32_t)e - 1;
  }
  c->idx.len += (size_t)nv * 4;
  return HS_OK;
}

static hs_status dict_add_fixed(hs_wcol *c, const uint8_t *f, int64_t nv, hs_error *err) {
  size_t w = (size_t)c->phys_width;
  if (!hs_buf_reserve(&c->idx, (size_t)nv * 4)) return oom(c, err);
  if (w == 1) return dict_add_byte(c, f, nv, err);
  uint32_t *out = (uint32_t *)(c->idx.data + c->idx.len);
  for (int64_t k = 0; k < nv; k++) {
    const uint8_t *x = f + (size_t)k * w;
    uint32_t h = hash_fixed(x, w);
    if ((uint64_t)(c->dict_n + 1) * 2 > c->table_cap && !dict_grow_table(c)) return oom(c, err);
    uint32_t mask = c->table_cap - 1, i = h & mask, e;
    while ((e = c->table[i]) != 0) {
      if (c->hashes[e - 1] == h && fixed_eq(c->dict_vals.data + (size_t)(e - 1) * w, x, w)) break;
      i = (i + 1) & mask;
    }
    if (e == 0) {
      if (!dict_reserve_entry(c) || !hs_buf_append(&c->dict_vals, x, w)) return oom(c, err);
      if (c->table_cap - 1 != mask) { /* the table grew: find the slot again */
        mask = c->table_cap - 1;
        i = h & mask;
        while (c->table[i]) i = (i + 1) & mask;
      }
      c->hashes[c->dict_n] = h;
      e = ++c->dict_n;
      c->table[i] = e;
    }
    out[k] = e - 1;
  }
  c->idx.len += (size_t)nv * 4;
  return HS_OK;
}

static hs_status dict_add_bytes(hs_wcol *c, const hs_wbytes *v, int64_t nv, hs_error *err) {
  if (!hs_buf_reserve(&c->idx, (size_t)nv * 4)) return oom(c, err);
  uint32_t *out = (uint32_t *)(c->idx.data + c->idx.len);
  for (int64_t k = 0; k < nv; k++) {
    uint32_t h = hash_bytes(v[k].p, v[k].len);
    if ((uint64_t)(c->dict_n + 1) * 2 > c->table_cap && !dict_grow_table(c)) return oom(c, err);
    uint32_t mask = c->table_cap - 1, i = h & mask, e;
    while ((e = c->table[i]) != 0) {
      if (c->hashes[e - 1] == h) {
        const uint8_t *d = c->dict_vals.data + c->offs[e - 1];
        if (hs_load_u32le(d) == v[k].len && bytes_eq(d + 4, v[k].p, v[k].len)) break;
      }
      i = (i + 1) & mask;
    }
    if (e == 0) {
      if (c->dict_vals.len + 4 + (size_t)v[k].len > UINT32_MAX)
        return hs_error_set(err, HS_ERR_NOMEM, "column '%s': dictionary over 4 GiB",
                            c->leaf->dotted);
      uint8_t lenb[4];
      hs_store_u32le(lenb, v[k].len);
      size_t at = c->dict_vals.len;
      if (!dict_reserve_entry(c) || !hs_buf_append(&c->dict_vals, lenb, 4) ||
          !hs_buf_append(&c->dict_vals, v[k].p, v[k].len))
        return oom(c, err);
      if (c->table_cap - 1 != mask) {
        mask = c->table_cap - 1;
        i = h & mask;
        while (c->table[i]) i = (i + 1) & mask;
      }
      c->hashes[c->dict_n] = h;
      c->offs[c->dict_n] = (uint32_t)at;
      c->stamps[c->dict_n] = 0;
      e = ++c->dict_n;
      c->table[i] = e;
    }
    out[k] = e - 1;
  }
  c->idx.len += (size_t)nv * 4;
  return HS_OK;
}

/* Page statistics over the last nv dictionary indices of the page: each
 * distinct entry is compared once per page (stamps), not once per value;
 * min and max over the distinct values are those over all values. */
static bool dict_stats_bytes(hs_wcol *c, int64_t nv) {
  const uint32_t *ix = (const uint32_t *)(const void *)(c->idx.data + c->idx.len) - nv;
  hs_wstat *s = &c->page_stat;
  for (int64_t k = 0; k < nv; k++) {
    uint32_t e = ix[k];
    if (c->stamps[e] == c->page_serial) continue;
    c->stamps[e] = c->page_serial;
    const uint8_t *d = c->dict_vals.data + c->offs[e];
    hs_wbytes v = {d + 4, hs_load_u32le(d)};
    if (!hs_wstat_add_bytes(s, &v, 1)) return false;
  }
  return true;
}

/* Rewrite the current page's indices as PLAIN values and drop the
 * dictionary for the rest of this chunk (no dictionary page was due). */
static hs_status dict_abandon(hs_wcol *c, hs_error *err) {
  const uint32_t *ix = (const uint32_t *)c->idx.data;
  size_t n = c->idx.len / 4;
  c->vals.len = 0;
  if (c->phys_width > 0) {
    size_t w = (size_t)c->phys_width;
    if (!hs_buf_reserve(&c->vals, n * w)) return oom(c, err);
    for (size_t k = 0; k < n; k++) memcpy(c->vals.data + k * w, c->dict_vals.data + ix[k] * w, w);
    c->vals.len = n * w;
  } else {
    for (size_t k = 0; k < n; k++) {
      const uint8_t *d = c->dict_vals.data + c->offs[ix[k]];
      if (!hs_buf_append(&c->vals, d, 4 + (size_t)hs_load_u32le(d))) return oom(c, err);
    }
  }
  c->idx.len = 0;
  c->dict_on = false;
  c->dict_hopeless = true;
  dict_clear(c);
  return HS_OK;
}

/* -------------------------------------------------------------- pages */

/* One RLE run of `n` (>= 8) copies of `v`: what the RLE encoder writes for
 * such a run (varint header n << 1, then v in ceil(bw / 8) bytes). */
static bool emit_rle_run(hs_buf *out, uint64_t n, uint32_t v, int bw) {
  while (n > 0) {
    uint64_t take = n < ((uint64_t)1 << 30) ? n : ((uint64_t)1 << 30); /* as the encoder splits */
    uint8_t tmp[16];
    size_t k = 0;
    for (uint64_t h = take << 1;; h >>= 7) {
      tmp[k++] = (uint8_t)((h & 0x7f) | (h >= 0x80 ? 0x80 : 0));
      if (h < 0x80) break;
    }
    for (int b = 0; b < (bw + 7) / 8; b++) tmp[k++] = (uint8_t)(v >> (8 * b));
    if (!hs_buf_append(out, tmp, k)) return false;
    n -= take;
  }
  return true;
}

static hs_status encode_levels(hs_wcol *c, const hs_buf *lv, int bw, bool prefix, hs_error *err) {
  size_t at = c->enc.len;
  if (prefix && !hs_buf_append(&c->enc, "\0\0\0\0", 4)) return oom(c, err);
  hs_status st = HS_OK;
  if (lv == &c->def && c->def_implicit) {
    if (!emit_rle_run(&c->enc, (uint64_t)c->page_levels, (uint32_t)c->leaf->max_def, bw))
      return oom(c, err);
  } else if (lv == &c->rep && c->rep_implicit) {
    /* Each row 0, 1 x (size - 1) comes out of the RLE encoder as one
     * bit-packed group (0 and seven 1s) and a run of size - 8 ones, and
     * leaves it at a row boundary: the same bytes for every row. */
    uint8_t row[16];
    size_t k = 0;
    row[k++] = 0x03; /* one bit-packed group of 8 */
    row[k++] = 0xFE; /* 0, 1, 1, 1, 1, 1, 1, 1 at 1 bit each */
    for (uint64_t h = (uint64_t)(c->leaf->list_size - 8) << 1;; h >>= 7) {
      row[k++] = (uint8_t)((h & 0x7f) | (h >= 0x80 ? 0x80 : 0));
      if (h < 0x80) break;
    }
    row[k++] = 0x01; /* the run's value */
    if (!hs_buf_reserve(&c->enc, k * (size_t)c->page_rows)) return oom(c, err);
    for (int64_t r = 0; r < c->page_rows; r++) {
      memcpy(c->enc.data + c->enc.len, row, k);
      c->enc.len += k;
    }
  } else {
    /* Widened into a reused buffer (the encoder takes uint32). */
    size_t n = lv->len / 2;
    const int16_t *src = (const int16_t *)(const void *)lv->data;
    c->lv32.len = 0;
    if (!hs_buf_reserve(&c->lv32, n * 4 + 4)) return oom(c, err);
    uint32_t *w32 = (uint32_t *)(void *)c->lv32.data;
    for (size_t i = 0; i < n; i++) w32[i] = (uint16_t)src[i];
    if (n > 0) st = hs_rle_encode_u32(w32, n, bw, &c->enc, err);
  }
  if (st != HS_OK) return st;
  if (prefix) hs_store_u32le(c->enc.data + at, (uint32_t)(c->enc.len - at - 4));
  return HS_OK;
}

/* Split PLAIN byte arrays in c->vals into int32 offsets (c->gather) and the
 * concatenated bytes (c->body), as the DELTA encoders want them. */
static hs_status split_plain_bytes(hs_wcol *c, int64_t n, hs_error *err) {
  c->gather.len = 0;
  c->body.len = 0;
  if (!hs_buf_reserve(&c->gather, (size_t)(n + 1) * 4) || !hs_buf_reserve(&c->body, c->vals.len))
    return oom(c, err);
  int32_t *off = (int32_t *)c->gather.data;
  size_t p = 0;
  off[0] = 0;
  for (int64_t k = 0; k < n; k++) {
    uint32_t len = hs_load_u32le(c->vals.data + p);
    memcpy(c->body.data + c->body.len, c->vals.data + p + 4, len);
    c->body.len += len;
    p += 4 + len;
    if (c->body.len > INT32_MAX)
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s': page over 2 GiB", c->leaf->dotted);
    off[k + 1] = (int32_t)c->body.len;
  }
  return HS_OK;
}

/* Encode the page's values after its levels in c->enc. PLAIN values that
 * need no transformation are left in c->vals when `keep` (the caller can
 * use them from there) and *kept says so. */
static hs_status encode_values(hs_wcol *c, int32_t *encoding, bool keep, bool *kept,
                               hs_error *err) {
  *kept = false;
  const hs_wleaf *l = c->leaf;
  int64_t n = c->page_values;
  if (c->dict_on) {
    *encoding = HS_PQ_ENC_RLE_DICTIONARY;
    c->dict_used = c->used_dict = true;
    return hs_dict_indices_encode((const uint32_t *)c->idx.data, (size_t)n, c->dict_n, &c->enc,
                                  err);
  }
  int enc = l->encoding;
  if (enc == HS_ENCODING_DEFAULT) /* the dictionary's fallback */
    enc = c->o->delta_fallback && (l->type == HS_PQ_INT32 || l->type == HS_PQ_INT64)
              ? HS_ENCODING_DELTA_BINARY_PACKED
              : HS_ENCODING_PLAIN;
  *encoding = enc;
  hs_status st = HS_OK;
  switch (enc) {
  case HS_ENCODING_PLAIN:
    c->used_plain = true;
    if (l->type == HS_PQ_BOOLEAN) {
      size_t nb = ((size_t)n + 7) / 8;
      if (!hs_buf_reserve(&c->enc, nb)) return oom(c, err);
      uint8_t *o = c->enc.data + c->enc.len;
      memset(o, 0, nb);
      for (int64_t k = 0; k < n; k++) o[k >> 3] |= (uint8_t)(c->vals.data[k] << (k & 7));
      c->enc.len += nb;
      return HS_OK;
    }
    if (keep) {
      *kept = true;
      return HS_OK;
    }
    return hs_buf_append(&c->enc, c->vals.data, c->vals.len) ? HS_OK : oom(c, err);
  case HS_ENCODING_DELTA_BINARY_PACKED:
    if (l->type == HS_PQ_INT32)
      st = hs_delta_binary_encode_i32((const int32_t *)c->vals.data, (size_t)n, &c->enc, err);
    else
      st = hs_delta_binary_encode_i64((const int64_t *)c->vals.data, (size_t)n, &c->enc, err);
    break;
  case HS_ENCODING_BYTE_STREAM_SPLIT:
    st = hs_byte_stream_split_encode(c->vals.data, (size_t)n, c->phys_width, &c->enc, err);
    break;
  case HS_ENCODING_DELTA_LENGTH_BYTE_ARRAY:
  case HS_ENCODING_DELTA_BYTE_ARRAY:
    if (l->type == HS_PQ_FIXED_LEN_BYTE_ARRAY) {
      /* FLBA values lie back to back: offsets every phys_width bytes. */
      if (c->vals.len > INT32_MAX)
        return hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s': page over 2 GiB", l->dotted);
      c->gather.len = 0;
      if (!hs_buf_reserve(&c->gather, (size_t)(n + 1) * 4)) return oom(c, err);
      int32_t *off = (int32_t *)c->gather.data;
      for (int64_t k = 0; k <= n; k++) off[k] = (int32_t)(k * c->phys_width);
      st = hs_delta_byte_array_encode(off, c->vals.data, (size_t)n, &c->enc, err);
      break;
    }
    if ((st = split_plain_bytes(c, n, err)) != HS_OK) return st;
    if (enc == HS_ENCODING_DELTA_LENGTH_BYTE_ARRAY)
      st = hs_delta_length_encode((const int32_t *)c->gather.data, c->body.data, (size_t)n, &c->enc,
                                  err);
    else
      st = hs_delta_byte_array_encode((const int32_t *)c->gather.data, c->body.data, (size_t)n,
                                      &c->enc, err);
    break;
  default: return hs_error_set(err, HS_ERR_INTERNAL, "column '%s': encoding %d", l->dotted, enc);
  }
  c->used_other = true;
  c->other_encoding = enc;
  return st;
}

/* Compress enc[from..] after copying enc[0..from) verbatim into body. */
static hs_status compress_into_body(hs_wcol *c, size_t from, hs_error *err) {
  c->body.len = 0;
  if (!hs_buf_append(&c->body, c->enc.data, from)) return oom(c, err);
  if (c->o->codec == HS_PQ_CODEC_UNCOMPRESSED)
    return hs_buf_append(&c->body, c->enc.data + from, c->enc.len - from) ? HS_OK : oom(c, err);
  return hs_pq_compress(c->o->codec, c->o->level, c->enc.data + from, c->enc.len - from, &c->body,
                        err);
}

static hs_status add_page_entry(hs_wcol *c, int64_t offset, size_t size, hs_error *err) {
  if (c->n_pages == c->pages_cap) {
    uint32_t cap = c->pages_cap ? c->pages_cap * 2 : 16;
    hs_wpage *p = hs_realloc(c->page_list, (size_t)cap * sizeof(hs_wpage));
    if (!p) return oom(c, err);
    c->page_list = p;
    c->pages_cap = cap;
  }
  hs_wpage *pg = &c->page_list[c->n_pages++];
  memset(pg, 0, sizeof(*pg));
  pg->offset = offset;
  pg->size = (int32_t)size;
  pg->first_row = c->chunk_rows;
  pg->null_count = c->page_levels - c->page_values;
  pg->null_page = c->page_values == 0;
  pg->has_minmax = c->page_stat.has;
  if (pg->has_minmax) {
    pg->min_off = (uint32_t)c->pi_bytes.len;
    pg->min_len = (uint32_t)c->page_stat.min.len;
    if (!hs_buf_append(&c->pi_bytes, c->page_stat.min.data, c->page_stat.min.len))
      return oom(c, err);
    pg->max_off = (uint32_t)c->pi_bytes.len;
    pg->max_len = (uint32_t)c->page_stat.max.len;
    if (!hs_buf_append(&c->pi_bytes, c->page_stat.max.data, c->page_stat.max.len))
      return oom(c, err);
  }
  return HS_OK;
}

static hs_status flush_page(hs_wcol *c, bool full, hs_error *err) {
  const hs_wleaf *l = c->leaf;
  hs_status st;
  if (c->page_levels == 0) return HS_OK;
  /* A first page whose dictionary outweighs half of it gives the dictionary
   * up, unless the values are fixed-width, repeat (at most 15/16 distinct)
   * and their indices take at most half their bits: then the dictionary
   * (bounded by dictionary_bytes_max) pays for itself over the chunk's
   * later pages (prices with cents: 17-bit indices for 8-byte doubles). */
  bool dict_pays = c->phys_width > 0 && (int64_t)c->dict_n * 16 <= c->page_values * 15 &&
                   hs_bit_width((uint64_t)c->dict_n) * 2 <= 8 * c->phys_width;
  if (full && c->dict_on && !c->dict_used && (int64_t)c->dict_vals.len * 2 > c->page_bytes &&
      !dict_pays && (st = dict_abandon(c, err)) != HS_OK)
    return st;
  hs_wstat_fix_zero(&c->page_stat, l->sort);
  if (c->page_values > 0 && !c->page_stat.has) c->chunk_minmax_bad = true;

  bool v2 = c->o->page_version == 2;
  c->enc.len = 0;
  size_t rep_len = 0, def_len = 0;
  if (l->max_rep > 0) {
    if ((st = encode_levels(c, &c->rep, hs_bit_width((uint64_t)l->max_rep), !v2, err)) != HS_OK)
      return st;
    rep_len = c->enc.len;
  }
  if (l->max_def > 0) {
    /* A run needs 8 levels; shorter pages go through the encoder. */
    if (c->def_implicit && c->page_levels < 8 && !def_materialize(c)) return oom(c, err);
    if ((st = encode_levels(c, &c->def, hs_bit_width((uint64_t)l->max_def), !v2, err)) != HS_OK)
      return st;
    def_len = c->enc.len - rep_len;
  }
  size_t lv_len = c->enc.len;
  int32_t encoding = 0;
  /* The page body as at most two pieces, copied once into c->pages:
   * uncompressed, the levels and values where they were built; compressed,
   * c->body (data page v2 compresses PLAIN values straight from c->vals). */
  bool raw = c->o->codec == HS_PQ_CODEC_UNCOMPRESSED, kept, stored_raw = raw;
  /* Pages v2 kept raw when compression hardly pays: booleans always (one bit
   * a row: the codec saves at most 1/8 byte a row, and a selective read
   * would pay a whole page's decompression for a few rows). */
  if (v2 && c->o->compress_min_saving_pct > 0 && l->type == HS_PQ_BOOLEAN) raw = stored_raw = true;
  if ((st = encode_values(c, &encoding, raw || v2, &kept, err)) != HS_OK) return st;
  size_t raw_len = c->enc.len + (kept ? c->vals.len : 0);
  const uint8_t *p1 = c->enc.data, *p2 = kept ? c->vals.data : NULL;
  size_t n1 = c->enc.len, n2 = kept ? c->vals.len : 0;
  if (!raw) {
    if (kept) {
      c->body.len = 0;
      if (!hs_buf_append(&c->body, c->enc.data, lv_len)) return oom(c, err);
      st = hs_pq_compress(c->o->codec, c->o->level, c->vals.data, c->vals.len, &c->body, err);
    } else {
      st = compress_into_body(c, v2 ? lv_len : 0, err);
    }
    if (st != HS_OK) return st;
    p1 = c->body.data;
    n1 = c->body.len;
    p2 = NULL;
    n2 = 0;
    /* Data page v2 may keep a page the codec hardly shrinks uncompressed:
     * the levels are never compressed there, so the saving is the values'. */
    if (v2 && c->o->compress_min_saving_pct > 0) {
      size_t vraw = raw_len - lv_len, vz = n1 - lv_len;
      if ((double)vz > (double)vraw * (100 - c->o->compress_min_saving_pct) / 100.0) {
        /* c->enc still holds the levels and values (or only the levels,
         * the values kept in c->vals) uncompressed. */
        p1 = c->enc.data;
        n1 = c->enc.len;
        p2 = kept ? c->vals.data : NULL;
        n2 = kept ? c->vals.len : 0;
        stored_raw = true;
      }
    }
  }
  if (raw_len > INT32_MAX || n1 + n2 > INT32_MAX)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s': page over 2 GiB", l->dotted);

  hs_pq_page_header ph;
  memset(&ph, 0, sizeof(ph));
  ph.uncompressed_page_size = (int32_t)raw_len;
  ph.compressed_page_size = (int32_t)(n1 + n2);
  if (c->o->crc) {
    ph.has_crc = true;
    uint32_t crc = hs_pq_crc32(0, p1, n1); /* v2: the levels, then the values as stored */
    if (n2) crc = hs_pq_crc32(crc, p2, n2);
    ph.crc = (int32_t)crc;
  }
  if (v2) {
    ph.type = HS_PQ_DATA_PAGE_V2;
    ph.has_data_page_v2 = true;
    ph.data_page_v2.num_values = (int32_t)c->page_levels;
    ph.data_page_v2.num_nulls = (int32_t)(c->page_levels - c->page_values);
    ph.data_page_v2.num_rows = (int32_t)c->page_rows;
    ph.data_page_v2.encoding = encoding;
    ph.data_page_v2.definition_levels_byte_length = (int32_t)def_len;
    ph.data_page_v2.repetition_levels_byte_length = (int32_t)rep_len;
    ph.data_page_v2.is_compressed = !stored_raw;
  } else {
    ph.type = HS_PQ_DATA_PAGE;
    ph.has_data_page = true;
    ph.data_page.num_values = (int32_t)c->page_levels;
    ph.data_page.encoding = encoding;
    ph.data_page.definition_level_encoding = HS_PQ_ENC_RLE;
    ph.data_page.repetition_level_encoding = HS_PQ_ENC_RLE;
  }
  c->hdr.len = 0;
  if ((st = hs_pq_page_header_write(&ph, &c->hdr, err)) != HS_OK) return st;
  int64_t at = c->pages_drained + (int64_t)c->pages.len;
  if (!hs_buf_reserve(&c->pages, c->hdr.len + n1 + n2) ||
      !hs_buf_append(&c->pages, c->hdr.data, c->hdr.len) || !hs_buf_append(&c->pages, p1, n1) ||
      !hs_buf_append(&c->pages, p2, n2))
    return oom(c, err);
  if ((st = add_page_entry(c, at, c->hdr.len + n1 + n2, err)) != HS_OK) return st;

  c->uncompressed_bytes += (int64_t)(c->hdr.len + raw_len);
  c->compressed_bytes += (int64_t)(c->hdr.len + n1 + n2);
  c->chunk_rows += c->page_rows;
  c->chunk_levels += c->page_levels;
  c->chunk_nulls += c->page_levels - c->page_values;
  if (c->page_stat.has &&
      !hs_wstat_merge(&c->chunk_stat, l->sort, c->page_stat.min.data, c->page_stat.min.len,
                      c->page_stat.max.data, c->page_stat.max.len))
    return oom(c, err);

  c->def.len = c->rep.len = c->vals.len = c->idx.len = 0;
  c->page_levels = c->page_values = c->page_rows = c->page_bytes = 0;
  c->page_stat.has = false;
  c->def_implicit = l->max_def > 0;
  c->rep_implicit = rep_implicit_ok(l);
  c->page_serial++;
  return HS_OK;
}

/* ------------------------------------------------------------- driver */

static hs_status add_values(hs_wcol *c, const uint8_t *f, const hs_wbytes *ba, int64_t nv,
                            hs_error *err) {
  const hs_wleaf *l = c->leaf;
  if (nv == 0) return HS_OK;
  size_t w = (size_t)c->phys_width;
  int64_t bytes = 0;
  /* Dictionary-encoded byte arrays: statistics after the lookup, over the
   * entries this page has not seen yet (see dict_stats_bytes). */
  bool late_stats = ba && c->dict_on;
  if ((c->o->statistics || c->o->page_index) && !late_stats) {
    bool ok = ba ? hs_wstat_add_bytes(&c->page_stat, ba, nv)
                 : hs_wstat_add_fixed(&c->page_stat, l->sort, f, nv, w);
    if (!ok) return oom(c, err);
  }
  if (ba) {
    for (int64_t k = 0; k < nv; k++) bytes += 4 + (int64_t)ba[k].len;
  } else {
    bytes = nv * (int64_t)w;
  }
  hs_status st;
  if (c->dict_on) {
    st = ba ? dict_add_bytes(c, ba, nv, err) : dict_add_fixed(c, f, nv, err);
    if (st != HS_OK) return st;
    if (late_stats && (c->o->statistics || c->o->page_index) && !dict_stats_bytes(c, nv))
      return oom(c, err);
  } else if (ba) {
    if (!hs_buf_reserve(&c->vals, (size_t)bytes)) return oom(c, err);
    uint8_t *o = c->vals.data + c->vals.len;
    for (int64_t k = 0; k < nv; k++) {
      hs_store_u32le(o, ba[k].len);
      memcpy(o + 4, ba[k].p, ba[k].len);
      o += 4 + ba[k].len;
    }
    c->vals.len += (size_t)bytes;
  } else if (!hs_buf_append(&c->vals, f, (size_t)nv * w)) {
    return oom(c, err);
  }
  c->page_values += nv;
  c->page_bytes += bytes;
  return HS_OK;
}

hs_status hs_wcol_write(hs_wcol *c, const struct ArrowArray *arr, int64_t start, int64_t n,
                        hs_error *err) {
  hs_status st;
  int64_t page_max = c->leaf->max_rep > 0 ? c->o->list_page_bytes_max : c->o->page_bytes_max;
  if (page_max <= 0) page_max = 1;
  while (n > 0) {
    int64_t m = 1;
    if (c->est_row_bytes > 0) {
      int64_t room = page_max - c->page_bytes;
      m = room > 0 ? room / c->est_row_bytes : 1;
      if (m < 1) m = 1;
      if (m > MINIBATCH_ROWS_MAX) m = MINIBATCH_ROWS_MAX;
    }
    bool probing = c->dict_on && !c->dict_used && !c->dict_probed;
    if (probing && m > HS_WDICT_PROBE - c->page_values)
      m = HS_WDICT_PROBE - c->page_values > 0 ? HS_WDICT_PROBE - c->page_values : 1;
    if (m > n) m = n;
    const struct ArrowArray *va;
    bool contig;
    int64_t vstart = 0, nv = 0, before = c->page_bytes, lv_before = c->page_levels;
    if ((st = build_levels(c, arr, start, m, &va, &contig, &vstart, &nv, err)) != HS_OK) return st;
    const uint8_t *f = NULL;
    const hs_wbytes *ba = NULL;
    if ((st = gather(c, va, contig, vstart, nv, &f, &ba, err)) != HS_OK) return st;
    if ((st = add_values(c, f, ba, nv, err)) != HS_OK) return st;
    /* Estimate from this mini-batch; levels count too (2 bytes each) so
     * that all-null or empty-list rows still advance the page. */
    int64_t used = (c->page_bytes - before) + (c->page_levels - lv_before) / 4;
    c->est_row_bytes = used / m > 0 ? used / m : 1;
    c->page_bytes += (c->page_levels - lv_before) / 4;
    start += m;
    n -= m;
    if (probing && c->page_values >= HS_WDICT_PROBE) {
      c->dict_probed = true;
      if ((int64_t)c->dict_n * 16 > c->page_values * 15 && (st = dict_abandon(c, err)) != HS_OK)
        return st;
    }
    if (c->page_bytes >= page_max) {
      if ((st = flush_page(c, true, err)) != HS_OK) return st;
    } else if (c->dict_on && (int64_t)c->dict_vals.len > c->o->dictionary_bytes_max) {
      if (!c->dict_used) {
        if ((st = dict_abandon(c, err)) != HS_OK) return st;
      } else {
        if ((st = flush_page(c, false, err)) != HS_OK) return st;
        c->dict_on = false;
      }
    }
  }
  return HS_OK;
}

hs_status hs_wcol_finish(hs_wcol *c, hs_error *err) {
  hs_status st;
  if ((st = flush_page(c, false, err)) != HS_OK) return st;
  hs_wstat_fix_zero(&c->chunk_stat, c->leaf->sort);
  c->dict_page.len = 0;
  if (!c->dict_used) return HS_OK;
  c->enc.len = 0;
  if (!hs_buf_append(&c->enc, c->dict_vals.data, c->dict_vals.len)) return oom(c, err);
  if ((st = compress_into_body(c, 0, err)) != HS_OK) return st;
  if (c->enc.len > INT32_MAX || c->body.len > INT32_MAX)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s': dictionary page over 2 GiB",
                        c->leaf->dotted);
  hs_pq_page_header ph;
  memset(&ph, 0, sizeof(ph));
  ph.type = HS_PQ_DICTIONARY_PAGE;
  ph.uncompressed_page_size = (int32_t)c->enc.len;
  ph.compressed_page_size = (int32_t)c->body.len;
  if (c->o->crc) {
    ph.has_crc = true;
    ph.crc = (int32_t)hs_pq_crc32(0, c->body.data, c->body.len);
  }
  ph.has_dictionary_page = true;
  ph.dictionary_page.num_values = (int32_t)c->dict_n;
  ph.dictionary_page.encoding = HS_PQ_ENC_PLAIN;
  if ((st = hs_pq_page_header_write(&ph, &c->dict_page, err)) != HS_OK) return st;
  size_t hl = c->dict_page.len;
  if (!hs_buf_append(&c->dict_page, c->body.data, c->body.len)) return oom(c, err);
  c->uncompressed_bytes += (int64_t)(hl + c->enc.len);
  c->compressed_bytes += (int64_t)(hl + c->body.len);
  return HS_OK;
}
