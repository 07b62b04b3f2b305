/*
 * commit.c — appends: write the data file, its manifest, then commit a new
 * snapshot by publishing metadata/v{N+1}.metadata.json with an exclusive
 * create, retrying against newer versions when another writer wins.
 *
 * Order of durable steps, and why a crash anywhere is harmless:
 *   1. data/<uuid>.parquet           written, not yet synced
 *   2. metadata/<uuid>-m0.avro       manifest of (1), written, not synced
 *   3. metadata/snap-<id>-<k>-<uuid>.avro   manifest list: (2) + the
 *      manifests of the current snapshot, written, not synced
 *   4. v{N+1}'s bytes to a private temporary in metadata/; then ONE
 *      concurrent sync group (sync_before_publish): fdatasync of (1), (2),
 *      (3) and the temporary, fsync of data/ and of metadata/ (the entries
 *      of (1), (2), (3)). Only when all of them returned:
 *   5. link(2) of the temporary to metadata/v{N+1}.metadata.json, then
 *      metadata/ is fsynced: the commit point. Readers find it by probing;
 *      it appears complete or not at all.
 *   6. metadata/version-hint.text    swapped into place with no fsync: a
 *      hint that readers verify and probe past (table.c), so a stale,
 *      empty or missing hint after a crash costs a probe, never a commit.
 * Still 7 syncs per unpartitioned append (4 file, 3 directory), but the
 * first 6 overlap: the append waits for two device flushes in a row
 * instead of seven. Nothing names (1)-(3) before all are durable (I4).
 * Files of an attempt that lost the race or failed are removed when we
 * still can; after a crash they stay as orphans that no metadata names.
 *
 * On a lost race (v{N+1} exists) we reload the latest version, check the
 * schema is still the one the data file was written with, and write a
 * fresh manifest list over the new current snapshot's manifests. The data
 * file and manifest are reused: the manifest's entries carry null snapshot
 * id and sequence numbers and inherit them from the manifest-list entry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../arrow/arrow.h"
#include "../io/fs.h"
#include "../parquet/parquet.h"
#include "table.h"
#include "timetravel.h"

#define COMMIT_ATTEMPTS_MAX 200

/* ------------------------------------------------------ schema checks */

/* Does input type `a` fit table type `b`? Field ids are compared only when
 * `ids` (the table's schema against the one data was written with). */
static bool type_fits(const hs_iceberg_type *a, const hs_iceberg_type *b, bool ids, int depth) {
  if (depth > 64 || a->id != b->id) return false;
  switch (a->id) {
  case HS_ICE_DECIMAL: return a->precision == b->precision && a->scale == b->scale;
  case HS_ICE_FIXED: return a->length == b->length;
  case HS_ICE_STRUCT:
    if (a->n_fields != b->n_fields) return false;
    for (size_t i = 0; i < a->n_fields; i++) {
      const hs_iceberg_field *fa = &a->fields[i], *fb = &b->fields[i];
      if (strcmp(fa->name, fb->name) != 0) return false;
      if (ids && (fa->id != fb->id || fa->required != fb->required)) return false;
      if (fb->required && !fa->required) return false;
      if (!type_fits(&fa->type, &fb->type, ids, depth + 1)) return false;
    }
    return true;
  case HS_ICE_LIST:
    if (ids && a->element_id != b->element_id) return false;
    if (b->element_required && !a->element_required) return false;
    return type_fits(a->element, b->element, ids, depth + 1);
  case HS_ICE_MAP:
    if (ids && (a->key_id != b->key_id || a->value_id != b->value_id)) return false;
    if (b->value_required && !a->value_required) return false;
    return type_fits(a->key, b->key, ids, depth + 1) &&
           type_fits(a->value, b->value, ids, depth + 1);
  default: return true;
  }
}

/* Replace (or add) "PARQUET:field_id" in node `s`'s metadata. */
static hs_status set_field_id(struct ArrowSchema *s, int32_t id, hs_error *err) {
  enum { KV_MAX = 64 };
  const char *keys[KV_MAX];
  const char *vals[KV_MAX];
  char *owned[2 * KV_MAX];
  size_t n = 0, n_owned = 0;
  hs_status st = HS_OK;
  const uint8_t *p = (const uint8_t *)s->metadata;
  int64_t total = hs_arrow_metadata_size(s->metadata);
  if (p != NULL && total >= 4) {
    int32_t count = (int32_t)hs_load_u32le(p);
    size_t off = 4;
    for (int32_t i = 0; i < count && st == HS_OK; i++) {
      char *kv[2] = {NULL, NULL};
      for (int j = 0; j < 2; j++) {
        int32_t len = (int32_t)hs_load_u32le(p + off);
        off += 4;
        kv[j] = hs_strndup((const char *)p + off, (size_t)len);
        off += (size_t)len;
        if (kv[j] != NULL) owned[n_owned++] = kv[j];
      }
      if (kv[0] == NULL || kv[1] == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "out of memory");
      } else if (strcmp(kv[0], "PARQUET:field_id") != 0) {
        if (n + 1 >= KV_MAX) {
          st = hs_error_set(err, HS_ERR_UNSUPPORTED, "field '%s': too many metadata keys",
                            s->name ? s->name : "");
        } else {
          keys[n] = kv[0];
          vals[n++] = kv[1];
        }
      }
    }
  }
  char idbuf[16];
  snprintf(idbuf, sizeof idbuf, "%d", (int)id);
  if (st == HS_OK) {
    keys[n] = "PARQUET:field_id";
    vals[n++] = idbuf;
    st = hs_arrow_schema_set_metadata(s, keys, vals, n, err);
  }
  for (size_t i = 0; i < n_owned; i++) hs_free(owned[i]);
  return st;
}

/* Stamp the table's field ids on Arrow node `s` of Iceberg type `t`. */
static hs_status stamp_ids(struct ArrowSchema *s, const hs_iceberg_type *t, int depth,
                           hs_error *err) {
  if (depth > 64) return hs_error_set(err, HS_ERR_SCHEMA, "schema nested too deeply");
  hs_status st = HS_OK;
  switch (t->id) {
  case HS_ICE_STRUCT:
    if ((size_t)s->n_children != t->n_fields) break;
    for (size_t i = 0; i < t->n_fields && st == HS_OK; i++) {
      st = set_field_id(s->children[i], t->fields[i].id, err);
      if (st == HS_OK) st = stamp_ids(s->children[i], &t->fields[i].type, depth + 1, err);
    }
    return st;
  case HS_ICE_LIST:
    if (s->n_children != 1) break;
    st = set_field_id(s->children[0], t->element_id, err);
    return st == HS_OK ? stamp_ids(s->children[0], t->element, depth + 1, err) : st;
  case HS_ICE_MAP: {
    if (s->n_children != 1 || s->children[0]->n_children != 2) break;
    struct ArrowSchema *entries = s->children[0];
    st = set_field_id(entries->children[0], t->key_id, err);
    if (st == HS_OK) st = stamp_ids(entries->children[0], t->key, depth + 1, err);
    if (st == HS_OK) st = set_field_id(entries->children[1], t->value_id, err);
    if (st == HS_OK) st = stamp_ids(entries->children[1], t->value, depth + 1, err);
    return st;
  }
  default: return HS_OK;
  }
  return hs_error_set(err, HS_ERR_SCHEMA, "field '%s': Arrow shape does not match the table",
                      s->name ? s->name : "");
}

