/*
 * fn_string.c — text functions (PostgreSQL's, by characters of UTF-8):
 * || (text with text, and text with any other scalar through its text
 * form), concat, concat_ws, lower, upper, length / char_length,
 * octet_length, substr / substring, strpos / position, replace,
 * btrim / ltrim / rtrim / trim, left, right, lpad, rpad, starts_with,
 * reverse, split_part, repeat, ascii, chr; and LIKE matching
 * (hs_sql_like) for the evaluator's HS_SX_LIKE.
 *
 * Results that are a piece of an argument (substr, left, right, trims,
 * split_part) point into the argument's bytes and hold its blobs; the
 * others write into one byte blob sized for the whole vector. Case mapping
 * covers ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic (the
 * mappings that keep a character's UTF-8 length); other characters are
 * left as they are.
 *
 * LIKE is the two-pointer greedy matcher: on a mismatch it retries from
 * the last '%' one character further, so time is O(|s| * |p|) at worst,
 * never exponential.
 */
#include <string.h>

#include "fn_internal.h"

/* Results longer than this are "requested length too large". */
#define STR_MAX ((size_t)1 << 30)

/* ---------------------------------------------------------------- UTF-8 */

static inline size_t u8len(const char *s, size_t i, size_t n) {
  uint8_t c = (uint8_t)s[i];
  size_t l = c < 0x80 ? 1 : c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF8 ? 4 : 1;
  return i + l <= n ? l : n - i;
}

