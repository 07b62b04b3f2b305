/*
 * test_manifest.c — Iceberg manifests and manifest lists: round trips in
 * format v2 and v3 (partition tuples of several result types, metrics,
 * inheritance of snapshot id, sequence numbers and first_row_id, partition
 * summaries), data-file metrics from a hand-built Parquet footer (string
 * truncation and increment, NaN, lists), and hostile bytes (every
 * truncation and many bit flips: errors, never crashes; run under ASan).
 *
 * Driver modes for tests/python/test_manifest.py (env-var driven):
 *   HS_MANIFEST_BUILD=1  stdin lines "base <metadata.json>", "out <new
 *     metadata.json>", "dir <table metadata dir>", "snapshot <id>",
 *     "file <parquet path> [partition values...]" (values: "null", an
 *     integer, or text); writes a manifest, a manifest list and the new
 *     metadata with one appended snapshot.
 *   HS_MANIFEST_DUMP=<manifest list path>  prints one JSON line per entry
 *     of every manifest (inherited values applied), then the list entries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs_test.h"
#include "iceberg/manifest.h"

/* ---------------------------------------------------------- fixtures */

static hs_iceberg_field F(int32_t id, const char *name, hs_iceberg_type_id t) {
  hs_iceberg_field f;
  memset(&f, 0, sizeof f);
  f.id = id;
  f.name = name;
  f.type.id = t;
  return f;
}

static hs_iceberg_field g_fields[6];
static hs_iceberg_partition_field g_pfields[4];

static void fixture(hs_iceberg_schema *s, hs_iceberg_partition_spec *spec) {
  g_fields[0] = F(1, "id", HS_ICE_LONG);
  g_fields[1] = F(2, "name", HS_ICE_STRING);
  g_fields[2] = F(3, "ts", HS_ICE_TIMESTAMP);
  g_fields[3] = F(4, "price", HS_ICE_DECIMAL);
  g_fields[3].type.precision = 9;
  g_fields[3].type.scale = 2;
  g_fields[4] = F(5, "score", HS_ICE_DOUBLE);
  g_fields[5] = F(6, "flag", HS_ICE_BOOLEAN);
  memset(s, 0, sizeof *s);
  s->schema_id = 0;
  s->root.id = HS_ICE_STRUCT;
  s->root.fields = g_fields;
  s->root.n_fields = 6;
  memset(g_pfields, 0, sizeof g_pfields);
  g_pfields[0] = (hs_iceberg_partition_field){.source_id = 2,
                                              .has_field_id = true,
                                              .field_id = 1000,
                                              .name = "name",
                                              .transform = {.kind = HS_ICE_T_IDENTITY}};
  g_pfields[1] = (hs_iceberg_partition_field){.source_id = 3,
                                              .has_field_id = true,
                                              .field_id = 1001,
                                              .name = "ts_day",
                                              .transform = {.kind = HS_ICE_T_DAY}};
  g_pfields[2] = (hs_iceberg_partition_field){.source_id = 1,
                                              .has_field_id = true,
                                              .field_id = 1002,
                                              .name = "id_bucket",
                                              .transform = {.kind = HS_ICE_T_BUCKET, .param = 8}};
  g_pfields[3] = (hs_iceberg_partition_field){.source_id = 4,
                                              .has_field_id = true,
                                              .field_id = 1003,
                                              .name = "price",
                                              .transform = {.kind = HS_ICE_T_IDENTITY}};
  memset(spec, 0, sizeof *spec);
  spec->spec_id = 3;
  spec->fields = g_pfields;
  spec->n_fields = 4;
}

static const uint8_t SYNC[16] = "0123456789abcdef";

/* Entry i: partition ("n<i%3>" or null, day 19000+i, bucket i%8, price
 * -i*100), metrics for ids 1, 2 and 5. */
static void make_entry(int i, hs_iceberg_manifest_entry *e, hs_iceberg_value *part,
                       hs_iceberg_column_metrics *m, char *path, char *pname, uint8_t *bounds) {
  memset(e, 0, sizeof *e);
  snprintf(path, 64, "/t/data/f%d.parquet", i);
  snprintf(pname, 8, "n%d", i % 3);
  memset(part, 0, 4 * sizeof *part);
  part[0].is_null = i % 4 == 3;
  part[0].bytes = (const uint8_t *)pname;
  part[0].len = strlen(pname);
  part[1].i64 = 19000 + i;
  part[2].i64 = i % 8;
  int64_t p = -100 * (int64_t)i;
  part[3].dec_hi = p < 0 ? -1 : 0;
  part[3].dec_lo = (uint64_t)p;
  e->status = (hs_iceberg_entry_status)(i % 3 == 2 ? HS_ICE_ENTRY_EXISTING : HS_ICE_ENTRY_ADDED);
  if (e->status == HS_ICE_ENTRY_EXISTING) {
    e->has_snapshot_id = e->has_sequence_number = e->has_file_sequence_number = true;
    e->snapshot_id = 41;
    e->sequence_number = 1;
    e->file_sequence_number = 1;
  }
  hs_iceberg_data_file *f = &e->data_file;
  f->file_path = path;
  f->file_format = "PARQUET";
  f->partition = part;
  f->n_partition = 4;
  f->record_count = 10 + i;
  f->file_size_in_bytes = 1000 + i;
  memset(m, 0, 3 * sizeof *m);
  int32_t ids[3] = {1, 2, 5};
  for (int k = 0; k < 3; k++) {
    m[k].field_id = ids[k];
    m[k].has_column_size = m[k].has_value_count = true;
    m[k].column_size = 100 * k + i;
    m[k].value_count = 10 + i;
    m[k].has_null_count = k != 1;
    m[k].null_count = k;
    m[k].has_nan_count = k == 2;
  }
  hs_store_u64le(bounds, (uint64_t)i);
  hs_store_u64le(bounds + 8, (uint64_t)(i + 100));
  m[0].lower = bounds;
  m[0].lower_len = 8;
  m[0].upper = bounds + 8;
  m[0].upper_len = 8;
  m[1].lower = (const uint8_t *)"";
  m[1].lower_len = 0;
  f->metrics = m;
  f->n_metrics = 3;
  f->has_split_offsets = true;
  static int64_t splits[2] = {4, 4096};
  f->split_offsets = splits;
  f->n_split_offsets = (size_t)(i % 3);
  f->has_sort_order_id = i % 2 == 0;
  f->sort_order_id = 0;
}

