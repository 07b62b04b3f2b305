/*
 * cast.c — every cast between the SQL types (PostgreSQL's rules), and the
 * text forms of values both ways (PostgreSQL's input and output functions).
 *
 * Numbers: narrowing integers and float/numeric -> integer are range
 * checked ("integer out of range", "bigint out of range"); float -> integer
 * rounds half to even (PostgreSQL uses rint()), numeric -> integer and
 * numeric rescaling round half away from zero; float -> numeric goes
 * through 15 significant digits (PostgreSQL's float8_numeric), numeric ->
 * float is correctly rounded. Text output: integers plainly, numeric with
 * its scale ('1.50'), float8 as the shortest text that reads back
 * ('0.1', '1e+20', 'Infinity', 'NaN'), booleans 'true'/'false', dates
 * 'YYYY-MM-DD', timestamps 'YYYY-MM-DD HH:MM:SS[.ffffff]' (timestamptz
 * with '+00': the session time zone is UTC), intervals in PostgreSQL's
 * default style ('1 year 2 mons 3 days 04:05:06', '-1 days +02:00:00'),
 * bytea as '\x' and hex. The pgvector types go through fn_vector.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fn_internal.h"
#include "fn_vector.h"

/* ---------------------------------------------------------------- shared */

hs_status hs_sql_errf(hs_error *err, hs_status st, int32_t pos, const char *fmt, ...) {
  char msg[HS_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (pos > 0) return hs_error_set(err, st, "at position %d: %s", (int)pos, msg);
  return hs_error_set(err, st, "%s", msg);
}

hs_status hs_sql_kernel_begin(const hs_sql_vec *args, int32_t n_args, int64_t n, hs_sql_type ret,
                              hs_sql_vec *out, hs_error *err) {
  bool nullable = false, all_null = false;
  for (int32_t k = 0; k < n_args; k++) {
    nullable |= args[k].valid != NULL;
    all_null |= args[k].type.id == HS_SQL_NULLTYPE;
  }
  hs_status st = hs_sql_vec_alloc(out, ret, n, nullable || all_null, err);
  if (st != HS_OK || !(nullable || all_null)) return st;
  uint8_t *v = hs_sql_vec_mut_valid(out); /* zeroed: all NULL */
  if (all_null) return HS_OK;
  bool first = true;
  for (int32_t k = 0; k < n_args; k++) {
    const uint8_t *a = args[k].valid;
    if (a == NULL) continue;
    if (first)
      memcpy(v, a, (size_t)n);
    else
      for (int64_t i = 0; i < n; i++) v[i] &= a[i];
    first = false;
  }
  return HS_OK;
}

#define P10(k) ((hs_sql_i128)k##ULL)
const hs_sql_i128 hs_sql_pow10[39] = {
    P10(1),
    P10(10),
    P10(100),
    P10(1000),
    P10(10000),
    P10(100000),
    P10(1000000),
    P10(10000000),
    P10(100000000),
    P10(1000000000),
    P10(10000000000),
    P10(100000000000),
    P10(1000000000000),
    P10(10000000000000),
    P10(100000000000000),
    P10(1000000000000000),
    P10(10000000000000000),
    P10(100000000000000000),
    P10(1000000000000000000),
    P10(10000000000000000000),
    P10(10000000000000000000) * 10,
    P10(10000000000000000000) * 100,
    P10(10000000000000000000) * 1000,
    P10(10000000000000000000) * 10000,
    P10(10000000000000000000) * 100000,
    P10(10000000000000000000) * 1000000,
    P10(10000000000000000000) * 10000000,
    P10(10000000000000000000) * 100000000,
    P10(10000000000000000000) * 1000000000,
    P10(10000000000000000000) * 10000000000,
    P10(10000000000000000000) * 100000000000,
    P10(10000000000000000000) * 1000000000000,
    P10(10000000000000000000) * 10000000000000,
    P10(10000000000000000000) * 100000000000000,
    P10(10000000000000000000) * 1000000000000000,
    P10(10000000000000000000) * 10000000000000000,
    P10(10000000000000000000) * 100000000000000000,
    P10(10000000000000000000) * 1000000000000000000,
    P10(10000000000000000000) * P10(10000000000000000000),
};

bool hs_sql_num_rescale(hs_sql_i128 v, int from, int to, hs_sql_i128 *out) {
  if (to >= from) {
    int k = to - from;
    if (k > 38) return v == 0 ? (*out = 0, true) : false;
    return !__builtin_mul_overflow(v, hs_sql_pow10[k], out);
  }
  int k = from - to;
  if (k > 38) return *out = 0, true;
  hs_sql_i128 p = hs_sql_pow10[k];
  hs_sql_i128 q = v / p, r = v % p;
  if (r < 0) r = -r;
  if (r * 2 >= p) q += v < 0 ? -1 : 1;
  *out = q;
  return true;
}

#define TS_MIN_DAYS HS_SQL_TS_MIN_DAYS
#define TS_END_DAYS HS_SQL_TS_END_DAYS
#define DATE_END_DAYS HS_SQL_DATE_END_DAYS

bool hs_sql_ts_in_range(int64_t us) {
  int64_t d = hs_sql_floor_div(us, HS_SQL_USECS_PER_DAY);
  return d >= TS_MIN_DAYS && d < TS_END_DAYS;
}

bool hs_sql_ts_add_interval(int64_t ts, hs_sql_interval iv, int64_t *out) {
  if (iv.months != 0) {
    int64_t days = hs_sql_floor_div(ts, HS_SQL_USECS_PER_DAY);
    int64_t tod = ts - days * HS_SQL_USECS_PER_DAY;
    int64_t y;
    int m, d;
    hs_civil_from_days(days, &y, &m, &d);
    int64_t mi = y * 12 + (m - 1) + iv.months;
    int64_t ny = mi >= 0 ? mi / 12 : -((-mi + 11) / 12);
    int nm = (int)(mi - ny * 12) + 1;
    int dim = hs_civil_days_in_month(ny, nm);
    if (d > dim) d = dim;
    if (ny < -4714 || ny > 294248) return false;
    int64_t nd = hs_days_from_civil(ny, nm, d);
    ts = nd * HS_SQL_USECS_PER_DAY + tod;
  }
  if (iv.days != 0) {
    if (__builtin_add_overflow(ts, (int64_t)iv.days * HS_SQL_USECS_PER_DAY, &ts)) return false;
  }
  if (__builtin_add_overflow(ts, iv.micros, &ts)) return false;
  if (!hs_sql_ts_in_range(ts)) return false;
  *out = ts;
  return true;
}

/* ------------------------------------------------------------ formatting */

static size_t fmt_u128(unsigned __int128 u, char *buf) {
  char tmp[48];
  size_t k = 0;
  while (u > UINT64_MAX) { /* 128-bit division only for the top digits */
    tmp[k++] = (char)('0' + (int)(u % 10));
    u /= 10;
  }
  uint64_t w = (uint64_t)u;
  do {
    tmp[k++] = (char)('0' + (int)(w % 10));
    w /= 10;
  } while (w != 0);
  for (size_t i = 0; i < k; i++) buf[i] = tmp[k - 1 - i];
  buf[k] = '\0';
  return k;
}

size_t hs_sql_fmt_int64(int64_t v, char *buf) {
  if (v < 0) {
    buf[0] = '-';
    return 1 + fmt_u128((unsigned __int128)(-(hs_sql_i128)v), buf + 1);
  }
  return fmt_u128((unsigned __int128)v, buf);
}

size_t hs_sql_fmt_numeric(hs_sql_i128 v, int scale, char *buf) {
  size_t k = 0;
  if (v < 0) buf[k++] = '-';
  unsigned __int128 u = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
  char dig[48];
  size_t nd = fmt_u128(u, dig);
  if (scale <= 0) {
    memcpy(buf + k, dig, nd + 1);
    return k + nd;
  }
  size_t s = (size_t)scale;
  if (nd <= s) {
    buf[k++] = '0';
    buf[k++] = '.';
    for (size_t i = nd; i < s; i++) buf[k++] = '0';
    memcpy(buf + k, dig, nd);
    k += nd;
  } else {
    memcpy(buf + k, dig, nd - s);
    k += nd - s;
    buf[k++] = '.';
    memcpy(buf + k, dig + nd - s, s);
    k += s;
  }
  buf[k] = '\0';
  return k;
}

/* Decimal digits of n * 2^k (k >= 0) or of n * 5^-k (k < 0, the value
 * then being that times 10^k) into dig (most significant first, no
 * leading zeros); returns the count. A small bignum of base-10^9 limbs:
 * used only to confirm the rare candidates halfway() meets. */
static int big_digits(uint64_t n, int k, char *dig) {
  enum { LIMBS = 130 };
  uint32_t l[LIMBS];
  int nl = 0;
  while (n != 0) {
    l[nl++] = (uint32_t)(n % 1000000000u);
    n /= 1000000000u;
  }
  int reps = k >= 0 ? k : -k;
  uint32_t mul = k >= 0 ? 2 : 5;
  for (int r = 0; r < reps; r++) {
    uint64_t carry = 0;
    for (int i = 0; i < nl; i++) {
      uint64_t x = (uint64_t)l[i] * mul + carry;
      l[i] = (uint32_t)(x % 1000000000u);
      carry = x / 1000000000u;
    }
    if (carry != 0 && nl < LIMBS) l[nl++] = (uint32_t)carry;
  }
  int nd = 0;
  char tmp[16];
  for (int i = nl - 1; i >= 0; i--) {
    int w = snprintf(tmp, sizeof tmp, i == nl - 1 ? "%u" : "%09u", l[i]);
    memcpy(dig + nd, tmp, (size_t)w);
    nd += w;
  }
  return nd;
}

/* Is the decimal text t ("d.ddde+xx", reading back as v) exactly halfway
 * between v and a neighbour? Such a text reads back by round-to-even, but
 * PostgreSQL's Ryu never prints one (1e23 is 9.999999999999999e+22). The
 * long double test is a filter (the midpoint of two doubles needs 54 bits,
 * which long double holds); the bignum confirms it. */
static bool halfway(const char *t, double v) {
  if (sizeof(long double) <= sizeof(double)) return false;
  long double x = strtold(t, NULL);
  if (x == (long double)v) return false;
  double nb = nextafter(v, x > (long double)v ? INFINITY : -INFINITY);
  if (x != ((long double)v + (long double)nb) / 2) return false;
  double a = fabs(v) < fabs(nb) ? fabs(v) : fabs(nb);
  int e2;
  double f = frexp(a, &e2);
  uint64_t m = (uint64_t)ldexp(f, 53);
  int ea = e2 - 53;
  if (ea < -1074) {
    m >>= (-1074 - ea);
    ea = -1074;
  }
  /* midpoint = (2m + 1) * 2^(ea - 1) */
  static _Thread_local char dig[1300];
  int k = ea - 1;
  int nd = big_digits(2 * m + 1, k, dig);
  int64_t e10 = k >= 0 ? 0 : k; /* value = dig * 10^e10 */
  while (nd > 1 && dig[nd - 1] == '0') nd--, e10++;
  /* t's digits and exponent */
  char td[24];
  int nt = 0;
  const char *c = t;
  if (*c == '-') c++;
  for (; *c && *c != 'e'; c++)
    if (*c != '.') td[nt++] = *c;
  int tx = *c == 'e' ? atoi(c + 1) : 0;
  while (nt > 1 && td[nt - 1] == '0') nt--;
  return nt == nd && memcmp(td, dig, (size_t)nd) == 0 && (int64_t)tx - (nt - 1) == e10;
}

size_t hs_sql_fmt_f64(double v, int width, char *buf) {
  if (width == 4) return hs_sql_float4_format((float)v, buf);
  if (isnan(v)) return (size_t)snprintf(buf, HS_SQL_FMT_MAX, "NaN");
  if (isinf(v)) return (size_t)snprintf(buf, HS_SQL_FMT_MAX, v < 0 ? "-Infinity" : "Infinity");
  if (v == 0) return (size_t)snprintf(buf, HS_SQL_FMT_MAX, signbit(v) ? "-0" : "0");
  /* The fewest significant digits that read back (round-tripping is
   * monotonic in the digit count: binary search 1..17). A text exactly
   * halfway between v and a neighbour reads back by round-to-even, but
   * PostgreSQL's Ryu never prints one (1e23 is 9.999999999999999e+22): such
   * a candidate needs one more digit. */
  char tmp[40];
  int lo = 1, hi = 17;
  /* most doubles need 16 or 17 digits; decimals people write need at most 15 */
  snprintf(tmp, sizeof tmp, "%.14e", v);
  if (strtod(tmp, NULL) == v) {
    hi = 15;
  } else {
    lo = 16;
    snprintf(tmp, sizeof tmp, "%.15e", v);
    if (strtod(tmp, NULL) != v) lo = 17;
    hi = lo;
  }
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    snprintf(tmp, sizeof tmp, "%.*e", mid - 1, v);
    if (strtod(tmp, NULL) == v)
      hi = mid;
    else
      lo = mid + 1;
  }
  snprintf(tmp, sizeof tmp, "%.*e", lo - 1, v);
  while (lo < 17 && halfway(tmp, v)) snprintf(tmp, sizeof tmp, "%.*e", ++lo - 1, v);
  /* tmp: [-]d[.ddd]e(+|-)xx */
  const char *c = tmp;
  bool neg = *c == '-';
  if (neg) c++;
  char dig[24];
  int nd = 0;
  while (*c != 'e') {
    if (*c != '.') dig[nd++] = *c;
    c++;
  }
  int x = atoi(c + 1);
  while (nd > 1 && dig[nd - 1] == '0') nd--;
  size_t k = 0;
  if (neg) buf[k++] = '-';
  if (x < -4 || x >= 15) {
    buf[k++] = dig[0];
    if (nd > 1) {
      buf[k++] = '.';
      memcpy(buf + k, dig + 1, (size_t)nd - 1);
      k += (size_t)nd - 1;
    }
    k += (size_t)snprintf(buf + k, 16, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
  } else if (x >= 0) {
    for (int i = 0; i <= x; i++) buf[k++] = i < nd ? dig[i] : '0';
    if (nd > x + 1) {
      buf[k++] = '.';
      memcpy(buf + k, dig + x + 1, (size_t)(nd - x - 1));
      k += (size_t)(nd - x - 1);
    }
  } else {
    buf[k++] = '0';
    buf[k++] = '.';
    for (int i = 0; i < -x - 1; i++) buf[k++] = '0';
    memcpy(buf + k, dig, (size_t)nd);
    k += (size_t)nd;
  }
  buf[k] = '\0';
  return k;
}

static size_t fmt_ymd(int64_t days, char *buf, bool *bc) {
  int64_t y;
  int m, d;
  hs_civil_from_days(days, &y, &m, &d);
  *bc = y <= 0;
  if (*bc) y = 1 - y;
  return (size_t)snprintf(buf, 32, "%04lld-%02d-%02d", (long long)y, m, d);
}

size_t hs_sql_fmt_date(int32_t days, char *buf) {
  bool bc;
  size_t k = fmt_ymd(days, buf, &bc);
  if (bc) k += (size_t)snprintf(buf + k, 8, " BC");
  return k;
}

/* ":SS[.ffffff]" style seconds (trailing zeros of the fraction dropped). */
static size_t fmt_secs(int64_t sec, int64_t frac, char *buf) {
  size_t k = (size_t)snprintf(buf, 8, "%02lld", (long long)sec);
  if (frac != 0) {
    char f[8];
    snprintf(f, sizeof f, "%06lld", (long long)frac);
    int nf = 6;
    while (nf > 0 && f[nf - 1] == '0') nf--;
    buf[k++] = '.';
    memcpy(buf + k, f, (size_t)nf);
    k += (size_t)nf;
  }
  buf[k] = '\0';
  return k;
}

size_t hs_sql_fmt_timestamp(int64_t us, bool tz, char *buf) {
  int64_t days = hs_sql_floor_div(us, HS_SQL_USECS_PER_DAY);
  int64_t tod = us - days * HS_SQL_USECS_PER_DAY;
  bool bc;
  size_t k = fmt_ymd(days, buf, &bc);
  int64_t hh = tod / HS_SQL_USECS_PER_HOUR, mm = tod / HS_SQL_USECS_PER_MINUTE % 60;
  int64_t ss = tod / HS_SQL_USECS_PER_SEC % 60, fr = tod % HS_SQL_USECS_PER_SEC;
  k += (size_t)snprintf(buf + k, 16, " %02lld:%02lld:", (long long)hh, (long long)mm);
  k += fmt_secs(ss, fr, buf + k);
  if (tz) k += (size_t)snprintf(buf + k, 8, "+00");
  if (bc) k += (size_t)snprintf(buf + k, 8, " BC");
  return k;
}

static size_t add_int_part(char *buf, int64_t v, const char *unit, bool *is_zero, bool *is_before) {
  if (v == 0) return 0;
  size_t k =
      (size_t)snprintf(buf, 40, "%s%s%lld %s%s", *is_zero ? "" : " ",
                       (*is_before && v > 0) ? "+" : "", (long long)v, unit, v != 1 ? "s" : "");
  *is_before = v < 0;
  *is_zero = false;
  return k;
}

size_t hs_sql_fmt_interval(hs_sql_interval iv, char *buf) {
  bool is_zero = true, is_before = false;
  size_t k = 0;
  k += add_int_part(buf + k, iv.months / 12, "year", &is_zero, &is_before);
  k += add_int_part(buf + k, iv.months % 12, "mon", &is_zero, &is_before);
  k += add_int_part(buf + k, iv.days, "day", &is_zero, &is_before);
  int64_t t = iv.micros;
  int64_t hh = t / HS_SQL_USECS_PER_HOUR;
  int64_t mm = t / HS_SQL_USECS_PER_MINUTE % 60;
  int64_t ss = t / HS_SQL_USECS_PER_SEC % 60;
  int64_t fr = t % HS_SQL_USECS_PER_SEC;
  if (is_zero || t != 0) {
    bool minus = t < 0;
    k += (size_t)snprintf(buf + k, 48, "%s%s%02llu:%02lld:", is_zero ? "" : " ",
                          minus ? "-" : (is_before ? "+" : ""),
                          (unsigned long long)(hh < 0 ? -(uint64_t)hh : (uint64_t)hh),
                          (long long)(mm < 0 ? -mm : mm));
    k += fmt_secs(ss < 0 ? -ss : ss, fr < 0 ? -fr : fr, buf + k);
  }
  buf[k] = '\0';
  return k;
}

/* --------------------------------------------------------------- parsing */

static void trim(const char **s, size_t *n) {
  while (*n > 0 && ((*s)[0] == ' ' || ((*s)[0] >= '\t' && (*s)[0] <= '\r'))) (*s)++, (*n)--;
  while (*n > 0 && ((*s)[*n - 1] == ' ' || ((*s)[*n - 1] >= '\t' && (*s)[*n - 1] <= '\r'))) (*n)--;
}

static bool ieq(const char *s, size_t n, const char *w) {
  size_t m = strlen(w);
  if (n != m) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
    if (c != w[i]) return false;
  }
  return true;
}

