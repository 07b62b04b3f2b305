/*
 * schema_map.c — data files under older schemas (schema_map.h): the read
 * schema of a snapshot, the field-id map from wanted columns to a file's
 * columns, and batch adaptation (move, promote, NULL-fill).
 *
 * Matching: a file whose top-level columns carry PARQUET:field_id is
 * matched by id only (a renamed column is found under its old name, a
 * dropped-and-re-added name is not mistaken for the old column). A file
 * without any is matched through `schema.name-mapping.default` (names ->
 * field id, Iceberg's JSON), else by the read schema's names. Nested types
 * are not evolved here: a nested column must have the same formats and
 * (where both carry them) the same field ids at every level, else the
 * read fails rather than return data under the wrong names.
 */
#include "schema_map.h"
#include "lineage.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const hs_iceberg_schema *hs_table_read_schema(const hs_table *t, int64_t snapshot_id) {
  const hs_iceberg_snapshot *snap =
      snapshot_id == -1 ? NULL : hs_iceberg_metadata_snapshot(&t->meta, snapshot_id);
  if (snap != NULL && snap->has_schema_id) {
    const hs_iceberg_schema *s = hs_iceberg_metadata_schema(&t->meta, snap->schema_id);
    if (s != NULL) return s;
  }
  return hs_iceberg_metadata_schema(&t->meta, t->meta.current_schema_id);
}

hs_status hs_table_read_schema_arrow(const hs_table *t, int64_t snapshot_id,
                                     struct ArrowSchema *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  const hs_iceberg_schema *s = hs_table_read_schema(t, snapshot_id);
  if (s == NULL)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: no current schema", t->metadata_path);
  return hs_iceberg_schema_to_arrow(s, &t->meta, out, err);
}

/* ------------------------------------------------------------ matching */

void hs_colmap_ctx_free(hs_colmap_ctx *c) {
  if (c == NULL) return;
  for (size_t i = 0; c->names != NULL && i < c->n; i++) hs_free(c->names[i]);
  hs_free(c->names);
  hs_free(c->ids);
  for (size_t i = 0; c->defaults != NULL && i < c->n; i++) hs_free(c->defaults[i]);
  hs_free(c->defaults);
  hs_free(c->name_mapping);
  memset(c, 0, sizeof *c);
}

hs_status hs_colmap_ctx_init(const hs_table *t, const hs_iceberg_schema *schema, hs_colmap_ctx *out,
                             hs_error *err) {
  memset(out, 0, sizeof *out);
  size_t n = schema != NULL ? schema->root.n_fields : 0;
  const char *nm = hs_iceberg_metadata_property(&t->meta, "schema.name-mapping.default");
  out->ids = hs_calloc(n + 1, sizeof *out->ids);
  out->names = hs_calloc(n + 1, sizeof *out->names);
  out->defaults = hs_calloc(n + 1, sizeof *out->defaults);
  bool ok = out->ids != NULL && out->names != NULL && out->defaults != NULL;
  if (ok && nm != NULL) ok = (out->name_mapping = hs_strdup(nm)) != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    const hs_iceberg_field *f = &schema->root.fields[i];
    out->ids[i] = f->id;
    out->n = i + 1;
    ok = (out->names[i] = hs_strdup(f->name)) != NULL;
    if (ok && f->initial_default != NULL && strcmp(f->initial_default, "null") != 0)
      ok = (out->defaults[i] = hs_strdup(f->initial_default)) != NULL;
  }
  if (ok) return HS_OK;
  hs_colmap_ctx_free(out);
  return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
}

/* Field id of top-level name `name` in the name mapping (JSON array of
 * {"field-id", "names"}), or -1. */
static int32_t mapped_id(json_t *mapping, const char *name) {
  size_t i;
  json_t *e;
  json_array_foreach(mapping, i, e) {
    json_t *id = json_object_get(e, "field-id"), *names = json_object_get(e, "names");
    if (!json_is_integer(id) || !json_is_array(names)) continue;
    size_t k;
    json_t *nm;
    json_array_foreach(names, k, nm) {
      if (json_is_string(nm) && strcmp(json_string_value(nm), name) == 0)
        return (int32_t)json_integer_value(id);
    }
  }
  return -1;
}

