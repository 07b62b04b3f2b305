/*
 * s3_xml.c — bounded reading of the XML S3 answers with: error bodies
 * (Code, Message), ListObjectsV2 pages, multipart upload ids. Not a
 * general XML parser: S3's documents are flat and escape every '<' in
 * text, so elements are found by their tags within their parent's span.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_internal.h"

/* The first occurrence of needle[0..nlen) in hay[from..len), or len. */
static size_t find(hs_s3_span hay, size_t from, const char *needle, size_t nlen) {
  if (nlen == 0 || hay.len < nlen) return hay.len;
  for (size_t i = from; i + nlen <= hay.len; i++) {
    if (hay.p[i] == needle[0] && memcmp(hay.p + i, needle, nlen) == 0) return i;
  }
  return hay.len;
}

bool hs_s3_xml_next(hs_s3_span doc, size_t *cursor, const char *tag, hs_s3_span *inner) {
  size_t tlen = strlen(tag);
  char close[80];
  if (tlen + 4 > sizeof close) return false;
  close[0] = '<';
  close[1] = '/';
  memcpy(close + 2, tag, tlen);
  close[tlen + 2] = '>';
  size_t at = *cursor;
  for (;;) {
    size_t lt = find(doc, at, "<", 1);
    if (lt >= doc.len) return false;
    size_t name = lt + 1;
    if (doc.len - name > tlen && memcmp(doc.p + name, tag, tlen) == 0) {
      char after = doc.p[name + tlen];
      if (after == '>' || after == ' ' || after == '/' || after == '\t' || after == '\n' ||
          after == '\r') {
        size_t gt = find(doc, name + tlen, ">", 1);
        if (gt >= doc.len) return false;
        if (doc.p[gt - 1] == '/') { /* <tag/> */
          inner->p = doc.p + gt + 1;
          inner->len = 0;
          *cursor = gt + 1;
          return true;
        }
        size_t end = find(doc, gt + 1, close, tlen + 3);
        if (end >= doc.len) return false;
        inner->p = doc.p + gt + 1;
        inner->len = end - (gt + 1);
        *cursor = end + tlen + 3;
        return true;
      }
    }
    at = name;
  }
}

static void put_utf8(char *out, size_t *o, uint32_t cp) {
  if (cp < 0x80) {
    out[(*o)++] = (char)cp;
  } else if (cp < 0x800) {
    out[(*o)++] = (char)(0xC0 | (cp >> 6));
    out[(*o)++] = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out[(*o)++] = (char)(0xE0 | (cp >> 12));
    out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*o)++] = (char)(0x80 | (cp & 0x3F));
  } else {
    out[(*o)++] = (char)(0xF0 | (cp >> 18));
    out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*o)++] = (char)(0x80 | (cp & 0x3F));
  }
}

/* Decode src into out (which has room for src.len + 1 bytes: decoding
 * never lengthens text, a reference being longer than its UTF-8). */