#define N_ENTRIES 12

static void write_manifest(int32_t fv, hs_buf *out, hs_iceberg_manifest_file *summary,
                           hs_arena *arena) {
  hs_iceberg_schema s;
  hs_iceberg_partition_spec spec;
  fixture(&s, &spec);
  hs_error err = {0};
  hs_iceberg_manifest_writer_options o = {.format_version = fv,
                                          .schema = &s,
                                          .spec = &spec,
                                          .snapshot_id = 42,
                                          .sequence_number = 2,
                                          .sync = SYNC};
  hs_iceberg_manifest_writer *w = NULL;
  CHECK_OK(hs_iceberg_manifest_writer_open(&o, out, NULL, &w, &err), &err);
  if (w == NULL) return;
  for (int i = 0; i < N_ENTRIES; i++) {
    hs_iceberg_manifest_entry e;
    hs_iceberg_value part[4];
    hs_iceberg_column_metrics m[3];
    char path[64], pname[8];
    uint8_t bounds[16];
    make_entry(i, &e, part, m, path, pname, bounds);
    if (fv >= 3 && i == 5) {
      e.data_file.has_first_row_id = true;
      e.data_file.first_row_id = 7777;
    }
    CHECK_OK(hs_iceberg_manifest_writer_add(w, &e, &err), &err);
  }
  CHECK_OK(hs_iceberg_manifest_writer_close(w, summary, arena, &err), &err);
}

/* The parsed entry schema is cached per process (manifest.c): repeated
 * writers must produce the same bytes, and a writer must keep working after
 * another writer sharing its schema was freed (ASan sees a use after free). */
static void test_schema_cache(void) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_iceberg_manifest_file sum;
  hs_buf ref[2];
  for (int v = 0; v < 2; v++) {
    hs_buf_init(&ref[v]);
    write_manifest(2 + v, &ref[v], &sum, &arena);
  }
  for (int k = 0; k < 4; k++) {
    hs_buf b;
    hs_buf_init(&b);
    write_manifest(2 + k % 2, &b, &sum, &arena);
    CHECK(b.len == ref[k % 2].len && memcmp(b.data, ref[k % 2].data, b.len) == 0);
    hs_buf_free(&b);
  }
  hs_iceberg_schema s;
  hs_iceberg_partition_spec spec;
  fixture(&s, &spec);
  hs_error err = {0};
  hs_iceberg_manifest_writer_options o = {.format_version = 2,
                                          .schema = &s,
                                          .spec = &spec,
                                          .snapshot_id = 42,
                                          .sequence_number = 2,
                                          .sync = SYNC};
  hs_buf b1, b2;
  hs_buf_init(&b1);
  hs_buf_init(&b2);
  hs_iceberg_manifest_writer *w1 = NULL, *w2 = NULL;
  CHECK_OK(hs_iceberg_manifest_writer_open(&o, &b1, NULL, &w1, &err), &err);
  CHECK_OK(hs_iceberg_manifest_writer_open(&o, &b2, NULL, &w2, &err), &err);
  hs_iceberg_manifest_writer_free(w1); /* abandoned, not closed */
  for (int i = 0; w2 != NULL && i < N_ENTRIES; i++) {
    hs_iceberg_manifest_entry e;
    hs_iceberg_value part[4];
    hs_iceberg_column_metrics m[3];
    char path[64], pname[8];
    uint8_t bounds[16];
    make_entry(i, &e, part, m, path, pname, bounds);
    CHECK_OK(hs_iceberg_manifest_writer_add(w2, &e, &err), &err);
  }
  if (w2 != NULL) CHECK_OK(hs_iceberg_manifest_writer_close(w2, &sum, &arena, &err), &err);
  CHECK(b2.len == ref[0].len && memcmp(b2.data, ref[0].data, b2.len) == 0);
  /* Manifest lists share the cache too (one schema per format version):
   * v2, v3, v2 again give the same bytes as the first writes, and read. */
  hs_buf lists[4];
  for (int k = 0; k < 4; k++) {
    int32_t fv = 2 + k % 2;
    hs_iceberg_manifest_list_options lo = {
        .format_version = fv, .snapshot_id = 42, .sequence_number = 2, .sync = SYNC};
    hs_buf_init(&lists[k]);
    sum.manifest_path = "/t/metadata/m.avro";
    CHECK_OK(hs_iceberg_manifest_list_write(&lo, &sum, 1, &lists[k], NULL, NULL, &err), &err);
    hs_iceberg_manifest_list back;
    CHECK_OK(hs_iceberg_manifest_list_read(lists[k].data, lists[k].len, &arena, &back, &err), &err);
    CHECK(back.n_files == 1 && strcmp(back.files[0].manifest_path, "/t/metadata/m.avro") == 0);
  }
  for (int k = 2; k < 4; k++)
    CHECK(lists[k].len == lists[k - 2].len &&
          memcmp(lists[k].data, lists[k - 2].data, lists[k].len) == 0);
  for (int k = 0; k < 4; k++) hs_buf_free(&lists[k]);
  hs_buf_free(&b1);
  hs_buf_free(&b2);
  hs_buf_free(&ref[0]);
  hs_buf_free(&ref[1]);
  hs_arena_reset(&arena);
}

