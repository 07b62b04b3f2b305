/*
 * metadata.c — parsing of Parquet metadata (parquet.thrift) from the Thrift
 * compact protocol, the footer reader, and display names for enums.
 *
 * Field ids follow apache/parquet-format's parquet.thrift. Unknown fields
 * are skipped, so files from newer writers parse. Required fields that a
 * consumer relies on are checked (as generated Thrift code does), so a
 * struct that parses is safe to use: names are never NULL, list counts and
 * their arrays agree. Bytes are copied into the caller's arena. On failure
 * the arena may hold partial results; the caller resets it.
 */
#include <string.h>

#include "../io/io.h"
#include "metadata.h"
#include "thrift.h"

#define MD_TRY(expr)                    \
  do {                                  \
    hs_status md_st_ = (expr);          \
    if (md_st_ != HS_OK) return md_st_; \
  } while (0)

/* Field-id bitmask helpers for required-field checks (ids < 32). */
#define MD_BIT(id) (1u << (id))

static hs_status md_require(hs_thrift_reader *r, uint32_t seen, uint32_t required,
                            const char *what) {
  uint32_t missing = required & ~seen;
  if (missing == 0) return HS_OK;
  int id = __builtin_ctz(missing);
  if (r->status != HS_OK) return r->status;
  r->status = HS_ERR_CORRUPT;
  return hs_error_set(r->err, HS_ERR_CORRUPT, "thrift: at byte %zu: %s: required field %d missing",
                      r->pos, what, id);
}

static hs_status md_nomem(hs_thrift_reader *r, const char *what) {
  if (r->status != HS_OK) return r->status;
  r->status = HS_ERR_NOMEM;
  return hs_error_set(r->err, HS_ERR_NOMEM, "thrift: at byte %zu: %s: out of memory", r->pos, what);
}

static uint32_t md_mark(uint32_t seen, int16_t id) {
  return id >= 0 && id < 32 ? seen | MD_BIT(id) : seen;
}

/* Zeroed array of n elements from the arena (n was bounded by the list
 * header against the bytes remaining). */
static hs_status md_array(hs_thrift_reader *r, hs_arena *a, uint32_t n, size_t elem, void **out,
                          const char *what) {
  *out = NULL;
  if (n == 0) return HS_OK;
  size_t bytes;
  if (!hs_mul_size(n, elem, &bytes)) return md_nomem(r, what);
  *out = hs_arena_alloc(a, bytes);
  return *out ? HS_OK : md_nomem(r, what);
}

static hs_status md_bytes(hs_thrift_reader *r, hs_arena *a, const hs_thrift_field *f,
                          hs_pq_bytes *out, const char *what) {
  const uint8_t *data;
  uint32_t len;
  MD_TRY(hs_thrift_field_binary(r, f, &data, &len, what));
  out->data = hs_arena_memdup(a, data, len);
  out->len = len;
  return out->data ? HS_OK : md_nomem(r, what);
}

static hs_status md_string(hs_thrift_reader *r, hs_arena *a, const uint8_t *data, uint32_t len,
                           const char **out, const char *what) {
  *out = hs_arena_strndup(a, (const char *)data, len);
  return *out ? HS_OK : md_nomem(r, what);
}

static hs_status md_field_string(hs_thrift_reader *r, hs_arena *a, const hs_thrift_field *f,
                                 const char **out, const char *what) {
  const uint8_t *data;
  uint32_t len;
  MD_TRY(hs_thrift_field_binary(r, f, &data, &len, what));
  return md_string(r, a, data, len, out, what);
}

/* Start a list-valued field whose elements must have wire type `elem`. */
static hs_status md_list(hs_thrift_reader *r, const hs_thrift_field *f, uint8_t elem, uint32_t *n,
                         const char *what) {
  uint8_t et;
  MD_TRY(hs_thrift_field_expect(r, f, HS_THRIFT_LIST, what));
  MD_TRY(hs_thrift_list_begin(r, &et, n, what));
  if (*n > 0 && et != elem) return hs_thrift_fail(r, what, "unexpected list element type");
  return HS_OK;
}

/* Read the next field header of a struct. Fields whose wire type differs
 * from the one parquet.thrift gives their id (`types[id]`, 0 = unknown id)
 * are skipped, as generated Thrift code does: some writers reused ids of
 * fields later standardised with another type, and readers accept them. */
static hs_status md_next(hs_thrift_reader *r, int16_t *last, hs_thrift_field *f,
                         const uint8_t *types, size_t n_types, const char *what) {
  for (;;) {
    MD_TRY(hs_thrift_field_next(r, last, f, what));
    if (f->type == HS_THRIFT_STOP || f->id < 0 || (size_t)f->id >= n_types) return HS_OK;
    uint8_t want = types[f->id];
    if (want == 0 || want == f->type || (want == HS_THRIFT_LIST && f->type == HS_THRIFT_SET))
      return HS_OK;
    MD_TRY(hs_thrift_skip(r, f->type, what));
  }
}

#define MD_NEXT(types) md_next(r, &last, &f, types, sizeof types, what)

