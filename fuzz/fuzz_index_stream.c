/*
 * fuzz_index_stream.c — libFuzzer target: an index stream object
 * (`<metadata file>.hsis`, src/table/stream.c), which a reader GETs from
 * the table folder as it finds it: its header and the pack of object
 * ranges after it (src/io/s3_pack.c), checked without loading anything.
 * Errors are expected and must say what; any crash, leak, hang or
 * sanitizer report is a bug. The pack alone is fuzzed too (first byte odd).
 */
#include "io/store.h"
#include "table/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  hs_error err = {0};
  size_t n = 0;
  hs_status st = (data[0] & 1) != 0 ? hs_store_pack_check(data + 1, size - 1, "fuzz pack", &n, &err)
                                    : hs_table_stream_parse(NULL, data + 1, size - 1, "fuzz stream",
                                                            false, &n, &err);
  if (st != HS_OK && err.message[0] == '\0') __builtin_trap(); /* an error must say what */
  if (st == HS_OK && n > 65536) __builtin_trap();
  return 0;
}
