/*
 * iceberg_internal.h — private to src/iceberg/: the JSON parse context that
 * tracks the path of the value being read ("schemas[0].fields[3].type") for
 * error messages, typed getters over jansson values, and the jansson-level
 * codecs of schemas, partition specs and sort orders shared by the table
 * metadata codec (and, later, manifest key-value metadata).
 */
#ifndef HS_ICEBERG_INTERNAL_H
#define HS_ICEBERG_INTERNAL_H

#include <jansson.h>

#include "iceberg.h"

#define HS_ICE_PATH_MAX 256
#define HS_ICE_TYPE_DEPTH_MAX 64 /* nested type levels accepted in a schema */

typedef struct hs_ice_ctx {
  hs_arena *arena;
  hs_error *err;
  int32_t format_version;
  size_t plen;
  char path[HS_ICE_PATH_MAX];
} hs_ice_ctx;

/* Path segments: push returns the mark to pop back to. A path too long for
 * the buffer is cut (the message stays useful; nothing overflows). */
size_t hs_ice_push_key(hs_ice_ctx *c, const char *key);
size_t hs_ice_push_index(hs_ice_ctx *c, size_t i);
void hs_ice_pop(hs_ice_ctx *c, size_t mark);
/* Set HS_ERR_CORRUPT "<path>: <message>" (or "<path>.<key>: ..." when key
 * is not NULL). Returns HS_ERR_CORRUPT. */
hs_status hs_ice_fail(hs_ice_ctx *c, const char *key, const char *fmt, ...) HS_PRINTF(3, 4);
hs_status hs_ice_nomem(hs_ice_ctx *c);

/* Typed getters on object `o`. A missing key (or JSON null) leaves *has
 * false; when `has` is NULL the key is required. Wrong types fail with the
 * path. Integers must be JSON integers within the target range. */
hs_status hs_ice_get_i32(hs_ice_ctx *c, json_t *o, const char *key, int32_t *out, bool *has);
hs_status hs_ice_get_i64(hs_ice_ctx *c, json_t *o, const char *key, int64_t *out, bool *has);
hs_status hs_ice_get_bool(hs_ice_ctx *c, json_t *o, const char *key, bool *out, bool *has);
/* String copied into the arena; *out NULL when absent and optional. */
hs_status hs_ice_get_str(hs_ice_ctx *c, json_t *o, const char *key, const char **out, bool *has);
/* Required array / object member (or optional with has). */
hs_status hs_ice_get_array(hs_ice_ctx *c, json_t *o, const char *key, json_t **out, bool *has);
/* Array of int32 into the arena. */
hs_status hs_ice_get_i32_list(hs_ice_ctx *c, json_t *o, const char *key, int32_t **out, size_t *n,
                              bool *has);
/* Keep value `v` as compact JSON text in the arena. */
hs_status hs_ice_keep_json(hs_ice_ctx *c, json_t *v, hs_iceberg_json *out);
/* Collect members of `o` whose keys are not in the NULL-terminated `known`
 * into *extra (as JSON text). */
hs_status hs_ice_keep_unknown(hs_ice_ctx *c, json_t *o, const char *const *known,
                              hs_iceberg_json_kvs *extra);
/* Object `o` -> string pairs (every value must be a JSON string). */
hs_status hs_ice_get_string_map(hs_ice_ctx *c, json_t *o, hs_iceberg_kv **out, size_t *n);

/* Decode kept JSON text back to a value (new reference) or NULL on OOM or
 * corruption of our own text (HS_ERR_INTERNAL). */
json_t *hs_ice_json_from_text(hs_iceberg_json text, hs_error *err);
/* Add the kept members to `o`. */
hs_status hs_ice_put_extra(json_t *o, const hs_iceberg_json_kvs *extra, hs_error *err);

/* Codecs of the pieces (parse: value `v` at the context's current path). */
hs_status hs_ice_schema_parse(hs_ice_ctx *c, json_t *v, hs_iceberg_schema *out);
hs_status hs_ice_spec_parse(hs_ice_ctx *c, json_t *v, hs_iceberg_partition_spec *out);
hs_status hs_ice_sort_order_parse(hs_ice_ctx *c, json_t *v, hs_iceberg_sort_order *out);
json_t *hs_ice_schema_to_json(const hs_iceberg_schema *s, hs_error *err);
json_t *hs_ice_spec_to_json(const hs_iceberg_partition_spec *s, hs_error *err);
json_t *hs_ice_sort_order_to_json(const hs_iceberg_sort_order *o, hs_error *err);

/* --- metadata_fast.c: the history lists of vN.metadata.json as text --- */

/* The integer that stands in for a list in the jansson tree. */
#define HS_ICE_FAST_MARKER (-9223372036854775807LL)

typedef enum {
  HS_ICE_FAST_SNAPSHOTS = 0,
  HS_ICE_FAST_SNAPSHOT_LOG = 1,
  HS_ICE_FAST_METADATA_LOG = 2
} hs_ice_fast_list;

/* Can `m`'s snapshots be written directly (no unknown keys, no duplicate
 * or NULL summary entries)? The two logs always can. */
bool hs_ice_fast_snapshots_ok(const hs_iceberg_metadata *m);

/* Append to `out` the dump `tree` (json_dump_callback, JSON_INDENT(2)) of
 * a metadata object in which some of "snapshots", "snapshot-log",
 * "metadata-log" hold HS_ICE_FAST_MARKER, with each marker replaced by the
 * list of `m` written directly, exactly as jansson would have. *declined
 * (nothing appended) when a string is not UTF-8: the caller then dumps
 * the full tree, which reports it. */
hs_status hs_ice_fast_splice(const hs_iceberg_metadata *m, const char *tree, size_t len,
                             hs_buf *out, bool *declined, hs_error *err);

/* The jansson-only writer (the reference the fast path is tested against). */
hs_status hs_ice_metadata_write_tree(const hs_iceberg_metadata *m, hs_buf *out, hs_error *err);

#endif /* HS_ICEBERG_INTERNAL_H */
