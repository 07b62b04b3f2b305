/*
 * describe.c — hs_parquet_inspect: a human-readable or JSON description of
 * a Parquet file's footer (schema tree, row groups, column chunks with
 * types, codecs, encodings, sizes, statistics, page-index presence,
 * key-value metadata).
 *
 * Statistics are raw bytes in the file; they are decoded for display by
 * the column's physical and logical type (dates and timestamps as ISO
 * 8601, decimals with their scale, strings escaped, other binary as hex).
 * Every value comes from untrusted bytes: lengths are checked before
 * decoding, anything that does not fit its type is shown as hex, and the
 * schema walk is bounded by the element count and a depth limit, so a
 * hostile footer yields a (possibly odd) description, never a crash.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../io/io.h"
#include "metadata.h"

#define DESCRIBE_DEPTH_MAX 64
#define DESCRIBE_TEXT_VALUE_MAX 48 /* text mode truncates longer values */

typedef struct describe_ctx {
  hs_buf out;
  bool json;
  bool oom;
  const hs_pq_file_metadata *md;
  uint32_t *leaves; /* schema index of each leaf column, depth-first */
  uint32_t n_leaves;
} describe_ctx;

static void put(describe_ctx *c, const char *s) {
  if (!c->oom && !hs_buf_append(&c->out, s, strlen(s))) c->oom = true;
}

static void putn(describe_ctx *c, const void *s, size_t n) {
  if (!c->oom && !hs_buf_append(&c->out, s, n)) c->oom = true;
}

#define PUTF(c, ...)                                                          \
  do {                                                                        \
    if (!(c)->oom && !hs_buf_printf(&(c)->out, __VA_ARGS__)) (c)->oom = true; \
  } while (0)

/* ------------------------------------------------------------ escaping */

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid. */
static size_t utf8_len(const uint8_t *p, size_t n) {
  uint8_t b = p[0];
  size_t len;
  uint32_t cp;
  if (b < 0x80) return 1;
  if ((b & 0xe0) == 0xc0)
    len = 2, cp = b & 0x1f;
  else if ((b & 0xf0) == 0xe0)
    len = 3, cp = b & 0x0f;
  else if ((b & 0xf8) == 0xf0)
    len = 4, cp = b & 0x07;
  else
    return 0;
  if (len > n) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (p[i] & 0x3f);
  }
  static const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

/* Append bytes as a quoted string: JSON escapes in JSON mode (invalid
 * UTF-8 becomes U+FFFD so the document stays valid), C-style \xNN escapes
 * in text mode. `max` > 0 truncates (text mode) with "...". */
static void put_quoted(describe_ctx *c, const uint8_t *p, size_t n, size_t max) {
  put(c, "\"");
  size_t shown = 0;
  for (size_t i = 0; i < n;) {
    if (max && shown >= max) {
      put(c, "...");
      break;
    }
    uint8_t b = p[i];
    size_t l = utf8_len(p + i, n - i);
    char tmp[16];
    if (b == '"' || b == '\\') {
      tmp[0] = '\\', tmp[1] = (char)b, tmp[2] = 0;
      put(c, tmp);
    } else if (b == '\n') {
      put(c, "\\n");
    } else if (b == '\t') {
      put(c, "\\t");
    } else if (b == '\r') {
      put(c, "\\r");
    } else if (b < 0x20 || b == 0x7f) {
      snprintf(tmp, sizeof tmp, c->json ? "\\u%04x" : "\\x%02x", b);
      put(c, tmp);
    } else if (l == 0) {
      if (c->json) {
        put(c, "\\ufffd");
      } else {
        snprintf(tmp, sizeof tmp, "\\x%02x", b);
        put(c, tmp);
      }
      l = 1;
    } else {
      putn(c, p + i, l);
    }
    i += l ? l : 1;
    shown++;
  }
  put(c, "\"");
}

static void put_str(describe_ctx *c, const char *s) {
  if (s == NULL) {
    put(c, c->json ? "null" : "-");
    return;
  }
  put_quoted(c, (const uint8_t *)s, strlen(s), 0);
}

/* ------------------------------------------------------ value decoding */

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static void fmt_date(char *out, size_t cap, int64_t days) {
  if (days < -100000000 || days > 100000000) {
    snprintf(out, cap, "%" PRId64 " days", days);
    return;
  }
  int64_t y;
  int m, d;
  hs_civil_from_days(days, &y, &m, &d);
  snprintf(out, cap, "%04" PRId64 "-%02d-%02d", y, m, d);
}