/* Wire types by field id, per struct (parquet.thrift). */
enum {
  B_ = HS_THRIFT_TRUE,
  I8_ = HS_THRIFT_I8,
  I16_ = HS_THRIFT_I16,
  I32_ = HS_THRIFT_I32,
  I64_ = HS_THRIFT_I64,
  BIN_ = HS_THRIFT_BINARY,
  L_ = HS_THRIFT_LIST,
  S_ = HS_THRIFT_STRUCT
};
static const uint8_t k_statistics[] = {0, BIN_, BIN_, I64_, I64_, BIN_, BIN_, B_, B_};
static const uint8_t k_key_value[] = {0, BIN_, BIN_};
static const uint8_t k_time_unit[] = {0, S_, S_, S_};
static const uint8_t k_decimal[] = {0, I32_, I32_};
static const uint8_t k_time[] = {0, B_, S_};
static const uint8_t k_int[] = {0, I8_, B_};
static const uint8_t k_none[] = {0};
static const uint8_t k_logical[] = {0,  S_, S_, S_, S_, S_, S_, S_, S_, S_,
                                    S_, S_, S_, S_, S_, S_, S_, S_, S_};
static const uint8_t k_schema_element[] = {0,    I32_, I32_, I32_, BIN_, I32_,
                                           I32_, I32_, I32_, I32_, S_};
static const uint8_t k_column_meta[] = {0,  I32_, L_,   L_,   I32_, I64_, I64_, I64_,
                                        L_, I64_, I64_, I64_, S_,   L_,   I64_, I32_};
static const uint8_t k_column_chunk[] = {0, BIN_, I64_, S_, I64_, I32_, I64_, I32_, S_, BIN_};
static const uint8_t k_sorting_column[] = {0, I32_, B_, B_};
static const uint8_t k_row_group[] = {0, L_, I64_, I64_, L_, I64_, I64_, I16_};
static const uint8_t k_file_metadata[] = {0, I32_, L_, I64_, L_, L_, BIN_, L_, S_, BIN_};
static const uint8_t k_data_page[] = {0, I32_, I32_, I32_, I32_, S_};
static const uint8_t k_dictionary_page[] = {0, I32_, I32_, B_};
static const uint8_t k_data_page_v2[] = {0, I32_, I32_, I32_, I32_, I32_, I32_, B_, S_};
static const uint8_t k_page_header[] = {0, I32_, I32_, I32_, I32_, S_, S_, S_, S_};
static const uint8_t k_column_index[] = {0, L_, L_, L_, I32_, L_};
static const uint8_t k_page_location[] = {0, I64_, I32_, I64_};
static const uint8_t k_offset_index[] = {0, L_, L_};

/* ------------------------------------------------------------- structs */

