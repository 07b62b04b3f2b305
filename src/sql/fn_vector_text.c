/*
 * fn_vector_text.c — pgvector's text forms and the casts among vector,
 * halfvec, sparsevec, bit and text (interface: fn_vector.h).
 *
 * Parsing follows pgvector's input functions: whitespace around elements,
 * strtof for components (so "1e3", "inf" and hex floats read as strtof
 * reads them), NaN and infinities refused, dimensions bounded before any
 * allocation sized from the input. Printing is PostgreSQL's float4 output:
 * the shortest decimal that reads back as the same float, fixed-point for
 * decimal exponents -4..5 and d.ddde+XX otherwise.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../index/vector/distance.h"
#include "fn_vector.h"
#include "fn_vector_internal.h"

/* ------------------------------------------------------------- errors */

hs_status hs_sql_vector_error(hs_error *err, hs_status st, int32_t pos, const char *fmt, ...) {
  char msg[HS_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (pos > 0) return hs_error_set(err, st, "at position %d: %s", (int)pos, msg);
  return hs_error_set(err, st, "%s", msg);
}

/* The literal for messages: at most 80 bytes, "..." after a cut. */
static void lit_quote(const char *s, size_t n, char *buf, size_t cap) {
  size_t m = n > 80 ? 80 : n;
  if (m + 4 > cap) m = cap > 4 ? cap - 4 : 0;
  memcpy(buf, s, m);
  if (m < n) {
    memcpy(buf + m, "...", 4);
  } else {
    buf[m] = '\0';
  }
}

static const char *tname(hs_sql_tid id) {
  switch (id) {
  case HS_SQL_VECTOR: return "vector";
  case HS_SQL_HALFVEC: return "halfvec";
  case HS_SQL_SPARSEVEC: return "sparsevec";
  case HS_SQL_BIT: return "bit";
  default: return "?";
  }
}

hs_status hs_sql_vector_check_dim(int64_t dim, hs_sql_tid id, int32_t pos, hs_error *err) {
  if (dim < 1)
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos, "%s must have at least 1 dimension",
                               tname(id));
  int64_t max = id == HS_SQL_SPARSEVEC ? HS_SQL_SPARSEVEC_MAX_DIM : HS_SQL_VECTOR_MAX_DIM;
  if (dim > max)
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                               "%s cannot have more than %lld dimensions", tname(id),
                               (long long)max);
  return HS_OK;
}

hs_status hs_sql_vector_check_typmod(int32_t typmod, int64_t dim, int32_t pos, hs_error *err) {
  if (typmod > 0 && typmod != dim)
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos, "expected %d dimensions, not %lld",
                               (int)typmod, (long long)dim);
  return HS_OK;
}

/* ----------------------------------------------------- float printing */

size_t hs_sql_float4_format(float f, char *buf) {
  if (isnan(f)) return (size_t)sprintf(buf, "NaN");
  if (isinf(f)) return (size_t)sprintf(buf, f < 0 ? "-Infinity" : "Infinity");
  if (f == 0) return (size_t)sprintf(buf, signbit(f) ? "-0" : "0");
  char tmp[32];
  int p = 1;
  for (; p < 9; p++) {
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, (double)f);
    if (strtof(tmp, NULL) == f) break;
  }
  if (p == 9) snprintf(tmp, sizeof tmp, "%.8e", (double)f);
  /* tmp: [-]d[.ddd]e[+-]XX */
  const char *t = tmp;
  bool neg = false;
  if (*t == '-') {
    neg = true;
    t++;
  }
  char digits[16];
  int nd = 0;
  for (; *t != 'e'; t++)
    if (*t >= '0' && *t <= '9' && nd < 15) digits[nd++] = *t;
  int exp = atoi(t + 1);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  char *o = buf;
  if (neg) *o++ = '-';
  if (exp >= -4 && exp < 6) {
    if (exp < 0) {
      *o++ = '0';
      *o++ = '.';
      for (int i = 0; i < -exp - 1; i++) *o++ = '0';
      for (int i = 0; i < nd; i++) *o++ = digits[i];
    } else {
      for (int i = 0; i <= exp; i++) *o++ = i < nd ? digits[i] : '0';
      if (nd > exp + 1) {
        *o++ = '.';
        for (int i = exp + 1; i < nd; i++) *o++ = digits[i];
      }
    }
  } else {
    *o++ = digits[0];
    if (nd > 1) {
      *o++ = '.';
      for (int i = 1; i < nd; i++) *o++ = digits[i];
    }
    o += sprintf(o, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  }
  *o = '\0';
  return (size_t)(o - buf);
}

