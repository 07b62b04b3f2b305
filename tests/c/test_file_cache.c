/*
 * test_file_cache.c — data files kept open per process
 * (hs_parquet_reader_open_shared, src/parquet/reader.c): a second open of an
 * unchanged file shares the first one's parsed footer, a file rewritten
 * under the same path (other rows, size or mtime) is opened afresh, readers
 * outlive eviction and hs_parquet_file_cache_clear, and a missing or
 * damaged file fails exactly as hs_parquet_reader_open does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hs_test.h"
#include "parquet/parquet.h"

/* Write `n` int64 rows first, first+1, ... to path (one column "x"). */
static void write_ints(const char *path, int64_t first, int64_t n) {
  hs_error e = {0};
  struct ArrowSchema schema;
  CHECK_OK(hs_arrow_schema_init(&schema, "+s", NULL, 0, 1, &e), &e);
  CHECK_OK(hs_arrow_schema_init(schema.children[0], "l", "x", 0, 0, &e), &e);
  int64_t *v = hs_malloc((size_t)n * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = first + i;
  struct ArrowArray col, batch;
  CHECK_OK(hs_arrow_array_make_primitive(&col, n, v, NULL, 0, &e), &e);
  CHECK_OK(hs_arrow_array_make_struct(&batch, n, &col, 1, NULL, 0, &e), &e);
  hs_parquet_writer *w = NULL;
  CHECK_OK(hs_parquet_writer_open(path, &schema, NULL, &w, &e), &e);
  if (w != NULL) {
    CHECK_OK(hs_parquet_writer_write(w, &batch, &e), &e);
    CHECK_OK(hs_parquet_writer_close(w, &e), &e);
    hs_parquet_writer_free(w);
  }
  batch.release(&batch);
  schema.release(&schema);
}

/* Rows and sum of column 0 read through reader r. */
static void read_sum(hs_parquet_reader *r, int64_t *rows, int64_t *sum) {
  hs_error e = {0};
  *rows = *sum = 0;
  struct ArrowArrayStream st;
  CHECK_OK(hs_parquet_reader_stream(r, NULL, &st, &e), &e);
  struct ArrowArray got;
  while (st.get_next(&st, &got) == 0 && got.release != NULL) {
    const int64_t *x = got.children[0]->buffers[1];
    for (int64_t i = 0; i < got.length; i++) *sum += x[got.children[0]->offset + i];
    *rows += got.length;
    got.release(&got);
  }
  st.release(&st);
}

static int64_t tri(int64_t first, int64_t n) {
  return n * first + n * (n - 1) / 2;
}

int main(void) {
  hs_error e = {0};
  char dir[] = "/tmp/hs_test_filecache_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[256];
  snprintf(path, sizeof path, "%s/a.parquet", dir);
  write_ints(path, 0, 1000);

  /* Unchanged: the second open shares the first's footer. */
  hs_parquet_reader *r1 = NULL, *r2 = NULL;
  CHECK_OK(hs_parquet_reader_open_shared(path, &r1, &e), &e);
  CHECK_OK(hs_parquet_reader_open_shared(path, &r2, &e), &e);
  if (r1 == NULL || r2 == NULL) return hs_test_finish("test_file_cache");
  CHECK(hs_parquet_reader_metadata(r1) == hs_parquet_reader_metadata(r2));
  int64_t rows, sum;
  read_sum(r2, &rows, &sum);
  CHECK_EQ_INT(rows, 1000);
  CHECK_EQ_INT(sum, tri(0, 1000));
  hs_parquet_reader_free(r2);

  /* Rewritten under the same path: opened afresh, new rows; the old
   * reader still reads its file (kept alive by its mapping). */
  struct timespec pause = {0, 20 * 1000 * 1000};
  nanosleep(&pause, NULL);
  unlink(path); /* a new file under the old name, as a table never does */
  write_ints(path, 5000, 700);
  CHECK_OK(hs_parquet_reader_open_shared(path, &r2, &e), &e);
  if (r2 != NULL) {
    CHECK(hs_parquet_reader_metadata(r1) != hs_parquet_reader_metadata(r2));
    CHECK_EQ_INT(hs_parquet_reader_num_rows(r2), 700);
    read_sum(r2, &rows, &sum);
    CHECK_EQ_INT(rows, 700);
    CHECK_EQ_INT(sum, tri(5000, 700));
    hs_parquet_reader_free(r2);
  }
  CHECK_EQ_INT(hs_parquet_reader_num_rows(r1), 1000);
  read_sum(r1, &rows, &sum);
  CHECK_EQ_INT(rows, 1000);
  CHECK_EQ_INT(sum, tri(0, 1000));

  /* The same file rewritten in place, same size and rows, other values
   * (the mtime tells): afresh. */
  nanosleep(&pause, NULL);
  write_ints(path, 9000, 700);
  CHECK_OK(hs_parquet_reader_open_shared(path, &r2, &e), &e);
  if (r2 != NULL) {
    read_sum(r2, &rows, &sum);
    CHECK_EQ_INT(sum, tri(9000, 700));
    hs_parquet_reader_free(r2);
  }

  /* More files than the cache keeps: every reader stays valid through
   * the evictions and a clear (ASan watches). */
  enum { N = HS_PQ_FILE_CACHE_MAX + 8 };
  hs_parquet_reader *many[N] = {0};
  for (int i = 0; i < N; i++) {
    char p[256];
    snprintf(p, sizeof p, "%s/m%d.parquet", dir, i);
    write_ints(p, i * 100, 10 + i);
    CHECK_OK(hs_parquet_reader_open_shared(p, &many[i], &e), &e);
  }
  hs_parquet_file_cache_clear();
  for (int i = 0; i < N; i++) {
    if (many[i] == NULL) continue;
    read_sum(many[i], &rows, &sum);
    CHECK_EQ_INT(rows, 10 + i);
    CHECK_EQ_INT(sum, tri(i * 100, 10 + i));
    hs_parquet_reader_free(many[i]);
    char p[256];
    snprintf(p, sizeof p, "%s/m%d.parquet", dir, i);
    unlink(p);
  }

  /* Failures as from hs_parquet_reader_open: missing, then damaged. */
  char missing[300];
  snprintf(missing, sizeof missing, "%s/none.parquet", dir);
  hs_parquet_reader *bad = NULL;
  hs_error e2 = {0};
  CHECK(hs_parquet_reader_open_shared(missing, &bad, &e2) == HS_ERR_NOT_FOUND);
  CHECK(bad == NULL && strstr(e2.message, "none.parquet") != NULL);
  FILE *f = fopen(path, "r+b");
  CHECK(f != NULL);
  if (f != NULL) {
    fseek(f, -8, SEEK_END);
    fputs("XXXX", f); /* the footer length */
    fclose(f);
  }
  memset(&e2, 0, sizeof e2);
  CHECK(hs_parquet_reader_open_shared(path, &bad, &e2) != HS_OK);
  CHECK(bad == NULL && e2.message[0] != 0);

  hs_parquet_reader_free(r1);
  hs_parquet_file_cache_clear();
  unlink(path);
  rmdir(dir);
  return hs_test_finish("test_file_cache");
}
