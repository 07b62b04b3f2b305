/*
 * data_file.c — the manifest data_file record of a Parquet data file,
 * computed from its footer alone: record count, split offsets, and per
 * leaf column (keyed by the Parquet schema's field_id) the compressed size,
 * value and null counts and lower/upper bounds in Iceberg's single-value
 * binary form.
 *
 * Bounds follow Iceberg's default metrics mode truncate(16): strings keep
 * their first 16 code points (upper bound: the last code point that can be
 * incremented is, the rest dropped), binary its first 16 bytes likewise.
 * A bound that cannot be computed exactly for every row group (a chunk
 * with values but no statistics, INT96, a NaN min/max, a unit we would have
 * to round) is left absent: absent bounds are always correct, wrong ones
 * lose rows.
 */
#include <math.h>
#include <string.h>

#include "../io/store.h"
#include "../parquet/parquet.h"
#include "manifest.h"

#define LEAF_DEPTH_MAX 64

typedef struct leaf {
  const hs_pq_schema_element *el;
  bool repeated; /* inside a list or map: no bounds */
} leaf;

/* Depth-first walk of the flattened Parquet schema collecting leaves. */
static hs_status collect_leaves(const hs_pq_file_metadata *md, uint32_t *idx, int depth,
                                bool repeated, leaf *out, size_t *n, size_t cap, hs_error *err) {
  if (depth > LEAF_DEPTH_MAX)
    return hs_error_set(err, HS_ERR_CORRUPT, "Parquet schema deeper than %d", LEAF_DEPTH_MAX);
  if (*idx >= md->n_schema) return hs_error_set(err, HS_ERR_CORRUPT, "Parquet schema truncated");
  const hs_pq_schema_element *el = &md->schema[(*idx)++];
  bool rep = repeated || (depth > 0 && el->has_repetition && el->repetition == HS_PQ_REPEATED);
  if (el->num_children <= 0 && depth > 0) {
    if (*n >= cap) return hs_error_set(err, HS_ERR_CORRUPT, "Parquet schema has too many leaves");
    out[*n].el = el;
    out[*n].repeated = rep;
    (*n)++;
    return HS_OK;
  }
  for (int32_t i = 0; i < el->num_children; i++) {
    hs_status st = collect_leaves(md, idx, depth + 1, rep, out, n, cap, err);
    if (st != HS_OK) return st;
  }
  return HS_OK;
}

/* Unit scaling of a Parquet time/timestamp to the Iceberg type's unit:
 * returns the multiplier (1, 1000, 1000000) or 0 when it would need a
 * division (rounding would make the bound wrong on one side). */
static int64_t unit_scale(const hs_pq_schema_element *el, hs_iceberg_type_id id) {
  bool ns = id == HS_ICE_TIMESTAMP_NS || id == HS_ICE_TIMESTAMPTZ_NS;
  int unit = -1; /* 0 ms, 1 us, 2 ns */
  if (el->logical.kind == HS_PQ_LT_TIMESTAMP || el->logical.kind == HS_PQ_LT_TIME)
    unit = (int)el->logical.unit;
  else if (el->has_converted)
    unit =
        el->converted == HS_PQ_CT_TIMESTAMP_MILLIS || el->converted == HS_PQ_CT_TIME_MILLIS ? 0 : 1;
  else
    unit = 1;
  int want = ns ? 2 : 1;
  if (unit > want || unit < 0) return 0;
  int64_t s = 1;
  for (int u = unit; u < want; u++) s *= 1000;
  return s;
}

/* Decode one Parquet statistics value of leaf `el` as Iceberg type `t`.
 * Returns false when it cannot be converted exactly. Bytes borrow `b`. */