static inline uint32_t u8dec(const char *s, size_t i, size_t l) {
  const uint8_t *p = (const uint8_t *)s + i;
  switch (l) {
  case 2: return (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
  case 3: return (uint32_t)(p[0] & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
  case 4:
    return (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
           (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
  default: return p[0];
  }
}

static inline size_t u8enc(uint32_t c, char *o) {
  if (c < 0x80) {
    o[0] = (char)c;
    return 1;
  }
  if (c < 0x800) {
    o[0] = (char)(0xC0 | c >> 6);
    o[1] = (char)(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    o[0] = (char)(0xE0 | c >> 12);
    o[1] = (char)(0x80 | (c >> 6 & 0x3F));
    o[2] = (char)(0x80 | (c & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | c >> 18);
  o[1] = (char)(0x80 | (c >> 12 & 0x3F));
  o[2] = (char)(0x80 | (c >> 6 & 0x3F));
  o[3] = (char)(0x80 | (c & 0x3F));
  return 4;
}

static inline bool is_ascii(const char *s, size_t n) {
  size_t i = 0;
  uint64_t acc = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    acc |= w;
  }
  for (; i < n; i++) acc |= (uint8_t)s[i];
  return (acc & 0x8080808080808080ull) == 0;
}

/* Characters in s[0..n). */
static inline int64_t u8count(const char *s, size_t n) {
  int64_t k = 0;
  for (size_t i = 0; i < n; i++) k += ((uint8_t)s[i] & 0xC0) != 0x80;
  return k;
}

/* Byte offset of character `c` (0-based) in s[0..n), n when past the end. */
static inline size_t u8off(const char *s, size_t n, int64_t c) {
  if (c <= 0) return 0;
  size_t i = 0;
  while (i < n && c > 0) {
    i += u8len(s, i, n);
    c--;
  }
  return i;
}

static uint32_t cp_lower(uint32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x130 || c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F) return c;
    if (c == 0x178) return 0xFF;
    bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_upper) return (c & 1) ? c + 1 : c;
    return (c & 1) ? c : c + 1;
  }
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

static uint32_t cp_upper(uint32_t c) {
  if (c < 0x80) return c >= 'a' && c <= 'z' ? c - 32 : c;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x130 || c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F || c == 0x178) return c;
    bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_upper) return (c & 1) ? c : c - 1;
    return (c & 1) ? c - 1 : c;
  }
  if (c >= 0x3B1 && c <= 0x3CB && c != 0x3C2) return c - 32;
  if (c == 0x3C2) return 0x3A3; /* final sigma */
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}

/* ------------------------------------------------------------- plumbing */

static hs_status hold_refs(hs_sql_vec *out, const hs_sql_vec *in, hs_error *err) {
  hs_sql_blob *const *r = in->n_refs <= HS_SQL_VEC_REFS_INLINE ? in->refs_inline : in->refs_heap;
  for (int32_t k = 0; k < in->n_refs; k++) {
    hs_status st = hs_sql_vec_hold(out, r[k], err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

static inline const hs_sql_str *S(const hs_sql_vec *v) {
  return (const hs_sql_str *)v->data;
}

/* Reserve `bytes` for the output's strings (at least 1). */
static char *reserve(hs_sql_vec *out, size_t bytes, hs_error *err) {
  if (bytes > UINT32_MAX * (size_t)4) {
    hs_error_set(err, HS_ERR_NOMEM, "string result too large");
    return NULL;
  }
  return hs_sql_vec_add_bytes(out, bytes ? bytes : 1, err);
}

#define RESERVE(p, bytes)               \
  char *p = reserve(out, (bytes), err); \
  if (p == NULL) {                      \
    hs_sql_vec_release(out);            \
    return HS_ERR_NOMEM;                \
  }

/* ---------------------------------------------------------------- || */

static size_t total_len(const hs_sql_vec *v, const uint8_t *valid, int64_t n) {
  size_t t = 0;
  const hs_sql_str *s = S(v);
  for (int64_t i = 0; i < n; i++)
    if (valid == NULL || valid[i]) t += s[i].len;
  return t;
}

static hs_status cat_strs(const hs_sql_expr *e, const hs_sql_vec *a, const hs_sql_vec *b, int64_t n,
                          hs_sql_vec *out, hs_error *err) {
  const uint8_t *valid = out->valid;
  size_t total = total_len(a, valid, n) + total_len(b, valid, n);
  if (total > STR_MAX * 4) FAIL("string result too large");
  RESERVE(p, total);
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  const hs_sql_str *x = S(a), *y = S(b);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    if ((size_t)x[i].len + y[i].len > STR_MAX) FAIL("string result too large");
    o[i].ptr = p;
    if (x[i].len) memcpy(p, x[i].ptr, x[i].len);
    if (y[i].len) memcpy(p + x[i].len, y[i].ptr, y[i].len);
    o[i].len = x[i].len + y[i].len;
    p += o[i].len;
  }
  return HS_OK;
}

static hs_status str_cat(KARGS) {
  BEGIN();
  return cat_strs(e, &args[0], &args[1], n, out, err);
}

/* text || anything: the other side's text form */
static hs_status str_cat_any(KARGS) {
  hs_sql_vec t[2];
  memset(t, 0, sizeof t);
  hs_status st = HS_OK;
  for (int k = 0; k < 2 && st == HS_OK; k++) {
    if (args[k].type.id == HS_SQL_TEXT)
      st = hs_sql_vec_share(&t[k], &args[k], err);
    else
      st = hs_sql_cast_vec(&args[k], hs_sql_type_of(HS_SQL_TEXT), hs_sql_epos(e), &t[k], err);
  }
  if (st == HS_OK) st = hs_sql_kernel_begin(t, 2, n, ret, out, err);
  if (st == HS_OK) st = cat_strs(e, &t[0], &t[1], n, out, err);
  hs_sql_vec_release(&t[0]);
  hs_sql_vec_release(&t[1]);
  return st;
}

/* concat(a, b, ...): NULLs are skipped, the result is never NULL.
 * concat_ws(sep, a, ...): NULL when sep is NULL, NULL arguments skipped. */
static hs_status concat_impl(KARGS, bool ws) {
  hs_status st = hs_sql_vec_alloc(out, ret, n, ws && args[0].valid != NULL, err);
  if (st != HS_OK) return st;
  if (ws && args[0].valid != NULL) memcpy(hs_sql_vec_mut_valid(out), args[0].valid, (size_t)n);
  const uint8_t *valid = out->valid;
  int32_t first = ws ? 1 : 0;
  size_t total = 0;
  for (int32_t k = first; k < n_args; k++)
    total += total_len(&args[k], args[k].valid, n) + (ws ? total_len(&args[0], NULL, n) : 0);
  RESERVE(p, total);
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    o[i].ptr = p;
    size_t len = 0;
    bool any = false;
    for (int32_t k = first; k < n_args; k++) {
      if (!hs_sql_vec_valid(&args[k], i)) continue;
      if (ws && any) {
        hs_sql_str sep = S(&args[0])[i];
        if (len + sep.len > STR_MAX) FAIL("string result too large");
        if (sep.len) memcpy(p + len, sep.ptr, sep.len);
        len += sep.len;
      }
      hs_sql_str s = S(&args[k])[i];
      if (len + s.len > STR_MAX) FAIL("string result too large");
      if (s.len) memcpy(p + len, s.ptr, s.len);
      len += s.len;
      any = true;
    }
    o[i].len = (uint32_t)len;
    p += len;
  }
  return HS_OK;
}
static hs_status str_concat(KARGS) {
  return concat_impl(e, args, n_args, n, ret, out, err, false);
}
static hs_status str_concat_ws(KARGS) {
  return concat_impl(e, args, n_args, n, ret, out, err, true);
}

/* ------------------------------------------------------------ case, length */

static hs_status case_map(KARGS, bool up) {
  BEGIN();
  const hs_sql_str *s = S(&args[0]);
  RESERVE(p, total_len(&args[0], valid, n));
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    const char *x = s[i].ptr;
    size_t len = s[i].len;
    o[i].ptr = p;
    o[i].len = (uint32_t)len;
    if (is_ascii(x, len)) {
      if (up)
        for (size_t k = 0; k < len; k++)
          p[k] = (char)(x[k] >= 'a' && x[k] <= 'z' ? x[k] - 32 : x[k]);
      else
        for (size_t k = 0; k < len; k++)
          p[k] = (char)(x[k] >= 'A' && x[k] <= 'Z' ? x[k] + 32 : x[k]);
      p += len;
      continue;
    }
    for (size_t k = 0; k < len;) {
      size_t l = u8len(x, k, len);
      if (l == 2) {
        uint32_t c = u8dec(x, k, l);
        uint32_t m = up ? cp_upper(c) : cp_lower(c);
        if (m >= 0x80 && m < 0x800) {
          u8enc(m, p);
        } else {
          p[0] = x[k], p[1] = x[k + 1];
        }
      } else if (l == 1) {
        char c = x[k];
        *p = (char)(up ? (c >= 'a' && c <= 'z' ? c - 32 : c) : (c >= 'A' && c <= 'Z' ? c + 32 : c));
      } else {
        memcpy(p, x + k, l);
      }
      p += l;
      k += l;
    }
  }
  return HS_OK;
}
static hs_status str_lower(KARGS) {
  return case_map(e, args, n_args, n, ret, out, err, false);
}
static hs_status str_upper(KARGS) {
  return case_map(e, args, n_args, n, ret, out, err, true);
}

static hs_status str_length(KARGS) {
  BEGIN();
  const hs_sql_str *s = S(&args[0]);
  int32_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) o[i] = (int32_t)u8count(s[i].ptr, s[i].len);
  return HS_OK;
}

