/*
 * expr_literal.c — literals of filter expressions: which Arrow types we
 * filter on and their comparison domain, exact conversion of numeric,
 * date, timestamp, string and boolean literals into a column's domain
 * (the fixed point + fraction + saturation form of expr_internal.h), the
 * three-way comparisons shared by evaluation and pruning, and LIKE
 * matching.
 *
 * Numbers are converted from their decimal text, never through a double,
 * so `int_col < 2.5`, `dec_col = 0.10` and `int64_col = 9007199254740993`
 * are exact. Only float columns see the literal as a double (rounded once,
 * to float32 for float32 columns, as DuckDB does).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_internal.h"

/* -------------------------------------------------------------- columns */

hs_status hs_expr_col_init(hs_expr_col *col, const struct ArrowSchema *field, char *why,
                           size_t why_len) {
  memset(col, 0, sizeof(*col));
  col->name = field->name != NULL ? field->name : "";
  if (field->dictionary != NULL) {
    snprintf(why, why_len, "dictionary-encoded column '%s' is not supported in filters", col->name);
    return HS_ERR_UNSUPPORTED;
  }
  hs_status st = hs_arrow_type_parse(field->format, &col->type, NULL);
  if (st != HS_OK) {
    snprintf(why, why_len, "column '%s' has a malformed type", col->name);
    return HS_ERR_INVALID_ARG;
  }
  switch (col->type.id) {
  case HS_AT_INT8: col->dom = HS_DOM_I64, col->width = 1; break;
  case HS_AT_INT16: col->dom = HS_DOM_I64, col->width = 2; break;
  case HS_AT_INT32:
  case HS_AT_DATE32: col->dom = HS_DOM_I64, col->width = 4; break;
  case HS_AT_INT64:
  case HS_AT_DATE64:
  case HS_AT_TIMESTAMP: col->dom = HS_DOM_I64, col->width = 8; break;
  case HS_AT_UINT8: col->dom = HS_DOM_U64, col->width = 1; break;
  case HS_AT_UINT16: col->dom = HS_DOM_U64, col->width = 2; break;
  case HS_AT_UINT32: col->dom = HS_DOM_U64, col->width = 4; break;
  case HS_AT_UINT64: col->dom = HS_DOM_U64, col->width = 8; break;
  case HS_AT_FLOAT32: col->dom = HS_DOM_F64, col->width = 4; break;
  case HS_AT_FLOAT64: col->dom = HS_DOM_F64, col->width = 8; break;
  case HS_AT_DECIMAL128:
    if (col->type.scale < 0 || col->type.scale > 38 || col->type.precision > 38) {
      snprintf(why, why_len, "decimal column '%s' has precision/scale outside 38", col->name);
      return HS_ERR_UNSUPPORTED;
    }
    col->dom = HS_DOM_DEC, col->width = 16;
    break;
  case HS_AT_STRING:
  case HS_AT_BINARY: col->dom = HS_DOM_BYTES, col->width = 4; break;
  case HS_AT_LARGE_STRING:
  case HS_AT_LARGE_BINARY: col->dom = HS_DOM_BYTES, col->width = 8; break;
  case HS_AT_BOOL: col->dom = HS_DOM_BOOL, col->width = 0; break;
  default:
    snprintf(why, why_len, "column '%s' has type '%s', which filters do not support yet", col->name,
             field->format);
    return HS_ERR_UNSUPPORTED;
  }
  col->bound = true;
  return HS_OK;
}

static const char *col_kind_name(const hs_expr_col *col) {
  switch (col->type.id) {
  case HS_AT_DATE32:
  case HS_AT_DATE64: return "date";
  case HS_AT_TIMESTAMP: return "timestamp";
  case HS_AT_DECIMAL128: return "decimal";
  default: break;
  }
  switch (col->dom) {
  case HS_DOM_I64:
  case HS_DOM_U64: return "integer";
  case HS_DOM_F64: return "floating-point";
  case HS_DOM_BYTES:
    return col->type.id == HS_AT_STRING || col->type.id == HS_AT_LARGE_STRING ? "string" : "binary";
  case HS_DOM_BOOL: return "boolean";
  default: return "other";
  }
}

