/*
 * schema_write.c — Arrow schema -> Parquet schema for the writer, plus the
 * per-leaf plan (physical type, conversion, levels, statistics order) and
 * the statistics comparator that follows from the logical type.
 *
 * Mapping follows what pyarrow 2.6-format files carry, so that pyarrow and
 * DuckDB read our files as they read theirs: small and unsigned integers
 * get INTEGER + INT_n/UINT_n, plain int32/int64 get no annotation, seconds
 * become milliseconds (x1000), date64 becomes DATE days, decimals are
 * FIXED_LEN_BYTE_ARRAY of the fewest bytes holding the precision, and lists
 * use the standard 3-level form with an "element" leaf. Fixed-size lists
 * are written as LIST and recorded in the file key-value metadata
 * "hyperstream:fixed_size_list" = {"col": N, ...} so our reader restores
 * them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer_internal.h"

static const char *dup_str(hs_arena *a, const char *s) {
  return hs_arena_strndup(a, s, strlen(s));
}

/* Fewest bytes whose two's complement holds every value of `precision`
 * decimal digits: 10^p - 1 < 2^(8n-1). */
static int32_t decimal_bytes(int32_t precision) {
  int32_t n = 1;
  while ((double)(8 * n - 1) * log10(2.0) < (double)precision) n++;
  return n;
}

static void set_int(hs_pq_schema_element *e, int bits, bool is_signed) {
  static const hs_pq_converted s_ct[4] = {HS_PQ_CT_INT_8, HS_PQ_CT_INT_16, HS_PQ_CT_INT_32,
                                          HS_PQ_CT_INT_64};
  static const hs_pq_converted u_ct[4] = {HS_PQ_CT_UINT_8, HS_PQ_CT_UINT_16, HS_PQ_CT_UINT_32,
                                          HS_PQ_CT_UINT_64};
  int k = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3;
  e->logical.kind = HS_PQ_LT_INTEGER;
  e->logical.int_bit_width = (int8_t)bits;
  e->logical.int_is_signed = is_signed;
  e->has_converted = true;
  e->converted = is_signed ? s_ct[k] : u_ct[k];
}

