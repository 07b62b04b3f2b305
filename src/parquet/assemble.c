/*
 * assemble.c — turns decoded leaf data (levels plus densely packed values,
 * column.h) into Arrow arrays: validity bitmaps from definition levels,
 * list offsets from repetition levels (Dremel record assembly), structs and
 * maps, and the conversions from physical Parquet values to Arrow types
 * (narrow integers, INT96 timestamps, big-endian decimals, booleans).
 *
 * The level model is described in reader_internal.h: a node's slots are the
 * level positions with rep <= slot_rep and def >= slot_def; each node is
 * sized from its first leaf and every child from its own leaves, and the
 * lengths must agree, which also catches files whose leaves disagree.
 *
 * Buffers are lent when possible: a leaf without nulls or nesting whose
 * window spans all of its data hands its value buffer to the Arrow array
 * (the leaf data loses it) instead of copying.
 *
 * Fast paths skip the per-level work where levels say nothing: a flat leaf
 * without stored levels maps slot j to value vlo + j (no slot list), and a
 * fixed-size list over implicit levels (every list full, no nulls) takes
 * its child's values as one contiguous run.
 */
#include <string.h>

#include "reader_internal.h"

static inline int16_t lv_def(const hs_pq_leaf_window *w, int64_t i) {
  return w->data->def ? w->data->def[i] : w->desc->max_def;
}
static inline int16_t lv_rep(const hs_pq_leaf_window *w, int64_t i) {
  return w->data->rep ? w->data->rep[i] : 0;
}

/* A zeroed buffer of at least one byte, so no Arrow buffer is NULL. */
static void *buf_alloc(size_t bytes) {
  return hs_calloc(bytes ? bytes : 1, 1);
}

static hs_status oom(hs_error *err, const char *what) {
  return hs_error_set(err, HS_ERR_NOMEM, "column '%s': out of memory assembling", what);
}

static hs_status check_window(const hs_pq_leaf_window *w, hs_error *err) {
  const hs_pq_leaf_data *d = w->data;
  /* A NULL def means every level is max_def (implicit levels); a NULL
   * rep needs the window's rep_period. */
  if ((w->desc->max_rep > 0 && d->rep == NULL && w->rep_period <= 0) || w->lo < 0 ||
      w->hi > d->n_levels || w->lo > w->hi || w->vlo < 0 || w->vlo > d->n_values) {
    return hs_error_set(err, HS_ERR_INTERNAL, "column '%s': leaf data window is inconsistent",
                        w->desc->path);
  }
  return HS_OK;
}

hs_status hs_pq_window_advance(const hs_pq_leaf_data *d, const hs_pq_leaf_desc *desc,
                               int64_t rep_period, int64_t *lo, int64_t *vlo, int64_t n_rows,
                               hs_error *err) {
  int64_t i = *lo, v = *vlo, rows = 0;
  if (d->rep == NULL && rep_period > 0 && desc->max_rep > 0) {
    /* Implicit levels: rep_period levels per record, all of them values. */
    if (d->def != NULL || n_rows > (d->n_levels - i) / rep_period) goto short_data;
    *lo = i + n_rows * rep_period;
    *vlo = v + n_rows * rep_period;
    return HS_OK;
  }
  if (d->rep == NULL) {
    if (n_rows > d->n_levels - i) goto short_data;
    for (int64_t k = 0; d->def && k < n_rows; k++) v += d->def[i + k] == desc->max_def;
    if (d->def == NULL) v += n_rows;
    *lo = i + n_rows;
    *vlo = v;
    return HS_OK;
  }
  for (; i < d->n_levels; i++) {
    if (d->rep[i] == 0) {
      if (rows == n_rows) break;
      rows++;
    }
    if (d->def == NULL || d->def[i] == desc->max_def) v++;
  }
  if (rows < n_rows || (i == d->n_levels && rows != n_rows)) goto short_data;
  *lo = i;
  *vlo = v;
  return HS_OK;
short_data:
  return hs_error_set(err, HS_ERR_CORRUPT, "column '%s': fewer than %lld records in the leaf data",
                      desc->path, (long long)n_rows);
}

