/*
 * stats.c — table statistics (issue 14 item 6): hs_table_compute_statistics
 * writes a Puffin statistics file with one `apache-datasketches-theta-v1`
 * blob per column (format/puffin-spec.md) and lists it in the metadata's
 * `statistics` (spec "Table Statistics") in a metadata-only commit.
 *
 *  1. Read the current snapshot's columns (the scan every reader uses:
 *     deleted rows are not counted) and feed every non-null value, as
 *     Iceberg single-value bytes (spec Appendix D: ints, dates 4 bytes and
 *     longs, times, timestamps 8 bytes little-endian; floats by their
 *     bits; strings UTF-8; binary and fixed (uuid) as is; decimals the
 *     unscaled value's minimal big-endian two's complement; booleans one
 *     byte), into a Theta sketch per column (src/index/theta_sketch.h).
 *  2. Write `metadata/<snapshot-id>-<uuid>.stats`: "PFA1", the compact
 *     sketches, the footer (blob type, fields [field id], snapshot-id,
 *     sequence-number, offset, length, properties {ndv}); fsynced.
 *  3. Commit: the table's `statistics` with this file's entry replacing any
 *     earlier one of the same snapshot (Iceberg keeps one per snapshot).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../index/theta_sketch.h"
#include "../table/schema_map.h"
#include "../table/table.h"
#include "../table/timetravel.h"
#include "scan.h"

#define STATS_BLOB_TYPE "apache-datasketches-theta-v1"

typedef enum val_kind {
  VK_NONE,
  VK_BOOL,
  VK_W4,    /* int, date, float: 4 bytes as stored (little-endian) */
  VK_W8,    /* long, double, time, timestamp: 8 bytes */
  VK_BIN32, /* string/binary, int32 offsets */
  VK_BIN64, /* large string/binary */
  VK_FIXED, /* fixed(N), uuid */
  VK_DEC    /* decimal128 */
} val_kind;

static val_kind kind_of(const char *f, int32_t *width) {
  *width = 0;
  if (strcmp(f, "b") == 0) return VK_BOOL;
  if (strcmp(f, "i") == 0 || strcmp(f, "f") == 0 || strcmp(f, "tdD") == 0) return VK_W4;
  if (strcmp(f, "l") == 0 || strcmp(f, "g") == 0 || strncmp(f, "tsu", 3) == 0 ||
      strncmp(f, "tsn", 3) == 0 || strcmp(f, "ttu") == 0)
    return VK_W8;
  if (strcmp(f, "u") == 0 || strcmp(f, "z") == 0) return VK_BIN32;
  if (strcmp(f, "U") == 0 || strcmp(f, "Z") == 0) return VK_BIN64;
  if (strncmp(f, "w:", 2) == 0) {
    *width = (int32_t)strtol(f + 2, NULL, 10);
    return *width > 0 ? VK_FIXED : VK_NONE;
  }
  if (strncmp(f, "d:", 2) == 0 && strchr(f + 2, ',') != NULL) {
    /* decimal128 only ("d:P,S"; a third number is the bit width) */
    const char *c = strchr(strchr(f + 2, ',') + 1, ',');
    return c == NULL || strtol(c + 1, NULL, 10) == 128 ? VK_DEC : VK_NONE;
  }
  return VK_NONE;
}

static bool bit(const uint8_t *v, int64_t i) {
  return (v[i >> 3] >> (i & 7)) & 1;
}

/* The unscaled 128-bit little-endian value as Java's BigInteger.toByteArray
 * (minimal big-endian two's complement) into out; returns its length. */
static size_t decimal_bytes(const uint8_t le[16], uint8_t out[16]) {
  uint8_t be[16];
  for (int i = 0; i < 16; i++) be[i] = le[15 - i];
  size_t s = 0;
  while (s < 15) {
    bool neg = (be[s + 1] & 0x80) != 0;
    if ((be[s] == 0x00 && !neg) || (be[s] == 0xff && neg))
      s++;
    else
      break;
  }
  memcpy(out, be + s, 16 - s);
  return 16 - s;
}

