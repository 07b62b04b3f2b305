/*
 * avro.h — our own small Apache Avro codec: schemas (JSON, with every extra
 * attribute such as Iceberg's `field-id` preserved), the binary encoding of
 * datums through a generic value tree, schema resolution by field name, and
 * object container files (null and deflate codecs).
 *
 * Why our own: Iceberg manifests and manifest lists are Avro container files
 * whose schemas carry `field-id`, `element-id`, `key-id` and `value-id`
 * attributes that Iceberg readers require; libavro drops them when it
 * re-serializes a schema. See src/avro/README.md.
 *
 * Layering: uses common/, io/ and jansson only.
 *
 * Ownership in one paragraph: an hs_avro_schema owns every node reachable
 * from its root (one arena) and every JSON attribute hanging off them; nodes
 * are valid until hs_avro_schema_free. Decoded values live in an hs_arena the
 * caller passes in and are valid until that arena is reset; they never point
 * into the input bytes. Untrusted input: every decoder is bounded by the
 * buffer length, checks counts against the bytes remaining before
 * allocating, and limits nesting depth.
 */
#ifndef HS_AVRO_H
#define HS_AVRO_H

#include <jansson.h>

#include "../common/common.h"
#include "../io/io.h"

/* Nesting limits: schemas deeper than this are rejected when parsed; datums
 * nested deeper (possible with recursive named types) when decoded. */
#define HS_AVRO_SCHEMA_DEPTH_MAX 64
#define HS_AVRO_VALUE_DEPTH_MAX 128
/* Items whose encoding takes zero bytes (null, empty records) cost no input,
 * so a block count cannot be checked against the bytes remaining; at most
 * this many such items are accepted per datum (or per container block of
 * zero-size datums). This bounds the work a few input bytes can demand. */
#define HS_AVRO_ZERO_SIZE_ITEMS_MAX ((size_t)1 << 16)

/* ----------------------------------------------------------------- schema */

typedef enum hs_avro_type {
  HS_AVRO_NULL = 0,
  HS_AVRO_BOOLEAN,
  HS_AVRO_INT,
  HS_AVRO_LONG,
  HS_AVRO_FLOAT,
  HS_AVRO_DOUBLE,
  HS_AVRO_BYTES,
  HS_AVRO_STRING,
  HS_AVRO_RECORD,
  HS_AVRO_ENUM,
  HS_AVRO_ARRAY,
  HS_AVRO_MAP,
  HS_AVRO_UNION,
  HS_AVRO_FIXED
} hs_avro_type;

/* Logical types are annotations only: values keep their underlying type. */
typedef enum hs_avro_logical {
  HS_AVRO_LOGICAL_NONE = 0,
  HS_AVRO_LOGICAL_DATE,             /* int: days since 1970-01-01 */
  HS_AVRO_LOGICAL_TIME_MILLIS,      /* int */
  HS_AVRO_LOGICAL_TIME_MICROS,      /* long */
  HS_AVRO_LOGICAL_TIMESTAMP_MILLIS, /* long */
  HS_AVRO_LOGICAL_TIMESTAMP_MICROS, /* long */
  HS_AVRO_LOGICAL_DECIMAL,          /* bytes or fixed; precision, scale */
  HS_AVRO_LOGICAL_UUID,             /* string or fixed(16) */
  HS_AVRO_LOGICAL_OTHER             /* any other name: kept verbatim, not interpreted */
} hs_avro_logical;

typedef struct hs_avro_node hs_avro_node;

typedef struct hs_avro_field {
  const char *name;
  const char *doc; /* NULL when absent */
  hs_avro_node *type;
  json_t *default_json; /* borrowed from the schema; NULL when absent */
  json_t *attrs;        /* object of every other attribute ("field-id", "order",
                           "aliases", ...) in file order; NULL when none */
} hs_avro_field;

struct hs_avro_node {
  hs_avro_type type;
  hs_avro_logical logical;
  const char *logical_name; /* the logicalType string as written; NULL when none */
  int32_t precision, scale; /* decimal */

  /* Named types (record, enum, fixed). `name` and `namespace_` are as
   * written (namespace_ NULL when not given); `fullname` is resolved. */
  const char *name;
  const char *namespace_;
  const char *fullname;
  const char *doc;

  hs_avro_field *fields; /* record */
  size_t n_fields;
  const char **symbols; /* enum */
  size_t n_symbols;
  const char *enum_default; /* enum reader default symbol; NULL when none */
  hs_avro_node *items;      /* array items, map values */
  hs_avro_node **branches;  /* union */
  size_t n_branches;
  size_t fixed_size; /* fixed */

