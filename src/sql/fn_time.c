/*
 * fn_time.c — dates, timestamps and intervals (PostgreSQL's rules; the
 * session time zone is UTC, so timestamptz computes as timestamp):
 *   date + int, int + date, date - int -> date; date - date -> int
 *   date + interval, date - interval -> timestamp
 *   timestamp[tz] +/- interval -> timestamp[tz]: months first (the day
 *     clamped to the month's end: Jan 31 + 1 month = Feb 29/28), then days,
 *     then microseconds
 *   timestamp[tz] - timestamp[tz] -> interval (days and time, as
 *     PostgreSQL's justify_hours)
 *   interval +/- interval, -interval, interval * float8, interval / float8
 *   extract(field from x) / date_part(field, x): double precision for every
 *     field (PostgreSQL 14+ gives numeric for extract; the value is the same)
 *   date_trunc(unit, timestamp[tz] | interval), justify_hours,
 *   justify_days, make_date, make_timestamp, to_timestamp(double),
 *   now() and friends (volatile: read per call).
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "fn_internal.h"

#define UPD HS_SQL_USECS_PER_DAY

static inline bool date_ok(int64_t d) {
  return d >= HS_SQL_TS_MIN_DAYS && d < HS_SQL_DATE_END_DAYS;
}

/* --------------------------------------------------------- date arithmetic */

static hs_status date_pm_int(KARGS, int sign, bool int_first) {
  BEGIN();
  const int32_t *d = args[int_first ? 1 : 0].data, *k = args[int_first ? 0 : 1].data;
  int32_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    int64_t r = (int64_t)d[i] + sign * (int64_t)k[i];
    if (HS_UNLIKELY(!date_ok(r))) {
      if (ROW_OK(i)) FAIL("date out of range");
      r = 0;
    }
    o[i] = (int32_t)r;
  }
  return HS_OK;
}
static hs_status date_plus_int(KARGS) {
  return date_pm_int(e, args, n_args, n, ret, out, err, 1, false);
}
static hs_status int_plus_date(KARGS) {
  return date_pm_int(e, args, n_args, n, ret, out, err, 1, true);
}
static hs_status date_minus_int(KARGS) {
  return date_pm_int(e, args, n_args, n, ret, out, err, -1, false);
}

static hs_status date_minus_date(KARGS) {
  BEGIN();
  const int32_t *a = args[0].data, *b = args[1].data;
  int32_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    int64_t r = (int64_t)a[i] - b[i];
    if (HS_UNLIKELY(r > INT32_MAX || r < INT32_MIN) && ROW_OK(i)) FAIL("integer out of range");
    o[i] = (int32_t)r;
  }
  return HS_OK;
}

/* timestamp (or date, as midnight) +/- interval */
static hs_status ts_pm_iv(KARGS, int sign, int ts_arg, bool date) {
  BEGIN();
  const hs_sql_interval *v = args[1 - ts_arg].data;
  const int64_t *t = args[ts_arg].data;
  const int32_t *d = args[ts_arg].data;
  int64_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    hs_sql_interval iv = v[i];
    if (sign < 0) {
      if (iv.months == INT32_MIN || iv.days == INT32_MIN || iv.micros == INT64_MIN) {
        if (ROW_OK(i)) FAIL("interval out of range");
        continue;
      }
      iv.months = -iv.months, iv.days = -iv.days, iv.micros = -iv.micros;
    }
    int64_t base = date ? (int64_t)d[i] * UPD : t[i];
    if (!hs_sql_ts_add_interval(base, iv, &o[i])) {
      if (ROW_OK(i)) FAIL("timestamp out of range");
      o[i] = 0;
    }
  }
  return HS_OK;
}
static hs_status ts_plus_iv(KARGS) {
  return ts_pm_iv(e, args, n_args, n, ret, out, err, 1, 0, false);
}
static hs_status iv_plus_ts(KARGS) {
  return ts_pm_iv(e, args, n_args, n, ret, out, err, 1, 1, false);
}
static hs_status ts_minus_iv(KARGS) {
  return ts_pm_iv(e, args, n_args, n, ret, out, err, -1, 0, false);
}
static hs_status date_plus_iv(KARGS) {
  return ts_pm_iv(e, args, n_args, n, ret, out, err, 1, 0, true);
}
static hs_status iv_plus_date(KARGS) {
  return ts_pm_iv(e, args, n_args, n, ret, out, err, 1, 1, true);
}
static hs_status date_minus_iv(KARGS) {
  return ts_pm_iv(e, args, n_args, n, ret, out, err, -1, 0, true);
}