/* Feed rows [0, a->length) of array `a` of kind `k` into `s`. */
static hs_status feed(hs_theta_sketch *s, val_kind k, int32_t width, const struct ArrowArray *a,
                      const char *column, hs_error *err) {
  if (a->dictionary != NULL)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "statistics: column '%s' came dictionary-encoded",
                        column);
  const uint8_t *valid = a->null_count != 0 && a->n_buffers > 0 ? a->buffers[0] : NULL;
  int64_t off = a->offset;
  if (a->length > 0 && (a->n_buffers < 2 || a->buffers[1] == NULL))
    return hs_error_set(err, HS_ERR_CORRUPT, "statistics: column '%s' without values", column);
  const uint8_t *v1 = a->n_buffers > 1 ? a->buffers[1] : NULL;
  const uint8_t *v2 = a->n_buffers > 2 ? a->buffers[2] : NULL;
  hs_status st = HS_OK;
  for (int64_t r = 0; st == HS_OK && r < a->length; r++) {
    int64_t i = off + r;
    if (valid != NULL && !bit(valid, i)) continue;
    uint8_t b[16];
    switch (k) {
    case VK_BOOL:
      b[0] = bit(v1, i) ? 1 : 0;
      st = hs_theta_update(s, b, 1, err);
      break;
    case VK_W4: st = hs_theta_update(s, v1 + 4 * i, 4, err); break;
    case VK_W8: st = hs_theta_update(s, v1 + 8 * i, 8, err); break;
    case VK_BIN32: {
      int32_t x = (int32_t)hs_load_u32le(v1 + 4 * i), y = (int32_t)hs_load_u32le(v1 + 4 * i + 4);
      if (y < x || (y > x && v2 == NULL))
        return hs_error_set(err, HS_ERR_CORRUPT, "statistics: column '%s': bad offsets", column);
      st = hs_theta_update(s, v2 + x, (size_t)(y - x), err);
      break;
    }
    case VK_BIN64: {
      int64_t x = (int64_t)hs_load_u64le(v1 + 8 * i), y = (int64_t)hs_load_u64le(v1 + 8 * i + 8);
      if (y < x || (y > x && v2 == NULL))
        return hs_error_set(err, HS_ERR_CORRUPT, "statistics: column '%s': bad offsets", column);
      st = hs_theta_update(s, v2 + x, (size_t)(y - x), err);
      break;
    }
    case VK_FIXED:
      st = hs_theta_update(s, v1 + (size_t)width * (size_t)i, (size_t)width, err);
      break;
    case VK_DEC: {
      size_t n = decimal_bytes(v1 + 16 * i, b);
      st = hs_theta_update(s, b, n, err);
      break;
    }
    default: break;
    }
  }
  return st;
}

/* ------------------------------------------------------------- the commit */

typedef struct stats_edit {
  int64_t snapshot_id;
  const char *entry; /* the statistics-file JSON object, compact text */
} stats_edit;

static hs_status stats_apply(const hs_iceberg_metadata *old, hs_iceberg_metadata *m, hs_arena *a,
                             void *ctx, bool *changed, hs_error *err) {
  const stats_edit *e = ctx;
  *changed = false;
  if (hs_iceberg_metadata_snapshot((hs_iceberg_metadata *)old, e->snapshot_id) == NULL)
    return hs_error_set(err, HS_ERR_CONFLICT,
                        "statistics: snapshot %lld was expired before the statistics committed",
                        (long long)e->snapshot_id);
  json_t *list = old->statistics != NULL ? json_loads(old->statistics, 0, NULL) : json_array();
  json_t *mine = json_loads(e->entry, 0, NULL);
  if (list == NULL || !json_is_array(list) || mine == NULL) {
    json_decref(list);
    json_decref(mine);
    return hs_error_set(err, HS_ERR_CORRUPT, "statistics: the metadata's statistics list");
  }
  for (size_t i = json_array_size(list); i-- > 0;) {
    json_t *sid = json_object_get(json_array_get(list, i), "snapshot-id");
    if (json_is_integer(sid) && json_integer_value(sid) == e->snapshot_id)
      json_array_remove(list, i);
  }
  json_array_append_new(list, mine);
  char *text = json_dumps(list, JSON_COMPACT);
  json_decref(list);
  if (text == NULL) return hs_error_set(err, HS_ERR_NOMEM, "statistics: out of memory");
  m->statistics = hs_arena_strndup(a, text, strlen(text));
  free(text);
  if (m->statistics == NULL) return hs_error_set(err, HS_ERR_NOMEM, "statistics: out of memory");
  *changed = true;
  return HS_OK;
}

/* ------------------------------------------------------------- the file */