static bool stat_value(const hs_pq_schema_element *el, const hs_iceberg_type *t, hs_pq_bytes b,
                       hs_iceberg_value *v) {
  memset(v, 0, sizeof *v);
  hs_pq_type pt = el->type;
  switch (t->id) {
  case HS_ICE_BOOLEAN:
    if (pt != HS_PQ_BOOLEAN || b.len < 1) return false;
    v->b = b.data[0] != 0;
    return true;
  case HS_ICE_INT:
  case HS_ICE_DATE:
  case HS_ICE_LONG:
  case HS_ICE_TIME:
  case HS_ICE_TIMESTAMP:
  case HS_ICE_TIMESTAMPTZ:
  case HS_ICE_TIMESTAMP_NS:
  case HS_ICE_TIMESTAMPTZ_NS: {
    int64_t x;
    if (pt == HS_PQ_INT32 && b.len == 4)
      x = (int32_t)hs_load_u32le(b.data);
    else if (pt == HS_PQ_INT64 && b.len == 8)
      x = (int64_t)hs_load_u64le(b.data);
    else
      return false;
    /* Unsigned Parquet integers order differently from Iceberg's signed. */
    if ((el->logical.kind == HS_PQ_LT_INTEGER && !el->logical.int_is_signed) ||
        (el->has_converted && el->converted >= HS_PQ_CT_UINT_8 &&
         el->converted <= HS_PQ_CT_UINT_64)) {
      if (x < 0) return false;
    }
    if (t->id == HS_ICE_TIME || t->id >= HS_ICE_TIMESTAMP) {
      int64_t s = unit_scale(el, t->id);
      if (s == 0 || __builtin_mul_overflow(x, s, &x)) return false;
    }
    v->i64 = x;
    return true;
  }
  case HS_ICE_FLOAT:
  case HS_ICE_DOUBLE:
    if (pt == HS_PQ_FLOAT && b.len == 4) {
      uint32_t u = hs_load_u32le(b.data);
      float f;
      memcpy(&f, &u, 4);
      v->f64 = f;
    } else if (pt == HS_PQ_DOUBLE && b.len == 8) {
      uint64_t u = hs_load_u64le(b.data);
      memcpy(&v->f64, &u, 8);
    } else {
      return false;
    }
    return !isnan(v->f64);
  case HS_ICE_DECIMAL: {
    uint8_t full[16];
    if (pt == HS_PQ_INT32 && b.len == 4) {
      int64_t x = (int32_t)hs_load_u32le(b.data);
      v->dec_hi = x < 0 ? -1 : 0;
      v->dec_lo = (uint64_t)x;
      return true;
    }
    if (pt == HS_PQ_INT64 && b.len == 8) {
      int64_t x = (int64_t)hs_load_u64le(b.data);
      v->dec_hi = x < 0 ? -1 : 0;
      v->dec_lo = (uint64_t)x;
      return true;
    }
    if ((pt != HS_PQ_FIXED_LEN_BYTE_ARRAY && pt != HS_PQ_BYTE_ARRAY) || b.len == 0 || b.len > 16)
      return false;
    memset(full, (b.data[0] & 0x80) ? 0xff : 0, 16);
    memcpy(full + 16 - b.len, b.data, b.len);
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 8; i++) {
      hi = hi << 8 | full[i];
      lo = lo << 8 | full[8 + i];
    }
    v->dec_hi = (int64_t)hi;
    v->dec_lo = lo;
    return true;
  }
  case HS_ICE_STRING:
  case HS_ICE_BINARY:
    if (pt != HS_PQ_BYTE_ARRAY && pt != HS_PQ_FIXED_LEN_BYTE_ARRAY) return false;
    v->bytes = b.data;
    v->len = b.len;
    return true;
  case HS_ICE_UUID:
  case HS_ICE_FIXED: {
    size_t want = t->id == HS_ICE_UUID ? 16 : (size_t)t->length;
    if (pt != HS_PQ_FIXED_LEN_BYTE_ARRAY || b.len != want) return false;
    v->bytes = b.data;
    v->len = b.len;
    return true;
  }
  default: return false;
  }
}

/* Length of the UTF-8 sequence starting with byte c, 0 when invalid. */
static size_t utf8_len(uint8_t c) {
  return c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
}

/* Byte length of the first `n` code points of s (all of s when shorter);
 * (size_t)-1 when s is not valid UTF-8 in that prefix. */
static size_t utf8_prefix(const uint8_t *s, size_t len, size_t n, size_t *cps) {
  size_t i = 0, k = 0;
  while (i < len && k < n) {
    size_t l = utf8_len(s[i]);
    if (l == 0 || i + l > len) return (size_t)-1;
    for (size_t j = 1; j < l; j++)
      if ((s[i + j] & 0xc0) != 0x80) return (size_t)-1;
    i += l;
    k++;
  }
  *cps = k;
  return i;
}

static uint32_t utf8_decode(const uint8_t *p, size_t l) {
  if (l == 1) return p[0];
  uint32_t cp = p[0] & (0x7f >> l);
  for (size_t j = 1; j < l; j++) cp = cp << 6 | (p[j] & 0x3f);
  return cp;
}