static hs_status str_octet_length(KARGS) {
  BEGIN();
  const hs_sql_str *s = S(&args[0]);
  int32_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) o[i] = (int32_t)s[i].len;
  return HS_OK;
}

/* --------------------------------------------------------- pieces of text */

/* The characters [from, to) (0-based, clamped) of s as a view. */
static inline hs_sql_str char_range(hs_sql_str s, int64_t from, int64_t to) {
  hs_sql_str r = {s.ptr, 0};
  if (from < 0) from = 0;
  if (to <= from) return r;
  if (is_ascii(s.ptr, s.len)) {
    int64_t len = s.len;
    if (from >= len) return r;
    if (to > len) to = len;
    r.ptr = s.ptr + from;
    r.len = (uint32_t)(to - from);
    return r;
  }
  size_t a = u8off(s.ptr, s.len, from);
  size_t b = a;
  int64_t c = to - from;
  while (b < s.len && c > 0) {
    b += u8len(s.ptr, b, s.len);
    c--;
  }
  r.ptr = s.ptr + a;
  r.len = (uint32_t)(b - a);
  return r;
}

static hs_status view_begin(KARGS) {
  BEGIN();
  hs_status st = hold_refs(out, &args[0], err);
  if (st != HS_OK) hs_sql_vec_release(out);
  return st;
}

#define VIEW_BEGIN()                                             \
  hs_status st_ = view_begin(e, args, n_args, n, ret, out, err); \
  if (st_ != HS_OK) return st_;                                  \
  const uint8_t *valid = out->valid;                             \
  (void)valid;                                                   \
  const hs_sql_str *s = S(&args[0]);                             \
  hs_sql_str *o = hs_sql_vec_mut_data(out)

/* substr(s, from[, count]): PostgreSQL's: characters from..from+count-1
 * (1-based) that exist; count < 0 is an error. */