/* Is s[0..n) a case-insensitive prefix of w, at least `min` long? */
static bool iprefix(const char *s, size_t n, const char *w, size_t min) {
  if (n < min || n > strlen(w)) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
    if (c != w[i]) return false;
  }
  return true;
}

typedef enum { P_OK = 0, P_SYNTAX, P_RANGE } perr;

static perr parse_int64(const char *s, size_t n, int64_t *out) {
  trim(&s, &n);
  size_t i = 0;
  bool neg = false;
  if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  if (i == n) return P_SYNTAX;
  uint64_t u = 0;
  bool over = false;
  for (; i < n; i++) {
    char c = s[i];
    if (c == '_' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9' && i > 0 && s[i - 1] >= '0' &&
        s[i - 1] <= '9')
      continue;
    if (c < '0' || c > '9') return P_SYNTAX;
    if (u > (UINT64_MAX - 9) / 10) over = true;
    if (!over) u = u * 10 + (uint64_t)(c - '0');
  }
  if (over || u > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX)) return P_RANGE;
  *out = neg ? (int64_t)(0 - u) : (int64_t)u;
  return P_OK;
}

static perr parse_f64(const char *s, size_t n, double *out) {
  trim(&s, &n);
  if (n == 0) return P_SYNTAX;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') neg = s[0] == '-', i = 1;
  if (ieq(s + i, n - i, "nan") && i == 0) return *out = NAN, P_OK;
  if (ieq(s + i, n - i, "infinity") || ieq(s + i, n - i, "inf"))
    return *out = neg ? -INFINITY : INFINITY, P_OK;
  /* digits [. digits] [e [sign] digits] only (no hex floats) */
  size_t j = i, nd = 0;
  while (j < n && s[j] >= '0' && s[j] <= '9') j++, nd++;
  if (j < n && s[j] == '.') {
    j++;
    while (j < n && s[j] >= '0' && s[j] <= '9') j++, nd++;
  }
  if (nd == 0) return P_SYNTAX;
  if (j < n && (s[j] == 'e' || s[j] == 'E')) {
    j++;
    if (j < n && (s[j] == '+' || s[j] == '-')) j++;
    size_t ne = 0;
    while (j < n && s[j] >= '0' && s[j] <= '9') j++, ne++;
    if (ne == 0) return P_SYNTAX;
  }
  if (j != n) return P_SYNTAX;
  char stack[128];
  char *tmp = n < sizeof stack ? stack : hs_malloc(n + 1);
  if (tmp == NULL) return P_RANGE;
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  errno = 0;
  double d = strtod(tmp, NULL);
  int e = errno;
  if (tmp != stack) hs_free(tmp);
  if (e == ERANGE && (isinf(d) || d == 0)) return P_RANGE;
  *out = d;
  return P_OK;
}