static size_t utf8_encode(uint32_t cp, uint8_t *o) {
  if (cp < 0x80) return o[0] = (uint8_t)cp, 1;
  if (cp < 0x800) return o[0] = (uint8_t)(0xc0 | cp >> 6), o[1] = (uint8_t)(0x80 | (cp & 0x3f)), 2;
  if (cp < 0x10000) {
    o[0] = (uint8_t)(0xe0 | cp >> 12);
    o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (uint8_t)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (uint8_t)(0xf0 | cp >> 18);
  o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
  o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
  o[3] = (uint8_t)(0x80 | (cp & 0x3f));
  return 4;
}

/* Truncate a bound to `width` (code points for strings, bytes for binary).
 * Lower bounds are cut; upper bounds are cut and incremented, which may
 * fail (*ok false: no upper bound). The result is copied into `arena`. */
static hs_status truncate_bound(const hs_iceberg_type *t, hs_iceberg_value *v, bool upper,
                                int32_t width, hs_arena *arena, bool *ok, hs_error *err) {
  *ok = true;
  if (width < 0 || (t->id != HS_ICE_STRING && t->id != HS_ICE_BINARY)) return HS_OK;
  size_t cut = v->len, cps = 0;
  if (t->id == HS_ICE_STRING) {
    cut = utf8_prefix(v->bytes, v->len, (size_t)width, &cps);
    if (cut == (size_t)-1) {
      *ok = false;
      return HS_OK;
    }
  } else if (v->len > (size_t)width) {
    cut = (size_t)width;
  }
  if (cut == v->len) return HS_OK; /* nothing cut: the value is exact */
  uint8_t *p = hs_arena_alloc(arena, cut + 4);
  if (p == NULL) return hs_error_set(err, HS_ERR_NOMEM, "bounds: out of memory");
  memcpy(p, v->bytes, cut);
  v->bytes = p;
  v->len = cut;
  if (!upper) return HS_OK;
  if (t->id == HS_ICE_BINARY) {
    while (cut > 0 && p[cut - 1] == 0xff) cut--;
    if (cut == 0) {
      *ok = false;
      return HS_OK;
    }
    p[cut - 1]++;
    v->len = cut;
    return HS_OK;
  }
  /* Strings: increment the last code point that can be, dropping the ones
   * after it (U+10FFFF cannot; surrogates are skipped). */
  while (cut > 0) {
    size_t start = cut - 1;
    while (start > 0 && (p[start] & 0xc0) == 0x80) start--;
    uint32_t cp = utf8_decode(p + start, cut - start) + 1;
    if (cp == 0xd800) cp = 0xe000;
    if (cp <= 0x10ffff) {
      v->len = start + utf8_encode(cp, p + start);
      return HS_OK;
    }
    cut = start;
  }
  *ok = false;
  return HS_OK;
}

static int metrics_cmp(const void *a, const void *b) {
  int32_t x = ((const hs_iceberg_column_metrics *)a)->field_id;
  int32_t y = ((const hs_iceberg_column_metrics *)b)->field_id;
  return x < y ? -1 : x > y;
}

/* Metrics of leaf column `c`. */
static hs_status leaf_metrics(const hs_pq_file_metadata *md, uint32_t c, const leaf *lf,
                              const hs_iceberg_type *t, int32_t width, hs_arena *arena,
                              hs_iceberg_column_metrics *m, hs_error *err) {
  bool nulls_ok = true, bounds_ok = !lf->repeated && t->id < HS_ICE_UNKNOWN;
  bool has_lo = false, has_hi = false;
  hs_iceberg_value lo = {0}, hi = {0};
  m->has_column_size = m->has_value_count = true;
  for (uint32_t g = 0; g < md->n_row_groups; g++) {
    const hs_pq_row_group *rg = &md->row_groups[g];
    if (c >= rg->n_columns || !rg->columns[c].has_meta_data)
      return hs_error_set(err, HS_ERR_CORRUPT, "row group %u: no metadata for column %u", g, c);
    const hs_pq_column_meta *cm = &rg->columns[c].meta_data;
    if (__builtin_add_overflow(m->column_size, cm->total_compressed_size, &m->column_size) ||
        __builtin_add_overflow(m->value_count, cm->num_values, &m->value_count))
      return hs_error_set(err, HS_ERR_CORRUPT, "column %u: sizes overflow", c);
    const hs_pq_statistics *s = cm->has_statistics ? &cm->statistics : NULL;
    if (s != NULL && s->has_null_count)
      m->null_count += s->null_count;
    else
      nulls_ok = false;
    if (!bounds_ok) continue;
    if (s != NULL && s->has_null_count && s->null_count >= cm->num_values) continue; /* all null */
    if (cm->num_values == 0) continue;
    if (s == NULL || !s->has_min_value || !s->has_max_value) {
      bounds_ok = false;
      continue;
    }
    hs_iceberg_value a, b;
    if (!stat_value(lf->el, t, s->min_value, &a) || !stat_value(lf->el, t, s->max_value, &b)) {
      bounds_ok = false;
      continue;
    }
    if (!has_lo || hs_iceberg_value_cmp(t, &a, &lo) < 0) lo = a;
    if (!has_hi || hs_iceberg_value_cmp(t, &b, &hi) > 0) hi = b;
    has_lo = has_hi = true;
  }
  m->has_null_count = nulls_ok;
  if (!bounds_ok || !has_lo) return HS_OK;
  bool ok_lo = true, ok_hi = true;
  hs_status st = truncate_bound(t, &lo, false, width, arena, &ok_lo, err);
  if (st == HS_OK) st = truncate_bound(t, &hi, true, width, arena, &ok_hi, err);
  for (int k = 0; st == HS_OK && k < 2; k++) {
    if (!(k ? ok_hi : ok_lo)) continue;
    hs_buf buf;
    hs_buf_init(&buf);
    st = hs_iceberg_value_to_bytes(t, k ? &hi : &lo, &buf, err);
    const uint8_t *p = NULL;
    if (st == HS_OK) {
      p = hs_arena_memdup(arena, buf.len ? buf.data : (const uint8_t *)"", buf.len ? buf.len : 1);
      if (p == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "bounds: out of memory");
    }
    if (st == HS_OK && k == 0) m->lower = p, m->lower_len = buf.len;
    if (st == HS_OK && k == 1) m->upper = p, m->upper_len = buf.len;
    hs_buf_free(&buf);
  }
  return st;
}

static int i64_cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

hs_status hs_iceberg_data_file_from_parquet(const hs_pq_file_metadata *md,
                                            const hs_iceberg_data_file_options *opts,
                                            hs_arena *arena, hs_iceberg_data_file *out,
                                            hs_error *err) {
  memset(out, 0, sizeof *out);
  if (md == NULL || opts == NULL || opts->schema == NULL || opts->file_path == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "data file: footer, schema and path needed");
  const char *path = opts->file_path;
  out->content = HS_ICE_CONTENT_DATA;
  out->file_format = "PARQUET";
  out->file_path = hs_arena_strndup(arena, path, strlen(path));
  out->record_count = md->num_rows;
  out->file_size_in_bytes = opts->file_size_in_bytes;
  out->has_sort_order_id = opts->has_sort_order_id;
  out->sort_order_id = opts->sort_order_id;
  if (out->file_path == NULL) return hs_error_set(err, HS_ERR_NOMEM, "data file: out of memory");
  /* Partition tuple: values and their bytes copied. */
  out->n_partition = opts->n_partition;
  if (opts->n_partition > 0) {
    out->partition =
        hs_arena_memdup(arena, opts->partition, opts->n_partition * sizeof *opts->partition);
    if (out->partition == NULL) return hs_error_set(err, HS_ERR_NOMEM, "data file: out of memory");
    for (size_t i = 0; i < opts->n_partition; i++) {
      hs_iceberg_value *v = &out->partition[i];
      if (v->bytes == NULL) continue;
      v->bytes =
          hs_arena_memdup(arena, v->len ? v->bytes : (const uint8_t *)"", v->len ? v->len : 1);
      if (v->bytes == NULL) return hs_error_set(err, HS_ERR_NOMEM, "data file: out of memory");
    }
  }
  /* Split offsets: the start of each row group. */
  out->has_split_offsets = md->n_row_groups > 0;
  out->n_split_offsets = md->n_row_groups;
  if (md->n_row_groups > 0) {
    out->split_offsets = hs_arena_alloc(arena, md->n_row_groups * sizeof *out->split_offsets);
    if (out->split_offsets == NULL) return hs_error_set(err, HS_ERR_NOMEM, "data file: OOM");
    for (uint32_t g = 0; g < md->n_row_groups; g++) {
      const hs_pq_row_group *rg = &md->row_groups[g];
      /* The first column's first page, as Java's getStartingPos: some
       * writers put the column-chunk metadata offset in file_offset. */
      int64_t off = -1;
      if (rg->n_columns > 0 && rg->columns[0].has_meta_data) {
        const hs_pq_column_meta *cm = &rg->columns[0].meta_data;
        off = cm->data_page_offset;
        if (cm->has_dictionary_page_offset && cm->dictionary_page_offset > 0 &&
            cm->dictionary_page_offset < off)
          off = cm->dictionary_page_offset;
      } else if (rg->has_file_offset) {
        off = rg->file_offset;
      }
      out->split_offsets[g] = off < 4 ? 4 : off;
    }
    qsort(out->split_offsets, md->n_row_groups, sizeof *out->split_offsets, i64_cmp);
  }
  /* Leaves in column order. */
  size_t cap = md->n_schema, n_leaves = 0;
  if (cap == 0) return hs_error_set(err, HS_ERR_CORRUPT, "%s: empty Parquet schema", path);
  leaf *leaves = hs_calloc(cap, sizeof *leaves);
  hs_iceberg_column_metrics *ms = hs_calloc(cap, sizeof *ms);
  hs_status st = leaves && ms ? HS_OK : hs_error_set(err, HS_ERR_NOMEM, "data file: OOM");
  uint32_t idx = 0;
  if (st == HS_OK) st = collect_leaves(md, &idx, 0, false, leaves, &n_leaves, cap, err);
  size_t n = 0;
  int32_t width = opts->truncate_length == 0 ? 16 : opts->truncate_length;
  for (size_t c = 0; st == HS_OK && c < n_leaves; c++) {
    const hs_pq_schema_element *el = leaves[c].el;
    if (!el->has_field_id) continue;
    const hs_iceberg_type *t = hs_iceberg_schema_find(opts->schema, el->field_id, NULL);
    if (t == NULL || t->id >= HS_ICE_STRUCT) continue;
    bool dup = false;
    for (size_t j = 0; j < n; j++) dup |= ms[j].field_id == el->field_id;
    if (dup) continue;
    ms[n].field_id = el->field_id;
    st = leaf_metrics(md, (uint32_t)c, &leaves[c], t, width, arena, &ms[n], err);
    if (st != HS_OK) hs_error_prefix(err, "column %s (field id %d): ", el->name, (int)el->field_id);
    n++;
  }
  if (st == HS_OK && n > 0) {
    qsort(ms, n, sizeof *ms, metrics_cmp);
    out->metrics = hs_arena_memdup(arena, ms, n * sizeof *ms);
    out->n_metrics = n;
    if (out->metrics == NULL) st = hs_error_set(err, HS_ERR_NOMEM, "data file: out of memory");
  }
  hs_free(leaves);
  hs_free(ms);
  if (st != HS_OK) hs_error_prefix(err, "%s: ", path);
  return st;
}

hs_status hs_iceberg_data_file_from_parquet_path(const char *path,
                                                 const hs_iceberg_data_file_options *opts,
                                                 hs_arena *arena, hs_iceberg_data_file *out,
                                                 hs_error *err) {
  hs_source *src = NULL;
  hs_status st = hs_store_is_remote(path) ? hs_store_source_open(path, &src, err)
                                          : hs_source_open_file(path, &src, err);
  if (st != HS_OK) return st;
  hs_arena footer_arena;
  hs_arena_init(&footer_arena);
  hs_pq_file_metadata md;
  st = hs_pq_footer_read(src, &footer_arena, &md, err);
  if (st == HS_OK) {
    hs_iceberg_data_file_options o = *opts;
    if (o.file_path == NULL) o.file_path = path;
    if (o.file_size_in_bytes == 0) o.file_size_in_bytes = (int64_t)hs_source_size(src);
    st = hs_iceberg_data_file_from_parquet(&md, &o, arena, out, err);
  }
  hs_arena_reset(&footer_arena);
  hs_source_unref(src);
  return st;
}

hs_status hs_iceberg_data_file_from_parquet_writer(const hs_parquet_writer *writer,
                                                   const hs_iceberg_data_file_options *opts,
                                                   hs_arena *arena, hs_iceberg_data_file *out,
                                                   hs_error *err) {
  if (opts->file_path == NULL)
    return hs_error_set(err, HS_ERR_INVALID_ARG, "data file from a writer: no file_path");
  hs_arena footer_arena;
  hs_arena_init(&footer_arena);
  hs_pq_file_metadata md;
  hs_status st = hs_parquet_writer_footer(writer, &footer_arena, &md, err);
  if (st == HS_OK) {
    hs_iceberg_data_file_options o = *opts;
    if (o.file_size_in_bytes == 0) o.file_size_in_bytes = (int64_t)md.file_size;
    st = hs_iceberg_data_file_from_parquet(&md, &o, arena, out, err);
  }
  hs_arena_reset(&footer_arena);
  return st;
}