/* ------------------------------------------- schema mismatch messages */

/* Append Arrow node `s`'s type to `b` in pyarrow's words ("int64",
 * "fixed_size_list<float32, 8>", "struct<a: int64, b: string not null>"),
 * with " not null" when the node is not nullable and `nullability`. */
static void render_type(hs_buf *b, const struct ArrowSchema *s, bool nullability, int depth) {
  static const struct {
    const char *format, *name;
  } simple[] = {
      {"n", "null"},         {"b", "bool"},         {"c", "int8"},         {"C", "uint8"},
      {"s", "int16"},        {"S", "uint16"},       {"i", "int32"},        {"I", "uint32"},
      {"l", "int64"},        {"L", "uint64"},       {"e", "float16"},      {"f", "float32"},
      {"g", "float64"},      {"z", "binary"},       {"Z", "large_binary"}, {"u", "string"},
      {"U", "large_string"}, {"vu", "string_view"}, {"vz", "binary_view"}, {"tdD", "date32"},
      {"tdm", "date64"},     {"tts", "time32[s]"},  {"ttm", "time32[ms]"}, {"ttu", "time64[us]"},
      {"ttn", "time64[ns]"},
  };
  const char *f = s->format != NULL ? s->format : "?";
  const char *name = NULL;
  for (size_t i = 0; i < sizeof simple / sizeof simple[0] && name == NULL; i++)
    if (strcmp(f, simple[i].format) == 0) name = simple[i].name;
  bool one_child = s->n_children == 1 && s->children[0] != NULL;
  if (name != NULL) {
    hs_buf_printf(b, "%s", name);
  } else if (depth > 8) {
    hs_buf_printf(b, "...");
  } else if ((strcmp(f, "+l") == 0 || strcmp(f, "+L") == 0) && one_child) {
    hs_buf_printf(b, "%s<", f[1] == 'l' ? "list" : "large_list");
    render_type(b, s->children[0], true, depth + 1);
    hs_buf_printf(b, ">");
  } else if (strncmp(f, "+w:", 3) == 0 && one_child) {
    hs_buf_printf(b, "fixed_size_list<");
    render_type(b, s->children[0], true, depth + 1);
    hs_buf_printf(b, ", %s>", f + 3);
  } else if (strcmp(f, "+s") == 0) {
    hs_buf_printf(b, "struct<");
    for (int64_t i = 0; i < s->n_children; i++) {
      const struct ArrowSchema *c = s->children[i];
      hs_buf_printf(b, "%s%s: ", i ? ", " : "", c->name ? c->name : "");
      render_type(b, c, true, depth + 1);
    }
    hs_buf_printf(b, ">");
  } else if (strcmp(f, "+m") == 0 && one_child && s->children[0]->n_children == 2) {
    hs_buf_printf(b, "map<");
    render_type(b, s->children[0]->children[0], false, depth + 1);
    hs_buf_printf(b, ", ");
    render_type(b, s->children[0]->children[1], true, depth + 1);
    hs_buf_printf(b, ">");
  } else if (strncmp(f, "d:", 2) == 0) {
    hs_buf_printf(b, "decimal128(%s)", f + 2);
  } else if (strncmp(f, "w:", 2) == 0) {
    hs_buf_printf(b, "fixed_size_binary[%s]", f + 2);
  } else if (strncmp(f, "ts", 2) == 0 && f[2] != '\0' && f[3] == ':') {
    const char *unit = f[2] == 's' ? "s" : f[2] == 'm' ? "ms" : f[2] == 'u' ? "us" : "ns";
    if (f[4] != '\0')
      hs_buf_printf(b, "timestamp[%s, tz=%s]", unit, f + 4);
    else
      hs_buf_printf(b, "timestamp[%s]", unit);
  } else {
    hs_buf_printf(b, "'%.40s'", f);
  }
  if (nullability && !(s->flags & ARROW_FLAG_NULLABLE)) hs_buf_printf(b, " not null");
}

/* The first place where data does not fit the table. */
typedef struct misfit {
  char path[512];
  const struct ArrowSchema *table, *data;
  const char *why; /* NULL, or a hint after the two types */
} misfit;

static bool misfit_at(misfit *m, const char *path, const struct ArrowSchema *table,
                      const struct ArrowSchema *data, const char *why) {
  snprintf(m->path, sizeof m->path, "%s", path);
  m->table = table;
  m->data = data;
  m->why = why;
  return false;
}

/* Does data node `da` (Iceberg type `di`) fit table node `ta` (Iceberg
 * type `ti`)? Walks the four trees together (arrow_map.c maps children one
 * to one); on the first misfit fills *m and returns false. Beyond what
 * the Iceberg types say, the fixed size of a vector column
 * (fixed_size_list<float32, D>, recorded as a table property) must match:
 * a variable list is refused too, as its rows may have any length. */
static bool node_fits(const struct ArrowSchema *da, const hs_iceberg_type *di,
                      const struct ArrowSchema *ta, const hs_iceberg_type *ti, const char *path,
                      int depth, misfit *m) {
  if (depth > 64) return misfit_at(m, path, ta, da, "nested too deeply");
  if (di->id != ti->id) return misfit_at(m, path, ta, da, NULL);
  char sub[512];
  switch (ti->id) {
  case HS_ICE_DECIMAL:
    return (di->precision == ti->precision && di->scale == ti->scale) ||
           misfit_at(m, path, ta, da, NULL);
  case HS_ICE_FIXED: return di->length == ti->length || misfit_at(m, path, ta, da, NULL);
  case HS_ICE_STRUCT:
    if (di->n_fields != ti->n_fields || (size_t)da->n_children != di->n_fields ||
        (size_t)ta->n_children != ti->n_fields)
      return misfit_at(m, path, ta, da, "the fields differ");
    for (size_t i = 0; i < ti->n_fields; i++) {
      const hs_iceberg_field *fd = &di->fields[i], *ft = &ti->fields[i];
      snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", ft->name);
      if (strcmp(fd->name, ft->name) != 0)
        return misfit_at(m, path, ta, da, "field names or order differ");
      if (ft->required && !fd->required)
        return misfit_at(m, sub, ta->children[i], da->children[i],
                         "the table's field is required: the data's must not be nullable");
      if (!node_fits(da->children[i], &fd->type, ta->children[i], &ft->type, sub, depth + 1, m))
        return false;
    }
    return true;
  case HS_ICE_LIST:
    if (da->n_children != 1 || ta->n_children != 1) return misfit_at(m, path, ta, da, NULL);
    if (ti->element_required && !di->element_required)
      return misfit_at(m, path, ta, da,
                       "the table's elements are required: the data's must not be nullable");
    if (strncmp(ta->format, "+w:", 3) == 0 && strcmp(ta->format, da->format) != 0)
      return misfit_at(m, path, ta, da,
                       strncmp(da->format, "+w:", 3) == 0
                           ? "vector dimensions differ"
                           : "a vector column takes fixed-size lists of its dimension");
    /* A file of fixed-size float lists would fix a scan's output type as
     * fixed_size_list (the first file read does), which the column's other
     * files, variable lists, do not read as. */
    if (strncmp(ta->format, "+w:", 3) != 0 && strncmp(da->format, "+w:", 3) == 0 &&
        ti->element->id == HS_ICE_FLOAT)
      return misfit_at(m, path, ta, da, "the column takes variable-length lists: cast the data");
    snprintf(sub, sizeof sub, "%s.element", path);
    return node_fits(da->children[0], di->element, ta->children[0], ti->element, sub, depth + 1, m);
  case HS_ICE_MAP: {
    const struct ArrowSchema *de = da->n_children == 1 ? da->children[0] : NULL;
    const struct ArrowSchema *te = ta->n_children == 1 ? ta->children[0] : NULL;
    if (de == NULL || te == NULL || de->n_children != 2 || te->n_children != 2)
      return misfit_at(m, path, ta, da, NULL);
    if (ti->value_required && !di->value_required)
      return misfit_at(m, path, ta, da,
                       "the table's values are required: the data's must not be nullable");
    snprintf(sub, sizeof sub, "%s.key", path);
    if (!node_fits(de->children[0], di->key, te->children[0], ti->key, sub, depth + 1, m))
      return false;
    snprintf(sub, sizeof sub, "%s.value", path);
    return node_fits(de->children[1], di->value, te->children[1], ti->value, sub, depth + 1, m);
  }
  default: return true;
  }
}

