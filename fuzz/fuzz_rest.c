/*
 * fuzz_rest.c — libFuzzer target: the Iceberg REST catalog's answers
 * (src/catalog/rest_parse.c), which come from whatever server a URI names.
 * The first byte picks the parser (error document, config, OAuth token,
 * namespace list, table list, LoadTableResult); the rest is the body.
 * Errors are expected and must say what; any crash, leak, hang or
 * sanitizer report is a bug.
 */
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const char *body = (const char *)data + 1;
  size_t len = size - 1;
  hs_arena a;
  hs_arena_init(&a);
  hs_error err = {0};
  hs_status st = HS_OK;
  switch (data[0] % 6) {
  case 0: {
    hs_rest_error e;
    if (hs_rest_parse_error(body, len, &e) &&
        (strlen(e.message) >= sizeof e.message || strlen(e.type) >= sizeof e.type))
      __builtin_trap();
    break;
  }
  case 1: {
    hs_rest_config c;
    st = hs_rest_parse_config(body, len, &a, &c, &err);
    for (size_t i = 0; st == HS_OK && i < c.n_defaults + c.n_overrides; i++) {
      const hs_iceberg_kv *kv = i < c.n_defaults ? &c.defaults[i] : &c.overrides[i - c.n_defaults];
      if (kv->key == NULL || kv->value == NULL) __builtin_trap();
    }
    break;
  }
  case 2: {
    const char *tok = NULL;
    st = hs_rest_parse_token(body, len, &a, &tok, &err);
    if (st == HS_OK && (tok == NULL || tok[0] == '\0')) __builtin_trap();
    break;
  }
  case 3:
  case 4: {
    char **names = NULL;
    size_t n = 0;
    const char *next = NULL;
    st = data[0] % 6 == 3 ? hs_rest_parse_namespaces(body, len, &a, &names, &n, &next, &err)
                          : hs_rest_parse_tables(body, len, &a, &names, &n, &next, &err);
    for (size_t i = 0; st == HS_OK && i < n; i++)
      if (names[i] == NULL || names[i][0] == '\0') __builtin_trap();
    break;
  }
  default: {
    const char *loc = NULL;
    hs_iceberg_metadata m;
    hs_store_option *cfg = NULL;
    size_t n_cfg = 0;
    st = hs_rest_parse_load(body, len, &a, &loc, &m, &cfg, &n_cfg, &err);
    for (size_t i = 0; st == HS_OK && i < n_cfg; i++)
      if (cfg[i].key == NULL || cfg[i].value == NULL) abort();
    if (st == HS_OK && (loc == NULL || m.format_version < 1)) __builtin_trap();
    break;
  }
  }
  if (st != HS_OK && err.message[0] == '\0') __builtin_trap(); /* an error must say what */
  hs_arena_reset(&a);
  return 0;
}