static const char *lit_kind_name(hs_expr_lit_kind k) {
  switch (k) {
  case HS_LIT_BOOL: return "a boolean";
  case HS_LIT_NUM: return "a number";
  case HS_LIT_STR: return "a string";
  case HS_LIT_DATE: return "a date";
  case HS_LIT_TS: return "a timestamp";
  default: return "NULL";
  }
}

/* -------------------------------------------------------------- numbers */

/* A decimal number: (-1)^neg * digits * 10^exp; special 1 = NaN, 2 = inf. */
typedef struct num {
  bool neg;
  int special;
  const char *digits; /* no leading zeros; may contain none (zero) */
  int ndigits;
  int64_t exp;
  /* digits may be split by a '.': we copy them into buf */
  char buf[128];
} num;

static bool ieq(const char *a, size_t n, const char *b) {
  return strlen(b) == n && strncasecmp(a, b, n) == 0;
}

/* Parse [+-] digits [. digits] [e [+-] digits], or nan / [+-]inf[inity],
 * surrounded by optional whitespace. Up to 120 significant digits. */
static bool num_parse(const char *s, size_t n, num *out) {
  memset(out, 0, sizeof(*out));
  while (n > 0 && isspace((unsigned char)*s)) s++, n--;
  while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
  if (n > 0 && (*s == '+' || *s == '-')) out->neg = *s == '-', s++, n--;
  if (ieq(s, n, "nan")) return out->special = 1, out->neg = false, true;
  if (ieq(s, n, "inf") || ieq(s, n, "infinity")) return out->special = 2, true;
  size_t i = 0;
  int nd = 0, frac_digits = 0;
  bool any = false, dot = false;
  for (; i < n; i++) {
    char c = s[i];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    any = true;
    if (nd == 0 && c == '0') {
      if (dot) frac_digits++;
      continue; /* leading zero */
    }
    if (nd >= 120) return false;
    out->buf[nd++] = c;
    if (dot) frac_digits++;
  }
  if (!any) return false;
  int64_t e = 0;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    bool eneg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i] == '-', i++;
    if (i >= n) return false;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
      if (e < 1000000) e = e * 10 + (s[i] - '0');
    }
    if (eneg) e = -e;
  }
  if (i != n) return false;
  out->digits = out->buf;
  out->ndigits = nd;
  out->exp = e - frac_digits;
  if (nd == 0) out->neg = false;
  return true;
}

bool hs_expr_is_number(const char *s, size_t n) {
  num x;
  return num_parse(s, n, &x);
}

/* floor(x * 10^scale) into *q, *frac = fractional part non-zero; *sat = ±1
 * when |x * 10^scale| does not fit in 38 digits. */
static void num_to_fixed(const num *x, int scale, hs_i128 *q, bool *frac, int *sat) {
  *q = 0, *frac = false, *sat = 0;
  if (x->special == 1) return (void)(*sat = 1); /* NaN: above every number */
  if (x->special == 2) return (void)(*sat = x->neg ? -1 : 1);
  if (x->ndigits == 0) return;
  int64_t k = x->exp + scale;
  int64_t int_digits = x->ndigits + k; /* digits left of the point */
  if (int_digits > 38) return (void)(*sat = x->neg ? -1 : 1);
  hs_i128 v = 0;
  for (int64_t i = 0; i < int_digits; i++) {
    v = v * 10 + (i < x->ndigits ? x->digits[i] - '0' : 0);
  }
  for (int64_t i = int_digits < 0 ? 0 : int_digits; i < x->ndigits; i++) {
    if (x->digits[i] != '0') *frac = true;
  }
  if (x->neg) v = -v - (*frac ? 1 : 0);
  *q = v;
}

static hs_i128 pow10_i128(int p) {
  hs_i128 v = 1;
  for (int i = 0; i < p; i++) v *= 10;
  return v;
}

/* Range of an integer column as i128. */
static void int_range(const hs_expr_col *col, hs_i128 *lo, hs_i128 *hi) {
  int bits = col->width * 8;
  if (col->dom == HS_DOM_U64) {
    *lo = 0;
    *hi = ((hs_i128)1 << bits) - 1;
  } else {
    *lo = -((hs_i128)1 << (bits - 1));
    *hi = ((hs_i128)1 << (bits - 1)) - 1;
  }
}

