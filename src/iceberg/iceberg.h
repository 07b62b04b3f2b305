/*
 * iceberg.h — the Iceberg layer's model of table metadata (format v2 and
 * v3, apache/iceberg format/spec.md), its JSON codec, partition transforms,
 * the single-value binary serialization used for bounds, and the mapping
 * between Arrow and Iceberg types.
 *
 * Ownership: everything a parse or conversion produces lives in the
 * caller's hs_arena (strings included) and is freed with the arena. Parsed
 * models never point into the input JSON text.
 *
 * Optional integers carry a has_ flag; "absent" and "0" differ on the wire
 * and a round trip keeps them apart. Keys this model does not know are kept
 * as JSON text (hs_iceberg_json_kv) and written back unchanged.
 */
#ifndef HS_ICEBERG_H
#define HS_ICEBERG_H

#include "../arrow/arrow.h"
#include "../common/common.h"

/* -------------------------------------------------------------- types */

typedef enum hs_iceberg_type_id {
  HS_ICE_BOOLEAN,
  HS_ICE_INT,
  HS_ICE_LONG,
  HS_ICE_FLOAT,
  HS_ICE_DOUBLE,
  HS_ICE_DECIMAL, /* precision, scale */
  HS_ICE_DATE,
  HS_ICE_TIME,
  HS_ICE_TIMESTAMP,
  HS_ICE_TIMESTAMPTZ,
  HS_ICE_TIMESTAMP_NS,   /* v3 */
  HS_ICE_TIMESTAMPTZ_NS, /* v3 */
  HS_ICE_STRING,
  HS_ICE_UUID,
  HS_ICE_FIXED, /* length */
  HS_ICE_BINARY,
  HS_ICE_UNKNOWN,   /* v3: always null */
  HS_ICE_VARIANT,   /* v3 */
  HS_ICE_GEOMETRY,  /* v3: text holds the whole "geometry(...)" string */
  HS_ICE_GEOGRAPHY, /* v3: text holds the whole "geography(...)" string */
  HS_ICE_OTHER,     /* a primitive we do not model: text kept verbatim */
  HS_ICE_STRUCT,
  HS_ICE_LIST,
  HS_ICE_MAP
} hs_iceberg_type_id;

typedef struct hs_iceberg_field hs_iceberg_field;
typedef struct hs_iceberg_type hs_iceberg_type;

struct hs_iceberg_type {
  hs_iceberg_type_id id;
  int32_t precision, scale; /* DECIMAL */
  int32_t length;           /* FIXED */
  const char *text;         /* GEOMETRY/GEOGRAPHY/OTHER: the type string */
  /* STRUCT */
  hs_iceberg_field *fields;
  size_t n_fields;
  /* LIST */
  int32_t element_id;
  bool element_required;
  hs_iceberg_type *element;
  /* MAP (keys are always required) */
  int32_t key_id, value_id;
  bool value_required;
  hs_iceberg_type *key, *value;
};

/* A JSON value kept as compact JSON text ("{}", "3", "\"x\""). */
typedef const char *hs_iceberg_json;

/* An unknown key of some object, kept for the round trip. */
typedef struct hs_iceberg_json_kv {
  const char *key;
  hs_iceberg_json value;
} hs_iceberg_json_kv;

typedef struct hs_iceberg_json_kvs {
  hs_iceberg_json_kv *items;
  size_t n;
} hs_iceberg_json_kvs;

struct hs_iceberg_field {
  int32_t id;
  const char *name;
  bool required;
  hs_iceberg_type type;
  const char *doc;                 /* NULL when absent */
  hs_iceberg_json initial_default; /* v3; JSON single-value text or NULL */
  hs_iceberg_json write_default;   /* v3; JSON single-value text or NULL */
  hs_iceberg_json_kvs extra;
};

typedef struct hs_iceberg_schema {
  int32_t schema_id;
  bool has_identifier_field_ids;
  int32_t *identifier_field_ids;
  size_t n_identifier_field_ids;
  hs_iceberg_type root; /* always HS_ICE_STRUCT */
  hs_iceberg_json_kvs extra;
} hs_iceberg_schema;

/* Static name of a primitive ("long"); "struct"/"list"/"map" for nested. */
const char *hs_iceberg_type_name(hs_iceberg_type_id id);
/* Parse a primitive type string ("decimal(9, 2)", "fixed[16]"). Unknown
 * names give HS_ICE_OTHER with text set only when `keep_unknown`, else
 * HS_ERR_SCHEMA "unknown type 'x'". Strings live in `arena`. */