static hs_status write_puffin(const char *path, hs_buf *body, const hs_table_statistics *r,
                              const int64_t *offs, const int64_t *lens, int64_t seq,
                              int64_t *footer_size, hs_error *err) {
  json_t *root = json_object(), *blobs = json_array(), *props = json_object();
  bool ok = root != NULL && blobs != NULL && props != NULL &&
            json_object_set_new(props, "created-by",
                                json_string("hyperstreamdb " HS_VERSION_STRING)) == 0;
  for (size_t i = 0; ok && i < r->n; i++) {
    char ndv[32];
    snprintf(ndv, sizeof ndv, "%lld", (long long)r->ndv[i]);
    json_t *b = json_pack("{s:s,s:[i],s:I,s:I,s:I,s:I,s:{s:s}}", "type", STATS_BLOB_TYPE, "fields",
                          (int)r->field_ids[i], "snapshot-id", (json_int_t)r->snapshot_id,
                          "sequence-number", (json_int_t)seq, "offset", (json_int_t)offs[i],
                          "length", (json_int_t)lens[i], "properties", "ndv", ndv);
    ok = b != NULL && json_array_append_new(blobs, b) == 0;
  }
  ok = ok && json_object_set_new(root, "blobs", blobs) == 0;
  if (!ok) json_decref(blobs);
  ok = ok && json_object_set_new(root, "properties", props) == 0;
  if (!ok) json_decref(props);
  char *text = ok ? json_dumps(root, JSON_COMPACT) : NULL;
  json_decref(root);
  if (text == NULL) return hs_error_set(err, HS_ERR_NOMEM, "statistics: footer JSON");
  size_t fl = strlen(text);
  uint8_t tail[12];
  hs_store_u32le(tail, (uint32_t)fl);
  hs_store_u32le(tail + 4, 0); /* footer not compressed */
  memcpy(tail + 8, "PFA1", 4);
  ok = hs_buf_append(body, "PFA1", 4) && hs_buf_append(body, text, fl) &&
       hs_buf_append(body, tail, sizeof tail);
  free(text);
  if (!ok) return hs_error_set(err, HS_ERR_NOMEM, "statistics: out of memory");
  *footer_size = (int64_t)fl + 16;
  return hs_table_file_write(NULL, path, body->data, body->len, err); /* local or one PUT */
}

void hs_table_statistics_free(hs_table_statistics *s) {
  if (s == NULL) return;
  for (size_t i = 0; s->columns != NULL && i < s->n; i++) hs_free(s->columns[i]);
  hs_free(s->columns);
  hs_free(s->field_ids);
  hs_free(s->ndv);
  hs_free(s->path);
  memset(s, 0, sizeof *s);
  s->snapshot_id = -1;
}