static void fixed_store(const hs_expr_col *col, hs_i128 q, bool frac, int sat, hs_expr_bound *b) {
  b->frac = frac;
  b->sat = sat;
  if (sat != 0) return;
  hs_i128 lo, hi;
  if (col->dom == HS_DOM_DEC) {
    int p = col->type.precision > 0 ? col->type.precision : 38;
    hi = pow10_i128(p) - 1;
    lo = -hi;
  } else {
    int_range(col, &lo, &hi);
  }
  if (q < lo)
    b->sat = -1;
  else if (q > hi)
    b->sat = 1;
  b->d = q;
  b->i = (int64_t)q;
  b->u = (uint64_t)q;
}

/* ---------------------------------------------------- dates and times */

/* Read 1..maxd digits at *i; false if none. */
static bool read_int(const char *s, size_t n, size_t *i, int maxd, int64_t *out) {
  int64_t v = 0;
  int d = 0;
  while (*i < n && d < maxd && s[*i] >= '0' && s[*i] <= '9') v = v * 10 + (s[(*i)++] - '0'), d++;
  *out = v;
  return d > 0;
}

/* YYYY-MM-DD at *i (years 1..6 digits, optional '-' sign). */
static bool parse_ymd(const char *s, size_t n, size_t *i, int64_t *days) {
  bool neg = false;
  if (*i < n && s[*i] == '-') neg = true, (*i)++;
  int64_t y, m, d;
  if (!read_int(s, n, i, 6, &y) || *i >= n || s[(*i)++] != '-') return false;
  if (!read_int(s, n, i, 2, &m) || *i >= n || s[(*i)++] != '-') return false;
  if (!read_int(s, n, i, 2, &d)) return false;
  if (neg) y = -y;
  if (m < 1 || m > 12 || d < 1 || d > hs_civil_days_in_month(y, (int)m)) return false;
  *days = hs_days_from_civil(y, m, d);
  return true;
}

static void trim(const char **s, size_t *n) {
  while (*n > 0 && isspace((unsigned char)**s)) (*s)++, (*n)--;
  while (*n > 0 && isspace((unsigned char)(*s)[*n - 1])) (*n)--;
}

bool hs_expr_parse_date(const char *s, size_t n, int64_t *secs) {
  trim(&s, &n);
  size_t i = 0;
  int64_t days;
  if (!parse_ymd(s, n, &i, &days) || i != n) return false;
  *secs = days * 86400;
  return true;
}

bool hs_expr_parse_timestamp(const char *s, size_t n, int64_t *secs, int32_t *nanos) {
  trim(&s, &n);
  size_t i = 0;
  int64_t days, hh = 0, mm = 0, ss = 0, ns = 0;
  if (!parse_ymd(s, n, &i, &days)) return false;
  if (i < n && (s[i] == ' ' || s[i] == 'T' || s[i] == 't')) {
    i++;
    while (i < n && s[i] == ' ') i++;
    if (!read_int(s, n, &i, 2, &hh) || i >= n || s[i++] != ':') return false;
    if (!read_int(s, n, &i, 2, &mm)) return false;
    if (i < n && s[i] == ':') {
      i++;
      if (!read_int(s, n, &i, 2, &ss)) return false;
      if (i < n && s[i] == '.') {
        i++;
        int d = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
          if (d < 9) ns = ns * 10 + (s[i] - '0'), d++;
          i++;
        }
        if (d == 0) return false;
        for (; d < 9; d++) ns *= 10;
      }
    }
    if (hh > 24 || mm > 59 || ss > 60 || (hh == 24 && (mm | ss | ns) != 0)) return false;
  }
  while (i < n && s[i] == ' ') i++;
  int64_t off = 0;
  if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
    i++;
  } else if (i < n && (s[i] == '+' || s[i] == '-')) {
    bool neg = s[i++] == '-';
    int64_t oh, om = 0;
    size_t start = i;
    if (!read_int(s, n, &i, 2, &oh)) return false;
    if (i < n && s[i] == ':') {
      i++;
      if (!read_int(s, n, &i, 2, &om)) return false;
    } else if (i - start == 2 && i < n) {
      if (!read_int(s, n, &i, 2, &om)) return false;
    }
    if (oh > 15 || om > 59) return false;
    off = (oh * 3600 + om * 60) * (neg ? -1 : 1);
  }
  if (i != n) return false;
  *secs = days * 86400 + hh * 3600 + mm * 60 + ss - off;
  *nanos = (int32_t)ns;
  return true;
}

