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
 *   4. v{N+1}'s bytes to a private temporary in metadata/; ONE sync
 *      set (txn.c, src/io/fs_sync.c): fdatasync of (1), (2), (3) and the
 *      temporary, each started when it was written, fsync of data/ and of
 *      metadata/ (the entries of (1), (2), (3)), all in flight together.
 *      Only when all of them returned:
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
#include "lineage.h"
#include "table.h"
#include "timetravel.h"
#include "txn.h"

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

hs_status hs_table_append_schema(const hs_table *t, const hs_iceberg_schema *ts,
                                 const struct ArrowSchema *in, struct ArrowSchema *stamped,
                                 hs_error *err) {
  /* Rewriters (rowdelta.c, compaction) may end the stream with the v3
   * row-lineage columns, written under their reserved field ids (lineage.h). */
  size_t k = hs_lineage_trailing(in);
  if (k == 0) return check_schema(t, ts, in, stamped, err);
  struct ArrowSchema core, cs;
  memset(&cs, 0, sizeof cs);
  hs_status st = hs_lineage_schema_core(t, in, k, &core, err);
  if (st != HS_OK) return st;
  st = check_schema(t, ts, &core, &cs, err);
  hs_arrow_schema_release(&core);
  if (st == HS_OK) st = hs_lineage_schema_stamp(&cs, in, k, stamped, err);
  return st;
}

/* ------------------------------------------------------------- commit */

typedef struct append_ctx {
  hs_table *t;
  hs_arena arena;
  hs_txn *txn; /* the commit: begun before anything is written */
  int32_t schema_id;
  /* The schema the data file is written with: it lives in the version the
   * transaction began on, which the txn keeps (pinned) across retries. */
  const hs_iceberg_schema *schema;
  char data_path[4200];
  int64_t file_size, records;
  /* Written but not yet synced (-1 once handed to the txn's sync group, or
   * for clustered files, which partition.c syncs). */
  int data_fd;
  /* Clustered writes (partitioned spec or sort order, partition.c): one
   * data file per partition, in c->arena; NULL for the single-file path. */
  hs_iceberg_data_file *files;
  size_t n_files;
} append_ctx;

void hs_table_appended_free(hs_table_appended *a) {
  if (a == NULL) return;
  for (size_t i = 0; i < a->n_batches; i++)
    if (a->batches[i].release != NULL) a->batches[i].release(&a->batches[i]);
  hs_free(a->batches);
  hs_arrow_schema_release(&a->schema);
  hs_free(a->data_path);
  hs_free(a);
}

/* Write the stream's batches to c->data_path. Sets records and, when any
 * were written, *df (the manifest entry, metrics from the footer written).
 * With `keep`, each batch written is moved into it instead of released. */