/* "[a, b, c]" of a struct node's field names, into `b` (NUL-terminated). */
static void name_list(hs_buf *b, const struct ArrowSchema *s) {
  hs_buf_append_byte(b, '[');
  for (int64_t i = 0; i < s->n_children; i++)
    hs_buf_printf(b, "%s%s", i ? ", " : "", s->children[i]->name ? s->children[i]->name : "");
  hs_buf_printf(b, "]");
  hs_buf_append_byte(b, 0);
}

static int64_t child_named(const struct ArrowSchema *s, const char *name) {
  for (int64_t i = 0; i < s->n_children; i++)
    if (strcmp(s->children[i]->name ? s->children[i]->name : "", name) == 0) return i;
  return -1;
}

/* HS_ERR_SCHEMA naming the first column of `in` (Iceberg `is`) that does
 * not fit table schema `ts` (Arrow form `ta`), or HS_OK. */
static hs_status explain_misfit(const hs_table *t, const struct ArrowSchema *in,
                                const hs_iceberg_schema *is, const struct ArrowSchema *ta,
                                const hs_iceberg_schema *ts, hs_error *err) {
  hs_buf msg, want, got;
  hs_buf_init(&msg);
  hs_buf_init(&want);
  hs_buf_init(&got);
  name_list(&want, ta);
  name_list(&got, in);
  bool fits = true;
  size_t n = ts->root.n_fields;
  /* Missing columns first, then extra ones, then the order. */
  for (size_t i = 0; i < ts->root.n_fields && fits; i++)
    if (child_named(in, ts->root.fields[i].name) < 0) {
      hs_buf_printf(&msg, "data has no column '%s'", ts->root.fields[i].name);
      fits = false;
    }
  for (size_t i = 0; i < is->root.n_fields && fits; i++)
    if (child_named(ta, is->root.fields[i].name) < 0) {
      hs_buf_printf(&msg, "data column '%s' is not in the table", is->root.fields[i].name);
      fits = false;
    }
  for (size_t i = 0; i < n && fits; i++)
    if (i >= is->root.n_fields || strcmp(ts->root.fields[i].name, is->root.fields[i].name) != 0) {
      hs_buf_printf(&msg, "column order differs: column %zu is '%s' in the table, '%s' in the data",
                    i + 1, ts->root.fields[i].name,
                    i < is->root.n_fields ? is->root.fields[i].name : "");
      fits = false;
    }
  if (fits && is->root.n_fields != n) { /* names repeated in the data */
    hs_buf_printf(&msg, "the data has %zu columns, the table %zu", is->root.n_fields, n);
    fits = false;
  }
  for (size_t i = 0; i < n && fits; i++) {
    const hs_iceberg_field *fd = &is->root.fields[i], *ft = &ts->root.fields[i];
    misfit m = {0};
    if (ft->required && !fd->required) {
      misfit_at(&m, ft->name, ta->children[i], in->children[i],
                "the table's column is required: the data's must not be nullable");
    } else if (node_fits(in->children[i], &fd->type, ta->children[i], &ft->type, ft->name, 1, &m)) {
      continue;
    }
    fits = false;
    hs_buf_printf(&msg, "column '%s': table has ", m.path);
    render_type(&msg, m.table, true, 0);
    hs_buf_printf(&msg, ", data has ");
    render_type(&msg, m.data, true, 0);
    if (m.why != NULL) hs_buf_printf(&msg, " (%s)", m.why);
  }
  hs_buf_append_byte(&msg, 0);
  hs_status st = HS_OK;
  if (!fits)
    st = hs_error_set(err, HS_ERR_SCHEMA,
                      "%s: data does not fit the table schema: %s (table columns: %s, data: %s)",
                      t->root, msg.data ? (char *)msg.data : "out of memory",
                      want.data ? (char *)want.data : "", got.data ? (char *)got.data : "");
  hs_buf_free(&msg);
  hs_buf_free(&want);
  hs_buf_free(&got);
  return st;
}

/* Check `in` against the table schema; on success *stamped is an owned
 * copy of `in` carrying the table's field ids. */
static hs_status check_schema(const hs_table *t, const hs_iceberg_schema *ts,
                              const struct ArrowSchema *in, struct ArrowSchema *stamped,
                              hs_error *err) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_iceberg_from_arrow_options fo = {.format_version = t->meta.format_version, .next_id = 1};
  hs_iceberg_schema is;
  int32_t last = 0;
  hs_iceberg_vector_dim *v = NULL;
  size_t nv = 0;
  struct ArrowSchema ta;
  memset(&ta, 0, sizeof ta);
  hs_status st = hs_iceberg_schema_from_arrow(in, &fo, &arena, &is, &last, &v, &nv, err);
  if (st == HS_OK) st = hs_iceberg_schema_to_arrow(ts, &t->meta, &ta, err);
  if (st == HS_OK) st = explain_misfit(t, in, &is, &ta, ts, err);
  hs_arrow_schema_release(&ta);
  hs_arena_reset(&arena);
  if (st != HS_OK) return st;
  if ((st = hs_arrow_schema_copy(in, stamped, err)) != HS_OK) return st;
  if ((st = stamp_ids(stamped, &ts->root, 0, err)) != HS_OK) stamped->release(stamped);
  return st;
}

/* ------------------------------------------------------------- commit */

typedef struct append_ctx {
  hs_table *t;
  hs_arena arena;
  int64_t snapshot_id;
  int32_t schema_id;
  /* The version the append started from, kept while `t` is reloaded by
   * retries: `schema` (the one the data file is written with) lives in it. */
  hs_table *pin;
  const hs_iceberg_schema *schema;
  char data_path[4200];
  char manifest_path[4200];
  char list_path[4200];
  int64_t file_size, records;
  hs_iceberg_manifest_file manifest; /* summary of our manifest */
  /* Written but not yet synced (-1 once synced, or for clustered files,
   * which partition.c syncs): the first attempt's sync group makes them
   * durable together with the manifest list and the metadata. */
  int data_fd, manifest_fd;
  /* Clustered writes (partitioned spec or sort order, partition.c): one
   * data file per partition, in c->arena; NULL for the single-file path. */
  hs_iceberg_data_file *files;
  size_t n_files;
} append_ctx;