/* Parse a decimal number as numeric(prec, scale): rounded half away from
 * zero to `scale` digits; P_RANGE when it has prec - scale integer digits
 * or more. NaN and infinities are not NUMERIC values here. */
static perr parse_numeric(const char *s, size_t n, int prec, int scale, hs_sql_i128 *out) {
  trim(&s, &n);
  size_t i = 0;
  bool neg = false;
  if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  const char *dig = s + i;
  size_t ni = 0, nf = 0;
  while (i < n && s[i] >= '0' && s[i] <= '9') i++, ni++;
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, nf++;
  }
  if (ni + nf == 0) return P_SYNTAX;
  int64_t ex = 0;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    bool eneg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
    size_t ne = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      if (ex < 1000000) ex = ex * 10 + (s[i] - '0');
      i++, ne++;
    }
    if (ne == 0) return P_SYNTAX;
    if (eneg) ex = -ex;
  }
  if (i != n) return P_SYNTAX;
    /* digit k of the concatenated digits D (integer part then fraction) */
#define DIGIT(k) ((k) < ni ? dig[(k)] - '0' : dig[(k) + 1] - '0')
  size_t nd = ni + nf;
  int64_t k10 = ex - (int64_t)nf + scale; /* target = D * 10^k10 */
  int64_t take = (int64_t)nd + (k10 < 0 ? k10 : 0);
  hs_sql_i128 m = 0;
  for (int64_t k = 0; k < take; k++) {
    int d = DIGIT((size_t)k);
    if (m == 0 && d == 0) continue;
    if (__builtin_mul_overflow(m, 10, &m) || __builtin_add_overflow(m, d, &m)) return P_RANGE;
  }
  if (k10 < 0 && take >= 0 && (size_t)take < nd && DIGIT((size_t)take) >= 5) m += 1;
  if (k10 > 0 && m != 0) {
    if (k10 > 38 || __builtin_mul_overflow(m, hs_sql_pow10[k10], &m)) return P_RANGE;
  }
#undef DIGIT
  if (!hs_sql_num_fits(m, prec)) return P_RANGE;
  *out = neg ? -m : m;
  return P_OK;
}

static bool parse_bool(const char *s, size_t n, bool *out) {
  trim(&s, &n);
  if (n == 0) return false;
  switch (s[0]) {
  case 't':
  case 'T':
    if (iprefix(s, n, "true", 1)) return *out = true, true;
    break;
  case 'f':
  case 'F':
    if (iprefix(s, n, "false", 1)) return *out = false, true;
    break;
  case 'y':
  case 'Y':
    if (iprefix(s, n, "yes", 1)) return *out = true, true;
    break;
  case 'n':
  case 'N':
    if (iprefix(s, n, "no", 1)) return *out = false, true;
    break;
  case 'o':
  case 'O':
    if (ieq(s, n, "on")) return *out = true, true;
    if (iprefix(s, n, "off", 2)) return *out = false, true;
    break;
  case '1':
    if (n == 1) return *out = true, true;
    break;
  case '0':
    if (n == 1) return *out = false, true;
    break;
  }
  return false;
}

static bool read_num(const char *s, size_t n, size_t *i, int maxd, int64_t *v) {
  size_t st = *i;
  int64_t x = 0;
  while (*i < n && s[*i] >= '0' && s[*i] <= '9' && (int)(*i - st) < maxd)
    x = x * 10 + (s[(*i)++] - '0');
  if (*i == st) return false;
  *v = x;
  return true;
}

