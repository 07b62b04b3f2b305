/*
 * metadata_write.c — serialization of Parquet metadata structures to the
 * Thrift compact protocol (the inverse of metadata.c).
 *
 * Field ids follow parquet.thrift. Required fields are always written;
 * optional ones only when their has_* flag is set or their pointer is not
 * NULL, so parse(write(x)) == x for every struct metadata.c produces
 * (except ColumnChunk.is_encrypted: we never write crypto metadata).
 * Fields are written in increasing id order, which keeps field headers in
 * the one-byte delta form that every reader expects from Thrift writers.
 */
#include <string.h>

#include "metadata.h"
#include "thrift.h"

static void mw_statistics(hs_thrift_writer *w, int16_t id, const hs_pq_statistics *s) {
  hs_thrift_write_field_struct_begin(w, id);
  if (s->has_max) hs_thrift_write_field_binary(w, 1, s->max.data, s->max.len);
  if (s->has_min) hs_thrift_write_field_binary(w, 2, s->min.data, s->min.len);
  if (s->has_null_count) hs_thrift_write_field_i64(w, 3, s->null_count);
  if (s->has_distinct_count) hs_thrift_write_field_i64(w, 4, s->distinct_count);
  if (s->has_max_value) hs_thrift_write_field_binary(w, 5, s->max_value.data, s->max_value.len);
  if (s->has_min_value) hs_thrift_write_field_binary(w, 6, s->min_value.data, s->min_value.len);
  if (s->has_is_max_value_exact) hs_thrift_write_field_bool(w, 7, s->is_max_value_exact);
  if (s->has_is_min_value_exact) hs_thrift_write_field_bool(w, 8, s->is_min_value_exact);
  hs_thrift_write_struct_end(w);
}

static void mw_key_values(hs_thrift_writer *w, int16_t id, const hs_pq_key_value *kv, uint32_t n) {
  hs_thrift_write_field_list_begin(w, id, HS_THRIFT_STRUCT, n);
  for (uint32_t i = 0; i < n; i++) {
    hs_thrift_write_struct_begin(w);
    hs_thrift_write_field_string(w, 1, kv[i].key ? kv[i].key : "");
    if (kv[i].has_value) hs_thrift_write_field_binary(w, 2, kv[i].value.data, kv[i].value.len);
    hs_thrift_write_struct_end(w);
  }
}

/* LogicalType union: one member, whose field id is the kind. */
static void mw_logical(hs_thrift_writer *w, int16_t id, const hs_pq_logical *lt) {
  hs_thrift_write_field_struct_begin(w, id);
  hs_thrift_write_field_struct_begin(w, (int16_t)lt->kind);
  switch (lt->kind) {
  case HS_PQ_LT_DECIMAL:
    hs_thrift_write_field_i32(w, 1, lt->decimal_scale);
    hs_thrift_write_field_i32(w, 2, lt->decimal_precision);
    break;
  case HS_PQ_LT_TIME:
  case HS_PQ_LT_TIMESTAMP:
    hs_thrift_write_field_bool(w, 1, lt->is_adjusted_to_utc);
    hs_thrift_write_field_struct_begin(w, 2);                       /* TimeUnit union */
    hs_thrift_write_field_struct_begin(w, (int16_t)(lt->unit + 1)); /* empty member */
    hs_thrift_write_struct_end(w);
    hs_thrift_write_struct_end(w);
    break;
  case HS_PQ_LT_INTEGER:
    hs_thrift_write_field_i8(w, 1, lt->int_bit_width);
    hs_thrift_write_field_bool(w, 2, lt->int_is_signed);
    break;
  default: break; /* members without parameters are empty structs */
  }
  hs_thrift_write_struct_end(w);
  hs_thrift_write_struct_end(w);
}

static bool mw_logical_writable(const hs_pq_logical *lt) {
  return lt->kind != HS_PQ_LT_NONE && lt->kind != HS_PQ_LT_OTHER && lt->kind != 9 &&
         lt->kind <= HS_PQ_LT_GEOGRAPHY && (lt->kind != HS_PQ_LT_TIME || lt->unit <= HS_PQ_NANOS) &&
         (lt->kind != HS_PQ_LT_TIMESTAMP || lt->unit <= HS_PQ_NANOS);
}

