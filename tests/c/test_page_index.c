/*
 * test_page_index.c — hs_parquet_page_index_read (src/parquet/page_index.c):
 * the ColumnIndex/OffsetIndex our writer produces for small pages (page
 * rows, min/max of sorted values, null pages and counts), the indexes of
 * the conformance files that carry them (alltypes_tiny_pages*,
 * int32_with_null_pages, data_index_bloom_*), absent indexes (NULL, not an
 * error), and damaged ones: offsets outside the file, index bytes mutated
 * at random — an error naming the column or a checked index, never a
 * crash (also run under ASan/UBSan).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "parquet/parquet.h"

static const char *conformance_dir(void) {
  const char *d = getenv("HS_CONFORMANCE_DIR");
  return d ? d : "../shared/conformance/parquet-testing";
}

/* {v: int64 = row (sorted), n: int32 = row, null for rows 100..299}. */
static void write_file(const char *path, int64_t rows) {
  hs_error e = {0};
  struct ArrowSchema s;
  CHECK_OK(hs_arrow_schema_init(&s, "+s", "", 0, 2, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s.children[0], "l", "v", 0, 0, &e), &e);
  CHECK_OK(hs_arrow_schema_init(s.children[1], "i", "n", ARROW_FLAG_NULLABLE, 0, &e), &e);
  int64_t *v = hs_malloc((size_t)rows * sizeof *v);
  int32_t *n = hs_malloc((size_t)rows * sizeof *n);
  uint8_t *valid = hs_calloc((size_t)(rows + 7) / 8, 1);
  int64_t nulls = 0;
  for (int64_t i = 0; i < rows; i++) {
    v[i] = i;
    n[i] = (int32_t)i;
    if (i >= 100 && i < 300)
      nulls++;
    else
      valid[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  struct ArrowArray cols[2], b;
  CHECK_OK(hs_arrow_array_make_primitive(&cols[0], rows, v, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_primitive(&cols[1], rows, n, valid, nulls, &e), &e);
  CHECK_OK(hs_arrow_array_make_struct(&b, rows, cols, 2, NULL, 0, &e), &e);
  hs_parquet_write_options wo;
  hs_parquet_write_options_init(&wo);
  wo.page_bytes_max = 400; /* 50 int64 values per page */
  wo.row_group_rows_max = 1000;
  wo.use_dictionary = 0;
  hs_parquet_writer *w = NULL;
  CHECK_OK(hs_parquet_writer_open(path, &s, &wo, &w, &e), &e);
  CHECK_OK(hs_parquet_writer_write(w, &b, &e), &e);
  CHECK_OK(hs_parquet_writer_close(w, &e), &e);
  hs_parquet_writer_free(w);
  b.release(&b);
  s.release(&s);
}

static int64_t le64(hs_pq_bytes b) {
  return b.len == 8 ? (int64_t)hs_load_u64le(b.data) : -1;
}

static void test_own_writer(void) {
  char path[] = "/tmp/hs_test_page_index_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  close(fd);
  write_file(path, 2500);
  hs_error e = {0};
  hs_parquet_reader *r = NULL;
  CHECK_OK(hs_parquet_reader_open(path, &r, &e), &e);
  hs_source *src = NULL;
  CHECK_OK(hs_source_open_file(path, &src, &e), &e);
  const hs_pq_file_metadata *md = hs_parquet_reader_metadata(r);
  CHECK_EQ_INT(md->n_row_groups, 3);
  hs_arena a;
  hs_arena_init(&a);
  int64_t base = 0;
  for (uint32_t g = 0; g < md->n_row_groups; g++) {
    const hs_pq_row_group *rg = &md->row_groups[g];
    hs_pq_column_index *ci = NULL;
    hs_pq_offset_index *oi = NULL;
    CHECK_OK(hs_parquet_page_index_read(src, &rg->columns[0], rg->num_rows, &a, &ci, &oi, &e), &e);
    CHECK(ci != NULL && oi != NULL);
    if (ci == NULL || oi == NULL) break;
    CHECK(oi->n_pages >= 10 && ci->n_pages == oi->n_pages);
    for (uint32_t p = 0; p < oi->n_pages; p++) {
      int64_t first, end;
      hs_parquet_page_rows(oi, p, rg->num_rows, &first, &end);
      CHECK(first < end && end <= rg->num_rows);
      CHECK(!ci->null_pages[p] && le64(ci->min_values[p]) == base + first &&
            le64(ci->max_values[p]) == base + end - 1);
      CHECK(ci->has_null_counts && ci->null_counts[p] == 0);
    }
    /* n: null for rows 100..299 of the file (in row group 0) */
    CHECK_OK(hs_parquet_page_index_read(src, &rg->columns[1], rg->num_rows, &a, &ci, &oi, &e), &e);
    CHECK(ci != NULL && oi != NULL);
    if (ci == NULL || oi == NULL) break;
    int64_t null_rows = 0, null_pages = 0;
    for (uint32_t p = 0; p < oi->n_pages; p++) {
      int64_t first, end;
      hs_parquet_page_rows(oi, p, rg->num_rows, &first, &end);
      null_rows += ci->null_counts[p];
      if (ci->null_pages[p]) {
        null_pages++;
        CHECK(ci->null_counts[p] == end - first && base + first >= 100 && base + end <= 300);
      }
    }
    CHECK_EQ_INT(null_rows, g == 0 ? 200 : 0);
    (void)null_pages; /* whether a page is all null depends on where pages are cut */
    base += rg->num_rows;
  }

  /* Absent: NULL, NULL and HS_OK. */
  hs_pq_column_chunk cc = md->row_groups[0].columns[0];
  hs_pq_column_index *ci = (hs_pq_column_index *)1;
  hs_pq_offset_index *oi = (hs_pq_offset_index *)1;
  cc.has_offset_index = false;
  CHECK_OK(hs_parquet_page_index_read(src, &cc, 1000, &a, &ci, &oi, &e), &e);
  CHECK(ci == NULL && oi == NULL);
  /* Outside the file: an error naming the column. */
  cc = md->row_groups[0].columns[0];
  cc.offset_index_offset = (int64_t)hs_source_size(src) - 2;
  hs_error bad = {0};
  CHECK(hs_parquet_page_index_read(src, &cc, 1000, &a, &ci, &oi, &bad) == HS_ERR_CORRUPT);
  CHECK(strstr(bad.message, "'v'") != NULL && strstr(bad.message, "offset index") != NULL);
  cc = md->row_groups[0].columns[0];
  cc.column_index_offset = -5;
  memset(&bad, 0, sizeof bad);
  CHECK(hs_parquet_page_index_read(src, &cc, 1000, &a, &ci, &oi, &bad) == HS_ERR_CORRUPT);
  /* Row group claims more rows than the pages can hold: still valid (the
   * last page ends at the row group's end); fewer rows than the pages'
   * first rows: an error. */
  cc = md->row_groups[0].columns[0];
  memset(&bad, 0, sizeof bad);
  CHECK(hs_parquet_page_index_read(src, &cc, 100, &a, &ci, &oi, &bad) == HS_ERR_CORRUPT);
  CHECK(strstr(bad.message, "page") != NULL);
  /* The offset index parsed as a column index: rejected. */
  cc.column_index_offset = cc.offset_index_offset;
  cc.column_index_length = cc.offset_index_length;
  memset(&bad, 0, sizeof bad);
  CHECK(hs_parquet_page_index_read(src, &cc, 1000, &a, &ci, &oi, &bad) != HS_OK);

  /* Random byte mutations of the index region of an in-memory copy. */
  hs_buf file = {0};
  size_t size = (size_t)hs_source_size(src);
  CHECK(hs_buf_reserve(&file, size));
  CHECK_OK(hs_source_read(src, 0, size, file.data, &e), &e);
  cc = md->row_groups[1].columns[1];
  uint64_t seed = 12345;
  int ok = 0, failed = 0;
  for (int it = 0; it < 2000; it++) {
    uint8_t *copy = hs_malloc(size);
    memcpy(copy, file.data, size);
    for (int k = 0; k < 1 + it % 4; k++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      bool in_ci = (seed >> 33) & 1;
      int64_t off = in_ci ? cc.column_index_offset : cc.offset_index_offset;
      int32_t len = in_ci ? cc.column_index_length : cc.offset_index_length;
      copy[off + (int64_t)((seed >> 40) % (uint64_t)len)] = (uint8_t)(seed >> 20);
    }
    hs_source *ms = NULL;
    CHECK_OK(hs_source_open_memory(copy, size, "mutated", &ms, &e), &e);
    hs_arena ma;
    hs_arena_init(&ma);
    hs_error me = {0};
    hs_status st =
        hs_parquet_page_index_read(ms, &cc, md->row_groups[1].num_rows, &ma, &ci, &oi, &me);
    if (st == HS_OK) {
      ok++;
      /* whatever parsed is consistent: pages cover the row group in order */
      for (uint32_t p = 0; oi != NULL && p < oi->n_pages; p++) {
        int64_t first, end;
        hs_parquet_page_rows(oi, p, md->row_groups[1].num_rows, &first, &end);
        CHECK(first >= 0 && first < end && end <= md->row_groups[1].num_rows);
      }
      if (ci != NULL) CHECK(oi != NULL && ci->n_pages == oi->n_pages);
    } else {
      failed++;
      CHECK(st == HS_ERR_CORRUPT && me.message[0] != 0);
    }
    hs_arena_reset(&ma);
    hs_source_unref(ms);
    hs_free(copy);
  }
  CHECK(ok > 0 && failed > 0);
  hs_buf_free(&file);
  hs_arena_reset(&a);
  hs_source_unref(src);
  hs_parquet_reader_free(r);
  unlink(path);
}

/* Conformance files with page indexes: every index reads and is consistent. */
static void test_conformance(void) {
  static const char *files[] = {"alltypes_tiny_pages.parquet", "alltypes_tiny_pages_plain.parquet",
                                "int32_with_null_pages.parquet",
                                "data_index_bloom_encoding_stats.parquet",
                                "data_index_bloom_encoding_with_length.parquet"};
  int64_t total_pages = 0;
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/data/%s", conformance_dir(), files[f]);
    if (access(path, R_OK) != 0) {
      fprintf(stderr, "skip %s (not found)\n", path);
      continue;
    }
    hs_error e = {0};
    hs_parquet_reader *r = NULL;
    CHECK_OK(hs_parquet_reader_open(path, &r, &e), &e);
    if (r == NULL) continue;
    hs_source *src = NULL;
    CHECK_OK(hs_source_open_file(path, &src, &e), &e);
    const hs_pq_file_metadata *md = hs_parquet_reader_metadata(r);
    hs_arena a;
    hs_arena_init(&a);
    for (uint32_t g = 0; g < md->n_row_groups; g++) {
      const hs_pq_row_group *rg = &md->row_groups[g];
      for (uint32_t c = 0; c < rg->n_columns; c++) {
        hs_pq_column_index *ci = NULL;
        hs_pq_offset_index *oi = NULL;
        CHECK_OK(hs_parquet_page_index_read(src, &rg->columns[c], rg->num_rows, &a, &ci, &oi, &e),
                 &e);
        if (oi == NULL) continue;
        total_pages += oi->n_pages;
        if (ci == NULL) continue;
        for (uint32_t p = 0; p < ci->n_pages; p++)
          if (ci->null_pages[p] && ci->has_null_counts) {
            int64_t first, end;
            hs_parquet_page_rows(oi, p, rg->num_rows, &first, &end);
            CHECK(ci->null_counts[p] == end - first);
          }
      }
    }
    hs_arena_reset(&a);
    hs_source_unref(src);
    hs_parquet_reader_free(r);
  }
  if (access(conformance_dir(), R_OK) == 0) CHECK(total_pages > 100);
}

int main(void) {
  test_own_writer();
  test_conformance();
  return hs_test_finish("test_page_index");
}
