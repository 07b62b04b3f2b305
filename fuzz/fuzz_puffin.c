/*
 * fuzz_puffin.c — libFuzzer target: a vector index file as the table layer
 * opens it (src/table/vector_index.c): the Puffin tail and JSON footer,
 * the blob of type hyperstream-vidx-v1 for column "v", then the vidx inside
 * it (open, validate, one search when it opens). The vidx format alone is
 * fuzz_vidx's; this one reaches it through the footer. Errors are expected;
 * any crash, leak, hang or sanitizer report is a bug.
 */
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "table/vector_index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hs_source *src = NULL;
  hs_error err = {0};
  if (hs_source_open_memory(data, size, "fuzz.puffin", &src, &err) != HS_OK) return 0;
  hs_vidx *x = NULL;
  if (hs_table_vector_index_open_source(src, "fuzz.puffin", "v", &x, &err) == HS_OK) {
    if (hs_vidx_validate(x, &err) == HS_OK) {
      uint32_t dim = hs_vidx_dim(x);
      float *q = dim > 0 && dim <= 4096 ? calloc(dim, sizeof *q) : NULL;
      if (q != NULL) {
        hs_vidx_hit hits[4];
        uint32_t n = 0;
        (void)hs_vidx_search(x, q, 4, NULL, NULL, hits, &n, &err);
        free(q);
      }
    }
    hs_vidx_free(x);
  } else if (err.message[0] == '\0') {
    __builtin_trap(); /* an error must say what */
  }
  hs_source_unref(src);
  return 0;
}