static hs_status str_substr(KARGS) {
  VIEW_BEGIN();
  const int32_t *f = args[1].data;
  const int32_t *c = n_args > 2 ? args[2].data : NULL;
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    int64_t from = (int64_t)f[i] - 1, to = INT64_MAX;
    if (c != NULL) {
      if (c[i] < 0) FAIL("negative substring length not allowed");
      to = from + c[i];
    }
    o[i] = char_range(s[i], from, to);
  }
  return HS_OK;
}

static hs_status str_left(KARGS) {
  VIEW_BEGIN();
  const int32_t *k = args[1].data;
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    int64_t m = k[i];
    if (m < 0) m = u8count(s[i].ptr, s[i].len) + m;
    o[i] = char_range(s[i], 0, m);
  }
  return HS_OK;
}

static hs_status str_right(KARGS) {
  VIEW_BEGIN();
  const int32_t *k = args[1].data;
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    int64_t len = u8count(s[i].ptr, s[i].len), m = k[i];
    int64_t from = m >= 0 ? len - m : -m;
    o[i] = char_range(s[i], from, len);
  }
  return HS_OK;
}

/* Is the character s[i..i+l) one of set's characters? */
static inline bool in_set(const char *x, size_t l, hs_sql_str set) {
  if (l == 1) return memchr(set.ptr, x[0], set.len) != NULL && set.len > 0;
  for (size_t k = 0; k < set.len;) {
    size_t m = u8len(set.ptr, k, set.len);
    if (m == l && memcmp(set.ptr + k, x, l) == 0) return true;
    k += m;
  }
  return false;
}

static hs_status trim_impl(KARGS, bool left, bool right) {
  VIEW_BEGIN();
  hs_sql_str space = {" ", 1};
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    hs_sql_str set = n_args > 1 ? S(&args[1])[i] : space;
    const char *x = s[i].ptr;
    size_t a = 0, b = s[i].len;
    if (left)
      while (a < b) {
        size_t l = u8len(x, a, b);
        if (!in_set(x + a, l, set)) break;
        a += l;
      }
    if (right)
      while (b > a) {
        size_t st = b - 1;
        while (st > a && ((uint8_t)x[st] & 0xC0) == 0x80) st--;
        if (!in_set(x + st, b - st, set)) break;
        b = st;
      }
    o[i].ptr = x + a;
    o[i].len = (uint32_t)(b - a);
  }
  return HS_OK;
}
static hs_status str_btrim(KARGS) {
  return trim_impl(e, args, n_args, n, ret, out, err, true, true);
}
static hs_status str_ltrim(KARGS) {
  return trim_impl(e, args, n_args, n, ret, out, err, true, false);
}
static hs_status str_rtrim(KARGS) {
  return trim_impl(e, args, n_args, n, ret, out, err, false, true);
}

/* split_part(s, delim, k): field k (1-based; negative counts from the end). */
static hs_status str_split_part(KARGS) {
  VIEW_BEGIN();
  const hs_sql_str *d = S(&args[1]);
  const int32_t *k = args[2].data;
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    if (k[i] == 0) FAIL("field position must not be zero");
    hs_sql_str x = s[i], dl = d[i];
    o[i].ptr = x.ptr;
    o[i].len = 0;
    if (x.len == 0) continue;
    if (dl.len == 0) {
      if (k[i] == 1 || k[i] == -1) o[i] = x;
      continue;
    }
    /* field boundaries: scan all delimiter positions */
    int64_t want = k[i];
    if (want < 0) {
      int64_t fields = 1;
      for (size_t p = 0; p + dl.len <= x.len;) {
        const char *h = memmem(x.ptr + p, x.len - p, dl.ptr, dl.len);
        if (h == NULL) break;
        fields++;
        p = (size_t)(h - x.ptr) + dl.len;
      }
      want = fields + want + 1;
      if (want < 1) continue;
    }
    size_t start = 0;
    int64_t f = 1;
    while (f < want) {
      const char *h = memmem(x.ptr + start, x.len - start, dl.ptr, dl.len);
      if (h == NULL) break;
      start = (size_t)(h - x.ptr) + dl.len;
      f++;
    }
    if (f < want) continue;
    const char *h = memmem(x.ptr + start, x.len - start, dl.ptr, dl.len);
    size_t end = h == NULL ? x.len : (size_t)(h - x.ptr);
    o[i].ptr = x.ptr + start;
    o[i].len = (uint32_t)(end - start);
  }
  return HS_OK;
}