/* Number of slots of a node with (slot_rep, slot_def) in window w. */
static int64_t count_slots(const hs_pq_leaf_window *w, int16_t slot_rep, int16_t slot_def) {
  if (w->data->rep == NULL && w->data->def == NULL) return w->hi - w->lo;
  int64_t n = 0;
  for (int64_t i = w->lo; i < w->hi; i++) n += lv_rep(w, i) <= slot_rep && lv_def(w, i) >= slot_def;
  return n;
}

/* Validity bitmap of the node's slots; NULL (and *nulls 0) when all valid. */
static hs_status slot_validity(const hs_pq_node *n, const hs_pq_leaf_window *w, int64_t len,
                               uint8_t **out, int64_t *nulls, hs_error *err) {
  *out = NULL;
  *nulls = 0;
  if (w->data->def == NULL || n->valid_def <= n->slot_def) return HS_OK;
  uint8_t *bits = buf_alloc((size_t)(len + 7) / 8);
  if (bits == NULL) return oom(err, n->name);
  int64_t j = 0;
  for (int64_t i = w->lo; i < w->hi; i++) {
    if (lv_rep(w, i) > n->slot_rep || lv_def(w, i) < n->slot_def) continue;
    if (j >= len) break;
    if (lv_def(w, i) >= n->valid_def) {
      bits[j >> 3] |= (uint8_t)(1u << (j & 7));
    } else {
      (*nulls)++;
    }
    j++;
  }
  if (*nulls == 0) {
    hs_free(bits);
    bits = NULL;
  }
  *out = bits;
  return HS_OK;
}

/* ----------------------------------------------------------- leaves */

/* Per output slot, the index of its value in the leaf data or -1 (null).
 * For fixed-size lists, a null list contributes `pad` null slots. With
 * idx NULL the slots are contiguous: slot j holds value first + j and
 * there are no nulls. */
typedef struct leaf_slots {
  int64_t *idx;
  int64_t n;
  int64_t nulls;
  int64_t first;
} leaf_slots;

static inline int64_t slot_value(const leaf_slots *s, int64_t j) {
  return s->idx ? s->idx[j] : s->first + j;
}

/* Contiguous slots for a window without levels that could hide nulls or
 * nesting (true when no def/rep is stored): slot j is value vlo + j. */
static bool leaf_slots_contiguous(const hs_pq_leaf_window *w, leaf_slots *out) {
  if (w->data->rep != NULL || w->data->def != NULL || w->desc->max_rep > 0) return false;
  int64_t n = w->hi - w->lo;
  if (w->vlo > w->data->n_values || n > w->data->n_values - w->vlo) return false;
  out->idx = NULL;
  out->n = n;
  out->nulls = 0;
  out->first = w->vlo;
  return true;
}

static hs_status leaf_slots_compute(const hs_pq_node *n, const hs_pq_leaf_window *w,
                                    leaf_slots *out, hs_error *err) {
  int64_t len = count_slots(w, n->slot_rep, n->slot_def);
  out->idx = hs_malloc(sizeof(int64_t) * (size_t)(len > 0 ? len : 1));
  out->n = len;
  out->nulls = 0;
  if (out->idx == NULL) return oom(err, w->desc->path);
  int64_t v = w->vlo, j = 0;
  int16_t max_def = w->desc->max_def;
  for (int64_t i = w->lo; i < w->hi; i++) {
    int16_t d = lv_def(w, i);
    if (lv_rep(w, i) > n->slot_rep || d < n->slot_def) continue;
    if (d >= max_def) {
      if (v >= w->data->n_values) {
        return hs_error_set(err, HS_ERR_CORRUPT,
                            "column '%s': definition levels promise more than %lld values",
                            w->desc->path, (long long)w->data->n_values);
      }
      out->idx[j++] = v++;
    } else {
      out->idx[j++] = -1;
      out->nulls++;
    }
  }
  return HS_OK;
}

