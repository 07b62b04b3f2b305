/*
 * manifest_list.c — Iceberg manifest lists (spec "Manifest Lists"): the
 * manifest_file Avro schema with field ids 500.., its writer (header keys
 * snapshot-id, parent-snapshot-id, sequence-number, format-version, and in
 * v3 first-row-id, with row ids assigned to data manifests that have none)
 * and its reader (v1 names such as added_data_files_count accepted; absent
 * v1 fields default as appendix E says).
 */
#include <stdio.h>
#include <string.h>

#include "manifest.h"

#define OPT(name, type, id) \
  "{\"name\":\"" name "\",\"type\":[\"null\"," type "],\"default\":null,\"field-id\":" #id "}"
#define REQ(name, type, id) "{\"name\":\"" name "\",\"type\":" type ",\"field-id\":" #id "}"

/* clang-format off */
static const char LIST_SCHEMA_HEAD[] =
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
    REQ("manifest_path", "\"string\"", 500) ","
    REQ("manifest_length", "\"long\"", 501) ","
    REQ("partition_spec_id", "\"int\"", 502) ","
    REQ("content", "\"int\"", 517) ","
    REQ("sequence_number", "\"long\"", 515) ","
    REQ("min_sequence_number", "\"long\"", 516) ","
    REQ("added_snapshot_id", "\"long\"", 503) ","
    REQ("added_files_count", "\"int\"", 504) ","
    REQ("existing_files_count", "\"int\"", 505) ","
    REQ("deleted_files_count", "\"int\"", 506) ","
    REQ("added_rows_count", "\"long\"", 512) ","
    REQ("existing_rows_count", "\"long\"", 513) ","
    REQ("deleted_rows_count", "\"long\"", 514) ","
    OPT("partitions", "{\"type\":\"array\",\"element-id\":508,\"items\":{\"type\":\"record\","
        "\"name\":\"r508\",\"fields\":["
        REQ("contains_null", "\"boolean\"", 509) ","
        OPT("contains_nan", "\"boolean\"", 518) ","
        OPT("lower_bound", "\"bytes\"", 510) ","
        OPT("upper_bound", "\"bytes\"", 511) "]}}", 507) ","
    OPT("key_metadata", "\"bytes\"", 519);
static const char LIST_SCHEMA_V3[] = "," OPT("first_row_id", "\"long\"", 520);
/* clang-format on */

/* *shared: the schema is the process-wide cache's (do not free it). */
static hs_status list_schema(int32_t format_version, hs_avro_schema **out, bool *shared,
                             const char **writer_json, hs_error *err) {
  *shared = false;
  hs_buf b;
  hs_buf_init(&b);
  bool ok = hs_buf_append(&b, LIST_SCHEMA_HEAD, sizeof LIST_SCHEMA_HEAD - 1) &&
            (format_version < 3 || hs_buf_append(&b, LIST_SCHEMA_V3, sizeof LIST_SCHEMA_V3 - 1)) &&
            hs_buf_append(&b, "]}", 2);
  hs_status st = ok ? hs_ice_avro_schema_cached(&b, out, shared, writer_json, err)
                    : hs_error_set(err, HS_ERR_NOMEM, "manifest list schema: out of memory");
  hs_buf_free(&b);
  return st;
}

#define LONGV(x) ((hs_avro_value){.type = HS_AVRO_LONG, .u.i64 = (x)})
#define INTV(x) ((hs_avro_value){.type = HS_AVRO_INT, .u.i32 = (x)})

static hs_avro_value bytesv(const uint8_t *p, size_t len, hs_avro_type t) {
  hs_avro_value v = {.type = t};
  v.u.bytes.data = p ? p : (const uint8_t *)"";
  v.u.bytes.len = p ? len : 0;
  return v;
}