/* "[ws]BC" / "AD" at s[*i..n): adjusts *bc. */
static void read_era(const char *s, size_t n, size_t *i, bool *bc) {
  size_t j = *i;
  while (j < n && s[j] == ' ') j++;
  if (j + 2 <= n && (ieq(s + j, 2, "bc") || ieq(s + j, 2, "ad"))) {
    *bc = ieq(s + j, 2, "bc");
    *i = j + 2;
  }
}

typedef enum { T_OK = 0, T_SYNTAX, T_FIELD, T_RANGE } terr;

/* YYYY-MM-DD (year 1 to 7 digits). */
static terr parse_ymd(const char *s, size_t n, size_t *i, int64_t *y, int64_t *m, int64_t *d) {
  if (!read_num(s, n, i, 7, y) || *i >= n || s[*i] != '-') return T_SYNTAX;
  (*i)++;
  if (!read_num(s, n, i, 2, m) || *i >= n || s[*i] != '-') return T_SYNTAX;
  (*i)++;
  if (!read_num(s, n, i, 2, d)) return T_SYNTAX;
  return T_OK;
}

static terr finish_date(int64_t y, int64_t m, int64_t d, bool bc, int64_t *days) {
  if (y == 0) return T_FIELD;
  if (bc) y = 1 - y;
  if (m < 1 || m > 12 || d < 1 || d > hs_civil_days_in_month(y, (int)m)) return T_FIELD;
  *days = hs_days_from_civil(y, m, d);
  return T_OK;
}

static terr parse_timestamp(const char *s, size_t n, bool tz, int64_t *out);

static terr parse_date(const char *s, size_t n, int32_t *out) {
  trim(&s, &n);
  size_t i = 0;
  int64_t y, m, d, days;
  bool bc = false;
  if (ieq(s, n, "epoch")) return *out = 0, T_OK;
  terr t = parse_ymd(s, n, &i, &y, &m, &d);
  if (t != T_OK) return t;
  read_era(s, n, &i, &bc);
  if (i != n) {
    /* a time (and zone) after the date is read and dropped, as PostgreSQL */
    int64_t us;
    t = parse_timestamp(s, n, false, &us);
    if (t != T_OK) return t;
    *out = (int32_t)hs_sql_floor_div(us, HS_SQL_USECS_PER_DAY);
    return T_OK;
  }
  if ((t = finish_date(y, m, d, bc, &days)) != T_OK) return t;
  if (days < TS_MIN_DAYS || days >= DATE_END_DAYS) return T_RANGE;
  *out = (int32_t)days;
  return T_OK;
}

/* date [(' ' | 'T') hh:mm[:ss[.f]]] [zone] [BC]; `tz`: apply the zone
 * offset (timestamptz), else ignore it (PostgreSQL's timestamp input). */
static terr parse_timestamp(const char *s, size_t n, bool tz, int64_t *out) {
  trim(&s, &n);
  size_t i = 0;
  int64_t y, m, d, days, hh = 0, mi = 0, ss = 0, us = 0, off = 0;
  bool bc = false;
  if (ieq(s, n, "epoch")) return *out = 0, T_OK;
  terr t = parse_ymd(s, n, &i, &y, &m, &d);
  if (t != T_OK) return t;
  if (i < n && (s[i] == ' ' || s[i] == 'T' || s[i] == 't')) {
    size_t j = i + 1;
    while (j < n && s[j] == ' ') j++;
    if (j < n && s[j] >= '0' && s[j] <= '9') {
      i = j;
      if (!read_num(s, n, &i, 2, &hh) || i >= n || s[i++] != ':') return T_SYNTAX;
      if (!read_num(s, n, &i, 2, &mi)) return T_SYNTAX;
      if (i < n && s[i] == ':') {
        i++;
        if (!read_num(s, n, &i, 2, &ss)) return T_SYNTAX;
        if (i < n && s[i] == '.') {
          i++;
          int nd = 0;
          int64_t f = 0;
          bool round_up = false;
          while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (nd < 6)
              f = f * 10 + (s[i] - '0');
            else if (nd == 6)
              round_up = s[i] >= '5';
            nd++, i++;
          }
          for (int k = nd; k < 6; k++) f *= 10;
          us = f + (round_up ? 1 : 0);
        }
      }
      if (hh > 24 || mi > 59 || ss > 60 || (hh == 24 && (mi | ss | us) != 0)) return T_FIELD;
    }
  }
  while (i < n && s[i] == ' ') i++;
  if (i < n && (s[i] == 'Z' || s[i] == 'z') && (i + 1 == n || s[i + 1] == ' ')) {
    i++;
  } else if (i < n && (s[i] == '+' || s[i] == '-')) {
    bool neg = s[i++] == '-';
    int64_t oh = 0, om = 0, os = 0;
    size_t st = i;
    if (!read_num(s, n, &i, 2, &oh)) return T_SYNTAX;
    if (i < n && s[i] == ':') {
      i++;
      if (!read_num(s, n, &i, 2, &om)) return T_SYNTAX;
      if (i < n && s[i] == ':') {
        i++;
        if (!read_num(s, n, &i, 2, &os)) return T_SYNTAX;
      }
    } else if (i - st == 2 && i < n && s[i] >= '0' && s[i] <= '9') {
      if (!read_num(s, n, &i, 2, &om)) return T_SYNTAX;
    }
    if (oh > 15 || om > 59 || os > 59) return T_FIELD;
    off = (oh * 3600 + om * 60 + os) * (neg ? -1 : 1);
  }
  read_era(s, n, &i, &bc);
  if (i != n) return T_SYNTAX;
  if ((t = finish_date(y, m, d, bc, &days)) != T_OK) return t;
  if (days < TS_MIN_DAYS - 1 || days > TS_END_DAYS) return T_RANGE;
  int64_t v = days * HS_SQL_USECS_PER_DAY + ((hh * 60 + mi) * 60 + ss) * HS_SQL_USECS_PER_SEC + us;
  if (tz) v -= off * HS_SQL_USECS_PER_SEC;
  if (!hs_sql_ts_in_range(v)) return T_RANGE;
  *out = v;
  return T_OK;
}

/* Interval units: months, days and microseconds per unit. */
typedef struct iv_unit {
  const char *name;
  int32_t months;
  int32_t days;
  int64_t micros;
} iv_unit;

static const iv_unit IV_UNITS[] = {
    {"microsecond", 0, 0, 1},
    {"microseconds", 0, 0, 1},
    {"us", 0, 0, 1},
    {"usec", 0, 0, 1},
    {"usecs", 0, 0, 1},
    {"millisecond", 0, 0, 1000},
    {"milliseconds", 0, 0, 1000},
    {"ms", 0, 0, 1000},
    {"msec", 0, 0, 1000},
    {"msecs", 0, 0, 1000},
    {"second", 0, 0, 1000000},
    {"seconds", 0, 0, 1000000},
    {"s", 0, 0, 1000000},
    {"sec", 0, 0, 1000000},
    {"secs", 0, 0, 1000000},
    {"minute", 0, 0, 60000000},
    {"minutes", 0, 0, 60000000},
    {"m", 0, 0, 60000000},
    {"min", 0, 0, 60000000},
    {"mins", 0, 0, 60000000},
    {"hour", 0, 0, INT64_C(3600000000)},
    {"hours", 0, 0, INT64_C(3600000000)},
    {"h", 0, 0, INT64_C(3600000000)},
    {"hr", 0, 0, INT64_C(3600000000)},
    {"hrs", 0, 0, INT64_C(3600000000)},
    {"day", 0, 1, 0},
    {"days", 0, 1, 0},
    {"d", 0, 1, 0},
    {"week", 0, 7, 0},
    {"weeks", 0, 7, 0},
    {"w", 0, 7, 0},
    {"month", 1, 0, 0},
    {"months", 1, 0, 0},
    {"mon", 1, 0, 0},
    {"mons", 1, 0, 0},
    {"year", 12, 0, 0},
    {"years", 12, 0, 0},
    {"y", 12, 0, 0},
    {"yr", 12, 0, 0},
    {"yrs", 12, 0, 0},
    {"decade", 120, 0, 0},
    {"decades", 120, 0, 0},
    {"century", 1200, 0, 0},
    {"centuries", 1200, 0, 0},
    {"millennium", 12000, 0, 0},
    {"millennia", 12000, 0, 0},
    {"millenniums", 12000, 0, 0},
};

