/*
 * test_metadata.c — the Thrift compact codec and Parquet metadata:
 * hand-built wire bytes (long-form ids, big lists, maps, unknown fields of
 * every type), randomized write→parse round trips of every struct, every
 * footer, page header and page index of the conformance corpus, truncated
 * and bit-flipped inputs (errors, never crashes), replay of fuzz
 * regressions, and hs_parquet_inspect output (JSON checked by python).
 */
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hs_test.h"
#include "io/io.h"
#include "parquet/metadata.h"
#include "parquet/thrift.h"

static uint64_t rng = 0x5eed;

static uint32_t rnd(uint32_t n) {
  return n ? (uint32_t)(hs_test_rand(&rng) % n) : 0;
}
static bool coin(void) {
  return rnd(2) == 1;
}
static int64_t rnd_i64(void) {
  switch (rnd(4)) {
  case 0: return (int64_t)rnd(100);
  case 1: return -(int64_t)rnd(100000);
  case 2: return coin() ? INT64_MAX : INT64_MIN;
  default: return (int64_t)hs_test_rand(&rng);
  }
}
static int32_t rnd_i32(void) {
  return (int32_t)rnd_i64();
}

static hs_pq_bytes rnd_bytes(hs_arena *a) {
  uint32_t n = rnd(4) == 0 ? rnd(300) : rnd(12);
  uint8_t *p = hs_arena_alloc(a, n + 1);
  for (uint32_t i = 0; i < n; i++) p[i] = (uint8_t)rnd(256);
  return (hs_pq_bytes){p, n};
}

static const char *rnd_str(hs_arena *a) {
  uint32_t n = rnd(20);
  char *p = hs_arena_alloc(a, n + 1);
  for (uint32_t i = 0; i < n; i++) p[i] = (char)('a' + rnd(26));
  return p;
}

static bool bytes_eq(hs_pq_bytes x, hs_pq_bytes y) {
  return x.len == y.len && (x.len == 0 || memcmp(x.data, y.data, x.len) == 0);
}

static void rnd_stats(hs_arena *a, hs_pq_statistics *s) {
  memset(s, 0, sizeof *s);
  if ((s->has_max = coin())) s->max = rnd_bytes(a);
  if ((s->has_min = coin())) s->min = rnd_bytes(a);
  if ((s->has_null_count = coin())) s->null_count = rnd_i64();
  if ((s->has_distinct_count = coin())) s->distinct_count = rnd_i64();
  if ((s->has_max_value = coin())) s->max_value = rnd_bytes(a);
  if ((s->has_min_value = coin())) s->min_value = rnd_bytes(a);
  if ((s->has_is_max_value_exact = coin())) s->is_max_value_exact = coin();
  if ((s->has_is_min_value_exact = coin())) s->is_min_value_exact = coin();
}

static bool stats_eq(const hs_pq_statistics *x, const hs_pq_statistics *y) {
  return x->has_max == y->has_max && (!x->has_max || bytes_eq(x->max, y->max)) &&
         x->has_min == y->has_min && (!x->has_min || bytes_eq(x->min, y->min)) &&
         x->has_null_count == y->has_null_count && x->null_count == y->null_count &&
         x->has_distinct_count == y->has_distinct_count && x->distinct_count == y->distinct_count &&
         x->has_max_value == y->has_max_value &&
         (!x->has_max_value || bytes_eq(x->max_value, y->max_value)) &&
         x->has_min_value == y->has_min_value &&
         (!x->has_min_value || bytes_eq(x->min_value, y->min_value)) &&
         x->has_is_max_value_exact == y->has_is_max_value_exact &&
         x->is_max_value_exact == y->is_max_value_exact &&
         x->has_is_min_value_exact == y->has_is_min_value_exact &&
         x->is_min_value_exact == y->is_min_value_exact;
}

static hs_pq_key_value *rnd_kvs(hs_arena *a, uint32_t *n) {
  *n = rnd(4) == 0 ? rnd(20) : rnd(3);
  hs_pq_key_value *kv = hs_arena_alloc(a, sizeof *kv * (*n + 1));
  for (uint32_t i = 0; i < *n; i++) {
    kv[i].key = rnd_str(a);
    if ((kv[i].has_value = coin())) kv[i].value = rnd_bytes(a);
  }
  return kv;
}

static void rnd_logical(hs_pq_logical *lt) {
  memset(lt, 0, sizeof *lt);
  static const int kinds[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18};
  lt->kind = (hs_pq_logical_kind)kinds[rnd(sizeof kinds / sizeof kinds[0])];
  switch (lt->kind) {
  case HS_PQ_LT_DECIMAL:
    lt->decimal_scale = rnd_i32();
    lt->decimal_precision = rnd_i32();
    break;
  case HS_PQ_LT_TIME:
  case HS_PQ_LT_TIMESTAMP:
    lt->is_adjusted_to_utc = coin();
    lt->unit = (hs_pq_time_unit)rnd(3);
    break;
  case HS_PQ_LT_INTEGER:
    lt->int_bit_width = (int8_t)(8 << rnd(4));
    lt->int_is_signed = coin();
    break;
  default: break;
  }
}