/* Fill the leaf element and plan for a primitive Arrow type. */
static hs_status map_primitive(const hs_arrow_type *t, const char *format, const char *column,
                               hs_pq_schema_element *e, hs_wleaf *l, hs_error *err) {
  e->has_type = true;
  l->conv = HS_WCONV_COPY;
  switch (t->id) {
  case HS_AT_BOOL:
    e->type = HS_PQ_BOOLEAN;
    l->conv = HS_WCONV_BOOL;
    l->sort = HS_WSORT_BYTES;
    break;
  case HS_AT_INT8:
  case HS_AT_UINT8:
  case HS_AT_INT16:
  case HS_AT_UINT16: {
    bool sgn = t->id == HS_AT_INT8 || t->id == HS_AT_INT16;
    int bits = (t->id == HS_AT_INT8 || t->id == HS_AT_UINT8) ? 8 : 16;
    e->type = HS_PQ_INT32;
    set_int(e, bits, sgn);
    l->conv = t->id == HS_AT_INT8    ? HS_WCONV_I8
              : t->id == HS_AT_UINT8 ? HS_WCONV_U8
              : t->id == HS_AT_INT16 ? HS_WCONV_I16
                                     : HS_WCONV_U16;
    l->src_width = bits / 8;
    l->sort = HS_WSORT_I32; /* values fit in int31: signed order agrees */
    break;
  }
  case HS_AT_INT32:
    e->type = HS_PQ_INT32;
    l->src_width = 4;
    l->sort = HS_WSORT_I32;
    break;
  case HS_AT_UINT32:
    e->type = HS_PQ_INT32;
    set_int(e, 32, false);
    l->src_width = 4;
    l->sort = HS_WSORT_U32;
    break;
  case HS_AT_INT64:
  case HS_AT_DURATION:
    e->type = HS_PQ_INT64;
    l->src_width = 8;
    l->sort = HS_WSORT_I64;
    break;
  case HS_AT_UINT64:
    e->type = HS_PQ_INT64;
    set_int(e, 64, false);
    l->src_width = 8;
    l->sort = HS_WSORT_U64;
    break;
  case HS_AT_FLOAT16:
    e->type = HS_PQ_FIXED_LEN_BYTE_ARRAY;
    e->type_length = 2;
    e->logical.kind = HS_PQ_LT_FLOAT16;
    l->src_width = 2;
    l->sort = HS_WSORT_FLOAT16;
    break;
  case HS_AT_FLOAT32:
    e->type = HS_PQ_FLOAT;
    l->src_width = 4;
    l->sort = HS_WSORT_FLOAT;
    break;
  case HS_AT_FLOAT64:
    e->type = HS_PQ_DOUBLE;
    l->src_width = 8;
    l->sort = HS_WSORT_DOUBLE;
    break;
  case HS_AT_STRING:
  case HS_AT_LARGE_STRING:
    e->logical.kind = HS_PQ_LT_STRING;
    e->has_converted = true;
    e->converted = HS_PQ_CT_UTF8;
    /* fallthrough */
  case HS_AT_BINARY:
  case HS_AT_LARGE_BINARY:
    e->type = HS_PQ_BYTE_ARRAY;
    l->conv = (t->id == HS_AT_LARGE_STRING || t->id == HS_AT_LARGE_BINARY) ? HS_WCONV_LARGE_BINARY
                                                                           : HS_WCONV_BINARY;
    l->sort = HS_WSORT_BYTES;
    break;
  case HS_AT_FIXED_BINARY:
    if (t->width <= 0)
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s': fixed-size binary width %d",
                          column, t->width);
    e->type = HS_PQ_FIXED_LEN_BYTE_ARRAY;
    e->type_length = t->width;
    l->src_width = t->width;
    l->sort = HS_WSORT_BYTES;
    break;
  case HS_AT_DECIMAL128:
    if (t->precision < 1 || t->precision > 38 || t->scale < 0 || t->scale > t->precision)
      return hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s': decimal128(%d, %d)", column,
                          t->precision, t->scale);
    e->type = HS_PQ_FIXED_LEN_BYTE_ARRAY;
    e->type_length = decimal_bytes(t->precision);
    e->logical.kind = HS_PQ_LT_DECIMAL;
    e->logical.decimal_precision = t->precision;
    e->logical.decimal_scale = t->scale;
    e->has_converted = true;
    e->converted = HS_PQ_CT_DECIMAL;
    e->precision = t->precision;
    e->scale = t->scale;
    l->conv = HS_WCONV_DECIMAL;
    l->src_width = 16;
    l->sort = HS_WSORT_DECIMAL_BE;
    break;
  case HS_AT_DATE32:
  case HS_AT_DATE64:
    e->type = HS_PQ_INT32;
    e->logical.kind = HS_PQ_LT_DATE;
    e->has_converted = true;
    e->converted = HS_PQ_CT_DATE;
    l->conv = t->id == HS_AT_DATE64 ? HS_WCONV_DATE64 : HS_WCONV_COPY;
    l->src_width = t->id == HS_AT_DATE64 ? 8 : 4;
    l->sort = HS_WSORT_I32;
    break;
  case HS_AT_TIME32:
    e->type = HS_PQ_INT32;
    e->logical.kind = HS_PQ_LT_TIME;
    e->logical.unit = HS_PQ_MILLIS;
    l->conv = t->unit == HS_UNIT_S ? HS_WCONV_MUL1000_I32 : HS_WCONV_COPY;
    l->src_width = 4;
    l->sort = HS_WSORT_I32;
    break;
  case HS_AT_TIME64:
    e->type = HS_PQ_INT64;
    e->logical.kind = HS_PQ_LT_TIME;
    e->logical.unit = t->unit == HS_UNIT_NS ? HS_PQ_NANOS : HS_PQ_MICROS;
    l->src_width = 8;
    l->sort = HS_WSORT_I64;
    break;
  case HS_AT_TIMESTAMP: {
    bool utc = t->timezone != NULL && t->timezone[0] != '\0';
    e->type = HS_PQ_INT64;
    e->logical.kind = HS_PQ_LT_TIMESTAMP;
    e->logical.is_adjusted_to_utc = utc;
    e->logical.unit = t->unit == HS_UNIT_NS   ? HS_PQ_NANOS
                      : t->unit == HS_UNIT_US ? HS_PQ_MICROS
                                              : HS_PQ_MILLIS;
    /* As parquet-cpp: the legacy annotation only for UTC-adjusted ms/us. */
    if (utc && t->unit != HS_UNIT_NS) {
      e->has_converted = true;
      e->converted = t->unit == HS_UNIT_US ? HS_PQ_CT_TIMESTAMP_MICROS : HS_PQ_CT_TIMESTAMP_MILLIS;
    }
    l->conv = t->unit == HS_UNIT_S ? HS_WCONV_MUL1000_I64 : HS_WCONV_COPY;
    l->src_width = 8;
    l->sort = HS_WSORT_I64;
    break;
  }
  default:
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "column '%s': Arrow type '%s' cannot be written to Parquet", column,
                        format ? format : "(null)");
  }
  l->type = e->type;
  l->type_length = e->type_length;
  return HS_OK;
}

