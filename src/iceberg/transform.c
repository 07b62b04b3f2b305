/*
 * transform.c — partition transforms (spec "Partition Transforms", "Bucket
 * Transform Details", "Truncate Transform Details"), the 32-bit value hash
 * of appendix B, and the binary single-value serialization of appendix D
 * used for manifest bounds.
 *
 * Values are hs_iceberg_value: integers of every width and all temporal
 * types in i64 (in the type's own unit), decimals as a 128-bit unscaled
 * value split in two words, bytes borrowed. Every arithmetic step that a
 * hostile value could overflow is checked and reported as
 * HS_ERR_INVALID_ARG rather than wrapped.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "iceberg.h"

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

static const int64_t US_PER_DAY = 86400000000LL;
static const int64_t US_PER_HOUR = 3600000000LL;

/* ------------------------------------------------------------- strings */

hs_status hs_iceberg_transform_parse(const char *s, bool keep_unknown, hs_arena *arena,
                                     hs_iceberg_transform *out, hs_error *err) {
  static const struct {
    const char *name;
    hs_iceberg_transform_kind kind;
  } plain[] = {{"identity", HS_ICE_T_IDENTITY}, {"year", HS_ICE_T_YEAR}, {"month", HS_ICE_T_MONTH},
               {"day", HS_ICE_T_DAY},           {"hour", HS_ICE_T_HOUR}, {"void", HS_ICE_T_VOID}};
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
    if (strcmp(s, plain[i].name) == 0) {
      out->kind = plain[i].kind;
      return HS_OK;
    }
  }
  const char *p = NULL;
  if (strncmp(s, "bucket[", 7) == 0) {
    out->kind = HS_ICE_T_BUCKET;
    p = s + 7;
  } else if (strncmp(s, "truncate[", 9) == 0) {
    out->kind = HS_ICE_T_TRUNCATE;
    p = s + 9;
  }
  if (p != NULL) {
    int64_t v = 0;
    const char *q = p;
    while (*q >= '0' && *q <= '9' && v <= INT32_MAX) v = v * 10 + (*q++ - '0');
    if (q > p && *p != '0' && v >= 1 && v <= INT32_MAX && q[0] == ']' && q[1] == '\0') {
      out->param = (int32_t)v;
      return HS_OK;
    }
  }
  if (!keep_unknown) return hs_error_set(err, HS_ERR_SCHEMA, "unknown transform '%.80s'", s);
  out->kind = HS_ICE_T_UNKNOWN;
  out->param = 0;
  out->text = hs_arena_strndup(arena, s, strlen(s));
  return out->text != NULL ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "out of memory (transform)");
}

bool hs_iceberg_transform_format(const hs_iceberg_transform *t, hs_buf *out) {
  switch (t->kind) {
  case HS_ICE_T_IDENTITY: return hs_buf_printf(out, "identity");
  case HS_ICE_T_BUCKET: return hs_buf_printf(out, "bucket[%d]", t->param);
  case HS_ICE_T_TRUNCATE: return hs_buf_printf(out, "truncate[%d]", t->param);
  case HS_ICE_T_YEAR: return hs_buf_printf(out, "year");
  case HS_ICE_T_MONTH: return hs_buf_printf(out, "month");
  case HS_ICE_T_DAY: return hs_buf_printf(out, "day");
  case HS_ICE_T_HOUR: return hs_buf_printf(out, "hour");
  case HS_ICE_T_VOID: return hs_buf_printf(out, "void");
  default: return hs_buf_printf(out, "%s", t->text != NULL ? t->text : "unknown");
  }
}

/* ---------------------------------------------------------- result type */

static bool is_timestamp(hs_iceberg_type_id id) {
  return id == HS_ICE_TIMESTAMP || id == HS_ICE_TIMESTAMPTZ || id == HS_ICE_TIMESTAMP_NS ||
         id == HS_ICE_TIMESTAMPTZ_NS;
}
static bool is_nanos(hs_iceberg_type_id id) {
  return id == HS_ICE_TIMESTAMP_NS || id == HS_ICE_TIMESTAMPTZ_NS;
}