/* PostgreSQL's interval input (postgres style): a sequence of
 * "[+-]number unit" items and at most one "[+-]hh:mm[:ss[.f]]", then an
 * optional "ago". A fraction of a unit spills into the smaller ones (months
 * of 30 days, days of 24 hours); a bare number is seconds. */
/* PostgreSQL's interval field masks (the typmod of INTERVAL '1' DAY). */
#define IV_MONTH 2
#define IV_YEAR 4
#define IV_DAY 8
#define IV_HOUR 1024
#define IV_MINUTE 2048
#define IV_SECOND 4096

/* The unit of a bare number under fields mask `range` (PostgreSQL: the
 * last field; seconds when there is none). */
static int64_t iv_bare_unit(int32_t range, int32_t *months, int32_t *days) {
  *months = 0, *days = 0;
  if (range == IV_YEAR) return *months = 12, 0;
  if (range == IV_MONTH || range == (IV_YEAR | IV_MONTH)) return *months = 1, 0;
  if (range == IV_DAY) return *days = 1, 0;
  if (range == IV_HOUR || range == (IV_DAY | IV_HOUR)) return HS_SQL_USECS_PER_HOUR;
  if (range == IV_MINUTE || range == (IV_HOUR | IV_MINUTE) ||
      range == (IV_DAY | IV_HOUR | IV_MINUTE))
    return HS_SQL_USECS_PER_MINUTE;
  return HS_SQL_USECS_PER_SEC;
}

/* PostgreSQL's AdjustIntervalForTypmod: fields below the mask's last one
 * are dropped. */
static void iv_restrict(hs_sql_interval *v, int32_t range) {
  if (range == 0) return;
  if (range == IV_YEAR) {
    v->months = v->months / 12 * 12, v->days = 0, v->micros = 0;
  } else if (range == IV_MONTH || range == (IV_YEAR | IV_MONTH)) {
    v->days = 0, v->micros = 0;
  } else if (range == IV_DAY) {
    v->micros = 0;
  } else if (range == IV_HOUR || range == (IV_DAY | IV_HOUR)) {
    v->micros = v->micros / HS_SQL_USECS_PER_HOUR * HS_SQL_USECS_PER_HOUR;
  } else if (range == IV_MINUTE || range == (IV_HOUR | IV_MINUTE) ||
             range == (IV_DAY | IV_HOUR | IV_MINUTE)) {
    v->micros = v->micros / HS_SQL_USECS_PER_MINUTE * HS_SQL_USECS_PER_MINUTE;
  }
}

static terr parse_interval(const char *s, size_t n, int32_t range, hs_sql_interval *out) {
  trim(&s, &n);
  double months = 0, days = 0, micros = 0;
  size_t i = 0;
  bool any = false, ago = false;
  if (n == 0) return T_SYNTAX;
  if (s[0] == '@') i++;
  while (i < n) {
    while (i < n && s[i] == ' ') i++;
    if (i == n) break;
    if (ieq(s + i, n - i, "ago")) {
      ago = true;
      i = n;
      break;
    }
    bool neg = false;
    if (s[i] == '+' || s[i] == '-') neg = s[i++] == '-';
    size_t st = i;
    double ip = 0, fp = 0, scale = 1;
    int64_t w = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      if (i - st > 18) return T_RANGE;
      w = w * 10 + (s[i++] - '0');
    }
    ip = (double)w;
    bool has_frac = false;
    if (i < n && s[i] == '.') {
      i++;
      has_frac = true;
      while (i < n && s[i] >= '0' && s[i] <= '9') {
        scale /= 10;
        fp += (s[i++] - '0') * scale;
      }
    }
    if (i == st || (i == st + 1 && has_frac)) return T_SYNTAX;
    if (i < n && s[i] == ':' && !has_frac) {
      /* hh:mm[:ss[.f]] */
      int64_t mm = 0, ss = 0;
      double fs = 0;
      i++;
      if (!read_num(s, n, &i, 2, &mm)) return T_SYNTAX;
      bool had_secs = false;
      if (i < n && s[i] == ':') {
        i++;
        had_secs = true;
        if (!read_num(s, n, &i, 2, &ss)) return T_SYNTAX;
        if (i < n && s[i] == '.') {
          double sc = 1;
          i++;
          while (i < n && s[i] >= '0' && s[i] <= '9') sc /= 10, fs += (s[i++] - '0') * sc;
        }
      }
      if (mm > 59 || ss > 59) return T_FIELD;
      double t = ((double)w * 3600 + (double)mm * 60 + (double)ss + fs) * 1e6;
      if (range == (IV_MINUTE | IV_SECOND) && !had_secs) t = ((double)w * 60 + (double)mm) * 1e6;
      micros += neg ? -t : t;
      any = true;
      continue;
    }
    while (i < n && s[i] == ' ') i++;
    size_t us = i;
    while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))) i++;
    double v = (ip + fp) * (neg ? -1 : 1);
    const iv_unit *u = NULL;
    iv_unit bare;
    bool is_ago = i > us && i == n && ieq(s + us, i - us, "ago");
    if (i == us || is_ago) {
      int32_t um, ud;
      int64_t uus = iv_bare_unit(range, &um, &ud);
      bare = (iv_unit){"", um, ud, uus};
      u = &bare;
      ago |= is_ago;
    } else {
      for (size_t k = 0; k < sizeof IV_UNITS / sizeof IV_UNITS[0]; k++)
        if (ieq(s + us, i - us, IV_UNITS[k].name)) u = &IV_UNITS[k];
      if (u == NULL) return T_SYNTAX;
    }
    if (u->months != 0) {
      double mo = v * u->months;
      if (u->months >= 12) mo = rint(mo); /* years: whole months, as PostgreSQL */
      double whole = trunc(mo);
      months += whole;
      double fd = (mo - whole) * 30;
      double wd = trunc(fd);
      days += wd;
      micros += (fd - wd) * 86400e6;
    } else if (u->days != 0) {
      double dd = v * u->days;
      double whole = trunc(dd);
      days += whole;
      micros += (dd - whole) * 86400e6;
    } else {
      micros += v * (double)u->micros;
    }
    any = true;
  }
  if (!any) return T_SYNTAX;
  if (ago) months = -months, days = -days, micros = -micros;
  if (fabs(months) > INT32_MAX || fabs(days) > INT32_MAX || fabs(micros) > 9.2e18) return T_RANGE;
  out->months = (int32_t)months;
  out->days = (int32_t)days;
  out->micros = (int64_t)rint(micros);
  iv_restrict(out, range);
  return T_OK;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* bytea input: '\x' hex (whitespace between pairs) or the escape format
 * ('\\' and '\ooo' octal). Writes at most n bytes into dst. */
static bool parse_bytea(const char *s, size_t n, char *dst, size_t *len) {
  size_t k = 0;
  if (n >= 2 && s[0] == '\\' && s[1] == 'x') {
    for (size_t i = 2; i < n;) {
      if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
        i++;
        continue;
      }
      if (i + 1 >= n) return false;
      int h = hexval(s[i]), l = hexval(s[i + 1]);
      if (h < 0 || l < 0) return false;
      dst[k++] = (char)(h * 16 + l);
      i += 2;
    }
  } else {
    for (size_t i = 0; i < n;) {
      if (s[i] != '\\') {
        dst[k++] = s[i++];
      } else if (i + 1 < n && s[i + 1] == '\\') {
        dst[k++] = '\\';
        i += 2;
      } else if (i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
                 s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
        dst[k++] = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
        i += 4;
      } else {
        return false;
      }
    }
  }
  *len = k;
  return true;
}

/* ------------------------------------------------------------ type names */

static const char *type_word(hs_sql_tid t) {
  switch (t) {
  case HS_SQL_BOOL: return "boolean";
  case HS_SQL_INT32: return "integer";
  case HS_SQL_INT64: return "bigint";
  case HS_SQL_FLOAT64: return "double precision";
  case HS_SQL_NUMERIC: return "numeric";
  case HS_SQL_TEXT: return "text";
  case HS_SQL_BYTEA: return "bytea";
  case HS_SQL_DATE: return "date";
  case HS_SQL_TIMESTAMP: return "timestamp";
  case HS_SQL_TIMESTAMPTZ: return "timestamp with time zone";
  case HS_SQL_INTERVAL: return "interval";
  default: return "unknown";
  }
}

#define SHOWN(n) ((int)((n) > 64 ? 64 : (n)))

