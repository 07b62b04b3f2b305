/*
 * concat.c — hs_arrow_array_concat: several arrays of one schema as one new
 * owned array (Arrow's "concatenate"), and hs_arrow_coalescer, which uses it
 * to turn a producer's small batches into fewer, larger ones.
 *
 * One pass per buffer and part: fixed-width values and byte-aligned bit runs
 * by memcpy, other bits 64 at a time, offsets rebased by one difference per
 * part, nested columns by recursion over the children's slices (a list's
 * values range, a fixed-size list's D rows per row, a struct's rows). Scans
 * coalesce the few rows of many row groups or files into one batch with it
 * (hs_scan_options.batch_rows_min) so that a consumer across a language
 * boundary (JNI, Arrow C Data import) pays per batch once, not per row
 * group.
 */
#include <string.h>

#include "arrow.h"

#define CONCAT_DEPTH_MAX 64

static inline bool bit_at(const uint8_t *b, int64_t i) {
  return (b[i >> 3] >> (i & 7)) & 1;
}

/* Bits src[from .. from + n) into dst[to .. to + n); dst's bits at and past
 * `to` are zero on entry (dst is calloc'd). */
static void bits_copy(uint8_t *dst, int64_t to, const uint8_t *src, int64_t from, int64_t n) {
  if (n <= 0) return;
  if ((to & 7) == 0 && (from & 7) == 0) {
    int64_t whole = n >> 3;
    memcpy(dst + (to >> 3), src + (from >> 3), (size_t)whole);
    for (int64_t i = whole << 3; i < n; i++)
      if (bit_at(src, from + i)) dst[(to + i) >> 3] |= (uint8_t)(1u << ((to + i) & 7));
    return;
  }
  for (int64_t i = 0; i < n; i++)
    if (bit_at(src, from + i)) dst[(to + i) >> 3] |= (uint8_t)(1u << ((to + i) & 7));
}

static void bits_set(uint8_t *dst, int64_t to, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[(to + i) >> 3] |= (uint8_t)(1u << ((to + i) & 7));
}

static uint8_t *bits_alloc(int64_t n, hs_error *err) {
  uint8_t *b = hs_calloc((size_t)((n + 7) >> 3) + 1, 1);
  if (b == NULL) hs_error_set(err, HS_ERR_NOMEM, "concat: out of memory");
  return b;
}

/* One input: rows [start, start + len) of `a` (a->offset not yet added). */
typedef struct part {
  const struct ArrowArray *a;
  int64_t start, len;
} part;

static hs_status concat_node(const struct ArrowSchema *s, const part *p, size_t n, int64_t total,
                             struct ArrowArray *out, int depth, hs_error *err);

static hs_status concat_validity(const part *p, size_t n, int64_t total, struct ArrowArray *out,
                                 hs_error *err) {
  bool any = false;
  for (size_t i = 0; i < n; i++)
    any |= p[i].a->n_buffers > 0 && p[i].a->buffers[0] != NULL && p[i].a->null_count != 0;
  out->null_count = 0;
  if (!any) return HS_OK;
  uint8_t *bits = bits_alloc(total, err);
  if (bits == NULL) return HS_ERR_NOMEM;
  int64_t at = 0, nulls = 0;
  for (size_t i = 0; i < n; i++) {
    const uint8_t *v = p[i].a->buffers[0];
    if (v != NULL && p[i].a->null_count != 0) {
      bits_copy(bits, at, v, p[i].start, p[i].len);
      for (int64_t j = 0; j < p[i].len; j++) nulls += !bit_at(v, p[i].start + j);
    } else {
      bits_set(bits, at, p[i].len);
    }
    at += p[i].len;
  }
  hs_arrow_array_set_buffer(out, 0, bits);
  out->null_count = nulls;
  return HS_OK;
}

static int64_t offset_at(const struct ArrowArray *a, bool large, int64_t i) {
  return large ? ((const int64_t *)(const void *)a->buffers[1])[i]
               : (int64_t)((const int32_t *)(const void *)a->buffers[1])[i];
}

/* Every part's offsets rebased into one run offs[0 .. total] (int32 or
 * int64), each part's values range [b, b + len) into vals[i]; returns the
 * values in all, or -1 when int32 offsets cannot hold them. */
static int64_t offsets_rebase(const part *p, size_t n, int64_t total, bool large, uint8_t *offs,
                              part *vals) {
  int64_t row = 0, at = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t b = p[i].len > 0 ? offset_at(p[i].a, large, p[i].start) : 0;
    int64_t e = p[i].len > 0 ? offset_at(p[i].a, large, p[i].start + p[i].len) : 0;
    if (!large && at + (e - b) > INT32_MAX) return -1;
    for (int64_t j = 0; j < p[i].len; j++, row++) {
      int64_t o = at + offset_at(p[i].a, large, p[i].start + j) - b;
      if (large)
        ((int64_t *)(void *)offs)[row] = o;
      else
        ((int32_t *)(void *)offs)[row] = (int32_t)o;
    }
    vals[i] = (part){p[i].a, b, e - b};
    at += e - b;
  }
  if (large)
    ((int64_t *)(void *)offs)[total] = at;
  else
    ((int32_t *)(void *)offs)[total] = (int32_t)at;
  return at;
}