/* ------------------------------------------------------------ parsing */

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* One float component at *pp (NUL-terminated text); *pp moves past it. */
static hs_status parse_component(const char **pp, hs_sql_tid id, int32_t pos, const char *lit,
                                 float *out, hs_error *err) {
  const char *p = *pp;
  char *end;
  errno = 0;
  float v = strtof(p, &end);
  if (end == p)
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                               "invalid input syntax for type %s: \"%s\"", tname(id), lit);
  if (errno == ERANGE && isinf(v)) {
    char num[48];
    lit_quote(p, (size_t)(end - p), num, sizeof num);
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos, "\"%s\" is out of range for type %s",
                               num, tname(id));
  }
  if (id == HS_SQL_HALFVEC && isfinite(v)) {
    float h = hs_f16_to_f32(hs_f32_to_f16(v));
    if (isinf(h)) {
      char num[48];
      lit_quote(p, (size_t)(end - p), num, sizeof num);
      return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos, "\"%s\" is out of range for type %s",
                                 num, tname(id));
    }
    v = h;
  }
  if (isnan(v))
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos, "NaN not allowed in %s", tname(id));
  if (isinf(v))
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos, "infinite value not allowed in %s",
                               tname(id));
  *out = v;
  *pp = end;
  return HS_OK;
}

static hs_status parse_dense(const char *s, const char *lit, hs_sql_type to, int32_t pos,
                             hs_arena *arena, hs_sql_value *out, hs_error *err) {
  const char *p = s;
  size_t commas = 0;
  for (const char *q = s; *q; q++) commas += *q == ',';
  while (is_space(*p)) p++;
  if (*p != '[')
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                               "invalid input syntax for type %s: \"%s\" (contents must start with "
                               "\"[\")",
                               tname(to.id), lit);
  p++;
  while (is_space(*p)) p++;
  if (*p == ']')
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos, "%s must have at least 1 dimension",
                               tname(to.id));
  size_t cap = commas + 1 > HS_SQL_VECTOR_MAX_DIM ? HS_SQL_VECTOR_MAX_DIM : commas + 1;
  float *x = hs_arena_alloc(arena, cap * sizeof(float));
  if (x == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory parsing a %s", tname(to.id));
  size_t dim = 0;
  for (;;) {
    if (dim == HS_SQL_VECTOR_MAX_DIM)
      return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                                 "%s cannot have more than %d dimensions", tname(to.id),
                                 HS_SQL_VECTOR_MAX_DIM);
    while (is_space(*p)) p++;
    if (*p == '\0')
      return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                                 "invalid input syntax for type %s: \"%s\"", tname(to.id), lit);
    hs_status st = parse_component(&p, to.id, pos, lit, &x[dim], err);
    if (st != HS_OK) return st;
    dim++;
    while (is_space(*p)) p++;
    if (*p == ',') {
      p++;
    } else if (*p == ']') {
      p++;
      break;
    } else {
      return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                                 "invalid input syntax for type %s: \"%s\"", tname(to.id), lit);
    }
  }
  while (is_space(*p)) p++;
  if (*p != '\0')
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                               "invalid input syntax for type %s: \"%s\" (junk after closing right "
                               "brace)",
                               tname(to.id), lit);
  hs_status st = hs_sql_vector_check_typmod(to.a, (int64_t)dim, pos, err);
  if (st != HS_OK) return st;
  memset(out, 0, sizeof *out);
  out->type = hs_sql_type_of(to.id);
  out->type.a = (int32_t)dim;
  out->v.vec = x;
  return HS_OK;
}

typedef struct sp_elem {
  int64_t index; /* 1-based as written */
  float value;
} sp_elem;

static int sp_elem_cmp(const void *a, const void *b) {
  int64_t x = ((const sp_elem *)a)->index, y = ((const sp_elem *)b)->index;
  return x < y ? -1 : x > y;
}