hs_status hs_iceberg_transform_result_type(const hs_iceberg_transform *t,
                                           const hs_iceberg_type *source, hs_iceberg_type *out,
                                           hs_error *err) {
  hs_iceberg_type_id s = source->id;
  bool ok;
  memset(out, 0, sizeof *out);
  out->id = HS_ICE_INT;
  switch (t->kind) {
  case HS_ICE_T_IDENTITY:
    ok = s < HS_ICE_UNKNOWN;
    *out = *source;
    break;
  case HS_ICE_T_VOID:
    ok = true;
    *out = *source;
    break;
  case HS_ICE_T_BUCKET:
    ok = s == HS_ICE_INT || s == HS_ICE_LONG || s == HS_ICE_DECIMAL || s == HS_ICE_DATE ||
         s == HS_ICE_TIME || is_timestamp(s) || s == HS_ICE_STRING || s == HS_ICE_UUID ||
         s == HS_ICE_FIXED || s == HS_ICE_BINARY;
    break;
  case HS_ICE_T_TRUNCATE:
    ok = s == HS_ICE_INT || s == HS_ICE_LONG || s == HS_ICE_DECIMAL || s == HS_ICE_STRING ||
         s == HS_ICE_BINARY;
    *out = *source;
    break;
  case HS_ICE_T_YEAR:
  case HS_ICE_T_MONTH: ok = s == HS_ICE_DATE || is_timestamp(s); break;
  case HS_ICE_T_DAY:
    ok = s == HS_ICE_DATE || is_timestamp(s);
    out->id = HS_ICE_DATE;
    break;
  case HS_ICE_T_HOUR: ok = is_timestamp(s); break;
  default:
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "transform '%.80s' is unknown",
                        t->text != NULL ? t->text : "?");
  }
  if (!ok) {
    hs_buf b;
    hs_buf_init(&b);
    hs_iceberg_transform_format(t, &b);
    hs_buf_append_byte(&b, 0);
    hs_error_set(err, HS_ERR_SCHEMA, "transform %s cannot apply to type %s",
                 b.data != NULL ? (const char *)b.data : "?", hs_iceberg_type_name(s));
    hs_buf_free(&b);
    return HS_ERR_SCHEMA;
  }
  return HS_OK;
}

/* ----------------------------------------------------------------- hash */

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static i128 dec_get(const hs_iceberg_value *v) {
  return (i128)(((u128)(uint64_t)v->dec_hi << 64) | v->dec_lo);
}
static void dec_put(hs_iceberg_value *v, i128 x) {
  v->dec_hi = (int64_t)(x >> 64);
  v->dec_lo = (uint64_t)x;
}

/* Minimal two's-complement big-endian bytes of x (1..16): as Java's
 * BigInteger.toByteArray, which the reference implementation hashes. */
static size_t dec_min_bytes(i128 x, uint8_t out[16]) {
  uint8_t full[16];
  for (int i = 0; i < 16; i++) full[15 - i] = (uint8_t)(x >> (8 * i));
  size_t skip = 0;
  /* Drop a leading byte while it is pure sign extension of the next one. */
  while (skip < 15 && ((full[skip] == 0x00 && !(full[skip + 1] & 0x80)) ||
                       (full[skip] == 0xff && (full[skip + 1] & 0x80))))
    skip++;
  memcpy(out, full + skip, 16 - skip);
  return 16 - skip;
}

static uint32_t hash_long(int64_t v) {
  uint8_t b[8];
  hs_store_u64le(b, (uint64_t)v);
  return hs_murmur3_x86_32(b, 8, 0);
}