/* `v` units since the epoch (per_second units per second, `digits` of
 * fraction) as ISO 8601; time_only prints just the time of day. */
static void fmt_time(char *out, size_t cap, int64_t v, int64_t per_second, int digits,
                     bool time_only, bool utc) {
  int64_t secs = floor_div(v, per_second);
  int64_t frac = v - secs * per_second;
  int64_t days = floor_div(secs, 86400);
  int64_t sod = secs - days * 86400;
  char date[48] = "";
  if (!time_only) {
    fmt_date(date, sizeof date, days);
    strcat(date, "T");
  } else if (days != 0) {
    snprintf(out, cap, "%" PRId64, v);
    return;
  }
  snprintf(out, cap, "%s%02d:%02d:%02d.%0*" PRId64 "%s", date, (int)(sod / 3600),
           (int)(sod / 60 % 60), (int)(sod % 60), digits, frac, utc && !time_only ? "Z" : "");
}

static void fmt_hex(char *out, size_t cap, const uint8_t *p, size_t n) {
  size_t o = 0;
  if (cap < 8) return;
  o += (size_t)snprintf(out, cap, "0x");
  for (size_t i = 0; i < n && o + 6 < cap; i++)
    o += (size_t)snprintf(out + o, cap - o, "%02x", p[i]);
  if (2 + 2 * n + 1 > cap) snprintf(out + cap - 4, 4, "...");
}