static hs_sql_interval justify_hours(int64_t months, int64_t days, int64_t micros) {
  days += micros / UPD;
  micros %= UPD;
  if (days > 0 && micros < 0) {
    micros += UPD;
    days--;
  } else if (days < 0 && micros > 0) {
    micros -= UPD;
    days++;
  }
  hs_sql_interval r = {(int32_t)months, (int32_t)days, micros};
  return r;
}

static hs_status ts_minus_ts(KARGS) {
  BEGIN();
  const int64_t *a = args[0].data, *b = args[1].data;
  hs_sql_interval *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    int64_t d;
    if (HS_UNLIKELY(__builtin_sub_overflow(a[i], b[i], &d))) {
      if (ROW_OK(i)) FAIL("interval out of range");
      d = 0;
    }
    o[i] = justify_hours(0, 0, d);
  }
  return HS_OK;
}

/* ------------------------------------------------------ interval arithmetic */

static hs_status iv_addsub(KARGS, bool sub) {
  BEGIN();
  const hs_sql_interval *a = args[0].data, *b = args[1].data;
  hs_sql_interval *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    bool ov;
    if (sub)
      ov = (int)__builtin_sub_overflow(a[i].months, b[i].months, &o[i].months) |
           (int)__builtin_sub_overflow(a[i].days, b[i].days, &o[i].days) |
           (int)__builtin_sub_overflow(a[i].micros, b[i].micros, &o[i].micros);
    else
      ov = (int)__builtin_add_overflow(a[i].months, b[i].months, &o[i].months) |
           (int)__builtin_add_overflow(a[i].days, b[i].days, &o[i].days) |
           (int)__builtin_add_overflow(a[i].micros, b[i].micros, &o[i].micros);
    if (HS_UNLIKELY(ov) && ROW_OK(i)) FAIL("interval out of range");
  }
  return HS_OK;
}
static hs_status iv_add(KARGS) {
  return iv_addsub(e, args, n_args, n, ret, out, err, false);
}
static hs_status iv_sub(KARGS) {
  return iv_addsub(e, args, n_args, n, ret, out, err, true);
}

static hs_status iv_neg(KARGS) {
  BEGIN();
  const hs_sql_interval *a = args[0].data;
  hs_sql_interval *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (HS_UNLIKELY(a[i].months == INT32_MIN || a[i].days == INT32_MIN ||
                    a[i].micros == INT64_MIN) &&
        ROW_OK(i))
      FAIL("interval out of range");
    o[i].months = -a[i].months;
    o[i].days = -a[i].days;
    o[i].micros = -a[i].micros;
  }
  return HS_OK;
}

static inline double ts_round(double j) {
  return rint(j * 1e6) / 1e6;
}

/* PostgreSQL's interval_mul: each field scaled, fractions of months
 * spilling into days (30 a month) and fractions of days into time. */
static bool iv_scale(hs_sql_interval s, double f, hs_sql_interval *r) {
  double m = s.months * f, d = s.days * f;
  if (isnan(f) || isnan(m) || isnan(d) || fabs(m) >= 2147483648.0 || fabs(d) >= 2147483648.0)
    return false;
  int32_t rm = (int32_t)m, rd = (int32_t)d;
  double month_rem_days = ts_round((m - rm) * 30);
  double sec_rem = ts_round((d - rd + month_rem_days - (int32_t)month_rem_days) * 86400);
  if (fabs(sec_rem) >= 86400) {
    rd += (int32_t)(sec_rem / 86400);
    sec_rem -= (int32_t)(sec_rem / 86400) * 86400.0;
  }
  double day_total = (double)rd + (int32_t)month_rem_days;
  if (fabs(day_total) >= 2147483648.0) return false;
  double t = rint((double)s.micros * f + sec_rem * 1e6);
  if (isnan(t) || fabs(t) >= 9.2233720368547758e18) return false;
  r->months = rm;
  r->days = (int32_t)day_total;
  r->micros = (int64_t)t;
  return true;
}

static hs_status iv_mul_impl(KARGS, int iv_arg, bool div) {
  BEGIN();
  const hs_sql_interval *a = args[iv_arg].data;
  const double *f = args[1 - iv_arg].data;
  hs_sql_interval *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    double x = f[i];
    if (div) {
      if (x == 0) {
        if (ROW_OK(i)) FAIL("division by zero");
        continue;
      }
      x = 1.0 / x;
    }
    if (!iv_scale(a[i], x, &o[i]) && ROW_OK(i)) FAIL("interval out of range");
  }
  return HS_OK;
}
static hs_status iv_mul(KARGS) {
  return iv_mul_impl(e, args, n_args, n, ret, out, err, 0, false);
}
static hs_status f64_mul_iv(KARGS) {
  return iv_mul_impl(e, args, n_args, n, ret, out, err, 1, false);
}
static hs_status iv_div(KARGS) {
  return iv_mul_impl(e, args, n_args, n, ret, out, err, 0, true);
}