static void write_decimal_be(const uint8_t *b, size_t len, uint8_t *dst) {
  uint8_t sign = (len > 0 && (b[0] & 0x80)) ? 0xFF : 0x00;
  memset(dst, sign, 16);
  size_t take = len < 16 ? len : 16;
  for (size_t k = 0; k < take; k++) dst[k] = b[len - 1 - k];
}

static void write_decimal_i64(int64_t v, uint8_t *dst) {
  hs_store_u64le(dst, (uint64_t)v);
  memset(dst + 8, v < 0 ? 0xFF : 0x00, 8);
}

/* Convert value `v` of the leaf into dst (Arrow width bytes). */
static void convert_value(const hs_pq_node *n, const hs_pq_leaf_window *w, int64_t v, uint8_t *dst,
                          int dw) {
  const hs_pq_leaf_data *d = w->data;
  int sw = hs_pq_leaf_value_width(w->desc);
  if (w->desc->type == HS_PQ_BYTE_ARRAY) { /* decimal */
    int32_t a = d->offsets[v], b = d->offsets[v + 1];
    write_decimal_be(b > a ? d->data.data + a : NULL, b > a ? (size_t)(b - a) : 0, dst);
    return;
  }
  const uint8_t *src = d->values.data + (size_t)v * (size_t)sw;
  switch (n->atype.id) {
  case HS_AT_DECIMAL128:
    if (w->desc->type == HS_PQ_INT32) {
      write_decimal_i64((int32_t)hs_load_u32le(src), dst);
    } else if (w->desc->type == HS_PQ_INT64) {
      write_decimal_i64((int64_t)hs_load_u64le(src), dst);
    } else {
      write_decimal_be(src, (size_t)sw, dst);
    }
    return;
  case HS_AT_TIMESTAMP:
    if (w->desc->type == HS_PQ_INT96) {
      uint64_t nanos = hs_load_u64le(src);
      /* The Julian day is unsigned, as Arrow and Spark read it; out-of-range
       * values wrap rather than fail, matching pyarrow. */
      uint64_t day = hs_load_u32le(src + 8);
      uint64_t ns = (day - UINT64_C(2440588)) * UINT64_C(86400000000000) + nanos;
      hs_store_u64le(dst, ns);
      return;
    }
    break;
  default: break;
  }
  /* Narrowing of INT32 to 8/16 bits is little-endian truncation; all other
   * conversions are same-width copies. */
  memcpy(dst, src, (size_t)(dw < sw ? dw : sw));
}

static hs_status finish_array(struct ArrowArray *out, int64_t len, int64_t nulls, uint8_t *validity,
                              void *b1, void *b2, int n_buffers, hs_error *err) {
  hs_status st = hs_arrow_array_init(out, n_buffers, 0, err);
  if (st != HS_OK) {
    hs_free(validity);
    hs_free(b1);
    hs_free(b2);
    return st;
  }
  out->length = len;
  out->null_count = nulls;
  if (n_buffers > 0) hs_arrow_array_set_buffer(out, 0, validity);
  if (n_buffers > 1) hs_arrow_array_set_buffer(out, 1, b1);
  if (n_buffers > 2) hs_arrow_array_set_buffer(out, 2, b2);
  return HS_OK;
}

static hs_status validity_from_slots(const leaf_slots *s, uint8_t **out, const char *what,
                                     hs_error *err) {
  *out = NULL;
  if (s->nulls == 0 || s->idx == NULL) return HS_OK;
  uint8_t *bits = buf_alloc((size_t)(s->n + 7) / 8);
  if (bits == NULL) return oom(err, what);
  for (int64_t j = 0; j < s->n; j++) {
    if (s->idx[j] >= 0) bits[j >> 3] |= (uint8_t)(1u << (j & 7));
  }
  *out = bits;
  return HS_OK;
}