static hs_status random_snapshot_id(int64_t *out, hs_error *err) {
  uint64_t r = 0;
  do {
    hs_status st = hs_fs_random_bytes(&r, sizeof r, err);
    if (st != HS_OK) return st;
    r &= (uint64_t)INT64_MAX;
  } while (r == 0);
  *out = (int64_t)r;
  return HS_OK;
}

static int64_t summary_int(const hs_iceberg_snapshot *s, const char *key) {
  for (size_t i = 0; s != NULL && i < s->n_summary; i++) {
    if (strcmp(s->summary[i].key, key) != 0) continue;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s->summary[i].value, &end, 10);
    if (errno != 0 || end == s->summary[i].value || *end != '\0' || v < 0) return -1;
    return (int64_t)v;
  }
  return -1;
}

static bool add_kv(hs_arena *a, hs_iceberg_kv *kv, size_t *n, const char *key, int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)v);
  kv[*n].key = key;
  kv[*n].value = hs_arena_strndup(a, buf, strlen(buf));
  if (kv[*n].value == NULL) return false;
  (*n)++;
  return true;
}

/* One attempt against the loaded version of c->t: write a manifest list,
 * build and publish v{N+1}. *won tells whether we committed. */
/* Every ADOPT_REPARSE-th version a committing handle parses what it
 * published instead of adopting it (see adopt). */
#define ADOPT_REPARSE 16

static char *arena_str(hs_arena *a, const char *s) {
  return s ? hs_arena_strndup(a, s, strlen(s)) : NULL;
}

/* Make `m`, just published as version t->version + 1 at `path`, the
 * handle's metadata without reading and parsing it back (that parse was
 * the largest per-append cost once a table has a history). `m` shares
 * everything but its grown arrays and the new snapshot with the handle's
 * metadata, which lives in t->arena; those arrays and the strings they
 * point at outside t->arena are copied into t->arena. Superseded arrays
 * stay in the arena until the next parse: every ADOPT_REPARSE-th version
 * is parsed from disk instead, which compacts it. On any failure the
 * version is parsed from disk as before. */
static hs_status adopt(hs_table *t, const hs_iceberg_metadata *m, const char *path, hs_error *err) {
  int64_t v = t->version + 1;
  if (v % ADOPT_REPARSE == 0 || m->n_snapshots == 0 || m->n_metadata_log == 0 ||
      m->n_snapshot_log == 0 || m->n_refs == 0)
    return hs_table_load_version(t, v, err);
  hs_arena *ar = &t->arena;
  hs_iceberg_metadata n = *m;
  n.snapshots = hs_arena_memdup(ar, m->snapshots, m->n_snapshots * sizeof *m->snapshots);
  n.snapshot_log =
      hs_arena_memdup(ar, m->snapshot_log, m->n_snapshot_log * sizeof *m->snapshot_log);
  n.metadata_log =
      hs_arena_memdup(ar, m->metadata_log, m->n_metadata_log * sizeof *m->metadata_log);
  n.refs = hs_arena_memdup(ar, m->refs, m->n_refs * sizeof *m->refs);
  char *mpath = hs_strdup(path);
  bool ok = n.snapshots && n.snapshot_log && n.metadata_log && n.refs && mpath;
  hs_iceberg_snapshot *s = ok ? &n.snapshots[n.n_snapshots - 1] : NULL;
  if (ok) {
    s->manifest_list = arena_str(ar, s->manifest_list);
    hs_iceberg_kv *kv = hs_arena_alloc(ar, (s->n_summary + 1) * sizeof *kv);
    ok = s->manifest_list && kv;
    for (size_t i = 0; ok && i < s->n_summary; i++) {
      kv[i].key = arena_str(ar, s->summary[i].key);
      kv[i].value = arena_str(ar, s->summary[i].value);
      ok = kv[i].key && kv[i].value;
    }
    s->summary = kv;
    hs_iceberg_metadata_log_entry *ml = &n.metadata_log[n.n_metadata_log - 1];
    ml->metadata_file = ok ? arena_str(ar, ml->metadata_file) : NULL;
    ok = ok && ml->metadata_file;
  }
  if (!ok) {
    hs_free(mpath);
    return hs_table_load_version(t, v, err);
  }
  t->meta = n;
  hs_free(t->metadata_path);
  t->metadata_path = mpath;
  t->version = v;
  t->meta_stamped = false; /* not stat'ed: the next refresh reads it */
  return HS_OK;
}

/* Make durable, concurrently, what v{N+1} names and v{N+1} itself: the
 * data file and data/ (first attempt only), the manifest (first attempt
 * only), the manifest list, metadata/ (the entries of manifest and list)
 * and the metadata temporary. On a virtual disk each sync is a device
 * flush of ~2-4 ms; in one group they overlap instead of queueing (7
 * syncs one after another were most of an append's wall time). Nothing
 * is published until all of them returned, so I4 holds as before. */
static hs_status sync_before_publish(append_ctx *c, int list_fd, int tmp_fd, const char *tmp,
                                     hs_error *err) {
  char ddir[4200], mdir[4200];
  snprintf(ddir, sizeof ddir, "%s/data", c->t->root);
  snprintf(mdir, sizeof mdir, "%s/metadata", c->t->root);
  hs_fs_sync_item items[6];
  size_t n = 0;
  if (c->data_fd >= 0) {
    items[n++] = (hs_fs_sync_item){.fd = c->data_fd, .path = c->data_path};
    items[n++] = (hs_fs_sync_item){.fd = -1, .path = ddir};
  }
  if (c->manifest_fd >= 0)
    items[n++] = (hs_fs_sync_item){.fd = c->manifest_fd, .path = c->manifest_path};
  items[n++] = (hs_fs_sync_item){.fd = list_fd, .path = c->list_path};
  items[n++] = (hs_fs_sync_item){.fd = -1, .path = mdir};
  items[n++] = (hs_fs_sync_item){.fd = tmp_fd, .path = tmp};
  hs_status st = hs_fs_sync_group(items, n, err);
  if (st != HS_OK) return st;
  /* Durable now: a retry syncs only its own list and metadata. */
  if (c->data_fd >= 0) close(c->data_fd);
  if (c->manifest_fd >= 0) close(c->manifest_fd);
  c->data_fd = c->manifest_fd = -1;
  return HS_OK;
}

/* The link of `tmp` to `path` (v{N+1}) under the shared publish lock,
 * after checking that the data file(s), the manifest, the manifest list and
 * the temporary are all still there; a vanished one fails the append with
 * nothing published (the temporary is removed either way). */