/* The error for text s that did not parse as `to`. */
static hs_status text_error(const char *s, size_t n, hs_sql_type to, int code, int32_t pos,
                            hs_error *err) {
  if (to.id == HS_SQL_NUMERIC && code == P_RANGE) {
    int p = hs_sql_num_prec(to);
    return hs_sql_errf(err, HS_ERR_INVALID_ARG, pos,
                       "numeric field overflow: a field with precision %d, scale %d must round to "
                       "an absolute value less than 10^%d ('%.*s')",
                       p, to.b, p - to.b, SHOWN(n), s);
  }
  if (code == P_RANGE &&
      (to.id == HS_SQL_INT32 || to.id == HS_SQL_INT64 || to.id == HS_SQL_FLOAT64))
    return hs_sql_errf(err, HS_ERR_INVALID_ARG, pos, "value \"%.*s\" is out of range for type %s",
                       SHOWN(n), s, type_word(to.id));
  if (code == T_FIELD && to.id != HS_SQL_INTERVAL)
    return hs_sql_errf(err, HS_ERR_INVALID_ARG, pos, "date/time field value out of range: \"%.*s\"",
                       SHOWN(n), s);
  if (code == T_RANGE || code == T_FIELD)
    return hs_sql_errf(err, HS_ERR_INVALID_ARG, pos, "%s out of range: \"%.*s\"", type_word(to.id),
                       SHOWN(n), s);
  return hs_sql_errf(err, HS_ERR_INVALID_ARG, pos, "invalid input syntax for type %s: \"%.*s\"",
                     type_word(to.id), SHOWN(n), s);
}

/* Parse text as a non-string scalar type into *v (v->type set by caller). */
static int parse_scalar(const char *s, size_t n, hs_sql_type to, hs_sql_value *v) {
  switch (to.id) {
  case HS_SQL_BOOL: return parse_bool(s, n, &v->v.b) ? P_OK : P_SYNTAX;
  case HS_SQL_INT32: {
    int64_t x;
    perr e = parse_int64(s, n, &x);
    if (e == P_OK && (x < INT32_MIN || x > INT32_MAX)) e = P_RANGE;
    v->v.i32 = (int32_t)x;
    return e;
  }
  case HS_SQL_INT64: return parse_int64(s, n, &v->v.i64);
  case HS_SQL_FLOAT64: {
    perr e = parse_f64(s, n, &v->v.f64);
    if (e == P_OK && to.a == 4) {
      float f = (float)v->v.f64;
      if (isinf(f) && !isinf(v->v.f64)) return P_RANGE;
      v->v.f64 = f;
    }
    return e;
  }
  case HS_SQL_NUMERIC: {
    const char *t = s;
    size_t m = n;
    trim(&t, &m);
    if (ieq(t, m, "nan") || ieq(t, m, "infinity") || ieq(t, m, "-infinity") || ieq(t, m, "inf"))
      return -1;
    return parse_numeric(s, n, hs_sql_num_prec(to), to.b, &v->v.dec);
  }
  case HS_SQL_DATE: return parse_date(s, n, &v->v.i32);
  case HS_SQL_TIMESTAMP: return parse_timestamp(s, n, false, &v->v.i64);
  case HS_SQL_TIMESTAMPTZ: return parse_timestamp(s, n, true, &v->v.i64);
  case HS_SQL_INTERVAL: return parse_interval(s, n, to.a, &v->v.iv);
  default: return P_SYNTAX;
  }
}

static hs_status scalar_error(const char *s, size_t n, hs_sql_type to, int code, int32_t pos,
                              hs_error *err) {
  if (code < 0)
    return hs_sql_errf(err, HS_ERR_UNSUPPORTED, pos,
                       "numeric NaN and infinity are not supported (\"%.*s\")", SHOWN(n), s);
  return text_error(s, n, to, code, pos, err);
}

/* ------------------------------------------------------------ cast table */

static bool is_scalar(hs_sql_tid t) {
  return t >= HS_SQL_BOOL && t <= HS_SQL_INTERVAL;
}

bool hs_sql_cast_exists(hs_sql_type from, hs_sql_type to) {
  hs_sql_tid f = from.id, t = to.id;
  if (f == HS_SQL_NULLTYPE) return true;
  if (hs_sql_type_is_pgvector(f) || hs_sql_type_is_pgvector(t))
    return hs_sql_vector_cast_exists(from, to);
  if (f == t) return true;
  if (!is_scalar(f) || !is_scalar(t)) return false;
  if (f == HS_SQL_TEXT || t == HS_SQL_TEXT) return true;
  bool fnum = hs_sql_type_is_numeric(f), tnum = hs_sql_type_is_numeric(t);
  if (fnum && tnum) return true;
  if (f == HS_SQL_BOOL) return hs_sql_type_is_int(t);
  if (t == HS_SQL_BOOL) return hs_sql_type_is_int(f);
  bool ftime = f == HS_SQL_DATE || f == HS_SQL_TIMESTAMP || f == HS_SQL_TIMESTAMPTZ;
  bool ttime = t == HS_SQL_DATE || t == HS_SQL_TIMESTAMP || t == HS_SQL_TIMESTAMPTZ;
  return ftime && ttime;
}

/* value -> text: `width` is the most bytes one row takes. */
static size_t text_width(hs_sql_type f) {
  switch (f.id) {
  case HS_SQL_BOOL: return 5;
  case HS_SQL_INT32: return 11;
  case HS_SQL_INT64: return 20;
  case HS_SQL_FLOAT64: return 32;
  case HS_SQL_NUMERIC: return 44;
  case HS_SQL_DATE: return 20;
  case HS_SQL_TIMESTAMP:
  case HS_SQL_TIMESTAMPTZ: return 40;
  case HS_SQL_INTERVAL: return 96;
  default: return 0;
  }
}

static size_t fmt_row(const hs_sql_vec *in, int64_t i, char *buf) {
  switch (in->type.id) {
  case HS_SQL_BOOL: {
    bool b = ((const uint8_t *)in->data)[i] != 0;
    memcpy(buf, b ? "true" : "false", b ? 4 : 5);
    return b ? 4 : 5;
  }
  case HS_SQL_INT32: return hs_sql_fmt_int64(((const int32_t *)in->data)[i], buf);
  case HS_SQL_INT64: return hs_sql_fmt_int64(((const int64_t *)in->data)[i], buf);
  case HS_SQL_FLOAT64: return hs_sql_fmt_f64(((const double *)in->data)[i], in->type.a, buf);
  case HS_SQL_NUMERIC:
    return hs_sql_fmt_numeric(((const hs_sql_i128 *)in->data)[i], in->type.b, buf);
  case HS_SQL_DATE: return hs_sql_fmt_date(((const int32_t *)in->data)[i], buf);
  case HS_SQL_TIMESTAMP: return hs_sql_fmt_timestamp(((const int64_t *)in->data)[i], false, buf);
  case HS_SQL_TIMESTAMPTZ: return hs_sql_fmt_timestamp(((const int64_t *)in->data)[i], true, buf);
  case HS_SQL_INTERVAL: return hs_sql_fmt_interval(((const hs_sql_interval *)in->data)[i], buf);
  default: return 0;
  }
}

static hs_status to_text(const hs_sql_vec *in, hs_sql_vec *out, hs_error *err) {
  int64_t n = in->n;
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  if (in->type.id == HS_SQL_BYTEA) {
    const hs_sql_str *s = in->data;
    size_t total = 0;
    for (int64_t i = 0; i < n; i++)
      if (hs_sql_vec_valid(in, i)) total += 2 + (size_t)s[i].len * 2;
    if ((uint64_t)total > UINT32_MAX)
      return hs_error_set(err, HS_ERR_NOMEM, "bytea text form too large");
    char *p = hs_sql_vec_add_bytes(out, total ? total : 1, err);
    if (p == NULL) return HS_ERR_NOMEM;
    static const char HEX[] = "0123456789abcdef";
    for (int64_t i = 0; i < n; i++) {
      if (!hs_sql_vec_valid(in, i)) continue;
      o[i].ptr = p;
      *p++ = '\\';
      *p++ = 'x';
      for (uint32_t k = 0; k < s[i].len; k++) {
        uint8_t c = (uint8_t)s[i].ptr[k];
        *p++ = HEX[c >> 4];
        *p++ = HEX[c & 15];
      }
      o[i].len = 2 + s[i].len * 2;
    }
    return HS_OK;
  }
  size_t w = text_width(in->type);
  size_t total;
  if (!hs_mul_size((size_t)n, w, &total)) return hs_error_set(err, HS_ERR_NOMEM, "too many rows");
  char *p = hs_sql_vec_add_bytes(out, total ? total : 1, err);
  if (p == NULL) return HS_ERR_NOMEM;
  char buf[HS_SQL_FMT_MAX];
  for (int64_t i = 0; i < n; i++) {
    if (!hs_sql_vec_valid(in, i)) continue;
    size_t k = fmt_row(in, i, buf);
    if (k > w) k = w;
    memcpy(p, buf, k);
    o[i].ptr = p;
    o[i].len = (uint32_t)k;
    p += k;
  }
  return HS_OK;
}

