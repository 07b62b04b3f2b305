/*
 * fuzz_reader.c — libFuzzer target for the whole read path: open a Parquet
 * file from memory (footer, schema validation), stream every batch of every
 * column (pages, decoding, assembly), validate each batch against the
 * schema, and release everything. A quarter of the inputs read a row
 * selection instead (every third row), which takes the page-skipping and
 * in-place row gather paths. Any input must end in success or an
 * error message, never a crash, hang or leak.
 */
#include <stdint.h>
#include <stdlib.h>

#include "arrow/arrow.h"
#include "parquet/parquet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hs_error err = {0};
  hs_parquet_reader *r = NULL;
  if (hs_parquet_reader_open_buffer(data, size, "fuzz", &r, &err) != HS_OK) return 0;
  struct ArrowSchema schema;
  if (hs_parquet_reader_schema(r, &schema, &err) != HS_OK) {
    hs_parquet_reader_free(r);
    return 0;
  }
  hs_parquet_read_options opts;
  hs_parquet_read_options_init(&opts);
  opts.batch_rows_max = (size & 1) ? 3 : 0; /* exercise slicing on half the inputs */
  int64_t sel[2048];
  if ((size & 6) == 6) {
    int64_t n = hs_parquet_reader_num_rows(r);
    size_t k = 0;
    for (int64_t i = 1; i < n && k < sizeof sel / sizeof sel[0]; i += 3) sel[k++] = i;
    opts.rows = sel;
    opts.n_rows = k;
  }
  struct ArrowArrayStream s;
  if (hs_parquet_reader_stream(r, &opts, &s, &err) == HS_OK) {
    hs_parquet_reader_free(r); /* the stream outlives the reader */
    r = NULL;
    for (int batches = 0; batches < 10000; batches++) {
      struct ArrowArray a;
      if (s.get_next(&s, &a) != 0) {
        if (s.get_last_error(&s) == NULL) abort(); /* a failure must say why */
        break;
      }
      if (a.release == NULL) break;
      hs_error verr = {0};
      if (hs_arrow_array_validate(&schema, &a, &verr) != HS_OK) abort();
      a.release(&a);
    }
    s.release(&s);
  }
  schema.release(&schema);
  hs_parquet_reader_free(r);
  return 0;
}