/* Field id of each top-level column of `file` (-1: none). */
static hs_status file_ids(const hs_colmap_ctx *ctx, const struct ArrowSchema *file, int32_t *ids) {
  bool any = false;
  for (int64_t j = 0; j < file->n_children; j++)
    any |= (ids[j] = hs_arrow_field_id(file->children[j])) >= 0;
  if (any) return HS_OK;
  json_t *mapping = ctx->name_mapping != NULL ? json_loads(ctx->name_mapping, 0, NULL) : NULL;
  for (int64_t j = 0; j < file->n_children; j++) {
    const char *name = file->children[j]->name ? file->children[j]->name : "";
    if (json_is_array(mapping)) {
      ids[j] = mapped_id(mapping, name);
      continue;
    }
    for (size_t k = 0; k < ctx->n; k++)
      if (strcmp(ctx->names[k], name) == 0) ids[j] = ctx->ids[k];
  }
  json_decref(mapping);
  return HS_OK;
}

/* Same formats, child counts and (where both have them) field ids below
 * the top: a file's nested column that reads exactly as the wanted one. */
static bool same_tree(const struct ArrowSchema *a, const struct ArrowSchema *b, int depth) {
  if (depth > 64 || strcmp(a->format, b->format) != 0 || a->n_children != b->n_children)
    return false;
  if (depth > 0) {
    int32_t x = hs_arrow_field_id(a), y = hs_arrow_field_id(b);
    if (x >= 0 && y >= 0 && x != y) return false;
  }
  for (int64_t i = 0; i < a->n_children; i++)
    if (!same_tree(a->children[i], b->children[i], depth + 1)) return false;
  return true;
}

/* Same nesting: child counts and (where both have them) field ids at every
 * level, formats aside (a vector column may be a list in the file and a
 * fixed-size list in the schema). */
static bool same_nesting(const struct ArrowSchema *a, const struct ArrowSchema *b, int depth) {
  if (depth > 64 || a->n_children != b->n_children) return false;
  if (depth > 0) {
    int32_t x = hs_arrow_field_id(a), y = hs_arrow_field_id(b);
    if (x >= 0 && y >= 0 && x != y) return false;
  }
  for (int64_t i = 0; i < a->n_children; i++)
    if (!same_nesting(a->children[i], b->children[i], depth + 1)) return false;
  return true;
}

/* The promotion from file format `f` to wanted format `w`, or PASS when
 * none applies (the caller then compares trees). */
static hs_colmap_conv promotion(const char *f, const char *w, bool fixed) {
  /* The same Iceberg string/binary in 32- or 64-bit offsets (pyarrow writes
   * large types when its schema said so): converted to the output's. */
  if (fixed && ((strcmp(f, "u") == 0 && strcmp(w, "U") == 0) ||
                (strcmp(f, "U") == 0 && strcmp(w, "u") == 0) ||
                (strcmp(f, "z") == 0 && strcmp(w, "Z") == 0) ||
                (strcmp(f, "Z") == 0 && strcmp(w, "z") == 0)))
    return HS_COLMAP_OFFSETS;
  if (strcmp(f, "i") == 0 && strcmp(w, "l") == 0) return HS_COLMAP_I32_I64;
  if (strcmp(f, "f") == 0 && strcmp(w, "g") == 0) return HS_COLMAP_F32_F64;
  int p1, s1, p2, s2;
  char x1, x2;
  if (sscanf(f, "d:%d,%d%c", &p1, &s1, &x1) == 2 && sscanf(w, "d:%d,%d%c", &p2, &s2, &x2) == 2 &&
      s1 == s2 && p1 < p2 && p2 <= 38)
    return HS_COLMAP_RELABEL;
  return HS_COLMAP_PASS;
}