static void rnd_schema_element(hs_arena *a, hs_pq_schema_element *se, bool leaf) {
  memset(se, 0, sizeof *se);
  se->name = rnd_str(a);
  if (leaf) {
    se->has_type = true;
    se->type = (hs_pq_type)rnd(8);
    if (se->type == HS_PQ_FIXED_LEN_BYTE_ARRAY) se->type_length = (int32_t)rnd(40);
  } else {
    se->num_children = (int32_t)rnd(5);
  }
  if ((se->has_repetition = coin())) se->repetition = (hs_pq_repetition)rnd(3);
  if ((se->has_converted = coin())) se->converted = (hs_pq_converted)rnd(22);
  if (coin()) {
    se->scale = rnd_i32();
    se->precision = rnd_i32();
  }
  if ((se->has_field_id = coin())) se->field_id = rnd_i32();
  rnd_logical(&se->logical);
}

static void rnd_column_chunk(hs_arena *a, hs_pq_column_chunk *cc) {
  memset(cc, 0, sizeof *cc);
  if (coin()) cc->file_path = rnd_str(a);
  cc->file_offset = rnd_i64();
  if ((cc->has_meta_data = rnd(8) != 0)) {
    hs_pq_column_meta *cm = &cc->meta_data;
    cm->type = (hs_pq_type)rnd(8);
    cm->n_encodings = rnd(20);
    cm->encodings = hs_arena_alloc(a, sizeof(int32_t) * (cm->n_encodings + 1));
    for (uint32_t i = 0; i < cm->n_encodings; i++) cm->encodings[i] = (int32_t)rnd(10);
    cm->n_path = 1 + rnd(4);
    cm->path_in_schema = hs_arena_alloc(a, sizeof(char *) * cm->n_path);
    for (uint32_t i = 0; i < cm->n_path; i++) cm->path_in_schema[i] = rnd_str(a);
    cm->codec = (int32_t)rnd(8);
    cm->num_values = rnd_i64();
    cm->total_uncompressed_size = rnd_i64();
    cm->total_compressed_size = rnd_i64();
    if (coin()) cm->key_value_metadata = rnd_kvs(a, &cm->n_key_value_metadata);
    cm->data_page_offset = rnd_i64();
    if ((cm->has_index_page_offset = coin())) cm->index_page_offset = rnd_i64();
    if ((cm->has_dictionary_page_offset = coin())) cm->dictionary_page_offset = rnd_i64();
    if ((cm->has_statistics = coin())) rnd_stats(a, &cm->statistics);
    if ((cm->has_bloom_filter_offset = coin())) cm->bloom_filter_offset = rnd_i64();
    if ((cm->has_bloom_filter_length = coin())) cm->bloom_filter_length = rnd_i32();
  }
  if ((cc->has_offset_index = coin())) {
    cc->offset_index_offset = rnd_i64();
    cc->offset_index_length = rnd_i32();
  }
  if ((cc->has_column_index = coin())) {
    cc->column_index_offset = rnd_i64();
    cc->column_index_length = rnd_i32();
  }
}

static void rnd_file_metadata(hs_arena *a, hs_pq_file_metadata *md) {
  memset(md, 0, sizeof *md);
  md->version = (int32_t)rnd(3);
  md->n_schema = 1 + rnd(30);
  md->schema = hs_arena_alloc(a, sizeof *md->schema * md->n_schema);
  for (uint32_t i = 0; i < md->n_schema; i++)
    rnd_schema_element(a, &md->schema[i], i > 0 && coin());
  md->num_rows = rnd_i64();
  md->n_row_groups = rnd(5);
  md->row_groups = hs_arena_alloc(a, sizeof *md->row_groups * (md->n_row_groups + 1));
  for (uint32_t g = 0; g < md->n_row_groups; g++) {
    hs_pq_row_group *rg = &md->row_groups[g];
    rg->n_columns = rnd(20);
    rg->columns = hs_arena_alloc(a, sizeof *rg->columns * (rg->n_columns + 1));
    for (uint32_t i = 0; i < rg->n_columns; i++) rnd_column_chunk(a, &rg->columns[i]);
    rg->total_byte_size = rnd_i64();
    rg->num_rows = rnd_i64();
    rg->n_sorting_columns = coin() ? rnd(4) : 0;
    rg->sorting_columns = hs_arena_alloc(a, sizeof *rg->sorting_columns * 5);
    for (uint32_t i = 0; i < rg->n_sorting_columns; i++)
      rg->sorting_columns[i] = (hs_pq_sorting_column){rnd_i32(), coin(), coin()};
    if ((rg->has_file_offset = coin())) rg->file_offset = rnd_i64();
    if ((rg->has_total_compressed_size = coin())) rg->total_compressed_size = rnd_i64();
    if ((rg->has_ordinal = coin())) rg->ordinal = (int16_t)rnd_i32();
  }
  if (coin()) md->key_value_metadata = rnd_kvs(a, &md->n_key_value_metadata);
  if (coin()) md->created_by = rnd_str(a);
  if (coin()) md->n_column_orders = rnd(20);
}

/* write(parse(write(x))) == write(x) proves parse keeps every written
 * field; explicit comparisons below check that values are the right ones. */