static hs_status build_binary(const hs_pq_node *n, hs_pq_leaf_window *w, const leaf_slots *s,
                              uint8_t *validity, struct ArrowArray *out, hs_error *err) {
  hs_pq_leaf_data *d = w->data;
  if (d->offsets == NULL) {
    hs_free(validity);
    return hs_error_set(err, HS_ERR_INTERNAL, "column '%s': byte array leaf without offsets",
                        w->desc->path);
  }
  /* Lend: the leaf's offsets and bytes are already Arrow's layout. */
  if (w->whole && s->nulls == 0 && slot_value(s, 0) == 0 && s->n == d->n_values) {
    int32_t *offs = d->offsets;
    d->offsets = NULL;
    void *bytes = hs_buf_detach_fit(&d->data);
    if (bytes == NULL) bytes = buf_alloc(0);
    return finish_array(out, s->n, 0, validity, offs, bytes, 3, err);
  }
  int32_t *offs = hs_malloc(sizeof(int32_t) * (size_t)(s->n + 1));
  hs_buf bytes;
  hs_buf_init(&bytes);
  if (offs == NULL) goto nomem;
  offs[0] = 0;
  if (s->idx == NULL && s->n > 0) { /* contiguous: one copy, offsets rebased */
    int32_t a = d->offsets[s->first], b = d->offsets[s->first + s->n];
    if (a < 0 || b < a || (size_t)b > d->data.len) goto corrupt;
    if (b > a && !hs_buf_append(&bytes, d->data.data + a, (size_t)(b - a))) goto nomem;
    for (int64_t j = 0; j < s->n; j++) {
      int32_t o = d->offsets[s->first + j + 1] - a;
      if (o < offs[j] || o > b - a) goto corrupt;
      offs[j + 1] = o;
    }
  }
  for (int64_t j = 0; s->idx != NULL && j < s->n; j++) {
    int64_t v = s->idx[j];
    if (v >= 0) {
      int32_t a = d->offsets[v], b = d->offsets[v + 1];
      if (a < 0 || b < a || (size_t)b > d->data.len) {
        hs_free(offs);
        hs_free(validity);
        hs_buf_free(&bytes);
        return hs_error_set(err, HS_ERR_CORRUPT, "column '%s': byte array offsets out of range",
                            w->desc->path);
      }
      /* b == a: nothing to copy (and data.data may be NULL). */
      if (b > a && !hs_buf_append(&bytes, d->data.data + a, (size_t)(b - a))) goto nomem;
    }
    if (bytes.len > INT32_MAX) {
      hs_free(offs);
      hs_free(validity);
      hs_buf_free(&bytes);
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "column '%s': more than 2 GiB of bytes in one batch", w->desc->path);
    }
    offs[j + 1] = (int32_t)bytes.len;
  }
  void *data = hs_buf_detach_fit(&bytes);
  if (data == NULL) data = buf_alloc(0);
  return finish_array(out, s->n, s->nulls, validity, offs, data, 3, err);
corrupt:
  hs_free(offs);
  hs_free(validity);
  hs_buf_free(&bytes);
  return hs_error_set(err, HS_ERR_CORRUPT, "column '%s': byte array offsets out of range",
                      w->desc->path);
nomem:
  hs_free(offs);
  hs_free(validity);
  hs_buf_free(&bytes);
  return oom(err, n->name);
}

