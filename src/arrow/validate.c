/*
 * validate.c — structural validation of an ArrowArray against its
 * ArrowSchema, for arrays that arrive from outside (Python, Java, another
 * library's stream) before any layer indexes into their buffers.
 *
 * The C Data Interface carries no buffer sizes, so what can be checked is
 * what the structures themselves say: buffer and child counts per type,
 * non-NULL buffers wherever a value would be read, offsets that start at or
 * above zero and never decrease, list offsets that stay within the child's
 * length, fixed-size-list and struct children long enough for offset+length,
 * dictionary indices within the dictionary. Not checked: UTF-8 validity of
 * strings, that a buffer is physically as large as its contents imply
 * (unknowable), and types we do not model (unions, views, run-end encoded,
 * intervals, decimal256), which are reported as HS_ERR_UNSUPPORTED.
 *
 * Structural faults give HS_ERR_INVALID_ARG with the field path ("col.item")
 * and the fault. Recursion depth is bounded for hostile inputs.
 */
#include <stdio.h>
#include <string.h>

#include "arrow.h"

#define HS_ARROW_DEPTH_MAX 64
#define HS_PATH_MAX 256

typedef struct vctx {
  char path[HS_PATH_MAX];
  size_t len;
  hs_error *err;
} vctx;

static const char *path_str(const vctx *v) {
  return v->len ? v->path : "<root>";
}

#define FAIL(v, ...) fail_at((v), HS_ERR_INVALID_ARG, __VA_ARGS__)

static hs_status fail_at(vctx *v, hs_status st, const char *fmt, ...) HS_PRINTF(3, 4);
static hs_status fail_at(vctx *v, hs_status st, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return hs_error_set(v->err, st, "arrow array '%s': %s", path_str(v), msg);
}

/* Append ".name" (or "[i]" when unnamed) to the path; returns the old
 * length to restore. Truncates silently: the path is for messages only. */
static size_t path_push(vctx *v, const char *name, int64_t i) {
  size_t old = v->len;
  int n;
  if (name != NULL && name[0] != '\0') {
    n = snprintf(v->path + v->len, HS_PATH_MAX - v->len, "%s%s", v->len ? "." : "", name);
  } else {
    n = snprintf(v->path + v->len, HS_PATH_MAX - v->len, "[%lld]", (long long)i);
  }
  if (n > 0) v->len += (size_t)n;
  if (v->len >= HS_PATH_MAX) v->len = HS_PATH_MAX - 1;
  return old;
}

static void path_pop(vctx *v, size_t old) {
  v->len = old;
  v->path[old] = '\0';
}

static int64_t load_offset(const void *buf, bool large, int64_t i) {
  if (large) return ((const int64_t *)buf)[i];
  return ((const int32_t *)buf)[i];
}

/* Offsets [offset, offset+length] must be >= 0 and non-decreasing, and the
 * last must not exceed `limit` when limit >= 0. Returns first and last. */
static hs_status check_offsets(vctx *v, const struct ArrowArray *a, bool large, int64_t limit,
                               int64_t *first, int64_t *last) {
  *first = *last = 0;
  const void *offs = a->buffers[1];
  if (offs == NULL) {
    if (a->length > 0)
      return FAIL(v, "offsets buffer is NULL with length %lld", (long long)a->length);
    return HS_OK;
  }
  int64_t prev = load_offset(offs, large, a->offset);
  if (prev < 0)
    return FAIL(v, "offset[%lld] = %lld is negative", (long long)a->offset, (long long)prev);
  *first = prev;
  for (int64_t i = 1; i <= a->length; i++) {
    int64_t cur = load_offset(offs, large, a->offset + i);
    if (cur < prev) {
      return FAIL(v, "offsets decrease at index %lld (%lld < %lld)", (long long)(a->offset + i),
                  (long long)cur, (long long)prev);
    }
    prev = cur;
  }
  *last = prev;
  if (limit >= 0 && prev > limit) {
    return FAIL(v, "last offset %lld exceeds the child length %lld", (long long)prev,
                (long long)limit);
  }
  return HS_OK;
}

static bool is_index_type(hs_arrow_type_id id) {
  return id >= HS_AT_INT8 && id <= HS_AT_UINT64;
}