static hs_status file_build(const hs_avro_node *node, const hs_iceberg_manifest_file *f, bool v3,
                            bool has_row_id, int64_t row_id, hs_arena *a, hs_avro_value **out,
                            hs_error *err) {
  hs_avro_value *rec = hs_ice_av_record(a, node);
  if (rec == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest list: out of memory");
  hs_status st = HS_OK;
#define SET(name, v)                                                 \
  do {                                                               \
    if (st == HS_OK) st = hs_ice_av_set(a, node, rec, name, v, err); \
  } while (0)
  const char *path = f->manifest_path;
  SET("manifest_path", bytesv((const uint8_t *)path, path ? strlen(path) : 0, HS_AVRO_STRING));
  SET("manifest_length", LONGV(f->manifest_length));
  SET("partition_spec_id", INTV(f->partition_spec_id));
  SET("content", INTV((int32_t)f->content));
  SET("sequence_number", LONGV(f->sequence_number));
  SET("min_sequence_number", LONGV(f->min_sequence_number));
  SET("added_snapshot_id", LONGV(f->added_snapshot_id));
  SET("added_files_count", INTV(f->added_files_count));
  SET("existing_files_count", INTV(f->existing_files_count));
  SET("deleted_files_count", INTV(f->deleted_files_count));
  SET("added_rows_count", LONGV(f->added_rows_count));
  SET("existing_rows_count", LONGV(f->existing_rows_count));
  SET("deleted_rows_count", LONGV(f->deleted_rows_count));
  if (st == HS_OK && f->has_partitions) {
    int64_t fi = hs_avro_node_field_index(node, "partitions");
    const hs_avro_node *arr = node->fields[fi].type->branches[1], *sn = arr->items;
    hs_avro_value v = {.type = HS_AVRO_ARRAY};
    hs_avro_value *items = NULL;
    if (f->n_partitions > 0) {
      items = hs_arena_alloc(a, f->n_partitions * sizeof *items);
      if (items == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest list: out of memory");
    }
    for (size_t i = 0; i < f->n_partitions && st == HS_OK; i++) {
      const hs_iceberg_field_summary *s = &f->partitions[i];
      hs_avro_value *r = hs_ice_av_record(a, sn);
      if (r == NULL) return hs_error_set(err, HS_ERR_NOMEM, "manifest list: out of memory");
      hs_avro_value b = {.type = HS_AVRO_BOOLEAN, .u.boolean = s->contains_null};
      st = hs_ice_av_set(a, sn, r, "contains_null", b, err);
      b.u.boolean = s->contains_nan;
      if (st == HS_OK && s->has_contains_nan) st = hs_ice_av_set(a, sn, r, "contains_nan", b, err);
      if (st == HS_OK && s->lower_bound)
        st = hs_ice_av_set(a, sn, r, "lower_bound",
                           bytesv(s->lower_bound, s->lower_len, HS_AVRO_BYTES), err);
      if (st == HS_OK && s->upper_bound)
        st = hs_ice_av_set(a, sn, r, "upper_bound",
                           bytesv(s->upper_bound, s->upper_len, HS_AVRO_BYTES), err);
      items[i] = *r;
    }
    v.u.list.items = items;
    v.u.list.count = f->n_partitions;
    SET("partitions", v);
  }
  if (f->key_metadata)
    SET("key_metadata", bytesv(f->key_metadata, f->key_metadata_len, HS_AVRO_BYTES));
  if (v3 && has_row_id) SET("first_row_id", LONGV(row_id));
#undef SET
  *out = rec;
  return st;
}

static bool meta_int(hs_arena *a, hs_avro_meta_entry *m, const char *key, int64_t v) {
  char tmp[32];
  int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
  char *p = hs_arena_strndup(a, tmp, (size_t)n);
  *m = (hs_avro_meta_entry){key, (const uint8_t *)p, (size_t)n};
  return p != NULL;
}

hs_status hs_iceberg_manifest_list_write(const hs_iceberg_manifest_list_options *opts,
                                         const hs_iceberg_manifest_file *files, size_t n,
                                         hs_buf *buf, hs_sink *sink, int64_t *assigned_rows_out,
                                         hs_error *err) {
  if (assigned_rows_out) *assigned_rows_out = 0;
  if (opts == NULL || (buf == NULL) == (sink == NULL) || (n > 0 && files == NULL))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "manifest list: options and one output needed");
  if (opts->format_version < 2 || opts->format_version > 3)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "manifest list: format version %d",
                        (int)opts->format_version);
  bool v3 = opts->format_version >= 3;
  hs_avro_schema *schema = NULL;
  bool shared = false;
  const char *schema_json = NULL;
  hs_status st = list_schema(opts->format_version, &schema, &shared, &schema_json, err);
  if (st != HS_OK) return st;
  hs_arena a;
  hs_arena_init(&a);
  hs_avro_meta_entry meta[5];
  size_t nm = 0;
  bool ok = meta_int(&a, &meta[nm++], "snapshot-id", opts->snapshot_id);
  if (opts->has_parent_snapshot_id)
    ok = ok && meta_int(&a, &meta[nm++], "parent-snapshot-id", opts->parent_snapshot_id);
  else
    meta[nm++] = (hs_avro_meta_entry){"parent-snapshot-id", (const uint8_t *)"null", 4};
  ok = ok && meta_int(&a, &meta[nm++], "sequence-number", opts->sequence_number);
  ok = ok && meta_int(&a, &meta[nm++], "format-version", opts->format_version);
  if (v3) ok = ok && meta_int(&a, &meta[nm++], "first-row-id", opts->first_row_id);
  if (!ok) st = hs_error_set(err, HS_ERR_NOMEM, "manifest list: out of memory");
  hs_avro_writer *w = NULL;
  if (st == HS_OK) {
    hs_avro_writer_options ao = {0};
    ao.codec = HS_AVRO_CODEC_DEFLATE;
    ao.deflate_level = 1; /* Z_BEST_SPEED: lists and manifests are rewritten per commit */
    ao.meta = meta;
    ao.n_meta = nm;
    ao.sync = opts->sync;
    ao.schema_json = schema_json;
    st = hs_avro_writer_open(schema, &ao, buf, sink, &w, err);
  }
  int64_t next = opts->first_row_id;
  hs_arena scratch;
  hs_arena_init(&scratch);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    const hs_iceberg_manifest_file *f = &files[i];
    bool has_row_id = f->has_first_row_id;
    int64_t row_id = f->first_row_id;
    if (v3 && !has_row_id && f->content == HS_ICE_MANIFEST_DATA) {
      has_row_id = true;
      row_id = next;
      int64_t add = 0;
      if (f->added_rows_count < 0 || f->existing_rows_count < 0 ||
          __builtin_add_overflow(f->added_rows_count, f->existing_rows_count, &add) ||
          __builtin_add_overflow(next, add, &next))
        st = hs_error_set(err, HS_ERR_INVALID_ARG, "manifest list: row counts of %s overflow",
                          f->manifest_path ? f->manifest_path : "?");
    }
    if (st == HS_OK && f->manifest_path == NULL)
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "manifest list entry %zu: no manifest_path", i);
    hs_avro_value *rec = NULL;
    if (st == HS_OK)
      st = file_build(hs_avro_schema_root(schema), f, v3, has_row_id, row_id, &scratch, &rec, err);
    if (st == HS_OK) st = hs_avro_writer_append(w, rec, err);
    hs_arena_reset(&scratch);
  }
  if (st == HS_OK) {
    st = hs_avro_writer_close(w, err);
    w = NULL;
  }
  hs_avro_writer_free(w);
  if (!shared) hs_avro_schema_free(schema);
  hs_arena_reset(&a);
  if (st == HS_OK && v3 && assigned_rows_out) *assigned_rows_out = next - opts->first_row_id;
  if (st != HS_OK) hs_error_prefix(err, "manifest list: ");
  return st;
}