static hs_status iv_justify_hours(KARGS) {
  BEGIN();
  const hs_sql_interval *a = args[0].data;
  hs_sql_interval *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    int64_t days = (int64_t)a[i].days + a[i].micros / UPD;
    if (HS_UNLIKELY(days > INT32_MAX || days < INT32_MIN) && ROW_OK(i))
      FAIL("interval out of range");
    o[i] = justify_hours(a[i].months, a[i].days, a[i].micros);
  }
  return HS_OK;
}

static hs_status iv_justify_days(KARGS) {
  BEGIN();
  const hs_sql_interval *a = args[0].data;
  hs_sql_interval *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    int64_t m = (int64_t)a[i].months + a[i].days / 30;
    int32_t d = a[i].days % 30;
    if (m > 0 && d < 0) {
      d += 30;
      m--;
    } else if (m < 0 && d > 0) {
      d -= 30;
      m++;
    }
    if (HS_UNLIKELY(m > INT32_MAX || m < INT32_MIN) && ROW_OK(i)) FAIL("interval out of range");
    o[i].months = (int32_t)m;
    o[i].days = d;
    o[i].micros = a[i].micros;
  }
  return HS_OK;
}

/* ---------------------------------------------------------------- fields */

typedef enum {
  F_NONE = 0,
  F_MICROSECONDS,
  F_MILLISECONDS,
  F_SECOND,
  F_MINUTE,
  F_HOUR,
  F_DAY,
  F_WEEK,
  F_MONTH,
  F_QUARTER,
  F_YEAR,
  F_DECADE,
  F_CENTURY,
  F_MILLENNIUM,
  F_DOW,
  F_ISODOW,
  F_DOY,
  F_ISOYEAR,
  F_EPOCH,
  F_JULIAN,
  F_TIMEZONE,
  F_TIMEZONE_HOUR,
  F_TIMEZONE_MINUTE
} field;

static const struct {
  const char *name;
  field f;
} FIELDS[] = {
    {"microsecond", F_MICROSECONDS},
    {"microseconds", F_MICROSECONDS},
    {"us", F_MICROSECONDS},
    {"usec", F_MICROSECONDS},
    {"usecs", F_MICROSECONDS},
    {"useconds", F_MICROSECONDS},
    {"millisecond", F_MILLISECONDS},
    {"milliseconds", F_MILLISECONDS},
    {"ms", F_MILLISECONDS},
    {"msec", F_MILLISECONDS},
    {"msecs", F_MILLISECONDS},
    {"mseconds", F_MILLISECONDS},
    {"second", F_SECOND},
    {"seconds", F_SECOND},
    {"s", F_SECOND},
    {"sec", F_SECOND},
    {"secs", F_SECOND},
    {"minute", F_MINUTE},
    {"minutes", F_MINUTE},
    {"m", F_MINUTE},
    {"min", F_MINUTE},
    {"mins", F_MINUTE},
    {"hour", F_HOUR},
    {"hours", F_HOUR},
    {"h", F_HOUR},
    {"hr", F_HOUR},
    {"hrs", F_HOUR},
    {"day", F_DAY},
    {"days", F_DAY},
    {"d", F_DAY},
    {"week", F_WEEK},
    {"weeks", F_WEEK},
    {"w", F_WEEK},
    {"month", F_MONTH},
    {"months", F_MONTH},
    {"mon", F_MONTH},
    {"mons", F_MONTH},
    {"quarter", F_QUARTER},
    {"qtr", F_QUARTER},
    {"year", F_YEAR},
    {"years", F_YEAR},
    {"y", F_YEAR},
    {"yr", F_YEAR},
    {"yrs", F_YEAR},
    {"decade", F_DECADE},
    {"decades", F_DECADE},
    {"dec", F_DECADE},
    {"century", F_CENTURY},
    {"centuries", F_CENTURY},
    {"c", F_CENTURY},
    {"cent", F_CENTURY},
    {"millennium", F_MILLENNIUM},
    {"millennia", F_MILLENNIUM},
    {"mil", F_MILLENNIUM},
    {"mils", F_MILLENNIUM},
    {"millenniums", F_MILLENNIUM},
    {"dow", F_DOW},
    {"isodow", F_ISODOW},
    {"doy", F_DOY},
    {"isoyear", F_ISOYEAR},
    {"epoch", F_EPOCH},
    {"julian", F_JULIAN},
    {"j", F_JULIAN},
    {"timezone", F_TIMEZONE},
    {"timezone_hour", F_TIMEZONE_HOUR},
    {"timezone_minute", F_TIMEZONE_MINUTE},
};