static hs_status parse_sparse(const char *s, const char *lit, hs_sql_type to, int32_t pos,
                              hs_arena *arena, hs_sql_value *out, hs_error *err) {
  const char *p = s;
  size_t commas = 0;
  for (const char *q = s; *q; q++) commas += *q == ',';
  if (commas + 1 > HS_SQL_SPARSEVEC_MAX_NNZ)
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                               "sparsevec cannot have more than %d non-zero elements",
                               HS_SQL_SPARSEVEC_MAX_NNZ);
  sp_elem *el = hs_malloc((commas + 1) * sizeof(sp_elem));
  if (el == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory parsing a sparsevec");
  hs_status st = HS_OK;
  size_t nnz = 0;
#define SP_SYNTAX(detail)                                                                       \
  do {                                                                                          \
    st = hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,                                      \
                             "invalid input syntax for type sparsevec: \"%s\"%s", lit, detail); \
    goto done;                                                                                  \
  } while (0)
  while (is_space(*p)) p++;
  if (*p != '{') SP_SYNTAX(" (contents must start with \"{\")");
  p++;
  while (is_space(*p)) p++;
  if (*p == '}') {
    p++;
  } else {
    for (;;) {
      while (is_space(*p)) p++;
      if (*p == '\0') SP_SYNTAX("");
      char *end;
      errno = 0;
      long long index = strtoll(p, &end, 10);
      if (end == p) SP_SYNTAX("");
      if (errno == ERANGE || index < 1 || index > INT32_MAX) {
        st = hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                                 "index \"%lld\" is out of range for type sparsevec", index);
        goto done;
      }
      p = end;
      while (is_space(*p)) p++;
      if (*p != ':') SP_SYNTAX("");
      p++;
      while (is_space(*p)) p++;
      float v;
      st = parse_component(&p, HS_SQL_SPARSEVEC, pos, lit, &v, err);
      if (st != HS_OK) goto done;
      if (v != 0) {
        el[nnz].index = index;
        el[nnz].value = v;
        nnz++;
      }
      while (is_space(*p)) p++;
      if (*p == ',') {
        p++;
      } else if (*p == '}') {
        p++;
        break;
      } else {
        SP_SYNTAX("");
      }
    }
  }
  while (is_space(*p)) p++;
  if (*p != '/') SP_SYNTAX(" (unexpected end of input)");
  p++;
  while (is_space(*p)) p++;
  {
    char *end;
    errno = 0;
    long long dim = strtoll(p, &end, 10);
    if (end == p) SP_SYNTAX("");
    p = end;
    while (is_space(*p)) p++;
    if (*p != '\0') SP_SYNTAX(" (junk after closing)");
    if (errno == ERANGE) dim = dim < 0 ? -1 : (long long)HS_SQL_SPARSEVEC_MAX_DIM + 1;
    st = hs_sql_vector_check_dim(dim, HS_SQL_SPARSEVEC, pos, err);
    if (st != HS_OK) goto done;
    st = hs_sql_vector_check_typmod(to.a, dim, pos, err);
    if (st != HS_OK) goto done;
    qsort(el, nnz, sizeof(sp_elem), sp_elem_cmp);
    for (size_t i = 0; i < nnz; i++) {
      if (el[i].index > dim) {
        st = hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                                 "index must be less than or equal to dimensions");
        goto done;
      }
      if (i > 0 && el[i].index == el[i - 1].index) {
        st = hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                                 "indexes must not contain duplicates");
        goto done;
      }
    }
    size_t bytes = 8 + 8 * nnz;
    unsigned char *b = hs_arena_alloc(arena, bytes);
    if (b == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "out of memory parsing a sparsevec");
      goto done;
    }
    int32_t hdr[2] = {(int32_t)dim, (int32_t)nnz};
    memcpy(b, hdr, 8);
    for (size_t i = 0; i < nnz; i++) {
      uint32_t ix = (uint32_t)(el[i].index - 1);
      memcpy(b + 8 + 4 * i, &ix, 4);
      memcpy(b + 8 + 4 * nnz + 4 * i, &el[i].value, 4);
    }
    memset(out, 0, sizeof *out);
    out->type = hs_sql_type_of(HS_SQL_SPARSEVEC);
    out->type.a = (int32_t)dim;
    out->v.s.ptr = (const char *)b;
    out->v.s.len = (uint32_t)bytes;
  }
#undef SP_SYNTAX
done:
  hs_free(el);
  return st;
}

