/*
 * thrift.h — a bounded reader and a small writer for the Thrift compact
 * protocol, the wire format of every Parquet metadata structure.
 *
 * Reader contract: every read is checked against the buffer length; list,
 * set and map counts are checked against the bytes that remain before the
 * caller allocates; struct nesting (including the nesting of unknown fields
 * being skipped) is limited to HS_THRIFT_DEPTH_MAX. Any violation is an
 * HS_ERR_CORRUPT error naming the byte offset and what was being read. The
 * first error is sticky: later reads fail fast and keep the root cause.
 *
 * Writer contract: appends to an hs_buf; an allocation failure is sticky
 * and reported once by hs_thrift_writer_finish, so call sites need no
 * per-field checks.
 *
 * Private to src/parquet/.
 */
#ifndef HS_PARQUET_THRIFT_H
#define HS_PARQUET_THRIFT_H

#include "../common/common.h"

/* Compact-protocol wire types (low nibble of a field header). */
enum {
  HS_THRIFT_STOP = 0,
  HS_THRIFT_TRUE = 1, /* bool field whose value is true; also the bool element type */
  HS_THRIFT_FALSE = 2,
  HS_THRIFT_I8 = 3,
  HS_THRIFT_I16 = 4,
  HS_THRIFT_I32 = 5,
  HS_THRIFT_I64 = 6,
  HS_THRIFT_DOUBLE = 7,
  HS_THRIFT_BINARY = 8,
  HS_THRIFT_LIST = 9,
  HS_THRIFT_SET = 10,
  HS_THRIFT_MAP = 11,
  HS_THRIFT_STRUCT = 12
};

#define HS_THRIFT_DEPTH_MAX 32

typedef struct hs_thrift_reader {
  const uint8_t *buf;
  size_t len;
  size_t pos;
  int depth;
  hs_status status; /* sticky first failure */
  hs_error *err;
} hs_thrift_reader;

/* One field header: id, wire type; for bool fields the value travels in
 * the header and is stored in `bool_value`. type == HS_THRIFT_STOP ends a
 * struct. */
typedef struct hs_thrift_field {
  int16_t id;
  uint8_t type;
  bool bool_value;
} hs_thrift_field;

void hs_thrift_reader_init(hs_thrift_reader *r, const uint8_t *buf, size_t len, hs_error *err);

/* Fail with HS_ERR_CORRUPT "thrift: at byte N: <what>: <reason>". */
hs_status hs_thrift_fail(hs_thrift_reader *r, const char *what, const char *reason);

/* Structs: begin (checks the depth limit), then next_field until STOP,
 * then end. `last_id` is the per-struct state of delta-encoded ids. */
hs_status hs_thrift_struct_begin(hs_thrift_reader *r, const char *what);
hs_status hs_thrift_field_next(hs_thrift_reader *r, int16_t *last_id, hs_thrift_field *f,
                               const char *what);
void hs_thrift_struct_end(hs_thrift_reader *r);

/* Skip one value of wire type `type` (recursively for containers). */
hs_status hs_thrift_skip(hs_thrift_reader *r, uint8_t type, const char *what);

/* Raw values (list elements, or after a field header was type-checked). */
hs_status hs_thrift_read_i8(hs_thrift_reader *r, int8_t *out, const char *what);
hs_status hs_thrift_read_i16(hs_thrift_reader *r, int16_t *out, const char *what);
hs_status hs_thrift_read_i32(hs_thrift_reader *r, int32_t *out, const char *what);
hs_status hs_thrift_read_i64(hs_thrift_reader *r, int64_t *out, const char *what);
hs_status hs_thrift_read_double(hs_thrift_reader *r, double *out, const char *what);
/* Binary/string: *data points into the reader's buffer (not copied). */
hs_status hs_thrift_read_binary(hs_thrift_reader *r, const uint8_t **data, uint32_t *len,
                                const char *what);
/* A bool list element (1 = true; 0 or 2 = false). */
hs_status hs_thrift_read_bool_elem(hs_thrift_reader *r, bool *out, const char *what);