/* ------------------------------------------------------------ reader */

static hs_status get_i32(const hs_avro_node *node, const hs_avro_value *rec, const char *name,
                         const char *alt, int32_t *out, bool required, hs_error *err) {
  int64_t x = 0;
  bool has = false;
  hs_status st = hs_ice_av_get_long(node, rec, name, "manifest_file", &x, &has, err);
  if (st == HS_OK && !has && alt != NULL)
    st = hs_ice_av_get_long(node, rec, alt, "manifest_file", &x, &has, err);
  if (st != HS_OK) return st;
  if (!has && required) return hs_error_set(err, HS_ERR_CORRUPT, "missing %s", name);
  if (x < INT32_MIN || x > INT32_MAX)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s %lld out of int range", name, (long long)x);
  *out = (int32_t)x;
  return HS_OK;
}

static hs_status get_i64(const hs_avro_node *node, const hs_avro_value *rec, const char *name,
                         const char *alt, int64_t *out, hs_error *err) {
  bool has = false;
  hs_status st = hs_ice_av_get_long(node, rec, name, "manifest_file", out, &has, err);
  if (st == HS_OK && !has && alt != NULL)
    st = hs_ice_av_get_long(node, rec, alt, "manifest_file", out, &has, err);
  if (st == HS_OK && !has) *out = 0;
  return st;
}