static void mw_schema_element(hs_thrift_writer *w, const hs_pq_schema_element *se) {
  hs_thrift_write_struct_begin(w);
  if (se->has_type) {
    hs_thrift_write_field_i32(w, 1, (int32_t)se->type);
    if (se->type == HS_PQ_FIXED_LEN_BYTE_ARRAY || se->type_length != 0)
      hs_thrift_write_field_i32(w, 2, se->type_length);
  }
  if (se->has_repetition) hs_thrift_write_field_i32(w, 3, (int32_t)se->repetition);
  hs_thrift_write_field_string(w, 4, se->name ? se->name : "");
  if (!se->has_type) hs_thrift_write_field_i32(w, 5, se->num_children);
  bool decimal = se->has_converted && se->converted == HS_PQ_CT_DECIMAL;
  if (se->has_converted) hs_thrift_write_field_i32(w, 6, (int32_t)se->converted);
  if (decimal || se->scale != 0) hs_thrift_write_field_i32(w, 7, se->scale);
  if (decimal || se->precision != 0) hs_thrift_write_field_i32(w, 8, se->precision);
  if (se->has_field_id) hs_thrift_write_field_i32(w, 9, se->field_id);
  if (mw_logical_writable(&se->logical)) mw_logical(w, 10, &se->logical);
  hs_thrift_write_struct_end(w);
}

static void mw_column_meta(hs_thrift_writer *w, int16_t id, const hs_pq_column_meta *cm) {
  hs_thrift_write_field_struct_begin(w, id);
  hs_thrift_write_field_i32(w, 1, (int32_t)cm->type);
  hs_thrift_write_field_list_begin(w, 2, HS_THRIFT_I32, cm->n_encodings);
  for (uint32_t i = 0; i < cm->n_encodings; i++) hs_thrift_write_i32(w, cm->encodings[i]);
  hs_thrift_write_field_list_begin(w, 3, HS_THRIFT_BINARY, cm->n_path);
  for (uint32_t i = 0; i < cm->n_path; i++) {
    const char *p = cm->path_in_schema[i] ? cm->path_in_schema[i] : "";
    hs_thrift_write_binary(w, p, strlen(p));
  }
  hs_thrift_write_field_i32(w, 4, cm->codec);
  hs_thrift_write_field_i64(w, 5, cm->num_values);
  hs_thrift_write_field_i64(w, 6, cm->total_uncompressed_size);
  hs_thrift_write_field_i64(w, 7, cm->total_compressed_size);
  if (cm->n_key_value_metadata > 0)
    mw_key_values(w, 8, cm->key_value_metadata, cm->n_key_value_metadata);
  hs_thrift_write_field_i64(w, 9, cm->data_page_offset);
  if (cm->has_index_page_offset) hs_thrift_write_field_i64(w, 10, cm->index_page_offset);
  if (cm->has_dictionary_page_offset) hs_thrift_write_field_i64(w, 11, cm->dictionary_page_offset);
  if (cm->has_statistics) mw_statistics(w, 12, &cm->statistics);
  if (cm->has_bloom_filter_offset) hs_thrift_write_field_i64(w, 14, cm->bloom_filter_offset);
  if (cm->has_bloom_filter_length) hs_thrift_write_field_i32(w, 15, cm->bloom_filter_length);
  hs_thrift_write_struct_end(w);
}

static void mw_column_chunk(hs_thrift_writer *w, const hs_pq_column_chunk *cc) {
  hs_thrift_write_struct_begin(w);
  if (cc->file_path) hs_thrift_write_field_string(w, 1, cc->file_path);
  hs_thrift_write_field_i64(w, 2, cc->file_offset);
  if (cc->has_meta_data) mw_column_meta(w, 3, &cc->meta_data);
  if (cc->has_offset_index) {
    hs_thrift_write_field_i64(w, 4, cc->offset_index_offset);
    hs_thrift_write_field_i32(w, 5, cc->offset_index_length);
  }
  if (cc->has_column_index) {
    hs_thrift_write_field_i64(w, 6, cc->column_index_offset);
    hs_thrift_write_field_i32(w, 7, cc->column_index_length);
  }
  hs_thrift_write_struct_end(w);
}