/* Build a leaf array from its slot list. */
static hs_status build_leaf(const hs_pq_node *n, hs_pq_leaf_window *w, const leaf_slots *s,
                            struct ArrowArray *out, hs_error *err) {
  hs_pq_leaf_data *d = w->data;
  uint8_t *validity = NULL;
  if (n->kind == HS_PQ_NODE_NULL) return finish_array(out, s->n, s->n, NULL, NULL, NULL, 0, err);
  hs_status st = validity_from_slots(s, &validity, n->name, err);
  if (st != HS_OK) return st;
  if (n->atype.id == HS_AT_BINARY || n->atype.id == HS_AT_STRING ||
      n->atype.id == HS_AT_LARGE_BINARY || n->atype.id == HS_AT_LARGE_STRING) {
    return build_binary(n, w, s, validity, out, err);
  }
  if (w->desc->type == HS_PQ_BYTE_ARRAY && n->atype.id != HS_AT_DECIMAL128) {
    hs_free(validity);
    return hs_error_set(err, HS_ERR_INTERNAL, "column '%s': no conversion to '%s'", w->desc->path,
                        n->format);
  }
  int sw = hs_pq_leaf_value_width(w->desc);
  if (w->desc->type != HS_PQ_BYTE_ARRAY &&
      (sw <= 0 || d->values.len / (size_t)sw < (size_t)d->n_values)) {
    hs_free(validity);
    return hs_error_set(err, HS_ERR_INTERNAL, "column '%s': leaf holds %zu bytes for %lld values",
                        w->desc->path, d->values.len, (long long)d->n_values);
  }
  if (n->atype.id == HS_AT_BOOL) {
    uint8_t *bits = buf_alloc((size_t)(s->n + 7) / 8);
    if (bits == NULL) {
      hs_free(validity);
      return oom(err, n->name);
    }
    if (s->idx == NULL && s->n > 0) {
      const uint8_t *src = d->values.data + s->first;
      int64_t j = 0;
      for (; j + 8 <= s->n; j += 8) {
        unsigned b = 0;
        for (int k = 0; k < 8; k++) b |= (unsigned)(src[j + k] != 0) << k;
        bits[j >> 3] = (uint8_t)b;
      }
      for (; j < s->n; j++) {
        if (src[j]) bits[j >> 3] |= (uint8_t)(1u << (j & 7));
      }
    } else if (s->idx != NULL) {
      for (int64_t j = 0; j < s->n; j++) {
        if (s->idx[j] >= 0 && d->values.data[s->idx[j]]) bits[j >> 3] |= (uint8_t)(1u << (j & 7));
      }
    }
    return finish_array(out, s->n, s->nulls, validity, bits, NULL, 2, err);
  }
  int dw = n->atype.id == HS_AT_DECIMAL128 ? 16 : hs_arrow_type_byte_width(&n->atype);
  if (dw <= 0) {
    hs_free(validity);
    return hs_error_set(err, HS_ERR_INTERNAL, "column '%s': unexpected Arrow type '%s'",
                        w->desc->path, n->format);
  }
  bool same = dw == sw && n->atype.id != HS_AT_DECIMAL128 && w->desc->type != HS_PQ_INT96;
  int64_t first = s->n > 0 ? slot_value(s, 0) : 0;
  if (same && w->whole && s->nulls == 0 && first == 0 && s->n == d->n_values) {
    void *vals = hs_buf_detach_fit(&d->values);
    if (vals == NULL) vals = buf_alloc(0);
    return finish_array(out, s->n, 0, validity, vals, NULL, 2, err);
  }
  size_t bytes;
  if (!hs_mul_size((size_t)s->n, (size_t)dw, &bytes)) bytes = SIZE_MAX;
  uint8_t *vals = bytes == SIZE_MAX ? NULL : buf_alloc(bytes);
  if (vals == NULL) {
    hs_free(validity);
    return oom(err, n->name);
  }
  if (bytes == 0) {
    /* nothing to copy (and d->values.data may be NULL) */
  } else if (same && s->nulls == 0 && s->idx == NULL) {
    memcpy(vals, d->values.data + (size_t)first * (size_t)sw, bytes);
  } else if (same && s->nulls == 0) {
    memcpy(vals, d->values.data + (size_t)w->vlo * (size_t)sw, bytes);
  } else if (n->atype.id == HS_AT_DECIMAL128 && w->desc->type == HS_PQ_FIXED_LEN_BYTE_ARRAY &&
             sw >= 1 && sw <= 8) {
    /* Decimals of precision <= 18 in fixed bytes (our writer's and
     * pyarrow's): big-endian, sign-extended to 128 bits, one loop. */
    int sh = 64 - 8 * sw;
    for (int64_t j = 0; j < s->n; j++) {
      int64_t v = slot_value(s, j);
      if (v < 0) continue;
      const uint8_t *b = d->values.data + (size_t)v * (size_t)sw;
      uint64_t x = 0;
      for (int k = 0; k < sw; k++) x = x << 8 | b[k];
      write_decimal_i64((int64_t)(x << sh) >> sh, vals + (size_t)j * 16);
    }
  } else {
    for (int64_t j = 0; j < s->n; j++) {
      int64_t v = slot_value(s, j);
      if (v >= 0) convert_value(n, w, v, vals + (size_t)j * (size_t)dw, dw);
    }
  }
  return finish_array(out, s->n, s->nulls, validity, vals, NULL, 2, err);
}