static field field_of(hs_sql_str s) {
  char low[24];
  size_t a = 0, b = s.len;
  while (a < b && s.ptr[a] == ' ') a++;
  while (b > a && s.ptr[b - 1] == ' ') b--;
  if (b - a >= sizeof low) return F_NONE;
  for (size_t i = a; i < b; i++) {
    char c = s.ptr[i];
    low[i - a] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
  }
  low[b - a] = '\0';
  for (size_t k = 0; k < sizeof FIELDS / sizeof FIELDS[0]; k++)
    if (strcmp(low, FIELDS[k].name) == 0) return FIELDS[k].f;
  return F_NONE;
}

/* The field of row i (the unit argument is almost always one constant:
 * parse it again only when its bytes change). */
typedef struct field_cache {
  hs_sql_str last;
  field f;
} field_cache;

static field cached_field(field_cache *c, hs_sql_str s) {
  if (c->last.ptr != NULL && s.len == c->last.len &&
      (s.ptr == c->last.ptr || memcmp(s.ptr, c->last.ptr, s.len) == 0))
    return c->f;
  c->last = s;
  c->f = field_of(s);
  return c->f;
}

static const char *type_word(hs_sql_tid t) {
  switch (t) {
  case HS_SQL_DATE: return "date";
  case HS_SQL_TIMESTAMP: return "timestamp without time zone";
  case HS_SQL_TIMESTAMPTZ: return "timestamp with time zone";
  default: return "interval";
  }
}

/* PostgreSQL's year of an astronomical year (no year 0: 0 is 1 BC = -1). */
static inline int64_t pg_year(int64_t y) {
  return y > 0 ? y : y - 1;
}

static inline int64_t mod7(int64_t x) {
  int64_t r = x % 7;
  return r < 0 ? r + 7 : r;
}

/* Field f of timestamp us (false: not a timestamp field). */
static bool ts_field(int64_t us, field f, bool tz, double *out) {
  int64_t days = hs_sql_floor_div(us, UPD), tod = us - days * UPD;
  int64_t y;
  int m, d;
  switch (f) {
  case F_MICROSECONDS: *out = (double)(tod % 60000000); return true;
  case F_MILLISECONDS: *out = (double)(tod % 60000000) / 1000.0; return true;
  case F_SECOND: *out = (double)(tod % 60000000) / 1e6; return true;
  case F_MINUTE: *out = (double)(tod / 60000000 % 60); return true;
  case F_HOUR: *out = (double)(tod / HS_SQL_USECS_PER_HOUR); return true;
  case F_EPOCH: *out = (double)us / 1e6; return true;
  case F_JULIAN: *out = (double)(days + 2440588) + (double)tod / (double)UPD; return true;
  case F_DOW: *out = (double)(mod7(days + 4)); return true;
  case F_ISODOW: *out = (double)(mod7(days + 3) + 1); return true;
  case F_TIMEZONE:
  case F_TIMEZONE_HOUR:
  case F_TIMEZONE_MINUTE: *out = 0; return tz;
  default: break;
  }
  hs_civil_from_days(days, &y, &m, &d);
  switch (f) {
  case F_DAY: *out = d; return true;
  case F_MONTH: *out = m; return true;
  case F_QUARTER: *out = (m - 1) / 3 + 1; return true;
  case F_YEAR: *out = (double)pg_year(y); return true;
  case F_DECADE: *out = (double)(y >= 0 ? y / 10 : -((8 - (y - 1)) / 10)); return true;
  case F_CENTURY: *out = (double)(y > 0 ? (y + 99) / 100 : -((99 - (y - 1)) / 100)); return true;
  case F_MILLENNIUM:
    *out = (double)(y > 0 ? (y + 999) / 1000 : -((999 - (y - 1)) / 1000));
    return true;
  case F_DOY: *out = (double)(days - hs_days_from_civil(y, 1, 1) + 1); return true;
  case F_WEEK:
  case F_ISOYEAR: {
    int64_t thu = days - mod7(days + 3) + 3; /* the Thursday of this ISO week */
    int64_t ty;
    int tm, td;
    hs_civil_from_days(thu, &ty, &tm, &td);
    if (f == F_ISOYEAR)
      *out = (double)pg_year(ty);
    else
      *out = (double)((thu - hs_days_from_civil(ty, 1, 1)) / 7 + 1);
    return true;
  }
  default: return false;
  }
}