hs_status hs_table_compute_statistics(hs_table *t, const char *const *columns, size_t n_columns,
                                      hs_table_statistics *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  out->snapshot_id = -1;
  hs_status st = hs_table_check_writable(t, "compute statistics", err);
  if (st != HS_OK) return st;
  const hs_iceberg_snapshot *snap = hs_table_current(t);
  if (snap == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG,
                        "%s: compute statistics: the table has no rows yet", t->root);
  struct ArrowSchema rs;
  if ((st = hs_table_read_schema_arrow(t, -1, &rs, err)) != HS_OK) return st;
  size_t cap = columns != NULL ? n_columns : (size_t)rs.n_children;
  const char **names = hs_calloc(cap + 1, sizeof *names);
  val_kind *kinds = hs_calloc(cap + 1, sizeof *kinds);
  int32_t *widths = hs_calloc(cap + 1, sizeof *widths);
  out->columns = hs_calloc(cap + 1, sizeof *out->columns);
  out->field_ids = hs_calloc(cap + 1, sizeof *out->field_ids);
  out->ndv = hs_calloc(cap + 1, sizeof *out->ndv);
  hs_theta_sketch *sk = hs_calloc(cap + 1, sizeof *sk);
  if (names == NULL || kinds == NULL || widths == NULL || out->columns == NULL ||
      out->field_ids == NULL || out->ndv == NULL || sk == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "statistics: out of memory");
  if (st == HS_OK && columns != NULL && n_columns == 0)
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "compute statistics: an empty column list");
  size_t n = 0;
  for (size_t i = 0; st == HS_OK && i < cap; i++) {
    const struct ArrowSchema *c = NULL;
    if (columns != NULL) {
      for (int64_t j = 0; j < rs.n_children && c == NULL; j++)
        if (columns[i] != NULL && strcmp(rs.children[j]->name, columns[i]) == 0) c = rs.children[j];
      if (c == NULL) {
        st = hs_error_set(err, HS_ERR_NOT_FOUND, "%s: compute statistics: no column '%s'",
                          t->metadata_path, columns[i] ? columns[i] : "(null)");
        break;
      }
      for (size_t q = 0; q < n; q++)
        if (strcmp(names[q], c->name) == 0)
          st = hs_error_set(err, HS_ERR_INVALID_ARG, "compute statistics: column '%s' twice",
                            c->name);
    } else {
      c = rs.children[i];
    }
    if (st != HS_OK) break;
    int32_t w = 0;
    val_kind k = kind_of(c->format, &w);
    if (k == VK_NONE) {
      if (columns == NULL) continue; /* nested columns and vectors: no NDV */
      st = hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: compute statistics: column '%s' of Arrow type '%s' has no NDV "
                        "statistics (only primitive columns)",
                        t->metadata_path, c->name, c->format);
      break;
    }
    names[n] = c->name;
    kinds[n] = k;
    widths[n] = w;
    out->field_ids[n] = hs_arrow_field_id(c);
    if ((out->columns[n] = hs_strdup(c->name)) == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "statistics: out of memory");
    if (st == HS_OK) st = hs_theta_init(&sk[n], HS_THETA_NOMINAL_DEFAULT, err);
    n++;
  }
  out->n = n;
  if (st == HS_OK && n == 0)
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "%s: compute statistics: no primitive columns",
                      t->metadata_path);
  /* 1. The sketches. */
  struct ArrowArrayStream s;
  memset(&s, 0, sizeof s);
  if (st == HS_OK) {
    hs_scan_options so;
    hs_scan_options_init(&so);
    so.columns = names;
    so.n_columns = n;
    st = hs_table_scan_query(t, &so, &s, err);
  }
  while (st == HS_OK) {
    struct ArrowArray b;
    int rc = s.get_next(&s, &b);
    if (rc != 0) {
      const char *m = s.get_last_error(&s);
      st = hs_error_set(err, hs_status_of_errno(rc), "%s", m ? m : "statistics: scan failed");
      break;
    }
    if (b.release == NULL) break;
    for (size_t i = 0; st == HS_OK && i < n && i < (size_t)b.n_children; i++)
      st = feed(&sk[i], kinds[i], widths[i], b.children[i], names[i], err);
    b.release(&b);
  }
  if (s.release != NULL) s.release(&s);
  /* 2. The Puffin file. */
  hs_buf body;
  hs_buf_init(&body);
  int64_t *offs = hs_calloc(2 * (n + 1), sizeof *offs);
  if (st == HS_OK && offs == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "statistics: out of memory");
  if (st == HS_OK && !hs_buf_append(&body, "PFA1", 4))
    st = hs_error_set(err, HS_ERR_NOMEM, "statistics: out of memory");
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    offs[i] = (int64_t)body.len;
    st = hs_theta_serialize(&sk[i], &body, err);
    offs[n + 1 + i] = (int64_t)body.len - offs[i];
    double est = hs_theta_estimate(&sk[i]);
    out->ndv[i] = est < 0 ? 0 : (int64_t)est;
  }
  char path[4200], uuid[37];
  int64_t footer = 0;
  out->snapshot_id = snap->snapshot_id;
  if (st == HS_OK) st = hs_fs_uuid4(uuid, err);
  if (st == HS_OK) {
    snprintf(path, sizeof path, "%s/metadata/%lld-%s.stats", t->root, (long long)snap->snapshot_id,
             uuid);
    st = write_puffin(path, &body, out, offs, offs + n + 1, snap->sequence_number, &footer, err);
  }
  /* 3. The commit. */
  if (st == HS_OK) {
    json_t *bm = json_array();
    for (size_t i = 0; bm != NULL && i < n; i++) {
      char ndv[32];
      snprintf(ndv, sizeof ndv, "%lld", (long long)out->ndv[i]);
      json_array_append_new(
          bm, json_pack("{s:s,s:I,s:I,s:[i],s:{s:s}}", "type", STATS_BLOB_TYPE, "snapshot-id",
                        (json_int_t)snap->snapshot_id, "sequence-number",
                        (json_int_t)snap->sequence_number, "fields", (int)out->field_ids[i],
                        "properties", "ndv", ndv));
    }
    json_t *entry =
        bm == NULL
            ? NULL
            : json_pack("{s:I,s:s,s:I,s:I,s:o}", "snapshot-id", (json_int_t)snap->snapshot_id,
                        "statistics-path", path, "file-size-in-bytes", (json_int_t)body.len,
                        "file-footer-size-in-bytes", (json_int_t)footer, "blob-metadata", bm);
    char *text = entry != NULL ? json_dumps(entry, JSON_COMPACT) : NULL;
    json_decref(entry);
    if (text == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "statistics: out of memory");
    stats_edit e = {snap->snapshot_id, text};
    if (st == HS_OK) st = hs_table_commit_metadata(t, "compute statistics", stats_apply, &e, err);
    free(text);
    if (st != HS_OK) (void)hs_table_file_remove(path, NULL);
    if (st == HS_OK && (out->path = hs_strdup(path)) == NULL)
      st = hs_error_set(err, HS_ERR_NOMEM, "statistics: out of memory");
  }
  hs_buf_free(&body);
  hs_free(offs);
  for (size_t i = 0; sk != NULL && i < n; i++) hs_theta_free(&sk[i]);
  hs_free(sk);
  hs_free(names);
  hs_free(kinds);
  hs_free(widths);
  rs.release(&rs);
  if (st != HS_OK) hs_table_statistics_free(out);
  return st;
}