/* ------------------------------------------------------------ nested */

static hs_status build_struct(const hs_pq_node *n, hs_pq_leaf_window *windows,
                              struct ArrowArray *out, hs_error *err) {
  const hs_pq_leaf_window *w = &windows[n->first_leaf];
  int64_t len = count_slots(w, n->slot_rep, n->slot_def), nulls;
  uint8_t *validity;
  hs_status st = slot_validity(n, w, len, &validity, &nulls, err);
  if (st != HS_OK) return st;
  st = hs_arrow_array_init(out, 1, n->n_children, err);
  if (st != HS_OK) {
    hs_free(validity);
    return st;
  }
  out->length = len;
  out->null_count = nulls;
  hs_arrow_array_set_buffer(out, 0, validity);
  for (int32_t i = 0; i < n->n_children; i++) {
    st = hs_pq_assemble(n->children[i], windows, out->children[i], err);
    if (st == HS_OK && out->children[i]->length != len) {
      st = hs_error_set(err, HS_ERR_CORRUPT,
                        "column '%s': field '%s' has %lld entries but its struct has %lld", n->name,
                        n->children[i]->name, (long long)out->children[i]->length, (long long)len);
    }
    if (st != HS_OK) {
      out->release(out);
      return st;
    }
  }
  return HS_OK;
}

static hs_status build_list(const hs_pq_node *n, hs_pq_leaf_window *windows, struct ArrowArray *out,
                            hs_error *err) {
  const hs_pq_leaf_window *w = &windows[n->first_leaf];
  int64_t len = count_slots(w, n->slot_rep, n->slot_def), nulls;
  uint8_t *validity;
  hs_status st = slot_validity(n, w, len, &validity, &nulls, err);
  if (st != HS_OK) return st;
  int32_t *offs = hs_malloc(sizeof(int32_t) * (size_t)(len + 1));
  if (offs == NULL) {
    hs_free(validity);
    return oom(err, n->name);
  }
  int64_t j = 0, count = 0;
  for (int64_t i = w->lo; i < w->hi; i++) {
    int16_t r = lv_rep(w, i), d = lv_def(w, i);
    if (r <= n->slot_rep && d >= n->slot_def && j < len) offs[j++] = (int32_t)count;
    if (r <= n->elem_rep && d >= n->elem_def) count++;
    if (count > INT32_MAX) {
      hs_free(offs);
      hs_free(validity);
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s': over 2^31 list elements", n->name);
    }
  }
  offs[len] = (int32_t)count;
  st = hs_arrow_array_init(out, 2, 1, err);
  if (st != HS_OK) {
    hs_free(offs);
    hs_free(validity);
    return st;
  }
  out->length = len;
  out->null_count = nulls;
  hs_arrow_array_set_buffer(out, 0, validity);
  hs_arrow_array_set_buffer(out, 1, offs);
  st = hs_pq_assemble(n->children[0], windows, out->children[0], err);
  if (st == HS_OK && out->children[0]->length != count) {
    st = hs_error_set(err, HS_ERR_CORRUPT,
                      "column '%s': %lld list elements but the element column has %lld", n->name,
                      (long long)count, (long long)out->children[0]->length);
  }
  if (st != HS_OK) out->release(out);
  return st;
}