static hs_status publish_checked(append_ctx *c, const char *tmp, const char *path, bool *won,
                                 hs_error *err) {
  *won = false;
  int lock_fd = -1;
  hs_status st = hs_table_publish_lock(c->t, false, &lock_fd, err);
  if (st == HS_OK && c->files == NULL) {
    const char *mine[] = {c->data_path, c->manifest_path, c->list_path, tmp};
    st = hs_table_publish_check("append", mine, sizeof mine / sizeof *mine, err);
  } else if (st == HS_OK) {
    const char *mine[] = {c->manifest_path, c->list_path, tmp};
    st = hs_table_publish_check("append", mine, sizeof mine / sizeof *mine, err);
    for (size_t i = 0; st == HS_OK && i < c->n_files; i++) {
      const char *p = c->files[i].file_path;
      st = hs_table_publish_check("append", &p, 1, err);
    }
  }
  if (st == HS_OK) {
    st = hs_fs_publish_link(tmp, path, won, err);
  } else {
    (void)hs_fs_remove(tmp, NULL);
  }
  hs_table_publish_unlock(lock_fd);
  return st;
}

static hs_status commit_attempt(append_ctx *c, int attempt, bool *won, hs_error *err) {
  hs_table *t = c->t;
  const hs_iceberg_metadata *old = &t->meta;
  *won = false;
  hs_arena a;
  hs_arena_init(&a);
  hs_buf buf;
  hs_buf_init(&buf);
  hs_status st = HS_OK;
  char uuid[37];
  char tmp[4300];
  tmp[0] = '\0';
  int list_fd = -1, tmp_fd = -1;
  c->list_path[0] = '\0';

  /* Snapshot ids must be unique in the table. */
  while (hs_iceberg_metadata_snapshot(old, c->snapshot_id) != NULL) {
    if ((st = random_snapshot_id(&c->snapshot_id, err)) != HS_OK) goto done;
  }
  const hs_iceberg_snapshot *cur = hs_table_current(t);
  int64_t seq = (old->has_last_sequence_number ? old->last_sequence_number : 0) + 1;
  int64_t now = hs_table_wall_ms();
  if (now < old->last_updated_ms) now = old->last_updated_ms;

  /* Manifest list: ours first, then the current snapshot's. */
  hs_iceberg_manifest_list prev;
  memset(&prev, 0, sizeof prev);
  if (cur != NULL) {
    if ((st = hs_table_read_avro(t, cur->manifest_list, "manifest list", &buf, err)) != HS_OK) {
      /* Gone because a newer version expired that snapshot (expire.c
       * publishes, then deletes): a lost race like any other, retried on
       * the newer version. */
      if (st == HS_ERR_NOT_FOUND && hs_table_newer_version_exists(t)) st = HS_OK;
      goto done;
    }
    st = hs_iceberg_manifest_list_read(buf.data, buf.len, &a, &prev, err);
    if (st != HS_OK) {
      hs_error_prefix(err, "%s: ", cur->manifest_list);
      goto done;
    }
    buf.len = 0;
  }
  size_t n_files = prev.n_files + 1;
  hs_iceberg_manifest_file *files = hs_arena_alloc(&a, n_files * sizeof *files);
  if (files == NULL) {
    st = hs_error_set(err, HS_ERR_NOMEM, "commit: out of memory");
    goto done;
  }
  files[0] = c->manifest;
  files[0].added_snapshot_id = c->snapshot_id;
  files[0].sequence_number = seq;
  files[0].min_sequence_number = seq;
  files[0].has_first_row_id = false;
  int64_t total_records = 0, total_files = 0;
  for (size_t i = 0; i < prev.n_files; i++) files[i + 1] = prev.files[i];
  for (size_t i = 0; i < n_files; i++) {
    if (files[i].content != HS_ICE_MANIFEST_DATA) continue;
    total_records += files[i].added_rows_count + files[i].existing_rows_count;
    total_files += files[i].added_files_count + files[i].existing_files_count;
  }
  int64_t first_row_id = old->has_next_row_id ? old->next_row_id : 0;
  hs_iceberg_manifest_list_options lo = {.format_version = old->format_version,
                                         .snapshot_id = c->snapshot_id,
                                         .has_parent_snapshot_id = cur != NULL,
                                         .parent_snapshot_id = cur ? cur->snapshot_id : 0,
                                         .sequence_number = seq,
                                         .first_row_id = first_row_id};
  int64_t assigned = 0;
  st = hs_iceberg_manifest_list_write(&lo, files, n_files, &buf, NULL, &assigned, err);
  if (st != HS_OK) goto done;
  if ((st = hs_fs_uuid4(uuid, err)) != HS_OK) goto done;
  snprintf(c->list_path, sizeof c->list_path, "%s/metadata/snap-%lld-%d-%s.avro", t->root,
           (long long)c->snapshot_id, attempt, uuid);
  if ((st = hs_fs_create_unsynced(c->list_path, buf.data, buf.len, &list_fd, err)) != HS_OK) {
    c->list_path[0] = '\0';
    goto done;
  }
  hs_table_crash_point();

  /* The new snapshot. */
  hs_iceberg_snapshot snap;
  memset(&snap, 0, sizeof snap);
  snap.snapshot_id = c->snapshot_id;
  snap.has_parent_snapshot_id = cur != NULL;
  snap.parent_snapshot_id = cur ? cur->snapshot_id : 0;
  snap.has_sequence_number = true;
  snap.sequence_number = seq;
  snap.timestamp_ms = now;
  snap.manifest_list = c->list_path;
  snap.has_schema_id = true;
  snap.schema_id = c->schema_id;
  if (old->format_version >= 3) {
    snap.has_first_row_id = true;
    snap.first_row_id = first_row_id;
    snap.has_added_rows = true;
    snap.added_rows = assigned;
  }
  hs_iceberg_kv *sum = hs_arena_alloc(&a, 16 * sizeof *sum);
  size_t ns = 0;
  bool ok = sum != NULL;
  if (ok) {
    sum[ns].key = "operation";
    sum[ns++].value = "append";
  }
  int64_t prev_size = summary_int(cur, "total-files-size");
  int64_t n_added = c->files ? (int64_t)c->n_files : 1;
  ok = ok && add_kv(&a, sum, &ns, "added-data-files", n_added);
  ok = ok && add_kv(&a, sum, &ns, "added-records", c->records);
  ok = ok && add_kv(&a, sum, &ns, "added-files-size", c->file_size);
  ok = ok && add_kv(&a, sum, &ns, "changed-partition-count", n_added);
  ok = ok && add_kv(&a, sum, &ns, "total-records", total_records);
  ok =
      ok && (cur != NULL && prev_size < 0 ? true
                                          : add_kv(&a, sum, &ns, "total-files-size",
                                                   (prev_size < 0 ? 0 : prev_size) + c->file_size));
  ok = ok && add_kv(&a, sum, &ns, "total-data-files", total_files);
  ok = ok &&
       add_kv(
           &a, sum, &ns, "total-delete-files",
           summary_int(cur, "total-delete-files") > 0 ? summary_int(cur, "total-delete-files") : 0);
  ok = ok && add_kv(&a, sum, &ns, "total-position-deletes",
                    summary_int(cur, "total-position-deletes") > 0
                        ? summary_int(cur, "total-position-deletes")
                        : 0);
  ok = ok && add_kv(&a, sum, &ns, "total-equality-deletes",
                    summary_int(cur, "total-equality-deletes") > 0
                        ? summary_int(cur, "total-equality-deletes")
                        : 0);
  snap.summary = sum;
  snap.n_summary = ns;

  /* The new metadata: a shallow copy of the old with grown arrays. */
  hs_iceberg_metadata m = *old;
  m.has_last_sequence_number = true;
  m.last_sequence_number = seq;
  m.last_updated_ms = now;
  m.has_current_snapshot_id = true;
  m.current_snapshot_id = c->snapshot_id;
  if (old->format_version >= 3) {
    m.has_next_row_id = true;
    m.next_row_id = first_row_id + assigned;
  }
  m.snapshots = hs_arena_alloc(&a, (old->n_snapshots + 1) * sizeof *m.snapshots);
  m.snapshot_log = hs_arena_alloc(&a, (old->n_snapshot_log + 1) * sizeof *m.snapshot_log);
  m.metadata_log = hs_arena_alloc(&a, (old->n_metadata_log + 1) * sizeof *m.metadata_log);
  m.refs = hs_arena_alloc(&a, (old->n_refs + 1) * sizeof *m.refs);
  if (!ok || !m.snapshots || !m.snapshot_log || !m.metadata_log || !m.refs) {
    st = hs_error_set(err, HS_ERR_NOMEM, "commit: out of memory");
    goto done;
  }
  if (old->n_snapshots) memcpy(m.snapshots, old->snapshots, old->n_snapshots * sizeof snap);
  m.snapshots[m.n_snapshots++] = snap;
  if (old->n_snapshot_log)
    memcpy(m.snapshot_log, old->snapshot_log, old->n_snapshot_log * sizeof *m.snapshot_log);
  m.snapshot_log[m.n_snapshot_log++] =
      (hs_iceberg_snapshot_log_entry){.timestamp_ms = now, .snapshot_id = c->snapshot_id};
  size_t keep = old->n_metadata_log;
  size_t skip = keep >= HS_TABLE_METADATA_LOG_MAX ? keep - (HS_TABLE_METADATA_LOG_MAX - 1) : 0;
  m.n_metadata_log = keep - skip;
  if (m.n_metadata_log)
    memcpy(m.metadata_log, old->metadata_log + skip, m.n_metadata_log * sizeof *m.metadata_log);
  m.metadata_log[m.n_metadata_log++] = (hs_iceberg_metadata_log_entry){
      .timestamp_ms = old->last_updated_ms, .metadata_file = t->metadata_path};
  bool have_main = false;
  if (old->n_refs) memcpy(m.refs, old->refs, old->n_refs * sizeof *m.refs);
  for (size_t i = 0; i < m.n_refs; i++) {
    if (strcmp(m.refs[i].name, "main") == 0) {
      m.refs[i].snapshot_id = c->snapshot_id;
      m.refs[i].is_tag = false;
      have_main = true;
    }
  }
  if (!have_main) {
    memset(&m.refs[m.n_refs], 0, sizeof m.refs[0]);
    m.refs[m.n_refs].name = "main";
    m.refs[m.n_refs++].snapshot_id = c->snapshot_id;
  }
  buf.len = 0;
  if ((st = hs_iceberg_metadata_write(&m, &buf, err)) != HS_OK) goto done;

  char path[4200];
  hs_table_version_path(t->root, t->version + 1, path, sizeof path);
  st = hs_fs_publish_prepare(path, buf.data, buf.len, tmp, sizeof tmp, &tmp_fd, err);
  if (st != HS_OK) {
    tmp[0] = '\0';
    goto done;
  }
  /* Everything the new version names, and its own bytes, durable in one
   * concurrent group (see sync_before_publish); then the link. */
  if ((st = sync_before_publish(c, list_fd, tmp_fd, tmp, err)) != HS_OK) goto done;
  hs_table_crash_point();
  /* Under the publish lock (orphans.c), every file this version names that
   * this append wrote must still be there: an orphan sweep run with a
   * cut-off younger than this commit may have taken one. */
  st = publish_checked(c, tmp, path, won, err);
  tmp[0] = '\0'; /* removed by the link, or by publish_checked */
  if (st != HS_OK) goto done;
  if (*won) {
    hs_table_crash_point();
    char hint[4200], num[24];
    snprintf(hint, sizeof hint, "%s/metadata/version-hint.text", t->root);
    int n = snprintf(num, sizeof num, "%lld", (long long)(t->version + 1));
    (void)hs_fs_replace_hint(hint, num, (size_t)n, NULL); /* a hint: best effort */
    hs_table_crash_point();
    /* Adopt the version we wrote (a failure only leaves the handle stale). */
    (void)adopt(t, &m, path, NULL);
  }

done:
  if (list_fd >= 0) close(list_fd);
  if (tmp_fd >= 0) close(tmp_fd);
  if (tmp[0] != '\0') (void)hs_fs_remove(tmp, NULL);
  if (!*won && c->list_path[0] != '\0') {
    (void)hs_fs_remove(c->list_path, NULL);
    c->list_path[0] = '\0';
  }
  hs_buf_free(&buf);
  hs_arena_reset(&a);
  return st;
}