hs_status hs_iceberg_value_hash(const hs_iceberg_type *type, const hs_iceberg_value *v,
                                int32_t *hash_out, hs_error *err) {
  uint32_t h;
  switch (type->id) {
  case HS_ICE_BOOLEAN: h = hash_long(v->b ? 1 : 0); break;
  case HS_ICE_INT:
  case HS_ICE_LONG:
  case HS_ICE_DATE:
  case HS_ICE_TIME:
  case HS_ICE_TIMESTAMP:
  case HS_ICE_TIMESTAMPTZ: h = hash_long(v->i64); break;
  case HS_ICE_TIMESTAMP_NS:
  case HS_ICE_TIMESTAMPTZ_NS: h = hash_long(floor_div(v->i64, 1000)); break;
  case HS_ICE_FLOAT:
  case HS_ICE_DOUBLE: {
    double d = type->id == HS_ICE_FLOAT ? (double)(float)v->f64 : v->f64;
    uint64_t bits;
    if (isnan(d)) {
      bits = 0x7ff8000000000000ULL;
    } else {
      if (d == 0.0) d = 0.0; /* -0.0 hashes as 0.0 */
      memcpy(&bits, &d, 8);
    }
    h = hash_long((int64_t)bits);
    break;
  }
  case HS_ICE_DECIMAL: {
    uint8_t b[16];
    size_t n = dec_min_bytes(dec_get(v), b);
    h = hs_murmur3_x86_32(b, n, 0);
    break;
  }
  case HS_ICE_UUID:
    if (v->len != 16)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "uuid value of %zu bytes", v->len);
    h = hs_murmur3_x86_32(v->bytes, 16, 0);
    break;
  case HS_ICE_STRING:
  case HS_ICE_BINARY:
  case HS_ICE_FIXED:
    h = hs_murmur3_x86_32(v->len ? v->bytes : (const uint8_t *)"", v->len, 0);
    break;
  default:
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "no 32-bit hash for type %s",
                        hs_iceberg_type_name(type->id));
  }
  *hash_out = (int32_t)h;
  return HS_OK;
}

/* ---------------------------------------------------------------- apply */

static hs_status out_int(int64_t x, hs_iceberg_value *out, hs_error *err) {
  if (x < INT32_MIN || x > INT32_MAX)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "transform result %lld out of int range",
                        (long long)x);
  out->i64 = x;
  return HS_OK;
}

/* Days and (for hour) hours since the epoch of a temporal value. */
static hs_status temporal(hs_iceberg_type_id s, int64_t x, int64_t *days, int64_t *hours) {
  if (s == HS_ICE_DATE) {
    *days = x;
    *hours = 0;
    return HS_OK;
  }
  int64_t us = is_nanos(s) ? floor_div(x, 1000) : x;
  *days = floor_div(us, US_PER_DAY);
  *hours = floor_div(us, US_PER_HOUR);
  return HS_OK;
}

static hs_status truncate_apply(int32_t w, const hs_iceberg_type *source, const hs_iceberg_value *v,
                                hs_iceberg_value *out, hs_error *err) {
  switch (source->id) {
  case HS_ICE_INT:
  case HS_ICE_LONG: {
    int64_t rem = ((v->i64 % w) + w) % w, r;
    if (__builtin_sub_overflow(v->i64, rem, &r) ||
        (source->id == HS_ICE_INT && (r < INT32_MIN || r > INT32_MAX)))
      return hs_error_set(err, HS_ERR_INVALID_ARG, "truncate[%d] of %lld overflows", w,
                          (long long)v->i64);
    out->i64 = r;
    return HS_OK;
  }
  case HS_ICE_DECIMAL: {
    i128 x = dec_get(v), rem = ((x % w) + w) % w;
    /* |x| < 10^38 < 2^127 - 2^31 for every valid decimal, so x - rem fits. */
    const i128 limit = (i128)1000000000000000000LL * 100000000000000000LL * 1000;
    if (x <= -limit || x >= limit)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "decimal value exceeds 38 digits");
    dec_put(out, x - rem);
    return HS_OK;
  }
  case HS_ICE_STRING: {
    /* w code points: count UTF-8 lead bytes (not 10xxxxxx). */
    size_t i = 0, points = 0;
    while (i < v->len) {
      if ((v->bytes[i] & 0xC0) != 0x80) {
        if (points == (size_t)w) break;
        points++;
      }
      i++;
    }
    out->bytes = v->bytes;
    out->len = i;
    return HS_OK;
  }
  case HS_ICE_BINARY:
    out->bytes = v->bytes;
    out->len = v->len < (size_t)w ? v->len : (size_t)w;
    return HS_OK;
  default: return HS_ERR_SCHEMA; /* excluded by result_type */
  }
}