/* `src` deep-copied into `dst` under `name`, with `id_from`'s metadata. */
static hs_status copy_as(const struct ArrowSchema *src, const struct ArrowSchema *id_from,
                         struct ArrowSchema *dst, hs_error *err) {
  hs_status st =
      hs_arrow_schema_init(dst, src->format, id_from->name, id_from->flags, src->n_children, err);
  if (st != HS_OK) return st;
  int32_t id = hs_arrow_field_id(id_from);
  if (id >= 0) {
    char buf[16];
    snprintf(buf, sizeof buf, "%d", (int)id);
    const char *k = "PARQUET:field_id", *v = buf;
    st = hs_arrow_schema_set_metadata(dst, &k, &v, 1, err);
  }
  for (int64_t i = 0; st == HS_OK && i < src->n_children; i++) {
    hs_arrow_schema_release(dst->children[i]);
    st = hs_arrow_schema_copy(src->children[i], dst->children[i], err);
  }
  if (st != HS_OK) hs_arrow_schema_release(dst);
  return st;
}

void hs_colmap_free(hs_colmap *m) {
  if (m == NULL) return;
  for (size_t i = 0; m->file_names != NULL && i < m->n; i++) hs_free(m->file_names[i]);
  for (size_t i = 0; m->read != NULL && i < m->n_read; i++) hs_free(m->read[i]);
  for (size_t i = 0; m->def != NULL && i < m->n; i++) hs_free(m->def[i]);
  hs_free(m->def);
  hs_free(m->def_len);
  hs_free(m->file_names);
  hs_free(m->read);
  hs_free(m->conv);
  hs_free(m->src);
  hs_free(m->path);
  hs_free(m->rows_in);
  hs_free(m->lin);
  hs_arrow_schema_release(&m->out);
  memset(m, 0, sizeof *m);
}

/* The initial-default of top-level field `id` (JSON text), or NULL. */
static const char *default_of(const hs_colmap_ctx *ctx, int32_t id) {
  for (size_t k = 0; ctx->defaults != NULL && k < ctx->n; k++)
    if (ctx->ids[k] == id) return ctx->defaults[k];
  return NULL;
}