static bool iv_field(hs_sql_interval v, field f, double *out) {
  int64_t t = v.micros;
  int64_t years = v.months / 12, mons = v.months % 12;
  switch (f) {
  case F_MICROSECONDS: *out = (double)(t % 60000000); return true;
  case F_MILLISECONDS: *out = (double)(t % 60000000) / 1000.0; return true;
  case F_SECOND: *out = (double)(t % 60000000) / 1e6; return true;
  case F_MINUTE: *out = (double)(t / 60000000 % 60); return true;
  case F_HOUR: *out = (double)(t / HS_SQL_USECS_PER_HOUR); return true;
  case F_DAY: *out = v.days; return true;
  case F_MONTH: *out = (double)mons; return true;
  case F_QUARTER: *out = (double)(mons / 3 + 1); return true;
  case F_YEAR: *out = (double)years; return true;
  case F_DECADE: *out = (double)(years / 10); return true;
  case F_CENTURY: *out = (double)(years / 100); return true;
  case F_MILLENNIUM: *out = (double)(years / 1000); return true;
  case F_EPOCH:
    *out = (double)t / 1e6 + 365.25 * 86400 * (double)years + 30.0 * 86400 * (double)mons +
           86400.0 * v.days;
    return true;
  default: return false;
  }
}

/* Year, month and day of a day number (the usual era arithmetic, inlined
 * for the loops below; hs_civil_from_days computes the same). */
static inline void civil_inline(int64_t z, int64_t *y, int *m, int *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

/* The common case: one unit for every row, a date or timestamp argument,
 * a field read from the calendar or the clock. false: take the general loop. */
static bool extract_fast(field f, hs_sql_tid t, const void *data, int64_t n, double *o) {
  const int32_t *dd = data;
  const int64_t *us = data;
  bool date = t == HS_SQL_DATE;
#define DAYS(i) (date ? (int64_t)dd[i] : hs_sql_floor_div(us[i], UPD))
#define TOD(i) (date ? 0 : us[i] - hs_sql_floor_div(us[i], UPD) * UPD)
  int64_t y;
  int m, d;
  switch (f) {
  case F_YEAR:
    for (int64_t i = 0; i < n; i++) {
      civil_inline(DAYS(i), &y, &m, &d);
      o[i] = (double)(y > 0 ? y : y - 1);
    }
    return true;
  case F_MONTH:
    for (int64_t i = 0; i < n; i++) {
      civil_inline(DAYS(i), &y, &m, &d);
      o[i] = m;
    }
    return true;
  case F_DAY:
    for (int64_t i = 0; i < n; i++) {
      civil_inline(DAYS(i), &y, &m, &d);
      o[i] = d;
    }
    return true;
  case F_QUARTER:
    for (int64_t i = 0; i < n; i++) {
      civil_inline(DAYS(i), &y, &m, &d);
      o[i] = (m - 1) / 3 + 1;
    }
    return true;
  case F_DOW:
    for (int64_t i = 0; i < n; i++) o[i] = (double)mod7(DAYS(i) + 4);
    return true;
  case F_HOUR:
    for (int64_t i = 0; i < n; i++) o[i] = (double)(TOD(i) / HS_SQL_USECS_PER_HOUR);
    return true;
  case F_EPOCH:
    if (date)
      for (int64_t i = 0; i < n; i++) o[i] = (double)dd[i] * 86400.0;
    else
      for (int64_t i = 0; i < n; i++) o[i] = (double)us[i] / 1e6;
    return true;
  default: return false;
  }
#undef DAYS
#undef TOD
}

static hs_status extract_impl(KARGS) {
  BEGIN();
  const hs_sql_str *u = args[0].data;
  hs_sql_tid t = args[1].type.id;
  double *o = hs_sql_vec_mut_data(out);
  field_cache fc = {{NULL, 0}, F_NONE};
  if (n > 0 && t != HS_SQL_INTERVAL) {
    /* one unit for all rows? (a constant broadcast: the same bytes) */
    int64_t i0 = 0;
    while (i0 < n && !ROW_OK(i0)) i0++;
    if (i0 == n) return HS_OK;
    field f0 = cached_field(&fc, u[i0]);
    bool one = f0 != F_NONE;
    for (int64_t i = i0; i < n && one; i++)
      one = !ROW_OK(i) || (u[i].len == u[i0].len &&
                           (u[i].ptr == u[i0].ptr || memcmp(u[i].ptr, u[i0].ptr, u[i].len) == 0));
    if (one && extract_fast(f0, t, args[1].data, n, o)) return HS_OK;
  }
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    field f = cached_field(&fc, u[i]);
    bool ok = false;
    if (f != F_NONE) {
      if (t == HS_SQL_INTERVAL)
        ok = iv_field(((const hs_sql_interval *)args[1].data)[i], f, &o[i]);
      else if (t == HS_SQL_DATE)
        ok = ts_field((int64_t)((const int32_t *)args[1].data)[i] * UPD, f, false, &o[i]);
      else
        ok = ts_field(((const int64_t *)args[1].data)[i], f, t == HS_SQL_TIMESTAMPTZ, &o[i]);
    }
    if (!ok)
      FAIL("unit \"%.*s\" not %s for type %s", (int)(u[i].len > 32 ? 32 : u[i].len), u[i].ptr,
           f == F_NONE ? "recognized" : "supported", type_word(t));
  }
  return HS_OK;
}

