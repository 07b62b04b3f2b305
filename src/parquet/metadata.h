/*
 * metadata.h — the Parquet file metadata model (parquet.thrift, the parts we
 * use) and its Thrift compact-protocol codec.
 *
 * Parsing is bounded: every parse function takes (buf, len) and never reads
 * outside it; lists are capped by the bytes that remain, so a hostile count
 * cannot cause an unbounded allocation. Parsed structures live in an arena
 * owned by the caller; byte strings (names, statistics) are copied into it,
 * so the input buffer may be released after parsing.
 *
 * Optional fields carry a `has_*` flag. Enum values equal parquet.thrift's.
 */
#ifndef HS_PARQUET_METADATA_H
#define HS_PARQUET_METADATA_H

#include "../common/common.h"

typedef enum hs_pq_type {
  HS_PQ_BOOLEAN = 0,
  HS_PQ_INT32 = 1,
  HS_PQ_INT64 = 2,
  HS_PQ_INT96 = 3,
  HS_PQ_FLOAT = 4,
  HS_PQ_DOUBLE = 5,
  HS_PQ_BYTE_ARRAY = 6,
  HS_PQ_FIXED_LEN_BYTE_ARRAY = 7
} hs_pq_type;

typedef enum hs_pq_repetition {
  HS_PQ_REQUIRED = 0,
  HS_PQ_OPTIONAL = 1,
  HS_PQ_REPEATED = 2
} hs_pq_repetition;

/* ConvertedType (legacy annotations). */
typedef enum hs_pq_converted {
  HS_PQ_CT_UTF8 = 0,
  HS_PQ_CT_MAP = 1,
  HS_PQ_CT_MAP_KEY_VALUE = 2,
  HS_PQ_CT_LIST = 3,
  HS_PQ_CT_ENUM = 4,
  HS_PQ_CT_DECIMAL = 5,
  HS_PQ_CT_DATE = 6,
  HS_PQ_CT_TIME_MILLIS = 7,
  HS_PQ_CT_TIME_MICROS = 8,
  HS_PQ_CT_TIMESTAMP_MILLIS = 9,
  HS_PQ_CT_TIMESTAMP_MICROS = 10,
  HS_PQ_CT_UINT_8 = 11,
  HS_PQ_CT_UINT_16 = 12,
  HS_PQ_CT_UINT_32 = 13,
  HS_PQ_CT_UINT_64 = 14,
  HS_PQ_CT_INT_8 = 15,
  HS_PQ_CT_INT_16 = 16,
  HS_PQ_CT_INT_32 = 17,
  HS_PQ_CT_INT_64 = 18,
  HS_PQ_CT_JSON = 19,
  HS_PQ_CT_BSON = 20,
  HS_PQ_CT_INTERVAL = 21
} hs_pq_converted;

/* LogicalType union: the thrift field id of the set member. */
typedef enum hs_pq_logical_kind {
  HS_PQ_LT_NONE = 0,
  HS_PQ_LT_STRING = 1,
  HS_PQ_LT_MAP = 2,
  HS_PQ_LT_LIST = 3,
  HS_PQ_LT_ENUM = 4,
  HS_PQ_LT_DECIMAL = 5,
  HS_PQ_LT_DATE = 6,
  HS_PQ_LT_TIME = 7,
  HS_PQ_LT_TIMESTAMP = 8,
  HS_PQ_LT_INTEGER = 10,
  HS_PQ_LT_UNKNOWN = 11, /* always-null */
  HS_PQ_LT_JSON = 12,
  HS_PQ_LT_BSON = 13,
  HS_PQ_LT_UUID = 14,
  HS_PQ_LT_FLOAT16 = 15,
  HS_PQ_LT_VARIANT = 16,
  HS_PQ_LT_GEOMETRY = 17,
  HS_PQ_LT_GEOGRAPHY = 18,
  HS_PQ_LT_OTHER = 99 /* a member we do not know; treat as no annotation */
} hs_pq_logical_kind;

typedef enum hs_pq_time_unit {
  HS_PQ_MILLIS = 0,
  HS_PQ_MICROS = 1,
  HS_PQ_NANOS = 2
} hs_pq_time_unit;

typedef struct hs_pq_logical {
  hs_pq_logical_kind kind;
  int32_t decimal_scale, decimal_precision; /* DECIMAL */
  bool is_adjusted_to_utc;                  /* TIME, TIMESTAMP */
  hs_pq_time_unit unit;                     /* TIME, TIMESTAMP */
  int8_t int_bit_width;                     /* INTEGER: 8, 16, 32, 64 */
  bool int_is_signed;                       /* INTEGER */
} hs_pq_logical;

typedef struct hs_pq_schema_element {
  bool has_type;
  hs_pq_type type;
  int32_t type_length; /* FIXED_LEN_BYTE_ARRAY width */
  bool has_repetition;
  hs_pq_repetition repetition;
  const char *name; /* NUL-terminated, in the arena */
  int32_t num_children;
  bool has_converted;
  hs_pq_converted converted;
  int32_t scale, precision;
  bool has_field_id;
  int32_t field_id;
  hs_pq_logical logical; /* kind == HS_PQ_LT_NONE when absent */
} hs_pq_schema_element;