static hs_status from_text(const hs_sql_vec *in, hs_sql_type to, int32_t pos, hs_sql_vec *out,
                           hs_error *err) {
  int64_t n = in->n;
  const hs_sql_str *s = in->data;
  if (to.id == HS_SQL_BYTEA) {
    size_t total = 0;
    for (int64_t i = 0; i < n; i++)
      if (hs_sql_vec_valid(in, i)) total += s[i].len;
    char *p = hs_sql_vec_add_bytes(out, total ? total : 1, err);
    if (p == NULL) return HS_ERR_NOMEM;
    hs_sql_str *o = hs_sql_vec_mut_data(out);
    for (int64_t i = 0; i < n; i++) {
      if (!hs_sql_vec_valid(in, i)) continue;
      size_t len;
      if (!parse_bytea(s[i].ptr, s[i].len, p, &len))
        return text_error(s[i].ptr, s[i].len, to, P_SYNTAX, pos, err);
      o[i].ptr = p;
      o[i].len = (uint32_t)len;
      p += len;
    }
    return HS_OK;
  }
  size_t w = hs_sql_vec_width(to);
  char *o = hs_sql_vec_mut_data(out);
  hs_sql_value v;
  memset(&v, 0, sizeof v);
  for (int64_t i = 0; i < n; i++) {
    if (!hs_sql_vec_valid(in, i)) continue;
    int e = parse_scalar(s[i].ptr, s[i].len, to, &v);
    if (e != 0) return scalar_error(s[i].ptr, s[i].len, to, e, pos, err);
    switch (to.id) {
    case HS_SQL_BOOL: o[i] = v.v.b ? 1 : 0; break;
    case HS_SQL_INT32:
    case HS_SQL_DATE: memcpy(o + (size_t)i * w, &v.v.i32, 4); break;
    case HS_SQL_INT64:
    case HS_SQL_TIMESTAMP:
    case HS_SQL_TIMESTAMPTZ: memcpy(o + (size_t)i * w, &v.v.i64, 8); break;
    case HS_SQL_FLOAT64: memcpy(o + (size_t)i * w, &v.v.f64, 8); break;
    case HS_SQL_NUMERIC: memcpy(o + (size_t)i * w, &v.v.dec, 16); break;
    case HS_SQL_INTERVAL: memcpy(o + (size_t)i * w, &v.v.iv, sizeof v.v.iv); break;
    default: return hs_error_set(err, HS_ERR_INTERNAL, "cast from text: unexpected type");
    }
  }
  return HS_OK;
}

static hs_status range_error(hs_sql_type to, int32_t pos, hs_error *err) {
  if (to.id == HS_SQL_INT32)
    return hs_sql_errf(err, HS_ERR_INVALID_ARG, pos, "integer out of range");
  if (to.id == HS_SQL_INT64)
    return hs_sql_errf(err, HS_ERR_INVALID_ARG, pos, "bigint out of range");
  if (to.id == HS_SQL_NUMERIC) {
    int p = hs_sql_num_prec(to);
    return hs_sql_errf(err, HS_ERR_INVALID_ARG, pos,
                       "numeric field overflow: a field with precision %d, scale %d must round to "
                       "an absolute value less than 10^%d",
                       p, to.b, p - to.b);
  }
  if (to.id == HS_SQL_FLOAT64)
    return hs_sql_errf(err, HS_ERR_INVALID_ARG, pos, "value out of range: overflow");
  if (to.id == HS_SQL_DATE) return hs_sql_errf(err, HS_ERR_INVALID_ARG, pos, "date out of range");
  return hs_sql_errf(err, HS_ERR_INVALID_ARG, pos, "timestamp out of range");
}

/* i128 -> double, correctly rounded (exact operands, one rounding). */
static double num_to_f64(hs_sql_i128 v, int scale) {
  hs_sql_i128 lim = (hs_sql_i128)1 << 53;
  if (v < lim && v > -lim && scale <= 22) return (double)(int64_t)v / (double)hs_sql_pow10[scale];
  char buf[64];
  hs_sql_fmt_numeric(v, scale, buf);
  return strtod(buf, NULL);
}