/* Fixed-size list of a leaf: every non-null list must have exactly
 * fixed_size elements; a null list occupies fixed_size null elements. */
static hs_status build_fixed_list(const hs_pq_node *n, hs_pq_leaf_window *windows,
                                  struct ArrowArray *out, hs_error *err) {
  const hs_pq_node *child = n->children[0];
  hs_pq_leaf_window *w = &windows[child->leaf];
  if (w->data->rep == NULL && w->rep_period > 0) {
    /* Implicit levels: every list holds fixed_size values, none null. */
    if (child->kind != HS_PQ_NODE_LEAF || w->rep_period != n->fixed_size || w->data->def != NULL ||
        n->slot_rep != 0 || n->elem_rep != 1) {
      return hs_error_set(err, HS_ERR_INTERNAL, "column '%s': implicit levels out of place",
                          n->name);
    }
    int64_t len = (w->hi - w->lo) / w->rep_period;
    leaf_slots cs = {.idx = NULL, .n = w->hi - w->lo, .nulls = 0, .first = w->vlo};
    if (w->vlo > w->data->n_values || cs.n > w->data->n_values - w->vlo) {
      return hs_error_set(err, HS_ERR_CORRUPT, "column '%s': levels promise too many values",
                          n->name);
    }
    hs_status st = hs_arrow_array_init(out, 1, 1, err);
    if (st != HS_OK) return st;
    out->length = len;
    out->null_count = 0;
    st = build_leaf(child, w, &cs, out->children[0], err);
    if (st != HS_OK) out->release(out);
    return st;
  }
  int64_t len = count_slots(w, n->slot_rep, n->slot_def), nulls;
  uint8_t *validity;
  hs_status st = slot_validity(n, w, len, &validity, &nulls, err);
  if (st != HS_OK) return st;
  leaf_slots s = {0};
  size_t total;
  if (!hs_mul_size((size_t)len, (size_t)n->fixed_size, &total) || total > INT32_MAX) {
    hs_free(validity);
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s': fixed-size list too large", n->name);
  }
  s.idx = hs_malloc(sizeof(int64_t) * (total ? total : 1));
  if (s.idx == NULL) {
    hs_free(validity);
    return oom(err, n->name);
  }
  int64_t v = w->vlo, in_list = -1, list_no = -1;
  for (int64_t i = w->lo; i <= w->hi; i++) {
    bool end = i == w->hi;
    int16_t r = end ? 0 : lv_rep(w, i), d = end ? 0 : lv_def(w, i);
    bool new_slot = end || (r <= n->slot_rep && d >= n->slot_def);
    if (new_slot && list_no >= 0) {
      /* Close the previous list: a null list pads, a valid one must be full. */
      if (in_list == -1) {
        for (int32_t k = 0; k < n->fixed_size; k++) s.idx[s.n++] = -1, s.nulls++;
      } else if (in_list != n->fixed_size) {
        st = hs_error_set(err, HS_ERR_CORRUPT,
                          "column '%s': row %lld has a list of %lld values, not %d", n->name,
                          (long long)list_no, (long long)in_list, (int)n->fixed_size);
        break;
      }
    }
    if (end) break;
    if (new_slot) {
      list_no++;
      in_list = d >= n->valid_def ? 0 : -1;
    }
    if (r <= n->elem_rep && d >= n->elem_def) {
      if (in_list < 0) {
        /* Levels put a value outside any list, or inside a null one. */
        st = hs_error_set(err, HS_ERR_CORRUPT,
                          "column '%s': row %lld has a value inside a null or missing list",
                          n->name, (long long)list_no);
        break;
      }
      if (in_list >= n->fixed_size) {
        st = hs_error_set(err, HS_ERR_CORRUPT, "column '%s': row %lld has over %d values", n->name,
                          (long long)list_no, (int)n->fixed_size);
        break;
      }
      if (d >= w->desc->max_def) {
        if (v >= w->data->n_values) {
          st = hs_error_set(err, HS_ERR_CORRUPT, "column '%s': levels promise too many values",
                            n->name);
          break;
        }
        s.idx[s.n++] = v++;
      } else {
        s.idx[s.n++] = -1;
        s.nulls++;
      }
      in_list++;
    }
  }
  if (st == HS_OK) st = hs_arrow_array_init(out, 1, 1, err);
  if (st != HS_OK) {
    hs_free(s.idx);
    hs_free(validity);
    return st;
  }
  out->length = len;
  out->null_count = nulls;
  hs_arrow_array_set_buffer(out, 0, validity);
  hs_pq_leaf_window sub = *w;
  sub.whole = false;
  st = build_leaf(child, &sub, &s, out->children[0], err);
  hs_free(s.idx);
  if (st != HS_OK) out->release(out);
  return st;
}