static int hex_val(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static hs_status parse_bit(const char *s, size_t n, hs_sql_type to, int32_t pos, hs_arena *arena,
                           hs_sql_value *out, hs_error *err) {
  bool hex = false;
  if (n > 0 && (s[0] == 'b' || s[0] == 'B')) {
    s++;
    n--;
  } else if (n > 0 && (s[0] == 'x' || s[0] == 'X')) {
    hex = true;
    s++;
    n--;
  }
  if (n > HS_SQL_BIT_MAX_BITS / (hex ? 4 : 1))
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                               "bit string too long for type bit (at most %d bits)",
                               HS_SQL_BIT_MAX_BITS);
  size_t bits = hex ? n * 4 : n;
  if (to.a > 0 && (size_t)to.a != bits)
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                               "bit string length %zu does not match type bit(%d)", bits,
                               (int)to.a);
  size_t bytes = 4 + (bits + 7) / 8;
  unsigned char *b0 = hs_arena_alloc(arena, bytes);
  if (b0 == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory parsing a bit string");
  int32_t nbits = (int32_t)bits;
  memcpy(b0, &nbits, 4);
  unsigned char *b = b0 + 4;
  for (size_t i = 0; i < n; i++) {
    if (hex) {
      int v = hex_val(s[i]);
      if (v < 0)
        return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                                   "\"%c\" is not a valid hexadecimal digit", s[i]);
      b[i / 2] |= (unsigned char)(i % 2 ? v : v << 4);
    } else {
      if (s[i] != '0' && s[i] != '1')
        return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                                   "\"%c\" is not a valid binary digit", s[i]);
      if (s[i] == '1') b[i / 8] |= (unsigned char)(0x80u >> (i % 8));
    }
  }
  memset(out, 0, sizeof *out);
  out->type = hs_sql_type_of(HS_SQL_BIT);
  out->type.a = to.a;
  out->v.s.ptr = (const char *)b0;
  out->v.s.len = (uint32_t)bytes;
  return HS_OK;
}

hs_status hs_sql_vector_parse(const char *s, size_t n, hs_sql_type to, int32_t pos, hs_arena *arena,
                              hs_sql_value *out, hs_error *err) {
  if (to.id == HS_SQL_BIT) return parse_bit(s, n, to, pos, arena, out, err);
  if (to.id != HS_SQL_VECTOR && to.id != HS_SQL_HALFVEC && to.id != HS_SQL_SPARSEVEC)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "hs_sql_vector_parse: not a vector type");
  /* One comma per component and 16000 components bound the useful text;
   * longer input is refused before copying (components may be long
   * numbers, so allow 64 bytes each). */
  size_t limit =
      (size_t)(to.id == HS_SQL_SPARSEVEC ? HS_SQL_SPARSEVEC_MAX_NNZ : HS_SQL_VECTOR_MAX_DIM) * 80;
  if (n > limit)
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                               "%s literal too long (%zu bytes; at most %zu)", tname(to.id), n,
                               limit);
  if (memchr(s, '\0', n) != NULL)
    return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                               "invalid input syntax for type %s: NUL byte", tname(to.id));
  char stackbuf[512];
  char *buf = n < sizeof stackbuf ? stackbuf : hs_malloc(n + 1);
  if (buf == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory parsing a %s", tname(to.id));
  memcpy(buf, s, n);
  buf[n] = '\0';
  char lit[96];
  lit_quote(s, n, lit, sizeof lit);
  hs_status st = to.id == HS_SQL_SPARSEVEC ? parse_sparse(buf, lit, to, pos, arena, out, err)
                                           : parse_dense(buf, lit, to, pos, arena, out, err);
  if (buf != stackbuf) hs_free(buf);
  return st;
}

/* ----------------------------------------------------------- printing */

bool hs_sql_sparse_view_of(hs_sql_str s, hs_sql_sparse_view *out) {
  if (s.len < 8) return false;
  int32_t hdr[2];
  memcpy(hdr, s.ptr, 8);
  if (hdr[0] < 1 || hdr[1] < 0 || hdr[1] > HS_SQL_SPARSEVEC_MAX_NNZ || hdr[1] > hdr[0])
    return false;
  if ((size_t)s.len != 8 + 8 * (size_t)hdr[1]) return false;
  out->dim = hdr[0];
  out->nnz = hdr[1];
  out->indices = (const unsigned char *)s.ptr + 8;
  out->values = (const unsigned char *)s.ptr + 8 + 4 * (size_t)hdr[1];
  return true;
}

