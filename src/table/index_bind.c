/*
 * index_bind.c — a data file's identity as its index blobs record it
 * (src/index/binding.h): the path relative to the table root, the size and
 * the CRC-32C of its Parquet footer, read through the shared open-file
 * cache (the footer is parsed once per file version and process); and a
 * data file checked against what its manifest entry records of it.
 */
#include <string.h>

#include "../parquet/parquet.h"
#include "table.h"

hs_status hs_table_data_file_footer(const char *path, uint64_t *size, uint32_t *crc,
                                    hs_error *err) {
  hs_parquet_reader *rd = NULL;
  hs_status st = hs_parquet_reader_open_shared(path, &rd, err);
  if (st != HS_OK) return st;
  const hs_pq_file_metadata *md = hs_parquet_reader_metadata(rd);
  *size = md->file_size;
  *crc = md->footer_crc32c;
  hs_parquet_reader_free(rd);
  return HS_OK;
}

const char *hs_table_relative_path(const hs_table *t, const char *path) {
  size_t n = strlen(t->root);
  if (strncmp(path, t->root, n) == 0 && path[n] == '/' && path[n + 1] != '\0') return path + n + 1;
  return path;
}

hs_status hs_table_data_file_binding(const hs_table *t, const char *path, hs_index_binding *out,
                                     hs_error *err) {
  memset(out, 0, sizeof *out);
  hs_status st = hs_table_data_file_footer(path, &out->data_file_size, &out->footer_crc32c, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "index binding: ");
    return st;
  }
  out->data_file = hs_table_relative_path(t, path);
  return HS_OK;
}

hs_status hs_table_data_file_check(const char *path, const hs_pq_file_metadata *md, int64_t size,
                                   int64_t rows, hs_error *err) {
  if (size >= 0 && md->file_size != 0 && (int64_t)md->file_size != size)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: %llu bytes, but its manifest entry records %lld (the file was "
                        "replaced or damaged)",
                        path, (unsigned long long)md->file_size, (long long)size);
  if (rows >= 0 && md->num_rows != rows)
    return hs_error_set(err, HS_ERR_CORRUPT,
                        "%s: %lld rows, but its manifest entry records %lld (the file was "
                        "replaced or damaged)",
                        path, (long long)md->num_rows, (long long)rows);
  return HS_OK;
}