/* --------------------------------------------------------- search, build */

static hs_status str_strpos(KARGS) {
  BEGIN();
  const hs_sql_str *s = S(&args[0]), *t = S(&args[1]);
  int32_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    if (t[i].len == 0) {
      o[i] = 1;
      continue;
    }
    const char *h = s[i].len ? memmem(s[i].ptr, s[i].len, t[i].ptr, t[i].len) : NULL;
    o[i] = h == NULL ? 0 : (int32_t)u8count(s[i].ptr, (size_t)(h - s[i].ptr)) + 1;
  }
  return HS_OK;
}

static hs_status str_starts_with(KARGS) {
  BEGIN();
  const hs_sql_str *s = S(&args[0]), *t = S(&args[1]);
  uint8_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++)
    o[i] = s[i].len >= t[i].len && (t[i].len == 0 || memcmp(s[i].ptr, t[i].ptr, t[i].len) == 0);
  return HS_OK;
}

static hs_status str_replace(KARGS) {
  BEGIN();
  const hs_sql_str *s = S(&args[0]), *f = S(&args[1]), *t = S(&args[2]);
  size_t total = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    size_t len = s[i].len;
    if (f[i].len > 0 && t[i].len > f[i].len) {
      size_t hits = 0;
      for (size_t p = 0; p + f[i].len <= s[i].len;) {
        const char *h = memmem(s[i].ptr + p, s[i].len - p, f[i].ptr, f[i].len);
        if (h == NULL) break;
        hits++;
        p = (size_t)(h - s[i].ptr) + f[i].len;
      }
      len += hits * (t[i].len - f[i].len);
    }
    if (len > STR_MAX) FAIL("requested length too large");
    total += len;
  }
  RESERVE(p, total);
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    o[i].ptr = p;
    const char *x = s[i].ptr;
    size_t len = s[i].len, at = 0;
    if (f[i].len > 0) {
      while (at + f[i].len <= len) {
        const char *h = memmem(x + at, len - at, f[i].ptr, f[i].len);
        if (h == NULL) break;
        size_t k = (size_t)(h - x) - at;
        memcpy(p, x + at, k);
        p += k;
        if (t[i].len) memcpy(p, t[i].ptr, t[i].len);
        p += t[i].len;
        at += k + f[i].len;
      }
    }
    if (len > at) memcpy(p, x + at, len - at);
    p += len - at;
    o[i].len = (uint32_t)(p - o[i].ptr);
  }
  return HS_OK;
}

static hs_status str_reverse(KARGS) {
  BEGIN();
  const hs_sql_str *s = S(&args[0]);
  RESERVE(p, total_len(&args[0], valid, n));
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    size_t len = s[i].len;
    o[i].ptr = p;
    o[i].len = (uint32_t)len;
    for (size_t k = 0; k < len;) {
      size_t l = u8len(s[i].ptr, k, len);
      memcpy(p + len - k - l, s[i].ptr + k, l);
      k += l;
    }
    p += len;
  }
  return HS_OK;
}

static hs_status str_repeat(KARGS) {
  BEGIN();
  const hs_sql_str *s = S(&args[0]);
  const int32_t *k = args[1].data;
  size_t total = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i) || k[i] <= 0) continue;
    size_t len;
    if (!hs_mul_size(s[i].len, (size_t)k[i], &len) || len > STR_MAX || total + len > STR_MAX * 4)
      FAIL("requested length too large");
    total += len;
  }
  RESERVE(p, total);
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    o[i].ptr = p;
    for (int32_t r = 0; r < k[i]; r++) {
      if (s[i].len) memcpy(p, s[i].ptr, s[i].len);
      p += s[i].len;
    }
    o[i].len = (uint32_t)(p - o[i].ptr);
  }
  return HS_OK;
}

/* lpad / rpad(s, len[, fill]): to `len` characters, cut or padded with
 * fill repeated (default one space). */