/* ------------------------------------------------------------ date_trunc */

static bool ts_trunc(int64_t us, field f, int64_t *out) {
  int64_t days = hs_sql_floor_div(us, UPD), tod = us - days * UPD;
  int64_t y;
  int m, d;
  switch (f) {
  case F_MICROSECONDS: *out = us; return true;
  case F_MILLISECONDS: *out = us - (tod % 1000); return true;
  case F_SECOND: *out = us - (tod % 1000000); return true;
  case F_MINUTE: *out = us - (tod % 60000000); return true;
  case F_HOUR: *out = us - (tod % HS_SQL_USECS_PER_HOUR); return true;
  case F_DAY: *out = days * UPD; return true;
  case F_WEEK: *out = (days - mod7(days + 3)) * UPD; return true;
  default: break;
  }
  hs_civil_from_days(days, &y, &m, &d);
  switch (f) {
  case F_MONTH: break;
  case F_QUARTER: m = (m - 1) / 3 * 3 + 1; break;
  case F_YEAR: m = 1; break;
  case F_DECADE:
    m = 1;
    y = y > 0 ? y / 10 * 10 : -((8 - (y - 1)) / 10) * 10 - 0;
    break;
  case F_CENTURY:
    m = 1;
    y = y > 0 ? (y + 99) / 100 * 100 - 99 : -((99 - (y - 1)) / 100) * 100 + 1;
    break;
  case F_MILLENNIUM:
    m = 1;
    y = y > 0 ? (y + 999) / 1000 * 1000 - 999 : -((999 - (y - 1)) / 1000) * 1000 + 1;
    break;
  default: return false;
  }
  int64_t nd = hs_days_from_civil(y, m, 1);
  if (nd < HS_SQL_TS_MIN_DAYS) return false;
  *out = nd * UPD;
  return true;
}

static bool iv_trunc(hs_sql_interval v, field f, hs_sql_interval *out) {
  *out = v;
  int64_t t = v.micros;
  switch (f) {
  case F_MICROSECONDS: return true;
  case F_MILLISECONDS: out->micros = t - t % 1000; return true;
  case F_SECOND: out->micros = t - t % 1000000; return true;
  case F_MINUTE: out->micros = t - t % 60000000; return true;
  case F_HOUR: out->micros = t - t % HS_SQL_USECS_PER_HOUR; return true;
  case F_DAY: out->micros = 0; return true;
  case F_MONTH: out->micros = 0, out->days = 0; return true;
  case F_QUARTER:
    out->micros = 0, out->days = 0,
    out->months = v.months - v.months % 12 + (v.months % 12) / 3 * 3;
    return true;
  case F_YEAR: out->micros = 0, out->days = 0, out->months = v.months - v.months % 12; return true;
  case F_DECADE:
    out->micros = 0, out->days = 0, out->months = v.months - v.months % 120;
    return true;
  case F_CENTURY:
    out->micros = 0, out->days = 0, out->months = v.months - v.months % 1200;
    return true;
  case F_MILLENNIUM:
    out->micros = 0, out->days = 0, out->months = v.months - v.months % 12000;
    return true;
  default: return false;
  }
}

static hs_status date_trunc_impl(KARGS) {
  BEGIN();
  const hs_sql_str *u = args[0].data;
  hs_sql_tid t = args[1].type.id;
  field_cache fc = {{NULL, 0}, F_NONE};
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    field f = cached_field(&fc, u[i]);
    bool ok = false;
    if (f != F_NONE) {
      if (t == HS_SQL_INTERVAL)
        ok = iv_trunc(((const hs_sql_interval *)args[1].data)[i], f,
                      &((hs_sql_interval *)hs_sql_vec_mut_data(out))[i]);
      else
        ok = ts_trunc(((const int64_t *)args[1].data)[i], f,
                      &((int64_t *)hs_sql_vec_mut_data(out))[i]);
    }
    if (!ok)
      FAIL("unit \"%.*s\" not %s for type %s", (int)(u[i].len > 32 ? 32 : u[i].len), u[i].ptr,
           f == F_NONE ? "recognized" : "supported", type_word(t));
  }
  return HS_OK;
}

/* ------------------------------------------------------------------ age */