/* Field id from "PARQUET:field_id" metadata, else `fallback`. */
static int32_t field_id_of(const struct ArrowSchema *f, int32_t fallback) {
  int32_t len = 0;
  const char *v = hs_arrow_metadata_get(f->metadata, "PARQUET:field_id", &len);
  if (v == NULL || len <= 0 || len > 11) return fallback;
  char tmp[12];
  memcpy(tmp, v, (size_t)len);
  tmp[len] = '\0';
  char *end = NULL;
  long id = strtol(tmp, &end, 10);
  if (end == tmp || *end != '\0' || id < INT32_MIN || id > INT32_MAX) return fallback;
  return (int32_t)id;
}

static hs_status check_encoding(const hs_wleaf *l, int enc, hs_error *err) {
  bool ok;
  switch (enc) {
  case HS_ENCODING_DEFAULT:
  case HS_ENCODING_PLAIN:
  case HS_ENCODING_RLE_DICTIONARY: ok = true; break;
  case HS_ENCODING_DELTA_BINARY_PACKED:
    ok = l->type == HS_PQ_INT32 || l->type == HS_PQ_INT64;
    break;
  case HS_ENCODING_DELTA_LENGTH_BYTE_ARRAY: ok = l->type == HS_PQ_BYTE_ARRAY; break;
  case HS_ENCODING_DELTA_BYTE_ARRAY:
    ok = l->type == HS_PQ_BYTE_ARRAY || l->type == HS_PQ_FIXED_LEN_BYTE_ARRAY;
    break;
  case HS_ENCODING_BYTE_STREAM_SPLIT:
    ok = l->type == HS_PQ_FLOAT || l->type == HS_PQ_DOUBLE || l->type == HS_PQ_INT32 ||
         l->type == HS_PQ_INT64 || l->type == HS_PQ_FIXED_LEN_BYTE_ARRAY;
    break;
  default: ok = false;
  }
  if (!ok)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': encoding %d is not valid for %s",
                        l->dotted, enc, hs_pq_type_name(l->type));
  return HS_OK;
}

