/*
 * ipc.h — the Arrow IPC Schema message, both ways, without a FlatBuffers
 * library.
 *
 * pyarrow stores the Arrow schema of a Parquet file in the footer's
 * key-value metadata under "ARROW:schema": base64 of an encapsulated IPC
 * Schema message (0xFFFFFFFF continuation marker, int32 LE metadata length,
 * then a FlatBuffers `Message` table whose header is a `Schema`, padded to
 * 8 bytes). It carries what Parquet cannot express: fixed-size lists (our
 * vectors), large types, timezones, date64, time32[s], timestamp[s],
 * durations, dictionary encoding and field metadata. Writers store
 * base64(hs_arrow_ipc_schema_encode(...)); readers decode it and prefer its
 * types where they are compatible with the Parquet schema.
 *
 * Schemas cross this interface as the C Data Interface does it: a struct
 * ("+s") whose children are the fields; the struct's metadata is the
 * schema-level metadata, its name and flags are ignored.
 */
#ifndef HS_ARROW_IPC_H
#define HS_ARROW_IPC_H

#include "arrow.h"

/* Key under which Arrow writers store the schema in Parquet metadata. */
#define HS_ARROW_IPC_SCHEMA_KEY "ARROW:schema"

/* Append the encapsulated IPC Schema message for `schema` (a "+s" node;
 * any producer's) to `out`: continuation marker, length, FlatBuffer,
 * padding to a multiple of 8. Every hs_arrow_type_id is supported, with
 * nullability, names, field and schema metadata, map key sorting and
 * dictionary encoding (dictionary ids are assigned 0, 1, ... depth first).
 * Formats we do not model give HS_ERR_UNSUPPORTED naming the field path
 * ("col.item"); on failure `out` is left at its original length. */
hs_status hs_arrow_ipc_schema_encode(const struct ArrowSchema *schema, hs_buf *out, hs_error *err);

/* Decode an IPC Schema message from untrusted bytes buf[0..len) into *out,
 * an owned schema ("+s" whose children are the fields) that the caller
 * releases. Accepts the encapsulated form (0xFFFFFFFF, length, FlatBuffer),
 * the pre-0.15 form (length, FlatBuffer) and a bare FlatBuffer `Message`.
 * Every offset, vtable and vector is bounds-checked against len; nesting is
 * limited to 64 levels and the number of fields and copied bytes to O(len).
 * Malformed bytes give HS_ERR_CORRUPT with the byte offset; valid messages
 * with types we do not model (unions, views, intervals, run-end encoded,
 * decimal32/64/256, big-endian schemas, non-Schema messages) give
 * HS_ERR_UNSUPPORTED naming the field. On failure *out is zeroed (release
 * == NULL). */
hs_status hs_arrow_ipc_schema_decode(const uint8_t *buf, size_t len, struct ArrowSchema *out,
                                     hs_error *err);

/* The "ARROW:schema" value itself: base64 of the message, appended to
 * `out` (no NUL terminator). */
static inline hs_status hs_arrow_ipc_schema_encode_base64(const struct ArrowSchema *schema,
                                                          hs_buf *out, hs_error *err) {
  hs_buf raw;
  hs_buf_init(&raw);
  hs_status st = hs_arrow_ipc_schema_encode(schema, &raw, err);
  if (st == HS_OK && !hs_base64_encode(raw.data, raw.len, out)) {
    st = hs_error_set(err, HS_ERR_NOMEM, "arrow ipc encode: out of memory");
  }
  hs_buf_free(&raw);
  return st;
}

/* Decode an "ARROW:schema" value (base64 text of `len` bytes, not
 * NUL-terminated) into an owned schema, as hs_arrow_ipc_schema_decode. */
static inline hs_status hs_arrow_ipc_schema_decode_base64(const char *text, size_t len,
                                                          struct ArrowSchema *out, hs_error *err) {
  hs_buf raw;
  hs_buf_init(&raw);
  hs_status st = hs_base64_decode(text, len, &raw, err);
  if (st == HS_OK) {
    st = hs_arrow_ipc_schema_decode(raw.data, raw.len, out, err);
  } else if (out != NULL) {
    *out = (struct ArrowSchema){0};
  }
  hs_buf_free(&raw);
  return st;
}

#endif /* HS_ARROW_IPC_H */