/* Numbers, booleans, dates and times among themselves. */
static hs_status cast_fixed(const hs_sql_vec *in, hs_sql_type to, int32_t pos, hs_sql_vec *out,
                            hs_error *err) {
  int64_t n = in->n;
  hs_sql_tid f = in->type.id, t = to.id;
  const uint8_t *valid = in->valid;
  void *od = hs_sql_vec_mut_data(out);
  int64_t bad = -1;
  /* integer-valued input as int64 (BOOL, INT32, INT64) */
  if (f == HS_SQL_BOOL || f == HS_SQL_INT32 || f == HS_SQL_INT64) {
    const uint8_t *b8 = in->data;
    const int32_t *i32 = in->data;
    const int64_t *i64 = in->data;
#define SRC(i) (f == HS_SQL_BOOL ? (int64_t)b8[i] : f == HS_SQL_INT32 ? (int64_t)i32[i] : i64[i])
    switch (t) {
    case HS_SQL_BOOL: {
      uint8_t *o = od;
      if (f == HS_SQL_INT32)
        for (int64_t i = 0; i < n; i++) o[i] = i32[i] != 0;
      else
        for (int64_t i = 0; i < n; i++) o[i] = SRC(i) != 0;
      return HS_OK;
    }
    case HS_SQL_INT32: {
      int32_t *o = od;
      if (f == HS_SQL_INT64) {
        for (int64_t i = 0; i < n; i++) {
          o[i] = (int32_t)i64[i];
          if (HS_UNLIKELY(i64[i] != o[i]) && bad < 0 && (valid == NULL || valid[i])) bad = i;
        }
      } else {
        for (int64_t i = 0; i < n; i++) o[i] = (int32_t)SRC(i);
      }
      break;
    }
    case HS_SQL_INT64: {
      int64_t *o = od;
      if (f == HS_SQL_INT32)
        for (int64_t i = 0; i < n; i++) o[i] = i32[i];
      else
        for (int64_t i = 0; i < n; i++) o[i] = SRC(i);
      return HS_OK;
    }
    case HS_SQL_FLOAT64: {
      double *o = od;
      if (f == HS_SQL_INT32)
        for (int64_t i = 0; i < n; i++) o[i] = i32[i];
      else if (f == HS_SQL_INT64)
        for (int64_t i = 0; i < n; i++) o[i] = (double)i64[i];
      else
        for (int64_t i = 0; i < n; i++) o[i] = b8[i];
      if (to.a == 4)
        for (int64_t i = 0; i < n; i++) o[i] = (float)o[i];
      return HS_OK;
    }
    case HS_SQL_NUMERIC: {
      hs_sql_i128 *o = od;
      hs_sql_i128 m = hs_sql_pow10[to.b];
      int p = hs_sql_num_prec(to);
      for (int64_t i = 0; i < n; i++) {
        hs_sql_i128 x = (hs_sql_i128)SRC(i) * m;
        o[i] = x;
        if (HS_UNLIKELY(!hs_sql_num_fits(x, p)) && bad < 0 && (valid == NULL || valid[i])) bad = i;
      }
      break;
    }
    default: break;
    }
#undef SRC
    if (bad >= 0) return range_error(to, pos, err);
    return HS_OK;
  }
  if (f == HS_SQL_FLOAT64) {
    const double *x = in->data;
    switch (t) {
    case HS_SQL_INT32: {
      int32_t *o = od;
      for (int64_t i = 0; i < n; i++) {
        double r = rint(x[i]);
        bool ok = r >= -2147483648.0 && r < 2147483648.0;
        o[i] = ok ? (int32_t)r : 0;
        if (HS_UNLIKELY(!ok) && bad < 0 && (valid == NULL || valid[i])) bad = i;
      }
      break;
    }
    case HS_SQL_INT64: {
      int64_t *o = od;
      for (int64_t i = 0; i < n; i++) {
        double r = rint(x[i]);
        bool ok = r >= -9223372036854775808.0 && r < 9223372036854775808.0;
        o[i] = ok ? (int64_t)r : 0;
        if (HS_UNLIKELY(!ok) && bad < 0 && (valid == NULL || valid[i])) bad = i;
      }
      break;
    }
    case HS_SQL_FLOAT64: {
      double *o = od;
      for (int64_t i = 0; i < n; i++) {
        float fl = (float)x[i];
        o[i] = to.a == 4 ? (double)fl : x[i];
        if (to.a == 4 && HS_UNLIKELY(isinf(fl) && !isinf(x[i])) && bad < 0 &&
            (valid == NULL || valid[i]))
          bad = i;
      }
      break;
    }
    case HS_SQL_NUMERIC: {
      hs_sql_i128 *o = od;
      int p = hs_sql_num_prec(to);
      for (int64_t i = 0; i < n; i++) {
        if (valid != NULL && !valid[i]) continue;
        double d = x[i];
        if (isnan(d) || isinf(d))
          return hs_sql_errf(err, HS_ERR_UNSUPPORTED, pos,
                             "cannot convert %s to numeric (numeric NaN and infinity are not "
                             "supported)",
                             isnan(d) ? "NaN" : "infinity");
        char buf[40];
        int k = snprintf(buf, sizeof buf, "%.14e", d); /* 15 significant digits, as PostgreSQL */
        if (parse_numeric(buf, (size_t)k, p, to.b, &o[i]) != P_OK) return range_error(to, pos, err);
      }
      return HS_OK;
    }
    default: break;
    }
    if (bad >= 0) return range_error(to, pos, err);
    return HS_OK;
  }
  if (f == HS_SQL_NUMERIC) {
    const hs_sql_i128 *x = in->data;
    int s = in->type.b;
    switch (t) {
    case HS_SQL_INT32:
    case HS_SQL_INT64: {
      for (int64_t i = 0; i < n; i++) {
        hs_sql_i128 r;
        hs_sql_num_rescale(x[i], s, 0, &r);
        bool ok = t == HS_SQL_INT32 ? (r >= INT32_MIN && r <= INT32_MAX)
                                    : (r >= INT64_MIN && r <= INT64_MAX);
        if (t == HS_SQL_INT32)
          ((int32_t *)od)[i] = ok ? (int32_t)r : 0;
        else
          ((int64_t *)od)[i] = ok ? (int64_t)r : 0;
        if (HS_UNLIKELY(!ok) && bad < 0 && (valid == NULL || valid[i])) bad = i;
      }
      break;
    }
    case HS_SQL_FLOAT64: {
      double *o = od;
      for (int64_t i = 0; i < n; i++) o[i] = num_to_f64(x[i], s);
      if (to.a == 4)
        for (int64_t i = 0; i < n; i++) o[i] = (float)o[i];
      return HS_OK;
    }
    case HS_SQL_NUMERIC: {
      hs_sql_i128 *o = od;
      int p = hs_sql_num_prec(to);
      for (int64_t i = 0; i < n; i++) {
        hs_sql_i128 r = 0;
        bool ok = hs_sql_num_rescale(x[i], s, to.b, &r) && hs_sql_num_fits(r, p);
        o[i] = r;
        if (HS_UNLIKELY(!ok) && bad < 0 && (valid == NULL || valid[i])) bad = i;
      }
      break;
    }
    default: break;
    }
    if (bad >= 0) return range_error(to, pos, err);
    return HS_OK;
  }
  /* dates and times */
  if (f == HS_SQL_DATE) {
    const int32_t *x = in->data;
    int64_t *o = od;
    for (int64_t i = 0; i < n; i++) o[i] = (int64_t)x[i] * HS_SQL_USECS_PER_DAY;
    for (int64_t i = 0; i < n; i++)
      if (HS_UNLIKELY(x[i] >= TS_END_DAYS) && bad < 0 && (valid == NULL || valid[i])) bad = i;
    if (bad >= 0) return range_error(to, pos, err);
    return HS_OK;
  }
  const int64_t *x = in->data;
  if (t == HS_SQL_DATE) {
    int32_t *o = od;
    for (int64_t i = 0; i < n; i++) o[i] = (int32_t)hs_sql_floor_div(x[i], HS_SQL_USECS_PER_DAY);
    return HS_OK;
  }
  if (f == HS_SQL_INTERVAL) { /* to a narrower fields mask */
    hs_sql_interval *o = od;
    memcpy(o, in->data, (size_t)n * sizeof *o);
    for (int64_t i = 0; i < n; i++) iv_restrict(&o[i], to.a);
    return HS_OK;
  }
  memcpy(od, x, (size_t)n * 8); /* timestamp <-> timestamptz: the session zone is UTC */
  return HS_OK;
}

hs_status hs_sql_cast_vec(const hs_sql_vec *in, hs_sql_type to, int32_t pos, hs_sql_vec *out,
                          hs_error *err) {
  hs_sql_tid f = in->type.id, t = to.id;
  int64_t n = in->n;
  if (f == HS_SQL_NULLTYPE) {
    hs_status st = hs_sql_vec_alloc(out, to, n, true, err);
    if (st == HS_OK && hs_sql_type_is_vector(t) && to.a == 0) out->type.a = 0;
    return st;
  }
  if (hs_sql_type_is_pgvector(f) || hs_sql_type_is_pgvector(t))
    return hs_sql_vector_cast_vec(in, to, pos, out, err);
  if (f == t && (f != HS_SQL_NUMERIC || in->type.b == to.b) &&
      (f != HS_SQL_FLOAT64 || to.a != 4 || in->type.a == 4)) {
    /* same layout: share, retyped (numeric precision is checked when it narrows) */
    bool check = (f == HS_SQL_NUMERIC && hs_sql_num_prec(to) < hs_sql_num_prec(in->type)) ||
                 (f == HS_SQL_INTERVAL && to.a != 0 && to.a != in->type.a);
    if (!check) {
      hs_status st = hs_sql_vec_share(out, in, err);
      if (st == HS_OK) out->type = to;
      return st;
    }
  }
  if (!hs_sql_cast_exists(in->type, to)) {
    char a[64], b[64];
    return hs_sql_errf(err, HS_ERR_INVALID_ARG, pos, "cannot cast type %s to %s",
                       hs_sql_type_name(in->type, a, sizeof a), hs_sql_type_name(to, b, sizeof b));
  }
  hs_status st = hs_sql_vec_alloc(out, to, n, in->valid != NULL, err);
  if (st != HS_OK) return st;
  if (in->valid != NULL) memcpy(hs_sql_vec_mut_valid(out), in->valid, (size_t)n);
  if (t == HS_SQL_TEXT && f == HS_SQL_BYTEA) {
    st = to_text(in, out, err);
  } else if (f == HS_SQL_TEXT && t == HS_SQL_BYTEA) {
    st = from_text(in, to, pos, out, err);
  } else if (t == HS_SQL_TEXT) {
    st = f == HS_SQL_TEXT ? hs_sql_vec_share(out, in, err) : to_text(in, out, err);
  } else if (f == HS_SQL_TEXT) {
    st = from_text(in, to, pos, out, err);
  } else {
    st = cast_fixed(in, to, pos, out, err);
  }
  if (st != HS_OK) hs_sql_vec_release(out);
  return st;
}

hs_status hs_sql_cast_text(const char *s, size_t len, hs_sql_type to, int32_t pos, hs_arena *arena,
                           hs_sql_value *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  out->type = to;
  if (hs_sql_type_is_pgvector(to.id)) return hs_sql_vector_parse(s, len, to, pos, arena, out, err);
  if (to.id == HS_SQL_TEXT) {
    char *p = hs_arena_memdup(arena, s, len ? len : 1);
    if (p == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    out->v.s.ptr = p;
    out->v.s.len = (uint32_t)len;
    return HS_OK;
  }
  if (to.id == HS_SQL_BYTEA) {
    char *p = hs_arena_alloc(arena, len ? len : 1);
    if (p == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    size_t k;
    if (!parse_bytea(s, len, p, &k)) return text_error(s, len, to, P_SYNTAX, pos, err);
    out->v.s.ptr = p;
    out->v.s.len = (uint32_t)k;
    return HS_OK;
  }
  if (to.id == HS_SQL_NULLTYPE) {
    out->is_null = true;
    return HS_OK;
  }
  if (!is_scalar(to.id)) return hs_sql_errf(err, HS_ERR_UNSUPPORTED, pos, "cannot parse this type");
  int e = parse_scalar(s, len, to, out);
  if (e != 0) return scalar_error(s, len, to, e, pos, err);
  return HS_OK;
}