hs_status hs_iceberg_type_parse_primitive(const char *s, bool keep_unknown, hs_arena *arena,
                                          hs_iceberg_type *out, hs_error *err);
/* Append the canonical primitive string ("decimal(9,2)") to `out`. */
bool hs_iceberg_type_format_primitive(const hs_iceberg_type *t, hs_buf *out);
/* Depth-first lookup of the field (struct field, list element, map key or
 * value) with `id`; returns its type (and field when it is a struct field,
 * else *field_out = NULL). NULL when absent. */
const hs_iceberg_type *hs_iceberg_schema_find(const hs_iceberg_schema *s, int32_t id,
                                              const hs_iceberg_field **field_out);
/* Highest id used by any field, element, key or value (0 when none). */
int32_t hs_iceberg_type_max_id(const hs_iceberg_type *t);

/* --------------------------------------------------------- transforms */

typedef enum hs_iceberg_transform_kind {
  HS_ICE_T_IDENTITY,
  HS_ICE_T_BUCKET,   /* param = N buckets */
  HS_ICE_T_TRUNCATE, /* param = W width */
  HS_ICE_T_YEAR,
  HS_ICE_T_MONTH,
  HS_ICE_T_DAY,
  HS_ICE_T_HOUR,
  HS_ICE_T_VOID,
  HS_ICE_T_UNKNOWN /* kept as text; never applied (spec: readers ignore it) */
} hs_iceberg_transform_kind;

typedef struct hs_iceberg_transform {
  hs_iceberg_transform_kind kind;
  int32_t param;    /* BUCKET, TRUNCATE: > 0 */
  const char *text; /* UNKNOWN: the original string (arena) */
} hs_iceberg_transform;

/* Parse "identity", "bucket[16]", "truncate[4]", "year", ..., "void".
 * Anything else (including a malformed bucket) becomes UNKNOWN with its text
 * when `keep_unknown`, else HS_ERR_SCHEMA. */
hs_status hs_iceberg_transform_parse(const char *s, bool keep_unknown, hs_arena *arena,
                                     hs_iceberg_transform *out, hs_error *err);
bool hs_iceberg_transform_format(const hs_iceberg_transform *t, hs_buf *out);
/* The result type of `t` applied to `source`; HS_ERR_SCHEMA when the source
 * type is not allowed for the transform (spec "Partition Transforms").
 * Note: day yields date (as the Java and Python references do; the spec's
 * table says int — same 4-byte days value). */
hs_status hs_iceberg_transform_result_type(const hs_iceberg_transform *t,
                                           const hs_iceberg_type *source, hs_iceberg_type *out,
                                           hs_error *err);

/* A single primitive value. Bytes are borrowed (not owned). */
typedef struct hs_iceberg_value {
  bool is_null;
  bool b;               /* BOOLEAN */
  int64_t i64;          /* INT, LONG, DATE (days), TIME (us), TIMESTAMP* (us or ns) */
  double f64;           /* FLOAT, DOUBLE */
  int64_t dec_hi;       /* DECIMAL unscaled value: high 64 bits (two's complement) */
  uint64_t dec_lo;      /* DECIMAL unscaled value: low 64 bits */
  const uint8_t *bytes; /* STRING (UTF-8), BINARY, FIXED, UUID (16, big-endian) */
  size_t len;
} hs_iceberg_value;

/* murmur3_x86_32 hash of a value per spec appendix B (int as long, date as
 * int-as-long, *_ns converted to microseconds, floats through double with
 * NaN and -0 canonicalised, decimal as minimal big-endian unscaled bytes). */
hs_status hs_iceberg_value_hash(const hs_iceberg_type *type, const hs_iceberg_value *v,
                                int32_t *hash_out, hs_error *err);
/* Apply `t` to `v` of `source` type; the result (of the result type) goes
 * to *out. Byte results (truncate of strings) borrow from v. A null input
 * gives null; VOID always gives null. UNKNOWN gives HS_ERR_UNSUPPORTED. */
hs_status hs_iceberg_transform_apply(const hs_iceberg_transform *t, const hs_iceberg_type *source,
                                     const hs_iceberg_value *v, hs_iceberg_value *out,
                                     hs_error *err);

/* Total order on two non-null values of one primitive type: Iceberg's
 * order (floats: -NaN < -inf < ... < -0 < 0 < ... < inf < NaN; strings and
 * binary bytewise unsigned). Returns <0, 0 or >0. */
int hs_iceberg_value_cmp(const hs_iceberg_type *t, const hs_iceberg_value *a,
                         const hs_iceberg_value *b);

