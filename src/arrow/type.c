/*
 * type.c — parsing of Arrow C Data Interface format strings into
 * hs_arrow_type, and the per-value byte width of fixed-width types.
 *
 * Format strings come from other producers (pyarrow, DuckDB, Java), so the
 * parser is strict: a format is recognised only when it matches the spec in
 * full ("ix" is not int32). Type letters we do not know yield HS_AT_OTHER so
 * that callers can report "unsupported" with the column name; a known type
 * with malformed parameters is a schema error.
 */
#include <string.h>

#include "arrow.h"

/* Parse a decimal int32 in [min, max] from s up to a terminator in `stops`
 * (or end of string). On success *end points at the terminator. */
static bool parse_int32(const char *s, int32_t min, int32_t max, const char *stops, int32_t *out,
                        const char **end) {
  bool neg = false;
  if (*s == '-') {
    neg = true;
    s++;
  }
  if (*s < '0' || *s > '9') return false;
  int64_t v = 0;
  while (*s >= '0' && *s <= '9') {
    v = v * 10 + (*s - '0');
    if (v > (int64_t)INT32_MAX + 1) return false;
    s++;
  }
  if (*s != '\0' && strchr(stops, *s) == NULL) return false;
  if (neg) v = -v;
  if (v < min || v > max) return false;
  *out = (int32_t)v;
  *end = s;
  return true;
}

static bool unit_from_char(char c, hs_time_unit *unit) {
  switch (c) {
  case 's': *unit = HS_UNIT_S; return true;
  case 'm': *unit = HS_UNIT_MS; return true;
  case 'u': *unit = HS_UNIT_US; return true;
  case 'n': *unit = HS_UNIT_NS; return true;
  default: return false;
  }
}

static hs_status malformed(hs_error *err, const char *format) {
  return hs_error_set(err, HS_ERR_SCHEMA, "arrow format '%s': malformed parameters", format);
}

/* "d:P,S" or "d:P,S,BITS"; only 128-bit decimals are ours. */
static hs_status parse_decimal(const char *format, hs_arrow_type *out, hs_error *err) {
  const char *p = format + 2, *end;
  int32_t precision, scale, bits = 128;
  if (!parse_int32(p, 1, 76, ",", &precision, &end) || *end != ',') return malformed(err, format);
  if (!parse_int32(end + 1, -1000, 1000, ",", &scale, &end)) return malformed(err, format);
  if (*end == ',' && !parse_int32(end + 1, 1, 1024, "", &bits, &end)) {
    return malformed(err, format);
  }
  if (bits != 128) {
    out->id = HS_AT_OTHER; /* decimal32/64/256: valid but not ours */
    return HS_OK;
  }
  if (precision > 38) return malformed(err, format);
  out->id = HS_AT_DECIMAL128;
  out->precision = precision;
  out->scale = scale;
  return HS_OK;
}

/* Formats starting with 't': dates, times, timestamps, durations. */
static void parse_temporal(const char *f, hs_arrow_type *out) {
  out->id = HS_AT_OTHER;
  if (f[1] == '\0' || f[2] == '\0') return;
  char kind = f[1], u = f[2];
  if (kind == 's') {
    /* "ts?:TZ"; the colon is mandatory, the timezone may be empty. */
    if (f[3] == ':' && unit_from_char(u, &out->unit)) {
      out->id = HS_AT_TIMESTAMP;
      out->timezone = f + 4;
    }
    return;
  }
  if (f[3] != '\0') return;
  if (kind == 'd') {
    if (u == 'D') out->id = HS_AT_DATE32;
    if (u == 'm') out->id = HS_AT_DATE64;
  } else if (kind == 't' && unit_from_char(u, &out->unit)) {
    out->id = out->unit <= HS_UNIT_MS ? HS_AT_TIME32 : HS_AT_TIME64;
  } else if (kind == 'D' && unit_from_char(u, &out->unit)) {
    out->id = HS_AT_DURATION;
  }
}