/* Dictionary index of row i (offset applied), or -1 when not representable. */
static int64_t load_index(const void *buf, hs_arrow_type_id id, int64_t i) {
  switch (id) {
  case HS_AT_INT8: return ((const int8_t *)buf)[i];
  case HS_AT_UINT8: return ((const uint8_t *)buf)[i];
  case HS_AT_INT16: return ((const int16_t *)buf)[i];
  case HS_AT_UINT16: return ((const uint16_t *)buf)[i];
  case HS_AT_INT32: return ((const int32_t *)buf)[i];
  case HS_AT_UINT32: return ((const uint32_t *)buf)[i];
  case HS_AT_INT64: return ((const int64_t *)buf)[i];
  default: {
    uint64_t u = ((const uint64_t *)buf)[i];
    return u > (uint64_t)INT64_MAX ? -1 : (int64_t)u;
  }
  }
}

static hs_status validate_node(vctx *v, const struct ArrowSchema *s, const struct ArrowArray *a,
                               int depth);

static hs_status check_dictionary(vctx *v, const struct ArrowSchema *s, const struct ArrowArray *a,
                                  hs_arrow_type_id index_type, int depth) {
  if (s->dictionary == NULL) {
    if (a->dictionary != NULL) return FAIL(v, "array has a dictionary the schema lacks");
    return HS_OK;
  }
  if (a->dictionary == NULL) return FAIL(v, "dictionary-encoded but the array has no dictionary");
  if (!is_index_type(index_type)) {
    return FAIL(v, "dictionary index type '%s' is not an integer type", s->format);
  }
  size_t old = path_push(v, "<dictionary>", 0);
  hs_status st = validate_node(v, s->dictionary, a->dictionary, depth + 1);
  path_pop(v, old);
  if (st != HS_OK) return st;
  int64_t dict_len = a->dictionary->length;
  const void *idx = a->buffers[1];
  for (int64_t i = 0; i < a->length; i++) {
    if (!hs_arrow_is_valid(a, i)) continue;
    int64_t k = load_index(idx, index_type, a->offset + i);
    if (k < 0 || k >= dict_len) {
      return FAIL(v, "dictionary index %lld at row %lld outside [0, %lld)", (long long)k,
                  (long long)i, (long long)dict_len);
    }
  }
  return HS_OK;
}

/* Expected buffers and children of a type; children -1: "as the schema". */
static void expected_layout(const hs_arrow_type *t, int64_t *n_buffers, int64_t *n_children) {
  *n_children = 0;
  switch (t->id) {
  case HS_AT_NA: *n_buffers = 0; break;
  case HS_AT_BINARY:
  case HS_AT_LARGE_BINARY:
  case HS_AT_STRING:
  case HS_AT_LARGE_STRING: *n_buffers = 3; break;
  case HS_AT_LIST:
  case HS_AT_LARGE_LIST:
  case HS_AT_MAP:
    *n_buffers = 2;
    *n_children = 1;
    break;
  case HS_AT_FIXED_LIST:
    *n_buffers = 1;
    *n_children = 1;
    break;
  case HS_AT_STRUCT:
    *n_buffers = 1;
    *n_children = -1;
    break;
  default: *n_buffers = 2; break; /* fixed width and bool: validity, values */
  }
}

static hs_status check_header(vctx *v, const struct ArrowSchema *s, const struct ArrowArray *a,
                              const hs_arrow_type *t) {
  if (a->length < 0) return FAIL(v, "negative length %lld", (long long)a->length);
  if (a->offset < 0) return FAIL(v, "negative offset %lld", (long long)a->offset);
  if (a->length > INT64_MAX - a->offset) return FAIL(v, "offset + length overflows");
  if (a->null_count < -1 || a->null_count > a->length) {
    return FAIL(v, "null_count %lld outside [-1, %lld]", (long long)a->null_count,
                (long long)a->length);
  }
  int64_t want_buffers, want_children;
  expected_layout(t, &want_buffers, &want_children);
  if (want_children < 0) want_children = s->n_children;
  if (s->n_children != want_children) {
    return FAIL(v, "schema '%s' has %lld children, expected %lld", s->format,
                (long long)s->n_children, (long long)want_children);
  }
  if (a->n_children != want_children) {
    return FAIL(v, "array has %lld children, schema '%s' has %lld", (long long)a->n_children,
                s->format, (long long)want_children);
  }
  if (a->n_buffers != want_buffers) {
    return FAIL(v, "array has %lld buffers, type '%s' needs %lld", (long long)a->n_buffers,
                s->format, (long long)want_buffers);
  }
  if (want_buffers > 0 && a->buffers == NULL) return FAIL(v, "buffers array is NULL");
  if (want_children > 0 && (a->children == NULL || s->children == NULL)) {
    return FAIL(v, "children array is NULL");
  }
  for (int64_t i = 0; i < want_children; i++) {
    if (a->children[i] == NULL || s->children[i] == NULL) {
      return FAIL(v, "child %lld is NULL", (long long)i);
    }
  }
  if (want_buffers > 0 && a->buffers[0] == NULL && a->null_count > 0) {
    return FAIL(v, "null_count %lld but no validity buffer", (long long)a->null_count);
  }
  return HS_OK;
}