bool hs_expr_parse_bool(const char *s, size_t n, bool *out) {
  trim(&s, &n);
  static const char *const yes[] = {"t", "true", "y", "yes", "on", "1"};
  static const char *const no[] = {"f", "false", "n", "no", "off", "0"};
  for (size_t k = 0; k < 6; k++) {
    if (ieq(s, n, yes[k])) return *out = true, true;
    if (ieq(s, n, no[k])) return *out = false, true;
  }
  return false;
}

/* floor((secs + nanos/1e9) / (seconds per tick)) for a tick unit given as
 * ticks per second (tps, >= 1) or days (tps == 0). */
static void time_to_fixed(int64_t secs, int32_t nanos, const hs_expr_col *col, hs_expr_bound *b) {
  hs_i128 q;
  bool frac;
  if (col->type.id == HS_AT_DATE32) {
    hs_i128 s = secs;
    q = s / 86400;
    hs_i128 r = s % 86400;
    if (r < 0) q -= 1, r += 86400;
    frac = r != 0 || nanos != 0;
  } else {
    hs_time_unit u = col->type.id == HS_AT_DATE64 ? HS_UNIT_MS : col->type.unit;
    static const int64_t tps[] = {1, 1000, 1000000, 1000000000};
    int64_t per = 1000000000 / tps[u]; /* nanos per tick */
    q = (hs_i128)secs * tps[u] + nanos / per;
    frac = nanos % per != 0;
  }
  fixed_store(col, q, frac, 0, b);
}

/* ----------------------------------------------------------------- bind */

hs_status hs_expr_bind_literal(const hs_expr_col *col, const hs_expr_lit *lit, hs_expr_bound *out,
                               char *why, size_t why_len) {
  memset(out, 0, sizeof(*out));
  hs_expr_lit_kind k = lit->kind;
  const bool temporal = col->type.id == HS_AT_DATE32 || col->type.id == HS_AT_DATE64 ||
                        col->type.id == HS_AT_TIMESTAMP;
  if (temporal) {
    int64_t secs = lit->secs;
    int32_t nanos = lit->nanos;
    if (k == HS_LIT_STR) {
      if (!hs_expr_parse_timestamp(lit->text, lit->len, &secs, &nanos)) {
        snprintf(why, why_len,
                 "invalid %s literal '%.*s' for column '%s' (expected YYYY-MM-DD[ HH:MM:SS[.f]])",
                 col_kind_name(col), (int)(lit->len > 64 ? 64 : lit->len), lit->text, col->name);
        return HS_ERR_INVALID_ARG;
      }
    } else if (k != HS_LIT_DATE && k != HS_LIT_TS) {
      goto mismatch;
    }
    time_to_fixed(secs, nanos, col, out);
    return HS_OK;
  }
  switch (col->dom) {
  case HS_DOM_I64:
  case HS_DOM_U64:
  case HS_DOM_DEC:
  case HS_DOM_F64: {
    if (k != HS_LIT_NUM && k != HS_LIT_STR) goto mismatch;
    num x;
    if (!num_parse(lit->text, lit->len, &x)) {
      snprintf(why, why_len, "invalid %s literal '%.*s' for column '%s'", col_kind_name(col),
               (int)(lit->len > 64 ? 64 : lit->len), lit->text, col->name);
      return HS_ERR_INVALID_ARG;
    }
    if (col->dom == HS_DOM_F64) {
      char tmp[160];
      size_t n = lit->len < sizeof(tmp) - 1 ? lit->len : sizeof(tmp) - 1;
      memcpy(tmp, lit->text, n);
      tmp[n] = '\0';
      double d = x.special == 1   ? NAN
                 : x.special == 2 ? (x.neg ? -INFINITY : INFINITY)
                                  : strtod(tmp, NULL);
      if (col->width == 4) d = (double)(float)d;
      out->f = d;
      return HS_OK;
    }
    hs_i128 q;
    bool frac;
    int sat;
    num_to_fixed(&x, col->dom == HS_DOM_DEC ? col->type.scale : 0, &q, &frac, &sat);
    fixed_store(col, q, frac, sat, out);
    return HS_OK;
  }
  case HS_DOM_BYTES:
    if (k != HS_LIT_STR) goto mismatch;
    out->bytes = (const uint8_t *)lit->text;
    out->len = lit->len;
    return HS_OK;
  case HS_DOM_BOOL:
    if (k == HS_LIT_BOOL) {
      out->b = lit->b;
      return HS_OK;
    }
    if (k == HS_LIT_STR && hs_expr_parse_bool(lit->text, lit->len, &out->b)) return HS_OK;
    if (k == HS_LIT_STR) {
      snprintf(why, why_len, "invalid boolean literal '%.*s' for column '%s'",
               (int)(lit->len > 64 ? 64 : lit->len), lit->text, col->name);
      return HS_ERR_INVALID_ARG;
    }
    goto mismatch;
  }
mismatch:
  snprintf(why, why_len, "type mismatch: column '%s' is %s, the literal is %s", col->name,
           col_kind_name(col), lit_kind_name(k));
  return HS_ERR_INVALID_ARG;
}