static void test_manifest_round_trip(int32_t fv) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_buf buf;
  hs_buf_init(&buf);
  hs_iceberg_manifest_file sum;
  write_manifest(fv, &buf, &sum, &arena);
  CHECK_EQ_INT(sum.manifest_length, buf.len);
  CHECK_EQ_INT(sum.added_files_count, 8);
  CHECK_EQ_INT(sum.existing_files_count, 4);
  CHECK_EQ_INT(sum.added_snapshot_id, 42);
  CHECK_EQ_INT(sum.min_sequence_number, 1);
  CHECK_EQ_INT(sum.partition_spec_id, 3);
  CHECK(sum.n_partitions == 4 && sum.partitions[0].contains_null);
  CHECK(sum.partitions[0].lower_len == 2 && memcmp(sum.partitions[0].lower_bound, "n0", 2) == 0);
  CHECK(sum.partitions[0].upper_len == 2 && memcmp(sum.partitions[0].upper_bound, "n2", 2) == 0);
  CHECK(sum.partitions[1].lower_len == 4 && hs_load_u32le(sum.partitions[1].lower_bound) == 19000);
  CHECK(!sum.partitions[2].contains_null && !sum.partitions[2].has_contains_nan);
  /* decimal(9,2) min is -1100 = 0xfb b4 as minimal big-endian bytes */
  CHECK(sum.partitions[3].lower_len == 2 && sum.partitions[3].lower_bound[0] == 0xfb &&
        sum.partitions[3].lower_bound[1] == 0xb4);

  hs_iceberg_manifest m;
  hs_error err = {0};
  /* Without the list entry: no inheritance. */
  CHECK_OK(hs_iceberg_manifest_read(buf.data, buf.len, NULL, &arena, &m, &err), &err);
  CHECK_EQ_INT(m.format_version, fv);
  CHECK_EQ_INT(m.n_entries, N_ENTRIES);
  CHECK(m.has_schema && m.schema.root.n_fields == 6 && m.spec.n_fields == 4);
  CHECK_EQ_INT(m.partition_spec_id, 3);
  CHECK(m.n_partition_types == 4 && m.partition_types[0].id == HS_ICE_STRING &&
        m.partition_types[1].id == HS_ICE_DATE && m.partition_types[2].id == HS_ICE_INT &&
        m.partition_types[3].id == HS_ICE_DECIMAL && m.partition_types[3].scale == 2);
  CHECK(!m.entries[0].has_snapshot_id && !m.entries[0].has_sequence_number);
  /* With it: inherited. */
  sum.manifest_path = "/t/metadata/m.avro";
  sum.has_first_row_id = true;
  sum.first_row_id = 1000;
  CHECK_OK(hs_iceberg_manifest_read(buf.data, buf.len, &sum, &arena, &m, &err), &err);
  int64_t row = 1000;
  for (int i = 0; i < N_ENTRIES && (size_t)i < m.n_entries; i++) {
    hs_iceberg_manifest_entry want, *got = &m.entries[i];
    hs_iceberg_value part[4];
    hs_iceberg_column_metrics mm[3];
    char path[64], pname[8];
    uint8_t bounds[16];
    make_entry(i, &want, part, mm, path, pname, bounds);
    CHECK_EQ_INT(got->status, want.status);
    CHECK(got->has_snapshot_id && got->has_sequence_number && got->has_file_sequence_number);
    CHECK_EQ_INT(got->snapshot_id, want.has_snapshot_id ? 41 : 42);
    CHECK_EQ_INT(got->sequence_number, want.has_sequence_number ? 1 : 2);
    const hs_iceberg_data_file *f = &got->data_file;
    CHECK(strcmp(f->file_path, path) == 0 && strcmp(f->file_format, "PARQUET") == 0);
    CHECK_EQ_INT(f->record_count, 10 + i);
    CHECK_EQ_INT(f->file_size_in_bytes, 1000 + i);
    CHECK(f->n_partition == 4);
    if (f->n_partition == 4) {
      CHECK_EQ_INT(f->partition[0].is_null, part[0].is_null);
      if (!part[0].is_null)
        CHECK(f->partition[0].len == part[0].len &&
              memcmp(f->partition[0].bytes, pname, part[0].len) == 0);
      CHECK_EQ_INT(f->partition[1].i64, 19000 + i);
      CHECK_EQ_INT(f->partition[2].i64, i % 8);
      CHECK(f->partition[3].dec_hi == part[3].dec_hi && f->partition[3].dec_lo == part[3].dec_lo);
    }
    CHECK_EQ_INT(f->n_metrics, 3);
    if (f->n_metrics == 3) {
      for (int k = 0; k < 3; k++) {
        CHECK_EQ_INT(f->metrics[k].field_id, mm[k].field_id);
        CHECK_EQ_INT(f->metrics[k].column_size, mm[k].column_size);
        CHECK_EQ_INT(f->metrics[k].has_null_count, mm[k].has_null_count);
        CHECK_EQ_INT(f->metrics[k].has_nan_count, mm[k].has_nan_count);
      }
      CHECK(f->metrics[0].lower_len == 8 && hs_load_u64le(f->metrics[0].lower) == (uint64_t)i);
      CHECK(f->metrics[0].upper_len == 8 &&
            hs_load_u64le(f->metrics[0].upper) == (uint64_t)i + 100);
      CHECK(f->metrics[1].lower != NULL && f->metrics[1].lower_len == 0);
      CHECK(f->metrics[1].upper == NULL && f->metrics[2].lower == NULL);
    }
    CHECK(f->has_split_offsets && f->n_split_offsets == (size_t)(i % 3));
    CHECK_EQ_INT(f->has_sort_order_id, i % 2 == 0);
    if (fv >= 3) {
      CHECK(f->has_first_row_id);
      CHECK_EQ_INT(f->first_row_id, i == 5 ? 7777 : row);
      if (i != 5) row += f->record_count;
    } else {
      CHECK(!f->has_first_row_id);
    }
  }
  hs_buf_free(&buf);
  hs_arena_reset(&arena);
}

