/*
 * avro_internal.h — what the files of src/avro/ share and nobody else
 * includes: the schema handle's layout and small helpers.
 */
#ifndef HS_AVRO_INTERNAL_H
#define HS_AVRO_INTERNAL_H

#include "avro.h"

/* A parsed schema: every node, name and symbol lives in `arena`; every JSON
 * attribute or default referenced from a node is also held by `keep` (a JSON
 * array), so one json_decref releases them all. */
struct hs_avro_schema {
  hs_arena arena;
  json_t *keep;
  hs_avro_node *root;
  int refs; /* owners (containers share writer schemas: container.c); freed at 0 */
};

/* Smallest number of bytes any datum of `node` encodes to (a lower bound;
 * 0 means "possibly zero", e.g. null or an empty record). Used to check block
 * counts against the bytes remaining before allocating. */
size_t hs_avro_node_min_bytes(const hs_avro_node *node, int depth);

/* Raw inflate/deflate (zlib with negative window bits, as Avro specifies).
 * Output is appended to `out`; inflating stops with HS_ERR_CORRUPT past
 * `out_max` bytes so that a deflate bomb cannot exhaust memory. */
hs_status hs_avro_deflate(const uint8_t *src, size_t len, int level, hs_buf *out, hs_error *err);
hs_status hs_avro_inflate(const uint8_t *src, size_t len, size_t out_max, hs_buf *out,
                          hs_error *err);

#endif /* HS_AVRO_INTERNAL_H */