/* Strings and binaries, and lists (their values concatenated as a child
 * column): offsets rebased, then the values. */
static hs_status concat_offsets(const struct ArrowSchema *s, const part *p, size_t n, int64_t total,
                                bool large, bool list, struct ArrowArray *out, int depth,
                                hs_error *err) {
  part *vals = hs_malloc((n ? n : 1) * sizeof *vals);
  uint8_t *offs = hs_malloc((size_t)(total + 1) * (large ? 8 : 4));
  if (vals == NULL || offs == NULL) {
    hs_free(vals);
    hs_free(offs);
    return hs_error_set(err, HS_ERR_NOMEM, "concat: out of memory");
  }
  int64_t at = offsets_rebase(p, n, total, large, offs, vals);
  hs_status st = HS_OK;
  if (at < 0) {
    hs_free(offs);
    st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                      "concat: column '%s': the values overflow int32 "
                      "offsets",
                      s->name ? s->name : "");
  } else if (list) {
    hs_arrow_array_set_buffer(out, 1, offs);
    for (size_t i = 0; i < n; i++) vals[i].a = p[i].a->children[0];
    st = concat_node(s->children[0], vals, n, at, out->children[0], depth + 1, err);
  } else {
    uint8_t *data = hs_malloc((size_t)at + 1);
    if (data == NULL) {
      hs_free(offs);
      st = hs_error_set(err, HS_ERR_NOMEM, "concat: out of memory");
    } else {
      hs_arrow_array_set_buffer(out, 1, offs);
      hs_arrow_array_set_buffer(out, 2, data);
      for (size_t i = 0, to = 0; i < n; to += (size_t)vals[i].len, i++)
        if (vals[i].len > 0)
          memcpy(data + to, (const uint8_t *)p[i].a->buffers[2] + vals[i].start,
                 (size_t)vals[i].len);
    }
  }
  hs_free(vals);
  return st;
}

static hs_status concat_node(const struct ArrowSchema *s, const part *in, size_t n, int64_t total,
                             struct ArrowArray *out, int depth, hs_error *err) {
  memset(out, 0, sizeof *out);
  const char *name = s->name ? s->name : "";
  if (depth > CONCAT_DEPTH_MAX) return hs_error_set(err, HS_ERR_UNSUPPORTED, "concat: too deep");
  if (s->dictionary != NULL)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "concat: column '%s': dictionary arrays", name);
  hs_arrow_type at;
  hs_status st = hs_arrow_type_parse(s->format, &at, err);
  if (st != HS_OK) return st;
  int64_t nb, nc;
  if (!hs_arrow_type_layout(&at, s->n_children, &nb, &nc))
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "concat: column '%s': Arrow type '%s'", name,
                        s->format);
  if (nc != s->n_children)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "concat: column '%s': malformed schema", name);
  /* The parts at their absolute positions (each array's own offset added). */
  part *p = hs_malloc((n ? n : 1) * sizeof *p);
  if (p == NULL) return hs_error_set(err, HS_ERR_NOMEM, "concat: out of memory");
  for (size_t i = 0; i < n; i++) {
    const struct ArrowArray *a = in[i].a;
    if (a->n_children != nc || a->n_buffers < nb) {
      hs_free(p);
      return hs_error_set(err, HS_ERR_INVALID_ARG, "concat: column '%s': malformed array", name);
    }
    p[i] = (part){a, in[i].start + a->offset, in[i].len};
  }
  if ((st = hs_arrow_array_init(out, nb, nc, err)) != HS_OK) {
    hs_free(p);
    return st;
  }
  out->length = total;
  if (at.id == HS_AT_NA) {
    out->null_count = total;
    hs_free(p);
    return HS_OK;
  }
  if ((st = concat_validity(p, n, total, out, err)) != HS_OK) {
    hs_free(p);
    return st;
  }
  switch (at.id) {
  case HS_AT_BOOL: {
    uint8_t *bits = bits_alloc(total, err);
    if (bits == NULL) {
      st = HS_ERR_NOMEM;
      break;
    }
    int64_t to = 0;
    for (size_t i = 0; i < n; i++) {
      bits_copy(bits, to, p[i].a->buffers[1], p[i].start, p[i].len);
      to += p[i].len;
    }
    hs_arrow_array_set_buffer(out, 1, bits);
    break;
  }
  case HS_AT_BINARY:
  case HS_AT_STRING: st = concat_offsets(s, p, n, total, false, false, out, depth, err); break;
  case HS_AT_LARGE_BINARY:
  case HS_AT_LARGE_STRING: st = concat_offsets(s, p, n, total, true, false, out, depth, err); break;
  case HS_AT_LIST:
  case HS_AT_MAP: st = concat_offsets(s, p, n, total, false, true, out, depth, err); break;
  case HS_AT_LARGE_LIST: st = concat_offsets(s, p, n, total, true, true, out, depth, err); break;
  case HS_AT_STRUCT: {
    part *cp = hs_malloc((n ? n : 1) * sizeof *cp);
    if (cp == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "concat: out of memory");
      break;
    }
    for (int64_t c = 0; st == HS_OK && c < nc; c++) {
      for (size_t i = 0; i < n; i++) cp[i] = (part){p[i].a->children[c], p[i].start, p[i].len};
      st = concat_node(s->children[c], cp, n, total, out->children[c], depth + 1, err);
    }
    hs_free(cp);
    break;
  }
  case HS_AT_FIXED_LIST: {
    int64_t d = at.width;
    part *cp = hs_malloc((n ? n : 1) * sizeof *cp);
    if (cp == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "concat: out of memory");
      break;
    }
    for (size_t i = 0; i < n; i++)
      cp[i] = (part){p[i].a->children[0], p[i].start * d, p[i].len * d};
    st = concat_node(s->children[0], cp, n, total * d, out->children[0], depth + 1, err);
    hs_free(cp);
    break;
  }
  default: {
    size_t w = (size_t)hs_arrow_type_byte_width(&at);
    uint8_t *vals = hs_malloc((size_t)total * w + 1);
    if (vals == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "concat: out of memory");
      break;
    }
    size_t to = 0;
    for (size_t i = 0; i < n; i++) {
      size_t len = (size_t)p[i].len * w;
      if (len > 0)
        memcpy(vals + to, (const uint8_t *)p[i].a->buffers[1] + (size_t)p[i].start * w, len);
      to += len;
    }
    hs_arrow_array_set_buffer(out, 1, vals);
    break;
  }
  }
  hs_free(p);
  return st;
}