static bool decode_into(hs_s3_span src, char *out, size_t *out_len) {
  size_t o = 0;
  for (size_t i = 0; i < src.len;) {
    char c = src.p[i];
    if (c != '&') {
      out[o++] = c;
      i++;
      continue;
    }
    size_t semi = i + 1;
    while (semi < src.len && semi - i <= 10 && src.p[semi] != ';') semi++;
    if (semi >= src.len || src.p[semi] != ';') return false;
    const char *ent = src.p + i + 1;
    size_t elen = semi - i - 1;
    static const struct {
      const char *name;
      char ch;
    } named[] = {{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    bool done = false;
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++) {
      if (strlen(named[k].name) == elen && memcmp(ent, named[k].name, elen) == 0) {
        out[o++] = named[k].ch;
        done = true;
        break;
      }
    }
    if (!done) {
      if (elen < 2 || ent[0] != '#') return false;
      bool hex = ent[1] == 'x' || ent[1] == 'X';
      size_t d = hex ? 2 : 1;
      if (d >= elen) return false;
      uint32_t cp = 0;
      for (; d < elen; d++) {
        char h = ent[d];
        uint32_t v;
        if (h >= '0' && h <= '9') {
          v = (uint32_t)(h - '0');
        } else if (hex && h >= 'a' && h <= 'f') {
          v = (uint32_t)(h - 'a' + 10);
        } else if (hex && h >= 'A' && h <= 'F') {
          v = (uint32_t)(h - 'A' + 10);
        } else {
          return false;
        }
        cp = cp * (hex ? 16u : 10u) + v;
        if (cp > 0x10FFFF) return false;
      }
      if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
      put_utf8(out, &o, cp); /* at most 4 bytes for a reference of >= 4 ("&#9;") */
    }
    i = semi + 1;
  }
  out[o] = '\0';
  *out_len = o;
  return true;
}

char *hs_s3_xml_decode_dup(hs_s3_span src) {
  char *out = hs_malloc(src.len + 1);
  size_t n;
  if (out == NULL) return NULL;
  if (!decode_into(src, out, &n)) {
    hs_free(out);
    return NULL;
  }
  return out;
}

bool hs_s3_xml_text(hs_s3_span doc, const char *tag, char *out, size_t cap) {
  size_t cur = 0;
  hs_s3_span inner;
  if (cap == 0 || !hs_s3_xml_next(doc, &cur, tag, &inner)) return false;
  char *tmp = hs_s3_xml_decode_dup(inner);
  if (tmp == NULL) return false;
  size_t n = strlen(tmp);
  bool ok = n < cap;
  if (ok) memcpy(out, tmp, n + 1);
  hs_free(tmp);
  return ok;
}

static bool digits(const char *s, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

int64_t hs_s3_iso8601_ms(const char *s) {
  int y, mo, d, h, mi, sec, ms = 0;
  if (strlen(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
    return 0;
  if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) ||
      !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &sec))
    return 0;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return 0;
  const char *p = s + 19;
  if (*p == '.') {
    int scale = 100;
    for (p++; *p >= '0' && *p <= '9'; p++) {
      ms += (*p - '0') * scale;
      scale /= 10;
    }
  }
  int64_t days = hs_days_from_civil(y, mo, d);
  return ((days * 24 + h) * 60 + mi) * 60000 + (int64_t)sec * 1000 + ms;
}

static hs_status add_entry(hs_s3_list_acc *acc, char *name, bool is_dir, hs_error *err) {
  if (acc->n == acc->cap) {
    size_t cap = acc->cap ? acc->cap * 2 : 64, bytes;
    if (!hs_mul_size(cap, sizeof *acc->entries, &bytes)) {
      hs_free(name);
      return hs_error_set(err, HS_ERR_NOMEM, "listing: too many entries");
    }
    hs_store_entry *e = hs_realloc(acc->entries, bytes);
    if (e == NULL) {
      hs_free(name);
      return hs_error_set(err, HS_ERR_NOMEM, "listing: out of memory");
    }
    acc->entries = e;
    acc->cap = cap;
  }
  hs_store_entry *e = &acc->entries[acc->n++];
  memset(e, 0, sizeof *e);
  e->name = name;
  e->is_dir = is_dir;
  return HS_OK;
}

/* The decoded text of `tag` inside `parent`, owned; NULL when missing. */
static char *child_dup(hs_s3_span parent, const char *tag) {
  size_t cur = 0;
  hs_s3_span inner;
  if (!hs_s3_xml_next(parent, &cur, tag, &inner)) return NULL;
  return hs_s3_xml_decode_dup(inner);
}

/* name = key without the listed prefix and without a trailing '/'; owned. */
static char *relative_name(char *key, size_t prefix_len) {
  size_t n = strlen(key);
  if (n < prefix_len) return NULL;
  memmove(key, key + prefix_len, n - prefix_len + 1);
  n -= prefix_len;
  while (n > 0 && key[n - 1] == '/') key[--n] = '\0';
  return key;
}

hs_status hs_s3_parse_list_page(hs_s3_span doc, size_t prefix_len, hs_s3_list_acc *acc,
                                bool *truncated, char *next_token, size_t token_cap,
                                hs_error *err) {
  size_t cur = 0;
  hs_s3_span root;
  if (!hs_s3_xml_next(doc, &cur, "ListBucketResult", &root)) {
    return hs_error_set(err, HS_ERR_IO, "malformed ListObjectsV2 answer (no ListBucketResult)");
  }
  cur = 0;
  hs_s3_span item;
  while (hs_s3_xml_next(root, &cur, "Contents", &item)) {
    char *key = child_dup(item, "Key");
    if (key == NULL) return hs_error_set(err, HS_ERR_IO, "malformed ListObjectsV2 Contents");
    size_t klen = strlen(key); /* "dir/" objects are folder markers, not files */
    if ((klen > 0 && key[klen - 1] == '/') || relative_name(key, prefix_len) == NULL ||
        key[0] == '\0') {
      hs_free(key);
      continue;
    }
    hs_status st = add_entry(acc, key, false, err);
    if (st != HS_OK) return st;
    hs_store_entry *e = &acc->entries[acc->n - 1];
    char text[128];
    if (hs_s3_xml_text(item, "Size", text, sizeof text)) {
      e->info.size = strtoull(text, NULL, 10);
    }
    if (hs_s3_xml_text(item, "LastModified", text, sizeof text)) {
      e->info.mtime_ms = hs_s3_iso8601_ms(text);
    }
    if (hs_s3_xml_text(item, "ETag", text, sizeof text)) {
      char *t = text;
      size_t n = strlen(t);
      if (n >= 2 && t[0] == '"' && t[n - 1] == '"') {
        t++;
        n -= 2;
      }
      if (n >= sizeof e->info.etag) n = sizeof e->info.etag - 1;
      memcpy(e->info.etag, t, n);
      e->info.etag[n] = '\0';
    }
  }
  cur = 0;
  while (hs_s3_xml_next(root, &cur, "CommonPrefixes", &item)) {
    char *p = child_dup(item, "Prefix");
    if (p == NULL) return hs_error_set(err, HS_ERR_IO, "malformed ListObjectsV2 CommonPrefixes");
    if (relative_name(p, prefix_len) == NULL || p[0] == '\0') {
      hs_free(p);
      continue;
    }
    hs_status st = add_entry(acc, p, true, err);
    if (st != HS_OK) return st;
  }
  char flag[16] = "";
  *truncated = hs_s3_xml_text(root, "IsTruncated", flag, sizeof flag) && strcmp(flag, "true") == 0;
  next_token[0] = '\0';
  if (*truncated && !hs_s3_xml_text(root, "NextContinuationToken", next_token, token_cap)) {
    return hs_error_set(err, HS_ERR_IO, "ListObjectsV2 answer truncated without a usable token");
  }
  return HS_OK;
}