/* Big-endian two's complement (up to 16 bytes) with `scale` as decimal. */
static bool fmt_decimal_be(char *out, size_t cap, const uint8_t *p, size_t n, int32_t scale) {
  if (n == 0 || n > 16 || scale < 0 || scale > 38) return false;
  unsigned __int128 u = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
  for (size_t i = 0; i < n; i++) u = u << 8 | p[i];
  bool neg = (p[0] & 0x80) != 0;
  if (neg) u = ~u + 1;
  char digits[64];
  int nd = 0;
  do {
    digits[nd++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u != 0);
  while (nd <= scale) digits[nd++] = '0';
  size_t o = 0;
  if (neg) out[o++] = '-';
  for (int i = nd - 1; i >= 0 && o + 2 < cap; i--) {
    out[o++] = digits[i];
    if (i == scale && scale > 0) out[o++] = '.';
  }
  out[o] = 0;
  return true;
}

static bool fmt_decimal_int(char *out, size_t cap, int64_t v, int32_t scale) {
  uint8_t be[8];
  for (int i = 0; i < 8; i++) be[i] = (uint8_t)((uint64_t)v >> (56 - 8 * i));
  return fmt_decimal_be(out, cap, be, 8, scale);
}

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, f = h & 0x3ff;
  double v = e == 0 ? ldexp(f, -24) : e == 31 ? (f ? NAN : INFINITY) : ldexp(f + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

typedef enum value_kind { V_NUMBER, V_STRING, V_TEXT } value_kind;

/* Format one statistics value. V_NUMBER: a JSON number; V_TEXT: display
 * text (quoted in JSON); V_STRING: raw bytes to escape (*sp, *sn). */
static value_kind fmt_value(const hs_pq_schema_element *se, hs_pq_type type, hs_pq_bytes v,
                            char *out, size_t cap, const uint8_t **sp, size_t *sn) {
  const hs_pq_logical *lt = se ? &se->logical : NULL;
  hs_pq_logical_kind lk = lt ? lt->kind : HS_PQ_LT_NONE;
  int ct = se && se->has_converted ? (int)se->converted : -1;
  int32_t scale = lk == HS_PQ_LT_DECIMAL ? lt->decimal_scale : se ? se->scale : 0;
  bool decimal = lk == HS_PQ_LT_DECIMAL || ct == HS_PQ_CT_DECIMAL;
  switch (type) {
  case HS_PQ_BOOLEAN:
    if (v.len != 1) break;
    snprintf(out, cap, "%s", v.data[0] ? "true" : "false");
    return V_NUMBER;
  case HS_PQ_INT32: {
    if (v.len != 4) break;
    int32_t x = (int32_t)hs_load_u32le(v.data);
    if (lk == HS_PQ_LT_DATE || ct == HS_PQ_CT_DATE) {
      fmt_date(out, cap, x);
      return V_TEXT;
    }
    if (decimal && fmt_decimal_int(out, cap, x, scale)) return V_TEXT;
    if ((lk == HS_PQ_LT_TIME && lt->unit == HS_PQ_MILLIS) || ct == HS_PQ_CT_TIME_MILLIS) {
      fmt_time(out, cap, x, 1000, 3, true, false);
      return V_TEXT;
    }
    bool is_unsigned = (lk == HS_PQ_LT_INTEGER && !lt->int_is_signed) ||
                       (ct >= HS_PQ_CT_UINT_8 && ct <= HS_PQ_CT_UINT_32);
    if (is_unsigned)
      snprintf(out, cap, "%" PRIu32, (uint32_t)x);
    else
      snprintf(out, cap, "%" PRId32, x);
    return V_NUMBER;
  }
  case HS_PQ_INT64: {
    if (v.len != 8) break;
    int64_t x = (int64_t)hs_load_u64le(v.data);
    if (decimal && fmt_decimal_int(out, cap, x, scale)) return V_TEXT;
    static const int64_t per_sec[] = {1000, 1000000, 1000000000};
    static const int digits[] = {3, 6, 9};
    if (lk == HS_PQ_LT_TIMESTAMP || lk == HS_PQ_LT_TIME) {
      int u = lt->unit <= HS_PQ_NANOS ? (int)lt->unit : 1;
      fmt_time(out, cap, x, per_sec[u], digits[u], lk == HS_PQ_LT_TIME, lt->is_adjusted_to_utc);
      return V_TEXT;
    }
    if (ct == HS_PQ_CT_TIMESTAMP_MILLIS || ct == HS_PQ_CT_TIMESTAMP_MICROS) {
      int u = ct == HS_PQ_CT_TIMESTAMP_MILLIS ? 0 : 1;
      fmt_time(out, cap, x, per_sec[u], digits[u], false, true);
      return V_TEXT;
    }
    if (ct == HS_PQ_CT_TIME_MICROS) {
      fmt_time(out, cap, x, 1000000, 6, true, false);
      return V_TEXT;
    }
    bool is_unsigned = (lk == HS_PQ_LT_INTEGER && !lt->int_is_signed) || ct == HS_PQ_CT_UINT_64;
    if (is_unsigned)
      snprintf(out, cap, "%" PRIu64, (uint64_t)x);
    else
      snprintf(out, cap, "%" PRId64, x);
    return V_NUMBER;
  }
  case HS_PQ_INT96: {
    if (v.len != 12) break;
    /* Nanoseconds of the day, then the Julian day number. */
    int64_t nanos = (int64_t)hs_load_u64le(v.data);
    int64_t jd = (int64_t)hs_load_u32le(v.data + 8);
    if (nanos < 0 || nanos >= 86400LL * 1000000000LL) break;
    int64_t days = jd - 2440588;
    char date[48];
    fmt_date(date, sizeof date, days);
    char t[64];
    fmt_time(t, sizeof t, nanos, 1000000000, 9, true, false);
    snprintf(out, cap, "%sT%s", date, t);
    return V_TEXT;
  }
  case HS_PQ_FLOAT:
  case HS_PQ_DOUBLE: {
    double d;
    if (type == HS_PQ_FLOAT && v.len == 4) {
      uint32_t bits = hs_load_u32le(v.data);
      float f;
      memcpy(&f, &bits, 4);
      d = f;
      snprintf(out, cap, "%.9g", d);
    } else if (type == HS_PQ_DOUBLE && v.len == 8) {
      uint64_t bits = hs_load_u64le(v.data);
      memcpy(&d, &bits, 8);
      snprintf(out, cap, "%.17g", d);
    } else {
      break;
    }
    return isfinite(d) ? V_NUMBER : V_TEXT;
  }
  case HS_PQ_BYTE_ARRAY:
  case HS_PQ_FIXED_LEN_BYTE_ARRAY:
    if (decimal && fmt_decimal_be(out, cap, v.data, v.len, scale)) return V_TEXT;
    if (lk == HS_PQ_LT_STRING || lk == HS_PQ_LT_ENUM || lk == HS_PQ_LT_JSON ||
        ct == HS_PQ_CT_UTF8 || ct == HS_PQ_CT_ENUM || ct == HS_PQ_CT_JSON) {
      *sp = v.data;
      *sn = v.len;
      return V_STRING;
    }
    if (lk == HS_PQ_LT_UUID && v.len == 16) {
      const uint8_t *p = v.data;
      snprintf(out, cap, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
               p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12],
               p[13], p[14], p[15]);
      return V_TEXT;
    }
    if (lk == HS_PQ_LT_FLOAT16 && v.len == 2) {
      double d = half_to_double((uint16_t)(v.data[0] | v.data[1] << 8));
      snprintf(out, cap, "%.5g", d);
      return isfinite(d) ? V_NUMBER : V_TEXT;
    }
    break;
  }
  fmt_hex(out, cap, v.data, v.len);
  return V_TEXT;
}

/* Append a statistics value (JSON value, or display text). */
static void put_value(describe_ctx *c, const hs_pq_schema_element *se, hs_pq_type type,
                      hs_pq_bytes v) {
  char buf[256];
  const uint8_t *sp = NULL;
  size_t sn = 0;
  buf[0] = 0;
  value_kind k = fmt_value(se, type, v, buf, sizeof buf, &sp, &sn);
  if (k == V_STRING) {
    put_quoted(c, sp, sn, c->json ? 0 : DESCRIBE_TEXT_VALUE_MAX);
  } else if (k == V_TEXT && c->json) {
    put_str(c, buf);
  } else {
    put(c, buf);
  }
}

/* ------------------------------------------------------------- schema */

static void logical_name(const hs_pq_schema_element *se, char *out, size_t cap) {
  const hs_pq_logical *lt = &se->logical;
  static const char *const units[] = {"MILLIS", "MICROS", "NANOS"};
  const char *unit = lt->unit <= HS_PQ_NANOS ? units[lt->unit] : "?";
  static const char *const names[] = {
      [HS_PQ_LT_STRING] = "STRING",      [HS_PQ_LT_MAP] = "MAP",
      [HS_PQ_LT_LIST] = "LIST",          [HS_PQ_LT_ENUM] = "ENUM",
      [HS_PQ_LT_DATE] = "DATE",          [HS_PQ_LT_UNKNOWN] = "NULL",
      [HS_PQ_LT_JSON] = "JSON",          [HS_PQ_LT_BSON] = "BSON",
      [HS_PQ_LT_UUID] = "UUID",          [HS_PQ_LT_FLOAT16] = "FLOAT16",
      [HS_PQ_LT_VARIANT] = "VARIANT",    [HS_PQ_LT_GEOMETRY] = "GEOMETRY",
      [HS_PQ_LT_GEOGRAPHY] = "GEOGRAPHY"};
  switch (lt->kind) {
  case HS_PQ_LT_NONE: out[0] = 0; return;
  case HS_PQ_LT_DECIMAL:
    snprintf(out, cap, "DECIMAL(%d,%d)", lt->decimal_precision, lt->decimal_scale);
    return;
  case HS_PQ_LT_TIME:
  case HS_PQ_LT_TIMESTAMP:
    snprintf(out, cap, "%s(%s,%s)", lt->kind == HS_PQ_LT_TIME ? "TIME" : "TIMESTAMP", unit,
             lt->is_adjusted_to_utc ? "UTC" : "local");
    return;
  case HS_PQ_LT_INTEGER:
    snprintf(out, cap, "INT(%d,%s)", lt->int_bit_width, lt->int_is_signed ? "signed" : "unsigned");
    return;
  default:
    snprintf(out, cap, "%s",
             (size_t)lt->kind < sizeof names / sizeof names[0] && names[lt->kind] ? names[lt->kind]
                                                                                  : "OTHER");
    return;
  }
}

static const char *converted_name(int ct) {
  static const char *const names[] = {"UTF8",
                                      "MAP",
                                      "MAP_KEY_VALUE",
                                      "LIST",
                                      "ENUM",
                                      "DECIMAL",
                                      "DATE",
                                      "TIME_MILLIS",
                                      "TIME_MICROS",
                                      "TIMESTAMP_MILLIS",
                                      "TIMESTAMP_MICROS",
                                      "UINT_8",
                                      "UINT_16",
                                      "UINT_32",
                                      "UINT_64",
                                      "INT_8",
                                      "INT_16",
                                      "INT_32",
                                      "INT_64",
                                      "JSON",
                                      "BSON",
                                      "INTERVAL"};
  return ct >= 0 && ct < 22 ? names[ct] : "?";
}

static const char *repetition_name(const hs_pq_schema_element *se) {
  if (!se->has_repetition) return "";
  static const char *const names[] = {"required", "optional", "repeated"};
  return names[se->repetition];
}

static void indent(describe_ctx *c, int n) {
  for (int i = 0; i < n; i++) put(c, "  ");
}

/* Walk one element and its children. *idx advances past the subtree; the
 * walk ends early at the end of the array or the depth limit. */
static void describe_schema(describe_ctx *c, uint32_t *idx, int depth) {
  const hs_pq_file_metadata *md = c->md;
  if (*idx >= md->n_schema) return;
  uint32_t me = (*idx)++;
  const hs_pq_schema_element *se = &md->schema[me];
  int32_t n_children = se->num_children > 0 ? se->num_children : 0;
  bool leaf = n_children == 0 && me > 0;
  if (leaf && c->leaves) c->leaves[c->n_leaves++] = me;
  char logical[64];
  logical_name(se, logical, sizeof logical);
  if (c->json) {
    put(c, "{\"name\": ");
    put_str(c, se->name);
    PUTF(c, ", \"repetition\": ");
    if (se->has_repetition)
      put_str(c, repetition_name(se));
    else
      put(c, "null");
    if (se->has_type) {
      PUTF(c, ", \"physical_type\": \"%s\"", hs_pq_type_name(se->type));
      if (se->type == HS_PQ_FIXED_LEN_BYTE_ARRAY) PUTF(c, ", \"type_length\": %d", se->type_length);
    }
    if (logical[0]) PUTF(c, ", \"logical_type\": \"%s\"", logical);
    if (se->has_converted) PUTF(c, ", \"converted_type\": \"%s\"", converted_name(se->converted));
    if (se->has_field_id) PUTF(c, ", \"field_id\": %d", se->field_id);
  } else {
    indent(c, depth + 1);
    put(c, se->name);
    if (se->has_repetition) PUTF(c, "  %s", repetition_name(se));
    if (se->has_type) {
      PUTF(c, " %s", hs_pq_type_name(se->type));
      if (se->type == HS_PQ_FIXED_LEN_BYTE_ARRAY) PUTF(c, "(%d)", se->type_length);
    } else {
      put(c, " group");
    }
    if (logical[0]) PUTF(c, " %s", logical);
    if (se->has_converted) PUTF(c, " [%s]", converted_name(se->converted));
    if (se->has_field_id) PUTF(c, " id=%d", se->field_id);
    put(c, "\n");
  }
  if (n_children > 0 && !leaf) {
    if (c->json) put(c, ", \"children\": [");
    for (int32_t i = 0; i < n_children && *idx < md->n_schema; i++) {
      if (depth + 1 >= DESCRIBE_DEPTH_MAX) break;
      if (c->json && i > 0) put(c, ", ");
      describe_schema(c, idx, depth + 1);
    }
    if (c->json) put(c, "]");
  }
  if (c->json) put(c, "}");
}

/* ------------------------------------------------------- column chunks */

static void join_path(const hs_pq_column_chunk *cc, char *out, size_t cap) {
  out[0] = 0;
  if (!cc->has_meta_data) {
    snprintf(out, cap, "%s", cc->is_encrypted ? "(encrypted)" : "(no metadata)");
    return;
  }
  size_t o = 0;
  for (uint32_t i = 0; i < cc->meta_data.n_path && o + 1 < cap; i++) {
    int n = snprintf(out + o, cap - o, "%s%s", i ? "." : "", cc->meta_data.path_in_schema[i]);
    if (n < 0) break;
    o += (size_t)n;
  }
}

static const hs_pq_statistics *chunk_stats(const hs_pq_column_chunk *cc) {
  return cc->has_meta_data && cc->meta_data.has_statistics ? &cc->meta_data.statistics : NULL;
}

static void chunk_minmax(const hs_pq_statistics *s, const hs_pq_bytes **min,
                         const hs_pq_bytes **max, bool *legacy) {
  *min = *max = NULL;
  *legacy = false;
  if (s == NULL) return;
  if (s->has_min_value) *min = &s->min_value;
  if (s->has_max_value) *max = &s->max_value;
  if (*min == NULL && *max == NULL) {
    if (s->has_min) *min = &s->min;
    if (s->has_max) *max = &s->max;
    *legacy = *min || *max;
  }
}

static void describe_chunk_json(describe_ctx *c, const hs_pq_column_chunk *cc,
                                const hs_pq_schema_element *se) {
  char path[1024];
  join_path(cc, path, sizeof path);
  put(c, "{\"path\": ");
  put_str(c, path);
  if (cc->file_path) {
    put(c, ", \"file_path\": ");
    put_str(c, cc->file_path);
  }
  PUTF(c, ", \"is_encrypted\": %s", cc->is_encrypted ? "true" : "false");
  if (cc->has_meta_data) {
    const hs_pq_column_meta *cm = &cc->meta_data;
    PUTF(c, ", \"physical_type\": \"%s\", \"codec\": \"%s\", \"encodings\": [",
         hs_pq_type_name(cm->type), hs_pq_codec_name(cm->codec));
    for (uint32_t i = 0; i < cm->n_encodings; i++)
      PUTF(c, "%s\"%s\"", i ? ", " : "", hs_pq_encoding_name(cm->encodings[i]));
    PUTF(c,
         "], \"num_values\": %" PRId64 ", \"compressed_size\": %" PRId64
         ", \"uncompressed_size\": %" PRId64 ", \"data_page_offset\": %" PRId64,
         cm->num_values, cm->total_compressed_size, cm->total_uncompressed_size,
         cm->data_page_offset);
    if (cm->has_dictionary_page_offset)
      PUTF(c, ", \"dictionary_page_offset\": %" PRId64, cm->dictionary_page_offset);
    const hs_pq_statistics *s = chunk_stats(cc);
    if (s) {
      put(c, ", \"statistics\": {");
      const char *sep = "";
      if (s->has_null_count) {
        PUTF(c, "\"null_count\": %" PRId64, s->null_count);
        sep = ", ";
      }
      if (s->has_distinct_count) {
        PUTF(c, "%s\"distinct_count\": %" PRId64, sep, s->distinct_count);
        sep = ", ";
      }
      const hs_pq_bytes *mn, *mx;
      bool legacy;
      chunk_minmax(s, &mn, &mx, &legacy);
      if (mn) {
        PUTF(c, "%s\"min\": ", sep);
        put_value(c, se, cm->type, *mn);
        sep = ", ";
      }
      if (mx) {
        PUTF(c, "%s\"max\": ", sep);
        put_value(c, se, cm->type, *mx);
        sep = ", ";
      }
      if (legacy) PUTF(c, "%s\"legacy_min_max\": true", sep);
      put(c, "}");
    }
    if (cm->has_bloom_filter_offset)
      PUTF(c, ", \"bloom_filter_offset\": %" PRId64, cm->bloom_filter_offset);
    if (cm->n_key_value_metadata) {
      put(c, ", \"key_value_metadata\": [");
      for (uint32_t i = 0; i < cm->n_key_value_metadata; i++) {
        const hs_pq_key_value *kv = &cm->key_value_metadata[i];
        put(c, i ? ", {\"key\": " : "{\"key\": ");
        put_str(c, kv->key);
        put(c, ", \"value\": ");
        if (kv->has_value)
          put_quoted(c, kv->value.data, kv->value.len, 0);
        else
          put(c, "null");
        put(c, "}");
      }
      put(c, "]");
    }
  }
  PUTF(c, ", \"has_column_index\": %s, \"has_offset_index\": %s}",
       cc->has_column_index ? "true" : "false", cc->has_offset_index ? "true" : "false");
}

/* Text mode: one row of cells per chunk, padded to column widths. */
#define TEXT_COLS 10
static const char *const k_text_heads[TEXT_COLS] = {
    "column",     "type",         "codec", "encodings", "values",
    "compressed", "uncompressed", "nulls", "min / max", "index"};

static void text_cell(describe_ctx *c, char *cell, size_t cap, const char *fmt, ...)
    HS_PRINTF(4, 5);
static void text_cell(describe_ctx *c, char *cell, size_t cap, const char *fmt, ...) {
  (void)c;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cell, cap, fmt, ap);
  va_end(ap);
}