static void test_file_metadata_roundtrip(void) {
  for (int iter = 0; iter < 300; iter++) {
    hs_arena a, b;
    hs_arena_init(&a);
    hs_arena_init(&b);
    hs_pq_file_metadata md, back;
    rnd_file_metadata(&a, &md);
    hs_buf w1, w2;
    hs_buf_init(&w1);
    hs_buf_init(&w2);
    hs_error err = {0};
    CHECK_OK(hs_pq_file_metadata_write(&md, &w1, &err), &err);
    CHECK_OK(hs_pq_file_metadata_parse(w1.data, w1.len, &b, &back, &err), &err);
    CHECK_OK(hs_pq_file_metadata_write(&back, &w2, &err), &err);
    CHECK(w1.len == w2.len && memcmp(w1.data, w2.data, w1.len) == 0);
    CHECK_EQ_INT(back.n_schema, md.n_schema);
    CHECK_EQ_INT(back.num_rows, md.num_rows);
    CHECK_EQ_INT(back.n_row_groups, md.n_row_groups);
    CHECK_EQ_INT(back.n_column_orders, md.n_column_orders);
    CHECK((back.created_by == NULL) == (md.created_by == NULL));
    for (uint32_t i = 0; i < md.n_schema && i < back.n_schema; i++) {
      const hs_pq_schema_element *x = &md.schema[i], *y = &back.schema[i];
      CHECK(strcmp(x->name, y->name) == 0);
      CHECK(x->has_type == y->has_type && x->type == y->type);
      CHECK(x->type_length == y->type_length && x->num_children == y->num_children);
      CHECK(x->has_field_id == y->has_field_id && x->field_id == y->field_id);
      CHECK(memcmp(&x->logical, &y->logical, sizeof x->logical) == 0);
      CHECK(x->scale == y->scale && x->precision == y->precision);
    }
    for (uint32_t g = 0; g < md.n_row_groups && g < back.n_row_groups; g++) {
      const hs_pq_row_group *x = &md.row_groups[g], *y = &back.row_groups[g];
      CHECK_EQ_INT(x->n_columns, y->n_columns);
      CHECK(x->has_ordinal == y->has_ordinal && x->ordinal == y->ordinal);
      for (uint32_t c = 0; c < x->n_columns && c < y->n_columns; c++) {
        const hs_pq_column_chunk *p = &x->columns[c], *q = &y->columns[c];
        CHECK(p->has_meta_data == q->has_meta_data);
        CHECK(p->has_column_index == q->has_column_index &&
              p->column_index_offset == q->column_index_offset);
        if (p->has_meta_data && q->has_meta_data) {
          CHECK(p->meta_data.has_statistics == q->meta_data.has_statistics);
          if (p->meta_data.has_statistics)
            CHECK(stats_eq(&p->meta_data.statistics, &q->meta_data.statistics));
          CHECK(p->meta_data.num_values == q->meta_data.num_values);
          CHECK(p->meta_data.n_path == q->meta_data.n_path);
        }
      }
    }
    hs_buf_free(&w1);
    hs_buf_free(&w2);
    hs_arena_reset(&a);
    hs_arena_reset(&b);
  }
}