static hs_status map_column(const hs_colmap_ctx *ctx, const struct ArrowSchema *w,
                            const struct ArrowSchema *file, const int32_t *ids, bool fixed,
                            const char *path, hs_colmap *m, size_t i, hs_error *err) {
  int32_t id = hs_arrow_field_id(w);
  int64_t j = 0;
  while (j < file->n_children && (id < 0 || ids[j] != id)) j++;
  struct ArrowSchema *o = m->out.children[i];
  hs_arrow_schema_release(o);
  m->src[i] = -1;
  hs_lineage_kind lk = hs_lineage_of_field(id);
  if (lk != HS_LINEAGE_NONE) { /* v3 row lineage: stored where present, else inherited */
    m->conv[i] = lk == HS_LINEAGE_ROW_ID_COL ? HS_COLMAP_ROW_ID : HS_COLMAP_LAST_SEQ;
    if (j < file->n_children) {
      const struct ArrowSchema *fc = file->children[j];
      if (strcmp(fc->format, "l") != 0)
        return hs_error_set(err, HS_ERR_SCHEMA,
                            "%s: row-lineage column '%s' (field id %d) is stored as '%s', not "
                            "a long",
                            path, fc->name ? fc->name : "", (int)id, fc->format);
      if ((m->file_names[i] = hs_strdup(fc->name ? fc->name : "")) == NULL)
        return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      m->src[i] = (int64_t)m->n_read;
      if ((m->read[m->n_read++] = hs_strdup(m->file_names[i])) == NULL)
        return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    }
    return hs_arrow_schema_copy(w, o, err);
  }
  if (j == file->n_children) {
    const char *d = default_of(ctx, id);
    if (d != NULL) { /* v3: the file predates the field, which reads as its default */
      hs_status st = hs_colmap_default_parse(d, w, &m->def[i], &m->def_len[i], err);
      if (st != HS_OK) {
        hs_error_prefix(err, "%s: ", path);
        return st;
      }
      if ((m->file_names[i] = hs_strdup("")) == NULL)
        return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
      m->conv[i] = HS_COLMAP_DEFAULT;
      return hs_arrow_schema_copy(w, o, err);
    }
    m->conv[i] = HS_COLMAP_NULLS;
    return hs_arrow_schema_copy(w, o, err);
  }
  const struct ArrowSchema *fc = file->children[j];
  if ((m->file_names[i] = hs_strdup(fc->name ? fc->name : "")) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  m->src[i] = (int64_t)m->n_read;
  if ((m->read[m->n_read++] = hs_strdup(m->file_names[i])) == NULL)
    return hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  hs_colmap_conv c = promotion(fc->format, w->format, fixed);
  /* A vector column (fixed_size_list<float, D> in the read schema: Iceberg
   * list<float> with our dimension property) that another engine appended
   * as a plain list<float>: read as the vector type. */
  if (c == HS_COLMAP_PASS && strncmp(w->format, "+w:", 3) == 0 &&
      (strcmp(fc->format, "+l") == 0 || strcmp(fc->format, "+L") == 0) && w->n_children == 1 &&
      fc->n_children == 1 && strcmp(w->children[0]->format, "f") == 0 &&
      strcmp(fc->children[0]->format, "f") == 0 && same_nesting(fc, w, 0))
    c = fc->format[1] == 'L' ? HS_COLMAP_LLIST_FSL : HS_COLMAP_LIST_FSL;
  m->conv[i] = c;
  if (c != HS_COLMAP_PASS) return hs_arrow_schema_copy(w, o, err);
  if (!fixed && same_nesting(fc, w, 0)) return copy_as(fc, w, o, err);
  if (!same_tree(fc, w, 0)) {
    return hs_error_set(err, HS_ERR_SCHEMA,
                        "%s: column '%s' (field id %d) is stored as '%s', which does not read "
                        "as the scan's '%s'",
                        path, w->name ? w->name : "", (int)id, fc->format, w->format);
  }
  return hs_arrow_schema_copy(w, o, err);
}

hs_status hs_colmap_build(const hs_colmap_ctx *ctx, const struct ArrowSchema *want,
                          const struct ArrowSchema *file, bool fixed, const char *path,
                          hs_colmap *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  size_t n = (size_t)want->n_children, nf = (size_t)file->n_children;
  out->n = n;
  out->file_names = hs_calloc(n + 1, sizeof *out->file_names);
  out->conv = hs_calloc(n + 1, sizeof *out->conv);
  out->src = hs_calloc(n + 1, sizeof *out->src);
  out->read = hs_calloc(n + 1, sizeof *out->read);
  out->def = hs_calloc(n + 1, sizeof *out->def);
  out->def_len = hs_calloc(n + 1, sizeof *out->def_len);
  out->path = hs_strdup(path != NULL ? path : "");
  out->rows_in = hs_calloc(1, sizeof *out->rows_in);
  out->lin = hs_calloc(1, sizeof *out->lin);
  if (out->lin != NULL) out->lin->first_row_id = -1;
  int32_t *ids = hs_calloc(nf + 1, sizeof *ids);
  hs_status st = HS_OK;
  if (out->file_names == NULL || out->conv == NULL || out->src == NULL || out->read == NULL ||
      out->def == NULL || out->def_len == NULL || out->path == NULL || out->rows_in == NULL ||
      out->lin == NULL || ids == NULL)
    st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  if (st == HS_OK) st = file_ids(ctx, file, ids);
  if (st == HS_OK) st = hs_arrow_schema_init(&out->out, "+s", "", 0, (int64_t)n, err);
  for (size_t i = 0; st == HS_OK && i < n; i++)
    st = map_column(ctx, want->children[i], file, ids, fixed, path, out, i, err);
  if (st == HS_OK && out->n_read == 0) { /* row counts only: the file's first column */
    if (nf == 0) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "%s: the data file has no columns", path);
    } else if ((out->read[out->n_read++] =
                    hs_strdup(file->children[0]->name ? file->children[0]->name : "")) == NULL) {
      st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
    }
  }
  if (st == HS_OK) {
    out->identity = out->n_read == n;
    for (size_t i = 0; out->identity && i < n; i++)
      out->identity = out->conv[i] == HS_COLMAP_PASS && out->src[i] == (int64_t)i;
  }
  hs_free(ids);
  if (st != HS_OK) hs_colmap_free(out);
  return st;
}