static hs_status pad_impl(KARGS, bool left) {
  BEGIN();
  const hs_sql_str *s = S(&args[0]);
  const int32_t *len = args[1].data;
  hs_sql_str space = {" ", 1};
  size_t total = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i) || len[i] <= 0) continue;
    hs_sql_str fill = n_args > 2 ? S(&args[2])[i] : space;
    size_t w = 4 * (size_t)len[i];
    if (w > STR_MAX || total + w + s[i].len > STR_MAX * 4) FAIL("requested length too large");
    total += s[i].len + (fill.len ? w : 0);
  }
  RESERVE(p, total);
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    o[i].ptr = p;
    o[i].len = 0;
    if (len[i] <= 0) continue;
    hs_sql_str fill = n_args > 2 ? S(&args[2])[i] : space;
    int64_t have = u8count(s[i].ptr, s[i].len);
    if (have >= len[i] || fill.len == 0) {
      o[i] = char_range(s[i], 0, len[i]);
      if (o[i].len) memcpy(p, o[i].ptr, o[i].len);
      o[i].ptr = p;
      p += o[i].len;
      continue;
    }
    int64_t need = len[i] - have;
    char *start = p;
    if (!left) {
      memcpy(p, s[i].ptr, s[i].len);
      p += s[i].len;
    }
    for (size_t f = 0; need > 0; need--) {
      size_t l = u8len(fill.ptr, f, fill.len);
      memcpy(p, fill.ptr + f, l);
      p += l;
      f += l;
      if (f >= fill.len) f = 0;
    }
    if (left) {
      memcpy(p, s[i].ptr, s[i].len);
      p += s[i].len;
    }
    o[i].len = (uint32_t)(p - start);
  }
  return HS_OK;
}
static hs_status str_lpad(KARGS) {
  return pad_impl(e, args, n_args, n, ret, out, err, true);
}
static hs_status str_rpad(KARGS) {
  return pad_impl(e, args, n_args, n, ret, out, err, false);
}

static hs_status str_ascii(KARGS) {
  BEGIN();
  const hs_sql_str *s = S(&args[0]);
  int32_t *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++)
    o[i] = s[i].len == 0 ? 0 : (int32_t)u8dec(s[i].ptr, 0, u8len(s[i].ptr, 0, s[i].len));
  return HS_OK;
}

static hs_status str_chr(KARGS) {
  BEGIN();
  const int32_t *c = args[0].data;
  RESERVE(p, (size_t)n * 4);
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    if (c[i] == 0) FAIL("null character not permitted");
    if (c[i] < 0 || c[i] > 0x10FFFF) FAIL("requested character too large for encoding: %d", c[i]);
    if (c[i] >= 0xD800 && c[i] <= 0xDFFF)
      FAIL("requested character not valid for encoding: %d", c[i]);
    o[i].ptr = p;
    o[i].len = (uint32_t)u8enc((uint32_t)c[i], p);
    p += o[i].len;
  }
  return HS_OK;
}

/* initcap: the first letter of each run of letters and digits upper case,
 * the others lower (by code point, as case_map). */
static hs_status str_initcap(KARGS) {
  BEGIN();
  const hs_sql_str *s = S(&args[0]);
  RESERVE(p, total_len(&args[0], valid, n));
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    const char *x = s[i].ptr;
    size_t len = s[i].len;
    o[i].ptr = p;
    o[i].len = (uint32_t)len;
    bool in_word = false;
    for (size_t k = 0; k < len;) {
      size_t l = u8len(x, k, len);
      uint32_t c = u8dec(x, k, l);
      bool alnum = (c >= '0' && c <= '9') || cp_lower(c) != cp_upper(c) || cp_lower(c) != c;
      uint32_t m = alnum ? (in_word ? cp_lower(c) : cp_upper(c)) : c;
      if (l <= 2 && (m < 0x80 ? l == 1 : (m < 0x800 && l == 2)))
        u8enc(m, p);
      else
        memcpy(p, x + k, l);
      in_word = alnum;
      p += l;
      k += l;
    }
  }
  return HS_OK;
}

/* translate(s, from, to): each character of s found in `from` becomes the
 * character at the same place in `to`, or is dropped when `to` is shorter. */
