/*
 * fuzz_s3_xml.c — libFuzzer target for the bounded XML reading of S3
 * answers (src/io/s3_xml.c): the input is parsed as a ListObjectsV2 page
 * (with a prefix length taken from its first byte) and as an error
 * document. Any crash, leak, hang or sanitizer report is a bug; errors are
 * fine. Every listed name must be a NUL-terminated string.
 */
#include <stdlib.h>
#include <string.h>

#include "io/s3_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  size_t prefix_len = data[0] % 8;
  hs_s3_span doc = {(const char *)data + 1, size - 1};
  hs_s3_list_acc acc = {0};
  bool truncated = false;
  char token[64];
  hs_s3_parse_list_page(doc, prefix_len, &acc, &truncated, token, sizeof token, NULL);
  for (size_t i = 0; i < acc.n; i++) {
    if (strlen(acc.entries[i].name) > doc.len) abort();
    hs_free(acc.entries[i].name);
  }
  hs_free(acc.entries);
  char code[16] = "", msg[32] = "";
  hs_s3_xml_text(doc, "Code", code, sizeof code);
  if (!hs_s3_xml_text(doc, "Message", msg, sizeof msg)) msg[0] = '\0';
  hs_s3_iso8601_ms(msg);
  return 0;
}
