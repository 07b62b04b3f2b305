/*
 * test_civil.c — hs_days_from_civil / hs_civil_from_days against two outside
 * oracles: a day-by-day walk of the calendar from 1970-01-01 (±1.2M days,
 * years -1316..5255) and libc's timegm() on random dates.
 */
#define _DEFAULT_SOURCE
#include <time.h>

#include "common/common.h"
#include "hs_test.h"

static int walk_days_in_month(int64_t y, int m) {
  if (m == 2) return (y % 400 == 0 || (y % 4 == 0 && y % 100 != 0)) ? 29 : 28;
  return (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
}

/* Walk from 1970-01-01 by `step` (+1 or -1) days, checking both directions
 * of the conversion at each day. */
static void walk(int step, int64_t count) {
  int64_t y = 1970;
  int m = 1, d = 1, bad = 0;
  for (int64_t days = 0; days != step * count; days += step) {
    int64_t gy;
    int gm, gd;
    hs_civil_from_days(days, &gy, &gm, &gd);
    if (hs_days_from_civil(y, m, d) != days || gy != y || gm != m || gd != d ||
        hs_civil_days_in_month(y, m) != walk_days_in_month(y, m)) {
      if (bad++ < 5)
        fprintf(stderr, "day %lld: walk %lld-%d-%d, from_days %lld-%d-%d, from_civil %lld\n",
                (long long)days, (long long)y, m, d, (long long)gy, gm, gd,
                (long long)hs_days_from_civil(y, m, d));
    }
    if (step > 0 && ++d > walk_days_in_month(y, m)) d = 1, m = m == 12 ? (y++, 1) : m + 1;
    if (step < 0 && --d < 1) m = m == 1 ? (y--, 12) : m - 1, d = walk_days_in_month(y, m);
  }
  CHECK_EQ_INT(bad, 0);
}

static void against_timegm(void) {
  uint64_t rng = 20261201;
  int bad = 0;
  for (int i = 0; i < 100000; i++) {
    int64_t y = 1 + (int64_t)(hs_test_rand(&rng) % 9999);
    int m = 1 + (int)(hs_test_rand(&rng) % 12);
    int d = 1 + (int)(hs_test_rand(&rng) % (uint64_t)walk_days_in_month(y, m));
    struct tm tm = {.tm_year = (int)(y - 1900), .tm_mon = m - 1, .tm_mday = d};
    time_t t = timegm(&tm);
    if (hs_days_from_civil(y, m, d) != (int64_t)t / 86400) bad++;
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(hs_civil_leap_year(2000) && !hs_civil_leap_year(1900) && hs_civil_leap_year(2024));
  CHECK_EQ_INT(hs_civil_days_in_month(2023, 2), 28);
  CHECK_EQ_INT(hs_days_from_civil(2000, 3, 1), 11017);
}

int main(void) {
  walk(1, 1200000);
  walk(-1, 1200000);
  against_timegm();
  return hs_test_finish("test_civil");
}
