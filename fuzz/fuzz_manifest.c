/*
 * fuzz_manifest.c — libFuzzer target for Iceberg manifest and manifest-list
 * reading: every input goes through both readers (with and without a
 * manifest-list entry to inherit from). Whatever reads as a manifest list
 * must write back (v2 and v3) and read again with the same entries; a
 * manifest whose schema and spec are usable must write back and read again
 * with the same number of entries. Seeds: fuzz/corpus/manifest/ (our files
 * and pyiceberg's); crash inputs go to fuzz/regress/manifest/.
 */
#include <stdlib.h>
#include <string.h>

#include "iceberg/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t SYNC[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void list_round_trip(const hs_iceberg_manifest_list *l, hs_arena *arena) {
  for (int32_t fv = 2; fv <= 3; fv++) {
    hs_buf b;
    hs_buf_init(&b);
    hs_error err = {0};
    hs_iceberg_manifest_list_options o = {.format_version = fv,
                                          .snapshot_id = l->snapshot_id,
                                          .sequence_number = l->sequence_number,
                                          .sync = SYNC};
    if (hs_iceberg_manifest_list_write(&o, l->files, l->n_files, &b, NULL, NULL, &err) == HS_OK) {
      hs_iceberg_manifest_list l2;
      if (hs_iceberg_manifest_list_read(b.data, b.len, arena, &l2, &err) != HS_OK ||
          l2.n_files != l->n_files)
        abort(); /* we wrote a list we cannot read */
      for (size_t i = 0; i < l->n_files; i++)
        if (strcmp(l2.files[i].manifest_path, l->files[i].manifest_path) != 0 ||
            l2.files[i].added_rows_count != l->files[i].added_rows_count ||
            l2.files[i].n_partitions != l->files[i].n_partitions)
          abort();
    }
    hs_buf_free(&b);
  }
}

static void manifest_round_trip(const hs_iceberg_manifest *m, hs_arena *arena) {
  if (!m->has_schema) return;
  hs_buf b;
  hs_buf_init(&b);
  hs_error err = {0};
  hs_iceberg_manifest_writer_options o = {
      .format_version = m->format_version < 2 ? 2 : m->format_version,
      .content = m->content,
      .schema = &m->schema,
      .spec = &m->spec,
      .sync = SYNC};
  hs_iceberg_manifest_writer *w = NULL;
  if (hs_iceberg_manifest_writer_open(&o, &b, NULL, &w, &err) != HS_OK) {
    hs_buf_free(&b);
    return;
  }
  size_t added = 0;
  for (size_t i = 0; i < m->n_entries; i++)
    if (hs_iceberg_manifest_writer_add(w, &m->entries[i], &err) == HS_OK) added++;
  if (hs_iceberg_manifest_writer_close(w, NULL, NULL, &err) == HS_OK) {
    hs_iceberg_manifest m2;
    if (hs_iceberg_manifest_read(b.data, b.len, NULL, arena, &m2, &err) != HS_OK ||
        m2.n_entries != added)
      abort(); /* we wrote a manifest we cannot read */
  }
  hs_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hs_arena arena;
  hs_arena_init(&arena);
  hs_error err = {0};
  hs_iceberg_manifest_list l;
  if (hs_iceberg_manifest_list_read(data, size, &arena, &l, &err) == HS_OK)
    list_round_trip(&l, &arena);
  hs_iceberg_manifest m;
  hs_iceberg_manifest_file from = {.manifest_path = "m.avro",
                                   .added_snapshot_id = 7,
                                   .sequence_number = 3,
                                   .has_first_row_id = true,
                                   .first_row_id = 100};
  hs_error e2 = {0};
  if (hs_iceberg_manifest_read(data, size, NULL, &arena, &m, &e2) == HS_OK)
    manifest_round_trip(&m, &arena);
  hs_error e3 = {0};
  (void)hs_iceberg_manifest_read(data, size, &from, &arena, &m, &e3);
  hs_arena_reset(&arena);
  return 0;
}