static hs_status md_statistics(hs_thrift_reader *r, hs_arena *a, hs_pq_statistics *s) {
  const char *what = "Statistics";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  hs_thrift_field f;
  for (;;) {
    MD_TRY(MD_NEXT(k_statistics));
    if (f.type == HS_THRIFT_STOP) break;
    switch (f.id) {
    case 1:
      s->has_max = true;
      MD_TRY(md_bytes(r, a, &f, &s->max, "Statistics.max"));
      break;
    case 2:
      s->has_min = true;
      MD_TRY(md_bytes(r, a, &f, &s->min, "Statistics.min"));
      break;
    case 3:
      s->has_null_count = true;
      MD_TRY(hs_thrift_field_i64(r, &f, &s->null_count, "Statistics.null_count"));
      break;
    case 4:
      s->has_distinct_count = true;
      MD_TRY(hs_thrift_field_i64(r, &f, &s->distinct_count, "Statistics.distinct_count"));
      break;
    case 5:
      s->has_max_value = true;
      MD_TRY(md_bytes(r, a, &f, &s->max_value, "Statistics.max_value"));
      break;
    case 6:
      s->has_min_value = true;
      MD_TRY(md_bytes(r, a, &f, &s->min_value, "Statistics.min_value"));
      break;
    case 7:
      s->has_is_max_value_exact = true;
      MD_TRY(hs_thrift_field_bool(r, &f, &s->is_max_value_exact, "Statistics.is_max_value_exact"));
      break;
    case 8:
      s->has_is_min_value_exact = true;
      MD_TRY(hs_thrift_field_bool(r, &f, &s->is_min_value_exact, "Statistics.is_min_value_exact"));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  return HS_OK;
}

static hs_status md_key_value(hs_thrift_reader *r, hs_arena *a, hs_pq_key_value *kv) {
  const char *what = "KeyValue";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0;
  hs_thrift_field f;
  for (;;) {
    MD_TRY(MD_NEXT(k_key_value));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (f.id) {
    case 1: MD_TRY(md_field_string(r, a, &f, &kv->key, "KeyValue.key")); break;
    case 2:
      kv->has_value = true;
      MD_TRY(md_bytes(r, a, &f, &kv->value, "KeyValue.value"));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  return md_require(r, seen, MD_BIT(1), what);
}

static hs_status md_key_values(hs_thrift_reader *r, hs_arena *a, const hs_thrift_field *f,
                               hs_pq_key_value **out, uint32_t *n_out, const char *what) {
  uint32_t n;
  MD_TRY(md_list(r, f, HS_THRIFT_STRUCT, &n, what));
  MD_TRY(md_array(r, a, n, sizeof **out, (void **)out, what));
  for (uint32_t i = 0; i < n; i++) MD_TRY(md_key_value(r, a, &(*out)[i]));
  *n_out = n;
  return HS_OK;
}

/* TimeUnit union: MILLIS = 1, MICROS = 2, NANOS = 3 (empty structs). */
static hs_status md_time_unit(hs_thrift_reader *r, hs_pq_time_unit *unit, bool *known) {
  const char *what = "TimeUnit";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  hs_thrift_field f;
  *known = false;
  for (;;) {
    MD_TRY(MD_NEXT(k_time_unit));
    if (f.type == HS_THRIFT_STOP) break;
    if (f.id >= 1 && f.id <= 3 && f.type == HS_THRIFT_STRUCT) {
      *unit = (hs_pq_time_unit)(f.id - 1);
      *known = true;
    }
    MD_TRY(hs_thrift_skip(r, f.type, what));
  }
  hs_thrift_struct_end(r);
  return HS_OK;
}

/* The parameters struct of a LogicalType member (DECIMAL, TIME, TIMESTAMP,
 * INTEGER). Other members' structs are skipped. */
static hs_status md_logical_params(hs_thrift_reader *r, hs_pq_logical *lt) {
  const char *what = "LogicalType";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0;
  hs_thrift_field f;
  bool unit_known = true;
  const uint8_t *types = k_none;
  size_t n_types = sizeof k_none;
  switch (lt->kind) {
  case HS_PQ_LT_DECIMAL: types = k_decimal, n_types = sizeof k_decimal; break;
  case HS_PQ_LT_TIME:
  case HS_PQ_LT_TIMESTAMP: types = k_time, n_types = sizeof k_time; break;
  case HS_PQ_LT_INTEGER: types = k_int, n_types = sizeof k_int; break;
  default: break;
  }
  for (;;) {
    MD_TRY(md_next(r, &last, &f, types, n_types, what));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (lt->kind) {
    case HS_PQ_LT_DECIMAL:
      if (f.id == 1)
        MD_TRY(hs_thrift_field_i32(r, &f, &lt->decimal_scale, "DecimalType.scale"));
      else if (f.id == 2)
        MD_TRY(hs_thrift_field_i32(r, &f, &lt->decimal_precision, "DecimalType.precision"));
      else
        MD_TRY(hs_thrift_skip(r, f.type, what));
      break;
    case HS_PQ_LT_TIME:
    case HS_PQ_LT_TIMESTAMP:
      if (f.id == 1) {
        MD_TRY(hs_thrift_field_bool(r, &f, &lt->is_adjusted_to_utc, "TimeType.isAdjustedToUTC"));
      } else if (f.id == 2) {
        MD_TRY(hs_thrift_field_expect(r, &f, HS_THRIFT_STRUCT, "TimeType.unit"));
        MD_TRY(md_time_unit(r, &lt->unit, &unit_known));
      } else {
        MD_TRY(hs_thrift_skip(r, f.type, what));
      }
      break;
    case HS_PQ_LT_INTEGER:
      if (f.id == 1)
        MD_TRY(hs_thrift_field_i8(r, &f, &lt->int_bit_width, "IntType.bitWidth"));
      else if (f.id == 2)
        MD_TRY(hs_thrift_field_bool(r, &f, &lt->int_is_signed, "IntType.isSigned"));
      else
        MD_TRY(hs_thrift_skip(r, f.type, what));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  switch (lt->kind) {
  case HS_PQ_LT_DECIMAL:
  case HS_PQ_LT_TIME:
  case HS_PQ_LT_TIMESTAMP:
  case HS_PQ_LT_INTEGER: MD_TRY(md_require(r, seen, MD_BIT(1) | MD_BIT(2), what)); break;
  default: break;
  }
  if (!unit_known) lt->kind = HS_PQ_LT_OTHER; /* a unit from the future: no annotation */
  return HS_OK;
}

static hs_status md_logical(hs_thrift_reader *r, hs_pq_logical *lt) {
  const char *what = "LogicalType";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  hs_thrift_field f;
  for (;;) {
    MD_TRY(MD_NEXT(k_logical));
    if (f.type == HS_THRIFT_STOP) break;
    bool known = (f.id >= 1 && f.id <= 8) || (f.id >= 10 && f.id <= 18);
    if (!known || f.type != HS_THRIFT_STRUCT) {
      lt->kind = HS_PQ_LT_OTHER;
      MD_TRY(hs_thrift_skip(r, f.type, what));
      continue;
    }
    memset(lt, 0, sizeof *lt);
    lt->kind = (hs_pq_logical_kind)f.id;
    MD_TRY(md_logical_params(r, lt));
  }
  hs_thrift_struct_end(r);
  return HS_OK;
}

static hs_status md_schema_element(hs_thrift_reader *r, hs_arena *a, hs_pq_schema_element *se) {
  const char *what = "SchemaElement";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0;
  hs_thrift_field f;
  int32_t v;
  for (;;) {
    MD_TRY(MD_NEXT(k_schema_element));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (f.id) {
    case 1:
      MD_TRY(hs_thrift_field_i32(r, &f, &v, "SchemaElement.type"));
      if (v < HS_PQ_BOOLEAN || v > HS_PQ_FIXED_LEN_BYTE_ARRAY)
        return hs_thrift_fail(r, "SchemaElement.type", "unknown physical type");
      se->has_type = true;
      se->type = (hs_pq_type)v;
      break;
    case 2:
      MD_TRY(hs_thrift_field_i32(r, &f, &se->type_length, "SchemaElement.type_length"));
      break;
    case 3:
      MD_TRY(hs_thrift_field_i32(r, &f, &v, "SchemaElement.repetition_type"));
      if (v < HS_PQ_REQUIRED || v > HS_PQ_REPEATED)
        return hs_thrift_fail(r, "SchemaElement.repetition_type", "unknown repetition");
      se->has_repetition = true;
      se->repetition = (hs_pq_repetition)v;
      break;
    case 4: MD_TRY(md_field_string(r, a, &f, &se->name, "SchemaElement.name")); break;
    case 5:
      MD_TRY(hs_thrift_field_i32(r, &f, &se->num_children, "SchemaElement.num_children"));
      break;
    case 6:
      MD_TRY(hs_thrift_field_i32(r, &f, &v, "SchemaElement.converted_type"));
      se->has_converted = true;
      se->converted = (hs_pq_converted)v;
      break;
    case 7: MD_TRY(hs_thrift_field_i32(r, &f, &se->scale, "SchemaElement.scale")); break;
    case 8: MD_TRY(hs_thrift_field_i32(r, &f, &se->precision, "SchemaElement.precision")); break;
    case 9:
      se->has_field_id = true;
      MD_TRY(hs_thrift_field_i32(r, &f, &se->field_id, "SchemaElement.field_id"));
      break;
    case 10:
      MD_TRY(hs_thrift_field_expect(r, &f, HS_THRIFT_STRUCT, "SchemaElement.logicalType"));
      MD_TRY(md_logical(r, &se->logical));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  return md_require(r, seen, MD_BIT(4), what);
}

static hs_status md_column_meta(hs_thrift_reader *r, hs_arena *a, hs_pq_column_meta *cm) {
  const char *what = "ColumnMetaData";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0, n;
  hs_thrift_field f;
  int32_t v;
  for (;;) {
    MD_TRY(MD_NEXT(k_column_meta));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (f.id) {
    case 1:
      MD_TRY(hs_thrift_field_i32(r, &f, &v, "ColumnMetaData.type"));
      if (v < HS_PQ_BOOLEAN || v > HS_PQ_FIXED_LEN_BYTE_ARRAY)
        return hs_thrift_fail(r, "ColumnMetaData.type", "unknown physical type");
      cm->type = (hs_pq_type)v;
      break;
    case 2:
      MD_TRY(md_list(r, &f, HS_THRIFT_I32, &n, "ColumnMetaData.encodings"));
      MD_TRY(md_array(r, a, n, sizeof *cm->encodings, (void **)&cm->encodings, what));
      for (uint32_t i = 0; i < n; i++)
        MD_TRY(hs_thrift_read_i32(r, &cm->encodings[i], "ColumnMetaData.encodings"));
      cm->n_encodings = n;
      break;
    case 3:
      MD_TRY(md_list(r, &f, HS_THRIFT_BINARY, &n, "ColumnMetaData.path_in_schema"));
      MD_TRY(md_array(r, a, n, sizeof *cm->path_in_schema, (void **)&cm->path_in_schema, what));
      for (uint32_t i = 0; i < n; i++) {
        const uint8_t *data;
        uint32_t len;
        MD_TRY(hs_thrift_read_binary(r, &data, &len, "ColumnMetaData.path_in_schema"));
        MD_TRY(md_string(r, a, data, len, &cm->path_in_schema[i], what));
      }
      cm->n_path = n;
      break;
    case 4: MD_TRY(hs_thrift_field_i32(r, &f, &cm->codec, "ColumnMetaData.codec")); break;
    case 5: MD_TRY(hs_thrift_field_i64(r, &f, &cm->num_values, "ColumnMetaData.num_values")); break;
    case 6:
      MD_TRY(hs_thrift_field_i64(r, &f, &cm->total_uncompressed_size,
                                 "ColumnMetaData.total_uncompressed_size"));
      break;
    case 7:
      MD_TRY(hs_thrift_field_i64(r, &f, &cm->total_compressed_size,
                                 "ColumnMetaData.total_compressed_size"));
      break;
    case 8:
      MD_TRY(md_key_values(r, a, &f, &cm->key_value_metadata, &cm->n_key_value_metadata,
                           "ColumnMetaData.key_value_metadata"));
      break;
    case 9:
      MD_TRY(hs_thrift_field_i64(r, &f, &cm->data_page_offset, "ColumnMetaData.data_page_offset"));
      break;
    case 10:
      cm->has_index_page_offset = true;
      MD_TRY(
          hs_thrift_field_i64(r, &f, &cm->index_page_offset, "ColumnMetaData.index_page_offset"));
      break;
    case 11:
      cm->has_dictionary_page_offset = true;
      MD_TRY(hs_thrift_field_i64(r, &f, &cm->dictionary_page_offset,
                                 "ColumnMetaData.dictionary_page_offset"));
      break;
    case 12:
      cm->has_statistics = true;
      MD_TRY(hs_thrift_field_expect(r, &f, HS_THRIFT_STRUCT, "ColumnMetaData.statistics"));
      MD_TRY(md_statistics(r, a, &cm->statistics));
      break;
    case 14:
      cm->has_bloom_filter_offset = true;
      MD_TRY(hs_thrift_field_i64(r, &f, &cm->bloom_filter_offset,
                                 "ColumnMetaData.bloom_filter_offset"));
      break;
    case 15:
      cm->has_bloom_filter_length = true;
      MD_TRY(hs_thrift_field_i32(r, &f, &cm->bloom_filter_length,
                                 "ColumnMetaData.bloom_filter_length"));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  uint32_t required =
      MD_BIT(1) | MD_BIT(2) | MD_BIT(3) | MD_BIT(4) | MD_BIT(5) | MD_BIT(6) | MD_BIT(7) | MD_BIT(9);
  return md_require(r, seen, required, what);
}

static hs_status md_column_chunk(hs_thrift_reader *r, hs_arena *a, hs_pq_column_chunk *cc) {
  const char *what = "ColumnChunk";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  hs_thrift_field f;
  for (;;) {
    MD_TRY(MD_NEXT(k_column_chunk));
    if (f.type == HS_THRIFT_STOP) break;
    switch (f.id) {
    case 1: MD_TRY(md_field_string(r, a, &f, &cc->file_path, "ColumnChunk.file_path")); break;
    case 2: MD_TRY(hs_thrift_field_i64(r, &f, &cc->file_offset, "ColumnChunk.file_offset")); break;
    case 3:
      cc->has_meta_data = true;
      MD_TRY(hs_thrift_field_expect(r, &f, HS_THRIFT_STRUCT, "ColumnChunk.meta_data"));
      MD_TRY(md_column_meta(r, a, &cc->meta_data));
      break;
    case 4:
      cc->has_offset_index = true;
      MD_TRY(
          hs_thrift_field_i64(r, &f, &cc->offset_index_offset, "ColumnChunk.offset_index_offset"));
      break;
    case 5:
      cc->has_offset_index = true;
      MD_TRY(
          hs_thrift_field_i32(r, &f, &cc->offset_index_length, "ColumnChunk.offset_index_length"));
      break;
    case 6:
      cc->has_column_index = true;
      MD_TRY(
          hs_thrift_field_i64(r, &f, &cc->column_index_offset, "ColumnChunk.column_index_offset"));
      break;
    case 7:
      cc->has_column_index = true;
      MD_TRY(
          hs_thrift_field_i32(r, &f, &cc->column_index_length, "ColumnChunk.column_index_length"));
      break;
    case 8: /* crypto_metadata */
    case 9: /* encrypted_column_metadata */
      cc->is_encrypted = true;
      MD_TRY(hs_thrift_skip(r, f.type, what));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  return HS_OK;
}

static hs_status md_sorting_column(hs_thrift_reader *r, hs_pq_sorting_column *sc) {
  const char *what = "SortingColumn";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0;
  hs_thrift_field f;
  for (;;) {
    MD_TRY(MD_NEXT(k_sorting_column));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (f.id) {
    case 1: MD_TRY(hs_thrift_field_i32(r, &f, &sc->column_idx, "SortingColumn.column_idx")); break;
    case 2: MD_TRY(hs_thrift_field_bool(r, &f, &sc->descending, "SortingColumn.descending")); break;
    case 3:
      MD_TRY(hs_thrift_field_bool(r, &f, &sc->nulls_first, "SortingColumn.nulls_first"));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  return md_require(r, seen, MD_BIT(1) | MD_BIT(2) | MD_BIT(3), what);
}

static hs_status md_row_group(hs_thrift_reader *r, hs_arena *a, hs_pq_row_group *rg) {
  const char *what = "RowGroup";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0, n;
  hs_thrift_field f;
  for (;;) {
    MD_TRY(MD_NEXT(k_row_group));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (f.id) {
    case 1:
      MD_TRY(md_list(r, &f, HS_THRIFT_STRUCT, &n, "RowGroup.columns"));
      MD_TRY(md_array(r, a, n, sizeof *rg->columns, (void **)&rg->columns, what));
      for (uint32_t i = 0; i < n; i++) MD_TRY(md_column_chunk(r, a, &rg->columns[i]));
      rg->n_columns = n;
      break;
    case 2:
      MD_TRY(hs_thrift_field_i64(r, &f, &rg->total_byte_size, "RowGroup.total_byte_size"));
      break;
    case 3: MD_TRY(hs_thrift_field_i64(r, &f, &rg->num_rows, "RowGroup.num_rows")); break;
    case 4:
      MD_TRY(md_list(r, &f, HS_THRIFT_STRUCT, &n, "RowGroup.sorting_columns"));
      MD_TRY(md_array(r, a, n, sizeof *rg->sorting_columns, (void **)&rg->sorting_columns, what));
      for (uint32_t i = 0; i < n; i++) MD_TRY(md_sorting_column(r, &rg->sorting_columns[i]));
      rg->n_sorting_columns = n;
      break;
    case 5:
      rg->has_file_offset = true;
      MD_TRY(hs_thrift_field_i64(r, &f, &rg->file_offset, "RowGroup.file_offset"));
      break;
    case 6:
      rg->has_total_compressed_size = true;
      MD_TRY(
          hs_thrift_field_i64(r, &f, &rg->total_compressed_size, "RowGroup.total_compressed_size"));
      break;
    case 7:
      rg->has_ordinal = true;
      MD_TRY(hs_thrift_field_i16(r, &f, &rg->ordinal, "RowGroup.ordinal"));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  return md_require(r, seen, MD_BIT(1) | MD_BIT(2) | MD_BIT(3), what);
}

static hs_status md_file_metadata(hs_thrift_reader *r, hs_arena *a, hs_pq_file_metadata *md) {
  const char *what = "FileMetaData";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0, n;
  hs_thrift_field f;
  for (;;) {
    MD_TRY(MD_NEXT(k_file_metadata));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (f.id) {
    case 1: MD_TRY(hs_thrift_field_i32(r, &f, &md->version, "FileMetaData.version")); break;
    case 2:
      MD_TRY(md_list(r, &f, HS_THRIFT_STRUCT, &n, "FileMetaData.schema"));
      MD_TRY(md_array(r, a, n, sizeof *md->schema, (void **)&md->schema, what));
      for (uint32_t i = 0; i < n; i++) MD_TRY(md_schema_element(r, a, &md->schema[i]));
      md->n_schema = n;
      break;
    case 3: MD_TRY(hs_thrift_field_i64(r, &f, &md->num_rows, "FileMetaData.num_rows")); break;
    case 4:
      MD_TRY(md_list(r, &f, HS_THRIFT_STRUCT, &n, "FileMetaData.row_groups"));
      MD_TRY(md_array(r, a, n, sizeof *md->row_groups, (void **)&md->row_groups, what));
      for (uint32_t i = 0; i < n; i++) MD_TRY(md_row_group(r, a, &md->row_groups[i]));
      md->n_row_groups = n;
      break;
    case 5:
      MD_TRY(md_key_values(r, a, &f, &md->key_value_metadata, &md->n_key_value_metadata,
                           "FileMetaData.key_value_metadata"));
      break;
    case 6: MD_TRY(md_field_string(r, a, &f, &md->created_by, "FileMetaData.created_by")); break;
    case 7:
      /* ColumnOrder union: TYPE_ORDER is the only member; keep the count. */
      MD_TRY(md_list(r, &f, HS_THRIFT_STRUCT, &n, "FileMetaData.column_orders"));
      for (uint32_t i = 0; i < n; i++)
        MD_TRY(hs_thrift_skip(r, HS_THRIFT_STRUCT, "FileMetaData.column_orders"));
      md->n_column_orders = n;
      break;
    case 8:
      md->has_encryption_algorithm = true;
      MD_TRY(hs_thrift_skip(r, f.type, "FileMetaData.encryption_algorithm"));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  return md_require(r, seen, MD_BIT(1) | MD_BIT(2) | MD_BIT(3) | MD_BIT(4), what);
}

hs_status hs_pq_file_metadata_parse(const uint8_t *buf, size_t len, hs_arena *arena,
                                    hs_pq_file_metadata *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_thrift_reader r;
  hs_thrift_reader_init(&r, buf, len, err);
  return md_file_metadata(&r, arena, out);
}

/* ---------------------------------------------------------- page header */

static hs_status md_data_page(hs_thrift_reader *r, hs_arena *a, hs_pq_page_header *ph) {
  const char *what = "DataPageHeader";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0;
  hs_thrift_field f;
  for (;;) {
    MD_TRY(MD_NEXT(k_data_page));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (f.id) {
    case 1: MD_TRY(hs_thrift_field_i32(r, &f, &ph->data_page.num_values, what)); break;
    case 2: MD_TRY(hs_thrift_field_i32(r, &f, &ph->data_page.encoding, what)); break;
    case 3:
      MD_TRY(hs_thrift_field_i32(r, &f, &ph->data_page.definition_level_encoding, what));
      break;
    case 4:
      MD_TRY(hs_thrift_field_i32(r, &f, &ph->data_page.repetition_level_encoding, what));
      break;
    case 5:
      ph->data_page.has_statistics = true;
      MD_TRY(hs_thrift_field_expect(r, &f, HS_THRIFT_STRUCT, "DataPageHeader.statistics"));
      MD_TRY(md_statistics(r, a, &ph->data_page.statistics));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  return md_require(r, seen, MD_BIT(1) | MD_BIT(2) | MD_BIT(3) | MD_BIT(4), what);
}

static hs_status md_dictionary_page(hs_thrift_reader *r, hs_pq_page_header *ph) {
  const char *what = "DictionaryPageHeader";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0;
  hs_thrift_field f;
  for (;;) {
    MD_TRY(MD_NEXT(k_dictionary_page));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (f.id) {
    case 1: MD_TRY(hs_thrift_field_i32(r, &f, &ph->dictionary_page.num_values, what)); break;
    case 2: MD_TRY(hs_thrift_field_i32(r, &f, &ph->dictionary_page.encoding, what)); break;
    case 3: MD_TRY(hs_thrift_field_bool(r, &f, &ph->dictionary_page.is_sorted, what)); break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  return md_require(r, seen, MD_BIT(1) | MD_BIT(2), what);
}

static hs_status md_data_page_v2(hs_thrift_reader *r, hs_arena *a, hs_pq_page_header *ph) {
  const char *what = "DataPageHeaderV2";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0;
  hs_thrift_field f;
  ph->data_page_v2.is_compressed = true; /* the default when absent */
  for (;;) {
    MD_TRY(MD_NEXT(k_data_page_v2));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (f.id) {
    case 1: MD_TRY(hs_thrift_field_i32(r, &f, &ph->data_page_v2.num_values, what)); break;
    case 2: MD_TRY(hs_thrift_field_i32(r, &f, &ph->data_page_v2.num_nulls, what)); break;
    case 3: MD_TRY(hs_thrift_field_i32(r, &f, &ph->data_page_v2.num_rows, what)); break;
    case 4: MD_TRY(hs_thrift_field_i32(r, &f, &ph->data_page_v2.encoding, what)); break;
    case 5:
      MD_TRY(hs_thrift_field_i32(r, &f, &ph->data_page_v2.definition_levels_byte_length, what));
      break;
    case 6:
      MD_TRY(hs_thrift_field_i32(r, &f, &ph->data_page_v2.repetition_levels_byte_length, what));
      break;
    case 7: MD_TRY(hs_thrift_field_bool(r, &f, &ph->data_page_v2.is_compressed, what)); break;
    case 8:
      ph->data_page_v2.has_statistics = true;
      MD_TRY(hs_thrift_field_expect(r, &f, HS_THRIFT_STRUCT, "DataPageHeaderV2.statistics"));
      MD_TRY(md_statistics(r, a, &ph->data_page_v2.statistics));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  uint32_t required = MD_BIT(1) | MD_BIT(2) | MD_BIT(3) | MD_BIT(4) | MD_BIT(5) | MD_BIT(6);
  return md_require(r, seen, required, what);
}

hs_status hs_pq_page_header_parse(const uint8_t *buf, size_t len, hs_arena *arena,
                                  hs_pq_page_header *out, size_t *consumed, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_thrift_reader rd, *r = &rd;
  hs_thrift_reader_init(r, buf, len, err);
  const char *what = "PageHeader";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0;
  hs_thrift_field f;
  int32_t v;
  for (;;) {
    MD_TRY(MD_NEXT(k_page_header));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (f.id) {
    case 1:
      MD_TRY(hs_thrift_field_i32(r, &f, &v, "PageHeader.type"));
      out->type = (hs_pq_page_type)v;
      break;
    case 2:
      MD_TRY(hs_thrift_field_i32(r, &f, &out->uncompressed_page_size,
                                 "PageHeader.uncompressed_page_size"));
      break;
    case 3:
      MD_TRY(hs_thrift_field_i32(r, &f, &out->compressed_page_size,
                                 "PageHeader.compressed_page_size"));
      break;
    case 4:
      out->has_crc = true;
      MD_TRY(hs_thrift_field_i32(r, &f, &out->crc, "PageHeader.crc"));
      break;
    case 5:
      out->has_data_page = true;
      MD_TRY(hs_thrift_field_expect(r, &f, HS_THRIFT_STRUCT, "PageHeader.data_page_header"));
      MD_TRY(md_data_page(r, arena, out));
      break;
    case 7:
      out->has_dictionary_page = true;
      MD_TRY(hs_thrift_field_expect(r, &f, HS_THRIFT_STRUCT, "PageHeader.dictionary_page_header"));
      MD_TRY(md_dictionary_page(r, out));
      break;
    case 8:
      out->has_data_page_v2 = true;
      MD_TRY(hs_thrift_field_expect(r, &f, HS_THRIFT_STRUCT, "PageHeader.data_page_header_v2"));
      MD_TRY(md_data_page_v2(r, arena, out));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  MD_TRY(md_require(r, seen, MD_BIT(1) | MD_BIT(2) | MD_BIT(3), what));
  if (consumed) *consumed = r->pos;
  return HS_OK;
}

/* ----------------------------------------------------------- page index */

hs_status hs_pq_column_index_parse(const uint8_t *buf, size_t len, hs_arena *arena,
                                   hs_pq_column_index *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_thrift_reader rd, *r = &rd;
  hs_thrift_reader_init(r, buf, len, err);
  const char *what = "ColumnIndex";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0, n, n_min = 0, n_max = 0, n_nulls = 0;
  hs_thrift_field f;
  for (;;) {
    MD_TRY(MD_NEXT(k_column_index));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (f.id) {
    case 1:
      MD_TRY(md_list(r, &f, HS_THRIFT_TRUE, &n, "ColumnIndex.null_pages"));
      MD_TRY(md_array(r, arena, n, sizeof *out->null_pages, (void **)&out->null_pages, what));
      for (uint32_t i = 0; i < n; i++)
        MD_TRY(hs_thrift_read_bool_elem(r, &out->null_pages[i], "ColumnIndex.null_pages"));
      out->n_pages = n;
      break;
    case 2:
    case 3: {
      hs_pq_bytes **dst = f.id == 2 ? &out->min_values : &out->max_values;
      const char *name = f.id == 2 ? "ColumnIndex.min_values" : "ColumnIndex.max_values";
      MD_TRY(md_list(r, &f, HS_THRIFT_BINARY, &n, name));
      MD_TRY(md_array(r, arena, n, sizeof **dst, (void **)dst, name));
      for (uint32_t i = 0; i < n; i++) {
        const uint8_t *data;
        uint32_t blen;
        MD_TRY(hs_thrift_read_binary(r, &data, &blen, name));
        (*dst)[i].data = hs_arena_memdup(arena, data, blen);
        (*dst)[i].len = blen;
        if ((*dst)[i].data == NULL) return md_nomem(r, name);
      }
      *(f.id == 2 ? &n_min : &n_max) = n;
      break;
    }
    case 4:
      MD_TRY(hs_thrift_field_i32(r, &f, &out->boundary_order, "ColumnIndex.boundary_order"));
      break;
    case 5:
      MD_TRY(md_list(r, &f, HS_THRIFT_I64, &n, "ColumnIndex.null_counts"));
      MD_TRY(md_array(r, arena, n, sizeof *out->null_counts, (void **)&out->null_counts, what));
      for (uint32_t i = 0; i < n; i++)
        MD_TRY(hs_thrift_read_i64(r, &out->null_counts[i], "ColumnIndex.null_counts"));
      out->has_null_counts = true;
      n_nulls = n;
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  MD_TRY(md_require(r, seen, MD_BIT(1) | MD_BIT(2) | MD_BIT(3) | MD_BIT(4), what));
  if (n_min != out->n_pages || n_max != out->n_pages ||
      (out->has_null_counts && n_nulls != out->n_pages))
    return hs_thrift_fail(r, what, "list lengths disagree with null_pages");
  return HS_OK;
}

static hs_status md_page_location(hs_thrift_reader *r, hs_pq_page_location *pl) {
  const char *what = "PageLocation";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0;
  hs_thrift_field f;
  for (;;) {
    MD_TRY(MD_NEXT(k_page_location));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    switch (f.id) {
    case 1: MD_TRY(hs_thrift_field_i64(r, &f, &pl->offset, "PageLocation.offset")); break;
    case 2:
      MD_TRY(hs_thrift_field_i32(r, &f, &pl->compressed_page_size,
                                 "PageLocation.compressed_page_size"));
      break;
    case 3:
      MD_TRY(hs_thrift_field_i64(r, &f, &pl->first_row_index, "PageLocation.first_row_index"));
      break;
    default: MD_TRY(hs_thrift_skip(r, f.type, what)); break;
    }
  }
  hs_thrift_struct_end(r);
  return md_require(r, seen, MD_BIT(1) | MD_BIT(2) | MD_BIT(3), what);
}

hs_status hs_pq_offset_index_parse(const uint8_t *buf, size_t len, hs_arena *arena,
                                   hs_pq_offset_index *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_thrift_reader rd, *r = &rd;
  hs_thrift_reader_init(r, buf, len, err);
  const char *what = "OffsetIndex";
  MD_TRY(hs_thrift_struct_begin(r, what));
  int16_t last = 0;
  uint32_t seen = 0, n;
  hs_thrift_field f;
  for (;;) {
    MD_TRY(MD_NEXT(k_offset_index));
    if (f.type == HS_THRIFT_STOP) break;
    seen = md_mark(seen, f.id);
    if (f.id == 1) {
      MD_TRY(md_list(r, &f, HS_THRIFT_STRUCT, &n, "OffsetIndex.page_locations"));
      MD_TRY(
          md_array(r, arena, n, sizeof *out->page_locations, (void **)&out->page_locations, what));
      for (uint32_t i = 0; i < n; i++) MD_TRY(md_page_location(r, &out->page_locations[i]));
      out->n_pages = n;
    } else {
      MD_TRY(hs_thrift_skip(r, f.type, what));
    }
  }
  hs_thrift_struct_end(r);
  return md_require(r, seen, MD_BIT(1), what);
}

/* --------------------------------------------------------------- footer */

hs_status hs_pq_footer_read(hs_source *src, hs_arena *arena, hs_pq_file_metadata *out,
                            hs_error *err) {
  memset(out, 0, sizeof *out);
  const char *name = hs_source_name(src);
  uint64_t size = hs_source_size(src);
  if (size < 12)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: not a Parquet file: %llu bytes is smaller than the 12-byte minimum",
                        name, (unsigned long long)size);
  uint8_t head[4], tail[8];
  MD_TRY(hs_source_read(src, 0, sizeof head, head, err));
  MD_TRY(hs_source_read(src, size - 8, sizeof tail, tail, err));
  if (memcmp(tail + 4, "PARE", 4) == 0)
    return hs_error_set(err, HS_ERR_UNSUPPORTED,
                        "%s: file is encrypted (encrypted footer); decryption is not supported",
                        name);
  if (memcmp(tail + 4, "PAR1", 4) != 0)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: not a Parquet file: no PAR1 magic at the end",
                        name);
  if (memcmp(head, "PAR1", 4) != 0)
    return hs_error_set(err, HS_ERR_CORRUPT, "%s: not a Parquet file: no PAR1 magic at the start",
                        name);
  uint32_t footer_len = hs_load_u32le(tail);
  if ((uint64_t)footer_len > size - 12)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: footer length %u exceeds the file size %llu less magic and length",
                        name, footer_len, (unsigned long long)size);
  uint64_t footer_off = size - 8 - footer_len;
  hs_buf scratch;
  hs_buf_init(&scratch);
  const uint8_t *footer;
  hs_status st = hs_source_view(src, footer_off, footer_len, &scratch, &footer, err);
  if (st == HS_OK) {
    st = hs_pq_file_metadata_parse(footer, footer_len, arena, out, err);
    if (st == HS_OK) {
      out->file_size = size;
      out->footer_len = footer_len;
      out->footer_crc32c = hs_crc32c_extend(0, footer, footer_len);
    }
    if (st != HS_OK)
      hs_error_prefix(err, "%s: footer at offset %llu: ", name, (unsigned long long)footer_off);
  }
  hs_buf_free(&scratch);
  return st;
}

/* ---------------------------------------------------------------- names */

const char *hs_pq_type_name(int32_t type) {
  static const char *const names[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                      "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  return type >= 0 && type < 8 ? names[type] : "?";
}

const char *hs_pq_codec_name(int32_t codec) {
  static const char *const names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                      "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
  return codec >= 0 && codec < 8 ? names[codec] : "?";
}

const char *hs_pq_encoding_name(int32_t encoding) {
  static const char *const names[] = {
      "PLAIN",          "GROUP_VAR_INT",       "PLAIN_DICTIONARY",        "RLE",
      "BIT_PACKED",     "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
      "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
  return encoding >= 0 && encoding < 10 ? names[encoding] : "?";
}