static void mw_row_group(hs_thrift_writer *w, const hs_pq_row_group *rg) {
  hs_thrift_write_struct_begin(w);
  hs_thrift_write_field_list_begin(w, 1, HS_THRIFT_STRUCT, rg->n_columns);
  for (uint32_t i = 0; i < rg->n_columns; i++) mw_column_chunk(w, &rg->columns[i]);
  hs_thrift_write_field_i64(w, 2, rg->total_byte_size);
  hs_thrift_write_field_i64(w, 3, rg->num_rows);
  if (rg->n_sorting_columns > 0) {
    hs_thrift_write_field_list_begin(w, 4, HS_THRIFT_STRUCT, rg->n_sorting_columns);
    for (uint32_t i = 0; i < rg->n_sorting_columns; i++) {
      const hs_pq_sorting_column *sc = &rg->sorting_columns[i];
      hs_thrift_write_struct_begin(w);
      hs_thrift_write_field_i32(w, 1, sc->column_idx);
      hs_thrift_write_field_bool(w, 2, sc->descending);
      hs_thrift_write_field_bool(w, 3, sc->nulls_first);
      hs_thrift_write_struct_end(w);
    }
  }
  if (rg->has_file_offset) hs_thrift_write_field_i64(w, 5, rg->file_offset);
  if (rg->has_total_compressed_size) hs_thrift_write_field_i64(w, 6, rg->total_compressed_size);
  if (rg->has_ordinal) hs_thrift_write_field_i16(w, 7, rg->ordinal);
  hs_thrift_write_struct_end(w);
}

hs_status hs_pq_file_metadata_write(const hs_pq_file_metadata *md, hs_buf *out, hs_error *err) {
  hs_thrift_writer w;
  hs_thrift_writer_init(&w, out);
  hs_thrift_write_struct_begin(&w);
  hs_thrift_write_field_i32(&w, 1, md->version);
  hs_thrift_write_field_list_begin(&w, 2, HS_THRIFT_STRUCT, md->n_schema);
  for (uint32_t i = 0; i < md->n_schema; i++) mw_schema_element(&w, &md->schema[i]);
  hs_thrift_write_field_i64(&w, 3, md->num_rows);
  hs_thrift_write_field_list_begin(&w, 4, HS_THRIFT_STRUCT, md->n_row_groups);
  for (uint32_t i = 0; i < md->n_row_groups; i++) mw_row_group(&w, &md->row_groups[i]);
  if (md->n_key_value_metadata > 0)
    mw_key_values(&w, 5, md->key_value_metadata, md->n_key_value_metadata);
  if (md->created_by) hs_thrift_write_field_string(&w, 6, md->created_by);
  if (md->n_column_orders > 0) {
    /* ColumnOrder union, member 1: TYPE_ORDER (an empty TypeDefinedOrder). */
    hs_thrift_write_field_list_begin(&w, 7, HS_THRIFT_STRUCT, md->n_column_orders);
    for (uint32_t i = 0; i < md->n_column_orders; i++) {
      hs_thrift_write_struct_begin(&w);
      hs_thrift_write_field_struct_begin(&w, 1);
      hs_thrift_write_struct_end(&w);
      hs_thrift_write_struct_end(&w);
    }
  }
  hs_thrift_write_struct_end(&w);
  return hs_thrift_writer_finish(&w, "FileMetaData", err);
}