static bool fmt_floats(const float *x, int32_t dim, hs_buf *out) {
  if (!hs_buf_reserve(out, (size_t)dim * 16 + 2)) return false;
  char tmp[32];
  if (!hs_buf_append_byte(out, '[')) return false;
  for (int32_t i = 0; i < dim; i++) {
    size_t k = hs_sql_float4_format(x[i], tmp);
    if (i > 0 && !hs_buf_append_byte(out, ',')) return false;
    if (!hs_buf_append(out, tmp, k)) return false;
  }
  return hs_buf_append_byte(out, ']');
}

static bool fmt_sparse(hs_sql_str s, hs_buf *out) {
  hs_sql_sparse_view sv;
  if (!hs_sql_sparse_view_of(s, &sv)) return hs_buf_append(out, "{}/0", 4);
  if (!hs_buf_reserve(out, (size_t)sv.nnz * 28 + 16)) return false;
  char tmp[48];
  if (!hs_buf_append_byte(out, '{')) return false;
  for (int32_t i = 0; i < sv.nnz; i++) {
    uint32_t ix;
    float v;
    memcpy(&ix, sv.indices + 4 * (size_t)i, 4);
    memcpy(&v, sv.values + 4 * (size_t)i, 4);
    int k = snprintf(tmp, sizeof tmp, "%s%u:", i ? "," : "", ix + 1);
    if (!hs_buf_append(out, tmp, (size_t)k)) return false;
    size_t f = hs_sql_float4_format(v, tmp);
    if (!hs_buf_append(out, tmp, f)) return false;
  }
  return hs_buf_printf(out, "}/%d", (int)sv.dim);
}

static bool fmt_bit(hs_sql_str s, hs_buf *out) {
  int64_t nb = hs_sql_bit_len(s);
  if (nb < 0) return true;
  if (!hs_buf_reserve(out, (size_t)nb)) return false;
  const unsigned char *p = (const unsigned char *)s.ptr + 4;
  for (int64_t i = 0; i < nb; i++)
    if (!hs_buf_append_byte(out, (p[i / 8] >> (7 - i % 8)) & 1 ? '1' : '0')) return false;
  return true;
}

bool hs_sql_vector_format(const hs_sql_value *v, hs_buf *out) {
  switch (v->type.id) {
  case HS_SQL_VECTOR:
  case HS_SQL_HALFVEC: return fmt_floats(v->v.vec, v->type.a, out);
  case HS_SQL_SPARSEVEC: return fmt_sparse(v->v.s, out);
  case HS_SQL_BIT: return fmt_bit(v->v.s, out);
  default: return false;
  }
}

/* -------------------------------------------------------------- casts */

bool hs_sql_vector_cast_exists(hs_sql_type from, hs_sql_type to) {
  bool fv = hs_sql_type_is_pgvector(from.id), tv = hs_sql_type_is_pgvector(to.id);
  if (!fv && !tv) return false;
  if (from.id == HS_SQL_NULLTYPE) return true;
  if (from.id == HS_SQL_TEXT || to.id == HS_SQL_TEXT) return true;
  if (from.id == HS_SQL_BIT || to.id == HS_SQL_BIT) return from.id == to.id;
  return fv && tv;
}

/* Output rows' dimension for a cast of dense/sparse input: the typmod, or
 * the input's (checked equal on every valid row for sparse input). */