/* List or set header. On success *n is at most the bytes remaining divided
 * by the smallest encoding of one element, so `n * sizeof(elem)` bounds a
 * safe allocation proportional to the input. */
hs_status hs_thrift_list_begin(hs_thrift_reader *r, uint8_t *elem_type, uint32_t *n,
                               const char *what);
/* Map header; *n == 0 means no key/value type byte followed. */
hs_status hs_thrift_map_begin(hs_thrift_reader *r, uint8_t *key_type, uint8_t *value_type,
                              uint32_t *n, const char *what);

/* Typed field readers: check the header's wire type (a mismatch is
 * corruption), then read the value. */
hs_status hs_thrift_field_bool(hs_thrift_reader *r, const hs_thrift_field *f, bool *out,
                               const char *what);
hs_status hs_thrift_field_i8(hs_thrift_reader *r, const hs_thrift_field *f, int8_t *out,
                             const char *what);
hs_status hs_thrift_field_i16(hs_thrift_reader *r, const hs_thrift_field *f, int16_t *out,
                              const char *what);
hs_status hs_thrift_field_i32(hs_thrift_reader *r, const hs_thrift_field *f, int32_t *out,
                              const char *what);
hs_status hs_thrift_field_i64(hs_thrift_reader *r, const hs_thrift_field *f, int64_t *out,
                              const char *what);
hs_status hs_thrift_field_binary(hs_thrift_reader *r, const hs_thrift_field *f,
                                 const uint8_t **data, uint32_t *len, const char *what);
/* Check that a field has wire type `type` (STRUCT, LIST, ...). */
hs_status hs_thrift_field_expect(hs_thrift_reader *r, const hs_thrift_field *f, uint8_t type,
                                 const char *what);

/* --------------------------------------------------------------- writer */

typedef struct hs_thrift_writer {
  hs_buf *out;
  int16_t last_id[HS_THRIFT_DEPTH_MAX];
  int depth;
  bool failed; /* sticky: OOM or misuse */
} hs_thrift_writer;

void hs_thrift_writer_init(hs_thrift_writer *w, hs_buf *out);
/* HS_OK, or HS_ERR_NOMEM naming `what` if any append failed. */
hs_status hs_thrift_writer_finish(hs_thrift_writer *w, const char *what, hs_error *err);

/* Top-level struct (no field header) and its end (writes STOP). */
void hs_thrift_write_struct_begin(hs_thrift_writer *w);
void hs_thrift_write_struct_end(hs_thrift_writer *w);

/* Fields of the current struct; ids must increase within a struct for the
 * short delta form, but any order is encoded correctly. */
void hs_thrift_write_field_bool(hs_thrift_writer *w, int16_t id, bool v);
void hs_thrift_write_field_i8(hs_thrift_writer *w, int16_t id, int8_t v);
void hs_thrift_write_field_i16(hs_thrift_writer *w, int16_t id, int16_t v);
void hs_thrift_write_field_i32(hs_thrift_writer *w, int16_t id, int32_t v);
void hs_thrift_write_field_i64(hs_thrift_writer *w, int16_t id, int64_t v);
void hs_thrift_write_field_binary(hs_thrift_writer *w, int16_t id, const void *data, size_t len);
void hs_thrift_write_field_string(hs_thrift_writer *w, int16_t id, const char *s);
/* A struct-valued field: header, then fields, then hs_thrift_write_struct_end. */
void hs_thrift_write_field_struct_begin(hs_thrift_writer *w, int16_t id);
/* A list-valued field header followed by `n` raw elements of `elem_type`. */
void hs_thrift_write_field_list_begin(hs_thrift_writer *w, int16_t id, uint8_t elem_type,
                                      uint32_t n);

/* Raw list elements. A struct element: hs_thrift_write_struct_begin/end. */
void hs_thrift_write_i32(hs_thrift_writer *w, int32_t v);
void hs_thrift_write_i64(hs_thrift_writer *w, int64_t v);
void hs_thrift_write_binary(hs_thrift_writer *w, const void *data, size_t len);
void hs_thrift_write_bool_elem(hs_thrift_writer *w, bool v);

#endif /* HS_PARQUET_THRIFT_H */