static void test_page_header_roundtrip(void) {
  for (int iter = 0; iter < 500; iter++) {
    hs_arena a, b;
    hs_arena_init(&a);
    hs_arena_init(&b);
    hs_pq_page_header ph, back;
    memset(&ph, 0, sizeof ph);
    ph.type = (hs_pq_page_type)rnd(4);
    ph.uncompressed_page_size = rnd_i32();
    ph.compressed_page_size = rnd_i32();
    if ((ph.has_crc = coin())) ph.crc = rnd_i32();
    if ((ph.has_data_page = coin())) {
      ph.data_page.num_values = rnd_i32();
      ph.data_page.encoding = rnd_i32();
      ph.data_page.definition_level_encoding = rnd_i32();
      ph.data_page.repetition_level_encoding = rnd_i32();
      if ((ph.data_page.has_statistics = coin())) rnd_stats(&a, &ph.data_page.statistics);
    }
    if ((ph.has_dictionary_page = coin())) {
      ph.dictionary_page.num_values = rnd_i32();
      ph.dictionary_page.encoding = rnd_i32();
      ph.dictionary_page.is_sorted = coin();
    }
    if ((ph.has_data_page_v2 = coin())) {
      ph.data_page_v2.num_values = rnd_i32();
      ph.data_page_v2.num_nulls = rnd_i32();
      ph.data_page_v2.num_rows = rnd_i32();
      ph.data_page_v2.encoding = rnd_i32();
      ph.data_page_v2.definition_levels_byte_length = rnd_i32();
      ph.data_page_v2.repetition_levels_byte_length = rnd_i32();
      ph.data_page_v2.is_compressed = coin();
      if ((ph.data_page_v2.has_statistics = coin())) rnd_stats(&a, &ph.data_page_v2.statistics);
    }
    hs_buf w;
    hs_buf_init(&w);
    hs_error err = {0};
    CHECK_OK(hs_pq_page_header_write(&ph, &w, &err), &err);
    /* Trailing page bytes after the header must not be consumed. */
    hs_buf_append(&w, "PAGEDATA", 8);
    size_t used = 0;
    CHECK_OK(hs_pq_page_header_parse(w.data, w.len, &b, &back, &used, &err), &err);
    CHECK_EQ_INT(used, w.len - 8);
    CHECK(back.type == ph.type && back.uncompressed_page_size == ph.uncompressed_page_size &&
          back.compressed_page_size == ph.compressed_page_size);
    CHECK(back.has_crc == ph.has_crc && back.crc == ph.crc);
    CHECK(back.has_data_page == ph.has_data_page);
    CHECK(back.data_page.num_values == ph.data_page.num_values &&
          back.data_page.encoding == ph.data_page.encoding &&
          back.data_page.definition_level_encoding == ph.data_page.definition_level_encoding &&
          back.data_page.repetition_level_encoding == ph.data_page.repetition_level_encoding);
    CHECK(back.data_page.has_statistics == ph.data_page.has_statistics);
    if (ph.data_page.has_statistics)
      CHECK(stats_eq(&back.data_page.statistics, &ph.data_page.statistics));
    CHECK(back.has_dictionary_page == ph.has_dictionary_page);
    CHECK(memcmp(&back.dictionary_page, &ph.dictionary_page, sizeof ph.dictionary_page) == 0);
    CHECK(back.has_data_page_v2 == ph.has_data_page_v2);
    if (ph.has_data_page_v2) {
      CHECK(back.data_page_v2.num_values == ph.data_page_v2.num_values &&
            back.data_page_v2.num_nulls == ph.data_page_v2.num_nulls &&
            back.data_page_v2.num_rows == ph.data_page_v2.num_rows &&
            back.data_page_v2.encoding == ph.data_page_v2.encoding &&
            back.data_page_v2.definition_levels_byte_length ==
                ph.data_page_v2.definition_levels_byte_length &&
            back.data_page_v2.repetition_levels_byte_length ==
                ph.data_page_v2.repetition_levels_byte_length &&
            back.data_page_v2.is_compressed == ph.data_page_v2.is_compressed);
      CHECK(back.data_page_v2.has_statistics == ph.data_page_v2.has_statistics);
      if (ph.data_page_v2.has_statistics)
        CHECK(stats_eq(&back.data_page_v2.statistics, &ph.data_page_v2.statistics));
    }
    hs_buf_free(&w);
    hs_arena_reset(&a);
    hs_arena_reset(&b);
  }
}

static void test_page_index_roundtrip(void) {
  for (int iter = 0; iter < 300; iter++) {
    hs_arena a, b;
    hs_arena_init(&a);
    hs_arena_init(&b);
    uint32_t n = rnd(4) == 0 ? rnd(200) : rnd(16);
    hs_pq_column_index ci = {0}, ci2;
    ci.n_pages = n;
    ci.null_pages = hs_arena_alloc(&a, n + 1);
    ci.min_values = hs_arena_alloc(&a, sizeof(hs_pq_bytes) * (n + 1));
    ci.max_values = hs_arena_alloc(&a, sizeof(hs_pq_bytes) * (n + 1));
    ci.null_counts = hs_arena_alloc(&a, sizeof(int64_t) * (n + 1));
    ci.has_null_counts = coin();
    ci.boundary_order = (int32_t)rnd(3);
    for (uint32_t i = 0; i < n; i++) {
      ci.null_pages[i] = coin();
      ci.min_values[i] = rnd_bytes(&a);
      ci.max_values[i] = rnd_bytes(&a);
      ci.null_counts[i] = rnd_i64();
    }
    hs_pq_offset_index oi = {0}, oi2;
    oi.n_pages = n;
    oi.page_locations = hs_arena_alloc(&a, sizeof(hs_pq_page_location) * (n + 1));
    for (uint32_t i = 0; i < n; i++)
      oi.page_locations[i] = (hs_pq_page_location){rnd_i64(), rnd_i32(), rnd_i64()};
    hs_buf w1, w2;
    hs_buf_init(&w1);
    hs_buf_init(&w2);
    hs_error err = {0};
    CHECK_OK(hs_pq_column_index_write(&ci, &w1, &err), &err);
    CHECK_OK(hs_pq_column_index_parse(w1.data, w1.len, &b, &ci2, &err), &err);
    CHECK_EQ_INT(ci2.n_pages, n);
    CHECK(ci2.boundary_order == ci.boundary_order && ci2.has_null_counts == ci.has_null_counts);
    for (uint32_t i = 0; i < n && ci2.n_pages == n; i++) {
      CHECK(ci2.null_pages[i] == ci.null_pages[i]);
      CHECK(bytes_eq(ci2.min_values[i], ci.min_values[i]));
      CHECK(bytes_eq(ci2.max_values[i], ci.max_values[i]));
      if (ci.has_null_counts) CHECK(ci2.null_counts[i] == ci.null_counts[i]);
    }
    CHECK_OK(hs_pq_offset_index_write(&oi, &w2, &err), &err);
    CHECK_OK(hs_pq_offset_index_parse(w2.data, w2.len, &b, &oi2, &err), &err);
    CHECK_EQ_INT(oi2.n_pages, n);
    for (uint32_t i = 0; i < n && oi2.n_pages == n; i++)
      CHECK(memcmp(&oi2.page_locations[i], &oi.page_locations[i], sizeof(hs_pq_page_location)) ==
            0);
    hs_buf_free(&w1);
    hs_buf_free(&w2);
    hs_arena_reset(&a);
    hs_arena_reset(&b);
  }
}