/* HS_ERR_UNSUPPORTED when `f` or its list element is dictionary-encoded. */
static hs_status refuse_dictionary(const struct ArrowSchema *f, const char *name, hs_error *err) {
  const struct ArrowSchema *d = f;
  const char *path = name, *suffix = "";
  if (d->dictionary == NULL && d->n_children == 1 && d->children && d->children[0] &&
      d->children[0]->dictionary != NULL) {
    d = d->children[0];
    suffix = ".list.element";
  }
  if (d->dictionary == NULL) return HS_OK;
  return hs_error_set(err, HS_ERR_UNSUPPORTED,
                      "column '%s%s' is dictionary-encoded (format '%s' indices of '%s' values); "
                      "decode it to its value type first",
                      path, suffix, d->format ? d->format : "(null)",
                      d->dictionary->format ? d->dictionary->format : "(null)");
}

static bool json_append_string(hs_buf *b, const char *s) {
  if (!hs_buf_append_byte(b, '"')) return false;
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    bool ok;
    if (ch == '"' || ch == '\\')
      ok = hs_buf_append_byte(b, '\\') && hs_buf_append_byte(b, ch);
    else if (ch < 0x20)
      ok = hs_buf_printf(b, "\\u%04x", ch);
    else
      ok = hs_buf_append_byte(b, ch);
    if (!ok) return false;
  }
  return hs_buf_append_byte(b, '"');
}

/* Struct columns (top-level field `f`, a struct): elements and leaves it
 * needs, counted into *ne / *nl. Struct members may be primitives or
 * structs; lists and maps inside structs are HS_ERR_UNSUPPORTED naming
 * the member. */
static hs_status struct_count(const struct ArrowSchema *f, const char *path, uint32_t depth,
                              size_t *ne, size_t *nl, hs_error *err) {
  if (depth >= HS_WSTRUCT_DEPTH_MAX)
    return hs_error_set(err, HS_ERR_UNSUPPORTED, "column '%s': structs nested over %d levels", path,
                        HS_WSTRUCT_DEPTH_MAX);
  if (f->n_children < 0 || f->n_children > 100000 || (f->n_children > 0 && f->children == NULL))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': bad struct child count %lld", path,
                        (long long)f->n_children);
  if (f->n_children == 0)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "column '%s': a struct without fields cannot be written to Parquet", path);
  *ne += 1;
  for (int64_t k = 0; k < f->n_children; k++) {
    const struct ArrowSchema *c = f->children[k];
    if (c == NULL || c->format == NULL)
      return hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': member %lld has no format", path,
                          (long long)k);
    char sub[600];
    snprintf(sub, sizeof sub, "%s.%s", path, c->name ? c->name : "");
    hs_status st = refuse_dictionary(c, sub, err);
    hs_arrow_type ct;
    if (st == HS_OK) st = hs_arrow_type_parse(c->format, &ct, err);
    if (st != HS_OK) return st;
    if (ct.id == HS_AT_STRUCT) {
      if ((st = struct_count(c, sub, depth + 1, ne, nl, err)) != HS_OK) return st;
    } else if (c->n_children > 0) {
      return hs_error_set(err, HS_ERR_UNSUPPORTED,
                          "column '%s': a nested type ('%s') inside a struct cannot be written to "
                          "Parquet yet (struct members must be primitives or structs)",
                          sub, c->format);
    } else {
      *ne += 1;
      *nl += 1;
    }
  }
  return HS_OK;
}

/* Where struct_add is in the schema: the levels above the current node. */
typedef struct struct_walk {
  hs_wschema *out;
  int32_t field;
  const char *top;                             /* top-level name (arena) */
  const char *names[HS_WSTRUCT_DEPTH_MAX + 1]; /* path (arena) */
  int32_t child[HS_WSTRUCT_DEPTH_MAX];
  bool nullable[HS_WSTRUCT_DEPTH_MAX];
  uint32_t depth; /* struct levels above the node */
  int16_t def;    /* nullable levels among them */
  int32_t *next_id;
} struct_walk;

/* Struct `f` (checked by struct_count) as a group element and its members,
 * depth first, with the members' leaves. */