static void test_manifest_list(int32_t fv) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_buf mbuf, buf;
  hs_buf_init(&mbuf);
  hs_buf_init(&buf);
  hs_iceberg_manifest_file files[3];
  write_manifest(fv, &mbuf, &files[0], &arena);
  files[0].manifest_path = "/t/metadata/a.avro";
  files[1] = files[0];
  files[1].manifest_path = "/t/metadata/b.avro";
  files[1].has_partitions = false;
  files[1].key_metadata = (const uint8_t *)"k";
  files[1].key_metadata_len = 1;
  files[2] = files[0];
  files[2].manifest_path = "/t/metadata/del.avro";
  files[2].content = HS_ICE_MANIFEST_DELETES;
  hs_iceberg_manifest_list_options o = {.format_version = fv,
                                        .snapshot_id = 42,
                                        .has_parent_snapshot_id = true,
                                        .parent_snapshot_id = 41,
                                        .sequence_number = 2,
                                        .first_row_id = 500,
                                        .sync = SYNC};
  hs_error err = {0};
  int64_t assigned = -1;
  CHECK_OK(hs_iceberg_manifest_list_write(&o, files, 3, &buf, NULL, &assigned, &err), &err);
  int64_t rows = files[0].added_rows_count + files[0].existing_rows_count;
  CHECK_EQ_INT(assigned, fv >= 3 ? 2 * rows : 0);
  hs_iceberg_manifest_list l;
  CHECK_OK(hs_iceberg_manifest_list_read(buf.data, buf.len, &arena, &l, &err), &err);
  CHECK_EQ_INT(l.format_version, fv);
  CHECK(l.has_snapshot_id && l.snapshot_id == 42 && l.has_parent_snapshot_id &&
        l.parent_snapshot_id == 41 && l.has_sequence_number && l.sequence_number == 2);
  CHECK_EQ_INT(l.n_files, 3);
  if (l.n_files == 3) {
    for (int i = 0; i < 3; i++) {
      const hs_iceberg_manifest_file *a = &files[i], *b = &l.files[i];
      CHECK(strcmp(a->manifest_path, b->manifest_path) == 0);
      CHECK_EQ_INT(a->manifest_length, b->manifest_length);
      CHECK_EQ_INT(a->content, b->content);
      CHECK_EQ_INT(a->added_files_count, b->added_files_count);
      CHECK_EQ_INT(a->existing_rows_count, b->existing_rows_count);
      CHECK_EQ_INT(a->min_sequence_number, b->min_sequence_number);
      CHECK_EQ_INT(a->has_partitions, b->has_partitions);
      CHECK_EQ_INT(a->n_partitions * a->has_partitions, b->n_partitions);
    }
    const hs_iceberg_field_summary *s = &l.files[0].partitions[0];
    CHECK(s->contains_null && s->lower_len == 2 && memcmp(s->upper_bound, "n2", 2) == 0);
    CHECK(l.files[1].key_metadata_len == 1 && l.files[1].key_metadata[0] == 'k');
    if (fv >= 3) {
      CHECK(l.files[0].has_first_row_id && l.files[0].first_row_id == 500);
      CHECK(l.files[1].has_first_row_id && l.files[1].first_row_id == 500 + rows);
      CHECK(!l.files[2].has_first_row_id);
    } else {
      CHECK(!l.files[0].has_first_row_id);
    }
  }
  /* Hostile: every truncation, and bit flips. */
  for (size_t cut = 0; cut < buf.len; cut++) {
    hs_arena a2;
    hs_arena_init(&a2);
    hs_error e2 = {0};
    /* A cut at a block boundary is a valid, shorter file. */
    CHECK(hs_iceberg_manifest_list_read(buf.data, cut, &a2, &l, &e2) != HS_OK || l.n_files < 3);
    hs_arena_reset(&a2);
  }
  uint64_t rng = 7;
  for (int k = 0; k < 2000; k++) {
    hs_buf *b = k % 2 ? &buf : &mbuf;
    size_t at = (size_t)(hs_test_rand(&rng) % b->len);
    uint8_t bit = (uint8_t)(1u << (hs_test_rand(&rng) % 8));
    b->data[at] ^= bit;
    hs_arena a2;
    hs_arena_init(&a2);
    hs_error e2 = {0};
    hs_iceberg_manifest m2;
    if (k % 2)
      (void)hs_iceberg_manifest_list_read(b->data, b->len, &a2, &l, &e2);
    else
      (void)hs_iceberg_manifest_read(b->data, b->len, &files[0], &a2, &m2, &e2);
    b->data[at] ^= bit;
    hs_arena_reset(&a2);
  }
  for (size_t cut = 0; cut < mbuf.len; cut += 3) {
    hs_arena a2;
    hs_arena_init(&a2);
    hs_error e2 = {0};
    hs_iceberg_manifest m2;
    CHECK(hs_iceberg_manifest_read(mbuf.data, cut, NULL, &a2, &m2, &e2) != HS_OK ||
          m2.n_entries < N_ENTRIES);
    hs_arena_reset(&a2);
  }
  hs_buf_free(&mbuf);
  hs_buf_free(&buf);
  hs_arena_reset(&arena);
}