/* Hand-built bytes: a Statistics struct whose known fields are interleaved
 * with unknown fields of every wire type (long-form ids, a map, nested
 * lists, a double), which must be skipped. */
static void test_thrift_skip_unknown(void) {
  hs_buf b;
  hs_buf_init(&b);
  hs_thrift_writer w;
  hs_thrift_writer_init(&w, &b);
  hs_thrift_write_struct_begin(&w);
  hs_thrift_write_field_i64(&w, 3, -42);                         /* null_count */
  hs_thrift_write_field_bool(&w, 100, true);                     /* unknown bool, long-form id */
  hs_thrift_write_field_i8(&w, 101, -1);                         /* unknown i8 */
  hs_thrift_write_field_i16(&w, 102, -300);                      /* unknown i16 */
  hs_thrift_write_field_binary(&w, 103, "xyz", 3);               /* unknown binary */
  hs_thrift_write_field_list_begin(&w, 104, HS_THRIFT_TRUE, 20); /* bool list, long size */
  for (int i = 0; i < 20; i++) hs_thrift_write_bool_elem(&w, i & 1);
  hs_thrift_write_field_struct_begin(&w, 105); /* nested unknown struct */
  hs_thrift_write_field_list_begin(&w, 1, HS_THRIFT_STRUCT, 2);
  hs_thrift_write_struct_begin(&w);
  hs_thrift_write_field_i32(&w, 7, 7);
  hs_thrift_write_struct_end(&w);
  hs_thrift_write_struct_begin(&w);
  hs_thrift_write_struct_end(&w);
  hs_thrift_write_struct_end(&w);
  hs_thrift_write_struct_end(&w); /* closes the Statistics too: re-open below */
  /* Undo the last STOP to continue the Statistics struct by hand. */
  b.len--;
  w.depth = 1;
  /* Unknown double (type 7) and map (type 11) with long-form ids 106, 107. */
  const uint8_t dbl[] = {0x07, 0xd4, 0x01, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
  hs_buf_append(&b, dbl, sizeof dbl);
  const uint8_t map[] = {0x0b, 0xd6, 0x01, 0x02, 0x85, 0x01, 'a', 0x02, 0x01, 'b', 0x04};
  hs_buf_append(&b, map, sizeof map);
  /* An empty map (size 0, no type byte), id 108; then a set of i64, id 109. */
  const uint8_t map0[] = {0x0b, 0xd8, 0x01, 0x00, 0x0a, 0xda, 0x01, 0x26, 0x02, 0x04};
  hs_buf_append(&b, map0, sizeof map0);
  w.last_id[0] = 109;
  hs_thrift_write_field_i64(&w, 110, 9); /* unknown after unknowns */
  /* distinct_count (4) after higher ids: long form with a smaller id. */
  hs_thrift_write_field_i64(&w, 4, 1234567890123LL);
  hs_thrift_write_field_binary(&w, 6, "mn", 2); /* min_value */
  hs_thrift_write_struct_end(&w);
  hs_error err = {0};
  CHECK_OK(hs_thrift_writer_finish(&w, "test", &err), &err);

  /* Wrap as a DataPageHeader's statistics inside a PageHeader. */
  hs_buf ph;
  hs_buf_init(&ph);
  hs_thrift_writer_init(&w, &ph);
  hs_thrift_write_struct_begin(&w);
  hs_thrift_write_field_i32(&w, 1, 0);
  hs_thrift_write_field_i32(&w, 2, 10);
  hs_thrift_write_field_i32(&w, 3, 10);
  hs_thrift_write_field_struct_begin(&w, 5);
  hs_thrift_write_field_i32(&w, 1, 1);
  hs_thrift_write_field_i32(&w, 2, 0);
  hs_thrift_write_field_i32(&w, 3, 3);
  hs_thrift_write_field_i32(&w, 4, 3);
  /* field 5 (statistics) header, then the hand-built struct body. */
  hs_buf_append_byte(&ph, 0x1c);
  hs_buf_append(&ph, b.data, b.len);
  hs_buf_append_byte(&ph, 0); /* end DataPageHeader */
  hs_buf_append_byte(&ph, 0); /* end PageHeader */
  hs_arena a;
  hs_arena_init(&a);
  hs_pq_page_header out;
  size_t used = 0;
  CHECK_OK(hs_pq_page_header_parse(ph.data, ph.len, &a, &out, &used, &err), &err);
  CHECK_EQ_INT(used, ph.len);
  CHECK(out.has_data_page && out.data_page.has_statistics);
  const hs_pq_statistics *s = &out.data_page.statistics;
  CHECK(s->has_null_count && s->null_count == -42);
  CHECK(s->has_distinct_count && s->distinct_count == 1234567890123LL);
  CHECK(s->has_min_value && s->min_value.len == 2 && memcmp(s->min_value.data, "mn", 2) == 0);
  CHECK(!s->has_max && !s->has_min && !s->has_max_value);

  /* Every proper prefix is an error, never a crash or over-read. */
  for (size_t n = 0; n < ph.len; n++) {
    uint8_t *copy = hs_malloc(n ? n : 1);
    memcpy(copy, ph.data, n);
    hs_error e2 = {0};
    CHECK(hs_pq_page_header_parse(copy, n, &a, &out, &used, &e2) == HS_ERR_CORRUPT);
    CHECK(e2.message[0] != '\0');
    hs_free(copy);
  }
  hs_arena_reset(&a);
  hs_buf_free(&b);
  hs_buf_free(&ph);
}

static void test_thrift_limits(void) {
  hs_arena a;
  hs_arena_init(&a);
  hs_pq_offset_index oi;
  hs_error err = {0};
  /* A list claiming 2^31 elements in 10 bytes must fail before allocating. */
  const uint8_t big[] = {0x19, 0xfc, 0x80, 0x80, 0x80, 0x80, 0x08, 0, 0, 0};
  CHECK(hs_pq_offset_index_parse(big, sizeof big, &a, &oi, &err) == HS_ERR_CORRUPT);
  CHECK(strstr(err.message, "bytes remaining") != NULL);
  /* Deep nesting of unknown structs stops at the depth limit. */
  uint8_t deep[400];
  size_t n = 0;
  deep[n++] = 0x1c; /* field 1: struct */
  for (int i = 0; i < 150; i++) deep[n++] = 0x1c;
  while (n < sizeof deep) deep[n++] = 0;
  memset(&err, 0, sizeof err);
  CHECK(hs_pq_offset_index_parse(deep, sizeof deep, &a, &oi, &err) == HS_ERR_CORRUPT);
  CHECK(strstr(err.message, "too deep") != NULL);
  /* An 11-byte varint is corrupt. */
  const uint8_t vi[] = {0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  memset(&err, 0, sizeof err);
  CHECK(hs_pq_offset_index_parse(vi, sizeof vi, &a, &oi, &err) == HS_ERR_CORRUPT);
  /* Missing required field. */
  const uint8_t empty[] = {0x00};
  memset(&err, 0, sizeof err);
  CHECK(hs_pq_offset_index_parse(empty, 1, &a, &oi, &err) == HS_ERR_CORRUPT);
  CHECK(strstr(err.message, "required field 1") != NULL);
  /* A field whose wire type differs from the spec is skipped. */
  const uint8_t skip[] = {0x18, 0x02, 'h', 'i', 0x09, 0x02, 0x0c, 0x00};
  memset(&err, 0, sizeof err);
  CHECK_OK(hs_pq_offset_index_parse(skip, sizeof skip, &a, &oi, &err), &err);
  CHECK_EQ_INT(oi.n_pages, 0);
  hs_arena_reset(&a);
}

/* ------------------------------------------------------------ corpus */

static const char *conformance_dir(void) {
  const char *d = getenv("HS_CONFORMANCE_DIR");
  return d ? d : "../shared/conformance/parquet-testing";
}

static uint8_t *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = hs_malloc(n > 0 ? (size_t)n : 1);
  if (p && n > 0 && fread(p, 1, (size_t)n, f) != (size_t)n) {
    hs_free(p);
    p = NULL;
  }
  fclose(f);
  *len = n > 0 ? (size_t)n : 0;
  return p;
}

/* Feed `buf` to every parser; only checks that nothing crashes. */
static void parse_all(const uint8_t *buf, size_t len) {
  hs_arena a;
  hs_arena_init(&a);
  hs_pq_file_metadata md;
  hs_pq_page_header ph;
  hs_pq_column_index ci;
  hs_pq_offset_index oi;
  size_t used;
  hs_error err = {0};
  if (hs_pq_file_metadata_parse(buf, len, &a, &md, &err) == HS_OK) {
    hs_buf w;
    hs_buf_init(&w);
    hs_pq_file_metadata_write(&md, &w, NULL);
    hs_buf_free(&w);
  }
  hs_pq_page_header_parse(buf, len, &a, &ph, &used, NULL);
  hs_pq_column_index_parse(buf, len, &a, &ci, NULL);
  hs_pq_offset_index_parse(buf, len, &a, &oi, NULL);
  hs_arena_reset(&a);
}

static int n_files_ok, n_encrypted, n_page_headers, n_page_indexes;

static void check_file(const char *path) {
  size_t len;
  uint8_t *file = read_file(path, &len);
  if (file == NULL) return;
  hs_source *src;
  hs_error err = {0};
  CHECK_OK(hs_source_open_memory(file, len, path, &src, &err), &err);
  hs_arena a;
  hs_arena_init(&a);
  hs_pq_file_metadata md;
  hs_status st = hs_pq_footer_read(src, &a, &md, &err);
  bool pare = len >= 4 && memcmp(file + len - 4, "PARE", 4) == 0;
  if (pare) {
    CHECK(st == HS_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "file is encrypted (encrypted footer)") != NULL);
    n_encrypted++;
  } else {
    if (st != HS_OK) fprintf(stderr, "%s: %s\n", path, err.message);
    CHECK(st == HS_OK);
  }
  if (st == HS_OK) {
    n_files_ok++;
    CHECK(md.n_schema >= 1);
    if (strstr(path, "plaintext_footer")) CHECK(md.has_encryption_algorithm);
    /* Idempotent re-serialization of a real footer. */
    hs_buf w1, w2;
    hs_buf_init(&w1);
    hs_buf_init(&w2);
    hs_arena b;
    hs_arena_init(&b);
    hs_pq_file_metadata back;
    CHECK_OK(hs_pq_file_metadata_write(&md, &w1, &err), &err);
    CHECK_OK(hs_pq_file_metadata_parse(w1.data, w1.len, &b, &back, &err), &err);
    CHECK_OK(hs_pq_file_metadata_write(&back, &w2, &err), &err);
    CHECK(w1.len == w2.len && memcmp(w1.data, w2.data, w1.len) == 0);
    hs_buf_free(&w1);
    hs_buf_free(&w2);
    hs_arena_reset(&b);
    /* The first page header of every chunk, and its page indexes. */
    for (uint32_t g = 0; g < md.n_row_groups; g++) {
      for (uint32_t c = 0; c < md.row_groups[g].n_columns; c++) {
        const hs_pq_column_chunk *cc = &md.row_groups[g].columns[c];
        if (!cc->has_meta_data || cc->is_encrypted) continue;
        int64_t off = cc->meta_data.data_page_offset;
        if (cc->meta_data.has_dictionary_page_offset && cc->meta_data.dictionary_page_offset > 0)
          off = cc->meta_data.dictionary_page_offset;
        if (off >= 4 && (uint64_t)off < len) {
          hs_pq_page_header ph;
          size_t used;
          hs_error e2 = {0};
          if (hs_pq_page_header_parse(file + off, len - (size_t)off, &a, &ph, &used, &e2) ==
              HS_OK) {
            n_page_headers++;
            CHECK(ph.compressed_page_size >= 0);
          } else if (!strstr(path, "bad_data")) {
            fprintf(stderr, "%s: page header at %lld: %s\n", path, (long long)off, e2.message);
          }
        }
        if (cc->has_column_index && cc->column_index_offset > 0 &&
            (uint64_t)cc->column_index_offset < len && cc->column_index_length > 0 &&
            (uint64_t)cc->column_index_length <= len - (uint64_t)cc->column_index_offset) {
          hs_pq_column_index ci;
          hs_error e2 = {0};
          CHECK_OK(hs_pq_column_index_parse(file + cc->column_index_offset,
                                            (size_t)cc->column_index_length, &a, &ci, &e2),
                   &e2);
          n_page_indexes++;
        }
        if (cc->has_offset_index && cc->offset_index_offset > 0 &&
            (uint64_t)cc->offset_index_offset < len && cc->offset_index_length > 0 &&
            (uint64_t)cc->offset_index_length <= len - (uint64_t)cc->offset_index_offset) {
          hs_pq_offset_index oi;
          hs_error e2 = {0};
          CHECK_OK(hs_pq_offset_index_parse(file + cc->offset_index_offset,
                                            (size_t)cc->offset_index_length, &a, &oi, &e2),
                   &e2);
          CHECK(oi.n_pages >= 1);
          n_page_indexes++;
        }
      }
    }
  }
  /* Corrupted footers: truncations and bit flips must not crash. */
  if (!pare && len > 12 && len < (1u << 20)) {
    uint32_t flen = hs_load_u32le(file + len - 8);
    if (flen <= len - 12 && flen < 100000) {
      const uint8_t *footer = file + len - 8 - flen;
      size_t step = flen > 2000 ? flen / 500 : 1;
      for (size_t n = 0; n < flen; n += step) parse_all(footer, n);
      uint8_t *copy = hs_malloc(flen ? flen : 1);
      for (int k = 0; k < 200; k++) {
        memcpy(copy, footer, flen);
        for (int f = 0; f < 1 + (int)rnd(4); f++)
          if (flen) copy[rnd(flen)] ^= (uint8_t)(1u << rnd(8));
        parse_all(copy, flen);
      }
      hs_free(copy);
    }
  }
  hs_arena_reset(&a);
  hs_source_unref(src);
  hs_free(file);
}