void hs_table_appended_free(hs_table_appended *a) {
  if (a == NULL) return;
  for (size_t i = 0; i < a->n_batches; i++)
    if (a->batches[i].release != NULL) a->batches[i].release(&a->batches[i]);
  hs_free(a->batches);
  hs_arrow_schema_release(&a->schema);
  hs_free(a->data_path);
  hs_free(a);
}

/* Write the stream's batches to c->data_path. Sets records and file size.
 * With `keep`, each batch written is moved into it instead of released. */
static hs_status write_data(append_ctx *c, struct ArrowArrayStream *stream,
                            const struct ArrowSchema *stamped, hs_table_appended *keep,
                            hs_error *err) {
  hs_parquet_write_options po;
  hs_parquet_write_options_init(&po);
  hs_table_parquet_options(c->t, &po);
  hs_parquet_writer *w = NULL;
  hs_status st = hs_parquet_writer_open(c->data_path, stamped, &po, &w, err);
  if (st != HS_OK) return st;
  c->records = 0;
  for (;;) {
    struct ArrowArray batch;
    memset(&batch, 0, sizeof batch);
    int rc = stream->get_next(stream, &batch);
    if (rc != 0) {
      const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "append: input stream failed (%d): %s", rc,
                        m ? m : "no message");
      break;
    }
    if (batch.release == NULL) break;
    st = hs_arrow_array_validate(stamped, &batch, err);
    if (st == HS_OK) st = hs_parquet_writer_write(w, &batch, err);
    c->records += batch.length;
    if (st == HS_OK && keep != NULL && batch.length > 0) {
      if (keep->n_batches == keep->cap) {
        size_t cap = keep->cap ? 2 * keep->cap : 8;
        struct ArrowArray *nb = hs_realloc(keep->batches, cap * sizeof *nb);
        if (nb == NULL) {
          st = hs_error_set(err, HS_ERR_NOMEM, "append: out of memory");
        } else {
          keep->batches = nb;
          keep->cap = cap;
        }
      }
      if (st == HS_OK) {
        keep->batches[keep->n_batches++] = batch; /* moved */
        batch.release = NULL;
      }
    }
    if (batch.release != NULL) batch.release(&batch);
    if (st != HS_OK) break;
    hs_table_crash_point();
  }
  if (st != HS_OK || c->records == 0) {
    hs_parquet_writer_free(w); /* removes the file */
    return st;
  }
  /* Not synced here: the file and data/ join the commit's sync group. */
  st = hs_parquet_writer_close_unsynced(w, &c->data_fd, err);
  hs_parquet_writer_free(w); /* after a successful close: frees only */
  return st;
}