/* ------------------------------------------------- metrics from footer */

static hs_pq_bytes B(const void *p, size_t n) {
  return (hs_pq_bytes){(const uint8_t *)p, (uint32_t)n};
}

static void test_from_footer(void) {
  /* root { id: int64 (1), name: string (2), score: double (5),
   *        tags (7): list { list: repeated { element: string (8) } } } */
  hs_pq_schema_element el[7];
  memset(el, 0, sizeof el);
  el[0] = (hs_pq_schema_element){.name = "schema", .num_children = 4};
  el[1] = (hs_pq_schema_element){.has_type = true,
                                 .type = HS_PQ_INT64,
                                 .name = "id",
                                 .has_repetition = true,
                                 .repetition = HS_PQ_REQUIRED,
                                 .has_field_id = true,
                                 .field_id = 1};
  el[2] = (hs_pq_schema_element){.has_type = true,
                                 .type = HS_PQ_BYTE_ARRAY,
                                 .name = "name",
                                 .has_repetition = true,
                                 .repetition = HS_PQ_OPTIONAL,
                                 .has_field_id = true,
                                 .field_id = 2};
  el[3] = (hs_pq_schema_element){.has_type = true,
                                 .type = HS_PQ_DOUBLE,
                                 .name = "score",
                                 .has_repetition = true,
                                 .repetition = HS_PQ_OPTIONAL,
                                 .has_field_id = true,
                                 .field_id = 5};
  el[4] = (hs_pq_schema_element){.name = "tags",
                                 .num_children = 1,
                                 .has_repetition = true,
                                 .repetition = HS_PQ_OPTIONAL,
                                 .has_field_id = true,
                                 .field_id = 7};
  el[5] = (hs_pq_schema_element){
      .name = "list", .num_children = 1, .has_repetition = true, .repetition = HS_PQ_REPEATED};
  el[6] = (hs_pq_schema_element){.has_type = true,
                                 .type = HS_PQ_BYTE_ARRAY,
                                 .name = "element",
                                 .has_repetition = true,
                                 .repetition = HS_PQ_OPTIONAL,
                                 .has_field_id = true,
                                 .field_id = 8};
  uint8_t lo0[8], hi0[8], lo1[8], hi1[8];
  hs_store_u64le(lo0, (uint64_t)-5);
  hs_store_u64le(hi0, 10);
  hs_store_u64le(lo1, 3);
  hs_store_u64le(hi1, 20);
  double d0 = 1.5, d1 = -2.0;
  uint8_t dlo[8], dhi[8];
  memcpy(dlo, &d1, 8);
  memcpy(dhi, &d0, 8);
  const char *long_lo = "abcdefghijklmnopqrstuvwxyz";
  /* 16 code points then more; the 16th is U+10FFFF, which cannot be
   * incremented, so the 15th ('o' -> 'p') is. */
  const char *long_hi = "zzzzzzzzzzzzzzo\xf4\x8f\xbf\xbfqq";
  hs_pq_column_chunk cols[2][4];
  memset(cols, 0, sizeof cols);
  for (int g = 0; g < 2; g++) {
    for (int c = 0; c < 4; c++) {
      hs_pq_column_meta *m = &cols[g][c].meta_data;
      cols[g][c].has_meta_data = true;
      m->num_values = 100;
      m->total_compressed_size = 10 * (c + 1);
      m->data_page_offset = 4 + 1000 * g + 100 * c;
      m->has_statistics = true;
      m->statistics.has_null_count = true;
      m->statistics.null_count = c;
      m->statistics.has_min_value = m->statistics.has_max_value = true;
    }
    cols[g][0].meta_data.statistics.min_value = g ? B(lo1, 8) : B(lo0, 8);
    cols[g][0].meta_data.statistics.max_value = g ? B(hi1, 8) : B(hi0, 8);
    cols[g][1].meta_data.statistics.min_value = g ? B("b", 1) : B(long_lo, strlen(long_lo));
    cols[g][1].meta_data.statistics.max_value = g ? B("c", 1) : B(long_hi, strlen(long_hi));
    cols[g][2].meta_data.statistics.min_value = B(dlo, 8);
    cols[g][2].meta_data.statistics.max_value = B(dhi, 8);
    cols[g][3].meta_data.statistics.min_value = B("a", 1);
    cols[g][3].meta_data.statistics.max_value = B("z", 1);
  }
  cols[1][2].meta_data.statistics.null_count = 100; /* all null in group 1: skipped */
  cols[1][2].meta_data.statistics.has_min_value = false;
  hs_pq_row_group rgs[2] = {{.columns = cols[0], .n_columns = 4, .num_rows = 100},
                            {.columns = cols[1], .n_columns = 4, .num_rows = 100}};
  hs_pq_file_metadata md = {
      .schema = el, .n_schema = 7, .num_rows = 200, .row_groups = rgs, .n_row_groups = 2};
  hs_iceberg_field fs[4] = {F(1, "id", HS_ICE_LONG), F(2, "name", HS_ICE_STRING),
                            F(5, "score", HS_ICE_DOUBLE), F(7, "tags", HS_ICE_LIST)};
  hs_iceberg_type elem = {.id = HS_ICE_STRING};
  fs[3].type.element_id = 8;
  fs[3].type.element = &elem;
  hs_iceberg_schema s = {.root = {.id = HS_ICE_STRUCT, .fields = fs, .n_fields = 4}};
  hs_iceberg_data_file_options o = {
      .schema = &s, .file_path = "/t/data/x.parquet", .file_size_in_bytes = 5000};
  hs_arena arena;
  hs_arena_init(&arena);
  hs_error err = {0};
  hs_iceberg_data_file f;
  CHECK_OK(hs_iceberg_data_file_from_parquet(&md, &o, &arena, &f, &err), &err);
  CHECK_EQ_INT(f.record_count, 200);
  CHECK(f.n_split_offsets == 2 && f.split_offsets[0] == 4 && f.split_offsets[1] == 1004);
  CHECK_EQ_INT(f.n_metrics, 4);
  if (f.n_metrics == 4) {
    const hs_iceberg_column_metrics *m = f.metrics;
    CHECK(m[0].field_id == 1 && m[0].column_size == 20 && m[0].value_count == 200);
    CHECK(m[0].lower_len == 8 && (int64_t)hs_load_u64le(m[0].lower) == -5);
    CHECK(m[0].upper_len == 8 && hs_load_u64le(m[0].upper) == 20);
    CHECK(m[1].field_id == 2 && m[1].null_count == 2);
    CHECK(m[1].lower_len == 16 && memcmp(m[1].lower, long_lo, 16) == 0);
    CHECK(m[1].upper_len == 15 && memcmp(m[1].upper, "zzzzzzzzzzzzzzp", 15) == 0);
    CHECK(m[2].field_id == 5 && m[2].null_count == 102 && !m[2].has_nan_count);
    CHECK(m[2].lower_len == 8 && memcmp(m[2].lower, dlo, 8) == 0);
    CHECK(m[3].field_id == 8 && m[3].lower == NULL && m[3].upper == NULL);
  }
  /* A NaN max drops the bounds; a chunk without statistics too. */
  double nan = 0.0 / 0.0;
  memcpy(dhi, &nan, 8);
  cols[0][0].meta_data.has_statistics = false;
  CHECK_OK(hs_iceberg_data_file_from_parquet(&md, &o, &arena, &f, &err), &err);
  CHECK(f.n_metrics == 4 && f.metrics[2].lower == NULL && f.metrics[0].lower == NULL &&
        !f.metrics[0].has_null_count);
  /* Binary truncation: a 16-byte prefix of 0xff has no upper bound. */
  fs[1].type.id = HS_ICE_BINARY;
  uint8_t ff[20];
  memset(ff, 0xff, sizeof ff);
  cols[0][1].meta_data.statistics.max_value = B(ff, 20);
  CHECK_OK(hs_iceberg_data_file_from_parquet(&md, &o, &arena, &f, &err), &err);
  CHECK(f.n_metrics == 4 && f.metrics[1].upper == NULL && f.metrics[1].lower_len == 16);
  hs_arena_reset(&arena);
}