static hs_status struct_add(struct_walk *w, const struct ArrowSchema *f, hs_pq_schema_element *e,
                            hs_error *err) {
  hs_arena *a = &w->out->arena;
  e->num_children = (int32_t)f->n_children;
  uint32_t d = w->depth;
  w->nullable[d] = (f->flags & ARROW_FLAG_NULLABLE) != 0;
  w->depth = d + 1;
  w->def = (int16_t)(w->def + w->nullable[d]);
  hs_status st = HS_OK;
  for (int64_t k = 0; st == HS_OK && k < f->n_children; k++) {
    const struct ArrowSchema *c = f->children[k];
    w->child[d] = (int32_t)k;
    w->names[d + 1] = dup_str(a, c->name ? c->name : "");
    if (w->names[d + 1] == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "writer schema: out of memory");
    bool nullable = (c->flags & ARROW_FLAG_NULLABLE) != 0;
    hs_pq_schema_element *ce = &w->out->elems[w->out->n_elems++];
    ce->name = w->names[d + 1];
    ce->has_repetition = true;
    ce->repetition = nullable ? HS_PQ_OPTIONAL : HS_PQ_REQUIRED;
    ce->has_field_id = true;
    ce->field_id = field_id_of(c, (*w->next_id)++);
    hs_arrow_type ct;
    if ((st = hs_arrow_type_parse(c->format, &ct, err)) != HS_OK) break;
    if (ct.id == HS_AT_STRUCT) {
      st = struct_add(w, c, ce, err);
      continue;
    }
    hs_wleaf *l = &w->out->leaves[w->out->n_leaves++];
    memset(l, 0, sizeof *l);
    l->field = w->field;
    l->name = w->top;
    l->field_nullable = w->nullable[0];
    l->elem_nullable = nullable;
    l->n_struct = d + 1;
    int32_t *sc = hs_arena_alloc(a, (d + 1) * sizeof *sc);
    bool *sn = hs_arena_alloc(a, (d + 1) * sizeof *sn);
    const char **path = hs_arena_alloc(a, (d + 2) * sizeof *path);
    size_t dl = 1;
    for (uint32_t j = 0; j <= d + 1; j++) dl += strlen(w->names[j]) + 1;
    char *dotted = hs_arena_alloc(a, dl);
    if (sc == NULL || sn == NULL || path == NULL || dotted == NULL)
      return hs_error_set(err, HS_ERR_NOMEM, "writer schema: out of memory");
    memcpy(sc, w->child, (d + 1) * sizeof *sc);
    memcpy(sn, w->nullable, (d + 1) * sizeof *sn);
    dotted[0] = 0;
    for (uint32_t j = 0; j <= d + 1; j++) {
      path[j] = w->names[j];
      if (j) strcat(dotted, ".");
      strcat(dotted, w->names[j]);
    }
    l->struct_child = sc;
    l->struct_nullable = sn;
    l->path = path;
    l->n_path = d + 2;
    l->dotted = dotted;
    l->max_def = (int16_t)(w->def + nullable);
    if ((st = map_primitive(&ct, c->format, dotted, ce, l, err)) != HS_OK) break;
  }
  w->depth = d;
  w->def = (int16_t)(w->def - w->nullable[d]);
  return st;
}