hs_status hs_arrow_array_concat(const struct ArrowSchema *s, const struct ArrowArray *arrays,
                                size_t n, struct ArrowArray *out, hs_error *err) {
  part *p = hs_malloc((n ? n : 1) * sizeof *p);
  if (p == NULL) {
    memset(out, 0, sizeof *out);
    return hs_error_set(err, HS_ERR_NOMEM, "concat: out of memory");
  }
  int64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    p[i] = (part){&arrays[i], 0, arrays[i].length};
    total += arrays[i].length;
  }
  hs_status st = concat_node(s, p, n, total, out, 0, err);
  hs_free(p);
  if (st != HS_OK) hs_arrow_array_release(out);
  return st;
}

/* ------------------------------------------------------------ coalescer */

void hs_arrow_coalescer_init(hs_arrow_coalescer *c, int64_t rows_min) {
  memset(c, 0, sizeof *c);
  c->rows_min = rows_min;
}

void hs_arrow_coalescer_free(hs_arrow_coalescer *c) {
  if (c == NULL) return;
  for (size_t i = c->pos; i < c->n; i++) hs_arrow_array_release(&c->held[i]);
  hs_free(c->held);
  memset(c, 0, sizeof *c);
}

static hs_status hold(hs_arrow_coalescer *c, struct ArrowArray *b, hs_error *err) {
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    struct ArrowArray *v = hs_realloc(c->held, cap * sizeof *v);
    if (v == NULL) {
      hs_arrow_array_release(b);
      return hs_error_set(err, HS_ERR_NOMEM, "coalesce: out of memory");
    }
    c->held = v;
    c->cap = cap;
  }
  c->held[c->n++] = *b;
  b->release = NULL;
  return HS_OK;
}

int hs_arrow_coalescer_next(hs_arrow_coalescer *c, const struct ArrowSchema *schema,
                            int (*next)(void *ctx, struct ArrowArray *out), void *ctx,
                            struct ArrowArray *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  c->merged = false;
  if (c->pos < c->n) { /* batches that could not be merged: one by one */
    *out = c->held[c->pos++];
    if (c->pos == c->n) c->pos = c->n = 0;
    return 0;
  }
  int64_t rows = 0;
  while (rows < c->rows_min) {
    struct ArrowArray b;
    int rc = next(ctx, &b);
    if (rc != 0) {
      hs_arrow_coalescer_free_held(c);
      return rc;
    }
    if (b.release == NULL) break;
    rows += b.length;
    if (hold(c, &b, err) != HS_OK) {
      hs_arrow_coalescer_free_held(c);
      return hs_status_errno(err->status);
    }
  }
  if (c->n == 0) return 0; /* the end */
  if (c->n == 1) {
    *out = c->held[0];
    c->n = 0;
    return 0;
  }
  hs_error e = {0};
  hs_status st = hs_arrow_array_concat(schema, c->held, c->n, out, &e);
  if (st == HS_OK) {
    for (size_t i = 0; i < c->n; i++) hs_arrow_array_release(&c->held[i]);
    c->n = 0;
    c->merged = true;
    return 0;
  }
  if (st != HS_ERR_UNSUPPORTED) {
    *err = e;
    hs_arrow_coalescer_free_held(c);
    return hs_status_errno(st);
  }
  *out = c->held[c->pos++]; /* a type or size concat cannot merge: as they came */
  return 0;
}

void hs_arrow_coalescer_free_held(hs_arrow_coalescer *c) {
  for (size_t i = c->pos; i < c->n; i++) hs_arrow_array_release(&c->held[i]);
  c->pos = c->n = 0;
}