/* PostgreSQL's age(a, b): b subtracted from a field by field (years, months,
 * days, then the time), borrows taken from the month before (the days of
 * b's month, or of a's when a < b), so age('2024-03-31', '2024-02-29') is
 * 1 mon 2 days. */
static hs_sql_interval age_of(int64_t t1, int64_t t2) {
  int64_t d1 = hs_sql_floor_div(t1, UPD), d2 = hs_sql_floor_div(t2, UPD);
  int64_t u1 = t1 - d1 * UPD, u2 = t2 - d2 * UPD;
  int64_t y1, y2;
  int m1, m2, dd1, dd2;
  hs_civil_from_days(d1, &y1, &m1, &dd1);
  hs_civil_from_days(d2, &y2, &m2, &dd2);
  int64_t year = y1 - y2, mon = m1 - m2, mday = dd1 - dd2, time = u1 - u2;
  bool neg = t1 < t2;
  if (neg) year = -year, mon = -mon, mday = -mday, time = -time;
  if (time < 0) time += UPD, mday--;
  while (mday < 0) {
    mday += neg ? hs_civil_days_in_month(y1, m1) : hs_civil_days_in_month(y2, m2);
    mon--;
  }
  while (mon < 0) mon += 12, year--;
  if (neg) year = -year, mon = -mon, mday = -mday, time = -time;
  hs_sql_interval r = {(int32_t)(year * 12 + mon), (int32_t)mday, time};
  return r;
}

static hs_status age2(KARGS) {
  BEGIN();
  const int64_t *a = args[0].data, *b = args[1].data;
  hs_sql_interval *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) o[i] = age_of(a[i], b[i]);
  return HS_OK;
}

static int64_t now_us(void);

/* age(t): from t to today's midnight */
static hs_status age1(KARGS) {
  BEGIN();
  const int64_t *a = args[0].data;
  hs_sql_interval *o = hs_sql_vec_mut_data(out);
  int64_t today = hs_sql_floor_div(now_us(), UPD) * UPD;
  for (int64_t i = 0; i < n; i++) o[i] = age_of(today, a[i]);
  return HS_OK;
}

/* ---------------------------------------------------------- constructors */

static hs_status make_date_impl(KARGS) {
  BEGIN();
  const int32_t *y = args[0].data, *m = args[1].data, *d = args[2].data;
  int32_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    int64_t yy = y[i] < 0 ? (int64_t)y[i] + 1 : y[i]; /* negative years are BC */
    if (y[i] == 0 || m[i] < 1 || m[i] > 12 || d[i] < 1 || d[i] > hs_civil_days_in_month(yy, m[i]))
      FAIL("date field value out of range: %d-%02d-%02d", y[i], m[i], d[i]);
    int64_t days = hs_days_from_civil(yy, m[i], d[i]);
    if (!date_ok(days)) FAIL("date out of range: %d-%02d-%02d", y[i], m[i], d[i]);
    o[i] = (int32_t)days;
  }
  return HS_OK;
}

static hs_status make_timestamp_impl(KARGS) {
  BEGIN();
  const int32_t *y = args[0].data, *mo = args[1].data, *d = args[2].data, *h = args[3].data,
                *mi = args[4].data;
  const double *s = args[5].data;
  int64_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    int64_t yy = y[i] < 0 ? (int64_t)y[i] + 1 : y[i];
    if (y[i] == 0 || mo[i] < 1 || mo[i] > 12 || d[i] < 1 ||
        d[i] > hs_civil_days_in_month(yy, mo[i]))
      FAIL("date field value out of range: %d-%02d-%02d", y[i], mo[i], d[i]);
    if (h[i] < 0 || h[i] > 24 || mi[i] < 0 || mi[i] > 59 || !(s[i] >= 0 && s[i] <= 60) ||
        (h[i] == 24 && (mi[i] != 0 || s[i] != 0)))
      FAIL("time field value out of range: %d:%02d:%02g", h[i], mi[i], s[i]);
    int64_t days = hs_days_from_civil(yy, mo[i], d[i]);
    if (days < HS_SQL_TS_MIN_DAYS || days >= HS_SQL_TS_END_DAYS) FAIL("timestamp out of range");
    o[i] = days * UPD + ((int64_t)h[i] * 60 + mi[i]) * 60000000 + (int64_t)rint(s[i] * 1e6);
  }
  return HS_OK;
}