hs_status hs_arrow_type_parse(const char *format, hs_arrow_type *out, hs_error *err) {
  if (out == NULL) return hs_error_set(err, HS_ERR_INVALID_ARG, "hs_arrow_type_parse: NULL out");
  memset(out, 0, sizeof *out);
  out->id = HS_AT_OTHER;
  out->timezone = "";
  if (format == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "hs_arrow_type_parse: NULL format");
  }
  static const char simple[] = "nbcCsSiIlLefgzZuU";
  static const hs_arrow_type_id simple_ids[] = {
      HS_AT_NA,      HS_AT_BOOL,        HS_AT_INT8,    HS_AT_UINT8,  HS_AT_INT16,
      HS_AT_UINT16,  HS_AT_INT32,       HS_AT_UINT32,  HS_AT_INT64,  HS_AT_UINT64,
      HS_AT_FLOAT16, HS_AT_FLOAT32,     HS_AT_FLOAT64, HS_AT_BINARY, HS_AT_LARGE_BINARY,
      HS_AT_STRING,  HS_AT_LARGE_STRING};
  _Static_assert(sizeof simple - 1 == sizeof simple_ids / sizeof simple_ids[0],
                 "one id per simple format letter");
  const char *end;
  switch (format[0]) {
  case '\0': return HS_OK;
  case 't': parse_temporal(format, out); return HS_OK;
  case 'd':
    if (format[1] != ':') return HS_OK;
    return parse_decimal(format, out, err);
  case 'w':
    if (format[1] != ':') return HS_OK;
    if (!parse_int32(format + 2, 1, INT32_MAX, "", &out->width, &end)) {
      return malformed(err, format);
    }
    out->id = HS_AT_FIXED_BINARY;
    return HS_OK;
  case '+':
    if (format[1] == 'w' && format[2] == ':') {
      if (!parse_int32(format + 3, 0, INT32_MAX, "", &out->width, &end)) {
        return malformed(err, format);
      }
      out->id = HS_AT_FIXED_LIST;
      return HS_OK;
    }
    if (format[1] == '\0' || format[2] != '\0') return HS_OK;
    switch (format[1]) {
    case 'l': out->id = HS_AT_LIST; break;
    case 'L': out->id = HS_AT_LARGE_LIST; break;
    case 's': out->id = HS_AT_STRUCT; break;
    case 'm': out->id = HS_AT_MAP; break;
    default: break;
    }
    return HS_OK;
  default:
    if (format[1] != '\0') return HS_OK;
    const char *hit = strchr(simple, format[0]);
    if (hit != NULL) out->id = simple_ids[hit - simple];
    return HS_OK;
  }
}

int hs_arrow_type_byte_width(const hs_arrow_type *t) {
  switch (t->id) {
  case HS_AT_BOOL: return 0;
  case HS_AT_INT8:
  case HS_AT_UINT8: return 1;
  case HS_AT_INT16:
  case HS_AT_UINT16:
  case HS_AT_FLOAT16: return 2;
  case HS_AT_INT32:
  case HS_AT_UINT32:
  case HS_AT_FLOAT32:
  case HS_AT_DATE32:
  case HS_AT_TIME32: return 4;
  case HS_AT_INT64:
  case HS_AT_UINT64:
  case HS_AT_FLOAT64:
  case HS_AT_DATE64:
  case HS_AT_TIME64:
  case HS_AT_TIMESTAMP:
  case HS_AT_DURATION: return 8;
  case HS_AT_DECIMAL128: return 16;
  case HS_AT_FIXED_BINARY: return t->width;
  default: return -1;
  }
}

bool hs_arrow_type_layout(const hs_arrow_type *t, int64_t n_fields, int64_t *n_buffers,
                          int64_t *n_children) {
  int64_t nb = 2, nc = 0;
  switch (t->id) {
  case HS_AT_NA: nb = 0; break;
  case HS_AT_BINARY:
  case HS_AT_LARGE_BINARY:
  case HS_AT_STRING:
  case HS_AT_LARGE_STRING: nb = 3; break;
  case HS_AT_STRUCT:
    nb = 1;
    nc = n_fields;
    break;
  case HS_AT_FIXED_LIST: nb = 1, nc = 1; break;
  case HS_AT_LIST:
  case HS_AT_LARGE_LIST:
  case HS_AT_MAP: nb = 2, nc = 1; break;
  default:
    if (hs_arrow_type_byte_width(t) <= 0 && t->id != HS_AT_BOOL) return false;
    break;
  }
  *n_buffers = nb;
  *n_children = nc;
  return true;
}