hs_status hs_pq_page_header_write(const hs_pq_page_header *ph, hs_buf *out, hs_error *err) {
  hs_thrift_writer w;
  hs_thrift_writer_init(&w, out);
  hs_thrift_write_struct_begin(&w);
  hs_thrift_write_field_i32(&w, 1, (int32_t)ph->type);
  hs_thrift_write_field_i32(&w, 2, ph->uncompressed_page_size);
  hs_thrift_write_field_i32(&w, 3, ph->compressed_page_size);
  if (ph->has_crc) hs_thrift_write_field_i32(&w, 4, ph->crc);
  if (ph->has_data_page) {
    hs_thrift_write_field_struct_begin(&w, 5);
    hs_thrift_write_field_i32(&w, 1, ph->data_page.num_values);
    hs_thrift_write_field_i32(&w, 2, ph->data_page.encoding);
    hs_thrift_write_field_i32(&w, 3, ph->data_page.definition_level_encoding);
    hs_thrift_write_field_i32(&w, 4, ph->data_page.repetition_level_encoding);
    if (ph->data_page.has_statistics) mw_statistics(&w, 5, &ph->data_page.statistics);
    hs_thrift_write_struct_end(&w);
  }
  if (ph->has_dictionary_page) {
    hs_thrift_write_field_struct_begin(&w, 7);
    hs_thrift_write_field_i32(&w, 1, ph->dictionary_page.num_values);
    hs_thrift_write_field_i32(&w, 2, ph->dictionary_page.encoding);
    if (ph->dictionary_page.is_sorted) hs_thrift_write_field_bool(&w, 3, true);
    hs_thrift_write_struct_end(&w);
  }
  if (ph->has_data_page_v2) {
    hs_thrift_write_field_struct_begin(&w, 8);
    hs_thrift_write_field_i32(&w, 1, ph->data_page_v2.num_values);
    hs_thrift_write_field_i32(&w, 2, ph->data_page_v2.num_nulls);
    hs_thrift_write_field_i32(&w, 3, ph->data_page_v2.num_rows);
    hs_thrift_write_field_i32(&w, 4, ph->data_page_v2.encoding);
    hs_thrift_write_field_i32(&w, 5, ph->data_page_v2.definition_levels_byte_length);
    hs_thrift_write_field_i32(&w, 6, ph->data_page_v2.repetition_levels_byte_length);
    hs_thrift_write_field_bool(&w, 7, ph->data_page_v2.is_compressed);
    if (ph->data_page_v2.has_statistics) mw_statistics(&w, 8, &ph->data_page_v2.statistics);
    hs_thrift_write_struct_end(&w);
  }
  hs_thrift_write_struct_end(&w);
  return hs_thrift_writer_finish(&w, "PageHeader", err);
}

hs_status hs_pq_column_index_write(const hs_pq_column_index *ci, hs_buf *out, hs_error *err) {
  hs_thrift_writer w;
  hs_thrift_writer_init(&w, out);
  hs_thrift_write_struct_begin(&w);
  hs_thrift_write_field_list_begin(&w, 1, HS_THRIFT_TRUE, ci->n_pages);
  for (uint32_t i = 0; i < ci->n_pages; i++) hs_thrift_write_bool_elem(&w, ci->null_pages[i]);
  hs_thrift_write_field_list_begin(&w, 2, HS_THRIFT_BINARY, ci->n_pages);
  for (uint32_t i = 0; i < ci->n_pages; i++)
    hs_thrift_write_binary(&w, ci->min_values[i].data, ci->min_values[i].len);
  hs_thrift_write_field_list_begin(&w, 3, HS_THRIFT_BINARY, ci->n_pages);
  for (uint32_t i = 0; i < ci->n_pages; i++)
    hs_thrift_write_binary(&w, ci->max_values[i].data, ci->max_values[i].len);
  hs_thrift_write_field_i32(&w, 4, ci->boundary_order);
  if (ci->has_null_counts) {
    hs_thrift_write_field_list_begin(&w, 5, HS_THRIFT_I64, ci->n_pages);
    for (uint32_t i = 0; i < ci->n_pages; i++) hs_thrift_write_i64(&w, ci->null_counts[i]);
  }
  hs_thrift_write_struct_end(&w);
  return hs_thrift_writer_finish(&w, "ColumnIndex", err);
}

hs_status hs_pq_offset_index_write(const hs_pq_offset_index *oi, hs_buf *out, hs_error *err) {
  hs_thrift_writer w;
  hs_thrift_writer_init(&w, out);
  hs_thrift_write_struct_begin(&w);
  hs_thrift_write_field_list_begin(&w, 1, HS_THRIFT_STRUCT, oi->n_pages);
  for (uint32_t i = 0; i < oi->n_pages; i++) {
    const hs_pq_page_location *pl = &oi->page_locations[i];
    hs_thrift_write_struct_begin(&w);
    hs_thrift_write_field_i64(&w, 1, pl->offset);
    hs_thrift_write_field_i32(&w, 2, pl->compressed_page_size);
    hs_thrift_write_field_i64(&w, 3, pl->first_row_index);
    hs_thrift_write_struct_end(&w);
  }
  hs_thrift_write_struct_end(&w);
  return hs_thrift_writer_finish(&w, "OffsetIndex", err);
}