/* ---------------------------------------------------------- comparisons */

int hs_expr_cmp_f64(double a, double b) {
  if (a != a) return b != b ? 0 : 1;
  if (b != b) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

int hs_expr_cmp_scalar(const hs_expr_col *col, const hs_expr_scalar *v, const hs_expr_bound *lit) {
  if (lit->sat != 0 && col->dom != HS_DOM_F64 && col->dom != HS_DOM_BYTES &&
      col->dom != HS_DOM_BOOL) {
    return -lit->sat;
  }
  switch (col->dom) {
  case HS_DOM_I64:
    if (v->i64 != lit->i) return v->i64 < lit->i ? -1 : 1;
    return lit->frac ? -1 : 0;
  case HS_DOM_U64:
    if (v->u64 != lit->u) return v->u64 < lit->u ? -1 : 1;
    return lit->frac ? -1 : 0;
  case HS_DOM_DEC: {
    hs_i128 d;
    memcpy(&d, v->dec, 16);
    if (d != lit->d) return d < lit->d ? -1 : 1;
    return lit->frac ? -1 : 0;
  }
  case HS_DOM_F64: return hs_expr_cmp_f64(v->f64, lit->f);
  case HS_DOM_BYTES: {
    size_t m = v->len < lit->len ? v->len : lit->len;
    int c = m > 0 ? memcmp(v->bytes, lit->bytes, m) : 0;
    if (c != 0) return c < 0 ? -1 : 1;
    return v->len < lit->len ? -1 : v->len > lit->len ? 1 : 0;
  }
  case HS_DOM_BOOL: return (int)v->b - (int)lit->b;
  }
  return 0;
}

/* -------------------------------------------------------------- IN lists */

bool hs_expr_lit_can_equal(const hs_expr_col *col, const hs_expr_bound *b) {
  bool fixed = col->dom == HS_DOM_I64 || col->dom == HS_DOM_U64 || col->dom == HS_DOM_DEC;
  return !fixed || (b->sat == 0 && !b->frac);
}

static int in_cmp_i(const void *a, const void *b) {
  int64_t x = ((const hs_expr_inval *)a)->b.i, y = ((const hs_expr_inval *)b)->b.i;
  return x < y ? -1 : x > y;
}
static int in_cmp_u(const void *a, const void *b) {
  uint64_t x = ((const hs_expr_inval *)a)->b.u, y = ((const hs_expr_inval *)b)->b.u;
  return x < y ? -1 : x > y;
}
static int in_cmp_f(const void *a, const void *b) {
  return hs_expr_cmp_f64(((const hs_expr_inval *)a)->b.f, ((const hs_expr_inval *)b)->b.f);
}
static int in_cmp_d(const void *a, const void *b) {
  hs_i128 x = ((const hs_expr_inval *)a)->b.d, y = ((const hs_expr_inval *)b)->b.d;
  return x < y ? -1 : x > y;
}
static int in_cmp_s(const void *a, const void *b) {
  const hs_expr_bound *x = &((const hs_expr_inval *)a)->b, *y = &((const hs_expr_inval *)b)->b;
  size_t m = x->len < y->len ? x->len : y->len;
  int c = m > 0 ? memcmp(x->bytes, y->bytes, m) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  return x->len < y->len ? -1 : x->len > y->len;
}
static int in_cmp_b(const void *a, const void *b) {
  return (int)((const hs_expr_inval *)a)->b.b - (int)((const hs_expr_inval *)b)->b.b;
}

bool hs_expr_inlist_finish(hs_arena *arena, const hs_expr_col *col, hs_expr_inlist *in) {
  int (*cmp)(const void *, const void *) = NULL;
  size_t kw = 0;
  switch (col->dom) {
  case HS_DOM_I64: cmp = in_cmp_i, kw = sizeof(int64_t); break;
  case HS_DOM_U64: cmp = in_cmp_u, kw = sizeof(uint64_t); break;
  case HS_DOM_F64: cmp = in_cmp_f, kw = sizeof(double); break;
  case HS_DOM_DEC: cmp = in_cmp_d, kw = sizeof(hs_i128); break;
  case HS_DOM_BYTES: cmp = in_cmp_s; break;
  case HS_DOM_BOOL: cmp = in_cmp_b; break;
  }
  if (in->n > 1) qsort(in->vals, (size_t)in->n, sizeof(hs_expr_inval), cmp);
  int64_t m = 0;
  for (int64_t i = 0; i < in->n; i++) {
    if (m > 0 && cmp(&in->vals[m - 1], &in->vals[i]) == 0) continue;
    in->vals[m++] = in->vals[i];
  }
  in->n = m;
  if (col->dom == HS_DOM_F64) {
    for (int64_t i = 0; i < m; i++) {
      if (in->vals[i].b.f == 0.0) in->vals[i].b.f = 0.0; /* -0.0 = 0.0 */
    }
  }
  in->keys = NULL;
  if (kw == 0 || m == 0) return true;
  in->keys = hs_arena_alloc(arena, kw * (size_t)m);
  if (in->keys == NULL) return false;
  for (int64_t i = 0; i < m; i++) {
    const hs_expr_bound *b = &in->vals[i].b;
    switch (col->dom) {
    case HS_DOM_I64: ((int64_t *)in->keys)[i] = b->i; break;
    case HS_DOM_U64: ((uint64_t *)in->keys)[i] = b->u; break;
    case HS_DOM_F64: ((double *)in->keys)[i] = b->f; break;
    case HS_DOM_DEC: ((hs_i128 *)in->keys)[i] = b->d; break;
    default: break;
    }
  }
  return true;
}

int64_t hs_expr_inlist_lower(const hs_expr_col *col, const hs_expr_inlist *in,
                             const hs_expr_scalar *v) {
  int64_t lo = 0, hi = in->n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (hs_expr_cmp_scalar(col, v, &in->vals[mid].b) > 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* ----------------------------------------------------------------- LIKE */

static size_t utf8_len(uint8_t lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

/* Iterative matcher with one backtrack point (the last '%'): O(n * m)
 * worst case, no recursion, so hostile patterns cannot blow up. */
bool hs_expr_like(const uint8_t *s, size_t n, const uint8_t *p, size_t m, int escape) {
  size_t si = 0, pi = 0;
  size_t star_p = SIZE_MAX, star_s = 0;
  while (si < n) {
    if (pi < m && p[pi] == '%') {
      while (pi < m && p[pi] == '%') pi++;
      if (pi == m) return true;
      star_p = pi, star_s = si;
      continue;
    }
    if (pi < m) {
      if (p[pi] == '_') {
        size_t l = utf8_len(s[si]);
        si += l <= n - si ? l : n - si;
        pi++;
        continue;
      }
      size_t lit = pi;
      if (escape >= 0 && p[pi] == (uint8_t)escape && pi + 1 < m) lit = pi + 1;
      if (p[lit] == s[si]) {
        si++, pi = lit + 1;
        continue;
      }
    }
    if (star_p == SIZE_MAX) return false;
    /* Backtrack: the last '%' swallows one more character. */
    star_s += utf8_len(s[star_s]) <= n - star_s ? utf8_len(s[star_s]) : n - star_s;
    si = star_s, pi = star_p;
  }
  while (pi < m && p[pi] == '%') pi++;
  return pi == m;
}