/* ----------------------------------------------------------- batches */

static uint8_t *zeros(size_t n, hs_error *err) {
  uint8_t *p = hs_calloc(n ? n : 1, 1);
  if (p == NULL) hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  return p;
}

hs_status hs_colmap_null_array(const struct ArrowSchema *type, int64_t length,
                               struct ArrowArray *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_arrow_type at;
  hs_status st = hs_arrow_type_parse(type->format, &at, err);
  if (st != HS_OK) return st;
  size_t n = (size_t)length, bits = (n + 7) / 8;
  if (at.id == HS_AT_NA) {
    if ((st = hs_arrow_array_init(out, 0, 0, err)) != HS_OK) return st;
    out->length = length;
    out->null_count = length;
    return HS_OK;
  }
  int64_t n_buffers = 2, n_children = 0;
  size_t second = 0, third = 0; /* bytes of buffers 1 and 2 */
  int64_t child_len = 0;
  int w = hs_arrow_type_byte_width(&at);
  switch (at.id) {
  case HS_AT_STRING:
  case HS_AT_BINARY: n_buffers = 3, second = (n + 1) * 4, third = 1; break;
  case HS_AT_LARGE_STRING:
  case HS_AT_LARGE_BINARY: n_buffers = 3, second = (n + 1) * 8, third = 1; break;
  case HS_AT_LIST:
  case HS_AT_MAP: second = (n + 1) * 4, n_children = 1; break;
  case HS_AT_LARGE_LIST: second = (n + 1) * 8, n_children = 1; break;
  case HS_AT_FIXED_LIST: n_buffers = 1, n_children = 1, child_len = length * at.width; break;
  case HS_AT_STRUCT: n_buffers = 1, n_children = type->n_children, child_len = length; break;
  case HS_AT_BOOL: second = bits; break;
  default:
    if (w <= 0) {
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s': no NULL fill for type '%s'",
                          type->name ? type->name : "", type->format);
    }
    second = n * (size_t)w;
  }
  if (n_children != type->n_children)
    return hs_error_set(err, HS_ERR_SCHEMA, "column '%s': malformed type", type->name);
  if ((st = hs_arrow_array_init(out, n_buffers, n_children, err)) != HS_OK) return st;
  out->length = length;
  out->null_count = length;
  uint8_t *b0 = zeros(bits, err), *b1 = n_buffers > 1 ? zeros(second, err) : NULL;
  uint8_t *b2 = n_buffers > 2 ? zeros(third, err) : NULL;
  hs_arrow_array_set_buffer(out, 0, b0);
  if (n_buffers > 1) hs_arrow_array_set_buffer(out, 1, b1);
  if (n_buffers > 2) hs_arrow_array_set_buffer(out, 2, b2);
  if (b0 == NULL || (n_buffers > 1 && b1 == NULL) || (n_buffers > 2 && b2 == NULL))
    st = HS_ERR_NOMEM;
  for (int64_t c = 0; st == HS_OK && c < n_children; c++)
    st = hs_colmap_null_array(type->children[c], child_len, out->children[c], err);
  if (st != HS_OK) out->release(out);
  return st;
}

static bool bit_get(const uint8_t *v, int64_t i) {
  return (v[i >> 3] >> (i & 7)) & 1;
}

/* The validity of `a` (n rows from its offset) as a fresh bitmap from bit
 * 0; NULL (and *nulls 0) when it has none. */
static hs_status validity_copy(const struct ArrowArray *a, uint8_t **out, hs_error *err) {
  *out = NULL;
  const uint8_t *v = a->n_buffers > 0 ? a->buffers[0] : NULL;
  if (v == NULL || a->null_count == 0) return HS_OK;
  size_t n = (size_t)a->length;
  uint8_t *b = zeros((n + 7) / 8, err);
  if (b == NULL) return HS_ERR_NOMEM;
  for (int64_t i = 0; i < a->length; i++)
    if (bit_get(v, a->offset + i)) b[i >> 3] |= (uint8_t)(1u << (i & 7));
  *out = b;
  return HS_OK;
}