hs_status hs_iceberg_transform_apply(const hs_iceberg_transform *t, const hs_iceberg_type *source,
                                     const hs_iceberg_value *v, hs_iceberg_value *out,
                                     hs_error *err) {
  hs_iceberg_type rt;
  hs_status st = hs_iceberg_transform_result_type(t, source, &rt, err);
  if (st != HS_OK) return st;
  memset(out, 0, sizeof *out);
  if (v->is_null || t->kind == HS_ICE_T_VOID) {
    out->is_null = true;
    return HS_OK;
  }
  if (source->id == HS_ICE_DATE && (v->i64 < INT32_MIN || v->i64 > INT32_MAX))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "date %lld out of range", (long long)v->i64);
  int64_t days, hours, year;
  int month, mday;
  switch (t->kind) {
  case HS_ICE_T_IDENTITY: *out = *v; return HS_OK;
  case HS_ICE_T_BUCKET: {
    int32_t h;
    if ((st = hs_iceberg_value_hash(source, v, &h, err)) != HS_OK) return st;
    out->i64 = (int64_t)(((uint32_t)h & 0x7fffffffu) % (uint32_t)t->param);
    return HS_OK;
  }
  case HS_ICE_T_TRUNCATE: return truncate_apply(t->param, source, v, out, err);
  case HS_ICE_T_YEAR:
  case HS_ICE_T_MONTH:
    temporal(source->id, v->i64, &days, &hours);
    hs_civil_from_days(days, &year, &month, &mday);
    return out_int(t->kind == HS_ICE_T_YEAR ? year - 1970 : (year - 1970) * 12 + month - 1, out,
                   err);
  case HS_ICE_T_DAY: temporal(source->id, v->i64, &days, &hours); return out_int(days, out, err);
  case HS_ICE_T_HOUR: temporal(source->id, v->i64, &days, &hours); return out_int(hours, out, err);
  default: return hs_error_set(err, HS_ERR_UNSUPPORTED, "cannot apply this transform");
  }
}

/* ------------------------------------------------- single-value binary */

hs_status hs_iceberg_value_to_bytes(const hs_iceberg_type *type, const hs_iceberg_value *v,
                                    hs_buf *out, hs_error *err) {
  uint8_t b[16];
  size_t n;
  switch (type->id) {
  case HS_ICE_BOOLEAN:
    b[0] = v->b ? 1 : 0;
    n = 1;
    break;
  case HS_ICE_INT:
  case HS_ICE_DATE:
    if (v->i64 < INT32_MIN || v->i64 > INT32_MAX)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "%s value %lld out of range",
                          hs_iceberg_type_name(type->id), (long long)v->i64);
    hs_store_u32le(b, (uint32_t)(int32_t)v->i64);
    n = 4;
    break;
  case HS_ICE_LONG:
  case HS_ICE_TIME:
  case HS_ICE_TIMESTAMP:
  case HS_ICE_TIMESTAMPTZ:
  case HS_ICE_TIMESTAMP_NS:
  case HS_ICE_TIMESTAMPTZ_NS:
    hs_store_u64le(b, (uint64_t)v->i64);
    n = 8;
    break;
  case HS_ICE_FLOAT: {
    float f = (float)v->f64;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    hs_store_u32le(b, bits);
    n = 4;
    break;
  }
  case HS_ICE_DOUBLE: {
    uint64_t bits;
    memcpy(&bits, &v->f64, 8);
    hs_store_u64le(b, bits);
    n = 8;
    break;
  }
  case HS_ICE_DECIMAL: n = dec_min_bytes(dec_get(v), b); break;
  case HS_ICE_UUID:
  case HS_ICE_FIXED: {
    size_t want = type->id == HS_ICE_UUID ? 16 : (size_t)type->length;
    if (v->len != want)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "%s value of %zu bytes, want %zu",
                          hs_iceberg_type_name(type->id), v->len, want);
    __attribute__((fallthrough));
  }
  case HS_ICE_STRING:
  case HS_ICE_BINARY:
    if (v->len > 0 && !hs_buf_append(out, v->bytes, v->len))
      return hs_error_set(err, HS_ERR_NOMEM, "out of memory (bound)");
    return HS_OK;
  default:
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "no binary single-value form for type %s",
                        hs_iceberg_type_name(type->id));
  }
  return hs_buf_append(out, b, n) ? HS_OK
                                  : hs_error_set(err, HS_ERR_NOMEM, "out of memory (bound)");
}

static hs_status bad_len(const hs_iceberg_type *type, size_t len, const char *want, hs_error *err) {
  return hs_error_set(err, HS_ERR_CORRUPT, "%s bound of %zu bytes (want %s)",
                      hs_iceberg_type_name(type->id), len, want);
}