static hs_status str_translate(KARGS) {
  BEGIN();
  const hs_sql_str *s = S(&args[0]), *f = S(&args[1]), *t = S(&args[2]);
  size_t total = 0;
  for (int64_t i = 0; i < n; i++)
    if (ROW_OK(i)) total += (size_t)s[i].len * 4;
  RESERVE(p, total);
  hs_sql_str *o = hs_sql_vec_mut_data(out);
  for (int64_t i = 0; i < n; i++) {
    if (!ROW_OK(i)) continue;
    o[i].ptr = p;
    const char *x = s[i].ptr;
    for (size_t k = 0; k < s[i].len;) {
      size_t l = u8len(x, k, s[i].len);
      /* position of this character in `from` (first occurrence) */
      int64_t at = -1, idx = 0;
      for (size_t q = 0; q < f[i].len; idx++) {
        size_t m = u8len(f[i].ptr, q, f[i].len);
        if (m == l && memcmp(f[i].ptr + q, x + k, l) == 0) {
          at = idx;
          break;
        }
        q += m;
      }
      if (at < 0) {
        memcpy(p, x + k, l);
        p += l;
      } else {
        size_t q = u8off(t[i].ptr, t[i].len, at);
        if (q < t[i].len) {
          size_t m = u8len(t[i].ptr, q, t[i].len);
          memcpy(p, t[i].ptr + q, m);
          p += m;
        }
      }
      k += l;
    }
    o[i].len = (uint32_t)(p - o[i].ptr);
  }
  return HS_OK;
}

/* ----------------------------------------------------------------- LIKE */

/* Does the pattern token at p[pi..pi+*tl) match the character s[si..si+cl)? */
static inline bool tok_match(const char *p, size_t pi, size_t pn, int escape, const char *s,
                             size_t si, size_t cl, bool icase, size_t *tl) {
  size_t at = pi;
  if (escape >= 0 && (uint8_t)p[pi] == (uint8_t)escape && pi + 1 < pn) {
    at = pi + 1;
  } else if (p[pi] == '_') {
    *tl = 1;
    return true;
  }
  size_t l = u8len(p, at, pn);
  *tl = at - pi + l;
  if (l == cl && memcmp(p + at, s + si, l) == 0) return true;
  if (!icase) return false;
  return cp_lower(u8dec(p, at, l)) == cp_lower(u8dec(s, si, cl));
}

static inline bool is_pct(const char *p, size_t pi, int escape) {
  return p[pi] == '%' && !(escape >= 0 && (uint8_t)escape == '%');
}

/* LIKE for patterns of literal bytes and '%' only: the part before the
 * first '%' is a prefix, the part after the last a suffix, and the parts
 * between are found left to right with memmem (the leftmost match of each
 * leaves the most room for the rest, so greedy is exact). */
/* memmem for the short haystacks of table text: memchr for the needle's
 * first byte, then compare (glibc's memmem pays a setup per call). */
static inline const char *find(const char *h, size_t hn, const char *nd, size_t nn) {
  if (hn > 256) return memmem(h, hn, nd, nn);
  const char *end = h + hn - nn + 1;
  while (h < end) {
    const char *c = memchr(h, nd[0], (size_t)(end - h));
    if (c == NULL) return NULL;
    if (memcmp(c + 1, nd + 1, nn - 1) == 0) return c;
    h = c + 1;
  }
  return NULL;
}

static bool like_pct(const char *s, size_t n, const char *p, size_t pn) {
  size_t pre = 0;
  while (pre < pn && p[pre] != '%') pre++;
  if (pre == pn) return n == pn && memcmp(s, p, n) == 0;
  if (n < pre || memcmp(s, p, pre) != 0) return false;
  size_t last = pn;
  while (p[last - 1] != '%') last--;
  size_t suf = pn - last;
  if (n - pre < suf) return false;
  size_t end = n - suf;
  if (suf != 0 && memcmp(s + end, p + last, suf) != 0) return false;
  size_t si = pre;
  for (size_t pi = pre; pi < last;) {
    while (pi < last && p[pi] == '%') pi++;
    size_t q = pi;
    while (q < last && p[q] != '%') q++;
    if (q == pi) continue;
    const char *h = end - si >= q - pi ? find(s + si, end - si, p + pi, q - pi) : NULL;
    if (h == NULL) return false;
    si = (size_t)(h - s) + (q - pi);
    pi = q;
  }
  return true;
}

bool hs_sql_like(const char *s, size_t n, const char *p, size_t pn, int escape, bool icase) {
  if (!icase && memchr(p, '_', pn) == NULL && (escape < 0 || memchr(p, escape, pn) == NULL))
    return like_pct(s, n, p, pn);
  size_t si = 0, pi = 0, star_pi = SIZE_MAX, star_si = 0;
  while (si < n) {
    if (pi < pn) {
      if (is_pct(p, pi, escape)) {
        while (pi < pn && is_pct(p, pi, escape)) pi++;
        if (pi == pn) return true;
        star_pi = pi;
        star_si = si;
        continue;
      }
      size_t tl, cl = u8len(s, si, n);
      if (tok_match(p, pi, pn, escape, s, si, cl, icase, &tl)) {
        si += cl;
        pi += tl;
        continue;
      }
    }
    if (star_pi == SIZE_MAX) return false;
    star_si += u8len(s, star_si, n);
    si = star_si;
    pi = star_pi;
  }
  while (pi < pn && is_pct(p, pi, escape)) pi++;
  return pi == pn;
}