static hs_status cast_text_to(const hs_sql_vec *in, hs_sql_type to, int32_t pos, hs_sql_vec *out,
                              hs_error *err) {
  const hs_sql_str *s = in->data;
  hs_arena arena;
  hs_arena_init(&arena);
  hs_status st = HS_OK;
  int64_t n = in->n;
  int32_t dim = to.a;
  hs_sql_value v;
  bool dense = hs_sql_type_is_vector(to.id);
  /* byte-string results: gathered in one buffer, then one blob */
  hs_buf bytes;
  hs_buf_init(&bytes);
  size_t *off = NULL;
  /* Find the run-time dimension when there is no typmod. */
  if (dim == 0 && hs_sql_type_is_vector(to.id)) {
    for (int64_t i = 0; i < n; i++) {
      if (!hs_sql_vec_valid(in, i)) continue;
      st = hs_sql_vector_parse(s[i].ptr, s[i].len, to, pos, &arena, &v, err);
      if (st != HS_OK) goto done;
      dim = v.type.a;
      break;
    }
  }
  hs_sql_type rt = to;
  rt.a = dim;
  if ((to.id == HS_SQL_VECTOR || to.id == HS_SQL_HALFVEC) && dim == 0) rt.a = 1; /* all NULL */
  st = hs_sql_vec_alloc(out, rt, n, in->valid != NULL, err);
  if (st != HS_OK) goto done;
  if (in->valid != NULL) memcpy(hs_sql_vec_mut_valid(out), in->valid, (size_t)n);
  hs_sql_type want = to;
  want.a = dense ? dim : to.a;
  if (!dense) {
    off = hs_malloc(((size_t)n + 1) * sizeof(size_t));
    if (off == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "out of memory casting to %s", tname(to.id));
      goto done;
    }
  }
  for (int64_t i = 0; i < n; i++) {
    if (off != NULL) off[i] = bytes.len;
    if (!hs_sql_vec_valid(in, i)) continue;
    hs_arena_reset(&arena);
    st = hs_sql_vector_parse(s[i].ptr, s[i].len, want, pos, &arena, &v, err);
    if (st != HS_OK) goto done;
    if (dense) {
      memcpy((float *)hs_sql_vec_mut_data(out) + (size_t)i * (size_t)dim, v.v.vec,
             (size_t)dim * sizeof(float));
    } else if (!hs_buf_append(&bytes, v.v.s.ptr, v.v.s.len)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "out of memory casting to %s", tname(to.id));
      goto done;
    }
  }
  if (!dense) {
    off[n] = bytes.len;
    char *b = hs_sql_vec_add_bytes(out, bytes.len ? bytes.len : 1, err);
    if (b == NULL) {
      st = err->status;
      goto done;
    }
    if (bytes.len) memcpy(b, bytes.data, bytes.len);
    hs_sql_str *o = hs_sql_vec_mut_data(out);
    for (int64_t i = 0; i < n; i++) {
      o[i].ptr = b + off[i];
      o[i].len = (uint32_t)(off[i + 1] - off[i]);
    }
  }
done:
  hs_free(off);
  hs_buf_free(&bytes);
  hs_arena_reset(&arena);
  if (st != HS_OK) hs_sql_vec_release(out);
  return st;
}

static hs_status cast_to_text(const hs_sql_vec *in, hs_sql_vec *out, hs_error *err) {
  int64_t n = in->n;
  hs_status st = hs_sql_vec_alloc(out, hs_sql_type_of(HS_SQL_TEXT), n, in->valid != NULL, err);
  if (st != HS_OK) return st;
  if (in->valid != NULL) memcpy(hs_sql_vec_mut_valid(out), in->valid, (size_t)n);
  hs_buf b;
  hs_buf_init(&b);
  size_t *off = hs_malloc(((size_t)n + 1) * sizeof(size_t));
  if (off == NULL) {
    hs_sql_vec_release(out);
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory casting to text");
  }
  for (int64_t i = 0; i < n; i++) {
    off[i] = b.len;
    if (!hs_sql_vec_valid(in, i)) continue;
    hs_sql_value v;
    hs_sql_vec_get(in, i, &v);
    if (!hs_sql_vector_format(&v, &b)) {
      st = hs_error_set(err, HS_ERR_NOMEM, "out of memory casting to text");
      goto done;
    }
  }
  off[n] = b.len;
  {
    char *dst = hs_sql_vec_add_bytes(out, b.len ? b.len : 1, err);
    if (dst == NULL) {
      st = err->status;
      goto done;
    }
    if (b.len) memcpy(dst, b.data, b.len);
    hs_sql_str *o = hs_sql_vec_mut_data(out);
    for (int64_t i = 0; i < n; i++) {
      o[i].ptr = dst + off[i];
      o[i].len = (uint32_t)(off[i + 1] - off[i]);
    }
  }
done:
  hs_free(off);
  hs_buf_free(&b);
  if (st != HS_OK) hs_sql_vec_release(out);
  return st;
}

/* Dense (vector/halfvec) to dense, with the typmod check and rounding. */
static hs_status cast_dense(const hs_sql_vec *in, hs_sql_type to, int32_t pos, hs_sql_vec *out,
                            hs_error *err) {
  int32_t dim = in->type.a;
  hs_status st = hs_sql_vector_check_typmod(to.a, dim, pos, err);
  if (st != HS_OK) return st;
  if (in->type.id == to.id) return hs_sql_vec_share(out, in, err);
  hs_sql_type rt = to;
  rt.a = dim;
  st = hs_sql_vec_alloc(out, rt, in->n, in->valid != NULL, err);
  if (st != HS_OK) return st;
  if (in->valid != NULL) memcpy(hs_sql_vec_mut_valid(out), in->valid, (size_t)in->n);
  const float *x = in->data;
  float *y = hs_sql_vec_mut_data(out);
  size_t total = (size_t)in->n * (size_t)dim;
  if (to.id == HS_SQL_VECTOR) {
    memcpy(y, x, total * sizeof(float));
    return HS_OK;
  }
  for (size_t k = 0; k < total; k++) {
    float h = hs_f16_to_f32(hs_f32_to_f16(x[k]));
    if (isinf(h) && !isinf(x[k]) && hs_sql_vec_valid(in, (int64_t)(k / (size_t)dim))) {
      hs_sql_vec_release(out);
      char num[32];
      hs_sql_float4_format(x[k], num);
      return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                                 "\"%s\" is out of range for type halfvec", num);
    }
    y[k] = h;
  }
  return HS_OK;
}