/* Render a value into a text cell via a scratch describe_ctx. */
static void text_value(const hs_pq_schema_element *se, hs_pq_type type, const hs_pq_bytes *v,
                       char *out, size_t cap) {
  describe_ctx tmp = {0};
  hs_buf_init(&tmp.out);
  if (v)
    put_value(&tmp, se, type, *v);
  else
    put(&tmp, "-");
  snprintf(out, cap, "%.*s", (int)tmp.out.len, tmp.out.data ? (const char *)tmp.out.data : "");
  hs_buf_free(&tmp.out);
}

static void describe_row_group_text(describe_ctx *c, const hs_pq_row_group *rg) {
  enum { CELL = 192 };
  uint32_t n = rg->n_columns;
  char(*cells)[TEXT_COLS][CELL] = hs_calloc((size_t)n + 1, sizeof *cells);
  if (cells == NULL) {
    c->oom = true;
    return;
  }
  size_t width[TEXT_COLS];
  for (int k = 0; k < TEXT_COLS; k++) {
    snprintf(cells[0][k], CELL, "%s", k_text_heads[k]);
    width[k] = strlen(k_text_heads[k]);
  }
  for (uint32_t i = 0; i < n; i++) {
    const hs_pq_column_chunk *cc = &rg->columns[i];
    char(*row)[CELL] = cells[i + 1];
    join_path(cc, row[0], CELL);
    const hs_pq_schema_element *se = i < c->n_leaves ? &c->md->schema[c->leaves[i]] : NULL;
    if (cc->has_meta_data) {
      const hs_pq_column_meta *cm = &cc->meta_data;
      char logical[64] = "";
      if (se) logical_name(se, logical, sizeof logical);
      text_cell(c, row[1], CELL, "%s%s%s", hs_pq_type_name(cm->type), logical[0] ? " " : "",
                logical);
      text_cell(c, row[2], CELL, "%s", hs_pq_codec_name(cm->codec));
      size_t o = 0;
      row[3][0] = 0;
      for (uint32_t e = 0; e < cm->n_encodings && o + 1 < CELL; e++) {
        int w = snprintf(row[3] + o, CELL - o, "%s%s", e ? "," : "",
                         hs_pq_encoding_name(cm->encodings[e]));
        if (w < 0) break;
        o += (size_t)w;
      }
      text_cell(c, row[4], CELL, "%" PRId64, cm->num_values);
      text_cell(c, row[5], CELL, "%" PRId64, cm->total_compressed_size);
      text_cell(c, row[6], CELL, "%" PRId64, cm->total_uncompressed_size);
      const hs_pq_statistics *s = chunk_stats(cc);
      if (s && s->has_null_count)
        text_cell(c, row[7], CELL, "%" PRId64, s->null_count);
      else
        text_cell(c, row[7], CELL, "-");
      const hs_pq_bytes *mn, *mx;
      bool legacy;
      chunk_minmax(s, &mn, &mx, &legacy);
      char a[CELL / 2 - 4], b[CELL / 2 - 4];
      text_value(se, cm->type, mn, a, sizeof a);
      text_value(se, cm->type, mx, b, sizeof b);
      text_cell(c, row[8], CELL, "%s / %s%s", a, b, legacy ? " (legacy)" : "");
    } else {
      for (int k = 1; k < 9; k++) text_cell(c, row[k], CELL, "-");
    }
    text_cell(c, row[9], CELL, "%s%s", cc->has_column_index ? "C" : "-",
              cc->has_offset_index ? "O" : "-");
    for (int k = 0; k < TEXT_COLS; k++) {
      size_t l = strlen(row[k]);
      if (l > width[k]) width[k] = l;
    }
  }
  for (uint32_t i = 0; i <= n; i++) {
    put(c, "    ");
    for (int k = 0; k < TEXT_COLS; k++) {
      bool right = k >= 4 && k <= 7;
      int w = (int)width[k];
      if (k + 1 == TEXT_COLS)
        put(c, cells[i][k]); /* no trailing padding */
      else if (right)
        PUTF(c, "%*s", w, cells[i][k]);
      else
        PUTF(c, "%-*s", w, cells[i][k]);
      put(c, k + 1 < TEXT_COLS ? "  " : "\n");
    }
  }
  hs_free(cells);
}