/* ------------------------------------------------------ driver modes */

static hs_status slurp(const char *path, hs_buf *out, hs_error *err) {
  if (strncmp(path, "file://", 7) == 0) path += 7;
  FILE *fp = fopen(path, "rb");
  if (fp == NULL) return hs_error_set(err, HS_ERR_IO, "cannot open %s", path);
  uint8_t tmp[65536];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0) hs_buf_append(out, tmp, n);
  fclose(fp);
  return HS_OK;
}

static hs_status spill(const char *path, const hs_buf *b, hs_error *err) {
  FILE *fp = fopen(path, "wb");
  if (fp == NULL) return hs_error_set(err, HS_ERR_IO, "cannot create %s", path);
  fwrite(b->data, 1, b->len, fp);
  fclose(fp);
  return HS_OK;
}

static void hex(const uint8_t *p, size_t n) {
  if (p == NULL) {
    printf("null");
    return;
  }
  printf("\"");
  for (size_t i = 0; i < n; i++) printf("%02x", p[i]);
  printf("\"");
}

static int driver_dump(const char *list_path) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_error err = {0};
  hs_buf b;
  hs_buf_init(&b);
  hs_iceberg_manifest_list l;
  hs_status st = slurp(list_path, &b, &err);
  if (st == HS_OK) st = hs_iceberg_manifest_list_read(b.data, b.len, &arena, &l, &err);
  for (size_t i = 0; st == HS_OK && i < l.n_files; i++) {
    const hs_iceberg_manifest_file *mf = &l.files[i];
    hs_buf mb;
    hs_buf_init(&mb);
    hs_iceberg_manifest m;
    st = slurp(mf->manifest_path, &mb, &err);
    if (st == HS_OK) st = hs_iceberg_manifest_read(mb.data, mb.len, mf, &arena, &m, &err);
    hs_buf_free(&mb);
    for (size_t k = 0; st == HS_OK && k < m.n_entries; k++) {
      const hs_iceberg_manifest_entry *e = &m.entries[k];
      const hs_iceberg_data_file *f = &e->data_file;
      printf(
          "{\"kind\":\"entry\",\"status\":%d,\"snapshot_id\":%lld,\"sequence_number\":%lld,"
          "\"file_sequence_number\":%lld,\"content\":%d,\"file_path\":\"%s\","
          "\"file_format\":\"%s\",\"record_count\":%lld,\"file_size_in_bytes\":%lld,"
          "\"spec_id\":%d,\"partition\":[",
          (int)e->status, (long long)e->snapshot_id, (long long)e->sequence_number,
          (long long)e->file_sequence_number, (int)f->content, f->file_path, f->file_format,
          (long long)f->record_count, (long long)f->file_size_in_bytes, (int)m.partition_spec_id);
      for (size_t p = 0; p < f->n_partition; p++) {
        const hs_iceberg_value *v = &f->partition[p];
        hs_iceberg_type_id t = m.partition_types[p].id;
        if (p) printf(",");
        if (v->is_null)
          printf("null");
        else if (t == HS_ICE_STRING)
          printf("\"%.*s\"", (int)v->len, (const char *)v->bytes);
        else
          printf("%lld", (long long)v->i64);
      }
      printf("],\"metrics\":{");
      for (size_t c = 0; c < f->n_metrics; c++) {
        const hs_iceberg_column_metrics *x = &f->metrics[c];
        printf("%s\"%d\":{\"size\":%lld,\"values\":%lld,\"nulls\":", c ? "," : "", (int)x->field_id,
               x->has_column_size ? (long long)x->column_size : -1LL,
               x->has_value_count ? (long long)x->value_count : -1LL);
        if (x->has_null_count)
          printf("%lld", (long long)x->null_count);
        else
          printf("null");
        printf(",\"nans\":");
        if (x->has_nan_count)
          printf("%lld", (long long)x->nan_count);
        else
          printf("null");
        printf(",\"lower\":");
        hex(x->lower, x->lower_len);
        printf(",\"upper\":");
        hex(x->upper, x->upper_len);
        printf("}");
      }
      printf("},\"split_offsets\":[");
      for (size_t s = 0; s < f->n_split_offsets; s++)
        printf("%s%lld", s ? "," : "", (long long)f->split_offsets[s]);
      printf("],\"first_row_id\":");
      if (f->has_first_row_id)
        printf("%lld", (long long)f->first_row_id);
      else
        printf("null");
      printf("}\n");
    }
    if (st == HS_OK)
      printf(
          "{\"kind\":\"manifest\",\"path\":\"%s\",\"length\":%lld,\"spec_id\":%d,"
          "\"added_files\":%d,\"existing_files\":%d,\"deleted_files\":%d,\"added_rows\":%lld,"
          "\"sequence_number\":%lld,\"added_snapshot_id\":%lld,\"n_partitions\":%zu}\n",
          mf->manifest_path, (long long)mf->manifest_length, (int)mf->partition_spec_id,
          (int)mf->added_files_count, (int)mf->existing_files_count, (int)mf->deleted_files_count,
          (long long)mf->added_rows_count, (long long)mf->sequence_number,
          (long long)mf->added_snapshot_id, mf->n_partitions);
  }
  hs_buf_free(&b);
  hs_arena_reset(&arena);
  if (st != HS_OK) fprintf(stderr, "error: %s\n", err.message);
  return st == HS_OK ? 0 : 1;
}

