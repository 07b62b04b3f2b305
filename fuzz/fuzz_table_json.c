/*
 * fuzz_table_json.c — libFuzzer target: the JSON this library keeps beside
 * the Iceberg metadata, which a reader takes from the table folder as it
 * finds it: the index registry file (metadata/index-registry-*.json) and the
 * index configuration property "hyperstream.indexes". The first byte picks
 * one; the rest is the text. Parse, then look up every entry / column the
 * parse returned. Errors are expected; any crash, leak, hang or sanitizer
 * report is a bug.
 */
#include <string.h>

#include "table/table.h"

static void registry(const uint8_t *data, size_t size) {
  hs_table_index_registry r;
  hs_error err = {0};
  if (hs_table_index_registry_parse("fuzz registry", data, size, &r, &err) != HS_OK) {
    if (err.message[0] == '\0') __builtin_trap(); /* an error must say what */
    return;
  }
  for (size_t i = 0; i < r.n_entries; i++) {
    const hs_table_index_entry *e = &r.entries[i];
    for (size_t k = 0; k < e->n_columns; k++) {
      const char *got = hs_table_index_lookup(&r, e->data_file, e->file_size, e->columns[k]);
      if (got == NULL) __builtin_trap(); /* what was parsed must be found */
    }
    (void)hs_table_index_lookup(&r, e->data_file, e->file_size + 1, "x");
  }
  hs_table_index_registry_free(&r);
}

static void config(const uint8_t *data, size_t size) {
  char *text = hs_malloc(size + 1);
  if (text == NULL) return;
  memcpy(text, data, size);
  text[size] = '\0';
  hs_iceberg_kv prop = {.key = "hyperstream.indexes", .value = text};
  hs_iceberg_metadata m;
  memset(&m, 0, sizeof m);
  m.properties = &prop;
  m.n_properties = 1;
  hs_table_index_config c;
  hs_error err = {0};
  if (hs_table_index_config_load(&m, &c, &err) == HS_OK) {
    for (size_t i = 0; i < c.n_entries; i++)
      if (hs_table_index_config_find(&c, c.entries[i].column) == NULL) __builtin_trap();
    hs_table_index_config_free(&c);
  } else if (err.message[0] == '\0') {
    __builtin_trap();
  }
  hs_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  if (data[0] & 1)
    config(data + 1, size - 1);
  else
    registry(data + 1, size - 1);
  return 0;
}