static hs_status cast_dense_to_sparse(const hs_sql_vec *in, hs_sql_type to, int32_t pos,
                                      hs_sql_vec *out, hs_error *err) {
  int32_t dim = in->type.a;
  hs_status st = hs_sql_vector_check_typmod(to.a, dim, pos, err);
  if (st != HS_OK) return st;
  hs_sql_type rt = to;
  rt.a = dim;
  st = hs_sql_vec_alloc(out, rt, in->n, in->valid != NULL, err);
  if (st != HS_OK) return st;
  if (in->valid != NULL) memcpy(hs_sql_vec_mut_valid(out), in->valid, (size_t)in->n);
  const float *x = in->data;
  size_t total = 0;
  for (size_t k = 0; k < (size_t)in->n * (size_t)dim; k++) total += x[k] != 0;
  size_t bytes = 8 * (size_t)in->n + 8 * total;
  unsigned char *b = (unsigned char *)hs_sql_vec_add_bytes(out, bytes ? bytes : 1, err);
  if (b == NULL) {
    hs_sql_vec_release(out);
    return err->status;
  }
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < in->n; i++) {
    const float *r = x + (size_t)i * (size_t)dim;
    int32_t nnz = 0;
    for (int32_t j = 0; j < dim; j++) nnz += r[j] != 0;
    int32_t hdr[2] = {dim, nnz};
    memcpy(b, hdr, 8);
    unsigned char *ix = b + 8, *vx = b + 8 + 4 * (size_t)nnz;
    for (int32_t j = 0; j < dim; j++) {
      if (r[j] == 0) continue;
      uint32_t u = (uint32_t)j;
      memcpy(ix, &u, 4);
      memcpy(vx, &r[j], 4);
      ix += 4;
      vx += 4;
    }
    o[i].ptr = (const char *)b;
    o[i].len = (uint32_t)(8 + 8 * (size_t)nnz);
    b += o[i].len;
  }
  return HS_OK;
}

static hs_status cast_sparse(const hs_sql_vec *in, hs_sql_type to, int32_t pos, hs_sql_vec *out,
                             hs_error *err) {
  const hs_sql_str *s = in->data;
  int64_t n = in->n;
  int32_t dim = to.a;
  /* the rows' dimension: all valid rows must agree for a dense result */
  for (int64_t i = 0; i < n; i++) {
    if (!hs_sql_vec_valid(in, i)) continue;
    hs_sql_sparse_view sv;
    if (!hs_sql_sparse_view_of(s[i], &sv))
      return hs_error_set(err, HS_ERR_CORRUPT, "malformed sparsevec value");
    hs_status st = hs_sql_vector_check_typmod(to.a, sv.dim, pos, err);
    if (st != HS_OK) return st;
    if (to.id != HS_SQL_SPARSEVEC) {
      if (dim == 0) {
        st = hs_sql_vector_check_dim(sv.dim, to.id, pos, err);
        if (st != HS_OK) return st;
        dim = sv.dim;
      } else if (sv.dim != dim) {
        return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos, "expected %d dimensions, not %d",
                                   (int)dim, (int)sv.dim);
      }
    }
  }
  if (to.id == HS_SQL_SPARSEVEC) return hs_sql_vec_share(out, in, err);
  hs_sql_type rt = to;
  rt.a = dim > 0 ? dim : 1;
  hs_status st = hs_sql_vec_alloc(out, rt, n, in->valid != NULL, err);
  if (st != HS_OK) return st;
  if (in->valid != NULL) memcpy(hs_sql_vec_mut_valid(out), in->valid, (size_t)n);
  float *y = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!hs_sql_vec_valid(in, i)) continue;
    hs_sql_sparse_view sv;
    hs_sql_sparse_view_of(s[i], &sv);
    float *r = y + (size_t)i * (size_t)rt.a;
    for (int32_t k = 0; k < sv.nnz; k++) {
      uint32_t ix;
      float v;
      memcpy(&ix, sv.indices + 4 * (size_t)k, 4);
      memcpy(&v, sv.values + 4 * (size_t)k, 4);
      if (to.id == HS_SQL_HALFVEC) {
        float h = hs_f16_to_f32(hs_f32_to_f16(v));
        if (isinf(h)) {
          hs_sql_vec_release(out);
          char num[32];
          hs_sql_float4_format(v, num);
          return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos,
                                     "\"%s\" is out of range for type halfvec", num);
        }
        v = h;
      }
      r[ix] = v;
    }
  }
  return HS_OK;
}