static void for_each_file(const char *dir, void (*fn)(const char *)) {
  DIR *d = opendir(dir);
  if (d == NULL) return;
  struct dirent *e;
  char path[4096];
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (stat(path, &sb) != 0) continue;
    if (S_ISDIR(sb.st_mode)) {
      for_each_file(path, fn);
    } else if (strstr(e->d_name, ".parquet") && !strstr(e->d_name, ".json")) {
      fn(path);
    }
  }
  closedir(d);
}

static void test_conformance(void) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/data", conformance_dir());
  for_each_file(dir, check_file);
  printf(
      "conformance: %d footers parsed, %d encrypted footers refused, %d page headers, %d page "
      "indexes\n",
      n_files_ok, n_encrypted, n_page_headers, n_page_indexes);
  CHECK(n_files_ok >= 60);
  CHECK(n_encrypted >= 5);
  CHECK(n_page_headers >= 100);
  CHECK(n_page_indexes >= 10);
}

static void bad_file(const char *path) {
  size_t len;
  uint8_t *file = read_file(path, &len);
  if (file == NULL) return;
  hs_source *src;
  hs_error err = {0};
  if (hs_source_open_memory(file, len, path, &src, &err) == HS_OK) {
    hs_arena a;
    hs_arena_init(&a);
    hs_pq_file_metadata md;
    hs_status st = hs_pq_footer_read(src, &a, &md, &err);
    CHECK(st == HS_OK || err.message[0] != '\0');
    hs_arena_reset(&a);
    hs_source_unref(src);
  }
  hs_free(file);
}

