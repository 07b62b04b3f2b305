/*
 * format.c — display text for single Arrow values, used by `hyperstream
 * read` to print rows: integers, floats (shortest round-trip form),
 * decimals, strings (control characters escaped), binary (hex, truncated),
 * dates, times, timestamps (ISO 8601), durations, lists, structs and maps
 * (first few elements, then "…"), dictionary-encoded values and nulls.
 *
 * The arrays come from our own reader, but a display tool is the wrong
 * place to crash on a reader bug, so every index is checked against the
 * lengths the arrays declare before a buffer is touched.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow.h"
#include "cli.h"

enum { HS_CLI_LIST_ITEMS_MAX = 4, HS_CLI_BINARY_BYTES_MAX = 16, HS_CLI_DEPTH_MAX = 8 };

static bool format_at(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                      hs_buf *out, int depth);

static const void *buffer(const struct ArrowArray *a, int64_t k) {
  return (a->n_buffers > k && a->buffers != NULL) ? a->buffers[k] : NULL;
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static const int64_t unit_per_second[] = {1, 1000, 1000000, 1000000000};
static const int unit_digits[] = {0, 3, 6, 9};

static bool append_date(hs_buf *out, int64_t days) {
  int64_t y;
  int m, d;
  hs_civil_from_days(days, &y, &m, &d);
  return hs_buf_printf(out, "%04" PRId64 "-%02d-%02d", y, m, d);
}

/* Time of day `v` in `unit` (0 <= v < one day), fraction only when non-zero. */
static bool append_time(hs_buf *out, int64_t v, hs_time_unit unit) {
  int64_t per = unit_per_second[unit];
  int64_t secs = floor_div(v, per), frac = v - secs * per;
  if (!hs_buf_printf(out, "%02" PRId64 ":%02" PRId64 ":%02" PRId64, secs / 3600, secs / 60 % 60,
                     secs % 60))
    return false;
  if (frac != 0) return hs_buf_printf(out, ".%0*" PRId64, unit_digits[unit], frac);
  return true;
}

static bool append_timestamp(hs_buf *out, int64_t v, hs_time_unit unit, const char *tz) {
  int64_t per = unit_per_second[unit];
  int64_t secs = floor_div(v, per);
  int64_t frac = v - secs * per;
  int64_t days = floor_div(secs, 86400);
  int64_t tod = (secs - days * 86400) * per + frac;
  if (!append_date(out, days) || !hs_buf_append_byte(out, ' ') || !append_time(out, tod, unit))
    return false;
  if (tz == NULL || tz[0] == '\0') return true;
  if (strcmp(tz, "UTC") == 0 || strcmp(tz, "+00:00") == 0 || strcmp(tz, "Z") == 0)
    return hs_buf_append_byte(out, 'Z');
  return hs_buf_printf(out, " %s", tz);
}

/* Shortest %g form that reads back to the same value. */
static bool append_double(hs_buf *out, double v, int max_digits) {
  if (isnan(v)) return hs_buf_printf(out, "NaN");
  if (isinf(v)) return hs_buf_printf(out, v > 0 ? "inf" : "-inf");
  char tmp[64];
  for (int p = 1; p <= max_digits; p++) {
    snprintf(tmp, sizeof tmp, "%.*g", p, v);
    double back = strtod(tmp, NULL);
    if (max_digits <= 9 ? (float)back == (float)v : back == v) break;
  }
  return hs_buf_printf(out, "%s", tmp);
}