static hs_status to_timestamp_impl(KARGS) {
  BEGIN();
  const double *s = args[0].data;
  int64_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    if (isnan(s[i])) FAIL("timestamp cannot be NaN");
    double us = rint(s[i] * 1e6);
    if (!(us > -9.2e18 && us < 9.2e18) || !hs_sql_ts_in_range((int64_t)us))
      FAIL("timestamp out of range: \"%g\"", s[i]);
    o[i] = (int64_t)us;
  }
  return HS_OK;
}

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static hs_status fn_now(KARGS) {
  hs_status st = hs_sql_vec_alloc(out, ret, n, false, err);
  if (st != HS_OK) return st;
  int64_t t = now_us();
  int64_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) o[i] = t;
  return HS_OK;
}

static hs_status fn_current_date(KARGS) {
  hs_status st = hs_sql_vec_alloc(out, ret, n, false, err);
  if (st != HS_OK) return st;
  int32_t d = (int32_t)hs_sql_floor_div(now_us(), UPD);
  int32_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) o[i] = d;
  return HS_OK;
}

/* ---------------------------------------------------------------- table */

#define I4 HS_SQL_INT32
#define F8 HS_SQL_FLOAT64
#define TX HS_SQL_TEXT
#define DT HS_SQL_DATE
#define TS HS_SQL_TIMESTAMP
#define TZ HS_SQL_TIMESTAMPTZ
#define IV HS_SQL_INTERVAL

#define FN1(NAME, A, R, K) \
  { NAME, 1, {A}, R, NULL, K, false }
#define FN2(NAME, A, B, R, K) \
  { NAME, 2, {A, B}, R, NULL, K, false }
#define FN0V(NAME, R, K) \
  { NAME, 0, {0}, R, NULL, K, true }

const hs_sql_fn hs_sql_fns_time[] = {
    FN2("+", DT, I4, DT, date_plus_int),
    FN2("+", I4, DT, DT, int_plus_date),
    FN2("-", DT, I4, DT, date_minus_int),
    FN2("-", DT, DT, I4, date_minus_date),
    FN2("+", DT, IV, TS, date_plus_iv),
    FN2("+", IV, DT, TS, iv_plus_date),
    FN2("-", DT, IV, TS, date_minus_iv),
    FN2("+", TS, IV, TS, ts_plus_iv),
    FN2("+", IV, TS, TS, iv_plus_ts),
    FN2("-", TS, IV, TS, ts_minus_iv),
    FN2("+", TZ, IV, TZ, ts_plus_iv),
    FN2("+", IV, TZ, TZ, iv_plus_ts),
    FN2("-", TZ, IV, TZ, ts_minus_iv),
    FN2("-", TS, TS, IV, ts_minus_ts),
    FN2("-", TZ, TZ, IV, ts_minus_ts),
    FN2("+", IV, IV, IV, iv_add),
    FN2("-", IV, IV, IV, iv_sub),
    FN1("-", IV, IV, iv_neg),
    FN2("*", IV, F8, IV, iv_mul),
    FN2("*", F8, IV, IV, f64_mul_iv),
    FN2("/", IV, F8, IV, iv_div),
    FN2("extract", TX, TS, F8, extract_impl),
    FN2("extract", TX, TZ, F8, extract_impl),
    FN2("extract", TX, DT, F8, extract_impl),
    FN2("extract", TX, IV, F8, extract_impl),
    FN2("date_part", TX, TS, F8, extract_impl),
    FN2("date_part", TX, TZ, F8, extract_impl),
    FN2("date_part", TX, DT, F8, extract_impl),
    FN2("date_part", TX, IV, F8, extract_impl),
    FN2("date_trunc", TX, TS, TS, date_trunc_impl),
    FN2("date_trunc", TX, TZ, TZ, date_trunc_impl),
    FN2("date_trunc", TX, IV, IV, date_trunc_impl),
    FN2("age", TS, TS, IV, age2),
    FN2("age", TZ, TZ, IV, age2),
    {"age", 1, {TS}, IV, NULL, age1, true},
    FN1("justify_hours", IV, IV, iv_justify_hours),
    FN1("justify_days", IV, IV, iv_justify_days),
    {"make_date", 3, {I4, I4, I4}, DT, NULL, make_date_impl, false},
    {"make_timestamp", 6, {I4, I4, I4, I4, I4, F8}, TS, NULL, make_timestamp_impl, false},
    FN1("to_timestamp", F8, TZ, to_timestamp_impl),
    FN0V("now", TZ, fn_now),
    FN0V("current_timestamp", TZ, fn_now),
    FN0V("transaction_timestamp", TZ, fn_now),
    FN0V("statement_timestamp", TZ, fn_now),
    FN0V("clock_timestamp", TZ, fn_now),
    FN0V("localtimestamp", TS, fn_now),
    FN0V("current_date", DT, fn_current_date),
};
const size_t hs_sql_fns_time_n = sizeof hs_sql_fns_time / sizeof hs_sql_fns_time[0];