/* Byte strings: pointer into the arena plus length. */
typedef struct hs_pq_bytes {
  const uint8_t *data;
  uint32_t len;
} hs_pq_bytes;

typedef struct hs_pq_statistics {
  bool has_max, has_min; /* deprecated fields 1 and 2 (signed order) */
  hs_pq_bytes max, min;
  bool has_null_count;
  int64_t null_count;
  bool has_distinct_count;
  int64_t distinct_count;
  bool has_max_value, has_min_value; /* fields 5 and 6 */
  hs_pq_bytes max_value, min_value;
  bool has_is_max_value_exact, has_is_min_value_exact;
  bool is_max_value_exact, is_min_value_exact;
} hs_pq_statistics;

typedef struct hs_pq_key_value {
  const char *key;
  bool has_value;
  hs_pq_bytes value;
} hs_pq_key_value;

typedef enum hs_pq_page_type {
  HS_PQ_DATA_PAGE = 0,
  HS_PQ_INDEX_PAGE = 1,
  HS_PQ_DICTIONARY_PAGE = 2,
  HS_PQ_DATA_PAGE_V2 = 3
} hs_pq_page_type;

/* Parquet Encoding values. */
enum {
  HS_PQ_ENC_PLAIN = 0,
  HS_PQ_ENC_PLAIN_DICTIONARY = 2,
  HS_PQ_ENC_RLE = 3,
  HS_PQ_ENC_BIT_PACKED = 4,
  HS_PQ_ENC_DELTA_BINARY_PACKED = 5,
  HS_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
  HS_PQ_ENC_DELTA_BYTE_ARRAY = 7,
  HS_PQ_ENC_RLE_DICTIONARY = 8,
  HS_PQ_ENC_BYTE_STREAM_SPLIT = 9
};

/* Parquet CompressionCodec values. */
enum {
  HS_PQ_CODEC_UNCOMPRESSED = 0,
  HS_PQ_CODEC_SNAPPY = 1,
  HS_PQ_CODEC_GZIP = 2,
  HS_PQ_CODEC_LZO = 3,
  HS_PQ_CODEC_BROTLI = 4,
  HS_PQ_CODEC_LZ4 = 5, /* Hadoop-framed (or raw, historically ambiguous) */
  HS_PQ_CODEC_ZSTD = 6,
  HS_PQ_CODEC_LZ4_RAW = 7
};

typedef struct hs_pq_page_header {
  hs_pq_page_type type;
  int32_t uncompressed_page_size;
  int32_t compressed_page_size;
  bool has_crc;
  int32_t crc;
  /* DATA_PAGE (v1) */
  bool has_data_page;
  struct {
    int32_t num_values;
    int32_t encoding;
    int32_t definition_level_encoding;
    int32_t repetition_level_encoding;
    bool has_statistics;
    hs_pq_statistics statistics;
  } data_page;
  /* DICTIONARY_PAGE */
  bool has_dictionary_page;
  struct {
    int32_t num_values;
    int32_t encoding;
    bool is_sorted;
  } dictionary_page;
  /* DATA_PAGE_V2 */
  bool has_data_page_v2;
  struct {
    int32_t num_values;
    int32_t num_nulls;
    int32_t num_rows;
    int32_t encoding;
    int32_t definition_levels_byte_length;
    int32_t repetition_levels_byte_length;
    bool is_compressed; /* defaults to true when absent */
    bool has_statistics;
    hs_pq_statistics statistics;
  } data_page_v2;
} hs_pq_page_header;

typedef struct hs_pq_column_meta {
  hs_pq_type type;
  int32_t *encodings;
  uint32_t n_encodings;
  const char **path_in_schema;
  uint32_t n_path;
  int32_t codec;
  int64_t num_values;
  int64_t total_uncompressed_size;
  int64_t total_compressed_size;
  hs_pq_key_value *key_value_metadata;
  uint32_t n_key_value_metadata;
  int64_t data_page_offset;
  bool has_index_page_offset;
  int64_t index_page_offset;
  bool has_dictionary_page_offset;
  int64_t dictionary_page_offset;
  bool has_statistics;
  hs_pq_statistics statistics;
  bool has_bloom_filter_offset;
  int64_t bloom_filter_offset;
  bool has_bloom_filter_length;
  int32_t bloom_filter_length;
} hs_pq_column_meta;

typedef struct hs_pq_column_chunk {
  const char *file_path; /* NULL when absent */
  int64_t file_offset;
  bool has_meta_data;
  hs_pq_column_meta meta_data;
  bool has_offset_index;
  int64_t offset_index_offset;
  int32_t offset_index_length;
  bool has_column_index;
  int64_t column_index_offset;
  int32_t column_index_length;
  bool is_encrypted; /* crypto_metadata or encrypted_column_metadata present */
} hs_pq_column_chunk;