static float half_to_float(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = ldexpf((float)mant, -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = ldexpf((float)(mant | 0x400), exp - 25);
  return (h & 0x8000) ? -v : v;
}

static bool append_decimal128(hs_buf *out, const uint8_t *p, int scale) {
  unsigned __int128 u = 0;
  for (int k = 15; k >= 0; k--) u = (u << 8) | p[k];
  bool neg = (p[15] & 0x80) != 0;
  if (neg) u = ~u + 1;
  char digits[48];
  int n = 0;
  do {
    digits[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u != 0 && n < 40);
  while (n <= scale && n < 40) digits[n++] = '0';
  if (neg && !hs_buf_append_byte(out, '-')) return false;
  for (int k = n - 1; k >= 0; k--) {
    if (!hs_buf_append_byte(out, (uint8_t)digits[k])) return false;
    if (k == scale && scale > 0 && !hs_buf_append_byte(out, '.')) return false;
  }
  return true;
}

static bool append_text(hs_buf *out, const uint8_t *p, int64_t len) {
  for (int64_t k = 0; k < len; k++) {
    uint8_t c = p[k];
    bool ok;
    if (c == '\n')
      ok = hs_buf_printf(out, "\\n");
    else if (c == '\t')
      ok = hs_buf_printf(out, "\\t");
    else if (c < 0x20 || c == 0x7f)
      ok = hs_buf_printf(out, "\\x%02x", c);
    else
      ok = hs_buf_append_byte(out, c);
    if (!ok) return false;
  }
  return true;
}

static bool append_hex(hs_buf *out, const uint8_t *p, int64_t len) {
  if (!hs_buf_printf(out, "0x")) return false;
  int64_t shown = len < HS_CLI_BINARY_BYTES_MAX ? len : HS_CLI_BINARY_BYTES_MAX;
  for (int64_t k = 0; k < shown; k++) {
    if (!hs_buf_printf(out, "%02x", p[k])) return false;
  }
  return shown < len ? hs_buf_printf(out, "… (%" PRId64 " bytes)", len) : true;
}

/* Child range [begin, end) of list row j; false when out of bounds. */
static bool list_range(const struct ArrowArray *a, const hs_arrow_type *t, int64_t j,
                       int64_t *begin, int64_t *end) {
  if (a->n_children < 1 || a->children == NULL || a->children[0] == NULL) return false;
  int64_t child_len = a->children[0]->length;
  if (t->id == HS_AT_FIXED_LIST) {
    if (t->width < 0 || (t->width > 0 && j > child_len / t->width)) return false;
    *begin = j * t->width;
    *end = *begin + t->width;
  } else {
    const void *offs = buffer(a, 1);
    if (offs == NULL) return false;
    if (t->id == HS_AT_LARGE_LIST) {
      *begin = ((const int64_t *)offs)[j];
      *end = ((const int64_t *)offs)[j + 1];
    } else {
      *begin = ((const int32_t *)offs)[j];
      *end = ((const int32_t *)offs)[j + 1];
    }
  }
  return 0 <= *begin && *begin <= *end && *end <= child_len;
}

static bool format_list(const struct ArrowSchema *s, const struct ArrowArray *a,
                        const hs_arrow_type *t, int64_t j, hs_buf *out, int depth) {
  int64_t begin, end;
  if (s->n_children < 1 || !list_range(a, t, j, &begin, &end))
    return hs_buf_printf(out, "<invalid>");
  bool is_map = t->id == HS_AT_MAP;
  const struct ArrowSchema *cs = s->children[0];
  const struct ArrowArray *ca = a->children[0];
  if (!hs_buf_append_byte(out, is_map ? '{' : '[')) return false;
  for (int64_t k = begin; k < end; k++) {
    if (k > begin && !hs_buf_printf(out, ", ")) return false;
    if (k - begin == HS_CLI_LIST_ITEMS_MAX) {
      if (!hs_buf_printf(out, "… +%" PRId64, end - k)) return false;
      break;
    }
    if (is_map && cs->n_children == 2 && ca->n_children == 2) {
      if (!format_at(cs->children[0], ca->children[0], k, out, depth + 1) ||
          !hs_buf_printf(out, ": ") ||
          !format_at(cs->children[1], ca->children[1], k, out, depth + 1))
        return false;
    } else if (!format_at(cs, ca, k, out, depth + 1)) {
      return false;
    }
  }
  return hs_buf_append_byte(out, is_map ? '}' : ']');
}

static bool format_struct(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t j,
                          hs_buf *out, int depth) {
  if (s->n_children != a->n_children) return hs_buf_printf(out, "<invalid>");
  if (!hs_buf_append_byte(out, '{')) return false;
  for (int64_t c = 0; c < s->n_children; c++) {
    const char *name = s->children[c]->name;
    if (c > 0 && !hs_buf_printf(out, ", ")) return false;
    if (!hs_buf_printf(out, "%s: ", name ? name : "") ||
        !format_at(s->children[c], a->children[c], j, out, depth + 1))
      return false;
  }
  return hs_buf_append_byte(out, '}');
}

/* Integer value of a dictionary index array ("c","C","s","S","i","I","l","L"). */
static bool dict_index(const hs_arrow_type *t, const void *vals, int64_t j, int64_t *out) {
  switch (t->id) {
  case HS_AT_INT8: *out = ((const int8_t *)vals)[j]; return true;
  case HS_AT_UINT8: *out = ((const uint8_t *)vals)[j]; return true;
  case HS_AT_INT16: *out = ((const int16_t *)vals)[j]; return true;
  case HS_AT_UINT16: *out = ((const uint16_t *)vals)[j]; return true;
  case HS_AT_INT32: *out = ((const int32_t *)vals)[j]; return true;
  case HS_AT_UINT32: *out = ((const uint32_t *)vals)[j]; return true;
  case HS_AT_INT64: *out = ((const int64_t *)vals)[j]; return true;
  case HS_AT_UINT64: *out = (int64_t)((const uint64_t *)vals)[j]; return true;
  default: return false;
  }
}

static bool format_at(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                      hs_buf *out, int depth) {
  if (s == NULL || a == NULL || i < 0 || i >= a->length) return hs_buf_printf(out, "<invalid>");
  if (depth > HS_CLI_DEPTH_MAX) return hs_buf_printf(out, "…");
  if (!hs_arrow_is_valid(a, i)) return hs_buf_printf(out, "null");
  hs_arrow_type t;
  if (hs_arrow_type_parse(s->format, &t, NULL) != HS_OK) return hs_buf_printf(out, "<?>");
  int64_t j = a->offset + i;
  const void *vals = buffer(a, 1);
  if (s->dictionary != NULL) {
    int64_t k;
    if (vals == NULL || a->dictionary == NULL || !dict_index(&t, vals, j, &k))
      return hs_buf_printf(out, "<invalid>");
    return format_at(s->dictionary, a->dictionary, k, out, depth + 1);
  }
  bool needs_values =
      t.id != HS_AT_NA && t.id != HS_AT_STRUCT && t.id != HS_AT_FIXED_LIST && t.id != HS_AT_OTHER;
  if (needs_values && vals == NULL) return hs_buf_printf(out, "<invalid>");
  switch (t.id) {
  case HS_AT_NA: return hs_buf_printf(out, "null");
  case HS_AT_BOOL:
    return hs_buf_printf(out, (((const uint8_t *)vals)[j >> 3] >> (j & 7)) & 1 ? "true" : "false");
  case HS_AT_INT8: return hs_buf_printf(out, "%d", ((const int8_t *)vals)[j]);
  case HS_AT_UINT8: return hs_buf_printf(out, "%u", ((const uint8_t *)vals)[j]);
  case HS_AT_INT16: return hs_buf_printf(out, "%d", ((const int16_t *)vals)[j]);
  case HS_AT_UINT16: return hs_buf_printf(out, "%u", ((const uint16_t *)vals)[j]);
  case HS_AT_INT32: return hs_buf_printf(out, "%" PRId32, ((const int32_t *)vals)[j]);
  case HS_AT_UINT32: return hs_buf_printf(out, "%" PRIu32, ((const uint32_t *)vals)[j]);
  case HS_AT_INT64: return hs_buf_printf(out, "%" PRId64, ((const int64_t *)vals)[j]);
  case HS_AT_UINT64: return hs_buf_printf(out, "%" PRIu64, ((const uint64_t *)vals)[j]);
  case HS_AT_FLOAT16: return append_double(out, half_to_float(((const uint16_t *)vals)[j]), 5);
  case HS_AT_FLOAT32: return append_double(out, ((const float *)vals)[j], 9);
  case HS_AT_FLOAT64: return append_double(out, ((const double *)vals)[j], 17);
  case HS_AT_STRING:
  case HS_AT_BINARY:
  case HS_AT_LARGE_STRING:
  case HS_AT_LARGE_BINARY: {
    const uint8_t *data = buffer(a, 2);
    bool large = t.id == HS_AT_LARGE_STRING || t.id == HS_AT_LARGE_BINARY;
    int64_t b = large ? ((const int64_t *)vals)[j] : ((const int32_t *)vals)[j];
    int64_t e = large ? ((const int64_t *)vals)[j + 1] : ((const int32_t *)vals)[j + 1];
    if (b < 0 || e < b || (data == NULL && e > b)) return hs_buf_printf(out, "<invalid>");
    bool text = t.id == HS_AT_STRING || t.id == HS_AT_LARGE_STRING;
    return text ? append_text(out, data + b, e - b) : append_hex(out, data + b, e - b);
  }
  case HS_AT_FIXED_BINARY: return append_hex(out, (const uint8_t *)vals + j * t.width, t.width);
  case HS_AT_DECIMAL128: return append_decimal128(out, (const uint8_t *)vals + j * 16, t.scale);
  case HS_AT_DATE32: return append_date(out, ((const int32_t *)vals)[j]);
  case HS_AT_DATE64: return append_date(out, floor_div(((const int64_t *)vals)[j], 86400000));
  case HS_AT_TIME32: return append_time(out, ((const int32_t *)vals)[j], t.unit);
  case HS_AT_TIME64: return append_time(out, ((const int64_t *)vals)[j], t.unit);
  case HS_AT_TIMESTAMP:
    return append_timestamp(out, ((const int64_t *)vals)[j], t.unit, t.timezone);
  case HS_AT_DURATION: {
    static const char *const suffix[] = {"s", "ms", "us", "ns"};
    return hs_buf_printf(out, "%" PRId64 "%s", ((const int64_t *)vals)[j], suffix[t.unit]);
  }
  case HS_AT_LIST:
  case HS_AT_LARGE_LIST:
  case HS_AT_FIXED_LIST:
  case HS_AT_MAP: return format_list(s, a, &t, j, out, depth);
  case HS_AT_STRUCT: return format_struct(s, a, j, out, depth);
  default: return hs_buf_printf(out, "<%s>", s->format);
  }
}

bool hs_cli_format_value(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                         hs_buf *out) {
  return format_at(s, a, i, out, 0);
}