/* Widen a primitive int32/float32 array to 64 bits; `c` is consumed. */
static hs_status widen(struct ArrowArray *c, hs_colmap_conv conv, struct ArrowArray *out,
                       hs_error *err) {
  memset(out, 0, sizeof *out);
  size_t n = (size_t)c->length;
  uint8_t *valid = NULL;
  hs_status st = validity_copy(c, &valid, err);
  void *vals = st == HS_OK ? hs_malloc(n ? n * 8 : 8) : NULL;
  if (st == HS_OK && vals == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  if (st == HS_OK && c->length > 0 && (c->n_buffers < 2 || c->buffers[1] == NULL))
    st = hs_error_set(err, HS_ERR_CORRUPT, "scan: a column without values");
  if (st == HS_OK) {
    if (conv == HS_COLMAP_I32_I64) {
      const int32_t *s = (const int32_t *)c->buffers[1] + c->offset;
      int64_t *d = vals;
      for (size_t i = 0; i < n; i++) d[i] = s[i];
    } else {
      const float *s = (const float *)c->buffers[1] + c->offset;
      double *d = vals;
      for (size_t i = 0; i < n; i++) d[i] = s[i];
    }
  }
  int64_t nulls = valid != NULL ? c->null_count : 0;
  int64_t len = c->length;
  c->release(c);
  if (st != HS_OK) {
    hs_free(valid);
    hs_free(vals);
    return st;
  }
  return hs_arrow_array_make_primitive(out, len, vals, valid, nulls, err);
}

/* A string/binary array with the other offset width; `c` is consumed. */
static hs_status reoffset(struct ArrowArray *c, bool to_large, struct ArrowArray *out,
                          hs_error *err) {
  memset(out, 0, sizeof *out);
  size_t n = (size_t)c->length, off = (size_t)c->offset;
  bool from_large = !to_large;
  hs_status st = HS_OK;
  int64_t first = 0, last = 0;
  const void *so = c->n_buffers > 2 ? c->buffers[1] : NULL;
  const uint8_t *data = c->n_buffers > 2 ? c->buffers[2] : NULL;
  if (so == NULL) {
    st = hs_error_set(err, HS_ERR_CORRUPT, "scan: a string column without offsets");
  } else {
    first = from_large ? ((const int64_t *)so)[off] : ((const int32_t *)so)[off];
    last = from_large ? ((const int64_t *)so)[off + n] : ((const int32_t *)so)[off + n];
    if (last < first || (!to_large && last - first > INT32_MAX) || (last > first && !data))
      st = hs_error_set(err, HS_ERR_CORRUPT, "scan: string offsets out of range");
  }
  uint8_t *valid = NULL;
  if (st == HS_OK) st = validity_copy(c, &valid, err);
  void *offs = st == HS_OK ? hs_malloc((n + 1) * (to_large ? 8 : 4)) : NULL;
  uint8_t *bytes = st == HS_OK ? hs_malloc((size_t)(last - first) + 1) : NULL;
  if (st == HS_OK && (offs == NULL || bytes == NULL))
    st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  if (st == HS_OK) {
    for (size_t i = 0; i <= n; i++) {
      int64_t v =
          (from_large ? ((const int64_t *)so)[off + i] : ((const int32_t *)so)[off + i]) - first;
      if (to_large)
        ((int64_t *)offs)[i] = v;
      else
        ((int32_t *)offs)[i] = (int32_t)v;
    }
    if (last > first) memcpy(bytes, data + first, (size_t)(last - first));
  }
  int64_t nulls = valid != NULL ? c->null_count : 0, len = c->length;
  c->release(c);
  if (st != HS_OK) {
    hs_free(valid);
    hs_free(offs);
    hs_free(bytes);
    return st;
  }
  return hs_arrow_array_make_binary(out, len, offs, bytes, valid, nulls, err);
}

/* A list<float> array (32- or 64-bit offsets) as fixed_size_list<float,
 * dim>: each non-null row must hold exactly `dim` floats (HS_ERR_SCHEMA
 * naming the file, its row `row0 + i` and the length); NULL rows become
 * `dim` zeroed NULL slots' worth of values. `c` is consumed. */
static hs_status list_to_fixed(struct ArrowArray *c, bool large, int32_t dim, const char *path,
                               const char *column, int64_t row0, struct ArrowArray *out,
                               hs_error *err) {
  memset(out, 0, sizeof *out);
  size_t n = (size_t)c->length, off = (size_t)c->offset;
  const void *so = c->n_buffers > 1 ? c->buffers[1] : NULL;
  const struct ArrowArray *e = c->n_children == 1 ? c->children[0] : NULL;
  const uint8_t *lv = c->n_buffers > 0 && c->null_count != 0 ? c->buffers[0] : NULL;
  hs_status st = HS_OK;
  if ((so == NULL && n > 0) || e == NULL || (e->length > 0 && (e->n_buffers < 2 || !e->buffers[1])))
    st = hs_error_set(err, HS_ERR_CORRUPT, "%s: column '%s': a list array without its parts", path,
                      column);
  float *vals = NULL;
  uint8_t *valid = NULL, *evalid = NULL;
  int64_t nulls = 0, enulls = 0;
  size_t total = n * (size_t)dim;
  if (st == HS_OK) {
    vals = hs_calloc(total ? total : 1, sizeof *vals);
    valid = lv != NULL ? zeros((n + 7) / 8, err) : NULL;
    if (vals == NULL || (lv != NULL && valid == NULL))
      st = hs_error_set(err, HS_ERR_NOMEM, "scan: out of memory");
  }
  const float *ev = e != NULL && e->n_buffers > 1 ? (const float *)e->buffers[1] : NULL;
  const uint8_t *eb = e != NULL && e->n_buffers > 0 && e->null_count != 0 ? e->buffers[0] : NULL;
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    if (lv != NULL && !bit_get(lv, (int64_t)(off + i))) {
      nulls++;
      continue;
    }
    if (valid != NULL) valid[i >> 3] |= (uint8_t)(1u << (i & 7));
    int64_t a = large ? ((const int64_t *)so)[off + i] : ((const int32_t *)so)[off + i];
    int64_t b = large ? ((const int64_t *)so)[off + i + 1] : ((const int32_t *)so)[off + i + 1];
    if (b - a != dim) {
      st = hs_error_set(err, HS_ERR_SCHEMA,
                        "%s: row %lld (0-based, of the rows this read took from the file): "
                        "column '%s' holds a list of %lld floats; the table's vector column has "
                        "dimension %d",
                        path, (long long)(row0 + (int64_t)i), column, (long long)(b - a), (int)dim);
      break;
    }
    if (a < 0 || b > e->length) {
      st = hs_error_set(err, HS_ERR_CORRUPT, "%s: row %lld: column '%s': list out of range", path,
                        (long long)(row0 + (int64_t)i), column);
      break;
    }
    for (int32_t k = 0; k < dim; k++) {
      int64_t at = e->offset + a + k;
      if (eb != NULL && !bit_get(eb, at)) {
        if (evalid == NULL) { /* the first NULL element: every slot before was valid */
          if ((evalid = zeros((total + 7) / 8, err)) == NULL) {
            st = HS_ERR_NOMEM;
            break;
          }
          for (size_t q = 0; q < i * (size_t)dim + (size_t)k; q++)
            evalid[q >> 3] |= (uint8_t)(1u << (q & 7));
        }
        enulls++;
        continue;
      }
      size_t q = i * (size_t)dim + (size_t)k;
      vals[q] = ev[at];
      if (evalid != NULL) evalid[q >> 3] |= (uint8_t)(1u << (q & 7));
    }
  }
  /* Slots of NULL rows are NULL elements too once elements carry validity. */
  if (st == HS_OK && evalid != NULL) enulls = 0;
  if (st == HS_OK && evalid != NULL)
    for (size_t q = 0; q < total; q++)
      if (!bit_get(evalid, (int64_t)q)) enulls++;
  int64_t len = c->length;
  c->release(c);
  if (st != HS_OK) {
    hs_free(vals);
    hs_free(valid);
    hs_free(evalid);
    return st;
  }
  if ((st = hs_arrow_array_init(out, 1, 1, err)) != HS_OK) {
    hs_free(vals);
    hs_free(valid);
    hs_free(evalid);
    return st;
  }
  out->length = len;
  out->null_count = valid != NULL ? nulls : 0;
  hs_arrow_array_set_buffer(out, 0, valid);
  st = hs_arrow_array_make_primitive(out->children[0], (int64_t)total, vals, evalid, enulls, err);
  if (st != HS_OK) out->release(out);
  return st;
}

