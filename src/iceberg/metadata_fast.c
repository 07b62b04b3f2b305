/*
 * metadata_fast.c — the parts of vN.metadata.json that grow with the
 * table's history (snapshots, snapshot-log, metadata-log), written
 * directly as text instead of through a jansson tree.
 *
 * Why: every commit serializes the whole history; building and dumping a
 * tree of ~40 jansson nodes per snapshot (an allocation each) was the
 * largest CPU cost of a small append once a table had hundreds of
 * snapshots. The output is byte for byte what json_dump_callback with
 * JSON_INDENT(2) prints for the same values (insertion-ordered keys, ": "
 * and ",\n" separators, jansson's string escapes, "%lld" integers), so the
 * file does not depend on which path wrote it; tests/c/test_metadata_fast.c
 * compares both on randomized metadata.
 *
 * How metadata_json.c uses it: the tree is built with a marker integer in
 * place of each of the three arrays, dumped, and every marker line
 * (`\n  "snapshots": <marker>`; two spaces of indent only occur at the top
 * level, and a key occurs once per object) is replaced by the text written
 * here. Values this writer does not handle (snapshots with unknown keys,
 * duplicate summary keys, strings that are not UTF-8) make it decline, and
 * the caller falls back to the tree for everything.
 */
#include <stdio.h>
#include <string.h>

#include "iceberg_internal.h"

/* Length of the UTF-8 sequence at p (at most n bytes), 0 when invalid
 * (jansson's utf8_check_full rules: no overlongs, surrogates or > U+10FFFF). */