static hs_status read_file(const hs_avro_node *node, const hs_avro_value *rec, hs_arena *arena,
                           hs_iceberg_manifest_file *f, hs_error *err) {
  memset(f, 0, sizeof *f);
  const uint8_t *p;
  size_t len;
  hs_status st =
      hs_ice_av_get_bytes(node, rec, "manifest_path", "manifest_file", true, arena, &p, &len, err);
  if (st != HS_OK) return st;
  f->manifest_path = (const char *)p;
  st = hs_ice_av_get_long(node, rec, "manifest_length", "manifest_file", &f->manifest_length, NULL,
                          err);
  if (st == HS_OK)
    st = get_i32(node, rec, "partition_spec_id", NULL, &f->partition_spec_id, true, err);
  int32_t content = 0;
  if (st == HS_OK) st = get_i32(node, rec, "content", NULL, &content, false, err);
  if (st == HS_OK && (content < 0 || content > 1))
    st = hs_error_set(err, HS_ERR_CORRUPT, "content %d", (int)content);
  f->content = (hs_iceberg_manifest_content)content;
  if (st == HS_OK) st = get_i64(node, rec, "sequence_number", NULL, &f->sequence_number, err);
  if (st == HS_OK)
    st = get_i64(node, rec, "min_sequence_number", NULL, &f->min_sequence_number, err);
  if (st == HS_OK)
    st = hs_ice_av_get_long(node, rec, "added_snapshot_id", "manifest_file", &f->added_snapshot_id,
                            NULL, err);
  if (st == HS_OK)
    st = get_i32(node, rec, "added_files_count", "added_data_files_count", &f->added_files_count,
                 false, err);
  if (st == HS_OK)
    st = get_i32(node, rec, "existing_files_count", "existing_data_files_count",
                 &f->existing_files_count, false, err);
  if (st == HS_OK)
    st = get_i32(node, rec, "deleted_files_count", "deleted_data_files_count",
                 &f->deleted_files_count, false, err);
  if (st == HS_OK) st = get_i64(node, rec, "added_rows_count", NULL, &f->added_rows_count, err);
  if (st == HS_OK)
    st = get_i64(node, rec, "existing_rows_count", NULL, &f->existing_rows_count, err);
  if (st == HS_OK) st = get_i64(node, rec, "deleted_rows_count", NULL, &f->deleted_rows_count, err);
  if (st != HS_OK) return st;
  const hs_avro_node *pt = NULL;
  const hs_avro_value *pv = hs_ice_av_get(node, rec, "partitions", &pt);
  if (pv != NULL) {
    if (pv->type != HS_AVRO_ARRAY || pt->items == NULL || pt->items->type != HS_AVRO_RECORD)
      return hs_error_set(err, HS_ERR_CORRUPT, "partitions is not an array of records");
    f->has_partitions = true;
    f->n_partitions = pv->u.list.count;
    if (f->n_partitions > 0) {
      f->partitions = hs_arena_alloc(arena, f->n_partitions * sizeof *f->partitions);
      if (f->partitions == NULL) return hs_error_set(err, HS_ERR_NOMEM, "out of memory");
    }
    const hs_avro_node *sn = pt->items;
    for (size_t i = 0; i < f->n_partitions && st == HS_OK; i++) {
      const hs_avro_value *s = &pv->u.list.items[i];
      hs_iceberg_field_summary *fs = &f->partitions[i];
      const hs_avro_value *b = hs_ice_av_get(sn, s, "contains_null", NULL);
      if (b != NULL && b->type == HS_AVRO_BOOLEAN) fs->contains_null = b->u.boolean;
      b = hs_ice_av_get(sn, s, "contains_nan", NULL);
      if (b != NULL && b->type == HS_AVRO_BOOLEAN) {
        fs->has_contains_nan = true;
        fs->contains_nan = b->u.boolean;
      }
      st = hs_ice_av_get_bytes(sn, s, "lower_bound", "partitions", false, arena, &fs->lower_bound,
                               &fs->lower_len, err);
      if (st == HS_OK)
        st = hs_ice_av_get_bytes(sn, s, "upper_bound", "partitions", false, arena, &fs->upper_bound,
                                 &fs->upper_len, err);
    }
    if (st != HS_OK) return st;
  }
  st = hs_ice_av_get_bytes(node, rec, "key_metadata", "manifest_file", false, arena,
                           &f->key_metadata, &f->key_metadata_len, err);
  if (st == HS_OK)
    st = hs_ice_av_get_long(node, rec, "first_row_id", "manifest_file", &f->first_row_id,
                            &f->has_first_row_id, err);
  return st;
}