  /* Every attribute of the type object that this model does not name
   * ("element-id" on arrays, "key-id"/"value-id" on maps, "adjust-to-utc",
   * aliases, ...), in file order; NULL when none. */
  json_t *attrs;
};

typedef struct hs_avro_schema hs_avro_schema;

/* Parse schema JSON (`len` bytes, need not be NUL-terminated). *out is owned
 * (hs_avro_schema_free). Errors name the JSON path ("$.fields[3].type"). */
hs_status hs_avro_schema_parse(const char *json, size_t len, hs_avro_schema **out, hs_error *err);
void hs_avro_schema_free(hs_avro_schema *schema); /* accepts NULL */
const hs_avro_node *hs_avro_schema_root(const hs_avro_schema *schema);

/* Serialize to compact JSON, preserving every extra attribute. Named types
 * are defined at their first occurrence and referenced by full name after.
 * *out is NUL-terminated and owned by the caller (hs_free). */
hs_status hs_avro_schema_to_json(const hs_avro_schema *schema, char **out, hs_error *err);
hs_status hs_avro_node_to_json(const hs_avro_node *node, char **out, hs_error *err);

const char *hs_avro_type_name(hs_avro_type type);
/* Index of the record field called `name`, or -1. */
int64_t hs_avro_node_field_index(const hs_avro_node *record, const char *name);
/* Integer attribute `key` (e.g. "field-id") of a field or node. Returns
 * HS_ERR_NOT_FOUND when absent, HS_ERR_SCHEMA when not an integer. */
hs_status hs_avro_field_attr_int(const hs_avro_field *field, const char *key, int64_t *out);
hs_status hs_avro_node_attr_int(const hs_avro_node *node, const char *key, int64_t *out);

/* ------------------------------------------------------------------ values */

typedef struct hs_avro_value hs_avro_value;
typedef struct hs_avro_map_entry hs_avro_map_entry;

/* A datum. The tag mirrors the schema node it conforms to. Strings and bytes
 * are length-delimited; strings are also NUL-terminated for convenience. */
struct hs_avro_value {
  hs_avro_type type;
  union {
    bool boolean;
    int32_t i32; /* int */
    int64_t i64; /* long */
    float f32;
    double f64;
    struct {
      const uint8_t *data;
      size_t len;
    } bytes;         /* bytes, string, fixed */
    uint32_t symbol; /* enum: index into the node's symbols */
    struct {
      hs_avro_value *items;
      size_t count;
    } list; /* array items; record fields in schema order */
    struct {
      hs_avro_map_entry *entries;
      size_t count;
    } map;
    struct {
      uint32_t branch;
      hs_avro_value *value;
    } branch; /* union */
  } u;
};

struct hs_avro_map_entry {
  const char *key; /* NUL-terminated */
  size_t key_len;
  hs_avro_value value;
};

/* Check that `value` conforms to `node` (tags, counts, union branch index,
 * enum index, fixed size). Errors name the path inside the datum. */
hs_status hs_avro_value_validate(const hs_avro_node *node, const hs_avro_value *value,
                                 hs_error *err);

/* Append the binary encoding of `value` (validated on the way) to `out`. */
hs_status hs_avro_encode(const hs_avro_node *node, const hs_avro_value *value, hs_buf *out,
                         hs_error *err);

/* Decode one datum written with `writer` from buf[*pos, len), resolving it
 * to `reader` (NULL: no resolution, the datum conforms to `writer`). Values
 * are allocated from `arena`. On success *pos is advanced past the datum. */
hs_status hs_avro_decode(const hs_avro_node *writer, const hs_avro_node *reader, const uint8_t *buf,
                         size_t len, size_t *pos, hs_arena *arena, hs_avro_value *out,
                         hs_error *err);

/* Advance *pos past one datum of `writer` without building values. */
hs_status hs_avro_skip(const hs_avro_node *writer, const uint8_t *buf, size_t len, size_t *pos,
                       hs_error *err);

/* Whether data written with `writer` can be read as `reader`: Avro's
 * resolution rules, with records matched by field NAME (record names are not
 * compared, as Iceberg renames them across versions), missing reader fields
 * needing a default, unknown writer fields skipped. Checked once up front by
 * the container reader so that datums never fail halfway for this reason. */
hs_status hs_avro_resolve_check(const hs_avro_node *writer, const hs_avro_node *reader,
                                hs_error *err);

/* Convert a JSON default (as written in a schema) to a value of `node`. */
hs_status hs_avro_value_from_json(const hs_avro_node *node, const json_t *json, hs_arena *arena,
                                  hs_avro_value *out, hs_error *err);

/* A plain JSON view of a datum, for tools and tests: unions are unwrapped,
 * enums become their symbol, bytes and fixed become lowercase hex strings,
 * maps become objects. New reference owned by the caller (json_decref). */