static hs_status check_children_len(vctx *v, const struct ArrowArray *a, int64_t need) {
  for (int64_t i = 0; i < a->n_children; i++) {
    if (a->children[i]->length < need) {
      return FAIL(v, "child %lld has length %lld, needs at least %lld", (long long)i,
                  (long long)a->children[i]->length, (long long)need);
    }
  }
  return HS_OK;
}

/* Per-type checks of this node's buffers against its own fields. */
static hs_status check_buffers(vctx *v, const struct ArrowSchema *s, const struct ArrowArray *a,
                               const hs_arrow_type *t) {
  int64_t first, last, end = a->offset + a->length;
  hs_status st;
  switch (t->id) {
  case HS_AT_NA: return HS_OK;
  case HS_AT_BINARY:
  case HS_AT_STRING:
  case HS_AT_LARGE_BINARY:
  case HS_AT_LARGE_STRING: {
    bool large = t->id == HS_AT_LARGE_BINARY || t->id == HS_AT_LARGE_STRING;
    st = check_offsets(v, a, large, -1, &first, &last);
    if (st == HS_OK && last > first && a->buffers[2] == NULL) {
      st = FAIL(v, "data buffer is NULL but offsets span %lld bytes", (long long)(last - first));
    }
    return st;
  }
  case HS_AT_LIST:
  case HS_AT_LARGE_LIST:
  case HS_AT_MAP:
    if (t->id == HS_AT_MAP) {
      const struct ArrowSchema *e = s->children[0];
      if (e->format == NULL || strcmp(e->format, "+s") != 0 || e->n_children != 2) {
        return FAIL(v, "map entries must be a struct of key and value");
      }
    }
    return check_offsets(v, a, t->id == HS_AT_LARGE_LIST, a->children[0]->length, &first, &last);
  case HS_AT_FIXED_LIST: {
    int64_t need;
    if (__builtin_mul_overflow(end, (int64_t)t->width, &need)) {
      return FAIL(v, "(offset + length) * %d overflows", t->width);
    }
    return check_children_len(v, a, need);
  }
  case HS_AT_STRUCT: return check_children_len(v, a, end);
  default:
    if (a->length > 0 && a->buffers[1] == NULL) {
      return FAIL(v, "values buffer is NULL with length %lld", (long long)a->length);
    }
    return HS_OK;
  }
}

static hs_status validate_node(vctx *v, const struct ArrowSchema *s, const struct ArrowArray *a,
                               int depth) {
  if (s == NULL || a == NULL) return FAIL(v, "NULL schema or array");
  if (s->release == NULL) return FAIL(v, "schema is released");
  if (a->release == NULL) return FAIL(v, "array is released");
  if (depth > HS_ARROW_DEPTH_MAX) {
    return fail_at(v, HS_ERR_UNSUPPORTED, "nested deeper than %d", HS_ARROW_DEPTH_MAX);
  }
  if (s->format == NULL) return FAIL(v, "schema format is NULL");
  hs_arrow_type t;
  hs_error perr = {0};
  if (hs_arrow_type_parse(s->format, &t, &perr) != HS_OK) {
    return fail_at(v, perr.status, "%s", perr.message);
  }
  if (t.id == HS_AT_OTHER) {
    return fail_at(v, HS_ERR_UNSUPPORTED, "format '%s' is not supported", s->format);
  }
  hs_status st = check_header(v, s, a, &t);
  if (st == HS_OK) st = check_buffers(v, s, a, &t);
  for (int64_t i = 0; st == HS_OK && i < a->n_children; i++) {
    size_t old = path_push(v, s->children[i]->name, i);
    st = validate_node(v, s->children[i], a->children[i], depth + 1);
    path_pop(v, old);
  }
  if (st == HS_OK) st = check_dictionary(v, s, a, t.id, depth);
  return st;
}

hs_status hs_arrow_array_validate(const struct ArrowSchema *s, const struct ArrowArray *a,
                                  hs_error *err) {
  vctx v;
  v.path[0] = '\0';
  v.len = 0;
  v.err = err;
  /* A named root (a single column rather than a record batch) starts the path. */
  if (s != NULL && s->name != NULL && s->name[0] != '\0') path_push(&v, s->name, 0);
  return validate_node(&v, s, a, 0);
}