#define MAX_FILES 64

static int driver_build(void) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_error err = {0};
  char line[1024], base[1024] = "", outp[1024] = "", dir[1024] = "";
  long long snap = 1;
  char *paths[MAX_FILES];
  char *pvals[MAX_FILES];
  size_t n = 0;
  while (fgets(line, sizeof line, stdin) != NULL) {
    line[strcspn(line, "\n")] = 0;
    if (strncmp(line, "base ", 5) == 0) snprintf(base, sizeof base, "%s", line + 5);
    if (strncmp(line, "out ", 4) == 0) snprintf(outp, sizeof outp, "%s", line + 4);
    if (strncmp(line, "dir ", 4) == 0) snprintf(dir, sizeof dir, "%s", line + 4);
    if (strncmp(line, "snapshot ", 9) == 0) snap = atoll(line + 9);
    if (strncmp(line, "file ", 5) == 0 && n < MAX_FILES) {
      char *p = hs_arena_strndup(&arena, line + 5, strlen(line + 5));
      char *sp = strchr(p, ' ');
      if (sp) *sp++ = 0;
      paths[n] = p;
      pvals[n++] = sp;
    }
  }
  hs_buf b;
  hs_buf_init(&b);
  hs_iceberg_metadata md;
  hs_status st = slurp(base, &b, &err);
  if (st == HS_OK) st = hs_iceberg_metadata_parse((const char *)b.data, b.len, &arena, &md, &err);
  hs_buf_free(&b);
  if (st != HS_OK) goto done;
  const hs_iceberg_schema *schema = hs_iceberg_metadata_schema(&md, md.current_schema_id);
  const hs_iceberg_partition_spec *spec = NULL;
  for (size_t i = 0; i < md.n_specs; i++)
    if (md.specs[i].spec_id == md.default_spec_id) spec = &md.specs[i];
  hs_iceberg_type *ptypes = NULL;
  st = hs_iceberg_partition_types(schema, spec, &arena, &ptypes, &err);
  if (st != HS_OK) goto done;
  int64_t seq = (md.has_last_sequence_number ? md.last_sequence_number : 0) + 1;
  hs_buf mb;
  hs_buf_init(&mb);
  hs_iceberg_manifest_writer_options wo = {.format_version = md.format_version,
                                           .schema = schema,
                                           .spec = spec,
                                           .snapshot_id = snap,
                                           .sequence_number = seq};
  hs_iceberg_manifest_writer *w = NULL;
  st = hs_iceberg_manifest_writer_open(&wo, &mb, NULL, &w, &err);
  int64_t total_rows = 0;
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    hs_iceberg_value part[16];
    memset(part, 0, sizeof part);
    char *tok = pvals[i];
    for (size_t p = 0; p < spec->n_fields && p < 16; p++) {
      char *next = tok ? strchr(tok, ' ') : NULL;
      if (next) *next++ = 0;
      if (tok == NULL || strcmp(tok, "null") == 0)
        part[p].is_null = true;
      else if (ptypes[p].id == HS_ICE_STRING)
        part[p].bytes = (const uint8_t *)tok, part[p].len = strlen(tok);
      else
        part[p].i64 = atoll(tok);
      tok = next;
    }
    hs_iceberg_data_file_options fo = {
        .schema = schema, .partition = part, .n_partition = spec->n_fields};
    hs_iceberg_manifest_entry e = {.status = HS_ICE_ENTRY_ADDED};
    st = hs_iceberg_data_file_from_parquet_path(paths[i], &fo, &arena, &e.data_file, &err);
    if (st == HS_OK) st = hs_iceberg_manifest_writer_add(w, &e, &err);
    total_rows += e.data_file.record_count;
  }
  hs_iceberg_manifest_file mf;
  if (st == HS_OK) {
    st = hs_iceberg_manifest_writer_close(w, &mf, &arena, &err);
    w = NULL;
  }
  hs_iceberg_manifest_writer_free(w);
  char mpath[1100], lpath[1100];
  snprintf(mpath, sizeof mpath, "%s/manifest-%lld-m0.avro", dir, snap);
  snprintf(lpath, sizeof lpath, "%s/snap-%lld-1.avro", dir, snap);
  if (st == HS_OK) st = spill(mpath, &mb, &err);
  hs_buf_free(&mb);
  mf.manifest_path = mpath;
  hs_buf lb;
  hs_buf_init(&lb);
  int64_t first_row = md.has_next_row_id ? md.next_row_id : 0, assigned = 0;
  hs_iceberg_manifest_list_options lo = {.format_version = md.format_version,
                                         .snapshot_id = snap,
                                         .has_parent_snapshot_id = md.has_current_snapshot_id,
                                         .parent_snapshot_id = md.current_snapshot_id,
                                         .sequence_number = seq,
                                         .first_row_id = first_row};
  if (st == HS_OK) st = hs_iceberg_manifest_list_write(&lo, &mf, 1, &lb, NULL, &assigned, &err);
  if (st == HS_OK) st = spill(lpath, &lb, &err);
  hs_buf_free(&lb);
  if (st != HS_OK) goto done;
  /* New metadata: one appended snapshot. */
  hs_iceberg_snapshot *snaps = hs_arena_alloc(&arena, (md.n_snapshots + 1) * sizeof *snaps);
  if (md.n_snapshots) memcpy(snaps, md.snapshots, md.n_snapshots * sizeof *snaps);
  hs_iceberg_snapshot *s = &snaps[md.n_snapshots];
  char rows[32];
  snprintf(rows, sizeof rows, "%lld", (long long)total_rows);
  static hs_iceberg_kv summary[2];
  summary[0] = (hs_iceberg_kv){"operation", "append"};
  summary[1] = (hs_iceberg_kv){"added-records", rows};
  *s = (hs_iceberg_snapshot){.snapshot_id = snap,
                             .has_parent_snapshot_id = md.has_current_snapshot_id,
                             .parent_snapshot_id = md.current_snapshot_id,
                             .has_sequence_number = true,
                             .sequence_number = seq,
                             .timestamp_ms = md.last_updated_ms + 1,
                             .manifest_list = lpath,
                             .summary = summary,
                             .n_summary = 2,
                             .has_schema_id = true,
                             .schema_id = md.current_schema_id};
  if (md.format_version >= 3) {
    s->has_first_row_id = s->has_added_rows = true;
    s->first_row_id = first_row;
    s->added_rows = assigned;
    md.has_next_row_id = true;
    md.next_row_id = first_row + assigned;
  }
  md.snapshots = snaps;
  md.n_snapshots++;
  md.has_current_snapshot_id = true;
  md.current_snapshot_id = snap;
  md.has_last_sequence_number = true;
  md.last_sequence_number = seq;
  md.last_updated_ms += 1;
  static hs_iceberg_ref main_ref = {.name = "main"};
  main_ref.snapshot_id = snap;
  md.refs = &main_ref;
  md.n_refs = 1;
  hs_iceberg_snapshot_log_entry *log =
      hs_arena_alloc(&arena, (md.n_snapshot_log + 1) * sizeof *log);
  if (md.n_snapshot_log) memcpy(log, md.snapshot_log, md.n_snapshot_log * sizeof *log);
  log[md.n_snapshot_log] = (hs_iceberg_snapshot_log_entry){s->timestamp_ms, snap};
  md.snapshot_log = log;
  md.n_snapshot_log++;
  hs_buf jb;
  hs_buf_init(&jb);
  st = hs_iceberg_metadata_write(&md, &jb, &err);
  if (st == HS_OK) st = spill(outp, &jb, &err);
  hs_buf_free(&jb);
done:
  hs_arena_reset(&arena);
  if (st != HS_OK) fprintf(stderr, "error: %s\n", err.message);
  return st == HS_OK ? 0 : 1;
}

int main(void) {
  const char *mode = getenv("HS_MANIFEST_BUILD");
  if (mode != NULL && strcmp(mode, "1") == 0) return driver_build();
  mode = getenv("HS_MANIFEST_DUMP");
  if (mode != NULL && *mode) return driver_dump(mode);
  test_manifest_round_trip(2);
  test_manifest_round_trip(3);
  test_manifest_list(2);
  test_manifest_list(3);
  test_from_footer();
  test_schema_cache();
  return hs_test_finish("test_manifest");
}