static hs_status hs_pq_assemble_node(const hs_pq_node *node, hs_pq_leaf_window *windows,
                                     struct ArrowArray *out, hs_error *err) {
  for (int32_t l = node->first_leaf; l < node->leaf_end; l++) {
    hs_status st = check_window(&windows[l], err);
    if (st != HS_OK) return st;
    if (windows[l].data->rep == NULL && windows[l].rep_period > 0 &&
        node->kind != HS_PQ_NODE_FIXED_LIST) {
      return hs_error_set(err, HS_ERR_INTERNAL, "column '%s': implicit levels out of place",
                          node->name);
    }
  }
  switch (node->kind) {
  case HS_PQ_NODE_LEAF:
  case HS_PQ_NODE_NULL: {
    leaf_slots s = {0};
    hs_status st = HS_OK;
    if (node->kind != HS_PQ_NODE_LEAF || !leaf_slots_contiguous(&windows[node->leaf], &s)) {
      st = leaf_slots_compute(node, &windows[node->leaf], &s, err);
    }
    if (st == HS_OK) st = build_leaf(node, &windows[node->leaf], &s, out, err);
    hs_free(s.idx);
    return st;
  }
  case HS_PQ_NODE_STRUCT: return build_struct(node, windows, out, err);
  case HS_PQ_NODE_LIST:
  case HS_PQ_NODE_MAP: return build_list(node, windows, out, err);
  case HS_PQ_NODE_FIXED_LIST: return build_fixed_list(node, windows, out, err);
  }
  return hs_error_set(err, HS_ERR_INTERNAL, "column '%s': unknown node kind", node->name);
}

/* Large Arrow types ("U", "Z", "+L") share the int32 layout we assemble
 * with, except for 64-bit offsets: widen buffer 1 after assembly. */
static hs_status widen_offsets(const hs_pq_node *n, struct ArrowArray *out, hs_error *err) {
  int64_t count = out->offset + out->length + 1;
  const int32_t *narrow = out->buffers[1];
  int64_t *wide = hs_malloc(sizeof(int64_t) * (size_t)count);
  if (wide == NULL) {
    out->release(out);
    return oom(err, n->name);
  }
  for (int64_t i = 0; i < count; i++) wide[i] = narrow != NULL ? narrow[i] : 0;
  hs_arrow_array_set_buffer(out, 1, wide);
  return HS_OK;
}

static bool has_large_offsets(const hs_pq_node *n) {
  if (n->kind == HS_PQ_NODE_LIST) return strcmp(n->format, "+L") == 0;
  return n->kind == HS_PQ_NODE_LEAF &&
         (n->atype.id == HS_AT_LARGE_BINARY || n->atype.id == HS_AT_LARGE_STRING);
}

hs_status hs_pq_assemble(const hs_pq_node *node, hs_pq_leaf_window *windows, struct ArrowArray *out,
                         hs_error *err) {
  hs_status st = hs_pq_assemble_node(node, windows, out, err);
  if (st == HS_OK && has_large_offsets(node)) st = widen_offsets(node, out, err);
  return st;
}