/* ---------------------------------------------------------------- table */

#define TX HS_SQL_TEXT
#define BY HS_SQL_BYTEA
#define I4 HS_SQL_INT32

#define FN1(NAME, A, R, K) \
  { NAME, 1, {A}, R, NULL, K, false }
#define FN2(NAME, A, B, R, K) \
  { NAME, 2, {A, B}, R, NULL, K, false }
#define FN3(NAME, A, B, C, R, K) \
  { NAME, 3, {A, B, C}, R, NULL, K, false }
#define CAT_ANY(T) FN2("||", TX, T, TX, str_cat_any), FN2("||", T, TX, TX, str_cat_any)

const hs_sql_fn hs_sql_fns_string[] = {
    FN2("||", TX, TX, TX, str_cat),
    FN2("||", BY, BY, BY, str_cat),
    CAT_ANY(HS_SQL_INT32),
    CAT_ANY(HS_SQL_INT64),
    CAT_ANY(HS_SQL_NUMERIC),
    CAT_ANY(HS_SQL_FLOAT64),
    CAT_ANY(HS_SQL_BOOL),
    CAT_ANY(HS_SQL_DATE),
    CAT_ANY(HS_SQL_TIMESTAMP),
    CAT_ANY(HS_SQL_TIMESTAMPTZ),
    CAT_ANY(HS_SQL_INTERVAL),
    {"concat", -1, {TX}, TX, NULL, str_concat, false},
    {"concat_ws", -1, {TX}, TX, NULL, str_concat_ws, false},
    FN1("lower", TX, TX, str_lower),
    FN1("upper", TX, TX, str_upper),
    FN1("length", TX, I4, str_length),
    FN1("length", BY, I4, str_octet_length),
    FN1("char_length", TX, I4, str_length),
    FN1("character_length", TX, I4, str_length),
    FN1("octet_length", TX, I4, str_octet_length),
    FN1("octet_length", BY, I4, str_octet_length),
    FN2("substr", TX, I4, TX, str_substr),
    FN3("substr", TX, I4, I4, TX, str_substr),
    FN2("substring", TX, I4, TX, str_substr),
    FN3("substring", TX, I4, I4, TX, str_substr),
    FN2("strpos", TX, TX, I4, str_strpos),
    FN2("position", TX, TX, I4, str_strpos),
    FN3("replace", TX, TX, TX, TX, str_replace),
    FN1("btrim", TX, TX, str_btrim),
    FN2("btrim", TX, TX, TX, str_btrim),
    FN1("trim", TX, TX, str_btrim),
    FN2("trim", TX, TX, TX, str_btrim),
    FN1("ltrim", TX, TX, str_ltrim),
    FN2("ltrim", TX, TX, TX, str_ltrim),
    FN1("rtrim", TX, TX, str_rtrim),
    FN2("rtrim", TX, TX, TX, str_rtrim),
    FN2("left", TX, I4, TX, str_left),
    FN2("right", TX, I4, TX, str_right),
    FN2("lpad", TX, I4, TX, str_lpad),
    FN3("lpad", TX, I4, TX, TX, str_lpad),
    FN2("rpad", TX, I4, TX, str_rpad),
    FN3("rpad", TX, I4, TX, TX, str_rpad),
    FN2("starts_with", TX, TX, HS_SQL_BOOL, str_starts_with),
    FN1("reverse", TX, TX, str_reverse),
    FN3("split_part", TX, TX, I4, TX, str_split_part),
    FN2("repeat", TX, I4, TX, str_repeat),
    FN1("ascii", TX, I4, str_ascii),
    FN1("chr", I4, TX, str_chr),
    FN1("initcap", TX, TX, str_initcap),
    FN3("translate", TX, TX, TX, TX, str_translate),
};
const size_t hs_sql_fns_string_n = sizeof hs_sql_fns_string / sizeof hs_sql_fns_string[0];