hs_status hs_wschema_build(const struct ArrowSchema *schema, const hs_parquet_write_options *opts,
                           hs_wschema *out, hs_error *err) {
  memset(out, 0, sizeof(*out));
  hs_arena_init(&out->arena);
  hs_arena *a = &out->arena;
  hs_status st = HS_OK;
  hs_buf json;
  hs_buf_init(&json);
  if (schema == NULL || schema->format == NULL || strcmp(schema->format, "+s") != 0)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "writer schema must be a struct ('+s'), got '%s'",
                        schema && schema->format ? schema->format : "(null)");
  if (schema->n_children < 0 || schema->n_children > 100000 ||
      (schema->n_children > 0 && schema->children == NULL))
    return hs_error_set(err, HS_ERR_INVALID_ARG, "writer schema: bad child count %lld",
                        (long long)schema->n_children);
  size_t nf = (size_t)schema->n_children;
  /* At most 3 elements and 1 leaf per field, plus the root; structs count
   * their members. */
  size_t ne = 1, nlv = 1;
  for (size_t i = 0; i < nf; i++) {
    const struct ArrowSchema *f = schema->children[i];
    if (f != NULL && f->format != NULL && strcmp(f->format, "+s") == 0) {
      if ((st = struct_count(f, f->name ? f->name : "", 0, &ne, &nlv, err)) != HS_OK) return st;
    } else {
      ne += 3;
      nlv += 1;
    }
  }
  out->elems = hs_arena_alloc(a, ne * sizeof(hs_pq_schema_element));
  out->leaves = hs_arena_alloc(a, nlv * sizeof(hs_wleaf));
  if (!out->elems || !out->leaves) {
    st = hs_error_set(err, HS_ERR_NOMEM, "writer schema: out of memory");
    goto fail;
  }
  out->n_fields = (int32_t)nf;
  hs_pq_schema_element *root = &out->elems[out->n_elems++];
  root->name = "schema";
  root->num_children = (int32_t)nf;
  int32_t next_id = 1;

  for (size_t i = 0; i < nf; i++) {
    const struct ArrowSchema *f = schema->children[i];
    if (f == NULL || f->format == NULL) {
      st = hs_error_set(err, HS_ERR_INVALID_ARG, "writer schema: field %zu has no format", i);
      goto fail;
    }
    const char *name = f->name ? f->name : "";
    /* Writing a dictionary-encoded column as its format would store the
     * indices and lose the values: the caller decodes it first. */
    if ((st = refuse_dictionary(f, name, err)) != HS_OK) goto fail;
    hs_arrow_type t;
    if ((st = hs_arrow_type_parse(f->format, &t, err)) != HS_OK) goto fail;
    for (size_t j = 0; j < i; j++)
      if (strcmp(name, schema->children[j]->name ? schema->children[j]->name : "") == 0) {
        st = hs_error_set(err, HS_ERR_SCHEMA, "writer schema: duplicate column name '%s'", name);
        goto fail;
      }
    hs_wleaf *l = &out->leaves[out->n_leaves];
    memset(l, 0, sizeof(*l));
    l->field = (int32_t)i;
    l->name = dup_str(a, name);
    l->field_nullable = (f->flags & ARROW_FLAG_NULLABLE) != 0;
    hs_pq_schema_element *e = &out->elems[out->n_elems++];
    e->name = l->name;
    e->has_repetition = true;
    e->repetition = l->field_nullable ? HS_PQ_OPTIONAL : HS_PQ_REQUIRED;
    e->has_field_id = true;
    e->field_id = field_id_of(f, next_id++);
    if (t.id == HS_AT_STRUCT) { /* a group; its members' leaves follow */
      if (l->name == NULL) goto oom;
      uint32_t first_leaf = out->n_leaves;
      struct_walk sw;
      memset(&sw, 0, sizeof sw);
      sw.out = out;
      sw.field = (int32_t)i;
      sw.top = l->name;
      sw.names[0] = l->name;
      sw.next_id = &next_id;
      if ((st = struct_add(&sw, f, e, err)) != HS_OK) goto fail;
      for (uint32_t j = first_leaf; j < out->n_leaves; j++) {
        hs_wleaf *sl = &out->leaves[j];
        int enc = (opts->use_dictionary && sl->type != HS_PQ_BOOLEAN) ? HS_ENCODING_DEFAULT
                                                                      : HS_ENCODING_PLAIN;
        for (size_t k = 0; k < opts->n_encodings; k++)
          if (opts->encoding_columns && opts->encoding_columns[k] &&
              strcmp(opts->encoding_columns[k], name) == 0) {
            enc = opts->encodings[k];
            if ((st = check_encoding(sl, enc, err)) != HS_OK) goto fail;
            if (enc == HS_ENCODING_RLE_DICTIONARY)
              enc = sl->type == HS_PQ_BOOLEAN ? HS_ENCODING_PLAIN : HS_ENCODING_DEFAULT;
          }
        sl->encoding = enc;
      }
      continue;
    }

    if (t.id == HS_AT_LIST || t.id == HS_AT_LARGE_LIST || t.id == HS_AT_FIXED_LIST) {
      if (f->n_children != 1 || f->children == NULL || f->children[0] == NULL ||
          f->children[0]->format == NULL) {
        st = hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': list without one child", name);
        goto fail;
      }
      const struct ArrowSchema *c = f->children[0];
      hs_arrow_type ct;
      if ((st = hs_arrow_type_parse(c->format, &ct, err)) != HS_OK) goto fail;
      l->list_kind = t.id == HS_AT_LIST         ? HS_WLIST
                     : t.id == HS_AT_LARGE_LIST ? HS_WLIST_LARGE
                                                : HS_WLIST_FIXED;
      l->list_size = t.width;
      if (l->list_kind == HS_WLIST_FIXED && t.width < 0) {
        st = hs_error_set(err, HS_ERR_INVALID_ARG, "column '%s': list size %d", name, t.width);
        goto fail;
      }
      l->elem_nullable = (c->flags & ARROW_FLAG_NULLABLE) != 0;
      e->num_children = 1;
      e->has_converted = true;
      e->converted = HS_PQ_CT_LIST;
      e->logical.kind = HS_PQ_LT_LIST;
      hs_pq_schema_element *g = &out->elems[out->n_elems++];
      g->name = "list";
      g->has_repetition = true;
      g->repetition = HS_PQ_REPEATED;
      g->num_children = 1;
      hs_pq_schema_element *le = &out->elems[out->n_elems++];
      le->name = "element";
      le->has_repetition = true;
      le->repetition = l->elem_nullable ? HS_PQ_OPTIONAL : HS_PQ_REQUIRED;
      le->has_field_id = true;
      le->field_id = field_id_of(c, next_id++);
      char col[600];
      snprintf(col, sizeof(col), "%s.list.element", name);
      if ((st = map_primitive(&ct, c->format, col, le, l, err)) != HS_OK) goto fail;
      l->max_def = (int16_t)(l->field_nullable + 1 + l->elem_nullable);
      l->max_rep = 1;
      l->n_path = 3;
      l->path = hs_arena_alloc(a, 3 * sizeof(char *));
      if (!l->path) goto oom;
      l->path[0] = l->name;
      l->path[1] = "list";
      l->path[2] = "element";
      if (l->list_kind == HS_WLIST_FIXED) {
        bool ok = hs_buf_append_byte(&json, json.len == 0 ? '{' : ',') &&
                  json_append_string(&json, name) && hs_buf_printf(&json, ": %d", t.width);
        if (!ok) goto oom;
      }
    } else {
      if ((st = map_primitive(&t, f->format, name, e, l, err)) != HS_OK) goto fail;
      l->max_def = l->field_nullable ? 1 : 0;
      l->n_path = 1;
      l->path = hs_arena_alloc(a, sizeof(char *));
      if (!l->path) goto oom;
      l->path[0] = l->name;
    }
    size_t dl = strlen(l->path[0]) + 16;
    char *dotted = hs_arena_alloc(a, dl);
    if (!dotted) goto oom;
    snprintf(dotted, dl, "%s%s", l->path[0], l->n_path == 3 ? ".list.element" : "");
    l->dotted = dotted;

    /* Encoding: per-column override, else dictionary (never for booleans). */
    int enc = (opts->use_dictionary && l->type != HS_PQ_BOOLEAN) ? HS_ENCODING_DEFAULT
                                                                 : HS_ENCODING_PLAIN;
    for (size_t k = 0; k < opts->n_encodings; k++)
      if (opts->encoding_columns && opts->encoding_columns[k] &&
          strcmp(opts->encoding_columns[k], name) == 0) {
        enc = opts->encodings[k];
        if ((st = check_encoding(l, enc, err)) != HS_OK) goto fail;
        if (enc == HS_ENCODING_RLE_DICTIONARY)
          enc = l->type == HS_PQ_BOOLEAN ? HS_ENCODING_PLAIN : HS_ENCODING_DEFAULT;
      }
    l->encoding = enc;
    out->n_leaves++;
  }
  for (size_t k = 0; k < opts->n_encodings; k++) {
    bool found = false;
    for (uint32_t j = 0; j < out->n_leaves && opts->encoding_columns; j++)
      if (opts->encoding_columns[k] && strcmp(opts->encoding_columns[k], out->leaves[j].name) == 0)
        found = true;
    if (!found) {
      st = hs_error_set(err, HS_ERR_NOT_FOUND, "encoding override for unknown column '%s'",
                        opts->encoding_columns && opts->encoding_columns[k]
                            ? opts->encoding_columns[k]
                            : "(null)");
      goto fail;
    }
  }
  if (json.len > 0) {
    if (!hs_buf_append(&json, "}", 2)) goto oom;
    out->fixed_list_json = hs_arena_strndup(a, (const char *)json.data, json.len - 1);
    if (!out->fixed_list_json) goto oom;
  }
  hs_buf_free(&json);
  return HS_OK;