/* ---------------------------------------------------------------- main */

static void describe_kv(describe_ctx *c, const hs_pq_key_value *kvs, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    const hs_pq_key_value *kv = &kvs[i];
    if (c->json) {
      put(c, i ? ", {\"key\": " : "{\"key\": ");
      put_str(c, kv->key);
      put(c, ", \"value\": ");
      if (kv->has_value)
        put_quoted(c, kv->value.data, kv->value.len, 0);
      else
        put(c, "null");
      put(c, "}");
    } else {
      put(c, "  ");
      put_quoted(c, (const uint8_t *)kv->key, strlen(kv->key), DESCRIBE_TEXT_VALUE_MAX);
      put(c, " = ");
      if (kv->has_value) {
        put_quoted(c, kv->value.data, kv->value.len, 80);
        if (kv->value.len > 80) PUTF(c, " (%u bytes)", kv->value.len);
      } else {
        put(c, "(no value)");
      }
      put(c, "\n");
    }
  }
}

static void describe_file(describe_ctx *c, const char *path) {
  const hs_pq_file_metadata *md = c->md;
  /* Schema first: it also numbers the leaves for the column chunks. */
  hs_buf schema_text = c->out;
  hs_buf_init(&c->out);
  uint32_t idx = 0;
  describe_schema(c, &idx, 0);
  hs_buf schema_part = c->out;
  c->out = schema_text;

  if (c->json) {
    put(c, "{\"file\": ");
    put_str(c, path);
    PUTF(c, ", \"version\": %d, \"num_rows\": %" PRId64 ", \"created_by\": ", md->version,
         md->num_rows);
    put_str(c, md->created_by);
    PUTF(c, ", \"encrypted_columns_plaintext_footer\": %s",
         md->has_encryption_algorithm ? "true" : "false");
    put(c, ", \"schema\": ");
    if (schema_part.len)
      putn(c, schema_part.data, schema_part.len);
    else
      put(c, "null");
    put(c, ", \"key_value_metadata\": [");
    describe_kv(c, md->key_value_metadata, md->n_key_value_metadata);
    put(c, "], \"row_groups\": [");
    for (uint32_t g = 0; g < md->n_row_groups; g++) {
      const hs_pq_row_group *rg = &md->row_groups[g];
      PUTF(c, "%s{\"index\": %u, \"num_rows\": %" PRId64 ", \"total_byte_size\": %" PRId64,
           g ? ", " : "", g, rg->num_rows, rg->total_byte_size);
      if (rg->has_total_compressed_size)
        PUTF(c, ", \"total_compressed_size\": %" PRId64, rg->total_compressed_size);
      if (rg->has_file_offset) PUTF(c, ", \"file_offset\": %" PRId64, rg->file_offset);
      put(c, ", \"columns\": [");
      for (uint32_t i = 0; i < rg->n_columns; i++) {
        if (i) put(c, ", ");
        const hs_pq_schema_element *se = i < c->n_leaves ? &md->schema[c->leaves[i]] : NULL;
        describe_chunk_json(c, &rg->columns[i], se);
      }
      put(c, "]}");
    }
    put(c, "]}\n");
  } else {
    PUTF(c, "file:        %s\n", path);
    PUTF(c, "created_by:  %s\n", md->created_by ? md->created_by : "-");
    PUTF(c, "version:     %d\nrows:        %" PRId64 "\nrow groups:  %u\n", md->version,
         md->num_rows, md->n_row_groups);
    if (md->has_encryption_algorithm) put(c, "encryption:  encrypted columns, plaintext footer\n");
    put(c, "schema:\n");
    if (schema_part.len) putn(c, schema_part.data, schema_part.len);
    if (md->n_key_value_metadata) {
      put(c, "key-value metadata:\n");
      describe_kv(c, md->key_value_metadata, md->n_key_value_metadata);
    }
    for (uint32_t g = 0; g < md->n_row_groups; g++) {
      const hs_pq_row_group *rg = &md->row_groups[g];
      PUTF(c, "row group %u: %" PRId64 " rows, %" PRId64 " bytes", g, rg->num_rows,
           rg->total_byte_size);
      if (rg->has_total_compressed_size)
        PUTF(c, " (%" PRId64 " compressed)", rg->total_compressed_size);
      put(c, "\n");
      describe_row_group_text(c, rg);
    }
    if (md->n_row_groups) put(c, "index: C = column index, O = offset index\n");
  }
  hs_buf_free(&schema_part);
}