hs_status hs_colmap_apply(const hs_colmap *m, struct ArrowArray *in, struct ArrowArray *out,
                          hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_status st = HS_OK;
  if (in->n_children != (int64_t)m->n_read || in->offset != 0) {
    st = hs_error_set(err, HS_ERR_INTERNAL, "scan: batch of %lld columns, %zu read",
                      (long long)in->n_children, m->n_read);
  }
  if (st == HS_OK) st = hs_arrow_array_init(out, 1, (int64_t)m->n, err);
  if (st == HS_OK) {
    out->length = in->length;
    out->null_count = 0;
  }
  for (size_t i = 0; st == HS_OK && i < m->n; i++) {
    struct ArrowArray *o = out->children[i];
    if (m->conv[i] == HS_COLMAP_NULLS) {
      st = hs_colmap_null_array(m->out.children[i], in->length, o, err);
      continue;
    }
    if (m->conv[i] == HS_COLMAP_DEFAULT) {
      st =
          hs_colmap_default_array(m->out.children[i], m->def[i], m->def_len[i], in->length, o, err);
      continue;
    }
    if (m->conv[i] == HS_COLMAP_ROW_ID || m->conv[i] == HS_COLMAP_LAST_SEQ) {
      hs_lineage_pos at = *m->lin;
      if (!at.set) {
        at.rows = NULL;
        at.first = *m->rows_in;
      }
      st = hs_lineage_column(
          m->conv[i] == HS_COLMAP_ROW_ID ? HS_LINEAGE_ROW_ID_COL : HS_LINEAGE_SEQ_COL,
          m->src[i] >= 0 ? in->children[m->src[i]] : NULL, &at, in->length, o, err);
      if (st != HS_OK) hs_error_prefix(err, "%s: ", m->path);
      continue;
    }
    struct ArrowArray *c = in->children[m->src[i]];
    struct ArrowArray moved = *c;
    c->release = NULL; /* moved out of `in` */
    if (m->conv[i] == HS_COLMAP_I32_I64 || m->conv[i] == HS_COLMAP_F32_F64)
      st = widen(&moved, m->conv[i], o, err);
    else if (m->conv[i] == HS_COLMAP_LIST_FSL || m->conv[i] == HS_COLMAP_LLIST_FSL)
      st = list_to_fixed(&moved, m->conv[i] == HS_COLMAP_LLIST_FSL,
                         (int32_t)strtol(m->out.children[i]->format + 3, NULL, 10), m->path,
                         m->out.children[i]->name ? m->out.children[i]->name : "", *m->rows_in, o,
                         err);
    else if (m->conv[i] == HS_COLMAP_OFFSETS)
      st = reoffset(&moved,
                    m->out.children[i]->format[0] == 'U' || m->out.children[i]->format[0] == 'Z', o,
                    err);
    else
      *o = moved;
  }
  if (st == HS_OK) *m->rows_in += in->length;
  m->lin->set = false;
  m->lin->rows = NULL;
  if (in->release != NULL) in->release(in);
  if (st != HS_OK && out->release != NULL) out->release(out);
  return st;
}