oom:
  st = hs_error_set(err, HS_ERR_NOMEM, "writer schema: out of memory");
fail:
  hs_buf_free(&json);
  hs_wschema_free(out);
  return st;
}

void hs_wschema_free(hs_wschema *s) {
  if (s == NULL) return;
  hs_arena_reset(&s->arena);
  memset(s, 0, sizeof(*s));
}

/* ----------------------------------------------------------- statistics */

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: normalise */
      int e = -1;
      do {
        e++;
        man <<= 1;
      } while ((man & 0x400) == 0);
      bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp - 15 + 127) << 23 | man << 13;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

int hs_wstat_cmp(hs_wsort sort, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  switch (sort) {
  case HS_WSORT_I32: {
    int32_t x = (int32_t)hs_load_u32le(a), y = (int32_t)hs_load_u32le(b);
    return (x > y) - (x < y);
  }
  case HS_WSORT_U32: {
    uint32_t x = hs_load_u32le(a), y = hs_load_u32le(b);
    return (x > y) - (x < y);
  }
  case HS_WSORT_I64: {
    int64_t x = (int64_t)hs_load_u64le(a), y = (int64_t)hs_load_u64le(b);
    return (x > y) - (x < y);
  }
  case HS_WSORT_U64: {
    uint64_t x = hs_load_u64le(a), y = hs_load_u64le(b);
    return (x > y) - (x < y);
  }
  case HS_WSORT_FLOAT: {
    float x, y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    return (x > y) - (x < y);
  }
  case HS_WSORT_DOUBLE: {
    double x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return (x > y) - (x < y);
  }
  case HS_WSORT_FLOAT16: {
    float x = half_to_float((uint16_t)(a[0] | a[1] << 8));
    float y = half_to_float((uint16_t)(b[0] | b[1] << 8));
    return (x > y) - (x < y);
  }
  case HS_WSORT_DECIMAL_BE:
    if (alen > 0 && blen > 0 && alen == blen) {
      int8_t x = (int8_t)a[0], y = (int8_t)b[0];
      if (x != y) return (x > y) - (x < y);
      int c = memcmp(a + 1, b + 1, alen - 1);
      return (c > 0) - (c < 0);
    }
    /* fallthrough */
  case HS_WSORT_BYTES:
  default: {
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c != 0) return (c > 0) - (c < 0);
    return (alen > blen) - (alen < blen);
  }
  }
}

bool hs_wstat_half_is_nan(const uint8_t *p) {
  uint16_t h = (uint16_t)(p[0] | p[1] << 8);
  return ((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff) != 0;
}