static void test_bad_data_and_footer_checks(void) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/bad_data", conformance_dir());
  for_each_file(dir, bad_file);

  struct {
    const char *bytes;
    size_t len;
    hs_status want;
    const char *msg;
  } cases[] = {
      {"PAR1", 4, HS_ERR_CORRUPT, "smaller than"},
      {"PAR1\x00\x00\x00\x00PARE", 12, HS_ERR_UNSUPPORTED, "encrypted footer"},
      {"PAR1\x00\x00\x00\x00PAR2", 12, HS_ERR_CORRUPT, "no PAR1 magic at the end"},
      {"XXXX\x00\x00\x00\x00PAR1", 12, HS_ERR_CORRUPT, "no PAR1 magic at the start"},
      {"PAR1\x05\x00\x00\x00PAR1", 12, HS_ERR_CORRUPT, "footer length 5"},
      {"PAR1\x00\x01\x00\x00\x00PAR1", 13, HS_ERR_CORRUPT, "footer at offset 4"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hs_source *src;
    hs_error err = {0};
    CHECK_OK(
        hs_source_open_memory((const uint8_t *)cases[i].bytes, cases[i].len, "mem", &src, &err),
        &err);
    hs_arena a;
    hs_arena_init(&a);
    hs_pq_file_metadata md;
    CHECK_EQ_INT(hs_pq_footer_read(src, &a, &md, &err), cases[i].want);
    if (!strstr(err.message, cases[i].msg)) fprintf(stderr, "case %zu: %s\n", i, err.message);
    CHECK(strstr(err.message, cases[i].msg) != NULL);
    hs_arena_reset(&a);
    hs_source_unref(src);
  }
}

