/*
 * bench_append.c — table append throughput without Python: the rows of a
 * Parquet file (read once into memory, one batch per row group) are
 * appended to a fresh table in a temp folder, one committed append per
 * batch, `reps` times. Prints wall and CPU seconds per repetition and rows
 * per second, so column-writer and commit changes can be measured and
 * profiled (perf record) in isolation from the Python layer.
 *
 *   bench_append FILE.parquet [reps] [codec] [threads]
 *
 * codec is a write.parquet.compression-codec value (default zstd). Write
 * the input with row groups of the append size, e.g. pyarrow's
 * pq.write_table(t, f, row_group_size=200000, compression="none").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arrow/arrow.h"
#include "hyperstream.h"

static void no_release(struct ArrowArray *a) {
  a->release = NULL;
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int die(const hs_error *err, const char *what) {
  fprintf(stderr, "%s: %s\n", what, err->message);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE.parquet [reps] [codec]\n", argv[0]);
    return 2;
  }
  int reps = argc > 2 ? atoi(argv[2]) : 3;
  const char *codec = argc > 3 ? argv[3] : "zstd";
  hs_error err;
  memset(&err, 0, sizeof err);
  hs_parquet_reader *r = NULL;
  if (hs_parquet_reader_open(argv[1], &r, &err) != HS_OK) return die(&err, argv[1]);
  hs_parquet_read_options ro;
  hs_parquet_read_options_init(&ro);
  struct ArrowArrayStream in;
  if (hs_parquet_reader_stream(r, &ro, &in, &err) != HS_OK) return die(&err, "stream");
  struct ArrowSchema schema;
  struct ArrowArray *batches = NULL;
  size_t nb = 0;
  if (hs_arrow_stream_collect(&in, &schema, &batches, &nb, &err) != HS_OK)
    return die(&err, "collect");
  in.release(&in);
  int64_t rows = 0;
  for (size_t i = 0; i < nb; i++) rows += batches[i].length;

  char tmpl[] = "/tmp/hs_bench_append_XXXXXX";
  if (mkdtemp(tmpl) == NULL) return 1;
  for (int rep = 0; rep < reps; rep++) {
    char uri[512];
    snprintf(uri, sizeof uri, "%s/t%d", tmpl, rep);
    const char *keys[] = {"write.parquet.compression-codec"}, *vals[] = {codec};
    hs_table_options to;
    hs_table_options_init(&to);
    to.property_keys = keys;
    to.property_values = vals;
    to.n_properties = 1;
    double c0 = cpu_s();
    int64_t t0 = hs_now_ns();
    hs_table *t = NULL;
    if (hs_table_create(uri, &schema, &to, &t, &err) != HS_OK) return die(&err, "create");
    for (size_t i = 0; i < nb; i++) {
      struct ArrowSchema s;
      if (hs_arrow_schema_copy(&schema, &s, &err) != HS_OK) return die(&err, "schema");
      struct ArrowArray view = batches[i]; /* borrowed: the stream must not free it */
      view.release = no_release;
      struct ArrowArrayStream st;
      if (hs_arrow_stream_from_batches(&s, &view, 1, &st, &err) != HS_OK)
        return die(&err, "stream");
      if (hs_table_append(t, &st, NULL, &err) != HS_OK) return die(&err, "append");
    }
    hs_table_free(t);
    double wall = (double)(hs_now_ns() - t0) / 1e9, cpu = cpu_s() - c0;
    printf("rep %d: %zu appends, %lld rows: wall %.3f s, cpu %.3f s, %.2f M rows/s\n", rep, nb,
           (long long)rows, wall, cpu, (double)rows / wall / 1e6);
    fflush(stdout);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", uri);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", uri);
  }
  rmdir(tmpl);
  hs_arrow_batches_free(batches, nb);
  schema.release(&schema);
  hs_parquet_reader_free(r);
  return 0;
}