typedef struct hs_pq_sorting_column {
  int32_t column_idx;
  bool descending;
  bool nulls_first;
} hs_pq_sorting_column;

typedef struct hs_pq_row_group {
  hs_pq_column_chunk *columns;
  uint32_t n_columns;
  int64_t total_byte_size;
  int64_t num_rows;
  hs_pq_sorting_column *sorting_columns;
  uint32_t n_sorting_columns;
  bool has_file_offset;
  int64_t file_offset;
  bool has_total_compressed_size;
  int64_t total_compressed_size;
  bool has_ordinal;
  int16_t ordinal;
} hs_pq_row_group;

typedef struct hs_pq_file_metadata {
  int32_t version;
  hs_pq_schema_element *schema; /* depth-first; schema[0] is the root */
  uint32_t n_schema;
  int64_t num_rows;
  hs_pq_row_group *row_groups;
  uint32_t n_row_groups;
  hs_pq_key_value *key_value_metadata;
  uint32_t n_key_value_metadata;
  const char *created_by;        /* NULL when absent */
  uint32_t n_column_orders;      /* count only: TYPE_ORDER is the only member */
  bool has_encryption_algorithm; /* plaintext footer of an encrypted file */
  /* Set by hs_pq_footer_read (0 when parsed from bytes alone): the file's
   * size and the CRC-32C of its FileMetaData bytes, the fingerprint an
   * index blob records to stay bound to this data file's content. */
  uint64_t file_size;
  uint32_t footer_len;
  uint32_t footer_crc32c;
} hs_pq_file_metadata;

enum { HS_PQ_BOUNDARY_UNORDERED = 0, HS_PQ_BOUNDARY_ASCENDING = 1, HS_PQ_BOUNDARY_DESCENDING = 2 };

typedef struct hs_pq_column_index {
  bool *null_pages;
  uint32_t n_pages;
  hs_pq_bytes *min_values; /* n_pages entries */
  hs_pq_bytes *max_values; /* n_pages entries */
  int32_t boundary_order;
  bool has_null_counts;
  int64_t *null_counts; /* n_pages entries when has_null_counts */
} hs_pq_column_index;

typedef struct hs_pq_page_location {
  int64_t offset;
  int32_t compressed_page_size;
  int64_t first_row_index;
} hs_pq_page_location;

typedef struct hs_pq_offset_index {
  hs_pq_page_location *page_locations;
  uint32_t n_pages;
} hs_pq_offset_index;

/* ---------------------------------------------------------------- parse */
/* Each parser reads one struct from buf[0..len). On success *consumed (if
 * not NULL) receives the number of bytes used. Errors are HS_ERR_CORRUPT
 * with the byte offset and the field being read; the caller prefixes the
 * file name. Allocations come from `arena`. */

hs_status hs_pq_file_metadata_parse(const uint8_t *buf, size_t len, hs_arena *arena,
                                    hs_pq_file_metadata *out, hs_error *err);
hs_status hs_pq_page_header_parse(const uint8_t *buf, size_t len, hs_arena *arena,
                                  hs_pq_page_header *out, size_t *consumed, hs_error *err);
hs_status hs_pq_column_index_parse(const uint8_t *buf, size_t len, hs_arena *arena,
                                   hs_pq_column_index *out, hs_error *err);
hs_status hs_pq_offset_index_parse(const uint8_t *buf, size_t len, hs_arena *arena,
                                   hs_pq_offset_index *out, hs_error *err);

/* ------------------------------------------------------------ serialize */
/* Append the compact-protocol encoding of a struct to `out`. Only fields
 * whose has_* flag is set (and non-NULL pointers) are written. */

hs_status hs_pq_file_metadata_write(const hs_pq_file_metadata *md, hs_buf *out, hs_error *err);
hs_status hs_pq_page_header_write(const hs_pq_page_header *ph, hs_buf *out, hs_error *err);
hs_status hs_pq_column_index_write(const hs_pq_column_index *ci, hs_buf *out, hs_error *err);
hs_status hs_pq_offset_index_write(const hs_pq_offset_index *oi, hs_buf *out, hs_error *err);

/* ---------------------------------------------------------------- footer */
typedef struct hs_source hs_source; /* io/io.h */

/* Read and parse the footer of the Parquet file behind `src`: checks the
 * "PAR1" magic at both ends and the footer length against the file size,
 * then parses the FileMetaData into `arena` (owned by the caller, who
 * resets it on failure too). A file with an encrypted footer ("PARE") is
 * HS_ERR_UNSUPPORTED; a plaintext footer of an encrypted file parses with
 * has_encryption_algorithm set. Errors name the source and the offset. */
hs_status hs_pq_footer_read(hs_source *src, hs_arena *arena, hs_pq_file_metadata *out,
                            hs_error *err);

/* Names for display: "INT32", "SNAPPY", "RLE_DICTIONARY", ... ("?" if unknown). */
const char *hs_pq_type_name(int32_t type);
const char *hs_pq_codec_name(int32_t codec);
const char *hs_pq_encoding_name(int32_t encoding);

#endif /* HS_PARQUET_METADATA_H */