/* bit -> bit(n): PostgreSQL's explicit cast pads with zeros or truncates
 * on the right. */
static hs_status cast_bit(const hs_sql_vec *in, hs_sql_type to, hs_sql_vec *out, hs_error *err) {
  if (to.a == 0 || to.a == in->type.a) return hs_sql_vec_share(out, in, err);
  int64_t n = in->n;
  hs_status st = hs_sql_vec_alloc(out, to, n, in->valid != NULL, err);
  if (st != HS_OK) return st;
  if (in->valid != NULL) memcpy(hs_sql_vec_mut_valid(out), in->valid, (size_t)n);
  size_t nb = 4 + ((size_t)to.a + 7) / 8;
  unsigned char *b = (unsigned char *)hs_sql_vec_add_bytes(out, nb * (size_t)n + 1, err);
  if (b == NULL) {
    hs_sql_vec_release(out);
    return err->status;
  }
  memset(b, 0, nb * (size_t)n + 1);
  const hs_sql_str *s = in->data;
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  int32_t nbits = to.a;
  for (int64_t i = 0; i < n; i++) {
    unsigned char *r = b + (size_t)i * nb;
    memcpy(r, &nbits, 4);
    o[i].ptr = (const char *)r;
    o[i].len = (uint32_t)nb;
    int64_t have = hs_sql_vec_valid(in, i) ? hs_sql_bit_len(s[i]) : 0;
    if (have < 0) have = 0;
    size_t keep = (size_t)have < (size_t)to.a ? (size_t)have : (size_t)to.a;
    memcpy(r + 4, s[i].ptr + 4, keep / 8);
    if (keep % 8)
      r[4 + keep / 8] =
          (unsigned char)((unsigned char)s[i].ptr[4 + keep / 8] & (0xFFu << (8 - keep % 8)));
  }
  return HS_OK;
}

hs_status hs_sql_vector_cast_vec(const hs_sql_vec *in, hs_sql_type to, int32_t pos, hs_sql_vec *out,
                                 hs_error *err) {
  hs_sql_tid f = in->type.id;
  memset(out, 0, sizeof *out);
  if (f == HS_SQL_NULLTYPE) {
    hs_sql_type rt = to;
    if ((to.id == HS_SQL_VECTOR || to.id == HS_SQL_HALFVEC) && rt.a == 0) rt.a = 1;
    return hs_sql_vec_alloc(out, rt, in->n, true, err);
  }
  if (f == HS_SQL_TEXT && hs_sql_type_is_pgvector(to.id))
    return cast_text_to(in, to, pos, out, err);
  if (to.id == HS_SQL_TEXT && hs_sql_type_is_pgvector(f)) return cast_to_text(in, out, err);
  if (f == HS_SQL_BIT && to.id == HS_SQL_BIT) return cast_bit(in, to, out, err);
  if (hs_sql_type_is_vector(f) && hs_sql_type_is_vector(to.id))
    return cast_dense(in, to, pos, out, err);
  if (hs_sql_type_is_vector(f) && to.id == HS_SQL_SPARSEVEC)
    return cast_dense_to_sparse(in, to, pos, out, err);
  if (f == HS_SQL_SPARSEVEC && (hs_sql_type_is_vector(to.id) || to.id == HS_SQL_SPARSEVEC))
    return cast_sparse(in, to, pos, out, err);
  char a[64], b[64];
  return hs_sql_vector_error(err, HS_ERR_INVALID_ARG, pos, "cannot cast type %s to %s",
                             hs_sql_type_name(in->type, a, sizeof a),
                             hs_sql_type_name(to, b, sizeof b));
}