hs_status hs_parquet_inspect(const char *path, int json, char **out, hs_error *err) {
  if (out == NULL || path == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "hs_parquet_inspect: NULL argument");
  *out = NULL;
  hs_source *src = NULL;
  hs_status st = hs_source_open_file(path, &src, err);
  if (st != HS_OK) return st;
  hs_arena arena;
  hs_arena_init(&arena);
  hs_pq_file_metadata md;
  st = hs_pq_footer_read(src, &arena, &md, err);
  hs_source_unref(src);
  if (st != HS_OK) {
    hs_arena_reset(&arena);
    return st;
  }
  describe_ctx c = {0};
  hs_buf_init(&c.out);
  c.json = json != 0;
  c.md = &md;
  c.leaves = hs_calloc(md.n_schema ? md.n_schema : 1, sizeof *c.leaves);
  if (c.leaves == NULL)
    c.oom = true;
  else
    describe_file(&c, path);
  if (!c.oom && !hs_buf_append_byte(&c.out, 0)) c.oom = true;
  hs_free(c.leaves);
  hs_arena_reset(&arena);
  if (c.oom) {
    hs_buf_free(&c.out);
    return hs_error_set(err, HS_ERR_NOMEM, "%s: out of memory describing the file", path);
  }
  *out = (char *)hs_buf_detach(&c.out);
  return HS_OK;
}