hs_status hs_avro_value_to_json(const hs_avro_node *node, const hs_avro_value *value, json_t **out,
                                hs_error *err);

/* Record field `name` of `record` (a value of node `schema`), or NULL. */
const hs_avro_value *hs_avro_record_get(const hs_avro_node *schema, const hs_avro_value *record,
                                        const char *name);

/* Varint helpers (zigzag), exposed for the container layer and tests. */
hs_status hs_avro_read_long(const uint8_t *buf, size_t len, size_t *pos, int64_t *out,
                            hs_error *err);
bool hs_avro_write_long(hs_buf *out, int64_t v);

/* ------------------------------------------------------ container files */

typedef enum hs_avro_codec { HS_AVRO_CODEC_NULL = 0, HS_AVRO_CODEC_DEFLATE = 1 } hs_avro_codec;

#define HS_AVRO_SYNC_BYTES 16

typedef struct hs_avro_meta_entry {
  const char *key;
  const uint8_t *value;
  size_t len;
} hs_avro_meta_entry;

typedef struct hs_avro_writer_options {
  hs_avro_codec codec;
  int deflate_level;              /* 0 means zlib's default */
  const hs_avro_meta_entry *meta; /* user metadata; keys starting "avro." are rejected */
  size_t n_meta;
  size_t block_bytes_target; /* end a block once its encoding reaches this; 0: 64 KiB */
  size_t block_count_max;    /* end a block after this many datums; 0: no limit */
  const uint8_t *sync;       /* 16 bytes for reproducible files; NULL: generated */
  /* The schema's JSON exactly as hs_avro_schema_to_json writes it, kept by
   * the caller for its writers (borrowed for the open); NULL: serialized here. */
  const char *schema_json;
} hs_avro_writer_options;

typedef struct hs_avro_writer hs_avro_writer;

/* Start a container file of `schema`, written to exactly one of `buf`
 * (appended to) or `sink` (written through; the caller still closes it).
 * The header is written here. `schema` must outlive the writer. *out is
 * owned: finish with hs_avro_writer_close, or hs_avro_writer_free to drop. */
hs_status hs_avro_writer_open(const hs_avro_schema *schema, const hs_avro_writer_options *opts,
                              hs_buf *buf, hs_sink *sink, hs_avro_writer **out, hs_error *err);
hs_status hs_avro_writer_append(hs_avro_writer *w, const hs_avro_value *datum, hs_error *err);
/* End the current block (no-op when empty). */
hs_status hs_avro_writer_flush(hs_avro_writer *w, hs_error *err);
/* Flush and free the writer (always freed, even on error). */
hs_status hs_avro_writer_close(hs_avro_writer *w, hs_error *err);
void hs_avro_writer_free(hs_avro_writer *w); /* accepts NULL; writes nothing more */

typedef struct hs_avro_reader hs_avro_reader;

/* Open a container file held in memory: `data` is borrowed and must outlive
 * the reader. `reader_schema` (borrowed; may be NULL) is the schema datums
 * are resolved to; NULL reads them as written. *out is owned. */
hs_status hs_avro_reader_open(const uint8_t *data, size_t len, const hs_avro_schema *reader_schema,
                              hs_avro_reader **out, hs_error *err);
void hs_avro_reader_free(hs_avro_reader *r); /* accepts NULL */

/* The writer schema parsed from `avro.schema` (owned by the reader). */
const hs_avro_schema *hs_avro_reader_writer_schema(const hs_avro_reader *r);
/* The schema datums conform to: the reader schema if given, else the writer's. */
const hs_avro_node *hs_avro_reader_datum_schema(const hs_avro_reader *r);
hs_avro_codec hs_avro_reader_codec(const hs_avro_reader *r);
/* Header metadata, all keys including avro.*; pointers borrowed from `data`. */
size_t hs_avro_reader_meta_count(const hs_avro_reader *r);
const hs_avro_meta_entry *hs_avro_reader_meta_at(const hs_avro_reader *r, size_t i);
/* Value of metadata `key`, or NULL (with *len 0) when absent. */
const uint8_t *hs_avro_reader_meta_get(const hs_avro_reader *r, const char *key, size_t *len);

/* Next datum into *out (values from `arena`), setting *has to false at the
 * end of the file. Sync-marker mismatch, truncated or overlong blocks and
 * datums are HS_ERR_CORRUPT naming the byte offset. */
hs_status hs_avro_reader_next(hs_avro_reader *r, hs_arena *arena, hs_avro_value *out, bool *has,
                              hs_error *err);

#endif /* HS_AVRO_H */