static void meta_i64(hs_avro_reader *r, const char *key, bool *has, int64_t *out) {
  size_t len;
  const uint8_t *v = hs_avro_reader_meta_get(r, key, &len);
  *has = v != NULL && hs_ice_parse_i64(v, len, out);
}

hs_status hs_iceberg_manifest_list_read(const uint8_t *data, size_t len, hs_arena *arena,
                                        hs_iceberg_manifest_list *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_avro_reader *r = NULL;
  hs_status st = hs_avro_reader_open(data, len, NULL, &r, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "manifest list: ");
    return st;
  }
  const hs_avro_node *node = hs_avro_reader_datum_schema(r);
  if (node->type != HS_AVRO_RECORD || hs_avro_node_field_index(node, "manifest_path") < 0) {
    hs_avro_reader_free(r);
    return hs_error_set(err, HS_ERR_CORRUPT, "manifest list: schema is not a manifest_file record");
  }
  bool has = false;
  int64_t fv = 1;
  meta_i64(r, "format-version", &has, &fv);
  out->format_version = has && fv >= 1 && fv <= 3 ? (int32_t)fv : 1;
  meta_i64(r, "snapshot-id", &out->has_snapshot_id, &out->snapshot_id);
  meta_i64(r, "parent-snapshot-id", &out->has_parent_snapshot_id, &out->parent_snapshot_id);
  meta_i64(r, "sequence-number", &out->has_sequence_number, &out->sequence_number);
  meta_i64(r, "first-row-id", &out->has_first_row_id, &out->first_row_id);
  hs_arena scratch;
  hs_arena_init(&scratch);
  hs_iceberg_manifest_file *fs = NULL;
  size_t n = 0, cap = 0;
  while (st == HS_OK) {
    hs_avro_value v;
    has = false;
    st = hs_avro_reader_next(r, &scratch, &v, &has, err);
    if (st != HS_OK || !has) break;
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 32;
      hs_iceberg_manifest_file *g = hs_realloc(fs, nc * sizeof *g);
      if (g == NULL) {
        st = hs_error_set(err, HS_ERR_NOMEM, "manifest list: out of memory");
        break;
      }
      fs = g;
      cap = nc;
    }
    st = read_file(node, &v, arena, &fs[n], err);
    hs_arena_reset(&scratch);
    if (st != HS_OK) {
      hs_error_prefix(err, "manifest list entry %zu: ", n);
      break;
    }
    n++;
  }
  hs_arena_reset(&scratch);
  hs_avro_reader_free(r);
  if (st == HS_OK && n > 0) {
    out->files = hs_arena_memdup(arena, fs, n * sizeof *fs);
    if (out->files == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "manifest list: out of memory");
    out->n_files = n;
  }
  hs_free(fs);
  if (st != HS_OK) memset(out, 0, sizeof *out);
  return st;
}