hs_status hs_iceberg_value_from_bytes(const hs_iceberg_type *type, const uint8_t *p, size_t len,
                                      hs_iceberg_value *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  switch (type->id) {
  case HS_ICE_BOOLEAN:
    if (len != 1) return bad_len(type, len, "1", err);
    out->b = p[0] != 0;
    return HS_OK;
  case HS_ICE_INT:
  case HS_ICE_DATE:
    if (len != 4) return bad_len(type, len, "4", err);
    out->i64 = (int32_t)hs_load_u32le(p);
    return HS_OK;
  case HS_ICE_LONG:
  case HS_ICE_TIME:
  case HS_ICE_TIMESTAMP:
  case HS_ICE_TIMESTAMPTZ:
  case HS_ICE_TIMESTAMP_NS:
  case HS_ICE_TIMESTAMPTZ_NS:
    if (len == 4 && type->id != HS_ICE_TIME) {
      /* Written before a promotion: int -> long, date -> timestamp. */
      int64_t x = (int32_t)hs_load_u32le(p);
      if (type->id != HS_ICE_LONG) x *= is_nanos(type->id) ? US_PER_DAY * 1000 : US_PER_DAY;
      out->i64 = x; /* |days| < 2^31, so days * 8.64e13 fits in 63 bits */
      return HS_OK;
    }
    if (len != 8) return bad_len(type, len, type->id == HS_ICE_TIME ? "8" : "4 or 8", err);
    out->i64 = (int64_t)hs_load_u64le(p);
    return HS_OK;
  case HS_ICE_FLOAT:
  case HS_ICE_DOUBLE:
    if (len == 4) { /* a float, possibly promoted to double since */
      uint32_t bits = hs_load_u32le(p);
      float f;
      memcpy(&f, &bits, 4);
      out->f64 = f;
      return HS_OK;
    }
    if (len != 8 || type->id == HS_ICE_FLOAT) return bad_len(type, len, "4 or 8", err);
    uint64_t bits = hs_load_u64le(p);
    memcpy(&out->f64, &bits, 8);
    return HS_OK;
  case HS_ICE_DECIMAL: {
    if (len < 1 || len > 16) return bad_len(type, len, "1 to 16", err);
    i128 x = (p[0] & 0x80) ? -1 : 0;
    for (size_t i = 0; i < len; i++) x = (i128)(((u128)x << 8) | p[i]);
    dec_put(out, x);
    return HS_OK;
  }
  case HS_ICE_UUID:
    if (len != 16) return bad_len(type, len, "16", err);
    break;
  case HS_ICE_FIXED:
    if (len != (size_t)type->length) return bad_len(type, len, "the fixed length", err);
    break;
  case HS_ICE_STRING:
  case HS_ICE_BINARY: break;
  default:
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "no binary single-value form for type %s",
                        hs_iceberg_type_name(type->id));
  }
  out->bytes = p;
  out->len = len;
  return HS_OK;
}

/* Doubles mapped to unsigned integers in Iceberg's total order:
 * -NaN < -inf < ... < -0 < 0 < ... < inf < NaN. */
static uint64_t float_order_key(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return (b >> 63) ? ~b : (b | ((uint64_t)1 << 63));
}

int hs_iceberg_value_cmp(const hs_iceberg_type *t, const hs_iceberg_value *a,
                         const hs_iceberg_value *b) {
  switch (t->id) {
  case HS_ICE_BOOLEAN: return (int)a->b - (int)b->b;
  case HS_ICE_FLOAT:
  case HS_ICE_DOUBLE: {
    uint64_t x = float_order_key(a->f64), y = float_order_key(b->f64);
    return x < y ? -1 : x > y;
  }
  case HS_ICE_DECIMAL:
    if (a->dec_hi != b->dec_hi) return a->dec_hi < b->dec_hi ? -1 : 1;
    return a->dec_lo < b->dec_lo ? -1 : a->dec_lo > b->dec_lo;
  case HS_ICE_STRING:
  case HS_ICE_BINARY:
  case HS_ICE_FIXED:
  case HS_ICE_UUID: {
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->bytes, b->bytes, n) : 0;
    if (c != 0) return c;
    return a->len < b->len ? -1 : a->len > b->len;
  }
  default: return a->i64 < b->i64 ? -1 : a->i64 > b->i64;
  }
}