static size_t utf8_len(const uint8_t *p, size_t n) {
  uint8_t c = p[0];
  size_t len;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (len > n) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

static inline bool put(hs_buf *b, const char *s, size_t n) {
  if (b->len + n <= b->cap) { /* the common case: no call, no checks */
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return true;
  }
  return hs_buf_append(b, s, n);
}

static bool puts_(hs_buf *b, const char *s) {
  return put(b, s, strlen(s));
}

/* "%lld" without snprintf (a third of this file's time once). */
static bool put_int(hs_buf *b, int64_t v) {
  char t[24];
  size_t i = sizeof t;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    t[--i] = (char)('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) t[--i] = '-';
  return put(b, t + i, sizeof t - i);
}

/* A JSON string as jansson dumps it (no ESCAPE_SLASH, no ENSURE_ASCII). */
static bool put_str(hs_buf *b, const char *s) {
  if (s == NULL) return false;
  const uint8_t *p = (const uint8_t *)s;
  size_t n = strlen(s);
  if (!put(b, "\"", 1)) return false;
  size_t run = 0; /* start of bytes copied as they are */
  for (size_t i = 0; i < n;) {
    uint8_t c = p[i];
    if (c >= 0x80) {
      size_t l = utf8_len(p + i, n - i);
      if (l == 0) return false;
      i += l;
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\') {
      i++;
      continue;
    }
    if (!put(b, s + run, i - run)) return false;
    char esc[8];
    const char *e = esc;
    switch (c) {
    case '"': e = "\\\""; break;
    case '\\': e = "\\\\"; break;
    case '\b': e = "\\b"; break;
    case '\f': e = "\\f"; break;
    case '\n': e = "\\n"; break;
    case '\r': e = "\\r"; break;
    case '\t': e = "\\t"; break;
    default: snprintf(esc, sizeof esc, "\\u%04X", (unsigned)c); break;
    }
    if (!puts_(b, e)) return false;
    run = ++i;
  }
  return put(b, s + run, n - run) && put(b, "\"", 1);
}

static bool indent(hs_buf *b, int depth) {
  static const char sp[] = "                                ";
  return put(b, "\n", 1) && put(b, sp, (size_t)depth * 2);
}

/* `"key": ` on a new line at `depth`, preceded by "," unless first. */
static bool key(hs_buf *b, bool *first, int depth, const char *k) {
  if (!*first && !put(b, ",", 1)) return false;
  *first = false;
  return indent(b, depth) && put_str(b, k) && put(b, ": ", 2);
}

/* key() for this file's own key names, which need no escaping. */
static bool lit(hs_buf *b, bool *first, int depth, const char *k) {
  if (!*first && !put(b, ",", 1)) return false;
  *first = false;
  return indent(b, depth) && put(b, "\"", 1) && put(b, k, strlen(k)) && put(b, "\": ", 3);
}

static bool snapshot(hs_buf *b, const hs_iceberg_snapshot *s, int depth) {
  bool first = true, ok = put(b, "{", 1);
  ok = ok && lit(b, &first, depth + 1, "snapshot-id") && put_int(b, s->snapshot_id);
  if (s->has_parent_snapshot_id)
    ok = ok && lit(b, &first, depth + 1, "parent-snapshot-id") && put_int(b, s->parent_snapshot_id);
  if (s->has_sequence_number)
    ok = ok && lit(b, &first, depth + 1, "sequence-number") && put_int(b, s->sequence_number);
  ok = ok && lit(b, &first, depth + 1, "timestamp-ms") && put_int(b, s->timestamp_ms);
  if (s->manifest_list != NULL)
    ok = ok && lit(b, &first, depth + 1, "manifest-list") && put_str(b, s->manifest_list);
  if (s->summary != NULL || s->n_summary > 0) {
    ok = ok && lit(b, &first, depth + 1, "summary") && put(b, "{", 1);
    bool f2 = true;
    for (size_t i = 0; ok && i < s->n_summary; i++)
      ok = key(b, &f2, depth + 2, s->summary[i].key) && put_str(b, s->summary[i].value);
    ok = ok && (s->n_summary == 0 || indent(b, depth + 1)) && put(b, "}", 1);
  }
  if (s->has_schema_id)
    ok = ok && lit(b, &first, depth + 1, "schema-id") && put_int(b, s->schema_id);
  if (s->has_first_row_id)
    ok = ok && lit(b, &first, depth + 1, "first-row-id") && put_int(b, s->first_row_id);
  if (s->has_added_rows)
    ok = ok && lit(b, &first, depth + 1, "added-rows") && put_int(b, s->added_rows);
  return ok && indent(b, depth) && put(b, "}", 1);
}

bool hs_ice_fast_snapshots_ok(const hs_iceberg_metadata *m) {
  for (size_t i = 0; i < m->n_snapshots; i++) {
    const hs_iceberg_snapshot *s = &m->snapshots[i];
    if (s->extra.n > 0 || (s->n_summary > 0 && s->summary == NULL)) return false;
    /* jansson keeps one entry per key (the first position, the last value). */
    for (size_t a = 0; a < s->n_summary; a++) {
      if (s->summary[a].key == NULL || s->summary[a].value == NULL) return false;
      for (size_t c = 0; c < a; c++)
        if (strcmp(s->summary[a].key, s->summary[c].key) == 0) return false;
    }
  }
  return true;
}

/* An array member's value at top level (items at depth 2). */
static bool array(hs_buf *b, const hs_iceberg_metadata *m, hs_ice_fast_list which) {
  size_t n = which == HS_ICE_FAST_SNAPSHOTS      ? m->n_snapshots
             : which == HS_ICE_FAST_SNAPSHOT_LOG ? m->n_snapshot_log
                                                 : m->n_metadata_log;
  if (n == 0) return put(b, "[]", 2);
  bool ok = put(b, "[", 1);
  for (size_t i = 0; ok && i < n; i++) {
    ok = (i == 0 || put(b, ",", 1)) && indent(b, 2);
    bool first = true;
    if (which == HS_ICE_FAST_SNAPSHOTS) {
      ok = ok && snapshot(b, &m->snapshots[i], 2);
    } else if (which == HS_ICE_FAST_SNAPSHOT_LOG) {
      const hs_iceberg_snapshot_log_entry *e = &m->snapshot_log[i];
      ok = ok && put(b, "{", 1) && lit(b, &first, 3, "timestamp-ms") &&
           put_int(b, e->timestamp_ms) && lit(b, &first, 3, "snapshot-id") &&
           put_int(b, e->snapshot_id) && indent(b, 2) && put(b, "}", 1);
    } else {
      const hs_iceberg_metadata_log_entry *e = &m->metadata_log[i];
      ok = ok && put(b, "{", 1) && lit(b, &first, 3, "timestamp-ms") &&
           put_int(b, e->timestamp_ms) && lit(b, &first, 3, "metadata-file") &&
           put_str(b, e->metadata_file) && indent(b, 2) && put(b, "}", 1);
    }
  }
  return ok && indent(b, 1) && put(b, "]", 1);
}

static const char *const list_key[3] = {"snapshots", "snapshot-log", "metadata-log"};

hs_status hs_ice_fast_splice(const hs_iceberg_metadata *m, const char *tree, size_t len,
                             hs_buf *out, bool *declined, hs_error *err) {
  *declined = false;
  size_t before = out->len, pos = 0;
  /* Room for the lists up front (a guess; put() grows past it). */
  (void)hs_buf_reserve(out,
                       len + m->n_snapshots * 1024 + (m->n_snapshot_log + m->n_metadata_log) * 160);
  char marker[24];
  size_t mn = (size_t)snprintf(marker, sizeof marker, "%lld", (long long)HS_ICE_FAST_MARKER);
  for (int k = 0; k < 3; k++) {
    char pat[64]; /* `\n  "key": ` then the marker */
    size_t pn = (size_t)snprintf(pat, sizeof pat, "\n  \"%s\": ", list_key[k]);
    size_t hit = len;
    for (size_t i = pos; i + pn + mn <= len; i++) {
      const char *nl = memchr(tree + i, '\n', len - i);
      if (nl == NULL) break;
      i = (size_t)(nl - tree);
      if (i + pn + mn > len) break;
      size_t end = i + pn + mn;
      if (memcmp(tree + i, pat, pn) == 0 && memcmp(tree + i + pn, marker, mn) == 0 &&
          (end == len || tree[end] == ',' || tree[end] == '\n')) {
        hit = i;
        break;
      }
    }
    if (hit == len) continue; /* the caller did not mark this list */
    if (!put(out, tree + pos, hit + pn - pos) || !array(out, m, (hs_ice_fast_list)k)) {
      out->len = before;
      *declined = true; /* not UTF-8, or out of memory: the tree path decides */
      return HS_OK;
    }
    pos = hit + pn + mn;
  }
  if (!put(out, tree + pos, len - pos)) {
    out->len = before;
    return hs_error_set(err, HS_ERR_NOMEM, "out of memory serializing table metadata");
  }
  return HS_OK;
}