/* Appendix D binary single-value serialization (bounds). Appends to out. */
hs_status hs_iceberg_value_to_bytes(const hs_iceberg_type *type, const hs_iceberg_value *v,
                                    hs_buf *out, hs_error *err);
/* Decode `len` bytes; byte-valued results borrow from `p`. Lengths are
 * checked exactly (4 for int/date/float, 8 for long/time/timestamps/double,
 * 16 for uuid, L for fixed, 1..16 for decimal). */
hs_status hs_iceberg_value_from_bytes(const hs_iceberg_type *type, const uint8_t *p, size_t len,
                                      hs_iceberg_value *out, hs_error *err);

/* ----------------------------------------------------- table metadata */

typedef struct hs_iceberg_partition_field {
  int32_t source_id;   /* when n_source_ids == 0 */
  int32_t *source_ids; /* v3 multi-argument transforms ("source-ids") */
  size_t n_source_ids;
  bool has_field_id; /* required in v2+, absent in v1 */
  int32_t field_id;
  const char *name;
  hs_iceberg_transform transform;
} hs_iceberg_partition_field;

typedef struct hs_iceberg_partition_spec {
  int32_t spec_id;
  hs_iceberg_partition_field *fields;
  size_t n_fields;
} hs_iceberg_partition_spec;

typedef struct hs_iceberg_sort_field {
  hs_iceberg_transform transform;
  int32_t source_id;
  int32_t *source_ids;
  size_t n_source_ids;
  bool descending;
  bool nulls_first;
} hs_iceberg_sort_field;

typedef struct hs_iceberg_sort_order {
  int32_t order_id;
  hs_iceberg_sort_field *fields;
  size_t n_fields;
} hs_iceberg_sort_order;

typedef struct hs_iceberg_kv {
  const char *key;
  const char *value;
} hs_iceberg_kv;

typedef struct hs_iceberg_snapshot {
  int64_t snapshot_id;
  bool has_parent_snapshot_id;
  int64_t parent_snapshot_id;
  bool has_sequence_number;
  int64_t sequence_number;
  int64_t timestamp_ms;
  const char *manifest_list; /* NULL only in v1 metadata (then "manifests") */
  hs_iceberg_kv *summary;    /* "operation" first, as read */
  size_t n_summary;
  bool has_schema_id;
  int32_t schema_id;
  bool has_first_row_id; /* v3 row lineage */
  int64_t first_row_id;
  bool has_added_rows;
  int64_t added_rows;
  hs_iceberg_json_kvs extra; /* e.g. v1 "manifests", v3 "key-id" */
} hs_iceberg_snapshot;

typedef struct hs_iceberg_snapshot_log_entry {
  int64_t timestamp_ms;
  int64_t snapshot_id;
} hs_iceberg_snapshot_log_entry;

typedef struct hs_iceberg_metadata_log_entry {
  int64_t timestamp_ms;
  const char *metadata_file;
} hs_iceberg_metadata_log_entry;

typedef struct hs_iceberg_ref {
  const char *name;
  int64_t snapshot_id;
  bool is_tag; /* "tag", else "branch" */
  bool has_min_snapshots_to_keep;
  int32_t min_snapshots_to_keep; /* branches only */
  bool has_max_snapshot_age_ms;
  int64_t max_snapshot_age_ms; /* branches only */
  bool has_max_ref_age_ms;
  int64_t max_ref_age_ms;
} hs_iceberg_ref;

typedef struct hs_iceberg_metadata {
  int32_t format_version; /* 1, 2 or 3 (v1 is read, v2/v3 are the aim) */
  const char *table_uuid;
  const char *location;
  bool has_last_sequence_number;
  int64_t last_sequence_number;
  int64_t last_updated_ms;
  int32_t last_column_id;
  hs_iceberg_schema *schemas;
  size_t n_schemas;
  int32_t current_schema_id;
  hs_iceberg_partition_spec *specs;
  size_t n_specs;
  int32_t default_spec_id;
  bool has_last_partition_id;
  int32_t last_partition_id;
  hs_iceberg_sort_order *sort_orders;
  size_t n_sort_orders;
  bool has_default_sort_order_id;
  int32_t default_sort_order_id;
  hs_iceberg_kv *properties;
  size_t n_properties;
  /* Absent, JSON null and -1 all mean "no current snapshot"; the writer
   * writes it only when has_current_snapshot_id. */
  bool has_current_snapshot_id;
  int64_t current_snapshot_id;
  hs_iceberg_snapshot *snapshots;
  size_t n_snapshots;
  hs_iceberg_snapshot_log_entry *snapshot_log;
  size_t n_snapshot_log;
  hs_iceberg_metadata_log_entry *metadata_log;
  size_t n_metadata_log;
  hs_iceberg_ref *refs;
  size_t n_refs;
  hs_iceberg_json statistics;           /* opaque JSON list or NULL */
  hs_iceberg_json partition_statistics; /* opaque JSON list or NULL */
  hs_iceberg_json encryption_keys;      /* v3; opaque JSON list or NULL */
  bool has_next_row_id;                 /* v3 row lineage */
  int64_t next_row_id;
  hs_iceberg_json_kvs extra; /* unknown top-level keys, and v1 "schema"/"partition-spec" */
} hs_iceberg_metadata;