static hs_status write_data(append_ctx *c, struct ArrowArrayStream *stream,
                            const struct ArrowSchema *stamped, hs_table_appended *keep,
                            hs_iceberg_data_file *df, hs_error *err) {
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
  /* no read back of the file (on S3 a HEAD and GETs); a sweep taking it
   * before the publish is the publish check's case */
  hs_iceberg_data_file_options dfo = {.schema = c->schema, .file_path = c->data_path};
  if (st == HS_OK &&
      (st = hs_iceberg_data_file_from_parquet_writer(w, &dfo, &c->arena, df, err)) != HS_OK) {
    if (c->data_fd >= 0) close(c->data_fd);
    c->data_fd = -1;
    (void)hs_table_file_remove(c->data_path, NULL); /* as the writer does on failure */
  }
  hs_parquet_writer_free(w); /* after a successful close: frees only */
  return st;
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

/* On a retry: the data file was written with the pinned schema, which must
 * still be the table's current one. */
static hs_status schema_recheck(const hs_table *t, void *ctx, hs_error *err) {
  const append_ctx *c = ctx;
  const hs_iceberg_schema *now = hs_iceberg_metadata_schema(&t->meta, t->meta.current_schema_id);
  if (now == NULL || t->meta.current_schema_id != c->schema_id ||
      !type_fits(&now->root, &c->schema->root, true, 0)) {
    return hs_error_set(err, HS_ERR_SCHEMA,
                        "%s: the table schema changed during the append (schema id %d -> %d)",
                        t->metadata_path, (int)c->schema_id, (int)t->meta.current_schema_id);
  }
  return HS_OK;
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
  c.data_fd = -1;
  hs_arena_init(&c.arena);
  struct ArrowSchema in, stamped;
  memset(&in, 0, sizeof in);
  memset(&stamped, 0, sizeof stamped);
  bool committed = false;
  hs_status st = HS_OK;
  char uuid[37];
  hs_table_appended *keep = NULL;
  int64_t snapshot_id = -1;

  /* Start from the latest version: fewer lost races. Versions are published
   * in order, so when v{N+1} does not exist the handle's vN is the latest
   * and the metadata we already hold is reused (no re-read, no re-parse). */
  if ((st = hs_txn_begin(t, "append", &c.txn, err)) != HS_OK) goto done;
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
    st = hs_txn_add_files(c.txn, c.files, c.n_files, spec->spec_id, err);
  } else {
    if ((st = hs_fs_uuid4(uuid, err)) != HS_OK) goto done;
    snprintf(c.data_path, sizeof c.data_path, "%s/data/00000-0-%s.parquet", t->root, uuid);
    if (kept != NULL && (keep = hs_calloc(1, sizeof *keep)) == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "append: out of memory");
      goto done;
    }
    hs_iceberg_data_file df;
    if ((st = write_data(&c, stream, &stamped, keep, &df, err)) != HS_OK) {
      c.data_path[0] = '\0'; /* the writer removed it */
      goto done;
    }
    if (c.records == 0) {
      c.data_path[0] = '\0';
      goto done; /* nothing to commit */
    }
    hs_table_crash_point();
    c.file_size = df.file_size_in_bytes;
    st = hs_txn_add_files(c.txn, &df, 1, spec->spec_id, err);
    if (st == HS_OK && (st = hs_txn_add_written(c.txn, c.data_path, c.data_fd, err)) == HS_OK)
      c.data_fd = -1; /* the txn's now: synced in its group, closed by it */
  }
  if (st != HS_OK) goto done;
  hs_txn_set_operation(c.txn, HS_TXN_OP_APPEND);
  hs_txn_set_schema_id(c.txn, c.schema_id);
  hs_txn_set_recheck(c.txn, schema_recheck, &c);
  st = hs_txn_commit(c.txn, &snapshot_id, &committed, err);
  if (committed && snapshot_id_out) *snapshot_id_out = snapshot_id;
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
  if (!committed && st != HS_OK && st != HS_ERR_NOMEM) {
    /* A forced orphan sweep may take this commit's files at any step
     * (reading a footer back, syncing, re-reading on a retry): whatever
     * step noticed, say what happened, before the files are cleaned up. */
    const char *mine[1] = {c.files == NULL ? c.data_path : NULL};
    bool gone = !t->remote && mine[0] != NULL && mine[0][0] && access(mine[0], F_OK) != 0;
    for (size_t i = 0; !t->remote && i < c.n_files; i++)
      gone = gone || access(c.files[i].file_path, F_OK) != 0;
    if (gone) {
      hs_status pst = hs_table_publish_check("append", mine, 1, err);
      for (size_t i = 0; pst == HS_OK && i < c.n_files; i++) {
        const char *one[1] = {c.files[i].file_path};
        pst = hs_table_publish_check("append", one, 1, err);
      }
      if (pst != HS_OK) st = pst;
    }
  }
  if (!committed) {
    if (c.data_path[0]) (void)hs_table_file_remove(c.data_path, NULL);
    for (size_t i = 0; i < c.n_files; i++) (void)hs_table_file_remove(c.files[i].file_path, NULL);
  }
  hs_arrow_schema_release(&stamped);
  hs_arrow_schema_release(&in);
  if (stream->release) stream->release(stream);
  hs_txn_free(c.txn); /* the pinned version c.schema lives in; our manifest if not committed */
  if (c.data_fd >= 0) close(c.data_fd);
  hs_arena_reset(&c.arena);
  return st;
}