/* Manifest of the data file(s) written with `spec`, to c->manifest_path. */
static hs_status write_manifest(append_ctx *c, const hs_iceberg_partition_spec *spec,
                                hs_error *err) {
  hs_table *t = c->t;
  hs_iceberg_manifest_entry e;
  memset(&e, 0, sizeof e);
  e.status = HS_ICE_ENTRY_ADDED;
  hs_status st = HS_OK;
  if (c->files == NULL) {
    hs_iceberg_data_file_options dfo = {.schema = c->schema, .file_path = c->data_path};
    st = hs_iceberg_data_file_from_parquet_path(c->data_path, &dfo, &c->arena, &e.data_file, err);
    if (st != HS_OK) return st;
    c->file_size = e.data_file.file_size_in_bytes;
  }
  hs_iceberg_manifest_writer_options mo = {.format_version = t->meta.format_version,
                                           .content = HS_ICE_MANIFEST_DATA,
                                           .schema = c->schema,
                                           .spec = spec,
                                           .snapshot_id = c->snapshot_id,
                                           .sequence_number = t->meta.last_sequence_number + 1};
  hs_buf buf;
  hs_buf_init(&buf);
  hs_iceberg_manifest_writer *w = NULL;
  st = hs_iceberg_manifest_writer_open(&mo, &buf, NULL, &w, err);
  size_t n_entries = c->files ? c->n_files : 1;
  for (size_t i = 0; st == HS_OK && i < n_entries; i++) {
    if (c->files) e.data_file = c->files[i];
    st = hs_iceberg_manifest_writer_add(w, &e, err);
  }
  if (st == HS_OK) {
    st = hs_iceberg_manifest_writer_close(w, &c->manifest, &c->arena, err);
  } else {
    hs_iceberg_manifest_writer_free(w);
  }
  char uuid[37];
  if (st == HS_OK) st = hs_fs_uuid4(uuid, err);
  if (st == HS_OK) {
    snprintf(c->manifest_path, sizeof c->manifest_path, "%s/metadata/%s-m0.avro", t->root, uuid);
    /* Synced, with its directory entry, in the commit's sync group. */
    st = hs_fs_create_unsynced(c->manifest_path, buf.data, buf.len, &c->manifest_fd, err);
    if (st != HS_OK) c->manifest_path[0] = '\0';
  }
  hs_buf_free(&buf);
  c->manifest.manifest_path = c->manifest_path;
  return st;
}

/* Bring `t` up to the latest version. Cheap when it already is: one probe
 * for v{N+1} (a stat), no read or parse of metadata we hold. Handles that
 * hold no version yet, or metadata named as catalogs write it, take the
 * full path (hint, probe, load) in table.c. */
static hs_status refresh(hs_table *t, hs_error *err) {
  char path[4200];
  if (t->version >= 1 && !t->foreign_names && t->metadata_path != NULL &&
      hs_table_version_path(t->root, t->version + 1, path, sizeof path) && !hs_fs_exists(path)) {
    return HS_OK;
  }
  return hs_table_load_latest(t, err);
}

/* A table whose write.parquet.compression-codec names no codec we write
 * (hs_table_parquet_options sets (hs_codec)-1), or whose
 * hyperstream.parquet.page-version is not 1 or 2, refuses appends. */
static hs_status check_codec(const hs_table *t, hs_error *err) {
  hs_parquet_write_options po;
  hs_parquet_write_options_init(&po);
  hs_table_parquet_options(t, &po);
  if (po.data_page_version == 0) {
    const char *v = hs_iceberg_metadata_property(&t->meta, "hyperstream.parquet.page-version");
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: table property hyperstream.parquet.page-version = '%s': not 1 or 2",
                        t->metadata_path, v ? v : "");
  }
  switch (po.compression) {
  case HS_CODEC_UNCOMPRESSED:
  case HS_CODEC_SNAPPY:
  case HS_CODEC_GZIP:
  case HS_CODEC_BROTLI:
  case HS_CODEC_ZSTD:
  case HS_CODEC_LZ4_RAW: return HS_OK;
  default: break;
  }
  const char *v = hs_iceberg_metadata_property(&t->meta, "write.parquet.compression-codec");
  return hs_error_set(
      err, HS_ERR_UNSUPPORTED, "%s: table property write.parquet.compression-codec = '%s': %s",
      t->metadata_path, v ? v : "", "not one of uncompressed, snappy, gzip, lz4, zstd, brotli");
}

/* Before the first retry reloads `t`, move the version the append started
 * from into c->pin: c->schema (the data file's schema) and the partition
 * spec point into it and must outlive the reload. Later retries reload `t`
 * alone. On a failed reload the handle gets its old version back. */
static hs_status pin_and_reload(append_ctx *c, hs_error *err) {
  hs_table *t = c->t;
  if (c->pin != NULL) return hs_table_load_latest(t, err);
  if ((c->pin = hs_calloc(1, sizeof *c->pin)) == NULL) {
    return hs_error_set(err, HS_ERR_NOMEM, "append: out of memory");
  }
  hs_table *p = c->pin;
  p->arena = t->arena;
  p->meta = t->meta;
  p->metadata_path = t->metadata_path;
  p->version = t->version;
  hs_arena_init(&t->arena);
  memset(&t->meta, 0, sizeof t->meta);
  t->metadata_path = NULL;
  hs_status st = hs_table_load_latest(t, err);
  if (st != HS_OK) {
    /* t still holds nothing: hand the pinned version back. */
    hs_arena_reset(&t->arena);
    hs_free(t->metadata_path);
    t->arena = p->arena;
    t->meta = p->meta;
    t->metadata_path = p->metadata_path;
    t->version = p->version;
    t->meta_stamped = false;
    hs_arena_init(&p->arena);
    p->metadata_path = NULL;
    hs_free(p);
    c->pin = NULL;
  }
  return st;
}

static hs_status append(hs_table *t, struct ArrowArrayStream *stream, int64_t *snapshot_id_out,
                        hs_table_appended **kept, hs_error *err);

hs_status hs_table_append(hs_table *t, struct ArrowArrayStream *stream, int64_t *snapshot_id_out,
                          hs_error *err) {
  return append(t, stream, snapshot_id_out, NULL, err);
}

hs_status hs_table_append_keep(hs_table *t, struct ArrowArrayStream *stream,
                               int64_t *snapshot_id_out, hs_table_appended **kept, hs_error *err) {
  if (kept == NULL) return append(t, stream, snapshot_id_out, NULL, err);
  *kept = NULL;
  return append(t, stream, snapshot_id_out, kept, err);
}

/* The append; with `kept`, the single-file path keeps its batches (and the
 * input schema) and hands them back with the committed file's path/size. */