/* Replay inputs the fuzzer once crashed on (fuzz/regress/footer/). */
static void regress_file(const char *path) {
  size_t len;
  uint8_t *buf = read_file(path, &len);
  if (buf == NULL) return;
  parse_all(buf, len);
  hs_free(buf);
}

static void test_fuzz_regressions(void) {
  DIR *d = opendir("fuzz/regress/footer");
  if (d == NULL) return;
  struct dirent *e;
  char path[4096];
  int n = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "fuzz/regress/footer/%s", e->d_name);
    regress_file(path);
    n++;
  }
  closedir(d);
  printf("fuzz regressions replayed: %d\n", n);
}

/* ------------------------------------------------------------ inspect */

static void test_inspect(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/data/alltypes_plain.parquet", conformance_dir());
  const char *more[] = {"data/alltypes_plain.parquet",
                        "data/nested_structs.rust.parquet",
                        "data/int96_from_spark.parquet",
                        "data/fixed_length_decimal.parquet",
                        "data/column_chunk_key_value_metadata.parquet",
                        "data/datapage_v2.snappy.parquet",
                        "data/binary.parquet",
                        "data/float16_nonzeros_and_nans.parquet"};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", conformance_dir(), more[i]);
    if (access(path, R_OK) != 0) continue;
    for (int json = 0; json <= 1; json++) {
      char *out = NULL;
      hs_error err = {0};
      CHECK_OK(hs_parquet_inspect(path, json, &out, &err), &err);
      if (out == NULL) continue;
      CHECK(strlen(out) > 50);
      if (json) {
        char tmp[] = "/tmp/hs_inspect_XXXXXX";
        int fd = mkstemp(tmp);
        if (fd >= 0) {
          ssize_t wr = write(fd, out, strlen(out));
          CHECK(wr == (ssize_t)strlen(out));
          close(fd);
          char cmd[8192];
          snprintf(cmd, sizeof cmd,
                   "python3 -c 'import json,sys; d=json.load(open(sys.argv[1],encoding=\"utf-8\"));"
                   " assert \"row_groups\" in d and \"schema\" in d' %s",
                   tmp);
          int rc = system(cmd);
          if (rc != 0) fprintf(stderr, "invalid JSON from %s (kept in %s)\n", path, tmp);
          CHECK(rc == 0);
          if (rc == 0) unlink(tmp);
        }
      } else if (i == 0) {
        CHECK(strstr(out, "INT32") != NULL);
        CHECK(strstr(out, "2009-") != NULL || strstr(out, "timestamp") != NULL);
      }
      hs_free(out);
    }
  }
  char *out = NULL;
  hs_error err = {0};
  CHECK(hs_parquet_inspect("/nonexistent.parquet", 0, &out, &err) == HS_ERR_NOT_FOUND);
  CHECK(out == NULL);
}

int main(void) {
  test_thrift_skip_unknown();
  test_thrift_limits();
  test_file_metadata_roundtrip();
  test_page_header_roundtrip();
  test_page_index_roundtrip();
  test_conformance();
  test_bad_data_and_footer_checks();
  test_fuzz_regressions();
  test_inspect();
  return hs_test_finish("test_metadata");
}