/* Parse metadata JSON (UTF-8, `len` bytes, need not be NUL-terminated).
 * Everything lands in `arena`; *out is fully overwritten. Errors are
 * HS_ERR_CORRUPT with the JSON path: "schemas[0].fields[3].type: unknown
 * type 'strin'". Checks cross references (current schema, default spec and
 * sort order, snapshot parents are not required to exist: they may expire). */
hs_status hs_iceberg_metadata_parse(const char *json, size_t len, hs_arena *arena,
                                    hs_iceberg_metadata *out, hs_error *err);
/* Serialize as pretty-printed JSON appended to `out` (no NUL). Writes the
 * keys of format_version (v1-only keys come back from `extra`). */
hs_status hs_iceberg_metadata_write(const hs_iceberg_metadata *m, hs_buf *out, hs_error *err);

/* Lookups; NULL when absent. */
const hs_iceberg_schema *hs_iceberg_metadata_schema(const hs_iceberg_metadata *m, int32_t id);
const hs_iceberg_snapshot *hs_iceberg_metadata_snapshot(const hs_iceberg_metadata *m, int64_t id);
const char *hs_iceberg_metadata_property(const hs_iceberg_metadata *m, const char *key);

/* -------------------------------------------------- Arrow <-> Iceberg */

/* Table property that keeps the fixed dimension of a vector column
 * (Arrow fixed_size_list<float32, D> stored as Iceberg list<float>):
 * "hyperstream.vector.<field-id>.dimension" = "<D>", keyed by the list
 * field's id. Writes `out` (NUL-terminated, at most 64 bytes). */
#define HS_ICEBERG_VECTOR_DIM_PREFIX "hyperstream.vector."
#define HS_ICEBERG_VECTOR_DIM_SUFFIX ".dimension"
void hs_iceberg_vector_dim_property(int32_t field_id, char out[64]);

/* A vector column found while mapping an Arrow schema. */
typedef struct hs_iceberg_vector_dim {
  int32_t field_id;
  int32_t dimension;
} hs_iceberg_vector_dim;

typedef struct hs_iceberg_from_arrow_options {
  int32_t format_version; /* 2 or 3: timestamp[ns] needs 3 */
  int32_t next_id;        /* first field id to assign (usually 1) */
  /* Allow lossy widenings: uint64 -> long (values above INT64_MAX fail at
   * write time), float16 -> float, date64 -> date, time32 -> time,
   * timestamp[s|ms] -> timestamp. When false they give HS_ERR_SCHEMA. */
  bool allow_lossy;
} hs_iceberg_from_arrow_options;

/* Map an Arrow schema (a struct, "+s") to an Iceberg schema with field ids
 * assigned from opts->next_id (each struct level before its children, so
 * top-level columns get next_id..), or taken from "PARQUET:field_id"
 * metadata when every field carries one. Nullable Arrow fields become
 * optional. Vector columns are reported in *vectors (arena array of
 * *n_vectors). *last_id_out is the highest id used. */
hs_status hs_iceberg_schema_from_arrow(const struct ArrowSchema *arrow,
                                       const hs_iceberg_from_arrow_options *opts, hs_arena *arena,
                                       hs_iceberg_schema *out, int32_t *last_id_out,
                                       hs_iceberg_vector_dim **vectors, size_t *n_vectors,
                                       hs_error *err);

/* Map an Iceberg schema back to an owned Arrow schema ("+s"): each field
 * carries "PARQUET:field_id"; uuid becomes w:16 with extension "arrow.uuid";
 * list<float> whose id has a vector-dimension property in `m` (may be NULL)
 * becomes +w:D. Types with no Arrow form (variant, geometry, geography,
 * other) give HS_ERR_UNSUPPORTED naming the field. */
hs_status hs_iceberg_schema_to_arrow(const hs_iceberg_schema *s, const hs_iceberg_metadata *m,
                                     struct ArrowSchema *out, hs_error *err);

#endif /* HS_ICEBERG_H */