static hs_status append(hs_table *t, struct ArrowArrayStream *stream, int64_t *snapshot_id_out,
                        hs_table_appended **kept, hs_error *err) {
  if (snapshot_id_out) *snapshot_id_out = -1;
  if (stream == NULL || stream->release == NULL) {
    return hs_error_set(err, HS_ERR_INVALID_ARG, "append: no stream");
  }
  hs_status wst = hs_table_check_writable(t, "append", err);
  if (wst != HS_OK) {
    stream->release(stream);
    return wst;
  }
  append_ctx c;
  memset(&c, 0, sizeof c);
  c.t = t;
  c.data_fd = c.manifest_fd = -1;
  hs_arena_init(&c.arena);
  struct ArrowSchema in, stamped;
  memset(&in, 0, sizeof in);
  memset(&stamped, 0, sizeof stamped);
  bool committed = false;
  hs_status st = HS_OK;
  char uuid[37];
  hs_table_appended *keep = NULL;

  /* Start from the latest version: fewer lost races. Versions are published
   * in order, so when v{N+1} does not exist the handle's vN is the latest
   * and the metadata we already hold is reused (no re-read, no re-parse). */
  if ((st = refresh(t, err)) != HS_OK) goto done;
  if ((st = check_codec(t, err)) != HS_OK) goto done;
  c.schema_id = t->meta.current_schema_id;
  c.schema = hs_iceberg_metadata_schema(&t->meta, c.schema_id);
  if (c.schema == NULL) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: no current schema", t->metadata_path);
    goto done;
  }
  if (stream->get_schema(stream, &in) != 0) {
    const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
    st = hs_error_set(err, HS_ERR_INVALID_ARG, "append: input stream has no schema: %s",
                      m ? m : "no message");
    goto done;
  }
  if ((st = check_schema(t, c.schema, &in, &stamped, err)) != HS_OK) goto done;
  if ((st = random_snapshot_id(&c.snapshot_id, err)) != HS_OK) goto done;
  /* The pinned version's default spec and sort order shape the files; the
   * manifest carries the spec id, so a concurrent spec change is harmless. */
  const hs_iceberg_partition_spec *spec = NULL;
  const hs_iceberg_sort_order *order = NULL;
  for (size_t i = 0; i < t->meta.n_specs; i++)
    if (t->meta.specs[i].spec_id == t->meta.default_spec_id) spec = &t->meta.specs[i];
  for (size_t i = 0; t->meta.has_default_sort_order_id && i < t->meta.n_sort_orders; i++)
    if (t->meta.sort_orders[i].order_id == t->meta.default_sort_order_id)
      order = &t->meta.sort_orders[i];
  if (spec == NULL) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: no default partition spec", t->metadata_path);
    goto done;
  }
  if (spec->n_fields > 0 || (order != NULL && order->n_fields > 0)) {
    st = hs_table_write_clustered(t, c.schema, spec, order, &stamped, stream, &c.arena, &c.files,
                                  &c.n_files, err);
    if (st != HS_OK) goto done;
    c.records = 0;
    for (size_t i = 0; i < c.n_files; i++) {
      c.records += c.files[i].record_count;
      c.file_size += c.files[i].file_size_in_bytes;
    }
    if (c.n_files == 0) goto done; /* nothing to commit */
  } else {
    if ((st = hs_fs_uuid4(uuid, err)) != HS_OK) goto done;
    snprintf(c.data_path, sizeof c.data_path, "%s/data/00000-0-%s.parquet", t->root, uuid);
    if (kept != NULL && (keep = hs_calloc(1, sizeof *keep)) == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "append: out of memory");
      goto done;
    }
    if ((st = write_data(&c, stream, &stamped, keep, err)) != HS_OK) {
      c.data_path[0] = '\0'; /* the writer removed it */
      goto done;
    }
    if (c.records == 0) {
      c.data_path[0] = '\0';
      goto done; /* nothing to commit */
    }
  }
  hs_table_crash_point();
  if ((st = write_manifest(&c, spec, err)) != HS_OK) {
    /* the manifest reads the data file's footer back: gone means an orphan
     * sweep took it (publish_checked's case, met earlier); say so */
    const char *mine[] = {c.data_path};
    if (c.files == NULL && access(c.data_path, F_OK) != 0 && errno == ENOENT)
      st = hs_table_publish_check("append", mine, 1, err);
    goto done;
  }
  hs_table_crash_point();

  for (int attempt = 0; !committed && st == HS_OK; attempt++) {
    if (attempt == COMMIT_ATTEMPTS_MAX) {
      st = hs_error_set(err, HS_ERR_IO, "%s: commit lost %d races in a row; giving up", t->root,
                        COMMIT_ATTEMPTS_MAX);
      break;
    }
    if (attempt > 0) {
      hs_table_backoff(attempt);
      if ((st = pin_and_reload(&c, err)) != HS_OK) break;
      /* Re-validate: the data file was written with the pinned schema. */
      const hs_iceberg_schema *now =
          hs_iceberg_metadata_schema(&t->meta, t->meta.current_schema_id);
      if (now == NULL || t->meta.current_schema_id != c.schema_id ||
          !type_fits(&now->root, &c.schema->root, true, 0)) {
        st = hs_error_set(err, HS_ERR_SCHEMA,
                          "%s: the table schema changed during the append (schema id %d -> %d)",
                          t->metadata_path, (int)c.schema_id, (int)t->meta.current_schema_id);
        break;
      }
    }
    st = commit_attempt(&c, attempt, &committed, err);
  }
  if (committed && snapshot_id_out) *snapshot_id_out = c.snapshot_id;
  if (committed && keep != NULL && (keep->data_path = hs_strdup(c.data_path)) != NULL) {
    keep->file_size = c.file_size;
    keep->records = c.records;
    keep->schema = in; /* moved: the input's own types, as the batches have them */
    memset(&in, 0, sizeof in);
    *kept = keep;
    keep = NULL;
  }

done:
  hs_table_appended_free(keep);
  if (c.data_fd >= 0) close(c.data_fd);
  if (c.manifest_fd >= 0) close(c.manifest_fd);
  if (!committed && st != HS_OK && st != HS_ERR_NOMEM) {
    /* A forced orphan sweep may take this commit's files at any step
     * (reading a footer back, syncing, re-reading on a retry): whatever
     * step noticed, say what happened, before the files are cleaned up. */
    const char *mine[2] = {c.files == NULL ? c.data_path : NULL, c.manifest_path};
    bool gone = false;
    for (size_t i = 0; i < 2; i++)
      gone = gone || (mine[i] != NULL && mine[i][0] && access(mine[i], F_OK) != 0);
    for (size_t i = 0; i < c.n_files; i++) gone = gone || access(c.files[i].file_path, F_OK) != 0;
    if (gone) {
      hs_status pst = hs_table_publish_check("append", mine, 2, err);
      for (size_t i = 0; pst == HS_OK && i < c.n_files; i++) {
        const char *one[1] = {c.files[i].file_path};
        pst = hs_table_publish_check("append", one, 1, err);
      }
      if (pst != HS_OK) st = pst;
    }
  }
  if (!committed) {
    if (c.data_path[0]) (void)hs_fs_remove(c.data_path, NULL);
    for (size_t i = 0; i < c.n_files; i++) (void)hs_fs_remove(c.files[i].file_path, NULL);
    if (c.manifest_path[0]) (void)hs_fs_remove(c.manifest_path, NULL);
  }
  hs_arrow_schema_release(&stamped);
  hs_arrow_schema_release(&in);
  if (stream->release) stream->release(stream);
  hs_arena_reset(&c.arena);
  hs_table_free(c.pin);
  return st;
}
